"""The memory budget of a run.

Before a run starts, the core estimates from the scenario alone how much memory it will need
(flows, queued packets, time-series rows and algorithm events, in the engine and once
converted to Python lists and DataFrames: :func:`estimate`) and refuses a run that needs more
than its budget with a :class:`~ccsim.ScenarioError` saying what to do. The budget is, in
order of precedence:

* the ``memory_limit`` argument (``ccsim.run``, ``ccsim.sweep``) or ``--memory-limit``
  (``ccsim run``, ``ccsim sweep``);
* the ``CCSIM_MEMORY_LIMIT`` environment variable (honoured by every command, sweep
  workers and ``ccsim reproduce`` included);
* :data:`DEFAULT_FRACTION` of the machine's physical memory (the smaller of ``MemTotal`` and
  a cgroup memory limit on Linux, ``sysconf`` elsewhere, :data:`FALLBACK_BYTES` if neither
  is known), divided among the runs a local sweep executes at once.

Sizes are a number of bytes or a number with a unit: ``B``, ``KB``, ``MB``, ``GB``, ``TB``
(powers of 1000) or ``KiB``, ``MiB``, ``GiB``, ``TiB`` (powers of 1024), e.g. ``"8GB"``.
"""

from __future__ import annotations

import json
import math
import os
import re
from typing import Any

from .scenario import ScenarioError

__all__ = ["DEFAULT_FRACTION", "ENV_VAR", "FALLBACK_BYTES", "default_limit", "estimate", "parse_size",
           "physical_memory", "resolve"]

#: Environment variable with the memory limit of one run.
ENV_VAR = "CCSIM_MEMORY_LIMIT"
#: Share of the machine's physical memory one run may use by default.
DEFAULT_FRACTION = 0.5
#: Physical memory assumed where it cannot be read.
FALLBACK_BYTES = 8 * 2**30

_UNITS = {
    "": 1, "b": 1,
    "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
    "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40,
}
_SIZE = re.compile(r"^\s*([0-9]+(?:\.[0-9]*)?(?:[eE][+]?[0-9]+)?)\s*([A-Za-z]*)\s*$")
_ACCEPTED = 'a number of bytes or a size such as "8GB", "1.5GB" or "512MiB" (units B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)'


def parse_size(value: Any, where: str) -> int:
    """``value`` (bytes, or a string with a unit) as a positive number of bytes;
    :class:`ScenarioError` naming ``where`` otherwise."""
    if isinstance(value, bool):
        raise ScenarioError(f"{where}: expected a size; got {value!r}; accepted: {_ACCEPTED}")
    if isinstance(value, (int, float)):
        number, unit = float(value), ""
    elif isinstance(value, str):
        m = _SIZE.match(value)
        if m is None or m.group(2).lower() not in _UNITS:
            raise ScenarioError(f"{where}: {value!r} is not a size; accepted: {_ACCEPTED}")
        number, unit = float(m.group(1)), m.group(2).lower()
    else:
        raise ScenarioError(f"{where}: expected a size; got {type(value).__name__} {value!r}; accepted: {_ACCEPTED}")
    size = number * _UNITS[unit]
    if not math.isfinite(size) or size < 1 or size >= 2**63:
        raise ScenarioError(f"{where}: {value!r} is out of range; accepted: {_ACCEPTED}, from 1 byte to 8 EiB")
    return int(size)


def _read_int(path: str) -> int | None:
    try:
        with open(path, encoding="ascii") as f:
            text = f.read().strip()
    except (OSError, ValueError):
        return None
    return int(text) if text.isdigit() else None


def physical_memory() -> int | None:
    """The machine's physical memory in bytes (at most a cgroup's memory limit), or None."""
    total = None
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    total = int(line.split()[1]) * 1024
                    break
    except (OSError, ValueError, IndexError):
        total = None
    if total is None:
        try:
            total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (AttributeError, ValueError, OSError):
            total = None
        if total is not None and total <= 0:
            total = None
    # A container's memory limit (cgroup v2, then v1); "max" or a huge number means none.
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        limit = _read_int(path)
        if limit is not None and 0 < limit < 2**60:
            total = limit if total is None else min(total, limit)
    return total


def default_limit(share: int = 1) -> tuple[int, str]:
    """(bytes, description) of the default budget of one of ``share`` runs executing at once."""
    total = physical_memory()
    known = total is not None
    total = total if known else FALLBACK_BYTES
    limit = max(int(total * DEFAULT_FRACTION) // max(share, 1), 1)
    frac = "half" if DEFAULT_FRACTION == 0.5 else f"{DEFAULT_FRACTION:g}"
    mem = f"this machine's {_gb(total)} of memory" if known else f"{_gb(total)} (this machine's memory is unknown)"
    text = f"{frac} of {mem}"
    if share > 1:
        text += f", shared by {share} runs at once"
    return limit, f"the default: {text}"


def resolve(memory_limit: Any = None, *, share: int = 1) -> tuple[int, str]:
    """(bytes, description) of the budget of one run: ``memory_limit`` if given, else
    ``$CCSIM_MEMORY_LIMIT``, else :func:`default_limit` with ``share``."""
    if memory_limit is not None:
        return parse_size(memory_limit, "memory_limit"), "as set"
    env = os.environ.get(ENV_VAR, "").strip()
    if env:
        return parse_size(env, ENV_VAR), f"set by {ENV_VAR}"
    return default_limit(share)


def estimate(scenario: Any, *, timeseries: bool = True, pcap: bool = False,
             pcap_links: list[str] | None = None) -> dict[str, int]:
    """The memory a run of ``scenario`` needs, in bytes and counts: ``total_bytes``,
    ``flows``/``flow_bytes``, ``packets``/``packet_bytes`` (queued or in flight),
    ``timeseries_rows``/``timeseries_bytes``, ``cc_event_rows``/``cc_event_bytes``,
    ``workload_rows``/``workload_row_bytes`` (finished workload flows' rows) and
    ``captured_packets``/``capture_bytes`` (with ``pcap``: a capture of ``pcap_links``, by
    default the bottleneck, as :func:`ccsim.run` takes them).
    :class:`ScenarioError` for an invalid scenario."""
    from . import _core
    from .result import _as_scenario

    sc = _as_scenario(scenario)
    try:
        return json.loads(_core.estimate_memory(sc.to_json(), bool(timeseries), bool(pcap), pcap_links))
    except ValueError as exc:
        raise sc._error(exc) from None


def _gb(n: int) -> str:
    return f"{n / 1e9:.1f} GB"
