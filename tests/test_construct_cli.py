"""`audioreason construct`'s checks before any work and its counted outcomes for recordings it cannot use: a
recording too short or unreadable is skipped with its reason, and the folder never loads as a benchmark."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from audioreason.cli import main
from audioreason.construct.assemble import duration_tier
from audioreason.construct.roles import ROLES


def _run(argv):
    """The exit status of `audioreason ARGV` (an error exits through SystemExit)."""
    try:
        return main(argv)
    except SystemExit as exit:
        return exit.code


def _roles_file(tmp_path):
    roles = {r: {"model": f"m-{r}", "base_url": "http://127.0.0.1:9/v1", "api_key_env": None} for r in ROLES}
    path = tmp_path / "ROLES.yaml"
    path.write_text(json.dumps({"roles": roles}), encoding="utf-8")  # JSON is YAML
    return str(path)


@pytest.mark.parametrize(
    "extra, message",
    [
        ([], "name the models with --roles ROLES.yaml, or run every role here with --offline"),
        (["--offline", "--roles", "R.yaml"], "name the models with --roles ROLES.yaml, or run every role here"),
        (["--roles", "missing.yaml"], "--roles 'missing.yaml' is not a file"),
        (["--offline", "--per-level", "0"], "--per-level must be at least 1, got 0"),
        (["--offline", "--rollouts", "0"], "--rollouts must be at least 1, got 0"),
        (["--offline", "--paths", "native,quiz"], "--paths takes native and/or anchor, got native,quiz"),
        (["--offline", "--language", "fr"], "--language is en or zh (AudioSpan's two), got 'fr'"),
        (["--offline", "--max-cost", "-1"], "--max-cost must be a positive amount, got -1.0"),
    ],
)
def test_mistakes_are_one_line_errors_before_any_work(tmp_path, capsys, extra, message):
    recs = tmp_path / "recs"
    recs.mkdir()
    sf.write(recs / "a.wav", np.zeros(16000, dtype=np.float32), 16000)
    code = _run(["construct", str(recs), "--out", str(tmp_path / "bench"), *extra])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and message in err, err
    assert not (tmp_path / "bench").exists()


def test_a_missing_key_is_a_one_line_error_before_anything_is_written(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("CRITIC_KEY_NOT_SET", raising=False)
    roles = json.loads(Path(_roles_file(tmp_path)).read_text())
    roles["roles"]["critic"] = {
        "model": "gpt-x",
        "base_url": "https://api.example.com/v1",
        "api_key_env": "CRITIC_KEY_NOT_SET",
    }
    (tmp_path / "ROLES.yaml").write_text(json.dumps(roles), encoding="utf-8")
    recs = tmp_path / "recs"
    recs.mkdir()
    sf.write(recs / "a.wav", np.zeros(16000, dtype=np.float32), 16000)
    code = _run(["construct", str(recs), "--out", str(tmp_path / "bench"), "--roles", str(tmp_path / "ROLES.yaml")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert "roles.critic: " in err and "set the environment variable CRITIC_KEY_NOT_SET" in err
    assert not (tmp_path / "bench").exists()  # no cache, no construction.json: nothing was started


def test_the_recordings_argument_is_checked(tmp_path, capsys):
    recs = tmp_path / "recs"
    recs.mkdir()
    (recs / "notes.txt").write_text("not audio")
    assert _run(["construct", str(recs), "--out", str(tmp_path / "b"), "--roles", _roles_file(tmp_path)]) == 2
    assert "no audio files" in capsys.readouterr().err
    sf.write(recs / "talk.wav", np.zeros(16000, dtype=np.float32), 16000)
    sf.write(recs / "talk.flac", np.zeros(16000, dtype=np.float32), 16000)
    assert _run(["construct", str(recs), "--out", str(tmp_path / "b"), "--roles", _roles_file(tmp_path)]) == 2
    assert "talk.flac and talk.wav would both be recording 'talk'" in capsys.readouterr().err
    assert _run(["construct", "--demo", str(recs)]) == 2
    assert "--demo builds from its own synthesized recording" in capsys.readouterr().err


def test_unusable_recordings_are_skipped_with_their_reason_and_nothing_loads(tmp_path, capsys):
    recs = tmp_path / "recs"
    recs.mkdir()
    sf.write(recs / "short.wav", np.zeros(10 * 16000, dtype=np.float32), 16000)
    (recs / "broken.wav").write_bytes(b"RIFF....WAVEfmt not really")
    bench = tmp_path / "bench"
    code = _run(["construct", str(recs), "--out", str(bench), "--roles", _roles_file(tmp_path), "--no-progress"])
    out = capsys.readouterr().out
    assert code == 0
    record = json.loads((bench / "construction.json").read_text())
    assert record["status"] == "complete" and record["recording_counts"] == {"done": 0, "skipped": 2, "failed": 0}
    reasons = {r["id"]: r["reason"] for r in record["recordings"]}
    assert reasons["short"] == "too short: 10.0 s (at least 60 s)"
    assert reasons["broken"].startswith("unreadable: ")
    assert "recordings: 0 built, 2 skipped, 0 failed" in out and "short: skipped: too short: 10.0 s" in out
    assert "(0 in all)" in out
    # no item survived: the marker files are written empty, and the candidates and rejections with them
    assert (bench / "metadata" / "native.jsonl").read_text() == "" and (bench / "candidates.jsonl").read_text() == ""
    assert record["sessions"][-1]["calls_made"] == {r: 0 for r in ROLES}


def test_duration_tiers_follow_the_paper():
    # AudioSpan §3.3: S 10-30 min, M 30-60 min, L 60 min and over; no tier below 10 minutes
    assert [duration_tier(s) for s in (599.9, 600, 1799.9, 1800, 3599, 3600, 9720)] == [
        None,
        "S",
        "S",
        "M",
        "M",
        "L",
        "L",
    ]
