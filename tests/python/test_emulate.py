"""Real Linux TCP over ccsim's link emulator: ``ccsim emulate`` / ``ccsim compare``.

The runs need root, network namespaces and /dev/net/tun (CI runs the tests as root on such a
machine); without them those tests are skipped with the reason. The bad-input tests need none
of it: the checks that reject the input come first.

What is asserted is measured in the run itself (the emulator's own queueing delay, the
link's capacity), never a recorded number.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

import ccsim
from ccsim import EmulationError, ScenarioError
from ccsim.cli import cli
from ccsim.emulate import netns
from ccsim.emulate.run import MAX_RATE_BPS, _fmt_rate, kernel_algorithms

from _support import run_cmd, to_toml

HEADER_BYTES = 52


def _unavailable() -> str | None:
    """Why emulation cannot run here, or None."""
    if not sys.platform.startswith("linux"):
        return f"emulation needs Linux (network namespaces, TUN devices); this is {sys.platform}"
    if os.geteuid() != 0:
        return "emulation needs root (network namespaces, TUN devices); CI runs the tests as root"
    if not os.path.exists("/dev/net/tun"):
        return "no /dev/net/tun (kernel without TUN devices)"
    for tool in ("ip", "sysctl"):
        if shutil.which(tool) is None:
            return f"`{tool}` is not installed (iproute2 / procps)"
    if "cubic" not in kernel_algorithms():
        return f"the kernel has no cubic (tcp_available_congestion_control: {kernel_algorithms()})"
    probe = f"ccsim-{os.getpid()}-s"
    r = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if r.returncode != 0:
        return f"cannot create a network namespace: {r.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return None


UNAVAILABLE = _unavailable()
needs_emulation = pytest.mark.skipif(UNAVAILABLE is not None, reason=UNAVAILABLE or "")


def scenario(**bottleneck: Any) -> dict[str, Any]:
    sc: dict[str, Any] = {
        "duration": "10s",
        "seed": 1,
        "bottleneck": {"rate": "10Mbps", "delay": "20ms", "buffer": "1bdp"},
        "flows": [{"cc": "cubic"}],
    }
    sc["bottleneck"].update(bottleneck)
    return sc


def leftovers(pid: int) -> dict[str, list[str]]:
    """Everything a `ccsim emulate` process with this pid may have created and not removed."""
    procs = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            args = (d / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if f"ccsim-{pid}".encode() in args and b"ccsim.emulate.traffic" in args:
            procs.append(f"{d.name}: {b' '.join(args[:6]).decode(errors='replace')}")
    links = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True).stdout
    return {
        "namespaces": [n for n in netns.list_netns() if n.startswith(f"ccsim-{pid}-")],
        "processes": procs,
        "devices": [d for d in (netns.SENDER_DEV, netns.RECEIVER_DEV) if f" {d}:" in links],
        "directories": [str(p) for p in Path(tempfile.gettempdir()).glob(f"ccsim-{pid}-*")],
    }


def no_leftovers(pid: int) -> None:
    left = leftovers(pid)
    assert not any(left.values()), f"left behind: {left}"


def one_error_line(stderr: str) -> str:
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.startswith("error: ")]
    assert len(errors) == 1, stderr
    assert "Traceback" not in stderr and "panicked" not in stderr, stderr
    return errors[0]


# -- a real run ------------------------------------------------------------------------------


@needs_emulation
def test_one_kernel_cubic_flow_fills_the_link_and_leaves_nothing_behind(write_scenario, ccsim_cmd, tmp_path):
    path = write_scenario(scenario())
    out_dir = tmp_path / "out"
    p = subprocess.Popen([ccsim_cmd, "emulate", str(path), "--json", "--out", str(out_dir)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 0, err
    d = json.loads(out)
    no_leftovers(p.pid)

    # The summary has the schema of `ccsim run --json`, plus the emulation's own keys.
    sim = ccsim.run(path).to_dict()
    assert set(sim) <= set(d)
    assert set(sim["flows"][0]) <= set(d["flows"][0])
    assert set(sim["bottleneck"]) == set(d["bottleneck"])
    assert d["mode"] == "emulation"
    assert d["ignored"] == [
        'tcp.recovery = "rfc6675": Linux detects losses with RACK-TLP',
        "tcp.tsecr_rtt = false: Linux also times ACKs of retransmitted data from the timestamp echo",
        'tcp.rto_estimator = "rfc6298": Linux\'s RTO is SRTT + max(4 x mean deviation, rto_min)',
    ]

    f, bn = d["flows"][0], d["bottleneck"]
    assert f["kernel_cc"] == "cubic"
    assert f["snd_mss"] == 1448  # MTU = MSS + 52: the kernel's segments carry ccsim's MSS
    assert bn["buffer_pkts"] == sim["bottleneck"]["buffer_pkts"] == 33
    # At least 90 % utilisation: the link busy 90 % of the time, and the receiver got 90 % of
    # what the link can carry in payload.
    assert bn["utilization"] >= 0.90, bn
    capacity = 10.0 * 1448 / (1448 + HEADER_BYTES)
    assert f["throughput_mbps"] >= 0.90 * capacity, f
    # RTT (TCP_INFO) = base RTT + the queueing the emulator measured, within 5 ms.
    expected = 2 * 20.0 + bn["queue_delay_mean_ms"]
    assert abs(f["rtt_mean_ms"] - expected) <= 5.0, (f["rtt_mean_ms"], expected)
    assert f["rtt_min_ms"] >= 40.0
    assert d["emulator"]["truncated"] == 0 and d["emulator"]["write_errors"] == 0

    # --out: the simulator's files and columns; the time series adds up to the summary.
    import pandas as pd
    from ccsim.result import TIMESERIES_COLUMNS

    assert json.loads((out_dir / "summary.json").read_text()) == d
    ts = pd.read_parquet(out_dir / "timeseries.parquet")
    assert list(ts.columns) == list(TIMESERIES_COLUMNS)
    assert len(ts) == 100 and (ts["flow"] == 0).all()  # 10 s / 100 ms, one flow
    assert ts["bytes_acked"].iloc[-1] == f["bytes_delivered"]
    assert ts["delivery_rate_mbps"].mean() == pytest.approx(f["throughput_mbps"], rel=1e-9)
    assert ts["cwnd_pkts"].notna().all() and ts["srtt_ms"].min() >= 40.0
    assert ts["queue_pkts"].between(0, 33).all()
    assert (out_dir / "throughput_cwnd.png").stat().st_size > 0


@needs_emulation
@pytest.mark.parametrize("signum, status, word", [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")],
                         ids=["SIGINT", "SIGTERM"])
def test_a_signal_stops_the_emulation_and_removes_everything(signum, status, word, write_scenario, ccsim_cmd):
    path = write_scenario(dict(scenario(), duration="60s"), name="long.toml")
    # The child starts with SIGINT's default action even if this process ignores SIGINT (a
    # background job of a non-interactive shell does): otherwise Python would keep ignoring it.
    p = subprocess.Popen([ccsim_cmd, "emulate", str(path)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        # Wait until the namespaces and the traffic programs exist, then a little longer so
        # that the emulator is forwarding packets.
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            left = leftovers(p.pid)
            if len(left["namespaces"]) == 2 and len(left["processes"]) == 2:
                break
            assert p.poll() is None, p.communicate()
            time.sleep(0.1)
        else:
            pytest.fail(f"the emulation did not start: {leftovers(p.pid)}")
        time.sleep(2.0)
        p.send_signal(signum)
        out, err = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
            netns.sweep_stale()  # the test failed: leave no namespace of the killed run behind
    # 130 = 128 + SIGINT, 143 = 128 + SIGTERM: what a shell reports for a process the signal
    # killed, here after the clean-up
    assert p.returncode == status, err
    assert one_error_line(err) == f"error: {word}"
    no_leftovers(p.pid)


def test_sigterm_becomes_terminated_and_exit_status_143(monkeypatch, write_scenario, runner):
    """The seam under the real test above, without root: inside the CLI's emulate and compare
    commands SIGTERM raises Terminated (a KeyboardInterrupt, so clean-up code runs), and the
    command exits with 143; Ctrl-C still exits with 130."""
    from ccsim import cli as cli_mod
    from ccsim.emulate.errors import Terminated
    from ccsim.emulate.run import sigterm_interrupts

    with pytest.raises(Terminated):
        with sigterm_interrupts():
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)
    assert issubclass(Terminated, KeyboardInterrupt)
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # restored

    cleaned = []

    def fake_run(*args, **kwargs):
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)
        finally:
            cleaned.append(True)

    def fake_interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_mod, "_check_emulation", lambda file, seed: None)
    emulate_pkg = sys.modules["ccsim.emulate"]
    path = write_scenario(scenario())
    for command, name in (("emulate", "emulate"), ("compare", "compare")):
        monkeypatch.setattr(emulate_pkg, name, fake_run)
        r = runner.invoke(cli, [command, str(path)])
        assert r.exit_code == 143, r.output
        assert one_error_line(r.stderr) == "error: terminated"
        monkeypatch.setattr(emulate_pkg, name, fake_interrupt)
        r = runner.invoke(cli, [command, str(path)])
        assert r.exit_code == 130, r.output
        assert one_error_line(r.stderr) == "error: interrupted"
    assert cleaned == [True, True]
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


@needs_emulation
def test_compare_lines_up_simulation_and_emulation(write_scenario, ccsim_cmd):
    sc = dict(scenario(), duration="4s")
    sc["flows"] = [{"cc": "newreno"}, {"cc": "bbr", "start": "1s"}]
    path = write_scenario(sc)
    r = run_cmd(ccsim_cmd, "compare", str(path), "--json")
    assert r.returncode == 0, r.stderr
    both = json.loads(r.stdout)
    assert both["simulation"] == {**ccsim.run(path).to_dict(), "wall_seconds": both["simulation"]["wall_seconds"]}
    emu, diff = both["emulation"], both["differences"]
    assert [f["kernel_cc"] for f in emu["flows"]] == ["reno", "bbr"]
    assert emu["flows"][1]["start_s"] == 1.0
    for f in diff["flows"]:
        t = f["throughput_mbps"]
        assert t["relative"] == pytest.approx((t["simulation"] - t["emulation"]) / t["emulation"])
    # Both flows moved data in the emulation, and the link was busy.
    assert all(f["throughput_mbps"] > 0 for f in emu["flows"])
    assert emu["bottleneck"]["utilization"] >= 0.5
    # The table form says the same.
    r = run_cmd(ccsim_cmd, "compare", str(path))
    assert r.returncode == 0, r.stderr
    assert "sim / emu" in r.stdout and "Jain index" in r.stdout


# -- bad input: one line naming the field, the value and what is accepted -----------------------


def _cases() -> list[tuple[str, dict[str, Any], tuple[str, ...]]]:
    hd = scenario()
    hd["flows"] = [{"cc": "cubic"}, {"cc": "hd"}]
    fast = scenario(rate="10Gbps")
    return [
        ("unknown-kernel-algorithm", hd, ("flows[1].cc", '"hd"', "accepted:", *kernel_algorithms())),
        ("rate-above-the-emulator", fast, ("bottleneck.rate", "10Gbps", "accepted: up to",
                                           _fmt_rate(MAX_RATE_BPS))),
    ]


@pytest.mark.parametrize("case", _cases(), ids=lambda c: c[0])
def test_bad_input_api(case):
    _, sc, expect = case
    with pytest.raises(EmulationError) as info:
        ccsim.emulate(sc)
    message = str(info.value)
    assert isinstance(info.value, ScenarioError) and "\n" not in message
    for part in expect:
        assert part in message, message
    with pytest.raises(EmulationError):
        ccsim.compare(sc)


@pytest.mark.parametrize("case", _cases(), ids=lambda c: c[0])
@pytest.mark.parametrize("command", ["emulate", "compare"])
def test_bad_input_cli(case, command, write_scenario, ccsim_cmd):
    _, sc, expect = case
    path = write_scenario(sc)
    r = run_cmd(ccsim_cmd, command, str(path))
    assert r.returncode == 2, r.stderr
    line = one_error_line(r.stderr)
    assert str(path) in line
    for part in expect:
        assert part in line, line
    assert r.stdout == ""


def test_not_root(monkeypatch, write_scenario, runner):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(EmulationError) as info:
        ccsim.emulate(scenario())
    message = str(info.value)
    assert message.startswith("user: ccsim emulate runs as uid 1000; accepted: root (uid 0)"), message
    path = write_scenario(scenario())
    for command in ("emulate", "compare"):
        r = runner.invoke(cli, [command, str(path)])
        assert r.exit_code == 2, r.output
        line = one_error_line(r.stderr)
        assert "uid 1000" in line and "accepted: root" in line, line


def test_ordinary_scenario_errors_come_first(write_scenario, ccsim_cmd):
    sc = scenario()
    sc["flows"] = [{"cc": "cubicc"}]
    r = run_cmd(ccsim_cmd, "emulate", str(write_scenario(sc)))
    assert r.returncode == 2
    assert "flows[0].cc: unknown algorithm" in one_error_line(r.stderr)


def test_ignored_lists_what_the_kernel_does_not_apply():
    sc = scenario()
    sc["tcp"] = {"recovery": "rack", "delayed_ack": False, "tsecr_rtt": True, "rto_estimator": "linux"}
    sc["flows"] = [{"cc": "cubic", "params": {"beta": 512}}, {"cc": "bbr", "access_rate": "100Mbps", "initial_cwnd": 4}]
    p = ccsim.emulate.plan(sc)
    text = "\n".join(p.ignored)
    assert "tcp.delayed_ack = false" in text
    assert "flows[0].params.beta = 512" in text
    assert 'flows[1].access_rate = "100Mbps"' in text
    assert "flows[1].initial_cwnd = 4" in text  # the route's initcwnd is the first flow's, 10
    assert "recovery" not in text  # rack is what Linux does
    assert "tsecr_rtt" not in text and "rto_estimator" not in text  # so are these
    assert "tick" not in text
    sc["bottleneck"]["tick"] = "1ms"
    assert any(x.startswith('bottleneck.tick = "1ms": the link emulator') for x in ccsim.emulate.plan(sc).ignored)
    assert [f.kernel_cc for f in p.flows] == ["cubic", "bbr"]
    assert p.mtu == 1448 + HEADER_BYTES
