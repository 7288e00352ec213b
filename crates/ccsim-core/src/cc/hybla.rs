//! TCP Hybla (Caini & Firrincieli, Int. J. Satellite Commun. Netw. 2004) as Linux implements
//! it (net/ipv4/tcp_hybla.c): a long-RTT flow grows as a flow of reference RTT `rtt0`
//! (25 ms) would per unit time. With rho = max(SRTT / rtt0, 1), each ACK adds 2^rho - 1
//! packets in slow start and rho^2 / cwnd in congestion avoidance; loss halves (Reno).
//!
//! Linux's fixed point is kept: rho is kept x8 (`rho_3ls`, from `srtt_us`, Linux's smoothed
//! RTT x8 in us), 2^rho is 2^int(rho) times a table of 2^(k/8) x 128 (`hybla_fraction`),
//! increments are x128 and their fractions carried in `snd_cwnd_cents`; rho is recomputed
//! only when SRTT reaches a new minimum; the increase is per ACK that reaches `cong_avoid`,
//! however many packets it acknowledges; out of Open (e.g. Disorder) growth is Reno's
//! (`hybla_en`); `hybla_init` clamps cwnd to 65535. Undo is `tcp_reno_undo_cwnd`.
//!
//! Interpretation: Linux runs `hybla_init` after the handshake, with the SYN's RTT in SRTT,
//! and sets cwnd = rho there. ccsim has no handshake, so SRTT is unknown at init: cwnd keeps
//! the initial window, and rho and the minimum SRTT are first taken from the SRTT of the
//! first ACK (the first `cong_avoid` with SRTT known).

use super::newreno::reno_cong_avoid;
use super::{AlgorithmInfo, CaState, CongestionControl, ParamSpec, Params, SockState};
use crate::time::US;

pub const PARAMS: &[ParamSpec] = &[ParamSpec::int(
    "rtt0",
    25.0,
    1.0,
    4_294_967.0,
    "ms",
    "Reference RTT: rho = SRTT / rtt0 (tcp_hybla.c module parameter, 1 to U32_MAX / 1000 ms).",
)];

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    name: "hybla",
    summary: "TCP Hybla: growth scaled by rho = RTT / 25 ms (slow start 2^rho - 1 per ACK, congestion avoidance rho^2 / cwnd) so long-RTT flows grow as a 25 ms flow; Reno halving",
    source: "Caini & Firrincieli, IJSCN 2004; Linux net/ipv4/tcp_hybla.c",
    params: PARAMS,
};

#[derive(Debug, Clone)]
pub struct HyblaConfig {
    pub rtt0_ms: u32,
}

impl HyblaConfig {
    pub fn from_params(p: &Params) -> Self {
        HyblaConfig { rtt0_ms: p.get("rtt0") as u32 }
    }
}

impl Default for HyblaConfig {
    fn default() -> Self {
        Self::from_params(&Params::defaults(PARAMS))
    }
}

/// Linux `struct hybla`.
pub struct Hybla {
    cfg: HyblaConfig,
    hybla_en: bool,
    /// Fractions of an increment, x128.
    pub snd_cwnd_cents: u32,
    pub rho: u32,
    pub rho2: u32,
    /// rho x 8.
    pub rho_3ls: u32,
    /// rho^2 x 128.
    pub rho2_7ls: u32,
    /// Smallest `srtt_us` seen (x8 us); u32::MAX until SRTT is known.
    minrtt_us: u32,
}

/// Linux `tp->srtt_us`: the smoothed RTT x8, in us.
fn srtt_us(s: &SockState) -> u32 {
    (s.srtt.saturating_mul(8) / US).min(u32::MAX as u64) as u32
}

/// hybla_fraction: 2^(odds / 8) x 128.
fn hybla_fraction(odds: u32) -> u32 {
    const FRACTIONS: [u32; 8] = [128, 139, 152, 165, 181, 197, 215, 234];
    if (odds as usize) < FRACTIONS.len() {
        FRACTIONS[odds as usize]
    } else {
        128
    }
}

impl Hybla {
    pub fn new(cfg: HyblaConfig) -> Self {
        Hybla { cfg, hybla_en: true, snd_cwnd_cents: 0, rho: 0, rho2: 0, rho_3ls: 0, rho2_7ls: 0, minrtt_us: u32::MAX }
    }

