"""plots._save: one drawing per figure shared by every format, pictures as savefig(bbox_inches="tight") makes.

The PNG is the figure's own Agg drawing cropped to the tight box instead of a second drawing, so it
may sit up to half a pixel off savefig's; its size and content must match, and the SVG's box exactly
(it is measured with the SVG renderer's text metrics, which differ from Agg's).
"""
from __future__ import annotations

import re

import matplotlib.image
import numpy as np
import pytest

from headroom_plot import plots
from headroom_plot.plots import plt


def _figure(spill: bool, size=(6, 4)):
    fig, ax = plt.subplots(figsize=size)
    rng = np.random.default_rng(0)
    ax.scatter(rng.uniform(0, 1, 500), rng.lognormal(0, 1, 500), s=4, rasterized=True)
    ax.set_yscale("log")
    ax.set_title("a title that stays inside", loc="left")
    ax.legend(["requests"], loc="upper left")
    if spill:  # a legend below the axes, past the figure's bottom edge (as latency_over_time's)
        ax.legend(["requests", "more"], loc="upper left", bbox_to_anchor=(0, -0.3))
    return fig


def _tight(tmp_path, spill: bool, fmt: str, size=(6, 4)) -> str:
    fig = _figure(spill, size)
    p = str(tmp_path / f"tight-{spill}.{fmt}")
    fig.savefig(p, format=fmt, bbox_inches="tight")
    plt.close(fig)
    return p


@pytest.mark.parametrize("spill", [False, True])
@pytest.mark.parametrize("size", [(6, 4), (9, 5.6), (12, 10), (7.3, 3.1)])
def test_png_matches_savefig_tight(tmp_path, spill, size):
    (ours,) = plots._save(_figure(spill, size), str(tmp_path), f"ours-{spill}", ["png"])
    a = matplotlib.image.imread(ours)
    b = matplotlib.image.imread(_tight(tmp_path, spill, "png", size))
    assert a.shape == b.shape
    # the same picture: at most half a pixel's shift of antialiased edges, so no shift by a whole
    # pixel matches much better (a crop a pixel off would)
    def off(dy, dx):
        h, w = a.shape[0] - abs(dy), a.shape[1] - abs(dx)
        return np.abs(a[max(dy, 0):][:h, max(dx, 0):][:, :w] - b[max(-dy, 0):][:h, max(-dx, 0):][:, :w]).mean()
    here = off(0, 0)
    assert here < 0.02
    assert all(here < 1.5 * off(dy, dx) for dy in (-1, 0, 1) for dx in (-1, 0, 1) if dy or dx)
    if spill:  # the legend below the figure's edge is in the picture, not cut off
        assert a.shape[0] > size[1] * 100


def _viewbox(path: str) -> list[float]:
    head = open(path, encoding="utf-8").read(2000)
    return [float(v) for v in re.search(r'viewBox="([^"]+)"', head).group(1).split()]


@pytest.mark.parametrize("spill", [False, True])
def test_svg_box_matches_savefig_tight(tmp_path, spill):
    paths = plots._save(_figure(spill), str(tmp_path), f"ours-{spill}", ["png", "svg"])
    ours, theirs = _viewbox(paths[1]), _viewbox(_tight(tmp_path, spill, "svg"))
    assert np.allclose(ours, theirs, rtol=0, atol=1e-4), (ours, theirs)  # points, as the SVG writes them


def test_one_drawing_per_figure_and_format(tmp_path, monkeypatch):
    """savefig(bbox_inches="tight") drew a figure twice per format; now once, plus once per vector format."""
    import matplotlib.figure
    draws = []
    real = matplotlib.figure.Figure.draw

    def draw(self, renderer):
        draws.append(type(renderer).__name__)
        return real(self, renderer)

    monkeypatch.setattr(matplotlib.figure.Figure, "draw", draw)
    plots._save(_figure(False), str(tmp_path), "x", ["png", "svg"])
    assert len(draws) == 2, draws


@pytest.mark.parametrize("formats", [["svg"], ["pdf", "png"], ["svg", "png", "pdf"]])
def test_any_formats_any_order(tmp_path, formats):
    """Without a PNG savefig measures and draws the SVG itself; with one, the order does not matter."""
    paths = plots._save(_figure(False), str(tmp_path), "x", formats)
    assert [p.rsplit(".", 1)[1] for p in paths] == formats
    for p in paths:
        head = open(p, "rb").read(8)
        assert head.startswith({"png": b"\x89PNG", "svg": b"<?xml", "pdf": b"%PDF"}[p.rsplit(".", 1)[1]])
    if "svg" in formats:
        svg = paths[formats.index("svg")]
        assert np.allclose(_viewbox(svg), _viewbox(_tight(tmp_path, False, "svg")), rtol=0, atol=1e-4)
    if "png" in formats:
        png = matplotlib.image.imread(paths[formats.index("png")])
        assert png.shape == matplotlib.image.imread(_tight(tmp_path, False, "png")).shape
