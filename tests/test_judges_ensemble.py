"""Ensembles through the scripted server: several models and several draws of one, aggregated by name,
failed raters excluded and counted, values checked against hand computation."""

import json

import pytest
from judge_server import running_server

from audioreason.judges import EnsembleItem, JudgeEnsemble, OpenAICompatibleJudge, Rater, SamplingParams, VerdictSchema

NAMES = ["Cue", "Source", "Context", "Elimination", "Answer"]
SCHEMA = VerdictSchema.from_criteria([(n, (0, 1)) for n in NAMES])


def reply(scores):
    return {"reply": json.dumps([{"name": n, "score": s, "justification": "."} for n, s in zip(NAMES, scores)])}


SCRIPT = {
    "scenarios": {
        "rater0": [reply([1, 1, 1, 0, 0])],  # 0.6
        "rater1": [reply([1, 1, 1, 1, 1])],  # 1.0
        "rater2": [reply([1, 0, 0, 0, 0])],  # 0.2
        "rater3": [reply([1, 1, 1, 1, 0])],  # 0.8
        "rater4_ok": [reply([1, 1, 0, 0, 0])],  # 0.4
        "rater4_down": [{"status": 500}],
        "drawn": [
            {"by_seed": {"42": reply([1, 1, 1, 0, 0]), "43": reply([1, 0, 0, 0, 0]), "44": {"reply": "no idea"}}}
        ],
    }
}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with running_server(SCRIPT, tmp_path_factory.mktemp("ensemble_server")) as handle:
        yield handle


def judge(server, scenario):
    return OpenAICompatibleJudge(
        scenario, base_url=server.base_url, api_key_env=None, max_attempts=2, backoff_base_s=0.01, timeout_s=5
    )


ITEM = EnsembleItem("mmar-1", [{"role": "system", "content": "Grade."}, {"role": "user", "content": "CoT ..."}], SCHEMA)


def test_mmar_trimmed_mean_over_five_models(server):
    raters = [judge(server, s) for s in ("rater0", "rater1", "rater2", "rater3", "rater4_ok")]
    (result,) = JudgeEnsemble.models(raters, aggregation="trimmed_mean", trim=1).run([ITEM])
    # [0.6, 1.0, 0.2, 0.8, 0.4]: drop 1.0 and 0.2, mean of 0.6, 0.8, 0.4
    assert result.score.value == pytest.approx(0.6)
    assert (result.score.n_valid, result.score.n_failed, result.score.n_used) == (5, 0, 3)
    assert [r.judge for r in result.results] == ["rater0", "rater1", "rater2", "rater3", "rater4_ok"]


def test_failed_rater_is_excluded_counted_and_does_not_stop_the_others(server):
    raters = [judge(server, s) for s in ("rater0", "rater1", "rater2", "rater3", "rater4_down")]
    ensemble = JudgeEnsemble.models(raters, aggregation="trimmed_mean", trim=1)
    (result,) = ensemble.run([ITEM])
    # valid [0.6, 1.0, 0.2, 0.8]: one dropped from each end, mean of 0.6 and 0.8
    assert result.score.value == pytest.approx(0.7)
    assert (result.score.n_valid, result.score.n_failed, result.score.trimmed) == (4, 1, 1)
    assert result.results[4].status == "call_failed" and result.n_failed == 1
    assert ensemble.stats["rater4_down"].call_failed == 1 and ensemble.stats["rater4_down"].server_errors == 2
    assert ensemble.total_stats.ok == 4 and ensemble.total_stats.call_failed == 1


def test_per_criterion_majority_with_a_tie(server):
    raters = [judge(server, s) for s in ("rater0", "rater1", "rater2", "rater3", "rater4_down")]
    (result,) = JudgeEnsemble.models(raters, aggregation="majority").run([ITEM])
    values = {name: (a.value, a.tie) for name, a in result.criteria.items()}
    # votes over the 4 valid raters: Cue 1111, Source 1101, Context 1101, Elimination 0101, Answer 0100
    assert values == {
        "Cue": (1, False),
        "Source": (1, False),
        "Context": (1, False),
        "Elimination": (0, True),
        "Answer": (0, False),
    }
    assert result.criteria["Elimination"].n_failed == 1


def test_draws_of_one_model_with_seed_per_rater_and_mean(server):
    ensemble = JudgeEnsemble.draws(
        judge(server, "drawn"),
        3,
        aggregation="mean",
        max_reasks=1,
        sampling=SamplingParams(temperature=1.0, seed=42, seed_per_rater=True),
    )
    (result,) = ensemble.run([ITEM])
    assert [r.status for r in result.results] == ["ok", "ok", "invalid"]
    assert result.results[2].raw_reply == "no idea" and result.results[2].reasks == 1
    assert result.score.value == pytest.approx((0.6 + 0.2) / 2) and result.score.n_failed == 1
    seeds = sorted(r["params"]["seed"] for r in server.requests() if r["scenario"] == "drawn")
    assert seeds == [42, 43, 44, 44]  # the invalid draw was re-asked with its own seed
    assert all(r["params"]["temperature"] == 1.0 for r in server.requests() if r["scenario"] == "drawn")


def test_rater_identity_must_be_unique(server):
    j = judge(server, "rater0")
    with pytest.raises(ValueError, match="share a judge and an index"):
        JudgeEnsemble([Rater(j, 0), Rater(j, 0)])
    with pytest.raises(ValueError, match="unknown aggregation"):
        JudgeEnsemble([Rater(j, 0)], aggregation="median")
