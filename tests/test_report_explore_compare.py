"""The explorer's leaderboard intervals, readable item rows, two runs side by side and the item page, on the
hand-built pair of MMAR runs of tests/fixtures/explorer_pair.py (its docstring has the verdicts by hand)."""

import json

import pytest
from fixtures.explorer_pair import WILSON_2_OF_3, write_pair

from audioreason.report import item_page, item_table, leaderboard, load, run_view, runs, scale


@pytest.fixture
def views(tmp_path):
    a, b = write_pair(tmp_path)
    return [runs.open_run(a), runs.open_run(b)]


def _cells(rows):
    return [dict(zip(item_table.ITEM_COLUMNS, r.cells)) for r in rows]


def test_the_leaderboard_shows_each_recorded_interval_and_nothing_when_absent(views):
    a, b = (dict(zip(leaderboard.LEADERBOARD_COLUMNS, r)) for r in leaderboard.leaderboard(views))
    # Model-a: the official scorer's 2 of 3 with its Wilson interval; the rubric score with its bootstrap
    # interval and the rater spread. Model-b: no accuracy interval recorded (nothing extra), a rubric interval
    # that could not be computed (the reason).
    assert a["accuracy (rule)"] == "0.6667 [0.2077, 0.9385] (official MMAR/MMAU scorer)"
    assert a["MMAR Rubrics"] == "0.6667 [0.0000, 1.0000]; rater sd 0.0000 (1 rater)"
    assert b["accuracy (rule)"] == "0.6667 (official MMAR/MMAU scorer)"
    assert b["MMAR Rubrics"] == "0.6667 [no interval: one rater per item: no spread]"
    legend = leaderboard.interval_legend(views)
    assert "`wilson`: the Wilson score interval of a binomial proportion" in legend
    assert "`bootstrap_percentile`: percentile bootstrap over items (2000 resamples, seed 0)" in legend
    assert "**rater sd**" in legend
    assert leaderboard.interval_legend([]) == ""


def test_interval_text_of_one_headline():
    assert scale.interval({"uncertainty": {"aria": {"ci95": [0.25, 0.5]}}}, "aria") == " [0.2500, 0.5000]"
    assert (
        scale.interval({"uncertainty": {"aria": {"ci95": None, "unavailable": "n < 2"}}}, "aria")
        == " [no interval: n < 2]"
    )
    assert scale.interval({"uncertainty": {"M1": {"ci95": [0, 1]}}}, "aria") == ""
    assert scale.interval({"aria": 0.5}, "aria") == ""
    assert scale.rater_spread({"rater_spread": {"sd": 0.125, "raters": 3}}) == "; rater sd 0.1250 (3 raters)"
    assert scale.rater_spread({"rater_spread": {"sd": None, "raters": 1}}) == "; rater sd n/a (1 rater)"
    # No interval beside an n/a (a judged score whose items all failed).
    entry = load.Entry(
        "mmar_rubrics",
        {"rubrics": 0.0, "n_failed": 2, "n_judged": 0, "uncertainty": {"rubrics": {"ci95": [0.0, 0.0]}}},
        "m",
    )
    assert leaderboard._headline(entry) == ("MMAR Rubrics", "n/a")


def test_items_are_named_by_id_model_and_condition_with_the_official_verdict(views):
    rows = item_table.item_rows(views)
    assert "key" not in item_table.ITEM_COLUMNS and not any("[" in c for r in rows for c in r.cells[:5])
    assert [r.cells[:5] for r in rows[:3]] == [["model-a", f"q{n}", "model-a", "full", "aria_cot"] for n in (1, 2, 3)]
    assert [r.cells[item_table.ITEM_COLUMNS.index("correct")] for r in rows] == [
        "official scorer yes, aria yes",
        "official scorer yes, aria yes",
        "official scorer no, aria no",
        "official scorer no, aria no",
        "official scorer yes, aria no",
        "official scorer yes, aria yes",
    ]
    assert item_table.item_verdicts(views[1], rows[4].key) == {"official scorer": True, "aria": False}


