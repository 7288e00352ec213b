//! The event loop: one thread, two non-blocking TUN descriptors, no allocation per packet.
//!
//! Each turn: take the queue samples that are due, hand over every packet whose time has come,
//! then sleep in `ppoll` (nanosecond timeout, 1 ns timer slack) until the next packet is due
//! or a device has packets to read. Arriving packets get their fate and hand-over time from
//! [`Link`] at once and wait in a FIFO delay line (one per distinct propagation delay, so each
//! line stays in time order). `run_for` returns at least every `max_ns` so the caller (Python)
//! can handle signals.

use crate::config::Config;
use crate::link::{FlowCounters, Limit, Link, Verdict};
use crate::packet;
use crate::pool::Pool;
use crate::sys;
use ccsim_core::metrics::BottleneckSummary;
use ccsim_core::stats::{Histogram, Running};
use serde::Serialize;
use std::collections::VecDeque;
use std::io;
use std::os::fd::OwnedFd;

/// Packets read from one device before the loop looks at the clock and the delay lines again.
const READ_BATCH: usize = 64;
/// Upper bound on the slots allocated up front (the pool grows beyond if it must).
const MAX_INITIAL_SLOTS: u64 = 1 << 16;

#[derive(Debug, Clone, Copy)]
struct Pending {
    at: u64,
    slot: u32,
    len: u32,
}

/// Queue length sampled every `sample_interval_ns` inside the window.
#[derive(Debug, Clone, Default, Serialize)]
pub struct QueueSamples {
    /// Seconds since the window opened.
    pub time_s: Vec<f64>,
    pub queue_pkts: Vec<u64>,
    pub queue_bytes: Vec<u64>,
}

/// How well the emulator itself kept up.
#[derive(Debug, Clone, Default, Serialize)]
pub struct EmulatorStats {
    /// From attaching to the devices until the run ended.
    pub wall_seconds: f64,
    /// CPU time of the emulator's thread while running.
    pub cpu_seconds: f64,
    /// How late packets were handed over, relative to their due time (wake-up and write
    /// latency): mean, 99th percentile and maximum, in microseconds.
    pub late_mean_us: f64,
    pub late_p99_us: f64,
    pub late_max_us: f64,
    /// Packets read from / written to the sender-side and receiver-side devices.
    pub read: [u64; 2],
    pub written: [u64; 2],
    pub write_errors: u64,
    /// Packets that are not IPv4 TCP/UDP (forwarded as traffic of no known flow).
    pub unparsed: u64,
    /// Packets that filled a whole buffer slot (would have been truncated; should be 0).
    pub truncated: u64,
    pub pool_slots: usize,
    pub pool_growths: u32,
    /// The run was stopped before its end (by the caller).
    pub stopped_early: bool,
    /// The event loop ran under SCHED_FIFO (`realtime_priority` was given and permitted).
    pub realtime: bool,
}

/// Everything the emulator reports (serialised as the JSON `emulate_link` returns).
#[derive(Debug, Clone, Serialize)]
pub struct Stats {
    /// The simulator's bottleneck summary, over the statistics window.
    pub bottleneck: BottleneckSummary,
    /// One entry per configured flow, then one for traffic of no known flow.
    pub flows: Vec<FlowCounters>,
    pub queue_samples: QueueSamples,
    pub emulator: EmulatorStats,
}

pub struct Emulator {
    cfg: Config,
    /// [sender side, receiver side].
    fds: [OwnedFd; 2],
    link: Link,
    pool: Pool,
    /// Delay lines per direction: [towards the receiver side, towards the sender side].
    lines: [Vec<VecDeque<Pending>>; 2],
    line_of_flow: Vec<usize>,
    flow_of_port: Vec<u16>,
    next_sample: Option<u64>,
    samples: QueueSamples,
    late: Histogram,
    late_mean: Running,
    stats: EmulatorStats,
    attached_at: u64,
    cpu_ns: u64,
    stopped_at: Option<u64>,
}

