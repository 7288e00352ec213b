"""Running a scenario and the :class:`Result` of one run."""

from __future__ import annotations

import copy
import json
import operator
import os
import warnings
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from . import _core
from .scenario import MAX_SEED, Scenario, ScenarioError, _short_repr, int_text, load

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from matplotlib.figure import Figure

# numpy and pandas are imported lazily (in the methods that build tables) so
# that `ccsim run` and `import ccsim` stay quick when no DataFrame is needed.

__all__ = ["FLOW_COLUMNS", "TIMESERIES_COLUMNS", "CcsimWarning", "Result", "run"]

#: Per-flow summary columns, in display order (``Result.summary``).
FLOW_COLUMNS: tuple[str, ...] = (
    "id",
    "group",
    "cc",
    "start_s",
    "end_s",
    "throughput_mbps",
    "bytes_acked",
    "bytes_sent",
    "bytes_delivered",
    "segments_sent",
    "segments_delivered",
    "retransmits",
    "rto_count",
    "fast_recoveries",
    "rtt_min_ms",
    "rtt_mean_ms",
    "rtt_p95_ms",
    "cwnd_final_pkts",
    "cwnd_final_bytes",
    "completed",
    "completion_s",
)

#: Time-series columns (``Result.timeseries``), one row per (sample time, flow).
TIMESERIES_COLUMNS: tuple[str, ...] = (
    "time_s",
    "flow",
    "cc",
    "delivery_rate_mbps",
    "goodput_mbps",
    "bytes_acked",
    "cwnd_pkts",
    "srtt_ms",
    "rtprop_ms",
    "btlbw_mbps",
    "pacing_rate_mbps",
    "inflight_pkts",
    "rho",
    "queue_state",
    "shadow_wnd_pkts",
    "queue_pkts",
    "queue_bytes",
)

#: Link-queue columns (``Result.link_queues``), one row per (sample time, link direction).
LINK_QUEUE_COLUMNS: tuple[str, ...] = ("time_s", "link", "queue_pkts", "queue_bytes")

# Types of the time-series columns that are not float64, for a table without rows.
_EMPTY_TIMESERIES_DTYPES = {"flow": "int64", "cc": "category", "bytes_acked": "int64", "cwnd_pkts": "int64",
                            "inflight_pkts": "int64", "queue_pkts": "int64", "queue_bytes": "int64"}

#: Algorithm-event columns (``Result.cc_events``), one row per event.
EVENT_COLUMNS: tuple[str, ...] = ("time_s", "flow", "cc", "kind", "value", "value2")

# Columns that may be null/NaN and must stay numeric (float) even when all are null.
_FLOAT_FLOW_COLUMNS = frozenset(
    {"start_s", "end_s", "throughput_mbps", "rtt_min_ms", "rtt_mean_ms", "rtt_p95_ms",
     "completion_s"}
)

ScenarioLike = Scenario | Mapping[str, Any] | str | os.PathLike


def run(
    scenario: ScenarioLike,
    seed: int | None = None,
    *,
    timeseries: bool = True,
    memory_limit: int | str | None = None,
) -> Result:
    """Run one simulation.

    ``scenario`` is a :class:`Scenario`, a dict with the TOML structure, or the
    path of a scenario TOML file.  ``seed`` overrides the scenario's seed.
    ``timeseries=False`` records no time series (the run is otherwise identical and
    its :attr:`Result.timeseries` is empty): for long or large runs.
    ``memory_limit`` (bytes, or a size such as ``"8GB"``) is the memory the run may
    use; by default ``$CCSIM_MEMORY_LIMIT``, else half of the machine's memory (see
    :mod:`ccsim.limits`).  A run estimated to need more is refused before it starts.
    Raises :class:`ScenarioError` for an invalid scenario or seed, and for a run
    that needs more memory than its limit.
    """
    from . import limits

    return _run(scenario, seed, timeseries, limits.resolve(memory_limit))


