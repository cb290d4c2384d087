"""the AudioSpan anchor chain: ``formulas`` (the pure functions) and ``scorer`` (the class); the evaluate module is
``metrics/anchor_chain/``. The entry points are importable from here."""
from .scorer import score_anchor_chain, score_mcq_accuracy

__all__ = ["score_anchor_chain", "score_mcq_accuracy"]
