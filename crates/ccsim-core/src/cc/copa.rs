//! Copa (Arun and Balakrishnan, "Copa: Practical Delay-Based Congestion Control for the
//! Internet", NSDI 2018; the paper is the specification, and its authors' code,
//! venkatarun95/genericCC `markoviancc.cc` and `rtt-window.cc`, resolves what it leaves open).
//!
//! On every ACK (paper section 2.1):
//! - the queueing delay d_q = RTTstanding - RTTmin, where RTTstanding is the smallest RTT
//!   sample of the last srtt/2 and RTTmin the smallest of the last 10 s (or since the start);
//! - the target rate lambda_t = 1/(delta d_q) packets per second (infinite when d_q = 0);
//! - the current rate lambda = cwnd/RTTstanding: if lambda <= lambda_t, cwnd += v/(delta cwnd),
//!   else cwnd -= v/(delta cwnd), per acknowledged packet;
//! - pacing at 2 cwnd/RTTstanding.
//!
//! Velocity v: once per window of data (when snd_una passes the snd_nxt of the window's
//! start), the direction is up if cwnd grew over the window, down if it shrank. A change of
//! direction (or an unchanged cwnd) resets v to 1; v doubles at the end of each window whose
//! direction is the same as the previous window's, once it has stayed the same for three
//! windows (the 4th window in one direction is the first to double, as mvfst counts).
//!
//! Slow start: cwnd += 1 per acknowledged packet (doubling per RTT) until lambda exceeds
//! lambda_t (section 2.1), or a loss.
//!
//! Modes (section 3): in default mode delta = `delta` (0.5). A flow switches to competitive
//! mode when the queue has not been nearly empty for `switch_rtts` (5) srtt: a non-Copa
//! competitor keeps the queue from draining (Copa flows alone empty it every ~5 RTTs). In
//! competitive mode 1/delta grows by 1 per srtt and halves on a loss (at most once per srtt),
//! never below 1/`delta` (so competitive mode is never more delay-sensitive than default); it
//! returns to default mode, delta = `delta`, on the first nearly empty sample.
//!
//! Interpretations (the paper is silent or informal here):
//! - **RTT samples**: every ACK's RTT sample of the newest (s)acked never-retransmitted packet
//!   (`rs.rtt`, Linux's `ca_rtt_us`); ACKs without one change nothing. srtt is the stack's RFC
//!   6298 estimate (the paper's "standard TCP EWMA").
//! - **RTTstanding** is exact (a monotone deque over the last srtt/2); **RTTmin** over 10 s and
//!   the **largest RTT over the last `switch_rtts` srtt** are Linux's windowed min/max
//!   (`lib/win_minmax.c`, Kathleen Nichols' three-sample filter): constant memory.
//! - **"Nearly empty"**: an RTT sample r with r - RTTmin <= `empty_fraction` (0.1) x (the
//!   largest RTT of the last `switch_rtts` srtt - RTTmin), as genericCC's `is_copa` (which
//!   uses < and 4 srtt; <= so that a flat RTT, no queue at all, counts as empty; 5 RTTs as the
//!   paper). The flow is competitive when no sample was nearly empty in the last
//!   `switch_rtts` x srtt.
//! - **Per-ACK step** is v x (packets the ACK acknowledges) / (delta cwnd), so a delayed ACK
//!   for two packets moves cwnd as two ACKs would; v is capped at cwnd (genericCC:
//!   `update_amt = min(update_amt, window)`), so one ACK moves cwnd by at most 1/delta per
//!   packet. cwnd is kept as a real number, at least 2 (genericCC), and the stack's cwnd is
//!   that rounded to the nearest packet.
//! - **Loss**: in default mode Copa does not respond to loss (the paper's robustness to
//!   non-congestive loss; genericCC's loss handlers are empty) except that a loss ends slow
//!   start. After an RTO the stack sets cwnd to 1; Copa's next ACK sets it back.
//! - **Competitive-mode AIMD** (section 3.2, genericCC `update_delta`): entering competitive
//!   mode starts 1/delta at 1/`delta`; +1 when an srtt has passed since the last increase; a
//!   loss (entering Recovery, or an RTO) halves 1/delta if an srtt has passed since the last
//!   halving.
//! - Each mode switch is an event `copa_mode`: value = 1 (competitive) or 0 (default), value2
//!   = d_q in ms.

use super::{AlgorithmInfo, CaEvent, CaState, CongestionControl, ParamSpec, Params, RateSample, SockState};
use crate::time::{Time, MS, SEC};
use std::collections::VecDeque;

