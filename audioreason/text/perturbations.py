"""ARIA's CoT perturbation checks ("ARIA-Rubrics", §4 "Model reasoning modes", App. B.1 Table 7, App. B.4) as
pure, seeded functions of a chain of thought and its item.

What the paper says each check does (its prompts are images, so everything below the names is our wording):

- **Decoration** (§4, App. B.4): "unstructured and vacuous content (e.g., random words like 'I love dog')".
- **Scaffolding** (§4, App. B.4): "correct structure but fabricated content (e.g., the sound is alike bird and
  tiger)", "structure-preserving scaffolding CoT pointing to Owl" (a wrong choice; the gold was Parrot).
- **NoStruct**, **Irrelevant**, **RandHints** (Table 7): "non-adversarial prompt variations".
- **WrongPerc** (WrongPerception) and **AnsSwap** (Table 7): "adversarial CoT".

Our constructions, one function each (``PERTURBATIONS``). Every one reads the CoT through ``parse_cot`` and
writes it back in the four-step bracket format of the ARIA template (``render_cot``), so a perturbed CoT
differs from ``rendered`` (the original re-rendered, the baseline every delta is taken against) only by the
perturbation:

=============  ==========================================================================================
``rendered``     the original slots, unchanged (the baseline).
``no_struct``    NoStruct: the Perception (entities as a sentence, then the description), Analysis and
                 Reasoning texts joined into one paragraph without headers or labels; the ``[ANSWER]``
                 line is kept (ARIA App. A.2 keeps an explicit answer in every prompt "because we need to
                 compute accuracy").
``ans_swap``     AnsSwap: the Answer replaced by "(L) text" of a wrong choice; the reasoning is kept.
``irrelevant``   Irrelevant: one off-topic sentence (``IRRELEVANT_SENTENCES``, none about sound) appended
                 to each of Description, Analysis and Reasoning, three distinct sentences per item.
``wrong_perc``   WrongPerc: the Perception replaced by one naming a wrong choice ("Entities: <wrong>",
                 "Description: The audio clearly presents <wrong>, from start to end."); the rest is kept.
``rand_hints``   RandHints: a generic listening hint (``HINTS``; it never names a choice, so it is not
                 adversarial) put before the Reasoning as "Hint: <hint>".
``decoration``   Decoration: Perception, Analysis and Reasoning replaced by ``DECORATION_LENGTH`` words
                 drawn with replacement from ``DECORATION_WORDS``, with no header; the ``[ANSWER]`` line
                 is kept.
``scaffolding``  Scaffolding: the four headers kept, their content fabricated to point to a wrong choice
                 ("The sound is alike <wrong>." ...); the original Answer is kept.
=============  ==========================================================================================

A wrong choice is drawn uniformly among the non-empty choices whose text differs from the gold answer and
from the choice the original Answer names (when that leaves none, from the non-empty choices other than the
gold); an item with no wrong non-empty choice cannot be perturbed adversarially (``ValueError``).

Seeds: every draw comes from ``random.Random(f"{seed}|{name}|{item id}")`` (string seeds are hashed with
SHA-512 by ``random``, so draws do not depend on the process, the platform or the order items come in).

A slot that is missing from the original stays missing in every perturbation that keeps it (no content is
invented for it); a perturbation that replaces a slot writes it whether or not the original had it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional, Sequence

from audioreason.base.schema import CoTSlots
from audioreason.text.answers import extract_aria
from audioreason.text.cot import LETTERS, parse_cot

DECORATION_WORDS = (
    "i",
    "love",
    "dog",
    "blue",
    "table",
    "happy",
    "window",
    "coffee",
    "green",
    "sunday",
    "paper",
    "run",
    "tree",
    "yellow",
    "book",
    "smile",
    "cat",
    "door",
    "sweet",
    "cloud",
    "chair",
    "bread",
    "apple",
    "ticket",
)
DECORATION_LENGTH = 24
IRRELEVANT_SENTENCES = (
    "The Pacific is the largest ocean on Earth.",
    "Paper was first made in ancient China.",
    "A triangle has three sides and three angles.",
    "Chess is played on a board of sixty-four squares.",
    "Mount Everest lies in the Himalayas.",
    "Bread is usually baked in an oven.",
    "The Moon orbits the Earth about once a month.",
    "Tomatoes are botanically classified as fruits.",
)
HINTS = (
    "Pay attention to the background.",
    "Consider the order in which things happen.",
    "Notice any changes in loudness.",
    "Think about where the recording was made.",
    "Count how many distinct sources there are.",
    "Compare the beginning with the end.",
)


# ---------------------------------------------------------------------------------------------
# Rendering
# ---------------------------------------------------------------------------------------------


def _present(slots: CoTSlots, name: str) -> bool:
    return name not in slots.missing


def render_cot(entities: Sequence[str], description: str, analysis: str, reasoning: str, answer: str) -> str:
    """The four-step bracket format of the ARIA template; an empty part is left out with its header (a
    Perception with no entities is written without the ``Entities:``/``Description:`` labels)."""
    parts = []
    if entities:
        perception = f"Entities: {', '.join(entities)}" + (f"\nDescription: {description}" if description else "")
    else:
        perception = description
    for header, text in (
        ("PERCEPTION", perception),
        ("ANALYSIS", analysis),
        ("REASONING", reasoning),
        ("ANSWER", answer),
    ):
        if text:
            parts.append(f"[{header}]\n{text}")
    return "\n".join(parts)


def _slot_parts(slots: CoTSlots) -> dict[str, Any]:
    return {
        "entities": list(slots.entities),
        "description": slots.description if _present(slots, "perception") else "",
        "analysis": slots.analysis,
        "reasoning": slots.reasoning,
        "answer": slots.answer,
    }


def _with(slots: CoTSlots, **changes: Any) -> str:
    return render_cot(**{**_slot_parts(slots), **changes})


def _append(text: str, sentence: str) -> str:
    return f"{text} {sentence}" if text else text


# ---------------------------------------------------------------------------------------------
# Draws
# ---------------------------------------------------------------------------------------------


def rng_for(name: str, item: Mapping[str, Any], seed: int) -> random.Random:
    """The generator of one (perturbation, item, seed)."""
    return random.Random(f"{seed}|{name}|{item.get('id')}")


def wrong_choice(item: Mapping[str, Any], slots: CoTSlots, rng: random.Random) -> int:
    """The index of a wrong choice (see the module docstring); ValueError when the item has none."""
    choices = [str(c) for c in item["choices"]]
    gold = str(item["answer"]).strip()
    named = extract_aria(_with(slots), choices).index
    wrong = [i for i, c in enumerate(choices) if c.strip() and c.strip() != gold]
    if not wrong:
        raise ValueError(f"item {item.get('id')!r} has no wrong non-empty choice to point a perturbation to")
    preferred = [i for i in wrong if named is None or choices[i].strip() != choices[named].strip()]
    return rng.choice(preferred or wrong)


def choice_text(item: Mapping[str, Any], index: int) -> str:
    return f"({LETTERS[index]}) {item['choices'][index]}"


# ---------------------------------------------------------------------------------------------
# The perturbations: (parsed original, item, generator) -> perturbed CoT text
# ---------------------------------------------------------------------------------------------


def rendered(slots: CoTSlots, item: Mapping[str, Any], rng: random.Random) -> str:
    return _with(slots)


def no_struct(slots: CoTSlots, item: Mapping[str, Any], rng: random.Random) -> str:
    parts = _slot_parts(slots)
    entities = f"I hear {', '.join(parts['entities'])}." if parts["entities"] else ""
    prose = " ".join(
        " ".join(t.split()) for t in (entities, parts["description"], parts["analysis"], parts["reasoning"]) if t
    )
    answer = f"[ANSWER]\n{parts['answer']}" if parts["answer"] else ""
    return "\n".join(p for p in (prose, answer) if p)


def ans_swap(slots: CoTSlots, item: Mapping[str, Any], rng: random.Random) -> str:
    return _with(slots, answer=choice_text(item, wrong_choice(item, slots, rng)))


def irrelevant(slots: CoTSlots, item: Mapping[str, Any], rng: random.Random) -> str:
    first, second, third = rng.sample(IRRELEVANT_SENTENCES, 3)
    parts = _slot_parts(slots)
    return _with(
        slots,
        description=_append(parts["description"], first),
        analysis=_append(parts["analysis"], second),
        reasoning=_append(parts["reasoning"], third),
    )


def wrong_perc(slots: CoTSlots, item: Mapping[str, Any], rng: random.Random) -> str:
    wrong = str(item["choices"][wrong_choice(item, slots, rng)]).strip()
    return _with(slots, entities=[wrong], description=f"The audio clearly presents {wrong}, from start to end.")


def rand_hints(slots: CoTSlots, item: Mapping[str, Any], rng: random.Random) -> str:
    hint = f"Hint: {rng.choice(HINTS)}"
    reasoning = _slot_parts(slots)["reasoning"]
    return _with(slots, reasoning=f"{hint}\n{reasoning}" if reasoning else "")


def decoration(slots: CoTSlots, item: Mapping[str, Any], rng: random.Random) -> str:
    words = " ".join(rng.choice(DECORATION_WORDS) for _ in range(DECORATION_LENGTH))
    answer = f"[ANSWER]\n{slots.answer}" if slots.answer else ""
    return "\n".join(p for p in (words, answer) if p)


def scaffolding(slots: CoTSlots, item: Mapping[str, Any], rng: random.Random) -> str:
    wrong = str(item["choices"][wrong_choice(item, slots, rng)]).strip()
    return render_cot(
        [wrong],
        f"The sound is alike {wrong}.",
        f"A sound alike {wrong} points to {wrong}.",
        f"Since the sound is alike {wrong}, the answer must be {wrong}.",
        slots.answer,
    )


@dataclass(frozen=True)
class Perturbation:
    name: str
    paper_name: str
    kind: str  # "baseline", "non-adversarial", "adversarial" (Table 7's words) or "mode" (§4's injections)
    function: Callable[[CoTSlots, Mapping[str, Any], random.Random], str]
    keeps_answer: bool


PERTURBATIONS: dict[str, Perturbation] = {
    p.name: p
    for p in (
        Perturbation("rendered", "Original CoT", "baseline", rendered, True),
        Perturbation("no_struct", "NoStruct", "non-adversarial", no_struct, True),
        Perturbation("ans_swap", "AnsSwap", "adversarial", ans_swap, False),
        Perturbation("irrelevant", "Irrelevant", "non-adversarial", irrelevant, True),
        Perturbation("wrong_perc", "WrongPerc", "adversarial", wrong_perc, True),
        Perturbation("rand_hints", "RandHints", "non-adversarial", rand_hints, True),
        Perturbation("decoration", "Decoration", "mode", decoration, True),
        Perturbation("scaffolding", "Scaffolding", "mode", scaffolding, True),
    )
}
CHECKS = tuple(name for name in PERTURBATIONS if name != "rendered")


def parse_perturbations(text: Optional[str]) -> list[str]:
    """``all``, ``none``/empty, or comma-separated names of ``CHECKS``; ValueError names an unknown one."""
    if text is None or not text.strip() or text.strip().lower() == "none":
        return []
    names = [t.strip().lower() for t in text.split(",") if t.strip()]
    if names == ["all"]:
        return list(CHECKS)
    unknown = [n for n in names if n not in CHECKS]
    if unknown:
        raise ValueError(f"unknown perturbation(s) {unknown}: choose from all, {', '.join(CHECKS)}")
    return list(dict.fromkeys(names))


def perturb(name: str, output: Any, item: Mapping[str, Any], seed: int = 0) -> str:
    """The perturbed CoT of ``output`` (a raw model output; None or non-text reads as an empty CoT) for
    ``item`` (``id``, ``choices``, gold ``answer``)."""
    if name not in PERTURBATIONS:
        raise ValueError(f"unknown perturbation {name!r}: choose from {', '.join(PERTURBATIONS)}")
    return PERTURBATIONS[name].function(parse_cot(output), item, rng_for(name, item, seed))


__all__ = [
    "CHECKS",
    "DECORATION_LENGTH",
    "DECORATION_WORDS",
    "HINTS",
    "IRRELEVANT_SENTENCES",
    "PERTURBATIONS",
    "Perturbation",
    "choice_text",
    "parse_perturbations",
    "perturb",
    "render_cot",
    "rng_for",
    "wrong_choice",
]
