"""Real Linux TCP over an emulated bottleneck: ``ccsim emulate`` and ``ccsim compare``.

:func:`emulate` runs a scenario's dumbbell with the kernel's own congestion control between
two network namespaces, through ccsim's user-space link emulator (no netem or qdisc
module); :func:`compare` runs it both ways and lines the results up. Linux only, as root.
"""

from .compare import compare
from .errors import EmulationError, EmulationFailed, Terminated
from .run import MAX_RATE_BPS, check_environment, emulate, kernel_algorithms, plan

__all__ = [
    "MAX_RATE_BPS",
    "EmulationError",
    "EmulationFailed",
    "Terminated",
    "check_environment",
    "compare",
    "emulate",
    "kernel_algorithms",
    "plan",
]
