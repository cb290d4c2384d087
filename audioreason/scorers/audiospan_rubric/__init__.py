"""the AudioSpan Rubric: ``formulas`` (the pure functions) and ``scorer`` (the class); the evaluate module is
``metrics/audiospan_rubric/``. The entry points are importable from here, each imported on first use (a report that
reads ``formulas`` alone never loads the scorer's backends)."""

from typing import TYPE_CHECKING

from audioreason.base.lazy import lazy_exports

if TYPE_CHECKING:  # what type checkers and the API page's reader see
    from .scorer import AudioSpanRubricScorer as AudioSpanRubricScorer

_NAMES = {"AudioSpanRubricScorer": ".scorer"}
__getattr__, __dir__ = lazy_exports(__name__, _NAMES)
__all__ = sorted(_NAMES)
