//! Scalable TCP as Linux implements it (net/ipv4/tcp_scalable.c, Tom Kelly's Scalable TCP,
//! CCR 2003): in congestion avoidance cwnd grows by 1 packet per min(cwnd, 100) ACKed packets
//! (+1% per RTT above 100 packets), and a loss keeps 7/8 of cwnd.
//!
//! The constants are the current kernel's: `TCP_SCALABLE_AI_CNT` = 100 with the count taken
//! in ACKed packets (`tcp_cong_avoid_ai` with `acked`, since the commit "tcp: fix stretch ACK
//! bugs in Scalable"); older kernels counted ACKs against 50 to make up for delayed ACKs.
//! Linux has no module parameters here; `ai_cnt` and `md_scale` are ccsim options for those
//! two constants (defaults = Linux). Undo is `tcp_reno_undo_cwnd` (the trait's default).

use super::{AlgorithmInfo, CongestionControl, ParamSpec, Params, SockState};

pub const PARAMS: &[ParamSpec] = &[
    ParamSpec::int(
        "ai_cnt",
        100.0,
        1.0,
        1_000_000.0,
        "pkts",
        "cwnd grows by 1 per min(cwnd, ai_cnt) ACKed packets (tcp_scalable.c TCP_SCALABLE_AI_CNT = 100: +1% per RTT; older kernels: 50 counted per ACK). A ccsim option for a Linux constant.",
    ),
    ParamSpec::int(
        "md_scale",
        3.0,
        1.0,
        16.0,
        "log2",
        "On loss cwnd loses cwnd >> md_scale (tcp_scalable.c TCP_SCALABLE_MD_SCALE = 3: keeps 7/8). A ccsim option for a Linux constant.",
    ),
];

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    name: "scalable",
    summary: "Scalable TCP: MIMD, +1% of cwnd per RTT (1 pkt per 100 ACKed), keep 7/8 on loss",
    source: "Kelly, CCR 2003; Linux net/ipv4/tcp_scalable.c",
    params: PARAMS,
};

#[derive(Debug, Clone)]
pub struct ScalableConfig {
    pub ai_cnt: u32,
    pub md_scale: u32,
}

impl ScalableConfig {
    pub fn from_params(p: &Params) -> Self {
        ScalableConfig { ai_cnt: p.get("ai_cnt") as u32, md_scale: p.get("md_scale") as u32 }
    }
}

impl Default for ScalableConfig {
    fn default() -> Self {
        Self::from_params(&Params::defaults(PARAMS))
    }
}

/// Scalable keeps no per-flow state beyond the socket's.
pub struct Scalable {
    cfg: ScalableConfig,
}

impl Scalable {
    pub fn new(cfg: ScalableConfig) -> Self {
        Scalable { cfg }
    }
}

impl CongestionControl for Scalable {
    fn name(&self) -> &'static str {
        "scalable"
    }

    /// tcp_scalable_cong_avoid: slow start (the leftover carried on), then
    /// tcp_cong_avoid_ai(min(cwnd, TCP_SCALABLE_AI_CNT), acked).
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
        let w = s.cwnd.min(self.cfg.ai_cnt);
        s.cong_avoid_ai(w, acked);
    }

    /// tcp_scalable_ssthresh: max(cwnd - (cwnd >> TCP_SCALABLE_MD_SCALE), 2).
    fn ssthresh(&mut self, s: &mut SockState) -> u32 {
        (s.cwnd - (s.cwnd >> self.cfg.md_scale)).max(2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sock(cwnd: u32, ssthresh: u32) -> SockState {
        SockState::with_window(cwnd, ssthresh)
    }

    #[test]
    fn below_100_packets_it_grows_like_reno() {
        let mut c = Scalable::new(ScalableConfig::default());
        let mut s = sock(40, 10);
        for _ in 0..39 {
            c.cong_avoid(&mut s, 1);
        }
        assert_eq!(s.cwnd, 40);
        c.cong_avoid(&mut s, 1);
        assert_eq!(s.cwnd, 41);
    }

    #[test]
    fn above_100_packets_it_adds_one_per_100_acked() {
        let mut c = Scalable::new(ScalableConfig::default());
        let mut s = sock(1000, 10);
        // One window of 1000 ACKed packets (as 500 delayed ACKs of 2): +10 packets = +1%.
        for _ in 0..500 {
            c.cong_avoid(&mut s, 2);
        }
        assert_eq!(s.cwnd, 1010);
        // A stretch ACK of 250 packets: +2, 50 carried.
        let mut s = sock(1000, 10);
        c.cong_avoid(&mut s, 250);
        assert_eq!((s.cwnd, s.cwnd_cnt), (1002, 50));
    }

    #[test]
    fn slow_start_leftover_goes_to_the_increase() {
        let mut c = Scalable::new(ScalableConfig::default());
        let mut s = sock(198, 200);
        c.cong_avoid(&mut s, 102);
        // 2 packets take cwnd to ssthresh = 200, the other 100 add 1 (w = min(200, 100)).
        assert_eq!((s.cwnd, s.cwnd_cnt), (201, 0));
    }

    #[test]
    fn loss_keeps_seven_eighths() {
        let mut c = Scalable::new(ScalableConfig::default());
        assert_eq!(c.ssthresh(&mut sock(1000, 10)), 875);
        assert_eq!(c.ssthresh(&mut sock(100, 10)), 88); // 100 - 12
        assert_eq!(c.ssthresh(&mut sock(7, 10)), 7); // 7 >> 3 = 0
        assert_eq!(c.ssthresh(&mut sock(2, 10)), 2);
        // md_scale = 1 halves.
        let mut h = Scalable::new(ScalableConfig { md_scale: 1, ..ScalableConfig::default() });
        assert_eq!(h.ssthresh(&mut sock(1001, 10)), 501);
    }

    #[test]
    fn undo_is_renos() {
        let mut c = Scalable::new(ScalableConfig::default());
        let mut s = sock(875, 875);
        s.prior_cwnd = 1000;
        assert_eq!(c.undo_cwnd(&mut s), 1000);
        s.cwnd = 1200;
        assert_eq!(c.undo_cwnd(&mut s), 1200);
    }
}
