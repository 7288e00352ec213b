"""Reading stored sweep results (``ccsim.results.load(DIR)``).

A store directory is written by :func:`ccsim.sweep.execute` (layout in
:mod:`ccsim.store`).  :func:`load` returns one row per (run, flow) with the
columns ``experiment, key, seed``, the tag columns (a sweep's swept parameters,
named by :func:`ccsim.sweep.table.column_names`: ``bottleneck.loss`` -> ``loss``,
``flows.0.cc`` -> ``cc``; then ``run``), the run-level columns (the summary's scalar
values: ``sim_seconds, events, wall_seconds, total_throughput_mbps, jain_index``, then the
bottleneck's as ``bn_drops``, ``bn_utilization``, ...) and the flow columns (``flow`` = the
flow's ``id``, ``cc``, ``throughput_mbps``, ...): the output schema's ``summary``,
``bottleneck`` and ``flows`` tables (``ccsim schema``, docs/outputs.md; a flow's ``path`` is
one string ``"a->r1->b"``).  A result column that a tag shadows is renamed (with a ``cc``
tag, the flows' algorithm is ``flow_cc``).  :func:`query`
runs SQL (DuckDB) over the same files.  Both check each file they read
(:mod:`ccsim.store_check`) and raise :class:`DamagedRunError` naming a damaged one.
"""

from __future__ import annotations

import json
import os
import re
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from . import store, store_check
from .scenario import ScenarioError
from .store_check import DamagedRunError

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    import pyarrow as pa

__all__ = ["DamagedRunError", "load", "load_cc_events", "load_timeseries", "query"]

PathLike = str | os.PathLike


def load(
    out: PathLike,
    experiment: str | Sequence[str] | None = None,
    *,
    include_failed: bool = False,
    keys: Iterable[str] | None = None,
) -> pd.DataFrame:
    """The stored runs, one row per (run, flow), sorted by experiment, tags, seed, key, flow.

    ``experiment``: one name, several, or all (None).  ``keys``: only these runs.
    With ``include_failed``, failed runs are included too (one row each, with
    ``status="failed"`` and the one-line ``error``; other runs have
    ``status="ok"``).  Raises FileNotFoundError for a missing directory or
    experiment.
    """
    root = _root(out)
    exps = _experiments(root, experiment, "runs")
    wanted = None if keys is None else set(keys)
    parts: list[tuple[str, list[Path]]] = []
    failed: list[dict[str, Any]] = []
    for e in exps:
        files = _select(store.run_files(root, "runs", e), wanted)
        parts.append((e, files))
        if include_failed:
            have = {f.name[: -len(".parquet")] for f in files}
            for path in store.error_files(root, e):
                key = path.name[: -len(".error.json")]
                if key in have or (wanted is not None and key not in wanted):
                    continue
                failed.append(_read_error(path, e, key))
    table, tags = _read(parts, extra_tags=[r["tags"] for r in failed])
    df = table.to_pandas()
    if include_failed:
        df["status"] = "ok"
        df["error"] = None
        if failed:
            df = _append_failed(df, failed, tags, table.schema)
    df = _sort(df, tags, ("seed", "key", "flow"))
    if wanted is None and len(df):
        _warn_stale(df, tags)
    return df


def load_timeseries(out: PathLike, experiment: str, key: str | None = None, *,
                    keys: Iterable[str] | None = None) -> pd.DataFrame:
    """Stored time series of ``experiment`` (runs with ``timeseries=True``), of one run
    (``key``) or of several (``keys``).

    One row per (run, sample time, flow): ``experiment, key, seed``, the tag
    columns, then the columns of :attr:`ccsim.Result.timeseries` (``cc`` is
    ``flow_cc`` when a tag is called ``cc``).
    """
    return _load_extra(out, experiment, key, keys, "timeseries")


def load_cc_events(out: PathLike, experiment: str, key: str | None = None, *,
                   keys: Iterable[str] | None = None) -> pd.DataFrame:
    """Stored algorithm events (:attr:`ccsim.Result.cc_events`) of ``experiment``, of one
    run (``key``) or of several (``keys``)."""
    return _load_extra(out, experiment, key, keys, "cc_events")


