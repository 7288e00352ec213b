#!/usr/bin/env python3
"""ccsim vs ns-3 cross-validation on the dumbbell.

    python3 validation/ns3/run.py --docs docs/validation.md   # the full grid, ~6 min on 2 cores;
                                                              # also rewrites the tables in the docs
    python3 validation/ns3/run.py --quick      # 6 points, 20 s: smoke check (a few seconds)
    python3 validation/ns3/run.py --jobs 2 --out validation/ns3/results

Builds the ns-3 program if needed (bench/ns3/build.sh: pip-installs ns3==3.44.post0
and compiles bench/ns3/dumbbell.cc), runs every grid point in both simulators with the
same scenario, and writes to --out:

    table.md        the comparison tables, one per ns-3 set-up (per point: per-flow and
                    total throughput, Jain index, drops, mean RTT, relative differences,
                    flag where the total throughput or the mean RTT differ by more than
                    the tolerance; retransmissions, RTOs, recoveries, mean queue)
    results.csv     one row per (ns-3 set-up, point), every number in the tables and more
    results.parquet the same (if pyarrow is importable)
    runs.csv        one row per (point, seed, simulator) run
    agreement.png   ccsim vs ns-3 total throughput and mean RTT, with the +-10 % band
    differences.png the relative difference per point
    raw/            every run's JSON (ns-3's line and ccsim's summary), the cache
                    that lets a re-run skip ns-3 runs whose command and binary are unchanged

Grid design (see docs/validation.md): for each of NewReno, CUBIC and BBR, one baseline
(10 Mbps, 40 ms base RTT, 1 BDP drop-tail buffer, no random loss, 1 flow) and every other
value of every dimension varied one at a time around it (flows 2, 4; buffer 0.5, 4, 16
BDP; loss 0.1 %, 1 %; RTT 10, 160 ms; rate 100 Mbps), plus four interaction points, plus
four points of RFC 5681 NewReno (ns-3 TcpNewReno vs ccsim newreno with abc = false).
60 s simulated at 10 Mbps, 30 s at 100 Mbps (20 s for the 4-flow 100 Mbps / 160 ms point);
seeds as Point.seed_list says. Two ns-3 set-ups (NS3_VARIANTS): stock ns-3 3.44, and ns-3
with the changes docs/validation.md shows make it follow Linux where stock ns-3 does not.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import dataclasses
import hashlib
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
NS3_DIR = REPO / "bench" / "ns3"
NS3_BIN = NS3_DIR / "build" / "dumbbell"
BUILD_SH = NS3_DIR / "build.sh"

MSS = 1448
TOLERANCE = 0.10  # relative difference flagged in the table

#: The ns-3 set-ups compared with ccsim (docs/validation.md, "Causes"):
#:   stock   - ns-3 3.44 as shipped (TcpPrrRecovery, TcpRateLinux, RTO clock granularity 1 ms).
#:   aligned - the same ns-3 with three changes, each one a place where stock ns-3 3.44 is
#:             not what Linux does: PRR without the extra segment per duplicate ACK
#:             (--recovery=prr-sack), Linux tcp_rate.c delivery-rate samples
#:             (--rateSampler=linux), and RTO = SRTT + max(200 ms, 4 RTTVAR)
#:             (--clockGranularity=200ms, close to Linux's SRTT + max(RTTVAR, 200 ms)).
#:             For the "newreno-rfc" rows, aligned also uses --cc=newreno-flightsize:
#:             TcpNewReno with ssthresh = FlightSize / 2 (RFC 5681 eq. 4) instead of pipe / 2.
NS3_VARIANTS: dict[str, list[str]] = {
    "stock": [],
    "aligned": ["--recovery=prr-sack", "--rateSampler=linux", "--clockGranularity=200ms"],
}
#: one change at a time, for the attribution of each disagreement (validation/ns3/attribute.py)
NS3_VARIANTS.update(
    {
        "prr-sack": ["--recovery=prr-sack"],
        "rate-sampler": ["--rateSampler=linux"],
        "rto-200ms": ["--clockGranularity=200ms"],
        "flightsize": [],
    }
)
#: per-variant replacements of NS3_CC
NS3_CC_VARIANT: dict[str, dict[str, str]] = {
    "aligned": {"newreno-rfc": "newreno-flightsize"},
    "flightsize": {"newreno-rfc": "newreno-flightsize"},
}

#: ccsim algorithm -> ns-3 TypeId short name understood by dumbbell --cc.
#: ccsim's "newreno" is Linux's Reno (RFC 3465 byte counting: tcp_reno_cong_avoid);
#: ns-3's TcpLinuxReno is the same window law. ns-3's TcpNewReno grows cwnd once per
#: ACK (RFC 5681 without ABC), which is ccsim's newreno with params {abc = false}:
#: the "newreno-rfc" rows compare those two.
NS3_CC = {"newreno": "linuxreno", "cubic": "cubic", "bbr": "bbr", "newreno-rfc": "newreno"}
CCSIM_CC: dict[str, tuple[str, dict[str, Any]]] = {
    "newreno": ("newreno", {}),
    "cubic": ("cubic", {}),
    "bbr": ("bbr", {}),
    "newreno-rfc": ("newreno", {"abc": False}),
}


@dataclasses.dataclass(frozen=True)
class Point:
    """One scenario of the grid."""

    cc: str  # key of NS3_CC
    flows: int = 1
    buffer_bdp: float = 1.0
    loss: float = 0.0
    rtt_ms: float = 40.0
    rate_mbps: float = 10.0
    duration_s: float | None = None  # default: 60 s at <= 10 Mbps, 30 s above
    seeds: tuple[int, ...] | None = None  # default: see seed_list
    group: str = "baseline"  # which design block the point belongs to

    @property
    def duration(self) -> float:
        if self.duration_s is not None:
            return self.duration_s
        return 60.0 if self.rate_mbps <= 10 else 30.0

    @property
    def seed_list(self) -> tuple[int, ...]:
        """4 seeds with random loss at 10 Mbps (the loss pattern dominates the variance), 2
        with loss at 100 Mbps and for BBR (both BBR models draw random numbers), else 1
        (NewReno and CUBIC are deterministic without random loss in both simulators)."""
        if self.seeds is not None:
            return self.seeds
        if self.loss > 0:
            return (1, 2, 3, 4) if self.rate_mbps <= 10 else (1, 2)
        return (1, 2) if self.cc == "bbr" else (1,)

    @property
    def name(self) -> str:
        return (
            f"{self.cc} x{self.flows} {self.rate_mbps:g}M {self.rtt_ms:g}ms "
            f"{self.buffer_bdp:g}bdp loss={self.loss * 100:g}%"
            + (f" {self.duration_s:g}s" if self.duration_s is not None else "")
        )


BASE = dict(flows=1, buffer_bdp=1.0, loss=0.0, rtt_ms=40.0, rate_mbps=10.0)
#: every value of every dimension other than the baseline's
VARIATIONS: list[tuple[str, Any]] = [
    ("flows", 2),
    ("flows", 4),
    ("buffer_bdp", 0.5),
    ("buffer_bdp", 4.0),
    ("buffer_bdp", 16.0),
    ("loss", 0.001),
    ("loss", 0.01),
    ("rtt_ms", 10.0),
    ("rtt_ms", 160.0),
    ("rate_mbps", 100.0),
]
#: interaction points (two or more dimensions away from the baseline)
INTERACTIONS: list[dict[str, Any]] = [
    # many flows, large BDP (20 s and one seed: stock ns-3 needs ~8 s of CPU per simulated
    # second here with BBR, its O(n) scoreboard walks over ~5000 packets in flight)
    dict(flows=4, rate_mbps=100.0, rtt_ms=160.0, duration_s=20.0, seeds=(1,)),
    dict(flows=2, buffer_bdp=0.5, rtt_ms=10.0),  # shallow buffer, short RTT
    dict(flows=2, buffer_bdp=16.0, rtt_ms=160.0),  # deep buffer, long RTT
    dict(flows=4, loss=0.001, rate_mbps=100.0),  # random loss at high rate, competing flows
]


def full_grid() -> list[Point]:
    pts: list[Point] = []
    for cc in ("newreno", "cubic", "bbr"):
        pts.append(Point(cc, **BASE, group="baseline"))
        for dim, val in VARIATIONS:
            pts.append(Point(cc, **{**BASE, dim: val}, group=f"vary {dim}"))
        for inter in INTERACTIONS:
            pts.append(Point(cc, **{**BASE, **inter}, group="interaction"))
    # RFC 5681 NewReno (ns-3 TcpNewReno vs ccsim newreno abc=false): a few points.
    for kw in (dict(), dict(flows=2), dict(loss=0.01), dict(rate_mbps=100.0)):
        pts.append(Point("newreno-rfc", **{**BASE, **kw}, group="newreno-rfc"))
    return pts


def quick_grid() -> list[Point]:
    return [
        Point("newreno", duration_s=20, seeds=(1,)),
        Point("cubic", duration_s=20, seeds=(1,)),
        Point("bbr", duration_s=20, seeds=(1,)),
        Point("newreno", flows=2, buffer_bdp=4.0, duration_s=20, seeds=(1,), group="quick"),
        Point("cubic", loss=0.001, duration_s=20, seeds=(1, 2, 3, 4), group="quick"),
        Point("bbr", flows=2, rtt_ms=10.0, duration_s=20, seeds=(1,), group="quick"),
    ]


# --------------------------------------------------------------------------- scenarios


def ccsim_scenario(p: Point, seed: int) -> dict[str, Any]:
    """The ccsim scenario of a point (base RTT all on the bottleneck, 0 ms access)."""
    cc, params = CCSIM_CC[p.cc]
    flow: dict[str, Any] = {
        "cc": cc,
        "count": p.flows,
        "access_rate": "1Gbps",
        "access_delay": "0ms",
        "start": "0s",
    }
    if params:
        flow["params"] = dict(params)
    return {
        "duration": f"{p.duration:g}s",
        "seed": seed,
        "bottleneck": {
            "rate": f"{p.rate_mbps:g}Mbps",
            "delay": f"{p.rtt_ms / 2:g}ms",
            "buffer": f"{p.buffer_bdp:g}bdp",
            "loss": p.loss,
        },
        "tcp": {
            "mss": MSS,
            "delayed_ack": True,
            "delack_timeout": "40ms",
            "min_rto": "200ms",
            "initial_cwnd": 10,
            "pacing": "auto",
            "recovery": "rfc6675",
        },
        "flows": [flow],
    }


def ns3_args(p: Point, seed: int, variant: str = "stock") -> list[str]:
    """dumbbell command-line for a point; the buffer is converted by the program exactly
    as ccsim converts "Nbdp" (and run.py checks the two packet counts are equal)."""
    cc = NS3_CC_VARIANT.get(variant, {}).get(p.cc, NS3_CC[p.cc])
    return [
        *NS3_VARIANTS[variant],
        f"--cc={','.join([cc] * p.flows)}",
        f"--rate={p.rate_mbps * 1e6:.0f}bps",
        f"--delay={p.rtt_ms / 2 * 1e6:.0f}ns",
        f"--bufferBdp={p.buffer_bdp:g}",
        f"--mss={MSS}",
        f"--duration={p.duration:g}",
        f"--seed={seed}",
        "--accessRate=1000000000bps",
        "--accessDelay=0ns",
        f"--loss={p.loss:g}",
        "--delAckCount=2",
        "--delAckTimeout=40ms",
        "--minRto=200ms",
        "--flowStats=1",
    ]


# --------------------------------------------------------------------------- running


def ensure_ns3(build: bool = True) -> tuple[bool, str]:
    """Build the ns-3 program if needed. Returns (ok, message)."""
    if build:
        try:
            r = subprocess.run(
                ["bash", str(BUILD_SH)],
                capture_output=True,
                text=True,
                env={**os.environ, "PYTHON": os.environ.get("PYTHON", sys.executable)},
                timeout=900,
            )
        except (OSError, subprocess.TimeoutExpired) as e:
            return False, f"bench/ns3/build.sh could not run: {e}"
        if r.returncode != 0:
            return False, (r.stderr.strip().splitlines() or ["bench/ns3/build.sh failed"])[-1]
    if not (NS3_BIN.is_file() and os.access(NS3_BIN, os.X_OK)):
        return False, f"{NS3_BIN} not built"
    return True, ""


def _cache_key(args: list[str]) -> str:
    st = NS3_BIN.stat()
    h = hashlib.sha1()
    h.update(json.dumps(args).encode())
    h.update(f"{st.st_size}:{st.st_mtime_ns}".encode())
    return h.hexdigest()[:16]


def run_ns3(
    p: Point, seed: int, raw_dir: Path | None, use_cache: bool = True, variant: str = "stock"
) -> dict[str, Any]:
    args = ns3_args(p, seed, variant)
    cache = None
    if raw_dir is not None:
        cache = raw_dir / f"ns3-{_cache_key(args)}.json"
        if use_cache and cache.is_file():
            d = json.loads(cache.read_text())
            d["_cached"] = True
            return d
    t0 = time.perf_counter()
    r = subprocess.run([str(NS3_BIN), *args], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"ns-3 failed ({r.returncode}) for {p.name} seed {seed}: {r.stderr[-2000:]}")
    line = [ln for ln in r.stdout.splitlines() if ln.startswith("{")][-1]
    d = json.loads(line)
    d["process_seconds"] = time.perf_counter() - t0
    d["args"] = args
    if cache is not None:
        cache.write_text(json.dumps(d) + "\n")
    return d


def run_ccsim(p: Point, seed: int, raw_dir: Path | None) -> dict[str, Any]:
    import ccsim

    sc = ccsim_scenario(p, seed)
    res = ccsim.run(sc, seed=seed)
    d = res.to_dict()
    d.pop("timeseries", None)
    d["scenario"] = sc
    if raw_dir is not None:
        key = hashlib.sha1(json.dumps(sc, sort_keys=True).encode()).hexdigest()[:16]
        (raw_dir / f"ccsim-{key}.json").write_text(json.dumps(d, default=str) + "\n")
    return d


# --------------------------------------------------------------------------- metrics


def _mean(xs: list[float]) -> float:
    xs = [x for x in xs if x is not None and not (isinstance(x, float) and math.isnan(x))]
    return sum(xs) / len(xs) if xs else float("nan")


def summarize(sim: str, d: dict[str, Any]) -> dict[str, Any]:
    """The numbers compared, from one run of either simulator."""
    flows = d["flows"]
    if sim == "ns3":
        # bytes cumulatively ACKed at the sender / duration: ccsim's definition
        thr = [f["acked_throughput_mbps"] for f in flows]
    else:
        thr = [f["throughput_mbps"] for f in flows]
    total = sum(thr)
    sq = sum(x * x for x in thr)
    jain = total * total / (len(thr) * sq) if sq > 0 else float("nan")
    b = d["bottleneck"]
    return {
        "thr": thr,
        "total": total,
        "jain": jain,
        "drops": b["drops"],
        "rtt": _mean([f["rtt_mean_ms"] for f in flows]),
        "rtt_min": min((f["rtt_min_ms"] for f in flows if f.get("rtt_min_ms") is not None), default=float("nan")),
        "retx": sum(f["retransmits"] for f in flows),
        "rtos": sum(f["rto_count"] for f in flows),
        "recoveries": sum(f["fast_recoveries"] for f in flows),
        "queue": b.get("queue_mean_pkts", float("nan")),
        "util": b.get("utilization", float("nan")),
        "buffer_pkts": b.get("buffer_pkts"),
    }


def rel(a: float, b: float) -> float:
    """(a - b) / b: ccsim relative to ns-3."""
    if b is None or a is None or b == 0 or math.isnan(a) or math.isnan(b):
        return float("nan")
    return (a - b) / b


def aggregate(p: Point, runs: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Mean over seeds of each simulator's summary, and the differences."""
    row: dict[str, Any] = {
        "point": p.name,
        "group": p.group,
        "cc": p.cc,
        "flows": p.flows,
        "rate_mbps": p.rate_mbps,
        "rtt_ms": p.rtt_ms,
        "buffer_bdp": p.buffer_bdp,
        "loss": p.loss,
        "duration_s": p.duration,
        "seeds": len(p.seed_list),
    }
    for sim in ("ccsim", "ns3"):
        ss = runs[sim]
        row[f"{sim}_thr"] = [_mean([s["thr"][i] for s in ss]) for i in range(p.flows)]
        for k in ("total", "jain", "drops", "rtt", "rtt_min", "retx", "rtos", "recoveries", "queue", "util"):
            row[f"{sim}_{k}"] = _mean([s[k] for s in ss])
        row[f"{sim}_buffer_pkts"] = ss[0]["buffer_pkts"]
    row["d_total"] = rel(row["ccsim_total"], row["ns3_total"])
    row["d_rtt"] = rel(row["ccsim_rtt"], row["ns3_rtt"])
    row["d_drops"] = rel(row["ccsim_drops"], row["ns3_drops"])
    row["d_jain"] = row["ccsim_jain"] - row["ns3_jain"]
    row["flag"] = bool(
        (not math.isnan(row["d_total"]) and abs(row["d_total"]) > TOLERANCE)
        or (not math.isnan(row["d_rtt"]) and abs(row["d_rtt"]) > TOLERANCE)
    )
    if row["ccsim_buffer_pkts"] != row["ns3_buffer_pkts"]:
        raise RuntimeError(
            f"{p.name}: buffer conversion differs: ccsim {row['ccsim_buffer_pkts']} pkt, "
            f"ns-3 {row['ns3_buffer_pkts']} pkt"
        )
    return row


