"""Reading results for the report and the explorer.

``load_results(paths)`` takes, in any mix:

- ``results.json`` written by ``audioreason score`` (its ``items.jsonl`` beside it is read too), or the run
  folder that holds them;
- any scorer's own output saved as JSON: a metric's ``compute(...)`` result (with ``items`` when it was asked
  for with ``return_items=True``), a list of such results, or ``{"model", "benchmark", "result"}`` wrappers
  (the input of ``audioreason.analysis.validity_report``). A bare result is named after its file.

Each scorer result becomes one ``Entry`` (a scorer's numbers for one model under one condition and template,
with its per-item rows); a scorer that did not run is kept in ``not_run`` with its reason, so the report can
say why a figure is missing.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, Optional, Sequence, Union

from audioreason.base.jsonl import read_json_lines
from audioreason.scorers.registry import ACCURACY, DECLARATIONS, SECTIONS, owner

from .scale import stated_scale

RESULTS_FILE, ITEMS_FILE = "results.json", "items.jsonl"  # the names `audioreason score` writes
SCORERS = SECTIONS  # the report's order: accuracy, then each scorer's sections (scorers.registry)


class ResultsError(ValueError):
    """A results file that cannot be read; the message names the file and what is wrong."""


@contextmanager
def reading(where: Any) -> Iterator[None]:
    """Errors raised while reading or showing ``where`` (a file or run folder) as one ResultsError line that
    names it: a file nested past the JSON parser's depth, or a field of the wrong type (a list where an object
    belongs) that surfaces as AttributeError, TypeError or KeyError somewhere below."""
    try:
        yield
    except ResultsError:
        raise
    except RecursionError:
        raise ResultsError(f"{where}: nested too deeply to read (JSON deeper than the parser's limit)") from None
    except (AttributeError, TypeError, KeyError, IndexError, ValueError) as err:
        message = str(err) if str(where) in str(err) else f"{where}: malformed ({type(err).__name__}: {err})"
        raise ResultsError(message.splitlines()[0] if message else str(where)) from None


# Each benchmark's own accuracy rule, which the explorer's leaderboard and the report's comparison lead with:
# (the accuracy scorer's rule entry, None for any of them; the field of it; the name shown). MMAR and MMAU: their
# official scorer (the string match of their evaluation scripts on the whole reply, which `audioreason score`
# puts in every rule's entry); AudioSpan: App. C.1, the reply is exactly one option letter.
OFFICIAL = (None, "official_scorer_accuracy", "official MMAR/MMAU scorer")
BENCHMARK_ACCURACY = {
    "mmar": OFFICIAL,
    "mmau": OFFICIAL,
    "mmau_test_mini": OFFICIAL,
    "audiospan": ("exact_letter", "accuracy", "exact_letter, AudioSpan App. C.1"),
}


def benchmark_key(name: Optional[str]) -> str:
    """A benchmark's name as ``BENCHMARK_ACCURACY`` spells it ("MMAU-test-mini" -> "mmau_test_mini")."""
    return str(name or "").strip().lower().replace("-", "_")


@dataclass
class Entry:
    """One scorer's result for one (model, condition, template) set, with its per-item rows."""

    scorer: str
    result: dict[str, Any]
    model: str
    benchmark: Optional[str] = None
    condition: Optional[str] = None
    template: Optional[str] = None
    source: str = ""
    items: list[dict[str, Any]] = field(default_factory=list)
    options: dict[str, Any] = field(default_factory=dict)  # the scoring options of the run (judge, backbones)

    @property
    def label(self) -> str:
        """The model, benchmark, condition and template that are known: "m on mmar [full/aria_cot]"."""
        setting = "/".join(x for x in (self.condition, self.template) if x)
        name = f"{self.model} on {self.benchmark}" if self.benchmark else self.model
        return f"{name} [{setting}]" if setting else name


@dataclass
class Results:
    entries: list[Entry] = field(default_factory=list)
    not_run: list[dict[str, str]] = field(default_factory=list)  # {source, scorer, status, reason}
    runs: list[dict[str, Any]] = field(default_factory=list)  # what produced each results.json
    sources: list[str] = field(default_factory=list)

    def of(self, scorer: str) -> list[Entry]:
        return [e for e in self.entries if e.scorer == scorer]

    def scorers(self) -> list[str]:
        return [s for s in SCORERS if self.of(s)]


def detect_scorer(result: Mapping[str, Any]) -> Optional[str]:
    """Which scorer wrote a bare result, from the keys only that scorer writes (each declaration's
    ``detect``); then a section written beside a scorer's (the perturbation checks) by its own key, then
    accuracy; None: not a scorer result."""
    for declaration in DECLARATIONS:
        if declaration.detect(result):
            return declaration.name
    for section in SECTIONS:
        if section != ACCURACY and owner(section).name != section and section in result:
            return section
    if ACCURACY in result:
        return ACCURACY
    return None


def read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as err:
        raise ResultsError(f"{path}: cannot be read ({err})") from None
    except json.JSONDecodeError as err:
        raise ResultsError(f"{path}: not JSON ({err.msg} at line {err.lineno} column {err.colno})") from None
    except RecursionError:
        raise ResultsError(f"{path}: nested too deeply to read (JSON deeper than the parser's limit)") from None


def read_json_records(path: Path) -> list[dict[str, Any]]:
    """The objects of a run's JSON Lines file; anything else is one ResultsError naming the file (and record)."""
    with reading(path):
        try:
            rows = read_json_lines(path)
        except OSError as err:
            raise ResultsError(f"{path}: {err}") from None
    for n, row in enumerate(rows, start=1):
        if not isinstance(row, dict):
            raise ResultsError(f"{path}: record {n} is a {type(row).__name__}, not an object")
    return rows


