"""Text prior and audio reliance ("All That Glitters Is Not Audio: Rethinking Text Priors and Audio
Reliance in Audio-Language Evaluation", arXiv:2604.24401, §2-§4): from per-condition predictions to the
paper's tables. Where the paper is silent, options name the conventions of its public analysis code
(github.com/leonardofhy/all-that-glitters-is-not-audio); the metric card says which option reproduces which.

Input: one record per (model, item, condition). ``condition`` follows this grammar (case-insensitive,
surrounding spaces ignored)::

    condition := "full" | "none" | "tb" | "frag:" N ":" k      N, k decimal integers, N >= 2, 0 <= k < N

full = the clip as given; none = no audio input at all (not silence); tb = the model's text-only
backbone; frag:N:k = the k-th (0-based) of N equal-duration fragments (``audioreason.audio.fragments``).

A record's ``prediction`` is either a correctness (True/False/0/1; ``reference`` may be None) or a raw
model output (str), scored with the core's hybrid extractor (``answers.extract_hybrid``) against the
record's ``choices`` and gold ``reference``; None means the run errored (no output: the public code's
"ERROR: ..." record). A raw output whose extraction fails (``unanswered``: no letter, no content match and
no judge to ask, or an empty output; ``judge_error``; ``judge_invalid``) is also an *errored* prediction.
Errored predictions count as not correct in every accuracy and are reported per condition; in the FS/XS
split they follow ``errored_fragments``: under "separate" every errored fragment is unverified evidence,
under "sufficient" (the public code) only a run that errored counts, as sufficient, and an unreadable
output is a wrong answer (``_fragment_evidence``, ``audioreason.scorers.text_prior.formulas.categorize_item``).

``score_text_prior(records)`` returns accuracy per condition, the text-prior rate, the retention curve,
the item decomposition (Table 1, Table 4), the per-category table (Table 5), counts of missing and
errored predictions, and optionally the per-item table. The formulas live in
``audioreason.scorers.text_prior.formulas``; this module parses, validates and groups.

Scale: every accuracy, rate (R_TP, R_N), share and chance level is a fraction in [0, 1], the project's one
scale (``audioreason.base.scale``); the paper prints them x 100 (R_2 = 45.0 in the paper is 0.45 here). They are
computed exactly and returned as the nearest floats.
"""
from __future__ import annotations

import math
import numbers
import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, Hashable, Iterable, Mapping, NamedTuple, Optional, Sequence

from audioreason.text.answers import as_correctness, extract_hybrid, is_gold
from audioreason.base.jsonl import parse_json_lines
from audioreason.base.scale import floats, rounded
from audioreason.scorers.text_prior import formulas as tp
from audioreason.text.timestamps import as_fraction

CORRECT, WRONG, ERROR = "correct", "wrong", "error"
ERROR_METHODS = ("unanswered", "judge_error", "judge_invalid")  # extraction outcomes that are errors
_FRAGMENT = re.compile(r"^frag:(\d+):(\d+)$")
TABLE5_N = 2  # Table 5 reports retention at N = 2


class Condition(NamedTuple):
    kind: str                 # "full", "none", "tb" or "frag"
    n: Optional[int] = None   # fragments per clip (frag only)
    k: Optional[int] = None   # fragment index, 0-based (frag only)

    def __str__(self) -> str:
        return f"frag:{self.n}:{self.k}" if self.kind == "frag" else self.kind


def parse_condition(text: Any) -> Condition:
    """Parse a condition string of the grammar above; ValueError says what is wrong."""
    if isinstance(text, Condition):
        return text
    if not isinstance(text, str):
        raise ValueError(f"condition must be a string, got {type(text).__name__} {text!r}")
    norm = text.strip().lower()
    if norm in ("full", "none", "tb"):
        return Condition(norm)
    m = _FRAGMENT.match(norm)
    if not m:
        raise ValueError(f"unknown condition {text!r}: use 'full', 'none', 'tb' or 'frag:N:k' (e.g. 'frag:3:0')")
    n, k = int(m.group(1)), int(m.group(2))
    if n < 2:
        raise ValueError(f"condition {text!r}: N must be >= 2 (N = 1 is the full clip)")
    if k >= n:
        raise ValueError(f"condition {text!r}: fragment index k={k} out of range 0..{n - 1}")
    return Condition("frag", n, k)


def fragment_condition(n: int, k: int) -> str:
    """The condition name of fragment k of N, e.g. ``fragment_condition(3, 0) == 'frag:3:0'``."""
    return str(parse_condition(f"frag:{n}:{k}"))


# ---------------------------------------------------------------------------------------------
# Records: validation and scoring of each prediction
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Record:
    row: int
    model: str
    item_id: Hashable
    condition: Condition
    prediction: Any
    reference: Optional[str] = None
    choices: Optional[tuple[str, ...]] = None
    category: Optional[str] = None
    question: str = ""

    @property
    def where(self) -> str:
        return f"row {self.row} (model {self.model!r}, item {self.item_id!r}, condition {str(self.condition)!r})"


@dataclass(frozen=True)
class Outcome:
    status: str                  # CORRECT, WRONG or ERROR
    method: str                  # "given" (a correctness), "no_prediction", or the extraction method
    choice: Optional[str] = None  # the extracted choice text, for raw outputs


def prediction_kind(value: Any) -> str:
    """'correctness', 'raw' or 'error' (None); ValueError for anything else."""
    if value is None:
        return "error"
    if isinstance(value, str):
        return "raw"
    if as_correctness(value) is not None:
        return "correctness"
    raise ValueError(f"a prediction must be True/False/0/1 (correctness), a raw output string, or None "
                     f"(errored), got {type(value).__name__} {value!r}")


