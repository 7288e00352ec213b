//! DCTCP as Linux implements it (net/ipv4/tcp_dctcp.c since 5.1): Reno's window growth, and on
//! an ECE a reduction by alpha/2, where alpha is the EWMA of the fraction of delivered packets
//! whose ACKs carried ECE, updated once per window of data from `delivered`/`delivered_ce`.
//! On loss it halves, as Reno (`dctcp_react_to_loss`, RFC 8257 3.5).
//!
//! The precise echo DCTCP needs from its receiver (ECE on exactly the ACKs of CE-marked data,
//! `dctcp_ece_ack_update` in tcp_dctcp.h) is the receiver's, selected by `needs_ecn`
//! (Linux `TCP_CONG_NEEDS_ECN`): see `tcp::receiver`.
//!
//! Without ECN on the connection (`[tcp] ecn = false`) DCTCP is Linux's `dctcp_reno`
//! (`dctcp_init` falls back when ECN was not negotiated): `tcp_reno_ssthresh`,
//! `tcp_reno_cong_avoid`, no alpha, no loss hook.

use super::newreno::reno_cong_avoid;
use super::{AlgorithmInfo, CaEvent, CaState, CongestionControl, ParamSpec, Params, SockState};

pub const PARAMS: &[ParamSpec] = &[
    ParamSpec::int(
        "dctcp_shift_g",
        4.0,
        0.0,
        10.0,
        "log2",
        "The EWMA gain of alpha, g = 1/2^dctcp_shift_g (tcp_dctcp.c; 4: g = 1/16, Alizadeh et al. 2010).",
    ),
    ParamSpec::int(
        "dctcp_alpha_on_init",
        1024.0,
        0.0,
        1024.0,
        "1/1024",
        "Initial alpha x 1024 (tcp_dctcp.c; 1024: alpha = 1, the first ECE halves cwnd).",
    ),
    ParamSpec::flag(
        "dctcp_clamp_alpha_on_loss",
        false,
        "Set alpha to 1 on entering Loss (a retransmission timeout), as Linux up to 5.0 could (off by default there too); Linux 5.1 removed it for halving ssthresh on every loss, which is always done here.",
    ),
    ParamSpec::flag(
        "ect1",
        false,
        "Send data as ECT(1), the L4S identifier (RFC 9331), instead of Linux DCTCP's ECT(0) (INET_ECN_xmit): a scalable sender that an L4S queue such as dualpi2 classifies as L4S, as L4S test beds run DCTCP. A ccsim option, not a Linux one.",
    ),
];

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    name: "dctcp",
    summary: "Data Center TCP: ECN-based, cwnd reduced by alpha/2 per window with ECE (alpha = EWMA of the marked fraction); needs [tcp] ecn = true, else Reno",
    source: "RFC 8257; Alizadeh et al. SIGCOMM 2010; Linux net/ipv4/tcp_dctcp.c, tcp_dctcp.h",
    params: PARAMS,
};

/// Linux `DCTCP_MAX_ALPHA`: alpha is kept x 1024.
pub const DCTCP_MAX_ALPHA: u32 = 1024;

#[derive(Debug, Clone)]
pub struct DctcpConfig {
    pub shift_g: u32,
    pub alpha_on_init: u32,
    pub clamp_alpha_on_loss: bool,
    /// Data as ECT(1) instead of ECT(0).
    pub ect1: bool,
}

impl DctcpConfig {
    pub fn from_params(p: &Params) -> Self {
        DctcpConfig {
            shift_g: p.get("dctcp_shift_g") as u32,
            alpha_on_init: p.get("dctcp_alpha_on_init") as u32,
            clamp_alpha_on_loss: p.flag("dctcp_clamp_alpha_on_loss"),
            ect1: p.flag("ect1"),
        }
    }
}

impl Default for DctcpConfig {
    fn default() -> Self {
        Self::from_params(&Params::defaults(PARAMS))
    }
}

/// Linux `struct dctcp` (its `prior_rcv_nxt` and `ce_state` belong to the receiver here).
pub struct Dctcp {
    cfg: DctcpConfig,
    /// ECN was not on at init: Linux's `dctcp_reno` ops.
    reno: bool,
    old_delivered: u64,
    old_delivered_ce: u64,
    /// alpha x 1024.
    pub alpha: u32,
    /// The window ends when snd_una reaches this.
    next_seq: u32,
    /// cwnd when it was last reduced (for `cwnd_undo`).
    loss_cwnd: u32,
}

