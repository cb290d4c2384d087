"""JSON Lines, read one way everywhere: blank lines skipped, a bad line is an error naming its number."""
from __future__ import annotations

import json
from typing import Any


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


def read_json_lines(path: Any) -> list[Any]:
    """The values of a JSON Lines file."""
    with open(path, encoding="utf-8") as f:
        return parse_json_lines(f.read(), str(path))
