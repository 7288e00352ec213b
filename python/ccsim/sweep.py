"""Sweeps: many runs of a scenario, in parallel, stored as Parquet.

Three layers:

* :func:`expand` turns a base scenario, a sweep table (``{"bottleneck.loss":
  [0, 0.01], "flows.0.cc": ["cubic", "bbr"]}``) and a number of runs into a
  list of :class:`RunSpec` (the cartesian product x seeds), validating every
  combination first;
* :func:`execute` runs the specs that are not stored yet, in a local process
  pool or on Ray, and stores each finished run at once (see :mod:`ccsim.store`
  for the layout); an interrupted or partly failed execution is completed by
  calling it again;
* :func:`sweep` (``ccsim.sweep(...)``) does both and returns the results as a
  DataFrame (:func:`ccsim.results.load`).

A run is identified by :attr:`RunSpec.key`, a hash of the normalised scenario,
the seed, the time-series flag and the simulation model version
(``ccsim._core.MODEL_VERSION``, bumped by any engine change that alters results);
the experiment name is the partition it is stored in.  Before deciding what is
stored, :func:`execute` checks every stored file of the experiments it runs
(:mod:`ccsim.store_check`): damaged files and runs of an older model version are
moved aside, and rerun when they are part of the specs.
"""

from __future__ import annotations

import copy
import itertools
import json
import operator
import os
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, Sequence

from . import _core, store, store_check, sweep_table
from .scenario import MAX_SEED, PathLike, Scenario, ScenarioError, _check_depth, _cut, _short_repr, _split_path, int_text
from .scenario import load as _load_scenario

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = [
    "ExecutionReport",
    "RayNotInstalledError",
    "RayStartError",
    "RunSpec",
    "execute",
    "expand",
    "load_sweep_file",
    "sweep",
]

#: The most runs one sweep expands to (combinations x runs).
MAX_RUNS = 1_000_000
#: Default root of ``ccsim.sweep`` / ``ccsim sweep`` output: ``./ccsim-runs/<experiment>``.
DEFAULT_ROOT = "ccsim-runs"

RAY_MISSING = "the ray backend needs Ray: python3 -m pip install '.[ray]' in the ccsim source folder"


class RayNotInstalledError(ImportError):
    """``backend="ray"`` without Ray installed."""


class RayStartError(RuntimeError):
    """Ray could not be started, or the cluster at ``address`` not reached."""


# -- run specifications -------------------------------------------------------------------


