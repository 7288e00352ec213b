//! YeAH-TCP as Linux implements it (net/ipv4/tcp_yeah.c; Baiocchi, Castellani & Vacirca,
//! "YeAH-TCP: Yet Another Highspeed TCP", PFLDnet 2007).
//!
//! Two modes, chosen once per RTT from Vegas's measurements (Linux reuses tcp_vegas.c's
//! state and helpers; here [`VegasState`]):
//! - "fast" (Scalable-like): +1 packet per min(cwnd, 100) ACKed packets, while the estimated
//!   queue Q = cwnd (rtt - baseRTT) / rtt is at most `TCP_YEAH_ALPHA` = 80 packets and the
//!   queueing delay at most baseRTT / `TCP_YEAH_PHY` = 1/8 of it;
//! - "slow" (Reno) otherwise. In slow mode with Q > 80, a precautionary decongestion removes Q
//!   packets (at most half of cwnd, never below `reno_count`) and sets ssthresh to the result.
//! On loss, ssthresh = cwnd - max(min(Q, cwnd / 2), cwnd / 8) unless slow mode has lasted
//! `TCP_YEAH_RHO` = 16 RTTs (then a Reno halving). Linux has no module parameters for YeAH;
//! its constants are constants here too.
//!
//! RTTs: the stack's sample (ns) truncated to microseconds, as Linux's `rtt_us`.

use super::vegas::{after, VegasState};
use super::{AckSample, AlgorithmInfo, CaEvent, CaState, CongestionControl, ParamSpec, SockState};

pub const PARAMS: &[ParamSpec] = &[];

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    name: "yeah",
    summary: "YeAH-TCP: Scalable growth while Vegas's queue estimate is small, Reno otherwise, with precautionary decongestion and a queue-sized loss cut",
    source: "Baiocchi, Castellani & Vacirca, PFLDnet 2007; Linux net/ipv4/tcp_yeah.c (with tcp_vegas.c)",
    params: PARAMS,
};

/// Packets queued at the bottleneck above which YeAH is in slow mode.
pub const TCP_YEAH_ALPHA: u32 = 80;
/// Fraction of the queue removed per RTT by decongestion (1: all of it).
pub const TCP_YEAH_GAMMA: u32 = 1;
/// log2 of the minimum fraction of cwnd removed on loss (1/8).
pub const TCP_YEAH_DELTA: u32 = 3;
/// log2 of the maximum fraction of cwnd removed by decongestion (1/2).
pub const TCP_YEAH_EPSILON: u32 = 1;
/// Queueing delay above baseRTT / PHY means slow mode.
pub const TCP_YEAH_PHY: u32 = 8;
/// RTTs of slow mode after which a loss halves (competing with Reno flows).
pub const TCP_YEAH_RHO: u32 = 16;
/// Fast-mode RTTs after which reno_count is reset.
pub const TCP_YEAH_ZETA: u32 = 50;
/// Scalable's additive-increase count.
pub const TCP_SCALABLE_AI_CNT: u32 = 100;

/// Linux `struct yeah`.
#[derive(Debug, Clone, Default)]
pub struct Yeah {
    pub vegas: VegasState,
    /// The queue estimate of the last RTT, packets.
    pub last_q: u32,
    /// RTTs in slow (Reno) mode in a row; 0 = fast mode.
    pub doing_reno_now: u32,
    /// Estimated window of competing Reno flows: the floor of decongestion.
    pub reno_count: u32,
    /// Fast-mode RTTs since the last reset.
    pub fast_count: u32,
}

impl Yeah {
    pub fn new() -> Self {
        Yeah::default()
    }
}

