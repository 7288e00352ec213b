//! TCP-Illinois as Linux implements it (net/ipv4/tcp_illinois.c; Liu, Basar & Srikant,
//! "TCP-Illinois: A Loss and Delay-Based Congestion Control Algorithm for High-Speed
//! Networks", Performance Evaluation 65(6-7), 2008).
//!
//! AIMD whose increase alpha and decrease beta depend on the queueing delay, updated once per
//! RTT from the average RTT of that RTT (da = avg - base) and the largest queueing delay seen
//! (dm = max - base):
//! - alpha = 10 while da <= dm / 100 (after `theta` such RTTs once the delay has been above),
//!   falling as k1 / (k2 + da) to 0.3 at da = dm (`ALPHA_SHIFT` = 7 fixed point: 1280 .. 38);
//! - beta = 1/8 while da <= dm / 10, 1/2 from da >= 8 dm / 10, linear in between (`BETA_SHIFT`
//!   = 6: 8 .. 32 of 64).
//! Below `win_thresh` packets alpha = 1 and beta = 1/2 (Reno). Growth: cwnd += alpha / cwnd per
//! ACKed packet; loss: ssthresh = cwnd - cwnd x beta.
//!
//! RTTs: the stack's sample (ns) truncated to microseconds, as Linux's `rtt_us`.

use super::vegas::{after, rtt_us};
use super::{AckSample, AlgorithmInfo, CaState, CongestionControl, ParamSpec, Params, SockState};

pub const PARAMS: &[ParamSpec] = &[
    ParamSpec::int("win_thresh", 15.0, 0.0, 1_000_000.0, "pkts", "Window below which alpha = 1 and beta = 1/2, as Reno (tcp_illinois.c `win_thresh`, \"window threshold for starting adaptive sizing\")."),
    ParamSpec::int("theta", 5.0, 0.0, 255.0, "RTTs", "Low-delay RTTs in a row before alpha returns to its maximum (tcp_illinois.c `theta`, \"# of fast RTT's before full growth\"; Linux counts them in a u8)."),
];

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    name: "illinois",
    summary: "Loss- and delay-based AIMD: increase 10 .. 0.3 packets per RTT and decrease 1/8 .. 1/2 set by the queueing delay",
    source: "Liu, Basar & Srikant, Performance Evaluation 2008; Linux net/ipv4/tcp_illinois.c",
    params: PARAMS,
};

pub const ALPHA_SHIFT: u32 = 7;
pub const ALPHA_SCALE: u32 = 1 << ALPHA_SHIFT;
/// ~0.3 (38/128).
pub const ALPHA_MIN: u32 = (3 * ALPHA_SCALE) / 10;
/// 10.0.
pub const ALPHA_MAX: u32 = 10 * ALPHA_SCALE;
pub const ALPHA_BASE: u32 = ALPHA_SCALE;
/// RTTs are clamped to U32_MAX / ALPHA_MAX us (3.3 s), so that the alpha arithmetic fits u32.
pub const RTT_MAX: u32 = u32::MAX / ALPHA_MAX;
pub const BETA_SHIFT: u32 = 6;
pub const BETA_SCALE: u32 = 1 << BETA_SHIFT;
/// 0.125.
pub const BETA_MIN: u32 = BETA_SCALE / 8;
/// 0.5.
pub const BETA_MAX: u32 = BETA_SCALE / 2;
pub const BETA_BASE: u32 = BETA_MAX;

#[derive(Debug, Clone)]
pub struct IllinoisConfig {
    pub win_thresh: u32,
    pub theta: u32,
}

impl IllinoisConfig {
    pub fn from_params(p: &Params) -> Self {
        IllinoisConfig { win_thresh: p.get("win_thresh") as u32, theta: p.get("theta") as u32 }
    }
}

impl Default for IllinoisConfig {
    fn default() -> Self {
        Self::from_params(&Params::defaults(PARAMS))
    }
}

/// Linux `struct illinois` (with the module parameters).
pub struct Illinois {
    cfg: IllinoisConfig,
    /// Sum of the RTTs (us) within the last RTT.
    pub sum_rtt: u64,
    pub cnt_rtt: u16,
    /// Minimum RTT ever, us.
    pub base_rtt: u32,
    /// Maximum RTT ever, us.
    pub max_rtt: u32,
    /// Right edge of the current RTT.
    pub end_seq: u32,
    /// Additive increase, x 128.
    pub alpha: u32,
    /// Multiplicative decrease, x 64.
    pub beta: u32,
    /// Packets acked by the current ACK (Linux u16).
    pub acked: u16,
    pub rtt_above: bool,
    /// Low-delay RTTs in a row (Linux u8).
    pub rtt_low: u8,
}

