#!/usr/bin/env python3
"""Memory and speed at scale: many flows on one link.

Every run is CUBIC flows on one dumbbell bottleneck (20 ms one way, a 1 BDP drop-tail buffer,
each flow's access link 10x the bottleneck rate), 10 s simulated, for each flow count and
bottleneck rate asked for. Each run is its own child process (``ccsim run FILE --json``),
pinned to one core (``taskset -c 0`` when available), so its peak memory and CPU time are its
own.

    python3 bench/scale.py                        # 1 ... 100,000 flows at 10 and 40 Gbps
    python3 bench/scale.py --flows 2,10000 --rates 10 --repeat 3

Reported per run (the median over ``--repeat``):

- ns per segment: the simulation loop's wall time (ccsim's ``wall_seconds``) per data segment
  delivered to the receivers (the README's measure);
- CPU ns per segment: the child's user + system CPU time (``os.wait4``) per delivered segment,
  start-up, set-up and output included (steadier than wall time on a shared machine, and an
  upper bound of the loop's CPU time);
- events/s: events / loop wall time;
- peak RSS: the child's ``ru_maxrss`` (the whole process, Python included);
- vs 2 flows: ns per segment relative to the 2-flow run at the same rate.

With ``--instructions`` each scenario is also run once under valgrind's callgrind, counting the
instructions the simulation loop executes (``Sim::run_until_limited`` and what it calls; the
run's results are those of the timed runs, and its count moves by about 0.2% between two runs of
one scenario, with where the allocator places things). Instructions per segment against the 2-flow run say
how much more work a segment takes; the time ratio divided by that says how much slower each
instruction ran (waiting on memory). It takes about 60x the run's time.

The time series is sampled once per run (``sample_interval`` = the duration), so it holds one
row per flow and does not weigh on memory. Flow counts above 100,000 (the limit of one
``[[flows]]`` entry) are split over several entries. Results go to stdout and to
``bench/results/scale.md``.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import datetime as _dt
import json
import multiprocessing as mp
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
RESULTS = BENCH_DIR / "results" / "scale.md"
MAX_COUNT = 100_000  # one [[flows]] entry's count limit
CHILD_TIMEOUT_S = 3600


def scenario(n: int, rate_gbps: float, duration_s: float) -> str:
    entries = []
    left = n
    while left > 0:
        c = min(left, MAX_COUNT)
        entries.append(f'[[flows]]\ncc = "cubic"\ncount = {c}\naccess_rate = "{rate_gbps * 10:g}Gbps"\n')
        left -= c
    return (
        f'name = "scale_{n}_{rate_gbps:g}g"\nduration = "{duration_s:g}s"\nseed = 1\n'
        f'sample_interval = "{duration_s:g}s"\n\n'
        f'[bottleneck]\nrate = "{rate_gbps:g}Gbps"\ndelay = "20ms"\nbuffer = "1bdp"\n\n' + "\n".join(entries)
    )


def summary_of(stdout: str) -> dict:
    """The run summary `ccsim run --json` printed: its last line that is a JSON object (else
    all of stdout)."""
    for line in reversed(stdout.strip().splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    return json.loads(stdout)


def run_child(cmd: list[str], pin: bool) -> dict:
    """Run cmd; its stdout's last JSON line, loop numbers, CPU seconds and peak RSS (MB)."""
    if pin and shutil.which("taskset"):
        cmd = ["taskset", "-c", "0", *cmd]  # taskset execs cmd: same pid
    env = dict(os.environ)
    for var in ("RAYON_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        env[var] = "1"
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=out, stderr=err, env=env)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        rc = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode(errors="replace")
        if rc != 0:
            raise RuntimeError(f"{' '.join(cmd)} exited {rc}: {err.read().decode(errors='replace')[-2000:]}")
    summary = summary_of(stdout)
    segs = sum(f["segments_delivered"] for f in summary["flows"])
    cpu = ru.ru_utime + ru.ru_stime
    return {
        "loop_s": summary["wall_seconds"],
        "process_wall_s": wall,
        "cpu_s": cpu,
        "events": summary["events"],
        "segments": segs,
        "ns_per_segment": summary["wall_seconds"] * 1e9 / segs,
        "cpu_ns_per_segment": cpu * 1e9 / segs,
        "events_per_s": summary["events"] / summary["wall_seconds"],
        "peak_rss_mb": ru.ru_maxrss / 1024.0,
        "utilization": summary["bottleneck"]["utilization"],
        "drops": summary["bottleneck"]["drops"],
    }


