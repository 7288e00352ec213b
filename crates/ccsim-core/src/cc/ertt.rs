//! Delay measurement in clock ticks, as FreeBSD's `h_ertt` khelp module provides it to the
//! delay-based algorithms `hd`, `chd` and `cdg` (sys/netinet/khelp/h_ertt.c, h_ertt.h). One
//! shared implementation: every algorithm that needs it embeds an [`Ertt`] and includes
//! [`TICK_PARAM`] in its parameter table.
//!
//! What it keeps, with FreeBSD's names:
//! - `rtt`: the latest RTT sample in ticks, `ticks - tx_ts + 1` (h_ertt.c
//!   `e_t->rtt = ticks - txsi->tx_ts + 1`). Here `tx_ts = ticks(now - rtt)`, the tick in which
//!   the newest (s)acked, never retransmitted segment was sent (the stack's
//!   [`AckSample::rtt`](super::AckSample)). 0 until the first sample, as in FreeBSD.
//! - `minrtt`, `maxrtt`: lifetime minimum and maximum of `rtt`; they never expire.
//! - NEW_MEASUREMENT, about once per RTT: a segment is marked when no measurement is in progress
//!   (h_ertt.c `TXSI_RTT_MEASURE_START` on the next transmitted segment); the ACK that
//!   acknowledges it carries `ERTT_NEW_MEASUREMENT` and a new segment is marked.
//! - `maxrtt_in_rtt` / `minrtt_in_rtt`: the largest and smallest `rtt` seen in the current
//!   measurement period. FreeBSD keeps these in each algorithm (`chd->maxrtt_in_rtt`,
//!   `cdg->maxrtt_in_rtt`, `cdg->minrtt_in_rtt`) with identical rules, so they live here:
//!   every ACK folds the latest `rtt` in (`imax(e_t->rtt, ...)` in `chd_ack_received` and
//!   `cdg_ack_received`, which run on every ACK), and the algorithm takes and resets them when it
//!   handles NEW_MEASUREMENT ([`Ertt::take_period`]).
//!
//! Interpretations (ccsim is not FreeBSD):
//! - The marked segment is the next *new* segment (`snd_nxt` when the previous mark is
//!   cumulatively acknowledged), and a mark is passed when the cumulative ACK moves beyond it
//!   (`snd_una > mark`). FreeBSD marks the next transmitted segment, which may be a
//!   retransmission, and also matches SACK blocks (`sackhint.last_sack_ack`).
//! - FreeBSD's delayed-ACK heuristic (`dlyack_rx`: once delayed ACKs are detected, an ACK that
//!   covers a single segment is not used for timing, because the receiver held it back) and the
//!   timestamp-based matching of ACKs to segments are not modelled: every ACK that carries a
//!   stack RTT sample is used. The stack's sample already follows Karn's rule.
//! - Before the first sample FreeBSD's `cdg_ack_received` folds `e_t->rtt = 0` into
//!   `minrtt_in_rtt`; here nothing is folded until there is a sample (the first period is only
//!   ever used as the "previous" one, so this changes no decision).
//! - FreeBSD's `IN_RECOVERY` as the algorithms' `ack_received` sees it: the stack has already
//!   left recovery on the ACK that reaches `snd_recover` (tcp_input.c calls `cc_post_recovery`
//!   before `cc_ack_received`). ccsim calls `pkts_acked` before its state machine, so
//!   [`Ertt::in_recovery`] treats Recovery/CWR as over once `snd_una` has reached the recovery
//!   point recorded in [`Ertt::set_state`]. The RTO state (Loss) is not "in recovery": FreeBSD
//!   leaves recovery on a timeout (`EXIT_RECOVERY` in `cc_cong_signal(CC_RTO)`).

use super::{CaState, ParamSpec, SockState};
use crate::rng::Rng;
use crate::time::{Time, MS};
use rand::Rng as _;

