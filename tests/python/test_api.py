"""The Python API: loading, building, running, exporting, plotting."""

from __future__ import annotations

import json
import math
import re

import duckdb
import pandas as pd
import pytest

import ccsim
from ccsim import Result, Scenario, ScenarioError
from ccsim.result import FLOW_COLUMNS, TIMESERIES_COLUMNS

from _support import EXAMPLES, base_scenario

#: Scenario examples; sweep files (a [sweep] table) are run by `ccsim sweep` and tested there.
EXAMPLE_FILES = sorted(p for p in EXAMPLES.glob("*.toml") if "[sweep]" not in p.read_text())
SWEEP_EXAMPLES = sorted(p for p in EXAMPLES.glob("*.toml") if "[sweep]" in p.read_text())


def _without_wall(d: dict) -> dict:
    d = dict(d)
    d.pop("wall_seconds", None)
    return d


def _small_builder() -> Scenario:
    return (
        Scenario(duration="3s", seed=1)
        .bottleneck(rate="10Mbps", delay="20ms", buffer="1bdp", loss=0.0)
        .tcp(mss=1448, delayed_ack=True)
        .add_flow("cubic", count=2, start="0s")
    )


# -- package --------------------------------------------------------------------------


def test_public_names():
    for name in ("load", "Scenario", "run", "Result", "ScenarioError", "algorithms", "__version__"):
        assert hasattr(ccsim, name), name
    assert issubclass(ScenarioError, ValueError)


def test_version_comes_from_core():
    from ccsim import _core

    assert isinstance(ccsim.__version__, str) and ccsim.__version__
    assert ccsim.__version__ == _core.__version__


def test_algorithms_lists_the_three_algorithms():
    algos = ccsim.algorithms()
    assert isinstance(algos, list)
    names = {a["name"] for a in algos}
    assert {"newreno", "cubic", "bbr"} <= names
    for a in algos:
        assert {"name", "summary", "source", "params"} <= set(a)
        for p in a["params"]:
            assert {"name", "default", "unit", "range", "doc"} <= set(p)


# -- loading ----------------------------------------------------------------------------


def test_examples_exist():
    names = {p.name for p in EXAMPLE_FILES}
    assert {"cubic_pair.toml", "bbr_vs_cubic.toml", "newreno_random_loss.toml"} <= names


@pytest.mark.parametrize("path", SWEEP_EXAMPLES, ids=lambda p: p.name)
def test_sweep_examples_expand_and_validate(path):
    from ccsim.sweep import expand, load_sweep_file

    base, table, runs = load_sweep_file(path)
    specs = expand(base, table, runs, experiment=path.stem)
    n = 1
    for values in table.values():
        n *= len(values)
    assert len(specs) == n * runs > 1


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: p.name)
def test_examples_load_and_validate(path):
    sc = ccsim.load(path)
    assert isinstance(sc, Scenario)
    assert sc.source == path
    normalised = sc.validate()
    assert isinstance(normalised, Scenario)
    assert normalised["duration"] == sc["duration"]
    if "wireless" in sc:
        assert normalised["wireless"]["hops"] == sc["wireless"]["hops"]
    elif "links" in sc:
        assert [ln["between"] for ln in normalised["links"]] == [ln["between"] for ln in sc["links"]]
        assert all(f["path"][0] == f["src"] and f["path"][-1] == f["dst"] for f in normalised["flows"])
    else:
        assert normalised["bottleneck"]["rate"] == sc["bottleneck"]["rate"]


def test_load_keeps_the_file_structure(scenario_file):
    sc = ccsim.load(scenario_file)
    assert sc.to_dict() == base_scenario()
    assert json.loads(sc.to_json()) == base_scenario()


def test_load_accepts_str_path(scenario_file):
    assert ccsim.load(str(scenario_file)).to_dict() == base_scenario()


# -- builder ----------------------------------------------------------------------------


def test_builder_methods_return_self_and_build_the_toml_structure():
    sc = Scenario(duration="10s", seed=1)
    assert sc.bottleneck(rate="10Mbps", delay="20ms", buffer="1bdp", loss=0.0) is sc
    assert sc.tcp(mss=1448, delayed_ack=True) is sc
    assert sc.add_flow("cubic", count=2, start="0s") is sc
    assert sc.add_flow("bbr", start="5s", stop="8s", mss=1000) is sc
    assert sc.to_dict() == {
        "duration": "10s",
        "seed": 1,
        "bottleneck": {"rate": "10Mbps", "delay": "20ms", "buffer": "1bdp", "loss": 0.0},
        "tcp": {"mss": 1448, "delayed_ack": True},
        "flows": [
            {"cc": "cubic", "count": 2, "start": "0s"},
            {"cc": "bbr", "start": "5s", "stop": "8s", "mss": 1000},
        ],
    }


