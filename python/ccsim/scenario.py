"""Scenarios: loading TOML files, building scenarios in code, validation.

A scenario is kept as a plain dict with exactly the structure of the TOML
file.  Python does not check field names, units or ranges: that is done by
the Rust core (``ccsim._core.validate``), whose one-line error messages are
passed on unchanged as :class:`ScenarioError`.  Python only deals with what
never reaches the core: reading the file, TOML syntax, and values that JSON
cannot carry (dates, NaN and infinities).
"""

from __future__ import annotations

import copy
import datetime as _dt
import json
import math
import os
import re
import tomllib
from pathlib import Path
from typing import Any, Iterator, Mapping

from . import _core

__all__ = ["Scenario", "ScenarioError", "algorithms", "load"]

PathLike = str | os.PathLike


class ScenarioError(ValueError):
    """An invalid scenario (or scenario file).

    ``str(error)`` is a single line, e.g.
    ``'flows[0].cc: unknown algorithm "cubicc"; accepted: newreno, cubic, bbr, ...'``
    (every algorithm of ``ccsim algorithms``),
    prefixed with the file name when the scenario came from a file.
    """

    def __init__(self, message: object) -> None:
        text = " ".join(part.strip() for part in str(message).splitlines() if part.strip())
        super().__init__(text)

    @property
    def message(self) -> str:
        return str(self)


_MISSING = object()


