"""`ccsim reproduce`: run catalogue entries, then draw their figures, check their claims and
write the report."""

from __future__ import annotations

import copy
import dataclasses
import html
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

from .. import results, store_check, sweep
from . import figures
from ..scenario import int_text
from ..sweep import MAX_RUNS
from ..sweep import table as sweep_table
from .catalogue import BY_ID, CATALOGUE, Experiment
from .claims import ClaimResult, Data, evaluate
from .counterfactuals import KINDS, Counterfactual, derive, derived_id, outcome_text


def resolve(ids: Sequence[str]) -> list[Experiment]:
    """The entries to run for `ids`, with what they depend on, in catalogue order."""
    unknown = [i for i in ids if i not in BY_ID]
    if unknown:
        name = unknown[0] if len(unknown[0]) <= 60 else unknown[0][:40] + f"... ({len(unknown[0])} characters)"
        raise KeyError(
            f"unknown experiment {name!r}; accepted: {', '.join(e.id for e in CATALOGUE)} (or --all)"
        )
    want: set[str] = set()
    stack = list(ids)
    while stack:
        e = BY_ID[stack.pop()]
        if e.id in want:
            continue
        want.add(e.id)
        stack.extend(e.needs)
        if e.runs_from:
            stack.append(e.runs_from)
    return [e for e in CATALOGUE if e.id in want]


def derived_entries(entries: Sequence[Experiment]) -> dict[str, Experiment]:
    """The counterfactual entries of ``entries`` (:mod:`.counterfactuals`), by id."""
    out: dict[str, Experiment] = {}
    for e in entries:
        for cf in e.counterfactuals:
            if not cf.untestable:
                d = derive(e, cf, BY_ID)
                out[d.id] = d
    return out


def check_runs(entries: Sequence[Experiment], *, quick: bool, runs: int | None) -> None:
    """ValueError if the entries would expand to more than MAX_RUNS runs (checked
    before any run spec is made: a huge ``runs`` would otherwise take all memory)."""
    total = 0
    for e in entries:
        if e.runs_from:
            continue
        v = e.quick if quick else e.full
        total += sweep_table.combinations(v.sweep) * (runs if runs is not None else v.runs)
    if total > MAX_RUNS:
        raise ValueError(f"--runs: {int_text(runs or 0)} runs per point make {int_text(total)} runs; "
                         f"accepted: at most {MAX_RUNS} runs")


@dataclass
class ExperimentOutcome:
    experiment: Experiment
    runs: int
    sim_seconds: float  # summed simulation wall time of its runs (the engine's own loop)
    figure: Path | None
    claims: list[ClaimResult]
    error: str = ""
    #: The spread of the repeated runs per point: the swept columns, then rows of
    #: (values of those columns, runs, mean total Mbps, sd, 95 % CI half-width).
    spread_columns: list[str] = field(default_factory=list)
    spread_rows: list[tuple] = field(default_factory=list)
    counterfactuals: list["CounterfactualResult"] = field(default_factory=list)


@dataclass
class CounterfactualResult:
    """One claim checked again under one counterfactual."""

    experiment: str
    claim: str
    counterfactual: Counterfactual
    status: str  # "PASS" (holds when), "FAIL" (still fails when), "UNTESTABLE" or "ERROR"
    measured: str
    runs: int = 0
    spread_columns: list[str] = field(default_factory=list)
    spread_rows: list[tuple] = field(default_factory=list)

    @property
    def outcome(self) -> str:
        return outcome_text(self.status, self.counterfactual)


