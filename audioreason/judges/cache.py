"""A persistent verdict cache: one SQLite file in WAL mode, safe for several processes at once.

A row is keyed by the sha256 of a canonical JSON of (judge name, the full message list, the sampling
parameters, the rater index, the verdict schema). Each finished judgement is committed on its own as soon
as it exists, so a run that is killed loses nothing already judged and a rerun pays for nothing twice.

Stored: the judgement record (verdict or failure, raw replies, usage, counters); never an API key, a
base URL or an HTTP header. Valid verdicts and verdicts that stayed invalid after every re-ask are
stored (both were paid for); call failures (rate limits, timeouts, server errors) are not, so a rerun
tries them again. A valid verdict replaces a stored invalid one; nothing replaces a valid one.

Several processes share work through *claims*: before judging a key, a runner claims it; another process
that finds a live claim waits for the verdict instead of paying for it again. A claim ends when its
verdict is stored or released, when it expires, or when its process (same host) is gone.

Nothing paid for is lost to the database: a write that still finds the file locked after its retries is
appended to a side file (``<cache>.spill.jsonl``), read back with the cache, and moved into the database
when it is next opened. A file that is not a readable SQLite database raises ``CacheError`` naming it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import socket
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Sequence, Union

log = logging.getLogger("audioreason.judges")

CACHE_FORMAT = 1  # part of every key: bump when the stored record changes meaning
_CHUNK = 500
_OPEN_ATTEMPTS = 6  # keys per SELECT (SQLite's variable limit is 32766; keep statements small)


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def cache_key(
    judge: str,
    messages: Sequence[Mapping[str, Any]],
    sampling: Mapping[str, Any],
    rater: int,
    schema: Optional[Mapping[str, Any]] = None,
) -> str:
    """sha256 hex of the canonical request. ``sampling`` holds every parameter sent to the model."""
    payload = {
        "format": CACHE_FORMAT,
        "judge": judge,
        "messages": [dict(m) for m in messages],
        "sampling": dict(sampling),
        "rater": int(rater),
        "schema": schema,
    }
    return hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()


class CacheError(RuntimeError):
    """The cache file cannot be used (not a database, unreadable); the message names the file."""


def _locked(err: sqlite3.OperationalError) -> bool:
    text = str(err).lower()
    return "locked" in text or "busy" in text


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        return True
    return True


class VerdictCache:
    """Maps a cache key to a stored judgement record (a JSON-able dict).

    busy_timeout_s: how long one statement waits for another process's lock; write_attempts: statements
    tried before a record is spilled to the side file. Every method may be called from worker threads."""

    def __init__(self, path: Union[str, Path], busy_timeout_s: float = 60.0, write_attempts: int = 3):
        self.path = Path(path).expanduser()
        self.spill_path = self.path.with_name(self.path.name + ".spill.jsonl")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._busy_timeout_s = busy_timeout_s
        self._write_attempts = max(1, write_attempts)
        self._lock = threading.Lock()  # one connection, used from the event loop and worker threads
        self._conn: Optional[sqlite3.Connection] = None
        self._spilled: dict[str, dict[str, Any]] = {}
        self.spilled_writes = 0  # records this object had to write to the side file
        self.host = socket.gethostname()
        with self._lock:
            self._connect()
            self._read_spill()

    # ------------------------------------------------------------------ connection and errors
    def _connect(self) -> sqlite3.Connection:
        if self._conn is None:
            for attempt in range(_OPEN_ATTEMPTS):
                conn = None
                try:
                    conn = sqlite3.connect(
                        str(self.path), timeout=self._busy_timeout_s, check_same_thread=False, isolation_level=None
                    )  # autocommit; transactions are explicit
                    conn.execute(f"PRAGMA busy_timeout={int(self._busy_timeout_s * 1000)}")
                    # WAL: readers never block the writer and a killed process leaves committed rows intact;
                    # synchronous=NORMAL is durable against process crashes (an OS crash may lose the last
                    # commits).
                    conn.execute("PRAGMA journal_mode=WAL")
                    conn.execute("PRAGMA synchronous=NORMAL")
                    # The write lock first: processes opening one new file at once would otherwise upgrade a
                    # schema read to a write, which SQLite refuses at once (no busy wait) to avoid a deadlock.
                    conn.execute("BEGIN IMMEDIATE")
                    conn.execute("""CREATE TABLE IF NOT EXISTS judgements (
                                        key TEXT PRIMARY KEY,
                                        judge TEXT NOT NULL,
                                        rater INTEGER NOT NULL,
                                        status TEXT NOT NULL,
                                        record TEXT NOT NULL,
                                        created REAL NOT NULL)""")
                    conn.execute("""CREATE TABLE IF NOT EXISTS claims (
                                        key TEXT PRIMARY KEY,
                                        owner TEXT NOT NULL,
                                        expires REAL NOT NULL)""")
                    conn.execute("COMMIT")
                except sqlite3.OperationalError as err:
                    if conn is not None:
                        conn.close()
                    if not _locked(err):
                        raise self._error(err) from None
                    if attempt == _OPEN_ATTEMPTS - 1:
                        raise CacheError(
                            f"the judge cache {str(self.path)!r} stayed locked while opening: {err}"
                        ) from None
                    time.sleep(0.05 * 2**attempt)
                    continue
                except sqlite3.DatabaseError as err:
                    if conn is not None:
                        conn.close()
                    raise self._error(err) from None
                self._conn = conn
                break
        return self._conn

    def _error(self, err: Exception) -> CacheError:
        return CacheError(
            f"the judge cache {str(self.path)!r} cannot be used: {err}. It is not a readable "
            f"SQLite verdict cache; move it away or pass another cache path."
        )

    def _execute(self, sql: str, args: Sequence[Any] = ()) -> list[tuple]:
        """Run one statement under the connection lock; a damaged file is a CacheError naming it."""
        with self._lock:
            try:
                return self._connect().execute(sql, args).fetchall()
            except sqlite3.OperationalError as err:
                if _locked(err):
                    raise
                raise self._error(err) from None
            except sqlite3.DatabaseError as err:
                raise self._error(err) from None

    # ------------------------------------------------------------------ records
    def get(self, key: str) -> Optional[dict[str, Any]]:
        return self.get_many([key]).get(key)

    def get_many(self, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
        keys = list(dict.fromkeys(keys))
        found: dict[str, dict[str, Any]] = {}
        for i in range(0, len(keys), _CHUNK):
            chunk = keys[i : i + _CHUNK]
            marks = ",".join("?" * len(chunk))
            for key, record in self._execute(f"SELECT key, record FROM judgements WHERE key IN ({marks})", chunk):
                found[key] = json.loads(record)
        for key in keys:  # a spilled record counts as stored; an ok one wins over a stored failure
            spilled = self._spilled.get(key)
            if spilled is not None and (key not in found or spilled["status"] == "ok"):
                found[key] = spilled["record"]
        return found

    _UPSERT = (
        "INSERT INTO judgements (key, judge, rater, status, record, created) VALUES (?, ?, ?, ?, ?, ?) "
        "ON CONFLICT(key) DO UPDATE SET status=excluded.status, record=excluded.record, "
        "created=excluded.created WHERE judgements.status != 'ok' AND excluded.status = 'ok'"
    )

    def put(self, key: str, judge: str, rater: int, status: str, record: Mapping[str, Any]) -> str:
        """Store one record and commit it at once; returns "stored", or "spilled" when the database stayed
        locked through ``write_attempts`` tries (the record then lives in the side file, never lost). An "ok"
        record replaces a stored failure; a failure never replaces an "ok" record. Ends the key's claim."""
        data = canonical_json(record)
        for attempt in range(1, self._write_attempts + 1):
            try:
                with self._lock:
                    conn = self._connect()
                    try:
                        conn.execute("BEGIN IMMEDIATE")
                        conn.execute(self._UPSERT, (key, judge, int(rater), status, data, time.time()))
                        conn.execute("DELETE FROM claims WHERE key = ?", (key,))
                        conn.execute("COMMIT")
                    except BaseException:
                        if conn.in_transaction:
                            conn.execute("ROLLBACK")
                        raise
                return "stored"
            except sqlite3.OperationalError as err:
                if not _locked(err):
                    raise self._error(err) from None
                log.warning("judge cache %s is locked (try %d of %d)", self.path, attempt, self._write_attempts)
            except sqlite3.DatabaseError as err:
                raise self._error(err) from None
        self._spill({"key": key, "judge": judge, "rater": int(rater), "status": status, "record": record})
        return "spilled"

    def _spill(self, entry: Mapping[str, Any]) -> None:
        with self._lock:
            with open(self.spill_path, "a", encoding="utf-8") as f:
                f.write(canonical_json(entry) + "\n")
                f.flush()
                os.fsync(f.fileno())
            self._remember_spilled(entry)
            self.spilled_writes += 1
        log.warning(
            "judge cache %s stayed locked: the verdict for %s was written to %s",
            self.path,
            entry["key"][:12],
            self.spill_path,
        )

    def _remember_spilled(self, entry: Mapping[str, Any]) -> None:
        known = self._spilled.get(entry["key"])
        if known is None or (known["status"] != "ok" and entry["status"] == "ok"):
            self._spilled[entry["key"]] = dict(entry)

    def _read_spill(self) -> None:
        """Load the side file and move it into the database (keeping it if the database is still locked)."""
        if not self.spill_path.is_file():
            return
        for line in self.spill_path.read_text(encoding="utf-8").splitlines():
            try:
                entry = json.loads(line)
                self._remember_spilled(entry)
            except (json.JSONDecodeError, KeyError, TypeError):
                continue  # a line cut by a crash mid-write: the rest still counts
        conn = self._connect()
        try:
            conn.execute("BEGIN IMMEDIATE")
            for e in self._spilled.values():
                conn.execute(
                    self._UPSERT,
                    (e["key"], e["judge"], e["rater"], e["status"], canonical_json(e["record"]), time.time()),
                )
            conn.execute("COMMIT")
        except sqlite3.OperationalError as err:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            if not _locked(err):
                raise self._error(err) from None
            return  # still locked: the records stay in memory and in the side file
        self._spilled.clear()
        self.spill_path.unlink()

    # ------------------------------------------------------------------ claims
    def claim(self, key: str, owner: str, ttl_s: float) -> bool:
        """Take the key for ``owner`` unless another live owner holds it. An owner is "host:pid:tag"; a claim
        is dead when it expired, or when it was made on this host by a process that is gone or is this one
        (another runner of this process: runners share in-flight work themselves)."""
        now = time.time()
        with self._lock:
            conn = self._connect()
            try:
                conn.execute("BEGIN IMMEDIATE")
                row = conn.execute("SELECT owner, expires FROM claims WHERE key = ?", (key,)).fetchone()
                if row is not None and row[0] != owner and not self._claim_is_dead(row[0], row[1], now):
                    conn.execute("COMMIT")
                    return False
                conn.execute(
                    "INSERT INTO claims (key, owner, expires) VALUES (?, ?, ?) ON CONFLICT(key) DO UPDATE "
                    "SET owner=excluded.owner, expires=excluded.expires",
                    (key, owner, now + ttl_s),
                )
                conn.execute("COMMIT")
                return True
            except sqlite3.OperationalError as err:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                if _locked(err):
                    return True  # cannot coordinate now: judge it rather than wait on a lock
                raise self._error(err) from None

    def _claim_is_dead(self, owner: str, expires: float, now: float) -> bool:
        if expires <= now:
            return True
        host, _, rest = owner.partition(":")
        pid = rest.partition(":")[0]
        if host != self.host or not pid.isdigit():
            return False
        return int(pid) == os.getpid() or not _process_alive(int(pid))

    def release(self, key: str, owner: str) -> None:
        """End ``owner``'s claim on ``key`` without a record (the call failed or was cancelled)."""
        try:
            self._execute("DELETE FROM claims WHERE key = ? AND owner = ?", (key, owner))
        except sqlite3.OperationalError:
            pass  # locked: the claim expires, or dies with this process

    # ------------------------------------------------------------------ inspection
    def __len__(self) -> int:
        keys = {k for (k,) in self._execute("SELECT key FROM judgements")}
        return len(keys | set(self._spilled))

    def counts(self) -> dict[str, int]:
        """Stored records per status (the side file's included)."""
        rows = dict(self._execute("SELECT key, status FROM judgements"))
        rows.update({k: e["status"] for k, e in self._spilled.items() if k not in rows or e["status"] == "ok"})
        out: dict[str, int] = {}
        for status in rows.values():
            out[status] = out.get(status, 0) + 1
        return out

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
        return {"path": self.path, "busy_timeout_s": self._busy_timeout_s, "write_attempts": self._write_attempts}

    def __setstate__(self, state: Mapping[str, Any]) -> None:
        self.__init__(state["path"], state["busy_timeout_s"], state.get("write_attempts", 3))

    def __repr__(self) -> str:
        return f"VerdictCache({str(self.path)!r})"
