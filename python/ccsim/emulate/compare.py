"""``ccsim.emulate.compare``: one scenario simulated and emulated, side by side.

Relative differences are (simulation - emulation) / emulation: the real kernel is the
reference, as ns-3 is in the ns-3 cross-validation (docs/validation.md).
"""

from __future__ import annotations

import math
from typing import Any

from ..result import Result, _as_scenario
from ..result import run as simulate
from .run import check_environment, emulate, plan


def relative(sim: Any, emu: Any) -> float | None:
    """(sim - emu) / emu; None when either is missing or emu is 0."""
    if not isinstance(sim, (int, float)) or not isinstance(emu, (int, float)) or isinstance(sim, bool):
        return None
    if emu == 0 or math.isnan(float(sim)) or math.isnan(float(emu)):
        return None
    return (float(sim) - float(emu)) / float(emu)


def _pair(sim: Any, emu: Any) -> dict[str, Any]:
    return {"simulation": sim, "emulation": emu, "relative": relative(sim, emu)}


#: Per-flow quantities compared.
FLOW_KEYS = ("throughput_mbps", "rtt_mean_ms", "rtt_p95_ms", "rtt_min_ms", "retransmits", "rto_count")
#: Bottleneck quantities compared.
BOTTLENECK_KEYS = ("utilization", "drops", "random_losses", "queue_mean_pkts", "queue_delay_mean_ms")


def differences(sim: dict[str, Any], emu: dict[str, Any]) -> dict[str, Any]:
    """The quantities of two summaries (simulation, emulation) side by side."""
    flows = []
    for fs, fe in zip(sim["flows"], emu["flows"]):
        row: dict[str, Any] = {"id": fs["id"], "cc": fs["cc"]}
        for k in FLOW_KEYS:
            row[k] = _pair(fs.get(k), fe.get(k))
        flows.append(row)
    out: dict[str, Any] = {
        "flows": flows,
        "total_throughput_mbps": _pair(sim["total_throughput_mbps"], emu["total_throughput_mbps"]),
        "jain_index": _pair(sim["jain_index"], emu["jain_index"]),
    }
    for k in BOTTLENECK_KEYS:
        out[f"bottleneck.{k}"] = _pair(sim["bottleneck"].get(k), emu["bottleneck"].get(k))
    return out


def compare(scenario: Any, seed: int | None = None) -> dict[str, Any]:
    """Simulate and emulate ``scenario`` (same seed); return both summaries and their
    differences: ``{"simulation", "emulation", "differences"}``. The emulation's checks run
    first, so bad input fails before anything runs. Needs what :func:`ccsim.emulate` needs."""
    sc = _as_scenario(scenario)
    plan(sc, seed)
    check_environment()
    sim: Result = simulate(sc, seed=seed)
    emu: Result = emulate(sc, seed=seed)
    s, e = sim.to_dict(), emu.to_dict()
    return {"simulation": s, "emulation": e, "differences": differences(s, e)}
