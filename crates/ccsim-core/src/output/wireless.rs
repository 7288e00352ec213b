//! What a run of the `[wireless]` line reports: per flow (TCP or UDP) and per station. Its
//! TCP flows carry the same fields as a dumbbell's ([`FlowSummary`]), then [`LineFlow`]'s.

use crate::metrics::{AirHopSummary, FlowSummary};
use crate::net::wifi::StationStats;
use crate::output::schema::{record, Type};
use serde::Serialize;

/// Per-flow results of a wireless run (UDP flows report sent/received/lost).
#[derive(Debug, Clone, Serialize)]
pub struct WFlowSummary {
    pub id: u32,
    pub group: usize,
    pub start_s: f64,
    pub end_s: f64,
    pub kind: &'static str,
    pub src: usize,
    pub dst: usize,
    pub sent: u64,
    pub received: u64,
    /// Sent, not received, and no longer anywhere in the line (dropped).
    pub lost: u64,
    /// Still queued in a station when the run ended.
    pub in_flight: u64,
    pub loss_ratio: f64,
    pub throughput_mbps: f64,
    /// For TCP flows, the same fields as a dumbbell run.
    pub tcp: Option<FlowSummary>,
}

#[derive(Debug, Clone, Serialize)]
pub struct WirelessOutput {
    pub seed: u64,
    pub sim_seconds: f64,
    pub events: u64,
    pub wall_seconds: f64,
    pub flows: Vec<WFlowSummary>,
    pub total_throughput_mbps: f64,
    pub jain_index: f64,
    pub stations: Vec<StationStats>,
    pub air_hops: Vec<AirHopSummary>,
}

record! {
    /// The fields a flow of a `[wireless]` line has beside a dumbbell flow's.
    pub struct LineFlow {
        protocol: &'static str, "", "`tcp` or `udp`.";
        src: usize, "", "The station it sends from (0 is the line's first).";
        dst: usize, "", "The station it sends to.";
        sent: u64, "pkts", "Packets sent (for TCP, data segments, retransmissions included).";
        received: u64, "pkts", "Packets received (for TCP, data segments delivered).";
        lost: u64, "pkts", "Sent, not received, and no longer anywhere in the line (dropped).";
        in_flight: u64, "pkts", "Still queued in a station when the run ended.";
        loss_ratio: f64, "fraction", "`lost` / `sent` (0 when nothing was sent).";
    }
}

record! {
    /// One run of a `[wireless]` line, as `ccsim run --json` prints it.
    pub struct LineSummary {
        name: Option<String>, "", "The scenario's `name`.";
        network: &'static str, "", "`wireless`.";
        seed: u64, "", "The seed every random stream derives from.";
        sim_seconds: f64, "s", "Simulated time.";
        events: u64, "count", "Events the engine processed.";
        wall_seconds: f64, "s", "Wall time of the run (the only machine-dependent value).";
        flows: Vec<serde_json::Value> as (Type::Records("line_flows"), false), "", "Per flow, in file order.";
        total_throughput_mbps: f64, "Mbps", "Sum of the flows' throughput.";
        jain_index: f64, "", "Jain's fairness index of the flows' throughput.";
        wireless: serde_json::Value as (Type::Object, false), "", "The resolved `[wireless]` settings (hops, profile, environment, PHY and MAC constants).";
        stations: Vec<StationStats> as (Type::Records("stations"), false), "", "Per station of the line, in order.";
        air_hops: Vec<AirHopSummary> as (Type::Records("air_hops"), false), "", "Every hop of the line that sent data frames (from one station to its neighbour), by sending then receiving station.";
    }
}

impl WirelessOutput {
    /// The summary as `ccsim run --json` prints it ([`LineSummary`]): one flat record per
    /// flow, with the dumbbell's per-flow fields for TCP flows (`cc` is "udp" for UDP flows)
    /// then the [`LineFlow`] fields.
    pub fn summary_json(&self, name: Option<&str>, wireless: &serde_json::Value) -> serde_json::Value {
        use serde_json::{json, Value};
        let flows: Vec<Value> = self
            .flows
            .iter()
            .map(|f| {
                let mut m = match &f.tcp {
                    Some(t) => serde_json::to_value(t).expect("flow summary serialises"),
                    None => json!({
                        "id": f.id, "group": f.group, "cc": "udp", "start_s": f.start_s, "end_s": f.end_s,
                        "throughput_mbps": f.throughput_mbps,
                    }),
                };
                let line = LineFlow {
                    protocol: f.kind,
                    src: f.src,
                    dst: f.dst,
                    sent: f.sent,
                    received: f.received,
                    lost: f.lost,
                    in_flight: f.in_flight,
                    loss_ratio: f.loss_ratio,
                };
                let o = m.as_object_mut().expect("an object");
                if let Value::Object(extra) = serde_json::to_value(line).expect("line flow serialises") {
                    o.extend(extra);
                }
                m
            })
            .collect();
        serde_json::to_value(LineSummary {
            name: name.map(str::to_string),
            network: "wireless",
            seed: self.seed,
            sim_seconds: self.sim_seconds,
            events: self.events,
            wall_seconds: self.wall_seconds,
            flows,
            total_throughput_mbps: self.total_throughput_mbps,
            jain_index: self.jain_index,
            wireless: wireless.clone(),
            stations: self.stations.clone(),
            air_hops: self.air_hops.clone(),
        })
        .expect("line summary serialises")
    }
}
