"""The emulation's traffic programs, run inside the network namespaces with ``ip netns exec``.

    python -m ccsim.emulate.traffic recv ...      # TCP receiver: bytes per connection per ms
    python -m ccsim.emulate.traffic send ...      # one TCP bulk sender: TCP_CONGESTION, TCP_INFO
    python -m ccsim.emulate.traffic udp-send ...  # paced UDP probes (emulator accuracy)
    python -m ccsim.emulate.traffic udp-recv ...  # their arrival times (kernel timestamps)

Standard library only. All times are CLOCK_MONOTONIC nanoseconds (``time.monotonic_ns``),
which every network namespace shares, except the UDP probes' one-way delays, which use
CLOCK_REALTIME because that is the clock of the kernel's receive timestamps (SO_TIMESTAMPNS).
Each program writes its results into ``--out`` when it ends, also when it is told to stop
with SIGTERM; a failure is written there too (``{"error": ...}``) and the exit status is 3.
"""

from __future__ import annotations

import argparse
import array
import json
import os
import select
import signal
import socket
import struct
import sys
import time
from pathlib import Path

#: Linux <netinet/tcp.h> option numbers (Python's socket module lacks some on older versions).
TCP_MAXSEG = 2
TCP_INFO = 11
TCP_CONGESTION = 13
TCP_CC_INFO = 26
SO_TIMESTAMPNS = 35
SO_RCVBUFFORCE = 33

#: struct tcp_info (include/uapi/linux/tcp.h): name -> (offset, struct format).
TCP_INFO_FIELDS: dict[str, tuple[int, str]] = {
    "state": (0, "B"),
    "ca_state": (1, "B"),
    "snd_mss": (16, "I"),
    "unacked": (24, "I"),
    "sacked": (28, "I"),
    "lost": (32, "I"),
    "retrans": (36, "I"),
    "rtt_us": (68, "I"),
    "rttvar_us": (72, "I"),
    "snd_ssthresh": (76, "I"),
    "snd_cwnd": (80, "I"),
    "total_retrans": (100, "I"),
    "pacing_rate": (104, "Q"),
    "bytes_acked": (120, "Q"),
    "min_rtt_us": (148, "I"),
    "data_segs_out": (156, "I"),
    "delivery_rate": (160, "Q"),
    "delivered": (192, "I"),
    "bytes_sent": (200, "Q"),
    "bytes_retrans": (208, "Q"),
    "total_rto": (240, "H"),
    "total_rto_recoveries": (242, "H"),
}
TCP_INFO_LEN = 256
#: struct tcp_bbr_info (TCP_CC_INFO of a bbr socket): bandwidth estimate (bytes/s, two
#: 32-bit halves), min RTT (us), pacing and cwnd gains (<< 8).
BBR_INFO = struct.Struct("=5I")
BBR_FIELDS = ("bbr_bw", "bbr_min_rtt_us", "bbr_pacing_gain", "bbr_cwnd_gain")
#: tcpi_ca_state value of fast recovery (TCP_CA_Recovery).
CA_RECOVERY = 3

_stop = False


def _on_term(signum, frame) -> None:  # noqa: ARG001
    global _stop
    _stop = True


def now_ns() -> int:
    return time.monotonic_ns()


def sleep_until(t_ns: int) -> None:
    while not _stop:
        d = t_ns - now_ns()
        if d <= 0:
            return
        time.sleep(min(d / 1e9, 0.05))


def tcp_info(sock: socket.socket) -> dict[str, int]:
    raw = sock.getsockopt(socket.IPPROTO_TCP, TCP_INFO, TCP_INFO_LEN)
    out: dict[str, int] = {}
    for name, (off, fmt) in TCP_INFO_FIELDS.items():
        if off + struct.calcsize(fmt) <= len(raw):
            out[name] = struct.unpack_from("=" + fmt, raw, off)[0]
    return out