impl Emulator {
    /// Attach to both TUN devices and prepare (allocating everything up front).
    pub fn open(cfg: Config) -> io::Result<Emulator> {
        let sender = sys::open_tun(&cfg.sender.netns, &cfg.sender.device)?;
        let receiver = sys::open_tun(&cfg.receiver.netns, &cfg.receiver.device)?;
        let limit = match (cfg.buffer_pkts, cfg.buffer_bytes) {
            (Some(n), _) => Limit::Packets(n),
            (None, Some(b)) => Limit::Bytes(b),
            (None, None) => Limit::Unlimited,
        };
        let flow_ports: Vec<(u16, u64)> = cfg.flows.iter().map(|f| (f.port, f.access_delay_ns)).collect();
        let link = Link::new(cfg.rate_bps, cfg.delay_ns, limit, cfg.loss, cfg.ack_loss, cfg.seed, &flow_ports, (cfg.start_ns, cfg.end_ns));

        let unknown = flow_ports.len() as u16;
        let mut flow_of_port = vec![unknown; 1 << 16];
        for (i, &(port, _)) in flow_ports.iter().enumerate() {
            flow_of_port[port as usize] = i as u16;
        }
        // Flows with equal propagation delay share a delay line.
        let mut delays: Vec<u64> = flow_ports.iter().map(|&(_, a)| a).chain([0]).collect();
        let mut distinct = delays.clone();
        distinct.sort_unstable();
        distinct.dedup();
        let line_of_flow: Vec<usize> = delays.drain(..).map(|d| distinct.binary_search(&d).unwrap()).collect();

        // Enough buffers for a full queue plus a bandwidth-delay product in each direction.
        let max_prop = cfg.delay_ns + flow_ports.iter().map(|f| f.1).max().unwrap_or(0);
        let in_flight = (cfg.rate_bps as u128 * max_prop as u128 / 8 / 1_000_000_000 / cfg.mtu as u128) as u64;
        let queue = cfg.buffer_pkts.unwrap_or(cfg.buffer_bytes.map_or(1024, |b| b / cfg.mtu as u64 + 1));
        let slots = (2 * (in_flight + queue) + 1024).min(MAX_INITIAL_SLOTS);
        let slot = (cfg.mtu.max(1500) as usize + 64).next_multiple_of(64);
        let pool = Pool::new(slot, slots as usize);
        let lines = [
            (0..distinct.len()).map(|_| VecDeque::with_capacity(slots as usize / 2)).collect(),
            (0..distinct.len()).map(|_| VecDeque::with_capacity(slots as usize / 2)).collect(),
        ];
        let next_sample = cfg.sample_interval_ns.map(|i| cfg.start_ns + i);
        let n_samples = cfg.sample_interval_ns.map_or(0, |i| ((cfg.end_ns - cfg.start_ns) / i + 1) as usize);
        let samples = QueueSamples {
            time_s: Vec::with_capacity(n_samples),
            queue_pkts: Vec::with_capacity(n_samples),
            queue_bytes: Vec::with_capacity(n_samples),
        };
        Ok(Emulator {
            cfg,
            fds: [sender, receiver],
            link,
            pool,
            lines,
            line_of_flow,
            flow_of_port,
            next_sample,
            samples,
            late: Histogram::default(),
            late_mean: Running::default(),
            stats: EmulatorStats::default(),
            attached_at: sys::monotonic_ns(),
            cpu_ns: 0,
            stopped_at: None,
        })
    }

    /// Forward packets for up to `max_ns` or until the configured end. Returns `Ok(true)`
    /// once the run is over, `Ok(false)` if it returned early (time up, or a signal arrived).
    pub fn run_for(&mut self, max_ns: u64) -> io::Result<bool> {
        if self.stopped_at.is_some() {
            return Ok(true);
        }
        let _slack = sys::TimerSlack::tight();
        let rt = sys::Realtime::enter(self.cfg.realtime_priority);
        self.stats.realtime = rt.entered();
        let cpu0 = sys::thread_cpu_ns();
        let r = self.run_loop(max_ns);
        self.cpu_ns += sys::thread_cpu_ns() - cpu0;
        r
    }

    fn run_loop(&mut self, max_ns: u64) -> io::Result<bool> {
        let end = self.cfg.end_ns;
        let deadline = sys::monotonic_ns().saturating_add(max_ns).min(end);
        loop {
            let now = sys::monotonic_ns();
            self.take_samples(now);
            self.hand_over(now);
            if now >= end {
                self.stopped_at = Some(end);
                return Ok(true);
            }
            if now >= deadline {
                return Ok(false);
            }
            let mut next = deadline;
            for line in self.lines.iter().flatten() {
                if let Some(p) = line.front() {
                    next = next.min(p.at);
                }
            }
            if let Some(s) = self.next_sample {
                next = next.min(s);
            }
            let mut timeout = next.saturating_sub(now);
            if timeout <= self.cfg.spin_ns {
                timeout = 0;
            }
            match sys::wait_readable([&self.fds[0], &self.fds[1]], timeout) {
                Ok(ready) => {
                    for (side, readable) in ready.into_iter().enumerate() {
                        if readable {
                            self.read_side(side)?;
                        }
                    }
                }
                Err(e) if sys::interrupted(&e) => return Ok(false),
                Err(e) => return Err(e),
            }
        }
    }

