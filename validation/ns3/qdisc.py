#!/usr/bin/env python3
"""ccsim vs ns-3 with queue disciplines and ECN on the dumbbell's bottleneck.

    python3 validation/ns3/qdisc.py                # the full grid (ns-3: ~35 min on one
                                                   # niced core; cached runs are skipped)
    python3 validation/ns3/qdisc.py --quick        # 6 points, 1 seed, 5 s: a smoke check
    python3 validation/ns3/qdisc.py --only-ns3     # ns-3 alone, even if ccsim could run

Runs every point of the grid in ns-3 (validation/ns3/qdisc.cc, built by bench/ns3/build.sh,
which pip-installs ns3==3.44.post0 if needed) and, when the installed ccsim accepts the
queue-discipline scenario keys, in ccsim (`ccsim run FILE --json` on the TOML this script
writes). Until ccsim has them it says so in one line and reports ns-3's numbers alone.

The grid (validation/ns3/QDISC.md says why):
  AQM      {red, codel, fq_codel, pie} x ECN {off, on} x {cubic, newreno} x {10, 100 Mbps}
           x one-way delay {1, 40 ms} x {1, 4 flows}                          128 points
  DCTCP    dctcp over step-marking RED (K = 20 packets at 10 Mbps, 200 at 100 Mbps), ECN on,
           same rate / delay / flows                                            8 points
  FIFO     the control: a 1000-packet drop-tail queue disc, ECN off, cubic / newreno,
           same rate / delay / flows                                           16 points
Hard limit 1000 packets everywhere (the AQM, not the buffer, decides; for fq_codel it is the
discipline's own `limit`, which drops from the fattest flow queue, as in Linux), MSS 1448, 1 Gbps /
0 ms access links, 20 s simulated at 10 Mbps and 10 s at 100 Mbps, seeds 1-3: each seed
draws every flow's start time from U[0, 1 s) (both simulators start the same flow at the
same time; without it they are deterministic). ns-3 runs in the "aligned" set-up of run.py
(its TCP deviations from Linux switched off: PRR without the extra segment, Linux rate
samples, RTO = SRTT + max(200 ms, 4 RTTVAR)).

Writes to --out (default validation/ns3/results):
  qdisc_ns3.md    ns-3's numbers per point (means over the seeds)
  qdisc.md        the comparison table (ccsim columns empty while ccsim lacks the keys)
  qdisc.csv       one row per point, every number of both tables
  qdisc_meta.json run time, counts, versions
  raw_qdisc/      every ns-3 run's JSON line: the cache, keyed by command line and the
                  SHA-1 of the binary, and the ccsim summaries and scenario files
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import hashlib
import importlib.util
import json
import math
import os
import platform
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def _load(name: str, path: Path):
    """A module from a file, once per process under ``name``."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec and spec.loader
        sys.modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[name])
    return sys.modules[name]


#: validation/ns3/run.py (the ns-3 build helper, the TCP set-up, the algorithm names, the ns-3
#: set-ups; under the tests' name) and the tests' minimal TOML writer for scenario dicts
R = _load("ccsim_ns3_validation_run", HERE / "run.py")
to_toml = _load("ccsim_tests_support", HERE.parents[1] / "tests" / "python" / "_support.py").to_toml
NS3_BIN = R.NS3_DIR / "build" / "qdisc"
MSS = R.MSS  # 1448
PKT_BYTES = MSS + 52  # IP packet of a full segment (20 IP + 20 TCP + 12 timestamps)
BUFFER_PKTS = 1000
#: ccsim's link buffer under fq_codel, whose own limit is BUFFER_PKTS (Linux's default fq_codel
#: limit; any value above BUFFER_PKTS is never reached)
FQ_BUFFER_PKTS = 10240
START_SPREAD_S = 1.0
SEEDS = (1, 2, 3)
TOLERANCE = 0.10
VARIANT = "aligned"  # run.py's NS3_VARIANTS

#: ccsim name -> ns-3 qdisc.cc --cc (run.py's mapping; ccsim's newreno is Linux Reno)
NS3_CC = {**R.NS3_CC, "dctcp": "dctcp"}

