"""The output schema is defined once, in the engine, and everything reads it: Result's tables,
the Parquet files, the sweep store, the CLI and docs/outputs.md have the schema's columns with
the schema's types, for a dumbbell, a [[links]] network with Wi-Fi hops and a [wireless] line."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

import ccsim
from ccsim import schema
from ccsim.cli import cli

ROOT = Path(__file__).resolve().parents[2]

DUMBBELL = {
    "duration": "2s",
    "bottleneck": {"rate": "20Mbps", "delay": "10ms", "buffer": "30pkt"},
    "flows": [{"cc": "cubic"}, {"cc": "cdg"}, {"cc": "bbr-rtprop"}],
}
NETWORK = {
    "duration": "2s",
    "links": [
        {"between": ["server", "r1"], "rate": "50Mbps", "delay": "5ms", "buffer": "50pkt"},
        {"between": ["r1", "ap"], "rate": "unlimited", "delay": "1ms"},
    ],
    "wifi": [{"stations": ["ap", "sta"]}],
    "flows": [{"cc": "cubic", "src": "server", "dst": "sta"}],
}
LINE = {
    "duration": "2s",
    "wireless": {"hops": 2},
    "flows": [{"cc": "cubic"}, {"protocol": "udp", "rate": "100pps", "src": 0, "dst": 2}],
}

_PANDAS = {"int": ("int64",), "float": ("float64",), "category": ("category",), "bool": ("bool",),
           # pandas 3 gives strings its own dtype ("str"); older versions "object".
           "str": ("object", "str"), "list[str]": ("object",)}


def _check_frame(df, table: schema.Table, *, all_columns: bool) -> None:
    names = [c for c in table.names if c in df.columns]
    assert list(df.columns) == (list(table.names) if all_columns else names), table.name
    for col in df.columns:
        c = table.column(col)
        # pandas holds a missing integer as NaN: an int column with nulls (a nullable one, or a
        # UDP flow's TCP columns on a [wireless] line) is float64, a bool one object.
        missing = bool(df[col].isna().any())
        accepted = _PANDAS[c.type] + ({"int": ("float64",), "bool": ("object",)}.get(c.type, ()) if missing else ())
        assert str(df[col].dtype) in accepted, f"{table.name}.{col}: {df[col].dtype} for {c.type}"


@pytest.fixture(scope="module")
def results():
    return {name: ccsim.run(sc) for name, sc in (("dumbbell", DUMBBELL), ("network", NETWORK), ("line", LINE))}


def test_docs_outputs_md_is_the_schema():
    text = (ROOT / "docs" / "outputs.md").read_text(encoding="utf-8")
    assert text == schema.markdown(), "docs/outputs.md is stale: run `ccsim schema --markdown > docs/outputs.md`"


def test_the_schema_names_every_column_of_results_tables(results):
    for name, res in results.items():
        flows = schema.table("line_flows" if name == "line" else "flows")
        _check_frame(res.summary, flows, all_columns=False)
        assert len(res.summary) == len(DUMBBELL["flows"] if name == "dumbbell" else res.flows)
        _check_frame(res.timeseries, schema.table("timeseries"), all_columns=True)
        assert len(res.timeseries) > 0
        _check_frame(res.cc_events, schema.table("cc_events"), all_columns=True)
        if name != "line":
            _check_frame(res.links, schema.table("links"), all_columns=True)
            _check_frame(res.link_queues, schema.table("link_queues"), all_columns=True)
        if name != "dumbbell":
            stations = schema.table("stations")
            _check_frame(res.stations, stations, all_columns=name == "network")
            _check_frame(res.air_hops, schema.table("air_hops"), all_columns=name == "network")
            assert len(res.air_hops) > 0 and len(res.air_hops) == len(res.to_dict()["air_hops"])
        else:
            assert len(res.air_hops) == 0 and "air_hops" not in res.to_dict()
    # The events and the queue state have values (so their columns' types are checked on rows).
    assert len(results["dumbbell"].cc_events) > 0
    assert results["dumbbell"].timeseries["queue_state"].notna().any()
    assert len(results["network"].link_queues) > 0


def test_a_run_without_rows_has_the_schemas_columns_and_types():
    res = ccsim.run(DUMBBELL, timeseries=False)
    assert len(res.timeseries) == 0
    _check_frame(res.timeseries, schema.table("timeseries"), all_columns=True)
    res = ccsim.run({**DUMBBELL, "flows": [{"cc": "cubic"}]})
    assert len(res.cc_events) == 0
    _check_frame(res.cc_events, schema.table("cc_events"), all_columns=True)


_ARROW = {"int": ("int64",), "float": ("double",), "bool": ("bool",), "str": ("string", "large_string"),
          "category": ("dictionary<values=string, indices=int8, ordered=0>",
                       "dictionary<values=string, indices=int32, ordered=0>"),
          "list[str]": ("list<element: string>", "list<item: string>", "large_list<element: large_string>",
                        "list<element: large_string>", "large_list<item: large_string>")}


def _check_arrow(path: Path, table: schema.Table, *, all_columns: bool) -> None:
    got = pq.read_schema(path)
    if all_columns:
        assert got.names == list(table.names), path.name
    for field in got:
        c = table.column(field.name)
        # An int column with nulls is stored as double (pandas' NaN): a nullable one, or a UDP
        # flow's TCP columns on a [wireless] line.
        maybe_null = c.nullable or table.name == "line_flows"
        accepted = _ARROW[c.type] + (("double",) if c.type == "int" and maybe_null else ())
        assert str(field.type) in accepted, f"{path.name}: {field.name} is {field.type} for {c.type}"


@pytest.mark.parametrize("name", ["network", "line", "no_rows"])
def test_parquet_files_have_the_schemas_columns_and_types(results, tmp_path, name):
    res = ccsim.run(DUMBBELL, timeseries=False) if name == "no_rows" else results[name]
    out = res.to_parquet(tmp_path)
    _check_arrow(out / "flows.parquet", schema.table("line_flows" if name == "line" else "flows"), all_columns=False)
    for table in ("timeseries", "cc_events") + (("links", "link_queues") if name != "line" else ()):
        _check_arrow(out / f"{table}.parquet", schema.table(table), all_columns=True)


def test_a_stored_run_has_every_scalar_column_with_its_type(tmp_path):
    """A sweep's runs and time-series files, as written: every scalar column of the schema's
    summary, bottleneck (``bn_``) and flows tables, of the schema's type."""
    from ccsim.sweep import execute, expand

    execute(expand(DUMBBELL, {}, experiment="x", timeseries=True), tmp_path, jobs=1, progress=False)
    runs = next((tmp_path / "runs" / "experiment=x").glob("*.parquet"))
    got = {f.name: str(f.type).replace("large_string", "string") for f in pq.read_schema(runs)}
    stored = {"int": "int64", "float": "double", "bool": "bool", "str": "string", "category": "string"}
    for c in schema.table("summary").columns:
        if c.scalar and c.name not in ("name", "seed"):
            assert got[c.name] == stored[c.type], c.name
    for c in schema.table("bottleneck").columns:
        assert got[f"bn_{c.name}"] == stored[c.type], c.name
    for c in schema.table("flows").columns:
        key = "flow" if c.name == "id" else c.name
        assert got[key] == stored.get(c.type, "string"), c.name  # path: one joined string
    ts = next((tmp_path / "timeseries" / "experiment=x").glob("*.parquet"))
    ts_types = {f.name: str(f.type).replace("large_string", "string") for f in pq.read_schema(ts)}
    assert ts_types["queue_state"] == "string" and ts_types["srtt_ms"] == "double"


