"""The four-step chain-of-thought template of ARIA-Rubrics (§3.2) and a tolerant slot parser.

The paper's prompt (its Figure 5) is an image; the template below is written from §3.2's description:
Perception lists the sound entities actually heard on an ``Entities:`` line, then describes their
acoustic properties and temporal order without interpretation; Analysis links observations to possible
meanings without concluding; Reasoning weighs the evidence and eliminates alternatives; Answer states
the final choice.
"""

from __future__ import annotations

import re
from typing import Any, Sequence

from audioreason.base.schema import SLOT_NAMES, CoTSlots

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"

COT_TEMPLATE = """\
Listen to the audio carefully, then answer the question by reasoning in exactly four steps. \
Start each step with its tag, in this order: [PERCEPTION], [ANALYSIS], [REASONING], [ANSWER].

[PERCEPTION]
Entities: <a comma-separated list of the sound entities you actually hear: sources, voices, \
instruments, events>
Description: <describe the acoustic properties of these entities (pitch, loudness, timbre, rhythm, \
speech content) and the order in which they occur. Describe only what you hear; do not interpret it.>

[ANALYSIS]
<connect the acoustic observations to what they may mean, without drawing a final conclusion>

[REASONING]
<weigh the evidence, rule out the alternatives, and reach a conclusion>

[ANSWER]
<the letter and text of the single choice you select, for example: (B) {example_choice}>

Question: {question}
Choices:
{choices}"""


def format_choices(choices: Sequence[str]) -> str:
    """One choice per line, lettered "(A) ...", "(B) ..." in the given order."""
    if len(choices) > len(LETTERS):
        raise ValueError(f"at most {len(LETTERS)} choices can be lettered, got {len(choices)}")
    return "\n".join(f"({LETTERS[i]}) {c}" for i, c in enumerate(choices))


def build_cot_prompt(question: str, choices: Sequence[str]) -> str:
    """The ARIA four-step CoT prompt for one multiple-choice question."""
    if not choices:
        raise ValueError("a multiple-choice prompt needs at least one choice")
    example = choices[1] if len(choices) > 1 else choices[0]
    return COT_TEMPLATE.format(question=question.strip(), choices=format_choices(choices), example_choice=example)


# ---------------------------------------------------------------------------------------------
# Parsing
# ---------------------------------------------------------------------------------------------

# Header words per slot; "final answer" and the Chinese headers are accepted too.
_SLOT_WORDS = {
    "perception": "perception|感知",
    "analysis": "analysis|分析",
    "reasoning": "reasoning|推理",
    "answer": r"final[\ \t]+answer|answer|最终答案|答案",  # escaped spaces survive re.VERBOSE
}
_ANY_WORD = "|".join(_SLOT_WORDS.values())


def _slot_of(word: str) -> str:
    return next(slot for slot, words in _SLOT_WORDS.items() if re.fullmatch(words, word, re.IGNORECASE))


# A tag anywhere in the text: [ANSWER], 【答案】, <answer>.
_TAG = re.compile(rf"(?:\[|【|<)\s*(?P<word>{_ANY_WORD})\s*(?:\]|】|>)", re.IGNORECASE)
# A header line: optional quote/markdown/bullet/step numbering, the slot word, then a colon or the
# end of the line ("Perception:", "**Perception:**", "### Step 1: Perception", "2. Analysis").
_EMPH = r"(?:\*\*|__|\*|_)?"
_LINE_HEADER = re.compile(
    rf"""^[ \t]*(?:>[ \t]*)*(?P<hashes>\#{{1,6}}[ \t]*)?(?:[-+•][ \t]+)?{_EMPH}[ \t]*
    (?P<step>(?:step|part)[ \t]*\d+[ \t]*[:.)\-–—]?[ \t]*|\d+[ \t]*[.)][ \t]*|第[一二三四1-4]步[:：]?[ \t]*)?
    {_EMPH}[ \t]*(?P<word>{_ANY_WORD}){_EMPH}[ \t]*(?P<colon>[:：])?{_EMPH}[ \t]*
    (?P<rest>[^\n]*)$""",
    re.IGNORECASE | re.MULTILINE | re.VERBOSE,
)
_CLOSING_TAG = re.compile(rf"(?:\[/|</)\s*(?:{_ANY_WORD})\s*(?:\]|>)", re.IGNORECASE)
_THINK_BLOCK = re.compile(r"<think>(.*?)(?:</think>|\Z)", re.IGNORECASE | re.DOTALL)
_THINK_CLOSE = re.compile(r"</think>", re.IGNORECASE)
_ENTITIES_LABEL = re.compile(
    r"(?:\*\*|__)?[ \t]*entit(?:y|ies)[ \t]*(?:\*\*|__)?[ \t]*[:：][ \t]*(?:\*\*|__)?", re.IGNORECASE
)
_DESCRIPTION_LABEL = re.compile(r"(?:\*\*|__)?\s*description\s*(?:\*\*|__)?\s*[:：]\s*(?:\*\*|__)?", re.IGNORECASE)
_BULLET = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+(.*\S)\s*$")
_ENTITY_SPLIT = re.compile(r"[,;，；、]")


