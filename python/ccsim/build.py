"""Which build of the engine is installed: with the profile-guided optimisation (``pgo/``,
what ``pip install`` gives), with a profile recorded for older sources, or without it."""

from __future__ import annotations

from . import _core


def build_kind() -> str:
    """A short description for ``ccsim --version`` and the benchmarks' reports."""
    if not _core.BUILD_PGO:
        return "build without the profile-guided optimisation"
    if _core.BUILD_PGO_STALE:
        return "profile-guided build, profile older than the sources"
    return "profile-guided build"
