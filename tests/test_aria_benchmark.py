"""benchmarks/aria.py measures fairly: both paths warmed up, every timed run from empty caches, the order
alternated, the median of the repeats reported."""

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("aria_benchmark", ROOT / "benchmarks" / "aria.py")
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)


def test_compare_warms_alternates_resets_and_takes_medians(monkeypatch):
    log = []
    durations = {"fast": iter([5, 1, 2]), "slow": iter([10, 30, 20])}
    now = [0.0]

    def fake_clock():
        return now[0]

    def path(name):
        def run():
            log.append(name)
            now[0] += next(durations[name])
            return name

        return run

    monkeypatch.setattr(bench.time, "perf_counter", fake_clock)
    fast_s, slow_s, fast_result, slow_result = bench.compare(
        path("fast"), path("slow"), repeats=3, warm=lambda: log.append("warm"), reset=lambda: log.append("reset")
    )
    assert log == [
        "warm",
        "reset",
        "slow",
        "reset",
        "fast",
        "reset",
        "fast",
        "reset",
        "slow",
        "reset",
        "slow",
        "reset",
        "fast",
    ]
    assert (fast_s, slow_s) == (2, 20)  # medians of 5, 1, 2 and 10, 30, 20
    assert (fast_result, slow_result) == ("fast", "slow")


def test_build_items_gives_four_slot_cots_with_choices():
    outputs, golds, choices = bench.build_items(ROOT / "tests" / "data" / "MMAR-meta.jsonl", 804)
    assert len(outputs) == len(golds) == len(choices) == 804  # 800 timed + 4 warm-up items exist
    assert all(g in c for g, c in zip(golds, choices))
    assert outputs[0].startswith("[PERCEPTION]\nEntities: ") and "[ANSWER]\n" + golds[0] in outputs[0]
