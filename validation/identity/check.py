#!/usr/bin/env python3
"""Bit-identity of results across engine changes.

A redesign of the engine moves code; it must not change what any existing scenario gives.
This script runs every scenario the project has and hashes each run's full output: the
summary JSON (all of it but ``wall_seconds``), the time series and the algorithm events.

    python3 validation/identity/check.py --record     # before a change: write hashes.json
    python3 validation/identity/check.py              # after it: compare, exit 1 on a difference
    python3 validation/identity/check.py --only examples,bench   # a subset (quick)
    python3 validation/identity/check.py --only catalogue --match e4-   # names containing e4-
    python3 validation/identity/check.py --record-new  # compare; if nothing differs, add new runs' hashes

The scenarios (each with its own name in hashes.json):

- ``examples/*.toml`` (not the sweep file), with their own seeds;
- ``bench/scenarios/*.toml`` (the speed benchmark against ns-3);
- every run of every ``ccsim reproduce`` entry, full repetitions, and of every entry's
  counterfactuals (stored as ``ENTRY+ID``);
- every point and seed of the ns-3 cross-validation (``validation/ns3/run.py``) and of the
  Linux kernel comparison (``validation/kernel/run.py``, 30 s, seed 1).

A change that alters results on purpose (a stated fix) re-records the hashes in the same
commit, says which scenarios changed and why, and bumps the model version.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import hashlib
import importlib.util
import json
import math
import sys
import time
from pathlib import Path
from typing import Any, Iterator

REPO = Path(__file__).resolve().parents[2]
HASHES = Path(__file__).with_name("hashes.json")
GROUPS = ("examples", "bench", "catalogue", "ns3", "kernel")


def _load_module(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def scenarios(groups: set[str]) -> Iterator[tuple[str, Any, int | None]]:
    """(name, scenario (path or dict), seed or None for the scenario's own)."""
    if "examples" in groups:
        for path in sorted((REPO / "examples").glob("*.toml")):
            if "[sweep]" in path.read_text(encoding="utf-8"):
                continue
            yield f"examples/{path.name}", str(path), None
    if "bench" in groups:
        for path in sorted((REPO / "bench" / "scenarios").glob("*.toml")):
            yield f"bench/{path.name}", str(path), None
    if "catalogue" in groups:
        from ccsim.experiments.catalogue import CATALOGUE
        from ccsim.experiments.reproduction import derived_entries

        for e in [*CATALOGUE, *derived_entries(CATALOGUE).values()]:
            for s in e.specs():
                tags = ",".join(f"{k}={s.tags[k]}" for k in sorted(s.tags))
                yield f"catalogue/{e.id}/{tags}/seed={s.seed}", s.scenario, s.seed
    if "ns3" in groups:
        ns3 = _load_module(REPO / "validation" / "ns3" / "run.py", "_identity_ns3_run")
        for p in ns3.full_grid():
            for seed in p.seed_list:
                yield f"ns3/{p.name}/seed={seed}", ns3.ccsim_scenario(p, seed), seed
    if "kernel" in groups:
        kern = _load_module(REPO / "validation" / "kernel" / "run.py", "_identity_kernel_run")
        for p in kern.grid():
            yield f"kernel/{p.id}/seed=1", p.scenario(30, 1), 1


def _canon(value: Any) -> Any:
    """JSON-safe, exact: floats by repr (NaN and infinities as strings)."""
    if isinstance(value, float):
        return repr(value) if not math.isfinite(value) else value
    if isinstance(value, dict):
        return {str(k): _canon(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_canon(v) for v in value]
    return value


#: Keys added to the output since the hashes were recorded (2026-11-24, before the network
#: model): new information, not a change of any recorded value. They are left out of the hash
#: so that the recorded hashes keep checking every value that existed then. A key joins this
#: list only in the commit that adds it to the output.
ADDED_RUN_KEYS = ("links", "air_hops")
ADDED_FLOW_KEYS = ("path", "ce_received", "ece_reductions")
ADDED_BOTTLENECK_KEYS = ("qdisc", "aqm_drops", "marks", "capacity_mbps")


def digest(scenario: Any, seed: int | None) -> str:
    import ccsim

    res = ccsim.run(scenario, seed=seed)
    summary = res.to_dict()
    summary.pop("wall_seconds", None)
    for k in ADDED_RUN_KEYS:
        summary.pop(k, None)
    for f in summary.get("flows", []):
        for k in ADDED_FLOW_KEYS:
            f.pop(k, None)
    for k in ADDED_BOTTLENECK_KEYS:
        (summary.get("bottleneck") or {}).pop(k, None)
    h = hashlib.sha256()
    h.update(json.dumps(_canon(summary), sort_keys=True).encode())
    for table in (res.timeseries, res.cc_events):
        for col in table.columns:
            h.update(col.encode())
            values = [v.item() if hasattr(v, "item") else v for v in table[col].astype(object).tolist()]
            if col == "queue_state" and values and all(v is None for v in values):
                # A string column without a value (queue_state when no algorithm infers one)
                # was float NaN when the hashes were recorded; it is None since the output
                # schema types it as a string column (2026-11-24). Same information.
                values = [math.nan] * len(values)
            h.update(json.dumps(_canon(values)).encode())
    return h.hexdigest()


def _work(item: tuple[str, Any, int | None]) -> tuple[str, str]:
    import warnings

    name, scenario, seed = item
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return name, digest(scenario, seed)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--record", action="store_true", help="write hashes.json instead of comparing")
    ap.add_argument("--record-new", action="store_true",
                    help="compare, and if no recorded run differs or is missing, add the new runs' hashes")
    ap.add_argument("--only", default=",".join(GROUPS), help=f"comma-separated groups ({', '.join(GROUPS)})")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--match", default="", help="only scenarios whose name contains this string (comparing only; not with --record)")
    args = ap.parse_args(argv)
    groups = {g.strip() for g in args.only.split(",") if g.strip()}
    unknown = groups - set(GROUPS)
    if unknown:
        ap.error(f"--only: unknown group(s) {', '.join(sorted(unknown))}; accepted: {', '.join(GROUPS)}")
    if args.match and args.record:
        ap.error("--match: comparing only; --record writes whole groups")
    items = [it for it in scenarios(groups) if args.match in it[0]]
    names = [n for n, _, _ in items]
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})
        print(f"error: duplicate scenario names: {dup[:5]}", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    got: dict[str, str] = {}
    with cf.ProcessPoolExecutor(max_workers=args.jobs) as pool:
        for i, (name, h) in enumerate(pool.map(_work, items, chunksize=8), 1):
            got[name] = h
            if i % 200 == 0 or i == len(items):
                print(f"  {i}/{len(items)} runs ({time.perf_counter() - t0:.0f} s)", file=sys.stderr)
    if args.record:
        old = json.loads(HASHES.read_text()) if HASHES.exists() else {}
        old = {k: v for k, v in old.items() if k.split("/", 1)[0] not in groups}
        HASHES.write_text(json.dumps({**old, **got}, indent=0, sort_keys=True) + "\n")
        print(f"recorded {len(got)} hashes in {HASHES.relative_to(REPO)}")
        return 0
    want = json.loads(HASHES.read_text())
    want = {k: v for k, v in want.items() if k.split("/", 1)[0] in groups and args.match in k}
    differ = sorted(n for n in got if n in want and want[n] != got[n])
    new = sorted(set(got) - set(want))
    missing = sorted(set(want) - set(got))
    for n in differ[:50]:
        print(f"DIFFERS  {n}")
    for n in new[:20]:
        print(f"NEW      {n} (no recorded hash)")
    for n in missing[:20]:
        print(f"MISSING  {n} (recorded, no longer run)")
    same = len(got) - len(differ) - len(new)
    print(f"{same} of {len(want)} recorded runs identical, {len(differ)} differ, {len(new)} new, "
          f"{len(missing)} missing ({time.perf_counter() - t0:.0f} s)")
    if differ or missing:
        return 1
    if args.record_new and new:
        everything = json.loads(HASHES.read_text())
        everything.update({n: got[n] for n in new})
        HASHES.write_text(json.dumps(everything, indent=0, sort_keys=True) + "\n")
        print(f"recorded {len(new)} new hashes in {HASHES.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
