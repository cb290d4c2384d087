"""The processes of a run: the lock that keeps one live run per ``--out`` folder, and the launcher of
``--num-processes N``, whose workers stop when it stops.

Lock: ``<out>/run.lock`` holds the holder's pid, host, start time and process start time (Linux: from
/proc, so a reused pid is not taken for the holder). It is created atomically (a complete file linked into
place, never a half-written one). A second run on the folder is refused with a message naming the holder
while the holder lives; a lock whose holder is gone (its pid not alive on this host, or alive but another
process) is stale: taken over with a message. A lock held on another host cannot be checked from here and
is refused, naming the file to remove if that run is dead. With ``--num-processes N`` the launcher holds the
lock and hands its token to the workers (``AUDIOREASON_RUN_LOCK``), which check it instead of taking it.

Stopping: the launcher starts ``accelerate launch`` with a parent-death signal (Linux ``PR_SET_PDEATHSIG``:
SIGTERM when the launcher dies, even by SIGKILL) and forwards SIGINT and SIGTERM to it as SIGTERM (torch's
elastic agent then stops its workers); each worker also asks for SIGTERM when the agent dies (the agent
starts workers in their own sessions, so a SIGKILL of the launcher's process group does not reach them).
Where prctl is missing a watchdog thread polls the parent pid instead.
"""

from __future__ import annotations

import ctypes
import datetime as _dt
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any, Optional, Sequence

from audioreason.judges.base import scrub, url_secrets

LOCK_FILE = "run.lock"
LOCK_ENV = "AUDIOREASON_RUN_LOCK"  # the launcher's lock token, for its workers
LAUNCHER_ENV = "AUDIOREASON_LAUNCHER_PID"
STOP_GRACE_S = 45.0  # the elastic agent gives its workers 30 s after SIGTERM, then kills them


class RunLockError(ValueError):
    """The folder is held by a live run (or by one on another host)."""


def process_start(pid: int) -> Optional[int]:
    """The process's start time in clock ticks since boot (Linux /proc), None where unknown."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    try:
        return int(text.rsplit(")", 1)[1].split()[19])
    except (IndexError, ValueError):
        return None


def pid_alive(pid: int, start: Optional[int] = None) -> bool:
    """Whether ``pid`` runs on this host (and, given ``start``, is the same process as then)."""
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        pass
    if start is not None:
        now = process_start(pid)
        if now is not None and now != start:
            return False
    return True


def shown_command(argv: Sequence[str]) -> str:
    """The command line as the lock file stores it and its messages show it: a URL's password and query
    values (``--base-url http://user:KEY@host/v1?key=...``) replaced, as everywhere a URL is shown."""
    secrets = [
        secret
        for arg in argv
        if "://" in arg
        for secret in url_secrets(arg.split("=", 1)[1] if arg.startswith("--") and "=" in arg else arg)
    ]
    return scrub(" ".join(argv), secrets)


class RunLock:
    """``<out>/run.lock``, held by this process from ``acquire()`` to ``release()``."""

    def __init__(self, out: Path):
        self.out = Path(out)
        self.path = self.out / LOCK_FILE
        self.token = uuid.uuid4().hex
        self.held = False

    def describe(self, holder: dict[str, Any]) -> str:
        # Scrubbed again: a lock written by an earlier version holds the command line as it was typed.
        command = shown_command(str(holder["command"]).split(" ")) if holder.get("command") else ""
        return (
            f"pid {holder.get('pid')} on host {holder.get('host')!r}, started {holder.get('started')}"
            f"{', command: ' + command if command else ''}"
        )

    def acquire(self) -> "RunLock":
        self.out.mkdir(parents=True, exist_ok=True)
        mine = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "process_start": process_start(os.getpid()),
            "started": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "command": shown_command(sys.argv),
            "token": self.token,
        }
        while True:
            if self._create(mine):
                self.held = True
                return self
            holder = self.read()
            if holder is None:  # vanished between the two steps: try again
                continue
            if holder.get("host") != mine["host"]:
                raise RunLockError(
                    f"{self.out} is held by a run on another host ({self.describe(holder)}); if "
                    f"that run is dead, remove {self.path}"
                )
            if pid_alive(holder.get("pid"), holder.get("process_start")):
                raise RunLockError(
                    f"{self.out} is being written by a live run ({self.describe(holder)}); wait "
                    "for it to end or use another --out folder"
                )
            if self._remove_if(holder):
                print(
                    f"audioreason run: taking over the stale lock of {self.out}: its holder "
                    f"({self.describe(holder)}) is no longer running",
                    file=sys.stderr,
                )

    def live_holder(self) -> Optional[dict[str, Any]]:
        """The lock's holder while it may be writing the folder (alive on this host, or on another host, which
        cannot be checked from here, as ``acquire`` refuses it too); None with no lock or a stale one."""
        holder = self.read()
        if holder is None:
            return None
        if holder.get("host") != socket.gethostname() or pid_alive(holder.get("pid"), holder.get("process_start")):
            return holder
        return None

    def _create(self, content: dict[str, Any]) -> bool:
        """Write the lock whole beside it, then link it into place: an existing lock is never replaced."""
        tmp = self.out / f".{LOCK_FILE}.{self.token}"
        tmp.write_text(json.dumps(content), encoding="utf-8")
        try:
            os.link(tmp, self.path)
            return True
        except FileExistsError:
            return False
        finally:
            tmp.unlink(missing_ok=True)

    def read(self) -> Optional[dict[str, Any]]:
        """The lock's content (an unreadable one reads as a dead holder: it cannot be a live run's)."""
        try:
            content = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            return {"pid": None, "host": socket.gethostname(), "started": "?", "damaged": True}
        return content if isinstance(content, dict) else {"pid": None, "host": socket.gethostname(), "started": "?"}

    def _remove_if(self, holder: dict[str, Any]) -> bool:
        """Remove the stale lock if it is still ``holder``'s (two runs taking it over at once: one wins)."""
        aside = self.out / f".{LOCK_FILE}.stale.{self.token}"
        try:
            os.rename(self.path, aside)
        except FileNotFoundError:
            return False
        try:
            if self._same(aside, holder):
                return True
            os.link(aside, self.path)  # another run's fresh lock: put it back
            return False
        except FileExistsError:
            return False
        finally:
            aside.unlink(missing_ok=True)

    @staticmethod
    def _same(path: Path, holder: dict[str, Any]) -> bool:
        try:
            content = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return bool(holder.get("damaged"))
        return content == holder or not isinstance(content, dict)

    def release(self) -> None:
        if self.held:
            content = self.read()
            if content is not None and content.get("token") == self.token:
                self.path.unlink(missing_ok=True)
            self.held = False

    def __enter__(self) -> "RunLock":
        return self.acquire()

    def __exit__(self, *exc: Any) -> None:
        self.release()


