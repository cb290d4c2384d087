"""validity_report: which statistics apply to a set of results, how inputs are named, and what is refused."""

import json
import math

import pytest
from test_analysis_agreement import KRIPPENDORFF_2011

from audioreason.analysis import annotator_alpha, spearman, validity_report

# Offline aria results (M1 and M5 have no offline weights: None) for 4 models on 2 benchmarks.
OFFLINE = {
    ("A", "MMAR"): (0.30, 0.40, 0.50, 0.45, 0.20),
    ("B", "MMAR"): (0.50, 0.45, 0.60, 0.55, 0.40),
    ("C", "MMAR"): (0.60, 0.70, 0.55, 0.62, 0.60),
    ("D", "MMAR"): (0.20, 0.35, 0.45, 0.33, 0.10),
    ("A", "MMAU"): (0.35, 0.42, 0.52, 0.50, 0.30),
    ("B", "MMAU"): (0.52, 0.50, 0.58, 0.54, 0.50),
    ("C", "MMAU"): (0.65, 0.66, 0.60, 0.63, 0.70),
    ("D", "MMAU"): (0.25, 0.30, 0.40, 0.32, 0.20),
}
BACKBONES = {
    "M1": "unavailable: no offline CLAP weights",
    "M2": "all-MiniLM-L6-v2",
    "M3": "SmolLM2-135M",
    "M4": "SmolLM2-135M",
    "M5": "unavailable: no offline NLI weights",
    "M6": "GloVe 6B-50d",
}


def aria_result(m2, m3, m4, aria, accuracy, **extra):
    return {
        "M1": None,
        "M2": m2,
        "M3": m3,
        "M4": m4,
        "M5": None,
        "M6": None,
        "aria": aria,
        "accuracy": accuracy,
        "aria_metrics": ["M2", "M3", "M4"],
        "aria_complete": False,
        "backbones": dict(BACKBONES),
        **extra,
    }


def offline_results(inline=False):
    out = []
    for (model, bench), values in OFFLINE.items():
        result = aria_result(*values)
        out.append(
            {"model": model, "benchmark": bench, **result}
            if inline
            else {"model": model, "benchmark": bench, "result": result}
        )
    return out


def find(report, name, measure):
    found = [s for s in report["statistics"] if s["name"] == name and s["measure"] == measure]
    assert len(found) == 1, (name, measure, [(s["name"], s["measure"]) for s in report["statistics"]])
    return found[0]


def test_offline_results_report_what_applies():
    report = validity_report(offline_results())
    assert report["models"] == ["A", "B", "C", "D"] and report["benchmarks"] == ["MMAR", "MMAU"]
    # M1, M5 and M6 are None everywhere (no offline backbone): named once, not in every statistic.
    assert report["measures"] == ["M2", "M3", "M4", "aria", "accuracy"]
    reasons = {n["statistic"]: n["reason"] for n in report["not_applicable"]}
    assert reasons["every statistic of M1"] == "M1 has no value in any result"
    assert "every statistic of M5" in reasons and "every statistic of M6" in reasons
    assert not any("M1" in s["measure"] for s in report["statistics"])
    # The measures with values: W by hand. M2 ranks C > B > A > D on both benchmarks: W = 1.
    assert find(report, "kendalls_w", "M2")["value"] == pytest.approx(1.0)
    # M3 on MMAR: C 0.70 > B 0.45 > A 0.40 > D 0.35; on MMAU: C 0.66 > B 0.50 > A 0.42 > D 0.30: W = 1.
    assert find(report, "kendalls_w", "M3")["value"] == pytest.approx(1.0)
    eta = find(report, "eta_squared_model", "accuracy")
    assert eta["details"]["df"] == 3 and eta["details"]["df_residual"] == 3 and eta["n"] == 8
    pair = find(report, "pearson_r", "M2~M3")
    assert pair["n"] == 8 and pair["inputs"] == "M2 and M3 of 8 (model, benchmark) results with both"
    assert report["warnings"] == []


