#!/usr/bin/env python3
"""E3's baseline, plain BBR against CUBIC, on real Linux TCP (``ccsim emulate``) and in ccsim. Root.

    python3 validation/kernel/e3.py --docs docs/validation.md     # ~20 min of real time
    python3 validation/kernel/e3.py --kernel-runs 0               # ccsim's side only (seconds)

Seed 004 (E3) ran plain BBR against CUBIC on Linux, so its baseline can be run on the kernel.
Two parts, each at the catalogue's E3 point (100 Mbps, 40 ms base RTT, 10 BDP drop-tail buffer,
MSS 1448, RACK; python/ccsim/experiments/catalogue.py, ``_e3_base``):

1. **The 60 s point** of the kernel table: BBR and CUBIC throughput, the total, BBR's
   retransmissions and the queue, with ccsim's seeds 1..``--sim-seeds`` against the kernel's
   runs 1..``--kernel-runs``. Each side's mean, sample standard deviation and the 95 %
   confidence interval of the mean (Student's t, ccsim.stats), and Welch's t-test of the
   difference of the means: a difference the test does not find at 5 % is within the
   run-to-run spread.
2. **Without GSO bursts**: the kernel runs again with ``gso_max_segs = 1`` on the sender's
   device, so that its TCP sends one segment per packet as ccsim's does (``--gso-runs``).
3. **e3-fig4's claims on the kernel**: the catalogue's own checks (BBR's swing, Jain's index over
   the run and per 10 s window) on 120 s kernel runs (1 s bins), beside ccsim's.

Writes ``e3.md`` and ``e3.json`` (every run's numbers) to --out (default
validation/kernel/results); ``--docs`` rewrites the generated part of that file's "E3 on the
kernel" section. Kernel runs are cached in ``e3.json`` by (part, seed, duration): rerunning
only adds what is missing (``--fresh`` reruns them).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import pandas as pd  # noqa: E402
from scipy import stats as sps  # noqa: E402

import ccsim  # noqa: E402
from ccsim.experiments.catalogue import _e3_base, _run_jain, _swing, _window_jain  # noqa: E402
from ccsim.experiments.claims import Data  # noqa: E402
from ccsim.stats import spread  # noqa: E402
from run import update_docs  # noqa: E402

QUANTITIES = ("bbr_mbps", "cubic_mbps", "total_mbps", "bbr_retransmits", "cubic_retransmits", "queue_delay_ms",
              "bbr_cwnd_over_bdp", "bbr_rtprop_ms")


def scenario(seconds: int, seed: int, sample: str = "1s") -> dict[str, Any]:
    sc = _e3_base({"cc": "bbr"}, {"cc": "cubic"})
    sc["duration"] = f"{seconds}s"
    sc["seed"] = seed
    sc["sample_interval"] = sample
    return sc


def numbers(d: dict[str, Any], ts: pd.DataFrame | None = None) -> dict[str, float]:
    """A run's quantities. With its time series, also BBR's cwnd over its own BDP estimate
    (btlbw x rtprop; median over samples after 10 s: 2 plus the allowances for TSO quanta and
    ACK aggregation) and its mean RTprop."""
    f = d["flows"]
    out = {
        "bbr_mbps": f[0]["throughput_mbps"], "cubic_mbps": f[1]["throughput_mbps"],
        "total_mbps": d["total_throughput_mbps"], "bbr_retransmits": f[0]["retransmits"],
        "cubic_retransmits": f[1]["retransmits"], "queue_delay_ms": d["bottleneck"]["queue_delay_mean_ms"],
        "bbr_cwnd_over_bdp": math.nan, "bbr_rtprop_ms": math.nan,
    }
    if ts is not None and {"cwnd_pkts", "btlbw_mbps", "rtprop_ms"} <= set(ts.columns):
        b = ts[(ts.flow == 0) & (ts.time_s > 10)].dropna(subset=["cwnd_pkts", "btlbw_mbps", "rtprop_ms"])
        bdp = b.btlbw_mbps * 1e6 / 8 * b.rtprop_ms / 1e3 / (1448 + 52)
        ok = bdp > 0
        if ok.any():
            out["bbr_cwnd_over_bdp"] = float((b.cwnd_pkts[ok] / bdp[ok]).median())
            out["bbr_rtprop_ms"] = float(b.rtprop_ms.mean())
    return out


def fig4_claims(results: list[tuple[str, pd.DataFrame, float]]) -> dict[str, float]:
    """e3-fig4's quantities over runs given as (key, time series, Jain over the run)."""
    ts = pd.concat([t.assign(key=k) for k, t, _ in results], ignore_index=True)
    runs = pd.DataFrame({"key": [k for k, _, _ in results], "jain_index": [j for _, _, j in results]})
    d = Data(runs=runs, timeseries=ts)
    return {"swing_cv": _swing(d), "jain_run": _run_jain(d), "jain_window": _window_jain(d)}