    /// hybla_recalc_param.
    pub fn recalc_param(&mut self, s: &SockState) {
        self.rho_3ls = (srtt_us(s) / (self.cfg.rtt0_ms * 1000)).max(8);
        self.rho = self.rho_3ls >> 3;
        self.rho2_7ls = self.rho_3ls.wrapping_mul(self.rho_3ls) << 1;
        self.rho2 = self.rho2_7ls >> 7;
    }
}

impl CongestionControl for Hybla {
    fn name(&self) -> &'static str {
        "hybla"
    }

    /// hybla_init (see the module comment for SRTT unknown at init).
    fn init(&mut self, s: &mut SockState) {
        self.rho = 0;
        self.rho2 = 0;
        self.rho_3ls = 0;
        self.rho2_7ls = 0;
        self.snd_cwnd_cents = 0;
        self.hybla_en = true;
        s.cwnd_clamp = 65535;
        self.recalc_param(s);
        if s.srtt > 0 {
            self.minrtt_us = srtt_us(s);
            s.cwnd = self.rho;
        } else {
            self.minrtt_us = u32::MAX;
        }
    }

    /// tcp_reno_ssthresh.
    fn ssthresh(&mut self, s: &mut SockState) -> u32 {
        (s.cwnd >> 1).max(2)
    }

    /// hybla_state: Hybla's growth only in Open.
    fn set_state(&mut self, _s: &mut SockState, new: CaState) {
        self.hybla_en = new == CaState::Open;
    }

    /// hybla_cong_avoid.
    fn cong_avoid(&mut self, s: &mut SockState, acked: u32) {
        // Recompute rho only on a new minimum SRTT.
        if s.srtt > 0 && srtt_us(s) < self.minrtt_us {
            self.recalc_param(s);
            self.minrtt_us = srtt_us(s);
        }
        if !s.cwnd_limited() {
            return;
        }
        if !self.hybla_en {
            reno_cong_avoid(s, acked);
            return;
        }
        if self.rho == 0 {
            self.recalc_param(s);
        }
        let rho_fractions = self.rho_3ls - (self.rho << 3);
        let is_slowstart = s.in_slow_start();
        let increment = if is_slowstart {
            // 2^rho - 1, x128: 2^int(rho) x 2^frac(rho).
            (1u32 << self.rho.min(16)) * hybla_fraction(rho_fractions) - 128
        } else {
            // rho^2 / cwnd, x128.
            let inc = self.rho2_7ls / s.cwnd;
            if inc < 128 {
                s.cwnd_cnt += 1;
            }
            inc
        };
        let odd = increment % 128;
        s.cwnd += increment >> 7;
        self.snd_cwnd_cents += odd;
        // Whole packets out of the fractions.
        while self.snd_cwnd_cents >= 128 {
            s.cwnd += 1;
            self.snd_cwnd_cents -= 128;
            s.cwnd_cnt = 0;
        }
        // cwnd not incremented for a while.
        if increment == 0 && odd == 0 && s.cwnd_cnt >= s.cwnd {
            s.cwnd += 1;
            s.cwnd_cnt = 0;
        }
        if is_slowstart {
            s.cwnd = s.cwnd.min(s.ssthresh);
        }
        s.cwnd = s.cwnd.min(s.cwnd_clamp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::MS;

    fn sock(srtt_ms: u64, cwnd: u32, ssthresh: u32) -> SockState {
        let mut s = SockState::new(1448, 10);
        s.srtt = srtt_ms * MS;
        s.cwnd = cwnd;
        s.ssthresh = ssthresh;
        s
    }

    fn rho_at(srtt_ms: u64) -> (u32, u32, u32, u32) {
        let mut h = Hybla::new(HyblaConfig::default());
        h.recalc_param(&sock(srtt_ms, 10, 100));
        (h.rho_3ls, h.rho, h.rho2_7ls, h.rho2)
    }

    #[test]
    fn rho_from_srtt_in_fixed_point() {
        // 300 ms: srtt_us = 2400000; / 25000 = 96 = 12 x 8; rho^2 = 144 (x128 = 18432).
        assert_eq!(rho_at(300), (96, 12, 18432, 144));
        // 40 ms: 320000 / 25000 = 12 (rho 1.5); rho^2 x 128 = 12 x 12 x 2 = 288 (2.25).
        assert_eq!(rho_at(40), (12, 1, 288, 2));
        // Shorter than rtt0: rho = 1.
        assert_eq!(rho_at(10), (8, 1, 128, 1));
        // 100 ms: 32 = 4 x 8.
        assert_eq!(rho_at(100), (32, 4, 2048, 16));
        // rtt0 = 50 ms halves rho.
        let mut h = Hybla::new(HyblaConfig { rtt0_ms: 50 });
        h.recalc_param(&sock(300, 10, 100));
        assert_eq!(h.rho, 6);
    }

    #[test]
    fn slow_start_adds_two_to_the_rho_minus_one_per_ack() {
        // rho = 1.5: (2 x 181) - 128 = 234 = 1 + 106/128 per ACK (2^1.5 - 1 = 1.83).
        let mut h = Hybla::new(HyblaConfig::default());
        let mut s = sock(40, 10, 1000);
        h.init(&mut s);
        assert_eq!(s.cwnd, 1, "cwnd = rho at init when SRTT is known");
        s.cwnd = 10;
        h.cong_avoid(&mut s, 1);
        assert_eq!((s.cwnd, h.snd_cwnd_cents), (11, 106));
        h.cong_avoid(&mut s, 1);
        // 106 + 106 = 212: one more packet, 84 carried.
        assert_eq!((s.cwnd, h.snd_cwnd_cents), (13, 84));
        // rho = 12: 4096 x 128 - 128 = 4095 packets per ACK, clamped to ssthresh.
        let mut h = Hybla::new(HyblaConfig::default());
        let mut s = sock(300, 10, 10_000);
        // (two ACKs below ssthresh, the third reaches it)
        h.init(&mut s);
        assert_eq!(s.cwnd, 12);
        h.cong_avoid(&mut s, 1);
        assert_eq!(s.cwnd, 12 + 4095);
        h.cong_avoid(&mut s, 1);
        assert_eq!(s.cwnd, 12 + 2 * 4095);
        h.cong_avoid(&mut s, 1);
        assert_eq!(s.cwnd, 10_000);
    }

    #[test]
    fn congestion_avoidance_adds_rho_squared_over_cwnd() {
        // rho = 12, cwnd = 1000: 18432 / 1000 = 18 (x128) per ACK: +1 every 128/18 ACKs.
        let mut h = Hybla::new(HyblaConfig::default());
        let mut s = sock(300, 1000, 500);
        h.init(&mut s);
        s.cwnd = 1000;
        for _ in 0..7 {
            h.cong_avoid(&mut s, 1);
        }
        assert_eq!((s.cwnd, h.snd_cwnd_cents), (1000, 126));
        h.cong_avoid(&mut s, 1);
        assert_eq!((s.cwnd, h.snd_cwnd_cents, s.cwnd_cnt), (1001, 16, 0));
        // rho = 12, cwnd = 100: 184 per ACK = 1 + 56/128.
        s.cwnd = 100;
        s.ssthresh = 50;
        h.snd_cwnd_cents = 0;
        h.cong_avoid(&mut s, 1);
        assert_eq!((s.cwnd, h.snd_cwnd_cents), (101, 56));
        // Large window, rho = 1: 128 / 200 = 0 per ACK; cwnd_cnt counts ACKs, +1 per cwnd of them.
        let mut h = Hybla::new(HyblaConfig::default());
        let mut s = sock(10, 200, 100);
        h.init(&mut s);
        s.cwnd = 200;
        for _ in 0..199 {
            h.cong_avoid(&mut s, 1);
        }
        assert_eq!(s.cwnd, 200);
        h.cong_avoid(&mut s, 1);
        assert_eq!((s.cwnd, s.cwnd_cnt), (201, 0));
    }

    #[test]
    fn rho_follows_new_minimum_srtt_and_reno_outside_open() {
        let mut h = Hybla::new(HyblaConfig::default());
        let mut s = sock(0, 10, 1000);
        h.init(&mut s);
        assert_eq!((s.cwnd, s.cwnd_clamp), (10, 65535), "no SRTT at init: the initial window stays");
        s.srtt = 300 * MS;
        h.cong_avoid(&mut s, 1);
        assert_eq!(h.rho, 12);
        s.srtt = 400 * MS; // not a new minimum: rho stays
        h.cong_avoid(&mut s, 1);
        assert_eq!(h.rho, 12);
        s.srtt = 100 * MS;
        h.cong_avoid(&mut s, 1);
        assert_eq!(h.rho, 4);
        // Disorder: Reno's slow start (+1 per ACKed packet).
        h.set_state(&mut s, CaState::Disorder);
        s.cwnd = 20;
        h.cong_avoid(&mut s, 2);
        assert_eq!(s.cwnd, 22);
        // Loss halves; undo is Reno's.
        assert_eq!(h.ssthresh(&mut s), 11);
        s.prior_cwnd = 40;
        assert_eq!(h.undo_cwnd(&mut s), 40);
    }
}