@dataclass(frozen=True)
class RunSpec:
    """One run to execute and store.

    ``experiment`` is the partition the run is stored in; ``scenario`` the full
    scenario dict (TOML structure); ``seed`` overrides the scenario's seed;
    ``tags`` become columns of the stored rows (:func:`expand` names them
    ``loss``, ``cc``, ...: :mod:`ccsim.sweep_table`; a tag given here with dots
    becomes ``bottleneck_loss``; a result column that a tag shadows is
    renamed: with a ``cc`` tag the flows' algorithm column is ``flow_cc``; a ``seed``
    tag must equal ``seed`` and is not a separate column; ``experiment``, ``key``,
    ``status`` and ``error`` cannot be tags);
    ``timeseries`` also stores the time series and algorithm events.
    """

    experiment: str
    scenario: dict
    seed: int
    tags: Mapping[str, Any] = field(default_factory=dict)
    timeseries: bool = False

    def __post_init__(self) -> None:
        store.check_experiment(self.experiment)
        scenario = self.scenario
        if isinstance(scenario, Scenario):
            scenario = scenario.to_dict()
        elif isinstance(scenario, Mapping):
            scenario = copy.deepcopy(dict(scenario))
        else:
            raise TypeError(f"RunSpec.scenario: expected a dict or Scenario; got {type(scenario).__name__}")
        object.__setattr__(self, "scenario", scenario)
        seed = _as_seed(self.seed, "RunSpec.seed")
        object.__setattr__(self, "seed", seed)
        if not isinstance(self.tags, Mapping):
            raise TypeError(f"RunSpec.tags: expected a mapping; got {type(self.tags).__name__}")
        tags = {}
        for name, value in self.tags.items():
            if not isinstance(name, str) or not name:
                raise TypeError(f"RunSpec.tags: tag names must be non-empty strings; got {name!r}")
            tags[name] = _plain(value)
        if "seed" in tags and tags["seed"] != seed:
            raise ValueError(f"RunSpec.tags: tag 'seed' = {tags['seed']!r} differs from seed = {seed}")
        store.tag_columns(tags)  # raises if two tags share a column
        object.__setattr__(self, "tags", tags)
        object.__setattr__(self, "timeseries", bool(self.timeseries))

    def __hash__(self) -> int:
        return hash((self.experiment, self.key))

    @property
    def key(self) -> str:
        """sha256 of the canonical JSON of {normalised scenario, seed, timeseries, model version},
        16 hex digits."""
        cached = self.__dict__.get("_key")
        if cached is None:
            cached = _key(self._normalized, self.seed, self.timeseries)
            object.__setattr__(self, "_key", cached)
        return cached

    @property
    def _twin_key(self) -> str:
        """The key of the same run with the other ``timeseries`` flag."""
        return _key(self._normalized, self.seed, not self.timeseries)

    @property
    def _normalized(self) -> Any:
        """The scenario as normalised by the core (defaults filled, seed set); for an
        invalid scenario the scenario as given (its run will fail and be recorded)."""
        cached = self.__dict__.get("_norm")
        if cached is None:
            data = dict(self.scenario)
            data["seed"] = self.seed
            try:
                cached = json.loads(_core.validate(Scenario.from_dict(data).to_json()))
            except (ValueError, ScenarioError):
                cached = {"invalid-scenario": store.jsonable(data)}
            object.__setattr__(self, "_norm", cached)
        return cached


def _key(normalized: Any, seed: int, timeseries: bool) -> str:
    import hashlib

    text = json.dumps(
        {"scenario": normalized, "seed": seed, "timeseries": bool(timeseries),
         "model_version": _core.MODEL_VERSION},
        sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False,
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _as_seed(seed: Any, where: str) -> int:
    if isinstance(seed, bool):
        raise ScenarioError(f"{where}: expected a non-negative integer; got {_short_repr(seed)}")
    try:
        value = operator.index(seed)
    except TypeError:
        raise ScenarioError(f"{where}: expected a non-negative integer; got {_short_repr(seed)}") from None
    if not 0 <= value <= MAX_SEED:
        raise ScenarioError(f"{where}: {int_text(value)} is out of range; accepted: an integer in [0, {MAX_SEED}]")
    return value


def _plain(value: Any) -> Any:
    """numpy scalars/arrays -> Python values, tuples -> lists (tags, sweep values)."""
    if isinstance(value, (str, bool, int, float)) or value is None:
        return value
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "tolist") and callable(value.tolist):
        return _plain(value.tolist())
    if hasattr(value, "item") and callable(value.item):
        try:
            return _plain(value.item())
        except (TypeError, ValueError):
            pass
    return value


# -- expanding a sweep ---------------------------------------------------------------------


