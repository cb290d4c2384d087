"""Hostile anchor manifests: an output path leaving the manifest's folder, parameters that are NaN, infinite,
out of range or strings, a completed manifest whose bytes this machine does not make, and (the AudioSpan
loader) an event clip outside the dataset root. Each is refused with one line naming the field, exit status 3
(data), and nothing is written."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest
from fixtures.audiospan_synth import write_audiospan_folder
from test_anchors_signals import RATE, tone

from audioreason.audio import write_audio
from audioreason.audio.anchor_files import NotReproduced, apply_manifest, file_sha256
from audioreason.audio.anchor_manifest import ManifestError, manifest_json, new_manifest, read_manifest
from audioreason.cli import main
from audioreason.data.audiospan import AudioSpanBuilder

NOISE = {"operation": "deletion", "deletion_mode": "noise", "seed": 1, "positions": [[2.0, 4.0]]}
LOUD = {"operation": "modification", "attribute": "loudness", "gain_db": -10.0, "positions": [[2.0, 4.0]]}


@pytest.fixture()
def folder(tmp_path):
    rng = np.random.default_rng(0)
    write_audio(tmp_path / "source.wav", tone(220, 8.0) + 0.05 * rng.standard_normal(8 * RATE), RATE)
    return tmp_path


def _plan(folder, fields, output="out.wav"):
    path = folder / "plan.json"
    path.write_text(
        json.dumps({**fields, "source": {"path": "source.wav"}, "output": {"path": output}}, allow_nan=True)
    )
    return path


def _run(argv, capsys):
    with pytest.raises(SystemExit) as stop:
        main(argv)
    return stop.value.code, capsys.readouterr().err


def _written(folder):
    return sorted(p.name for p in folder.rglob("*") if p.name not in ("source.wav", "plan.json"))


@pytest.mark.parametrize("output", ["../escaped.wav", "sub/../../escaped.wav", "ABSOLUTE"])
def test_an_output_path_leaving_the_manifest_folder_is_refused(folder, capsys, output):
    target = folder.parent / "escaped.wav"
    plan = _plan(folder, LOUD, str(target) if output == "ABSOLUTE" else output)
    code, err = _run(["anchor", "apply", str(plan)], capsys)
    assert code == 3 and len(err.strip().splitlines()) == 1
    assert "output.path" in err and "leaves" in err and "Traceback" not in err
    assert not target.exists() and _written(folder) == []
    # an absolute path inside the folder is fine
    plan = _plan(folder, LOUD, str(folder / "inside.wav"))
    assert main(["anchor", "apply", str(plan)]) == 0 and (folder / "inside.wav").is_file()


@pytest.mark.parametrize(
    "fields,message",
    [
        ({**NOISE, "parameters": {"noise_db": float("nan")}}, "parameters.noise_db must be a finite number, got nan"),
        ({**NOISE, "parameters": {"mod_depth": float("nan")}}, "parameters.mod_depth must be a finite number"),
        ({**NOISE, "parameters": {"cutoff_hz": float("nan")}}, "parameters.cutoff_hz must be a finite number"),
        ({**NOISE, "parameters": {"fade_s": float("nan")}}, "parameters.fade_s must be a finite number"),
        ({**LOUD, "parameters": {"ramp_s": float("nan")}}, "parameters.ramp_s must be a finite number"),
        ({**NOISE, "parameters": {"fade_s": -1}}, "parameters.fade_s must be in [0, 10], got -1"),
        ({**NOISE, "parameters": {"mod_depth": 5}}, "parameters.mod_depth must be in [0, 1], got 5"),
        ({**NOISE, "parameters": {"noise_db": 1e308}}, "parameters.noise_db must be in [-100, 20], got 1e+308"),
        ({**NOISE, "parameters": {"fade_s": float("inf")}}, "parameters.fade_s must be a finite number, got inf"),
        ({**NOISE, "parameters": {"cutoff_hz": "300"}}, "parameters.cutoff_hz must be a finite number, got '300'"),
        ({**NOISE, "parameters": {"filter_order": 2.5}}, "parameters.filter_order must be a whole number"),
        (
            {**NOISE, "parameters": {"cutoff_hz": 9000}},
            "parameters.cutoff_hz 9000 Hz must be below the source's Nyquist frequency (8000 Hz)",
        ),
        ({**NOISE, "parameters": "loud"}, "parameters must be an object"),
        ({**NOISE, "seed": "x"}, "seed must be a whole number >= 0, got 'x'"),
        ({**LOUD, "gain_db": 1e308}, "gain_db must be in [-100, 100], got 1e+308"),
        ({**LOUD, "gain_db": float("inf")}, "gain_db must be a finite number, got inf"),
        ({**LOUD, "positions": [[2.0, 1e308]]}, "positions[0].end must be in [0, 1e+06], got 1e+308"),
        (
            {**LOUD, "positions": [{"original_start": 2.0, "original_end": 4.0, "original_start_frame": "x"}]},
            "positions[0].original_start_frame must be a whole number of frames",
        ),
    ],
)
def test_a_parameter_that_is_nan_infinite_out_of_range_or_a_string_is_refused_writing_nothing(
    folder, capsys, fields, message
):
    code, err = _run(["anchor", "apply", str(_plan(folder, fields))], capsys)
    assert code == 3 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert message in err
    assert _written(folder) == []


def test_a_manifest_with_nan_is_never_written_as_json():
    manifest = new_manifest("deletion", [[2.0, 4.0]], deletion_mode="silence")
    manifest["parameters"]["fade_s"] = float("nan")  # set after reading, past every check
    with pytest.raises(ManifestError, match="JSON cannot write"):
        manifest_json(manifest)
    with pytest.raises(ManifestError, match="parameters.fade_s must be a finite number"):
        read_manifest(
            '{"operation": "deletion", "deletion_mode": "silence", "positions": [[2, 4]], '
            '"parameters": {"fade_s": NaN}}'
        )


def test_apply_on_a_completed_manifest_does_not_overwrite_before_comparing(folder, capsys):
    plan = _plan(folder, LOUD)
    assert main(["anchor", "apply", str(plan), "--write-manifest", str(folder / "done.json")]) == 0
    made = (folder / "out.wav").read_bytes()
    # a copy made elsewhere (other bytes) with its manifest: this machine's bytes differ from it
    done = json.loads((folder / "done.json").read_text())
    theirs = made[:-2] + b"\x01\x00"
    (folder / "out.wav").write_bytes(theirs)
    done["output"]["sha256"] = file_sha256(folder / "out.wav")
    (folder / "done.json").write_text(json.dumps(done))
    capsys.readouterr()
    assert main(["anchor", "apply", str(folder / "done.json")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("NOT reproduced: ") and "the file there was left as it was" in err
    assert (folder / "out.wav").read_bytes() == theirs  # untouched: compared aside, not replaced
    assert not list(folder.glob("*.partial"))
    with pytest.raises(NotReproduced, match="nothing was written") as refused:
        apply_manifest(folder / "done.json", output=folder / "fresh.wav")
    assert not (folder / "fresh.wav").exists()
    assert refused.value.completed["output"]["sha256"] == hashlib.sha256(made).hexdigest()  # what it made


def test_make_refuses_a_manifest_folder_that_does_not_hold_the_output(folder, capsys):
    code, err = _run(
        [
            "anchor",
            "make",
            str(folder / "source.wav"),
            str(folder / "a" / "out.wav"),
            "--operation",
            "modification",
            "--gain-db",
            "-10",
            "--at",
            "2-4",
            "--manifest",
            str(folder / "b" / "m.json"),
        ],
        capsys,
    )
    assert code == 2 and "is not inside the manifest's folder" in err and _written(folder) == []


# ------------------------------------------------------------------------------ the AudioSpan loader
def _build(root, tmp_path):
    return AudioSpanBuilder(
        data_dir=str(root),
        cache_dir=str(tmp_path / "cache"),
        config_name="anchor",
        audio_backend="soundfile",
        anchor_from_manifests=True,
    ).build()


@pytest.fixture()
def raw(tmp_path):
    root = write_audiospan_folder(tmp_path / "raw")
    (root / "audio" / "anchored" / "en-talk-001.wav").unlink()
    write_audio(tmp_path / "private-clip.wav", tone(900, 0.8, 0.5), RATE)  # outside the dataset root
    return root


def test_the_loader_reads_no_event_clip_outside_the_dataset_root(raw, tmp_path):
    plan = {
        "recording_id": "en-talk-001",
        "operation": "addition",
        "event_category": "bell",
        "snr_db": 8.0,
        "positions": [[0.5, None]],
        "event_clip": {"path": "../private-clip.wav"},
    }
    (raw / "metadata" / "edits.jsonl").write_text(json.dumps(plan) + "\n")
    with pytest.raises(
        ManifestError,
        match=r"recording 'en-talk-001': event_clip.path '../private-clip.wav' "
        r"leaves",
    ):
        _build(raw, tmp_path)
    assert not (raw / "audio" / "anchored" / "en-talk-001.wav").exists()
    # the same clip inside the root is used
    (raw / "audio" / "events").mkdir()
    (raw / "audio" / "events" / "clip.wav").write_bytes((tmp_path / "private-clip.wav").read_bytes())
    plan["event_clip"]["path"] = "audio/events/clip.wav"
    (raw / "metadata" / "edits.jsonl").write_text(json.dumps(plan) + "\n")
    _build(raw, tmp_path)
    assert (raw / "audio" / "anchored" / "en-talk-001.wav").is_file()


def test_the_loader_refuses_a_recording_id_that_is_a_path(raw, tmp_path):
    plan = {
        "recording_id": "../../escaped",
        "operation": "deletion",
        "deletion_mode": "silence",
        "positions": [[0.5, 1.5]],
    }
    (raw / "metadata" / "edits.jsonl").write_text(json.dumps(plan) + "\n")
    with pytest.raises(ManifestError, match="recording_id '../../escaped' is not a file name"):
        _build(raw, tmp_path)
    assert not (tmp_path / "escaped.wav").exists()
