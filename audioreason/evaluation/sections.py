"""The sections of the results `audioreason score` writes, and what they share: a run's outputs grouped into
sets (``OutputSet``), a section (``Section``: ok, not applicable or unavailable), and the run scoring's own
section, ``accuracy``: the answer extractors of ``audioreason.text.answers`` (rules in ``RULES``; by default the
one the template asks for: ``DEFAULT_RULES``), per (model, condition, template) set of outputs; every set's
entries also give the official MMAR/MMAU scorer's accuracy (``official_scorer_correct``: its match on the whole
reply). Every scorer's own section is built by its declaration (``scorers/<name>/declaration.py``, listed in
``scorers.registry``), which says when it fits the run and calls the core scorer.

Outputs that failed in the run (``error`` set, no text) stay in every denominator as empty outputs (wrong,
unanswered, an empty CoT) and are counted as ``failed`` beside each score. Items a set's condition and template
apply to but that have no output in it (a run cut short, a later ``--limit``) are not scored and are counted as
``missing`` in every entry of that set.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional, Sequence

from audioreason.base.schema import ExtractedAnswer
from audioreason.scorers.anchor_chain.scorer import parse_answer
from audioreason.text import answers
from audioreason.text.audiospan_templates import item_format
from audioreason.text.cot import parse_cot


def answer_text(output: Optional[str]) -> str:
    """What a string-match scorer reads as the predicted answer: the CoT's Answer slot, or the whole output
    when it has none (as a submission's "predicted answer" field)."""
    output = output or ""
    slots = parse_cot(output)
    return output if "answer" in slots.missing else slots.answer


def output_text(record: Mapping[str, Any]) -> str:
    return record.get("output") or ""


def lmms_filtered_text(record: Mapping[str, Any]) -> str:
    """lmms-eval's filtered reply of an imported log (``details.filtered_response``), else the output itself."""
    filtered = (record.get("details") or {}).get("filtered_response")
    return filtered if isinstance(filtered, str) else output_text(record)


@dataclass(frozen=True)
class Rule:
    name: str
    description: str
    extract: Callable[[str, Mapping[str, Any]], ExtractedAnswer]
    reads: Callable[[Mapping[str, Any]], str] = output_text  # the text of a record the rule extracts from
    in_all: bool = True  # one of the rules --extraction all runs (lmms_filtered is asked for by name)


RULES: dict[str, Rule] = {
    r.name: r
    for r in (
        Rule(
            "aria",
            "ARIA-Rubrics App. E: the text after the last [ANSWER] tag",
            lambda text, item: answers.extract_aria(text, item["choices"]),
        ),
        Rule(
            "aria_tolerant",
            "ARIA-Rubrics App. E on the parser's Answer slot (**Answer:**, Answer: ...)",
            lambda text, item: answers.extract_aria(text, item["choices"], tags="tolerant"),
        ),
        Rule(
            "official_slot",
            "the official MMAR/MMAU string match on the Answer slot only (the whole output without "
            "one), as an extractor: not the official scorer, which reads the whole reply",
            lambda text, item: answers.extract_string_match(answer_text(text), item["choices"]),
        ),
        Rule(
            "strict",
            "strict string match (letters, word order) on the Answer slot",
            lambda text, item: answers.extract_string_match(answer_text(text), item["choices"], strict=True),
        ),
        Rule(
            "hybrid",
            "All That Glitters hybrid (letter, then content; no judge)",
            lambda text, item: answers.extract_hybrid(text, item["choices"], question=item.get("question") or ""),
        ),
        Rule(
            "exact_letter",
            "AudioSpan App. C.1: the reply is exactly one option letter",
            lambda text, item: parse_answer(text, item["choices"], "exact"),
        ),
        Rule(
            "lmms_filtered",
            "the official MMAR/MMAU string match on lmms-eval's filtered reply (filtered_resps: "
            "reasoning tags removed) of an imported log, not on the raw reply the official scorer reads",
            lambda text, item: answers.extract_string_match(text, item["choices"]),
            reads=lmms_filtered_text,
            in_all=False,
        ),
    )
}
# The rule each template's instruction asks for: the CoT's [ANSWER] tag, the free prompt's "Answer:" line,
# the option text (the official MMAR/MMAU string match), the option letter (AudioSpan C.1).
DEFAULT_RULES = {
    "aria_cot": "aria",
    "aria_plain": "aria_tolerant",
    "plain": "official_slot",
    "audiospan": "exact_letter",
}
RENAMED_RULES = {"official": "official_slot"}


def official_scorer_correct(output: Optional[str], item: Mapping[str, Any]) -> bool:
    """The official MMAR/MMAU scorer's verdict on one reply: its string match on the whole raw reply, as
    MMAU's evaluation.py reads ``model_output`` and MMAR's code/evaluation.py reads ``answer_prediction``
    (the reply as the MMAR inference scripts save it). A failed output is an empty reply: wrong."""
    return answers.official_string_match(item["answer"], output or "", item["choices"])


@dataclass
class OutputSet:
    """The outputs of one (model, condition, template), in item order."""

    model: str
    condition: str
    template: str
    template_hash: str
    records: list[dict] = field(default_factory=list)
    missing: int = 0  # items the condition and template apply to that have no output here (a run cut short)

    @property
    def label(self) -> str:
        return f"{self.condition}/{self.template}"

    def describe(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "condition": self.condition,
            "template": self.template,
            "template_hash": self.template_hash,
            "missing": self.missing,
        }

    def texts(self) -> list[str]:
        return [r.get("output") or "" for r in self.records]

    @property
    def failed(self) -> int:
        return sum(r.get("error") is not None for r in self.records)


@dataclass
class Section:
    """A scorer's part of the results: ``status`` "ok", "not_applicable" (it does not fit: ``reason``) or
    "unavailable" (it fits but cannot run here: ``reason``); ``results`` one entry per set (or per model);
    ``items`` per-item values by output key."""

    status: str
    reason: Optional[str] = None
    results: list[dict[str, Any]] = field(default_factory=list)
    items: dict[str, dict[str, Any]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"status": self.status}
        if self.reason:
            out["reason"] = self.reason
        if self.notes:
            out["notes"] = self.notes
        if self.status == "ok":
            out["results"] = self.results
        return out


def _uncertainty():
    """audioreason.analysis.uncertainty, imported when a section is built (it loads scipy.stats)."""
    from audioreason.analysis import uncertainty

    return uncertainty


def not_applicable(reason: str) -> Section:
    return Section("not_applicable", reason)


def unavailable(reason: str) -> Section:
    return Section("unavailable", reason)


def is_mcq(item: Mapping[str, Any]) -> bool:
    return item_format(item) == "mcq" and bool(item.get("choices"))


NO_RUBRIC = "no rubric (not judged)"  # an item's status when it has no criteria to judge against


def accuracy_fit(benchmark: str, items: Sequence[Mapping[str, Any]], sets: Sequence[OutputSet]) -> Optional[str]:
    """Why the accuracy section does not fit this run (None when it does)."""
    if not any(is_mcq(it) for it in items):
        return "no multiple-choice item: accuracy needs choices to extract an answer from"
    return None


# ---------------------------------------------------------------------------------------------
# accuracy
# ---------------------------------------------------------------------------------------------


def extraction_rules(template: str, extraction: str) -> list[str]:
    """The rules a set is scored with: ``auto`` (its template's), ``all``, or one rule's name."""
    if extraction == "auto":
        return [DEFAULT_RULES.get(template, "hybrid")]
    if extraction == "all":
        return [name for name, rule in RULES.items() if rule.in_all]
    if extraction in RENAMED_RULES:
        raise ValueError(
            f"extraction rule {extraction!r} is now {RENAMED_RULES[extraction]!r} (the official string "
            "match on the Answer slot); the official scorer on the whole reply is reported for every "
            "set as official_scorer_accuracy"
        )
    if extraction not in RULES:
        raise ValueError(f"unknown extraction rule {extraction!r}: choose auto, all or one of {', '.join(RULES)}")
    return [extraction]


def accuracy_section(
    sets: Sequence[OutputSet], items: Mapping[str, Mapping[str, Any]], extraction: str, uncertainty: Any = None
) -> Section:
    """Per set and rule: the accuracy and the official scorer's, each with its Wilson interval (k of n)."""
    U = _uncertainty()
    uncertainty = uncertainty or U.DEFAULT
    section = Section("ok")
    for output_set in sets:
        pairs = [(r, items[r["id"]]) for r in output_set.records if is_mcq(items[r["id"]])]
        if not pairs:
            continue
        # The official scorer, whatever the template and the rules: its match on the whole raw reply.
        official_ok = [official_scorer_correct(r.get("output"), item) for r, item in pairs]
        official = sum(official_ok)
        for rule_name in extraction_rules(output_set.template, extraction):
            rule = RULES[rule_name]
            found = [rule.extract(rule.reads(r), item) for r, item in pairs]
            correct = [answers.is_gold(e, item["answer"]) for e, (_, item) in zip(found, pairs)]
            summary = answers.summarize(found)
            entry = {
                **output_set.describe(),
                "rule": rule_name,
                "rule_description": rule.description,
                "accuracy": sum(correct) / len(pairs),
                "correct": sum(correct),
                "n": len(pairs),
                "unanswered": summary["unanswered"],
                "methods": summary["methods"],
                "failed": sum(r.get("error") is not None for r, _ in pairs),
                "official_scorer_accuracy": official / len(pairs),
                "official_scorer_correct": official,
                "uncertainty": {
                    "accuracy": U.wilson(sum(correct), len(pairs), uncertainty),
                    "official_scorer_accuracy": U.wilson(official, len(pairs), uncertainty),
                },
            }
            section.results.append(entry)
            for (record, _), e, ok, off in zip(pairs, found, correct, official_ok):
                section.items.setdefault(record["key"], {})[rule_name] = {
                    "choice": e.choice,
                    "method": e.method,
                    "correct": ok,
                    "official_scorer_correct": off,
                }
    return section


__all__ = [
    "DEFAULT_RULES",
    "NO_RUBRIC",
    "RULES",
    "OutputSet",
    "Section",
    "accuracy_fit",
    "accuracy_section",
    "answer_text",
    "extraction_rules",
    "is_mcq",
    "not_applicable",
    "unavailable",
]
