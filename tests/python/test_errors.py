"""Invalid input: every kind of mistake gives one clear line naming the field and the value.

Each case is checked three ways: the API (``ccsim.load``), the CLI through
click's CliRunner, and the installed ``ccsim`` executable (exit status 2,
exactly one ``error:`` line on stderr, no traceback, no Rust panic text).

Validation happens in the Rust core; the first tests only rely on the field path
and the offending value appearing in the message, not on the exact wording; those
of issue 11 (below) check what is accepted too, and that the CLI and the Python API
give the same text.
"""

from __future__ import annotations

import math
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
    Case("rto-estimator", _edit(_set(("tcp", "rto_estimator"), "bsd")), ("tcp.rto_estimator", '"bsd"', '"rfc6298"', '"linux"')),
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


# -- inputs that used to escape the one-line rule (issue 11, item 4) -----------------------------
#
# Each file below is fed to the installed command (`ccsim run`, or `ccsim sweep` for sweep
# files) and to the Python API: exit status 2, exactly one line on stderr, naming the file, the
# field, the value and what is accepted; from Python a ScenarioError with the same text.

SCENARIO = """\
duration = "3s"

[bottleneck]
rate = "10Mbps"
delay = "20ms"
buffer = "50pkt"

[[flows]]
cc = "cubic"
"""

SWEEP = SCENARIO + """
[sweep]
runs = 1
"bottleneck.loss" = [0.0, 0.01]
"""


def _nested(depth: int, inner: str = "1", open_: str = "[", close: str = "]") -> str:
    return open_ * depth + inner + close * depth


def _with(text: str, old: str, new: str) -> str:
    assert old in text
    return text.replace(old, new, 1)


@dataclass
class InputCase:
    id: str
    content: str | bytes | None  # the file's content; None: the path is given by `path`
    expect: tuple[str, ...]  # the field, the value, what is accepted
    sweep: bool = False  # a sweep file: `ccsim sweep FILE`, ccsim.sweep(FILE)
    path: Callable[[Any], Any] | None = None  # tmp_path -> the path to pass (content None)


DEPTH = ("nested more than 32 levels deep", "accepted: at most 32 levels of tables and arrays")
SEED = "accepted: an integer in [0, 9223372036854775807]"
RATE = "accepted: a rate from 1bps to 10000Gbps"


def _sparse_7gb(tmp_path):
    path = tmp_path / "huge.toml"
    with open(path, "wb") as fh:
        fh.write(SCENARIO.encode())
        fh.truncate(7 * 1024**3)  # 7 GB, sparse: nothing is written
    return path


