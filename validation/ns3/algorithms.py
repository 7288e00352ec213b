#!/usr/bin/env python3
"""ccsim vs ns-3 for Linux's classic congestion-control set.

    python3 validation/ns3/algorithms.py --docs docs/validation.md   # the grid; rewrites the
                                      # generated block of the docs (ns-3 runs are cached)
    python3 validation/ns3/algorithms.py --only-ns3                  # fill ns-3's cache alone
    python3 validation/ns3/algorithms.py --algos vegas,hybla --quick # a few points

For every algorithm of Linux's classic set that ns-3 3.44 also models (Vegas, Westwood+,
Illinois, H-TCP, BIC, HighSpeed, Scalable, Hybla, Veno, YeAH, LP) a small grid, every
combination of: alone or against itself (1, 2 flows); 10 and 100 Mbps; a 1 and an 8 BDP
drop-tail buffer; no random loss and 0.1 %; 40 ms base RTT. 16 points per algorithm, 60 s
simulated at 10 Mbps and 30 s at 100 Mbps, seeds 1-2 with random loss (the loss pattern is
the only randomness: both simulators are deterministic without it) and seed 1 without.
DCTCP, which ns-3 also has, needs a marking queue: validation/ns3/qdisc.py compares it.

The dumbbell, the TCP set-up, the ns-3 program and its cache are run.py's: ns-3 runs in
run.py's "aligned" set-up (its TCP deviations from Linux switched off), with 32 MiB socket
buffers (SOCKET_BUFFER), and with the algorithms' constants set to Linux's where ns-3's
defaults differ (LINUX_CONSTANTS): the comparison is then of the two models of each
algorithm, not of two choices of constant.

Writes to --out (default validation/ns3/results): algorithms.md (the tables), algorithms.csv
(one row per point), algorithms_runs.csv (one row per run), raw/ (run.py's cache).
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import csv
import datetime
import math
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


# run.py (the dumbbell's ns-3 and ccsim set-ups, the runner, the tables), as a module of its
# own: this script adds its algorithms and its ns-3 set-up to that module's tables.
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))
import run as R  # noqa: E402

#: ccsim name -> ns-3 class (bench/ns3/ccsim-tcp.h, CcTypeName, maps the same names)
ALGOS = {
    "vegas": "TcpVegas",
    "westwood": "TcpWestwoodPlus",
    "illinois": "TcpIllinois",
    "htcp": "TcpHtcp",
    "bic": "TcpBic",
    "highspeed": "TcpHighSpeed",
    "scalable": "TcpScalable",
    "hybla": "TcpHybla",
    "veno": "TcpVeno",
    "yeah": "TcpYeah",
    "lp": "TcpLp",
}

#: ns-3 attribute defaults that differ from the Linux constants ccsim uses, set to Linux's
#: (each flag only reaches its own class, so one list serves every algorithm):
#:   Hybla's reference RTT: Linux rtt0 = 25 ms (tcp_hybla.c), ns-3 RRTT = 50 ms.
#:   BIC's smooth_part: Linux 20 (tcp_bic.c), ns-3 SmoothPart = 5.
#:   Scalable's AI count: Linux TCP_SCALABLE_AI_CNT = 100 since 5.6 ("tcp: fix stretch ACK
#:   bugs in Scalable", which counts ACKed packets as ns-3 does), ns-3 AIFactor = 50 (Linux's
#:   value before, which compensated for delayed ACKs).
LINUX_CONSTANTS = [
    "--ns3::TcpHybla::RRTT=25ms",
    "--ns3::TcpBic::SmoothPart=20",
    "--ns3::TcpScalable::AIFactor=100",
]
#: The dumbbell's 4 MiB socket buffers limit a window of 8 BDP at 100 Mbps (3,000 packets,
#: 4.3 MB; docs/validation.md, cause G2): 32 MiB never limits this grid (ccsim's window is
#: not limited by a buffer).
SOCKET_BUFFER = ["--sockBuf=33554432"]
VARIANT = "aligned-linux"
R.NS3_VARIANTS[VARIANT] = [*R.NS3_VARIANTS["aligned"], *LINUX_CONSTANTS, *SOCKET_BUFFER]
for _name in ALGOS:
    R.NS3_CC.setdefault(_name, _name)
    R.CCSIM_CC.setdefault(_name, (_name, {}))

TOLERANCE = R.TOLERANCE


def grid(algos: list[str]) -> list[Any]:
    pts = []
    for cc in algos:
        for rate in (10.0, 100.0):
            for flows in (1, 2):
                for buf in (1.0, 8.0):
                    for loss in (0.0, 0.001):
                        seeds = (1, 2) if loss > 0 else (1,)
                        pts.append(R.Point(cc, flows=flows, buffer_bdp=buf, loss=loss, rate_mbps=rate, seeds=seeds, group=cc))
    return pts


def quick_grid(algos: list[str]) -> list[Any]:
    return [R.Point(cc, duration_s=20.0, seeds=(1,), group=cc) for cc in algos]


def ccsim_has(algos: list[str]) -> list[str]:
    """The algorithms the installed ccsim knows."""
    try:
        import ccsim

        known = {a["name"] for a in ccsim.algorithms()}
    except Exception:  # noqa: BLE001 - no ccsim here: ns-3 alone
        return []
    return [a for a in algos if a in known]


def run_all(points: list[Any], jobs: int, raw: Path, with_ccsim: set[str], progress: bool = True):
    raw.mkdir(parents=True, exist_ok=True)
    tasks = [(i, p, s) for i, p in enumerate(points) for s in p.seed_list]
    tasks.sort(key=lambda t: -(t[1].rate_mbps * t[1].duration))
    ns3: dict[tuple[int, int], dict[str, Any]] = {}
    t0 = time.perf_counter()
    with cf.ThreadPoolExecutor(max_workers=max(1, jobs)) as ex:
        futs = {ex.submit(R.run_ns3, p, s, raw, True, VARIANT): (i, p, s) for i, p, s in tasks}
        for n, fut in enumerate(cf.as_completed(futs), 1):
            i, p, s = futs[fut]
            ns3[(i, s)] = d = fut.result()
            if progress:
                how = "cached" if d.get("_cached") else f"{d.get('process_seconds', 0):.1f}s"
                print(f"[{time.perf_counter() - t0:6.1f}s] ns-3 {n}/{len(tasks)} {p.name} seed {s} ({how})", file=sys.stderr, flush=True)
    cc: dict[tuple[int, int], dict[str, Any]] = {}
    for i, p in enumerate(points):
        if p.cc in with_ccsim:
            for s in p.seed_list:
                cc[(i, s)] = R.run_ccsim(p, s, raw)
    if progress and cc:
        print(f"[{time.perf_counter() - t0:6.1f}s] ccsim: {len(cc)} runs", file=sys.stderr)
    rows, records = [], []
    for i, p in enumerate(points):
        if p.cc not in with_ccsim:
            continue
        runs: dict[str, list[dict[str, Any]]] = {"ccsim": [], "ns3": []}
        for s in p.seed_list:
            for sim, res in (("ccsim", cc[(i, s)]), ("ns3", ns3[(i, s)])):
                sm = R.summarize(sim, res)
                runs[sim].append(sm)
                rec = {"point": p.name, "cc": p.cc, "seed": s, "sim": sim, **{k: v for k, v in sm.items() if k != "thr"}}
                rec["thr"] = ";".join(f"{x:.4f}" for x in sm["thr"])
                records.append(rec)
        row = R.aggregate(p, runs)
        row["variant"] = VARIANT
        rows.append(row)
    return rows, records, ns3


# --------------------------------------------------------------------------- output


def stats_md(rows: list[dict[str, Any]]) -> str:
    out = [
        "| algorithm | points | within 10 % (total and RTT) | median abs Δ total | max abs Δ total "
        "| median abs Δ RTT | max abs Δ RTT |\n|---|---:|---:|---:|---:|---:|---:|\n"
    ]
    for cc in [*ALGOS, "all"]:
        sel = rows if cc == "all" else [r for r in rows if r["cc"] == cc]
        if not sel:
            continue
        dt = [abs(r["d_total"]) for r in sel if not math.isnan(r["d_total"])]
        dr = [abs(r["d_rtt"]) for r in sel if not math.isnan(r["d_rtt"])]
        ok = sum(1 for r in sel if not r["flag"])
        out.append(
            f"| {cc} | {len(sel)} | {ok} | {statistics.median(dt) * 100:.1f}% | {max(dt) * 100:.1f}% "
            f"| {statistics.median(dr) * 100:.1f}% | {max(dr) * 100:.1f}% |\n"
        )
    return "".join(out)


def write(out: Path, rows: list[dict[str, Any]], records: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    out.mkdir(parents=True, exist_ok=True)
    flat = []
    for r in rows:
        f = dict(r)
        f["ccsim_thr"] = ";".join(f"{x:.4f}" for x in r["ccsim_thr"])
        f["ns3_thr"] = ";".join(f"{x:.4f}" for x in r["ns3_thr"])
        flat.append(f)
    for name, data in (("algorithms.csv", flat), ("algorithms_runs.csv", records)):
        with open(out / name, "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(data[0].keys()))
            w.writeheader()
            w.writerows(data)
    md = [
        f"Generated by `{meta['command']}` on {meta['date']}: {meta['points']} points, {meta['runs']} seeded "
        f"runs per simulator, {meta['wall_s']:.0f} s wall time with {meta['jobs']} jobs on {meta['machine']}"
        + (f" ({meta['cached']} of {meta['runs']} ns-3 runs from the cache)" if meta.get("cached") else "")
        + ".\n\n",
        stats_md(rows),
        "\nPer point (ccsim / ns-3; Δ = (ccsim - ns-3) / ns-3; flagged where the total throughput or the "
        "mean RTT differs by more than 10 %):\n\n",
        R.table_md(rows),
        "\nRetransmissions, RTOs, recoveries, mean queue and minimum RTT:\n\n",
        R.extra_md(rows),
    ]
    text = "".join(md)
    (out / "algorithms.md").write_text("# ccsim vs ns-3: Linux's classic congestion-control set\n\n" + text)
    return text


def update_docs(doc: Path, text: str) -> None:
    begin = "<!-- BEGIN GENERATED BY validation/ns3/algorithms.py -->"
    end = "<!-- END GENERATED BY validation/ns3/algorithms.py -->"
    body = doc.read_text()
    if begin not in body or end not in body:
        raise SystemExit(f"algorithms.py: {doc} has no generated block ({begin} ... {end})")
    i, j = body.index(begin), body.index(end) + len(end)
    doc.write_text(body[:i] + begin + "\n\n" + text + "\n" + end + body[j:])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--algos", default=",".join(ALGOS), help="comma-separated subset of: " + ", ".join(ALGOS))
    ap.add_argument("--quick", action="store_true", help="one 20 s point per algorithm")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", type=Path, default=HERE / "results")
    ap.add_argument("--docs", type=Path, help="rewrite the generated block of this file (docs/validation.md)")
    ap.add_argument("--only-ns3", action="store_true", help="run ns-3 alone (fills the cache)")
    ap.add_argument("--no-build", action="store_true", help="do not (re)build the ns-3 program")
    a = ap.parse_args(argv)
    algos = [x for x in a.algos.split(",") if x]
    bad = [x for x in algos if x not in ALGOS]
    if bad:
        print(f"algorithms.py: --algos: unknown {', '.join(bad)}; accepted: {', '.join(ALGOS)}", file=sys.stderr)
        return 2
    ok, msg = R.ensure_ns3(build=not a.no_build)
    if not ok:
        print(f"algorithms.py: ns-3 is not available: {msg}", file=sys.stderr)
        return 1
    with_ccsim = set() if a.only_ns3 else set(ccsim_has(algos))
    missing = [x for x in algos if x not in with_ccsim]
    if missing and not a.only_ns3:
        print(f"algorithms.py: the installed ccsim lacks {', '.join(missing)}: ns-3 alone for those", file=sys.stderr)
    points = quick_grid(algos) if a.quick else grid(algos)
    t0 = time.perf_counter()
    rows, records, ns3 = run_all(points, a.jobs, a.out / "raw", with_ccsim)
    wall = time.perf_counter() - t0
    if not rows:
        print(f"ns-3: {len(ns3)} runs done in {wall:.0f} s; no ccsim comparison", file=sys.stderr)
        return 0
    meta = {
        "command": "python3 validation/ns3/algorithms.py" + (" " + " ".join(argv if argv is not None else sys.argv[1:])).rstrip(),
        "date": datetime.date.today().isoformat(),
        "points": len(rows),
        "runs": sum(r["seeds"] for r in rows),
        "cached": sum(1 for (i, s), d in ns3.items() if d.get("_cached") and points[i].cc in with_ccsim),
        "wall_s": wall,
        "jobs": a.jobs,
        "machine": f"{os.cpu_count()} cores, {platform.machine()}",
    }
    text = write(a.out, rows, records, meta)
    if a.docs:
        update_docs(a.docs, text)
    flagged = sum(1 for r in rows if r["flag"])
    print(f"{len(rows)} points: {len(rows) - flagged} within 10 %, {flagged} flagged; {a.out / 'algorithms.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
