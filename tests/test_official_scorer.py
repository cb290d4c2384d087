"""The "official MMAR/MMAU scorer" accuracy of `audioreason score` is what the official scripts compute on what
they read: MMAU's evaluation.py matches the whole raw reply (`model_output`), MMAR's code/evaluation.py matches
`answer_prediction`, the reply as MMAR's inference scripts save it. The string match on the CoT's Answer slot
is a separate, named rule (`official_slot`); how far the two differ is measured on MMAU test-mini (README)."""

import json
import re
from pathlib import Path

import pytest
from test_score_results import ITEMS, build_hand_run

from audioreason.cli import main
from audioreason.evaluation.score import RESULTS_FILE, ScoreOptions, score_run
from audioreason.evaluation.sections import OutputSet, accuracy_section, extraction_rules
from audioreason.evaluation.table import result_rows
from audioreason.text.cot import LETTERS

MMAU = Path(__file__).parent / "data" / "mmau-test-mini.json"
COT = "[PERCEPTION]\nEntities: {e}\nDescription: {d}\n[ANALYSIS]\n{a}\n[REASONING]\n{r}\n[ANSWER]\n{answer}"


def official_script(answer, prediction, choices):
    """The official scripts' rule, written again from their text: lower-cased \\b\\w+\\b token sets; correct
    when the prediction has tokens, holds every gold token, and none of the tokens that a choice whose token
    set differs from the gold's has beyond the gold's."""
    tokens = lambda s: set(re.findall(r"\b\w+\b", s.lower()))  # noqa: E731
    predicted, gold = tokens(prediction), tokens(answer)
    wrong = set().union(*(tokens(c) - gold for c in choices if tokens(c) != gold))
    return bool(predicted) and gold <= predicted and not predicted & wrong


def output_set(template, outputs):
    records = [
        {"key": f"k{i}", "id": item_id, "output": output, "error": None if output is not None else "failed"}
        for i, (item_id, output) in enumerate(outputs)
    ]
    return OutputSet("m", "full", template, "hash", records)


# Item "q": gold Man among Man / Woman / Child / Robot.
ITEM = {"q": {"id": "q", "question": "Who speaks?", "choices": ["Man", "Woman", "Child", "Robot"], "answer": "Man"}}
NAMES_OTHER = COT.format(
    e="voice", d="Low pitch.", a="Could be a woman or a man.", r="Too low for a woman.", answer="(A) Man"
)
NEUTRAL = COT.format(e="voice", d="Low pitch.", a="Low voices are typical.", r="Low pitch decides.", answer="(A) Man")


def test_cot_reasoning_that_names_another_choice_by_hand():
    # Whole reply: NAMES_OTHER holds "woman" (a wrong choice's token): wrong; NEUTRAL holds "man" and no wrong
    # choice's token: right; the failed output is an empty reply: wrong. Official scorer 1 of 3.
    # Answer slot "(A) Man" = {a, man} for both: official_slot 2 of 3 (the failed one unanswered).
    outputs = [("q", NAMES_OTHER), ("q", NEUTRAL), ("q", None)]
    for template in ("aria_cot", "plain", "aria_plain", "audiospan"):  # every template
        (entry,) = accuracy_section([output_set(template, outputs)], ITEM, "official_slot").results
        assert (entry["official_scorer_correct"], entry["official_scorer_accuracy"]) == (1, pytest.approx(1 / 3))
        assert (entry["rule"], entry["correct"], entry["unanswered"]) == ("official_slot", 2, 1)
        assert entry["accuracy"] == pytest.approx(2 / 3)
    item = ITEM["q"]
    assert [official_script(item["answer"], o or "", item["choices"]) for _, o in outputs] == [False, True, False]
    # the template's own rule (aria_cot: the [ANSWER] tag) carries the same official-scorer number
    (aria,) = accuracy_section([output_set("aria_cot", outputs)], ITEM, "auto").results
    assert (aria["rule"], aria["correct"], aria["official_scorer_correct"]) == ("aria", 2, 1)