    fn take_samples(&mut self, now: u64) {
        let Some(interval) = self.cfg.sample_interval_ns else { return };
        while let Some(t) = self.next_sample {
            if t > now || t > self.cfg.end_ns {
                break;
            }
            let (pkts, bytes) = self.link.queue_at(t);
            self.samples.time_s.push((t - self.cfg.start_ns) as f64 / 1e9);
            self.samples.queue_pkts.push(pkts);
            self.samples.queue_bytes.push(bytes);
            self.next_sample = Some(t + interval);
        }
    }

    /// Write every packet that is due to the device on the other side.
    fn hand_over(&mut self, now: u64) {
        let Emulator { fds, lines, pool, late, late_mean, stats, .. } = self;
        for (dir, dir_lines) in lines.iter_mut().enumerate() {
            let out = &fds[1 - dir];
            for line in dir_lines.iter_mut() {
                while let Some(p) = line.front().copied() {
                    if p.at > now {
                        break;
                    }
                    line.pop_front();
                    match sys::write_packet(out, pool.buf(p.slot, p.len as usize)) {
                        Ok(()) => stats.written[1 - dir] += 1,
                        Err(_) => stats.write_errors += 1,
                    }
                    pool.put(p.slot);
                    late.add(now - p.at);
                    late_mean.add((now - p.at) as f64);
                }
            }
        }
    }

    fn read_side(&mut self, side: usize) -> io::Result<()> {
        let unknown = self.link.unknown_flow();
        for _ in 0..READ_BATCH {
            let slot = self.pool.get();
            let n = match sys::read_packet(&self.fds[side], self.pool.buf_mut(slot)) {
                Ok(Some(n)) => n,
                Ok(None) => {
                    self.pool.put(slot);
                    return Ok(());
                }
                Err(e) => {
                    self.pool.put(slot);
                    return Err(io::Error::new(e.kind(), format!("reading the {} TUN device: {e}", ["sender-side", "receiver-side"][side])));
                }
            };
            let now = sys::monotonic_ns();
            self.stats.read[side] += 1;
            if n >= self.pool.slot_size() {
                self.stats.truncated += 1;
            }
            let (flow, data, pure_ack) = match packet::parse(self.pool.buf(slot, n)) {
                Some(info) => {
                    let port = if side == 0 { info.src_port } else { info.dst_port };
                    (self.flow_of_port[port as usize] as usize, info.carries_data(), info.is_pure_ack())
                }
                None => {
                    self.stats.unparsed += 1;
                    (unknown, false, false)
                }
            };
            let at = if side == 0 {
                match self.link.data(now, n as u32, flow, data) {
                    Verdict::Deliver(at) => Some(at),
                    Verdict::Dropped | Verdict::Lost => None,
                }
            } else {
                self.link.reverse(now, flow, pure_ack)
            };
            match at {
                Some(at) => self.lines[side][self.line_of_flow[flow]].push_back(Pending { at, slot, len: n as u32 }),
                None => self.pool.put(slot),
            }
        }
        Ok(())
    }

    /// Stop now (the caller gave up early); statistics cover the window up to this moment.
    pub fn stop(&mut self) {
        if self.stopped_at.is_none() {
            self.stopped_at = Some(sys::monotonic_ns().min(self.cfg.end_ns));
            self.stats.stopped_early = true;
        }
    }

    /// The statistics (call after the run is over or stopped).
    pub fn finish(&mut self) -> Stats {
        let stop = self.stopped_at.unwrap_or_else(|| sys::monotonic_ns().min(self.cfg.end_ns));
        let (bottleneck, flows) = self.link.finish(stop);
        let mut emulator = self.stats.clone();
        emulator.wall_seconds = (stop.max(self.attached_at) - self.attached_at) as f64 / 1e9;
        emulator.cpu_seconds = self.cpu_ns as f64 / 1e9;
        emulator.late_mean_us = self.late_mean.mean() / 1e3;
        emulator.late_p99_us = self.late.quantile(0.99) / 1e3;
        emulator.late_max_us = if self.late_mean.n == 0 { f64::NAN } else { self.late_mean.max / 1e3 };
        emulator.pool_slots = self.pool.capacity();
        emulator.pool_growths = self.pool.growths;
        Stats { bottleneck, flows, queue_samples: std::mem::take(&mut self.samples), emulator }
    }
}

impl Stats {
    /// JSON; NaN (no samples) becomes null.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("statistics serialise")
    }
}
