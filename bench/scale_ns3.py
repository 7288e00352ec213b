#!/usr/bin/env python3
"""Speed against ns-3 as the flow count grows: the same many-flow dumbbell in both simulators.

The scenario is ``bench/scale.py``'s (CUBIC flows on one bottleneck, 20 ms one way, a 1 BDP
drop-tail buffer, access links 10x the bottleneck rate), at a rate and duration ns-3 can run
in minutes. Each flow count runs in ccsim (``ccsim run FILE --json``, ``--ccsim-repeat`` times)
and once in the ns-3 reference program (command line derived from the same file by
``bench/bench.py``), one right after the other, each child pinned to one core and started from
a fresh, small worker process (so its peak RSS is its own). Reported per flow count:

- each simulator's wall time of its simulation loop per delivered data segment (ccsim: the
  median of its runs), the ratio (ns-3 / ccsim) and each one's cost relative to its own
  2-flow run: does ccsim's lead hold as flows grow?
- the same from CPU time, steadier than wall time on a shared core: ns-3's is
  ``dumbbell_many``'s CPU time of ``Simulator::Run``; ccsim's is its process CPU time (user +
  system, ``os.wait4``) less that of a 1 ms run of the same flows (start-up, set-up, output),
  medians of ``--ccsim-repeat`` runs of each;
- each one's peak RSS and ns-3's set-up time (topology, global routing; outside the loop).

    bash bench/ns3/build.sh && python3 bench/scale_ns3.py                 # 2, 10, 100, 250 flows
    python3 bench/scale_ns3.py --flows 2,100,1000,10000 --duration 5
    python3 bench/scale_ns3.py --flows 2,100,1000 --durations 20,20,5     # a duration per count
    python3 bench/scale_ns3.py --check                  # dumbbell_many == dumbbell at 2, 10 flows

ns-3 program: ``bench/ns3/build/dumbbell`` gives sender i the subnet 10.1.(i + 1).0/24, so it
runs at most 254 flows. By default the script runs ``bench/ns3/build/dumbbell_many`` at every
flow count: the same program with sender i on the /30 subnet 10.128.0.0 + 4 i, which also
reports its loop's CPU time. ``--program auto`` runs ``dumbbell`` up to 254 flows (no CPU
column there). ``--check`` runs both programs on the same command lines (2 and 10 flows, the
given rate and duration) and compares their outputs but for timings: they must be equal.

Results go to stdout and to ``bench/results/scale_ns3.md``. Run it on a quiet machine: both
halves are timed.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import datetime as _dt
import json
import multiprocessing as mp
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))
import bench  # noqa: E402  (load_scenario, NS3_BIN, _last_json_line)
import scale  # noqa: E402  (scenario, default_ccsim, write_md)

RESULTS = BENCH_DIR / "results" / "scale_ns3.md"
NS3_MANY_BIN = BENCH_DIR / "ns3" / "build" / "dumbbell_many"
DUMBBELL_MAX_FLOWS = 254  # dumbbell.cc: sender i on 10.1.(i + 1).0/24
EMPTY_RUN_S = 0.001  # ccsim's CPU baseline: the same flows, 1 ms simulated
# Output fields that hold timings: everything else must match in --check.
TIMING_FIELDS = ("wall_seconds", "setup_seconds", "peak_rss_mb", "run_cpu_seconds")


def run_child(argv: list[str], pin: bool, timeout_s: float) -> dict:
    """Run one simulator child (in a fresh worker process): its JSON summary's numbers, its
    CPU time and peak RSS (``os.wait4`` on this very child), no raw output."""
    if pin and shutil.which("taskset"):
        argv = ["taskset", "-c", "0", *argv]  # taskset execs argv: same pid
    env = dict(os.environ)
    for var in ("RAYON_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        env[var] = "1"
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(argv, stdout=out, stderr=err, env=env)
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid == p.pid:
                break
            if time.perf_counter() - t0 > timeout_s:
                p.kill()
                os.wait4(p.pid, 0)
                return {"ok": False, "error": f"stopped after {timeout_s:g} s (--timeout)"}
            time.sleep(0.01)
        rc = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode(errors="replace")
        if rc != 0:
            tail = err.read().decode(errors="replace").strip().splitlines()[-3:]
            return {"ok": False, "error": f"exit {rc}: " + " | ".join(tail)}
    try:
        d = bench._last_json_line(stdout)
    except (ValueError, json.JSONDecodeError) as e:
        return {"ok": False, "error": f"bad output ({e}): {stdout[:200]!r}"}
    flows = d.get("flows") or []
    return {
        "ok": True,
        "wall_s": float(d["wall_seconds"]),
        "segments": sum(int(f["segments_delivered"]) for f in flows),
        "total_mbps": sum(float(f["throughput_mbps"]) for f in flows),
        "cpu_s": ru.ru_utime + ru.ru_stime,
        "run_cpu_s": d.get("run_cpu_seconds"),
        "setup_s": d.get("setup_seconds"),
        "peak_rss_mb": ru.ru_maxrss / 1024.0,  # Linux: KiB
    }


def run_ns3_json(binary: Path, args: list[str], pin: bool) -> dict:
    """One ns-3 run's whole JSON output (for --check)."""
    rc, out, err, _, _ = bench.run_child([str(binary), *args], pin)
    if rc != 0:
        raise RuntimeError(f"{binary.name} exited {rc}: {err.strip()[-500:]}")
    return bench._last_json_line(out)


