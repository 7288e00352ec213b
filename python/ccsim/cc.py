"""Congestion controllers written in Python.

Subclass :class:`CongestionControl`, then either register the class::

    class Reno(ccsim.CongestionControl):
        name = "myreno"                 # the name scenarios use
        params = {"beta": 0.5}          # defaults; scenarios override with params = { ... }

        def ssthresh(self, sock):
            return max(int(sock.cwnd * self.beta), 2)

        def cong_avoid(self, sock, acked):
            ...

    ccsim.register(Reno)                # then cc = "myreno"

or name it from a scenario file as ``cc = "mycc.py:Reno"`` (a path relative to the scenario
file, a colon, the class name): the module is read when the scenario is loaded, registered
under that reference, and its source travels with every run of a sweep (process pool or Ray)
and is hashed into the stored runs' keys, so editing the file invalidates cached runs.

The hooks, their order and their arguments are the engine's (Linux's ``tcp_congestion_ops``;
docs/python_cc.md): ``init(sock)``, ``ssthresh(sock) -> int``, ``cong_avoid(sock, acked)``,
``set_state(sock, state)``, ``cwnd_event(sock, event)``, ``pkts_acked(sock, sample)``,
``in_ack_event(sock, flags)``, ``cong_control(sock, rs)``, ``skb_marked_lost(sock, skb)``,
``undo_cwnd(sock) -> int``, and
``telemetry() -> dict``. Only the hooks a class overrides are called. ``sock`` has the fields
of the engine's ``SockState`` (windows in packets, times in ns, rates in bytes per second);
cwnd, ssthresh, cwnd_cnt, cwnd_clamp, pacing_rate and cwr_request are writable.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import re
import sys
from enum import IntEnum
from pathlib import Path
from typing import Any, Mapping

from . import _core
from .scenario import ScenarioError

#: The hooks a class may override, in the engine's trait order.
HOOKS = ("init", "ssthresh", "cong_avoid", "set_state", "cwnd_event", "pkts_acked", "in_ack_event",
         "cong_control", "skb_marked_lost", "undo_cwnd", "telemetry")

#: ``in_ack_event``'s flag for an ACK with ECE (Linux ``CA_ACK_ECE``).
CA_ACK_ECE = 4

#: A file reference: ``path/to/module.py:ClassName``.
FILE_REF = re.compile(r"^(?P<path>.+\.py):(?P<cls>[A-Za-z_][A-Za-z0-9_]*)$")


class CaState(IntEnum):
    """``sock.ca_state`` and ``set_state``'s argument (Linux ``enum tcp_ca_state``)."""

    OPEN = 0
    DISORDER = 1
    CWR = 2
    RECOVERY = 3
    LOSS = 4


class CaEvent(IntEnum):
    """``cwnd_event``'s argument: Linux ``enum tcp_ca_event``, with Linux's values, the events
    the engine raises."""

    TX_START = 0
    COMPLETE_CWR = 2
    LOSS = 3


class AlgorithmError(ScenarioError):
    """A congestion controller written in Python failed, or could not be registered.

    For a failure during a run the message names the algorithm, the flow, the hook and the
    simulated time, and ends with the traceback of the user's code; ``__cause__`` is the
    user's exception. The CLI prints it and exits with status 2.
    """

    def __init__(self, message: object) -> None:
        # Keep the lines (the traceback); ScenarioError would join them.
        ValueError.__init__(self, str(message))


class CongestionControl:
    """Base class of a congestion controller written in Python: every hook is a no-op (or
    Linux's default: ``ssthresh`` halves, ``undo_cwnd`` restores the larger of cwnd and
    prior_cwnd). Class attributes:

    - ``name``: the name scenarios use (required by :func:`register`);
    - ``params``: parameter defaults (bool, int or float); each arrives as an attribute of the
      instance (``self.beta``) and in ``self.params``, validated against the default's type;
    - ``pacing``: the flow is paced at ``sock.pacing_rate`` (as BBR);
    - ``needs_ecn``: Linux ``TCP_CONG_NEEDS_ECN`` (the receiver echoes CE exactly);
    - ``ect1``: data is sent as ECT(1) on an ECN connection.
    """

    name: str = ""
    params: Mapping[str, bool | int | float] = {}
    pacing: bool = False
    needs_ecn: bool = False
    ect1: bool = False

    def init(self, sock: Any) -> None:
        pass

    def ssthresh(self, sock: Any) -> int:
        return max(sock.cwnd >> 1, 2)

    def cong_avoid(self, sock: Any, acked: int) -> None:
        pass

    def set_state(self, sock: Any, state: int) -> None:
        pass

    def cwnd_event(self, sock: Any, event: int) -> None:
        pass

    def pkts_acked(self, sock: Any, sample: Any) -> None:
        pass

    def in_ack_event(self, sock: Any, flags: int) -> None:
        pass

    def cong_control(self, sock: Any, rs: Any) -> None:
        pass

    def skb_marked_lost(self, sock: Any, skb: Any) -> None:
        pass

    def undo_cwnd(self, sock: Any) -> int:
        return max(sock.cwnd, sock.prior_cwnd)

    def telemetry(self) -> dict[str, Any]:
        return {}


