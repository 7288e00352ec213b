//! CDG, CAIA Delay-Gradient, as FreeBSD implements it (sys/netinet/cc/cc_cdg.c, cc_cdg(4);
//! Hayes & Armitage, "Revisiting TCP congestion control using delay gradients", IFIP
//! Networking 2011). Delay input: the shared h_ertt measurement ([`super::ertt`]).
//!
//! Once per RTT (NEW_MEASUREMENT) CDG compares the period's largest and smallest RTT with the
//! previous period's: the gradients `g_max`, `g_min` (ticks per RTT, scaled by 2^7 = 128,
//! `D_P_E`), smoothed into `max_qtrend` and `min_qtrend` by a moving average over
//! `smoothing_factor` periods (FreeBSD's integer arithmetic, [`MovingAverage`]). The first
//! positive one of (slow start: g_min), min_qtrend, (slow start: g_max), max_qtrend triggers a
//! backoff with probability P(g) = 1 - exp(-(g/128)/G) ([`backoff_probability`]), certain
//! above 5·G·128. The trends also give the queue state ([`next_queue_state`]).
//!
//! A backoff (not in recovery) counts `consec_cong_cnt`; the first `loss_compete_consec_cong`
//! in a row reduce ssthresh = cwnd = cwnd·beta_delay and enter CONGRECOVERY (the stack's CWR);
//! further ones are held (competition with loss-based flows assumed), and after
//! `loss_compete_hold_backoff` held ones the count restarts. Any negative trend resets it. Every
//! detected backoff skips the next gradient (`maxrtt_in_prevrtt = 0`) and resyncs the shadow
//! window, `shadow_w = max(cwnd, shadow_w)`.
//!
//! A loss detected by duplicate ACKs (`ssthresh()`, FreeBSD `CC_NDUPACK`): in CONGRECOVERY or
//! with the queue inferred EMPTY, RISING or FALLING it is not congestion (ssthresh = cwnd);
//! otherwise (FULL or UNKNOWN) the shadow window halves and
//! ssthresh = max(shadow_w, cwnd·beta_loss). Growth: slow start +1 pkt per ACK (no ABC);
//! congestion avoidance +1 pkt per RTT at NEW_MEASUREMENT (with alpha_inc > 0 the increment
//! grows by 1 pkt every alpha_inc RTTs); the shadow window gets +1 pkt likewise.
//!
//! Interpretations:
//! - `exp_backoff_scale` G defaults to 3, the value `cdg_init_vnet` sets; cc_cdg(4) and the
//!   sysctl's hint say 2 (algorithms.md: follow the code).
//! - P(g) uses FreeBSD's table `probexp[i] = (1 - e^(-i/128))·2^15` (`EXP_PREC` = 15, regenerated
//!   here with rounding to nearest, which reproduces all 641 FreeBSD entries) with
//!   `probexp[0] = 10`, index `(g + G/2) / G`, and `prng32() < (UINT32_MAX / 2^15)·probexp[idx]`.
//!   So P is the table's value, within 2^-15 of 1 - exp(-(g/128)/G).
//! - Windows in whole packets: `w·beta/100` is floored to a packet and kept >= 2 (FreeBSD counts
//!   bytes and has no floor); `snd_wnd` is taken as unlimited.
//! - A timeout is FreeBSD's default branch, `newreno_cc_cong_signal(CC_RTO)`: ssthresh =
//!   max(cwnd/2, 2), shadow window untouched (`SockState::loss_is_timeout` tells the two apart).
//! - FreeBSD's `cdg_window_increase` also runs in recovery; ccsim's stack does not call
//!   `cong_avoid` in Recovery or CWR, so there is no growth then (at most the one RTT of a CWR).
//!   Growth is taken only while cwnd-limited.

use super::ertt::{self, Ertt, NO_MIN};
use super::{AckSample, AlgorithmInfo, CaState, CcTelemetry, CongestionControl, ParamSpec, Params, SockState};
use crate::rng::Rng;
use std::collections::VecDeque;
use std::sync::OnceLock;