INPUT_CASES = [
    # nesting: tomllib's recursion limit (1000 levels), and what got past it to the core
    InputCase("nested-1000-arrays", f"x = {_nested(1000)}\n" + SCENARIO, ("x", *DEPTH)),
    InputCase("nested-1000-inline-tables", f"x = {_nested(1000, '{a = 1}', '{a = ', '}')}\n" + SCENARIO,
              ("x", *DEPTH)),
    InputCase("nested-1000-after-brackets-in-strings-and-comments",
              _with(SCENARIO, 'duration = "3s"',
                    'duration = "3s"  # [[[[\nname = "[[[[{{"\ndescription = """\n[[[[ ]]]] {{{{\n"""')
              + '\n[[flows]]\ncc = "bbr"\nparams = { beta = ' + _nested(1000) + " }\n",
              ("flows[1].params", *DEPTH)),
    InputCase("nested-200-arrays", f"x = {_nested(200)}\n" + SCENARIO, ("x[0][0][0][0][0]...", *DEPTH)),
    InputCase("nested-130-in-params", SCENARIO + f"params = {{ beta = {_nested(130)} }}\n",
              ("flows[0].params.beta[0][0]...", *DEPTH)),
    InputCase("nested-1000-in-sweep", SWEEP + f'"flows.0.params.beta" = {_nested(1000)}\n', ("flows.0.params.beta", *DEPTH),
              sweep=True),
    InputCase("nested-200-in-sweep", SWEEP + f'"flows.0.params.beta" = {_nested(200)}\n',
              ("sweep.flows.0.params.beta[0][0][0][0]...", *DEPTH), sweep=True),
    # integers beyond 64 bits
    InputCase("seed-300-digits", "seed = " + "9" * 300 + "\n" + SCENARIO,
              ("seed: 9999999999...9999 (300 digits) is out of range;", SEED)),
    InputCase("seed-5000-digits", "seed = " + "9" * 5000 + "\n" + SCENARIO,
              ("seed: 9999999999...9999 (5000 digits) is out of range;", SEED)),
    InputCase("count-2^64", SCENARIO + "count = 18446744073709551616\n",
              ("flows[0].count: 18446744073709551616 is out of range;", "accepted: an integer in [1, 100000]")),
    InputCase("runs-300-digits", _with(SWEEP, "runs = 1", "runs = " + "9" * 300),
              ("runs: 9999999999...9999 (300 digits) is out of range;", "accepted: an integer in [1, 1000000]"),
              sweep=True),
    # NaN and infinity, in fields that take no number and in fields that do
    InputCase("duration-nan", _with(SCENARIO, 'duration = "3s"', "duration = nan"),
              ("duration: expected a string, got nan;", 'accepted: a time with unit ns, us, ms or s, e.g. "20ms"')),
    InputCase("rate-inf", _with(SCENARIO, 'rate = "10Mbps"', "rate = inf"),
              ("bottleneck.rate: expected a string, got inf;", "accepted: a rate with unit bps")),
    InputCase("loss-minus-inf", SCENARIO.replace("[[flows]]", "loss = -inf\n\n[[flows]]"),
              ("bottleneck.loss: -inf is out of range;", "accepted: a probability in [0, 1]")),
    InputCase("count-nan", SCENARIO + "count = nan\n",
              ("flows[0].count: expected an integer, got nan;", "accepted: an integer in [1, 100000]")),
    InputCase("sweep-value-nan", SWEEP.replace("[0.0, 0.01]", "[0.0, nan]"),
              ("sweep: bottleneck.loss: nan is out of range;", "accepted: a probability in [0, 1]"), sweep=True),
    # reading the file
    InputCase("dev-zero", None, ("larger than 16 MiB", "accepted: a scenario or sweep file of at most 16 MiB"),
              path=lambda tmp_path: "/dev/zero"),
    InputCase("sparse-7gb", None, ("larger than 16 MiB", "at most 16 MiB"), path=_sparse_7gb),
    InputCase("sweep-17mib", SWEEP + "#" * (17 * 1024 * 1024) + "\n", ("larger than 16 MiB", "at most 16 MiB"),
              sweep=True),
    InputCase("latin-1", SCENARIO.replace("[[flows]]", 'name = "d\xe9bit"\n[[flows]]').encode("latin-1"),
              ("not UTF-8 text (byte 0xe9 at offset", "accepted: TOML in UTF-8")),
    InputCase("utf-16", SCENARIO.encode("utf-16"),
              ("UTF-16 text (it starts with a UTF-16 byte-order mark)", "accepted: TOML in UTF-8")),
    # a number the field does not take is out of range, not malformed
    InputCase("duration-1e9s", _with(SCENARIO, '"3s"', '"1e9s"'),
              ('duration: "1e9s" is out of range;', "accepted: a time from 1ms to 1000000s")),
    InputCase("rate-100000Gbps", _with(SCENARIO, '"10Mbps"', '"100000Gbps"'),
              ('bottleneck.rate: "100000Gbps" is out of range;', RATE)),
    InputCase("rate-0Mbps", _with(SCENARIO, '"10Mbps"', '"0Mbps"'), ('bottleneck.rate: "0Mbps" must be positive;', RATE)),
    InputCase("delay-minus-20ms", _with(SCENARIO, '"20ms"', '"-20ms"'),
              ('bottleneck.delay: "-20ms" must not be negative;', "accepted: a time from 0s to 100s")),
    InputCase("buffer-fraction-of-a-packet", _with(SCENARIO, '"50pkt"', '"2.5pkt"'),
              ('bottleneck.buffer: "2.5pkt" is not a whole number of packets;', "accepted: a buffer from 1pkt to")),
    InputCase("size-1e30GB", SCENARIO + 'size = "1e30GB"\n',
              ('flows[0].size: "1e30GB" is out of range;', "accepted: a size from 1B to 1000000GB")),
    InputCase("stop-negative", SCENARIO + 'stop = "-1s"\n',
              ('flows[0].stop: "-1s" must be positive;', "accepted: a time after start")),
    # long input is cut short in the message
    InputCase("sweep-index-5000-digits", SWEEP + f'"flows.{"9" * 5000}.cc" = ["bbr"]\n',
              ("sweep.flows.9999999999999999999999999999999999... (5009 characters): ",
               "index 9999999999999999999999999999999999999999... (5000 characters) is out of range"), sweep=True),
    InputCase("sweep-long-path", SWEEP + f'"flows.0.cc.{"k" * 3000}" = [1]\n',
              ("sweep.flows.0.cc.kkkkkkkkkkkkkkkkkkkkkkkkkkkkk... (3011 characters): cannot set ",
               "inside 'flows.0.cc', which is a string"), sweep=True),
    InputCase("long-algorithm-name", _with(SCENARIO, 'cc = "cubic"', f'cc = "{"x" * 3000}"'),
              ('flows[0].cc: unknown algorithm "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx... (3002 characters);',
               "accepted: newreno, cubic, bbr, ")),
    InputCase("sweep-duration-1e9s", SWEEP.replace('"bottleneck.loss" = [0.0, 0.01]', 'duration = ["3s", "1e9s"]'),
              ('sweep: duration: "1e9s" is out of range;', "accepted: a time from 1ms to 1000000s"), sweep=True),
]


