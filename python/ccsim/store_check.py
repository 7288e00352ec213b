"""Checking the files of a store, and moving damaged or superseded runs aside.

Every file :mod:`ccsim.store` writes records in its Parquet footer the run's spec (``ccsim``:
key, table, row count, model version, ...) and the CRC-32 of its data pages
(:data:`ccsim.store.CRC_KEY`).  :func:`check_file` reads a file once, without decoding it,
and checks:

* the Parquet magic number at both ends (a truncated file has none at the end) and that
  the footer parses;
* that the footer's spec names this file's key and table, and that the file holds the
  number of rows the spec records (one per flow in the runs table);
* the CRC-32 of the data pages (a corrupted byte in the data changes it).

A runs file is about 16 KB, so this costs about what reading its footer costs.

:func:`scan` checks every file of an experiment before :func:`ccsim.sweep.execute` decides
what is stored: a damaged file is moved to ``OUT/damaged/<table>/experiment=E/`` (so the run
is run again), and a run computed by an older model version (``model_version`` below
``ccsim._core.MODEL_VERSION``, or none recorded) to ``OUT/old-model/...``.  Nothing is deleted; both
directories have the layout of a store (``ccsim query OUT/old-model "..."`` reads them).

This module is internal.
"""

from __future__ import annotations

import json
import os
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from . import _core, store
from .scenario import ScenarioError

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow as pa

#: Where :func:`scan` moves damaged files and runs of an older model version (under OUT).
DAMAGED_DIR = "damaged"
OLD_MODEL_DIR = "old-model"


class DamagedRunError(ScenarioError):
    """A stored run file that cannot be used (truncated, corrupted, or not a ccsim file)."""


@dataclass
class FileInfo:
    """A checked file: its ``ccsim`` footer metadata, row count and Arrow schema."""

    path: Path
    meta: dict[str, Any]
    num_rows: int
    schema: pa.Schema | None

    @property
    def model_version(self) -> int:
        v = self.meta.get("model_version")
        return v if isinstance(v, int) and not isinstance(v, bool) else 0


def check_file(path: Path, table: str | None = None, key: str | None = None, *,
               schema: bool = True) -> FileInfo:
    """Check one stored file (see the module docstring); :class:`DamagedRunError` naming the
    file and what is wrong with it.  ``table`` and ``key`` default to the file's place in
    the store (``OUT/<table>/experiment=E/<key>.parquet``).  ``schema=False`` skips
    decoding the Arrow schema (``FileInfo.schema`` is then None): readers that take the
    types from the Parquet schema (DuckDB) do not need it."""
    import pyarrow as pa

    path = Path(path)
    if table is None:
        table = path.parent.parent.name
    if key is None:
        key = path.name[: -len(".parquet")] if path.name.endswith(".parquet") else path.name

    def damaged(reason: str) -> DamagedRunError:
        return DamagedRunError(f"{path}: damaged stored run: {reason}")

    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise damaged(f"cannot read it ({exc.strerror or exc})") from None
    try:
        region = store.data_region(data)
        md, arrow_schema = _read_footer(data, schema)
    except (ValueError, OSError, pa.ArrowException) as exc:
        text = " ".join(str(exc).split()) or type(exc).__name__
        raise damaged(text if "Parquet" in text else f"unreadable Parquet footer ({text})") from None
    kv = md.metadata or {}
    crc = kv.get(store.CRC_KEY.encode())
    if crc is not None:  # files written before checksums were recorded have none
        try:
            want = int(crc)
        except ValueError:
            raise damaged(f"its checksum entry is unreadable ({crc[:40]!r})") from None
        if zlib.crc32(region) != want:
            raise damaged("the checksum of its data pages does not match (corrupted bytes)")
    raw = kv.get(store.META_KEY)
    try:
        meta = json.loads(raw) if raw else None
    except ValueError:
        meta = None
    if not isinstance(meta, dict):
        raise damaged("no readable ccsim metadata in its footer")
    if meta.get("key") != key or meta.get("table", table) != table:
        raise damaged(f"its footer describes run {meta.get('key')!r} of table {meta.get('table')!r}, "
                      f"not {key!r} of {table!r}")
    rows = meta.get("rows")
    if isinstance(rows, int) and md.num_rows != rows:
        raise damaged(f"{md.num_rows} rows where its metadata records {rows}")
    if table == "runs" and md.num_rows < 1:
        raise damaged("no rows")
    return FileInfo(path, meta, md.num_rows, arrow_schema)


