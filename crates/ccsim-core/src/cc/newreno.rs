//! NewReno (RFC 5681 / RFC 6582 window rules, as Linux `tcp_reno_*` in tcp_cong.c).
//! Loss recovery itself (SACK, RFC 6675, PRR) is the stack's; this file is only the window law.

use super::{AlgorithmInfo, CongestionControl, ParamSpec, Params, SockState};

pub const PARAMS: &[ParamSpec] = &[
    ParamSpec::num(
        "beta",
        0.5,
        0.1,
        0.9,
        "fraction",
        "Multiplicative decrease: ssthresh = max(beta x cwnd, 2) on loss (RFC 5681 eq. 4: FlightSize/2).",
    ),
    ParamSpec::flag(
        "abc",
        true,
        "Count ACKed packets, as Linux does (RFC 3465 ABC); false = RFC 5681 per-ACK growth, so delayed ACKs halve the increase.",
    ),
];

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    name: "newreno",
    summary: "Loss-based AIMD: slow start, +1 pkt per RTT, halve on loss (SACK + PRR recovery)",
    source: "RFC 5681, RFC 6582; Linux net/ipv4/tcp_cong.c (tcp_reno_cong_avoid, tcp_reno_ssthresh)",
    params: PARAMS,
};

#[derive(Debug, Clone)]
pub struct NewRenoConfig {
    pub beta: f64,
    pub abc: bool,
}

impl NewRenoConfig {
    pub fn from_params(p: &Params) -> Self {
        NewRenoConfig { beta: p.get("beta"), abc: p.flag("abc") }
    }
}

impl Default for NewRenoConfig {
    fn default() -> Self {
        Self::from_params(&Params::defaults(PARAMS))
    }
}

pub struct NewReno {
    cfg: NewRenoConfig,
}

impl NewReno {
    pub fn new(cfg: NewRenoConfig) -> Self {
        NewReno { cfg }
    }
}

impl CongestionControl for NewReno {
    fn name(&self) -> &'static str {
        "newreno"
    }

    /// Linux tcp_reno_ssthresh: max(cwnd >> 1, 2) (with beta = 0.5).
    fn ssthresh(&mut self, s: &mut SockState) -> u32 {
        if self.cfg.beta == 0.5 {
            (s.cwnd >> 1).max(2)
        } else {
            ((s.cwnd as f64 * self.cfg.beta) as u32).max(2)
        }
    }

    /// Linux tcp_reno_cong_avoid; without ABC each ACK counts once, however many packets it
    /// covers.
    fn cong_avoid(&mut self, s: &mut SockState, acked: u32) {
        reno_cong_avoid(s, if self.cfg.abc { acked } else { acked.min(1) });
    }
}

/// Linux tcp_reno_cong_avoid: slow start, then +1 packet per cwnd of ACKed packets.
pub fn reno_cong_avoid(s: &mut SockState, mut acked: u32) {
    if !s.cwnd_limited() || acked == 0 {
        return;
    }
    if s.in_slow_start() {
        acked = s.slow_start(acked);
        if acked == 0 {
            return;
        }
    }
    let w = s.cwnd;
    s.cong_avoid_ai(w, acked);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sock(cwnd: u32, ssthresh: u32) -> SockState {
        SockState::with_window(cwnd, ssthresh)
    }

    #[test]
    fn slow_start_adds_one_per_acked_packet_up_to_ssthresh() {
        let mut cc = NewReno::new(NewRenoConfig::default());
        let mut s = sock(10, 14);
        cc.cong_avoid(&mut s, 2);
        assert_eq!(s.cwnd, 12);
        // 4 acked: 2 take cwnd to ssthresh, the other 2 go to congestion avoidance.
        cc.cong_avoid(&mut s, 4);
        assert_eq!(s.cwnd, 14);
        assert_eq!(s.cwnd_cnt, 2);
    }

    #[test]
    fn congestion_avoidance_adds_one_per_window() {
        let mut cc = NewReno::new(NewRenoConfig::default());
        let mut s = sock(20, 10);
        for _ in 0..19 {
            cc.cong_avoid(&mut s, 1);
        }
        assert_eq!(s.cwnd, 20);
        cc.cong_avoid(&mut s, 1);
        assert_eq!(s.cwnd, 21);
        assert_eq!(s.cwnd_cnt, 0);
    }

    #[test]
    fn no_growth_when_not_cwnd_limited() {
        let mut cc = NewReno::new(NewRenoConfig::default());
        let mut s = sock(20, 10);
        s.is_cwnd_limited = false;
        s.max_packets_out = 5;
        cc.cong_avoid(&mut s, 20);
        assert_eq!(s.cwnd, 20);
    }

    #[test]
    fn without_abc_a_stretch_ack_counts_once() {
        let mut cc = NewReno::new(NewRenoConfig { abc: false, ..NewRenoConfig::default() });
        let mut s = sock(10, 100);
        cc.cong_avoid(&mut s, 2);
        assert_eq!(s.cwnd, 11);
        let mut abc = NewReno::new(NewRenoConfig::default());
        let mut s2 = sock(10, 100);
        abc.cong_avoid(&mut s2, 2);
        assert_eq!(s2.cwnd, 12);
    }

    #[test]
    fn ssthresh_halves_with_floor_of_two() {
        let mut cc = NewReno::new(NewRenoConfig::default());
        assert_eq!(cc.ssthresh(&mut sock(41, 100)), 20);
        assert_eq!(cc.ssthresh(&mut sock(3, 100)), 2);
    }
}
