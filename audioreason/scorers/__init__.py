"""Layer 6: the five scorers, one folder each, every folder split the same way: ``formulas.py`` holds the paper's
formulas as pure functions (parsed records and numbers in, numbers out; nothing loaded, no I/O) and ``scorer.py``
the class that parses raw inputs, calls the backends or judges it is given, and aggregates with the formulas;
a scorer with more jobs gives each its module (``text_prior``: records, inputs, sections, tables, examples;
``mmar_rubrics.generation``), and ``common`` holds what the input checks share.
``aria`` (ARIA-Rubrics M1-M6), ``mmar_rubrics``, ``audiospan_rubric``, ``anchor_chain``, ``text_prior``
(text_prior_decomposition). It may import layers 0-5 (base, text, audio, backends, judges, data).

Each folder also holds the scorer's declaration (``declaration.py``, shaped by ``declare``), listed once in
``registry``: its name, inputs, options, results sections, printed rows, report tables and figures. Those two
are layer 9 (ARCHITECTURE.md), since they build results sections; nothing in layer 6 imports them."""
