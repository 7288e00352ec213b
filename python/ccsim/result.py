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

from . import _core, schema
from .scenario import MAX_SEED, Scenario, ScenarioError, _short_repr, int_text, load

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from matplotlib.figure import Figure

# numpy and pandas are imported lazily (in the methods that build tables) so
# that `ccsim run` and `import ccsim` stay quick when no DataFrame is needed.

__all__ = ["FLOW_COLUMNS", "TIMESERIES_COLUMNS", "CcsimWarning", "Result", "run"]

# Every table's columns, types and units come from the engine's schema (ccsim.schema).

#: Per-flow summary columns, in display order (``Result.summary``).
FLOW_COLUMNS: tuple[str, ...] = schema.columns("flows")

#: Time-series columns (``Result.timeseries``), one row per (sample time, flow).
TIMESERIES_COLUMNS: tuple[str, ...] = schema.columns("timeseries")

#: Link-queue columns (``Result.link_queues``), one row per (sample time, link direction).
LINK_QUEUE_COLUMNS: tuple[str, ...] = schema.columns("link_queues")

#: Algorithm-event columns (``Result.cc_events``), one row per event.
EVENT_COLUMNS: tuple[str, ...] = schema.columns("cc_events")


def _summary_text(summary: Mapping[str, Any]) -> str:
    """``summary.json``'s text: the summary indented by two spaces, except that a list of
    records (flows, links, stations, ...) has one record per line. The same JSON as
    ``json.dumps(summary, indent=2)``, readable a flow to a line, and written by the C encoder:
    100,000 flows in 1.2 s instead of 2.9 s."""
    parts = []
    for k, v in summary.items():
        key = json.dumps(k)
        if type(v) is list and v and all(type(x) is dict for x in v):
            rows = ",\n".join(["    " + json.dumps(x) for x in v])
            parts.append(f"  {key}: [\n{rows}\n  ]")
        else:
            # json.dumps writes a newline inside a string as \n, so every newline is layout.
            parts.append(f"  {key}: " + json.dumps(v, indent=2).replace("\n", "\n  "))
    return "{\n" + ",\n".join(parts) + "\n}" if parts else "{}"


def _tree_copy(x: Any) -> Any:
    """A deep copy of a tree of dicts, lists and tuples over strings and numbers (a run summary):
    what :func:`copy.deepcopy` gives for it, about three times faster (no memo; a summary shares
    no parts). Anything else is handed to :func:`copy.deepcopy`."""
    t = type(x)
    if t is dict:
        return {k: _tree_copy(v) for k, v in x.items()}
    if t is list:
        return [_tree_copy(v) for v in x]
    if t is str or t is float or t is int or t is bool or x is None:
        return x
    if t is tuple:
        return tuple(_tree_copy(v) for v in x)
    return copy.deepcopy(x)


ScenarioLike = Scenario | Mapping[str, Any] | str | os.PathLike


