"""Every private API of `evaluate` and `datasets` the package uses, in this one module, checked against the
versions it was written for.

Their public APIs leave five needs open; each is met here through a name their authors may rename, remove or
change in any release (``PRIVATE`` lists them, with why each is needed):

- a None in the first row of an evaluate column: evaluate's type check of a column's first value
  (``EvaluationModule._enforce_nested_string_type``) is let through by ``AcceptsLeadingNone``;
- choosing one of an evaluate module's feature sets from its own rule rather than from the first row
  (``_infer_feature_from_batch``, ``_infer_feature_from_example``, the attribute ``selected_feature_format``):
  ``ChoosesFeatures``;
- writing a module into evaluate's module cache as the Hub would (``evaluate.loading._create_importable_file``,
  ``init_dynamic_modules`` and the layout they write): ``cache_metric_module``;
- adding a builder to datasets' packaged builders (``datasets.packaged_modules._PACKAGED_DATASETS_MODULES``):
  ``register_packaged_builder``;
- a ``DatasetInfo`` as a dataset card's YAML holds it (``DatasetInfo._to_yaml_dict``): ``info_yaml``.

Nothing else in the package touches them. Each was read in the versions of ``CHECKED``, setup.py's pins (a
test keeps the two equal). On another version the policy is:

- a name that is gone, or whose parameters changed, fails loudly where it is used: ``PrivateAPIChanged``,
  naming the package, the installed and the checked version and the name, before anything is written (a
  module that can no longer work raises on creation, not on a later silent difference);
- a name still there with its parameters works as before, and the first use of one of that package's names
  in the process warns (``UncheckedVersionWarning``) naming the version it was checked on: what it does may
  still have changed.

``tests/test_hf_internals.py`` asserts every entry against the installed versions, so upgrading a pin fails
there first, naming what changed. Nothing here imports evaluate or datasets until it is used.
"""

from __future__ import annotations

import importlib
import inspect
import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence

# The versions every entry of PRIVATE was read in: setup.py's pins.
CHECKED = {"evaluate": "0.4.6", "datasets": "5.2.0"}


@dataclass(frozen=True)
class Private:
    """One private name: ``module`` and ``name`` in it (``Class.attribute`` for a member), the parameters it
    was checked with (None: not a callable; ``kind`` is then the type it must have), and why it is used."""

    module: str
    name: str
    parameters: Optional[tuple[str, ...]]
    why: str
    kind: Optional[type] = None

    @property
    def package(self) -> str:
        return self.module.split(".")[0]

    @property
    def dotted(self) -> str:
        return f"{self.module}.{self.name}"


PRIVATE: dict[str, Private] = {
    p.name.rpartition(".")[2]: p
    for p in (
        Private(
            "evaluate.module",
            "EvaluationModule._enforce_nested_string_type",
            ("self", "schema", "obj"),
            "the type check of a column's first value, which refuses a None there",
        ),
        Private(
            "evaluate.module",
            "EvaluationModule._infer_feature_from_batch",
            ("self", "batch"),
            "how add_batch picks one of a module's feature sets",
        ),
        Private(
            "evaluate.module",
            "EvaluationModule._infer_feature_from_example",
            ("self", "example"),
            "how add picks one of a module's feature sets",
        ),
        Private(
            "evaluate.module",
            "EvaluationModule.selected_feature_format",
            None,
            "the feature set picked for the rows added so far (an attribute of each module instance)",
        ),
        Private(
            "evaluate.loading",
            "_create_importable_file",
            (
                "local_path",
                "local_imports",
                "additional_files",
                "dynamic_modules_path",
                "module_namespace",
                "name",
                "download_mode",
            ),
            "writes a module into evaluate's module cache as it writes one fetched from the Hub",
        ),
        Private(
            "evaluate.loading",
            "init_dynamic_modules",
            ("name", "hf_modules_cache"),
            "the module cache's folder, created as evaluate creates it",
        ),
        Private(
            "datasets.packaged_modules",
            "_PACKAGED_DATASETS_MODULES",
            None,
            "the packaged builders load_dataset finds by a bare name",
            kind=dict,
        ),
        Private(
            "datasets.info", "DatasetInfo._to_yaml_dict", ("self",), "a DatasetInfo as a dataset card's YAML holds it"
        ),
    )
}


class PrivateAPIChanged(RuntimeError):
    """An installed evaluate or datasets no longer has a private name the package uses, as it was checked."""


class UncheckedVersionWarning(UserWarning):
    """evaluate or datasets is not the version the package's use of its private names was checked on."""


_warned: set[str] = set()


def installed_version(package: str) -> str:
    return str(importlib.import_module(package).__version__)


def changed(entry: Private, what: str) -> PrivateAPIChanged:
    """The error for ``entry``, whose installed form is ``what`` (e.g. "is gone")."""
    package = entry.package
    return PrivateAPIChanged(
        f"{package} {installed_version(package)}: {entry.dotted} {what}. audioreason uses this private name "
        f"({entry.why}) as {package} {CHECKED[package]} has it, the version setup.py pins: install "
        f"{package}=={CHECKED[package]} (audioreason.base.hf_internals lists every private name it uses)"
    )


