"""`anchor verify` measures a speed edit from the audio and fails a file whose bytes differ from its manifest:
a real Rubber Band speed edit on espeak-ng speech passes; the same file with a span replaced by a plain
(pitch-shifting) resample, a span zeroed, a span stretched from the wrong stretch of source, or one sample
changed inside a span fails with exit status 1, naming the edit, the file and the position."""

from __future__ import annotations

import json

import numpy as np
import pytest
import soundfile as sf
from scipy.signal import resample
from test_anchors_signals import RATE, speech_recording

from audioreason.audio import anchors as ops
from audioreason.audio.anchor_files import verify_anchored
from audioreason.audio.anchor_speed import measure_speed
from audioreason.cli import main


@pytest.fixture(scope="module")
def edited(tmp_path_factory):
    """A ×2 speed edit at 2.5-5.5 s and 14.8-17.8 s, made by `anchor make` (the anchored file and manifest)."""
    folder = tmp_path_factory.mktemp("anchor_speed")
    source, _ = speech_recording(folder, seconds=40.0)
    out = folder / "anchored" / "talk.wav"
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
                "14.8-17.8",
                "--recording-id",
                "talk",
            ]
        )
        == 0
    )
    return source, out, out.with_suffix(".json")


def _tampered(edited, tmp_path, position, replace):
    """A copy of the anchored file and manifest with one span's samples replaced by ``replace(source_span,
    anchored_span)`` (int16)."""
    source, out, manifest_path = edited
    manifest = json.loads(manifest_path.read_text())
    p = manifest["positions"][position - 1]
    src = sf.read(str(source), dtype="int16")[0]
    samples = sf.read(str(out), dtype="int16")[0]
    span = samples[p["start_frame"] : p["end_frame"]]
    new = replace(src[p["original_start_frame"] : p["original_end_frame"]].astype(np.float64), span.astype(np.float64))
    samples[p["start_frame"] : p["end_frame"]] = np.rint(new).astype(np.int16)
    sf.write(str(tmp_path / "talk.wav"), samples, RATE, subtype="PCM_16")
    manifest["source"]["path"] = str(source)
    (tmp_path / "talk.json").write_text(json.dumps(manifest))
    return tmp_path / "talk.json"


def _verify(path, capsys):
    code = main(["anchor", "verify", str(path)])
    return code, capsys.readouterr().out


def test_a_real_speed_edit_passes_with_its_speed_measured_from_the_audio(edited, capsys):
    _, _, manifest_path = edited
    code, out = _verify(manifest_path, capsys)
    assert code == 0 and "verified" in out and "FAIL" not in out
    report = verify_anchored(manifest_path)
    speeds = [c["measured"] for c in report["positions"] if c["quantity"] == "speed_factor (measured)"]
    assert len(speeds) == 2 and all(abs(s - 2.0) <= 0.06 for s in speeds)
    assert all(c["measured"] >= 0.9 for c in report["positions"] if c["quantity"] == "stretch_correlation")


def test_a_span_replaced_by_a_plain_resample_fails_naming_the_edit_and_position(edited, tmp_path, capsys):
    path = _tampered(edited, tmp_path, 2, lambda src, span: resample(src, len(span)))  # x2 by pitch shift
    code, out = _verify(path, capsys)
    assert code == 1 and "VERIFY FAILED" in out
    assert "FAIL: position 2 (speed x2): the edited span matches the source resampled (pitch-shifted)" in out
    assert "position 1 (speed" not in out  # the untouched span still passes
    report = verify_anchored(path)
    rows = {c["quantity"]: c for c in report["positions"] if c["position"] == 2}
    assert rows["resample_correlation"]["measured"] > 0.99 and not rows["resample_correlation"]["ok"]
    assert rows["span_frames"]["ok"]  # the length alone, the old check, cannot see it


def test_a_zeroed_span_fails_naming_the_position(edited, tmp_path, capsys):
    path = _tampered(edited, tmp_path, 1, lambda src, span: np.zeros_like(span))
    code, out = _verify(path, capsys)
    assert code == 1 and "FAIL: position 1 (speed x2): the edited span is silent (zeroed)" in out


def test_a_span_stretched_at_another_speed_is_measured_at_that_speed(edited, tmp_path, capsys):
    # the first 3/4 of the source span played at x1.5: the right length for x2, the wrong speed
    def wrong(src, span):
        part = ops.change_speed(src[: int(0.75 * len(src))], RATE, 1.5)[:, 0]
        return np.pad(part, (0, len(span) - len(part)))[: len(span)]

    path = _tampered(edited, tmp_path, 2, wrong)
    code, out = _verify(path, capsys)
    assert code == 1 and "FAIL: position 2 (speed x2): the edited span plays the source at x1.5" in out


def test_one_sample_changed_inside_a_span_is_a_sha256_failure_naming_file_and_position(edited, tmp_path, capsys):
    source, out, _ = edited
    manifest = json.loads(edited[2].read_text())
    start = manifest["positions"][1]["start_frame"]

    def nudge(src, span):
        span = span.copy()
        span[100] += 1  # one LSB: every measured quantity stays within its tolerance
        return span

    path = _tampered(edited, tmp_path, 2, nudge)
    code, printed = _verify(path, capsys)
    assert code == 1 and "VERIFY FAILED" in printed and "sha256 differs from the manifest" in printed
    assert f"FAIL: {tmp_path / 'talk.wav'}: sha256 " in printed
    assert (
        f"content differs: position 2 (1 samples differ from the edit re-applied here, the first at "
        f"{(start + 100) / RATE:.3f} s (frame {start + 100}))"
    ) in printed
    report = verify_anchored(path)
    assert all(c["ok"] for c in report["positions"]) and report["sha256_match"] is False and not report["ok"]


def test_measure_speed_on_hand_made_spans():
    rng = np.random.default_rng(0)
    # a tone sweeping 300 -> 1500 Hz (a spectrum that changes in time, as speech does)
    t = np.arange(3 * RATE) / RATE
    sweep = 0.3 * np.sin(2 * np.pi * (300 * t + 200 * t**2)) + 0.001 * rng.standard_normal(len(t))
    stretched = ops.change_speed(sweep, RATE, 1.5)[:, 0]
    m = measure_speed(sweep, stretched, RATE, 1.5)
    assert abs(m.speed - 1.5) <= 0.03 and m.at_factor >= 0.9 and m.resample_correlation < m.at_factor
    wrong = measure_speed(sweep, stretched, RATE, 2.0)  # the same audio claimed as x2
    assert abs(wrong.speed - 1.5) <= 0.03 and wrong.at_factor < 0.7
    assert measure_speed(sweep, np.zeros(len(stretched)), RATE, 1.5).speed is None
