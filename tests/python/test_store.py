"""The result store: layout, column types, tags, time series, load(), query() and `ccsim query`."""

from __future__ import annotations

import io
import json
import os
import subprocess
import time
import warnings
from pathlib import Path

import pandas as pd
import pandas.testing as pdt
import pyarrow.parquet as pq
import pytest

import ccsim
from ccsim import results
from ccsim.cli import cli
from ccsim.sweep import RunSpec, execute, expand

from _support import base_scenario


def _part(out: Path, table: str, experiment: str) -> Path:
    return Path(out) / table / f"experiment={experiment}"


@pytest.fixture
def stored(tmp_path):
    """A store with one experiment of 2 losses x 2 algorithms x 2 seeds, with time series."""
    specs = expand(base_scenario(), {"bottleneck.loss": [0, 0.01], "flows.0.cc": ["cubic", "bbr"]},
                   runs=2, experiment="grid", timeseries=True)
    report = execute(specs, tmp_path, jobs=2, progress=False)
    assert report.ran == 8 and not report.failed
    return tmp_path, specs


# -- layout and files ---------------------------------------------------------------------------


def test_layout_one_file_per_run_and_table(stored):
    out, specs = stored
    for table in ("runs", "timeseries", "cc_events"):
        names = sorted(p.name for p in _part(out, table, "grid").iterdir())
        assert names == sorted(f"{s.key}.parquet" for s in specs), table
    assert not [p for p in out.rglob(".*")]  # no temporary files left
    f = pq.read_table(_part(out, "runs", "grid") / f"{specs[0].key}.parquet")
    assert f.column_names[:5] == ["key", "seed", "loss", "cc", "run"]
    assert "experiment" not in f.column_names  # it is the partition
    meta = json.loads(f.schema.metadata[b"ccsim"])
    assert meta["key"] == specs[0].key and meta["seed"] == specs[0].seed
    assert meta["tags"] == specs[0].tags and meta["experiment"] == "grid"
    assert meta["scenario"]["bottleneck"]["loss"] == 0 and meta["scenario"]["tcp"]["mss"] == 1448  # normalised
    ts = pq.read_table(_part(out, "timeseries", "grid") / f"{specs[0].key}.parquet")
    assert ts.column_names[:6] == ["key", "seed", "loss", "cc", "run", "time_s"]


def test_tag_types_are_stable_across_runs_and_calls(tmp_path):
    sc = base_scenario()
    specs = [
        RunSpec("types", sc, seed=1, tags={"loss": 0, "cc": "cubic", "flag": True, "n": 2, "maybe": None,
                                            "mix": 1, "params": {"beta": 0.7}}),
        RunSpec("types", sc, seed=2, tags={"loss": 0.01, "cc": "bbr", "flag": False, "n": 3, "maybe": 1.5,
                                            "mix": "auto", "params": {"beta": 0.8}}),
    ]
    execute(specs, tmp_path, jobs=1, progress=False)
    expected = {"loss": "double", "cc": "string", "flag": "bool", "n": "int64", "maybe": "double",
                "mix": "string", "params": "string"}
    for s in specs:
        schema = pq.read_schema(_part(tmp_path, "runs", "types") / f"{s.key}.parquet")
        assert {c: str(schema.field(c).type) for c in expected} == expected
    # A later call with an integer loss keeps the column float.
    later = RunSpec("types", sc, seed=3, tags={"loss": 1, "cc": "x", "flag": True, "n": 4, "maybe": None,
                                              "mix": 2, "params": {}})
    execute([later], tmp_path, jobs=1, progress=False)
    schema = pq.read_schema(_part(tmp_path, "runs", "types") / f"{later.key}.parquet")
    assert str(schema.field("loss").type) == "double" and str(schema.field("mix").type) == "string"
    df = results.load(tmp_path, "types").drop_duplicates("key")
    assert df["loss"].dtype == "float64" and list(df["loss"]) == [0.0, 0.01, 1.0]
    assert list(df["cc"]) == ["cubic", "bbr", "x"]  # the tag keeps its name ...
    assert set(df["flow_cc"]) == {"cubic"}  # ... and the flows' algorithm column is renamed
    assert list(df["mix"]) == ["1", "auto", "2"]
    assert list(df["params"]) == ['{"beta": 0.7}', '{"beta": 0.8}', "{}"]
    assert df["flag"].dtype == bool and df["n"].dtype == "int64"
    assert df["maybe"].isna().tolist() == [True, False, True]


