"""Sweeps: expand(), execute() (local pool and Ray), failures, interruption, ccsim.sweep and the CLI."""

from __future__ import annotations

import json
import math
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pandas.testing as pdt
import pytest

import ccsim
from ccsim import results
from ccsim import sweep as sweep_fn
from ccsim.cli import cli
from ccsim.sweep import ExecutionReport, RunSpec, execute, expand, load_sweep_file

from _support import base_scenario, default_sigint, to_toml

from ccsim import _core
from ccsim.sweep import worker as sweep_worker  # runs one spec: _simulate is its seam for tests


def _one_line(err: BaseException) -> str:
    text = str(err)
    assert "\n" not in text, text
    return text


def _runs_dir(out: Path, experiment: str) -> Path:
    return Path(out) / "runs" / f"experiment={experiment}"


def _stored(out: Path, experiment: str) -> dict[str, int]:
    """{file name: mtime_ns} of the stored runs of ``experiment``."""
    d = _runs_dir(out, experiment)
    if not d.is_dir():
        return {}
    return {p.name: p.stat().st_mtime_ns for p in d.iterdir() if p.name.endswith(".parquet")}


def _without_wall(df: pd.DataFrame) -> pd.DataFrame:
    return df.drop(columns=["wall_seconds"]).reset_index(drop=True)


def _same(a, b) -> bool:
    if a is None or (isinstance(a, float) and math.isnan(a)):
        return b is None or (isinstance(b, float) and math.isnan(b))
    return a == b


# -- expand() ----------------------------------------------------------------------------------


def test_expand_product_order_seeds_and_tags():
    specs = expand(base_scenario(), {"bottleneck.loss": [0, 0.01], "flows.0.cc": ["cubic", "bbr", "newreno"]},
                   runs=2, experiment="e1")
    assert len(specs) == 2 * 3 * 2
    combos = [(s.tags["loss"], s.tags["cc"], s.seed) for s in specs]
    expected = [(loss, cc, seed) for loss in (0, 0.01) for cc in ("cubic", "bbr", "newreno") for seed in (1, 2)]
    assert combos == expected  # last key varies fastest, seeds innermost
    for s in specs:
        assert s.experiment == "e1" and s.timeseries is False
        assert s.tags["seed"] == s.seed and s.tags["run"] == s.seed - 1
        assert list(s.tags) == ["loss", "cc", "run", "seed"]
        assert s.scenario["bottleneck"]["loss"] == s.tags["loss"]
        assert s.scenario["flows"][0]["cc"] == s.tags["cc"]
        assert s.scenario["seed"] == s.seed
        assert s.scenario["duration"] == "3s"
    assert len({s.key for s in specs}) == len(specs)


def test_expand_seeds_default_to_base_seed_else_1():
    sc = base_scenario()
    sc["seed"] = 7
    assert [s.seed for s in expand(sc, {}, runs=3, experiment="x")] == [7, 8, 9]
    del sc["seed"]
    assert [s.seed for s in expand(sc, {}, runs=2, experiment="x")] == [1, 2]
    assert [s.seed for s in expand(ccsim.Scenario.from_dict(sc), {}, runs=2, experiment="x", seed0=100)] == [100, 101]
    specs = expand(sc, {"flows.0.cc": ["bbr"]}, experiment="x", timeseries=True)
    assert len(specs) == 1 and specs[0].timeseries and specs[0].tags == {"cc": "bbr", "run": 0, "seed": 1}


def _core_message(path: str, value) -> str:
    with pytest.raises(ccsim.ScenarioError) as err:
        ccsim.Scenario.from_dict(base_scenario()).replace(path, value).validate()
    return str(err.value)


@pytest.mark.parametrize(
    "sweep, runs, expected",
    [
        ({"bottleneck.los": [0.1]}, 1, "sweep: bottleneck.los: unknown key; accepted keys here: "),
        ({"flows.3.cc": ["bbr"]}, 1, "sweep.flows.3.cc: index 3 out of range"),
        ({"bottleneck.loss": []}, 1, "sweep.bottleneck.loss: expected a non-empty list of values; got []"),
        ({"bottleneck.loss": 0.01}, 1, "sweep.bottleneck.loss: expected a non-empty list of values; got 0.01"),
        ({"bottleneck.loss": "abc"}, 1, "sweep.bottleneck.loss: expected a non-empty list of values; got \"abc\""),
        ({"duration.x": [1]}, 1, "sweep.duration.x: cannot set 'x' inside 'duration', which is a string"),
        ({"flows.x.cc": ["bbr"]}, 1, "sweep.flows.x.cc: 'flows' is a list; expected an index"),
        ({"seed": [1, 2]}, 1, "sweep.seed: the seed is not a sweep parameter"),
        ({}, 0, "runs: expected a positive integer; got 0"),
        ({}, 1.5, "runs: expected a positive integer; got 1.5"),
        ({}, True, "runs: expected a positive integer; got true"),
        ([("bottleneck.loss", [0])], 1, "sweep: expected a table of parameter paths and value lists"),
    ],
)
def test_expand_rejects_bad_sweeps(sweep, runs, expected):
    with pytest.raises(ccsim.ScenarioError) as err:
        expand(base_scenario(), sweep, runs, experiment="bad")
    assert _one_line(err.value).startswith(expected), str(err.value)


