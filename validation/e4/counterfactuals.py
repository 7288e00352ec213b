#!/usr/bin/env python3
"""E4-exp2 counterfactuals: which mechanism bends ccsim's hop exponent toward the paper's?

    python3 validation/e4/counterfactuals.py               # every counterfactual, writes results.md
    python3 validation/e4/counterfactuals.py --only baseline,arf --jobs 2
    python3 validation/e4/counterfactuals.py --no-write    # print only

Each counterfactual is the catalogue's e4-exp2 set-up (python/ccsim/experiments/catalogue.py:
one TCP bulk flow, CUBIC or BBR, 100 s, darkroom and indoor, the catalogue's 3 seeds) with one
change: a dict of `[wireless]` keys merged into the base scenario. Hops 1..5 are run (the
catalogue fits BW = A / n^k over 2..5 hops; 1 hop is shown for scale). For every
(counterfactual, environment, algorithm) the table gives

- k (mean fit): the exponent fitted to the mean throughput over seeds, as the catalogue does;
- k per seed: mean +- standard deviation and [min, max] of the exponents fitted to each seed's
  own throughputs (the seed-to-seed spread);
- A and the throughput at 1 and 5 hops;

against the paper's fits (60 / n^2.4 darkroom, 5.5 / n^1.5 indoor) and the baseline's k.
The table is printed and written to validation/e4/results.md between the markers
``<!-- counterfactuals:begin -->`` and ``<!-- counterfactuals:end -->`` (the rest of the file,
the ns-3 mesh section, is left alone).
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import copy
import statistics
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results.md"
BEGIN, END = "<!-- counterfactuals:begin -->", "<!-- counterfactuals:end -->"

#: (name, `[wireless]` keys changed, what it tests). 64 hops of reach = every station senses
#: (and interferes with, or decodes) every other: the lines have at most 8 stations.
COUNTERFACTUALS: list[tuple[str, dict, str]] = [
    ("baseline", {}, "the catalogue's e4-exp2 as it is"),
    ("one-room", {"cs_reach": 64, "if_reach": 64},
     "1. every station senses (and interferes with) every other; frames still decoded 1 hop away"),
    ("one-room-decode", {"rx_reach": 64, "cs_reach": 64, "if_reach": 64},
     "1b. as one-room, and every station decodes every frame (NAV from every data frame); routing stays hop by hop"),
    ("hidden-2hop", {"cs_reach": 1, "if_reach": 2},
     "1c. the opposite: stations two hops apart do not sense each other but interfere (ns-3's 50 m mesh line)"),
    ("rpi3", {"host": "rpi3"}, "2. the Raspberry Pi host costs of E4-exp1 (0.5 ms ingress, 0.5 ms egress per packet)"),
    ("acks-out-of-band", {"tcp_acks": "out-of-band"},
     "3. TCP ACKs carried off the channel (they contend with data in the baseline)"),
    ("arf", {"rate_control": "arf"}, "4. ARF rate adaptation (ns-3 ArfWifiManager) over the profile's MCS ladder"),
    ("aarf", {"rate_control": "aarf"}, "4b. AARF rate adaptation (ns-3 AarfWifiManager)"),
    ("hwmp", {"hwmp": "reactive"}, "5. HWMP path-refresh PREQ floods and PREP replies (ns-3/802.11s default intervals)"),
    ("hwmp+beacons", {"hwmp": "reactive", "mesh_beacons": True},
     "5b. as hwmp, plus every mesh point's beacons (ns-3 MeshWifiInterfaceMac default interval)"),
    ("hidden-2hop+arf", {"cs_reach": 1, "if_reach": 2, "rate_control": "arf"},
     "6. two changes, ns-3's 50 m line as ccsim can have it: hidden terminals two hops apart and ARF"),
]

PAPER = {"darkroom": (60.0, 2.4), "indoor": (5.5, 1.5)}
ENVS = ("darkroom", "indoor")
CCS = ("bbr", "cubic")
HOPS = (1, 2, 3, 4, 5)
FIT = (2, 5)


def fit(n, bw) -> tuple[float, float]:
    """Least squares of ln BW = ln A - k ln n: (A, k); NaN when a throughput is 0."""
    if min(bw) <= 0:
        return float("nan"), float("nan")
    slope, icpt = np.polyfit(np.log(np.asarray(n, float)), np.log(np.asarray(bw, float)), 1)
    return float(np.exp(icpt)), float(-slope)


def specs(change: dict):
    """(env, cc, hops, seed, scenario) of the catalogue's e4-exp2 runs with `change`."""
    from ccsim.experiments.catalogue import BY_ID

    for s in BY_ID["e4-exp2"].specs():
        if s.tags["hops"] not in HOPS:
            continue
        sc = copy.deepcopy(s.scenario)
        sc["wireless"].update(change)
        yield s.tags["environment"], s.tags["cc"], s.tags["hops"], s.seed, sc


def _run(item):
    import ccsim

    name, env, cc, hops, seed, sc = item
    r = ccsim.run(sc, seed=seed).to_dict()
    return name, env, cc, hops, seed, float(r["flows"][0]["throughput_mbps"])


