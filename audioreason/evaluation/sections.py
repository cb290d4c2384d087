"""The scorers `audioreason score` runs on a run folder's outputs: which fit the benchmark (and why the
others do not), and each scorer's section of the results, built by calling the core scorers:

- ``accuracy``: the answer extractors of ``audioreason.text.answers`` (rules in ``RULES``; by default the one the
  template asks for: ``DEFAULT_RULES``), per (model, condition, template) set of outputs; every set's entries
  also give the official MMAR/MMAU scorer's accuracy (``official_scorer_correct``: its match on the whole reply);
- ``aria``: ``audioreason.scorers.aria.scorer.AriaScorer`` on the sets written with the ``aria_cot`` template (ARIA scores
  four-step CoTs, ARIA-Rubrics §3.2); with ``perturbations``, the CoT checks of ``audioreason.text.perturbations``;
- ``mmar_rubrics``: ``audioreason.scorers.mmar_rubrics.scorer.MMARRubricsScorer`` (a judge);
- ``audiospan_rubric``: ``audioreason.scorers.audiospan_rubric.scorer.AudioSpanRubricScorer`` on open-ended items (a judge);
- ``anchor_chain``: ``audioreason.scorers.anchor_chain.scorer`` Chain (Eq. 3) on anchor chains and native MCQ Accuracy (Eq. 1);
- ``text_prior_decomposition``: ``audioreason.scorers.text_prior.scorer.score_text_prior`` over the conditions of one
  model ("All That Glitters Is Not Audio", §2): needs ``full`` and at least one of ``none``, ``tb``, ``frag``.

Outputs that failed in the run (``error`` set, no text) stay in every denominator as empty outputs (wrong,
unanswered, an empty CoT) and are counted as ``failed`` beside each score. Items a set's condition and template
apply to but that have no output in it (a run cut short, a later ``--limit``) are not scored and are counted as
``missing`` in every entry of that set.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping, Optional, Sequence

from audioreason.text import answers
from audioreason.scorers.anchor_chain.scorer import parse_answer
from audioreason.text.audiospan_templates import item_format
from audioreason.text.cot import parse_cot
from audioreason.base.schema import ExtractedAnswer

SCORERS = ("accuracy", "aria", "mmar_rubrics", "audiospan_rubric", "anchor_chain", "text_prior_decomposition")
JUDGED = ("mmar_rubrics", "audiospan_rubric")
TEXT_PRIOR_CONDITIONS = ("none", "tb")  # with "frag:N:k": the conditions text_prior compares to "full"


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


RULES: dict[str, Rule] = {r.name: r for r in (
    Rule("aria", "ARIA-Rubrics App. E: the text after the last [ANSWER] tag",
         lambda text, item: answers.extract_aria(text, item["choices"])),
    Rule("aria_tolerant", "ARIA-Rubrics App. E on the parser's Answer slot (**Answer:**, Answer: ...)",
         lambda text, item: answers.extract_aria(text, item["choices"], tags="tolerant")),
    Rule("official_slot", "the official MMAR/MMAU string match on the Answer slot only (the whole output without "
         "one), as an extractor: not the official scorer, which reads the whole reply",
         lambda text, item: answers.extract_string_match(answer_text(text), item["choices"])),
    Rule("strict", "strict string match (letters, word order) on the Answer slot",
         lambda text, item: answers.extract_string_match(answer_text(text), item["choices"], strict=True)),
    Rule("hybrid", "All That Glitters hybrid (letter, then content; no judge)",
         lambda text, item: answers.extract_hybrid(text, item["choices"], question=item.get("question") or "")),
    Rule("exact_letter", "AudioSpan App. C.1: the reply is exactly one option letter",
         lambda text, item: parse_answer(text, item["choices"], "exact")),
    Rule("lmms_filtered", "the official MMAR/MMAU string match on lmms-eval's filtered reply (filtered_resps: "
         "reasoning tags removed) of an imported log, not on the raw reply the official scorer reads",
         lambda text, item: answers.extract_string_match(text, item["choices"]), reads=lmms_filtered_text,
         in_all=False),
)}
# The rule each template's instruction asks for: the CoT's [ANSWER] tag, the free prompt's "Answer:" line,
# the option text (the official MMAR/MMAU string match), the option letter (AudioSpan C.1).
DEFAULT_RULES = {"aria_cot": "aria", "aria_plain": "aria_tolerant", "plain": "official_slot",
                 "audiospan": "exact_letter"}
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
        return {"model": self.model, "condition": self.condition, "template": self.template,
                "template_hash": self.template_hash, "missing": self.missing}

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


# ---------------------------------------------------------------------------------------------
# Which scorers fit
# ---------------------------------------------------------------------------------------------

def text_prior_sets(sets: Sequence[OutputSet]) -> dict[str, list[OutputSet]]:
    """Template -> its sets, for the templates run under ``full`` and at least one other text-prior condition."""
    by_template: dict[str, list[OutputSet]] = {}
    for s in sets:
        by_template.setdefault(s.template, []).append(s)
    return {t: group for t, group in by_template.items()
            if any(s.condition == "full" for s in group)
            and any(s.condition in TEXT_PRIOR_CONDITIONS or s.condition.startswith("frag:") for s in group)}


def fit_reason(scorer: str, benchmark: str, items: Sequence[Mapping[str, Any]], sets: Sequence[OutputSet]
               ) -> Optional[str]:
    """Why ``scorer`` does not fit this run (None when it does)."""
    mcq = any(is_mcq(it) for it in items)
    if scorer == "accuracy":
        return None if mcq else "no multiple-choice item: accuracy needs choices to extract an answer from"
    if scorer == "aria":
        if not mcq:
            return "ARIA scores multiple-choice CoTs against a gold choice; the run has none"
        if not any(s.template == "aria_cot" for s in sets):
            used = ", ".join(sorted({s.template for s in sets}))
            return (f"ARIA scores four-step CoT outputs (ARIA-Rubrics §3.2: the aria_cot template); this run used "
                    f"{used}")
        return None
    if scorer == "mmar_rubrics":
        if benchmark != "mmar":
            return f"MMAR-Rubrics judges MMAR items against their rubric criteria; the benchmark is {benchmark}"
        if not any(it.get("rubric") for it in items):
            return "no item carries MMAR-Rubrics criteria (the rubric field)"
        return None
    if scorer == "audiospan_rubric":
        if benchmark != "audiospan":
            return f"the AudioSpan Rubric grades AudioSpan open-ended answers; the benchmark is {benchmark}"
        if not any(item_format(it) == "oeq" and it.get("rubric") for it in items):
            return "no open-ended AudioSpan item with rubric criteria (native_oeq) in this run"
        return None
    if scorer == "anchor_chain":
        if benchmark != "audiospan":
            return f"the anchor Chain and native MCQ Accuracy score AudioSpan items; the benchmark is {benchmark}"
        if not mcq:
            return "no AudioSpan multiple-choice item (anchor chains or native MCQs) in this run"
        return None
    if scorer == "text_prior_decomposition":
        if not mcq:
            return "the text-prior tables need multiple-choice items; the run has none"
        if not text_prior_sets(sets):
            conditions = ", ".join(sorted({s.condition for s in sets}))
            return (f"the text-prior decomposition compares one model's full condition with none, tb or frag:N:k "
                    f"(All That Glitters Is Not Audio, §2); this run has {conditions}")
        return None
    raise ValueError(f"unknown scorer {scorer!r}: choose from {', '.join(SCORERS)}")


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
        raise ValueError(f"extraction rule {extraction!r} is now {RENAMED_RULES[extraction]!r} (the official string "
                         "match on the Answer slot); the official scorer on the whole reply is reported for every "
                         "set as official_scorer_accuracy")
    if extraction not in RULES:
        raise ValueError(f"unknown extraction rule {extraction!r}: choose auto, all or one of {', '.join(RULES)}")
    return [extraction]


def accuracy_section(sets: Sequence[OutputSet], items: Mapping[str, Mapping[str, Any]], extraction: str,
                     uncertainty: Any = None) -> Section:
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
            entry = {**output_set.describe(), "rule": rule_name, "rule_description": rule.description,
                     "accuracy": sum(correct) / len(pairs), "correct": sum(correct), "n": len(pairs),
                     "unanswered": summary["unanswered"], "methods": summary["methods"],
                     "failed": sum(r.get("error") is not None for r, _ in pairs),
                     "official_scorer_accuracy": official / len(pairs), "official_scorer_correct": official,
                     "uncertainty": {"accuracy": U.wilson(sum(correct), len(pairs), uncertainty),
                                     "official_scorer_accuracy": U.wilson(official, len(pairs), uncertainty)}}
            section.results.append(entry)
            for (record, _), e, ok, off in zip(pairs, found, correct, official_ok):
                section.items.setdefault(record["key"], {})[rule_name] = {"choice": e.choice, "method": e.method,
                                                                          "correct": ok,
                                                                          "official_scorer_correct": off}
    return section


# ---------------------------------------------------------------------------------------------
# aria (and the perturbation checks)
# ---------------------------------------------------------------------------------------------

ARIA_SUMMARY = ("M1", "M2", "M3", "M4", "M5", "M6", "aria", "aria_metrics", "aria_complete", "accuracy",
                "unanswered_rate", "reasoning_mode", "reasoning_mode_rule")


def aria_sets(sets: Sequence[OutputSet], items: Mapping[str, Mapping[str, Any]]) -> list[OutputSet]:
    """The sets ARIA scores: the aria_cot template, multiple-choice items only."""
    out = []
    for s in sets:
        if s.template == "aria_cot":
            kept = [r for r in s.records if is_mcq(items[r["id"]])]
            if kept:
                out.append(OutputSet(s.model, s.condition, s.template, s.template_hash, kept, s.missing))
    return out


def aria_inputs(output_set: OutputSet, items: Mapping[str, Mapping[str, Any]]) -> tuple[list, list, list]:
    """(gold answers, choices, audio) of a set's items; the audio is the item's clip whatever the condition
    (M1 compares the CoT's entities with the clip the question is about)."""
    chosen = [items[r["id"]] for r in output_set.records]
    return [it["answer"] for it in chosen], [list(it["choices"]) for it in chosen], [it.get("audio") for it in chosen]


def aria_section(scorer: Any, sets: Sequence[OutputSet], items: Mapping[str, Mapping[str, Any]],
                 progress: Callable[[int], None], uncertainty: Any = None) -> Section:
    section = Section("ok")
    for output_set in aria_sets(sets, items):
        references, choices, audio = aria_inputs(output_set, items)
        result = scorer.score(output_set.texts(), references, choices, audio=audio, return_items=True)
        progress(len(output_set.records))
        per_item = result.pop("items")
        section.results.append({**output_set.describe(), **result, "n": len(output_set.records),
                                "failed": output_set.failed,
                                "uncertainty": aria_uncertainty(result, per_item, uncertainty)})
        for record, row in zip(output_set.records, per_item):
            section.items[record["key"]] = {k: row.get(k) for k in ("M1", "M2", "M3", "M4", "M5", "M6", "aria",
                                                                    "correct")}
    return section


def aria_uncertainty(result: Mapping[str, Any], per_item: Sequence[Mapping[str, Any]], uncertainty: Any = None
                     ) -> dict[str, dict[str, Any]]:
    """Bootstrap intervals over items of each metric's mean (its scored items, clipped to [0, 1], as the
    headline is computed), of ARIA (the mean of the metric means, recomputed in every resample) and the
    Wilson interval of the accuracy."""
    import math

    U = _uncertainty()
    uncertainty = uncertainty or U.DEFAULT
    finite = lambda v: v is not None and math.isfinite(float(v))  # noqa: E731
    out: dict[str, dict[str, Any]] = {}
    for m in ("M1", "M2", "M3", "M4", "M5", "M6"):
        values = [row.get(f"{m}_clipped") for row in per_item]
        if not finite(result.get(m)):
            out[m] = U.unavailable(f"{m} has no value", U.PERCENTILE, 0, uncertainty)
        else:
            out[m] = U.bootstrap_mean([float(v) for v in values if finite(v)], uncertainty)
    covered = list(result.get("aria_metrics") or [])
    if not finite(result.get("aria")) or not covered:
        out["aria"] = U.unavailable("ARIA has no value", U.PERCENTILE, len(per_item), uncertainty)
    else:
        columns = [[row.get(f"{m}_clipped") for row in per_item] for m in covered]
        columns = [[float(v) if finite(v) else None for v in c] for c in columns]
        out["aria"] = U.bootstrap(columns, _mean_of_nanmeans, uncertainty, allow_missing=True)
    out["accuracy"] = U.wilson_of([row.get("correct") for row in per_item], uncertainty)
    return out


def _mean_of_nanmeans(*columns, axis=-1):
    import numpy as np

    return np.mean([np.nanmean(c, axis=axis) for c in columns], axis=0)


def perturbation_section(scorer: Any, sets: Sequence[OutputSet], items: Mapping[str, Mapping[str, Any]],
                         names: Sequence[str], seed: int, progress: Callable[[int], None]) -> Section:
    """ARIA on each perturbation of each aria_cot set, beside the re-rendered originals (``rendered``): per
    perturbation the metric deltas (perturbed minus rendered), accuracy and unanswered rate (Table 7's Acc.
    and No Ans.), the answer-change rate (the ARIA App. E answer differs from the rendered original's, an
    answered/unanswered switch included) and the reasoning mode ARIA assigns (None when ARIA is incomplete or
    its profile matches none of the paper's modes: ``note`` says which)."""
    from audioreason.text.perturbations import PERTURBATIONS, perturb

    section = Section("ok")
    for output_set in aria_sets(sets, items):
        # An item with no wrong choice to point to cannot take the adversarial checks: it is left out of every
        # check of its set (so each delta compares the same items) and counted, never the whole set dropped.
        kept, texts, skipped = [], {name: [] for name in ["rendered", *names]}, []
        for record in output_set.records:
            try:
                perturbed = {name: perturb(name, record.get("output"), items[record["id"]], seed) for name in texts}
            except ValueError as err:
                skipped.append(f"{record['id']}: {err}")
                continue
            kept.append(record)
            for name, text in perturbed.items():
                texts[name].append(text)
        if skipped:
            section.notes.append(f"{output_set.label}: {len(skipped)} item(s) not perturbed: {'; '.join(skipped)}")
        if not kept:
            continue
        output_set = replace(output_set, records=kept)
        references, choices, audio = aria_inputs(output_set, items)
        scored = {}
        for name, perturbed in texts.items():
            scored[name] = scorer.score(perturbed, references, choices, audio=audio, return_items=True)
            progress(len(perturbed))
        base = scored["rendered"]
        base_answers = [row["extracted"]["index"] for row in base["items"]]
        rows = []
        for name in texts:
            result = scored[name]
            changed = [row["extracted"]["index"] != b for row, b in zip(result["items"], base_answers)]
            rows.append({"perturbation": name, "paper_name": PERTURBATIONS[name].paper_name,
                         "kind": PERTURBATIONS[name].kind,
                         **{k: result.get(k) for k in ARIA_SUMMARY},
                         "delta": {m: _delta(result.get(m), base.get(m)) for m in ("M1", "M2", "M3", "M4", "M5",
                                                                                  "M6", "aria", "accuracy")},
                         "answer_change_rate": sum(changed) / len(changed), "answer_changed": sum(changed),
                         "note": result.get("note")})
            for record, text, row, moved in zip(output_set.records, texts[name], result["items"], changed):
                section.items.setdefault(record["key"], {})[name] = {
                    "aria": row.get("aria"), "choice": row["extracted"]["choice"], "changed": moved,
                    "text": text}
        section.results.append({**output_set.describe(), "n": len(output_set.records), "not_perturbed": len(skipped),
                                "seed": seed,
                                "backbones": base.get("backbones"), "perturbations": rows})
    return section


def _delta(value: Any, base: Any) -> Optional[float]:
    if value is None or base is None:
        return None
    return float(value) - float(base)


# ---------------------------------------------------------------------------------------------
# Judged scorers
# ---------------------------------------------------------------------------------------------

def reply_parts(record: Mapping[str, Any]) -> tuple[str, str]:
    """(reasoning, answer) of an output for MMAR-Rubrics: the whole output and its Answer slot, or, for an
    MMAR results file imported with ``thinking_prediction`` (`audioreason import mmar`), that field and the
    output (its ``answer_prediction``), the two fields the official code/evaluation_rubrics.py reads."""
    text = record.get("output") or ""
    thinking = (record.get("details") or {}).get("thinking_prediction")
    return (thinking, text) if isinstance(thinking, str) else (text, answer_text(text))


NO_RUBRIC = "no rubric (not judged)"  # an item's status when it has no criteria to judge against


def mmar_rubrics_section(make_scorer: Callable[[], Any], sets: Sequence[OutputSet],
                         items: Mapping[str, Mapping[str, Any]], uncertainty: Any = None) -> Section:
    """An MMARRubricsScorer per set (``make_scorer()``, so each set's judge statistics are its own): the
    reasoning is the whole output, the answer its Answer slot (the whole output without one), as the
    challenge's submissions give them."""
    section = Section("ok")
    for output_set in sets:
        # An item without criteria (an empty or missing rubric) cannot be judged: it is left out of Rubrics and
        # its Accuracy, counted and named (in the entry, a note and the printed table), never dropped unsaid.
        records, no_rubric = [], []
        for record in output_set.records:
            if items[record["id"]].get("rubric"):
                records.append(record)
            else:
                no_rubric.append(str(record["id"]))
                section.items[record["key"]] = {"status": NO_RUBRIC}
        if no_rubric:
            section.notes.append(f"{output_set.label}: {len(no_rubric)} item(s) without rubric criteria, not "
                                 f"judged: {', '.join(no_rubric)}")
        if not records:
            continue
        reasonings, answers_given = zip(*(reply_parts(r) for r in records))
        result = make_scorer().score([items[r["id"]] for r in records], list(reasonings), list(answers_given),
                                     return_items=True)
        details = result.pop("items")
        by_id = {str(d["id"]): d for d in details}
        section.results.append({**output_set.describe(), **result, "failed_outputs": output_set.failed,
                                "no_rubric": len(no_rubric), "no_rubric_ids": no_rubric,
                                **mmar_uncertainty(result, details, uncertainty, items)})
        for record in records:
            detail = by_id.get(str(record["id"]))  # compat drops items whose judging failed
            section.items[record["key"]] = ({"status": "dropped (judging failed, compat)"} if detail is None else
                                            {"status": detail["status"], "score": detail["score"],
                                             "correct": detail["correct"],
                                             "raters": detail.get("raters", [])})  # verdicts, justifications
    return section


def _mmar_intervals(values: Mapping[str, Any], details: Sequence[Mapping[str, Any]], uncertainty: Any
                    ) -> dict[str, Any]:
    """Rubrics (each item's score, a failed one at 0, as the value counts it) by bootstrap and the
    official-gate Accuracy by Wilson, over ``details``, the items ``values`` was computed on."""
    U = _uncertainty()
    if values.get("rubrics") is None:
        rubrics = U.unavailable("Rubrics has no value", U.PERCENTILE, len(details), uncertainty)
    else:
        rubrics = U.bootstrap_mean([d.get("score") or 0 for d in details], uncertainty)
    accuracy = (U.wilson_of([d.get("correct") for d in details], uncertainty) if values.get("accuracy") is not None
                else U.unavailable("Accuracy has no value", U.WILSON, len(details)))
    return {"rubrics": rubrics, "accuracy": accuracy}


def mmar_uncertainty(result: Mapping[str, Any], details: Sequence[Mapping[str, Any]], uncertainty: Any = None,
                     items: Optional[Mapping[str, Mapping[str, Any]]] = None) -> dict[str, Any]:
    """The intervals of Rubrics and Accuracy over the items the headline counts (compat drops failed ones),
    and the rater spread beside them. With ``items`` (id -> item), each row of the modality, category and
    sub-category tables gets its own, over that row's items (written into the row, as the headline's)."""
    from audioreason.scorers.mmar_rubrics.formulas import GROUP_KEYS

    U = _uncertainty()
    uncertainty = uncertainty or U.DEFAULT
    if items is not None:
        for key in GROUP_KEYS:
            for name, row in (result.get(key) or {}).items():
                members = [d for d in details if str((items.get(str(d["id"])) or {}).get(key)) == name]
                if isinstance(row, dict):
                    row["uncertainty"] = _mmar_intervals(row, members, uncertainty)
    return {"uncertainty": _mmar_intervals(result, details, uncertainty),
            "rater_spread": U.rater_spread([d.get("rater_scores") or [] for d in details])}


def audiospan_rubric_section(make_scorer: Callable[[], Any], sets: Sequence[OutputSet],
                             items: Mapping[str, Mapping[str, Any]], uncertainty: Any = None) -> Section:
    """An AudioSpanRubricScorer per set on its open-ended items (``make_scorer()``, as for MMAR-Rubrics)."""
    section = Section("ok")
    for output_set in sets:
        open_ended = [r for r in output_set.records if item_format(items[r["id"]]) == "oeq"]
        records = [r for r in open_ended if items[r["id"]].get("rubric")]
        # As for MMAR-Rubrics: an open-ended item without criteria is not judged, but counted and named.
        no_rubric = [str(r["id"]) for r in open_ended if not items[r["id"]].get("rubric")]
        for record in open_ended:
            if not items[record["id"]].get("rubric"):
                section.items[record["key"]] = {"status": NO_RUBRIC}
        if no_rubric:
            section.notes.append(f"{output_set.label}: {len(no_rubric)} open-ended item(s) without rubric criteria, "
                                 f"not judged: {', '.join(no_rubric)}")
        if not records:
            continue
        result = make_scorer().score([items[r["id"]] for r in records], [r.get("output") for r in records],
                                     return_items=True)
        details = result.pop("items")
        U = _uncertainty()
        # The headline counts a failed item at 0 (audiospan_rubric.score_verdicts): so does its interval.
        interval = (U.bootstrap_mean([d.get("rubric") or 0 for d in details], uncertainty or U.DEFAULT)
                    if result.get("rubric") is not None else
                    U.unavailable("Rubric has no value", U.PERCENTILE, len(details), uncertainty or U.DEFAULT))
        section.results.append({**output_set.describe(), **result, "failed_outputs": output_set.failed,
                                "no_rubric": len(no_rubric), "no_rubric_ids": no_rubric,
                                "uncertainty": {"rubric": interval},
                                "rater_spread": U.rater_spread([d.get("rater_scores") or [] for d in details])})
        for record, detail in zip(records, details):
            section.items[record["key"]] = {"rubric": detail.get("rubric"), "n_valid_raters": detail.get("n_valid_raters"),
                                            "judge": detail.get("judge", [])}  # each rater's verdict per criterion
    return section


# ---------------------------------------------------------------------------------------------
# anchor_chain
# ---------------------------------------------------------------------------------------------

def anchor_chain_section(sets: Sequence[OutputSet], items: Mapping[str, Mapping[str, Any]], parse: str,
                         uncertainty: Any = None) -> Section:
    """Chain (Eq. 3) over the complete chains of each set (a chain with a link missing from the set is left
    out and counted) and native MCQ Accuracy (Eq. 1) over its native MCQs; replies parsed by ``parse``."""
    from audioreason.scorers.anchor_chain.scorer import score_anchor_chain, score_mcq_accuracy

    U = _uncertainty()
    uncertainty = uncertainty or U.DEFAULT
    section = Section("ok")
    for output_set in sets:
        by_chain: dict[str, dict[int, dict]] = {}
        native = []
        for record in output_set.records:
            item = items[record["id"]]
            if not is_mcq(item):
                continue
            if item.get("chain_id"):
                by_chain.setdefault(str(item["chain_id"]), {})[item.get("link_position")] = record
            else:
                native.append(record)
        complete = {c: links for c, links in by_chain.items() if set(links) == {1, 2, 3}}
        entry: dict[str, Any] = {**output_set.describe(), "parse": parse,
                                 "chains_incomplete": len(by_chain) - len(complete), "failed": output_set.failed}
        if complete:
            ordered = [complete[c][p] for c in complete for p in (1, 2, 3)]
            entry["chain"] = score_anchor_chain([items[r["id"]] for r in ordered], [r.get("output") for r in ordered],
                                                parse=parse, return_items=True)  # per-chain outcomes: the ladder
            # Chain is the mean of the chains' k/3: the bootstrap resamples chains (an item's three links stay
            # together).
            entry["chain"]["uncertainty"] = {"chain": U.bootstrap_mean([c["chain"] for c in entry["chain"]["chains"]],
                                                                       uncertainty)}
        if native:
            mcq = score_mcq_accuracy([items[r["id"]] for r in native], [r.get("output") for r in native], parse=parse,
                                     return_items=True)
            for record, row in zip(native, mcq.pop("items")):
                section.items[record["key"]] = {"correct": row["correct"], "method": row["method"]}
            mcq["uncertainty"] = {"accuracy": U.wilson(round(mcq["accuracy"] * mcq["n"]), mcq["n"], uncertainty)}
            entry["native_mcq"] = mcq
        if complete or native:
            section.results.append(entry)
    return section


# ---------------------------------------------------------------------------------------------
# text_prior_decomposition
# ---------------------------------------------------------------------------------------------

def text_prior_section(sets: Sequence[OutputSet], items: Mapping[str, Mapping[str, Any]], model: str,
                       uncertainty: Any = None) -> Section:
    """One ``score_text_prior`` per template over its conditions; every condition's outputs are the run's main
    model's (the tb outputs come from its text backbone). Raw outputs are scored with the hybrid extractor (the
    paper's); a failed output is an errored prediction. Items whose gold answer is not among the choices and
    outputs under a condition the paper does not define (``anchored``) are left out and counted."""
    from audioreason.scorers.text_prior.scorer import score_text_prior

    section = Section("ok")
    for template, group in text_prior_sets(sets).items():
        records, left_out = [], {"conditions_not_in_the_paper": 0, "gold_not_a_choice": 0}
        for output_set in group:
            if output_set.condition not in ("full", *TEXT_PRIOR_CONDITIONS) and \
                    not output_set.condition.startswith("frag:"):
                left_out["conditions_not_in_the_paper"] += len(output_set.records)
                continue
            for record in output_set.records:
                item = items[record["id"]]
                if not is_mcq(item):
                    continue
                if str(item["answer"]).strip() not in {str(c).strip() for c in item["choices"]}:
                    left_out["gold_not_a_choice"] += 1
                    continue
                category = item.get("category")
                records.append({"model": model, "item_id": str(record["id"]), "condition": output_set.condition,
                                "prediction": record.get("output") if record.get("error") is None else None,
                                "reference": str(item["answer"]), "choices": [str(c) for c in item["choices"]],
                                "category": category if isinstance(category, str) else None,
                                "question": str(item.get("question") or "")})
        if not records:
            continue
        result = score_text_prior(records, return_items=True)
        rows = result.pop("items")
        result["text_prior"]["uncertainty"] = text_prior_uncertainty(result["text_prior"], rows, uncertainty)
        section.results.append({"model": model, "template": template,
                                "conditions": sorted({r["condition"] for r in records}), "left_out": left_out,
                                **result})
        labels = {str(row["item_id"]): row["label"] for row in rows}
        for output_set in group:
            for record in output_set.records:
                if str(record["id"]) in labels:
                    section.items[record["key"]] = {"label": labels[str(record["id"])]}
    return section


def text_prior_uncertainty(text_prior: Mapping[str, Any], rows: Sequence[Mapping[str, Any]],
                           uncertainty: Any = None) -> dict[str, dict[str, Any]]:
    """Over the items with both a Full and a None prediction (the ones R_TP is computed on; one model): the
    Wilson intervals of the Full and None accuracies and the bootstrap interval of R_TP = sum None / sum Full."""
    from audioreason.scorers.text_prior.records import CORRECT

    U = _uncertainty()
    uncertainty = uncertainty or U.DEFAULT
    matched = [r for r in rows if r.get("full") is not None and r.get("none") is not None]
    full = [r["full"] == CORRECT for r in matched]
    none = [r["none"] == CORRECT for r in matched]
    if not matched:
        why = "no item has both a Full and a None prediction"
        return {"full_mean": U.unavailable(why, U.WILSON, 0), "none_mean": U.unavailable(why, U.WILSON, 0),
                "R_TP": U.unavailable(why, U.PERCENTILE, 0, uncertainty)}
    r_tp = (U.bootstrap_ratio([int(x) for x in none], [int(x) for x in full], uncertainty)
            if text_prior.get("R_TP") is not None else
            U.unavailable("R_TP is undefined (no Full answer is correct)", U.PERCENTILE, len(matched), uncertainty))
    return {"full_mean": U.wilson(sum(full), len(full), uncertainty),
            "none_mean": U.wilson(sum(none), len(none), uncertainty), "R_TP": r_tp}


__all__ = ["DEFAULT_RULES", "JUDGED", "RULES", "SCORERS", "OutputSet", "Section", "accuracy_section",
           "anchor_chain_section", "answer_text", "aria_section", "audiospan_rubric_section", "extraction_rules",
           "fit_reason", "mmar_rubrics_section", "not_applicable", "perturbation_section", "text_prior_section",
           "unavailable"]