def test_builder_scenario_validates():
    normalised = _small_builder().validate()
    assert normalised["flows"][0]["cc"] == "cubic"
    assert normalised["bottleneck"]["buffer"] == "1bdp"


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: p.name)
def test_normalised_scenario_is_valid_and_stable(path):
    # validate() output must itself be a valid scenario (sweeps and saved configs reuse it),
    # and normalising twice must change nothing.
    normalised = ccsim.load(path).validate()
    assert normalised.validate() == normalised


def test_from_dict_round_trip_and_copy():
    d = base_scenario()
    sc = Scenario.from_dict(d)
    d["duration"] = "99s"  # from_dict copied the dict
    assert sc["duration"] == "3s"
    out = sc.to_dict()
    out["flows"][0]["cc"] = "bbr"  # to_dict returns a copy
    assert sc["flows"][0]["cc"] == "cubic"
    assert Scenario.from_dict(sc.to_dict()) == sc


def test_with_seed_returns_a_new_scenario():
    sc = _small_builder()
    other = sc.with_seed(42)
    assert other is not sc
    assert other["seed"] == 42
    assert sc["seed"] == 1


def test_replace_dotted_paths():
    sc = _small_builder()
    a = sc.replace("bottleneck.loss", 0.01)
    b = sc.replace("flows.0.cc", "bbr")
    c = sc.replace("flows[0].params.beta", 0.5)
    d = sc.replace("sample_interval", "10ms")
    assert a["bottleneck"]["loss"] == 0.01 and sc["bottleneck"]["loss"] == 0.0
    assert b["flows"][0]["cc"] == "bbr" and sc["flows"][0]["cc"] == "cubic"
    assert c["flows"][0]["params"] == {"beta": 0.5} and "params" not in sc["flows"][0]
    assert d["sample_interval"] == "10ms" and "sample_interval" not in sc
    assert sc.get("flows.0.count") == 2
    assert sc.replace("seed", None).get("seed", None) is None


@pytest.mark.parametrize("path", ["flows.3.cc", "flows.x.cc", "duration.unit", "", "a..b"])
def test_replace_bad_path_raises(path):
    with pytest.raises(ScenarioError):
        _small_builder().replace(path, 1)


def test_replaced_value_is_validated_by_the_core():
    with pytest.raises(ScenarioError) as err:
        _small_builder().replace("flows.0.cc", "cubicc").validate()
    assert "flows[0].cc" in str(err.value)
    assert "cubicc" in str(err.value)


def test_non_finite_float_is_reported_with_its_field():
    with pytest.raises(ScenarioError) as err:
        _small_builder().replace("bottleneck.loss", float("nan")).validate()
    assert "bottleneck.loss" in str(err.value)
    assert "nan" in str(err.value)


# -- running ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def result() -> Result:
    return ccsim.run(_small_builder())


#: Flow columns only workload flows have, and only UDP flows (absent for other flows).
WORKLOAD_COLUMNS = {"workload", "size_bytes", "fct_s", "ideal_fct_s", "slowdown"}
UDP_COLUMNS = {"datagrams_sent", "datagrams_received", "datagrams_lost", "datagrams_in_flight"}


def test_workload_and_udp_flows_have_their_own_columns():
    sc = ccsim.Scenario.from_dict({
        "duration": "5s", "bottleneck": {"rate": "10Mbps", "delay": "10ms", "buffer": "50pkt"},
        "tcp": {"delayed_ack": False},
        "flows": [{"cc": "cubic"}, {"protocol": "udp", "rate": "1Mbps"}],
        "workloads": [{"cc": "cubic", "sizes": "hadoop", "load": 0.2}],
    })
    df = ccsim.run(sc, seed=1).summary
    assert set(FLOW_COLUMNS) <= set(df.columns)
    wl = df[df.workload.notna()]
    assert len(wl) > 0 and wl.size_bytes.notna().all() and df.loc[:1, "size_bytes"].isna().all()
    assert df.loc[1, "datagrams_sent"] > 0 and df[df.index != 1].datagrams_sent.isna().all()


