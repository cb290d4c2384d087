"""`audioreason score` on a hand-built AudioSpan run (the synthetic raw folder of the data tests: 6 native MCQs,
6 open-ended items, 2 anchor chains; the C.1 template): native MCQ Accuracy, the anchor Chain, exact-letter
accuracy and the judged OEQ Rubric against a scripted judge server, checked by hand; the MMAR and ARIA scorers
named as not fitting."""

import json

import pytest
from fixtures.audiospan_synth import write_audiospan_folder
from judge_server import running_server

from audioreason.evaluation.score import JudgeOptions, ScoreOptions, score_run
from audioreason.inference.prompts import get_template
from audioreason.inference.runner import load_items

MODEL = "hand-model"
# Gold is C for native MCQs ("option C") and for anchor links ("y").
REPLIES = {
    "en-talk-001/native/P/mcq": "C",
    "en-talk-001/native/U/mcq": "C",
    "en-talk-001/native/R/mcq": "B",
    "zh-show-002/native/P/mcq": "C",
    "zh-show-002/native/U/mcq": "c",
    "zh-show-002/native/R/mcq": "C",
    "en-talk-001/anchor/1": "C",
    "en-talk-001/anchor/2": "C",
    "en-talk-001/anchor/3": "C",
    "zh-show-002/anchor/1": "C",
    "zh-show-002/anchor/2": "A",
    "zh-show-002/anchor/3": "C",
}
# Every OEQ: criterion 0 (essential) semantically correct, 1 (essential, localization) temporally correct,
# 2 (supporting, with a time range) partial and at the wrong time.
VERDICT = {
    "criteria": [
        {"index": 0, "semantic": "correct", "temporal": "none", "reason": "stated"},
        {"index": 1, "semantic": "none", "temporal": "correct", "reason": "located"},
        {"index": 2, "semantic": "partial", "temporal": "wrong", "reason": "half"},
    ]
}
SCRIPT = {"scenarios": {"span-judge": [{"reply": json.dumps(VERDICT)}]}}


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    root = tmp_path_factory.mktemp("audiospan_run")
    raw = write_audiospan_folder(root / "raw")
    template = get_template("audiospan")
    run_dir = root / "run"
    run_dir.mkdir()
    records = []
    for index, item in enumerate(load_items("audiospan", str(raw))):
        reply = REPLIES.get(item["id"], "At 00:02 the speaker explains it, as the host says at the start.")
        records.append(
            {
                "key": json.dumps([MODEL, "full", template.name, item["id"]]),
                "id": item["id"],
                "index": index,
                "model": MODEL,
                "condition": "full",
                "template": template.to_dict(),
                "output": reply,
                "error": None,
            }
        )
    (run_dir / "outputs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (run_dir / "run.json").write_text(
        json.dumps(
            {
                "config": {"benchmark": "audiospan", "data": str(raw)},
                "models": {"main": {"name": MODEL}},
                "status": "finished",
            }
        )
    )
    with running_server(SCRIPT, root / "server") as server:
        judge = JudgeOptions(model="span-judge", base_url=server.base_url, api_key_env="SPAN_TEST_KEY")
        results = score_run(run_dir, ScoreOptions(scorers=["auto"], judge=judge, progress=False))
        return results, server.requests(), run_dir


def test_the_multiple_choice_scores_by_hand(scored):
    results, _, _ = scored
    (accuracy,) = results["scorers"]["accuracy"]["results"]
    # C.1 exact letters over the 12 MCQs: 4 native + 3 + 2 anchor links right; "c" is unparsed.
    assert (accuracy["rule"], accuracy["correct"], accuracy["n"], accuracy["unanswered"]) == ("exact_letter", 9, 12, 1)
    (entry,) = results["scorers"]["anchor_chain"]["results"]
    assert entry["native_mcq"]["accuracy"] == pytest.approx(4 / 6) and entry["native_mcq"]["unparsed"] == 1
    # Chains: all three links right = 1; right, wrong, right = credited up to the first error = 1/3.
    assert entry["chain"]["chain"] == pytest.approx((1 + 1 / 3) / 2) and entry["chains_incomplete"] == 0
    assert entry["parse"] == "exact"


