"""Figures of the seed experiments, drawn on the papers' axes. Each function takes the
experiment's :class:`~ccsim.experiments.claims.Data` and a path stem, and writes PNG and SVG."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from ..plots import active_only  # noqa: E402
from .claims import Data, flow_means, totals  # noqa: E402

NAMES = {
    "newreno": "NewReno", "cubic": "CUBIC", "bbr": "BBR", "hd": "HD", "chd": "CHD", "cdg": "CDG", "ucc": "UCC",
    "bbr-expire": "BBR (forced expire)", "bbr-rtprop": "BBR (RTprop update)", "bbrplus": "BBR+",
    "bbr3": "BBRv3",
}


#: Algorithms a reproduction runs in place of the catalogue's (``ccsim reproduce --replace``):
#: the catalogue's name -> the legend text. Set by the reproduction while it draws.
REPLACED: dict[str, str] = {}


def _name(cc: str) -> str:
    if cc in REPLACED:
        return REPLACED[cc]
    return NAMES.get(cc, cc)


def _save(fig, stem: Path) -> None:
    stem.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(stem.with_suffix(".png"), dpi=120)
    fig.savefig(stem.with_suffix(".svg"))
    plt.close(fig)


def _err(ax, x, mean, ci95, label, **kw):
    """Means with error bars of the 95 % confidence interval of the mean over the seeds
    (ccsim.stats; none for a single seed)."""
    ax.errorbar(x, mean, yerr=ci95.fillna(0), marker="o", ms=4, capsize=3, lw=1.2, label=label, **kw)


def e1_fig6(d: Data, stem: Path) -> None:
    t = totals(d.runs, ["cc", "loss"])
    fig, ax = plt.subplots(figsize=(6, 4))
    for cc, g in t.groupby("cc", sort=False):
        g = g.sort_values("loss")
        _err(ax, g["loss"], g["mean"], g["ci95"], _name(cc))
    ax.set_xlabel("drop rate")
    ax.set_ylabel("total throughput of 2 flows (Mbps)")
    ax.set_title("Same algorithm on N1 and N2")
    ax.set_ylim(bottom=0)
    ax.legend()
    ax.grid(alpha=0.3)
    _save(fig, stem)


def e1_fig7(d: Data, stem: Path) -> None:
    f = flow_means(d.runs, ["cc", "loss"])
    f = f[f.flow == 1]
    fig, ax = plt.subplots(figsize=(6, 4))
    for cc, g in f.groupby("cc", sort=False):
        g = g.sort_values("loss")
        _err(ax, g["loss"], g["mean"], g["ci95"], f"N1 = {_name(cc)}")
    ax.set_xlabel("drop rate")
    ax.set_ylabel("NewReno (N2) throughput (Mbps)")
    ax.set_ylim(bottom=0)
    ax.legend()
    ax.grid(alpha=0.3)
    _save(fig, stem)


def e1_fig8(d: Data, stem: Path) -> None:
    f = flow_means(d.runs, ["cc", "loss"])
    t = totals(d.runs, ["cc", "loss"])
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for cc, g in f[f.flow == 0].groupby("cc", sort=False):
        g = g.sort_values("loss")
        _err(axes[0], g["loss"], g["mean"], g["ci95"], _name(cc))
    for cc, g in t.groupby("cc", sort=False):
        g = g.sort_values("loss")
        _err(axes[1], g["loss"], g["mean"], g["ci95"], f"{_name(cc)} + NewReno")
    axes[0].set_ylabel("throughput (Mbps)")
    axes[0].set_title("X (N1)")
    axes[1].set_title("total")
    for ax in axes:
        ax.set_xlabel("drop rate")
        ax.set_ylim(bottom=0)
        ax.legend()
        ax.grid(alpha=0.3)
    _save(fig, stem)


def e2(d: Data, stem: Path) -> None:
    f = flow_means(d.runs, ["buffer_bdp"])
    t = totals(d.runs, ["buffer_bdp"])
    x_cc = d.runs[d.runs.flow == 0]["cc"].iloc[0]
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for flow, label in [(0, _name(x_cc)), (1, "CUBIC")]:
        g = f[f.flow == flow].sort_values("buffer_bdp")
        _err(ax, g["buffer_bdp"], g["mean"], g["ci95"], label)
    t = t.sort_values("buffer_bdp")
    _err(ax, t["buffer_bdp"], t["mean"], t["ci95"], "total", ls="--", color="black")
    ax.set_xlabel("bottleneck buffer size (BDP)")
    ax.set_ylabel("throughput (Mbps)")
    ax.set_xticks(sorted(f["buffer_bdp"].unique()))
    ax.set_ylim(0, 10.5)
    ax.legend()
    ax.grid(alpha=0.3)
    _save(fig, stem)


def _first_seed(d: Data) -> pd.DataFrame:
    """The time series of the entry's first seed, while each flow was active."""
    key = d.runs.sort_values("seed")["key"].iloc[0]
    return _active(d, d.timeseries[d.timeseries.key == key])