def _input_path(tmp_path, case: InputCase):
    if case.path is not None:
        return case.path(tmp_path)
    path = tmp_path / f"{case.id}.toml"
    data = case.content if isinstance(case.content, bytes) else case.content.encode("utf-8")
    path.write_bytes(data)
    return path


def _api_error(case: InputCase, path, tmp_path) -> str:
    with pytest.raises(ScenarioError) as err:
        if case.sweep:
            ccsim.sweep(path, out=tmp_path / "runs")
        else:
            ccsim.run(path)
    return str(err.value)


@pytest.mark.parametrize("case", INPUT_CASES, ids=lambda c: c.id)
def test_bad_input_is_one_line_with_file_field_value_and_accepted(case, tmp_path, ccsim_cmd):
    path = _input_path(tmp_path, case)
    command = ["sweep", str(path), "--out", str(tmp_path / "runs")] if case.sweep else ["run", str(path)]
    proc = run_cmd(ccsim_cmd, *command)
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    line = lines[0]
    assert line.startswith(f"error: {path}: "), line
    for part in case.expect:
        assert part in line, f"{part!r} not in {line!r}"
    # the value is shortened, never a whole huge input (the list of what is accepted, e.g. every
    # algorithm's name, is not the value: it is left out of the count)
    accepted = line.split("accepted: ", 1)[1] if "accepted: " in line else ""
    assert len(line) - len(accepted) < 400, line
    # the Python API raises ScenarioError with the same text
    assert _api_error(case, path, tmp_path) == line[len("error: "):]
    if not case.sweep:
        with pytest.raises(ScenarioError) as err:
            ccsim.load(path)
        assert str(err.value) == line[len("error: "):]


# The same values given to the Python API as data (no file): the same message without the file.

def _scenario(**top: Any) -> dict[str, Any]:
    d = {"duration": "3s", "bottleneck": {"rate": "10Mbps", "delay": "20ms"}, "flows": [{"cc": "cubic"}]}
    d.update(top)
    return d


