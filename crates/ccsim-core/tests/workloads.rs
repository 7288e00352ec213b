//! `[[workloads]]` (short flows, Poisson arrivals, sizes from a CDF) and wired UDP cross
//! traffic (constant bit rate, on/off): the generator matches its CDF and load, FCTs are never
//! below their ideal, a flow alone has slowdown 1, the engine keeps only live flows, UDP
//! receives min(rate, capacity) and on/off averages its duty cycle; bad input is an error.

use ccsim_core::rng;
use ccsim_core::run;
use ccsim_core::scenario::Scenario;
use ccsim_core::sim::Sim;
use ccsim_core::workload::{builtin, ideal_fct, Cdf, IdealPath};
use serde_json::{json, Value};

mod common;
use common::scenario;

fn scenario_err(v: Value) -> String {
    Scenario::from_value(&v).unwrap_err().to_string()
}

#[test]
fn generated_sizes_match_the_cdf_mean() {
    for name in ["websearch", "hadoop"] {
        let cdf = Cdf::parse(builtin(name).unwrap()).unwrap();
        let mut r = rng::derive(7, rng::stream::WORKLOAD_BASE + 1);
        let n = 400_000;
        let mean = (0..n).map(|_| cdf.sample(&mut r) as f64).sum::<f64>() / n as f64;
        let rel = (mean / cdf.mean() - 1.0).abs();
        assert!(rel < 0.05, "{name}: generated mean {mean} vs CDF mean {} ({:.2}%)", cdf.mean(), rel * 100.0);
    }
}

#[test]
fn a_long_run_offers_the_load_it_was_given() {
    // Hadoop sizes at 40% of 100 Mbps for 200 s: about 8,300 flows.
    let sc = scenario(json!({
        "duration": "200s",
        "bottleneck": {"rate": "100Mbps", "delay": "5ms", "buffer": "2bdp"},
        "workloads": [{"cc": "cubic", "sizes": "hadoop", "load": 0.4}],
    }));
    let mut sim = Sim::with_timeseries(&sc, 3, false);
    sim.run_to_end();
    sim.check_conservation().unwrap();
    let s = sim.summary(0.0);
    let w = &s.workloads[0];
    let off = w.offered_load.unwrap();
    assert!((off / 0.4 - 1.0).abs() < 0.05, "offered load {off}");
    assert!((w.mean_size_bytes / w.cdf_mean_bytes - 1.0).abs() < 0.05, "mean size {} vs {}", w.mean_size_bytes, w.cdf_mean_bytes);
    let all = &w.buckets[0];
    assert!(all.started > 7000 && all.completed as f64 > 0.99 * all.started as f64, "{all:?}");
    // Every flow's FCT is at least its ideal.
    let mut n = 0;
    for f in s.flows.iter().filter(|f| f.workload.is_some()) {
        if let (Some(fct), Some(ideal)) = (f.fct_s, f.ideal_fct_s) {
            if fct.is_finite() {
                assert!(fct >= ideal * (1.0 - 1e-9), "flow {}: fct {fct} < ideal {ideal} (size {:?})", f.id, f.size_bytes);
                n += 1;
            }
        }
    }
    assert_eq!(n as u64, all.completed);
    // The link carried the load (utilisation near 0.4 plus headers and ACK-less data).
    let u = s.bottleneck.as_ref().unwrap().utilization;
    assert!(u > 0.38 && u < 0.5, "utilisation {u}");
}

#[test]
fn a_flow_alone_on_an_idle_link_has_slowdown_one() {
    // Rare arrivals (one per 2 s on average) of flows that last at most a few hundred ms: each
    // is alone. Immediate ACKs: with delayed ACKs a flow whose last round is odd waits for the
    // delayed-ACK timer (no quick-ACK mode is modelled).
    for (sizes, rate) in [("websearch", "1Gbps"), ("hadoop", "100Mbps")] {
        let sc = scenario(json!({
            "duration": "400s",
            "bottleneck": {"rate": rate, "delay": "10ms", "buffer": "10bdp"},
            "tcp": {"delayed_ack": false},
            "workloads": [{"cc": "cubic", "sizes": sizes, "arrivals": "0.5/s"}],
        }));
        let s = run(&sc, Some(5)).summary;
        let mut worst: f64 = 1.0;
        let mut n = 0;
        for f in s.flows.iter().filter(|f| f.workload.is_some()) {
            let sd = f.slowdown.unwrap();
            if sd.is_finite() {
                worst = worst.max((sd - 1.0).abs());
                assert!(sd >= 1.0 - 1e-9, "{sizes}: flow {} size {:?} fct {:?} ideal {:?}", f.id, f.size_bytes, f.fct_s, f.ideal_fct_s);
                n += 1;
            }
        }
        assert!(n > 150, "{n} flows");
        let b = &s.workloads[0].buckets[0];
        assert!((b.slowdown_p50 - 1.0).abs() < 0.05 && (b.slowdown_p99 - 1.0).abs() < 0.05, "{sizes}: {b:?} (worst {worst})");
    }
}

