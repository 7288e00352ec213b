//! ECN end to end on a dumbbell whose bottleneck marks: CUBIC with classic ECN (RFC 3168)
//! reduces on the echoes instead of losing packets, and DCTCP holds the queue where its
//! analysis puts it (Alizadeh et al. 2010, section 3.3), with the link full.
//!
//! The marking queue is a test-only step marker (below), not a discipline of `net/qdisc`: CE
//! on every ECN-capable packet that arrives to K or more packets waiting, else a FIFO.

use ccsim_core::metrics::Summary;
use ccsim_core::net::qdisc::{DropCause, PacketQueue, Qdisc, Queued};
use ccsim_core::net::Ecn;
use ccsim_core::sim::Sim;
use ccsim_core::time::Time;
use ccsim_core::Scenario;
use serde_json::{json, Value};

/// DCTCP's switch marking: CE when the queue (not counting the packet being sent) holds at
/// least `k` packets on arrival; Not-ECT packets are queued unmarked (the link's buffer is the
/// only limit).
struct StepMarker {
    k: usize,
    q: PacketQueue,
    marks: u64,
}

fn step_marker(k: usize) -> Box<dyn Qdisc> {
    Box::new(StepMarker { k, q: PacketQueue::default(), marks: 0 })
}

impl Qdisc for StepMarker {
    fn enqueue(&mut self, mut p: Queued, _now: Time, _dropped: &mut Vec<(Queued, DropCause)>) -> Result<(), (Queued, DropCause)> {
        if p.r.ecn().capable() && self.q.len() >= self.k && p.r.ecn() != Ecn::Ce {
            p.r.set_ecn(Ecn::Ce);
            self.marks += 1;
        }
        self.q.push(p);
        Ok(())
    }
    fn dequeue(&mut self, _now: Time, _dropped: &mut Vec<(Queued, DropCause)>) -> Option<Queued> {
        self.q.pop()
    }
    ccsim_core::packet_queue_storage!(q);
    fn marks(&self) -> u64 {
        self.marks
    }
}

const BOTTLENECK: &str = "router->receiver";

/// What a run gives: the summary, the marks, the bottleneck's queue samples after `warmup`
/// seconds, and the data packets still in the network at the end.
struct Outcome {
    summary: Summary,
    marks: u64,
    queue: Vec<f64>,
    in_network: u64,
}

fn run_marked(sc: &Scenario, k: usize, warmup: f64) -> Outcome {
    let mut sim = Sim::new(sc, sc.seed);
    let d = sim.network().dir_named(BOTTLENECK).unwrap();
    sim.set_qdisc(d, step_marker(k));
    sim.run_to_end();
    sim.check_conservation().unwrap();
    let dir = &sim.network().dirs[d as usize];
    let marks = dir.slot.as_ref().unwrap().qdisc.marks();
    let in_network = sim.network().dirs.iter().map(|d| d.in_flight()).sum();
    let ls = &sim.link_series;
    let idx = ls.links.iter().position(|l| l == BOTTLENECK).unwrap() as u32;
    let queue = (0..ls.time_s.len()).filter(|&i| ls.link[i].0 == idx && ls.time_s[i] > warmup).map(|i| ls.queue_pkts[i] as f64).collect();
    Outcome { summary: sim.summary(0.0), marks, queue, in_network }
}

fn scenario(v: Value) -> Scenario {
    Scenario::from_value(&v).unwrap_or_else(|e| panic!("valid scenario: {e}"))
}

fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

fn quantile(xs: &[f64], q: f64) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[((v.len() - 1) as f64 * q).round() as usize]
}

