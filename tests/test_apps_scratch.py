"""The Spaces' request folders (``audioreason.apps.scratch``): expired ones removed as new ones are made, a
session's released at its end, all of them at exit; and the report and explorer apps leave no upload behind."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from report_sets import write_many_sets_run

from audioreason.apps.scratch import Scratch

ROOT = Path(__file__).resolve().parents[1]


def _app(name: str):
    spec = importlib.util.spec_from_file_location(f"scratch_app_{name}", ROOT / "spaces" / name / "app.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_expired_folders_go_when_the_next_is_made():
    scratch = Scratch("test", max_age_s=60.0)
    old, recent = scratch.folder("report"), scratch.folder("report")
    (old / "report.html").write_text("x")
    hour_ago = time.time() - 3600
    os.utime(old, (hour_ago, hour_ago))
    new = scratch.folder("report")
    assert sorted(p.name for p in scratch.root.iterdir()) == sorted([recent.name, new.name])
    assert new.name.startswith("report-") and new.parent == scratch.root
    assert Scratch("kept").prune() == 0  # no age limit: nothing expires


def test_a_session_releases_only_its_own_folders(tmp_path):
    scratch = Scratch("test")
    assert scratch.release([str(tmp_path)]) == []  # nothing made yet
    a, b = scratch.folder("upload"), scratch.folder("upload")
    (a / "run").mkdir()
    bundled = tmp_path / "bundled-run"
    released = scratch.release([str(a / "run"), str(bundled)])
    assert released == [str(a / "run")]
    assert not a.exists() and b.exists() and list(scratch.root.iterdir()) == [b]


def test_the_root_is_removed_when_the_process_exits():
    code = (
        "from audioreason.apps.scratch import Scratch\n"
        "s = Scratch('exit'); (s.folder('clips') / 'a.wav').write_bytes(b'0'); print(s.root)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    root = Path(out.strip())
    assert root.name.startswith("audioreason-exit-") and not root.exists()


def test_the_report_app_removes_an_upload_once_drawn(tmp_path):
    app = _app("report")
    results = write_many_sets_run(tmp_path / "run") / "results.json"
    page, files, status = app.upload([str(results)], "uploaded")
    assert "<h1>uploaded</h1>" in page and status.startswith("81 results (accuracy, aria,") and "9 figures" in status
    assert [Path(f).name for f in files] == ["report.html", "report.md"]
    kept = sorted(p.name.split("-")[0] for p in app.SCRATCH.root.iterdir())
    assert kept == ["report"]  # the upload's folder is gone; the report's files stay for Gradio to serve
    assert all(Path(f).is_relative_to(app.SCRATCH.root) for f in files)
    (tmp_path / "notes.txt").write_text("not a result")
    with pytest.raises(Exception, match="give a zipped run folder"):
        app.upload([str(tmp_path / "notes.txt")], "bad")
    assert sorted(p.name.split("-")[0] for p in app.SCRATCH.root.iterdir()) == ["report"]


def test_the_explorer_forgets_a_sessions_uploads(tmp_path):
    app = _app("explorer")
    run = write_many_sets_run(tmp_path / "run")
    opened = write_many_sets_run(tmp_path / "opened-at-start")
    bundled = [str(opened)]
    app._views(bundled)
    files = [str(run / name) for name in ("results.json", "items.jsonl", "run.json")]
    state = app.load(files, bundled)[0]
    (uploaded,) = [p for p in state if p not in bundled]
    assert Path(uploaded).is_relative_to(app.SCRATCH.root) and uploaded in app._VIEWS
    assert app.forget(state) == [uploaded]
    assert not Path(uploaded).exists() and uploaded not in app._VIEWS and str(opened) in app._VIEWS
    (tmp_path / "notes.txt").write_text("not a run")
    with pytest.raises(Exception, match="give a zipped run folder"):
        app.load([str(tmp_path / "notes.txt")], bundled)
    assert list(app.SCRATCH.root.iterdir()) == []  # a refused upload leaves no folder
