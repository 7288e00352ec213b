"""Cost of each congestion-control algorithm relative to NewReno on the same scenario.

Runs the E1 set-up (2 flows, 10 Mbps, 20 ms one way, 50-packet buffer, MSS 1000, 100 s) with
each algorithm, in this process, pinned to one core. Reports the median simulation wall time
(`wall_seconds`, the engine's own loop), events, and the ratio to NewReno. Issue 3 asks for
each delay-based algorithm to cost at most 1.5x a NewReno run.

    python3 bench/algorithms_cost.py [--repeat 7] [--loss 0.0]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
from pathlib import Path

import ccsim

ALGOS = ["newreno", "cubic", "bbr", "hd", "chd", "cdg", "ucc", "bbr-expire", "bbr-rtprop", "bbrplus"]
LIMITED = {"hd", "cdg", "ucc", "bbrplus"}  # the ones issue 3 names


def scenario(cc: str, loss: float) -> ccsim.Scenario:
    return ccsim.Scenario.from_dict(
        {
            "duration": "100s",
            "bottleneck": {"rate": "10Mbps", "delay": "20ms", "buffer": "50pkt", "loss": loss},
            "tcp": {"mss": 1000},
            "flows": [{"cc": cc, "count": 2, "access_rate": "100Mbps"}],
        }
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--loss", type=float, default=0.0)
    args = ap.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {0})
    rows = []
    for cc in ALGOS:
        sc = scenario(cc, args.loss)
        walls, res = [], None
        for _ in range(args.repeat):
            res = ccsim.run(sc, seed=1)
            walls.append(res.wall_seconds)
        rows.append((cc, statistics.median(walls), res.events, res.total_throughput_mbps))
    base = rows[0][1]
    lines = [
        f"Algorithm cost, E1 set-up (2 flows, 10 Mbps, 40 ms RTT, 50 pkt, MSS 1000, 100 s, loss {args.loss}), "
        f"median of {args.repeat}, one core",
        "",
        "| algorithm | sim wall (s) | vs newreno | events | ns per event | total Mbps |",
        "|---|---|---|---|---|---|",
    ]
    worst = 0.0
    for cc, wall, events, thr in rows:
        ratio = wall / base
        if cc in LIMITED:
            worst = max(worst, ratio)
        lines.append(f"| {cc} | {wall:.4f} | {ratio:.2f}x | {events:,} | {wall / events * 1e9:.0f} | {thr:.3f} |")
    lines += ["", f"worst of {', '.join(sorted(LIMITED))}: {worst:.2f}x NewReno (limit 1.5x): "
              + ("ok" if worst <= 1.5 else "OVER")]
    text = "\n".join(lines)
    print(text)
    out = Path(__file__).parent / "results"
    out.mkdir(exist_ok=True)
    name = "algorithms.md" if args.loss == 0 else f"algorithms_loss{args.loss}.md"
    (out / name).write_text(text + "\n", encoding="utf-8")
    (out / name.replace(".md", ".json")).write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
