"""the AudioSpan anchor chain: ``formulas`` (the pure functions) and ``scorer`` (the class); the evaluate module is
``metrics/anchor_chain/``."""
