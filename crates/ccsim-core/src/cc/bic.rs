//! BIC TCP (Xu, Harfoush & Rhee, INFOCOM 2004) as Linux implements it (net/ipv4/tcp_bic.c):
//! a binary search for the window between the cwnd after a loss and the cwnd at the loss
//! (`last_max_cwnd`), at most `max_increment` packets per RTT, then max probing above it;
//! Reno below `low_window` packets; a loss keeps beta = 819/1024 of cwnd.
//!
//! Linux details kept: `bictcp_update` recomputes `cnt` at most once per HZ/32 jiffies while
//! cwnd is unchanged; below `low_window` `cnt` = cwnd (returned before the ACK-ratio scaling);
//! without a `last_max_cwnd` the increase is capped at 5% per RTT; `cnt` is scaled by the
//! estimated packets per ACK (`delayed_ack`, x16, an EWMA updated in Open by `bictcp_acked`,
//! starting at 2); fast convergence; `bictcp_state` resets everything on Loss (an RTO).
//! Time is `tcp_jiffies32` at HZ = 1000 (see `jiffies`). The module parameters are the
//! parameters, same names and defaults. Undo is `tcp_reno_undo_cwnd`, the current kernel's
//! (older kernels restored max(cwnd, last_max_cwnd)).

use super::jiffies::{tcp_jiffies32, HZ};
use super::{AckSample, AlgorithmInfo, CaState, CongestionControl, ParamSpec, Params, SockState};

pub const PARAMS: &[ParamSpec] = &[
    ParamSpec::flag("fast_convergence", true, "Release bandwidth faster: after a loss below the last maximum, remember cwnd x (1 + beta) / 2 as the maximum (tcp_bic.c)."),
    ParamSpec::int("max_increment", 16.0, 1.0, 2_147_483_647.0, "pkts", "Largest increase per RTT during the binary search and max probing (tcp_bic.c, at least 1)."),
    ParamSpec::int("low_window", 14.0, 0.0, 1_000_000.0, "pkts", "At or below this cwnd BIC is Reno: +1 per RTT, halve on loss (tcp_bic.c)."),
    ParamSpec::int("beta", 819.0, 1.0, 1024.0, "1/1024", "Kept fraction of cwnd on loss above low_window, x1024 (819 = 0.8; tcp_bic.c)."),
    ParamSpec::int("initial_ssthresh", 0.0, 0.0, 2_147_483_647.0, "pkts", "Initial slow-start threshold; 0 = none (tcp_bic.c; older kernels had 100)."),
    ParamSpec::int("smooth_part", 20.0, 1.0, 1_000_000.0, "RTTs", "Near the target (within B = 4 packets) grow by B / smooth_part per RTT (tcp_bic.c)."),
];

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    name: "bic",
    summary: "BIC TCP: binary search towards the window of the last loss (at most 16 pkts/RTT), then max probing; keep 0.8 on loss; Reno below 14 pkts",
    source: "Xu, Harfoush & Rhee, INFOCOM 2004; Linux net/ipv4/tcp_bic.c",
    params: PARAMS,
};

/// Linux `BICTCP_BETA_SCALE`.
const BICTCP_BETA_SCALE: u32 = 1024;
/// Linux `BICTCP_B`: the binary search goes to (max + min) / B.
const BICTCP_B: u32 = 4;
/// Linux `ACK_RATIO_SHIFT`.
const ACK_RATIO_SHIFT: u32 = 4;

#[derive(Debug, Clone)]
pub struct BicConfig {
    pub fast_convergence: bool,
    pub max_increment: u32,
    pub low_window: u32,
    pub beta: u32,
    pub initial_ssthresh: u32,
    pub smooth_part: u32,
}

