"""The explorer's data (``audioreason.report``: ``runs``, ``leaderboard``, ``item_table``, ``item_page``,
``bundles``) on the scripted AudioSpan run of tests/test_report_runs.py (known numbers) and the demo's run:
leaderboard, filters, an item's answers and timeline, bundles, uploads."""

import json
import zipfile

import pytest

from audioreason.report import bundles, item_page, item_table, leaderboard, run_view, runs


@pytest.fixture(scope="module")
def view(audiospan_run):
    return runs.open_run(audiospan_run)


def _rows(view, **filters):
    return [
        {**dict(zip(item_table.ITEM_COLUMNS, r.cells)), "key": r.key}
        for r in item_table.item_rows([view], filters or None)
    ]


def test_leaderboard_shows_each_scorers_headline(view):
    [row] = [dict(zip(leaderboard.LEADERBOARD_COLUMNS, r)) for r in leaderboard.leaderboard([view])]
    # 12 MCQs (6 native, all right; 6 anchor links, 2 right): 8/12. Chain (Eq. 3) 1/3 beside the uniform guess
    # over 4 options (1/4 + 1/16 + 1/64) / 3 = 0.1094; Rubric 0.85 (tests/test_report_runs.py).
    assert (row["model"], row["condition"], row["n"]) == ("scripted-model", "full", "12")
    # AudioSpan's own rule, with its Wilson interval (8 of 12, by hand: centre 0.6263, half-width 0.2356)
    assert row["accuracy (rule)"] == "0.6667 [0.3906, 0.8619] (exact_letter, AudioSpan App. C.1)"
    # Two chains (2/3 and 0): a resample's mean is 0, 1/3 or 2/3, so the percentile interval is [0, 2/3]
    assert row["Chain"] == "0.3333 [0.0000, 0.6667] (random 0.1094)"
    # Every item's Rubric is 0.85: no spread to resample, said so; one rater, so no rater sd
    assert row["AudioSpan Rubric"] == (
        "0.8500 [no interval: all 6 items have the same value: the bootstrap "
        "distribution is a single point]; rater sd n/a (1 rater)"
    )
    assert row["ARIA"] == row["MMAR Rubrics"] == ""  # not scored in this run: empty, not 0


def test_filters_select_items_by_operation_and_tier(view):
    assert item_table.facet_values([view])["operation"] == ["addition", "deletion"]
    deletion = _rows(view, operation=["deletion"])
    assert [r["item"] for r in deletion] == [f"zh-show-002/anchor/{k}" for k in (1, 2, 3)]
    assert [r["correct"] for r in deletion] == ["exact_letter yes", "exact_letter yes", "exact_letter no"]  # P, U; R
    assert {r["tier"] for r in _rows(view, duration_tier=["S"])} == {"S"}
    assert len(_rows(view)) == 18  # 6 native MCQs, 6 anchor links, 6 OEQs


def test_an_anchor_link_shows_its_answer_and_the_edit_on_the_timeline(view):
    key = next(r["key"] for r in _rows(view) if r["item"] == "zh-show-002/anchor/1")
    detail = item_page.item_detail(view, key)
    assert detail["answers"] == [["exact_letter", "y", "exact", "yes"]]
    # The deletion at 1.0-1.6 s of a 4.0 s recording: left 25%, width 15%.
    assert "anchor 1: deletion: 1.0-1.6 s" in detail["timeline"]
    assert "left:25.000%;width:15.000%" in detail["timeline"]
    assert detail["audio"].endswith("zh-show-002.wav")


def test_an_open_question_shows_its_timed_criteria(view):
    key = next(r["key"] for r in _rows(view) if r["item"] == "en-talk-001/native/P/oeq")
    detail = item_page.item_detail(view, key)
    assert "criterion 2: Locates it: 1.5-2.5 s" in detail["timeline"]
    assert detail["output"] == "At 00:02 the speaker explains the point; a detail follows."
    assert [v[2:] for v in detail["verdicts"]] == [  # from the run's items.jsonl: criterion, verdict, reason
        ["0", "semantic correct, temporal none", "states the point"],
        ["1", "semantic none, temporal correct", "02:00 is in range"],
        ["2", "semantic partial, temporal wrong", "detail vague, time off"],
    ]


def test_a_bundle_opens_without_the_benchmark_folder(demo_session, tmp_path):
    bundle = bundles.export_bundle(demo_session[0] / "cascade-run", tmp_path / "bundle")
    items = [json.loads(line) for line in (bundle / run_view.BENCHMARK_ITEMS_FILE).read_text().splitlines()]
    assert len(items) == 12 and all((bundle / it["audio"]).is_file() for it in items)
    reopened = runs.open_run(bundle)
    assert reopened.notes == [] and len(reopened.items) == 12
    first = item_table.item_rows([reopened])[0]
    detail = item_page.item_detail(reopened, first.key)
    assert "**Q:**" in detail["header"] and detail["audio"].startswith(str(bundle))


def test_uploads_are_staged_as_runs_or_refused_by_name(demo_session, tmp_path):
    run = demo_session[0] / "cascade-run"
    archive = tmp_path / "run.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for name in ("run.json", "outputs.jsonl", "results.json", "items.jsonl"):
            z.write(run / name, f"my-run/{name}")
    [staged] = bundles.stage_uploads([archive], tmp_path / "staged")
    assert staged.name == "my-run" and runs.open_run(staged).results.entries
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(ValueError, match="notes.txt: give a zipped run folder"):
        bundles.stage_uploads([tmp_path / "notes.txt"], tmp_path / "staged2")
    bad = tmp_path / "evil.zip"
    with zipfile.ZipFile(bad, "w") as z:
        z.writestr("../escape/results.json", "{}")
    with pytest.raises(ValueError, match="unsafe paths in the zip"):
        bundles.stage_uploads([bad], tmp_path / "staged3")