pub const PARAMS: &[ParamSpec] = &[
    ParamSpec::num("delta", 0.5, 0.01, 10.0, "1/pkts", "Default-mode delta: the target rate is 1/(delta d_q) (paper section 2; 0.5)."),
    ParamSpec::flag("velocity", true, "Velocity: v doubles after three windows in one direction (paper section 2.1); false keeps v = 1."),
    ParamSpec::flag("competitive", true, "Switch to competitive mode against buffer-filling flows (paper section 3); false stays in default mode."),
    ParamSpec::num("rtt_min_window", 10.0, 0.1, 100.0, "s", "Window of RTTmin (paper: 10 s)."),
    ParamSpec::num("standing_fraction", 0.5, 0.01, 4.0, "x srtt", "Window of RTTstanding, in srtt (paper: srtt/2)."),
    ParamSpec::num("empty_fraction", 0.1, 0.0, 1.0, "fraction", "The queue is nearly empty when the queueing delay is at most this fraction of the largest recent one (genericCC: 0.1)."),
    ParamSpec::num("switch_rtts", 5.0, 1.0, 100.0, "x srtt", "Competitive mode when the queue has not been nearly empty for this many srtt (paper: 5)."),
];

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    name: "copa",
    summary: "Copa: delay-based, target rate 1/(delta d_q) with d_q = RTTstanding - RTTmin, velocity, pacing at 2 cwnd/RTTstanding; competitive mode (AIMD on 1/delta) against buffer-fillers",
    source: "Arun and Balakrishnan, NSDI 2018; genericCC markoviancc.cc, rtt-window.cc",
    params: PARAMS,
};

#[derive(Debug, Clone)]
pub struct CopaConfig {
    pub delta: f64,
    pub velocity: bool,
    pub competitive: bool,
    pub rtt_min_window: Time,
    pub standing_fraction: f64,
    pub empty_fraction: f64,
    pub switch_rtts: f64,
}

impl CopaConfig {
    pub fn from_params(p: &Params) -> Self {
        CopaConfig {
            delta: p.get("delta"),
            velocity: p.flag("velocity"),
            competitive: p.flag("competitive"),
            rtt_min_window: (p.get("rtt_min_window") * SEC as f64) as Time,
            standing_fraction: p.get("standing_fraction"),
            empty_fraction: p.get("empty_fraction"),
            switch_rtts: p.get("switch_rtts"),
        }
    }
}

impl Default for CopaConfig {
    fn default() -> Self {
        Self::from_params(&Params::defaults(PARAMS))
    }
}

/// lib/win_minmax.c (Kathleen Nichols' windowed min or max over three samples), in ns.
#[derive(Debug, Clone, Copy, Default)]
pub struct WinMinMax {
    s: [(Time, Time); 3],
}

impl WinMinMax {
    pub fn get(&self) -> Time {
        self.s[0].1
    }
    fn reset(&mut self, t: Time, v: Time) -> Time {
        self.s = [(t, v); 3];
        v
    }
    fn subwin_update(&mut self, win: Time, val: (Time, Time)) -> Time {
        let dt = val.0 - self.s[0].0;
        if dt > win {
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = val;
            if val.0 - self.s[0].0 > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = val;
            }
        } else if self.s[1].0 == self.s[0].0 && dt > win / 4 {
            self.s[2] = val;
            self.s[1] = val;
        } else if self.s[2].0 == self.s[1].0 && dt > win / 2 {
            self.s[2] = val;
        }
        self.s[0].1
    }
    /// minmax_running_min.
    pub fn running_min(&mut self, win: Time, t: Time, v: Time) -> Time {
        if v <= self.s[0].1 || t - self.s[2].0 > win {
            return self.reset(t, v);
        }
        if v <= self.s[1].1 {
            self.s[1] = (t, v);
            self.s[2] = (t, v);
        } else if v <= self.s[2].1 {
            self.s[2] = (t, v);
        }
        self.subwin_update(win, (t, v))
    }
    /// minmax_running_max.
    pub fn running_max(&mut self, win: Time, t: Time, v: Time) -> Time {
        if v >= self.s[0].1 || t - self.s[2].0 > win {
            return self.reset(t, v);
        }
        if v >= self.s[1].1 {
            self.s[1] = (t, v);
            self.s[2] = (t, v);
        } else if v >= self.s[2].1 {
            self.s[2] = (t, v);
        }
        self.subwin_update(win, (t, v))
    }
}

