"""The ways an emulation can fail or be stopped."""

from __future__ import annotations

from ..scenario import ScenarioError


class EmulationError(ScenarioError):
    """Emulation cannot run this scenario here: bad input for the kernel or the emulator
    (an algorithm the kernel lacks, a rate above what the emulator holds, not a dumbbell) or
    a missing prerequisite (root, network namespaces, ``/dev/net/tun``, ``ip``).

    A :class:`ccsim.ScenarioError` (so a ``ValueError``): ``str(error)`` is one line naming
    the field, the value and what is accepted; ``ccsim emulate`` exits with status 2.
    """


class EmulationFailed(RuntimeError):
    """The emulation started but did not complete (a traffic program failed, a device
    vanished). Everything it created has been removed by the time this is raised."""


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived while an emulation ran. Raised in place of the signal's default action
    so that everything the emulation created is removed first; a KeyboardInterrupt, so code
    that cleans up after Ctrl-C cleans up after SIGTERM too. ``ccsim emulate`` and ``ccsim
    compare`` then exit with status 143 (128 + SIGTERM), as a process killed by it would."""
