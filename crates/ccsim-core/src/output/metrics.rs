//! What a run reports: a per-flow and bottleneck summary (serialised as the CLI's JSON) and a
//! long-format time series (one row per sample time and flow).

use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct FlowSummary {
    pub id: u32,
    pub group: usize,
    pub cc: String,
    pub start_s: f64,
    pub end_s: f64,
    /// Cumulatively acknowledged payload bytes / connection time (the seed papers' definition).
    pub throughput_mbps: f64,
    pub bytes_acked: u64,
    pub bytes_sent: u64,
    pub bytes_delivered: u64,
    pub segments_sent: u64,
    pub segments_delivered: u64,
    pub retransmits: u64,
    pub rto_count: u64,
    pub fast_recoveries: u64,
    pub rtt_min_ms: f64,
    pub rtt_mean_ms: f64,
    pub rtt_p95_ms: f64,
    pub cwnd_final_pkts: u32,
    pub cwnd_final_bytes: u64,
    pub completed: bool,
    pub completion_s: Option<f64>,
    /// The nodes the flow's data crosses, sender to receiver (empty on the 802.11 line, whose
    /// flows give `src` and `dst`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub path: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct BottleneckSummary {
    pub rate_mbps: f64,
    pub delay_ms: f64,
    pub buffer_pkts: Option<u64>,
    pub buffer_bytes: Option<u64>,
    pub packets_in: u64,
    pub packets_out: u64,
    /// Drop-tail overflows.
    pub drops: u64,
    /// Random (Bernoulli) losses on the data direction.
    pub random_losses: u64,
    pub ack_losses: u64,
    /// Fraction of the run the link was serialising.
    pub utilization: f64,
    pub queue_mean_pkts: f64,
    pub queue_max_pkts: u64,
    pub queue_delay_mean_ms: f64,
    pub queue_delay_p95_ms: f64,
}

/// One direction of a link that carried packets.
#[derive(Debug, Clone, Serialize)]
pub struct LinkSummary {
    /// `"from->to"` with the nodes' names.
    pub id: String,
    /// None for an unlimited direction (a pure propagation delay).
    pub rate_mbps: Option<f64>,
    pub delay_ms: f64,
    pub buffer_pkts: Option<u64>,
    pub buffer_bytes: Option<u64>,
    pub packets_in: u64,
    pub packets_out: u64,
    /// Drop-tail overflows.
    pub drops: u64,
    /// Random (Bernoulli) losses.
    pub random_losses: u64,
    /// Fraction of the run the direction was serialising (0 when unlimited).
    pub utilization: f64,
    pub queue_mean_pkts: f64,
    pub queue_max_pkts: u64,
    pub queue_delay_mean_ms: f64,
    pub queue_delay_p95_ms: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub name: Option<String>,
    pub seed: u64,
    pub sim_seconds: f64,
    pub events: u64,
    pub wall_seconds: f64,
    pub flows: Vec<FlowSummary>,
    pub total_throughput_mbps: f64,
    pub jain_index: f64,
    /// The dumbbell's bottleneck (None for a `[[links]]` network).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bottleneck: Option<BottleneckSummary>,
    /// Every link direction that carried packets, in the network's order.
    pub links: Vec<LinkSummary>,
    /// One line each: conditions a user should know about (e.g. a flow limited by its own
    /// access link rather than the bottleneck). Never errors.
    pub warnings: Vec<String>,
    /// Every station of the network's Wi-Fi media (`[[wifi]]`), in order; absent without one.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stations: Vec<StationSummary>,
}

/// A station of a shared medium: which medium (the `[[wifi]]` entry) and node, and its MAC and
/// host counters.
#[derive(Debug, Clone, Serialize)]
pub struct StationSummary {
    pub medium: usize,
    pub node: String,
    #[serde(flatten)]
    pub stats: crate::net::wifi::StationStats,
}

/// Columns of the time series, all the same length.
#[derive(Debug, Clone, Default)]
pub struct TimeSeries {
    pub time_s: Vec<f64>,
    pub flow: Vec<u32>,
    pub cc: Vec<&'static str>,
    /// Rate of data delivered (cumulatively or selectively acknowledged, Linux `delivered`)
    /// over the interval.
    pub delivery_rate_mbps: Vec<f64>,
    /// Rate at which the cumulative ACK advanced over the interval (can spike after recovery).
    pub goodput_mbps: Vec<f64>,
    pub bytes_acked: Vec<u64>,
    pub cwnd_pkts: Vec<u32>,
    pub srtt_ms: Vec<f64>,
    pub rtprop_ms: Vec<f64>,
    pub btlbw_mbps: Vec<f64>,
    pub pacing_rate_mbps: Vec<f64>,
    pub inflight_pkts: Vec<u32>,
    pub rho: Vec<f64>,
    pub queue_state: Vec<Option<&'static str>>,
    pub shadow_wnd_pkts: Vec<f64>,
    pub queue_pkts: Vec<u32>,
    pub queue_bytes: Vec<u64>,
}

