"""The automatic gates applied to one candidate, the same for both pipelines (AudioSpan, arXiv:2608.26431,
§4.5): evidence verification, then the three-level solver, then, when the solver gate flags it, the critic
(its lesson goes into the pipeline's memory bank). The candidate record is updated in place; the caller
decides what a candidate that passes becomes (native: a rubric and two items; anchor: a link of its chain)."""

from __future__ import annotations

from typing import Any, Awaitable, Callable, Mapping, Optional, Sequence

from .critic import critique
from .gates import solver_reason, solver_verdict
from .solver import run_solver
from .verify import verify_evidence

Verify = Callable[[Any, Any, Sequence[str], Any], Awaitable[Mapping[str, Any]]]


async def screen(
    calls: Any,
    caption: Any,
    audio_path: Any,
    candidate: dict[str, Any],
    mcq: Mapping[str, Any],
    *,
    rollouts: int,
    bank: Any,
    solver_caption: Optional[Any] = None,
    verify: Verify = verify_evidence,
) -> Optional[dict[str, Any]]:
    """Run the gates on ``candidate`` whose question is ``mcq`` (as the solver sees it; its ``evidence`` the ids
    it cites). Returns the solver's result when every gate passed, else None with the candidate rejected (gate,
    reason, and the critic's finding after a solver rejection). ``solver_caption``: the caption the full solver
    level reads (default ``caption``)."""
    cid, level = candidate["id"], candidate["level"]
    evidence = list(mcq["evidence"])
    verified = await verify(calls, caption, evidence, audio_path)
    candidate["gates"]["evidence"] = bool(verified["passed"])
    candidate["provenance"]["evidence_check"] = verified.get("records", [])
    if not verified["passed"]:
        candidate.update(
            outcome="rejected",
            rejected_at="evidence",
            reason="a cited evidence record was not confirmed against the audio",
        )
        return None
    result = await run_solver(
        calls, solver_caption if solver_caption is not None else caption, mcq, rollouts=rollouts, item=cid,
        evidence=evidence,
    )  # fmt: skip
    for name in ("blind", "text", "full"):
        candidate["gates"][name] = result[name]
    candidate["provenance"]["solver_failed_calls"] = result["failed"]
    kept, at = solver_verdict(candidate["gates"])
    if kept:
        return result
    candidate["critic"] = await critique(
        calls, mcq, result, pipeline=candidate["pipeline"], level=level, candidate_id=cid, order=candidate["order"],
        bank=bank,
    )  # fmt: skip
    outcomes = candidate["gates"]["full" if at == "unsolvable" else at]
    candidate.update(outcome="rejected", rejected_at=at, reason=solver_reason(at, outcomes))
    return None


__all__ = ["screen"]
