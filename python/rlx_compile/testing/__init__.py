"""Helpers for tests and benchmarks: random graphs and generated models."""
