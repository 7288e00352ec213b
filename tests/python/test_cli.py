"""The `ccsim` command, through click's CliRunner and as the installed executable."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys

import pandas as pd
import pytest

import ccsim
from ccsim.build import build_kind
from ccsim.cli import cli

from _support import EXAMPLES, run_cmd


def _without_wall(d: dict) -> dict:
    d = dict(d)
    d.pop("wall_seconds", None)
    return d


def _assert_one_error_line(stderr: str) -> str:
    lines = stderr.splitlines()
    assert len(lines) == 1, f"expected one line on stderr, got {stderr!r}"
    assert lines[0].startswith("error: ")
    assert "Traceback" not in stderr
    assert "panicked" not in stderr
    return lines[0]


def test_the_cli_starts_without_pandas_or_matplotlib():
    # `ccsim run` must not pay for the figure and DataFrame stack (about 1 s and 120 MB).
    code = "import sys, ccsim.cli; print(sorted(m for m in ('pandas', 'matplotlib', 'pyarrow') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# -- CliRunner ---------------------------------------------------------------------------


def test_version(runner):
    res = runner.invoke(cli, ["--version"])
    assert res.exit_code == 0
    assert ccsim.__version__ in res.output
    assert f"(simulation model version {ccsim._core.MODEL_VERSION}; " in res.output
    assert res.output.rstrip().endswith(f"; {build_kind()})")


def test_help(runner):
    res = runner.invoke(cli, ["--help"])
    assert res.exit_code == 0
    assert "run" in res.output and "algorithms" in res.output
    res = runner.invoke(cli, ["run", "--help"])
    assert res.exit_code == 0
    for opt in ("--seed", "--out", "--json"):
        assert opt in res.output


def test_run_prints_table_and_totals(runner, scenario_file):
    res = runner.invoke(cli, ["run", str(scenario_file)])
    assert res.exit_code == 0, res.output
    out = res.stdout
    assert "cubic" in out
    for word in ("throughput", "retransmits", "RTT mean", "RTT p95", "cwnd",
                 "Jain", "utilization", "drops", "events", "wall"):
        assert word in out, word
    assert res.stderr == ""


def test_run_json_prints_exactly_to_dict(runner, scenario_file):
    res = runner.invoke(cli, ["run", str(scenario_file), "--json", "--seed", "3"])
    assert res.exit_code == 0, res.stderr
    printed = json.loads(res.stdout)  # the whole of stdout is one JSON object
    assert isinstance(printed, dict)
    expected = ccsim.run(scenario_file, seed=3).to_dict()
    assert _without_wall(printed) == _without_wall(expected)
    assert printed["seed"] == 3


def test_run_table_lists_the_first_flows_and_spreads_the_rest(runner, write_scenario):
    # 60 flows: the text summary has a row for each of the first MAX_FLOW_ROWS (50) and one
    # line for all of them, whose numbers are those of --json for the same run.
    from ccsim.cli import MAX_FLOW_ROWS

    path = write_scenario(
        'duration = "1s"\nseed = 2\n[bottleneck]\nrate = "20Mbps"\ndelay = "5ms"\nbuffer = "1bdp"\n'
        '[[flows]]\ncc = "cubic"\ncount = 60\n'
    )
    res = runner.invoke(cli, ["run", str(path)])
    assert res.exit_code == 0, res.stderr
    rows = [ln.split() for ln in res.stdout.splitlines() if ln.split()[:2][1:] == ["cubic"]]
    assert [int(r[0]) for r in rows] == list(range(MAX_FLOW_ROWS))
    flows = json.loads(runner.invoke(cli, ["run", str(path), "--json"]).stdout)["flows"]
    assert len(flows) == 60
    # Flows with no RTT sample (None) are left out of the RTT spread.
    tput = sorted(f["throughput_mbps"] for f in flows)
    rtt = sorted(f["rtt_mean_ms"] for f in flows if f["rtt_mean_ms"] is not None)
    median = statistics.median
    more = [ln for ln in res.stdout.splitlines() if ln.startswith("... ")]
    assert more == [
        f"... 10 more flows (--json or --out DIR has every one); over all 60: throughput min / median / max "
        f"{tput[0]:.3f} / {median(tput):.3f} / {tput[-1]:.3f} Mbps, RTT mean {rtt[0]:.1f} / {median(rtt):.1f} / "
        f"{rtt[-1]:.1f} ms"
    ]
    # Up to the limit every flow has its row and there is no such line.
    few = write_scenario(
        'duration = "1s"\n[bottleneck]\nrate = "20Mbps"\ndelay = "5ms"\nbuffer = "1bdp"\n'
        f'[[flows]]\ncc = "cubic"\ncount = {MAX_FLOW_ROWS}\n',
        name="few.toml",
    )
    out = runner.invoke(cli, ["run", str(few)]).stdout
    assert sum(1 for ln in out.splitlines() if ln.split()[:2][1:] == ["cubic"]) == MAX_FLOW_ROWS
    assert "more flows" not in out


def test_run_out_writes_results(runner, scenario_file, tmp_path):
    out = tmp_path / "results" / "run1"
    res = runner.invoke(cli, ["run", str(scenario_file), "--out", str(out)])
    assert res.exit_code == 0, res.stderr
    for name in ("summary.json", "flows.parquet", "timeseries.parquet", "throughput_cwnd.png"):
        assert (out / name).is_file(), name
    assert str(out) in res.stdout
    summary = json.loads((out / "summary.json").read_text())
    assert len(summary["flows"]) == len(pd.read_parquet(out / "flows.parquet")) == 2
    assert (out / "throughput_cwnd.png").read_bytes()[:4] == b"\x89PNG"


def test_run_json_with_out_keeps_stdout_pure_json(runner, scenario_file, tmp_path):
    res = runner.invoke(cli, ["run", str(scenario_file), "--json", "--out", str(tmp_path / "o")])
    assert res.exit_code == 0, res.stderr
    json.loads(res.stdout)
    assert (tmp_path / "o" / "summary.json").is_file()


def test_out_that_is_a_file_is_an_error(runner, scenario_file, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    res = runner.invoke(cli, ["run", str(scenario_file), "--out", str(blocker)])
    assert res.exit_code == 2
    line = _assert_one_error_line(res.stderr)
    assert str(blocker) in line


def test_algorithms_command(runner):
    res = runner.invoke(cli, ["algorithms"])
    assert res.exit_code == 0, res.stderr
    for name in ("newreno", "cubic", "bbr"):
        assert name in res.stdout
    res = runner.invoke(cli, ["algorithms", "--json"])
    assert res.exit_code == 0
    assert json.loads(res.stdout) == ccsim.algorithms()


@pytest.mark.parametrize("seed", ["abc", "1.5", str(2**64)])
def test_bad_seed_runner(runner, scenario_file, seed):
    res = runner.invoke(cli, ["run", str(scenario_file), "--seed", seed])
    assert res.exit_code == 2
    line = _assert_one_error_line(res.stderr)
    assert "seed" in line
    assert seed in line


def test_missing_file_runner(runner, tmp_path):
    missing = tmp_path / "nope.toml"
    res = runner.invoke(cli, ["run", str(missing)])
    assert res.exit_code == 2
    line = _assert_one_error_line(res.stderr)
    assert str(missing) in line


def test_unknown_command_and_missing_argument(runner):
    res = runner.invoke(cli, ["frobnicate"])
    assert res.exit_code == 2
    assert "frobnicate" in _assert_one_error_line(res.stderr)
    res = runner.invoke(cli, ["run"])
    assert res.exit_code == 2
    assert "FILE.toml" in _assert_one_error_line(res.stderr)


# -- installed executable --------------------------------------------------------------


def test_installed_command_version(ccsim_cmd):
    proc = run_cmd(ccsim_cmd, "--version")
    assert proc.returncode == 0, proc.stderr
    assert ccsim.__version__ in proc.stdout


def test_installed_command_runs_example(ccsim_cmd, tmp_path):
    out = tmp_path / "out"
    proc = run_cmd(ccsim_cmd, "run", str(EXAMPLES / "cubic_pair.toml"), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "cubic" in proc.stdout
    assert (out / "throughput_cwnd.png").is_file()


def test_installed_command_json_matches_api(ccsim_cmd, scenario_file):
    proc = run_cmd(ccsim_cmd, "run", str(scenario_file), "--json", "--seed", "11")
    assert proc.returncode == 0, proc.stderr
    printed = json.loads(proc.stdout)
    expected = ccsim.run(scenario_file, seed=11).to_dict()
    assert _without_wall(printed) == _without_wall(expected)


@pytest.mark.parametrize("seed", ["abc", str(2**64)])
def test_installed_command_bad_seed(ccsim_cmd, scenario_file, seed):
    proc = run_cmd(ccsim_cmd, "run", str(scenario_file), "--seed", seed)
    assert proc.returncode == 2
    line = _assert_one_error_line(proc.stderr)
    assert "seed" in line and seed in line
    assert proc.stdout == ""


def test_installed_command_missing_file(ccsim_cmd, tmp_path):
    missing = tmp_path / "missing.toml"
    proc = run_cmd(ccsim_cmd, "run", str(missing))
    assert proc.returncode == 2
    line = _assert_one_error_line(proc.stderr)
    assert str(missing) in line
    assert proc.stdout == ""
