//! TCP Prague and Copa end to end.
//!
//! - Prague through DualPI2 next to CUBIC: Prague's packets wait in the L4S queue about
//!   DualPI2's 1 ms marking step, far below the classic queue's 15 ms target, and the two
//!   rates are of the same order, as RFC 9332's coupling (k = 2) is designed for.
//! - Prague's RTT independence: below its 25 ms target RTT a flow grows and reduces as a flow
//!   at 25 ms would.
//! - Copa alone keeps about 1/delta packets queued at high utilization; next to CUBIC it
//!   switches to competitive mode and keeps a share.

use ccsim_core::metrics::Summary;
use ccsim_core::sim::Sim;
use ccsim_core::Scenario;
use serde_json::{json, Value};

fn scenario(v: Value) -> Scenario {
    Scenario::from_value(&v).unwrap_or_else(|e| panic!("valid scenario: {e}"))
}

struct Run {
    s: Summary,
    /// (time s, flow, value) of every `copa_mode` event.
    mode_events: Vec<(f64, u32, f64)>,
}

fn run(v: Value, seed: u64) -> Run {
    let sc = scenario(v);
    let mut sim = Sim::new(&sc, seed);
    sim.run_to_end();
    sim.check_conservation().unwrap();
    let ev = &sim.events;
    let mode_events =
        (0..ev.time_s.len()).filter(|&i| ev.kind[i] == "copa_mode").map(|i| (ev.time_s[i], ev.flow[i], ev.value[i])).collect();
    Run { s: sim.summary(0.0), mode_events }
}

/// Mean queueing delay of a flow's packets, ms: its mean RTT sample over its smallest.
fn qdelay_ms(s: &Summary, flow: usize) -> f64 {
    s.flows[flow].rtt_mean_ms - s.flows[flow].rtt_min_ms
}

fn tput(s: &Summary, flow: usize) -> f64 {
    s.flows[flow].throughput_mbps
}

// ---------------------------------------------------------------- Prague

/// CUBIC (classic, Not-ECT) and Prague (ECT(1)) through DualPI2 at 40 Mbps, 20 ms base RTT.
fn prague_vs_cubic(seed: u64) -> Summary {
    run(
        json!({
            "duration": "20s",
            "bottleneck": {"rate": "40Mbps", "delay": "10ms", "buffer": "2000pkt", "qdisc": "dualpi2", "ecn": true},
            "flows": [{"cc": "cubic"}, {"cc": "prague", "ecn": true}],
        }),
        seed,
    )
    .s
}

#[test]
fn debug_copa() {
    if std::env::var("COPA_DEBUG").is_err() { return; }
    run(json!({"duration": "6s", "bottleneck": {"rate": "20Mbps", "delay": "10ms", "buffer": "1000pkt"}, "flows": [{"cc": "copa", "params": {"competitive": false, "velocity": false}}]}), 1);
}

#[test]
fn probe() {
    for seed in 1..=3 {
        let s = prague_vs_cubic(seed);
        eprintln!(
            "seed {seed}: cubic {:.2} Mbps q {:.2} ms; prague {:.2} Mbps q {:.2} ms; util {:.3} marks {}",
            tput(&s, 0),
            qdelay_ms(&s, 0),
            tput(&s, 1),
            qdelay_ms(&s, 1),
            s.bottleneck.as_ref().unwrap().utilization,
            s.bottleneck.as_ref().unwrap().marks
        );
    }
    for (a, b, target) in [(5, 50, 25000), (5, 25, 25000), (5, 50, 1), (5, 25, 1)] {
        let r = run(
            json!({
                "duration": "30s",
                "bottleneck": {"rate": "40Mbps", "delay": "1ms", "buffer": "2000pkt", "qdisc": "dualpi2", "ecn": true},
                "flows": [
                    {"cc": "prague", "ecn": true, "access_delay": format!("{}us", (a * 1000 - 2000) / 2), "params": {"prague_rtt_target": target}},
                    {"cc": "prague", "ecn": true, "access_delay": format!("{}us", (b * 1000 - 2000) / 2), "params": {"prague_rtt_target": target}},
                ],
            }),
            1,
        );
        let s = &r.s;
        eprintln!(
            "rtt {a}/{b} target {target}: {:.2} / {:.2} Mbps ratio {:.2}; rtt_min {:.2} {:.2}; q {:.2} {:.2} util {:.3}",
            tput(s, 0),
            tput(s, 1),
            tput(s, 0) / tput(s, 1),
            s.flows[0].rtt_min_ms,
            s.flows[1].rtt_min_ms,
            qdelay_ms(s, 0),
            qdelay_ms(s, 1),
            s.bottleneck.as_ref().unwrap().utilization
        );
    }
    for (n, p) in [(1, json!({})), (1, json!({"competitive": false})), (1, json!({"competitive": false, "velocity": false})), (2, json!({}))] {
        let r = run(
            json!({
                "duration": "20s",
                "bottleneck": {"rate": "20Mbps", "delay": "10ms", "buffer": "1000pkt"},
                "flows": [{"cc": "copa", "count": n, "params": p}],
            }),
            1,
        );
        let b = r.s.bottleneck.as_ref().unwrap();
        eprintln!(
            "copa x{n} {p}: util {:.3} queue mean {:.2} pkts max {} qdelay {:.3} ms; tputs {:?}; events {:?}",
            b.utilization,
            b.queue_mean_pkts,
            b.queue_max_pkts,
            b.queue_delay_mean_ms,
            r.s.flows.iter().map(|f| f.throughput_mbps).collect::<Vec<_>>(),
            &r.mode_events[..r.mode_events.len().min(6)]
        );
    }
    for comp in [true, false] {
        let r = run(
            json!({
                "duration": "30s",
                "bottleneck": {"rate": "20Mbps", "delay": "10ms", "buffer": "100pkt"},
                "flows": [{"cc": "cubic"}, {"cc": "copa", "params": {"competitive": comp}}],
            }),
            1,
        );
        eprintln!(
            "copa vs cubic (competitive {comp}): cubic {:.2} copa {:.2}; events {:?}",
            tput(&r.s, 0),
            tput(&r.s, 1),
            &r.mode_events[..r.mode_events.len().min(6)]
        );
    }
}
