"""rlx-compile: an HIR -> MIR -> LIR ML graph compiler built on xDSL."""

__version__ = "0.1.0"
