//! End-to-end scenarios with known outcomes. Each asserts measured numbers.

use ccsim_core::sim::Sim;
use ccsim_core::{run, Scenario};
use serde_json::{json, Value};

fn scenario(v: Value) -> Scenario {
    Scenario::from_value(&v).expect("valid scenario")
}

fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

#[test]
fn newreno_alone_with_one_bdp_buffer_fills_the_link() {
    let sc = scenario(json!({
        "duration": "30s",
        "bottleneck": {"rate": "10Mbps", "delay": "20ms", "buffer": "1bdp"},
        "flows": [{"cc": "newreno"}]
    }));
    let out = run(&sc, None);
    let u = out.summary.bottleneck.as_ref().unwrap().utilization;
    assert!(u >= 0.95, "utilization {u}");
}

/// Mathis et al. 1997: BW = (MSS / RTT) sqrt(3 / (2 b p)), b = packets per ACK counted by the
/// window increase. ccsim (like Linux) counts ACKed packets, so b = 1 with or without delayed
/// ACKs; with per-ACK counting (`abc = false`) and delayed ACKs, b = 2.
fn mathis_check(delayed_ack: bool, abc: bool, b: f64) {
    for p in [0.005, 0.01, 0.02] {
        let sc = scenario(json!({
            "duration": "100s",
            "bottleneck": {"rate": "10Mbps", "delay": "20ms", "buffer": "100pkt", "loss": p},
            "tcp": {"mss": 1000, "delayed_ack": delayed_ack},
            "flows": [{"cc": "newreno", "params": {"abc": abc}}]
        }));
        let (mut thr, mut rtt) = (vec![], vec![]);
        for seed in 1..=4 {
            let s = run(&sc, Some(seed)).summary;
            thr.push(s.flows[0].throughput_mbps);
            rtt.push(s.flows[0].rtt_mean_ms / 1e3);
        }
        let model = 1000.0 * 8.0 / mean(&rtt) * (3.0 / (2.0 * b * p)).sqrt() / 1e6;
        let ratio = mean(&thr) / model;
        assert!(
            (0.7..=1.3).contains(&ratio),
            "p={p} delayed_ack={delayed_ack} abc={abc}: {} vs Mathis {model} ({ratio})",
            mean(&thr)
        );
    }
}

#[test]
fn newreno_under_random_loss_follows_mathis() {
    mathis_check(false, true, 1.0);
}

#[test]
fn newreno_with_delayed_acks_and_per_ack_growth_follows_mathis_with_b_2() {
    mathis_check(true, false, 2.0);
}

#[test]
fn bytes_are_conserved_end_to_end_and_on_every_link() {
    let sc = scenario(json!({
        "duration": "60s",
        "bottleneck": {"rate": "10Mbps", "delay": "20ms", "buffer": "20pkt", "loss": 0.01, "ack_loss": 0.01},
        "flows": [
            {"cc": "newreno", "size": "3MB"},
            {"cc": "cubic", "size": "2500001B", "start": "1s"},
            {"cc": "bbr", "size": "4MB", "start": "2s"},
            {"cc": "cubic", "access_delay": "15ms"}
        ]
    }));
    let mut sim = Sim::new(&sc, 7);
    let mut t = 0;
    while t < 60_000_000_000u64 {
        t += 250_000_000;
        sim.run_until(t);
        sim.check_conservation().unwrap_or_else(|e| panic!("at {t} ns: {e}"));
        for i in 0..4 {
            // In-order bytes at the receiver never trail what the sender saw acknowledged.
            assert!(sim.flow_receiver(i).bytes_delivered >= sim.flow_sender(i).stats.bytes_acked);
        }
    }
    sim.run_to_end();
    let s = sim.summary(0.0);
    for (i, size) in [(0, 3_000_000u64), (1, 2_500_001), (2, 4_000_000)] {
        let f = &s.flows[i];
        assert!(f.completed, "flow {i} did not complete");
        assert_eq!(f.bytes_delivered, size, "flow {i}: every byte exactly once");
        assert_eq!(f.bytes_acked, size, "flow {i}");
        assert!(f.retransmits > 0, "flow {i} saw loss");
    }
    assert!(s.bottleneck.as_ref().unwrap().random_losses > 0 && s.bottleneck.as_ref().unwrap().ack_losses > 0);
}

fn without_wall(mut v: Value) -> Value {
    v.as_object_mut().unwrap().remove("wall_seconds");
    v
}

#[test]
fn same_seed_same_result_other_seed_differs_under_loss() {
    let sc = scenario(json!({
        "duration": "20s",
        "bottleneck": {"rate": "10Mbps", "delay": "20ms", "buffer": "30pkt", "loss": 0.01},
        "flows": [{"cc": "cubic"}, {"cc": "bbr"}, {"cc": "newreno"}]
    }));
    let a = run(&sc, Some(11));
    let b = run(&sc, Some(11));
    let c = run(&sc, Some(12));
    let ja = without_wall(serde_json::from_str(&a.summary.to_json()).unwrap());
    let jb = without_wall(serde_json::from_str(&b.summary.to_json()).unwrap());
    let jc = without_wall(serde_json::from_str(&c.summary.to_json()).unwrap());
    assert_eq!(ja, jb);
    assert_eq!(a.timeseries.cwnd_pkts, b.timeseries.cwnd_pkts);
    assert_eq!(a.timeseries.bytes_acked, b.timeseries.bytes_acked);
    assert_ne!(ja["flows"], jc["flows"]);
}

