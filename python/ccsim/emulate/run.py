"""``ccsim.emulate``: a scenario's dumbbell with real Linux TCP over the user-space emulator.

What runs (see docs/validation.md, "Real Linux TCP"):

- two network namespaces with a TUN device each (:mod:`.netns`), MTU = the largest MSS + 52,
  so that the kernel's segments carry MSS payload bytes as ccsim's do;
- the link emulator (``ccsim._core.emulate_link``, crate ``ccsim-emu``) on this process's main
  thread, attached to both devices: the bottleneck's rate, delay, drop-tail buffer and loss;
- one receiver program and one sender program per flow (:mod:`.traffic`), each sender
  setting ``TCP_CONGESTION`` to the kernel algorithm of the flow (``reno`` for ``newreno``).

The connections are opened before the run's time zero, so data starts at each flow's
``start`` as in ccsim, whose connections start established.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import signal
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from .. import _core, schema
from ..result import Result, _as_scenario, as_seed
from ..scenario import Scenario, ScenarioError, algorithms
from . import netns
from .errors import EmulationError, EmulationFailed, Terminated

#: The highest bottleneck rate at which the emulator holds its accuracy on the project's
#: 2-vCPU VM: delivered rate within 2% and added delay within 1 ms of the configured values
#: (measured with ``validation/kernel/accuracy.py``; the table is in docs/validation.md,
#: "Real Linux TCP", "Emulator accuracy").
MAX_RATE_BPS = 600_000_000
#: Where the measurement that set MAX_RATE_BPS is documented.
MAX_RATE_SOURCE = 'docs/validation.md, "Emulator accuracy"'

#: The emulator's event loop runs under SCHED_FIFO at this priority (it sleeps in ppoll between
#: packets, so it takes CPU only when there is work): without it, other processes on a busy
#: machine delayed hand-overs by up to several milliseconds.
REALTIME_PRIORITY = 10

#: While the emulator runs, the CPUs are asked (PM QoS, /dev/cpu_dma_latency) to wake within
#: this many microseconds: 0 makes idle vCPUs poll instead of halting. On the project's VM
#: this cut the emulator's hand-over lateness p99 from ~400 to ~90 us, and with it a single
#: kernel BBR flow's excess queue (validation/kernel/bbr_queue.py, docs/validation.md). The
#: polling only uses otherwise idle CPU time, and only during the run.
WAKE_LATENCY_US = 0

#: ccsim algorithm -> Linux congestion-control module, where the names differ.
KERNEL_NAME = {"newreno": "reno"}
#: At most this many flows: each is one sender process.
MAX_FLOWS = 32
LISTEN_PORT = 5001
FLOW_PORT_BASE = 20000
HEADER_BYTES = 52
#: TCP_INFO sampling interval of the senders.
TCP_INFO_INTERVAL_NS = 10_000_000
#: The receiver counts bytes in bins this long.
BIN_NS = 1_000_000
#: From starting the traffic programs to time zero: room for their start-up.
LEAD_NS = 1_200_000_000
LEAD_PER_FLOW_NS = 150_000_000
#: Connections open this long before time zero (their handshakes cross an idle link).
CONNECT_AHEAD_NS = 500_000_000
#: How long the traffic programs may take to write their results after the run.
FINISH_TIMEOUT_S = 10.0

#: What Linux does where the scenario has a [tcp] setting the kernel offers no per-socket
#: control for: (resolved key, Linux's behaviour as a resolved value, the scenario's key,
#: what Linux does, in words).
LINUX_TCP: tuple[tuple[str, Any, str, str], ...] = (
    ("recovery", "rack", "recovery", "Linux detects losses with RACK-TLP"),
    ("delayed_ack", True, "delayed_ack", "Linux delays ACKs (with its quick-ACK mode)"),
    ("delack_timeout_ns", 40_000_000, "delack_timeout", "Linux's delayed-ACK timer starts at 40 ms and adapts"),
    ("max_rto_ns", 120_000_000_000, "max_rto", "Linux's maximum RTO is 120 s"),
    ("initial_rto_ns", 1_000_000_000, "initial_rto", "Linux's initial RTO is 1 s"),
    ("rwnd_bytes", None, "rwnd", "the receive window is Linux's autotuned window (up to 64 MB)"),
    ("timestamp_tick_ns", 1_000_000, "timestamp_tick", "Linux's TCP timestamps tick every 1 ms"),
    ("pacing", "auto", "pacing", "Linux paces only algorithms that ask for it (BBR)"),
    ("dupthresh", 3, "dupthresh", "Linux starts with a reordering degree of 3"),
    ("ecn", False, "ecn", "the emulated bottleneck never marks CE, so ECN changes nothing"),
    ("tsecr_rtt", True, "tsecr_rtt", "Linux also times ACKs of retransmitted data from the timestamp echo"),
    ("rto_estimator", "linux", "rto_estimator", "Linux's RTO is SRTT + max(4 x mean deviation, rto_min)"),
)

_LOCK = threading.Lock()


@dataclass
class FlowPlan:
    index: int
    group: int
    cc: str
    kernel_cc: str
    port: int
    mss: int
    start_ns: int
    #: When the sender stops: the flow's stop, else the end of the run.
    stop_ns: int
    size: int | None
    access_delay_ns: int


@dataclass
class Plan:
    """Everything an emulation run needs, checked; made without side effects."""

    scenario: Scenario
    resolved: dict[str, Any]
    seed: int
    duration_ns: int
    sample_interval_ns: int
    flows: list[FlowPlan]
    mtu: int
    initcwnd: int
    rto_min_ms: float
    ignored: list[str] = field(default_factory=list)


def kernel_algorithms() -> list[str]:
    """The kernel's congestion-control algorithms (``tcp_available_congestion_control``)."""
    try:
        text = Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text()
    except OSError:
        return []
    return text.split()


