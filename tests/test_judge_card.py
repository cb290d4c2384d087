"""The judge card beside each judged score, from a scripted judge server in its own process (the version
string each reply reports, a re-ask, tokens and their cost, a reply naming no model), and the judge-swap
comparison `audioreason compare RUN --judges A,B`: Cohen's kappa and Krippendorff's alpha per item and per
criterion, by hand and against sklearn and the krippendorff package; refusals as one-line usage errors."""

import json

import pytest
from judge_server import running_server
from sklearn.metrics import cohen_kappa_score
from test_score_results import ITEMS, build_hand_run, verdict

from audioreason.analysis import uncertainty as U
from audioreason.analysis.agreement import cohens_kappa
from audioreason.cli import main
from audioreason.evaluation.score import JudgeOptions, ScoreOptions, score_run

X0, X1 = verdict(ITEMS[0], [1, 1, 0, 0, 0]), verdict(ITEMS[1], [1, 1, 1, 1, 0])  # judge-x: 0.4 and 0.8
Y0 = verdict(ITEMS[0], [1, 1, 1, 0, 0])  # judge-y: 0.6 and 0.8
SCRIPT = {
    "scenarios": {
        # judge-x: item 0's first reply is not a verdict (a re-ask follows); every reply reports its version
        "judge-x": [
            {
                "by_text": {"natural environment": {"reply": "OK", "usage": [100, 5], "served_model": "judge-x-v1"}},
                "default": {"reply": X1, "usage": [100, 20], "served_model": "judge-x-v1"},
            },
            {"reply": X0, "usage": [120, 20], "served_model": "judge-x-v1"},
        ],
        # judge-y: its replies name no model
        "judge-y": [
            {
                "by_text": {"natural environment": {"reply": Y0, "usage": [90, 10], "served_model": None}},
                "default": {"reply": X1, "usage": [90, 10], "served_model": None},
            }
        ],
    }
}
ONE_RATER = {"mmar_rubrics": {"raters": 1}}


def score(run_dir, out, name, server, prices=None, scorer_options=ONE_RATER):
    return score_run(
        run_dir,
        ScoreOptions(
            scorers=["mmar_rubrics"],
            progress=False,
            out=str(out),
            scorer_options=scorer_options,
            judge=JudgeOptions(model=name, base_url=server.base_url, api_key_env="CARD_TEST_KEY", prices=prices),
        ),
    )


@pytest.fixture(scope="module")
def judged(tmp_path_factory):
    root = tmp_path_factory.mktemp("judge_card")
    run_dir = build_hand_run(root)
    run_file = json.loads((run_dir / "run.json").read_text())
    (run_dir / "run.json").write_text(json.dumps({**run_file, "protocol": {"benchmark": {"name": "mmar"}}}))
    prices = root / "prices.json"
    prices.write_text(
        json.dumps(
            {"currency": "USD", "models": {"judge-x": {"prompt_per_million": 1000.0, "completion_per_million": 2000.0}}}
        )
    )
    with running_server(SCRIPT, root / "server") as server:
        results = {name: score(run_dir, root / name, name, server, str(prices)) for name in ("judge-x", "judge-y")}
        yield root, run_dir, server, results


def by_set(results):
    return {e["condition"]: e for e in results["scorers"]["mmar_rubrics"]["results"]}


