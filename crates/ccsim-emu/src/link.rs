//! The link model on integer time (ns): what happens to a packet, decided the moment it
//! arrives. Free of I/O, so it is tested on virtual time.
//!
//! The bottleneck is the simulator's (`ccsim_core::net::Link`, `docs/model.md`): a drop-tail
//! queue counted in waiting packets (or bytes), the packet being serialised not counted;
//! serialisation time `tx_time(bytes, rate)`; random loss at the far end, after the packet used
//! link time; then propagation. Because the link is work-conserving and FIFO, a packet's
//! service start is known when it arrives: max(arrival, the time the link frees up). The queue
//! is therefore kept as the list of accepted packets whose service has not started, and the
//! emulator only has to wake up to hand packets over, never at serialisation boundaries.

use ccsim_core::metrics::BottleneckSummary;
use ccsim_core::rng::{self, Rng};
use ccsim_core::stats::{Histogram, Running};
use ccsim_core::time::tx_time;
use rand::Rng as _;
use serde::Serialize;
use std::collections::VecDeque;

/// Drop-tail limit on the waiting packets.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Limit {
    Unlimited,
    Packets(u64),
    Bytes(u64),
}

/// The fate of a packet in the data direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Hand it to the far side at this time (ns).
    Deliver(u64),
    /// Drop-tail overflow.
    Dropped,
    /// Random loss (after it used link time).
    Lost,
}

/// Per-flow packet counts (arrivals inside the statistics window).
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct FlowCounters {
    /// The flow's port; `None` for the entry that collects unknown traffic.
    pub port: Option<u16>,
    /// Packets offered to the bottleneck (data direction, every packet).
    pub packets_in: u64,
    pub drops: u64,
    pub random_losses: u64,
    /// Packets handed to the receiver side (or due to be when the run ended).
    pub delivered: u64,
    /// Packets on the reverse path.
    pub acks_in: u64,
    pub ack_losses: u64,
}

#[derive(Debug, Clone, Copy)]
struct Waiting {
    arrival: u64,
    start: u64,
    bytes: u32,
}

/// Seeded random streams: the same stream ids as the simulator's bottleneck.
pub fn loss_streams(seed: u64) -> (Rng, Rng) {
    (rng::derive(seed, rng::stream::BOTTLENECK_LOSS), rng::derive(seed, rng::stream::ACK_LOSS))
}

pub struct Link {
    rate_bps: u64,
    delay_ns: u64,
    limit: Limit,
    loss: f64,
    ack_loss: f64,
    loss_rng: Rng,
    ack_loss_rng: Rng,
    /// One-way propagation delay per flow index (bottleneck + access); the last entry is for
    /// packets of no known flow.
    prop: Vec<u64>,
    /// The link is busy until then.
    free_at: u64,
    waiting: VecDeque<Waiting>,
    waiting_bytes: u64,
    window_start: u64,
    window_end: u64,
    flows: Vec<FlowCounters>,
    packets_in: u64,
    packets_out: u64,
    drops: u64,
    random_losses: u64,
    ack_losses: u64,
    busy_ns: u64,
    /// Integral of the number of waiting packets over the window (packet-ns).
    queue_area: u128,
    queue_max: u64,
    qdelay: Running,
    qdelay_hist: Histogram,
}

fn overlap(a0: u64, a1: u64, b0: u64, b1: u64) -> u64 {
    a1.min(b1).saturating_sub(a0.max(b0))
}

