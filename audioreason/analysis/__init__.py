"""Validity statistics (ARIA §4) on any set of results."""
from .anova import icc_2_1, two_way_anova
from .correlation import correlation_matrix, pearson, spearman
from .statistic import Statistic, StatisticUnavailable

__all__ = ["Statistic", "StatisticUnavailable", "correlation_matrix", "icc_2_1", "pearson", "spearman",
           "two_way_anova"]