def prediction_column_kind(predictions: Sequence[Any]) -> str:
    """'correctness' or 'raw' for a column holding one kind (None entries allowed), 'error' when every
    entry is None. ValueError names the first invalid entry, or the first row that mixes kinds (a
    column stored by ``evaluate`` has one type; the records form accepts mixed rows)."""
    first: Optional[tuple[int, str]] = None
    for row, value in enumerate(predictions):
        try:
            kind = prediction_kind(value)
        except ValueError as err:
            raise ValueError(f"prediction {row}: {err}") from None
        if kind == "error":
            continue
        if first is None:
            first = (row, kind)
        elif kind != first[1]:
            raise ValueError(f"prediction {row} is a {kind} value but prediction {first[0]} is a {first[1]} value: "
                             "give one kind per call (or pass mixed records to "
                             "audioreason.scorers.text_prior.scorer.score_text_prior)")
    return first[1] if first else "error"


def _normalise_record(row: int, raw: Mapping[str, Any]) -> Record:
    if not isinstance(raw, Mapping):
        raise ValueError(f"row {row}: a record must be a dict, got {type(raw).__name__}")
    unknown = set(raw) - {"model", "item_id", "condition", "prediction", "reference", "choices", "category", "question"}
    if unknown:
        raise ValueError(f"row {row}: unknown field(s) {sorted(unknown)}; expected model, item_id, condition, "
                         "prediction and optionally reference, choices, category, question")
    for key in ("model", "item_id", "condition"):
        if raw.get(key) is None:
            raise ValueError(f"row {row}: '{key}' is missing")
    model, item_id = raw["model"], raw["item_id"]
    if not isinstance(model, str) or not model.strip():
        raise ValueError(f"row {row}: model must be a non-empty string, got {model!r}")
    try:
        hash(item_id)
        # NaN (pandas' missing value) never equals itself: each row would silently be an item of its own.
        usable = not (isinstance(item_id, numbers.Real) and not math.isfinite(item_id))
    except TypeError:
        usable = False
    if not usable:
        raise ValueError(f"row {row} (model {model!r}): item_id must be a string or number (not NaN or infinite), "
                         f"got {item_id!r}")
    try:
        condition = parse_condition(raw["condition"])
    except ValueError as err:
        raise ValueError(f"row {row} (model {model!r}, item {item_id!r}): {err}") from None
    choices = raw.get("choices")
    if choices is not None:
        if isinstance(choices, str) or not all(isinstance(c, str) for c in choices) or not len(choices):
            raise ValueError(f"row {row} (model {model!r}, item {item_id!r}): choices must be a non-empty list "
                             f"of strings, got {choices!r}")
        choices = tuple(choices)
    reference, category, question = raw.get("reference"), raw.get("category"), raw.get("question") or ""
    for key, value in (("reference", reference), ("category", category), ("question", question)):
        if value is not None and not isinstance(value, str):
            raise ValueError(f"row {row} (model {model!r}, item {item_id!r}): {key} must be a string, got {value!r}")
    record = Record(row, model, item_id, condition, raw.get("prediction"), reference, choices, category, question)
    try:
        kind = prediction_kind(record.prediction)
    except ValueError as err:
        raise ValueError(f"{record.where}: {err}") from None
    if kind == "raw":
        if choices is None or reference is None:
            raise ValueError(f"{record.where}: a raw output needs the item's choices and its gold reference "
                             "(or give the correctness as True/False)")
        if reference.strip() not in {c.strip() for c in choices}:
            raise ValueError(f"{record.where}: the gold reference {reference!r} is not one of the choices "
                             f"{list(choices)}")
    return record


def validate_records(records: Iterable[Mapping[str, Any]]) -> list[Record]:
    """Normalise and check every record: fields, condition grammar, prediction kind, duplicates,
    and per-item consistency of category and number of choices. ValueError names the row."""
    out: list[Record] = []
    seen: dict[tuple, int] = {}
    item_category: dict[Hashable, tuple[Optional[str], int]] = {}
    item_n_choices: dict[Hashable, tuple[int, int]] = {}
    for row, raw in enumerate(records):
        record = _normalise_record(row, raw)
        key = (record.model, record.item_id, record.condition)
        if key in seen:
            raise ValueError(f"{record.where} duplicates row {seen[key]}: one prediction per (model, item, condition)")
        seen[key] = row
        if record.category is not None:
            previous = item_category.setdefault(record.item_id, (record.category, row))
            if previous[0] != record.category:
                raise ValueError(f"{record.where}: category {record.category!r} differs from {previous[0]!r} "
                                 f"given for the same item in row {previous[1]}")
        if record.choices is not None:
            previous_n = item_n_choices.setdefault(record.item_id, (len(record.choices), row))
            if previous_n[0] != len(record.choices):
                raise ValueError(f"{record.where}: {len(record.choices)} choices, but row {previous_n[1]} gives "
                                 f"{previous_n[0]} for the same item")
        out.append(record)
    if not out:
        raise ValueError("no records to score")
    return out


