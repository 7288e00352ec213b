//! BBRv3 (`bbr3`) end to end: alone on a deep buffer, under random loss, against CUBIC, and
//! with ECN marking (CoDel, a DCTCP step marker) at a small RTT. Each threshold is stated with
//! its reason; the runs are short (seconds to tens of simulated seconds at 10-100 Mbps) so the
//! file stays well under a minute.

use ccsim_core::output::metrics::Summary;
use ccsim_core::run;
use serde_json::{json, Value};

#[allow(dead_code)]
mod common;
use common::scenario;

fn summary(v: Value, seed: u64) -> Summary {
    run(&scenario(v), Some(seed)).summary
}

/// 10 Mbps, 20 ms one way (BDP 33 packets of 1500 B at 40 ms), a 10-BDP buffer (333 packets).
#[test]
fn alone_on_a_deep_buffer_fills_the_link_with_a_small_queue() {
    for seed in [1, 2, 3] {
        let s = summary(
            json!({"duration": "30s", "bottleneck": {"rate": "10Mbps", "delay": "20ms", "buffer": "10bdp"}, "flows": [{"cc": "bbr3"}]}),
            seed,
        );
        let b = s.bottleneck.as_ref().unwrap();
        let bdp = 10e6 * 0.040 / (1500.0 * 8.0);
        eprintln!(
            "seed {seed}: utilization {:.3}, queue mean {:.1} pkts ({:.2} BDP), max {}, delay mean {:.1} ms, drops {}",
            b.utilization,
            b.queue_mean_pkts,
            b.queue_mean_pkts / bdp,
            b.queue_max_pkts,
            b.queue_delay_mean_ms,
            b.drops
        );
        // STARTUP (~10 RTTs) and PROBE_RTT (200 ms + a round at BDP/2 every 5 s, about 2 %
        // of the time) cost a few percent; the rest of the time BBR paces at the estimate.
        assert!(b.utilization >= 0.90, "seed {seed}: utilization {}", b.utilization);
        // CRUISE paces at 0.99 of the estimate and leaves 15 % headroom below inflight_hi;
        // only PROBE_UP (1.25 x, a few rounds every 2-3 s) and STARTUP's 2.77 x queue. Half
        // a BDP of mean queue is already far from CUBIC's (which fills 10 BDP).
        assert!(b.queue_mean_pkts < 0.5 * bdp, "seed {seed}: mean queue {} pkts", b.queue_mean_pkts);
        assert_eq!(b.drops, 0, "seed {seed}: a 10-BDP buffer never overflows");
    }
}

fn lossy(cc: &str, p: f64, seed: u64) -> Summary {
    summary(
        json!({
            "duration": "30s",
            "bottleneck": {"rate": "10Mbps", "delay": "20ms", "buffer": "1bdp", "loss": p},
            "tcp": {"recovery": "rack"},
            "flows": [{"cc": cc}]
        }),
        seed,
    )
}

/// 1 % random loss is below BBRv3's 2 % loss threshold (bbr_loss_thresh): it keeps most of
/// the link, where CUBIC's throughput is the loss-response function's (Mathis: 1448 B x 8 /
/// 40 ms x sqrt(1.5 / 0.01) = 3.5 Mbps, 37 % of the 9.65 Mbps of payload the link carries).
#[test]
fn one_percent_random_loss_keeps_most_of_the_link_where_cubic_does_not() {
    for seed in [1, 2] {
        let v3 = lossy("bbr3", 0.01, seed).flows[0].throughput_mbps;
        let cubic = lossy("cubic", 0.01, seed).flows[0].throughput_mbps;
        eprintln!("seed {seed} 1% loss: bbr3 {v3:.2} Mbps, cubic {cubic:.2} Mbps");
        assert!(v3 > 0.75 * 9.65, "seed {seed}: bbr3 {v3} Mbps");
        assert!(cubic < 0.5 * 9.65, "seed {seed}: cubic {cubic} Mbps");
    }
}

