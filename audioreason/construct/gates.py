"""The automatic quality gates of AudioSpan (arXiv:2608.26431) §4.5 / App. B.4, written once, and the gate table
(Table 5) of a construction run.

Solver rule (App. B.4), with exact fractions so that 1 of 3 or 2 of 3 rollouts sit exactly on a threshold:

- blind (stem and options) correct in more than 1/3 of its rollouts: rejected at ``"blind"``;
- else text-only (plus the transcript) correct in more than 2/3: rejected at ``"text"``;
- else the full solver (plus the dense caption) must solve it, correct in more than half of its rollouts
  (a strict majority): otherwise rejected as ``"unsolvable"``.

The levels run in this order and stop at the first rejection, so a later level's outcomes may be ``None``.
A failed solver call counts as a wrong answer (the solver did not show it can answer).

Gate table (per level P/U/R and all candidates):

- evidence pass: of the candidates whose evidence gate ran (``gates.evidence`` not null), the share that passed;
- blind / text-only rejection and unsolvable: shares of the solver inputs (candidates whose blind level ran);
- survival: kept candidates over all candidate records of the level (a candidate dropped at generation counts:
  the generator was asked for it);
- solver pass early / late and survival early / late: the solver inputs (candidates) sorted by ``order`` and
  split in two, the first ``n // 2`` early and the other ``n - n // 2`` late (with an odd count the middle one
  is late), the share that passed the solver (were kept). This is how the memory bank's effect shows within
  a run (App. B.4).

A share that has no inputs is ``None``, never 0; every share comes with the counts behind it.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Iterable, Mapping, Optional, Sequence

from .question_space import LEVEL_LETTER, LEVEL_ORDER

BLIND_MAX = Fraction(1, 3)  # blind correct in more than this share of rollouts: rejected
TEXT_MAX = Fraction(2, 3)  # text-only correct in more than this share: rejected
FULL_MIN = Fraction(1, 2)  # full must be correct in more than this share, else unsolvable
SOLVER_LEVELS = ("blind", "text", "full")
COLUMNS = ("P", "U", "R", "all")


def correct_share(outcomes: Sequence[bool]) -> Fraction:
    """The exact share of rollouts that answered correctly; an empty list is refused (no rollout ran)."""
    if not outcomes:
        raise ValueError("a solver level with no rollouts cannot be judged")
    return Fraction(sum(1 for ok in outcomes if ok is True), len(outcomes))


def level_rejects(level: str, outcomes: Sequence[bool]) -> bool:
    """Whether one solver level's rollouts reject the candidate (the rule above, for that level alone)."""
    share = correct_share(outcomes)
    if level == "blind":
        return share > BLIND_MAX
    if level == "text":
        return share > TEXT_MAX
    if level == "full":
        return not share > FULL_MIN
    raise ValueError(f"unknown solver level {level!r}; expected one of {', '.join(SOLVER_LEVELS)}")


def solver_verdict(gates: Mapping[str, Any]) -> tuple[bool, Optional[str]]:
    """(kept, rejected_at) from a candidate's solver outcomes ``{"blind": [bool], "text": ..., "full": ...}``:
    ``(True, None)``, or ``(False, "blind" | "text" | "unsolvable")``. A level that did not run (None) after
    levels that passed is an error: the verdict needs it."""
    for level in SOLVER_LEVELS:
        outcomes = gates.get(level)
        if outcomes is None:
            raise ValueError(f"the {level} solver level did not run, so the solver verdict cannot be decided")
        if level_rejects(level, outcomes):
            return False, "unsolvable" if level == "full" else level
    return True, None


def new_candidate(
    cid: str, pipeline: str, recording_id: str, level: str, dimension: Any, order: int, provenance: Mapping[str, Any]
) -> dict[str, Any]:
    """A candidate record before its gates run (rejected until a gate says otherwise; every gate null: not run)."""
    return {
        "id": cid,
        "pipeline": pipeline,
        "recording_id": recording_id,
        "level": level,
        "dimension": dimension,
        "order": order,
        "evidence": [],
        "gates": {"evidence": None, "blind": None, "text": None, "full": None},
        "outcome": "rejected",
        "rejected_at": None,
        "reason": "",
        "critic": None,
        "mcq": None,
        "provenance": dict(provenance),
    }


def solver_reason(at: str, outcomes: Sequence[bool]) -> str:
    """Why the solver gate ``at`` (blind, text, unsolvable) rejected, with its rollouts' count."""
    share = f"{sum(1 for ok in outcomes if ok is True)}/{len(outcomes)} rollouts"
    if at == "blind":
        return f"the blind solver was correct in {share} (more than {BLIND_MAX})"
    if at == "text":
        return f"the text-only solver was correct in {share} (more than {TEXT_MAX})"
    return f"the full solver was correct in only {share} (needs more than {FULL_MIN})"


def _share(numerator: int, denominator: int) -> Optional[float]:
    return None if denominator == 0 else float(Fraction(numerator, denominator))


def _halves(rows: list[dict]) -> tuple[list[dict], list[dict]]:
    ordered = sorted(rows, key=lambda c: (c["order"], str(c.get("id", ""))))
    middle = len(ordered) // 2
    return ordered[:middle], ordered[middle:]