def test_sweep_columns_are_named_after_the_last_path_component():
    sc = base_scenario()
    sc["flows"] = [{"cc": "cubic"}, {"cc": "cubic"}]
    specs = expand(sc, {"bottleneck.loss": [0], "flows.1.params.beta": [700], "tcp.mss": [1000]}, experiment="n")
    assert list(specs[0].tags) == ["loss", "beta", "mss", "run", "seed"]
    # Two paths that end alike are both named by their whole path.
    specs = expand(sc, {"flows.0.cc": ["bbr"], "flows[1].cc": ["newreno"], "bottleneck.loss": [0]}, experiment="n")
    assert list(specs[0].tags) == ["flows_0_cc", "flows_1_cc", "loss", "run", "seed"]
    # A named entry keeps its name; its values reach the scenario through its format.
    specs = expand(sc, {"buffer_bdp": {"path": "bottleneck.buffer", "values": [1, 4], "format": "{}bdp"},
                        "cc": {"path": "flows.1.cc", "values": ["bbr"]}, "flows.0.cc": ["cubic"]}, experiment="n")
    assert [s.tags for s in specs] == [{"buffer_bdp": b, "cc": "bbr", "flows_0_cc": "cubic", "run": 0, "seed": 1}
                                       for b in (1, 4)]
    assert [s.scenario["bottleneck"]["buffer"] for s in specs] == ["1bdp", "4bdp"]
    assert [s.scenario["flows"][1]["cc"] for s in specs] == ["bbr", "bbr"]


@pytest.mark.parametrize(
    "sweep, expected",
    [
        ({"b b": {"path": "bottleneck.loss", "values": [0]}}, "sweep.b b: 'b b' is not a column name"),
        ({"run": {"path": "bottleneck.loss", "values": [0]}}, "sweep.run: the column name 'run' is reserved"),
        ({"x": {"path": "bottleneck.loss", "values": [0], "unit": "%"}},
         "sweep.x: unknown key 'unit'; accepted: path, values, format"),
        ({"x": {"values": [0]}}, "sweep.x.path: expected a parameter path"),
        ({"x": {"path": "bottleneck.loss"}}, "sweep.x.values: missing"),
        ({"x": {"path": "bottleneck.loss", "values": []}}, "sweep.x.values: expected a non-empty list of values"),
        ({"x": {"path": "bottleneck.lss", "values": [0]}}, "sweep: bottleneck.lss: unknown key"),
        ({"x": {"path": "flows.4.cc", "values": ["bbr"]}}, "sweep.x.path: index 4 out of range"),
        ({"x": {"path": "bottleneck.buffer", "values": [1], "format": "{0}bdp"}},
         "sweep.x.format: expected a text with one {} for the value"),
        ({"x": {"path": "bottleneck.buffer", "values": [[1]], "format": "{}bdp"}},
         "sweep.x.values: a value written through format must be a number or a text"),
        ({"flows_0_cc": {"path": "bottleneck.loss", "values": [0]}, "cc": {"path": "tcp.mss", "values": [1000]},
          "flows.0.cc": ["bbr"]}, "sweep: flows_0_cc and flows.0.cc would both be stored as column 'flows_0_cc'"),
    ],
)
def test_expand_rejects_bad_named_entries(sweep, expected):
    with pytest.raises(ccsim.ScenarioError) as err:
        expand(base_scenario(), sweep, 1, experiment="bad")
    assert _one_line(err.value).startswith(expected), str(err.value)


def test_sweep_file_named_entry_end_to_end(runner, write_scenario, tmp_path):
    sc = base_scenario()
    sc["sweep"] = {"buffer_bdp": {"path": "bottleneck.buffer", "values": [1, 4], "format": "{}bdp"},
                   "flows.0.cc": ["cubic", "bbr"]}
    path = write_scenario(sc, "bdp.toml")
    assert 'buffer_bdp = { path = "bottleneck.buffer", values = [1, 4], format = "{}bdp" }' in path.read_text()
    out = tmp_path / "o"
    res = runner.invoke(cli, ["sweep", str(path), "--out", str(out)])
    assert res.exit_code == 0, res.output
    header = next(ln for ln in res.stdout.splitlines() if "Mbps" in ln and "buffer_bdp" in ln)
    assert header.split()[:2] == ["buffer_bdp", "cc"]
    df = results.load(out, "bdp")
    assert df["buffer_bdp"].dtype == "int64" and sorted(set(df["buffer_bdp"])) == [1, 4]
    pkts = df.groupby("buffer_bdp")["bn_buffer_pkts"].agg(set)
    assert len(pkts[1]) == len(pkts[4]) == 1 and pkts[4].pop() > 3.9 * pkts[1].pop()  # "1bdp" and "4bdp"
    got = results.query(out, "SELECT buffer_bdp, cc, count(*) AS n FROM runs GROUP BY ALL ORDER BY ALL")
    assert got.values.tolist() == [[1, "bbr", 2], [1, "cubic", 2], [4, "bbr", 2], [4, "cubic", 2]]


