"""What the scorers' input checks share: how an item is named in an error, and the one rule that ids are
distinct (an id keys the judge cache and the per-item rows, and a repeated one would count a question twice).
Each scorer's ``check_items`` keeps its own fields: their records differ by design (an MMAR item, an AudioSpan
open-ended item, an MCQ)."""

from __future__ import annotations

from typing import Any, Mapping


def item_where(n: int, item: Any) -> str:
    """An item in messages: its position, and its id when it has one ("item 3 ('q7')")."""
    has_id = isinstance(item, Mapping) and item.get("id") is not None
    return f"item {n}" + (f" ({item['id']!r})" if has_id else "")


def check_distinct_id(seen: dict[str, int], n: int, item: Mapping[str, Any], where: str) -> None:
    """Refuse item ``n`` when an earlier item had its id (``seen``: id -> position, updated here)."""
    item_id = str(item["id"])
    if item_id in seen:
        raise ValueError(f"{where}: the id is also item {seen[item_id]}'s; ids must be distinct")
    seen[item_id] = n


__all__ = ["check_distinct_id", "item_where"]
