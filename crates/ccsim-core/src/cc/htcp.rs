//! H-TCP (Shorten & Leith, PFLDnet 2004; Leith & Shorten, "H-TCP: TCP congestion control for
//! high bandwidth-delay product paths", IETF draft) as Linux implements it
//! (net/ipv4/tcp_htcp.c).
//!
//! - alpha (x128) grows with the time Delta since the end of the last congestion event:
//!   1 for the first second, then 1 + 10 (Delta - 1) + ((Delta - 1) / 2)^2 (Delta in s), in
//!   Linux's integer jiffies arithmetic (`htcp_alpha_update`), scaled by min RTT / 100 ms
//!   (clamped to [0.5, 10]) with `use_rtt_scaling`, and multiplied by 2 (1 - beta).
//! - beta (x128) = minRTT / maxRTT clamped to [0.5, 0.8] (`htcp_beta_update`), or 0.5 when
//!   the achieved throughput's maximum moved by more than 20% since the last congestion event
//!   (`use_bandwidth_switch`), or on the first event.
//! - cwnd += alpha / cwnd per ACK in congestion avoidance, counted with the packets of the
//!   latest ACK seen in Open (`ca->pkts_acked`), as `htcp_cong_avoid`; ssthresh =
//!   max(cwnd x beta, 2).
//!
//! Time is Linux's jiffies at HZ = 1000 (see `jiffies`): RTTs are `usecs_to_jiffies` of the
//! ACK's RTT sample in us (rounded up to whole ms), time since congestion is in jiffies. The
//! module parameters are the parameters. Linux's `htcp_cwnd_undo` is `undo_cwnd`.

use super::jiffies::{msecs_to_jiffies, sample_rtt_us, tcp_jiffies32, usecs_to_jiffies, HZ};
use super::{AckSample, AlgorithmInfo, CaState, CongestionControl, ParamSpec, Params, SockState};

pub const PARAMS: &[ParamSpec] = &[
    ParamSpec::flag("use_rtt_scaling", true, "Scale alpha by min RTT / 100 ms, clamped to [0.5, 10], so that flows of different RTTs grow alike per unit time (tcp_htcp.c)."),
    ParamSpec::flag("use_bandwidth_switch", true, "Back off by 0.5 instead of minRTT/maxRTT when the achieved-throughput maximum changed by more than 20% (tcp_htcp.c)."),
];

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    name: "htcp",
    summary: "H-TCP: increase alpha(time since last loss, RTT-scaled), decrease beta = minRTT/maxRTT in [0.5, 0.8]",
    source: "Shorten & Leith, PFLDnet 2004; Linux net/ipv4/tcp_htcp.c",
    params: PARAMS,
};

/// Linux `ALPHA_BASE`: 1.0 x 128.
const ALPHA_BASE: u32 = 1 << 7;
/// Linux `BETA_MIN`: 0.5 x 128.
const BETA_MIN: u32 = 1 << 6;
/// Linux `BETA_MAX`: 0.8 x 128.
const BETA_MAX: u32 = 102;

#[derive(Debug, Clone)]
pub struct HtcpConfig {
    pub use_rtt_scaling: bool,
    pub use_bandwidth_switch: bool,
}

impl HtcpConfig {
    pub fn from_params(p: &Params) -> Self {
        HtcpConfig { use_rtt_scaling: p.flag("use_rtt_scaling"), use_bandwidth_switch: p.flag("use_bandwidth_switch") }
    }
}

impl Default for HtcpConfig {
    fn default() -> Self {
        Self::from_params(&Params::defaults(PARAMS))
    }
}

/// Linux `between` (include/net/tcp.h): seq2 <= seq1 <= seq3 in wrapping 32-bit arithmetic.
#[inline]
fn between(seq1: u32, seq2: u32, seq3: u32) -> bool {
    seq3.wrapping_sub(seq2) >= seq1.wrapping_sub(seq2)
}

