"""The AudioSpan builder anchors originals from their manifests at build time (``anchor_from_manifests``),
caches what it made, leaves pre-made copies alone, and its anchor rows serve the anchored audio and carry
the completed manifest (positions in the anchored timeline)."""

from __future__ import annotations

import json

import pytest
import soundfile as sf
from fixtures.audiospan_synth import write_audiospan_folder

from audioreason.audio.anchor_files import file_sha256, verify_anchored
from audioreason.audio.anchor_manifest import ManifestError
from audioreason.data.audiospan import AudioSpanBuilder

PLAN = {
    "recording_id": "en-talk-001",
    "operation": "modification",
    "attribute": "speed",
    "speed_factor": 2.0,
    "positions": [[0.5, 1.5], [2.5, 3.5]],
}


@pytest.fixture()
def raw(tmp_path):
    root = write_audiospan_folder(tmp_path / "raw")
    (root / "audio" / "anchored" / "en-talk-001.wav").unlink()  # only the original and the manifest remain
    (root / "metadata" / "edits.jsonl").write_text(json.dumps(PLAN) + "\n")
    return root


def _anchor_rows(root, cache, **options):
    builder = AudioSpanBuilder(
        data_dir=str(root), cache_dir=str(cache), config_name="anchor", audio_backend="soundfile", **options
    )
    ds = builder.build()
    return builder, [r for r in ds.remove_columns("audio").to_list() if r["recording_id"] == "en-talk-001"]


def test_build_anchors_the_original_and_rows_carry_the_completed_manifest(raw, tmp_path):
    builder, rows = _anchor_rows(raw, tmp_path / "cache", anchor_from_manifests=True)
    made = raw / "audio" / "anchored" / "en-talk-001.wav"
    assert made.is_file() and len(rows) == 3
    assert {r["audio_path"] for r in rows} == {"audio/anchored/en-talk-001.wav"}
    manifest = rows[0]["edit_manifest"]
    # 1 s spans at x2 last 0.5 s: the second starts 0.5 s early in the anchored timeline
    assert manifest["positions"] == [{"start": 0.5, "end": 1.0}, {"start": 2.0, "end": 2.5}]
    assert (manifest["operation"], manifest["attribute"], manifest["speed_factor"]) == ("modification", "speed", 2.0)
    completed = json.loads(manifest["extra"])
    assert completed["schema"] == "audioreason.anchor_manifest"
    assert completed["output"]["sha256"] == file_sha256(made)
    assert sf.info(str(made)).frames == 4 * 16000 - 2 * 8000
    notes = [i for i in builder.report.issues if i.item_id == "recording:en-talk-001"]
    assert [(i.kind, i.detail) for i in notes] == [("inferred_value", "anchored audio made from its edit manifest")]
    note = json.loads((raw / "audio" / "anchored" / "en-talk-001.anchor.json").read_text())
    assert verify_anchored(note["manifest"], base_dir=raw)["ok"]


def test_a_second_build_reuses_the_cache_and_a_changed_manifest_anchors_again(raw, tmp_path):
    _anchor_rows(raw, tmp_path / "c1", anchor_from_manifests=True)
    made = raw / "audio" / "anchored" / "en-talk-001.wav"
    first = made.stat().st_mtime_ns
    builder, _ = _anchor_rows(raw, tmp_path / "c2", anchor_from_manifests=True)
    assert made.stat().st_mtime_ns == first
    assert any(i.detail == "anchored audio cached from its edit manifest" for i in builder.report.issues)
    (raw / "metadata" / "edits.jsonl").write_text(json.dumps({**PLAN, "speed_factor": 1.5}) + "\n")
    _, rows = _anchor_rows(raw, tmp_path / "c3", anchor_from_manifests=True)
    assert rows[0]["edit_manifest"]["speed_factor"] == 1.5
    assert sf.info(str(made)).frames == 4 * 16000 - 2 * (16000 - 10667)


def test_without_the_option_or_with_a_premade_copy_nothing_is_anchored(raw, tmp_path):
    builder = AudioSpanBuilder(
        data_dir=str(raw), cache_dir=str(tmp_path / "c"), config_name="anchor", on_missing_audio="keep"
    )
    assert any(i.kind == "missing_audio" for i in builder.report.issues)
    assert not (raw / "audio" / "anchored" / "en-talk-001.wav").exists()
    premade = raw / "audio" / "anchored" / "en-talk-001.wav"
    sf.write(str(premade), [0.0] * 64000, 16000, subtype="PCM_16")
    before = premade.read_bytes()
    _, rows = _anchor_rows(raw, tmp_path / "c4", anchor_from_manifests=True)
    assert premade.read_bytes() == before  # a pre-made copy is read, never replaced
    assert rows[0]["edit_manifest"]["positions"] == [{"start": 0.5, "end": 1.5}, {"start": 2.5, "end": 3.5}]


def test_a_manifest_that_does_not_apply_names_the_recording(raw, tmp_path):
    (raw / "metadata" / "edits.jsonl").write_text(json.dumps({**PLAN, "positions": [[3.0, 9.0]]}) + "\n")
    with pytest.raises(ManifestError, match="recording 'en-talk-001': positions\\[0\\]"):
        _anchor_rows(raw, tmp_path / "c", anchor_from_manifests=True)