class Scenario:
    """A simulation scenario: the TOML structure as a dict, plus a small builder.

    Build in code (builder methods modify the scenario and return it)::

        sc = (Scenario(duration="10s", seed=1)
              .bottleneck(rate="10Mbps", delay="20ms", buffer="1bdp", loss=0.0)
              .tcp(mss=1448, delayed_ack=True)
              .add_flow("cubic", count=2, start="0s")
              .add_flow("bbr", params={...}))

    Derive variants without touching the original (these return new objects)::

        sc.with_seed(7)
        sc.replace("bottleneck.loss", 0.01)
        sc.replace("flows.0.cc", "bbr")      # or "flows[0].cc"

    Keyword values are passed through as given; units are strings such as
    ``"10Mbps"``, ``"20ms"``, ``"50pkt"`` or ``"2bdp"``.
    """

    __slots__ = ("_data", "source")

    def __init__(self, **fields: Any) -> None:
        self._data: dict[str, Any] = {}
        #: The file this scenario was loaded from, if any (used in error messages).
        self.source: Path | None = None
        for key, value in fields.items():
            if value is not None:
                self._data[key] = copy.deepcopy(value)

    # -- construction / conversion -------------------------------------------------

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Scenario:
        """A scenario from a dict with the TOML structure (the dict is copied)."""
        if not isinstance(data, Mapping):
            raise TypeError(f"Scenario.from_dict expects a mapping, got {type(data).__name__}")
        sc = cls()
        sc._data = copy.deepcopy(dict(data))
        return sc

    @classmethod
    def from_json(cls, text: str) -> Scenario:
        """A scenario from JSON text with the TOML structure."""
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ScenarioError(f"scenario JSON must be an object; got {type(data).__name__}")
        return cls.from_dict(data)

    def to_dict(self) -> dict[str, Any]:
        """A deep copy of the scenario as a dict (the TOML structure)."""
        return copy.deepcopy(self._data)

    def to_json(self) -> str:
        """The scenario as JSON text, as passed to the core.

        TOML dates and times become strings (the core then reports them as the
        wrong kind of value); NaN and infinities, which JSON cannot carry, raise
        :class:`ScenarioError` naming the field.
        """
        return json.dumps(_jsonable(self._data, ""), allow_nan=False)

    def copy(self) -> Scenario:
        sc = Scenario.from_dict(self._data)
        sc.source = self.source
        return sc

    # -- validation ----------------------------------------------------------------

    def validate(self) -> Scenario:
        """Check the scenario with the core.

        Returns the normalised scenario (defaults filled in, units kept as given)
        as a new :class:`Scenario`; raises :class:`ScenarioError` if invalid.
        """
        payload = self.to_json()
        try:
            normalised = _core.validate(payload)
        except ValueError as exc:
            raise self._error(exc) from None
        sc = Scenario.from_dict(json.loads(normalised))
        sc.source = self.source
        return sc

    def is_valid(self) -> bool:
        try:
            self.validate()
        except ScenarioError:
            return False
        return True

    def _error(self, exc: BaseException | str) -> ScenarioError:
        """A ScenarioError for a core message, prefixed with the source file if any."""
        message = str(exc)
        if self.source is not None:
            message = f"{self.source}: {message}"
        return ScenarioError(message)

    # -- builder (in place, chainable) ---------------------------------------------

    def bottleneck(self, **fields: Any) -> Scenario:
        """Set fields of ``[bottleneck]`` (rate, delay, buffer, loss, ...). Returns self."""
        self._table("bottleneck").update(_drop_none(fields))
        return self

    def wireless(self, **fields: Any) -> Scenario:
        """Set fields of ``[wireless]`` (hops, profile, environment, queue, host, ...), the
        802.11 line used in place of ``[bottleneck]``. Returns self."""
        self._table("wireless").update(_drop_none(fields))
        return self

    def add_udp_flow(self, rate: str, packet_size: int | None = None, count: int | None = None, **fields: Any) -> Scenario:
        """Append a UDP constant-bit-rate ``[[flows]]`` entry (wireless scenarios):
        ``rate`` such as ``"500pps"`` or ``"4Mbps"`` (of UDP payload), ``packet_size`` in
        payload bytes; other keywords (src, dst, start, stop) as given. Returns self."""
        flow: dict[str, Any] = {"protocol": "udp", "rate": rate}
        if packet_size is not None:
            flow["packet_size"] = packet_size
        if count is not None:
            flow["count"] = count
        flow.update(_drop_none(fields))
        return self._append_flow(flow)

    def tcp(self, **fields: Any) -> Scenario:
        """Set fields of ``[tcp]`` (mss, delayed_ack, min_rto, ...). Returns self."""
        self._table("tcp").update(_drop_none(fields))
        return self

    def add_flow(self, cc: str, count: int | None = None, **fields: Any) -> Scenario:
        """Append a ``[[flows]]`` entry with algorithm ``cc``.

        ``count`` identical flows; any other keyword (start, stop, size,
        access_rate, access_delay, params, or a ``[tcp]`` override such as mss)
        is copied into the entry as given.  Returns self.
        """
        flow: dict[str, Any] = {"cc": cc}
        if count is not None:
            flow["count"] = count
        flow.update(_drop_none(fields))
        return self._append_flow(flow)

    def _append_flow(self, flow: dict[str, Any]) -> Scenario:
        flows = self._data.setdefault("flows", [])
        if not isinstance(flows, list):
            raise ScenarioError(f"flows: expected an array of tables; got {flows!r}")
        flows.append(flow)
        return self

    def set(self, **fields: Any) -> Scenario:
        """Set top-level fields (duration, seed, sample_interval, ...). Returns self."""
        self._data.update(copy.deepcopy(_drop_none(fields)))
        return self

    def _table(self, name: str) -> dict[str, Any]:
        table = self._data.setdefault(name, {})
        if not isinstance(table, dict):
            raise ScenarioError(f"{name}: expected a table; got {table!r}")
        return table

    # -- derived copies --------------------------------------------------------------

    def with_seed(self, seed: int) -> Scenario:
        """A copy with ``seed`` set."""
        return self.replace("seed", seed)

    def replace(self, path: str, value: Any) -> Scenario:
        """A copy with the field at a dotted ``path`` set to ``value``.

        Paths look like ``"duration"``, ``"bottleneck.loss"``, ``"flows.0.cc"``
        or ``"flows[0].params.beta"``.  Missing tables on the way are created;
        list indices must exist.  ``value=None`` removes the field.
        """
        keys = _split_path(path)
        new = self.copy()
        node: Any = new._data
        walked: list[str | int] = []
        for key in keys[:-1]:
            node = _step(node, key, walked, path, create=True)
            walked.append(key)
        last = keys[-1]
        if isinstance(node, list):
            index = _index(node, last, walked, path)
            if value is None:
                del node[index]
            else:
                node[index] = copy.deepcopy(value)
        elif isinstance(node, dict):
            if isinstance(last, int):
                last = str(last)
            if value is None:
                node.pop(last, None)
            else:
                node[last] = copy.deepcopy(value)
        else:
            raise ScenarioError(
                f"{_format_path(walked)}: cannot set '{last}' inside a {type(node).__name__} "
                f"(path '{path}')"
            )
        return new

    def get(self, path: str, default: Any = _MISSING) -> Any:
        """The value at a dotted ``path`` (see :meth:`replace`); ``default`` if absent."""
        node: Any = self._data
        walked: list[str | int] = []
        try:
            for key in _split_path(path):
                node = _step(node, key, walked, path, create=False)
                walked.append(key)
        except (ScenarioError, KeyError):
            if default is _MISSING:
                raise KeyError(path) from None
            return default
        return copy.deepcopy(node)

    # -- dunder ------------------------------------------------------------------------

    def __getitem__(self, key: str) -> Any:
        return self.get(key)

    def __contains__(self, key: str) -> bool:
        absent = object()
        return self.get(key, absent) is not absent

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Scenario):
            return self._data == other._data
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        src = f", source={str(self.source)!r}" if self.source is not None else ""
        return f"Scenario({self._data!r}{src})"


# -- loading -------------------------------------------------------------------------


