"""ARIA's CoT perturbation checks (ARIA-Rubrics §4, App. B.1 Table 7, App. B.4) on hand-built CoTs: each
perturbation's output checked exactly, the seeded draws reproducible and independent of item order, wrong
choices never the gold one, missing slots never invented."""

import random

import pytest

from audioreason.text.cot import parse_cot
from audioreason.text.perturbations import (
    CHECKS,
    DECORATION_WORDS,
    HINTS,
    IRRELEVANT_SENTENCES,
    PERTURBATIONS,
    parse_perturbations,
    perturb,
)

# The paper's App. B.4 example: MMAR f0VchKwpMAk_00-11-10_00-11-30, gold Parrot.
ITEM = {"id": "f0VchKwpMAk_00-11-10_00-11-30", "choices": ["Owl", "Robot", "Rooster", "Parrot"], "answer": "Parrot"}
COT = (
    "[PERCEPTION]\nEntities: bird call, whistle\nDescription: A high whistle repeats three times.\n"
    "[ANALYSIS]\nWhistles that imitate words suggest a talking bird.\n"
    "[REASONING]\nOwls hoot and roosters crow; a mimicking whistle fits a parrot.\n"
    "[ANSWER]\n(D) Parrot"
)
PERCEPTION = "[PERCEPTION]\nEntities: bird call, whistle\nDescription: A high whistle repeats three times.\n"
ANALYSIS = "[ANALYSIS]\nWhistles that imitate words suggest a talking bird.\n"
REASONING = "[REASONING]\nOwls hoot and roosters crow; a mimicking whistle fits a parrot.\n"

GOLDEN = {
    "rendered": COT,
    "no_struct": (
        "I hear bird call, whistle. A high whistle repeats three times. Whistles that imitate words "
        "suggest a talking bird. Owls hoot and roosters crow; a mimicking whistle fits a parrot.\n"
        "[ANSWER]\n(D) Parrot"
    ),
    "ans_swap": PERCEPTION + ANALYSIS + REASONING + "[ANSWER]\n(C) Rooster",
    "irrelevant": (
        "[PERCEPTION]\nEntities: bird call, whistle\nDescription: A high whistle repeats three times. "
        "A triangle has three sides and three angles.\n"
        "[ANALYSIS]\nWhistles that imitate words suggest a talking bird. Paper was first made in ancient "
        "China.\n[REASONING]\nOwls hoot and roosters crow; a mimicking whistle fits a parrot. The Moon "
        "orbits the Earth about once a month.\n[ANSWER]\n(D) Parrot"
    ),
    "wrong_perc": (
        "[PERCEPTION]\nEntities: Rooster\nDescription: The audio clearly presents Rooster, from start to "
        "end.\n" + ANALYSIS + REASONING + "[ANSWER]\n(D) Parrot"
    ),
    "rand_hints": (
        PERCEPTION + ANALYSIS + "[REASONING]\nHint: Pay attention to the background.\nOwls hoot and "
        "roosters crow; a mimicking whistle fits a parrot.\n[ANSWER]\n(D) Parrot"
    ),
    "decoration": (
        "door table cloud door door cat paper smile tree sweet dog yellow cat i dog window chair happy "
        "window apple tree i green dog\n[ANSWER]\n(D) Parrot"
    ),
    "scaffolding": (
        "[PERCEPTION]\nEntities: Owl\nDescription: The sound is alike Owl.\n[ANALYSIS]\nA sound alike Owl "
        "points to Owl.\n[REASONING]\nSince the sound is alike Owl, the answer must be Owl.\n"
        "[ANSWER]\n(D) Parrot"
    ),
}


@pytest.mark.parametrize("name", list(PERTURBATIONS))
def test_each_perturbation_exactly(name):
    assert perturb(name, COT, ITEM, seed=0) == GOLDEN[name]


def test_the_draws_are_the_documented_generators():
    """Each draw is random.Random(f"{seed}|{name}|{id}") over the documented pool, computed here by hand."""
    wrong = [0, 1, 2]  # Owl, Robot, Rooster: the non-gold choices, none named by the original answer
    assert ITEM["choices"][random.Random(f"0|ans_swap|{ITEM['id']}").choice(wrong)] == "Rooster"
    assert ITEM["choices"][random.Random(f"0|scaffolding|{ITEM['id']}").choice(wrong)] == "Owl"
    assert random.Random(f"0|rand_hints|{ITEM['id']}").choice(HINTS) == "Pay attention to the background."
    assert random.Random(f"0|irrelevant|{ITEM['id']}").sample(IRRELEVANT_SENTENCES, 3) == [
        "A triangle has three sides and three angles.",
        "Paper was first made in ancient China.",
        "The Moon orbits the Earth about once a month.",
    ]
    rng = random.Random(f"0|decoration|{ITEM['id']}")
    assert GOLDEN["decoration"].split("\n")[0] == " ".join(rng.choice(DECORATION_WORDS) for _ in range(24))