impl CongestionControl for Yeah {
    fn name(&self) -> &'static str {
        "yeah"
    }

    /// tcp_yeah_init.
    fn init(&mut self, s: &mut SockState) {
        self.vegas.init(s);
        self.doing_reno_now = 0;
        self.last_q = 0;
        self.reno_count = 2;
        // "Ensure the MD arithmetic works."
        s.cwnd_clamp = s.cwnd_clamp.min(0xffff_ffff / 128);
    }

    /// tcp_yeah_ssthresh.
    fn ssthresh(&mut self, s: &mut SockState) -> u32 {
        let reduction = if self.doing_reno_now < TCP_YEAH_RHO {
            self.last_q.min((s.cwnd >> 1).max(2)).max(s.cwnd >> TCP_YEAH_DELTA)
        } else {
            (s.cwnd >> 1).max(2)
        };
        self.fast_count = 0;
        self.reno_count = (self.reno_count >> 1).max(2);
        // max_t(int, cwnd - reduction, 2)
        (s.cwnd.wrapping_sub(reduction) as i32).max(2) as u32
    }

    /// tcp_yeah_cong_avoid.
    fn cong_avoid(&mut self, s: &mut SockState, mut acked: u32) {
        if !s.cwnd_limited() {
            return;
        }
        let mut grow = true;
        if s.in_slow_start() {
            acked = s.slow_start(acked);
            grow = acked != 0; // else goto do_vegas
        }
        if grow {
            if self.doing_reno_now == 0 {
                // Scalable.
                let w = s.cwnd.min(TCP_SCALABLE_AI_CNT);
                s.cong_avoid_ai(w, acked);
            } else {
                // Reno.
                let w = s.cwnd;
                s.cong_avoid_ai(w, acked);
            }
        }
        // do_vegas: once per RTT.
        if after(s.snd_una, self.vegas.beg_snd_nxt) {
            if self.vegas.cnt_rtt > 2 {
                let rtt = self.vegas.min_rtt;
                let base = self.vegas.base_rtt;
                // Packets queued: cwnd (rtt - baseRTT) / rtt (u64, then u32).
                let queue = ((s.cwnd as u64 * rtt.wrapping_sub(base) as u64) / rtt as u64) as u32;
                if queue > TCP_YEAH_ALPHA || rtt.wrapping_sub(base) > base / TCP_YEAH_PHY {
                    // Slow mode; precautionary decongestion when the queue is long.
                    if queue > TCP_YEAH_ALPHA && s.cwnd > self.reno_count {
                        let reduction = (queue / TCP_YEAH_GAMMA).min(s.cwnd >> TCP_YEAH_EPSILON);
                        s.cwnd -= reduction;
                        s.cwnd = s.cwnd.max(self.reno_count);
                        s.ssthresh = s.cwnd;
                    }
                    if self.reno_count <= 2 {
                        self.reno_count = (s.cwnd >> 1).max(2);
                    } else {
                        self.reno_count += 1;
                    }
                    self.doing_reno_now = (self.doing_reno_now + 1).min(0xff_ffff);
                } else {
                    // Fast mode.
                    self.fast_count += 1;
                    if self.fast_count > TCP_YEAH_ZETA {
                        self.reno_count = 2;
                        self.fast_count = 0;
                    }
                    self.doing_reno_now = 0;
                }
                self.last_q = queue;
            }
            self.vegas.beg_snd_una = self.vegas.beg_snd_nxt;
            self.vegas.beg_snd_nxt = s.snd_nxt;
            self.vegas.beg_snd_cwnd = s.cwnd;
            self.vegas.cnt_rtt = 0;
            self.vegas.min_rtt = 0x7fff_ffff;
        }
    }

    /// tcp_vegas_pkts_acked.
    fn pkts_acked(&mut self, _s: &mut SockState, sample: &AckSample) {
        self.vegas.pkts_acked(sample);
    }

    /// tcp_vegas_state.
    fn set_state(&mut self, s: &mut SockState, new: CaState) {
        self.vegas.state(s, new);
    }

    /// tcp_vegas_cwnd_event.
    fn cwnd_event(&mut self, s: &mut SockState, ev: CaEvent) {
        self.vegas.cwnd_event(s, ev);
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
        AckSample { pkts_acked: 1, rtt: rtt_us * US as i64, ..AckSample::default() }
    }

    /// A YeAH at the end of an RTT (snd_una past beg_snd_nxt = 100) with base RTT `base` us and
    /// three samples of `rtt` us in the RTT.
    fn primed(s: &mut SockState, base: i64, rtt: i64) -> Yeah {
        let mut y = Yeah::new();
        s.snd_nxt = 100;
        y.init(s);
        y.pkts_acked(s, &ack(base));
        y.vegas.min_rtt = 0x7fff_ffff;
        y.vegas.cnt_rtt = 0;
        for _ in 0..3 {
            y.pkts_acked(s, &ack(rtt));
        }
        s.snd_una = 101;
        s.snd_nxt = 300;
        y
    }

    #[test]
    fn low_queue_and_delay_is_fast_mode_with_scalable_growth() {
        // cwnd 200, base 40,001, rtt 44,001 (delay 4000 <= 40001 / 8 = 5000):
        // Q = 200 x 4000 / 44001 = 18 <= 80: fast.
        let mut s = sock(200, 100);
        let mut y = primed(&mut s, 40_000, 44_000);
        s.cwnd_cnt = 99;
        y.cong_avoid(&mut s, 1);
        // Scalable: +1 per min(200, 100) = 100 packets.
        assert_eq!(s.cwnd, 201);
        assert_eq!((y.doing_reno_now, y.last_q, y.fast_count, y.reno_count), (0, 18, 1, 2));
        // The next RTT ends at snd_nxt = 300; the counters are wiped.
        assert_eq!((y.vegas.beg_snd_una, y.vegas.beg_snd_nxt, y.vegas.beg_snd_cwnd, y.vegas.cnt_rtt), (100, 300, 201, 0));
        // Within the RTT: growth only, no mode decision.
        s.snd_una = 200;
        for _ in 0..100 {
            y.cong_avoid(&mut s, 1);
        }
        assert_eq!((s.cwnd, y.fast_count), (202, 1));
    }

    #[test]
    fn queueing_delay_above_an_eighth_of_base_is_slow_mode_with_reno_growth() {
        // rtt 46,001: delay 6000 > 5000, Q = 200 x 6000 / 46001 = 26 <= 80: slow, no decongestion.
        let mut s = sock(200, 100);
        let mut y = primed(&mut s, 40_000, 46_000);
        y.cong_avoid(&mut s, 1);
        assert_eq!((s.cwnd, s.ssthresh), (200, 100));
        assert_eq!((y.doing_reno_now, y.last_q), (1, 26));
        // reno_count was 2: set to cwnd / 2.
        assert_eq!(y.reno_count, 100);
        // Reno growth now: +1 per cwnd = 200 packets (not per 100).
        s.snd_una = 200;
        s.cwnd_cnt = 0;
        for _ in 0..199 {
            y.cong_avoid(&mut s, 1);
        }
        assert_eq!(s.cwnd, 200);
        y.cong_avoid(&mut s, 1);
        assert_eq!(s.cwnd, 201);
    }

    #[test]
    fn a_long_queue_triggers_precautionary_decongestion() {
        // cwnd 300, base 40,001, rtt 60,001: Q = 300 x 20000 / 60001 = 99 > 80.
        let mut s = sock(300, 100);
        let mut y = primed(&mut s, 40_000, 60_000);
        y.cong_avoid(&mut s, 1); // fast mode at first: +1 per 100 packets, cnt 1
        // reduction = min(99, 300 >> 1) = 99: cwnd 201, ssthresh 201.
        assert_eq!((s.cwnd, s.ssthresh), (201, 201));
        assert_eq!((y.doing_reno_now, y.last_q, y.reno_count), (1, 99, 100));
        // Decongestion never goes below reno_count.
        let mut s = sock(300, 100);
        let mut y = primed(&mut s, 40_000, 60_000);
        y.reno_count = 250;
        y.cong_avoid(&mut s, 1);
        assert_eq!((s.cwnd, s.ssthresh, y.reno_count), (250, 250, 251));
        // At most half of cwnd: cwnd 150, rtt 400,001: Q = 150 x 360000 / 400001 = 134;
        // reduction = min(134, 75) = 75.
        let mut s = sock(150, 100);
        let mut y = primed(&mut s, 40_000, 400_000);
        y.cong_avoid(&mut s, 1);
        assert_eq!((s.cwnd, y.last_q), (75, 134));
    }

    #[test]
    fn loss_removes_the_queue_between_an_eighth_and_a_half_of_cwnd() {
        let mut s = sock(200, 100);
        let mut y = Yeah::new();
        y.init(&mut s);
        y.reno_count = 40;
        y.fast_count = 7;
        // Q = 30: 200 - max(min(30, 100), 25) = 170.
        y.last_q = 30;
        assert_eq!(y.ssthresh(&mut s), 170);
        assert_eq!((y.fast_count, y.reno_count), (0, 20));
        // Q = 10 < cwnd / 8: 200 - 25 = 175.
        y.last_q = 10;
        assert_eq!(y.ssthresh(&mut s), 175);
        // Q = 150 > cwnd / 2: 200 - 100 = 100.
        y.last_q = 150;
        assert_eq!(y.ssthresh(&mut s), 100);
        // After RHO = 16 slow-mode RTTs in a row: Reno's halving whatever Q.
        y.last_q = 10;
        y.doing_reno_now = 16;
        assert_eq!(y.ssthresh(&mut s), 100);
        y.doing_reno_now = 15;
        assert_eq!(y.ssthresh(&mut s), 175);
        // Never below 2; reno_count never below 2.
        s.cwnd = 2;
        y.last_q = 5;
        assert_eq!(y.ssthresh(&mut s), 2);
        assert_eq!(y.reno_count, 2);
    }

    #[test]
    fn fifty_fast_rtts_reset_reno_count() {
        let mut s = sock(200, 100);
        let mut y = primed(&mut s, 40_000, 40_000);
        y.reno_count = 77;
        y.fast_count = 50;
        y.cong_avoid(&mut s, 1);
        assert_eq!((y.reno_count, y.fast_count), (2, 0));
    }

    #[test]
    fn init_clamps_cwnd_and_state_and_events_are_vegas() {
        let mut s = sock(10, 100);
        let mut y = Yeah::new();
        y.init(&mut s);
        assert_eq!(s.cwnd_clamp, 0xffff_ffff / 128);
        assert_eq!((y.vegas.base_rtt, y.vegas.doing_vegas_now, y.reno_count), (0x7fff_ffff, true, 2));
        y.set_state(&mut s, CaState::Loss);
        assert!(!y.vegas.doing_vegas_now);
        s.prior_cwnd = 30;
        assert_eq!(y.undo_cwnd(&mut s), 30);
    }
}
