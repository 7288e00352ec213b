//! TCP Vegas as Linux implements it (net/ipv4/tcp_vegas.c, tcp_vegas.h; Brakmo & Peterson,
//! IEEE JSAC 13(8), 1995).
//!
//! Once per RTT (when the ACK passes the snd_nxt recorded at the previous adjustment), with at
//! least three RTT samples in that RTT, Vegas compares cwnd with the window the measured rate
//! would need at the base RTT: diff = cwnd (minRTT - baseRTT) / baseRTT packets, in Linux's
//! u32 arithmetic on microsecond RTTs. In congestion avoidance cwnd grows by one when
//! diff < alpha, shrinks by one when diff > beta, and holds in between; slow start ends when
//! diff > gamma, with cwnd set to the rate's window + 1. Loss is Reno's (`tcp_reno_ssthresh`).
//!
//! RTTs: the stack's sample (ns) truncated to microseconds, as Linux's `rtt_us` (Linux takes
//! the difference of two microsecond stamps, which can be 1 us more than the truncated
//! difference). Linux's `CA_EVENT_CWND_RESTART` (cwnd restart after idle) is not raised by
//! the stack; `CA_EVENT_TX_START` is, with the same effect here.
//!
//! [`VegasState`] holds `struct vegas` and the exported helpers (`tcp_vegas_init`,
//! `tcp_vegas_pkts_acked`, `tcp_vegas_state`, `tcp_vegas_cwnd_event`), which YeAH reuses as
//! Linux's tcp_yeah.c does.

use super::newreno::reno_cong_avoid;
use super::{AckSample, AlgorithmInfo, CaEvent, CaState, CongestionControl, ParamSpec, Params, SockState};

pub const PARAMS: &[ParamSpec] = &[
    ParamSpec::int("alpha", 2.0, 0.0, 1000.0, "pkts", "Lower bound of packets in the network (queued): below it cwnd grows by 1 per RTT (tcp_vegas.c `alpha`)."),
    ParamSpec::int("beta", 4.0, 0.0, 1000.0, "pkts", "Upper bound of packets in the network (queued): above it cwnd shrinks by 1 per RTT (tcp_vegas.c `beta`)."),
    ParamSpec::int("gamma", 1.0, 0.0, 1000.0, "pkts", "Slow start ends when more than gamma packets are queued (tcp_vegas.c `gamma`, \"limit on increase\")."),
];

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    name: "vegas",
    summary: "Delay-based: once per RTT, +1/-1/0 packet so that alpha..beta (2..4) packets stay queued; Reno on loss",
    source: "Brakmo & Peterson, IEEE JSAC 1995; Linux net/ipv4/tcp_vegas.c, tcp_vegas.h",
    params: PARAMS,
};

#[derive(Debug, Clone)]
pub struct VegasConfig {
    pub alpha: u32,
    pub beta: u32,
    pub gamma: u32,
}

impl VegasConfig {
    pub fn from_params(p: &Params) -> Self {
        VegasConfig { alpha: p.get("alpha") as u32, beta: p.get("beta") as u32, gamma: p.get("gamma") as u32 }
    }
}

impl Default for VegasConfig {
    fn default() -> Self {
        Self::from_params(&Params::defaults(PARAMS))
    }
}

/// Linux `after(seq1, seq2)`: seq1 is later than seq2 in 32-bit sequence space.
#[inline]
pub(crate) fn after(seq1: u32, seq2: u32) -> bool {
    (seq2.wrapping_sub(seq1) as i32) < 0
}

/// The stack's RTT sample (ns, -1 for none) as Linux's `rtt_us` (s32 microseconds, truncated).
#[inline]
pub(crate) fn rtt_us(sample: &AckSample) -> i32 {
    if sample.rtt < 0 {
        -1
    } else {
        (sample.rtt / 1000).min(i32::MAX as i64) as i32
    }
}

/// Linux `struct vegas` (tcp_vegas.h) and the helpers tcp_vegas.c exports.
#[derive(Debug, Clone, Default)]
pub struct VegasState {
    /// Right edge (snd_nxt) at the last adjustment.
    pub beg_snd_nxt: u32,
    /// Left edge during the last RTT (kept by YeAH).
    pub beg_snd_una: u32,
    /// cwnd at the last adjustment (kept by YeAH).
    pub beg_snd_cwnd: u32,
    pub doing_vegas_now: bool,
    /// RTT samples within the last RTT (Linux u16).
    pub cnt_rtt: u16,
    /// Minimum RTT within the last RTT, us (+1).
    pub min_rtt: u32,
    /// Minimum RTT ever, us (+1).
    pub base_rtt: u32,
}

