"""What ships with the package besides its code: the `evaluate` modules (``metrics/<name>/``) and the dataset
cards with their build step (``datasets_scripts/<name>/``), found from any working directory, and the bare
names ``evaluate.load("aria")`` / ``load_dataset("audiospan", data_dir=...)`` registered for this machine.

Where the folders are: an installed package (a wheel or ``pip install .``) carries copies under
``audioreason/bundled/`` (setup.py copies them in); a source checkout (``pip install -e .``, or running from
the repository) uses the repository's own folders.

Bare names (``register()``):

* evaluate: a bare name that is not a local folder is looked up on the Hub as ``evaluate-metric/<name>``; when
  that fails (offline, or no such module) evaluate falls back to its module cache. ``register()`` writes each
  module into that cache under ``evaluate-metric/<name>``, with the layout evaluate itself writes, so
  ``evaluate.load("aria")`` loads this project's module offline, in any process, until the cache is cleared.
  Online, a Hub module of the same name would come first (none exists for these names today).
* datasets: ``register()`` adds the three builders to datasets' table of packaged builders for the running
  process, so ``load_dataset("mmar", data_dir=RAW)`` builds the raw folder with ``MMARBuilder`` whatever the
  working directory; a raw folder is needed (the audio is not redistributable).
* Hub: a module pushed as the Space ``ORG/aria`` loads with ``evaluate.load("ORG/aria")``, and a Hub-ready
  folder pushed with ``--push-to-hub ORG/audiospan`` with ``load_dataset("ORG/audiospan")``.
"""
from __future__ import annotations

import os
from pathlib import Path

METRICS = ("aria", "mmar_rubrics", "audiospan_rubric", "anchor_chain", "text_prior_decomposition")
DATASETS = ("mmar", "mmau_test_mini", "audiospan")
_PACKAGE = Path(__file__).resolve().parent
# (the installed copy, the source checkout's folder), in that order
_ROOTS = {kind: (_PACKAGE / "bundled" / kind, _PACKAGE.parent / kind) for kind in ("metrics", "datasets_scripts")}


def _folder(kind: str, name: str, names: tuple[str, ...], marker: str) -> Path:
    if name not in names:
        raise ValueError(f"unknown {'metric' if kind == 'metrics' else 'dataset'} {name!r}: one of {list(names)}")
    for root in _ROOTS[kind]:
        if (root / name / marker).is_file():
            return root / name
    raise FileNotFoundError(f"{kind}/{name}/{marker} is neither in the installed package ({_ROOTS[kind][0]}) nor in "
                            f"a source checkout ({_ROOTS[kind][1]}); reinstall audioreason")


def metric_path(name: str) -> str:
    """The folder of the evaluate module ``name`` (``evaluate.load(metric_path("aria"))`` works offline, from
    any working directory). Names: aria, mmar_rubrics, audiospan_rubric, anchor_chain,
    text_prior_decomposition."""
    return str(_folder("metrics", name, METRICS, f"{name}.py"))


def dataset_card_path(name: str) -> str:
    """The dataset card (README.md) of benchmark ``name`` (mmar, mmau_test_mini, audiospan): the card a
    Hub-ready folder gets; its build step is ``build.py`` beside it."""
    return str(_folder("datasets_scripts", name, DATASETS, "README.md") / "README.md")


def register_metrics() -> dict[str, str]:
    """Write every module into evaluate's module cache (``HF_MODULES_CACHE``) as ``evaluate-metric/<name>``;
    returns name -> the file written."""
    from evaluate.loading import _create_importable_file, init_dynamic_modules

    dynamic = init_dynamic_modules()
    written = {}
    for name in METRICS:
        # The same call evaluate makes for a module it fetched from the Hub, so the cached layout is its own.
        module_path, module_hash = _create_importable_file(
            local_path=str(Path(metric_path(name)) / f"{name}.py"), local_imports=[], additional_files=[],
            dynamic_modules_path=dynamic, module_namespace="metrics", name=f"evaluate-metric/{name}",
            download_mode=None)
        target = Path(dynamic, "metrics", f"evaluate-metric--{name}", module_hash, f"{name}.py")
        os.utime(target)  # evaluate takes the most recently modified copy: this one
        written[name] = str(target)
    return written


def register_datasets() -> dict[str, str]:
    """Add the builders to datasets' packaged builders for this process; returns name -> builder module."""
    from datasets.packaged_modules import _PACKAGED_DATASETS_MODULES

    from .data.load import BENCHMARKS

    registered = {}
    for name in DATASETS:
        builder = BENCHMARKS[name].builder
        _PACKAGED_DATASETS_MODULES[name] = (builder.__module__, builder.code_hash())
        registered[name] = builder.__module__
    return registered


def register() -> dict[str, dict[str, str]]:
    """Make the bare names work here: ``evaluate.load("aria")`` (every process on this machine, offline) and
    ``load_dataset("audiospan", data_dir=RAW)`` (this process). Run it again after upgrading audioreason, so
    the cached modules are the installed ones."""
    return {"metrics": register_metrics(), "datasets": register_datasets()}
