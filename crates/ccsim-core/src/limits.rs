//! Resource limits: the memory a run will need, estimated from the scenario alone, so that a
//! run too big for the machine is refused with an explanation before anything is allocated
//! (instead of the process being killed half-way by the out-of-memory killer).
//!
//! The estimate covers the whole life of a run as `ccsim run` and `ccsim.run` see it: the
//! engine's state, the time series and event log it records, and their conversion into
//! Python lists and pandas DataFrames (which cost more per row than the engine's columns).
//! Its parts, with the constants measured on Linux x86-64 (CPython 3.11, pandas 3; peak RSS
//! with `/usr/bin/time -f %M` at several sizes and the slope taken; see docs/model.md):
//!
//! - flows: [`TCP_FLOW_BYTES`] per TCP flow, [`UDP_FLOW_BYTES`] per UDP flow;
//! - packets queued or in flight: at most the bottleneck's BDP plus its buffer (dumbbell) or
//!   every station's queue and host backlog (wireless), [`PACKET_BYTES`] each;
//! - time-series rows: one per TCP flow per `sample_interval`, [`TS_ROW_BYTES`] each (none
//!   when the run records no time series);
//! - algorithm events: only for flows whose algorithm records events ([`LOGGING_ALGORITHMS`]),
//!   at most two per ACK the link can carry plus one per retransmission timeout, and never more
//!   than [`MAX_CC_EVENTS`] + 1 rows (see [`crate::metrics::EventLog`]), [`EVENT_ROW_BYTES`] each.
//!
//! - workload flow rows: a `[[workloads]]` entry's flows that finish keep their row of `flows`
//!   to the end of the run; [`WORKLOAD_ROW_BYTES`] each, for the flows it can start
//!   ([`workload_flows`]: the expected number of Poisson arrivals over its span within the run,
//!   plus four standard deviations);
//! - captured packets (`pcap`): every captured packet's record stays in memory until the run
//!   ends, [`CAPTURE_RECORD_BYTES`] each, for at most [`crate::sim::Sim::capture_bound`]
//!   records (computed once the capture is set up, since it follows the flows' routes).
//!
//! Queues that grow without a bound set by the scenario (a flow whose access link is slower
//! than the bottleneck queues in its unlimited access queue as its window grows) are not in
//! the estimate: [`crate::sim::Sim::queue_heap_bytes`] lets a caller watch them during a run.

use crate::metrics::MAX_CC_EVENTS;
use crate::scenario::{AnyScenario, NetworkConfig, Scenario, WirelessScenario};
use crate::topology::general::{Buffer, Topology};
use crate::tcp::{TcpConfig, HEADER_BYTES};
use crate::time::{Time, SEC};
use crate::scenario::WFlowKind;
use crate::workload::WorkloadConfig;
use serde_json::{json, Value};

/// Most flows one run may have, over all `[[flows]]` entries together.
pub const MAX_TOTAL_FLOWS: usize = 100_000;

/// Bytes per TCP flow: the engine's per-flow state (sender, receiver, access link, ACK path,
/// histograms, all grown as used) and the flow's summary in Python, with its row in the table
/// `ccsim run` prints.
///
/// Measured 2026-11-24 with `python3 bench/flow_memory.py` (bench/results/flow_memory.md):
/// peak RSS (`/usr/bin/time -f %M`) of N CUBIC flows on a 1 Gbps dumbbell, 20 ms base RTT,
/// 1 BDP buffer, 1 s, N = 1,000 ... 20,000, twice each; slope of the least-squares line, in
/// bytes per flow, with the time series (10 rows per flow) / without:
/// - the engine alone (`run_json`): 9,791 / 8,407 (one row per flow);
/// - `ccsim.run`: 10,431; with all its DataFrames: 9,543 / 8,301;
/// - `ccsim run` (its table): 14,421;
/// - `ccsim run --out`: 14,421 / 13,977 (53,424 before its plot drew at most 50 flows,
///   `ccsim.plots.MAX_PLOTTED_FLOWS`: 1.26 GB and 404 s for 20,000 flows, now 0.47 GB, 24 s).
///
/// Elsewhere (engine, 10,000 flows): 7.4-10.6 KB per flow for the ten algorithms, 10.9 KB for
/// BBR over 10 s; the largest slope seen is BBR over 10 s with `ccsim run --out
/// --no-timeseries`, 16,438. A `[wireless]` line: 10.5-14 KB.
///
/// 24,000 is 1.46x that largest slope and 1.66x the largest of the grid; alone it bounds every
/// way of running, before the parts the same runs also count per flow (the initial window in
/// [`PACKET_BYTES`], 4,000 here, and the time-series rows). The margin is for what grows with
/// use beyond these runs: a histogram (RTT, access-link queueing delay) keeps 512 bytes per
/// power of two its values span. Estimate / measured growth of peak RSS over the 1-flow run:
/// 1.29 (`ccsim run --out`, 1,000 flows) to 3.4 (the engine alone). A process's fixed cost
/// (interpreter, libraries, the plot's axes and legend: 4 MB for the engine, 19 MB for
/// `ccsim.run`, 170 MB for `ccsim run --out`) is outside the estimate, as before; so is most
/// of the plot's first 50 lines (below 500 flows `ccsim run --out` grew up to 2.1 MB more).
pub const TCP_FLOW_BYTES: u64 = 24_000;
/// Bytes per UDP flow (wireless): its counters and summary row (measured: 1-3 KB through
/// `ccsim.run` and `--out`, 10 KB when `ccsim run` prints its table).
pub const UDP_FLOW_BYTES: u64 = 12_000;
/// Bytes per packet queued or in flight: its segment record at the sender, its place in a
/// link's queue and wire and its ACK (measured: about 200 B), doubled for the queues' growth
/// by doubling.
pub const PACKET_BYTES: u64 = 400;
/// Bytes per time-series row: 136 in the engine (freed column by column as it is handed to
/// Python as packed float64/int64 buffers), as much again in those buffers and in the
/// DataFrame, and the Parquet file and plot written from it (measured: 156 B with
/// `ccsim run --json`, 293 B through `ccsim.run` with `Result.timeseries`, 510 B with
/// `ccsim run --out`).
pub const TS_ROW_BYTES: u64 = 600;
/// Bytes per algorithm-event row, engine and Python (measured: 160 B through `ccsim.run` with
/// `Result.cc_events`, 262 B with `ccsim run --out`).
pub const EVENT_ROW_BYTES: u64 = 300;

