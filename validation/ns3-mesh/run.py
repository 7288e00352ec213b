#!/usr/bin/env python3
"""ns-3's own 802.11s mesh on a line: why does a TCP flow fall twentyfold from 1 to 2 hops?

    PYTHON=/path/to/venv/bin/python bash validation/ns3-mesh/build.sh   # once
    python3 validation/ns3-mesh/run.py            # every variant, cached; writes the ns-3
                                                  # section of validation/e4/results.md
    python3 validation/ns3-mesh/run.py --no-write --only base,nofail

The program (mesh.cc) is ns-3 3.44's mesh example set-up (MeshHelper::Default(): 802.11a,
ArfWifiManager, Dot11sStack with reactive HWMP; YansWifiChannelHelper::Default(): log-distance
propagation) on a line of hops + 1 points 50 m apart, one TCP CUBIC bulk flow from point 0 to
point `hops` for 30 s (MSS 1448). Each variant changes one thing (VARIANTS below).

Results are cached in validation/ns3-mesh/results/runs.json, keyed by the SHA-256 of mesh.cc
(first 16 hex digits) and then by the run's arguments: a re-run with an unchanged program runs
nothing; a changed program re-runs everything. Each run is one JSON line of mesh.cc's output.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import hashlib
import json
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
BIN = HERE / "build" / "mesh"
SRC = HERE / "mesh.cc"
CACHE = HERE / "results" / "runs.json"
RESULTS_MD = REPO / "validation" / "e4" / "results.md"
BEGIN, END = "<!-- ns3-mesh:begin -->", "<!-- ns3-mesh:end -->"

HOPS = (1, 2, 3, 5)
TIME = 30
#: (name, extra mesh.cc arguments, seeds, what it changes)
VARIANTS: list[tuple[str, list[str], tuple[int, ...], str]] = [
    ("base", [], (1, 2, 3), "ns-3 mesh defaults (ARF, reactive HWMP, PeerLink MaxPacketFailure 2, MaxBeaconLoss 2), 50 m"),
    ("nofail", ["--maxPacketFailure=65535"], (1, 2, 3),
     "peer links are not closed after failed frames (PeerLink::MaxPacketFailure 2 -> 65535)"),
    ("nobeaconloss", ["--maxBeaconLoss=65535"], (1,), "peer links are not closed after lost beacons (MaxBeaconLoss 2 -> 65535)"),
    ("nofail-nobeaconloss", ["--maxPacketFailure=65535", "--maxBeaconLoss=65535"], (1,), "both"),
    ("constant54", ["--manager=constant", "--mode=OfdmRate54Mbps"], (1,), "ConstantRateWifiManager at 54 Mbps instead of ARF"),
    ("constant12", ["--manager=constant", "--mode=OfdmRate12Mbps"], (1,), "ConstantRateWifiManager at 12 Mbps instead of ARF"),
    ("constant12-nofail", ["--manager=constant", "--mode=OfdmRate12Mbps", "--maxPacketFailure=65535"], (1,),
     "12 Mbps constant and peer links kept after failures"),
    ("minstrel", ["--manager=minstrel"], (1,), "MinstrelWifiManager instead of ARF"),
    ("proactive", ["--root=src"], (1,), "proactive HWMP: point 0 is the root (PREQ every 2.048 s)"),
    ("spacing25", ["--spacing=25"], (1,), "points 25 m apart (two hops away is sensed and decodable)"),
    ("spacing40", ["--spacing=40"], (1,), "points 40 m apart"),
    ("sense2hops", ["--preambleMinRssi=-95"], (1,),
     "preamble detection down to -95 dBm, so that points two hops (100 m, about -91 dBm) apart sense each other"),
    ("udp", ["--transport=udp", "--udpRate=30"], (1,), "UDP CBR 30 Mbps instead of TCP"),
    ("udp-nofail", ["--transport=udp", "--udpRate=30", "--maxPacketFailure=65535"], (1,), "UDP, peer links kept after failures"),
]


def prog_hash() -> str:
    return hashlib.sha256(SRC.read_bytes()).hexdigest()[:16]


def args_of(extra: list[str], hops: int, seed: int) -> list[str]:
    return [f"--hops={hops}", f"--time={TIME}", f"--seed={seed}", *extra]


def run_one(args: list[str]) -> dict:
    out = subprocess.run(["nice", str(BIN), *args], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", default="")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--no-write", action="store_true")
    a = ap.parse_args(argv)
    known = [v[0] for v in VARIANTS]
    names = [n for n in a.only.split(",") if n] or known
    if any(n not in known for n in names):
        ap.error(f"--only: accepted: {', '.join(known)}")
    if not BIN.exists():
        print(f"{BIN} missing: run PYTHON=... bash validation/ns3-mesh/build.sh", file=sys.stderr)
        return 2
    h = prog_hash()
    cache_all = json.loads(CACHE.read_text()) if CACHE.exists() else {}
    cache = cache_all.setdefault(h, {})
    todo = []
    for name, extra, seeds, _ in VARIANTS:
        if name not in names:
            continue
        for hops in HOPS:
            for s in seeds:
                key = " ".join(args_of(extra, hops, s))
                if key not in cache:
                    todo.append(key)
    print(f"program {h}: {len(todo)} runs to do", file=sys.stderr)
    with cf.ThreadPoolExecutor(max_workers=a.jobs) as pool:
        for key, res in zip(todo, pool.map(lambda k: run_one(k.split(" ")), todo)):
            cache[key] = res
            CACHE.parent.mkdir(parents=True, exist_ok=True)
            CACHE.write_text(json.dumps(cache_all, indent=1, sort_keys=True) + "\n")
    lines = [
        "| variant | Mbps at 1 / 2 / 3 / 5 hops (mean of seeds) | 2-hop / 1-hop | peer-link closes at 2 hops | retry-limit drops at 2 hops | HWMP drops at 2 hops | seeds |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, extra, seeds, what in VARIANTS:
        if name not in names:
            continue
        r = {hops: [cache[" ".join(args_of(extra, hops, s))] for s in seeds] for hops in HOPS}
        thr = {hops: statistics.fmean(x["throughput_mbps"] for x in r[hops]) for hops in HOPS}
        sd2 = statistics.stdev([x["throughput_mbps"] for x in r[2]]) if len(seeds) > 1 else 0.0
        m2 = lambda k: statistics.fmean(x[k] for x in r[2])  # noqa: E731
        lines.append(
            f"| `{name}` | {thr[1]:.2f} / {thr[2]:.2f}{f' (sd {sd2:.2f})' if len(seeds) > 1 else ''} / {thr[3]:.2f} / {thr[5]:.2f} "
            f"| {thr[2] / thr[1] if thr[1] > 0 else float('nan'):.3f} | {m2('peer_link_close'):.0f} | {m2('mac_final_data_failed'):.0f} | {m2('hwmp_dropped'):.0f} | {len(seeds)} |"
        )
    what = "\n".join(f"- `{n}` (`{' '.join(e) or 'defaults'}`): {w}" for n, e, _, w in VARIANTS if n in names)
    text = (
        f"{BEGIN}\nGenerated by `python3 validation/ns3-mesh/run.py` (program hash `{h}`; ns-3 3.44 from the PyPI "
        f"wheel; {TIME} s of TCP CUBIC, MSS 1448, unless the variant says UDP). Peer-link closes count both ends "
        "(LinkClose trace of every point); retry-limit drops are MacTxFinalDataFailed of every point; HWMP drops are "
        "HwmpProtocol's totalDropped (no route) summed over points.\n\n"
        f"{what}\n\n" + "\n".join(lines) + f"\n{END}"
    )
    print(text)
    if not a.no_write and set(names) == set(known):
        old = RESULTS_MD.read_text() if RESULTS_MD.exists() else ""
        if BEGIN in old:
            pre, rest = old.split(BEGIN, 1)
            RESULTS_MD.write_text(pre + text + rest.split(END, 1)[1])
        else:
            RESULTS_MD.write_text(old + "\n## ns-3's 802.11s mesh (validation/ns3-mesh)\n\n" + text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
