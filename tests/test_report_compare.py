"""`audioreason report` on several scored runs: the Comparison section (a leaderboard marking neighbours that are
not significantly different, a table per pair of runs) on hand-built runs with hand-computed McNemar p-values."""

import pytest
from test_compare import ITEMS, scored_run

from audioreason.report.build import build_report
from audioreason.report.load import Entry
from audioreason.report.tables import _neighbour_mark

IDS = [0, 1, 2, 3, 6, 7]  # items whose wrong choice no string match mistakes for the gold one


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    root = tmp_path_factory.mktemp("report_compare")
    runs = [
        scored_run(root, "a", "model-a", right=set(IDS), ids=IDS),  # 6 of 6
        scored_run(root, "b", "model-b", right=set(), ids=IDS),  # 0 of 6
        scored_run(root, "c", "model-c", right={0, 1}, ids=IDS),
    ]  # 2 of 6
    summary = build_report([str(r) for r in runs], root / "report.html")
    return runs, summary, (root / "report.html").read_text(), (root / "report.md").read_text()


def test_the_leaderboard_marks_neighbours_by_mcnemar(report):
    _, summary, _, md = report
    assert "leaderboard" in summary["tables"] and "comparison-1" in summary["tables"]
    board = md.split("## Leaderboard")[1].split("\n## ")[0]
    rows = [line for line in board.splitlines() if line.startswith("| mmar")]
    # a 1.0000, c 0.3333, b 0.0000 (official scorer). a vs c: b = 4, c = 0: p = 2/2^4 = 0.125;
    # c vs b: b = 2, c = 0: p = 2/2^2 = 0.5: both not significant at 0.05
    assert [r.split(" | ")[3] for r in rows] == ["1.0000", "0.3333", "0.0000"]
    assert rows[0].endswith("| 6 |  |")  # the best has no row above
    assert "not significantly different (McNemar exact p = 0.125, 6 shared items)" in rows[1]
    assert "not significantly different (McNemar exact p = 0.5, 6 shared items)" in rows[2]
    assert "[0.6097, 1.0000]" in rows[0]  # Wilson 6 of 6


def test_a_table_per_pair_of_runs(report):
    _, summary, page, md = report
    assert sum(key.startswith("comparison-") for key in summary["tables"]) == 3  # a-b, a-c, b-c
    ab = md.split("Comparison: A = model-a vs B = model-b")[1].split("\n## ")[0]
    (line,) = [r for r in ab.splitlines() if r.startswith("| accuracy: accuracy (aria)")]
    # a right on all 6, b on none: A - B = 1; McNemar b = 6, c = 0: p = 2/2^6 = 0.03125
    assert "+1.0000" in line and "b=6, c=0, p=0.03125" in line and "6 right->wrong" in line
    assert ITEMS[0]["id"] in line
    assert 'id="comparison"' in page


def entry(model, acc, ci, source):
    return Entry(
        "accuracy",
        {
            "rule": "aria",
            "official_scorer_accuracy": acc,
            "n": 2,
            "uncertainty": {"official_scorer_accuracy": {"ci95": ci}},
        },
        model,
        "mmar",
        "full",
        "aria_cot",
        source,
    )


def test_without_shared_items_the_intervals_decide():
    def no_pair(a, b):
        return "no shared item"

    above = (entry("x", 0.9, [0.6, 0.98], "x.json"), "official_scorer_accuracy", "official_scorer_accuracy")
    overlapping = (entry("y", 0.5, [0.2, 0.8], "y.json"), "official_scorer_accuracy", "official_scorer_accuracy")
    apart = (entry("z", 0.1, [0.0, 0.4], "z.json"), "official_scorer_accuracy", "official_scorer_accuracy")
    assert (
        _neighbour_mark(above, overlapping, no_pair)
        == "not significantly different (no shared items: 95% intervals overlap)"
    )
    assert _neighbour_mark(above, apart, no_pair) == "different (no shared items: 95% intervals do not overlap)"