def _ccsim_name(kernel: str) -> str:
    for ours, theirs in KERNEL_NAME.items():
        if theirs == kernel:
            return ours
    return kernel


def _fmt_rate(bps: float) -> str:
    for unit, scale in (("Gbps", 1e9), ("Mbps", 1e6), ("kbps", 1e3)):
        if bps >= scale:
            return f"{bps / scale:g}{unit}"
    return f"{bps:g}bps"


def plan(scenario: Any, seed: int | None = None) -> Plan:
    """Check a scenario for emulation (no side effects) and resolve what the run needs.

    Raises :class:`ccsim.ScenarioError` for an invalid scenario and :class:`EmulationError`
    for one the kernel or the emulator cannot run (the message names the field, the value and
    what is accepted).
    """
    sc = _as_scenario(scenario)
    norm = sc.validate().to_dict()
    if seed is not None:
        seed = as_seed(seed)
        if not 0 <= seed <= 2**63 - 1:
            raise ScenarioError(f"seed: {seed} is out of range; accepted: an integer in [0, {2**63 - 1}]")
    res = json.loads(_core.resolve(sc.to_json()))
    prefix = f"{sc.source}: " if sc.source is not None else ""

    def fail(message: str) -> EmulationError:
        return EmulationError(prefix + message)

    bn = res["bottleneck"]
    if bn["rate_bps"] > MAX_RATE_BPS:
        raise fail(
            f"bottleneck.rate: {json.dumps(norm['bottleneck']['rate'])} is above what the link emulator holds on this "
            f"machine; accepted: up to {_fmt_rate(MAX_RATE_BPS)} (measured: {MAX_RATE_SOURCE})"
        )
    if len(res["flows"]) > MAX_FLOWS:
        raise fail(f"flows: {len(res['flows'])} flows; accepted: at most {MAX_FLOWS} in emulation "
                   "(one sender process each)")
    available = kernel_algorithms()
    accepted = ", ".join(
        f"{_ccsim_name(k)} (kernel {k})" if _ccsim_name(k) != k else k for k in available
    )
    accepted = (f"{accepted} (this kernel's tcp_available_congestion_control)" if accepted
                else "none: this kernel lists no TCP congestion-control algorithm")
    duration = res["duration_ns"]
    flows: list[FlowPlan] = []
    for i, f in enumerate(res["flows"]):
        kcc = KERNEL_NAME.get(f["cc"], f["cc"])
        if kcc not in available:
            raise fail(
                f"flows[{f['group']}].cc: the kernel has no congestion-control algorithm {json.dumps(f['cc'])}"
                f"{f' (kernel {kcc})' if kcc != f['cc'] else ''}; accepted: {accepted}"
            )
        stop = f["stop_ns"] if f["stop_ns"] is not None else duration
        flows.append(FlowPlan(index=i, group=f["group"], cc=f["cc"], kernel_cc=kcc, port=FLOW_PORT_BASE + i,
                              mss=f["tcp"]["mss"], start_ns=f["start_ns"], stop_ns=stop, size=f["size_bytes"],
                              access_delay_ns=f["access_delay_ns"]))
    first = res["flows"][0]["tcp"]
    p = Plan(
        scenario=sc,
        resolved=res,
        seed=res["seed"] if seed is None else seed,
        duration_ns=duration,
        sample_interval_ns=res["sample_interval_ns"],
        flows=flows,
        mtu=max(f.mss for f in flows) + HEADER_BYTES,
        initcwnd=first["initial_cwnd"],
        rto_min_ms=first["min_rto_ns"] / 1e6,
    )
    p.ignored = _ignored(norm, res, p)
    return p


