"""Damaged stores and model versions: stored files are checked on resume, damaged runs are moved
aside and rerun, reads name a damaged file, and runs of an older model version are not reused."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pandas.testing as pdt
import pyarrow.parquet as pq
import pytest

import ccsim
from ccsim import _core, results, store
from ccsim.cli import cli
from ccsim.sweep import execute, expand

from _support import base_scenario, find_ccsim_command, run_cmd, to_toml

TABLES = ("runs", "timeseries", "cc_events")


def _sweep_file(tmp_path: Path) -> Path:
    sc = base_scenario()
    sc["runs"] = 2
    sc["sweep"] = {"bottleneck.loss": [0, 0.01], "flows.0.cc": ["cubic", "bbr"]}
    path = tmp_path / "dmg.toml"
    path.write_text(to_toml(sc), encoding="utf-8")
    return path


def _files(out: Path, table: str) -> list[Path]:
    return store.run_files(out, table, "dmg")


def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _flip(path: Path, at: int, n: int = 32) -> None:
    data = bytearray(path.read_bytes())
    data[at:at + n] = bytes(b ^ 0xFF for b in data[at:at + n])
    path.write_bytes(bytes(data))


def _data_start(path: Path) -> int:
    """An offset inside the data pages (between the leading magic number and the footer)."""
    data = path.read_bytes()
    footer = int.from_bytes(data[-8:-4], "little")
    return 4 + (len(data) - 8 - footer - 4) // 2


def _store_contents(out: Path) -> dict:
    """What a store holds, apart from wall_seconds (which differs between any two runs)."""
    names = {t: sorted(p.name for p in store.run_files(out, t, "dmg")) for t in TABLES}
    runs = results.load(out, "dmg").drop(columns=["wall_seconds"])
    ts = results.load_timeseries(out, "dmg")
    ev = results.load_cc_events(out, "dmg")
    return {"names": names, "runs": runs, "timeseries": ts, "cc_events": ev}


def test_damaged_runs_are_moved_aside_and_rerun(tmp_path, runner):
    """Truncate one run file and corrupt the middle of others: resuming the sweep detects them,
    keeps them under OUT/damaged/, reruns them and ends with the store an undamaged sweep makes."""
    path = _sweep_file(tmp_path)
    ref, out = tmp_path / "reference", tmp_path / "damaged-store"
    for d in (ref, out):
        res = runner.invoke(cli, ["sweep", str(path), "--out", str(d), "--timeseries", "--jobs", "2"])
        assert res.exit_code == 0, res.output
    runs = _files(out, "runs")
    ts = _files(out, "timeseries")
    assert len(runs) == 8 and len(ts) == 8
    truncated, middle, ts_middle = runs[0], runs[1], ts[2]
    _truncate(truncated)
    _flip(middle, len(middle.read_bytes()) // 2)
    _flip(ts_middle, len(ts_middle.read_bytes()) // 2)
    damaged_bytes = {p.name + p.parent.parent.name: p.read_bytes() for p in (truncated, middle, ts_middle)}

    res = runner.invoke(cli, ["sweep", str(path), "--out", str(out), "--timeseries", "--jobs", "2"])
    assert res.exit_code == 0, res.output
    assert "= 8 runs (3 ran, 5 already stored, 0 failed)" in res.stdout
    assert f"3 damaged runs moved to {out / 'damaged'}/ and rerun" in res.stdout
    # The damaged files are kept, unchanged, in the same layout under OUT/damaged.
    moved = sorted((out / "damaged").rglob("*.parquet"))
    assert {p.name + p.parent.parent.name: p.read_bytes() for p in moved} == damaged_bytes
    assert {p.relative_to(out / "damaged") for p in moved} == {
        p.relative_to(out) for p in (truncated, middle, ts_middle)}

    got, want = _store_contents(out), _store_contents(ref)
    assert got["names"] == want["names"]
    for table in ("runs", "timeseries", "cc_events"):
        pdt.assert_frame_equal(got[table], want[table])
    again = runner.invoke(cli, ["sweep", str(path), "--out", str(out), "--timeseries"])
    assert again.exit_code == 0 and "(0 ran, 8 already stored, 0 failed)" in again.stdout
    assert "damaged run" not in again.stdout


def test_corrupted_data_pages_are_detected(tmp_path):
    """A flipped byte in the data pages leaves the footer intact; the checksum catches it."""
    specs = expand(base_scenario(), {"bottleneck.loss": [0, 0.01]}, experiment="dmg")
    execute(specs, tmp_path, jobs=1, progress=False)
    before = results.load(tmp_path, "dmg")
    victim = store.partition(tmp_path, "runs", "dmg") / f"{specs[1].key}.parquet"
    _flip(victim, _data_start(victim), 4)
    pq.read_metadata(victim)  # the footer still reads
    with pytest.raises(ccsim.ScenarioError, match="checksum of its data pages does not match"):
        results.load(tmp_path, "dmg")
    report = execute(specs, tmp_path, jobs=1, progress=False)
    assert (report.ran, report.skipped, report.damaged, report.damaged_rerun) == (1, 1, [("dmg", specs[1].key)], 1)
    pdt.assert_frame_equal(results.load(tmp_path, "dmg").drop(columns="wall_seconds"),
                           before.drop(columns="wall_seconds"))


def test_reading_a_damaged_store_names_the_file(tmp_path, runner):
    specs = expand(base_scenario(), {"bottleneck.loss": [0, 0.01]}, experiment="dmg", timeseries=True)
    execute(specs, tmp_path, jobs=1, progress=False)
    victim = store.partition(tmp_path, "runs", "dmg") / f"{specs[0].key}.parquet"
    _truncate(victim)
    for call in (lambda: results.load(tmp_path), lambda: results.load(tmp_path, "dmg", keys=[specs[0].key]),
                 lambda: results.query(tmp_path, "SELECT count(*) FROM runs")):
        with pytest.raises(ccsim.ScenarioError) as err:
            call()
        text = str(err.value)
        assert isinstance(err.value, results.DamagedRunError)
        assert text.startswith(f"{victim}: damaged stored run: not a complete Parquet file")
        assert "\n" not in text and f"{tmp_path / 'damaged'}/" in text
    # A view the query does not name is not read.
    assert results.query(tmp_path, "SELECT count(*) AS n FROM timeseries")["n"].iloc[0] > 0
    res = runner.invoke(cli, ["query", str(tmp_path), "SELECT * FROM runs"])
    assert res.exit_code == 2
    assert res.stderr.startswith(f"error: {victim}: damaged stored run") and res.stderr.count("\n") == 1
    ts_victim = store.partition(tmp_path, "timeseries", "dmg") / f"{specs[1].key}.parquet"
    _flip(ts_victim, _data_start(ts_victim), 8)
    with pytest.raises(results.DamagedRunError, match="^" + re.escape(f"{ts_victim}: damaged stored run: the checksum")):
        results.load_timeseries(tmp_path, "dmg", specs[1].key)


def test_installed_command_names_a_damaged_file(tmp_path):
    specs = expand(base_scenario(), {"bottleneck.loss": [0]}, experiment="dmg")
    execute(specs, tmp_path, jobs=1, progress=False)
    victim = store.partition(tmp_path, "runs", "dmg") / f"{specs[0].key}.parquet"
    _flip(victim, len(victim.read_bytes()) // 2)
    proc = run_cmd(find_ccsim_command(), "query", str(tmp_path), "SELECT avg(throughput_mbps) FROM runs")
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"error: {victim}: damaged stored run: ") and proc.stderr.count("\n") == 1
    assert "Traceback" not in proc.stderr


def test_files_record_the_model_version_and_keys_include_it(tmp_path, monkeypatch):
    specs = expand(base_scenario(), {"bottleneck.loss": [0, 0.01]}, experiment="mv", timeseries=True)
    execute(specs, tmp_path, jobs=1, progress=False)
    assert isinstance(_core.MODEL_VERSION, int) and _core.MODEL_VERSION >= 1
    for table in TABLES:
        for p in store.run_files(tmp_path, table, "mv"):
            meta = json.loads(pq.read_schema(p).metadata[b"ccsim"])
            assert meta["model_version"] == _core.MODEL_VERSION
            assert meta["rows"] == pq.read_metadata(p).num_rows
    monkeypatch.setattr(_core, "MODEL_VERSION", _core.MODEL_VERSION + 1)
    newer = expand(base_scenario(), {"bottleneck.loss": [0, 0.01]}, experiment="mv", timeseries=True)
    assert not {s.key for s in newer} & {s.key for s in specs}


def test_runs_of_an_older_model_version_are_not_reused(tmp_path, monkeypatch, runner):
    path = _sweep_file(tmp_path)
    out = tmp_path / "store"
    assert runner.invoke(cli, ["sweep", str(path), "--out", str(out)]).exit_code == 0
    old_keys = sorted(p.name for p in store.run_files(out, "runs", "dmg"))
    # A failed run of the old version is set aside too.
    (store.partition(out, "runs", "dmg") / "00000000000000aa.error.json").write_text(
        json.dumps({"key": "00000000000000aa", "error": "boom", "seed": 1,
                    "model_version": _core.MODEL_VERSION}), encoding="utf-8")
    monkeypatch.setattr(_core, "MODEL_VERSION", _core.MODEL_VERSION + 1)
    res = runner.invoke(cli, ["sweep", str(path), "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert "= 8 runs (8 ran, 0 already stored, 0 failed)" in res.stdout
    assert (f"9 stored runs of an older model version (computed by an earlier ccsim engine) not reused: "
            f"moved to {out / 'old-model'}/") in res.stdout
    new_keys = sorted(p.name for p in store.run_files(out, "runs", "dmg"))
    assert len(new_keys) == 8 and not set(new_keys) & set(old_keys)
    old = out / "old-model"
    assert sorted(p.name for p in store.run_files(old, "runs", "dmg")) == old_keys
    assert [p.name for p in store.error_files(old, "dmg")] == ["00000000000000aa.error.json"]
    # The store holds one model version; the old runs stay readable where they were moved.
    assert results.query(out, "SELECT count(DISTINCT key) AS n FROM runs")["n"].iloc[0] == 8
    assert results.query(out, "SELECT count(*) AS n FROM failed")["n"].iloc[0] == 0
    assert results.query(old, "SELECT count(DISTINCT key) AS n FROM runs")["n"].iloc[0] == 8
    assert len(pd.concat([results.load(out), results.load(old)])) == 32
