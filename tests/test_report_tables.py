"""The report's tables show each headline's recorded 95% interval beside its value (the shared schema,
``D["uncertainty"][F]["ci95"]``), none beside an n/a, and say what the brackets are. The run is hand-built
(tests/report_sets.py) with known intervals: value +- 0.02, 0.03 or 0.04 by model."""

import pytest
from report_sets import MODELS, write_many_sets_run

from audioreason.report import tables
from audioreason.report.load import load_results


@pytest.fixture(scope="module")
def by_key(tmp_path_factory):
    results = load_results(write_many_sets_run(tmp_path_factory.mktemp("many") / "run"))
    return {t.key: t for _, t in tables.all_tables(results)}


def test_headlines_carry_their_intervals(by_key):
    accuracy = by_key["accuracy"]
    # model 0, full: accuracy 0.3 +- 0.02; model 7, none: an n/a accuracy, no interval beside it
    assert accuracy.rows[0][2] == "0.3000 [0.2800, 0.3200]"
    assert accuracy.rows[-1][2] == "n/a"
    assert tables.INTERVAL_NOTE in accuracy.notes
    aria = by_key["aria"]
    # model 1 (half-width 0.03), full: M2 = 0.25 + 0.08 = 0.33
    assert aria.rows[2][aria.header.index("M2")] == "0.3300 [0.3000, 0.3600]"
    mmar = by_key["mmar_rubrics"]
    assert mmar.rows[0][1] == "0.1500 [0.1300, 0.1700]"
    chain = by_key["anchor_chain"]
    value = chain.rows[0][2]
    assert value.endswith("]") and value.count("[") == 1
    prior = by_key["text_prior"]
    assert prior.rows[0][prior.header.index("R_TP")] == "0.5000 [0.4500, 0.5500]"
    assert len(prior.rows) == len(MODELS)


def test_a_group_row_with_every_judged_item_failed_is_na_without_an_interval(by_key):
    groups = by_key["mmar_groups"]
    # model 2, category "Perception Layer": every item sent to the judge failed (n/a, never 0 or an interval)
    row = next(r for r in groups.rows if r[0].startswith(MODELS[2]) and r[2] == "Perception Layer")
    assert row[3] == "n/a" and row[4].endswith("]")


def test_results_without_intervals_show_bare_values(tmp_path):
    import json

    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "results.json").write_text(
        json.dumps(
            {
                "run": {"model": "m"},
                "scale": "0-1",
                "scorers": {
                    "accuracy": {
                        "status": "ok",
                        "results": [
                            {
                                "model": "m",
                                "condition": "full",
                                "template": "plain",
                                "rule": "official_slot",
                                "accuracy": 0.5,
                                "correct": 2,
                                "n": 4,
                            }
                        ],
                    }
                },
            }
        )
    )
    (folder / "items.jsonl").write_text("")
    (table,) = [t for _, t in tables.all_tables(load_results(folder))]
    assert table.rows[0][2] == "0.5000" and tables.INTERVAL_NOTE not in table.notes
