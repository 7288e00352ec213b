"""`ccsim reproduce`: every catalogue entry runs in --quick mode and produces its Parquet rows,
figure files and report entries; the claim table is printed; a rerun reuses the stored runs."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ccsim import results
from ccsim.experiments import CATALOGUE

IDS = [e.id for e in CATALOGUE]


def _ccsim(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "ccsim", *args], capture_output=True, text=True, cwd=cwd, timeout=600)


@pytest.fixture(scope="module")
def quick_all(tmp_path_factory):
    out = tmp_path_factory.mktemp("reproduce")
    proc = _ccsim("reproduce", "--all", "--quick", "--jobs", "2", "--out", str(out))
    return out, proc


def test_exit_zero_and_claim_table(quick_all):
    out, proc = quick_all
    assert proc.returncode == 0, proc.stderr
    assert "seed claims hold" in proc.stdout and "beyond the seeds" in proc.stdout
    for status in ("PASS", "FAIL"):
        assert status in proc.stdout  # ccsim reports failing claims, it does not hide them
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("exp", CATALOGUE, ids=IDS)
def test_every_entry_has_rows_figures_and_report_entries(quick_all, exp):
    out, _ = quick_all
    rows = results.load(out, exp.data_id)
    assert len(rows) >= len(BY_SPECS[exp.data_id]), exp.id
    assert (rows["throughput_mbps"] >= 0).all()
    if exp.timeseries:
        ts = results.load_timeseries(out, exp.data_id)
        assert len(ts) > 0 and set(ts["key"]) <= set(rows["key"])
    for suffix in (".png", ".svg"):
        f = out / "figures" / f"{exp.id}{suffix}"
        assert f.exists() and f.stat().st_size > 1000, f
    md = (out / "report.md").read_text()
    page = (out / "report.html").read_text()
    assert f"## {exp.id}:" in md and exp.id in page
    for c in exp.claims:
        line = next(l for l in md.splitlines() if l.startswith(f"| {exp.id} | {c.id} |"))
        assert "**PASS**" in line or "**FAIL**" in line, line  # evaluated, not an ERROR


BY_SPECS = {e.id: e.specs(quick=True) for e in CATALOGUE}


def _claim_lines(md: str, exp: str) -> list[str]:
    return [l for l in md.splitlines() if l.startswith(f"| {exp} |")]


def test_rerun_reuses_stored_runs_and_gives_the_same_verdicts(quick_all):
    out, _ = quick_all
    before = _claim_lines((out / "report.md").read_text(), "e2-fig2")
    files = sorted((out / "runs").glob("experiment=e2-fig2/*.parquet"))
    mtimes = [f.stat().st_mtime_ns for f in files]
    again = _ccsim("reproduce", "e2-fig2", "--quick", "--out", str(out))
    assert again.returncode == 0, again.stderr
    assert _claim_lines((out / "report.md").read_text(), "e2-fig2") == before
    # nothing was recomputed: the same files, untouched
    assert sorted((out / "runs").glob("experiment=e2-fig2/*.parquet")) == files
    assert [f.stat().st_mtime_ns for f in files] == mtimes
    assert len(files) == len(BY_SPECS["e2-fig2"])


def test_list_and_bad_ids():
    proc = _ccsim("reproduce", "--list")
    assert proc.returncode == 0
    for i in IDS:
        assert i in proc.stdout
    bad = _ccsim("reproduce", "e9-fig1")
    assert bad.returncode == 2
    assert bad.stderr.strip().startswith("error: unknown experiment 'e9-fig1'; accepted: e1-fig6")
    assert len(bad.stderr.strip().splitlines()) == 1
    none = _ccsim("reproduce")
    assert none.returncode == 2 and "--all" in none.stderr
