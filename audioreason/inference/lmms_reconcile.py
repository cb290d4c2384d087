"""An imported lmms-eval log beside the official scorer: lmms-eval's own number, the official rule's number on the
same rows, and how many rows lmms-eval decided by a random guess (``text.lmms_eval``).

lmms-eval scores its *filtered* reply (``filtered_resps``: reasoning tags removed) with a letter parser that guesses
at random when it finds no letter; the official MMAR/MMAU scorers read the *raw* reply (``resps``) with their string
match. The two numbers differ for a reason a reader should see, so an import records both, over the rows that carry
lmms-eval's per-sample verdict, and flags each guessed row in its record's ``details.lmms_eval.random_guess``.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

from ..text.answers import official_string_match
from ..text.lmms_eval import lmms_random_guess

# the parser variant of the lmms-eval task that scores each benchmark (tasks/mmar, tasks/mmau)
VARIANTS = {"mmar": "mmar", "mmau_test_mini": "mmau"}


def reconcile(records: Sequence[dict], items: Mapping[str, Mapping[str, Any]], benchmark: str) -> Optional[dict]:
    """run.json's ``source.lmms_eval`` (None when no row carries lmms-eval's verdict); marks each such record."""
    variant = VARIANTS.get(benchmark)
    rows = [r for r in records if isinstance((r.get("details") or {}).get("lmms_eval"), dict)]
    if variant is None or not rows:
        return None
    official = on_filtered = lmms = 0.0
    guessed, disagree, differs = [], [], 0
    for record in rows:
        item, mine = items[record["id"]], record["details"]["lmms_eval"]
        raw = record.get("output") or ""
        filtered = record["details"].get("filtered_response", raw)
        differs += filtered != raw
        mine["random_guess"] = lmms_random_guess(filtered, item["choices"], variant)
        if mine["random_guess"]:
            guessed.append(record["id"])
        correct = official_string_match(item["answer"], raw, item["choices"])
        official += correct
        on_filtered += official_string_match(item["answer"], filtered, item["choices"])
        lmms += mine["score"]
        if (mine["score"] == 1.0) != correct:
            disagree.append(record["id"])
    n = len(rows)
    return {
        "metric": rows[0]["details"]["lmms_eval"]["metric"],
        "rows": n,
        "lmms_eval_accuracy": lmms / n,
        "official_accuracy": official / n,
        "official_on_filtered_accuracy": on_filtered / n,
        "random_guesses": len(guessed),
        "random_guess_ids": guessed,
        "filtered_differs": differs,
        "verdicts_differ": len(disagree),
        "verdicts_differ_ids": disagree,
        "note": "lmms_eval_accuracy: lmms-eval's own per-sample score (its letter parser on the filtered reply, "
        "a random letter where it finds none: random_guesses); official_accuracy: the official "
        "MMAR/MMAU string match on the raw reply (resps), as the official scorer reads it; "
        "official_on_filtered_accuracy: the same match on lmms-eval's filtered reply (the text the "
        "lmms_filtered extraction rule reads)",
    }


__all__ = ["VARIANTS", "reconcile"]
