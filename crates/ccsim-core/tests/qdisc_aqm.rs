//! The AQM disciplines of the registry (`net::qdisc::registry`) on a dumbbell's bottleneck:
//! each conserves packets through the queue-discipline slot and keeps the queueing delay far
//! below a deep drop-tail FIFO's, with the drops counted as its own.

use ccsim_core::net::qdisc::{build, check, QdiscEnv, QDISCS};
use ccsim_core::cc::Params;
use ccsim_core::sim::Sim;
use serde_json::json;

#[allow(dead_code)] // the parking lot is for other files
mod common;
use common::scenario;

#[test]
fn every_discipline_conserves_packets_and_the_aqms_bound_the_delay() {
    // Three CUBIC flows through 10 Mbps with a 400-packet buffer (about 480 ms of queue).
    let sc = scenario(json!({
        "duration": "20s",
        "bottleneck": {"rate": "10Mbps", "delay": "20ms", "buffer": "400pkt"},
        "flows": [{"cc": "cubic", "count": 3}],
    }));
    let mut delay_ms = Vec::new();
    for q in QDISCS {
        let params = Params::defaults(q.params);
        check(q.name, &params).unwrap();
        let mut sim = Sim::new(&sc, 1);
        let d = sim.network().dir_named("router->receiver").unwrap();
        sim.set_qdisc(d, build(q.name, &params, &QdiscEnv { ecn: false, mtu_bytes: 1500, rate_bps: 10_000_000, seed: 1 }));
        sim.run_until(sim.end_time() / 2);
        sim.check_conservation().unwrap_or_else(|e| panic!("{}: {e}", q.name));
        sim.run_to_end();
        sim.check_conservation().unwrap_or_else(|e| panic!("{}: {e}", q.name));
        let dir = &sim.network().dirs[d as usize];
        let slot = dir.slot.as_ref().unwrap();
        let mean = dir.qdelay_mean() / 1e6;
        eprintln!("{}: mean queueing delay {mean:.1} ms, buffer drops {}, own drops {} + {}", q.name, dir.link.stats.drops, slot.aqm_drops, slot.overflow_drops);
        assert_eq!(slot.qdisc.marks(), 0, "{}: Not-ECT traffic is never marked", q.name);
        if q.name != "fifo" {
            assert!(slot.aqm_drops > 0, "{}: the AQM dropped", q.name);
        }
        delay_ms.push((q.name, mean));
    }
    let fifo = delay_ms[0].1;
    assert!(fifo > 100.0, "the FIFO fills its deep buffer: {fifo} ms");
    for &(name, ms) in &delay_ms[1..] {
        assert!(ms < fifo / 3.0, "{name}: {ms} ms against the FIFO's {fifo} ms");
    }
}

#[test]
fn a_discipline_s_own_limit_drops_as_overflow_and_conserves_packets() {
    // The same bottleneck with each discipline's limit at 20 packets, below the buffer's 400:
    // fq_codel drops a batch from the head of its fattest queue for an arrival over it, the
    // others drop the arrival.
    let sc = scenario(json!({
        "duration": "10s",
        "bottleneck": {"rate": "10Mbps", "delay": "20ms", "buffer": "400pkt"},
        "flows": [{"cc": "cubic", "count": 3}],
    }));
    for name in ["codel", "fq_codel", "pie", "dualpi2"] {
        let info = ccsim_core::net::qdisc::find(name).unwrap();
        let mut params = Params::defaults(info.params);
        params.set("limit", 20.0);
        let mut sim = Sim::new(&sc, 2);
        let d = sim.network().dir_named("router->receiver").unwrap();
        sim.set_qdisc(d, build(name, &params, &QdiscEnv { ecn: false, mtu_bytes: 1500, rate_bps: 10_000_000, seed: 2 }));
        sim.run_until(sim.end_time() / 2);
        sim.check_conservation().unwrap_or_else(|e| panic!("{name}: {e}"));
        sim.run_to_end();
        sim.check_conservation().unwrap_or_else(|e| panic!("{name}: {e}"));
        let dir = &sim.network().dirs[d as usize];
        let slot = dir.slot.as_ref().unwrap();
        assert!(slot.overflow_drops > 0 && dir.link.stats.drops == 0, "{name}: {} overflow drops, {} buffer drops", slot.overflow_drops, dir.link.stats.drops);
        assert!(dir.link.stats.queue_max <= 20, "{name}: {} queued", dir.link.stats.queue_max);
    }
}