impl Dctcp {
    pub fn new(cfg: DctcpConfig) -> Self {
        let alpha = cfg.alpha_on_init.min(DCTCP_MAX_ALPHA);
        Dctcp { cfg, reno: false, old_delivered: 0, old_delivered_ce: 0, alpha, next_seq: 0, loss_cwnd: 0 }
    }

    /// Falls back to Reno (ECN off on the connection).
    pub fn is_reno(&self) -> bool {
        self.reno
    }

    /// dctcp_reset: a new observation window starts at snd_nxt.
    fn reset(&mut self, s: &SockState) {
        self.next_seq = s.snd_nxt;
        self.old_delivered = s.delivered;
        self.old_delivered_ce = s.delivered_ce;
    }

    /// dctcp_update_alpha: once snd_una passes the end of the window, fold the fraction F of
    /// the window's delivered packets that were delivered with ECE into alpha:
    /// alpha = (1 - g) alpha + g F, in Linux's fixed point (alpha x 1024, g = 2^-shift_g).
    fn update_alpha(&mut self, s: &SockState) {
        if s.snd_una < self.next_seq {
            return;
        }
        let g = self.cfg.shift_g;
        let mut delivered_ce = (s.delivered_ce - self.old_delivered_ce) as u32;
        let mut alpha = self.alpha;
        // alpha -= min_not_zero(alpha, alpha >> g): a small alpha decays to 0, not to 15.
        let decay = alpha >> g;
        alpha -= if decay == 0 { alpha } else { decay };
        if delivered_ce > 0 {
            let delivered = (s.delivered - self.old_delivered) as u32;
            delivered_ce <<= 10 - g;
            delivered_ce /= delivered.max(1);
            alpha = (alpha + delivered_ce).min(DCTCP_MAX_ALPHA);
        }
        self.alpha = alpha;
        self.reset(s);
    }

    /// dctcp_react_to_loss: halve, as Reno (at most once per loss episode: the stack calls it
    /// on entering Recovery and on an RTO that sets a new ssthresh).
    fn react_to_loss(&mut self, s: &mut SockState) {
        self.loss_cwnd = s.cwnd;
        s.ssthresh = (s.cwnd >> 1).max(2);
    }

    /// dctcp_cwnd_undo (`tcp_reno_undo_cwnd` for the fallback): the cwnd to restore when a
    /// reduction proves spurious (the `undo_cwnd` hook; the stack does not call it yet).
    pub fn cwnd_undo(&self, s: &SockState) -> u32 {
        if self.reno {
            s.cwnd.max(s.prior_cwnd)
        } else {
            s.cwnd.max(self.loss_cwnd)
        }
    }
}

