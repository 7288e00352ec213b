//! TCP-LP (Low Priority) as Linux implements it (net/ipv4/tcp_lp.c; Kuzmanovic & Knightly,
//! "TCP-LP: A Distributed Algorithm for Low Priority Data Transfer", INFOCOM 2003).
//!
//! Reno, plus an early congestion indication from one-way delays: the ACK's timestamps give a
//! relative one-way delay (OWD) = TSval x (LP_RESOL / remote HZ) - TSecr, in timestamp ticks;
//! its EWMA (gain 1/8) is compared with owd_min + 15 % (owd_max - owd_min). Above it, cwnd
//! halves, or drops to 1 packet if the previous back-off is less than an "inference time" ago
//! (3 x the time since the echoed segment was sent, a one-RTT-ish interval); no growth within
//! the inference time. Losses are Reno's.
//!
//! Everything is Linux's integer arithmetic, including its u32 wrap-arounds: the remote HZ
//! estimator (an EWMA, gain 1/64, of TCP_TS_HZ x dTSval / dTSecr between successive ACKs with
//! an RTT sample), OWD computed in u32, `sowd` kept x 8 in a u32, and the reset of owd_min /
//! owd_max to sowd / 8 and sowd / 4 on each back-off.
//!
//! Time: Linux's `tcp_time_stamp` is the sender's timestamp clock, here `now / ts_tick`
//! (the stack's TSval clock); TCP_TS_HZ (and LP_RESOL) = 1 s / ts_tick = 1000 with the default
//! 1 ms tick, as Linux. TSval / TSecr are the ACK's (`AckSample::ts_val`, `ts_ecr`), Linux's
//! `rx_opt.rcv_tsval` / `rcv_tsecr`. The receiver's clock runs at the sender's rate with an
//! arbitrary offset (below 1000 s), where Linux offsets both clocks at random over 32 bits.
//! Linux has no module parameters for LP; `owd_scale_round` is a ccsim option (below).
//!
//! What Linux's arithmetic does here (measured, 10 Mbps / 40 ms, delayed ACKs, 1 ms ticks):
//! - the remote-HZ estimate is noisy around 1000 (m = 1000 dTSval / dTSecr over successive
//!   ACKs, each delta a few ticks) and often exceeds it; LP_RESOL / remote_hz is then 0 and the
//!   OWD 0 - TSecr (about 2^32), whose x 8 wraps `sowd`: back-offs to 1 packet at random, and
//!   a single flow uses 73-78 % of the link. `owd_scale_round = true` rounds the factor to 1.
//! - the reset owd_max = sowd / 4 assumes the OWD is absolute; with the receiver's clock
//!   offset (here below 1000 s; in Linux random over 32 bits) the next threshold is out of
//!   reach, so after its first back-off LP is Reno: with `owd_scale_round` it takes 48 % against
//!   NewReno and 10-36 % against CUBIC (1 BDP buffer), not the small share of the paper.

use super::newreno::reno_cong_avoid;
use super::{AckSample, AlgorithmInfo, CongestionControl, ParamSpec, Params, SockState};
use crate::time::SEC;

pub const PARAMS: &[ParamSpec] = &[
    ParamSpec::flag(
        "owd_scale_round",
        false,
        "Scale the remote timestamps by LP_RESOL / remote_hz rounded to the nearest integer. Linux truncates (tcp_lp_owd_calculator): a remote-HZ estimate just above TCP_TS_HZ, which the estimator's noise gives often when both clocks tick at 1 kHz, makes the factor 0 and the OWD 0 - TSecr. A ccsim option, not a Linux one.",
    ),
];

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    name: "lp",
    summary: "TCP Low Priority: Reno that halves (or drops to 1 packet) early when the one-way delay rises above 15% of its range, to yield to other flows",
    source: "Kuzmanovic & Knightly, INFOCOM 2003; Linux net/ipv4/tcp_lp.c",
    params: PARAMS,
};

/// Linux `enum tcp_lp_state`.
pub const LP_VALID_RHZ: u32 = 1 << 0;
pub const LP_VALID_OWD: u32 = 1 << 1;
pub const LP_WITHIN_THR: u32 = 1 << 3;
pub const LP_WITHIN_INF: u32 = 1 << 4;

#[derive(Debug, Clone, Default)]
pub struct LpConfig {
    pub owd_scale_round: bool,
}