def summarise(rows) -> dict:
    """{(name, env, cc): dict of k_mean_fit, A, k_seeds, thr by hops}."""
    out = {}
    keys = sorted({(r[0], r[1], r[2]) for r in rows})
    lo, hi = FIT
    for key in keys:
        sel = [r for r in rows if (r[0], r[1], r[2]) == key]
        by_hops = {h: [r[5] for r in sel if r[3] == h] for h in HOPS}
        mean = {h: statistics.fmean(v) for h, v in by_hops.items() if v}
        ns = [h for h in HOPS if lo <= h <= hi]
        a, k = fit(ns, [mean[h] for h in ns])
        seeds = sorted({r[4] for r in sel})
        ks = []
        for s in seeds:
            thr = {r[3]: r[5] for r in sel if r[4] == s}
            ks.append(fit(ns, [thr[h] for h in ns])[1])
        out[key] = {"A": a, "k": k, "k_seeds": ks, "mean": mean}
    return out


def table(summary: dict, names: list[str]) -> str:
    base = {(e, c): summary[("baseline", e, c)]["k"] for e in ENVS for c in CCS if ("baseline", e, c) in summary}
    lines = [
        "| counterfactual | env | cc | k (mean fit) | k per seed: mean ± sd [min, max] | A | Mbps at 1 / 2 / 5 hops | vs baseline k | paper k |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name in names:
        for e in ENVS:
            for c in CCS:
                s = summary.get((name, e, c))
                if s is None:
                    continue
                ks = s["k_seeds"]
                m = s["mean"]
                if any(np.isnan(ks)) or np.isnan(s["k"]):
                    lines.append(f"| {name} | {e} | {c} | n/a | n/a (a throughput of 0) | n/a | {m[1]:.2f} / {m[2]:.2f} / {m[5]:.2f} | n/a | {PAPER[e][1]} |")
                    continue
                sd = statistics.stdev(ks) if len(ks) > 1 else 0.0
                b = base.get((e, c))
                pk = PAPER[e][1]
                d = s["k"] - b if b is not None else float("nan")
                toward = ""
                if b is not None and name != "baseline":
                    toward = " (toward)" if abs(s["k"] - pk) < abs(b - pk) - 2 * max(sd, 0.02) else (
                        " (away)" if abs(s["k"] - pk) > abs(b - pk) + 2 * max(sd, 0.02) else " (no change)")
                lines.append(
                    f"| {name} | {e} | {c} | {s['k']:.2f} | {statistics.fmean(ks):.2f} ± {sd:.2f} [{min(ks):.2f}, {max(ks):.2f}] "
                    f"| {s['A']:.1f} | {m[1]:.1f} / {m[2]:.1f} / {m[5]:.2f} | {d:+.2f}{toward} | {pk} |"
                )
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", default="", help="comma-separated counterfactual names (default: all)")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--no-write", action="store_true", help="print only; do not rewrite results.md")
    args = ap.parse_args(argv)
    known = [n for n, _, _ in COUNTERFACTUALS]
    names = [n.strip() for n in args.only.split(",") if n.strip()] or known
    bad = [n for n in names if n not in known]
    if bad:
        ap.error(f"--only: unknown {', '.join(bad)}; accepted: {', '.join(known)}")
    if "baseline" not in names:
        names = ["baseline"] + names
    changes = {n: c for n, c, _ in COUNTERFACTUALS}
    items = [(n, *sp) for n in names for sp in specs(changes[n])]
    t0 = time.perf_counter()
    with cf.ProcessPoolExecutor(max_workers=args.jobs) as pool:
        rows = list(pool.map(_run, items, chunksize=4))
    print(f"{len(rows)} runs in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    summary = summarise(rows)
    tab = table(summary, names)
    what = "\n".join(f"- `{n}`: `{changes[n]!r}`: {w}" for n, _, w in COUNTERFACTUALS if n in names)
    text = (
        f"{BEGIN}\n"
        "Generated by `python3 validation/e4/counterfactuals.py` (do not edit by hand). "
        "The catalogue's e4-exp2 runs (TCP bulk, 100 s, seeds 1..3) over hops 1..5 with one "
        "`[wireless]` change each; k is the exponent of BW = A / n^k fitted over 2..5 hops, on the "
        "mean over seeds and per seed. \"toward\"/\"away\": |k - paper| changed by more than twice "
        "the seed spread (sd); otherwise \"no change\".\n\n"
        f"{what}\n\n{tab}\n{END}"
    )
    print(text)
    if not args.no_write and set(names) == set(known):
        old = RESULTS.read_text() if RESULTS.exists() else "# E4: counterfactuals for the hop exponent\n\n" + BEGIN + "\n" + END + "\n"
        if BEGIN in old and END in old:
            pre, rest = old.split(BEGIN, 1)
            post = rest.split(END, 1)[1]
            RESULTS.write_text(pre + text + post)
        else:
            RESULTS.write_text(old + "\n" + text + "\n")
        print(f"wrote {RESULTS}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
