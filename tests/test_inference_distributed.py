"""`audioreason run` as real processes: one process vs two (`--num-processes 2` launches
`accelerate launch --multi_gpu --num_processes 2`, gloo on CPU) give identical outputs; a run killed with
SIGKILL midway resumes with no output lost or duplicated (its stale lock taken over, its session recorded
as interrupted); stopping the launcher of two processes in any way leaves no worker running, and a second
run on a folder a live run writes is refused."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from inference_fixtures import mmar_raw, tiny_audio  # noqa: F401 (fixtures)

from audioreason.inference.runner import read_shards, select_records

ROOT = Path(__file__).resolve().parents[1]
UNITS = 6 * 4 * 2  # items x (full, none, frag:2:0, frag:2:1) x (plain, aria_cot)


def command(tiny_audio, raw, out, *extra, progress=False):
    return [
        sys.executable,
        "-m",
        "audioreason",
        "run",
        "--model",
        str(tiny_audio["phi4-multimodal"]),
        "--benchmark",
        "mmar",
        "--data",
        str(raw),
        "--limit",
        "6",
        "--conditions",
        "full,none,frag:2",
        "--templates",
        "plain,aria_cot",
        "--max-new-tokens",
        "8",
        "--max-audio-s",
        "2",
        "--out",
        str(out),
        *([] if progress else ["--no-progress"]),
        *extra,
    ]


def environment():
    return {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "OMP_NUM_THREADS": "1",
        "PYTHONPATH": str(ROOT),
        "TRANSFORMERS_VERBOSITY": "error",
    }


def run_cli(args, timeout=240):
    done = subprocess.run(args, cwd=ROOT, env=environment(), capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def comparable(out):
    records = [json.loads(line) for line in (out / "outputs.jsonl").read_text().splitlines()]
    return [(r["key"], r["output"], r["error"], r["tokens"], r["audio"]) for r in records], records


@pytest.fixture(scope="module")
def one_process(tiny_audio, mmar_raw, tmp_path_factory):
    """The same run in this (single) process, through the same runner the command line calls."""
    import torch

    from audioreason.inference import DecodingParams
    from audioreason.inference.runner import RunConfig, run

    out = tmp_path_factory.mktemp("one")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    summary = run(
        RunConfig(
            model=str(tiny_audio["phi4-multimodal"]),
            benchmark="mmar",
            data=str(mmar_raw),
            out=str(out),
            conditions=["full", "none", "frag:2"],
            templates=["plain", "aria_cot"],
            limit=6,
            batch_size=2,
            model_options={"max_audio_s": 2.0},
            decoding=DecodingParams(max_new_tokens=8),
            progress=False,
        )
    )
    torch.set_num_threads(threads)
    assert summary["counts"]["ok"] == UNITS and summary["sessions"][-1]["world_size"] == 1
    return out


def test_two_processes_give_the_same_outputs_as_one(one_process, tiny_audio, mmar_raw, tmp_path):
    out = tmp_path / "two"
    done = run_cli(command(tiny_audio, mmar_raw, out, "--batch-size", "2", "--num-processes", "2", progress=True))
    assert done.stdout.count("audioreason run:") == 1  # only the main process reports
    assert "generating (rank 0 of 2)" in done.stderr and "item/s" in done.stderr  # one progress bar, rank 0's
    assert "rank 1" not in done.stderr
    two, records = comparable(out)
    assert two == comparable(one_process)[0]
    assert {r["rank"] for r in records} == {0, 1}
    assert sorted(p.name for p in (out / "shards").iterdir()) == ["rank-0.jsonl", "rank-1.jsonl"]
    summary = json.loads((out / "run.json").read_text())
    assert summary["sessions"][-1]["world_size"] == 2 and summary["counts"]["ok"] == UNITS


def test_a_run_killed_midway_resumes_without_loss_or_duplicates(one_process, tiny_audio, mmar_raw, tmp_path):
    out = tmp_path / "killed"
    process = subprocess.Popen(
        command(tiny_audio, mmar_raw, out, "--batch-size", "1"),
        cwd=ROOT,
        env=environment(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    shard = out / "shards" / "rank-0.jsonl"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and process.poll() is None:
        if shard.is_file() and shard.read_bytes().count(b"\n") >= 5:
            break
        time.sleep(0.01)
    assert process.poll() is None, "the run ended before it could be killed"
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    written = len(read_shards(out / "shards").records)
    assert 5 <= written < UNITS and not (out / "outputs.jsonl").exists()

    assert json.loads((out / "run.lock").read_text())["pid"] == process.pid  # left behind by the killed run
    done = run_cli(command(tiny_audio, mmar_raw, out, "--batch-size", "1"))
    assert f"{written} already done" in done.stdout
    assert f"taking over the stale lock of {out}: its holder (pid {process.pid} on host" in done.stderr
    resumed, records = comparable(out)
    assert resumed == comparable(one_process)[0]
    keys = [r["key"] for r in records]
    assert len(keys) == len(set(keys)) == UNITS
    chosen, duplicates = select_records(read_shards(out / "shards").records)
    assert duplicates == 0 and len(chosen) == UNITS
    assert len(read_shards(out / "shards").records) == UNITS  # nothing was generated twice
    summary = json.loads((out / "run.json").read_text())
    assert summary["counts"]["resumed"] == written and summary["counts"]["duplicates"] == 0
    assert summary["status"] == "finished" and not (out / "run.lock").exists()
    killed, resumed_session = summary["sessions"]
    assert killed["status"] == "interrupted" and killed["counts"] == {"total": UNITS, "done": written, "failed": 0}
    assert resumed_session["ran"] == UNITS - written


def processes_of(out):
    """Pids of the processes whose command line names ``out`` (launcher, accelerate's agent, workers)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if str(out) in cmdline:
                pids.append(int(entry.name))
    return pids


def long_run(tiny_audio, raw, out):
    """A two-process run long enough to be stopped midway (it would take minutes)."""
    args = [
        sys.executable,
        "-m",
        "audioreason",
        "run",
        "--model",
        str(tiny_audio["phi4-multimodal"]),
        "--benchmark",
        "mmar",
        "--data",
        str(raw),
        "--conditions",
        "full,none,frag",
        "--templates",
        "plain,aria_cot",
        "--max-new-tokens",
        "64",
        "--max-audio-s",
        "2",
        "--out",
        str(out),
        "--no-progress",
        "--num-processes",
        "2",
    ]
    process = subprocess.Popen(
        args,
        cwd=ROOT,
        env=environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and process.poll() is None:
        if all(
            (out / "shards" / f"rank-{r}.jsonl").is_file() and (out / "shards" / f"rank-{r}.jsonl").read_bytes()
            for r in (0, 1)
        ):
            return process
        time.sleep(0.05)
    process.kill()
    raise AssertionError(f"the run did not start: {process.communicate()[1][-3000:]}")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("how", ["SIGINT", "SIGTERM", "SIGKILL of the group", "SIGKILL of the launcher"])
def test_stopping_the_launcher_stops_its_workers(how, tiny_audio, mmar_raw, tmp_path):
    out = tmp_path / "stopped"
    launcher = long_run(tiny_audio, mmar_raw, out)
    try:
        assert len(processes_of(out)) >= 4  # launcher, agent, two workers
        if how == "SIGTERM":  # while it runs, the folder is held: a second run is refused, naming the launcher
            second = subprocess.run(
                command(tiny_audio, mmar_raw, out),
                cwd=ROOT,
                env=environment(),
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert second.returncode == 2, second.stderr[-2000:]
            assert f"is being written by a live run (pid {launcher.pid} on host" in second.stderr
            assert "already done" not in second.stdout
        if how == "SIGKILL of the group":
            os.killpg(launcher.pid, signal.SIGKILL)
        else:
            os.kill(launcher.pid, getattr(signal, how.split()[0]))
        deadline = time.monotonic() + 60
        while processes_of(out) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert processes_of(out) == [], f"still running after {how}"
        launcher.wait(timeout=10)
        if how in ("SIGINT", "SIGTERM"):
            assert launcher.returncode == 128 + getattr(signal, how)
            assert f"stopped by {how}" in launcher.stderr.read()
            assert not (out / "run.lock").exists()  # released by the launcher on its way out
    finally:
        for pid in processes_of(out):
            os.kill(pid, signal.SIGKILL)
