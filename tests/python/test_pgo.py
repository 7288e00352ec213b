"""The build backend's profile-guided optimisation (pgo/build_backend.py): it passes the profile
to rustc only when this rustc can use it, says why not otherwise, and leaves RUSTFLAGS as it
found them."""

from __future__ import annotations

import importlib.util
import os
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def backend(monkeypatch):
    # The hooks delegate to maturin, which the test environment need not have: a stand-in.
    fake = types.ModuleType("maturin")
    for hook in ("build_sdist", "get_requires_for_build_sdist", "get_requires_for_build_wheel",
                 "prepare_metadata_for_build_wheel", "build_wheel", "build_editable"):
        setattr(fake, hook, lambda *a, **k: os.environ.get("RUSTFLAGS"))
    monkeypatch.setitem(sys.modules, "maturin", fake)
    spec = importlib.util.spec_from_file_location("ccsim_build_backend", ROOT / "pgo" / "build_backend.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    monkeypatch.delenv("CCSIM_PGO", raising=False)
    return mod


def test_the_committed_profile_is_used_by_this_rustc(backend, monkeypatch, tmp_path):
    monkeypatch.setenv("CARGO_TARGET_DIR", str(tmp_path))
    flags, why = backend.pgo_flags()
    assert why == "profile-guided (pgo/ccsim.profdata)"
    (copy,) = (tmp_path / "pgo-use").iterdir()
    assert flags == [f"-Cprofile-use={copy}", "-Cllvm-args=-no-pgo-warn-mismatch"]
    assert copy.read_bytes() == (ROOT / "pgo" / "ccsim.profdata").read_bytes()


def test_a_re_recorded_profile_gets_a_new_path(backend, monkeypatch, tmp_path):
    # cargo does not look into the file a flag names: new content must change the flags.
    monkeypatch.setenv("CARGO_TARGET_DIR", str(tmp_path / "target"))
    prof = tmp_path / "ccsim.profdata"
    prof.write_bytes(b"one")
    monkeypatch.setattr(backend, "PROFILE", prof)
    first = backend.profile_copy()
    assert backend.profile_copy() == first
    prof.write_bytes(b"two")
    second = backend.profile_copy()
    assert second != first and second.read_bytes() == b"two" and first.read_bytes() == b"one"


def test_ccsim_pgo_0_builds_without_it(backend, monkeypatch):
    monkeypatch.setenv("CCSIM_PGO", "0")
    assert backend.pgo_flags() == ([], "CCSIM_PGO=0")


def test_a_profile_rustc_cannot_read_is_left_out_with_the_reason(backend, monkeypatch, tmp_path):
    bad = tmp_path / "ccsim.profdata"
    bad.write_bytes(b"not a profile\n")
    monkeypatch.setattr(backend, "PROFILE", bad)
    monkeypatch.setenv("CARGO_TARGET_DIR", str(tmp_path / "target"))
    flags, why = backend.pgo_flags()
    assert flags == []
    assert why.startswith("this rustc cannot use ccsim.profdata (") and "profile" in why


def test_a_missing_profile_is_left_out(backend, monkeypatch, tmp_path):
    monkeypatch.setattr(backend, "PROFILE", tmp_path / "none.profdata")
    assert backend.pgo_flags() == ([], f"{tmp_path / 'none.profdata'} is missing")


def test_the_hooks_add_the_flags_for_the_build_only(backend, monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("CARGO_TARGET_DIR", str(tmp_path))
    monkeypatch.setenv("RUSTFLAGS", "-Cdebuginfo=0")
    seen = backend.build_wheel("unused")
    assert seen == "-Cdebuginfo=0 " + " ".join(backend.flags(backend.profile_copy()))
    assert os.environ["RUSTFLAGS"] == "-Cdebuginfo=0"
    assert "ccsim build: profile-guided (pgo/ccsim.profdata)" in capsys.readouterr().err
    monkeypatch.delenv("RUSTFLAGS")
    monkeypatch.setenv("CCSIM_PGO", "0")
    assert backend.build_editable("unused") is None
    assert "RUSTFLAGS" not in os.environ
    assert "building without the profile: CCSIM_PGO=0" in capsys.readouterr().err