def score_prediction(record: Record, judge: Optional[Callable] = None) -> Outcome:
    """Correct / wrong / error for one record (raw outputs through ``extract_hybrid``)."""
    kind = prediction_kind(record.prediction)
    if kind == "error":
        return Outcome(ERROR, "no_prediction")
    if kind == "correctness":
        return Outcome(CORRECT if as_correctness(record.prediction) else WRONG, "given")
    extracted = extract_hybrid(record.prediction, record.choices, question=record.question, judge=judge)
    if extracted.method in ERROR_METHODS:
        return Outcome(ERROR, extracted.method)
    return Outcome(CORRECT if is_gold(extracted, record.reference) else WRONG, extracted.method, extracted.choice)


# ---------------------------------------------------------------------------------------------
# Other input shapes
# ---------------------------------------------------------------------------------------------

def _column(name: str, values: Optional[Sequence[Any]], n: int, required: bool = False) -> list[Any]:
    if values is None:
        if required:
            raise ValueError(f"'{name}' is required: one value per prediction")
        return [None] * n
    if isinstance(values, (str, bytes)):
        raise ValueError(f"'{name}' must be a list with one value per prediction, got a string")
    values = list(values)
    if len(values) != n:
        raise ValueError(f"'{name}' has {len(values)} values but there are {n} predictions")
    return values


def records_from_columns(predictions: Sequence[Any], references: Optional[Sequence[Any]] = None, *,
                         model: Sequence[str], item_id: Sequence[Hashable], condition: Sequence[str],
                         choices: Optional[Sequence[Optional[Sequence[str]]]] = None,
                         category: Optional[Sequence[Optional[str]]] = None,
                         question: Optional[Sequence[Optional[str]]] = None) -> list[dict[str, Any]]:
    """Parallel lists (the ``evaluate`` form) -> records; lengths are checked, each list named."""
    if isinstance(predictions, (str, bytes)) or predictions is None:
        raise ValueError("'predictions' must be a list")
    predictions = list(predictions)
    n = len(predictions)
    columns = {
        "reference": _column("references", references, n),
        "model": _column("model", model, n, required=True),
        "item_id": _column("item_id", item_id, n, required=True),
        "condition": _column("condition", condition, n, required=True),
        "choices": _column("choices", choices, n),
        "category": _column("category", category, n),
        "question": _column("question", question, n),
    }
    return [{"prediction": p, **{k: v[i] for k, v in columns.items()}} for i, p in enumerate(predictions)]


def records_from_nested(table: Mapping[str, Mapping[Hashable, Mapping[str, Any]]], *,
                        categories: Optional[Mapping[Hashable, str]] = None,
                        choices: Optional[Mapping[Hashable, Sequence[str]]] = None) -> list[dict[str, Any]]:
    """``{model: {item_id: {condition: correctness}}}`` -> records. Correctness is True/False/0/1, or
    None for an errored prediction; ``categories`` and ``choices`` map item ids (choices only serve the
    chance level here, since the predictions are already scored)."""
    records = []
    for model, items in table.items():
        if not isinstance(items, Mapping):
            raise ValueError(f"model {model!r}: expected {{item_id: {{condition: correct}}}}, "
                             f"got {type(items).__name__}")
        for item_id, conditions in items.items():
            if not isinstance(conditions, Mapping):
                raise ValueError(f"model {model!r}, item {item_id!r}: expected {{condition: correct}}, "
                                 f"got {type(conditions).__name__}")
            for condition, value in conditions.items():
                if isinstance(value, str):
                    raise ValueError(f"model {model!r}, item {item_id!r}, condition {condition!r}: the nested form "
                                     "takes correctness values; give raw outputs as records with reference and choices")
                records.append({"model": model, "item_id": item_id, "condition": condition, "prediction": value,
                                "category": (categories or {}).get(item_id),
                                "choices": (choices or {}).get(item_id)})
    return records


# ---------------------------------------------------------------------------------------------
# Aggregation
# ---------------------------------------------------------------------------------------------

@dataclass
class _ModelTable:
    """One model's outcomes: condition -> item -> Outcome."""
    name: str
    by_condition: dict[Condition, dict[Hashable, Outcome]]

    def items(self, condition: Condition) -> dict[Hashable, Outcome]:
        return self.by_condition.get(condition, {})

    @property
    def fragment_conditions(self) -> list[Condition]:
        return sorted(c for c in self.by_condition if c.kind == "frag")

    @property
    def fragment_ns(self) -> list[int]:
        return sorted({c.n for c in self.fragment_conditions})


def _is_correct(outcome: Optional[Outcome]) -> bool:
    return outcome is not None and outcome.status == CORRECT


def _condition_summary(outcomes: Mapping[Hashable, Outcome], universe: int) -> dict[str, Any]:
    statuses = Counter(o.status for o in outcomes.values())
    methods = Counter(o.method for o in outcomes.values())
    return {
        "accuracy": tp.accuracy([o.status == CORRECT for o in outcomes.values()]),
        "n": len(outcomes),
        "correct": statuses[CORRECT],
        "errors": statuses[ERROR],
        "error_reasons": {m: c for m, c in methods.items() if m in ERROR_METHODS or m == "no_prediction"},
        "methods": dict(methods),
        "missing": universe - len(outcomes),
    }