#[test]
fn memory_stays_bounded_by_the_flows_alive() {
    // 10 simulated minutes, about 100,000 short flows (167 per second, 1-20 KB): the engine
    // keeps an endpoint only while a flow is alive.
    let sc = scenario(json!({
        "duration": "600s",
        "bottleneck": {"rate": "100Mbps", "delay": "2ms", "buffer": "2bdp"},
        "workloads": [{"cc": "cubic", "sizes": {"file": "small.cdf", "cdf": "1000 0\n20000 100\n"}, "arrivals": "167/s"}],
    }));
    let mut sim = Sim::with_timeseries(&sc, 1, false);
    sim.run_to_end();
    let (alive, max) = sim.workload_flows_alive();
    let s = sim.summary(0.0);
    let w = &s.workloads[0];
    let started = w.buckets[0].started;
    assert!(started > 95_000 && started < 105_000, "{started}");
    assert!(max < 100, "high-water mark {max} flows alive (of {started})");
    assert!(alive <= max);
    assert_eq!(w.alive_max as usize, max);
    assert_eq!(w.rejected, 0);
}

#[test]
fn ideal_fct_is_never_above_a_measured_one_byte_flow() {
    let p = IdealPath { rate_bps: 10_000_000, rtt: 2e6, other_ns_per_byte: 0.0, mss: 1448, iw: 10 };
    assert!(ideal_fct(1, &p) > 2e6);
}

#[test]
fn udp_cbr_gets_min_of_its_rate_and_its_share() {
    // A 20 Mbps UDP flow (1000 B payload) on a 10 Mbps bottleneck: it receives the capacity's
    // payload share; the rest is lost, and counted. A 4 Mbps one receives all of it.
    for (rate, want_frac) in [("20Mbps", None), ("4Mbps", Some(1.0))] {
        let sc = scenario(json!({
            "duration": "20s",
            "bottleneck": {"rate": "10Mbps", "delay": "10ms", "buffer": "50pkt"},
            "flows": [{"protocol": "udp", "rate": rate, "packet_size": 1000}],
        }));
        let s = run(&sc, Some(1)).summary;
        let f = &s.flows[0];
        assert_eq!(f.cc, "udp");
        let (sent, recv, lost, infl) = (f.datagrams_sent.unwrap(), f.datagrams_received.unwrap(), f.datagrams_lost.unwrap(), f.datagrams_in_flight.unwrap());
        assert_eq!(sent, recv + lost + infl);
        let bn = s.bottleneck.as_ref().unwrap();
        assert_eq!(lost, bn.drops);
        match want_frac {
            Some(_) => {
                assert_eq!(lost, 0);
                assert!((f.throughput_mbps / 4.0 - 1.0).abs() < 0.01, "{}", f.throughput_mbps);
            }
            None => {
                // Capacity share of payload: 10 Mbps x 1000 / 1028 (IP + UDP headers).
                let cap = 10.0 * 1000.0 / 1028.0;
                assert!((f.throughput_mbps / cap - 1.0).abs() < 0.01, "{} vs {cap}", f.throughput_mbps);
                assert!(lost as f64 > 0.45 * sent as f64);
            }
        }
    }
}

#[test]
fn udp_on_off_averages_its_duty_cycle() {
    for (dist, shape) in [("exponential", None), ("pareto", Some(2.5))] {
        let mut flow = json!({"protocol": "udp", "rate": "8Mbps", "packet_size": 1000, "on_time": "200ms", "off_time": "600ms", "on_off": dist, "src": "a", "dst": "b"});
        if let Some(a) = shape {
            flow["pareto_shape"] = json!(a);
        }
        let sc = scenario(json!({
            "duration": "2000s",
            "links": [{"between": ["a", "b"], "rate": "100Mbps", "delay": "5ms", "buffer": "100pkt"}],
            "flows": [flow.clone()],
        }));
        let s = run(&sc, Some(2)).summary;
        let f = &s.flows[0];
        let mean = f.throughput_mbps;
        // 8 Mbps x 200 / (200 + 600) = 2 Mbps.
        assert!((mean / 2.0 - 1.0).abs() < 0.03, "{dist}: {mean} Mbps");
        assert_eq!(f.datagrams_lost, Some(0));
    }
}

