"""Applying and verifying anchor manifests on espeak-ng speech: achieved SNR, gain and speed at each position
against the manifest, the audio outside every span bit-identical to the source, manifests that round-trip
and reproduce the file bit for bit, and the errors a manifest that does not fit gets."""

from __future__ import annotations

import json

import numpy as np
import pytest
import soundfile as sf
from test_anchors_signals import RATE, speech_recording, tone

from audioreason.audio import write_audio
from audioreason.audio.anchor_files import anchor_recording, apply_manifest, file_sha256, verify_anchored
from audioreason.audio.anchor_manifest import ManifestError, manifest_json, read_manifest

SECONDARY = ("clip_correlation", "span_frames", "stretch_correlation", "resample_correlation")
POSITIONS = [[2.5, 5.5], [14.8, 17.8], [26.8, 29.8]]  # inside the 1st, 3rd and 5th sentences
CASES = {
    "addition": ("addition", {"event_category": "bell", "snr_db": 8.0}),
    "addition_lufs": ("addition", {"event_category": "bell", "snr_db": 6.0, "parameters": {"snr_measure": "lufs"}}),
    "silence": ("deletion", {"deletion_mode": "silence"}),
    "noise": ("deletion", {"deletion_mode": "noise", "seed": 11}),
    "quieter": ("modification", {"attribute": "loudness", "gain_db": -10.0}),
    "louder": ("modification", {"attribute": "loudness", "gain_db": 8.0}),
    "faster": ("modification", {"attribute": "speed", "speed_factor": 2.0}),
    "slower": ("modification", {"attribute": "speed", "speed_factor": 1 / 1.5}),
}


@pytest.fixture(scope="module")
def recording(tmp_path_factory):
    folder = tmp_path_factory.mktemp("anchor_speech")
    path, _ = speech_recording(folder, seconds=40.0)
    bell = tone(1200, 1.5, 0.5) * np.exp(-2 * np.arange(int(1.5 * RATE)) / RATE)
    write_audio(folder / "bell.wav", bell, RATE)
    write_audio(folder / "bell_44k.wav", 0.5 * np.sin(2 * np.pi * 1200 * np.arange(66150) / 44100), 44100)  # 1.5 s
    return folder, path


def _int16(path):
    return sf.read(str(path), dtype="int16", always_2d=True)[0]


def _make(recording, name, tmp_path):
    folder, source = recording
    op, fields = CASES[name]
    positions = [[a, None] for a, _ in POSITIONS] if op == "addition" else POSITIONS
    clip = folder / "bell.wav" if op == "addition" else None
    manifest = anchor_recording(source, tmp_path / f"{name}.wav", op, positions, clip=clip, **fields)
    return manifest, source, clip


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_operation_measures_as_its_manifest_says_and_leaves_the_rest_bit_identical(recording, tmp_path, name):
    manifest, source, clip = _make(recording, name, tmp_path)
    report = verify_anchored(manifest, clip=clip)
    assert report["ok"], report
    assert report["outside_differing"] == 0
    op, fields = CASES[name]
    measured = [
        c for c in report["positions"] if c["quantity"] not in SECONDARY and not c["quantity"].startswith("correlation")
    ]
    assert [c["position"] for c in measured] == [1, 2, 3]
    if op == "addition":
        assert all(abs(c["measured"] - fields["snr_db"]) <= 0.1 for c in measured)
        assert all(c["measured"] >= 0.999 for c in report["positions"] if c["quantity"] == "clip_correlation")
    elif "gain_db" in fields:
        assert all(abs(c["measured"] - fields["gain_db"]) <= 0.05 for c in measured)
    elif "speed_factor" in fields:  # measured from the audio on a 1 % grid
        assert all(c["measured"] == pytest.approx(fields["speed_factor"], rel=0.03) for c in measured)
        stretch = [c["measured"] for c in report["positions"] if c["quantity"] == "stretch_correlation"]
        resample = [c["measured"] for c in report["positions"] if c["quantity"] == "resample_correlation"]
        assert min(stretch) >= 0.9 and max(resample) < 0.5
    # Independent of verify: every sample outside the spans equals the source, at the shifted place.
    src, out = _int16(source), _int16(tmp_path / f"{name}.wav")
    s_cursor = a_cursor = 0
    for p in manifest["positions"]:
        np.testing.assert_array_equal(src[s_cursor : p["original_start_frame"]], out[a_cursor : p["start_frame"]])
        s_cursor, a_cursor = p["original_end_frame"], p["end_frame"]
    np.testing.assert_array_equal(src[s_cursor:], out[a_cursor:])
    assert len(out) == manifest["output"]["frames"] == len(src) + manifest["positions"][-1]["shift_after_frames"]