/// At 5 % and 10 % random loss (above the 2 % threshold every round) BBRv3 cuts inflight_hi
/// on each probe and bw_lo/inflight_lo on each loss round: it backs off, where v1 BBR, which
/// ignores loss but for its policer detector, keeps its rate (Cardwell et al. 2016: up to
/// about 5 %; end_to_end.rs checks it at 100 Mbps).
#[test]
fn heavy_random_loss_makes_it_back_off_unlike_v1() {
    for p in [0.05, 0.10] {
        let v3 = lossy("bbr3", p, 1).flows[0].throughput_mbps;
        let v1 = lossy("bbr", p, 1).flows[0].throughput_mbps;
        eprintln!("{p} loss: bbr3 {v3:.2} Mbps, bbr {v1:.2} Mbps");
        // "Backs off": at most half of v1's rate.
        assert!(v3 < 0.5 * v1, "at {p}: bbr3 {v3} Mbps, bbr {v1} Mbps");
    }
}

fn against_cubic(bbr: &str, seed: u64) -> (f64, f64) {
    let s = summary(
        json!({
            "duration": "60s",
            "bottleneck": {"rate": "10Mbps", "delay": "20ms", "buffer": "1bdp"},
            "flows": [{"cc": bbr}, {"cc": "cubic"}]
        }),
        seed,
    );
    (s.flows[0].throughput_mbps, s.flows[1].throughput_mbps)
}

/// At a 1-BDP buffer v1 BBR takes most of the link from CUBIC (its 2 BDP of inflight ignores
/// the losses it causes); BBRv3's inflight_hi, cut by 30 % on high loss, and its Reno-scale
/// probing leave CUBIC more.
#[test]
fn against_cubic_at_one_bdp_it_leaves_cubic_a_larger_share_than_v1() {
    for seed in [1, 2] {
        let (b3, c3) = against_cubic("bbr3", seed);
        let (b1, c1) = against_cubic("bbr", seed);
        let (share3, share1) = (c3 / (b3 + c3), c1 / (b1 + c1));
        eprintln!("seed {seed}: bbr3 {b3:.2} / cubic {c3:.2} (cubic share {share3:.2}); bbr {b1:.2} / cubic {c1:.2} (cubic share {share1:.2})");
        assert!(share3 > share1, "seed {seed}: CUBIC's share {share3} with bbr3, {share1} with bbr");
    }
}

fn codel_ecn(ecn_low: bool, seed: u64) -> Summary {
    summary(
        json!({
            "duration": "20s",
            "bottleneck": {"rate": "100Mbps", "delay": "0.5ms", "buffer": "1000pkt", "qdisc": "codel", "ecn": true},
            "tcp": {"ecn": true},
            "flows": [{"cc": "bbr3", "count": 4, "access_delay": "0.1ms", "params": {"ecn_low": ecn_low}}]
        }),
        seed,
    )
}

fn show(seed: u64, on: &Summary, off: &Summary) {
    let (a, b) = (on.bottleneck.as_ref().unwrap(), off.bottleneck.as_ref().unwrap());
    eprintln!(
        "seed {seed}: ecn_low: util {:.3} sojourn mean {:.2} ms p95 {:.2} marks {} drops {}+{}; without: util {:.3} sojourn mean {:.2} ms p95 {:.2} marks {} drops {}+{}",
        a.utilization, a.queue_delay_mean_ms, a.queue_delay_p95_ms, a.marks, a.drops, a.aqm_drops,
        b.utilization, b.queue_delay_mean_ms, b.queue_delay_p95_ms, b.marks, b.drops, b.aqm_drops
    );
}

/// Four flows through 100 Mbps with a 1.3 ms base RTT (below bbr_ecn_max_rtt_us = 5 ms) and an
/// ECN-marking CoDel (target 5 ms), ECN in use (the route's ecn_low, as Linux needs): CoDel
/// marks instead of dropping, nothing is lost, and the link stays full.
#[test]
fn with_ecn_marking_codel_at_a_small_rtt_it_loses_nothing_and_keeps_the_link_full() {
    for seed in [1, 2] {
        let on = codel_ecn(true, seed);
        let off = codel_ecn(false, seed);
        show(seed, &on, &off);
        let b = on.bottleneck.as_ref().unwrap();
        assert!(b.marks > 0, "seed {seed}: CoDel marked");
        assert_eq!(b.drops + b.aqm_drops, 0, "seed {seed}: ECN replaced loss");
        assert!(b.utilization > 0.9, "seed {seed}: utilization {}", b.utilization);
        for f in &on.flows {
            assert_eq!((f.retransmits, f.rto_count), (0, 0), "seed {seed} flow {}", f.id);
        }
    }
}

