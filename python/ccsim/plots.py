"""Plots of a run (matplotlib, Agg canvas; no pyplot, so no global backend change)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from .result import Result

__all__ = ["MAX_PLOTTED_FLOWS", "active_only", "plot_throughput_cwnd"]

# Above this many flows the legend would hide the data: draw it outside in columns.
_LEGEND_INSIDE_MAX = 8
#: The plot draws the lines of at most this many flows (the lowest ids) and says so in its
#: legend's title. A flow's lines and legend entry cost 40-60 KB and 10-20 ms to draw: with
#: 20,000 flows `ccsim run --out` took 1.26 GB and 404 s, for a plot nobody could read, and
#: takes 0.47 GB and 32 s with at most 50 (bench/results/flow_memory.md).
MAX_PLOTTED_FLOWS = 50


def plot_throughput_cwnd(result: Result, path: str | os.PathLike | None = None) -> Figure:
    """Two stacked panels sharing the time axis: per-flow delivery rate (Mbps)
    and per-flow congestion window (packets), for at most :data:`MAX_PLOTTED_FLOWS` flows
    (the lowest ids; the legend's title says how many of how many).  Saved as PNG to ``path`` if given."""
    import pandas as pd

    ts = result.timeseries
    n_series = ts["flow"].nunique() if len(ts) else 0
    if n_series > MAX_PLOTTED_FLOWS:
        drawn = ts["flow"].drop_duplicates().nsmallest(MAX_PLOTTED_FLOWS)
        ts = ts[ts["flow"].isin(drawn)]
    if len(ts):
        flows = result._summary.get("flows", [])  # read only (Result.flows would copy every flow)
        ts = active_only(ts, pd.DataFrame.from_records(flows, columns=["id", "start_s", "end_s"])
                         .rename(columns={"id": "flow"}))
    fig = Figure(figsize=(10, 6.5), layout="constrained")
    FigureCanvasAgg(fig)
    ax_rate, ax_cwnd = fig.subplots(2, 1, sharex=True)

    # A UDP flow has no window: with no TCP flow at all, the lower panel shows each flow's
    # sending queue (a wireless run's interface queue) instead.
    windowed = len(ts) and (ts["cc"].astype(str) != "udp").any()
    lower, lower_label = ("cwnd_pkts", "cwnd (packets)") if windowed or not len(ts) else (
        "queue_pkts", "sender's queue (packets)")
    if len(ts):
        for flow_id, rows in ts.groupby("flow", sort=True, observed=True):
            rows = rows.sort_values("time_s")
            cc = str(rows["cc"].iloc[0]) if "cc" in rows else "?"
            label = f"flow {flow_id} ({cc})"
            # Keep the colour of a flow the same in both panels.
            (line,) = ax_rate.plot(rows["time_s"], rows["delivery_rate_mbps"], lw=1.0, label=label)
            if not (windowed and cc == "udp"):
                ax_cwnd.plot(rows["time_s"], rows[lower], lw=1.0, label=label, color=line.get_color())
    else:
        for ax in (ax_rate, ax_cwnd):
            ax.text(0.5, 0.5, "no time-series samples", ha="center", va="center",
                    transform=ax.transAxes, color="0.4")

    bn = result.bottleneck
    rate = bn.get("rate_mbps")
    if isinstance(rate, (int, float)) and rate > 0:
        ax_rate.axhline(rate, color="0.3", ls="--", lw=0.8, label=f"bottleneck {rate:g} Mbps")

    ax_rate.set_ylabel("delivery rate (Mbps)")
    ax_cwnd.set_ylabel(lower_label)
    ax_cwnd.set_xlabel("time (s)")
    ax_rate.set_ylim(bottom=0)
    ax_cwnd.set_ylim(bottom=0)
    for ax in (ax_rate, ax_cwnd):
        ax.grid(True, alpha=0.3)

    handles, labels = ax_rate.get_legend_handles_labels()
    if handles:
        n_flows = ts["flow"].nunique() if len(ts) else 0
        if n_flows <= _LEGEND_INSIDE_MAX:
            ax_rate.legend(loc="best", fontsize="small")
        else:
            capped = f"the first {MAX_PLOTTED_FLOWS} of {n_series:,} flows" if n_series > MAX_PLOTTED_FLOWS else None
            fig.legend(handles, labels, loc="outside right upper", fontsize="x-small",
                       ncols=max(1, (len(labels) + 29) // 30), title=capped, title_fontsize="small")

    title = _title(result)
    if title:
        fig.suptitle(title, fontsize="medium")

    if path is not None:
        out = Path(path)
        fig.savefig(out, format="png", dpi=120)
    return fig


def _title(result: Result) -> str:
    d = result._summary  # read only: to_dict() would copy every flow's summary
    bn = d.get("bottleneck", {})
    parts = []
    if bn:
        parts.append(
            f"bottleneck {bn.get('rate_mbps', '?'):g} Mbps, {bn.get('delay_ms', '?'):g} ms, "
            f"{bn.get('buffer_pkts', '?')} pkt buffer"
            if all(isinstance(bn.get(k), (int, float)) for k in ("rate_mbps", "delay_ms"))
            else "bottleneck"
        )
    w = d.get("wireless", {})
    if w:
        parts.append(f"802.11 line, {w.get('hops')} hops, {w.get('profile')}, {w.get('environment')}")
    if "seed" in d:
        parts.append(f"seed {d['seed']}")
    return " | ".join(parts)


def active_only(ts: pd.DataFrame, spans: pd.DataFrame) -> pd.DataFrame:
    """The rows of a time series taken while their flow was active.

    ``spans`` has one row per flow with ``start_s`` and ``end_s`` (a flow's summary), keyed
    by the columns it shares with ``ts`` (``flow``, and ``key`` for stored runs). A sample
    at time t covers (t - interval, t], so a flow's rows are those with
    start_s < t < end_s + interval: none before its start, none after it stopped.
    """
    import numpy as np

    on = [c for c in ("key", "flow") if c in spans.columns and c in ts.columns]
    if not len(ts) or not on:
        return ts
    times = np.unique(ts["time_s"].to_numpy(dtype="float64"))
    interval = float(np.min(np.diff(times))) if len(times) > 1 else float(times[0]) if len(times) else 0.0
    span = spans[on + ["start_s", "end_s"]].drop_duplicates(subset=on)
    merged = ts[on + ["time_s"]].merge(span, on=on, how="left", validate="many_to_one")
    t = merged["time_s"].to_numpy(dtype="float64")
    start = merged["start_s"].to_numpy(dtype="float64")
    end = merged["end_s"].to_numpy(dtype="float64")
    eps = 1e-9
    # A flow without a span (e.g. never started) keeps no row; NaN comparisons are False.
    keep = (t > start + eps) & (t < end + interval - eps)
    return ts[keep]
