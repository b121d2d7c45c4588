"""Every target: the decoder block and the small CNN go through fuse -> legalize and the
reference executor gives the same outputs as before; the result holds only ops the
target claims (and allows in that form)."""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import ModuleOp

from examples.build_examples import decoder_block, small_cnn
from rlx_compile.fusion import FusionReport
from rlx_compile.interpreter import run
from rlx_compile.legalization import KernelDispatchReport
from rlx_compile.targets import TARGET_NAMES
from tests.fusion.helpers import (
    apply,
    assert_close,
    assert_exact,
    illegal_ops,
    op_names,
    target_pipeline,
)
from tests.transforms.test_lowering_numeric import random_feeds

BUILDS = {"decoder_block": decoder_block, "small_cnn": small_cnn}
_LOWERED: dict[tuple[str, str], ModuleOp] = {}


def lowered(example: str, policy: str) -> ModuleOp:
    key = (example, policy)
    if key not in _LOWERED:
        hir = BUILDS[example](policy=policy)
        _LOWERED[key], _ = apply(hir, "lower-hir-to-mir,canonicalize,cse,dce")
    return _LOWERED[key]


@pytest.mark.parametrize("target", TARGET_NAMES)
@pytest.mark.parametrize("policy", ["direct", "fusable"])
@pytest.mark.parametrize("example", list(BUILDS))
def test_fuse_then_legalize_keeps_outputs(example: str, policy: str, target: str) -> None:
    before = lowered(example, policy)
    inputs, params = random_feeds(before, seed=3)
    after, reports = apply(before, target_pipeline(target))
    assert illegal_ops(after, target) == []
    got, want = run(after, inputs, params), run(before, inputs, params)
    if example == "small_cnn":
        # Conv/matmul fusions and regions compose the same kernels; the pooled mean over
        # [2, 3] becomes a mean over the merged trailing axis: no arithmetic changes.
        assert_exact(got, want)
    else:
        assert_close(got, want)
    fusion = [r for r in reports if isinstance(r, FusionReport)]
    dispatch = [r for r in reports if isinstance(r, KernelDispatchReport)]
    assert len(fusion) == 1 and len(dispatch) == 1
    assert dispatch[0].compile_ready


def test_fusable_decoder_on_cpu_fuses_to_the_direct_form() -> None:
    """Fusion rebuilds exactly the ops direct lowering emits, so the two compile alike."""
    direct, _ = apply(lowered("decoder_block", "direct"), target_pipeline("cpu"))
    fused, reports = apply(lowered("decoder_block", "fusable"), target_pipeline("cpu"))
    assert op_names(fused) == op_names(direct)
    report = reports[0]
    assert isinstance(report, FusionReport)
    assert {k: v.count for k, v in report.fused.items()} == {
        "attention_block": 1,
        "residual_rms_norm": 1,
        "swiglu": 1,
    }
    assert report.missed == []


@pytest.mark.parametrize("target", ["cuda", "cortex-m"])
def test_cnn_conv_fusion_is_exact(target: str) -> None:
    """The fused conv computes conv -> add bias -> relu with the same kernels, and the
    fused matmul likewise: no arithmetic changed, so the outputs are bit-identical."""
    before = lowered("small_cnn", "fusable")
    inputs, params = random_feeds(before)
    after, _ = apply(before, target_pipeline(target))
    assert op_names(after).count("mir.fused_conv_bias_act") == 2
    assert_exact(run(after, inputs, params), run(before, inputs, params))


@pytest.mark.parametrize("target", ["rocm", "tpu"])
def test_cnn_regions_are_exact(target: str) -> None:
    """rocm/tpu have no fused conv: the bias add and relu become elementwise regions,
    whose meaning is their body."""
    before = lowered("small_cnn", "fusable")
    inputs, params = random_feeds(before)
    after, _ = apply(before, target_pipeline(target))
    assert op_names(after).count("mir.elementwise_region") == 2
    assert_exact(run(after, inputs, params), run(before, inputs, params))


def test_legalizing_fused_ops_is_exact() -> None:
    """Decomposing the fused ops of the direct decoder back into primitives (a claim
    set without them) reproduces the executor's definition of each, bit for bit."""
    from rlx_compile.targets.base import PRIMITIVES

    before = lowered("decoder_block", "direct")
    inputs, params = random_feeds(before)
    claims = ",".join(f'"{c}"' for c in sorted(PRIMITIVES))
    after, _ = apply(before, f"legalize{{claims={claims}}}")
    assert not [n for n in op_names(after) if "fused" in n]
    assert_exact(run(after, inputs, params), run(before, inputs, params))
