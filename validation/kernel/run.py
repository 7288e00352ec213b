#!/usr/bin/env python3
"""ccsim vs real Linux TCP (``ccsim emulate``) on the seed experiments' operating points. Root.

    python3 validation/kernel/run.py --docs docs/validation.md   # 18 points x 30 s, ~10 min
    python3 validation/kernel/run.py --quick                     # 3 points x 10 s, a smoke check

Every point is one ccsim scenario, run by the simulator and by the emulation (the kernel's
own reno/cubic/bbr between two network namespaces, ccsim's link emulator as the bottleneck),
with the same seed. Both use RACK loss detection (``[tcp] recovery = "rack"``), which is what
Linux does, so the emulation applies every setting of these scenarios. The grid:

- **E1** (seed 002, the E1 link): 2 flows of the same algorithm (NewReno, CUBIC, BBR),
  10 Mbps / 20 ms one way / 50-packet buffer, MSS 1000, random loss 0 and 1 %.
- **E2** (seed 003): BBR vs CUBIC, 10 Mbps / 40 ms base RTT, MSS 1448, buffers of 1, 2, 4,
  8 and 16 BDP.
- **Loss**: one flow of each algorithm, 10 Mbps / 40 ms / 1 BDP, random loss 0.1 % and 1 %.
- **E3** (seed 004): plain BBR against CUBIC, 100 Mbps / 40 ms / 10 BDP (``e3.py`` repeats it
  with many runs on each side, which one run per side cannot replace at this point).

Runs are 30 s (the papers ran 100-120 s; 30 s keeps the grid at about 9 minutes of real
time), one run per side per point. Writes to --out: ``table.md``, ``results.csv``,
``runs.jsonl`` (both summaries of every point) and ``agreement.png``. A point is flagged
where the total throughput, a flow's throughput or the mean RTT differ by more than 10 %.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]

import ccsim  # noqa: E402

TOLERANCE = 0.10


@dataclass
class Point:
    id: str
    group: str
    flows: list[str]
    rate: str = "10Mbps"
    delay: str = "20ms"
    buffer: str = "1bdp"
    loss: float = 0.0
    mss: int = 1448
    starts: list[str] = field(default_factory=list)

    def scenario(self, seconds: int, seed: int) -> dict[str, Any]:
        return {
            "name": self.id,
            "duration": f"{seconds}s",
            "seed": seed,
            "bottleneck": {"rate": self.rate, "delay": self.delay, "buffer": self.buffer, "loss": self.loss},
            "tcp": {"mss": self.mss, "recovery": "rack"},
            "flows": [{"cc": cc} for cc in self.flows],
        }

    def label(self) -> str:
        flows = " vs ".join(self.flows) if len(set(self.flows)) > 1 else f"{self.flows[0]} x{len(self.flows)}"
        loss = f" loss={100 * self.loss:g}%" if self.loss else ""
        return f"{flows}, {self.rate} {self.delay} {self.buffer}{loss}, MSS {self.mss}"


def grid() -> list[Point]:
    pts = []
    for loss in (0.0, 0.01):
        for cc in ("newreno", "cubic", "bbr"):
            pts.append(Point(f"e1-{cc}-loss{loss:g}", "E1", [cc, cc], buffer="50pkt", loss=loss, mss=1000))
    for bdp in (1, 2, 4, 8, 16):
        pts.append(Point(f"e2-{bdp}bdp", "E2", ["bbr", "cubic"], buffer=f"{bdp}bdp"))
    for loss in (0.001, 0.01):
        for cc in ("newreno", "cubic", "bbr"):
            pts.append(Point(f"loss-{cc}-{loss:g}", "loss", [cc], loss=loss))
    # E3 (seed 004): plain BBR against CUBIC at the catalogue's point; e3.py repeats it.
    pts.append(Point("e3-bbr-cubic", "E3", ["bbr", "cubic"], rate="100Mbps", delay="20ms", buffer="10bdp"))
    return pts


def quick() -> list[Point]:
    return [Point("q-cubic", "quick", ["cubic"]), Point("q-bbr-vs-cubic", "quick", ["bbr", "cubic"], buffer="4bdp"),
            Point("q-newreno-loss", "quick", ["newreno"], loss=0.01)]


def rel(a: float, b: float) -> float:
    return (a - b) / b if b else math.nan


def mean_rtt(d: dict[str, Any]) -> float:
    xs = [f["rtt_mean_ms"] for f in d["flows"] if isinstance(f.get("rtt_mean_ms"), (int, float))]
    return sum(xs) / len(xs) if xs else math.nan


def mean_srtt(res: ccsim.Result) -> float:
    """Mean of the smoothed RTT in the time series (every 100 ms), over the flows' samples:
    the same estimator on both sides (RFC 6298 / Linux tcp_rtt_estimator from the oldest
    segment an ACK newly covers), unlike the summary's RTT (see docs/validation.md)."""
    ts = res.timeseries
    return float(ts["srtt_ms"].mean())


