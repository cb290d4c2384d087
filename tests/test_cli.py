"""The command line refuses what cannot work, before doing any work, in one line and with exit status 2."""

import subprocess
import sys

import pytest

import audioreason


def run(*args):
    return subprocess.run([sys.executable, "-m", "audioreason.cli", *args], capture_output=True, text=True, timeout=120)


def test_version():
    out = run("--version")
    assert out.returncode == 0 and out.stdout.strip() == f"audioreason {audioreason.__version__}"


@pytest.mark.parametrize(
    "make_args, message",
    [
        (lambda tmp: ["prompt", "Q?", *[f"c{i}" for i in range(30)]], "at most 26 choices"),
        (lambda tmp: ["demo", "--workdir", str(tmp / "a-file")], "is a file"),
        (
            lambda tmp: ["demo", "--workdir", str(tmp / "w"), "--json", str(tmp / "missing" / "out.json")],
            "does not exist",
        ),
        (lambda tmp: ["demo", "--workdir", str(tmp / "w"), "--json", str(tmp)], "is a folder"),
    ],
)
def test_bad_arguments_are_one_line_errors_before_any_work(tmp_path, make_args, message):
    (tmp_path / "a-file").write_text("x")
    out = run(*make_args(tmp_path))
    assert out.returncode == 2 and message in out.stderr and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "w").exists()  # nothing was started


EXIT_PROBE = """
import atexit, sys
atexit.register(lambda: print("exit handlers ran"))

class TornDown:
    def __del__(self):
        print("modules torn down")

kept = TornDown()
sys.argv = ["audioreason", *sys.argv[1:]]
from audioreason.cli.__main__ import console
console()
"""


@pytest.mark.parametrize(
    "args, status, stream, text",
    [
        (["prompt", "Is it loud?", "yes", "no"], 0, "stdout", "(B) no"),
        (["prompt", "Q?", *[f"c{i}" for i in range(30)]], 2, "stderr", "at most 26 choices"),
        (["--version"], 0, "stdout", f"audioreason {audioreason.__version__}"),
    ],
)
def test_the_command_line_ends_without_tearing_down_its_modules(args, status, stream, text):
    """The process ends after the command's output and the exit handlers, with the command's status, but
    without Python's teardown of the loaded modules (seconds after a run that imported torch)."""
    out = subprocess.run([sys.executable, "-c", EXIT_PROBE, *args], capture_output=True, text=True, timeout=120)
    assert out.returncode == status and text in getattr(out, stream), out.stderr
    assert "exit handlers ran" in out.stdout and "modules torn down" not in out.stdout