pub const PARAMS: &[ParamSpec] = &[
    ertt::TICK_PARAM,
    ParamSpec::int(
        "alpha_inc",
        0.0,
        0.0,
        1_000_000.0,
        "RTTs",
        "Raise the congestion-avoidance increment by 1 pkt every alpha_inc RTTs; 0 = always 1 pkt per RTT (cc_cdg.c cdg_init_vnet; cc_cdg(4) net.inet.tcp.cc.cdg.alpha_inc).",
    ),
    ParamSpec::int(
        "beta_delay",
        70.0,
        1.0,
        100.0,
        "percent",
        "Window kept on a delay-gradient backoff (cc_cdg.c cdg_init_vnet = 70; cc_cdg(4) net.inet.tcp.cc.cdg.beta_delay).",
    ),
    ParamSpec::int(
        "beta_loss",
        50.0,
        1.0,
        100.0,
        "percent",
        "Window kept on a congestion loss (cc_cdg.c cdg_init_vnet = 50; cc_cdg(4) net.inet.tcp.cc.cdg.beta_loss).",
    ),
    ParamSpec::int(
        "smoothing_factor",
        8.0,
        0.0,
        1000.0,
        "RTTs",
        "Moving-average length of the gradients; 0 = no smoothing (cc_cdg.c cdg_init_vnet = 8; cc_cdg(4) net.inet.tcp.cc.cdg.smoothing_factor).",
    ),
    ParamSpec::int(
        "exp_backoff_scale",
        3.0,
        1.0,
        1000.0,
        "ticks/RTT",
        "G in P(backoff) = 1 - exp(-g/G) (cc_cdg.c cdg_init_vnet sets 3; cc_cdg(4) and the sysctl hint say 2; the code is followed).",
    ),
    ParamSpec::int(
        "loss_compete_consec_cong",
        5.0,
        0.0,
        1_000_000.0,
        "backoffs",
        "Consecutive delay-gradient backoffs after which CDG assumes loss-based competition and holds (cc_cdg.c cdg_init_vnet = 5; cc_cdg(4)).",
    ),
    ParamSpec::int(
        "loss_compete_hold_backoff",
        5.0,
        0.0,
        1_000_000.0,
        "backoffs",
        "Congestion episodes for which backoff is then held (cc_cdg.c cdg_init_vnet = 5; cc_cdg(4)).",
    ),
];

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    name: "cdg",
    summary: "CAIA delay-gradient: probabilistic backoff on per-RTT RTT gradients, queue-state inference, shadow window, loss tolerance",
    source: "FreeBSD sys/netinet/cc/cc_cdg.c, khelp/h_ertt.c, cc_cdg(4); Hayes & Armitage, IFIP Networking 2011",
    params: PARAMS,
};

/// Gradients are scaled by 2^D_P_E.
pub const D_P_E: u32 = 7;
/// Largest gradient (ticks per RTT, over G) in the probexp table.
pub const MAXGRAD: i64 = 5;
/// Bits of the probexp table's fixed point.
pub const EXP_PREC: u32 = 15;
/// NewReno's decrease of the shadow window on loss, percent (cc_cdg.c RENO_BETA).
pub const RENO_BETA: u32 = 50;

/// FreeBSD `probexp`: (1 - exp(-i/128)) << 15 for i = 0..=640, entry 0 set to 10.
pub fn probexp() -> &'static [u32; 641] {
    static TABLE: OnceLock<[u32; 641]> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t = [0u32; 641];
        for (i, v) in t.iter_mut().enumerate() {
            *v = ((1.0 - (-(i as f64) / 128.0).exp()) * (1u32 << EXP_PREC) as f64).round() as u32;
        }
        t[0] = 10;
        t
    })
}

/// The prng32() threshold of a backoff at smoothed gradient `qtrend` (x128), or None when the
/// backoff is certain (`qtrend > (MAXGRAD * G) << D_P_E`; cc_cdg.c prob_backoff).
pub fn backoff_threshold(qtrend: i64, g: u32) -> Option<u64> {
    let g = g.max(1) as i64;
    if qtrend > (MAXGRAD * g) << D_P_E {
        return None;
    }
    let idx = if g > 1 { (qtrend + g / 2) / g } else { qtrend };
    let idx = idx.clamp(0, 640) as usize;
    Some((u32::MAX / (1 << EXP_PREC)) as u64 * probexp()[idx] as u64)
}

