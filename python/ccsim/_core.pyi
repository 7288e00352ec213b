"""Type stub for the Rust extension module ``ccsim._core`` (crates/ccsim-py).

This is a thin layer: every argument and result crossing it is JSON text,
except the time-series columns, which are returned as plain Python lists.
Use the friendly wrappers in :mod:`ccsim` instead of calling it directly.
"""

__version__: str

def validate(scenario_json: str) -> str:
    """Validate a scenario given as JSON text (the structure of the TOML file).

    Returns the normalised scenario as JSON text, with defaults filled in and
    units kept as the given strings.

    Raises ``ValueError("<field path>: <problem>; got <value>; accepted: <what>")``
    on any invalid input, e.g.
    ``"flows[0].cc: unknown algorithm 'cubicc'; accepted: newreno, cubic, bbr"``.
    """

def run(
    scenario_json: str, seed: int | None = None
) -> tuple[str, dict[str, list], dict[str, list]]:
    """Run one simulation and return ``(summary_json, timeseries_columns, event_columns)``.

    ``seed``, when given, overrides the scenario's ``seed``.  ``summary_json``
    is one JSON object (``seed``, ``sim_seconds``, ``events``, ``wall_seconds``,
    ``flows``, ``total_throughput_mbps``, ``jain_index``, ``bottleneck``).
    ``timeseries_columns`` maps each column name (``time_s``, ``flow``, ``cc``,
    ``delivery_rate_mbps`` (data (s)acked per interval), ``goodput_mbps``
    (cumulative-ACK advance per interval), ``bytes_acked``, ``cwnd_pkts``, ``srtt_ms``,
    ``rtprop_ms``, ``btlbw_mbps``, ``pacing_rate_mbps``, ``inflight_pkts``, ``rho``, ``queue_state``, ``shadow_wnd_pkts``,
    ``queue_pkts``, ``queue_bytes``) to an equal-length list, one row per
    (sample time, flow); floats are NaN where an algorithm lacks the quantity.
    The third item holds the algorithm events: ``time_s``, ``flow``, ``cc``,
    ``kind``, ``value``, ``value2``, one entry per event.

    Raises ``ValueError`` exactly as :func:`validate` does.
    """

def algorithms() -> str:
    """JSON list of ``{name, summary, source, params: [{name, default, unit, range, min, max, doc}]}``."""