def query(out: PathLike, sql: str) -> pd.DataFrame:
    """Run ``sql`` (DuckDB) over the stored files and return the result.

    Views: ``runs`` (all runs, with the ``experiment`` column); ``timeseries`` and
    ``cc_events`` when the store has any (runs stored with time series: ``ccsim sweep
    --timeseries``; querying them in a store without raises :class:`ccsim.ScenarioError`
    saying so); ``failed`` (experiment, key, seed, error of failed runs; no rows when
    none failed).  The files of each view the SQL names are checked first
    (:func:`ccsim.store_check.check_file`): a damaged one raises
    :class:`DamagedRunError` naming it.  Example, after ``ccsim sweep
    examples/sweep_loss.toml``::

        ccsim.results.query("ccsim-runs/sweep_loss",
            "SELECT cc, loss, avg(throughput_mbps) FROM runs GROUP BY ALL ORDER BY ALL")
    """
    try:
        import duckdb
    except ImportError:
        raise ImportError("queries need DuckDB: pip install duckdb") from None
    root = _root(out)
    con = duckdb.connect()
    try:  # names in the SQL are the views below, never this function's Python variables
        con.execute("SET python_enable_replacements = false")
    except duckdb.Error:  # pragma: no cover - DuckDB without the setting
        pass
    views: set[str] = set()
    stored = False
    for table in store.TABLES:
        parts = [(e, files) for e in store.experiments(root, table) if (files := store.run_files(root, table, e))]
        stored = stored or bool(parts)
        # Only the views the SQL names are made (DuckDB reads every file's footer to make one),
        # after checking their files.
        if not parts or re.search(rf"\b{table}\b", sql, re.IGNORECASE) is None:
            continue
        selects = []
        for e, files in parts:
            for f in files:
                _check(f, schema=False)
            listing = ", ".join(_sql_str(str(f)) for f in files)
            selects.append(
                f"SELECT {_sql_str(e)} AS experiment, * "
                f"FROM read_parquet([{listing}], union_by_name = true, hive_partitioning = false)"
            )
        con.execute(f"CREATE VIEW {table} AS " + " UNION ALL BY NAME ".join(selects))
        views.add(table)
    failed = []
    for e in store.experiments(root, "runs"):
        have = {f.name for f in store.run_files(root, "runs", e)}
        for path in store.error_files(root, e):
            key = path.name[: -len(".error.json")]
            if f"{key}.parquet" not in have:
                r = _read_error(path, e, key)
                failed.append({"experiment": e, "key": key, "seed": r["seed"], "error": r["error"]})
    if not stored and not failed:
        raise FileNotFoundError(f"{root}: no stored runs (expected {root}/runs/experiment=NAME/KEY.parquet)")
    if failed:
        import pandas as pd

        con.register("_ccsim_failed", pd.DataFrame(failed))
        con.execute("CREATE VIEW failed AS SELECT * FROM _ccsim_failed")
    else:
        con.execute("CREATE VIEW failed AS SELECT CAST(NULL AS VARCHAR) AS experiment, CAST(NULL AS VARCHAR) AS key, "
                    "CAST(NULL AS BIGINT) AS seed, CAST(NULL AS VARCHAR) AS error WHERE false")
    try:
        return con.execute(sql).df()
    except duckdb.CatalogException as exc:
        m = re.search(r"Table with name (\w+) does not exist", str(exc))
        name = m.group(1).lower() if m else None
        if name in _OPTIONAL_VIEWS and name not in views:
            raise ScenarioError(
                f"{root}: no {_OPTIONAL_VIEWS[name]} are stored here, so there is no {name} view; runs store "
                "them with `ccsim sweep --timeseries` (Python: ccsim.sweep.expand(..., timeseries=True))"
            ) from None
        raise


#: The views a store may lack, and what they hold.
_OPTIONAL_VIEWS = {"timeseries": "time series", "cc_events": "algorithm events"}


# -- helpers ------------------------------------------------------------------------------------


