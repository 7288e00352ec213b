//! What a run of the `[wireless]` line reports: per flow (TCP or UDP) and per station. Its
//! TCP flows carry the same fields as a dumbbell's ([`FlowSummary`]).

use crate::metrics::FlowSummary;
use crate::net::wifi::StationStats;
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
}

impl WirelessOutput {
    /// The summary as `ccsim run --json` prints it: one flat record per flow, with the
    /// dumbbell's per-flow fields for TCP flows (`cc` is "udp" for UDP flows) plus `protocol`,
    /// `src`, `dst`, `sent`, `received`, `lost` and `loss_ratio` (packets; for TCP, data
    /// segments sent and delivered, retransmissions included in `sent`).
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
                let o = m.as_object_mut().expect("an object");
                o.insert("protocol".into(), Value::from(f.kind));
                o.insert("src".into(), Value::from(f.src));
                o.insert("dst".into(), Value::from(f.dst));
                o.insert("sent".into(), Value::from(f.sent));
                o.insert("received".into(), Value::from(f.received));
                o.insert("lost".into(), Value::from(f.lost));
                o.insert("in_flight".into(), Value::from(f.in_flight));
                o.insert("loss_ratio".into(), Value::from(f.loss_ratio));
                m
            })
            .collect();
        json!({
            "name": name,
            "network": "wireless",
            "seed": self.seed,
            "sim_seconds": self.sim_seconds,
            "events": self.events,
            "wall_seconds": self.wall_seconds,
            "flows": flows,
            "total_throughput_mbps": self.total_throughput_mbps,
            "jain_index": self.jain_index,
            "wireless": wireless,
            "stations": self.stations,
        })
    }
}