def split_think(text: str) -> tuple[str, str]:
    """Split an output into (visible text, text inside <think> blocks).

    An unclosed <think> runs to the end; a lone </think> (a chat template that opened the block in the
    prompt) makes everything before it thinking.
    """
    thoughts = [m.group(1) for m in _THINK_BLOCK.finditer(text)]
    visible = _THINK_BLOCK.sub("", text)
    close = list(_THINK_CLOSE.finditer(visible))
    if close:
        thoughts.insert(0, visible[: close[-1].start()])
        visible = visible[close[-1].end() :]
    return visible, "\n".join(t.strip() for t in thoughts if t.strip())


def _headers(text: str) -> list[tuple[int, int, str]]:
    """(start, end, slot) for every slot header in text, in order of position."""
    found = [(m.start(), m.end(), _slot_of(m.group("word"))) for m in _TAG.finditer(text)]
    for m in _LINE_HEADER.finditer(text):
        rest = m.group("rest").strip().strip("*_#: ")
        structured = m.group("hashes") or m.group("step")
        # "Answer: B", "Perception" alone and "Step 1 - Perception (what I hear)" are headers;
        # "Analysis shows that ..." and a list item "1. Analysis of pitch ..." are prose.
        if not (m.group("colon") or not rest or (structured and rest[0] in "(-–—")):
            continue
        if any(s <= m.start("word") < e for s, e, _ in found):  # the [TAG] form already matched here
            continue
        found.append((m.start(), m.start("rest"), _slot_of(m.group("word"))))
    return sorted(found)


def _clean(text: str) -> str:
    text = _CLOSING_TAG.sub("", text)
    text = re.sub(r"^[\s*_#>:：\-]+", "", text)  # markdown left at the start of a section
    text = re.sub(r"[\s*_#>]+$", "", text)
    # A line of only markdown emphasis or a horizontal rule is layout, not content.
    lines = [ln for ln in text.split("\n") if ln.strip(" \t*_-#=") or not ln.strip()]
    return "\n".join(lines).strip()


def _split_entities(line: str) -> list[str]:
    out = []
    for part in _ENTITY_SPLIT.split(line):
        part = part.strip().strip("*_`\"'“”").strip().rstrip(".。").strip()
        if part:
            out.append(part)
    return out


def _perception_parts(perception: str) -> tuple[list[str], str]:
    """Split a Perception section into its entity list and its description."""
    label = _ENTITIES_LABEL.search(perception)
    if not label:
        return [], perception
    after = perception[label.end() :]
    desc_label = _DESCRIPTION_LABEL.search(after)
    first_line, _, remainder = after.partition("\n")
    if desc_label and desc_label.start() <= len(first_line):  # "Entities: a, b. Description: ..."
        entity_text, description = after[: desc_label.start()], after[desc_label.end() :]
        return _split_entities(entity_text), description.strip()
    if first_line.strip():
        entities = _split_entities(first_line)
        rest = remainder
    else:  # a bulleted list on the following lines
        entities, rest_lines, in_list = [], [], True
        for ln in remainder.split("\n"):
            bullet = _BULLET.match(ln) if in_list else None
            if bullet:
                entities.extend(_split_entities(bullet.group(1)))
            elif in_list and not ln.strip() and not entities:
                continue
            else:
                in_list = False
                rest_lines.append(ln)
        rest = "\n".join(rest_lines)
    before = perception[: label.start()].strip()
    desc_label = _DESCRIPTION_LABEL.search(rest)
    description = rest[desc_label.end() :] if desc_label else rest
    description = "\n".join(p for p in (before, description.strip()) if p)
    return entities, description.strip()


def _parse_visible(text: str) -> CoTSlots | None:
    heads = _headers(text)
    if not heads:
        return None
    sections: dict[str, list[str]] = {s: [] for s in SLOT_NAMES}
    for i, (_, end, slot) in enumerate(heads):
        stop = heads[i + 1][0] if i + 1 < len(heads) else len(text)
        sections[slot].append(_clean(text[end:stop]))
    chosen = {}
    for slot, texts in sections.items():
        if slot == "answer":  # ARIA Appendix E: the answer follows the LAST answer tag
            chosen[slot] = texts[-1] if texts else ""
        else:  # a repeated header (an echoed template) keeps its last non-empty section
            chosen[slot] = next((t for t in reversed(texts) if t), "")
    entities, description = _perception_parts(chosen["perception"])
    missing = tuple(s for s in SLOT_NAMES if not chosen[s]) + (() if entities else ("entities",))
    return CoTSlots(
        entities=entities,
        description=_clean(description),
        missing=missing,
        repeated={s: len(t) for s, t in sections.items() if len(t) > 1},
        **chosen,
    )


def parse_cot(output: Any) -> CoTSlots:
    """Parse a model output into the four ARIA slots. Never raises: garbage gives an empty parse.

    Accepted headers, in any case: ``[PERCEPTION]``, ``<perception>``, ``**Perception:**``,
    ``Perception:``, ``### Step 1: Perception``, ``1. Perception``, and 感知/分析/推理/答案. Text in
    ``<think>`` blocks is set aside; when the visible text holds no header at all the think blocks
    are parsed instead (``source == "think"``).
    """
    if not isinstance(output, str) or not output.strip():
        return CoTSlots()
    visible, think = split_think(output.replace("\r\n", "\n"))
    parsed = _parse_visible(visible)
    source = "output"
    if parsed is None and think:
        parsed, source = _parse_visible(think), "think"
    parsed = parsed or CoTSlots()
    parsed.think, parsed.source = think, source
    return parsed
