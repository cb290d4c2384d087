"""ARIA (ARIA-Rubrics M1-M6): ``formulas`` (the pure functions) and ``scorer`` (the class); the evaluate module is
``metrics/aria/``. The entry points are importable from here."""
from .scorer import AriaConfig, AriaInputError, AriaScorer

__all__ = ["AriaConfig", "AriaInputError", "AriaScorer"]
