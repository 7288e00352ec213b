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


def test_the_sources_digest_follows_the_rust_sources(backend, tmp_path):
    src = tmp_path / "crates" / "core" / "src"
    src.mkdir(parents=True)
    (src / "lib.rs").write_text("fn a() {}\n")
    (tmp_path / "crates" / "core" / "Cargo.toml").write_text("[package]\n")
    (tmp_path / "Cargo.lock").write_text("# lock\n")
    (tmp_path / "crates" / "core" / "README.md").write_text("not a source\n")
    first = backend.sources_digest(tmp_path)
    (tmp_path / "crates" / "core" / "README.md").write_text("still not a source\n")
    assert backend.sources_digest(tmp_path) == first
    (src / "lib.rs").write_text("fn a() { let _x = 1; }\n")
    changed = backend.sources_digest(tmp_path)
    assert changed != first
    (src / "lib.rs").write_text("fn a() {}\n")
    assert backend.sources_digest(tmp_path) == first
    (tmp_path / "Cargo.lock").write_text("# another lock\n")
    assert backend.sources_digest(tmp_path) not in (first, changed)


def test_a_build_with_an_older_profile_says_so(backend, monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("CARGO_TARGET_DIR", str(tmp_path))
    monkeypatch.delenv("CCSIM_PGO_STALE", raising=False)
    seen = {}

    def hook(*a):
        seen["stale"] = os.environ.get("CCSIM_PGO_STALE")

    info = tmp_path / "profile.toml"
    monkeypatch.setattr(backend, "INFO", info)
    info.write_text(f'sources = "{backend.sources_digest()}"\n')
    backend._with_pgo(hook)
    assert seen["stale"] == "0" and "re-record" not in capsys.readouterr().err
    info.write_text('sources = "0000000000000000"\n')
    backend._with_pgo(hook)
    assert seen["stale"] == "1"
    assert "the profile was recorded for other sources: re-record it with python3 pgo/train.py" in capsys.readouterr().err
    assert "CCSIM_PGO_STALE" not in os.environ


def test_build_kind_names_the_three_builds(monkeypatch):
    import ccsim.build as b

    for pgo, stale, text in [(False, False, "build without the profile-guided optimisation"),
                             (True, False, "profile-guided build"),
                             (True, True, "profile-guided build, profile older than the sources")]:
        monkeypatch.setattr(b._core, "BUILD_PGO", pgo)
        monkeypatch.setattr(b._core, "BUILD_PGO_STALE", stale)
        assert b.build_kind() == text