def test_two_runs_side_by_side_and_the_items_where_they_disagree(views):
    compared = item_table.item_rows(views, second=1)
    # The second run's own rows are its column, not rows; each row points at the same item in it.
    assert [(r.run, r.cells[1]) for r in compared] == [(0, "q1"), (0, "q2"), (0, "q3")]
    assert [views[1].rows[r.other]["id"] for r in compared] == ["q1", "q2", "q3"]
    assert [(c["second run: correct"], c["differs on"]) for c in _cells(compared)] == [
        ("official scorer no, aria no", "official scorer, aria"),
        ("official scorer yes, aria no", "aria"),
        ("official scorer yes, aria yes", "official scorer, aria"),
    ]
    # The benchmark's rule (MMAR: the official scorer): q1 and q3; any rule: q2 too (aria only).
    assert [r.cells[1] for r in item_table.item_rows(views, second=1, disagree="benchmark")] == ["q1", "q3"]
    assert [r.cells[1] for r in item_table.item_rows(views, second=1, disagree="any")] == ["q1", "q2", "q3"]
    assert item_table.differing(views[0], compared[1].key, views[1], compared[1].other, "benchmark") == []
    assert item_table.same_item(views[1], compared[0].other, views[0]) == compared[0].key
    with pytest.raises(ValueError, match="needs a second run"):
        item_table.item_rows(views, disagree="any")
    with pytest.raises(ValueError, match="unknown disagreement scope 'some'"):
        item_table.differing(views[0], compared[0].key, views[1], compared[0].other, "some")


def test_an_item_missing_from_the_second_run_is_said_so(views):
    q3 = next(k for k, r in views[1].rows.items() if r["id"] == "q3")
    del views[1].rows[q3], views[1].outputs[q3]
    last = item_table.item_rows(views, second=1)[2]
    assert (last.other, last.cells[-2:]) == (None, ["(not in it)", ""])
    assert [r.cells[1] for r in item_table.item_rows(views, second=1, disagree="any")] == ["q1", "q2"]


def test_the_item_view_reads_as_a_page(views):
    key = item_table.item_rows(views)[0].key
    detail = item_page.item_detail(views[0], key)
    assert detail["answers"] == [
        ["official scorer", "(the whole reply)", "string match of the official MMAR/MMAU evaluation script", "yes"],
        ["aria", "dog barking", "answer_tag", "yes"],
    ]
    assert detail["verdicts"] == [
        ["mmar_rubrics", "0 (judge-x)", "names the source", "1", "model-a names it"],
        ["mmar_rubrics", "0 (judge-x)", "describes the sound", "1", "describes a short clip"],
    ]
    page = detail["page"]
    for text in (
        '<h3 style="margin:.2rem 0">q1</h3>',
        "<b>model</b> model-a",
        "<b>condition</b> full",
        "<b>Question.</b> What makes the sound?",
        "<li>dog barking <b>(gold)</b></li>",
        "<dt><b>Entities</b></dt>",
        "a short clip, heard once",
        "<h4>Answer per rule</h4>",
        '<td style="border:1px solid #ccc;padding:.2rem .5rem;text-align:left;vertical-align:top">answer_tag</td>',
        "<h4>Rubric verdicts</h4>",
        "model-a names it",
        "No anchors or timed criteria for this item.",
    ):
        assert text in page, text
    assert '"key"' not in page and "[&quot;model-a&quot;" not in page  # the record's key is not shown
    assert detail["audio"].endswith("audio/q1.wav")
    assert set(detail["raw"]) == {"output record (outputs.jsonl)", "scores (items.jsonl)", "item"}
    assert detail["raw"]["output record (outputs.jsonl)"]["key"] == key


