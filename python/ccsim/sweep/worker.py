"""What runs in a worker: one spec's simulation, its tables as Parquet bytes or its error
(:func:`run_payload`), and the set-up of a local pool's worker process (Ctrl-C left to the
parent, exit when the parent is gone).

Everything here is reached by name from a worker process (the local pool pickles
``run_payload`` and ``worker_init`` by reference, Ray sends ``run_payload``); it imports no
more than a run needs.
"""

from __future__ import annotations

import os
import time
from typing import Any, Mapping

from .. import store
from ..scenario import ScenarioError

def _simulate(scenario: Mapping[str, Any], seed: int, *, timeseries: bool = True,
              memory_limit: tuple[int, str] | None = None):
    """Run one simulation (a seam for tests). ``memory_limit`` is (bytes, where it comes
    from); by default that of ``ccsim.run``. Its warnings are not printed: a sweep's workers
    share the terminal with its progress bar."""
    import warnings

    from .. import limits
    from ..result import CcsimWarning, _run

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CcsimWarning)
        return _run(scenario, seed, timeseries, memory_limit or limits.resolve())


def run_payload(payload: Mapping[str, Any]) -> dict[str, Any]:
    """Worker: run one spec and return its tables as Parquet bytes (or the error)."""
    import traceback

    from .. import limits

    key = payload["key"]
    try:
        # A limit set explicitly applies to each run; the default is this machine's memory
        # shared among the runs it executes at once (a Ray worker's machine runs one per CPU).
        limit = payload.get("memory_limit") or limits.default_limit(
            payload.get("memory_share") or os.cpu_count() or 1)
        # Without time series requested, none is recorded (the run is otherwise the same).
        if payload.get("cc_modules"):
            from .. import cc

            cc.install(payload["cc_modules"])
        result = _simulate(payload["scenario"], payload["seed"], timeseries=bool(payload["timeseries"]),
                           memory_limit=tuple(limit))
        out: dict[str, Any] = {"key": key, "ok": True}
        # A shallow copy: one top-level key may be added below, and runs_table only reads.
        summary = dict(result._summary)
        if payload.get("cc_modules"):
            # The Python algorithms' content hashes (also in the run's key): name=sha256, ...
            summary["cc_modules"] = ", ".join(f"{k}={m['sha256']}" for k, m in sorted(payload["cc_modules"].items()))
        out["runs"] = store.to_parquet_bytes(store.runs_table(payload, summary))
        if payload["timeseries"]:
            out["timeseries"] = store.to_parquet_bytes(store.timeseries_table(payload, result))
            out["cc_events"] = store.to_parquet_bytes(store.events_table(payload, result))
        return out
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # noqa: BLE001 - includes pyo3 PanicException
        return {"key": key, "ok": False, "error": error_line(exc), "traceback": traceback.format_exc()}


def error_line(exc: BaseException) -> str:
    """One line for a failed run: the message (with the exception type unless a ScenarioError)."""
    text = " ".join(p.strip() for p in str(exc).splitlines() if p.strip())
    if isinstance(exc, ScenarioError):
        return text or "invalid scenario"
    name = type(exc).__name__
    return f"{name}: {text}" if text else name


def worker_init(parent: int) -> None:
    """Initializer of a local pool worker; ``parent`` is the process id of the sweep."""
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