def test_tag_names_become_column_names(tmp_path):
    sc = base_scenario()
    sc["flows"] = [{"cc": "newreno"}, {"cc": "bbr"}]
    spec = RunSpec("names", sc, seed=1, timeseries=True,
                   tags={"bottleneck.loss": 0.0, "flows[1].cc": "bbr", "flows.0.params.beta": 700, "run": 0,
                         "cc": "bbr", "events": "e"})
    execute([spec], tmp_path, jobs=1, progress=False)
    df = results.load(tmp_path)
    assert list(df.columns[:9]) == ["experiment", "key", "seed", "bottleneck_loss", "flows_1_cc",
                                    "flows_0_params_beta", "run", "cc", "events"]
    # A tag shadows the result column of the same name, which is renamed.
    assert list(df["cc"]) == ["bbr", "bbr"] and list(df["flow_cc"]) == ["newreno", "bbr"]
    assert list(df["events"]) == ["e", "e"] and (df["run_events"] > 0).all()
    ts = results.load_timeseries(tmp_path, "names")
    assert set(ts["cc"]) == {"bbr"} and set(ts["flow_cc"]) == {"newreno", "bbr"}
    ev = results.load_cc_events(tmp_path, "names")
    assert "flow_cc" in ev.columns and "cc" in ev.columns
    for bad in ("key", "experiment", "status", "error"):
        with pytest.raises(ValueError, match="reserved"):
            RunSpec("names", sc, seed=1, tags={bad: 1})


def test_changed_tags_are_rewritten_without_rerunning(stored):
    out, specs = stored
    before = {p.name: p.stat().st_mtime_ns for p in _part(out, "runs", "grid").iterdir()}
    retagged = [RunSpec(s.experiment, s.scenario, s.seed,
                        {**{k: v for k, v in s.tags.items() if k != "cc"}, "variant": "v2", "algorithm": s.tags["cc"]},
                        s.timeseries) for s in specs]
    report = execute(retagged, out, jobs=2, progress=False)
    assert (report.ran, report.skipped) == (0, 8)
    df = results.load(out, "grid")
    assert set(df["variant"]) == {"v2"} and len(df) == 16
    # Without a cc tag, the flows' algorithm column is cc again.
    assert (df["algorithm"] == df["cc"]).all() and "flow_cc" not in df.columns
    ts = results.load_timeseries(out, "grid")
    assert set(ts["variant"]) == {"v2"} and "flow_cc" not in ts.columns and "algorithm" in ts.columns
    # Back to the sweep's tags: the cc tag shadows the flows' column again.
    plain = execute(specs, out, jobs=2, progress=False)
    assert plain.ran == 0
    df = results.load(out, "grid")
    assert "algorithm" not in df.columns and "variant" not in df.columns and set(df["cc"]) == {"cubic", "bbr"}
    assert (df["flow_cc"] == df["cc"]).all()
    execute(retagged, out, jobs=2, progress=False)
    after = {p.name: p.stat().st_mtime_ns for p in _part(out, "runs", "grid").iterdir()}
    assert after.keys() == before.keys()
    again = execute(retagged, out, jobs=2, progress=False)  # unchanged tags: nothing rewritten
    assert again.ran == 0
    assert {p.name: p.stat().st_mtime_ns for p in _part(out, "runs", "grid").iterdir()} == after


def test_timeseries_run_replaces_the_same_run_without(tmp_path):
    plain = expand(base_scenario(), {"bottleneck.loss": [0, 0.01]}, experiment="ts")
    with_ts = expand(base_scenario(), {"bottleneck.loss": [0, 0.01]}, experiment="ts", timeseries=True)
    assert [s.key for s in plain] != [s.key for s in with_ts]
    execute(plain, tmp_path, jobs=1, progress=False)
    with pytest.raises(FileNotFoundError, match="no time series stored"):
        results.load_timeseries(tmp_path, "ts")
    report = execute(with_ts, tmp_path, jobs=1, progress=False)
    assert report.ran == 2
    names = sorted(p.name for p in _part(tmp_path, "runs", "ts").iterdir())
    assert names == sorted(f"{s.key}.parquet" for s in with_ts)  # no duplicate runs
    again = execute(plain, tmp_path, jobs=1, progress=False)  # stored with time series: a superset
    assert (again.ran, again.skipped) == (0, 2) and again.keys == [s.key for s in with_ts]
    assert len(results.load(tmp_path, "ts")) == 4