def _score_output(path: Path, data: Mapping[str, Any], out: Results) -> None:
    """A results.json of `audioreason score`, with the items.jsonl beside it."""
    run = data.get("run") or {}
    options = data.get("options") or {}
    file_scale = data.get("scale")  # a scale stated for the whole file holds for every result without its own
    if file_scale is not None:
        stated_scale(file_scale, str(path))
    rows = []
    items_file = path.with_name(ITEMS_FILE)
    if items_file.is_file():
        rows = read_json_records(items_file)
    out.runs.append(
        {
            "source": str(path),
            **{
                k: run.get(k) for k in ("model", "adapter", "description", "benchmark", "status", "counts", "lmms_eval")
            },
            "scored": (data.get("scored") or {}).get("finished"),
            "options": options,
            "items_file": str(items_file) if rows else None,
            "audio_reliance": data.get("audio_reliance"),
        }
    )
    for scorer, section in (data.get("scorers") or {}).items():
        if not isinstance(section, Mapping):
            raise ResultsError(f"{path}: scorers.{scorer} is {type(section).__name__}, not an object")
        if section.get("status") != "ok":
            out.not_run.append(
                {
                    "source": str(path),
                    "scorer": scorer,
                    "status": str(section.get("status")),
                    "reason": str(section.get("reason") or ""),
                }
            )
            continue
        for n, result in enumerate(section.get("results") or []):
            if not isinstance(result, Mapping):
                raise ResultsError(f"{path}: scorers.{scorer}.results[{n}] is not an object")
            result = dict(result) if file_scale is None else {"scale": file_scale, **result}
            entry = Entry(
                scorer,
                dict(result),
                str(result.get("model") or run.get("model") or path.parent.name),
                run.get("benchmark"),
                result.get("condition"),
                result.get("template"),
                str(path),
                options=dict(options),
            )
            entry.items = [row for row in rows if _row_of(row, entry)]
            out.entries.append(entry)


def _row_of(row: Mapping[str, Any], entry: Entry) -> bool:
    """Whether an items.jsonl row belongs to ``entry`` (its set, and a value of its scorer)."""
    if entry.scorer not in row or row.get("model") != entry.model:
        return False
    declaration = owner(entry.scorer)
    if declaration is not None and declaration.per_template:  # one result over every condition of a template
        return row.get("template") == entry.template
    return row.get("condition") == entry.condition and row.get("template") == entry.template


def _bare_results(path: Path, data: Any, out: Results) -> None:
    """A scorer's own output, a list of them, or {model, benchmark, result} wrappers."""
    listed = data if isinstance(data, list) else [data]
    for n, element in enumerate(listed):
        where = f"{path}" + (f"[{n}]" if isinstance(data, list) else "")
        if not isinstance(element, Mapping):
            raise ResultsError(f"{where}: expected a scorer's result (a JSON object), got {type(element).__name__}")
        result = element.get("result", element)
        if not isinstance(result, Mapping):
            raise ResultsError(f"{where}: 'result' is {type(result).__name__}, not a scorer's result")
        scorer = element.get("scorer") or detect_scorer(result)
        if scorer not in SCORERS:
            raise ResultsError(
                f"{where}: not a scorer's result (none of the keys a scorer writes: rubrics, rubric "
                f"and semantic, chain, text_prior, M1-M6, accuracy); give results.json of "
                f"`audioreason score` or a metric's compute() output"
            )
        result = dict(result)
        items = result.pop("items", None) or []
        declaration = owner(scorer)
        if declaration is not None and declaration.name == scorer:
            result = declaration.bare(result)  # a compute() output as results.json's entry holds it
        model = element.get("model") or result.get("model") or path.stem
        out.entries.append(
            Entry(
                scorer,
                result,
                str(model),
                element.get("benchmark"),
                element.get("condition"),
                element.get("template"),
                where,
                [dict(i) for i in items if isinstance(i, Mapping)],
            )
        )


def load_results(paths: Union[str, Path, Sequence[Union[str, Path]]]) -> Results:
    """Every result in ``paths`` (files or run folders), in the order given."""
    paths = [paths] if isinstance(paths, (str, Path)) else list(paths)
    if not paths:
        raise ResultsError("no results given")
    out = Results()
    for given in paths:
        path = Path(given).expanduser()
        if path.is_dir():
            if not (path / RESULTS_FILE).is_file():
                hint = (
                    " (it holds a run: score it first with `audioreason score`)"
                    if (path / "run.json").is_file()
                    else ""
                )
                raise ResultsError(f"{path}: no {RESULTS_FILE} in this folder{hint}")
            path = path / RESULTS_FILE
        if not path.is_file():
            raise ResultsError(f"{path}: no such file")
        data = read_json(path)
        with reading(path):
            if isinstance(data, Mapping) and isinstance(data.get("scorers"), Mapping):
                _score_output(path, data, out)
            else:
                _bare_results(path, data, out)
        out.sources.append(str(path))
    return out


def unique(values: Iterable[Any]) -> list[Any]:
    """Values in first-seen order, repeats and Nones dropped."""
    return [v for v in dict.fromkeys(values) if v is not None]


__all__ = [
    "Entry",
    "ITEMS_FILE",
    "RESULTS_FILE",
    "Results",
    "ResultsError",
    "SCORERS",
    "detect_scorer",
    "load_results",
    "read_json",
    "reading",
    "unique",
]
