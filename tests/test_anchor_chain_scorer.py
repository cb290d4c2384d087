"""AudioSpan anchor chains and native MCQ: parsing, validation, breakdowns, templates."""

import pytest

from audioreason.scorers.anchor_chain.scorer import (
    build_chains,
    gold_index,
    parse_answer,
    score_anchor_chain,
    score_mcq_accuracy,
)
from audioreason.text.audiospan_templates import MCQ_INSTRUCTION, OEQ_INSTRUCTION, build_prompt

CH = ["dog barking", "cat meowing", "bird song", "cow mooing"]


@pytest.mark.parametrize(
    "reply, exact, tolerant",
    [
        ("B", 1, 1),
        (" B \n", 1, 1),
        ("B.", None, 1),
        ("(B)", None, 1),
        ("b", None, None),
        ("The answer is B", None, 1),
        ("", None, None),
        ("A B", None, None),
        ("AB", None, None),
        ("E", None, None),
        (None, None, None),
        ("cat meowing", None, 1),
    ],
)
def test_parser_golden_cases(reply, exact, tolerant):
    assert parse_answer(reply, CH, "exact").index == exact
    assert parse_answer(reply, CH, "tolerant").index == tolerant


def test_parser_rejects_unknown_mode():
    with pytest.raises(ValueError, match="parse"):
        parse_answer("B", CH, "fuzzy")


def test_gold_index_forms():
    assert gold_index({"choices": CH, "answer": "bird song"}) == 2
    assert gold_index({"choices": CH, "answer": "C", "answer_index": -1}) == 2
    assert gold_index({"choices": CH, "answer": "x", "answer_index": 3}) == 3
    with pytest.raises(ValueError, match="q9"):
        gold_index({"id": "q9", "choices": CH, "answer": "horse"})


def _chain(cid, golds, op="addition", tier="S", lang="en", n=4):
    return [
        {
            "id": f"{cid}-{p}",
            "chain_id": cid,
            "link_position": p,
            "choices": CH[:n],
            "answer": CH[g],
            "operation": op,
            "duration_tier": tier,
            "language": lang,
        }
        for p, g in zip((1, 2, 3), golds)
    ]


def _dataset():
    items = (
        _chain("c1", (0, 1, 2), "addition", "S", "en")
        + _chain("c2", (1, 1, 1), "deletion", "M", "zh")
        + _chain("c3", (2, 0, 3), "modification", "L", "en")
        + _chain("c4", (3, 2, 0), "addition", "M", "zh")
    )
    replies = [
        "A",
        "B",
        "C",  # c1: 1,1,1 -> 1
        "B",
        "A",
        "B",  # c2: 1,0,1 -> 1/3
        "B.",
        "A",
        "D",  # c3: unparsed P under exact -> 0,1,1 -> 0 ; tolerant: P wrong anyway
        "D",
        "C",
        "b",
    ]  # c4: 1,1,unparsed -> 2/3 (exact and tolerant: "b" unparsed)
    return items, replies


def test_chain_scores_hand_computed():
    items, replies = _dataset()
    r = score_anchor_chain(items, replies, return_items=True)
    assert [c["chain"] for c in r["chains"]] == pytest.approx([1, 1 / 3, 0, 2 / 3])
    assert r["chain"] == pytest.approx((1 + 1 / 3 + 0 + 2 / 3) / 4)
    assert r["P"] == pytest.approx(3 / 4) and r["U"] == pytest.approx(3 / 4) and r["R"] == pytest.approx(3 / 4)
    assert r["random_chain"] == pytest.approx(0.109375)
    assert r["unparsed"] == 2 and r["unparsed_by_link"] == {"P": 1, "U": 0, "R": 1}
    g = r["grounding"]
    # located: c1 (U1,R1), c2 (U0,R1), c4 (U1,R0); missed: c3 (U1,R1)
    assert g["U|located"] == pytest.approx(2 / 3) and g["R|located"] == pytest.approx(2 / 3)
    assert g["U|missed"] == 1.0 and g["R|missed"] == 1.0 and (g["n_located"], g["n_missed"]) == (3, 1)


def test_chain_breakdowns_hand_computed():
    items, replies = _dataset()
    r = score_anchor_chain(items, replies)
    op = r["by_operation"]
    assert set(op) == {"addition", "deletion", "modification"}
    assert op["addition"]["chain"] == pytest.approx((1 + 2 / 3) / 2) and op["addition"]["n"] == 2
    assert op["addition"]["R"] == pytest.approx(0.5)
    assert op["deletion"]["chain"] == pytest.approx(1 / 3) and op["deletion"]["U"] == 0.0
    assert op["modification"]["chain"] == 0.0 and op["modification"]["P"] == 0.0
    assert r["by_duration_tier"]["M"]["chain"] == pytest.approx((1 / 3 + 2 / 3) / 2)
    assert r["by_duration_tier"]["S"]["chain"] == 1.0 and r["by_duration_tier"]["L"]["chain"] == 0.0
    assert r["by_language"]["en"]["chain"] == pytest.approx(0.5)
    assert r["by_language"]["zh"]["chain"] == pytest.approx(0.5)
    assert r["by_language"]["zh"]["random_chain"] == pytest.approx(0.109375)