def test_seeds_reproduce_and_vary_and_never_point_to_the_gold():
    swapped = {perturb("ans_swap", COT, ITEM, seed=s).splitlines()[-1] for s in range(12)}
    assert swapped == {"(A) Owl", "(B) Robot", "(C) Rooster"}  # every wrong choice drawn, never (D) Parrot
    assert all(perturb(n, COT, ITEM, seed=s) == perturb(n, COT, ITEM, seed=s) for n in CHECKS for s in (0, 7))
    # An original that already names a wrong choice is never "swapped" to that same choice.
    wrong_answer = COT.replace("(D) Parrot", "(A) Owl")
    assert all(not perturb("ans_swap", wrong_answer, ITEM, seed=s).endswith("(A) Owl") for s in range(12))


def test_draws_depend_on_the_item_not_on_the_order_items_come_in():
    other = {**ITEM, "id": "another-item"}
    first = [perturb("ans_swap", COT, ITEM, 3), perturb("ans_swap", COT, other, 3)]
    second = [perturb("ans_swap", COT, other, 3), perturb("ans_swap", COT, ITEM, 3)]
    assert first == second[::-1]


def test_other_formats_are_rendered_in_the_bracket_format_and_missing_slots_stay_missing():
    markdown = (
        "**Perception:** Entities: rain; thunder\nSteady rain, then a low rumble.\n**Reasoning:** The rumble "
        "is thunder.\n**Answer:** Thunder"
    )
    item = {"id": "storm", "choices": ["Rain", "Thunder"], "answer": "Thunder"}
    rendered = perturb("rendered", markdown, item)
    assert rendered == (
        "[PERCEPTION]\nEntities: rain, thunder\nDescription: Steady rain, then a low rumble.\n"
        "[REASONING]\nThe rumble is thunder.\n[ANSWER]\nThunder"
    )
    assert perturb("rendered", rendered, item) == rendered  # a fixed point
    noisy = parse_cot(perturb("irrelevant", markdown, item))
    assert "analysis" in noisy.missing  # no Analysis was invented
    assert noisy.reasoning.startswith("The rumble is thunder. ") and noisy.answer == "Thunder"


def test_an_empty_output_and_an_item_without_a_wrong_choice():
    assert perturb("rendered", None, ITEM) == ""
    assert "[ANSWER]" not in perturb("decoration", None, ITEM)  # no answer to keep
    assert perturb("ans_swap", None, ITEM, seed=0).startswith("[ANSWER]\n(")
    with pytest.raises(ValueError, match="'only-gold' has no wrong non-empty choice"):
        perturb("scaffolding", COT, {"id": "only-gold", "choices": ["Parrot", ""], "answer": "Parrot"})


def test_perturbation_names():
    assert (
        parse_perturbations("all")
        == list(CHECKS)
        == ["no_struct", "ans_swap", "irrelevant", "wrong_perc", "rand_hints", "decoration", "scaffolding"]
    )
    assert parse_perturbations("none") == parse_perturbations("") == parse_perturbations(None) == []
    assert parse_perturbations("ans_swap, decoration,ans_swap") == ["ans_swap", "decoration"]
    with pytest.raises(ValueError, match=r"unknown perturbation\(s\) \['swap'\]"):
        parse_perturbations("swap")
    assert {p.paper_name for p in PERTURBATIONS.values()} >= {
        "NoStruct",
        "AnsSwap",
        "Irrelevant",
        "WrongPerc",
        "RandHints",
        "Decoration",
        "Scaffolding",
    }


def test_an_item_without_a_wrong_choice_is_left_out_and_counted_not_the_whole_set():
    from audioreason.evaluation.sections import OutputSet
    from audioreason.scorers.aria.declaration import perturbation_section
    from audioreason.scorers.aria.scorer import AriaScorer

    cot = (
        "[PERCEPTION]\nEntities: dog\nDescription: barking.\n[ANALYSIS]\nClose.\n[REASONING]\nA dog.\n[ANSWER]\n(A) {}"
    )
    items = {
        "ok": {"id": "ok", "question": "What?", "choices": ["dog", "rain"], "answer": "dog"},
        "one": {"id": "one", "question": "What?", "choices": ["dog", "dog "], "answer": "dog"},
    }
    records = [{"key": k, "id": k, "output": cot.format("dog"), "error": None} for k in ("ok", "one")]
    scorer = AriaScorer(backbones=dict.fromkeys(("clap", "embedder", "lm", "nli", "vectors")))
    section = perturbation_section(
        scorer,
        [OutputSet("m", "full", "aria_cot", "h", records)],
        items,
        ["ans_swap", "no_struct"],
        seed=0,
        progress=lambda n: None,
    )
    (result,) = section.results
    assert result["n"] == 1 and result["not_perturbed"] == 1 and set(section.items) == {"ok"}
    rows = {r["perturbation"]: r for r in result["perturbations"]}
    assert rows["ans_swap"]["answer_change_rate"] == 1.0 and rows["no_struct"]["answer_change_rate"] == 0.0
    assert len(section.notes) == 1 and section.notes[0].startswith("full/aria_cot: 1 item(s) not perturbed: one: ")
