"""Argument handling shared by the thin `evaluate` shells (one place, not five).

Inputs (``INPUTS``): every per-item input a scorer reads is a declared feature (a column), so ``add``/``add_batch``
stream all of it and ``compute()`` with no arguments scores what was added; a column left out is a column of
None (the scorer treats it as absent). Everything else is an option of ``compute`` (``OPTIONS``); an option given
to ``add_batch`` is refused, naming ``compute``.

``evaluate.combine`` passes every keyword of ``compute`` to every module. The pairs that share one run
(``COMBINATIONS``) take each other's keywords: a module ignores its partner's inputs and lists them in its
result under ``ignored_inputs``; with ``rows="applicable"`` each scores the rows it applies to and counts the
rest in ``rows_left_out``. Any other pair fails at once with a message naming it. ``add``/``add_batch`` of a
combination hand each module exactly its declared columns: give every column of both (None for one you lack).
"""

from __future__ import annotations

import json
import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Callable, Iterable, MutableMapping, Optional, Sequence, Union

import datasets
import evaluate

from audioreason.base.hf_internals import AcceptsLeadingNone
from audioreason.base.jsonl import read_json_lines
from audioreason.scorers.registry import BY_NAME, DECLARATIONS

# Client options a metric's compute() forwards to OpenAICompatibleJudge.
JUDGE_OPTIONS = (
    "base_url",
    "api_key_env",
    "concurrency",
    "timeout_s",
    "max_attempts",
    "server_error_attempts",
    "structured_outputs",
)


def load_items(items: Union[str, Iterable[dict]]) -> list[dict]:
    """Items given as a list of dicts or as the path of a JSON Lines file."""
    return read_json_lines(items) if isinstance(items, str) else list(items)


def items_for_references(items: Union[str, Iterable[dict]], references: Sequence[Any]) -> list[dict]:
    """The item each reference names by id, in reference order; an error lists ids that are not there."""
    by_id: dict[str, dict] = {}
    for n, it in enumerate(load_items(items)):
        if not isinstance(it, dict) or "id" not in it:
            raise ValueError(f"items[{n}] has no 'id'")
        if str(it["id"]) in by_id:
            raise ValueError(f"items[{n}]: the id {it['id']!r} appears twice in items; ids must be distinct")
        by_id[str(it["id"])] = it
    missing = [r for r in references if str(r) not in by_id]
    if missing:
        raise ValueError(f"{len(missing)} references are not item ids in items, e.g. {missing[:3]}")
    return [by_id[str(r)] for r in references]


def judge_from_options(
    judge: Any,
    model: Optional[str],
    options: MutableMapping[str, Any],
    make_judge: Optional[Callable[..., Any]] = None,
    missing: str = "a judge model is needed: pass judge=..., ensemble=... or a model name",
) -> Any:
    """The judge passed in, else (when no ensemble is given) ``make_judge(model, **client options)``
    (default: an OpenAICompatibleJudge); the client options are taken out of ``options``. None when an
    ensemble replaces the judge; a ValueError saying ``missing`` when there is neither, nor a model."""
    client_options = {k: options.pop(k) for k in JUDGE_OPTIONS if k in options}
    if judge is not None or options.get("ensemble") is not None:
        return judge
    if not model:
        raise ValueError(missing)
    if make_judge is None:
        from audioreason.judges import OpenAICompatibleJudge as make_judge
    return make_judge(model, **client_options)


_TEXT = datasets.Value("string")
_BOOL = datasets.Value("bool")
_INT = datasets.Value("int64")
_TEXTS = datasets.Sequence(datasets.Value("string"))
_KINDS = {"text": _TEXT, "texts": _TEXTS, "bool": _BOOL, "int": _INT}  # scorers.declare.INPUT_KINDS

# Per-item inputs (besides predictions and references) of each scorer: its declared features.
INPUTS: dict[str, dict[str, Any]] = {
    d.name: {column: _KINDS[kind] for column, kind in d.inputs.items()} for d in DECLARATIONS
}
_JUDGED = ("judge", "ensemble", "raters", "cache", "max_reasks", "sampling", "retry_invalid_cached") + JUDGE_OPTIONS
# Options of compute (aria's also take every AriaConfig field, see options()); a judged scorer's, its judge's too.
OPTIONS: dict[str, tuple[str, ...]] = {
    d.name: d.options + (_JUDGED if d.judged is not None else ()) for d in DECLARATIONS
}

