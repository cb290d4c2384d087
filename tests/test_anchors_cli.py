"""`audioreason anchor make | apply | verify | question`: a manifest written beside the anchored file,
re-applied bit for bit from the original, verified per position; errors are one line: status 2 for usage, 3
for data that cannot be used, 1 for a failed check."""

from __future__ import annotations

import json

import numpy as np
import pytest
import soundfile as sf
from test_anchors_signals import RATE, speech_recording, tone

from audioreason.audio import write_audio
from audioreason.cli import main


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("anchor_cli")
    source, intervals = speech_recording(folder, seconds=40.0)
    write_audio(folder / "bell.wav", tone(1200, 2.0, 0.5), RATE)
    return folder, source, intervals


def test_make_apply_verify_round_trip(files, tmp_path, capsys):
    folder, source, _ = files
    out = tmp_path / "anchored" / "rec.wav"
    assert (
        main(
            [
                "anchor",
                "make",
                str(source),
                str(out),
                "--operation",
                "modification",
                "--speed",
                "2",
                "--at",
                "2.5-5.5",
                "--at",
                "00:15-00:18",
                "--recording-id",
                "rec",
                "--seed",
                "4",
            ]
        )
        == 0
    )
    manifest_path = out.with_suffix(".json")
    manifest = json.loads(manifest_path.read_text())
    assert not manifest["source"]["path"].startswith("/")  # relative to the manifest, so the folder can move
    assert (manifest_path.parent / manifest["source"]["path"]).resolve() == source.resolve()
    assert [p["start"] for p in manifest["positions"]] == [2.5, 13.5]
    capsys.readouterr()
    first = out.read_bytes()
    out.unlink()
    assert main(["anchor", "apply", str(manifest_path)]) == 0
    assert "reproduced" in capsys.readouterr().out and out.read_bytes() == first
    assert main(["anchor", "verify", str(manifest_path)]) == 0
    printed = capsys.readouterr().out
    assert printed.count("speed_factor") == 2 and "verified" in printed and "sha256 matches" in printed
    samples = sf.read(str(out), dtype="int16")[0]
    samples[10] += 3
    sf.write(str(out), samples, RATE, subtype="PCM_16")
    assert main(["anchor", "verify", str(manifest_path), "--json", str(tmp_path / "r.json")]) == 1
    assert "VERIFY FAILED" in capsys.readouterr().out
    assert json.loads((tmp_path / "r.json").read_text())["outside_differing"] == 1
    assert main(["anchor", "apply", str(manifest_path), "--output", str(tmp_path / "again.wav")]) == 0
    assert (tmp_path / "again.wav").read_bytes() == first
    capsys.readouterr()
    assert main(["anchor", "question", str(manifest_path), "--seed", "1"]) == 0
    item = json.loads(capsys.readouterr().out)
    assert item["chain_id"] == "rec" and len(item["choices"]) == 4


def test_make_places_the_anchors_with_silero_when_no_position_is_given(files, tmp_path, capsys):
    folder, source, intervals = files
    segments = tmp_path / "segments.json"
    segments.write_text(
        json.dumps([{"id": f"s{i}", "start": a - 1.0, "end": b + 1.0} for i, (a, b) in enumerate(intervals)])
    )
    out = tmp_path / "added.wav"
    assert (
        main(
            [
                "anchor",
                "make",
                str(source),
                str(out),
                "--operation",
                "addition",
                "--clip",
                str(folder / "bell.wav"),
                "--category",
                "bell",
                "--segments",
                str(segments),
                "--count",
                "2",
                "--seed",
                "3",
                "--rule",
                "min_seconds=1",
                "--rule",
                "max_fraction=0.1",
                "--rule",
                "edge_seconds=1",
            ]
        )
        == 0
    )
    manifest = json.loads(out.with_suffix(".json").read_text())
    assert len(manifest["positions"]) == 2 and len({p["segment"] for p in manifest["positions"]}) == 2
    assert main(["anchor", "verify", str(out.with_suffix(".json"))]) == 0


def run_error(argv, capsys):
    with pytest.raises(SystemExit) as stop:
        main(argv)
    err = capsys.readouterr().err
    return stop.value.code, err


@pytest.mark.parametrize(
    "argv,message",
    [
        (lambda t, s: ["anchor", "apply", str(t / "missing.json")], "missing.json': no such file"),
        (lambda t, s: ["anchor", "make", str(s), str(t / "o.wav"), "--operation", "addition"], "needs --clip"),
        (
            lambda t, s: ["anchor", "make", str(s), str(t / "o.wav"), "--operation", "modification", "--at", "2-5"],
            "exactly one of --gain-db",
        ),
        (
            lambda t, s: ["anchor", "make", str(s), str(t / "o.wav"), "--operation", "deletion", "--at", "2-x"],
            "--at '2-x'",
        ),
        (
            lambda t, s: [
                "anchor",
                "make",
                str(s),
                str(t / "o.wav"),
                "--operation",
                "modification",
                "--gain-db",
                "3",
                "--at",
                "2-5",
            ],
            "±8-12 dB",
        ),
        (
            lambda t, s: [
                "anchor",
                "make",
                str(t / "none.wav"),
                str(t / "o.wav"),
                "--operation",
                "deletion",
                "--at",
                "2-5",
            ],
            "none.wav': no such file",
        ),
        (
            lambda t, s: ["anchor", "make", str(s), str(t / "o.wav"), "--operation", "deletion", "--rule", "edge=3"],
            "--rule 'edge=3'",
        ),
        (
            lambda t, s: ["anchor", "make", str(s), str(t / "o.wav"), "--operation", "deletion"],
            "no room: windows of at least 3.0 s",
        ),
    ],
)
def test_errors_are_one_line(files, tmp_path, capsys, argv, message):
    _, source, _ = files
    code, err = run_error(argv(tmp_path, source), capsys)
    # usage errors (options, files named here that do not exist) exit 2; data errors (no room to place) 3
    assert code == (3 if "no room" in message else 2)
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert err.startswith("audioreason anchor ")
