//! A Dummynet-like bottleneck (`bottleneck.tick`, issue 17): the pipe still delivers its rate,
//! and packets leave its far end only at tick boundaries, in bursts when the rate carries more
//! than one packet a tick.

use ccsim_core::run;
use ccsim_core::sim::Sim;
use serde_json::{json, Value};

mod common;
use common::scenario;

const MS: u64 = 1_000_000;

fn dumbbell(rate: &str, tick: Option<&str>, ccs: &[&str]) -> Value {
    let flows: Vec<Value> = ccs.iter().map(|c| json!({"cc": c})).collect();
    let mut v = json!({"duration": "10s", "bottleneck": {"rate": rate, "delay": "20ms", "buffer": "2bdp"}, "flows": flows});
    if let Some(t) = tick {
        v["bottleneck"]["tick"] = json!(t);
    }
    v
}

#[test]
fn a_dummynet_pipe_delivers_its_rate_like_the_exact_link() {
    for rate in ["10Mbps", "100Mbps"] {
        for cc in ["cubic", "bbr"] {
            let t = run(&scenario(dumbbell(rate, Some("1ms"), &[cc])), Some(1)).summary;
            let x = run(&scenario(dumbbell(rate, None, &[cc])), Some(1)).summary;
            let (ut, ux) = (t.bottleneck.as_ref().unwrap().utilization, x.bottleneck.as_ref().unwrap().utilization);
            eprintln!("{rate} {cc}: tick {} Mbps util {ut:.4}; exact {} Mbps util {ux:.4}", t.flows[0].throughput_mbps, x.flows[0].throughput_mbps);
            assert!(ut > 0.9 && (ut - ux).abs() < 0.03, "{rate} {cc}: {ut} vs {ux}");
            let r: f64 = rate.trim_end_matches("Mbps").parse().unwrap();
            assert!(t.flows[0].throughput_mbps > 0.85 * r && t.flows[0].throughput_mbps < r, "{}", t.flows[0].throughput_mbps);
        }
    }
}

#[test]
fn packets_leave_a_dummynet_pipe_at_tick_boundaries_in_bursts() {
    // 100 Mbps: 8.3 packets of 1500 B a tick.
    let sc = scenario(dumbbell("100Mbps", Some("1ms"), &["cubic"]));
    let mut sim = Sim::new(&sc, 1);
    let bn = sim.network().dir_named("router->receiver").unwrap() as usize;
    let mut bursts = Vec::new();
    for k in 1..5_000u64 {
        sim.run_until(k * MS);
        let at_tick = sim.network().dirs[bn].link.stats.packets_out;
        sim.run_until(k * MS + MS - 1);
        // Nothing leaves between ticks.
        assert_eq!(sim.network().dirs[bn].link.stats.packets_out, at_tick, "a packet left within tick {k}");
        bursts.push(at_tick);
    }
    sim.finish();
    let per_tick: Vec<u64> = bursts.windows(2).map(|w| w[1] - w[0]).collect();
    let most = *per_tick.iter().max().unwrap();
    let busy: Vec<u64> = per_tick[1000..].to_vec();
    let mean = busy.iter().sum::<u64>() as f64 / busy.len() as f64;
    eprintln!("most {most} a tick, mean {mean:.2} after 1 s");
    assert!(most >= 8, "{most}");
    assert!(mean > 7.5 && mean <= 8.34, "{mean}");
    // The exact link spreads them: some leave between ticks.
    let sc = scenario(dumbbell("100Mbps", None, &["cubic"]));
    let mut sim = Sim::new(&sc, 1);
    let mut within = 0;
    for k in 1..1_000u64 {
        sim.run_until(k * MS);
        let a = sim.network().dirs[bn].link.stats.packets_out;
        sim.run_until(k * MS + MS - 1);
        within += sim.network().dirs[bn].link.stats.packets_out - a;
    }
    assert!(within > 1000, "{within}");
}

#[test]
fn with_tick_acks_the_acks_leave_their_pipe_at_ticks_too() {
    let mut v = dumbbell("10Mbps", Some("1ms"), &["cubic"]);
    v["bottleneck"]["tick_acks"] = json!(true);
    let sc = scenario(v.clone());
    let mut sim = Sim::new(&sc, 1);
    let rev = sim.network().dir_named("receiver->router").unwrap() as usize;
    for k in 1..3_000u64 {
        sim.run_until(k * MS);
        let at_tick = sim.network().dirs[rev].link.stats.packets_out;
        sim.run_until(k * MS + MS - 1);
        assert_eq!(sim.network().dirs[rev].link.stats.packets_out, at_tick, "an ACK left within tick {k}");
    }
    sim.finish();
    // 3 s of delayed ACKs (one per two 1.2 ms packets): about 1,250.
    assert!(sim.network().dirs[rev].link.stats.packets_out > 1_000, "{}", sim.network().dirs[rev].link.stats.packets_out);
    let s = run(&scenario(v), Some(1)).summary;
    assert!(s.flows[0].throughput_mbps > 9.0, "{}", s.flows[0].throughput_mbps);
    // The minimum RTT: 20 ticks each way, plus the data's ceil(1.2 ticks) at least.
    assert!(s.flows[0].rtt_min_ms >= 42.0 - 1e-9, "{}", s.flows[0].rtt_min_ms);
}

#[test]
fn a_ticked_dumbbell_in_the_general_form_gives_the_same_results() {
    // [bottleneck] tick + tick_acks is [[links]] with tick on the bottleneck link (its
    // reverse, rateless, inherits it), with access links that are not ticked.
    let flows = json!([{"cc": "cubic", "access_delay": "2ms"}, {"cc": "bbr", "access_delay": "5ms", "start": "1s"}]);
    let short = scenario(json!({
        "duration": "10s",
        "bottleneck": {"rate": "10Mbps", "delay": "20ms", "buffer": "2bdp", "tick": "1ms", "tick_acks": true},
        "flows": flows,
    }));
    let host = |name: &str, delay: &str| {
        json!({"between": [name, "router"], "rate": "1Gbps", "delay": delay, "buffer": "unlimited", "reverse": {"rate": "unlimited"}})
    };
    let general = scenario(json!({
        "duration": "10s",
        "links": [host("s0", "2ms"), host("s1", "5ms"),
                  {"between": ["router", "receiver"], "rate": "10Mbps", "delay": "20ms", "buffer": "2bdp", "tick": "1ms",
                   "reverse": {"rate": "unlimited"}}],
        "flows": [{"cc": "cubic", "src": "s0", "dst": "receiver"}, {"cc": "bbr", "src": "s1", "dst": "receiver", "start": "1s"}],
    }));
    let a = run(&short, Some(2)).summary;
    let b = run(&general, Some(2)).summary;
    assert_eq!(a.events, b.events);
    for (x, y) in a.flows.iter().zip(&b.flows) {
        assert_eq!((x.throughput_mbps, x.retransmits, x.rtt_min_ms), (y.throughput_mbps, y.retransmits, y.rtt_min_ms));
    }
    // Not the exact link's.
    let plain = scenario(json!({"duration": "10s", "bottleneck": {"rate": "10Mbps", "delay": "20ms", "buffer": "2bdp"}, "flows": flows}));
    assert_ne!(run(&plain, Some(2)).summary.flows[0].throughput_mbps, a.flows[0].throughput_mbps);
}
