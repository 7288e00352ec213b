//! CHD, CAIA-Hamilton Delay, as FreeBSD implements it (sys/netinet/cc/cc_chd.c, cc_chd(4);
//! Hayes & Armitage, "Improved coexistence and loss tolerance for delay based TCP congestion
//! control", IEEE LCN 2010). Delay input: the shared h_ertt measurement ([`super::ertt`]).
//!
//! Once per RTT (at NEW_MEASUREMENT), when not in recovery, the queueing delay is
//! `qdly = maxrtt_in_rtt - minrtt` (with `use_max`; else the latest RTT). Above `queue_min` one
//! `random()` draw decides a backoff with the Hamilton curve ([`super::hd::hamilton_threshold`],
//! pmax per RTT). A backoff first updates the shadow window (`shadow_w = max(cwnd, shadow_w)`
//! if `loss_compete` or the delay is higher than at the previous backoff, else 0), then sets
//! ssthresh = cwnd = cwnd - max(cwnd/2, 1) (at least 2) and enters CONGRECOVERY (the stack's
//! CWR). `loss_compete` is set when qdly > qth and the draw is below p (with `loss_fair`), and
//! cleared when qdly <= qth.
//!
//! A loss detected by duplicate ACKs (`ssthresh()`, FreeBSD `CC_NDUPACK`) is taken as
//! congestion only if `max(rtt, maxrtt_in_rtt) - minrtt > qth` and not in recovery: then, if
//! competing (`loss_compete`), cwnd is first restored to `max(cwnd, shadow_w)`, and the window
//! is halved as above. Otherwise it is a non-congestion loss: ssthresh = cwnd (no cut; PRR
//! keeps cwnd). Either way a nonzero shadow window halves (at least 2). The shadow window grows
//! with cwnd (same increment). Window growth is FreeBSD NewReno's ([`super::hd::newreno_increase`]).
//!
//! Interpretations:
//! - A timeout is FreeBSD's default branch, `newreno_cc_cong_signal(CC_RTO)`: ssthresh =
//!   max(cwnd/2, 2), shadow window untouched. The stack tells `ssthresh()` which kind of loss
//!   it handles (`SockState::loss_is_timeout`, FreeBSD's CC_RTO vs CC_NDUPACK).
//! - FreeBSD's `chd_window_increase` also runs during recovery (its cwnd is then overwritten by
//!   the recovery code); ccsim's stack does not call `cong_avoid` in Recovery or CWR, so cwnd and
//!   the shadow window do not grow then.
//! - Windows in whole packets; `snd_wnd` taken as unlimited; thresholds in ms rounded to ticks;
//!   `queue_min >= queue_threshold` is clamped to `queue_threshold - 1` tick (FreeBSD rejects
//!   it); growth only while cwnd-limited; see also [`super::hd`] and [`super::ertt`].

use super::ertt::{self, Ertt};
use super::hd::{hamilton_threshold, newreno_increase};
use super::{AckSample, AlgorithmInfo, CaState, CcTelemetry, CongestionControl, ParamSpec, Params, SockState};
use crate::rng::Rng;