def expand(
    base: Scenario | Mapping[str, Any],
    sweep: Mapping[str, Sequence[Any]],
    runs: int = 1,
    *,
    experiment: str,
    seed0: int | None = None,
    timeseries: bool = False,
) -> list[RunSpec]:
    """The cartesian product of ``sweep`` x ``runs`` seeds, as a list of RunSpec.

    ``sweep`` maps dotted parameter paths (``"bottleneck.loss"``, ``"flows.0.cc"``,
    ``"flows.1.params.beta"``) to non-empty lists of values, or column names to
    ``{"path": ..., "values": [...], "format": "{}bdp"}`` (:mod:`ccsim.sweep_table`);
    the product is taken in the order given, the last entry varying fastest, and for
    each combination ``runs`` seeds ``seed0 .. seed0+runs-1`` (``seed0`` defaults to
    the base scenario's seed, else 1).  Tags: ``{column: value}`` for each swept
    parameter (the column names of :func:`ccsim.sweep_table.column_names`:
    ``bottleneck.loss`` -> ``loss``, ``flows.0.cc`` -> ``cc``) plus ``"run"`` (0-based
    index) and ``"seed"``.

    Every distinct combination is validated by the core before anything runs;
    problems raise :class:`ScenarioError` with one line, e.g.
    ``"sweep.bottleneck.loss: expected a non-empty list of values; got 0.01"`` or
    ``"sweep: bottleneck.los: unknown key; ..."``.
    """
    if isinstance(base, Scenario):
        base_sc = base.copy()
    elif isinstance(base, Mapping):
        base_sc = Scenario.from_dict(base)
    else:
        raise TypeError(f"expand: base must be a Scenario or dict; got {type(base).__name__}")
    source = f"{base_sc.source}: " if base_sc.source is not None else ""

    def fail(message: str) -> ScenarioError:
        return ScenarioError(f"{source}{message}")

    try:
        store.check_experiment(experiment)
    except ValueError as exc:
        raise fail(str(exc)) from None
    try:
        n_runs = None if isinstance(runs, bool) else operator.index(runs)
    except TypeError:
        n_runs = None
    if n_runs is None or n_runs < 1:
        raise fail(f"runs: expected a positive integer; got {_short(runs)}")
    if n_runs > MAX_RUNS:
        raise fail(f"runs: {int_text(n_runs)} is out of range; accepted: an integer in [1, {MAX_RUNS}]")
    runs = n_runs
    if seed0 is None:
        seed0 = base_sc.get("seed", 1)
        where = "seed"
    else:
        where = "seed0"
    try:
        seed0 = _as_seed(seed0, where)
        _as_seed(seed0 + runs - 1, f"{where} + runs - 1")
    except ScenarioError as exc:
        raise fail(str(exc)) from None

    entries = _check_sweep(base_sc, sweep, fail)
    paths = [e.path for e in entries]
    values = [e.values for e in entries]
    total = runs
    for vals in values:
        total *= len(vals)
    if total > MAX_RUNS:
        raise fail(f"runs: {int_text(runs)} runs x {int_text(total // runs)} combinations = {int_text(total)} runs; "
                   f"accepted: at most {MAX_RUNS} runs in one sweep")
    columns = sweep_table.column_names(entries, fail)
    base_data = base_sc.to_dict()
    base_data.pop("seed", None)
    try:
        _core.validate(Scenario.from_dict(base_data).to_json())
        base_error = None
    except (ValueError, ScenarioError) as exc:
        base_error = str(exc)

    specs: list[RunSpec] = []
    for combo in itertools.product(*values):
        sc = base_sc
        set_values = [e.scenario_value(v) for e, v in zip(entries, combo)]
        for path, value in zip(paths, set_values):
            try:
                sc = sc.replace(path, value)
            except ScenarioError as exc:  # pragma: no cover - paths are checked above
                raise fail(f"sweep.{_cut(path)}: {exc}") from None
        data = sc.to_dict()
        data.pop("seed", None)
        try:
            _core.validate(Scenario.from_dict(data).to_json())
        except (ValueError, ScenarioError) as exc:
            if str(exc) == base_error:  # not caused by the sweep: the base scenario is invalid
                raise fail(base_error) from None
            where_combo = ""
            if len(paths) > 1:
                where_combo = " (in the combination " + ", ".join(
                    f"{p} = {_show(v)}" for p, v in zip(paths, set_values)) + ")"
            raise fail(f"sweep: {exc}{where_combo}") from None
        combo_tags = dict(zip(columns, combo))
        for i in range(runs):
            seed = seed0 + i
            scenario = dict(data)
            scenario["seed"] = seed
            specs.append(RunSpec(
                experiment=experiment,
                scenario=scenario,
                seed=seed,
                tags={**combo_tags, "run": i, "seed": seed},
                timeseries=timeseries,
            ))
    return specs


def _show(value: Any) -> str:
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return int_text(value)
    return repr(value)


