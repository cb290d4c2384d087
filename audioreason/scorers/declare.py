"""The shape of a scorer's declaration: what the run scoring, the printed table, the report, the `evaluate`
shells and the bare-name registration need to know about one scorer, said once, in its own folder
(``scorers/<name>/declaration.py``) and listed once in ``scorers.registry``.

Only the shape lives here (plain data and the callables' places; it imports nothing of the package). The
declarations themselves build results sections and printed rows, so they sit in layer 9 (ARCHITECTURE.md):
a scorer's ``formulas.py`` and ``scorer.py`` (layer 6) never import them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional, Sequence

# The kinds of a per-item input column (apps.shells turns each into its datasets feature).
INPUT_KINDS = ("text", "texts", "bool", "int")


@dataclass(frozen=True)
class Results:
    """One section of results.json a scorer writes: its name there, its heading in the report, its printed
    rows (one results entry and the set's label -> ``evaluation.rows.Row`` list) and the report's tables and
    figures of it (the names of their renderers in ``report.tables`` and ``report.figures``; with no table
    named, the report shows the printed rows as its table, ``report.tables.rows_table``)."""

    name: str
    title: str
    rows: Callable[[Mapping[str, Any], Callable[[str], str]], list]
    tables: tuple[str, ...] = ()
    figures: tuple[str, ...] = ()


@dataclass(frozen=True)
class Judged:
    """How the run scoring gets a judged scorer its judge and runs it (``evaluation.score``)."""

    client: Callable[[str, Any], Any]  # (model, JudgeOptions) -> an OpenAI-compatible judge
    to_judge: Callable[[Any], int]  # (the run) -> items sent to the judge (progress)
    make_scorer: Callable[[Any, Any, str, Mapping[str, Any]], Any]  # (judge, ScoreOptions, cache, options)
    section: Callable[..., Any]  # (make_scorer, sets, items, uncertainty) -> Section
    headline: str  # the entry's headline, unavailable when every item failed
    prompt_sha256: Callable[[Any], str]  # (a scorer) -> the sha256 of the wording it sends
    default_model: Optional[str] = None  # the judge model when none is given
    no_model: str = ""  # without a default: why there is no judge
    protocol: Callable[[Any], dict] = field(default=lambda scorer: {})  # (a scorer) -> its own protocol fields


def _same(result: dict) -> dict:
    return result


@dataclass(frozen=True)
class Declaration:
    """One scorer. ``name``: its results section, its evaluate module (``metrics/<name>/``) and its bare name;
    ``folder``: ``scorers/<folder>/``. ``inputs`` (column -> one of ``INPUT_KINDS``) and ``options``: the
    evaluate module's per-item columns and compute() options (``more_options()`` adds names known only at
    run time, as AriaConfig's fields). ``fit(benchmark, items, sets)``: why it does not fit a run (None when
    it does). ``score(scoring)``: the uniform entry point of the run scoring: the sections it writes for the
    run, {} when none is asked (``scoring`` is ``evaluation.score.Scoring``). ``results``: what it writes,
    its own section first. ``detect(result)``: a bare result (a compute() output) is this scorer's, and
    ``bare(result)`` makes it a results.json entry. ``per_template``: one entry per template over every
    condition (its items.jsonl rows belong to the entry by template). ``judged``: its judge, for a judged
    scorer. ``protocol``: the scoring options its numbers depend on, recorded in the scoring protocol when it
    ran (``evaluation.protocol``): "extraction" (the rules), "backbones" (ARIA's)."""

    name: str
    folder: str
    inputs: Mapping[str, str]
    options: tuple[str, ...]
    fit: Callable[[str, Sequence[Mapping[str, Any]], Sequence[Any]], Optional[str]]
    score: Callable[[Any], dict]
    results: tuple[Results, ...]
    detect: Callable[[Mapping[str, Any]], bool]
    bare: Callable[[dict], dict] = _same
    per_template: bool = False
    judged: Optional[Judged] = None
    protocol: tuple[str, ...] = ()
    more_options: Callable[[], tuple[str, ...]] = field(default=lambda: ())

    def __post_init__(self) -> None:
        if self.results[0].name != self.name:
            raise ValueError(f"{self.name}: its own results section comes first")
        wrong = {k: v for k, v in self.inputs.items() if v not in INPUT_KINDS}
        if wrong:
            raise ValueError(f"{self.name}: input kinds {wrong} are not among {INPUT_KINDS}")

    @property
    def sections(self) -> tuple[str, ...]:
        """The results sections it writes, its own first."""
        return tuple(r.name for r in self.results)


__all__ = ["INPUT_KINDS", "Declaration", "Judged", "Results"]
