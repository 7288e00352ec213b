#!/usr/bin/env python3
"""Regenerate the profile of ccsim's profile-guided build (``pgo/ccsim.profdata``).

ccsim's Python extension is built with LLVM's profile-guided optimisation: ``pip install .``
goes through ``pgo/build_backend.py``, which hands rustc ``-Cprofile-use=pgo/ccsim.profdata``.
The profile counts how often each branch of the engine was taken in the training runs of
``pgo/workload.py``; the compiler lays the common path out straight, inlines by it and moves
cold code away. Results are the same bit for bit (the profile changes code layout, not
arithmetic); E1 runs about a quarter faster (README, "Measured speed").

Run this after changing the engine's hot code (a stale profile still builds; the functions
that changed just lose their counts):

    python3 pgo/train.py            # an instrumented build (2 minutes the first time), the runs, a merge

It needs ``maturin`` (the dev install has it) and ``llvm-profdata`` from the Rust toolchain
(``rustup component add llvm-tools``). Steps:

1. build the extension instrumented (``RUSTFLAGS=-Cprofile-generate``), into ``target/pgo``;
2. run ``pgo/workload.py`` on it (a copy of ``python/ccsim`` with the instrumented ``_core``);
3. merge the raw counts into ``pgo/ccsim.profdata`` (LLVM's indexed format, the one rustc
   reads; an LLVM reads the versions of that format written before it, and
   ``pgo/build_backend.py`` checks that the installing rustc can), and record the toolchain
   and commit in ``pgo/profile.toml``.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PGO = ROOT / "pgo"
sys.path.insert(0, str(PGO))
from build_backend import sources_digest  # noqa: E402  (one definition of the digest)
PROFILE = PGO / "ccsim.profdata"
INFO = PGO / "profile.toml"


def rustc_info() -> dict[str, str]:
    out = subprocess.run(["rustc", "-vV"], capture_output=True, text=True, check=True).stdout
    info = dict(line.split(": ", 1) for line in out.splitlines()[1:] if ": " in line)
    info["version"] = out.splitlines()[0]
    return info


def llvm_profdata(info: dict[str, str]) -> Path:
    sysroot = subprocess.run(["rustc", "--print", "sysroot"], capture_output=True, text=True, check=True).stdout.strip()
    tool = Path(sysroot) / "lib" / "rustlib" / info["host"] / "bin" / "llvm-profdata"
    if not tool.exists():
        sys.exit(f"error: {tool} not found; install it with: rustup component add llvm-tools")
    return tool


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory (raw profiles, instrumented package)")
    args = ap.parse_args()
    info = rustc_info()
    profdata = llvm_profdata(info)
    tmp = Path(tempfile.mkdtemp(prefix="ccsim-pgo-"))
    raw, wheel_dir, pkg = tmp / "raw", tmp / "wheel", tmp / "pkg"
    try:
        env = dict(os.environ)
        env["RUSTFLAGS"] = (env.get("RUSTFLAGS", "") + f" -Cprofile-generate={raw}").strip()
        env["CARGO_TARGET_DIR"] = str(ROOT / "target" / "pgo")
        print("1/3 instrumented build (target/pgo)", flush=True)
        subprocess.run([sys.executable, "-m", "maturin", "build", "--release", "--quiet", "-o", str(wheel_dir)], cwd=ROOT, env=env, check=True)
        wheels = sorted(wheel_dir.glob("*.whl"))
        if len(wheels) != 1:
            sys.exit(f"error: expected one wheel in {wheel_dir}, found {len(wheels)}")
        shutil.copytree(ROOT / "python" / "ccsim", pkg / "ccsim", ignore=shutil.ignore_patterns("_core*.so", "__pycache__"))
        with zipfile.ZipFile(wheels[0]) as z:
            cores = [n for n in z.namelist() if re.fullmatch(r"ccsim/_core[^/]*\.(so|pyd)", n)]
            if len(cores) != 1:
                sys.exit(f"error: expected one ccsim/_core library in {wheels[0].name}, found {cores}")
            (pkg / cores[0]).write_bytes(z.read(cores[0]))
        print("2/3 training runs (pgo/workload.py)", flush=True)
        run_env = dict(os.environ)
        run_env["PYTHONPATH"] = str(pkg)
        run_env["LLVM_PROFILE_FILE"] = str(raw / "ccsim-%p-%m.profraw")
        check = subprocess.run([sys.executable, "-c", "import ccsim, sys; sys.stdout.write(ccsim.__file__)"], env=run_env, capture_output=True, text=True, check=True).stdout
        if not check.startswith(str(pkg)):
            sys.exit(f"error: the training would import {check}, not the instrumented copy in {pkg}")
        subprocess.run([sys.executable, str(PGO / "workload.py")], cwd=ROOT, env=run_env, check=True)
        raws = sorted(raw.glob("*.profraw"))
        if not raws:
            sys.exit(f"error: the training runs left no raw profile in {raw}")
        print(f"3/3 merging {len(raws)} raw profile(s) into {PROFILE.relative_to(ROOT)}", flush=True)
        subprocess.run([str(profdata), "merge", "--sparse", "-o", str(PROFILE), *map(str, raws)], check=True)
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "crates"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
        INFO.write_text(
            "# Written by pgo/train.py: what pgo/ccsim.profdata was recorded with.\n"
            f'date = "{_dt.date.today().isoformat()}"\n'
            f'commit = "{commit}{"+changes" if dirty else ""}"\n'
            f'rustc = "{info["version"]}"\n'
            f'llvm = "{info.get("LLVM version", "?")}"\n'
            "# Digest of the Rust sources the profile is for (build_backend.sources_digest).\n"
            f'sources = "{sources_digest()}"\n'
        )
        print(f"wrote {PROFILE.relative_to(ROOT)} ({PROFILE.stat().st_size:,} bytes) and {INFO.relative_to(ROOT)}")
    finally:
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
