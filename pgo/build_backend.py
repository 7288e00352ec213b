"""ccsim's PEP 517 build backend: maturin's, with the profile-guided optimisation switched on.

``pip install .`` builds the Rust extension through maturin; this module only adds
``-Cprofile-use=pgo/ccsim.profdata`` to ``RUSTFLAGS`` first (``pgo/train.py`` says what the
profile is and how it is made). Before that it checks that this rustc reads the profile, by
compiling an empty crate with it; if it cannot (or ``CCSIM_PGO=0`` is set, or the file is
missing) the build goes on without it, about a quarter slower on E1 and with the same results,
and says why on stderr. Every other hook is maturin's own.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable, Mapping

import maturin
from maturin import (  # noqa: F401  (the hooks this backend does not change)
    build_sdist,
    get_requires_for_build_sdist,
    get_requires_for_build_wheel,
    prepare_metadata_for_build_wheel,
)

PROFILE = Path(__file__).resolve().parent / "ccsim.profdata"
ROOT = PROFILE.parent.parent


def profile_copy() -> Path:
    """The profile under a name made from its content, in the cargo target directory: cargo
    rebuilds when RUSTFLAGS change but does not look into the file a flag names, so a
    re-recorded profile must come with a new path."""
    digest = hashlib.sha256(PROFILE.read_bytes()).hexdigest()[:16]
    target = Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target").resolve()
    copy = target / "pgo-use" / f"ccsim-{digest}.profdata"
    if not copy.exists():
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(PROFILE, copy)
    return copy


def flags(profile: Path) -> list[str]:
    # LLVM warns about every function whose code changed since the profile was recorded; a
    # stale profile is expected between re-recordings, so those warnings are off.
    return [f"-Cprofile-use={profile}", "-Cllvm-args=-no-pgo-warn-mismatch"]


def _say(msg: str) -> None:
    print(f"ccsim build: {msg}", file=sys.stderr, flush=True)


def pgo_flags() -> tuple[list[str], str]:
    """The rustc flags of the profile-guided build, or none and why not."""
    if os.environ.get("CCSIM_PGO", "1") == "0":
        return [], "CCSIM_PGO=0"
    if not PROFILE.exists():
        return [], f"{PROFILE} is missing"
    try:
        use = flags(profile_copy())
    except OSError as exc:
        return [], f"cannot copy {PROFILE.name} into the target directory ({exc})"
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "probe.rs"
        src.write_text("pub fn probe() {}\n")
        try:
            probe = subprocess.run([os.environ.get("RUSTC", "rustc"), "--crate-type=lib", "--emit=obj", "-o", str(Path(tmp) / "probe.o"), *use, str(src)],
                                   capture_output=True, text=True, timeout=120)
        except (OSError, subprocess.SubprocessError) as exc:
            return [], f"cannot run rustc to check the profile ({exc})"
        # An unreadable profile is only a warning to rustc (the build would silently lose it).
        if probe.returncode != 0 or "warning" in probe.stderr:
            first = (probe.stderr.strip().splitlines() or ["no message"])[0]
            return [], f"this rustc cannot use {PROFILE.name} ({first})"
    return use, "profile-guided (pgo/ccsim.profdata)"


def _with_pgo(hook: Callable[..., str], *args: Any, **kwargs: Any) -> str:
    extra, why = pgo_flags()
    old = os.environ.get("RUSTFLAGS")
    if extra:
        os.environ["RUSTFLAGS"] = " ".join(([old] if old else []) + extra)
        _say(why)
    else:
        _say(f"building without the profile: {why}")
    try:
        return hook(*args, **kwargs)
    finally:
        if old is None:
            os.environ.pop("RUSTFLAGS", None)
        else:
            os.environ["RUSTFLAGS"] = old


def build_wheel(wheel_directory: str, config_settings: Mapping[str, Any] | None = None, metadata_directory: str | None = None) -> str:
    return _with_pgo(maturin.build_wheel, wheel_directory, config_settings, metadata_directory)


def build_editable(wheel_directory: str, config_settings: Mapping[str, Any] | None = None, metadata_directory: str | None = None) -> str:
    return _with_pgo(maturin.build_editable, wheel_directory, config_settings, metadata_directory)


def __getattr__(name: str) -> Any:
    # Hooks a newer maturin adds (prepare_metadata_for_build_editable, ...) pass through.
    return getattr(maturin, name)