@dataclass
class ReproduceReport:
    outcomes: list[ExperimentOutcome] = field(default_factory=list)
    failed_runs: list[tuple[str, str]] = field(default_factory=list)
    #: Lines about stored runs found damaged or of an older model version (moved aside).
    store_notes: list[str] = field(default_factory=list)
    elapsed: float = 0.0
    out: Path | None = None
    #: Algorithms run in place of the catalogue's ({catalogue's: run}).
    replaced: dict[str, str] = field(default_factory=dict)

    @property
    def claims(self) -> list[ClaimResult]:
        return [c for o in self.outcomes for c in o.claims]

    def causes(self) -> dict[str, list[ClaimResult]]:
        """The seed claims that do not hold, by what their counterfactuals showed: "outside"
        (one holds when a cause outside ccsim is changed: a reading of the paper, its set-up or
        its test bed), "inside" (only when a cause in ccsim's model is changed), "untestable"
        (none that ran holds, and a suspected cause cannot be tested here) and "unexplained"
        (none holds, or none was run)."""
        out: dict[str, list[ClaimResult]] = {"outside": [], "inside": [], "untestable": [], "unexplained": []}
        for o in self.outcomes:
            if o.experiment.beyond_seeds:
                continue
            for c in o.claims:
                if c.status == "PASS":
                    continue
                mine = [r for r in o.counterfactuals if r.claim == c.claim]
                held = {r.counterfactual.kind for r in mine if r.status == "PASS"}
                untestable = any(r.status == "UNTESTABLE" for r in mine)
                out["outside" if held - {"ccsim"} else "inside" if held else "untestable" if untestable
                    else "unexplained"].append(c)
        return out

    def causes_text(self) -> str:
        """"of the 10 that do not hold, 4 hold when ...", or "" when every claim holds or no
        counterfactual ran."""
        if not any(o.counterfactuals for o in self.outcomes):
            return ""
        c = self.causes()
        n = sum(len(v) for v in c.values())
        if n == 0:
            return ""
        return (f"of the {n} seed claims that do not hold, {len(c['outside'])} fail for a demonstrated cause outside "
                f"ccsim, {len(c['inside'])} for a demonstrated cause in ccsim, {len(c['untestable'])} for a suspected "
                f"cause that cannot be tested here, {len(c['unexplained'])} are unexplained")

    def claims_text(self) -> str:
        """"19 of 29 seed claims hold", and for the comparisons beyond the seeds (BBRv3, ...)
        how many of their questions are answered yes."""
        seed = [c for o in self.outcomes if not o.experiment.beyond_seeds for c in o.claims]
        beyond = [c for o in self.outcomes if o.experiment.beyond_seeds for c in o.claims]
        parts = []
        if seed or not beyond:
            parts.append(f"{sum(c.status == 'PASS' for c in seed)} of {len(seed)} seed claims hold")
        if beyond:
            parts.append(f"beyond the seeds, {sum(c.status == 'PASS' for c in beyond)} of {len(beyond)} "
                         "questions answered yes")
        return "; ".join(parts)


def replace_algorithms(specs: list[sweep.RunSpec], replace: Mapping[str, str]) -> list[sweep.RunSpec]:
    """The runs with each flow whose algorithm is a key of ``replace`` running the value instead
    (the scenario, so the run's key, changes; the tags keep the catalogue's names, so that the
    claims and figures find their points)."""
    if not replace:
        return specs
    out = []
    for s in specs:
        scenario = copy.deepcopy(s.scenario)
        for f in scenario.get("flows", []):
            if isinstance(f, dict) and f.get("cc") in replace:
                f["cc"] = replace[f["cc"]]
        out.append(dataclasses.replace(s, scenario=scenario))
    return out


def _counterfactual_results(e: Experiment, derived: Mapping[str, Experiment], data: Mapping[str, Data],
                            specs_by: Mapping[str, list[sweep.RunSpec]]) -> list[CounterfactualResult]:
    out = []
    for cf in e.counterfactuals:
        if cf.untestable:
            out += [CounterfactualResult(e.id, c, cf, "UNTESTABLE", "") for c in cf.claims]
            continue
        x = derived[derived_id(e.id, cf)]
        d = data[x.id]
        # The checks name the entries they compare with; under the change they read their variants.
        d.others = {n: data[m] for n, m in zip(e.needs, x.needs)}
        specs = specs_by[x.data_id]
        columns = [t for t in (specs[0].tags if specs else {}) if t not in ("run", "seed")]
        # A change of reading only reads the entry's own runs: their spread is the entry's.
        rows = _spread_rows(d, columns) if cf.makes_runs and not d.runs.empty else []
        for c in x.claims:
            if d.runs.empty:
                out.append(CounterfactualResult(e.id, c.id, cf, "ERROR", "no successful runs"))
                continue
            r = evaluate(x.id, c, d)
            out.append(CounterfactualResult(e.id, c.id, cf, r.status, r.measured, int(d.runs["key"].nunique()),
                                            columns, rows))
    return out


