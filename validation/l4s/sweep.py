"""DualPI2 with a classic flow (CUBIC or NewReno, Not-ECT) and DCTCP with ECT(1): the rate ratio
and RFC 9332's steady-state relations over rates and base RTTs, from the probe
crates/ccsim-core/examples/l4s_probe.rs (one simulation at a time).

    python3 validation/l4s/sweep.py [--seconds 40] [--seed 1]

Columns: throughputs r_C, r_L (Mbps) over the last two thirds of the run, their ratio, the mean
RTTs, the measured p_C (drops / classic packets) and p_L (marks / L4S packets), W_C sqrt(p_C)
(Reno: 1.22) and W_L p_L (DCTCP's W = 2 / p_L: 2), and the ratio RFC 9332's relations predict
from the measured RTTs alone, (2 / (1.22 k)) RTT_C / RTT_L with k = 2 (windows W_L = 2/(k p'),
W_C = 1.22/p').
"""
import argparse
import os
import re
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROBE = os.path.join(ROOT, "target", "release", "examples", "l4s_probe")


def run(rate, owd, classic, secs, seed, mode="dualpi2", extra=0.0, dparams=""):
    out = subprocess.run(
        ["nice", "-n", "10", PROBE, str(rate), str(owd), classic, "dctcp", str(secs), str(seed), mode, str(extra), dparams],
        capture_output=True, text=True, check=True,
    ).stdout
    fl = re.findall(r"flow (\d): ([\d.]+) Mbps, RTT ([\d.]+) ms", out)
    rel = re.search(r"W_L p_L = ([\d.]+), W_C sqrt\(p_C\) = ([\d.]+)", out)
    return {
        "rC": float(fl[0][1]), "rL": float(fl[1][1]), "rttC": float(fl[0][2]), "rttL": float(fl[1][2]),
        "pC": float(re.search(r"p_C = ([\d.]+)", out).group(1)), "pL": float(re.search(r"p_L = ([\d.]+)", out).group(1)),
        "WLpL": float(rel.group(1)), "WCsqpC": float(rel.group(2)),
        "ratio": float(re.search(r"RATIO scalable/classic = ([\d.]+)", out).group(1)),
    }


def row(label, r):
    pred = 2 / (1.22 * 2) * r["rttC"] / r["rttL"]
    return (f"| {label} | {r['rC']:.1f} | {r['rL']:.1f} | **{r['ratio']:.2f}** | {r['rttC']:.1f} | {r['rttL']:.1f} | "
            f"{r['pC']:.5f} | {r['pL']:.4f} | {r['WCsqpC']:.2f} | {r['WLpL']:.2f} | {pred:.2f} |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=40)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    subprocess.run(["nice", "-n", "10", "cargo", "build", "--release", "-q", "-p", "ccsim-core", "--example", "l4s_probe"], cwd=ROOT, check=True)
    print("| rate, base RTT, classic, DCTCP | r_C | r_L | r_L / r_C | RTT_C ms | RTT_L ms | p_C | p_L | W_C sqrt(p_C) | W_L p_L | RFC ratio |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for classic in ["cubic", "newreno"]:
        for rate in [40, 100, 200]:
            for owd in [5, 10, 25]:
                for name, dp in [("Linux", ""), ("g = 1/4", "dctcp_shift_g=2")]:
                    r = run(rate, owd, classic, a.seconds, a.seed, dparams=dp)
                    print(row(f"{rate} Mbps, {2 * owd} ms, {classic}, {name}", r), flush=True)
    # Equal RTTs: 5 ms more each way on the DCTCP flow's access link (the classic queue's ~10 ms).
    for name, dp in [("Linux", ""), ("g = 1/4", "dctcp_shift_g=2")]:
        r = run(100, 10, "newreno", a.seconds, a.seed, extra=5.0, dparams=dp)
        print(row(f"100 Mbps, 20 ms + 10 ms on DCTCP, newreno, {name}", r), flush=True)


if __name__ == "__main__":
    main()