def test_extraction_all_reports_the_official_scorer_once_per_set(tmp_path):
    # MMAR item 0 (gold Open Grassland): the reasoning names Mountain Canyon, so the official script reads a
    # wrong choice's tokens in the reply; item 1's reply names only its gold in the slot and in the text.
    outputs = {
        ("full", 0): (
            COT.format(
                e="singing", d="Long notes.", a="Not a Mountain Canyon.", r="Open land.", answer="(C) Open Grassland"
            ),
            None,
        ),
        ("full", 1): (
            COT.format(e="voice", d="Calm.", a="He wants more.", r="So: too little.", answer="(A) Too little"),
            None,
        ),
    }
    run_dir = build_hand_run(tmp_path, template="aria_cot", outputs=outputs)
    results = score_run(run_dir, ScoreOptions(scorers=["accuracy"], extraction="all", progress=False))
    assert json.loads((run_dir / RESULTS_FILE).read_text()) == results
    entries = results["scorers"]["accuracy"]["results"]
    assert [e["rule"] for e in entries] == extraction_rules("aria_cot", "all")
    assert {(e["official_scorer_correct"], e["official_scorer_accuracy"]) for e in entries} == {(1, 0.5)}
    slot = next(e for e in entries if e["rule"] == "official_slot")
    assert (slot["correct"], slot["accuracy"]) == (2, 1.0)
    texts = [o for (_, _), (o, _) in sorted(outputs.items())]
    assert sum(official_script(ITEMS[i]["answer"], t, ITEMS[i]["choices"]) for i, t in enumerate(texts)) == 1
    rows = [r for r in result_rows(results) if r.scorer.startswith(("accuracy:", "answers:"))]
    assert [r.scorer for r in rows][:2] == ["accuracy: official MMAR/MMAU scorer", "answers: aria"]
    assert [r.scorer for r in rows].count("accuracy: official MMAR/MMAU scorer") == 1
    assert rows[0].value == 0.5 and "whole raw reply" in rows[0].backbone
    assert next(r for r in rows if r.scorer == "answers: official_slot").value == 1.0


def test_the_old_rule_name_is_a_clear_error(tmp_path, capsys):
    run_dir = build_hand_run(tmp_path, template="plain", outputs={("full", 0): ("Open Grassland", None)})
    with pytest.raises(SystemExit) as stop:
        main(["score", str(run_dir), "--scorers", "accuracy", "--extraction", "official", "--no-progress"])
    assert stop.value.code != 0
    err = capsys.readouterr().err
    assert "'official' is now 'official_slot'" in err and len(err.strip().splitlines()) == 1


def mmau_outputs(item):
    """Three synthesized four-step CoT replies per item: the gold after reasoning that names and rules out
    another choice, the gold after reasoning that names no choice, another choice after reasoning that names
    the gold."""
    choices, gold = item["choices"], item["answer"]
    other = next(c for c in choices if c.strip() != gold.strip())
    letter = lambda c: LETTERS[choices.index(c)]  # noqa: E731
    common = dict(e="the clip", d="Sounds in order.")
    yield (
        "names_other",
        COT.format(
            **common,
            a=f"It could be {other} or {gold}.",
            r=f"Not {other}: the cues fit {gold}.",
            answer=f"({letter(gold)}) {gold}",
        ),
    )
    yield (
        "neutral",
        COT.format(**common, a="The cues are clear.", r="One choice fits the cues.", answer=f"({letter(gold)}) {gold}"),
    )
    yield (
        "wrong",
        COT.format(
            **common,
            a=f"It could be {gold} or {other}.",
            r=f"Not {gold}: the cues fit {other}.",
            answer=f"({letter(other)}) {other}",
        ),
    )


def test_measured_gap_between_the_official_scorer_and_the_slot_rule_on_mmau_test_mini():
    """Golden numbers for README.md ("Scoring a run", answer extraction): 3,000 synthesized CoT replies."""
    items = {it["id"]: it for it in json.loads(MMAU.read_text("utf-8"))}
    assert len(items) == 1000
    counts = {}
    for kind in ("names_other", "neutral", "wrong"):
        outputs = [(i, dict(mmau_outputs(it))[kind]) for i, it in items.items()]
        (entry,) = accuracy_section([output_set("aria_cot", outputs)], items, "official_slot").results
        assert entry["official_scorer_correct"] == sum(
            official_script(items[i]["answer"], o, items[i]["choices"]) for i, o in outputs
        )
        counts[kind] = (entry["official_scorer_correct"], entry["correct"])
    # (official scorer on the whole reply, official_slot rule on the Answer slot), of 1,000 each
    assert counts == {"names_other": (8, 958), "neutral": (801, 958), "wrong": (8, 0)}
    assert sum(c[0] for c in counts.values()) == 817 and sum(c[1] for c in counts.values()) == 1916
