"""JSON Lines, read one way everywhere: blank lines skipped, a bad line is an error naming its number.

A line ends at "\\n" only (``str.splitlines`` would also break inside a JSON string holding U+2028, U+2029
or U+0085, characters a model's reply may contain and ``json.dumps(ensure_ascii=False)`` writes as is); each
line is decoded on its own, so invalid UTF-8 is named by its line. A file is read a line at a time (its whole
text is never held) and a line is bounded (``MAX_LINE_BYTES``): a longer one is an error naming it, never read.
A string holding a lone surrogate (``"\\ud800"`` escaped alone, half of a UTF-16 pair) is refused with its line
and key: it is not a character and cannot be written back as UTF-8.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Iterable, Iterator, Optional, Sequence, Union

# The longest line a JSON Lines file may hold (docs/import.md): a reply of about 3 million words, far above the
# longest chain of thought; a line is held about 4 times over (bytes, text, value) while it is parsed.
MAX_LINE_BYTES = 16 * 2**20
# What a lone surrogate can come from: a \uD800-\uDFFF escape, or, in text not decoded here, the code point.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")

# A Python type as the JSON kind it reads from, for messages ("... is a number, not a string").
JSON_KINDS = {
    dict: "an object",
    list: "an array",
    str: "a string",
    int: "an integer",
    float: "a number",
    type(None): "null",
}


class DataFileError(ValueError):
    """A file that is not what it should be: not UTF-8, not JSON, a line or a record of the wrong shape. A data
    error, not a usage error: the command line prints it as one line with exit status 1."""


def json_type(value: Any) -> str:
    """A JSON value's kind in words, for messages: "an object", "an array", "a string", "a number"..."""
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, (list, tuple)):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    return "null" if value is None else type(value).__name__


def _where(source: str, number: int) -> str:
    return f"{source}:{number}" if source else f"line {number}"


def numbered_json_lines(
    data: Union[str, bytes], source: str = "", *, objects: bool = False, torn_last: bool = False
) -> tuple[list[tuple[int, Any]], int]:
    """(the (line number, value) pairs of a JSON Lines text or file content, the torn last lines: 0 or 1).
    A DataFileError names ``source`` (a file name) and the line: not UTF-8, not JSON, nested too deeply, a lone
    surrogate, or, with ``objects``, not a JSON object. ``torn_last``: a last line without its newline is what a
    writer killed mid-line leaves, so it is dropped and counted, never read (even when it happens to parse)."""
    *lines, last = data.split(b"\n" if isinstance(data, bytes) else "\n")
    return _numbered([(line, True) for line in lines] + [(last, False)], source, objects, torn_last)


def _file_lines(path: Path, limit: int) -> Iterator[tuple[bytes, bool]]:
    """A file's lines (without the newline, whether one ended it), one at a time, each at most ``limit`` bytes."""
    with open(path, "rb") as f:
        for number, line in enumerate(iter(lambda: f.readline(limit + 1), b""), start=1):
            if line.endswith(b"\n"):
                yield line[:-1], True
            elif len(line) > limit:
                raise DataFileError(
                    f"{path}:{number}: a line longer than {limit} bytes, the most a JSON line may "
                    "hold (is it one record per line?)"
                )
            else:
                yield line, False


def _numbered(
    lines: Iterable[tuple[Union[str, bytes], bool]], source: str, objects: bool, torn_last: bool
) -> tuple[list[tuple[int, Any]], int]:
    values = []
    for number, (line, ended) in enumerate(lines, start=1):
        if torn_last and not ended and line.strip():
            return values, 1  # only the last line lacks its newline
        given_as_text = isinstance(line, str)
        if not given_as_text:
            try:
                line = line.decode("utf-8")
            except UnicodeDecodeError as err:
                raise DataFileError(
                    f"{_where(source, number)}: not valid UTF-8 (byte 0x{line[err.start]:02x} at "
                    f"column {err.start + 1})"
                ) from None
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as err:
            where = f"{source}:{number}: not valid JSON" if source else f"line {number} is not valid JSON"
            raise DataFileError(f"{where} ({err.msg})") from None
        except RecursionError:
            raise DataFileError(f"{_where(source, number)}: JSON nested too deeply to read") from None
        if objects and not isinstance(value, dict):
            raise DataFileError(f"{_where(source, number)}: expected a JSON object, got {json_type(value)}")
        if _SURROGATE_ESCAPE.search(line) or (given_as_text and _SURROGATE.search(line)):
            _refuse_lone_surrogate(value, _where(source, number))
        values.append((number, value))
    return values, 0


def _refuse_lone_surrogate(value: Any, where: str) -> None:
    """A DataFileError naming ``where`` and the key if a string in ``value`` (a key too) holds a lone surrogate."""
    pending = [("", value)]
    while pending:  # not recursive: the value may be nested as deeply as the JSON reader allows
        at, value = pending.pop()
        if isinstance(value, dict):
            pending.extend((f"{at}.{k}" if at else str(k), v) for k, v in value.items())
            pending.extend((f"{at} key {k!r}", k) for k in value)  # taken first: a path names only good keys
        elif isinstance(value, list):
            pending.extend((f"{at}[{n}]", v) for n, v in enumerate(value))
        elif isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as err:
                half = f"\\u{ord(value[err.start]):04x}"
                raise DataFileError(
                    f"{where}: {at.strip() or 'the value'} holds a lone surrogate {half} (half of a "
                    "UTF-16 pair, not a character)"
                ) from None


def parse_json_lines(text: str, source: str = "") -> list[Any]:
    """The values of a JSON Lines text; ``source`` (a file name) prefixes error messages."""
    return [value for _, value in numbered_json_lines(text, source)[0]]


def parse_json_records(
    text: Optional[str], needed: Sequence[str] = (), what: str = "an object", hint: str = ""
) -> list[dict]:
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
            raise ValueError(
                f"JSON line {number}{named}: the field {missing[0]!r} is missing" + (f" ({hint})" if hint else "")
            )
    return rows


def read_json_lines(path: Any) -> list[Any]:
    """The values of a JSON Lines file."""
    return [value for _, value in _numbered(_file_lines(Path(path), MAX_LINE_BYTES), str(path), False, False)[0]]


def read_json_objects(path: Any, torn_last: bool = False) -> tuple[list[tuple[int, dict]], int]:
    """A JSON Lines file of objects: ((line number, object) pairs, torn last lines), as ``numbered_json_lines``."""
    return _numbered(_file_lines(Path(path), MAX_LINE_BYTES), str(path), True, torn_last)


def read_json_file(path: Any) -> Any:
    """The value of a JSON file; a DataFileError names the file and what is wrong (unreadable, not UTF-8, not
    JSON with the line and column of the fault, nested too deeply, a lone surrogate with its key)."""
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        raise DataFileError(f"{path}: cannot be read ({err.strerror or err})") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise DataFileError(
            f"{path}: not valid UTF-8 (byte 0x{data[err.start]:02x} at position {err.start + 1})"
        ) from None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise DataFileError(f"{path}: not valid JSON ({err.msg}: line {err.lineno} column {err.colno})") from None
    except RecursionError:
        raise DataFileError(f"{path}: JSON nested too deeply to read") from None
    if _SURROGATE_ESCAPE.search(text):
        _refuse_lone_surrogate(value, str(path))
    return value
