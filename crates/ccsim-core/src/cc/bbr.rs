//! BBR v1 as in Linux net/ipv4/tcp_bbr.c (kernel 5.x/6.x: EDT pacing, 1% pacing margin,
//! extra_acked ACK-aggregation allowance, long-term policer detection) with lib/win_minmax.c.
//!
//! Units follow the kernel: bandwidth in packets per microsecond scaled by 2^24 (BW_UNIT), gains
//! scaled by 256 (BBR_UNIT), min_rtt in microseconds, filter stamps in jiffies (HZ = 1000).
//! TSO is not simulated, but the cwnd quantization budget (3 x tso_segs_goal) is computed with the
//! kernel's formula from the pacing rate, as Linux would without TSO offload, so BBR keeps the
//! same headroom as on a real host. The 2016 original (no margin, no extra_acked) is available
//! through `pacing_margin = 0` and `extra_acked = false`.

use super::{AlgorithmInfo, CaEvent, CaState, CongestionControl, CcTelemetry, ParamSpec, Params, RateSample, SockState, INFINITE_SSTHRESH};
use crate::rng::Rng;
use crate::time::{Time, MS, US};
use rand::Rng as _;

pub const PARAMS: &[ParamSpec] = &[
    ParamSpec::num("high_gain", 2.885, 1.0, 10.0, "x", "STARTUP pacing and cwnd gain, 2/ln 2 (bbr_high_gain = 739/256)."),
    ParamSpec::num("drain_gain", 0.3466, 0.05, 1.0, "x", "DRAIN pacing gain, ln 2 / 2 (bbr_drain_gain = 88/256)."),
    ParamSpec::num("cwnd_gain", 2.0, 1.0, 10.0, "x", "PROBE_BW cwnd gain (bbr_cwnd_gain)."),
    ParamSpec::int("pacing_margin", 1.0, 0.0, 50.0, "%", "Pace this much below the estimated rate (bbr_pacing_margin_percent; 0 in the 2016 code)."),
    ParamSpec::num("min_rtt_win", 10.0, 0.1, 3600.0, "s", "RTprop filter window; PROBE_RTT runs when it expires (bbr_min_rtt_win_sec)."),
    ParamSpec::int("probe_rtt_time", 200.0, 0.0, 10000.0, "ms", "Time at cwnd_min_target in PROBE_RTT (bbr_probe_rtt_mode_ms)."),
    ParamSpec::int("cwnd_min_target", 4.0, 1.0, 1000.0, "pkts", "cwnd floor, and cwnd during PROBE_RTT (bbr_cwnd_min_target)."),
    ParamSpec::int("bw_filter_rounds", 10.0, 1.0, 1000.0, "rounds", "BtlBw max-filter window (bbr_bw_rtts = CYCLE_LEN + 2)."),
    ParamSpec::flag("extra_acked", true, "Add the ACK-aggregation allowance to the cwnd target (bbr_extra_acked_gain = 1)."),
    ParamSpec::flag("lt_bw", true, "Long-term (policer) bandwidth sampling (bbr_lt_bw_sampling)."),
];

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    name: "bbr",
    summary: "BBR v1: model-based (BtlBw max filter, RTprop min filter), paced, 8-phase gain cycle, PROBE_RTT every 10 s",
    source: "Linux net/ipv4/tcp_bbr.c, tcp_rate.c, lib/win_minmax.c; Cardwell et al., ACM Queue 2016",
    params: PARAMS,
};

pub const BW_SCALE: u32 = 24;
pub const BW_UNIT: u64 = 1 << BW_SCALE;
pub const BBR_SCALE: u32 = 8;
pub const BBR_UNIT: u32 = 1 << BBR_SCALE;

/// bbr_rate_bytes_per_sec (v1 and v3): a rate in packets/us << 24, times mss and gain/256,
/// less `margin` percent, in bytes per second. (v3 then takes max(rate, 1).)
pub fn rate_bytes_per_sec_raw(rate: u64, mss: u32, gain: u32, margin: u64) -> u64 {
    let mut rate = rate * mss as u64;
    rate *= gain as u64;
    rate >>= BBR_SCALE;
    rate *= 1_000_000 / 100 * (100 - margin);
    rate >> BW_SCALE
}

/// bbr_bdp with a valid min_rtt (v1 and v3): ceil(bw x min_rtt_us x gain / 256) in packets.
pub fn bdp_pkts(bw: u32, min_rtt_us: u32, gain: u32) -> u32 {
    let w = bw as u64 * min_rtt_us as u64;
    ((((w * gain as u64) >> BBR_SCALE) + BW_UNIT - 1) / BW_UNIT) as u32
}
const CYCLE_LEN: u32 = 8;
const CYCLE_RAND: u32 = 7;
const PACING_GAIN: [u32; 8] = [BBR_UNIT * 5 / 4, BBR_UNIT * 3 / 4, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT];
const FULL_BW_THRESH: u32 = BBR_UNIT * 5 / 4;
const FULL_BW_CNT: u32 = 3;
const LT_INTVL_MIN_RTTS: u32 = 4;
const LT_LOSS_THRESH: u64 = 50;
const LT_BW_RATIO: u64 = BBR_UNIT as u64 / 8;
const LT_BW_DIFF: u64 = 4000 / 8;
const LT_BW_MAX_RTTS: u32 = 48;
const EXTRA_ACKED_WIN_RTTS: u32 = 5;
const ACK_EPOCH_ACKED_RESET_THRESH: u32 = 1 << 20;
const EXTRA_ACKED_MAX_US: u64 = 100 * 1000;
const MIN_TSO_RATE: u64 = 1_200_000; // bits per second
const TCP_INIT_CWND: u32 = 10;
const JIFFY: Time = MS;