def _deep(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


def _cycle() -> dict:
    d: dict[str, Any] = {}
    d["again"] = d
    return d


DATA_CASES = [
    ("nested-1000", lambda: _scenario(x=_deep(1000)), "x[0][0][0][0][0]...: nested more than 32 levels deep; "
     "accepted: at most 32 levels of tables and arrays"),
    ("nested-200", lambda: _scenario(x=_deep(200)), "x[0][0][0][0][0]...: nested more than 32 levels deep; "
     "accepted: at most 32 levels of tables and arrays"),
    ("cycle", lambda: _scenario(x=_cycle()), "x.again.again.again.again.again...: nested more than 32 levels deep; "
     "accepted: at most 32 levels of tables and arrays"),
    ("seed-300-digits", lambda: _scenario(seed=10**300 - 1),
     f"seed: 9999999999...9999 (300 digits) is out of range; {SEED}"),
    ("seed-minus-2^70", lambda: _scenario(seed=-(2**70)),
     f"seed: -1180591620717411303424 is out of range; {SEED}"),
    ("duration-nan", lambda: _scenario(duration=math.nan),
     'duration: expected a string, got nan; accepted: a time with unit ns, us, ms or s, e.g. "20ms"'),
    ("beta-inf", lambda: _scenario(flows=[{"cc": "cubic", "params": {"beta": math.inf}}]),
     'flows[0].params.beta: inf is out of range for "cubic"; accepted: an integer in [1, 1023] (1/1024)'),
    ("stand-ins-inside-a-value", lambda: _scenario(flows=[{"cc": "cubic", "count": {"a": math.nan, "b": [math.inf, 10**40]}}]),
     'flows[0].count: expected an integer, got {"a":nan,"b":[inf,1000000000...0000 (41 digits)]}; '
     "accepted: an integer in [1, 100000]"),
    ("lone-surrogate", lambda: _scenario(name="\ud800"),
     "name: not Unicode text (a lone surrogate at character 0); accepted: a string of Unicode characters"),
]


@pytest.mark.parametrize("build, expected", [c[1:] for c in DATA_CASES], ids=[c[0] for c in DATA_CASES])
def test_bad_values_from_python_name_the_field(build, expected, tmp_path):
    calls = [
        lambda: ccsim.run(build()),
        lambda: ccsim.Scenario.from_dict(build()).validate(),
        lambda: ccsim.Scenario.from_dict(build()).to_json(),
        lambda: ccsim.sweep(build(), {"bottleneck.loss": [0.0]}, out=tmp_path / "runs"),
    ]
    for call in calls:
        with pytest.raises(ScenarioError) as err:
            call()
        assert str(err.value) in (expected, f"sweep: {expected}"), str(err.value)


def test_nesting_up_to_the_limit_reaches_the_core():
    # 32 levels below the top are accepted by the reader; the core then rejects the unknown key
    with pytest.raises(ScenarioError) as err:
        ccsim.Scenario.from_dict(_scenario(x=_deep(32))).validate()
    assert str(err.value).startswith("x: unknown key; accepted keys here: ")
    with pytest.raises(ScenarioError) as err:
        ccsim.Scenario.from_dict(_scenario(x=_deep(33))).validate()
    assert "nested more than 32 levels deep" in str(err.value)


def test_builder_values_are_checked_for_depth_before_copying():
    sc = ccsim.Scenario(duration="3s")
    for call in (lambda: sc.set(name=_deep(5000)), lambda: sc.replace("bottleneck.x", _deep(5000)),
                 lambda: ccsim.Scenario(x=_deep(5000)), lambda: sc.bottleneck(loss=_deep(5000))):
        with pytest.raises(ScenarioError) as err:
            call()
        assert "nested more than 32 levels deep" in str(err.value)


def test_seed_option_out_of_range(scenario_file, ccsim_cmd):
    for seed in ("-1", "9" * 300):
        proc = run_cmd(ccsim_cmd, "run", str(scenario_file), "--seed", seed)
        assert proc.returncode == 2
        [line] = proc.stderr.splitlines()
        assert line.startswith("error: seed: ") and line.endswith(f"is out of range; {SEED}"), line
        assert len(line) < 200


def test_json_text_errors_are_scenario_errors():
    for text, expected in [
        ("{", "scenario JSON: Expecting property name enclosed in double quotes at line 1 column 2; "
              "accepted: a JSON object with the structure of a scenario file"),
        ("[" * 100_000 + "]" * 100_000, "scenario JSON: nested more than 32 levels deep; "
                                        "accepted: at most 32 levels of tables and arrays"),
    ]:
        with pytest.raises(ScenarioError) as err:
            ccsim.Scenario.from_json(text)
        assert str(err.value) == expected


def test_utf8_byte_order_mark_is_accepted(tmp_path, ccsim_cmd):
    plain = tmp_path / "plain.toml"
    plain.write_text(SCENARIO, encoding="utf-8")
    bom = tmp_path / "bom.toml"
    bom.write_bytes(b"\xef\xbb\xbf" + SCENARIO.encode("utf-8"))
    assert ccsim.load(bom).to_dict() == ccsim.load(plain).to_dict()
    a = ccsim.run(bom).to_dict()
    b = ccsim.run(plain).to_dict()
    a.pop("wall_seconds"), b.pop("wall_seconds")
    assert a == b
    proc = run_cmd(ccsim_cmd, "run", str(bom), "--json")
    assert proc.returncode == 0, proc.stderr
    sweep = tmp_path / "bom-sweep.toml"
    sweep.write_bytes(b"\xef\xbb\xbf" + SWEEP.encode("utf-8"))
    assert len(ccsim.sweep(sweep, out=tmp_path / "runs")) == 2


def test_reproduce_bad_input(ccsim_cmd, tmp_path):
    for args, expected in [
        (["--all", "--runs", "1000000000"], "error: --runs: 1000000000 runs per point make "),
        (["x" * 5000], "error: unknown experiment 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx... (5000 characters)'; accepted: e1-fig6, "),
    ]:
        proc = run_cmd(ccsim_cmd, "reproduce", *args, "--out", str(tmp_path / "out"), cwd=tmp_path)
        assert proc.returncode == 2, proc.stderr
        [line] = proc.stderr.splitlines()
        assert line.startswith(expected), line
        assert "; accepted: " in line and len(line) < 400, line
    assert not (tmp_path / "out").exists()