/// Two bbr3 flows through 100 Mbps, 0.5 ms one way, access links 0.05 ms at 10 Gbps (base RTT
/// about 1.2 ms, below bbr_ecn_max_rtt_us = 5 ms; BDP about 10 packets), a 2000-packet
/// buffer, ECN on; 3 s, with and without the route's ecn_low.
fn two_flows_marked(qdisc: &str, qdisc_params: Value, ecn_low: bool, seed: u64) -> Summary {
    summary(
        json!({
            "duration": "3s",
            "bottleneck": {"rate": "100Mbps", "delay": "0.5ms", "buffer": "2000pkt", "qdisc": qdisc, "ecn": true, "qdisc_params": qdisc_params},
            "tcp": {"ecn": true},
            "flows": [{"cc": "bbr3", "count": 2, "access_delay": "0.05ms", "access_rate": "10Gbps", "params": {"ecn_low": ecn_low}}]
        }),
        seed,
    )
}

/// How BBRv3 answers ECN in practice (issue 14): a probing round (REFILL/UP) in which more than
/// half of a rate sample's delivered packets were CE (bbr_ecn_thresh) cuts inflight_hi to that
/// sample's tx_in_flight, and CRUISE then stays 15 % below it. The ECN cut of inflight_lo
/// hardly counts: any CE in a DOWN/CRUISE cycle starts a REFILL at the next ACK in CA_Open
/// (bbr_ecn_reprobe_gain), which resets it. A DCTCP step marker (RED min_th = max_th = K:
/// every arrival meeting K queued packets is marked) crosses 50 % as soon as the queue stays
/// above K for half a round, so the queue settles at K. Measured (seed 1): mean queue 10.4
/// packets for K = 10 and 20.4 for K = 20 with ecn_low, 63.0 without (the two flows'
/// cwnd-limited 2 x BDP each), utilization 1.000, no drops.
#[test]
fn with_a_dctcp_step_marker_at_a_small_rtt_its_queue_follows_the_marks() {
    for k in [10.0, 20.0] {
        let on = two_flows_marked("red", json!({"min_th": k, "max_th": k}), true, 1);
        let off = two_flows_marked("red", json!({"min_th": k, "max_th": k}), false, 1);
        show(1, &on, &off);
        let (b_on, b_off) = (on.bottleneck.as_ref().unwrap(), off.bottleneck.as_ref().unwrap());
        eprintln!("K {k}: mean queue {:.1} pkts with ecn_low, {:.1} without", b_on.queue_mean_pkts, b_off.queue_mean_pkts);
        // Near K, and moving with it: the marks start at K and the cut lands a few packets
        // above it; +-K/2 leaves room for the probes (UP at 1.25 x, a few rounds per ~10 ms
        // cycle) and for DOWN's dips below.
        assert!((b_on.queue_mean_pkts - k).abs() < 0.5 * k, "K {k}: mean queue {} pkts", b_on.queue_mean_pkts);
        // Far below the queue the same flows keep when they ignore ECN.
        assert!(b_on.queue_mean_pkts < b_off.queue_mean_pkts / 2.0, "K {k}: {} vs {} pkts", b_on.queue_mean_pkts, b_off.queue_mean_pkts);
        assert!(b_on.marks > 0 && b_on.drops + b_on.aqm_drops == 0, "K {k}: marks {}, drops {}+{}", b_on.marks, b_on.drops, b_on.aqm_drops);
        // 15 % headroom below inflight_hi still exceeds the BDP: the link stays full.
        assert!(b_on.utilization > 0.95, "K {k}: utilization {}", b_on.utilization);
    }
}

