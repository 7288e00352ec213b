//! What a run reports: a per-flow and bottleneck summary (serialised as the CLI's JSON) and a
//! long-format time series (one row per sample time and flow).

use crate::output::schema::{columns, record, Interned, Type};
use serde::Serialize;

record! {
    /// One flow's results.
    pub struct FlowSummary {
        id: u32, "", "The flow's number, from 0 in file order (a `count = N` entry gives N consecutive numbers).";
        group: usize, "", "The index of the `[[flows]]` entry it comes from.";
        cc: String, "", "Its algorithm (`udp` for a UDP flow).";
        start_s: f64, "s", "When it starts sending.";
        end_s: f64, "s", "When it stops: its `stop`, or the end of the run.";
        throughput_mbps: f64, "Mbps", "Cumulatively acknowledged payload bytes / connection time (the seed papers' definition).";
        bytes_acked: u64, "bytes", "Payload bytes cumulatively acknowledged.";
        bytes_sent: u64, "bytes", "Payload bytes sent, retransmissions included.";
        bytes_delivered: u64, "bytes", "Payload bytes the receiver handed to the application, in order, each once.";
        segments_sent: u64, "segments", "Data segments sent, retransmissions included.";
        segments_delivered: u64, "segments", "Data segments the receiver delivered in order, each once.";
        retransmits: u64, "segments", "Data segments sent again.";
        rto_count: u64, "count", "Retransmission timeouts.";
        fast_recoveries: u64, "count", "Entries into fast recovery.";
        ce_received: u64, "pkts", "Data packets that reached the receiver marked CE (congestion experienced) by a queue, duplicates included (0 without `[tcp] ecn`: a queue marks only ECN-capable packets).";
        ece_reductions: u64, "count", "cwnd reductions on an ECN echo: entries into CWR on an ACK with ECE, at most one per window of data (loss recoveries not counted).";
        rtt_min_ms: f64, "ms", "Smallest RTT sample (NaN without samples).";
        rtt_mean_ms: f64, "ms", "Mean of the RTT samples (one per ACK that gives one; NaN without samples).";
        rtt_p95_ms: f64, "ms", "95th percentile of the RTT samples (log-linear histogram, 1% relative error; NaN without samples).";
        cwnd_final_pkts: u32, "pkts", "cwnd at the end of the run.";
        cwnd_final_bytes: u64, "bytes", "cwnd at the end of the run x MSS.";
        completed: bool, "", "A flow with a `size` that had it all acknowledged.";
        completion_s: Option<f64>, "s", "When it completed (null if it did not).";
        #[serde(skip_serializing_if = "Vec::is_empty")]
        path: Vec<String> as (Type::StrList, true), "", "The nodes its data crosses, sender to receiver (absent on a `[wireless]` line, whose flows give `src` and `dst`).";
        #[serde(skip_serializing_if = "Option::is_none")]
        workload: Option<usize>, "", "A `[[workloads]]` flow: the index of its entry (`group` is the same); absent for a `[[flows]]` flow.";
        #[serde(skip_serializing_if = "Option::is_none")]
        size_bytes: Option<u64>, "bytes", "A workload flow's size, drawn from its CDF (absent otherwise).";
        #[serde(skip_serializing_if = "Option::is_none")]
        fct_s: Option<f64>, "s", "A workload flow's completion time: from its arrival (`start_s`) to the ACK of its last byte (null if it did not complete; absent for other flows).";
        #[serde(skip_serializing_if = "Option::is_none")]
        ideal_fct_s: Option<f64>, "s", "A workload flow's ideal completion time: alone on the empty path, ideal slow start from the initial window (docs/model.md, Workloads).";
        #[serde(skip_serializing_if = "Option::is_none")]
        slowdown: Option<f64>, "", "`fct_s` / `ideal_fct_s` (null if it did not complete; absent for other flows).";
        #[serde(skip_serializing_if = "Option::is_none")]
        datagrams_sent: Option<u64>, "pkts", "A wired UDP flow: datagrams sent (absent for TCP flows).";
        #[serde(skip_serializing_if = "Option::is_none")]
        datagrams_received: Option<u64>, "pkts", "A wired UDP flow: datagrams that reached the receiver.";
        #[serde(skip_serializing_if = "Option::is_none")]
        datagrams_lost: Option<u64>, "pkts", "A wired UDP flow: datagrams sent, not received and no longer in the network (dropped by a queue or lost at random).";
        #[serde(skip_serializing_if = "Option::is_none")]
        datagrams_in_flight: Option<u64>, "pkts", "A wired UDP flow: datagrams still queued or on a wire when the run ended.";
    }
}