def test_run_returns_result_with_summary_dataframe(result):
    assert isinstance(result, Result)
    df = result.summary
    assert isinstance(df, pd.DataFrame)
    assert len(df) == 2
    # every column but those of other kinds of flow (workload flows, UDP flows)
    assert set(FLOW_COLUMNS) - WORKLOAD_COLUMNS - UDP_COLUMNS <= set(df.columns)
    assert not (WORKLOAD_COLUMNS | UDP_COLUMNS) & set(df.columns)
    assert list(df["id"]) == [0, 1]
    assert list(df["cc"]) == ["cubic", "cubic"]
    assert (df["throughput_mbps"] > 0).all()
    assert (df["throughput_mbps"] <= 10.0 + 1e-6).all()
    assert df["completion_s"].dtype.kind == "f"


def test_run_returns_timeseries_dataframe(result):
    ts = result.timeseries
    assert isinstance(ts, pd.DataFrame)
    assert list(ts.columns) == list(TIMESERIES_COLUMNS)
    assert len(ts) > 0
    assert isinstance(ts["cc"].dtype, pd.CategoricalDtype)
    assert set(ts["cc"].astype(str)) == {"cubic"}
    assert set(ts["flow"]) == {0, 1}
    assert ts["time_s"].dtype.kind == "f"
    assert ts["time_s"].min() >= 0.0
    assert ts["time_s"].max() <= 3.0 + 1e-9
    # cubic has no BBR model quantities
    assert ts["rtprop_ms"].isna().all()
    assert ts["btlbw_mbps"].isna().all()
    assert ts["cwnd_pkts"].notna().all()


def test_summary_and_bottleneck_match_to_dict(result):
    d = result.to_dict()
    assert {"seed", "sim_seconds", "events", "wall_seconds", "flows",
            "total_throughput_mbps", "jain_index", "bottleneck"} <= set(d)
    assert result.bottleneck == d["bottleneck"]
    assert {"rate_mbps", "delay_ms", "buffer_pkts", "drops", "utilization"} <= set(result.bottleneck)
    assert result.bottleneck["rate_mbps"] == pytest.approx(10.0)
    assert list(result.summary["throughput_mbps"]) == pytest.approx(
        [f["throughput_mbps"] for f in d["flows"]]
    )
    assert d["sim_seconds"] == pytest.approx(3.0)
    assert 0.0 < d["jain_index"] <= 1.0 + 1e-9
    # to_dict returns a copy
    d["flows"].clear()
    assert len(result.to_dict()["flows"]) == 2
    # and so do the accessors, down to the nested values
    f = result.flows
    before = f[0]["throughput_mbps"]
    f[0]["throughput_mbps"] = -1.0
    b = result.bottleneck
    b["rate_mbps"] = -1.0
    assert before > 0 and result.flows[0]["throughput_mbps"] == before
    assert result.bottleneck["rate_mbps"] == pytest.approx(10.0)


def test_summary_text_is_the_same_json_for_any_summary():
    from ccsim.result import _summary_text

    for d in ({}, {"a": []}, {"a": [{"x": 1}], "b": {"c": [1, 2], "d": "two\nlines"}, "e": None},
              {"flows": [{"id": 0, "path": ["a", "b"]}, {"id": 1, "v": float("nan")}], "n": [1, {"k": 2}]}):
        text = _summary_text(d)
        back = json.loads(text)
        assert json.dumps(back, sort_keys=True) == json.dumps(d, sort_keys=True)
        assert text.count("\n") >= len(d) or not d


def test_a_result_made_from_a_summary_keeps_its_own_copy(result):
    # Result(summary) copies what it is given (as copy.deepcopy would: nested lists, dicts and
    # tuples), so that changing the caller's dict afterwards changes nothing in the Result.
    import copy

    from ccsim.result import _tree_copy

    summary = result.to_dict()
    summary["extra"] = ({"a": [1, 2.5, None, True, "x"]}, [("t", [3])])
    r = ccsim.Result(summary)
    expected = copy.deepcopy(summary)
    summary["flows"][0]["throughput_mbps"] = -1.0
    summary["extra"][0]["a"].append(4)
    summary["extra"][1][0][1].append(5)
    assert r.to_dict() == expected
    t = _tree_copy(expected)
    assert t == expected and t is not expected
    assert t["extra"][1][0][1] is not expected["extra"][1][0][1]


