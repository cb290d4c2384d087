"""A scripted OpenAI-compatible chat-completions server, run as a separate process by the judge tests and
the judge benchmark. Nothing in the library depends on it: the scripted replies live only here.

    python tests/judge_server.py --script script.json --log requests.jsonl --ready port.txt [--port 0]

The script is a JSON object:

    {"delay_s": 0.0,                       # every reply waits this long (the benchmark's "model time")
     "capacity": null,                     # at most this many requests served at once (others queue)
     "refused_gets": {"/PATH-PREFIX": 401},  # a GET under this path gets this status (other GETs: 200)
     "scenarios": {"NAME": [step, step, ...], ...}}

The scenario is the request's ``model``. Requests are grouped into conversations by the model and the
first two messages (so a re-ask continues its conversation and another item starts a new one); the n-th
request of a conversation gets step n (the last step repeats). A step is one of

    {"reply": "text", "usage": [prompt_tokens, completion_tokens], "finish_reason": "stop"}
    {"reply": "text", "usage": "none"}                                     # a reply without a usage field
    {"reply": "text", "usage": ["abc", -5]}                                # any values, sent as they are
    {"reply": "text", "cut_body": true}                                    # half the body (or event
                                                                           # stream), then the connection
                                                                           # closed: a server dying mid-reply
    {"reply": "text", "served_model": "judge-2026-01-01"}                  # the reply's model field (null:
                                                                           # none; default: the request's)
    {"status": 429, "headers": {"Retry-After": "1"}, "body": {...}}      # any HTTP error
    {"hang_s": 3.0, "then": step}                                          # answer late (or never)
    {"raw_body": "not json", "status": 200}                                # a broken HTTP body
    {"echo_auth": true, "status": 401}                                     # an error quoting the key
    {"reply": "...", "echo_auth_reply": true}                             # a 200 reply quoting the key
    {"reply_from_marker": true}                                            # reply with the text after
                                                                           # "REPLY:" in the last user message
    {"by_seed": {"42": step, "43": step}, "default": step}                 # choose by the request's seed
    {"by_text": {"FAIL": step}, "default": step}                           # choose by a word in the last
                                                                           # user message's text
    {"measure_audio": true, "expect_rate": 16000}                          # decode every input_audio part
                                                                           # (base64 WAV) and reply with
                                                                           # what was measured, as JSON;
                                                                           # 400 if one is not a 16-bit
                                                                           # WAV at expect_rate

    {"reply_by_tone": {"220": "bass", "880": "soprano"}, "quiet": "text"}  # answer from the audio: the
                                                                           # reply of the tone (Hz) nearest
                                                                           # the first input_audio WAV's
                                                                           # zero-crossing frequency; "quiet"
                                                                           # for an all-silent clip

    {"play": "construct_player", "config": {...}}                         # a player module of this folder
                                                                           # answers: ``reply(request, config)``
                                                                           # gives the reply text, or a step
                                                                           # (an error, a hang) to serve

    {"check_audio": {"format": "wav", "rate": 16000, "max_s": 30.0,      # a provider's documented request
                     "data_prefix": "", "position": "first",             # shape (endpoint presets): 400
                     "stream": false, "params": {"modalities": ["text"]}},  # naming what differs, else
     "then": step}                                                         # the ``then`` step

Every ``input_audio`` part is measured as it arrives (WAV with ``wave``, MP3 with soundfile) and the
measurement logged with the request (``audio``: format, data_prefix, container, rate, seconds). A request
with ``"stream": true`` gets its reply as server-sent events (text in two deltas, then a usage chunk when
``stream_options.include_usage`` is set, then ``[DONE]``).

The audio measurement (``measure_audio``) is the reply text: {"parts": [part types of the last user message,
in order], "text": its text, "audio": [{"format", "rate", "channels", "sample_width", "frames",
"pcm_sha256"}, ...]}, read with the standard library's ``wave`` (independent of the library's encoder).

Every request is appended to the log as one JSON line: time, scenario, conversation step, messages,
sampling parameters, header names, and whether an Authorization header came; never its value.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import hashlib
import io
import json
import os
import socket
import subprocess
import sys
import threading
import time
import wave
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Iterator, Optional

HANG_LIMIT_S = 30.0  # no scripted hang may outlive a test


class _State:
    def __init__(self, script: dict[str, Any], log_path: Path):
        self.script = script
        self.scenarios: dict[str, list[dict]] = script.get("scenarios", {})
        self.delay_s = float(script.get("delay_s", 0.0))
        capacity = script.get("capacity")
        self.capacity = threading.BoundedSemaphore(int(capacity)) if capacity else None
        self.counters: dict[str, int] = {}
        self.lock = threading.Lock()
        self.log = open(log_path, "a", encoding="utf-8", buffering=1)

    def next_step(self, scenario: str, messages: list[dict]) -> tuple[int, dict]:
        root = json.dumps([scenario, messages[:2]], sort_keys=True)
        conversation = hashlib.sha256(root.encode()).hexdigest()
        steps = (
            self.scenarios.get(scenario)
            or self.scenarios.get("*")
            or [{"status": 404, "body": {"error": {"message": f"no scenario {scenario!r}"}}}]
        )
        with self.lock:
            n = self.counters.get(conversation, 0)
            self.counters[conversation] = n + 1
        return n, steps[min(n, len(steps) - 1)]

    def write_log(self, entry: dict) -> None:
        line = json.dumps(entry, ensure_ascii=False)
        with self.lock:
            self.log.write(line + "\n")


def _reply_body(text: str, model: str, usage: Any, finish_reason: str) -> dict:
    body = {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "finish_reason": finish_reason, "message": {"role": "assistant", "content": text}}],
    }
    if usage == "none":  # some servers send no usage at all
        return body
    prompt_tokens, completion_tokens = usage if usage else (10, max(1, len(text) // 4))
    body["usage"] = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens}
    if all(type(n) is int for n in (prompt_tokens, completion_tokens)):
        body["usage"]["total_tokens"] = prompt_tokens + completion_tokens
    return body


def _last_user(messages: list[dict]) -> Any:
    return next((m.get("content", "") for m in reversed(messages) if m.get("role") == "user"), "")


def _text_of(content: Any) -> str:
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    return str(content)


def _measure_audio(messages: list[dict], expect_rate: Optional[int]) -> tuple[Optional[str], dict]:
    """(error or None, measurement) of the input_audio parts of the last user message."""
    content = _last_user(messages)
    parts = content if isinstance(content, list) else [{"type": "text", "text": content}]
    measured = {"parts": [p.get("type") for p in parts], "text": _text_of(content), "audio": []}
    for part in parts:
        if part.get("type") != "input_audio":
            continue
        audio = part.get("input_audio") or {}
        try:
            data = base64.b64decode(audio.get("data", ""), validate=True)
            with wave.open(io.BytesIO(data)) as w:
                rate, channels, width = w.getframerate(), w.getnchannels(), w.getsampwidth()
                frames = w.getnframes()
                pcm = w.readframes(frames)
        except (binascii.Error, wave.Error, EOFError) as err:
            return f"input_audio is not a base64 WAV: {err}", measured
        if len(pcm) != frames * channels * width:
            return f"WAV holds {len(pcm)} bytes of PCM, its header promises {frames * channels * width}", measured
        if width != 2 or (expect_rate is not None and rate != int(expect_rate)):
            return f"WAV is {8 * width}-bit at {rate} Hz; expected 16-bit at {expect_rate} Hz", measured
        measured["audio"].append(
            {
                "format": audio.get("format"),
                "rate": rate,
                "channels": channels,
                "sample_width": width,
                "frames": frames,
                "pcm_sha256": hashlib.sha256(pcm).hexdigest(),
            }
        )
    return None, measured


def _tone_reply(messages: list[dict], step: dict) -> str:
    """The reply a model that listens gives: by the frequency of the tone it hears, or ``quiet``."""
    import array
    import math

    content = _last_user(messages)
    part = next(p for p in content if isinstance(p, dict) and p.get("type") == "input_audio")
    with wave.open(io.BytesIO(base64.b64decode(part["input_audio"]["data"]))) as w:
        rate, pcm = w.getframerate(), array.array("h", w.readframes(w.getnframes()))
    if not pcm or math.sqrt(sum(x * x for x in pcm) / len(pcm)) < 10:  # silence (int16 RMS)
        return step["quiet"]
    crossings = sum((a < 0) != (b < 0) for a, b in zip(pcm, pcm[1:]))
    hz = crossings / 2 / (len(pcm) / rate)
    return step["reply_by_tone"][min(step["reply_by_tone"], key=lambda f: abs(float(f) - hz))]


def _play(step: dict, request: dict) -> dict:
    """The step a player module (a file of this folder, e.g. ``construct_player.py``) chooses for ``request``:
    its ``reply(request, config)`` returns the reply text or a step; a player that fails answers 500 with
    its error (the test sees it in the client's failure)."""
    import importlib
    import re
    import traceback

    name = str(step["play"])
    if not re.fullmatch(r"[a-z_][a-z0-9_]*", name) or not (Path(__file__).parent / f"{name}.py").is_file():
        return {"status": 500, "body": {"error": {"message": f"no player module {name!r} beside the server"}}}
    try:
        chosen = importlib.import_module(name).reply(request, step.get("config") or {})
    except Exception:  # noqa: BLE001 - a player bug is reported to the client, never a dead handler thread
        message = traceback.format_exc(limit=4)  # not to stderr: the test's pipe is read only at start-up
        return {"status": 500, "body": {"error": {"message": f"player {name} failed: {message}"}}}
    return {"reply": chosen} if isinstance(chosen, str) else dict(chosen)


MP3_SYNC = (b"ID3", b"\xff\xfb", b"\xff\xf3", b"\xff\xf2")


def _audio_parts(messages: list[dict]) -> tuple[list[str], list[dict]]:
    """(part types of the last user message in order, a measurement of each input_audio part)."""
    content = _last_user(messages)
    parts = content if isinstance(content, list) else [{"type": "text", "text": content}]
    measured = []
    for part in parts:
        if not isinstance(part, dict) or part.get("type") != "input_audio":
            continue
        audio = part.get("input_audio") or {}
        data = str(audio.get("data", ""))
        prefix = data[: data.index(",") + 1] if data.startswith("data:") and "," in data else ""
        entry = {
            "format": audio.get("format"),
            "data_prefix": prefix,
            "container": None,
            "rate": None,
            "seconds": None,
            "error": None,
        }
        try:
            raw = base64.b64decode(data[len(prefix) :], validate=True)
            if raw[:4] == b"RIFF":
                with wave.open(io.BytesIO(raw)) as w:
                    entry.update(
                        container="wav",
                        rate=w.getframerate(),
                        seconds=w.getnframes() / w.getframerate(),
                        sample_width=w.getsampwidth(),
                        channels=w.getnchannels(),
                    )
            elif raw.startswith(MP3_SYNC):
                import soundfile  # the test environment's; MP3 has no standard-library reader

                info = soundfile.info(io.BytesIO(raw))
                entry.update(
                    container="mp3", rate=info.samplerate, seconds=info.frames / info.samplerate, channels=info.channels
                )
            else:
                entry["error"] = f"the data is neither WAV nor MP3 (starts {raw[:4]!r})"
        except (binascii.Error, wave.Error, EOFError, RuntimeError) as err:
            entry["error"] = f"undecodable audio: {err}"
        measured.append(entry)
    return [p.get("type") if isinstance(p, dict) else type(p).__name__ for p in parts], measured


def _check_shape(expect: dict, request: dict, types: list[str], audio: list[dict]) -> Optional[str]:
    """What differs between the request and the documented shape ``expect`` (None: it matches)."""
    if bool(request.get("stream")) != bool(expect.get("stream", False)):
        return f"stream is {request.get('stream')!r}; this endpoint expects stream={expect.get('stream', False)}"
    if expect.get("stream") and not (request.get("stream_options") or {}).get("include_usage"):
        return "a streamed request without stream_options.include_usage gets no token counts"
    for key, value in (expect.get("params") or {}).items():
        if request.get(key) != value:
            return f"{key} is {request.get(key)!r}, expected {value!r}"
    if len(audio) != 1:
        return f"expected one input_audio part, got {len(audio)}"
    where = types.index("input_audio")
    position = expect.get("position", "first")
    if (position == "first" and where != 0) or (position == "last" and where != len(types) - 1):
        return f"input_audio is part {where} of {types}; expected it {position}"
    part = audio[0]
    if part["error"]:
        return part["error"]
    if part["data_prefix"] != expect.get("data_prefix", ""):
        return f"data prefix {part['data_prefix']!r}, expected {expect.get('data_prefix', '')!r}"
    if part["format"] != expect["format"] or part["container"] != expect["format"]:
        return f"format field {part['format']!r} holding {part['container']}; expected {expect['format']}"
    if part.get("sample_width", 2) != 2 or part.get("channels", 1) != 1:
        return f"expected mono 16-bit audio, got {part.get('channels')} channel(s) of {part.get('sample_width')} bytes"
    if expect.get("rate") is not None and part["rate"] != expect["rate"]:
        return f"rate {part['rate']} Hz, expected {expect['rate']} Hz"
    if expect.get("max_s") is not None and part["seconds"] > expect["max_s"] + 1e-6:
        return f"{part['seconds']:.3f} s of audio, more than the documented {expect['max_s']} s"
    return None


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: the client reuses connections
    disable_nagle_algorithm = True  # headers and body go out in two writes; Nagle would hold the body ~40 ms
    state: _State

    def log_message(self, format: str, *args: Any) -> None:  # the JSONL log is the record; keep stderr quiet
        pass

    def _send(self, status: int, body: Any, headers: Optional[dict] = None) -> None:
        data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, str(value))
        self.end_headers()
        try:
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout test)
            pass

    def _send_cut(self, data: bytes, content_type: str) -> None:
        """Headers promising ``data``, half of it, then the connection closed (a server dying mid-reply)."""
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data[: len(data) // 2])
        self.wfile.flush()
        self.close_connection = True
        self.connection.shutdown(socket.SHUT_RDWR)

    def _send_events(self, body: dict, cut_off: bool = False) -> None:
        """``body`` as a chat-completion event stream: the text in two deltas, the finish, the usage
        (``cut_off``: the stream stops in the middle of an event and the connection closes)."""
        text = body["choices"][0]["message"]["content"]
        cut = len(text) // 2
        chunk = {
            "id": body["id"],
            "object": "chat.completion.chunk",
            **({"model": body["model"]} if "model" in body else {}),
        }
        events = [
            {**chunk, "choices": [{"index": 0, "delta": {"role": "assistant", "content": text[:cut]}}]},
            {**chunk, "choices": [{"index": 0, "delta": {"content": text[cut:]}}]},
            {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": body["choices"][0]["finish_reason"]}]},
        ]
        if self.include_usage and "usage" in body:
            events.append({**chunk, "choices": [], "usage": body["usage"]})
        data = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
        if cut_off:
            self._send_cut(data.encode(), "text/event-stream")
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(data.encode())))
        self.end_headers()
        self.wfile.write(data.encode())

    def do_GET(self) -> None:  # /health for start-up checks, .../models for a client's check before work
        for prefix, status in self.state.script.get("refused_gets", {}).items():
            if self.path.startswith(prefix):
                self._send(int(status), {"error": {"message": f"refused GET {self.path}"}})
                return
        self._send(200, {"ok": True})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        try:
            request = json.loads(self.rfile.read(length) or b"{}")
        except json.JSONDecodeError:
            self._send(400, {"error": {"message": "request body is not JSON"}})
            return
        state = self.state
        model = str(request.get("model", ""))
        messages = request.get("messages") or []
        n, step = state.next_step(model, messages)
        types, audio = _audio_parts(messages)
        state.write_log(
            {
                "t": time.time(),
                "path": self.path,
                "scenario": model,
                "step": n,
                "messages": messages,
                "params": {k: v for k, v in request.items() if k not in ("messages", "model")},
                "header_names": sorted(h.lower() for h in self.headers.keys()),
                "authorization_sent": self.headers.get("Authorization") is not None,
                "audio": [{k: v for k, v in a.items() if v is not None} for a in audio],
            }
        )
        self.streamed = bool(request.get("stream"))
        self.include_usage = bool((request.get("stream_options") or {}).get("include_usage"))
        while "by_seed" in step or "by_text" in step:
            if "by_seed" in step:  # repeated draws of one model differ only by their seed
                step = step["by_seed"].get(str(request.get("seed"))) or step.get("default") or {"status": 400}
            else:
                text = _text_of(_last_user(messages))
                step = (
                    next((s for word, s in step["by_text"].items() if word in text), None)
                    or step.get("default")
                    or {"status": 400}
                )
        if "play" in step:
            step = _play(step, request)
        if "check_audio" in step:
            problem = _check_shape(step["check_audio"], request, types, audio)
            step = {"status": 400, "body": {"error": {"message": problem}}} if problem else step.get("then", {})
        if state.capacity is not None:
            with state.capacity:
                self._serve(step, model, messages)
        else:
            self._serve(step, model, messages)

    def _serve(self, step: dict, model: str, messages: list[dict]) -> None:
        if self.state.delay_s:
            time.sleep(self.state.delay_s)
        while "hang_s" in step:
            time.sleep(min(float(step["hang_s"]), HANG_LIMIT_S))
            step = step.get("then") or {"status": 504, "body": {"error": {"message": "hung"}}}
        if step.get("echo_auth"):
            # Like a provider's 401 that quotes (part of) the key: the client must scrub it.
            auth = self.headers.get("Authorization", "")
            self._send(
                step.get("status", 401),
                {
                    "error": {
                        "message": f"Incorrect API key provided: {auth.removeprefix('Bearer ')} (header {auth})",
                        "type": "invalid_request_error",
                        "code": "invalid_api_key",
                    }
                },
            )
            return
        if step.get("measure_audio"):
            error, measured = _measure_audio(messages, step.get("expect_rate"))
            if error:
                self._send(400, {"error": {"message": error}})
            else:
                self._send(200, _reply_body(json.dumps(measured), model, step.get("usage"), "stop"))
            return
        if "raw_body" in step:
            self._send(step.get("status", 200), step["raw_body"], step.get("headers"))
            return
        if "reply_by_tone" in step:
            self._send(200, _reply_body(_tone_reply(messages, step), model, step.get("usage"), "stop"))
            return
        if "reply" in step or step.get("reply_from_marker"):
            text = step.get("reply", "")
            if step.get("echo_auth_reply"):  # a 200 whose text quotes the request's key (a leaky proxy)
                text = f"{text} (request header: {self.headers.get('Authorization', '')})"
            if step.get("reply_from_marker"):
                text = str(_last_user(messages)).split("REPLY:", 1)[-1].strip()
            body = _reply_body(text, model, step.get("usage"), step.get("finish_reason", "stop"))
            if "served_model" in step:  # the version string the reply reports (null: no model field)
                body.pop("model")
                body.update({"model": step["served_model"]} if step["served_model"] is not None else {})
            if self.streamed:
                self._send_events(body, cut_off=bool(step.get("cut_body")))
            elif step.get("cut_body"):
                self._send_cut(json.dumps(body).encode(), "application/json")
            else:
                self._send(200, body, step.get("headers"))
            return
        self._send(
            int(step.get("status", 500)),
            step.get("body", {"error": {"message": "scripted error"}}),
            step.get("headers"),
        )


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # the listen backlog; the default 5 refuses a burst of 32 new connections