pub const PARAMS: &[ParamSpec] = &[
    ertt::TICK_PARAM,
    ParamSpec::num(
        "queue_threshold",
        20.0,
        0.001,
        100_000.0,
        "ms",
        "qth: queueing delay of the largest backoff probability; losses above it are congestion (cc_chd.c chd_qthresh = 20 ticks; cc_chd(4) net.inet.tcp.cc.chd.queue_threshold).",
    ),
    ParamSpec::num(
        "queue_min",
        5.0,
        0.0,
        100_000.0,
        "ms",
        "qmin: no delay-based backoff at or below this queueing delay (cc_chd.c chd_qmin = 5 ticks; cc_chd(4) net.inet.tcp.cc.chd.queue_min).",
    ),
    ParamSpec::int(
        "pmax",
        50.0,
        1.0,
        100.0,
        "percent",
        "Largest backoff probability per RTT (cc_chd.c chd_pmax = 50 and cc_chd(4); the 5 in its SYSCTL_PROC is only the handler argument).",
    ),
    ParamSpec::flag(
        "loss_fair",
        true,
        "Enable the shadow window: set loss_compete on probable competition with loss-based flows (cc_chd.c chd_loss_fair = 1; cc_chd(4) net.inet.tcp.cc.chd.loss_fair).",
    ),
    ParamSpec::flag(
        "use_max",
        true,
        "Use the largest RTT of the measurement period rather than the latest (cc_chd.c chd_use_max = 1; cc_chd(4) net.inet.tcp.cc.chd.use_max).",
    ),
];

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    name: "chd",
    summary: "CAIA-Hamilton delay: per-RTT probabilistic backoff on queueing delay, shadow window, tolerance of non-congestion loss",
    source: "FreeBSD sys/netinet/cc/cc_chd.c, khelp/h_ertt.c, cc_chd(4); Hayes & Armitage, IEEE LCN 2010",
    params: PARAMS,
};

#[derive(Debug, Clone)]
pub struct ChdConfig {
    pub tick_ms: f64,
    pub queue_threshold_ms: f64,
    pub queue_min_ms: f64,
    pub pmax: u32,
    pub loss_fair: bool,
    pub use_max: bool,
}

impl ChdConfig {
    pub fn from_params(p: &Params) -> Self {
        ChdConfig {
            tick_ms: p.get("tick"),
            queue_threshold_ms: p.get("queue_threshold"),
            queue_min_ms: p.get("queue_min"),
            pmax: p.get("pmax") as u32,
            loss_fair: p.flag("loss_fair"),
            use_max: p.flag("use_max"),
        }
    }
}

impl Default for ChdConfig {
    fn default() -> Self {
        Self::from_params(&Params::defaults(PARAMS))
    }
}

pub struct Chd {
    cfg: ChdConfig,
    pub ertt: Ertt,
    rng: Rng,
    pub qth: i64,
    pub qmin: i64,
    /// Shadow window in packets (the NewReno window without delay backoffs); 0 = off.
    pub shadow_w: u32,
    /// Probably competing with loss-based flows.
    pub loss_compete: bool,
    /// qdly (ticks) of the previous delay-based backoff.
    pub prev_backoff_qdly: i64,
    backoff_this_ack: bool,
    pub backoffs: u64,
}

impl Chd {
    pub fn new(cfg: ChdConfig, rng: Rng) -> Self {
        let ertt = Ertt::new(cfg.tick_ms);
        let qth = ertt.ms_to_ticks(cfg.queue_threshold_ms).max(1);
        let qmin = ertt.ms_to_ticks(cfg.queue_min_ms).min(qth - 1);
        Chd {
            cfg,
            ertt,
            rng,
            qth,
            qmin,
            shadow_w: 0,
            loss_compete: false,
            prev_backoff_qdly: 0,
            backoff_this_ack: false,
            backoffs: 0,
        }
    }

    /// The `random()` threshold of one per-RTT decision at `qdly` (ticks).
    pub fn backoff_threshold(&self, qdly_ticks: i64, maxqdly_ticks: i64) -> u64 {
        hamilton_threshold(qdly_ticks, maxqdly_ticks, self.qth, self.qmin, self.cfg.pmax)
    }

    /// Probability of a backoff at one NEW_MEASUREMENT: threshold / 2^31.
    pub fn backoff_probability(&self, qdly_ticks: i64, maxqdly_ticks: i64) -> f64 {
        ertt::threshold_probability(self.backoff_threshold(qdly_ticks, maxqdly_ticks))
    }

    /// cc_chd.c should_backoff: one draw, which also updates `loss_compete`.
    fn should_backoff(&mut self, qdly: i64, maxqdly: i64) -> bool {
        let rand = ertt::freebsd_random(&mut self.rng);
        let p = self.backoff_threshold(qdly, maxqdly);
        if qdly < self.qth {
            self.loss_compete = false;
        } else if qdly > self.qth {
            if self.cfg.loss_fair && rand < p {
                self.loss_compete = true;
            }
        } else {
            self.loss_compete = false;
        }
        rand < p
    }

