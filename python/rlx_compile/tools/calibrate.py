"""``rlx-calibrate``: collect calibration stats for the quantisation passes.

    rlx-calibrate model.mlir --batches data.npz --params weights.npz -o calib.npz
    rlx-opt model.mlir -p 'quant-insert{stats="calib.npz"},quant-propagate'

``data.npz`` holds one array per graph input with a leading batch axis (array ``x`` of
shape [N, *shape of x] gives N batches); ``weights.npz`` one array per param.
``--random N`` draws N standard-normal batches (and params, if none are given) from
``--seed`` instead, for smoke tests. The model must be MIR as the pass will see it:
calibrate the output of the passes that run before quant-insert.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from rlx_compile.diagnostics import RlxError, verify_module
from rlx_compile.ir import graph_inputs, graph_params, main_graph
from rlx_compile.quant import calibrate
from rlx_compile.tools.cli import ArgumentParser, cli_main
from rlx_compile.tools.compile import batches_of, load_model, load_npz


def _random_feeds(
    module: ModuleOp, count: int, seed: int, with_params: bool
) -> tuple[list[dict[str, np.ndarray]], dict[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    g = main_graph(module)

    def draw(shape: Sequence[object], dtype: np.dtype) -> np.ndarray:
        if not all(isinstance(d, int) for d in shape):
            raise RlxError("--random needs static input shapes (specialize-dims first)")
        return rng.standard_normal([int(d) for d in shape]).astype(dtype)  # type: ignore[call-overload]

    params = (
        {p.name: draw(p.type.shape, p.type.dtype.numpy) for p in graph_params(g)}
        if with_params
        else {}
    )
    batches = [
        {x.name: draw(x.type.shape, x.type.dtype.numpy) for x in graph_inputs(g)}
        for _ in range(count)
    ]
    return batches, params


def build_arg_parser() -> argparse.ArgumentParser:
    ap = ArgumentParser(prog="rlx-calibrate", description=__doc__.splitlines()[0])
    ap.add_argument("model", type=Path, help="MIR model (.mlir)")
    ap.add_argument("-o", "--output", type=Path, required=True, help="stats file (.npz)")
    ap.add_argument("--batches", type=Path, help="inputs: one array per input, batch axis first")
    ap.add_argument("--params", type=Path, help="params: one array per param")
    ap.add_argument("--random", type=int, metavar="N", help="use N random batches")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--progress", action="store_true", help="always show the progress bar")
    return ap


def run(argv: Sequence[str] | None = None) -> int:
    args = build_arg_parser().parse_args(argv)
    if (args.batches is None) == (args.random is None):
        raise RlxError("give exactly one of --batches FILE and --random N")
    module = load_model(args.model)
    verify_module(module)
    params = load_npz(args.params, "params") if args.params else {}
    if args.random is not None:
        batches, drawn = _random_feeds(module, args.random, args.seed, args.params is None)
        params = params or drawn
    else:
        batches = batches_of(load_npz(args.batches, "batches"))
    stats = calibrate(module, batches, params, progress=True if args.progress else None)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    stats.save(args.output)
    print(f"calibrated {len(stats)} values on {stats.batches} batches -> {args.output}")
    return 0


def main(argv: Sequence[str] | None = None) -> None:
    cli_main(run, argv)


if __name__ == "__main__":
    main()
