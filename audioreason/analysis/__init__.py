"""Validity statistics (ARIA §4) on any set of results."""
from .agreement import annotator_alpha, kendalls_w
from .anova import icc_2_1, two_way_anova
from .correlation import correlation_matrix, pearson, spearman
from .statistic import Statistic, StatisticUnavailable

__all__ = ["Statistic", "StatisticUnavailable", "annotator_alpha", "correlation_matrix", "icc_2_1", "kendalls_w",
           "pearson", "spearman", "two_way_anova"]