/// The measurement tick, declared once; each of `hd`, `chd` and `cdg` lists it in its PARAMS.
pub const TICK_PARAM: ParamSpec = ParamSpec::num(
    "tick",
    1.0,
    0.001,
    1000.0,
    "ms",
    "Clock tick of the delay measurement: h_ertt counts RTTs in kernel ticks (sys/netinet/khelp/h_ertt.c); \
     FreeBSD's default HZ = 1000 makes a tick 1 ms. Thresholds given in ms are rounded to whole ticks.",
);

/// `RANDOM_MAX` in cc_hd.c / cc_chd.c: the largest value `random()` returns (INT_MAX).
pub const RANDOM_MAX: u64 = i32::MAX as u64;

/// FreeBSD `random()`: uniform in [0, 2^31 - 1], drawn from the flow's own stream.
#[inline]
pub fn freebsd_random(rng: &mut Rng) -> u64 {
    (rng.gen::<u32>() >> 1) as u64
}

/// FreeBSD `prng32()`: uniform over all 32-bit values.
#[inline]
pub fn freebsd_prng32(rng: &mut Rng) -> u64 {
    rng.gen::<u32>() as u64
}

/// Sentinel of an empty `minrtt_in_rtt` (cc_cdg.c initialises it to INT_MAX).
pub const NO_MIN: i64 = i32::MAX as i64;

#[derive(Debug, Clone)]
pub struct Ertt {
    tick_ns: Time,
    /// Latest RTT sample in ticks (`e_t->rtt`); 0 = none yet.
    pub rtt: i64,
    /// Lifetime minimum RTT in ticks (`e_t->minrtt`); 0 = none yet.
    pub minrtt: i64,
    /// Lifetime maximum RTT in ticks (`e_t->maxrtt`); 0 = none yet.
    pub maxrtt: i64,
    /// Largest `rtt` in the current measurement period; 0 = none.
    pub maxrtt_in_rtt: i64,
    /// Smallest `rtt` in the current measurement period; [`NO_MIN`] = none.
    pub minrtt_in_rtt: i64,
    /// Sequence number of the marked segment.
    mark: u32,
    /// `snd_nxt` when the stack last entered Recovery, CWR or Loss (its `high_seq`).
    recovery_point: u32,
    /// NEW_MEASUREMENT events so far.
    pub measurements: u64,
}

impl Ertt {
    pub fn new(tick_ms: f64) -> Self {
        Ertt {
            tick_ns: Self::tick_ns(tick_ms),
            rtt: 0,
            minrtt: 0,
            maxrtt: 0,
            maxrtt_in_rtt: 0,
            minrtt_in_rtt: NO_MIN,
            mark: 0,
            recovery_point: 0,
            measurements: 0,
        }
    }

    /// The tick in ns (at least 1 us, the parameter's lower bound).
    pub fn tick_ns(tick_ms: f64) -> Time {
        ((tick_ms * MS as f64).round() as Time).max(1)
    }

    pub fn tick(&self) -> Time {
        self.tick_ns
    }

    /// FreeBSD `ticks` at time `t`.
    #[inline]
    pub fn ticks(&self, t: Time) -> i64 {
        (t / self.tick_ns) as i64
    }

    /// `ticks - tx_ts + 1` for a segment sent `rtt_ns` before `now`.
    #[inline]
    pub fn rtt_ticks(&self, now: Time, rtt_ns: Time) -> i64 {
        self.ticks(now) - self.ticks(now.saturating_sub(rtt_ns)) + 1
    }

    /// A duration in ms as a whole number of ticks (rounded to nearest).
    pub fn ms_to_ticks(&self, ms: f64) -> i64 {
        (ms * MS as f64 / self.tick_ns as f64).round() as i64
    }

    /// Ticks as ms (for events and telemetry).
    pub fn ticks_to_ms(&self, ticks: i64) -> f64 {
        ticks as f64 * self.tick_ns as f64 / MS as f64
    }

    /// Connection start: the first segment sent is marked.
    pub fn init(&mut self, s: &SockState) {
        self.mark = s.snd_nxt;
        self.recovery_point = s.snd_nxt;
    }

    /// The marked segment's sequence number.
    pub fn mark(&self) -> u32 {
        self.mark
    }