def run(
    scenario: ScenarioLike,
    seed: int | None = None,
    *,
    timeseries: bool = True,
    memory_limit: int | str | None = None,
    pcap: str | os.PathLike | None = None,
    pcap_links: list[str] | None = None,
    pcap_snaplen: int = 128,
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

    ``pcap`` (a folder, created if missing) writes a packet capture of each link direction
    or Wi-Fi hop in ``pcap_links`` (ids such as ``"r1->r2"``; default: the bottleneck, or
    else the slowest direction of each flow's path, or its first Wi-Fi hop if it has no
    direction with a rate) as ``<from>-<to>.pcap``: the packets offered to the direction, or
    those the hop's first station sends the second over the air (once each, at its first
    transmission), with synthetic Ethernet, IPv4 and TCP or UDP headers, frames cut to
    ``pcap_snaplen`` bytes (see docs/model.md). :attr:`Result.pcap_files` lists them.
    """
    from . import limits

    return _run(scenario, seed, timeseries, limits.resolve(memory_limit), pcap, pcap_links, pcap_snaplen)


def _run(
    scenario: ScenarioLike,
    seed: int | None,
    timeseries: bool,
    limit: tuple[int, str],
    pcap: str | os.PathLike | None = None,
    pcap_links: list[str] | None = None,
    pcap_snaplen: int = 128,
) -> Result:
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
        if pcap_links is not None and (isinstance(pcap_links, str) or not all(isinstance(x, str) for x in pcap_links)):
            raise ScenarioError(f"pcap_links: expected a list of link directions such as [\"r1->r2\"]; got {pcap_links!r}")
        if isinstance(pcap_snaplen, bool) or not isinstance(pcap_snaplen, int) or not 14 <= pcap_snaplen <= 65535:
            raise ScenarioError(f"pcap_snaplen: expected an integer in [14, 65535]; got {pcap_snaplen!r}")
        pcap_dir = None if pcap is None else os.fspath(pcap)
        summary_json, columns, events, link_queues, pcaps = _core.run(
            payload, seed, timeseries, limit[0], limit[1], pcap_dir, pcap_links, pcap_snaplen
        )
    except _core.AlgorithmError as exc:
        from .cc import user_error

        raise user_error(exc, sc.source) from exc.__cause__
    except ValueError as exc:
        raise sc._error(exc) from None
    result = Result(json.loads(summary_json), columns, scenario=sc, events=events, link_queues=link_queues, _own=True)
    result.pcap_files = {link: Path(path) for link, path, _ in pcaps}
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
        _own: bool = False,
    ) -> None:
        # `_own`: the summary is a fresh dict nobody else holds (:func:`run`'s, just parsed), so
        # it is kept as it is; 100,000 flows' summary takes seconds to copy.
        self._summary: dict[str, Any] = summary if _own and type(summary) is dict else _tree_copy(dict(summary))
        self._columns: dict[str, list] = dict(timeseries or {})
        self._events: dict[str, list] = dict(events or {c: [] for c in EVENT_COLUMNS})
        self._link_queues: dict[str, list] = dict(link_queues or {c: [] for c in LINK_QUEUE_COLUMNS})
        #: The scenario that was run (as given, not normalised), if known.
        self.scenario = scenario
        #: The packet captures written (``run(..., pcap=DIR)``): link direction -> file.
        self.pcap_files: dict[str, Path] = {}

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
        return _tree_copy(self._summary.get("bottleneck", {}))

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
        return _tree_copy(self._summary.get("wireless", {}))

    @cached_property
    def links(self) -> pd.DataFrame:
        """One row per link direction that carried packets (``id`` such as ``"r1->r2"``, rate,
        delay, buffer, packets in and out, drops, random losses, utilization, queue and
        queueing delay); empty for a wireless run."""
        import pandas as pd

        return _records_frame(self._summary.get("links", []) or [], schema.table("links"))

    @cached_property
    def link_queues(self) -> pd.DataFrame:
        """The queue of every link direction with a buffer, every sample interval, in long
        format (:data:`LINK_QUEUE_COLUMNS`): ``time_s``, ``link`` (categorical, e.g.
        ``"r1->r2"``), ``queue_pkts`` and ``queue_bytes`` waiting (the packet in service not
        counted). Empty for a wireless run."""
        import pandas as pd

        return _columns_frame(self._link_queues, schema.table("link_queues"))

    @cached_property
    def stations(self) -> pd.DataFrame:
        """Per-station MAC and host counters of a run with Wi-Fi (the ``[wireless]`` line, or
        ``[[wifi]]`` lines, whose rows also give the station's ``medium`` and ``node``), one
        row per station (attempts, successes, ACK timeouts, retry/queue/host drops, collisions
        at the receiver, frame errors, CPU utilization); empty for a network without Wi-Fi."""
        return _records_frame(self._summary.get("stations", []) or [], schema.table("stations"))

    @cached_property
    def air_hops(self) -> pd.DataFrame:
        """One row per hop of a Wi-Fi medium that sent data frames (``id`` such as ``"ap->sta"``,
        the ``[[wifi]]`` entry's index ``medium`` except on a ``[wireless]`` line): IP packets
        sent over it (each once, as its capture has them), transmissions with MAC retries,
        frames delivered, retry drops. Empty for a network without Wi-Fi."""
        return _records_frame(self._summary.get("air_hops", []) or [], schema.table("air_hops"))

    @property
    def flows(self) -> list[dict[str, Any]]:
        """Per-flow summaries as a list of dicts (same content as :attr:`summary`)."""
        return _tree_copy(self._summary.get("flows", []))

    # -- tables -----------------------------------------------------------------------

    @cached_property
    def summary(self) -> pd.DataFrame:
        """One row per flow with the per-flow summary columns."""
        flows = self._summary.get("flows", [])
        return _records_frame(flows, schema.table("line_flows" if self.network == "wireless" else "flows"))

    @cached_property
    def timeseries(self) -> pd.DataFrame:
        """Long-format time series, one row per (sample time, flow)."""
        import numpy as np
        import pandas as pd

        return _columns_frame(self._columns, schema.table("timeseries"))

    @cached_property
    def cc_events(self) -> pd.DataFrame:
        """Algorithm events, one row each (:data:`EVENT_COLUMNS`): e.g. ``rtprop_update``
        (value = new RTprop ms, value2 = the RTT sample ms that triggered it) or
        ``forced_expire``. Empty for algorithms that record none. A run keeps at most
        1,000,000 events: past that, one last row of kind ``truncated`` (at the time, flow
        and algorithm of the first event left out) has ``value`` = the number left out."""
        import pandas as pd

        return _columns_frame(self._events, schema.table("cc_events"))

    # -- export -----------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The run summary as reported by the core (identical to ``ccsim run --json``); a copy,
        the caller's to change."""
        return _tree_copy(self._summary)

    def to_json(self, indent: int | None = None) -> str:
        return json.dumps(self._summary, indent=indent)

    def to_parquet(self, directory: str | os.PathLike) -> Path:
        """Write ``summary.json``, ``flows.parquet``, ``timeseries.parquet``,
        ``cc_events.parquet`` and (wired networks) ``links.parquet`` and ``link_queues.parquet`` into ``directory``
        (created if needed) and return its path."""
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        (out / "summary.json").write_text(_summary_text(self._summary) + "\n", encoding="utf-8")
        import pyarrow.parquet as pq

        flows = "line_flows" if self.network == "wireless" else "flows"
        tables = [("flows", self.summary, flows), ("timeseries", self.timeseries, "timeseries"),
                  ("cc_events", self.cc_events, "cc_events")]
        if self._summary.get("links"):
            tables += [("links", self.links, "links"), ("link_queues", self.link_queues, "link_queues")]
        for file, df, table in tables:
            pq.write_table(schema.arrow(df, table), out / f"{file}.parquet")
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


def _records_frame(records: list[Mapping[str, Any]], table: schema.Table) -> pd.DataFrame:
    """Records of a schema table as a DataFrame: the table's columns in its order (those no
    record has left out, unless there are no records), then any other keys in order of
    appearance (e.g. the emulator's own); float columns float64 even when all null, others
    numeric where they hold only numbers."""
    import pandas as pd

    present: dict[str, None] = {}
    for r in records:
        present.update(dict.fromkeys(r))
    columns = [c for c in table.names if c in present or not records]
    columns += [k for k in present if k not in table]
    df = pd.DataFrame.from_records(records, columns=columns)
    for col in df.columns:
        kind = table.column(col).type if col in table else None
        if kind == "float":
            df[col] = pd.to_numeric(df[col], errors="coerce").astype("float64")
        elif df[col].dtype == object and kind not in ("str", "category", "list[str]"):
            df[col] = _numeric_if_possible(df[col])
    return df


def _columns_frame(cols: Mapping[str, Any], table: schema.Table) -> pd.DataFrame:
    """A column table from the core (numeric columns packed in bytearrays, strings in lists)
    as a DataFrame with the schema's columns and types; any other column the producer gave
    (e.g. the emulator's) follows."""
    import numpy as np
    import pandas as pd

    if not any(_rows(v) for v in cols.values()):
        # No rows (a run without time series, or with nothing to report): the usual columns,
        # with the types they have when there are rows.
        return pd.DataFrame({c.name: pd.Series(dtype=c.dtype) for c in table.columns})
    order = [c for c in table.names if c in cols] + [c for c in cols if c not in table]
    lengths = {_rows(cols[c]) for c in order}
    if len(lengths) > 1:
        raise ValueError(
            f"{table.name} columns from the core have different lengths: "
            + ", ".join(f"{c}={_rows(cols[c])}" for c in order)
        )
    data: dict[str, Any] = {}
    for name in order:
        values = cols[name]
        dtype = table.column(name).dtype if name in table else None
        if dtype == "category":
            data[name] = pd.Categorical(values)
        elif isinstance(values, bytearray):
            data[name] = _unpack(values, dtype or "float64")
        else:
            arr = np.asarray(values)
            # A numeric column given as a list (e.g. by the emulator, with None for "no
            # value") becomes float; a string column stays strings and None.
            if dtype != "object" and (arr.dtype == object or (dtype == "float64" and arr.dtype.kind != "f")):
                try:
                    arr = np.asarray(values, dtype="float64")
                except (TypeError, ValueError):
                    pass
            data[name] = arr
    return pd.DataFrame(data)


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
