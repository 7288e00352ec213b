//! Trace-driven and time-varying links (issue 16): a trace of one opportunity per millisecond
//! is a 12 Mbps link; a shipped LTE trace caps what is delivered; a rate schedule is followed,
//! an outage delivers nothing and the flow recovers; schedules of delay and loss.

use ccsim_core::run;
use ccsim_core::sim::Sim;
use serde_json::{json, Value};

mod common;
use common::scenario;

fn traces() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/traces")
}

fn write_trace(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("ccsim-links-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

fn dumbbell(rate: Value, buffer: &str, ccs: &[&str], duration: &str) -> Value {
    let flows: Vec<Value> = ccs.iter().map(|c| json!({"cc": c})).collect();
    json!({"duration": duration, "bottleneck": {"rate": rate, "delay": "20ms", "buffer": buffer}, "flows": flows})
}

#[test]
fn a_one_ms_trace_is_a_12_mbps_link() {
    let one = write_trace("one.trace", "1\n");
    for cc in ["cubic", "bbr", "newreno"] {
        let t = run(&scenario(dumbbell(json!({"trace": one}), "100pkt", &[cc], "30s")), Some(1)).summary;
        let c = run(&scenario(dumbbell(json!("12Mbps"), "100pkt", &[cc], "30s")), Some(1)).summary;
        let (bt, bc) = (t.bottleneck.unwrap(), c.bottleneck.unwrap());
        assert!((bt.capacity_mbps - 12.0).abs() < 0.01, "{}", bt.capacity_mbps);
        assert_eq!(bt.rate_mbps, 12.0);
        let (x, y) = (t.flows[0].throughput_mbps, c.flows[0].throughput_mbps);
        assert!((x - y).abs() / y < 0.01, "{cc}: trace {x} vs 12 Mbps {y}");
        assert!((bt.utilization - bc.utilization).abs() < 0.01, "{cc}: {} vs {}", bt.utilization, bc.utilization);
    }
}

/// The times data packets of `sc`'s bottleneck finish serialising, from a run with a capture.
#[test]
fn an_lte_trace_never_delivers_more_than_its_capacity_in_any_100ms() {
    let trace = traces().join("Verizon-LTE-short.down");
    let tr = ccsim_core::net::shape::Trace::parse(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    let sc = scenario(dumbbell(json!({"trace": trace}), "200pkt", &["cubic", "bbr"], "20s"));
    let mut sim = Sim::new(&sc, 1);
    // Bytes out of the bottleneck's wire (delay is constant) per 1 ms, via its arrivals.
    let bn = sim.network().dir_named("router->receiver").unwrap();
    let mut out: Vec<(u64, u64)> = Vec::new();
    let mut last = 0;
    let step = 1_000_000;
    let mut t = 0;
    while t < 20_000_000_000 {
        t += step;
        sim.run_until(t);
        let d = &sim.network().dirs[bn as usize];
        let n = d.link.stats.packets_out;
        out.push((t, n - last));
        last = n;
    }
    sim.finish();
    // Packets out in each 100 ms window <= opportunities in it (shifted by the 20 ms delay);
    // each data packet is 1500 bytes, so one opportunity each.
    let delay = 20_000_000;
    for w in out.windows(100) {
        let (t0, t1) = (w[0].0 - step, w[99].0);
        let pkts: u64 = w.iter().map(|x| x.1).sum();
        let cap = tr.first_after(t1.saturating_sub(delay)) - tr.first_after(t0.saturating_sub(delay));
        assert!(pkts <= cap + 1, "{pkts} packets out in ({t0}, {t1}] but {cap} opportunities");
    }
}

#[test]
fn a_deep_buffered_cubic_flow_uses_most_of_an_lte_trace() {
    let trace = traces().join("TMobile-LTE-short.down");
    let s = run(&scenario(dumbbell(json!({"trace": trace}), "1000pkt", &["cubic"], "60s")), Some(1)).summary;
    let b = s.bottleneck.unwrap();
    let use_ = s.flows[0].throughput_mbps / b.capacity_mbps;
    eprintln!("cubic {} Mbps of {} Mbps ({use_:.3}); utilization {}", s.flows[0].throughput_mbps, b.capacity_mbps, b.utilization);
    assert!(use_ >= 0.8, "{use_}");
    assert!(b.utilization >= 0.8);
}

/// Payload bytes delivered in order to the receiver between samples, in Mbps, per second.
fn per_second(sc: &Value) -> Vec<f64> {
    let sc = scenario(sc.clone());
    let mut sim = Sim::new(&sc, 1);
    let mut v = Vec::new();
    let mut last = 0u64;
    for s in 1..=sc.duration / 1_000_000_000 {
        sim.run_until(s * 1_000_000_000);
        let n = sim.flow_receiver(0).bytes_delivered;
        v.push((n - last) as f64 * 8.0 / 1e6);
        last = n;
    }
    v
}

#[test]
fn a_rate_schedule_is_followed_and_an_outage_delivers_nothing() {
    let rate = json!({"schedule": [["0s", "10Mbps"], ["20s", "2Mbps"], ["40s", "0bps"], ["45s", "10Mbps"]]});
    let sc = dumbbell(rate, "100pkt", &["cubic"], "60s");
    let thr = per_second(&sc);
    let mean = |a: usize, b: usize| thr[a..b].iter().sum::<f64>() / (b - a) as f64;
    eprintln!("{thr:?}");
    assert!(mean(5, 20) > 9.0 && mean(5, 20) <= 10.0, "{}", mean(5, 20));
    assert!(mean(23, 40) > 1.7 && mean(23, 40) <= 2.0, "{}", mean(23, 40));
    // Nothing during the outage (after what was on the wire: 20 ms).
    assert!(thr[41..45].iter().all(|&x| x == 0.0), "{:?}", &thr[40..46]);
    // It recovers after the outage (RTO with backoff: within a few seconds).
    assert!(mean(52, 60) > 8.0, "{}", mean(52, 60));
    let s = run(&scenario(sc), Some(1)).summary;
    assert!(s.flows[0].rto_count >= 1);
    let cap = s.bottleneck.unwrap().capacity_mbps;
    // (20 x 10 + 20 x 2 + 15 x 10) / 60.
    assert!((cap - 390.0 / 60.0).abs() < 1e-9, "{cap}");
}

#[test]
fn a_delay_schedule_keeps_order_unless_reorder() {
    // The data direction's delay drops from 100 ms to 10 ms at 10 s (the dumbbell's ACK
    // direction keeps the first step's). A flow limited by its 64 KB window loses nothing:
    // without reorder the packets on the wire keep their order and nothing is retransmitted;
    // with reorder the later packets overtake, and the receiver's SACKs make the sender
    // retransmit.
    let mut sc = dumbbell(json!("10Mbps"), "100pkt", &["cubic"], "20s");
    sc["tcp"] = json!({"rwnd": "64KB"});
    sc["bottleneck"]["delay"] = json!({"schedule": [["0s", "100ms"], ["10s", "10ms"]]});
    let s = run(&scenario(sc.clone()), Some(1)).summary;
    assert_eq!(s.bottleneck.as_ref().unwrap().drops, 0);
    assert_eq!(s.flows[0].retransmits, 0);
    let rtt_min = s.flows[0].rtt_min_ms;
    assert!((110.0..130.0).contains(&rtt_min), "{rtt_min}");
    sc["bottleneck"]["reorder"] = json!(true);
    let sc = scenario(sc);
    let mut sim = Sim::new(&sc, 1);
    sim.run_to_end();
    sim.check_conservation().unwrap();
    assert!(sim.flow_receiver(0).bytes_delivered > 0);
}

#[test]
fn a_loss_schedule_loses_only_in_its_lossy_step() {
    let mut sc = dumbbell(json!("10Mbps"), "100pkt", &["cubic"], "20s");
    sc["bottleneck"]["loss"] = json!({"schedule": [["0s", 0.0], ["10s", 0.05], ["12s", 0.0]]});
    let sc = scenario(sc);
    let mut sim = Sim::new(&sc, 1);
    sim.run_until(9_900_000_000);
    let bn = sim.network().dir_named("router->receiver").unwrap();
    assert_eq!(sim.network().dirs[bn as usize].link.stats.random_losses, 0);
    sim.run_until(12_100_000_000);
    let lost = sim.network().dirs[bn as usize].link.stats.random_losses;
    assert!(lost > 20, "{lost}");
    sim.run_until(20_000_000_000);
    assert_eq!(sim.network().dirs[bn as usize].link.stats.random_losses, lost);
    sim.finish();
    sim.check_conservation().unwrap();
}

#[test]
fn traces_and_schedules_on_links_directions() {
    let trace = traces().join("ATT-LTE-driving-2016.up");
    let sc = scenario(json!({
        "duration": "10s",
        "links": [
            {"between": ["a", "r"], "rate": "100Mbps", "delay": "1ms", "buffer": "unlimited"},
            {"between": ["r", "b"], "rate": {"trace": traces().join("ATT-LTE-driving-2016.down")}, "delay": "20ms", "buffer": "200pkt",
             "reverse": {"rate": {"trace": trace}}},
        ],
        "flows": [{"cc": "cubic", "src": "a", "dst": "b"}, {"cc": "bbr", "src": "b", "dst": "a"}]
    }));
    let s = run(&sc, Some(1)).summary;
    let rb = s.links.iter().find(|l| l.id == "r->b").unwrap();
    let br = s.links.iter().find(|l| l.id == "b->r").unwrap();
    assert!(rb.capacity_mbps.unwrap() > 0.0 && br.capacity_mbps.unwrap() > 0.0);
    assert!(s.flows[0].throughput_mbps <= rb.capacity_mbps.unwrap());
    assert!(s.flows[1].throughput_mbps <= br.capacity_mbps.unwrap());
    let a = s.links.iter().find(|l| l.id == "a->r").unwrap();
    assert_eq!(a.capacity_mbps, Some(100.0));
}

#[test]
fn bad_traces_and_schedules_are_clear_errors() {
    let reject = |rate: Value| ccsim_core::Scenario::from_value(&dumbbell(rate, "100pkt", &["cubic"], "10s")).unwrap_err().to_string();
    let m = reject(json!({"trace": "/nonexistent/x.down"}));
    assert!(m.starts_with("bottleneck.rate.trace: cannot read the trace file \"/nonexistent/x.down\""), "{m}");
    let m = reject(json!({"trace": write_trace("empty.trace", "")}));
    assert!(m.starts_with("bottleneck.rate.trace: the trace file") && m.contains("empty"), "{m}");
    let m = reject(json!({"trace": write_trace("back.trace", "1\n5\n3\n")}));
    assert!(m.contains("line 3: 3 is before the previous line's 5"), "{m}");
    let m = reject(json!({"schedule": [["0s", "10Mbps"], ["20s", "2Mbps"], ["10s", "5Mbps"]]}));
    assert!(m.starts_with("bottleneck.rate.schedule[2][0]: \"10s\" is not after the previous step's time (out of order)"), "{m}");
    let m = reject(json!({"schedule": [["0s", "10Mbs"]]}));
    assert!(m.starts_with("bottleneck.rate.schedule[0][1]: malformed rate \"10Mbs\""), "{m}");
    let m = reject(json!({"schedule": [["1s", "10Mbps"]]}));
    assert!(m.starts_with("bottleneck.rate.schedule[0][0]: the first step starts at \"1s\""), "{m}");
    let m = reject(json!({"schedule": [["0s", "0bps"]]}));
    assert!(m.contains("every step is an outage"), "{m}");
    let m = reject(json!({"trace": "x", "schedule": []}));
    assert!(m.starts_with("bottleneck.rate: expected one of trace or schedule"), "{m}");
    let m = reject(json!({"tracee": "x"}));
    assert!(m.starts_with("bottleneck.rate.tracee: unknown key"), "{m}");
}
