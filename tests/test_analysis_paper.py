"""ARIA §4's validity analyses recomputed from what the paper publishes ("Beyond Accuracy: ARIA-Rubrics for
Evaluating Audio Reasoning in Large Audio Language Models", Li et al.): its Table 1 per-model means are the inputs
of the dataset-independence analyses (two-way ANOVA, Kendall's W, ICC(2,1)) and of the component
correlations; its Table 5 gives rho and p for each metric against human ratings.

What matches the paper and what does not is recorded here and in ``audioreason/analysis/__init__.py``."""

import pytest

from audioreason.analysis import kendalls_w, spearman, two_way_anova, validity_report

MODELS = [
    "Qwen2-Audio",
    "Qwen2.5-Omni",
    "Gemma-3n-E2B",
    "R1-AQA",
    "Audio-Reasoner",
    "AudSemThinker",
    "Phi-4",
    "GPT-4o-audio",
    "Gemini 2.5 Flash",
]
COLUMNS = ("M1", "M2", "M3", "M4", "M5", "M6", "aria", "accuracy")
# ARIA Table 1: M1..M6 means, ARIA and accuracy (percent in the paper; a fraction here, as the aria scorer
# returns it) of each model on MMAR and on MMAU-mini.
TABLE1 = {
    "MMAR": [
        (0.1963, 0.6169, 0.6967, 0.5220, 0.2015, 0.4326, 0.4443, 0.177),
        (0.4344, 0.6815, 0.7561, 0.5887, 0.2873, 0.5215, 0.5449, 0.443),
        (0.2861, 0.6442, 0.7362, 0.6315, 0.3215, 0.4356, 0.5092, 0.273),
        (0.2107, 0.5700, 0.6891, 0.5358, 0.1812, 0.4237, 0.4351, 0.216),
        (0.2401, 0.6159, 0.6293, 0.6099, 0.2887, 0.4817, 0.4776, 0.201),
        (0.3309, 0.4626, 0.5735, 0.5672, 0.2317, 0.6171, 0.4638, 0.311),
        (0.3432, 0.5972, 0.6481, 0.5129, 0.2210, 0.6143, 0.4895, 0.271),
        (0.3725, 0.7142, 0.7838, 0.7506, 0.4346, 0.4219, 0.5796, 0.676),
        (0.3808, 0.6776, 0.7729, 0.7426, 0.4021, 0.4375, 0.5689, 0.626),
    ],
    "MMAU-mini": [
        (0.1941, 0.6123, 0.6959, 0.5346, 0.2209, 0.4462, 0.4507, 0.241),
        (0.1929, 0.6654, 0.7587, 0.6364, 0.3481, 0.4771, 0.5131, 0.584),
        (0.3174, 0.6207, 0.7181, 0.6903, 0.3237, 0.4491, 0.5199, 0.365),
        (0.2670, 0.5847, 0.6926, 0.5536, 0.2056, 0.4490, 0.4588, 0.263),
        (0.3032, 0.5774, 0.6186, 0.6877, 0.2860, 0.5097, 0.4971, 0.340),
        (0.3637, 0.5237, 0.6178, 0.5476, 0.2616, 0.6046, 0.4865, 0.460),
        (0.3443, 0.6507, 0.7300, 0.6255, 0.2744, 0.5521, 0.5295, 0.407),
        (0.4035, 0.6836, 0.7780, 0.7491, 0.4161, 0.4502, 0.5801, 0.558),
        (0.4199, 0.6564, 0.7680, 0.7763, 0.4169, 0.4541, 0.5819, 0.518),
    ],
}
ARIA_METRICS = ["M1", "M2", "M3", "M4", "M5", "M6"]


def table1_results():
    """Table 1 as 18 aria-shaped results, in the shape validity_report takes."""
    return [
        {
            "model": model,
            "benchmark": bench,
            "result": {**dict(zip(COLUMNS, row)), "aria_metrics": ARIA_METRICS, "aria_complete": True},
        }
        for bench, rows in TABLE1.items()
        for model, row in zip(MODELS, rows)
    ]


def models_by_benchmark(measure):
    j = COLUMNS.index(measure)
    return [[TABLE1["MMAR"][i][j], TABLE1["MMAU-mini"][i][j]] for i in range(len(MODELS))]


def stat(report, name, measure):
    found = [s for s in report["statistics"] if s["name"] == name and s["measure"] == measure]
    assert len(found) == 1, (name, measure)
    return found[0]


@pytest.fixture(scope="module")
def report():
    return validity_report(table1_results())


