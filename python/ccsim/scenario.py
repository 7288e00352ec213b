"""Scenarios: loading TOML files, building scenarios in code, validation.

A scenario is kept as a plain dict with exactly the structure of the TOML
file.  Python does not check field names, units or ranges: that is done by
the Rust core (``ccsim._core.validate``), whose one-line error messages are
passed on as :class:`ScenarioError`.  Python only deals with what never
reaches the core as such: reading the file (UTF-8, an optional byte-order
mark, at most :data:`MAX_FILE_BYTES`), TOML syntax, nesting (at most
:data:`MAX_DEPTH` levels of tables and arrays), and values that JSON cannot
carry (dates; NaN, infinities and integers beyond 64 bits, which are sent as
stand-ins that no field accepts, so that the core's message names the field
and what it accepts; the stand-in is then replaced by the value as written).
"""

from __future__ import annotations

import copy
import datetime as _dt
import json
import math
import os
import re
import sys
import tomllib
from collections import abc
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping

from . import _core

__all__ = ["Scenario", "ScenarioError", "algorithms", "load", "qdiscs"]

PathLike = str | os.PathLike

#: The largest scenario or sweep file read (16 MiB): a real one is a few kilobytes.
MAX_FILE_BYTES = 16 * 1024 * 1024
#: Seeds are accepted in [0, 2^63 - 1] (TOML integers are signed 64-bit).
MAX_SEED = 2**63 - 1
#: The deepest nesting of tables and arrays accepted below the top level of a scenario (a
#: real one has 3: ``flows[0].params``).
MAX_DEPTH = 32


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
                self._data[key] = _copy(value, [key])

    # -- construction / conversion -------------------------------------------------

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Scenario:
        """A scenario from a dict with the TOML structure (the dict is copied)."""
        if not isinstance(data, Mapping):
            raise TypeError(f"Scenario.from_dict expects a mapping, got {type(data).__name__}")
        _check_depth(data, [])
        sc = cls()
        sc._data = copy.deepcopy(dict(data))
        return sc

    @classmethod
    def from_json(cls, text: str) -> Scenario:
        """A scenario from JSON text with the TOML structure."""
        accepted = "accepted: a JSON object with the structure of a scenario file"
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ScenarioError(
                f"scenario JSON: {exc.msg} at line {exc.lineno} column {exc.colno}; {accepted}"
            ) from None
        except RecursionError:
            raise ScenarioError(_too_deep("scenario JSON")) from None
        if not isinstance(data, dict):
            raise ScenarioError(f"scenario JSON must be an object; got {type(data).__name__}")
        return cls.from_dict(data)

    def to_dict(self) -> dict[str, Any]:
        """A deep copy of the scenario as a dict (the TOML structure)."""
        return copy.deepcopy(self._data)

    def to_json(self) -> str:
        """The scenario as JSON text, as passed to the core.

        TOML dates and times become strings (the core then reports them as the
        wrong kind of value); NaN, infinities and integers beyond 64 bits, which
        the core cannot take, raise :class:`ScenarioError` with the core's
        message for that field (what it accepts) and the value as written.
        """
        return self._payload()

    def _payload(self) -> str:
        self._register_python_algorithms()
        data = self._data
        if isinstance(data.get("workloads"), list):
            data = {**data, "workloads": self._resolve_workload_sizes(data["workloads"])}
        try:
            text, stand_ins = _encode(_resolve_traces(data, self.source.parent if self.source is not None else None))
        except ScenarioError as exc:
            raise self._error(exc) from None
        if stand_ins:
            # No field accepts a stand-in: the core names the field and what it accepts.
            try:
                _core.validate(text)
            except ValueError as exc:
                raise self._error(_restore(str(exc), stand_ins)) from None
            path, (_, shown) = next(iter(stand_ins.items()))  # pragma: no cover - not reached
            raise self._error(f"{path}: {shown} is not accepted here")  # pragma: no cover
        return text

    def _resolve_workload_sizes(self, workloads: list[Any]) -> list[Any]:
        """``[[workloads]]`` with each ``sizes`` that names a CDF file (not a built-in) read:
        the path is relative to the scenario file's folder (the working directory for a
        scenario built in code), and the core gets ``{file = ABSOLUTE PATH, cdf = TEXT}``."""
        builtins = {"websearch", "hadoop"}
        out = []
        for i, w in enumerate(workloads):
            sizes = w.get("sizes") if isinstance(w, dict) else None
            if isinstance(sizes, str) and sizes not in builtins and ("/" in sizes or "." in sizes):
                base = self.source.parent if self.source is not None else Path.cwd()
                path = (base / sizes).resolve()
                try:
                    text = path.read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError) as exc:
                    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__
                    raise self._error(
                        f"workloads[{i}].sizes: cannot read CDF file {sizes!r} ({path}: {reason}); "
                        "accepted: a built-in (\"websearch\", \"hadoop\") or a CDF file path, relative to the scenario file"
                    ) from None
                w = {**w, "sizes": {"file": str(path), "cdf": text}}
            out.append(w)
        return out

    def _register_python_algorithms(self, reload: bool = False) -> None:
        """Register the Python modules the flows name (``cc = "mycc.py:Reno"``), relative to
        the scenario file's folder (the working directory for a scenario built in code)."""
        from . import cc

        try:
            cc.resolve_references(self._data, self.source.parent if self.source is not None else None, reload=reload)
        except cc.AlgorithmError as exc:
            if self.source is not None:
                raise cc.AlgorithmError(f"{self.source}: {exc}") from exc.__cause__
            raise

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
        payload = self._payload()
        try:
            normalised = _core.validate(payload)
        except ValueError as exc:
            raise self._error(exc) from None
        sc = Scenario.from_dict(_restore_traces(json.loads(normalised), self._data))
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

    def add_link(self, a: str, b: str, rate: str, delay: str, **fields: Any) -> Scenario:
        """Append a ``[[links]]`` entry joining nodes ``a`` and ``b`` (full duplex): ``rate``
        (or ``"unlimited"``) and ``delay``; other keywords (buffer, loss, reverse) as given.
        Returns self."""
        link: dict[str, Any] = {"between": [a, b], "rate": rate, "delay": delay}
        link.update(_drop_none(fields))
        return self._append("links", link)

    def add_wifi(self, stations: list[str], **fields: Any) -> Scenario:
        """Append a ``[[wifi]]`` entry: ``stations``, node names in line order sharing one
        802.11 channel; other keywords are the ``[wireless]`` table's (profile, environment,
        queue, fer, host, ...). Returns self."""
        wifi: dict[str, Any] = {"stations": list(stations)}
        wifi.update(_drop_none(fields))
        return self._append("wifi", wifi)

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
        return self._append("flows", flow)

    def _append(self, name: str, entry: dict[str, Any]) -> Scenario:
        entries = self._data.setdefault(name, [])
        if not isinstance(entries, list):
            raise ScenarioError(f"{name}: expected an array of tables; got {_short_repr(entries)}")
        entries.append(entry)
        return self

    def set(self, **fields: Any) -> Scenario:
        """Set top-level fields (duration, seed, sample_interval, ...). Returns self."""
        self._data.update(copy.deepcopy(_drop_none(fields)))
        return self

    def _table(self, name: str) -> dict[str, Any]:
        table = self._data.setdefault(name, {})
        if not isinstance(table, dict):
            raise ScenarioError(f"{name}: expected a table; got {_short_repr(table)}")
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
                node[index] = _copy(value, [*walked, index])
        elif isinstance(node, dict):
            if isinstance(last, int):
                last = str(last)
            if value is None:
                node.pop(last, None)
            else:
                node[last] = _copy(value, [*walked, last])
        else:
            raise ScenarioError(
                f"{_format_path(walked)}: cannot set '{last}' inside a {type(node).__name__} "
                f"(path '{_cut(path)}')"
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

    Raises :class:`ScenarioError` for a file that cannot be read (``"<path>: no
    such file"``, a directory, more than :data:`MAX_FILE_BYTES`, not UTF-8 text), a
    TOML syntax error (``"<path>:<line>:<col>: <problem>"``), nesting deeper than
    :data:`MAX_DEPTH` levels, or an invalid scenario
    (``"<path>: <field path>: <problem>; accepted: ..."``).
    """
    p = Path(os.fspath(path))
    data = read_toml(p)
    try:
        sc = Scenario.from_dict(data)
    except ScenarioError as exc:
        raise ScenarioError(f"{p}: {exc}") from None
    sc.source = p
    sc._register_python_algorithms(reload=True)
    if validate:
        sc.validate()
    return sc


def read_toml(p: Path) -> dict[str, Any]:
    """The TOML document in file ``p`` (a scenario or a sweep file), or :class:`ScenarioError`."""
    text = _read_text(p)
    for _ in range(2):
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ScenarioError(_toml_error(p, text, exc)) from None
        except RecursionError:
            # tomllib recurses once per nested array or inline table.
            found = _scan_toml(text, max_depth=MAX_DEPTH)
            where = found.too_deep or "<scenario>"
            raise ScenarioError(f"{p}: {_too_deep(where)}") from None
        except ValueError as exc:
            # An integer literal of more digits than int() converts (sys.get_int_max_str_digits):
            # put a stand-in in its place, so that the core reports the field it is in.
            found = _scan_toml(text, max_digits=_max_int_digits())
            if not found.long_ints:
                raise ScenarioError(f"{p}: {exc}") from None
            parts = []
            last = 0
            for start, end in found.long_ints:
                parts += [text[last:start], _long_literal(text[start:end])]
                last = end
            text = "".join(parts) + text[last:]
    raise ScenarioError(f"{p}: cannot read the integers in this file")  # pragma: no cover


def _read_text(p: Path) -> str:
    try:
        with open(p, "rb") as fh:
            raw = fh.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise ScenarioError(f"{p}: no such file") from None
    except IsADirectoryError:
        raise ScenarioError(f"{p}: is a directory, expected a scenario .toml file") from None
    except NotADirectoryError:
        raise ScenarioError(f"{p}: no such file (a part of the path is not a directory)") from None
    except OSError as exc:
        raise ScenarioError(f"{p}: cannot read file: {exc.strerror or exc}") from None
    if len(raw) > MAX_FILE_BYTES:
        raise ScenarioError(
            f"{p}: larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB; accepted: a scenario or sweep "
            f"file of at most {MAX_FILE_BYTES // (1024 * 1024)} MiB"
        )
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise ScenarioError(f"{p}: UTF-16 text (it starts with a UTF-16 byte-order mark); accepted: TOML in UTF-8")
    offset = 3 if raw.startswith(b"\xef\xbb\xbf") else 0  # a UTF-8 byte-order mark is dropped
    try:
        return raw[offset:].decode("utf-8")
    except UnicodeDecodeError as exc:
        at = offset + exc.start
        raise ScenarioError(
            f"{p}: not UTF-8 text (byte 0x{raw[at]:02x} at offset {at}); accepted: TOML in UTF-8"
        ) from None


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


def qdiscs() -> list[dict[str, Any]]:
    """The queue disciplines the core implements (``qdisc = NAME`` on a link direction).

    A list of ``{"name", "summary", "source", "can_mark", "params": [{"name", "default",
    "unit", "range", "doc"}]}`` dicts; ``can_mark`` says whether ``ecn = true`` is accepted.
    """
    return json.loads(_core.qdiscs())


# -- helpers ---------------------------------------------------------------------------


def _resolve_traces(data: Mapping[str, Any], base: Path | None) -> Mapping[str, Any]:
    """The data with each link's ``rate = { trace = "file" }`` made absolute: relative to the
    scenario file's folder (``base``), or to the working directory for a scenario built in
    code. The core reads the file. Returns ``data`` itself when it names no relative trace."""

    def fixed(table: Any) -> Any:
        rate = table.get("rate") if isinstance(table, dict) else None
        trace = rate.get("trace") if isinstance(rate, dict) else None
        if not isinstance(trace, str) or Path(trace).is_absolute() or base is None and not trace:
            return None
        return {**table, "rate": {**rate, "trace": str((base or Path.cwd()) / trace)}}

    out = dict(data)
    changed = False
    if (t := fixed(data.get("bottleneck"))) is not None:
        out["bottleneck"], changed = t, True
    links = data.get("links")
    if isinstance(links, list):
        new_links = []
        for link in links:
            t = fixed(link)
            link = t if t is not None else link
            rev = link.get("reverse") if isinstance(link, dict) else None
            if (r := fixed(rev)) is not None:
                link = {**link, "reverse": r}
            changed = changed or link is not links[len(new_links)]
            new_links.append(link)
        out["links"] = new_links
    return out if changed else data


def _restore_traces(norm: dict[str, Any], data: Mapping[str, Any]) -> dict[str, Any]:
    """The normalised scenario with its trace paths as written in ``data`` (the core saw them
    made absolute by :func:`_resolve_traces`)."""

    def restore(n: Any, d: Any) -> None:
        if isinstance(n, dict) and isinstance(d, dict) and isinstance(d.get("rate"), dict) and "trace" in d["rate"]:
            if isinstance(n.get("rate"), dict):
                n["rate"]["trace"] = d["rate"]["trace"]

    restore(norm.get("bottleneck"), data.get("bottleneck"))
    links, given = norm.get("links"), data.get("links")
    if isinstance(links, list) and isinstance(given, list):
        for n, d in zip(links, given):
            restore(n, d)
            if isinstance(n, dict) and isinstance(d, dict):
                restore(n.get("reverse"), d.get("reverse"))
    return norm


def _drop_none(fields: Mapping[str, Any]) -> dict[str, Any]:
    return {k: _copy(v, [k]) for k, v in fields.items() if v is not None}


def _copy(value: Any, where: list[str | int]) -> Any:
    """A deep copy of a value given by the user, once its nesting is checked."""
    _check_depth(value, where)
    return copy.deepcopy(value)


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


def _cut(text: object, limit: int = 60) -> str:
    """``text`` cut short for a message."""
    text = str(text)
    return text if len(text) <= limit else f"{text[:limit - 20]}... ({len(text)} characters)"


def _split_path(path: str) -> list[str | int]:
    if not isinstance(path, str) or not path.strip():
        raise ScenarioError(f"field path must be a non-empty string; got {_short_repr(path)}")
    dotted = _PATH_TOKEN.sub(r".\1", path.strip())
    parts = dotted.split(".")
    if any(p == "" for p in parts):
        raise ScenarioError(f"malformed field path '{_cut(path)}'")
    for p in parts:
        if p.isdigit() and len(p) > 18:
            raise ScenarioError(f"field path '{_cut(path)}': index {_cut(p)} is out of range")
    return [int(p) if p.isdigit() else p for p in parts]


def _index(node: list, key: str | int, walked: list[str | int], path: str) -> int:
    if not isinstance(key, int):
        raise ScenarioError(
            f"{_format_path(walked)}: is a list, expected an index instead of '{key}' (path '{_cut(path)}')"
        )
    if key >= len(node):
        raise ScenarioError(
            f"{_format_path(walked)}: has {len(node)} entries, no index {key} (path '{_cut(path)}')"
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
        f"(path '{_cut(path)}')"
    )


# -- nesting, and values JSON cannot carry ------------------------------------------------


def _deep_path(keys: list[str | int]) -> str:
    """A path into deep nesting, cut after 6 steps."""
    return _path_text(keys[:6]) + ("..." if len(keys) > 6 else "")


def _path_text(keys: list[str | int]) -> str:
    """A path for a message (cut short if a key is very long)."""
    return _cut(_format_path(keys), 100)


def _too_deep(where: str) -> str:
    return (f"{where}: nested more than {MAX_DEPTH} levels deep; accepted: at most {MAX_DEPTH} "
            "levels of tables and arrays")


def _is_table_or_array(value: Any) -> bool:
    kind = type(value)
    if kind is dict or kind is list or kind is tuple:
        return True
    if kind is str or kind is int or kind is float or kind is bool:
        return False
    return isinstance(value, (abc.Mapping, list, tuple))


def _check_depth(value: Any, where: list[str | int]) -> None:
    """ScenarioError if ``value``, at path ``where`` of a scenario, is a table or array more
    than MAX_DEPTH levels below the top (the recursion stops there, so a cycle is reported too)."""
    if not _is_table_or_array(value):
        return
    if len(where) > MAX_DEPTH:
        raise ScenarioError(_too_deep(_deep_path(where)))
    items = enumerate(value) if isinstance(value, (list, tuple)) else value.items()
    for key, item in items:
        if _is_table_or_array(item):
            _check_depth(item, [*where, key])


#: Stand-ins sent to the core in place of values JSON cannot carry. No field accepts them (no
#: field takes a negative number, a fraction where it wants an integer, nor an integer beyond
#: 2^63 - 1), and the core reads them exactly and writes them as these texts in its messages.
_NON_FINITE = -0.123456789
_NON_FINITE_TEXT = "-0.123456789"
_HUGE = 2**64 - 1
_HUGE_NEG = -(2**63)

#: Integer literals too long for int() (see read_toml): their stand-in -> the text shown.
_LONG_LITERALS: dict[int, str] = {}


def _max_int_digits() -> int:
    get = getattr(sys, "get_int_max_str_digits", None)
    return (get() or 0) if get is not None else 0


def _long_literal(token: str) -> str:
    digits = sum(c.isdigit() for c in token)
    marker = 10**30 + len(_LONG_LITERALS)
    _LONG_LITERALS[marker] = f"{token[:10]}...{token[-4:]} ({digits} digits)"
    return str(marker)


def int_text(value: int) -> str:
    """An integer as written, shortened when long (and safe beyond int->str limits)."""
    if value in _LONG_LITERALS:
        return _LONG_LITERALS[value]
    try:
        text = str(value)
    except ValueError:  # more digits than sys.get_int_max_str_digits()
        return f"an integer of about {int(value.bit_length() * 0.30103) + 1} digits"
    digits = len(text.lstrip("-"))
    return text if digits <= 24 else f"{text[:10]}...{text[-4:]} ({digits} digits)"


def _encode(data: Mapping[str, Any]) -> tuple[str, dict[str, tuple[str, str]]]:
    """JSON text for the core, and the stand-ins put in it: {field path: (the stand-in as the
    core writes it, the value as the user wrote it)}."""
    stand_ins: dict[str, tuple[str, str]] = {}

    def enc(value: Any, where: list[str | int]) -> Any:
        kind = type(value)
        if kind is bool or value is None:
            return value
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise ScenarioError(
                    f"{_path_text(where)}: not Unicode text (a lone surrogate at character {exc.start}); "
                    "accepted: a string of Unicode characters"
                ) from None
            return value
        if _is_table_or_array(value) and len(where) > MAX_DEPTH:
            raise ScenarioError(_too_deep(_deep_path(where)))
        if isinstance(value, (list, tuple)):
            return [enc(v, [*where, i]) for i, v in enumerate(value)]
        if isinstance(value, abc.Mapping):
            return {str(k): enc(v, [*where, str(k)]) for k, v in value.items()}
        if isinstance(value, int):
            if _HUGE_NEG <= value <= _HUGE:
                return value
            stand_in = _HUGE if value > 0 else _HUGE_NEG
            stand_ins[_format_path(where)] = (str(stand_in), int_text(value))
            return stand_in
        if isinstance(value, float):
            if math.isfinite(value):
                return value
            shown = "nan" if math.isnan(value) else "inf" if value > 0 else "-inf"  # TOML's spelling
            stand_ins[_format_path(where)] = (_NON_FINITE_TEXT, shown)
            return _NON_FINITE
        if isinstance(value, (_dt.datetime, _dt.date, _dt.time)):
            return value.isoformat()
        # numpy scalars and similar
        if hasattr(value, "item") and callable(value.item):
            return enc(value.item(), where)
        raise ScenarioError(
            f"{_path_text(where)}: unsupported value of type {type(value).__name__}; got {_short_repr(value)}"
        )

    data = enc(data, [])
    return json.dumps(data, allow_nan=False), stand_ins


def _short_repr(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:60] + f"... ({len(text)} characters)"


def _restore(message: str, stand_ins: dict[str, tuple[str, str]]) -> str:
    """The core's message with the stand-ins replaced by the values as written. A message is
    ``"<path>: ..."``; it shows the stand-ins of that field, or of fields inside its value
    (``flows[0].count: expected an integer, got {"a": nan}``), in the order of their paths."""
    field_path, sep, rest = message.partition(": ")
    if not sep:
        return message
    at = 0
    for path in sorted(stand_ins):
        if path == field_path or path.startswith((field_path + ".", field_path + "[")):
            stand_in, shown = stand_ins[path]
            i = rest.find(stand_in, at)
            if i >= 0:
                rest = rest[:i] + shown + rest[i + len(stand_in):]
                at = i + len(shown)
    return f"{field_path}{sep}{rest}"


# -- locating problems tomllib does not report -----------------------------------------------


@dataclass
class _Scan:
    #: The path of the key whose value nests deeper than asked, if any.
    too_deep: str | None = None
    #: Spans of integer literals with more digits than asked.
    long_ints: list[tuple[int, int]] = field(default_factory=list)


_INT_TOKEN = re.compile(r"[+-]?[0-9][0-9_]*")
_HEADER = re.compile(r"\[\[\s*(.*?)\s*\]\]|\[\s*(.*?)\s*\]")


def _key_text(raw: str) -> str:
    """A TOML key as written (``a . "b"``) -> a path (``a.b``)."""
    parts = re.findall(r'"(?:[^"\\]|\\.)*"|\'[^\']*\'|[^.\s]+', raw)
    return ".".join(p[1:-1] if p[:1] in "\"'" else p for p in parts)


def _scan_toml(text: str, *, max_depth: int | None = None, max_digits: int | None = None) -> _Scan:
    """A minimal TOML tokenizer, for files tomllib gives up on: the key whose value is nested
    deeper than ``max_depth``, or the integer literals with more than ``max_digits`` digits.
    (Only ever run on a file tomllib failed on; it does not check the syntax.)"""
    out = _Scan()
    n = len(text)
    i = 0
    stack: list[str] = []  # open '[' and '{' of the current value
    table = ""  # the current [table] or [[array]] (with its index)
    arrays: dict[str, int] = {}
    key = ""  # the key of the current top-level key/value
    expect_key = True

    def skip_string(i: int) -> int:
        q = text[i]
        if text.startswith(q * 3, i):
            j = i + 3
            while j < n and not text.startswith(q * 3, j):
                j += 2 if (q == '"' and text[j] == "\\") else 1
            return min(n, j + 3)
        j = i + 1
        while j < n and text[j] not in (q, "\n"):
            j += 2 if (q == '"' and text[j] == "\\") else 1
        return j + 1

    def here() -> str:
        return ".".join(x for x in (table, key) if x) or "<scenario>"

    while i < n:
        c = text[i]
        if c == "\n":
            if not stack:
                expect_key = True
            i += 1
        elif c in " \t\r":
            i += 1
        elif c == "#":
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif not stack and expect_key and c == "[":
            j = text.find("\n", i)
            j = n if j < 0 else j
            m = _HEADER.match(text, i, j)
            if m and m.group(1) is not None:
                name = _key_text(m.group(1))
                arrays[name] = arrays.get(name, -1) + 1
                table = f"{name}[{arrays[name]}]"
            elif m:
                table = _key_text(m.group(2))
            i = j
        elif expect_key:
            j = i
            while j < n and text[j] not in "=\n}":
                j = skip_string(j) if text[j] in "\"'" else j + 1
            if not stack:
                key = _key_text(text[i:j])
            expect_key = False
            i = j + 1 if j < n and text[j] == "=" else j
        elif c in "\"'":
            i = skip_string(i)
        elif c in "[{":
            stack.append(c)
            if max_depth is not None and len(stack) > max_depth:
                out.too_deep = here()
                return out
            expect_key = c == "{"
            i += 1
        elif c in "]}":
            if stack:
                stack.pop()
            i += 1
        elif c == ",":
            expect_key = bool(stack) and stack[-1] == "{"
            i += 1
        else:
            j = i
            while j < n and (text[j].isalnum() or text[j] in "_+-.:"):
                j += 1
            j = max(j, i + 1)
            if (max_digits and _INT_TOKEN.fullmatch(text, i, j)
                    and sum(ch.isdigit() for ch in text[i:j]) > max_digits):
                out.long_ints.append((i, j))
            i = j
    return out
