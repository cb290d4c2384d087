"""The construction pipeline's automatic gates (AudioSpan, arXiv:2608.26431 App. B.4) and its gate table
(Table 5): decisions at the exact thresholds and every share of a small run worked by hand."""

from __future__ import annotations

import pytest

from audioreason.construct.gates import (
    correct_share,
    format_gate_table,
    gate_table,
    level_rejects,
    solver_verdict,
)
from audioreason.construct.question_space import QUESTION_SPACE, dimensions, space_text
from audioreason.text.audiospan_fields import DIMENSIONS

T, F = True, False


def gates(blind, text=None, full=None, evidence=True):
    return {"evidence": evidence, "blind": blind, "text": text, "full": full}


# --- solver_verdict at the boundaries ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "blind, text, full, expected",
    [
        # 3 rollouts. Blind 1/3 is not more than 1/3: passes; 2/3 is more: rejected.
        ([T, F, F], [F, F, F], [T, T, T], (True, None)),
        ([T, T, F], None, None, (False, "blind")),
        # Text-only 2/3 is not more than 2/3: passes; 3/3 rejected.
        ([F, F, F], [T, T, F], [T, T, T], (True, None)),
        ([F, F, F], [T, T, T], None, (False, "text")),
        # Full 2/3 > 1/2 solves it; 1/3 does not.
        ([F, F, F], [F, F, F], [T, T, F], (True, None)),
        ([F, F, F], [F, F, F], [T, F, F], (False, "unsolvable")),
        # Blind is checked first: blind 3/3 rejects even though text-only would too.
        ([T, T, T], [T, T, T], [T, T, T], (False, "blind")),
        # 5 rollouts. Blind 1/5 = 0.2 passes; 2/5 = 0.4 > 1/3 rejects.
        ([T, F, F, F, F], [F] * 5, [T] * 5, (True, None)),
        ([T, T, F, F, F], None, None, (False, "blind")),
        # Text-only 3/5 = 0.6 < 2/3 passes; 4/5 = 0.8 rejects.
        ([F] * 5, [T, T, T, F, F], [T] * 5, (True, None)),
        ([F] * 5, [T, T, T, T, F], None, (False, "text")),
        # Full 3/5 = 0.6 > 1/2 keeps; 2/5 = 0.4 unsolvable.
        ([F] * 5, [F] * 5, [T, T, T, F, F], (True, None)),
        ([F] * 5, [F] * 5, [T, T, F, F, F], (False, "unsolvable")),
        # 4 rollouts: full exactly 2/4 = 1/2 is not a majority; 6 rollouts: blind exactly 2/6 = 1/3 passes.
        ([F] * 4, [F] * 4, [T, T, F, F], (False, "unsolvable")),
        ([T, T, F, F, F, F], [F] * 6, [T] * 6, (True, None)),
    ],
)
def test_solver_verdict_boundaries(blind, text, full, expected):
    assert solver_verdict(gates(blind, text, full)) == expected


def test_exact_shares_and_level_rules():
    from fractions import Fraction

    assert correct_share([T, F, F]) == Fraction(1, 3)
    assert correct_share([T, T, F, F, F, F]) == Fraction(1, 3)
    assert level_rejects("blind", [T, F, F]) is False
    assert level_rejects("text", [T, T, F]) is False
    assert level_rejects("full", [T, F]) is True  # 1/2 is not more than half
    with pytest.raises(ValueError, match="no rollouts"):
        correct_share([])
    with pytest.raises(ValueError, match="unknown solver level"):
        level_rejects("audio", [T])


def test_verdict_needs_the_levels_that_follow_a_pass():
    with pytest.raises(ValueError, match="text solver level did not run"):
        solver_verdict(gates([F, F, F], None, None))
    with pytest.raises(ValueError, match="blind solver level did not run"):
        solver_verdict(gates(None))


# --- gate table over ten hand-made candidates ----------------------------------------------------------------


def cand(cid, level, order, g, outcome="rejected"):
    return {"id": cid, "pipeline": "native", "level": level, "order": order, "gates": g, "outcome": outcome}


