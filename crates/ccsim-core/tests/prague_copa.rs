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
fn prague_waits_about_a_millisecond_in_dualpi2_s_l4s_queue_and_shares_with_cubic() {
    // DualPI2 marks L4S packets whose sojourn exceeds 1 ms (its step) and aims the classic
    // queue at 15 ms: Prague's mean queueing delay must stay under 2 ms (the step plus a
    // packet or two of jitter) and under a fifth of CUBIC's. RFC 9332's k = 2 makes the
    // Reno-like and scalable rates roughly equal (1.15 predicted here from W_C = 1.22/p',
    // W_L = 1/p' at Prague's 25 ms target and CUBIC's 35 ms RTT); "roughly" taken as a factor
    // of 2.5 either way.
    for seed in 1..=3 {
        let s = prague_vs_cubic(seed);
        let (qc, qp) = (qdelay_ms(&s, 0), qdelay_ms(&s, 1));
        let ratio = tput(&s, 1) / tput(&s, 0);
        eprintln!("seed {seed}: CUBIC {:.2} Mbps, {qc:.2} ms; Prague {:.2} Mbps, {qp:.2} ms; ratio {ratio:.2}", tput(&s, 0), tput(&s, 1));
        assert!(qp < 2.0 && qp < qc / 5.0, "seed {seed}: Prague {qp} ms, CUBIC {qc} ms");
        assert!((1.0 / 2.5..=2.5).contains(&ratio), "seed {seed}: Prague/CUBIC = {ratio}");
        let b = s.bottleneck.as_ref().unwrap();
        assert!(b.utilization > 0.95 && b.marks > 0, "seed {seed}: utilization {}, marks {}", b.utilization, b.marks);
        assert!(s.flows[1].ce_received > 0 && s.flows[1].ece_reductions > 0);
    }
}

/// Two Prague flows through DualPI2 (40 Mbps, 1 ms each way) with base RTTs `a_ms` and `b_ms`
/// (access delays), RTT target `target_us`: throughput ratio short/long.
fn prague_rtt_ratio(a_ms: u64, b_ms: u64, target_us: u64, seed: u64) -> f64 {
    let flow = |rtt_ms: u64| json!({"cc": "prague", "ecn": true, "access_delay": format!("{}us", (rtt_ms * 1000 - 2000) / 2), "params": {"prague_rtt_target": target_us}});
    let s = run(
        json!({
            "duration": "30s",
            "bottleneck": {"rate": "40Mbps", "delay": "1ms", "buffer": "2000pkt", "qdisc": "dualpi2", "ecn": true},
            "flows": [flow(a_ms), flow(b_ms)],
        }),
        seed,
    )
    .s;
    assert!(s.bottleneck.as_ref().unwrap().utilization > 0.95);
    tput(&s, 0) / tput(&s, 1)
}

#[test]
fn prague_s_rtt_independence_narrows_the_rate_gap_between_rtts() {
    // A scalable flow's rate goes as 1/(RTT p): 5 ms against 25 ms would get 5 times the rate,
    // against 50 ms 10 times. Below the 25 ms target Prague grows and reduces as a 25 ms flow:
    // predicted 1 (5 vs 25 ms) and 2 (5 vs 50 ms, the kernel's r = (1/p - 1) 25 ms/RTT above
    // the target). Asserted: within a factor 2 of those, and at most half the ratio without
    // RTT independence (prague_rtt_target = 1 us: every flow is above its target).
    for seed in 1..=2 {
        for (b, predicted) in [(25, 1.0), (50, 2.0)] {
            let indep = prague_rtt_ratio(5, b, 25_000, seed);
            let without = prague_rtt_ratio(5, b, 1, seed);
            eprintln!("seed {seed}: 5 vs {b} ms: {indep:.2} (without RTT independence {without:.2})");
            assert!(indep < 2.0 * predicted, "seed {seed}, 5 vs {b} ms: {indep}");
            assert!(indep < without / 2.0, "seed {seed}, 5 vs {b} ms: {indep} against {without}");
        }
    }
}

#[test]
fn prague_at_5_and_50_ms_gets_nearly_equal_shares_with_its_rtt_target_at_50_ms() {
    // Prague's RTT independence covers flows below `prague_rtt_target` (tcp_prague.c: each
    // behaves as a flow of the target RTT); the default 25 ms leaves a 50 ms flow on its own
    // RTT. With the module parameter at 50 ms both flows act as 50 ms flows. Measured (seeds
    // 1-3): 1.27, 1.30, 1.30 through DualPI2 against 3.65-3.84 with the default target.
    // Asserted: within 1.5x of equal, and less than half the default target's ratio.
    for seed in 1..=2 {
        let equalised = prague_rtt_ratio(5, 50, 50_000, seed);
        let default = prague_rtt_ratio(5, 50, 25_000, seed);
        eprintln!("seed {seed}: 5 vs 50 ms: {equalised:.2} with the target at 50 ms, {default:.2} at 25 ms");
        assert!((1.0 / 1.5..1.5).contains(&equalised), "seed {seed}: {equalised}");
        assert!(equalised < default / 2.0, "seed {seed}: {equalised} against {default}");
    }
}