def test_duplicate_specs_run_once(tmp_path):
    spec = RunSpec("dup", base_scenario(), seed=1, tags={"a": 1})
    report = execute([spec, spec], tmp_path, jobs=2, progress=False)
    assert (report.total, report.ran, report.skipped) == (2, 1, 1) and report.keys == [spec.key] * 2
    with pytest.raises(ValueError, match="same run"):
        execute([spec, RunSpec("dup", base_scenario(), seed=1, tags={"a": 2})], tmp_path, progress=False)


def test_stale_temporary_files_are_removed(tmp_path):
    d = _part(tmp_path, "runs", "tmp")
    d.mkdir(parents=True)
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = d / f".abc.parquet.tmp-{dead.pid}-0a1b2c3d"
    live = d / f".abd.parquet.tmp-{os.getpid()}-0a1b2c3d"
    stale.write_bytes(b"partial")
    live.write_bytes(b"in progress")
    execute(expand(base_scenario(), {}, experiment="tmp"), tmp_path, jobs=1, progress=False)
    assert not stale.exists() and live.exists()
    assert len(results.load(tmp_path, "tmp")) == 2  # temporary files are never read


# -- load ---------------------------------------------------------------------------------------


def test_load_selects_experiments_and_keys(tmp_path):
    a = expand(base_scenario(), {"bottleneck.loss": [0, 0.01]}, experiment="a")
    b = expand(base_scenario(), {"flows.0.cc": ["bbr"]}, runs=2, experiment="b")
    execute(a + b, tmp_path, jobs=2, progress=False)
    both = results.load(tmp_path)
    assert list(dict.fromkeys(both["experiment"])) == ["a", "b"] and len(both) == 2 * 2 + 2 * 2
    # b's cc tag shadows its flows' algorithm column (flow_cc); a has no cc tag, so its cc column
    # is its flows' algorithm and it has no flow_cc.
    assert set(both.loc[both["experiment"] == "a", "cc"]) == {"cubic"}
    assert pd.isna(both.loc[both["experiment"] == "a", "flow_cc"]).all()
    assert set(both.loc[both["experiment"] == "b", "flow_cc"]) == {"bbr"}
    pdt.assert_frame_equal(results.load(tmp_path, ["a", "b"]), both)
    only_b = results.load(tmp_path, "b")
    assert set(only_b["experiment"]) == {"b"} and "loss" not in only_b.columns
    one = results.load(tmp_path, keys=[a[1].key])
    assert set(one["key"]) == {a[1].key} and len(one) == 2
    with pytest.raises(FileNotFoundError, match=r"no experiment 'c'.*stored: a, b"):
        results.load(tmp_path, "c")
    with pytest.raises(FileNotFoundError, match="no such directory"):
        results.load(tmp_path / "nope")


def test_load_warns_about_stale_runs_with_the_same_tags(tmp_path):
    execute(expand(base_scenario(), {"bottleneck.loss": [0]}, experiment="s"), tmp_path, jobs=1, progress=False)
    sc = base_scenario()
    sc["duration"] = "2s"  # the experiment's definition changed, its tags did not
    report = execute(expand(sc, {"bottleneck.loss": [0]}, experiment="s"), tmp_path, jobs=1, progress=False)
    with pytest.warns(UserWarning, match="share their tags and seed"):
        results.load(tmp_path, "s")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        df = results.load(tmp_path, "s", keys=report.keys)
    assert set(df["sim_seconds"]) == {2.0}


