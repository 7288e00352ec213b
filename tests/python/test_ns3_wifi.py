"""ccsim's 802.11 DCF line vs ns-3's 802.11 ad hoc model: 1 and 2 hops, short runs.

The full comparison (validation/ns3-wifi/run.py, docs/validation.md "802.11 line: ccsim vs
ns-3") supports these tolerances at 1 and 2 hops: 802.11g agrees to 0.0 % at one hop and
+8.1 % at two (ccsim high: an ACK's sender counts backoff during its own ACK, defect A in the
docs); 802.11n -4.8 % at one hop (ccsim's ACKs get the HT preamble, defect B) and +2.4 % at
two. So: one hop within ``TOL_1HOP``, two hops within ``TOL_2HOP``, which also hold once A
and B are fixed (0.0 %, +0.4 %, +0.1 %, -0.8 %). The ns-3 channel is also checked: two
senders two hops apart sense each other without decoding, so their frames fail at about
Bianchi's collision probability for two stations.

The ns-3 program is built with validation/ns3-wifi/build.sh, which pip-installs the ns3 wheel
if needed. The test is skipped only when the ns3 package cannot be installed (no wheel for
this platform, or pip fails, e.g. offline); any other failure is a test failure.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from _support import build_ns3_and_load

REPO = Path(__file__).resolve().parents[2]
RUN_PY = REPO / "validation" / "ns3-wifi" / "run.py"
BUILD_SH = REPO / "validation" / "ns3-wifi" / "build.sh"

TOL_1HOP = 0.06
TOL_2HOP = 0.10
DURATION = 3.0


@pytest.fixture(scope="module")
def R():
    return build_ns3_and_load(BUILD_SH, RUN_PY, "ccsim_ns3_wifi_run")


@pytest.mark.parametrize("profile", ["80211g", "80211n-20mhz"])
@pytest.mark.parametrize("hops,tol", [(1, TOL_1HOP), (2, TOL_2HOP)])
def test_saturation_throughput_agrees(R, profile, hops, tol):
    c = R.run_ccsim(profile, hops, 1, duration=DURATION)["flows"][0]["throughput_mbps"]
    n = R.run_ns3(R.ns3_args(profile, hops, 1, duration=DURATION), None)["flows"][0]["throughput_mbps"]
    assert n > 5.0, f"ns-3 delivered only {n:.2f} Mbps"
    assert abs(c / n - 1) <= tol, f"{profile} {hops} hops: ccsim {c:.2f} vs ns-3 {n:.2f} Mbps ({(c / n - 1) * 100:+.1f}%)"


def test_ns3_channel_two_hops_is_sensed_not_decoded(R):
    """Senders 0 and 2 both send to 1: they sense each other (energy) without decoding, so
    only backoffs ending in the same slot collide; node 2 never decodes node 0's frames."""
    d = R.run_ns3(R.ns3_args("80211g", 2, 1, flows=((0, 1), (2, 1)), duration=DURATION), None)
    failed = R.failed_fraction("ns3", d, [0, 2])
    p = R.bianchi_p(2)
    assert abs(failed / p - 1) < 0.25, f"failed {failed:.3f} vs Bianchi {p:.3f}"
    st = {s["station"]: s for s in d["stations"]}
    # Station 2 decodes nothing but station 1's ACKs; station 0's frames are never detected.
    assert st[2]["rx_ok"] <= st[1]["ack_tx"]
    assert st[2]["rx_drop"].get("PREAMBLE_DETECT_FAILURE", 0) > st[0]["data_tx"] // 2
    assert sum(s["retry_drops"] for s in d["stations"]) == 0