# The pairs that score one run together, and why.
COMBINATIONS = {
    frozenset(
        {"anchor_chain", "audiospan_rubric"}
    ): "one AudioSpan run: anchor_chain scores its multiple-choice rows (with choices), audiospan_rubric its "
    "open-ended rows (without), by rows='applicable'",
    frozenset(
        {"aria", "text_prior_decomposition"}
    ): "one MMAR run of one model: the same outputs, gold answers and choices; text_prior_decomposition reads every "
    "condition, aria the full condition (rows='applicable')",
}
ROWS = ("all", "applicable")
# rows="applicable": the rows a module of a combination scores (those whose value in the column passes the test;
# every row when the column is not given) and why it leaves the others out.
APPLICABLE: dict[str, tuple[str, Callable[[Any], bool], str]] = {
    "aria": ("condition", lambda condition: condition in (None, "full"), "a condition other than full"),
    "audiospan_rubric": ("choices", lambda choices: choices is None, "choices: a multiple-choice row"),
    "anchor_chain": ("choices", lambda choices: choices is not None, "no choices: not a multiple-choice row"),
}
JSON_COLUMNS = ("verdicts",)  # text columns whose lists and dicts are stored as their JSON text


def options(name: str) -> tuple[str, ...]:
    """The compute options of scorer ``name``."""
    return OPTIONS[name] + BY_NAME[name].more_options()


def features(name: str, predictions: Any = _TEXT) -> datasets.Features:
    """The declared features of scorer ``name``: predictions, references (gold texts or ids) and its inputs."""
    return datasets.Features({"predictions": predictions, "references": _TEXT, **INPUTS[name]})


def _fits(feature: Any, value: Any) -> bool:
    """Whether a per-item value is one the declared bool or int64 column holds as it is (NaN is neither)."""
    from audioreason.text.answers import as_correctness

    if feature == _BOOL:
        return as_correctness(value) is not None
    if isinstance(value, bool):
        return False
    if isinstance(value, numbers.Integral):
        return True
    return isinstance(value, numbers.Real) and math.isfinite(value) and float(value).is_integer()


def present(column: Optional[Sequence[Any]]) -> Optional[list]:
    """A column as a list, or None when it was not given (absent, or every value None)."""
    if column is None:
        return None
    column = list(column)
    return None if all(v is None for v in column) else column


def check_rows(rows: str) -> str:
    if rows not in ROWS:
        raise ValueError(f"rows must be one of {ROWS}, got {rows!r}")
    return rows


@dataclass(frozen=True)
class Rows:
    """The rows a module scores (``select_rows``): their positions ``keep`` among ``total``; ``why`` the others
    are left out, with rows="applicable" (None with rows="all")."""

    keep: list[int]
    total: int
    why: Optional[str] = None

    @property
    def every_row(self) -> bool:
        """Whether every row is scored (rows="all")."""
        return self.why is None

    def pick(self, column: Optional[Sequence[Any]]) -> Optional[list]:
        """The kept rows of a column (None stays None)."""
        return None if column is None else [column[i] for i in self.keep]

    def noted(self, result: dict) -> dict:
        """``result`` with, under rows="applicable", how many rows were left out and why (``rows_left_out``)."""
        if self.why is not None:
            result["rows_left_out"] = {"n": self.total - len(self.keep), "why": self.why}
        return result


def select_rows(scorer: str, rows: str, total: int, **columns: Optional[Sequence[Any]]) -> Rows:
    """The rows scorer ``scorer`` scores of ``total``: every row with rows="all", with rows="applicable" those
    it applies to (``APPLICABLE``), read from the column named there, given as a keyword."""
    everything = list(range(total))
    if check_rows(rows) == "all":
        return Rows(everything, total)
    name, applies, why = APPLICABLE[scorer]
    column = columns[name]
    return Rows(everything if column is None else [i for i in everything if applies(column[i])], total, why)


def _owners(keyword: str, exclude: str) -> list[str]:
    return [name for name in INPUTS if name != exclude and (keyword in INPUTS[name] or keyword in options(name))]