def test_load_timeseries_and_events_match_direct_run(stored):
    out, specs = stored
    spec = next(s for s in specs if s.tags["cc"] == "bbr" and s.tags["loss"] == 0.01)
    direct = ccsim.run(spec.scenario, seed=spec.seed)
    ts = results.load_timeseries(out, "grid", spec.key)
    assert list(ts.columns[:6]) == ["experiment", "key", "seed", "loss", "cc", "run"]
    assert set(ts["key"]) == {spec.key} and set(ts["cc"]) == {"bbr"}
    body = ts[[("flow_cc" if c == "cc" else c) for c in direct.timeseries.columns]].reset_index(drop=True)
    body.columns = list(direct.timeseries.columns)

    def missing_as_none(col):
        # A string column without a value: None in Result, NaN under pandas 3's string dtype
        # once read back from Parquet. The same information; the values are compared as such.
        return col.astype(object).where(col.notna(), None)

    body = body.assign(queue_state=missing_as_none(body["queue_state"]))
    expected = direct.timeseries.assign(cc=direct.timeseries["cc"].astype(str),
                                        queue_state=missing_as_none(direct.timeseries["queue_state"]))
    pdt.assert_frame_equal(body, expected, check_dtype=False)
    ev = results.load_cc_events(out, "grid", spec.key)
    assert len(ev) == len(direct.cc_events)
    all_ts = results.load_timeseries(out, "grid")
    assert all_ts["key"].nunique() == 8 and len(all_ts) == 8 * len(direct.timeseries)
    two = results.load_timeseries(out, "grid", keys=[specs[0].key, spec.key])
    assert set(two["key"]) == {specs[0].key, spec.key}
    assert set(results.load_cc_events(out, "grid", keys=[spec.key])["key"]) <= {spec.key}
    with pytest.raises(FileNotFoundError, match="no time series stored for run 0000"):
        results.load_timeseries(out, "grid", "0000000000000000")


# -- query ----------------------------------------------------------------------------------------

_SQL = ("SELECT loss, cc, avg(total_throughput_mbps) AS mbps, count(DISTINCT key) AS n "
        "FROM runs WHERE flow = 0 GROUP BY ALL ORDER BY ALL")


def test_query_aggregates_over_runs(stored):
    out, _ = stored
    got = results.query(out, _SQL)
    df = results.load(out)
    want = (df[df["flow"] == 0].groupby(["loss", "cc"], as_index=False)
            .agg(mbps=("total_throughput_mbps", "mean"), n=("key", "nunique")))
    assert list(got.columns) == ["loss", "cc", "mbps", "n"]
    assert got["mbps"].tolist() == pytest.approx(want["mbps"].tolist())
    assert got["n"].tolist() == [2, 2, 2, 2]
    assert results.query(out, "SELECT DISTINCT experiment FROM runs")["experiment"].tolist() == ["grid"]
    n_ts = results.query(out, "SELECT count(*) AS n FROM timeseries")["n"].iloc[0]
    assert n_ts == len(results.load_timeseries(out, "grid"))
    results.query(out, "SELECT count(*) FROM cc_events")


def test_query_spans_experiments(tmp_path):
    """Several experiments in one store make one view each (DuckDB 2 would otherwise add a second
    `experiment` column from the experiment=NAME directories and refuse the union)."""
    for name in ("a", "b"):
        execute(expand(base_scenario(), {"bottleneck.loss": [0]}, experiment=name), tmp_path, jobs=1, progress=False)
    got = results.query(tmp_path, "SELECT experiment, count(DISTINCT key) AS n FROM runs GROUP BY 1 ORDER BY 1")
    assert got["experiment"].tolist() == ["a", "b"] and got["n"].tolist() == [1, 1]


def test_query_sees_failed_runs(tmp_path):
    bad = base_scenario()
    bad["bottleneck"]["loss"] = 7
    execute([RunSpec("f", base_scenario(), seed=1), RunSpec("f", bad, seed=1)], tmp_path, jobs=1, progress=False)
    failed = results.query(tmp_path, "SELECT experiment, seed, error FROM failed")
    assert failed["experiment"].tolist() == ["f"] and "bottleneck.loss" in failed["error"].iloc[0]


def test_cli_query_prints_a_table(stored, runner):
    out, _ = stored
    res = runner.invoke(cli, ["query", str(out), _SQL])
    assert res.exit_code == 0, res.output
    want = results.query(out, _SQL)
    for word in ("loss", "cc", "mbps", "bbr", "cubic", "4 rows"):
        assert word in res.stdout, word
    assert f"{want['mbps'].iloc[0]:.6g}" in res.stdout
    csv = runner.invoke(cli, ["query", str(out), _SQL, "--format", "csv"])
    assert csv.exit_code == 0
    pdt.assert_frame_equal(pd.read_csv(io.StringIO(csv.stdout)), want, check_dtype=False)