def _accuracy_section(tables: list[_ModelTable], universe: int) -> dict[str, Any]:
    per_model: dict[str, dict[str, Any]] = {}
    for table in tables:
        entry = {str(c): _condition_summary(table.items(c), universe)
                 for c in sorted(table.by_condition, key=_condition_order)}
        for n in table.fragment_ns:  # all fragments of one N pooled: mean over items and k
            pooled = {(c.k, item): o for c in table.fragment_conditions if c.n == n
                      for item, o in table.items(c).items()}
            entry[f"frag:{n}"] = _condition_summary(pooled, universe * n)
        per_model[table.name] = entry
    conditions = sorted({c for entry in per_model.values() for c in entry}, key=_condition_key_order)
    across = {}
    for condition in conditions:
        values = [per_model[m][condition]["accuracy"] for m in per_model
                  if condition in per_model[m] and per_model[m][condition]["accuracy"] is not None]
        across[condition] = {**tp.stats(values), "models": [m for m in per_model if condition in per_model[m]]}
    return {"per_model": per_model, "across_models": across}


def _condition_order(c: Condition) -> tuple:
    return ({"full": 0, "none": 1, "tb": 2, "frag": 3}[c.kind], c.n or 0, c.k or 0)


def _condition_key_order(key: str) -> tuple:
    parts = key.split(":")
    base = {"full": 0, "none": 1, "tb": 2, "frag": 3}[parts[0]]
    return (base, int(parts[1]) if len(parts) > 1 else 0, int(parts[2]) if len(parts) > 2 else -1)


def _chance_for(items: Iterable[Hashable], n_choices: Mapping[Hashable, int],
                chance: Optional[float]) -> tuple[Optional[float], str]:
    """The TB chance level: ``chance`` when given (the paper's flat 25 % for MMAU and MMAR), else the
    mean of 1 / (number of choices) over the TB items, when every one has its choices."""
    if chance is not None:
        return as_fraction(chance), "option"
    items = list(items)
    if items and all(i in n_choices for i in items):
        return tp.chance_level([n_choices[i] for i in items]), "choices"
    known = sum(i in n_choices for i in items)
    return None, f"unknown: choices known for {known} of {len(items)} TB items and no chance= option"


def _text_prior_section(tables: list[_ModelTable], n_choices: Mapping[Hashable, int],
                        chance: Optional[float]) -> dict[str, Any]:
    full, none, tb = Condition("full"), Condition("none"), Condition("tb")
    per_model = {}
    for table in tables:
        f, n, t = table.items(full), table.items(none), table.items(tb)
        matched = [i for i in f if i in n]
        acc_full_m = tp.accuracy([_is_correct(f[i]) for i in matched])
        acc_none_m = tp.accuracy([_is_correct(n[i]) for i in matched])
        acc_tb = tp.accuracy([_is_correct(o) for o in t.values()])
        chance_value, chance_source = _chance_for(t, n_choices, chance) if t else (None, "no TB predictions")
        per_model[table.name] = {
            "full": tp.accuracy([_is_correct(o) for o in f.values()]),
            "none": tp.accuracy([_is_correct(o) for o in n.values()]),
            "tb": acc_tb,
            "n_full": len(f), "n_none": len(n), "n_tb": len(t),
            "matched_items": len(matched),
            "full_matched": acc_full_m,
            "none_matched": acc_none_m,
            "R_TP": tp.text_prior_rate(acc_none_m, acc_full_m),
            "chance": chance_value,
            "chance_source": chance_source,
            "tb_minus_chance": (acc_tb - chance_value) if acc_tb is not None and chance_value is not None else None,
        }
    both = [m for m, e in per_model.items() if e["full_matched"] is not None and e["none_matched"] is not None]
    with_tb = [m for m, e in per_model.items() if e["tb_minus_chance"] is not None]
    ratios = [per_model[m]["R_TP"] for m in both if per_model[m]["R_TP"] is not None]
    return {
        "per_model": per_model,
        "R_TP": tp.pooled_text_prior_rate([per_model[m]["none_matched"] for m in both],
                                          [per_model[m]["full_matched"] for m in both]),
        "R_TP_models": both,
        "R_TP_mean_of_ratios": tp.mean_or_none(ratios),
        "full_mean": tp.mean_or_none([per_model[m]["full_matched"] for m in both]),
        "none_mean": tp.mean_or_none([per_model[m]["none_matched"] for m in both]),
        "tb_mean": tp.mean_or_none([per_model[m]["tb"] for m in per_model if per_model[m]["tb"] is not None]),
        "chance_mean": tp.mean_or_none([per_model[m]["chance"] for m in with_tb]),
        "tb_minus_chance_mean": tp.mean_or_none([per_model[m]["tb_minus_chance"] for m in with_tb]),
        "tb_minus_chance_models": with_tb,
    }


def _retention_for(table: _ModelTable, n: int, items: Optional[set] = None) -> dict[str, Any]:
    """R_N of one model over the items (optionally restricted) that have Full and all N fragments."""
    full = table.items(Condition("full"))
    frags = [table.items(Condition("frag", n, k)) for k in range(n)]
    missing_k = [k for k in range(n) if not frags[k]]
    candidates = [i for i in full if items is None or i in items]
    complete = [i for i in candidates if all(i in frag for frag in frags)]
    entry: dict[str, Any] = {"R_N": None, "fragment_accuracy": None, "full_accuracy": None,
                             "n_items": len(complete), "items_without_all_fragments": len(candidates) - len(complete),
                             "errored_fragment_predictions": sum(frag[i].status == ERROR
                                                                 for frag in frags for i in complete),
                             "reason": None}
    if not table.fragment_conditions:
        entry["reason"] = "no fragment predictions"
    elif len(missing_k) == n:
        entry["reason"] = f"no fragment predictions for N={n}"
    elif missing_k:
        entry["reason"] = f"fragment k={missing_k} of N={n} has no prediction"
    elif not complete:
        entry["reason"] = f"no item has Full and all {n} fragments"
    else:
        entry["fragment_accuracy"] = tp.fragment_accuracy([[_is_correct(frag[i]) for frag in frags] for i in complete])
        entry["full_accuracy"] = tp.accuracy([_is_correct(full[i]) for i in complete])
        entry["R_N"] = tp.retention_rate([[_is_correct(frag[i]) for frag in frags] for i in complete],
                                         entry["full_accuracy"])
        if entry["R_N"] is None:
            entry["reason"] = "Full accuracy is 0 on these items"
    return entry