def count_instructions(cmd: list[str], path: Path, segments: int) -> int:
    """Instructions the simulation loop of `cmd run path` executes, counted by callgrind."""
    with tempfile.TemporaryDirectory() as tmp:
        vg = [
            "valgrind", "--tool=callgrind", "--cache-sim=no", "--toggle-collect=*Sim*run_until_limited*",
            f"--callgrind-out-file={tmp}/callgrind.out", *cmd, "run", str(path), "--json",
        ]
        p = subprocess.run(vg, capture_output=True, text=True, timeout=CHILD_TIMEOUT_S * 10)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(vg)} exited {p.returncode}: {p.stderr[-2000:]}")
    m = re.search(r"Collected : (\d+)", p.stderr)
    if m is None:
        raise RuntimeError(f"callgrind printed no count: {p.stderr[-2000:]}")
    summary = summary_of(p.stdout)
    segs = sum(f["segments_delivered"] for f in summary["flows"])
    if segs != segments:  # the same scenario and seed must give the same run
        raise RuntimeError(f"{path}: {segs} segments under valgrind, {segments} without")
    return int(m.group(1))


def median_run(runs: list[dict]) -> dict:
    out = dict(runs[0])
    for k in ("loop_s", "process_wall_s", "cpu_s", "ns_per_segment", "cpu_ns_per_segment", "events_per_s"):
        out[k] = statistics.median(r[k] for r in runs)
    out["peak_rss_mb"] = max(r["peak_rss_mb"] for r in runs)
    out["repeats"] = len(runs)
    return out