def test_a_record_with_a_key_the_schema_lacks_is_refused():
    with pytest.raises(KeyError, match="'throughput' not in the schema"):
        schema.table("flows").row({"id": 0, "throughput": 1.0})
    row = schema.table("links").row({"id": "a->b"})
    assert list(row) == [c.name for c in schema.table("links").columns if not c.nullable or c.name == "id"]


def test_cli_lists_and_shows_tables():
    runner = CliRunner()
    r = runner.invoke(cli, ["schema"])
    assert r.exit_code == 0
    for t in schema.tables():
        assert t in r.output
    r = runner.invoke(cli, ["schema", "timeseries", "--json"])
    assert r.exit_code == 0
    data = json.loads(r.output)
    assert [c["name"] for c in data["columns"]] == list(schema.columns("timeseries"))
    assert next(c for c in data["columns"] if c["name"] == "srtt_ms")["unit"] == "ms"
    r = runner.invoke(cli, ["schema", "flow"])
    assert r.exit_code == 2
    assert r.output.count("\n") == 1 and "unknown table 'flow'; accepted: summary, flows" in r.output


def test_cli_headings_carry_the_schemas_units(tmp_path):
    f = tmp_path / "s.toml"
    f.write_text('duration = "1s"\n[bottleneck]\nrate = "10Mbps"\ndelay = "5ms"\nbuffer = "20pkt"\n'
                 '[[flows]]\ncc = "cubic"\n', encoding="utf-8")
    r = CliRunner().invoke(cli, ["run", str(f)])
    assert r.exit_code == 0, r.output
    header = "\n".join(r.output.splitlines()[1:3])
    for col in ("throughput_mbps", "rtt_mean_ms", "cwnd_final_pkts"):
        assert schema.table("flows").column(col).unit in header
