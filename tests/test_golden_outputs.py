"""Golden tests: hand-labelled model outputs through the CoT parser and the three answer extractors.

Each case gives the output, the choices and the gold answer, and the labels a person assigned by
reading the rules (README "Answer extraction" and "CoT parsing"): which slots are missing, the entity
list, ARIA's (index, method), the hybrid's (index, method), and the official/strict correctness of the
Answer slot (the whole output when there is no slot).
"""

import pytest

from audioreason.text.answers import extract_aria, extract_hybrid, official_string_match, strict_string_match
from audioreason.text.cot import parse_cot

ANIMALS = ["Dog barking", "Cat meowing", "Bird chirping", "Car horn"]  # gold: Cat meowing
PEOPLE = ["Man", "Woman", "Child", "Robot"]  # gold: Woman
YES_NO = ["Yes", "No"]  # gold: No
MOTION = ["From near to far", "From far to near", "Remain unchanged"]  # gold: From far to near
SIX = ["Piano", "Violin", "Flute", "Drums", "Guitar", "Trumpet"]  # gold: Guitar
WEATHER = ["下雨", "刮风", "打雷", "下雪"]  # gold: 打雷

ALL = ()
PAR = ("perception", "analysis", "reasoning", "entities")  # only an answer
EMPTY = ("perception", "analysis", "reasoning", "answer", "entities")
U = (None, "unanswered")

BODY = (
    "[PERCEPTION]\nEntities: cat, dog\nDescription: A high voice meows twice, then a dog barks once.\n"
    "[ANALYSIS]\nThe meow is louder and closer than the bark.\n"
    "[REASONING]\nThe main sound is the cat; the bark is background.\n"
)

