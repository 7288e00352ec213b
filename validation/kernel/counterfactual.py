#!/usr/bin/env python3
"""ccsim with changed `[tcp]` settings against the stored kernel runs (no root, seconds).

``run.py`` stores both sides of every point in ``results/runs.jsonl``. This script reruns the
simulation side of each stored point twice, as recorded and with the given ``[tcp]`` keys
changed, and compares both with the stored kernel run using ``run.py``'s own comparison (the
10 % flags). It answers "would this change bring ccsim closer to Linux?" before a default is
changed.

    python3 validation/kernel/counterfactual.py tsecr_rtt=true
    python3 validation/kernel/counterfactual.py tsecr_rtt=true --only e1-bbr-loss0,e3-bbr-cubic

Values are parsed as TOML values (true, 3, "rack"). The recorded run must reproduce the stored
simulation exactly (checked), so the stored kernel side is a valid reference.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import ccsim  # noqa: E402
import run as K  # noqa: E402


def parse_override(s: str) -> tuple[str, object]:
    key, sep, value = s.partition("=")
    if not sep or not key:
        print(f"counterfactual.py: {s!r}: expected KEY=VALUE, e.g. tsecr_rtt=true", file=sys.stderr)
        raise SystemExit(2)
    try:
        return key, tomllib.loads(f"v = {value}")["v"]
    except tomllib.TOMLDecodeError:
        return key, value  # a bare string


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tcp", nargs="+", metavar="KEY=VALUE", help="[tcp] keys to change")
    ap.add_argument("--runs", type=Path, default=HERE / "results" / "runs.jsonl")
    ap.add_argument("--only", default=None, help="comma-separated point ids")
    a = ap.parse_args()
    changes = dict(parse_override(s) for s in a.tcp)
    points = {p.id: p for p in K.grid()}
    stored = [json.loads(line) for line in a.runs.read_text().splitlines() if line.strip()]
    if a.only:
        keep = set(a.only.split(","))
        stored = [d for d in stored if d["id"] in keep]
    seconds = round(stored[0]["simulation"]["sim_seconds"]) if stored else 30
    what = ", ".join(f"{k} = {json.dumps(v)}" for k, v in changes.items())
    print(f"[tcp] {what} against the stored kernel runs ({a.runs}, {seconds} s)\n")
    print("| point | total Δ as recorded / changed | RTT Δ | retransmits ccsim (recorded / changed) / kernel | flag |")
    print("|---|---|---|---|---|")
    flagged = [0, 0]
    for d in stored:
        p = points[d["id"]]
        seed = d["simulation"]["seed"]
        rows = []
        for i, extra in enumerate(({}, changes)):
            sc = p.scenario(seconds, seed)
            sc["tcp"].update(extra)
            try:
                sim = ccsim.run(ccsim.Scenario.from_dict(sc)).to_dict()
            except ccsim.ScenarioError as e:
                print(f"counterfactual.py: {e}", file=sys.stderr)
                return 2
            if i == 0 and sim["total_throughput_mbps"] != d["simulation"]["total_throughput_mbps"]:
                raise SystemExit(f"{p.id}: the recorded simulation does not reproduce; rerun run.py first")
            rows.append(K.compare_point(p, sim, d["emulation"], (math.nan, math.nan)))
            flagged[i] += bool(rows[-1]["flag"])
        r0, r1 = rows
        print(f"| {p.id} | {K.pct(r0['total_diff'])} / {K.pct(r1['total_diff'])} | {K.pct(r0['rtt_diff'])} / "
              f"{K.pct(r1['rtt_diff'])} | {r0['retx_sim']} / {r1['retx_sim']} / {r0['retx_kernel']} | "
              f"{r0['flag'] or '-'} / {r1['flag'] or '-'} |")
    print(f"\nflagged: {flagged[0]} of {len(stored)} as recorded, {flagged[1]} with the change")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
