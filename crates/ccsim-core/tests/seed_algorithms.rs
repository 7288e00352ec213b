//! End-to-end checks that each seed algorithm does what it exists for (issue 3). Several
//! seeds, short runs; every assertion is on measured numbers.

use ccsim_core::{run, Scenario};
use serde_json::{json, Value};

fn mean_over(v: Value, seeds: &[u64], f: impl Fn(&ccsim_core::metrics::Summary) -> f64) -> f64 {
    let sc = Scenario::from_value(&v).expect("valid scenario");
    seeds.iter().map(|&s| f(&run(&sc, Some(s)).summary)).sum::<f64>() / seeds.len() as f64
}

const SEEDS: &[u64] = &[1, 2, 3];

fn lossy(cc: &str, delayed_ack: bool) -> Value {
    json!({
        "duration": "60s",
        "bottleneck": {"rate": "10Mbps", "delay": "20ms", "buffer": "50pkt", "loss": 0.02},
        "tcp": {"mss": 1000, "delayed_ack": delayed_ack},
        "flows": [{"cc": cc, "count": 2, "access_rate": "100Mbps"}]
    })
}

/// UCC keeps cwnd on losses it judges to be link errors. With per-segment ACKs its estimate
/// works, and it carries far more than NewReno at 2% random loss (measured 1.9x).
#[test]
fn ucc_beats_newreno_under_random_loss() {
    let total = |s: &ccsim_core::metrics::Summary| s.total_throughput_mbps;
    let nr = mean_over(lossy("newreno", false), SEEDS, total);
    let ucc = mean_over(lossy("ucc", false), SEEDS, total);
    assert!(ucc > 1.5 * nr, "ucc {ucc} vs newreno {nr}");
}

/// A documented finding (docs/algorithms.md): with delayed ACKs, TSecr echoes the first
/// segment of each pair while the receiver's TSval is taken when the second arrives. Every
/// sample then carries one extra serialisation time, and at a 1 ms tick that reads as
/// queueing. rho is inflated and UCC halves on most random losses: its gain shrinks to about
/// 10%.
#[test]
fn ucc_gain_shrinks_with_delayed_acks() {
    let total = |s: &ccsim_core::metrics::Summary| s.total_throughput_mbps;
    let gain_no_delack = mean_over(lossy("ucc", false), SEEDS, total) / mean_over(lossy("newreno", false), SEEDS, total);
    let gain_delack = mean_over(lossy("ucc", true), SEEDS, total) / mean_over(lossy("newreno", true), SEEDS, total);
    assert!(gain_delack > 1.0, "UCC never does worse than NewReno: {gain_delack}");
    assert!(gain_delack < gain_no_delack - 0.3, "{gain_delack} vs {gain_no_delack}");
}

fn solo(cc: &str, params: Value) -> f64 {
    let v = json!({
        "duration": "60s",
        "bottleneck": {"rate": "10Mbps", "delay": "20ms", "buffer": "10bdp"},
        "flows": [{"cc": cc, "params": params}]
    });
    mean_over(v, SEEDS, |s| s.flows[0].throughput_mbps)
}

#[test]
fn rtprop_update_keeps_solo_throughput_where_a_low_forced_expire_threshold_loses_it() {
    let bbr = solo("bbr", json!({}));
    let rtprop = solo("bbr-rtprop", json!({}));
    let expire_low = solo("bbr-expire", json!({"rate_th": 1.2}));
    assert!(rtprop >= 0.95 * bbr, "bbr-rtprop {rtprop} vs bbr {bbr}");
    assert!(expire_low < 0.8 * bbr, "bbr-expire (rate_th 1.2) {expire_low} vs bbr {bbr}");
}

fn share_vs_cubic(cc: &str, buffer: &str) -> (f64, f64) {
    let v = json!({
        "duration": "120s",
        "bottleneck": {"rate": "10Mbps", "delay": "20ms", "buffer": buffer},
        "flows": [{"cc": cc}, {"cc": "cubic"}]
    });
    let x = mean_over(v.clone(), SEEDS, |s| s.flows[0].throughput_mbps);
    let c = mean_over(v, SEEDS, |s| s.flows[1].throughput_mbps);
    (x, c)
}

