"""Every import the README, the docs pages, ARCHITECTURE.md and the metric and dataset cards show works as shown."""

from __future__ import annotations

import importlib
import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted(
    [
        ROOT / "README.md",
        ROOT / "ARCHITECTURE.md",
        *ROOT.glob("docs/**/*.md"),
        *ROOT.glob("metrics/*/README.md"),
        *ROOT.glob("datasets_scripts/*/README.md"),
    ]
)
# "from audioreason.x import a, b as c" (on one line, or parenthesized over several) and "import audioreason.x"
FROM = re.compile(r"^[ \t>]*from (audioreason[\w.]*) import (\([^)]*\)|[\w, ]+)", re.M)
PLAIN = re.compile(r"^[ \t>]*import (?:[\w.]+, )*(audioreason[\w.]*)\b", re.M)


def shown_imports() -> list[tuple[str, str, str]]:
    found = set()
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        where = page.relative_to(ROOT).as_posix()
        for module, names in FROM.findall(text):
            for piece in names.strip("()").split(","):
                if piece.split():
                    found.add((where, module, piece.split()[0]))  # "a as b": the name imported is a
        found |= {(where, module, "") for module in PLAIN.findall(text)}
    return sorted(found)


IMPORTS = shown_imports()


def test_the_readme_the_docs_and_the_cards_show_imports():
    pages = {page for page, _, _ in IMPORTS}
    assert "README.md" in pages and sum(p.startswith("metrics/") for p in pages) >= 3, pages
    assert sum(p.startswith("docs/") for p in pages) >= 5, pages


@pytest.mark.parametrize("page, module, name", IMPORTS)
def test_a_shown_import_works(page, module, name):
    imported = importlib.import_module(module)
    if name:
        assert hasattr(imported, name) or importlib.util.find_spec(f"{module}.{name}") is not None, (
            f"{page}: `from {module} import {name}` fails"
        )
