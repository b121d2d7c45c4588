"""Real architectures end to end: the small ONNX exports committed in examples/models
(``make_models.py`` builds them with PyTorch) are imported, compiled for cpu and run in
their arena; the outputs (and the imported MIR's) match onnxruntime within 1e-4 of the
output's scale, and the arena executor gives exactly what the reference executor gives
on the MIR the plan was made from."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from rlx_compile import CompilePipeline
from rlx_compile.dialects import mir
from rlx_compile.frontends.onnx import import_model, param_values
from rlx_compile.interpreter import run

MODELS = Path(__file__).resolve().parents[2] / "examples" / "models"
NAMES = ["resnet18", "resnet50", "mobilenetv2", "vit", "llama", "bert"]


def model_input(model: onnx.ModelProto, seed: int = 0) -> tuple[str, np.ndarray]:
    (vi,) = model.graph.input
    shape = [d.dim_value for d in vi.type.tensor_type.shape.dim]
    rng = np.random.default_rng(seed)
    if vi.type.tensor_type.elem_type == onnx.TensorProto.INT64:  # token ids
        return vi.name, rng.integers(0, 256, shape).astype(np.int64)
    return vi.name, rng.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("name", NAMES)
def test_model_matches_onnxruntime_and_the_reference(name: str) -> None:
    path = MODELS / f"{name}.onnx"
    model = onnx.load(str(path))
    module = import_model(model)
    params = param_values(model, module)
    result = CompilePipeline(target="cpu").compile(module)
    assert result.lir is not None  # planned: the run below is the arena executor's

    input_name, x = model_input(model)
    got = result.run({input_name: x}, params)["logits"]
    want = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(
        None, {input_name: x}
    )[0]
    assert got.shape == want.shape and got.dtype == want.dtype
    scale = float(np.abs(want).max())
    assert float(np.abs(got - want).max()) <= 1e-4 * scale

    # The arena executor runs the planned LIR exactly as the reference executor runs the
    # MIR it was planned from (the module right before plan-memory).
    names = [s.pass_spec.split("{")[0] for s in result.stages]
    planned_from = result.stages[names.index("plan-memory") - 1].module
    reference = run(planned_from, {input_name: x}, params)["logits"]
    np.testing.assert_array_equal(got, reference)
    imported = run(module, {input_name: x}, params)["logits"]
    assert float(np.abs(imported - want).max()) <= 1e-4 * scale


def test_models_are_small_enough_to_commit() -> None:
    sizes = {p.name: p.stat().st_size for p in MODELS.glob("*.onnx")}
    assert sorted(sizes) == sorted(f"{n}.onnx" for n in NAMES)
    assert sum(sizes.values()) < 4_000_000


def test_readme_onnx_example_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(MODELS.parents[1])  # the example's paths are relative to the repo
    readme = (MODELS.parents[1] / "README.md").read_text()
    section = readme[readme.index("## ONNX models") :]
    code = section[section.index("```python") + len("```python") : section.index("```\n\n")]
    scope: dict[str, object] = {}
    exec(compile(code, "README.md", "exec"), scope)
    assert scope["logits"].shape == (1, 10)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("name", "bound", "fused"),
    [
        ("llama", False, {"rms_norm": 5, "residual_rms_norm": 4, "attention": 2}),
        # Bound initializers make the cos/sin tables and the causal mask constants: the
        # ropes fuse, the mask is recognised as causal, and the attention blocks form.
        ("llama", True, {"rms_norm": 5, "rope": 4, "attention": 2, "attention_block": 2}),
        ("vit", False, {"attention": 2, "gelu": 2, "residual_layer_norm": 5}),
    ],
    ids=["llama", "llama-bound", "vit"],
)
def test_exported_idioms_fuse(name: str, bound: bool, fused: dict[str, int]) -> None:
    """The RMSNorm, RoPE and attention decompositions of the exports are recognised (and
    the numbers still match onnxruntime)."""
    path = MODELS / f"{name}.onnx"
    model = onnx.load(str(path))
    module = import_model(model)
    params = param_values(model, module)
    result = CompilePipeline(target="cpu", param_bindings=params if bound else None).compile(module)
    report = result.fusion_report
    assert report is not None
    assert {k: report.count(k) for k in fused} == fused
    # As params, the llama's cos/sin tables may have unequal halves: rope is a near miss.
    unbound_llama = name == "llama" and not bound
    assert [m.pattern for m in report.missed] == (["rope"] * 4 if unbound_llama else [])
    if bound:
        kinds = {op.props().enum("mask_kind").value for op in result.lir.walk()  # type: ignore[union-attr]
                 if isinstance(op, mir.FusedAttentionBlockOp)}  # fmt: skip
        assert kinds == {"causal"}
    input_name, x = model_input(model)
    got = result.run({input_name: x}, {} if bound else params)["logits"]
    want = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(
        None, {input_name: x}
    )[0]
    assert float(np.abs(got - want).max()) <= 1e-4 * float(np.abs(want).max())