impl Link {
    /// `access_delays[i]` is flow i's access delay; packets of no known flow get none.
    /// Statistics count arrivals in [window_start, window_end).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        rate_bps: u64,
        delay_ns: u64,
        limit: Limit,
        loss: f64,
        ack_loss: f64,
        seed: u64,
        flow_ports: &[(u16, u64)],
        window: (u64, u64),
    ) -> Link {
        assert!(rate_bps > 0 && window.1 > window.0);
        let (loss_rng, ack_loss_rng) = loss_streams(seed);
        let mut prop: Vec<u64> = flow_ports.iter().map(|&(_, access)| delay_ns + access).collect();
        prop.push(delay_ns);
        let mut flows: Vec<FlowCounters> =
            flow_ports.iter().map(|&(port, _)| FlowCounters { port: Some(port), ..Default::default() }).collect();
        flows.push(FlowCounters::default());
        Link {
            rate_bps,
            delay_ns,
            limit,
            loss,
            ack_loss,
            loss_rng,
            ack_loss_rng,
            prop,
            free_at: 0,
            waiting: VecDeque::with_capacity(1024),
            waiting_bytes: 0,
            window_start: window.0,
            window_end: window.1,
            flows,
            packets_in: 0,
            packets_out: 0,
            drops: 0,
            random_losses: 0,
            ack_losses: 0,
            busy_ns: 0,
            queue_area: 0,
            queue_max: 0,
            qdelay: Running::default(),
            qdelay_hist: Histogram::default(),
        }
    }

    /// The flow index of packets that belong to no configured flow.
    pub fn unknown_flow(&self) -> usize {
        self.prop.len() - 1
    }

    fn in_window(&self, t: u64) -> bool {
        t >= self.window_start && t < self.window_end
    }

    /// Forget the packets whose service has started by `now`.
    fn expire(&mut self, now: u64) {
        while let Some(w) = self.waiting.front() {
            if w.start > now {
                break;
            }
            self.waiting_bytes -= w.bytes as u64;
            self.waiting.pop_front();
        }
    }

    /// Waiting packets and bytes at `now` (not counting the one being serialised).
    pub fn queue_at(&mut self, now: u64) -> (u64, u64) {
        self.expire(now);
        (self.waiting.len() as u64, self.waiting_bytes)
    }

    /// A packet of `bytes` (IP) from the sender side, of flow `flow`, arriving at `now`.
    /// `data` says whether random loss may hit it.
    pub fn data(&mut self, now: u64, bytes: u32, flow: usize, data: bool) -> Verdict {
        self.expire(now);
        let counted = self.in_window(now);
        if counted {
            self.packets_in += 1;
            self.flows[flow].packets_in += 1;
        }
        let idle = self.free_at <= now; // then nothing waits either
        let full = match self.limit {
            Limit::Unlimited => false,
            Limit::Packets(n) => self.waiting.len() as u64 >= n,
            Limit::Bytes(b) => self.waiting_bytes + bytes as u64 > b,
        };
        if full && !idle {
            if counted {
                self.drops += 1;
                self.flows[flow].drops += 1;
            }
            return Verdict::Dropped;
        }
        let start = now.max(self.free_at);
        let finish = start + tx_time(bytes as u64, self.rate_bps);
        self.free_at = finish;
        self.busy_ns += overlap(start, finish, self.window_start, self.window_end);
        self.queue_area += overlap(now, start, self.window_start, self.window_end) as u128;
        if start > now {
            self.waiting.push_back(Waiting { arrival: now, start, bytes });
            self.waiting_bytes += bytes as u64;
        }
        if counted {
            self.packets_out += 1;
            self.queue_max = self.queue_max.max(self.waiting.len() as u64);
            self.qdelay.add((start - now) as f64);
            self.qdelay_hist.add(start - now);
        }
        if data && self.loss > 0.0 && self.loss_rng.gen::<f64>() < self.loss {
            if counted {
                self.random_losses += 1;
                self.flows[flow].random_losses += 1;
            }
            return Verdict::Lost;
        }
        if counted {
            self.flows[flow].delivered += 1;
        }
        Verdict::Deliver(finish + self.prop[flow])
    }

    /// A packet from the receiver side arriving at `now`: when to hand it to the sender side,
    /// or `None` if `ack_loss` drops it (only pure ACKs, `pure_ack`).
    pub fn reverse(&mut self, now: u64, flow: usize, pure_ack: bool) -> Option<u64> {
        let counted = self.in_window(now);
        if counted {
            self.flows[flow].acks_in += 1;
        }
        if pure_ack && self.ack_loss > 0.0 && self.ack_loss_rng.gen::<f64>() < self.ack_loss {
            if counted {
                self.ack_losses += 1;
                self.flows[flow].ack_losses += 1;
            }
            return None;
        }
        Some(now + self.prop[flow])
    }

    /// Close the statistics at `stop` (the window's end, or earlier if the run was cut short):
    /// link time and queueing scheduled after `stop` are not counted.
    pub fn finish(&mut self, stop: u64) -> (BottleneckSummary, Vec<FlowCounters>) {
        let end = stop.clamp(self.window_start, self.window_end);
        if end < self.window_end {
            // From `end` on the link is busy without a break until free_at.
            self.busy_ns -= overlap(end, self.free_at, self.window_start, self.window_end);
            self.expire(end);
            for w in &self.waiting {
                self.queue_area -= overlap(w.arrival.max(end), w.start, self.window_start, self.window_end) as u128;
            }
        }
        let span = (end - self.window_start).max(1) as f64;
        let (buffer_pkts, buffer_bytes) = match self.limit {
            Limit::Packets(n) => (Some(n), None),
            Limit::Bytes(b) => (None, Some(b)),
            Limit::Unlimited => (None, None),
        };
        let summary = BottleneckSummary {
            rate_mbps: self.rate_bps as f64 / 1e6,
            delay_ms: self.delay_ns as f64 / 1e6,
            buffer_pkts,
            buffer_bytes,
            qdisc: "fifo".to_string(),
            packets_in: self.packets_in,
            packets_out: self.packets_out,
            drops: self.drops,
            aqm_drops: 0,
            marks: 0,
            random_losses: self.random_losses,
            ack_losses: self.ack_losses,
            utilization: (self.busy_ns as f64 / span).min(1.0),
            capacity_mbps: self.rate_bps as f64 / 1e6,
            queue_mean_pkts: self.queue_area as f64 / span,
            queue_max_pkts: self.queue_max,
            queue_delay_mean_ms: self.qdelay.mean() / 1e6,
            queue_delay_p95_ms: self.qdelay_hist.quantile(0.95) / 1e6,
        };
        (summary, self.flows.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ccsim_core::time::{MS, SEC, US};

    const RATE: u64 = 10_000_000; // 1500 B take 1.2 ms
    const PKT: u32 = 1500;

    fn link(limit: Limit, loss: f64) -> Link {
        Link::new(RATE, 20 * MS, limit, loss, 0.0, 1, &[(20000, 0), (20001, 5 * MS)], (0, 10 * SEC))
    }

    #[test]
    fn serialisation_then_propagation_back_to_back() {
        let mut l = link(Limit::Unlimited, 0.0);
        let tx = 1_200 * US;
        assert_eq!(l.data(0, PKT, 0, true), Verdict::Deliver(tx + 20 * MS));
        // A burst waits its turn: the second leaves one serialisation later.
        assert_eq!(l.data(0, PKT, 0, true), Verdict::Deliver(2 * tx + 20 * MS));
        // The other flow's access delay is added to its propagation.
        assert_eq!(l.data(0, PKT, 1, true), Verdict::Deliver(3 * tx + 25 * MS));
        assert_eq!(l.queue_at(0), (2, 3000));
        assert_eq!(l.queue_at(tx), (1, 1500));
        assert_eq!(l.queue_at(2 * tx), (0, 0));
        // An idle link starts at once.
        assert_eq!(l.data(SEC, PKT, 0, true), Verdict::Deliver(SEC + tx + 20 * MS));
    }

    #[test]
    fn drop_tail_counts_waiting_packets_not_the_one_in_service() {
        let mut l = link(Limit::Packets(2), 0.0);
        let v: Vec<Verdict> = (0..4).map(|_| l.data(0, PKT, 0, true)).collect();
        // One in service + two waiting; the fourth overflows.
        assert!(matches!(v[2], Verdict::Deliver(_)));
        assert_eq!(v[3], Verdict::Dropped);
        // After one serialisation there is room again.
        assert!(matches!(l.data(1_200 * US, PKT, 0, true), Verdict::Deliver(_)));
        let (s, flows) = l.finish(10 * SEC);
        assert_eq!((s.packets_in, s.drops, s.packets_out, s.queue_max_pkts), (5, 1, 4, 2));
        assert_eq!((flows[0].drops, flows[0].delivered), (1, 4));
    }

    #[test]
    fn byte_limit() {
        let mut l = link(Limit::Bytes(3000), 0.0);
        let v: Vec<Verdict> = (0..4).map(|_| l.data(0, PKT, 0, true)).collect();
        assert_eq!(v[3], Verdict::Dropped);
        assert!(matches!(l.data(0, 1000, 0, true), Verdict::Dropped));
    }

    #[test]
    fn random_loss_rate_is_the_configured_probability_and_seeded() {
        let run = |seed: u64| {
            let mut l = Link::new(RATE, 0, Limit::Unlimited, 0.01, 0.0, seed, &[], (0, u64::MAX));
            (0..200_000u64).map(|i| l.data(i * 2 * MS, PKT, 0, true) == Verdict::Lost).collect::<Vec<_>>()
        };
        let a = run(7);
        let lost = a.iter().filter(|&&x| x).count() as f64 / a.len() as f64;
        assert!((lost - 0.01).abs() < 0.001, "{lost}");
        assert_eq!(a, run(7));
        assert_ne!(a, run(8));
        // Handshake packets and pure ACKs (data = false) are never lost at random.
        let mut l = Link::new(RATE, 0, Limit::Unlimited, 1.0, 0.0, 1, &[], (0, u64::MAX));
        assert!(matches!(l.data(0, 52, 0, false), Verdict::Deliver(_)));
        assert_eq!(l.data(SEC, 52, 0, true), Verdict::Lost);
    }

    #[test]
    fn reverse_path_is_propagation_only() {
        let mut l = Link::new(RATE, 20 * MS, Limit::Unlimited, 0.0, 1.0, 1, &[(5001, 3 * MS)], (0, SEC));
        assert_eq!(l.reverse(10, 0, false), Some(10 + 23 * MS));
        assert_eq!(l.reverse(10, 0, true), None); // ack_loss = 1 hits pure ACKs
        assert_eq!(l.reverse(10, l.unknown_flow(), false), Some(10 + 20 * MS));
    }

    #[test]
    fn utilization_queue_and_delay_statistics_over_the_window() {
        // Window [1 s, 2 s): a burst of 100 packets at 1 s keeps the link busy for 120 ms.
        let mut l = Link::new(RATE, 0, Limit::Unlimited, 0.0, 0.0, 1, &[], (SEC, 2 * SEC));
        l.data(SEC / 2, PKT, 0, true); // before the window: forwarded, not counted
        for _ in 0..100 {
            l.data(SEC, PKT, 0, true);
        }
        let (s, _) = l.finish(2 * SEC);
        assert_eq!(s.packets_in, 100);
        assert!((s.utilization - 0.12).abs() < 1e-9, "{}", s.utilization);
        // Waits 0, 1.2, ..., 118.8 ms: mean 59.4 ms; the queue integral is their sum.
        assert!((s.queue_delay_mean_ms - 59.4).abs() < 1e-9, "{}", s.queue_delay_mean_ms);
        assert!((s.queue_mean_pkts - 100.0 * 0.0594).abs() < 1e-9, "{}", s.queue_mean_pkts);
        assert_eq!(s.queue_max_pkts, 99);
        assert!((s.queue_delay_p95_ms / 113.4 - 1.0).abs() < 0.02, "{}", s.queue_delay_p95_ms);
    }

    #[test]
    fn a_run_cut_short_counts_only_up_to_the_stop() {
        let mut l = Link::new(RATE, 0, Limit::Unlimited, 0.0, 0.0, 1, &[], (0, 10 * SEC));
        for _ in 0..100 {
            l.data(0, PKT, 0, true); // busy for 120 ms
        }
        let (s, _) = l.finish(60 * MS);
        assert!((s.utilization - 1.0).abs() < 1e-9, "{}", s.utilization);
        // 50 packets have started by 60 ms; 49 wait the whole 60 ms plus the first 49 partial.
        let expected_area: f64 = (1..100u64).map(|k| (k * 1_200 * US).min(60 * MS) as f64).sum();
        assert!((s.queue_mean_pkts - expected_area / (60 * MS) as f64).abs() < 1e-6, "{}", s.queue_mean_pkts);
    }
}