def _data(e: Experiment, keys: set[str], out: Path, timeseries: bool,
          replace: Mapping[str, str] | None = None, cache: dict | None = None) -> Data:
    """The rows of ``e``'s runs. Entries that read the same runs (an entry and its reading-only
    counterfactuals, e4-model and e4-exp2) read them once through ``cache``; each gets its own
    copy of the frames."""
    loaded = None if cache is None else cache.get(e.data_id)
    if loaded is None:
        runs = results.load(out, e.data_id, keys=sorted(keys)).reset_index(drop=True)
        ts = None
        if timeseries:
            ts = results.load_timeseries(out, e.data_id, keys=sorted(keys)).reset_index(drop=True)
        loaded = (runs, ts)
        if cache is not None:
            cache[e.data_id] = loaded
    runs, ts = (None if df is None else df.copy() for df in loaded)
    ev = None
    if replace:
        # The replacement plays the catalogue algorithm's role: its rows carry that name.
        back = {new: old for old, new in replace.items()}
        for df in (runs, ts, ev):
            if df is not None:
                for col in ("cc", "flow_cc"):
                    if col in df.columns:
                        df[col] = df[col].replace(back)
    return Data(runs=runs, timeseries=ts, cc_events=ev)


def reproduce(
    ids: Sequence[str],
    *,
    out: str | Path = "ccsim-reproduce",
    quick: bool = False,
    runs: int | None = None,
    jobs: int | None = None,
    backend: str = "local",
    address: str | None = None,
    force: bool = False,
    progress: bool = True,
    replace: Mapping[str, str] | None = None,
    counterfactuals: bool = True,
) -> ReproduceReport:
    """Run catalogue entries (and what they need), draw their figures, check their claims and
    write the report. ``replace`` ({catalogue algorithm: algorithm}) runs another algorithm (a
    built-in, a registered Python one or a ``file.py:Class`` reference, relative to the working
    directory) wherever an entry runs the catalogue's: its claims are then checked on it.
    ``counterfactuals`` also runs each entry's counterfactuals (:mod:`.counterfactuals`) and
    reports them next to the claims they test; they are about the catalogue's algorithms, so
    they are not run with ``replace``."""
    t0 = time.perf_counter()
    out = Path(out)
    entries = resolve(list(ids))  # validates the ids first
    replace = check_replace(replace or {}, entries)
    derived = derived_entries(entries) if counterfactuals and not replace else {}
    check_runs([*entries, *derived.values()], quick=quick, runs=runs)
    lookup = {**BY_ID, **derived}
    requested = [BY_ID[i] for i in dict.fromkeys(ids)]
    specs_by: dict[str, list[sweep.RunSpec]] = {
        e.id: replace_algorithms(e.specs(quick=quick, runs=runs), replace) for e in [*entries, *derived.values()]}
    all_specs = [s for specs in specs_by.values() for s in specs]
    ex = sweep.execute(
        all_specs, out, jobs=jobs, backend=backend, address=address, force=force, progress=progress,
        description="reproducing " + ", ".join(e.id for e in requested),
    )
    rep = ReproduceReport(out=out)
    rep.failed_runs = [(s.experiment, msg) for s, msg in ex.failed]
    rep.store_notes = store_check.summary_lines(ex)
    data: dict[str, Data] = {}
    frames: dict = {}
    for e in [*entries, *derived.values()]:
        keys = {s.key for s in specs_by[e.data_id]}
        data[e.id] = _data(e, keys, out, lookup[e.data_id].timeseries, replace, frames)
    for e in requested:
        d = data[e.id]
        d.others = {n: data[n] for n in e.needs}
        outcome = ExperimentOutcome(e, int(d.runs["key"].nunique()), float(d.runs.drop_duplicates("key")["wall_seconds"].sum()), None, [])
        if d.runs.empty:
            outcome.error = "no successful runs"
        else:
            stem = out / "figures" / e.id
            figures.REPLACED.update({old: f"{new} (as {figures.NAMES.get(old, old)})" for old, new in replace.items()})
            try:
                e.plot(d, stem)
                outcome.figure = stem.with_suffix(".png")
            except Exception as exc:  # a figure that cannot be drawn is reported
                outcome.error = f"figure: {type(exc).__name__}: {exc}"
            finally:
                figures.REPLACED.clear()
            outcome.claims = [evaluate(e.id, c, d) for c in e.claims]
            specs = specs_by[e.data_id]
            outcome.spread_columns = [t for t in (specs[0].tags if specs else {}) if t not in ("run", "seed")]
            outcome.spread_rows = _spread_rows(d, outcome.spread_columns)
        if counterfactuals and not replace and e.counterfactuals:
            outcome.counterfactuals = _counterfactual_results(e, derived, data, specs_by)
        rep.outcomes.append(outcome)
    rep.elapsed = time.perf_counter() - t0
    rep.replaced = dict(replace)
    write_report(rep, quick=quick)
    return rep