/// Probability of a backoff at smoothed gradient `qtrend` (ticks per RTT x 128) with scale G.
pub fn backoff_probability(qtrend: i64, g: u32) -> f64 {
    match backoff_threshold(qtrend, g) {
        None => 1.0,
        Some(p) => p as f64 / 4_294_967_296.0,
    }
}

/// Inferred state of the bottleneck queue. The discriminants are FreeBSD's (`CDG_Q_*`): a loss
/// is taken as congestion only in FULL or UNKNOWN (`queue_state < CDG_Q_FULL` otherwise).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum QueueState {
    Empty = 1,
    Rising = 2,
    Falling = 3,
    Full = 4,
    Unknown = 9999,
}

impl QueueState {
    pub fn as_str(self) -> &'static str {
        match self {
            QueueState::Unknown => "unknown",
            QueueState::Empty => "empty",
            QueueState::Rising => "rising",
            QueueState::Full => "full",
            QueueState::Falling => "falling",
        }
    }
}

/// cc_cdg.c's queue-state update from the smoothed trends (unchanged when none matches).
pub fn next_queue_state(prev: QueueState, min_qtrend: i64, max_qtrend: i64) -> QueueState {
    if min_qtrend > 0 && max_qtrend <= 0 {
        QueueState::Full
    } else if min_qtrend >= 0 && max_qtrend < 0 {
        QueueState::Empty
    } else if min_qtrend > 0 && max_qtrend > 0 {
        QueueState::Rising
    } else if min_qtrend < 0 && max_qtrend < 0 {
        QueueState::Falling
    } else {
        prev
    }
}

/// cc_cdg.c calc_moving_average for the two trends, in its integer arithmetic: while filling,
/// `trend += sample / n`; then `trend += (sample - oldest) / n` (C division, toward zero).
#[derive(Debug, Clone, Default)]
pub struct MovingAverage {
    size: usize,
    pub max_qtrend: i64,
    pub min_qtrend: i64,
    qmax: VecDeque<i64>,
    qmin: VecDeque<i64>,
}

impl MovingAverage {
    pub fn new(size: usize) -> Self {
        MovingAverage { size, ..Default::default() }
    }

    pub fn add(&mut self, qdiff_max: i64, qdiff_min: i64) {
        if self.size == 0 {
            self.max_qtrend = qdiff_max;
            self.min_qtrend = qdiff_min;
            return;
        }
        let n = self.size as i64;
        if self.qmin.len() >= self.size {
            let old_min = self.qmin.pop_front().unwrap();
            self.min_qtrend += (qdiff_min - old_min) / n;
            self.qmin.push_back(qdiff_min);
            let old_max = self.qmax.pop_front().unwrap();
            self.max_qtrend += (qdiff_max - old_max) / n;
            self.qmax.push_back(qdiff_max);
        } else {
            self.min_qtrend += qdiff_min / n;
            self.qmin.push_back(qdiff_min);
            self.max_qtrend += qdiff_max / n;
            self.qmax.push_back(qdiff_max);
        }
    }
}

#[derive(Debug, Clone)]
pub struct CdgConfig {
    pub tick_ms: f64,
    pub alpha_inc: u32,
    pub beta_delay: u32,
    pub beta_loss: u32,
    pub smoothing_factor: u32,
    pub exp_backoff_scale: u32,
    pub consec_cong: u32,
    pub hold_backoff: u32,
}

impl CdgConfig {
    pub fn from_params(p: &Params) -> Self {
        CdgConfig {
            tick_ms: p.get("tick"),
            alpha_inc: p.get("alpha_inc") as u32,
            beta_delay: p.get("beta_delay") as u32,
            beta_loss: p.get("beta_loss") as u32,
            smoothing_factor: p.get("smoothing_factor") as u32,
            exp_backoff_scale: p.get("exp_backoff_scale") as u32,
            consec_cong: p.get("loss_compete_consec_cong") as u32,
            hold_backoff: p.get("loss_compete_hold_backoff") as u32,
        }
    }
}

impl Default for CdgConfig {
    fn default() -> Self {
        Self::from_params(&Params::defaults(PARAMS))
    }
}