class ShellMetric(AcceptsLeadingNone, evaluate.Metric):
    """``evaluate.Metric`` for the shells: the argument handling in this module's docstring, and one fix:
    a None (a missing model output) passes evaluate's type check in a column's first row too, as it does
    anywhere else, and reaches ``_compute``, where the scorers count it (``base.hf_internals``)."""

    SCORER = ""  # the scorer's name in INPUTS

    def _split(self, kwargs: Mapping[str, Any]) -> tuple[dict, dict, dict]:
        """(columns, options, ignored) of the keywords; a keyword of no partner is a clear error."""
        own_columns, own_options = INPUTS[self.SCORER], options(self.SCORER)
        columns, opts, ignored, foreign = {}, {}, {}, {}
        for key, value in kwargs.items():
            if key in own_columns and not (isinstance(value, Mapping) and key in own_options):
                columns[key] = value
            elif key in own_options:
                opts[key] = value
            else:
                owners = _owners(key, self.SCORER)
                partners = [o for o in owners if frozenset({o, self.SCORER}) in COMBINATIONS]
                if partners:
                    ignored[key] = (
                        f"an input of {partners[0]}, which {self.SCORER} does not read (combined: "
                        f"{COMBINATIONS[frozenset({partners[0], self.SCORER})]})"
                    )
                else:
                    foreign[key] = owners
        if foreign:
            self._refuse(foreign)
        return columns, opts, ignored

    def _refuse(self, foreign: Mapping[str, list[str]]) -> None:
        owners = sorted({o for names in foreign.values() for o in names})
        keys = ", ".join(sorted(foreign))
        pairs = "; ".join(" + ".join(sorted(p)) for p in COMBINATIONS)
        if owners:
            raise ValueError(
                f"{self.SCORER} got {keys}, input(s) of {', '.join(owners)}: {self.SCORER} does not "
                f"combine with {', '.join(owners)} (pairs that score one run together: {pairs})"
            )
        raise ValueError(
            f"{self.SCORER} takes no argument {keys}: its per-item inputs are predictions, references, "
            f"{', '.join(INPUTS[self.SCORER])}; its options {', '.join(options(self.SCORER))}"
        )

    def _columns(self, columns: Mapping[str, Any], n: int) -> dict[str, list]:
        """Every declared column, None-filled where not given; integer ids read as text."""
        out = {}
        for name, feature in INPUTS[self.SCORER].items():
            values = columns.get(name)
            values = [None] * n if values is None else list(values)
            if len(values) != n:
                raise ValueError(f"'{name}' has {len(values)} values but there are {n} rows")
            if feature == _TEXT:
                for i, v in enumerate(values):
                    if isinstance(v, int) and not isinstance(v, bool):
                        values[i] = str(v)
                    elif name in JSON_COLUMNS and isinstance(v, (list, dict)):
                        values[i] = json.dumps(v)
                    elif v is not None and not isinstance(v, str):
                        raise ValueError(f"{name}[{i}] must be a string (or an integer id), got {v!r}")
            elif feature in (_BOOL, _INT):  # checked here: the Arrow cast reads NaN as True, or fails unnamed
                for i, v in enumerate(values):
                    if v is not None and not _fits(feature, v):
                        kind = "true, false (or 1, 0)" if feature == _BOOL else "an integer"
                        raise ValueError(f"{name}[{i}] (row {i}) must be {kind} or null, got {v!r}")
            out[name] = values
        return out

    def compute(self, *, predictions=None, references=None, **kwargs):
        """Score what was added and the rows given here (every declared column streams; see Args below)."""
        columns, opts, ignored = self._split(kwargs)
        if predictions is not None or references is not None or any(v is not None for v in columns.values()):
            n = len(next(c for c in (predictions, references, *columns.values()) if c is not None))
            columns = self._columns(columns, n)
        result = super().compute(predictions=predictions, references=references, **columns, **opts)
        if ignored and isinstance(result, dict):
            result["ignored_inputs"] = ignored
        return result

    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """Add rows: predictions, references and any per-item input (a column left out is None)."""
        columns, opts, _ = self._split(kwargs)
        if opts:
            raise ValueError(
                f"{', '.join(sorted(opts))}: option(s) of compute(), not per-item inputs; give them to "
                f"{self.SCORER}.compute()"
            )
        n = len(next((c for c in (predictions, references, *columns.values()) if c is not None), []))
        return super().add_batch(predictions=predictions, references=references, **self._columns(columns, n))

    def add(self, *, prediction=None, reference=None, **kwargs):
        """Add one row: its prediction, reference and per-item inputs."""
        columns, opts, _ = self._split(kwargs)
        if opts:
            raise ValueError(
                f"{', '.join(sorted(opts))}: option(s) of compute(), not per-item inputs; give them to "
                f"{self.SCORER}.compute()"
            )
        row = {k: v[0] for k, v in self._columns({k: [v] for k, v in columns.items()}, 1).items()}
        return super().add(prediction=prediction, reference=reference, **row)
