"""Executing run specifications: :func:`execute` runs those not stored yet on a backend
(:mod:`ccsim.sweep.pool`, :mod:`ccsim.sweep.ray_backend`) and stores each finished run at once
(:class:`Runner`; layout in :mod:`ccsim.store`), with a progress bar and an
:class:`ExecutionReport`.

Before deciding what is stored, every stored file of the experiments it runs is checked
(:mod:`ccsim.store_check`): damaged files and runs of an older model version are moved aside,
and rerun when they are part of the specs.  A run stored with time series serves a spec
without; tags changed since a run was stored are rewritten in its files.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from .. import _core, cc, store, store_check
from .spec import RunSpec

@dataclass
class ExecutionReport:
    """What :func:`execute` did.

    ``total`` specs; ``ran`` executed now (including the ``failed`` ones, as
    ``(spec, one-line error)``); ``skipped`` already stored (or duplicates);
    ``keys`` the stored key of each spec, in order (normally ``spec.key``; for a
    spec without time series whose run is stored with time series, that run's
    key); ``out`` the store directory.  ``damaged``: ``(experiment, key)`` of the
    stored runs found damaged and moved to ``out/damaged/``, of which
    ``damaged_rerun`` were run again (the others are not among the specs);
    ``older``: stored runs of an older model version moved to ``out/old-model/``.
    """

    total: int
    ran: int
    skipped: int
    failed: list[tuple[RunSpec, str]]
    wall_seconds: float
    keys: list[str] = field(default_factory=list)
    out: Path | None = None
    damaged: list[tuple[str, str]] = field(default_factory=list)
    damaged_rerun: int = 0
    older: int = 0

    @property
    def succeeded(self) -> int:
        return self.ran - len(self.failed)



class Runner:
    """Bookkeeping of one execute() call: payloads, storing results, the report."""

    def __init__(self, out: Path, progress: Any, task: Any) -> None:
        self.out = out
        self.progress = progress
        self.task = task
        self.ran = 0
        self.failed: list[tuple[RunSpec, str]] = []

    def handle(self, spec: RunSpec, twin: str, result: Mapping[str, Any]) -> None:
        e, key = spec.experiment, spec.key
        runs_dir = store.partition(self.out, "runs", e)
        if result.get("ok"):
            if spec.timeseries:
                store.atomic_write(store.partition(self.out, "timeseries", e) / f"{key}.parquet", result["timeseries"])
                store.atomic_write(store.partition(self.out, "cc_events", e) / f"{key}.parquet", result["cc_events"])
            store.atomic_write(runs_dir / f"{key}.parquet", result["runs"])
            store.remove(runs_dir / f"{key}.error.json")
            if not spec.timeseries:
                for table in ("timeseries", "cc_events"):
                    store.remove(store.partition(self.out, table, e) / f"{key}.parquet")
            self._remove_run(e, twin)
        else:
            error = result.get("error") or "unknown error"
            record = {
                "key": key,
                "experiment": e,
                "seed": spec.seed,
                "tags": store.jsonable(spec.tags),
                "error": error,
                "traceback": result.get("traceback") or "",
                "scenario": store.jsonable(spec.scenario),
                "timeseries": spec.timeseries,
                "model_version": _core.MODEL_VERSION,
            }
            store.atomic_write(runs_dir / f"{key}.error.json",
                               (json.dumps(record, indent=2, sort_keys=False) + "\n").encode("utf-8"))
            self._remove_run(e, key, keep_error=True)
            self.failed.append((spec, error))
        self.ran += 1
        if self.progress is not None:
            self.progress.advance(self.task)

    def _remove_run(self, experiment: str, key: str, keep_error: bool = False) -> None:
        for table in store.TABLES:
            store.remove(store.partition(self.out, table, experiment) / f"{key}.parquet")
        if not keep_error:
            store.remove(store.partition(self.out, "runs", experiment) / f"{key}.error.json")


def execute(
    specs: Sequence[RunSpec],
    out: str | os.PathLike,
    *,
    jobs: int | None = None,
    backend: str = "local",
    address: str | None = None,
    force: bool = False,
    progress: bool = True,
    description: str = "runs",
    memory_limit: int | str | None = None,
) -> ExecutionReport:
    """Run every spec that is not stored in ``out`` yet (all of them with ``force``).

    ``backend="local"``: a process pool of ``jobs`` workers (default
    ``os.cpu_count()``; ``jobs=1`` runs in this process).  ``backend="ray"``:
    one Ray task per run, on the cluster at ``address`` or on a local Ray
    instance (started with ``jobs`` CPUs and shut down afterwards; an already
    initialised Ray is used as it is).

    Each run is stored as soon as it finishes; a run that raises is recorded
    as ``<key>.error.json`` and retried by the next call.  On Ctrl-C, nothing
    more is started, finished runs are kept and ``KeyboardInterrupt`` is raised
    again (with the partial :class:`ExecutionReport` as its ``report``
    attribute).

    ``memory_limit`` (bytes or a size such as ``"8GB"``; default ``$CCSIM_MEMORY_LIMIT``) is
    the memory each run may use; without either, each local run may use half of the
    machine's memory divided by the runs executing at once (see :mod:`ccsim.limits`). A run
    that would need more is recorded as failed, with the estimate in its error.
    """
    from .. import limits
    from . import ray_backend

    t0 = time.perf_counter()
    if isinstance(specs, RunSpec) or not isinstance(specs, Sequence):
        specs = list(specs) if not isinstance(specs, RunSpec) else [specs]
    for s in specs:
        if not isinstance(s, RunSpec):
            raise TypeError(f"execute: expected RunSpec objects; got {type(s).__name__}")
    if backend not in ("local", "ray"):
        raise ValueError(f"backend: expected 'local' or 'ray'; got {backend!r}")
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
        raise ValueError(f"jobs: expected a positive integer; got {jobs!r}")
    if backend == "ray":
        ray_backend.import_ray()
    out = Path(os.fspath(out))
    out.mkdir(parents=True, exist_ok=True)
    store.clean_temporary_files(out)

    # Which specs are stored already?  (one listdir per experiment and table)
    listing: dict[tuple[str, str], set[str]] = {}

    def names(table: str, e: str) -> set[str]:
        if (table, e) not in listing:
            listing[(table, e)] = store.listdir(store.partition(out, table, e))
        return listing[(table, e)]

    by_exp: dict[str, list[RunSpec]] = {}
    for s in specs:
        by_exp.setdefault(s.experiment, []).append(s)
    # Check every stored file first: damaged ones and older model versions are moved aside.
    scans = {e: store_check.scan(out, e, names) for e in by_exp}

    # Tag column kinds per experiment: over all specs given plus what is stored.
    kinds: dict[str, dict[str, str]] = {}
    for e, group in by_exp.items():
        seen: dict[str, list[str | None]] = {}
        for col, kind in store.existing_tag_kinds(out, e).items():
            seen.setdefault(col, []).append(kind)
        for s in group:
            for name, col in store.tag_columns(s.tags).items():
                seen.setdefault(col, []).append(store.value_kind(s.tags[name]))
        kinds[e] = {col: store.merge_kinds(ks) for col, ks in seen.items()}

    version = getattr(_core, "__version__", None)
    # A limit set explicitly (argument or environment) is resolved here, not in the workers:
    # a fork server started earlier keeps the environment it was started with.
    explicit = memory_limit is not None or bool(os.environ.get(limits.ENV_VAR, "").strip())
    explicit_limit = limits.resolve(memory_limit) if explicit else None

    def payload(s: RunSpec, key: str | None = None) -> dict[str, Any]:
        cols = store.tag_columns(s.tags)
        return {
            "experiment": s.experiment,
            "key": key or s.key,
            "seed": s.seed,
            "scenario": s.scenario,
            "timeseries": s.timeseries,
            "tags": [(col, kinds[s.experiment][col], store.convert_tag(s.tags[name], kinds[s.experiment][col]))
                     for name, col in cols.items()],
            "tags_json": store.jsonable(s.tags),
            "normalized": s._normalized,
            "version": version,
            "model_version": _core.MODEL_VERSION,
            # (bytes, origin) when set explicitly; else each worker takes its machine's default.
            "memory_limit": explicit_limit,
            # Python algorithms the scenario names: their source travels with the run.
            "cc_modules": cc.modules_for(s.scenario),
        }

    todo: list[tuple[RunSpec, str, dict[str, Any]]] = []
    keys: list[str] = []
    seen_keys: dict[tuple[str, str], tuple[RunSpec, str]] = {}
    skipped = 0
    for s in specs:
        key = s.key
        prev = seen_keys.get((s.experiment, key))
        if prev is not None:
            if store.jsonable(prev[0].tags) != store.jsonable(s.tags):
                raise ValueError(
                    f"two specs of experiment {s.experiment!r} are the same run (key {key}) "
                    f"but have different tags: {prev[0].tags!r} and {s.tags!r}"
                )
            keys.append(prev[1])
            skipped += 1
            continue
        twin = s._twin_key
        stored = None if force else _stored_key(s, key, twin, names)
        if stored is None:
            todo.append((s, twin, payload(s)))
            stored = key
        else:
            _retag_if_needed(out, s, stored, payload, names, scans[s.experiment])
            skipped += 1
        keys.append(stored)
        seen_keys[(s.experiment, key)] = (s, stored)

    damaged = [(e, key) for e, sc in scans.items() for key in dict.fromkeys(k for k, _, _ in sc.damaged)]
    todo_keys = {(spec.experiment, k) for spec, twin, _ in todo for k in (spec.key, twin)}
    moved = {
        "damaged": damaged,
        "damaged_rerun": sum((e, k) in todo_keys for e, k in damaged),
        "older": sum(len(sc.older) for sc in scans.values()),
    }
    prog = _progress(progress, description, len(specs), skipped) if todo else None
    task = prog.task_ids[0] if prog is not None else None
    runner = Runner(out, prog, task)
    try:
        if todo:
            if backend == "ray":
                ray_backend.execute_ray(todo, runner, jobs, address)
            else:
                from . import pool  # imports multiprocessing: only when runs are to be made

                pool.execute_local(todo, runner, jobs, prog)
    except KeyboardInterrupt as exc:
        exc.report = ExecutionReport(  # type: ignore[attr-defined]
            total=len(specs), ran=runner.ran, skipped=skipped, failed=runner.failed,
            wall_seconds=time.perf_counter() - t0, keys=keys, out=out, **moved,
        )
        raise
    finally:
        if prog is not None:
            prog.stop()
    return ExecutionReport(
        total=len(specs), ran=runner.ran, skipped=skipped, failed=runner.failed,
        wall_seconds=time.perf_counter() - t0, keys=keys, out=out, **moved,
    )


def _stored_key(s: RunSpec, key: str, twin: str, names: Callable[[str, str], set[str]]) -> str | None:
    fname = f"{key}.parquet"
    e = s.experiment
    if fname in names("runs", e) and (
        not s.timeseries or (fname in names("timeseries", e) and fname in names("cc_events", e))
    ):
        return key
    if not s.timeseries:
        tname = f"{twin}.parquet"
        if tname in names("runs", e):
            return twin  # stored with time series: a superset
    return None


def _retag_if_needed(out: Path, s: RunSpec, stored: str, payload: Callable, names,
                     scan: store_check.Scan) -> None:
    """Tags are not part of the key: when they changed, rewrite the stored files' tag columns."""
    info = scan.files.get(("runs", stored))
    if info is None:  # pragma: no cover - every stored runs file was checked by the scan
        return
    meta = info.meta
    want = payload(s, stored)
    if meta.get("tags") == want["tags_json"] and meta.get("tag_columns") == [c for c, _, _ in want["tags"]]:
        return
    want["timeseries"] = bool(meta.get("timeseries", s.timeseries))
    for table in store.TABLES:
        p = store.partition(out, table, s.experiment) / f"{stored}.parquet"
        if p.name in names(table, s.experiment):
            store.retag(p, want)


def _progress(enabled: bool, description: str, total: int, done: int):
    if not enabled:
        return None
    from rich.console import Console
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                               TimeElapsedColumn, TimeRemainingColumn)

    console = Console(stderr=True, highlight=False)
    prog = Progress(
        TextColumn("{task.description}", markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("elapsed"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=console,
        transient=False,
    )
    prog.add_task(description, total=total, completed=done)
    return prog