def test_reproduce_and_sweep_name_columns_alike(write_scenario):
    """A catalogue entry's [sweep] table written into a sweep file makes the same runs with the same
    tags (the catalogue expands its sweeps as sweep files are expanded)."""
    import copy

    from ccsim.experiments.catalogue import BY_ID

    for eid in ("e5-mathis", "e2-fig2", "e4-exp1"):
        e = BY_ID[eid]
        sc = copy.deepcopy(e.base)
        sc.update(duration=e.quick.duration, runs=e.quick.runs, sweep=e.quick.sweep)
        base, table, runs = load_sweep_file(write_scenario(sc, f"{eid}.toml"))
        mine = expand(base, table, runs, experiment=eid)
        catalogue = e.specs(quick=True)
        assert [s.key for s in mine] == [s.key for s in catalogue]
        assert [s.tags for s in mine] == [s.tags for s in catalogue]
    assert list(BY_ID["e5-mathis"].specs(quick=True)[0].tags) == ["cc", "loss", "run", "seed"]
    assert list(BY_ID["e4-exp2"].specs(quick=True)[0].tags) == ["environment", "cc", "hops", "run", "seed"]
    e2 = BY_ID["e2-fig2"].specs(quick=True)
    assert [(s.tags["buffer_bdp"], s.scenario["bottleneck"]["buffer"]) for s in e2] == [
        (1, "1bdp"), (6, "6bdp"), (18, "18bdp")]
    e4 = BY_ID["e4-exp1"].specs(quick=True)
    assert list(e4[0].tags) == ["environment", "hops", "rate_pps", "run", "seed"]
    assert {s.scenario["flows"][0]["rate"] for s in e4} == {f"{s.tags['rate_pps']}pps" for s in e4}


def test_expand_wrong_value_type_gives_the_core_message():
    with pytest.raises(ccsim.ScenarioError) as err:
        expand(base_scenario(), {"bottleneck.loss": [0, "abc"]}, experiment="bad")
    core = _core_message("bottleneck.loss", "abc")
    assert core.startswith('bottleneck.loss: expected a number, got "abc"')
    assert _one_line(err.value) == f"sweep: {core}"
    # With several swept paths the failing combination is named.
    with pytest.raises(ccsim.ScenarioError) as err:
        expand(base_scenario(), {"flows.0.cc": ["cubic"], "bottleneck.loss": [0, 2]}, experiment="bad")
    msg = _one_line(err.value)
    assert msg.startswith("sweep: bottleneck.loss: 2 is out of range") and "flows.0.cc = \"cubic\"" in msg


def test_expand_invalid_base_is_not_blamed_on_the_sweep():
    sc = base_scenario()
    sc["tcp"]["mss"] = "big"
    with pytest.raises(ccsim.ScenarioError) as err:
        expand(sc, {"bottleneck.loss": [0, 0.01]}, experiment="bad")
    assert _one_line(err.value).startswith("tcp.mss: ")


def test_expand_validates_each_combination_once(monkeypatch):
    calls = []
    real = _core.validate

    def counting(text):
        calls.append(text)
        return real(text)

    monkeypatch.setattr(_core, "validate", counting)
    specs = expand(base_scenario(), {"bottleneck.loss": [0, 0.01], "flows.0.cc": ["cubic", "bbr", "hd"]},
                   runs=5, experiment="e")
    assert len(specs) == 30
    assert len(calls) <= 6 + 1  # the 6 combinations (+ the base once), not the 30 runs


def test_runspec_key_is_canonical():
    sc = base_scenario()
    a = RunSpec("e", sc, seed=3)
    explicit = json.loads(ccsim._core.validate(json.dumps(sc)))  # every default written out
    explicit["seed"] = 99  # the spec's seed wins over the scenario's
    assert RunSpec("e", explicit, seed=3).key == a.key
    assert RunSpec("other", sc, seed=3, tags={"x": 1}).key == a.key  # tags and experiment: not in the key
    assert RunSpec("e", sc, seed=4).key != a.key
    assert RunSpec("e", sc, seed=3, timeseries=True).key != a.key
    assert len(a.key) == 16 and int(a.key, 16) >= 0
    assert {a, RunSpec("e", sc, seed=3)} == {a}  # hashable, equal specs are equal
    with pytest.raises(ValueError, match="experiment"):
        RunSpec("bad/name", sc, seed=1)
    with pytest.raises(ValueError, match="seed"):
        RunSpec("e", sc, seed=1, tags={"seed": 2})
    with pytest.raises(ValueError, match="same column|both be stored"):
        RunSpec("e", sc, seed=1, tags={"a.b": 1, "a_b": 2})