def _check_sweep(base: Scenario, sweep: Any,
                 fail: Callable[[str], ScenarioError]) -> list[sweep_table.Entry]:
    if sweep is None:
        sweep = {}
    if not isinstance(sweep, Mapping):
        raise fail(f"sweep: expected a table of parameter paths and value lists; got {_short_repr(sweep)}")
    data = base.to_dict()
    entries: list[sweep_table.Entry] = []
    for path, vals in sweep.items():
        if not isinstance(path, str) or not path.strip():
            raise fail(f"sweep: parameter paths must be non-empty strings; got {_cut(repr(path))}")
        try:
            _check_depth(vals, ["sweep", path])
        except ScenarioError as exc:
            raise fail(str(exc)) from None
        key, fmt, named = path, None, sweep_table.is_entry(vals)
        if named:
            path, vals, fmt = sweep_table.named_entry(key, vals, fail)
        where = f"sweep.{_cut(key)}.values" if named else f"sweep.{_cut(path)}"
        if isinstance(vals, (str, bytes, Mapping)) or not (
            isinstance(vals, (list, tuple, range)) or hasattr(vals, "tolist")
        ):
            raise fail(f"{where}: expected a non-empty list of values; got {_short(vals)}")
        vals = _plain(list(vals) if not hasattr(vals, "tolist") else vals.tolist())
        if not isinstance(vals, list) or not vals:
            raise fail(f"{where}: expected a non-empty list of values; got {_short(vals)}")
        _check_path(data, path, f"sweep.{key}.path" if named else where, fail)
        entry = sweep_table.Entry(key, path, vals, fmt, named)
        sweep_table.check_format_values(entry, fail)
        entries.append(entry)
    return entries


def _short(value: Any) -> str:
    text = _show(value) if not isinstance(value, (list, dict)) else json.dumps(store.jsonable(value))
    return text if len(text) <= 80 else text[:77] + "..."


def _check_path(data: Any, path: str, where: str, fail: Callable[[str], ScenarioError]) -> None:
    """The path must be settable: lists indexed in range, no scalar on the way."""
    try:
        keys = _split_path(path)
    except ScenarioError as exc:
        raise fail(f"{where}: {exc}") from None
    if keys[0] == "seed" and len(keys) == 1:
        raise fail(f"{where}: the seed is not a sweep parameter; use runs (and seed0) for seeds")
    node: Any = data
    walked: list[str] = []
    for i, key in enumerate(keys):
        last = i == len(keys) - 1
        if isinstance(node, list):
            if not isinstance(key, int):
                raise fail(f"{where}: '{_cut('.'.join(walked))}' is a list; expected an index instead of '{_cut(key)}'")
            if key >= len(node):
                raise fail(
                    f"{where}: index {key} out of range: '{_cut('.'.join(walked))}' has {len(node)} "
                    f"entr{'y' if len(node) == 1 else 'ies'}"
                )
            node = node[key]
        elif isinstance(node, dict):
            name = str(key)
            if name not in node:
                if last:
                    return
                # A missing table is created by replace(); a missing list (e.g. flows) is not.
                nxt = keys[i + 1]
                if isinstance(nxt, int):
                    raise fail(f"{where}: index {nxt} out of range: the scenario has no '{_cut('.'.join(walked + [name]))}'")
                return
            node = node[name]
        else:
            kind = {bool: "boolean", int: "integer", float: "number", str: "string"}.get(
                type(node), type(node).__name__)
            raise fail(
                f"{where}: cannot set '{_cut(key)}' inside '{_cut('.'.join(walked))}', which is a "
                f"{kind} ({_short(node)})"
            )
        walked.append(str(key))


