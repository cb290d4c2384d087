"""The one list of scorers. Everything that names the scorers reads it: the run scoring (``evaluation.score``:
which run, in what order, which are judged), the printed table (``evaluation.table``), the report
(``report.load``, its tables, figures and headings), the evaluate shells' columns and options
(``apps.shells``), the shipped modules and their bare names (``apps.shipped``) and `audioreason score
--scorers` (``cli.score_args``).

A new scorer: its folder ``scorers/<name>/`` (``formulas.py``, ``scorer.py``, ``declaration.py`` with its
``DECLARATION``, ``scorers.declare``) and its line below. Layer 9 (ARCHITECTURE.md), as the declarations.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

from audioreason.evaluation.sections import accuracy_fit
from audioreason.scorers.anchor_chain.declaration import DECLARATION as ANCHOR_CHAIN
from audioreason.scorers.aria.declaration import DECLARATION as ARIA
from audioreason.scorers.audiospan_rubric.declaration import DECLARATION as AUDIOSPAN_RUBRIC
from audioreason.scorers.declare import Declaration
from audioreason.scorers.mmar_rubrics.declaration import DECLARATION as MMAR_RUBRICS
from audioreason.scorers.text_prior.declaration import DECLARATION as TEXT_PRIOR

# The registration list, in results order.
DECLARATIONS: tuple[Declaration, ...] = (ARIA, MMAR_RUBRICS, AUDIOSPAN_RUBRIC, ANCHOR_CHAIN, TEXT_PRIOR)

ACCURACY = "accuracy"  # the run scoring's own section (evaluation.sections): answer extraction, no scorer folder
BY_NAME: dict[str, Declaration] = {d.name: d for d in DECLARATIONS}
NAMES = tuple(BY_NAME)  # the scorers' names: their evaluate modules (metrics/<name>/) and bare names
SCORERS = (ACCURACY, *NAMES)  # what `audioreason score --scorers` takes
JUDGED = tuple(d.name for d in DECLARATIONS if d.judged is not None)
# Every section a results.json may hold, each scorer's own before those it writes beside it (perturbations).
SECTIONS = (ACCURACY, *(s for d in DECLARATIONS for s in d.sections))


def declaration(name: str) -> Declaration:
    """The declaration of scorer ``name``; ValueError names the choices."""
    try:
        return BY_NAME[name]
    except KeyError:
        raise ValueError(f"unknown scorer {name!r}: choose from {', '.join(SCORERS)}") from None


def owner(section: str) -> Optional[Declaration]:
    """The declaration that writes results section ``section`` (None: accuracy, or no scorer's)."""
    return next((d for d in DECLARATIONS if section in d.sections), None)


def fit_reason(scorer: str, benchmark: str, items: Sequence[Mapping[str, Any]], sets: Sequence[Any]) -> Optional[str]:
    """Why ``scorer`` does not fit this run (None when it does)."""
    if scorer == ACCURACY:
        return accuracy_fit(benchmark, items, sets)
    return declaration(scorer).fit(benchmark, items, sets)


__all__ = [
    "ACCURACY",
    "BY_NAME",
    "DECLARATIONS",
    "JUDGED",
    "NAMES",
    "SCORERS",
    "SECTIONS",
    "declaration",
    "fit_reason",
    "owner",
]