def check_replace(replace: Mapping[str, str], entries: Sequence[Experiment]) -> dict[str, str]:
    """``replace`` checked: each key an algorithm the entries run, each value an algorithm
    (a ``file.py:Class`` reference is registered here). ValueError with one line otherwise."""
    from .. import cc as pycc
    from ..scenario import ScenarioError, algorithms

    used = sorted({f.get("cc") for e in entries for s in e.specs(quick=True)
                   for f in s.scenario.get("flows", []) if isinstance(f, dict)} - {None})
    for old, new in replace.items():
        if old not in used:
            raise ValueError(f"--replace {old}={new}: the entries run no {old!r}; they run: {', '.join(used)}")
        if pycc.FILE_REF.match(new):
            try:
                pycc.load_reference(new, Path.cwd())
            except ScenarioError as exc:
                raise ValueError(f"--replace {old}={new}: {exc}") from None
        if new not in {a["name"] for a in algorithms()}:
            raise ValueError(f"--replace {old}={new}: unknown algorithm {new!r}; accepted: an algorithm of "
                             "`ccsim algorithms`, a registered one or file.py:Class")
    return dict(replace)


def _spread_rows(d: Data, columns: list[str]) -> list[tuple]:
    """Per point (the swept columns' values): runs, mean total throughput, its sample standard
    deviation and the half-width of its 95 % confidence interval (ccsim.stats)."""
    from ..stats import spread

    per_run = d.runs.drop_duplicates("key")
    cols = [c for c in columns if c in per_run.columns]
    groups = per_run.groupby(cols, sort=True, dropna=False) if cols else [((), per_run)]
    rows = []
    for values, g in groups:
        s = spread(g["total_throughput_mbps"])
        rows.append((values if isinstance(values, tuple) else (values,), s.n, s.mean, s.sd, s.half_width))
    return rows


def _spread_md(o: "ExperimentOutcome | CounterfactualResult") -> list[str]:
    if not o.spread_rows or max(r[1] for r in o.spread_rows) < 2:
        return []
    cols = o.spread_columns or ["point"]
    md = ["", "Spread over the repetitions (total throughput; 95 % CI: half-width of the confidence interval of the "
              "mean, Student's t):", "",
          "| " + " | ".join(cols) + " | runs | mean Mbps | sd | 95 % CI |",
          "|" + "---|" * len(cols) + "---:|---:|---:|---:|"]
    for values, n, mean, sd, hw in o.spread_rows:
        shown = [str(v) for v in values] if o.spread_columns else ["all"]
        f = lambda x: "-" if x != x else f"{x:.3f}"  # noqa: E731 - NaN for a single run
        md.append(f"| {' | '.join(shown)} | {n} | {mean:.3f} | {f(sd)} | {'-' if hw != hw else '± ' + f(hw)} |")
    return md


