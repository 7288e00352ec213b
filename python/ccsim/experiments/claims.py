"""Claims: a seed paper's statement turned into a check on measured data.

A claim's check receives the experiment's data (see :class:`Data`) and returns a
:class:`Verdict`: whether it held, the measured numbers behind that, and for a failure the
likely reason (written in the catalogue next to the claim, since it depends on the
experiment). Checks are plain functions so they can be tested on synthetic data.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import pandas as pd


@dataclass(frozen=True)
class Verdict:
    passed: bool
    measured: str


@dataclass
class Data:
    """What a check sees: per-flow run rows (``runs``, one row per run and flow, with the
    experiment's tags as columns), optionally the time series (``timeseries``), and the
    rows of other experiments it depends on (``others[id]``)."""

    runs: pd.DataFrame
    timeseries: pd.DataFrame | None = None
    cc_events: pd.DataFrame | None = None
    others: dict[str, "Data"] = field(default_factory=dict)


@dataclass(frozen=True)
class Claim:
    id: str
    #: The paper's statement (the papers are in docs/references.md).
    text: str
    check: Callable[[Data], Verdict]
    #: Why it may not hold in ccsim (printed with a FAIL).
    if_fails: str


@dataclass(frozen=True)
class ClaimResult:
    experiment: str
    claim: str
    text: str
    status: str  # "PASS", "FAIL" or "ERROR"
    measured: str
    reason: str  # for FAIL/ERROR: the likely reason; empty for PASS


def evaluate(experiment: str, claim: Claim, data: Data) -> ClaimResult:
    try:
        v = claim.check(data)
    except Exception as exc:  # a check that cannot be evaluated is reported, not hidden
        return ClaimResult(experiment, claim.id, claim.text, "ERROR", f"{type(exc).__name__}: {exc}", claim.if_fails)
    return ClaimResult(
        experiment, claim.id, claim.text, "PASS" if v.passed else "FAIL", v.measured, "" if v.passed else claim.if_fails
    )


# -- helpers shared by the catalogue's checks -------------------------------------------


def _with_ci(g) -> pd.DataFrame:
    """mean, std (population, as the claims use), sd (sample) and ci95 (the half-width of the
    95 % confidence interval of the mean, ccsim.stats) of each group."""
    from ..stats import ci_half_width

    out = pd.DataFrame({"mean": g.mean(), "std": g.std(ddof=0), "sd": g.std(ddof=1), "n": g.size()})
    out["ci95"] = [ci_half_width(sd, n) for sd, n in zip(out["sd"], out["n"])]
    return out.reset_index()


def totals(runs: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Mean (over seeds) total throughput per group, with the spread (std, sd, ci95) and n."""
    per_run = runs.drop_duplicates(["key"])[by + ["key", "total_throughput_mbps"]]
    return _with_ci(per_run.groupby(by, dropna=False)["total_throughput_mbps"])


def flow_means(runs: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Mean (over seeds) throughput of each flow position per group: columns by + flow + mean +
    std + sd + n + ci95."""
    return _with_ci(runs.groupby(by + ["flow"], dropna=False)["throughput_mbps"])


def fmt(x: float, unit: str = "Mbps") -> str:
    return f"{x:.2f} {unit}".strip()


def ratio_text(a: float, b: float) -> str:
    return "inf" if b == 0 else f"{a / b:.2f}x"


def jain(xs) -> float:
    xs = [float(x) for x in xs]
    s, s2 = sum(xs), sum(x * x for x in xs)
    return 1.0 if s2 == 0 else s * s / (len(xs) * s2)