impl Illinois {
    pub fn new(cfg: IllinoisConfig) -> Self {
        Illinois {
            cfg,
            sum_rtt: 0,
            cnt_rtt: 0,
            base_rtt: 0x7fff_ffff,
            max_rtt: 0,
            end_seq: 0,
            alpha: ALPHA_MAX,
            beta: BETA_BASE,
            acked: 0,
            rtt_above: false,
            rtt_low: 0,
        }
    }

    /// rtt_reset: a new RTT ends at snd_nxt.
    fn rtt_reset(&mut self, s: &SockState) {
        self.end_seq = s.snd_nxt;
        self.cnt_rtt = 0;
        self.sum_rtt = 0;
    }

    /// max_delay: dm, us.
    pub fn max_delay(&self) -> u32 {
        self.max_rtt.wrapping_sub(self.base_rtt)
    }

    /// avg_delay: da, us (the quotient truncated to u32, as `do_div` into a u32 return).
    pub fn avg_delay(&self) -> u32 {
        ((self.sum_rtt / self.cnt_rtt as u64) as u32).wrapping_sub(self.base_rtt)
    }

    /// alpha(): the additive increase (x 128) for average delay `da` and maximum `dm`.
    pub fn alpha_for(&mut self, da: u32, dm: u32) -> u32 {
        let d1 = dm / 100;
        if da <= d1 {
            // Never out of the low-delay zone: the maximum.
            if !self.rtt_above {
                return ALPHA_MAX;
            }
            // theta good RTTs in a row before returning to the maximum.
            self.rtt_low = self.rtt_low.wrapping_add(1);
            if (self.rtt_low as u32) < self.cfg.theta {
                return self.alpha;
            }
            self.rtt_low = 0;
            self.rtt_above = false;
            return ALPHA_MAX;
        }
        self.rtt_above = true;
        // alpha = k1 / (k2 + da): (dm - d1) amax / ((dm - d1) + (da - d1)(amax - amin) / amin).
        let dm = dm - d1;
        let da = da - d1;
        dm.wrapping_mul(ALPHA_MAX) / dm.wrapping_add(da.wrapping_mul(ALPHA_MAX - ALPHA_MIN) / ALPHA_MIN)
    }

    /// update_params: once per RTT.
    fn update_params(&mut self, s: &SockState) {
        if s.cwnd < self.cfg.win_thresh {
            self.alpha = ALPHA_BASE;
            self.beta = BETA_BASE;
        } else if self.cnt_rtt > 0 {
            let dm = self.max_delay();
            let da = self.avg_delay();
            self.alpha = self.alpha_for(da, dm);
            self.beta = beta_for(da, dm);
        }
        self.rtt_reset(s);
    }
}

/// beta(): the multiplicative decrease (x 64) for average delay `da` and maximum `dm`.
pub fn beta_for(da: u32, dm: u32) -> u32 {
    let d2 = dm / 10;
    if da <= d2 {
        return BETA_MIN;
    }
    let d3 = dm.wrapping_mul(8) / 10;
    if da >= d3 || d3 <= d2 {
        return BETA_MAX;
    }
    // b = k3 + k4 da, linear from (d2, bmin) to (d3, bmax).
    (BETA_MIN.wrapping_mul(d3).wrapping_sub(BETA_MAX.wrapping_mul(d2)).wrapping_add((BETA_MAX - BETA_MIN).wrapping_mul(da))) / (d3 - d2)
}