pub struct Copa {
    cfg: CopaConfig,
    /// cwnd in packets.
    pub cwnd: f64,
    /// The current delta.
    pub delta: f64,
    pub velocity: f64,
    /// +1 up, -1 down, 0 none yet.
    pub direction: i8,
    /// Consecutive windows whose direction equalled the previous one's.
    pub same_direction: u32,
    cwnd_at_window_start: f64,
    next_seq: u32,
    pub slow_start: bool,
    pub competitive: bool,
    /// (time, rtt) samples of the last srtt x standing_fraction, increasing in both.
    standing: VecDeque<(Time, Time)>,
    min_filter: WinMinMax,
    max_filter: WinMinMax,
    has_sample: bool,
    last_nearly_empty: Time,
    last_delta_increase: Time,
    last_delta_halving: Option<Time>,
    /// The latest RTTstanding and RTTmin, ns.
    pub rtt_standing: Time,
    pub rtt_min: Time,
}

impl Copa {
    pub fn new(cfg: CopaConfig) -> Self {
        let delta = cfg.delta;
        Copa {
            cfg,
            cwnd: 0.0,
            delta,
            velocity: 1.0,
            direction: 0,
            same_direction: 0,
            cwnd_at_window_start: 0.0,
            next_seq: 0,
            slow_start: true,
            competitive: false,
            standing: VecDeque::with_capacity(64),
            min_filter: WinMinMax::default(),
            max_filter: WinMinMax::default(),
            has_sample: false,
            last_nearly_empty: 0,
            last_delta_increase: 0,
            last_delta_halving: None,
            rtt_standing: 0,
            rtt_min: 0,
        }
    }

    /// d_q = RTTstanding - RTTmin, ns.
    pub fn queueing_delay(&self) -> Time {
        self.rtt_standing - self.rtt_min
    }

    /// The target rate lambda_t = 1/(delta d_q), packets per second (infinite for d_q = 0).
    pub fn target_rate(&self) -> f64 {
        let dq = self.queueing_delay();
        if dq == 0 {
            f64::INFINITY
        } else {
            1.0 / (self.delta * dq as f64 / SEC as f64)
        }
    }

    /// The current rate lambda = cwnd/RTTstanding, packets per second.
    pub fn current_rate(&self) -> f64 {
        self.cwnd / (self.rtt_standing as f64 / SEC as f64)
    }

    /// One RTT sample `rtt` at `now`, with the stack's `srtt` (0 before its first sample).
    pub fn on_rtt_sample(&mut self, now: Time, rtt: Time, srtt: Time) {
        let srtt = if srtt > 0 { srtt } else { rtt };
        if !self.has_sample {
            self.min_filter.reset(now, rtt);
            self.max_filter.reset(now, rtt);
        }
        self.rtt_min = self.min_filter.running_min(self.cfg.rtt_min_window, now, rtt);
        let max_win = (srtt as f64 * self.cfg.switch_rtts) as Time;
        let rtt_max = self.max_filter.running_max(max_win, now, rtt);
        // RTTstanding: the exact minimum of the last srtt/2 (monotone deque).
        while matches!(self.standing.back(), Some(&(_, r)) if r >= rtt) {
            self.standing.pop_back();
        }
        self.standing.push_back((now, rtt));
        let win = (srtt as f64 * self.cfg.standing_fraction) as Time;
        while self.standing.len() > 1 && self.standing[0].0 + win < now {
            self.standing.pop_front();
        }
        self.rtt_standing = self.standing[0].1.max(self.rtt_min);
        // Nearly empty: this sample's queueing delay within empty_fraction of the largest one.
        if !self.has_sample {
            self.has_sample = true;
            self.last_nearly_empty = now;
        }
        // At least one packet time at the flow's own rate (RTTstanding/cwnd): a sample cannot
        // resolve a queue below the spacing of the flow's own packets.
        let packet_time = self.rtt_standing as f64 / self.cwnd.max(1.0);
        let threshold = ((rtt_max - self.rtt_min) as f64 * self.cfg.empty_fraction).max(packet_time);
        if self.slow_start || ((rtt - self.rtt_min) as f64) <= threshold {
            self.last_nearly_empty = now;
        }
    }

