//! The general network (`[[links]]`): the dumbbell written out in full gives what the
//! shorthand gives; ACKs queue behind reverse traffic; packets are conserved on every link
//! direction and delivered exactly once, in order; a parking lot favours the short flows.

use ccsim_core::sim::Sim;
use ccsim_core::run;
use serde_json::{json, Value};

mod common;
use common::scenario;

fn host(name: &str, router: &str, rate: &str, delay: &str) -> Value {
    json!({"between": [name, router], "rate": rate, "delay": delay, "buffer": "unlimited",
           "reverse": {"rate": "unlimited"}})
}

#[test]
fn a_dumbbell_in_the_general_form_gives_the_shorthands_per_flow_results() {
    let flows = json!([
        {"cc": "cubic", "access_rate": "100Mbps", "access_delay": "2ms"},
        {"cc": "bbr", "access_rate": "1Gbps", "access_delay": "5ms", "start": "1s"},
        {"cc": "newreno", "access_rate": "50Mbps", "access_delay": "0ms", "stop": "15s"}
    ]);
    let short = scenario(json!({
        "duration": "20s",
        "bottleneck": {"rate": "10Mbps", "delay": "20ms", "buffer": "2bdp"},
        "flows": flows,
    }));
    // The same network: one host per flow, access links (unlimited queue, ACKs back as pure
    // delay), the bottleneck to the receiver with an unlimited reverse direction.
    let access = [("100Mbps", "2ms"), ("1Gbps", "5ms"), ("50Mbps", "0ms")];
    let mut links: Vec<Value> = access.iter().enumerate().map(|(i, (r, d))| host(&format!("s{i}"), "router", r, d)).collect();
    links.push(json!({"between": ["router", "receiver"], "rate": "10Mbps", "delay": "20ms", "buffer": "2bdp",
                      "reverse": {"rate": "unlimited"}}));
    let general = scenario(json!({
        "duration": "20s",
        "links": links,
        "flows": [
            {"cc": "cubic", "src": "s0", "dst": "receiver"},
            {"cc": "bbr", "src": "s1", "dst": "receiver", "start": "1s"},
            {"cc": "newreno", "src": "s2", "dst": "receiver", "stop": "15s"}
        ],
    }));
    let a = run(&short, Some(4)).summary;
    let b = run(&general, Some(4)).summary;
    assert_eq!(a.events, b.events);
    let strip = |f: &ccsim_core::metrics::FlowSummary| {
        let mut v = serde_json::to_value(f).unwrap();
        v.as_object_mut().unwrap().remove("path");
        v
    };
    for (x, y) in a.flows.iter().zip(&b.flows) {
        assert_eq!(strip(x), strip(y));
    }
    // The bottleneck direction's statistics are the dumbbell's bottleneck statistics.
    let bn = a.bottleneck.as_ref().unwrap();
    let l = b.links.iter().find(|l| l.id == "router->receiver").unwrap();
    assert_eq!((l.drops, l.packets_in, l.queue_max_pkts), (bn.drops, bn.packets_in, bn.queue_max_pkts));
    assert_eq!(l.utilization, bn.utilization);
    assert_eq!(b.flows[1].path, ["s1", "router", "receiver"]);
}

fn reverse_traffic(with_reverse_flow: bool) -> ccsim_core::metrics::Summary {
    // a -> b is limited by its receive window (16 KiB: about 11 segments, a quarter of the
    // path's BDP), so it builds no queue of its own; b -> a is bulk CUBIC.
    let mut flows = vec![json!({"cc": "cubic", "src": "a", "dst": "b", "rwnd": "16KiB"})];
    if with_reverse_flow {
        flows.push(json!({"cc": "cubic", "src": "b", "dst": "a"}));
    }
    run(
        &scenario(json!({
            "duration": "30s",
            "links": [
                {"between": ["a", "r1"], "rate": "1Gbps", "delay": "1ms", "buffer": "1000pkt"},
                {"between": ["r1", "r2"], "rate": "10Mbps", "delay": "20ms", "buffer": "1bdp"},
                {"between": ["r2", "b"], "rate": "1Gbps", "delay": "1ms", "buffer": "1000pkt"}
            ],
            "flows": flows,
        })),
        Some(1),
    )
    .summary
}