impl LpConfig {
    pub fn from_params(p: &Params) -> Self {
        LpConfig { owd_scale_round: p.flag("owd_scale_round") }
    }
    /// Linux's tcp_lp.c (the defaults).
    pub fn linux() -> Self {
        Self::from_params(&Params::defaults(PARAMS))
    }
}

/// Linux `struct lp` (and the ccsim option).
#[derive(Debug, Clone, Default)]
pub struct Lp {
    pub cfg: LpConfig,
    pub flag: u32,
    /// Smoothed OWD x 8.
    pub sowd: u32,
    pub owd_min: u32,
    pub owd_max: u32,
    pub owd_max_rsv: u32,
    /// Estimated remote timestamp clock rate, ticks per second.
    pub remote_hz: u32,
    pub remote_ref_time: u32,
    pub local_ref_time: u32,
    /// Local timestamp of the last back-off (0 = none).
    pub last_drop: u32,
    /// The inference time, local ticks.
    pub inference: u32,
}

/// Linux `TCP_TS_HZ` for the stack's timestamp tick (1000 at 1 ms).
fn ts_hz(s: &SockState) -> u32 {
    (SEC / s.ts_tick.max(1)) as u32
}

/// Linux `tcp_time_stamp(tp)`: the sender's timestamp clock.
fn time_stamp(s: &SockState) -> u32 {
    (s.now / s.ts_tick.max(1)) as u32
}

impl Lp {
    pub fn new(cfg: LpConfig) -> Self {
        let mut lp = Lp { cfg, ..Lp::default() };
        lp.reset();
        lp
    }

    /// tcp_lp_init.
    fn reset(&mut self) {
        let cfg = std::mem::take(&mut self.cfg);
        *self = Lp { cfg, owd_min: 0xffff_ffff, ..Lp::default() };
    }

    /// tcp_lp_remote_hz_estimator: remote HZ = EWMA (1/64) of TCP_TS_HZ x dTSval / dTSecr,
    /// in u32 arithmetic as Linux (`TCP_TS_HZ * (u32 - u32) / (u32 - u32)`).
    fn remote_hz_estimator(&mut self, s: &SockState, tsval: u32, tsecr: u32) -> u32 {
        let mut rhz: i64 = (self.remote_hz << 6) as i64;
        let mut m: i64;
        if !(self.remote_ref_time == 0 || self.local_ref_time == 0) && !(tsval == self.remote_ref_time || tsecr == self.local_ref_time) {
            m = (ts_hz(s).wrapping_mul(tsval.wrapping_sub(self.remote_ref_time)) / tsecr.wrapping_sub(self.local_ref_time)) as i64;
            if m < 0 {
                m = -m;
            }
            if rhz > 0 {
                m -= rhz >> 6; // the error in the estimate
                rhz += m; // 63/64 old + 1/64 new
            } else {
                rhz = m << 6;
            }
        }
        // out:
        if (rhz >> 6) > 0 {
            self.flag |= LP_VALID_RHZ;
        } else {
            self.flag &= !LP_VALID_RHZ;
        }
        self.remote_ref_time = tsval;
        self.local_ref_time = tsecr;
        (rhz >> 6) as u32
    }

    /// tcp_lp_owd_calculator: OWD = TSval x (LP_RESOL / remote_hz) - TSecr x (LP_RESOL /
    /// TCP_TS_HZ), evaluated in u32 as Linux (so it is never negative).
    fn owd_calculator(&mut self, s: &SockState, tsval: u32, tsecr: u32) -> u32 {
        self.remote_hz = self.remote_hz_estimator(s, tsval, tsecr);
        let resol = ts_hz(s); // LP_RESOL = TCP_TS_HZ
        let mut owd: i64 = 0;
        if self.flag & LP_VALID_RHZ != 0 {
            let scale = if self.cfg.owd_scale_round {
                (resol + self.remote_hz / 2) / self.remote_hz
            } else {
                resol / self.remote_hz
            };
            owd = tsval.wrapping_mul(scale).wrapping_sub(tsecr.wrapping_mul(resol / ts_hz(s))) as i64;
            if owd < 0 {
                owd = -owd;
            }
        }
        if owd > 0 {
            self.flag |= LP_VALID_OWD;
        } else {
            self.flag &= !LP_VALID_OWD;
        }
        owd as u32
    }

