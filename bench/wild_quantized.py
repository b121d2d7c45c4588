"""Quantised models for the models-from-the-wild corpus (``bench/wild.py``), made as users
make them: onnxruntime's ``quant_pre_process`` then ``quantize_static`` of float models
of the corpus (torchvision's and the exports), in both of its formats -- QDQ
(QuantizeLinear/DequantizeLinear pairs around float ops, its default) and QOperator
(QLinearConv, QLinearAdd... as the ONNX model zoo's int8 models hold) --, u8 or s8
activations, per tensor or per channel, calibrated on a few random batches.

    /work/venv-wild/bin/python bench/wild_quantized.py --out bench/.models/quantized

Needs onnxruntime with its quantization tools (and sympy, for quant_pre_process), and
the float models made first (``wild_torchvision.py``, ``wild_exports.py``: ``wild.py``
makes them). Writes ``<name>.onnx`` for every model that quantises (``bench/wild.py``
lists them as ``q_<name>``) and ``failed.txt`` with one line per refusal. Open dims stay
open: calibration runs at batch 1 and the dims' export sizes.
"""

from __future__ import annotations

import contextlib
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import onnx
from onnxruntime.quantization import (
    CalibrationDataReader,
    QuantFormat,
    QuantType,
    quantize_static,
)
from onnxruntime.quantization.shape_inference import quant_pre_process

from export_each import export_arguments, export_each

MODELS = Path(__file__).resolve().parent / ".models"

QUANTIZED: dict[str, tuple[str, str, QuantType, bool, dict[str, int]]] = {
    # name: (float model under bench/.models, format, activations, per channel, dim sizes)
    "resnet18_qdq": ("torchvision/resnet18_op9.onnx", "qdq", QuantType.QUInt8, False, {}),
    "resnet18_qop": ("torchvision/resnet18_op9.onnx", "qop", QuantType.QUInt8, False, {}),
    "mobilenet_v2_qop_pc": ("torchvision/mobilenet_v2_op11.onnx", "qop", QuantType.QUInt8, True,
                            {}),
    "mobilenet_v3_small_qdq_s8": ("torchvision/mobilenet_v3_small_op13.onnx", "qdq",
                                  QuantType.QInt8, True, {}),
    "efficientnet_b0_qdq": ("torchvision/efficientnet_b0_op13.onnx", "qdq", QuantType.QUInt8,
                            True, {}),
    "shufflenet_v2_qdq": ("torchvision/shufflenet_v2_op11.onnx", "qdq", QuantType.QUInt8, False,
                          {}),
    "yolov8_like_qdq": ("exports/yolov8_like_ts.onnx", "qdq", QuantType.QUInt8, True,
                        {"height": 64, "width": 64}),
    "cnn_qop": ("exports/cnn_ts.onnx", "qop", QuantType.QUInt8, False, {}),
    "bert_qdq": ("exports/bert_ts.onnx", "qdq", QuantType.QUInt8, True, {"seq": 8}),
}  # fmt: skip
"""The models, each an open batch dim at least (others sized for calibration)."""


class RandomBatches(CalibrationDataReader):
    """Four batches of random inputs: normal floats, small integers (token ids, masks)."""

    def __init__(self, model: onnx.ModelProto, sizes: dict[str, int]) -> None:
        rng = np.random.default_rng(0)
        batches = []
        for _ in range(4):
            feeds = {}
            for vi in model.graph.input:
                t = vi.type.tensor_type
                shape = [d.dim_value or sizes.get(d.dim_param, 1) for d in t.shape.dim]
                dtype = onnx.helper.tensor_dtype_to_np_dtype(t.elem_type)
                if np.issubdtype(dtype, np.floating):
                    feeds[vi.name] = rng.standard_normal(shape).astype(dtype)
                else:
                    feeds[vi.name] = rng.integers(0, 2, shape).astype(dtype)
            batches.append(feeds)
        self.batches: Iterator[dict[str, np.ndarray]] = iter(batches)

    def get_next(self) -> dict[str, np.ndarray] | None:
        return next(self.batches, None)


def quantize(name: str, out: Path) -> None:
    source, form, activations, per_channel, sizes = QUANTIZED[name]
    src = (MODELS / source).resolve()
    if not src.exists():
        raise FileNotFoundError(f"{src}: make the float models first (bench/wild.py)")
    with tempfile.TemporaryDirectory() as tmp, contextlib.chdir(tmp):  # its scratch files
        pre = Path(tmp) / "pre.onnx"
        try:
            quant_pre_process(str(src), str(pre))
        except Exception:  # its symbolic shape inference gives up on some open dims
            quant_pre_process(str(src), str(pre), skip_symbolic_shape=True)
        quantize_static(
            str(pre), str(out.resolve() / f"{name}.onnx"), RandomBatches(onnx.load(pre), sizes),
            quant_format=QuantFormat.QDQ if form == "qdq" else QuantFormat.QOperator,
            activation_type=activations, weight_type=QuantType.QInt8, per_channel=per_channel,
        )  # fmt: skip


def main() -> None:
    args = export_arguments(__doc__)
    warnings.filterwarnings("ignore")
    export_each(args.only or QUANTIZED, lambda name: quantize(name, args.out), args.out)


if __name__ == "__main__":
    main()
