"""What ships with the package besides its code: the `evaluate` modules (``metrics/<name>/``) and the dataset
cards with their build step (``datasets_scripts/<name>/``), found from any working directory.

Where the folders are: an installed package (a wheel or ``pip install .``) carries copies under
``audioreason/bundled/`` (setup.py copies them in); a source checkout (``pip install -e .``, or running from
the repository) uses the repository's own folders.

Which evaluate modules there are is the scorers' registry's to say (``scorers.registry.NAMES``, a layer above
this one): ``metric_folder`` takes those names from its caller, ``apps.shipped.metric_path``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

DATASETS = ("mmar", "mmau_test_mini", "audiospan")
_PACKAGE = Path(__file__).resolve().parents[1]
# (the installed copy, the source checkout's folder), in that order
_ROOTS = {kind: (_PACKAGE / "bundled" / kind, _PACKAGE.parent / kind) for kind in ("metrics", "datasets_scripts")}


def _folder(kind: str, name: str, names: Sequence[str], marker: str) -> Path:
    if name not in names:
        raise ValueError(f"unknown {'metric' if kind == 'metrics' else 'dataset'} {name!r}: one of {list(names)}")
    for root in _ROOTS[kind]:
        if (root / name / marker).is_file():
            return root / name
    raise FileNotFoundError(
        f"{kind}/{name}/{marker} is neither in the installed package ({_ROOTS[kind][0]}) nor in "
        f"a source checkout ({_ROOTS[kind][1]}); reinstall audioreason"
    )


def metric_folder(name: str, names: Sequence[str]) -> str:
    """The folder of the evaluate module ``name``, one of ``names`` (the shipped modules' names)."""
    return str(_folder("metrics", name, names, f"{name}.py"))


def dataset_card_path(name: str) -> str:
    """The dataset card (README.md) of benchmark ``name`` (mmar, mmau_test_mini, audiospan): the card a
    Hub-ready folder gets; its build step is ``build.py`` beside it."""
    return str(_folder("datasets_scripts", name, DATASETS, "README.md") / "README.md")