record! {
    /// One `[[workloads]]` entry's flows, all sizes or one size bucket.
    pub struct WorkloadBucket {
        bucket: &'static str, "", "`all`, `<100KB`, `100KB-10MB` or `>10MB` (sizes in bytes, 1 KB = 1000 B; the lower bound inclusive).";
        started: u64, "count", "Flows that arrived (and started) in the bucket.";
        completed: u64, "count", "Of those, flows whose last byte was acknowledged within the run.";
        fct_mean_s: f64, "s", "Mean completion time of the completed flows (NaN without any).";
        fct_p50_s: f64, "s", "Median completion time (linear interpolation between order statistics; NaN without any).";
        fct_p99_s: f64, "s", "99th percentile of the completion times.";
        slowdown_mean: f64, "", "Mean slowdown (FCT / ideal FCT) of the completed flows.";
        slowdown_p50: f64, "", "Median slowdown.";
        slowdown_p99: f64, "", "99th percentile of the slowdowns.";
    }
}

record! {
    /// One `[[workloads]]` entry: what it generated and how its flows fared.
    pub struct WorkloadSummary {
        id: usize, "", "The index of the `[[workloads]]` entry.";
        cc: String, "", "Its flows' algorithm.";
        sizes: String, "", "Its size distribution: a built-in's name or the CDF file.";
        arrival_rate: f64, "", "Its Poisson arrival rate in flows per second, from `load` or `arrivals`.";
        load: Option<f64>, "fraction", "The offered load it was given (null when given `arrivals`).";
        link: Option<String>, "", "The link direction `load` refers to (`router->receiver`, the bottleneck, on a dumbbell).";
        cdf_mean_bytes: f64, "bytes", "Mean flow size of the CDF (piecewise-linear reading).";
        mean_size_bytes: f64, "bytes", "Mean size of the flows it started (NaN without any).";
        offered_load: Option<f64>, "fraction", "Bytes of the flows it started x 8 / (the link's rate x its arrival time, start to stop) (null without a link).";
        rejected: u64, "count", "Arrivals not started because 100,000 flows were alive at once, or its flow numbers ran out (see warnings).";
        alive_max: u64, "count", "Most of its flows alive (started, not completed) at once: the engine's flow storage high-water mark.";
        buckets: Vec<WorkloadBucket> as (Type::Records("workload_buckets"), false), "", "FCT and slowdown for all its flows, then by size bucket.";
    }
}

record! {
    /// The dumbbell's bottleneck: its data direction.
    pub struct BottleneckSummary {
        rate_mbps: f64, "Mbps", "Its rate.";
        delay_ms: f64, "ms", "Its one-way propagation delay.";
        buffer_pkts: Option<u64>, "pkts", "Its queue limit in packets (null when given in bytes).";
        buffer_bytes: Option<u64>, "bytes", "Its queue limit in bytes (null when given in packets).";
        qdisc: String, "", "Its queue discipline (`ccsim qdiscs`).";
        packets_in: u64, "pkts", "Packets offered to it.";
        packets_out: u64, "pkts", "Packets it finished serialising.";
        drops: u64, "pkts", "Overflows: packets arriving to a full buffer, or over the discipline's own limit.";
        aqm_drops: u64, "pkts", "Packets the discipline dropped by its active-queue-management decision (0 for fifo).";
        marks: u64, "pkts", "ECN-capable packets the discipline marked CE instead of dropping them (`ecn = true`).";
        random_losses: u64, "pkts", "Random (Bernoulli) losses of data packets.";
        ack_losses: u64, "pkts", "Random losses of ACKs on the way back.";
        utilization: f64, "fraction", "Fraction of the run it was serialising (a trace or a rate schedule: the bytes it served within the run over its capacity).";
        capacity_mbps: f64, "Mbps", "What it could carry over the run: its rate, or the bits its trace or rate schedule offers over the run / the duration (compare with the flows' throughput).";
        queue_mean_pkts: f64, "pkts", "Time-averaged queue (the packet in service not counted).";
        queue_max_pkts: u64, "pkts", "Largest queue.";
        queue_delay_mean_ms: f64, "ms", "Mean queueing delay of the packets it accepted.";
        queue_delay_p95_ms: f64, "ms", "95th percentile of their queueing delay.";
    }
}

