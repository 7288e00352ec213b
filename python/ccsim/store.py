"""On-disk store of sweep results: one Parquet file per run, partitioned by experiment.

Layout of a store directory ``OUT``::

    OUT/runs/experiment=<experiment>/<key>.parquet        one row per flow of the run
    OUT/runs/experiment=<experiment>/<key>.error.json     a run that failed (no .parquet then)
    OUT/timeseries/experiment=<experiment>/<key>.parquet  time series (runs with timeseries=True)
    OUT/cc_events/experiment=<experiment>/<key>.parquet   algorithm events (same runs)

Every file is written atomically (a hidden temporary file in the same directory,
then :func:`os.replace`), so a killed sweep never leaves a partial file behind
and readers never see one.  The ``experiment`` column is not stored in the files:
it is the partition (directory) name.

Columns of a runs file, in order: ``key``, ``seed``, the tag columns, the run-level
columns (:data:`RUN_COLUMNS`, then ``bn_*`` bottleneck columns) and the flow
columns (:data:`FLOW_COLUMNS`).  Tags keep their names; a result column that a
tag shadows is renamed (``cc`` -> ``flow_cc``, ``events`` -> ``run_events``).  Types are fixed per column so that files of
different runs concatenate cleanly (see :func:`resolve_tag_kinds` for tags).
Each file carries the run's spec (normalised scenario, seed, tags, row count, model
version) as JSON in the Parquet key-value metadata under ``ccsim``, and the CRC-32 of
its data pages under :data:`CRC_KEY` (checked by :mod:`ccsim.store_check`).  A resumed
sweep moves damaged files and runs of an older model version to ``OUT/damaged/`` and
``OUT/old-model/``, which have this layout too.

This module is internal; the public API is :mod:`ccsim.sweep` and :mod:`ccsim.results`.
"""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from . import schema

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow as pa

    from .result import Result

__all__ = [
    "BN_COLUMNS",
    "FLOW_COLUMNS",
    "RUN_COLUMNS",
    "STRUCTURAL_COLUMNS",
    "TABLES",
    "check_experiment",
    "tag_column",
]

#: The three tables of a store.
TABLES = ("runs", "timeseries", "cc_events")

FORMAT_VERSION = 1
META_KEY = b"ccsim"
#: Footer key of the CRC-32 (decimal) of a file's data pages (see :func:`to_parquet_bytes`).
CRC_KEY = "ccsim.data_crc32"

_I, _F, _S, _B = "int64", "float64", "string", "bool"

# The store's columns and types follow the engine's output schema (ccsim.schema).
# Scalar columns are stored as they are; lists only where named (as one joined string).
_STORE_TYPES = {"int": _I, "float": _F, "str": _S, "category": _S, "bool": _B}


def _store_columns(table: str, skip: frozenset[str] = frozenset(),
                   joined: frozenset[str] = frozenset()) -> tuple[tuple[str, str], ...]:
    return tuple((c.name, _STORE_TYPES.get(c.type, _S)) for c in schema.table(table).columns
                 if (c.type in _STORE_TYPES or c.name in joined) and c.name not in skip)


#: Run-level columns (one value per run, repeated on each flow row) and their types: the
#: summary's scalar values (the scenario's ``name`` is not stored; ``seed`` is a structural
#: column).
RUN_COLUMNS: tuple[tuple[str, str], ...] = _store_columns("summary", frozenset({"name", "seed"}))

#: Bottleneck statistics, stored as ``bn_<name>``.
BN_COLUMNS: tuple[tuple[str, str], ...] = _store_columns("bottleneck")

#: Per-flow columns (``flow`` is the flow id) and their types. ``path``, the nodes the flow's
#: data crosses, is one string: ``"a->r1->r2->b"`` (link ids are ``"a->r1"``).
FLOW_COLUMNS: tuple[tuple[str, str], ...] = tuple(
    ("flow" if c == "id" else c, kind) for c, kind in _store_columns("flows", joined=frozenset({"path"})))

_EVENT_TYPES = dict(_store_columns("cc_events"))

#: Names no tag may take (the seed tag is not a column: it is the seed column).
STRUCTURAL_COLUMNS = frozenset({"experiment", "key", "seed", "status", "error"})

#: Run-level column names (a tag of the same name renames them ``run_<name>``;
#: any other result column a tag shadows becomes ``flow_<name>``).
_RUN_LEVEL = frozenset({c for c, _ in RUN_COLUMNS} | {f"bn_{c}" for c, _ in BN_COLUMNS})


_EXPERIMENT_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._+-]*$")
_INDEX_RE = re.compile(r"\[(\d+)\]")


# -- names and paths ---------------------------------------------------------------------


