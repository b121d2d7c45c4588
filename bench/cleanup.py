"""Cleanup-pass benchmark: RLX's cleanup sequence on a generated decoder MIR, pass by pass.

    python bench/cleanup.py                     # 12 layers, then 48 and 96 (scaling)
    python bench/cleanup.py --layers 12 --repeat 5

The model is built with ``ModuleBuilder`` decoder blocks (Llama-style: RMSNorm, GQA
attention with RoPE, SwiGLU), lowered with policy ``fusable``, plus the clutter an
exported graph carries in every layer and that the cleanup exists for: rope tables
recomputed from constant positions, weights transposed twice, same-type casts, dropout
scales of 1, a ``where`` on a constant flag, a duplicated norm and an unused debug value.
A 12-layer decoder lowers to under 600 MIR ops (the fusable lowering keeps norms, rope
and attention as single ops), so the default run adds 48 and 96 layers (2,300 and 4,600
ops): several thousand ops, and how each pass scales.

Each pass of the sequence (param-specialize, with the rope inverse frequencies bound;
algebraic-simplify, sccp, cse, dce, constant-fold) runs on the output of the previous
one, as in the pipeline; the best of ``--repeat`` runs is reported as ops/second (ops in
the module the pass receives). Two baselines are measured in the same process on the
same input: a bare walk over the ops, and xDSL's canonicalize+cse+dce (the previous
default cleanup). The cleaned graph is checked against the reference executor.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.transforms import get_all_passes

from rlx_compile import ModuleBuilder
from rlx_compile.dialects import mir
from rlx_compile.interpreter import run
from rlx_compile.ir import graph_inputs, graph_params, main_graph, make_context
from rlx_compile.params import save_bindings
from rlx_compile.passmanager import parse_pipeline
from rlx_compile.pipeline import CLEANUP_SEQUENCE

EMBED, HEADS, KV_HEADS, FFN, SEQ = 64, 4, 2, 128, 16
HEAD_DIM = EMBED // HEADS


def decoder(layers: int) -> ModuleOp:
    """The HIR decoder with per-layer export clutter (MIR ops around the blocks)."""
    with ModuleBuilder("decoder", policy="fusable") as m:
        x = m.input("x", (1, SEQ, EMBED))
        inv_freq = m.param("inv_freq", (1, HEAD_DIM // 2))
        flag = m.constant(np.ones((1, SEQ, EMBED), bool))
        for i in range(layers):

            def p(name: str, shape: tuple[int, ...], i: int = i) -> object:
                return m.param(f"l{i}.{name}", shape)

            # RoPE tables from constant positions, recomputed by every layer.
            positions = m.constant(np.arange(SEQ, dtype=np.float32).reshape(SEQ, 1))
            angles = m.mul(positions, inv_freq)
            cos, sin = m.unary(mir.CosOp, angles), m.unary(mir.SinOp, angles)
            # Weights transposed twice ([out, in] storage, then a transposed matmul).
            wq = m.transpose(m.transpose(p("wq", (EMBED, HEADS * HEAD_DIM)), (1, 0)), (1, 0))
            wo = m.transpose(m.transpose(p("wo", (HEADS * HEAD_DIM, EMBED)), (1, 0)), (1, 0))
            # Dropout at inference, a same-type cast, a select on a constant flag.
            h = m.mul(m.cast(x, "f32"), m.constant(np.ones((1, SEQ, EMBED), np.float32)))
            h = m.where(flag, h, m.constant(np.zeros((1, SEQ, EMBED), np.float32)))
            ln1 = p("ln1", (EMBED,))
            m.rms_norm(h, ln1, eps=1e-6)  # a norm nobody reads, as traced graphs keep
            m.mean(h, axes=(1, 2))  # an unused debug statistic
            x = m.decoder_block(
                h, ln1=ln1, wq=wq, wk=p("wk", (EMBED, KV_HEADS * HEAD_DIM)),
                wv=p("wv", (EMBED, KV_HEADS * HEAD_DIM)), wo=wo, ln2=p("ln2", (EMBED,)),
                gate=p("gate", (EMBED, FFN)), up=p("up", (EMBED, FFN)),
                down=p("down", (FFN, EMBED)), cos=cos, sin=sin,
                num_heads=HEADS, num_kv_heads=KV_HEADS, head_dim=HEAD_DIM,
            )  # fmt: skip
        m.output(x, names=["y"])
    return m.module


def lowered(layers: int) -> ModuleOp:
    module = decoder(layers)
    for p in parse_pipeline("lower-hir-to-mir{policy=fusable}"):
        p.apply(make_context(), module)
    return module


def count_ops(module: ModuleOp) -> int:
    block = main_graph(module).regions[0].block
    return len(block.ops) - 1


def best_time(fn, repeat: int) -> float:  # type: ignore[no-untyped-def]
    best = float("inf")
    for _ in range(repeat):
        best = min(best, fn())
    return best


def time_passes(module: ModuleOp, passes: list[ModulePass]) -> list[tuple[int, float]]:
    """Run ``passes`` in order on ``module``; (ops received, seconds) per pass."""
    ctx = make_context()
    out = []
    for p in passes:
        ops = count_ops(module)
        start = time.perf_counter()
        p.apply(ctx, module)
        out.append((ops, time.perf_counter() - start))
    return out


def bench(layers: int, repeat: int, check: bool) -> None:
    module = lowered(layers)
    n = count_ops(module)
    rng = np.random.default_rng(0)
    g = main_graph(module)
    feeds = {leaf.name: rng.standard_normal([int(d) for d in leaf.type.shape]).astype(np.float32)
             for leaf in (*graph_inputs(g), *graph_params(g))}  # fmt: skip
    inv_freq = (1.0 / 10000 ** (np.arange(HEAD_DIM // 2) / (HEAD_DIM // 2))).astype(np.float32)
    feeds["inv_freq"] = inv_freq.reshape(1, -1)
    with tempfile.TemporaryDirectory() as tmp:
        bindings = Path(tmp) / "bind.npz"
        save_bindings(bindings, {"inv_freq": feeds["inv_freq"]})
        names = ["param-specialize", *CLEANUP_SEQUENCE]
        pipeline = f'param-specialize{{bindings="{bindings}"}},' + ",".join(CLEANUP_SEQUENCE)

        runs = []
        for _ in range(repeat):
            work = module.clone()
            runs.append(time_passes(work, parse_pipeline(pipeline)))
        per_pass = [(runs[0][i][0], min(r[i][1] for r in runs)) for i in range(len(names))]

        def walk() -> float:
            start = time.perf_counter()
            for _ in module.walk():
                pass
            return time.perf_counter() - start

        xdsl = get_all_passes()
        baseline = [xdsl[name]()() for name in ("canonicalize", "cse", "dce")]

        def xdsl_cleanup() -> float:
            work = module.clone()
            return sum(s for _, s in time_passes(work, baseline))

        walk_s, xdsl_s = best_time(walk, repeat), best_time(xdsl_cleanup, repeat)
        total = sum(s for _, s in per_pass)

        def row(name: str, ops: int, secs: float) -> str:
            rate = f"{ops / secs:,.0f}"
            return f"    {name:<20}{ops:>8}{secs * 1e3:>9.2f}ms{rate:>12}{secs / walk_s:>9.0f}x"

        print(f"{layers} layers: {n} MIR ops in, {count_ops(work)} out")
        print(f"    {'pass':<20}{'ops in':>8}{'time':>11}{'ops/s':>12}{'/ walk':>9}")
        for name, (ops, secs) in zip(names, per_pass, strict=True):
            print(row(name, ops, secs))
        print(row("sequence", n, total))
        print(
            f"    baselines: walk {walk_s * 1e3:.2f} ms ({n / walk_s:,.0f} ops/s); xDSL "
            f"canonicalize+cse+dce {xdsl_s * 1e3:.2f} ms ({n / xdsl_s:,.0f} ops/s); "
            f"sequence / xDSL cleanup = {total / xdsl_s:.2f}"
        )
        if check:
            want = run(module, {"x": feeds["x"]}, {k: v for k, v in feeds.items() if k != "x"})
            params = {leaf.name: feeds[leaf.name] for leaf in graph_params(main_graph(work))}
            got = run(work, {"x": feeds["x"]}, params)
            np.testing.assert_array_equal(got["y"], want["y"])
            print("    cleaned graph == reference (bit-exact)")
        print()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layers", type=int, nargs="*", default=[12, 48, 96])
    ap.add_argument("--repeat", type=int, default=3, help="best of N runs per pass")
    args = ap.parse_args()
    for i, layers in enumerate(args.layers):
        bench(layers, args.repeat, check=i == 0)


if __name__ == "__main__":
    main()
