"""Prompt templates: golden texts for every template, content hashes pinned, format mismatches."""

import pytest

from audioreason.inference.prompts import DEFAULT_TEMPLATES, TEMPLATES, TemplateMismatch, get_template, parse_templates

MCQ = {"id": "x", "question": "What makes the sound?", "choices": ["Owl", "Parrot"], "format": None}
OEQ = {"id": "y", "question": "When does the door close?", "choices": [], "format": "OEQ"}


def text(name, item):
    messages = get_template(name).messages(item)
    assert [m["role"] for m in messages] == ["user"]
    return messages[0]["content"]


def test_plain_prompt_golden():
    assert text("plain", MCQ) == (
        "What makes the sound?\nOptions:\n(A) Owl\n(B) Parrot\nAnswer with the text of the correct option."
    )


def test_aria_plain_prompt_golden():
    assert text("aria_plain", MCQ) == (
        "Answer the question about the audio. Reason in any way you like, then end your reply with the line "
        '"Answer: " followed by the letter and text of the one choice you select.\n\n'
        "Question: What makes the sound?\nChoices:\n(A) Owl\n(B) Parrot"
    )


def test_aria_cot_is_the_cot_module_prompt():
    from audioreason.text.cot import build_cot_prompt

    prompt = text("aria_cot", MCQ)
    assert prompt == build_cot_prompt("What makes the sound?", ["Owl", "Parrot"])
    assert prompt.startswith("Listen to the audio carefully, then answer the question by reasoning in exactly four")
    assert prompt.endswith("for example: (B) Parrot>\n\nQuestion: What makes the sound?\nChoices:\n(A) Owl\n(B) Parrot")


def test_audiospan_prompt_by_format_golden():
    assert text("audiospan", MCQ) == (
        "Listen carefully to the audio and answer the following question. Answer with "
        "ONLY the option letter.\nWhat makes the sound?\nA. Owl\nB. Parrot"
    )
    assert text("audiospan", OEQ) == (
        "Listen carefully to the audio and answer the following question. Cite audio "
        "timestamps in your analysis.\nWhen does the door close?"
    )


@pytest.mark.parametrize("name", ["plain", "aria_cot", "aria_plain"])
def test_mcq_only_templates_refuse_open_ended_items(name):
    with pytest.raises(TemplateMismatch, match="open-ended"):
        get_template(name).messages(OEQ)


def test_hashes_are_pinned():
    # Any change to a template's words or layout must change its hash (outputs record it); these values
    # are the hashes of the wording above.
    assert {n: t.hash for n, t in TEMPLATES.items()} == {
        "aria_cot": "fb6018c91560",
        "aria_plain": "b2314db33eee",
        "audiospan": "edddd29c6913",
        "plain": "c29c813cc313",
    }


def test_hash_follows_the_rendered_text(monkeypatch):
    from audioreason.inference import prompts

    before = get_template("plain").hash
    monkeypatch.setattr(prompts, "PLAIN_INSTRUCTION", "Answer with the correct option.")
    assert get_template("plain").hash != before
    assert get_template("plain").to_dict() == {"name": "plain", "hash": get_template("plain").hash}


def test_parse_templates_and_defaults():
    assert [t.name for t in parse_templates(["audiospan", "plain"])] == ["audiospan", "plain"]
    with pytest.raises(ValueError, match="unknown template 'cot'"):
        parse_templates(["cot"])
    with pytest.raises(ValueError, match="repeated"):
        parse_templates(["plain", "plain"])
    assert DEFAULT_TEMPLATES == {"mmar": "plain", "mmau_test_mini": "plain", "audiospan": "audiospan"}


def test_item_without_question_is_an_error():
    with pytest.raises(ValueError, match="has no question"):
        get_template("plain").messages({"id": "z", "question": " ", "choices": ["a", "b"]})
