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
    // fq_codel drops the head of its fattest queue for an arrival over it (a packet other than
    // the arrival), the others drop the arrival.
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
