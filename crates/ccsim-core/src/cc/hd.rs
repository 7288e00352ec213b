//! HD, the Hamilton Institute's delay-based congestion control, as FreeBSD implements it
//! (sys/netinet/cc/cc_hd.c, cc_hd(4); Budzisz, Stanojevic, Shorten & Baker, IEEE Commun. Lett.
//! 13(7), 2009). Delay input: the shared h_ertt measurement ([`super::ertt`]).
//!
//! On every ACK that advances the cumulative ACK (FreeBSD `CC_ACK`), when not in recovery, the
//! queueing delay `qdly = rtt - minrtt` (ticks) is compared with `queue_min`; above it HD backs
//! off with probability p(qdly) ([`hamilton_threshold`]): rising linearly from 0 at qmin to
//! pmax at qth, then falling linearly to 0 at the largest queueing delay seen
//! (`maxrtt - minrtt`). A backoff is NewReno's ECN response (`newreno_cc_cong_signal(CC_ECN)`):
//! ssthresh = cwnd = max(cwnd/2, 2), enter CONGRECOVERY (the stack's CWR: cwnd held until
//! everything outstanding is acknowledged), and no growth on that ACK. Everything else is
//! FreeBSD NewReno ([`newreno_increase`], loss: ssthresh = max(cwnd/2, 2)).
//!
//! Interpretations:
//! - `random() < p` with `p` computed in FreeBSD's integer arithmetic; `random()` is the top 31
//!   bits of the flow's own seeded stream ([`super::ertt::freebsd_random`]).
//! - FreeBSD uses the latest `e_t->rtt` on every `CC_ACK`, also when that ACK brought no new
//!   sample; so does this implementation (the stack's `pkts_acked > 0` is `CC_ACK`).
//! - Windows are whole packets; `snd_wnd` (the peer's receive window) is not visible to the
//!   algorithm and is taken as unlimited in `min(snd_wnd, cwnd)`.
//! - `queue_threshold`/`queue_min` are given in ms and rounded to ticks of `tick` (with the
//!   default 1 ms tick they are FreeBSD's tick values); a `queue_min` above `queue_threshold`
//!   is clamped to it (FreeBSD's sysctl handler rejects it).
//! - Growth is only taken while cwnd-limited (the simulator's `tcp_is_cwnd_limited`, where
//!   FreeBSD's `CCF_CWND_LIMITED` tests only cwnd <= snd_wnd).
//! - Leaving recovery is the stack's (cwnd = ssthresh), not `newreno_cc_post_recovery`.

use super::ertt::{self, Ertt};
use super::{AckSample, AlgorithmInfo, CaState, CongestionControl, ParamSpec, Params, SockState};
use crate::rng::Rng;

pub const PARAMS: &[ParamSpec] = &[
    ertt::TICK_PARAM,
    ParamSpec::num(
        "queue_threshold",
        20.0,
        0.001,
        100_000.0,
        "ms",
        "qth: queueing delay of the largest backoff probability (cc_hd.c hd_qthresh = 20 ticks; cc_hd(4) net.inet.tcp.cc.hd.queue_threshold).",
    ),
    ParamSpec::num(
        "queue_min",
        5.0,
        0.0,
        100_000.0,
        "ms",
        "qmin: no backoff at or below this queueing delay (cc_hd.c hd_qmin = 5 ticks; cc_hd(4) net.inet.tcp.cc.hd.queue_min).",
    ),
    ParamSpec::int(
        "pmax",
        5.0,
        1.0,
        100.0,
        "percent",
        "Largest backoff probability per ACK, at qdly = qth (cc_hd.c hd_pmax = 5; cc_hd(4) net.inet.tcp.cc.hd.pmax, 1-100).",
    ),
];

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    name: "hd",
    summary: "Hamilton delay-based: per-ACK probabilistic halving when queueing delay exceeds queue_min; NewReno otherwise",
    source: "FreeBSD sys/netinet/cc/cc_hd.c, khelp/h_ertt.c, cc_hd(4); Budzisz et al., IEEE Commun. Lett. 2009",
    params: PARAMS,
};

/// FreeBSD's RFC 3465 limit L (`net.inet.tcp.abc_l_var` = 2): slow start adds at most 2 pkts
/// per ACK.
pub const ABC_L: u32 = 2;

#[derive(Debug, Clone)]
pub struct HdConfig {
    pub tick_ms: f64,
    pub queue_threshold_ms: f64,
    pub queue_min_ms: f64,
    pub pmax: u32,
}

impl HdConfig {
    pub fn from_params(p: &Params) -> Self {
        HdConfig {
            tick_ms: p.get("tick"),
            queue_threshold_ms: p.get("queue_threshold"),
            queue_min_ms: p.get("queue_min"),
            pmax: p.get("pmax") as u32,
        }
    }
}