    /// The mode switch (section 3.1) and competitive mode's additive increase of 1/delta.
    fn update_mode(&mut self, s: &mut SockState, srtt: Time) {
        if !self.cfg.competitive {
            return;
        }
        let now = s.now;
        let stale = now - self.last_nearly_empty > (srtt as f64 * self.cfg.switch_rtts) as Time;
        // Not while the flow is draining (its last window's cwnd went down): the queue may be
        // its own (the overshoot of slow start, or of a competitive episode), which takes more
        // than 5 RTTs to drain when it is more than ~20 packets (see the module comment).
        if stale && !self.competitive && self.direction != -1 {
            self.competitive = true;
            self.delta = self.cfg.delta;
            self.last_delta_increase = now;
            self.last_delta_halving = None;
            s.record("copa_mode", 1.0, self.queueing_delay() as f64 / MS as f64);
        } else if !stale && self.competitive {
            self.competitive = false;
            self.delta = self.cfg.delta;
            s.record("copa_mode", 0.0, self.queueing_delay() as f64 / MS as f64);
        }
        if self.competitive && now - self.last_delta_increase > srtt {
            self.delta = 1.0 / (1.0 / self.delta + 1.0);
            self.last_delta_increase = now;
        }
    }

    /// A loss: ends slow start; in competitive mode halves 1/delta (once per srtt at most).
    pub fn on_loss(&mut self, now: Time, srtt: Time) {
        self.slow_start = false;
        if self.competitive && self.last_delta_halving.is_none_or(|t| now - t > srtt) {
            self.delta = (self.delta * 2.0).min(self.cfg.delta);
            self.last_delta_halving = Some(now);
        }
    }

    /// Velocity at the end of a window: direction from cwnd against the window's start.
    pub fn end_window(&mut self) {
        let dir = if self.cwnd > self.cwnd_at_window_start {
            1
        } else if self.cwnd < self.cwnd_at_window_start {
            -1
        } else {
            0
        };
        if dir != 0 && dir == self.direction {
            self.same_direction += 1;
            if self.cfg.velocity && self.same_direction >= 3 {
                self.velocity *= 2.0;
            }
        } else {
            self.direction = dir;
            self.same_direction = 0;
            self.velocity = 1.0;
        }
        self.cwnd_at_window_start = self.cwnd;
    }

    /// The window step for `acked` packets (section 2.1, steps 2-3).
    pub fn step(&mut self, acked: u32) {
        let increase = self.current_rate() <= self.target_rate();
        if self.slow_start {
            if increase {
                self.cwnd += acked as f64;
                return;
            }
            self.slow_start = false;
        }
        let v = self.velocity.min(self.cwnd);
        let d = v * acked as f64 / (self.delta * self.cwnd);
        if increase {
            self.cwnd += d;
        } else {
            self.cwnd -= d;
        }
        self.cwnd = self.cwnd.max(2.0);
    }
}

impl CongestionControl for Copa {
    fn name(&self) -> &'static str {
        "copa"
    }

    fn init(&mut self, s: &mut SockState) {
        self.cwnd = s.cwnd as f64;
        self.cwnd_at_window_start = self.cwnd;
        self.next_seq = s.snd_nxt;
    }

    /// Unchanged: Copa sets cwnd itself (`cong_control`); a loss goes to `on_loss`.
    fn ssthresh(&mut self, s: &mut SockState) -> u32 {
        s.ssthresh
    }

    fn set_state(&mut self, s: &mut SockState, new: CaState) {
        if new == CaState::Recovery && new != s.ca_state {
            self.on_loss(s.now, s.srtt);
        }
    }

    fn cwnd_event(&mut self, s: &mut SockState, ev: CaEvent) {
        if ev == CaEvent::Loss {
            self.on_loss(s.now, s.srtt);
        }
    }

    fn has_cong_control(&self) -> bool {
        true
    }

    fn cong_control(&mut self, s: &mut SockState, rs: &RateSample) {
        if rs.rtt >= 0 {
            self.on_rtt_sample(s.now, rs.rtt.max(1) as Time, s.srtt);
        }
        if !self.has_sample {
            return;
        }
        let srtt = if s.srtt > 0 { s.srtt } else { self.rtt_standing };
        self.update_mode(s, srtt);
        if rs.acked_sacked > 0 {
            self.step(rs.acked_sacked);
        }
        if s.snd_una >= self.next_seq {
            if !self.slow_start {
                self.end_window();
            } else {
                self.cwnd_at_window_start = self.cwnd;
            }
            self.next_seq = s.snd_nxt;
        }
        s.cwnd = (self.cwnd.round() as u32).clamp(2, s.cwnd_clamp.max(2));
        // Pacing at 2 cwnd/RTTstanding (bytes of payload per second).
        let rate = 2.0 * self.cwnd * s.mss as f64 * SEC as f64 / self.rtt_standing as f64;
        s.pacing_rate = rate as u64;
    }

    fn wants_pacing(&self) -> bool {
        true
    }
}
