//! BBRv3 (`bbr3`) end to end: alone on a deep buffer, under random loss, against CUBIC, and
//! with ECN-marking CoDel at a small RTT. Each threshold is stated with its reason; the runs
//! are short (tens of simulated seconds at 10-20 Mbps) so the file stays well under a minute.

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

/// The expectation that BBRv3's queue follows CoDel's marks (mean sojourn near the 5 ms
/// target, below the same flows' queue when they ignore ECN) does NOT hold here; measured
/// (seed 1): 14.7 ms mean sojourn with ecn_low, 13.9 ms without, 100 % utilization, no drops.
/// Why, from the kernel's logic: (1) each flow's cwnd is floored by the quantization budget,
/// 3 x bbr_tso_segs_goal, whose min_rtt term (64 KB >> (min_rtt / 512 us) = 16 KB at 1.3 ms)
/// makes it about 39 packets per flow against a BDP of about 4, so four flows keep ~120
/// packets queued; (2) CoDel marks about 1-3 % of packets, so ecn_alpha stays near 0 and the
/// inflight_lo cut (alpha/3) is about 1 % per round, and the 50 % CE threshold that cuts
/// inflight_hi is never reached; (3) at this BDP the Reno-coexistence bound probes every
/// min(63, target inflight) rounds, and each REFILL resets inflight_lo. Kept as an ignored
/// test so that the expectation is visible: `cargo test --release --test bbr3 -- --ignored`.
#[test]
#[ignore = "does not hold, by the kernel's own logic (cwnd floor of 3 TSO goals > BDP, sparse CoDel marks): see the comment above; issue 14"]
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