def check(args: argparse.Namespace, pin: bool) -> int:
    """dumbbell_many gives dumbbell's output (but for timings) at 2 and 10 flows."""
    for b in (args.ns3_bin, args.ns3_many_bin):
        if not b.exists():
            print(f"error: {b} is missing; build it with `bash bench/ns3/build.sh`", file=sys.stderr)
            return 2
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for n in (2, 10):
            path = Path(tmp) / f"scale_{n}.toml"
            path.write_text(scale.scenario(n, args.rate, args.duration), encoding="utf-8")
            sc = bench.load_scenario(f"scale_{n}", path, None)
            a = run_ns3_json(args.ns3_bin, sc.ns3_args, pin)
            b = run_ns3_json(args.ns3_many_bin, sc.ns3_args, pin)
            ta = {k: a.pop(k, None) for k in TIMING_FIELDS}
            tb = {k: b.pop(k, None) for k in TIMING_FIELDS}
            same = json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
            bad += not same
            print(
                f"{n:>3} flows, {args.rate:g} Gbps, {args.duration:g} s: outputs but timings "
                f"{'identical' if same else 'DIFFER'} ({a['events']:,} / {b['events']:,} events, "
                f"{a['segments_delivered']:,} / {b['segments_delivered']:,} segments, "
                f"{a['total_throughput_mbps']:.3f} / {b['total_throughput_mbps']:.3f} Mbps); loop wall "
                f"dumbbell {ta['wall_seconds']:.2f} s, dumbbell_many {tb['wall_seconds']:.2f} s",
                flush=True,
            )
    return 1 if bad else 0


