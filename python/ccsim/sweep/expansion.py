"""Expanding a sweep: a base scenario, a sweep table and a number of runs become a list of
:class:`~ccsim.sweep.spec.RunSpec` (:func:`expand`, the cartesian product x seeds, every
combination validated first); reading a sweep file (:func:`load_sweep_file`).

The sweep table's entries and the column name of each swept parameter are in
:mod:`ccsim.sweep.table`.  ``ccsim sweep``, :func:`ccsim.sweep` and the experiment catalogue
(``ccsim reproduce``) all build their runs here.
"""

from __future__ import annotations

import itertools
import json
import operator
from typing import Any, Callable, Mapping, Sequence

from .. import _core, cc, store
from ..scenario import PathLike, Scenario, ScenarioError, _check_depth, _cut, _short_repr, _split_path, int_text
from ..scenario import load as _load_scenario
from . import table as sweep_table
from .spec import RunSpec, _as_seed, _plain

#: The most runs one sweep expands to (combinations x runs).
MAX_RUNS = 1_000_000

def expand(
    base: Scenario | Mapping[str, Any],
    sweep: Mapping[str, Sequence[Any]],
    runs: int = 1,
    *,
    experiment: str,
    seed0: int | None = None,
    timeseries: bool = False,
) -> list[RunSpec]:
    """The cartesian product of ``sweep`` x ``runs`` seeds, as a list of RunSpec.

    ``sweep`` maps dotted parameter paths (``"bottleneck.loss"``, ``"flows.0.cc"``,
    ``"flows.1.params.beta"``) to non-empty lists of values, or column names to
    ``{"path": ..., "values": [...], "format": "{}bdp"}`` (:mod:`ccsim.sweep.table`);
    the product is taken in the order given, the last entry varying fastest, and for
    each combination ``runs`` seeds ``seed0 .. seed0+runs-1`` (``seed0`` defaults to
    the base scenario's seed, else 1).  Tags: ``{column: value}`` for each swept
    parameter (the column names of :func:`ccsim.sweep.table.column_names`:
    ``bottleneck.loss`` -> ``loss``, ``flows.0.cc`` -> ``cc``) plus ``"run"`` (0-based
    index) and ``"seed"``.

    Every distinct combination is validated by the core before anything runs;
    problems raise :class:`ScenarioError` with one line, e.g.
    ``"sweep.bottleneck.loss: expected a non-empty list of values; got 0.01"`` or
    ``"sweep: bottleneck.los: unknown key; ..."``.
    """
    if isinstance(base, Scenario):
        base_sc = base.copy()
    elif isinstance(base, Mapping):
        base_sc = Scenario.from_dict(base)
    else:
        raise TypeError(f"expand: base must be a Scenario or dict; got {type(base).__name__}")
    source = f"{base_sc.source}: " if base_sc.source is not None else ""

    def fail(message: str) -> ScenarioError:
        return ScenarioError(f"{source}{message}")

    try:
        store.check_experiment(experiment)
    except ValueError as exc:
        raise fail(str(exc)) from None
    try:
        n_runs = None if isinstance(runs, bool) else operator.index(runs)
    except TypeError:
        n_runs = None
    if n_runs is None or n_runs < 1:
        raise fail(f"runs: expected a positive integer; got {_short(runs)}")
    if n_runs > MAX_RUNS:
        raise fail(f"runs: {int_text(n_runs)} is out of range; accepted: an integer in [1, {MAX_RUNS}]")
    runs = n_runs
    if seed0 is None:
        seed0 = base_sc.get("seed", 1)
        where = "seed"
    else:
        where = "seed0"
    try:
        seed0 = _as_seed(seed0, where)
        _as_seed(seed0 + runs - 1, f"{where} + runs - 1")
    except ScenarioError as exc:
        raise fail(str(exc)) from None

    entries = _check_sweep(base_sc, sweep, fail)
    paths = [e.path for e in entries]
    values = [e.values for e in entries]
    total = runs
    for vals in values:
        total *= len(vals)
    if total > MAX_RUNS:
        raise fail(f"runs: {int_text(runs)} runs x {int_text(total // runs)} combinations = {int_text(total)} runs; "
                   f"accepted: at most {MAX_RUNS} runs in one sweep")
    columns = sweep_table.column_names(entries, fail)
    base_data = base_sc.to_dict()
    base_data.pop("seed", None)
    try:
        _core.validate(Scenario.from_dict(base_data).to_json())
        base_error = None
    except (ValueError, ScenarioError) as exc:
        base_error = str(exc)

    specs: list[RunSpec] = []
    for combo in itertools.product(*values):
        sc = base_sc
        set_values = [e.scenario_value(v) for e, v in zip(entries, combo)]
        for path, value in zip(paths, set_values):
            try:
                sc = sc.replace(path, value)
            except ScenarioError as exc:  # pragma: no cover - paths are checked above
                raise fail(f"sweep.{_cut(path)}: {exc}") from None
        data = sc.to_dict()
        data.pop("seed", None)
        try:
            cc.resolve_references(data, base_sc.source.parent if base_sc.source is not None else None)
        except cc.AlgorithmError as exc:
            raise fail(str(exc)) from exc.__cause__
        try:
            _core.validate(Scenario.from_dict(data).to_json())
        except (ValueError, ScenarioError) as exc:
            if str(exc) == base_error:  # not caused by the sweep: the base scenario is invalid
                raise fail(base_error) from None
            where_combo = ""
            if len(paths) > 1:
                where_combo = " (in the combination " + ", ".join(
                    f"{p} = {_show(v)}" for p, v in zip(paths, set_values)) + ")"
            raise fail(f"sweep: {exc}{where_combo}") from None
        combo_tags = dict(zip(columns, combo))
        for i in range(runs):
            seed = seed0 + i
            scenario = dict(data)
            scenario["seed"] = seed
            specs.append(RunSpec(
                experiment=experiment,
                scenario=scenario,
                seed=seed,
                tags={**combo_tags, "run": i, "seed": seed},
                timeseries=timeseries,
            ))
    return specs