def _read_footer(data: bytes, schema: bool) -> tuple[Any, pa.Schema | None]:
    """The Parquet footer (``FileMetaData``) of a file held in memory, and its Arrow schema if
    ``schema``.  pyarrow's own reader class where it exists (pyarrow 17-26:
    ``ParquetReader().open(source)``, ``.metadata``, ``.schema_arrow``): ``pq.read_metadata``
    builds a ``ParquetFile``, whose set-up (nested column paths, in Python) costs about as
    much again as reading the footer."""
    import pyarrow as pa

    try:
        from pyarrow._parquet import ParquetReader
    except ImportError:  # pragma: no cover
        import pyarrow.parquet as pq

        md = pq.read_metadata(pa.BufferReader(data))
        return md, md.schema.to_arrow_schema() if schema else None
    reader = ParquetReader()
    reader.open(pa.BufferReader(data))
    return reader.metadata, reader.schema_arrow if schema else None


def damaged_hint(out: Path) -> str:
    """What to do about a damaged file in the store ``out`` (appended to errors)."""
    return (f"run the same `ccsim sweep` (or `ccsim reproduce`) again to move it to "
            f"{Path(out) / DAMAGED_DIR}/ and rerun it")


@dataclass
class Scan:
    """What :func:`scan` found in one experiment of a store."""

    #: ``(table, key) -> FileInfo`` of the healthy files of the current model version.
    files: dict[tuple[str, str], FileInfo] = field(default_factory=dict)
    #: ``(key, moved-to path, reason)`` of each damaged file moved aside.
    damaged: list[tuple[str, Path, str]] = field(default_factory=list)
    #: Keys of the runs (files and error records) of an older model version moved aside.
    older: set[str] = field(default_factory=set)


def scan(out: Path, experiment: str, names: Callable[[str, str], set[str]]) -> Scan:
    """Check every file of ``experiment`` in the store ``out`` and move the damaged ones and
    those of an older model version aside (see the module docstring).  ``names(table,
    experiment)`` is the caller's cached listing of a partition; moved files are removed
    from it."""
    result = Scan()
    current = _core.MODEL_VERSION
    for table in store.TABLES:
        listing = names(table, experiment)
        part = store.partition(out, table, experiment)
        for name in sorted(listing):
            if not name.endswith(".parquet") or name.startswith("."):
                continue
            key = name[: -len(".parquet")]
            try:
                info = check_file(part / name, table, key)
            except DamagedRunError as exc:
                dest = _move(out, DAMAGED_DIR, table, experiment, name)
                listing.discard(name)
                if dest is not None:
                    result.damaged.append((key, dest, str(exc).split(": damaged stored run: ", 1)[-1]))
                continue
            if info.model_version < current:
                _move(out, OLD_MODEL_DIR, table, experiment, name)
                listing.discard(name)
                result.older.add(key)
                continue
            result.files[(table, key)] = info
    listing = names("runs", experiment)
    part = store.partition(out, "runs", experiment)
    for name in sorted(listing):
        if not name.endswith(".error.json") or name.startswith("."):
            continue
        if _error_model_version(part / name) < current:
            _move(out, OLD_MODEL_DIR, "runs", experiment, name)
            listing.discard(name)
            result.older.add(name[: -len(".error.json")])
    return result


def _error_model_version(path: Path) -> int:
    try:
        rec = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return _core.MODEL_VERSION  # unreadable: left where it is (the run is retried anyway)
    v = rec.get("model_version") if isinstance(rec, dict) else None
    return v if isinstance(v, int) and not isinstance(v, bool) else 0


def _move(out: Path, kind: str, table: str, experiment: str, name: str) -> Path | None:
    """Move ``OUT/<table>/experiment=E/<name>`` to ``OUT/<kind>/<table>/experiment=E/``, under a
    new name if that one is taken; None if the file is gone (another process moved it)."""
    src = store.partition(out, table, experiment) / name
    dest_dir = store.partition(Path(out) / kind, table, experiment)
    dest_dir.mkdir(parents=True, exist_ok=True)
    stem, dot, ext = name.partition(".")
    dest = dest_dir / name
    n = 1
    while dest.exists():
        dest = dest_dir / f"{stem}.{n}{dot}{ext}"
        n += 1
    try:
        os.replace(src, dest)
    except FileNotFoundError:
        return None
    return dest


def summary_lines(report: Any) -> list[str]:
    """One line each about the damaged and older-model runs an execution moved aside
    (for the sweep summary, ``ccsim reproduce`` and ``ccsim.sweep``'s warnings)."""
    lines = []
    out = report.out
    damaged = report.damaged
    if damaged:
        n = len(damaged)
        runs = f"{n} damaged run{'s' if n != 1 else ''}"
        where = Path(out) / DAMAGED_DIR
        if report.damaged_rerun == n:
            lines.append(f"{runs} moved to {where}/ and rerun")
        else:
            lines.append(f"{runs} moved to {where}/ ({report.damaged_rerun} rerun; the others are not "
                         f"part of this sweep)")
    if report.older:
        n = report.older
        lines.append(
            f"{n} stored run{'s' if n != 1 else ''} of an older model version (computed by an earlier "
            f"ccsim engine) not reused: moved to {Path(out) / OLD_MODEL_DIR}/"
        )
    return lines
