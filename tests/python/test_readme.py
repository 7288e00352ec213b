"""The README's sweep and query commands, and `ccsim query --help`'s example, work as printed."""

from __future__ import annotations

import re
import shlex
import shutil
import tomllib

from _support import REPO, run_cmd


def _readme_command(prefix: str) -> list[str]:
    """The README's command line that starts with ``prefix`` (its trailing comment removed)."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    lines = [ln for ln in text.splitlines() if ln.startswith(prefix)]
    assert len(lines) == 1, lines
    return shlex.split(lines[0], comments=True)


def test_readme_sweep_then_query(tmp_path, ccsim_cmd):
    sweep = _readme_command("ccsim sweep ")
    query = _readme_command("ccsim query ")
    shutil.copytree(REPO / "examples", tmp_path / "examples")
    proc = run_cmd(ccsim_cmd, *sweep[1:], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    # The query reads the sweep's default store.
    assert query[2] == "ccsim-runs/sweep_loss" and (tmp_path / query[2] / "runs").is_dir()
    proc = run_cmd(ccsim_cmd, *query[1:], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split() == ["cc", "loss", "avg(throughput_mbps)"] and lines[-1] == "9 rows"
    rows = [ln.split() for ln in lines[2:-1]]
    assert [(r[0], r[1]) for r in rows] == [(cc, loss) for cc in ("chd", "newreno", "ucc")
                                            for loss in ("0", "0.01", "0.02")]

    # `ccsim query --help` shows an example that works on the same store.
    proc = run_cmd(ccsim_cmd, "query", "--help")
    assert proc.returncode == 0
    examples = [ln.strip() for ln in proc.stdout.splitlines() if ln.strip().startswith("ccsim query ")]
    assert len(examples) == 1, proc.stdout
    example = shlex.split(examples[0])
    assert example == query
    proc = run_cmd(ccsim_cmd, *example[1:], cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout.splitlines()[-1] == "9 rows", proc.stderr


def test_duckdb_is_a_runtime_dependency():
    """`ccsim query` is a documented command: DuckDB comes with a plain `pip install .`."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    names = [re.split(r"[<>=!~\[ ;]", d, maxsplit=1)[0].lower() for d in project["dependencies"]]
    assert "duckdb" in names


def test_readme_python_example_runs(tmp_path, monkeypatch):
    """The README's "From Python" block runs as printed (from the repository root, where its
    paths point), and its mixed network gives a flow over the Wi-Fi hops."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    block = text.split("From Python:\n\n```python\n", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(REPO)
    block = block.replace('res.to_parquet("out/")', f'res.to_parquet({str(tmp_path / "out")!r})')
    scope: dict = {}
    exec(compile(block, "README.md", "exec"), scope)
    flow = scope["ccsim"].run(scope["net"]).flows[0]
    assert flow["path"] == ["server", "router", "ap", "relay", "phone"] and flow["bytes_acked"] > 0
    assert (tmp_path / "out").is_dir()
