"""What a user looks at is right: algorithm pages, wireless UDP time series, plots that draw a
flow only while it is active, the drop count, seed labels on reproduction figures, and the
access-link warning (issue 11, item 6)."""

from __future__ import annotations

import warnings

import pandas as pd
import pytest

import ccsim
from ccsim.cli import cli
from ccsim.experiments import figures
from ccsim.experiments.claims import Data

from _support import EXAMPLES, base_scenario


def _lines_by_label(ax) -> dict[str, object]:
    return {line.get_label(): line for line in ax.get_lines()}


def test_algorithm_page_has_no_markup(runner):
    res = runner.invoke(cli, ["algorithms", "cubic"])
    assert res.exit_code == 0, res.stderr
    assert "[bold]" not in res.stdout and "[/bold]" not in res.stdout
    assert res.stdout.startswith("cubic: CUBIC")


def test_wireless_udp_run_has_time_series(tmp_path, runner):
    sc = ccsim.load(EXAMPLES / "wireless_udp.toml").replace("duration", "3s")
    res = ccsim.run(sc)
    ts = res.timeseries
    # One row per flow and 100 ms sample.
    assert len(ts) == 30
    assert set(ts["cc"].astype(str)) == {"udp"}
    # The delivery rate is the payload received: over the run it averages to the throughput.
    thr = res.flows[0]["throughput_mbps"]
    assert ts["delivery_rate_mbps"].mean() == pytest.approx(thr, rel=0.02)
    assert ts["bytes_acked"].iloc[-1] * 8 / 3e6 == pytest.approx(thr, rel=1e-9)
    # The plot draws the flow, and the lower panel the sender's queue (no cwnd for UDP).
    fig = res.plot()
    rate_ax, lower_ax = fig.axes[:2]
    assert "flow 0 (udp)" in _lines_by_label(rate_ax)
    assert lower_ax.get_ylabel() == "sender's queue (packets)"
    # And --out writes the rows.
    path = tmp_path / "w.toml"
    path.write_text((EXAMPLES / "wireless_udp.toml").read_text().replace('duration = "30s"', 'duration = "3s"'))
    out = tmp_path / "out"
    cli_res = runner.invoke(cli, ["run", str(path), "--out", str(out)])
    assert cli_res.exit_code == 0, cli_res.stderr
    assert len(pd.read_parquet(out / "timeseries.parquet")) == 30


def test_plot_draws_a_flow_only_while_it_is_active():
    sc = ccsim.Scenario.from_dict(base_scenario()).replace("duration", "6s")
    sc = sc.replace("flows", [{"cc": "cubic", "stop": "4s"}, {"cc": "bbr", "start": "2s"}])
    res = ccsim.run(sc)
    ts = res.timeseries
    # The data has rows for every flow at every sample (the plot, not the data, chooses).
    assert len(ts) == 2 * 60
    fig = res.plot()
    for ax in fig.axes[:2]:
        lines = _lines_by_label(ax)
        cubic = lines["flow 0 (cubic)"].get_xdata()
        bbr = lines["flow 1 (bbr)"].get_xdata()
        assert min(cubic) == pytest.approx(0.1) and max(cubic) == pytest.approx(4.0)
        assert min(bbr) == pytest.approx(2.1) and max(bbr) == pytest.approx(6.0)


def test_summary_line_shows_buffer_drops_and_random_losses(write_scenario, runner):
    d = base_scenario()
    d["bottleneck"].update(buffer="10pkt", loss=0.01)
    res = runner.invoke(cli, ["run", str(write_scenario(d))])
    assert res.exit_code == 0, res.stderr
    bn = ccsim.run(ccsim.Scenario.from_dict(d)).bottleneck
    assert bn["drops"] > 0 and bn["random_losses"] > 0
    assert f"drops {bn['drops']:,} buffer + {bn['random_losses']:,} random" in res.stdout


def _e3_data(n_seeds: int) -> Data:
    runs, series = [], []
    for seed in range(1, n_seeds + 1):
        key = f"k{seed}"
        for flow, (cc, start, end) in enumerate([("bbr", 0.0, 3.0), ("cubic", 1.0, 3.0)]):
            runs.append({"key": key, "seed": seed, "flow": flow, "cc": cc, "start_s": start, "end_s": end})
            for i in range(1, 31):
                series.append({"key": key, "flow": flow, "cc": cc, "time_s": i / 10,
                               "delivery_rate_mbps": 1.0, "srtt_ms": 40.0, "rtprop_ms": 40.0})
    return Data(runs=pd.DataFrame(runs), timeseries=pd.DataFrame(series))


@pytest.mark.parametrize("n_seeds, title", [(3, "seed 1 (one of 3 runs: seeds 1-3)"), (1, "seed 1")])
def test_reproduction_time_series_say_which_seed(monkeypatch, tmp_path, n_seeds, title):
    saved = []
    monkeypatch.setattr(figures, "_save", lambda fig, stem: saved.append(fig))
    d = _e3_data(n_seeds)
    for draw in (figures.e3_time, figures.e3_rtprop):
        draw(d, tmp_path / "fig")
        ax = saved[-1].axes[0]
        assert ax.get_title() == title
        # The CUBIC flow starts at 1 s: nothing is drawn for it before.
        cubic = [ln for ln in ax.get_lines() if ln.get_label() == "CUBIC"][0]
        assert min(cubic.get_xdata()) == pytest.approx(1.1)


def test_access_link_limit_is_a_warning(write_scenario, runner):
    d = base_scenario()
    d["flows"] = [{"cc": "cubic", "access_rate": "5Mbps"}, {"cc": "cubic"}]
    sc = ccsim.Scenario.from_dict(d)
    with pytest.warns(ccsim.CcsimWarning, match=r"^flow 0: its access link \(5 Mbps\) was busy"):
        res = ccsim.run(sc)
    assert len(res.warnings) == 1 and "not the bottleneck (10 Mbps)" in res.warnings[0]
    assert res.to_dict()["warnings"] == res.warnings
    cli_res = runner.invoke(cli, ["run", str(write_scenario(d))])
    assert cli_res.exit_code == 0
    lines = [ln for ln in cli_res.stderr.splitlines() if ln]
    assert lines == [f"warning: {res.warnings[0]}"]
    # The default access link (1 Gbps) never limits: no warning.
    with warnings.catch_warnings():
        warnings.simplefilter("error", ccsim.CcsimWarning)
        assert ccsim.run(ccsim.Scenario.from_dict(base_scenario())).warnings == []
