"""The evaluate modules and dataset cards ship inside the package and load from any working directory; the
bare names evaluate.load("anchor_chain") and load_dataset("mmar", data_dir=...) resolve to this project's
module and builder once audioreason.register() has run. Everything runs outside the repository, offline."""

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import evaluate
import pytest
from fixtures.audiospan_synth import write_audiospan_folder
from fixtures.data_helpers import mmar_records, write_mmar_raw

import audioreason
from audioreason.data import export_benchmark, load_benchmark

ROOT = Path(__file__).resolve().parents[1]
METRICS = ("aria", "mmar_rubrics", "audiospan_rubric", "anchor_chain", "text_prior_decomposition")
MODULE_CLASSES = {
    "aria": "Aria",
    "mmar_rubrics": "MmarRubrics",
    "audiospan_rubric": "AudiospanRubric",
    "anchor_chain": "AnchorChain",
    "text_prior_decomposition": "TextPriorDecomposition",
}


@pytest.fixture(autouse=True)
def outside_the_repository(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


@pytest.mark.parametrize("name", METRICS)
def test_metric_path_loads_each_module_from_anywhere(name):
    folder = Path(audioreason.metric_path(name))
    assert folder == ROOT / "metrics" / name  # a source checkout: the repository's own folder
    module = evaluate.load(str(folder))
    assert type(module).__name__ == MODULE_CLASSES[name] and module.name == name


def test_unknown_names_are_refused_with_the_list():
    with pytest.raises(ValueError, match=r"unknown metric 'accuracy': one of \['aria'"):
        audioreason.metric_path("accuracy")
    with pytest.raises(ValueError, match=r"unknown dataset 'mmau': one of \['mmar', 'mmau_test_mini', 'audiospan'\]"):
        audioreason.dataset_card_path("mmau")


def test_an_export_without_a_card_gets_the_shipped_card(tmp_path):
    raw = write_mmar_raw(tmp_path / "raw", mmar_records()[:2])
    ds = load_benchmark("mmar", raw, cache_dir=str(tmp_path / "cache"))
    out = export_benchmark("mmar", ds, tmp_path / "hub")
    card = (out / "README.md").read_text(encoding="utf-8")
    shipped = Path(audioreason.dataset_card_path("mmar")).read_text(encoding="utf-8")
    assert "## Licence and attribution" in card
    assert card.split("\n---\n", 1)[1] == shipped.split("\n---\n", 1)[1]  # the body, unchanged


def _wheel(tmp_path: Path) -> Path:
    """Build the wheel from a copy of the repository (the build writes build/ and egg-info beside setup.py)."""
    pytest.importorskip("setuptools")
    source = tmp_path / "source"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build")
    for part in ("audioreason", "metrics", "datasets_scripts"):
        shutil.copytree(ROOT / part, source / part, ignore=ignore)
    for part in ("setup.py", "README.md", "MANIFEST.in"):
        shutil.copy2(ROOT / part, source / part)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path / "dist"),
            str(source),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return next((tmp_path / "dist").glob("audioreason-*.whl"))


SCRIPT = r"""
import json, sys
import evaluate
import audioreason
args = json.loads(sys.argv[1])
out = {"package": audioreason.__file__, "metric_path": audioreason.metric_path("anchor_chain"),
       "card": audioreason.dataset_card_path("audiospan")}
try:
    evaluate.load("anchor_chain")
    out["before"] = "loaded"
except FileNotFoundError as err:
    out["before"] = "FileNotFoundError"
out["registered"] = audioreason.register()
chain = evaluate.load("anchor_chain")
out["module_file"] = sys.modules[type(chain).__module__].__file__
out["chain"] = chain.compute(predictions=["A", "B", "A"], references=["x", "y", "z"],
                             choices=[["x", "y"], ["x", "y"], ["z", "w"]], chain_id=["c1"] * 3,
                             link_position=[1, 2, 3])["chain"]
from datasets import load_dataset
mmar = load_dataset("mmar", data_dir=args["mmar"], split="test", cache_dir=args["cache"])
anchor = load_dataset("audiospan", "anchor", data_dir=args["audiospan"], split="test", cache_dir=args["cache"])
out["mmar"] = list(mmar["id"])
out["anchor"] = [sorted(set(anchor["subset"])), len(anchor)]
print("RESULT" + json.dumps(out))
"""


def test_the_wheel_carries_modules_and_cards_and_the_bare_names_resolve(tmp_path):
    wheel = _wheel(tmp_path)
    names = set(zipfile.ZipFile(wheel).namelist())
    for name in METRICS:
        for file in (f"{name}.py", "README.md", "app.py", "requirements.txt"):
            assert f"audioreason/bundled/metrics/{name}/{file}" in names
    for name in ("mmar", "mmau_test_mini", "audiospan"):
        assert f"audioreason/bundled/datasets_scripts/{name}/README.md" in names
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    records = mmar_records()[:2]
    args = {
        "mmar": str(write_mmar_raw(tmp_path / "mmar_raw", records)),
        "audiospan": str(write_audiospan_folder(tmp_path / "span_raw")),
        "cache": str(tmp_path / "cache"),
    }
    anywhere = tmp_path / "anywhere"
    anywhere.mkdir()
    env = {
        **os.environ,
        "PYTHONPATH": str(site),
        "HF_HOME": str(tmp_path / "hf"),
        "HF_HUB_OFFLINE": "1",
        "HF_MODULES_CACHE": str(tmp_path / "hf" / "modules"),
    }
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, json.dumps(args)],
        cwd=anywhere,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.split("RESULT", 1)[1])
    bundled = site / "audioreason" / "bundled"
    assert out["package"] == str(site / "audioreason" / "__init__.py")
    assert out["metric_path"] == str(bundled / "metrics" / "anchor_chain")
    assert out["card"] == str(bundled / "datasets_scripts" / "audiospan" / "README.md")
    assert out["before"] == "FileNotFoundError"  # offline, a bare name is nothing until registered
    cached = Path(out["registered"]["metrics"]["anchor_chain"])
    assert cached.is_relative_to(tmp_path / "hf" / "modules") and "evaluate-metric--anchor_chain" in str(cached)
    assert Path(out["module_file"]) == cached
    assert cached.read_text() == (bundled / "metrics" / "anchor_chain" / "anchor_chain.py").read_text()
    assert out["registered"]["datasets"] == {
        "mmar": "audioreason.data.mmar",
        "mmau_test_mini": "audioreason.data.mmau_test_mini",
        "audiospan": "audioreason.data.audiospan",
    }
    assert out["chain"] == 1.0
    assert out["mmar"] == [r["id"] for r in records]
    assert out["anchor"] == [["anchor"], 6]


def test_the_readme_quick_start_works_in_a_fresh_shell_anywhere(tmp_path):
    """The README's quick-start block, run by bash in an empty directory with a fresh module cache: it prints what
    the README says it prints."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Quick start", 1)[1]
    script = section.split("```bash\n", 1)[1].split("```", 1)[0]
    printed = section.split("prints\n\n```\n", 1)[1].split("```", 1)[0]
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "python"  # "python" is the environment's Python
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    wrapper.chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "HF_HOME": str(tmp_path / "hf"),
        "HF_MODULES_CACHE": str(tmp_path / "hf" / "modules"),
        "PYTHONPATH": str(ROOT),
    }
    done = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout == printed
