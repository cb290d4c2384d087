"""The repository stands alone: the benchmark metadata the tests read ships in tests/data with its licence
notes, and no file points at a folder outside the repository."""

import hashlib
import json
import os
import re
from pathlib import Path

from fixtures.data_helpers import DATA, FIXTURES, mmar_records, mmau_records

ROOT = Path(__file__).resolve().parents[1]

# What each shipped file holds, counted from its content.
ITEM_COUNTERS = {
    "MMAR-meta.jsonl": lambda text: sum(1 for line in text.splitlines() if line.strip()),
    "mmau-test-mini.json": lambda text: len(json.loads(text)),
    "audioset_ontology.json": lambda text: len(json.loads(text)),
}
LICENCES = {
    "MMAR-meta.jsonl": "CC BY-NC 4.0",
    "mmau-test-mini.json": "CC BY-NC 4.0",
    "audioset_ontology.json": "CC BY-SA 4.0",
}


def readme_table() -> dict[str, dict[str, str]]:
    """The rows of tests/data/README.md's table, by file name."""
    rows = {}
    for line in (DATA / "README.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip().strip("`") for c in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[0] not in ("file", "---"):
            rows[cells[0]] = dict(zip(("what", "items", "licence", "sha256"), cells[1:]))
    return rows


def test_every_shipped_data_file_is_listed_with_its_licence_and_checksum():
    table = readme_table()
    shipped = sorted(p.name for p in DATA.iterdir() if p.is_file() and p.name != "README.md")  # imports/: its own
    assert shipped == sorted(table) == sorted(ITEM_COUNTERS)
    for name in shipped:
        data = (DATA / name).read_bytes()
        assert hashlib.sha256(data).hexdigest() == table[name]["sha256"], name
        assert ITEM_COUNTERS[name](data.decode("utf-8")) == int(table[name]["items"]), name
        assert table[name]["licence"] == LICENCES[name], name
    assert [int(table[n]["items"]) for n in ("MMAR-meta.jsonl", "mmau-test-mini.json", "audioset_ontology.json")] == [
        1000,
        1000,
        632,
    ]
    text = (DATA / "README.md").read_text(encoding="utf-8")
    for attribution in (
        "https://github.com/ddlBoJack/MMAR",
        "https://sakshi113.github.io/mmau_homepage/",
        "https://github.com/audioset/ontology",
        "Gemmeke",
    ):
        assert attribution in text


def test_fixture_subsets_are_records_of_the_shipped_files():
    lines = (DATA / "MMAR-meta.jsonl").read_text("utf-8").splitlines()
    mmar = {r["id"]: r for r in (json.loads(line) for line in lines if line.strip())}
    mmau = {r["id"]: r for r in json.loads((DATA / "mmau-test-mini.json").read_text("utf-8"))}
    demo_file = ROOT / "audioreason" / "resources" / "demo" / "mmar_sample.jsonl"
    demo = [json.loads(line) for line in demo_file.read_text("utf-8").splitlines() if line.strip()]
    assert (len(mmar_records()), len(mmau_records()), len(demo)) == (18, 25, 12)
    assert all(mmar[r["id"]] == r for r in mmar_records() + demo)
    assert all(mmau[r["id"]] == r for r in mmau_records())
    assert FIXTURES == ROOT / "tests" / "fixtures"


# A path out of the repository into the developers' folder: "../" or "/work/" before it, a quoted path
# component, or one of its known subfolders and files.
OUTSIDE = re.compile(
    r"(?:\.\.|/work)/(?=shared\b)"
    r"|[\"']shared[\"']\s*/|/\s*[\"']shared[\"']"
    r"|\bshared/(?=(?:data|seeds|hooks|DESIGN\.md|ENVIRONMENT\.md|WEIGHTS\.md)\b)"
)
# Files other engineers are rewriting in parallel (issue 10, "The project stands alone"): they remove their
# own mentions. This set must be empty once their branches are merged.
SKIPPED_DIRS = {"__pycache__", "build", "dist", "demo_output"}


def repository_files():
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [
            d
            for d in dirs
            if d not in SKIPPED_DIRS and not d.endswith(".egg-info") and (not d.startswith(".") or d == ".ci")
        ]
        for name in files:
            yield Path(folder, name)


def test_the_pattern_finds_every_form_of_the_outside_path():
    folder = "shared"  # spelled apart so that this file does not match its own pattern
    for line in (
        f"see `../{folder}/seeds/001_x.txt`",
        f'Path("/work/{folder}/data/x.json")',
        f'Path(__file__).parents[2] / "{folder}" / "data"',
        f"root.parent / '{folder}/data/MMAR-meta.jsonl'",
        f"(see {folder}/ENVIRONMENT.md)",
    ):
        assert OUTSIDE.search(line), line
    for line in ("2 shared cores", "code shared by the builders", "a shared/ folder", "shared_cache = 1"):
        assert not OUTSIDE.search(line), line


def test_no_file_points_outside_the_repository():
    found = []
    for path in repository_files():
        relative = path.relative_to(ROOT).as_posix()
        text = path.read_bytes().decode("utf-8", errors="replace")
        found += [
            f"{relative}:{n}: {line.strip()}" for n, line in enumerate(text.splitlines(), 1) if OUTSIDE.search(line)
        ]
    assert found == []
