"""MMAR-Rubrics: ``formulas`` (the pure functions) and ``scorer`` (the class); the evaluate module is
``metrics/mmar_rubrics/``."""
