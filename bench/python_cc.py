"""Cost of a congestion controller written in Python against the same algorithm in Rust.

Runs the seed's E1 scenario (2 flows, 10 Mbps, 20 ms one way, 50-packet buffer, MSS 1000,
100 s; no loss and 1 % loss) with the built-in `newreno` and with its Python port
(examples/python_cc/reno.py, bit-identical results), and CUBIC with its Python port
(examples/python_cc/cubic.py). Reports the median simulation wall time (`wall_seconds`, the
engine's loop, Python hooks included) of --repeat runs, the Python hook calls per run
(counted in a separate run), and the added cost per hook call.

    python3 bench/python_cc.py [--repeat 5] [--out bench/results/python_cc.md]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import statistics
import sys
from pathlib import Path

import ccsim

HERE = Path(__file__).resolve().parent
PY_CC = HERE.parent / "examples" / "python_cc"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", PY_CC / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def e1(cc: str, loss: float) -> ccsim.Scenario:
    return ccsim.Scenario.from_dict({
        "duration": "100s",
        "bottleneck": {"rate": "10Mbps", "delay": "20ms", "buffer": "50pkt", "loss": loss},
        "tcp": {"mss": 1000},
        "flows": [{"cc": cc, "count": 2, "access_rate": "100Mbps", "access_delay": "0ms"}],
    })


def counting(cls: type) -> type:
    """A subclass of ``cls`` that counts the calls of every hook ``cls`` overrides."""
    counts = {"n": 0}
    ns: dict = {"name": f"{cls.name}-count", "calls": counts}
    for hook in ccsim.cc.HOOKS:
        if getattr(cls, hook) is not getattr(ccsim.CongestionControl, hook):
            def wrap(self, *a, _h=hook, **k):
                counts["n"] += 1
                return getattr(cls, _h)(self, *a, **k)
            ns[hook] = wrap
    return type(f"{cls.__name__}Count", (cls,), ns)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", type=Path, default=HERE / "results" / "python_cc.md")
    a = ap.parse_args(argv)
    try:
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    except (AttributeError, OSError):
        pass
    pairs = [("newreno", _load("reno").Reno), ("cubic", _load("cubic").Cubic)]
    rows = []
    for rust, cls in pairs:
        ccsim.register(cls)
        counter = ccsim.register(counting(cls))
        for loss in (0.0, 0.01):
            walls = {}
            for cc in (rust, cls.name):
                walls[cc] = statistics.median(ccsim.run(e1(cc, loss), seed=1).to_dict()["wall_seconds"] for _ in range(a.repeat))
            counter.calls["n"] = 0
            ccsim.run(e1(counter.name, loss), seed=1)
            calls = counter.calls["n"]
            extra = walls[cls.name] - walls[rust]
            rows.append((rust, loss, walls[rust], walls[cls.name], calls, extra / calls * 1e9 if calls else float("nan")))
            print(f"{rust:8} loss {loss:<5g} Rust {walls[rust]:.3f} s  Python {walls[cls.name]:.3f} s  "
                  f"({walls[cls.name] / walls[rust]:.1f}x)  {calls} hook calls, {rows[-1][5]:.0f} ns per call", file=sys.stderr)
    lines = [
        "# Python congestion controllers: cost against Rust",
        "",
        f"`python3 bench/python_cc.py --repeat {a.repeat}` on {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}, one core; the seed's E1 scenario (2 flows, "
        "10 Mbps, 100 s simulated). Median simulation wall time (`wall_seconds`).",
        "",
        "| algorithm | loss | Rust s | Python s | ratio | Python hook calls | added ns per call |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for rust, loss, wr, wp, calls, per in rows:
        lines.append(f"| {rust} | {loss:g} | {wr:.3f} | {wp:.3f} | {wp / wr:.1f}x | {calls:,} | {per:.0f} |")
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
