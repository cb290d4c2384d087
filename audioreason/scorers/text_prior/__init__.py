"""the text-prior decomposition: ``formulas`` (the pure functions) and ``scorer`` (the class); the evaluate module is
``metrics/text_prior_decomposition/``."""