#[derive(Debug, Clone)]
pub struct BbrConfig {
    pub high_gain: u32,
    pub drain_gain: u32,
    pub cwnd_gain: u32,
    pub pacing_margin: u64,
    pub min_rtt_win_jiffies: u64,
    pub probe_rtt_jiffies: u64,
    pub cwnd_min_target: u32,
    pub bw_rtts: u32,
    pub extra_acked_gain: u32,
    pub lt_bw: bool,
}

impl BbrConfig {
    pub fn from_params(p: &Params) -> Self {
        // Gains are stored as the kernel's x256 integers: 2.885 -> 739 (BBR_UNIT * 2885 / 1000 + 1).
        let hg = p.get("high_gain");
        let high_gain = if (hg - 2.885).abs() < 1e-9 { BBR_UNIT * 2885 / 1000 + 1 } else { (hg * 256.0).round() as u32 };
        let dg = p.get("drain_gain");
        let drain_gain = if (dg - 0.3466).abs() < 1e-9 { BBR_UNIT * 1000 / 2885 } else { (dg * 256.0).round() as u32 };
        BbrConfig {
            high_gain,
            drain_gain,
            cwnd_gain: (p.get("cwnd_gain") * 256.0).round() as u32,
            pacing_margin: p.get("pacing_margin") as u64,
            min_rtt_win_jiffies: (p.get("min_rtt_win") * 1000.0).round() as u64,
            probe_rtt_jiffies: p.get("probe_rtt_time") as u64,
            cwnd_min_target: p.get("cwnd_min_target") as u32,
            bw_rtts: p.get("bw_filter_rounds") as u32,
            extra_acked_gain: if p.flag("extra_acked") { BBR_UNIT } else { 0 },
            lt_bw: p.flag("lt_bw"),
        }
    }
}

impl Default for BbrConfig {
    fn default() -> Self {
        Self::from_params(&Params::defaults(PARAMS))
    }
}

/// lib/win_minmax.c: Kathleen Nichols' windowed running max over 3 samples.
#[derive(Debug, Clone, Copy, Default)]
pub struct MinMax {
    s: [(u32, u32); 3], // (t, v)
}

