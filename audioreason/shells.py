"""Argument handling shared by the thin `evaluate` shells of the judged scorers (one place, not two)."""
from __future__ import annotations

from typing import Any, Callable, Iterable, MutableMapping, Optional, Sequence, Union

import evaluate

from .jsonl import read_json_lines

# Client options a metric's compute() forwards to OpenAICompatibleJudge.
JUDGE_OPTIONS = ("base_url", "api_key_env", "concurrency", "timeout_s", "max_attempts", "server_error_attempts")


def load_items(items: Union[str, Iterable[dict]]) -> list[dict]:
    """Items given as a list of dicts or as the path of a JSON Lines file."""
    return read_json_lines(items) if isinstance(items, str) else list(items)


def items_for_references(items: Union[str, Iterable[dict]], references: Sequence[Any]) -> list[dict]:
    """The item each reference names by id, in reference order; an error lists ids that are not there."""
    by_id: dict[str, dict] = {}
    for n, it in enumerate(load_items(items)):
        if not isinstance(it, dict) or "id" not in it:
            raise ValueError(f"items[{n}] has no 'id'")
        if str(it["id"]) in by_id:
            raise ValueError(f"items[{n}]: the id {it['id']!r} appears twice in items; ids must be distinct")
        by_id[str(it["id"])] = it
    missing = [r for r in references if str(r) not in by_id]
    if missing:
        raise ValueError(f"{len(missing)} references are not item ids in items, e.g. {missing[:3]}")
    return [by_id[str(r)] for r in references]


def judge_from_options(judge: Any, model: Optional[str], options: MutableMapping[str, Any],
                       make_judge: Optional[Callable[..., Any]] = None) -> Any:
    """The judge passed in, else (when no ensemble is given) ``make_judge(model, **client options)``
    (default: an OpenAICompatibleJudge); the client options are taken out of ``options``. None when an
    ensemble replaces the judge."""
    client_options = {k: options.pop(k) for k in JUDGE_OPTIONS if k in options}
    if judge is not None or options.get("ensemble") is not None:
        return judge
    if not model:
        raise ValueError("a judge model is needed: pass judge=..., ensemble=... or a model name")
    if make_judge is None:
        from .judges import OpenAICompatibleJudge as make_judge
    return make_judge(model, **client_options)



class ShellMetric(evaluate.Metric):
    """``evaluate.Metric`` with one fix for the shells: evaluate checks the *first* value of each column for
    its type and rejects a None there (a missing model output), although a None anywhere else is stored as
    null and reaches ``_compute``, where the scorers count it. A None passes that check wherever it is."""

    def _enforce_nested_string_type(self, schema, obj):
        if obj is None:
            return None
        return super()._enforce_nested_string_type(schema, obj)
