"""Models at opsets 7-12 for tests/frontends/test_onnx_old_opsets.py.

    python tests/data/old_opsets/make_old_opset_models.py node    # onnx + onnxruntime
    python tests/data/old_opsets/make_old_opset_models.py torch   # needs torch (CPU)

``node``: onnx's node tests run backwards through its version converter, to each older
opset where an op of the test changes definition, as far as the converter goes
(integer inputs that are the same in every data set -- axes, shapes, pads -- become
initializers first: the old definitions take them as attributes). A converted model is
kept when onnxruntime, running it, still gives the test's expected outputs; it is
written with those inputs and outputs (``<test>@<opset>.onnx`` / ``.npz``).

``torch``: small networks exported by torch's TorchScript exporter at opsets 7-12 (as
the models of those years were made), random weights from a fixed seed; the test runs
them against onnxruntime on random inputs.
"""

from __future__ import annotations

import argparse
import io
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import numpy_helper, version_converter

HERE = Path(__file__).resolve().parent
MAX_BYTES = 200_000


def _bake_constant_int_inputs(model: onnx.ModelProto, data: list[Any]) -> tuple[Any, list[Any]]:
    inits = {t.name for t in model.graph.initializer}
    names = [i.name for i in model.graph.input if i.name not in inits]
    bake: dict[str, tuple[int, np.ndarray]] = {}
    for k, name in enumerate(names):
        values = [_array(ins[k]) for ins, _ in data if k < len(ins)]
        if not values or not all(isinstance(v, np.ndarray) for v in values):
            continue
        first = values[0]
        if (
            first.dtype.kind in "iu"
            and first.size <= 16
            and all(np.array_equal(v, first) for v in values)
        ):
            bake[name] = (k, first)
    if not bake:
        return model, data
    out = onnx.ModelProto()
    out.CopyFrom(model)
    kept = [i for i in out.graph.input if i.name not in bake]
    del out.graph.input[:]
    out.graph.input.extend(kept)
    out.graph.initializer.extend(numpy_helper.from_array(v, n) for n, (_, v) in bake.items())
    dropped = {k for k, _ in bake.values()}
    data = [([v for j, v in enumerate(ins) if j not in dropped], outs) for ins, outs in data]
    return out, data


def _array(v: Any) -> Any:
    return numpy_helper.to_array(v) if isinstance(v, onnx.TensorProto) else v


def _ort_matches(model: onnx.ModelProto, data: list[Any], rtol: float, atol: float) -> bool:
    import onnxruntime as ort

    try:
        session = ort.InferenceSession(
            model.SerializeToString(), providers=["CPUExecutionProvider"]
        )
        names = [i.name for i in session.get_inputs()]
        for ins, outs in data:
            got = session.run(None, dict(zip(names, (_array(v) for v in ins), strict=True)))
            for g, e in zip(got, outs, strict=True):
                np.testing.assert_allclose(g, _array(e), rtol=rtol, atol=atol)
    except Exception:
        return False
    return True


def node_tests(out_dir: Path) -> None:
    import onnxruntime as ort
    from onnx.backend.test.loader import load_model_tests

    from rlx_compile.frontends.onnx.context import DEFAULT_DOMAINS, opset_versions
    from rlx_compile.frontends.onnx.upgrade import outdated, walk

    ort.set_default_logger_severity(3)
    out_dir.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = load_model_tests(kind="node")
    written = 0
    for case in cases:
        model = case.model
        opset = opset_versions(model.opset_import).get("")
        if opset is None or opset < 13 or case.data_sets is None:
            continue
        if any(n.domain not in DEFAULT_DOMAINS for n in walk(model.graph)):
            continue
        model, data = _bake_constant_int_inputs(model, list(case.data_sets))
        seen: set[bytes] = set()
        for target in range(12, 6, -1):
            if not any(outdated(n, target, 13) for n in walk(model.graph)):
                continue  # the same definitions as at 13: nothing old to test
            try:
                old = version_converter.convert_version(model, target)
            except Exception:
                break  # the converter cannot go further down
            key = old.graph.SerializeToString()
            if key in seen or not _ort_matches(old, data, case.rtol, case.atol):
                continue
            seen.add(key)
            stem = f"{case.name}@{target}"
            arrays: dict[str, np.ndarray] = {
                "rtol": np.array(case.rtol), "atol": np.array(case.atol)
            }  # fmt: skip
            inputs = [
                i.name
                for i in old.graph.input
                if i.name not in {t.name for t in old.graph.initializer}
            ]
            for k, (ins, outs) in enumerate(data):
                for name, v in zip(inputs, ins, strict=True):
                    arrays[f"{k}/in/{name}"] = _array(v)
                for j, v in enumerate(outs):
                    arrays[f"{k}/out/{j}"] = _array(v)
            np.savez_compressed(out_dir / f"{stem}.npz", **arrays)
            if (out_dir / f"{stem}.npz").stat().st_size > MAX_BYTES:
                (out_dir / f"{stem}.npz").unlink()  # large random data: not for the repo
                continue
            onnx.save(old, str(out_dir / f"{stem}.onnx"))
            written += 1
    print(f"{written} node-test models at old opsets in {out_dir}")