/// CoDel marks at interval / sqrt(count) while the queue stays above target, so it marks half
/// of the packets (BBRv3's bbr_ecn_thresh) once count ~ (R x interval / 2)^2, about
/// R x interval^2 after it starts, R the link's packet rate (8,333 pkts/s of 1500 B at
/// 100 Mbps): 8 ms (7 RTTs) for a 1 ms interval, then inflight_hi is cut as with a step
/// marker. Measured, seeds 1-2 (target 0.2 ms, interval 1 ms): mean sojourn 0.72 / 0.64 ms with
/// ecn_low, 7.54 / 7.45 ms without, utilization 0.996, no drops. With a 5 ms interval (0.2 s to
/// reach 50 %) the same flows keep 6.5 ms; see the ignored test below.
#[test]
fn with_ecn_marking_codel_whose_interval_is_short_its_queue_follows_the_marks() {
    for seed in [1, 2] {
        let qp = json!({"target": "0.2ms", "interval": "1ms"});
        let on = two_flows_marked("codel", qp.clone(), true, seed);
        let off = two_flows_marked("codel", qp, false, seed);
        show(seed, &on, &off);
        let (b_on, b_off) = (on.bottleneck.as_ref().unwrap(), off.bottleneck.as_ref().unwrap());
        // Within about one interval: CoDel's marks stop below target and restart above it,
        // and inflight_hi is cut where the marking reached 50 %, some packets above target.
        assert!(b_on.queue_delay_mean_ms < 1.5, "seed {seed}: mean sojourn {} ms", b_on.queue_delay_mean_ms);
        assert!(b_on.queue_delay_mean_ms < b_off.queue_delay_mean_ms / 4.0, "seed {seed}: {} vs {} ms", b_on.queue_delay_mean_ms, b_off.queue_delay_mean_ms);
        assert!(b_on.marks > 0 && b_on.drops + b_on.aqm_drops == 0, "seed {seed}: marks {}, drops {}+{}", b_on.marks, b_on.drops, b_on.aqm_drops);
        assert!(b_on.utilization > 0.95, "seed {seed}: utilization {}", b_on.utilization);
    }
}

/// The expectation that BBRv3's queue follows CoDel's marks with CoDel's defaults (mean sojourn
/// near the 5 ms target, below the same flows' queue when they ignore ECN) does NOT hold here, by
/// the kernel's own logic (google/bbr v3 tcp_bbr.c, which ccsim follows); measured (seed 1):
/// 14.7 ms mean sojourn with ecn_low, 13.9 ms without, 100 % utilization, no drops. Per-round trace
/// of flow 0 (a temporary trace of cc/bbr3.rs, 2-20 s): CoDel marks about 5 % of each round's
/// packets (1,963 of 40,049), so no rate sample passes the 50 % CE threshold (bbr_ecn_thresh) and
/// inflight_hi is never set; each mark puts the sender in CWR for about a round, and the first ACK
/// in CA_Open after any CE in a DOWN/CRUISE cycle starts REFILL at once
/// (bbr_check_time_to_probe_bw, bbr_ecn_reprobe_gain), which resets inflight_lo: all 209 REFILLs
/// were such ECN reprobes, and the flow spent 63 % of the time in UP, 20 % in REFILL, 16 % in
/// CRUISE and 2 % in DOWN, so the ECN cut of inflight_lo (bbr_adapt_lower_bounds, only outside
/// probing) never stays in force. CoDel would need count ~ (R x interval / 2)^2 marks in a row,
/// about R x interval^2 = 8,333 pkts/s x (100 ms)^2 = 83 s above target, to mark half of the
/// packets. (The quantization budget, 3 TSO goals or about 39 packets a flow here, is not what
/// holds the queue: inflight_hi caps cwnd below it, as in the short-interval test above.) Kept as
/// an ignored test so that the expectation is visible:
/// `cargo test --release --test bbr3 -- --ignored`.
#[test]
#[ignore = "does not hold, by the kernel's own logic (sparse CoDel marks never pass the 50 % CE threshold; each starts an ECN reprobe that resets inflight_lo): see the comment above; issue 14"]
fn with_ecn_marking_codel_at_a_small_rtt_its_queue_follows_the_marks() {
    for seed in [1, 2] {
        let on = codel_ecn(true, seed);
        let off = codel_ecn(false, seed);
        show(seed, &on, &off);
        let (b_on, b_off) = (on.bottleneck.as_ref().unwrap(), off.bottleneck.as_ref().unwrap());
        assert!(b_on.queue_delay_mean_ms < 7.5, "seed {seed}: mean sojourn {} ms", b_on.queue_delay_mean_ms);
        assert!(b_on.queue_delay_mean_ms < b_off.queue_delay_mean_ms, "seed {seed}");
    }
}
