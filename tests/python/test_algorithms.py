"""The seed algorithms through the public API and the CLI: listing, per-algorithm detail,
parameter validation, and the event table and telemetry columns they add."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import ccsim
from ccsim.cli import cli

SEED_ALGOS = ["newreno", "cubic", "bbr", "ucc", "bbr-expire", "bbr-rtprop", "bbrplus"]


def test_python_api_lists_every_algorithm_with_documented_parameters():
    algos = {a["name"]: a for a in ccsim.algorithms()}
    for name in SEED_ALGOS:
        assert name in algos
        assert algos[name]["source"]
        for p in algos[name]["params"]:
            assert {"name", "default", "unit", "range", "doc"} <= set(p)
    rate_th = {p["name"]: p for p in algos["bbr-expire"]["params"]}["rate_th"]
    assert rate_th["default"] == 2.4
    alpha = {p["name"]: p for p in algos["bbr-rtprop"]["params"]}["alpha"]
    assert alpha["default"] == 0.5


def test_cli_shows_one_algorithm_and_rejects_unknown_names():
    runner = CliRunner()
    res = runner.invoke(cli, ["algorithms", "bbr-rtprop", "--json"])
    assert res.exit_code == 0, res.output
    algo = json.loads(res.output)
    assert algo["name"] == "bbr-rtprop"
    assert {p["name"] for p in algo["params"]} >= {"rate_th", "alpha", "restart_window"}
    res = runner.invoke(cli, ["algorithms", "nope"])
    assert res.exit_code == 2
    assert "unknown algorithm 'nope'" in res.output and "bbrplus" in res.output


def _scenario(cc: str, params: dict | None = None, **bottleneck) -> ccsim.Scenario:
    b = {"rate": "10Mbps", "delay": "20ms", "buffer": "10bdp", **bottleneck}
    return ccsim.Scenario.from_dict(
        {"duration": "30s", "bottleneck": b, "flows": [{"cc": cc, "params": params or {}}, {"cc": "cubic"}]}
    )


def test_parameters_are_validated_with_algorithm_parameter_and_range():
    with pytest.raises(ccsim.ScenarioError) as e:
        ccsim.run(_scenario("bbr-rtprop", {"alpha": 1.5}))
    msg = str(e.value)
    assert "flows[0].params.alpha" in msg and "bbr-rtprop" in msg and "[0, 1]" in msg
    with pytest.raises(ccsim.ScenarioError) as e:
        ccsim.run(_scenario("ucc", {"rate_th": 2}))
    assert "unknown parameter" in str(e.value) and "alpha" in str(e.value)


def test_rtprop_updates_are_events_with_the_triggering_rtt():
    res = ccsim.run(_scenario("bbr-rtprop", {"alpha": 1.0}), seed=1)
    ev = res.cc_events
    upd = ev[ev.kind == "rtprop_update"]
    assert len(upd) > 0
    # value = new RTprop (ms), value2 = the RTT sample; alpha = 1 adopts the RTT.
    assert (upd.value == upd.value2).all()
    assert (upd.value2 > 2.0 * 40.0 * 0.99).all()
    assert list(ev.columns) == ["time_s", "flow", "cc", "kind", "value", "value2"]


def test_forced_expire_events_and_rho_telemetry(tmp_path):
    res = ccsim.run(_scenario("bbr-expire"), seed=1)
    fe = res.cc_events[res.cc_events.kind == "forced_expire"]
    assert len(fe) > 0 and (fe.value2 / fe.value > 2.4).all()
    plus = ccsim.run(_scenario("bbrplus"), seed=1)
    ts = plus.timeseries
    rho = ts[ts.flow == 0].rho.dropna()
    assert len(rho) > 0 and ((rho >= 0) & (rho <= 1)).all()
    assert isinstance(plus.events, int) and plus.events > 0, "events stays the event count"
    out = plus.to_parquet(tmp_path / "run")
    assert (out / "cc_events.parquet").exists()


def test_every_parameter_of_every_algorithm_is_range_checked():
    """For each algorithm and each of its parameters: the default runs, and a value outside the
    declared range (or not a bool for a flag) is refused naming the flow, the parameter and the
    accepted range."""
    checked = 0
    for algo in ccsim.algorithms():
        if algo.get("registered"):
            continue
        for p in algo["params"]:
            if p["unit"] == "bool":
                bad = 2
            elif p["max"] is not None and p["max"] < 1e300:
                bad = p["max"] * 2 + 1
            elif p["min"] is not None and p["min"] > -1e300:
                bad = p["min"] - 1
            else:
                continue
            sc = ccsim.Scenario.from_dict({"duration": "1s", "bottleneck": {"rate": "10Mbps", "delay": "5ms", "buffer": "10pkt"},
                                           "flows": [{"cc": algo["name"], "params": {p["name"]: bad}}]})
            with pytest.raises(ccsim.ScenarioError) as e:
                sc.validate()
            msg = str(e.value)
            assert f"flows[0].params.{p['name']}" in msg and p["range"] in msg, (algo["name"], p["name"], msg)
            checked += 1
    assert checked >= 100