def side(rows: list[dict[str, float]], q: str) -> str:
    s = spread([r[q] for r in rows])
    if s.n < 2:
        return f"{s.mean:.2f} (1 run)"
    return f"{s.mean:.2f} ± {s.half_width:.2f} (sd {s.sd:.2f}, n {s.n})"


def welch(a: list[float], b: list[float]) -> float:
    if len(a) < 2 or len(b) < 2:
        return math.nan
    return float(sps.ttest_ind(a, b, equal_var=False).pvalue)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sim-seeds", type=int, default=20)
    ap.add_argument("--kernel-runs", type=int, default=8, help="60 s kernel runs (part 1)")
    ap.add_argument("--fig4-runs", type=int, default=3, help="120 s runs per side for e3-fig4's claims (part 2)")
    ap.add_argument("--gso-runs", type=int, default=6,
                    help="60 s kernel runs with gso_max_segs = 1 on the sender's device (part 3: no GSO bursts)")
    ap.add_argument("--out", type=Path, default=HERE / "results")
    ap.add_argument("--docs", type=Path, default=None)
    ap.add_argument("--fresh", action="store_true", help="rerun cached kernel runs")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    cache_path = args.out / "e3.json"
    cache: dict[str, Any] = {} if args.fresh or not cache_path.exists() else json.loads(cache_path.read_text())
    kernel: dict[str, Any] = cache.setdefault("kernel", {})

    def save() -> None:
        cache_path.write_text(json.dumps(cache, indent=1, sort_keys=True) + "\n")

    sim = []
    for s in range(1, args.sim_seeds + 1):
        r = ccsim.run(scenario(60, s, "100ms"))
        sim.append(numbers(r.to_dict(), r.timeseries))
    cache["sim"] = sim
    emu = []
    for s in range(1, args.kernel_runs + 1):
        key = f"point-60s-seed{s}"
        if key not in kernel:
            t0 = time.time()
            res = ccsim.emulate(scenario(60, s, "100ms"))
            d = res.to_dict()
            kernel[key] = {**numbers(d, res.timeseries), "emulator": d.get("emulator"), "kernel": d.get("kernel")}
            save()
            print(f"{key}: BBR {kernel[key]['bbr_mbps']:.2f} CUBIC {kernel[key]['cubic_mbps']:.2f} "
                  f"({time.time() - t0:.0f} s)", flush=True)
        emu.append(kernel[key])

    no_gso = []
    for s in range(1, args.gso_runs + 1):
        key = f"point-60s-gso1-seed{s}"
        if key not in kernel:
            res = ccsim.emulate(scenario(60, s, "100ms"), gso_max_segs=1)
            d = res.to_dict()
            kernel[key] = {**numbers(d, res.timeseries), "emulator": d.get("emulator"), "kernel": d.get("kernel")}
            save()
            print(f"{key}: BBR {kernel[key]['bbr_mbps']:.2f} CUBIC {kernel[key]['cubic_mbps']:.2f}", flush=True)
        no_gso.append(kernel[key])

    fig4_sim = []
    for s in range(1, args.fig4_runs + 1):
        r = ccsim.run(scenario(120, s))
        fig4_sim.append((f"sim{s}", r.timeseries, r.jain_index))
    fig4_emu = []
    for s in range(1, args.fig4_runs + 1):
        key = f"fig4-120s-seed{s}"
        if key not in kernel:
            res = ccsim.emulate(scenario(120, s))
            ts = res.timeseries[["flow", "time_s", "delivery_rate_mbps"]]
            kernel[key] = {"jain": res.jain_index, "timeseries": ts.to_dict(orient="list"), **numbers(res.to_dict())}
            save()
            print(f"{key}: Jain {res.jain_index:.3f}", flush=True)
        fig4_emu.append((key, pd.DataFrame(kernel[key]["timeseries"]), kernel[key]["jain"]))
    save()

    md = [f"ccsim seeds 1-{len(sim)}, kernel runs 1-{len(emu)} (60 s each; mean ± 95 % CI half-width). "
          "p: Welch's t-test of the two means (a p above 0.05 means the difference is within the run-to-run spread).", "",
          "| quantity | ccsim | Linux | difference | p |", "|---|---|---|---:|---:|"]
    for q in QUANTITIES:
        a, b = [r[q] for r in sim], [r[q] for r in emu]
        diff = (sum(a) / len(a) - sum(b) / len(b)) / (sum(b) / len(b)) if emu and sum(b) else math.nan
        md.append(f"| {q} | {side(sim, q)} | {side(emu, q) if emu else '-'} | {diff:+.1%} | {welch(a, b):.3f} |")
    md += ["", "bbr_cwnd_over_bdp: BBR's cwnd over its own estimate btlbw x rtprop, median of the 100 ms samples after "
               "10 s (the cwnd gain 2 plus BBR's allowances in packets)."]
    if no_gso:
        md += ["", f"The kernel without GSO bursts (`gso_max_segs = 1` on the sender's device: one segment per packet, "
                   f"as ccsim sends), runs 1-{len(no_gso)}:", "",
               "| quantity | ccsim | Linux, no GSO | difference | p |", "|---|---|---|---:|---:|"]
        for q in QUANTITIES:
            a, b = [r[q] for r in sim], [r[q] for r in no_gso]
            diff = (sum(a) / len(a) - sum(b) / len(b)) / (sum(b) / len(b)) if sum(b) else math.nan
            md.append(f"| {q} | {side(sim, q)} | {side(no_gso, q)} | {diff:+.1%} | {welch(a, b):.3f} |")
    if fig4_emu:
        cs, ce = fig4_claims(fig4_sim), fig4_claims(fig4_emu)
        md += ["", f"e3-fig4's claims, {len(fig4_sim)} runs of 120 s per side (the catalogue's checks: BBR's swing CV "
                   ">= 0.2 and Jain < 0.9):", "",
               "| quantity | ccsim | Linux |", "|---|---:|---:|",
               f"| BBR's 1 s throughput, coefficient of variation | {cs['swing_cv']:.2f} | {ce['swing_cv']:.2f} |",
               f"| Jain over the run | {cs['jain_run']:.3f} | {ce['jain_run']:.3f} |",
               f"| Jain per 10 s window | {cs['jain_window']:.3f} | {ce['jain_window']:.3f} |",
               f"| claim holds | {'yes' if cs['swing_cv'] >= 0.2 and cs['jain_run'] < 0.9 else 'no'} | "
               f"{'yes' if ce['swing_cv'] >= 0.2 and ce['jain_run'] < 0.9 else 'no'} |"]
    text = "\n".join(md) + "\n"
    (args.out / "e3.md").write_text(text)
    print(text)
    if args.docs:
        update_docs(args.docs, text, script="e3.py")
    return 0


if __name__ == "__main__":
    sys.exit(main())