def load(path: PathLike, *, validate: bool = True) -> Scenario:
    """Read a scenario TOML file and (by default) validate it.

    Raises :class:`ScenarioError` for a missing or unreadable file
    (``"<path>: no such file"``), a TOML syntax error
    (``"<path>:<line>:<col>: <problem>"``) or an invalid scenario
    (``"<path>: <field path>: <problem>; got <value>; ..."``).
    """
    p = Path(os.fspath(path))
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        raise ScenarioError(f"{p}: no such file") from None
    except IsADirectoryError:
        raise ScenarioError(f"{p}: is a directory, expected a scenario .toml file") from None
    except OSError as exc:
        raise ScenarioError(f"{p}: cannot read file: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ScenarioError(f"{p}: not UTF-8 text (byte {exc.start})") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(_toml_error(p, text, exc)) from None
    sc = Scenario.from_dict(data)
    sc.source = p
    if validate:
        sc.validate()
    return sc


_TOML_POS = re.compile(r"\s*\(at line (\d+), column (\d+)\)\s*$")
_TOML_END = re.compile(r"\s*\(at end of document\)\s*$")


def _toml_error(path: Path, text: str, exc: tomllib.TOMLDecodeError) -> str:
    """``path:line:col: message`` for a tomllib error (3.11 has no lineno attribute)."""
    message = str(exc)
    line = getattr(exc, "lineno", None)
    col = getattr(exc, "colno", None)
    msg = getattr(exc, "msg", None)
    if line is None or col is None or not isinstance(msg, str):
        msg = message
        m = _TOML_POS.search(message)
        if m:
            line, col = int(m.group(1)), int(m.group(2))
            msg = message[: m.start()]
        elif _TOML_END.search(message):
            lines = text.split("\n")
            line, col = len(lines), len(lines[-1]) + 1
            msg = _TOML_END.sub("", message)
        else:
            line, col = 1, 1
    msg = msg.strip() or "invalid TOML"
    return f"{path}:{line}:{col}: TOML syntax error: {msg}"


def algorithms() -> list[dict[str, Any]]:
    """The congestion-control algorithms the core implements.

    A list of ``{"name", "summary", "source", "params": [{"name", "default",
    "unit", "range", "doc"}]}`` dicts.
    """
    return json.loads(_core.algorithms())


# -- helpers ---------------------------------------------------------------------------


def _drop_none(fields: Mapping[str, Any]) -> dict[str, Any]:
    return {k: copy.deepcopy(v) for k, v in fields.items() if v is not None}


def _format_path(keys: list[str | int]) -> str:
    """Render a key path the way the core does: ``flows[0].params.beta``."""
    out = ""
    for key in keys:
        if isinstance(key, int):
            out += f"[{key}]"
        else:
            out += f".{key}" if out else key
    return out or "<scenario>"


_PATH_TOKEN = re.compile(r"\[(\d+)\]")


def _split_path(path: str) -> list[str | int]:
    if not isinstance(path, str) or not path.strip():
        raise ScenarioError(f"field path must be a non-empty string; got {path!r}")
    dotted = _PATH_TOKEN.sub(r".\1", path.strip())
    parts = dotted.split(".")
    if any(p == "" for p in parts):
        raise ScenarioError(f"malformed field path '{path}'")
    return [int(p) if p.isdigit() else p for p in parts]


def _index(node: list, key: str | int, walked: list[str | int], path: str) -> int:
    if not isinstance(key, int):
        raise ScenarioError(
            f"{_format_path(walked)}: is a list, expected an index instead of '{key}' (path '{path}')"
        )
    if key >= len(node):
        raise ScenarioError(
            f"{_format_path(walked)}: has {len(node)} entries, no index {key} (path '{path}')"
        )
    return key


def _step(node: Any, key: str | int, walked: list[str | int], path: str, *, create: bool) -> Any:
    if isinstance(node, list):
        return node[_index(node, key, walked, path)]
    if isinstance(node, dict):
        skey = str(key)
        if skey not in node:
            if not create:
                raise KeyError(path)
            node[skey] = {}
        return node[skey]
    raise ScenarioError(
        f"{_format_path(walked)}: is a {type(node).__name__}, cannot descend into '{key}' "
        f"(path '{path}')"
    )


def _jsonable(value: Any, where: str) -> Any:
    """Copy ``value`` into plain JSON types; dates become ISO strings."""
    if isinstance(value, Mapping):
        return {
            str(k): _jsonable(v, f"{where}.{k}" if where else str(k)) for k, v in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [_jsonable(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, bool) or value is None or isinstance(value, (str, int)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ScenarioError(f"{where or '<scenario>'}: must be a finite number; got {value}")
        return value
    if isinstance(value, (_dt.datetime, _dt.date, _dt.time)):
        return value.isoformat()
    # numpy scalars and similar
    if hasattr(value, "item") and callable(value.item):
        return _jsonable(value.item(), where)
    raise ScenarioError(
        f"{where or '<scenario>'}: unsupported value of type {type(value).__name__}; got {value!r}"
    )