def warn_unchecked(package: str) -> None:
    """Warn once per process when ``package`` is not the version ``CHECKED`` names."""
    version = installed_version(package)
    if version != CHECKED[package] and package not in _warned:
        _warned.add(package)
        warnings.warn(
            f"{package} {version} is installed; audioreason's use of its private names was checked on "
            f"{package} {CHECKED[package]} (setup.py's pin). Each is still there with the same parameters, "
            f"but their behaviour is unchecked: install {package}=={CHECKED[package]} if results look wrong "
            f"(audioreason.base.hf_internals lists them)",
            UncheckedVersionWarning,
            stacklevel=3,
        )


def require(key: str, on: Any = None) -> Any:
    """The private object ``PRIVATE[key]`` names (an attribute of the object ``on``, when given: an instance
    attribute), checked: PrivateAPIChanged when it is gone or its parameters or type changed;
    UncheckedVersionWarning (once) on a version other than ``CHECKED``'s."""
    entry = PRIVATE[key]
    try:
        if on is not None:
            found = getattr(on, key)
        else:
            found = importlib.import_module(entry.module)
            for part in entry.name.split("."):
                found = getattr(found, part)
    except (ImportError, AttributeError):
        raise changed(entry, "is gone") from None
    if entry.parameters is not None:
        parameters = tuple(inspect.signature(found).parameters) if callable(found) else None
        if parameters != entry.parameters:
            raise changed(entry, f"takes {parameters}, not {entry.parameters}")
    elif entry.kind is not None and not isinstance(found, entry.kind):
        raise changed(entry, f"is a {type(found).__name__}, not a {entry.kind.__name__}")
    warn_unchecked(entry.package)
    return found


class AcceptsLeadingNone:
    """Mixin for an ``evaluate.Metric``: evaluate checks the *first* value of each column for its type and
    rejects a None there (a missing model output), although a None anywhere else is stored as null and
    reaches ``_compute``. A None passes that check wherever it is. Checked on creation."""

    def __init__(self, *args: Any, **kwargs: Any):
        require("_enforce_nested_string_type")
        super().__init__(*args, **kwargs)

    def _enforce_nested_string_type(self, schema, obj):
        if obj is None:
            return None
        return super()._enforce_nested_string_type(schema, obj)


class ChoosesFeatures:
    """Mixin for an ``evaluate.Metric`` with several feature sets: evaluate would pick one from the first row
    added; the module picks with its ``choose_features(predictions)`` (the predictions of the batch, or of the
    one row, being added) instead, and reads the set picked so far with ``chosen_features()``. Checked on
    creation."""

    choose_features: Callable[[Sequence[Any]], Any]  # the module's own rule, required of every subclass

    def __init_subclass__(cls, **kwargs: Any):
        super().__init_subclass__(**kwargs)
        if not callable(getattr(cls, "choose_features", None)):
            raise TypeError(f"{cls.__name__} must define choose_features(predictions)")

    def __init__(self, *args: Any, **kwargs: Any):
        require("_infer_feature_from_batch")
        require("_infer_feature_from_example")
        super().__init__(*args, **kwargs)
        require("selected_feature_format", on=self)

    def chosen_features(self) -> Any:
        """The feature set picked for the rows added so far (None before the first)."""
        return self.selected_feature_format

    def _infer_feature_from_batch(self, batch):
        return self.choose_features(batch["predictions"])

    def _infer_feature_from_example(self, example):
        return self.choose_features([example["predictions"]])


def cache_metric_module(local_file: Path, hub_name: str) -> Path:
    """Write the evaluate module ``local_file`` into evaluate's module cache (``HF_MODULES_CACHE``) as the Hub
    module ``hub_name`` ("evaluate-metric/aria"), with the call and layout evaluate uses for a module it
    fetched; the copy is made the most recent, which evaluate takes. Returns the file written."""
    create, init = require("_create_importable_file"), require("init_dynamic_modules")
    dynamic = init()
    _, module_hash = create(
        local_path=str(local_file),
        local_imports=[],
        additional_files=[],
        dynamic_modules_path=dynamic,
        module_namespace="metrics",
        name=hub_name,
        download_mode=None,
    )
    target = Path(dynamic, "metrics", hub_name.replace("/", "--"), module_hash, f"{hub_name.split('/')[-1]}.py")
    if not target.is_file():
        raise changed(PRIVATE["_create_importable_file"], f"wrote no {target}")
    os.utime(target)  # evaluate takes the most recently modified copy: this one
    return target


def register_packaged_builder(name: str, module: str, code_hash: str) -> None:
    """Make ``load_dataset(name, ...)`` build with the builder of ``module`` in this process, as one of
    datasets' packaged builders."""
    require("_PACKAGED_DATASETS_MODULES")[name] = (module, code_hash)


def info_yaml(info: Any) -> Mapping[str, Any]:
    """A ``datasets.DatasetInfo`` as the ``dataset_info`` entry of a dataset card's YAML holds it."""
    return require("_to_yaml_dict")(info)
