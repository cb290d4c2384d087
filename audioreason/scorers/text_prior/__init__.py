"""the text-prior decomposition: ``formulas`` (the pure functions), ``scorer`` (``score_text_prior``), ``records`` (each
record checked and scored), ``inputs`` (the other input shapes), ``sections`` (the result's sections), ``tables``
(display tables), ``examples`` (the demo table); the evaluate module is ``metrics/text_prior_decomposition/``. The
entry points are importable from here."""

from typing import TYPE_CHECKING

from audioreason.base.lazy import lazy_exports

if TYPE_CHECKING:  # what type checkers and the API page's reader see
    from .scorer import score_text_prior as score_text_prior

_NAMES = {"score_text_prior": ".scorer"}
__getattr__, __dir__ = lazy_exports(__name__, _NAMES)
__all__ = sorted(_NAMES)
