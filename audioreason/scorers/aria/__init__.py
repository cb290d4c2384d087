"""ARIA (ARIA-Rubrics M1-M6): ``formulas`` (the pure functions) and ``scorer`` (the class); the evaluate module is
``metrics/aria/``. The entry points are importable from here, each imported on first use (a report that
reads ``formulas`` alone never loads the scorer's backends)."""

from typing import TYPE_CHECKING

from audioreason.base.lazy import lazy_exports

if TYPE_CHECKING:  # what type checkers and the API page's reader see
    from .scorer import AriaConfig as AriaConfig
    from .scorer import AriaInputError as AriaInputError
    from .scorer import AriaScorer as AriaScorer

_NAMES = {"AriaConfig": ".scorer", "AriaInputError": ".scorer", "AriaScorer": ".scorer"}
__getattr__, __dir__ = lazy_exports(__name__, _NAMES)
__all__ = sorted(_NAMES)
