"""The ``ccsim`` command.

Errors never show a traceback: invalid input (scenario, file, options) prints
one line ``error: <message>`` on stderr and exits with status 2; anything
unexpected prints one line and exits with status 1.  Set ``CCSIM_DEBUG=1`` to
get the full traceback instead.
"""

from __future__ import annotations

import json
import math
import os
import statistics
import sys
import warnings
from pathlib import Path
from typing import Any, NoReturn, Sequence

import click

from . import __version__, _core
from .build import build_kind
from .result import CcsimWarning, Result, run as run_scenario
from .cc import AlgorithmError
from .scenario import ScenarioError, algorithms as list_algorithms, qdiscs as list_qdiscs

#: Exit status for invalid input (bad scenario, missing file, bad option).
EXIT_USAGE = 2
#: Exit status for unexpected internal errors.
EXIT_INTERNAL = 1
#: Exit status after Ctrl-C (128 + SIGINT) and after SIGTERM in `emulate` and `compare` (128 + SIGTERM).
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143

PLOT_FILENAME = "throughput_cwnd.png"


# click >= 8.2 raises this for `ccsim` without a command (older click just exits 0).
_NoArgsIsHelpError = getattr(click.exceptions, "NoArgsIsHelpError", ())


class UserError(click.ClickException):
    """A problem with the user's input or environment; exit status 2."""

    exit_code = EXIT_USAGE


def _one_line(text: object) -> str:
    parts = [p.strip() for p in str(text).splitlines() if p.strip()]
    return " ".join(parts)


def _fail(message: str, code: int) -> NoReturn:
    try:
        click.echo(f"error: {_one_line(message)}", err=True)
    finally:
        sys.exit(code)