def compare_point(p: Point, sim: dict[str, Any], emu: dict[str, Any], srtt: tuple[float, float]) -> dict[str, Any]:
    row: dict[str, Any] = {"id": p.id, "group": p.group, "point": p.label()}
    flags = []
    for i, (fs, fe) in enumerate(zip(sim["flows"], emu["flows"])):
        row[f"flow{i}_cc"] = fs["cc"]
        row[f"flow{i}_sim_mbps"] = fs["throughput_mbps"]
        row[f"flow{i}_kernel_mbps"] = fe["throughput_mbps"]
        r = rel(fs["throughput_mbps"], fe["throughput_mbps"])
        row[f"flow{i}_diff"] = r
        if len(sim["flows"]) > 1 and abs(r) > TOLERANCE:
            flags.append(f"flow {i}")
    row["total_sim_mbps"] = sim["total_throughput_mbps"]
    row["total_kernel_mbps"] = emu["total_throughput_mbps"]
    row["total_diff"] = rel(sim["total_throughput_mbps"], emu["total_throughput_mbps"])
    row["jain_sim"], row["jain_kernel"] = sim["jain_index"], emu["jain_index"]
    row["rtt_sim_ms"], row["rtt_kernel_ms"] = mean_rtt(sim), mean_rtt(emu)
    row["rtt_diff"] = rel(row["rtt_sim_ms"], row["rtt_kernel_ms"])
    row["srtt_sim_ms"], row["srtt_kernel_ms"] = srtt
    row["srtt_diff"] = rel(srtt[0], srtt[1])
    row["retx_sim"] = sum(f["retransmits"] for f in sim["flows"])
    row["retx_kernel"] = sum(f["retransmits"] or 0 for f in emu["flows"])
    row["drops_sim"], row["drops_kernel"] = sim["bottleneck"]["drops"], emu["bottleneck"]["drops"]
    row["losses_sim"], row["losses_kernel"] = sim["bottleneck"]["random_losses"], emu["bottleneck"]["random_losses"]
    row["qdelay_sim_ms"] = sim["bottleneck"]["queue_delay_mean_ms"]
    row["qdelay_kernel_ms"] = emu["bottleneck"]["queue_delay_mean_ms"]
    row["queue_sim_pkts"], row["queue_kernel_pkts"] = sim["bottleneck"]["queue_mean_pkts"], emu["bottleneck"]["queue_mean_pkts"]
    row["util_sim"], row["util_kernel"] = sim["bottleneck"]["utilization"], emu["bottleneck"]["utilization"]
    row["rto_sim"] = sum(f["rto_count"] for f in sim["flows"])
    row["rto_kernel"] = sum(f["rto_count"] or 0 for f in emu["flows"])
    row["emulator_late_mean_us"] = emu["emulator"]["late_mean_us"]
    row["emulator_late_p99_us"] = emu["emulator"]["late_p99_us"]
    row["ignored"] = "; ".join(emu.get("ignored", []))
    if abs(row["total_diff"]) > TOLERANCE:
        flags.append("total")
    if abs(row["rtt_diff"]) > TOLERANCE:
        flags.append("RTT")
    row["flag"] = ", ".join(flags)
    return row