class HeldByLauncher:
    """The lock as a launched worker sees it: held by its launcher (checked, never taken or released;
    ``out`` None: nothing to check)."""

    def __init__(self, out: Optional[Path], token: Optional[str]):
        if out is None:
            return
        lock = RunLock(out)
        content = lock.read()
        if content is None or content.get("token") != token:
            raise RunLockError(f"{out}: the launcher's lock ({lock.path}) is gone or held by another run")

    def release(self) -> None:
        pass


class FolderHold:
    """The command line's hold on ``--out`` (taken before any model loads): the lock, its token exported
    for the run in this process and for launched workers; ``release()`` ends both."""

    def __init__(self, out: Path):
        self.lock = RunLock(out).acquire()
        self.saved = os.environ.get(LOCK_ENV)
        os.environ[LOCK_ENV] = self.lock.token

    def release(self) -> None:
        if self.saved is None:
            os.environ.pop(LOCK_ENV, None)
        else:
            os.environ[LOCK_ENV] = self.saved
        self.lock.release()


def lock_run_folder(out: Path) -> Any:
    """What a run's main process holds while it writes ``out``: the command line's or the launcher's lock
    when they hold it, else its own."""
    token = os.environ.get(LOCK_ENV)
    if token:
        return HeldByLauncher(out, token)
    return RunLock(out).acquire()


# ------------------------------------------------------------------------------------------------
# Parent death
# ------------------------------------------------------------------------------------------------

_PR_SET_PDEATHSIG = 1


def _set_pdeathsig(sig: int = signal.SIGTERM) -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def die_with_parent() -> None:
    """Get SIGTERM when the parent process dies (a launched worker whose agent is killed must not run on)."""
    parent = os.getppid()
    if not _set_pdeathsig():

        def watch() -> None:
            while os.getppid() == parent:
                time.sleep(0.5)
            os.kill(os.getpid(), signal.SIGTERM)

        threading.Thread(target=watch, name="parent-watchdog", daemon=True).start()
    launcher = os.environ.get(LAUNCHER_ENV)
    # The parent (or the launcher above it) may have died before the signal was asked for: nothing would come.
    if parent == 1 or (launcher and launcher.isdigit() and not pid_alive(int(launcher))):
        os.kill(os.getpid(), signal.SIGTERM)


def supervise(command: Sequence[str], env: dict[str, str], grace_s: float = STOP_GRACE_S) -> int:
    """Run ``command`` (``accelerate launch ...``) until it ends; SIGINT or SIGTERM here stop it (forwarded
    as SIGTERM, then SIGKILL after ``grace_s``) and end with 128 + the signal's number."""
    child = subprocess.Popen(list(command), env=env, preexec_fn=_set_pdeathsig if os.name == "posix" else None)
    received: list[int] = []

    def forward(signum: int, frame: Any) -> None:
        received.append(signum)
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)

    previous = {sig: signal.signal(sig, forward) for sig in (signal.SIGINT, signal.SIGTERM)}
    deadline: Optional[float] = None
    try:
        while True:
            try:
                code = child.wait(timeout=0.5)
                break
            except subprocess.TimeoutExpired:
                if received and deadline is None:
                    deadline = time.monotonic() + grace_s
                if deadline is not None and time.monotonic() > deadline:
                    child.kill()  # its workers get their parent-death signal
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if received:
        name = signal.Signals(received[0]).name
        print(
            f"audioreason run: stopped by {name}; the workers were stopped (rerun the command to resume)",
            file=sys.stderr,
        )
        return 128 + received[0]
    return code


__all__ = [
    "LAUNCHER_ENV",
    "LOCK_ENV",
    "LOCK_FILE",
    "FolderHold",
    "HeldByLauncher",
    "RunLock",
    "RunLockError",
    "die_with_parent",
    "lock_run_folder",
    "pid_alive",
    "process_start",
    "supervise",
]
