"""The network namespaces, TUN devices and processes of one emulation, and their removal.

A :class:`Testbed` records every object before it creates it, and :meth:`Testbed.close`
removes every recorded one, also after a partial set-up; SIGINT and SIGTERM are held back
while it runs. The two namespaces are named ``ccsim-<pid>-s`` (senders) and ``ccsim-<pid>-r``
(receivers) after the owning process, so :func:`sweep_stale` can remove what a killed run
(SIGKILL leaves no chance to clean up) left behind: namespaces whose owner is dead, and
the processes inside them. The TUN devices live inside the namespaces and go with them.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import struct
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Iterator, Sequence

from .errors import EmulationFailed

NETNS_DIR = Path("/var/run/netns")
NAME_RE = re.compile(r"^ccsim-(\d+)-([sr])$")
#: A run's directory for the traffic programs' results: tempdir/ccsim-<pid>-XXXXXXXX, marked.
DIR_RE = re.compile(r"^ccsim-(\d+)-[A-Za-z0-9_]+$")
DIR_MARK = ".ccsim-emulate"

SENDER_ADDR = "10.77.0.1"
RECEIVER_ADDR = "10.77.0.2"
SENDER_DEV = "ccs0"
RECEIVER_DEV = "ccr0"

#: Per-namespace settings: no IPv6 chatter on the devices; socket buffers that never limit the
#: window (the scenario's rwnd is "unlimited" by default); no cached metrics between flows.
SYSCTLS = (
    "net.ipv6.conf.all.disable_ipv6=1",
    "net.ipv6.conf.default.disable_ipv6=1",
    "net.ipv4.tcp_rmem=4096 131072 67108864",
    "net.ipv4.tcp_wmem=4096 16384 67108864",
    "net.ipv4.tcp_no_metrics_save=1",
)
#: The TUN devices' transmit ring (packets): the emulator drains it at once; a long ring
#: keeps a burst of a whole window from overflowing it before the emulator's next read.
TXQUEUELEN = 10000


def ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    r = subprocess.run(["ip", *args], capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if check and r.returncode != 0:
        detail = " ".join((r.stderr or r.stdout).split()) or f"exit status {r.returncode}"
        raise EmulationFailed(f"`ip {' '.join(args)}` failed: {detail}")
    return r


def list_netns() -> list[str]:
    try:
        return sorted(os.listdir(NETNS_DIR))
    except (FileNotFoundError, NotADirectoryError):
        return []


def netns_pids(name: str) -> list[int]:
    r = ip("netns", "pids", name, check=False)
    return [int(x) for x in r.stdout.split() if x.isdigit()]


def _alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, which exited but was not reaped, does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rpartition(")")[2].split()[:1] != ["Z"]


def _delete_netns(name: str) -> str | None:
    """Kill what runs inside ``name``, then delete it. Returns a problem, or None."""
    for pid in netns_pids(name):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    r = ip("netns", "del", name, check=False)
    if r.returncode != 0 and name in list_netns():
        return f"cannot delete network namespace {name}: {' '.join(r.stderr.split())}"
    return None


def sweep_stale() -> list[str]:
    """Delete ``ccsim-<pid>-*`` namespaces (with the processes inside) and run directories
    whose owning process is dead; return what was removed."""
    removed = []
    for name in list_netns():
        m = NAME_RE.match(name)
        if m is None or _alive(int(m.group(1))):
            continue
        if _delete_netns(name) is None:
            removed.append(name)
    tmp = Path(tempfile.gettempdir())
    for d in tmp.glob("ccsim-*"):
        m = DIR_RE.match(d.name)
        if m and (d / DIR_MARK).exists() and not _alive(int(m.group(1))):
            shutil.rmtree(d, ignore_errors=True)
            removed.append(str(d))
    return removed


@contextlib.contextmanager
def wake_latency(us: int | None) -> Iterator[bool]:
    """Ask the kernel's PM QoS for CPU wake-ups within ``us`` microseconds while this lasts
    (``/dev/cpu_dma_latency``); with 0, idle CPUs poll instead of halting. Yields whether the
    request is in force (None, or no such device: nothing is requested)."""
    fd = None
    if us is not None:
        try:
            fd = os.open("/dev/cpu_dma_latency", os.O_WRONLY | os.O_CLOEXEC)
            os.write(fd, struct.pack("i", int(us)))
        except OSError:
            if fd is not None:
                os.close(fd)
            fd = None
    try:
        yield fd is not None
    finally:
        if fd is not None:
            os.close(fd)  # closing withdraws the request


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """Hold SIGINT and SIGTERM back (delivered on exit) so clean-up cannot be cut short."""
    sigs = {signal.SIGINT, signal.SIGTERM}
    old = signal.pthread_sigmask(signal.SIG_BLOCK, sigs)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


class Testbed:
    """Two namespaces joined by nothing but the emulator: ``sender_ns`` holds TUN device
    ``ccs0`` (``10.77.0.1``, peer ``10.77.0.2``), ``receiver_ns`` holds ``ccr0`` (the
    reverse), both with the given MTU. Use as a context manager; processes started with
    :meth:`spawn` are killed (their whole process group) when it closes."""

    def __init__(self, mtu: int, gso_max_segs: int | None = None) -> None:
        self.mtu = mtu
        #: Segments per GSO packet on the sender's device (None: the kernel's default).
        self.gso_max_segs = gso_max_segs
        self.tag = f"ccsim-{os.getpid()}"
        self.sender_ns = f"{self.tag}-s"
        self.receiver_ns = f"{self.tag}-r"
        self.namespaces: list[str] = []
        self.procs: list[subprocess.Popen] = []
        self.logs: list = []
        self.dir: Path | None = None
        self.removed_stale: list[str] = []

    def netns_path(self, name: str) -> str:
        return str(NETNS_DIR / name)

    def __enter__(self) -> Testbed:
        try:
            self.setup()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def setup(self) -> None:
        self.removed_stale = sweep_stale()
        self.dir = Path(tempfile.mkdtemp(prefix=f"{self.tag}-"))
        (self.dir / DIR_MARK).touch()
        for ns, dev, local, peer in (
            (self.sender_ns, SENDER_DEV, SENDER_ADDR, RECEIVER_ADDR),
            (self.receiver_ns, RECEIVER_DEV, RECEIVER_ADDR, SENDER_ADDR),
        ):
            if ns in list_netns():  # left by an earlier run of this very process
                _delete_netns(ns)
            self.namespaces.append(ns)
            ip("netns", "add", ns)
            ip("-n", ns, "link", "set", "lo", "up")
            ip("-n", ns, "tuntap", "add", "dev", dev, "mode", "tun")
            ip("-n", ns, "link", "set", dev, "mtu", str(self.mtu), "txqueuelen", str(TXQUEUELEN), "up")
            if self.gso_max_segs is not None and ns == self.sender_ns:
                ip("-n", ns, "link", "set", dev, "gso_max_segs", str(self.gso_max_segs))
            ip("-n", ns, "addr", "add", local, "peer", peer, "dev", dev)
            r = subprocess.run(["ip", "netns", "exec", ns, "sysctl", "-q", "-e", "-w", *SYSCTLS],
                               capture_output=True, text=True, stdin=subprocess.DEVNULL)
            if r.returncode != 0:
                raise EmulationFailed(f"setting sysctls in {ns} failed: {' '.join(r.stderr.split())}")

    def route(self, initcwnd: int, rto_min_ms: float) -> None:
        """Route attributes of the sender side's path: initial cwnd and minimum RTO."""
        ip("-n", self.sender_ns, "route", "replace", f"{RECEIVER_ADDR}/32", "dev", SENDER_DEV,
           "src", SENDER_ADDR, "initcwnd", str(initcwnd), "rto_min", f"{rto_min_ms:g}ms")

    def spawn(self, ns: str, argv: Sequence[str], name: str) -> subprocess.Popen:
        """Start ``argv`` inside ``ns``, in its own process group; stderr goes to a log file."""
        assert self.dir is not None
        log = open(self.dir / f"{name}.log", "wb")  # noqa: SIM115 - closed in close()
        self.logs.append(log)
        p = subprocess.Popen(["ip", "netns", "exec", ns, *argv], stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=log, start_new_session=True,
                             cwd=self.dir)
        self.procs.append(p)
        return p

    def log_tail(self, name: str) -> str:
        if self.dir is None:
            return ""
        try:
            text = (self.dir / f"{name}.log").read_text(errors="replace")
        except OSError:
            return ""
        lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
        return lines[-1] if lines else ""

    def close(self) -> list[str]:
        """Remove everything this testbed created. Returns the problems met (normally none)."""
        problems: list[str] = []
        with signals_held():
            for p in self.procs:
                if p.poll() is None:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(p.pid, signal.SIGTERM)
            deadline = time.monotonic() + 1.0
            for p in self.procs:
                try:
                    p.wait(timeout=max(0.0, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    # The traffic programs do not fork: the group is the process itself.
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(p.pid, signal.SIGKILL)
                    with contextlib.suppress(subprocess.TimeoutExpired):
                        p.wait(timeout=2.0)
                if p.poll() is None:
                    problems.append(f"process {p.pid} did not exit")
            self.procs.clear()
            for ns in reversed(self.namespaces):
                problem = _delete_netns(ns)
                if problem:
                    problems.append(problem)
            self.namespaces.clear()
            for log in self.logs:
                log.close()
            self.logs.clear()
            if self.dir is not None:
                shutil.rmtree(self.dir, ignore_errors=True)
                self.dir = None
        return problems