def test_the_page_escapes_what_the_run_holds(views):
    key = item_table.item_rows(views)[0].key
    views[0].outputs[key]["output"] = "[ANSWER]\n<script>alert(1)</script>"
    page = item_page.item_detail(views[0], key)["page"]
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_wilson_interval_of_the_fixture_is_right():
    # The fixture's interval is the real Wilson interval of 2 of 3 (so the page shows a true number).
    from statsmodels.stats.proportion import proportion_confint

    lo, hi = proportion_confint(2, 3, alpha=0.05, method="wilson")
    assert [round(lo, 4), round(hi, 4)] == WILSON_2_OF_3


def test_columns_empty_in_every_row_are_left_out(views):
    headers, rows = leaderboard.filled_columns(leaderboard.LEADERBOARD_COLUMNS, leaderboard.leaderboard(views))
    # No ARIA, reasoning mode, AudioSpan Rubric, Chain or R_TP in these runs: those headers would wrap into
    # tall columns of letters beside the long accuracy cells.
    assert headers == ["run", "benchmark", "model", "condition", "template", "n", "accuracy (rule)", "MMAR Rubrics"]
    assert rows[1][:6] == ["model-b", "mmar", "model-b", "full", "aria_cot", "3"]
    assert leaderboard.filled_columns(["a", "b"], []) == (["a", "b"], [])


def test_the_recorded_official_verdict_is_read_not_recomputed(views):
    # `audioreason score` records the official scorer's verdict per item (official_scorer_correct); the explorer
    # shows that record. Flipped here, so a recomputed verdict would disagree with what the page shows.
    view, key = views[1], item_table.item_rows(views)[4].key
    computed = item_table.item_verdicts(view, key)["official scorer"]
    for verdict in view.rows[key]["accuracy"].values():
        verdict["official_scorer_correct"] = not computed
    assert item_table.item_verdicts(view, key)["official scorer"] is (not computed)


class _CountedRows(dict):
    """A run's rows that count how often they are read whole (``values()``)."""

    scans = 0

    def values(self):
        type(self).scans += 1
        return super().values()


def _unknown_benchmark_run(folder, n):
    """A scored run of ``n`` items on a benchmark the explorer does not know, one rule, right on even items."""
    folder.mkdir()
    rows = [
        {
            "key": f"k{i}",
            "id": f"q{i}",
            "model": "m",
            "condition": "full",
            "template": "plain",
            "accuracy": {"letter": {"choice": "A", "method": "exact", "correct": i % 2 == 0}},
        }
        for i in range(n)
    ]
    (folder / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (folder / "run.json").write_text(json.dumps({"config": {"model": "m", "benchmark": "custom"}}))
    (folder / "results.json").write_text(
        json.dumps(
            {
                "run": {"model": "m", "benchmark": "custom"},
                "scorers": {
                    "accuracy": {
                        "status": "ok",
                        "results": [
                            {
                                "model": "m",
                                "condition": "full",
                                "template": "plain",
                                "rule": "letter",
                                "accuracy": 0.5,
                                "n": n,
                            }
                        ],
                    }
                },
            }
        )
    )
    return folder


def test_opening_a_run_reads_its_rows_a_fixed_number_of_times_whatever_its_size(tmp_path, monkeypatch):
    # The benchmark's own rule of a benchmark the explorer does not know comes from the rows: found once per
    # run, not once per row (which made opening a run quadratic in its items: benchmarks/explorer.py times it).
    keyed = run_view._keyed
    monkeypatch.setattr(run_view, "_keyed", lambda path: _CountedRows(keyed(path)))
    scans, views = {}, []
    for n in (10, 40):
        _CountedRows.scans = 0
        (view,), errors = runs.open_runs([_unknown_benchmark_run(tmp_path / f"run{n}", n)])
        assert errors == [] and [r.cells[9] for r in item_table.item_rows([view])][:2] == ["letter yes", "letter no"]
        scans[n] = _CountedRows.scans
        views.append(view)
    assert scans[10] == scans[40] < 10
    # the rule found is the run's one rule: two runs differ on it where their verdicts do
    assert item_table.differing(views[0], "k1", views[1], "k1") == []
    views[1].rows["k1"]["accuracy"]["letter"]["correct"] = True
    assert item_table.differing(views[0], "k1", views[1], "k1") == ["letter"]