// ---------------------------------------------------------------- Copa

#[test]
fn copa_alone_keeps_about_one_over_delta_packets_queued_at_full_utilization() {
    // In equilibrium lambda = 1/(delta d_q) = C, so each flow keeps C d_q = 1/delta = 2
    // packets queued; cwnd moves 1/delta per RTT and turns about 1.5 RTT late, so the queue
    // swings between about 0 and 2.5/delta and empties every ~5 RTTs (paper section 2.2).
    // Asserted, with the default parameters (mode switching on): the time-averaged queue
    // (the bottleneck's queue_mean_pkts, the packet in service not counted) under the top of
    // that swing, 2.5/delta = 5 packets per flow; the link 90 % used or more; and, as the
    // queue does empty, no switch to competitive mode. Delayed ACKs on (the default).
    for (n, seed) in [(1, 1), (1, 2), (2, 1), (2, 2), (4, 1)] {
        let r = run(
            json!({
                "duration": "20s",
                "bottleneck": {"rate": "20Mbps", "delay": "10ms", "buffer": "1000pkt"},
                "flows": [{"cc": "copa", "count": n}],
            }),
            seed,
        );
        let b = r.s.bottleneck.as_ref().unwrap();
        eprintln!("{n} Copa, seed {seed}: queue {:.2} pkts, utilization {:.3}, {} mode switches", b.queue_mean_pkts, b.utilization, r.mode_events.len());
        assert!(b.queue_mean_pkts < 5.0 * n as f64, "{n} flows, seed {seed}: {} packets", b.queue_mean_pkts);
        assert!(b.utilization >= 0.9, "{n} flows, seed {seed}: utilization {}", b.utilization);
        assert!(r.mode_events.is_empty(), "{n} flows, seed {seed}: {:?}", r.mode_events);
    }
}

#[test]
fn copa_switches_to_competitive_mode_against_cubic_and_keeps_a_share() {
    // CUBIC fills the 100-packet FIFO; in default mode Copa backs off to cwnd 2 and starves.
    // In competitive mode 1/delta grows by 1 per RTT and halves on loss, like Reno's window:
    // expected a share of the same order as CUBIC's (the paper's Figure 9). Asserted: at least
    // half of CUBIC's rate with mode switching, and under a fifth of it without.
    for seed in 1..=3 {
        let share = |comp: bool| {
            let r = run(
                json!({
                    "duration": "30s",
                    "bottleneck": {"rate": "20Mbps", "delay": "10ms", "buffer": "100pkt"},
                    "flows": [{"cc": "cubic"}, {"cc": "copa", "params": {"competitive": comp}}],
                }),
                seed,
            );
            (tput(&r.s, 1) / tput(&r.s, 0), r.mode_events)
        };
        let (with, events) = share(true);
        let (without, none) = share(false);
        eprintln!("seed {seed}: Copa/CUBIC {with:.2} ({} mode switches), without competitive mode {without:.2}", events.len());
        assert!(events.first().is_some_and(|e| e.2 == 1.0), "seed {seed}: {events:?}");
        assert!(none.is_empty());
        assert!(with >= 0.5, "seed {seed}: {with}");
        assert!(without < 0.2, "seed {seed}: {without}");
    }
}

#[test]
fn parameters_out_of_range_are_rejected() {
    let with = |cc: &str, p: Value| {
        Scenario::from_value(&json!({"duration": "1s", "bottleneck": {"rate": "10Mbps", "delay": "10ms", "buffer": "100pkt"}, "flows": [{"cc": cc, "params": p}]}))
    };
    let m = with("prague", json!({"prague_cwnd_mode": 4})).unwrap_err().to_string();
    assert!(m.contains("prague_cwnd_mode: 4 is out of range"), "{m}");
    let m = with("copa", json!({"delta": 0})).unwrap_err().to_string();
    assert!(m.contains("delta: 0 is out of range"), "{m}");
    assert!(with("prague", json!({"prague_rtt_target": 5000})).is_ok());
    assert!(with("copa", json!({"delta": 0.1})).is_ok());
}

// ------------------------------------------------- Prague after an RTO in Recovery