def test_results_inline_or_nested_give_the_same_report():
    assert validity_report(offline_results(inline=True)) == validity_report(offline_results())


def test_the_report_is_plain_json_without_nan():
    report = validity_report(
        offline_results(), human={k: 3.0 + v[3] for k, v in OFFLINE.items()}, annotations=KRIPPENDORFF_2011
    )
    json.dumps(report, allow_nan=False)


def test_a_missing_result_is_named_in_the_table_statistics():
    results = [r for r in offline_results() if (r["model"], r["benchmark"]) != ("B", "MMAU")]
    report = validity_report(results)
    for name in ("eta_squared_model", "eta_squared_dataset", "kendalls_w", "icc_2_1"):
        assert "(B, MMAU)" in find(report, name, "aria")["unavailable"]
    assert find(report, "pearson_r", "M2~M3")["n"] == 7


def test_one_benchmark_has_no_cross_benchmark_statistics():
    report = validity_report([r for r in offline_results() if r["benchmark"] == "MMAR"])
    assert not any(s["name"] in ("kendalls_w", "icc_2_1") for s in report["statistics"])
    reasons = {n["statistic"]: n["reason"] for n in report["not_applicable"]}
    assert "at least two benchmarks" in reasons["two-way ANOVA, Kendall's W, ICC(2,1)"]
    assert find(report, "pearson_r", "M2~aria")["n"] == 4


def test_human_ratings_give_spearman_for_each_measure_and_group():
    human = {
        ("A", "MMAR"): 2.0,
        ("B", "MMAR"): 3.0,
        ("C", "MMAR"): 4.5,
        ("D", "MMAR"): 1.0,
        ("A", "MMAU"): 2.5,
        ("B", "MMAU"): 3.5,
        ("C", "MMAU"): 4.0,
    }  # (D, MMAU) not rated
    report = validity_report(offline_results(), human=human)
    aria = find(report, "spearman_rho", "aria~human")
    keys = list(human)
    expected = spearman([OFFLINE[k][3] for k in keys], [human[k] for k in keys])
    assert aria["value"] == pytest.approx(expected.value) and aria["p_value"] == pytest.approx(expected.p_value)
    assert aria["n"] == 7 and aria["details"]["dropped_pairs"] == 1
    assert aria["inputs"] == "aria against the mean human rating of 7 (model, benchmark) results rated"
    # Table 5's groups are the mean of their two metrics: M2+M3 is here; M1+M6 and M4+M5 need M1, M5, M6.
    group = find(report, "spearman_rho", "M2+M3~human")
    mean23 = spearman([(OFFLINE[k][0] + OFFLINE[k][1]) / 2 for k in keys], [human[k] for k in keys])
    assert group["value"] == pytest.approx(mean23.value)
    assert not any(s["measure"] in ("M1+M6~human", "M4+M5~human") for s in report["statistics"])


def test_human_ratings_for_unknown_results_are_refused():
    with pytest.raises(ValueError, match=r"not in results: \[\('E', 'MMAR'\)\]"):
        validity_report(offline_results(), human={("E", "MMAR"): 3.0})
    with pytest.raises(ValueError, match="not a number"):
        validity_report(offline_results(), human={("A", "MMAR"): "good"})


def test_annotator_agreement_uses_the_whole_matrix():
    report = validity_report(offline_results(), annotations=KRIPPENDORFF_2011, alpha_level="ordinal")
    alpha = find(report, "krippendorff_alpha", "human ratings")
    assert alpha["value"] == pytest.approx(annotator_alpha(KRIPPENDORFF_2011, "ordinal").value)
    assert alpha["value"] == pytest.approx(0.815, abs=5e-4) and alpha["n"] == 11
    assert "4 annotators" in alpha["inputs"] and "ordinal" in alpha["inputs"]