impl VegasState {
    /// vegas_enable: take samples from the next window on.
    pub fn enable(&mut self, s: &SockState) {
        self.doing_vegas_now = true;
        self.beg_snd_nxt = s.snd_nxt;
        self.cnt_rtt = 0;
        self.min_rtt = 0x7fff_ffff;
    }

    /// vegas_disable.
    pub fn disable(&mut self) {
        self.doing_vegas_now = false;
    }

    /// tcp_vegas_init.
    pub fn init(&mut self, s: &SockState) {
        self.base_rtt = 0x7fff_ffff;
        self.enable(s);
    }

    /// tcp_vegas_pkts_acked: vrtt = rtt_us + 1 (never zero); min over the RTT and forever.
    pub fn pkts_acked(&mut self, sample: &AckSample) {
        let rtt = rtt_us(sample);
        if rtt < 0 {
            return;
        }
        let vrtt = rtt as u32 + 1;
        if vrtt < self.base_rtt {
            self.base_rtt = vrtt;
        }
        self.min_rtt = self.min_rtt.min(vrtt);
        self.cnt_rtt = self.cnt_rtt.wrapping_add(1);
    }

    /// tcp_vegas_state: Vegas runs in Open only.
    pub fn state(&mut self, s: &SockState, new: CaState) {
        if new == CaState::Open {
            self.enable(s);
        } else {
            self.disable();
        }
    }

    /// tcp_vegas_cwnd_event: restart from a clean slate on CA_EVENT_TX_START (and Linux's
    /// CA_EVENT_CWND_RESTART, which the stack does not raise).
    pub fn cwnd_event(&mut self, s: &SockState, ev: CaEvent) {
        if ev == CaEvent::TxStart {
            self.init(s);
        }
    }
}

/// Linux `tcp_current_ssthresh` outside a cwnd reduction (Vegas's cong_avoid runs in Open or
/// Disorder): max(ssthresh, 3/4 cwnd).
fn current_ssthresh(s: &SockState) -> u32 {
    if matches!(s.ca_state, CaState::Cwr | CaState::Recovery) {
        s.ssthresh
    } else {
        s.ssthresh.max((s.cwnd >> 1) + (s.cwnd >> 2))
    }
}

/// The Vegas "Diff" in packets: cwnd x (rtt - baseRTT) / baseRTT in u32, as tcp_vegas_cong_avoid.
pub fn vegas_diff(cwnd: u32, rtt: u32, base_rtt: u32) -> u32 {
    cwnd.wrapping_mul(rtt.wrapping_sub(base_rtt)) / base_rtt
}

pub struct Vegas {
    cfg: VegasConfig,
    pub v: VegasState,
}

impl Vegas {
    pub fn new(cfg: VegasConfig) -> Self {
        Vegas { cfg, v: VegasState::default() }
    }
}

