"""the AudioSpan Rubric: ``formulas`` (the pure functions) and ``scorer`` (the class); the evaluate module is
``metrics/audiospan_rubric/``. The entry points are importable from here."""
from .scorer import AudioSpanRubricScorer

__all__ = ["AudioSpanRubricScorer"]