impl MinMax {
    pub fn get(&self) -> u32 {
        self.s[0].1
    }
    pub fn reset(&mut self, t: u32, v: u32) -> u32 {
        self.s = [(t, v); 3];
        v
    }
    fn subwin_update(&mut self, win: u32, val: (u32, u32)) -> u32 {
        let dt = val.0.wrapping_sub(self.s[0].0);
        if dt > win {
            // Passed the window: the best sample expired; promote the 2nd and 3rd.
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = val;
            if val.0.wrapping_sub(self.s[0].0) > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = val;
            }
        } else if self.s[1].0 == self.s[0].0 && dt > win / 4 {
            // A quarter of the window passed without a 2nd choice: take one.
            self.s[2] = val;
            self.s[1] = val;
        } else if self.s[2].0 == self.s[1].0 && dt > win / 2 {
            self.s[2] = val;
        }
        self.s[0].1
    }
    pub fn running_max(&mut self, win: u32, t: u32, meas: u32) -> u32 {
        let val = (t, meas);
        if val.1 >= self.s[0].1 || val.0.wrapping_sub(self.s[2].0) > win {
            return self.reset(t, meas);
        }
        if val.1 >= self.s[1].1 {
            self.s[2] = val;
            self.s[1] = val;
        } else if val.1 >= self.s[2].1 {
            self.s[2] = val;
        }
        self.subwin_update(win, val)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

pub struct Bbr {
    pub cfg: BbrConfig,
    rng: Rng,
    pub min_rtt_us: u32,
    pub min_rtt_stamp: u64,
    pub probe_rtt_done_stamp: u64,
    pub bw: MinMax,
    pub rtt_cnt: u32,
    pub next_rtt_delivered: u64,
    pub cycle_mstamp: Time,
    pub mode: Mode,
    pub prev_ca_state: CaState,
    pub packet_conservation: bool,
    pub round_start: bool,
    pub idle_restart: bool,
    pub probe_rtt_round_done: bool,
    pub lt_is_sampling: bool,
    pub lt_rtt_cnt: u32,
    pub lt_use_bw: bool,
    pub lt_bw: u32,
    lt_last_delivered: u64,
    lt_last_stamp: u64,
    lt_last_lost: u64,
    pub pacing_gain: u32,
    pub cwnd_gain: u32,
    pub full_bw_reached: bool,
    pub full_bw_cnt: u32,
    pub cycle_idx: u32,
    has_seen_rtt: bool,
    pub prior_cwnd: u32,
    pub full_bw: u32,
    ack_epoch_mstamp: Time,
    pub extra_acked: [u32; 2],
    ack_epoch_acked: u32,
    extra_acked_win_rtts: u32,
    extra_acked_win_idx: usize,
    mss: u32,
    /// Set by a variant to make the next RTprop update behave as if the 10 s window expired.
    pub force_expire: bool,
    /// (pacing rate, tso_segs_goal) of the last computation (the MSS never changes).
    tso_cache: std::cell::Cell<(u64, u32)>,
}

impl Bbr {
    pub fn new(cfg: BbrConfig, rng: Rng) -> Self {
        Bbr {
            cfg,
            rng,
            min_rtt_us: u32::MAX,
            min_rtt_stamp: 0,
            probe_rtt_done_stamp: 0,
            bw: MinMax::default(),
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            cycle_mstamp: 0,
            mode: Mode::Startup,
            prev_ca_state: CaState::Open,
            packet_conservation: false,
            round_start: false,
            idle_restart: false,
            probe_rtt_round_done: false,
            lt_is_sampling: false,
            lt_rtt_cnt: 0,
            lt_use_bw: false,
            lt_bw: 0,
            lt_last_delivered: 0,
            lt_last_stamp: 0,
            lt_last_lost: 0,
            pacing_gain: BBR_UNIT,
            cwnd_gain: BBR_UNIT,
            full_bw_reached: false,
            full_bw_cnt: 0,
            cycle_idx: 0,
            has_seen_rtt: false,
            prior_cwnd: 0,
            full_bw: 0,
            ack_epoch_mstamp: 0,
            extra_acked: [0; 2],
            ack_epoch_acked: 0,
            extra_acked_win_rtts: 0,
            extra_acked_win_idx: 0,
            mss: 1448,
            force_expire: false,
            tso_cache: std::cell::Cell::new((0, 0)),
        }
    }

    #[inline]
    fn jiffies(s: &SockState) -> u64 {
        s.now / JIFFY
    }

    pub fn max_bw(&self) -> u32 {
        self.bw.get()
    }

    /// The bandwidth the model uses: the long-term (policed) rate if in use, else the max filter.
    pub fn bw(&self) -> u32 {
        if self.lt_use_bw {
            self.lt_bw
        } else {
            self.max_bw()
        }
    }

    fn extra_acked_max(&self) -> u32 {
        self.extra_acked[0].max(self.extra_acked[1])
    }

    /// bbr_rate_bytes_per_sec: pkts/us<<24 x gain -> bytes/s, less the pacing margin.
    fn rate_bytes_per_sec(&self, s: &SockState, rate: u64, gain: u32) -> u64 {
        rate_bytes_per_sec_raw(rate, s.mss, gain, self.cfg.pacing_margin)
    }

    pub fn bw_to_pacing_rate(&self, s: &SockState, rate: u64, gain: u32) -> u64 {
        self.rate_bytes_per_sec(s, rate, gain)
    }

    fn init_pacing_rate_from_rtt(&mut self, s: &mut SockState) {
        let rtt_us = if s.srtt > 0 {
            self.has_seen_rtt = true;
            (s.srtt / US).max(1)
        } else {
            1000
        };
        let bw = s.cwnd as u64 * BW_UNIT / rtt_us;
        s.pacing_rate = self.bw_to_pacing_rate(s, bw, self.cfg.high_gain);
    }

    fn set_pacing_rate(&mut self, s: &mut SockState, bw: u32, gain: u32) {
        let rate = self.bw_to_pacing_rate(s, bw as u64, gain);
        if !self.has_seen_rtt && s.srtt > 0 {
            self.init_pacing_rate_from_rtt(s);
        }
        // Before the pipe is full the pacing rate may only grow.
        if self.full_bw_reached || rate > s.pacing_rate {
            s.pacing_rate = rate;
        }
    }

    /// bbr_tso_segs_goal: about 1 ms of data at the pacing rate (sk_pacing_shift = 10), >= 2.
    /// Called several times per ACK; memoised on the pacing rate (same value, fewer divisions).
    pub fn tso_segs_goal(&self, s: &SockState) -> u32 {
        let (rate, goal) = self.tso_cache.get();
        if rate == s.pacing_rate && goal != 0 {
            return goal;
        }
        let bytes = (s.pacing_rate >> 10).min(65536 - 1 - 320);
        let min_segs = if s.pacing_rate < (MIN_TSO_RATE >> 3) { 1 } else { 2 };
        let goal = ((bytes / s.mss as u64) as u32).max(min_segs).min(0x7F);
        self.tso_cache.set((s.pacing_rate, goal));
        goal
    }

    fn save_cwnd(&mut self, s: &SockState) {
        if self.prev_ca_state < CaState::Recovery && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = s.cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(s.cwnd);
        }
    }

    /// bbr_bdp: ceil(bw x min_rtt x gain), or the initial window before any RTT sample.
    pub fn bdp(&self, bw: u32, gain: u32) -> u32 {
        if self.min_rtt_us == u32::MAX {
            return TCP_INIT_CWND;
        }
        bdp_pkts(bw, self.min_rtt_us, gain)
    }

    pub fn quantization_budget(&self, s: &SockState, cwnd: u32) -> u32 {
        let mut cwnd = cwnd + 3 * self.tso_segs_goal(s);
        cwnd = (cwnd + 1) & !1;
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            cwnd += 2;
        }
        cwnd
    }

    pub fn inflight(&self, s: &SockState, bw: u32, gain: u32) -> u32 {
        let b = self.bdp(bw, gain);
        self.quantization_budget(s, b)
    }

    /// Packets in the network at the next earliest departure time (EDT).
    fn packets_in_net_at_edt(&self, s: &SockState, inflight_now: u32) -> u32 {
        let edt = s.next_tx_time.max(s.now);
        let interval_us = (edt - s.now) / US;
        let interval_delivered = (self.bw() as u64 * interval_us) >> BW_SCALE;
        let mut at_edt = inflight_now as u64;
        if self.pacing_gain > BBR_UNIT {
            at_edt += self.tso_segs_goal(s) as u64;
        }
        if interval_delivered >= at_edt {
            0
        } else {
            (at_edt - interval_delivered) as u32
        }
    }

    pub fn ack_aggregation_cwnd(&self) -> u32 {
        if self.cfg.extra_acked_gain > 0 && self.full_bw_reached {
            let max_aggr = (self.bw() as u64 * EXTRA_ACKED_MAX_US / BW_UNIT) as u32;
            let aggr = (self.cfg.extra_acked_gain * self.extra_acked_max()) >> BBR_SCALE;
            aggr.min(max_aggr)
        } else {
            0
        }
    }

    fn set_cwnd_to_recover_or_restore(&mut self, s: &SockState, rs: &RateSample, acked: u32, new_cwnd: &mut u32) -> bool {
        let prev = self.prev_ca_state;
        let state = s.ca_state;
        let mut cwnd = s.cwnd;
        if rs.losses > 0 {
            cwnd = (cwnd as i64 - rs.losses as i64).max(1) as u32;
        }
        if state == CaState::Recovery && prev != CaState::Recovery {
            // Packet conservation for the first round of recovery.
            self.packet_conservation = true;
            self.next_rtt_delivered = s.delivered;
            cwnd = s.packets_in_flight() + acked;
        } else if prev >= CaState::Recovery && state < CaState::Recovery {
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca_state = state;
        if self.packet_conservation {
            *new_cwnd = cwnd.max(s.packets_in_flight() + acked);
            return true;
        }
        *new_cwnd = cwnd;
        false
    }

    fn set_cwnd(&mut self, s: &mut SockState, rs: &RateSample, acked: u32, bw: u32, gain: u32) {
        let mut cwnd = s.cwnd;
        if acked > 0 && !self.set_cwnd_to_recover_or_restore(s, rs, acked, &mut cwnd) {
            let mut target = self.bdp(bw, gain);
            target += self.ack_aggregation_cwnd();
            target = self.quantization_budget(s, target);
            if self.full_bw_reached {
                cwnd = (cwnd + acked).min(target);
            } else if cwnd < target || s.delivered < TCP_INIT_CWND as u64 {
                cwnd += acked;
            }
            cwnd = cwnd.max(self.cfg.cwnd_min_target);
        }
        s.cwnd = cwnd.min(s.cwnd_clamp);
        if self.mode == Mode::ProbeRtt {
            s.cwnd = s.cwnd.min(self.cfg.cwnd_min_target);
        }
    }

    fn is_next_cycle_phase(&self, s: &SockState, rs: &RateSample) -> bool {
        let is_full_length = (s.delivered_mstamp.saturating_sub(self.cycle_mstamp) / US) > self.min_rtt_us as u64;
        if self.pacing_gain == BBR_UNIT {
            return is_full_length;
        }
        let inflight = self.packets_in_net_at_edt(s, rs.prior_in_flight);
        let bw = self.max_bw();
        if self.pacing_gain > BBR_UNIT {
            return is_full_length && (rs.losses > 0 || inflight >= self.inflight(s, bw, self.pacing_gain));
        }
        is_full_length || inflight <= self.inflight(s, bw, BBR_UNIT)
    }

    fn advance_cycle_phase(&mut self, s: &SockState) {
        self.cycle_idx = (self.cycle_idx + 1) & (CYCLE_LEN - 1);
        self.cycle_mstamp = s.delivered_mstamp;
    }

    fn update_cycle_phase(&mut self, s: &SockState, rs: &RateSample) {
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(s, rs) {
            self.advance_cycle_phase(s);
        }
    }

    fn reset_startup_mode(&mut self) {
        self.mode = Mode::Startup;
    }

    /// Enter PROBE_BW at a random phase other than the 0.75 drain phase.
    pub fn reset_probe_bw_mode(&mut self, s: &SockState) {
        self.mode = Mode::ProbeBw;
        self.cycle_idx = CYCLE_LEN - 1 - self.rng.gen_range(0..CYCLE_RAND);
        self.advance_cycle_phase(s);
    }

    fn reset_mode(&mut self, s: &SockState) {
        if !self.full_bw_reached {
            self.reset_startup_mode();
        } else {
            self.reset_probe_bw_mode(s);
        }
    }

    fn reset_lt_bw_sampling_interval(&mut self, s: &SockState) {
        self.lt_last_stamp = s.delivered_mstamp / MS;
        self.lt_last_delivered = s.delivered;
        self.lt_last_lost = s.lost;
        self.lt_rtt_cnt = 0;
    }

    fn reset_lt_bw_sampling(&mut self, s: &SockState) {
        self.lt_bw = 0;
        self.lt_use_bw = false;
        self.lt_is_sampling = false;
        self.reset_lt_bw_sampling_interval(s);
    }

    fn lt_bw_interval_done(&mut self, s: &SockState, bw: u32) {
        if self.lt_bw > 0 {
            let diff = (bw as i64 - self.lt_bw as i64).unsigned_abs();
            if diff * BBR_UNIT as u64 <= LT_BW_RATIO * self.lt_bw as u64
                || self.rate_bytes_per_sec(s, diff, BBR_UNIT) <= LT_BW_DIFF
            {
                // Two consistent intervals: a policer. Use their average.
                self.lt_bw = ((bw as u64 + self.lt_bw as u64) >> 1) as u32;
                self.lt_use_bw = true;
                self.pacing_gain = BBR_UNIT;
                self.lt_rtt_cnt = 0;
                return;
            }
        }
        self.lt_bw = bw;
        self.reset_lt_bw_sampling_interval(s);
    }

    fn lt_bw_sampling(&mut self, s: &SockState, rs: &RateSample) {
        if !self.cfg.lt_bw {
            return;
        }
        if self.lt_use_bw {
            if self.mode == Mode::ProbeBw && self.round_start {
                self.lt_rtt_cnt += 1;
                if self.lt_rtt_cnt >= LT_BW_MAX_RTTS {
                    self.reset_lt_bw_sampling(s);
                    self.reset_probe_bw_mode(s);
                }
            }
            return;
        }
        if !self.lt_is_sampling {
            if rs.losses == 0 {
                return;
            }
            self.reset_lt_bw_sampling_interval(s);
            self.lt_is_sampling = true;
        }
        if rs.is_app_limited {
            self.reset_lt_bw_sampling(s);
            return;
        }
        if self.round_start {
            self.lt_rtt_cnt += 1;
        }
        if self.lt_rtt_cnt < LT_INTVL_MIN_RTTS {
            return;
        }
        if self.lt_rtt_cnt > 4 * LT_INTVL_MIN_RTTS {
            self.reset_lt_bw_sampling(s);
            return;
        }
        if rs.losses == 0 {
            return;
        }
        let lost = s.lost - self.lt_last_lost;
        let delivered = s.delivered - self.lt_last_delivered;
        if delivered == 0 || (lost << BBR_SCALE) < LT_LOSS_THRESH * delivered {
            return;
        }
        let t = (s.delivered_mstamp / MS) as i64 - self.lt_last_stamp as i64;
        if t < 1 {
            return;
        }
        if t as u64 >= u32::MAX as u64 / 1000 {
            self.reset_lt_bw_sampling(s);
            return;
        }
        let t_us = t as u64 * 1000;
        let bw = (delivered * BW_UNIT / t_us) as u32;
        self.lt_bw_interval_done(s, bw);
    }

    fn update_bw(&mut self, s: &SockState, rs: &RateSample) {
        self.round_start = false;
        if rs.delivered < 0 || rs.interval <= 0 {
            return;
        }
        if rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = s.delivered;
            self.rtt_cnt += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        self.lt_bw_sampling(s, rs);
        let interval_us = (rs.interval as u64 / US).max(1);
        let bw = (rs.delivered as u64 * BW_UNIT / interval_us).min(u32::MAX as u64) as u32;
        if !rs.is_app_limited || bw >= self.max_bw() {
            let (win, t) = (self.cfg.bw_rtts, self.rtt_cnt);
            self.bw.running_max(win, t, bw);
        }
    }

    fn update_ack_aggregation(&mut self, s: &SockState, rs: &RateSample) {
        if self.cfg.extra_acked_gain == 0 || rs.acked_sacked == 0 || rs.delivered < 0 || rs.interval <= 0 {
            return;
        }
        if self.round_start {
            self.extra_acked_win_rtts = (self.extra_acked_win_rtts + 1).min(0x1F);
            if self.extra_acked_win_rtts >= EXTRA_ACKED_WIN_RTTS {
                self.extra_acked_win_rtts = 0;
                self.extra_acked_win_idx = 1 - self.extra_acked_win_idx;
                self.extra_acked[self.extra_acked_win_idx] = 0;
            }
        }
        let epoch_us = s.delivered_mstamp.saturating_sub(self.ack_epoch_mstamp) / US;
        let mut expected = (self.bw() as u64 * epoch_us / BW_UNIT) as u32;
        if self.ack_epoch_acked <= expected || self.ack_epoch_acked + rs.acked_sacked >= ACK_EPOCH_ACKED_RESET_THRESH {
            self.ack_epoch_acked = 0;
            self.ack_epoch_mstamp = s.delivered_mstamp;
            expected = 0;
        }
        self.ack_epoch_acked = (self.ack_epoch_acked + rs.acked_sacked).min(0xFFFFF);
        let extra = (self.ack_epoch_acked - expected).min(s.cwnd);
        if extra > self.extra_acked[self.extra_acked_win_idx] {
            self.extra_acked[self.extra_acked_win_idx] = extra;
        }
    }

    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.is_app_limited {
            return;
        }
        let thresh = ((self.full_bw as u64 * FULL_BW_THRESH as u64) >> BBR_SCALE) as u32;
        if self.max_bw() >= thresh {
            self.full_bw = self.max_bw();
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= FULL_BW_CNT;
    }

    fn check_drain(&mut self, s: &mut SockState) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            s.ssthresh = self.inflight(s, self.max_bw(), BBR_UNIT);
        }
        if self.mode == Mode::Drain
            && self.packets_in_net_at_edt(s, s.packets_in_flight()) <= self.inflight(s, self.max_bw(), BBR_UNIT)
        {
            self.reset_probe_bw_mode(s);
        }
    }

    fn check_probe_rtt_done(&mut self, s: &mut SockState) {
        let now_j = Self::jiffies(s);
        if !(self.probe_rtt_done_stamp != 0 && now_j > self.probe_rtt_done_stamp) {
            return;
        }
        self.min_rtt_stamp = now_j;
        s.cwnd = s.cwnd.max(self.prior_cwnd);
        self.reset_mode(s);
    }

    /// True when the RTprop filter window has run out at this instant.
    pub fn min_rtt_filter_expired(&self, s: &SockState) -> bool {
        Self::jiffies(s) > self.min_rtt_stamp + self.cfg.min_rtt_win_jiffies
    }

    /// Enter PROBE_RTT now (the "expire processing"), saving cwnd to restore afterwards.
    pub fn enter_probe_rtt(&mut self, s: &SockState) {
        self.mode = Mode::ProbeRtt;
        self.save_cwnd(s);
        self.probe_rtt_done_stamp = 0;
    }

    fn update_min_rtt(&mut self, s: &mut SockState, rs: &RateSample) {
        let filter_expired = self.min_rtt_filter_expired(s) || std::mem::take(&mut self.force_expire);
        if rs.rtt >= 0 {
            let rtt_us = (rs.rtt as u64 / US).min(u32::MAX as u64 - 1) as u32;
            if rtt_us <= self.min_rtt_us || (filter_expired && !rs.is_ack_delayed) {
                self.min_rtt_us = rtt_us;
                self.min_rtt_stamp = Self::jiffies(s);
            }
        }
        if self.cfg.probe_rtt_jiffies > 0 && filter_expired && !self.idle_restart && self.mode != Mode::ProbeRtt {
            self.enter_probe_rtt(s);
        }
        if self.mode == Mode::ProbeRtt {
            // Ignore low-rate samples while cwnd is held at the floor.
            let v = s.delivered + s.packets_in_flight() as u64;
            s.app_limited = if v > 0 { v } else { 1 };
            if self.probe_rtt_done_stamp == 0 && s.packets_in_flight() <= self.cfg.cwnd_min_target {
                self.probe_rtt_done_stamp = Self::jiffies(s) + self.cfg.probe_rtt_jiffies;
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = s.delivered;
            } else if self.probe_rtt_done_stamp != 0 {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(s);
                }
            }
        }
        if rs.delivered > 0 {
            self.idle_restart = false;
        }
    }

    fn update_gains(&mut self) {
        match self.mode {
            Mode::Startup => {
                self.pacing_gain = self.cfg.high_gain;
                self.cwnd_gain = self.cfg.high_gain;
            }
            Mode::Drain => {
                self.pacing_gain = self.cfg.drain_gain;
                self.cwnd_gain = self.cfg.high_gain;
            }
            Mode::ProbeBw => {
                self.pacing_gain = if self.lt_use_bw { BBR_UNIT } else { PACING_GAIN[self.cycle_idx as usize] };
                self.cwnd_gain = self.cfg.cwnd_gain;
            }
            Mode::ProbeRtt => {
                self.pacing_gain = BBR_UNIT;
                self.cwnd_gain = BBR_UNIT;
            }
        }
    }

    /// bbr_update_model, split so that variants can hook in between the steps.
    pub fn update_model(&mut self, s: &mut SockState, rs: &RateSample) {
        self.update_bw(s, rs);
        self.update_ack_aggregation(s, rs);
        self.update_cycle_phase(s, rs);
        self.check_full_bw_reached(rs);
        self.check_drain(s);
        self.update_min_rtt(s, rs);
        self.update_gains();
    }

    /// bbr_main after the model update: pacing rate and cwnd from the model.
    pub fn apply_model(&mut self, s: &mut SockState, rs: &RateSample) {
        let bw = self.bw();
        let pg = self.pacing_gain;
        self.set_pacing_rate(s, bw, pg);
        let cg = self.cwnd_gain;
        self.set_cwnd(s, rs, rs.acked_sacked, bw, cg);
    }

    pub fn btlbw_bps(&self, mss: u32) -> f64 {
        self.bw() as f64 * mss as f64 * 8.0 * 1e6 / BW_UNIT as f64
    }
}