impl CongestionControl for Vegas {
    fn name(&self) -> &'static str {
        "vegas"
    }

    /// tcp_vegas_init.
    fn init(&mut self, s: &mut SockState) {
        self.v.init(s);
    }

    /// tcp_reno_ssthresh.
    fn ssthresh(&mut self, s: &mut SockState) -> u32 {
        (s.cwnd >> 1).max(2)
    }

    /// tcp_vegas_cong_avoid.
    fn cong_avoid(&mut self, s: &mut SockState, acked: u32) {
        if !self.v.doing_vegas_now {
            reno_cong_avoid(s, acked);
            return;
        }
        let ack = s.snd_una;
        if after(ack, self.v.beg_snd_nxt) {
            // The once-per-RTT adjustment; the next one at the end of the window sent now.
            self.v.beg_snd_nxt = s.snd_nxt;
            if self.v.cnt_rtt <= 2 {
                // Too few samples (one delayed ACK per RTT): Reno.
                reno_cong_avoid(s, acked);
            } else {
                let rtt = self.v.min_rtt;
                let base = self.v.base_rtt;
                // target_cwnd = cwnd x baseRTT / rtt (u64), the window of the actual rate.
                let target_cwnd = (s.cwnd as u64 * base as u64) / rtt as u64;
                let diff = vegas_diff(s.cwnd, rtt, base);
                if diff > self.cfg.gamma && s.in_slow_start() {
                    // Going too fast: leave slow start at the actual rate's window (+1).
                    s.cwnd = s.cwnd.min(target_cwnd as u32 + 1);
                    s.ssthresh = s.ssthresh.min(s.cwnd); // tcp_vegas_ssthresh
                } else if s.in_slow_start() {
                    s.slow_start(acked);
                } else if diff > self.cfg.beta {
                    s.cwnd -= 1;
                    s.ssthresh = s.ssthresh.min(s.cwnd);
                } else if diff < self.cfg.alpha {
                    s.cwnd += 1;
                }
                if s.cwnd < 2 {
                    s.cwnd = 2;
                } else if s.cwnd > s.cwnd_clamp {
                    s.cwnd = s.cwnd_clamp;
                }
                s.ssthresh = current_ssthresh(s);
            }
            // Wipe the slate clean for the next RTT.
            self.v.cnt_rtt = 0;
            self.v.min_rtt = 0x7fff_ffff;
        } else if s.in_slow_start() {
            s.slow_start(acked);
        }
    }

    fn pkts_acked(&mut self, _s: &mut SockState, sample: &AckSample) {
        self.v.pkts_acked(sample);
    }

    fn set_state(&mut self, s: &mut SockState, new: CaState) {
        self.v.state(s, new);
    }

    fn cwnd_event(&mut self, s: &mut SockState, ev: CaEvent) {
        self.v.cwnd_event(s, ev);
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

    fn ack(rtt_us: i64) -> AckSample {
        AckSample { pkts_acked: 1, rtt: if rtt_us < 0 { -1 } else { rtt_us * US as i64 }, ..AckSample::default() }
    }

    /// A Vegas whose window ends at snd_nxt = 100, with `n` samples of `rtt_us` in the RTT and
    /// base RTT `base_us` (all in us as Linux sees them, before the +1).
    fn primed(s: &mut SockState, base_us: i64, rtt_us_: i64, n: usize) -> Vegas {
        let mut v = Vegas::new(VegasConfig::default());
        s.snd_nxt = 100;
        v.init(s);
        v.pkts_acked(s, &ack(base_us));
        v.v.min_rtt = 0x7fff_ffff;
        v.v.cnt_rtt = 0;
        for _ in 0..n {
            v.pkts_acked(s, &ack(rtt_us_));
        }
        s.snd_una = 101;
        s.snd_nxt = 150;
        v
    }

    #[test]
    fn samples_are_microseconds_plus_one() {
        let mut s = sock(10, 5);
        let mut v = Vegas::new(VegasConfig::default());
        v.init(&mut s);
        // 40,000,999 ns -> 40,000 us -> vrtt 40,001.
        v.pkts_acked(&mut s, &AckSample { rtt: 40_000_999, ..AckSample::default() });
        assert_eq!((v.v.base_rtt, v.v.min_rtt, v.v.cnt_rtt), (40_001, 40_001, 1));
        // A zero RTT counts as 1 us; no sample (-1) is ignored.
        v.pkts_acked(&mut s, &AckSample { rtt: 999, ..AckSample::default() });
        v.pkts_acked(&mut s, &AckSample { rtt: -1, ..AckSample::default() });
        assert_eq!((v.v.base_rtt, v.v.min_rtt, v.v.cnt_rtt), (1, 1, 2));
    }

    #[test]
    fn diff_is_integer_packets_from_microseconds() {
        // 30 x (44,001 - 40,001) / 40,001 = 120,000 / 40,001 = 2 (truncated).
        assert_eq!(vegas_diff(30, 44_001, 40_001), 2);
        // 30 x 5,334 / 40,001 = 4.0002 -> 4; 30 x 5,335 / 40,001 -> 4; 30 x 6,667 / 40,001 = 5.
        assert_eq!(vegas_diff(30, 45_335, 40_001), 4);
        assert_eq!(vegas_diff(30, 46_668, 40_001), 5);
        assert_eq!(vegas_diff(30, 40_001, 40_001), 0);
    }

    #[test]
    fn congestion_avoidance_steps_by_one_against_alpha_and_beta() {
        // cwnd 30 in congestion avoidance; baseRTT 40,001 (40,000 us + 1).
        for (rtt, want_cwnd) in [
            (41_000, 31), // diff = 30 x 1000 / 40001 = 0 < alpha = 2: +1
            (42_000, 31), // diff = 60000 / 40001 = 1 < 2: +1
            (42_700, 30), // diff = 81000 / 40001 = 2: alpha <= diff <= beta: hold
            (45_400, 30), // diff = 162000 / 40001 = 4: hold
            (46_700, 29), // diff = 201000 / 40001 = 5 > beta = 4: -1
        ] {
            let mut s = sock(30, 20);
            let mut v = primed(&mut s, 40_000, rtt, 3);
            v.cong_avoid(&mut s, 1);
            assert_eq!(s.cwnd, want_cwnd, "rtt {rtt}");
            // The slate is wiped and the next window ends at the current snd_nxt.
            assert_eq!((v.v.cnt_rtt, v.v.min_rtt, v.v.beg_snd_nxt), (0, 0x7fff_ffff, 150));
        }
    }

    #[test]
    fn a_decrease_pulls_ssthresh_down_and_ssthresh_follows_three_quarters_cwnd() {
        let mut s = sock(30, 100);
        s.ssthresh = 29; // in congestion avoidance (cwnd >= ssthresh)
        let mut v = primed(&mut s, 40_000, 47_000, 3);
        v.cong_avoid(&mut s, 1);
        assert_eq!(s.cwnd, 29);
        // tcp_vegas_ssthresh: min(29, 29) = 29; then tcp_current_ssthresh = max(29, 14 + 7).
        assert_eq!(s.ssthresh, 29);
        let mut s = sock(40, 10);
        let mut v = primed(&mut s, 40_000, 43_000, 3); // diff = 40 x 3000 / 40001 = 2: hold
        v.cong_avoid(&mut s, 1);
        assert_eq!((s.cwnd, s.ssthresh), (40, 30)); // max(10, 20 + 10)
    }

    #[test]
    fn slow_start_ends_when_diff_exceeds_gamma_at_the_rate_window_plus_one() {
        // cwnd 60 in slow start, rtt 50,000 vs base 40,000: diff = 60 x 10000 / 40001 = 14 > 1.
        let mut s = sock(60, crate::cc::INFINITE_SSTHRESH);
        let mut v = primed(&mut s, 40_000, 49_999, 3);
        v.cong_avoid(&mut s, 2);
        // target = 60 x 40001 / 50000 = 48 (48.0012); cwnd = min(60, 49) = 49.
        // ssthresh = min(inf, 49) = 49, then max(49, 24 + 12) = 49.
        assert_eq!((s.cwnd, s.ssthresh), (49, 49));
        // diff = 1 (not > gamma): slow start continues.
        let mut s = sock(40, crate::cc::INFINITE_SSTHRESH);
        let mut v = primed(&mut s, 40_000, 41_500, 3); // diff = 40 x 1500 / 40001 = 1
        v.cong_avoid(&mut s, 2);
        assert_eq!(s.cwnd, 42);
        assert_eq!(s.ssthresh, crate::cc::INFINITE_SSTHRESH);
        // gamma = 0: the same RTT ends slow start. target = 40 x 40001 / 41501 = 38 -> 39.
        let mut s = sock(40, crate::cc::INFINITE_SSTHRESH);
        let mut v = primed(&mut s, 40_000, 41_500, 3);
        v.cfg.gamma = 0;
        v.cong_avoid(&mut s, 2);
        assert_eq!((s.cwnd, s.ssthresh), (39, 39));
    }

    #[test]
    fn with_two_samples_or_fewer_it_is_reno_and_between_boundaries_only_slow_start() {
        let mut s = sock(30, 20);
        let mut v = primed(&mut s, 40_000, 60_000, 2);
        s.cwnd_cnt = 29;
        v.cong_avoid(&mut s, 1); // Reno: cwnd_cnt reaches 30 -> +1
        assert_eq!(s.cwnd, 31);
        // Inside the window (ack not after beg_snd_nxt = 150): no congestion-avoidance growth.
        s.snd_una = 150;
        s.cwnd_cnt = 100;
        v.cong_avoid(&mut s, 5);
        assert_eq!(s.cwnd, 31);
        // ... but slow start does grow.
        s.ssthresh = 100;
        v.cong_avoid(&mut s, 5);
        assert_eq!(s.cwnd, 36);
    }

    #[test]
    fn outside_open_it_is_reno_and_reenabling_resets_the_round() {
        let mut s = sock(30, 20);
        let mut v = primed(&mut s, 40_000, 60_000, 5);
        v.set_state(&mut s, CaState::Recovery);
        assert!(!v.v.doing_vegas_now);
        s.cwnd_cnt = 29;
        v.cong_avoid(&mut s, 1); // Reno, despite diff = 14 > beta
        assert_eq!(s.cwnd, 31);
        v.set_state(&mut s, CaState::Open);
        assert!(v.v.doing_vegas_now);
        assert_eq!((v.v.cnt_rtt, v.v.min_rtt, v.v.beg_snd_nxt, v.v.base_rtt), (0, 0x7fff_ffff, 150, 40_001));
        // TX_START forgets the base RTT too.
        v.cwnd_event(&mut s, CaEvent::TxStart);
        assert_eq!(v.v.base_rtt, 0x7fff_ffff);
    }

    #[test]
    fn loss_halves_and_undo_is_renos() {
        let mut s = sock(41, 100);
        let mut v = Vegas::new(VegasConfig::default());
        assert_eq!(v.ssthresh(&mut s), 20);
        s.cwnd = 3;
        assert_eq!(v.ssthresh(&mut s), 2);
        s.cwnd = 20;
        s.prior_cwnd = 41;
        assert_eq!(v.undo_cwnd(&mut s), 41);
    }

    #[test]
    fn after_is_sequence_space_comparison() {
        assert!(after(101, 100));
        assert!(!after(100, 100));
        assert!(after(2, u32::MAX - 2));
    }
}