def _column(candidates: list[dict]) -> dict:
    checked = [c for c in candidates if c["gates"].get("evidence") is not None]
    passed = sum(1 for c in checked if c["gates"]["evidence"] is True)
    solver_inputs = [c for c in candidates if c["gates"].get("blind") is not None]
    verdicts = [solver_verdict(c["gates"]) for c in solver_inputs]
    rejected = {name: sum(1 for _, at in verdicts if at == name) for name in ("blind", "text", "unsolvable")}
    solver_passed = sum(1 for kept, _ in verdicts if kept)
    kept = sum(1 for c in candidates if c["outcome"] == "kept")
    early, late = _halves(solver_inputs)
    early_c, late_c = _halves(candidates)

    def passes(rows: list[dict]) -> int:
        return sum(1 for c in rows if solver_verdict(c["gates"])[0])

    def kept_in(rows: list[dict]) -> int:
        return sum(1 for c in rows if c["outcome"] == "kept")

    counts = {
        "candidates": len(candidates),
        "kept": kept,
        "evidence_checked": len(checked),
        "evidence_passed": passed,
        "solver_inputs": len(solver_inputs),
        "blind_rejected": rejected["blind"],
        "text_rejected": rejected["text"],
        "unsolvable": rejected["unsolvable"],
        "solver_passed": solver_passed,
        "early_inputs": len(early),
        "early_passed": passes(early),
        "late_inputs": len(late),
        "late_passed": passes(late),
        "early_candidates": len(early_c),
        "early_kept": kept_in(early_c),
        "late_candidates": len(late_c),
        "late_kept": kept_in(late_c),
    }
    n = counts
    shares = {
        "evidence_pass": _share(n["evidence_passed"], n["evidence_checked"]),
        "blind_rejection": _share(n["blind_rejected"], n["solver_inputs"]),
        "text_rejection": _share(n["text_rejected"], n["solver_inputs"]),
        "unsolvable": _share(n["unsolvable"], n["solver_inputs"]),
        "survival": _share(n["kept"], n["candidates"]),
        "solver_pass": _share(n["solver_passed"], n["solver_inputs"]),
        "solver_pass_early": _share(n["early_passed"], n["early_inputs"]),
        "solver_pass_late": _share(n["late_passed"], n["late_inputs"]),
        "survival_early": _share(n["early_kept"], n["early_candidates"]),
        "survival_late": _share(n["late_kept"], n["late_candidates"]),
    }
    return {"shares": shares, "counts": counts}


def gate_table(candidates: Iterable[Mapping[str, Any]], pipeline: Optional[str] = None) -> dict:
    """Table 5 for a run's candidate records: ``{"P" | "U" | "R" | "all": {"shares": {...}, "counts": {...}}}``
    (shares as floats in [0, 1] or None when nothing fed them). ``pipeline`` ("native" / "anchor") keeps only
    that pipeline's candidates; None takes all."""
    rows = [dict(c) for c in candidates if pipeline is None or c.get("pipeline") == pipeline]
    for c in rows:
        if c.get("level") not in LEVEL_LETTER:
            raise ValueError(f"candidate {c.get('id')!r}: unknown level {c.get('level')!r}")
    table = {LEVEL_LETTER[level]: _column([c for c in rows if c["level"] == level]) for level in LEVEL_ORDER}
    table["all"] = _column(rows)
    return table


# The printed rows: (label, share key, numerator count, denominator count), Table 5's order.
ROWS = (
    ("Evidence pass", "evidence_pass", "evidence_passed", "evidence_checked"),
    ("Solver rejection", None, None, None),
    ("  Blind", "blind_rejection", "blind_rejected", "solver_inputs"),
    ("  Text-only", "text_rejection", "text_rejected", "solver_inputs"),
    ("  Unsolvable", "unsolvable", "unsolvable", "solver_inputs"),
    ("Survival", "survival", "kept", "candidates"),
    ("Solver pass, early", "solver_pass_early", "early_passed", "early_inputs"),
    ("Solver pass, late", "solver_pass_late", "late_passed", "late_inputs"),
    ("Survival, early", "survival_early", "early_kept", "early_candidates"),
    ("Survival, late", "survival_late", "late_kept", "late_candidates"),
)


def _cell(column: dict, share: str, num: str, den: str) -> str:
    value = column["shares"][share]
    counts = column["counts"]
    if value is None:
        return "-"
    return f"{100 * value:.0f} ({counts[num]}/{counts[den]})"


def format_gate_table(table: Mapping[str, dict]) -> str:
    """The gate table as printed text in Table 5's layout: percentages per level and overall, each with the
    counts behind it ("67 (2/3)"); "-" where there was nothing to count."""
    header = ["(%)", *("All" if c == "all" else c for c in COLUMNS)]
    body = []
    for label, share, num, den in ROWS:
        if share is None:
            body.append([label] + [""] * len(COLUMNS))
        else:
            body.append([label] + [_cell(table[c], share, num, den) for c in COLUMNS])
    widths = [max(len(row[i]) for row in [header, *body]) for i in range(len(header))]
    lines = []
    for row in [header, *body]:
        first = row[0].ljust(widths[0])
        rest = [cell.rjust(width) for cell, width in zip(row[1:], widths[1:])]
        lines.append("  ".join([first, *rest]).rstrip())
    return "\n".join(lines)