#: RED (no Linux defaults: tc requires the thresholds). min_th ~ 20 ms of the link rate,
#: max_th = 3 min_th, max_p 0.1, W = 2^-9 (Linux keeps W a power of two), no gentle mode
#: (Linux has none), marks above max_th with ECN (Linux without `harddrop`).
RED_QW = 2.0**-9


def red_params(rate_mbps: float) -> dict[str, Any]:
    pkts_per_s = rate_mbps * 1e6 / 8 / PKT_BYTES
    min_th = max(5, round(0.020 * pkts_per_s))
    return {"min_th": min_th, "max_th": 3 * min_th, "max_p": 0.1, "qw": RED_QW, "gentle": False}


def dctcp_k(rate_mbps: float) -> int:
    """Step-marking threshold: about twice the DCTCP paper's bound K > C x RTT / 7 at the
    grid's longest RTT (80 ms): 10 Mbps 9.5 -> 20 packets, 100 Mbps 95 -> 200 packets
    (both 24 ms of queue)."""
    return {10.0: 20, 100.0: 200}[rate_mbps]


@dataclasses.dataclass(frozen=True)
class Point:
    qdisc: str  # fifo | red | codel | fq_codel | pie | red-step (DCTCP's step marking)
    ecn: bool
    cc: str  # key of NS3_CC
    rate_mbps: float
    delay_ms: float  # one way, all on the bottleneck
    flows: int
    duration_s: float
    seeds: tuple[int, ...] = SEEDS
    group: str = "aqm"

    @property
    def name(self) -> str:
        return (
            f"{self.qdisc}{' ecn' if self.ecn else ''} {self.cc} x{self.flows} "
            f"{self.rate_mbps:g}M {self.delay_ms:g}ms"
        )

    @property
    def qdisc_params(self) -> dict[str, Any]:
        """What differs from Linux's defaults (what the ccsim scenario's qdisc_params holds)."""
        if self.qdisc == "red":
            return red_params(self.rate_mbps)
        if self.qdisc == "red-step":
            k = dctcp_k(self.rate_mbps)
            return {"min_th": k, "max_th": k, "max_p": 1.0, "qw": 1.0, "gentle": False}
        return {}


def _duration(rate_mbps: float) -> float:
    return 20.0 if rate_mbps <= 10 else 10.0


def full_grid(seeds: tuple[int, ...] = SEEDS) -> list[Point]:
    pts: list[Point] = []
    dims = [(r, d, n) for r in (10.0, 100.0) for d in (1.0, 40.0) for n in (1, 4)]
    for q in ("red", "codel", "fq_codel", "pie"):
        for ecn in (False, True):
            for cc in ("cubic", "newreno"):
                pts += [Point(q, ecn, cc, r, d, n, _duration(r), seeds) for r, d, n in dims]
    pts += [Point("red-step", True, "dctcp", r, d, n, _duration(r), seeds, "dctcp") for r, d, n in dims]
    for cc in ("cubic", "newreno"):
        pts += [Point("fifo", False, cc, r, d, n, _duration(r), seeds, "fifo") for r, d, n in dims]
    return pts


def quick_grid() -> list[Point]:
    kw = dict(rate_mbps=10.0, delay_ms=20.0, flows=2, duration_s=5.0, seeds=(1,))
    return [
        Point("fifo", False, "cubic", group="fifo", **kw),
        Point("red", True, "newreno", **kw),
        Point("codel", False, "cubic", **kw),
        Point("fq_codel", True, "cubic", **kw),
        Point("pie", True, "cubic", **kw),
        Point("red-step", True, "dctcp", group="dctcp", **kw),
    ]


# --------------------------------------------------------------------------- scenarios


def starts(p: Point, seed: int) -> list[float]:
    """Each flow's start time, s, 1 us resolution: the same in both simulators."""
    rng = random.Random(f"qdisc starts {seed} {p.flows}")
    return [round(rng.uniform(0.0, START_SPREAD_S), 6) for _ in range(p.flows)]


