"""`ccsim reproduce`: regenerate the seed papers' figures and check their claims."""

from __future__ import annotations

import click


def _table(rep):
    from rich.table import Table
    from rich.text import Text

    t = Table(title="claims")
    t.add_column("experiment", no_wrap=True)
    t.add_column("claim", no_wrap=True)
    t.add_column("status", no_wrap=True)
    t.add_column("measured")
    for c in rep.claims:
        style = {"PASS": "green", "FAIL": "red", "ERROR": "bold red"}[c.status]
        t.add_row(c.experiment, c.claim, Text(c.status, style=style), Text(c.measured))
    return t


def _cf_table(rep):
    """The counterfactuals' outcomes, one row per (claim, counterfactual); None if none ran."""
    from rich.table import Table
    from rich.text import Text

    rows = [(o.experiment.id, r) for o in rep.outcomes for r in o.counterfactuals]
    if not rows:
        return None
    t = Table(title="counterfactuals (one suspected cause changed; the entries keep the paper's set-up)")
    t.add_column("experiment", no_wrap=True)
    t.add_column("claim", no_wrap=True)
    t.add_column("counterfactual", no_wrap=True)
    t.add_column("kind", no_wrap=True)
    t.add_column("outcome")
    for e, r in rows:
        style = {"PASS": "green", "FAIL": "red", "UNTESTABLE": "yellow"}.get(r.status, "bold red")
        t.add_row(e, r.claim, r.counterfactual.id, r.counterfactual.kind, Text(r.outcome, style=style))
    return t


@click.command("reproduce")
@click.argument("ids", nargs=-1)
@click.option("--all", "all_", is_flag=True, help="Every experiment of the catalogue.")
@click.option("--list", "list_", is_flag=True, help="List the experiments and exit.")
@click.option("--quick", is_flag=True, help="Reduced durations and repetitions: a first look, not the paper's set-up.")
@click.option("--runs", type=click.IntRange(min=1), help="Repetitions per point (default: the paper's).")
@click.option("--jobs", type=click.IntRange(min=1), help="Parallel runs (default: the number of cores).")
@click.option("--out", type=click.Path(file_okay=False), default="ccsim-reproduce", show_default=True)
@click.option("--backend", type=click.Choice(["local", "ray"]), default="local", show_default=True)
@click.option("--address", help="Ray cluster address (default: start a local one).")
@click.option("--force", is_flag=True, help="Rerun runs that are already stored.")
@click.option("--replace", "replace", multiple=True, metavar="OLD=NEW",
              help="Run algorithm NEW (a built-in, or file.py:Class relative to the working directory) wherever "
                   "the entries run OLD, and check OLD's claims on it. Repeatable. Runs no counterfactuals.")
@click.option("--no-counterfactuals", "no_cf", is_flag=True,
              help="Skip the counterfactuals (each entry's variants that change one suspected cause of a failing claim).")
def reproduce_cmd(ids, all_, list_, quick, runs, jobs, out, backend, address, force, replace, no_cf):
    """Run seed experiments (IDS, or --all), draw their figures and check the papers' claims.

    Writes runs as Parquet (partitioned by experiment), figures (PNG, SVG) and report.md /
    report.html to --out. A claim that fails is reported, not an error: the exit status is
    non-zero only when something could not be run.
    """
    # The catalogue pulls in pandas and matplotlib: imported here, not when the CLI starts,
    # so that `ccsim run` stays quick.
    from .cli import UserError, _console
    from .experiments import CATALOGUE, reproduce as run_reproduce

    console = _console()
    if list_:
        from rich.table import Table

        t = Table(title="seed experiments (ccsim reproduce ID)")
        t.add_column("id", no_wrap=True)
        t.add_column("figure")
        t.add_column("source")
        t.add_column("runs (full / quick)", justify="right")
        t.add_column("counterfactuals")
        for e in CATALOGUE:
            n = "shares " + e.runs_from if e.runs_from else f"{len(e.specs())} / {len(e.specs(quick=True))}"
            t.add_row(e.id, e.title, e.source, n, ", ".join(cf.id for cf in e.counterfactuals))
        console.print(t)
        return
    if all_:
        ids = [e.id for e in CATALOGUE]
    if not ids:
        raise UserError("name experiments to reproduce, or --all (ccsim reproduce --list shows them)")
    from .experiments.reproduction import check_replace, check_runs, derived_entries, resolve

    pairs = {}
    for r in replace:
        old, sep, new = r.partition("=")
        if not sep or not old or not new:
            raise UserError(f"--replace: expected OLD=NEW (e.g. bbr=mybbr.py:MyBbr); got {r!r}")
        pairs[old] = new
    try:
        entries = resolve(list(ids))
        extra = list(derived_entries(entries).values()) if not (no_cf or pairs) else []
        check_runs([*entries, *extra], quick=quick, runs=runs)
        check_replace(pairs, entries)
    except (KeyError, ValueError) as exc:
        raise UserError(str(exc.args[0])) from None
    try:
        rep = run_reproduce(
            ids, out=out, quick=quick, runs=runs, jobs=jobs, backend=backend, address=address, force=force, progress=True,
            replace=pairs, counterfactuals=not no_cf,
        )
    except KeyError as exc:
        raise UserError(str(exc.args[0])) from None
    console.print(_table(rep))
    cf = _cf_table(rep)
    if cf is not None:
        console.print(cf)
    for line in rep.store_notes:
        console.print(line, soft_wrap=True)
    console.print(
        f"{rep.claims_text()}; {rep.causes_text() + '; ' if rep.causes_text() else ''}"
        f"report: {rep.out / 'report.md'} and report.html; "
        f"figures in {rep.out / 'figures'}; {rep.elapsed:.1f} s"
    )
    errors = [o for o in rep.outcomes if o.error]
    if rep.failed_runs or errors:
        first = rep.failed_runs[0][1] if rep.failed_runs else errors[0].error
        raise click.ClickException(
            f"{len(rep.failed_runs)} run(s) failed and {len(errors)} experiment(s) could not be completed; first: {first}"
        )
