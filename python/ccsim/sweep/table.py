"""The entries of a sweep table and the column name of each swept parameter.

A sweep table (``[sweep]`` in a sweep file, or the dict given to :func:`ccsim.sweep` and
:func:`ccsim.sweep.expand`) maps a parameter path to a list of values::

    "bottleneck.loss" = [0, 0.01]        # column loss
    "flows.0.cc" = ["cubic", "bbr"]      # column cc

or a column name to a table with the path::

    buffer_bdp = { path = "bottleneck.buffer", values = [1, 2, 4], format = "{}bdp" }

``format`` (optional) is a text with one ``{}``: the scenario gets each value written into it
(``"1bdp"``, ``"2bdp"``, ``"4bdp"``) and the column keeps the value itself (1, 2, 4).

Column names (:func:`column_names`, used by sweeps and ``ccsim reproduce`` alike): a path's
column is its last component that is not a list index (``bottleneck.loss`` -> ``loss``,
``flows.0.cc`` -> ``cc``, ``flows.1.params.beta`` -> ``beta``).  When that name is taken (two
paths of one table end the same, as ``flows.0.cc`` and ``flows.1.cc``; a named entry has it;
or it is reserved: seed, run, key, experiment, status, error), each such path's column is the
whole path with ``_`` for ``.`` and indices (``flows_0_cc``, ``flows_1_cc``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from ..scenario import ScenarioError

#: Names no swept parameter's column takes (``run`` and ``seed`` are tags of every sweep run).
RESERVED = frozenset({"seed", "run", "key", "experiment", "status", "error"})

_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_INDEX_RE = re.compile(r"\[(\d+)\]")
_ENTRY_KEYS = ("path", "values", "format")


@dataclass(frozen=True)
class Entry:
    """One swept parameter: ``key`` as written in the table (the path, or the column name of a
    named entry), the scenario ``path``, the ``values`` and the optional ``format``."""

    key: str
    path: str
    values: list
    format: str | None = None
    named: bool = False

    @property
    def where(self) -> str:
        """The entry's place in error messages: ``sweep.bottleneck.loss``, ``sweep.buffer_bdp``."""
        return f"sweep.{self.key}"

    def scenario_value(self, value: Any) -> Any:
        """The value the scenario gets (``value`` written into ``format``, if any)."""
        return value if self.format is None else self.format.replace("{}", str(value))


def is_entry(value: Any) -> bool:
    """Whether a sub-table of a sweep table is a named entry (``{path = ..., values = ...}``)
    rather than a level of dotted paths (``bottleneck = { loss = [...] }``)."""
    return isinstance(value, Mapping) and ("path" in value or "values" in value)


def combinations(table: Mapping[str, Any]) -> int:
    """The number of combinations of a sweep table as written (a list of values, or a named
    entry's ``values``, per entry), before it is checked: for bounding a run count early."""
    total = 1
    for vals in table.values():
        vals = vals.get("values", ()) if is_entry(vals) else vals
        total *= len(vals) if hasattr(vals, "__len__") else 1
    return total


def named_entry(name: str, table: Mapping[str, Any], fail: Callable[[str], ScenarioError]) -> tuple[str, Any, str | None]:
    """``(path, values, format)`` of the named entry ``name = {...}``; its values are checked by
    the caller like any list of values."""
    where = f"sweep.{name}"
    if not _NAME_RE.match(name):
        raise fail(f"{where}: {name!r} is not a column name; accepted: letters, digits and _, "
                   "not starting with a digit (or give a parameter path and a list of values)")
    unknown = [k for k in table if k not in _ENTRY_KEYS]
    if unknown:
        raise fail(f"{where}: unknown key {unknown[0]!r}; accepted: {', '.join(_ENTRY_KEYS)}")
    path = table.get("path")
    if not isinstance(path, str) or not path.strip():
        raise fail(f"{where}.path: expected a parameter path such as \"bottleneck.buffer\"; got {path!r}")
    if "values" not in table:
        raise fail(f"{where}.values: missing; expected a non-empty list of values")
    fmt = table.get("format")
    if fmt is not None and not (isinstance(fmt, str) and fmt.count("{}") == 1
                                and "{" not in fmt.replace("{}", "") and "}" not in fmt.replace("{}", "")):
        raise fail(f"{where}.format: expected a text with one {{}} for the value, such as \"{{}}bdp\"; got {fmt!r}")
    return path, table["values"], fmt


def check_format_values(entry: Entry, fail: Callable[[str], ScenarioError]) -> None:
    if entry.format is None:
        return
    for v in entry.values:
        if not isinstance(v, (str, int, float)):
            raise fail(f"{entry.where}.values: a value written through format must be a number or a "
                       f"text; got {v!r}")


def short_name(path: str) -> str:
    """The last component of ``path`` that is not a list index (``flows.0.cc`` -> ``cc``)."""
    parts = [p for p in _INDEX_RE.sub(r".\1", path).split(".") if p and not p.isdigit()]
    return parts[-1] if parts else long_name(path)


def long_name(path: str) -> str:
    """The whole path as a column name: ``flows.0.cc`` -> ``flows_0_cc``."""
    return _INDEX_RE.sub(r".\1", path).replace(".", "_")


def column_names(entries: Sequence[Entry], fail: Callable[[str], ScenarioError]) -> list[str]:
    """The column (tag) name of each entry, in order (rules in the module docstring)."""
    named = [e.key for e in entries if e.named]
    for name in named:
        if name in RESERVED:
            raise fail(f"sweep.{name}: the column name {name!r} is reserved ({', '.join(sorted(RESERVED))})")
    shorts = [None if e.named else short_name(e.path) for e in entries]
    counts: dict[str, int] = {}
    for s in shorts:
        if s is not None:
            counts[s] = counts.get(s, 0) + 1
    out: list[str] = []
    for e, s in zip(entries, shorts):
        if e.named:
            out.append(e.key)
        elif counts[s] > 1 or s in named or s in RESERVED:
            out.append(long_name(e.path))
        else:
            out.append(s)
    seen: dict[str, str] = {}
    for e, col in zip(entries, out):
        if col in seen:
            raise fail(f"sweep: {seen[col]} and {e.key} would both be stored as column {col!r}; "
                       f"name one: {col}_2 = {{ path = \"{e.path}\", values = [...] }}")
        seen[col] = e.key
    return out
