"""The report's figures draw each value's 95% interval (``D["uncertainty"][F]["ci95"]``, the shared schema) as
an error bar from low to high, none where a value has no interval or is n/a; every axis on the one 0-1 scale.
The run is hand-built (tests/report_sets.py): 8 models x 2 conditions with known intervals; the extents are read
back from the drawn artists (``Figure.intervals``)."""

import math

import pytest
from report_sets import CATEGORIES, METRICS, MODALITIES, write_many_sets_run

from audioreason.report import build_report, figures
from audioreason.report.load import load_results


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    return load_results(write_many_sets_run(tmp_path_factory.mktemp("many") / "run"))


def _ci(values, name):
    return (values.get("uncertainty") or {}).get(name, {}).get("ci95")


def _r(*values):
    return tuple(round(float(v), 9) for v in values)


def _spans(figure, axes=None, vertical=True):
    """(position, low, high) of every error bar drawn (on one axes), in drawing order."""
    out = []
    for bar in figure.intervals:
        if axes is not None and bar["axes"] != axes:
            continue
        (x0, y0), (x1, y1) = bar["from"], bar["to"]
        if vertical and x0 == x1:
            out.append(_r(x0, y0, y1))
        elif not vertical and y0 == y1:
            out.append(_r(y0, x0, x1))
    return out


def _expect(pairs):
    return [_r(at, *ci) for at, ci in pairs]


def test_accuracy_bars_carry_each_sets_interval_and_none_for_na(results):
    entries = results.of("accuracy")
    figure = figures.accuracy_bars(entries)
    expected = [
        (i, e.result["uncertainty"]["accuracy"]["ci95"])
        for i, e in enumerate(entries)
        if e.result["accuracy"] is not None
    ]
    assert len(expected) == 15  # the 16th set's accuracy is n/a: its interval is unavailable, nothing drawn
    assert _spans(figure, vertical=False) == _expect(expected)
    # e.g. the first set: accuracy 0.3 with half-width 0.02
    assert figure.intervals[0] == {"axes": "", "from": [pytest.approx(0.28), 0.0], "to": [pytest.approx(0.32), 0.0]}
    # One 0-1 scale (no "% of items"), short tick labels (one set's full name on its row), n/a as a mark.
    assert figure.data["correct"][f"{entries[0].label} (official_slot)"] == 0.3
    assert ">share of items (0-1)<" in figure.svg and "% of items" not in figure.svg
    assert figure.svg.count(">n/a<") == 1 and figures.INTERVAL_NOTE in figure.caption


def test_aria_points_and_radar_carry_both_intervals(results):
    entries = results.of("aria")
    modes = figures.aria_vs_accuracy(entries)
    placed = [e for e in entries if e.result["accuracy"] is not None]  # an n/a accuracy: no point, no bars
    assert len(placed) == 15
    assert _spans(modes) == _expect((e.result["accuracy"], _ci(e.result, "aria")) for e in placed)
    assert _spans(modes, vertical=False) == _expect((e.result["aria"], _ci(e.result, "accuracy")) for e in placed)
    # margins around [0, 1]: a point at accuracy 1 or ARIA 0 is drawn whole
    assert ">1.0<" in modes.svg and ">0.0<" in modes.svg
    radar = figures.aria_radar(entries)
    angles = [2 * math.pi * i / 6 for i in range(6)]
    expected = [(a, _ci(e.result, m)) for e in entries for a, m in zip(angles, METRICS) if e.result[m] is not None]
    assert len(expected) == 16 * 6 - 4  # M1 is n/a for 4 sets: no bar
    assert _spans(radar) == _expect(expected)


def test_grouped_bars_carry_their_rows_intervals(results):
    mmar = figures.mmar_rubrics_figure(results.of("mmar_rubrics"))
    for group, names in (("modality", MODALITIES), ("category", CATEGORIES)):
        drawn = sorted(span[1:] for span in _spans(mmar, f"by {group}"))
        rows = [e.result[group][n] for e in results.of("mmar_rubrics") for n in names]
        # Rubrics bars (none for the 2 rows whose judging all failed: n/a) and Accuracy dashes
        expected = [tuple(r["uncertainty"]["rubrics"]["ci95"]) for r in rows if r["n_judged"]]
        expected += [tuple(r["uncertainty"]["accuracy"]["ci95"]) for r in rows]
        assert drawn == sorted(_r(*ci) for ci in expected)
        assert len(expected) == 2 * 16 * len(names) - 2
    assert ">score (0-1)<" in mmar.svg and "x100" not in mmar.svg
    assert mmar.svg.count(">n/a<") == 4  # model 2, both conditions, in "music" and "Perception Layer"
    chain = figures.anchor_chain_figure(results.of("anchor_chain"))
    bar = 0.8 / 16
    expected = [
        (k + (i - 7.5) * bar, _ci(e.result["chain"], link))
        for i, e in enumerate(results.of("anchor_chain"))
        for k, link in enumerate("PUR")
    ]
    assert sorted(_spans(chain, "per-link accuracy")) == sorted(_expect(expected))
    rubric = figures.rubric_figure(results.of("audiospan_rubric"))
    tiers = [_ci(e.result["by"]["duration_tier"][t], "mean") for e in results.of("audiospan_rubric") for t in "SML"]
    assert sorted(s[1:] for s in _spans(rubric, "Rubric by duration tier")) == sorted(_r(*ci) for ci in tiers)
    retention = figures.retention_curves(results.of("text_prior_decomposition"))
    per_model = results.of("text_prior_decomposition")[0].result["retention"]["per_model"]
    assert _spans(retention) == _expect(
        (int(n), v["uncertainty"]["R_N"]["ci95"]) for m in per_model.values() for n, v in m.items()
    )


def test_no_uncertainty_draws_no_error_bar_and_a_malformed_one_is_named(tmp_path):
    from test_report_inputs import accuracy, write_run

    run = write_run(
        tmp_path / "plain",
        "mmar",
        {
            "accuracy": {
                "status": "ok",
                "results": [
                    accuracy("official_slot", 0.5),  # no uncertainty at all (a results.json of an older score)
                    {
                        **accuracy("aria", 0.25),
                        "model": "m2",
                        "uncertainty": {
                            "accuracy": {
                                "se": None,
                                "ci95": None,
                                "method": "wilson",
                                "n": 1,
                                "resamples": None,
                                "seed": None,
                                "unavailable": "n < 2",
                            }
                        },
                    },
                ],
            }
        },
    )
    figure = figures.accuracy_bars(load_results(run).of("accuracy"))
    assert figure.intervals == [] and figures.INTERVAL_NOTE not in figure.caption
    bad = {**accuracy("aria", 0.25), "uncertainty": {"accuracy": {"ci95": [0.4, 0.1]}}}
    run = write_run(tmp_path / "bad", "mmar", {"accuracy": {"status": "ok", "results": [bad]}})
    with pytest.raises(ValueError) as caught:
        build_report([run], tmp_path / "r.html")
    assert str(caught.value) == (
        f"{run / 'results.json'}: malformed (ValueError: uncertainty.accuracy.ci95 is "
        "[0.4, 0.1], not [low, high] with low <= high)"
    )
