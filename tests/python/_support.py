"""Helpers shared by the ccsim Python tests (imported by conftest and the tests)."""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"

#: A small, valid scenario (kept short so the tests are quick).
BASE_SCENARIO: dict[str, Any] = {
    "duration": "3s",
    "seed": 1,
    "sample_interval": "100ms",
    "bottleneck": {"rate": "10Mbps", "delay": "20ms", "buffer": "50pkt", "loss": 0.0},
    "tcp": {"mss": 1448, "delayed_ack": True, "min_rto": "200ms"},
    "flows": [{"cc": "cubic", "count": 2, "start": "0s"}],
}


def base_scenario() -> dict[str, Any]:
    return copy.deepcopy(BASE_SCENARIO)


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)  # a JSON string is a valid TOML basic string
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {_toml_value(x)}" for k, x in v.items()) + " }"
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise TypeError(type(v))


def to_toml(d: dict[str, Any]) -> str:
    """Minimal TOML writer for scenario dicts (scalars, tables, arrays of tables)."""
    lines = [f"{k} = {_toml_value(v)}" for k, v in d.items() if not isinstance(v, (dict, list))]
    for k, v in d.items():
        if isinstance(v, dict):
            lines += ["", f"[{k}]"] + [f"{kk} = {_toml_value(vv)}" for kk, vv in v.items()]
        elif isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            for item in v:
                lines += ["", f"[[{k}]]"] + [f"{kk} = {_toml_value(vv)}" for kk, vv in item.items()]
        elif isinstance(v, list):
            lines.insert(0, f"{k} = {_toml_value(v)}")
    return "\n".join(lines) + "\n"


def find_ccsim_command() -> str:
    """The installed `ccsim` console script (next to this interpreter, or on PATH)."""
    bindir = Path(sys.executable).parent
    for name in ("ccsim", "ccsim.exe"):
        candidate = bindir / name
        if candidate.exists():
            return str(candidate)
    found = shutil.which("ccsim")
    assert found, "the `ccsim` command is not installed; run `pip install .` first"
    return found


def run_cmd(cmd: str, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("CCSIM_DEBUG", None)
    return subprocess.run(
        [cmd, *args], capture_output=True, text=True, timeout=300, cwd=cwd, env=env
    )


def default_sigint() -> None:
    """preexec_fn for a child that a test interrupts with SIGINT: a shell that starts the test
    run in the background (``cmd &``) leaves SIGINT ignored, and children inherit that."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)