def _show(value: Any) -> str:
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return int_text(value)
    return repr(value)


def _check_sweep(base: Scenario, sweep: Any,
                 fail: Callable[[str], ScenarioError]) -> list[sweep_table.Entry]:
    if sweep is None:
        sweep = {}
    if not isinstance(sweep, Mapping):
        raise fail(f"sweep: expected a table of parameter paths and value lists; got {_short_repr(sweep)}")
    data = base.to_dict()
    entries: list[sweep_table.Entry] = []
    for path, vals in sweep.items():
        if not isinstance(path, str) or not path.strip():
            raise fail(f"sweep: parameter paths must be non-empty strings; got {_cut(repr(path))}")
        try:
            _check_depth(vals, ["sweep", path])
        except ScenarioError as exc:
            raise fail(str(exc)) from None
        key, fmt, named = path, None, sweep_table.is_entry(vals)
        if named:
            path, vals, fmt = sweep_table.named_entry(key, vals, fail)
        where = f"sweep.{_cut(key)}.values" if named else f"sweep.{_cut(path)}"
        if isinstance(vals, (str, bytes, Mapping)) or not (
            isinstance(vals, (list, tuple, range)) or hasattr(vals, "tolist")
        ):
            raise fail(f"{where}: expected a non-empty list of values; got {_short(vals)}")
        vals = _plain(list(vals) if not hasattr(vals, "tolist") else vals.tolist())
        if not isinstance(vals, list) or not vals:
            raise fail(f"{where}: expected a non-empty list of values; got {_short(vals)}")
        _check_path(data, path, f"sweep.{key}.path" if named else where, fail)
        entry = sweep_table.Entry(key, path, vals, fmt, named)
        sweep_table.check_format_values(entry, fail)
        entries.append(entry)
    return entries


def _short(value: Any) -> str:
    text = _show(value) if not isinstance(value, (list, dict)) else json.dumps(store.jsonable(value))
    return text if len(text) <= 80 else text[:77] + "..."


