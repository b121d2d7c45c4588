"""Regenerate the regression models of this folder: the small exports of
``bench/wild_exports.py`` (random weights, tiny configs) on which ``bench/wild.py``
found the importer failing, each run in CI by ``tests/frontends/test_onnx_wild_models.py``
against onnxruntime at the sizes ``bench/wild.py`` lists for it.

    /work/venv-wild/bin/python tests/data/wild/make_models.py   # needs torch, transformers,
                                                                # hummingbird-ml
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
EXPORTS = Path(__file__).resolve().parents[3] / "bench" / "wild_exports.py"

# model file -> the bench/wild_exports.py function that makes it, and what it broke on
MODELS = {
    "bert_ts": ("bert_ts", "GatherElements on [1, seq]; Expand of [1, min(seq, 32)]"),
    "gpt2_past_ts": ("gpt2", "past key/values: masks over past + seq"),
    "llama_past_ts": ("llama", "grouped-query attention, rotary positions after the past"),
    "unet_ts": ("unet", "Resize to another tensor's Shape (bilinear, nearest) on H, W"),
    "unet_dynamo": ("unet", "the same through torch.export"),
    "detector_ts": ("detector", "neck concat of upsampled maps; anchors from arange(w)"),
    "detector_dynamo": ("detector", "the same through torch.export (sizes 32 * h)"),
    "sizes_as_data_ts": ("sizes_as_data", "Trilu of [seq, seq]; Range; x.size(1) as data"),
    "sizes_as_data_dynamo": ("sizes_as_data", "the same through torch.export"),
    "wav2vec2_ts": ("wav2vec2", "Conv1d feature extractor over symbolic samples"),
    "hb_forest_trav": ("hummingbird", "GatherElements over a symbolic batch"),
    "hb_gbdt_perf": ("hummingbird", "the same, perf_tree_trav"),
}


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        only = sorted({fn for fn, _ in MODELS.values()})
        cmd = [
            sys.executable,
            str(EXPORTS),
            "--out",
            tmp,
            *(a for f in only for a in ("--only", f)),
        ]
        subprocess.run(cmd, check=True)
        for name in MODELS:
            shutil.copy(Path(tmp) / f"{name}.onnx", HERE / f"{name}.onnx")
            print(name, (HERE / f"{name}.onnx").stat().st_size, "bytes")


if __name__ == "__main__":
    main()
