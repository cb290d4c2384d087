"""What every validity statistic returns, and the checks its inputs go through.

A statistic the data cannot support (too few values, a constant column, a missing cell in a two-way
table) is a ``Statistic`` whose ``unavailable`` says why: it never raises and is never a quiet NaN.
Input that is not data at all (a string, a boolean, an infinity, a ragged table, sequences of different
lengths) is a ``ValueError`` naming the position, raised before anything is computed.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from numbers import Real
from typing import Any, Optional, Sequence

import numpy as np

# One exception for "undefined on these data", shared with the MMAR-Rubrics reliability code.
from audioreason.scorers.mmar_rubrics.formulas import StatisticUnavailable


@dataclass(frozen=True)
class Statistic:
    """One statistic: its value with p-value and 95% interval where defined, or the reason it is unavailable.

    ``n``: the number of observations it rests on (pairs, cells, units). ``details``: the intermediate
    numbers (sums of squares, degrees of freedom, test statistics). ``measure`` and ``inputs`` name what
    went in; ``validity_report`` fills them.
    """

    name: str
    value: Optional[float] = None
    p_value: Optional[float] = None
    ci: Optional[tuple[float, float]] = None
    n: Optional[int] = None
    unavailable: Optional[str] = None
    details: dict[str, Any] = field(default_factory=dict)
    measure: Optional[str] = None
    inputs: Optional[str] = None

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["ci"] = list(self.ci) if self.ci is not None else None
        return out


def as_number(value: Any, where: str) -> float:
    """A finite float, or NaN for a missing value (None or NaN)."""
    if value is None:
        return math.nan
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (Real, np.number)):
        raise ValueError(f"{where}: {value!r} is not a number")
    x = float(value)
    if math.isinf(x):
        raise ValueError(f"{where}: {x} is infinite")
    return x


def as_vector(values: Sequence[Any], what: str) -> np.ndarray:
    """A 1-D float array; None and NaN become NaN (missing)."""
    if (
        isinstance(values, (str, bytes))
        or not hasattr(values, "__len__")
        or any(isinstance(v, (Sequence, np.ndarray)) and not isinstance(v, str) for v in values)
    ):
        raise ValueError(f"{what} must be a one-dimensional sequence of numbers")
    return np.array([as_number(v, f"{what}[{i}]") for i, v in enumerate(values)], dtype=float)


def as_table(table: Sequence[Sequence[Any]], what: str = "table") -> np.ndarray:
    """A 2-D float array (rows x columns); None and NaN become NaN (missing cells)."""
    if isinstance(table, (str, bytes)) or not hasattr(table, "__len__") or len(table) == 0:
        raise ValueError(f"{what} must be a non-empty sequence of rows")
    rows = [as_vector(row, f"{what}[{i}]") for i, row in enumerate(table)]
    widths = sorted({len(r) for r in rows})
    if len(widths) > 1:
        raise ValueError(f"{what} is ragged: its rows have {widths} columns")
    return np.array(rows, dtype=float)


def labels(given: Optional[Sequence[str]], count: int, prefix: str, noun: str) -> list[str]:
    """The given row or column labels, or ``prefix0``, ``prefix1``, ..."""
    if given is None:
        return [f"{prefix}{i}" for i in range(count)]
    if len(given) != count:
        raise ValueError(f"{len(given)} {noun} labels for {count} {noun}s")
    return [str(g) for g in given]


def require_complete(values: np.ndarray, row_labels: list[str], column_labels: list[str]) -> None:
    """Raise ``StatisticUnavailable`` naming every missing cell of a two-way table."""
    missing = np.argwhere(np.isnan(values))
    if len(missing):
        cells = ", ".join(f"({row_labels[i]}, {column_labels[j]})" for i, j in missing)
        raise StatisticUnavailable(
            f"{len(missing)} missing cell(s) in the two-way table: {cells}; it needs a score in every cell"
        )


__all__ = ["Statistic", "StatisticUnavailable", "as_number", "as_table", "as_vector", "labels", "require_complete"]