def test_load_sweep_file_reads_dotted_and_quoted_keys(write_scenario):
    sc = base_scenario()
    sc["runs"] = 4
    text = to_toml(sc) + '\n[sweep]\nbottleneck.loss = [0, 0.01]\n"flows.0.cc" = ["cubic", "bbr"]\nflows.0.params.beta = [700, 800]\n'
    path = write_scenario(text, "s.toml")
    base, table, runs = load_sweep_file(path)
    assert runs == 4
    assert table == {"bottleneck.loss": [0, 0.01], "flows.0.cc": ["cubic", "bbr"], "flows.0.params.beta": [700, 800]}
    assert "sweep" not in base and "runs" not in base
    base.validate()
    # A file without [sweep] is one combination; runs defaults to 1.
    base, table, runs = load_sweep_file(write_scenario(base_scenario(), "plain.toml"))
    assert (table, runs) == ({}, 1)
    # runs inside [sweep] works too.
    base, table, runs = load_sweep_file(write_scenario(
        to_toml(base_scenario()) + '\n[sweep]\nruns = 3\n"bottleneck.loss" = [0.0, 0.01]\n', "inner.toml"))
    assert (table, runs) == ({"bottleneck.loss": [0.0, 0.01]}, 3)
    for bad, msg in [('runs = "x"', "runs: expected a positive integer"),
                     ("sweep = 3", "sweep: expected a table"),
                     ("runs = 2\n[sweep]\nruns = 3", "runs: given twice"),
                     ("[sweep]\nruns = 0", "sweep.runs: expected a positive integer; got 0")]:
        text = to_toml(base_scenario()) + "\n" + bad if "[sweep]" in bad else bad + "\n" + to_toml(base_scenario())
        if bad.startswith("runs = 2"):
            text = "runs = 2\n" + to_toml(base_scenario()) + "\n[sweep]\nruns = 3\n"
        p = write_scenario(text, "bad.toml")
        with pytest.raises(ccsim.ScenarioError) as err:
            load_sweep_file(p)
        assert _one_line(err.value) .startswith(f"{p}: {msg}")


# -- execute() + load() -----------------------------------------------------------------------


def test_execute_stores_runs_identical_to_direct_runs(tmp_path):
    specs = expand(base_scenario(), {"bottleneck.loss": [0, 0.01]}, runs=2, experiment="exec")
    report = execute(specs, tmp_path, jobs=2, progress=False)
    assert isinstance(report, ExecutionReport)
    assert (report.total, report.ran, report.skipped, report.failed) == (4, 4, 0, [])
    assert report.keys == [s.key for s in specs]
    df = results.load(tmp_path, "exec")
    assert len(df) == 4 * 2
    for col in ("experiment", "key", "seed", "loss", "run", "sim_seconds", "events", "wall_seconds",
                "total_throughput_mbps", "jain_index", "bn_drops", "bn_random_losses", "bn_utilization",
                "bn_queue_delay_mean_ms", "bn_queue_delay_p95_ms", "bn_queue_mean_pkts", "flow", "cc",
                "throughput_mbps", "bytes_acked", "retransmits", "rto_count", "rtt_min_ms", "rtt_mean_ms",
                "rtt_p95_ms", "cwnd_final_pkts"):
        assert col in df.columns, col
    assert list(df.columns[:5]) == ["experiment", "key", "seed", "loss", "run"]
    assert df["loss"].dtype == "float64" and df["seed"].dtype == "int64"
    # Sorted by experiment, tags, seed, flow.
    assert list(zip(df["loss"], df["run"], df["flow"])) == [
        (loss, run, flow) for loss in (0.0, 0.01) for run in (0, 1) for flow in (0, 1)]
    for spec in specs:
        direct = ccsim.run(spec.scenario, seed=spec.seed).to_dict()
        rows = df[df["key"] == spec.key].sort_values("flow")
        assert len(rows) == len(direct["flows"]) == 2
        for _, row in rows.iterrows():
            flow = direct["flows"][row["flow"]]
            for col in ("cc", "throughput_mbps", "bytes_acked", "retransmits", "rto_count", "rtt_min_ms",
                        "rtt_mean_ms", "rtt_p95_ms", "cwnd_final_pkts", "completed"):
                assert _same(row[col], flow[col]), col
            for col in ("seed", "sim_seconds", "events", "total_throughput_mbps", "jain_index"):
                assert row[col] == direct[col], col
            for col in ("drops", "random_losses", "utilization", "queue_delay_mean_ms", "queue_delay_p95_ms",
                        "queue_mean_pkts"):
                assert row[f"bn_{col}"] == direct["bottleneck"][col], col
            assert row["loss"] == spec.tags["loss"]