impl BicConfig {
    pub fn from_params(p: &Params) -> Self {
        BicConfig {
            fast_convergence: p.flag("fast_convergence"),
            max_increment: p.get("max_increment") as u32,
            low_window: p.get("low_window") as u32,
            beta: p.get("beta") as u32,
            initial_ssthresh: p.get("initial_ssthresh") as u32,
            smooth_part: p.get("smooth_part") as u32,
        }
    }
}

impl Default for BicConfig {
    fn default() -> Self {
        Self::from_params(&Params::defaults(PARAMS))
    }
}

/// Linux `struct bictcp`.
pub struct Bic {
    cfg: BicConfig,
    /// ACKed packets per +1 cwnd.
    pub cnt: u32,
    pub last_max_cwnd: u32,
    last_cwnd: u32,
    /// Jiffies of the last `cnt` update.
    last_time: u32,
    /// Jiffies at the epoch's start; 0 = none.
    epoch_start: u32,
    /// Packets per ACK, x16.
    pub delayed_ack: u32,
}

impl Bic {
    pub fn new(cfg: BicConfig) -> Self {
        let mut b = Bic { cfg, cnt: 0, last_max_cwnd: 0, last_cwnd: 0, last_time: 0, epoch_start: 0, delayed_ack: 0 };
        b.reset();
        b
    }

    /// bictcp_reset.
    fn reset(&mut self) {
        self.cnt = 0;
        self.last_max_cwnd = 0;
        self.last_cwnd = 0;
        self.last_time = 0;
        self.epoch_start = 0;
        self.delayed_ack = 2 << ACK_RATIO_SHIFT;
    }

    /// bictcp_update: `cnt` for the current cwnd.
    pub fn update(&mut self, now_j: u32, cwnd: u32) {
        if self.last_cwnd == cwnd && (now_j.wrapping_sub(self.last_time) as i32) <= (HZ / 32) as i32 {
            return;
        }
        self.last_cwnd = cwnd;
        self.last_time = now_j;
        if self.epoch_start == 0 {
            self.epoch_start = now_j;
        }
        // Start off normal.
        if cwnd <= self.cfg.low_window {
            self.cnt = cwnd;
            return;
        }
        let (max_inc, smooth) = (self.cfg.max_increment, self.cfg.smooth_part);
        if cwnd < self.last_max_cwnd {
            // Binary increase.
            let dist = (self.last_max_cwnd - cwnd) / BICTCP_B;
            self.cnt = if dist > max_inc {
                cwnd / max_inc // linear increase
            } else if dist <= 1 {
                cwnd * smooth / BICTCP_B // binary search increase, close to the target
            } else {
                cwnd / dist // binary search increase
            };
        } else {
            // Max probing: slow start, then linear increase.
            self.cnt = if cwnd < self.last_max_cwnd + BICTCP_B {
                cwnd * smooth / BICTCP_B
            } else if cwnd < self.last_max_cwnd + max_inc * (BICTCP_B - 1) {
                cwnd * (BICTCP_B - 1) / (cwnd - self.last_max_cwnd)
            } else {
                cwnd / max_inc
            };
        }
        // In slow start or with very low utilization: at most 5% per RTT.
        if self.last_max_cwnd == 0 && self.cnt > 20 {
            self.cnt = 20;
        }
        self.cnt = (self.cnt << ACK_RATIO_SHIFT) / self.delayed_ack;
        if self.cnt == 0 {
            self.cnt = 1;
        }
    }
}

