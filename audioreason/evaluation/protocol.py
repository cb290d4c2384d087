"""The scoring side of the protocol fingerprint (``audioreason.base.protocol``) and the protocol of a scored run,
as `audioreason score` writes it into results.json::

    "protocol": {"run": run.json's block | null, "scoring": {...}, "run_hash", "scoring_hash",
                 "hash": the short hash of {"run", "scoring"} | null, "unknown": why | absent}

The scoring block: the scorers that ran, the items scored ({n, sha256} of their ids), the extraction option
and each template's rules (when accuracy or the anchor chain ran), the ARIA backbones (when ARIA or the
perturbations ran), the perturbation checks and seed, the scorer options, each judged scorer's judge
(``judge_protocol``) and the audioreason version. A run folder whose run.json has no block (run before
protocols were recorded) gets ``hash`` null and ``unknown``: "protocol unknown", never a guess.

The leaderboard's marks (``mark_rows``): within one benchmark, every row whose protocol is not the
benchmark's most common one names the fields that differ; a row without a protocol says "protocol unknown".
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Mapping, MutableMapping, Optional, Sequence

from audioreason.base.protocol import UNKNOWN, differing_fields, ids_digest, protocol_hash, protocol_of

# ---------------------------------------------------------------------------------------------
# The judge
# ---------------------------------------------------------------------------------------------


def endpoint_kind(judge: Any) -> str:
    """Where a judge runs, without its address: "openai" (the OpenAI API), "openai-compatible (local server)",
    "openai-compatible (remote server)", "in-process (constrained)" / "in-process" (a local model), or the
    class name of a judge given from Python."""
    from audioreason.judges import OpenAICompatibleJudge
    from audioreason.judges.base import judge_metadata
    from audioreason.judges.client import is_local_url

    inner = getattr(judge, "_judge", judge)  # score.ProgressJudge wraps the judge it counts
    if isinstance(inner, OpenAICompatibleJudge):
        if inner.base_url is None:
            return "openai"
        return f"openai-compatible ({'local' if is_local_url(inner.base_url) else 'remote'} server)"
    metadata = judge_metadata(inner)
    if metadata.get("offline"):
        return "in-process (constrained)" if metadata.get("constraint") else "in-process"
    return type(inner).__name__


def prompt_sha256(scorer_name: str, scorer: Any) -> str:
    """The sha256 of the wording a judged scorer sends (its declaration's ``judged.prompt_sha256``: its prompt
    texts; the official scorer's file hash when MMAR-Rubrics reads the official wording)."""
    from audioreason.scorers.registry import declaration

    return declaration(scorer_name).judged.prompt_sha256(scorer)


def _one(values: Sequence[Any]) -> Any:
    """The value every rater shares, else the list in rater order."""
    return values[0] if len(set(map(repr, values))) == 1 else list(values)


def judge_protocol(scorer_name: str, scorer: Any) -> dict[str, Any]:
    """A judged scorer's judge as its protocol records it: model, endpoint kind, temperature, seed (and the
    other sampling fields sent), raters, aggregation, prompt hash, structured outputs, and for MMAR-Rubrics
    the rubric protocol and compat."""
    ensemble = scorer.ensemble
    judges = [r.judge for r in ensemble.raters]
    params = ensemble.rater_params()
    sent = sorted({k for p in params for k in p if k != "response_format"})
    block = {
        "model": _one([j.name for j in judges]),
        "endpoint": _one([endpoint_kind(j) for j in judges]),
        "temperature": _one([p.get("temperature") for p in params]),
        "seed": _one([p.get("seed") for p in params]),
        "sampling": {k: _one([p.get(k) for p in params]) for k in sent if k not in ("temperature", "seed")},
        "raters": len(judges),
        "aggregation": ensemble.aggregation,
        "prompt_sha256": prompt_sha256(scorer_name, scorer),
        "structured": any(getattr(j, "structured_outputs", False) is True for j in judges),
    }
    from audioreason.scorers.registry import declaration

    block.update(declaration(scorer_name).judged.protocol(scorer))  # MMAR-Rubrics: its rubric protocol, compat
    return block


# ---------------------------------------------------------------------------------------------
# The scoring side and the scored run
# ---------------------------------------------------------------------------------------------


def scoring_protocol(
    run: Any, options: Any, sections: Mapping[str, Any], judges: Mapping[str, Mapping[str, Any]]
) -> dict[str, Any]:
    """The scoring block of ``score_run`` (``run``: the RunFolder, ``options``: the ScoreOptions,
    ``judges``: ``judge_protocol`` per judged scorer that ran)."""
    from audioreason.backends import resolve_backbones
    from audioreason.evaluation.sections import extraction_rules
    from audioreason.scorers.registry import ACCURACY, owner
    from audioreason.version import __version__

    ran = [name for name, section in sections.items() if section.status == "ok"]
    templates = sorted({s.template for s in run.sets})
    depends = {field for name in ran if owner(name) is not None for field in owner(name).protocol}
    extracted = ACCURACY in ran or "extraction" in depends
    return {
        "scorers": ran,
        "items": ids_digest({r["id"] for s in run.sets for r in s.records}),
        "extraction": {
            "option": options.extraction,
            "rules": {t: extraction_rules(t, options.extraction) for t in templates},
        }
        if extracted
        else None,
        "backbones": resolve_backbones(options.aria_backbones) if "backbones" in depends else None,
        "perturbations": {"checks": list(options.perturbations), "seed": options.seed}
        if "perturbations" in ran
        else None,
        "scorer_options": options.to_dict()["scorer_options"],
        "judges": {name: dict(judges[name]) for name in ran if name in judges},
        "audioreason": __version__,
    }


def scored_protocol(run_file: Mapping[str, Any], scoring: Mapping[str, Any]) -> dict[str, Any]:
    """results.json's ``protocol``: the run's block, the scoring block and their hashes (the module docstring)."""
    run_block = run_file.get("protocol")
    out: dict[str, Any] = {
        "run": None,
        "scoring": dict(scoring),
        "run_hash": None,
        "scoring_hash": protocol_hash(scoring),
        "hash": None,
    }
    if not isinstance(run_block, Mapping):
        out["unknown"] = (
            f"{UNKNOWN}: the run's run.json records no protocol block (made before audioreason "
            "recorded protocols: run or import it again to get one)"
        )
        return out
    out.update(
        run=dict(run_block),
        run_hash=protocol_hash(run_block),
        hash=protocol_hash({"run": run_block, "scoring": scoring}),
    )
    return out


# ---------------------------------------------------------------------------------------------
# Rows side by side (the leaderboard)
# ---------------------------------------------------------------------------------------------


def collect_protocol(results: Mapping[str, Any], into: Optional[MutableMapping[str, Any]]) -> Optional[str]:
    """A results.json's protocol hash (None: unknown), its block kept in ``into`` by hash."""
    protocol = protocol_of(results)
    if protocol is None:
        return None
    if into is not None:
        into[protocol["hash"]] = {"run": protocol.get("run"), "scoring": protocol.get("scoring")}
    return protocol["hash"]


def mark_rows(rows: Sequence[MutableMapping[str, Any]], protocols: Mapping[str, Mapping[str, Any]]) -> None:
    """Set each row's ``protocol_differs``: [] when its protocol is its benchmark's most common one (ties: the
    first row's), the dotted fields that differ from it otherwise, None when the row's protocol is unknown."""
    for benchmark in dict.fromkeys(r["benchmark"] for r in rows):
        members = [r for r in rows if r["benchmark"] == benchmark]
        known = [r["protocol"] for r in members if r.get("protocol") is not None]
        counts = Counter(known)
        reference = max(dict.fromkeys(known), key=lambda h: counts[h]) if known else None
        for row in members:
            if row.get("protocol") is None:
                row["protocol_differs"] = None
            else:
                row["protocol_differs"] = differing_fields(protocols[reference], protocols[row["protocol"]])


def protocol_cell(row: Mapping[str, Any]) -> str:
    """The leaderboard's protocol cell: the hash, marked with the fields that differ; or "protocol unknown"."""
    if row.get("protocol") is None:
        return UNKNOWN
    differs = row.get("protocol_differs") or []
    return row["protocol"] + (f" (differs: {', '.join(differs)})" if differs else "")


__all__ = [
    "collect_protocol",
    "endpoint_kind",
    "judge_protocol",
    "mark_rows",
    "prompt_sha256",
    "protocol_cell",
    "scored_protocol",
    "scoring_protocol",
]