def _med(xs: list[float]) -> float:
    return statistics.median(xs)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--flows", default="2,10,100,250", help="comma-separated flow counts (default 2,10,100,250)")
    ap.add_argument("--rate", type=float, default=1.0, help="bottleneck rate in Gbps (default 1)")
    ap.add_argument("--duration", type=float, default=5.0, help="simulated seconds (default 5)")
    ap.add_argument("--durations", default=None, help="simulated seconds per flow count, comma-separated")
    ap.add_argument("--ccsim", default=None, help='ccsim command (default: "ccsim", else "python -m ccsim")')
    ap.add_argument("--ns3-bin", type=Path, default=bench.NS3_BIN, help="dumbbell (up to 254 flows)")
    ap.add_argument("--ns3-many-bin", type=Path, default=NS3_MANY_BIN, help="dumbbell_many (any flow count)")
    ap.add_argument(
        "--program",
        choices=("many", "auto"),
        default="many",
        help="many: dumbbell_many at every count (default); auto: dumbbell up to 254 flows",
    )
    ap.add_argument("--check", action="store_true", help="only compare dumbbell_many with dumbbell at 2 and 10 flows")
    ap.add_argument("--ccsim-repeat", type=int, default=5, help="ccsim runs per flow count (default 5)")
    ap.add_argument("--timeout", type=float, default=3600.0, help="stop a child after this many seconds (default 3600)")
    ap.add_argument("--no-pin", action="store_true", help="do not pin children to CPU 0")
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    pin = not args.no_pin and shutil.which("taskset") is not None
    if args.check:
        return check(args, pin)
    flows = [int(x) for x in args.flows.split(",")]
    durations = [float(x) for x in args.durations.split(",")] if args.durations else [args.duration] * len(flows)
    if args.ccsim_repeat < 1:
        print("error: --ccsim-repeat must be at least 1", file=sys.stderr)
        return 2
    if len(durations) != len(flows):
        print(f"error: --durations has {len(durations)} values for {len(flows)} flow counts", file=sys.stderr)
        return 2

    def program(n: int) -> Path:
        return args.ns3_many_bin if args.program == "many" or n > DUMBBELL_MAX_FLOWS else args.ns3_bin

    for b in sorted({program(n) for n in flows}):
        if not b.exists():
            print(f"error: {b} is missing; build it with `bash bench/ns3/build.sh`", file=sys.stderr)
            return 2
    cmd = args.ccsim.split() if args.ccsim else scale.default_ccsim()

    rows = []
    failed: list[tuple[int, float, str, list[str]]] = []
    # Each child is started from a fresh, small worker process (a fork server's child): Linux
    # carries the peak RSS of the process that forks over into the child's ru_maxrss.
    pool = cf.ProcessPoolExecutor(max_workers=1, mp_context=mp.get_context("forkserver"), max_tasks_per_child=1)

    def child(argv: list[str]) -> dict:
        return pool.submit(run_child, argv, pin, args.timeout).result()

    with pool, tempfile.TemporaryDirectory() as tmp:
        for n, dur in zip(flows, durations):
            path = Path(tmp) / f"scale_{n}.toml"
            path.write_text(scale.scenario(n, args.rate, dur), encoding="utf-8")
            empty = Path(tmp) / f"scale_{n}_empty.toml"
            empty.write_text(scale.scenario(n, args.rate, EMPTY_RUN_S), encoding="utf-8")
            sc = bench.load_scenario(f"scale_{n}", path, None)
            ns3 = program(n)
            cs, es = [], []
            for _ in range(args.ccsim_repeat):  # alternate: both see the same load
                cs.append(child([*cmd, "run", str(path), "--json"]))
                es.append(child([*cmd, "run", str(empty), "--json"]))
            m = child([str(ns3), *sc.ns3_args])
            bad = [f"ccsim: {r['error']}" for r in cs + es if not r["ok"]]
            bad += [f"ns-3: {m['error']}"] if not m["ok"] else []
            for name, r in (("ccsim", cs[0]), ("ns-3", m)):
                if r.get("segments") == 0:
                    bad.append(f"{name}: no segments delivered")
            if bad:
                # Say so in the table and go on: the other counts' rows still stand.
                print(f"error at {n} flows: {'; '.join(bad)}", file=sys.stderr, flush=True)
                failed.append((n, dur, ns3.name, bad))
                continue
            segs_c, segs_m = cs[0]["segments"], m["segments"]
            ccsim_cpu = _med([r["cpu_s"] for r in cs]) - _med([r["cpu_s"] for r in es])
            row = {
                "flows": n,
                "duration": dur,
                "program": ns3.name,
                "ccsim_ns": _med([r["wall_s"] for r in cs]) * 1e9 / segs_c,
                "ns3_ns": m["wall_s"] * 1e9 / segs_m,
                "ccsim_cpu_ns": ccsim_cpu * 1e9 / segs_c,
                "ns3_cpu_ns": m["run_cpu_s"] * 1e9 / segs_m if m["run_cpu_s"] is not None else None,
                "ccsim_rss": max(r["peak_rss_mb"] for r in cs),
                "ns3_rss": m["peak_rss_mb"],
                "ns3_setup_s": m["setup_s"],
                "ccsim_mbps": cs[0]["total_mbps"],
                "ns3_mbps": m["total_mbps"],
            }
            rows.append(row)
            cpu = (
                f", CPU {row['ccsim_cpu_ns']:,.0f} / {row['ns3_cpu_ns']:,.0f} ns "
                f"({row['ns3_cpu_ns'] / row['ccsim_cpu_ns']:,.0f}x)"
                if row["ns3_cpu_ns"] is not None
                else ""
            )
            print(
                f"{n:>6} flows, {dur:g} s: ns/segment ccsim {row['ccsim_ns']:,.0f}, {ns3.name} {row['ns3_ns']:,.0f} "
                f"(ns-3 / ccsim {row['ns3_ns'] / row['ccsim_ns']:,.0f}x){cpu}; loop ccsim "
                f"{_med([r['wall_s'] for r in cs]):.2f} s, ns-3 {m['wall_s']:.1f} s, ns-3 set-up "
                f"{m['setup_s']:.1f} s; peak RSS {row['ccsim_rss']:,.0f} / {row['ns3_rss']:,.0f} MB",
                flush=True,
            )

    if not rows:
        print("error: no flow count ran in both simulators", file=sys.stderr)
        return 1
    write_results(args, rows, failed, pin)
    return 0


