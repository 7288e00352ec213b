"""The local backend: runs in this process (one job) or in a pool of worker processes.

The pool is a :class:`concurrent.futures.ProcessPoolExecutor` whose workers are started by a
fork server (spawned where there is none) and watch this process (:mod:`ccsim.sweep.worker`).
Each finished run is handed to the runner at once; a worker that dies fails the runs in flight
and the pool is replaced (three times in a row without a stored run: an error); on Ctrl-C
nothing more is started, what finished is kept and the workers are terminated.

Why not ``fork``: once pyarrow or DuckDB have started threads in this process
(``results.load``, ``results.query``), a forked worker can crash.  The fork server forks the
workers from a clean process that has imported ccsim, pandas and pyarrow once, so they start
quickly.  Unlike plain forkserver/spawn workers, these do not import the parent's main script
(they only need :mod:`ccsim.sweep.worker`): scripts without an ``if __name__ == "__main__":``
guard, ``python -`` and notebooks all work.  multiprocessing has no option for that, so it is
the one place that reaches into its internals (:class:`_WorkerProcess`).

This module imports :mod:`multiprocessing`; it is imported only when a sweep executes.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.context as _mpc
import os
import threading
from collections import deque
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import TYPE_CHECKING, Any

from .worker import error_line, run_payload, worker_init

if TYPE_CHECKING:  # pragma: no cover
    from .execution import Runner

#: The modules the fork server imports once, before it forks any worker.
PRELOAD = ["ccsim.sweep.worker", "ccsim.store", "pandas", "pyarrow.parquet"]

_FORKSERVER = "forkserver" in multiprocessing.get_all_start_methods()
_BaseProcess = _mpc.ForkServerProcess if _FORKSERVER else _mpc.SpawnProcess
_BaseContext = _mpc.ForkServerContext if _FORKSERVER else _mpc.SpawnContext


_STARTING = threading.Lock()


class _without_main:
    """While starting a worker: leave the main module out of its preparation data (the data a
    fork-server or spawned child uses to re-create the parent's ``__main__``).  One worker is
    started at a time (pools made in several threads would otherwise restore each other's
    replacement of ``get_preparation_data``)."""

    def __enter__(self) -> None:
        import multiprocessing.spawn as mps

        _STARTING.acquire()
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
        _STARTING.release()


class _WorkerProcess(_BaseProcess):
    """A pool worker process, started without the parent's main module.  Defined at module
    level: the fork server unpickles it by name."""

    @staticmethod
    def _Popen(process_obj):
        with _without_main():
            return _BaseProcess._Popen(process_obj)


class _WorkerContext(_BaseContext):
    """The fork-server (or spawn) context whose processes are :class:`_WorkerProcess`."""

    Process = _WorkerProcess


_CONTEXT: _WorkerContext | None = None


def mp_context() -> _WorkerContext:
    """The multiprocessing context of the local pool (one per process; the fork server is
    started on first use with :data:`PRELOAD`)."""
    global _CONTEXT
    if _CONTEXT is None:
        _CONTEXT = _WorkerContext()
        if _FORKSERVER:
            _CONTEXT.set_forkserver_preload(PRELOAD)
    return _CONTEXT


def execute_inline(todo, runner: Runner) -> None:
    """Run ``todo`` one after the other in this process."""
    for spec, twin, p in todo:
        runner.handle(spec, twin, run_payload({**p, "memory_share": 1}))


def execute_local(todo, runner: Runner, jobs: int | None, prog) -> None:
    """Run ``todo`` (``(spec, twin key, payload)`` triples) in a pool of ``jobs`` workers
    (default: one per CPU; in this process with one)."""
    workers = min(jobs or os.cpu_count() or 1, len(todo))
    if workers <= 1:
        if prog is not None:
            prog.start()
        execute_inline(todo, runner)
        return
    ctx = mp_context()

    def new_pool() -> _Pool:
        return _Pool(ProcessPoolExecutor(max_workers=workers, mp_context=ctx,
                                          initializer=worker_init, initargs=(os.getpid(),)))

    pending = deque(todo)
    limit = 2 * workers
    inflight: dict[Any, tuple[Any, str]] = {}
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
                    inflight[pool.executor.submit(run_payload, {**p, "memory_share": workers})] = (spec, twin)
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
                        res = {"key": spec.key, "ok": False, "error": error_line(exc), "traceback": ""}
                    runner.handle(spec, twin, res)
                    if res.get("ok"):
                        breaks = 0
            if broken is not None:
                for fut, (spec, twin) in list(inflight.items()):
                    inflight.pop(fut)
                    runner.handle(spec, twin, {"key": spec.key, "ok": False, "traceback": "",
                                               "error": f"{died} ({broken})"})
                pool.terminate()
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
        pool.terminate()
        raise
    pool.executor.shutdown(wait=True)


class _Pool:
    """A process pool and a way to stop its workers at once, runs in flight or not.

    Its workers are told apart from any other child of this process as the
    :class:`_WorkerProcess` children started since the pool was made
    (:func:`multiprocessing.active_children`)."""

    def __init__(self, executor: ProcessPoolExecutor) -> None:
        self.executor = executor
        self._before = set(multiprocessing.active_children())

    def _workers(self) -> list:
        return [p for p in multiprocessing.active_children()
                if isinstance(p, _WorkerProcess) and p not in self._before]

    def terminate(self) -> None:
        procs = self._workers()
        self.executor.shutdown(wait=False, cancel_futures=True)
        procs += [p for p in self._workers() if p not in procs]
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