def test_the_judge_card_of_each_set(judged):
    root, run_dir, server, results = judged
    cards = {c: e["judge_card"] for c, e in by_set(results["judge-x"]).items()}
    # full: item 0 alone passes the gate (one re-ask: 100 + 120 prompt, 5 + 20 completion tokens);
    # none: items 0 and 1 (item 1 answered at once: 100 + 20).
    assert cards["full"] == {
        "model": "judge-x",
        "endpoint": "openai-compatible (local server)",
        "temperature": 0.0,
        "seed": 42,
        "raters": 1,
        "structured": False,
        "prompt_sha256": results["judge-x"]["protocol"]["scoring"]["judges"]["mmar_rubrics"]["prompt_sha256"],
        "served_models": {"judge-x-v1": 1},
        "served_not_reported": 0,
        "rater_spread": {"sd": None, "raters": 1},
        "requests": 1,
        "reasks": 1,
        "invalid": 0,
        "call_failed": 0,
        "cache_hits": 0,
        "tokens": {"prompt": 220, "completion": 25, "replies_without_usage": 0},
        "cost": {
            "currency": "USD",
            "total": pytest.approx(220 * 1e-3 + 25 * 2e-3),
            "by_model": {"judge-x": pytest.approx(0.27)},
            "unpriced_models": [],
            "incomplete_models": {},
            "prices": str(root / "prices.json"),
        },
        "cost_unavailable": None,
    }
    none = cards["none"]
    assert (none["requests"], none["reasks"], none["served_models"]) == (2, 1, {"judge-x-v1": 2})
    assert none["tokens"] == {"prompt": 320, "completion": 45, "replies_without_usage": 0}
    assert none["cost"]["total"] == pytest.approx(320 * 1e-3 + 45 * 2e-3)
    assert len([r for r in server.requests() if r["scenario"] == "judge-x"]) == 2 + 3  # the calls counted
    y = by_set(results["judge-y"])["none"]["judge_card"]
    assert y["served_models"] == {} and y["served_not_reported"] == 2  # the replies named no model
    assert y["cost"] is None and y["cost_unavailable"] == "the prices file has no entry for 'judge-y'"


def test_the_report_shows_each_sets_judge_card(judged, tmp_path):
    from audioreason.report import build_report

    root, _, _, _ = judged
    build_report([root / "judge-x", root / "judge-y"], tmp_path / "report.html")
    md = (tmp_path / "report.md").read_text()
    card = md[md.index("Judge card: mmar_rubrics") :]
    lines = [line for line in card.splitlines() if line.startswith("|")]
    # the header, the rule, then one row per judged set; judge-x's full set as the card above gives it
    full_x = next(line for line in lines if "judge-x" in line and "full" in line)
    cells = [c.strip() for c in full_x.strip("|").split("|")]
    assert cells[1:] == [
        "judge-x",
        "judge-x-v1 x1",
        "openai-compatible (local server)",
        "0.0",
        "42",
        "1; rater sd n/a (1 rater)",
        "1",
        "1",
        "0",
        "0",
        "220 / 25",
        "0.27 USD",
    ]
    none_y = next(line for line in lines if "judge-y" in line and "none" in line)
    assert "not reported x2" in none_y and "n/a (the prices file has no entry for 'judge-y')" in none_y


def test_kappa_by_hand_and_against_sklearn():
    a, b = [0.4, 0.4, 0.8], [0.6, 0.6, 0.8]
    # p_o = 1/3; p_e = P_a(0.8) P_b(0.8) = 1/9; kappa = (1/3 - 1/9) / (1 - 1/9) = 1/4
    assert cohens_kappa(a, b).value == pytest.approx(0.25) == cohen_kappa_score(list(map(str, a)), list(map(str, b)))
    assert cohens_kappa([1, 1], [1, 1]).unavailable.startswith("both raters give all 2 units the label 1")


def alpha_interval_by_hand(pairs):
    """Krippendorff's interval alpha for two coders, no missing values: 1 - D_o / D_e."""
    values = [v for p in pairs for v in p]
    n = len(values)
    observed = sum(2 * (x - y) ** 2 for x, y in pairs) / n
    expected = sum((u - v) ** 2 for i, u in enumerate(values) for j, v in enumerate(values) if i != j) / (n * (n - 1))
    return 1 - observed / expected