    /// chd_window_decrease: w - max(w/2, 1), at least 2 (w = min(snd_wnd, cwnd)).
    pub fn window_decrease(cwnd: u32) -> u32 {
        let w = cwnd - (cwnd / 2).max(1).min(cwnd);
        w.max(2)
    }
}

impl CongestionControl for Chd {
    fn name(&self) -> &'static str {
        "chd"
    }

    /// chd_conn_init: the shadow window starts at cwnd, in case of competition from the start.
    fn init(&mut self, s: &mut SockState) {
        self.ertt.init(s);
        self.prev_backoff_qdly = 0;
        self.loss_compete = false;
        self.shadow_w = s.cwnd;
    }

    /// chd_ack_received (the decision part; growth is in `cong_avoid`).
    fn pkts_acked(&mut self, s: &mut SockState, sample: &AckSample) {
        self.backoff_this_ack = false;
        let new_measurement = self.ertt.on_ack(s, sample.rtt);
        let mut backoff = false;
        let mut qdly = 0;
        if new_measurement {
            let (max_in_rtt, _) = self.ertt.take_period();
            let rtt = if self.cfg.use_max { max_in_rtt } else { self.ertt.rtt };
            if rtt > 0 && self.ertt.minrtt > 0 && !self.ertt.in_recovery(s) {
                qdly = rtt - self.ertt.minrtt;
                if qdly > self.qmin {
                    let maxqdly = self.ertt.maxrtt - self.ertt.minrtt;
                    backoff = self.should_backoff(qdly, maxqdly);
                } else {
                    self.loss_compete = false;
                }
            }
        }
        if backoff {
            if self.loss_compete || qdly > self.prev_backoff_qdly {
                self.shadow_w = self.shadow_w.max(s.cwnd);
            } else {
                self.shadow_w = 0;
            }
            self.prev_backoff_qdly = qdly;
            // chd_cong_signal(CC_CHD_DELAY).
            let w = Self::window_decrease(s.cwnd);
            s.ssthresh = w;
            s.cwnd = w;
            s.cwnd_cnt = 0;
            s.cwr_request = true;
            self.backoff_this_ack = true;
            self.backoffs += 1;
            s.record("delay_backoff", w as f64, self.ertt.ticks_to_ms(qdly));
        }
    }

    /// chd_window_increase (NewReno; the shadow window grows by the same increment).
    fn cong_avoid(&mut self, s: &mut SockState, acked: u32) {
        if self.backoff_this_ack {
            s.cwr_request = true;
            return;
        }
        if !s.cwnd_limited() {
            return;
        }
        let incr = newreno_increase(s, acked);
        if self.shadow_w > 0 {
            self.shadow_w = (self.shadow_w + incr).min(s.cwnd_clamp);
        }
        s.cwnd = (s.cwnd + incr).min(s.cwnd_clamp);
    }

    /// chd_cong_signal: CC_NDUPACK as below; CC_RTO is NewReno's max(cwnd/2, 2), shadow untouched.
    fn ssthresh(&mut self, s: &mut SockState) -> u32 {
        if s.loss_is_timeout {
            return (s.cwnd / 2).max(2);
        }
        let e = &self.ertt;
        let qdly = e.rtt.max(e.maxrtt_in_rtt) - e.minrtt;
        let ssthresh = if !e.in_recovery(s) && qdly > self.qth {
            if self.loss_compete {
                s.cwnd = s.cwnd.max(self.shadow_w);
            }
            Self::window_decrease(s.cwnd)
        } else {
            s.record("loss_ignored", s.cwnd as f64, e.ticks_to_ms(qdly));
            s.cwnd
        };
        if self.shadow_w > 0 {
            self.shadow_w = (self.shadow_w / 2).max(2);
        }
        ssthresh
    }

    fn set_state(&mut self, s: &mut SockState, new: CaState) {
        self.ertt.set_state(s, new);
    }

    fn telemetry(&self) -> CcTelemetry {
        CcTelemetry { shadow_wnd_pkts: self.shadow_w as f64, ..CcTelemetry::default() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{Time, MS};

    fn chd(params: &[(&str, f64)], seed: u64) -> Chd {
        let mut p = Params::defaults(PARAMS);
        for &(k, v) in params {
            p.set(k, v);
        }
        Chd::new(ChdConfig::from_params(&p), crate::rng::derive(seed, 3))
    }

    /// Drive one ACK at `now` ms advancing snd_una to `una`, with an RTT sample in ms.
    fn ack(c: &mut Chd, s: &mut SockState, now_ms: Time, una: u32, rtt_ms: i64) {
        s.now = now_ms * MS;
        let acked = una - s.snd_una;
        s.snd_una = una;
        c.pkts_acked(s, &AckSample { pkts_acked: acked, rtt: rtt_ms * MS as i64, ..Default::default() });
    }

    /// Connection with minrtt = 41 ticks and maxrtt = 81 ticks (maxqdly 40), 100 segments sent,
    /// the mark at segment 100.
    fn primed(c: &mut Chd) -> SockState {
        let mut s = SockState::new(1000, 10);
        c.init(&mut s);
        assert_eq!(c.shadow_w, 10);
        s.cwnd = 40;
        s.ssthresh = 20;
        s.snd_nxt = 100;
        ack(c, &mut s, 1000, 1, 40); // NEW_MEASUREMENT, qdly 0
        ack(c, &mut s, 1001, 2, 80);
        assert_eq!((c.ertt.minrtt, c.ertt.maxrtt, c.ertt.mark()), (41, 81, 100));
        s
    }

    #[test]
    fn probability_curve_per_rtt() {
        let c = chd(&[], 1);
        assert_eq!((c.qth, c.qmin), (20, 5));
        assert_eq!(c.backoff_threshold(5, 40), 0);
        // (21474836 * 50 / 15) * (qdly - 5) = 71582786 * (qdly - 5).
        assert_eq!(c.backoff_threshold(6, 40), 71_582_786);
        assert_eq!(c.backoff_threshold(20, 40), 1_073_741_800);
        assert!((c.backoff_probability(20, 40) - 0.5).abs() < 1e-7);
        // Falling: (1073741800 / 20) * (40 - qdly) = 53687090 * (40 - qdly).
        assert_eq!(c.backoff_threshold(30, 40), 536_870_900);
        assert!((c.backoff_probability(30, 40) - 0.25).abs() < 1e-7);
        assert_eq!(c.backoff_threshold(40, 40), 0);
    }

    #[test]
    fn decisions_only_at_new_measurement() {
        // pmax 100, qdly = qth: a decision is certain; it must wait for the mark.
        let mut c = chd(&[("pmax", 100.0)], 1);
        let mut s = primed(&mut c);
        for una in 3..=100 {
            ack(&mut c, &mut s, 1001 + una as Time, una, 60);
        }
        assert_eq!(c.backoffs, 0, "the mark (segment 100) is not yet acknowledged");
        s.snd_nxt = 150;
        ack(&mut c, &mut s, 1200, 101, 60);
        // maxrtt_in_rtt = 81 (the 80 ms sample is in this period): qdly 40 = maxqdly -> p = 0.
        assert_eq!(c.backoffs, 0);
        // Next period: only 60 ms samples (61 ticks): qdly 20 = qth.
        s.snd_nxt = 200;
        for una in 102..=151 {
            ack(&mut c, &mut s, 1100 + una as Time, una, 60);
        }
        assert_eq!(c.backoffs, 1);
        // cwnd 40 -> 40 - 20 = 20; shadow: qdly 20 > prev 0 -> max(40, 10) = 40.
        assert_eq!((s.cwnd, s.ssthresh, c.shadow_w, c.prev_backoff_qdly), (20, 20, 40, 20));
        assert!(s.cwr_request);
        assert!(!c.loss_compete, "qdly = qth clears loss_compete");
        // The next backoff at a delay no higher than the previous one, not competing: the
        // shadow window is reset.
        s.snd_nxt = 250;
        for una in 152..=201 {
            ack(&mut c, &mut s, 1100 + una as Time, una, 60);
        }
        assert_eq!(c.backoffs, 2);
        assert_eq!((s.cwnd, c.shadow_w), (10, 0));
    }

    #[test]
    fn window_decrease_keeps_the_ceiling_half() {
        assert_eq!(Chd::window_decrease(40), 20);
        assert_eq!(Chd::window_decrease(41), 21);
        assert_eq!(Chd::window_decrease(3), 2);
        assert_eq!(Chd::window_decrease(1), 2);
    }

    #[test]
    fn congestion_loss_while_competing_restores_from_shadow_then_halves() {
        let mut c = chd(&[], 1);
        let mut s = primed(&mut c);
        // A period with qdly 30 > qth in progress.
        ack(&mut c, &mut s, 1010, 3, 70);
        assert_eq!(c.ertt.maxrtt_in_rtt, 81);
        c.loss_compete = true;
        c.shadow_w = 60;
        s.cwnd = 30;
        // qdly = max(rtt 71, maxrtt_in_rtt 81) - 41 = 40 > 20: congestion.
        let ss = c.ssthresh(&mut s);
        assert_eq!(s.cwnd, 60, "restored to the shadow window");
        assert_eq!(ss, 30, "60 - max(60 / 2, 1)");
        assert_eq!(c.shadow_w, 30, "shadow window halves");
        // Without loss_compete cwnd is not restored.
        let mut c = chd(&[], 1);
        let mut s = primed(&mut c);
        c.shadow_w = 60;
        s.cwnd = 30;
        assert_eq!(c.ssthresh(&mut s), 15);
        assert_eq!((s.cwnd, c.shadow_w), (30, 30));
    }

    #[test]
    fn non_congestion_loss_keeps_cwnd() {
        let mut c = chd(&[], 1);
        let mut s = SockState::new(1000, 10);
        c.init(&mut s);
        s.snd_nxt = 100;
        s.cwnd = 40;
        ack(&mut c, &mut s, 1000, 1, 40);
        ack(&mut c, &mut s, 1001, 2, 60); // qdly 20 = qth: not above
        c.shadow_w = 9;
        assert_eq!(c.ssthresh(&mut s), 40);
        assert_eq!((s.cwnd, c.shadow_w), (40, 4));
        assert_eq!(s.events.last().unwrap().kind, "loss_ignored");
        // In CWR (a delay backoff in progress) a loss is not congestion either.
        ack(&mut c, &mut s, 1002, 3, 80);
        c.set_state(&mut s, CaState::Cwr);
        s.ca_state = CaState::Cwr;
        assert_eq!(c.ssthresh(&mut s), 40);
        // A timeout is NewReno's: no shadow restore, no shadow halving, no event.
        s.ca_state = CaState::Open;
        c.set_state(&mut s, CaState::Open);
        c.shadow_w = 50;
        c.loss_compete = true;
        let n = s.events.len();
        s.loss_is_timeout = true;
        s.ssthresh = c.ssthresh(&mut s);
        assert_eq!((s.ssthresh, s.cwnd, c.shadow_w, s.events.len()), (20, 40, 50, n));
    }

    #[test]
    fn shadow_window_grows_with_cwnd() {
        let mut c = chd(&[], 1);
        let mut s = primed(&mut c);
        c.shadow_w = 50;
        s.cwnd = 10;
        s.ssthresh = 100;
        c.cong_avoid(&mut s, 2);
        assert_eq!((s.cwnd, c.shadow_w), (12, 52));
        c.shadow_w = 0;
        c.cong_avoid(&mut s, 2);
        assert_eq!((s.cwnd, c.shadow_w), (14, 0), "a zero shadow window stays off");
    }
}