def serve(script_path: Path, log_path: Path, ready_path: Path, port: int = 0) -> None:
    script = json.loads(Path(script_path).read_text(encoding="utf-8"))
    _Handler.state = _State(script, Path(log_path))
    server = _Server(("127.0.0.1", port), _Handler)
    tmp = Path(str(ready_path) + ".tmp")
    tmp.write_text(str(server.server_address[1]), encoding="utf-8")
    tmp.rename(ready_path)  # the port appears atomically
    server.serve_forever(poll_interval=0.1)


# ---------------------------------------------------------------------------------------- test helpers
class ServerHandle:
    def __init__(self, process: subprocess.Popen, port: int, log_path: Path):
        self.process, self.port, self.log_path = process, port, log_path

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def requests(self) -> list[dict]:
        """The logged requests; a line still being written (a test polling a running server) is left out."""
        if not self.log_path.exists():
            return []
        complete = self.log_path.read_text(encoding="utf-8").split("\n")[:-1]
        return [json.loads(line) for line in complete if line]

    def log_text(self) -> str:
        return self.log_path.read_text(encoding="utf-8") if self.log_path.exists() else ""


def openai_cli_args(
    command: str, server: ServerHandle, model: str, key_env: str, data: Path, out: Path, *extra: str
) -> list[str]:
    """`audioreason COMMAND --adapter openai` on MMAR against this server, with quick retries."""
    return [
        command,
        "--adapter",
        "openai",
        "--base-url",
        server.base_url,
        "--model",
        model,
        "--api-key-env",
        key_env,
        "--benchmark",
        "mmar",
        "--data",
        str(data),
        "--out",
        str(out),
        "--no-progress",
        "--backoff-base-s",
        "0.01",
        "--timeout-s",
        "10",
        *extra,
    ]