impl TimeSeries {
    /// One row for a flow's sender at time `t_s`; `last` holds (bytes acked, packets delivered)
    /// at the previous sample and is updated. `queue_pkts`/`queue_bytes` describe the queue the
    /// caller reports beside the flow (the bottleneck's, or the sender station's interface queue).
    #[allow(clippy::too_many_arguments)]
    pub fn push_sender(
        &mut self,
        t_s: f64,
        flow: u32,
        cc: &'static str,
        s: &crate::tcp::sender::Sender,
        last: &mut (u64, u64),
        interval_s: f64,
        queue_pkts: u32,
        queue_bytes: u64,
    ) {
        use crate::time::to_ms;
        let acked = s.stats.bytes_acked;
        let delivered = s.sk.delivered;
        let tel = s.cc.telemetry();
        let mss = s.cfg.mss as f64;
        self.time_s.push(t_s);
        self.flow.push(flow);
        self.cc.push(cc);
        self.delivery_rate_mbps.push((delivered - last.1) as f64 * mss * 8.0 / interval_s / 1e6);
        self.goodput_mbps.push((acked - last.0) as f64 * 8.0 / interval_s / 1e6);
        self.bytes_acked.push(acked);
        self.cwnd_pkts.push(s.sk.cwnd);
        self.srtt_ms.push(if s.sk.srtt > 0 { to_ms(s.sk.srtt) } else { f64::NAN });
        self.rtprop_ms.push(tel.rtprop_ms);
        self.btlbw_mbps.push(tel.btlbw_bps / 1e6);
        self.rho.push(tel.rho);
        self.queue_state.push(tel.queue_state);
        self.shadow_wnd_pkts.push(tel.shadow_wnd_pkts);
        self.pacing_rate_mbps.push(if s.sk.paced { s.sk.pacing_rate as f64 * 8.0 / 1e6 } else { f64::NAN });
        self.inflight_pkts.push(s.sk.packets_in_flight());
        self.queue_pkts.push(queue_pkts);
        self.queue_bytes.push(queue_bytes);
        *last = (acked, delivered);
    }

    /// One row for a UDP flow (constant bit rate, no window) at time `t_s`: the delivery rate
    /// and goodput are the UDP payload received at the destination over the interval,
    /// `bytes_acked` the payload received so far. A UDP flow has no window, RTT or algorithm:
    /// `cwnd_pkts` and `inflight_pkts` are 0 and the RTT, pacing and algorithm columns NaN.
    /// `last` holds the payload bytes received at the previous sample and is updated.
    pub fn push_udp(&mut self, t_s: f64, flow: u32, bytes_received: u64, last: &mut u64, interval_s: f64, queue_pkts: u32, queue_bytes: u64) {
        let rate = (bytes_received - *last) as f64 * 8.0 / interval_s / 1e6;
        self.time_s.push(t_s);
        self.flow.push(flow);
        self.cc.push("udp");
        self.delivery_rate_mbps.push(rate);
        self.goodput_mbps.push(rate);
        self.bytes_acked.push(bytes_received);
        self.cwnd_pkts.push(0);
        self.srtt_ms.push(f64::NAN);
        self.rtprop_ms.push(f64::NAN);
        self.btlbw_mbps.push(f64::NAN);
        self.rho.push(f64::NAN);
        self.queue_state.push(None);
        self.shadow_wnd_pkts.push(f64::NAN);
        self.pacing_rate_mbps.push(f64::NAN);
        self.inflight_pkts.push(0);
        self.queue_pkts.push(queue_pkts);
        self.queue_bytes.push(queue_bytes);
        *last = bytes_received;
    }

    pub fn len(&self) -> usize {
        self.time_s.len()
    }
    pub fn is_empty(&self) -> bool {
        self.time_s.is_empty()
    }

