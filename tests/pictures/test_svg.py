"""The SVG pictures: well-formed, deterministic, every op and every buffer drawn with a
hover title, no two boxes of a layer overlapping, rectangles where the plan puts them."""

from __future__ import annotations

import itertools
import math
import random
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from examples.build_examples import decoder_block
from rlx_compile import CompilePipeline, ModuleBuilder
from rlx_compile.frontends.onnx import import_model
from rlx_compile.memory.lir_liveness import derive
from rlx_compile.pictures import graph_svg, memory_svg
from rlx_compile.pictures.svg import PANEL_H, PLOT_W, _Reach, nice_ticks

SVG = "{http://www.w3.org/2000/svg}"
RESNET = Path(__file__).resolve().parents[2] / "examples" / "models" / "resnet18.onnx"


def titled(root: ET.Element, tag: str) -> list[ET.Element]:
    return [el for el in root.iter(f"{SVG}{tag}") if el.find(f"{SVG}title") is not None]


def small_lir():  # type: ignore[no-untyped-def]
    with ModuleBuilder("layer") as m:
        x = m.input("x", (4, 16))
        w = m.input("w", (16, 16))  # no params: the arena is all computed tensors
        h = m.relu(m.matmul(x, w))
        m.output(m.add(m.exp(h), h), names=["y"])
    return CompilePipeline(target="cpu").compile(m.module)


def test_graph_svg_draws_every_op_once_without_overlaps() -> None:
    result = CompilePipeline(target="cpu").compile(import_model(RESNET))
    text = graph_svg(result.lir)
    assert text == graph_svg(result.lir)  # deterministic
    root = ET.fromstring(text)
    boxes = titled(root, "g")
    kernel = [op for op in result.lir.body.block.ops
              if op.name not in ("mir.param", "mir.constant", "lir.return")]  # fmt: skip
    assert len(boxes) == len(kernel) + 1  # + the outputs node
    rows: dict[float, list[tuple[float, float]]] = {}
    for g in boxes:
        rect = g.find(f"{SVG}rect")
        assert rect is not None
        x, w = float(rect.get("x", 0)), float(rect.get("width", 0))
        rows.setdefault(float(rect.get("y", 0)), []).append((x, x + w))
    for spans in rows.values():
        spans.sort()
        assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans))
    assert "conv" in text and "[1, 8, 16, 16] f32" in text


def title_of(el: ET.Element) -> str:
    t = el.find(f"{SVG}title")
    return "" if t is None or t.text is None else t.text


def test_fused_ops_are_one_highlighted_box() -> None:
    root = ET.fromstring(graph_svg(CompilePipeline(target="cpu").compile(decoder_block()).lir))
    fused = [g for g in titled(root, "g") if "fused_" in title_of(g)]
    assert len(fused) == 3
    assert all(g.find(f"{SVG}rect").get("fill") == "#ffd9a8" for g in fused)  # type: ignore[union-attr]


def test_memory_svg_places_every_buffer_at_its_slot() -> None:
    result = small_lir()
    graph = result.lir
    text = memory_svg(graph)
    assert text == memory_svg(graph)
    root = ET.fromstring(text)
    rects = titled(root, "rect")
    storages = derive(graph).storages
    assert len(rects) == len(storages)  # small arena: one panel
    arena = graph.arena_bytes
    for s in storages:
        (rect,) = [r for r in rects if title_of(r).startswith(s.label() + " ")]
        title = title_of(rect)
        assert f"{s.size:,} B at [{s.offset:,}, {s.end:,})" in title
        height = float(rect.get("height", 0))
        assert height == pytest.approx(max(s.size / arena * PANEL_H, 0.8), abs=0.02)
        assert 0 < float(rect.get("width", 0)) <= PLOT_W


def test_memory_svg_zooms_when_weights_dominate() -> None:
    result = CompilePipeline(target="cpu").compile(import_model(RESNET))
    root = ET.fromstring(memory_svg(result.lir))
    texts = " ".join(t.text or "" for t in root.iter(f"{SVG}text"))
    assert "whole arena" in texts and "zoom: offsets" in texts
    live = derive(result.lir)
    compute = [s for s in live.storages if s.op.name not in ("mir.param", "mir.constant")]
    # Each input and computed tensor is drawn twice (both panels).
    titles = [title_of(r) for r in titled(root, "rect")]
    for s in compute:
        assert sum(t.startswith(s.label() + " ") for t in titles) == 2


def test_nice_ticks() -> None:
    assert nice_ticks(0, 100) == [0, 20, 40, 60, 80, 100]
    assert nice_ticks(0, 7, 10) == [0, 1, 2, 3, 4, 5, 6, 7]
    ticks = nice_ticks(693_248 / 1024, 726_656 / 1024)
    assert all(re.fullmatch(r"\d+(\.0)?", str(t)) for t in ticks)
    assert ticks[0] >= 693_248 / 1024 and ticks[-1] <= 726_656 / 1024


def test_skip_edge_reach_matches_every_box_of_the_layers_passed() -> None:
    # _Reach answers "the furthest right edge among the boxes of layers a..b-1 starting
    # left of x" from O(log layers) bisections; here against a scan of every box.
    rng = random.Random(7)
    lefts, rights = [], []
    for _ in range(37):
        x, ls, rs = rng.uniform(-50, 50), [], []
        for _ in range(rng.randrange(0, 6)):
            x += rng.uniform(0, 40)
            w = rng.uniform(10, 90)
            ls.append(x)
            rs.append(x + w)
            x += w
        lefts.append(ls)
        rights.append(rs)
    reach = _Reach(lefts, rights)
    for _ in range(2000):
        a = rng.randrange(0, 38)
        b = rng.randrange(a, 38)
        x = rng.uniform(-100, 800)
        boxes = [r for k in range(a, b) for s, r in zip(lefts[k], rights[k], strict=True) if s < x]
        assert reach.furthest(a, b, x) == max(boxes, default=-math.inf)