#[test]
fn fq_codel_over_its_limit_drops_half_the_fattest_queue_at_once() {
    // CoDel is kept out of the way (target 10 s) so that only the 100-packet limit acts, with
    // three CUBIC flows. Linux's batch (drop_batch_size 64) takes half of the fattest queue's
    // bytes per overflow, one packet per arrival takes one: measured
    // 640 overflow drops against 52 in 30 s. CUBIC halves once per window either way, so the
    // mean queue (90 packets) and the utilization hardly differ.
    let run = |batch: u32| {
        let sc = scenario(json!({
            "duration": "30s",
            "bottleneck": {"rate": "10Mbps", "delay": "20ms", "buffer": "1000pkt", "qdisc": "fq_codel",
                           "qdisc_params": {"limit": 100, "target": "10s", "interval": "100s", "drop_batch_size": batch}},
            "flows": [{"cc": "cubic", "count": 3}],
        }));
        let mut sim = Sim::new(&sc, 1);
        sim.run_to_end();
        sim.check_conservation().unwrap();
        let d = sim.network().dir_named("router->receiver").unwrap();
        let dir = &sim.network().dirs[d as usize];
        let b = sim.summary(0.0).bottleneck.unwrap();
        (dir.slot.as_ref().unwrap().overflow_drops, dir.link.stats.queue_max, b.queue_mean_pkts, b.utilization)
    };
    let (drops64, max64, mean64, util64) = run(64);
    let (drops1, max1, mean1, _) = run(1);
    eprintln!("batch 64: {drops64} drops, queue mean {mean64:.1} max {max64}; batch 1: {drops1} drops, mean {mean1:.1} max {max1}");
    assert!(max64 <= 100 && max1 <= 100);
    assert!(drops64 > 0 && drops1 > 0);
    assert!(drops64 > 5 * drops1, "{drops64} vs {drops1}");
    assert!((mean64 - mean1).abs() < 5.0, "{mean64} vs {mean1}");
    assert!(util64 > 0.95, "{util64}");
}

/// A 10 Mbps, 20 ms dumbbell with a 1,000-packet buffer under `qdisc` (set through the
/// scenario's `qdisc` key, as a user does), run for 30 s with seed 1.
fn run_with(qdisc: &str, flows: serde_json::Value) -> ccsim_core::metrics::Summary {
    let sc = scenario(json!({
        "duration": "30s",
        "bottleneck": {"rate": "10Mbps", "delay": "20ms", "buffer": "1000pkt", "qdisc": qdisc},
        "flows": flows,
    }));
    let mut sim = Sim::new(&sc, 1);
    sim.run_to_end();
    sim.check_conservation().unwrap();
    sim.summary(0.0)
}

#[test]
fn bufferbloat_a_deep_fifo_queues_for_hundreds_of_ms_codel_and_fq_codel_for_a_few() {
    // Two CUBIC flows: the FIFO keeps its 1,000 packets (1.2 s at 10 Mbps) nearly full.
    let fifo = run_with("fifo", json!([{"cc": "cubic", "count": 2}]));
    let b = fifo.bottleneck.as_ref().unwrap();
    assert!(b.queue_delay_mean_ms > 300.0, "FIFO: {} ms", b.queue_delay_mean_ms);
    assert_eq!(b.qdisc, "fifo");
    for q in ["codel", "fq_codel"] {
        let s = run_with(q, json!([{"cc": "cubic", "count": 2}]));
        let b = s.bottleneck.as_ref().unwrap();
        assert_eq!(b.qdisc, q);
        // The bounds: mean sojourn under 15 ms at 90 % utilization or more.
        assert!(b.queue_delay_mean_ms < 15.0, "{q}: mean sojourn {} ms", b.queue_delay_mean_ms);
        assert!(b.utilization >= 0.90, "{q}: utilization {}", b.utilization);
        assert!(b.aqm_drops > 0 && b.drops == 0, "{q}: {} AQM drops, {} overflows", b.aqm_drops, b.drops);
    }
}

