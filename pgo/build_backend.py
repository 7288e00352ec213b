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
INFO = PROFILE.parent / "profile.toml"
ROOT = PROFILE.parent.parent


def sources_digest(root: Path = ROOT) -> str:
    """A digest of the Rust sources a profile is recorded for (every `.rs` and `Cargo.toml`
    under `crates/`, and `Cargo.lock`): `pgo/train.py` writes it into `pgo/profile.toml`, and a
    build whose sources differ says that its profile is older than its code."""
    h = hashlib.sha256()
    files = sorted(p for p in (root / "crates").rglob("*") if p.suffix == ".rs" or p.name == "Cargo.toml")
    for p in [*files, root / "Cargo.lock"]:
        if p.is_file():
            h.update(p.relative_to(root).as_posix().encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def recorded_digest() -> str | None:
    """The sources digest `pgo/profile.toml` records, if any."""
    try:
        for line in INFO.read_text().splitlines():
            if line.startswith("sources = "):
                return line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return None


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
    saved = {k: os.environ.get(k) for k in ("RUSTFLAGS", "CCSIM_PGO_STALE")}
    if extra:
        old = saved["RUSTFLAGS"]
        os.environ["RUSTFLAGS"] = " ".join(([old] if old else []) + extra)
        # The extension records this (crates/ccsim-py/build.rs), so that `ccsim --version`
        # and the benchmarks' reports say when a profile older than the code was used.
        stale = recorded_digest() != sources_digest()
        os.environ["CCSIM_PGO_STALE"] = "1" if stale else "0"
        _say(why + ("; the profile was recorded for other sources: re-record it with python3 pgo/train.py" if stale else ""))
    else:
        _say(f"building without the profile: {why}")
    try:
        return hook(*args, **kwargs)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def build_wheel(wheel_directory: str, config_settings: Mapping[str, Any] | None = None, metadata_directory: str | None = None) -> str:
    return _with_pgo(maturin.build_wheel, wheel_directory, config_settings, metadata_directory)


def build_editable(wheel_directory: str, config_settings: Mapping[str, Any] | None = None, metadata_directory: str | None = None) -> str:
    return _with_pgo(maturin.build_editable, wheel_directory, config_settings, metadata_directory)


def __getattr__(name: str) -> Any:
    # Hooks a newer maturin adds (prepare_metadata_for_build_editable, ...) pass through.
    return getattr(maturin, name)
