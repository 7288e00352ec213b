//! Packet captures and the memory estimate: the bound on a capture's records before the run
//! ([`Sim::capture_bound`]) follows the flows' routes, and holds in runs.

use ccsim_core::limits::{packets_bits, workload_flows, CAPTURE_DROP_ALLOWANCE};
use ccsim_core::sim::Sim;
use serde_json::json;

mod common;
use common::{parking_lot, scenario};

/// `n` with the drop allowance added (as the bound adds it to data packets).
fn with_allowance(n: u64) -> u64 {
    n + (n as f64 * CAPTURE_DROP_ALLOWANCE).ceil() as u64
}

/// A capture of `links` in a fresh run of `sc`: its bound, and the packets each direction
/// captured after running it.
fn captured(sc: &ccsim_core::Scenario, links: &[&str]) -> (u64, Vec<usize>) {
    let mut sim = Sim::with_timeseries(sc, 1, false);
    let ids: Vec<String> = links.iter().map(|s| s.to_string()).collect();
    sim.capture(&ids, 128).unwrap();
    let bound = sim.capture_bound();
    sim.run_to_end();
    let caps = sim.captures.as_ref().unwrap();
    (bound, (0..links.len()).map(|c| caps.len(c)).collect())
}

#[test]
fn the_bound_on_a_dumbbell_is_its_capacity_in_packets_and_the_acks_that_answer_them() {
    // 10 Mbps for 10 s carries 8,333 packets of 1,500 bytes; two TCP flows, each with a last
    // segment that may be short; ACKs: one per data segment delivered at most.
    let sc = scenario(json!({
        "duration": "10s",
        "bottleneck": {"rate": "10Mbps", "delay": "20ms", "buffer": "20pkt", "loss": 0.01},
        "flows": [{"cc": "cubic", "count": 2}],
    }));
    let carried = packets_bits(10e6 * 10.0, 1500);
    assert_eq!(carried, 8333);
    let (data, n) = captured(&sc, &["router->receiver"]);
    assert_eq!(data, with_allowance(carried) + 2);
    assert!(n[0] as u64 <= data && n[0] as u64 > carried / 2, "{n:?}");
    let (acks, n) = captured(&sc, &["receiver->router"]);
    assert_eq!(acks, carried + 2);
    assert!(n[0] as u64 <= acks, "{n:?}");
    let (both, _) = captured(&sc, &["router->receiver", "receiver->router"]);
    assert_eq!(both, data + acks);
    // A sender's access link carries its own flow's data only, at most the bottleneck's.
    let (access, n) = captured(&sc, &["sender0->router"]);
    assert_eq!(access, with_allowance(carried) + 1);
    assert!(n[0] as u64 <= access);

    // UDP: every datagram its flows send (500 pps for 4 s, and one at the start).
    let mut v = json!({
        "duration": "10s",
        "bottleneck": {"rate": "10Mbps", "delay": "20ms", "buffer": "20pkt"},
        "flows": [{"protocol": "udp", "rate": "500pps", "start": "2s", "stop": "6s"}],
    });
    let (udp, n) = captured(&scenario(v.clone()), &["router->receiver"]);
    assert_eq!(udp, 2001);
    assert_eq!(n[0], 2000);
    // With a TCP flow beside it, both parts.
    v["flows"].as_array_mut().unwrap().push(json!({"cc": "bbr"}));
    let (mixed, _) = captured(&scenario(v), &["router->receiver"]);
    assert_eq!(mixed, 2001 + with_allowance(carried) + 1);
}

#[test]
fn a_direction_is_bounded_by_its_own_capacity_and_flows_sharing_a_slowest_direction_count_once() {
    // The parking lot: r1->r2 carries the long flow (whose slowest direction is r0->r1, the
    // first of equals) and cross flow 2 (slowest r1->r2): two slowest directions, but r1->r2
    // carries no more than its own 10 Mbps.
    let sc = parking_lot("cubic", ["cubic", "cubic", "cubic"], "10s");
    let carried = packets_bits(10e6 * 10.0, 1500);
    let (b, n) = captured(&sc, &["r1->r2"]);
    assert_eq!(b, with_allowance(carried) + 2);
    assert!(n[0] as u64 <= b);
    // Its reverse carries the two flows' ACKs: bounded by both slowest directions' packets.
    let (b, n) = captured(&sc, &["r2->r1"]);
    assert_eq!(b, 2 * carried + 2);
    assert!(n[0] as u64 <= b);
}

#[test]
fn workload_flows_count_by_the_flows_they_start() {
    // Small flows at 20 a second for 8 s of a 10 s run: each flow's short last segment is
    // counted once on the data direction and once on the ACKs' (a flow of one short segment
    // is all short segment).
    let sc = scenario(json!({
        "duration": "10s",
        "bottleneck": {"rate": "10Mbps", "delay": "10ms", "buffer": "20pkt", "loss": 0.01},
        "tcp": {"delayed_ack": false},
        "workloads": [{"cc": "cubic", "sizes": {"file": "s.cdf", "cdf": "100 0\n300 100\n"}, "arrivals": "20/s", "stop": "8s"}],
    }));
    let n_flows = workload_flows(&sc.workloads[0], sc.duration);
    assert_eq!(n_flows, 160 + (4.0 * 160f64.sqrt()).ceil() as u64);
    let carried = packets_bits(10e6 * 10.0, 1500);
    let (b, n) = captured(&sc, &["router->receiver", "receiver->router"]);
    assert_eq!(b, with_allowance(carried) + carried + 2 * n_flows);
    assert!(n.iter().all(|&x| x > 100), "{n:?}");
}

#[test]
fn a_wifi_hop_is_bounded_by_the_frames_its_sender_can_send() {
    // A 2-hop line (802.11n, 65 Mbps): each hop's sender sends one frame at a time, each
    // taking at least its airtime, SIFS and its MAC ACK's. The TCP flow 0 -> 2 crosses 0->1
    // and 1->2 with its data and comes back over 2->1 and 1->0 with its ACKs.
    let sc = ccsim_core::scenario::WirelessScenario::from_value(&json!({
        "duration": "5s",
        "wireless": {"hops": 2},
        "flows": [{"cc": "cubic"}],
    }))
    .unwrap();
    let phy = &sc.config.phy;
    let frames = |ip: u32| 5 * ccsim_core::time::SEC / (phy.data_airtime(ip) + phy.sifs + phy.ack_airtime());
    let bound = |links: &[&str]| {
        let mut sim = Sim::line(&sc, 1, false);
        sim.capture(&links.iter().map(|s| s.to_string()).collect::<Vec<_>>(), 128).unwrap();
        let b = sim.capture_bound();
        sim.run_to_end();
        let caps = sim.captures.as_ref().unwrap();
        (b, (0..links.len()).map(|c| caps.len(c) as u64).sum::<u64>(), sim.wireless_output(0.0).air_hops)
    };
    let (data, n, hops) = bound(&["0->1"]);
    assert_eq!(data, with_allowance(frames(1500)) + 1);
    assert_eq!(n, hops.iter().find(|h| h.id == "0->1").unwrap().packets);
    assert!(n <= data && n > 0);
    // The ACKs: one per data segment delivered, which its data hops bound; the hop itself
    // would let more 52-byte frames through.
    let (acks, n, _) = bound(&["1->0"]);
    assert!(frames(52) > frames(1500));
    assert_eq!(acks, frames(1500) + 1);
    assert!(n <= acks && n > 0);
}
