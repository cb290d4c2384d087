"""Commands that read only text import none of the heavy libraries (issue 31: `audioreason score --scorers
accuracy` on 1,000 imported MMAR rows spent most of its 6.6 s importing torch, torchcodec and datasets for a
string match). Each command runs in a process of its own (pytest's process has imported them all already), in
a wrapper that runs it and writes at exit every top-level module it loaded. The data: the first 5 MMAR
records of tests/fixtures/mmar_subset.jsonl as a raw folder of metadata alone, and tests/data/imports'
mmar_results.jsonl, whose official accuracy test_import.py works out by hand (3 of 5).

The times and memory are benchmarks/text_commands.py's (docs/speed.md); no test is timed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fixtures.data_helpers import DATA, mmar_records, write_mmar_raw

from audioreason.cli import main

ROOT = Path(__file__).resolve().parents[1]
# What a string match must not pay for: the model, audio and dataset libraries.
HEAVY = {
    "torch",
    "torchcodec",
    "datasets",
    "transformers",
    "gradio",
    "sentence_transformers",
    "accelerate",
    "evaluate",
    "pyarrow",
    "pandas",
    "soundfile",
    "huggingface_hub",
}
# Run in the child: ``CODE`` (Python) or the CLI's arguments; the loaded top-level modules go to ``MODULES``.
WRAPPER = """
import atexit, json, os, sys
atexit.register(lambda: open(os.environ["MODULES"], "w").write(json.dumps(sorted({m.split(".")[0]
                                                                                  for m in sys.modules}))))
if os.environ.get("CODE"):
    exec(os.environ["CODE"])
else:
    from audioreason.cli import main
    sys.exit(main(sys.argv[1:]))
"""


def loaded(tmp_path: Path, *argv, code: str = "") -> set[str]:
    """The top-level modules a command loaded, once it exited with status 0."""
    modules = tmp_path / "modules.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "MODULES": str(modules), "CODE": code}
    done = subprocess.run(
        [sys.executable, "-c", WRAPPER, *map(str, argv)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return set(json.loads(modules.read_text()))


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A metadata-only raw MMAR folder and two scored runs imported into it (in this process)."""
    base = tmp_path_factory.mktemp("light")
    records = mmar_records()[:5]
    data = write_mmar_raw(base / "mmar", records, skip_audio=[r["id"] for r in records])
    for name in ("a", "b"):
        for argv in (
            [
                "import",
                "mmar",
                DATA / "imports" / "mmar_results.jsonl",
                "--benchmark",
                "mmar",
                "--data",
                data,
                "--out",
                base / name,
                "--model",
                f"model-{name}",
            ],
            ["score", base / name, "--scorers", "accuracy", "--no-progress"],
        ):
            assert main([str(a) for a in argv]) == 0
    return data, base / "a", base / "b"


def official_accuracy(run: Path) -> tuple[int, int]:
    (entry,) = json.loads((run / "results.json").read_text())["scorers"]["accuracy"]["results"]
    return entry["official_scorer_correct"], entry["n"]


def test_help_imports_no_heavy_library(tmp_path):
    assert not loaded(tmp_path, "--help") & (HEAVY | {"scipy", "numpy"})


def test_import_reads_the_benchmark_without_datasets(tmp_path, runs):
    data, _, _ = runs
    modules = loaded(
        tmp_path,
        "import",
        "mmar",
        DATA / "imports" / "mmar_results.jsonl",
        "--benchmark",
        "mmar",
        "--data",
        data,
        "--out",
        tmp_path / "run",
        "--model",
        "m",
    )
    assert not modules & (HEAVY | {"scipy", "numpy"}), modules & HEAVY
    written = [json.loads(line) for line in (tmp_path / "run" / "outputs.jsonl").open()]
    assert [r["id"] for r in written] == [r["id"] for r in mmar_records()[:5]]


