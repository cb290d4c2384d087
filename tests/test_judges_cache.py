"""The persistent verdict cache: several real processes writing one file, a rerun that makes no calls,
and a run killed midway that resumes without repeating what it had finished."""

import json
import multiprocessing
import signal
import subprocess
import sys
import time
from pathlib import Path

from judge_server import running_server

from audioreason.judges import JudgeRequest, JudgeRunner, OpenAICompatibleJudge, VerdictCache, VerdictSchema

SCHEMA = VerdictSchema.from_criteria([("Cue Identification", (0, 1)), ("Reasoning", (0, 1))])
GOOD = json.dumps(
    [
        {"name": "Cue Identification", "score": 1, "justification": "named"},
        {"name": "Reasoning", "score": 0, "justification": "missing"},
    ]
)
SCRIPT = {"scenarios": {"fast": [{"reply": GOOD}], "slow": [{"hang_s": 0.15, "then": {"reply": GOOD}}]}}


def batch(prefix, n, raters=1):
    return [
        JudgeRequest(
            f"{prefix}-{i}",
            [{"role": "system", "content": "Grade."}, {"role": "user", "content": f"item {prefix}-{i}"}],
            SCHEMA,
            rater,
        )
        for i in range(n)
        for rater in range(raters)
    ]


def make_runner(base_url, scenario, cache, concurrency=8):
    judge = OpenAICompatibleJudge(
        scenario, base_url=base_url, api_key_env=None, concurrency=concurrency, backoff_base_s=0.01, timeout_s=10
    )
    return JudgeRunner(judge, cache=cache)


def run_killable_batch(base_url: str, cache_path: str) -> None:
    """Entry point of the child process that the resume test kills."""
    make_runner(base_url, "slow", cache_path, concurrency=1).run(batch("resume", 20))


def _writer(path: str, process: int, n_keys: int, out: "multiprocessing.Queue") -> None:
    cache = VerdictCache(path)
    seen = 0
    for i in range(n_keys):
        status = "ok" if (i + process) % 4 == 0 else "invalid"
        cache.put(f"key-{i}", "judge", 0, status, {"status": status, "writer": process, "i": i, "pad": "x" * 200})
        if i % 10 == 0:
            seen += len(cache.get_many([f"key-{j}" for j in range(i + 1)]))
    cache.close()
    out.put((process, seen))


def test_concurrent_writers_in_several_processes(tmp_path):
    path = str(tmp_path / "shared.sqlite")
    VerdictCache(path).close()  # create the table once (processes would race to create it otherwise)
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    workers = [ctx.Process(target=_writer, args=(path, p, 150, out)) for p in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=60)
    assert all(w.exitcode == 0 for w in workers), [w.exitcode for w in workers]
    reports = sorted(out.get(timeout=5) for _ in workers)
    assert [p for p, _ in reports] == [0, 1, 2, 3] and all(seen > 0 for _, seen in reports)
    cache = VerdictCache(path)
    assert len(cache) == 150
    records = cache.get_many(f"key-{i}" for i in range(150))
    # Every key had one "ok" writer; whatever the order, the valid record is the one kept.
    assert all(
        records[f"key-{i}"]["status"] == "ok" and (i + records[f"key-{i}"]["writer"]) % 4 == 0 for i in range(150)
    )
    assert cache.counts() == {"ok": 150}


def test_ok_replaces_invalid_but_never_the_reverse(tmp_path):
    cache = VerdictCache(tmp_path / "c.sqlite")
    cache.put("a", "j", 0, "invalid", {"status": "invalid", "n": 1})
    cache.put("a", "j", 0, "ok", {"status": "ok", "n": 2})
    cache.put("a", "j", 0, "invalid", {"status": "invalid", "n": 3})
    cache.put("a", "j", 0, "ok", {"status": "ok", "n": 4})
    assert cache.get("a") == {"status": "ok", "n": 2} and cache.get("missing") is None


def test_second_run_is_served_from_the_cache_with_zero_calls(tmp_path):
    with running_server(SCRIPT, tmp_path / "server") as server:
        requests = batch("rerun", 10, raters=3)
        first = make_runner(server.base_url, "fast", tmp_path / "cache.sqlite").run(requests)
        assert all(r.ok and not r.cached for r in first) and len(server.requests()) == 30
        second_runner = make_runner(server.base_url, "fast", tmp_path / "cache.sqlite")  # a fresh process's view
        second = second_runner.run(requests)
        assert len(server.requests()) == 30  # no new call
        assert all(r.cached for r in second)
        assert [(r.item_id, r.rater, r.verdict, r.raw_reply) for r in second] == [
            (r.item_id, r.rater, r.verdict, r.raw_reply) for r in first
        ]
        stats = second_runner.stats
        assert (stats.requests, stats.cache_hits, stats.calls, stats.prompt_tokens, stats.ok) == (30, 30, 0, 0, 30)


def test_duplicate_requests_in_one_batch_are_paid_once(tmp_path):
    with running_server(SCRIPT, tmp_path / "server") as server:
        requests = batch("dup", 2) * 3
        runner = make_runner(server.base_url, "fast", None)
        results = runner.run(requests)
        assert len(results) == 6 and all(r.ok for r in results)
        assert len(server.requests()) == 2 and runner.stats.calls == 2 and runner.stats.cache_hits == 4


def test_killed_run_resumes_without_repeating_finished_calls(tmp_path):
    cache_path = tmp_path / "resume.sqlite"
    with running_server(SCRIPT, tmp_path / "server") as server:
        code = (
            "import sys; sys.path.insert(0, sys.argv[3]); import test_judges_cache as t; "
            "t.run_killable_batch(sys.argv[1], sys.argv[2])"
        )
        child = subprocess.Popen(
            [sys.executable, "-c", code, server.base_url, str(cache_path), str(Path(__file__).parent)],
            stderr=subprocess.PIPE,
        )
        try:
            deadline = time.monotonic() + 30
            while True:  # wait until the child has finished some verdicts, then kill it mid-run
                if cache_path.exists() and len(VerdictCache(cache_path)) >= 5:
                    break
                assert child.poll() is None, child.stderr.read().decode(errors="replace")
                assert time.monotonic() < deadline, "the child finished no verdict in time"
                time.sleep(0.02)
            child.send_signal(signal.SIGKILL)
            child.wait(timeout=10)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait(timeout=10)
            child.stderr.close()
        assert child.returncode == -signal.SIGKILL
        cache = VerdictCache(cache_path)
        finished = {
            record["item_id"]
            for record in cache.get_many(
                JudgeRunner(OpenAICompatibleJudge("slow", base_url=server.base_url)).key(r) for r in batch("resume", 20)
            ).values()
        }
        assert 5 <= len(finished) < 20
        before_resume = len(server.requests())
        runner = make_runner(server.base_url, "slow", cache, concurrency=4)
        results = runner.run(batch("resume", 20))
        assert all(r.ok for r in results)
        assert {r.item_id for r in results if r.cached} == finished  # every finished verdict survived
        new = server.requests()[before_resume:]
        asked_again = {r["messages"][1]["content"].removeprefix("item ") for r in new}
        assert not asked_again & finished  # nothing finished was paid for twice
        assert len(new) == 20 - len(finished) and runner.stats.calls == 20 - len(finished)
        # The killed child may have had one request in flight: at most one call was sent twice overall.
        assert len(server.requests()) <= 21