#[test]
fn cubic_with_ecn_reduces_on_marks_and_loses_nothing() {
    // 100 Mbps, 10 ms base RTT, a 1000-packet buffer that never fills, marks from 30 packets.
    let sc = scenario(json!({
        "duration": "10s",
        "bottleneck": {"rate": "100Mbps", "delay": "4ms", "buffer": "1000pkt"},
        "tcp": {"ecn": true},
        "flows": [{"cc": "cubic", "count": 2, "access_delay": "1ms"}],
    }));
    let o = run_marked(&sc, 30, 1.0);
    let bn = o.summary.bottleneck.as_ref().unwrap();
    let ce: u64 = o.summary.flows.iter().map(|f| f.ce_received).sum();
    eprintln!("marks {} ce {} drops {} util {:.4} queue mean {:.1} max {}", o.marks, ce, bn.drops, bn.utilization, mean(&o.queue), bn.queue_max_pkts);
    for f in &o.summary.flows {
        eprintln!("flow {}: {:.2} Mbps, ece_reductions {}, ce {}, retx {}", f.id, f.throughput_mbps, f.ece_reductions, f.ce_received, f.retransmits);
    }
    assert!(o.marks > 0);
    assert_eq!(bn.drops, 0, "the buffer never fills: ECN replaced loss");
    // Every mark reaches a receiver, unless still in the network at the end.
    assert!(ce <= o.marks && o.marks - ce <= o.in_network, "marks {} received {ce} in network {}", o.marks, o.in_network);
    for f in &o.summary.flows {
        assert!(f.ce_received > 0 && f.ece_reductions > 0, "flow {}", f.id);
        assert_eq!((f.retransmits, f.rto_count, f.fast_recoveries), (0, 0, 0), "flow {}", f.id);
        // One reduction per window at most: never more than the run's RTTs.
        let rtts = 10_000.0 / f.rtt_min_ms;
        assert!((f.ece_reductions as f64) < rtts, "flow {}: {} reductions in {rtts:.0} RTTs", f.id, f.ece_reductions);
    }
}

/// DCTCP's steady state for N synchronised flows sharing a link of C packets per second with
/// base RTT `rtt` (s) and marking threshold K (Alizadeh et al., "Data Center TCP (DCTCP)",
/// SIGCOMM 2010, section 3.3; the fluid model of Alizadeh, Javanmard & Prabhakar, SIGMETRICS
/// 2011, gives the same amplitude):
///   W* = (C RTT + K) / N, the window at which the queue reaches K;
///   alpha, the fraction marked in that window's last RTT, solves
///     alpha^2 (1 - alpha / 4) = (2 W* + 1) / (W* + 1)^2     (so alpha ~ sqrt(2 / W*));
///   D = (W* + 1) alpha / 2, each flow's window cut;
///   A = N D ~ (1/2) sqrt(2 N (C RTT + K)), the queue's amplitude;
///   Q_max = K + N, Q_min = Q_max - A.
/// The queue is a sawtooth between Q_min and Q_max, so its time average lies between them;
/// Q_min > 0 (K > C RTT / 7 for small N) keeps the link busy. Returns (Q_min, Q_max, A).
fn dctcp_queue_band(c_rtt: f64, k: f64, n: f64) -> (f64, f64, f64) {
    let w = (c_rtt + k) / n;
    let rhs = (2.0 * w + 1.0) / ((w + 1.0) * (w + 1.0));
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    for _ in 0..60 {
        let a = (lo + hi) / 2.0;
        if a * a * (1.0 - a / 4.0) < rhs {
            lo = a;
        } else {
            hi = a;
        }
    }
    let alpha = (lo + hi) / 2.0;
    let amplitude = n * (w + 1.0) * alpha / 2.0;
    let q_max = k + n;
    (q_max - amplitude, q_max, amplitude)
}

/// Two DCTCP flows over 100 Mbps with a 1 ms base RTT.
fn dctcp_pair(ecn: bool) -> Scenario {
    scenario(json!({
        "duration": "10s",
        "sample_interval": "1ms",
        "bottleneck": {"rate": "100Mbps", "delay": "0.4ms", "buffer": "200pkt"},
        "tcp": {"ecn": ecn},
        "flows": [{"cc": "dctcp", "count": 2, "access_delay": "0.1ms"}],
    }))
}

/// C x RTT of `dctcp_pair` in packets: 100 Mbps over 1500-byte packets, the RTT being the
/// 1 ms of propagation plus a data packet's serialisation on the bottleneck (120 us) and on
/// the 1 Gbps access link (12 us): the packet in service is in the pipe, as the marker does
/// not count it in the queue either.
const DCTCP_PAIR_C_RTT: f64 = 100e6 / (1500.0 * 8.0) * 1.132e-3;

