"""A real OpenAI-compatible server for the tests and the structured-outputs benchmark: `transformers serve`
(the pinned transformers, with its serving extra: fastapi, uvicorn) on 127.0.0.1, serving the packaged
SmolLM2-135M-Instruct converted once to a float32 folder (``audioreason.backends.packaged``).

    with served_smollm2(folder) as server:      # ready when /health answers (about 25 s on 2 cores)
        judge = OpenAICompatibleJudge(server.model, base_url=server.base_url)
        server.received(), server.answered()    # chat requests the server took in / answered, from its log
        server.restart()                         # SIGKILL, then a new process on the same port

What the server saw is read from its log (one file per process start): transformers logs "[Request received]"
for each chat request it accepts, uvicorn one access line per response. Without continuous batching
`transformers serve` generates for one request at a time (one inference thread); the others wait in its queue.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Optional

RECEIVED = "[Request received]"
ANSWERED = re.compile(r'"POST /v1/chat/completions HTTP/1\.1" (\d{3})')
START_TIMEOUT_S = 240.0  # a loaded 2-core machine; an idle one is ready in ~25 s


def packaged_smollm2() -> str:
    """The float32 folder of the packaged SmolLM2-135M-Instruct (converted from its GGUF once per machine)."""
    from audioreason.backends.packaged import locate_packaged

    return locate_packaged("SmolLM2-135M-Instruct")[0]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ServedModel:
    """One `transformers serve` on a fixed port; ``restart`` keeps the port and starts a new log file."""

    def __init__(self, folder: str, logs: Path, port: Optional[int] = None):
        self.model = str(folder)  # the server is pinned to this model: requests must name it
        self.port = port or free_port()
        self.logs = Path(logs)
        self.logs.mkdir(parents=True, exist_ok=True)
        self.process: Optional[subprocess.Popen] = None
        self.lives: list[Path] = []  # one log per process start
        self.start_s: list[float] = []

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> None:
        log = self.logs / f"serve-{len(self.lives)}.log"
        self.lives.append(log)
        env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", PYTHONUNBUFFERED="1")
        # One thread: on a shared 2-core machine two spin against each other (the tests took 553 s instead of 275 s)
        env.setdefault("OMP_NUM_THREADS", "1")
        command = [
            sys.executable,
            "-m",
            "transformers.cli.transformers",
            "serve",
            self.model,
            "--device",
            "cpu",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--log-level",
            "info",
        ]
        started = time.monotonic()
        with open(log, "wb") as out:
            self.process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env)
        deadline = started + START_TIMEOUT_S
        while not self._healthy():
            if self.process.poll() is not None:
                raise RuntimeError(f"transformers serve exited ({self.process.returncode}):\n{self.log_text()[-3000:]}")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"transformers serve not ready in {START_TIMEOUT_S:g} s:\n{self.log_text()[-3000:]}")
            time.sleep(0.25)
        self.start_s.append(time.monotonic() - started)

    def _healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=2) as response:
                return response.status == 200
        except OSError:
            return False

    def stop(self, kill: bool = False) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGKILL if kill else signal.SIGTERM)
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=15)

    def restart(self) -> None:
        """Kill the server at once (no graceful shutdown: in-flight requests are cut) and start it again."""
        self.stop(kill=True)
        self.start()

    # ------------------------------------------------------------------ what the server saw
    def log_text(self, life: Optional[int] = None) -> str:
        paths = self.lives if life is None else [self.lives[life]]
        return "".join(p.read_text(encoding="utf-8", errors="replace") for p in paths if p.exists())

    def received(self, life: Optional[int] = None) -> int:
        return self.log_text(life).count(RECEIVED)

    def answered(self, life: Optional[int] = None, status: str = "200") -> int:
        return sum(1 for code in ANSWERED.findall(self.log_text(life)) if code == status)

    def most_in_flight(self, since: int = 0) -> int:
        """The most chat requests accepted and not yet answered at one point of the log (from character
        ``since`` of ``log_text()`` on)."""
        most = now = 0
        for line in self.log_text()[since:].splitlines():
            if RECEIVED in line:
                now += 1
                most = max(most, now)
            elif ANSWERED.search(line):
                now -= 1
        return most


@contextmanager
def served_smollm2(logs: Path, folder: Optional[str] = None) -> Iterator[ServedModel]:
    server = ServedModel(folder or packaged_smollm2(), logs)
    server.start()
    try:
        yield server
    finally:
        server.stop()