    /// tcp_lp_rtt_sample: the OWD's minimum, maximum (one below the largest: the largest is
    /// held in reserve) and smoothed value (x 8, gain 1/8).
    fn rtt_sample(&mut self, s: &SockState, tsval: u32, tsecr: u32) {
        let mut mowd: i64 = self.owd_calculator(s, tsval, tsecr) as i64;
        if self.flag & LP_VALID_RHZ == 0 || self.flag & LP_VALID_OWD == 0 {
            return;
        }
        if mowd < self.owd_min as i64 {
            self.owd_min = mowd as u32;
        }
        if mowd > self.owd_max as i64 {
            if mowd > self.owd_max_rsv as i64 {
                if self.owd_max_rsv == 0 {
                    self.owd_max = mowd as u32;
                } else {
                    self.owd_max = self.owd_max_rsv;
                }
                self.owd_max_rsv = mowd as u32;
            } else {
                self.owd_max = mowd as u32;
            }
        }
        if self.sowd != 0 {
            mowd -= (self.sowd >> 3) as i64;
            self.sowd = (self.sowd as i64).wrapping_add(mowd) as u32;
        } else {
            self.sowd = (mowd << 3) as u32;
        }
    }

    /// The OWD threshold of tcp_lp_pkts_acked: owd_min + 15 (owd_max - owd_min) / 100 (u32).
    pub fn threshold(&self) -> u32 {
        self.owd_min.wrapping_add(15u32.wrapping_mul(self.owd_max.wrapping_sub(self.owd_min)) / 100)
    }
}