@pytest.mark.parametrize(
    "sql, expected",
    [
        ("SELEC 1", "error: query failed: Parser Error: syntax error"),
        ("SELECT nope FROM runs", 'error: query failed: Binder Error: Referenced column "nope" not found'),
        ("SELECT * FROM missing_table", "error: query failed: Catalog Error"),
    ],
)
def test_cli_query_bad_sql_is_one_error_line(stored, runner, sql, expected):
    out, _ = stored
    res = runner.invoke(cli, ["query", str(out), sql])
    assert res.exit_code == 2
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(expected), res.stderr
    assert "Traceback" not in res.stderr


def test_cli_query_missing_directory(runner, tmp_path):
    res = runner.invoke(cli, ["query", str(tmp_path / "nope"), "SELECT 1"])
    assert res.exit_code == 2
    assert res.stderr == f"error: {tmp_path / 'nope'}: no such directory\n"
    empty = tmp_path / "empty"
    empty.mkdir()
    res = runner.invoke(cli, ["query", str(empty), "SELECT 1"])
    assert res.exit_code == 2 and "no stored runs" in res.stderr and len(res.stderr.splitlines()) == 1


def test_query_failed_view_is_empty_without_failures(stored, runner):
    out, _ = stored
    got = results.query(out, "SELECT * FROM failed")
    assert len(got) == 0 and list(got.columns) == ["experiment", "key", "seed", "error"]
    res = runner.invoke(cli, ["query", str(out), "SELECT experiment, key FROM failed"])
    assert res.exit_code == 0 and res.stdout.rstrip().endswith("0 rows"), res.output


def test_query_of_a_view_the_store_lacks_names_the_option(tmp_path, runner):
    execute(expand(base_scenario(), {"bottleneck.loss": [0]}, experiment="plain"), tmp_path, jobs=1,
            progress=False)
    for view, what in (("timeseries", "time series"), ("cc_events", "algorithm events")):
        with pytest.raises(ccsim.ScenarioError, match=f"no {what} are stored here.*ccsim sweep --timeseries"):
            results.query(tmp_path, f"SELECT count(*) FROM {view}")
        res = runner.invoke(cli, ["query", str(tmp_path), f"SELECT * FROM {view} LIMIT 3"])
        assert res.exit_code == 2
        assert res.stderr == (
            f"error: {tmp_path}: no {what} are stored here, so there is no {view} view; runs store them "
            "with `ccsim sweep --timeseries` (Python: ccsim.sweep.expand(..., timeseries=True))\n")


def test_wide_query_is_printed_as_records_in_a_narrow_terminal(stored, ccsim_cmd):
    """SELECT * is wider than 80 columns: every name and value is printed in full, one block per
    row, never cut short or left blank."""
    out, _ = stored
    sql = "SELECT * FROM runs ORDER BY key, flow LIMIT 3"
    want = results.query(out, sql)
    env = {**os.environ, "COLUMNS": "80"}
    env.pop("CCSIM_DEBUG", None)
    proc = subprocess.run([ccsim_cmd, "query", str(out), sql], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert "…" not in proc.stdout and "..." not in proc.stdout
    assert lines[-1] == "3 rows"
    width = max(len(c) for c in want.columns) + 1
    expected = []
    for i, row in enumerate(want.itertuples(index=False), 1):
        expected.append(f"-- row {i} --")
        for col, value in zip(want.columns, row):
            expected.append(f"{col + ':':<{width}} {_shown(value)}")
    assert lines[:-1] == expected
    # A narrow result stays a table.
    proc = subprocess.run([ccsim_cmd, "query", str(out), "SELECT DISTINCT loss FROM runs ORDER BY 1"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0 and proc.stdout.split() == ["loss", "─" * len(proc.stdout.split()[1]), "0",
                                                           "0.01", "2", "rows"]


def _shown(value) -> str:
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def test_cli_query_markdown(stored, runner):
    out, _ = stored
    res = runner.invoke(cli, ["query", str(out), _SQL, "--format", "markdown"])
    assert res.exit_code == 0, res.output
    want = results.query(out, _SQL)
    lines = res.stdout.splitlines()
    assert lines[0] == "| loss | cc | mbps | n |" and lines[1] == "|---:|---|---:|---:|"
    assert len(lines) == 2 + len(want)
    for line, row in zip(lines[2:], want.itertuples(index=False)):
        assert line == "| " + " | ".join(_shown(v) for v in row) + " |"