def load_sweep_file(path: PathLike) -> tuple[Scenario, dict, int]:
    """Read a sweep TOML file: ``(base scenario, sweep table, runs)``.

    The file is a scenario plus ``runs = N`` (default 1; at the top or inside
    ``[sweep]``) and a ``[sweep]`` table of parameter paths to value lists; dotted keys may be
    written bare (``bottleneck.loss = [0, 0.01]``) or quoted
    (``"flows.0.cc" = ["cubic", "bbr"]``); a column name may name its path
    (``buffer_bdp = { path = "bottleneck.buffer", values = [1, 2], format = "{}bdp" }``,
    :mod:`ccsim.sweep_table`).  The base scenario is not validated here
    (:func:`expand` validates every combination).
    """
    sc = _load_scenario(path, validate=False)
    data = sc.to_dict()
    p = sc.source
    raw_sweep = data.pop("sweep", {})
    if not isinstance(raw_sweep, Mapping):
        raise ScenarioError(f"{p}: sweep: expected a table of parameter paths and value lists; got {_short(raw_sweep)}")
    raw_sweep = dict(raw_sweep)
    # `runs` may be top-level or inside [sweep] (no scenario parameter is called runs).
    top, inner = data.pop("runs", None), raw_sweep.pop("runs", None)
    if top is not None and inner is not None and top != inner:
        raise ScenarioError(f"{p}: runs: given twice, {_short(top)} at the top and {_short(inner)} in [sweep]")
    runs = top if top is not None else inner if inner is not None else 1
    where = "runs" if top is not None or inner is None else "sweep.runs"
    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
        raise ScenarioError(f"{p}: {where}: expected a positive integer; got {_short(runs)}")
    base = Scenario.from_dict(data)
    base.source = p
    return base, _flatten(raw_sweep), runs


def _flatten(table: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """``{"bottleneck": {"loss": [...]}}`` -> ``{"bottleneck.loss": [...]}`` (TOML dotted keys);
    named entries (``{"buffer_bdp": {"path": ..., "values": ...}}``) are kept as they are."""
    out: dict[str, Any] = {}
    for key, value in table.items():
        path = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, Mapping) and not sweep_table.is_entry(value):
            out.update(_flatten(value, path))
        else:
            out[path] = value
    return out


# -- execution -------------------------------------------------------------------------------


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


def _simulate(scenario: Mapping[str, Any], seed: int, *, timeseries: bool = True,
              memory_limit: tuple[int, str] | None = None):
    """Run one simulation (a seam for tests). ``memory_limit`` is (bytes, where it comes
    from); by default that of ``ccsim.run``. Its warnings are not printed: a sweep's workers
    share the terminal with its progress bar."""
    import warnings

    from . import limits
    from .result import CcsimWarning, _run

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CcsimWarning)
        return _run(scenario, seed, timeseries, memory_limit or limits.resolve())


def _run_payload(payload: Mapping[str, Any]) -> dict[str, Any]:
    """Worker: run one spec and return its tables as Parquet bytes (or the error)."""
    import traceback

    from . import limits

    key = payload["key"]
    try:
        # A limit set explicitly applies to each run; the default is this machine's memory
        # shared among the runs it executes at once (a Ray worker's machine runs one per CPU).
        limit = payload.get("memory_limit") or limits.default_limit(
            payload.get("memory_share") or os.cpu_count() or 1)
        # Without time series requested, none is recorded (the run is otherwise the same).
        result = _simulate(payload["scenario"], payload["seed"], timeseries=bool(payload["timeseries"]),
                           memory_limit=tuple(limit))
        out: dict[str, Any] = {"key": key, "ok": True}
        out["runs"] = store.to_parquet_bytes(store.runs_table(payload, result.to_dict()))
        if payload["timeseries"]:
            out["timeseries"] = store.to_parquet_bytes(store.timeseries_table(payload, result))
            out["cc_events"] = store.to_parquet_bytes(store.events_table(payload, result))
        return out
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # noqa: BLE001 - includes pyo3 PanicException
        return {"key": key, "ok": False, "error": _error_line(exc), "traceback": traceback.format_exc()}


def _error_line(exc: BaseException) -> str:
    text = " ".join(p.strip() for p in str(exc).splitlines() if p.strip())
    if isinstance(exc, ScenarioError):
        return text or "invalid scenario"
    name = type(exc).__name__
    return f"{name}: {text}" if text else name


def _worker_init(parent: int) -> None:
    import signal
    import threading

    # The parent handles Ctrl-C (it stops the pool); workers must not die half-way.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # If the parent is killed (kill -9), a worker would wait for work forever (it holds
    # both ends of the task queue): exit as soon as the parent is gone.
    threading.Thread(target=_watch_parent, args=(parent,), name="ccsim-parent-watch", daemon=True).start()