def test_a_speed_change_shifts_every_later_timestamp(recording, tmp_path):
    manifest, _, _ = _make(recording, "faster", tmp_path)
    # 3 s spans at x2 last 1.5 s: each span shifts what follows by -1.5 s
    edited = [t for p in manifest["positions"] for t in (p["start"], p["end"])]
    assert edited == pytest.approx([2.5, 4.0, 13.3, 14.8, 23.8, 25.3])
    assert [p["shift_after"] for p in manifest["positions"]] == [-1.5, -3.0, -4.5]
    assert [p["original_start"] for p in manifest["positions"]] == pytest.approx([2.5, 14.8, 26.8])
    # at 1/1.5 they last 4.5 s: +1.5 s each
    slower, _, _ = _make(recording, "slower", tmp_path)
    edited = [t for p in slower["positions"] for t in (p["start"], p["end"])]
    assert edited == pytest.approx([2.5, 7.0, 16.3, 20.8, 29.8, 34.3])


def test_the_written_manifest_round_trips_and_reproduces_the_file_bit_for_bit(recording, tmp_path):
    manifest, source, clip = _make(recording, "noise", tmp_path)
    text = manifest_json(manifest)
    again = read_manifest(text)
    assert json.loads(manifest_json(again)) == json.loads(text)
    assert manifest["schema"] == "audioreason.anchor_manifest" and manifest["schema_version"] == 1
    assert manifest["source"]["sha256"] == file_sha256(source)
    assert set(manifest["tool"]["libraries"]) >= {"pedalboard", "scipy", "numpy", "libsndfile"}
    redone = apply_manifest(json.loads(text), output=tmp_path / "again.wav")
    assert redone["output"]["sha256"] == manifest["output"]["sha256"]
    assert (tmp_path / "again.wav").read_bytes() == (tmp_path / "noise.wav").read_bytes()
    # the addition manifest records the clip and the gain it received
    added, _, clip = _make(recording, "addition", tmp_path)
    assert added["event_clip"]["sha256"] == file_sha256(clip) and added["event_clip"]["frames"] == int(1.5 * RATE)
    assert all(isinstance(p["clip_gain_db"], float) for p in added["positions"])


def test_a_clip_at_another_rate_is_resampled_with_soxr(recording, tmp_path):
    folder, source = recording
    manifest = anchor_recording(
        source,
        tmp_path / "a.wav",
        "addition",
        [[2.5, None]],
        clip=folder / "bell_44k.wav",
        event_category="beep",
        snr_db=8.0,
    )
    assert manifest["event_clip"]["frames"] == int(1.5 * RATE)
    assert verify_anchored(manifest, clip=folder / "bell_44k.wav")["ok"]


def test_verify_finds_a_changed_sample_outside_the_spans_and_a_wrong_gain(recording, tmp_path):
    manifest, _, _ = _make(recording, "quieter", tmp_path)
    path = tmp_path / "quieter.wav"
    samples = _int16(path)
    samples[100] += 1  # outside every span
    start, end = manifest["positions"][1]["start_frame"], manifest["positions"][1]["end_frame"]
    samples[start:end] = (samples[start:end] * 0.5).astype(np.int16)  # position 2 now about -16 dB
    sf.write(str(path), samples, RATE, subtype="PCM_16")
    report = verify_anchored(manifest)
    assert not report["ok"] and report["outside_differing"] == 1 and report["sha256_match"] is False
    assert [c["ok"] for c in report["positions"]] == [True, False, True]
    assert report["positions"][1]["measured"] == pytest.approx(-10 - 6.0206, abs=0.05)


