"""MMAR-Rubrics: ``formulas`` (the pure functions) and ``scorer`` (the class); the evaluate module is
``metrics/mmar_rubrics/``. The entry points are importable from here."""
from .scorer import MMARRubricsScorer

__all__ = ["MMARRubricsScorer"]