def torch_models(out_dir: Path) -> None:
    import torch
    from torch import nn

    out_dir.mkdir(parents=True, exist_ok=True)

    class Cnn(nn.Module):
        """Conv, BatchNorm, ReLU, MaxPool, nearest and bilinear upsampling, a skip concat,
        padding, Dropout (eval), global pooling, Flatten, Linear, Softmax."""

        def __init__(self) -> None:
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU())
            self.down = nn.Sequential(nn.MaxPool2d(2), nn.Conv2d(8, 8, 3, padding=1), nn.ReLU())
            self.pad = nn.ZeroPad2d((1, 0, 0, 1))
            self.head = nn.Sequential(nn.Dropout(0.3), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                                      nn.Linear(16, 5), nn.Softmax(dim=1))  # fmt: skip
            self.mode = "nearest"

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            a = self.stem(x)
            b = nn.functional.interpolate(self.down(a), scale_factor=2.0, mode=self.mode)
            c = torch.cat([a, b], dim=1)
            return self.head(self.pad(c)[:, :, :-1, 1:])

    class Recurrent(nn.Module):
        """An embedding, a 2-layer LSTM, a GRU, a linear read-out and LogSoftmax. The
        initial states are inputs (without them the exporter writes the experimental
        ConstantFill below opset 9)."""

        def __init__(self) -> None:
            super().__init__()
            self.emb = nn.Embedding(20, 8)
            self.lstm = nn.LSTM(8, 12, num_layers=2, batch_first=True)
            self.gru = nn.GRU(12, 6, batch_first=True)
            self.out = nn.Linear(6, 4)

        def forward(self, tokens: torch.Tensor, h0: torch.Tensor, c0: torch.Tensor,
                    g0: torch.Tensor) -> torch.Tensor:  # fmt: skip
            h, _ = self.lstm(self.emb(tokens), (h0, c0))
            g, _ = self.gru(h, g0)
            return torch.log_softmax(self.out(g[:, -1]), dim=-1)

    class Attention(nn.Module):
        """Layer norm, multi-head self-attention by hand (reshape/transpose/split of
        heads, scaled matmul, softmax on the last axis), GELU MLP (tanh form: Erf came at
        opset 9), residuals."""

        def __init__(self, dim: int = 16, heads: int = 2) -> None:
            super().__init__()
            self.heads = heads
            self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
            self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
            self.mlp = nn.Sequential(nn.Linear(dim, 32), nn.GELU("tanh"), nn.Linear(32, dim))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            b, s, d = x.shape
            q, k, v = self.qkv(self.norm1(x)).chunk(3, dim=-1)
            split = [
                t.reshape(b, s, self.heads, d // self.heads).transpose(1, 2) for t in (q, k, v)
            ]
            att = torch.softmax(
                split[0] @ split[1].transpose(-1, -2) / (d // self.heads) ** 0.5, -1
            )
            y = (att @ split[2]).transpose(1, 2).reshape(b, s, d)
            x = x + self.proj(y)
            return x + self.mlp(self.norm2(x))

    torch.manual_seed(0)
    # Below opset 9 the exporter writes ops that opset lacks (Upsample with sizes it
    # cannot give): those models are not made (it says so).
    nets: dict[str, tuple[nn.Module, tuple[torch.Tensor, ...]]] = {
        "cnn_nearest": (Cnn(), (torch.randn(1, 3, 8, 8),)),
        "cnn_bilinear": (Cnn(), (torch.randn(1, 3, 8, 8),)),
        "recurrent": (
            Recurrent(),
            (
                torch.randint(0, 20, (2, 5)),
                torch.zeros(2, 2, 12),
                torch.zeros(2, 2, 12),
                torch.zeros(1, 2, 6),
            ),
        ),
        "attention": (Attention(), (torch.randn(2, 4, 16),)),
    }
    nets["cnn_bilinear"][0].mode = "bilinear"  # type: ignore[union-attr]
    for name, (net, args) in nets.items():
        net.eval()
        for m in net.modules():  # non-trivial batch-norm statistics
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 1.5)
        for opset in range(7, 13):
            buf = io.BytesIO()
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    torch.onnx.export(net, args, buf, dynamo=False, opset_version=opset)
            except Exception as err:  # an op the exporter has no form for at this opset
                print(f"{name} at opset {opset}: not exported ({str(err).splitlines()[0][:80]})")
                continue
            path = out_dir / f"{name}_opset{opset}.onnx"
            path.write_bytes(buf.getvalue())
            assert path.stat().st_size < MAX_BYTES, path
            print(f"{path.name}: {path.stat().st_size} bytes")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=("node", "torch"))
    args = ap.parse_args()
    if args.what == "node":
        node_tests(HERE / "node")
    else:
        torch_models(HERE / "torch")


if __name__ == "__main__":
    main()
