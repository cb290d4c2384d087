"""The protocol fingerprint of a number: a JSON block saying what produced it (benchmark and its metadata file,
items, templates, extraction, decoding, conditions, judge, backbones, version) and its short hash.

The block is written by the runner and by imports into run.json (the run side, ``inference.protocol``) and by
`audioreason score` into results.json (the scoring side and their combination, ``evaluation.protocol``). The
model under test is never part of a block: rows of a leaderboard that differ only in the model share a hash.

The hash is the sha256 of the block's canonical JSON (keys sorted, no spaces, UTF-8), its first 12 hex
digits: anyone can recompute it with ``hashlib`` and ``json.dumps(block, sort_keys=True,
separators=(",", ":"), ensure_ascii=False)``.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Mapping, Optional, Sequence

HASH_DIGITS = 12
UNKNOWN = "protocol unknown"  # what a reader is told about a number scored before protocols were recorded


def canonical_json(block: Any) -> str:
    return json.dumps(block, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def protocol_hash(block: Any) -> str:
    """The short hash of a protocol block (see the module docstring)."""
    return hashlib.sha256(canonical_json(block).encode("utf-8")).hexdigest()[:HASH_DIGITS]


def text_sha256(text: str) -> str:
    """The full sha256 of a text (a prompt, a list of item ids joined by newlines)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def ids_digest(ids: Sequence[Any]) -> dict[str, Any]:
    """The items a number covers, as their count and the sha256 of their ids, sorted, one per line."""
    ordered = sorted(str(i) for i in ids)
    return {"n": len(ordered), "sha256": text_sha256("\n".join(ordered))}


def differing_fields(a: Any, b: Any, prefix: str = "") -> list[str]:
    """The dotted paths at which two blocks differ (a list differs as a whole; a key only one has differs)."""
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        out: list[str] = []
        for key in sorted(set(a) | set(b), key=str):
            path = f"{prefix}.{key}" if prefix else str(key)
            out += differing_fields(a.get(key), b.get(key), path) if key in a and key in b else [path]
        return out
    return [] if a == b else [prefix or "(the whole block)"]


def protocol_of(results: Mapping[str, Any]) -> Optional[dict[str, Any]]:
    """The protocol a results.json records (``{"run", "scoring", "hash"}``), or None where it records none or
    only part of one (scored before protocols were recorded, or a run file without its block)."""
    protocol = results.get("protocol")
    if not isinstance(protocol, Mapping) or not isinstance(protocol.get("hash"), str):
        return None
    return dict(protocol)


def protocol_difference(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    """How two results.json's protocols compare: {"same": bool | None, "differs": [dotted fields], "a", "b"
    (their hashes or None), "unknown": [which of "a", "b" has none]}. ``same`` is None when either is
    unknown: nothing is guessed."""
    pa, pb = protocol_of(a), protocol_of(b)
    unknown = [name for name, p in (("a", pa), ("b", pb)) if p is None]
    out: dict[str, Any] = {"a": pa and pa["hash"], "b": pb and pb["hash"], "unknown": unknown}
    if unknown:
        return {**out, "same": None, "differs": []}
    fields = differing_fields({k: pa.get(k) for k in ("run", "scoring")}, {k: pb.get(k) for k in ("run", "scoring")})
    return {**out, "same": not fields, "differs": fields}


__all__ = [
    "HASH_DIGITS",
    "UNKNOWN",
    "canonical_json",
    "differing_fields",
    "ids_digest",
    "protocol_difference",
    "protocol_hash",
    "protocol_of",
    "text_sha256",
]
