"""The spread of repeated runs (ccsim.stats): the 95 % confidence interval of a known sample,
and where sweeps and reproductions show it."""

from __future__ import annotations

import math
import re

import pytest

from ccsim import stats
from ccsim.cli import cli

from _support import base_scenario, to_toml


def test_the_confidence_interval_of_a_known_sample():
    # 1..5: mean 3, s = sqrt(2.5) = 1.5811; t(0.975, 4) = 2.7764 (tables), so the half-width is
    # 2.7764 x 1.5811 / sqrt(5) = 1.9632.
    s = stats.spread([1, 2, 3, 4, 5])
    assert (s.mean, s.n) == (3.0, 5)
    assert s.sd == pytest.approx(math.sqrt(2.5))
    assert stats.t_quantile(4) == pytest.approx(2.7764, abs=1e-4)
    assert s.half_width == pytest.approx(1.9632, abs=1e-4)
    assert (s.low, s.high) == pytest.approx((3 - 1.9632, 3 + 1.9632), abs=1e-4)
    # Large samples approach the normal 1.96; 30 runs: t(0.975, 29) = 2.0452.
    assert stats.t_quantile(29) == pytest.approx(2.0452, abs=1e-4)
    assert stats.t_quantile(10_000) == pytest.approx(1.96, abs=1e-3)
    # One run has no spread; NaN values are left out; identical values have none.
    one = stats.spread([7.0, float("nan")])
    assert one.n == 1 and math.isnan(one.sd) and math.isnan(one.half_width) and stats.text(one) == "7.000"
    assert stats.spread([2.0, 2.0, 2.0]).half_width == 0.0
    assert stats.text(s, ".2f") == "3.00 ± 1.96"


def test_a_sweep_summary_shows_the_interval_of_its_runs(tmp_path, runner):
    sc = base_scenario()
    sc["bottleneck"]["loss"] = 0.01
    sc["sweep"] = {"bottleneck.buffer": ["20pkt", "50pkt"]}
    sc["runs"] = 3
    path = tmp_path / "sweep.toml"
    path.write_text(to_toml(sc))
    out = tmp_path / "out"
    res = runner.invoke(cli, ["sweep", str(path), "--out", str(out), "--jobs", "2"])
    assert res.exit_code == 0, res.stderr
    assert "95 % confidence interval" in res.stdout
    import ccsim

    df = ccsim.results.load(out).drop_duplicates("key")
    for buf, g in df.groupby("buffer"):
        s = stats.spread(g["total_throughput_mbps"])
        assert s.n == 3 and s.half_width > 0
        row = next(line for line in res.stdout.splitlines() if re.match(rf"\s*{buf}\s", line))
        assert stats.text(s) in row and f"{s.sd:.3f}" in row, (row, stats.text(s))


def test_the_reproduction_report_shows_the_spread_of_repeated_runs(tmp_path, runner):
    from ccsim.experiments import reproduce

    rep = reproduce(["e2-fig2"], out=tmp_path, quick=True, runs=2, jobs=2, progress=False)
    md = (tmp_path / "report.md").read_text()
    assert "Spread over the repetitions" in md and "| buffer_bdp | runs | mean Mbps | sd | 95 % CI |" in md
    o = rep.outcomes[0]
    import ccsim

    df = ccsim.results.load(tmp_path, "e2-fig2").drop_duplicates("key")
    for values, n, mean, sd, hw in o.spread_rows:
        s = stats.spread(df[df.buffer_bdp == values[0]]["total_throughput_mbps"])
        assert (n, mean, sd, hw) == pytest.approx((s.n, s.mean, s.sd, s.half_width), nan_ok=True)
        assert f"| {values[0]} | 2 | {mean:.3f} |" in md
