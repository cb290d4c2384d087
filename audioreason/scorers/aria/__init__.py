"""ARIA (ARIA-Rubrics M1-M6): ``formulas`` (the pure functions) and ``scorer`` (the class); the evaluate module is
``metrics/aria/``."""
