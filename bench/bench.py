#!/usr/bin/env python3
"""ccsim vs ns-3 speed benchmark.

Runs every scenario in ``bench/scenarios/`` with ccsim (``ccsim run FILE --json``)
and with the ns-3 reference program (``bench/ns3/build/dumbbell``), each in
its own child process pinned to one core (``taskset -c 0`` when available),
``--repeat`` times, and prints one table row per (scenario, simulator).

    bash bench/ns3/build.sh && python bench/bench.py            # full length, 3 repeats
    python bench/bench.py --quick                               # 10 s simulated, 1 repeat

The ns-3 command line is derived from the same TOML file ccsim reads, so both
simulators always get the same bottleneck, buffer, MSS, flows and duration.
Results go to stdout and to ``bench/results/latest.md`` (+ ``latest.json``).
If the ``ccsim`` command is not installed yet, the ccsim half is reported as
missing and the ns-3 half still runs.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

try:  # Python >= 3.11
    import tomllib as _toml
except ModuleNotFoundError:  # pragma: no cover
    try:
        import tomli as _toml  # type: ignore[no-redef]
    except ModuleNotFoundError:
        _toml = None  # type: ignore[assignment]

BENCH_DIR = Path(__file__).resolve().parent
SCENARIO_DIR = BENCH_DIR / "scenarios"
RESULTS_DIR = BENCH_DIR / "results"
NS3_BIN = BENCH_DIR / "ns3" / "build" / "dumbbell"

# (name, file) in table order
SCENARIOS = [
    ("e1_newreno", "e1_newreno.toml"),
    ("e1_cubic", "e1_cubic.toml"),
    ("bbr_vs_cubic", "bbr_vs_cubic.toml"),
]
QUICK_DURATION_S = 10.0
TARGET_RATIO = 150.0  # issue 12: E1's speed against ns-3 must not fall below 150x
HEADER_BYTES = 52  # IPv4 20 + TCP 20 + timestamp option 12: packet = MSS + 52
CHILD_TIMEOUT_S = 3600


# --------------------------------------------------------------------------- units

_RATE_UNITS = {"bps": 1, "kbps": 1e3, "mbps": 1e6, "gbps": 1e9}
_TIME_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}


def parse_rate(s: str) -> float:
    m = re.fullmatch(r"\s*([0-9.eE+-]+)\s*([A-Za-z]+)\s*", str(s))
    if not m or m.group(2).lower() not in _RATE_UNITS:
        raise ValueError(f"cannot parse rate {s!r} (want e.g. '10Mbps')")
    return float(m.group(1)) * _RATE_UNITS[m.group(2).lower()]


def parse_time(s: str | int | float) -> float:
    if isinstance(s, (int, float)):
        return float(s)
    m = re.fullmatch(r"\s*([0-9.eE+-]+)\s*([a-z]*)\s*", s)
    if not m or m.group(2) not in _TIME_UNITS:
        raise ValueError(f"cannot parse time {s!r} (want e.g. '20ms')")
    return float(m.group(1)) * _TIME_UNITS[m.group(2) or "s"]


# --------------------------------------------------------------------------- scenario


@dataclass
class Scenario:
    name: str
    path: Path
    conf: dict[str, Any]
    duration_s: float
    ccs: list[str]
    ns3_args: list[str]
    buffer_pkts: int
    mss: int

    def describe(self) -> str:
        b = self.conf["bottleneck"]
        return (
            f"{'+'.join(self.ccs)}, {b['rate']}, {b['delay']} one-way, "
            f"{b['buffer']} (= {self.buffer_pkts} pkt), MSS {self.mss}, {self.duration_s:g} s"
        )


def load_scenario(name: str, path: Path, duration_override: float | None) -> Scenario:
    if _toml is None:
        raise SystemExit("bench.py needs Python >= 3.11 (tomllib) or `pip install tomli`")
    with open(path, "rb") as f:
        conf = _toml.load(f)
    bott = conf["bottleneck"]
    tcp = conf.get("tcp", {})
    mss = int(tcp.get("mss", 1448))
    rate = parse_rate(bott["rate"])
    delay = parse_time(bott["delay"])
    duration = duration_override if duration_override else parse_time(conf["duration"])

    ccs: list[str] = []
    access = set()
    for grp in conf["flows"]:
        ccs += [grp["cc"]] * int(grp.get("count", 1))
        access.add((grp.get("access_rate", "1Gbps"), grp.get("access_delay", "0ms")))
        if parse_time(grp.get("start", "0s")) != 0.0:
            raise ValueError(f"{path}: ns-3 reference only supports start = '0s'")
    if len(access) != 1:
        raise ValueError(f"{path}: ns-3 reference needs the same access link for all flows")
    access_rate, access_delay = access.pop()

    buf = str(bott["buffer"]).strip()
    m = re.fullmatch(r"([0-9.]+)\s*(pkt|pkts|p|bdp)", buf)
    if not m:
        raise ValueError(f"{path}: cannot parse buffer {buf!r} (want 'Npkt' or 'Xbdp')")
    if m.group(2) == "bdp":
        rtt = 2 * (delay + parse_time(access_delay))
        buffer_pkts = round(float(m.group(1)) * rate * rtt / 8 / (mss + HEADER_BYTES))
    else:
        buffer_pkts = int(float(m.group(1)))

    tcp_delack = tcp.get("delayed_ack", True)
    ns3_args = [
        f"--cc={','.join(ccs)}",
        f"--rate={rate:.0f}bps",
        f"--delay={delay * 1e9:.0f}ns",
        f"--buffer={buffer_pkts}",
        f"--mss={mss}",
        f"--duration={duration:g}",
        f"--seed={int(conf.get('seed', 1))}",
        f"--accessRate={parse_rate(access_rate):.0f}bps",
        f"--accessDelay={parse_time(access_delay) * 1e9:.0f}ns",
        f"--loss={float(bott.get('loss', 0.0))}",
        f"--delAckCount={2 if tcp_delack else 1}",
        f"--minRto={parse_time(tcp.get('min_rto', '200ms')) * 1e9:.0f}ns",
    ]
    return Scenario(name, path, conf, duration, ccs, ns3_args, buffer_pkts, mss)


def scenario_file_for_ccsim(sc: Scenario, tmpdir: Path, duration_override: float | None) -> Path:
    """The scenario file itself, or (--quick) a copy with a shorter duration."""
    if not duration_override:
        return sc.path
    text = sc.path.read_text()
    new, n = re.subn(
        r'(?m)^duration\s*=\s*"[^"]*"', f'duration = "{duration_override:g}s"', text, count=1
    )
    if n != 1:
        raise ValueError(f"{sc.path}: no top-level duration line to override")
    out = tmpdir / sc.path.name
    out.write_text(new)
    return out


# --------------------------------------------------------------------------- running


@dataclass
class Run:
    ok: bool
    error: str = ""
    wall_s: float | None = None  # simulator-reported, simulation only
    proc_wall_s: float | None = None  # whole child process, incl. start-up
    peak_rss_mb: float | None = None
    events: int | None = None
    segments: int | None = None
    total_mbps: float | None = None
    drops: int | None = None
    flows_mbps: list[float] = field(default_factory=list)
    raw: dict[str, Any] | None = None


def run_child(cmd: list[str], pin: bool) -> tuple[int, str, str, float, float]:
    """Run cmd; return (rc, stdout, stderr, wall seconds, peak RSS MB of this child).

    Peak RSS is ru_maxrss from os.wait4() on this very child (what
    `/usr/bin/time -v` reports as "Maximum resident set size").
    """
    if pin and shutil.which("taskset"):
        cmd = ["taskset", "-c", "0", *cmd]  # taskset execs cmd: same pid
    env = dict(os.environ)
    for var in ("RAYON_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        env[var] = "1"
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=out, stderr=err, env=env)
        deadline = t0 + CHILD_TIMEOUT_S
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid == p.pid:
                break
            if time.perf_counter() > deadline:
                p.kill()
                pid, status, ru = os.wait4(p.pid, 0)
                break
            time.sleep(0.005)
        wall = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return (
            p.returncode,
            out.read().decode(errors="replace"),
            err.read().decode(errors="replace"),
            wall,
            ru.ru_maxrss / 1024.0,  # Linux: KiB
        )


def _last_json_line(stdout: str) -> dict[str, Any]:
    text = stdout.strip()
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    for line in reversed(text.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            return json.loads(line)
    raise ValueError("no JSON object on stdout")


def _parse(res: tuple[int, str, str, float, float], mss: int) -> Run:
    rc, out, err, wall, rss = res
    if rc != 0:
        tail = (err.strip() or out.strip()).splitlines()[-3:]
        return Run(False, f"exit {rc}: " + " | ".join(tail), proc_wall_s=wall, peak_rss_mb=rss)
    try:
        d = _last_json_line(out)
    except (ValueError, json.JSONDecodeError) as e:
        return Run(False, f"bad output ({e}): {out[:200]!r}", proc_wall_s=wall, peak_rss_mb=rss)
    flows = d.get("flows") or []
    segs = d.get("segments_delivered")
    if segs is None and flows:
        per = []
        for f in flows:
            s = f.get("segments_delivered")
            if s is None:
                b = f.get("bytes_acked", f.get("bytes_received"))
                s = None if b is None else -(-int(b) // mss)
            per.append(s)
        segs = None if any(s is None for s in per) else sum(per)
    total = d.get("total_throughput_mbps")
    if total is None and flows:
        total = sum(float(f.get("throughput_mbps", 0.0)) for f in flows)
    return Run(
        True,
        wall_s=float(d["wall_seconds"]) if d.get("wall_seconds") is not None else None,
        proc_wall_s=wall,
        peak_rss_mb=rss,
        events=int(d["events"]) if d.get("events") is not None else None,
        segments=int(segs) if segs is not None else None,
        total_mbps=float(total) if total is not None else None,
        drops=(d.get("bottleneck") or {}).get("drops"),
        flows_mbps=[float(f.get("throughput_mbps", float("nan"))) for f in flows],
        raw=d,
    )


def run_ccsim(ccsim_cmd: list[str], toml_path: Path, sc: Scenario, pin: bool) -> Run:
    try:
        res = run_child([*ccsim_cmd, "run", str(toml_path), "--json"], pin)
    except OSError as e:
        return Run(False, f"cannot start {ccsim_cmd[0]}: {e}")
    return _parse(res, sc.mss)


def run_ns3(ns3_bin: Path, sc: Scenario, pin: bool) -> Run:
    try:
        res = run_child([str(ns3_bin), *sc.ns3_args], pin)
    except OSError as e:
        return Run(False, f"cannot start {ns3_bin}: {e}")
    return _parse(res, sc.mss)


# --------------------------------------------------------------------------- summary


@dataclass
class Row:
    scenario: str
    simulator: str
    runs: list[Run]
    error: str = ""

    @property
    def good(self) -> list[Run]:
        return [r for r in self.runs if r.ok and r.wall_s is not None]

    def median_run(self) -> Run | None:
        g = sorted(self.good, key=lambda r: r.wall_s)  # type: ignore[arg-type,return-value]
        return g[(len(g) - 1) // 2] if g else None

    def summary(self) -> dict[str, Any]:
        g = self.good
        if not g:
            errs = self.error or next((r.error for r in self.runs if r.error), "no run")
            return {
                "scenario": self.scenario,
                "simulator": self.simulator,
                "error": errs,
                "skipped": bool(self.error),
            }
        wall = statistics.median(r.wall_s for r in g)  # type: ignore[misc]
        m = self.median_run()
        assert m is not None
        ev = m.events
        seg = m.segments
        return {
            "scenario": self.scenario,
            "simulator": self.simulator,
            "repeats": len(g),
            "wall_s_median": wall,
            "wall_s_min": min(r.wall_s for r in g),  # type: ignore[type-var]
            "wall_s_max": max(r.wall_s for r in g),  # type: ignore[type-var]
            "proc_wall_s_median": statistics.median(r.proc_wall_s for r in g),  # type: ignore[misc]
            "events": ev,
            "events_per_s": (ev / wall) if ev and wall > 0 else None,
            "segments_delivered": seg,
            "ns_per_segment": (wall * 1e9 / seg) if seg else None,
            "peak_rss_mb": max(r.peak_rss_mb for r in g if r.peak_rss_mb is not None),
            "total_mbps": m.total_mbps,
            "flows_mbps": m.flows_mbps,
            "drops": m.drops,
        }


def _fmt(v: Any, spec: str) -> str:
    if v is None:
        return "—"
    if isinstance(v, float) and v != v:
        return "—"
    return format(v, spec)


def _fmt_rate(v: float | None) -> str:
    if v is None:
        return "—"
    if v >= 1e6:
        return f"{v / 1e6:.2f} M"
    if v >= 1e3:
        return f"{v / 1e3:.1f} k"
    return f"{v:.0f}"


COLUMNS = [
    "scenario",
    "simulator",
    "sim wall s (median)",
    "ns-3/ccsim",
    "events",
    "events/s",
    "ns/segment",
    "peak RSS MB",
    "total Mbps",
    "per-flow Mbps",
    "drops",
]


def table_rows(summaries: list[dict[str, Any]]) -> list[list[str]]:
    by = {(s["scenario"], s["simulator"]): s for s in summaries}
    rows = []
    for s in summaries:
        if "error" in s:
            why = "not run" if s.get("skipped") else "FAILED"
            rows.append([s["scenario"], s["simulator"], why] + [""] * (len(COLUMNS) - 3))
            continue
        ratio = ""
        if s["simulator"] == "ns-3":
            c = by.get((s["scenario"], "ccsim"))
            if c and "error" not in c and c["wall_s_median"] > 0:
                r = s["wall_s_median"] / c["wall_s_median"]
                ok = "ok" if r >= TARGET_RATIO else f"below {TARGET_RATIO:g}x"
                ratio = f"{r:.1f}x ({ok})"
        rows.append(
            [
                s["scenario"],
                s["simulator"],
                _fmt(s["wall_s_median"], ".3f"),
                ratio,
                _fmt(s["events"], ",d") if s["events"] is not None else "null",
                _fmt_rate(s["events_per_s"]),
                _fmt(s["ns_per_segment"], ",.0f"),
                _fmt(s["peak_rss_mb"], ".1f"),
                _fmt(s["total_mbps"], ".3f"),
                " / ".join(f"{x:.2f}" for x in s["flows_mbps"]),
                _fmt(s["drops"], "d") if s["drops"] is not None else "—",
            ]
        )
    return rows


def print_table(rows: list[list[str]], title: str) -> None:
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:
        widths = [max(len(c), *(len(r[i]) for r in rows)) for i, c in enumerate(COLUMNS)]
        print(title)
        print("  ".join(c.ljust(w) for c, w in zip(COLUMNS, widths)))
        print("  ".join("-" * w for w in widths))
        for r in rows:
            print("  ".join(x.ljust(w) for x, w in zip(r, widths)))
        return
    t = Table(title=title)
    for i, c in enumerate(COLUMNS):
        t.add_column(c, justify="left" if i < 2 else "right")
    for r in rows:
        t.add_row(*r)
    console = Console()
    if not console.is_terminal:  # piped / redirected: do not squeeze to 80 columns
        console = Console(width=200)
    console.print(t)


def machine_info() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} logical CPUs, {platform.system()} {platform.release()}"


def tool_version(cmd: list[str]) -> str:
    try:
        p = subprocess.run([*cmd, "--version"], capture_output=True, text=True, timeout=60)
        return (p.stdout or p.stderr).strip().splitlines()[0] if p.returncode == 0 else "?"
    except (OSError, subprocess.SubprocessError, IndexError):
        return "?"


def write_results(
    rows: list[list[str]],
    summaries: list[dict[str, Any]],
    scenarios: list[Scenario],
    meta: dict[str, Any],
    notes: list[str],
    md_path: Path,
) -> None:
    md_path.parent.mkdir(parents=True, exist_ok=True)
    lines = [
        "# ccsim vs ns-3 speed benchmark",
        "",
        f"- date: {meta['date']}",
        f"- machine: {meta['machine']}",
        f"- pinned to one core: {meta['pinning']}",
        f"- repeats: {meta['repeat']} (sim wall time = median; other columns from the median run;"
        " peak RSS = max over repeats)",
        f"- mode: {'QUICK (shortened durations, smoke check only)' if meta['quick'] else 'full length'}",
        f"- ccsim: `{meta['ccsim_cmd']}` ({meta['ccsim_version']}); ns-3: 3.44 (PyPI wheel"
        f" `{meta['ns3_wheel']}`), `{meta['ns3_bin']}`",
        "- sim wall = each simulator's own timing of the simulation loop (ccsim `wall_seconds`;"
        " ns-3 std::chrono around `Simulator::Run()`), excluding process start-up and set-up",
        "- peak RSS = `ru_maxrss` of the child process from `os.wait4()`"
        " (same as `/usr/bin/time -v` Maximum resident set size), whole process incl. interpreter"
        " and shared libraries",
        f"- target: ns-3/ccsim >= {TARGET_RATIO:g}x on every scenario",
        "",
        "| " + " | ".join(COLUMNS) + " |",
        "|" + "|".join("---" if i < 2 else "---:" for i in range(len(COLUMNS))) + "|",
    ]
    for r in rows:
        lines.append("| " + " | ".join(x.replace("|", "\\|") for x in r) + " |")
    lines += ["", "Scenarios:", ""]
    for sc in scenarios:
        lines.append(
            f"- `{sc.name}` (`bench/scenarios/{sc.path.name}`): {sc.describe()};"
            f" ns-3: `dumbbell {' '.join(sc.ns3_args)}`"
        )
    if notes:
        lines += ["", "Notes:", ""] + [f"- {n}" for n in notes]
    md_path.write_text("\n".join(lines) + "\n")
    md_path.with_suffix(".json").write_text(
        json.dumps({"meta": meta, "summaries": summaries, "notes": notes}, indent=2) + "\n"
    )


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=None, help="runs per simulator and scenario (default 3, --quick: 1)")
    ap.add_argument("--quick", action="store_true", help=f"simulate {QUICK_DURATION_S:g} s per scenario (smoke check)")
    ap.add_argument("--scenario", action="append", choices=[n for n, _ in SCENARIOS], help="run only this scenario (repeatable)")
    ap.add_argument("--only", choices=["ccsim", "ns3"], help="run only one simulator")
    ap.add_argument("--ccsim", default="ccsim", help="ccsim command (default: 'ccsim'; e.g. 'python -m ccsim')")
    ap.add_argument("--ns3-bin", type=Path, default=NS3_BIN, help="ns-3 dumbbell binary")
    ap.add_argument("--no-pin", action="store_true", help="do not pin children to CPU 0 with taskset")
    ap.add_argument("--out", type=Path, default=RESULTS_DIR / "latest.md", help="Markdown output (JSON next to it)")
    args = ap.parse_args(argv)

    repeat = args.repeat if args.repeat is not None else (1 if args.quick else 3)
    if repeat < 1:
        ap.error("--repeat must be >= 1")
    dur_override = QUICK_DURATION_S if args.quick else None
    pin = not args.no_pin and shutil.which("taskset") is not None
    notes: list[str] = []
    if not args.no_pin and not pin:
        notes.append("taskset not found: children were NOT pinned to one core")

    names = args.scenario or [n for n, _ in SCENARIOS]
    scenarios = [load_scenario(n, SCENARIO_DIR / f, dur_override) for n, f in SCENARIOS if n in names]

    ccsim_cmd = shlex.split(args.ccsim)
    do_ccsim = args.only != "ns3"
    do_ns3 = args.only != "ccsim"
    ccsim_missing = ""
    if do_ccsim and shutil.which(ccsim_cmd[0]) is None:
        ccsim_missing = (
            f"`{ccsim_cmd[0]}` command not found - install ccsim first (`pip install .` at the repo root);"
            " ccsim half skipped"
        )
        print(f"bench.py: {ccsim_missing}", file=sys.stderr)
        notes.append(ccsim_missing)
    ns3_missing = ""
    if do_ns3 and not (args.ns3_bin.is_file() and os.access(args.ns3_bin, os.X_OK)):
        ns3_missing = f"{args.ns3_bin} not found - build it with `bash bench/ns3/build.sh`; ns-3 half skipped"
        print(f"bench.py: {ns3_missing}", file=sys.stderr)
        notes.append(ns3_missing)

    summaries: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="ccsim-bench-") as td:
        for sc in scenarios:
            print(f"== {sc.name}: {sc.describe()}", file=sys.stderr)
            rows: dict[str, Row] = {}
            if do_ccsim:
                rows["ccsim"] = Row(sc.name, "ccsim", [], ccsim_missing)
            if do_ns3:
                rows["ns-3"] = Row(sc.name, "ns-3", [], ns3_missing)
            toml_for_ccsim = scenario_file_for_ccsim(sc, Path(td), dur_override)
            for i in range(repeat):
                # interleave the two simulators so slow drift affects both alike
                if do_ccsim and not ccsim_missing:
                    r = run_ccsim(ccsim_cmd, toml_for_ccsim, sc, pin)
                    rows["ccsim"].runs.append(r)
                    _progress(sc.name, "ccsim", i, repeat, r)
                if do_ns3 and not ns3_missing:
                    r = run_ns3(args.ns3_bin, sc, pin)
                    rows["ns-3"].runs.append(r)
                    _progress(sc.name, "ns-3", i, repeat, r)
            for row in rows.values():
                s = row.summary()
                if "error" in s and not row.error:
                    notes.append(f"{sc.name}/{row.simulator} failed: {s['error']}")
                summaries.append(s)

    title = (
        f"ccsim vs ns-3 ({'QUICK, ' if dur_override else ''}median of {repeat}, "
        f"{'pinned to CPU 0' if pin else 'not pinned'})"
    )
    rows_txt = table_rows(summaries)
    print_table(rows_txt, title)
    for n in notes:
        print(f"note: {n}")

    ns3_wheel = "?"
    prefix_file = args.ns3_bin.parent / ".prefix"
    if prefix_file.is_file():
        ns3_wheel = prefix_file.read_text().strip()
    meta = {
        "date": _dt.datetime.now().astimezone().isoformat(timespec="seconds"),
        "machine": machine_info(),
        "pinning": "taskset -c 0" if pin else "none",
        "repeat": repeat,
        "quick": bool(dur_override),
        "ccsim_cmd": " ".join(ccsim_cmd),
        "ccsim_version": tool_version(ccsim_cmd) if do_ccsim and not ccsim_missing else "not run",
        "ns3_bin": str(args.ns3_bin.relative_to(BENCH_DIR.parent)) if args.ns3_bin.is_relative_to(BENCH_DIR.parent) else str(args.ns3_bin),
        "ns3_wheel": "ns3==3.44.post0",
        "ns3_prefix": ns3_wheel,
        "scenarios": {sc.name: {"file": str(sc.path.relative_to(BENCH_DIR.parent)), "ns3_args": sc.ns3_args} for sc in scenarios},
    }
    write_results(rows_txt, summaries, scenarios, meta, notes, args.out)
    print(f"wrote {args.out} and {args.out.with_suffix('.json')}", file=sys.stderr)

    # exit status: 1 if a run failed; a half skipped because its tool is not
    # installed/built is reported above but does not fail the invocation
    failed = any("error" in s and not s.get("skipped") for s in summaries)
    return 1 if failed else 0


def _progress(scn: str, sim: str, i: int, n: int, r: Run) -> None:
    if r.ok:
        msg = f"sim wall {r.wall_s:.3f} s, process {r.proc_wall_s:.2f} s, RSS {r.peak_rss_mb:.0f} MB, {r.total_mbps:.3f} Mbps"
    else:
        msg = f"FAILED: {r.error}"
    print(f"   {sim:5s} run {i + 1}/{n}: {msg}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
