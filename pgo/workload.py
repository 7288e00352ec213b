"""The training runs of ccsim's profile-guided build.

``pgo/train.py`` runs this file with an instrumented ``ccsim._core``: the counts it leaves
decide which branches the optimised build lays out as the straight path, what it inlines and
what it moves out of the way. The runs cover what users run, so that no part of the engine is
treated as cold: every example in ``examples/`` that is a single run (the dumbbell, ``[[links]]``
networks, reverse traffic, queue disciplines with ECN, workloads of short flows, UDP, a
cellular trace, the 802.11 line), every registered algorithm on a dumbbell (drop-tail, and
with ECN through a marking queue; each for long enough that its own paths through the engine,
paced or not, weigh about as much as the examples' do), every queue discipline, random loss, and a dumbbell with
2,000 flows (the radix event queue). The scenarios of ``bench/scenarios/`` are left out on
purpose (and ``examples/bbr_vs_cubic.toml``, the same set-up as one of them), so that
``bench/bench.py`` measures a build whose profile was not fitted to it.

    python pgo/workload.py        # with any ccsim: runs them all (about a minute)
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import ccsim

ROOT = Path(__file__).resolve().parent.parent
# Examples left out: the same set-up as a benchmark scenario.
NOT_TRAINED = {"bbr_vs_cubic"}


def dumbbell(cc: str, *, duration: str = "20s", rate: str = "100Mbps", buffer: str = "1bdp", count: int = 2,
             ecn: bool = False, qdisc: str | None = None, loss: float = 0.0) -> ccsim.Scenario:
    bottleneck: dict = {"rate": rate, "delay": "10ms", "buffer": buffer, "loss": loss}
    if qdisc is not None:
        bottleneck["qdisc"] = qdisc
        bottleneck["ecn"] = ecn
    return ccsim.Scenario.from_dict({
        "duration": duration,
        "seed": 1,
        "bottleneck": bottleneck,
        "tcp": {"ecn": ecn},
        "flows": [{"cc": cc, "count": count, "access_delay": "1ms"}, {"cc": cc, "access_delay": "15ms", "start": "1s"}],
    })


def runs() -> list[tuple[str, ccsim.Scenario]]:
    out: list[tuple[str, ccsim.Scenario]] = []
    for f in sorted((ROOT / "examples").glob("*.toml")):
        if f.stem in NOT_TRAINED:
            continue
        try:
            out.append((f"example {f.stem}", ccsim.load(f)))
        except ccsim.ScenarioError:
            continue  # a sweep file: its points are single runs like the ones below
    for a in ccsim.algorithms():
        cc = a["name"]
        ecn = cc in ("dctcp", "prague")
        out.append((f"{cc} drop-tail", dumbbell(cc, qdisc="red" if ecn else None, ecn=ecn)))
        out.append((f"{cc} ecn dualpi2", dumbbell(cc, qdisc="dualpi2", ecn=True, duration="10s")))
    for q in ccsim.qdiscs():
        # Each discipline as much as an algorithm's runs (and on a faster link, many packets
        # queued), so that a discipline's paths through the link are not the rare case.
        out.append((f"cubic {q['name']}", dumbbell("cubic", qdisc=q["name"], buffer="4bdp", duration="10s")))
        out.append((f"cubic {q['name']} 500 Mbps", dumbbell("cubic", qdisc=q["name"], rate="500Mbps", count=4, buffer="2bdp", duration="5s")))
    out.append(("newreno 1% loss", dumbbell("newreno", loss=0.01)))
    out.append(("cubic 2,000 flows", dumbbell("cubic", rate="1Gbps", count=2000, duration="2s")))
    return out


def main() -> int:
    t0 = time.perf_counter()
    todo = runs()
    for i, (name, sc) in enumerate(todo, 1):
        r = ccsim.run(sc)
        print(f"[{i}/{len(todo)}] {name}: {r.events:,} events", flush=True)
    print(f"{len(todo)} training runs in {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