impl CongestionControl for Dctcp {
    fn name(&self) -> &'static str {
        "dctcp"
    }

    /// dctcp_init: DCTCP only on an ECN connection; otherwise Linux switches the socket to
    /// `dctcp_reno`.
    fn init(&mut self, s: &mut SockState) {
        if !s.ecn {
            self.reno = true;
            return;
        }
        self.alpha = self.cfg.alpha_on_init.min(DCTCP_MAX_ALPHA);
        self.loss_cwnd = 0;
        self.reset(s);
    }

    /// dctcp_ssthresh: cwnd - cwnd x alpha / 2 (alpha x 1024, hence >> 11), at least 2.
    fn ssthresh(&mut self, s: &mut SockState) -> u32 {
        if self.reno {
            return (s.cwnd >> 1).max(2);
        }
        self.loss_cwnd = s.cwnd;
        let cut = ((s.cwnd as u64 * self.alpha as u64) >> 11) as u32;
        (s.cwnd - cut).max(2)
    }

    /// tcp_reno_cong_avoid.
    fn cong_avoid(&mut self, s: &mut SockState, acked: u32) {
        reno_cong_avoid(s, acked);
    }

    fn in_ack_event(&mut self, s: &mut SockState, _flags: u32) {
        if !self.reno {
            self.update_alpha(s);
        }
    }

    /// dctcp_state: entering Recovery halves (the RTO case is the CA_EVENT_LOSS below, so that
    /// one loss episode reduces once). With `dctcp_clamp_alpha_on_loss`, Linux 5.0's
    /// `dctcp_state`: alpha = 1 on entering Loss.
    fn set_state(&mut self, s: &mut SockState, new: CaState) {
        if self.reno {
            return;
        }
        if new == CaState::Recovery && new != s.ca_state {
            self.react_to_loss(s);
        }
        if self.cfg.clamp_alpha_on_loss && new == CaState::Loss {
            self.alpha = DCTCP_MAX_ALPHA;
        }
    }

    /// dctcp_cwnd_event: CA_EVENT_LOSS halves.
    fn cwnd_event(&mut self, s: &mut SockState, ev: CaEvent) {
        if !self.reno && ev == CaEvent::Loss {
            self.react_to_loss(s);
        }
    }

    /// The `dctcp` ops carry TCP_CONG_NEEDS_ECN; the `dctcp_reno` fallback's do not.
    fn undo_cwnd(&mut self, s: &mut SockState) -> u32 {
        self.cwnd_undo(s)
    }

    fn needs_ecn(&self) -> bool {
        !self.reno
    }
    fn ecn_codepoint(&self) -> crate::net::Ecn {
        if self.cfg.ect1 {
            crate::net::Ecn::Ect1
        } else {
            crate::net::Ecn::Ect0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sock(cwnd: u32) -> SockState {
        let mut s = SockState::new(1448, 10);
        s.ecn = true;
        s.cwnd = cwnd;
        s
    }

    /// A DCTCP whose window ends at segment 0: the next ACK updates alpha.
    fn dctcp(s: &mut SockState) -> Dctcp {
        let mut d = Dctcp::new(DctcpConfig::default());
        d.init(s);
        d
    }

    /// One observation window: `delivered` packets, `ce` of them with ECE; snd_una passes the
    /// window's end on this ACK.
    fn window(d: &mut Dctcp, s: &mut SockState, delivered: u64, ce: u64) {
        s.delivered += delivered;
        s.delivered_ce += ce;
        s.snd_una = s.snd_nxt;
        s.snd_nxt += 100;
        d.in_ack_event(s, 0);
    }

    #[test]
    fn alpha_starts_at_one_and_decays_by_g_per_window_without_marks() {
        let mut s = sock(10);
        let mut d = dctcp(&mut s);
        assert_eq!(d.alpha, 1024);
        // alpha -= alpha >> 4: 1024 -> 960 -> 900 -> 844.
        for want in [960, 900, 844] {
            window(&mut d, &mut s, 10, 0);
            assert_eq!(d.alpha, want);
        }
    }

    #[test]
    fn alpha_moves_by_g_times_the_marked_fraction() {
        let mut s = sock(10);
        let mut d = dctcp(&mut s);
        d.alpha = 0;
        // F = 5/10: + (5 << 6) / 10 = 32 (g F x 1024 = 1024 / 32).
        window(&mut d, &mut s, 10, 5);
        assert_eq!(d.alpha, 32);
        // 32 - 2 + (10 << 6) / 10 = 94.
        window(&mut d, &mut s, 10, 10);
        assert_eq!(d.alpha, 94);
        // 94 - 5 + (1 << 6) / 30 = 91 (integer division: 64 / 30 = 2).
        window(&mut d, &mut s, 30, 1);
        assert_eq!(d.alpha, 91);
        // Every packet marked for long: alpha reaches 1024 and stays (clamped).
        for _ in 0..200 {
            window(&mut d, &mut s, 10, 10);
        }
        assert_eq!(d.alpha, 1024);
    }

    #[test]
    fn a_small_alpha_decays_to_zero() {
        let mut s = sock(10);
        let mut d = dctcp(&mut s);
        // Linux min_not_zero: 15 >> 4 = 0, so alpha -= 15, not stuck at 15 ("tcp: allow dctcp
        // alpha to drop to zero").
        d.alpha = 15;
        window(&mut d, &mut s, 10, 0);
        assert_eq!(d.alpha, 0);
        d.alpha = 16;
        window(&mut d, &mut s, 10, 0);
        assert_eq!(d.alpha, 15);
    }

    #[test]
    fn alpha_is_updated_once_per_window() {
        let mut s = sock(10);
        let mut d = dctcp(&mut s);
        s.snd_nxt = 20;
        window(&mut d, &mut s, 10, 0); // window ends at 0: update; next window ends at 120
        assert_eq!(d.alpha, 960);
        // ACKs inside the window leave alpha alone, whatever they carry.
        s.snd_una = 119;
        s.delivered += 50;
        s.delivered_ce += 50;
        d.in_ack_event(&mut s, crate::cc::CA_ACK_ECE);
        assert_eq!(d.alpha, 960);
        // The ACK that reaches 120 folds in the whole window: 50 of 50 marked.
        s.snd_una = 120;
        d.in_ack_event(&mut s, crate::cc::CA_ACK_ECE);
        assert_eq!(d.alpha, 960 - 60 + 64);
    }

    #[test]
    fn ssthresh_cuts_alpha_over_two() {
        let mut s = sock(100);
        let mut d = dctcp(&mut s);
        // alpha = 1: halve.
        assert_eq!(d.ssthresh(&mut s), 50);
        // alpha = 256/1024: cwnd - cwnd/8 (100 x 256 >> 11 = 12).
        d.alpha = 256;
        assert_eq!(d.ssthresh(&mut s), 88);
        // alpha = 0: no reduction; never below 2.
        d.alpha = 0;
        assert_eq!(d.ssthresh(&mut s), 100);
        s.cwnd = 3;
        d.alpha = 1024;
        assert_eq!(d.ssthresh(&mut s), 2);
    }

    #[test]
    fn loss_halves_whatever_alpha_and_undo_restores_the_cwnd_before_it() {
        let mut s = sock(100);
        let mut d = dctcp(&mut s);
        d.alpha = 100;
        // Entering Recovery: ssthresh() first (alpha-based), then set_state halves (Linux
        // tcp_enter_recovery, then dctcp_state).
        s.ssthresh = d.ssthresh(&mut s);
        assert_eq!(s.ssthresh, 96);
        d.set_state(&mut s, CaState::Recovery);
        s.ca_state = CaState::Recovery;
        assert_eq!(s.ssthresh, 50);
        // Not again while in Recovery.
        s.cwnd = 60;
        d.set_state(&mut s, CaState::Recovery);
        assert_eq!(s.ssthresh, 50);
        assert_eq!(d.cwnd_undo(&s), 100);
        // An RTO: CA_EVENT_LOSS halves the cwnd it sees.
        d.cwnd_event(&mut s, CaEvent::Loss);
        assert_eq!(s.ssthresh, 30);
        assert_eq!(d.alpha, 100, "alpha is left alone on loss by default");
    }

    #[test]
    fn clamp_alpha_on_loss_sets_alpha_to_one_on_entering_loss() {
        let mut s = sock(100);
        let cfg = DctcpConfig { clamp_alpha_on_loss: true, ..DctcpConfig::default() };
        let mut d = Dctcp::new(cfg);
        d.init(&mut s);
        d.alpha = 100;
        d.set_state(&mut s, CaState::Recovery);
        assert_eq!(d.alpha, 100);
        d.set_state(&mut s, CaState::Loss);
        assert_eq!(d.alpha, 1024);
    }

    #[test]
    fn without_ecn_it_is_reno() {
        let mut s = sock(100);
        s.ecn = false;
        let mut d = dctcp(&mut s);
        assert!(d.is_reno() && !d.needs_ecn());
        d.alpha = 0;
        // tcp_reno_ssthresh, and no alpha update, no loss hook.
        assert_eq!(d.ssthresh(&mut s), 50);
        window(&mut d, &mut s, 10, 10);
        assert_eq!(d.alpha, 0);
        s.ssthresh = 7;
        d.set_state(&mut s, CaState::Recovery);
        d.cwnd_event(&mut s, CaEvent::Loss);
        assert_eq!(s.ssthresh, 7);
        // Reno growth: slow start below ssthresh.
        s.cwnd = 4;
        d.cong_avoid(&mut s, 2);
        assert_eq!(s.cwnd, 6);
    }
}
