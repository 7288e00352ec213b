"""Sweeps: many runs of a scenario, in parallel, stored as Parquet.

``ccsim.sweep`` is this package, and calling it runs a sweep:
``ccsim.sweep(path_or_scenario, {"bottleneck.loss": [0, 0.01]}, runs=5)`` is
:func:`ccsim.sweep.sweep` and returns a DataFrame.  The layers, one module each:

* :mod:`~ccsim.sweep.spec`: :class:`RunSpec`, one run to execute and store, and its key (a
  hash of the normalised scenario, the seed, the time-series flag and the simulation model
  version ``ccsim._core.MODEL_VERSION``);
* :mod:`~ccsim.sweep.table` and :mod:`~ccsim.sweep.expansion`: :func:`expand` turns a base
  scenario, a sweep table (``{"bottleneck.loss": [0, 0.01], "flows.0.cc": ["cubic", "bbr"]}``)
  and a number of runs into a list of :class:`RunSpec` (the cartesian product x seeds),
  validating every combination first; :func:`load_sweep_file` reads a sweep file;
* :mod:`~ccsim.sweep.execution`: :func:`execute` runs the specs that are not stored yet and
  stores each finished run at once (layout in :mod:`ccsim.store`, checks of stored files in
  :mod:`ccsim.store_check`); an interrupted or partly failed execution is completed by calling
  it again;
* the backends it runs them on: :mod:`~ccsim.sweep.pool` (this process, or a local process
  pool) and :mod:`~ccsim.sweep.ray_backend` (Ray); what runs in a worker is
  :mod:`~ccsim.sweep.worker`;
* :func:`sweep` (here) does all of it and returns the results (:func:`ccsim.results.load`).
"""

from __future__ import annotations

import os
import sys
import types
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from .. import store, store_check
from ..scenario import PathLike, Scenario
from .execution import ExecutionReport, execute
from .expansion import MAX_RUNS, _flatten, expand, load_sweep_file
from .ray_backend import RAY_MISSING, RayNotInstalledError, RayStartError
from .spec import RunSpec

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

#: Default root of ``ccsim.sweep`` / ``ccsim sweep`` output: ``./ccsim-runs/<experiment>``.
DEFAULT_ROOT = "ccsim-runs"


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
    from .. import results

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


class _SweepPackage(types.ModuleType):
    """The type of this package: a module that can be called (``ccsim.sweep(...)`` is
    :func:`sweep`), as the Python data model allows (a module's ``__class__`` may be set to a
    subclass of :class:`types.ModuleType`)."""

    __call__ = staticmethod(sweep)


sys.modules[__name__].__class__ = _SweepPackage
