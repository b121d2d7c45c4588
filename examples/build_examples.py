"""Build the example HIR models shipped in ``examples/`` with the Python builder.

    python examples/build_examples.py          # rewrite the .mlir files
    python examples/build_examples.py --check  # fail if a committed file is stale

The tests run ``--check`` so the committed files always match this script.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from xdsl.dialects.builtin import ModuleOp

from rlx_compile import ModuleBuilder, print_module

HERE = Path(__file__).resolve().parent


def decoder_block(
    *, batch: int = 1, seq: int = 16, embed: int = 64, heads: int = 4, kv_heads: int = 2,
    ffn: int = 128, policy: str = "direct",
) -> ModuleOp:  # fmt: skip
    """A Llama-style pre-norm decoder block (GQA attention + RoPE, SwiGLU MLP, RMSNorm)."""
    head_dim = embed // heads
    with ModuleBuilder("decoder_block", policy=policy) as m:
        x = m.input("x", (batch, seq, embed))
        ln1 = m.param("ln1", (embed,))
        wq = m.param("wq", (embed, heads * head_dim))
        wk = m.param("wk", (embed, kv_heads * head_dim))
        wv = m.param("wv", (embed, kv_heads * head_dim))
        wo = m.param("wo", (heads * head_dim, embed))
        ln2 = m.param("ln2", (embed,))
        up = m.param("up", (embed, ffn))
        gate = m.param("gate", (embed, ffn))
        down = m.param("down", (ffn, embed))
        cos = m.param("cos", (seq, head_dim // 2))
        sin = m.param("sin", (seq, head_dim // 2))
        normed = m.rms_norm(x, ln1, eps=1e-6)
        attn = m.attention_block(
            normed, wq, wk, wv, wo, num_heads=heads, num_kv_heads=kv_heads, head_dim=head_dim,
            rope=(cos, sin), causal=True,
        )  # fmt: skip
        normed2, hidden = m.residual_rms_norm(attn, x, ln2, eps=1e-6)
        mlp = m.swiglu(normed2, up, gate, down)
        m.output(m.add(hidden, mlp), names=["y"])
    return m.module


def small_cnn(*, batch: int = 1, policy: str = "direct") -> ModuleOp:
    """Two conv+relu+maxpool stages, global average pooling and a linear classifier."""
    with ModuleBuilder("small_cnn", policy=policy) as m:
        x = m.input("image", (batch, 3, 32, 32))
        w1, b1 = m.param("conv1_w", (16, 3, 3, 3)), m.param("conv1_b", (16,))
        w2, b2 = m.param("conv2_w", (32, 16, 3, 3)), m.param("conv2_b", (32,))
        wf, bf = m.param("fc_w", (32, 10)), m.param("fc_b", (10,))
        h = m.conv_block(x, w1, b1, pads=(1, 1, 1, 1), act="relu")
        h = m.max_pool(h, (2, 2), strides=(2, 2))
        h = m.conv_block(h, w2, b2, pads=(1, 1, 1, 1), act="relu")
        h = m.max_pool(h, (2, 2), strides=(2, 2))
        pooled = m.mean(h, axes=(2, 3))
        m.output(m.linear(pooled, wf, bf), names=["logits"])
    return m.module


EXAMPLES = {"decoder_block.mlir": decoder_block, "small_cnn.mlir": small_cnn}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="only check the committed files")
    args = ap.parse_args()
    stale = []
    for name, build in EXAMPLES.items():
        text = print_module(build())
        path = HERE / name
        if args.check:
            if not path.exists() or path.read_text() != text:
                stale.append(name)
        else:
            path.write_text(text)
    if stale:
        print("stale examples (run examples/build_examples.py): " + ", ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
