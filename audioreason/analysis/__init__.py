"""Validity statistics (ARIA §4) on any set of results."""
from audioreason.scoring.mmar_rubrics import krippendorff_alpha, rater_reliability

from .agreement import annotator_alpha, kendalls_w
from .anova import icc_2_1, two_way_anova
from .correlation import correlation_matrix, pearson, spearman
from .report import HUMAN_GROUPS, MEASURES, validity_report
from .statistic import Statistic, StatisticUnavailable

__all__ = ["HUMAN_GROUPS", "MEASURES", "Statistic", "StatisticUnavailable", "annotator_alpha", "correlation_matrix",
           "icc_2_1", "kendalls_w", "krippendorff_alpha", "pearson", "rater_reliability", "spearman",
           "two_way_anova", "validity_report"]