def _x(v: float | None, base: float | None, spec: str = ".2f") -> str:
    return "—" if v is None or not base else f"{v / base:{spec}}x"


def write_results(args: argparse.Namespace, rows: list[dict], failed: list, pin: bool) -> None:
    base = next((r for r in rows if r["flows"] == 2), rows[0])
    b = base["flows"]
    dur_arg = f"--durations {args.durations}" if args.durations else f"--duration {args.duration:g}"
    opts = " --program auto" if args.program == "auto" else ""
    opts += f" --ccsim-repeat {args.ccsim_repeat}" if args.ccsim_repeat != 5 else ""
    durs = " or ".join(f"{d:g}" for d in sorted({r["duration"] for r in rows}))
    progs = (
        "`bench/ns3/build/dumbbell_many` at every count"
        if args.program == "many"
        else "`bench/ns3/build/dumbbell` up to 254 flows, `dumbbell_many` above"
    )
    lines = [
        "# Speed against ns-3 as the flow count grows",
        "",
        f"Measured {_dt.date.today().isoformat()} on {platform.node()} ({os.cpu_count()} CPUs), "
        f"`python3 bench/scale_ns3.py --flows {args.flows} --rate {args.rate:g} {dur_arg}{opts}`. "
        f"Each run: CUBIC, one {args.rate:g} Gbps bottleneck, 20 ms one way, 1 BDP drop-tail buffer, "
        f"access links 10x the bottleneck rate, {durs} s simulated (the same in both simulators at "
        f"each count). At each count ccsim ran {args.ccsim_repeat} time{'s' if args.ccsim_repeat != 1 else ''} "
        f"(each followed by a 1 ms run of the same flows), then ns-3 once ({progs}), each one child process "
        f"({'pinned with taskset -c 0' if pin else 'not pinned'}).",
        "",
        f"| flows | simulated s | ccsim ns per segment | ns-3 ns per segment | ns-3 / ccsim "
        f"| ccsim vs its {b}-flow run | ns-3 vs its {b}-flow run "
        f"| CPU ns per segment ccsim / ns-3 | ns-3 / ccsim (CPU) | CPU vs {b} flows ccsim / ns-3 "
        f"| peak RSS MB ccsim / ns-3 | ns-3 set-up s | throughput Mbps ccsim / ns-3 |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        cpu_ns3 = "—" if r["ns3_cpu_ns"] is None else f"{r['ns3_cpu_ns']:,.0f}"
        lines.append(
            f"| {r['flows']:,} | {r['duration']:g} | {r['ccsim_ns']:,.0f} | {r['ns3_ns']:,.0f} | "
            f"{_x(r['ns3_ns'], r['ccsim_ns'], ',.0f')} | "
            f"{_x(r['ccsim_ns'], base['ccsim_ns'])} | {_x(r['ns3_ns'], base['ns3_ns'])} | "
            f"{r['ccsim_cpu_ns']:,.0f} / {cpu_ns3} | {_x(r['ns3_cpu_ns'], r['ccsim_cpu_ns'], ',.0f')} | "
            f"{_x(r['ccsim_cpu_ns'], base['ccsim_cpu_ns'])} / {_x(r['ns3_cpu_ns'], base['ns3_cpu_ns'])} | "
            f"{r['ccsim_rss']:,.0f} / {r['ns3_rss']:,.0f} | {r['ns3_setup_s']:,.1f} | "
            f"{r['ccsim_mbps']:,.0f} / {r['ns3_mbps']:,.0f} |"
        )
    for n, dur, prog, errs in failed:
        lines.append(f"| {n:,} | {dur:g} | not run ({prog}): {'; '.join(errs)} |" + " |" * 10)
    lines += [
        "",
        "- ns per segment: the simulation loop's wall time per data segment delivered (ccsim's",
        "  `wall_seconds`, the median of its runs; the ns-3 program's timing of `Simulator::Run`).",
        "- CPU ns per segment: ns-3: `dumbbell_many`'s CPU time of `Simulator::Run`; ccsim: the median",
        "  process CPU time (user + system) of its runs less the median of the 1 ms runs (start-up,",
        "  set-up and output), per delivered segment.",
        "- peak RSS: each child's `ru_maxrss` (ccsim's includes its Python start-up; the largest",
        "  of its runs).",
        "- ns-3 set-up: the program's wall time before `Simulator::Run` (nodes, links, addresses,",
        "  global routing tables, applications), not counted in ns per segment.",
        "",
    ]
    scale.write_md(args.out, lines)


if __name__ == "__main__":
    sys.exit(main())
