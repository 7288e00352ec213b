"""Resource limits (a run too big for its memory budget is refused before it starts, with the
estimate) and Ctrl-C within half a second whatever a simulated second costs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pandas as pd
import pandas.testing as pdt
import pytest

import ccsim
from ccsim import ScenarioError, limits
from ccsim.result import TIMESERIES_COLUMNS
from ccsim.sweep import execute, expand

from _support import base_scenario, default_sigint, to_toml


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CCSIM_DEBUG", limits.ENV_VAR)}
    env.update(extra)
    return env


def _cap_memory() -> None:
    """preexec_fn: a child that tried to run what must be refused fails on allocation (4 GB
    of address space) instead of taking the machine's memory; and SIGINT as by default."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (4 * 2**30, 4 * 2**30))
    default_sigint()


def _dumbbell(duration: str, flows: list[dict], **top) -> dict:
    return {"duration": duration, **top, "bottleneck": {"rate": "10Mbps", "delay": "20ms"}, "flows": flows}


# The three runs the issue found killing the process from inside the engine.
TOO_BIG = {
    # 2 flows x 10^9 samples
    "1ms-over-1e6s": (_dumbbell("1000000s", [{"cc": "cubic", "count": 2}], sample_interval="1ms"), {}),
    # the default 100 ms sampling over 10^6 s: 2 x 10^7 rows, more than a limit of 8 GB
    "100ms-over-1e6s": (_dumbbell("1000000s", [{"cc": "cubic", "count": 2}]), {limits.ENV_VAR: "8GB"}),
    # 3 x 100,000 flows
    "3x100000-flows": (_dumbbell("10s", [{"cc": c, "count": 100000} for c in ("cubic", "bbr", "newreno")]), {}),
    # 10,000 short flows a second for 10 minutes: 6 million rows of finished flows
    "workload-1e4-per-s": ({"duration": "600s", "bottleneck": {"rate": "100Gbps", "delay": "1ms"},
                            "workloads": [{"cc": "cubic", "sizes": "hadoop", "arrivals": "10000/s"}]}, {limits.ENV_VAR: "8GB"}),
}


@pytest.mark.parametrize("case", list(TOO_BIG))
def test_a_run_too_big_is_refused_before_it_starts_with_the_estimate(case, write_scenario, ccsim_cmd):
    scenario, env = TOO_BIG[case]
    path = write_scenario(scenario)
    try:
        proc = subprocess.run([ccsim_cmd, "run", str(path)], capture_output=True, text=True,
                              env=_env(**env), timeout=60, preexec_fn=_cap_memory)
    except subprocess.TimeoutExpired:
        pytest.fail("the run was not refused: it was still running after 60 s")
    assert proc.returncode == 2, proc.stderr[-2000:]
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    line = lines[0]
    assert line.startswith(f"error: {path}: "), line
    if case == "workload-1e4-per-s":
        # 6,000,000 + 4 x sqrt(6,000,000) rows x 10,000 bytes (WORKLOAD_ROW_BYTES)
        assert "this run would need about 60.1 GB (workload flows' rows 60.1 GB (up to 6,009,798 flows)" in line, line
        assert "more than the memory limit of " in line and "fewer flows or a shorter duration" in line, line
    elif case == "3x100000-flows":
        assert "flows[1].count: 100000 brings the flows of all entries to 200000, too many" in line, line
        # 200,000 flows x 24,000 bytes (TCP_FLOW_BYTES)
        assert "would need about 4.8 GB" in line and "at most 100000 flows in all [[flows]] entries" in line, line
    else:
        rows = "2,000,000,000" if case == "1ms-over-1e6s" else "20,000,000"
        assert "this run would need about " in line and f"time series " in line and f"({rows} rows)" in line, line
        assert "2 flows 48.0 KB" in line, line
        assert "more than the memory limit of " in line, line
        if env:
            assert "more than the memory limit of 8.0 GB, set by CCSIM_MEMORY_LIMIT" in line, line
        for hint in ("--no-timeseries", "sample_interval", "--memory-limit", "CCSIM_MEMORY_LIMIT"):
            assert hint in line, (hint, line)


