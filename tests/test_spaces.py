"""`audioreason space build NAME OUT`: Space folders that install and run with no checkout beside them.

In the suite (offline): every app's README carries the Space header; its committed requirements.txt is the
one the build writes; every light app's folder is assembled (wheel unpacked, runs bundled) and then run in a
fresh interpreter that can import only the folder and the distributions its requirements.txt installs (and
what those require), where it builds its UI and scores its own example. The real fresh-venv install
(``python -m venv``, ``pip install -r requirements.txt`` from the package index, launch, one request over
HTTP) downloads, so it is a script, not a test: benchmarks/space_install.py."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from audioreason.apps.spaces import (
    APPS,
    SpaceBuildError,
    build_space,
    build_wheel,
    check_header,
    requirements_text,
    uploaded_text,
    wheel_pins,
)

ROOT = Path(__file__).resolve().parents[1]
LIGHT = [name for name in APPS if name != "aria"]  # aria ships ~570 MB of weights: benchmarks/space_install.py


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    return build_wheel(tmp_path_factory.mktemp("wheel"))


@pytest.fixture(scope="module")
def built(wheel, tmp_path_factory, demo_session):
    root = tmp_path_factory.mktemp("spaces")
    run = demo_session[0] / "cascade-run"
    return {name: build_space(name, root / name, runs=[run] if APPS[name].runs else (), wheel=wheel) for name in LIGHT}


def test_every_app_has_the_space_header(wheel):
    pins = wheel_pins(wheel)
    for app in APPS.values():
        header = check_header(ROOT / app.folder / "README.md", pins)
        assert header["sdk"] == "gradio" and str(header["sdk_version"]) == pins["gradio"][0].split("==")[1]
        assert header["app_file"] == "app.py" and str(header["python_version"]) == "3.11"
        assert header["license"] and header["tags"]


def test_committed_requirements_are_what_the_build_writes(wheel):
    pins = wheel_pins(wheel)
    for app in APPS.values():
        assert (ROOT / app.folder / "requirements.txt").read_text() == requirements_text(app, pins), app.name
    aria = (ROOT / "metrics/aria/requirements.txt").read_text().splitlines()
    # The CPU build of torch from PyTorch's own index (a plain pin resolves to the CUDA build on Linux).
    assert "--extra-index-url https://download.pytorch.org/whl/cpu" in aria
    assert [line for line in aria if line.startswith("torch==")] == [f"{pins['torch'][0]}+cpu"]
    light = [
        line
        for line in (ROOT / "metrics/anchor_chain/requirements.txt").read_text().splitlines()
        if not line.startswith("#")
    ]
    assert light == ["numpy==2.4.6", "gradio==6.31.0", "gradio-client==2.7.2"]


def test_a_built_folder_carries_the_package_and_the_runs(built):
    folder = Path(built["explorer"]["out"])
    assert {"app.py", "README.md", "requirements.txt", "audioreason"} <= {p.name for p in folder.iterdir()}
    assert (folder / "audioreason" / "report" / "runs.py").is_file()
    assert (folder / "audioreason" / "bundled" / "metrics" / "aria" / "aria.py").is_file()  # as setup.py bundles it
    assert len(list(folder.glob("audioreason-*.dist-info"))) == 1
    run = folder / built["explorer"]["runs"][0]
    assert {"run.json", "outputs.jsonl", "results.json", "items.jsonl", "benchmark_items.jsonl"} <= {
        p.name for p in run.iterdir()
    }
    items = [json.loads(line) for line in (run / "benchmark_items.jsonl").read_text().splitlines()]
    assert len(items) == 12 and all((run / item["audio"]).is_file() for item in items)
    assert built["explorer"]["lfs"] == []  # nothing over 10 MB: no Git LFS needed


def test_the_build_refuses_what_cannot_work(tmp_path, wheel):
    with pytest.raises(SpaceBuildError, match="unknown app 'nope'"):
        build_space("nope", tmp_path / "x", wheel=wheel)
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "f").write_text("x")
    with pytest.raises(SpaceBuildError, match="not empty; give a new folder or --overwrite"):
        build_space("anchor_chain", tmp_path / "full", wheel=wheel)
    with pytest.raises(SpaceBuildError, match="anchor_chain takes no runs"):
        build_space("anchor_chain", tmp_path / "y", runs=[tmp_path], wheel=wheel)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "audioreason.cli",
            "space",
            "build",
            "report",
            str(tmp_path / "r"),
            "--run",
            str(tmp_path / "no-run"),
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1 and "audioreason space: error: SpaceBuildError: not a scored run folder" in done.stderr
    assert not (tmp_path / "r").exists()


def test_an_uploaded_file_must_be_text(tmp_path):
    good, bad = tmp_path / "rows.jsonl", tmp_path / "rows.bin"
    good.write_text('{"a": 1}\n')
    bad.write_bytes(b"\xff\xfe\x00")
    assert uploaded_text(str(good)) == '{"a": 1}\n'
    with pytest.raises(ValueError, match="rows.bin is not UTF-8 text"):
        uploaded_text(str(bad))


# ---------------------------------------------------------------------------------------------
# Each light app, from its built folder, with only what its requirements install
# ---------------------------------------------------------------------------------------------

# Run in a fresh interpreter inside a built folder: imports of any installed distribution outside the closure of
# requirements.txt fail as they would in a fresh venv; then the app builds its UI and scores its example.
DRIVER = r"""
import importlib.abc, importlib.metadata, importlib.util, json, re, sys
from packaging.requirements import Requirement