    /// Per ACK (called from `pkts_acked`, after the stack moved `snd_una`): take the RTT sample
    /// (`rtt_ns` < 0 = none), fold the latest RTT into the period's max/min, and return true if
    /// this ACK carries NEW_MEASUREMENT (the marked segment is now cumulatively acknowledged;
    /// the next new segment is marked).
    pub fn on_ack(&mut self, s: &SockState, rtt_ns: i64) -> bool {
        if rtt_ns >= 0 {
            let r = self.rtt_ticks(s.now, rtt_ns as Time);
            self.rtt = r;
            if r < self.minrtt || self.minrtt == 0 {
                self.minrtt = r;
            }
            if r > self.maxrtt || self.maxrtt == 0 {
                self.maxrtt = r;
            }
        }
        if self.rtt > 0 {
            self.maxrtt_in_rtt = self.maxrtt_in_rtt.max(self.rtt);
            self.minrtt_in_rtt = self.minrtt_in_rtt.min(self.rtt);
        }
        if s.snd_una > self.mark {
            self.mark = s.snd_nxt;
            self.measurements += 1;
            true
        } else {
            false
        }
    }

    /// The period's (max, min) RTT in ticks, resetting both for the next period (max 0 and
    /// min [`NO_MIN`] when the period had no sample).
    pub fn take_period(&mut self) -> (i64, i64) {
        let p = (self.maxrtt_in_rtt, self.minrtt_in_rtt);
        self.maxrtt_in_rtt = 0;
        self.minrtt_in_rtt = NO_MIN;
        p
    }

    /// Forward of the algorithm's `set_state`: remember where a reduction ends (the stack sets
    /// `high_seq = snd_nxt` just before it changes state).
    pub fn set_state(&mut self, s: &SockState, new: CaState) {
        if matches!(new, CaState::Recovery | CaState::Cwr | CaState::Loss) {
            self.recovery_point = s.snd_nxt;
        }
    }

    /// FreeBSD `IN_RECOVERY` (fast recovery or congestion recovery) as `ack_received` sees it.
    pub fn in_recovery(&self, s: &SockState) -> bool {
        matches!(s.ca_state, CaState::Recovery | CaState::Cwr) && s.snd_una < self.recovery_point
    }

    /// FreeBSD `IN_CONGRECOVERY`: a delay-based (ECN-like) reduction is in progress.
    pub fn in_cong_recovery(&self, s: &SockState) -> bool {
        s.ca_state == CaState::Cwr && s.snd_una < self.recovery_point
    }
}