def _run(scenario: ScenarioLike, seed: int | None, timeseries: bool, limit: tuple[int, str]) -> Result:
    """:func:`run` with the memory limit resolved: (bytes, where it comes from)."""
    sc = _as_scenario(scenario)
    if seed is not None:
        seed = as_seed(seed)
        if not 0 <= seed <= MAX_SEED:
            raise ScenarioError(f"seed: {int_text(seed)} is out of range; accepted: an integer in [0, {MAX_SEED}]")
    if not isinstance(timeseries, bool):
        raise ScenarioError(f"timeseries: expected true or false; got {timeseries!r}")
    payload = sc.to_json()
    try:
        summary_json, columns, events, link_queues = _core.run(payload, seed, timeseries, limit[0], limit[1])
    except ValueError as exc:
        raise sc._error(exc) from None
    result = Result(json.loads(summary_json), columns, scenario=sc, events=events, link_queues=link_queues)
    for line in result.warnings:
        warnings.warn(line, CcsimWarning, stacklevel=2)
    return result


class CcsimWarning(UserWarning):
    """A condition of a run worth knowing that is not an error (see :attr:`Result.warnings`)."""


def as_seed(seed: object) -> int:
    """``seed`` as an int, or :class:`ScenarioError` if it is not an integer (bools included)."""
    if isinstance(seed, bool):
        raise ScenarioError(f"seed: expected an integer; got {_short_repr(seed)}")
    try:
        return operator.index(seed)
    except TypeError:
        raise ScenarioError(f"seed: expected an integer; got {_short_repr(seed)}") from None


def _as_scenario(scenario: ScenarioLike) -> Scenario:
    if isinstance(scenario, Scenario):
        return scenario
    if isinstance(scenario, (str, os.PathLike)):
        return load(scenario)
    if isinstance(scenario, Mapping):
        return Scenario.from_dict(scenario)
    raise TypeError(
        "run() expects a Scenario, a dict or the path of a .toml file; "
        f"got {type(scenario).__name__}"
    )