def norm(name):
    return re.sub(r"[-_.]+", "-", name).lower()

wanted = [Requirement(l).name for l in open("requirements.txt").read().splitlines()
          if l.strip() and not l.startswith(("#", "-"))]
allowed, todo = set(), list(wanted)
while todo:
    name = norm(todo.pop())
    if name in allowed:
        continue
    allowed.add(name)
    for line in importlib.metadata.requires(name) or []:
        req = Requirement(line)
        if req.marker is None or req.marker.evaluate({"extra": ""}):
            todo.append(req.name)
owners = importlib.metadata.packages_distributions()
blocked = []

class OnlyRequirements(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        top = name.partition(".")[0]
        dists = owners.get(top)
        if top != "audioreason" and dists and not any(norm(d) in allowed for d in dists):
            blocked.append(top)
            raise ModuleNotFoundError(f"No module named {top!r} (not in requirements.txt)", name=name)
        return None

sys.meta_path.insert(0, OnlyRequirements())
spec = importlib.util.spec_from_file_location("app", "app.py")
app = importlib.util.module_from_spec(spec)
sys.modules["app"] = app
spec.loader.exec_module(app)
import audioreason
demo = app.build_demo()
exec(sys.argv[-1])  # the app's use, after this driver
print("RESULT " + json.dumps({"out": out, "blocked": sorted(set(blocked)), "package": audioreason.__file__},
                             default=str))
"""

USE = {  # each app's own example, as its button sends it
    "anchor_chain": 'out = app.score(app.EXAMPLE_CHAIN, "chain", "exact")',
    "audiospan_rubric": "out = app.score(app.EXAMPLE)",
    "text_prior_decomposition": 'out = app.score(app.EXAMPLE, "separate", 0.25, "as_zero")[-1]',
    "mmar_rubrics": 'out = app.score(app.EXAMPLE, "", "", "", True, 5, app.JUDGES[0])[1]',
    "explorer": "from audioreason.report.item_table import item_table; "
    "paths = app.initial_runs(); views = app._views(paths); "
    "out = {'board': app.leaderboard(views), 'rows': len(item_table(views)), "
    "'detail': app.show(paths, app._choices(paths, app.item_rows(views))[0][1])[1]}",
    "report": "out = app.render(app.initial_results(), 'demo')[2]",
    # the bundled example: accept its first item (the OEQ), then open the anchor chain's second link
    "construction_review": "s = demo.session; first = s.accept(1, 'space'); link = s.show(4); "
    "out = {'number': first[0], 'progress': first[1], 'review': open(s.folder.review_path).read(), "
    "'clip': link[4] is not None, 'edited': sum(1 for p in link[5:8] if p.get('visible'))}",
}


def _run_in_folders(uses: dict) -> dict:
    """{folder: use} -> {folder: the driver's result}, the interpreters run side by side."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    running = {
        folder: subprocess.Popen(
            [sys.executable, "-I", "-c", "import sys; sys.path.insert(0, ''); exec(sys.argv[1])", DRIVER, use],
            cwd=folder,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for folder, use in uses.items()
    }
    results = {}
    for folder, proc in running.items():
        stdout, stderr = proc.communicate(timeout=300)
        assert proc.returncode == 0, f"{folder}: {stderr[-3000:]}"
        results[folder] = json.loads(next(line for line in stdout.splitlines() if line.startswith("RESULT "))[7:])
    return results


def test_light_apps_run_from_their_folders_with_only_their_requirements(built):
    from audioreason.report.scale import fraction

    widget = 5e-5  # the widgets show values rounded to 4 decimals (audioreason.base.scale.rounded)
    folders = {name: Path(built[name]["out"]) for name in LIGHT}
    ran = _run_in_folders({folders[name]: USE[name] for name in LIGHT})
    results = {name: ran[folders[name]] for name in LIGHT}
    for name, got in results.items():
        assert got["package"].startswith(str(folders[name])), got["package"]  # the folder's copy, not the checkout
        print(name, "could not import (not required):", got["blocked"])
    chain = results["anchor_chain"]["out"]
    # Chains c1..c4 score 1, 2/3, 0, 1/3 (AudioSpan Eq. 3): mean 0.5; c4's "b" is unparsed in exact mode.
    assert chain["chain"] == pytest.approx(0.5, abs=widget) and chain["unparsed"] == 1
    rubric = results["audiospan_rubric"]["out"]
    # essential localization: temporal correct, 1; supporting (weight 1/2): semantic 1, temporal 0, mean 1/2:
    # Rubric = (1 + 0.5 * 0.5) / (1 + 0.5) = 5/6.
    assert fraction(rubric["rubric"], "audiospan_rubric", "rubric", rubric) == pytest.approx(5 / 6, abs=widget)
    mmar = results["mmar_rubrics"]["out"]
    # The widget's example: item 1 judged by five recorded replies (5, 4, 4, 3, 2 of 5 met: middle three
    # 0.8, 0.8, 0.6, item 0.7333), item 2 answered wrong (gated, 0): Rubrics 0.3667, Accuracy 0.5.
    assert fraction(mmar["rubrics"], "mmar_rubrics", "rubrics", mmar) == pytest.approx(
        (0.8 + 0.8 + 0.6) / 3 / 2, abs=widget
    )
    assert fraction(mmar["accuracy"], "mmar_rubrics", "accuracy", mmar) == pytest.approx(0.5, abs=widget)
    assert mmar["n_judged"] == 1 and mmar["n_gated"] == 1
    assert results["text_prior_decomposition"]["out"]["decomposition"]["per_model"]
    explorer = results["explorer"]["out"]
    assert len(explorer["board"]) == 1 and explorer["rows"] == 12 and "cascade" in explorer["board"][0][2]
    assert results["report"]["out"].startswith("8 results (accuracy, aria, mmar_rubrics): 4 figures")
    review = results["construction_review"]["out"]
    # Accepting item 1 moved on to item 2 and wrote one line; the chain's second link plays its cited stretch and
    # the edited audio at both beeps of the example's manifest.
    assert (review["number"], review["progress"]) == (2, "**Reviewed 1 of 5**")
    assert json.loads(review["review"])["item_id"] == "example-001/native/P/oeq"
    assert review["clip"] and review["edited"] == 2
