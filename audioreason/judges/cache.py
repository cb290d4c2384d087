"""A persistent verdict cache: one SQLite file in WAL mode, safe for several processes at once.

A row is keyed by the sha256 of a canonical JSON of (judge name, the full message list, the sampling
parameters, the rater index, the verdict schema). Each finished judgement is committed on its own as soon
as it exists, so a run that is killed loses nothing already judged and a rerun pays for nothing twice.

Stored: the judgement record (verdict or failure, raw replies, usage, counters); never an API key, a
base URL or an HTTP header. Valid verdicts and verdicts that stayed invalid after every re-ask are
stored (both were paid for); call failures (rate limits, timeouts, server errors) are not, so a rerun
tries them again. A valid verdict replaces a stored invalid one; nothing replaces a valid one.
"""
from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Sequence, Union

CACHE_FORMAT = 1  # part of every key: bump when the stored record changes meaning
_CHUNK = 500  # keys per SELECT (SQLite's variable limit is 32766; keep statements small)


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def cache_key(judge: str, messages: Sequence[Mapping[str, Any]], sampling: Mapping[str, Any], rater: int,
              schema: Optional[Mapping[str, Any]] = None) -> str:
    """sha256 hex of the canonical request. ``sampling`` holds every parameter sent to the model."""
    payload = {"format": CACHE_FORMAT, "judge": judge, "messages": [dict(m) for m in messages],
               "sampling": dict(sampling), "rater": int(rater), "schema": schema}
    return hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()


class VerdictCache:
    """Maps a cache key to a stored judgement record (a JSON-able dict)."""

    def __init__(self, path: Union[str, Path], busy_timeout_s: float = 60.0):
        self.path = Path(path).expanduser()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._busy_timeout_s = busy_timeout_s
        self._lock = threading.Lock()  # one connection, used from the event loop and worker threads
        self._conn: Optional[sqlite3.Connection] = None
        self._connect()

    def _connect(self) -> sqlite3.Connection:
        if self._conn is None:
            conn = sqlite3.connect(str(self.path), timeout=self._busy_timeout_s, check_same_thread=False,
                                   isolation_level=None)  # autocommit; transactions are explicit
            conn.execute(f"PRAGMA busy_timeout={int(self._busy_timeout_s * 1000)}")
            # WAL: readers never block the writer and a killed process leaves committed rows intact;
            # synchronous=NORMAL is durable against process crashes (an OS crash may lose the last commits).
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("""CREATE TABLE IF NOT EXISTS judgements (
                                key TEXT PRIMARY KEY,
                                judge TEXT NOT NULL,
                                rater INTEGER NOT NULL,
                                status TEXT NOT NULL,
                                record TEXT NOT NULL,
                                created REAL NOT NULL)""")
            self._conn = conn
        return self._conn

    def get(self, key: str) -> Optional[dict[str, Any]]:
        return self.get_many([key]).get(key)

    def get_many(self, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
        keys = list(dict.fromkeys(keys))
        found: dict[str, dict[str, Any]] = {}
        with self._lock:
            conn = self._connect()
            for i in range(0, len(keys), _CHUNK):
                chunk = keys[i:i + _CHUNK]
                marks = ",".join("?" * len(chunk))
                for key, record in conn.execute(f"SELECT key, record FROM judgements WHERE key IN ({marks})",
                                                chunk):
                    found[key] = json.loads(record)
        return found

    def put(self, key: str, judge: str, rater: int, status: str, record: Mapping[str, Any]) -> None:
        """Store one record and commit it at once. An "ok" record replaces a stored failure; a failure
        never replaces an "ok" record (two processes that judged the same request both keep the valid one)."""
        data = canonical_json(record)
        with self._lock:
            conn = self._connect()
            conn.execute(
                "INSERT INTO judgements (key, judge, rater, status, record, created) VALUES (?, ?, ?, ?, ?, ?) "
                "ON CONFLICT(key) DO UPDATE SET status=excluded.status, record=excluded.record, "
                "created=excluded.created WHERE judgements.status != 'ok' AND excluded.status = 'ok'",
                (key, judge, int(rater), status, data, time.time()))

    def __len__(self) -> int:
        with self._lock:
            return int(self._connect().execute("SELECT COUNT(*) FROM judgements").fetchone()[0])

    def counts(self) -> dict[str, int]:
        """Stored records per status."""
        with self._lock:
            rows = self._connect().execute("SELECT status, COUNT(*) FROM judgements GROUP BY status").fetchall()
        return {status: int(n) for status, n in rows}

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> "VerdictCache":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __getstate__(self) -> dict[str, Any]:  # a cache passed to another process reconnects there
        return {"path": self.path, "busy_timeout_s": self._busy_timeout_s}

    def __setstate__(self, state: Mapping[str, Any]) -> None:
        self.__init__(state["path"], state["busy_timeout_s"])

    def __repr__(self) -> str:
        return f"VerdictCache({str(self.path)!r})"