/// Linux `struct htcp`. Times are jiffies; RTTs are jiffies; throughputs packets per second.
pub struct Htcp {
    cfg: HtcpConfig,
    /// x128.
    pub alpha: u32,
    /// x128.
    pub beta: u32,
    modeswitch: bool,
    /// Packets acknowledged by the latest ACK seen in Open (u16 in Linux).
    pkts_acked: u16,
    packetcount: u32,
    pub min_rtt: u32,
    pub max_rtt: u32,
    /// End of the last congestion event (jiffies).
    pub last_cong: u32,
    undo_last_cong: u32,
    undo_max_rtt: u32,
    undo_old_max_b: u32,
    pub min_b: u32,
    pub max_b: u32,
    pub old_max_b: u32,
    pub bi: u32,
    lasttime: u32,
}

impl Htcp {
    pub fn new(cfg: HtcpConfig) -> Self {
        Htcp {
            cfg,
            alpha: ALPHA_BASE,
            beta: BETA_MIN,
            modeswitch: false,
            pkts_acked: 1,
            packetcount: 0,
            min_rtt: 0,
            max_rtt: 0,
            last_cong: 0,
            undo_last_cong: 0,
            undo_max_rtt: 0,
            undo_old_max_b: 0,
            min_b: 0,
            max_b: 0,
            old_max_b: 0,
            bi: 0,
            lasttime: 0,
        }
    }

    /// htcp_cong_time.
    fn cong_time(&self, now_j: u32) -> u32 {
        now_j.wrapping_sub(self.last_cong)
    }

    /// htcp_ccount: RTTs since the last congestion event.
    fn ccount(&self, now_j: u32) -> u32 {
        self.cong_time(now_j) / self.min_rtt
    }

    /// htcp_reset: a congestion event starts now (remembering what undo restores).
    fn reset(&mut self, now_j: u32) {
        self.undo_last_cong = self.last_cong;
        self.undo_max_rtt = self.max_rtt;
        self.undo_old_max_b = self.old_max_b;
        self.last_cong = now_j;
    }

    /// measure_rtt: min RTT, and max RTT in Open (growing by at most 20 ms a sample).
    fn measure_rtt(&mut self, s: &SockState, srtt: u32) {
        if self.min_rtt > srtt || self.min_rtt == 0 {
            self.min_rtt = srtt;
        }
        if s.ca_state == CaState::Open {
            if self.max_rtt < self.min_rtt {
                self.max_rtt = self.min_rtt;
            }
            if self.max_rtt < srtt && srtt <= self.max_rtt + msecs_to_jiffies(20) {
                self.max_rtt = srtt;
            }
        }
    }

    /// htcp_beta_update.
    pub fn beta_update(&mut self, min_rtt: u32, max_rtt: u32) {
        if self.cfg.use_bandwidth_switch {
            let max_b = self.max_b;
            let old_max_b = self.old_max_b;
            self.old_max_b = self.max_b;
            if !between(max_b.wrapping_mul(5), old_max_b.wrapping_mul(4), old_max_b.wrapping_mul(6)) {
                self.beta = BETA_MIN;
                self.modeswitch = false;
                return;
            }
        }
        if self.modeswitch && min_rtt > msecs_to_jiffies(10) && max_rtt != 0 {
            self.beta = ((min_rtt << 7) / max_rtt).clamp(BETA_MIN, BETA_MAX);
        } else {
            self.beta = BETA_MIN;
            self.modeswitch = true;
        }
    }

    /// htcp_alpha_update.
    pub fn alpha_update(&mut self, now_j: u32) {
        let min_rtt = self.min_rtt;
        let mut factor: u32 = 1;
        let mut diff = self.cong_time(now_j);
        if diff > HZ {
            diff -= HZ;
            factor = 1 + (10u32.wrapping_mul(diff).wrapping_add((diff / 2).wrapping_mul(diff / 2) / HZ)) / HZ;
        }
        if self.cfg.use_rtt_scaling && min_rtt != 0 {
            // min RTT / 100 ms, x8, clamped to [0.5, 10].
            let scale = ((HZ << 3) / (10 * min_rtt)).clamp(1 << 2, 10 << 3);
            factor = (factor << 3) / scale;
            if factor == 0 {
                factor = 1;
            }
        }
        self.alpha = 2u32.wrapping_mul(factor).wrapping_mul((1 << 7) - self.beta);
        if self.alpha == 0 {
            self.alpha = ALPHA_BASE;
        }
    }

