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
from xdsl.ir import SSAValue

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


def inception_cnn(
    *, batch: int = 1, channels: int = 32, size: int = 16, blocks: int = 2, policy: str = "direct"
) -> ModuleOp:
    """A 3x3 stem conv, then GoogLeNet-style Inception blocks: four branches (1x1;
    1x1 -> 3x3; 1x1 -> 5x5; 3x3 max-pool -> 1x1) joined by a channel concat, then global
    average pooling and a linear classifier."""
    c = channels
    widths = (c // 4, c // 2, c // 8, c // 8)  # branch outputs, summing to c
    with ModuleBuilder("inception_cnn", policy=policy) as m:
        x = m.input("image", (batch, 3, size, size))
        stem_w, stem_b = m.param("stem_w", (c, 3, 3, 3)), m.param("stem_b", (c,))
        h = m.conv_block(x, stem_w, stem_b, pads=(1, 1, 1, 1), act="relu")

        def conv(x: SSAValue, name: str, cin: int, cout: int, k: int) -> SSAValue:
            w, b = m.param(f"{name}_w", (cout, cin, k, k)), m.param(f"{name}_b", (cout,))
            return m.conv_block(x, w, b, pads=(k // 2,) * 4, act="relu")

        for i in range(blocks):
            branches = [
                conv(h, f"b{i}.1x1", c, widths[0], 1),
                conv(conv(h, f"b{i}.3x3_reduce", c, c // 4, 1), f"b{i}.3x3", c // 4, widths[1], 3),
                conv(
                    conv(h, f"b{i}.5x5_reduce", c, c // 16, 1), f"b{i}.5x5", c // 16, widths[2], 5
                ),
                conv(m.max_pool(h, (3, 3), pads=(1, 1, 1, 1)), f"b{i}.pool_proj", c, widths[3], 1),
            ]
            h = m.concat(branches, 1)
        pooled = m.mean(h, axes=(2, 3))
        wf, bf = m.param("fc_w", (c, 10)), m.param("fc_b", (10,))
        m.output(m.linear(pooled, wf, bf), names=["logits"])
    return m.module


def dense_cnn(
    *, batch: int = 1, channels: int = 16, growth: int = 8, size: int = 16, layers: int = 4,
    policy: str = "direct",
) -> ModuleOp:  # fmt: skip
    """A 3x3 stem conv, then a DenseNet-style block: each layer (1x1 bottleneck -> 3x3
    conv) reads the concat of the block input and every earlier layer's output and adds
    its own output to it; global average pooling and a linear classifier."""
    with ModuleBuilder("dense_cnn", policy=policy) as m:
        x = m.input("image", (batch, 3, size, size))
        stem_w, stem_b = m.param("stem_w", (channels, 3, 3, 3)), m.param("stem_b", (channels,))
        h = m.conv_block(x, stem_w, stem_b, pads=(1, 1, 1, 1), act="relu")
        c = channels
        for i in range(layers):
            w1, b1 = (
                m.param(f"l{i}.bottleneck_w", (4 * growth, c, 1, 1)),
                m.param(f"l{i}.bottleneck_b", (4 * growth,)),
            )
            w2, b2 = (
                m.param(f"l{i}.conv_w", (growth, 4 * growth, 3, 3)),
                m.param(f"l{i}.conv_b", (growth,)),
            )
            y = m.conv_block(h, w1, b1, act="relu")
            y = m.conv_block(y, w2, b2, pads=(1, 1, 1, 1), act="relu")
            h = m.concat([h, y], 1)
            c += growth
        pooled = m.mean(h, axes=(2, 3))
        wf, bf = m.param("fc_w", (c, 10)), m.param("fc_b", (10,))
        m.output(m.linear(pooled, wf, bf), names=["logits"])
    return m.module


def kws_dscnn(
    *, batch: int = 1, channels: int = 64, blocks: int = 4, keywords: int = 12,
    policy: str = "direct",
) -> ModuleOp:  # fmt: skip
    """A keyword-spotting DS-CNN (Hello Edge's DS-CNN-S shape): 49x10 MFCC features, a
    10x4 stride-2 conv, depthwise-separable blocks (3x3 depthwise + 1x1 pointwise, each
    conv + bias + relu), global average pooling and a linear classifier."""
    c = channels
    with ModuleBuilder("kws_dscnn", policy=policy) as m:
        x = m.input("mfcc", (batch, 1, 49, 10))
        w, b = m.param("conv1_w", (c, 1, 10, 4)), m.param("conv1_b", (c,))
        h = m.conv_block(x, w, b, strides=(2, 2), pads=(4, 1, 5, 2), act="relu")
        for i in range(blocks):
            dw, db = m.param(f"dw{i}_w", (c, 1, 3, 3)), m.param(f"dw{i}_b", (c,))
            h = m.conv_block(h, dw, db, pads=(1, 1, 1, 1), groups=c, act="relu")
            pw, pb = m.param(f"pw{i}_w", (c, c, 1, 1)), m.param(f"pw{i}_b", (c,))
            h = m.conv_block(h, pw, pb, act="relu")
        pooled = m.mean(h, axes=(2, 3))
        wf, bf = m.param("fc_w", (c, keywords)), m.param("fc_b", (keywords,))
        m.output(m.linear(pooled, wf, bf), names=["logits"])
    return m.module


EXAMPLES = {
    "decoder_block.mlir": decoder_block,
    "small_cnn.mlir": small_cnn,
    "inception_cnn.mlir": inception_cnn,
    "dense_cnn.mlir": dense_cnn,
    "kws_dscnn.mlir": kws_dscnn,
}


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
