"""The common schema of every benchmark (``CORE_FEATURES``, extended per benchmark) and the audio column's
plain storage, for machines without torchcodec.

    id, audio, audio_path, question, choices, answer, answer_index, <benchmark fields...>

``audio_path`` is the audio file's path relative to the raw folder, as the metadata gives it (kept
because MMAR's file names differ from its ids for 46 items). ``answer_index`` is the first index of
``choices`` whose text equals ``answer`` exactly, or -1 when there is none (an open-ended item, or an
answer not among the choices, which the validation report lists).

Audio: with torchcodec usable the column is ``Audio()``; otherwise the builders store it as
``Audio(decode=False)`` (``{"path", "bytes"}``), which ``audioreason.audio.load_audio`` (re-exported as
``decode_audio``) reads with soundfile.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

import datasets
from datasets import Audio, Features, List, Value

TEST_SPLIT = "test"

CORE_FEATURES: dict[str, Any] = {
    "id": Value("string"),
    "audio": Audio(),
    "audio_path": Value("string"),
    "question": Value("string"),
    "choices": List(Value("string")),
    "answer": Value("string"),
    "answer_index": Value("int32"),
}

# The Arrow layout of an Audio column; used to build without torchcodec (see with_audio_storage).
AUDIO_STORAGE = {"bytes": Value("binary"), "path": Value("string")}


def benchmark_features(extra: Mapping[str, Any]) -> Features:
    """The common core followed by a benchmark's own fields, in that order."""
    clash = set(extra) & set(CORE_FEATURES)
    if clash:
        raise ValueError(f"benchmark fields {sorted(clash)} would shadow the common schema")
    return Features({**CORE_FEATURES, **extra})


def with_audio_storage(features: Features) -> Features:
    """The same features with each Audio column as its plain {bytes, path} struct.

    ``Audio.encode_example`` imports torchcodec's encoder even for ``decode=False``, so a machine
    without working torchcodec builds this struct and casts it to ``Audio(decode=False)`` afterwards
    (the cast is pure Arrow).
    """
    return Features({k: (dict(AUDIO_STORAGE) if isinstance(v, Audio) else v) for k, v in features.items()})


def audio_paths(dataset: datasets.Dataset, column: str = "audio") -> list[Optional[str]]:
    """The local file path behind each item's audio (None for an item built without audio).

    Raises for embedded audio (a dataset loaded from parquet shards): use ``decode_audio`` there.
    """
    values = dataset.cast_column(column, Audio(decode=False))[column]
    out = []
    for value in values:
        if value is None:
            out.append(None)
        elif value.get("bytes") is not None:
            raise ValueError("this dataset embeds its audio bytes (no local files); decode with decode_audio()")
        else:
            out.append(value["path"])
    return out