def _show(value: Any) -> str:
    return json.dumps(value)


def _ignored(norm: dict[str, Any], res: dict[str, Any], p: Plan) -> list[str]:
    """The scenario's settings the kernel does not honour, each with what happens instead."""
    out: list[str] = []
    groups = norm["flows"]
    flows_of = {g: [f for f in res["flows"] if f["group"] == g] for g in range(len(groups))}
    honoured = {
        "initial_cwnd": (p.initcwnd, "initial_cwnd", f"the route's initcwnd is {p.initcwnd}, one value for every flow"),
        "min_rto_ns": (p.rto_min_ms * 1e6, "min_rto", f"the route's rto_min is {p.rto_min_ms:g} ms, one value for every flow"),
    }
    checks = [(key, linux, name, why) for key, linux, name, why in LINUX_TCP]
    checks += [(key, v, name, why) for key, (v, name, why) in honoured.items()]
    for key, linux, name, why in checks:
        inherit = [g for g in range(len(groups)) if name not in groups[g]]
        if inherit and flows_of[inherit[0]][0]["tcp"][key] != linux:
            out.append(f"tcp.{name} = {_show(norm['tcp'][name])}: {why}")
        for g, grp in enumerate(groups):
            if name in grp and flows_of[g][0]["tcp"][key] != linux:
                out.append(f"flows[{g}].{name} = {_show(grp[name])}: {why}")
    if "tick" in norm["bottleneck"]:
        out.append(f"bottleneck.tick = {_show(norm['bottleneck']['tick'])}: the link emulator serves every packet at "
                   "its exact time (no Dummynet tick)")
    defaults = {a["name"]: {q["name"]: q["default"] for q in a.get("params", [])} for a in algorithms()}
    for g, grp in enumerate(groups):
        for k, v in (grp.get("params") or {}).items():
            d = defaults.get(grp["cc"], {}).get(k)
            if d is not None and float(v) != float(d):
                out.append(f"flows[{g}].params.{k} = {_show(v)}: the kernel's {KERNEL_NAME.get(grp['cc'], grp['cc'])} "
                           "runs with its module parameters (global, not set by ccsim)")
        if flows_of[g][0]["access_rate_bps"] != 1_000_000_000:
            out.append(f"flows[{g}].access_rate = {_show(grp['access_rate'])}: the emulation has no access links "
                       "(only access_delay is applied)")
    return out


def check_environment() -> None:
    """Raise :class:`EmulationError` unless this process can build the emulation."""
    if not sys.platform.startswith("linux"):
        raise EmulationError(f"platform: {sys.platform!r}; accepted: Linux (network namespaces and TUN devices)")
    uid = os.geteuid()
    if uid != 0:
        raise EmulationError(
            f"user: ccsim emulate runs as uid {uid}; accepted: root (uid 0), which creating network namespaces "
            "and TUN devices needs (e.g. sudo ccsim emulate FILE.toml)"
        )
    if shutil.which("ip") is None:
        raise EmulationError("ip: command not found; accepted: iproute2's `ip` on PATH (apt-get install iproute2)")
    if shutil.which("sysctl") is None:
        raise EmulationError("sysctl: command not found; accepted: procps' `sysctl` on PATH (apt-get install procps)")
    if not os.path.exists("/dev/net/tun"):
        raise EmulationError("/dev/net/tun: not found; accepted: a kernel with TUN devices (modprobe tun)")
    if not os.path.exists("/proc/self/ns/net"):
        raise EmulationError("/proc/self/ns/net: not found; accepted: a kernel with network namespaces")


