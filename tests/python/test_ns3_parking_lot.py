"""ns-3 parking-lot validation (issue 12): a few points of validation/ns3/parking_lot.py, short runs.

Two parts:

* ns-3 alone (holds today): the long flow gets less than each cross flow, every bottleneck
  is busy more than 90 % of the run, nothing is dropped off the bottlenecks, and the ccsim
  scenario that parking_lot.py writes describes the network ns-3 ran (the same links, rates,
  delays, buffers, paths and start times).
* ccsim against ns-3 (marked ``general_form``): issue 12's criteria on the same points:
  each bottleneck's utilization within 2 %, the long flow below each cross flow in ccsim
  too, and the per-flow throughput within 10 % of ns-3's mean over the seeds - or within the
  seed noise of that difference where the noise is larger (parking_lot.seed_noise: two
  standard errors of Δ from the seed-to-seed spread). The long flow's share depends on the
  start phases so strongly (coefficient of variation 26-66 % over 20 seeds in ns-3,
  docs/validation.md "Seed noise") that a 10 % bound on a mean of a few seeds would fail a
  correct model by chance. These tests need ccsim's general network form ([[links]]). Until
  ccsim has it they FAIL with a message saying so; they are not skipped, so the branch
  cannot be merged with the ccsim side silently missing.

30 s runs with ten seeds (the start phases differ per seed; both simulators are otherwise
deterministic); about 40 s of ns-3 CPU time. The ns-3 program is built by bench/ns3/build.sh,
which pip-installs the ns3 wheel if needed. The test is skipped only when the ns3 package
cannot be installed (no wheel for this platform, or pip fails, e.g. offline); any other
failure is a test failure.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from _support import build_ns3_and_load

REPO = Path(__file__).resolve().parents[2]
PARKING_PY = REPO / "validation" / "ns3" / "parking_lot.py"
BUILD_SH = REPO / "bench" / "ns3" / "build.sh"

DURATION = 30.0
SEEDS = tuple(range(1, 11))
MIN_UTIL = 0.90


@pytest.fixture(scope="module")
def PL():
    return build_ns3_and_load(BUILD_SH, PARKING_PY, "ccsim_ns3_parking_lot")


def _points(PL):
    return [
        PL.Point("newreno", 2, duration_s=DURATION, seeds=SEEDS),
        PL.Point("cubic", 3, duration_s=DURATION, seeds=SEEDS),
    ]


@pytest.fixture(scope="module")
def ns3_rows(PL):
    """Aggregated ns-3 (aligned) results of the points, without ccsim."""
    import concurrent.futures as cf

    points = _points(PL)
    with cf.ThreadPoolExecutor(max_workers=2) as ex:
        futs = {p.name: [ex.submit(PL.run_ns3, p, s, PL.JUDGE_VARIANT, None) for s in p.seeds] for p in points}
        runs = {name: [f.result() for f in fs] for name, fs in futs.items()}
    return {p.name: (p, runs[p.name], PL.aggregate(p, [PL.summarize(p, d) for d in runs[p.name]])) for p in points}


def _thr(agg):
    return ", ".join(f"{n} {x:.2f}" for n, x in zip(["long"] + [f"cross{i}" for i in range(1, len(agg["thr"]))], agg["thr"]))


def test_ns3_long_flow_gets_less_than_each_cross_flow(ns3_rows):
    for name, (p, runs, agg) in ns3_rows.items():
        assert all(agg["thr"][0] < x for x in agg["thr"][1:]), f"{name}: {_thr(agg)} Mbps"
        # and in every seed, not only on average
        assert agg["long_least_seeds"] == len(p.seeds), f"{name}: only {agg['long_least_seeds']} seeds"


def test_ns3_every_bottleneck_is_busy(ns3_rows):
    for name, (p, runs, agg) in ns3_rows.items():
        for bid, u in zip(p.bottleneck_ids, agg["util"]):
            assert u > MIN_UTIL, f"{name}: {bid} utilization {u:.3f}"


def test_ns3_drops_only_at_the_bottlenecks(ns3_rows):
    for name, (p, runs, agg) in ns3_rows.items():
        assert agg["other_drops"] == 0, name
        assert all(d > 0 for d in agg["drops"]), f"{name}: bottleneck drops {agg['drops']}"


def test_ccsim_scenario_is_the_network_ns3_ran(PL, ns3_rows):
    """parking_lot.py's ccsim scenario and ns-3's run: the same link directions with the same
    rate, delay and buffer, the same flow paths and start times, the same MSS."""
    import re

    def bps(s: str) -> float:
        m = re.fullmatch(r"([0-9.]+)(|k|M|G)bps", s)
        assert m, s
        return float(m[1]) * {"": 1, "k": 1e3, "M": 1e6, "G": 1e9}[m[2]]

    for name, (p, runs, agg) in ns3_rows.items():
        for seed, d in zip(p.seeds, runs):
            sc = PL.ccsim_scenario(p, seed)
            want = {}
            for link in sc["links"]:
                x, y = link["between"]
                spec = (bps(link["rate"]), float(link["delay"].removesuffix("ms")), int(link["buffer"].removesuffix("pkt")))
                want[f"{x}->{y}"] = want[f"{y}->{x}"] = spec
            got = {
                link["id"]: (float(link["rate_bps"]), _ms(link["delay"]), link["buffer_pkts"]) for link in d["links"]
            }
            assert got == want, name
            assert [f["path"] for f in d["flows"]] == [f["path"] for f in sc["flows"]], name
            assert [round(f["start_s"] * 1e6) for f in d["flows"]] == [
                int(f["start"].removesuffix("us")) for f in sc["flows"]
            ], name
            assert d["config"]["mss"] == sc["tcp"]["mss"]
            assert sorted(d["bottlenecks"]) == sorted(p.bottleneck_ids)
        # the seeds differ in their start phases
        assert len({tuple(PL.starts(p, s)) for s in p.seeds}) == len(p.seeds)


def _ms(s: str) -> float:
    """ns-3 Time strings as parking_lot.py passes them: '10000000ns', '0ns'."""
    assert s.endswith("ns"), s
    return float(s[:-2]) / 1e6


@pytest.fixture(scope="module")
def ccsim_rows(PL, ns3_rows):
    """ccsim vs ns-3 (aligned) on the same points, or the reason ccsim cannot run them."""
    missing = PL.ccsim_support()
    if missing is not None:
        return missing
    rows = {}
    for name, (p, runs, ns3) in ns3_rows.items():
        cc = PL.aggregate(p, [PL.summarize(p, PL.run_ccsim(p, s, None)) for s in p.seeds])
        rows[name] = (p, ns3, cc, PL.criteria(p, ns3, cc))
    return rows


def _compared(ccsim_rows):
    """The comparison rows; fails the test (does not skip it) while ccsim lacks the general
    network form."""
    if isinstance(ccsim_rows, str):
        pytest.fail(
            f"{ccsim_rows}. The ccsim half of the parking-lot validation (issue 12) runs once ccsim "
            "accepts [[links]]; this branch is to be merged only after that.",
            pytrace=False,
        )
    return ccsim_rows


def _fmt(p, ns3, cc, c):
    flows = "; ".join(
        f"{n} {a:.2f} / {b:.2f} ({d * 100:+.1f}%)" for n, a, b, d in zip(p.flow_names, cc["thr"], ns3["thr"], c["d_thr"])
    )
    utils = "; ".join(
        f"{b} {x:.4f} / {y:.4f} ({d * 100:+.2f}%)" for b, x, y, d in zip(p.bottleneck_ids, cc["util"], ns3["util"], c["d_util"])
    )
    noise = ", ".join(f"±{x * 100:.0f}%" for x in c["noise"])
    return f"{p.name}: throughput Mbps ccsim / ns-3: {flows} (seed noise {noise}); utilization: {utils}"


@pytest.mark.general_form
def test_ccsim_per_flow_throughput_within_10_percent_or_the_seed_noise(ccsim_rows):
    compared = _compared(ccsim_rows)
    bad = [_fmt(*r) for r in compared.values() if not r[3]["c1_noise"]]
    assert not bad, "per-flow throughput differs by more than max(10 %, seed noise):\n" + "\n".join(bad)


@pytest.mark.general_form
def test_ccsim_bottleneck_utilization_within_2_percent(ccsim_rows):
    compared = _compared(ccsim_rows)
    bad = [_fmt(*r) for r in compared.values() if not r[3]["c2"]]
    assert not bad, "bottleneck utilization differs by more than 2 %:\n" + "\n".join(bad)


@pytest.mark.general_form
def test_ccsim_long_flow_gets_less_than_each_cross_flow(ccsim_rows):
    compared = _compared(ccsim_rows)
    for p, ns3, cc, c in compared.values():
        assert c["c3_ccsim"], _fmt(p, ns3, cc, c)
        assert c["ccsim_other_drops"] == 0, f"{p.name}: ccsim dropped packets off the bottlenecks"