record! {
    /// One direction of a link that carried packets.
    pub struct LinkSummary {
        id: String, "", "`\"from->to\"` with the nodes' names.";
        rate_mbps: Option<f64>, "Mbps", "Its rate (null for an unlimited direction: a pure propagation delay).";
        delay_ms: f64, "ms", "Its one-way propagation delay.";
        buffer_pkts: Option<u64>, "pkts", "Its queue limit in packets (null when in bytes or unlimited).";
        buffer_bytes: Option<u64>, "bytes", "Its queue limit in bytes (null when in packets or unlimited).";
        qdisc: Option<String>, "", "Its queue discipline (`ccsim qdiscs`; null for an unlimited direction, which has no queue).";
        packets_in: u64, "pkts", "Packets offered to it.";
        packets_out: u64, "pkts", "Packets that left its far end (an unlimited direction: that left the flows' delay segments over it).";
        drops: u64, "pkts", "Overflows: packets arriving to a full buffer, or over the discipline's own limit.";
        aqm_drops: u64, "pkts", "Packets the discipline dropped by its active-queue-management decision (0 for fifo).";
        marks: u64, "pkts", "ECN-capable packets the discipline marked CE instead of dropping them (`ecn = true`).";
        random_losses: u64, "pkts", "Random (Bernoulli) losses.";
        utilization: f64, "fraction", "Fraction of the run it was serialising (0 when unlimited; a trace or a rate schedule: the bytes it served within the run over its capacity).";
        capacity_mbps: Option<f64>, "Mbps", "What it could carry over the run: its rate, or the bits its trace or rate schedule offers over the run / the duration (null when unlimited).";
        queue_mean_pkts: f64, "pkts", "Time-averaged queue (the packet in service not counted; 0 when unlimited).";
        queue_max_pkts: u64, "pkts", "Largest queue.";
        queue_delay_mean_ms: f64, "ms", "Mean queueing delay of the packets it accepted (0 when unlimited).";
        queue_delay_p95_ms: f64, "ms", "95th percentile of their queueing delay (0 when unlimited).";
    }
}

record! {
    /// One run.
    pub struct Summary {
        name: Option<String>, "", "The scenario's `name`.";
        seed: u64, "", "The seed every random stream derives from.";
        sim_seconds: f64, "s", "Simulated time.";
        events: u64, "count", "Events the engine processed.";
        wall_seconds: f64, "s", "Wall time of the run (the only machine-dependent value).";
        flows: Vec<FlowSummary> as (Type::Records("flows"), false), "", "Per flow, in file order.";
        total_throughput_mbps: f64, "Mbps", "Sum of the flows' throughput.";
        jain_index: f64, "", "Jain's fairness index of the flows' throughput.";
        #[serde(skip_serializing_if = "Option::is_none")]
        bottleneck: Option<BottleneckSummary> as (Type::Record("bottleneck"), true), "", "The dumbbell's bottleneck (absent for a `[[links]]` network).";
        links: Vec<LinkSummary> as (Type::Records("links"), false), "", "Every link direction that carried packets, in the network's order.";
        warnings: Vec<String> as (Type::StrList, false), "", "One line each: conditions a user should know about (e.g. a flow limited by its own access link rather than the bottleneck). Never errors.";
        #[serde(skip_serializing_if = "Vec::is_empty")]
        stations: Vec<StationSummary> as (Type::Records("stations"), true), "", "Every station of the network's Wi-Fi media (`[[wifi]]`), in order; absent without one.";
        #[serde(skip_serializing_if = "Vec::is_empty")]
        air_hops: Vec<AirHopSummary> as (Type::Records("air_hops"), true), "", "Every hop of the network's Wi-Fi media (`[[wifi]]`) that sent data frames; absent without one.";
        #[serde(skip_serializing_if = "Vec::is_empty")]
        workloads: Vec<WorkloadSummary> as (Type::Records("workloads"), true), "", "Per `[[workloads]]` entry: arrivals, flows started and completed, FCT and slowdown by size bucket; absent without one. (`total_throughput_mbps` and `jain_index` are over the `[[flows]]` flows only.)";
    }
}

record! {
    /// Where a station of a shared medium is: which medium (the `[[wifi]]` entry) and node.
    pub struct StationPlace {
        medium: usize as (Type::Int, true), "", "The index of its `[[wifi]]` entry (absent on a `[wireless]` line).";
        node: String as (Type::Str, true), "", "Its node (absent on a `[wireless]` line).";
    }
}

record! {
    /// One hop of a Wi-Fi medium that sent data frames: a station to its neighbour.
    pub struct AirHopSummary {
        id: String, "", "`\"from->to\"` with the stations' node names (on a `[wireless]` line, their numbers): what `--pcap-links` names it.";
        #[serde(skip_serializing_if = "Option::is_none")]
        medium: Option<usize>, "", "The index of its `[[wifi]]` entry (absent on a `[wireless]` line).";
        packets: u64, "pkts", "IP packets the sending station transmitted to the other over the air, each counted once however many MAC attempts it took (a capture of the hop has this many).";
        attempts: u64, "count", "Transmissions of those packets' frames, MAC retries included.";
        delivered: u64, "pkts", "Frames the receiving station decoded and passed on (a duplicate of a frame whose MAC ACK was lost not counted again).";
        retry_drops: u64, "pkts", "Frames dropped after the retry limit.";
    }
}

