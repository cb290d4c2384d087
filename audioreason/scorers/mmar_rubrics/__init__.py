"""MMAR-Rubrics: ``formulas`` (the pure functions), ``scorer`` (the class) and ``generation`` (rubrics written by a
judge from the gold CoT); the evaluate module is ``metrics/mmar_rubrics/``. The entry points are importable from
here."""
from .scorer import MMARRubricsScorer

__all__ = ["MMARRubricsScorer"]
