"""Exports for the models-from-the-wild corpus (``bench/wild.py``), made the way users
make them: transformers models (random weights, tiny configs) and small torch modules
through both PyTorch exporters with open dims, hummingbird conversions of scikit-learn
trees, and the same models exported at old opsets (``bench/wild.py`` takes some further
down with onnx's version converter).

    /work/venv-wild/bin/python bench/wild_exports.py --out bench/.models/exports

Needs torch, transformers and hummingbird-ml (not test dependencies: run it in a venv of
its own). Writes ``<name>.onnx`` for every export that succeeds and ``failed.txt`` with
one line per export the exporter itself refused (those are not our failures).
"""

from __future__ import annotations

import argparse
import math
import traceback
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import torch
from torch import nn
from torch.nn import functional as F

from torchvision_cpu import import_torchvision

import_torchvision()  # before transformers imports it (a CUDA build fails there otherwise)

torch.manual_seed(0)
EXPORTS: dict[str, Callable[[Path], None]] = {}
VOCAB = 64
HIDDEN = 16  # tiny configs: the regression models under tests/data/wild stay < 200 KB
# Exports also made at these old opsets by the TorchScript exporter (``<name>_op<N>``).
DOWN = {
    "unet_ts": (11, 10),
    "bert_ts": (13, 12, 11),
    "tagger_ts": (13, 10, 9, 8, 7),
    "cnn_ts": (12, 11, 9, 8, 7),
    "vit_ts": (14,),
}
FAILED: list[str] = []


def export(fn: Callable[[Path], None]) -> Callable[[Path], None]:
    EXPORTS[fn.__name__] = fn
    return fn


def ts_export(
    module: nn.Module,
    args: tuple[torch.Tensor, ...],
    path: Path,
    names: list[str],
    outputs: list[str],
    axes: dict[str, dict[int, str]],
    opset: int = 17,
) -> None:
    """The TorchScript exporter (``dynamic_axes``); the models of ``DOWN`` at their old
    opsets too (where the exporter can, else recorded in FAILED)."""
    module.eval()
    for i, o in enumerate([opset, *DOWN.get(path.stem, ())]):
        target = path if i == 0 else path.with_name(f"{path.stem}_op{o}.onnx")
        try:
            with torch.no_grad():
                torch.onnx.export(
                    module,
                    args,
                    str(target),
                    dynamo=False,
                    input_names=names,
                    output_names=outputs,
                    dynamic_axes=axes,
                    opset_version=o,
                )
        except Exception as err:
            if i == 0:
                raise
            FAILED.append(f"{target.stem}: {type(err).__name__}: {str(err)[:160]}")


def dynamo_export(
    module: nn.Module,
    args: tuple[torch.Tensor, ...],
    path: Path,
    names: list[str],
    outputs: list[str],
    shapes: tuple[dict[int, object], ...] | dict[str, dict[int, object]],
    opset: int = 18,
) -> None:
    """The torch.export-based exporter (``dynamo=True, dynamic_shapes=...``)."""
    module.eval()
    with torch.no_grad():
        program = torch.onnx.export(
            module,
            args,
            dynamo=True,
            input_names=names,
            output_names=outputs,
            dynamic_shapes=shapes,
            opset_version=opset,
        )
    assert program is not None
    program.save(str(path))


Dim = torch.export.Dim

# ---------------------------------------------------------------------------------
# transformers
# ---------------------------------------------------------------------------------


def _bert() -> nn.Module:
    from transformers import BertConfig, BertModel

    cfg = BertConfig(
        vocab_size=VOCAB,
        hidden_size=HIDDEN,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=2 * HIDDEN,
        max_position_embeddings=32,
        attn_implementation="eager",
    )
    return BertModel(cfg)


