"""the text-prior decomposition: ``formulas`` (the pure functions) and ``scorer`` (the class); the evaluate module is
``metrics/text_prior_decomposition/``. The entry points are importable from here."""
from .scorer import score_text_prior

__all__ = ["score_text_prior"]