def _retention_section(tables: list[_ModelTable]) -> dict[str, Any]:
    ns = sorted({n for t in tables for n in t.fragment_ns})
    per_model = {t.name: {n: _retention_for(t, n) for n in ns} for t in tables}
    curve = []
    for n in ns:
        used = [m for m in per_model if per_model[m][n]["R_N"] is not None]
        curve.append({"N": n, **tp.stats([per_model[m][n]["R_N"] for m in used]), "models": used,
                      "excluded": {m: per_model[m][n]["reason"] for m in per_model if m not in used}})
    return {"per_model": per_model, "curve": curve, "unit": "fraction of Full accuracy"}


def _fragment_evidence(outcome: Outcome, errored_fragments: str) -> Optional[bool]:
    """A fragment outcome as ``categorize_item`` reads it: True, False or None (errored). Under
    "sufficient" only a run that errored (no prediction) is errored, as in the public analysis code; an
    output that could not be read or judged is a wrong answer there. Under "separate" both are errored."""
    if outcome.status != ERROR:
        return outcome.status == CORRECT
    if errored_fragments == "sufficient" and outcome.method != "no_prediction":
        return False
    return None


def _categorize(table: _ModelTable, item: Hashable, errored_fragments: str) -> tuple[str, Optional[str]]:
    """(label, why an XS label is unverified) of one item present in Full and None."""
    full, none = table.items(Condition("full"))[item], table.items(Condition("none"))[item]
    outcomes, missing = None, 0
    if table.fragment_conditions:
        outcomes = []
        for c in table.fragment_conditions:
            o = table.items(c).get(item)
            if o is None:
                missing += 1
            else:
                outcomes.append(_fragment_evidence(o, errored_fragments))
    return tp.categorize_item(_is_correct(full), _is_correct(none), outcomes,
                              missing_fragments=missing, errored_fragments=errored_fragments)


def _decomposition_section(tables: list[_ModelTable], errored_fragments: str,
                           zero_an_models: str) -> tuple[dict[str, Any], dict]:
    per_model, labels_by_model = {}, {}
    for table in tables:
        full, none = table.items(Condition("full")), table.items(Condition("none"))
        q = [i for i in full if i in none]
        labelled = {i: _categorize(table, i, errored_fragments) for i in q}
        labels_by_model[table.name] = labelled
        counts = tp.count_labels(label for label, _ in labelled.values())
        has_fragments = bool(table.fragment_conditions)
        # With fragments the five categories partition Q; without, TS / AN / AH / UN do.
        partition = tp.CATEGORIES if has_fragments else (tp.TS, tp.AN_UNSPLIT, tp.AH, tp.UN)
        assert sum(counts[c] for c in partition) == len(q), (table.name, counts, len(q))
        reasons = Counter(r for _, r in labelled.values() if r)
        unverified = reasons["errored"] + reasons["missing"]
        per_model[table.name] = {
            "n_items": len(q),
            "fragments_evaluated": has_fragments,
            "counts": counts,
            "shares": tp.shares(counts, len(q)),
            "AN_share": Fraction(counts["AN_total"], len(q)) if q else None,
            "XS_unverified": unverified,
            "unverified_reasons": {"errored": reasons["errored"], "missing": reasons["missing"]},
            "XS_over_AN": tp.global_dependency(counts[tp.FS], counts[tp.XS]) if has_fragments else None,
            "XS_over_AN_bounds": (tp.global_dependency_bounds(counts[tp.FS], counts[tp.XS], unverified)
                                  if has_fragments else None),
            "errored_full_or_none": sum(full[i].status == ERROR or none[i].status == ERROR for i in q),
            "missing_full": sum(i not in full for i in none),
            "missing_none": sum(i not in none for i in full),
        }
    # XS/AN across models (Table 4): the models with fragments and at least one item in Q. A model without
    # any item in Q has no decomposition and is left out, never averaged in as 0 (the public code's
    # decompose_model returns None for it); one with items but |AN| = 0 follows zero_an_models.
    excluded = {}
    for m, e in per_model.items():
        if not e["fragments_evaluated"]:
            excluded[m] = "no fragment predictions"
        elif not e["n_items"]:
            excluded[m] = "no item with both a Full and a None prediction"
    decomposed = [m for m in per_model if m not in excluded]
    xs_terms = {m: tp.xs_over_an_for_mean(per_model[m]["counts"][tp.FS], per_model[m]["counts"][tp.XS],
                                          zero_an_models) for m in decomposed}
    with_xs = [m for m in decomposed if xs_terms[m] is not None]
    zero_an = [m for m in decomposed if per_model[m]["XS_over_AN"] is None]
    excluded.update({m: "no audio-needed item (zero_an_models='exclude')" for m in zero_an if m not in with_xs})
    with_items = [m for m, e in per_model.items() if e["n_items"]]
    mean_shares = {c: tp.mean_or_none([per_model[m]["shares"][c] for m in with_items])
                   for c in tp.LABELS + ("AN_total",)}
    section = {
        "per_model": per_model,
        "XS_over_AN": {**tp.stats([xs_terms[m] for m in with_xs]), "models": with_xs,
                       "excluded": {m: excluded[m] for m in per_model if m in excluded},
                       "models_with_zero_AN": zero_an, "zero_an_models": zero_an_models},
        "AN_share": {**tp.stats([per_model[m]["AN_share"] for m in with_items]), "models": with_items},
        "mean_shares": mean_shares,
        "models_without_fragments": [m for m, e in per_model.items() if not e["fragments_evaluated"]],
        "errored_fragments": errored_fragments,
    }
    return section, labels_by_model