/// Prague flows (access delays `access_ms`, 2 ms bottleneck delay each way) through a
/// 40 Mbps PIE queue of 1000 packets with ECN: slow start overfills the queue (PIE marks only
/// below 10 % drop probability, so the overshoot is dropped), Recovery follows, then an RTO.
/// Returns, per flow: its sending rate from 2 to 10 s (payload, retransmissions included), Mbps, the final pacing rate (B/s), the
/// final cwnd, and whether it is still in Loss.
fn prague_after_rto(access_ms: &[f64]) -> Vec<(f64, u64, u32, bool)> {
    let flows: Vec<Value> =
        access_ms.iter().map(|a| json!({"cc": "prague", "access_delay": format!("{a}ms"), "access_rate": "1Gbps"})).collect();
    let sc = scenario(json!({
        "duration": "10s",
        "bottleneck": {"rate": "40Mbps", "delay": "2ms", "buffer": "1000pkt", "qdisc": "pie", "ecn": true},
        "tcp": {"ecn": true},
        "flows": flows,
    }));
    let mut sim = Sim::new(&sc, 1);
    let sec = 1_000_000_000;
    sim.run_until(2 * sec);
    let at2: Vec<u64> = (0..access_ms.len()).map(|i| sim.flow_sender(i).stats.bytes_sent).collect();
    sim.run_to_end();
    sim.check_conservation().unwrap();
    (0..access_ms.len())
        .map(|i| {
            let s = sim.flow_sender(i);
            let mbps = (s.stats.bytes_sent - at2[i]) as f64 * 8.0 / 8.0 / 1e6; // bits over 8 s
            (mbps, s.sk.pacing_rate, s.sk.cwnd, s.sk.ca_state == ccsim_core::cc::CaState::Loss)
        })
        .collect()
}

#[test]
fn prague_stays_at_its_minimum_rate_while_an_rto_s_loss_recovery_lasts() {
    // Kernel-faithful (docs/algorithms.md, prague): at the RTO cwnd drops to 1 and the
    // cwnd_mode_transit switch moves the flow to rate mode, where frac_cwnd is rebuilt from
    // the rate with hsrtt (~4.5 ms) instead of srtt (~305 ms): the window collapses and the
    // pacing rate falls to MINIMUM_RATE (100 kbps). In Loss (in_loss) Prague does not grow,
    // and at 1500-byte packets every 120 ms the ~540 retransmissions take ~62 s: the whole
    // run is spent at 0.1 Mbps. Linux does the same with internal pacing; see the docs for
    // what follows the Loss episode (Linux's TSecr RTT sample decides it).
    let one = prague_after_rto(&[0.5]);
    let two = prague_after_rto(&[0.5, 10.5]);
    eprintln!("5 ms alone: {:?}; 5 and 25 ms: {:?}", one, two);
    for &(mbps, pacing, cwnd, in_loss) in [one[0], two[0]].iter() {
        assert!(mbps < 0.11, "{mbps} Mbps sent from 2 to 10 s");
        assert_eq!((pacing, cwnd, in_loss), (12_500, 2, true));
    }
}

#[test]
fn with_linux_s_timestamp_rtt_sample_prague_leaves_its_minimum_rate_after_the_loss_episode() {
    // The same 5 ms flow for 100 s. With `tsecr_rtt` (Linux's tcp_rtt_tsopt_us) the ACKs of
    // retransmitted data bring srtt down from ~305 ms to the path's RTT during the Loss
    // episode, so the first Open ACKs lift the rate (docs/algorithms.md, prague: Linux is back
    // to 38.6 Mbps by 73 s). Without the sample the flow stays at 0.1 Mbps.
    let last_20s = |tsecr_rtt: bool| {
        let sc = scenario(json!({
            "duration": "100s",
            "bottleneck": {"rate": "40Mbps", "delay": "2ms", "buffer": "1000pkt", "qdisc": "pie", "ecn": true},
            "tcp": {"ecn": true, "tsecr_rtt": tsecr_rtt},
            "flows": [{"cc": "prague", "access_delay": "0.5ms", "access_rate": "1Gbps"}],
        }));
        let mut sim = Sim::new(&sc, 1);
        let sec = 1_000_000_000;
        sim.run_until(80 * sec);
        let at80 = sim.flow_sender(0).stats.bytes_acked;
        sim.run_to_end();
        sim.check_conservation().unwrap();
        let s = sim.flow_sender(0);
        ((s.stats.bytes_acked - at80) as f64 * 8.0 / 20.0 / 1e6, s.sk.ca_state == ccsim_core::cc::CaState::Loss)
    };
    let (with, in_loss) = last_20s(true);
    let (without, _) = last_20s(false);
    eprintln!("80-100 s: {with:.2} Mbps with the TSecr sample, {without:.2} without");
    assert!(!in_loss);
    assert!(with > 35.0, "{with}");
    assert!(without < 0.2, "{without}");
}