impl CongestionControl for Lp {
    fn name(&self) -> &'static str {
        "lp"
    }

    /// tcp_lp_init.
    fn init(&mut self, _s: &mut SockState) {
        self.reset();
    }

    /// tcp_reno_ssthresh.
    fn ssthresh(&mut self, s: &mut SockState) -> u32 {
        (s.cwnd >> 1).max(2)
    }

    /// tcp_lp_cong_avoid: Reno, except within the inference time.
    fn cong_avoid(&mut self, s: &mut SockState, acked: u32) {
        if self.flag & LP_WITHIN_INF == 0 {
            reno_cong_avoid(s, acked);
        }
    }

    /// tcp_lp_pkts_acked: the early congestion indication and the back-off.
    fn pkts_acked(&mut self, s: &mut SockState, sample: &AckSample) {
        let now = time_stamp(s);
        // Linux: `if (sample->rtt_us > 0)`, rtt_us in truncated microseconds.
        if sample.rtt >= 1000 {
            self.rtt_sample(s, sample.ts_val, sample.ts_ecr);
        }
        // The inference time: 3 x the age of the echoed timestamp.
        let delta = now.wrapping_sub(sample.ts_ecr);
        if (delta as i32) > 0 {
            self.inference = delta.wrapping_mul(3);
        }
        if self.last_drop != 0 && now.wrapping_sub(self.last_drop) < self.inference {
            self.flag |= LP_WITHIN_INF;
        } else {
            self.flag &= !LP_WITHIN_INF;
        }
        if (self.sowd >> 3) < self.threshold() {
            self.flag |= LP_WITHIN_THR;
        } else {
            self.flag &= !LP_WITHIN_THR;
        }
        if self.flag & LP_WITHIN_THR != 0 {
            return;
        }
        // tcp_lp_pkts_acked (Linux's own comment there is a FIXME): reset owd_min / owd_max so
        // that they stay usable.
        self.owd_min = self.sowd >> 3;
        self.owd_max = self.sowd >> 2;
        self.owd_max_rsv = self.sowd >> 2;
        if self.flag & LP_WITHIN_INF != 0 {
            // Within the inference time of the last back-off: down to 1 packet.
            s.cwnd = 1;
        } else {
            // Halve.
            s.cwnd = (s.cwnd >> 1).max(1);
        }
        self.last_drop = now;
    }

    // undo_cwnd: tcp_reno_undo_cwnd, the trait's default.
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::MS;

    fn sock(cwnd: u32) -> SockState {
        SockState::with_window(cwnd, 5)
    }

    fn ack(tsval: u32, tsecr: u32) -> AckSample {
        AckSample { pkts_acked: 1, rtt: 40 * MS as i64, in_flight: 0, ts_val: tsval, ts_ecr: tsecr }
    }

    #[test]
    fn remote_hz_is_estimated_from_timestamp_deltas() {
        let s = sock(10);
        let mut lp = Lp::new(LpConfig::linux());
        // First sample: references only.
        lp.rtt_sample(&s, 5_000, 980);
        assert_eq!((lp.remote_hz, lp.flag & LP_VALID_RHZ), (0, 0));
        // dTSval 10, dTSecr 10: m = 1000 x 10 / 10 = 1000.
        lp.rtt_sample(&s, 5_010, 990);
        assert_eq!(lp.remote_hz, 1000);
        assert_ne!(lp.flag & LP_VALID_RHZ, 0);
        // dTSval 20, dTSecr 10: m = 2000; rhz << 6 = 64000 + (2000 - 1000) = 65000 -> 1015.
        lp.rtt_sample(&s, 5_030, 1_000);
        assert_eq!(lp.remote_hz, 1015);
        // Same TSval as the reference: no update (but the references move).
        lp.rtt_sample(&s, 5_030, 1_005);
        assert_eq!((lp.remote_hz, lp.remote_ref_time, lp.local_ref_time), (1015, 5_030, 1_005));
    }

    #[test]
    fn owd_is_tsval_minus_tsecr_at_the_local_rate_and_smoothed_by_an_eighth() {
        let s = sock(10);
        let mut lp = Lp::new(LpConfig::linux());
        lp.rtt_sample(&s, 5_000, 980);
        // remote_hz = 1000: owd = 5010 x (1000 / 1000) - 990 x 1 = 4020.
        lp.rtt_sample(&s, 5_010, 990);
        assert_eq!((lp.owd_min, lp.owd_max, lp.owd_max_rsv, lp.sowd), (4020, 4020, 4020, 4020 * 8));
        // dTSval 1001, dTSecr 1000: m = 1001, rhz << 6 = 64001 -> still 1000. owd = 4021: the
        // new largest goes to the reserve and owd_max takes the old reserve; sowd += 4021 - 4020.
        lp.rtt_sample(&s, 6_011, 1_990);
        assert_eq!(lp.remote_hz, 1000);
        assert_eq!((lp.owd_min, lp.owd_max, lp.owd_max_rsv, lp.sowd), (4020, 4020, 4021, 4020 * 8 + 1));
        // dTSval 10, dTSecr 5: rhz << 6 = 64001 + 1000 = 65001 -> 1015. LP_RESOL / remote_hz =
        // 1000 / 1015 = 0, and Linux's u32 OWD is 0 - TSecr.
        let owd = lp.owd_calculator(&s, 6_021, 1_995);
        assert_eq!(lp.remote_hz, 1015);
        assert_eq!(owd, 0u32.wrapping_sub(1_995));
    }

    #[test]
    fn the_first_valid_owd_sample_backs_off() {
        // owd_min = owd_max = sowd / 8: the threshold is the OWD itself, which is not below it.
        let mut s = sock(10);
        s.now = 1_000 * MS;
        let mut lp = Lp::new(LpConfig::linux());
        lp.pkts_acked(&mut s, &ack(5_000, 980));
        assert_eq!(s.cwnd, 10);
        lp.pkts_acked(&mut s, &ack(5_010, 990));
        assert_eq!(s.cwnd, 5);
        // Reset to sowd / 8 and sowd / 4.
        assert_eq!((lp.owd_min, lp.owd_max, lp.owd_max_rsv, lp.last_drop), (4020, 8040, 8040, 1_000));
        assert_eq!(lp.inference, 30); // 3 x (1000 - 990)
    }

    #[test]
    fn owd_scale_round_keeps_the_owd_when_remote_hz_is_estimated_just_above_1000() {
        let s = sock(10);
        let mut lp = Lp::new(LpConfig { owd_scale_round: true, ..LpConfig::linux() });
        lp.rtt_sample(&s, 5_000, 980);
        lp.rtt_sample(&s, 5_010, 990);
        // As in the test above, remote_hz becomes 1015; (1000 + 507) / 1015 = 1.
        let owd = lp.owd_calculator(&s, 5_030, 1_000);
        assert_eq!((lp.remote_hz, owd), (1015, 4030));
        // 499 Hz: (1000 + 249) / 499 = 2 (truncation also gives 2); 667 Hz: 1 (truncation 1).
        lp.remote_hz = 0;
        lp.flag = 0;
        lp.remote_ref_time = 5_000;
        lp.local_ref_time = 1_000;
        let owd = lp.owd_calculator(&s, 5_499, 2_000); // m = 1000 x 499 / 1000 = 499
        assert_eq!((lp.remote_hz, owd), (499, 5_499 * 2 - 2_000));
    }

    /// An LP whose OWD statistics are set by hand, at local time `now_ms`.
    fn lp_with(sowd: u32, owd_min: u32, owd_max: u32) -> Lp {
        Lp { sowd: sowd * 8, owd_min, owd_max, owd_max_rsv: owd_max, ..Lp::new(LpConfig::linux()) }
    }

    #[test]
    fn threshold_is_fifteen_percent_of_the_owd_range() {
        // 100 + 15 x (300 - 100) / 100 = 130.
        assert_eq!(lp_with(0, 100, 300).threshold(), 130);
        // 100 + 15 x 7 / 100 = 101 (integer).
        assert_eq!(lp_with(0, 100, 107).threshold(), 101);
        // Before any sample (min = 0xffffffff, max = 0): u32 wrap, 0xffffffff + 0: everything
        // is within.
        assert_eq!(Lp::new(LpConfig::linux()).threshold(), 0xffff_ffff);
    }

    #[test]
    fn above_the_threshold_cwnd_halves_then_drops_to_one_within_the_inference_time() {
        let mut s = sock(40);
        s.now = 10_000 * MS; // local ts 10000
        // sowd 129 < 130: within the threshold, no back-off.
        let mut lp = lp_with(129, 100, 300);
        let a = AckSample { rtt: -1, ts_ecr: 9_960, ..AckSample::default() };
        lp.pkts_acked(&mut s, &a);
        assert_eq!(s.cwnd, 40);
        assert_ne!(lp.flag & LP_WITHIN_THR, 0);
        // The inference time: 3 x (10000 - 9960) = 120 ticks.
        assert_eq!(lp.inference, 120);
        // sowd 130: not below 130: halve, and reset min/max to sowd / 8 and sowd / 4.
        let mut lp = lp_with(130, 100, 300);
        lp.pkts_acked(&mut s, &a);
        assert_eq!(s.cwnd, 20);
        assert_eq!((lp.owd_min, lp.owd_max, lp.owd_max_rsv, lp.last_drop), (130, 260, 260, 10_000));
        // No growth while within the inference time of that back-off...
        s.now = 10_100 * MS;
        lp.sowd = 140 * 8; // 140 < 130 + 15 x 130 / 100 = 149: within the threshold
        lp.pkts_acked(&mut s, &AckSample { rtt: -1, ts_ecr: 10_060, ..AckSample::default() });
        assert_ne!(lp.flag & LP_WITHIN_INF, 0); // 100 < 120
        s.ssthresh = 100;
        lp.cong_avoid(&mut s, 5);
        assert_eq!(s.cwnd, 20);
        // ... and a second indication within it drops cwnd to 1.
        s.now = 10_110 * MS;
        lp.sowd = 150 * 8;
        lp.pkts_acked(&mut s, &AckSample { rtt: -1, ts_ecr: 10_070, ..AckSample::default() });
        assert_eq!(s.cwnd, 1);
        assert_eq!(lp.last_drop, 10_110);
        // After the inference time (3 x 40 = 120 ticks): Reno growth, and a new indication
        // halves again.
        s.now = 10_240 * MS;
        lp.sowd = 150 * 8; // min 150, max 300: threshold 172
        lp.pkts_acked(&mut s, &AckSample { rtt: -1, ts_ecr: 10_200, ..AckSample::default() });
        assert_eq!(lp.flag & LP_WITHIN_INF, 0); // 130 >= 120
        lp.cong_avoid(&mut s, 3);
        assert_eq!(s.cwnd, 4);
        s.now = 10_250 * MS;
        lp.sowd = 200 * 8;
        lp.pkts_acked(&mut s, &AckSample { rtt: -1, ts_ecr: 10_210, ..AckSample::default() });
        assert_eq!(s.cwnd, 2);
    }

    #[test]
    fn halving_never_goes_below_one_and_loss_and_undo_are_renos() {
        let mut s = sock(1);
        s.now = 10_000 * MS;
        let mut lp = lp_with(500, 100, 300);
        lp.pkts_acked(&mut s, &AckSample { rtt: -1, ts_ecr: 9_960, ..AckSample::default() });
        assert_eq!(s.cwnd, 1);
        s.cwnd = 41;
        assert_eq!(lp.ssthresh(&mut s), 20);
        s.prior_cwnd = 50;
        assert_eq!(lp.undo_cwnd(&mut s), 50);
    }
}
