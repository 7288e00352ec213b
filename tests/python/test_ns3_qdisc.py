"""ns-3 queue-discipline / ECN reference (validation/ns3/qdisc.py): a few short ns-3 runs.

Checks what validation/ns3/QDISC.md says ns-3 must show before its numbers are worth comparing
with ccsim's: CoDel holds the queueing delay near its 5 ms target with bulk CUBIC and keeps the
link busy, the FIFO control with a 1000-packet buffer does not, DCTCP over step-marking RED
keeps the queue near K without a drop, ECN turns the AQM's drops into marks that reach the
receiver and the sender, nothing drops off the bottleneck, and the attributes read back from
the queue disc are the ones asked for. Also that the ccsim scenario the driver writes is the
network ns-3 ran (same start times, qdisc and ECN keys).

10 s runs at 10 Mbps, one seed: about 5 s of ns-3 CPU time. Built by bench/ns3/build.sh (which
pip-installs the ns3 wheel if needed); skipped only where the ns3 package cannot be installed.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from _support import build_ns3_and_load

REPO = Path(__file__).resolve().parents[2]
QDISC_PY = REPO / "validation" / "ns3" / "qdisc.py"
BUILD_SH = REPO / "bench" / "ns3" / "build.sh"


@pytest.fixture(scope="module")
def Q():
    return build_ns3_and_load(BUILD_SH, QDISC_PY, "ccsim_ns3_qdisc")


def _point(Q, qdisc, ecn, cc, flows=1, delay_ms=20.0):
    return Q.Point(qdisc, ecn, cc, 10.0, delay_ms, flows, 10.0, (1,))


@pytest.fixture(scope="module")
def runs(Q):
    pts = {
        "codel": _point(Q, "codel", False, "cubic"),
        "codel ecn": _point(Q, "codel", True, "cubic"),
        "fifo": _point(Q, "fifo", False, "cubic"),
        "dctcp": _point(Q, "red-step", True, "dctcp", flows=2),
    }
    return {k: (p, Q.run_ns3(p, 1, None, nice=0)) for k, p in pts.items()}


def test_codel_keeps_delay_near_target_and_link_busy(runs):
    p, d = runs["codel"]
    b = d["bottleneck"]
    assert b["qdelay_total_mean_ms"] < 15, b
    assert b["utilization"] > 0.85, b
    assert b["aqm_drops"] > 0 and b["drops"] == 0, b


def test_fifo_control_has_a_standing_queue(runs):
    b = runs["fifo"][1]["bottleneck"]
    assert b["qdelay_total_mean_ms"] > 100, b
    assert b["aqm_drops"] == 0, b


def test_ecn_marks_instead_of_dropping(runs):
    d = runs["codel ecn"][1]
    b = d["bottleneck"]
    assert b["marks"] > 0 and b["aqm_drops"] == 0, b
    f = d["flows"][0]
    assert f["ce_received"] == b["marks"], (f, b)  # every mark reaches the receiver
    assert 0 < f["ece_reductions"] <= f["ce_received"], f
    assert f["retransmits"] == 0, f


def test_dctcp_keeps_queue_near_k_without_drops(Q, runs):
    p, d = runs["dctcp"]
    b = d["bottleneck"]
    k = Q.dctcp_k(p.rate_mbps)
    assert b["drops"] + b["aqm_drops"] == 0, b
    assert 0.5 * k < b["queue_mean_pkts"] < 1.5 * k, (k, b)
    assert b["utilization"] > 0.9, b
    assert set(b["mark_reasons"]) == {"Forced mark"}, b


def test_dctcp_matches_ns3_within_ten_percent(Q, runs):
    """Issue 13's DCTCP check: ccsim's DCTCP over step-marking RED against the same ns-3 run,
    total throughput and mean queueing delay within 10 %. ns-3's RED counts only the queue
    disc's packets, not the one in the 1-packet device queue below it, so its step marks when
    K + 1 packets wait; ccsim's (as Linux's red_action on the qdisc's backlog) at K. The
    comparison gives ccsim the step at K + 1 (docs/validation.md Q10a; without it the 40 ms
    points differ by 12-17 % in delay)."""
    import ccsim

    p, d = runs["dctcp"]
    sc = Q.ccsim_scenario(p, 1)
    k = Q.dctcp_k(p.rate_mbps) + 1
    sc["bottleneck"]["qdisc_params"] = {**sc["bottleneck"]["qdisc_params"], "min_th": k, "max_th": k}
    c = ccsim.run(ccsim.Scenario.from_dict(sc), seed=1)
    n, cb = d["bottleneck"], c.bottleneck
    n_total = sum(f["throughput_mbps"] for f in d["flows"])
    c_total = sum(f["throughput_mbps"] for f in c.flows)
    assert abs(c_total / n_total - 1) < 0.1, (c_total, n_total)
    # ns-3's queueing delay as the grid compares it: the queue disc's sojourn plus the wait in the
    # device queue below it (validation/ns3/qdisc.py).
    assert abs(cb["queue_delay_mean_ms"] / n["qdelay_total_mean_ms"] - 1) < 0.1, (cb["queue_delay_mean_ms"], n)
    assert cb["marks"] > 0 and cb["drops"] + cb["aqm_drops"] == 0, cb


def test_only_the_bottleneck_queue_disc_drops_and_attributes_apply(runs):
    for name, (p, d) in runs.items():
        b = d["bottleneck"]
        assert b["other_queue_drops"] == 0 and b["device_drops"] == 0, (name, b)
        assert b["qdisc_attributes"]["MaxSize"] == "1000p", (name, b["qdisc_attributes"])
    a = runs["dctcp"][1]["bottleneck"]["qdisc_attributes"]
    assert (a["MinTh"], a["MaxTh"], a["QW"], a["Gentle"], a["UseHardDrop"], a["UseEcn"]) == (
        "20", "20", "1", "false", "false", "true"), a
    assert runs["codel"][1]["bottleneck"]["qdisc_attributes"]["MinBytes"] == "1501"


def test_ccsim_scenario_is_the_network_ns3_ran(Q):
    for p in Q.full_grid():
        sc = tomllib.loads(Q.to_toml(Q.ccsim_scenario(p, 2)))
        args = dict(a[2:].split("=", 1) for a in Q.ns3_args(p, 2))
        starts = [float(f["start"].removesuffix("us")) / 1e6 for f in sc["flows"]]
        assert [f"{t:.6f}" for t in starts] == args["starts"].split(","), p.name
        assert sc["bottleneck"]["qdisc"] == args["qdisc"] and args["buffer"] == "1000"
        if p.qdisc == "fq_codel":
            # Linux's and ns-3's fq_codel limit (a batch drop from the fattest flow queue) is
            # ccsim's qdisc_params.limit; the buffer in front of it never acts (Q9).
            assert sc["bottleneck"]["qdisc_params"] == {"limit": 1000}, p.name
            assert int(sc["bottleneck"]["buffer"].removesuffix("pkt")) > 1000, p.name
        else:
            assert sc["bottleneck"]["buffer"] == "1000pkt", p.name
        assert sc["bottleneck"].get("ecn", False) == (args["ecn"] == "1") == sc["tcp"].get("ecn", False)
        assert float(sc["bottleneck"]["rate"].removesuffix("Mbps")) * 1e6 == float(args["rate"].removesuffix("bps"))
        assert float(sc["bottleneck"]["delay"].removesuffix("ms")) * 1e6 == float(args["delay"].removesuffix("ns"))
        if "qdisc_params" in sc["bottleneck"] and p.qdisc != "fq_codel":
            q = sc["bottleneck"]["qdisc_params"]
            # ccsim's RED takes its thresholds in packets and w_q as `weight`.
            assert (q["min_th"], q["max_th"]) == (int(args["redMinTh"]), int(args["redMaxTh"])), p.name
            assert q["weight"] == float(args["redQW"]), p.name
        assert {f["cc"] for f in sc["flows"]} == {p.cc}