# Recomputed from Table 1 with an independent numpy implementation of SS_factor / SS_total (9 x 2 cells).
ETA_MODEL = {
    "M1": 0.676200,
    "M2": 0.919319,
    "M3": 0.933632,
    "M4": 0.899412,
    "M5": 0.959589,
    "M6": 0.941913,
    "aria": 0.945568,
    "accuracy": 0.854832,
}
ETA_DATASET = {
    "M1": 0.000062,
    "M2": 0.000023,
    "M3": 0.006792,
    "M4": 0.048796,
    "M5": 0.016860,
    "M6": 0.000028,
    "aria": 0.015091,
    "accuracy": 0.039402,
}


@pytest.mark.parametrize("measure", COLUMNS)
def test_eta_squared_from_table1(report, measure):
    assert stat(report, "eta_squared_model", measure)["value"] == pytest.approx(ETA_MODEL[measure], abs=1e-6)
    assert stat(report, "eta_squared_dataset", measure)["value"] == pytest.approx(ETA_DATASET[measure], abs=1e-6)


def test_eta_squared_matches_the_ends_of_the_papers_ranges_it_can():
    """§4: "model identity accounts for 91.9-96.4% of score variance, dataset identity at most 1.7%".
    From Table 1: M2 gives exactly the lower end (91.9%) and M5 exactly the 1.7%; but M1 (67.6%) and M4's
    dataset share (4.9%) fall outside the stated ranges and no metric reaches 96.4%: the figure was not drawn
    from Table 1's means as printed (M1 of Qwen2.5-Omni, 0.4344 on MMAR and 0.1929 on MMAU-mini, alone
    holds M1 down)."""
    eta = {m: two_way_anova(models_by_benchmark(m)) for m in ARIA_METRICS}
    assert round(100 * eta["M2"]["model"].value, 1) == 91.9
    assert round(100 * eta["M5"]["dataset"].value, 1) == 1.7
    assert round(100 * eta["M1"]["model"].value, 1) == 67.6 and round(100 * eta["M4"]["dataset"].value, 1) == 4.9
    assert max(e["model"].value for e in eta.values()) < 0.964


def test_kendalls_w_from_table1(report):
    """With m = 2 benchmarks and n = 9 models, W = (1 + rho) / 2 = 1 - sum(d^2) / 240. M2 by hand: ranks on
    MMAR GPT-4o 1, Omni 2, Gemini 3, Gemma 4, Qwen2 5, Audio-Reasoner 6, Phi-4 7, R1-AQA 8, AudSemThinker 9; on
    MMAU-mini 1, 2, 3, 5, 6, 8, 4, 7, 9: d^2 = 1 + 1 + 4 + 9 + 1 = 16, W = 14/15 = 0.933, the lower end of the
    paper's W in [0.933, 0.992]; M4 and M6 give it too. M1 (0.692) falls outside the range and none reaches
    0.992 (Table 1's M1 of Qwen2.5-Omni again)."""
    assert stat(report, "kendalls_w", "M2")["value"] == pytest.approx(14 / 15)
    expected = {
        "M1": 1 - 74 / 240,
        "M3": 1 - 12 / 240,
        "M4": 14 / 15,
        "M5": 1 - 10 / 240,
        "M6": 14 / 15,
        "aria": 1 - 12 / 240,
        "accuracy": 1 - 10 / 240,
    }
    for measure, value in expected.items():
        assert stat(report, "kendalls_w", measure)["value"] == pytest.approx(value), measure
        rho = spearman(*zip(*models_by_benchmark(measure))).value
        assert value == pytest.approx((1 + rho) / 2)
    assert round(min(stat(report, "kendalls_w", m)["value"] for m in ARIA_METRICS[1:]), 3) == 0.933


# ICC(2,1) per metric (Figure 3 draws them without printing the values), recomputed by hand from the mean
# squares of the 9 x 2 tables: (BMS - EMS) / (BMS + EMS + 2 (JMS - EMS) / 9).
ICC = {
    "M1": 0.379764,
    "M2": 0.853952,
    "M3": 0.881065,
    "M4": 0.825783,
    "M5": 0.928719,
    "M6": 0.895387,
    "aria": 0.903522,
    "accuracy": 0.743754,
}


@pytest.mark.parametrize("measure", COLUMNS)
def test_icc_from_table1(report, measure):
    icc = stat(report, "icc_2_1", measure)
    assert icc["value"] == pytest.approx(ICC[measure], abs=1e-6)
    assert icc["ci"][0] < icc["value"] < icc["ci"][1] and icc["n"] == 9 and icc["details"]["raters"] == 2


