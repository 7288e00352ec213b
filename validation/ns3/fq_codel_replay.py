#!/usr/bin/env python3
"""Replay a run's packet arrivals through FQ-CoDel: per-flow CoDel dropping cycles, both sides.

    python3 validation/ns3/fq_codel_replay.py ccsim DIR      # DIR: `ccsim run FILE --pcap DIR
                                                             #   --pcap-links router->receiver`
    python3 validation/ns3/fq_codel_replay.py ns3 TRACE      # TRACE: QDISC_ATTR_TRACE file written
                                                             #   with QDISC_ATTR_TRACE_PKTS=1

A diagnostic for docs/validation.md ("What remains unexplained", FQ-CoDel with 4 flows at
10 Mbps / 1 ms). FQ-CoDel as ccsim's net/qdisc/fq_codel.rs and codel.rs (Linux fq_codel_dequeue,
codel_dequeue: the CoDel clock in 1024 ns units, rec_inv_sqrt Newton steps, "backlog <= mtu"
on the whole queue disc, quantum = mtu = 1500 bytes), fed with every data packet the run offered
the bottleneck. ccsim: the capture holds the arrivals (drops included) and the link dequeues when
idle (1500-byte packets at 10 Mbps). ns-3: the trace's #qenq arrivals, dequeues at its own #qdeq
times (its device queue decides when the queue disc is asked). The script checks itself against
the run: ccsim's drops are the segments sent again, ns-3's are the trace's #qdrop lines. Prints
the drops, the sojourn levels and, per flow, the dropping cycles (count on entry and on exit,
drops per cycle, time in and out of the dropping state) after `--from` seconds.
"""

from __future__ import annotations

import argparse
import collections
import statistics
import sys
from pathlib import Path

SHIFT = 10  # CODEL_SHIFT
RIS = 16  # REC_INV_SQRT_SHIFT
M32 = 0xFFFFFFFF


def ct(ns: int) -> int:
    return (ns >> SHIFT) & M32


def after(a: int, b: int) -> bool:
    d = (a - b) & M32
    return d != 0 and d < 0x80000000


def after_eq(a: int, b: int) -> bool:
    return ((a - b) & M32) < 0x80000000


def newton(count: int, r: int) -> int:
    inv = (r << RIS) & M32
    inv2 = (inv * inv) >> 32
    val = ((3 << 32) - count * inv2) & 0xFFFFFFFFFFFFFFFF
    val >>= 2
    val = ((val * inv) & 0xFFFFFFFFFFFFFFFF) >> (32 - 2 + 1)
    return (val >> RIS) & 0xFFFF


def law(t: int, interval: int, r: int) -> int:
    return (t + ((interval * ((r << RIS) & M32)) >> 32)) & M32


class Vars:
    def __init__(self) -> None:
        self.count = self.lastcount = self.r = self.first_above = self.drop_next = 0
        self.dropping = False


