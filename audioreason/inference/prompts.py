"""Named prompt templates: an item (question, choices, format) -> the chat messages the runner sends.

Every template has a content hash (``PromptTemplate.hash``): the SHA-256 of what it renders for two fixed
probe items (one multiple-choice, one open-ended) and of its literal text, so any change to the words or
the layout changes the hash. Each output records the template's name and hash.

Templates (messages are one user turn of plain text; the audio travels beside them):

- ``aria_cot``: the ARIA four-step CoT prompt (ARIA-Rubrics, §3.2 and App. A.1;
  ``audioreason.text.cot.build_cot_prompt``). Multiple-choice only.
- ``aria_plain``: the free-prompt baseline of ARIA App. A.2 / B.1. The paper shows that prompt only as an
  image; it requires an explicit answer "because we need to compute accuracy" and frees every other
  restriction. The words below are ours, written to that description. Multiple-choice only.
- ``audiospan``: the AudioSpan instruction of App. C.1 (arXiv:2608.26431), chosen per item by answer format:
  MCQ items get the option-letter instruction with lettered options, OEQ items the timestamp instruction
  (``audioreason.text.audiospan_templates.build_prompt``).
- ``plain``: the plain MMAR / MMAU prompt: the question and its choices, asking for the chosen option's
  text. Neither the MMAR nor the MMAU repository publishes an inference prompt (both ship only their
  scoring scripts, which string-match the choice *text*, so a bare letter scores as wrong); the words are
  ours, written so that the official scorers can read the reply. Multiple-choice only.

A template that does not fit an item (an MCQ-only template and an open-ended item) raises
``TemplateMismatch``; the runner counts such (item, template) pairs as not applicable instead of running them.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from audioreason.text.audiospan_templates import MCQ_INSTRUCTION, OEQ_INSTRUCTION, item_format
from audioreason.text.audiospan_templates import build_prompt as build_audiospan_prompt
from audioreason.text.cot import COT_TEMPLATE, build_cot_prompt, format_choices

Messages = list[dict[str, str]]


class TemplateMismatch(ValueError):
    """The template cannot be applied to this item (e.g. an MCQ template and an open-ended item)."""


PLAIN_INSTRUCTION = "Answer with the text of the correct option."
ARIA_PLAIN_INSTRUCTION = (
    "Answer the question about the audio. Reason in any way you like, then end your reply "
    'with the line "Answer: " followed by the letter and text of the one choice you select.'
)


def _question(item: Mapping[str, Any]) -> str:
    question = str(item.get("question") or "").strip()
    if not question:
        raise ValueError(f"item {item.get('id')!r} has no question")
    return question


def _choices(item: Mapping[str, Any], template: str) -> list[str]:
    choices = list(item.get("choices") or [])
    if item_format(item) == "oeq" or not choices:
        raise TemplateMismatch(f"template {template!r} needs a multiple-choice item; {item.get('id')!r} is open-ended")
    return [str(c) for c in choices]


def _user(text: str) -> Messages:
    return [{"role": "user", "content": text}]


def aria_cot(item: Mapping[str, Any]) -> Messages:
    return _user(build_cot_prompt(_question(item), _choices(item, "aria_cot")))


def aria_plain(item: Mapping[str, Any]) -> Messages:
    choices = format_choices(_choices(item, "aria_plain"))
    return _user(f"{ARIA_PLAIN_INSTRUCTION}\n\nQuestion: {_question(item)}\nChoices:\n{choices}")


def audiospan(item: Mapping[str, Any]) -> Messages:
    return _user(build_audiospan_prompt(item))


def plain(item: Mapping[str, Any]) -> Messages:
    choices = format_choices(_choices(item, "plain"))
    return _user(f"{_question(item)}\nOptions:\n{choices}\n{PLAIN_INSTRUCTION}")


# Two fixed items rendered into every template's hash, so the hash follows what the template produces.
PROBE_ITEMS = (
    {
        "id": "probe-mcq",
        "question": "Which sound is heard first?",
        "choices": ["a dog barking", "a car horn"],
        "format": "mcq",
    },
    {"id": "probe-oeq", "question": "What happens after the door closes?", "choices": [], "format": "oeq"},
)


@dataclass(frozen=True)
class PromptTemplate:
    name: str
    build: Callable[[Mapping[str, Any]], Messages]
    source: str  # where the wording comes from
    formats: tuple[str, ...]  # "mcq" and/or "oeq"
    literal: str = ""  # the fixed text the template is made of (hashed with the probe renderings)

    def messages(self, item: Mapping[str, Any]) -> Messages:
        """The chat messages for ``item``; ``TemplateMismatch`` when the template does not fit it."""
        return self.build(item)

    @property
    def hash(self) -> str:
        rendered = []
        for probe in PROBE_ITEMS:
            try:
                rendered.append(self.build(probe))
            except TemplateMismatch:
                rendered.append(None)
        payload = json.dumps([self.name, self.literal, rendered], ensure_ascii=False, sort_keys=True)
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:12]

    def to_dict(self) -> dict[str, str]:
        return {"name": self.name, "hash": self.hash}


TEMPLATES: dict[str, PromptTemplate] = {
    t.name: t
    for t in (
        PromptTemplate("aria_cot", aria_cot, "ARIA-Rubrics §3.2, App. A.1 (four-step CoT)", ("mcq",), COT_TEMPLATE),
        PromptTemplate(
            "aria_plain",
            aria_plain,
            "ARIA-Rubrics App. A.2/B.1 free-prompt baseline (our words)",
            ("mcq",),
            ARIA_PLAIN_INSTRUCTION,
        ),
        PromptTemplate(
            "audiospan",
            audiospan,
            "AudioSpan App. C.1, arXiv:2608.26431 (MCQ and OEQ instructions)",
            ("mcq", "oeq"),
            MCQ_INSTRUCTION + "\n" + OEQ_INSTRUCTION,
        ),
        PromptTemplate(
            "plain",
            plain,
            "plain MMAR/MMAU prompt (our words; the benchmarks publish none)",
            ("mcq",),
            PLAIN_INSTRUCTION,
        ),
    )
}

# The template name of outputs made elsewhere with a prompt that is none of these (`audioreason import`): no
# hash to compare, every item applies, and the accuracy's default rule is the fallback
# (evaluation.sections.DEFAULT_RULES).
EXTERNAL_TEMPLATE = "external"

# The template a benchmark uses when none is named.
DEFAULT_TEMPLATES = {"mmar": "plain", "mmau_test_mini": "plain", "audiospan": "audiospan"}


def get_template(name: str) -> PromptTemplate:
    if name not in TEMPLATES:
        raise ValueError(f"unknown template {name!r}: choose from {', '.join(TEMPLATES)}")
    return TEMPLATES[name]


def parse_templates(names: Sequence[str]) -> list[PromptTemplate]:
    """Templates by name, in the order given; repeated or unknown names are errors."""
    if len(set(names)) != len(names):
        raise ValueError(f"templates repeated: {list(names)}")
    return [get_template(n) for n in names]


__all__ = [
    "DEFAULT_TEMPLATES",
    "EXTERNAL_TEMPLATE",
    "PromptTemplate",
    "TEMPLATES",
    "TemplateMismatch",
    "get_template",
    "parse_templates",
]