def test_mmar_rubrics_results_carry_their_judges_reliability():
    def mmar(rubrics, accuracy, alpha, unavailable=None):
        return {
            "rubrics": rubrics,
            "accuracy": accuracy,
            "n": 100,
            "reliability": {
                "alpha": alpha,
                "unavailable": unavailable,
                "level": "interval",
                "items": 40,
                "kind": "intra-rater (draws of one judge)",
            },
        }

    results = [
        {"model": "A", "benchmark": "MMAR", "result": mmar(40.0, 55.0, 0.81)},
        {"model": "B", "benchmark": "MMAR", "result": mmar(30.0, 45.0, None, "alpha needs at least two raters")},
        {"model": "C", "benchmark": "MMAR", "result": mmar(20.0, 35.0, 0.7)},
    ]
    report = validity_report(results)
    assert report["scorer"] == "mmar_rubrics" and report["measures"] == ["accuracy", "rubrics"]
    alphas = [s for s in report["statistics"] if s["name"] == "krippendorff_alpha"]
    assert [a["value"] for a in alphas] == [0.81, None, 0.7]
    assert alphas[1]["unavailable"] == "alpha needs at least two raters"
    assert alphas[0]["inputs"] == "MMAR-Rubrics rater scores of A on MMAR (intra-rater (draws of one judge), 40 items)"
    assert find(report, "pearson_r", "accuracy~rubrics")["value"] == pytest.approx(1.0)


def test_aria_over_different_metric_sets_is_not_compared():
    results = offline_results()
    results[0]["result"]["aria_metrics"] = ["M2", "M3", "M4", "M6"]
    report = validity_report(results)
    assert "aria" not in report["measures"]
    assert not any(
        s["measure"] == "aria" or "aria~" in s["measure"] or "~aria" in s["measure"] for s in report["statistics"]
    )
    reason = {n["statistic"]: n["reason"] for n in report["not_applicable"]}["every statistic of aria"]
    assert "M2+M3+M4; M2+M3+M4+M6" in reason


def test_different_backbones_are_warned_about():
    results = offline_results()
    results[3]["result"]["backbones"]["M2"] = "sentence-transformers/all-mpnet-base-v2"
    warnings = validity_report(results)["warnings"]
    assert warnings == [
        "M2 was computed with different backbones across results: all-MiniLM-L6-v2 | "
        "sentence-transformers/all-mpnet-base-v2"
    ]


@pytest.mark.parametrize(
    "mutate, message",
    [
        (
            lambda r: r.append({"model": "A", "benchmark": "MMAR", "result": aria_result(0.1, 0.2, 0.3, 0.2, 0.5)}),
            r"results\[8\] repeats \(A, MMAR\) \(first at results\[0\]\)",
        ),
        (lambda r: r[2].pop("model"), r"results\[2\] needs a non-empty 'model'"),
        (lambda r: r[1]["result"].update(M2="0.4"), r"results\[1\] \(B, MMAR\) M2: '0.4' is not a number"),
        (lambda r: r[1]["result"].update(aria=math.inf), r"results\[1\] \(B, MMAR\) aria: inf is infinite"),
        (lambda r: r.append({"model": "E", "benchmark": "MMAR", "result": {"score": 1}}), "has none of M1"),
        (
            lambda r: r.append({"model": "E", "benchmark": "MMAR", "result": {"rubrics": 40.0, "accuracy": 50.0}}),
            "mix scorer outputs",
        ),
        (lambda r: r.append("A MMAR 0.5"), r"results\[8\] is str, not a mapping"),
    ],
)
def test_bad_results_are_refused_naming_the_entry(mutate, message):
    results = offline_results()
    mutate(results)
    with pytest.raises(ValueError, match=message):
        validity_report(results)


def test_empty_or_unknown_options_are_refused():
    with pytest.raises(ValueError, match="non-empty list"):
        validity_report([])
    # Options are checked before anything is computed, whether or not they would be used.
    with pytest.raises(ValueError, match="correlation method must be one of"):
        validity_report(offline_results()[:1], correlation="kendall")
    with pytest.raises(ValueError, match="alpha level must be one of"):
        validity_report(offline_results(), alpha_level="likert")
