#!/usr/bin/env python3
"""One point of the classic-set grid in ccsim and in ns-3 with one change at a time.

    bash validation/ns3/classic_exp.sh     # builds bench/ns3/build/classic_exp (once)
    python3 validation/ns3/classic_exp.py vegas --rate 100 --buffer 8 --loss 0 \\
        --seeds 1 --set stock= --set rtt=LINUXRTT --set rtt+seg=LINUXRTT,PERSEGMENT

For docs/validation.md, "Causes (classic set)". Each --set NAME=SWITCHES runs ns-3's model of
the algorithm in the experiment program (validation/ns3/classic_exp.cc) with those EXP_*
switches on (empty: the model as shipped, i.e. algorithms.py's ns-3), in algorithms.py's
ns-3 set-up ("aligned-linux": aligned TCP, Linux's constants, 32 MiB buffers), on the point
of algorithms.py's grid given by --flows/--rate/--buffer/--loss. ccsim runs the same point.
Prints one row per set-up (mean over --seeds; per seed with --per-seed): total Mbps, mean RTT,
drops, mean queue, and Δ against ccsim's. ns-3 runs one at a time under nice. --stats adds, per
ns-3 set-up, the per-seed Δ (ccsim's seed s against ns-3's seed s): mean, sample sd and the
Student-t 95 % interval of the mean (ccsim.stats), for total and mean RTT.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import algorithms as A  # noqa: E402
import run as R  # noqa: E402

EXP_BIN = Path(os.environ.get("CLASSIC_EXP_BIN", R.NS3_DIR / "build" / "classic_exp"))
SWITCHES = (
    "LINUXRTT", "PERSEGMENT", "SSTHRESH_CWND", "HTCP_ALPHA", "HTCP_BETA", "VEGAS_LOSS_SSTHRESH", "PERACK_CA", "BIC_DELACK",
    "VENO_CNTRTT", "VENO_DIFF", "HS_MD_AI", "RTO_SSTHRESH", "VEGAS_DIFF", "VEGAS_AFTER", "YEAH_AFTER",
    "ILLINOIS_ALPHA_FRAC", "ILLINOIS_US", "HTCP_ALPHA_LINUX", "RTO_REARM", "HYBLA_RHO8", "HYBLA_INIT",
    "WESTWOOD_SSTHRESH", "WESTWOOD_FILTER", "WESTWOOD_MINRTT", "WESTWOOD_RENO_AI",
    "BIC_AI", "BIC_FASTCONV", "BIC_BETA", "BIC_LOWWND", "BIC_THROTTLE", "BIC_LOSS_RESET", "EXIT_DELIVERED",
)
CACHE = Path(os.environ.get("CLASSIC_EXP_CACHE", "/tmp/classic_exp_cache"))


def run_exp(p: R.Point, seed: int, cc: str, switches: list[str]) -> dict:
    args = R.ns3_args(p, seed, A.VARIANT)
    args = [a if not a.startswith("--cc=") else f"--cc={','.join([cc] * p.flows)}" for a in args]
    env = {k: v for k, v in os.environ.items() if not k.startswith("EXP_")}
    for s in switches:
        env[f"EXP_{s}"] = "1"
    st = EXP_BIN.stat()
    key = hashlib.sha1(json.dumps([args, sorted(switches), st.st_size, st.st_mtime_ns]).encode()).hexdigest()[:16]
    CACHE.mkdir(parents=True, exist_ok=True)
    f = CACHE / f"{key}.json"
    if f.is_file():
        return json.loads(f.read_text())
    r = subprocess.run(["nice", "-n", "15", str(EXP_BIN), *args], capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise SystemExit(f"classic_exp failed: {r.stderr[-2000:]}")
    d = json.loads([ln for ln in r.stdout.splitlines() if ln.startswith("{")][-1])
    f.write_text(json.dumps(d))
    return d


def seed_deltas(ccs: list[dict], ns3: list[dict], key: str) -> list[float]:
    """(ccsim − ns-3) / ns-3 of `key` seed by seed (the two runs of one seed draw different losses)."""
    return [(c[key] - n[key]) / n[key] for c, n in zip(ccs, ns3, strict=True)]


def stats_rows(ccs: list[dict], rows: list[tuple[str, list[dict]]]) -> list[str]:
    """--stats: per ns-3 set-up, the mean, sd and 95 % interval of the per-seed Δ total and Δ RTT."""
    from ccsim.stats import spread

    out = [
        "| run | n | Δ total, per seed: mean | sd | 95 % interval"
        " | Δ RTT, per seed: mean | sd | 95 % interval |",
        "|---|---:|---:|---:|---|---:|---:|---|",
    ]
    for name, sm in rows:
        cells = []
        for key in ("total", "rtt"):
            s = spread(seed_deltas(ccs, sm, key))
            cells += [f"{s.mean * 100:+.1f}%", f"{s.sd * 100:.1f}%", f"{s.low * 100:+.1f}% … {s.high * 100:+.1f}%"]
        out.append(f"| {name} | {len(sm)} | " + " | ".join(cells) + " |")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cc", choices=sorted(set(A.ALGOS) | set(R.CCSIM_CC)), help="ccsim algorithm (newreno: ccsim newreno; pair with --ns3-cc exp-linuxreno)")
    ap.add_argument("--flows", type=int, default=1)
    ap.add_argument("--rate", type=float, default=10.0, help="Mbps")
    ap.add_argument("--buffer", type=float, default=1.0, help="BDP")
    ap.add_argument("--loss", type=float, default=0.0, help="fraction, e.g. 0.001")
    ap.add_argument("--seeds", default="1", help="comma-separated")
    ap.add_argument("--set", action="append", default=[], help="NAME=SW1,SW2 (EXP_ switches without the prefix)")
    ap.add_argument("--ns3-cc", default=None, help="experiment class name (default exp-<cc>)")
    ap.add_argument("--per-seed", action="store_true")
    ap.add_argument("--stats", action="store_true", help="mean, sd and 95 %% interval of the per-seed Δs")
    a = ap.parse_args(argv)
    seeds = tuple(int(s) for s in a.seeds.split(","))
    p = R.Point(a.cc, flows=a.flows, buffer_bdp=a.buffer, loss=a.loss, rate_mbps=a.rate, seeds=seeds, group=a.cc)
    sets = []
    for s in a.set or ["stock="]:
        name, _, sw = s.partition("=")
        sw_list = [x for x in sw.split(",") if x]
        bad = [x for x in sw_list if x not in SWITCHES]
        if bad:
            print(f"classic_exp.py: --set {s}: unknown switch {bad[0]}; accepted: {', '.join(SWITCHES)}", file=sys.stderr)
            return 2
        sets.append((name, sw_list))
    cc = a.ns3_cc or f"exp-{a.cc}"

    def fmt(sm: list[dict]) -> tuple[float, float, float, float]:
        n = len(sm)
        return tuple(sum(x[k] for x in sm) / n for k in ("total", "rtt", "drops", "queue"))  # type: ignore[return-value]

    ccs = [R.summarize("ccsim", R.run_ccsim(p, s, None)) for s in seeds]
    rows = [("ccsim", ccs)]
    for name, sw in sets:
        rows.append((f"ns-3 {name}", [R.summarize("ns3", run_exp(p, s, cc, sw)) for s in seeds]))
    print(f"{p.name}, seeds {','.join(map(str, seeds))}")
    print("| run | total Mbps | Δ total vs ccsim | mean RTT ms | drops | mean queue pkt |")
    print("|---|---:|---:|---:|---:|---:|")
    ref = fmt(ccs)
    for name, sm in rows:
        groups = [[x] for x in sm] if a.per_seed and len(sm) > 1 else [sm]
        for i, g in enumerate(groups):
            t, r, d, q = fmt(g)
            label = name + (f" s{seeds[i]}" if len(groups) > 1 else "")
            dt = "" if name == "ccsim" else f"{(ref[0] - t) / t * 100:+.1f}%"
            print(f"| {label} | {t:.2f} | {dt} | {r:.1f} | {d:.0f} | {q:.1f} |")
    if a.stats and len(seeds) > 1:
        print()
        print("\n".join(stats_rows(ccs, rows[1:])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