#: What a worker process needs to register each algorithm this process registered:
#: name -> {"source", "path", "class", "sha256"} (source None for a class with no file).
_SHIPPABLE: dict[str, dict[str, Any]] = {}


def _builtin_names() -> set[str]:
    import json

    return {a["name"] for a in json.loads(_core.algorithms()) if not a.get("registered")}


def _param_decls(cls: type, where: str) -> list[tuple[str, float, str]]:
    params = getattr(cls, "params", {})
    if not isinstance(params, Mapping):
        raise AlgorithmError(f"{where}: params must be a dict of name -> default; got {type(params).__name__}")
    out = []
    for k, v in params.items():
        if not isinstance(k, str) or not k.isidentifier():
            raise AlgorithmError(f"{where}: parameter name {k!r} is not an identifier")
        if isinstance(v, bool):
            out.append((k, 1.0 if v else 0.0, "bool"))
        elif isinstance(v, int):
            if abs(v) > 2**53:
                raise AlgorithmError(f"{where}: parameter {k} = {v}: accepted: an integer within +-2^53")
            out.append((k, float(v), "int"))
        elif isinstance(v, float):
            if v != v or v in (float("inf"), float("-inf")):
                raise AlgorithmError(f"{where}: parameter {k} = {v}: accepted: a finite number")
            out.append((k, v, "float"))
        else:
            raise AlgorithmError(f"{where}: parameter {k} = {v!r}: accepted: a bool, an int or a float default")
    return out


def _module_file(cls: type) -> tuple[str | None, str | None]:
    """(source text, path) of the file that defines ``cls``, if there is one."""
    try:
        path = inspect.getsourcefile(cls)
    except (TypeError, OSError):
        return None, None
    if not path or not Path(path).is_file():
        return None, None
    return Path(path).read_text(encoding="utf-8"), str(path)


def register(cls: type, *, name: str | None = None) -> type:
    """Register ``cls`` (a :class:`CongestionControl` subclass) under ``name`` (by default its
    ``name`` attribute), so that scenarios can say ``cc = NAME``. Registering a name again
    replaces it. Returns the class (usable as a decorator).

    Raises :class:`AlgorithmError` for a class that is not a subclass of
    :class:`CongestionControl`, has no ``name``, takes a built-in algorithm's name, or declares
    parameters that are not bool, int or float.
    """
    source, path = _module_file(cls) if isinstance(cls, type) else (None, None)
    tag = hashlib.sha256(source.encode("utf-8")).hexdigest() if source is not None else f"object:{id(cls)}"
    return _register(cls, name, source=source, path=path, tag=tag)


def _register(cls: Any, name: str | None, *, source: str | None, path: str | None, tag: str) -> type:
    what = getattr(cls, "__qualname__", repr(cls))
    if not (isinstance(cls, type) and issubclass(cls, CongestionControl)):
        raise AlgorithmError(f"register: {what} is not a subclass of ccsim.CongestionControl")
    if name is None:
        name = cls.__dict__.get("name") or getattr(cls, "name", "")
        if not isinstance(name, str) or not name.strip():
            raise AlgorithmError(f"register: {what} has no name; set the class attribute name = \"...\" (the name scenarios use)")
    if name in _builtin_names():
        raise AlgorithmError(f"register: {what}: name {name!r} is a built-in algorithm's; choose another")
    where = f"register: {what}"
    params = _param_decls(cls, where)
    hooks = [h for h in HOOKS if getattr(cls, h) is not getattr(CongestionControl, h)]
    doc = inspect.getdoc(cls) or ""
    if doc == inspect.getdoc(CongestionControl):
        doc = ""
    summary = doc.strip().splitlines()[0] if doc.strip() else f"Python class {what}"
    try:
        _core.register_cc(name, cls, params, hooks, tag, summary=summary, source=path or "Python",
                          pacing=bool(cls.pacing), needs_ecn=bool(cls.needs_ecn), ect1=bool(cls.ect1))
    except ValueError as exc:
        raise AlgorithmError(f"{where}: {exc}") from None
    _SHIPPABLE[name] = {"source": source, "path": path, "class": cls.__name__, "qualname": cls.__qualname__,
                        "module": cls.__module__, "sha256": tag}
    return cls


def unregister(name: str) -> bool:
    """Remove a registered algorithm; False if there was none of that name."""
    _SHIPPABLE.pop(name, None)
    return bool(_core.unregister_cc(name))


def registered() -> list[str]:
    """The names registered from Python, in registration order."""
    return list(_core.registered_ccs())


# -- file references ---------------------------------------------------------------------


def _exec_module(source: str, path: str, sha: str) -> Any:
    """A module made from ``source`` (the file ``path``), under a name of its content hash."""
    mod_name = f"ccsim_user_{sha[:16]}"
    mod = sys.modules.get(mod_name)
    if mod is not None:
        return mod
    spec = importlib.util.spec_from_loader(mod_name, loader=None, origin=path)
    assert spec is not None
    mod = importlib.util.module_from_spec(spec)
    mod.__file__ = path
    code = compile(source, path, "exec")
    sys.modules[mod_name] = mod
    try:
        exec(code, mod.__dict__)  # noqa: S102 - the user's own algorithm, named by their scenario
    except BaseException:
        del sys.modules[mod_name]
        raise
    return mod


