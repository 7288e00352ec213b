"""[[workloads]] and wired UDP from Python and the CLI: a CDF file is read relative to the
scenario file; workload flows carry size, FCT and slowdown in the flows table; bad CDFs, loads,
built-ins and missing files are one-line errors (exit 2 from the CLI)."""

from __future__ import annotations

import math

import pytest

import ccsim
from ccsim.cli import cli

from _support import assert_one_line_error

BASE = {
    "duration": "20s",
    "bottleneck": {"rate": "100Mbps", "delay": "5ms", "buffer": "2bdp"},
    "tcp": {"delayed_ack": False},
    "flows": [{"protocol": "udp", "rate": "5Mbps", "on_time": "100ms", "off_time": "100ms"}],
    "workloads": [{"cc": "cubic", "sizes": "hadoop", "load": 0.3}],
}


def test_workload_flows_in_the_flows_table_and_summary():
    res = ccsim.run(BASE)
    df = res.summary
    wl = df[df["workload"].notna()]
    assert len(wl) > 500
    for col in ("size_bytes", "start_s", "fct_s", "slowdown", "ideal_fct_s"):
        assert col in df.columns
    done = wl[wl["fct_s"].notna()]
    assert (done["fct_s"] >= done["ideal_fct_s"] * (1 - 1e-9)).all()
    w = res.to_dict()["workloads"][0]
    assert w["sizes"] == "hadoop" and 0 < w["offered_load"] < 1  # over 20 s; the long-run match is a Rust test
    assert [b["bucket"] for b in w["buckets"]] == ["all", "<100KB", "100KB-10MB", ">10MB"]
    udp = res.to_dict()["flows"][0]
    assert udp["cc"] == "udp" and udp["datagrams_sent"] == udp["datagrams_received"] + udp["datagrams_lost"] + udp["datagrams_in_flight"]


def test_a_cdf_file_is_relative_to_the_scenario(write_scenario, runner, tmp_path):
    (tmp_path / "cdfs").mkdir()
    (tmp_path / "cdfs" / "tiny.cdf").write_text("# size percent\n1000 0\n5000 100\n", encoding="utf-8")
    d = {**BASE, "workloads": [{"cc": "newreno", "sizes": "cdfs/tiny.cdf", "arrivals": "50/s"}]}
    path = write_scenario(d)
    res = runner.invoke(cli, ["run", str(path)])
    assert res.exit_code == 0, res.output
    assert "workload 0" in res.output
    r = ccsim.run(ccsim.load(path)).to_dict()
    assert r["workloads"][0]["sizes"].endswith("tiny.cdf")
    assert 1000 <= min(f["size_bytes"] for f in r["flows"] if f.get("workload") is not None)


@pytest.mark.parametrize(
    "cdf, words",
    [
        ("0 0\n1000 60\n", ["does not reach 100%"]),
        ("0 0\n1000 60\n500 100\n", ["line 3", "not monotonic"]),
    ],
)
def test_bad_cdf_is_one_line(runner, tmp_path, cdf, words):
    (tmp_path / "bad.cdf").write_text(cdf, encoding="utf-8")
    d = {**BASE, "workloads": [{"cc": "cubic", "sizes": "bad.cdf", "load": 0.3}]}
    path = tmp_path / "net.toml"
    from _support import to_toml

    path.write_text(to_toml(d), encoding="utf-8")
    res = runner.invoke(cli, ["run", str(path)])
    assert res.exit_code == 2
    lines = [ln for ln in res.stderr.splitlines() if ln]
    assert len(lines) == 1 and "workloads[0].sizes" in lines[0] and "bad.cdf" in lines[0]
    for w in words:
        assert w in lines[0]


def test_missing_cdf_file(runner, tmp_path):
    from _support import to_toml

    d = {**BASE, "workloads": [{"cc": "cubic", "sizes": "nope.cdf", "load": 0.3}]}
    path = tmp_path / "net.toml"
    path.write_text(to_toml(d), encoding="utf-8")
    res = runner.invoke(cli, ["run", str(path)])
    assert res.exit_code == 2
    assert "workloads[0].sizes: cannot read CDF file 'nope.cdf'" in res.stderr
    with pytest.raises(ccsim.ScenarioError, match="cannot read CDF file"):
        ccsim.run(ccsim.load(path))


@pytest.mark.parametrize(
    "edit, field, words",
    [
        ({"load": 1.0}, "workloads[0].load", ["(0, 1)"]),
        ({"sizes": "webserch"}, "workloads[0].sizes", ["unknown built-in", "websearch", "hadoop"]),
    ],
)
def test_bad_workload_is_one_line(runner, tmp_path, edit, field, words):
    d = {**BASE, "workloads": [{**BASE["workloads"][0], **edit}]}
    assert_one_line_error(runner, tmp_path, d, field, words)


def test_no_nan_in_a_run_without_workloads():
    res = ccsim.run({"duration": "2s", "bottleneck": {"rate": "10Mbps", "delay": "5ms"}, "flows": [{"cc": "cubic"}]})
    assert "workloads" not in res.to_dict()
    assert not any(k in res.to_dict()["flows"][0] for k in ("fct_s", "slowdown"))
    assert math.isfinite(res.to_dict()["flows"][0]["throughput_mbps"])