#[test]
fn dctcp_keeps_the_queue_in_its_analytic_band_and_the_link_full() {
    let k = 20;
    assert!(k as f64 > DCTCP_PAIR_C_RTT / 7.0);
    let (q_min, q_max, amplitude) = dctcp_queue_band(DCTCP_PAIR_C_RTT, k as f64, 2.0);
    let o = run_marked(&dctcp_pair(true), k, 1.0);
    let bn = o.summary.bottleneck.as_ref().unwrap();
    let (m, p01, p99) = (mean(&o.queue), quantile(&o.queue, 0.01), quantile(&o.queue, 0.99));
    eprintln!(
        "band [{q_min:.2}, {q_max:.2}] A {amplitude:.2}: mean {m:.2} p1 {p01} p99 {p99} min {} max {}; util {:.4} drops {} marks {}",
        quantile(&o.queue, 0.0),
        quantile(&o.queue, 1.0),
        bn.utilization,
        bn.drops,
        o.marks
    );
    for f in &o.summary.flows {
        eprintln!("flow {}: {:.2} Mbps, ece_reductions {}, ce {}, retx {}", f.id, f.throughput_mbps, f.ece_reductions, f.ce_received, f.retransmits);
    }
    assert!(o.summary.warnings.is_empty(), "{:?}", o.summary.warnings);
    assert_eq!(bn.drops, 0);
    assert!(o.marks > 0);
    for f in &o.summary.flows {
        assert!(f.ece_reductions > 0 && f.retransmits == 0, "flow {}", f.id);
    }
    assert!(q_min <= m && m <= q_max, "mean queue {m:.2} outside [{q_min:.2}, {q_max:.2}]");
    // And the sawtooth itself stays in the band, rounded outward to whole packets (the
    // analysis is a fluid one), for 98% of the samples: the swing is the amplitude A.
    assert!(q_min.floor() <= p01 && p99 <= q_max.ceil(), "queue p1 {p01} / p99 {p99} outside [{q_min:.2}, {q_max:.2}]");
    // K above C RTT / 7: Q_min > 0, the queue never drains, so the link never idles.
    assert!(quantile(&o.queue, 0.0) > 0.0);
    assert!(bn.utilization > 0.99, "{}", bn.utilization);

    // K = 1, below C RTT / 7: Q_min < 0, so the sawtooth empties the queue and the link idles.
    let k = 1;
    assert!((k as f64) < DCTCP_PAIR_C_RTT / 7.0);
    let (q_min, _, _) = dctcp_queue_band(DCTCP_PAIR_C_RTT, k as f64, 2.0);
    assert!(q_min < 0.0);
    let o = run_marked(&dctcp_pair(true), k, 1.0);
    let u = o.summary.bottleneck.as_ref().unwrap().utilization;
    eprintln!("K = 1: Q_min {q_min:.2}, mean queue {:.2}, utilization {u:.4}", mean(&o.queue));
    assert_eq!(quantile(&o.queue, 0.0), 0.0);
    assert!(u < 0.99, "{u}");
}

#[test]
fn dctcp_without_ecn_is_reno_and_fills_the_buffer() {
    let o = run_marked(&dctcp_pair(false), 20, 1.0);
    let bn = o.summary.bottleneck.as_ref().unwrap();
    eprintln!("drops {} marks {} queue mean {:.1}", bn.drops, o.marks, mean(&o.queue));
    assert_eq!(o.marks, 0, "Not-ECT packets are never marked");
    assert!(bn.drops > 0, "Reno fills the 200-packet buffer");
    assert!(o.summary.flows.iter().all(|f| f.ece_reductions == 0 && f.ce_received == 0 && f.retransmits > 0));
    assert_eq!(
        o.summary.warnings,
        vec!["flows 0, 1: dctcp needs ECN but [tcp] ecn is false, so it runs without it as Linux does when ECN is not negotiated (dctcp: as Reno)".to_string()]
    );
}