#[test]
fn bad_workloads_and_udp_input_are_clear_errors() {
    let base = |wl: Value| json!({"duration": "10s", "bottleneck": {"rate": "10Mbps", "delay": "10ms"}, "workloads": [wl]});
    let e = scenario_err(base(json!({"cc": "cubic", "sizes": {"file": "x.cdf", "cdf": "0 0\n100 50\n"}, "load": 0.3})));
    assert!(e.contains("workloads[0].sizes") && e.contains("x.cdf") && e.contains("does not reach 100%"), "{e}");
    let e = scenario_err(base(json!({"cc": "cubic", "sizes": {"file": "y.cdf", "cdf": "0 0\n100 60\n50 100\n"}, "load": 0.3})));
    assert!(e.contains("y.cdf") && e.contains("line 3") && e.contains("not monotonic"), "{e}");
    let e = scenario_err(base(json!({"cc": "cubic", "sizes": "websearch", "load": 1.0})));
    assert!(e.contains("workloads[0].load") && e.contains("(0, 1)"), "{e}");
    let e = scenario_err(base(json!({"cc": "cubic", "sizes": "webserch", "load": 0.5})));
    assert!(e.contains("unknown built-in \"webserch\"") && e.contains("websearch") && e.contains("hadoop"), "{e}");
    let e = scenario_err(base(json!({"cc": "cubic", "sizes": "websearch", "load": 0.5, "arrivals": "10/s"})));
    assert!(e.contains("either load or arrivals"), "{e}");
    let e = scenario_err(base(json!({"cc": "cubic", "sizes": "websearch", "arrivals": "ten"})));
    assert!(e.contains("workloads[0].arrivals"), "{e}");
    let e = scenario_err(base(json!({"cc": "cubic", "sizes": "hadoop", "arrivals": "1e9/s"})));
    assert!(e.contains("at most"), "{e}");
    // [[links]]: load needs a link on the path.
    let links = json!({"duration": "10s", "links": [{"between": ["a", "r"], "rate": "1Gbps", "delay": "1ms"}, {"between": ["r", "b"], "rate": "10Mbps", "delay": "1ms"}],
                       "workloads": [{"cc": "cubic", "sizes": "hadoop", "src": "a", "dst": "b", "load": 0.5}]});
    assert!(scenario_err(links.clone()).contains("workloads[0].link"));
    let mut ok = links.clone();
    ok["workloads"][0]["link"] = json!("r->b");
    let sc = Scenario::from_value(&ok).unwrap();
    assert!((sc.workloads[0].flows_per_s - 0.5 * 10e6 / 8.0 / 120_420.75).abs() < 1e-6);
    let mut bad = links;
    bad["workloads"][0]["link"] = json!("b->r");
    assert!(scenario_err(bad).contains("not a direction of [[links]] on the workload's path"));
    // UDP on/off.
    let udp = |f: Value| json!({"duration": "10s", "bottleneck": {"rate": "10Mbps", "delay": "10ms"}, "flows": [f]});
    let e = scenario_err(udp(json!({"protocol": "udp", "rate": "1Mbps", "on_time": "1s"})));
    assert!(e.contains("flows[0].off_time") && e.contains("missing"), "{e}");
    let e = scenario_err(udp(json!({"protocol": "udp", "rate": "1Mbps", "on_time": "1s", "off_time": "1s", "on_off": "pareto", "pareto_shape": 1.0})));
    assert!(e.contains("flows[0].pareto_shape"), "{e}");
    let e = scenario_err(udp(json!({"cc": "cubic", "on_time": "1s"})));
    assert!(e.contains("only used by a UDP flow"), "{e}");
}

#[test]
fn scenarios_without_workloads_or_udp_are_unchanged_in_form() {
    // No new key appears in a TCP-only run's flows or summary.
    let sc = scenario(json!({"duration": "2s", "bottleneck": {"rate": "10Mbps", "delay": "10ms"}, "flows": [{"cc": "cubic"}]}));
    let v = serde_json::to_value(run(&sc, Some(1)).summary).unwrap();
    assert!(v.get("workloads").is_none());
    for k in ["workload", "size_bytes", "fct_s", "slowdown", "datagrams_sent"] {
        assert!(v["flows"][0].get(k).is_none(), "{k}");
    }
}
