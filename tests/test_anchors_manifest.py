"""The anchor manifest: canonical form, released-style field names (the AudioSpan loader's aliases), the
paper's ranges at creation, and clear errors."""

from __future__ import annotations

import json

import pytest

from audioreason.audio.anchor_manifest import (
    ManifestError,
    default_parameters,
    manifest_json,
    new_manifest,
    read_manifest,
)


def test_a_plan_has_every_parameter_and_original_positions():
    plan = new_manifest(
        "deletion", [[60.0, 65.0], ["02:00", "02:04"]], deletion_mode="noise", seed=3, recording_id="rec-1"
    )
    assert plan["parameters"] == {
        "fade_s": 0.01,
        "cutoff_hz": 300.0,
        "filter_order": 4,
        "noise_db": -6.0,
        "mod_hz": 4.0,
        "mod_depth": 0.8,
    }
    assert [(p["original_start"], p["original_end"]) for p in plan["positions"]] == [(60.0, 65.0), (120.0, 124.0)]
    assert plan["schema"] == "audioreason.anchor_manifest" and plan["schema_version"] == 1
    written = json.loads(manifest_json(plan))
    assert list(written)[:4] == ["schema", "schema_version", "recording_id", "operation"]
    assert "event_category" not in written  # None values are left out


def test_released_style_names_and_spellings_are_read_through_the_loader_aliases():
    raw = {
        "op": "modify",
        "spans": ["00:05-00:08", {"start": 20, "end": 23.5}],
        "attr": "volume",
        "gain": -10,
        "sample_id": "zh-show-002",
        "annotator": "A. N.",
    }
    m = read_manifest(raw)
    assert (m["operation"], m["attribute"], m["gain_db"], m["recording_id"]) == (
        "modification",
        "loudness",
        -10.0,
        "zh-show-002",
    )
    assert [(p["original_start"], p["original_end"]) for p in m["positions"]] == [(5.0, 8.0), (20.0, 23.5)]
    assert m["extra"] == {"annotator": "A. N."}  # unknown keys kept, never dropped
    single = read_manifest({"type": "add", "windows": [12.0, 13.5], "event": "dog bark", "snr": 8})
    assert single["positions"] == [{"original_start": 12.0, "original_end": 13.5}]
    assert read_manifest({"operation": "delete", "positions": [[1, 2]], "mask": "mute"})["deletion_mode"] == "silence"


@pytest.mark.parametrize(
    "raw,message",
    [
        ({"positions": [[1, 2]]}, "operation is missing"),
        ({"operation": "addition", "positions": [[1, 2]], "snr_db": 8}, "addition needs event_category"),
        ({"operation": "modification", "attribute": "speed", "positions": [[1, 2]]}, "needs speed_factor"),
        (
            {"operation": "deletion", "deletion_mode": "silence", "positions": [[1, 2]], "gain_db": 3},
            "belong to another operation",
        ),
        ({"operation": "deletion", "deletion_mode": "blur", "positions": [[1, 2]]}, "deletion_mode='blur'"),
        ({"operation": "deletion", "deletion_mode": "silence", "positions": []}, "positions is missing"),
        ({"operation": "deletion", "deletion_mode": "silence", "positions": [[5, 2]]}, r"positions\[0\]"),
        (
            {"operation": "deletion", "deletion_mode": "silence", "positions": [[1, 2]], "schema_version": 2},
            "schema_version 2",
        ),
        ({"operation": "addition", "event_category": "x", "snr_db": "loud", "positions": [[1, 2]]}, "snr_db must be"),
        (
            {"operation": "deletion", "deletion_mode": "silence", "positions": [[1, 2]], "parameters": {"cutoff": 1}},
            "unknown deletion parameter",
        ),
    ],
)
def test_a_manifest_that_cannot_be_used_names_the_field(raw, message):
    with pytest.raises(ManifestError, match=message):
        read_manifest(raw)


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"operation": "addition", "event_category": "bell", "snr_db": 12.0}, "6-10 dB"),
        ({"operation": "modification", "attribute": "loudness", "gain_db": 5.0}, "±8-12 dB"),
        ({"operation": "modification", "attribute": "speed", "speed_factor": 1.2}, "×1.5-3"),
        ({"operation": "modification", "attribute": "speed", "speed_factor": 0.2}, "×1.5-3"),
    ],
)
def test_creation_holds_the_paper_ranges_unless_told_not_to(kwargs, message):
    op = kwargs.pop("operation")
    with pytest.raises(ManifestError, match=message):
        new_manifest(op, [[10.0, 14.0]], **kwargs)
    assert new_manifest(op, [[10.0, 14.0]], paper_ranges=False, **kwargs)["operation"] == op
    with pytest.raises(ManifestError, match="1-3"):
        new_manifest("deletion", [[1, 4], [5, 8], [9, 12], [13, 16]], deletion_mode="silence")
    assert new_manifest("modification", [[1, 4]], attribute="speed", speed_factor=1 / 3)["speed_factor"] == 1 / 3


def test_default_parameters_refuse_unknown_settings():
    assert default_parameters("addition", snr_measure="lufs") == {"fade_s": 0.01, "snr_measure": "lufs"}
    with pytest.raises(ManifestError, match="known"):
        default_parameters("modification", gain=3)


def test_a_manifest_file_is_read_by_path_and_bad_json_is_named(tmp_path):
    path = tmp_path / "m.json"
    path.write_text(manifest_json(new_manifest("deletion", [[1.0, 4.0]], deletion_mode="silence")))
    assert read_manifest(path)["deletion_mode"] == "silence"
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ManifestError, match="bad.json: not valid JSON"):
        read_manifest(tmp_path / "bad.json")
    with pytest.raises(ManifestError, match="not found"):
        read_manifest(tmp_path / "missing.json")
