"""audioreason: scorers, loaders and runners for evaluating reasoning in audio-language models.

``metric_path(name)`` / ``dataset_card_path(name)``: the shipped evaluate modules and dataset cards, from any
working directory; ``register()``: the bare names ``evaluate.load("aria")`` and ``load_dataset("audiospan",
data_dir=...)`` (see ``audioreason.apps.shipped``; the folders: ``audioreason.base.bundled``)."""

from audioreason.apps.shipped import metric_path, register
from audioreason.base.bundled import dataset_card_path

from .version import __version__

__all__ = ["__version__", "dataset_card_path", "metric_path", "register"]