NONE_RUN = {"evidence": None, "blind": None, "text": None, "full": None}
CANDIDATES = [
    cand("c1", "perception", 0, {**NONE_RUN, "evidence": False}),  # rejected at evidence
    cand("c2", "perception", 1, gates([F, F, F], [T, T, F], [T, T, F]), "kept"),  # passes every gate
    cand("c3", "perception", 5, gates([T, F, F], [T, T, T])),  # text-only 3/3
    cand("c4", "perception", 8, dict(NONE_RUN)),  # generation failed: no gate ran
    cand("c5", "understanding", 2, gates([T, T, F])),  # blind 2/3
    cand("c6", "understanding", 3, gates([F, F, F], [F, F, F], [T, F, F])),  # unsolvable 1/3
    cand("c7", "understanding", 6, gates([T, F, F, F, F], [T, T, T, F, F], [T, T, T, F, F]), "kept"),  # 5 rollouts
    cand("c8", "understanding", 9, {**NONE_RUN, "evidence": False}),
    cand("c9", "reasoning", 4, gates([T, T, T])),  # blind 3/3
    cand("c10", "reasoning", 7, gates([F, F, F], [F, T, F], [T, T, T])),  # passes the solver, then fails rubric
]


def test_gate_table_per_level_by_hand():
    table = gate_table(CANDIDATES)
    p, u, r, a = (table[k]["shares"] for k in ("P", "U", "R", "all"))
    # P: candidates c1 c2 c3 c4; evidence ran on c1 c2 c3, passed on c2 c3 -> 2/3.
    # Solver inputs c2 c3: blind 0/2, text c3 1/2, unsolvable 0/2, solver pass c2 1/2. Kept c2: 1/4.
    # Early/late solver inputs by order: [c2 (1)] | [c3 (5)] -> 1/1 and 0/1.
    # Early/late candidates: [c1 c2] | [c3 c4] -> kept 1/2 and 0/2.
    assert p == {
        "evidence_pass": 2 / 3,
        "blind_rejection": 0.0,
        "text_rejection": 0.5,
        "unsolvable": 0.0,
        "survival": 0.25,
        "solver_pass": 0.5,
        "solver_pass_early": 1.0,
        "solver_pass_late": 0.0,
        "survival_early": 0.5,
        "survival_late": 0.0,
    }
    # U: evidence ran on all four, c8 failed -> 3/4. Solver inputs c5 c6 c7: blind c5 1/3, text 0/3,
    # unsolvable c6 1/3, pass c7 1/3. Kept c7: 1/4. Early (3 // 2 = 1) [c5] 0/1, late [c6 c7] 1/2.
    # Candidates by order c5 c6 | c7 c8: kept 0/2, 1/2.
    assert u == {
        "evidence_pass": 0.75,
        "blind_rejection": 1 / 3,
        "text_rejection": 0.0,
        "unsolvable": 1 / 3,
        "survival": 0.25,
        "solver_pass": 1 / 3,
        "solver_pass_early": 0.0,
        "solver_pass_late": 0.5,
        "survival_early": 0.0,
        "survival_late": 0.5,
    }
    # R: evidence 2/2; solver inputs c9 c10: blind c9 1/2, text 0, unsolvable 0, pass c10 1/2; kept none: 0/2
    # (a real zero, not None). Early [c9] 0/1, late [c10] 1/1; survival early [c9] 0/1, late [c10] 0/1.
    assert r == {
        "evidence_pass": 1.0,
        "blind_rejection": 0.5,
        "text_rejection": 0.0,
        "unsolvable": 0.0,
        "survival": 0.0,
        "solver_pass": 0.5,
        "solver_pass_early": 0.0,
        "solver_pass_late": 1.0,
        "survival_early": 0.0,
        "survival_late": 0.0,
    }
    # All: evidence ran on 9 (not c4), passed 7 -> 7/9. Solver inputs c2 c3 c5 c6 c7 c9 c10 = 7: blind c5 c9 2/7,
    # text c3 1/7, unsolvable c6 1/7, pass c2 c7 c10 3/7. Kept c2 c7: 2/10.
    # Solver inputs by order: c2(1) c5(2) c6(3) | c9(4) c3(5) c7(6) c10(7): early 1/3, late 2/4.
    # Candidates by order 0-4 (c1 c2 c5 c6 c9) | 5-9 (c3 c7 c10 c4 c8): kept c2 1/5, c7 1/5.
    assert a == {
        "evidence_pass": 7 / 9,
        "blind_rejection": 2 / 7,
        "text_rejection": 1 / 7,
        "unsolvable": 1 / 7,
        "survival": 0.2,
        "solver_pass": 3 / 7,
        "solver_pass_early": 1 / 3,
        "solver_pass_late": 0.5,
        "survival_early": 0.2,
        "survival_late": 0.2,
    }
    assert table["all"]["counts"] == {
        "candidates": 10,
        "kept": 2,
        "evidence_checked": 9,
        "evidence_passed": 7,
        "solver_inputs": 7,
        "blind_rejected": 2,
        "text_rejected": 1,
        "unsolvable": 1,
        "solver_passed": 3,
        "early_inputs": 3,
        "early_passed": 1,
        "late_inputs": 4,
        "late_passed": 2,
        "early_candidates": 5,
        "early_kept": 1,
        "late_candidates": 5,
        "late_kept": 1,
    }