def _root(out: PathLike) -> Path:
    root = Path(os.fspath(out))
    if not root.is_dir():
        if root.exists():
            raise NotADirectoryError(f"{root}: not a directory")
        raise FileNotFoundError(f"{root}: no such directory")
    return root


def _experiments(root: Path, experiment: str | Sequence[str] | None, table: str) -> list[str]:
    stored = store.experiments(root, table)
    if experiment is None:
        return stored
    names = [experiment] if isinstance(experiment, str) else list(experiment)
    for e in names:
        if e not in stored:
            have = ", ".join(stored) if stored else "none"
            what = "stored runs" if table == "runs" else f"stored {table}"
            raise FileNotFoundError(f"{root}: no experiment {e!r} in the {what}; stored: {have}")
    return names


def _select(files: list[Path], wanted: set[str] | None) -> list[Path]:
    if wanted is None:
        return files
    return [f for f in files if f.name[: -len(".parquet")] in wanted]


def _read_error(path: Path, experiment: str, key: str) -> dict[str, Any]:
    try:
        rec = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        rec = {"error": f"unreadable error record: {exc}"}
    if not isinstance(rec, dict):
        rec = {}
    tags = rec.get("tags") if isinstance(rec.get("tags"), dict) else {}
    return {"experiment": experiment, "key": key, "seed": rec.get("seed"),
            "tags": tags, "error": rec.get("error") or "unknown error"}


def _read(parts: list[tuple[str, list[Path]]], extra_tags: Sequence[dict] = ()) -> tuple[pa.Table, list[str]]:
    """All files (per experiment) as one Arrow table with unified column types.

    Returns the table (``experiment`` first) and the tag columns in order.
    """
    import pyarrow as pa
    import pyarrow.dataset as ds

    order: list[str] = []
    tags: list[str] = []
    types: dict[str, list[pa.DataType]] = {}
    schemas = {}
    for _, files in parts:
        for f in files:
            info = _check(f)
            schema = info.schema
            schemas[f] = schema
            for col in info.meta.get("tag_columns") or []:
                if col not in tags:
                    tags.append(col)
            for fld in schema:
                if fld.name not in types:
                    order.append(fld.name)
                    types[fld.name] = []
                types[fld.name].append(fld.type)
    tag_kinds: dict[str, list[str | None]] = {c: [store.arrow_kind(t) for t in types.get(c, [])] for c in tags}
    for rec_tags in extra_tags:
        for name, value in rec_tags.items():
            if name == "seed":
                continue
            col = store.tag_column(name)
            if col not in tags:
                tags.append(col)
                tag_kinds[col] = []
            tag_kinds.setdefault(col, []).append(store.value_kind(value))

    def unified(col: str) -> pa.DataType:
        ts = [t for t in types.get(col, []) if not pa.types.is_null(t)]
        if col in tag_kinds:
            kind = store.merge_kinds(tag_kinds[col])
        elif ts and all(t == ts[0] for t in ts):
            return ts[0]
        else:
            kind = store.merge_kinds(store.arrow_kind(t) for t in ts)
        return {"int64": pa.int64(), "float64": pa.float64(), "string": pa.string(), "bool": pa.bool_()}[kind]

    if types:
        front = ["key", "seed", *tags]
        fields = [pa.field(c, unified(c)) for c in front + [c for c in order if c not in front]]
    else:  # nothing stored: the usual columns, empty
        fields = [pa.field("key", pa.string()), pa.field("seed", pa.int64())]
        fields += [pa.field(c, unified(c)) for c in tags] + _empty_fields()
    schema = pa.schema(fields)
    tables = []
    for e, files in parts:
        if not files:
            continue
        t = ds.dataset(files, schema=schema, format="parquet").to_table()
        tables.append(t.add_column(0, "experiment", pa.array([e] * t.num_rows, pa.string())))
    if tables:
        table = pa.concat_tables(tables)
    else:
        table = pa.schema([pa.field("experiment", pa.string())] + list(schema)).empty_table()
    return table, tags