def run_grid(
    points: list[Point],
    jobs: int = 2,
    raw_dir: Path | None = None,
    use_cache: bool = True,
    progress: bool = True,
    variants: tuple[str, ...] = ("stock", "aligned"),
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Run every point in ccsim and in each ns-3 variant. Returns (rows, per-run records):
    one row per (variant, point)."""
    if raw_dir is not None:
        raw_dir.mkdir(parents=True, exist_ok=True)
    tasks = [(v, i, p, s) for v in variants for i, p in enumerate(points) for s in p.seed_list]
    # longest first (100 Mbps points), so the pool ends evenly
    tasks.sort(key=lambda t: -(t[2].rate_mbps * t[2].duration * (4 if t[2].cc == "bbr" else 1)))
    ns3_res: dict[tuple[str, int, int], dict[str, Any]] = {}
    t0 = time.perf_counter()
    with cf.ThreadPoolExecutor(max_workers=max(1, jobs)) as ex:
        futs = {ex.submit(run_ns3, p, s, raw_dir, use_cache, v): (v, i, p, s) for v, i, p, s in tasks}
        done = 0
        for fut in cf.as_completed(futs):
            v, i, p, s = futs[fut]
            ns3_res[(v, i, s)] = fut.result()
            done += 1
            if progress:
                w = ns3_res[(v, i, s)].get("process_seconds") if not ns3_res[(v, i, s)].get("_cached") else None
                print(
                    f"[{time.perf_counter() - t0:6.1f}s] ns-3 ({v}) {done}/{len(tasks)} {p.name} seed {s}"
                    + (f" ({w:.1f}s)" if w else " (cached)"),
                    file=sys.stderr,
                    flush=True,
                )
    ccsim_res: dict[tuple[int, int], dict[str, Any]] = {}
    for i, p in enumerate(points):  # in-process; fast
        for s in p.seed_list:
            ccsim_res[(i, s)] = run_ccsim(p, s, raw_dir)
    if progress:
        print(f"[{time.perf_counter() - t0:6.1f}s] ccsim: {len(ccsim_res)} runs done", file=sys.stderr)

    rows, records = [], []
    for v in variants:
        for i, p in enumerate(points):
            runs: dict[str, list[dict[str, Any]]] = {"ccsim": [], "ns3": []}
            for s in p.seed_list:
                for sim, res in (("ccsim", ccsim_res[(i, s)]), ("ns3", ns3_res[(v, i, s)])):
                    sm = summarize(sim, res)
                    runs[sim].append(sm)
                    if sim == "ccsim" and v != variants[0]:
                        continue  # one record per ccsim run
                    rec = {
                        "point": p.name,
                        "seed": s,
                        "sim": sim if sim == "ccsim" else f"ns3-{v}",
                        **{k: val for k, val in sm.items() if k != "thr"},
                    }
                    rec["thr"] = ";".join(f"{x:.4f}" for x in sm["thr"])
                    rec["wall_seconds"] = res.get("wall_seconds")
                    rec["cached"] = bool(res.get("_cached", False))
                    records.append(rec)
            row = aggregate(p, runs)
            row["variant"] = v
            rows.append(row)
    return rows, records


# --------------------------------------------------------------------------- output


def _pct(x: float) -> str:
    return "n/a" if x is None or math.isnan(x) else f"{x * 100:+.1f}%"


def _f(x: float, spec: str = ".2f") -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, spec)


def table_md(rows: list[dict[str, Any]], title: str = "") -> str:
    hdr = (
        "| # | scenario | per-flow Mbps ccsim / ns-3 | total Mbps ccsim / ns-3 | Δ total "
        "| Jain ccsim / ns-3 | drops ccsim / ns-3 | mean RTT ms ccsim / ns-3 | Δ RTT | flag |\n"
        "|---:|---|---|---:|---:|---:|---:|---:|---:|:---:|\n"
    )
    out = [title + "\n\n" if title else "", hdr]
    for n, r in enumerate(rows, 1):
        pf = " ".join(f"{a:.2f}/{b:.2f}" for a, b in zip(r["ccsim_thr"], r["ns3_thr"]))
        seeds = f" ({r['seeds']} seeds)" if r["seeds"] > 1 else ""
        out.append(
            f"| {n} | {r['point']}{seeds} | {pf} | {r['ccsim_total']:.2f} / {r['ns3_total']:.2f} "
            f"| {_pct(r['d_total'])} | {_f(r['ccsim_jain'], '.3f')} / {_f(r['ns3_jain'], '.3f')} "
            f"| {_f(r['ccsim_drops'], '.0f')} / {_f(r['ns3_drops'], '.0f')} "
            f"| {_f(r['ccsim_rtt'], '.1f')} / {_f(r['ns3_rtt'], '.1f')} | {_pct(r['d_rtt'])} "
            f"| {'**>10%**' if r['flag'] else ''} |\n"
        )
    return "".join(out)


def stats_md(rows: list[dict[str, Any]]) -> str:
    import statistics as st

    def q(xs: list[float], f: float) -> float:
        xs = sorted(xs)
        return xs[min(len(xs) - 1, int(round(f * (len(xs) - 1))))]

    lines = []
    for label, sel in (("all points", rows),) + tuple(
        (cc, [r for r in rows if r["cc"] == cc]) for cc in ("newreno", "cubic", "bbr", "newreno-rfc")
    ):
        if not sel:
            continue
        dt = [abs(r["d_total"]) for r in sel if not math.isnan(r["d_total"])]
        dr = [abs(r["d_rtt"]) for r in sel if not math.isnan(r["d_rtt"])]
        lines.append(
            f"| {label} | {len(sel)} | {st.median(dt) * 100:.1f}% | {q(dt, 0.9) * 100:.1f}% | {max(dt) * 100:.1f}% "
            f"| {st.median(dr) * 100:.1f}% | {q(dr, 0.9) * 100:.1f}% | {max(dr) * 100:.1f}% "
            f"| {sum(1 for r in sel if r['flag'])} |\n"
        )
    return (
        "| points | n | median abs Δ total | 90th pct | max | median abs Δ RTT | 90th pct | max | flagged |\n"
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n" + "".join(lines)
    )


VARIANT_TITLE = {
    "stock": "ccsim vs ns-3 3.44 as shipped",
    "aligned": "ccsim vs ns-3 3.44 aligned with Linux (--recovery=prr-sack --rateSampler=linux --clockGranularity=200ms)",
}


def extra_md(rows: list[dict[str, Any]]) -> str:
    out = [
        "| # | scenario | buffer pkt | retx ccsim / ns-3 | RTOs ccsim / ns-3 | recoveries ccsim / ns-3 "
        "| mean queue pkt ccsim / ns-3 | min RTT ms ccsim / ns-3 | Δ drops |\n"
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|\n"
    ]
    for n, r in enumerate(rows, 1):
        out.append(
            f"| {n} | {r['point']} | {r['ccsim_buffer_pkts']} | {_f(r['ccsim_retx'], '.0f')} / {_f(r['ns3_retx'], '.0f')} "
            f"| {_f(r['ccsim_rtos'], '.1f')} / {_f(r['ns3_rtos'], '.1f')} "
            f"| {_f(r['ccsim_recoveries'], '.0f')} / {_f(r['ns3_recoveries'], '.0f')} "
            f"| {_f(r['ccsim_queue'], '.1f')} / {_f(r['ns3_queue'], '.1f')} "
            f"| {_f(r['ccsim_rtt_min'], '.1f')} / {_f(r['ns3_rtt_min'], '.1f')} | {_pct(r['d_drops'])} |\n"
        )
    return "".join(out)


def combined_md(rows: list[dict[str, Any]]) -> str:
    """One table for docs/validation.md: stock ns-3 values, Δ against stock and aligned ns-3."""
    st = [r for r in rows if r["variant"] == "stock"]
    al = {r["point"]: r for r in rows if r["variant"] == "aligned"}
    out = [
        "| # | scenario | per-flow Mbps ccsim / ns-3 | total Mbps ccsim / ns-3 | Δ total stock / aligned "
        "| Jain ccsim / ns-3 | drops ccsim / ns-3 | mean RTT ms ccsim / ns-3 | Δ RTT stock / aligned | >10% |\n"
        "|---:|---|---|---:|---:|---:|---:|---:|---:|:---:|\n"
    ]
    for n, r in enumerate(st, 1):
        a = al.get(r["point"])
        pf = " ".join(f"{x:.2f}/{y:.2f}" for x, y in zip(r["ccsim_thr"], r["ns3_thr"]))
        seeds = f" ({r['seeds']} seeds)" if r["seeds"] > 1 else ""
        flag = ("stock" if r["flag"] else "") + (" aligned" if a and a["flag"] else "")
        out.append(
            f"| {n} | {r['point']}{seeds} | {pf} | {r['ccsim_total']:.2f} / {r['ns3_total']:.2f} "
            f"| {_pct(r['d_total'])} / {_pct(a['d_total']) if a else 'n/a'} "
            f"| {_f(r['ccsim_jain'], '.3f')} / {_f(r['ns3_jain'], '.3f')} "
            f"| {_f(r['ccsim_drops'], '.0f')} / {_f(r['ns3_drops'], '.0f')} "
            f"| {_f(r['ccsim_rtt'], '.1f')} / {_f(r['ns3_rtt'], '.1f')} "
            f"| {_pct(r['d_rtt'])} / {_pct(a['d_rtt']) if a else 'n/a'} | {flag.strip()} |\n"
        )
    return "".join(out)


def update_docs(doc: Path, rows: list[dict[str, Any]], meta: dict[str, Any]) -> None:
    """Replace the generated block of docs/validation.md (between the BEGIN/END markers)."""
    begin, end = "<!-- BEGIN GENERATED BY validation/ns3/run.py -->", "<!-- END GENERATED BY validation/ns3/run.py -->"
    text = doc.read_text()
    if begin not in text or end not in text:
        raise SystemExit(f"run.py: {doc} has no generated block ({begin} ... {end})")
    variants = list(dict.fromkeys(r["variant"] for r in rows))
    block = [
        begin,
        "\n\n",
        f"Generated by `{meta['command']}` on {meta['date']}: {meta['points']} points, "
        f"{meta['runs']} seeded runs per simulator set-up, {meta['wall_s']:.0f} s wall time "
        f"with {meta['jobs']} jobs on {meta['machine']}"
        + (f" ({meta['ns3_runs_cached']} of {meta['ns3_runs']} ns-3 runs from the cache)" if meta.get("ns3_runs_cached") else "")
        + ".\n\n",
    ]
    for v in variants:
        block += [f"**{VARIANT_TITLE.get(v, v)}**\n\n", stats_md([r for r in rows if r["variant"] == v]), "\n"]
    block += [
        "Per point: values are ccsim / stock ns-3; Δ = (ccsim - ns-3) / ns-3 against stock and against "
        "aligned ns-3 (the aligned ns-3 values, and retransmissions, RTOs, recoveries, mean queue "
        "and minimum RTT of both, are in validation/ns3/results/table.md).\n\n",
        combined_md(rows),
        "\n",
        end,
    ]
    i, j = text.index(begin), text.index(end) + len(end)
    doc.write_text(text[:i] + "".join(block) + text[j:])


def write_outputs(out: Path, rows: list[dict[str, Any]], records: list[dict[str, Any]], meta: dict[str, Any]) -> None:
    import csv

    out.mkdir(parents=True, exist_ok=True)
    flat = []
    for r in rows:
        f = {"variant": r["variant"], **{k: v for k, v in r.items() if k != "variant"}}
        f["ccsim_thr"] = ";".join(f"{x:.4f}" for x in r["ccsim_thr"])
        f["ns3_thr"] = ";".join(f"{x:.4f}" for x in r["ns3_thr"])
        flat.append(f)
    with open(out / "results.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(flat[0].keys()))
        w.writeheader()
        w.writerows(flat)
    with open(out / "runs.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(records[0].keys()))
        w.writeheader()
        w.writerows(records)
    try:
        import pandas as pd

        pd.DataFrame(flat).to_parquet(out / "results.parquet", index=False)
    except Exception as e:  # pragma: no cover - pyarrow missing
        print(f"run.py: no Parquet file ({e})", file=sys.stderr)

    variants = list(dict.fromkeys(r["variant"] for r in rows))
    md = [
        "# ccsim vs ns-3: cross-validation table\n\n",
        f"Generated by `{meta['command']}` on {meta['date']} ({meta['machine']}); "
        f"{meta['points']} points, {meta['runs']} seeded runs of ccsim and of each ns-3 variant "
        f"({', '.join(variants)}); wall time {meta['wall_s']:.0f} s with {meta['jobs']} jobs"
        + (
            f" ({meta['ns3_runs_cached']} of {meta['ns3_runs']} ns-3 runs taken from raw/, the cache)"
            if meta.get("ns3_runs_cached")
            else ""
        )
        + ". "
        f"ns-3 {meta['ns3']}, ccsim {meta['ccsim']}. Grid design, causes of every disagreement and "
        "the ns-3 variants: docs/validation.md.\n\n",
        "Δ = (ccsim - ns-3) / ns-3. Throughput is bytes cumulatively acknowledged at the sender / "
        "duration in both. Mean RTT: per-ACK sender-side sample (send time of the newest newly "
        "(s)acked, never retransmitted segment to ACK arrival), averaged per flow, then over flows. "
        f"Values are means over the seeds. Flag: |Δ total| or |Δ RTT| > {TOLERANCE * 100:.0f}%.\n\n",
        "## Summary\n\n",
    ]
    for v in variants:
        sel = [r for r in rows if r["variant"] == v]
        md += [f"### {VARIANT_TITLE.get(v, v)}\n\n", stats_md(sel), "\n"]
    for v in variants:
        sel = [r for r in rows if r["variant"] == v]
        md += [
            f"## {VARIANT_TITLE.get(v, v)}: all points\n\n",
            table_md(sel),
            "\nMore columns (results.csv has all):\n\n",
            extra_md(sel),
            "\n",
        ]
    (out / "table.md").write_text("".join(md))
    plot(rows, out / "agreement.png")
    (out / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    """agreement.png: ccsim vs ns-3 scatter of total throughput and mean RTT with the
    tolerance band, one row per ns-3 variant; differences.png: Δ per point."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    import numpy as np

    colors = {"newreno": "tab:blue", "cubic": "tab:orange", "bbr": "tab:green", "newreno-rfc": "tab:purple"}
    handles = [Line2D([], [], marker="o", ls="", color=c, label=cc) for cc, c in colors.items()]
    handles.append(Line2D([], [], marker="o", ls="", mfc="none", color="0.3", label="flagged"))
    variants = list(dict.fromkeys(r["variant"] for r in rows))
    fig, axes = plt.subplots(len(variants), 2, figsize=(11, 5 * len(variants)), squeeze=False)
    for vi, v in enumerate(variants):
        vrows = [r for r in rows if r["variant"] == v]
        for ax, key, label in (
            (axes[vi][0], "total", "total throughput (Mbps)"),
            (axes[vi][1], "rtt", "mean RTT (ms)"),
        ):
            vals = [r[f"{sim}_{key}"] for r in rows for sim in ("ns3", "ccsim")]
            good = [x for x in vals if x and not math.isnan(x) and x > 0]
            lo, hi = min(good) / 1.3, max(good) * 1.3
            g = np.geomspace(lo, hi, 100)
            ax.fill_between(g, g * (1 - TOLERANCE), g * (1 + TOLERANCE), color="0.85")
            ax.plot(g, g, color="0.4", lw=0.8)
            for cc, col in colors.items():
                sel = [r for r in vrows if r["cc"] == cc]
                if sel:
                    ax.scatter(
                        [r[f"ns3_{key}"] for r in sel],
                        [r[f"ccsim_{key}"] for r in sel],
                        s=[44 if r["flag"] else 20 for r in sel],
                        facecolors=["none" if r["flag"] else col for r in sel],
                        edgecolors=col,
                        linewidths=1.2,
                        zorder=3,
                    )
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlim(lo, hi)
            ax.set_ylim(lo, hi)
            ax.set_xlabel(f"ns-3 ({v}): {label}")
            ax.set_ylabel(f"ccsim: {label}")
            n_out = sum(1 for r in vrows if abs(r[f"d_{key}"]) > TOLERANCE)
            ax.set_title(f"ns-3 {v}: {n_out} of {len(vrows)} points outside the ±10% band", fontsize=10)
            ax.grid(True, which="both", alpha=0.3)
        axes[vi][0].legend(handles=handles, loc="upper left", fontsize=8)
    fig.suptitle("ccsim vs ns-3 on the same dumbbell scenarios (grey band: ±10%)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)

    # Δ per point
    fig, axes = plt.subplots(2, 1, figsize=(12, 7), sharex=True)
    markers = {"stock": "o", "aligned": "s"}
    for ax, key, label in ((axes[0], "d_total", "Δ total throughput"), (axes[1], "d_rtt", "Δ mean RTT")):
        ax.axhspan(-TOLERANCE * 100, TOLERANCE * 100, color="0.88")
        ax.axhline(0, color="0.4", lw=0.8)
        for v in variants:
            vrows = [r for r in rows if r["variant"] == v]
            ax.scatter(
                range(1, len(vrows) + 1),
                [r[key] * 100 for r in vrows],
                c=[colors.get(r["cc"], "k") for r in vrows],
                marker=markers.get(v, "^"),
                s=22 if v == "stock" else 16,
                alpha=0.9 if v == "aligned" else 0.6,
                zorder=3,
            )
        ax.set_ylabel(f"{label}, % (ccsim vs ns-3)")
        ax.grid(True, alpha=0.3)
    names = [r["point"] for r in rows if r["variant"] == variants[0]]
    axes[1].set_xticks(range(1, len(names) + 1))
    axes[1].set_xticklabels([str(i) for i in range(1, len(names) + 1)], fontsize=7)
    axes[1].set_xlabel("point # (as in table.md)")
    vh = [Line2D([], [], marker=markers.get(v, "^"), ls="", color="0.3", label=f"ns-3 {v}") for v in variants]
    axes[0].legend(handles=handles[:-1] + vh, fontsize=8, ncol=3, loc="lower left")
    fig.suptitle("Relative difference per point (grey band: ±10%)")
    fig.tight_layout()
    fig.savefig(path.with_name("differences.png"), dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--full", action="store_true", help="the full grid (default)")
    g.add_argument("--quick", action="store_true", help="6 points, 20 s each")
    ap.add_argument("--jobs", type=int, default=2, help="simulations at once (default 2)")
    ap.add_argument("--out", type=Path, default=None, help="output directory (default validation/ns3/results, --quick: validation/ns3/results-quick)")
    ap.add_argument("--no-cache", action="store_true", help="re-run ns-3 even if raw/ holds the result")
    ap.add_argument("--no-build", action="store_true", help="do not call bench/ns3/build.sh")
    ap.add_argument(
        "--docs",
        type=Path,
        default=None,
        help="also rewrite the generated block of this file (docs/validation.md)",
    )
    ap.add_argument("--cc", action="append", help="only these algorithm rows (repeatable)")
    ap.add_argument(
        "--variant",
        action="append",
        choices=sorted(NS3_VARIANTS),
        help="ns-3 set-ups to compare with (repeatable; default: stock and aligned)",
    )
    args = ap.parse_args(argv)

    out = args.out or (HERE / ("results-quick" if args.quick else "results"))
    ok, msg = ensure_ns3(build=not args.no_build)
    if not ok:
        print(f"run.py: ns-3 is not available: {msg}", file=sys.stderr)
        return 2
    points = quick_grid() if args.quick else full_grid()
    if args.cc:
        points = [p for p in points if p.cc in args.cc]
    t0 = time.perf_counter()
    variants = tuple(args.variant or ("stock", "aligned"))
    rows, records = run_grid(
        points, jobs=args.jobs, raw_dir=out / "raw", use_cache=not args.no_cache, variants=variants
    )
    wall = time.perf_counter() - t0

    import platform

    import ccsim

    meta = {
        "command": "python3 validation/ns3/run.py" + (" --quick" if args.quick else " --full") + f" --jobs {args.jobs}",
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Linux {platform.release()}",
        "points": len(points),
        "runs": sum(len(p.seed_list) for p in points),
        "wall_s": wall,
        "jobs": args.jobs,
        "ns3": "3.44 (PyPI ns3==3.44.post0)",
        "ccsim": getattr(ccsim, "__version__", "?"),
        "tolerance": TOLERANCE,
        "ns3_runs": sum(1 for r in records if r["sim"] != "ccsim"),
        "ns3_runs_cached": sum(1 for r in records if r["sim"] != "ccsim" and r["cached"]),
    }
    write_outputs(out, rows, records, meta)
    if args.docs:
        update_docs(args.docs, rows, meta)
    for v in variants:
        sel = [r for r in rows if r["variant"] == v]
        print(f"ns-3 {v}:")
        print(stats_md(sel))
    flags = ", ".join(f"{v}: {sum(1 for r in rows if r['variant'] == v and r['flag'])}" for v in variants)
    print(f"run.py: {len(points)} points, {meta['runs']} seeded runs per simulator set-up, {wall:.0f} s; flagged ({flags}); wrote {out}/table.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
