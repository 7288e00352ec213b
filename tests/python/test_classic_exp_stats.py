"""validation/ns3/classic_exp.py --stats: the per-seed Δ of ccsim against an ns-3 set-up, with
its mean, sd and Student-t 95 % interval (docs/validation.md, the seed-bound classic points).
Pure arithmetic on run summaries; no ns-3 run."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

CLASSIC_EXP_PY = Path(__file__).resolve().parents[2] / "validation" / "ns3" / "classic_exp.py"


@pytest.fixture(scope="module")
def C():
    spec = importlib.util.spec_from_file_location("ccsim_ns3_classic_exp", CLASSIC_EXP_PY)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def test_classic_exp_seed_deltas_pair_seed_by_seed(C):
    ccs = [{"total": 12.0, "rtt": 44.0}, {"total": 9.0, "rtt": 40.0}]
    ns3 = [{"total": 10.0, "rtt": 40.0}, {"total": 10.0, "rtt": 40.0}]
    assert C.seed_deltas(ccs, ns3, "total") == pytest.approx([0.2, -0.1])
    assert C.seed_deltas(ccs, ns3, "rtt") == pytest.approx([0.1, 0.0])
    with pytest.raises(ValueError):
        C.seed_deltas(ccs, ns3[:1], "total")


def test_classic_exp_stats_rows_give_mean_sd_and_t_interval(C):
    # Δ total per seed: +10 %, +20 %, +30 %: mean +20 %, sd 10 %, half-width t(0.975, 2) x 10 / sqrt 3
    # = 4.303 x 5.774 = 24.8 %; Δ RTT 0 on every seed.
    ccs = [{"total": t, "rtt": 40.0} for t in (11.0, 12.0, 13.0)]
    ns3 = [{"total": 10.0, "rtt": 40.0}] * 3
    head, rule, row = C.stats_rows(ccs, [("ns-3 stock", ns3)])
    assert head.count("|") == rule.count("|") == row.count("|") == 9
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells == ["ns-3 stock", "3", "+20.0%", "10.0%", "-4.8% … +44.8%", "+0.0%", "0.0%", "+0.0% … +0.0%"]