class _Hidden(nn.Module):
    """A transformers model returning its last hidden state only."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        if mask is None:
            return self.model(x).last_hidden_state
        return self.model(x, mask).last_hidden_state


def _ids(batch: int = 2, seq: int = 5) -> tuple[torch.Tensor, torch.Tensor]:
    ids = torch.randint(0, VOCAB, (batch, seq))
    mask = torch.ones(batch, seq, dtype=torch.int64)
    mask[0, -2:] = 0
    return ids, mask


@export
def bert_ts(out: Path) -> None:
    ids, mask = _ids()
    axes = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"}}
    axes["last_hidden_state"] = {0: "batch", 1: "seq"}
    ts_export(
        _Hidden(_bert()),
        (ids, mask),
        out / "bert_ts.onnx",
        ["input_ids", "attention_mask"],
        ["last_hidden_state"],
        axes,
    )


@export
def bert_dynamo(out: Path) -> None:
    ids, mask = _ids()
    batch, seq = Dim("batch", max=64), Dim("seq", max=32)
    dynamo_export(
        _Hidden(_bert()),
        (ids, mask),
        out / "bert_dynamo.onnx",
        ["input_ids", "attention_mask"],
        ["last_hidden_state"],
        ({0: batch, 1: seq}, {0: batch, 1: seq}),
    )


@export
def distilbert_ts(out: Path) -> None:
    from transformers import DistilBertConfig, DistilBertModel

    cfg = DistilBertConfig(
        vocab_size=VOCAB,
        dim=HIDDEN,
        n_layers=2,
        n_heads=2,
        hidden_dim=2 * HIDDEN,
        max_position_embeddings=32,
    )
    ids, mask = _ids()
    axes = {n: {0: "batch", 1: "seq"} for n in ("input_ids", "attention_mask", "hidden")}
    ts_export(
        _Hidden(DistilBertModel(cfg)),
        (ids, mask),
        out / "distilbert_ts.onnx",
        ["input_ids", "attention_mask"],
        ["hidden"],
        axes,
    )


def _gpt2() -> nn.Module:
    from transformers import GPT2Config, GPT2LMHeadModel

    cfg = GPT2Config(vocab_size=VOCAB, n_positions=32, n_embd=HIDDEN, n_layer=2, n_head=2)
    return GPT2LMHeadModel(cfg)


def _llama() -> nn.Module:
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(
        vocab_size=VOCAB,
        hidden_size=HIDDEN,
        intermediate_size=2 * HIDDEN,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=32,
        attn_implementation="eager",
    )
    return LlamaForCausalLM(cfg)


class _Logits(nn.Module):
    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.model(input_ids=ids, attention_mask=mask, use_cache=False).logits


class _WithPast(nn.Module):
    """A decoder step: ids, mask over past + new tokens, and each layer's past key and
    value as plain tensors in; logits and the grown keys and values out."""

    def __init__(self, model: nn.Module, layers: int):
        super().__init__()
        self.model = model
        self.layers = layers

    def forward(  # type: ignore[no-untyped-def]
        self,
        ids: torch.Tensor,
        mask: torch.Tensor,
        k0: torch.Tensor,
        v0: torch.Tensor,
        k1: torch.Tensor,
        v1: torch.Tensor,
    ):
        from transformers import DynamicCache

        past = (k0, v0, k1, v1)
        cache = DynamicCache()
        for i in range(self.layers):
            cache.update(past[2 * i], past[2 * i + 1], i)
        out = self.model(input_ids=ids, attention_mask=mask, past_key_values=cache, use_cache=True)
        kv = []
        for layer in out.past_key_values.layers:
            kv += [layer.keys, layer.values]
        return (out.logits, *kv)


def _decoder(name: str, model: nn.Module, heads: int, head_dim: int, out: Path) -> None:
    ids, mask = _ids()
    axes = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"}}
    ts_export(
        _Logits(model),
        (ids, mask),
        out / f"{name}_ts.onnx",
        ["input_ids", "attention_mask"],
        ["logits"],
        {**axes, "logits": {0: "batch", 1: "seq"}},
    )
    past_len, layers = 3, 2
    past = [torch.randn(2, heads, past_len, head_dim) for _ in range(2 * layers)]
    ids = torch.randint(0, VOCAB, (2, 1))
    mask = torch.ones(2, past_len + 1, dtype=torch.int64)
    names = ["input_ids", "attention_mask"] + [
        f"past.{i}.{kv}" for i in range(layers) for kv in ("key", "value")
    ]
    outs = ["logits"] + [f"present.{i}.{kv}" for i in range(layers) for kv in ("key", "value")]
    axes = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "total"}}
    axes.update({n: {0: "batch", 2: "past"} for n in names[2:]})
    axes.update({n: {0: "batch", 2: "total"} for n in outs[1:]})
    ts_export(
        _WithPast(model, layers),
        (ids, mask, *past),
        out / f"{name}_past_ts.onnx",
        names,
        outs,
        axes,
    )
    batch, seq, plen = Dim("batch", max=16), Dim("seq", max=16), Dim("past", max=16)
    shapes = ({0: batch, 1: seq}, {0: batch, 1: Dim.AUTO}, *({0: batch, 2: plen} for _ in past))
    ids = torch.randint(0, VOCAB, (2, 2))
    mask = torch.ones(2, past_len + 2, dtype=torch.int64)
    dynamo_export(
        _WithPast(model, layers), (ids, mask, *past), out / f"{name}_past_dynamo.onnx", names,
        outs, shapes,
    )  # fmt: skip


@export
def gpt2(out: Path) -> None:
    _decoder("gpt2", _gpt2(), heads=2, head_dim=HIDDEN // 2, out=out)


@export
def llama(out: Path) -> None:
    _decoder("llama", _llama(), heads=2, head_dim=HIDDEN // 4, out=out)


@export
def llama_dynamo(out: Path) -> None:
    ids, mask = _ids()
    batch, seq = Dim("batch", max=16), Dim("seq", max=32)
    dynamo_export(
        _Logits(_llama()),
        (ids, mask),
        out / "llama_dynamo.onnx",
        ["input_ids", "attention_mask"],
        ["logits"],
        ({0: batch, 1: seq}, {0: batch, 1: seq}),
    )


class _Seq2Seq(nn.Module):
    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, ids: torch.Tensor, mask: torch.Tensor, dec: torch.Tensor) -> torch.Tensor:
        return self.model(input_ids=ids, attention_mask=mask, decoder_input_ids=dec).logits


def _seq2seq(name: str, model: nn.Module, out: Path) -> None:
    ids, mask = _ids()
    dec = torch.randint(0, VOCAB, (2, 3))
    axes = {
        "input_ids": {0: "batch", 1: "src"},
        "attention_mask": {0: "batch", 1: "src"},
        "decoder_input_ids": {0: "batch", 1: "tgt"},
        "logits": {0: "batch", 1: "tgt"},
    }
    ts_export(
        _Seq2Seq(model), (ids, mask, dec), out / f"{name}_ts.onnx",
        ["input_ids", "attention_mask", "decoder_input_ids"], ["logits"], axes,
    )  # fmt: skip


@export
def t5(out: Path) -> None:
    from transformers import T5Config, T5ForConditionalGeneration

    cfg = T5Config(
        vocab_size=VOCAB, d_model=HIDDEN, d_kv=4, d_ff=2 * HIDDEN, num_layers=2, num_heads=4,
        decoder_start_token_id=0,
    )  # fmt: skip
    _seq2seq("t5", T5ForConditionalGeneration(cfg), out)


@export
def bart(out: Path) -> None:
    from transformers import BartConfig, BartForConditionalGeneration

    cfg = BartConfig(
        vocab_size=VOCAB, d_model=HIDDEN, encoder_layers=2, decoder_layers=2,
        encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=2 * HIDDEN,
        decoder_ffn_dim=2 * HIDDEN, max_position_embeddings=32,
    )  # fmt: skip
    _seq2seq("bart", BartForConditionalGeneration(cfg), out)


@export
def vit(out: Path) -> None:
    from transformers import ViTConfig, ViTModel

    cfg = ViTConfig(
        image_size=32, patch_size=8, hidden_size=HIDDEN, num_hidden_layers=2,
        num_attention_heads=2, intermediate_size=2 * HIDDEN,
    )  # fmt: skip
    x = torch.randn(2, 3, 32, 32)
    ts_export(
        _Hidden(ViTModel(cfg)), (x,), out / "vit_ts.onnx", ["pixel_values"], ["hidden"],
        {"pixel_values": {0: "batch"}, "hidden": {0: "batch"}},
    )  # fmt: skip
    dynamo_export(
        _Hidden(ViTModel(cfg)), (x,), out / "vit_dynamo.onnx", ["pixel_values"], ["hidden"],
        ({0: Dim("batch", max=64)},),
    )  # fmt: skip


@export
def whisper_encoder(out: Path) -> None:
    from transformers import WhisperConfig, WhisperModel

    cfg = WhisperConfig(
        vocab_size=VOCAB, pad_token_id=0, bos_token_id=1, eos_token_id=2,
        decoder_start_token_id=1, d_model=HIDDEN, encoder_layers=2, decoder_layers=2,
        encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=2 * HIDDEN,
        decoder_ffn_dim=2 * HIDDEN, num_mel_bins=16, max_source_positions=25,
        max_target_positions=32,
    )  # fmt: skip
    encoder = WhisperModel(cfg).get_encoder()
    x = torch.randn(2, 16, 50)
    ts_export(
        _Hidden(encoder), (x,), out / "whisper_encoder_ts.onnx", ["input_features"], ["hidden"],
        {"input_features": {0: "batch"}, "hidden": {0: "batch"}},
    )  # fmt: skip


@export
def wav2vec2(out: Path) -> None:
    from transformers import Wav2Vec2Config, Wav2Vec2Model

    cfg = Wav2Vec2Config(
        hidden_size=HIDDEN, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=2 * HIDDEN, conv_dim=(16, 16), conv_stride=(5, 2), conv_kernel=(10, 3),
        num_conv_pos_embeddings=16,
        num_conv_pos_embedding_groups=2, vocab_size=VOCAB,
    )  # fmt: skip
    x = torch.randn(2, 400)
    ts_export(
        _Hidden(Wav2Vec2Model(cfg)), (x,), out / "wav2vec2_ts.onnx", ["input_values"], ["hidden"],
        {"input_values": {0: "batch", 1: "samples"}, "hidden": {0: "batch", 1: "frames"}},
    )  # fmt: skip


# ---------------------------------------------------------------------------------
# torch modules
# ---------------------------------------------------------------------------------


class UNet(nn.Module):
    """Conv/BN/pool down, upsample (nearest and bilinear) and concat up: sizes from H, W."""

    def __init__(self) -> None:
        super().__init__()
        self.down = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU())
        self.mid = nn.Conv2d(8, 8, 3, stride=2, padding=1)
        self.up = nn.ConvTranspose2d(8, 8, 2, stride=2)
        self.head = nn.Conv2d(16, 2, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = self.down(x)
        b = F.relu(self.mid(F.max_pool2d(a, 2, ceil_mode=True)))
        c = F.interpolate(b, size=a.shape[2:], mode="bilinear", align_corners=False)
        d = F.interpolate(self.up(b), scale_factor=0.5, mode="nearest")
        d = F.interpolate(d, size=a.shape[2:], mode="nearest")
        return torch.sigmoid(self.head(torch.cat([a, c + d], 1)))


@export
def unet(out: Path) -> None:
    x = torch.randn(1, 3, 20, 24)
    ts_export(
        UNet(), (x,), out / "unet_ts.onnx", ["x"], ["y"],
        {"x": {0: "batch", 2: "height", 3: "width"}, "y": {0: "batch", 2: "height", 3: "width"}},
    )  # fmt: skip
    h, w = Dim("h", min=8, max=256), Dim("w", min=8, max=256)
    dynamo_export(
        UNet(), (x,), out / "unet_dynamo.onnx", ["x"], ["y"],
        ({0: Dim("batch", max=8), 2: h, 3: w},),
    )  # fmt: skip


def _conv(cin: int, cout: int, stride: int = 1) -> nn.Module:
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1), nn.BatchNorm2d(cout), nn.SiLU())


class Detector(nn.Module):
    """A YOLO-style detector: a backbone to strides 8/16/32, a neck that upsamples and
    concatenates (dims equal only at multiples of 32), and a head whose anchor grid
    comes from arange over each map's height and width (sizes as float data)."""

    def __init__(self, c: int = 8):
        super().__init__()
        self.p3 = nn.Sequential(_conv(3, c, 2), _conv(c, c, 2), _conv(c, c, 2))
        self.p4, self.p5 = _conv(c, c, 2), _conv(c, c, 2)
        self.lat4, self.lat3 = _conv(2 * c, c), _conv(2 * c, c)
        self.head = nn.Conv2d(c, 6, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        p3 = self.p3(x)
        p4 = self.p4(p3)
        p5 = self.p5(p4)
        n4 = self.lat4(torch.cat([F.interpolate(p5, scale_factor=2.0, mode="nearest"), p4], 1))
        n3 = self.lat3(torch.cat([F.interpolate(n4, scale_factor=2.0, mode="nearest"), p3], 1))
        outs = []
        for f, stride in ((n3, 8), (n4, 16), (p5, 32)):
            h, w = f.shape[2:]
            y = self.head(f).flatten(2)
            gy = torch.arange(h, dtype=torch.float32) + 0.5
            gx = torch.arange(w, dtype=torch.float32) + 0.5
            sy, sx = torch.meshgrid(gy, gx, indexing="ij")
            anchors = torch.stack([sx, sy], 0).reshape(2, -1) * stride
            outs.append(torch.cat([y[:, :2] * stride + anchors, y[:, 2:].sigmoid()], 1))
        return torch.cat(outs, 2)


@export
def detector(out: Path) -> None:
    x = torch.randn(1, 3, 64, 96)
    axes = {"images": {0: "batch", 2: "height", 3: "width"}, "boxes": {0: "batch", 2: "anchors"}}
    ts_export(Detector(), (x,), out / "detector_ts.onnx", ["images"], ["boxes"], axes)
    h, w = Dim("h", min=1, max=20), Dim("w", min=1, max=20)
    dynamo_export(
        Detector(), (x,), out / "detector_dynamo.onnx", ["images"], ["boxes"],
        ({0: Dim("batch", max=8), 2: 32 * h, 3: 32 * w},),
    )  # fmt: skip


class _C2f(nn.Module):
    """YOLOv8's C2f block: a 1x1 conv whose output is split in two, bottlenecks on the
    second half, every part concatenated and mixed by a 1x1 conv."""

    def __init__(self, cin: int, cout: int, n: int = 1):
        super().__init__()
        self.c = cout // 2
        self.cv1 = nn.Sequential(
            nn.Conv2d(cin, 2 * self.c, 1), nn.BatchNorm2d(2 * self.c), nn.SiLU()
        )
        self.cv2 = nn.Sequential(nn.Conv2d((2 + n) * self.c, cout, 1), nn.SiLU())
        self.m = nn.ModuleList(nn.Sequential(_conv(self.c, self.c), _conv(self.c, self.c))
                               for _ in range(n))  # fmt: skip

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = list(self.cv1(x).split((self.c, self.c), 1))
        for m in self.m:
            y.append(y[-1] + m(y[-1]))
        return self.cv2(torch.cat(y, 1))


class YoloV8Like(nn.Module):
    """A YOLOv8-style detector: C2f blocks (Split), SPPF (chained max pools), a nearest
    upsample and concat neck, a head split into boxes and sigmoid class scores."""

    def __init__(self, c: int = 8):
        super().__init__()
        self.stem = nn.Sequential(_conv(3, c, 2), _conv(c, 2 * c, 2), _C2f(2 * c, 2 * c))
        self.down = nn.Sequential(_conv(2 * c, 4 * c, 2), _C2f(4 * c, 4 * c, 2))
        self.sppf_in, self.pool = nn.Conv2d(4 * c, 2 * c, 1), nn.MaxPool2d(5, 1, 2)
        self.sppf_out = nn.Conv2d(8 * c, 4 * c, 1)
        self.neck = _C2f(6 * c, 2 * c)
        self.head = nn.Conv2d(2 * c, 4 + 6, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        p2 = self.stem(x)
        p3 = self.down(p2)
        a = self.sppf_in(p3)
        b = self.pool(a)
        c = self.pool(b)
        p3 = self.sppf_out(torch.cat([a, b, c, self.pool(c)], 1))
        y = self.head(self.neck(torch.cat([F.interpolate(p3, scale_factor=2.0), p2], 1)))
        box, cls = y.split((4, 6), 1)
        return torch.cat([box, cls.sigmoid()], 1).flatten(2).transpose(1, 2)


@export
def yolov8_like(out: Path) -> None:
    x = torch.randn(1, 3, 64, 96)
    axes = {"images": {0: "batch", 2: "height", 3: "width"}, "boxes": {0: "batch", 1: "anchors"}}
    ts_export(YoloV8Like(), (x,), out / "yolov8_like_ts.onnx", ["images"], ["boxes"], axes)


class _SelfAttention(nn.Module):
    """Multi-head self-attention written out (q, k, v projections, scaled scores, softmax),
    as speech toolkits write theirs."""

    def __init__(self, d: int, heads: int):
        super().__init__()
        self.heads, self.qkv, self.out = heads, nn.Linear(d, 3 * d), nn.Linear(d, d)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(d // self.heads)
        return self.out((scores.softmax(-1) @ v).transpose(1, 2).reshape(b, t, d))


class ConformerBlock(nn.Module):
    """A Conformer block: half-step feed-forward (SiLU), self-attention, the convolution
    module (pointwise conv, GLU, depthwise conv, BatchNorm, SiLU, pointwise conv), a
    second half-step feed-forward and a final LayerNorm, each with its residual."""

    def __init__(self, d: int = 32):
        super().__init__()

        def ff() -> nn.Module:
            return nn.Sequential(
                nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.SiLU(), nn.Linear(4 * d, d)
            )

        self.ff1, self.ff2 = ff(), ff()
        self.att_norm, self.att = nn.LayerNorm(d), _SelfAttention(d, 4)
        self.conv_norm = nn.LayerNorm(d)
        self.pw1, self.pw2 = nn.Conv1d(d, 2 * d, 1), nn.Conv1d(d, d, 1)
        self.dw, self.bn = nn.Conv1d(d, d, 7, padding=3, groups=d), nn.BatchNorm1d(d)
        self.norm = nn.LayerNorm(d)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + 0.5 * self.ff1(x)
        h = self.att_norm(x)
        x = x + self.att(h)
        y = F.glu(self.pw1(self.conv_norm(x).transpose(1, 2)), dim=1)
        x = x + self.pw2(F.silu(self.bn(self.dw(y)))).transpose(1, 2)
        return self.norm(x + 0.5 * self.ff2(x))


class ConformerLike(nn.Module):
    """Features [B, T, 40] subsampled by a strided conv, projected, two Conformer blocks."""

    def __init__(self) -> None:
        super().__init__()
        self.sub = nn.Conv2d(1, 4, 3, 2)
        self.proj = nn.Linear(4 * 19, 32)
        self.blocks = nn.Sequential(ConformerBlock(), ConformerBlock())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.relu(self.sub(x.unsqueeze(1)))  # [B, 4, T', 19]
        b, c, t, f = y.shape
        return self.blocks(self.proj(y.transpose(1, 2).reshape(b, t, c * f)))


@export
def conformer_like(out: Path) -> None:
    x = torch.randn(2, 21, 40)
    axes = {"features": {0: "batch", 1: "frames"}, "encoded": {0: "batch", 1: "steps"}}
    ts_export(ConformerLike(), (x,), out / "conformer_like_ts.onnx", ["features"], ["encoded"],
              axes)  # fmt: skip


class Crnn(nn.Module):
    """A text-line recogniser: a CNN taking a 32-pixel line to 8 rows, its columns the
    sequence of a 2-layer bidirectional LSTM, log-probabilities per column."""

    def __init__(self) -> None:
        super().__init__()
        self.cnn = nn.Sequential(
            nn.Conv2d(1, 8, 3, 1, 1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, 1, 1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d((2, 1)),
        )  # fmt: skip
        self.rnn = nn.LSTM(16 * 8, 24, num_layers=2, bidirectional=True, batch_first=True)
        self.fc = nn.Linear(48, 37)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.cnn(x)
        b, c, h, w = y.shape
        y, _ = self.rnn(y.permute(0, 3, 1, 2).reshape(b, w, c * h))
        return self.fc(y).log_softmax(-1)


@export
def crnn(out: Path) -> None:
    x = torch.randn(2, 1, 32, 40)
    axes = {"image": {0: "batch", 3: "width"}, "logprobs": {0: "batch", 1: "columns"}}
    ts_export(Crnn(), (x,), out / "crnn_ts.onnx", ["image"], ["logprobs"], axes)


class SmallCNN(nn.Module):
    """Conv/BN/ReLU/pool and a classifier head flattened by x.size(0): the old-opset CNN."""

    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 8, 3, stride=2), nn.ReLU(), nn.AvgPool2d(2),
        )  # fmt: skip
        self.head = nn.Linear(8 * 3 * 3, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.features(x)
        return F.softmax(self.head(y.view(y.size(0), -1)), dim=1)


@export
def cnn(out: Path) -> None:
    x = torch.randn(2, 3, 28, 28)
    ts_export(
        SmallCNN(), (x,), out / "cnn_ts.onnx", ["x"], ["p"], {"x": {0: "batch"}, "p": {0: "batch"}}
    )


class Tagger(nn.Module):
    """Embedding -> bidirectional LSTM -> GRU -> linear, packed by lengths' max."""

    def __init__(self) -> None:
        super().__init__()
        self.emb = nn.Embedding(VOCAB, 16)
        self.lstm = nn.LSTM(16, 12, batch_first=True, bidirectional=True)
        self.gru = nn.GRU(24, 8, batch_first=True)
        self.out = nn.Linear(8, 5)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        h, _ = self.lstm(self.emb(ids))
        g, _ = self.gru(h)
        return F.log_softmax(self.out(g), -1)


@export
def tagger(out: Path) -> None:
    ids = torch.randint(0, VOCAB, (2, 7))
    ts_export(
        Tagger(), (ids,), out / "tagger_ts.onnx", ["ids"], ["scores"],
        {"ids": {0: "batch", 1: "seq"}, "scores": {0: "batch", 1: "seq"}},
    )  # fmt: skip


class StreamingRnn(nn.Module):
    """A streaming speech model's core: a 3-layer LSTM and a 2-layer bidirectional GRU,
    both with their states fed in and returned (h0 and c0 sliced per layer)."""

    def __init__(self) -> None:
        super().__init__()
        self.lstm = nn.LSTM(10, 12, num_layers=3)
        self.gru = nn.GRU(12, 6, num_layers=2, bidirectional=True)
        self.out = nn.Linear(12, 4)

    def forward(
        self, x: torch.Tensor, h0: torch.Tensor, c0: torch.Tensor, g0: torch.Tensor
    ) -> tuple[torch.Tensor, ...]:
        y, (hn, cn) = self.lstm(x, (h0, c0))
        z, gn = self.gru(y, g0)
        return torch.sigmoid(self.out(z)), hn, cn, gn


@export
def streaming_rnn(out: Path) -> None:
    x, batch = torch.randn(5, 2, 10), 2
    states = (torch.zeros(3, batch, 12), torch.zeros(3, batch, 12), torch.zeros(4, batch, 6))
    axes = {"x": {0: "seq", 1: "batch"}, "y": {0: "seq", 1: "batch"}}
    axes |= {n: {1: "batch"} for n in ("h0", "c0", "g0", "hn", "cn", "gn")}
    ts_export(
        StreamingRnn(), (x, *states), out / "streaming_rnn_ts.onnx",
        ["x", "h0", "c0", "g0"], ["y", "hn", "cn", "gn"], axes,
    )  # fmt: skip


class SmallMlp(nn.Module):
    """A pre-norm transformer MLP block: LayerNorm, Linear, erf GELU, Linear, residual."""

    def __init__(self) -> None:
        super().__init__()
        self.norm, self.up, self.down = nn.LayerNorm(32), nn.Linear(32, 64), nn.Linear(64, 32)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.down(F.gelu(self.up(self.norm(x))))


class PixelShuffleUp(nn.Module):
    """Super-resolution tail: a conv, PixelShuffle (DepthToSpace) and a bilinear upsample."""

    def __init__(self) -> None:
        super().__init__()
        self.conv, self.shuffle = nn.Conv2d(4, 16, 3, padding=1), nn.PixelShuffle(2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        up = self.shuffle(self.conv(x))
        return F.interpolate(up, scale_factor=2, mode="bilinear", align_corners=False)


class AudioConv1d(nn.Module):
    """Conv1d/BatchNorm1d/ReLU, a depthwise conv with ReLU6, global pooling, a classifier."""

    def __init__(self) -> None:
        super().__init__()
        self.c1, self.b1 = nn.Conv1d(40, 32, 5, padding=2), nn.BatchNorm1d(32)
        self.c2, self.b2 = nn.Conv1d(32, 32, 3, padding=1, groups=32), nn.BatchNorm1d(32)
        self.fc = nn.Linear(32, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.relu6(self.b2(self.c2(F.relu(self.b1(self.c1(x))))))
        return self.fc(F.adaptive_avg_pool1d(x, 1).flatten(1))


class GroupNormSilu(nn.Module):
    """A diffusion-style residual block: conv, GroupNorm, SiLU, conv, residual."""

    def __init__(self) -> None:
        super().__init__()
        self.c1, self.norm = nn.Conv2d(8, 16, 3, padding=1), nn.GroupNorm(4, 16)
        self.c2 = nn.Conv2d(16, 8, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.c2(F.silu(self.norm(self.c1(x))))


class GruAttentionPool(nn.Module):
    """Embedding, a 2-layer bidirectional batch-first GRU, attention pooling, a classifier."""

    def __init__(self) -> None:
        super().__init__()
        self.emb = nn.Embedding(VOCAB, 16)
        self.gru = nn.GRU(16, 12, num_layers=2, bidirectional=True, batch_first=True)
        self.score, self.out = nn.Linear(24, 1), nn.Linear(24, 4)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        h, _ = self.gru(self.emb(ids))
        return self.out((torch.softmax(self.score(h), 1) * h).sum(1))


@export
def small_blocks(out: Path) -> None:
    """Small models of the kinds users export one at a time: where a session's fixed
    cost is most of it."""
    seq = {0: "batch", 1: "seq"}
    image = {0: "batch", 2: "height", 3: "width"}
    for name, module, args, names, axes in (
        ("mlp_block_ts", SmallMlp(), (torch.randn(2, 5, 32),), ["x"], {"x": seq}),
        ("pixel_shuffle_ts", PixelShuffleUp(), (torch.randn(1, 4, 8, 8),), ["x"],
         {"x": image}),
        ("audio_conv1d_ts", AudioConv1d(), (torch.randn(2, 40, 50),), ["x"],
         {"x": {0: "batch", 2: "seq"}}),
        ("groupnorm_silu_ts", GroupNormSilu(), (torch.randn(1, 8, 16, 16),), ["x"],
         {"x": image}),
        ("gru_attention_pool_ts", GruAttentionPool(), (torch.randint(0, VOCAB, (2, 7)),),
         ["ids"], {"ids": seq}),
    ):  # fmt: skip
        ts_export(module, args, out / f"{name}.onnx", names, ["y"], axes)


class SizesAsData(nn.Module):
    """Sizes used as values: positions from arange(seq), a causal mask from the seq
    length, a mean over seq written as a division by x.size(1), a reshape by -1."""

    def __init__(self) -> None:
        super().__init__()
        self.pos = nn.Embedding(64, 8)
        self.proj = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        pos = self.pos(torch.arange(s, device=x.device)).unsqueeze(0)
        h = self.proj(x + pos)
        mask = torch.triu(torch.full((s, s), float("-inf")), diagonal=1)
        att = torch.softmax(h @ h.transpose(1, 2) / (d**0.5) + mask, -1) @ h
        mean = att.sum(1, keepdim=True) / x.size(1)
        flat = (att - mean).reshape(b, -1)
        return flat * torch.tensor(s, dtype=torch.float32).sqrt()


@export
def sizes_as_data(out: Path) -> None:
    x = torch.randn(2, 5, 8)
    ts_export(
        SizesAsData(), (x,), out / "sizes_as_data_ts.onnx", ["x"], ["y"],
        {"x": {0: "batch", 1: "seq"}, "y": {0: "batch", 1: "flat"}},
    )  # fmt: skip
    dynamo_export(
        SizesAsData(), (x,), out / "sizes_as_data_dynamo.onnx", ["x"], ["y"],
        ({0: Dim("batch", max=8), 1: Dim("seq", min=2, max=64)},),
    )  # fmt: skip


# ---------------------------------------------------------------------------------
# hummingbird
# ---------------------------------------------------------------------------------


# More transformers architectures, each a tiny config with random weights, exported with
# the TorchScript exporter as optimum's users get them: open batch (and sequence) dims.
# What they add: ALBERT's shared layers, ELECTRA/ALBERT embedding projections, DeBERTa's
# disentangled attention, MobileBERT's bottlenecks, MPNet's relative buckets,
# SqueezeBERT's grouped convs, BLOOM's ALiBi, OPT, GPT-Neo's local attention, GPT-J's
# interleaved rotary, Phi's partial rotary, Qwen2/Gemma/Mistral's grouped-query
# attention (Gemma's GeGLU, Mistral's sliding window), Falcon's parallel block; DeiT,
# BEiT's relative position bias, SegFormer's reduced attention, MobileViT, ConvNeXt,
# Swin's windows, DINOv2's layer scale, CLIP's quick GELU, LeViT, ResNet.

_ENC = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2,
        "intermediate_size": 64, "max_position_embeddings": 64}  # fmt: skip
_GQA = {**_ENC, "num_key_value_heads": 1}


def _text_models() -> dict[str, Callable[[], nn.Module]]:
    import transformers as t

    def make(config: type, model: type, **kw: object) -> Callable[[], nn.Module]:
        def build() -> nn.Module:
            cfg = config(vocab_size=VOCAB, **kw)
            cfg._attn_implementation = "eager"
            return model(cfg)

        return build

    return {
        "roberta": make(t.RobertaConfig, t.RobertaModel, **_ENC),
        "albert": make(t.AlbertConfig, t.AlbertModel, embedding_size=16, **_ENC),
        "electra": make(t.ElectraConfig, t.ElectraModel, embedding_size=16, **_ENC),
        "deberta_v2": make(t.DebertaV2Config, t.DebertaV2Model, **_ENC),
        "mobilebert": make(t.MobileBertConfig, t.MobileBertModel, **{**_ENC, "embedding_size": 16,
                           "intra_bottleneck_size": 16, "true_hidden_size": 16}),
        "mpnet": make(t.MPNetConfig, t.MPNetModel, **_ENC),
        "squeezebert": make(t.SqueezeBertConfig, t.SqueezeBertModel, embedding_size=32, **_ENC),
        "bloom": make(t.BloomConfig, t.BloomModel, hidden_size=32, n_layer=2, n_head=2),
        "opt": make(t.OPTConfig, t.OPTModel, hidden_size=32, num_hidden_layers=2,
                    num_attention_heads=2, ffn_dim=64, word_embed_proj_dim=32,
                    max_position_embeddings=64),
        "gpt_neo": make(t.GPTNeoConfig, t.GPTNeoModel, hidden_size=32, num_layers=2,
                        num_heads=2, attention_types=[[["global", "local"], 1]], window_size=4,
                        max_position_embeddings=64),
        "gptj": make(t.GPTJConfig, t.GPTJModel, n_embd=32, n_layer=2, n_head=2, rotary_dim=8,
                     n_positions=64),
        "phi": make(t.PhiConfig, t.PhiModel, **_ENC),
        "qwen2": make(t.Qwen2Config, t.Qwen2Model, **_GQA),
        "gemma": make(t.GemmaConfig, t.GemmaModel, head_dim=16, **_GQA),
        "mistral": make(t.MistralConfig, t.MistralModel, sliding_window=4, **_GQA),
        "falcon": make(t.FalconConfig, t.FalconModel, hidden_size=32, num_hidden_layers=2,
                       num_attention_heads=2),
    }  # fmt: skip


def _vision_models() -> dict[str, tuple[Callable[[], nn.Module], int]]:
    """Each model and the image size it takes."""
    import transformers as t

    vit = {"image_size": 32, "patch_size": 8, "hidden_size": 32, "num_hidden_layers": 2,
           "num_attention_heads": 2}  # fmt: skip
    return {
        "deit": (lambda: t.DeiTModel(t.DeiTConfig(**vit, intermediate_size=64)), 32),
        "beit": (lambda: t.BeitModel(t.BeitConfig(**vit, intermediate_size=64,
                                                  use_relative_position_bias=True)), 32),
        "segformer": (lambda: t.SegformerModel(t.SegformerConfig(
            num_encoder_blocks=2, depths=[1, 1], sr_ratios=[2, 1], hidden_sizes=[16, 32],
            patch_sizes=[7, 3], strides=[4, 2], num_attention_heads=[1, 2],
            mlp_ratios=[2, 2])), 64),
        "mobilevit": (lambda: t.MobileViTModel(t.MobileViTConfig(
            image_size=64, hidden_sizes=[16, 24, 32],
            neck_hidden_sizes=[8, 8, 16, 16, 24, 32, 64])), 64),
        "convnext": (lambda: t.ConvNextModel(t.ConvNextConfig(
            hidden_sizes=[8, 16, 32, 64], depths=[1, 1, 1, 1])), 64),
        "swin": (lambda: t.SwinModel(t.SwinConfig(
            image_size=32, patch_size=4, embed_dim=16, depths=[1, 1], num_heads=[1, 2],
            window_size=4)), 32),
        "dinov2": (lambda: t.Dinov2Model(t.Dinov2Config(**vit)), 32),
        "clip_vision": (lambda: t.CLIPVisionModel(t.CLIPVisionConfig(
            **vit, intermediate_size=64)), 32),
        "levit": (lambda: t.LevitModel(t.LevitConfig(
            image_size=64, hidden_sizes=[16, 24, 32], num_attention_heads=[1, 2, 2],
            depths=[1, 1, 1], key_dim=[8, 8, 8])), 64),
        "resnet": (lambda: t.ResNetModel(t.ResNetConfig(
            embedding_size=8, hidden_sizes=[8, 16, 32, 64], depths=[1, 1, 1, 1])), 64),
    }  # fmt: skip


class _Output(nn.Module):
    """A transformers model's last hidden state, called by keyword."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, *args: torch.Tensor) -> torch.Tensor:
        if len(args) == 1:
            return self.model(pixel_values=args[0]).last_hidden_state
        return self.model(input_ids=args[0], attention_mask=args[1]).last_hidden_state


@export
def hf_architectures(out: Path) -> None:
    ids, mask = _ids()
    text_axes = {n: {0: "batch", 1: "seq"} for n in ("input_ids", "attention_mask", "hidden")}
    for name, build in _text_models().items():
        try:
            ts_export(_Output(build()), (ids, mask), out / f"hf_{name}_ts.onnx",
                      ["input_ids", "attention_mask"], ["hidden"], text_axes)  # fmt: skip
        except Exception as err:
            FAILED.append(f"hf_{name}_ts: {type(err).__name__}: {str(err).splitlines()[0][:160]}")
    image_axes = {"pixel_values": {0: "batch"}, "hidden": {0: "batch"}}
    for name, (build, size) in _vision_models().items():
        try:
            x = torch.randn(2, 3, size, size)
            ts_export(_Output(build()), (x,), out / f"hf_{name}_ts.onnx", ["pixel_values"],
                      ["hidden"], image_axes)  # fmt: skip
        except Exception as err:
            FAILED.append(f"hf_{name}_ts: {type(err).__name__}: {str(err).splitlines()[0][:160]}")


@export
def hummingbird(out: Path) -> None:
    from hummingbird.ml import convert
    from sklearn.ensemble import GradientBoostingClassifier, RandomForestRegressor
    from sklearn.tree import DecisionTreeClassifier

    rng = np.random.default_rng(0)
    x = rng.standard_normal((200, 6)).astype(np.float32)
    y = (x[:, 0] + x[:, 1] * x[:, 2] > 0).astype(np.int64)
    models = {
        "hb_tree_gemm": (DecisionTreeClassifier(max_depth=4).fit(x, y), "gemm"),
        "hb_forest_trav": (
            RandomForestRegressor(n_estimators=5, max_depth=4).fit(x, x[:, 0]),
            "tree_trav",
        ),
        "hb_gbdt_perf": (
            GradientBoostingClassifier(n_estimators=5, max_depth=3).fit(x, y),
            "perf_tree_trav",
        ),
    }
    # hummingbird calls torch.onnx.export without choosing an exporter; the default is
    # now torch.export, which cannot trace it: give it the TorchScript exporter it was
    # written for.
    torch_export = torch.onnx.export

    def legacy_export(*args, **kwargs):  # type: ignore[no-untyped-def]
        return torch_export(*args, **{"dynamo": False, **kwargs})

    torch.onnx.export = legacy_export
    try:
        for name, (model, strategy) in models.items():
            hb = convert(model, "onnx", x[:10], extra_config={"tree_implementation": strategy})
            onnx.save(hb.model, str(out / f"{name}.onnx"))
    finally:
        torch.onnx.export = torch_export


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / ".models" / "exports")
    ap.add_argument("--only", action="append", help="export only these")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    warnings.filterwarnings("ignore")
    for name, fn in EXPORTS.items():
        if args.only and name not in args.only:
            continue
        torch.manual_seed(0)  # each export's weights whatever else is exported
        try:
            fn(args.out)
            print("exported", name, flush=True)
        except Exception as err:  # the exporter's failure, recorded
            traceback.print_exc()
            FAILED.append(f"{name}: {type(err).__name__}: {str(err).splitlines()[0][:160]}")
    (args.out / "failed.txt").write_text("".join(f + "\n" for f in FAILED))
    for f in FAILED:
        print("FAILED", f)


if __name__ == "__main__":
    main()
