"""the AudioSpan anchor chain: ``formulas`` (the pure functions) and ``scorer`` (the class); the evaluate module is
``metrics/anchor_chain/``. The entry points are importable from here, each imported on first use (a report that
reads ``formulas`` alone never loads the scorer's backends)."""

from typing import TYPE_CHECKING

from audioreason.base.lazy import lazy_exports

if TYPE_CHECKING:  # what type checkers and the API page's reader see
    from .scorer import score_anchor_chain as score_anchor_chain
    from .scorer import score_mcq_accuracy as score_mcq_accuracy

_NAMES = {"score_anchor_chain": ".scorer", "score_mcq_accuracy": ".scorer"}
__getattr__, __dir__ = lazy_exports(__name__, _NAMES)
__all__ = sorted(_NAMES)