impl Default for HdConfig {
    fn default() -> Self {
        Self::from_params(&Params::defaults(PARAMS))
    }
}

/// The Hamilton backoff curve in FreeBSD's integer form (`should_backoff` in cc_hd.c; cc_chd.c
/// uses the same): the threshold `p` that `random()` (uniform in [0, 2^31 - 1]) must be below.
/// - qdly <= qmin: 0 (no backoff)
/// - qdly < qth: `((RANDOM_MAX / 100) * pmax / (qth - qmin)) * (qdly - qmin)`
/// - qdly > qth: `((RANDOM_MAX / 100) * pmax / (maxqdly - qth)) * (maxqdly - qdly)`
/// - qdly = qth: `(RANDOM_MAX / 100) * pmax`
pub fn hamilton_threshold(qdly: i64, maxqdly: i64, qth: i64, qmin: i64, pmax: u32) -> u64 {
    let top = (ertt::RANDOM_MAX / 100) * pmax as u64;
    if qdly <= qmin {
        return 0;
    }
    if qdly < qth {
        (top / (qth - qmin) as u64) * (qdly - qmin) as u64
    } else if qdly > qth {
        if maxqdly <= qth || qdly >= maxqdly {
            return 0; // maxqdly >= qdly always holds (lifetime max); guard the division anyway
        }
        (top / (maxqdly - qth) as u64) * (maxqdly - qdly) as u64
    } else {
        top
    }
}

/// FreeBSD NewReno window increase (`newreno_cc_ack_received` with RFC 3465 ABC, the default),
/// in packets; returns the increment. Slow start (cwnd <= ssthresh): min(acked, L), L = 1 while
/// recovering from an RTO (FreeBSD: snd_nxt != snd_max). Congestion avoidance: +1 each time a
/// cwnd's worth of packets has been acknowledged (`t_bytes_acked`, kept in `cwnd_cnt`, counting
/// at most L per ACK as tcp_input.c's `cc_ack_received` does).
pub fn newreno_increase(s: &mut SockState, acked: u32) -> u32 {
    if s.cwnd > s.ssthresh {
        s.cwnd_cnt += acked.min(ABC_L);
        if s.cwnd_cnt >= s.cwnd {
            s.cwnd_cnt -= s.cwnd;
            1
        } else {
            0
        }
    } else {
        s.cwnd_cnt = 0;
        let l = if s.ca_state == CaState::Loss { 1 } else { ABC_L };
        acked.min(l)
    }
}

pub struct Hd {
    cfg: HdConfig,
    pub ertt: Ertt,
    rng: Rng,
    /// qth and qmin in ticks.
    pub qth: i64,
    pub qmin: i64,
    /// A backoff was taken on the current ACK (no growth; CWR requested).
    backoff_this_ack: bool,
    /// Delay-based backoffs so far.
    pub backoffs: u64,
}

impl Hd {
    pub fn new(cfg: HdConfig, rng: Rng) -> Self {
        let ertt = Ertt::new(cfg.tick_ms);
        let qth = ertt.ms_to_ticks(cfg.queue_threshold_ms).max(1);
        let qmin = ertt.ms_to_ticks(cfg.queue_min_ms).min(qth);
        Hd { cfg, ertt, rng, qth, qmin, backoff_this_ack: false, backoffs: 0 }
    }

    /// The backoff threshold for `random()` at queueing delay `qdly` (ticks), with
    /// `maxqdly = maxrtt - minrtt`.
    pub fn backoff_threshold(&self, qdly_ticks: i64, maxqdly_ticks: i64) -> u64 {
        hamilton_threshold(qdly_ticks, maxqdly_ticks, self.qth, self.qmin, self.cfg.pmax)
    }

    /// Probability of a backoff on one ACK: threshold / 2^31.
    pub fn backoff_probability(&self, qdly_ticks: i64, maxqdly_ticks: i64) -> f64 {
        ertt::threshold_probability(self.backoff_threshold(qdly_ticks, maxqdly_ticks))
    }
}

