"""Plots of a run (matplotlib, Agg canvas; no pyplot, so no global backend change)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

if TYPE_CHECKING:  # pragma: no cover
    from .result import Result

__all__ = ["plot_throughput_cwnd"]

# Above this many flows the legend would hide the data: draw it outside in columns.
_LEGEND_INSIDE_MAX = 8


def plot_throughput_cwnd(result: Result, path: str | os.PathLike | None = None) -> Figure:
    """Two stacked panels sharing the time axis: per-flow delivery rate (Mbps)
    and per-flow congestion window (packets).  Saved as PNG to ``path`` if given."""
    ts = result.timeseries
    fig = Figure(figsize=(10, 6.5), layout="constrained")
    FigureCanvasAgg(fig)
    ax_rate, ax_cwnd = fig.subplots(2, 1, sharex=True)

    if len(ts):
        for flow_id, rows in ts.groupby("flow", sort=True, observed=True):
            rows = rows.sort_values("time_s")
            cc = str(rows["cc"].iloc[0]) if "cc" in rows else "?"
            label = f"flow {flow_id} ({cc})"
            if "delivery_rate_mbps" in rows:
                ax_rate.plot(rows["time_s"], rows["delivery_rate_mbps"], lw=1.0, label=label)
            if "cwnd_pkts" in rows:
                ax_cwnd.plot(rows["time_s"], rows["cwnd_pkts"], lw=1.0, label=label)
    else:
        for ax in (ax_rate, ax_cwnd):
            ax.text(0.5, 0.5, "no time-series samples", ha="center", va="center",
                    transform=ax.transAxes, color="0.4")

    bn = result.bottleneck
    rate = bn.get("rate_mbps")
    if isinstance(rate, (int, float)) and rate > 0:
        ax_rate.axhline(rate, color="0.3", ls="--", lw=0.8, label=f"bottleneck {rate:g} Mbps")

    ax_rate.set_ylabel("delivery rate (Mbps)")
    ax_cwnd.set_ylabel("cwnd (packets)")
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
            fig.legend(handles, labels, loc="outside right upper", fontsize="x-small",
                       ncols=max(1, (len(labels) + 29) // 30))

    title = _title(result)
    if title:
        fig.suptitle(title, fontsize="medium")

    if path is not None:
        out = Path(path)
        fig.savefig(out, format="png", dpi=120)
    return fig


def _title(result: Result) -> str:
    d = result.to_dict()
    bn = d.get("bottleneck", {})
    parts = []
    if bn:
        parts.append(
            f"bottleneck {bn.get('rate_mbps', '?'):g} Mbps, {bn.get('delay_ms', '?'):g} ms, "
            f"{bn.get('buffer_pkts', '?')} pkt buffer"
            if all(isinstance(bn.get(k), (int, float)) for k in ("rate_mbps", "delay_ms"))
            else "bottleneck"
        )
    if "seed" in d:
        parts.append(f"seed {d['seed']}")
    return " | ".join(parts)