#[test]
fn fq_codel_shares_the_link_equally_between_bbr_and_cubic_where_a_fifo_does_not() {
    let flows = json!([{"cc": "bbr"}, {"cc": "cubic"}]);
    let fifo = run_with("fifo", flows.clone());
    let fq = run_with("fq_codel", flows);
    // In the deep FIFO CUBIC fills the queue and BBR gets about a tenth of the link.
    assert!(fifo.jain_index < 0.8, "FIFO: Jain {} ({:?})", fifo.jain_index, fifo.flows.iter().map(|f| f.throughput_mbps).collect::<Vec<_>>());
    assert!(fq.jain_index >= 0.95, "fq_codel: Jain {} ({:?})", fq.jain_index, fq.flows.iter().map(|f| f.throughput_mbps).collect::<Vec<_>>());
    assert!(fq.bottleneck.as_ref().unwrap().utilization >= 0.95);
}

#[test]
fn a_short_transfer_through_fq_codel_sees_almost_no_queue_while_bulk_flows_fill_the_link() {
    // Ten segments (one initial window) at 20 s, while two CUBIC flows saturate the link.
    let flows = json!([{"cc": "cubic", "count": 2}, {"cc": "cubic", "start": "20s", "size": "14480B"}]);
    let base_rtt_ms = 40.0;
    let fifo = run_with("fifo", flows.clone());
    let fq = run_with("fq_codel", flows);
    let (f_fifo, f_fq) = (&fifo.flows[2], &fq.flows[2]);
    // Through the FIFO every segment waits behind the full queue (about a second).
    assert!(f_fifo.rtt_mean_ms > base_rtt_ms + 500.0, "FIFO: {} ms", f_fifo.rtt_mean_ms);
    // Through fq_codel its queue is new and served first: its RTT is the base RTT plus the
    // serialisation of its own initial window (10 x 1.2 ms) at most.
    assert!(f_fq.rtt_min_ms < base_rtt_ms + 5.0, "fq_codel: min {} ms", f_fq.rtt_min_ms);
    assert!(f_fq.rtt_mean_ms < base_rtt_ms + 25.0, "fq_codel: mean {} ms", f_fq.rtt_mean_ms);
    let done = |s: &ccsim_core::metrics::Summary| s.flows[2].end_s - s.flows[2].start_s;
    assert!(done(&fq) < 0.1 && done(&fifo) > 0.9, "completion: fq_codel {} s, FIFO {} s", done(&fq), done(&fifo));
    for s in [&fifo, &fq] {
        assert!(s.bottleneck.as_ref().unwrap().utilization >= 0.95);
    }
}

#[test]
fn red_keeps_aging_its_average_while_the_link_idles_after_dropped_arrivals() {
    // Four NewReno flows start within 0.5 s: slow start fills the queue far past max_th before
    // RED's slow average (w_q = 2^-9) follows, so RED drops everything for a while and every
    // flow times out. The link is then idle, and RED must age its average over the idle time
    // (Linux red_start_of_idle_period in the dequeue that follows every enqueue, dropped or
    // not). When a dropped arrival ended the idle period instead, the average stayed above
    // max_th and the flows never recovered (utilization 0.02: found against ns-3's 0.96).
    let sc = scenario(json!({
        "duration": "20s",
        "bottleneck": {"rate": "10Mbps", "delay": "1ms", "buffer": "1000pkt", "qdisc": "red",
                       "qdisc_params": {"min_th": 17, "max_th": 51, "max_p": 0.1, "weight": 0.001953125, "gentle": false}},
        "flows": [{"cc": "newreno", "start": "402137us"}, {"cc": "newreno", "start": "629804us"},
                  {"cc": "newreno", "start": "181592us"}, {"cc": "newreno", "start": "502610us"}],
    }));
    let mut sim = Sim::new(&sc, 3);
    sim.run_to_end();
    sim.check_conservation().unwrap();
    let s = sim.summary(0.0);
    let b = s.bottleneck.as_ref().unwrap();
    assert!(b.utilization > 0.9, "utilization {}", b.utilization);
    assert!(s.flows.iter().all(|f| f.throughput_mbps > 1.0), "{:?}", s.flows.iter().map(|f| f.throughput_mbps).collect::<Vec<_>>());
}
