"""The output schema, as the engine defines it (``ccsim_core::output::schema``, read through
``ccsim._core.schema()``): every record and column table a run reports, with each column's
name, type, unit and meaning.

:class:`~ccsim.Result`, the sweep store, the CLI's table and the emulator build their tables
from it, and ``ccsim schema`` prints it (``--markdown`` gives ``docs/outputs.md``).  Types:
``int``, ``float`` (NaN or null where there is no value), ``str``, ``category`` (a string
from a small set: categorical in a DataFrame), ``bool``, ``list[str]``, ``record:TABLE`` and
``records:TABLE`` (nested records), ``object``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from typing import Any, Mapping

from . import _core

__all__ = ["Column", "Table", "columns", "markdown", "table", "tables"]

# The DataFrame / Parquet type of each scalar type.
_DTYPES = {"int": "int64", "float": "float64", "str": "object", "category": "category", "bool": "bool"}


@dataclass(frozen=True)
class Column:
    name: str
    type: str
    nullable: bool
    unit: str
    doc: str

    @property
    def dtype(self) -> str | None:
        """The pandas dtype of the column (None for lists and nested records)."""
        return _DTYPES.get(self.type)

    @property
    def scalar(self) -> bool:
        """A single value per row (not a list, record or object)."""
        return self.type in _DTYPES

    @property
    def missing(self) -> Any:
        """What a row holds where there is no value: NaN for floats, else None."""
        return float("nan") if self.type == "float" else None


@dataclass(frozen=True)
class Table:
    name: str
    doc: str
    columns: tuple[Column, ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)

    def column(self, name: str) -> Column:
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(f"{self.name} has no column {name!r}")

    def __contains__(self, name: object) -> bool:
        return any(c.name == name for c in self.columns)

    def row(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """``values`` as one record of this table: its keys in the table's order, every column
        that may not be absent present (missing values as :attr:`Column.missing`).  A key the
        table lacks is an error (a producer out of step with the engine's schema)."""
        unknown = [k for k in values if k not in self]
        if unknown:
            raise KeyError(f"{self.name}: {', '.join(map(repr, unknown))} not in the schema")
        return {c.name: values.get(c.name, c.missing) for c in self.columns
                if c.name in values or not c.nullable}


@cache
def tables() -> dict[str, Table]:
    """Every table, in the engine's order, by name."""
    out: dict[str, Table] = {}
    for t in json.loads(_core.schema()):
        cols = tuple(Column(c["name"], c["type"], c["nullable"], c["unit"], c["doc"]) for c in t["columns"])
        out[t["name"]] = Table(t["name"], t["doc"], cols)
    return out


def table(name: str) -> Table:
    return tables()[name]


def columns(name: str) -> tuple[str, ...]:
    """The column names of table ``name``, in order."""
    return table(name).names


def arrow(df: Any, table_name: str) -> Any:
    """DataFrame ``df`` of table ``table_name`` as a pyarrow Table, with a string column that
    holds no value typed as string (pyarrow alone would make it of type null, or a dictionary
    of null for an empty categorical)."""
    import pyarrow as pa

    t = pa.Table.from_pandas(df, preserve_index=False)
    tab = table(table_name)
    for i, field in enumerate(t.schema):
        if field.name not in tab or tab.column(field.name).type not in ("str", "category"):
            continue
        if pa.types.is_null(field.type):
            t = t.set_column(i, pa.field(field.name, pa.string()), t.column(i).cast(pa.string()))
        elif pa.types.is_dictionary(field.type) and pa.types.is_null(field.type.value_type):
            # An empty categorical column (no rows): a dictionary of nothing.
            kind = pa.dictionary(field.type.index_type, pa.string())
            t = t.set_column(i, pa.field(field.name, kind), t.column(i).cast(kind))
    return t


def heading(table_name: str, column: str, label: str) -> str:
    """A table heading: ``label`` over the column's unit (``"throughput\\nMbps"``)."""
    unit = table(table_name).column(column).unit
    return f"{label}\n{unit}" if unit and unit not in ("count", "fraction", "segments") else label


def markdown() -> str:
    """The schema as Markdown: one section per table, a row per column."""
    lines = [
        "# Outputs",
        "",
        "Every table a run reports, generated from the engine's schema",
        "(`crates/ccsim-core/src/output/schema.rs`) by `ccsim schema --markdown`; a test checks",
        "that this file is current. Types: `int`, `float` (NaN or null where there is no value),",
        "`str`, `category` (a string from a small set: categorical in a DataFrame), `bool`,",
        "`list[str]`, `record:T` / `records:T` (one or a list of records of table T), `object`.",
        "A nullable column may be null or absent.",
    ]
    for t in tables().values():
        lines += ["", f"## {t.name}", "", t.doc, "", "| column | type | unit | nullable | meaning |",
                  "|---|---|---|---|---|"]
        for c in t.columns:
            doc = c.doc.replace("|", "\\|")
            lines.append(f"| `{c.name}` | {c.type} | {c.unit} | {'yes' if c.nullable else ''} | {doc} |")
    return "\n".join(lines) + "\n"