def test_the_python_api_refuses_with_a_scenario_error_and_accepts_just_under_the_limit():
    sc = _dumbbell("2s", [{"cc": "cubic", "count": 2}], sample_interval="10ms")
    est = limits.estimate(sc)
    parts = ("flow_bytes", "packet_bytes", "timeseries_bytes", "cc_event_bytes")
    assert est["total_bytes"] == sum(est[p] for p in parts)
    assert (est["flows"], est["timeseries_rows"], est["cc_event_rows"]) == (2, 400, 0)
    # Exactly the estimate fits, whichever way the limit is written.
    res = ccsim.run(sc, memory_limit=est["total_bytes"])
    assert len(res.timeseries) == 400
    res = ccsim.run(sc, memory_limit=f"{est['total_bytes']}B")
    assert len(res.timeseries) == 400
    with pytest.raises(ScenarioError) as e:
        ccsim.run(sc, memory_limit=est["total_bytes"] - 1)
    msg = str(e.value)
    assert msg.startswith(f"this run would need about {est['total_bytes'] / 1e3:.1f} KB (")
    assert "(400 rows)" in msg and "more than the memory limit of" in msg and ", as set; " in msg
    # Without its time series the same run needs less and fits.
    small = est["total_bytes"] - est["timeseries_bytes"]
    assert limits.estimate(sc, timeseries=False)["total_bytes"] == small
    assert len(ccsim.run(sc, timeseries=False, memory_limit=small).timeseries) == 0


def test_ordinary_workload_runs_are_not_refused():
    """The example with a workload, and the issue's 10-minute run of about 100,000 short flows
    (1-20 KB at 167 a second), fit in 2 GB with their rows counted; the example runs under
    the limit its estimate gives."""
    from _support import EXAMPLES

    est = limits.estimate(EXAMPLES / "short_flows.toml", timeseries=False)
    assert 0 < est["workload_rows"] < 1000 and est["total_bytes"] < 2e9
    res = ccsim.run(EXAMPLES / "short_flows.toml", timeseries=False, memory_limit=est["total_bytes"])
    assert len(res.to_dict()["flows"]) - 2 <= est["workload_rows"]
    long = {"duration": "600s", "bottleneck": {"rate": "100Mbps", "delay": "2ms", "buffer": "2bdp"},
            "workloads": [{"cc": "cubic", "sizes": "hadoop", "arrivals": "167/s"}]}
    est = limits.estimate(long, timeseries=False)
    assert est["workload_rows"] == 101_467 and est["total_bytes"] < 2e9