def check_experiment(name: object) -> str:
    """``name`` if it is a valid experiment (partition) name, else ValueError."""
    if not isinstance(name, str) or not _EXPERIMENT_RE.match(name) or len(name) > 200:
        raise ValueError(
            f"experiment: expected a name of letters, digits and . _ + - "
            f"(not starting with . + -); got {name!r}"
        )
    return name


def experiment_from_stem(stem: str) -> str:
    """A valid experiment name from a file stem (other characters become ``_``)."""
    name = re.sub(r"[^A-Za-z0-9._+-]", "_", stem).lstrip(".+-")
    return name[:200] or "sweep"


def tag_column(tag: str) -> str:
    """The column name of a tag: ``"bottleneck.loss"`` -> ``"bottleneck_loss"``,
    ``"flows[0].cc"``/``"flows.0.cc"`` -> ``"flows_0_cc"``, ``"cc"`` -> ``"cc"``.

    Tags keep their names; a result column with the same name is renamed in the
    stored rows (:func:`shadowed_name`): with a tag ``cc``, the column ``cc`` is the
    tag and the flows' algorithm is ``flow_cc``.
    """
    return _INDEX_RE.sub(r".\1", str(tag)).replace(".", "_")


def shadowed_name(col: str) -> str:
    """The new name of a result column that a tag of the same name shadows."""
    return f"run_{col}" if col in _RUN_LEVEL or col.startswith("bn_") else f"flow_{col}"


def tag_columns(tags: Mapping[str, Any]) -> dict[str, str]:
    """``{tag name: column name}`` for the tags that become columns (``seed`` does not:
    it is the seed column).  ValueError for a reserved name or two tags in one column."""
    out: dict[str, str] = {}
    seen: dict[str, str] = {}
    for name in tags:
        if name == "seed":
            continue
        col = tag_column(name)
        if col in STRUCTURAL_COLUMNS:
            raise ValueError(
                f"tag {name!r}: the column name {col!r} is reserved "
                f"({', '.join(sorted(STRUCTURAL_COLUMNS))})"
            )
        if col in seen:
            raise ValueError(
                f"tags {seen[col]!r} and {name!r} would both be stored as column {col!r}"
            )
        seen[col] = name
        out[name] = col
    return out


def partition(out: Path, table: str, experiment: str) -> Path:
    return Path(out) / table / f"experiment={experiment}"


def experiments(out: Path, table: str = "runs") -> list[str]:
    """The experiments stored under ``out/<table>``, sorted."""
    base = Path(out) / table
    try:
        entries = os.listdir(base)
    except (FileNotFoundError, NotADirectoryError):
        return []
    return sorted(
        e[len("experiment="):]
        for e in entries
        if e.startswith("experiment=") and (base / e).is_dir()
    )


def listdir(path: Path) -> set[str]:
    try:
        return set(os.listdir(path))
    except (FileNotFoundError, NotADirectoryError):
        return set()


def run_files(out: Path, table: str, experiment: str) -> list[Path]:
    """Stored ``<key>.parquet`` files of one experiment, sorted by name."""
    part = partition(out, table, experiment)
    return [part / n for n in sorted(listdir(part)) if _is_data_file(n)]


def error_files(out: Path, experiment: str) -> list[Path]:
    part = partition(out, "runs", experiment)
    return [part / n for n in sorted(listdir(part)) if n.endswith(".error.json") and not n.startswith(".")]


def _is_data_file(name: str) -> bool:
    return name.endswith(".parquet") and not name.startswith(".")


# -- atomic writes ------------------------------------------------------------------------

_TMP_RE = re.compile(r"^\..+\.tmp-(\d+)-[0-9a-f]+$")


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (hidden temporary file + os.replace)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}-{os.urandom(4).hex()}")
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            tmp.unlink()
        except OSError:
            pass
        raise


def remove(path: Path) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def clean_temporary_files(out: Path) -> int:
    """Remove temporary files left by killed writers (only those of dead processes)."""
    removed = 0
    for table in TABLES:
        base = Path(out) / table
        for part in listdir(base):
            d = base / part
            for name in listdir(d):
                m = _TMP_RE.match(name)
                if m and not _pid_alive(int(m.group(1))):
                    remove(d / name)
                    removed += 1
    return removed


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


# -- tag types ------------------------------------------------------------------------------


