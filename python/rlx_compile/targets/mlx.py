"""mlx: Apple's MLX arrays; RLX gives it Metal's tables (claims, limits, region policy)."""

from dataclasses import replace

from rlx_compile.targets import metal

TARGET = replace(metal.TARGET, name="mlx", description="Apple GPUs through MLX")
