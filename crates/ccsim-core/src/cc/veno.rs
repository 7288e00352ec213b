//! TCP Veno as Linux implements it (net/ipv4/tcp_veno.c; Fu & Liew, IEEE JSAC 21(2), 2003).
//!
//! Veno estimates the backlog N = cwnd - cwnd x baseRTT / rtt (Vegas's Diff) in fixed point
//! with one fractional bit (`V_PARAM_SHIFT`), and compares it with beta = 3 packets:
//! - growth: Reno's below beta (non-congestive); above it, +1 only every other window;
//! - loss: ssthresh = 4/5 cwnd when the backlog was below beta (the loss is taken as random),
//!   else 1/2 cwnd.
//! The backlog is recomputed on every ACK that grows cwnd (rtt = the minimum since the last
//! such ACK, baseRTT = the minimum ever). Linux has no module parameters for Veno; beta is a
//! constant, and so it is here.
//!
//! RTTs: the stack's sample (ns) truncated to microseconds, as Linux's `rtt_us`.
//! Linux's `CA_EVENT_CWND_RESTART` is not raised by the stack; `CA_EVENT_TX_START` is.

use super::newreno::reno_cong_avoid;
use super::vegas::rtt_us;
use super::{AckSample, AlgorithmInfo, CaEvent, CaState, CongestionControl, ParamSpec, SockState};

pub const PARAMS: &[ParamSpec] = &[];

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    name: "veno",
    summary: "Reno with a Vegas backlog estimate: growth every other RTT and a 1/2 cut when >= 3 packets are queued, a 1/5 cut otherwise (random loss)",
    source: "Fu & Liew, IEEE JSAC 2003; Linux net/ipv4/tcp_veno.c",
    params: PARAMS,
};

/// Linux `V_PARAM_SHIFT`: the backlog has one fractional bit.
pub const V_PARAM_SHIFT: u32 = 1;
/// Linux `beta = 3 << V_PARAM_SHIFT`: 3 packets.
pub const BETA: u32 = 3 << V_PARAM_SHIFT;

/// Linux `struct veno`.
#[derive(Debug, Clone, Default)]
pub struct Veno {
    pub doing_veno_now: bool,
    /// RTT samples (never reset after init, as Linux: `/* veno->cntrtt = 0; */`).
    pub cntrtt: u16,
    /// Minimum RTT since the last growth decision, us (+1).
    pub minrtt: u32,
    /// Minimum RTT ever, us (+1).
    pub basertt: u32,
    /// Grow on the next full window in the congestive state.
    pub inc: bool,
    /// The backlog x 2 (`V_PARAM_SHIFT`).
    pub diff: u32,
}

impl Veno {
    pub fn new() -> Self {
        Veno::default()
    }

    /// veno_enable.
    fn enable(&mut self) {
        self.doing_veno_now = true;
        self.minrtt = 0x7fff_ffff;
    }
}