pub struct Cdg {
    cfg: CdgConfig,
    pub ertt: Ertt,
    rng: Rng,
    pub trend: MovingAverage,
    pub window_incr: u32,
    pub rtt_count: u32,
    /// The previous period's largest RTT in ticks; 0 = none (the next gradient is skipped).
    pub maxrtt_in_prevrtt: i64,
    pub minrtt_in_prevrtt: i64,
    pub consec_cong_cnt: u32,
    /// Shadow window in packets; 0 = off.
    pub shadow_w: u32,
    pub queue_state: QueueState,
    /// Congestion was detected on this ACK: no growth.
    congestion_this_ack: bool,
    /// A delay-based reduction was made on this ACK (CWR requested).
    backoff_this_ack: bool,
    new_measurement_this_ack: bool,
    pub backoffs: u64,
    pub held_backoffs: u64,
}

impl Cdg {
    pub fn new(cfg: CdgConfig, rng: Rng) -> Self {
        Cdg {
            ertt: Ertt::new(cfg.tick_ms),
            trend: MovingAverage::new(cfg.smoothing_factor as usize),
            cfg,
            rng,
            window_incr: 0,
            rtt_count: 0,
            maxrtt_in_prevrtt: 0,
            minrtt_in_prevrtt: 0,
            consec_cong_cnt: 0,
            shadow_w: 0,
            queue_state: QueueState::Unknown,
            congestion_this_ack: false,
            backoff_this_ack: false,
            new_measurement_this_ack: false,
            backoffs: 0,
            held_backoffs: 0,
        }
    }

    /// Backoff probability at `g_x128` with this flow's G.
    pub fn backoff_probability(&self, g_x128: i64) -> f64 {
        backoff_probability(g_x128, self.cfg.exp_backoff_scale)
    }

    /// cc_cdg.c prob_backoff.
    fn prob_backoff(&mut self, qtrend: i64) -> bool {
        match backoff_threshold(qtrend, self.cfg.exp_backoff_scale) {
            None => true,
            Some(p) => ertt::freebsd_prng32(&mut self.rng) < p,
        }
    }

    /// cdg_window_decrease: min(snd_wnd, w)·beta/100, in whole packets, at least 2.
    fn window_decrease(w: u32, beta: u32) -> u32 {
        ((w as u64 * beta as u64 / 100) as u32).max(2)
    }

    /// One NEW_MEASUREMENT: gradients, trends, backoff decision, queue state. Returns whether
    /// congestion was detected.
    fn new_measurement(&mut self, s: &SockState) -> bool {
        let slowstart = s.cwnd <= s.ssthresh;
        let (max_in, min_in) = self.ertt.take_period();
        let mut congestion = false;
        if self.maxrtt_in_prevrtt != 0 {
            let qdiff_max = (max_in - self.maxrtt_in_prevrtt) << D_P_E;
            let qdiff_min = (min_in - self.minrtt_in_prevrtt) << D_P_E;
            self.trend.add(qdiff_max, qdiff_min);
            let (min_t, max_t) = (self.trend.min_qtrend, self.trend.max_qtrend);
            if slowstart && qdiff_min > 0 {
                congestion = self.prob_backoff(qdiff_min);
            } else if min_t > 0 {
                congestion = self.prob_backoff(min_t);
            } else if slowstart && qdiff_max > 0 {
                congestion = self.prob_backoff(qdiff_max);
            } else if max_t > 0 {
                congestion = self.prob_backoff(max_t);
            }
            self.queue_state = next_queue_state(self.queue_state, min_t, max_t);
            if self.queue_state == QueueState::Empty && min_t >= 0 && max_t < 0 {
                self.shadow_w = 0;
            }
            if min_t < 0 || max_t < 0 {
                self.consec_cong_cnt = 0;
            }
        }
        self.minrtt_in_prevrtt = if min_in == NO_MIN { 0 } else { min_in };
        self.maxrtt_in_prevrtt = max_in;
        congestion
    }
}