def test_the_open_ended_rubric_by_hand(scored):
    results, requests, _ = scored
    (entry,) = results["scorers"]["audiospan_rubric"]["results"]
    # (1*1 + 1*1 + 0.5 * 1[0.5 > 0] * (0.5 + 0) / 2) / (1 + 1 + 0.5) = 2.125 / 2.5 = 0.85 for each of the 6 items.
    assert entry["rubric"] == pytest.approx(0.85) and (entry["n"], entry["n_scored"], entry["n_failed"]) == (6, 6, 0)
    assert entry["raters"] == 1 and entry["judges"] == ["span-judge"]
    assert len(requests) == 6  # the items' own requests only: no extra reachability request


def test_the_items_table_keeps_each_criterion_verdict(scored):
    _, _, run_dir = scored
    rows = [json.loads(line) for line in (run_dir / "items.jsonl").read_text().splitlines()]
    open_ended = [r for r in rows if "audiospan_rubric" in r]
    assert len(open_ended) == 6
    for row in open_ended:  # what the explorer shows: each rater's verdict per criterion, with its justification
        (rater,) = row["audiospan_rubric"]["judge"]
        assert row["audiospan_rubric"]["rubric"] == pytest.approx(0.85) and rater["status"] == "ok"
        assert [(c["index"], c["semantic"], c["temporal"], c["reason"]) for c in rater["verdict"]["criteria"]] == [
            (0, "correct", "none", "stated"),
            (1, "none", "correct", "located"),
            (2, "partial", "wrong", "half"),
        ]


def test_scorers_for_other_benchmarks_and_templates_are_named_not_run(scored):
    results, _, _ = scored
    assert {k: v["status"] for k, v in results["not_run"].items()} == {
        "aria": "not_applicable",
        "mmar_rubrics": "not_applicable",
        "text_prior_decomposition": "not_applicable",
    }
    assert results["not_run"]["mmar_rubrics"]["reason"].endswith("the benchmark is audiospan")


def test_an_open_ended_item_without_criteria_is_counted_and_named(scored):
    # The same six OEQs, the first with its rubric emptied: five judged (0.85 each), one counted and named.
    from test_report_runs import ScriptedJudge, _oeq_verdicts

    from audioreason.evaluation.score import read_run
    from audioreason.evaluation.table import format_table, result_rows
    from audioreason.scorers.audiospan_rubric.declaration import audiospan_rubric_section
    from audioreason.scorers.audiospan_rubric.scorer import AudioSpanRubricScorer

    _, _, run_dir = scored
    run = read_run(run_dir)
    from audioreason.text.audiospan_templates import item_format

    oeq = [i for i, item in run.items.items() if item_format(item) == "oeq"]
    emptied = sorted(oeq)[0]
    items = {i: ({**item, "rubric": []} if i == emptied else item) for i, item in run.items.items()}
    judge = ScriptedJudge(_oeq_verdicts)
    section = audiospan_rubric_section(lambda: AudioSpanRubricScorer(judge), run.sets, items)
    (entry,) = section.results
    assert entry["rubric"] == pytest.approx(0.85) and entry["n"] == 5 and judge.calls == 5
    assert (entry["no_rubric"], entry["no_rubric_ids"]) == (1, [emptied])
    assert section.notes == [f"full/audiospan: 1 open-ended item(s) without rubric criteria, not judged: {emptied}"]
    key = next(r["key"] for s in run.sets for r in s.records if r["id"] == emptied)
    assert section.items[key] == {"status": "no rubric (not judged)"}
    results = {
        "scorers": {"audiospan_rubric": {**section.to_dict()}},
        "sets": [],
        "uncertainty_options": {"confidence": 0.95},
    }
    line = next(line for line in format_table(result_rows(results)).splitlines() if "Rubric (Eq. 2)" in line)
    assert f"1 item(s) without rubric criteria left out: {emptied}" in line