def _active(d: Data, ts: pd.DataFrame) -> pd.DataFrame:
    """Rows of ``ts`` taken while their flow was active (none before its start or after
    its stop)."""
    return active_only(ts, d.runs[["key", "flow", "start_s", "end_s"]])


def _seed_title(ax, d: Data) -> None:
    """Say which seed a time-series figure shows when the entry ran several."""
    seeds = sorted(d.runs["seed"].unique())
    if len(seeds) > 1:
        ax.set_title(f"seed {seeds[0]} (one of {len(seeds)} runs: seeds {seeds[0]}-{seeds[-1]})",
                     fontsize="small")
    else:
        ax.set_title(f"seed {seeds[0]}", fontsize="small")


def e3_time(d: Data, stem: Path) -> None:
    ts = _first_seed(d)
    fig, ax = plt.subplots(figsize=(8, 3.8))
    _seed_title(ax, d)
    for flow, g in ts.groupby("flow"):
        ax.plot(g["time_s"], g["delivery_rate_mbps"], lw=1.0, label=_name(str(g["cc"].iloc[0])))
    ax.set_xlabel("time (s)")
    ax.set_ylabel("throughput (Mbps, 1 s bins)")
    ax.set_ylim(bottom=0)
    ax.legend()
    ax.grid(alpha=0.3)
    _save(fig, stem)


def e3_solo(d: Data, stem: Path) -> None:
    ts = d.timeseries
    fig, ax = plt.subplots(figsize=(8, 3.8))
    _seed_title(ax, d)
    for cc, g in d.runs[d.runs.seed == d.runs.seed.min()].groupby("cc"):
        s = _active(d, ts[ts.key == g["key"].iloc[0]])
        ax.plot(s["time_s"], s["delivery_rate_mbps"], lw=1.0, label=f"{_name(cc)} alone")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("throughput (Mbps, 1 s bins)")
    ax.set_ylim(bottom=0)
    ax.legend()
    ax.grid(alpha=0.3)
    _save(fig, stem)


def e3_rtprop(d: Data, stem: Path) -> None:
    ts = _first_seed(d)
    fig, (a1, a2) = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
    _seed_title(a1, d)
    for flow, g in ts.groupby("flow"):
        a1.plot(g["time_s"], g["delivery_rate_mbps"], lw=1.0, label=_name(str(g["cc"].iloc[0])))
    a1.set_ylabel("throughput (Mbps, 1 s bins)")
    a1.set_ylim(bottom=0)
    a1.legend()
    b = ts[ts.flow == 0]
    a2.plot(b["time_s"], b["srtt_ms"], lw=1.0, label="RTT (smoothed)")
    a2.plot(b["time_s"], b["rtprop_ms"], lw=1.2, label="RTprop")
    a2.set_xlabel("time (s)")
    a2.set_ylabel("ms")
    a2.legend()
    for ax in (a1, a2):
        ax.grid(alpha=0.3)
    _save(fig, stem)


def e5_mathis(d: Data, stem: Path) -> None:
    from .catalogue import mathis_mbps

    fig, ax = plt.subplots(figsize=(6, 4.2))
    link = 10.0 * 1448 / 1500
    for cc, g in d.runs.groupby("cc"):
        m = g.groupby("loss").agg(thr=("throughput_mbps", "mean"), rtt=("rtt_mean_ms", "mean")).reset_index()
        ax.plot(m["loss"], m["thr"], "o-", label=f"{_name(cc)} (ccsim)")
        if cc == "newreno":
            model = [min(link, mathis_mbps(1448, r / 1e3, p)) for p, r in zip(m["loss"], m["rtt"])]
            ax.plot(m["loss"], model, "k--", label="Mathis (MSS/RTT) sqrt(3/2p), capped at the link")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("random loss probability p")
    ax.set_ylabel("throughput (Mbps)")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3, which="both")
    _save(fig, stem)


def e5_cardwell(d: Data, stem: Path) -> None:
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for cc, g in d.runs.groupby("cc"):
        m = g.groupby("loss")["throughput_mbps"].mean()
        ax.plot(np.array(m.index) * 100, m.values, "o-", label=_name(cc))
    ax.set_xscale("log")
    ax.set_xlabel("loss rate (%)")
    ax.set_ylabel("goodput (Mbps)")
    ax.set_ylim(0, 105)
    ax.legend()
    ax.grid(alpha=0.3, which="both")
    _save(fig, stem)


def _e4_udp_means(d: Data) -> pd.DataFrame:
    g = d.runs.groupby(["environment", "hops", "rate_pps"])
    return pd.DataFrame({"thr": g["throughput_mbps"].mean(), "loss": g["loss_ratio"].mean()}).reset_index()