impl CongestionControl for Cdg {
    fn name(&self) -> &'static str {
        "cdg"
    }

    /// cdg_conn_init: the shadow window starts at cwnd.
    fn init(&mut self, s: &mut SockState) {
        self.ertt.init(s);
        self.shadow_w = s.cwnd;
    }

    /// cdg_ack_received (the decision part; growth is in `cong_avoid`).
    fn pkts_acked(&mut self, s: &mut SockState, sample: &AckSample) {
        self.congestion_this_ack = false;
        self.backoff_this_ack = false;
        let nm = self.ertt.on_ack(s, sample.rtt);
        self.new_measurement_this_ack = nm;
        if !nm || !self.new_measurement(s) {
            return;
        }
        self.congestion_this_ack = true;
        self.consec_cong_cnt += 1;
        if self.ertt.in_recovery(s) {
            return;
        }
        if self.consec_cong_cnt <= self.cfg.consec_cong {
            // cdg_cong_signal(CC_CDG_DELAY).
            let w = Self::window_decrease(s.cwnd, self.cfg.beta_delay);
            s.ssthresh = w;
            s.cwnd = w;
            s.cwnd_cnt = 0;
            s.cwr_request = true;
            self.window_incr = 0;
            self.rtt_count = 0;
            self.backoff_this_ack = true;
            self.backoffs += 1;
            let g = self.trend.min_qtrend.max(self.trend.max_qtrend);
            s.record("delay_backoff", w as f64, self.ertt.ticks_to_ms(g) / 128.0);
        } else {
            // Backing off has not made the queue fall: assume loss-based competition and hold.
            self.held_backoffs += 1;
            if self.consec_cong_cnt >= self.cfg.consec_cong + self.cfg.hold_backoff {
                self.consec_cong_cnt = 0;
            }
        }
        // The effect shows only in the second RTT: skip the next gradient.
        self.maxrtt_in_prevrtt = 0;
        self.shadow_w = self.shadow_w.max(s.cwnd);
    }

    /// cdg_window_increase.
    fn cong_avoid(&mut self, s: &mut SockState, _acked: u32) {
        if self.backoff_this_ack {
            s.cwr_request = true;
            return;
        }
        if self.congestion_this_ack || !s.cwnd_limited() {
            return;
        }
        let (incr, s_w_incr);
        if s.cwnd <= s.ssthresh {
            incr = 1;
            s_w_incr = 1;
            self.window_incr = 0;
            self.rtt_count = 0;
        } else if self.new_measurement_this_ack {
            s_w_incr = 1;
            if self.cfg.alpha_inc == 0 {
                incr = 1;
            } else {
                self.rtt_count += 1;
                if self.rtt_count >= self.cfg.alpha_inc {
                    self.window_incr += 1;
                    self.rtt_count = 0;
                }
                incr = self.window_incr;
            }
        } else {
            return;
        }
        if self.shadow_w > 0 {
            self.shadow_w = (self.shadow_w + s_w_incr).min(s.cwnd_clamp);
        }
        s.cwnd = (s.cwnd + incr).min(s.cwnd_clamp);
    }

    /// cdg_cong_signal: CC_NDUPACK as below; CC_RTO is NewReno's max(cwnd/2, 2).
    fn ssthresh(&mut self, s: &mut SockState) -> u32 {
        if s.loss_is_timeout {
            return (s.cwnd / 2).max(2);
        }
        if self.ertt.in_cong_recovery(s) || self.queue_state < QueueState::Full {
            s.record("loss_ignored", s.cwnd as f64, f64::NAN);
            return s.cwnd.max(2);
        }
        if self.shadow_w > 0 {
            self.shadow_w = Self::window_decrease(self.shadow_w, RENO_BETA);
        }
        self.window_incr = 0;
        self.rtt_count = 0;
        self.shadow_w.max(Self::window_decrease(s.cwnd, self.cfg.beta_loss))
    }

    fn set_state(&mut self, s: &mut SockState, new: CaState) {
        self.ertt.set_state(s, new);
    }

    fn telemetry(&self) -> CcTelemetry {
        CcTelemetry {
            queue_state: Some(self.queue_state.as_str()),
            shadow_wnd_pkts: self.shadow_w as f64,
            ..CcTelemetry::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{Time, MS};

    fn cdg(params: &[(&str, f64)]) -> Cdg {
        let mut p = Params::defaults(PARAMS);
        for &(k, v) in params {
            p.set(k, v);
        }
        Cdg::new(CdgConfig::from_params(&p), crate::rng::derive(5, 7))
    }

    #[test]
    fn probexp_table_is_freebsds() {
        let t = probexp();
        assert_eq!(&t[..8], &[10, 255, 508, 759, 1008, 1255, 1501, 1744]);
        assert_eq!((t[64], t[128], t[256], t[384], t[640]), (12893, 20713, 28333, 31137, 32547));
        // Sum of FreeBSD's 641 entries.
        assert_eq!(t.iter().map(|&v| v as u64).sum::<u64>(), 16_821_734);
    }

    #[test]
    fn backoff_probability_is_one_minus_exp() {
        let g = 3;
        // g = 3 ticks/RTT (x128 = 384): idx 128, P = 1 - e^-1.
        assert_eq!(backoff_threshold(384, g), Some(131_071 * 20_713));
        // At multiples of G the table index is exact and P = 1 - exp(-(g/128)/G) within the
        // table's 2^-15 resolution.
        for (gx, expect) in [(384, 1.0 - (-1.0f64).exp()), (192, 1.0 - (-0.5f64).exp()), (1152, 1.0 - (-3.0f64).exp())] {
            let p = backoff_probability(gx, g);
            assert!((p - expect).abs() < 1e-4, "g {gx}: {p} vs {expect}");
        }
        // Elsewhere the index (g + G/2) / G rounds: g = 128 uses probexp[43], not 42.67.
        assert_eq!(backoff_threshold(128, g), Some(131_071 * 9_350));
        assert!((backoff_probability(128, g) - (1.0 - (-1.0f64 / 3.0).exp())).abs() < 2e-3);
        // Smallest gradient: probexp[0] = 10 (idx (1 + 1) / 3 = 0).
        assert_eq!(backoff_threshold(1, g), Some(131_071 * 10));
        // Up to 5·G·128 = 1920 from the table; certain above.
        assert_eq!(backoff_threshold(1920, g), Some(131_071 * 32_547));
        assert!((backoff_probability(1920, g) - (1.0 - (-5.0f64).exp())).abs() < 1e-4);
        assert_eq!(backoff_threshold(1921, g), None);
        assert_eq!(backoff_probability(1921, g), 1.0);
        // G = 1 indexes the table directly.
        assert_eq!(backoff_threshold(128, 1), Some(131_071 * 20_713));
        assert_eq!(cdg(&[]).backoff_probability(100_000), 1.0);
    }

    #[test]
    fn queue_states() {
        use QueueState::*;
        assert_eq!(next_queue_state(Unknown, 10, -5), Full);
        assert_eq!(next_queue_state(Unknown, 10, 0), Full);
        assert_eq!(next_queue_state(Unknown, 0, -5), Empty);
        assert_eq!(next_queue_state(Full, 3, -5), Full);
        assert_eq!(next_queue_state(Unknown, 10, 10), Rising);
        assert_eq!(next_queue_state(Unknown, -1, -5), Falling);
        // No match: unchanged.
        assert_eq!(next_queue_state(Rising, 0, 0), Rising);
        assert_eq!(next_queue_state(Unknown, -3, 4), Unknown);
        assert_eq!(next_queue_state(Full, 0, 7), Full);
        assert!(Empty < Full && Rising < Full && Falling < Full && Unknown > Full);
    }

    #[test]
    fn moving_average_in_integer_arithmetic() {
        let mut m = MovingAverage::new(8);
        for _ in 0..8 {
            m.add(100, -60);
        }
        // 8 x (100 / 8 = 12) and 8 x (-60 / 8 = -7): truncation per sample, as FreeBSD.
        assert_eq!((m.max_qtrend, m.min_qtrend), (96, -56));
        m.add(0, 0); // replaces the oldest: (0 - 100) / 8 = -12, (0 + 60) / 8 = 7
        assert_eq!((m.max_qtrend, m.min_qtrend), (84, -49));
        let mut m0 = MovingAverage::new(0);
        m0.add(5, -3);
        m0.add(7, 2);
        assert_eq!((m0.max_qtrend, m0.min_qtrend), (7, 2));
    }

    /// Feed whole RTT periods: each period's RTT samples (ms) end with the ACK of the mark.
    struct Drive {
        s: SockState,
        now: Time,
    }

    impl Drive {
        fn new(c: &mut Cdg, cwnd: u32, ssthresh: u32) -> Self {
            let mut s = SockState::new(1000, 10);
            c.init(&mut s);
            s.cwnd = cwnd;
            s.ssthresh = ssthresh;
            Drive { s, now: 1000 }
        }

        /// One period with samples `rtts` (ms): ACKs that do not move snd_una, then one that
        /// acknowledges the mark (NEW_MEASUREMENT).
        fn period(&mut self, c: &mut Cdg, rtts: &[i64]) {
            let mark = c.ertt.mark();
            self.s.snd_nxt = mark + 10;
            let before = c.ertt.measurements;
            for (i, &r) in rtts.iter().enumerate() {
                self.now += 1;
                self.s.now = self.now * MS;
                let una = if i + 1 == rtts.len() { mark + 1 } else { self.s.snd_una };
                let acked = una - self.s.snd_una;
                self.s.snd_una = una;
                c.pkts_acked(&mut self.s, &AckSample { pkts_acked: acked, rtt: r * MS as i64, ..Default::default() });
            }
            assert_eq!(c.ertt.measurements, before + 1);
        }
    }

    #[test]
    fn queue_state_from_gradient_sequences() {
        // Rising: min and max both increase by 1 tick per RTT.
        let mut c = cdg(&[("smoothing_factor", 0.0), ("exp_backoff_scale", 1000.0)]);
        let mut d = Drive::new(&mut c, 100, 50);
        for k in 0..4 {
            d.period(&mut c, &[40 + k, 50 + k]);
        }
        assert_eq!(c.queue_state, QueueState::Rising);
        assert_eq!((c.trend.min_qtrend, c.trend.max_qtrend), (128, 128));
        // Full: min rises, max flat.
        d.period(&mut c, &[45, 53]);
        assert_eq!(c.queue_state, QueueState::Full, "trends {:?}", (c.trend.min_qtrend, c.trend.max_qtrend));
        // Falling: both fall.
        d.period(&mut c, &[44, 52]);
        assert_eq!(c.queue_state, QueueState::Falling);
        // Empty: min flat, max falls; the shadow window is reset.
        c.shadow_w = 77;
        d.period(&mut c, &[44, 51]);
        assert_eq!(c.queue_state, QueueState::Empty);
        assert_eq!(c.shadow_w, 0);
        assert_eq!(c.telemetry().queue_state, Some("empty"));
        // Both flat: unchanged.
        d.period(&mut c, &[44, 51]);
        assert_eq!(c.queue_state, QueueState::Empty);
    }

    #[test]
    fn consecutive_backoffs_are_held_after_five() {
        // Every period the min RTT rises by 20 ticks: g = 2560 > 5·3·128, a certain backoff.
        let mut c = cdg(&[("smoothing_factor", 0.0)]);
        let mut d = Drive::new(&mut c, 1000, 10);
        let mut base = 40;
        d.period(&mut c, &[base]);
        let mut cwnds = vec![];
        for _ in 0..12 {
            base += 20;
            // Two periods per backoff: a detected backoff skips the next gradient.
            d.period(&mut c, &[base]);
            base += 20;
            d.period(&mut c, &[base]);
            cwnds.push(d.s.cwnd);
            // Leave CWR (the stack would once the reduction's data is acked).
            d.s.ca_state = CaState::Open;
            d.s.cwr_request = false;
        }
        // 1000 x 0.7 five times, then held for 5 (counts 6..=10; the 10th resets), then again.
        assert_eq!(cwnds[..5], [700, 490, 343, 240, 168]);
        assert_eq!(cwnds[5..10], [168, 168, 168, 168, 168]);
        assert_eq!(cwnds[10..], [117, 81]);
        assert_eq!((c.backoffs, c.held_backoffs), (7, 5));
        // A negative trend resets the count.
        let mut c = cdg(&[("smoothing_factor", 0.0)]);
        let mut d = Drive::new(&mut c, 1000, 10);
        d.period(&mut c, &[40]);
        d.period(&mut c, &[60]);
        d.period(&mut c, &[80]);
        assert_eq!(c.consec_cong_cnt, 1);
        d.period(&mut c, &[80]);
        d.period(&mut c, &[70]);
        assert_eq!(c.consec_cong_cnt, 0);
    }

    #[test]
    fn sixth_consecutive_backoff_does_not_reduce_cwnd() {
        let mut c = cdg(&[("smoothing_factor", 0.0)]);
        let mut s = SockState::new(1000, 10);
        c.init(&mut s);
        s.cwnd = 100;
        s.ssthresh = 10;
        c.consec_cong_cnt = 5;
        c.maxrtt_in_prevrtt = 41;
        c.minrtt_in_prevrtt = 41;
        s.snd_nxt = 10;
        s.now = 1000 * MS;
        s.snd_una = 1;
        c.pkts_acked(&mut s, &AckSample { pkts_acked: 1, rtt: 80 * MS as i64, ..Default::default() });
        assert_eq!(c.consec_cong_cnt, 6);
        assert_eq!((s.cwnd, s.cwr_request, c.held_backoffs), (100, false, 1));
        // No growth on that ACK either, and the shadow window resyncs.
        c.cong_avoid(&mut s, 1);
        assert_eq!(s.cwnd, 100);
        assert_eq!(c.shadow_w, 100);
        assert_eq!(c.maxrtt_in_prevrtt, 0);
    }

    #[test]
    fn loss_in_full_or_unknown_state_halves_shadow_and_window() {
        let mut c = cdg(&[]);
        let mut s = SockState::new(1000, 10);
        c.init(&mut s);
        s.cwnd = 40;
        assert_eq!(c.queue_state, QueueState::Unknown);
        c.shadow_w = 100;
        // ssthresh = max(shadow/2, cwnd/2).
        assert_eq!(c.ssthresh(&mut s), 50);
        assert_eq!(c.shadow_w, 50);
        c.queue_state = QueueState::Full;
        c.shadow_w = 30;
        assert_eq!(c.ssthresh(&mut s), 20);
        assert_eq!(c.shadow_w, 15);
        c.shadow_w = 0;
        assert_eq!(c.ssthresh(&mut s), 20);
        assert_eq!(c.shadow_w, 0);
    }

    #[test]
    fn loss_in_empty_rising_falling_or_cwr_keeps_cwnd() {
        for q in [QueueState::Empty, QueueState::Rising, QueueState::Falling] {
            let mut c = cdg(&[]);
            let mut s = SockState::new(1000, 10);
            c.init(&mut s);
            s.cwnd = 40;
            c.queue_state = q;
            c.shadow_w = 100;
            assert_eq!(c.ssthresh(&mut s), 40, "{q:?}");
            assert_eq!(c.shadow_w, 100);
        }
        let mut c = cdg(&[]);
        let mut s = SockState::new(1000, 10);
        c.init(&mut s);
        s.cwnd = 40;
        s.snd_nxt = 50;
        c.queue_state = QueueState::Full;
        c.set_state(&mut s, CaState::Cwr);
        s.ca_state = CaState::Cwr;
        assert_eq!(c.ssthresh(&mut s), 40, "IN_CONGRECOVERY");
        // A timeout is NewReno's: the shadow window is untouched.
        s.ca_state = CaState::Open;
        c.shadow_w = 100;
        s.loss_is_timeout = true;
        s.ssthresh = c.ssthresh(&mut s);
        assert_eq!((s.ssthresh, c.shadow_w), (20, 100));
    }

    #[test]
    fn growth_per_ack_in_slow_start_and_per_rtt_after() {
        let mut c = cdg(&[]);
        let mut s = SockState::new(1000, 10);
        c.init(&mut s);
        s.ssthresh = 20;
        assert_eq!(c.shadow_w, 10);
        c.cong_avoid(&mut s, 2);
        assert_eq!((s.cwnd, c.shadow_w), (11, 11), "+1 per ACK, no ABC");
        s.cwnd = 30;
        c.cong_avoid(&mut s, 2);
        assert_eq!(s.cwnd, 30, "no growth without NEW_MEASUREMENT");
        c.new_measurement_this_ack = true;
        c.cong_avoid(&mut s, 2);
        assert_eq!((s.cwnd, c.shadow_w), (31, 12));
        // alpha_inc = 2: the increment is 0 for the first RTT, then 1, then after 2 more 2.
        let mut c = cdg(&[("alpha_inc", 2.0)]);
        let mut s = SockState::new(1000, 10);
        c.init(&mut s);
        s.cwnd = 30;
        s.ssthresh = 20;
        let mut w = vec![];
        for _ in 0..5 {
            c.new_measurement_this_ack = true;
            c.cong_avoid(&mut s, 2);
            w.push(s.cwnd);
        }
        assert_eq!(w, [30, 31, 32, 34, 36]);
    }
}