def _category_section(tables: list[_ModelTable], item_category: Mapping[Hashable, str],
                      universe: set) -> Optional[list[dict[str, Any]]]:
    if not item_category:
        return None
    groups: dict[str, set] = defaultdict(set)
    for item in universe:
        groups[item_category.get(item, "(uncategorized)")].add(item)
    rows = []
    for category, items in groups.items():
        per_model = {}
        for table in tables:
            f = {i: o for i, o in table.items(Condition("full")).items() if i in items}
            n = {i: o for i, o in table.items(Condition("none")).items() if i in items}
            if not f or not n:
                continue
            acc_full = tp.accuracy([_is_correct(o) for o in f.values()])
            acc_none = tp.accuracy([_is_correct(o) for o in n.values()])
            retention = _retention_for(table, TABLE5_N, items)  # R_N None (with a reason) without N=2
            per_model[table.name] = {"full": acc_full, "none": acc_none, "gap": acc_full - acc_none,
                                     "frag_accuracy": retention["fragment_accuracy"], "R_N": retention["R_N"]}
        with_r = [m for m, e in per_model.items() if e["R_N"] is not None]
        rows.append({
            "category": category,
            "n_items": len(items),
            "share": Fraction(len(items), len(universe)),
            "n_models": len(per_model),
            "full": tp.mean_or_none([e["full"] for e in per_model.values()]),
            "none": tp.mean_or_none([e["none"] for e in per_model.values()]),
            "gap": tp.mean_or_none([e["gap"] for e in per_model.values()]),
            f"frag{TABLE5_N}_accuracy": tp.mean_or_none([per_model[m]["frag_accuracy"] for m in with_r]),
            f"R_{TABLE5_N}": tp.mean_or_none([per_model[m]["R_N"] for m in with_r]),
            f"R_{TABLE5_N}_models": len(with_r),
            "per_model": per_model,
        })
    # Table 5's order: most audio-dependent (largest Full - None gap) first; categories no model covers last.
    rows.sort(key=lambda r: (r["gap"] is None, -(r["gap"] or 0.0), r["category"]))
    return rows


def score_text_prior(data: Any, *, errored_fragments: str = "separate", chance: Optional[float] = None,
                     zero_an_models: str = "as_zero", judge: Optional[Callable] = None,
                     return_items: bool = False) -> dict[str, Any]:
    """Every number of the paper's §2 for several models at once.

    ``data``: a list of records (dicts with model, item_id, condition, prediction and optionally
    reference, choices, category, question) or the nested form ``{model: {item: {condition: correct}}}``.
    ``errored_fragments``: "separate" (default: an errored fragment, whether its run errored or its
    output could not be read, is not correct, and the XS items left unverified by errored or missing
    fragments are counted as ``XS_unverified``) or "sufficient" (the public analysis code: a fragment whose
    run errored, i.e. prediction None, counts as correct, so the item is FS; an unreadable output is a wrong
    answer). ``chance``: the TB chance level; when given it is used for every model, whatever the choices
    (the paper's MMAU and MMAR "TB − chance" use 0.25); when None, the mean of 1 / (number of choices) over
    the TB items. ``zero_an_models``: how a model with fragments and items with both Full and None, but no
    audio-needed item among them, enters the XS/AN model mean: "as_zero" (default, the public analysis
    code) or "exclude"; a model with no item with both Full and None is left out in both modes and named
    in ``decomposition.XS_over_AN.excluded``. ``judge(text, question,
    choices) -> index``: passed to ``extract_hybrid`` for raw outputs its regexes cannot decide.
    """
    if errored_fragments not in tp.ERRORED_FRAGMENT_MODES:
        raise ValueError(f"errored_fragments must be one of {tp.ERRORED_FRAGMENT_MODES}, got {errored_fragments!r}")
    if chance is not None and (isinstance(chance, bool) or not isinstance(chance, (int, float)) or not 0 < chance <= 1):
        raise ValueError(f"chance must be a number in (0, 1], e.g. 0.25 for four choices; got {chance!r}")
    if zero_an_models not in tp.ZERO_AN_MODES:
        raise ValueError(f"zero_an_models must be one of {tp.ZERO_AN_MODES}, got {zero_an_models!r}")
    if judge is not None and not callable(judge):
        raise ValueError("judge must be a callable judge(text, question, choices) -> choice index or None")
    if isinstance(data, Mapping):
        data = records_from_nested(data)
    elif isinstance(data, (str, bytes)) or not isinstance(data, Iterable):
        raise ValueError("data must be a list of records or a {model: {item: {condition: correct}}} mapping")
    records = validate_records(data)

    by_model: dict[str, dict[Condition, dict[Hashable, Outcome]]] = {}
    for record in records:
        by_model.setdefault(record.model, {}).setdefault(record.condition, {})[record.item_id] = \
            score_prediction(record, judge)
    tables = [_ModelTable(name, conditions) for name, conditions in by_model.items()]
    universe = {r.item_id for r in records}
    item_category = {r.item_id: r.category for r in records if r.category is not None}
    n_choices = {r.item_id: len(r.choices) for r in records if r.choices is not None}

    decomposition, labels = _decomposition_section(tables, errored_fragments, zero_an_models)
    result: dict[str, Any] = {
        "models": [t.name for t in tables],
        "accuracy": _accuracy_section(tables, len(universe)),
        "text_prior": _text_prior_section(tables, n_choices, chance),
        "retention": _retention_section(tables),
        "decomposition": decomposition,
        "by_category": _category_section(tables, item_category, universe),
        "counts": {
            "rows": len(records),
            "models": len(tables),
            "items": len(universe),
            "errored_predictions": {t.name: {str(c): sum(o.status == ERROR for o in t.items(c).values())
                                             for c in sorted(t.by_condition, key=_condition_order)} for t in tables},
            "missing_predictions": {t.name: {str(c): len(universe) - len(t.items(c))
                                             for c in sorted(t.by_condition, key=_condition_order)} for t in tables},
            "absent_conditions": {t.name: [c for c in ("full", "none", "tb") if Condition(c) not in t.by_condition]
                                  + ([] if t.fragment_conditions else ["fragments"]) for t in tables},
        },
        "options": {"errored_fragments": errored_fragments, "chance": chance, "zero_an_models": zero_an_models,
                    "judge": judge is not None},
    }
    if return_items:
        result["items"] = _item_rows(tables, labels, item_category, universe)
    return floats(result)


