"""torchvision's image, segmentation and video models for the models-from-the-wild corpus
(``bench/wild.py``), exported as users export them: random weights, an open batch dim,
through the TorchScript exporter at the opsets people pin (7 to 17) and through the
dynamo exporter.

    /work/venv-wild/bin/python bench/wild_torchvision.py --out bench/.models/torchvision

Needs torch and torchvision (not test dependencies; a CUDA build of torchvision works
with a CPU torch, see ``bench/torchvision_cpu.py``). Writes ``<name>.onnx`` for every
export that succeeds (``bench/wild.py`` lists them as ``tv_<name>``) and ``failed.txt``
with one line per export the exporter itself refused.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from export_each import export_arguments, export_each
from torchvision_cpu import import_torchvision

EXPORTS: dict[str, tuple[Callable[[Any], torch.nn.Module], tuple[int, ...], int, bool]] = {
    # name: (model, input shape at batch 1, opset, dynamo exporter)
    "resnet18_op9": (lambda m: m.resnet18(), (1, 3, 64, 64), 9, False),
    "mobilenet_v2_op11": (lambda m: m.mobilenet_v2(), (1, 3, 64, 64), 11, False),
    "mobilenet_v3_small_op13": (lambda m: m.mobilenet_v3_small(), (1, 3, 64, 64), 13, False),
    "mobilenet_v3_large_op17": (lambda m: m.mobilenet_v3_large(), (1, 3, 64, 64), 17, False),
    "efficientnet_b0_op13": (lambda m: m.efficientnet_b0(), (1, 3, 64, 64), 13, False),
    "efficientnet_v2_s_dynamo": (lambda m: m.efficientnet_v2_s(), (1, 3, 64, 64), 18, True),
    "shufflenet_v2_op11": (lambda m: m.shufflenet_v2_x0_5(), (1, 3, 64, 64), 11, False),
    "squeezenet1_1_op7": (lambda m: m.squeezenet1_1(), (1, 3, 64, 64), 7, False),
    "regnet_y_400mf_op14": (lambda m: m.regnet_y_400mf(), (1, 3, 64, 64), 14, False),
    "regnet_x_400mf_dynamo": (lambda m: m.regnet_x_400mf(), (1, 3, 64, 64), 18, True),
    "convnext_tiny_op17": (lambda m: m.convnext_tiny(), (1, 3, 64, 64), 17, False),
    "swin_t_op17": (lambda m: m.swin_t(), (1, 3, 64, 64), 17, False),
    "vit_b_16_op14": (lambda m: m.vit_b_16(image_size=64), (1, 3, 64, 64), 14, False),
    "maxvit_t_op17": (lambda m: m.maxvit_t(), (1, 3, 224, 224), 17, False),
    "mnasnet0_5_op10": (lambda m: m.mnasnet0_5(), (1, 3, 64, 64), 10, False),
    "densenet121_op12": (lambda m: m.densenet121(), (1, 3, 64, 64), 12, False),
    "googlenet_op11": (
        lambda m: m.googlenet(aux_logits=False, init_weights=True), (1, 3, 64, 64), 11, False,
    ),
    "inception_v3_op13": (
        lambda m: m.inception_v3(aux_logits=False, init_weights=True), (1, 3, 96, 96), 13, False,
    ),
    "resnext50_op10": (lambda m: m.resnext50_32x4d(), (1, 3, 64, 64), 10, False),
    "deeplabv3_mnv3_op12": (
        lambda m: m.segmentation.deeplabv3_mobilenet_v3_large(
            weights_backbone=None, num_classes=5),
        (1, 3, 64, 64), 12, False,
    ),
    "lraspp_mnv3_op11": (
        lambda m: m.segmentation.lraspp_mobilenet_v3_large(
            weights_backbone=None, num_classes=5),
        (1, 3, 64, 64), 11, False,
    ),
    "fcn_resnet50_op16": (
        lambda m: m.segmentation.fcn_resnet50(weights_backbone=None, num_classes=5),
        (1, 3, 64, 64), 16, False,
    ),
    "r3d_18_op13": (lambda m: m.video.r3d_18(), (1, 3, 8, 32, 32), 13, False),
    "mc3_18_dynamo": (lambda m: m.video.mc3_18(), (1, 3, 8, 32, 32), 18, True),
}  # fmt: skip


def export(torchvision: Any, name: str, out: Path) -> None:
    make, shape, opset, dynamo = EXPORTS[name]
    model = make(torchvision.models).eval()
    x = torch.randn(*shape)
    path = out / f"{name}.onnx"
    if dynamo:
        batch = torch.export.Dim("batch", max=64)
        torch.onnx.export(model, (x,), str(path), dynamo=True, opset_version=opset,
                          input_names=["x"], dynamic_shapes={"x": {0: batch}})  # fmt: skip
    else:
        torch.onnx.export(model, (x,), str(path), dynamo=False, opset_version=opset,
                          input_names=["x"], output_names=["y"],
                          dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})  # fmt: skip


def main() -> None:
    args = export_arguments(__doc__)
    warnings.filterwarnings("ignore")
    torch.manual_seed(0)
    torchvision = import_torchvision()
    if torchvision is None:
        raise SystemExit("torchvision is not installed in this Python")
    export_each(args.only or EXPORTS, lambda name: export(torchvision, name, args.out), args.out)


if __name__ == "__main__":
    main()
