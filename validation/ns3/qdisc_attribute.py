#!/usr/bin/env python3
"""One change at a time: which change closes a queue-discipline difference against ns-3.

    python3 validation/ns3/qdisc_attribute.py EXPERIMENT [--points SUBSTR ...] [--seeds 1,2,3]
        [--ns3-bin PATH] [--out validation/ns3/results] [--per-seed] [--stats]

The companion of validation/ns3/qdisc.py (whose grid, scenarios and summaries it reuses) for
the "Causes (queue disciplines)" section of docs/validation.md. An EXPERIMENT is one change,
made on one side (both-* experiments: one on each side):

  stock             no change on either side (the stock Δs, per seed with --per-seed / --stats)
  ccsim-target-pkt  ccsim's CoDel / FQ-CoDel / PIE target raised by one packet time
                    (1502 bytes at the bottleneck rate), the wait in ns-3's 1-packet device
                    queue that ns-3's AQM does not see (cause Q1)
  ns3-target-pkt    ns-3's Target / QueueDelayReference lowered by one packet time (Q1)
  ccsim-nohystart   ccsim's CUBIC with hystart = false (cause Q2)
  ccsim-min-rto-300, ccsim-min-rto-400  ccsim's min_rto at 300 / 400 ms: how the PIE 100 Mbps /
                    40 ms point hangs on the RTO's length (a sensitivity test, not a model of Linux)
  ccsim-fq-limit    ccsim's FQ-CoDel with the grid's 1000-packet limit as its own limit (batch
                    drop from the fattest flow, as Linux fq_codel and ns-3) instead of the link's
                    1000-packet buffer in front of it (tail drop of the arrival; cause Q9). The
                    grid itself does this since 2026-11-27, so on it this is now a no-op; its
                    tables were measured against the grid before
  ccsim-linux-rto   ccsim with Linux's RTO ([tcp] rto_estimator = "linux"), which the grid's
                    ns-3 approximates (--clockGranularity=200ms)
  both-pie-linux-rto  ns3-pie-linux-rto against ccsim-linux-rto (both sides changed)
  ccsim-step-k1     ccsim's DCTCP step threshold one packet higher (min_th = max_th = K + 1):
                    ns-3's RED counts only the queue disc's packets, not the one waiting in the
                    1-packet device queue below it (cause Q10a; red-step points)
  ns3-step-k1       ns-3's MinTh = MaxTh = K - 1 (the same offset, on ns-3's side; Q10a)
  ns3-dctcp-alpha   ns-3's TcpDctcp DctcpAlphaOnInit = 15/16: Linux's dctcp_init ends the first
                    observation window at the first ACK (alpha decays once more than in ns-3,
                    whose first window ends a flight later; Q10b)
  ns3-step-k1-dctcp-alpha  ns3-step-k1 and ns3-dctcp-alpha together (Q10a and Q10b on ns-3)
  both-step-k1-dctcp-alpha  ccsim-step-k1 against ns3-dctcp-alpha (both sides changed)
  ns3-dctcp-private ns-3's TcpDctcp replaced by validation/ns3/qdisc_attr.h's TcpDctcpAttr with no
                    switch on (a check: bit-identical)
  ns3-dctcp-ack-now that copy with LinuxAckNow: on a change of CE state the receiver ACKs the
                    current segment at once, as Linux's dctcp_ece_ack_update (ICSK_ACK_NOW) and
                    ccsim (ns-3 sends the delayed ACK of the earlier state and delays the current
                    segment's; Q10)
  ns3-step-k1-dctcp-alpha-ack-now  ns3-step-k1, ns3-dctcp-alpha and ns3-dctcp-ack-now together
  both-step-k1-dctcp-alpha-ack-now  ccsim-step-k1 against ns3-dctcp-alpha with ns3-dctcp-ack-now
                    (both sides changed)
  ns3-nohystart     ns-3 with --ns3::TcpCubic::HyStart=false (Q2)
  ns3-hystart-thresh  ns-3 with HyStartDelayMax = 10 ms: its HyStart delay threshold becomes
                    Linux's at both delays of the grid (Q2)
  ns3-hystart-4ms   ns-3 with HyStartDelayMax = 4 ms: its delay threshold becomes Linux's for
                    any delay_min below 32 ms, so also for a flow that starts behind a standing
                    queue at the 1 ms points (Q8)
  ns3-pie-private   ns-3's PIE replaced by validation/ns3/qdisc_attr.h's copy of its behaviour
                    with no switch on (a check: bit-identical to ns-3's PieQueueDisc)
  ns3-pie-burst     that PIE with Linux's burst allowance (QDISC.md deviations 7, 8)
  ns3-pie-rest      that PIE with Linux's safeguard, +2 % above 250 ms, decay, accu_prob
                    reset (QDISC.md 9-12)
  ns3-pie-first     that PIE with the first update at 500 ms (Linux's HZ / 2)
  ns3-pie-linux     all of the PIE changes together
  ns3-pie-linux-rto  ns3-pie-linux and ns3-rto-ssthresh together (PIE: what Q3 and Q4 leave)
  ns3-pie-linux-rto-g1  that, with ns-3's RTO computed as ccsim's (RFC 6298, G = 1 ms:
                    --clockGranularity=1ms instead of the grid's 200 ms)
  ns3-rto-private   ns-3's TcpLinuxReno / TcpCubic replaced by qdisc_attr.h's copies with no
                    switch on (a check: bit-identical)
  ns3-rto-ssthresh  those copies with LinuxRtoSsthresh: an RTO during fast recovery keeps
                    ssthresh, as Linux tcp_enter_loss (ns-3 halves the window again; cause Q4)
  ns3-codel-private ns-3's CoDel and FQ-CoDel replaced by qdisc_attr.h's copies with no switch
                    on (a check: bit-identical)
  ns3-codel-mark    those with Linux's ECN mark schedule (QDISC.md 1; ECN points only)
  ns3-fq-mtu        that FQ-CoDel with Linux's "backlog <= MTU" test on the whole queue disc
                    (QDISC.md 2)
  ns3-fq-mtu-target ns3-fq-mtu with ns-3's target lowered by one packet time (Q1 and Q5)
  ns3-fq-mtu-exit   ns3-fq-mtu with the TCP copies' LinuxExitAcked: on the ACK that ends fast
                    recovery the window grows by the segments that ACK newly delivered, as
                    Linux tcp_ack / tcp_cong_control (ns-3 counts those SACKed during the recovery)
  ns3-exit          LinuxExitAcked alone (stock queue discs)
  ns3-fq-mtu-exit-prr-private  ns3-fq-mtu-exit with qdisc_attr.h's PrrAttrRecovery, no switch (a
                    check: identical to the grid's prr-sack recovery)
  ns3-fq-mtu-exit-ssthresh  ... with TcpLinuxRenoAttr's LinuxSsthreshPkts (tcp_reno_ssthresh:
                    whole packets; ns-3 halves the byte window, e.g. 3.25 packets)
  ns3-fq-mtu-exit-congavoid ... with LinuxCongAvoid (tcp_reno_cong_avoid: the cwnd-limited test in
                    slow start too, the slow-start leftover to the additive increase)
  ns3-fq-mtu-exit-cwndcnt   ... with LinuxCwndCnt (the additive-increase counter cleared when a
                    reduction starts, as Linux's snd_cwnd_cnt; ns-3's m_cWndCnt carries over)
  ns3-fq-mtu-exit-cubic-cwndcnt  ns3-fq-mtu-exit with TcpCubicAttr's LinuxCwndCnt (CUBIC points)
  ns3-fq-mtu-exit-priorcwnd ... with PrrAttrRecovery's LinuxPriorCwnd (RecoverFS = the window at
                    entry, tcp_init_cwnd_reduction's prior_cwnd; ns-3: the pipe)
  ns3-fq-mtu-exit-prrpkts   ... with LinuxPackets (tcp_cwnd_reduction in whole packets, SSRB on
                    SND.UNA advance)
  ns3-fq-mtu-exit-prr-linux both PRR switches; ns3-fq-mtu-exit-all: all four
  both-fq-mtu-exit-target  ns3-fq-mtu-exit against ccsim-target-pkt (both sides changed)
  both-fq-mtu-exit-rack  ns3-fq-mtu-exit against ccsim with [tcp] recovery = "rack" (both changed)
  ns3-cwndcnt       LinuxCwndCnt alone (stock queue discs, NewReno points; cause Q7)
  ns3-exit-cwndcnt  LinuxExitAcked and LinuxCwndCnt (Q6 and Q7)
  ns3-rto-exit-cwndcnt  LinuxRtoSsthresh, LinuxExitAcked and LinuxCwndCnt (Q4, Q6 and Q7, NewReno points)
  ns3-exit-cubic-cwndcnt  LinuxExitAcked and TcpCubicAttr's LinuxCwndCnt (Q6 and Q7, CUBIC points)
  ns3-cubic-cwndcnt  TcpCubicAttr's LinuxCwndCnt alone (stock queue discs, CUBIC points; Q7 for CUBIC)
  ns3-pie-linux-rto-exit-cwndcnt  ns3-pie-linux-rto with Q6 and Q7 (PIE NewReno points)
  both-hystart-4ms-target  ns3-hystart-4ms against ccsim-target-pkt (Q8 and Q1; both sides changed)
  both-rto-exit-cwndcnt-fq-limit  ns3-rto-exit-cwndcnt against ccsim-fq-limit (Q4, Q6, Q7 and Q9)
  both-rto-exit-cwndcnt-fq-limit-linux-rto  the same, ccsim with Linux's RTO as well (ccsim-linux-rto)
  ns3-fq-empty      that FQ-CoDel with Linux's handling of a new flow found empty (QDISC.md 3)
  ns3-fq-linux      that FQ-CoDel with all three
  (the ns3-pie-*, -rto-*, -codel-*, -fq-*, ns3-dctcp-private and *-ack-now experiments need
  bench/ns3/build/qdisc_attr: bash validation/ns3/build_attr.sh)

Baselines: stock ns-3 from the committed cache (results/raw_qdisc/, looked up by command line,
so any binary built from the same qdisc.cc serves: the runs are deterministic; it holds the
grid's seeds 1-3, and a seed it lacks is run here with the stock bench/ns3/build/qdisc and
cached in results/raw_qdisc_attr/) and stock ccsim (run here). Both sides' runs are cached in
results/raw_qdisc_attr/ (git-ignored: the ns-3 key includes the binary's SHA-1, the ccsim key
the scenario TOML); ns-3 runs one process at a
time under nice 15. Prints one Markdown table: per point, ccsim / ns-3 mean queueing delay and
total throughput before and after the change, the Δs and the drops. `--stats` adds a second
table over the seeds' Δs after the change (each seed's Δ = ccsim / ns-3 - 1 of that seed, not
the Δ of the means): mean, sample standard deviation, Student-t 95 % interval of the mean and
where the 10 % flag line falls (inside the interval, or the whole interval within or beyond
it). The tables of docs/validation.md are in results/qdisc_attribution.md.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent


def _load_qdisc():
    if "ccsim_ns3_validation_qdisc" not in sys.modules:
        spec = importlib.util.spec_from_file_location("ccsim_ns3_validation_qdisc", HERE / "qdisc.py")
        assert spec and spec.loader
        m = importlib.util.module_from_spec(spec)
        sys.modules["ccsim_ns3_validation_qdisc"] = m
        spec.loader.exec_module(m)
    return sys.modules["ccsim_ns3_validation_qdisc"]


Q = _load_qdisc()
PPP_BYTES = Q.PKT_BYTES + 2  # ns-3's point-to-point frame: the IP packet and a 2-byte PPP header


def pkt_time_ms(p) -> float:
    return PPP_BYTES * 8 / (p.rate_mbps * 1e6) * 1e3


DEFAULT_TARGET_MS = {"codel": 5.0, "fq_codel": 5.0, "pie": 15.0}


# --------------------------------------------------------------------------- the changes


def ccsim_target_pkt(p, sc: dict[str, Any]) -> dict[str, Any]:
    t = DEFAULT_TARGET_MS[p.qdisc] + pkt_time_ms(p)
    sc["bottleneck"]["qdisc_params"] = {**sc["bottleneck"].get("qdisc_params", {}), "target": round(t, 6)}
    return sc


def ccsim_nohystart(p, sc: dict[str, Any]) -> dict[str, Any]:
    for f in sc["flows"]:
        if f["cc"] == "cubic":
            f["params"] = {**f.get("params", {}), "hystart": False}
    return sc


def ccsim_min_rto(ms: int) -> Callable:
    """ccsim's min_rto raised to `ms`: a stand-in for Linux's longer RTO at a large SRTT (Linux
    SRTT + max(200 ms, 4 RTTVAR), ccsim RFC 6298's max(200 ms, SRTT + 4 RTTVAR)); it lengthens
    the timer at every RTT, so it is a sensitivity test, not Linux's formula."""

    def f(p, sc: dict[str, Any]) -> dict[str, Any]:
        sc["tcp"]["min_rto"] = f"{ms}ms"
        return sc

    return f


def ccsim_linux_rto(p, sc: dict[str, Any]) -> dict[str, Any]:
    """ccsim with Linux's RTO (`[tcp] rto_estimator = "linux"`: SRTT + rttvar, rttvar at least
    min_rto, tcp_rtt_estimator's variance), as the grid's ns-3 computes it
    (--clockGranularity=200ms: SRTT + max(200 ms, 4 RTTVAR))."""
    sc["tcp"]["rto_estimator"] = "linux"
    return sc


def ccsim_rack(p, sc: dict[str, Any]) -> dict[str, Any]:
    """ccsim with RACK loss detection (`[tcp] recovery = "rack"`, Linux tcp_recovery.c) instead of
    the grid's RFC 6675 DupThresh rule."""
    sc["tcp"]["recovery"] = "rack"
    return sc


def ccsim_fq_limit(p, sc: dict[str, Any]) -> dict[str, Any]:
    """ccsim's FQ-CoDel with the grid's 1000-packet hard limit as its own `limit` (Linux `tc qdisc
    ... fq_codel limit 1000`; ns-3's FqCoDelQueueDisc MaxSize 1000p): over it, fq_codel_drop takes a
    batch (at most drop_batch_size 64, until half its bytes are gone) from the head of the fattest
    flow queue. The grid's scenario set `buffer = 1000pkt` and left fq_codel's limit at 10240, so
    the link's buffer tail-drops the arriving packet first, whichever flow it belongs to (cause Q9).
    The buffer is raised to 10240 packets, above the limit, so that it never acts. (qdisc.py's
    grid has set fq_codel this way since 2026-11-27: on it this changes nothing.)"""
    sc["bottleneck"]["buffer"] = "10240pkt"
    sc["bottleneck"]["qdisc_params"] = {**sc["bottleneck"].get("qdisc_params", {}), "limit": 1000}
    return sc


def _step_k(p) -> int:
    return int(p.qdisc_params["min_th"])


def ccsim_step_k1(p, sc: dict[str, Any]) -> dict[str, Any]:
    """ccsim's DCTCP step threshold one packet higher (min_th = max_th = K + 1): ns-3's RED counts
    the packets in the queue disc only, not the one waiting in the 1-packet device queue below it,
    so its step marks when K + 1 packets wait (cause Q10)."""
    k = _step_k(p) + 1
    sc["bottleneck"]["qdisc_params"] = {**sc["bottleneck"]["qdisc_params"], "min_th": k, "max_th": k}
    return sc


def ns3_step_k1(p) -> list[str]:
    """ns-3's MinTh = MaxTh = K - 1: its step then marks when K packets wait, queue disc and
    device queue together, as ccsim's (Q10)."""
    k = _step_k(p) - 1
    return [f"--redMinTh={k}", f"--redMaxTh={k}"]


def ns3_target_pkt(p) -> list[str]:
    t_ns = round((DEFAULT_TARGET_MS[p.qdisc] - pkt_time_ms(p)) * 1e6)
    return [f"--pieTarget={t_ns}ns"] if p.qdisc == "pie" else [f"--codelTarget={t_ns}ns"]


PIE_LINUX = {"QDISC_ATTR_PIE": "ns3::LinuxPieQueueDisc"}
LPIE = "--ns3::LinuxPieQueueDisc::"
PIE_ALL = [f"{LPIE}{k}=true" for k in ("LinuxBurst", "LinuxSafeguard", "LinuxHighDelay", "LinuxDecay", "LinuxAccu")]


def _pie(extra: list[str]) -> dict[str, Any]:
    return {"side": "ns3", "qdiscs": {"pie"}, "ns3": lambda p: list(extra), "env": PIE_LINUX, "bin": "qdisc_attr"}


RTO_CC = {"QDISC_ATTR_CC": "1"}
RTO_LINUX = [f"--ns3::{t}::LinuxRtoSsthresh=true" for t in ("TcpLinuxRenoAttr", "TcpCubicAttr")]
EXIT_LINUX = [f"--ns3::{t}::LinuxExitAcked=true" for t in ("TcpLinuxRenoAttr", "TcpCubicAttr")]
CODEL_LINUX = {"QDISC_ATTR_CODEL": "ns3::LinuxCoDelQueueDisc", "QDISC_ATTR_FQCODEL": "ns3::LinuxFqCoDelQueueDisc"}
LFQ = "--ns3::LinuxFqCoDelQueueDisc::"
MARK_LINUX = ["--ns3::LinuxCoDelQueueDisc::LinuxMarkSchedule=true", f"{LFQ}LinuxMarkSchedule=true"]


DCTCP_ATTR = {"QDISC_ATTR_DCTCP": "1"}
DCTCP_ALPHA = "--ns3::TcpDctcp::DctcpAlphaOnInit=0.9375"
ACK_NOW = ["--ns3::TcpDctcpAttr::LinuxAckNow=true"]


def _private(env: dict[str, str], extra: list[str], **kw: Any) -> dict[str, Any]:
    return {"side": "ns3", "ns3": lambda p: list(extra), "env": env, "bin": "qdisc_attr", **kw}


def _fq_exit(env: dict[str, str], extra: list[str]) -> dict[str, Any]:
    """ns3-fq-mtu-exit (Q5 and Q6) with one more change on the NewReno sender (`extra`, `env`)."""
    return _private(
        {**CODEL_LINUX, **RTO_CC, **env}, [f"{LFQ}LinuxMtuBacklog=true", *EXIT_LINUX, *extra], qdiscs={"fq_codel"}, ccs={"newreno"}
    )


EXPERIMENTS: dict[str, dict[str, Any]] = {
    "stock": {"side": "none"},
    "ccsim-target-pkt": {"side": "ccsim", "qdiscs": {"codel", "fq_codel", "pie"}, "ccsim": ccsim_target_pkt},
    "ns3-target-pkt": {"side": "ns3", "qdiscs": {"codel", "fq_codel", "pie"}, "ns3": ns3_target_pkt},
    "ccsim-nohystart": {"side": "ccsim", "ccs": {"cubic"}, "ccsim": ccsim_nohystart},
    "ccsim-min-rto-300": {"side": "ccsim", "ccsim": ccsim_min_rto(300)},
    "ccsim-min-rto-400": {"side": "ccsim", "ccsim": ccsim_min_rto(400)},
    "ccsim-linux-rto": {"side": "ccsim", "ccsim": ccsim_linux_rto},
    "ccsim-fq-limit": {"side": "ccsim", "qdiscs": {"fq_codel"}, "ccsim": ccsim_fq_limit},
    "ccsim-step-k1": {"side": "ccsim", "qdiscs": {"red-step"}, "ccsim": ccsim_step_k1},
    "ns3-step-k1": {"side": "ns3", "qdiscs": {"red-step"}, "ns3": ns3_step_k1},
    # Linux's dctcp_init resets the observation window at snd_nxt before any data is sent, so the
    # first ACK ends a window and alpha decays to 15/16 at once; ns-3's TcpDctcp sets its first
    # window's end at the first ACK, one decay later ever after (Q10): alpha on init 15/16 in ns-3
    "ns3-dctcp-alpha": {"side": "ns3", "qdiscs": {"red-step"}, "ns3": lambda p: [DCTCP_ALPHA]},
    "ns3-step-k1-dctcp-alpha": {
        "side": "ns3",
        "qdiscs": {"red-step"},
        "ns3": lambda p: [*ns3_step_k1(p), DCTCP_ALPHA],
    },
    "both-step-k1-dctcp-alpha": {
        "side": "both",
        "qdiscs": {"red-step"},
        "ccsim": ccsim_step_k1,
        "ns3": lambda p: [DCTCP_ALPHA],
    },
    # qdisc_attr.h's TcpDctcpAttr (QDISC_ATTR_DCTCP=1): with no switch ns-3's TcpDctcp; LinuxAckNow
    # ACKs the current segment at once on a change of CE state, as Linux's dctcp_ece_ack_update
    # (ICSK_ACK_NOW) and ccsim's receiver (ns-3 delays it; Q10)
    "ns3-dctcp-private": _private(DCTCP_ATTR, [], qdiscs={"red-step"}),
    "ns3-dctcp-ack-now": _private(DCTCP_ATTR, ACK_NOW, qdiscs={"red-step"}),
    "ns3-step-k1-dctcp-alpha-ack-now": {
        "side": "ns3",
        "qdiscs": {"red-step"},
        "ns3": lambda p: [*ns3_step_k1(p), DCTCP_ALPHA, *ACK_NOW],
        "env": DCTCP_ATTR,
        "bin": "qdisc_attr",
    },
    "both-step-k1-dctcp-alpha-ack-now": {
        "side": "both",
        "qdiscs": {"red-step"},
        "ccsim": ccsim_step_k1,
        "ns3": lambda p: [DCTCP_ALPHA, *ACK_NOW],
        "env": DCTCP_ATTR,
        "bin": "qdisc_attr",
    },
    "ns3-nohystart": {"side": "ns3", "ccs": {"cubic"}, "ns3": lambda p: ["--ns3::TcpCubic::HyStart=false"]},
    # ns-3's delay threshold is clamp(delay_min, HyStartDelayMin 4 ms, HyStartDelayMax 1 s), Linux's
    # clamp(delay_min / 8, 4 ms, 16 ms): with a 10 ms maximum both are 4 ms at a 2 ms RTT and 10 ms at 80 ms
    "ns3-hystart-thresh": {"side": "ns3", "ccs": {"cubic"}, "ns3": lambda p: ["--ns3::TcpCubic::HyStartDelayMax=10ms"]},
    # HyStartDelayMax = 4 ms: ns-3's threshold clamp(delay_min, 4 ms, 4 ms) is Linux's clamp(delay_min / 8,
    # 4 ms, 16 ms) whenever delay_min < 32 ms: at every 1 ms point, also for a flow that starts behind a
    # standing queue (its delay_min holds the queue: 6-8 ms, where ns-3's stock threshold is delay_min)
    "ns3-hystart-4ms": {"side": "ns3", "ccs": {"cubic"}, "ns3": lambda p: ["--ns3::TcpCubic::HyStartDelayMax=4ms"]},
    # validation/ns3/qdisc_attr.h's PIE: with no switch it is ns-3's PieQueueDisc, bit for bit
    "ns3-pie-private": _pie([]),
    "ns3-pie-burst": _pie([f"{LPIE}LinuxBurst=true"]),
    "ns3-pie-rest": _pie([f"{LPIE}{k}=true" for k in ("LinuxSafeguard", "LinuxHighDelay", "LinuxDecay", "LinuxAccu")]),
    "ns3-pie-first": _pie([f"{LPIE}FirstUpdate=500ms"]),
    "ns3-pie-linux": _pie(PIE_ALL + [f"{LPIE}FirstUpdate=500ms"]),
    # qdisc_attr.h's TcpLinuxRenoAttr / TcpCubicAttr (ns-3's TcpLinuxReno / TcpCubic, subclassed)
    "ns3-rto-private": _private(RTO_CC, [], ccs={"cubic", "newreno"}),
    "ns3-rto-ssthresh": _private(RTO_CC, RTO_LINUX, ccs={"cubic", "newreno"}),
    # every PIE switch (Q3, QDISC.md 7-12, the first update at 500 ms) and Q4 together
    "ns3-pie-linux-rto": _private(
        {**PIE_LINUX, **RTO_CC}, PIE_ALL + [f"{LPIE}FirstUpdate=500ms"] + RTO_LINUX, qdiscs={"pie"}, ccs={"cubic", "newreno"}
    ),
    # the same with ns-3's RTO as ccsim's (RFC 6298: max(MinRto, SRTT + max(G, 4 RTTVAR)), G = 1 ms)
    # instead of the grid's Linux-like SRTT + max(200 ms, 4 RTTVAR) (--clockGranularity=200ms)
    "ns3-pie-linux-rto-g1": _private(
        {**PIE_LINUX, **RTO_CC},
        PIE_ALL + [f"{LPIE}FirstUpdate=500ms"] + RTO_LINUX + ["--clockGranularity=1ms"],
        qdiscs={"pie"},
        ccs={"cubic", "newreno"},
    ),
    # qdisc_attr.h's LinuxCoDelQueueDisc / LinuxFqCoDelQueueDisc
    # both sides changed: ns3-pie-linux-rto against ccsim-linux-rto (PIE with every Linux switch
    # and Linux's RTO handling on both sides)
    "both-pie-linux-rto": {
        **_private({**PIE_LINUX, **RTO_CC}, PIE_ALL + [f"{LPIE}FirstUpdate=500ms"] + RTO_LINUX, qdiscs={"pie"}, ccs={"cubic", "newreno"}),
        "side": "both",
        "ccsim": ccsim_linux_rto,
    },
    "ns3-codel-private": _private(CODEL_LINUX, [], qdiscs={"codel", "fq_codel"}),
    "ns3-codel-mark": _private(CODEL_LINUX, MARK_LINUX, qdiscs={"codel", "fq_codel"}, ecn={True}),
    "ns3-fq-mtu": _private(CODEL_LINUX, [f"{LFQ}LinuxMtuBacklog=true"], qdiscs={"fq_codel"}),
    # Q1 and Q5 together: Linux's backlog test and ns-3's target lowered by one packet time
    "ns3-fq-mtu-target": {
        **_private(CODEL_LINUX, [f"{LFQ}LinuxMtuBacklog=true"], qdiscs={"fq_codel"}),
        "ns3": lambda p: [f"{LFQ}LinuxMtuBacklog=true", *ns3_target_pkt(p)],
    },
    # Q5 and LinuxExitAcked (the window growth on the ACK that ends fast recovery, as Linux)
    "ns3-fq-mtu-exit": _private(
        {**CODEL_LINUX, **RTO_CC}, [f"{LFQ}LinuxMtuBacklog=true", *EXIT_LINUX], qdiscs={"fq_codel"}, ccs={"cubic", "newreno"}
    ),
    "ns3-exit": _private(RTO_CC, EXIT_LINUX, ccs={"cubic", "newreno"}),
    # Q7: TcpLinuxRenoAttr's LinuxCwndCnt (the additive-increase counter cleared when a reduction
    # starts, Linux tcp_init_cwnd_reduction), alone and with Q6 (stock queue discs, NewReno only)
    "ns3-cwndcnt": _private(RTO_CC, ["--ns3::TcpLinuxRenoAttr::LinuxCwndCnt=true"], ccs={"newreno"}),
    "ns3-exit-cwndcnt": _private(RTO_CC, [*EXIT_LINUX, "--ns3::TcpLinuxRenoAttr::LinuxCwndCnt=true"], ccs={"newreno"}),
    # Q4, Q6 and Q7 together on the NewReno sender (stock queue discs)
    "ns3-rto-exit-cwndcnt": _private(
        RTO_CC, [*RTO_LINUX, *EXIT_LINUX, "--ns3::TcpLinuxRenoAttr::LinuxCwndCnt=true"], ccs={"newreno"}
    ),
    # Q6 and Q7 on the CUBIC points: LinuxExitAcked and TcpCubicAttr's LinuxCwndCnt (stock queue discs)
    "ns3-exit-cubic-cwndcnt": _private(RTO_CC, [*EXIT_LINUX, "--ns3::TcpCubicAttr::LinuxCwndCnt=true"], ccs={"cubic"}),
    # Q7 alone on the CUBIC sender: TcpCubicAttr's LinuxCwndCnt (stock queue discs)
    "ns3-cubic-cwndcnt": _private(RTO_CC, ["--ns3::TcpCubicAttr::LinuxCwndCnt=true"], ccs={"cubic"}),
    # ns3-pie-linux-rto (Q3, Q4) with Q6 and Q7 on the NewReno sender: every ns-3 switch a PIE NewReno point has
    "ns3-pie-linux-rto-exit-cwndcnt": _private(
        {**PIE_LINUX, **RTO_CC},
        PIE_ALL + [f"{LPIE}FirstUpdate=500ms"] + RTO_LINUX + EXIT_LINUX + ["--ns3::TcpLinuxRenoAttr::LinuxCwndCnt=true"],
        qdiscs={"pie"},
        ccs={"newreno"},
    ),
    # the NewReno x4 1 ms residual after Q5 and Q6: one more Linux behaviour of the sender each
    # (qdisc_attr.h's TcpLinuxRenoAttr switches and its PrrAttrRecovery, QDISC_ATTR_PRR=1)
    "ns3-fq-mtu-exit-prr-private": _fq_exit({"QDISC_ATTR_PRR": "1"}, []),
    "ns3-fq-mtu-exit-ssthresh": _fq_exit({}, ["--ns3::TcpLinuxRenoAttr::LinuxSsthreshPkts=true"]),
    "ns3-fq-mtu-exit-congavoid": _fq_exit({}, ["--ns3::TcpLinuxRenoAttr::LinuxCongAvoid=true"]),
    "ns3-fq-mtu-exit-cwndcnt": _fq_exit({}, ["--ns3::TcpLinuxRenoAttr::LinuxCwndCnt=true"]),
    "ns3-fq-mtu-exit-cubic-cwndcnt": _private(
        {**CODEL_LINUX, **RTO_CC},
        [f"{LFQ}LinuxMtuBacklog=true", *EXIT_LINUX, "--ns3::TcpCubicAttr::LinuxCwndCnt=true"],
        qdiscs={"fq_codel"},
        ccs={"cubic"},
    ),
    "ns3-fq-mtu-exit-priorcwnd": _fq_exit({"QDISC_ATTR_PRR": "1"}, ["--ns3::PrrAttrRecovery::LinuxPriorCwnd=true"]),
    "ns3-fq-mtu-exit-prrpkts": _fq_exit({"QDISC_ATTR_PRR": "1"}, ["--ns3::PrrAttrRecovery::LinuxPackets=true"]),
    "ns3-fq-mtu-exit-prr-linux": _fq_exit(
        {"QDISC_ATTR_PRR": "1"}, ["--ns3::PrrAttrRecovery::LinuxPriorCwnd=true", "--ns3::PrrAttrRecovery::LinuxPackets=true"]
    ),
    "ns3-fq-mtu-exit-all": _fq_exit(
        {"QDISC_ATTR_PRR": "1"},
        [
            "--ns3::PrrAttrRecovery::LinuxPriorCwnd=true",
            "--ns3::PrrAttrRecovery::LinuxPackets=true",
            "--ns3::TcpLinuxRenoAttr::LinuxSsthreshPkts=true",
            "--ns3::TcpLinuxRenoAttr::LinuxCongAvoid=true",
            "--ns3::TcpLinuxRenoAttr::LinuxCwndCnt=true",
        ],
    ),
    # both sides changed: ns3-fq-mtu-exit against ccsim-target-pkt (Q1's set-up difference taken
    # out on ccsim's side: its CoDel target raised by the packet time ns-3's AQM does not see)
    # ns3-fq-mtu-exit against ccsim with RACK loss detection ([tcp] recovery = "rack", Linux's default)
    "both-fq-mtu-exit-rack": {
        **_private(
            {**CODEL_LINUX, **RTO_CC}, [f"{LFQ}LinuxMtuBacklog=true", *EXIT_LINUX], qdiscs={"fq_codel"}, ccs={"cubic", "newreno"}
        ),
        "side": "both",
        "ccsim": ccsim_rack,
    },
    "both-fq-mtu-exit-target": {
        **_private(
            {**CODEL_LINUX, **RTO_CC}, [f"{LFQ}LinuxMtuBacklog=true", *EXIT_LINUX], qdiscs={"fq_codel"}, ccs={"cubic", "newreno"}
        ),
        "side": "both",
        "ccsim": ccsim_target_pkt,
    },
    # both sides changed: ns3-hystart-4ms (Q8) against ccsim-target-pkt (Q1)
    "both-hystart-4ms-target": {
        "side": "both",
        "ccs": {"cubic"},
        "qdiscs": {"codel", "fq_codel", "pie"},
        "ns3": lambda p: ["--ns3::TcpCubic::HyStartDelayMax=4ms"],
        "ccsim": ccsim_target_pkt,
    },
    # both sides changed: ns3-rto-exit-cwndcnt (Q4, Q6, Q7) against ccsim-fq-limit (Q9)
    "both-rto-exit-cwndcnt-fq-limit": {
        **_private(RTO_CC, [*RTO_LINUX, *EXIT_LINUX, "--ns3::TcpLinuxRenoAttr::LinuxCwndCnt=true"], ccs={"newreno"}),
        "qdiscs": {"fq_codel"},
        "side": "both",
        "ccsim": ccsim_fq_limit,
    },
    # the same with ccsim's RTO as Linux's as well ([tcp] rto_estimator = "linux")
    "both-rto-exit-cwndcnt-fq-limit-linux-rto": {
        **_private(RTO_CC, [*RTO_LINUX, *EXIT_LINUX, "--ns3::TcpLinuxRenoAttr::LinuxCwndCnt=true"], ccs={"newreno"}),
        "qdiscs": {"fq_codel"},
        "side": "both",
        "ccsim": lambda p, sc: ccsim_linux_rto(p, ccsim_fq_limit(p, sc)),
    },
    "ns3-fq-empty": _private(CODEL_LINUX, [f"{LFQ}LinuxEmptyNewFlow=true"], qdiscs={"fq_codel"}),
    "ns3-fq-linux": _private(
        CODEL_LINUX, [f"{LFQ}LinuxMtuBacklog=true", f"{LFQ}LinuxEmptyNewFlow=true", *MARK_LINUX], qdiscs={"fq_codel"}
    ),
}


# --------------------------------------------------------------------------- runs


def stock_ns3_index(raw: Path) -> dict[str, dict[str, Any]]:
    """The committed ns-3 runs by command line."""
    idx = {}
    for f in raw.glob("ns3-*.json"):
        d = json.loads(f.read_text())
        idx[json.dumps(d["args"])] = d
    return idx


def run_ns3(binary: Path, args: list[str], env: dict[str, str], cache_dir: Path) -> dict[str, Any]:
    h = hashlib.sha1(binary.read_bytes()).hexdigest()
    key = hashlib.sha1((json.dumps(args) + json.dumps(env, sort_keys=True) + h).encode()).hexdigest()[:16]
    cache = cache_dir / f"ns3-{key}.json"
    if cache.is_file():
        return json.loads(cache.read_text())
    t0 = time.perf_counter()
    r = subprocess.run(
        [str(binary), *args], capture_output=True, text=True, env={**os.environ, **env}, preexec_fn=lambda: os.nice(15)
    )
    if r.returncode != 0:
        raise RuntimeError(f"{binary.name} failed ({r.returncode}): {r.stderr[-2000:]}")
    d = json.loads([ln for ln in r.stdout.splitlines() if ln.startswith("{")][-1])
    d["args"], d["env"], d["process_seconds"] = args, env, time.perf_counter() - t0
    cache_dir.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps(d) + "\n")
    return d