def _item_rows(tables: list[_ModelTable], labels: Mapping[str, Mapping[Hashable, tuple]],
               item_category: Mapping[Hashable, str], universe: set) -> list[dict[str, Any]]:
    rows = []
    ordered = sorted(universe, key=lambda i: (type(i).__name__, str(i)))
    for table in tables:
        for item in ordered:
            present = {c: table.items(c)[item] for c in table.by_condition if item in table.items(c)}
            if not present:
                continue
            label, unverified = labels[table.name].get(item, (None, None))
            status = lambda kind: present[Condition(kind)].status if Condition(kind) in present else None  # noqa: E731
            rows.append({
                "model": table.name,
                "item_id": item,
                "category": item_category.get(item),
                "label": label,
                "unverified_reason": unverified,  # "errored" / "missing" for an unverified XS item
                "full": status("full"),
                "none": status("none"),
                "tb": status("tb"),
                "fragments": {str(c): present[c].status for c in table.fragment_conditions if c in present},
                "missing_fragments": [str(c) for c in table.fragment_conditions if c not in present],
            })
    return rows


def records_from_jsonl(text: str) -> list[dict[str, Any]]:
    """Records from JSON Lines text (one record object per line) or from one JSON list of records."""
    import json

    text = text.strip()
    if not text:
        raise ValueError("no records: give one JSON object per line")
    if text.startswith("["):
        try:
            records = json.loads(text)
        except json.JSONDecodeError as err:
            raise ValueError(f"records are not valid JSON: {err}") from None
        if not isinstance(records, list):
            raise ValueError("a JSON document of records must be a list of objects")
        return records
    return parse_json_lines(text)


def summary_tables(result: Mapping[str, Any]) -> dict[str, tuple[list[str], list[list[Any]]]]:
    """The result as display tables, name -> (headers, rows): values on the 0-1 scale, rounded to 4 decimals
    (``audioreason.base.scale.rounded``)."""
    text_prior = result["text_prior"]
    tp_rows = [[m, e["full"], e["none"], e["R_TP"], e["tb"], e["chance"], e["tb_minus_chance"], e["n_full"],
                e["n_none"], e["n_tb"]] for m, e in text_prior["per_model"].items()]
    tp_rows.append(["(models)", text_prior["full_mean"], text_prior["none_mean"], text_prior["R_TP"],
                    text_prior["tb_mean"], text_prior["chance_mean"], text_prior["tb_minus_chance_mean"], None, None,
                    None])
    retention_rows = [[p["N"], p["mean"], p["min"], p["max"], p["n"], ", ".join(p["models"]),
                       "; ".join(f"{m}: {why}" for m, why in p["excluded"].items())]
                      for p in result["retention"]["curve"]]
    decomposition = result["decomposition"]
    labels = tp.LABELS
    dec_rows = [[m, e["n_items"], *(e["counts"][c] for c in labels), e["XS_unverified"], e["XS_over_AN"],
                 e["AN_share"]] for m, e in decomposition["per_model"].items()]
    dec_rows.append(["(mean share)", None, *(decomposition["mean_shares"][c] for c in labels), None,
                     decomposition["XS_over_AN"]["mean"], decomposition["AN_share"]["mean"]])
    tables = {
        "text_prior": (["model", "Full", "None", "R_TP", "TB", "chance", "TB - chance", "n Full", "n None",
                        "n TB"], tp_rows),
        "retention": (["N", "R_N mean", "min", "max", "models", "used", "excluded"], retention_rows),
        "decomposition": (["model", "items", *labels, "XS unverified", "XS/AN", "AN share"], dec_rows),
    }
    if result.get("by_category"):
        tables["by_category"] = (
            ["category", "items", "share", "Full", "None", "Full - None", f"N={TABLE5_N} acc", f"R_{TABLE5_N}",
             "models"],
            [[r["category"], r["n_items"], r["share"], r["full"], r["none"], r["gap"],
              r[f"frag{TABLE5_N}_accuracy"], r[f"R_{TABLE5_N}"], r["n_models"]] for r in result["by_category"]])
    return {name: (headers, rounded(rows)) for name, (headers, rows) in tables.items()}