def test_tolerant_mode_changes_unparsed_only_where_it_parses():
    items, replies = _dataset()
    r = score_anchor_chain(items, replies, parse="tolerant")
    assert r["unparsed"] == 1 and r["parse"] == "tolerant"
    assert r["chain"] == pytest.approx(0.5)  # "B." parses to a wrong P answer: same scores


def test_mixed_option_counts_baseline():
    items = _chain("c1", (0, 0, 0), n=4)
    for item, n in zip(items, (2, 3, 4)):
        item["choices"] = CH[:n]
    r = score_anchor_chain(items, ["A", "A", "A"])
    assert r["random_chain"] == pytest.approx((1 / 2 + 1 / 6 + 1 / 24) / 3)
    assert r["chain"] == 1.0


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda it: it[:2], "missing link"),
        (lambda it: it[:2] + [dict(it[1])], "duplicated link"),
        (lambda it: [it[1], it[0], it[2]], "out of order"),
        (lambda it: it + [dict(it[2], link_position=3)], "4 links"),
        (lambda it: [dict(it[0], link_position=4)] + it[1:], "link_position 4"),
        (lambda it: it[:2] + [dict(it[2], chain_id="other")], "missing link"),
        (lambda it: it[:2] + [dict(it[2], operation="deletion")], "different operation"),
        (lambda it: [dict(it[0], chain_id=None)] + it[1:], "no chain_id"),
    ],
)
def test_malformed_chains_name_the_chain(mutate, message):
    items = mutate(_chain("chainX", (0, 1, 2)))
    with pytest.raises(ValueError, match=message) as err:
        build_chains(items)
    assert "chainX" in str(err.value) or "chainX-1" in str(err.value)


def test_prediction_count_must_match():
    with pytest.raises(ValueError, match="predictions"):
        score_anchor_chain(_chain("c1", (0, 0, 0)), ["A", "A"])


def test_mcq_accuracy_and_breakdowns():
    items = [
        {
            "id": f"q{i}",
            "choices": CH,
            "answer": CH[g],
            "duration_tier": t,
            "language": lang,
            "cognitive_level": c,
            "dimension": d,
        }
        for i, (g, t, lang, c, d) in enumerate(
            [
                (0, "S", "en", "P", "counting"),
                (1, "S", "zh", "U", "summary"),
                (2, "L", "en", "R", "causal"),
                (3, "L", "zh", "P", "localization"),
            ]
        )
    ]
    replies = ["A", "(B)", "C", "A"]
    r = score_mcq_accuracy(items, replies, return_items=True)
    assert r["accuracy"] == 0.5 and r["unparsed"] == 1 and r["random_accuracy"] == 0.25 and r["n"] == 4
    assert r["by_duration_tier"]["S"]["accuracy"] == 0.5 and r["by_duration_tier"]["L"]["accuracy"] == 0.5
    assert r["by_language"]["en"]["accuracy"] == 1.0 and r["by_language"]["zh"]["accuracy"] == 0.0
    assert r["by_cognitive_level"]["P"]["accuracy"] == 0.5 and r["by_cognitive_level"]["U"]["unparsed"] == 1
    assert r["by_dimension"]["causal"]["accuracy"] == 1.0
    assert [x["correct"] for x in r["items"]] == [True, False, True, False]
    t = score_mcq_accuracy(items, replies, parse="tolerant")
    assert t["accuracy"] == 0.75 and t["unparsed"] == 0


def test_templates():
    assert MCQ_INSTRUCTION.endswith("Answer with ONLY the option letter.")
    assert OEQ_INSTRUCTION.endswith("Cite audio timestamps in your analysis.")
    prompt = build_prompt({"question": "What sound?", "choices": CH[:2], "format": "mcq"})
    assert prompt == MCQ_INSTRUCTION + "\nWhat sound?\nA. dog barking\nB. cat meowing"
    assert build_prompt({"question": "When?", "format": "oeq"}) == OEQ_INSTRUCTION + "\nWhen?"
    assert build_prompt({"question": "When?"}).startswith(OEQ_INSTRUCTION)
    with pytest.raises(ValueError):
        build_prompt({"question": "", "choices": CH})


def test_loader_shaped_rows():
    # Rows as audioreason.data.audiospan yields them for the "anchor" config (answer_index resolved).
    rows = [
        {
            "id": f"{rec}/anchor/{p}",
            "chain_id": f"{rec}/chain",
            "link_position": p,
            "operation": op,
            "duration_tier": tier,
            "language": lang,
            "answer": "y",
            "answer_index": 2,
            "choices": ["w", "x", "y", "z"],
            "cognitive_level": "PUR"[p - 1],
            "dimension": "",
        }
        for rec, op, tier, lang in (("en-talk-001", "addition", "S", "en"), ("zh-show-002", "deletion", "M", "zh"))
        for p in (1, 2, 3)
    ]
    r = score_anchor_chain(rows, ["C", "C", "C", "C", "A", "C"])
    assert r["chain"] == pytest.approx((1 + 1 / 3) / 2) and r["by_operation"]["deletion"]["U"] == 0.0
    a = score_mcq_accuracy(rows, ["C", "C", "C", "C", "A", "C"])
    assert a["accuracy"] == pytest.approx(5 / 6) and a["by_cognitive_level"]["U"]["accuracy"] == 0.5
    assert a["by_dimension"] == {}