def ccsim_scenario(p: Point, seed: int) -> dict[str, Any]:
    """The point as a ccsim scenario in the queue-discipline format (QDISC.md): the
    bottleneck's qdisc, its parameters where they differ from Linux's defaults, ECN on the
    qdisc and in [tcp]; run.py's TCP set-up otherwise."""
    bottleneck: dict[str, Any] = {
        "rate": f"{p.rate_mbps:g}Mbps",
        "delay": f"{p.delay_ms:g}ms",
        "buffer": f"{BUFFER_PKTS}pkt",
        "qdisc": "red" if p.qdisc == "red-step" else p.qdisc,
    }
    params = p.qdisc_params
    if params:
        # ccsim's names (`ccsim qdiscs red`): thresholds in packets, w_q is `weight`.
        bottleneck["qdisc_params"] = {("weight" if k == "qw" else k): v for k, v in params.items()}
    if p.qdisc == "fq_codel":
        # Linux's fq_codel has one limit, its own (`tc qdisc ... fq_codel limit 1000`; ns-3's
        # FqCoDelQueueDisc MaxSize 1000p): over it fq_codel_drop takes a batch from the head of
        # the fattest flow queue. ccsim's `buffer` is a hard limit in front of the discipline that
        # drops the arrival, so the 1000 packets go to fq_codel's `limit` and the buffer is set
        # above it, where it never acts (docs/validation.md, Q9).
        bottleneck["buffer"] = f"{FQ_BUFFER_PKTS}pkt"
        bottleneck["qdisc_params"] = {**bottleneck.get("qdisc_params", {}), "limit": BUFFER_PKTS}
    if p.ecn:
        bottleneck["ecn"] = True
    tcp = dict(R.ccsim_scenario(R.Point("cubic"), seed)["tcp"])
    if p.ecn:
        tcp["ecn"] = True
    cc, cc_params = R.CCSIM_CC.get(p.cc, (p.cc, {}))
    flows = []
    for t0 in starts(p, seed):
        f: dict[str, Any] = {"cc": cc, "access_rate": "1Gbps", "access_delay": "0ms", "start": f"{round(t0 * 1e6)}us"}
        if cc_params:
            f["params"] = dict(cc_params)
        flows.append(f)
    return {"duration": f"{p.duration_s:g}s", "seed": seed, "bottleneck": bottleneck, "tcp": tcp, "flows": flows}


def ns3_args(p: Point, seed: int) -> list[str]:
    args = [
        *R.NS3_VARIANTS[VARIANT],
        f"--qdisc={'red' if p.qdisc == 'red-step' else p.qdisc}",
        f"--ecn={int(p.ecn)}",
        f"--cc={NS3_CC[p.cc]}",
        f"--flows={p.flows}",
        "--starts=" + ",".join(f"{t:.6f}" for t in starts(p, seed)),
        f"--rate={p.rate_mbps * 1e6:.0f}bps",
        f"--delay={p.delay_ms * 1e6:.0f}ns",
        f"--buffer={BUFFER_PKTS}",
        f"--mss={MSS}",
        f"--duration={p.duration_s:g}",
        f"--seed={seed}",
        "--accessRate=1000000000bps",
        "--accessDelay=0ns",
        "--delAckCount=2",
        "--delAckTimeout=40ms",
        "--minRto=200ms",
    ]
    q = p.qdisc_params
    if q:
        args += [
            f"--redMinTh={q['min_th']}",
            f"--redMaxTh={q['max_th']}",
            f"--redMaxP={q['max_p']}",
            f"--redQW={q['qw']!r}",
            f"--redGentle={int(q['gentle'])}",
        ]
    return args


# --------------------------------------------------------------------------- running


_BIN_HASH: str | None = None


def _bin_hash() -> str:
    global _BIN_HASH
    if _BIN_HASH is None:
        _BIN_HASH = hashlib.sha1(NS3_BIN.read_bytes()).hexdigest()
    return _BIN_HASH


def cache_key(args: list[str]) -> str:
    return hashlib.sha1((json.dumps(args) + _bin_hash()).encode()).hexdigest()[:16]


