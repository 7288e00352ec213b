"""The Ray backend: one Ray task per run, on the cluster at ``address`` or on a local Ray
instance (started with ``jobs`` CPUs and shut down afterwards; an already initialised Ray is
used as it is).  Each finished run is handed to the runner at once; on Ctrl-C the tasks in
flight are cancelled."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Iterator

from .worker import error_line, run_payload

if TYPE_CHECKING:  # pragma: no cover
    from .execution import Runner

RAY_MISSING = "the ray backend needs Ray: python3 -m pip install '.[ray]' in the ccsim source folder"


class RayNotInstalledError(ImportError):
    """``backend="ray"`` without Ray installed."""


class RayStartError(RuntimeError):
    """Ray could not be started, or the cluster at ``address`` not reached."""


def import_ray():
    """The ray module, or RayNotInstalledError."""
    try:
        import ray  # noqa: F401
    except ImportError:
        raise RayNotInstalledError(RAY_MISSING) from None
    return ray


def execute_ray(todo, runner: Runner, jobs: int | None, address: str | None) -> None:
    """Run ``todo`` (``(spec, twin key, payload)`` triples) as Ray tasks."""
    import logging

    ray = import_ray()
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
            raise RayStartError(f"cannot {where}: {error_line(exc)}") from None
        started = True
    try:
        remote = ray.remote(num_cpus=1)(run_payload)
        if jobs:
            limit = jobs
        else:
            cpus = int(ray.cluster_resources().get("CPU", os.cpu_count() or 1))
            limit = 2 * max(cpus, 1)
        queue: Iterator = iter(todo)
        inflight: dict[Any, tuple[Any, str]] = {}

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

                        res = {"key": spec.key, "ok": False, "error": error_line(exc),
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

