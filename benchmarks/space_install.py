"""Space folders in a fresh virtual environment: the install a Hugging Face Space makes, timed, then the app served.

For each app named: ``audioreason space build`` assembles its folder (the apps that open with a run get the demo's
run folder, made first with ``audioreason demo`` when ``--demo-workdir`` holds none), ``python -m venv`` makes a
fresh environment (no ``--system-site-packages``), ``pip install -r requirements.txt`` installs from the folder's
own requirements (this downloads: it needs the package index, as a Space does), ``app.py`` is launched, and a
``gradio_client`` in that environment lists the endpoints and scores the widget's example over HTTP. Prints one
row per app: install seconds, whether it served, what it answered.

    .venv/bin/python benchmarks/space_install.py anchor_chain [aria ...|all] [--demo-workdir DIR]

Not in the test suite, which stays offline; the suite runs every light app from its built folder in an interpreter
that can import only what its requirements.txt installs (tests/test_spaces.py).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from audioreason.apps.spaces import APPS, build_space, build_wheel

CLIENT = r"""
import sys, time
from gradio_client import Client
url, name = sys.argv[1], sys.argv[2]
for _ in range(600):
    try:
        client = Client(url, verbose=False)
        break
    except Exception:
        time.sleep(1)
api = {"anchor_chain": "/score", "audiospan_rubric": "/score", "mmar_rubrics": "/score", "aria": "/score",
       "text_prior_decomposition": "/score", "explorer": "/show", "report": "/render"}[name]
print(sorted(client.view_api(return_format="dict", print_info=False)["named_endpoints"]))
if name not in ("explorer", "report"):  # their endpoints read a session's state; the widgets score their example
    given = {"audio_path": None} if name == "aria" else {}  # its example has no audio (M1 then unavailable)
    print(str(client.predict(api_name=api, **given))[:200])
"""


def demo_run(workdir: Path) -> Path:
    run = workdir / "cascade-run"
    if not (run / "results.json").is_file():
        subprocess.run(
            [sys.executable, "-m", "audioreason.cli", "demo", "--workdir", str(workdir), "--no-progress"],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    return run


def install_and_serve(name: str, root: Path, wheel: Path, run: Path, port: int) -> tuple[float, bool, str]:
    folder = root / name
    build_space(name, folder, runs=[run] if APPS[name].runs else (), wheel=wheel)
    venv = root / f"venv-{name}"
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    done = subprocess.run(
        [python, "-m", "pip", "install", "-q", "-r", "requirements.txt"], cwd=folder, capture_output=True, text=True
    )
    installed = time.monotonic() - started
    if done.returncode:
        return installed, False, "pip failed: " + done.stderr.strip().splitlines()[-1]
    env = {
        **{k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
        "GRADIO_SERVER_PORT": str(port),
        "GRADIO_SERVER_NAME": "127.0.0.1",
        "GRADIO_ANALYTICS_ENABLED": "False",
    }
    server = subprocess.Popen(
        [python, "app.py"], cwd=folder, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT
    )
    try:
        client = subprocess.run(
            [python, "-c", CLIENT, f"http://127.0.0.1:{port}/", name], capture_output=True, text=True, timeout=600
        )
        answer = (client.stdout if client.returncode == 0 else client.stderr).strip().replace("\n", " | ")
        return installed, client.returncode == 0, answer[:160]
    finally:
        server.terminate()
        server.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("apps", nargs="+", help=f"apps to install ({', '.join(APPS)}) or all")
    parser.add_argument("--demo-workdir", type=Path, default=Path.home() / ".cache" / "audioreason" / "demo")
    args = parser.parse_args()
    names = list(APPS) if args.apps == ["all"] else args.apps
    unknown = [n for n in names if n not in APPS]
    if unknown:
        parser.error(f"unknown app {unknown[0]!r}; the apps are {', '.join(APPS)}")
    run = demo_run(args.demo_workdir)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        wheel = build_wheel(root / "wheel")
        print(f"{'app':26} {'install s':>9}  served  answer")
        for k, name in enumerate(names):
            seconds, served, answer = install_and_serve(name, root, wheel, run, 7870 + k)
            print(f"{name:26} {seconds:9.0f}  {'yes' if served else 'no':6}  {answer}")


if __name__ == "__main__":
    main()
