"""Layer 0, the bottom: what every other layer shares. ``schema`` (the records that cross module borders), ``errors``
(the errors the library raises for a caller's mistake: ``UsageError``, ``DataError``, and ``describe_error``, one
line per error; the command line maps them to exit statuses), ``jsonl`` (the one JSON Lines reader), ``scale``
(the one 0-1 score scale and exact fractions), ``bundled`` (where the shipped evaluate modules and dataset cards
are), ``hf_internals`` (every private evaluate and datasets name the package uses, checked against the pinned
versions). It imports nothing else of the package."""
