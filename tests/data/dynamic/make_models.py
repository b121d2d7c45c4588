"""Make the dynamic-axes ONNX exports under tests/data/dynamic/ (random weights, small).

    /work/venv-wild/bin/python tests/data/dynamic/make_models.py   # torch 2.13, onnxscript

- ``encoder_dynamic_axes.onnx``: a 2-layer pre-norm attention encoder written out
  (``x.shape`` read for every reshape, d_model 16, 2 heads, a key-padding mask), exported
  by the TorchScript exporter with ``dynamic_axes`` on batch and seq. (``nn.Transformer``
  itself does not export this way: its attention bakes the traced sequence length into a
  Reshape, which onnxruntime refuses at any other length too);
- ``encoder_dynamo.onnx``: an ``nn.TransformerEncoder`` (2 layers, key-padding mask)
  through ``dynamo=True`` with ``dynamic_shapes`` (torch.export's symbolic batch and seq);
- ``cnn_dynamic_hw.onnx``: conv -> relu -> maxpool -> conv -> global average pool ->
  linear, with batch, height and width dynamic (TorchScript exporter).
"""

from __future__ import annotations

import warnings
from pathlib import Path

import onnx
import torch
from torch import nn

HERE = Path(__file__).resolve().parent
OPSET = 17


class Encoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        layer = nn.TransformerEncoderLayer(
            d_model=16, nhead=2, dim_feedforward=32, dropout=0.0, batch_first=True
        )
        self.encoder = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
        self.head = nn.Linear(16, 4)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        # mask: 1 where a position is padding
        return self.head(self.encoder(x, src_key_padding_mask=mask > 0.5))


class Block(nn.Module):
    def __init__(self, d: int = 16, heads: int = 2) -> None:
        super().__init__()
        self.heads = heads
        self.qkv, self.out = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(d, dim=-1)
        q, k, v = (t.reshape(b, s, self.heads, d // self.heads).transpose(1, 2) for t in (q, k, v))
        scores = q @ k.transpose(-1, -2) / (d // self.heads) ** 0.5
        scores = scores - 1e4 * mask[:, None, None, :]
        att = (scores.softmax(-1) @ v).transpose(1, 2).reshape(b, s, d)
        x = x + self.out(att)
        return x + self.ff(self.norm2(x))


class WrittenEncoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.ModuleList([Block(), Block()])
        self.head = nn.Linear(16, 4)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = block(x, mask)
        return self.head(x)


class Cnn(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 8, 3)
        self.fc = nn.Linear(8, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = nn.functional.max_pool2d(torch.relu(self.conv1(x)), 2)
        h = torch.relu(self.conv2(h))
        return self.fc(h.mean(dim=(2, 3)))


def strip(path: Path) -> None:
    """Drop the exporter's per-node stack traces and doc strings (most of the bytes)."""
    model = onnx.load(str(path))
    for node in model.graph.node:
        del node.metadata_props[:]
        node.doc_string = ""
    onnx.save(model, str(path))


def main() -> None:
    torch.manual_seed(0)
    warnings.filterwarnings("ignore")
    encoder = Encoder().eval()
    x, mask = torch.randn(2, 5, 16), torch.zeros(2, 5)
    torch.onnx.export(
        WrittenEncoder().eval(), (x, mask), HERE / "encoder_dynamic_axes.onnx", dynamo=False,
        input_names=["x", "mask"], output_names=["y"], opset_version=OPSET,
        dynamic_axes={"x": {0: "batch", 1: "seq"}, "mask": {0: "batch", 1: "seq"},
                      "y": {0: "batch", 1: "seq"}},
    )  # fmt: skip
    batch, seq = torch.export.Dim("batch", min=1, max=64), torch.export.Dim("seq", min=2, max=512)
    program = torch.onnx.export(
        encoder, (x, mask), dynamo=True, input_names=["x", "mask"], output_names=["y"],
        opset_version=18, dynamic_shapes={"x": {0: batch, 1: seq}, "mask": {0: batch, 1: seq}},
    )  # fmt: skip
    program.save(str(HERE / "encoder_dynamo.onnx"), external_data=False)
    cnn = Cnn().eval()
    torch.onnx.export(
        cnn, (torch.randn(2, 3, 16, 12),), HERE / "cnn_dynamic_hw.onnx", dynamo=False,
        input_names=["image"], output_names=["logits"], opset_version=OPSET,
        dynamic_axes={"image": {0: "N", 2: "H", 3: "W"}, "logits": {0: "N"}},
    )  # fmt: skip
    for name in ("encoder_dynamic_axes", "encoder_dynamo", "cnn_dynamic_hw"):
        strip(HERE / f"{name}.onnx")


if __name__ == "__main__":
    main()
