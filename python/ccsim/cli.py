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
import sys
from pathlib import Path
from typing import Any, NoReturn, Sequence

import click

from . import __version__, _core
from .result import Result, run as run_scenario
from .scenario import ScenarioError, algorithms as list_algorithms

#: Exit status for invalid input (bad scenario, missing file, bad option).
EXIT_USAGE = 2
#: Exit status for unexpected internal errors.
EXIT_INTERNAL = 1

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
        except ScenarioError as exc:
            _fail(str(exc), EXIT_USAGE)
        except click.ClickException as exc:
            # Usage errors, bad option values, UserError: one line, status 2.
            _fail(exc.format_message(), EXIT_USAGE)
        except click.exceptions.Abort:
            # click turns Ctrl-C (KeyboardInterrupt) into Abort.
            _fail("interrupted", 130)
        except BrokenPipeError:
            # Output piped into e.g. `head`: not an error worth reporting.
            _silence_stdout()
            sys.exit(EXIT_INTERNAL)
        except KeyboardInterrupt:
            _fail("interrupted", 130)
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
    version=__version__, prog_name="ccsim", message="%(prog)s %(version)s"
)
def cli() -> None:
    """ccsim: fast packet-level TCP congestion-control simulator."""


@cli.command("run")
@click.argument("file", metavar="FILE.toml", type=click.Path(dir_okay=True, path_type=Path))
@click.option("--seed", type=int, default=None, metavar="N",
              help="Random seed; overrides the scenario's seed.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              default=None, metavar="DIR",
              help=f"Write summary.json, flows.parquet, timeseries.parquet, cc_events.parquet and {PLOT_FILENAME}.")
@click.option("--json", "as_json", is_flag=True,
              help="Print the run summary as one JSON object on stdout.")
def run_cmd(file: Path, seed: int | None, out_dir: Path | None, as_json: bool) -> None:
    """Run the scenario in FILE.toml and print a summary."""
    result = run_scenario(file, seed=seed)

    written: Path | None = None
    if out_dir is not None:
        written = _write_outputs(result, out_dir)

    if as_json:
        click.echo(json.dumps(result.to_dict()))
        if written is not None:
            click.echo(f"wrote results to {written}", err=True)
        return

    _print_summary(result)
    if written is not None:
        click.echo(
            f"wrote summary.json, flows.parquet, timeseries.parquet, cc_events.parquet and {PLOT_FILENAME} "
            f"to {written}"
        )


def _write_outputs(result: Result, out_dir: Path) -> Path:
    try:
        out = result.to_parquet(out_dir)
        result.plot(out / PLOT_FILENAME)
    except OSError as exc:
        target = exc.filename or out_dir
        raise UserError(f"cannot write results to {target}: {exc.strerror or exc}") from None
    return out


@cli.command("algorithms")
@click.argument("name", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def algorithms_cmd(name: str | None, as_json: bool) -> None:
    """List the congestion-control algorithms, or show one (NAME) with every parameter."""
    algos = list_algorithms()
    if name is not None:
        found = [a for a in algos if a.get("name") == name]
        if not found:
            accepted = ", ".join(str(a.get("name")) for a in algos)
            raise UserError(f"unknown algorithm {name!r}; accepted: {accepted}")
        algos = found
    if as_json:
        click.echo(json.dumps(algos[0] if name is not None else algos, indent=2))
        return
    from rich.table import Table

    console = _console()
    if name is None:
        table = Table(title="congestion-control algorithms (ccsim algorithms NAME for parameters)")
        table.add_column("name", style="bold", no_wrap=True)
        table.add_column("summary")
        table.add_column("follows")
        table.add_column("parameters")
        for algo in algos:
            names = ", ".join(str(p.get("name")) for p in algo.get("params", []) or []) or "-"
            table.add_row(str(algo.get("name")), str(algo.get("summary")), str(algo.get("source")), names)
        console.print(table)
        return
    algo = algos[0]
    console.print(f"[bold]{algo.get('name')}[/bold]: {algo.get('summary')}")
    console.print(f"follows: {algo.get('source')}")
    table = Table(title=f"parameters of {algo.get('name')} (set per flow: params = {{ name = value }})")
    table.add_column("parameter", style="bold", no_wrap=True)
    table.add_column("default", justify="right")
    table.add_column("unit")
    table.add_column("accepted")
    table.add_column("meaning and source")
    for p in algo.get("params", []) or []:
        table.add_row(
            str(p.get("name")),
            _fmt_value(p.get("default")),
            str(p.get("unit", "")),
            _fmt_value(p.get("range")),
            str(p.get("doc", "")),
        )
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

    d = result.to_dict()
    table = Table(box=box.SIMPLE_HEAD, show_edge=False)
    table.add_column("flow", justify="right", no_wrap=True)
    table.add_column("algorithm", no_wrap=True)
    table.add_column("throughput\nMbps", justify="right", no_wrap=True)
    table.add_column("retransmits", justify="right", no_wrap=True)
    table.add_column("RTT mean\nms", justify="right", no_wrap=True)
    table.add_column("RTT p95\nms", justify="right", no_wrap=True)
    table.add_column("final cwnd\npkts", justify="right", no_wrap=True)
    for f in d.get("flows", []):
        table.add_row(
            str(f.get("id", "")),
            str(f.get("cc", "")),
            _num(f.get("throughput_mbps"), ".3f"),
            _num(f.get("retransmits"), ","),
            _num(f.get("rtt_mean_ms"), ".1f"),
            _num(f.get("rtt_p95_ms"), ".1f"),
            _num(f.get("cwnd_final_pkts"), ",.0f"),
        )
    console = _console()
    console.print(_title(result, d), soft_wrap=True)
    console.print(table)
    bn = d.get("bottleneck", {}) or {}
    util = bn.get("utilization")
    util_s = "-" if not isinstance(util, (int, float)) else f"{100 * util:.1f}%"
    console.print(
        f"total {_num(d.get('total_throughput_mbps'), '.3f')} Mbps | "
        f"Jain index {_num(d.get('jain_index'), '.4f')} | "
        f"bottleneck utilization {util_s} | "
        f"drops {_num(bn.get('drops'), ',')} | "
        f"events {_num(d.get('events'), ',')} | "
        f"simulated {_num(d.get('sim_seconds'), '.3f')} s | "
        f"wall {_num(d.get('wall_seconds'), '.3f')} s",
        soft_wrap=True,
    )


def _title(result: Result, d: dict[str, Any]) -> str:
    src = result.scenario.source if result.scenario is not None else None
    name = str(src) if src is not None else "scenario"
    return f"{name}: seed {d.get('seed')}, {_num(d.get('sim_seconds'), 'g')} s simulated"


def main(argv: Sequence[str] | None = None) -> NoReturn:
    """Entry point of the ``ccsim`` console script."""
    cli.main(args=list(argv) if argv is not None else None, prog_name="ccsim")
    sys.exit(0)  # pragma: no cover - cli.main always exits


if __name__ == "__main__":  # pragma: no cover
    main()
