"""MMAR-Rubrics: ``formulas`` (the pure functions), ``scorer`` (the class) and ``generation`` (rubrics written by a
judge from the gold CoT); the evaluate module is ``metrics/mmar_rubrics/``. The entry points are importable from
here."""

from typing import TYPE_CHECKING

from audioreason.base.lazy import lazy_exports

if TYPE_CHECKING:  # what type checkers and the API page's reader see
    from .scorer import MMARRubricsScorer as MMARRubricsScorer

_NAMES = {"MMARRubricsScorer": ".scorer"}
__getattr__, __dir__ = lazy_exports(__name__, _NAMES)
__all__ = sorted(_NAMES)