impl CongestionControl for Veno {
    fn name(&self) -> &'static str {
        "veno"
    }

    /// tcp_veno_init.
    fn init(&mut self, _s: &mut SockState) {
        self.basertt = 0x7fff_ffff;
        self.inc = true;
        self.enable();
    }

    /// tcp_veno_ssthresh: cut by 1/5 in the non-congestive state, 1/2 in the congestive one.
    fn ssthresh(&mut self, s: &mut SockState) -> u32 {
        if self.diff < BETA {
            (s.cwnd.wrapping_mul(4) / 5).max(2)
        } else {
            (s.cwnd >> 1).max(2)
        }
    }

    /// tcp_veno_cong_avoid.
    fn cong_avoid(&mut self, s: &mut SockState, mut acked: u32) {
        if !self.doing_veno_now {
            reno_cong_avoid(s, acked);
            return;
        }
        if !s.cwnd_limited() {
            return;
        }
        if self.cntrtt <= 2 {
            reno_cong_avoid(s, acked);
        } else {
            let rtt = self.minrtt;
            // target_cwnd = (cwnd x baseRTT << V_PARAM_SHIFT) / rtt in u64; diff in u32.
            let target_cwnd = ((s.cwnd as u64 * self.basertt as u64) << V_PARAM_SHIFT) / rtt as u64;
            self.diff = (s.cwnd << V_PARAM_SHIFT).wrapping_sub(target_cwnd as u32);
            let mut done = false;
            if s.in_slow_start() {
                acked = s.slow_start(acked);
                done = acked == 0;
            }
            if !done {
                if self.diff < BETA {
                    // Non-congestive: Reno's +1 per window.
                    let w = s.cwnd;
                    s.cong_avoid_ai(w, acked);
                } else if s.cwnd_cnt >= s.cwnd {
                    // Congestive: +1 every other window.
                    if self.inc && s.cwnd < s.cwnd_clamp {
                        s.cwnd += 1;
                        self.inc = false;
                    } else {
                        self.inc = true;
                    }
                    s.cwnd_cnt = 0;
                } else {
                    s.cwnd_cnt += acked;
                }
            }
            if s.cwnd < 2 {
                s.cwnd = 2;
            } else if s.cwnd > s.cwnd_clamp {
                s.cwnd = s.cwnd_clamp;
            }
        }
        // Wipe the slate clean for the next RTT (cntrtt is not reset, as in Linux).
        self.minrtt = 0x7fff_ffff;
    }

    /// tcp_veno_pkts_acked.
    fn pkts_acked(&mut self, _s: &mut SockState, sample: &AckSample) {
        let rtt = rtt_us(sample);
        if rtt < 0 {
            return;
        }
        let vrtt = rtt as u32 + 1;
        if vrtt < self.basertt {
            self.basertt = vrtt;
        }
        self.minrtt = self.minrtt.min(vrtt);
        self.cntrtt = self.cntrtt.wrapping_add(1);
    }

    /// tcp_veno_state.
    fn set_state(&mut self, _s: &mut SockState, new: CaState) {
        if new == CaState::Open {
            self.enable();
        } else {
            self.doing_veno_now = false;
        }
    }

    /// tcp_veno_cwnd_event: CA_EVENT_TX_START re-initialises.
    fn cwnd_event(&mut self, s: &mut SockState, ev: CaEvent) {
        if ev == CaEvent::TxStart {
            self.init(s);
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

    fn ack(rtt_us: i64) -> AckSample {
        AckSample { pkts_acked: 1, rtt: rtt_us * US as i64, ..AckSample::default() }
    }

    /// A Veno with base RTT `base` us and the samples since the last decision at `rtt` us.
    fn primed(s: &mut SockState, base: i64, rtt: i64) -> Veno {
        let mut v = Veno::new();
        v.init(s);
        v.pkts_acked(s, &ack(base));
        v.minrtt = 0x7fff_ffff; // the decision's minimum is over the later samples
        v.pkts_acked(s, &ack(rtt));
        v.pkts_acked(s, &ack(rtt));
        v
    }

    #[test]
    fn backlog_against_beta_sets_the_loss_cut() {
        // Before any estimate diff = 0: non-congestive, cut to 4/5.
        let mut s = sock(100, 50);
        let mut v = Veno::new();
        v.init(&mut s);
        assert_eq!(v.ssthresh(&mut s), 80);
        // cwnd 100, base 40,001, rtt 41,001: target = (100 x 40001 x 2) / 41001 = 195 (195.12);
        // diff = 200 - 195 = 5 (2.5 packets) < 6: 4/5.
        let mut s = sock(100, 50);
        let mut v = primed(&mut s, 40_000, 41_000);
        v.cong_avoid(&mut s, 1);
        assert_eq!(v.diff, 5);
        assert_eq!(v.ssthresh(&mut s), 80);
        // rtt 41,300: target = 8000200 / 41301 = 193 (193.7); diff = 7 >= 6: 1/2.
        let mut s = sock(100, 50);
        let mut v = primed(&mut s, 40_000, 41_300);
        v.cong_avoid(&mut s, 1);
        assert_eq!(v.diff, 7);
        assert_eq!(v.ssthresh(&mut s), 50);
        // Floors of 2.
        s.cwnd = 3;
        assert_eq!(v.ssthresh(&mut s), 2);
        v.diff = 0;
        s.cwnd = 2;
        assert_eq!(v.ssthresh(&mut s), 2);
    }

    #[test]
    fn congestive_state_grows_every_other_window() {
        let mut s = sock(20, 10);
        // base 40,001, rtt 50,001: diff = 40 - 1600040 / 50001 (= 31) = 9 >= 6 (and 9 again
        // at cwnd 21 and 22).
        let mut v = primed(&mut s, 40_000, 50_000);
        let mut grown_at = vec![];
        // Feed ACKs one packet at a time; the RTT samples stay congested.
        for i in 1..=130 {
            v.pkts_acked(&mut s, &ack(50_000));
            let before = s.cwnd;
            v.cong_avoid(&mut s, 1);
            if s.cwnd != before {
                grown_at.push(i);
            }
        }
        // A window takes cwnd + 1 ACKs (cwnd_cnt counts to cwnd, the next ACK decides). The
        // first window grows (inc starts at 1), the next only re-arms inc, the one after grows:
        // ACK 21 (cwnd 20 -> 21), then 21 + 2 x 22 = 65 (-> 22), then 65 + 2 x 23 = 111 (-> 23).
        assert_eq!(grown_at, vec![21, 65, 111]);
        assert_eq!(s.cwnd, 23);
    }

    #[test]
    fn non_congestive_state_grows_every_window() {
        let mut s = sock(20, 10);
        let mut v = primed(&mut s, 40_000, 40_000); // diff = 0
        for _ in 0..20 {
            v.pkts_acked(&mut s, &ack(40_000));
            v.cong_avoid(&mut s, 1);
        }
        assert_eq!(s.cwnd, 21); // tcp_cong_avoid_ai(20): +1 after 20 packets
        assert_eq!(v.diff, 0);
    }

    #[test]
    fn few_samples_or_not_open_is_reno() {
        let mut s = sock(20, 10);
        let mut v = Veno::new();
        v.init(&mut s);
        v.pkts_acked(&mut s, &ack(40_000));
        v.pkts_acked(&mut s, &ack(80_000));
        s.cwnd_cnt = 19;
        v.cong_avoid(&mut s, 1); // 2 samples: Reno, diff untouched
        assert_eq!((s.cwnd, v.diff), (21, 0));
        v.set_state(&mut s, CaState::Recovery);
        v.pkts_acked(&mut s, &ack(80_000));
        s.cwnd_cnt = 20;
        v.cong_avoid(&mut s, 1);
        assert_eq!((s.cwnd, v.diff), (22, 0));
    }

    #[test]
    fn slow_start_updates_the_backlog_and_grows_by_acked() {
        let mut s = sock(10, 100);
        let mut v = primed(&mut s, 40_000, 60_000);
        v.cong_avoid(&mut s, 2);
        // target = 10 x 40001 x 2 / 60001 = 13 (13.33); diff = 20 - 13 = 7.
        assert_eq!((s.cwnd, v.diff), (12, 7));
        assert_eq!(v.minrtt, 0x7fff_ffff);
    }

    #[test]
    fn undo_is_renos() {
        let mut s = sock(20, 10);
        s.prior_cwnd = 30;
        assert_eq!(Veno::new().undo_cwnd(&mut s), 30);
    }
}
