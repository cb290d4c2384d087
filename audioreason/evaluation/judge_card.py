"""The judge card beside every judged score (each set's entry of the mmar_rubrics and audiospan_rubric sections
of results.json, key ``judge_card``): who judged, as the server said, how, and what it cost.

    {"model": the judge asked for, "served_models": {version string the server reported: verdicts},
     "served_not_reported": verdicts whose reply named no model (an in-process judge, or a server that omits it),
     "endpoint", "temperature", "seed", "raters", "structured", "prompt_sha256" (as the protocol block),
     "rater_spread": {"sd", "raters"}, "requests", "reasks", "invalid", "call_failed", "cache_hits",
     "tokens": {"prompt", "completion", "replies_without_usage"}, "cost": {...} | null, "cost_unavailable": why}

The version string is the ``model`` field of each chat-completions reply (OpenAI answers "gpt-4o" with
"gpt-4o-2024-08-06"; a vLLM server with the path it loaded): the name asked for is not proof of the weights.
Verdicts served from the cache count under the version stored with them. The cost is the judge's tokens at
``JudgeOptions.prices`` (``--judge-prices``, the prices file format of ``inference.hosted.load_prices``),
leaving out the replies without token counts (named in the cost's ``incomplete_models``).
"""

from __future__ import annotations

from typing import Any, Mapping, Optional


def judge_card(
    entry: Mapping[str, Any], judge: Mapping[str, Any], prices: Optional[Mapping[str, Any]] = None
) -> dict[str, Any]:
    """The card of one set's judged result ``entry`` (its ``judge_stats`` and ``rater_spread``), from the
    scorer's judge protocol block ``judge`` (``evaluation.protocol.judge_protocol``) and ``prices``."""
    stats = entry.get("judge_stats") or {}
    served = dict(stats.get("served_models") or {})
    not_reported = served.pop("", 0)
    card = {
        key: judge.get(key)
        for key in ("model", "endpoint", "temperature", "seed", "raters", "structured", "prompt_sha256")
    }
    card.update(
        {
            "served_models": served,
            "served_not_reported": not_reported,
            "rater_spread": entry.get("rater_spread"),
            "requests": stats.get("requests", 0),
            "reasks": stats.get("reasks", 0),
            "invalid": stats.get("invalid", 0),
            "call_failed": stats.get("call_failed", 0),
            "cache_hits": stats.get("cache_hits", 0),
            "tokens": {
                "prompt": stats.get("prompt_tokens", 0),
                "completion": stats.get("completion_tokens", 0),
                "replies_without_usage": stats.get("replies_without_usage", 0),
            },
            "cost": None,
            "cost_unavailable": None,
        }
    )
    if prices is None:
        card["cost_unavailable"] = "no prices given (--judge-prices FILE)"
        return card
    from audioreason.inference.hosted import cost_of

    names = judge["model"] if isinstance(judge.get("model"), list) else [judge.get("model")]
    if len(names) != 1:  # the tokens are summed over the ensemble: one price must fit them all
        card["cost_unavailable"] = f"the tokens of {len(names)} judge models are summed: no one price applies"
        return card
    usage = {
        "by_model": {
            names[0]: {
                "prompt_tokens": card["tokens"]["prompt"],
                "completion_tokens": card["tokens"]["completion"],
                "audio_s_sent": 0.0,
                "replies_without_usage": card["tokens"]["replies_without_usage"],
            }
        }
    }
    cost = cost_of(usage, prices)
    if cost["unpriced_models"]:  # not a cost of 0: unknown
        card["cost_unavailable"] = f"the prices file has no entry for {names[0]!r}"
    else:
        card["cost"] = cost
    return card


__all__ = ["judge_card"]
