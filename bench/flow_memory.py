#!/usr/bin/env python3
"""Peak memory per TCP flow, the way users run a scenario: the numbers behind the per-flow
constant of the memory estimate (``TCP_FLOW_BYTES`` in ``crates/ccsim-core/src/limits.rs``).

Every run is N CUBIC flows (``--cc``) on one dumbbell bottleneck: 1 Gbps, 10 ms one way (20 ms
base RTT), a 1 BDP drop-tail buffer (``--buffer``), the default access links, 1 s simulated
(``--duration``), the default 100 ms ``sample_interval`` (10 time-series rows per flow in 1 s).
Each run is one child process started by ``/usr/bin/time -f %M`` (its "Maximum resident set
size"), so its peak RSS is its own; the runs are sequential, one at a time.

    python3 bench/flow_memory.py                           # N = 1,000 ... 20,000, twice each
    python3 bench/flow_memory.py --flows 1000,5000 --repeat 1 --modes engine,cli-out
    python3 bench/flow_memory.py --flows 1,10000 --repeat 1 --cc bbr --modes engine-1row
    python3 bench/flow_memory.py --stages 5000             # where the CLI's memory goes

Modes (``--modes``, default all):

- ``engine``: the engine alone, ``run_json FILE.json`` (``crates/ccsim-core/examples``; built
  here with ``cargo build --release``), which records the time series;
- ``engine-1row``: the same with ``sample_interval`` = the duration (one row per flow: the
  example has no switch to record none);
- ``api``: ``python -c "import ccsim; ccsim.run(FILE)"``;
- ``api-df``: ``ccsim.run(FILE)`` and every DataFrame of the result (summary, timeseries,
  cc_events, links, link_queues), as a notebook would;
- ``api-df-nots``: the same with ``timeseries=False``;
- ``cli``: ``ccsim run FILE`` (prints a table with a row per flow);
- ``cli-out``: ``ccsim run FILE --out DIR`` (Parquet files, the plot, and the table);
- ``cli-out-nots``: ``ccsim run FILE --out DIR --no-timeseries`` (no plot).

For each mode: the least-squares line of peak RSS over N (both repeats), its slope in bytes
per flow and its intercept; and for each N the estimate (``ccsim.limits.estimate``) against
the growth it has to bound, peak RSS minus the 1-flow run's of the same mode. The tables go
to stdout and to ``bench/results/flow_memory.md`` (``--out``), keeping the notes at its end
(from the line ``KEEP``).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
RESULTS = BENCH_DIR / "results" / "flow_memory.md"
CHILD_TIMEOUT_S = 3600

MODES = {
    "engine": "the engine alone: `run_json FILE.json` (time series every 100 ms)",
    "engine-1row": "the engine alone, `sample_interval` = the duration (1 time-series row per flow)",
    "api": "`ccsim.run(FILE)`",
    "api-df": "`ccsim.run(FILE)` and all its DataFrames",
    "api-df-nots": "`ccsim.run(FILE, timeseries=False)` and all its DataFrames",
    "cli": "`ccsim run FILE` (the table)",
    "cli-out": "`ccsim run FILE --out DIR`",
    "cli-out-nots": "`ccsim run FILE --out DIR --no-timeseries`",
}
# Whether the mode records the time series (for the estimate it is compared with).
TIMESERIES = {m: not m.endswith("-nots") for m in MODES}

DATAFRAMES = "r.summary; r.timeseries; r.cc_events; r.links; r.link_queues"
# In the report, notes added by hand from this line on are kept when the report is rewritten.
KEEP = "<!-- notes: kept by bench/flow_memory.py -->"


def scenario(n: int, sample_interval: str = "100ms", cc: str = "cubic", duration: str = "1s",
             buffer: str = "1bdp") -> str:
    return (
        f'name = "flow_memory_{n}"\nduration = "{duration}"\nseed = 1\nsample_interval = "{sample_interval}"\n\n'
        f'[bottleneck]\nrate = "1Gbps"\ndelay = "10ms"\nbuffer = "{buffer}"\n\n'
        f'[[flows]]\ncc = "{cc}"\ncount = {n}\n'
    )


def engine_binary() -> Path:
    """Build the run_json example (release) and return its path."""
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "ccsim-core", "--example", "run_json"],
                   cwd=REPO, check=True)
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    exe = target / "release" / "examples" / "run_json"
    if not exe.exists():
        raise SystemExit(f"{exe} not found after cargo build")
    return exe


def ccsim_cmd() -> list[str]:
    exe = Path(sys.executable).with_name("ccsim")
    if exe.exists():
        return [str(exe)]
    found = shutil.which("ccsim")
    return [found] if found else [sys.executable, "-m", "ccsim"]


def command(mode: str, toml: Path, json_path: Path, json_1row: Path, out: Path, engine: Path | None) -> list[str]:
    py = sys.executable
    f = repr(str(toml))
    if mode == "engine":
        return [str(engine), str(json_path)]
    if mode == "engine-1row":
        return [str(engine), str(json_1row)]
    if mode == "api":
        return [py, "-c", f"import ccsim; ccsim.run({f})"]
    if mode == "api-df":
        return [py, "-c", f"import ccsim; r = ccsim.run({f}); {DATAFRAMES}"]
    if mode == "api-df-nots":
        return [py, "-c", f"import ccsim; r = ccsim.run({f}, timeseries=False); {DATAFRAMES}"]
    if mode == "cli":
        return [*ccsim_cmd(), "run", str(toml)]
    if mode == "cli-out":
        return [*ccsim_cmd(), "run", str(toml), "--out", str(out)]
    if mode == "cli-out-nots":
        return [*ccsim_cmd(), "run", str(toml), "--out", str(out), "--no-timeseries"]
    raise ValueError(mode)


def peak_rss(cmd: list[str], tmp: Path) -> tuple[int, float]:
    """Run cmd under /usr/bin/time; (its peak RSS in bytes, wall seconds)."""
    report = tmp / "time.txt"
    env = dict(os.environ)
    env.pop("CCSIM_MEMORY_LIMIT", None)
    env["MPLBACKEND"] = "Agg"
    t0 = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-o", str(report), "-f", "%M", *cmd], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, env=env, timeout=CHILD_TIMEOUT_S)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}: {p.stderr.decode(errors='replace')[-2000:]}")
    return int(report.read_text().split()[-1]) * 1024, wall


def estimates(files: dict[str, Path]) -> dict[tuple[str, bool], int]:
    """ccsim.limits.estimate's total for every scenario file, with and without a time series
    (in a child, so that this process stays small)."""
    code = (
        "import json, sys, ccsim\n"
        "paths = json.loads(sys.argv[1])\n"
        "print(json.dumps({f'{k} {int(ts)}': ccsim.limits.estimate(p, timeseries=ts)['total_bytes']"
        " for k, p in paths.items() for ts in (True, False)}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code, json.dumps({k: str(p) for k, p in files.items()})],
                         check=True, capture_output=True, text=True).stdout
    return {(k.rsplit(" ", 1)[0], k.rsplit(" ", 1)[1] == "1"): v for k, v in json.loads(out).items()}


def fit(points: list[tuple[int, int]]) -> tuple[float, float]:
    """Least-squares (slope, intercept) of y over x."""
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    sxy = sum((x - mx) * (y - my) for x, y in points)
    slope = sxy / sxx
    return slope, my - slope * mx


STAGES = r"""
import contextlib, io, resource, sys, time
def mark(what, t):
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{what:<34} peak RSS {rss:7.0f} MB  {time.perf_counter() - t:6.1f} s", flush=True)
    return time.perf_counter()