def e4_exp1(d: Data, stem: Path) -> None:
    """Figs. 4/5 (throughput vs input rate per hop count, each environment) and figs. 7/9 (loss
    ratio vs input rate, darkroom, with the paper's eq. 9 curves dashed)."""
    from ..models import loss_ratio

    u = _e4_udp_means(d)
    envs = sorted(u.environment.unique())
    fig, axes = plt.subplots(1, len(envs) + 1, figsize=(5 * (len(envs) + 1), 4))
    cmap = plt.get_cmap("viridis")
    hops = sorted(u.hops.unique())
    color = {n: cmap(i / max(len(hops) - 1, 1)) for i, n in enumerate(hops)}
    for ax, env in zip(axes, envs):
        for n in hops:
            g = u[(u.environment == env) & (u.hops == n)].sort_values("rate_pps")
            ax.plot(g.rate_pps, g.thr, marker="o", ms=3, color=color[n], label=f"{n} hop{'s' if n > 1 else ''}")
        ax.set_title(f"{env}: UDP CBR")
        ax.set_xlabel("input rate (packets/s)")
        ax.set_ylabel("throughput (Mbps)")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7)
    ax = axes[-1]
    dark = u[u.environment == "darkroom"] if "darkroom" in envs else u
    for n in hops:
        g = dark[dark.hops == n].sort_values("rate_pps")
        ax.plot(g.rate_pps, g["loss"], marker="o", ms=3, color=color[n], label=f"{n} (ccsim)")
        if n >= 2:
            w = np.geomspace(max(g.rate_pps.min(), 10), g.rate_pps.max(), 50)
            ax.plot(w, loss_ratio(w, n, clip=True), ls="--", lw=1, color=color[n])
    ax.set_xscale("log")
    ax.set_title("darkroom: loss ratio (dashed: paper's eq. 9)")
    ax.set_xlabel("input rate (packets/s)")
    ax.set_ylabel("packet loss ratio")
    ax.grid(alpha=0.3, which="both")
    _save(fig, stem)


def _e4_tcp_means(d: Data) -> pd.DataFrame:
    return flow_means(d.runs, ["environment", "cc", "hops"])


def e4_exp2(d: Data, stem: Path) -> None:
    """Fig. 6: TCP throughput vs hops on log-log axes, with ccsim's fits over 2..5 hops and the
    paper's eq. 7 and 8."""
    from .catalogue import E4_FIT_HOPS, E4_PAPER_FITS, _loglog_fit

    f = _e4_tcp_means(d)
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    styles = {"darkroom": "-", "indoor": ":"}
    for (env, cc), g in f.groupby(["environment", "cc"]):
        g = g.sort_values("hops")
        line = ax.errorbar(g.hops, g["mean"], yerr=g["std"], marker="o" if cc == "cubic" else "s", ms=4, capsize=3,
                           ls=styles.get(env, "-"), label=f"{_name(cc)}, {env}")
        sel = g[(g.hops >= E4_FIT_HOPS[0]) & (g.hops <= E4_FIT_HOPS[1])]
        if len(sel) >= 2:
            a, k, _ = _loglog_fit(sel.hops, sel["mean"])
            x = np.linspace(E4_FIT_HOPS[0], E4_FIT_HOPS[1], 20)
            ax.plot(x, a / x**k, lw=0.8, color=line[0].get_color(), alpha=0.6)
    for env, (a, k) in E4_PAPER_FITS.items():
        x = np.linspace(E4_FIT_HOPS[0], E4_FIT_HOPS[1], 20)
        ax.plot(x, a / x**k, ls="--", color="black" if env == "darkroom" else "grey", lw=1.2,
                label=f"paper {env}: {a:g} / n^{k:g}")
    _loglog_hops_axes(ax, sorted(f.hops.unique()))
    ax.legend(fontsize=7)
    _save(fig, stem)


def e4_model(d: Data, stem: Path) -> None:
    """The model of eq. 9-14 (approximation and exact root, paper's constants) against ccsim's
    CUBIC throughput (darkroom and indoor) vs hops, log-log."""
    from .. import models

    f = _e4_tcp_means(d)
    ns = np.arange(2, 8)
    curves = models.model_curves(ns)
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    ax.plot(curves.n, curves.bw_exact_mbps, "k-", label="model, eq. 13 solved exactly")
    ax.plot(curves.n, curves.bw_approx_mbps, "k--", label="model, eq. 13 approximated (log W_max held)")
    for env, g in f[f.cc == "cubic"].groupby("environment"):
        g = g.sort_values("hops")
        ax.errorbar(g.hops, g["mean"], yerr=g["std"], marker="o", ms=4, capsize=3, label=f"ccsim CUBIC, {env}")
    _loglog_hops_axes(ax, sorted(set(f.hops.unique()) | set(ns.tolist())))
    ax.legend(fontsize=7)
    _save(fig, stem)


def _loglog_hops_axes(ax, hops) -> None:
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("hops")
    ax.set_ylabel("throughput (Mbps)")
    ax.set_xticks(hops)
    ax.get_xaxis().set_major_formatter(matplotlib.ticker.ScalarFormatter())
    ax.get_xaxis().set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.grid(alpha=0.3, which="both")
