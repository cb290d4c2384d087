"""MMAR-Rubrics formulas (audioreason.scorers.mmar_rubrics.formulas) against hand-computed values on real MMAR items
(tests/fixtures/mmar_subset.jsonl: 18 records copied from MMAR-meta.jsonl, with their rubrics)."""

import json
from pathlib import Path

import pytest
from fixtures.shell_helpers import NeverCalled

from audioreason.judges import aggregate
from audioreason.scorers.mmar_rubrics.formulas import (
    FAILED,
    GATED,
    JUDGED,
    ItemScore,
    StatisticUnavailable,
    groups_of,
    instance_score,
    krippendorff_alpha,
    rater_score,
    score_table,
    summarize,
)
from audioreason.text.answers import official_string_match

FIXTURE = Path(__file__).parent / "fixtures" / "mmar_subset.jsonl"
ITEMS = [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_fixture_items_are_real_mmar_records_with_five_binary_criteria():
    assert len(ITEMS) == 18
    for item in ITEMS:
        assert len(item["rubric"]) == 5 and item["thinking"]
        assert all(c["choices"] == [0, 1] for c in item["rubric"])


def test_rater_score_is_satisfied_over_sum_of_max_options():
    maxima = [max(c["choices"]) for c in ITEMS[0]["rubric"]]
    assert rater_score([1, 0, 1, 1, 0], maxima) == pytest.approx(3 / 5)
    assert rater_score([0, 0, 0, 0, 0], maxima) == 0.0
    assert rater_score([2, 1], [2, 3]) == pytest.approx(3 / 5)  # non-binary options: sum / sum of maxima
    with pytest.raises(ValueError):
        rater_score([1, 1], maxima)


def test_instance_score_drops_highest_and_lowest_of_five():
    # raters satisfied 5, 4, 3, 1, 0 of 5 criteria: drop 1.0 and 0.0, average 0.8, 0.6, 0.2
    assert instance_score([1.0, 0.8, 0.6, 0.2, 0.0]) == pytest.approx((0.8 + 0.6 + 0.2) / 3)
    assert instance_score([0.6, 0.6, 0.6, 0.6, 0.6]) == pytest.approx(0.6)
    assert instance_score([0.2, 1.0, 1.0, 1.0, 1.0]) == pytest.approx(1.0)
    # the judge layer's aggregation is exactly this (middle 3 of 5)
    agg = aggregate([0.4, 1.0, 0.0, 0.8, 0.6], "trimmed_mean", trim=1)
    assert agg.value == pytest.approx((0.4 + 0.8 + 0.6) / 3) and agg.n_used == 3 and agg.trimmed == 1


def test_instance_score_with_failed_raters():
    assert instance_score([1.0, None, 0.6, 0.2, 0.4]) == pytest.approx((0.6 + 0.4) / 2)  # 4 valid: middle 2
    assert instance_score([1.0, None, 0.6, None, 0.2]) == pytest.approx(0.6)  # 3 valid: the median
    assert instance_score([None, None, 0.6, None, 0.2]) == pytest.approx(0.4)  # 2 valid: the mean
    assert instance_score([None] * 5) is None  # none valid: no score, never 0


def test_gate_on_real_items():
    item = ITEMS[0]
    wrong = next(c for c in item["choices"] if c != item["answer"])
    letter = "ABCDEF"[item["choices"].index(item["answer"])]
    assert official_string_match(item["answer"], item["answer"], item["choices"])
    assert official_string_match(item["answer"], f"The answer is {item['answer'].lower()}.", item["choices"])
    assert not official_string_match(item["answer"], wrong, item["choices"])
    assert not official_string_match(item["answer"], letter, item["choices"])  # a bare letter is wrong


def _items(statuses):
    """ItemScore rows over the first len(statuses) real items: (status, score)."""
    rows = []
    for item, (status, score) in zip(ITEMS, statuses):
        rows.append(
            ItemScore(
                item["id"],
                status != GATED,
                status,
                score,
                [score] * 5 if status == JUDGED else ([None] * 5 if status == FAILED else []),
                5 if status == JUDGED else 0,
                groups_of(item),
            )
        )
    return rows


# items 0-5: judged 0.6, gated, judged 1.0, failed, judged 0.2, gated
STATUSES = [(JUDGED, 0.6), (GATED, 0.0), (JUDGED, 1.0), (FAILED, None), (JUDGED, 0.2), (GATED, 0.0)]


def test_compat_drops_failed_items_from_every_denominator():
    s = summarize(_items(STATUSES), compat=True)
    assert s["n"] == 5 and s["n_rubrics"] == 5 and s["n_dropped"] == 1 and s["n_failed"] == 1
    assert s["rubrics"] == pytest.approx((0.6 + 0 + 1.0 + 0.2 + 0) / 5)  # 0.36
    assert s["rubrics_judged_only"] == s["rubrics_upper"] == s["rubrics"]  # nothing failed is counted
    assert s["accuracy"] == pytest.approx(3 / 5)  # 0.6


def test_default_keeps_failed_items_in_accuracy_and_counts_them():
    table = score_table(_items(STATUSES), compat=False)
    assert table["n"] == 6 and table["n_rubrics"] == 6 and table["n_failed"] == 1 and table["n_dropped"] == 0
    # a failed item can only lower the headline: it counts at 0; the judged-only mean and the upper bound
    # (the failed item at full marks) stand beside it
    assert table["rubrics"] == pytest.approx(1.8 / 6)  # 0.3
    assert table["rubrics_judged_only"] == pytest.approx(1.8 / 5)  # 0.36
    assert table["rubrics_upper"] == pytest.approx(2.8 / 6)  # 0.4667
    assert table["accuracy"] == pytest.approx(4 / 6)
    assert table["failed_ids"] == [ITEMS[3]["id"]]
    assert (table["n_judged"], table["n_gated"]) == (3, 2)


def test_per_group_tables_by_hand():
    rows = _items(STATUSES)
    table = score_table(rows, compat=False)
    # real groups of items 0-5
    by_hand = {}
    for item, (status, score) in zip(ITEMS, STATUSES):
        g = by_hand.setdefault(item["modality"], {"sum": 0.0, "scored": 0, "correct": 0, "n": 0})
        g["n"] += 1
        g["correct"] += status != GATED
        if status != FAILED:
            g["sum"] += score
    assert set(table["modality"]) == set(by_hand)
    for name, g in by_hand.items():
        row = table["modality"][name]
        assert row["n"] == g["n"]
        assert row["accuracy"] == pytest.approx(g["correct"] / g["n"])
        assert row["rubrics"] == pytest.approx(g["sum"] / g["n"])
    # the literal values for the fixture: items 0 and 1 are mix-music-speech, 2 is music, 3 speech, 4 sound
    assert [ITEMS[i]["modality"] for i in range(6)] == [
        "mix-music-speech",
        "mix-music-speech",
        "music",
        "speech",
        "sound",
        "mix-sound-speech",
    ]
    assert table["modality"]["mix-music-speech"]["rubrics"] == pytest.approx(0.3)  # (0.6 + 0) / 2
    assert table["modality"]["mix-music-speech"]["accuracy"] == pytest.approx(0.5)
    assert table["modality"]["speech"]["rubrics"] == 0.0 and table["modality"]["speech"]["n_failed"] == 1
    assert table["modality"]["speech"]["rubrics_judged_only"] is None
    assert table["modality"]["speech"]["rubrics_upper"] == 1.0
    compat = score_table(rows, compat=True)
    assert compat["modality"]["speech"]["n"] == 0 and compat["modality"]["speech"]["accuracy"] is None
    # categories: Semantic Layer holds items 0 (0.6) and 3 (failed)
    assert [ITEMS[i]["category"] for i in (0, 3)] == ["Semantic Layer", "Semantic Layer"]
    assert table["category"]["Semantic Layer"]["rubrics"] == pytest.approx(0.3)  # (0.6 + failed at 0) / 2
    assert table["category"]["Semantic Layer"]["rubrics_judged_only"] == pytest.approx(0.6)
    assert table["category"]["Semantic Layer"]["accuracy"] == pytest.approx(1.0)
    assert compat["category"]["Semantic Layer"]["n"] == 1
    assert set(table["sub-category"]) == {ITEMS[i]["sub-category"] for i in range(6)}


def test_metric_card_holds_the_full_prompts():
    from audioreason.scorers.mmar_rubrics import generation as g
    from audioreason.scorers.mmar_rubrics import scorer as m

    card = (Path(__file__).resolve().parents[1] / "metrics" / "mmar_rubrics" / "README.md").read_text(encoding="utf-8")
    assert card.startswith("---\n") and "\ntitle: MMAR-Rubrics\n" in card.split("---")[1]
    for text in (
        m.SYSTEM_PROMPT,
        m.USER_TEMPLATE,
        m.CRITERION_TEMPLATE,
        m.SYSTEM_LEVEL_PROMPT,
        g.RUBRIC_GEN_TEMPLATE,
        g.RUBRIC_GEN_REASK,
        g.RUBRIC_GEN_SYSTEM_PROMPT.format(k=5),
        m.SYSTEM_LEVEL_TEMPLATE,
    ):
        assert text in card


def test_preference_agreement_counts():
    from audioreason.scorers.mmar_rubrics.formulas import preference_agreement

    counts = preference_agreement([0.8, 0.4, 0.6, None, 1.0], [0.2, 0.6, 0.6, 0.4, 0.8])
    assert counts == {"C>R": 2, "C<R": 1, "C=R": 1, "skipped": 1}


REAL = Path(__file__).parent / "data" / "MMAR-meta.jsonl"


def test_every_real_mmar_item_gates_its_gold_answer_and_builds_a_schema():
    from audioreason.judges import VerdictSchema
    from audioreason.scorers.mmar_rubrics.scorer import build_messages

    items = [json.loads(line) for line in REAL.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(items) == 1000
    for item in items:
        assert official_string_match(item["answer"], item["answer"], item["choices"])
        schema = VerdictSchema.from_criteria(item["rubric"])
        assert schema.k == 5 and schema.max_total == 5
        text = build_messages(item, "r", item["answer"])[1]["content"]
        assert all(c["note"] not in text for c in item["rubric"] if c["note"])


# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", example C: 4 coders x 12 units with
# missing values; the paper gives alpha = 0.743 (nominal) and 0.849 (interval).
KRIPPENDORFF_EXAMPLE = {
    "A": [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    "B": [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    "C": [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    "D": [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
}


def test_krippendorff_alpha_matches_the_published_example():
    from audioreason.scorers.mmar_rubrics.formulas import krippendorff_alpha

    assert krippendorff_alpha(KRIPPENDORFF_EXAMPLE, "nominal") == pytest.approx(0.743, abs=5e-4)
    assert krippendorff_alpha(KRIPPENDORFF_EXAMPLE, "interval") == pytest.approx(0.849, abs=5e-4)
    with pytest.raises(StatisticUnavailable, match="two raters"):
        krippendorff_alpha({"A": [1, 0, 1]})
    with pytest.raises(StatisticUnavailable, match="scored by two raters"):
        krippendorff_alpha({"A": [1, None], "B": [None, 0]})
    with pytest.raises(ValueError, match="different numbers"):
        krippendorff_alpha({"A": [1, 0], "B": [1]})


@pytest.mark.parametrize(
    "rows",
    [
        [[1.0] * 5, [1.0] * 5],  # an all-pass judge
        [[0.0] * 5, [0.0] * 5, [0.0] * 5],  # an all-fail judge
        [[0.6] * 5, [None] * 5],  # one judged item plus one whose raters all failed
        [[0.4, 0.4, None, 0.4, 0.4], [0.2, None, None, None, None]],  # the only other value is not pairable
    ],
)
def test_alpha_on_a_single_value_is_unavailable_with_the_reason_not_a_crash(rows):
    """krippendorff raises "There has to be more than one value in the domain" here; it must not reach
    the caller, whose scores were computed (and paid for) before the statistic."""
    from audioreason.scorers.mmar_rubrics.formulas import rater_reliability

    out = rater_reliability(rows, 5, ["gpt-4o-2024-11-20"])
    assert out["alpha"] is None and "one value" in out["unavailable"] and "undefined" in out["unavailable"]
    assert out["items"] == len(rows) and out["kind"] == "intra-rater (draws of one judge)"
    with pytest.raises(StatisticUnavailable):
        krippendorff_alpha({f"r{j}": [row[j] for row in rows] for j in range(5)})


def test_reliability_reports_every_undefined_case_and_a_library_failure(monkeypatch):
    import krippendorff

    from audioreason.scorers.mmar_rubrics.formulas import rater_reliability

    assert rater_reliability([[0.2], [0.4]], 1, ["j"])["unavailable"] == "alpha needs at least two raters"
    assert rater_reliability([], 5, ["j"])["unavailable"] == "no reasoning path was scored by two raters"
    both = rater_reliability([[0.2, 0.4], [0.6, 0.6], [1.0, 0.8]], 2, ["a", "b"])
    assert both["kind"] == "inter-rater (judge models)" and both["unavailable"] is None
    # interval alpha by hand: pairable values 0.2,0.4 | 0.6,0.6 | 1.0,0.8 (n = 6)
    # D_o = sum over units of 2*(a-b)^2 / (n_u - 1) / n = (2*0.04 + 0 + 2*0.04) / 6
    # D_e = sum over all ordered pairs of (a-b)^2 / (n (n-1))
    values = [0.2, 0.4, 0.6, 0.6, 1.0, 0.8]
    d_o = (2 * 0.04 + 0 + 2 * 0.04) / 6
    d_e = sum((a - b) ** 2 for a in values for b in values) / (6 * 5)
    assert both["alpha"] == pytest.approx(1 - d_o / d_e)

    def broken(**kwargs):
        raise RuntimeError("library failure")

    monkeypatch.setattr(krippendorff, "alpha", broken)
    failed = rater_reliability([[0.2, 0.4], [0.6, 0.6]], 2, ["a", "b"])
    assert failed["alpha"] is None and failed["unavailable"] == "RuntimeError: library failure"


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda it: it.pop("rubric"), "item 0 ('{id}'): the field 'rubric' is missing"),
        (lambda it: it.pop("choices"), "the field 'choices' is missing"),
        (lambda it: it.pop("answer"), "the field 'answer' is missing"),
        (lambda it: it.update(rubric=[]), "'rubric' must be a non-empty list"),
        (lambda it: it["rubric"][1].update(choices=[0, float("nan")]), "rubric criterion 1 .*finite numbers"),
        (lambda it: it["rubric"][0].update(choices=[0, float("inf")]), "rubric criterion 0 .*finite numbers"),
        (lambda it: it["rubric"][2].pop("name"), "rubric criterion 2 needs a non-empty 'name'"),
        (lambda it: it.update(choices="A or B"), "'choices' must be a list of strings"),
    ],
)
def test_bad_items_are_refused_before_any_call_naming_item_and_field(change, message):
    import copy
    import re

    from audioreason.scorers.mmar_rubrics.scorer import MMARRubricsScorer

    item = copy.deepcopy(ITEMS[0])
    change(item)
    with pytest.raises(
        ValueError, match=re.escape(message.format(id=ITEMS[0]["id"])) if "{id}" in message else message
    ):
        MMARRubricsScorer(NeverCalled()).score([item, ITEMS[1]], ["r", "r"], [ITEMS[0]["answer"], "x"])


def test_duplicate_ids_are_refused_in_the_scorer_and_the_metric():
    from audioreason.apps.shells import items_for_references
    from audioreason.scorers.mmar_rubrics.scorer import check_items

    with pytest.raises(ValueError, match="also item 0's; ids must be distinct"):
        check_items([ITEMS[0], ITEMS[1], ITEMS[0]])
    with pytest.raises(ValueError, match="appears twice in items"):
        items_for_references([ITEMS[0], dict(ITEMS[1], id=ITEMS[0]["id"])], [ITEMS[0]["id"]])


def test_a_none_first_prediction_reaches_the_scorer_through_evaluate():
    """evaluate checked the first value's type and refused a None there (anywhere else it is counted)."""
    import evaluate

    metric = evaluate.load(str(Path(__file__).resolve().parents[1] / "metrics" / "mmar_rubrics"))
    out = metric.compute(
        predictions=[None, "reasoning"],
        references=[ITEMS[0]["id"], ITEMS[1]["id"]],
        answers=[None, "not an answer"],
        items=ITEMS[:2],
        judge=NeverCalled(),
    )
    assert out["n"] == 2 and out["n_gated"] == 2 and out["accuracy"] == 0.0
