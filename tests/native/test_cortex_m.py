"""Cortex-M4F under QEMU: small CNN and keyword-spotting models, f32 and int8, built with
arm-none-eabi-gcc (newlib-nano, no heap; weights in flash, the arena in RAM), run on
mps2-an386 through semihosting; outputs match the host build of the same kernel program,
and the RAM is the planner's arena plus the IO buffers, up to the stack."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rlx_compile import env, parse_module
from rlx_compile.native import build
from rlx_compile.native.cortex_m import missing_tools, random_weights_compile, run_on_cortex_m

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MISSING = missing_tools()
if MISSING is not None and env.flag("REQUIRE_CROSS"):  # CI installs them: absent is a failure
    raise RuntimeError(f"RLX_REQUIRE_CROSS is set but cortex-m cannot run: {MISSING}")
pytestmark = pytest.mark.skipif(MISSING is not None, reason=f"cortex-m: {MISSING}")


def compile_example(name: str, quantize: bool):
    return random_weights_compile(parse_module((EXAMPLES / f"{name}.mlir").read_text()),
                                  quantize=quantize)  # fmt: skip


@pytest.mark.parametrize("quantize", [False, True], ids=["f32", "int8"])
@pytest.mark.parametrize("name", ["small_cnn", "kws_dscnn"])
def test_cortex_m_under_qemu_matches_the_host(name: str, quantize: bool) -> None:
    result, params, feeds = compile_example(name, quantize)
    if quantize:
        assert any(op.name.startswith("mir.integer_") for op in result.lir.walk())
    mcu = run_on_cortex_m(result.lir, params, feeds)
    host = build(result.lir, target="cortex-m").run(feeds, params)
    for key, want in host.items():
        got = mcu.outputs[key]
        assert got.shape == want.shape and got.dtype == want.dtype
        assert float(np.abs(got - want).max()) <= 1e-5 * float(np.abs(want).max())
    program = mcu.program
    # no im2col: convolutions run direct, with at most an int32 plane (int8) of scratch
    assert program.scratch <= program.planned_arena // 8
    io = sum(-(-t.nbytes // 64) * 64 for t in (*program.inputs, *program.outputs))
    # RAM: the arena and the IO buffers, a few statics more, then the stack
    others = mcu.size.static_ram - program.arena_bytes - io
    assert 0 <= others <= 512, others
    assert 0 < mcu.stack_bytes < 16384
    # flash: the weights (in .rodata) and the kernels the graph calls
    assert program.weights_bytes < mcu.size.flash < program.weights_bytes + 160_000


def test_emit_c_for_cortex_m_is_the_mcu_bundle(tmp_path: Path) -> None:
    """``rlx-compile --target cortex-m --emit c``: weights as a const array, the QEMU
    runner, startup code, linker script and a cross Makefile; the image built from those
    files runs."""
    from rlx_compile.native.cortex_m import build_elf, run_qemu
    from rlx_compile.native.model import pack_weights
    from tests.tools.test_rlx_compile import rlx_compile

    result, params, feeds = compile_example("kws_dscnn", False)
    np.savez(tmp_path / "w.npz", **params)
    out = tmp_path / "out"
    r = rlx_compile(str(EXAMPLES / "kws_dscnn.mlir"), "--target", "cortex-m", "--emit", "c",
                    "--params", str(tmp_path / "w.npz"), "--out", str(out))  # fmt: skip
    assert r.returncode == 0, r.stderr
    bundle = out / "c"
    files = {
        p.relative_to(bundle).as_posix(): p.read_bytes() for p in bundle.rglob("*") if p.is_file()
    }
    assert {"Makefile", "main.c", "startup.c", "mps2_an386.ld", "weights.c",
            "rlx_kws_dscnn.c", "rlx_kws_dscnn.h"} <= set(files)  # fmt: skip
    assert "weights.bin" not in files  # the weights are in flash
    assert b"arm-none-eabi-gcc" in files["Makefile"] and b"mps2-an386" in files["Makefile"]
    from rlx_compile.native import program_of

    program = program_of(result.lir, "cortex-m")
    first = "".join(f"\\x{b:02x}" for b in pack_weights(program, params).tobytes()[:64])
    assert first in files["weights.c"].decode()
    run = run_qemu(build_elf(files, tmp_path / "image"), program, feeds)
    host = build(result.lir, target="cortex-m").run(feeds, params)
    np.testing.assert_allclose(run.outputs["logits"], host["logits"], rtol=1e-5, atol=1e-5)