#[test]
fn bbr_keeps_a_deep_buffer_nearly_empty_where_cubic_fills_it() {
    let link = json!({"rate": "10Mbps", "delay": "20ms", "buffer": "10bdp"});
    let bbr = run(&scenario(json!({"duration": "60s", "bottleneck": link, "flows": [{"cc": "bbr"}]})), None).summary;
    let b = bbr.bottleneck.as_ref().unwrap();
    assert!(b.utilization >= 0.90, "BBR utilization {}", b.utilization);
    assert!(b.queue_delay_mean_ms < 40.0, "BBR mean queueing delay {} ms >= one base RTT", b.queue_delay_mean_ms);
    let cubic = run(&scenario(json!({"duration": "60s", "bottleneck": link, "flows": [{"cc": "cubic"}]})), None).summary;
    let c = cubic.bottleneck.as_ref().unwrap();
    let buf = c.buffer_pkts.unwrap() as f64;
    assert_eq!(buf, 333.0);
    assert!(c.queue_mean_pkts >= 0.6 * buf, "CUBIC mean queue {} of {buf}", c.queue_mean_pkts);
    assert!(c.queue_max_pkts as f64 >= 0.95 * buf);
}

#[test]
fn time_series_has_one_row_per_flow_and_interval() {
    let sc = scenario(json!({
        "duration": "2s",
        "sample_interval": "50ms",
        "bottleneck": {"rate": "10Mbps", "delay": "20ms"},
        "flows": [{"cc": "bbr"}, {"cc": "cubic", "count": 2}]
    }));
    let ts = run(&sc, None).timeseries;
    assert_eq!(ts.len(), 40 * 3);
    assert_eq!(&ts.flow[..3], &[0, 1, 2]);
    assert!((ts.time_s[3] - 0.1).abs() < 1e-12);
    // BBR has RTprop and a bandwidth estimate, CUBIC does not.
    let last = ts.len() - 3;
    assert!(ts.rtprop_ms[last] >= 40.0 && ts.rtprop_ms[last] < 45.0);
    assert!(ts.btlbw_mbps[last] > 1.0);
    assert!(ts.rtprop_ms[last + 1].is_nan() && ts.pacing_rate_mbps[last + 1].is_nan());
    // Goodput integrates to the acknowledged bytes; the delivery rate never exceeds the link
    // rate by more than one sample's rounding (it counts SACKed data when it arrives).
    let total: f64 = (0..ts.len()).filter(|&i| ts.flow[i] == 1).map(|i| ts.goodput_mbps[i] * 0.05e6 / 8.0).sum();
    let acked = ts.bytes_acked[ts.len() - 2] as f64;
    assert!((total - acked).abs() < 1.0, "{total} vs {acked}");
    let sum_at = |k: usize| ts.delivery_rate_mbps[3 * k..3 * k + 3].iter().sum::<f64>();
    for k in 0..40 {
        assert!(sum_at(k) <= 10.0 * 1448.0 / 1500.0 * 1.0 + 1.2, "sample {k}: {}", sum_at(k));
    }
}

/// Cardwell et al. 2016: BBR keeps its goodput near the link rate under random loss up to
/// about 5%. With Linux's RACK loss detection ccsim's BBR does (no retransmission timeouts);
/// with RFC 6675 alone every lost retransmission waits for the RTO.
#[test]
fn bbr_with_rack_tolerates_random_loss_on_a_long_fat_link() {
    for (recovery, p) in [("rack", 0.02), ("rack", 0.05)] {
        let sc = scenario(json!({
            "duration": "30s",
            "bottleneck": {"rate": "100Mbps", "delay": "50ms", "buffer": "1bdp", "loss": p},
            "tcp": {"recovery": recovery},
            "flows": [{"cc": "bbr"}]
        }));
        let s = run(&sc, Some(1)).summary;
        let f = &s.flows[0];
        assert!(f.throughput_mbps > 0.75 * 96.5, "{recovery} at {p}: {} Mbps", f.throughput_mbps);
        assert_eq!(f.rto_count, 0, "{recovery} at {p}");
    }
}

#[test]
fn rack_conserves_bytes_under_loss() {
    let sc = scenario(json!({
        "duration": "60s",
        "bottleneck": {"rate": "10Mbps", "delay": "20ms", "buffer": "20pkt", "loss": 0.03, "ack_loss": 0.01},
        "tcp": {"recovery": "rack"},
        "flows": [{"cc": "newreno", "size": "3MB"}, {"cc": "bbr", "size": "4MB", "start": "1s"}, {"cc": "cubic"}]
    }));
    let mut sim = Sim::new(&sc, 3);
    let mut t = 0;
    while t < 60_000_000_000u64 {
        t += 500_000_000;
        sim.run_until(t);
        sim.check_conservation().unwrap_or_else(|e| panic!("at {t} ns: {e}"));
    }
    sim.run_to_end();
    let s = sim.summary(0.0);
    assert_eq!((s.flows[0].bytes_delivered, s.flows[1].bytes_delivered), (3_000_000, 4_000_000));
    assert!(s.flows[0].completed && s.flows[1].completed);
}
