"""Model importers: other formats to MIR modules.

- ``rlx_compile.frontends.onnx``: ONNX models (``import_model``).
"""