class FqCodel:
    """Packets are (arrival ns, flow, segment, bytes); `log` gets (ns, flow, event, count)."""

    def __init__(self, target_ns: int = 5_000_000, interval_ns: int = 100_000_000, mtu: int = 1500) -> None:
        self.target, self.interval, self.mtu, self.quantum = ct(target_ns), ct(interval_ns), mtu, mtu
        self.q: dict[int, collections.deque] = collections.defaultdict(collections.deque)
        self.v: dict[int, Vars] = collections.defaultdict(Vars)
        self.deficit: dict[int, int] = {}
        self.listed: set[int] = set()
        self.new: collections.deque = collections.deque()
        self.old: collections.deque = collections.deque()
        self.bytes = 0
        self.log: list[tuple[int, int, str, int]] = []
        self.drops: list[tuple[int, tuple]] = []

    def enqueue(self, p: tuple) -> None:
        f = p[1]
        self.q[f].append(p)
        self.bytes += p[3]
        if f not in self.listed:
            self.listed.add(f)
            self.deficit[f] = self.quantum
            self.new.append(f)

    def _pop(self, f: int):
        if not self.q[f]:
            return None
        p = self.q[f].popleft()
        self.bytes -= p[3]
        return p

    def _should_drop(self, v: Vars, p, now: int) -> bool:
        if p is None:
            v.first_above = 0
            return False
        if not after_eq((now - ct(p[0])) & M32, self.target) or self.bytes <= self.mtu:
            v.first_above = 0
            return False
        if v.first_above == 0:
            v.first_above = (now + self.interval) & M32
            return False
        return after(now, v.first_above)

    def _codel(self, f: int, now_ns: int):
        v = self.v[f]
        p = self._pop(f)
        if p is None:
            v.dropping = False
            return None
        now = ct(now_ns)
        drop = self._should_drop(v, p, now)
        if v.dropping:
            if not drop:
                v.dropping = False
                self.log.append((now_ns, f, "exit", v.count))
            elif after_eq(now, v.drop_next):
                while v.dropping and after_eq(now, v.drop_next):
                    v.count = (v.count + 1) & M32
                    v.r = newton(v.count, v.r)
                    self.drops.append((now_ns, p))
                    n = self._pop(f)
                    if not self._should_drop(v, n, now):
                        v.dropping = False
                        self.log.append((now_ns, f, "exit", v.count))
                    else:
                        v.drop_next = law(v.drop_next, self.interval, v.r)
                    if n is None:
                        return None
                    p = n
        elif drop:
            self.drops.append((now_ns, p))
            n = self._pop(f)
            self._should_drop(v, n, now)
            v.dropping = True
            delta = (v.count - v.lastcount) & M32
            if delta > 1 and after(16 * self.interval, (now - v.drop_next) & M32):
                v.count = delta
                v.r = newton(v.count, v.r)
            else:
                v.count, v.r = 1, (M32 >> RIS) & 0xFFFF
            v.lastcount = v.count
            v.drop_next = law(now, self.interval, v.r)
            self.log.append((now_ns, f, "enter", v.count))
            if n is None:
                return None
            p = n
        return p

    def dequeue(self, now_ns: int):
        while True:
            if self.new:
                f, lst = self.new[0], self.new
            elif self.old:
                f, lst = self.old[0], self.old
            else:
                return None
            if self.deficit[f] <= 0:
                self.deficit[f] += self.quantum
                lst.popleft()
                self.old.append(f)
                continue
            p = self._codel(f, now_ns)
            if p is not None:
                self.deficit[f] -= p[3]
                return p
            lst.popleft()
            if lst is self.new and self.old:
                self.old.append(f)
                continue
            self.listed.discard(f)