impl CongestionControl for Hd {
    fn name(&self) -> &'static str {
        "hd"
    }

    fn init(&mut self, s: &mut SockState) {
        self.ertt.init(s);
    }

    /// hd_ack_received.
    fn pkts_acked(&mut self, s: &mut SockState, sample: &AckSample) {
        self.backoff_this_ack = false;
        self.ertt.on_ack(s, sample.rtt);
        if sample.pkts_acked == 0 {
            return; // not CC_ACK
        }
        let e = &self.ertt;
        if e.rtt == 0 || e.minrtt == 0 {
            return;
        }
        let qdly = e.rtt - e.minrtt;
        if qdly <= self.qmin || e.in_recovery(s) {
            return;
        }
        let p = self.backoff_threshold(qdly, e.maxrtt - e.minrtt);
        if ertt::freebsd_random(&mut self.rng) < p {
            // newreno_cc_cong_signal(CC_ECN).
            if !self.ertt.in_cong_recovery(s) {
                let w = (s.cwnd / 2).max(2);
                s.ssthresh = w;
                s.cwnd = w;
                s.cwnd_cnt = 0;
                s.cwr_request = true;
            }
            self.backoff_this_ack = true;
            self.backoffs += 1;
            s.record("delay_backoff", s.cwnd as f64, self.ertt.ticks_to_ms(qdly));
        }
    }

    fn cong_avoid(&mut self, s: &mut SockState, acked: u32) {
        if self.backoff_this_ack {
            // The stack may have been leaving CWR/Recovery when the backoff was decided; ask
            // again so that the reduction is held (CONGRECOVERY), and do not grow.
            s.cwr_request = true;
            return;
        }
        if !s.cwnd_limited() {
            return;
        }
        let incr = newreno_increase(s, acked);
        s.cwnd = (s.cwnd + incr).min(s.cwnd_clamp);
    }

    /// newreno_cc_cong_signal(CC_NDUPACK): max(cwnd/2, 2), unless a delay-based reduction is
    /// in progress (IN_CONGRECOVERY), which keeps ssthresh.
    /// CC_RTO: max(cwnd/2, 2) whatever the state.
    fn ssthresh(&mut self, s: &mut SockState) -> u32 {
        if s.loss_is_timeout {
            (s.cwnd / 2).max(2)
        } else if self.ertt.in_cong_recovery(s) {
            s.ssthresh
        } else {
            (s.cwnd / 2).max(2)
        }
    }

    fn set_state(&mut self, s: &mut SockState, new: CaState) {
        self.ertt.set_state(s, new);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::MS;

    fn hd(params: &[(&str, f64)]) -> Hd {
        let mut p = Params::defaults(PARAMS);
        for &(k, v) in params {
            p.set(k, v);
        }
        Hd::new(HdConfig::from_params(&p), crate::rng::derive(1, 2))
    }

    #[test]
    fn probability_curve_in_freebsd_integer_arithmetic() {
        let h = hd(&[]);
        assert_eq!((h.qth, h.qmin), (20, 5));
        // At or below qmin: never.
        assert_eq!(h.backoff_threshold(5, 40), 0);
        assert_eq!(h.backoff_probability(3, 40), 0.0);
        // Rising part: (21474836 * 5 / 15) * (qdly - 5) = 7158278 * (qdly - 5).
        assert_eq!(h.backoff_threshold(6, 40), 7_158_278);
        assert_eq!(h.backoff_threshold(12, 40), 50_107_946);
        // qdly = qth: pmax = 21474836 * 5.
        assert_eq!(h.backoff_threshold(20, 40), 107_374_180);
        assert!((h.backoff_probability(20, 40) - 0.05).abs() < 1e-8);
        // Falling part with maxqdly = 40: (107374180 / 20) * (40 - qdly) = 5368709 * (40 - qdly).
        assert_eq!(h.backoff_threshold(21, 40), 5_368_709 * 19);
        assert_eq!(h.backoff_threshold(30, 40), 53_687_090);
        assert!((h.backoff_probability(30, 40) - 0.025).abs() < 1e-8);
        assert_eq!(h.backoff_threshold(40, 40), 0);
        // The midpoint (qmin + qth) / 2 is pmax / 2: qmin = 4 ms, qth = 20 ms, qdly = 12.
        let h4 = hd(&[("queue_min", 4.0)]);
        assert_eq!(h4.backoff_threshold(12, 40), 6_710_886 * 8);
        assert!((h4.backoff_probability(12, 40) - 0.025).abs() < 1e-8);
    }

    /// A socket with a first sample of 41 ticks (minrtt) already taken.
    fn primed(h: &mut Hd) -> SockState {
        let mut s = SockState::new(1000, 10);
        s.cwnd = 40;
        s.ssthresh = 20;
        h.init(&mut s);
        s.snd_nxt = 100;
        s.now = 1000 * MS;
        s.snd_una = 1;
        h.pkts_acked(&mut s, &AckSample { pkts_acked: 1, rtt: 40 * MS as i64, ..Default::default() });
        assert_eq!(h.ertt.minrtt, 41);
        s
    }

    #[test]
    fn forced_backoff_halves_cwnd_and_requests_cwr() {
        // pmax = 100 and qdly = qth: p = 2147483600 / 2^31, certain for this seed.
        let mut h = hd(&[("pmax", 100.0)]);
        let mut s = primed(&mut h);
        assert!(!s.cwr_request);
        s.snd_una = 2;
        s.now += MS;
        h.pkts_acked(&mut s, &AckSample { pkts_acked: 1, rtt: 60 * MS as i64, ..Default::default() });
        assert_eq!(h.ertt.rtt - h.ertt.minrtt, 20);
        assert_eq!((s.cwnd, s.ssthresh), (20, 20));
        assert!(s.cwr_request);
        assert_eq!(h.backoffs, 1);
        assert_eq!(s.events.last().unwrap().kind, "delay_backoff");
        // No growth on the backoff ACK, even if the stack calls cong_avoid.
        s.cwr_request = false;
        h.cong_avoid(&mut s, 1);
        assert_eq!(s.cwnd, 20);
        assert!(s.cwr_request);
        // Floor of 2 packets.
        let mut h = hd(&[("pmax", 100.0)]);
        let mut s = primed(&mut h);
        s.cwnd = 3;
        s.snd_una = 2;
        h.pkts_acked(&mut s, &AckSample { pkts_acked: 1, rtt: 60 * MS as i64, ..Default::default() });
        assert_eq!((s.cwnd, s.ssthresh), (2, 2));
    }

    #[test]
    fn no_decision_in_cwr_or_recovery_or_on_dupacks() {
        let mut h = hd(&[("pmax", 100.0)]);
        let mut s = primed(&mut h);
        for st in [CaState::Cwr, CaState::Recovery] {
            h.set_state(&mut s, st);
            s.ca_state = st;
            s.snd_una = 2;
            h.pkts_acked(&mut s, &AckSample { pkts_acked: 1, rtt: 60 * MS as i64, ..Default::default() });
            assert_eq!((s.cwnd, s.cwr_request, h.backoffs), (40, false, 0), "{st:?}");
        }
        // Once snd_una reaches the recovery point the stack leaves CWR on this ACK: FreeBSD
        // has already left it when ack_received runs, so a decision is made.
        s.snd_una = 100;
        h.pkts_acked(&mut s, &AckSample { pkts_acked: 98, rtt: 60 * MS as i64, ..Default::default() });
        assert_eq!(h.backoffs, 1);
        // A duplicate ACK (nothing cumulatively acked) is not CC_ACK.
        let mut h = hd(&[("pmax", 100.0)]);
        let mut s = primed(&mut h);
        h.pkts_acked(&mut s, &AckSample { pkts_acked: 0, rtt: 60 * MS as i64, ..Default::default() });
        assert_eq!((s.cwnd, h.backoffs), (40, 0));
    }

    #[test]
    fn below_qmin_grows_like_freebsd_newreno() {
        let mut h = hd(&[]);
        let mut s = primed(&mut h);
        s.cwnd = 10;
        s.ssthresh = 100;
        // Slow start: at most L = 2 per ACK.
        h.cong_avoid(&mut s, 3);
        assert_eq!(s.cwnd, 12);
        // Congestion avoidance: +1 after a cwnd's worth of ACKed packets.
        s.ssthresh = 5;
        for _ in 0..5 {
            h.cong_avoid(&mut s, 2);
        }
        assert_eq!((s.cwnd, s.cwnd_cnt), (12, 10));
        h.cong_avoid(&mut s, 2);
        assert_eq!((s.cwnd, s.cwnd_cnt), (13, 0));
        // A stretch ACK counts at most L = 2 (tcp_input.c cc_ack_received).
        h.cong_avoid(&mut s, 10);
        assert_eq!((s.cwnd, s.cwnd_cnt), (13, 2));
        // A qdly of 5 ticks (= qmin) never backs off.
        s.snd_una = 2;
        h.pkts_acked(&mut s, &AckSample { pkts_acked: 1, rtt: 45 * MS as i64, ..Default::default() });
        assert_eq!(h.backoffs, 0);
    }

    #[test]
    fn loss_halves_and_keeps_ssthresh_during_a_delay_reduction() {
        let mut h = hd(&[]);
        let mut s = primed(&mut h);
        assert_eq!(h.ssthresh(&mut s), 20);
        s.cwnd = 3;
        assert_eq!(h.ssthresh(&mut s), 2);
        s.cwnd = 20;
        s.ssthresh = 20;
        h.set_state(&mut s, CaState::Cwr);
        s.ca_state = CaState::Cwr;
        s.cwnd = 30;
        assert_eq!(h.ssthresh(&mut s), 20, "IN_CONGRECOVERY keeps ssthresh");
        s.loss_is_timeout = true;
        assert_eq!(h.ssthresh(&mut s), 15, "an RTO halves");
    }
}
