"""JSON Lines, read one way everywhere: blank lines skipped, a bad line is an error naming its number."""
from __future__ import annotations

import json
from typing import Any, Optional, Sequence


def parse_json_lines(text: str, source: str = "") -> list[Any]:
    """The values of a JSON Lines text; ``source`` (a file name) prefixes error messages."""
    values = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            values.append(json.loads(line))
        except json.JSONDecodeError as err:
            where = f"{source}:{number}: not valid JSON" if source else f"line {number} is not valid JSON"
            raise ValueError(f"{where} ({err.msg})") from None
    return values


def parse_json_records(text: Optional[str], needed: Sequence[str] = (), what: str = "an object",
                       hint: str = "") -> list[dict]:
    """Pasted JSON Lines of objects (a Space widget's input): at least one, each an object holding every
    ``needed`` field; otherwise a ValueError naming the line (``what``: what a line should be; ``hint``: how
    a line looks, added to a missing-field message)."""
    try:
        rows = parse_json_lines(text or "")
    except ValueError as err:
        raise ValueError(f"each line must be one JSON object: {err}") from None
    if not rows:
        raise ValueError("Paste at least one JSON line (one JSON object per line).")
    for number, row in enumerate(rows, start=1):
        if not isinstance(row, dict):
            raise ValueError(f"JSON line {number}: expected {what}, got a {type(row).__name__}")
        missing = [k for k in needed if k not in row]
        if missing:
            named = f" ({row['id']})" if "id" in row else ""
            raise ValueError(f"JSON line {number}{named}: the field {missing[0]!r} is missing" +
                             (f" ({hint})" if hint else ""))
    return rows


def read_json_lines(path: Any) -> list[Any]:
    """The values of a JSON Lines file."""
    with open(path, encoding="utf-8") as f:
        return parse_json_lines(f.read(), str(path))
