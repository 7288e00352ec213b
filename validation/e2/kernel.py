#!/usr/bin/env python3
"""E2 fig. 2 (BBR vs CUBIC, seed 003) with the real kernel: ``ccsim emulate`` at the paper's
120 s. Root. Runs one emulation at a time and appends every run's summary to
``validation/e2/kernel/runs.jsonl`` (one JSON object a line: point, buffer_bdp, seed and the
emulation's full summary, ``emulator`` health fields included); a (buffer, seed) already in
the file is skipped, so the script can be stopped and resumed.

    python3 validation/e2/kernel.py --buffers 1 2 12 18 --seeds 1 2      # 8 runs, ~17 min
    python3 validation/e2/kernel.py --buffers 1 2 12 18 --seeds 3 --duration 120s

The scenario is e2-fig2's (catalogue.py ``_e2_base("bbr")``: 10 Mbps, 20 ms one way, buffer
N BDP of 1500-byte packets, MSS 1448, 120 s) with ``recovery = "rack"`` (what Linux does, so
``ignored`` stays empty). The bottleneck is ccsim's own link emulator (not Dummynet).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import ccsim

HERE = Path(__file__).resolve().parent
OUT = HERE / "kernel" / "runs.jsonl"


def scenario(bdp: int, seed: int, duration: str) -> dict:
    return {
        "name": f"e2-fig2-{bdp}bdp",
        "duration": duration,
        "seed": seed,
        "bottleneck": {"rate": "10Mbps", "delay": "20ms", "buffer": f"{bdp}bdp"},
        "tcp": {"mss": 1448, "recovery": "rack"},
        "flows": [{"cc": "bbr"}, {"cc": "cubic"}],
    }


def done() -> set[tuple[int, int, str]]:
    if not OUT.exists():
        return set()
    return {(r["buffer_bdp"], r["seed"], r["duration"]) for r in map(json.loads, OUT.read_text().splitlines()) if r}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--buffers", type=int, nargs="+", default=[1, 2, 12, 18])
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--duration", default="120s")
    a = ap.parse_args()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    have = done()
    for seed in a.seeds:
        for bdp in a.buffers:
            if (bdp, seed, a.duration) in have:
                continue
            t0 = time.time()
            res = ccsim.emulate(scenario(bdp, seed, a.duration)).to_dict()
            row = {"point": f"{bdp}bdp", "buffer_bdp": bdp, "seed": seed, "duration": a.duration, "started": t0, "summary": res}
            with OUT.open("a") as f:
                f.write(json.dumps(row) + "\n")
            fl = res["flows"]
            print(f"{bdp:>2} BDP seed {seed}: bbr {fl[0]['throughput_mbps']:.3f} cubic {fl[1]['throughput_mbps']:.3f} "
                  f"total {res['total_throughput_mbps']:.3f} emulator {json.dumps(res.get('emulator'))[:300]}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
