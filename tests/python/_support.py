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


def build_ns3_and_load(build_sh: Path, run_py: Path, module_name: str):
    """Build an ns-3 program against the PyPI ns3 wheel (``build_sh``) and import its runner
    (``run_py``). Skips with the reason only where the ns3 package cannot be installed (not
    manylinux x86_64, or pip fails); any other build failure fails the test."""
    import importlib.util
    import platform

    import pytest

    if not (sys.platform.startswith("linux") and platform.machine() in ("x86_64", "AMD64")):
        pytest.skip(
            f"the ns3 package cannot be installed here: the PyPI ns3 wheel is manylinux x86_64 only "
            f"(this is {sys.platform} {platform.machine()})"
        )
    name = build_sh.relative_to(REPO)
    env = {**os.environ, "PYTHON": sys.executable}
    try:
        proc = subprocess.run(["bash", str(build_sh)], capture_output=True, text=True, env=env, timeout=600)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{name} took more than 10 minutes")
    if proc.returncode != 0:
        err = proc.stderr.strip()
        if "pip install" in err and "failed" in err:
            pytest.skip(f"the ns3 package cannot be installed: {err.splitlines()[-1]}")
        pytest.fail(f"{name} failed (exit {proc.returncode}):\n{err[-3000:]}")
    spec = importlib.util.spec_from_file_location(module_name, run_py)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses need the module registered
    spec.loader.exec_module(mod)
    return mod


def assert_one_line_error(runner, tmp_path: Path, scenario: dict[str, Any], field: str, words: list[str]) -> None:
    """A bad ``scenario`` is one line naming ``field`` (and containing ``words``) through the
    CLI, with exit status 2, and the same message as a ``ccsim.ScenarioError`` from Python."""
    import pytest

    import ccsim
    from ccsim.cli import cli

    path = tmp_path / "net.toml"
    path.write_text(to_toml(scenario), encoding="utf-8")
    res = runner.invoke(cli, ["run", str(path)])
    assert res.exit_code == 2, res.output
    lines = [ln for ln in res.stderr.splitlines() if ln]
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith(f"error: {path}: {field}: "), lines[0]
    for w in words:
        assert w in lines[0], lines[0]
    with pytest.raises(ccsim.ScenarioError) as err:
        ccsim.run(scenario)
    assert str(err.value) == lines[0][len(f"error: {path}: "):]


def results_here_and_in_another_process(toml_text: str, seed: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """The summary of the scenario ``toml_text`` run with ``seed`` in this process and in a new
    Python process, ``wall_seconds`` removed from both."""
    import tomllib

    import ccsim

    here = ccsim.run(ccsim.Scenario.from_dict(tomllib.loads(toml_text)), seed=seed).to_dict()
    code = (
        "import json, sys, tomllib, ccsim\n"
        f"d = ccsim.run(ccsim.Scenario.from_dict(tomllib.loads(sys.stdin.read())), seed={seed}).to_dict()\n"
        "print(json.dumps(d))\n"
    )
    other = json.loads(subprocess.run([sys.executable, "-c", code], input=toml_text, capture_output=True, text=True,
                                      check=True).stdout)
    for d in (here, other):
        d.pop("wall_seconds")
    return here, other