def test_component_correlations_from_table1(report):
    """§4 quotes Pearson r between components: M4-M5 0.951, M2-M3 0.916, M2-M6 -0.578, M3-M6 -0.633. Over
    Table 1's 18 (model, benchmark) means, M2-M6 is exactly -0.578; the others come close (0.938, 0.910, -0.638):
    the paper does not say over which units Figure 4 was computed."""
    r = {s["measure"]: s["value"] for s in report["statistics"] if s["name"] == "pearson_r"}
    assert round(r["M2~M6"], 3) == -0.578
    assert r["M4~M5"] == pytest.approx(0.938032, abs=1e-6) and r["M2~M3"] == pytest.approx(0.909608, abs=1e-6)
    assert r["M3~M6"] == pytest.approx(-0.637583, abs=1e-6)
    assert all(s["n"] == 18 for s in report["statistics"] if s["name"] == "pearson_r")
    matrix = report["correlation_matrix"]
    assert matrix["names"] == list(COLUMNS) and matrix["r"][1][5] == r["M2~M6"]


# Metric values of 18 (model, benchmark) results (distinct, so their ranks are 1..18) against mean human
# ratings (means of three 1-5 Likert ratings, so with ties) chosen to give each Table 5 rho at n = 18.
METRIC = list(range(1, 19))
HUMAN_THIRDS = {  # 3 x the mean rating
    ("M1", 0.563, 0.015): [4, 5, 7, 5, 6, 4, 4, 15, 5, 5, 11, 11, 7, 13, 5, 8, 12, 8],
    ("M2", 0.295, 0.234): [4, 4, 11, 3, 14, 7, 8, 8, 9, 11, 3, 9, 4, 3, 13, 10, 14, 10],
    ("M3", 0.385, 0.115): [12, 6, 5, 11, 6, 13, 3, 5, 12, 7, 6, 14, 10, 13, 14, 9, 6, 15],
    ("M4", 0.382, 0.118): [9, 5, 5, 14, 13, 5, 5, 10, 13, 6, 14, 9, 3, 14, 15, 13, 13, 12],
    ("M5", 0.164, 0.515): [14, 9, 7, 4, 14, 4, 3, 9, 14, 10, 5, 7, 9, 11, 9, 9, 10, 13],
    ("M1+M6", 0.275, 0.270): [10, 7, 3, 11, 7, 7, 9, 10, 9, 9, 9, 10, 8, 14, 10, 13, 7, 9],
    ("M2+M3", 0.333, 0.176): [4, 3, 5, 3, 13, 11, 8, 14, 8, 8, 12, 11, 10, 12, 5, 14, 10, 4],
    ("M4+M5", 0.313, 0.206): [6, 10, 12, 11, 4, 7, 5, 7, 12, 14, 3, 15, 9, 9, 4, 12, 13, 14],
}


@pytest.mark.parametrize("row", sorted(HUMAN_THIRDS))
def test_table5_p_values_follow_from_rho_at_18_results(row):
    """Table 5's p-values are those of Spearman's rho with Student's t on n - 2 = 16 df: the analysis unit is the
    (model, benchmark) result (9 models x 2 benchmarks), as validity_report computes it."""
    _, rho, p = row
    out = spearman(METRIC, [v / 3 for v in HUMAN_THIRDS[row]])
    assert round(out.value, 3) == rho and out.n == 18
    assert out.p_value == pytest.approx(p, abs=1e-3)  # the paper rounds rho and p to 3 decimals


def test_two_table5_p_values_do_not_follow_from_their_rho():
    """M6 (rho 0.070, p 0.947) and ARIA (rho 0.671, p 0.006): at n = 18 these rho give p = 0.78 and 0.0023,
    and no n gives both the other rows' p and these; we report the p that follows from the data."""
    m6 = spearman(METRIC, [v / 3 for v in [4, 8, 12, 11, 10, 12, 7, 15, 7, 14, 3, 10, 4, 3, 15, 5, 11, 15]])
    aria = spearman(METRIC, [v / 3 for v in [3, 4, 7, 14, 4, 8, 6, 5, 15, 6, 8, 6, 14, 10, 15, 15, 14, 14]])
    assert round(m6.value, 2) == 0.07 and round(m6.p_value, 2) == 0.78
    assert round(aria.value, 3) == 0.671 and round(aria.p_value, 4) == 0.0023


def test_report_on_table1_names_every_input(report):
    assert report["models"] == MODELS and report["benchmarks"] == ["MMAR", "MMAU-mini"]
    assert report["measures"] == list(COLUMNS) and report["scorer"] == "aria"
    w = stat(report, "kendalls_w", "M2")
    assert w["inputs"] == (
        "M2 of 9 models (rows: ranked objects) x 2 benchmarks (columns: raters; MMAR, MMAU-mini), one score per cell"
    )
    # 28 correlation pairs, then per measure eta^2 (model, dataset), W and ICC; nothing unavailable.
    assert len(report["statistics"]) == 28 + 8 * 4
    assert all(s["unavailable"] is None for s in report["statistics"])
    assert {n["statistic"] for n in report["not_applicable"]} == {
        "spearman_rho with human ratings",
        "krippendorff_alpha of annotators",
    }
    assert kendalls_w(models_by_benchmark("M2")).value == w["value"]