    /// Reserve room for exactly `rows` more rows (no growth by doubling while sampling).
    pub fn reserve_exact(&mut self, rows: usize) {
        self.time_s.reserve_exact(rows);
        self.flow.reserve_exact(rows);
        self.cc.reserve_exact(rows);
        self.delivery_rate_mbps.reserve_exact(rows);
        self.goodput_mbps.reserve_exact(rows);
        self.bytes_acked.reserve_exact(rows);
        self.cwnd_pkts.reserve_exact(rows);
        self.srtt_ms.reserve_exact(rows);
        self.rtprop_ms.reserve_exact(rows);
        self.btlbw_mbps.reserve_exact(rows);
        self.pacing_rate_mbps.reserve_exact(rows);
        self.inflight_pkts.reserve_exact(rows);
        self.rho.reserve_exact(rows);
        self.queue_state.reserve_exact(rows);
        self.shadow_wnd_pkts.reserve_exact(rows);
        self.queue_pkts.reserve_exact(rows);
        self.queue_bytes.reserve_exact(rows);
    }
}

/// Most algorithm-event rows one run keeps (see [`EventLog`]).
pub const MAX_CC_EVENTS: usize = 1_000_000;

/// The `kind` of the row that closes a truncated event log.
pub const TRUNCATED_KIND: &str = "truncated";

/// Algorithm events, one row each: when, which flow, what, and its values.
///
/// At most [`MAX_CC_EVENTS`] rows are kept: some algorithms (bbr-expire, bbr-rtprop) can
/// record an event on every ACK, which no scenario field bounds usefully. Events past the cap
/// are counted, not stored, and [`EventLog::take_closed`] appends one marker row: kind
/// [`TRUNCATED_KIND`], at the time, flow and algorithm of the first event left out, with
/// `value` = the number of events left out.
#[derive(Debug, Clone, Default)]
pub struct EventLog {
    pub time_s: Vec<f64>,
    pub flow: Vec<u32>,
    pub cc: Vec<&'static str>,
    pub kind: Vec<&'static str>,
    pub value: Vec<f64>,
    pub value2: Vec<f64>,
    /// Events left out past the cap, and the first of them (time, flow, algorithm).
    pub dropped: u64,
    first_dropped: Option<(f64, u32, &'static str)>,
}

impl EventLog {
    pub fn push(&mut self, flow: u32, cc: &'static str, e: crate::cc::CcEvent) {
        if self.time_s.len() >= MAX_CC_EVENTS {
            self.dropped += 1;
            self.first_dropped.get_or_insert((crate::time::to_secs(e.time), flow, cc));
            return;
        }
        self.time_s.push(crate::time::to_secs(e.time));
        self.flow.push(flow);
        self.cc.push(cc);
        self.kind.push(e.kind);
        self.value.push(e.value);
        self.value2.push(e.value2);
    }

    /// The log, taken out of `self`, with the marker row appended if events were left out.
    pub fn take_closed(&mut self) -> EventLog {
        let mut log = std::mem::take(self);
        if let Some((t, flow, cc)) = log.first_dropped {
            log.time_s.push(t);
            log.flow.push(flow);
            log.cc.push(cc);
            log.kind.push(TRUNCATED_KIND);
            log.value.push(log.dropped as f64);
            log.value2.push(f64::NAN);
        }
        log
    }

    pub fn len(&self) -> usize {
        self.time_s.len()
    }
    pub fn is_empty(&self) -> bool {
        self.time_s.is_empty()
    }
}

/// The queue of every link direction that has a buffer (a rate and a finite queue limit), in
/// long format: one row per sample time and direction. `link` indexes `links`.
#[derive(Debug, Clone, Default)]
pub struct LinkSeries {
    pub links: Vec<String>,
    pub time_s: Vec<f64>,
    pub link: Vec<u32>,
    pub queue_pkts: Vec<u64>,
    pub queue_bytes: Vec<u64>,
}

impl LinkSeries {
    pub fn push(&mut self, t_s: f64, link: u32, queue_pkts: u64, queue_bytes: u64) {
        self.time_s.push(t_s);
        self.link.push(link);
        self.queue_pkts.push(queue_pkts);
        self.queue_bytes.push(queue_bytes);
    }
    pub fn len(&self) -> usize {
        self.time_s.len()
    }
    pub fn is_empty(&self) -> bool {
        self.time_s.is_empty()
    }
}

pub struct RunOutput {
    pub summary: Summary,
    pub timeseries: TimeSeries,
    pub events: EventLog,
    pub link_series: LinkSeries,
}

impl Summary {
    /// JSON with `wall_seconds` (the only machine-dependent field) included.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("summary serialises")
    }
}