def test_rerun_skips_everything_and_force_reruns(tmp_path):
    specs = expand(base_scenario(), {"flows.0.cc": ["cubic", "bbr"]}, runs=2, experiment="again")
    first = execute(specs, tmp_path, jobs=2, progress=False)
    assert first.ran == 4
    before = _stored(tmp_path, "again")
    assert len(before) == 4
    df1 = results.load(tmp_path)
    again = execute(specs, tmp_path, jobs=2, progress=False)
    assert (again.ran, again.skipped, again.failed) == (0, 4, [])
    assert _stored(tmp_path, "again") == before
    time.sleep(0.01)
    forced = execute(specs, tmp_path, jobs=2, progress=False, force=True)
    assert (forced.ran, forced.skipped) == (4, 0)
    after = _stored(tmp_path, "again")
    assert after.keys() == before.keys() and all(after[k] != before[k] for k in before)
    pdt.assert_frame_equal(_without_wall(results.load(tmp_path)), _without_wall(df1))


def test_failed_run_is_recorded_and_retried(tmp_path):
    good = expand(base_scenario(), {"bottleneck.loss": [0, 0.01]}, experiment="fail")
    bad_sc = base_scenario()
    bad_sc["bottleneck"]["loss"] = "abc"
    bad = RunSpec("fail", bad_sc, seed=1, tags={"bottleneck.loss": "abc", "run": 0})
    specs = [good[0], bad, good[1]]
    report = execute(specs, tmp_path, jobs=2, progress=False)
    assert (report.ran, report.skipped) == (3, 0)
    assert len(report.failed) == 1 and report.failed[0][0] is bad
    assert report.failed[0][1].startswith('bottleneck.loss: expected a number, got "abc"')
    err_file = _runs_dir(tmp_path, "fail") / f"{bad.key}.error.json"
    record = json.loads(err_file.read_text())
    assert record["key"] == bad.key and record["experiment"] == "fail" and record["seed"] == 1
    assert record["tags"] == {"bottleneck.loss": "abc", "run": 0}
    assert record["error"] == report.failed[0][1] and "\n" not in record["error"]
    assert "Traceback" in record["traceback"]
    assert set(_stored(tmp_path, "fail")) == {f"{good[0].key}.parquet", f"{good[1].key}.parquet"}

    df = results.load(tmp_path, "fail")
    assert set(df["key"]) == {good[0].key, good[1].key} and "status" not in df.columns
    with_failed = results.load(tmp_path, "fail", include_failed=True)
    failed_rows = with_failed[with_failed["status"] == "failed"]
    assert list(failed_rows["key"]) == [bad.key]
    assert failed_rows["error"].iloc[0] == report.failed[0][1]
    assert (with_failed.loc[with_failed["status"] == "ok", "error"].isna()).all()

    again = execute(specs, tmp_path, jobs=2, progress=False)  # only the failed one runs again
    assert (again.ran, again.skipped, len(again.failed)) == (1, 2, 1)


def test_worker_exception_is_recorded_and_a_later_success_clears_it(tmp_path, monkeypatch):
    specs = expand(base_scenario(), {"bottleneck.loss": [0, 0.001, 0.01]}, experiment="boom")
    target = specs[1].key
    real = sweep_worker._simulate

    def flaky(scenario, seed, **options):
        if scenario["bottleneck"]["loss"] == 0.001:
            raise RuntimeError("boom\nsecond line")
        return real(scenario, seed, **options)

    monkeypatch.setattr(sweep_worker, "_simulate", flaky)
    report = execute(specs, tmp_path, jobs=1, progress=False)  # jobs=1: runs in this process
    assert [(s.key, e) for s, e in report.failed] == [(target, "RuntimeError: boom second line")]
    assert (_runs_dir(tmp_path, "boom") / f"{target}.error.json").is_file()
    monkeypatch.setattr(sweep_worker, "_simulate", real)
    again = execute(specs, tmp_path, jobs=1, progress=False)
    assert (again.ran, again.skipped, again.failed) == (1, 2, [])
    assert not (_runs_dir(tmp_path, "boom") / f"{target}.error.json").exists()
    assert len(results.load(tmp_path, "boom", include_failed=True)) == 3 * 2


def test_pool_works_after_duckdb_and_arrow_threads(tmp_path):
    # With fork-started workers this crashed (a child segfaulted collecting inherited DuckDB state).
    first = expand(base_scenario(), {"bottleneck.loss": [0, 0.01]}, runs=2, experiment="t1")
    execute(first, tmp_path, jobs=2, progress=False)
    results.load(tmp_path)
    assert results.query(tmp_path, "SELECT count(*) AS n FROM runs")["n"].iloc[0] == 8
    second = expand(base_scenario(), {"bottleneck.loss": [0.02, 0.03]}, runs=2, experiment="t2")
    report = execute(second, tmp_path, jobs=2, progress=False)
    assert (report.ran, report.failed) == (4, [])


_SCRIPT = """
import sys, ccsim
sc = {"duration": "2s", "seed": 1, "bottleneck": {"rate": "10Mbps", "delay": "20ms", "buffer": "50pkt"},
      "flows": [{"cc": "cubic", "count": 2}]}
df = ccsim.sweep(sc, {"bottleneck.loss": [0, 0.01]}, runs=2, out=sys.argv[1] if len(sys.argv) > 1 else "out", jobs=2)
print("rows", len(df))
"""


