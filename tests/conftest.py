import os

# Nothing in the test suite may reach a hub.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(scope="session")
def tiny_backbones(tmp_path_factory):
    """Role -> folder of a tiny random model (built once per test session, loaded by the real loaders)."""
    from tiny_models import build_all

    return build_all(tmp_path_factory.mktemp("tiny_models"))


@pytest.fixture(scope="session")
def tiny_backbones_f64(tiny_backbones):
    """The same tiny models, with the loaded torch backbones in float64 so batched and one-at-a-time
    paths agree to rounding (float32 reorders sums differently in a batch)."""
    import torch

    from audioreason.backends import load_backend

    for role in ("clap", "embedder", "lm", "nli"):
        backend = load_backend(role, tiny_backbones[role])
        backend.model.to(torch.float64)
    return tiny_backbones


@pytest.fixture(scope="session")
def demo_session(tmp_path_factory):
    """`audioreason demo` run once per session (about 3 minutes on 2 cores): (workdir, stdout, --json payload).
    Its run folder (workdir / "cascade-run") is read by the demo, report, explorer and browser tests; none may
    write into it."""
    import json
    import subprocess

    workdir = tmp_path_factory.mktemp("demo")
    out = workdir / "demo.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "audioreason.cli",
            "demo",
            "--workdir",
            str(workdir),
            "--json",
            str(out),
            "--no-progress",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return workdir, proc.stdout, json.loads(out.read_text())


@pytest.fixture(scope="session")
def audiospan_run(tmp_path_factory):
    """A scored AudioSpan run folder (tests/test_report_runs.py says what it holds)."""
    from test_report_runs import make_audiospan_run

    return make_audiospan_run(tmp_path_factory.mktemp("audiospan_scored"))


@pytest.fixture(scope="session")
def served_lm(tmp_path_factory):
    """A real `transformers serve` process on 127.0.0.1 serving the packaged SmolLM2-135M-Instruct (float32),
    started once for the session (tests/served_model.py). A test that restarts it leaves it running."""
    from served_model import served_smollm2

    with served_smollm2(tmp_path_factory.mktemp("served_lm")) as server:
        yield server
