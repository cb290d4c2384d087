import random

from audioreason.text.cot import build_cot_prompt, format_choices, parse_cot, split_think


def test_prompt_has_four_tagged_steps_and_lettered_choices():
    prompt = build_cot_prompt("What is heard?", ["Rain", "Wind", "Thunder"])
    positions = [prompt.index(t) for t in ("[PERCEPTION]", "[ANALYSIS]", "[REASONING]", "[ANSWER]")]
    assert positions == sorted(positions)
    assert "Entities:" in prompt and "do not interpret" in prompt
    assert prompt.endswith("Question: What is heard?\nChoices:\n(A) Rain\n(B) Wind\n(C) Thunder")
    # The model's own output in the prompt's format parses back into all slots.
    assert format_choices(["x", "y"]) == "(A) x\n(B) y"


def test_output_in_the_prompts_layout_parses_back():
    output = (
        "[PERCEPTION]\nEntities: rain, distant thunder\nDescription: Steady rain, then one low rumble.\n\n"
        "[ANALYSIS]\nA storm is nearby.\n\n[REASONING]\nNo wind noise is heard.\n\n[ANSWER]\n(A) Rain"
    )
    slots = parse_cot(output)
    assert slots.complete
    assert slots.entities == ["rain", "distant thunder"]
    assert (slots.description, slots.analysis, slots.reasoning, slots.answer) == (
        "Steady rain, then one low rumble.",
        "A storm is nearby.",
        "No wind noise is heard.",
        "(A) Rain",
    )


def test_split_think_variants():
    assert split_think("<think>a</think>b") == ("b", "a")
    assert split_think("<think>unfinished") == ("", "unfinished")
    assert split_think("opened in prompt</think>visible") == ("visible", "opened in prompt")
    assert split_think("no thinking") == ("no thinking", "")


def test_description_and_perception_parts():
    slots = parse_cot(
        "[PERCEPTION] Entities: dog, car horn. Description: A bark, then a horn. [ANALYSIS] a [REASONING] r [ANSWER] x"
    )
    assert slots.entities == ["dog", "car horn"]
    assert slots.description == "A bark, then a horn."
    assert slots.perception.startswith("Entities: dog")


def test_very_long_output_parses():
    words = " ".join(random.Random(0).choice(["sound", "loud", "dog", "then"]) for _ in range(10000))
    slots = parse_cot(f"[PERCEPTION] Entities: dog\n{words}\n[ANALYSIS] {words}\n[REASONING] {words}\n[ANSWER] A")
    assert slots.complete and slots.answer == "A" and len(slots.analysis.split()) == 10000


def test_parser_never_raises_on_random_text():
    rng = random.Random(1234)
    alphabet = list("[]<>*#:：-_()\n \t|/\\abcAPERCTIONSWnalysisreog答案感知1234.,;") + [
        "[ANSWER]",
        "<think>",
        "</think>",
        "Perception:",
        "### Step 2: Analysis",
        "**Answer:**",
        "Entities:",
    ]
    for _ in range(2000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 80)))
        slots = parse_cot(text)
        assert isinstance(slots.missing, tuple)