# (name, output, choices, gold, missing, entities, aria, hybrid, official, strict)
CASES = [
    (
        "clean letter+text",
        BODY + "[ANSWER]\n(B) Cat meowing",
        ANIMALS,
        "Cat meowing",
        ALL,
        ["cat", "dog"],
        (1, "exact"),
        (1, "letter_regex"),
        True,
        True,
    ),
    (
        "bare letter",
        BODY + "[ANSWER] B",
        ANIMALS,
        "Cat meowing",
        ALL,
        ["cat", "dog"],
        (1, "letter"),
        (1, "letter_regex"),
        False,
        True,
    ),
    (
        "text with period",
        BODY + "[ANSWER] Cat meowing.",
        ANIMALS,
        "Cat meowing",
        ALL,
        ["cat", "dog"],
        (1, "exact"),
        (1, "content"),
        True,
        True,
    ),
    (
        "answer-is sentence",
        BODY + "[ANSWER] The answer is B.",
        ANIMALS,
        "Cat meowing",
        ALL,
        ["cat", "dog"],
        (1, "answer_regex"),
        (1, "letter_regex"),
        False,
        False,
    ),
    (
        "bold markdown headers",
        "**Perception:**\nEntities: cat, dog\nDescription: meowing.\n\n**Analysis:** a cat.\n\n"
        "**Reasoning:** it is the cat.\n\n**Answer:** Cat meowing",
        ANIMALS,
        "Cat meowing",
        ALL,
        ["cat", "dog"],
        U,
        (1, "content"),
        True,
        True,
    ),
    (
        "step headings",
        "### Step 1: Perception\nEntities: cat\nA meow.\n### Step 2: Analysis\nA pet.\n### Step 3: Reasoning\n"
        "Cats meow.\n### Step 4: Answer\n(B) Cat meowing",
        ANIMALS,
        "Cat meowing",
        ALL,
        ["cat"],
        U,
        (1, "letter_regex"),
        True,
        True,
    ),
    (
        "plain colon headers",
        "Perception: Entities: cat\nAnalysis: a pet\nReasoning: cats meow\nAnswer: B",
        ANIMALS,
        "Cat meowing",
        ALL,
        ["cat"],
        U,
        (1, "letter_regex"),
        False,
        True,
    ),
    (
        "echoed template then filled",
        "[PERCEPTION] Entities: <list> [ANALYSIS] <analysis> [REASONING] <reasoning> [ANSWER] <choice>\n\n"
        "[PERCEPTION] Entities: bird, wind\nDescription: chirps.\n[ANALYSIS] a bird. [REASONING] birds chirp.\n"
        "[ANSWER] Bird chirping",
        ANIMALS,
        "Cat meowing",
        ALL,
        ["bird", "wind"],
        (2, "exact"),
        (2, "content"),
        False,
        False,
    ),
    (
        "two answers, last wins",
        BODY + "[ANSWER] Dog barking\nWait, reconsider.\n[ANSWER] Cat meowing",
        ANIMALS,
        "Cat meowing",
        ALL,
        ["cat", "dog"],
        (1, "exact"),
        (1, "content"),
        True,
        True,
    ),
    (
        "think block then tags",
        "<think>Maybe a dog. [ANSWER] A</think>\n" + BODY + "[ANSWER] C",
        ANIMALS,
        "Cat meowing",
        ALL,
        ["cat", "dog"],
        (2, "letter"),
        (2, "letter_regex"),
        False,
        False,
    ),
    (
        "slots only inside think",
        "<think>" + BODY + "[ANSWER] B</think>",
        ANIMALS,
        "Cat meowing",
        ALL,
        ["cat", "dog"],
        (1, "letter"),
        U,
        None,
        None,
    ),
    (
        "no tags, answer in prose",
        "I hear a cat meowing nearby, so the answer is Cat meowing.",
        ANIMALS,
        "Cat meowing",
        EMPTY,
        [],
        U,
        (1, "content"),
        True,
        True,
    ),
    (
        "no tags, two choices named",
        "It could be a dog barking or a cat meowing.",
        ANIMALS,
        "Cat meowing",
        EMPTY,
        [],
        U,
        U,
        False,
        False,
    ),
    ("empty string", "", ANIMALS, "Cat meowing", EMPTY, [], U, U, False, False),
    ("punctuation garbage", "!!! ??? ...", ANIMALS, "Cat meowing", EMPTY, [], U, U, False, False),
    ("not a string", None, ANIMALS, "Cat meowing", EMPTY, [], U, U, None, None),
    (
        "bracketed letter",
        BODY + "[ANSWER] [C]",
        ANIMALS,
        "Cat meowing",
        ALL,
        ["cat", "dog"],
        (2, "letter"),
        (2, "letter_regex"),
        False,
        False,
    ),
    ("letter out of range", BODY + "[ANSWER] C", YES_NO, "No", ALL, ["cat", "dog"], U, U, False, False),
    ("yes/no exact", BODY + "[ANSWER] No", YES_NO, "No", ALL, ["cat", "dog"], (1, "exact"), (1, "content"), True, True),
    (
        "yes/no with clause",
        BODY + "[ANSWER] No, it is not.",
        YES_NO,
        "No",
        ALL,
        ["cat", "dog"],
        (1, "substring"),
        (1, "content"),
        True,
        True,
    ),
    (
        "substring quirk: man in woman",
        BODY + "[ANSWER] A woman",
        PEOPLE,
        "Woman",
        ALL,
        ["cat", "dog"],
        (0, "substring"),
        (1, "content"),
        True,
        True,
    ),
    (
        "letter prefix, wrong choice",
        BODY + "[ANSWER] D. Robot",
        PEOPLE,
        "Woman",
        ALL,
        ["cat", "dog"],
        (3, "exact"),
        (3, "letter_regex"),
        False,
        False,
    ),
    (
        "reordered bag, wrong",
        BODY + "[ANSWER] From near to far",
        MOTION,
        "From far to near",
        ALL,
        ["cat", "dog"],
        (0, "exact"),
        (0, "content"),
        True,
        False,
    ),
    (
        "reordered bag, right",
        BODY + "[ANSWER] From far to near",
        MOTION,
        "From far to near",
        ALL,
        ["cat", "dog"],
        (1, "exact"),
        (1, "content"),
        True,
        True,
    ),
    (
        "six choices, letter E",
        BODY + "[ANSWER] E",
        SIX,
        "Guitar",
        ALL,
        ["cat", "dog"],
        (4, "letter"),
        (4, "letter_regex"),
        False,
        True,
    ),
    (
        "six choices, letter F",
        BODY + "[ANSWER] F",
        SIX,
        "Guitar",
        ALL,
        ["cat", "dog"],
        (5, "letter"),
        (5, "letter_regex"),
        False,
        False,
    ),
    (
        "chinese text and choices",
        "[PERCEPTION]\nEntities: 雷声，雨声\nDescription: 先有雨声，然后是低沉的雷声。\n"
        "[ANALYSIS]\n低沉的轰鸣是打雷的特征。\n"
        "[REASONING]\n所以是打雷。\n[ANSWER]\n打雷",
        WEATHER,
        "打雷",
        ALL,
        ["雷声", "雨声"],
        (2, "exact"),
        (2, "content"),
        True,
        True,
    ),
    (
        "chinese headers",
        "感知：雷声和雨声。\n分析：低沉轰鸣。\n推理：是打雷。\n答案：C",
        WEATHER,
        "打雷",
        ("entities",),
        [],
        U,
        (2, "letter_regex"),
        False,
        True,
    ),
    (
        "chinese answer sentence",
        BODY + "[ANSWER] 答案是 B",
        ANIMALS,
        "Cat meowing",
        ALL,
        ["cat", "dog"],
        U,
        (1, "letter_regex"),
        False,
        False,
    ),
    (
        "r1-style answer tag",
        "<think>The sound is a cat.</think>\n<answer>B</answer>",
        ANIMALS,
        "Cat meowing",
        PAR,
        [],
        U,
        (1, "letter_regex"),
        False,
        True,
    ),
    (
        "bulleted entities",
        "[PERCEPTION]\nEntities:\n- dog barking\n- car horn\n- wind\nDescription: Barking then a horn.\n"
        "[ANALYSIS] street. [REASONING] the bark is first. [ANSWER] A",
        ANIMALS,
        "Cat meowing",
        ALL,
        ["dog barking", "car horn", "wind"],
        (0, "letter"),
        (0, "letter_regex"),
        False,
        False,
    ),
    (
        "semicolon entities",
        "[PERCEPTION] Entities: dog; cat; bird.\n[ANALYSIS] a. [REASONING] r. [ANSWER] Cat meowing",
        ANIMALS,
        "Cat meowing",
        ALL,
        ["dog", "cat", "bird"],
        (1, "exact"),
        (1, "content"),
        True,
        True,
    ),
    (
        "markdown entities",
        "[PERCEPTION]\n**Entities:** *speech*, *music*\n[ANALYSIS] a [REASONING] r [ANSWER] B",
        ANIMALS,
        "Cat meowing",
        ALL,
        ["speech", "music"],
        (1, "letter"),
        (1, "letter_regex"),
        False,
        True,
    ),
    (
        "empty entity line",
        "[PERCEPTION] Entities: \nDescription: Nothing.\n[ANALYSIS] a [REASONING] r [ANSWER] B",
        ANIMALS,
        "Cat meowing",
        ("entities",),
        [],
        (1, "letter"),
        (1, "letter_regex"),
        False,
        True,
    ),
    (
        "only an answer",
        "[ANSWER] Cat meowing",
        ANIMALS,
        "Cat meowing",
        PAR,
        [],
        (1, "exact"),
        (1, "content"),
        True,
        True,
    ),
    (
        "lower-case tags and letter",
        BODY.lower() + "[answer] c",
        ANIMALS,
        "Cat meowing",
        ALL,
        ["cat", "dog"],
        (2, "letter"),
        U,
        False,
        False,
    ),
    (
        "markdown around answer",
        BODY + "[ANSWER] **(B) Cat meowing**",
        ANIMALS,
        "Cat meowing",
        ALL,
        ["cat", "dog"],
        (1, "exact"),
        (1, "letter_regex"),
        True,
        True,
    ),
    (
        "answer with because-clause",
        BODY + "[ANSWER] Cat meowing, because the sound is high-pitched.",
        ANIMALS,
        "Cat meowing",
        ALL,
        ["cat", "dog"],
        (1, "substring"),
        (1, "content"),
        True,
        True,
    ),
    (
        "answer on a later line",
        BODY + "[ANSWER]\n\nBird chirping",
        ANIMALS,
        "Cat meowing",
        ALL,
        ["cat", "dog"],
        (2, "exact"),
        (2, "content"),
        False,
        False,
    ),
    (
        "final answer header",
        "Perception: Entities: cat\nAnalysis: a\nReasoning: r\nFinal Answer: (A)",
        ANIMALS,
        "Cat meowing",
        ALL,
        ["cat"],
        U,
        (0, "letter_regex"),
        False,
        False,
    ),
    (
        "word starting with a letter",
        BODY + "[ANSWER] Because",
        ANIMALS,
        "Cat meowing",
        ALL,
        ["cat", "dog"],
        U,
        U,
        False,
        False,
    ),
    (
        "article A is not a letter",
        "The answer is A dog barking.",
        ANIMALS,
        "Cat meowing",
        EMPTY,
        [],
        U,
        (0, "content"),
        False,
        False,
    ),
    (
        "i choose option",
        "Perception: Entities: bird\nAnalysis: a\nReasoning: r\nAnswer: I choose option C.",
        ANIMALS,
        "Cat meowing",
        ALL,
        ["bird"],
        U,
        (2, "letter_regex"),
        False,
        False,
    ),
    (
        "list item is not a header",
        "[PERCEPTION]\nEntities: dog\n1. Analysis of pitch shows it is high\n[ANALYSIS] real analysis "
        "[REASONING] r [ANSWER] A",
        ANIMALS,
        "Cat meowing",
        ALL,
        ["dog"],
        (0, "letter"),
        (0, "letter_regex"),
        False,
        False,
    ),
    (
        "windows line endings",
        BODY.replace("\n", "\r\n") + "[ANSWER]\r\nCat meowing\r\n",
        ANIMALS,
        "Cat meowing",
        ALL,
        ["cat", "dog"],
        (1, "exact"),
        (1, "content"),
        True,
        True,
    ),
    (
        "empty answer tag",
        "[PERCEPTION] Entities: x [ANALYSIS] y [REASONING] z [ANSWER]",
        ANIMALS,
        "Cat meowing",
        ("answer",),
        ["x"],
        U,
        U,
        False,
        False,
    ),
]


def _answer_text(output):
    slots = parse_cot(output)
    return output if "answer" in slots.missing else slots.answer


def test_enough_cases():
    assert len(CASES) >= 40
    assert len({c[0] for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_parse(case):
    _, output, _, _, missing, entities, *_ = case
    slots = parse_cot(output)
    assert slots.missing == missing
    assert slots.entities == entities


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_aria(case):
    _, output, choices, _, _, _, aria, *_ = case
    got = extract_aria(output, choices)
    assert (got.index, got.method) == aria


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_hybrid(case):
    _, output, choices, _, _, _, _, hybrid, _, _ = case
    got = extract_hybrid(output, choices)
    assert (got.index, got.method) == hybrid


@pytest.mark.parametrize("case", [c for c in CASES if c[8] is not None], ids=lambda c: c[0])
def test_official_and_strict(case):
    _, output, choices, gold, *_, official, strict = case
    text = _answer_text(output)
    assert official_string_match(gold, text, choices) is official
    assert strict_string_match(gold, text, choices) is strict