def test_the_limit_comes_from_the_argument_then_the_environment_then_the_machine(monkeypatch):
    monkeypatch.delenv(limits.ENV_VAR, raising=False)
    total = limits.physical_memory()
    assert total is not None and total > 0  # Linux and macOS both report it
    assert limits.default_limit() == (total // 2, f"the default: half of this machine's {total / 1e9:.1f} GB of memory")
    assert limits.default_limit(4)[0] == total // 2 // 4
    assert limits.default_limit(4)[1].endswith(", shared by 4 runs at once")
    assert limits.resolve() == limits.default_limit()
    monkeypatch.setenv(limits.ENV_VAR, "3GiB")
    assert limits.resolve() == (3 * 2**30, f"set by {limits.ENV_VAR}")
    assert limits.resolve("2GB") == (2 * 10**9, "as set")
    monkeypatch.setenv(limits.ENV_VAR, "plenty")
    with pytest.raises(ScenarioError, match=r"^CCSIM_MEMORY_LIMIT: 'plenty' is not a size; accepted: a number of bytes"):
        ccsim.run(base_scenario())


@pytest.mark.parametrize("text, value", [
    ("8GB", 8 * 10**9), ("1.5GB", 1_500_000_000), ("512MiB", 512 * 2**20), ("4 gib", 4 * 2**30),
    ("1000", 1000), (1000, 1000), ("2TB", 2 * 10**12), ("64KB", 64_000), ("1e9", 10**9),
])
def test_sizes(text, value):
    assert limits.parse_size(text, "x") == value


@pytest.mark.parametrize("bad", ["", "lots", "8 GBs", "-1GB", "0", "0.5", True, None, "nan", "1e30TB"])
def test_bad_sizes_are_one_line_errors(bad):
    with pytest.raises(ScenarioError) as e:
        limits.parse_size(bad, "memory_limit")
    assert str(e.value).startswith("memory_limit: ") and "accepted: a number of bytes" in str(e.value)


def test_cli_memory_limit_option(runner, scenario_file):
    res = runner.invoke(cli_main(), ["run", str(scenario_file), "--memory-limit", "1KB"])
    assert res.exit_code == 2
    assert res.stderr.startswith(f"error: {scenario_file}: this run would need about ")
    assert "more than the memory limit of 1.0 KB, as set;" in res.stderr
    res = runner.invoke(cli_main(), ["run", str(scenario_file), "--memory-limit", "a lot"])
    assert res.exit_code == 2
    assert res.stderr.strip() == ("error: --memory-limit: 'a lot' is not a size; accepted: a number of bytes or a size such as "
                                  '"8GB", "1.5GB" or "512MiB" (units B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)')
    res = runner.invoke(cli_main(), ["run", str(scenario_file), "--memory-limit", "1GB", "--json"])
    assert res.exit_code == 0, res.stderr


def cli_main():
    from ccsim.cli import cli

    return cli


def test_a_queue_that_outgrows_the_limit_stops_the_run_with_an_explanation(write_scenario, ccsim_cmd):
    # A NewReno flow whose access link is slower than the bottleneck never loses a packet: its
    # window, and its unlimited access queue, grow for as long as the run lasts.
    path = write_scenario({"duration": "100000s", "bottleneck": {"rate": "100Mbps", "delay": "10ms"},
                           "flows": [{"cc": "newreno", "access_rate": "10Mbps"}]})
    try:
        proc = subprocess.run([ccsim_cmd, "run", str(path), "--no-timeseries", "--memory-limit", "50MB"],
                              capture_output=True, text=True, env=_env(), timeout=60, preexec_fn=_cap_memory)
    except subprocess.TimeoutExpired:
        pytest.fail("the run was not stopped within 60 s")
    assert proc.returncode == 2, proc.stderr[-2000:]
    line = proc.stderr.strip()
    assert "\n" not in line and line.startswith(f"error: {path}: stopped after "), line
    assert "s of the 100000.000 s simulated: the packets queued and in flight took " in line, line
    assert "more than the memory limit of 50.0 MB, as set; " in line and "access_rate" in line, line


# -- time series off --------------------------------------------------------------------------


SCENARIOS_FOR_IDENTITY = {
    "dumbbell": {
        "duration": "8s", "sample_interval": "10ms", "seed": 4,
        "bottleneck": {"rate": "20Mbps", "delay": "15ms", "buffer": "30pkt", "loss": 0.002, "ack_loss": 0.001},
        "flows": [{"cc": "cubic"}, {"cc": "bbr", "start": "1s"}, {"cc": "cdg", "stop": "6s"},
                  {"cc": "bbr-rtprop", "params": {"rate_th": 1.1}}, {"cc": "ucc", "size": "2MB"}],
    },
    "wireless": {
        "duration": "6s", "sample_interval": "7ms", "seed": 2,
        "wireless": {"hops": 3, "environment": "indoor", "host": "rpi3"},
        "flows": [{"cc": "bbr-expire", "params": {"rate_th": 1.1}}, {"cc": "chd", "start": "1s"},
                  {"protocol": "udp", "rate": "300pps", "src": 1, "dst": 3}],
    },
}


@pytest.mark.parametrize("name", list(SCENARIOS_FOR_IDENTITY))
def test_without_a_time_series_the_run_is_the_same(name):
    sc = SCENARIOS_FOR_IDENTITY[name]
    with_ts = ccsim.run(sc)
    without = ccsim.run(sc, timeseries=False)
    a, b = with_ts.to_dict(), without.to_dict()
    a.pop("wall_seconds"), b.pop("wall_seconds")
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)  # bit-identical, events included
    assert len(with_ts.timeseries) > 1000 and len(with_ts.cc_events) > 0
    pdt.assert_frame_equal(without.cc_events, with_ts.cc_events)
    ts = without.timeseries
    assert len(ts) == 0 and list(ts.columns) == list(TIMESERIES_COLUMNS)
    for col in TIMESERIES_COLUMNS:  # the types a table with rows has (queue_state: object or float)
        if col not in ("cc", "queue_state"):
            assert ts[col].dtype == with_ts.timeseries[col].dtype, col
    assert ts["cc"].dtype == "category"
    with pytest.raises(ScenarioError, match="^timeseries: expected true or false"):
        ccsim.run(sc, timeseries="no")


