"""Cortex-M4F flash and RAM per model, f32 and int8, measured under QEMU (mps2-an386).

    python bench/cortex_m.py

For each model the cortex-m kernel program is built with arm-none-eabi-gcc
(``rlx_compile.native.cortex_m``; newlib-nano, no heap, unused kernels dropped) and run
once: flash is text + data of the image (code, constants, the weights), RAM its .data +
.bss (the planned arena, per-op scratch, the input/output buffers) plus the stack's
measured high-water mark. The planner's arena is printed beside it, with what the RAM
holds beyond arena and IO ("other"), and the largest difference from the host build.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from rlx_compile import parse_module
from rlx_compile.native import build
from rlx_compile.native.cortex_m import missing_tools, random_weights_compile, run_on_cortex_m

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
MODELS = ["small_cnn", "kws_dscnn"]


def main() -> int:
    missing = missing_tools()
    if missing:
        print(f"cortex-m: {missing}")
        return 1
    print(
        f"{'model':<11} {'type':<5} {'flash B':>8} {'weights B':>9} {'RAM B':>8} "
        f"{'arena B':>8} {'scratch B':>9} {'IO B':>6} {'stack B':>7} {'other B':>7} {'vs host':>8}"
    )
    for name in MODELS:
        for quantize in (False, True):
            module = parse_module((EXAMPLES / f"{name}.mlir").read_text())
            result, params, feeds = random_weights_compile(module, quantize=quantize)
            mcu = run_on_cortex_m(result.lir, params, feeds)
            host = build(result.lir, target="cortex-m").run(feeds, params)
            diff = max(
                float(np.abs(mcu.outputs[k] - v).max() / max(np.abs(v).max(), 1e-30))
                for k, v in host.items()
            )
            p = mcu.program
            io = sum(-(-t.nbytes // 64) * 64 for t in (*p.inputs, *p.outputs))
            other = mcu.size.static_ram - p.arena_bytes - io
            print(
                f"{name:<11} {'int8' if quantize else 'f32':<5} {mcu.size.flash:>8} "
                f"{p.weights_bytes:>9} {mcu.ram_bytes:>8} {p.planned_arena:>8} {p.scratch:>9} "
                f"{io:>6} {mcu.stack_bytes:>7} {other:>7} {diff:>8.1e}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
