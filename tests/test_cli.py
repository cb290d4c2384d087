"""The command line refuses what cannot work, before doing any work, in one line and with exit status 2."""
import subprocess
import sys

import pytest

import audioreason


def run(*args):
    return subprocess.run([sys.executable, "-m", "audioreason.cli", *args], capture_output=True, text=True,
                          timeout=120)


def test_version():
    out = run("--version")
    assert out.returncode == 0 and out.stdout.strip() == f"audioreason {audioreason.__version__}"


@pytest.mark.parametrize("make_args, message", [
    (lambda tmp: ["prompt", "Q?", *[f"c{i}" for i in range(30)]], "at most 26 choices"),
    (lambda tmp: ["demo", "--workdir", str(tmp / "a-file")], "is a file"),
    (lambda tmp: ["demo", "--workdir", str(tmp / "w"), "--json", str(tmp / "missing" / "out.json")],
     "does not exist"),
    (lambda tmp: ["demo", "--workdir", str(tmp / "w"), "--json", str(tmp)], "is a folder"),
])
def test_bad_arguments_are_one_line_errors_before_any_work(tmp_path, make_args, message):
    (tmp_path / "a-file").write_text("x")
    out = run(*make_args(tmp_path))
    assert out.returncode == 2 and message in out.stderr and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "w").exists()  # nothing was started
