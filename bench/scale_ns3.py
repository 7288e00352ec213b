#!/usr/bin/env python3
"""Speed against ns-3 as the flow count grows: the same many-flow dumbbell in both simulators.

The scenario is ``bench/scale.py``'s (CUBIC flows on one bottleneck, 20 ms one way, a 1 BDP
drop-tail buffer, access links 10x the bottleneck rate), at a rate and duration ns-3 can run
in minutes. Each flow count runs in ccsim (``ccsim run FILE --json``) and in the ns-3 reference
program (``bench/ns3/build/dumbbell``, command line derived from the same file by
``bench/bench.py``), one after the other, each child pinned to one core. Reported per flow
count: each simulator's wall time of its simulation loop per delivered data segment, the ratio
(ns-3 / ccsim), and each one's cost relative to its own 2-flow run: does ccsim's lead hold as
flows grow?

    bash bench/ns3/build.sh && python3 bench/scale_ns3.py                 # 2, 10, 100, 250 flows
    python3 bench/scale_ns3.py --flows 2,100 --rate 1 --duration 2

The ns-3 program gives sender i the subnet 10.1.(i + 1).0/24, so it runs at most 254 flows
(beyond, ns-3 stops on an address collision); the default's largest count is 250.

Results go to stdout and to ``bench/results/scale_ns3.md``. Run it on a quiet machine: both
halves are timed.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import platform
import shutil
import sys
import tempfile
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))
import bench  # noqa: E402  (load_scenario, run_ns3, run_ccsim, NS3_BIN)
import scale  # noqa: E402  (scenario, default_ccsim)

RESULTS = BENCH_DIR / "results" / "scale_ns3.md"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--flows", default="2,10,100,250", help="comma-separated flow counts (default 2,10,100,250)")
    ap.add_argument("--rate", type=float, default=1.0, help="bottleneck rate in Gbps (default 1)")
    ap.add_argument("--duration", type=float, default=5.0, help="simulated seconds (default 5)")
    ap.add_argument("--ccsim", default=None, help='ccsim command (default: "ccsim", else "python -m ccsim")')
    ap.add_argument("--ns3-bin", type=Path, default=bench.NS3_BIN)
    ap.add_argument("--no-pin", action="store_true", help="do not pin children to CPU 0")
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    if not args.ns3_bin.exists():
        print(f"error: {args.ns3_bin} is missing; build it with `bash bench/ns3/build.sh`", file=sys.stderr)
        return 2
    flows = [int(x) for x in args.flows.split(",")]
    cmd = args.ccsim.split() if args.ccsim else scale.default_ccsim()
    pin = not args.no_pin and shutil.which("taskset") is not None

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in flows:
            path = Path(tmp) / f"scale_{n}.toml"
            path.write_text(scale.scenario(n, args.rate, args.duration), encoding="utf-8")
            sc = bench.load_scenario(f"scale_{n}", path, None)
            c = bench.run_ccsim(cmd, path, sc, pin)
            m = bench.run_ns3(args.ns3_bin, sc, pin)
            for name, r in (("ccsim", c), ("ns-3", m)):
                if not r.ok or not r.segments or r.wall_s is None:
                    print(f"error: {name} at {n} flows: {r.error or 'no segments delivered'}", file=sys.stderr)
                    return 1
            row = {
                "flows": n,
                "ccsim_ns": c.wall_s * 1e9 / c.segments,
                "ns3_ns": m.wall_s * 1e9 / m.segments,
                "ccsim_s": c.wall_s,
                "ns3_s": m.wall_s,
                "ccsim_mbps": c.total_mbps,
                "ns3_mbps": m.total_mbps,
            }
            rows.append(row)
            print(
                f"{n:>6} flows: ccsim {row['ccsim_ns']:8,.0f} ns/segment ({c.wall_s:.2f} s), "
                f"ns-3 {row['ns3_ns']:10,.0f} ns/segment ({m.wall_s:.1f} s): ns-3 / ccsim {row['ns3_ns'] / row['ccsim_ns']:,.0f}x",
                flush=True,
            )

    base = next((r for r in rows if r["flows"] == 2), rows[0])
    lines = [
        "# Speed against ns-3 as the flow count grows",
        "",
        f"Measured {_dt.date.today().isoformat()} on {platform.node()} ({os.cpu_count()} CPUs), "
        f"`python3 bench/scale_ns3.py --flows {args.flows} --rate {args.rate:g} --duration {args.duration:g}`. "
        f"Each run: CUBIC, one {args.rate:g} Gbps bottleneck, 20 ms one way, 1 BDP drop-tail buffer, "
        f"access links 10x the bottleneck rate, {args.duration:g} s simulated; ccsim, then ns-3 "
        f"(`bench/ns3/build/dumbbell`), each one child process "
        f"({'pinned with taskset -c 0' if pin else 'not pinned'}).",
        "",
        f"| flows | ccsim ns per segment | ns-3 ns per segment | ns-3 / ccsim | ccsim vs its {base['flows']}-flow run "
        f"| ns-3 vs its {base['flows']}-flow run | throughput Mbps ccsim / ns-3 |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['flows']:,} | {r['ccsim_ns']:,.0f} | {r['ns3_ns']:,.0f} | {r['ns3_ns'] / r['ccsim_ns']:,.0f}x | "
            f"{r['ccsim_ns'] / base['ccsim_ns']:.2f}x | {r['ns3_ns'] / base['ns3_ns']:.2f}x | "
            f"{r['ccsim_mbps']:,.0f} / {r['ns3_mbps']:,.0f} |"
        )
    lines += [
        "",
        "- ns per segment: the simulation loop's wall time per data segment delivered (ccsim's",
        "  `wall_seconds`, the ns-3 program's timing of `Simulator::Run`).",
        "",
    ]
    scale.write_md(args.out, lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