def fmt(x: Any, spec: str) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return format(x, spec)


def pct(x: float) -> str:
    return "-" if x is None or math.isnan(x) else f"{100 * x:+.1f}%"


def table(rows: list[dict[str, Any]]) -> str:
    head = ("| # | point | per-flow Mbps ccsim / kernel | total Mbps ccsim / kernel | Δ total | Jain ccsim / kernel "
            "| mean RTT ms ccsim / kernel | Δ RTT | srtt ms ccsim / kernel | Δ srtt | queue delay ms ccsim / kernel "
            "| retransmits ccsim / kernel | drops ccsim / kernel | flag |")
    lines = [head, "|---:|---|---|---|---:|---|---|---:|---|---:|---|---|---|---|"]
    for i, r in enumerate(rows, 1):
        n = sum(1 for k in r if k.endswith("_sim_mbps") and k.startswith("flow"))
        flows = "; ".join(
            f"{r[f'flow{j}_cc']} {r[f'flow{j}_sim_mbps']:.2f} / {r[f'flow{j}_kernel_mbps']:.2f}" for j in range(n))
        lines.append(
            f"| {i} | {r['point']} | {flows} | {r['total_sim_mbps']:.2f} / {r['total_kernel_mbps']:.2f} | "
            f"{pct(r['total_diff'])} | {fmt(r['jain_sim'], '.3f')} / {fmt(r['jain_kernel'], '.3f')} | "
            f"{fmt(r['rtt_sim_ms'], '.1f')} / {fmt(r['rtt_kernel_ms'], '.1f')} | {pct(r['rtt_diff'])} | "
            f"{fmt(r['srtt_sim_ms'], '.1f')} / {fmt(r['srtt_kernel_ms'], '.1f')} | {pct(r['srtt_diff'])} | "
            f"{fmt(r['qdelay_sim_ms'], '.1f')} / {fmt(r['qdelay_kernel_ms'], '.1f')} | "
            f"{r['retx_sim']} / {r['retx_kernel']} | {r['drops_sim']} / {r['drops_kernel']} | {r['flag']} |")
    return "\n".join(lines)


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.8))
    ax = axes[0]
    for r in rows:
        n = sum(1 for k in r if k.endswith("_sim_mbps") and k.startswith("flow"))
        for j in range(n):
            ax.scatter(r[f"flow{j}_kernel_mbps"], r[f"flow{j}_sim_mbps"], s=18,
                       color={"newreno": "C0", "cubic": "C1", "bbr": "C2"}.get(r[f"flow{j}_cc"], "C3"))
    hi = max(max(r["total_kernel_mbps"], r["total_sim_mbps"]) for r in rows) * 1.05
    ax.plot([0, hi], [0, hi], "k-", lw=0.8)
    ax.fill_between([0, hi], [0, hi * (1 - TOLERANCE)], [0, hi * (1 + TOLERANCE)], color="0.85", zorder=0)
    ax.set_xlim(0, hi)
    ax.set_ylim(0, hi)
    ax.set_xlabel("Linux (emulation), Mbps")
    ax.set_ylabel("ccsim, Mbps")
    ax.set_title("per-flow throughput (blue NewReno, orange CUBIC, green BBR)")
    ax = axes[1]
    xs = [r["rtt_kernel_ms"] for r in rows]
    ys = [r["rtt_sim_ms"] for r in rows]
    ax.scatter(xs, ys, s=18, color="C4")
    hi = max(xs + ys) * 1.05
    ax.plot([0, hi], [0, hi], "k-", lw=0.8)
    ax.fill_between([0, hi], [0, hi * (1 - TOLERANCE)], [0, hi * (1 + TOLERANCE)], color="0.85", zorder=0)
    ax.set_xlim(0, hi)
    ax.set_ylim(0, hi)
    ax.set_xlabel("Linux (emulation), ms")
    ax.set_ylabel("ccsim, ms")
    ax.set_title("mean RTT per point (grey: within 10 %)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def update_docs(doc: Path, text: str, script: str = "run.py") -> None:
    """Replace what stands between ``script``'s BEGIN/END GENERATED markers in ``doc`` with ``text``
    (the scripts of validation/kernel share this)."""
    begin = f"<!-- BEGIN GENERATED BY validation/kernel/{script} -->"
    end = f"<!-- END GENERATED BY validation/kernel/{script} -->"
    s = doc.read_text()
    if begin not in s or end not in s:
        raise SystemExit(f"{doc}: no {begin} ... {end} markers")
    a, b = s.index(begin) + len(begin), s.index(end)
    doc.write_text(s[:a] + "\n\n" + text + "\n\n" + s[b:])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="3 points x 10 s")
    ap.add_argument("--seconds", type=int, default=None, help="run length (default 30, --quick 10)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", default=None, help="comma-separated point ids")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--docs", type=Path, default=None, help="rewrite the generated table in this file")
    a = ap.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("run.py needs root: the kernel side runs in network namespaces (ccsim emulate)")
    points = quick() if a.quick else grid()
    if a.only:
        keep = set(a.only.split(","))
        points = [p for p in points if p.id in keep]
    seconds = a.seconds or (10 if a.quick else 30)
    out = a.out or (HERE / ("results-quick" if a.quick else "results"))
    out.mkdir(parents=True, exist_ok=True)
    rows, t0 = [], time.monotonic()
    with open(out / "runs.jsonl", "w") as runs:
        for p in points:
            sc = ccsim.Scenario.from_dict(p.scenario(seconds, a.seed))
            sim_res, emu_res = ccsim.run(sc), ccsim.emulate(sc)
            sim, emu = sim_res.to_dict(), emu_res.to_dict()
            runs.write(json.dumps({"id": p.id, "simulation": sim, "emulation": emu}) + "\n")
            row = compare_point(p, sim, emu, (mean_srtt(sim_res), mean_srtt(emu_res)))
            rows.append(row)
            print(f"{p.id}: total {row['total_sim_mbps']:.2f} / {row['total_kernel_mbps']:.2f} Mbps "
                  f"({pct(row['total_diff'])}), RTT {row['rtt_sim_ms']:.1f} / {row['rtt_kernel_ms']:.1f} ms "
                  f"({pct(row['rtt_diff'])}) {row['flag']}", flush=True)
    keys = list(dict.fromkeys(k for r in rows for k in r))
    with open(out / "results.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)
    plot(rows, out / "agreement.png")
    flagged = sum(1 for r in rows if r["flag"])
    text = (
        f"Generated by `python3 validation/kernel/run.py{' --quick' if a.quick else ''}` on {time.strftime('%Y-%m-%d')}: "
        f"Linux {os.uname().release}, {len(rows)} points, {seconds} s each, seed {a.seed}, one run per side "
        f"({time.monotonic() - t0:.0f} s of wall time). Both sides use RACK loss detection (Linux's). "
        "Throughput: bytes delivered to the receiver (kernel) or cumulatively acknowledged (ccsim) over the "
        "flow's time; mean RTT: the summary's rtt_mean_ms averaged over the flows (kernel: TCP_INFO srtt every "
        "10 ms; ccsim: every ACK's sample from the newest segment it covers); srtt: the smoothed RTT of the time "
        "series (every 100 ms) on both sides; queue delay: the bottleneck's mean queueing delay. "
        "Δ = (ccsim - kernel) / kernel. Flag: |Δ| > 10 % for the total, a flow's "
        f"throughput (multi-flow points) or the mean RTT. {flagged} of {len(rows)} points flagged.\n\n"
        + table(rows)
    )
    (out / "table.md").write_text(text + "\n")
    if a.docs:
        update_docs(a.docs, text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
