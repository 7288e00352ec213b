#!/usr/bin/env python3
"""Speed of the multi-hop 802.11 line model (issue 5's target: a 7-hop 100 s TCP run in under
1 s of wall time).

    python3 bench/wireless.py               # median of 5 runs per case
    python3 bench/wireless.py --repeat 1    # a quick look

Each case runs in this process through ``ccsim.run`` (the same call as ``ccsim run``); the
wall time is the core's own measurement (``wall_seconds``: building and running the
simulation, not Python start-up). Results go to stdout and ``bench/results/wireless.md``.
"""

from __future__ import annotations

import argparse
import platform
import statistics
from pathlib import Path

import ccsim
from ccsim.build import build_kind

RESULTS = Path(__file__).resolve().parent / "results" / "wireless.md"

CASES = [
    # (label, wireless table, flow)
    ("7 hops, CUBIC, darkroom", {"hops": 7}, {"cc": "cubic"}),
    ("7 hops, BBR, darkroom", {"hops": 7}, {"cc": "bbr"}),
    ("7 hops, CUBIC, indoor", {"hops": 7, "environment": "indoor"}, {"cc": "cubic"}),
    ("7 hops, BBR, indoor", {"hops": 7, "environment": "indoor"}, {"cc": "bbr"}),
    ("1 hop, CUBIC, darkroom", {"hops": 1}, {"cc": "cubic"}),
    ("7 hops, UDP 1800 pkt/s, rpi3 host", {"hops": 7, "host": "rpi3"}, {"protocol": "udp", "rate": "1800pps", "packet_size": 1470}),
]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--duration", default="100s")
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)

    rows = []
    for label, wireless, flow in CASES:
        sc = {"duration": args.duration, "seed": 1, "wireless": {"profile": "80211n-20mhz", **wireless}, "flows": [flow]}
        walls, res = [], None
        for _ in range(args.repeat):
            res = ccsim.run(sc)
            walls.append(res.wall_seconds)
        med = statistics.median(walls)
        rows.append((label, res.total_throughput_mbps, res.events, med, res.events / med / 1e6))
        print(f"{label:38s} {res.total_throughput_mbps:7.2f} Mbps  {res.events:>11,} events  {med:.3f} s  "
              f"({res.events / med / 1e6:.1f} M events/s)", flush=True)

    lines = [
        "# Wireless line: wall time per run",
        "",
        f"`python3 bench/wireless.py --repeat {args.repeat} --duration {args.duration}`, median of {args.repeat}, "
        f"802.11n (MCS 7), one flow from station 0 to station n; {platform.processor() or platform.machine()}, "
        f"Python {platform.python_version()}, "
        f"{build_kind()}.",
        "",
        "| case | throughput (Mbps) | events | wall (s) | M events/s |",
        "|---|---|---|---|---|",
    ]
    lines += [f"| {lab} | {thr:.2f} | {ev:,} | {wall:.3f} | {rate:.1f} |" for lab, thr, ev, wall, rate in rows]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
