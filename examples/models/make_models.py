"""Build real architectures with PyTorch and export them to ONNX with random weights.

    pip install torch==2.13.0 onnxscript==0.7.*   # the CPU wheel on this machine
    python examples/models/make_models.py            # the small configurations (committed)
    python examples/models/make_models.py --full --out DIR   # the full ones (benchmark)

Models: ResNet-18, ResNet-50, MobileNetV2, a small ViT, a 2-layer Llama-style decoder
(RMSNorm, rotary embeddings, SwiGLU, causal grouped-query attention) and a BERT-style
encoder (post-norm layers, GELU; BERT-base sizes with ``--full``). The architectures
are written out here (torchvision does not install beside this torch build); weights are
random from a fixed seed, and batch-norm statistics are randomised too so that folding
them is not a no-op. Each model is exported with the torch.export-based exporter
(opset 18) to ``<name>.onnx`` and checked with ``onnx.checker``.

The small configurations keep every architectural feature at a size where the test
suite runs them in seconds (and the files stay small enough to commit); ``--full``
builds the standard sizes (224x224 images, 1000 classes).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import onnx
import torch
from torch import Tensor, nn
from torch.nn import functional as F

HERE = Path(__file__).resolve().parent
OPSET = 18

# ---------------------------------------------------------------------------------
# ResNet
# ---------------------------------------------------------------------------------


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, cin: int, width: int, stride: int):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, width, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.down = _downsample(cin, width, stride)

    def forward(self, x: Tensor) -> Tensor:
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return F.relu(y + (self.down(x) if self.down is not None else x))


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, cin: int, width: int, stride: int):
        super().__init__()
        out = width * 4
        self.conv1 = nn.Conv2d(cin, width, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, stride, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = nn.Conv2d(width, out, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(out)
        self.down = _downsample(cin, out, stride)

    def forward(self, x: Tensor) -> Tensor:
        y = F.relu(self.bn1(self.conv1(x)))
        y = F.relu(self.bn2(self.conv2(y)))
        y = self.bn3(self.conv3(y))
        return F.relu(y + (self.down(x) if self.down is not None else x))


def _downsample(cin: int, cout: int, stride: int) -> nn.Module | None:
    if stride == 1 and cin == cout:
        return None
    return nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))


class ResNet(nn.Module):
    def __init__(
        self, block: type[BasicBlock | Bottleneck], layers: list[int], base: int, classes: int
    ):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, base, 7, 2, 3, bias=False), nn.BatchNorm2d(base), nn.ReLU(),
            nn.MaxPool2d(3, 2, 1),
        )  # fmt: skip
        stages: list[nn.Module] = []
        cin = base
        for i, n in enumerate(layers):
            width = base * 2**i
            for j in range(n):
                stages.append(block(cin, width, 2 if (j == 0 and i > 0) else 1))
                cin = width * block.expansion
        self.stages = nn.Sequential(*stages)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x: Tensor) -> Tensor:
        y = self.stages(self.stem(x))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(y, 1), 1))


# ---------------------------------------------------------------------------------
# MobileNetV2
# ---------------------------------------------------------------------------------


def _conv_bn(cin: int, cout: int, k: int, stride: int, groups: int = 1, act: bool = True):  # type: ignore[no-untyped-def]
    layers: list[nn.Module] = [
        nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False),
        nn.BatchNorm2d(cout),
    ]
    if act:
        layers.append(nn.ReLU6())
    return nn.Sequential(*layers)


class InvertedResidual(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int, expand: int):
        super().__init__()
        hidden = cin * expand
        layers: list[nn.Module] = []
        if expand != 1:
            layers.append(_conv_bn(cin, hidden, 1, 1))
        layers += [
            _conv_bn(hidden, hidden, 3, stride, groups=hidden),
            _conv_bn(hidden, cout, 1, 1, act=False),
        ]
        self.body = nn.Sequential(*layers)
        self.residual = stride == 1 and cin == cout

    def forward(self, x: Tensor) -> Tensor:
        y = self.body(x)
        return x + y if self.residual else y


class MobileNetV2(nn.Module):
    # (expansion, channels, repeats, stride) of the reference architecture
    SETTINGS = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
                (6, 160, 3, 2), (6, 320, 1, 1)]  # fmt: skip

    def __init__(self, width: float, classes: int, last: int = 1280):
        super().__init__()

        def ch(c: int) -> int:  # round to a multiple of 8, as the reference does
            return max(8, int(c * width + 4) // 8 * 8)

        cin = ch(32)
        layers: list[nn.Module] = [_conv_bn(3, cin, 3, 2)]
        for t, c, n, s in self.SETTINGS:
            for i in range(n):
                layers.append(InvertedResidual(cin, ch(c), s if i == 0 else 1, t))
                cin = ch(c)
        last_ch = ch(last) if width > 1 else last
        layers.append(_conv_bn(cin, last_ch, 1, 1))
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(last_ch, classes))

    def forward(self, x: Tensor) -> Tensor:
        y = F.adaptive_avg_pool2d(self.features(x), 1)
        return self.classifier(torch.flatten(y, 1))


# ---------------------------------------------------------------------------------
# ViT
# ---------------------------------------------------------------------------------


class EncoderBlock(nn.Module):
    def __init__(self, dim: int, heads: int, mlp: int):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(dim, eps=1e-6)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.ln2 = nn.LayerNorm(dim, eps=1e-6)
        self.fc1 = nn.Linear(dim, mlp)
        self.fc2 = nn.Linear(mlp, dim)

    def forward(self, x: Tensor) -> Tensor:
        b, s, d = x.shape
        qkv = self.qkv(self.ln1(x)).reshape(b, s, 3, self.heads, d // self.heads)
        q, k, v = qkv.permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v)
        x = x + self.proj(y.transpose(1, 2).reshape(b, s, d))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class ViT(nn.Module):
    def __init__(self, image: int, patch: int, dim: int, depth: int, heads: int, classes: int):
        super().__init__()
        self.patch = nn.Conv2d(3, dim, patch, patch)
        n = (image // patch) ** 2
        self.cls = nn.Parameter(torch.randn(1, 1, dim) * 0.02)
        self.pos = nn.Parameter(torch.randn(1, n + 1, dim) * 0.02)
        self.blocks = nn.Sequential(*[EncoderBlock(dim, heads, 4 * dim) for _ in range(depth)])
        self.ln = nn.LayerNorm(dim, eps=1e-6)
        self.head = nn.Linear(dim, classes)

    def forward(self, x: Tensor) -> Tensor:
        y = self.patch(x).flatten(2).transpose(1, 2)
        y = torch.cat([self.cls.expand(y.shape[0], -1, -1), y], dim=1) + self.pos
        y = self.ln(self.blocks(y))
        return self.head(y[:, 0])


# ---------------------------------------------------------------------------------
# Llama-style decoder
# ---------------------------------------------------------------------------------


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(dim))

    def forward(self, x: Tensor) -> Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate_half(x: Tensor) -> Tensor:
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat([-x2, x1], dim=-1)


class DecoderLayer(nn.Module):
    def __init__(self, dim: int, heads: int, kv_heads: int, ffn: int):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, dim // heads
        self.norm1 = RMSNorm(dim)
        self.q = nn.Linear(dim, heads * self.head_dim, bias=False)
        self.k = nn.Linear(dim, kv_heads * self.head_dim, bias=False)
        self.v = nn.Linear(dim, kv_heads * self.head_dim, bias=False)
        self.o = nn.Linear(heads * self.head_dim, dim, bias=False)
        self.norm2 = RMSNorm(dim)
        self.gate = nn.Linear(dim, ffn, bias=False)
        self.up = nn.Linear(dim, ffn, bias=False)
        self.down = nn.Linear(ffn, dim, bias=False)

    def forward(self, x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
        b, s, _ = x.shape
        h = self.norm1(x)
        q = self.q(h).view(b, s, self.heads, self.head_dim).transpose(1, 2)
        k = self.k(h).view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.v(h).view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        rep = self.heads // self.kv_heads
        k = k.repeat_interleave(rep, dim=1)
        v = v.repeat_interleave(rep, dim=1)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.o(y.transpose(1, 2).reshape(b, s, -1))
        h = self.norm2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class Llama(nn.Module):
    def __init__(
        self, vocab: int, dim: int, layers: int, heads: int, kv_heads: int, ffn: int, seq: int
    ):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(DecoderLayer(dim, heads, kv_heads, ffn) for _ in range(layers))
        self.norm = RMSNorm(dim)
        self.lm_head = nn.Linear(dim, vocab, bias=False)
        head_dim = dim // heads
        inv = 1.0 / (10000 ** (torch.arange(0, head_dim, 2).float() / head_dim))
        angles = torch.outer(torch.arange(seq).float(), inv)
        emb = torch.cat([angles, angles], dim=-1)
        self.register_buffer("cos", emb.cos(), persistent=False)
        self.register_buffer("sin", emb.sin(), persistent=False)

    def forward(self, tokens: Tensor) -> Tensor:
        s = tokens.shape[1]
        x = self.embed(tokens)
        cos, sin = self.cos[:s], self.sin[:s]
        for layer in self.layers:
            x = layer(x, cos, sin)
        return self.lm_head(self.norm(x))


# ---------------------------------------------------------------------------------
# BERT-style encoder
# ---------------------------------------------------------------------------------


class BertLayer(nn.Module):
    """Post-norm encoder layer: attention + residual -> LayerNorm, GELU MLP + residual ->
    LayerNorm."""

    def __init__(self, dim: int, heads: int, ffn: int):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.ln1 = nn.LayerNorm(dim, eps=1e-12)
        self.fc1 = nn.Linear(dim, ffn)
        self.fc2 = nn.Linear(ffn, dim)
        self.ln2 = nn.LayerNorm(dim, eps=1e-12)

    def forward(self, x: Tensor) -> Tensor:
        b, s, d = x.shape
        qkv = self.qkv(x).reshape(b, s, 3, self.heads, d // self.heads)
        q, k, v = qkv.permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v)
        x = self.ln1(x + self.proj(y.transpose(1, 2).reshape(b, s, d)))
        return self.ln2(x + self.fc2(F.gelu(self.fc1(x))))


class Bert(nn.Module):
    def __init__(self, vocab: int, dim: int, layers: int, heads: int, ffn: int, seq: int):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.pos = nn.Parameter(torch.randn(1, seq, dim) * 0.02)
        self.ln = nn.LayerNorm(dim, eps=1e-12)
        self.layers = nn.Sequential(*[BertLayer(dim, heads, ffn) for _ in range(layers)])
        self.pool = nn.Linear(dim, dim)
        self.head = nn.Linear(dim, 2)

    def forward(self, tokens: Tensor) -> Tensor:
        x = self.layers(self.ln(self.embed(tokens) + self.pos[:, : tokens.shape[1]]))
        return self.head(torch.tanh(self.pool(x[:, 0])))


# ---------------------------------------------------------------------------------
# Export
# ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Spec:
    name: str
    build: Callable[[], nn.Module]
    example: Callable[[], Tensor]
    input_name: str


def _image(n: int) -> Callable[[], Tensor]:
    return lambda: torch.randn(1, 3, n, n)


def specs(full: bool) -> list[Spec]:
    image, classes, width = (224, 1000, 64) if full else (32, 10, 8)
    if full:
        mobilenet = lambda: MobileNetV2(1.0, classes)  # noqa: E731
        vit = lambda: ViT(image, 16, 192, 12, 3, classes)  # noqa: E731 (ViT-Tiny)
        vocab, dim, ffn, seq = 32000, 512, 1408, 128
        bert = lambda: Bert(30522, 768, 12, 12, 3072, 128)  # noqa: E731 (BERT-base)
    else:
        mobilenet = lambda: MobileNetV2(0.25, classes, last=128)  # noqa: E731
        vit = lambda: ViT(image, 8, 32, 2, 2, classes)  # noqa: E731
        vocab, dim, ffn, seq = 256, 64, 128, 16
        bert = lambda: Bert(256, 32, 2, 2, 64, 16)  # noqa: E731
    r50_width = width if full else 4
    return [
        Spec("resnet18", lambda: ResNet(BasicBlock, [2, 2, 2, 2], width, classes), _image(image),
             "image"),
        Spec("resnet50", lambda: ResNet(Bottleneck, [3, 4, 6, 3], r50_width, classes),
             _image(image), "image"),
        Spec("mobilenetv2", mobilenet, _image(image), "image"),
        Spec("vit", vit, _image(image), "image"),
        Spec("llama", lambda: Llama(vocab, dim, 2, 8 if full else 4, 2, ffn, seq),
             lambda: torch.randint(0, vocab, (1, seq)), "tokens"),
        Spec("bert", bert, lambda: torch.randint(0, 256, (1, 128 if full else 16)), "tokens"),
    ]  # fmt: skip


def randomize_norms(model: nn.Module, gen: torch.Generator) -> None:
    """Batch-norm statistics and affine terms away from the identity."""
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            c = m.num_features
            m.running_mean.copy_(0.1 * torch.randn(c, generator=gen))
            m.running_var.copy_(0.5 + torch.rand(c, generator=gen))
            m.weight.data.copy_(1 + 0.1 * torch.randn(c, generator=gen))
            m.bias.data.copy_(0.1 * torch.randn(c, generator=gen))


def export(spec: Spec, out_dir: Path, seed: int = 0) -> Path:
    torch.manual_seed(seed)
    model = spec.build().eval()
    randomize_norms(model, torch.Generator().manual_seed(seed))
    path = out_dir / f"{spec.name}.onnx"
    with torch.no_grad():
        program = torch.onnx.export(
            model, (spec.example(),), dynamo=True, opset_version=OPSET,
            input_names=[spec.input_name], output_names=["logits"], external_data=False,
        )  # fmt: skip
    assert program is not None
    program.save(str(path), external_data=False)
    onnx.checker.check_model(onnx.load(str(path)), full_check=True)
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help="the standard sizes (benchmark)")
    ap.add_argument("--out", type=Path, default=HERE, help="output directory")
    ap.add_argument("--only", action="append", help="only these models")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for spec in specs(args.full):
        if args.only and spec.name not in args.only:
            continue
        path = export(spec, args.out)
        params = sum(math.prod(t.dims) for t in onnx.load(str(path)).graph.initializer)
        print(f"{path}: {path.stat().st_size / 1e6:.2f} MB, {params} parameters")


if __name__ == "__main__":
    main()