def test_cli_no_timeseries_with_out_writes_the_files_and_says_there_is_no_plot(runner, scenario_file, tmp_path):
    out = tmp_path / "out"
    res = runner.invoke(cli_main(), ["run", str(scenario_file), "--out", str(out)])
    assert res.exit_code == 0 and (out / "throughput_cwnd.png").exists()
    res = runner.invoke(cli_main(), ["run", str(scenario_file), "--no-timeseries", "--out", str(out), "--json"])
    assert res.exit_code == 0, res.stderr
    full = runner.invoke(cli_main(), ["run", str(scenario_file), "--json"])
    assert _without_wall(json.loads(res.stdout)) == _without_wall(json.loads(full.stdout))
    assert "throughput_cwnd.png not drawn: the run has no time series" in res.stderr
    assert not (out / "throughput_cwnd.png").exists()  # not the earlier run's plot
    ts = pd.read_parquet(out / "timeseries.parquet")
    assert len(ts) == 0 and list(ts.columns) == list(TIMESERIES_COLUMNS)
    assert len(pd.read_parquet(out / "flows.parquet")) == 2
    res = runner.invoke(cli_main(), ["run", str(scenario_file), "--no-timeseries", "--out", str(out)])
    assert res.exit_code == 0
    assert "throughput_cwnd.png not drawn: the run has no time series" in res.stdout


def _without_wall(d: dict) -> dict:
    d = dict(d)
    d.pop("wall_seconds", None)
    return d


def test_the_plot_draws_at_most_50_flows_and_says_so():
    # A flow's lines cost 40-60 KB and 10-20 ms to draw (`ccsim run --out` with 20,000 flows
    # took 1.26 GB and 404 s, bench/results/flow_memory.md): the plot draws the first 50.
    from ccsim.plots import MAX_PLOTTED_FLOWS

    assert MAX_PLOTTED_FLOWS == 50
    res = ccsim.run(_dumbbell("1s", [{"cc": "cubic", "count": 60}]))
    assert res.timeseries["flow"].nunique() == 60
    fig = res.plot()
    rate_ax, cwnd_ax = fig.axes[:2]
    drawn = [line.get_label() for line in cwnd_ax.get_lines()]
    assert drawn == [f"flow {i} (cubic)" for i in range(50)]
    assert [line.get_label() for line in rate_ax.get_lines()][:50] == drawn
    (legend,) = fig.legends
    assert legend.get_title().get_text() == "the first 50 of 60 flows"
    # At most 50 flows, all are drawn and the legend has no such title.
    fig = ccsim.run(_dumbbell("1s", [{"cc": "cubic", "count": 50}])).plot()
    assert len(fig.axes[1].get_lines()) == 50 and fig.legends[0].get_title().get_text() == ""


# -- bounds on flows and UDP rates -------------------------------------------------------------


def test_flows_are_bounded_over_all_entries():
    sc = _dumbbell("1s", [{"cc": "cubic", "count": 60000}, {"cc": "bbr", "count": 60000}])
    t0 = time.perf_counter()
    with pytest.raises(ScenarioError) as e:
        ccsim.run(sc)
    assert time.perf_counter() - t0 < 5
    assert str(e.value).startswith("flows[1].count: 60000 brings the flows of all entries to 120000, too many")
    assert str(e.value).endswith("accepted: at most 100000 flows in all [[flows]] entries together")


@pytest.mark.parametrize("rate, size, ok", [
    ("10Gbps", 1, False), ("80Mbps", 1, True), ("80000001bps", 1, False), ("10000000pps", 1, True),
    ("10000001pps", 1000, False), ("8Gbps", 100, True),
])
def test_udp_flows_are_bounded_in_packets_however_the_rate_is_written(rate, size, ok):
    sc = {"duration": "1s", "wireless": {"hops": 2},
          "flows": [{"protocol": "udp", "rate": rate, "packet_size": size}]}
    if ok:
        ccsim.Scenario.from_dict(sc).validate()
        return
    with pytest.raises(ScenarioError) as e:
        ccsim.Scenario.from_dict(sc).validate()
    assert str(e.value).startswith(f'flows[0].rate: "{rate}"')
    assert "1e7" in str(e.value)


