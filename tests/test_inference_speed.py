"""run.json's speed block by hand: samples/s and the real-time factor (audio s per wall s), per run and per
condition; None (never 0) where there is nothing to divide."""

import pytest

from audioreason.inference.speed import speed_line, speed_summary


def record(condition, audio_s, generate_s):
    return {"condition": condition, "audio": {"seconds": audio_s}, "timings": {"generate_s": generate_s}}


def test_by_hand():
    records = [record("full", 10.0, 0.5), record("full", 20.0, 1.5), record("none", 0.0, 0.25)]
    sessions = [
        {"ran": 2, "generation_s": 4.0, "audio_s": 30.0},
        {"ran": 1, "generation_s": 1.0, "audio_s": 0.0},
        {"ran": 0, "generation_s": 0.2, "audio_s": 0.0},
    ]
    speed = speed_summary(records, sessions)
    assert speed["samples_per_s"] == 0.6 and speed["real_time_factor"] == 6.0  # 3 / 5 s; 30 s / 5 s
    assert speed["by_condition"]["full"] == {
        "samples": 2,
        "generate_s": 2.0,
        "audio_s": 30.0,
        "samples_per_s": 1.0,
        "real_time_factor": 15.0,
    }
    assert speed["by_condition"]["none"]["samples_per_s"] == 4.0
    assert speed["by_condition"]["none"]["real_time_factor"] is None
    assert speed_line(speed) == (
        "speed: 0.600 samples/s, real-time factor 6.00 (audio s per wall s); full 1.000/s RTF 15.00; none 4.000/s"
    )


def test_older_sessions_without_audio_seconds_are_left_out_of_the_factor_only():
    sessions = [{"ran": 4, "generation_s": 2.0}, {"ran": 2, "generation_s": 2.0, "audio_s": 8.0}]
    speed = speed_summary([], sessions)
    assert speed["samples_per_s"] == 1.5 and speed["real_time_factor"] == 4.0


def test_imported_predictions_have_no_speed():
    speed = speed_summary([{"condition": "full", "audio": None, "timings": None}], [{"ran": 0, "generation_s": 0.0}])
    assert speed["samples_per_s"] is None and speed["real_time_factor"] is None and speed["by_condition"] == {}
    assert "no session" in speed["unavailable"] and speed_line(speed) is None
    assert speed_line(None) is None