def test_the_judge_swap_agreement_by_hand(judged, tmp_path, capsys):
    import krippendorff

    root, run_dir, server, results = judged
    out = tmp_path / "swap.json"
    assert (
        main(
            [
                "compare",
                str(run_dir),
                "--judges",
                f"{root / 'judge-x'},{root / 'judge-y'}",
                "--out",
                str(out),
                "--resamples",
                "200",
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    swap = json.loads(out.read_text())["scorers"]["mmar_rubrics"]
    # items (full/0, none/0, none/1): judge-x 0.4, 0.4, 0.8; judge-y 0.6, 0.6, 0.8
    items = swap["items"]
    pairs = [(0.4, 0.6), (0.4, 0.6), (0.8, 0.8)]
    assert (items["n_outputs"], items["n_pairs"]) == (3, 3)
    assert items["cohens_kappa"]["value"] == pytest.approx(0.25)
    alpha = alpha_interval_by_hand(pairs)
    assert items["krippendorff_alpha"]["value"] == pytest.approx(alpha)
    assert alpha == pytest.approx(
        krippendorff.alpha(reliability_data=[[0.4, 0.4, 0.8], [0.6, 0.6, 0.8]], level_of_measurement="interval")
    )
    # criteria: item 0's third criterion 0 vs 1, the other 14 pairs agree; 8 of 15 ones from x, 10 from y
    criteria = swap["criteria"]
    assert (criteria["n_outputs"], criteria["n_pairs"]) == (3, 15)
    x = [1, 1, 0, 0, 0] * 2 + [1, 1, 1, 1, 0]
    y = [1, 1, 1, 0, 0] * 2 + [1, 1, 1, 1, 0]
    p_o, p_e = 13 / 15, (8 / 15) * (10 / 15) + (7 / 15) * (5 / 15)
    assert criteria["cohens_kappa"]["value"] == pytest.approx((p_o - p_e) / (1 - p_e)) == cohen_kappa_score(x, y)
    assert criteria["krippendorff_alpha"]["value"] == pytest.approx(alpha_interval_by_hand(list(zip(x, y))))
    # The intervals: the percentile bootstrap over the 3 outputs (their criteria drawn together)
    for entry in (items, criteria):
        for stat in ("krippendorff_alpha", "cohens_kappa"):
            found = entry[stat]
            assert (found["ci95"] is None) == (found["interval_unavailable"] is not None)
    options = U.UncertaintyOptions(resamples=200)
    units = [[(0.4, 0.6)], [(0.4, 0.6)], [(0.8, 0.8)]]

    def kappa_of(positions, axis=-1):
        import numpy as np

        rows = np.atleast_2d(np.asarray(positions, dtype=int))
        vals = [cohens_kappa([units[i][0][0] for i in r], [units[i][0][1] for i in r]).value for r in rows]
        vals = [np.nan if v is None else v for v in vals]
        return np.asarray(vals if np.ndim(positions) > 1 else vals[0], dtype=float)

    expected = U.bootstrap([[0, 1, 2]], kappa_of, options)
    assert items["cohens_kappa"]["interval_unavailable"] == expected["unavailable"]
    assert items["cohens_kappa"]["ci95"] == expected["ci95"]
    assert "mmar_rubrics items: 3 pairs over 3 outputs" in printed and "Cohen's kappa 0.2500" in printed
    # With 3 outputs some resamples hold one score only: the items' interval says so; the criteria have one
    low, high = criteria["cohens_kappa"]["ci95"]
    assert low <= criteria["cohens_kappa"]["value"] <= high and items["cohens_kappa"]["ci95"] is None


def test_the_judge_swap_refuses_what_is_not_two_judges_of_one_run(judged, tmp_path, capsys):
    root, run_dir, server, results = judged
    other = score(
        run_dir,
        tmp_path / "other",
        "judge-y",
        server,
        scorer_options={"mmar_rubrics": {"raters": 1, "min_valid_raters": 1}},
    )
    assert other["protocol"]["scoring"]["scorer_options"]["mmar_rubrics"]["min_valid_raters"] == "1"
    cases = {
        (f"{root / 'judge-x'},{tmp_path / 'other'}",): "scoring.scorer_options.mmar_rubrics.min_valid_raters",
        (f"{root / 'judge-x'}",): "--judges",
        (f"{root / 'judge-x'},{root / 'judge-y'}", str(root / "judge-x")): "give RUN alone",
    }
    for args, named in cases.items():
        with pytest.raises(SystemExit) as stop:
            main(["compare", str(run_dir), *args[1:], "--judges", args[0]])
        err = capsys.readouterr().err
        assert stop.value.code == 2 and named in err and len(err.strip().splitlines()) == 1
    with pytest.raises(SystemExit) as stop:  # a results folder of another run
        main(["compare", str(root), "--judges", f"{root / 'judge-x'},{root / 'judge-y'}"])
    assert stop.value.code == 2 and f"scored {run_dir}, not {root}" in capsys.readouterr().err
    assert (
        main(
            [
                "compare",
                str(run_dir),
                "--judges",
                f"{root / 'judge-x'},{tmp_path / 'other'}",
                "--allow-protocol-diff",
                "--resamples",
                "100",
            ]
        )
        == 0
    )


def test_audiospan_verdicts_are_compared_as_the_raters_most_common_label():
    from audioreason.analysis.judge_swap import item_judgements

    def rater(*labels, status="ok"):
        return {
            "status": status,
            "verdict": {"criteria": [{"index": i, "semantic": s, "temporal": t} for i, (s, t) in enumerate(labels)]},
        }

    row = {
        "rubric": 0.5,
        "judge": [
            rater(("correct", "none"), ("wrong", "missing")),
            rater(("partial", "none"), ("wrong", "missing")),
            rater(("partial", "none"), ("correct", "correct")),
            rater(("correct", "none"), ("x", "y"), status="invalid"),
        ],
    }
    # criterion 0: partial twice, correct once (the invalid rater is not counted); criterion 1: wrong/missing
    assert item_judgements("audiospan_rubric", row) == (0.5, {"0": "partial/none", "1": "wrong/missing"})
    assert item_judgements("audiospan_rubric", {"rubric": None, "judge": []}) is None
    mmar = {
        "status": "judged",
        "score": 0.5,
        "raters": [
            {"verdicts": [{"name": "c1", "score": 1}, {"name": "c2", "score": 0}]},
            {"verdicts": [{"name": "c1", "score": 0}, {"name": "c2", "score": 0}]},
            {"error": "invalid"},
        ],
    }
    assert item_judgements("mmar_rubrics", mmar) == (0.5, {"c1": 0.5, "c2": 0.0})
    assert item_judgements("mmar_rubrics", {"status": "gated", "score": 0}) is None


def test_a_bad_prices_file_stops_score_before_any_work(judged, tmp_path, capsys):
    root, run_dir, server, results = judged
    broken = tmp_path / "prices.json"
    broken.write_text(json.dumps({"models": {"judge-x": {"per_token": 1}}}))
    for given, message in (
        (tmp_path / "none.json", f"--judge-prices '{tmp_path / 'none.json'}' is not a file"),
        (broken, "models.judge-x.per_token is not one of"),
    ):
        with pytest.raises(SystemExit) as stop:
            main(
                [
                    "score",
                    str(run_dir),
                    "--scorers",
                    "mmar_rubrics",
                    "--judge-prices",
                    str(given),
                    "--out",
                    str(tmp_path / "out"),
                ]
            )
        err = capsys.readouterr().err
        assert stop.value.code == 2 and message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("stream", [False, True])
def test_the_served_model_is_read_from_a_plain_and_a_streamed_reply(tmp_path, stream):
    from test_judges_client import GOOD, SCHEMA, messages

    from audioreason.judges import JudgeRequest, JudgeRunner, OpenAICompatibleJudge, SamplingParams

    script = {
        "scenarios": {
            "versioned": [{"reply": GOOD, "served_model": "versioned-2026-01-01"}],
            "unnamed": [{"reply": GOOD, "served_model": None}],
        }
    }
    extra = {"stream": True} if stream else {}
    with running_server(script, tmp_path) as server:
        for scenario, expected in (("versioned", "versioned-2026-01-01"), ("unnamed", None)):
            runner = JudgeRunner(
                OpenAICompatibleJudge(scenario, base_url=server.base_url, api_key_env="CARD_KEY"),
                sampling=SamplingParams(extra=extra),
            )
            (result,) = runner.run([JudgeRequest("x", messages("x"), SCHEMA)])
            assert result.ok and result.served_model == expected
            assert runner.stats.served_models == {expected or "": 1}