@contextmanager
def running_server(script: dict, folder: Path, start_timeout_s: float = 15.0, port: int = 0) -> Iterator[ServerHandle]:
    """Start the server as a child process on a free 127.0.0.1 port (or ``port``: a later server at the same
    address as an earlier one); stop it on exit."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    script_path, log_path, ready = folder / "script.json", folder / "requests.jsonl", folder / "port.txt"
    script_path.write_text(json.dumps(script), encoding="utf-8")
    for stale in (log_path, ready):
        stale.unlink(missing_ok=True)
    process = subprocess.Popen(
        [
            sys.executable,
            str(Path(__file__).resolve()),
            "--script",
            str(script_path),
            "--log",
            str(log_path),
            "--ready",
            str(ready),
            "--port",
            str(port),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=dict(os.environ),
    )
    try:
        deadline = time.monotonic() + start_timeout_s
        while not ready.exists():
            if process.poll() is not None:
                raise RuntimeError(f"judge server exited: {process.stderr.read().decode(errors='replace')}")
            if time.monotonic() > deadline:
                raise RuntimeError("judge server did not start in time")
            time.sleep(0.02)
        yield ServerHandle(process, int(ready.read_text(encoding="utf-8")), log_path)
    finally:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)
        if process.stderr:
            process.stderr.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--script", required=True, type=Path)
    parser.add_argument("--log", required=True, type=Path)
    parser.add_argument("--ready", required=True, type=Path, help="file that receives the bound port")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    serve(args.script, args.log, args.ready, args.port)


if __name__ == "__main__":
    main()
