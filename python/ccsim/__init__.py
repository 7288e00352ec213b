"""ccsim: a fast, deterministic packet-level TCP congestion-control simulator.

Typical use::

    import ccsim

    result = ccsim.run("examples/cubic_pair.toml", seed=3)
    print(result.summary[["id", "cc", "throughput_mbps"]])
    result.plot("throughput_cwnd.png")

or build a scenario in code::

    sc = (ccsim.Scenario(duration="10s", seed=1)
          .bottleneck(rate="10Mbps", delay="20ms", buffer="1bdp")
          .add_flow("cubic", count=2))
    result = ccsim.run(sc)

Real Linux TCP over an emulated bottleneck (Linux, root; takes the scenario's duration)::

    res = ccsim.emulate(sc)                 # the same Result, with "mode": "emulation"
    both = ccsim.compare(sc)                # simulation and emulation side by side

Sweeps (every combination x seeds, run in parallel and stored as Parquet)::

    df = ccsim.sweep(sc, {"bottleneck.loss": [0, 0.001, 0.01]}, runs=5, out="runs/loss")
    df = ccsim.results.load("runs/loss")          # later, from the stored files (column loss)
    ccsim.results.query("runs/loss", "SELECT loss, avg(throughput_mbps) FROM runs GROUP BY ALL")

The simulation itself runs in the Rust extension module ``ccsim._core``; all
validation of scenario fields, units and ranges happens there.
"""

from __future__ import annotations

try:
    from . import _core
except ImportError as exc:  # pragma: no cover - only without a built extension
    raise ImportError(
        "the ccsim extension module (ccsim._core) is not built or not importable; "
        "install the package with `pip install .` (or `maturin develop`) from the "
        f"repository root ({exc})"
    ) from exc

from .scenario import Scenario, ScenarioError, algorithms, load, qdiscs
from .cc import CA_ACK_ECE, AlgorithmError, CaEvent, CaState, CongestionControl, register, unregister
from .result import CcsimWarning, Result, run
from . import limits, results
from . import sweep  # a package that can be called: ccsim.sweep(...) runs a sweep; ccsim.sweep.execute, ...
from .emulate import EmulationError, EmulationFailed, compare
from .emulate.run import emulate  # the function; its package's API is also on it (ccsim.emulate.plan, ...)

__version__: str = _core.__version__

__all__ = [
    "AlgorithmError",
    "CA_ACK_ECE",
    "CaEvent",
    "CaState",
    "CongestionControl",
    "register",
    "unregister",
    "CcsimWarning",
    "Result",
    "Scenario",
    "ScenarioError",
    "EmulationError",
    "EmulationFailed",
    "__version__",
    "algorithms",
    "qdiscs",
    "compare",
    "emulate",
    "limits",
    "load",
    "results",
    "run",
    "sweep",
]