def test_workers_do_not_import_the_main_script(tmp_path):
    # No `if __name__ == "__main__":` guard: spawn/forkserver workers would re-run the script.
    script = tmp_path / "no_guard.py"
    script.write_text(_SCRIPT, encoding="utf-8")
    proc = subprocess.run([sys.executable, str(script), str(tmp_path / "a")], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["rows 8"] and "Traceback" not in proc.stderr
    proc = subprocess.run([sys.executable, "-"], input=_SCRIPT, capture_output=True, text=True, timeout=120,
                          cwd=tmp_path)  # main read from stdin
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["rows 8"]


# -- interrupted sweeps -------------------------------------------------------------------------

# 4 algorithms x 3 seeds, each run ~0.3 s of wall time at 1 Gbps.
_LONG = {
    "duration": "25s",
    "seed": 1,
    "runs": 3,
    "bottleneck": {"rate": "1Gbps", "delay": "20ms", "buffer": "1bdp"},
    "flows": [{"cc": "cubic", "count": 2}],
    "sweep": {"flows.0.cc": ["cubic", "bbr", "newreno", "hd"]},
}


@pytest.fixture(scope="module")
def long_sweep(tmp_path_factory):
    """The sweep file and the results of an uninterrupted run of it."""
    d = tmp_path_factory.mktemp("long")
    path = d / "long.toml"
    path.write_text(to_toml(_LONG), encoding="utf-8")
    base, table, runs = load_sweep_file(path)
    specs = expand(base, table, runs, experiment="long")
    report = execute(specs, d / "reference", jobs=2, progress=False)
    assert report.ran == 12 and not report.failed
    return path, specs, results.load(d / "reference", "long")


@pytest.mark.parametrize("how", ["sigint", "sigkill"])
def test_interrupted_sweep_resumes_with_only_the_missing_runs(how, long_sweep, tmp_path, ccsim_cmd):
    path, specs, reference = long_sweep
    out = tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if k != "CCSIM_DEBUG"}
    proc = subprocess.Popen([ccsim_cmd, "sweep", str(path), "--out", str(out), "--jobs", "2"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            start_new_session=True, preexec_fn=default_sigint)
    try:
        deadline = time.monotonic() + 30
        while len(_stored(out, "long")) < 2:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "no run was stored within 30 s"
            time.sleep(0.005)
        if how == "sigint":
            proc.send_signal(signal.SIGINT)
        else:
            os.killpg(proc.pid, signal.SIGKILL)  # the whole process group, workers included
        stdout, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    if how == "sigint":
        assert proc.returncode == 130, stderr
        last = stderr.strip().splitlines()[-1]
        assert last.startswith("error: interrupted: ") and "run the same command again" in last
        assert "Traceback" not in stderr
    else:
        assert proc.returncode == -signal.SIGKILL
    stored = _stored(out, "long")
    assert 2 <= len(stored) < 12, "the interruption came too late to test resuming"
    leftovers = [p.name for p in out.rglob("*") if p.is_file() and not p.name.endswith(".parquet")]
    assert all(n.startswith(".") and ".tmp-" in n for n in leftovers), leftovers  # no partial .parquet
    for name in stored:  # every stored file is complete
        pd.read_parquet(_runs_dir(out, "long") / name)

    report = execute(specs, out, jobs=2, progress=False)
    assert (report.ran, report.skipped, report.failed) == (12 - len(stored), len(stored), [])
    after = _stored(out, "long")
    assert len(after) == 12
    assert all(after[name] == mtime for name, mtime in stored.items())  # not rerun
    assert not [p for p in out.rglob(".*") if p.is_file()]  # temporary files cleaned up
    pdt.assert_frame_equal(_without_wall(results.load(out, "long")), _without_wall(reference))


# -- Ray ---------------------------------------------------------------------------------------


def test_ray_backend_gives_the_same_results_as_local(tmp_path):
    try:
        import ray
    except ImportError:
        pytest.fail("Ray is not installed; the ray backend test needs it: pip install 'ccsim[test]' (ray>=2.9,<3)")
    specs = expand(base_scenario(), {"bottleneck.loss": [0, 0.01], "flows.0.cc": ["cubic", "bbr"]},
                   runs=2, experiment="ray", timeseries=True)
    local = execute(specs, tmp_path / "local", jobs=2, progress=False)
    assert local.ran == 8
    # Ray initialised by the caller: used as it is, left running.
    ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    try:
        report = execute(specs[:4], tmp_path / "ray", backend="ray", progress=False)
        assert ray.is_initialized()
    finally:
        ray.shutdown()
    assert (report.ran, report.failed) == (4, [])
    # Not initialised: execute starts a local Ray with `jobs` CPUs and shuts it down.
    report = execute(specs, tmp_path / "ray", backend="ray", jobs=2, progress=False)
    assert not ray.is_initialized()
    assert (report.ran, report.skipped, report.failed) == (4, 4, [])
    pdt.assert_frame_equal(_without_wall(results.load(tmp_path / "ray")),
                           _without_wall(results.load(tmp_path / "local")))
    pdt.assert_frame_equal(results.load_timeseries(tmp_path / "ray", "ray"),
                           results.load_timeseries(tmp_path / "local", "ray"))
    pdt.assert_frame_equal(results.load_cc_events(tmp_path / "ray", "ray"),
                           results.load_cc_events(tmp_path / "local", "ray"))


def test_ray_missing_is_one_clear_error(tmp_path, monkeypatch, runner, write_scenario):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    specs = expand(base_scenario(), {}, experiment="noray")
    hint = "python3 -m pip install '.[ray]' in the ccsim source folder"
    with pytest.raises(ImportError, match=re.escape(f"the ray backend needs Ray: {hint}")):
        execute(specs, tmp_path, backend="ray", progress=False)
    path = write_scenario(base_scenario(), "noray.toml")
    res = runner.invoke(cli, ["sweep", str(path), "--backend", "ray", "--out", str(tmp_path / "o")])
    assert res.exit_code == 2
    assert res.stderr == f"error: the ray backend needs Ray: {hint}\n"
    # The README gives the same (and only this) install hint.
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    assert "`python3 -m pip install '.[ray]'` in the ccsim source folder" in readme
    assert "ccsim[ray]" not in readme


# -- ccsim.sweep() -----------------------------------------------------------------------------


def test_python_sweep_entry_point(tmp_path, write_scenario, monkeypatch):
    df = ccsim.sweep(base_scenario(), {"bottleneck.loss": [0, 0.01]}, runs=2, out=tmp_path / "a", jobs=2)
    assert len(df) == 2 * 2 * 2 and set(df["experiment"]) == {"sweep"}
    assert sorted(set(df["loss"])) == [0.0, 0.01]
    # A sweep file: its [sweep] and runs, experiment = file stem, default out ./ccsim-runs/<stem>.
    sc = base_scenario()
    sc["runs"] = 2
    sc["sweep"] = {"flows.0.cc": ["cubic", "bbr"]}
    path = write_scenario(sc, "my-sweep.toml")
    monkeypatch.chdir(tmp_path)
    df = ccsim.sweep(path)
    assert len(df) == 2 * 2 * 2 and set(df["experiment"]) == {"my-sweep"}
    assert (tmp_path / "ccsim-runs" / "my-sweep" / "runs" / "experiment=my-sweep").is_dir()
    pdt.assert_frame_equal(df, results.load(tmp_path / "ccsim-runs" / "my-sweep", "my-sweep"))
    # A dict with the structure of a sweep file.
    as_dict = dict(sc, sweep={"flows": {"0": {"cc": ["cubic", "bbr"]}}, "runs": 1})
    del as_dict["runs"]
    df2 = ccsim.sweep(as_dict, out=tmp_path / "b", jobs=1, experiment="d")
    assert len(df2) == 2 * 2 and set(df2["cc"]) == {"cubic", "bbr"}
    # ccsim.sweep is the package itself (callable), not a function standing in for it.
    assert sweep_fn is sys.modules["ccsim.sweep"] and sweep_fn.sweep.__module__ == "ccsim.sweep"
    assert sweep_fn.execute is execute and sweep_fn.RunSpec is RunSpec and sweep_fn.expand is expand


# -- ccsim sweep ------------------------------------------------------------------------------


def _sweep_file(write_scenario, name="loss.toml", **extra):
    sc = base_scenario()
    sc["runs"] = 2
    sc.update(extra)
    sc["sweep"] = {"bottleneck.loss": [0, 0.01], "flows.0.cc": ["cubic", "bbr"]}
    return write_scenario(sc, name)


def test_cli_sweep_end_to_end(runner, write_scenario, tmp_path):
    path = _sweep_file(write_scenario)
    out = tmp_path / "res"
    res = runner.invoke(cli, ["sweep", str(path), "--out", str(out), "--jobs", "2"])
    assert res.exit_code == 0, res.output
    text = res.stdout
    assert "4 combinations x 2 runs = 8 runs (8 ran, 0 already stored, 0 failed)" in text
    for word in ("loss", "cc", "total", "Jain", "flow 0", "flow 1", "runs", "failed",
                 "cubic", "bbr", "0.01", str(out)):
        assert word in text, word
    # One table row per combination, in sweep order.
    rows = [ln.split() for ln in text.splitlines() if ln.strip().startswith(("0 ", "0.01 "))]
    assert [(r[0], r[1]) for r in rows] == [("0", "cubic"), ("0", "bbr"), ("0.01", "cubic"), ("0.01", "bbr")]
    df = results.load(out, "loss")
    for r in rows:
        sel = df[(df["loss"] == float(r[0])) & (df["cc"] == r[1])]
        assert float(r[2]) == pytest.approx(sel.drop_duplicates("key")["total_throughput_mbps"].mean(), abs=1e-3)
        assert r[-2] == "2" and r[-1] == "-"
    assert len(list((out / "runs" / "experiment=loss").glob("*.parquet"))) == 8
    again = runner.invoke(cli, ["sweep", str(path), "--out", str(out)])
    assert again.exit_code == 0 and "(0 ran, 8 already stored, 0 failed)" in again.stdout
    more = runner.invoke(cli, ["sweep", str(path), "--out", str(out), "--runs", "3", "--jobs", "1"])
    assert more.exit_code == 0 and "= 12 runs (4 ran, 8 already stored, 0 failed)" in more.stdout
    ts = runner.invoke(cli, ["sweep", str(path), "--out", str(out), "--runs", "1", "--timeseries"])
    assert ts.exit_code == 0 and "(4 ran, 0 already stored" in ts.stdout
    assert results.load_timeseries(out, "loss")["key"].nunique() == 4


def test_cli_sweep_default_out_dir(runner, write_scenario, tmp_path, monkeypatch):
    path = _sweep_file(write_scenario, "defaults.toml")
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(cli, ["sweep", str(path), "--runs", "1", "--jobs", "1"])
    assert res.exit_code == 0, res.output
    assert len(list((tmp_path / "ccsim-runs" / "defaults" / "runs" / "experiment=defaults").glob("*.parquet"))) == 4


@pytest.mark.parametrize(
    "content, expected",
    [
        (None, "no such file"),
        ('duration = "3s"\n[sweep\n', "TOML syntax error"),
        ("runs = 0\n", "runs: expected a positive integer; got 0"),
        ("[sweep]\nbottleneck.loss = 0.01\n", "sweep.bottleneck.loss: expected a non-empty list of values; got 0.01"),
        ("[sweep]\nbottleneck.los = [0.01]\n", "sweep: bottleneck.los: unknown key"),
        ('[sweep]\nbottleneck.loss = ["abc"]\n', 'sweep: bottleneck.loss: expected a number, got "abc"'),
        ('[sweep]\n"flows.3.cc" = ["bbr"]\n', "sweep.flows.3.cc: index 3 out of range"),
    ],
)
def test_cli_sweep_bad_file_is_one_error_line(content, expected, runner, write_scenario, tmp_path):
    if content is None:
        path = tmp_path / "missing.toml"
    elif content.startswith("duration"):
        path = write_scenario(content, "bad.toml")
    else:
        base = {k: v for k, v in base_scenario().items()}
        path = write_scenario(content + to_toml(base) if content.startswith("runs") else to_toml(base) + content,
                              "bad.toml")
    res = runner.invoke(cli, ["sweep", str(path), "--out", str(tmp_path / "o")])
    assert res.exit_code == 2, res.output
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    assert expected in lines[0] and str(path) in lines[0]
    assert "Traceback" not in res.stderr and res.stdout == ""
    assert not (tmp_path / "o" / "runs").exists()


def test_cli_sweep_bad_options(runner, write_scenario, tmp_path):
    path = _sweep_file(write_scenario)
    for args, expected in [(["--jobs", "0"], "--jobs"), (["--backend", "mpi"], "--backend"),
                           (["--address", "x:1"], "--address is only used with --backend ray"),
                           (["--runs", "0"], "--runs")]:
        res = runner.invoke(cli, ["sweep", str(path), "--out", str(tmp_path / "o"), *args])
        assert res.exit_code == 2, args
        assert res.stderr.startswith("error: ") and len(res.stderr.splitlines()) == 1 and expected in res.stderr


def test_cli_sweep_installed_command(ccsim_cmd, write_scenario, tmp_path):
    path = _sweep_file(write_scenario, "inst.toml")
    env = {k: v for k, v in os.environ.items() if k != "CCSIM_DEBUG"}
    proc = subprocess.run([ccsim_cmd, "sweep", str(path), "--out", str(tmp_path / "o"), "--jobs", "2"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "8 ran" in proc.stdout and "inst" in proc.stderr  # the progress bar goes to stderr
    bad = write_scenario(to_toml(base_scenario()) + "[sweep]\nbottleneck.los = [1]\n", "bad.toml")
    proc = subprocess.run([ccsim_cmd, "sweep", str(bad)], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("error: ") and "Traceback" not in proc.stderr


def test_cli_sweep_reports_failed_runs(runner, write_scenario, tmp_path, monkeypatch):
    path = _sweep_file(write_scenario, "flaky.toml")
    real = sweep_worker._simulate

    def flaky(scenario, seed, **options):
        if scenario["bottleneck"]["loss"] == 0.01 and seed == 2:
            raise RuntimeError("boom")
        return real(scenario, seed, **options)

    monkeypatch.setattr(sweep_worker, "_simulate", flaky)
    res = runner.invoke(cli, ["sweep", str(path), "--out", str(tmp_path / "o"), "--jobs", "1"])
    assert res.exit_code == 1
    assert "(8 ran, 0 already stored, 2 failed)" in res.stdout
    assert "RuntimeError: boom" in res.stdout
    assert res.stderr.splitlines()[-1].startswith("error: 2 of 8 runs failed; the errors are in ")