def write_report(rep: ReproduceReport, *, quick: bool) -> None:
    out = rep.out
    assert out is not None
    mode = "quick (reduced durations and repetitions: a first look, not the paper's set-up)" if quick else "full"
    claims_text = rep.claims_text()
    if rep.causes_text():
        claims_text += "; " + rep.causes_text()
    cf_rows = [(o, c, r) for o in rep.outcomes for c in o.claims for r in o.counterfactuals if r.claim == c.claim]
    md = [
        "# ccsim reproduction report",
        "",
        f"Mode: {mode}. Claims: {claims_text}. Wall time: {rep.elapsed:.1f} s.",
        "",
        *([f"Algorithms replaced: {', '.join(f'{o} by {n}' for o, n in rep.replaced.items())}. Wherever an entry "
           "runs the first, the second ran; claims, figures and tables name the catalogue's algorithm and are "
           "checked on its replacement.", ""] if rep.replaced else []),
        "A claim that does not hold is reported as not holding, with the likely reason; the models were not tuned "
        "to make claims pass. Each experiment below names its paper (authors and title) under Source. Entries "
        "marked \"beyond the seeds\" rerun a seed's set-up with an algorithm the seeds could not run; their "
        "claims are ccsim's questions, answered yes (PASS) or no (FAIL) with the numbers.",
        "",
        "| experiment | claim | status | measured |",
        "|---|---|---|---|",
    ]
    for c in rep.claims:
        md.append(f"| {c.experiment} | {c.claim} | **{c.status}** | {c.measured} |")
    if cf_rows:
        md += ["", "## Counterfactuals", "",
               "Each changes one suspected cause of a claim that does not hold (or a combination, where named) and "
               "checks the claim again with the entry's repetitions; the entry itself keeps the paper's set-up. "
               "Kinds: " + "; ".join(f"{k}: {v}" for k, v in KINDS.items()) + ".", "",
               "| experiment | claim | as stated | counterfactual | kind | outcome | measured |",
               "|---|---|---|---|---|---|---|"]
        for o, c, r in cf_rows:
            md.append(f"| {c.experiment} | {c.claim} | {c.status} | {r.counterfactual.id} | {r.counterfactual.kind} | "
                      f"**{r.outcome}** | {r.measured or '-'} |")
    if rep.failed_runs:
        md += ["", "## Failed runs", ""] + [f"- {e}: {m}" for e, m in rep.failed_runs]
    for o in rep.outcomes:
        e = o.experiment
        md += ["", f"## {e.id}: {e.title}", "", f"Source: {e.source}.", "", f"Set-up: {e.setup}", ""]
        md.append(f"Runs: {o.runs}; simulation time {o.sim_seconds:.2f} s.")
        if o.error:
            md += ["", f"Error: {o.error}"]
        if o.figure:
            md += ["", f"![{e.id}](figures/{e.id}.png)"]
        md += _spread_md(o)
        for c in o.claims:
            md += ["", f"- **{c.status}** ({c.claim}): {c.text}", f"  - measured: {c.measured}"]
            if c.reason:
                md.append(f"  - likely reason: {c.reason}")
            for r in o.counterfactuals:
                if r.claim == c.claim:
                    md.append(f"  - counterfactual `{r.counterfactual.id}` ({r.counterfactual.kind}): **{r.outcome}**"
                              + (f"; {r.measured}" if r.measured else "") + (f" ({r.runs} runs)" if r.runs else ""))
                    if r.counterfactual.note:
                        md.append(f"    - {r.counterfactual.note}")
        shown: set[str] = set()
        for r in o.counterfactuals:
            if r.counterfactual.id in shown or not r.spread_rows:
                continue
            shown.add(r.counterfactual.id)
            spread = _spread_md(r)
            if spread:
                md += ["", f"Counterfactual `{r.counterfactual.id}` ({r.counterfactual.change}):"] + spread
    (out / "report.md").write_text("\n".join(md) + "\n", encoding="utf-8")

    def esc(s: str) -> str:
        return html.escape(str(s))

    rows = "\n".join(
        f"<tr class='{c.status.lower()}'><td>{esc(c.experiment)}</td><td>{esc(c.claim)}</td><td>{esc(c.status)}</td>"
        f"<td>{esc(c.measured)}</td><td>{esc(c.reason)}</td></tr>"
        for c in rep.claims
    )
    sections = []
    for o in rep.outcomes:
        e = o.experiment
        claims = "".join(
            f"<li><b class='{c.status.lower()}'>{esc(c.status)}</b> {esc(c.text)}<br>measured: {esc(c.measured)}"
            + (f"<br><i>likely reason: {esc(c.reason)}</i>" if c.reason else "")
            + "".join(f"<br>counterfactual <code>{esc(r.counterfactual.id)}</code> ({esc(r.counterfactual.kind)}): "
                      f"<b>{esc(r.outcome)}</b>" + (f"; {esc(r.measured)}" if r.measured else "")
                      + (f" <i>{esc(r.counterfactual.note)}</i>" if r.counterfactual.note else "")
                      for r in o.counterfactuals if r.claim == c.claim)
            + "</li>"
            for c in o.claims
        )
        img = f"<img src='figures/{esc(e.id)}.png' alt='{esc(e.id)}'>" if o.figure else ""
        spread = _spread_md(o)
        if spread:
            head = [c.strip() for c in spread[3].strip("|").split("|")]
            body = "".join("<tr>" + "".join(f"<td>{esc(c.strip())}</td>" for c in line.strip("|").split("|")) + "</tr>"
                           for line in spread[5:])
            img += (f"<p>{esc(spread[1])}</p><table><tr>" + "".join(f"<th>{esc(h)}</th>" for h in head)
                    + f"</tr>{body}</table>")
        err = f"<p class='fail'>Error: {esc(o.error)}</p>" if o.error else ""
        sections.append(
            f"<section><h2>{esc(e.id)}: {esc(e.title)}</h2><p>Source: {esc(e.source)}.</p><p>Set-up: {esc(e.setup)}</p>"
            f"<p>Runs: {o.runs}; simulation time {o.sim_seconds:.2f} s.</p>{err}{img}<ul>{claims}</ul></section>"
        )
    cf_table = ""
    if cf_rows:
        cf_table = ("<h2>Counterfactuals</h2><p>Each changes one suspected cause of a claim that does not hold and checks "
                    "the claim again with the entry's repetitions; the entry itself keeps the paper's set-up.</p><table><tr>"
                    "<th>experiment</th><th>claim</th><th>as stated</th><th>counterfactual</th><th>kind</th><th>outcome</th>"
                    "<th>measured</th></tr>" + "".join(
                        f"<tr class='{r.status.lower()}'><td>{esc(c.experiment)}</td><td>{esc(c.claim)}</td>"
                        f"<td>{esc(c.status)}</td><td>{esc(r.counterfactual.id)}</td><td>{esc(r.counterfactual.kind)}</td>"
                        f"<td>{esc(r.outcome)}</td><td>{esc(r.measured)}</td></tr>" for o, c, r in cf_rows) + "</table>")
    page = f"""<!doctype html><html><head><meta charset='utf-8'><title>ccsim reproduction report</title>
<style>body{{font-family:sans-serif;max-width:1100px;margin:2em auto}}td,th{{border:1px solid #ccc;padding:4px;vertical-align:top}}
table{{border-collapse:collapse}}.pass{{color:#070}}.fail,.error{{color:#b00}}img{{max-width:100%}}</style></head><body>
<h1>ccsim reproduction report</h1><p>Mode: {esc(mode)}. Claims: {esc(claims_text)}. Wall time: {rep.elapsed:.1f} s.</p>
<table><tr><th>experiment</th><th>claim</th><th>status</th><th>measured</th><th>likely reason (if not)</th></tr>{rows}</table>
{cf_table}{''.join(sections)}</body></html>"""
    (out / "report.html").write_text(page, encoding="utf-8")
