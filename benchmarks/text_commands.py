"""Commands that only read text, against the official script doing the same work on the same rows.

Work: the 1,000 MMAR items of tests/data/MMAR-meta.jsonl as a raw MMAR folder without audio (as a user of
predictions made elsewhere holds it), and 1,000 prediction rows built from them in the file MMAR's
code/evaluation.py reads (each record with ``answer_prediction``: the gold answer on two rows in three, the
next choice on the third). Nothing is downloaded; MMAR's script is not shipped here: pass its path.

1. the official script: ``python evaluation.py --input predictions.jsonl`` (github.com/ddlBoJack/MMAR,
   code/evaluation.py), its printed total accuracy kept;
2. ``audioreason import mmar predictions.jsonl --benchmark mmar --data RAW --out RUN`` (a new folder each time);
3. ``audioreason score RUN --scorers accuracy --no-progress``, whose official-scorer accuracy must equal the
   script's (checked: the benchmark stops otherwise);
4. ``audioreason compare RUN RUN_B`` (a second imported run) and ``audioreason --help``, for reference.

Every command is its own process, started the same way (``python -m audioreason``), timed from start to
exit; its peak resident memory is that process's own (``os.wait4``). A warm-up round comes first (bytecode
caches written: ``PYTHONDONTWRITEBYTECODE`` is dropped from the children's environment, as an installed
package has them), then ``--rounds`` rounds in alternating order; each number is the median over the rounds,
each ratio the median audioreason time over the median official time of the same run.

    python benchmarks/text_commands.py --official PATH/TO/MMAR/code/evaluation.py [--rounds 5] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
META = ROOT / "tests" / "data" / "MMAR-meta.jsonl"
# The targets of issue 31 for the official script's two jobs: scoring and reading the predictions in.
TARGETS = {"score": 3.0, "import": 5.0}
SCORE_MB = 150


def write_work(work: Path) -> dict[str, Path]:
    """The raw MMAR folder (metadata only) and two predictions files of 1,000 rows each."""
    raw = work / "mmar"
    raw.mkdir(parents=True)
    shutil.copyfile(META, raw / "MMAR-meta.jsonl")
    records = [json.loads(line) for line in META.read_text("utf-8").splitlines() if line.strip()]
    files = {}
    for name, wrong_every in (("predictions.jsonl", 3), ("predictions_b.jsonl", 2)):
        with open(work / name, "w", encoding="utf-8") as f:
            for n, record in enumerate(records):
                choices = record["choices"]
                right = n % wrong_every != 0
                wrong = choices[(choices.index(record["answer"]) + 1) % len(choices)]
                f.write(
                    json.dumps(
                        {**record, "answer_prediction": record["answer"] if right else wrong}, ensure_ascii=False
                    )
                    + "\n"
                )
        files[name] = work / name
    return {"raw": raw, "a": files["predictions.jsonl"], "b": files["predictions_b.jsonl"]}


# Started by a small launcher: a child's peak RSS counts the memory of the process it was spawned from until
# its exec, so spawned from this one (its parsed data) every command would read at least this process's size.
LAUNCHER = (
    "import os, sys, time\n"
    "start = time.perf_counter()\n"
    "pid = os.posix_spawn(sys.argv[2], sys.argv[2:], os.environ)\n"
    "_, status, usage = os.wait4(pid, 0)\n"
    "with open(sys.argv[1], 'w') as f:\n"
    "    f.write(f'{time.perf_counter() - start} {usage.ru_maxrss} {os.waitstatus_to_exitcode(status)}')\n"
)


def measure(command: list[str], work: Path) -> tuple[float, float, str]:
    """(wall seconds, peak resident MB, stdout) of one process: the launcher times it and reads its own peak
    with os.wait4 (RUSAGE_CHILDREN would give the largest of every child so far)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(HF_HUB_OFFLINE="1", PYTHONPATH=str(ROOT), PYTHONWARNINGS="ignore")
    report = work / "measured.txt"
    done = subprocess.run(
        [sys.executable, "-S", "-c", LAUNCHER, str(report), *command], cwd=ROOT, env=env, capture_output=True, text=True
    )
    wall, kilobytes, code = report.read_text().split()
    if done.returncode != 0 or code != "0":
        raise SystemExit(f"{' '.join(command[:5])} ... failed ({code}):\n{done.stderr[-3000:]}")
    return float(wall), int(kilobytes) / 1024, done.stdout


