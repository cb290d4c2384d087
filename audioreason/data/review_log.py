"""Writing review.jsonl (``audioreason.data.review`` describes the format): a decision made and checked as the reader
checks a line, then appended as one line and fsynced, so a decision the app confirmed survives a crash."""

from __future__ import annotations

import json
import os
import threading
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping, Optional, Union

from .review import Decision, parse_decision

_WRITE_LOCK = threading.Lock()


def now_iso() -> str:
    """The current UTC time as ISO 8601 to the second ("2026-01-05T10:00:00Z")."""
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def make_decision(
    item_id: str,
    decision: str,
    *,
    reason: str = "",
    fixes: Optional[Mapping[str, Any]] = None,
    reviewer: Optional[str] = None,
    time: Optional[str] = None,
) -> Decision:
    """A decision checked as the reader checks a line (a DataFileError says what is wrong); ``time``: now."""
    record: dict[str, Any] = {"item_id": item_id, "decision": decision, "time": time or now_iso()}
    if reason and reason.strip():
        record["reason"] = reason
    if fixes is not None:
        record["fixes"] = dict(fixes)
    if reviewer and reviewer.strip():
        record["reviewer"] = reviewer
    return parse_decision(record, "the decision")


def _last_line_end(fd: int, size: int, block: int = 1 << 16) -> int:
    """The offset just past the file's last newline (0 when it has none), read backwards a block at a time."""
    end = size
    while end > 0:
        start = max(0, end - block)
        cut = os.pread(fd, end - start, start).rfind(b"\n")
        if cut >= 0:
            return start + cut + 1
        end = start
    return 0


def write_decision(path: Union[str, os.PathLike], decision: Decision) -> Decision:
    """Append ``decision`` as one line of ``path`` (created with its folder) and fsync it; the decision back.

    A last line without its newline (a writer stopped mid-line; never read) is cut off first, so the new line
    does not join it. One ``os.write`` of the whole line on an O_APPEND descriptor: writers in other processes do
    not interleave within a line."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    line = (json.dumps(decision.to_dict(), ensure_ascii=False) + "\n").encode("utf-8")
    with _WRITE_LOCK:
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                os.ftruncate(fd, _last_line_end(fd, size))
            os.write(fd, line)
            os.fsync(fd)
        finally:
            os.close(fd)
    return decision


__all__ = ["make_decision", "now_iso", "write_decision"]