def run_ccsim(sc: dict[str, Any], cache_dir: Path) -> dict[str, Any]:
    """`ccsim run` on the scenario, cached by its TOML (in a git-ignored directory: ccsim changes)."""
    import tempfile

    text = Q.to_toml(sc)
    cache = cache_dir / f"ccsim-{hashlib.sha1(text.encode()).hexdigest()[:16]}.json"
    if cache.is_file():
        return json.loads(cache.read_text())
    with tempfile.TemporaryDirectory() as td:
        path = Path(td) / "scenario.toml"
        path.write_text(Q.to_toml(sc))
        r = subprocess.run(["ccsim", "run", str(path), "--json", "--no-timeseries"], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"ccsim failed: {r.stderr.strip()[-500:]}")
    cache_dir.mkdir(parents=True, exist_ok=True)
    cache.write_text(r.stdout)
    return json.loads(r.stdout)


def _mean(ss: list[dict[str, Any]], k: str) -> float:
    xs = [s[k] for s in ss if not math.isnan(s[k])]
    return sum(xs) / len(xs) if xs else float("nan")


def _pct(x: float) -> str:
    return "—" if math.isnan(x) else f"{x * 100:+.1f}%"


def seed_stats(xs: list[float]) -> tuple[float, float, float, float]:
    """Mean, sample standard deviation and the Student-t 95 % interval of the mean of `xs`
    (ccsim.stats.spread, the interval every ccsim report uses)."""
    from ccsim.stats import spread

    s = spread(xs)
    return s.mean, s.sd, s.low, s.high


