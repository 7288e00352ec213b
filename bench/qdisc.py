#!/usr/bin/env python3
"""The cost of a queue discipline: the same scenario with each discipline against drop-tail FIFO.

Every run is one dumbbell: 8 flows, a 1 Gbps bottleneck, 10 ms one way, a 1,000-packet hard
buffer, 20 s simulated; each run its own child process (``ccsim run FILE --json``) pinned to
one core, as ``bench/scale.py`` does. The cost is the simulation loop's wall time per data
segment delivered (the README's measure); a discipline's ratio is its cost over the FIFO
run's. Rows:

- ``cubic fifo``: the baseline (the link's fast path: no event per serialisation);
- ``cubic codel``, ``cubic fq_codel``, ``cubic pie``, ``cubic red``: the same flows under
  each discipline (drops, no ECN);
- ``dctcp red-step ecn``: DCTCP flows, ECN-capable, through RED as a step marker at K = 250
  packets (just above C x RTT / 7 = 238 packets, the DCTCP analysis's bound for full
  utilization at 1 Gbps and 20 ms); compared with the CUBIC FIFO baseline and with
  ``dctcp fifo`` (the same DCTCP flows through a FIFO, which cannot mark).

    python3 bench/qdisc.py                 # every row once
    python3 bench/qdisc.py --repeat 3      # median of three

The issue's target: each discipline within 1.3x of the FIFO run's cost per delivered segment.
Results go to stdout and to ``bench/results/qdisc.md``.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import datetime as _dt
import multiprocessing as mp
import os
import platform
import shutil
import sys
import tempfile
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))
import scale  # noqa: E402  (run_child, median_run, default_ccsim)

RESULTS = BENCH_DIR / "results" / "qdisc.md"

#: (row name, flows' cc, bottleneck keys, [tcp] keys)
ROWS: list[tuple[str, str, str, str]] = [
    ("cubic fifo", "cubic", "", ""),
    ("cubic codel", "cubic", 'qdisc = "codel"', ""),
    ("cubic fq_codel", "cubic", 'qdisc = "fq_codel"', ""),
    ("cubic pie", "cubic", 'qdisc = "pie"', ""),
    ("cubic red", "cubic", 'qdisc = "red"', ""),
    ("dctcp fifo", "dctcp", "", "ecn = true"),
    ("dctcp red-step ecn", "dctcp", 'qdisc = "red"\nqdisc_params = { min_th = 250, max_th = 250 }\necn = true', "ecn = true"),
]


def scenario(cc: str, bottleneck: str, tcp: str, duration_s: float) -> str:
    return (
        f'duration = "{duration_s:g}s"\nseed = 1\nsample_interval = "{duration_s:g}s"\n\n'
        f'[bottleneck]\nrate = "1Gbps"\ndelay = "10ms"\nbuffer = "1000pkt"\n{bottleneck}\n\n'
        f"[tcp]\n{tcp}\n\n"
        f'[[flows]]\ncc = "{cc}"\ncount = 8\naccess_rate = "10Gbps"\n'
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--duration", type=float, default=20.0, help="simulated seconds (default 20)")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--ccsim", default=None, help='ccsim command (default: "ccsim", else "python -m ccsim")')
    ap.add_argument("--no-pin", action="store_true", help="do not pin children to CPU 0")
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    cmd = args.ccsim.split() if args.ccsim else scale.default_ccsim()
    pin = not args.no_pin and shutil.which("taskset") is not None

    results: dict[str, dict] = {}
    pool = cf.ProcessPoolExecutor(max_workers=1, mp_context=mp.get_context("forkserver"), max_tasks_per_child=1)
    with pool, tempfile.TemporaryDirectory() as tmp:
        for name, cc, bn, tcp in ROWS:
            path = Path(tmp) / (name.replace(" ", "_") + ".toml")
            path.write_text(scenario(cc, bn, tcp, args.duration), encoding="utf-8")
            runs = [pool.submit(scale.run_child, [*cmd, "run", str(path), "--json"], pin).result() for _ in range(args.repeat)]
            r = scale.median_run(runs)
            results[name] = r
            print(f"{name:<20} {r['ns_per_segment']:6.0f} ns/segment, {r['events_per_s'] / 1e6:5.2f} M events/s, "
                  f"utilization {r['utilization']:.3f}", flush=True)

    base = results["cubic fifo"]["ns_per_segment"]
    dctcp_base = results["dctcp fifo"]["ns_per_segment"]
    lines = [
        "# The cost of a queue discipline",
        "",
        f"Measured {_dt.date.today().isoformat()} on {platform.node()} ({os.cpu_count()} CPUs), "
        f"`python3 bench/qdisc.py --repeat {args.repeat}`. Each run: 8 flows, 1 Gbps, 10 ms one way, "
        f"a 1,000-packet buffer, {args.duration:g} s simulated, one child process "
        f"({'pinned with taskset -c 0' if pin else 'not pinned'}); median of {args.repeat} run(s); {scale.build_of(cmd)}.",
        "",
        "| run | ns per segment | vs cubic fifo | vs dctcp fifo | M events/s | utilization | drops | target 1.3x |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, *_ in ROWS:
        r = results[name]
        ratio = r["ns_per_segment"] / base
        vs_dctcp = f"{r['ns_per_segment'] / dctcp_base:.2f}x" if name.startswith("dctcp") else "-"
        target = "-" if name.endswith("fifo") else ("met" if ratio <= 1.3 else "NOT met")
        lines.append(
            f"| {name} | {r['ns_per_segment']:,.0f} | {ratio:.2f}x | {vs_dctcp} | {r['events_per_s'] / 1e6:.2f} | "
            f"{r['utilization']:.3f} | {r['drops']:,} | {target} |"
        )
    lines += [
        "",
        "- ns per segment: the simulation loop's wall time (`wall_seconds`) per data segment delivered.",
        "- A discipline serialises through the link's slot: one event per packet more than the FIFO",
        "  fast path, which decides a packet's service start when it arrives.",
        "",
    ]
    scale.write_md(args.out, lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
