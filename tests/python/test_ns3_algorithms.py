"""ns-3 reference for Linux's classic congestion-control set (validation/ns3/algorithms.py): the
driver runs each algorithm in ns-3 as the class it names, with Linux's constants where ns-3's
defaults differ, on the network ccsim runs. A few 10 s ns-3 runs at 10 Mbps (about 3 s of ns-3
CPU time); built by bench/ns3/build.sh, skipped only where the ns3 package cannot be installed.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from _support import build_ns3_and_load

REPO = Path(__file__).resolve().parents[2]
ALGORITHMS_PY = REPO / "validation" / "ns3" / "algorithms.py"
BUILD_SH = REPO / "bench" / "ns3" / "build.sh"


@pytest.fixture(scope="module")
def A():
    return build_ns3_and_load(BUILD_SH, ALGORITHMS_PY, "ccsim_ns3_algorithms")


def _ns3(A, cc: str, extra: list[str] = ()) -> dict:
    """The first second of one flow at 100 Mbps into an 8 BDP buffer: slow start, where
    Hybla's rho acts (longer runs with 32 MiB socket buffers take ns-3 minutes)."""
    import json

    p = A.R.Point(cc, rate_mbps=100.0, buffer_bdp=8.0, duration_s=1.0, seeds=(1,), group=cc)
    args = [*A.R.ns3_args(p, 1, A.VARIANT), *extra]
    out = subprocess.run([str(A.R.NS3_BIN), *args], capture_output=True, text=True, check=True).stdout
    return json.loads([line for line in out.splitlines() if line.startswith("{")][-1])


def test_every_algorithm_runs_in_ns3_as_its_class_on_ccsims_network(A):
    type_ids = subprocess.run([str(A.R.NS3_BIN), "--PrintTypeIds"], capture_output=True, text=True).stdout
    for cc, cls in A.ALGOS.items():
        assert f"ns3::{cls}\n" in type_ids, cc
    # The same grid point in both simulators: the buffer conversion is checked by aggregate().
    p = A.R.Point("vegas", duration_s=10.0, seeds=(1,), group="vegas")
    rows, _, _ = A.run_all([p], 1, REPO / "validation" / "ns3" / "results" / "raw", {"vegas"}, progress=False)
    assert rows[0]["ccsim_buffer_pkts"] == rows[0]["ns3_buffer_pkts"] == 33
    assert rows[0]["ns3_total"] > 0 and rows[0]["ccsim_total"] > 0


def test_linux_constants_reach_ns3(A):
    # Hybla's reference RTT: 25 ms (Linux) makes a 40 ms flow's rho 1.6, ns-3's default 50 ms
    # makes it 1 (rho is clamped at 1): slow start grows by 2^rho - 1 = 2.0 segments per ACK
    # instead of 1, so in the first second Linux's constant sends more and overflows the buffer
    # (measured: 12,000 segments and 3,049 drops, against 8,049 and none). The last value of a
    # repeated flag is the one ns-3 keeps.
    linux = _ns3(A, "hybla")
    assert "--ns3::TcpHybla::RRTT=25ms" in A.R.ns3_args(A.R.Point("hybla"), 1, A.VARIANT)
    stock = _ns3(A, "hybla", ["--ns3::TcpHybla::RRTT=50ms"])
    assert linux["flows"][0]["segments_sent"] > 1.2 * stock["flows"][0]["segments_sent"]
    assert linux["bottleneck"]["drops"] > 0 == stock["bottleneck"]["drops"]
    same = _ns3(A, "hybla", ["--ns3::TcpHybla::RRTT=25ms"])
    assert same["flows"][0]["segments_sent"] == linux["flows"][0]["segments_sent"]