/// Bytes per finished workload flow's row: the engine's row (about 300 bytes) and what it
/// becomes in Python: a dict in the summary, a row of `Result.summary`, of the table
/// `ccsim run` prints, of `flows.parquet`.
///
/// Measured with `python3 bench/capture_memory.py` (bench/results/capture_memory.md): peak RSS
/// of about 1, 20,000 and 60,000 completed 1-2 KB flows; slope of the least-squares line, in
/// bytes per row, over two runs of the script: 4,777-4,781 (`ccsim run --json`), 2,670-2,674
/// (`ccsim.run` with `Result.summary` and `to_dict()`), 2,859-2,861 (`ccsim run`),
/// 7,355-7,880 (`ccsim run --out`). 10,000 is 1.27x the largest.
pub const WORKLOAD_ROW_BYTES: u64 = 10_000;
/// Bytes per captured packet: its record in the engine ([`crate::output::pcap::RECORD_BYTES`]:
/// the time, the packet and its ECN field), twice over for the room a growing list keeps (at
/// most its length again). Measured with `python3 bench/capture_memory.py`: 64 bytes per
/// packet with `ccsim run --json`, 57-59 with `ccsim run` (the records are freed once
/// written, before Python builds its tables, so the other ways of running peak elsewhere).
pub const CAPTURE_RECORD_BYTES: u64 = 2 * crate::output::pcap::RECORD_BYTES as u64;

/// Data packets a captured direction may see dropped (by it or by the slowest direction after
/// it), as a share of those the flows' slowest directions can carry: an allowance, not a bound
/// (see [`crate::sim::Sim::capture_bound`]). On a 10 Mbps bottleneck with a 50-packet buffer
/// over 30 s, drops were 0.1%, 5.6%, 18% and 31% of its packets with 1, 20, 100 and 500 CUBIC
/// flows, and the bound 1.25, 1.18, 1.02 and 0.88 x the packets captured (`python3
/// bench/capture_memory.py --what drops`).
pub const CAPTURE_DROP_ALLOWANCE: f64 = 0.25;

/// Algorithms that record algorithm events ([`crate::cc::SockState::record`]); the others
/// never do, except registered ones ([`crate::cc::external`]), which are counted as if they did. `tests::logging_algorithms_are_the_ones_that_record` keeps this list right.
pub const LOGGING_ALGORITHMS: &[&str] = &["bbr-expire", "bbr-rtprop", "bbrplus", "cdg", "chd", "copa", "hd", "ucc"];

/// The memory a run needs, by part (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MemoryEstimate {
    pub flows: u64,
    pub flow_bytes: u64,
    pub packets: u64,
    pub packet_bytes: u64,
    pub timeseries_rows: u64,
    pub timeseries_bytes: u64,
    pub cc_event_rows: u64,
    pub cc_event_bytes: u64,
    pub workload_rows: u64,
    pub workload_row_bytes: u64,
    pub captured_packets: u64,
    pub capture_bytes: u64,
}

fn mul(a: u64, b: u64) -> u64 {
    a.saturating_mul(b)
}

/// `rate_bps` for `duration`, in packets of `wire_bytes` (rounded down).
fn packets_at(rate_bps: u64, duration: Time, wire_bytes: u32) -> u64 {
    let bits = rate_bps as u128 * duration as u128 / SEC as u128;
    (bits / (8 * wire_bytes as u128)).min(u64::MAX as u128) as u64
}

/// `bits` in packets of `wire_bytes` (rounded down).
pub fn packets_bits(bits: f64, wire_bytes: u32) -> u64 {
    (bits / (8.0 * wire_bytes as f64)).min(u64::MAX as f64) as u64
}

/// Time-series samples in a run: one every `interval` up to and including the end.
fn samples(duration: Time, interval: Time) -> u64 {
    duration / interval.max(1)
}

/// Most flows workload `w` starts in a run of `duration`: the expected number of its Poisson
/// arrivals over [start, min(stop, duration)), plus four standard deviations (exceeded with a
/// probability below 1e-4 for any mean), rounded up.
pub fn workload_flows(w: &WorkloadConfig, duration: Time) -> u64 {
    let span = w.stop.min(duration).saturating_sub(w.start);
    let mean = w.flows_per_s * span as f64 / SEC as f64;
    (mean + 4.0 * mean.sqrt()).ceil().min(u64::MAX as f64) as u64
}

/// The rows of the flows every workload of `sc` starts.
fn workload_rows(sc: &Scenario) -> u64 {
    sc.workloads.iter().fold(0u64, |n, w| n.saturating_add(workload_flows(w, sc.duration)))
}

/// Event rows of `flows` (their TCP settings and algorithms) over a link of `rate_bps`: at
/// most two per ACK (a per-ACK hook and an entry into recovery) and one per timeout.
fn event_rows<'a>(flows: impl Iterator<Item = (&'a str, &'a TcpConfig)>, rate_bps: u64, duration: Time, per_flow_link: bool) -> u64 {
    let mut timeouts = 0u64;
    let mut min_wire = u32::MAX;
    let mut n = 0u64;
    for (_, tcp) in flows.filter(|(cc, _)| LOGGING_ALGORITHMS.contains(cc) || crate::cc::external::is_registered(cc)) {
        n += 1;
        min_wire = min_wire.min(tcp.mss + HEADER_BYTES);
        timeouts = timeouts.saturating_add(duration / tcp.min_rto.max(1));
    }
    if n == 0 {
        return 0;
    }
    // Every ACK answers a data packet that crossed the link: on a dumbbell all flows share
    // the bottleneck; on a wireless line flows on different hops may deliver at once.
    let acks = mul(packets_at(rate_bps, duration, min_wire), if per_flow_link { n } else { 1 });
    mul(2, acks).saturating_add(timeouts).min(MAX_CC_EVENTS as u64 + 1)
}