def _watch_parent(parent: int) -> None:
    import select

    try:
        fd = os.pidfd_open(parent)  # Linux >= 5.3: readable when the process exits
    except (AttributeError, OSError):
        fd = None
    if fd is not None:
        select.select([fd], [], [])
        os._exit(1)
    while True:  # elsewhere: poll
        try:
            os.kill(parent, 0)
        except ProcessLookupError:
            os._exit(1)
        except OSError:
            pass
        time.sleep(1.0)


_PRELOAD = ["ccsim.sweep", "ccsim.store", "pandas", "pyarrow.parquet"]
_CONTEXT = None


def _mp_context():
    """The multiprocessing context of the local pool.

    Not ``fork``: once pyarrow or DuckDB have started threads in this process
    (``results.load``, ``results.query``), a forked worker can crash.  ``forkserver``
    forks the workers from a clean server process that has imported ccsim, pandas
    and pyarrow once, so they start quickly.  Unlike plain forkserver/spawn, the
    workers do not import the parent's main script (they only need ccsim.sweep):
    scripts without an ``if __name__ == "__main__":`` guard, ``python -`` and
    notebooks all work.  ``spawn`` where forkserver does not exist.
    """
    global _CONTEXT
    if _CONTEXT is None:
        import multiprocessing.context as mpc

        process = __getattr__("_WorkerProcess")
        base = mpc.ForkServerContext if process._start_method == "forkserver" else mpc.SpawnContext
        _CONTEXT = type("_WorkerContext", (base,), {"Process": process})()
        if process._start_method == "forkserver":
            _CONTEXT.set_forkserver_preload(_PRELOAD)
    return _CONTEXT


def __getattr__(name: str) -> Any:
    # The worker Process class is created on first use (multiprocessing is not imported
    # by `import ccsim`) but must be importable by name: it is pickled to the fork server.
    if name != "_WorkerProcess":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import multiprocessing as mp
    import multiprocessing.context as mpc

    if "forkserver" in mp.get_all_start_methods():
        base = mpc.ForkServerProcess
    else:
        base = mpc.SpawnProcess

    def _Popen(process_obj):
        with _without_main():
            return base._Popen(process_obj)

    cls = type("_WorkerProcess", (base,), {"_Popen": staticmethod(_Popen), "__module__": __name__})
    globals()["_WorkerProcess"] = cls
    return cls


class _without_main:
    """While starting a worker: leave the main module out of its preparation data."""

    def __enter__(self) -> None:
        import multiprocessing.spawn as mps

        self._mps = mps
        self._real = real = mps.get_preparation_data

        def prep(name: str) -> dict:
            data = real(name)
            data.pop("init_main_from_path", None)
            data.pop("init_main_from_name", None)
            return data

        mps.get_preparation_data = prep

    def __exit__(self, *exc: object) -> None:
        self._mps.get_preparation_data = self._real


class _Runner:
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
    from . import limits

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
        _import_ray()
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
    runner = _Runner(out, prog, task)
    try:
        if todo:
            if backend == "ray":
                _execute_ray(todo, runner, jobs, address)
            else:
                _execute_local(todo, runner, jobs, prog)
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


def _execute_inline(todo, runner: _Runner) -> None:
    for spec, twin, p in todo:
        runner.handle(spec, twin, _run_payload({**p, "memory_share": 1}))