#[test]
fn forced_expire_and_rtprop_update_raise_bbrs_share_against_cubic_in_a_deep_buffer() {
    let (bbr, _) = share_vs_cubic("bbr", "10bdp");
    let (expire, _) = share_vs_cubic("bbr-expire", "10bdp");
    let (rtprop, _) = share_vs_cubic("bbr-rtprop", "10bdp");
    assert!(expire > 1.15 * bbr, "bbr-expire {expire} vs bbr {bbr}");
    assert!(rtprop > 1.15 * bbr, "bbr-rtprop {rtprop} vs bbr {bbr}");
}

/// Seed 003's claims for BBR+ against CUBIC: far above CUBIC with small buffers, not below
/// it with deep ones, and the total stable. "Stable" is taken as at least 95% of the link's
/// payload rate (10 Mbps x 1448/1500 = 9.65 Mbps). Measured (seeds 1-3): 9.47 at 1 BDP, 9.46
/// at 8 BDP, 9.26 at 18 BDP.
#[test]
fn bbrplus_holds_its_own_against_cubic_at_every_buffer_size() {
    let (p1, c1) = share_vs_cubic("bbrplus", "1bdp");
    assert!(p1 > 3.0 * c1, "1 BDP: bbrplus {p1} cubic {c1}");
    for buf in ["8bdp", "18bdp"] {
        let (p, c) = share_vs_cubic("bbrplus", buf);
        assert!(p >= c, "{buf}: bbrplus {p} cubic {c}");
        assert!(p + c >= 0.95 * 9.65, "{buf}: total {}", p + c);
        let (b, _) = share_vs_cubic("bbr", buf);
        assert!(p > b, "{buf}: bbrplus {p} should beat plain bbr {b}");
    }
}

/// BBR+'s coexistence mode must end once the standing queue is its own: over 500 s at 10 BDP
/// CUBIC keeps a real share (measured 3.31 of 9.33 Mbps, seeds 1-3). With PROBE_RTT skipped
/// while coexisting (the design as first specified) CUBIC starves (0.35 Mbps): the test tells
/// the two apart.
#[test]
fn bbrplus_does_not_starve_cubic_in_long_runs() {
    let run = |params: Value| {
        let v = json!({
            "duration": "500s",
            "bottleneck": {"rate": "10Mbps", "delay": "20ms", "buffer": "10bdp"},
            "flows": [{"cc": "bbrplus", "params": params}, {"cc": "cubic"}]
        });
        let cubic = mean_over(v.clone(), SEEDS, |s| s.flows[1].throughput_mbps);
        let total = mean_over(v, SEEDS, |s| s.total_throughput_mbps);
        cubic / total
    };
    let share = run(json!({}));
    assert!(share > 0.25, "CUBIC's share {share}");
    let skipping = run(json!({"skip_probe_rtt": true, "coexist_pacing_gain": 1.25}));
    assert!(skipping < 0.1, "with PROBE_RTT skipped CUBIC's share is {skipping}");
}

/// HD, CHD and CDG exist to keep the queue short: alone on the link, their mean queueing
/// delay is well below NewReno's, which fills the 50-packet buffer.
#[test]
fn delay_based_algorithms_keep_the_queue_short() {
    let qdelay = |cc: &str| {
        let v = json!({
            "duration": "30s",
            "bottleneck": {"rate": "10Mbps", "delay": "20ms", "buffer": "50pkt"},
            "tcp": {"mss": 1000},
            "flows": [{"cc": cc}]
        });
        mean_over(v, SEEDS, |s| s.bottleneck.as_ref().unwrap().queue_delay_mean_ms)
    };
    let nr = qdelay("newreno");
    assert!(nr > 15.0, "newreno queueing delay {nr} ms");
    for cc in ["hd", "chd", "cdg"] {
        let d = qdelay(cc);
        assert!(d < 0.3 * nr, "{cc}: {d} ms vs newreno {nr} ms");
    }
}

/// CHD and CDG take a loss without a matching queueing delay as a link error: under 1% random
/// loss they carry more than NewReno.
#[test]
fn chd_and_cdg_tolerate_non_congestion_loss() {
    let thr = |cc: &str| {
        let v = json!({
            "duration": "60s",
            "bottleneck": {"rate": "10Mbps", "delay": "20ms", "buffer": "50pkt", "loss": 0.01},
            "tcp": {"mss": 1000},
            "flows": [{"cc": cc}]
        });
        mean_over(v, SEEDS, |s| s.total_throughput_mbps)
    };
    let nr = thr("newreno");
    for cc in ["chd", "cdg"] {
        let t = thr(cc);
        assert!(t > 1.5 * nr, "{cc}: {t} vs newreno {nr}");
    }
}