/// What a BBR variant adds to plain BBR: its name and its own step on each ACK. Everything
/// else (init, loss hooks, events, pacing) is plain BBR, delegated by [`BbrVariant`].
pub trait BbrHooks: Send {
    const NAME: &'static str;
    /// Runs on each ACK in place of plain `bbr.cong_control(s, rs)`.
    fn cong_control(&mut self, bbr: &mut Bbr, s: &mut SockState, rs: &RateSample);
    fn telemetry(&self, bbr: &Bbr) -> CcTelemetry {
        bbr.telemetry()
    }
}

/// A BBR v1 variant: plain [`Bbr`] plus the variant's hooks `H`.
pub struct BbrVariant<H> {
    pub bbr: Bbr,
    pub hooks: H,
}

impl<H: BbrHooks> CongestionControl for BbrVariant<H> {
    fn name(&self) -> &'static str {
        H::NAME
    }
    fn init(&mut self, s: &mut SockState) {
        self.bbr.init(s)
    }
    fn has_cong_control(&self) -> bool {
        true
    }
    fn wants_pacing(&self) -> bool {
        true
    }
    fn cong_control(&mut self, s: &mut SockState, rs: &RateSample) {
        self.hooks.cong_control(&mut self.bbr, s, rs)
    }
    fn ssthresh(&mut self, s: &mut SockState) -> u32 {
        self.bbr.ssthresh(s)
    }
    fn set_state(&mut self, s: &mut SockState, new: CaState) {
        self.bbr.set_state(s, new)
    }
    fn cwnd_event(&mut self, s: &mut SockState, ev: CaEvent) {
        self.bbr.cwnd_event(s, ev)
    }
    fn telemetry(&self) -> CcTelemetry {
        self.hooks.telemetry(&self.bbr)
    }
}