# -- sweeps -----------------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["argument", "environment"])
def test_a_sweep_records_a_run_too_big_as_failed_with_the_estimate(how, tmp_path, monkeypatch):
    base = _dumbbell("2s", [{"cc": "cubic"}])
    specs = expand(base, {"sample_interval": ["1ms", "1s"]}, experiment="big", timeseries=True)
    # 2000 rows at 1 ms do not fit in 1 MB; 2 rows at 1 s do.
    kwargs = {}
    if how == "argument":
        kwargs["memory_limit"] = "1MB"
    else:
        monkeypatch.setenv(limits.ENV_VAR, "1MB")
    report = execute(specs, tmp_path, jobs=2, progress=False, **kwargs)
    assert (report.ran, len(report.failed)) == (2, 1)
    spec, error = report.failed[0]
    assert spec.tags["sample_interval"] == "1ms"
    assert error.startswith("this run would need about 1.3 MB (time series 1.2 MB (2,000 rows); ")
    origin = "as set" if how == "argument" else "set by CCSIM_MEMORY_LIMIT"
    assert f"more than the memory limit of 1.0 MB, {origin}; " in error
    errors = list(tmp_path.rglob("*.error.json"))
    assert len(errors) == 1 and json.loads(errors[0].read_text())["error"] == error


def test_sweep_workers_record_no_time_series_unless_asked(tmp_path, monkeypatch):
    from ccsim.sweep import worker as sweep_mod  # runs one spec: _simulate is its seam for tests
    seen = []
    real = sweep_mod._simulate

    def spy(scenario, seed, **options):
        seen.append(options["timeseries"])
        return real(scenario, seed, **options)

    monkeypatch.setattr(sweep_mod, "_simulate", spy)
    for ts in (False, True):
        specs = expand(base_scenario(), {"bottleneck.loss": [0, 0.01]}, experiment=f"ts{int(ts)}", timeseries=ts)
        execute(specs, tmp_path, jobs=1, progress=False)
    assert seen == [False, False, True, True]


# -- Ctrl-C ------------------------------------------------------------------------------------

# 30 UDP sources of 10^7 packets/s each: 3 x 10^8 events per simulated second, about 10 s of
# wall time per simulated second.
FLOOD = {
    "duration": "1000s",
    "wireless": {"hops": 4, "host": "rpi3"},
    "flows": [{"protocol": "udp", "rate": "10000000pps", "packet_size": 1, "count": 30}],
}


def _cpu_seconds(pgid: int) -> dict[int, float]:
    """CPU seconds used so far by each process of the process group `pgid` (Linux /proc)."""
    tick = os.sysconf("SC_CLK_TCK")
    out = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid:  # fields[2] is pgrp; utime and stime are fields[11:13]
            out[int(entry)] = (int(fields[11]) + int(fields[12])) / tick
    return out


def _interrupt(cmd: list[str], cwd, busy: int = 1) -> tuple[int, str, float]:
    """Start `cmd`; once `busy` of its processes (workers, or the command itself) have each
    simulated for 0.5 s of CPU time, send it SIGINT; return (status, stderr, seconds to exit)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(),
                            cwd=cwd, start_new_session=True, preexec_fn=default_sigint)
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, proc.communicate()
            cpu = _cpu_seconds(proc.pid)
            if busy == 1 and cpu.get(proc.pid, 0) >= 1.5:  # imports take about 0.5 s
                break
            if busy > 1 and sum(1 for pid, t in cpu.items() if pid != proc.pid and t >= 0.5) >= busy:
                break
            assert time.monotonic() < deadline, f"not running after 60 s: {cpu}"
            time.sleep(0.05)
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        try:
            _, stderr = proc.communicate(timeout=3)
        except subprocess.TimeoutExpired:
            pytest.fail(f"{cmd[1]} was still running 3 s after Ctrl-C")
        return proc.returncode, stderr, time.monotonic() - t0
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads CPU times from /proc")
def test_ctrl_c_stops_a_run_whatever_a_simulated_second_costs(write_scenario, ccsim_cmd, tmp_path):
    path = write_scenario(FLOOD)
    status, stderr, _ = _interrupt([ccsim_cmd, "run", str(path)], tmp_path)
    assert status == 130, stderr
    assert stderr.strip() == "error: interrupted"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads CPU times from /proc")
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_ctrl_c_stops_a_sweep_with_a_heavy_run_in_flight(jobs, write_scenario, ccsim_cmd, tmp_path):
    path = write_scenario({**FLOOD, "sweep": {"runs": 1, "wireless.hops": [4, 5]}}, name="flood.toml")
    status, stderr, _ = _interrupt([ccsim_cmd, "sweep", str(path), "--out", str(tmp_path / "o"), "--jobs", jobs], tmp_path,
                                   busy=int(jobs))
    assert status == 130, stderr
    last = stderr.strip().splitlines()[-1]
    assert last.startswith("error: interrupted: 0 of 2 runs are stored in "), stderr