def test_clipping_is_counted_and_shows_in_verify(tmp_path):
    source = tmp_path / "loud.wav"
    write_audio(source, tone(300, 10.0, 0.9), RATE)
    manifest = anchor_recording(
        source, tmp_path / "out.wav", "modification", [[2.0, 5.0]], attribute="loudness", gain_db=12.0
    )
    assert manifest["output"]["clipped_samples"] > 0
    report = verify_anchored(manifest)
    assert not report["ok"] and report["positions"][0]["measured"] < 11.0


def test_stereo_float_sources_keep_their_format_and_flac_is_written_losslessly(tmp_path):
    stereo = np.stack([tone(220, 8.0), tone(330, 8.0, 0.2)], axis=1)
    sf.write(str(tmp_path / "st.wav"), stereo.astype(np.float32), RATE, subtype="FLOAT")
    m = anchor_recording(
        tmp_path / "st.wav", tmp_path / "st_out.wav", "deletion", [[2.0, 4.0]], deletion_mode="silence"
    )
    assert m["output"]["subtype"] == "FLOAT" and m["source"]["channels"] == 2
    assert verify_anchored(m)["ok"]
    write_audio(tmp_path / "mono.wav", tone(220, 8.0), RATE)
    flac = anchor_recording(
        tmp_path / "mono.wav", tmp_path / "out.flac", "deletion", [[2.0, 4.0]], deletion_mode="silence"
    )
    assert flac["output"]["format"] == "FLAC" and verify_anchored(flac)["ok"]
    with pytest.raises(ManifestError, match="FLAC cannot hold FLOAT"):
        anchor_recording(tmp_path / "st.wav", tmp_path / "x.flac", "deletion", [[2.0, 4.0]], deletion_mode="silence")


@pytest.mark.parametrize(
    "positions,fields,message",
    [
        ([[2.5, 5.5], [5.0, 12.0]], {}, "must not overlap"),
        ([[8.0, 12.0], [2.0, 4.0]], {}, "time order"),
        ([[38.0, 41.0]], {}, "leaves the recording"),
        ([[6.0, 6.2]], {}, "at least 0.5 s"),
    ],
)
def test_positions_that_do_not_fit_are_refused_before_writing(recording, tmp_path, positions, fields, message):
    _, source = recording
    with pytest.raises(ManifestError, match=message):
        anchor_recording(source, tmp_path / "x.wav", "deletion", positions, deletion_mode="silence", **fields)
    assert not (tmp_path / "x.wav").exists()


def test_a_manifest_for_another_source_or_clip_is_refused(recording, tmp_path):
    folder, source = recording
    manifest, _, _ = _make(recording, "addition", tmp_path)
    other = tmp_path / "other.wav"
    write_audio(other, tone(200, 40.0), RATE)
    with pytest.raises(ManifestError, match="sha256 .* differs"):
        apply_manifest(manifest, source=other, output=tmp_path / "y.wav")
    with pytest.raises(ManifestError, match="clip lasts 1.500 s"):
        anchor_recording(
            source,
            tmp_path / "z.wav",
            "addition",
            [[2.5, 5.5]],
            clip=folder / "bell.wav",
            event_category="bell",
            snr_db=8.0,
        )
    with pytest.raises(ManifestError, match="overwrite the source"):
        anchor_recording(source, source, "deletion", [[2.5, 5.5]], deletion_mode="silence")
    with pytest.raises(ManifestError, match=r"positions\[0\]: the signal under the event is silent"):
        anchor_recording(
            source,
            tmp_path / "s.wav",
            "addition",
            [[0.2, None]],
            clip=folder / "bell.wav",
            event_category="bell",
            snr_db=8.0,
        )