def write_md(out: Path, lines: list[str]) -> None:
    """Write a results table (its lines) to `out` and say so."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines), encoding="utf-8")
    print(f"written {out}")


def default_ccsim() -> list[str]:
    exe = shutil.which("ccsim")
    return [exe] if exe else [sys.executable, "-m", "ccsim"]


def build_of(cmd: list[str]) -> str:
    """Which build `cmd` runs, from its `--version` ("profile-guided build" or not)."""
    try:
        out = subprocess.run([*cmd, "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return "build unknown"
    text = out.strip()
    return text.rsplit("; ", 1)[-1][:-1] if "; " in text and text.endswith(")") else "build unknown"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--flows", default="1,2,100,1000,10000,100000", help="comma-separated flow counts")
    ap.add_argument("--rates", default="10,40", help="comma-separated bottleneck rates in Gbps")
    ap.add_argument("--duration", type=float, default=10.0, help="simulated seconds (default 10)")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--ccsim", default=None, help='ccsim command (default: "ccsim", else "python -m ccsim")')
    ap.add_argument("--no-pin", action="store_true", help="do not pin children to CPU 0")
    ap.add_argument("--out", type=Path, default=RESULTS)
    ap.add_argument(
        "--instructions", action="store_true", help="also count the loop's instructions per segment (valgrind; slow)"
    )
    args = ap.parse_args(argv)
    if args.instructions and shutil.which("valgrind") is None:
        ap.error("--instructions needs valgrind on PATH")
    flows = [int(x) for x in args.flows.split(",")]
    rates = [float(x) for x in args.rates.split(",")]
    cmd = args.ccsim.split() if args.ccsim else default_ccsim()
    pin = not args.no_pin and shutil.which("taskset") is not None

    rows: list[tuple[float, int, dict]] = []
    # Each run is started from a fresh, small worker process (a fork server's child): Linux
    # carries the peak RSS of the process that forks over into the child's ru_maxrss, and this
    # process grows when it reads the summaries of 100,000 flows.
    pool = cf.ProcessPoolExecutor(max_workers=1, mp_context=mp.get_context("forkserver"), max_tasks_per_child=1)
    with pool, tempfile.TemporaryDirectory() as tmp:
        for rate in rates:
            for n in flows:
                path = Path(tmp) / f"scale_{n}_{rate:g}.toml"
                path.write_text(scenario(n, rate, args.duration), encoding="utf-8")
                runs = [pool.submit(run_child, [*cmd, "run", str(path), "--json"], pin).result() for _ in range(args.repeat)]
                r = median_run(runs)
                if args.instructions:
                    r["instructions"] = count_instructions(cmd, path, r["segments"])
                rows.append((rate, n, r))
                print(
                    f"{rate:g} Gbps {n:>7} flows: {r['ns_per_segment']:7.0f} ns/segment (CPU {r['cpu_ns_per_segment']:.0f}), "
                    f"{r['events_per_s'] / 1e6:5.2f} M events/s, loop {r['loop_s']:.2f} s, process {r['process_wall_s']:.1f} s, "
                    f"peak RSS {r['peak_rss_mb']:.0f} MB"
                    + (f", {r['instructions'] / r['segments']:,.0f} instructions/segment" if args.instructions else ""),
                    flush=True,
                )

    base = {rate: r for rate, n, r in rows if n == 2}
    lines = [
        "# ccsim at scale: many CUBIC flows on one link",
        "",
        f"Measured {_dt.date.today().isoformat()} on {platform.node()} ({os.cpu_count()} CPUs), "
        f"`python3 bench/scale.py --flows {args.flows} --rates {args.rates} --repeat {args.repeat}"
        f"{' --instructions' if args.instructions else ''}`. "
        f"Each run: CUBIC, one bottleneck, 20 ms one way, 1 BDP drop-tail buffer, access links 10x the "
        f"bottleneck rate, {args.duration:g} s simulated, one child process pinned to one core "
        f"({'taskset -c 0' if pin else 'not pinned'}); median of {args.repeat} run(s); {build_of(cmd)}.",
        "",
        "| rate | flows | ns per segment (loop wall) | vs 2 flows | CPU ns per segment (process) | M events/s | loop wall s | process wall s | peak RSS MB | RSS per flow KB | utilization |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    rss1 = {rate: r["peak_rss_mb"] for rate, n, r in rows if n == 1}
    for rate, n, r in rows:
        ratio = r["ns_per_segment"] / base[rate]["ns_per_segment"] if rate in base else float("nan")
        # Below 1,000 flows the difference is within the RSS's own noise (at 40 Gbps the 1-flow
        # run's packets in flight alone outweigh 100 flows' state).
        per_flow = f"{(r['peak_rss_mb'] - rss1[rate]) * 1024 / n:,.1f}" if rate in rss1 and n >= 1000 else "-"
        lines.append(
            f"| {rate:g} Gbps | {n:,} | {r['ns_per_segment']:,.0f} | {ratio:.2f}x | {r['cpu_ns_per_segment']:,.0f} | "
            f"{r['events_per_s'] / 1e6:.2f} | {r['loop_s']:.2f} | {r['process_wall_s']:.1f} | {r['peak_rss_mb']:,.0f} | "
            f"{per_flow} | {r['utilization']:.3f} |"
        )
    lines += [
        "",
        "- ns per segment: the simulation loop's wall time (`wall_seconds`) per data segment delivered.",
        "- CPU ns per segment: the child's user + system CPU time per delivered segment, start-up, set-up",
        "  and output included; on a shared machine it is steadier than wall time.",
        "- RSS per flow: (peak RSS - the 1-flow run's) / flows (from 1,000 flows up).",
        "",
    ]
    if args.instructions:
        lines += [
            "## Work and waiting",
            "",
            "Instructions the simulation loop executes per delivered segment (callgrind, one run; two runs of one",
            "scenario differ by about 0.2%), against the 2-flow run at the same rate: how much more work a segment takes. The",
            "time ratio over the instruction ratio is how much slower each instruction ran, waiting on memory.",
            "",
            "| rate | flows | instructions per segment | vs 2 flows | ns per segment vs 2 flows | time per instruction vs 2 flows |",
            "|---|---|---|---|---|---|",
        ]
        for rate, n, r in rows:
            b = base.get(rate)
            ips = r["instructions"] / r["segments"]
            if b is None:
                lines.append(f"| {rate:g} Gbps | {n:,} | {ips:,.0f} | - | - | - |")
                continue
            w = ips / (b["instructions"] / b["segments"])
            t = r["ns_per_segment"] / b["ns_per_segment"]
            lines.append(f"| {rate:g} Gbps | {n:,} | {ips:,.0f} | {w:.2f}x | {t:.2f}x | {t / w:.2f}x |")
        lines.append("")
    write_md(args.out, lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