    /// htcp_param_update: at a congestion event.
    fn param_update(&mut self, now_j: u32) {
        let (min_rtt, max_rtt) = (self.min_rtt, self.max_rtt);
        self.beta_update(min_rtt, max_rtt);
        self.alpha_update(now_j);
        // Slowly fading memory of maxRTT, for routing changes.
        if min_rtt > 0 && max_rtt > min_rtt {
            self.max_rtt = min_rtt + ((max_rtt - min_rtt) * 95) / 100;
        }
    }
}

impl CongestionControl for Htcp {
    fn name(&self) -> &'static str {
        "htcp"
    }

    /// htcp_init.
    fn init(&mut self, s: &mut SockState) {
        *self = Htcp::new(self.cfg.clone());
        self.last_cong = tcp_jiffies32(s.now);
    }

    /// htcp_recalc_ssthresh.
    fn ssthresh(&mut self, s: &mut SockState) -> u32 {
        self.param_update(tcp_jiffies32(s.now));
        ((s.cwnd.wrapping_mul(self.beta)) >> 7).max(2)
    }

    /// htcp_cong_avoid.
    fn cong_avoid(&mut self, s: &mut SockState, acked: u32) {
        if !s.cwnd_limited() {
            return;
        }
        if s.in_slow_start() {
            s.slow_start(acked);
            return;
        }
        // cwnd += alpha / cwnd, counted in the packets of the latest ACK.
        if (s.cwnd_cnt.wrapping_mul(self.alpha)) >> 7 >= s.cwnd {
            if s.cwnd < s.cwnd_clamp {
                s.cwnd += 1;
            }
            s.cwnd_cnt = 0;
            self.alpha_update(tcp_jiffies32(s.now));
        } else {
            s.cwnd_cnt += self.pkts_acked as u32;
        }
        self.pkts_acked = 1;
    }

    /// htcp_state.
    fn set_state(&mut self, s: &mut SockState, new: CaState) {
        match new {
            CaState::Open => {
                if self.undo_last_cong != 0 {
                    self.last_cong = tcp_jiffies32(s.now);
                    self.undo_last_cong = 0;
                }
            }
            CaState::Cwr | CaState::Recovery | CaState::Loss => self.reset(tcp_jiffies32(s.now)),
            CaState::Disorder => {}
        }
    }

    /// measure_achieved_throughput.
    fn pkts_acked(&mut self, s: &mut SockState, sample: &AckSample) {
        let now = tcp_jiffies32(s.now);
        if s.ca_state == CaState::Open {
            self.pkts_acked = sample.pkts_acked as u16;
        }
        let rtt_us = sample_rtt_us(sample.rtt);
        if rtt_us > 0 {
            self.measure_rtt(s, usecs_to_jiffies(rtt_us.min(u32::MAX as i64) as u32));
        }
        if !self.cfg.use_bandwidth_switch {
            return;
        }
        // Achieved throughput, over periods of at least a min RTT and a window of packets.
        if !matches!(s.ca_state, CaState::Open | CaState::Disorder) {
            self.packetcount = 0;
            self.lasttime = now;
            return;
        }
        self.packetcount = self.packetcount.wrapping_add(sample.pkts_acked);
        let a = if self.alpha >> 7 != 0 { self.alpha >> 7 } else { 1 };
        if self.packetcount >= s.cwnd.wrapping_sub(a) && now.wrapping_sub(self.lasttime) >= self.min_rtt && self.min_rtt > 0 {
            let cur_bi = self.packetcount.wrapping_mul(HZ) / now.wrapping_sub(self.lasttime);
            if self.ccount(now) <= 3 {
                // Just after a backoff.
                self.min_b = cur_bi;
                self.max_b = cur_bi;
                self.bi = cur_bi;
            } else {
                self.bi = (3 * self.bi + cur_bi) / 4;
                if self.bi > self.max_b {
                    self.max_b = self.bi;
                }
                if self.min_b > self.max_b {
                    self.min_b = self.max_b;
                }
            }
            self.packetcount = 0;
            self.lasttime = now;
        }
    }

    /// htcp_cwnd_undo: restore the congestion epoch, then tcp_reno_undo_cwnd.
    fn undo_cwnd(&mut self, s: &mut SockState) -> u32 {
        if self.undo_last_cong != 0 {
            self.last_cong = self.undo_last_cong;
            self.max_rtt = self.undo_max_rtt;
            self.old_max_b = self.undo_old_max_b;
            self.undo_last_cong = 0;
        }
        s.cwnd.max(s.prior_cwnd)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{MS, SEC};

    fn cfg(rtt_scaling: bool, bw_switch: bool) -> HtcpConfig {
        HtcpConfig { use_rtt_scaling: rtt_scaling, use_bandwidth_switch: bw_switch }
    }

    /// alpha (x128) `secs` after the last congestion event, beta = 0.5, given min RTT (jiffies).
    fn alpha_after(ms: u64, min_rtt: u32, rtt_scaling: bool) -> u32 {
        let mut h = Htcp::new(cfg(rtt_scaling, false));
        let mut s = SockState::new(1448, 10);
        h.init(&mut s);
        h.min_rtt = min_rtt;
        h.alpha_update(tcp_jiffies32(ms * MS));
        h.alpha
    }

    #[test]
    fn alpha_grows_with_time_since_congestion() {
        // Without RTT scaling alpha = 2 (1 - 0.5) factor = factor, x128.
        // Up to 1 s: factor 1.
        assert_eq!(alpha_after(1000, 0, false), 128);
        // 1.5 s: d = 500 ms: 1 + (5000 + 250 x 250 / 1000) / 1000 = 1 + 5062 / 1000 = 6.
        assert_eq!(alpha_after(1500, 0, false), 6 * 128);
        // 2 s: d = 1000: 1 + (10000 + 250) / 1000 = 11 (the paper's 1 + 10 + 0.25 = 11.25).
        assert_eq!(alpha_after(2000, 0, false), 11 * 128);
        // 5 s: d = 4000: 1 + (40000 + 4000) / 1000 = 45 (1 + 40 + 4).
        assert_eq!(alpha_after(5000, 0, false), 45 * 128);
    }

    #[test]
    fn rtt_scaling_divides_by_min_rtt_over_100ms() {
        // 100 ms: scale = 8000 / 1000 = 8 (1.0).
        assert_eq!(alpha_after(2000, 100, true), 11 * 128);
        // 40 ms: scale = 8000 / 400 = 20 (2.5): factor = 88 / 20 = 4 at 2 s, 360 / 20 = 18 at 5 s.
        assert_eq!(alpha_after(2000, 40, true), 4 * 128);
        assert_eq!(alpha_after(5000, 40, true), 18 * 128);
        // Up to 1 s: 8 / 20 = 0 -> 1.
        assert_eq!(alpha_after(1000, 40, true), 128);
        // 5 ms: 8000 / 50 = 160, clamped to 80 (10x): 360 / 80 = 4.
        assert_eq!(alpha_after(5000, 5, true), 4 * 128);
        // 400 ms: 8000 / 4000 = 2, clamped to 4 (0.5x): 45 x 8 / 4 = 90.
        assert_eq!(alpha_after(5000, 400, true), 90 * 128);
    }

    #[test]
    fn beta_is_min_over_max_rtt_clamped() {
        let mut h = Htcp::new(cfg(true, false));
        // The first event backs off by 0.5 and arms the mode switch.
        h.beta_update(40, 50);
        assert_eq!(h.beta, 64);
        // 40 / 60 x 128 = 85.3.
        h.beta_update(40, 60);
        assert_eq!(h.beta, 85);
        // 40 / 50 x 128 = 102.4 -> 102 (BETA_MAX).
        h.beta_update(40, 50);
        assert_eq!(h.beta, 102);
        // 40 / 41 x 128 = 124 -> clamped to 102.
        h.beta_update(40, 41);
        assert_eq!(h.beta, 102);
        // 40 / 100 -> 51 -> clamped to 64.
        h.beta_update(40, 100);
        assert_eq!(h.beta, 64);
        // min RTT <= 10 ms: 0.5, whatever the ratio.
        h.beta_update(10, 11);
        assert_eq!(h.beta, 64);
        // alpha follows beta: 2 x 1 x (128 - 102) = 52 at factor 1.
        h.beta_update(40, 50);
        h.last_cong = tcp_jiffies32(0);
        h.min_rtt = 0;
        h.alpha_update(tcp_jiffies32(500 * MS));
        assert_eq!(h.alpha, 52);
    }

    #[test]
    fn bandwidth_switch_backs_off_by_half_when_throughput_moved() {
        let mut h = Htcp::new(cfg(true, true));
        h.modeswitch = true;
        h.old_max_b = 1000;
        h.max_b = 1100; // 5500 in [4000, 6000]: RTT-based beta
        h.beta_update(40, 50);
        assert_eq!(h.beta, 102);
        assert_eq!(h.old_max_b, 1100);
        h.max_b = 1400; // 7000 > 6600
        h.beta_update(40, 50);
        assert_eq!(h.beta, 64);
        assert!(!h.modeswitch);
    }

    #[test]
    fn loss_uses_beta_and_fades_max_rtt() {
        let mut h = Htcp::new(cfg(false, false));
        let mut s = SockState::new(1448, 10);
        h.init(&mut s);
        h.modeswitch = true;
        h.min_rtt = 40;
        h.max_rtt = 60;
        s.cwnd = 1000;
        s.now = 3 * SEC;
        // beta = 85: ssthresh = 85000 >> 7 = 664; max RTT = 40 + 20 x 95 / 100 = 59.
        assert_eq!(h.ssthresh(&mut s), 664);
        assert_eq!(h.max_rtt, 59);
        // alpha at 3 s, beta 85: factor 1 + (20000 + 1000) / 1000 = 22; 2 x 22 x 43 = 1892.
        assert_eq!(h.alpha, 1892);
    }

    #[test]
    fn congestion_epoch_restarts_when_recovery_ends_and_undo_restores_it() {
        let mut h = Htcp::new(cfg(true, true));
        let mut s = SockState::new(1448, 10);
        s.now = 10 * MS;
        h.init(&mut s);
        assert_eq!(h.last_cong, tcp_jiffies32(10 * MS));
        s.now = 5 * SEC;
        h.set_state(&mut s, CaState::Recovery);
        assert_eq!(h.last_cong, tcp_jiffies32(5 * SEC));
        s.now = 5 * SEC + 80 * MS;
        h.set_state(&mut s, CaState::Open);
        assert_eq!(h.last_cong, tcp_jiffies32(5 * SEC + 80 * MS));
        // A second event, then undo: back to the epoch before it.
        s.now = 9 * SEC;
        h.set_state(&mut s, CaState::Recovery);
        s.cwnd = 50;
        s.prior_cwnd = 100;
        assert_eq!(h.undo_cwnd(&mut s), 100);
        assert_eq!(h.last_cong, tcp_jiffies32(5 * SEC + 80 * MS));
    }

    #[test]
    fn increase_is_alpha_per_window_counted_in_packets_per_ack() {
        let mut h = Htcp::new(cfg(false, false));
        let mut s = SockState::new(1448, 10);
        h.init(&mut s);
        s.cwnd = 100;
        s.ssthresh = 50;
        h.alpha = 256; // 2 per RTT
        // ACKs of 2 packets in Open: the count grows by 2 per ACK; +1 once cnt x 2 >= 100.
        let ack = AckSample { pkts_acked: 2, rtt: -1, ..AckSample::default() };
        for _ in 0..25 {
            h.pkts_acked(&mut s, &ack);
            h.cong_avoid(&mut s, 2);
        }
        assert_eq!((s.cwnd, s.cwnd_cnt), (100, 50));
        h.pkts_acked(&mut s, &ack);
        h.cong_avoid(&mut s, 2);
        assert_eq!((s.cwnd, s.cwnd_cnt), (101, 0));
    }

    #[test]
    fn rtts_are_jiffies_rounded_up_and_max_rtt_grows_by_at_most_20ms() {
        let mut h = Htcp::new(cfg(true, false));
        let mut s = SockState::new(1448, 10);
        h.init(&mut s);
        let ack = |ns: u64| AckSample { pkts_acked: 1, rtt: ns as i64, ..AckSample::default() };
        h.pkts_acked(&mut s, &ack(40 * MS + 1000)); // 40001 us -> 41 jiffies
        assert_eq!((h.min_rtt, h.max_rtt), (41, 41));
        h.pkts_acked(&mut s, &ack(70 * MS)); // 70 > 41 + 20: not taken
        assert_eq!(h.max_rtt, 41);
        h.pkts_acked(&mut s, &ack(60 * MS));
        assert_eq!(h.max_rtt, 60);
        s.ca_state = CaState::Recovery; // max RTT only in Open
        h.pkts_acked(&mut s, &ack(75 * MS));
        assert_eq!(h.max_rtt, 60);
    }
}