def test_run_accepts_path_dict_and_scenario(scenario_file):
    a = ccsim.run(scenario_file).to_dict()
    b = ccsim.run(str(scenario_file)).to_dict()
    c = ccsim.run(base_scenario()).to_dict()
    d = ccsim.run(Scenario.from_dict(base_scenario())).to_dict()
    assert _without_wall(a) == _without_wall(b) == _without_wall(c) == _without_wall(d)


def test_run_is_deterministic():
    sc = _small_builder().replace("bottleneck.loss", 0.01)
    a, b = ccsim.run(sc, seed=5), ccsim.run(sc, seed=5)
    assert _without_wall(a.to_dict()) == _without_wall(b.to_dict())
    pd.testing.assert_frame_equal(a.timeseries, b.timeseries)


def test_seed_override_is_reported():
    sc = _small_builder()
    assert ccsim.run(sc).to_dict()["seed"] == 1
    assert ccsim.run(sc, seed=7).to_dict()["seed"] == 7


@pytest.mark.parametrize("seed", ["abc", 1.5, 2**64])
def test_bad_seed_raises_scenario_error(seed):
    with pytest.raises(ScenarioError) as err:
        ccsim.run(_small_builder(), seed=seed)
    assert "seed" in str(err.value)


def test_run_invalid_scenario_raises_scenario_error_without_file_prefix():
    with pytest.raises(ScenarioError) as err:
        ccsim.run(_small_builder().replace("bottleneck.rate", "10Mbit"))
    msg = str(err.value)
    assert "bottleneck.rate" in msg
    assert "10Mbit" in msg
    assert ".toml" not in msg  # no file involved


def test_random_loss_example_runs_with_losses():
    res = ccsim.run(ccsim.load(EXAMPLES / "newreno_random_loss.toml").replace("duration", "5s"))
    assert res.bottleneck["random_losses"] > 0
    assert res.summary["retransmits"].sum() > 0


# -- export -------------------------------------------------------------------------------


def test_to_parquet_writes_files_readable_by_pandas_and_duckdb(result, tmp_path):
    out = result.to_parquet(tmp_path / "run")
    assert out == tmp_path / "run"
    assert {p.name for p in out.iterdir()} >= {"summary.json", "flows.parquet", "timeseries.parquet"}

    text = (out / "summary.json").read_text()
    assert json.loads(text) == result.to_dict()
    # One flow to a line (readable, and quick to write with 100,000 flows), the rest indented.
    flow_lines = [ln for ln in text.splitlines() if re.match(r'    \{"id": \d', ln)]  # links' ids are names
    assert [json.loads(ln.rstrip(",")) for ln in flow_lines] == result.to_dict()["flows"]
    assert '\n  "bottleneck": {\n    "rate_mbps": ' in text

    flows = pd.read_parquet(out / "flows.parquet")
    assert list(flows.columns) == list(result.summary.columns)
    assert list(flows["throughput_mbps"]) == pytest.approx(list(result.summary["throughput_mbps"]))
    ts = pd.read_parquet(out / "timeseries.parquet")
    assert list(ts.columns) == list(TIMESERIES_COLUMNS)
    assert len(ts) == len(result.timeseries)

    con = duckdb.connect()
    n_rows, n_flows, n_cc = con.execute(
        "SELECT count(*), count(DISTINCT flow), count(DISTINCT cc) FROM read_parquet(?)",
        [str(out / "timeseries.parquet")],
    ).fetchone()
    assert n_rows == len(result.timeseries)
    assert n_flows == 2 and n_cc == 1
    total = con.execute(
        "SELECT sum(throughput_mbps) FROM read_parquet(?)", [str(out / "flows.parquet")]
    ).fetchone()[0]
    assert math.isclose(total, result.summary["throughput_mbps"].sum(), rel_tol=1e-9)


def test_plot_writes_png_with_two_panels(result, tmp_path):
    path = tmp_path / "plot.png"
    fig = result.plot(path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    axes = fig.get_axes()
    assert len(axes) == 2
    rate_ax, cwnd_ax = axes
    assert "Mbps" in rate_ax.get_ylabel()
    assert "packets" in cwnd_ax.get_ylabel()
    assert "s" in cwnd_ax.get_xlabel()
    labels = [t.get_text() for t in rate_ax.get_legend().get_texts()]
    assert "flow 0 (cubic)" in labels and "flow 1 (cubic)" in labels


def test_plot_without_path_returns_figure(result):
    fig = result.plot()
    assert len(fig.get_axes()) == 2