#[test]
fn acks_queue_behind_reverse_traffic() {
    let alone = reverse_traffic(false);
    let both = reverse_traffic(true);
    let link = |s: &ccsim_core::metrics::Summary, id: &str| s.links.iter().find(|l| l.id == id).unwrap().clone();
    // Alone, a -> b's ACKs find the reverse bottleneck direction empty.
    assert!(link(&alone, "r2->r1").queue_delay_mean_ms < 0.1);
    // b -> a's data fills r2 -> r1.
    let rev = link(&both, "r2->r1");
    assert!(rev.utilization > 0.95 && rev.queue_mean_pkts > 10.0, "{rev:?}");
    // a -> b's ACKs wait in that queue: its RTT grows by the time-average backlog there (ACKs
    // arrive independently of it; a full-size packet takes 1.2 ms at 10 Mbps), plus the little
    // its own forward queue grew by (b -> a's ACKs).
    let extra_rtt = both.flows[0].rtt_mean_ms - alone.flows[0].rtt_mean_ms;
    let backlog_ms = rev.queue_mean_pkts * 1500.0 * 8.0 / 10e6 * 1e3;
    let fwd_growth = link(&both, "r1->r2").queue_delay_mean_ms - link(&alone, "r1->r2").queue_delay_mean_ms;
    let expect = backlog_ms + fwd_growth;
    assert!(extra_rtt > 20.0, "RTT grew by {extra_rtt:.2} ms");
    assert!((extra_rtt - expect).abs() < 0.15 * expect, "RTT grew by {extra_rtt:.2} ms; the queues predict {expect:.2} ms");
}

#[test]
fn packets_are_conserved_on_every_direction_and_delivered_exactly_once() {
    let sc = scenario(json!({
        "duration": "40s",
        "links": [
            {"between": ["a", "r1"], "rate": "100Mbps", "delay": "1ms", "buffer": "100pkt", "loss": 0.002},
            {"between": ["r1", "r2"], "rate": "10Mbps", "delay": "10ms", "buffer": "20pkt", "loss": 0.005,
             "reverse": {"rate": "8Mbps", "buffer": "15pkt"}},
            {"between": ["r2", "b"], "rate": "unlimited", "delay": "3ms", "loss": 0.001},
            {"between": ["c", "r2"], "rate": "unlimited", "delay": "2ms"}
        ],
        "flows": [
            {"cc": "newreno", "src": "a", "dst": "b", "size": "3MB"},
            {"cc": "cubic", "src": "b", "dst": "a", "size": "2500001B", "start": "1s"},
            {"cc": "bbr", "src": "c", "dst": "a", "size": "2MB", "start": "2s"},
            {"cc": "cubic", "src": "a", "dst": "c"}
        ]
    }));
    let mut sim = Sim::new(&sc, 7);
    let mut t = 0;
    while t < 40_000_000_000u64 {
        t += 250_000_000;
        sim.run_until(t);
        sim.check_conservation().unwrap_or_else(|e| panic!("at {t} ns: {e}"));
        for i in 0..4 {
            assert!(sim.flow_receiver(i).bytes_delivered >= sim.flow_sender(i).stats.bytes_acked);
        }
    }
    sim.run_to_end();
    let s = sim.summary(0.0);
    for (i, size) in [(0, 3_000_000u64), (1, 2_500_001), (2, 2_000_000)] {
        let f = &s.flows[i];
        assert!(f.completed, "flow {i} did not complete");
        assert_eq!(f.bytes_delivered, size, "flow {i}: every byte exactly once");
        assert_eq!(f.bytes_acked, size, "flow {i}");
        assert!(f.retransmits > 0, "flow {i} saw loss");
    }
    let losses: u64 = s.links.iter().map(|l| l.random_losses).sum();
    let drops: u64 = s.links.iter().map(|l| l.drops).sum();
    assert!(losses > 0 && drops > 0, "losses {losses}, drops {drops}");
    assert_eq!(s.flows[2].path, ["c", "r2", "r1", "a"]);
}

#[test]
fn a_parking_lot_gives_the_long_flow_less_than_each_cross_flow() {
    let s = run(&common::parking_lot("newreno", ["newreno"; 3], "60s"), Some(1)).summary;
    for f in &s.flows[1..] {
        assert!(s.flows[0].throughput_mbps < f.throughput_mbps, "long {} vs cross {}", s.flows[0].throughput_mbps, f.throughput_mbps);
    }
    assert_eq!(s.flows[0].path.len(), 6);
    for i in 0..3 {
        let l = s.links.iter().find(|l| l.id == format!("r{i}->r{}", i + 1)).unwrap();
        assert!(l.utilization > 0.95, "{}: {}", l.id, l.utilization);
    }
}
