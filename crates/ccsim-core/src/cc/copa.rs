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
//! - **"Nearly empty"**: an RTT sample r with r - RTTmin <= max(`empty_fraction` (0.1) x (the
//!   largest RTT of the last `switch_rtts` srtt - RTTmin), n x P), as genericCC's `is_copa`
//!   (which uses <, and 4 srtt; <= so that a flat RTT, no queue at all, counts as empty; 5 RTTs
//!   as the paper). The flow is competitive when no sample was nearly empty in the last
//!   `switch_rtts` x srtt.
//!   The floor n x P is ccsim's: n is the number of packets the sample's ACK acknowledges and
//!   P one packet time at the fastest rate the flow was delivered at in the last
//!   `rtt_min_window` (the windowed minimum of the rate samples' interval / delivered; for a
//!   lone flow the bottleneck's packet time, and never less than it). Why: with delayed ACKs
//!   (Linux's default, every second segment) each ACK acknowledges 2 packets and releases 2
//!   (3 when cwnd grows) that leave together (EDT pacing lets a packet make up half its slot),
//!   and the RTT sample is that of the newest packet of the ACK, which queued behind its own
//!   burst. At 20 Mbps / 20 ms a lone flow's smallest samples sat 0.83 ms (1.4 packet times)
//!   above RTTmin while the 10 % threshold was 0.33 ms: it never read as nearly empty and went
//!   competitive (5 times in 20 s, queue 122 packets); with `[tcp] delayed_ack = false` the
//!   samples reached RTTmin every cycle and it did not switch. genericCC ACKs every packet and
//!   paces evenly, so the paper's 10 % sees its empty queue. The earlier floor of one packet
//!   time at the flow's own rate (RTTstanding / cwnd) was too small for a lone flow and far
//!   too large for a squeezed one (cwnd 2 against CUBIC: half an RTT).
//! - **Mode-switch guard** (ccsim's): no switch to competitive mode while the last window's
//!   cwnd went down (`direction` -1). Without it a lone flow still switched right after slow
//!   start (4 times in 20 s at 20 Mbps / 20 ms, back within 2-4 RTTs): the slow-start overshoot
//!   (~20 packets) drains at 1/delta = 2 packets per RTT before velocity builds up, more than 5
//!   RTTs. (A second guard, slow-start samples counting as nearly empty, made no difference once
//!   the floor above was right and was removed.)
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
    /// The shortest time per delivered packet of the last `rtt_min_window` (ns), from the
    /// rate samples (`interval / delivered`): one packet time at the fastest rate the flow was
    /// delivered at, at least the bottleneck's packet time.
    pkt_time_filter: WinMinMax,
    has_rate_sample: bool,
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
            pkt_time_filter: WinMinMax::default(),
            has_rate_sample: false,
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

    /// One delivery-rate sample: `delivered` packets over `interval` ns.
    pub fn on_rate_sample(&mut self, now: Time, delivered: u64, interval: Time) {
        if delivered == 0 || interval == 0 {
            return;
        }
        let pt = (interval / delivered).max(1);
        if !self.has_rate_sample {
            self.has_rate_sample = true;
            self.pkt_time_filter.reset(now, pt);
        }
        self.pkt_time_filter.running_min(self.cfg.rtt_min_window, now, pt);
    }

    /// One packet time at the fastest delivery rate of the last `rtt_min_window`, ns (0
    /// before the first rate sample).
    pub fn packet_time(&self) -> Time {
        if self.has_rate_sample {
            self.pkt_time_filter.get()
        } else {
            0
        }
    }

    /// One RTT sample `rtt` at `now`, from an ACK that acknowledged `acked` packets, with the
    /// stack's `srtt` (0 before its first sample).
    pub fn on_rtt_sample(&mut self, now: Time, rtt: Time, srtt: Time, acked: u32) {
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
        // At least `acked` packet times: the sample is the RTT of the newest packet the ACK
        // acknowledges, which left in a burst with the others that ACK's predecessor released
        // and queued behind them at the bottleneck (see the module comment).
        let floor = acked.max(1) as f64 * self.packet_time() as f64;
        let threshold = ((rtt_max - self.rtt_min) as f64 * self.cfg.empty_fraction).max(floor);
        if ((rtt - self.rtt_min) as f64) <= threshold {
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
        // its own (the overshoot of slow start), which takes more than 5 RTTs to drain at
        // 1/delta packets per RTT (see the module comment).
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
        if rs.delivered > 0 && rs.interval > 0 {
            self.on_rate_sample(s.now, rs.delivered as u64, rs.interval as Time);
        }
        if rs.rtt >= 0 {
            self.on_rtt_sample(s.now, rs.rtt.max(1) as Time, s.srtt, rs.acked_sacked);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn copa() -> Copa {
        let mut c = Copa::new(CopaConfig::default());
        c.slow_start = false;
        c
    }

    #[test]
    fn target_rate_and_window_step() {
        let mut c = copa();
        // RTTmin 20 ms (at 0), then 22 ms 100 ms later: with srtt 20 ms the standing window is
        // 10 ms, so RTTstanding = 22 ms, d_q = 2 ms.
        c.on_rtt_sample(0, 20 * MS, 20 * MS, 1);
        c.on_rtt_sample(100 * MS, 22 * MS, 20 * MS, 1);
        assert_eq!((c.rtt_min, c.rtt_standing, c.queueing_delay()), (20 * MS, 22 * MS, 2 * MS));
        // lambda_t = 1 / (0.5 x 0.002 s) = 1000 packets/s.
        assert!((c.target_rate() - 1000.0).abs() < 1e-9);
        // cwnd 20: lambda = 20 / 0.022 = 909 <= 1000: + v / (delta cwnd) = 1 / 10 per packet.
        c.cwnd = 20.0;
        c.step(1);
        assert!((c.cwnd - 20.1).abs() < 1e-12);
        // Two packets acked: twice the step.
        c.cwnd = 20.0;
        c.step(2);
        assert!((c.cwnd - 20.2).abs() < 1e-12);
        // cwnd 23: lambda = 1045 > 1000: - 1 / 11.5.
        c.cwnd = 23.0;
        c.step(1);
        assert!((c.cwnd - (23.0 - 1.0 / 11.5)).abs() < 1e-12);
        // A smaller RTT 5 ms later becomes RTTstanding at once; d_q = 0: infinite target.
        c.on_rtt_sample(105 * MS, 20 * MS, 20 * MS, 1);
        assert_eq!(c.queueing_delay(), 0);
        assert!(c.target_rate().is_infinite());
        // Slow start doubles (cwnd += acked) until lambda exceeds lambda_t.
        c.slow_start = true;
        c.cwnd = 10.0;
        c.step(3);
        assert_eq!(c.cwnd, 13.0);
    }

    #[test]
    fn rtt_standing_is_the_minimum_of_the_last_half_srtt() {
        let mut c = copa();
        c.on_rtt_sample(0, 30 * MS, 40 * MS, 1);
        c.on_rtt_sample(5 * MS, 35 * MS, 40 * MS, 1);
        c.on_rtt_sample(10 * MS, 33 * MS, 40 * MS, 1);
        assert_eq!(c.rtt_standing, 30 * MS, "30 ms is 10 ms old: inside srtt/2 = 20 ms");
        c.on_rtt_sample(21 * MS, 34 * MS, 40 * MS, 1);
        assert_eq!(c.rtt_standing, 33 * MS, "30 ms (t = 0) has left the window; 35 ms was dominated");
    }

    #[test]
    fn velocity_doubles_after_three_windows_in_one_direction_and_resets_on_a_change() {
        let mut c = copa();
        c.cwnd = 10.0;
        c.cwnd_at_window_start = 10.0;
        let mut seen = vec![];
        for _ in 0..6 {
            c.cwnd += 1.0;
            c.end_window();
            seen.push(c.velocity);
        }
        // Window 1 sets the direction; windows 2 and 3 repeat it; from window 4 v doubles.
        assert_eq!(seen, [1.0, 1.0, 1.0, 2.0, 4.0, 8.0]);
        c.cwnd -= 1.0;
        c.end_window();
        assert_eq!((c.velocity, c.direction), (1.0, -1));
        // An unchanged window also resets.
        c.end_window();
        assert_eq!((c.velocity, c.direction), (1.0, 0));
        // Without velocity, v stays 1.
        let mut c = Copa::new(CopaConfig { velocity: false, ..CopaConfig::default() });
        c.cwnd = 10.0;
        c.cwnd_at_window_start = 10.0;
        for _ in 0..6 {
            c.cwnd += 1.0;
            c.end_window();
        }
        assert_eq!(c.velocity, 1.0);
        // v is capped at cwnd in the step: cwnd 4, v 8, delta 0.5, increasing: + 4 / 2 = 2.
        let mut c = copa();
        c.on_rtt_sample(0, 20 * MS, 20 * MS, 1);
        c.cwnd = 4.0;
        c.velocity = 8.0;
        c.step(1);
        assert_eq!(c.cwnd, 6.0);
    }

    #[test]
    fn nearly_empty_allows_one_packet_time_per_packet_the_ack_acknowledges() {
        let mut c = copa();
        let srtt = 20 * MS;
        c.cwnd = 20.0;
        c.on_rtt_sample(0, 20 * MS, srtt, 1);
        c.on_rtt_sample(10 * MS, 30 * MS, srtt, 1);
        assert_eq!(c.packet_time(), 0, "no rate sample yet");
        // Rate samples: 10 packets in 10 ms, then 10 in 20 ms: the shortest time per packet,
        // 1 ms, is kept (a windowed minimum over rtt_min_window).
        c.on_rate_sample(10 * MS, 10, 10 * MS);
        c.on_rate_sample(20 * MS, 10, 20 * MS);
        assert_eq!(c.packet_time(), MS);
        // 10 % of (30 - 20) ms is 1 ms; an ACK of two packets allows 2 packet times = 2 ms.
        c.on_rtt_sample(30 * MS, 21_900_000, srtt, 1);
        assert_eq!(c.last_nearly_empty, 0, "1.9 ms > max(1 ms, 1 packet time)");
        c.on_rtt_sample(31 * MS, 21_900_000, srtt, 2);
        assert_eq!(c.last_nearly_empty, 31 * MS, "1.9 ms <= 2 packet times");
    }

    #[test]
    fn competitive_mode_after_five_srtt_without_a_nearly_empty_queue() {
        let mut c = copa();
        let mut s = SockState::new(1448, 10);
        let srtt = 20 * MS;
        c.cwnd = 20.0;
        c.on_rtt_sample(0, 20 * MS, srtt, 1);
        // A queue builds: 30 ms samples (RTTmax 30, threshold 20 + 1 ms; no rate sample yet,
        // so no packet-time floor).
        for i in 1..=10 {
            c.on_rtt_sample(i * 10 * MS, 30 * MS, srtt, 1);
        }
        // 21 ms is within 10 % of (30 - 20) = 1 ms of RTTmin: nearly empty at 100 ms.
        c.on_rtt_sample(100 * MS, 21 * MS, srtt, 1);
        s.now = 200 * MS;
        c.update_mode(&mut s, srtt);
        assert!(!c.competitive, "exactly 5 srtt: not yet");
        s.now = 200 * MS + 1;
        c.direction = -1;
        c.update_mode(&mut s, srtt);
        assert!(!c.competitive, "not while cwnd is decreasing");
        c.direction = 1;
        c.update_mode(&mut s, srtt);
        assert!(c.competitive);
        assert_eq!(s.events.len(), 1);
        assert_eq!((s.events[0].kind, s.events[0].value), ("copa_mode", 1.0));
        assert_eq!(c.delta, 0.5);
        // 1/delta + 1 per srtt: 3, 4, 5.
        for k in 1..=3 {
            s.now = 200 * MS + 1 + k * (srtt + 1);
            c.update_mode(&mut s, srtt);
            assert!((1.0 / c.delta - (2.0 + k as f64)).abs() < 1e-9, "{}", 1.0 / c.delta);
        }
        // A loss halves 1/delta (5 -> 2.5); another within an srtt does not.
        c.on_loss(s.now, srtt);
        assert!((1.0 / c.delta - 2.5).abs() < 1e-9);
        c.on_loss(s.now + srtt, srtt);
        assert!((1.0 / c.delta - 2.5).abs() < 1e-9);
        // Never below 1/0.5 = 2.
        c.on_loss(s.now + 2 * srtt + 1, srtt);
        assert_eq!(c.delta, 0.5);
        // A nearly empty sample: back to default mode, delta = 0.5.
        c.delta = 0.1;
        c.on_rtt_sample(s.now, 20 * MS, srtt, 1);
        c.update_mode(&mut s, srtt);
        assert!(!c.competitive);
        assert_eq!(c.delta, 0.5);
        assert_eq!((s.events[1].kind, s.events[1].value), ("copa_mode", 0.0));
        // With competitive = false nothing switches.
        let mut c = Copa::new(CopaConfig { competitive: false, ..CopaConfig::default() });
        c.slow_start = false;
        c.on_rtt_sample(0, 20 * MS, srtt, 1);
        s.now = 10 * SEC;
        c.update_mode(&mut s, srtt);
        assert!(!c.competitive);
    }
}