def test_score_with_a_text_scorer_imports_no_heavy_library(tmp_path, runs):
    _, run, _ = runs
    (run / "results.json").unlink()
    modules = loaded(tmp_path, "score", run, "--scorers", "accuracy", "--no-progress")
    assert not modules & (HEAVY | {"scipy", "numpy"}), modules & HEAVY
    assert official_accuracy(run) == (3, 5)  # the official rule, worked by hand in test_import.py


def test_compare_and_report_need_only_their_statistics_and_figures(tmp_path, runs):
    _, run_a, run_b = runs
    assert not loaded(tmp_path, "compare", run_a, run_b, "--out", tmp_path / "c.json") & HEAVY
    assert json.loads((tmp_path / "c.json").read_text())  # the comparison was written
    assert not loaded(tmp_path, "report", run_a, run_b, "-o", tmp_path / "r.html") & HEAVY
    assert "model-b" in (tmp_path / "r.html").read_text()


def test_the_leaderboard_imports_no_heavy_library(tmp_path, runs):
    _, run_a, run_b = runs
    code = (
        f"from pathlib import Path\nfrom audioreason.evaluation.leaderboard import write_leaderboard\n"
        f"write_leaderboard(Path({str(run_a.parent)!r}), [{{'folder': {run_a.name!r}, 'model': 'model-a', "
        f"'benchmark': 'mmar'}}, {{'folder': {run_b.name!r}, 'model': 'model-b', 'benchmark': 'mmar'}}])"
    )
    assert not loaded(tmp_path, code=code) & (HEAVY | {"scipy", "numpy"})
    board = json.loads((run_a.parent / "leaderboard.json").read_text())
    assert {r["model"] for r in board["rows"]} == {"model-a", "model-b"}


def test_an_audio_read_still_brings_its_decoder(tmp_path):
    """The laziness is per need: a raw folder whose audio is there has its headers read (soundfile)."""
    records = mmar_records()[:2]
    data = write_mmar_raw(tmp_path / "mmar", records)
    code = (
        "from audioreason.data.catalog import text_items\n"
        f"items, report = text_items('mmar', {str(data)!r})\n"
        "assert all(i['audio']['path'] for i in items), report.summary()"
    )
    assert "soundfile" in loaded(tmp_path, code=code)


def test_a_model_run_on_a_raw_folder_builds_no_dataset(tmp_path):
    """A run's start-up pays for the model's libraries, not for datasets: a raw MMAR folder is read as text
    (issue 31, goal 3: the start-up cut where it is ours)."""
    from tiny_audio_models import build_phi4_multimodal

    data = write_mmar_raw(tmp_path / "mmar", mmar_records()[:2])
    model = build_phi4_multimodal(tmp_path / "model")
    modules = loaded(
        tmp_path,
        "run",
        "--model",
        model,
        "--benchmark",
        "mmar",
        "--data",
        data,
        "--out",
        tmp_path / "run",
        "--conditions",
        "full",
        "--templates",
        "plain",
        "--max-new-tokens",
        "2",
        "--no-progress",
    )
    assert {"torch", "transformers", "accelerate"} <= modules
    assert not modules & {"datasets", "pyarrow", "pandas", "evaluate", "gradio"}, modules
    assert len((tmp_path / "run" / "outputs.jsonl").read_text().splitlines()) == 2


def test_a_scorers_formulas_load_without_its_scorer():
    """The report draws ARIA's radar from ``scorers.aria.formulas`` alone; the Space that shows a report installs
    no lemmatizer, so the scorer package must not import its scorer (and so lemminflect) on the way there."""
    code = (
        "import audioreason.scorers.aria.formulas, audioreason.scorers.anchor_chain.formulas, "
        "audioreason.scorers.audiospan_rubric.formulas, audioreason.scorers.mmar_rubrics.formulas, "
        "audioreason.scorers.text_prior.formulas"
    )
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            code + "\nimport sys\nprint(sorted(m for m in sys.modules if "
            "m.startswith('audioreason.scorers') and m.endswith('.scorer') or m == 'lemminflect'))",
        ],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "[]"
    from audioreason.scorers import aria

    assert aria.AriaScorer.__name__ == "AriaScorer"  # still importable from the package, on first use
