"""The bare names ``evaluate.load("aria")`` / ``load_dataset("audiospan", data_dir=...)`` registered for this
machine, for the modules and builders that ship with the package (``audioreason.base.bundled`` finds their folders;
the modules are the scorers of ``audioreason.scorers.registry``).

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

from pathlib import Path

from audioreason.base.bundled import DATASETS, metric_folder


def metric_path(name: str) -> str:
    """The folder of the evaluate module ``name`` (``evaluate.load(metric_path("aria"))`` works offline, from
    any working directory). Names: the scorers' (``scorers.registry.NAMES``): aria, mmar_rubrics,
    audiospan_rubric, anchor_chain, text_prior_decomposition."""
    from audioreason.scorers.registry import NAMES  # on first use: `import audioreason` stays light

    return metric_folder(name, NAMES)


def register_metrics() -> dict[str, str]:
    """Write every module into evaluate's module cache (``HF_MODULES_CACHE``) as ``evaluate-metric/<name>``;
    returns name -> the file written."""
    from audioreason.base.hf_internals import cache_metric_module
    from audioreason.scorers.registry import NAMES

    return {
        name: str(cache_metric_module(Path(metric_path(name)) / f"{name}.py", f"evaluate-metric/{name}"))
        for name in NAMES
    }


def register_datasets() -> dict[str, str]:
    """Add the builders to datasets' packaged builders for this process; returns name -> builder module."""
    from audioreason.base.hf_internals import register_packaged_builder
    from audioreason.data.load import BUILDERS

    registered = {}
    for name in DATASETS:
        builder = BUILDERS[name]
        register_packaged_builder(name, builder.__module__, builder.code_hash())
        registered[name] = builder.__module__
    return registered


def register() -> dict[str, dict[str, str]]:
    """Make the bare names work here: ``evaluate.load("aria")`` (every process on this machine, offline) and
    ``load_dataset("audiospan", data_dir=RAW)`` (this process). Run it again after upgrading audioreason, so
    the cached modules are the installed ones."""
    return {"metrics": register_metrics(), "datasets": register_datasets()}
