"""Type stub for the Rust extension module ``ccsim._core`` (crates/ccsim-py).

This is a thin layer: every argument and result crossing it is JSON text, except the
column tables (time series, algorithm events, link queues), which are returned as packed
bytearrays and lists; :func:`schema` describes every output.
Use the friendly wrappers in :mod:`ccsim` instead of calling it directly.
"""

from typing import Callable

__version__: str
#: Version of the simulation model (``ccsim_core::MODEL_VERSION``): bumped by any change to the
#: engine that alters a result of an existing scenario and seed.  Part of every stored run's key.
MODEL_VERSION: int
#: Built with the profile-guided optimisation (``pgo/build_backend.py``, ``pip install``): same
#: results, faster. False for ``maturin develop`` builds and ``CCSIM_PGO=0``.
BUILD_PGO: bool
#: A profile-guided build whose profile was recorded for other Rust sources (``pgo/train.py``
#: re-records it): still faster than none, less than a current profile.
BUILD_PGO_STALE: bool

def validate(scenario_json: str) -> str:
    """Validate a scenario given as JSON text (the structure of the TOML file).

    Returns the normalised scenario as JSON text, with defaults filled in and
    units kept as the given strings.

    Raises ``ValueError("<field path>: <problem>; got <value>; accepted: <what>")``
    on any invalid input, e.g.
    ``'flows[0].cc: unknown algorithm "cubicc"; accepted: newreno, cubic, bbr, ...'``
    (every algorithm of ``ccsim algorithms``).
    """

def resolve(scenario_json: str) -> str:
    """The scenario with every value resolved to numbers, as JSON (used by the emulation).

    ``duration_ns``, ``seed``, ``sample_interval_ns``, ``bottleneck`` (``rate_bps``,
    ``delay_ns``, ``buffer_pkts`` or ``buffer_bytes`` with ``bdp`` converted to packets,
    ``loss``, ``ack_loss``) and ``flows`` with ``count`` expanded (``group``, ``cc``,
    ``params``, ``access_rate_bps``, ``access_delay_ns``, ``start_ns``, ``stop_ns``,
    ``size_bytes`` and the merged ``tcp`` settings in ns/bytes).  Raises ``ValueError``
    exactly as :func:`validate` does.
    """

def run(
    scenario_json: str,
    seed: int | None = None,
    timeseries: bool = True,
    memory_limit: int | None = None,
    limit_text: str = "",
    pcap_dir: str | None = None,
    pcap_links: list[str] | None = None,
    pcap_snaplen: int = 128,
) -> tuple[str, dict[str, bytearray | list], dict[str, bytearray | list], dict[str, bytearray | list], list[tuple[str, str, int]]]:
    """Run one simulation and return ``(summary_json, timeseries_columns, event_columns,
    link_queue_columns, pcaps)``; ``pcaps`` lists the captures written into ``pcap_dir``
    (direction, file, packets), none without it.

    ``seed``, when given, overrides the scenario's ``seed``.  ``summary_json`` is one JSON
    object: the ``summary`` table of :func:`schema` (``line_summary`` for a ``[wireless]``
    line).  The three column tables are the ``timeseries``, ``cc_events`` and ``link_queues``
    tables of :func:`schema`, one entry per column in its order: ``int`` and ``float``
    columns as a ``bytearray`` of native int64 / float64 for ``numpy.frombuffer``, ``str``
    and ``category`` columns as lists of str (and None); floats are NaN where there is no
    value.

    ``timeseries=False`` records no time series (the summary is the same).  With
    ``memory_limit`` (bytes), a run whose estimate (:func:`estimate_memory`) exceeds it is
    refused with ``ValueError`` before anything is allocated, naming ``limit_text`` as the
    limit's origin, and a run whose queues outgrow it is stopped the same way.  The
    simulation runs without the GIL in chunks of about 20 ms of wall time; between chunks
    Ctrl-C raises ``KeyboardInterrupt``.

    Raises ``ValueError`` exactly as :func:`validate` does.
    """

def schema() -> str:
    """The output schema (``ccsim_core::output::schema``) as JSON: a list of tables ``{name,
    doc, columns: [{name, type, nullable, unit, doc}]}``, records first (``summary``,
    ``flows``, ``bottleneck``, ``links``, ``stations``, ``line_summary``, ``line_flows``),
    then the column tables (``timeseries``, ``cc_events``, ``link_queues``).  Read it through
    :mod:`ccsim.schema`."""

def estimate_memory(scenario_json: str, timeseries: bool = True) -> str:
    """The memory a run of the scenario needs, as JSON: ``total_bytes`` and its parts,
    ``flows``/``flow_bytes``, ``packets``/``packet_bytes``, ``timeseries_rows``/
    ``timeseries_bytes``, ``cc_event_rows``/``cc_event_bytes``."""