def _empty_fields() -> list:
    import pyarrow as pa

    kinds = {"int64": pa.int64(), "float64": pa.float64(), "string": pa.string(), "bool": pa.bool_()}
    out = [pa.field(c, kinds[k]) for c, k in store.RUN_COLUMNS]
    out += [pa.field(f"bn_{c}", kinds[k]) for c, k in store.BN_COLUMNS]
    out += [pa.field(c, kinds[k]) for c, k in store.FLOW_COLUMNS]
    return out


def _append_failed(df: pd.DataFrame, failed: list[dict[str, Any]], tags: list[str], schema) -> pd.DataFrame:
    import pandas as pd

    kinds = {}
    for col in tags:
        kinds[col] = store.arrow_kind(schema.field(col).type) or "float64"
    rows = []
    for r in failed:
        row: dict[str, Any] = {"experiment": r["experiment"], "key": r["key"], "seed": r["seed"],
                               "status": "failed", "error": r["error"]}
        for name, value in r["tags"].items():
            if name == "seed":
                continue
            col = store.tag_column(name)
            row[col] = store.convert_tag(value, kinds.get(col, "string"))
        rows.append(row)
    fail_df = pd.DataFrame(rows)
    for col in fail_df.columns:
        if col in df.columns and len(df) and fail_df[col].notna().any():
            try:
                fail_df[col] = fail_df[col].astype(df[col].dtype)
            except (TypeError, ValueError):
                pass
    if not len(df):
        out = fail_df.reindex(columns=list(dict.fromkeys(list(df.columns) + list(fail_df.columns))))
        return out
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # concat with all-NA columns
        return pd.concat([df, fail_df], ignore_index=True)[list(df.columns)]


def _sort(df: pd.DataFrame, tags: Sequence[str], tail: Sequence[str]) -> pd.DataFrame:
    by = ["experiment", *tags, *tail]
    by = [c for c in dict.fromkeys(by) if c in df.columns]
    if len(df) and by:
        df = df.sort_values(by, kind="mergesort", na_position="last")
    return df.reset_index(drop=True)


def _warn_stale(df: pd.DataFrame, tags: Sequence[str]) -> None:
    cols = ["experiment", *[t for t in tags if t in df.columns], "seed"]
    runs = df.drop_duplicates("key")[cols + ["key"]]
    dup = runs.duplicated(subset=cols, keep=False)
    if dup.any():
        first = runs[dup].iloc[0]
        n = int(dup.sum())
        warnings.warn(
            f"experiment {first['experiment']!r}: {n} stored runs share their tags and seed with "
            "another stored run of a different scenario (left over from an earlier definition "
            "of the experiment, or a parameter that is not tagged); pass keys=report.keys to "
            "load only the runs of one execution",
            UserWarning,
            stacklevel=3,
        )


def _load_extra(out: PathLike, experiment: str, key: str | None, keys: Iterable[str] | None,
                table: str) -> pd.DataFrame:
    root = _root(out)
    if not isinstance(experiment, str):
        raise TypeError(f"experiment: expected a name; got {experiment!r}")
    files = store.run_files(root, table, experiment)
    if key is not None:
        files = [f for f in files if f.name == f"{key}.parquet"]
    if keys is not None:
        files = _select(files, set(keys))
    if not files:
        what = "time series" if table == "timeseries" else "algorithm events"
        if key:
            which = f"run {key} of experiment {experiment!r}"
        elif keys is not None:
            which = f"any of the runs given of experiment {experiment!r}"
        else:
            which = f"experiment {experiment!r}"
        raise FileNotFoundError(
            f"{root}: no {what} stored for {which} (only runs with RunSpec(timeseries=True) store them)"
        )
    t, tags = _read([(experiment, files)])
    df = t.to_pandas()
    return _sort(df, tags, ("seed", "key"))


def _check(path: Path, schema: bool = True) -> store_check.FileInfo:
    """:func:`ccsim.store_check.check_file`, its error saying what to do about the file."""
    try:
        return store_check.check_file(path, schema=schema)
    except store_check.DamagedRunError as exc:
        out = Path(path).parent.parent.parent
        raise store_check.DamagedRunError(f"{exc}; {store_check.damaged_hint(out)}") from None


def _sql_str(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"