class Result:
    """The outcome of one simulation run.

    * :attr:`summary` - pandas DataFrame, one row per flow (:data:`FLOW_COLUMNS`)
    * :attr:`timeseries` - pandas DataFrame in long format, one row per
      (sample time, flow) (:data:`TIMESERIES_COLUMNS`); ``cc`` is categorical
    * :attr:`bottleneck` - dict of bottleneck statistics
    * :meth:`to_dict` - the run summary exactly as the core reported it
      (what ``ccsim run --json`` prints)
    """

    def __init__(
        self,
        summary: Mapping[str, Any],
        timeseries: Mapping[str, list] | None = None,
        *,
        scenario: Scenario | None = None,
        events: Mapping[str, list] | None = None,
        link_queues: Mapping[str, list] | None = None,
    ) -> None:
        self._summary: dict[str, Any] = copy.deepcopy(dict(summary))
        self._columns: dict[str, list] = dict(timeseries or {})
        self._events: dict[str, list] = dict(events or {c: [] for c in EVENT_COLUMNS})
        self._link_queues: dict[str, list] = dict(link_queues or {c: [] for c in LINK_QUEUE_COLUMNS})
        #: The scenario that was run (as given, not normalised), if known.
        self.scenario = scenario

    # -- scalar fields -----------------------------------------------------------------

    @property
    def seed(self) -> int:
        return self._summary["seed"]

    @property
    def sim_seconds(self) -> float:
        return self._summary["sim_seconds"]

    @property
    def events(self) -> int:
        return self._summary["events"]

    @property
    def wall_seconds(self) -> float:
        return self._summary["wall_seconds"]

    @property
    def total_throughput_mbps(self) -> float:
        return self._summary["total_throughput_mbps"]

    @property
    def jain_index(self) -> float:
        return self._summary["jain_index"]

    @property
    def bottleneck(self) -> dict[str, Any]:
        """Bottleneck statistics (rate, delay, buffer, drops, utilization, queue ...)."""
        return copy.deepcopy(self._summary.get("bottleneck", {}))

    @property
    def warnings(self) -> list[str]:
        """One line each: conditions worth knowing that are not errors, e.g. a flow that its
        own access link, not the bottleneck, limited. :func:`run` also issues each as a
        :class:`ccsim.CcsimWarning`."""
        return list(self._summary.get("warnings", []) or [])

    @property
    def network(self) -> str:
        """``"dumbbell"`` or ``"wireless"``."""
        return self._summary.get("network", "dumbbell")

    @property
    def wireless(self) -> dict[str, Any]:
        """The resolved ``[wireless]`` settings of a wireless run (empty for a dumbbell)."""
        return copy.deepcopy(self._summary.get("wireless", {}))

    @cached_property
    def links(self) -> pd.DataFrame:
        """One row per link direction that carried packets (``id`` such as ``"r1->r2"``, rate,
        delay, buffer, packets in and out, drops, random losses, utilization, queue and
        queueing delay); empty for a wireless run."""
        import pandas as pd

        rows = self._summary.get("links", []) or []
        df = pd.DataFrame.from_records(rows)
        for col in ("rate_mbps", "queue_delay_mean_ms", "queue_delay_p95_ms"):
            if col in df.columns:
                df[col] = pd.to_numeric(df[col], errors="coerce").astype("float64")
        return df

    @cached_property
    def link_queues(self) -> pd.DataFrame:
        """The queue of every link direction with a buffer, every sample interval, in long
        format (:data:`LINK_QUEUE_COLUMNS`): ``time_s``, ``link`` (categorical, e.g.
        ``"r1->r2"``), ``queue_pkts`` and ``queue_bytes`` waiting (the packet in service not
        counted). Empty for a wireless run."""
        import pandas as pd

        cols = {c: self._link_queues.get(c, []) for c in LINK_QUEUE_COLUMNS}
        cols = {c: _unpack(v, "float64" if c == "time_s" else "int64") if isinstance(v, bytearray) else v
                for c, v in cols.items()}
        df = pd.DataFrame(cols)
        df["time_s"] = df["time_s"].astype("float64")
        df["link"] = pd.Categorical(df["link"])
        for c in ("queue_pkts", "queue_bytes"):
            df[c] = df[c].astype("int64")
        return df

    @cached_property
    def stations(self) -> pd.DataFrame:
        """Per-station MAC and host counters of a run with Wi-Fi (the ``[wireless]`` line, or
        ``[[wifi]]`` lines, whose rows also give the station's ``medium`` and ``node``), one
        row per station (attempts, successes, ACK timeouts, retry/queue/host drops, collisions
        at the receiver, frame errors, CPU utilization); empty for a network without Wi-Fi."""
        import pandas as pd

        return pd.DataFrame.from_records(self._summary.get("stations", []))

    @property
    def flows(self) -> list[dict[str, Any]]:
        """Per-flow summaries as a list of dicts (same content as :attr:`summary`)."""
        return copy.deepcopy(self._summary.get("flows", []))

    # -- tables -----------------------------------------------------------------------

    @cached_property
    def summary(self) -> pd.DataFrame:
        """One row per flow with the per-flow summary columns."""
        import pandas as pd

        flows = self._summary.get("flows", [])
        present = {k for f in flows for k in f}
        columns = [c for c in FLOW_COLUMNS if c in present or not flows]
        columns += sorted(present - set(columns))
        df = pd.DataFrame.from_records(flows, columns=columns)
        for col in df.columns:
            if col in _FLOAT_FLOW_COLUMNS:
                df[col] = pd.to_numeric(df[col], errors="coerce").astype("float64")
            elif df[col].dtype == object and col != "cc":
                df[col] = _numeric_if_possible(df[col])
        return df

    @cached_property
    def timeseries(self) -> pd.DataFrame:
        """Long-format time series, one row per (sample time, flow)."""
        import numpy as np
        import pandas as pd

        cols = self._columns
        if not any(_rows(v) for v in cols.values()):
            # No rows (a run without time series, or with no TCP flow): the usual columns,
            # with the types they have when there are rows.
            return pd.DataFrame({c: pd.Series(dtype=_EMPTY_TIMESERIES_DTYPES.get(c, "float64"))
                                 for c in TIMESERIES_COLUMNS})
        order = [c for c in TIMESERIES_COLUMNS if c in cols] + [
            c for c in cols if c not in TIMESERIES_COLUMNS
        ]
        lengths = {_rows(cols[c]) for c in order}
        if len(lengths) > 1:
            raise ValueError(
                "time-series columns from the core have different lengths: "
                + ", ".join(f"{c}={_rows(cols[c])}" for c in order)
            )
        data: dict[str, Any] = {}
        for name in order:
            values = cols[name]
            if name == "cc":
                data[name] = pd.Categorical(values)
                continue
            if isinstance(values, bytearray):
                data[name] = _unpack(values, _EMPTY_TIMESERIES_DTYPES.get(name, "float64"))
                continue
            arr = np.asarray(values)
            if arr.dtype == object or (name == "time_s" and arr.dtype.kind != "f"):
                try:
                    arr = np.asarray(values, dtype="float64")
                except (TypeError, ValueError):
                    pass
            data[name] = arr
        return pd.DataFrame(data)

    @cached_property
    def cc_events(self) -> pd.DataFrame:
        """Algorithm events, one row each (:data:`EVENT_COLUMNS`): e.g. ``rtprop_update``
        (value = new RTprop ms, value2 = the RTT sample ms that triggered it) or
        ``forced_expire``. Empty for algorithms that record none. A run keeps at most
        1,000,000 events: past that, one last row of kind ``truncated`` (at the time, flow
        and algorithm of the first event left out) has ``value`` = the number left out."""
        import pandas as pd

        cols = {c: self._events.get(c, []) for c in EVENT_COLUMNS}
        cols = {c: _unpack(v, "int64" if c == "flow" else "float64") if isinstance(v, bytearray) else v
                for c, v in cols.items()}
        df = pd.DataFrame(cols)
        df["time_s"] = df["time_s"].astype("float64")
        df["value"] = df["value"].astype("float64")
        df["value2"] = df["value2"].astype("float64")
        return df

    # -- export -----------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The run summary as reported by the core (identical to ``ccsim run --json``)."""
        return copy.deepcopy(self._summary)

    def to_json(self, indent: int | None = None) -> str:
        return json.dumps(self._summary, indent=indent)

    def to_parquet(self, directory: str | os.PathLike) -> Path:
        """Write ``summary.json``, ``flows.parquet``, ``timeseries.parquet``,
        ``cc_events.parquet`` and (wired networks) ``links.parquet`` and ``link_queues.parquet`` into ``directory``
        (created if needed) and return its path."""
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        (out / "summary.json").write_text(self.to_json(indent=2) + "\n", encoding="utf-8")
        self.summary.to_parquet(out / "flows.parquet", engine="pyarrow", index=False)
        self.timeseries.to_parquet(out / "timeseries.parquet", engine="pyarrow", index=False)
        self.cc_events.to_parquet(out / "cc_events.parquet", engine="pyarrow", index=False)
        if self._summary.get("links"):
            self.links.to_parquet(out / "links.parquet", engine="pyarrow", index=False)
            self.link_queues.to_parquet(out / "link_queues.parquet", engine="pyarrow", index=False)
        return out

    def plot(self, path: str | os.PathLike | None = None) -> Figure:
        """Delivery rate and cwnd per flow over time (two stacked panels).

        Saves a PNG to ``path`` when given; returns the matplotlib Figure.
        """
        from .plots import plot_throughput_cwnd

        return plot_throughput_cwnd(self, path)

    def __repr__(self) -> str:
        n = len(self._summary.get("flows", []))
        return (
            f"<ccsim.Result seed={self._summary.get('seed')} flows={n} "
            f"sim_seconds={self._summary.get('sim_seconds')} "
            f"total_throughput_mbps={self._summary.get('total_throughput_mbps')}>"
        )


def _rows(values: Any) -> int:
    """Rows of a column: a list, or a bytearray of 8-byte numbers from the core."""
    return len(values) // 8 if isinstance(values, bytearray) else len(values)


def _unpack(values: bytearray, dtype: str):
    """A column packed by the core (native float64 or int64) as a numpy array, without a copy."""
    import numpy as np

    return np.frombuffer(values, dtype=dtype)


def _numeric_if_possible(series: pd.Series) -> pd.Series:
    """Object columns holding only numbers and None become float; others stay."""
    import pandas as pd

    non_null = series.dropna()
    if len(non_null) and not all(
        isinstance(v, (int, float)) and not isinstance(v, bool) for v in non_null
    ):
        return series
    if not len(non_null) and len(series):
        return series.astype("float64")
    return pd.to_numeric(series, errors="coerce")
