"""The perception question of an anchor chain, built from the manifest (AudioSpan, arXiv:2608.26431,
App. B.3 "Chain construction": "The perception question crosses two axes in a single item, pairing a
correct or off-by-one count of the trace with either its true position or a far-off point ... The
perception options are assembled directly from the recorded ground truth").

Four options, one per cell of {true count, off-by-one count} x {true time, far-off time}:

- the true count n is the number of positions; the off-by-one count is n + 1 for n = 1, else n - 1 or
  n + 1 drawn from the seed;
- the asked occurrence k (1..n, "the Nth instance") is given or drawn from the seed; its true time is the
  start of position k in the EDITED timeline (what the model hears), rounded to whole seconds;
- the far-off time is a whole second at least ``far_fraction`` x the anchored file's duration away from
  every position's start, drawn from the seed;
- the four options are shuffled by the seed; times are written MM:SS or HH:MM:SS (the form the rubric
  and timestamp readers use).

``perception_item`` returns an anchor item in the AudioSpan loader's ``metadata/anchor.jsonl`` form
(``id``, ``recording_id``, ``chain_id``, ``link_position`` 1, ``cognitive_level`` perception, ``format``
MCQ, ``question``, ``choices``, ``answer`` (the gold text), ``answer_index``, ``operation``,
``edit_manifest``), which ``audioreason.scorers.anchor_chain.scorer`` scores and ``audiospan_templates.build_prompt``
writes as a prompt.
"""

from __future__ import annotations

import json
from typing import Any, Mapping, Optional

import numpy as np

from audioreason.text.timestamps import clock

from .anchor_manifest import manifest_json, read_manifest

FAR_FRACTION = 0.15


def trace_phrase(manifest: Mapping[str, Any]) -> str:
    """What the question calls the anchor's trace."""
    op = manifest["operation"]
    if op == "addition":
        return f"the sound of {manifest.get('event_category') or 'the added event'}"
    if op == "deletion":
        return (
            "a stretch where the audio drops to silence"
            if manifest["deletion_mode"] == "silence"
            else "a stretch where the speech is muffled under noise"
        )
    if manifest["attribute"] == "loudness":
        return f"a passage whose volume is suddenly {'raised' if manifest['gain_db'] > 0 else 'lowered'}"
    return f"a passage played {'faster' if manifest['speed_factor'] > 1 else 'slower'} than the rest"


def _times(count: int) -> str:
    return f"{count} {'time' if count == 1 else 'times'}"


def perception_options(
    manifest: Mapping[str, Any], *, seed: int = 0, occurrence: Optional[int] = None, far_fraction: float = FAR_FRACTION
) -> dict[str, Any]:
    """{question, choices, answer_index, occurrence, cells}: ``cells[i]`` = (count, seconds, count_true,
    time_true) behind choice i. Needs a completed manifest (edited positions and output frames)."""
    m = read_manifest(manifest)
    if not m["output"] or m["positions"][0].get("start") is None:
        raise ValueError("the perception options need a completed manifest (the one apply writes)")
    rng = np.random.default_rng(seed)
    starts = [float(p["start"]) for p in m["positions"]]
    n = len(starts)
    k = int(occurrence) if occurrence is not None else int(rng.integers(1, n + 1))
    if not 1 <= k <= n:
        raise ValueError(f"occurrence {k} is not among the {n} positions")
    wrong_count = n + 1 if n == 1 else int(rng.choice([n - 1, n + 1]))
    duration = m["output"]["frames"] / m["source"]["sampling_rate"]
    far = far_fraction * duration
    candidates = [t for t in range(int(duration)) if all(abs(t - s) >= far for s in starts)]
    if not candidates:
        raise ValueError(f"no whole second of the {duration:.1f} s file lies {far:.1f} s from every position")
    true_time, far_time = round(starts[k - 1]), int(rng.choice(candidates))
    cells = [
        (n, true_time, True, True),
        (wrong_count, true_time, False, True),
        (n, far_time, True, False),
        (wrong_count, far_time, False, False),
    ]
    cells = [cells[i] for i in rng.permutation(4)]
    choices = [f"{_times(c)}; occurrence {k} begins at {clock(t)}" for c, t, _, _ in cells]
    question = f"How many times does {trace_phrase(m)} occur in the audio, and when does occurrence {k} begin?"
    answer_index = next(i for i, cell in enumerate(cells) if cell[2] and cell[3])
    return {"question": question, "choices": choices, "answer_index": answer_index, "occurrence": k, "cells": cells}


def perception_item(
    manifest: Mapping[str, Any],
    *,
    chain_id: Optional[str] = None,
    item_id: Optional[str] = None,
    seed: int = 0,
    occurrence: Optional[int] = None,
    far_fraction: float = FAR_FRACTION,
) -> dict[str, Any]:
    """The chain's P item in the loader's anchor.jsonl form (see the module docstring)."""
    m = read_manifest(manifest)
    built = perception_options(m, seed=seed, occurrence=occurrence, far_fraction=far_fraction)
    recording = m.get("recording_id") or ""
    chain = chain_id or recording
    return {
        "id": item_id or f"{chain}/P",
        "recording_id": recording,
        "chain_id": chain,
        "link_position": 1,
        "cognitive_level": "perception",
        "format": "MCQ",
        "question": built["question"],
        "choices": built["choices"],
        "answer": built["choices"][built["answer_index"]],
        "answer_index": built["answer_index"],
        "operation": m["operation"],
        "edit_manifest": json.loads(manifest_json(m)),
    }
