"""Validity statistics (ARIA §4) on any set of results."""
from .correlation import correlation_matrix, pearson, spearman
from .statistic import Statistic, StatisticUnavailable

__all__ = ["Statistic", "StatisticUnavailable", "correlation_matrix", "pearson", "spearman"]