impl CongestionControl for Bic {
    fn name(&self) -> &'static str {
        "bic"
    }

    /// bictcp_init.
    fn init(&mut self, s: &mut SockState) {
        self.reset();
        if self.cfg.initial_ssthresh != 0 {
            s.ssthresh = self.cfg.initial_ssthresh;
        }
    }

    /// bictcp_cong_avoid.
    fn cong_avoid(&mut self, s: &mut SockState, mut acked: u32) {
        if !s.cwnd_limited() {
            return;
        }
        if s.in_slow_start() {
            acked = s.slow_start(acked);
            if acked == 0 {
                return;
            }
        }
        self.update(tcp_jiffies32(s.now), s.cwnd);
        let cnt = self.cnt;
        s.cong_avoid_ai(cnt, acked);
    }

    /// bictcp_recalc_ssthresh.
    fn ssthresh(&mut self, s: &mut SockState) -> u32 {
        let cwnd = s.cwnd;
        self.epoch_start = 0;
        // W_max and fast convergence.
        self.last_max_cwnd = if cwnd < self.last_max_cwnd && self.cfg.fast_convergence {
            cwnd * (BICTCP_BETA_SCALE + self.cfg.beta) / (2 * BICTCP_BETA_SCALE)
        } else {
            cwnd
        };
        if cwnd <= self.cfg.low_window {
            (cwnd >> 1).max(2)
        } else {
            (cwnd * self.cfg.beta / BICTCP_BETA_SCALE).max(2)
        }
    }

    /// bictcp_state.
    fn set_state(&mut self, _s: &mut SockState, new: CaState) {
        if new == CaState::Loss {
            self.reset();
        }
    }

    /// bictcp_acked: delayed_ack = 15/16 delayed_ack + pkts_acked (x16), in Open only.
    fn pkts_acked(&mut self, s: &mut SockState, sample: &AckSample) {
        if s.ca_state == CaState::Open {
            self.delayed_ack = self.delayed_ack.wrapping_add(sample.pkts_acked.wrapping_sub(self.delayed_ack >> ACK_RATIO_SHIFT));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// cnt at `cwnd` with the given last maximum and ACK ratio (x16).
    fn cnt(cwnd: u32, last_max: u32, delayed_ack: u32) -> u32 {
        let mut b = Bic::new(BicConfig::default());
        b.last_max_cwnd = last_max;
        b.delayed_ack = delayed_ack;
        b.update(1, cwnd);
        b.cnt
    }

    #[test]
    fn far_below_the_last_maximum_it_adds_max_increment_per_rtt() {
        // dist = (1000 - 500) / 4 = 125 > 16: cnt = 500 / 16 = 31 (16 packets per RTT).
        assert_eq!(cnt(500, 1000, 16), 31);
        // The default ACK ratio of 2 halves cnt: (31 << 4) / 32 = 15.
        assert_eq!(cnt(500, 1000, 32), 15);
    }

    #[test]
    fn near_the_last_maximum_it_searches_then_slows_down() {
        // dist = 10 / 4 = 2: cnt = 990 / 2 = 495 (half the distance per RTT).
        assert_eq!(cnt(990, 1000, 16), 495);
        // dist = 3 / 4 = 0 <= 1: cnt = 997 x 20 / 4 = 4985 (B / smooth_part = 0.2 pkt per RTT).
        assert_eq!(cnt(997, 1000, 16), 4985);
    }

    #[test]
    fn above_the_last_maximum_it_probes_slowly_then_faster() {
        // Within B of it: 1002 x 20 / 4.
        assert_eq!(cnt(1002, 1000, 16), 5010);
        // Below max + 16 x 3 = 1048: cnt = 1010 x 3 / 10 = 303.
        assert_eq!(cnt(1010, 1000, 16), 303);
        // Beyond: linear, 1100 / 16 = 68.
        assert_eq!(cnt(1100, 1000, 16), 68);
    }

    #[test]
    fn low_window_is_reno_and_no_maximum_caps_at_5_percent() {
        // cwnd <= 14: cnt = cwnd, not scaled by the ACK ratio.
        assert_eq!(cnt(14, 1000, 32), 14);
        // Just above it, far from the maximum: 15 / 16 = 0, which becomes 1.
        assert_eq!(cnt(15, 1000, 16), 1);
        // No last maximum: 500 / 16 = 31 capped at 20, then / 2.
        assert_eq!(cnt(500, 0, 16), 20);
        assert_eq!(cnt(500, 0, 32), 10);
        // Loss at or below low_window halves; above it keeps 819/1024.
        let mut b = Bic::new(BicConfig::default());
        let mut s = SockState::new(1448, 10);
        s.cwnd = 14;
        assert_eq!(b.ssthresh(&mut s), 7);
        s.cwnd = 15;
        assert_eq!(b.ssthresh(&mut s), 11); // 15 x 819 / 1024 = 11.99
    }

    #[test]
    fn update_is_throttled_while_cwnd_is_unchanged() {
        let mut b = Bic::new(BicConfig::default());
        b.delayed_ack = 16;
        b.last_max_cwnd = 1000;
        b.update(100, 500);
        assert_eq!(b.cnt, 31);
        b.last_max_cwnd = 560; // dist 15: would give cnt = 500 / 15 = 33
        b.update(131, 500); // 31 jiffies later: <= HZ / 32, unchanged
        assert_eq!(b.cnt, 31);
        b.update(132, 500);
        assert_eq!(b.cnt, 33);
    }

    #[test]
    fn loss_sets_the_maximum_with_fast_convergence() {
        let mut b = Bic::new(BicConfig::default());
        let mut s = SockState::new(1448, 10);
        s.cwnd = 1000;
        assert_eq!(b.ssthresh(&mut s), 799); // 819000 / 1024 = 799.8
        assert_eq!(b.last_max_cwnd, 1000);
        s.cwnd = 900; // below the maximum: 900 x 1843 / 2048 = 809.9
        assert_eq!(b.ssthresh(&mut s), 719);
        assert_eq!(b.last_max_cwnd, 809);
        let mut nf = Bic::new(BicConfig { fast_convergence: false, ..BicConfig::default() });
        nf.last_max_cwnd = 1000;
        nf.ssthresh(&mut s);
        assert_eq!(nf.last_max_cwnd, 900);
        // An RTO resets it all.
        b.set_state(&mut s, CaState::Loss);
        assert_eq!((b.last_max_cwnd, b.delayed_ack), (0, 32));
    }

    #[test]
    fn ack_ratio_tracks_packets_per_ack_in_open_only() {
        let mut b = Bic::new(BicConfig::default());
        let mut s = SockState::new(1448, 10);
        let ack = |n| AckSample { pkts_acked: n, rtt: 1, ..AckSample::default() };
        // Two packets per ACK keep the initial 32 (2 x 16).
        b.pkts_acked(&mut s, &ack(2));
        assert_eq!(b.delayed_ack, 32);
        // One per ACK: 32 + 1 - 2 = 31, then 31 + 1 - 1 = 31: integer EWMA stops at 31.
        b.pkts_acked(&mut s, &ack(1));
        b.pkts_acked(&mut s, &ack(1));
        assert_eq!(b.delayed_ack, 31);
        // Not outside Open.
        s.ca_state = CaState::Recovery;
        b.pkts_acked(&mut s, &ack(10));
        assert_eq!(b.delayed_ack, 31);
        s.ca_state = CaState::Open;
        b.pkts_acked(&mut s, &ack(10)); // 31 + 10 - 1
        assert_eq!(b.delayed_ack, 40);
    }

    #[test]
    fn initial_ssthresh_and_undo() {
        let mut b = Bic::new(BicConfig { initial_ssthresh: 100, ..BicConfig::default() });
        let mut s = SockState::new(1448, 10);
        b.init(&mut s);
        assert_eq!(s.ssthresh, 100);
        let mut d = Bic::new(BicConfig::default());
        let mut s2 = SockState::new(1448, 10);
        d.init(&mut s2);
        assert_eq!(s2.ssthresh, crate::cc::INFINITE_SSTHRESH);
        s2.cwnd = 80;
        s2.prior_cwnd = 100;
        assert_eq!(d.undo_cwnd(&mut s2), 100);
    }
}
