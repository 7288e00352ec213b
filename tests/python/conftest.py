"""Shared fixtures for the ccsim Python tests.

These tests run against the real, installed extension module ``ccsim._core``
(build it with ``pip install .`` or ``maturin develop`` first).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from _support import base_scenario, find_ccsim_command, to_toml


@pytest.fixture
def write_scenario(tmp_path):
    """write_scenario(dict_or_text, name="scenario.toml") -> Path of the written file."""

    def _write(content: dict[str, Any] | str, name: str = "scenario.toml") -> Path:
        path = tmp_path / name
        path.write_text(content if isinstance(content, str) else to_toml(content), encoding="utf-8")
        return path

    return _write


@pytest.fixture
def scenario_file(write_scenario) -> Path:
    return write_scenario(base_scenario())


@pytest.fixture
def runner() -> CliRunner:
    """A CliRunner that keeps stdout and stderr apart (click 8.1 and 8.2+)."""
    try:
        return CliRunner(mix_stderr=False)  # click < 8.2
    except TypeError:
        return CliRunner()  # click >= 8.2: stderr is always separate


@pytest.fixture(scope="session")
def ccsim_cmd() -> str:
    return find_ccsim_command()
