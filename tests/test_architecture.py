"""The package's shape holds: no import circle and no import from a lower layer to a higher one, with the layers
read from ARCHITECTURE.md's table (every import counts, those inside functions too)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "audioreason"
FACADE = PACKAGE  # audioreason/__init__.py re-exports for users; nothing inside imports it


def layer_map(text: str) -> dict[str, int]:
    """Package prefix -> layer number, from the rows ``| N | `pkg` `pkg2` | ... |`` of the layer table."""
    layers = {}
    for number, packages in re.findall(r"^\|\s*(\d+)\s*\|([^|]*)\|", text, re.M):
        for name in re.findall(r"`([\w.*]+)`", packages):
            layers[name] = int(number)
    return layers


def modules(root: Path) -> dict[str, Path]:
    found = {}
    for path in (root / PACKAGE).rglob("*.py"):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def import_graph(found: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the package modules it imports (``from pkg import sub`` counts as importing ``pkg.sub``)."""

    def known(name: str) -> str:
        while name not in found:
            name = name.rpartition(".")[0]
        return name

    graph = {}
    for name, path in found.items():
        here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets |= {known(a.name) for a in node.names if a.name.split(".")[0] == PACKAGE}
            elif isinstance(node, ast.ImportFrom):
                base = here[: len(here) - node.level + 1] if node.level else []
                module = ".".join(base + ([node.module] if node.module else []))
                if module.split(".")[0] != PACKAGE:
                    continue
                for alias in node.names:
                    full = f"{module}.{alias.name}"
                    targets.add(full if full in found else known(module))
        targets.discard(name)
        graph[name] = targets
    return graph


def _under(module: str, prefix: str) -> bool:
    """Whether ``module`` is ``prefix`` or inside it; a ``*`` part of ``prefix`` stands for any one name."""
    parts, wanted = module.split("."), prefix.split(".")
    return len(parts) >= len(wanted) and all(w in ("*", p) for w, p in zip(wanted, parts))


def layer_of(module: str, layers: dict[str, int]) -> int | None:
    """The layer of the longest prefix ``module`` is under (the most specific row wins)."""
    best = None
    for prefix, number in layers.items():
        if _under(module, prefix) and (best is None or len(prefix.split(".")) > len(best[0].split("."))):
            best = (prefix, number)
    return None if best is None else best[1]


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in graph:
                    continue
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def problems(graph: dict[str, set[str]], layers: dict[str, int]) -> list[str]:
    found = []
    for module, targets in sorted(graph.items()):
        own = layer_of(module, layers)
        if module != FACADE and own is None:
            found.append(f"{module} is in no layer of ARCHITECTURE.md")
        for target in sorted(targets):
            if target == FACADE and module != FACADE:
                found.append(f"{module} imports the facade {FACADE} (import the module that defines the name)")
            theirs = layer_of(target, layers)
            if module != FACADE and own is not None and theirs is not None and theirs > own:
                found.append(f"upward import: {module} (layer {own}) -> {target} (layer {theirs})")
    found += [f"import circle: {' -> '.join(c)}" for c in circles(graph)]
    return found


def test_the_package_has_no_import_circle_and_no_upward_import():
    layers = layer_map((ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8"))
    assert len(set(layers.values())) >= 10, layers
    assert problems(import_graph(modules(ROOT)), layers) == []


def test_every_layer_folder_says_what_it_holds():
    layers = layer_map((ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8"))
    for name in layers:
        init = ROOT / Path(*name.split(".")) / "__init__.py"
        if init.exists():
            doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
            assert doc and len(doc) > 80, f"{init} needs a docstring saying what the layer holds and may import"
    top = {p.stem for p in (ROOT / PACKAGE).glob("*.py")}
    assert top == {"__init__", "__main__", "version"}, f"loose modules at the package root: {top}"


@pytest.mark.parametrize(
    "graph, expected",
    [
        (
            {"audioreason.base.a": {"audioreason.text.b"}, "audioreason.text.b": set()},
            ["upward import: audioreason.base.a (layer 0) -> audioreason.text.b (layer 1)"],
        ),
        (
            {
                "audioreason.text.a": {"audioreason.text.b"},
                "audioreason.text.b": {"audioreason.text.c"},
                "audioreason.text.c": {"audioreason.text.a"},
            },
            ["import circle: audioreason.text.a -> audioreason.text.b -> audioreason.text.c"],
        ),
        (
            {"audioreason.text.a": {"audioreason"}, "audioreason": {"audioreason.text.a"}},
            [
                "audioreason.text.a imports the facade audioreason (import the module that defines the name)",
                "import circle: audioreason -> audioreason.text.a",
            ],
        ),
        ({"audioreason.elsewhere": set()}, ["audioreason.elsewhere is in no layer of ARCHITECTURE.md"]),
        ({"audioreason.text.a": {"audioreason.base.b"}, "audioreason.base.b": set()}, []),
        # A "*" row: a module under it takes that row's layer, more specific than its folder's.
        ({"audioreason.base.x.declaration": {"audioreason.text.b"}, "audioreason.text.b": set()}, []),
        (
            {"audioreason.base.x.scorer": {"audioreason.base.x.declaration"}, "audioreason.base.x.declaration": set()},
            ["upward import: audioreason.base.x.scorer (layer 0) -> audioreason.base.x.declaration (layer 1)"],
        ),
    ],
)
def test_the_check_finds_what_it_is_for(graph, expected):
    assert (
        problems(graph, {"audioreason.base": 0, "audioreason.text": 1, "audioreason.base.*.declaration": 1}) == expected
    )