/// A station of a shared medium: where it is, and its MAC and host counters.
#[derive(Debug, Clone, Serialize)]
pub struct StationSummary {
    #[serde(flatten)]
    pub place: StationPlace,
    #[serde(flatten)]
    pub stats: crate::net::wifi::StationStats,
}

columns! {
    /// The time series: one row per sample time and flow.
    pub struct TimeSeries {
        time_s: f64, "s", "Sample time.";
        flow: u32, "", "The flow's `id`.";
        cc: &'static str as (Type::Category, false), "", "Its algorithm (`udp` for a UDP flow).";
        delivery_rate_mbps: f64, "Mbps", "Rate of data delivered (cumulatively or selectively acknowledged, Linux `delivered`) over the interval.";
        goodput_mbps: f64, "Mbps", "Rate at which the cumulative ACK advanced over the interval (can spike after recovery).";
        bytes_acked: u64, "bytes", "Payload bytes cumulatively acknowledged so far (for UDP: received).";
        cwnd_pkts: u32, "pkts", "cwnd (0 for UDP).";
        srtt_ms: f64, "ms", "Smoothed RTT (NaN before the first sample).";
        rtprop_ms: f64, "ms", "The algorithm's RTprop (BBR family's min_rtt; NaN for others).";
        btlbw_mbps: f64, "Mbps", "The algorithm's bottleneck-bandwidth estimate (BBR family; NaN for others).";
        pacing_rate_mbps: f64, "Mbps", "Pacing rate (NaN when the flow is not paced).";
        inflight_pkts: u32, "pkts", "Packets in flight (Linux `tcp_packets_in_flight`; 0 for UDP).";
        rho: f64, "", "The algorithm's estimated bottleneck utilization rho (UCC, BBR+; NaN for others).";
        queue_state: Option<&'static str>, "", "The bottleneck queue state the algorithm infers (CDG: unknown, empty, rising, full, falling), else null.";
        shadow_wnd_pkts: f64, "pkts", "The algorithm's shadow window (CHD, CDG; NaN for others).";
        queue_pkts: u32, "pkts", "The queue reported beside the flow: its path's slowest direction's (or its Wi-Fi station's interface queue).";
        queue_bytes: u64, "bytes", "That queue in bytes.";
    }
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
}

/// Most algorithm-event rows one run keeps (see [`EventLog`]).
pub const MAX_CC_EVENTS: usize = 1_000_000;

/// The `kind` of the row that closes a truncated event log.
pub const TRUNCATED_KIND: &str = "truncated";

columns! {
    /// Algorithm events, one row each: when, which flow, what, and its values.
    ///
    /// At most [`MAX_CC_EVENTS`] rows are kept: some algorithms (bbr-expire, bbr-rtprop) can
    /// record an event on every ACK, which no scenario field bounds usefully. Events past the cap
    /// are counted, not stored, and [`EventLog::take_closed`] appends one marker row: kind
    /// [`TRUNCATED_KIND`], at the time, flow and algorithm of the first event left out, with
    /// `value` = the number of events left out.
    pub struct EventLog {
        time_s: f64, "s", "When.";
        flow: u32, "", "The flow's `id`.";
        cc: &'static str, "", "Its algorithm.";
        kind: &'static str, "", "What happened (e.g. `rtprop_update`, `forced_expire`; `truncated` closes a log cut at its cap).";
        value: f64, "", "The event's value (its meaning depends on `kind`: docs/algorithms.md).";
        value2: f64, "", "A second value (NaN when the kind has none).";
    }
    extra {
        /// Events left out past the cap, and the first of them (time, flow, algorithm).
        pub dropped: u64,
        first_dropped: Option<(f64, u32, &'static str)>,
    }
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
}

columns! {
    /// The queue of every link direction that has a buffer (a rate and a finite queue limit),
    /// in long format: one row per sample time and direction.
    pub struct LinkSeries {
        time_s: f64, "s", "Sample time.";
        link: Interned, "", "The direction's id (`\"r1->r2\"`); the engine keeps an index into `links`.";
        queue_pkts: u64, "pkts", "Packets waiting (the packet in service not counted).";
        queue_bytes: u64, "bytes", "Bytes waiting.";
    }
    extra {
        /// The ids of the directions `link` indexes.
        pub links: Vec<String>,
    }
}

impl LinkSeries {
    pub fn push(&mut self, t_s: f64, link: u32, queue_pkts: u64, queue_bytes: u64) {
        self.time_s.push(t_s);
        self.link.push(Interned(link));
        self.queue_pkts.push(queue_pkts);
        self.queue_bytes.push(queue_bytes);
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
