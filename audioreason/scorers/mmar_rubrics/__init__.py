"""MMAR-Rubrics: ``formulas`` (the pure functions), ``scorer`` (the class) and ``generation`` (rubrics written by a
judge from the gold CoT); the evaluate module is ``metrics/mmar_rubrics/``."""