impl CongestionControl for Bbr {
    fn name(&self) -> &'static str {
        "bbr"
    }

    fn init(&mut self, s: &mut SockState) {
        self.mss = s.mss;
        self.prior_cwnd = 0;
        s.ssthresh = INFINITE_SSTHRESH;
        self.rtt_cnt = 0;
        self.next_rtt_delivered = s.delivered;
        self.prev_ca_state = CaState::Open;
        self.packet_conservation = false;
        self.probe_rtt_done_stamp = 0;
        self.probe_rtt_round_done = false;
        self.min_rtt_us = if s.min_rtt == Time::MAX { u32::MAX } else { (s.min_rtt / US) as u32 };
        self.min_rtt_stamp = Self::jiffies(s);
        self.bw.reset(self.rtt_cnt, 0);
        self.has_seen_rtt = false;
        self.init_pacing_rate_from_rtt(s);
        self.round_start = false;
        self.idle_restart = false;
        self.full_bw_reached = false;
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.cycle_mstamp = 0;
        self.cycle_idx = 0;
        self.reset_lt_bw_sampling(s);
        self.reset_startup_mode();
        self.update_gains();
        self.ack_epoch_mstamp = s.now;
        self.ack_epoch_acked = 0;
        self.extra_acked_win_rtts = 0;
        self.extra_acked_win_idx = 0;
        self.extra_acked = [0; 2];
    }

    fn has_cong_control(&self) -> bool {
        true
    }

    fn wants_pacing(&self) -> bool {
        true
    }

    fn cong_control(&mut self, s: &mut SockState, rs: &RateSample) {
        self.update_model(s, rs);
        self.apply_model(s, rs);
    }

    fn ssthresh(&mut self, s: &mut SockState) -> u32 {
        self.save_cwnd(s);
        s.ssthresh
    }

    fn set_state(&mut self, s: &mut SockState, new: CaState) {
        if new == CaState::Loss {
            let rs = RateSample { losses: 1, ..RateSample::default() };
            self.prev_ca_state = CaState::Loss;
            self.full_bw = 0;
            self.round_start = true;
            self.lt_bw_sampling(s, &rs);
        }
    }

    fn cwnd_event(&mut self, s: &mut SockState, ev: CaEvent) {
        if ev == CaEvent::TxStart && s.app_limited != 0 {
            self.idle_restart = true;
            self.ack_epoch_mstamp = s.now;
            self.ack_epoch_acked = 0;
            if self.mode == Mode::ProbeBw {
                let bw = self.bw();
                self.set_pacing_rate(s, bw, BBR_UNIT);
            } else if self.mode == Mode::ProbeRtt {
                self.check_probe_rtt_done(s);
            }
        }
    }

    fn telemetry(&self) -> CcTelemetry {
        CcTelemetry {
            rtprop_ms: if self.min_rtt_us == u32::MAX { f64::NAN } else { self.min_rtt_us as f64 / 1000.0 },
            btlbw_bps: self.btlbw_bps(self.mss),
            ..CcTelemetry::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng;

    const RTT_US: u64 = 40_000;

    fn setup(seed: u64) -> (Bbr, SockState) {
        let mut s = SockState::new(1448, 10);
        let mut b = Bbr::new(BbrConfig::default(), rng::derive(seed, 99));
        b.init(&mut s);
        (b, s)
    }

    /// One round trip: `pkts` delivered over `rtt_us`, reported by one ACK whose sample starts
    /// a new round.
    fn round(b: &mut Bbr, s: &mut SockState, pkts: u64, rtt_us: u64) {
        s.now += rtt_us * US;
        s.srtt = rtt_us * US;
        let prior = s.delivered;
        s.delivered += pkts;
        s.delivered_mstamp = s.now;
        let rs = RateSample {
            prior_delivered: prior,
            prior_mstamp: Some(s.now - rtt_us * US),
            delivered: pkts as i64,
            interval: (rtt_us * US) as i64,
            rtt: (rtt_us * US) as i64,
            acked_sacked: pkts as u32,
            prior_in_flight: s.packets_in_flight(),
            ..RateSample::default()
        };
        b.cong_control(s, &rs);
    }

    fn bw_of(pkts: u64, rtt_us: u64) -> u32 {
        (pkts * BW_UNIT / rtt_us) as u32
    }

    #[test]
    fn startup_to_drain_to_probe_bw() {
        let (mut b, mut s) = setup(1);
        assert_eq!(b.mode, Mode::Startup);
        assert_eq!(b.pacing_gain, 739, "2/ln2 x 256");
        s.packets_out = 500;
        for pkts in [10, 20, 40, 80] {
            round(&mut b, &mut s, pkts, RTT_US);
            assert_eq!(b.mode, Mode::Startup);
        }
        // Three rounds without 25% growth: the pipe is full.
        round(&mut b, &mut s, 80, RTT_US);
        round(&mut b, &mut s, 80, RTT_US);
        assert!(!b.full_bw_reached);
        round(&mut b, &mut s, 80, RTT_US);
        assert!(b.full_bw_reached);
        assert_eq!(b.mode, Mode::Drain, "500 packets in flight is above the BDP");
        assert_eq!(b.pacing_gain, 88);
        // ssthresh = inflight(max_bw, 1.0) = BDP 80 + 3 x tso_goal, where tso_goal is 1 ms at
        // the STARTUP pacing rate (2.885 x 2000 pkt/s x 1448 B x 0.99 = 8.27 MB/s -> 5 segments):
        // 80 + 15 = 95, rounded up to an even 96.
        assert_eq!(b.bdp(b.max_bw(), BBR_UNIT), 80);
        assert_eq!(s.ssthresh, 96);
        // Once in-flight falls to the BDP, DRAIN ends.
        s.packets_out = 80;
        round(&mut b, &mut s, 80, RTT_US);
        assert_eq!(b.mode, Mode::ProbeBw);
        assert_ne!(b.cycle_idx, 1, "never starts in the 0.75 phase");
        assert_eq!(b.pacing_gain, PACING_GAIN[b.cycle_idx as usize]);
        assert_eq!(b.cwnd_gain, 512);
    }

    #[test]
    fn probe_bw_entry_phase_is_random_but_never_the_drain_phase() {
        let mut seen = [false; 8];
        for seed in 0..200 {
            let (mut b, s) = setup(seed);
            b.reset_probe_bw_mode(&s);
            seen[b.cycle_idx as usize] = true;
        }
        assert_eq!(seen, [true, false, true, true, true, true, true, true]);
    }

    fn probe_bw_at(idx: u32) -> (Bbr, SockState) {
        let (mut b, mut s) = setup(1);
        s.now = SEC_NS;
        b.full_bw_reached = true;
        b.min_rtt_us = RTT_US as u32;
        b.min_rtt_stamp = s.now / JIFFY;
        b.bw.reset(0, bw_of(80, RTT_US));
        b.mode = Mode::ProbeBw;
        b.cycle_idx = idx;
        b.cycle_mstamp = s.now;
        s.delivered_mstamp = s.now;
        b.update_gains();
        (b, s)
    }
    const SEC_NS: Time = 1_000_000_000;

    /// An ACK at `dt_us` after the phase began, with `inflight` packets in flight before it.
    fn ack_at(b: &mut Bbr, s: &mut SockState, dt_us: u64, inflight: u32, losses: u32) {
        s.now = b.cycle_mstamp + dt_us * US;
        s.delivered_mstamp = s.now;
        s.delivered += 1;
        s.packets_out = inflight;
        let rs = RateSample {
            prior_delivered: s.delivered - 1,
            prior_mstamp: Some(s.now - 1000 * US),
            delivered: 1,
            interval: -1, // no bandwidth sample: isolate the cycle logic
            rtt: (RTT_US * US) as i64,
            acked_sacked: 1,
            prior_in_flight: inflight,
            losses,
            ..RateSample::default()
        };
        b.cong_control(s, &rs);
    }

    #[test]
    fn gain_cycle_phases_advance_by_their_rules() {
        // Gain 1.0 phases last exactly one min_rtt.
        let (mut b, mut s) = probe_bw_at(2);
        ack_at(&mut b, &mut s, RTT_US - 1000, 80, 0);
        assert_eq!(b.cycle_idx, 2);
        ack_at(&mut b, &mut s, RTT_US + 1, 80, 0);
        assert_eq!(b.cycle_idx, 3);
        assert_eq!(b.pacing_gain, 256);
        // Phase 7 wraps to the 1.25 probing phase.
        let (mut b, mut s) = probe_bw_at(7);
        ack_at(&mut b, &mut s, RTT_US + 1, 80, 0);
        assert_eq!((b.cycle_idx, b.pacing_gain), (0, 320));
        // 1.25 phase: a full min_rtt is not enough unless in-flight reached 1.25 BDP (+budget) ...
        ack_at(&mut b, &mut s, RTT_US + 1, 80, 0);
        assert_eq!(b.cycle_idx, 0);
        let target = b.inflight(&s, b.max_bw(), 320);
        assert_eq!(target, 100 + 6 + 2, "1.25 x 80 + 3 x tso_goal + 2 in phase 0");
        ack_at(&mut b, &mut s, RTT_US + 2, target, 0);
        assert_eq!((b.cycle_idx, b.pacing_gain), (1, 192));
        // ... or a loss. 0.75 phase: ends early once in-flight is down to the BDP.
        let (mut b, mut s) = probe_bw_at(0);
        ack_at(&mut b, &mut s, RTT_US + 1, 80, 1);
        assert_eq!(b.cycle_idx, 1);
        ack_at(&mut b, &mut s, 1000, 90, 0);
        assert_eq!(b.cycle_idx, 1, "still above inflight(bw, 1.0) = 86");
        ack_at(&mut b, &mut s, 2000, 86, 0);
        assert_eq!((b.cycle_idx, b.pacing_gain), (2, 256));
    }

    #[test]
    fn probe_rtt_starts_10s_after_the_last_rtprop_refresh() {
        let (mut b, mut s) = setup(3);
        s.packets_out = 80;
        round(&mut b, &mut s, 10, RTT_US); // first RTT sample at t = 40 ms: RTprop = 40 ms
        assert_eq!(b.min_rtt_us, 40_000);
        assert_eq!(b.min_rtt_stamp, 40);
        // Larger RTTs never refresh RTprop; PROBE_RTT waits for the 10 s window.
        while s.now + 50 * MS <= 10_040 * MS {
            round(&mut b, &mut s, 10, 50_000);
            assert_ne!(b.mode, Mode::ProbeRtt, "at {} ms", s.now / MS);
        }
        assert_eq!(b.min_rtt_us, 40_000);
        round(&mut b, &mut s, 10, 50_000); // t = 10.04 s + up to 50 ms: window expired
        assert_eq!(b.mode, Mode::ProbeRtt);
        assert_eq!(s.cwnd, 4, "cwnd_min_target");
        assert_eq!(b.min_rtt_us, 50_000, "on expiry the current sample is adopted");
        let entered = s.now;
        // In-flight drains to 4: hold for 200 ms and one round, then leave.
        s.packets_out = 4;
        round(&mut b, &mut s, 4, 50_000);
        assert_eq!(b.mode, Mode::ProbeRtt);
        assert_eq!(b.probe_rtt_done_stamp, (entered + 50 * MS) / MS + 200);
        while s.now <= b.probe_rtt_done_stamp * MS {
            round(&mut b, &mut s, 4, 50_000);
            if s.now <= b.probe_rtt_done_stamp * MS {
                assert_eq!(b.mode, Mode::ProbeRtt);
            }
        }
        assert_eq!(b.mode, Mode::ProbeBw, "the pipe was full (flat delivery rate): back to PROBE_BW");
        assert_eq!(b.min_rtt_stamp, s.now / MS, "RTprop window restarts");
    }

    #[test]
    fn an_rtt_equal_to_rtprop_refreshes_the_filter_stamp() {
        let (mut b, mut s) = setup(5);
        s.packets_out = 80;
        round(&mut b, &mut s, 10, RTT_US);
        assert_eq!(b.min_rtt_stamp, 40);
        // 9.96 s later an RTT exactly equal to RTprop: the window restarts (<=, as Linux).
        s.now += 9_920 * MS;
        round(&mut b, &mut s, 10, RTT_US);
        assert_eq!(b.min_rtt_stamp, 10_000);
        round(&mut b, &mut s, 10, 50_000);
        assert_ne!(b.mode, Mode::ProbeRtt);
    }

    #[test]
    fn bandwidth_filter_forgets_a_sample_after_10_rounds() {
        let (mut b, mut s) = setup(4);
        s.packets_out = 1000;
        round(&mut b, &mut s, 100, RTT_US); // round 1: high sample
        let high = bw_of(100, RTT_US);
        assert_eq!(b.max_bw(), high);
        for r in 2..=11 {
            round(&mut b, &mut s, 50, RTT_US);
            assert_eq!(b.rtt_cnt, r);
            assert_eq!(b.max_bw(), high, "round {r}: still within 10 rounds");
        }
        round(&mut b, &mut s, 50, RTT_US);
        assert_eq!(b.rtt_cnt, 12);
        assert_eq!(b.max_bw(), bw_of(50, RTT_US), "aged out after 10 rounds");
    }

    #[test]
    fn pacing_rate_is_gain_times_bw_less_one_percent() {
        let (b, s) = probe_bw_at(2);
        // 80 pkts / 40 ms = 2000 pkt/s x 1448 B = 2.896 MB/s; x 0.99.
        let r = b.rate_bytes_per_sec(&s, b.max_bw() as u64, BBR_UNIT);
        assert!((r as f64 / (2000.0 * 1448.0 * 0.99) - 1.0).abs() < 1e-3, "{r}");
    }
}