def official_accuracy(printed: str) -> float:
    found = re.search(r"Total Accuracy: ([0-9.]+)% over (\d+) samples", printed)
    if not found:
        raise SystemExit(f"the official script printed no total accuracy:\n{printed[-2000:]}")
    return float(found.group(1))


def scored_accuracy(run: Path) -> float:
    results = json.loads((run / "results.json").read_text("utf-8"))
    (entry,) = results["scorers"]["accuracy"]["results"]  # one set: one model, condition and template
    return 100 * entry["official_scorer_accuracy"]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--official", required=True, help="MMAR's code/evaluation.py (github.com/ddlBoJack/MMAR)")
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds after the warm-up (default 5)")
    parser.add_argument("--keep", help="work in this folder and keep it (default: a temporary folder)")
    args = parser.parse_args(argv)
    official = Path(args.official).expanduser().resolve()
    if not official.is_file():
        parser.error(f"--official {args.official!r} is not a file")
    work = Path(args.keep or tempfile.mkdtemp(prefix="audioreason-text-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        return _run(official, work, args.rounds)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


def _run(official: Path, work: Path, rounds: int) -> int:
    files = write_work(work)
    cli = [sys.executable, "-m", "audioreason"]
    fresh = iter(range(10**6))

    def import_command(predictions: Path, out: Path) -> list[str]:
        return cli + [
            "import",
            "mmar",
            str(predictions),
            "--benchmark",
            "mmar",
            "--data",
            str(files["raw"]),
            "--out",
            str(out),
            "--model",
            out.name,
        ]

    run_a, run_b = work / "run-a", work / "run-b"
    for run, predictions in ((run_a, files["a"]), (run_b, files["b"])):
        measure(import_command(predictions, run), work)
        measure(cli + ["score", str(run), "--scorers", "accuracy", "--no-progress"], work)
    commands = {
        "official": lambda: [sys.executable, str(official), "--input", str(files["a"])],
        "score": lambda: cli + ["score", str(run_a), "--scorers", "accuracy", "--no-progress"],
        "import": lambda: import_command(files["a"], work / f"run-{next(fresh)}"),
        "compare": lambda: cli + ["compare", str(run_a), str(run_b)],
        "--help": lambda: cli + ["--help"],
    }
    times: dict[str, list[float]] = {name: [] for name in commands}
    peaks: dict[str, list[float]] = {name: [] for name in commands}
    printed = ""
    for round_ in range(rounds + 1):  # round 0 warms up
        order = list(commands) if round_ % 2 == 0 else list(commands)[::-1]
        for name in order:
            wall, peak, out = measure(commands[name](), work)
            if name == "official":
                printed = out
            if round_:
                times[name].append(wall)
                peaks[name].append(peak)
    theirs, ours = official_accuracy(printed), scored_accuracy(run_a)
    if abs(theirs - ours) > 0.005:
        raise SystemExit(f"accuracy differs: official script {theirs:.2f}%, audioreason score {ours:.2f}%")
    median = {name: statistics.median(values) for name, values in times.items()}
    peak = {name: statistics.median(values) for name, values in peaks.items()}
    print(
        f"official script: {official} ({median['official']:.3f} s, {peak['official']:.0f} MB, "
        f"total accuracy {theirs:.2f}% over 1000 rows; audioreason score's official-scorer accuracy "
        f"{ours:.2f}%)"
    )
    print(f"{rounds} rounds after a warm-up, medians; {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}\n")
    rows = [("command", "audioreason wall s", "peak MB", "official wall s", "ratio", "target")]
    for name in ("score", "import", "compare", "--help"):
        target = TARGETS.get(name)
        rows.append(
            (
                f"audioreason {name}",
                f"{median[name]:.3f}",
                f"{peak[name]:.0f}",
                f"{median['official']:.3f}" if target else "-",
                f"{median[name] / median['official']:.1f}x" if target else "-",
                f"<= {target:g}x" + (f", <= {SCORE_MB} MB" if name == "score" else "") if target else "-",
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