t = time.perf_counter()
import ccsim, pandas, matplotlib, pyarrow
from ccsim import cli
t = mark("imports (ccsim, pandas, matplotlib)", t)
r = ccsim.run(sys.argv[1])
t = mark("ccsim.run", t)
r.summary; r.timeseries; r.cc_events; r.links; r.link_queues
t = mark("DataFrames", t)
r.to_parquet(sys.argv[2])
t = mark("Parquet files", t)
r.plot(sys.argv[2] + "/throughput_cwnd.png")
t = mark("plot", t)
with contextlib.redirect_stdout(io.StringIO()):
    cli._print_summary(r)
t = mark("table", t)
"""


def stages(n: int) -> None:
    """What `ccsim run FILE --out DIR` does, step by step, with the peak RSS after each."""
    with tempfile.TemporaryDirectory() as tmp:
        toml = Path(tmp) / f"n{n}.toml"
        toml.write_text(scenario(n), encoding="utf-8")
        print(f"{n:,} flows, the steps of `ccsim run FILE --out DIR` in one process:")
        subprocess.run([sys.executable, "-c", STAGES, str(toml), str(Path(tmp) / "out")], check=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--flows", default="1000,2000,5000,10000,20000", help="comma-separated flow counts")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--cc", default="cubic", help="the flows' algorithm (default cubic)")
    ap.add_argument("--duration", default="1s", help='simulated time (default "1s")')
    ap.add_argument("--buffer", default="1bdp", help='the bottleneck buffer (default "1bdp")')
    ap.add_argument("--modes", default=",".join(MODES), help="comma-separated, of: " + ", ".join(MODES))
    ap.add_argument("--out", type=Path, default=RESULTS, help="markdown report (default bench/results/flow_memory.md)")
    ap.add_argument("--stages", type=int, default=None, metavar="N",
                    help="only show the peak RSS after each step of `ccsim run --out` with N flows")
    args = ap.parse_args(argv)
    if args.stages:
        stages(args.stages)
        return 0
    flows = [n for n in dict.fromkeys(int(x) for x in args.flows.split(",")) if n != 1]
    if not flows:
        raise SystemExit("--flows: give at least one flow count above 1 (the 1-flow run is always measured)")
    modes = args.modes.split(",")
    for m in modes:
        if m not in MODES:
            raise SystemExit(f"--modes: unknown mode {m!r}; accepted: {', '.join(MODES)}")
    engine = engine_binary() if any(m.startswith("engine") for m in modes) else None

    peaks: dict[tuple[str, int], list[int]] = {}
    walls: dict[tuple[str, int], list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        tomls: dict[int, Path] = {}
        for n in [1, *flows]:
            toml = tmp / f"n{n}.toml"
            toml.write_text(scenario(n, cc=args.cc, duration=args.duration, buffer=args.buffer), encoding="utf-8")
            tomls[n] = toml
            one_s = tmp / f"n{n}_1s.toml"
            one_s.write_text(scenario(n, args.duration, args.cc, args.duration, args.buffer), encoding="utf-8")
            # The JSON form of the TOML, as the engine example reads it.
            conv = "import sys, ccsim; print(ccsim.load(sys.argv[1]).to_json())"
            for src in (toml, one_s):
                js = subprocess.run([sys.executable, "-c", conv, str(src)], check=True, capture_output=True,
                                    text=True).stdout
                src.with_suffix(".json").write_text(js, encoding="utf-8")
        est = estimates({**{str(n): p for n, p in tomls.items()},
                         **{f"{n}_1row": tmp / f"n{n}_1s.toml" for n in tomls}})
        for mode in modes:
            # The 1-flow run first (the base the estimate's growth is measured from), then N.
            for n in [1, *flows]:
                for _ in range(args.repeat):
                    out = tmp / "out"
                    shutil.rmtree(out, ignore_errors=True)
                    cmd = command(mode, tomls[n], tomls[n].with_suffix(".json"),
                                  (tmp / f"n{n}_1s.toml").with_suffix(".json"), out, engine)
                    rss, wall = peak_rss(cmd, tmp)
                    peaks.setdefault((mode, n), []).append(rss)
                    walls.setdefault((mode, n), []).append(wall)
                    print(f"{mode:<13} {n:>6} flows: peak RSS {rss / 1e6:8.1f} MB  ({wall:6.1f} s)", flush=True)

    options = f"--flows {args.flows} --repeat {args.repeat}"
    if args.modes != ",".join(MODES):
        options += f" --modes {args.modes}"
    if args.cc != "cubic":
        options += f" --cc {args.cc}"
    if args.duration != "1s":
        options += f" --duration {args.duration}"
    if args.buffer != "1bdp":
        options += f" --buffer {args.buffer}"
    lines = [
        "# Peak memory per TCP flow",
        "",
        f"Measured {_dt.date.today().isoformat()} on {platform.node()} ({platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}), `python3 bench/flow_memory.py {options}`. "
        f"Each run: N {args.cc} flows, one 1 Gbps bottleneck, 10 ms one way (20 ms base RTT), a {args.buffer} drop-tail "
        f"buffer, default access links, {args.duration} simulated, time series every 100 ms (`engine-1row`: once, at "
        "the end); one child process each, peak RSS by `/usr/bin/time -f %M` (MB = 10^6 bytes).",
        "",
        "Modes:",
        "",
        *[f"- `{m}`: {MODES[m]}" for m in modes],
        "",
        "Peak RSS (MB), each repeat:",
        "",
        "| flows | " + " | ".join(f"`{m}`" for m in modes) + " |",
        "|---" * (len(modes) + 1) + "|",
    ]
    for n in [1, *flows]:
        cells = [" / ".join(f"{v / 1e6:,.1f}" for v in peaks[(m, n)]) for m in modes]
        lines.append(f"| {n:,} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "Least-squares fit of peak RSS over N (every repeat of N = "
        f"{', '.join(f'{n:,}' for n in (flows if len(flows) > 1 else [1, *flows]))}), and the slowest run:",
        "",
        "| mode | slope (bytes per flow) | intercept (MB) | largest residual (MB) | wall s at the largest N |",
        "|---|---|---|---|---|",
    ]
    slopes = {}
    for m in modes:
        # With one N only, the line goes through the 1-flow runs too.
        pts = [(n, v) for n in (flows if len(flows) > 1 else [1, *flows]) for v in peaks[(m, n)]]
        slope, icpt = fit(pts)
        slopes[m] = slope
        resid = max(abs(v - (slope * n + icpt)) for n, v in pts)
        lines.append(f"| `{m}` | {slope:,.0f} | {icpt / 1e6:,.1f} | {resid / 1e6:.1f} | {max(walls[(m, flows[-1])]):.1f} |")
    lines += [
        "",
        "The estimate (`ccsim.limits.estimate` of the mode's scenario, with or without the time series as the "
        "mode records it) "
        "against what it has to bound, the growth of peak RSS over the same mode's 1-flow run "
        "(largest repeat minus smallest 1-flow repeat); estimate / growth:",
        "",
        "| flows | " + " | ".join(f"`{m}`" for m in modes) + " |",
        "|---" * (len(modes) + 1) + "|",
    ]
    worst = {}
    for n in flows:
        cells = []
        for m in modes:
            growth = max(peaks[(m, n)]) - min(peaks[(m, 1)])
            e = est[(f"{n}_1row" if m == "engine-1row" else str(n), TIMESERIES[m])]
            ratio = e / growth if growth > 0 else float("inf")
            worst[m] = min(worst.get(m, float("inf")), ratio)
            cells.append(f"{e / 1e6:,.0f} / {growth / 1e6:,.0f} = {ratio:.2f}")
        lines.append(f"| {n:,} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "Smallest estimate / growth per mode (below 1 the estimate does not bound the run): "
        + ", ".join(f"`{m}` {worst[m]:.2f}" for m in modes) + ".",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    # Notes below KEEP in the report (other measurements, added by hand) are kept.
    old = args.out.read_text(encoding="utf-8") if args.out.exists() else ""
    if KEEP in old:
        text += "\n" + old[old.index(KEEP):]
    args.out.write_text(text, encoding="utf-8")
    print(f"written {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