impl CongestionControl for Illinois {
    fn name(&self) -> &'static str {
        "illinois"
    }

    /// tcp_illinois_init.
    fn init(&mut self, s: &mut SockState) {
        self.alpha = ALPHA_MAX;
        self.beta = BETA_BASE;
        self.base_rtt = 0x7fff_ffff;
        self.max_rtt = 0;
        self.acked = 0;
        self.rtt_low = 0;
        self.rtt_above = false;
        self.rtt_reset(s);
    }

    /// tcp_illinois_ssthresh: cwnd - cwnd x beta, at least 2.
    fn ssthresh(&mut self, s: &mut SockState) -> u32 {
        s.cwnd.wrapping_sub(s.cwnd.wrapping_mul(self.beta) >> BETA_SHIFT).max(2)
    }

    /// tcp_illinois_cong_avoid.
    fn cong_avoid(&mut self, s: &mut SockState, acked: u32) {
        if after(s.snd_una, self.end_seq) {
            self.update_params(s);
        }
        // RFC 2861: grow only when cwnd is used.
        if !s.cwnd_limited() {
            return;
        }
        if s.in_slow_start() {
            s.slow_start(acked);
        } else {
            // cwnd += alpha / cwnd per packet acked (counted by pkts_acked; 1 for the next ACKs
            // without a new count).
            s.cwnd_cnt = s.cwnd_cnt.wrapping_add(self.acked as u32);
            self.acked = 1;
            let delta = s.cwnd_cnt.wrapping_mul(self.alpha) >> ALPHA_SHIFT;
            if delta >= s.cwnd {
                s.cwnd = (s.cwnd + delta / s.cwnd).min(s.cwnd_clamp);
                s.cwnd_cnt = 0;
            }
        }
    }

    /// tcp_illinois_acked.
    fn pkts_acked(&mut self, _s: &mut SockState, sample: &AckSample) {
        self.acked = sample.pkts_acked as u16;
        let rtt = rtt_us(sample);
        if rtt < 0 {
            return;
        }
        // Clamp bogus values (prevents wraparound in the alpha arithmetic).
        let rtt = (rtt as u32).min(RTT_MAX);
        if self.base_rtt > rtt {
            self.base_rtt = rtt;
        }
        if self.max_rtt < rtt {
            self.max_rtt = rtt;
        }
        self.cnt_rtt = self.cnt_rtt.wrapping_add(1);
        self.sum_rtt += rtt as u64;
    }

    /// tcp_illinois_state: on Loss (an RTO), back to Reno's values.
    fn set_state(&mut self, s: &mut SockState, new: CaState) {
        if new == CaState::Loss {
            self.alpha = ALPHA_BASE;
            self.beta = BETA_BASE;
            self.rtt_low = 0;
            self.rtt_above = false;
            self.rtt_reset(s);
        }
    }

    // undo_cwnd: tcp_reno_undo_cwnd, the trait's default.
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::US;

    fn sock(cwnd: u32, ssthresh: u32) -> SockState {
        SockState::with_window(cwnd, ssthresh)
    }

    fn ill() -> Illinois {
        Illinois::new(IllinoisConfig::default())
    }

    #[test]
    fn constants_are_linux_fixed_point() {
        assert_eq!((ALPHA_MIN, ALPHA_MAX, ALPHA_BASE), (38, 1280, 128));
        assert_eq!((BETA_MIN, BETA_MAX), (8, 32));
        assert_eq!(RTT_MAX, 3_355_443);
    }

    #[test]
    fn alpha_is_max_at_low_delay_min_at_max_delay_and_a_curve_between() {
        let mut c = ill();
        let dm = 100_000; // 100 ms of maximum queueing delay; d1 = 1000
        assert_eq!(c.alpha_for(0, dm), 1280);
        assert_eq!(c.alpha_for(1000, dm), 1280);
        assert!(!c.rtt_above);
        // da = dm: 99000 x 1280 / (99000 + 99000 x 1242 / 38) = 126720000 / 3334736 = 38
        // (38.00001): alpha_min.
        assert_eq!(c.alpha_for(dm, dm), 38);
        assert!(c.rtt_above);
        // da = 10 ms: (9000 x 1242) / 38 = 294157; 126720000 / (99000 + 294157) = 322.
        assert_eq!(c.alpha_for(10_000, dm), 322);
        // da = 2 ms: 1000 x 1242 / 38 = 32684; 126720000 / 131684 = 962.
        assert_eq!(c.alpha_for(2_000, dm), 962);
        // da = 50 ms: 49000 x 1242 / 38 = 1601526; 126720000 / 1700526 = 74.
        assert_eq!(c.alpha_for(50_000, dm), 74);
    }

    #[test]
    fn alpha_returns_to_max_only_after_theta_low_delay_rtts() {
        let mut c = ill();
        let dm = 100_000;
        c.alpha = c.alpha_for(50_000, dm); // above: 74
        assert_eq!(c.alpha, 74);
        // Four low-delay RTTs keep alpha; the fifth (theta = 5) restores the maximum.
        for _ in 0..4 {
            c.alpha = c.alpha_for(500, dm);
            assert_eq!(c.alpha, 74);
        }
        c.alpha = c.alpha_for(500, dm);
        assert_eq!(c.alpha, 1280);
        assert!(!c.rtt_above);
        assert_eq!(c.rtt_low, 0);
    }

    #[test]
    fn beta_is_an_eighth_at_low_delay_a_half_from_80_percent_and_linear_between() {
        let dm = 100_000; // d2 = 10000, d3 = 80000
        assert_eq!(beta_for(0, dm), 8);
        assert_eq!(beta_for(10_000, dm), 8);
        assert_eq!(beta_for(80_000, dm), 32);
        assert_eq!(beta_for(100_000, dm), 32);
        // (8 x 80000 - 32 x 10000 + 24 da) / 70000: da = 45000 -> (640000 - 320000 + 1080000)
        // / 70000 = 20; da = 10001 -> 560024 / 70000 = 8; da = 79999 -> 2239976 / 70000 = 31.
        assert_eq!(beta_for(45_000, dm), 20);
        assert_eq!(beta_for(10_001, dm), 8);
        assert_eq!(beta_for(79_999, dm), 31);
        // dm = 0: every delay is "low".
        assert_eq!(beta_for(0, 0), 8);
    }

    #[test]
    fn ssthresh_cuts_by_beta() {
        let mut c = ill();
        let mut s = sock(100, 50);
        c.beta = 8;
        assert_eq!(c.ssthresh(&mut s), 88); // 100 - 800 >> 6 = 100 - 12
        c.beta = 32;
        assert_eq!(c.ssthresh(&mut s), 50);
        c.beta = 20;
        assert_eq!(c.ssthresh(&mut s), 69); // 100 - 2000 >> 6 = 100 - 31
        // Never below 2: cwnd 2 at beta 1/2 gives 1 -> 2; cwnd 3 at beta 20/64 keeps 3.
        s.cwnd = 2;
        c.beta = 32;
        assert_eq!(c.ssthresh(&mut s), 2);
        s.cwnd = 3;
        c.beta = 20;
        assert_eq!(c.ssthresh(&mut s), 3);
    }

    #[test]
    fn once_per_rtt_the_average_and_maximum_delays_set_alpha_and_beta() {
        let mut c = ill();
        let mut s = sock(100, 50);
        s.snd_nxt = 10;
        c.init(&mut s);
        // RTT samples: 40 ms (base), 140 ms (max), then this RTT's 45, 50, 55 ms.
        for r in [40_000, 140_000] {
            c.pkts_acked(&mut s, &AckSample { pkts_acked: 1, rtt: r * US as i64, ..AckSample::default() });
        }
        c.cnt_rtt = 0;
        c.sum_rtt = 0;
        for r in [45_000, 50_000, 55_000] {
            c.pkts_acked(&mut s, &AckSample { pkts_acked: 2, rtt: r * US as i64 + 999, ..AckSample::default() });
        }
        assert_eq!((c.base_rtt, c.max_rtt, c.sum_rtt, c.acked), (40_000, 140_000, 150_000, 2));
        s.snd_una = 11;
        s.snd_nxt = 60;
        c.cong_avoid(&mut s, 2);
        // da = 10000, dm = 100000: alpha 322, beta 8.
        assert_eq!((c.alpha, c.beta, c.end_seq, c.cnt_rtt), (322, 8, 60, 0));
    }

    #[test]
    fn below_win_thresh_it_is_reno_and_growth_is_alpha_over_cwnd() {
        let mut c = ill();
        let mut s = sock(14, 5);
        c.init(&mut s);
        c.pkts_acked(&mut s, &AckSample { pkts_acked: 1, rtt: 40_000_000, ..AckSample::default() });
        s.snd_una = 1;
        c.cong_avoid(&mut s, 1); // end of RTT with cwnd 14 < 15
        assert_eq!((c.alpha, c.beta), (128, 32));
        // Growth with alpha = 10 (1280): cwnd_cnt x 1280 >> 7 >= cwnd after 10 packets at
        // cwnd 100: +1 (delta = 100 / 100).
        let mut s = sock(100, 50);
        let mut c = ill();
        c.init(&mut s);
        for i in 1..=10 {
            c.pkts_acked(&mut s, &AckSample { pkts_acked: 1, rtt: -1, ..AckSample::default() });
            c.cong_avoid(&mut s, 1);
            assert_eq!(s.cwnd, if i < 10 { 100 } else { 101 }, "ACK {i}");
        }
        assert_eq!(s.cwnd_cnt, 0);
        // A stretch ACK of 25 packets at alpha 10: delta = 25 x 10 = 250 -> +2 (250 / 101).
        c.pkts_acked(&mut s, &AckSample { pkts_acked: 25, rtt: -1, ..AckSample::default() });
        c.cong_avoid(&mut s, 25);
        assert_eq!(s.cwnd, 103);
    }

    #[test]
    fn loss_state_resets_to_reno_values() {
        let mut c = ill();
        let mut s = sock(100, 50);
        c.alpha = 300;
        c.beta = 10;
        c.rtt_above = true;
        c.rtt_low = 3;
        s.snd_nxt = 77;
        c.set_state(&mut s, CaState::Recovery);
        assert_eq!((c.alpha, c.beta), (300, 10));
        c.set_state(&mut s, CaState::Loss);
        assert_eq!((c.alpha, c.beta, c.rtt_above, c.rtt_low, c.end_seq), (128, 32, false, 0, 77));
        s.prior_cwnd = 120;
        assert_eq!(c.undo_cwnd(&mut s), 120);
    }

    #[test]
    fn rtts_are_clamped() {
        let mut c = ill();
        let mut s = sock(100, 50);
        c.pkts_acked(&mut s, &AckSample { pkts_acked: 1, rtt: 10_000_000_000, ..AckSample::default() });
        assert_eq!(c.max_rtt, RTT_MAX);
    }
}