def bbr_info(sock: socket.socket) -> dict[str, int]:
    raw = sock.getsockopt(socket.IPPROTO_TCP, TCP_CC_INFO, BBR_INFO.size)
    if len(raw) < BBR_INFO.size:
        return {}
    lo, hi, min_rtt, pacing_gain, cwnd_gain = BBR_INFO.unpack_from(raw)
    return {"bbr_bw": hi << 32 | lo, "bbr_min_rtt_us": min_rtt, "bbr_pacing_gain": pacing_gain,
            "bbr_cwnd_gain": cwnd_gain}


def write_json(path: str, data: dict) -> None:
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f)
    os.replace(tmp, path)


def hostport(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    return host, int(port)


# -- TCP receiver ----------------------------------------------------------------------------


def cmd_recv(a: argparse.Namespace) -> int:
    """Accept connections; count the bytes of each (by peer port) in bins of --bin-ns."""
    nbins = max(1, -(-(a.end_ns - a.epoch_ns) // a.bin_ns))
    lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lsock.bind(hostport(a.listen))
    lsock.listen(128)
    lsock.setblocking(False)
    Path(a.out, "recv.ready").touch()
    poller = select.poll()
    poller.register(lsock, select.POLLIN)
    conns: dict[int, tuple[socket.socket, int]] = {}  # fd -> (socket, peer port)
    bins_of: dict[int, array.array] = {}  # peer port -> bytes per bin
    totals: dict[int, dict[str, int]] = {}
    buf = bytearray(1 << 20)
    view = memoryview(buf)
    while not _stop:
        now = now_ns()
        if now >= a.end_ns:
            break
        for fd, _ev in poller.poll(min(100, max(1, (a.end_ns - now) // 1_000_000))):
            if fd == lsock.fileno():
                while True:
                    try:
                        s, peer = lsock.accept()
                    except BlockingIOError:
                        break
                    s.setblocking(False)
                    conns[s.fileno()] = (s, peer[1])
                    bins_of[peer[1]] = array.array("Q", bytes(8 * nbins))
                    totals[peer[1]] = {"bytes": 0, "bytes_before": 0, "bytes_after": 0,
                                       "first_ns": 0, "last_ns": 0, "accepted_ns": now_ns()}
                    poller.register(s, select.POLLIN)
                continue
            s, port = conns[fd]
            bins, tot = bins_of[port], totals[port]
            while True:
                try:
                    n = s.recv_into(view)
                except BlockingIOError:
                    break
                except ConnectionError:
                    n = 0  # the sender stops with a reset
                t = now_ns()
                if n == 0:
                    poller.unregister(s)
                    s.close()
                    del conns[fd]
                    tot["closed_ns"] = t
                    break
                k = (t - a.epoch_ns) // a.bin_ns
                if k < 0:
                    tot["bytes_before"] += n
                elif k >= nbins:
                    tot["bytes_after"] += n
                else:
                    bins[k] += n
                if not tot["first_ns"]:
                    tot["first_ns"] = t
                tot["last_ns"] = t
                tot["bytes"] += n
    for s, _port in conns.values():
        s.close()
    # The bins of every connection, one file per peer port.
    out = {"bin_ns": a.bin_ns, "epoch_ns": a.epoch_ns, "nbins": nbins, "connections": {}}
    for port, bins in bins_of.items():
        with open(Path(a.out, f"recv-{port}.bin"), "wb") as f:
            bins.tofile(f)
        out["connections"][str(port)] = totals[port]
    write_json(str(Path(a.out, "recv.json")), out)
    return 0


# -- TCP sender ------------------------------------------------------------------------------


def cmd_send(a: argparse.Namespace) -> int:
    result: dict = {"port": hostport(a.bind)[1], "cc": a.cc, "error": None}
    fields = list(TCP_INFO_FIELDS) + (list(BBR_FIELDS) if a.cc == "bbr" else [])
    samples: dict[str, array.array] = {"t_ns": array.array("q")}
    for name in fields:
        samples[name] = array.array("q")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        try:
            sock.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, a.cc.encode())
        except OSError as exc:
            raise SystemExit(_fail(a, result, f"TCP_CONGESTION {a.cc!r}: {exc.strerror or exc}"))
        # MSS option = payload + 12 bytes of timestamp option: data segments carry a.mss bytes.
        sock.setsockopt(socket.IPPROTO_TCP, TCP_MAXSEG, a.mss + 12)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(hostport(a.bind))
        sleep_until(a.connect_ns)
        deadline = max(a.start_ns, now_ns()) + 2_000_000_000
        while True:
            try:
                sock.connect(hostport(a.connect))
                break
            except ConnectionRefusedError:
                if now_ns() > deadline or _stop:
                    raise SystemExit(_fail(a, result, f"cannot connect to {a.connect}: refused"))
                time.sleep(0.02)
        result["connected_ns"] = now_ns()
        result["kernel_cc"] = sock.getsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, 16).split(b"\0")[0].decode()
        sleep_until(a.start_ns)
        sock.setblocking(False)
        result["start_ns"] = now_ns()
        chunk = memoryview(bytes(1 << 20))
        size = a.size if a.size > 0 else None
        sent = 0
        poller = select.poll()
        poller.register(sock, select.POLLOUT)
        next_sample = result["start_ns"]
        completed_ns = None
        while not _stop:
            now = now_ns()
            if now >= a.stop_ns:
                break
            if now >= next_sample:
                info = tcp_info(sock)
                if a.cc == "bbr":
                    info.update(bbr_info(sock))
                samples["t_ns"].append(now)
                for name in fields:
                    samples[name].append(info.get(name, -1))
                next_sample += a.sample_ns
                if size is not None and sent >= size and info.get("bytes_acked", 0) >= size:
                    completed_ns = now  # every byte (and the FIN) acknowledged
                    break
            if size is None or sent < size:
                want = len(chunk) if size is None else min(len(chunk), size - sent)
                try:
                    sent += sock.send(chunk[:want])
                    if size is not None and sent >= size:
                        sock.shutdown(socket.SHUT_WR)
                    continue
                except BlockingIOError:
                    pass
                wait_ms = max(0, -(-(min(next_sample, a.stop_ns) - now_ns()) // 1_000_000))
                poller.poll(wait_ms)
            else:
                sleep_until(min(next_sample, a.stop_ns))
        result["stop_ns"] = now_ns()
        result["completed_ns"] = completed_ns
        result["bytes_written"] = sent
        result["final"] = tcp_info(sock)
    except OSError as exc:
        return _fail(a, result, f"{type(exc).__name__}: {exc}", samples)
    finally:
        # Stop at once, as the simulated sender does: RST, no draining of the send buffer.
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass
        sock.close()
    result["samples"] = {k: v.tolist() for k, v in samples.items()}
    write_json(a.out, result)
    return 0


def _fail(a: argparse.Namespace, result: dict, message: str, samples: dict | None = None) -> int:
    result["error"] = message
    if samples is not None:
        result["samples"] = {k: v.tolist() for k, v in samples.items()}
    write_json(a.out, result)
    print(message, file=sys.stderr)
    return 3


# -- UDP probes (emulator accuracy) -------------------------------------------------------------

#: Probe payload header: sequence number, CLOCK_REALTIME send time (ns).
PROBE = struct.Struct("!QQ")


def cmd_udp_send(a: argparse.Namespace) -> int:
    """Datagrams of --size IP bytes at --rate-bps (IP bytes) from start to stop. Below 5000
    datagrams/s they are evenly spaced (the sender spins the last 100 us before each); above,
    it sends what is due every 0.5 ms, so that it does not need a whole CPU."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 22)
    sock.bind(hostport(a.bind))
    sock.connect(hostport(a.connect))
    payload = bytearray(a.size - 28)
    gap = a.size * 8 * 1_000_000_000 / a.rate_bps
    precise = gap >= 200_000
    sleep_until(a.start_ns)
    t0 = now_ns()
    seq = 0
    errors = 0
    # How long each send call took (ns): a probe whose call was slow (the sender was
    # preempted between taking its time stamp and handing the datagram over) can be discarded.
    took = array.array("q")
    while not _stop:
        now = now_ns()
        if now >= a.stop_ns:
            break
        due = min(int((now - t0) // gap) + 1, int((a.stop_ns - t0) // gap) + 1)
        if seq < due:
            for _ in range(min(due - seq, 256)):
                t_send = time.clock_gettime_ns(time.CLOCK_REALTIME)
                PROBE.pack_into(payload, 0, seq, t_send)
                try:
                    sock.send(payload)
                except OSError:
                    errors += 1
                took.append(time.clock_gettime_ns(time.CLOCK_REALTIME) - t_send)
                seq += 1
            continue
        if not precise:
            time.sleep(0.0005)
            continue
        next_due = t0 + int(seq * gap)
        if next_due - now > 150_000:
            time.sleep((next_due - now - 100_000) / 1e9)
        else:
            while now_ns() < next_due:
                pass
    with open(a.out + ".took", "wb") as f:
        took.tofile(f)
    write_json(a.out, {"sent": seq, "errors": errors, "t0_ns": t0, "stop_ns": now_ns(),
                       "behind_ns": max(0, now_ns() - (t0 + int(seq * gap)))})
    return 0


def cmd_udp_recv(a: argparse.Namespace) -> int:
    """Record (seq, send time, kernel receive time, IP bytes) of every probe until --end-ns."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 1 << 25)
    except OSError:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 25)
    sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    sock.bind(hostport(a.listen))
    sock.settimeout(0.1)
    Path(a.out + ".ready").touch()
    rec = array.array("q")
    anc = socket.CMSG_SPACE(16)
    while not _stop and now_ns() < a.end_ns:
        try:
            data, ancdata, _flags, _addr = sock.recvmsg(65536, anc)
        except socket.timeout:
            continue
        t_recv = 0
        for level, kind, cdata in ancdata:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
                sec, nsec = struct.unpack("qq", cdata[:16])
                t_recv = sec * 1_000_000_000 + nsec
        seq, t_send = PROBE.unpack_from(data)
        rec.extend((seq, t_send, t_recv, len(data) + 28))
    with open(a.out, "wb") as f:
        rec.tofile(f)
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m ccsim.emulate.traffic", description=__doc__.split("\n")[0])
    p.add_argument("--tag", default="", help="an identifier of the run (shows in ps)")
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("recv")
    r.add_argument("--listen", required=True, metavar="IP:PORT")
    r.add_argument("--epoch-ns", type=int, required=True)
    r.add_argument("--end-ns", type=int, required=True)
    r.add_argument("--bin-ns", type=int, default=1_000_000)
    r.add_argument("--out", required=True, metavar="DIR")
    s = sub.add_parser("send")
    s.add_argument("--cc", required=True)
    s.add_argument("--mss", type=int, required=True)
    s.add_argument("--bind", required=True, metavar="IP:PORT")
    s.add_argument("--connect", required=True, metavar="IP:PORT")
    s.add_argument("--connect-ns", type=int, required=True)
    s.add_argument("--start-ns", type=int, required=True)
    s.add_argument("--stop-ns", type=int, required=True)
    s.add_argument("--size", type=int, default=0, help="bytes to send (0: unlimited)")
    s.add_argument("--sample-ns", type=int, default=10_000_000)
    s.add_argument("--out", required=True, metavar="FILE")
    u = sub.add_parser("udp-send")
    u.add_argument("--bind", required=True)
    u.add_argument("--connect", required=True)
    u.add_argument("--rate-bps", type=float, required=True)
    u.add_argument("--size", type=int, default=1500, help="IP bytes per datagram")
    u.add_argument("--start-ns", type=int, required=True)
    u.add_argument("--stop-ns", type=int, required=True)
    u.add_argument("--out", required=True)
    v = sub.add_parser("udp-recv")
    v.add_argument("--listen", required=True)
    v.add_argument("--end-ns", type=int, required=True)
    v.add_argument("--out", required=True)
    a = p.parse_args(argv)
    signal.signal(signal.SIGTERM, _on_term)
    signal.signal(signal.SIGINT, _on_term)
    return {"recv": cmd_recv, "send": cmd_send, "udp-send": cmd_udp_send, "udp-recv": cmd_udp_recv}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