def replay_ccsim(d: Path, rate_bps: int) -> tuple[FqCodel, list, collections.Counter]:
    import dpkt

    arr = []
    with open(d / "router-receiver.pcap", "rb") as fh:
        for ts, buf in dpkt.pcap.Reader(fh):
            ip = dpkt.ethernet.Ethernet(buf).data
            t = ip.data
            payload = ip.len - ip.hl * 4 - t.off * 4
            arr.append((int(round(float(ts) * 1e9)), t.sport - 10000, (t.seq - 1) // 1448 if payload > 0 else -1, ip.len))
    arr.sort()
    fq, deq, free, i = FqCodel(), [], 0, 0
    while i < len(arr) or fq.bytes > 0:
        if fq.bytes > 0 and (i >= len(arr) or free <= arr[i][0]):
            p = fq.dequeue(free)
            if p is None:
                free = arr[i][0] if i < len(arr) else free
                continue
            deq.append((free, p))
            free += p[3] * 8 * 1_000_000_000 // rate_bps
        else:
            a = arr[i]
            i += 1
            fq.enqueue(a)
            if free <= a[0]:
                p = fq.dequeue(a[0])
                if p is not None:
                    deq.append((a[0], p))
                    free = a[0] + p[3] * 8 * 1_000_000_000 // rate_bps
    # the truth: every copy of a segment but the last was dropped
    copies: dict = collections.defaultdict(list)
    for a in arr:
        if a[2] >= 0:
            copies[(a[1], a[2])].append(a[0])
    truth = collections.Counter(k for k, ts in copies.items() for _ in ts[:-1])
    return fq, deq, truth


def replay_ns3(trace: Path) -> tuple[FqCodel, list, collections.Counter]:
    def pkt(src: str, seq: str) -> tuple[int, int]:
        return int(src.split(".")[2]) - 1, (int(seq) - 1) // 1448

    arr, truth, deq_raw = [], [], []
    for ln in trace.open():
        p = ln.strip().split(",")
        if p[0] == "#qenq":
            arr.append((int(round(float(p[1]) * 1e9)), *pkt(p[2], p[3]), 1500))
        elif p[0] == "#qdrop":
            truth.append((int(round(float(p[1]) * 1e9)), *pkt(p[4], p[5])))
        elif p[0] == "#qdeq":
            deq_raw.append((int(round(float(p[1]) * 1e9)), *pkt(p[2], p[3])))
    if not arr or not deq_raw:
        raise SystemExit(f"fq_codel_replay.py: {trace}: no #qenq / #qdeq lines (run with QDISC_ATTR_TRACE_PKTS=1)")
    arr.sort()
    # ns-3's Dequeue trace also fires for the packets CoDel drops on the way: leave those out
    dropped = collections.Counter(truth)
    times = []
    for x in deq_raw:
        if dropped[x] > 0:
            dropped[x] -= 1
        else:
            times.append(x[0])
    fq, deq, i = FqCodel(), [], 0
    for t in times:
        while i < len(arr) and arr[i][0] <= t:
            fq.enqueue(arr[i])
            i += 1
        deq.append((t, fq.dequeue(t)))
    return fq, deq, collections.Counter((f, s) for _, f, s in truth)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("side", choices=("ccsim", "ns3"))
    ap.add_argument("path", type=Path)
    ap.add_argument("--rate", type=float, default=10e6, help="bottleneck bits/s (ccsim side)")
    ap.add_argument("--from", dest="t0", type=float, default=3.0, help="statistics from this time (s)")
    a = ap.parse_args(argv)
    fq, deq, truth = replay_ccsim(a.path, int(a.rate)) if a.side == "ccsim" else replay_ns3(a.path)
    got = collections.Counter((p[1], p[2]) for _, p in fq.drops)
    print(f"drops: run {sum(truth.values())}, replay {sum(got.values())}, both {sum((truth & got).values())}")
    t0 = int(a.t0 * 1e9)
    soj = [(t - p[0]) / 1e6 for t, p in deq if p is not None and t > t0 and p[2] >= 0]
    print(f"sojourn < 5 ms: {sum(s < 5 for s in soj) / len(soj):.3f} of {len(soj)} packets; mean {statistics.mean(soj):.2f} ms")
    inside, outside, per_cycle = [], [], []
    enter_counts: collections.Counter = collections.Counter()
    exit_counts: collections.Counter = collections.Counter()
    for f in sorted(fq.v):
        log = [e for e in fq.log if e[1] == f and e[0] > t0]
        drops = [t for t, p in fq.drops if p[1] == f]
        for x, y in zip(log, log[1:]):
            if x[2] == "enter" and y[2] == "exit":
                inside.append((y[0] - x[0]) / 1e6)
                per_cycle.append(sum(1 for t in drops if x[0] <= t <= y[0]))
            elif x[2] == "exit" and y[2] == "enter":
                outside.append((y[0] - x[0]) / 1e6)
        enter_counts.update(e[3] for e in log if e[2] == "enter")
        exit_counts.update(e[3] for e in log if e[2] == "exit")
    print(f"dropping cycles: {len(per_cycle)}, drops per cycle {statistics.mean(per_cycle):.2f}, "
          f"mean {statistics.mean(inside):.0f} ms dropping, {statistics.mean(outside):.0f} ms not")
    print("count on entry:", dict(sorted(enter_counts.items())))
    print("count on exit: ", dict(sorted(exit_counts.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