impl MemoryEstimate {
    pub fn total(&self) -> u64 {
        self.flow_bytes
            .saturating_add(self.packet_bytes)
            .saturating_add(self.timeseries_bytes)
            .saturating_add(self.cc_event_bytes)
            .saturating_add(self.workload_row_bytes)
            .saturating_add(self.capture_bytes)
    }

    fn with_bytes(mut self) -> Self {
        self.packet_bytes = mul(self.packets, PACKET_BYTES);
        self.timeseries_bytes = mul(self.timeseries_rows, TS_ROW_BYTES);
        self.cc_event_bytes = mul(self.cc_event_rows, EVENT_ROW_BYTES);
        self.workload_row_bytes = mul(self.workload_rows, WORKLOAD_ROW_BYTES);
        self.capture_bytes = mul(self.captured_packets, CAPTURE_RECORD_BYTES);
        self
    }

    /// The same estimate for a run that captures at most `packets` packets.
    pub fn with_capture(self, packets: u64) -> Self {
        MemoryEstimate { captured_packets: packets, ..self }.with_bytes()
    }

    /// Everything but what is watched during the run (queued packets and captured ones).
    fn unwatched(&self) -> u64 {
        self.total() - self.packet_bytes - self.capture_bytes
    }

    /// Every part in bytes and counts, and the total.
    pub fn to_json(&self) -> Value {
        json!({
            "total_bytes": self.total(),
            "flows": self.flows,
            "flow_bytes": self.flow_bytes,
            "packets": self.packets,
            "packet_bytes": self.packet_bytes,
            "timeseries_rows": self.timeseries_rows,
            "timeseries_bytes": self.timeseries_bytes,
            "cc_event_rows": self.cc_event_rows,
            "cc_event_bytes": self.cc_event_bytes,
            "workload_rows": self.workload_rows,
            "workload_row_bytes": self.workload_row_bytes,
            "captured_packets": self.captured_packets,
            "capture_bytes": self.capture_bytes,
        })
    }

    /// "about 40.1 GB (time series 40.0 GB: 40,000,000 rows; 2 flows 320.0 KB; ...)", the
    /// largest part first; parts of no size are left out.
    pub fn describe(&self) -> String {
        let mut parts = [
            (self.timeseries_bytes, format!("time series {} ({} rows)", bytes_text(self.timeseries_bytes), count_text(self.timeseries_rows))),
            (self.flow_bytes, format!("{} flow{} {}", count_text(self.flows), if self.flows == 1 { "" } else { "s" }, bytes_text(self.flow_bytes))),
            (self.packet_bytes, format!("queues {} (up to {} packets)", bytes_text(self.packet_bytes), count_text(self.packets))),
            (self.cc_event_bytes, format!("algorithm events {} (up to {} rows)", bytes_text(self.cc_event_bytes), count_text(self.cc_event_rows))),
            (self.workload_row_bytes, format!("workload flows' rows {} (up to {} flows)", bytes_text(self.workload_row_bytes), count_text(self.workload_rows))),
            (self.capture_bytes, format!("captured packets {} (up to {} packets)", bytes_text(self.capture_bytes), count_text(self.captured_packets))),
        ];
        parts.sort_by_key(|p| std::cmp::Reverse(p.0));
        let listed: Vec<&str> = parts.iter().filter(|p| p.0 > 0).map(|p| p.1.as_str()).collect();
        format!("about {} ({})", bytes_text(self.total()), listed.join("; "))
    }
}

