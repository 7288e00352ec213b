//! The queue-discipline slot (`net/qdisc`): a FIFO served through the slot (an event at every
//! end of serialisation, the packet chosen at dequeue time) gives the fast path's results
//! (which decides each packet's service when it is offered), on a dumbbell, a parking lot and
//! reverse traffic; packets are conserved on slotted links; a discipline that serves out of
//! arrival order (per-flow round robin) changes the outcome as it should: it shares a
//! bottleneck equally between flows whose RTTs differ tenfold, where the FIFO does not.

use ccsim_core::metrics::Summary;
use ccsim_core::net::qdisc::{Fifo, Qdisc, RoundRobin};
use ccsim_core::sim::Sim;
use ccsim_core::Scenario;
use serde_json::{json, Value};

mod common;
use common::scenario;

/// Three 10 Mbps bottlenecks in a chain, one long flow across all, a cross flow on each.
fn parking_lot() -> Scenario {
    common::parking_lot("cubic", ["newreno", "bbr", "newreno"], "30s")
}

/// Bulk data both ways over one 10 Mbps bottleneck (examples/reverse_traffic.toml).
fn reverse_traffic() -> Scenario {
    scenario(json!({
        "duration": "30s",
        "links": [
            {"between": ["a", "r1"], "rate": "1Gbps", "delay": "1ms", "buffer": "1000pkt"},
            {"between": ["r1", "r2"], "rate": "10Mbps", "delay": "20ms", "buffer": "1bdp"},
            {"between": ["r2", "b"], "rate": "1Gbps", "delay": "1ms", "buffer": "1000pkt"},
        ],
        "flows": [{"cc": "cubic", "src": "a", "dst": "b"}, {"cc": "cubic", "src": "b", "dst": "a", "start": "5s"}],
    }))
}

/// Run `sc` with `seed`, every direction named in `slotted` served by the discipline `make`
/// builds; checks conservation halfway and at the end.
fn run(sc: &Scenario, seed: u64, slotted: &[&str], make: fn() -> Box<dyn Qdisc>) -> Summary {
    let mut sim = Sim::new(sc, seed);
    for id in slotted {
        let d = sim.network().dir_named(id).unwrap_or_else(|| panic!("no direction {id}"));
        sim.set_qdisc(d, make());
    }
    sim.run_until(sim.end_time() / 2);
    sim.check_conservation().unwrap();
    sim.run_to_end();
    sim.check_conservation().unwrap();
    sim.summary(0.0)
}

fn fifo() -> Box<dyn Qdisc> {
    Box::new(Fifo::default())
}

/// Everything but the event count (the slot adds an event per serialisation) and wall time.
fn results(s: &Summary) -> Value {
    let mut v = serde_json::to_value(s).unwrap();
    let o = v.as_object_mut().unwrap();
    o.remove("events");
    o.remove("wall_seconds");
    // The slot's discipline is named "custom" (set directly, not through the registry).
    for l in o["links"].as_array_mut().unwrap() {
        l.as_object_mut().unwrap().remove("qdisc");
    }
    if let Some(b) = o.get_mut("bottleneck").and_then(|b| b.as_object_mut()) {
        b.remove("qdisc");
    }
    v
}

fn assert_same_as_fast_path(sc: &Scenario, seed: u64, slotted: &[&str]) {
    let fast = run(sc, seed, &[], fifo);
    let slot = run(sc, seed, slotted, fifo);
    assert!(slot.events > fast.events, "the slot serialises with events");
    assert_eq!(results(&fast), results(&slot));
}

#[test]
fn a_fifo_in_the_slot_gives_the_fast_paths_results_on_a_dumbbell() {
    let sc = scenario(json!({
        "duration": "30s",
        "bottleneck": {"rate": "10Mbps", "delay": "20ms", "buffer": "1bdp", "loss": 0.001},
        "flows": [{"cc": "cubic", "count": 2}, {"cc": "bbr", "start": "5s"}, {"cc": "newreno", "access_rate": "20Mbps", "stop": "25s"}],
    }));
    for seed in [1, 2] {
        // The bottleneck alone, then every direction with a queue.
        assert_same_as_fast_path(&sc, seed, &["router->receiver"]);
        assert_same_as_fast_path(&sc, seed, &["router->receiver", "sender0->router", "sender1->router", "sender2->router", "sender3->router"]);
    }
    // A byte-limited buffer.
    let sc = scenario(json!({
        "duration": "20s",
        "bottleneck": {"rate": "20Mbps", "delay": "10ms", "buffer": "30KB"},
        "flows": [{"cc": "cubic", "count": 3}],
    }));
    assert_same_as_fast_path(&sc, 3, &["router->receiver"]);
}

#[test]
fn a_fifo_in_the_slot_gives_the_fast_paths_results_on_a_parking_lot_and_reverse_traffic() {
    let pl = parking_lot();
    let slotted = ["r0->r1", "r1->r2", "r2->r3", "r1->r0", "r2->r1", "r3->r2"];
    assert_same_as_fast_path(&pl, 1, &slotted);
    let rt = reverse_traffic();
    assert_same_as_fast_path(&rt, 1, &["r1->r2", "r2->r1", "a->r1", "b->r2"]);
}

#[test]
fn round_robin_shares_a_bottleneck_between_flows_of_different_rtts() {
    // Two CUBIC flows, base RTTs 10 ms and 100 ms, through a 20 Mbps bottleneck with a deep
    // buffer. FIFO gives the short-RTT flow far more; per-flow round robin serves them in turn,
    // so each gets about half while both have packets queued.
    let sc = scenario(json!({
        "duration": "60s",
        "bottleneck": {"rate": "20Mbps", "delay": "4ms", "buffer": "400pkt"},
        "flows": [{"cc": "cubic", "access_delay": "1ms"}, {"cc": "cubic", "access_delay": "46ms"}],
    }));
    let thr = |s: &Summary| (s.flows[0].throughput_mbps, s.flows[1].throughput_mbps);
    let fifo_run = run(&sc, 1, &["router->receiver"], fifo);
    let rr = run(&sc, 1, &["router->receiver"], || Box::new(RoundRobin::default()));
    let (f0, f1) = thr(&fifo_run);
    let (r0, r1) = thr(&rr);
    eprintln!("FIFO {f0:.3} / {f1:.3} (Jain {:.4}), RR {r0:.3} / {r1:.3} (Jain {:.4})", fifo_run.jain_index, rr.jain_index);
    assert!(f0 > 1.5 * f1, "FIFO favours the short RTT: {f0} vs {f1}");
    assert!(rr.jain_index > 0.99 && fifo_run.jain_index < 0.95, "RR {} vs FIFO {}", rr.jain_index, fifo_run.jain_index);
    assert!((r0 + r1) > 0.95 * 20.0 && (r0 / r1 - 1.0).abs() < 0.1, "RR {r0} / {r1}");
}
