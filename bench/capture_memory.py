#!/usr/bin/env python3
"""Peak memory per workload flow row and per captured packet: the numbers behind
``WORKLOAD_ROW_BYTES`` and ``CAPTURE_RECORD_BYTES`` in ``crates/ccsim-core/src/limits.rs``.

- Workload rows: a 1 Gbps dumbbell (1 ms one way, 1 BDP buffer, no delayed ACKs), one
  ``[[workloads]]`` entry of 1-2 KB CUBIC flows arriving at N / 10 per second for 10 s, so about
  N flows start and all but a few complete (each leaves its row in ``flows``);
  N = 1, 20,000, 60,000.
- Captured packets: a 100 Mbps dumbbell (10 ms one way, 1 BDP buffer), one CUBIC flow, with
  ``--pcap`` (the bottleneck), 1 s, 10 s and 30 s simulated; the packets are the
  bottleneck's ``packets_in`` (the capture's records).

Each run is one child process under ``/usr/bin/time -f %M`` (its peak RSS), one at a time, in
the ways users run a scenario (``--modes``):

- ``json``: ``ccsim run FILE --json --no-timeseries``;
- ``api``: ``ccsim.run(FILE, timeseries=False)`` with ``Result.summary`` and ``to_dict()``;
- ``cli``: ``ccsim run FILE --no-timeseries`` (its table);
- ``out``: ``ccsim run FILE --out DIR --no-timeseries`` (Parquet files and the table).

For each mode, the slope of peak RSS over the count (least squares), in bytes per row or
per packet.

- Drops (``--what drops``, no memory measured): the bound on the captured packets before the
  run (``ccsim.limits.estimate(..., pcap=True)``) against the packets captured, on a 10 Mbps
  dumbbell (20 ms one way, 50-packet buffer) with 1 to 500 CUBIC flows for 30 s, with the
  bottleneck's drops as a share of its packets (``CAPTURE_DROP_ALLOWANCE`` is for them).

Written to stdout and ``bench/results/capture_memory.md`` (``--out``).

    python3 bench/capture_memory.py
    python3 bench/capture_memory.py --modes json,out --what rows
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
RESULTS = BENCH_DIR / "results" / "capture_memory.md"
MODES = ("json", "api", "cli", "out")


def workload_toml(n: int, cdf: Path) -> str:
    rate = max(n / 10, 0.1)
    return f"""duration = "10s"
[bottleneck]
rate = "1Gbps"
delay = "1ms"
buffer = "1bdp"
[tcp]
delayed_ack = false
[[workloads]]
cc = "cubic"
sizes = "{cdf}"
arrivals = "{rate}/s"
"""


def capture_toml(seconds: int) -> str:
    return f"""duration = "{seconds}s"
[bottleneck]
rate = "100Mbps"
delay = "10ms"
buffer = "1bdp"
[[flows]]
cc = "cubic"
"""


def command(mode: str, toml: Path, out: Path, pcap: Path | None) -> list[str]:
    ccsim = [sys.executable, "-m", "ccsim"]
    cap = ["--pcap", str(pcap)] if pcap else []
    if mode == "json":
        return [*ccsim, "run", str(toml), "--json", "--no-timeseries", *cap]
    if mode == "api":
        arg = f", pcap={str(pcap)!r}" if pcap else ""
        return [sys.executable, "-c", f"import ccsim; r = ccsim.run({str(toml)!r}, timeseries=False{arg}); r.summary; r.to_dict()"]
    if mode == "cli":
        return [*ccsim, "run", str(toml), "--no-timeseries", *cap]
    return [*ccsim, "run", str(toml), "--out", str(out), "--no-timeseries", *cap]


def peak_rss(cmd: list[str], tmp: Path) -> int:
    report = tmp / "time.txt"
    p = subprocess.run(["/usr/bin/time", "-o", str(report), "-f", "%M", *cmd], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}: {p.stderr.decode(errors='replace')[-2000:]}")
    return int(report.read_text().split()[-1]) * 1024


def slope(points: list[tuple[int, int]]) -> float:
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    return sum((x - mx) * (y - my) for x, y in points) / sum((x - mx) ** 2 for x, _ in points)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--what", default="rows,captures,drops", help="any of rows, captures, drops (comma-separated)")
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args()
    modes = [m for m in args.modes.split(",") if m]
    lines = [f"# Memory per workload row and per captured packet ({_dt.date.today()}, {platform.machine()}, "
             f"Python {platform.python_version()})", "", "`python3 bench/capture_memory.py`", ""]
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        cdf = tmp / "tiny.cdf"
        cdf.write_text("1000 0\n2000 100\n")
        import ccsim

        series = []
        if "rows" in args.what:
            runs = []
            for n in (1, 20_000, 60_000):
                f = tmp / f"wl{n}.toml"
                f.write_text(workload_toml(n, cdf))
                rows = len(ccsim.run(f, timeseries=False).to_dict()["flows"])
                runs.append((rows, f, None))
            series.append(("workload flow rows", "row", runs))
        if "captures" in args.what:
            runs = []
            for s in (1, 10, 30):
                f = tmp / f"cap{s}.toml"
                f.write_text(capture_toml(s))
                pk = ccsim.run(f, timeseries=False, pcap=tmp / "p").bottleneck["packets_in"]
                runs.append((pk, f, tmp / "pcaps"))
            series.append(("captured packets", "packet", runs))
        for title, unit, runs in series:
            lines += [f"## {title}", "", "| mode | " + " | ".join(f"{c:,} {unit}s" for c, _, _ in runs) + f" | bytes per {unit} |",
                      "|---|" + "---|" * (len(runs) + 1)]
            for mode in modes:
                pts = [(c, peak_rss(command(mode, f, tmp / "out", p), tmp)) for c, f, p in runs]
                row = f"| {mode} | " + " | ".join(f"{r / 1e6:.1f} MB" for _, r in pts) + f" | {slope(pts):,.0f} |"
                print(row, flush=True)
                lines.append(row)
            lines.append("")
        if "drops" in args.what:
            lines += ["## Captured packets against their bound", "",
                      "| flows | captured | bound | bound / captured | drops / packets |", "|---|---|---|---|---|"]
            for n in (1, 20, 100, 500):
                sc = {"duration": "30s", "bottleneck": {"rate": "10Mbps", "delay": "20ms", "buffer": "50pkt"},
                      "flows": [{"cc": "cubic", "count": n}]}
                bound = ccsim.limits.estimate(sc, timeseries=False, pcap=True)["captured_packets"]
                b = ccsim.run(sc, timeseries=False, pcap=tmp / "d").bottleneck
                row = (f"| {n} | {b['packets_in']:,} | {bound:,} | {bound / b['packets_in']:.2f} | "
                       f"{b['drops'] / b['packets_in']:.3f} |")
                print(row, flush=True)
                lines.append(row)
            lines.append("")
    text = "\n".join(lines) + "\n"
    print(text)
    args.out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