def test_empty_level_is_none_never_zero():
    only_p = [c for c in CANDIDATES if c["level"] == "perception"]
    table = gate_table(only_p)
    assert all(value is None for value in table["U"]["shares"].values())
    assert all(value is None for value in table["R"]["shares"].values())
    assert table["U"]["counts"]["candidates"] == 0
    # c4 alone: a candidate whose generation failed feeds survival (0/1) but no gate share.
    lone = gate_table([CANDIDATES[3]])["P"]["shares"]
    assert lone["survival"] == 0.0 and lone["survival_late"] == 0.0 and lone["survival_early"] is None
    assert lone["evidence_pass"] is None and lone["blind_rejection"] is None and lone["solver_pass_late"] is None


def test_pipeline_filter_and_unknown_level():
    anchor = {**cand("a1", "perception", 10, dict(NONE_RUN), "kept"), "pipeline": "anchor"}
    assert gate_table(CANDIDATES + [anchor], pipeline="native")["P"]["counts"]["candidates"] == 4
    assert gate_table(CANDIDATES + [anchor])["P"]["counts"]["candidates"] == 5
    with pytest.raises(ValueError, match="unknown level"):
        gate_table([cand("x", "hearing", 0, dict(NONE_RUN))])


def test_format_gate_table_layout():
    text = format_gate_table(gate_table(CANDIDATES))
    lines = text.splitlines()
    assert lines[0].split() == ["(%)", "P", "U", "R", "All"]
    assert lines[1].split() == ["Evidence", "pass", "67", "(2/3)", "75", "(3/4)", "100", "(2/2)", "78", "(7/9)"]
    assert lines[2].strip() == "Solver rejection"
    assert lines[3].split() == ["Blind", "0", "(0/2)", "33", "(1/3)", "50", "(1/2)", "29", "(2/7)"]
    assert lines[5].split() == ["Unsolvable", "0", "(0/2)", "33", "(1/3)", "0", "(0/2)", "14", "(1/7)"]
    assert lines[6].split() == ["Survival", "25", "(1/4)", "25", "(1/4)", "0", "(0/2)", "20", "(2/10)"]
    empty = format_gate_table(gate_table([CANDIDATES[0]])).splitlines()
    assert empty[3].split() == ["Blind", "-", "-", "-", "-"]


def test_question_space_is_table_4():
    assert tuple(d for level in QUESTION_SPACE for d in dimensions(level)) == DIMENSIONS
    assert sum(len(v) for level in QUESTION_SPACE.values() for v in level.values()) == 62  # 9+6+6 + 10+8+8 + 6+4+5
    assert QUESTION_SPACE["reasoning"]["logical"][-1] == "Audio atmosphere vs. stated content divergence"
    assert "- counting: Linguistic counting; Speaker counting;" in space_text("perception")
    with pytest.raises(ValueError, match="unknown cognitive level"):
        dimensions("hearing")