/// The probability that `random()` (uniform in [0, RANDOM_MAX]) falls below `threshold`.
pub fn threshold_probability(threshold: u64) -> f64 {
    threshold as f64 / (RANDOM_MAX + 1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sock() -> SockState {
        SockState::new(1000, 10)
    }

    #[test]
    fn ticks_arithmetic_is_ticks_minus_tx_ts_plus_one() {
        let e = Ertt::new(1.0);
        assert_eq!(e.tick(), MS);
        // Sent at 60 ms, acked at 100 ms: 100 - 60 + 1.
        assert_eq!(e.rtt_ticks(100 * MS, 40 * MS), 41);
        // Sent at 60.3 ms (tick 60), acked at 100.5 ms (tick 100).
        assert_eq!(e.rtt_ticks(100 * MS + 500_000, 40 * MS + 200_000), 41);
        // Sent at 60.1 ms, acked at 100.0 ms: still ticks 60 and 100.
        assert_eq!(e.rtt_ticks(100 * MS, 39 * MS + 900_000), 41);
        // Sent at 60.9 ms, acked at 100.0 ms.
        assert_eq!(e.rtt_ticks(100 * MS, 39 * MS + 100_000), 41);
        // Same tick: 1.
        assert_eq!(e.rtt_ticks(100 * MS + 900_000, 500_000), 1);
        // Across one tick boundary: 2.
        assert_eq!(e.rtt_ticks(100 * MS, 500_000), 2);
        // A 10 ms tick: sent at 65 ms (tick 6), acked at 105 ms (tick 10).
        let e10 = Ertt::new(10.0);
        assert_eq!(e10.rtt_ticks(105 * MS, 40 * MS), 5);
        assert_eq!(e10.ms_to_ticks(20.0), 2);
        assert_eq!(e10.ms_to_ticks(25.0), 3);
        assert_eq!(e.ms_to_ticks(20.0), 20);
        assert_eq!(Ertt::new(0.5).ms_to_ticks(5.0), 10);
        assert_eq!(Ertt::tick_ns(0.001), 1_000);
    }

    #[test]
    fn new_measurement_fires_once_per_marked_segment() {
        let mut e = Ertt::new(1.0);
        let mut s = sock();
        e.init(&s);
        assert_eq!(e.mark(), 0);
        s.snd_nxt = 10; // 0..9 sent
        s.now = 40 * MS;
        // A SACK-only ACK does not pass the mark.
        assert!(!e.on_ack(&s, 40 * MS as i64));
        s.snd_una = 1;
        assert!(e.on_ack(&s, 40 * MS as i64), "segment 0 acked");
        assert_eq!(e.mark(), 10, "the next new segment is marked");
        for una in [2, 5, 9, 10] {
            s.snd_una = una;
            assert!(!e.on_ack(&s, 40 * MS as i64), "snd_una {una} has not passed mark 10");
        }
        s.snd_nxt = 20;
        s.snd_una = 12;
        assert!(e.on_ack(&s, 40 * MS as i64), "segment 10 acked");
        assert_eq!(e.mark(), 20);
        // Again on the same snd_una: nothing new.
        assert!(!e.on_ack(&s, -1));
        assert_eq!(e.measurements, 2);
    }

    #[test]
    fn lifetime_and_period_min_max() {
        let mut e = Ertt::new(1.0);
        let mut s = sock();
        e.init(&s);
        s.snd_nxt = 100;
        s.now = 1000 * MS;
        // No sample yet: nothing is folded.
        e.on_ack(&s, -1);
        assert_eq!((e.rtt, e.minrtt, e.maxrtt, e.maxrtt_in_rtt, e.minrtt_in_rtt), (0, 0, 0, 0, NO_MIN));
        for r in [50, 45, 70, 60] {
            e.on_ack(&s, r * MS as i64);
        }
        // rtt_ticks = r + 1 at a tick-aligned now.
        assert_eq!((e.rtt, e.minrtt, e.maxrtt), (61, 46, 71));
        assert_eq!(e.take_period(), (71, 46));
        assert_eq!((e.maxrtt_in_rtt, e.minrtt_in_rtt), (0, NO_MIN));
        // An ACK without a sample folds the latest RTT (FreeBSD reads the stale e_t->rtt).
        e.on_ack(&s, -1);
        assert_eq!(e.take_period(), (61, 61));
        e.on_ack(&s, 52 * MS as i64);
        e.on_ack(&s, 55 * MS as i64);
        assert_eq!(e.take_period(), (56, 53));
        // Lifetime extremes never expire.
        assert_eq!((e.minrtt, e.maxrtt), (46, 71));
    }

    #[test]
    fn recovery_counts_until_the_recovery_point() {
        let mut e = Ertt::new(1.0);
        let mut s = sock();
        e.init(&s);
        s.snd_nxt = 30;
        s.snd_una = 10;
        e.set_state(&s, CaState::Cwr);
        s.ca_state = CaState::Cwr;
        assert!(e.in_recovery(&s) && e.in_cong_recovery(&s));
        s.snd_una = 30; // the stack leaves CWR on this ACK, after pkts_acked
        assert!(!e.in_recovery(&s) && !e.in_cong_recovery(&s));
        s.snd_una = 10;
        s.ca_state = CaState::Recovery;
        e.set_state(&s, CaState::Recovery);
        assert!(e.in_recovery(&s) && !e.in_cong_recovery(&s));
        s.ca_state = CaState::Loss;
        assert!(!e.in_recovery(&s), "an RTO leaves recovery in FreeBSD");
    }
}