def _execute_local(todo, runner: _Runner, jobs: int | None, prog) -> None:
    from collections import deque
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool

    workers = min(jobs or os.cpu_count() or 1, len(todo))
    if workers <= 1:
        if prog is not None:
            prog.start()
        _execute_inline(todo, runner)
        return
    ctx = _mp_context()

    def new_pool() -> ProcessPoolExecutor:
        return ProcessPoolExecutor(max_workers=workers, mp_context=ctx,
                                   initializer=_worker_init, initargs=(os.getpid(),))

    pending = deque(todo)
    limit = 2 * workers
    inflight: dict[Any, tuple[RunSpec, str]] = {}
    died = "the worker process died while running this run or one in parallel"
    breaks = 0  # pool failures since the last stored run
    pool = new_pool()
    try:
        if prog is not None:
            prog.start()
        while pending or inflight:
            broken = None
            while pending and len(inflight) < limit:
                spec, twin, p = pending.popleft()
                try:
                    inflight[pool.submit(_run_payload, {**p, "memory_share": workers})] = (spec, twin)
                except BrokenProcessPool as exc:
                    pending.appendleft((spec, twin, p))
                    broken = exc
                    break
            if broken is None and inflight:
                done, _ = wait(list(inflight), return_when=FIRST_COMPLETED)
                for fut in done:
                    spec, twin = inflight.pop(fut)
                    try:
                        res = fut.result()
                    except BrokenProcessPool as exc:
                        broken = exc
                        res = {"key": spec.key, "ok": False, "traceback": "", "error": f"{died} ({exc})"}
                    except Exception as exc:  # noqa: BLE001 - e.g. a result that cannot be pickled
                        res = {"key": spec.key, "ok": False, "error": _error_line(exc), "traceback": ""}
                    runner.handle(spec, twin, res)
                    if res.get("ok"):
                        breaks = 0
            if broken is not None:
                for fut, (spec, twin) in list(inflight.items()):
                    inflight.pop(fut)
                    runner.handle(spec, twin, {"key": spec.key, "ok": False, "traceback": "",
                                               "error": f"{died} ({broken})"})
                _terminate(pool)
                breaks += 1
                if breaks >= 3:
                    raise RuntimeError(
                        f"the worker processes keep dying ({broken}); {len(pending)} runs were not started"
                    )
                pool = new_pool()
    except BaseException:
        # Ctrl-C (or an error storing a result): keep what finished, stop the rest.
        for fut, (spec, twin) in list(inflight.items()):
            if fut.done() and not fut.cancelled() and fut.exception() is None:
                try:
                    runner.handle(spec, twin, fut.result())
                except BaseException:  # noqa: BLE001 - best effort while stopping
                    pass
            fut.cancel()
        _terminate(pool)
        raise
    pool.shutdown(wait=True)


def _terminate(pool) -> None:
    procs = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        try:
            p.terminate()
        except Exception:  # noqa: BLE001
            pass
    for p in procs:
        try:
            p.join(timeout=2)
        except Exception:  # noqa: BLE001
            pass


def _import_ray():
    try:
        import ray  # noqa: F401
    except ImportError:
        raise RayNotInstalledError(RAY_MISSING) from None
    return ray


def _execute_ray(todo, runner: _Runner, jobs: int | None, address: str | None) -> None:
    import logging

    ray = _import_ray()
    started = False
    if not ray.is_initialized():
        try:
            if address:
                ray.init(address=address, logging_level=logging.ERROR, log_to_driver=False)
            else:
                ray.init(num_cpus=jobs or os.cpu_count() or 1, include_dashboard=False,
                         logging_level=logging.ERROR, log_to_driver=False)
        except Exception as exc:  # noqa: BLE001 - Ray raises many kinds
            where = f"connect to the Ray cluster at {address}" if address else "start a local Ray instance"
            raise RayStartError(f"cannot {where}: {_error_line(exc)}") from None
        started = True
    try:
        remote = ray.remote(num_cpus=1)(_run_payload)
        if jobs:
            limit = jobs
        else:
            cpus = int(ray.cluster_resources().get("CPU", os.cpu_count() or 1))
            limit = 2 * max(cpus, 1)
        queue: Iterator = iter(todo)
        inflight: dict[Any, tuple[RunSpec, str]] = {}

        def fill() -> None:
            while len(inflight) < limit:
                item = next(queue, None)
                if item is None:
                    return
                spec, twin, p = item
                inflight[remote.remote(p)] = (spec, twin)

        if runner.progress is not None:
            runner.progress.start()
        try:
            fill()
            while inflight:
                done, _ = ray.wait(list(inflight), num_returns=1, timeout=None)
                for ref in done:
                    spec, twin = inflight.pop(ref)
                    try:
                        res = ray.get(ref)
                    except Exception as exc:  # noqa: BLE001 - worker crash, task error
                        import traceback

                        res = {"key": spec.key, "ok": False, "error": _error_line(exc),
                               "traceback": traceback.format_exc()}
                    runner.handle(spec, twin, res)
                fill()
        except BaseException:
            for ref in list(inflight):
                try:
                    ray.cancel(ref, force=True)
                except Exception:  # noqa: BLE001
                    pass
            raise
    finally:
        if started:
            ray.shutdown()


