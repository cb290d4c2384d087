"""Validity statistics: the analyses of ARIA-Rubrics §4 ("Beyond Accuracy: ARIA-Rubrics for Evaluating Audio
Reasoning in Large Audio Language Models", Li et al.) on any set of results, plus the MMAR-Rubrics judges'
reliability (arXiv:2602.14224 §3.2).
Layer 7 (ARCHITECTURE.md): it may import layers 0-6 (down to the scorers' formulas).

    from audioreason.analysis import validity_report
    report = validity_report([{"model": "Qwen2-Audio", "benchmark": "MMAR", "result": aria_result}, ...],
                             human={("Qwen2-Audio", "MMAR"): 2.7, ...},          # optional (Table 5)
                             annotations={"annotator1": [4, None, 2, ...], ...})  # optional (alpha)
    for s in report["statistics"]:
        print(s["name"], s["measure"], s["value"], s["p_value"], s["ci"], s["unavailable"] or "", s["inputs"])

Every function takes plain numbers (sequences, rows x columns tables; None or NaN is a missing value) and
returns a ``Statistic``: value, two-sided p-value and 95% interval where defined, n, the intermediate
numbers in ``details``, or ``unavailable`` with the reason when the data cannot support it (too few values,
a constant column, a missing cell of a two-way table, all ranks tied...). It never raises for that and never
returns a bare NaN. Input that is not data (strings, booleans, infinities, ragged tables, misaligned
sequences) is a ``ValueError`` naming the position.

The unit of analysis is the (model, benchmark) result, as in the paper: its §4 analyses run on the
per-model means of Table 1 (9 models x 2 benchmarks). Which statistic, on what:

=========================  ==========================================================================
``correlation_matrix``     Figure 4, "correlations between ARIA components": Pearson's r (the paper
                           writes r) between every two measures over the results, with the t-test p
                           and the 95% Fisher-z interval (scipy ``pearsonr``); a result missing either
                           measure is left out of that pair and counted. ``method="spearman"`` is the
                           named alternative.
``spearman``               Table 5: Spearman's rho of each metric, each metric group (M1+M6, M2+M3,
                           M4+M5: the mean of the two; rho is the same for their sum) and ARIA against
                           the mean human rating of each result; p from Student's t on n - 2 df (scipy
                           ``spearmanr``); no interval. That is how the paper's p-values follow from its
                           rho at n = 18 results (tested on 8 of its 10 rows).
``two_way_anova``          Figure 2: additive two-way ANOVA (score ~ model + dataset, statsmodels OLS
                           and ``anova_lm``) on each measure's models x benchmarks table, one score per
                           cell (so the interaction is the residual). eta^2 = SS_factor / SS_total, the
                           paper's "share of score variance"; partial eta^2, SS, df, F in ``details``;
                           p from each factor's F test (undefined, and said so, when the residual is 0).
``kendalls_w``             Figure 3: Kendall's W of the benchmarks (raters) ranking the models
                           (objects), tie-corrected, from scipy's Friedman test (chi^2 = m (n - 1) W;
                           its chi^2 p-value on n - 1 df). Needs >= 3 models and >= 2 benchmarks.
``icc_2_1``                Figure 3: ICC(2,1) (Shrout & Fleiss 1979; two-way random, absolute agreement,
                           single rater) with models as targets and benchmarks as raters, from the same
                           ANOVA mean squares; p from F = BMS / EMS; Shrout & Fleiss' 95% interval. The
                           paper calls it "instance-level" agreement, but MMAR and MMAU-mini share no
                           item (§4), so no instance is scored on both: Figure 3 places it beside W as
                           "cross-dataset consistency of model scores", which is what is computed.
``annotator_alpha``        §4 Human evaluation: Krippendorff's alpha over the annotators x instances
                           matrix, missing ratings handled natively, through the one implementation
                           (``krippendorff_alpha``, the ``krippendorff`` package). The paper names no
                           level of measurement; the default is "interval" (the package's default),
                           ``alpha_level="ordinal"`` the named alternative for Likert ratings (on
                           Krippendorff's 2011 example: 0.849 interval, 0.815 ordinal).
MMAR-Rubrics reliability   ``validity_report`` passes on the ``reliability`` (Krippendorff's alpha of the
                           judges, ``rater_reliability``) that every ``mmar_rubrics`` result carries.
=========================  ==========================================================================

``validity_report(results, human=None, annotations=None, correlation="pearson", alpha_level="interval")``
reads, from each ``{"model", "benchmark", "result": <scorer result>}`` (or the result's keys inline), the
measures M1..M6, aria, accuracy (``aria``), rubrics and accuracy (``mmar_rubrics``) or accuracy alone. All
results must come from one scorer (all are on the 0-1 scale, but aria's accuracy follows ARIA's answer
extraction and mmar_rubrics' the official MMAR string match: a mix would compare different measures). It returns
``statistics`` (each as a
dict with ``measure``, e.g. "M2", "M2~M3", "aria~human", and ``inputs``, e.g. "M2 of 9 models (rows: ranked
objects) x 2 benchmarks (columns: raters; MMAR, MMAU-mini), one score per cell"), ``correlation_matrix``
(names, r, p, n for plotting), ``not_applicable`` (what was not computed and why: one benchmark only, no
human ratings, a measure with no value in any result, ARIA values that average different metric sets) and
``warnings`` (a metric computed with different backbones across results).

Recomputed from the paper (tests/test_analysis_paper.py), from Table 1's means:

    measure   eta2_model  eta2_dataset  Kendall's W  ICC(2,1)
    M1          0.676       0.000         0.692       0.380
    M2          0.919       0.000         0.933       0.854
    M3          0.934       0.007         0.950       0.881
    M4          0.899       0.049         0.933       0.826
    M5          0.960       0.017         0.958       0.929
    M6          0.942       0.000         0.933       0.895
    ARIA        0.946       0.015         0.950       0.904
    accuracy    0.855       0.039         0.958       0.744

The paper states eta2_model in 91.9-96.4%, eta2_dataset at most 1.7% and W in [0.933, 0.992]. Table 1
gives exactly the ends 91.9% (M2), 1.7% (M5) and 0.933 (M2, M4, M6), but M1 (eta2 67.6%, W 0.692; its
Qwen2.5-Omni mean is 0.4344 on MMAR and 0.1929 on MMAU-mini) and M4's dataset share (4.9%) fall outside the
stated ranges and nothing reaches 96.4% or 0.992: Figures 2-3 were not drawn from Table 1 as printed (Table 1
and Table 9 also disagree on two M4 values). The quoted component correlations: over Table 1's 18 results
M2-M6 is -0.578 as quoted; M2-M3 0.910 (quoted 0.916), M3-M6 -0.638 (-0.633), M4-M5 0.938 (0.951). In
Table 5, rho 0.070 / p 0.947 (M6) and rho 0.671 / p 0.006 (ARIA) are not consistent with each other at
n = 18 (p would be 0.78 and 0.0023) while the other eight rows are; these functions return the p-value
that follows from the data.

Packages: scipy (correlations, Friedman, F and t distributions), statsmodels (the ANOVA), krippendorff.
pingouin is not used: it would bring seaborn, matplotlib, scikit-learn, pandas-flavor and tabulate for one ICC
function, while ICC(2,1) is a closed form of the ANOVA mean squares already fitted here, checked against
Shrout & Fleiss' published example (0.29, F 11.03, interval 0.019-0.76).
"""

from audioreason.base.lazy import lazy_exports

# Each name's module (scipy, statsmodels, krippendorff) is imported on first use: ``uncertainty`` and ``compare``
# serve `audioreason score` and `compare`, which need none of them for a plain accuracy.
_NAMES = {
    "HUMAN_GROUPS": ".report",
    "MEASURES": ".report",
    "validity_report": ".report",
    "LEVELS": ".agreement",
    "annotator_alpha": ".agreement",
    "kendalls_w": ".agreement",
    "icc_2_1": ".anova",
    "two_way_anova": ".anova",
    "METHODS": ".correlation",
    "correlation_matrix": ".correlation",
    "pearson": ".correlation",
    "spearman": ".correlation",
    "Statistic": ".statistic",
    "StatisticUnavailable": ".statistic",
    "krippendorff_alpha": "audioreason.scorers.mmar_rubrics.formulas",
    "rater_reliability": "audioreason.scorers.mmar_rubrics.formulas",
}
__getattr__, __dir__ = lazy_exports(__name__, _NAMES)
__all__ = sorted(_NAMES)