# ---------------------------------------------------------------------------------------------
# The demo: a small, deterministic multi-model table in which every category occurs
# ---------------------------------------------------------------------------------------------

class DemoRow(NamedTuple):
    name: str
    value: Optional[float]  # on the 0-1 scale, as every score here
    n: int
    note: str


def demo_records() -> list[dict[str, Any]]:
    """Three models on eight four-choice items (sound/music/speech), written out by hand.

    model-a: every condition, N = 2..5, two Full answers as raw outputs; reaches TS, FS, XS, AH, UN.
    model-b: fragment frag:5:4 never run; q4 has no correct fragment and one errored (XS, unverified,
    by default; FS under "sufficient"); item q8 has no None row.
    model-c: no fragment conditions (its audio-needed items stay unsplit).
    """
    items = {f"q{i}": cat for i, cat in enumerate(["sound", "sound", "music", "music", "speech", "speech",
                                                    "speech", "sound"], start=1)}
    choices = ["Dog barking", "Rain", "Piano", "A man speaking"]
    # item -> (full, none, tb, fragment rule), fragment rule: "all" correct, "none" correct, or (N, k) correct
    model_a = {"q1": (1, 1, 1, "all"), "q2": (1, 0, 0, (2, 1)), "q3": (1, 0, 0, "none"), "q4": (0, 1, 1, "none"),
               "q5": (0, 0, 0, "none"), "q6": (1, 0, 0, (5, 3)), "q7": (1, 1, 1, "all"), "q8": (1, 0, 1, (3, 0))}
    model_b = {"q1": (1, 1, 1, "all"), "q2": (1, 0, 0, "none"), "q3": (1, 0, 0, (2, 0)), "q4": (1, 0, 0, "error"),
               "q5": (0, 0, 0, "none"), "q6": (0, 1, 1, "none"), "q7": (1, 0, 1, (4, 2)), "q8": (1, None, 0, "all")}
    model_c = {"q1": (1, 1, 1, None), "q2": (1, 0, 0, None), "q3": (0, 0, 0, None), "q4": (1, 1, 1, None),
               "q5": (1, 0, 0, None), "q6": (0, 1, 1, None), "q7": (1, 0, 0, None), "q8": (0, 0, 0, None)}
    records: list[dict[str, Any]] = []

    def add(model: str, item: str, condition: str, prediction: Any) -> None:
        records.append({"model": model, "item_id": item, "condition": condition, "prediction": prediction,
                        "reference": choices[0], "choices": choices, "category": items[item]})

    for model, table in (("model-a", model_a), ("model-b", model_b), ("model-c", model_c)):
        for item, (full, none, tb, fragments) in table.items():
            if model == "model-a" and item in ("q1", "q5"):  # raw outputs, scored by the hybrid extractor
                add(model, item, "full", "[ANSWER] (A) Dog barking" if full else "The answer is B.")
            else:
                add(model, item, "full", bool(full))
            if none is not None:
                add(model, item, "none", bool(none))
            add(model, item, "tb", bool(tb))
            if fragments is None:
                continue
            for n in (2, 3, 4, 5):
                for k in range(n):
                    if model == "model-b" and (n, k) == (5, 4):
                        continue  # never run
                    if fragments == "error":
                        value = None if (n, k) == (2, 0) else False
                    else:
                        value = fragments == "all" or fragments == (n, k)
                    add(model, item, f"frag:{n}:{k}", value)
    return records


def demo_rows() -> list[DemoRow]:
    """Rows for the project demo table, from ``demo_records()``."""
    result = score_text_prior(demo_records())
    note = "synthetic correctness table (3 models x 8 items)"
    text_prior, decomposition = result["text_prior"], result["decomposition"]
    n_items = result["counts"]["items"]
    rows = [
        DemoRow("text prior: Full accuracy (model mean)", text_prior["full_mean"], n_items, note),
        DemoRow("text prior: None accuracy (model mean)", text_prior["none_mean"], n_items, note),
        DemoRow("text prior: R_TP = sum None / sum Full", text_prior["R_TP"], n_items, note),
        DemoRow("text prior: TB - chance (model mean)", text_prior["tb_minus_chance_mean"], n_items,
                f"{note}; chance from the choices"),
    ]
    for point in result["retention"]["curve"]:
        excluded = ", ".join(point["excluded"]) or "none"
        rows.append(DemoRow(f"retention: R_{point['N']}", point["mean"], n_items, f"{note}; mean of {point['n']} model{'s' * (point['n'] != 1)} (excluded: {excluded})"))
    for category in tp.CATEGORIES + ("AN_total",):
        rows.append(DemoRow(f"decomposition: {category} share (model mean)", decomposition["mean_shares"][category],
                            n_items, note))
    xs = decomposition["XS_over_AN"]
    spread = f"min {xs['min']:.2f}, max {xs['max']:.2f} over {xs['n']} models" if xs["n"] else "no model"
    spread += f" (excluded: {', '.join(xs['excluded']) or 'none'})"
    unverified = sum(e["XS_unverified"] for e in decomposition["per_model"].values())
    spread += f"; {unverified} XS item{'s' * (unverified != 1)} unverified (errored or missing fragments)"
    rows.append(DemoRow("decomposition: XS / AN (model mean)", xs["mean"], n_items, f"{note}; {spread}"))
    return rows