# -- the ccsim.sweep() entry point ---------------------------------------------------------


def sweep(
    scenario_or_path: Scenario | Mapping[str, Any] | PathLike,
    sweep: Mapping[str, Sequence[Any]] | None = None,
    runs: int | None = None,
    *,
    out: str | os.PathLike | None = None,
    jobs: int | None = None,
    backend: str = "local",
    address: str | None = None,
    force: bool = False,
    progress: bool = False,
    experiment: str | None = None,
    memory_limit: int | str | None = None,
) -> pd.DataFrame:
    """Run a sweep and return its results (one row per run and flow).

    ``scenario_or_path`` is a sweep TOML file (its ``[sweep]`` table and
    ``runs`` are used unless ``sweep``/``runs`` are given) or a Scenario/dict
    with ``sweep`` and ``runs`` (default 1).  Results are stored in ``out``
    (default ``./ccsim-runs/<experiment>``; the experiment defaults to the
    file stem, else the scenario's ``name``, else ``"sweep"``); runs already
    stored there are not run again.  ``memory_limit`` is that of each run (see
    :func:`execute`).  Returns :func:`ccsim.results.load` of this sweep's runs; failed
    runs are warned about (and are in ``out``).
    """
    from . import results

    if isinstance(scenario_or_path, (str, os.PathLike)):
        base, file_sweep, file_runs = load_sweep_file(scenario_or_path)
        if sweep is None:
            sweep = file_sweep
        if runs is None:
            runs = file_runs
        default_name = store.experiment_from_stem(Path(os.fspath(scenario_or_path)).stem)
    else:
        base = scenario_or_path if isinstance(scenario_or_path, Scenario) else Scenario.from_dict(scenario_or_path)
        if "sweep" in base or "runs" in base:  # a sweep file's structure, as a dict
            data = base.to_dict()
            inner = data.get("sweep") if isinstance(data.get("sweep"), Mapping) else {}
            if sweep is None and "sweep" in data:
                sweep = _flatten({k: v for k, v in inner.items() if k != "runs"})
            if runs is None:
                runs = data.get("runs", inner.get("runs"))
            data.pop("sweep", None)
            data.pop("runs", None)
            base = Scenario.from_dict(data)
        name = base.get("name", None)
        default_name = store.experiment_from_stem(name) if isinstance(name, str) and name else "sweep"
    experiment = experiment or default_name
    specs = expand(base, sweep or {}, 1 if runs is None else runs, experiment=experiment)
    out = Path(out) if out is not None else Path(DEFAULT_ROOT) / experiment
    report = execute(specs, out, jobs=jobs, backend=backend, address=address, force=force,
                     progress=progress, description=experiment, memory_limit=memory_limit)
    for line in store_check.summary_lines(report):
        warnings.warn(line, UserWarning, stacklevel=2)
    if report.failed:
        spec, error = report.failed[0]
        warnings.warn(
            f"{len(report.failed)} of {report.total} runs failed (e.g. {spec.key}: {error}); "
            f"see {store.partition(out, 'runs', experiment)}/*.error.json",
            RuntimeWarning, stacklevel=2,
        )
    return results.load(out, experiment, keys=report.keys)


# ``ccsim.sweep`` is this function (the package attribute shadows the module), so the
# module's API is also reachable from it: ccsim.sweep.execute, ccsim.sweep.RunSpec, ...
for _name in ("RunSpec", "ExecutionReport", "execute", "expand", "load_sweep_file", "RayNotInstalledError",
              "RayStartError"):
    setattr(sweep, _name, globals()[_name])
del _name
