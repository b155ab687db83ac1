"""No import circle among headroom_plot's modules.

The graph counts every import of a sibling module, at the top of a file or inside a function: a
function-level import still ties the two modules together (cli dispatching to comparecli while
comparecli took its parser from cli was such a circle). Go's compiler refuses circles; this test is
Python's.
"""
from __future__ import annotations

import ast
import pathlib

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "headroom_plot"


def imports(package: pathlib.Path) -> dict[str, set[str]]:
    """Module name -> the package's modules it imports (relative or absolute, anywhere in the file)."""
    modules = {p.stem for p in package.glob("*.py")}
    graph: dict[str, set[str]] = {}
    for path in sorted(package.glob("*.py")):
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level == 0:
                    if not base.startswith(package.name + ".") and base != package.name:
                        continue
                    base = base[len(package.name) + 1:]
                if base:  # from .x import y, from headroom_plot.x import y
                    found.add(base.split(".")[0])
                else:  # from . import x, y: those names that are modules
                    found.update(a.name for a in node.names if a.name in modules)
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.startswith(package.name + "."):
                        found.add(a.name.split(".")[1])
        graph[path.stem] = {m for m in found if m in modules and m != path.stem}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected group of two or more modules (Tarjan), each as a sorted list: a circle's members."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def test_no_import_circle_among_headroom_plot_modules():
    graph = imports(PACKAGE)
    assert {"cli", "comparecli", "command", "compare", "comparesizing"} <= graph.keys()
    assert "comparecli" in graph["cli"] and "command" in graph["comparecli"]  # the graph sees function-level imports
    assert cycles(graph) == [], f"import circles among headroom_plot modules: {cycles(graph)}"


def test_cycle_finder_finds_planted_circles():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []
    assert cycles({"a": {"b"}, "b": {"a"}}) == [["a", "b"]]
    assert cycles({"x": {"y"}, "y": {"z"}, "z": {"x"}, "w": {"x"}, "p": {"q"}, "q": {"p"}}) == [["p", "q"],
                                                                                                ["x", "y", "z"]]


def test_planted_circle_in_a_package_is_found(tmp_path):
    """Two modules that import each other inside functions, as cli and comparecli did: found."""
    pkg = tmp_path / "headroom_plot"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("__version__ = '0'\n")
    (pkg / "front.py").write_text("from . import __version__\n\ndef main():\n    from . import side\n    side.run()\n")
    (pkg / "side.py").write_text("import os\n\ndef run():\n    from .front import main\n    return main\n")
    (pkg / "leaf.py").write_text("from headroom_plot import front\nimport headroom_plot.side\n")
    graph = imports(pkg)
    assert graph == {"__init__": set(), "front": {"side"}, "side": {"front"}, "leaf": {"front", "side"}}
    assert cycles(graph) == [["front", "side"]]