def value_kind(value: Any) -> str | None:
    """The storage kind of one tag value (None for a missing value)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return _B
    if isinstance(value, int):
        return _I
    if isinstance(value, float):
        return _F
    if isinstance(value, str):
        return _S
    if hasattr(value, "item") and callable(value.item) and not isinstance(value, (list, dict)):
        try:
            return value_kind(value.item())
        except (TypeError, ValueError):
            pass
    return _S


def merge_kinds(kinds: Iterable[str | None]) -> str:
    """One kind for a column holding values of ``kinds``: bool only if all bool;
    int64 if all int; float64 if numbers (int and float); otherwise string."""
    ks = {k for k in kinds if k is not None}
    if not ks:
        return _F
    if ks == {_B}:
        return _B
    if ks <= {_I}:
        return _I
    if ks <= {_I, _F}:
        return _F
    return _S


def arrow_kind(dtype: pa.DataType) -> str | None:
    import pyarrow as pa

    if pa.types.is_boolean(dtype):
        return _B
    if pa.types.is_integer(dtype):
        return _I
    if pa.types.is_floating(dtype):
        return _F
    if pa.types.is_null(dtype):
        return None
    return _S


def convert_tag(value: Any, kind: str) -> Any:
    """A tag value converted for a column of ``kind``."""
    if value is None:
        return None
    if hasattr(value, "item") and callable(value.item) and not isinstance(value, (list, dict, str)):
        try:
            value = value.item()
        except (TypeError, ValueError):
            pass
    if kind == _S:
        if isinstance(value, str):
            return value
        return json.dumps(jsonable(value), sort_keys=True)
    if kind == _F:
        return float(value)
    if kind == _I:
        return int(value)
    if kind == _B:
        return bool(value)
    return value


def jsonable(value: Any) -> Any:
    """``value`` with numpy scalars, tuples and non-JSON objects made JSON-friendly."""
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if hasattr(value, "item") and callable(value.item):
        try:
            return jsonable(value.item())
        except (TypeError, ValueError):
            pass
    return str(value)


def existing_tag_kinds(out: Path, experiment: str) -> dict[str, str | None]:
    """Tag column kinds of an already stored run of ``experiment`` (the first file)."""
    import pyarrow.parquet as pq

    for path in run_files(out, "runs", experiment)[:1]:
        try:
            schema = pq.read_schema(path)
        except Exception:  # noqa: BLE001 - a damaged file does not fix types
            return {}
        meta = read_meta(schema)
        cols = meta.get("tag_columns") or []
        return {c: arrow_kind(schema.field(c).type) for c in cols if c in schema.names}
    return {}


def read_meta(schema: pa.Schema) -> dict[str, Any]:
    raw = (schema.metadata or {}).get(META_KEY)
    if not raw:
        return {}
    try:
        meta = json.loads(raw)
    except ValueError:
        return {}
    return meta if isinstance(meta, dict) else {}


# -- building the tables (in the worker) -----------------------------------------------------


def _array(values: Sequence[Any], kind: str | None) -> pa.Array:
    import pyarrow as pa

    types = {_I: pa.int64(), _F: pa.float64(), _S: pa.string(), _B: pa.bool_()}
    if kind is None:
        return pa.array(values)
    try:
        return pa.array(values, type=types[kind])
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError, OverflowError):
        return pa.array(values)  # unexpected value from a newer core: keep it, inferred


def _front_columns(n: int, key: str, seed: int, tags: Sequence[tuple[str, str, Any]]):
    names = ["key", "seed"]
    arrays = [_array([key] * n, _S), _array([seed] * n, _I)]
    for col, kind, value in tags:
        names.append(col)
        arrays.append(_array([value] * n, kind))
    return names, arrays


def _metadata(payload: Mapping[str, Any], table: str, renamed: Mapping[str, str], rows: int) -> dict[bytes, bytes]:
    meta = {
        "renamed": dict(renamed),
        "format": FORMAT_VERSION,
        "table": table,
        "rows": rows,
        "experiment": payload["experiment"],
        "key": payload["key"],
        "seed": payload["seed"],
        "timeseries": payload["timeseries"],
        "tags": payload["tags_json"],
        "tag_columns": [c for c, _, _ in payload["tags"]],
        "scenario": payload.get("normalized"),
        "ccsim_version": payload.get("version"),
        "model_version": payload.get("model_version"),
    }
    return {META_KEY: json.dumps(meta, sort_keys=True).encode("utf-8")}


def runs_table(payload: Mapping[str, Any], summary: Mapping[str, Any]) -> pa.Table:
    """The runs table of one run: one row per flow (one row of nulls if it had none)."""
    import pyarrow as pa

    flows = list(summary.get("flows") or [])
    n = max(len(flows), 1)
    names: list[str] = []
    arrays: list[Any] = []

    known_top = {"name", "seed", "flows", "bottleneck"}
    for col, kind in RUN_COLUMNS:
        names.append(col)
        arrays.append(_array([summary.get(col)] * n, kind))
        known_top.add(col)
    for col in summary:  # scalar fields a newer core may add
        value = summary[col]
        if col not in known_top and not isinstance(value, (dict, list)):
            names.append(col)
            arrays.append(_array([value] * n, None))

    bn = summary.get("bottleneck") or {}
    for col, kind in BN_COLUMNS:
        names.append(f"bn_{col}")
        arrays.append(_array([bn.get(col)] * n, kind))
    known_bn = {c for c, _ in BN_COLUMNS}
    for col in bn:
        if col not in known_bn and not isinstance(bn[col], (dict, list)):
            names.append(f"bn_{col}")
            arrays.append(_array([bn[col]] * n, None))

    rows = flows or [{}]
    for col, kind in FLOW_COLUMNS:
        src = "id" if col == "flow" else col
        names.append(col)
        values = [f.get(src) for f in rows]
        if col == "path":
            values = ["->".join(v) if isinstance(v, list) and v else None for v in values]
        arrays.append(_array(values, kind))
    known_flow = {("id" if c == "flow" else c) for c, _ in FLOW_COLUMNS}
    extra = [k for k in (flows[0] if flows else {}) if k not in known_flow and k not in names]
    for col in extra:
        names.append(col)
        arrays.append(_array([f.get(col) for f in rows], None))

    return _with_front(payload, pa.Table.from_arrays(arrays, names=names), "runs")


def timeseries_table(payload: Mapping[str, Any], result: Result) -> pa.Table:
    df = result.timeseries
    if "cc" in df.columns:
        df = df.assign(cc=df["cc"].astype(object).astype(str))
    body = schema.arrow(df, "timeseries")
    return _with_front(payload, body, "timeseries")


def events_table(payload: Mapping[str, Any], result: Result) -> pa.Table:
    import pyarrow as pa

    df = result.cc_events
    arrays = []
    names = []
    for col in df.columns:
        values = [None if _isnan(v) else v for v in df[col].tolist()]
        names.append(col)
        arrays.append(_array(values, _EVENT_TYPES.get(col)))
    body = pa.Table.from_arrays(arrays, names=names)
    return _with_front(payload, body, "cc_events")


def _isnan(v: Any) -> bool:
    return isinstance(v, float) and math.isnan(v)


def _with_front(payload: Mapping[str, Any], body: pa.Table, table: str) -> pa.Table:
    """``key, seed``, the tag columns, then ``body`` (its columns that a tag shadows renamed)."""
    import pyarrow as pa

    names, arrays = _front_columns(body.num_rows, payload["key"], payload["seed"], payload["tags"])
    taken = set(names)
    renamed: dict[str, str] = {}
    for col in body.column_names:
        new = col
        while new in taken:
            new = shadowed_name(new)
        if new != col:
            renamed[new] = col
        taken.add(new)
        names.append(new)
    arrays += list(body.columns)
    meta = _metadata(payload, table, renamed, body.num_rows)
    return pa.Table.from_arrays(arrays, names=names).replace_schema_metadata(meta)


def to_parquet_bytes(table: pa.Table) -> bytes:
    """Parquet bytes: snappy for the small runs/events files (several times quicker to
    read than zstd at a few rows), zstd for time series (large, compress well).

    The footer also records the CRC-32 of the data pages (:data:`CRC_KEY`), which
    :func:`ccsim.store_check.check_file` verifies without decoding the file."""
    import io
    import zlib

    import pyarrow.parquet as pq

    kind = read_meta(table.schema).get("table")
    sink = io.BytesIO()
    with pq.ParquetWriter(sink, table.schema, compression="zstd" if kind == "timeseries" else "snappy") as writer:
        writer.write_table(table)
        # The row group is complete: the sink holds the magic number and every data page.
        head = sink.getvalue()
        writer.add_key_value_metadata({CRC_KEY: str(zlib.crc32(memoryview(head)[4:]))})
    data = sink.getvalue()
    if data[: len(head)] != head or data_region(data) != memoryview(head)[4:]:  # pragma: no cover
        raise RuntimeError("Parquet writer: the data pages changed while the footer was written")
    return data


def data_region(data: bytes) -> memoryview:
    """The bytes of a Parquet file between the leading magic number and the footer (its data
    pages); ValueError if ``data`` is not a complete Parquet file."""
    if len(data) < 12 or data[:4] != b"PAR1" or data[-4:] != b"PAR1":
        raise ValueError("not a complete Parquet file (no Parquet magic number at both ends; truncated?)")
    footer = int.from_bytes(data[-8:-4], "little")
    end = len(data) - 8 - footer
    if end < 4:
        raise ValueError(f"footer length {footer} exceeds the file size {len(data)} (truncated?)")
    return memoryview(data)[4:end]


def retag(path: Path, payload: Mapping[str, Any]) -> None:
    """Rewrite a stored file with the tags of ``payload`` (same run, new tags)."""
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    meta = read_meta(table.schema)
    old = set(meta.get("tag_columns") or [])
    body = table.drop_columns([c for c in table.column_names if c in old or c in ("key", "seed")])
    back = meta.get("renamed") or {}
    body = body.rename_columns([back.get(c, c) for c in body.column_names])
    new = _with_front(payload, body, meta.get("table") or "runs")
    atomic_write(path, to_parquet_bytes(new))
