"""The spread of repeated runs: mean, standard deviation and the 95 % confidence interval of
the mean, as `ccsim sweep`'s summary, the reproduction report and its figures show them.

The interval is Student's t: mean +- t(0.975, n - 1) x s / sqrt(n), with s the sample standard
deviation (n - 1 in the denominator) of the n runs' values (scipy.stats.t). It assumes the runs'
values are independent draws (one seed each) from a roughly normal distribution; with n = 1 there
is no spread to report (NaN).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable

#: The confidence level of every interval ccsim reports.
LEVEL = 0.95


@dataclass(frozen=True)
class Spread:
    """Mean, sample standard deviation, count, and the half-width of the confidence interval
    of the mean (NaN for fewer than two values)."""

    mean: float
    sd: float
    n: int
    half_width: float

    @property
    def low(self) -> float:
        return self.mean - self.half_width

    @property
    def high(self) -> float:
        return self.mean + self.half_width


def t_quantile(df: int, level: float = LEVEL) -> float:
    """The two-sided Student-t critical value for ``df`` degrees of freedom."""
    from scipy.stats import t

    return float(t.ppf(0.5 + level / 2, df))


def spread(values: Iterable[float], level: float = LEVEL) -> Spread:
    """The :class:`Spread` of ``values`` (NaN values are left out)."""
    xs = [float(v) for v in values if v is not None and not math.isnan(float(v))]
    n = len(xs)
    if n == 0:
        return Spread(math.nan, math.nan, 0, math.nan)
    mean = sum(xs) / n
    if n == 1:
        return Spread(mean, math.nan, 1, math.nan)
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1))
    return Spread(mean, sd, n, t_quantile(n - 1, level) * sd / math.sqrt(n))


def ci_half_width(sd: float, n: int, level: float = LEVEL) -> float:
    """Half-width of the interval from a sample standard deviation and a count (vectorisable
    callers pass scalars); NaN for n < 2."""
    if n is None or n < 2 or sd is None or math.isnan(sd):
        return math.nan
    return t_quantile(int(n) - 1, level) * sd / math.sqrt(n)


def text(s: Spread, spec: str = ".3f") -> str:
    """``mean ± half-width`` (just the mean for a single run)."""
    if s.n == 0:
        return "-"
    if s.n == 1 or math.isnan(s.half_width):
        return format(s.mean, spec)
    return f"{format(s.mean, spec)} ± {format(s.half_width, spec)}"