def algorithms() -> str:
    """JSON list of ``{name, summary, source, registered, params: [{name, default, unit, range, min, max, doc}]}``
    (``registered``: a Python algorithm, ccsim.register)."""

def qdiscs() -> str:
    """JSON list of ``{name, summary, source, can_mark, params: [{name, default, unit, range, min, max, doc}]}``."""

def emulate_link(config_json: str, on_tick: Callable[[], bool] | None = None) -> str:
    """Run the user-space bottleneck emulator (Linux only; needs root) and return its statistics.

    ``config_json`` names the two TUN devices (``sender``/``receiver``: ``{netns, device}``,
    the namespace file and the device inside it) and the link: ``rate_bps``, ``delay_ns``,
    ``buffer_pkts`` or ``buffer_bytes``, ``loss``, ``ack_loss``, ``seed``, ``mtu``, ``flows``
    (``[{port, access_delay_ns}]``), ``start_ns``/``end_ns`` (CLOCK_MONOTONIC: the statistics
    window and the end of the run) and ``sample_interval_ns``.  Blocks until ``end_ns``; about
    every 100 ms it handles signals (Ctrl-C raises ``KeyboardInterrupt`` and the devices are
    released) and calls ``on_tick()``, whose true result stops the run early.

    Returns JSON: ``bottleneck`` (the ``bottleneck`` table of :func:`schema`), ``flows`` (per-port packet
    counts, last the traffic of no known flow), ``queue_samples`` and ``emulator`` (how well it
    kept up: CPU time, hand-over lateness, errors).  Raises ``ValueError`` for a bad
    configuration and ``OSError`` when a device cannot be attached or read.
    """

# -- congestion controllers written in Python (ccsim.cc; crates/ccsim-py/src/pycc.rs) ----------

class AlgorithmError(ValueError):
    """A Python algorithm's hook failed; ``__cause__`` is the user's exception."""

class Sock:
    """The socket state a Python hook sees (the engine's SockState; docs/python_cc.md)."""

    now: int
    mss: int
    cwnd: int
    ssthresh: int
    cwnd_cnt: int
    cwnd_clamp: int
    pacing_rate: int
    cwr_request: bool
    ca_state: int
    packets_out: int
    sacked_out: int
    lost_out: int
    retrans_out: int
    delivered: int
    delivered_mstamp: int
    delivered_ce: int
    lost: int
    srtt: int
    min_rtt: int
    snd_una: int
    snd_nxt: int
    is_cwnd_limited: bool
    max_packets_out: int
    app_limited: int
    next_tx_time: int
    prior_cwnd: int
    initial_cwnd: int
    paced: bool
    lsndtime: int
    cwnd_usage_seq: int
    ts_tick: int
    ecn: bool
    loss_is_timeout: bool
    def packets_in_flight(self) -> int: ...
    def in_slow_start(self) -> bool: ...
    def cwnd_limited(self) -> bool: ...
    def slow_start(self, acked: int) -> int: ...
    def cong_avoid_ai(self, w: int, acked: int) -> None: ...
    def record(self, kind: str, value: float = ..., value2: float = ...) -> None: ...

class AckSample:
    pkts_acked: int
    rtt: int
    in_flight: int
    ts_val: int
    ts_ecr: int
    def owd_ticks(self) -> int: ...

class RateSample:
    prior_delivered: int
    prior_mstamp: int | None
    delivered: int
    prior_delivered_ce: int
    delivered_ce: int
    interval: int
    rtt: int
    losses: int
    acked_sacked: int
    prior_in_flight: int
    is_app_limited: bool
    is_retrans: bool
    is_ack_delayed: bool
    tx_in_flight: int
    prior_lost: int
    lost: int
    is_ece: bool

class SkbTx:
    in_flight: int
    lost: int
    is_app_limited: bool
    has_delivered_mstamp: bool

def register_cc(
    name: str,
    cls: type,
    params: list[tuple[str, float, str]],
    hooks: list[str],
    tag: str,
    summary: str = "",
    source: str = "",
    pacing: bool = False,
    needs_ecn: bool = False,
    ect1: bool = False,
) -> None:
    """Register a Python class as the algorithm ``name`` (use ccsim.register)."""

def unregister_cc(name: str) -> bool: ...
def registered_ccs() -> list[str]: ...
def trace_builtin(builtin: str) -> str:
    """Register ``<builtin>+trace``, the built-in with every hook call logged (tests)."""

def take_trace() -> list[tuple[int, int, str, int]]: ...