/// Bytes in decimal units: "512 B", "1.5 KB", "40.0 GB".
pub fn bytes_text(b: u64) -> String {
    const UNITS: [(&str, f64); 5] = [("PB", 1e15), ("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("KB", 1e3)];
    for (u, s) in UNITS {
        if b as f64 >= s {
            return format!("{:.1} {u}", b as f64 / s);
        }
    }
    format!("{b} B")
}

/// An integer with thousands separators: 40,000,000.
pub fn count_text(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The memory a wired run needs: a `[bottleneck]` dumbbell or a `[[links]]` network.
pub fn estimate_dumbbell(sc: &Scenario, timeseries: bool) -> MemoryEstimate {
    let b = match &sc.network {
        NetworkConfig::Dumbbell(b) => b,
        NetworkConfig::Links { topology, .. } => return estimate_links(sc, topology, timeseries),
    };
    let n = sc.flows.len() as u64;
    let min_wire = sc.flows.iter().map(|f| f.tcp.mss + HEADER_BYTES).min().unwrap_or(1500);
    let max_access = sc.flows.iter().map(|f| f.access_delay).max().unwrap_or(0);
    let rtt = 2 * (b.delay + max_access);
    let bdp = packets_at(b.rate_bps, rtt, min_wire);
    let buffer = match (b.buffer_pkts, b.buffer_bytes) {
        (Some(p), _) => p,
        (None, Some(by)) => by / min_wire as u64,
        _ => 0,
    };
    // The queue cannot hold more than the bottleneck could carry during the whole run.
    let carried = packets_at(b.rate_bps, sc.duration, min_wire);
    let windows: u64 = sc.flows.iter().map(|f| f.tcp.initial_cwnd as u64).sum();
    MemoryEstimate {
        flows: n,
        flow_bytes: mul(n, TCP_FLOW_BYTES),
        packets: bdp.saturating_add(buffer).min(carried).saturating_add(windows),
        // A row per flow per sample (the bottleneck's row in the link queues, 4 columns, is
        // within the flows' 600 bytes a row).
        timeseries_rows: if timeseries { mul(n, samples(sc.duration, sc.sample_interval)) } else { 0 },
        cc_event_rows: event_rows(sc.flows.iter().map(|f| (f.cc.as_str(), &f.tcp)), b.rate_bps, sc.duration, false),
        workload_rows: workload_rows(sc),
        ..MemoryEstimate::default()
    }
    .with_bytes()
}

/// The memory a `[[links]]` run needs: the dumbbell's parts, with the packets every direction
/// with a rate can hold (its buffer, or what it carries in the whole run if unlimited, plus its
/// wire's bandwidth-delay product) and every `[[wifi]]` station's queue, and a time-series row
/// per buffered direction and sample.
fn estimate_links(sc: &Scenario, topo: &Topology, timeseries: bool) -> MemoryEstimate {
    let n = sc.flows.len() as u64;
    let min_wire = sc.flows.iter().map(|f| f.tcp.mss + HEADER_BYTES).min().unwrap_or(1500);
    let max_delay: Time = topo.links.iter().flat_map(|l| [l.fwd.delay, l.rev.delay]).sum();
    let mut packets = 0u64;
    let mut buffered = 0u64;
    let mut max_rate = 0u64;
    for d in topo.links.iter().flat_map(|l| [&l.fwd, &l.rev]) {
        if d.rate_bps == 0 {
            continue;
        }
        max_rate = max_rate.max(d.rate_bps);
        let carried = packets_at(d.rate_bps, sc.duration, min_wire);
        let queue = match d.buffer {
            Buffer::Unlimited => carried,
            Buffer::Packets(p) => p,
            Buffer::Bytes(by) => by / min_wire as u64,
            // At most k x the rate x the longest possible base RTT.
            Buffer::Bdp(k) => (k * packets_at(d.rate_bps, 2 * max_delay, min_wire) as f64).ceil() as u64,
        };
        if d.buffer != Buffer::Unlimited {
            buffered += 1;
        }
        packets = packets.saturating_add(queue.saturating_add(packets_at(d.rate_bps, d.delay, min_wire)).min(carried));
    }
    // Each Wi-Fi station's interface queue and host backlog can fill (as on the line).
    for w in &topo.wifi {
        let c = &w.config;
        let backlog = if c.host.enabled() { c.host.backlog as u64 } else { 0 };
        packets = packets.saturating_add(mul(w.stations.len() as u64, c.queue_pkts as u64 + backlog));
        max_rate = max_rate.max(c.phy.data_rate_bps);
    }
    let windows: u64 = sc.flows.iter().map(|f| f.tcp.initial_cwnd as u64).sum();
    let rows = samples(sc.duration, sc.sample_interval);
    MemoryEstimate {
        flows: n,
        flow_bytes: mul(n, TCP_FLOW_BYTES),
        packets: packets.saturating_add(windows),
        timeseries_rows: if timeseries { mul(n + buffered, rows) } else { 0 },
        cc_event_rows: event_rows(sc.flows.iter().map(|f| (f.cc.as_str(), &f.tcp)), max_rate, sc.duration, false),
        workload_rows: workload_rows(sc),
        ..MemoryEstimate::default()
    }
    .with_bytes()
}

/// The memory a wireless run needs.
pub fn estimate_wireless(sc: &WirelessScenario, timeseries: bool) -> MemoryEstimate {
    let c = &sc.config;
    let stations = (c.hops + 1) as u64;
    let mut tcp = 0u64;
    let mut udp = 0u64;
    let mut windows = 0u64;
    let mut generated = 0u64;
    for f in &sc.flows {
        match &f.kind {
            WFlowKind::Tcp { tcp: t, .. } => {
                tcp += 1;
                windows += t.initial_cwnd as u64;
            }
            WFlowKind::Udp { pps, .. } => {
                udp += 1;
                let active = f.stop.unwrap_or(sc.duration).saturating_sub(f.start);
                generated = generated.saturating_add((pps * active as f64 / SEC as f64).ceil() as u64);
            }
        }
    }
    let backlog = if c.host.enabled() { c.host.backlog as u64 } else { 0 };
    let room = mul(stations, c.queue_pkts as u64 + backlog);
    // UDP sources alone cannot queue more than they generate; TCP windows can fill any queue.
    let queued = if tcp > 0 { room } else { room.min(generated) };
    let tcp_flows = sc.flows.iter().filter_map(|f| match &f.kind {
        WFlowKind::Tcp { cc, tcp, .. } => Some((cc.as_str(), tcp)),
        WFlowKind::Udp { .. } => None,
    });
    MemoryEstimate {
        flows: tcp + udp,
        flow_bytes: mul(tcp, TCP_FLOW_BYTES).saturating_add(mul(udp, UDP_FLOW_BYTES)),
        packets: queued.saturating_add(windows),
        timeseries_rows: if timeseries { mul(tcp, samples(sc.duration, sc.sample_interval)) } else { 0 },
        cc_event_rows: event_rows(tcp_flows, c.phy.data_rate_bps, sc.duration, true),
        ..MemoryEstimate::default()
    }
    .with_bytes()
}

/// The memory a run of `sc` needs, with or without a time series.
pub fn estimate(sc: &AnyScenario, timeseries: bool) -> MemoryEstimate {
    match sc {
        AnyScenario::Dumbbell(s) => estimate_dumbbell(s, timeseries),
        AnyScenario::Wireless(s) => estimate_wireless(s, timeseries),
    }
}

/// What a user can do about a run that needs too much memory.
pub const REMEDIES: &str = "record no time series (ccsim run --no-timeseries; ccsim.run(..., timeseries=False)), \
sample less often (a longer sample_interval), simulate fewer flows or a shorter duration, \
or raise the limit (--memory-limit, memory_limit=..., or the CCSIM_MEMORY_LIMIT environment variable)";

/// The estimate if it fits in `limit` bytes; otherwise the one-line refusal. `limit_text`
/// says where the limit comes from, e.g. "half of this machine's 24.7 GB".
pub fn check(sc: &AnyScenario, timeseries: bool, limit: u64, limit_text: &str) -> Result<MemoryEstimate, String> {
    refuse_over(estimate(sc, timeseries), limit, limit_text, "")
}

/// The estimate `e` of a run that will also capture at most `packets` packets (see
/// [`crate::sim::Sim::capture_bound`]) if it fits in `limit` bytes; otherwise the one-line
/// refusal, which suggests capturing less first.
pub fn check_capture_estimate(e: MemoryEstimate, packets: u64, limit: u64, limit_text: &str) -> Result<MemoryEstimate, String> {
    refuse_over(e.with_capture(packets), limit, limit_text, "capture fewer directions (pcap_links) or a shorter run, or ")
}

fn refuse_over(e: MemoryEstimate, limit: u64, limit_text: &str, first: &str) -> Result<MemoryEstimate, String> {
    if e.total() <= limit {
        return Ok(e);
    }
    let of = if limit_text.is_empty() { String::new() } else { format!(", {limit_text}") };
    Err(format!(
        "this run would need {}, more than the memory limit of {}{of}; to run it: {first}{REMEDIES}",
        e.describe(),
        bytes_text(limit)
    ))
}

/// During a run: `Err(message)` when the buffers that hold queued and in-flight packets have
/// grown by `grown` bytes since the start, more than the limit leaves them beside the rest
/// of the estimate `e`. `now` and `end` are the simulated time so far and the run's end.
pub fn check_growth(e: &MemoryEstimate, limit: u64, limit_text: &str, grown: u64, now: Time, end: Time) -> Result<(), String> {
    let rest = e.unwatched();
    if rest.saturating_add(grown) <= limit {
        return Ok(());
    }
    let of = if limit_text.is_empty() { String::new() } else { format!(", {limit_text}") };
    Err(format!(
        "stopped after {:.3} s of the {:.3} s simulated: the packets queued and in flight took {}, which with the {} the rest of the run needs is more than the memory limit of {}{of}; \
queues grow without bound when a flow's access_rate is below the bottleneck rate (access queues are unlimited) or a buffer is very large: \
give the flows a receive window (rwnd), a faster access_rate or a smaller buffer, simulate a shorter duration, or raise the limit (--memory-limit, memory_limit=..., or the CCSIM_MEMORY_LIMIT environment variable)",
        now as f64 / SEC as f64,
        end as f64 / SEC as f64,
        bytes_text(grown),
        bytes_text(rest),
        bytes_text(limit),
    ))
}

/// A run with packet captures holds every captured packet's record ([`CAPTURE_RECORD_BYTES`] at most) in memory
/// until it ends: stopped, with a message naming the capture, when those records and the rest
/// of the run would pass the limit.
pub fn check_capture(e: &MemoryEstimate, limit: u64, limit_text: &str, grown: u64, captured: u64, now: Time, end: Time) -> Result<(), String> {
    let rest = e.unwatched().saturating_add(grown);
    if captured == 0 || rest.saturating_add(captured) <= limit {
        return Ok(());
    }
    let of = if limit_text.is_empty() { String::new() } else { format!(", {limit_text}") };
    Err(format!(
        "pcap: stopped after {:.3} s of the {:.3} s simulated: the captured packets took {}, which with the {} the rest of the run needs is more than the memory limit of {}{of}; \
capture fewer directions (pcap_links), simulate a shorter duration, or raise the limit (--memory-limit, memory_limit=..., or the CCSIM_MEMORY_LIMIT environment variable)",
        now as f64 / SEC as f64,
        end as f64 / SEC as f64,
        bytes_text(captured),
        bytes_text(rest),
        bytes_text(limit),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn any(v: Value) -> AnyScenario {
        AnyScenario::from_value(&v).unwrap()
    }

    #[test]
    fn a_dumbbell_estimate_adds_up_its_parts_exactly() {
        // 3 flows (2 cubic, 1 cdg), 100 s at 10 Mbps, mss 1000 (1052 B on the wire), base RTT
        // 2 x (20 + 5) ms, buffer 50 packets, sampled every 100 ms.
        let sc = any(json!({
            "duration": "100s",
            "bottleneck": {"rate": "10Mbps", "delay": "20ms", "buffer": "50pkt"},
            "tcp": {"mss": 1000},
            "flows": [{"cc": "cubic", "count": 2}, {"cc": "cdg", "access_delay": "5ms"}],
        }));
        let e = estimate(&sc, true);
        let bdp = 10_000_000 * 50 / 1000 / (8 * 1052); // 59 packets
        let carried = 10_000_000u64 * 100 / (8 * 1052); // 118,821 packets over the run
        assert_eq!(bdp, 59);
        assert_eq!(
            e,
            MemoryEstimate {
                flows: 3,
                flow_bytes: 3 * TCP_FLOW_BYTES,
                packets: 59 + 50 + 3 * 10,
                packet_bytes: 139 * PACKET_BYTES,
                timeseries_rows: 3 * 1000,
                timeseries_bytes: 3000 * TS_ROW_BYTES,
                // cdg: 2 per ACK of the link's packets plus one per min_rto (200 ms).
                cc_event_rows: 2 * carried + 500,
                cc_event_bytes: (2 * carried + 500) * EVENT_ROW_BYTES,
                workload_rows: 0,
                workload_row_bytes: 0,
                captured_packets: 0,
                capture_bytes: 0,
            }
        );
        assert_eq!(e.total(), 3 * TCP_FLOW_BYTES + 139 * PACKET_BYTES + 3000 * TS_ROW_BYTES + (2 * carried + 500) * EVENT_ROW_BYTES);
        // Without a time series: no rows, the rest unchanged.
        let e0 = estimate(&sc, false);
        assert_eq!((e0.timeseries_rows, e0.timeseries_bytes), (0, 0));
        assert_eq!(e0.total(), e.total() - e.timeseries_bytes);
    }

    /// bench/flow_memory.py's scenario with N CUBIC flows: the estimate stays above 1.2x the
    /// growth of peak RSS over the 1-flow run measured there (bench/results/flow_memory.md: the
    /// largest over the ways of running it and the two runs of the script on 2026-11-24), with
    /// or without the time series, and TCP_FLOW_BYTES alone above 1.2x the largest slope seen.
    #[test]
    fn the_estimate_bounds_the_measured_runs_with_a_margin() {
        // (flows, largest growth with the time series (`ccsim run --out`), without
        // (`ccsim run --out --no-timeseries`)), bytes.
        const GROWTH: [(u64, u64, u64); 5] = [
            (1_000, 27_600_000, 14_600_000),
            (2_000, 41_900_000, 26_400_000),
            (5_000, 84_200_000, 54_200_000),
            (10_000, 142_400_000, 133_300_000),
            (20_000, 303_500_000, 278_100_000),
        ];
        for (n, with_ts, without) in GROWTH {
            let sc = any(json!({
                "duration": "1s",
                "bottleneck": {"rate": "1Gbps", "delay": "10ms", "buffer": "1bdp"},
                "flows": [{"cc": "cubic", "count": n}],
            }));
            let (e, e0) = (estimate(&sc, true), estimate(&sc, false));
            assert!(e.total() as f64 >= 1.2 * with_ts as f64, "{n}: {} < 1.2 x {with_ts}", e.total());
            assert!(e0.total() as f64 >= 1.2 * without as f64, "{n}: {} < 1.2 x {without}", e0.total());
            // Not wildly above either: within 5x of what `ccsim run --out` used.
            assert!(e.total() < 5 * with_ts && e0.total() < 5 * without, "{n}: {} {}", e.total(), e0.total());
        }
        // The largest slope: BBR, 10 s, `ccsim run --out --no-timeseries`, 16,438 bytes per flow.
        assert!(TCP_FLOW_BYTES as f64 >= 1.2 * 16_438.0);
    }

    #[test]
    fn the_event_log_part_is_capped_and_absent_for_algorithms_that_log_nothing() {
        let base = json!({
            "duration": "1000s",
            "bottleneck": {"rate": "1Gbps", "delay": "20ms", "buffer": "1bdp"},
            "flows": [{"cc": "cubic"}, {"cc": "bbr"}, {"cc": "newreno"}],
        });
        assert_eq!(estimate(&any(base.clone()), true).cc_event_rows, 0);
        let mut v = base;
        v["flows"][1]["cc"] = json!("bbr-expire");
        assert_eq!(estimate(&any(v), true).cc_event_rows, MAX_CC_EVENTS as u64 + 1);
    }

    #[test]
    fn the_queue_part_is_bounded_by_what_the_link_carries_in_the_run() {
        // A huge buffer on a slow, short run: at most the packets the bottleneck carries.
        let sc = any(json!({
            "duration": "1s",
            "bottleneck": {"rate": "1Mbps", "delay": "10ms", "buffer": "100000000pkt"},
            "flows": [{"cc": "cubic"}],
        }));
        let e = estimate(&sc, true);
        assert_eq!(e.packets, 1_000_000 / (8 * 1500) + 10); // 83 carried + the initial window
    }

    #[test]
    fn a_wireless_estimate_counts_tcp_rows_and_udp_queues_exactly() {
        let sc = any(json!({
            "duration": "10s",
            "sample_interval": "50ms",
            "wireless": {"hops": 3, "queue": 100, "host": "rpi3"},
            "flows": [
                {"cc": "bbr-rtprop"},
                {"protocol": "udp", "rate": "500pps", "count": 2, "start": "5s"},
            ],
        }));
        let e = estimate(&sc, true);
        // 4 stations x (queue 100 + backlog 1000); TCP can fill them; plus one initial window.
        assert_eq!(e.packets, 4 * 1100 + 10);
        assert_eq!((e.flows, e.flow_bytes), (3, TCP_FLOW_BYTES + 2 * UDP_FLOW_BYTES));
        assert_eq!(e.timeseries_rows, 200); // the TCP flow only: 10 s / 50 ms
        // bbr-rtprop: 2 per ACK of 65 Mbps in 1500-byte packets, plus one per 200 ms.
        let acks = 65_000_000u64 * 10 / (8 * 1500);
        assert_eq!(e.cc_event_rows, 2 * acks + 50);

        // UDP alone: no more queued than generated (2 flows x 500 pps x 5 s).
        let udp = any(json!({
            "duration": "10s",
            "wireless": {"hops": 3},
            "flows": [{"protocol": "udp", "rate": "500pps", "count": 2, "start": "5s"}],
        }));
        let e = estimate(&udp, true);
        assert_eq!((e.packets, e.timeseries_rows, e.cc_event_rows), (4 * 1000, 0, 0));
        let few = any(json!({
            "duration": "1s",
            "wireless": {"hops": 3},
            "flows": [{"protocol": "udp", "rate": "100pps"}],
        }));
        assert_eq!(estimate(&few, true).packets, 100);
    }

    #[test]
    fn the_refusal_gives_the_estimate_its_parts_the_limit_and_what_to_do() {
        let sc = any(json!({
            "duration": "1000000s",
            "sample_interval": "1ms",
            "bottleneck": {"rate": "10Mbps", "delay": "20ms"},
            "flows": [{"cc": "cubic"}],
        }));
        let e = estimate(&sc, true);
        assert_eq!(e.timeseries_rows, 1_000_000_000);
        let m = check(&sc, true, 8_000_000_000, "given by --memory-limit").unwrap_err();
        assert!(m.starts_with("this run would need about 600.0 GB (time series 600.0 GB (1,000,000,000 rows); queues 30.4 KB (up to 76 packets); 1 flow 24.0 KB), "), "{m}");
        assert!(m.contains("more than the memory limit of 8.0 GB, given by --memory-limit; to run it: record no time series"), "{m}");
        for hint in ["--no-timeseries", "timeseries=False", "sample_interval", "fewer flows", "--memory-limit", "CCSIM_MEMORY_LIMIT"] {
            assert!(m.contains(hint), "{hint}: {m}");
        }
        assert!(!m.contains('\n'));
        // Without the time series it fits.
        assert!(check(&sc, false, 8_000_000_000, "").is_ok());
        // Exactly at the limit is accepted, one byte less is not.
        assert!(check(&sc, true, e.total(), "").is_ok());
        assert!(check(&sc, true, e.total() - 1, "").is_err());
    }

    #[test]
    fn a_run_whose_queues_outgrow_the_limit_is_stopped_with_an_explanation() {
        let sc = any(json!({
            "duration": "100s",
            "bottleneck": {"rate": "10Mbps", "delay": "20ms", "buffer": "50pkt"},
            "flows": [{"cc": "cubic"}],
        }));
        let e = estimate(&sc, false);
        let rest = e.total() - e.packet_bytes;
        let limit = rest + 1_000_000;
        assert!(check_growth(&e, limit, "", 1_000_000, 0, 100 * SEC).is_ok());
        let m = check_growth(&e, limit, "given by CCSIM_MEMORY_LIMIT", 1_000_001, 42_500_000_000, 100 * SEC).unwrap_err();
        assert!(
            m.starts_with(&format!(
                "stopped after 42.500 s of the 100.000 s simulated: the packets queued and in flight took 1.0 MB, which with the {} the rest of the run needs is more than the memory limit of {}, given by CCSIM_MEMORY_LIMIT; ",
                bytes_text(rest),
                bytes_text(limit)
            )),
            "{m}"
        );
        assert!(m.contains("access_rate") && m.contains("rwnd") && m.contains("--memory-limit") && !m.contains('\n'), "{m}");
    }

    #[test]
    fn workload_flows_rows_are_counted_and_a_run_of_too_many_is_refused() {
        // 100 flows a second from 0 s to 8 s: 800 expected, + 4 x sqrt(800).
        // Hadoop at 50% of 10 Mbps from 5 s: 0.5 x 10e6 / (8 x 120,420.75) per second for 5 s.
        let sc = any(json!({
            "duration": "10s",
            "bottleneck": {"rate": "10Mbps", "delay": "20ms", "buffer": "50pkt"},
            "flows": [{"cc": "cubic"}],
            "workloads": [{"cc": "cubic", "sizes": "hadoop", "arrivals": "100/s", "stop": "8s"},
                          {"cc": "bbr", "sizes": "hadoop", "load": 0.5, "start": "5s"}],
        }));
        let e = estimate(&sc, false);
        let m2: f64 = 0.5 * 10e6 / (8.0 * 120_420.75) * 5.0;
        let want = 914 + (m2 + 4.0 * m2.sqrt()).ceil() as u64;
        assert_eq!(want, 914 + 47);
        assert_eq!((e.workload_rows, e.workload_row_bytes), (want, want * WORKLOAD_ROW_BYTES));
        assert_eq!(e.total(), e.flow_bytes + e.packet_bytes + want * WORKLOAD_ROW_BYTES);
        assert_eq!(e.flows, 1); // workload flows are rows, not [[flows]] state
        assert_eq!(e.to_json()["workload_rows"], json!(want));

        // 1,000 flows a second for 10 minutes: 603,099 rows, 6.0 GB: refused under 4 GB, in
        // one line that names the part.
        let big = any(json!({
            "duration": "600s",
            "bottleneck": {"rate": "10Gbps", "delay": "1ms", "buffer": "1bdp"},
            "workloads": [{"cc": "cubic", "sizes": "hadoop", "arrivals": "1000/s"}],
        }));
        let e = estimate(&big, false);
        assert_eq!(e.workload_rows, 600_000 + (4.0 * 600_000f64.sqrt()).ceil() as u64);
        let m = check(&big, false, 4_000_000_000, "as set").unwrap_err();
        assert!(m.starts_with("this run would need about 6.0 GB (workload flows' rows 6.0 GB (up to 603,099 flows); "), "{m}");
        assert!(m.contains("more than the memory limit of 4.0 GB, as set; to run it:") && !m.contains('\n'), "{m}");
        // The 10-minute run of about 100,000 short flows fits in 2 GB.
        let ordinary = any(json!({
            "duration": "600s",
            "bottleneck": {"rate": "100Mbps", "delay": "2ms", "buffer": "2bdp"},
            "workloads": [{"cc": "cubic", "sizes": "hadoop", "arrivals": "167/s"}],
        }));
        assert!(check(&ordinary, true, 2_000_000_000, "").is_ok());
    }

    #[test]
    fn a_capture_is_counted_and_one_that_cannot_fit_is_refused_or_stopped() {
        let sc = any(json!({
            "duration": "100s",
            "bottleneck": {"rate": "10Mbps", "delay": "20ms", "buffer": "50pkt"},
            "flows": [{"cc": "cubic"}],
        }));
        let e = estimate(&sc, false);
        assert_eq!((e.captured_packets, e.capture_bytes), (0, 0));
        let c = e.with_capture(1_000_000);
        assert_eq!(c.capture_bytes, 1_000_000 * CAPTURE_RECORD_BYTES);
        assert_eq!(c.total(), e.total() + c.capture_bytes);
        assert_eq!(CAPTURE_RECORD_BYTES, 2 * crate::output::pcap::RECORD_BYTES as u64);
        assert_eq!(crate::output::pcap::RECORD_BYTES, 64, "README and docs/model.md say 64 bytes a record");
        // Refused before the run, in one line that says what to do first.
        let limit = e.total() + 1_000_000 * CAPTURE_RECORD_BYTES - 1;
        let m = check_capture_estimate(e, 1_000_000, limit, "as set").unwrap_err();
        assert!(m.starts_with(&format!("this run would need about {} (captured packets {} (up to 1,000,000 packets); ", bytes_text(c.total()), bytes_text(c.capture_bytes))), "{m}");
        assert!(m.contains("; to run it: capture fewer directions (pcap_links) or a shorter run, or record no time series") && !m.contains('\n'), "{m}");
        assert_eq!(check_capture_estimate(e, 1_000_000, limit + 1, "").unwrap(), c);
        // During the run, the records are checked against what the rest leaves them (the
        // estimate of the records themselves is not part of the rest).
        let rest = c.total() - c.packet_bytes - c.capture_bytes;
        assert!(check_capture(&c, limit + 1, "", 0, limit + 1 - rest, 0, 100 * SEC).is_ok());
        let m = check_capture(&c, limit + 1, "", 10, limit + 1 - rest, 5 * SEC, 100 * SEC).unwrap_err();
        assert!(m.starts_with("pcap: stopped after 5.000 s of the 100.000 s simulated: the captured packets took "), "{m}");
        assert!(m.contains("capture fewer directions (pcap_links)") && !m.contains('\n'), "{m}");
    }

    #[test]
    fn flows_are_bounded_over_all_entries_before_they_are_expanded() {
        let v = json!({
            "duration": "1s",
            "bottleneck": {"rate": "10Mbps", "delay": "20ms"},
            "flows": [{"cc": "cubic", "count": 100_000}, {"cc": "bbr", "count": 100_000}, {"cc": "newreno", "count": 100_000}],
        });
        let t0 = std::time::Instant::now();
        let m = AnyScenario::from_value(&v).unwrap_err().to_string();
        assert_eq!(
            m,
            format!(
                "flows[1].count: 100000 brings the flows of all entries to 200000, too many (their state alone would need about {}); accepted: at most 100000 flows in all [[flows]] entries together",
                bytes_text(200_000 * TCP_FLOW_BYTES)
            )
        );
        assert!(m.contains("(their state alone would need about 4.8 GB)"), "{m}");
        assert!(t0.elapsed().as_millis() < 1000);
        let mut ok = v.clone();
        ok["flows"] = json!([{"cc": "cubic", "count": 99_999}, {"cc": "bbr"}]);
        match AnyScenario::from_value(&ok).unwrap() {
            AnyScenario::Dumbbell(s) => assert_eq!(s.flows.len(), MAX_TOTAL_FLOWS),
            _ => unreachable!(),
        }
        // Wireless lines too.
        let w = json!({"duration": "1s", "wireless": {"hops": 2}, "flows": [{"cc": "cubic", "count": 60_000}, {"protocol": "udp", "rate": "1pps", "count": 60_000}]});
        assert!(AnyScenario::from_value(&w).unwrap_err().to_string().starts_with("flows[1].count: 60000 brings the flows of all entries to 120000"));
    }

    #[test]
    fn udp_rates_are_bounded_in_packets_however_they_are_written() {
        let udp = |rate: &str, size: u32| {
            AnyScenario::from_value(&json!({
                "duration": "1s",
                "wireless": {"hops": 2},
                "flows": [{"protocol": "udp", "rate": rate, "packet_size": size}],
            }))
        };
        // 80 Mbps of 1-byte datagrams is 1e7 packets per second: accepted; 1 bit more is not.
        assert!(udp("80Mbps", 1).is_ok());
        assert!(udp("10000000pps", 1).is_ok());
        let m = udp("80000001bps", 1).unwrap_err().to_string();
        assert_eq!(m, "flows[0].rate: \"80000001bps\" with packet_size = 1 is 1.0000e7 packets per second, out of range; accepted: at most 1e7 packets per second (rate / (8 x packet_size))");
        let m = udp("10Gbps", 1).unwrap_err().to_string();
        assert!(m.starts_with("flows[0].rate: \"10Gbps\" with packet_size = 1 is 1.2500e9 packets per second, out of range"), "{m}");
        assert!(udp("10Gbps", 1000).is_ok()); // 1.25e6 pps
        assert!(udp("10000001pps", 1000).is_err());
    }

    #[test]
    fn sizes_and_counts_are_written_for_people() {
        assert_eq!(bytes_text(999), "999 B");
        assert_eq!(bytes_text(1_500), "1.5 KB");
        assert_eq!(bytes_text(12_345_678_901), "12.3 GB");
        assert_eq!(count_text(0), "0");
        assert_eq!(count_text(999), "999");
        assert_eq!(count_text(1000), "1,000");
        assert_eq!(count_text(40_000_000), "40,000,000");
    }

    /// Every algorithm file that calls `record(` is in LOGGING_ALGORITHMS, and no other.
    #[test]
    fn logging_algorithms_are_the_ones_that_record() {
        let sources: &[(&str, &str)] = &[
            ("newreno", include_str!("cc/newreno.rs")),
            ("cubic", include_str!("cc/cubic.rs")),
            ("bbr", include_str!("cc/bbr.rs")),
            ("ucc", include_str!("cc/ucc.rs")),
            ("bbr-expire", include_str!("cc/bbr_expire.rs")),
            ("bbr-rtprop", include_str!("cc/bbr_rtprop.rs")),
            ("bbrplus", include_str!("cc/bbrplus.rs")),
            ("hd", include_str!("cc/hd.rs")),
            ("chd", include_str!("cc/chd.rs")),
            ("cdg", include_str!("cc/cdg.rs")),
            ("dctcp", include_str!("cc/dctcp.rs")),
            ("westwood", include_str!("cc/westwood.rs")),
            ("htcp", include_str!("cc/htcp.rs")),
            ("bic", include_str!("cc/bic.rs")),
            ("highspeed", include_str!("cc/highspeed.rs")),
            ("scalable", include_str!("cc/scalable.rs")),
            ("hybla", include_str!("cc/hybla.rs")),
            ("vegas", include_str!("cc/vegas.rs")),
            ("veno", include_str!("cc/veno.rs")),
            ("yeah", include_str!("cc/yeah.rs")),
            ("illinois", include_str!("cc/illinois.rs")),
            ("lp", include_str!("cc/lp.rs")),
            ("prague", include_str!("cc/prague.rs")),
            ("copa", include_str!("cc/copa.rs")),
            ("bbr3", include_str!("cc/bbr3.rs")),
        ];
        let mut names: Vec<&str> = sources.iter().map(|s| s.0).collect();
        names.sort();
        let mut registry = crate::cc::names();
        registry.sort();
        assert_eq!(names, registry, "a new algorithm: add its source file here");
        for (name, src) in sources {
            let code: String = src.split("#[cfg(test)]").next().unwrap().to_string();
            assert_eq!(code.contains(".record("), LOGGING_ALGORITHMS.contains(name), "{name}");
        }
        // Helpers shared by several algorithms do not record.
        for (file, src) in [("ertt.rs", include_str!("cc/ertt.rs")), ("mod.rs", include_str!("cc/mod.rs")), ("jiffies.rs", include_str!("cc/jiffies.rs"))] {
            let code = src.split("#[cfg(test)]").next().unwrap();
            assert!(!code.contains(".record("), "{file}");
        }
    }
}