def _check_path(data: Any, path: str, where: str, fail: Callable[[str], ScenarioError]) -> None:
    """The path must be settable: lists indexed in range, no scalar on the way."""
    try:
        keys = _split_path(path)
    except ScenarioError as exc:
        raise fail(f"{where}: {exc}") from None
    if keys[0] == "seed" and len(keys) == 1:
        raise fail(f"{where}: the seed is not a sweep parameter; use runs (and seed0) for seeds")
    node: Any = data
    walked: list[str] = []
    for i, key in enumerate(keys):
        last = i == len(keys) - 1
        if isinstance(node, list):
            if not isinstance(key, int):
                raise fail(f"{where}: '{_cut('.'.join(walked))}' is a list; expected an index instead of '{_cut(key)}'")
            if key >= len(node):
                raise fail(
                    f"{where}: index {key} out of range: '{_cut('.'.join(walked))}' has {len(node)} "
                    f"entr{'y' if len(node) == 1 else 'ies'}"
                )
            node = node[key]
        elif isinstance(node, dict):
            name = str(key)
            if name not in node:
                if last:
                    return
                # A missing table is created by replace(); a missing list (e.g. flows) is not.
                nxt = keys[i + 1]
                if isinstance(nxt, int):
                    raise fail(f"{where}: index {nxt} out of range: the scenario has no '{_cut('.'.join(walked + [name]))}'")
                return
            node = node[name]
        else:
            kind = {bool: "boolean", int: "integer", float: "number", str: "string"}.get(
                type(node), type(node).__name__)
            raise fail(
                f"{where}: cannot set '{_cut(key)}' inside '{_cut('.'.join(walked))}', which is a "
                f"{kind} ({_short(node)})"
            )
        walked.append(str(key))


def load_sweep_file(path: PathLike) -> tuple[Scenario, dict, int]:
    """Read a sweep TOML file: ``(base scenario, sweep table, runs)``.

    The file is a scenario plus ``runs = N`` (default 1; at the top or inside
    ``[sweep]``) and a ``[sweep]`` table of parameter paths to value lists; dotted keys may be
    written bare (``bottleneck.loss = [0, 0.01]``) or quoted
    (``"flows.0.cc" = ["cubic", "bbr"]``); a column name may name its path
    (``buffer_bdp = { path = "bottleneck.buffer", values = [1, 2], format = "{}bdp" }``,
    :mod:`ccsim.sweep.table`).  The base scenario is not validated here
    (:func:`expand` validates every combination).
    """
    sc = _load_scenario(path, validate=False)
    data = sc.to_dict()
    p = sc.source
    raw_sweep = data.pop("sweep", {})
    if not isinstance(raw_sweep, Mapping):
        raise ScenarioError(f"{p}: sweep: expected a table of parameter paths and value lists; got {_short(raw_sweep)}")
    raw_sweep = dict(raw_sweep)
    # `runs` may be top-level or inside [sweep] (no scenario parameter is called runs).
    top, inner = data.pop("runs", None), raw_sweep.pop("runs", None)
    if top is not None and inner is not None and top != inner:
        raise ScenarioError(f"{p}: runs: given twice, {_short(top)} at the top and {_short(inner)} in [sweep]")
    runs = top if top is not None else inner if inner is not None else 1
    where = "runs" if top is not None or inner is None else "sweep.runs"
    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
        raise ScenarioError(f"{p}: {where}: expected a positive integer; got {_short(runs)}")
    base = Scenario.from_dict(data)
    base.source = p
    return base, _flatten(raw_sweep), runs


def _flatten(table: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """``{"bottleneck": {"loss": [...]}}`` -> ``{"bottleneck.loss": [...]}`` (TOML dotted keys);
    named entries (``{"buffer_bdp": {"path": ..., "values": ...}}``) are kept as they are."""
    out: dict[str, Any] = {}
    for key, value in table.items():
        path = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, Mapping) and not sweep_table.is_entry(value):
            out.update(_flatten(value, path))
        else:
            out[path] = value
    return out