@contextlib.contextmanager
def sigterm_interrupts() -> Iterator[None]:
    """SIGTERM raises :class:`Terminated`, a KeyboardInterrupt (so clean-up runs), while
    this context is entered (in the main thread; elsewhere signals cannot be handled)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:  # noqa: ARG001
        raise Terminated("terminated")

    old = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


def emulate(scenario: Any, seed: int | None = None, *, wake_latency_us: int | None = WAKE_LATENCY_US,
            gso_max_segs: int | None = None) -> Result:
    """Run the scenario with real Linux TCP over the emulated bottleneck (Linux, root).

    ``scenario`` and ``seed`` are as for :func:`ccsim.run` (the seed drives the emulator's
    random losses). Returns a :class:`ccsim.Result` whose ``to_dict()`` has the schema of a
    simulation's summary plus ``mode`` (``"emulation"``), ``ignored`` (the scenario's settings
    the kernel does not honour), ``kernel`` and ``emulator``. It takes the scenario's duration
    in real time, plus a few seconds of set-up. ``wake_latency_us`` is the CPU wake-up latency
    requested from the kernel while the emulator runs (PM QoS; None: no request).
    ``gso_max_segs`` caps the segments of the sender device's GSO packets (``ip link set dev
    ... gso_max_segs N``; 1: the kernel's TCP sends one segment per packet, no GSO bursts;
    None: the kernel's default), a validation knob: ccsim models no TSO/GSO.

    Raises :class:`ccsim.ScenarioError` / :class:`EmulationError` for bad input or a missing
    prerequisite, :class:`EmulationFailed` if the run breaks down. Every namespace, device and
    process it created is removed before it returns or raises, also on KeyboardInterrupt
    (Ctrl-C) and SIGTERM.
    """
    p = plan(scenario, seed)
    check_environment()
    if not _LOCK.acquire(blocking=False):
        raise EmulationError("emulate: another emulation is running in this process; accepted: one at a time")
    try:
        with sigterm_interrupts():
            t0 = time.monotonic()
            testbed = netns.Testbed(mtu=p.mtu, gso_max_segs=gso_max_segs)
            try:
                testbed.setup()
                summary, columns = _run(p, testbed, wake_latency_us)
            finally:
                problems = testbed.close()
            if problems:
                raise EmulationFailed("clean-up incomplete: " + "; ".join(problems))
            summary["wall_seconds"] = time.monotonic() - t0
    finally:
        _LOCK.release()
    return Result(summary, columns, scenario=p.scenario)


def _traffic(tag: str, *args: str) -> list[str]:
    return [sys.executable, "-m", "ccsim.emulate.traffic", "--tag", tag, *args]


def _run(p: Plan, tb: netns.Testbed, wake_latency_us: int | None) -> tuple[dict[str, Any], dict[str, list]]:
    assert tb.dir is not None
    tb.route(p.initcwnd, p.rto_min_ms)
    bn = p.resolved["bottleneck"]
    epoch = time.monotonic_ns() + LEAD_NS + LEAD_PER_FLOW_NS * len(p.flows)
    end = epoch + p.duration_ns
    listen = f"{netns.RECEIVER_ADDR}:{LISTEN_PORT}"
    receiver = tb.spawn(tb.receiver_ns, _traffic(tb.tag, "recv", "--listen", listen, "--epoch-ns", str(epoch),
                                                 "--end-ns", str(end), "--bin-ns", str(BIN_NS),
                                                 "--out", str(tb.dir)), "recv")
    senders = []
    for f in p.flows:
        args = ["send", "--cc", f.kernel_cc, "--mss", str(f.mss),
                "--bind", f"{netns.SENDER_ADDR}:{f.port}", "--connect", listen,
                "--connect-ns", str(epoch - CONNECT_AHEAD_NS), "--start-ns", str(epoch + f.start_ns),
                "--stop-ns", str(epoch + f.stop_ns), "--size", str(f.size or 0),
                "--sample-ns", str(TCP_INFO_INTERVAL_NS), "--out", str(tb.dir / f"send-{f.index}.json")]
        senders.append(tb.spawn(tb.sender_ns, _traffic(tb.tag, *args), f"send-{f.index}"))

    failure: list[str] = []

    def on_tick() -> bool:
        for f, proc in zip(p.flows, senders):
            rc = proc.poll()
            if rc is not None and rc != 0:
                failure.append(f"flow {f.index}'s sender ({f.kernel_cc}) exited with status {rc}: "
                               f"{_sender_error(tb, f) or tb.log_tail(f'send-{f.index}') or 'no message'}")
                return True
        rc = receiver.poll()
        if rc is not None:
            failure.append(f"the receiver exited early with status {rc}: {tb.log_tail('recv') or 'no message'}")
            return True
        return False

    config = {
        "sender": {"netns": tb.netns_path(tb.sender_ns), "device": netns.SENDER_DEV},
        "receiver": {"netns": tb.netns_path(tb.receiver_ns), "device": netns.RECEIVER_DEV},
        "rate_bps": bn["rate_bps"],
        "delay_ns": bn["delay_ns"],
        "buffer_pkts": bn["buffer_pkts"],
        "buffer_bytes": bn["buffer_bytes"],
        "loss": bn["loss"],
        "ack_loss": bn["ack_loss"],
        "seed": p.seed,
        "mtu": p.mtu,
        "flows": [{"port": f.port, "access_delay_ns": f.access_delay_ns} for f in p.flows],
        "start_ns": epoch,
        "end_ns": end,
        "sample_interval_ns": p.sample_interval_ns,
        "realtime_priority": REALTIME_PRIORITY,
    }
    try:
        with netns.wake_latency(wake_latency_us) as requested:
            stats = json.loads(_core.emulate_link(json.dumps(config), on_tick))
    except OSError as exc:
        raise EmulationFailed(f"link emulator: {exc}") from None
    stats["emulator"]["wake_latency_us"] = wake_latency_us if requested else None
    if failure:
        raise EmulationFailed(failure[0])
    deadline = time.monotonic() + FINISH_TIMEOUT_S
    for name, proc in [("the receiver", receiver)] + [(f"flow {f.index}'s sender", s) for f, s in zip(p.flows, senders)]:
        try:
            rc = proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except Exception:  # noqa: BLE001 - TimeoutExpired
            raise EmulationFailed(f"{name} did not finish within {FINISH_TIMEOUT_S:g} s of the end of the run") from None
        if rc != 0:
            raise EmulationFailed(f"{name} exited with status {rc}: {tb.log_tail(name)}")
    return _summarize(p, tb.dir, epoch, stats)


def _sender_error(tb: netns.Testbed, f: FlowPlan) -> str | None:
    assert tb.dir is not None
    try:
        return json.loads((tb.dir / f"send-{f.index}.json").read_text()).get("error")
    except (OSError, ValueError):
        return None


# -- the summary -----------------------------------------------------------------------------


def _summarize(p: Plan, run_dir: Path, epoch: int, stats: dict[str, Any]) -> tuple[dict[str, Any], dict[str, list]]:
    import numpy as np

    recv = json.loads((run_dir / "recv.json").read_text())
    nbins = recv["nbins"]
    dur = p.duration_ns
    flows_out: list[dict[str, Any]] = []
    per_flow_series: list[tuple[FlowPlan, Any, dict[str, list]]] = []
    for f in p.flows:
        send = json.loads((run_dir / f"send-{f.index}.json").read_text())
        bin_file = run_dir / f"recv-{f.port}.bin"
        bins = np.fromfile(bin_file, dtype=np.uint64) if bin_file.exists() else np.zeros(nbins, dtype=np.uint64)
        cum = np.cumsum(bins, dtype=np.int64)
        start_bin = f.start_ns // BIN_NS
        end_ns = f.stop_ns
        completion = None
        if f.size is not None:
            got = np.nonzero(cum >= f.size)[0]
            if len(got):
                completion = int(got[0] + 1) * BIN_NS  # the end of the bin holding the last byte
                end_ns = min(end_ns, completion)
        end_bin = min(nbins, -(-end_ns // BIN_NS))
        got_bytes = int(bins[start_bin:end_bin].sum())
        conn = max(1, end_ns - f.start_ns)
        samples = send.get("samples", {})
        rtt = np.asarray(samples.get("rtt_us", []), dtype=np.float64)
        valid = rtt > 0
        final = send.get("final", {}) or {}
        ca = np.asarray(samples.get("ca_state", []), dtype=np.int64)
        recoveries = int(np.sum((ca[1:] == 3) & (ca[:-1] != 3))) + int(len(ca) > 0 and ca[0] == 3)
        min_rtt = final.get("min_rtt_us") or (np.min(samples["min_rtt_us"]) if samples.get("min_rtt_us") else 0)
        flows_out.append({**schema.table("flows").row({
            "id": f.index,
            "group": f.group,
            "cc": f.cc,
            "start_s": f.start_ns / 1e9,
            "end_s": end_ns / 1e9,
            "throughput_mbps": got_bytes * 8 / (conn / 1e9) / 1e6,
            "bytes_acked": final.get("bytes_acked"),
            "bytes_sent": final.get("bytes_sent"),
            "bytes_delivered": got_bytes,
            "segments_sent": final.get("data_segs_out"),
            "segments_delivered": final.get("delivered"),
            "retransmits": final.get("total_retrans"),
            "rto_count": final.get("total_rto"),
            "fast_recoveries": recoveries,
            # The emulated bottleneck never marks CE.
            "ce_received": 0,
            "ece_reductions": 0,
            "rtt_min_ms": min_rtt / 1e3 if min_rtt else math.nan,
            "rtt_mean_ms": float(np.mean(rtt[valid])) / 1e3 if valid.any() else math.nan,
            "rtt_p95_ms": float(np.percentile(rtt[valid], 95)) / 1e3 if valid.any() else math.nan,
            "cwnd_final_pkts": final.get("snd_cwnd"),
            "cwnd_final_bytes": (final.get("snd_cwnd") or 0) * f.mss,
            "completed": completion is not None,
            "completion_s": completion / 1e9 if completion is not None else None,
            # The dumbbell's node names, as `ccsim run` gives them.
            "path": [f"sender{len(flows_out)}", "router", "receiver"],
        }),
            # The emulation's own.
            "kernel_cc": send.get("kernel_cc", f.kernel_cc),
            "snd_mss": final.get("snd_mss"),
            "start_late_ms": max(0.0, (send.get("start_ns", epoch + f.start_ns) - epoch - f.start_ns) / 1e6),
        })
        per_flow_series.append((f, cum, samples))
    thr = [fl["throughput_mbps"] for fl in flows_out]
    s2 = sum(x * x for x in thr)
    bottleneck = stats["bottleneck"]
    summary: dict[str, Any] = {**schema.table("summary").row({
        "name": p.resolved.get("name"),
        "seed": p.seed,
        "sim_seconds": dur / 1e9,
        "events": sum(stats["emulator"]["read"]),
        "wall_seconds": 0.0,
        "flows": flows_out,
        "total_throughput_mbps": sum(thr),
        "jain_index": (sum(thr) ** 2 / (len(thr) * s2)) if s2 > 0 else 1.0,
        "bottleneck": bottleneck,
        # The emulated bottleneck is the one link direction the emulation measures.
        "links": [_bottleneck_link(bottleneck)],
        "warnings": [],
    }),
        # The emulation's own.
        "mode": "emulation",
        "ignored": p.ignored,
        "kernel": {"release": os.uname().release, "algorithms": kernel_algorithms()},
        "emulator": dict(stats["emulator"], flows=stats["flows"]),
    }
    return _json_safe(summary), _timeseries(p, epoch, per_flow_series, stats["queue_samples"])


def _bottleneck_link(bn: dict[str, Any]) -> dict[str, Any]:
    """The emulated bottleneck as an entry of `links` (the schema of `ccsim run --json`)."""
    links = schema.table("links")
    return links.row({"id": "router->receiver", **{k: v for k, v in bn.items() if k in links}})


def _json_safe(value: Any) -> Any:
    """NaN -> None, numpy scalars -> Python (the summary is printed as JSON)."""
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_safe(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _timeseries(p: Plan, epoch: int, flows: list, queue: dict[str, list]) -> dict[str, list]:
    """One row per (sample time, flow), the simulator's columns; NaN where the kernel does not say.

    Rates and bytes come from the receiver's bins; cwnd, RTT, pacing rate and packets in
    flight from the sender's last TCP_INFO sample at or before the sample time; BBR's
    bandwidth estimate from its TCP_CC_INFO."""
    import numpy as np

    step = p.sample_interval_ns
    times = np.arange(step, p.duration_ns + 1, step, dtype=np.int64)
    nt, nf = len(times), len(flows)
    qt = np.round(np.asarray(queue.get("time_s", []), dtype=np.float64) * 1e9).astype(np.int64)
    qi = np.searchsorted(qt, times)
    found = (qi < len(qt)) & (qt[np.minimum(qi, max(len(qt) - 1, 0))] == times) if len(qt) else np.zeros(nt, bool)

    def queue_col(name: str) -> np.ndarray:
        vals = np.asarray(queue.get(name, []), dtype=np.float64)
        return np.where(found, vals[np.minimum(qi, max(len(vals) - 1, 0))] if len(vals) else np.nan, np.nan)

    nan_col = np.full(nt, np.nan)
    per: dict[str, list[np.ndarray]] = {c: [] for c in (
        "delivery_rate_mbps", "bytes_acked", "cwnd_pkts", "srtt_ms", "rtprop_ms", "pacing_rate_mbps", "btlbw_mbps",
        "inflight_pkts")}
    for f, cum, samples in flows:
        got_at = lambda t: np.where(t // BIN_NS > 0, cum[np.clip(t // BIN_NS, 1, len(cum)) - 1], 0) if len(cum) else np.zeros(len(t))  # noqa: E731
        got = got_at(times)
        per["bytes_acked"].append(got)
        per["delivery_rate_mbps"].append((got - got_at(times - step)) * 8 / (step / 1e9) / 1e6)
        st = np.asarray(samples.get("t_ns", []), dtype=np.int64) - epoch
        k = np.searchsorted(st, times, side="right") - 1
        have = (k >= 0) & (times >= f.start_ns) & (times <= f.stop_ns + step)
        kk = np.maximum(k, 0)

        def at(name: str, scale: float = 1.0) -> np.ndarray:
            arr = np.asarray(samples.get(name, []), dtype=np.float64)
            if len(arr) == 0:
                return nan_col.copy()
            v = arr[kk]
            return np.where(have & (v >= 0), v * scale, np.nan)

        per["cwnd_pkts"].append(at("snd_cwnd"))
        per["srtt_ms"].append(at("rtt_us", 1e-3))
        # The schema's rtprop_ms is the algorithm's RTprop: BBR's own min_rtt (TCP_CC_INFO),
        # not the stack's windowed tcpi_min_rtt; NaN for other algorithms, as in a simulation.
        per["rtprop_ms"].append(at("bbr_min_rtt_us", 1e-3))
        per["pacing_rate_mbps"].append(at("pacing_rate", 8e-6))
        per["btlbw_mbps"].append(at("bbr_bw", 8e-6))  # TCP_CC_INFO, BBR only
        per["inflight_pkts"].append(at("unacked") - at("sacked") - at("lost") + at("retrans"))

    def interleave(arrs: list[np.ndarray]) -> list:
        return np.stack(arrs, axis=1).ravel().tolist() if arrs else []

    cols: dict[str, list] = {
        "time_s": np.repeat(times / 1e9, nf).tolist(),
        "flow": np.tile(np.array([f.index for f, _, _ in flows]), nt).tolist(),
        "cc": [f.cc for f, _, _ in flows] * nt,
    }
    cols["delivery_rate_mbps"] = interleave(per["delivery_rate_mbps"])
    cols["goodput_mbps"] = list(cols["delivery_rate_mbps"])
    for name in ("bytes_acked", "cwnd_pkts", "srtt_ms", "rtprop_ms"):
        cols[name] = interleave(per[name])
    cols["btlbw_mbps"] = interleave(per["btlbw_mbps"])
    cols["pacing_rate_mbps"] = interleave(per["pacing_rate_mbps"])
    cols["inflight_pkts"] = interleave(per["inflight_pkts"])
    cols["queue_pkts"] = np.repeat(queue_col("queue_pkts"), nf).tolist()
    cols["queue_bytes"] = np.repeat(queue_col("queue_bytes"), nf).tolist()
    # The simulator's columns, in its order; those the kernel does not give (the seed
    # algorithms' rho, queue state, shadow window) hold no value.
    table = schema.table("timeseries")
    return {c.name: cols[c.name] if c.name in cols else [c.missing] * (nt * nf) for c in table.columns}


# ``ccsim.emulate`` is this function (the package attribute shadows the package), so the
# package's API is also reachable from it: ccsim.emulate.plan, ccsim.emulate.MAX_RATE_BPS, ...
for _name in ("MAX_RATE_BPS", "check_environment", "kernel_algorithms", "plan", "EmulationError",
              "EmulationFailed"):
    setattr(emulate, _name, globals()[_name])
del _name