class CcsimGroup(click.Group):
    """A click group whose ``main`` turns every error into one ``error:`` line.

    Overriding ``main`` (rather than wrapping it in :func:`main`) means that
    ``click.testing.CliRunner`` sees the same behaviour as the installed command.
    """

    def main(  # type: ignore[override]
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        # Run warnings are printed as one `warning:` line each by the commands themselves.
        warnings.filterwarnings("ignore", category=CcsimWarning)
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        if os.environ.get("CCSIM_DEBUG"):
            return super().main(args, prog_name or "ccsim", complete_var, True, **extra)
        try:
            rv = super().main(args, prog_name or "ccsim", complete_var, False, **extra)
        except _NoArgsIsHelpError as exc:
            # `ccsim` without a command: show the help, like --help.
            ctx = getattr(exc, "ctx", None) or click.Context(self, info_name=prog_name or "ccsim")
            click.echo(ctx.get_help())
            sys.exit(0)
        except AlgorithmError as exc:
            # A Python algorithm failed: its traceback (the user's code) keeps its lines.
            try:
                click.echo(f"error: {exc}", err=True)
            finally:
                sys.exit(EXIT_USAGE)
        except ScenarioError as exc:
            _fail(str(exc), EXIT_USAGE)
        except click.ClickException as exc:
            # Usage errors, bad option values, UserError: one line, status 2.
            _fail(exc.format_message(), EXIT_USAGE)
        except click.exceptions.Abort as exc:
            # click turns Ctrl-C (KeyboardInterrupt) into Abort.
            _interrupted(exc.__cause__)
        except BrokenPipeError:
            # Output piped into e.g. `head`: not an error worth reporting.
            _silence_stdout()
            sys.exit(EXIT_INTERNAL)
        except KeyboardInterrupt as exc:
            _interrupted(exc)
        except SystemExit:
            raise
        except BaseException as exc:  # noqa: BLE001 - includes pyo3 PanicException
            name = type(exc).__name__
            detail = _one_line(exc) or "no details"
            _fail(
                f"internal error ({name}): {detail} "
                "(this is a bug in ccsim; set CCSIM_DEBUG=1 for a traceback)",
                EXIT_INTERNAL,
            )
        # standalone_mode=False returns the exit code for Exit (--help, --version).
        code = rv if isinstance(rv, int) else 0
        sys.exit(code)


def _interrupted(exc: BaseException | None) -> NoReturn:
    """Ctrl-C: status 130; SIGTERM during an emulation (after its clean-up): status 143."""
    from .emulate.errors import Terminated

    if isinstance(exc, Terminated):
        _fail("terminated", EXIT_TERMINATED)
    _fail("interrupted", EXIT_INTERRUPTED)


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


@click.group(
    cls=CcsimGroup,
    context_settings={"help_option_names": ["-h", "--help"]},
    no_args_is_help=True,
)
@click.version_option(
    version=__version__, prog_name="ccsim",
    message=f"%(prog)s %(version)s (simulation model version {_core.MODEL_VERSION}; {build_kind()})",
)
def cli() -> None:
    """ccsim: fast packet-level TCP congestion-control simulator."""


@cli.command("run")
@click.argument("file", metavar="FILE.toml", type=click.Path(dir_okay=True, path_type=Path))
@click.option("--seed", type=int, default=None, metavar="N",
              help="Random seed; overrides the scenario's seed.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              default=None, metavar="DIR",
              help=f"Write summary.json, flows.parquet, timeseries.parquet, cc_events.parquet, links.parquet and link_queues.parquet (wired networks) and {PLOT_FILENAME}.")
@click.option("--json", "as_json", is_flag=True,
              help="Print the run summary as one JSON object on stdout.")
@click.option("--no-timeseries", "no_timeseries", is_flag=True,
              help="Record no time series (for long or large runs; the summary is the same).")
@click.option("--memory-limit", "memory_limit", default=None, metavar="SIZE",
              help="Memory the run may use, e.g. 8GB (default: $CCSIM_MEMORY_LIMIT, else half "
                   "of this machine's memory); a run estimated to need more is refused.")
@click.option("--pcap", "pcap_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              metavar="DIR", help="Write a packet capture (pcap) of each --pcap-links direction or Wi-Fi hop into DIR.")
@click.option("--pcap-links", "pcap_links", default=None, metavar="A->B,...",
              help="Link directions or Wi-Fi hops to capture, e.g. r1->r2,r2->r1, or ap->sta for what "
                   "station ap sends station sta over the air (default: the bottleneck, else each "
                   "flow's slowest direction or first Wi-Fi hop).")
@click.option("--pcap-snaplen", "pcap_snaplen", type=int, default=128, show_default=True, metavar="BYTES",
              help="Bytes of each frame kept in the capture (headers and the start of the payload).")
def run_cmd(file: Path, seed: int | None, out_dir: Path | None, as_json: bool, no_timeseries: bool,
            memory_limit: str | None, pcap_dir: Path | None, pcap_links: str | None, pcap_snaplen: int) -> None:
    """Run the scenario in FILE.toml and print a summary."""
    from .limits import parse_size

    limit = parse_size(memory_limit, "--memory-limit") if memory_limit is not None else None
    if pcap_links is not None and pcap_dir is None:
        raise UserError("--pcap-links: needs --pcap DIR (the folder the captures go to)")
    links = [x.strip() for x in pcap_links.split(",") if x.strip()] if pcap_links is not None else None
    result = run_scenario(file, seed=seed, timeseries=not no_timeseries, memory_limit=limit,
                          pcap=pcap_dir, pcap_links=links, pcap_snaplen=pcap_snaplen)
    _show_result(result, out_dir, as_json)
    for link, path in result.pcap_files.items():
        click.echo(f"wrote the capture of {link} to {path}", err=True)


def _show_result(result: Result, out_dir: Path | None, as_json: bool) -> None:
    """Write the result's files to ``out_dir`` (if given); print its JSON or its summary."""
    written, plotted = _write_outputs(result, out_dir) if out_dir is not None else (None, False)
    if as_json:
        click.echo(result.to_json())
        if written is not None:
            click.echo(f"wrote results to {written}", err=True)
            if not plotted:
                click.echo(f"{PLOT_FILENAME} not drawn: the run has no time series", err=True)
    else:
        _print_summary(result)
        if written is not None:
            names = ["summary.json", "flows.parquet", "timeseries.parquet" + ("" if plotted else " (no rows)"),
                     "cc_events.parquet"]
            if result._summary.get("links"):
                names += ["links.parquet", "link_queues.parquet"]
            if plotted:
                click.echo(f"wrote {', '.join(names)} and {PLOT_FILENAME} to {written}")
            else:
                click.echo(f"wrote {', '.join(names)} to {written}; {PLOT_FILENAME} not drawn: "
                           "the run has no time series")
    _print_warnings(result)


def _write_outputs(result: Result, out_dir: Path) -> tuple[Path, bool]:
    """Write the result's files; (the directory, whether the plot was drawn)."""
    plotted = len(result.timeseries) > 0
    try:
        out = result.to_parquet(out_dir)
        if plotted:
            result.plot(out / PLOT_FILENAME)
        else:  # not a plot of an earlier run left beside these results
            (out / PLOT_FILENAME).unlink(missing_ok=True)
    except OSError as exc:
        target = exc.filename or out_dir
        raise UserError(f"cannot write results to {target}: {exc.strerror or exc}") from None
    return out, plotted


@cli.command("algorithms")
@click.argument("name", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def algorithms_cmd(name: str | None, as_json: bool) -> None:
    """List the congestion-control algorithms, or show one (NAME) with every parameter."""
    _show_registry(
        list_algorithms(), name, as_json, kind="algorithm",
        title="congestion-control algorithms (ccsim algorithms NAME for parameters)",
        params_hint="set per flow: params = { name = value }",
    )


@cli.command("qdiscs")
@click.argument("name", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def qdiscs_cmd(name: str | None, as_json: bool) -> None:
    """List the queue disciplines, or show one (NAME) with every parameter."""
    _show_registry(
        list_qdiscs(), name, as_json, kind="queue discipline",
        title="queue disciplines (ccsim qdiscs NAME for parameters; qdisc = NAME on [bottleneck] or a [[links]] entry)",
        params_hint="set per link direction: qdisc_params = { name = value }",
        extra=("marks ECN", lambda q: "yes" if q.get("can_mark") else "no"),
    )


def _show_registry(
    items: list[dict[str, Any]], name: str | None, as_json: bool, *, kind: str, title: str, params_hint: str,
    extra: tuple[str, Any] | None = None,
) -> None:
    """List a registry (algorithms, queue disciplines), or show entry NAME with its parameters."""
    if name is not None:
        found = [a for a in items if a.get("name") == name]
        if not found:
            accepted = ", ".join(str(a.get("name")) for a in items)
            raise UserError(f"unknown {kind} {name!r}; accepted: {accepted}")
        items = found
    if as_json:
        click.echo(json.dumps(items[0] if name is not None else items, indent=2))
        return
    from rich.table import Table

    console = _console()
    if name is None:
        table = Table(title=title)
        table.add_column("name", style="bold", no_wrap=True)
        table.add_column("summary")
        table.add_column("follows")
        if extra:
            table.add_column(extra[0])
        table.add_column("parameters")
        for item in items:
            names = ", ".join(str(p.get("name")) for p in item.get("params", []) or []) or "-"
            cells = [str(item.get("name")), str(item.get("summary")), str(item.get("source"))]
            if extra:
                cells.append(extra[1](item))
            table.add_row(*cells, names)
        console.print(table)
        return
    item = items[0]
    from rich.text import Text

    # The console has markup off (docs may contain "[...]"): style with Text, not markup.
    console.print(Text.assemble((str(item.get("name")), "bold"), f": {item.get('summary')}"))
    console.print(f"follows: {item.get('source')}")
    if extra:
        console.print(f"{extra[0]}: {extra[1](item)}")
    if not item.get("params"):
        console.print("parameters: none")
        return
    table = Table(title=f"parameters of {item.get('name')} ({params_hint})")
    table.add_column("parameter", style="bold", no_wrap=True)
    table.add_column("default", justify="right")
    table.add_column("unit")
    table.add_column("accepted")
    table.add_column("meaning and source")
    for p in item.get("params", []) or []:
        table.add_row(
            str(p.get("name")),
            _fmt_value(p.get("default")),
            str(p.get("unit", "")),
            _fmt_value(p.get("range")),
            str(p.get("doc", "")),
        )
    console.print(table)


@cli.command("schema")
@click.argument("table_name", metavar="[TABLE]", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@click.option("--markdown", is_flag=True, help="Print every table as Markdown (docs/outputs.md).")
def schema_cmd(table_name: str | None, as_json: bool, markdown: bool) -> None:
    """List the output tables (what a run reports), or show one (TABLE) with every column's
    type, unit and meaning."""
    from . import schema

    tables = schema.tables()
    if table_name is not None and table_name not in tables:
        raise UserError(f"unknown table {table_name!r}; accepted: {', '.join(tables)}")
    if markdown:
        click.echo(schema.markdown(), nl=False)
        return
    if as_json:
        chosen = [tables[table_name]] if table_name else list(tables.values())
        data = [{"name": t.name, "doc": t.doc, "columns": [vars(c) for c in t.columns]} for t in chosen]
        click.echo(json.dumps(data[0] if table_name else data, indent=2))
        return
    from rich.table import Table

    console = _console()
    if table_name is None:
        table = Table(title="output tables (ccsim schema TABLE for the columns)")
        table.add_column("table", style="bold", no_wrap=True)
        table.add_column("what it is")
        table.add_column("columns")
        for t in tables.values():
            table.add_row(t.name, t.doc, ", ".join(t.names))
        console.print(table)
        return
    t = tables[table_name]
    console.print(f"{t.name}: {t.doc}", soft_wrap=True)
    table = Table()
    table.add_column("column", style="bold", no_wrap=True)
    table.add_column("type", no_wrap=True)
    table.add_column("unit", no_wrap=True)
    table.add_column("nullable")
    table.add_column("meaning")
    for c in t.columns:
        table.add_row(c.name, c.type, c.unit, "yes" if c.nullable else "", c.doc)
    console.print(table)


def _fmt_value(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"  # TOML spelling
    if isinstance(value, (list, tuple)):
        return " .. ".join(_fmt_value(v) for v in value)
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _num(value: Any, fmt: str) -> str:
    if value is None or isinstance(value, bool):
        return "-" if value is None else str(value)
    if isinstance(value, float) and math.isnan(value):
        return "-"
    try:
        return format(value, fmt)
    except (TypeError, ValueError):
        return str(value)


def _console():
    from rich.console import Console

    # markup=False: scenario paths and parameter docs may contain "[...]".
    console = Console(highlight=False, markup=False)
    if not console.is_terminal:
        # Piped or redirected: rich would assume 80 columns and truncate headers.
        console = Console(highlight=False, markup=False, width=max(console.width, 120))
    return console


def _print_summary(result: Result) -> None:
    from rich import box
    from rich.table import Table

    d = result._summary  # read only: to_dict() would copy it (seconds with 100,000 flows)
    wireless = d.get("network") == "wireless"
    # A [[links]] network: say where each flow runs.
    paths = not wireless and not d.get("bottleneck") and any(f.get("path") for f in d.get("flows", []))
    table = Table(box=box.SIMPLE_HEAD, show_edge=False)
    table.add_column("flow", justify="right", no_wrap=True)
    table.add_column("algorithm", no_wrap=True)
    if wireless or paths:
        table.add_column("path", no_wrap=True)
    # Headings carry the schema's units.
    from .schema import heading

    def number(tab: str, col: str, label: str) -> None:
        table.add_column(heading(tab, col, label), justify="right", no_wrap=True)

    number("flows", "throughput_mbps", "throughput")
    if wireless:
        number("line_flows", "sent", "sent")
        number("line_flows", "loss_ratio", "loss\nratio")
    number("flows", "retransmits", "retransmits")
    number("flows", "rtt_mean_ms", "RTT mean")
    number("flows", "rtt_p95_ms", "RTT p95")
    number("flows", "cwnd_final_pkts", "final cwnd")
    shown = [f for f in d.get("flows", []) if f.get("workload") is None]  # workload flows: per workload below
    for f in shown[:MAX_FLOW_ROWS]:
        row = [str(f.get("id", "")), str(f.get("cc", ""))]
        if wireless:
            row.append(f"{f.get('src')} -> {f.get('dst')}")
        elif paths:
            p = f.get("path") or []
            row.append(f"{p[0]} -> {p[-1]} ({len(p) - 1} hops)" if p else "-")
        row.append(_num(f.get("throughput_mbps"), ".3f"))
        if wireless:
            row += [_num(f.get("sent"), ","), _num(f.get("loss_ratio"), ".4f")]
        row += [
            _num(f.get("retransmits"), ","),
            _num(f.get("rtt_mean_ms"), ".1f"),
            _num(f.get("rtt_p95_ms"), ".1f"),
            _num(f.get("cwnd_final_pkts"), ",.0f"),
        ]
        table.add_row(*row)
    console = _console()
    console.print(_title(result, d), soft_wrap=True)
    console.print(table)
    if len(shown) > MAX_FLOW_ROWS:
        console.print(_more_flows(shown), soft_wrap=True)
    for w in d.get("workloads") or []:
        console.print(
            f"workload {w['id']} ({w['cc']}, {w['sizes']}, {w['arrival_rate']:.2f} flows/s"
            + (f", offered load {w['offered_load']:.3f}" if w.get("offered_load") is not None else "")
            + f"): {w['buckets'][0]['completed']:,} of {w['buckets'][0]['started']:,} flows completed",
            soft_wrap=True,
        )
        for b in w["buckets"]:
            if b["started"]:
                console.print(
                    f"  {b['bucket']:>11}: {b['completed']:,}/{b['started']:,} flows, FCT mean {_num(None if b['fct_mean_s'] is None else b['fct_mean_s'] * 1e3, '.2f')} ms "
                    f"p50 {_num(None if b['fct_p50_s'] is None else b['fct_p50_s'] * 1e3, '.2f')} p99 {_num(None if b['fct_p99_s'] is None else b['fct_p99_s'] * 1e3, '.2f')} ms, "
                    f"slowdown p50 {_num(b['slowdown_p50'], '.2f')} p99 {_num(b['slowdown_p99'], '.2f')}",
                    soft_wrap=True,
                )
    emulated = d.get("mode") == "emulation"
    if wireless:
        w = d.get("wireless", {}) or {}
        st = d.get("stations", []) or []
        attempts = sum(s.get("tx_attempts", 0) for s in st)
        timeouts = sum(s.get("ack_timeouts", 0) for s in st)
        network = (
            f"{w.get('hops')} hops, {w.get('profile')}, {w.get('environment')} | "
            f"MAC retries {100 * timeouts / attempts if attempts else 0:.1f}% of attempts | "
            f"queue drops {sum(s.get('queue_drops', 0) for s in st):,} | "
            f"retry drops {sum(s.get('retry_drops', 0) for s in st):,} | "
            f"host drops {sum(s.get('host_drops', 0) for s in st):,}"
        )
    elif not d.get("bottleneck") and d.get("links"):
        links = [ln for ln in d["links"] if ln.get("rate_mbps") is not None] or d["links"]
        busiest = max(links, key=lambda ln: ln.get("utilization") or 0.0)
        network = (
            f"{len(d['links'])} link directions carried packets; busiest {busiest.get('id')} "
            f"{100 * (busiest.get('utilization') or 0.0):.1f}% | "
            f"drops {sum(ln.get('drops', 0) for ln in d['links']):,} buffer + "
            f"{sum(ln.get('random_losses', 0) for ln in d['links']):,} random (all links)"
        )
        st = d.get("stations") or []
        if st:
            attempts = sum(s.get("tx_attempts", 0) for s in st)
            timeouts = sum(s.get("ack_timeouts", 0) for s in st)
            network += (
                f" | Wi-Fi {len(st)} stations: MAC retries {100 * timeouts / attempts if attempts else 0:.1f}% of attempts, "
                f"queue drops {sum(s.get('queue_drops', 0) for s in st):,}, "
                f"retry drops {sum(s.get('retry_drops', 0) for s in st):,}"
            )
    else:
        bn = d.get("bottleneck", {}) or {}
        util = bn.get("utilization")
        util_s = "-" if not isinstance(util, (int, float)) else f"{100 * util:.1f}%"
        network = (f"bottleneck utilization {util_s} | "
                   f"drops {_num(bn.get('drops'), ',')} buffer + {_num(bn.get('random_losses'), ',')} random")
        if bn.get("ack_losses"):
            network += f" (+ {_num(bn.get('ack_losses'), ',')} ACKs)"
    console.print(
        f"total {_num(d.get('total_throughput_mbps'), '.3f')} Mbps | "
        f"Jain index {_num(d.get('jain_index'), '.4f')} | "
        f"{network} | "
        + (f"packets {_num(d.get('events'), ',')} | emulated " if emulated else
           f"events {_num(d.get('events'), ',')} | simulated ")
        + f"{_num(d.get('sim_seconds'), '.3f')} s | "
        f"wall {_num(d.get('wall_seconds'), '.3f')} s",
        soft_wrap=True,
    )
    for item in d.get("ignored", []) or []:
        console.print(f"not applied by the kernel: {item}", soft_wrap=True)


#: Flows the text summary lists one row each; past that, the first ones and a line on all of them.
MAX_FLOW_ROWS = 50


def _more_flows(flows: list[dict[str, Any]]) -> str:
    """The line under a flow table cut at MAX_FLOW_ROWS: how many are not shown and how the
    throughput and mean RTT of all of them spread."""

    def spread(key: str, spec: str) -> str:
        xs = sorted(x for x in (f.get(key) for f in flows) if isinstance(x, (int, float)) and not math.isnan(x))
        if not xs:
            return "-"
        return " / ".join(_num(v, spec) for v in (xs[0], statistics.median(xs), xs[-1]))

    return (
        f"... {len(flows) - MAX_FLOW_ROWS:,} more flows (--json or --out DIR has every one); over all "
        f"{len(flows):,}: throughput min / median / max {spread('throughput_mbps', '.3f')} Mbps, "
        f"RTT mean {spread('rtt_mean_ms', '.1f')} ms"
    )


def _print_warnings(result: Result) -> None:
    """The run's warnings, one line each on stderr (they are not errors)."""
    for w in result.warnings:
        click.echo(f"warning: {_one_line(w)}", err=True)


def _title(result: Result, d: dict[str, Any]) -> str:
    src = result.scenario.source if result.scenario is not None else None
    name = str(src) if src is not None else "scenario"
    if d.get("mode") == "emulation":
        release = (d.get("kernel") or {}).get("release", "?")
        return (f"{name}: seed {d.get('seed')}, {_num(d.get('sim_seconds'), 'g')} s emulated "
                f"(real Linux {release} TCP over ccsim's link emulator)")
    return f"{name}: seed {d.get('seed')}, {_num(d.get('sim_seconds'), 'g')} s simulated"



# -- ccsim emulate / ccsim compare ---------------------------------------------------------------


def _check_emulation(file: Path, seed: int | None) -> None:
    """Bad input or a missing prerequisite fails here, before anything runs; then a note."""
    from .emulate import check_environment, plan

    p = plan(file, seed)
    check_environment()
    click.echo(f"emulating {p.duration_ns / 1e9:g} s of {file} with real Linux TCP "
               f"({len(p.flows)} flow{'s' if len(p.flows) != 1 else ''}) ...", err=True)


@cli.command("emulate")
@click.argument("file", metavar="FILE.toml", type=click.Path(dir_okay=True, path_type=Path))
@click.option("--seed", type=int, default=None, metavar="N",
              help="Seed of the emulator's random losses; overrides the scenario's seed.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              metavar="DIR", help=f"Write summary.json, flows.parquet, timeseries.parquet, cc_events.parquet, links.parquet and link_queues.parquet (wired networks) and {PLOT_FILENAME}.")
@click.option("--json", "as_json", is_flag=True,
              help="Print the summary as one JSON object on stdout (the schema of `ccsim run --json`).")
def emulate_cmd(file: Path, seed: int | None, out_dir: Path | None, as_json: bool) -> None:
    """Run FILE.toml's dumbbell with real Linux TCP (Linux, root).

    Each flow is a kernel TCP connection between two network namespaces using the kernel
    algorithm of the same name (reno for newreno); ccsim's user-space link emulator is the
    bottleneck. Takes the scenario's duration in real time. Everything it creates is removed
    at the end, also on Ctrl-C.
    """
    from .emulate import emulate

    result = _emulated(emulate, file, seed)
    _show_result(result, out_dir, as_json)


def _emulated(run: Any, file: Path, seed: int | None) -> Any:
    """``run(file, seed=seed)`` (emulate or compare) after the checks, with SIGTERM acting as
    Ctrl-C (the same clean-up; exit 143); an emulation that fails is one line, exit 1."""
    from .emulate import EmulationFailed
    from .emulate.run import sigterm_interrupts

    with sigterm_interrupts():
        _check_emulation(file, seed)
        try:
            return run(file, seed=seed)
        except EmulationFailed as exc:
            _fail(f"emulation failed: {exc}", EXIT_INTERNAL)


@cli.command("compare")
@click.argument("file", metavar="FILE.toml", type=click.Path(dir_okay=True, path_type=Path))
@click.option("--seed", type=int, default=None, metavar="N", help="Seed of both runs.")
@click.option("--json", "as_json", is_flag=True,
              help="Print {simulation, emulation, differences} as one JSON object.")
def compare_cmd(file: Path, seed: int | None, as_json: bool) -> None:
    """Run FILE.toml in simulation and with real Linux TCP; show both and their differences.

    Differences are relative to the emulation: (simulation - emulation) / emulation.
    Needs what `ccsim emulate` needs.
    """
    from .emulate import compare

    both = _emulated(compare, file, seed)
    if as_json:
        click.echo(json.dumps(both))
        return
    _print_comparison(file, both)


def _rel(x: Any) -> str:
    return "-" if x is None else f"{100 * x:+.1f}%"


def _print_comparison(file: Path, both: dict[str, Any]) -> None:
    from rich import box
    from rich.table import Table

    sim, emu, diff = both["simulation"], both["emulation"], both["differences"]
    table = Table(box=box.SIMPLE_HEAD, show_edge=False)
    table.add_column("flow", justify="right", no_wrap=True)
    table.add_column("algorithm", no_wrap=True)
    for head in ("throughput Mbps\nsim / emu", "Δ", "RTT mean ms\nsim / emu", "Δ",
                 "RTT p95 ms\nsim / emu", "retransmits\nsim / emu", "RTOs\nsim / emu"):
        table.add_column(head, justify="right", no_wrap=True)

    def pair(d: dict[str, Any], fmt: str) -> str:
        return f"{_num(d['simulation'], fmt)} / {_num(d['emulation'], fmt)}"

    for f in diff["flows"]:
        table.add_row(str(f["id"]), str(f["cc"]), pair(f["throughput_mbps"], ".3f"),
                      _rel(f["throughput_mbps"]["relative"]), pair(f["rtt_mean_ms"], ".1f"),
                      _rel(f["rtt_mean_ms"]["relative"]), pair(f["rtt_p95_ms"], ".1f"),
                      pair(f["retransmits"], ","), pair(f["rto_count"], ","))
    tot = diff["total_throughput_mbps"]
    table.add_row("total", "", pair(tot, ".3f"), _rel(tot["relative"]), "", "", "", "", "")
    console = _console()
    release = (emu.get("kernel") or {}).get("release", "?")
    console.print(f"{file}: seed {sim.get('seed')}, {_num(sim.get('sim_seconds'), 'g')} s; simulation (ccsim) vs "
                  f"emulation (Linux {release}); Δ = (sim - emu) / emu", soft_wrap=True)
    console.print(table)
    bn = Table(box=box.SIMPLE_HEAD, show_edge=False)
    for head in ("", "simulation", "emulation", "Δ"):
        bn.add_column(head, justify="right" if head else "left", no_wrap=True)
    rows = [("Jain index", diff["jain_index"], ".4f"),
            ("bottleneck utilization", diff["bottleneck.utilization"], ".4f"),
            ("drops (queue)", diff["bottleneck.drops"], ","),
            ("random losses", diff["bottleneck.random_losses"], ","),
            ("mean queue, packets", diff["bottleneck.queue_mean_pkts"], ".1f"),
            ("mean queueing delay, ms", diff["bottleneck.queue_delay_mean_ms"], ".2f")]
    for name, d, fmt in rows:
        bn.add_row(name, _num(d["simulation"], fmt), _num(d["emulation"], fmt), _rel(d["relative"]))
    console.print(bn)
    for item in emu.get("ignored", []) or []:
        console.print(f"not applied by the kernel: {item}", soft_wrap=True)


# -- ccsim sweep / ccsim query ------------------------------------------------------------------


@cli.command("sweep")
@click.argument("file", metavar="FILE.toml", type=click.Path(dir_okay=True, path_type=Path))
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              metavar="DIR", help="Store the results here (default ./ccsim-runs/<file stem>).")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None, metavar="J",
              help="Runs in parallel (default: the number of CPUs).")
@click.option("--backend", type=click.Choice(["local", "ray"]), default="local", show_default=True,
              help="local: a process pool; ray: one Ray task per run.")
@click.option("--address", default=None, metavar="ADDR",
              help="Ray cluster address (with --backend ray; default: start a local Ray).")
@click.option("--force", is_flag=True, help="Run every combination again, even if stored.")
@click.option("--runs", type=click.IntRange(min=1), default=None, metavar="N",
              help="Seeds per combination; overrides the file's `runs`.")
@click.option("--timeseries", is_flag=True,
              help="Also store each run's time series and algorithm events.")
@click.option("--memory-limit", "memory_limit", default=None, metavar="SIZE",
              help="Memory each run may use, e.g. 4GB (default: $CCSIM_MEMORY_LIMIT, else half of this "
                   "machine's memory shared by the runs in parallel); a run that would need more fails.")
def sweep_cmd(file: Path, out_dir: Path | None, jobs: int | None, backend: str,
              address: str | None, force: bool, runs: int | None, timeseries: bool,
              memory_limit: str | None) -> None:
    """Run the sweep in FILE.toml: every combination of its [sweep] table x `runs` seeds.

    FILE.toml is a scenario plus `runs = N` and a [sweep] table of parameter
    paths and value lists, e.g. `bottleneck.loss = [0, 0.001, 0.01]` and
    `"flows.0.cc" = ["cubic", "bbr"]` (stored as the columns loss and cc), or
    named entries such as `buffer_bdp = { path = "bottleneck.buffer", values =
    [1, 4], format = "{}bdp" }`.  Runs already stored in DIR are not run again,
    so an interrupted sweep continues where it stopped; stored files are checked
    first, and a damaged one is moved to DIR/damaged/ and its run rerun.  Query
    the results with `ccsim query DIR "SELECT ... FROM runs"`.
    """
    from . import store
    from .sweep import RAY_MISSING, RayNotInstalledError, RayStartError, execute, expand, load_sweep_file

    if address is not None and backend != "ray":
        raise UserError("--address is only used with --backend ray")
    if backend == "ray":
        try:
            import ray  # noqa: F401
        except ImportError:
            raise UserError(RAY_MISSING) from None
    from .limits import parse_size

    limit = parse_size(memory_limit, "--memory-limit") if memory_limit is not None else None
    base, sweep_table, file_runs = load_sweep_file(file)
    n_runs = runs if runs is not None else file_runs
    experiment = store.experiment_from_stem(file.stem)
    specs = expand(base, sweep_table, n_runs, experiment=experiment, timeseries=timeseries)
    out = out_dir if out_dir is not None else Path("ccsim-runs") / experiment
    try:
        report = execute(specs, out, jobs=jobs, backend=backend, address=address, force=force,
                         progress=True, description=experiment, memory_limit=limit)
    except RayNotInstalledError:
        raise UserError(RAY_MISSING) from None
    except RayStartError as exc:
        raise UserError(str(exc)) from None
    except KeyboardInterrupt as exc:
        rep = getattr(exc, "report", None)
        stored = "some" if rep is None else str(rep.skipped + rep.ran - len(rep.failed))
        _fail(f"interrupted: {stored} of {len(specs)} runs are stored in {out}; "
              "run the same command again to run the rest", 130)
    except OSError as exc:
        target = exc.filename or out
        raise UserError(f"cannot write results to {target}: {exc.strerror or exc}") from None
    # The swept parameters' columns (expand's tags: one per [sweep] entry, then run and seed).
    columns = [t for t in specs[0].tags if t not in ("run", "seed")] if specs else []
    _print_sweep_summary(file, specs, columns, n_runs, report, out, experiment)
    if report.failed:
        part = store.partition(out, "runs", experiment)
        _fail(f"{len(report.failed)} of {report.total} runs failed; the errors are in {part}/*.error.json",
              EXIT_INTERNAL)


def _print_sweep_summary(file: Path, specs, paths: list[str], n_runs: int, report, out: Path,
                         experiment: str) -> None:
    from rich import box
    from rich.table import Table

    from . import results, stats, store_check

    df = results.load(out, experiment, keys=report.keys, include_failed=True)
    # Combinations in sweep order, and the stored key of each of their runs.
    combos: dict[tuple, list[str]] = {}
    for spec, key in zip(specs, report.keys):
        combo = tuple(json.dumps(spec.tags.get(p), sort_keys=True, default=str) for p in paths)
        combos.setdefault(combo, [])
        if key not in combos[combo]:
            combos[combo].append(key)
    by_key = {k: g for k, g in df.groupby("key", sort=False)} if len(df) else {}
    flow_ids = sorted({int(f) for f in df["flow"].dropna().unique()}) if len(df) else []

    table = Table(box=box.SIMPLE_HEAD, show_edge=False)
    for p in paths or ["scenario"]:
        table.add_column(p, no_wrap=True)
    table.add_column("total\nMbps", justify="right", no_wrap=True)
    table.add_column("total\nsd", justify="right", no_wrap=True)
    table.add_column("Jain\nindex", justify="right", no_wrap=True)
    for f in flow_ids:
        table.add_column(f"flow {f}\nMbps", justify="right", no_wrap=True)
    table.add_column("runs", justify="right", no_wrap=True)
    table.add_column("failed", justify="right", no_wrap=True)
    for combo, keys in combos.items():
        groups = [by_key[k] for k in keys if k in by_key]
        ok = [g for g in groups if (g["status"] == "ok").all()]
        n_failed = len(groups) - len(ok)
        firsts = [g.iloc[0] for g in ok]
        total = stats.spread(r["total_throughput_mbps"] for r in firsts)
        jain = _mean([r["jain_index"] for r in firsts])
        cells = [_fmt_value(json.loads(v)) for v in combo] if paths else ["base"]
        cells += [stats.text(total), _num(None if total.n < 2 else total.sd, ".3f"), _num(jain, ".4f")]
        for f in flow_ids:
            vals = [v for g in ok for v in g.loc[g["flow"] == f, "throughput_mbps"].tolist()]
            cells.append(stats.text(stats.spread(vals)))
        cells += [str(len(ok)), str(n_failed) if n_failed else "-"]
        table.add_row(*cells)

    console = _console()
    n_comb = len(combos)
    console.print(
        f"{file}: {n_comb} combination{'s' if n_comb != 1 else ''} x {n_runs} run{'s' if n_runs != 1 else ''} "
        f"= {report.total} runs ({report.ran} ran, {report.skipped} already stored, "
        f"{len(report.failed)} failed) in {report.wall_seconds:.1f} s",
        soft_wrap=True,
    )
    console.print(table)
    if n_runs > 1:
        console.print("mean ± half-width of the 95 % confidence interval of the mean over the runs (Student's t); "
                      "sd: standard deviation of the runs' totals", soft_wrap=True)
    for line in store_check.summary_lines(report):
        console.print(line, soft_wrap=True)
    for spec, error in report.failed[:5]:
        console.print(f"failed: run {spec.key} (seed {spec.seed}): {error}", soft_wrap=True)
    if len(report.failed) > 5:
        console.print(f"... and {len(report.failed) - 5} more failed runs", soft_wrap=True)
    console.print(
        f"results in {out} (experiment {experiment}): ccsim.results.load({str(out)!r}) "
        f"or ccsim query {out} \"SELECT ... FROM runs\"",
        soft_wrap=True,
    )


def _mean(values: list[Any]) -> float | None:
    nums = [float(v) for v in values if isinstance(v, (int, float)) and not math.isnan(float(v))]
    return sum(nums) / len(nums) if nums else None


@cli.command("query")
@click.argument("directory", metavar="DIR", type=click.Path(path_type=Path))
@click.argument("sql", metavar="SQL")
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json", "markdown"]), default="table",
              show_default=True,
              help="Output format. table: a table if it fits the terminal, else one block of "
                   "'column: value' lines per row.")
@click.option("--max-rows", type=click.IntRange(min=1), default=1000, show_default=True, metavar="N",
              help="Rows shown in table format.")
def query_cmd(directory: Path, sql: str, fmt: str, max_rows: int) -> None:
    """Run SQL (DuckDB) over the results stored in DIR and print the result.

    DIR is a store written by ccsim sweep (default ccsim-runs/<file stem>) or
    ccsim reproduce.  Views: runs (one row per run and flow: an experiment
    column, a column per swept parameter, named after the last part of its
    path, and the results), timeseries and cc_events (runs stored with
    --timeseries), failed (runs that failed).  Example, after
    `ccsim sweep examples/sweep_loss.toml`:

    \b
        ccsim query ccsim-runs/sweep_loss "SELECT cc, loss, avg(throughput_mbps) FROM runs GROUP BY ALL ORDER BY ALL"
    """
    from . import results

    try:
        import duckdb
    except ImportError:  # a dependency of ccsim; missing only from a broken installation
        raise UserError("ccsim query needs DuckDB: pip install duckdb") from None
    try:
        df = results.query(directory, sql)
    except (FileNotFoundError, NotADirectoryError) as exc:
        raise UserError(str(exc)) from None
    except duckdb.Error as exc:
        raise UserError(f"query failed: {_sql_error(exc)}") from None
    if fmt == "csv":
        click.echo(df.to_csv(index=False), nl=False)
        return
    if fmt == "json":
        click.echo(df.to_json(orient="records", date_format="iso"))
        return
    if fmt == "markdown":
        click.echo(_markdown(df), nl=False)
        return
    from rich import box
    from rich.measure import Measurement
    from rich.table import Table

    shown = df.head(max_rows)
    rows = [[_cell(v) for v in row] for row in shown.itertuples(index=False)]
    names = [str(c) for c in df.columns]
    table = Table(box=box.SIMPLE_HEAD, show_edge=False)
    numeric = [df[c].dtype.kind in "iufb" for c in df.columns]
    for name, num in zip(names, numeric):
        table.add_column(name, justify="right" if num else "left", no_wrap=True)
    for cells in rows:
        table.add_row(*cells)
    console = _console()
    natural = Measurement.get(console, console.options.update_width(1_000_000), table).maximum
    columns = os.environ.get("COLUMNS", "")
    width = int(columns) if columns.isdigit() and int(columns) > 0 else console.width
    if natural <= width:
        console.print(table)
    else:  # too wide for the terminal: one block per row, every name and value in full
        click.echo(_records(names, rows), nl=False)
    more = len(df) - max_rows
    note = f"{len(df)} row{'s' if len(df) != 1 else ''}"
    if more > 0:
        note += f" ({more} not shown; use --max-rows or --format csv)"
    click.echo(note)


def _records(names: list[str], rows: list[list[str]]) -> str:
    """Rows as blocks of ``column: value`` lines (for results wider than the terminal)."""
    width = max((len(n) for n in names), default=0) + 1
    out = []
    for i, cells in enumerate(rows, 1):
        out.append(f"-- row {i} --")
        out += [f"{name + ':':<{width}} {cell}" for name, cell in zip(names, cells)]
    return "\n".join(out) + "\n" if out else ""


def _markdown(df: Any) -> str:
    """A Markdown table (GitHub style) of every row."""
    def esc(text: str) -> str:
        return " ".join(text.splitlines()).replace("|", "\\|")

    names = [esc(str(c)) for c in df.columns]
    align = ["---:" if df[c].dtype.kind in "iufb" else "---" for c in df.columns]
    lines = ["| " + " | ".join(names) + " |", "|" + "|".join(align) + "|"]
    for row in df.itertuples(index=False):
        lines.append("| " + " | ".join(esc(_cell(v)) for v in row) + " |")
    return "\n".join(lines) + "\n"


def _cell(value: Any) -> str:
    if value is None:
        return "NULL"
    try:
        import pandas as pd

        if pd.isna(value):
            return "NULL"
    except (TypeError, ValueError):
        pass
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, str) and not value:
        return '""'
    return str(value)


def _sql_error(exc: BaseException) -> str:
    """DuckDB's message without the LINE/caret context lines."""
    lines = [ln.strip() for ln in str(exc).splitlines()]
    kept = [ln for ln in lines if ln and not ln.startswith("LINE ") and set(ln) != {"^"}]
    return " ".join(kept) or type(exc).__name__

from .cli_reproduce import reproduce_cmd  # noqa: E402

cli.add_command(reproduce_cmd)


def main(argv: Sequence[str] | None = None) -> NoReturn:
    """Entry point of the ``ccsim`` console script."""
    cli.main(args=list(argv) if argv is not None else None, prog_name="ccsim")
    sys.exit(0)  # pragma: no cover - cli.main always exits


if __name__ == "__main__":  # pragma: no cover
    main()
