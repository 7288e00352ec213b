"""ns-3 cross-validation: a few points of validation/ns3/run.py's grid, short runs.

The full grid (49 points, docs/validation.md) supports these tolerances:

* against ns-3 aligned with Linux (the three ns-3 3.44 deviations from Linux that
  docs/validation.md identifies switched off, and RFC 5681 ssthresh for TcpNewReno), 47 of
  49 points agree within 10 % on total throughput and on mean RTT; total throughput within
  5 % at every point without random loss, within 8 % with it (the loss pattern differs
  between the simulators); mean RTT within 9 % except the two points docs/validation.md
  leaves unresolved. So here: total throughput within ``THR_TOL`` without random loss and
  ``THR_TOL_LOSS`` with it, mean RTT within ``RTT_TOL``;
* against stock ns-3 3.44, the total throughput of NewReno and CUBIC without random loss
  agrees within the 10 % flag threshold at every 10 Mbps point of the full table, and
  stock ns-3 BBR's mean RTT stays far above ccsim's (its delivery-rate sampler
  over-estimates the bottleneck rate, docs/validation.md "Causes" B) - asserted, so that a
  change in either simulator that makes this finding stale is noticed.

The ns-3 program is built with bench/ns3/build.sh, which pip-installs the ns3 wheel if
needed. The test is skipped only when the ns3 package cannot be installed (no wheel for
this platform, or pip fails, e.g. offline); any other failure is a test failure.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from _support import build_ns3_and_load

REPO = Path(__file__).resolve().parents[2]
RUN_PY = REPO / "validation" / "ns3" / "run.py"
BUILD_SH = REPO / "bench" / "ns3" / "build.sh"

THR_TOL = 0.05
THR_TOL_LOSS = 0.10
RTT_TOL = 0.10
STOCK_THR_TOL = 0.10
DURATION = 20.0


@pytest.fixture(scope="module")
def R():
    return build_ns3_and_load(BUILD_SH, RUN_PY, "ccsim_ns3_validation_run")


def _points(R):
    P = R.Point
    return [
        P("newreno", duration_s=DURATION, seeds=(1,), group="test"),
        P("cubic", duration_s=DURATION, seeds=(1,), group="test"),
        P("bbr", buffer_bdp=4.0, duration_s=DURATION, seeds=(1,), group="test"),
        P("newreno", flows=2, buffer_bdp=4.0, duration_s=DURATION, seeds=(1,), group="test"),
        P("cubic", rtt_ms=10.0, duration_s=DURATION, seeds=(1,), group="test"),
        P("bbr", flows=2, rtt_ms=10.0, duration_s=DURATION, seeds=(1,), group="test"),
        P("cubic", loss=0.01, duration_s=DURATION, seeds=(1, 2, 3, 4), group="test"),
        P("newreno-rfc", loss=0.01, duration_s=DURATION, seeds=(1, 2, 3, 4), group="test"),
    ]


@pytest.fixture(scope="module")
def rows(R):
    rows, _ = R.run_grid(_points(R), jobs=2, raw_dir=None, progress=False, variants=("stock", "aligned"))
    return {(r["variant"], r["point"]): r for r in rows}


def _fmt(r):
    return (
        f"{r['point']}: total ccsim {r['ccsim_total']:.3f} / ns-3 {r['ns3_total']:.3f} Mbps "
        f"({r['d_total'] * 100:+.1f}%), mean RTT ccsim {r['ccsim_rtt']:.1f} / ns-3 {r['ns3_rtt']:.1f} ms "
        f"({r['d_rtt'] * 100:+.1f}%)"
    )


def test_buffer_conversion_is_the_same(R):
    """Nbdp -> packets: ccsim's scenario conversion and dumbbell --bufferBdp agree exactly."""
    import json

    import ccsim

    for p in (R.Point("cubic", buffer_bdp=0.5, rtt_ms=10.0), R.Point("bbr", buffer_bdp=16.0, rate_mbps=100.0)):
        sc = R.ccsim_scenario(p, 1)
        sc["duration"] = "0.01s"
        sc["sample_interval"] = "1ms"
        ccsim_pkts = ccsim.run(sc).to_dict()["bottleneck"]["buffer_pkts"]
        args = [a for a in R.ns3_args(p, 1) if not a.startswith("--duration")] + ["--duration=0.001"]
        out = subprocess.run([str(R.NS3_BIN), *args], capture_output=True, text=True, check=True).stdout
        ns3_pkts = json.loads(out.strip().splitlines()[-1])["bottleneck"]["buffer_pkts"]
        assert ccsim_pkts == ns3_pkts, (p.name, ccsim_pkts, ns3_pkts)


def test_agreement_with_linux_aligned_ns3(R, rows):
    bad = []
    for p in _points(R):
        r = rows[("aligned", p.name)]
        thr_tol = THR_TOL_LOSS if p.loss > 0 else THR_TOL
        if abs(r["d_total"]) > thr_tol or abs(r["d_rtt"]) > RTT_TOL:
            bad.append(_fmt(r))
    assert not bad, "ccsim and Linux-aligned ns-3 disagree:\n" + "\n".join(bad)


def test_throughput_agreement_with_stock_ns3(R, rows):
    bad = []
    for p in _points(R):
        if p.cc == "bbr" or p.loss > 0:
            continue
        r = rows[("stock", p.name)]
        if abs(r["d_total"]) > STOCK_THR_TOL:
            bad.append(_fmt(r))
    assert not bad, "ccsim and stock ns-3 disagree on throughput:\n" + "\n".join(bad)


def test_stock_ns3_bbr_standing_queue_is_the_known_ns3_defect(R, rows):
    """Stock ns-3 BBR keeps ~1 BDP queued (its rate samples over-estimate the bottleneck);
    with Linux's sampling semantics it does not, and agrees with ccsim."""
    p = R.Point("bbr", buffer_bdp=4.0, duration_s=DURATION, seeds=(1,), group="test")
    stock, aligned = rows[("stock", p.name)], rows[("aligned", p.name)]
    base = 2 * p.rtt_ms / 2 + 1.2  # base RTT plus one packet's serialisation, ms
    assert stock["ns3_rtt"] > base + 25, _fmt(stock)  # ~1 BDP (40 ms) of queue
    assert aligned["ns3_rtt"] < base + 12, _fmt(aligned)
    assert stock["ccsim_rtt"] < base + 12, _fmt(stock)