def run_ns3(p: Point, seed: int, raw_dir: Path | None, use_cache: bool = True, nice: int = 15) -> dict[str, Any]:
    """One ns-3 run (niced), from the cache when its command line and binary are unchanged."""
    args = ns3_args(p, seed)
    cache = raw_dir / f"ns3-{cache_key(args)}.json" if raw_dir is not None else None
    if cache is not None and use_cache and cache.is_file():
        return {**json.loads(cache.read_text()), "_cached": True}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(
        [str(NS3_BIN), *args], capture_output=True, text=True, preexec_fn=(lambda: os.nice(nice)) if nice else None
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        raise RuntimeError(f"qdisc failed ({r.returncode}) for {p.name} seed {seed}: {r.stderr[-2000:]}")
    d = json.loads([ln for ln in r.stdout.splitlines() if ln.startswith("{")][-1])
    d["process_seconds"] = time.perf_counter() - t0
    d["cpu_seconds"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    d["args"] = args
    if cache is not None:
        cache.write_text(json.dumps(d) + "\n")
    return d


class CcsimLacksQdisc(Exception):
    """ccsim rejected the scenario's queue-discipline or ECN keys."""


def run_ccsim(p: Point, seed: int, raw_dir: Path | None) -> dict[str, Any]:
    """`ccsim run FILE --json` on the point's TOML (the CLI, as a user runs it)."""
    sc = ccsim_scenario(p, seed)
    text = to_toml(sc)
    with tempfile.TemporaryDirectory() as td:
        path = Path(td) / "scenario.toml"
        path.write_text(text)
        r = subprocess.run(["ccsim", "run", str(path), "--json", "--no-timeseries"], capture_output=True, text=True)
    if r.returncode != 0:
        msg = (r.stderr.strip().splitlines() or ["no message"])[-1]
        if "unknown key" in msg or "qdisc" in msg or "ecn" in msg:
            raise CcsimLacksQdisc(msg.replace(str(path), "scenario.toml"))
        raise RuntimeError(f"ccsim failed for {p.name} seed {seed}: {msg}")
    d = json.loads(r.stdout)
    if raw_dir is not None:
        key = hashlib.sha1(text.encode()).hexdigest()[:16]
        (raw_dir / f"ccsim-{key}.toml").write_text(text)
        (raw_dir / f"ccsim-{key}.json").write_text(json.dumps(d, default=str) + "\n")
    return d


def ccsim_support() -> str | None:
    """None when the installed ccsim runs a queue-discipline scenario, else why not."""
    try:
        run_ccsim(Point("codel", True, "cubic", 10.0, 1.0, 1, 2.0, (1,)), 1, None)
    except CcsimLacksQdisc as e:
        return f"the installed ccsim does not accept the queue-discipline / ECN keys yet ({e})"
    except (OSError, RuntimeError) as e:
        return f"ccsim could not run ({e})"
    return None


# --------------------------------------------------------------------------- metrics


def _num(x: Any) -> float:
    return float("nan") if x is None else float(x)


def summarize(sim: str, d: dict[str, Any]) -> dict[str, Any]:
    """The compared numbers of one run. Queueing delay: ns-3's arrival at the queue disc to
    start of serialisation (qdelay_total_*: the queue disc's sojourn plus the one-packet
    device queue), ccsim's queue_delay_* (its slot has no device queue)."""
    flows, b = d["flows"], d["bottleneck"]
    thr = [f["throughput_mbps"] for f in flows]
    total, sq = sum(thr), sum(x * x for x in thr)
    if sim == "ns3":
        qmean, qp95 = b["qdelay_total_mean_ms"], b["qdelay_total_p95_ms"]
    else:
        qmean, qp95 = b.get("queue_delay_mean_ms", b.get("qdelay_mean_ms")), b.get("queue_delay_p95_ms", b.get("qdelay_p95_ms"))
    return {
        "thr": thr,
        "total": total,
        "jain": total * total / (len(thr) * sq) if sq > 0 else float("nan"),
        "util": _num(b.get("utilization")),
        "qdelay": _num(qmean),
        "qdelay_p95": _num(qp95),
        "sojourn": _num(b.get("qdelay_mean_ms")) if sim == "ns3" else float("nan"),
        "sojourn_p95": _num(b.get("qdelay_p95_ms")) if sim == "ns3" else float("nan"),
        "queue": _num(b.get("queue_mean_pkts")),
        "drops": _num(b.get("drops")),
        "aqm_drops": _num(b.get("aqm_drops")),
        "marks": _num(b.get("marks")),
        "ce": sum(_num(f.get("ce_received")) for f in flows),
        "ece": sum(_num(f.get("ece_reductions")) for f in flows),
        "retx": sum(_num(f.get("retransmits")) for f in flows),
        "rtos": sum(_num(f.get("rto_count")) for f in flows),
        "other_drops": _num(b.get("other_queue_drops", 0)) + _num(b.get("device_drops", 0)),
    }


def _mean(xs: list[float]) -> float:
    xs = [x for x in xs if not math.isnan(x)]
    return sum(xs) / len(xs) if xs else float("nan")


def aggregate(ss: list[dict[str, Any]]) -> dict[str, Any]:
    out = {k: _mean([s[k] for s in ss]) for k in ss[0] if k != "thr"}
    out["thr"] = [_mean([s["thr"][i] for s in ss]) for i in range(len(ss[0]["thr"]))]
    out["total_sd"] = statistics.stdev([s["total"] for s in ss]) if len(ss) > 1 else 0.0
    return out


def run_grid(points: list[Point], raw_dir: Path | None, use_cache: bool = True, ccsim: bool = True, nice: int = 15, progress: bool = True) -> dict[str, Any]:
    if raw_dir is not None:
        raw_dir.mkdir(parents=True, exist_ok=True)
    # seed-major: every point's first seed before any point's second (a cut-short run leaves
    # whole seeds, which --seeds N then reads from the cache)
    tasks = [(p, s) for s in sorted({s for p in points for s in p.seeds}) for p in points if s in p.seeds]
    ns3: dict[tuple[Point, int], dict[str, Any]] = {}
    t0 = time.perf_counter()
    for n, (p, s) in enumerate(tasks, 1):  # one ns-3 process at a time
        d = ns3[(p, s)] = run_ns3(p, s, raw_dir, use_cache, nice)
        if progress:
            how = "cached" if d.get("_cached") else f"{d['process_seconds']:.1f} s"
            print(f"[{time.perf_counter() - t0:7.1f}s] ns-3 {n}/{len(tasks)} {p.name} seed {s} ({how})", file=sys.stderr, flush=True)
    missing = ccsim_support() if ccsim else "not run (--only-ns3)"
    cc: dict[tuple[Point, int], dict[str, Any]] = {}
    if missing is None:
        for p, s in tasks:
            cc[(p, s)] = run_ccsim(p, s, raw_dir)
    if progress:
        print(missing or f"ccsim: {len(cc)} runs", file=sys.stderr)
    rows = []
    for p in points:
        row = {"point": p, "ns3": aggregate([summarize("ns3", ns3[(p, s)]) for s in p.seeds]), "ccsim": None}
        if missing is None:
            row["ccsim"] = aggregate([summarize("ccsim", cc[(p, s)]) for s in p.seeds])
        rows.append(row)
    done = [d for d in ns3.values() if not d.get("_cached")]
    return {
        "rows": rows,
        "ccsim_missing": missing,
        "ns3_runs": len(ns3),
        "ns3_cached": len(ns3) - len(done),
        # as measured when each run ran (cached ones included)
        "ns3_process_s": sum(d.get("process_seconds", 0.0) for d in ns3.values()),
        "ns3_cpu_s": sum(d.get("cpu_seconds", 0.0) for d in ns3.values()),
        "ns3_process_s_by_rate": {
            f"{r:g}": sum(d.get("process_seconds", 0.0) for (p, _), d in ns3.items() if p.rate_mbps == r)
            for r in sorted({p.rate_mbps for p in points})
        },
    }


# --------------------------------------------------------------------------- report

_f, _pct, rel = R._f, R._pct, R.rel


def _both(cc: dict[str, Any] | None, ns: dict[str, Any], k: str, spec: str) -> str:
    return f"{_f(cc[k], spec) if cc else '—'} / {_f(ns[k], spec)}"


def exposed(r: dict[str, Any]) -> bool:
    """ECN on and packets lost: ns-3 then ends a loss recovery or RTO recovery on the next ECE
    (QDISC.md, deviation 14), which Linux does not."""
    return r["point"].ecn and r["ns3"]["drops"] + r["ns3"]["aqm_drops"] > 0


def _name(r: dict[str, Any]) -> str:
    return r["point"].name + (" †" if exposed(r) else "")


def comparison_md(res: dict[str, Any]) -> str:
    out = [
        "| # | point | total Mbps ccsim / ns-3 | Δ | Jain ccsim / ns-3 | qdelay mean ms ccsim / ns-3 | Δ "
        "| qdelay p95 ms ccsim / ns-3 | Δ | drops (buffer + AQM) ccsim / ns-3 | marks ccsim / ns-3 | >10% |\n",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|:---:|\n",
    ]
    for n, r in enumerate(res["rows"], 1):
        ns, cc = r["ns3"], r["ccsim"]
        d = {k: rel(cc[k], ns[k]) if cc else float("nan") for k in ("total", "qdelay", "qdelay_p95")}
        flag = any(abs(x) > TOLERANCE for x in (d["total"], d["qdelay"]) if not math.isnan(x))
        drops_cc = _f(cc["drops"] + cc["aqm_drops"], ".0f") if cc else "—"
        out.append(
            f"| {n} | {_name(r)} | {_both(cc, ns, 'total', '.2f')} | {_pct(d['total'])} "
            f"| {_both(cc, ns, 'jain', '.3f')} | {_both(cc, ns, 'qdelay', '.1f')} | {_pct(d['qdelay'])} "
            f"| {_both(cc, ns, 'qdelay_p95', '.1f')} | {_pct(d['qdelay_p95'])} "
            f"| {drops_cc} / {ns['drops'] + ns['aqm_drops']:.0f} | {_both(cc, ns, 'marks', '.0f')} "
            f"| {'**yes**' if flag else ''} |\n"
        )
    return "".join(out)


def ns3_md(res: dict[str, Any]) -> str:
    out = [
        "| # | point | total Mbps (sd) | Jain | util | qdelay mean / p95 ms | sojourn mean / p95 ms "
        "| queue pkt | drops buffer / AQM | marks | CE rcvd | ECE cuts | retx | RTOs |\n",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    ]
    for n, r in enumerate(res["rows"], 1):
        s = r["ns3"]
        out.append(
            f"| {n} | {_name(r)} | {s['total']:.2f} ({s['total_sd']:.2f}) | {s['jain']:.3f} | {s['util']:.3f} "
            f"| {s['qdelay']:.1f} / {s['qdelay_p95']:.1f} | {s['sojourn']:.1f} / {s['sojourn_p95']:.1f} "
            f"| {s['queue']:.1f} | {s['drops']:.0f} / {s['aqm_drops']:.0f} | {s['marks']:.0f} | {s['ce']:.0f} "
            f"| {s['ece']:.0f} | {s['retx']:.0f} | {s['rtos']:.1f} |\n"
        )
    return "".join(out)


def group_summary_md(res: dict[str, Any]) -> str:
    """Per discipline (and ECN): ranges over its points of the headline numbers."""
    out = [
        "| discipline | points | utilization min-max | qdelay mean ms min-max | qdelay p95 ms max "
        "| buffer drops total | AQM drops total | marks total |\n",
        "|---|---:|---:|---:|---:|---:|---:|---:|\n",
    ]
    keys: dict[str, list[dict[str, Any]]] = {}
    for r in res["rows"]:
        p = r["point"]
        keys.setdefault(f"{p.qdisc}{' ecn' if p.ecn else ''}{' ' + p.cc if p.cc == 'dctcp' else ''}", []).append(r["ns3"])
    for k, ss in keys.items():
        out.append(
            f"| {k} | {len(ss)} | {min(s['util'] for s in ss):.3f}-{max(s['util'] for s in ss):.3f} "
            f"| {min(s['qdelay'] for s in ss):.1f}-{max(s['qdelay'] for s in ss):.1f} "
            f"| {max(s['qdelay_p95'] for s in ss):.1f} | {sum(s['drops'] for s in ss):.0f} "
            f"| {sum(s['aqm_drops'] for s in ss):.0f} | {sum(s['marks'] for s in ss):.0f} |\n"
        )
    return "".join(out)


def checks(res: dict[str, Any]) -> list[str]:
    """Sanity findings on ns-3's numbers (QDISC.md says what to expect)."""
    lines = []
    other = sum(r["ns3"]["other_drops"] for r in res["rows"])
    lines.append(f"drops anywhere but the bottleneck queue disc (device queues, access links, ACK path): {other:.0f}")
    ecn = [r for r in res["rows"] if r["point"].ecn]
    lines.append(
        f"ECN points with packet losses (marked †: exposed to ns-3's ECE ending loss recovery, QDISC.md "
        f"deviation 14): {sum(1 for r in ecn if exposed(r))} of {len(ecn)}"
    )
    for r in res["rows"]:
        p, s = r["point"], r["ns3"]
        if p.qdisc in ("codel", "fq_codel") and s["qdelay"] > 15:
            lines.append(f"{p.name}: CoDel mean queueing delay {s['qdelay']:.1f} ms > 15 ms")
        if p.qdisc == "red-step" and s["drops"] + s["aqm_drops"] > 0:
            lines.append(f"{p.name}: DCTCP drops {s['drops'] + s['aqm_drops']:.0f}")
        if p.ecn and p.qdisc not in ("fifo", "pie") and s["aqm_drops"] >= 20:
            # a few are expected: retransmissions and SYNs are not ECT (RFC 3168, Linux too), and
            # PIE drops ECT packets while its probability is above 10 % (as Linux)
            lines.append(f"{p.name}: {s['aqm_drops']:.1f} AQM drops with ECN on")
    return lines


def header_md(res: dict[str, Any], meta: dict[str, Any]) -> str:
    return (
        f"Generated by `{meta['command']}` on {meta['date']} ({meta['machine']}): {meta['points']} points, "
        f"{res['ns3_runs']} ns-3 runs ({res['ns3_cached']} from the cache this time); the ns-3 runs took "
        f"{res['ns3_process_s']:.0f} s of wall time one at a time under `nice -n 15` "
        f"({', '.join(f'{k} Mbps {v:.0f} s' for k, v in res['ns3_process_s_by_rate'].items())}), "
        f"{res['ns3_cpu_s']:.0f} s of CPU. ns-3 {meta['ns3']} in run.py's \"{VARIANT}\" set-up; ccsim {meta['ccsim']}. "
        "Set-up, parameters and ns-3's deviations from Linux: validation/ns3/QDISC.md.\n\n"
        "Values are means over the seeds (each seed draws the flows' start times). Throughput: bytes "
        "cumulatively ACKed x 8 / (duration - start), summed over the flows (sd: over the seeds). qdelay: "
        "arrival at the queue disc to start of serialisation, every transmitted packet (ns-3: the queue "
        "disc's sojourn plus the wait in the 1-packet device queue below it). sojourn: ns-3's SojournTime "
        "trace alone (enqueue to dequeue of the queue disc, also packets CoDel drops at dequeue). queue: "
        "time-averaged packets in the queue disc. Drops: buffer = the 1000-packet hard limit, AQM = "
        "dropped by the discipline's decision. CE rcvd: data packets arriving with CE; ECE cuts: the "
        "senders' window reductions on ECE (entries into CWR). †: ECN on and packets lost, so "
        "ns-3's ECE-ends-recovery deviation (QDISC.md, 14) can act.\n\n"
    )


def write_outputs(out: Path, res: dict[str, Any], meta: dict[str, Any]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    head = header_md(res, meta)
    found = "".join(f"- {ln}\n" for ln in checks(res))
    (out / "qdisc_ns3.md").write_text(
        "# Queue disciplines and ECN: ns-3's numbers\n\n" + head + "## Checks\n\n" + found
        + "\n## Per discipline\n\n" + group_summary_md(res) + "\n## Every point\n\n" + ns3_md(res)
    )
    miss = res["ccsim_missing"]
    (out / "qdisc.md").write_text(
        "# Queue disciplines and ECN: ccsim vs ns-3\n\n" + head
        + (f"**ccsim side pending: {miss}.** The ccsim columns are empty; ns-3's numbers alone.\n\n" if miss else "")
        + f"Δ = (ccsim - ns-3) / ns-3; flag: |Δ| > {TOLERANCE:.0%} in total throughput or mean qdelay.\n\n"
        + comparison_md(res)
    )
    fields = ["point", "qdisc", "ecn", "cc", "rate_mbps", "delay_ms", "flows", "duration_s", "seeds"]
    keys = [k for k in res["rows"][0]["ns3"] if k != "thr"]
    with open(out / "qdisc.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(fields + [f"{sim}_{k}" for sim in ("ns3", "ccsim") for k in ["thr", *keys]])
        for r in res["rows"]:
            p = r["point"]
            vals = [p.name, p.qdisc, p.ecn, p.cc, p.rate_mbps, p.delay_ms, p.flows, p.duration_s, len(p.seeds)]
            for sim in ("ns3", "ccsim"):
                s = r[sim]
                vals += [";".join(f"{x:.4f}" for x in s["thr"]) if s else ""] + [s[k] if s else "" for k in keys]
            w.writerow(vals)
    (out / "qdisc_meta.json").write_text(json.dumps({**meta, **{k: v for k, v in res.items() if k != "rows"}}, indent=1) + "\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="6 points, 1 seed, 5 s (a smoke check)")
    ap.add_argument("--seeds", type=int, default=len(SEEDS), help="seeds 1..N per point (default 3)")
    ap.add_argument("--out", type=Path, default=None, help="default validation/ns3/results (--quick: results-quick)")
    ap.add_argument("--only-ns3", action="store_true", help="do not run ccsim")
    ap.add_argument("--no-cache", action="store_true", help="re-run ns-3 even if raw_qdisc/ holds the result")
    ap.add_argument("--no-build", action="store_true", help="do not call bench/ns3/build.sh")
    ap.add_argument("--prune", action="store_true", help="delete cached ns-3 runs that are not of this grid and binary")
    ap.add_argument("--nice", type=int, default=15, help="niceness of the ns-3 processes (default 15)")
    args = ap.parse_args(argv)

    out = args.out or (HERE / ("results-quick" if args.quick else "results"))
    ok, msg = R.ensure_ns3(build=not args.no_build)
    if ok and not (NS3_BIN.is_file() and os.access(NS3_BIN, os.X_OK)):
        ok, msg = False, f"{NS3_BIN} not built"
    if not ok:
        print(f"qdisc.py: ns-3 is not available: {msg}", file=sys.stderr)
        return 2
    points = quick_grid() if args.quick else full_grid(tuple(range(1, args.seeds + 1)))
    t0 = time.perf_counter()
    res = run_grid(points, out / "raw_qdisc", use_cache=not args.no_cache, ccsim=not args.only_ns3, nice=args.nice)
    wall = time.perf_counter() - t0
    try:
        import ccsim

        ccsim_version = getattr(ccsim, "__version__", "?")
    except ImportError:
        ccsim_version = "not installed"
    meta = {
        "command": "python3 validation/ns3/qdisc.py" + (" --quick" if args.quick else f" --seeds {args.seeds}") + (" --only-ns3" if args.only_ns3 else ""),
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
        "points": len(points),
        "wall_s": wall,
        "ns3": "3.44 (PyPI ns3==3.44.post0)",
        "ccsim": ccsim_version,
    }
    write_outputs(out, res, meta)
    if args.prune:
        keep = {f"ns3-{cache_key(ns3_args(p, s))}.json" for p in points for s in p.seeds}
        stale = [f for f in (out / "raw_qdisc").glob("ns3-*.json") if f.name not in keep]
        for f in stale:
            f.unlink()
        print(f"qdisc.py: pruned {len(stale)} cached runs not of this grid and binary", file=sys.stderr)
    print(group_summary_md(res))
    print("\n".join(checks(res)))
    print(
        f"qdisc.py: {len(points)} points, {res['ns3_runs']} ns-3 runs ({res['ns3_cached']} cached), {wall:.0f} s wall; "
        f"ccsim: {res['ccsim_missing'] or 'compared'}; wrote {out}/qdisc_ns3.md and qdisc.md",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
