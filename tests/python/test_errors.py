"""Invalid input: every kind of mistake gives one clear line naming the field and the value.

Each case is checked three ways: the API (``ccsim.load``), the CLI through
click's CliRunner, and the installed ``ccsim`` executable (exit status 2,
exactly one ``error:`` line on stderr, no traceback, no Rust panic text).

Validation happens in the Rust core; these tests only rely on the field path
and the offending value appearing in the message, not on the exact wording.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import pytest

import ccsim
from ccsim import ScenarioError
from ccsim.cli import cli

from _support import base_scenario, run_cmd, to_toml


@dataclass
class Case:
    id: str
    build: Callable[[], dict[str, Any] | str]  # a scenario dict, or raw TOML text
    expect: tuple[str, ...]  # substrings the message must contain (field path, value)


def _edit(fn: Callable[[dict[str, Any]], None]) -> Callable[[], dict[str, Any]]:
    def build() -> dict[str, Any]:
        d = base_scenario()
        fn(d)
        return d

    return build


def _set(path: tuple, value: Any) -> Callable[[dict[str, Any]], None]:
    def fn(d: dict[str, Any]) -> None:
        node = d
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value

    return fn


def _delete(path: tuple) -> Callable[[dict[str, Any]], None]:
    def fn(d: dict[str, Any]) -> None:
        node = d
        for key in path[:-1]:
            node = node[key]
        del node[path[-1]]

    return fn


CASES = [
    # unknown keys
    Case("unknown-key-top-level", _edit(_set(("durashun",), "5s")), ("durashun",)),
    Case("unknown-key-bottleneck", _edit(_set(("bottleneck", "ratte"), "5Mbps")),
         ("bottleneck", "ratte")),
    Case("unknown-key-flows", _edit(_set(("flows", 0, "colour"), "red")), ("flows[0]", "colour")),
    # unknown algorithm
    Case("unknown-algorithm", _edit(_set(("flows", 0, "cc"), "cubicc")), ("flows[0].cc", "cubicc")),
    # malformed units
    Case("malformed-rate", _edit(_set(("bottleneck", "rate"), "10Mbit")),
         ("bottleneck.rate", "10Mbit")),
    Case("malformed-delay", _edit(_set(("bottleneck", "delay"), "20 lightyears")),
         ("bottleneck.delay", "20 lightyears")),
    Case("malformed-buffer", _edit(_set(("bottleneck", "buffer"), "50xyz")),
         ("bottleneck.buffer", "50xyz")),
    # out-of-range values
    Case("loss-out-of-range", _edit(_set(("bottleneck", "loss"), 1.5)), ("bottleneck.loss", "1.5")),
    Case("count-zero", _edit(_set(("flows", 0, "count"), 0)), ("flows[0].count", "0")),
    Case("mss-zero", _edit(_set(("tcp", "mss"), 0)), ("tcp.mss", "0")),
    # missing required fields
    Case("missing-duration", _edit(_delete(("duration",))), ("duration",)),
    Case("missing-bottleneck-rate", _edit(_delete(("bottleneck", "rate"))), ("bottleneck.rate",)),
]


def _write(tmp_path, case: Case):
    content = case.build()
    path = tmp_path / f"{case.id}.toml"
    path.write_text(content if isinstance(content, str) else to_toml(content), encoding="utf-8")
    return path


def _check_message(message: str, case: Case, path) -> None:
    assert "\n" not in message
    assert str(path) in message, f"message does not name the file: {message!r}"
    for part in case.expect:
        assert part in message, f"{part!r} not in {message!r}"


def _check_cli_stderr(stderr: str, case: Case, path) -> None:
    lines = stderr.splitlines()
    assert len(lines) == 1, f"expected exactly one line on stderr, got {stderr!r}"
    assert lines[0].startswith("error: ")
    assert "Traceback" not in stderr
    assert "panicked" not in stderr
    _check_message(lines[0], case, path)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_invalid_scenario_api(case, tmp_path):
    path = _write(tmp_path, case)
    with pytest.raises(ScenarioError) as err:
        ccsim.load(path)
    _check_message(str(err.value), case, path)
    # the same problem, without a file, from validate() and run()
    content = case.build()
    sc = ccsim.Scenario.from_dict(content)
    for call in (sc.validate, lambda: ccsim.run(sc)):
        with pytest.raises(ScenarioError) as err:
            call()
        for part in case.expect:
            assert part in str(err.value)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_invalid_scenario_cli_runner(case, tmp_path, runner):
    path = _write(tmp_path, case)
    res = runner.invoke(cli, ["run", str(path)])
    assert res.exit_code == 2, res.output
    assert res.stdout == ""
    _check_cli_stderr(res.stderr, case, path)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_invalid_scenario_installed_command(case, tmp_path, ccsim_cmd):
    path = _write(tmp_path, case)
    proc = run_cmd(ccsim_cmd, "run", str(path), "--json")
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    _check_cli_stderr(proc.stderr, case, path)


# -- problems Python reports itself (before the core sees the scenario) -------------------

TOML_SYNTAX_ERROR = """\
duration = "3s"

[bottleneck]
rate = "10Mbps
delay = "20ms"
"""


def test_toml_syntax_error_api(write_scenario):
    path = write_scenario(TOML_SYNTAX_ERROR, name="broken.toml")
    with pytest.raises(ScenarioError) as err:
        ccsim.load(path)
    message = str(err.value)
    assert "\n" not in message
    # path:line:col, pointing at the unterminated string on line 4
    assert message.startswith(f"{path}:4:"), message


def test_toml_syntax_error_cli(write_scenario, runner, ccsim_cmd):
    path = write_scenario(TOML_SYNTAX_ERROR, name="broken.toml")
    res = runner.invoke(cli, ["run", str(path)])
    assert res.exit_code == 2
    assert res.stderr.startswith(f"error: {path}:4:")
    assert len(res.stderr.splitlines()) == 1
    proc = run_cmd(ccsim_cmd, "run", str(path))
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [res.stderr.strip()]
    assert "Traceback" not in proc.stderr


def test_missing_file_api(tmp_path):
    path = tmp_path / "does-not-exist.toml"
    with pytest.raises(ScenarioError) as err:
        ccsim.load(path)
    assert str(path) in str(err.value)
    with pytest.raises(ScenarioError) as err:
        ccsim.run(path)
    assert str(path) in str(err.value)


def test_directory_instead_of_file(tmp_path, runner):
    res = runner.invoke(cli, ["run", str(tmp_path)])
    assert res.exit_code == 2
    assert str(tmp_path) in res.stderr
    assert len(res.stderr.splitlines()) == 1