def flag_verdict(lo: float, hi: float, tol: float = 0.10) -> str:
    """Where the flag line |Δ| = tol falls against the interval [lo, hi]."""
    if math.isnan(lo):
        return "—"
    if -tol < lo and hi < tol:
        return "within 10 %"
    if hi < -tol or lo > tol:
        return "beyond 10 %"
    return "10 % line inside"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("experiment", choices=sorted(EXPERIMENTS))
    ap.add_argument("--points", nargs="*", default=None, help="only points whose name contains one of these")
    ap.add_argument("--exclude", nargs="*", default=[], help="leave out points whose name contains one of these")
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--ns3-bin", type=Path, default=None, help="default bench/ns3/build/<qdisc or qdisc_attr>")
    ap.add_argument("--out", type=Path, default=HERE / "results")
    ap.add_argument(
        "--per-seed",
        action="store_true",
        help="add the Δ qdelay / Δ Mbps after the change per seed (is a residual larger than the seed-to-seed spread?)",
    )
    ap.add_argument(
        "--stats",
        action="store_true",
        help="add a table of the per-seed Δs after the change: mean, sd, 95 %% interval of the mean, the 10 %% line",
    )
    args = ap.parse_args(argv)

    ex = EXPERIMENTS[args.experiment]
    seeds = tuple(int(s) for s in args.seeds.split(","))
    points = [
        p
        for p in Q.full_grid(seeds)
        if p.qdisc in ex.get("qdiscs", {p.qdisc})
        and p.cc in ex.get("ccs", {p.cc})
        and p.ecn in ex.get("ecn", {p.ecn})
        and (args.points is None or any(s in p.name for s in args.points))
        and not any(s in p.name for s in args.exclude)
    ]
    stock = stock_ns3_index(args.out / "raw_qdisc")
    binary = args.ns3_bin or (Q.R.NS3_DIR / "build" / ex.get("bin", "qdisc"))
    ccache = args.out / "raw_qdisc_attr" / "ccsim"
    rows = []
    t0 = time.perf_counter()
    for p in points:
        ns_before, ns_after, cc_before, cc_after = [], [], [], []
        for s in seeds:
            a = Q.ns3_args(p, s)
            d = stock.get(json.dumps(a))
            if d is None:
                # a seed the grid's committed cache lacks: the stock binary, cached with the runs here
                stock_bin = Q.NS3_BIN
                if not stock_bin.is_file():
                    raise SystemExit(f"qdisc_attribute.py: no cached stock ns-3 run for {p.name} seed {s} and no {stock_bin}")
                d = run_ns3(stock_bin, a, {}, args.out / "raw_qdisc_attr")
            ns_before.append(Q.summarize("ns3", d))
            sc = Q.ccsim_scenario(p, s)
            cc_before.append(Q.summarize("ccsim", run_ccsim(sc, ccache)))
            if ex["side"] in ("ns3", "both"):
                d2 = run_ns3(binary, a + ex["ns3"](p), ex.get("env", {}), args.out / "raw_qdisc_attr")
                ns_after.append(Q.summarize("ns3", d2))
                print(f"[{time.perf_counter() - t0:6.0f}s] {p.name} seed {s}: ns-3 {d2.get('process_seconds', 0):.1f} s", file=sys.stderr, flush=True)
            if ex["side"] in ("ccsim", "both"):
                f: Callable = ex["ccsim"]
                cc_after.append(Q.summarize("ccsim", run_ccsim(f(p, json.loads(json.dumps(sc))), ccache)))
        nb, cb = ns_before, cc_before
        na = ns_after or ns_before
        ca = cc_after or cc_before
        m = {k: (_mean(cb, k), _mean(nb, k), _mean(ca, k), _mean(na, k)) for k in ("qdelay", "total", "drops", "aqm_drops")}
        m["seeds"] = [(c["qdelay"] / n["qdelay"] - 1, c["total"] / n["total"] - 1) for c, n in zip(ca, na)]
        rows.append((p, m))

    print(
        f"Experiment `{args.experiment}` ({ex['side']} changed), seeds {args.seeds}; "
        "before = stock ccsim vs stock ns-3, after = with the change. Δ = (ccsim - ns-3) / ns-3.\n"
    )
    seed_head = " | Δ qdelay after, per seed | Δ Mbps after, per seed" if args.per_seed else ""
    print(f"| point | qdelay ms ccsim / ns-3, before | Δ | after | Δ | Mbps Δ before → after | drops ccsim / ns-3 before → after{seed_head} |")
    print("|---|---:|---:|---:|---:|---:|---:|" + ("---:|---:|" if args.per_seed else ""))
    for p, m in rows:
        cq, nq, cq2, nq2 = m["qdelay"]
        ct, nt, ct2, nt2 = m["total"]
        drops = [m["drops"][i] + m["aqm_drops"][i] for i in range(4)]
        print(
            f"| {p.name} | {cq:.2f} / {nq:.2f} | {_pct(cq / nq - 1)} | {cq2:.2f} / {nq2:.2f} | {_pct(cq2 / nq2 - 1)} "
            f"| {_pct(ct / nt - 1)} → {_pct(ct2 / nt2 - 1)} | {drops[0]:.0f} / {drops[1]:.0f} → {drops[2]:.0f} / {drops[3]:.0f} |"
            + (
                f" {' '.join(_pct(q) for q, _ in m['seeds'])} | {' '.join(_pct(t) for _, t in m['seeds'])} |"
                if args.per_seed
                else ""
            )
        )
    if args.stats:
        print(
            f"\nOver seeds {args.seeds} (n = {len(seeds)}), after the change: each seed's Δ, their mean, sample sd and "
            "Student-t 95 % interval of the mean, and where the 10 % flag line falls.\n"
        )
        print("| point | Δ qdelay mean | sd | 95 % CI | 10 % line | Δ Mbps mean | sd | 95 % CI | 10 % line |")
        print("|---|---:|---:|---:|---|---:|---:|---:|---|")
        for p, m in rows:
            cells = []
            for i in (0, 1):
                mu, sd, lo, hi = seed_stats([x[i] for x in m["seeds"]])
                cells += [_pct(mu), "—" if math.isnan(sd) else f"{sd * 100:.1f}", f"{_pct(lo)} … {_pct(hi)}", flag_verdict(lo, hi)]
            print(f"| {p.name} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