def _register_source(ref: str, source: str, path: str, cls_name: str, sha: str) -> None:
    """Register the class ``cls_name`` of a module's source under ``ref`` (once per content)."""
    known = _SHIPPABLE.get(ref)
    if known is not None and known["sha256"] == sha and ref in _core.registered_ccs():
        return
    import traceback

    try:
        mod = _exec_module(source, path, sha)
    except Exception as exc:  # noqa: BLE001 - the user's module failed to import: show where
        tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__.tb_next if exc.__traceback__ else None))
        raise AlgorithmError(f"{ref}: importing {path} failed:\n{tb.rstrip()}") from exc
    cls = getattr(mod, cls_name, None)
    if cls is None:
        found = sorted(k for k, v in vars(mod).items()
                       if isinstance(v, type) and issubclass(v, CongestionControl) and v is not CongestionControl)
        raise AlgorithmError(f"{ref}: {path} has no class {cls_name}; "
                             f"accepted: {', '.join(found) if found else 'a ccsim.CongestionControl subclass defined there'}")
    _register(cls, ref, source=source, path=path, tag=sha)


def load_reference(ref: str, base: Path) -> None:
    """Read and register the file reference ``ref`` (``module.py:Class``) relative to ``base``."""
    m = FILE_REF.match(ref)
    assert m is not None
    p = Path(m["path"])
    if not p.is_absolute():
        p = base / p
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise AlgorithmError(f"{ref}: cannot read {p}: {exc.strerror or exc}; accepted: MODULE.py:CLASS, "
                             "the module's path relative to the scenario file") from None
    try:
        source = data.decode("utf-8")
    except UnicodeDecodeError:
        raise AlgorithmError(f"{ref}: {p} is not UTF-8 text") from None
    sha = hashlib.sha256(data).hexdigest()
    _register_source(ref, source, str(p), m["cls"], sha)


def algorithm_names(data: Mapping[str, Any]) -> list[str]:
    """Every ``cc`` a scenario dict names (flows), in order, once each."""
    out: list[str] = []
    for _, cc in _cc_fields(data):
        if cc not in out:
            out.append(cc)
    return out


def resolve_references(data: Mapping[str, Any], base: Path | None, *, reload: bool = False) -> None:
    """Register the file references a scenario dict names, relative to ``base`` (the scenario
    file's folder; the working directory if None). Already registered references are kept
    unless ``reload`` (a scenario file being loaded reads its modules again)."""
    for where, cc in _cc_fields(data):
        if FILE_REF.match(cc) and (reload or cc not in _SHIPPABLE):
            try:
                load_reference(cc, base if base is not None else Path.cwd())
            except AlgorithmError as exc:
                raise AlgorithmError(f"{where}: {exc}") from exc.__cause__


def _cc_fields(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(field path, value) of every ``cc`` string in the flows and workloads tables."""
    out = []
    for key in ("flows", "workloads"):
        tables = data.get(key)
        if isinstance(tables, list):
            for i, t in enumerate(tables):
                cc = t.get("cc") if isinstance(t, Mapping) else None
                if isinstance(cc, str):
                    out.append((f"{key}[{i}].cc", cc))
    return out


def modules_for(data: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """What a worker needs to register the Python algorithms a scenario dict names."""
    return {cc: _SHIPPABLE[cc] for cc in algorithm_names(data) if cc in _SHIPPABLE}


def hashes_for(data: Mapping[str, Any]) -> dict[str, str]:
    """name -> content hash of each Python algorithm a scenario dict names (run keys)."""
    return {cc: m["sha256"] for cc, m in modules_for(data).items()}


def install(modules: Mapping[str, Mapping[str, Any]]) -> None:
    """In a worker: register what :func:`modules_for` gave (module source travels; a class
    without a source file is imported by its module and name)."""
    for name, m in modules.items():
        if m.get("source") is not None:
            _register_source(name, m["source"], m["path"], m["class"], m["sha256"])
        elif name not in _core.registered_ccs():
            import importlib

            obj: Any = importlib.import_module(m["module"])
            for part in m["qualname"].split("."):
                obj = getattr(obj, part)
            _register(obj, name, source=None, path=None, tag=m["sha256"])


def user_error(exc: BaseException, source: Path | None = None) -> AlgorithmError:
    """The AlgorithmError for a run stopped by a Python hook (``_core.AlgorithmError``): the
    engine's line (algorithm, flow, hook, simulated time) and the traceback of the user's
    code, which is all of the cause's traceback (the hook is called from the engine)."""
    import traceback

    cause = exc.__cause__
    lines = [f"{source}: {exc}" if source is not None else str(exc)]
    if cause is not None and cause.__traceback__ is not None:
        lines.append("".join(traceback.format_exception(type(cause), cause, cause.__traceback__)).rstrip())
    return AlgorithmError("\n".join(lines))
