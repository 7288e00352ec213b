//! BBRv3 as in Google's net/ipv4/tcp_bbr.c with `BBR_VERSION 3` (github.com/google/bbr, branch
//! v3), with its tcp_rate.c additions (`tx.in_flight`, `tx.lost`, `rs->tx_in_flight`,
//! `rs->lost`, `rs->is_ece`) and its `skb_marked_lost` hook; cross-checked with
//! draft-ietf-ccwg-bbr. Where the two differ the kernel is followed (docs/algorithms.md, bbr3).
//!
//! Units follow the kernel: bandwidth in packets per microsecond scaled by 2^24 (BW_UNIT), gains
//! and fractions scaled by 256 (BBR_UNIT), min_rtt in microseconds, the min_rtt and PROBE_RTT
//! stamps in jiffies (HZ = 1000), the PROBE_BW clock in microseconds. Each function carries the
//! kernel function's name. The kernel's bit-field widths are kept where a value can reach them
//! (`extra_acked` u16, `bw_probe_up_rounds` 5 bits, `startup_ecn_rounds` 2 bits,
//! `rounds_since_probe` saturating at 255, `loss_events_in_round` at 15).
//!
//! Not modelled (the stack has no such event): TLP recovery (`CA_EVENT_TLP_RECOVERY`,
//! `bbr_run_loss_probe_recovery`), PLB (off by default: `sysctl_tcp_plb_enabled = 0`), TSO
//! (the quantization budget uses the kernel's `bbr_tso_segs_goal` formula), `fast_ack_mode`
//! (a receive-side option of the sending host). The receiver's precise CE echo
//! (`dctcp_ece_ack_update` from `CA_EVENT_ECN_IS_CE`) is the stack's, chosen by `needs_ecn`.

use super::bbr::{bdp_pkts, rate_bytes_per_sec_raw, BBR_SCALE, BBR_UNIT, BW_SCALE, BW_UNIT};
use super::{AlgorithmInfo, CaEvent, CaState, CcTelemetry, CongestionControl, ParamSpec, Params, RateSample, SkbTx, SockState, INFINITE_SSTHRESH};
use crate::rng::Rng;
use crate::time::{Time, MS, US};
use rand::Rng as _;
use std::cell::Cell;

pub const PARAMS: &[ParamSpec] = &[
    ParamSpec::int("bbr_min_rtt_win_sec", 10.0, 1.0, 3600.0, "s", "Window of the min_rtt filter."),
    ParamSpec::int("bbr_probe_rtt_mode_ms", 200.0, 0.0, 10000.0, "ms", "Minimum time in PROBE_RTT at the reduced cwnd (0: never enter PROBE_RTT)."),
    ParamSpec::int("bbr_probe_rtt_win_ms", 5000.0, 1.0, 3_600_000.0, "ms", "Window of the probe_rtt_min_us filter: PROBE_RTT when it expires without a lower RTT (<= bbr_min_rtt_win_sec x 1000)."),
    ParamSpec::num("bbr_probe_rtt_cwnd_gain", 0.5, 0.0, 4.0, "x BDP", "cwnd in PROBE_RTT as a fraction of the estimated BDP (kernel: BBR_UNIT x 1/2 = 128/256; x 256, floored)."),
    ParamSpec::int("bbr_tso_rtt_shift", 9.0, 0.0, 31.0, "log2 us", "The min_rtt-based TSO allowance, 64 KB / 2^(min_rtt / 2^shift); 0 disables it."),
    ParamSpec::int("bbr_pacing_margin_percent", 1.0, 0.0, 99.0, "%", "Pace this much below the estimated bandwidth."),
    ParamSpec::num("bbr_startup_pacing_gain", 2.77, 1.0, 3.99, "x", "STARTUP pacing gain, 4 ln 2 (kernel: BBR_UNIT x 277/100 + 1 = 710/256; x 256, floored, + 1)."),
    ParamSpec::num("bbr_startup_cwnd_gain", 2.0, 1.0, 3.99, "x", "STARTUP and DRAIN cwnd gain (512/256)."),
    ParamSpec::num("bbr_drain_gain", 0.3466, 0.05, 1.0, "x", "DRAIN pacing gain, 1/2.885 (kernel: BBR_UNIT x 1000/2885 = 88/256; x 256, floored)."),
    ParamSpec::num("bbr_cwnd_gain", 2.0, 1.0, 3.74, "x", "PROBE_BW cwnd gain (512/256)."),
    ParamSpec::num("bbr_pacing_gain_up", 1.25, 1.0, 3.99, "x", "bbr_pacing_gain[BBR_BW_PROBE_UP] (320/256)."),
    ParamSpec::num("bbr_pacing_gain_down", 0.91, 0.1, 1.0, "x", "bbr_pacing_gain[BBR_BW_PROBE_DOWN] (kernel: BBR_UNIT x 91/100 = 232/256; x 256, floored)."),
    ParamSpec::int("bbr_cwnd_min_target", 4.0, 1.0, 1000.0, "pkts", "cwnd floor."),
    ParamSpec::num("bbr_full_bw_thresh", 1.25, 1.0, 3.99, "x", "Bandwidth growth that counts as growth for the plateau (full_bw) test (320/256)."),
    ParamSpec::int("bbr_full_bw_cnt", 3.0, 1.0, 3.0, "rounds", "Rounds without that growth before the pipe is full (a 2-bit field in the kernel)."),
    ParamSpec::num("bbr_extra_acked_gain", 1.0, 0.0, 3.99, "x", "Gain on the ACK-aggregation allowance added to the cwnd target (256/256; 0 disables it)."),
    ParamSpec::int("bbr_extra_acked_win_rtts", 5.0, 1.0, 31.0, "rounds", "Window of the extra_acked max filter (1 round before the pipe is full)."),
    ParamSpec::int("bbr_ack_epoch_acked_reset_thresh", 1_048_576.0, 1.0, 1_048_576.0, "pkts", "ack_epoch_acked above which the aggregation epoch restarts (1 << 20)."),
    ParamSpec::int("bbr_extra_acked_max_us", 100_000.0, 0.0, 10_000_000.0, "us", "Cap on the aggregation allowance, as this long at the estimated bandwidth."),
    ParamSpec::flag("bbr_precise_ece_ack", true, "Receiver echoes CE exactly (dctcp_ece_ack_update) when ECN is usable; with ecn_low it makes the receiver's echo DCTCP-style (needs_ecn)."),
    ParamSpec::int("bbr_ecn_max_rtt_us", 5000.0, 0.0, 10_000_000.0, "us", "ECN logic only while min_rtt <= this (0: at any RTT)."),
    ParamSpec::num("bbr_beta", 0.3, 0.0, 1.0, "fraction", "Multiplicative cut of bw_lo/inflight_lo on a loss round, and of inflight_hi on too-high loss (kernel: BBR_UNIT x 30/100 = 76/256; x 256, floored)."),
    ParamSpec::num("bbr_ecn_alpha_gain", 0.0625, 0.0, 1.0, "fraction", "EWMA gain of ecn_alpha (16/256)."),
    ParamSpec::num("bbr_ecn_alpha_init", 1.0, 0.0, 1.0, "fraction", "Initial ecn_alpha (256/256)."),
    ParamSpec::num("bbr_ecn_factor", 0.333_333_333_333, 0.0, 1.0, "fraction", "inflight_lo cut on an ECN round: x (1 - ecn_factor x ecn_alpha) (kernel: BBR_UNIT x 1/3 = 85/256; x 256, floored; 0 disables ECN bounding)."),
    ParamSpec::num("bbr_ecn_thresh", 0.5, 0.0, 1.0, "fraction", "CE fraction of a sample above which inflight is too high (128/256; 0 disables)."),
    ParamSpec::num("bbr_ecn_reprobe_gain", 0.5, 0.0, 1.0, "fraction", "After an ECN-only cycle, the first PROBE_UP round raises inflight_hi by this fraction of it (128/256)."),
    ParamSpec::num("bbr_loss_thresh", 0.02, 0.0, 0.99, "fraction", "Loss rate (lost / tx_in_flight) above which inflight is too high (kernel: BBR_UNIT x 2/100 = 5/256 = 1.95 %; x 256, floored)."),
    ParamSpec::flag("bbr_loss_probe_recovery", true, "Slow down for a loss repaired by TLP; the stack models no TLP, so this has no effect."),
    ParamSpec::int("bbr_full_loss_cnt", 6.0, 0.0, 15.0, "events", "STARTUP exits at the end of a Recovery round with at least this many loss events and too-high loss (0 disables)."),
    ParamSpec::int("bbr_full_ecn_cnt", 2.0, 0.0, 3.0, "rounds", "STARTUP exits after this many consecutive rounds with CE ratio >= bbr_ecn_thresh (0 disables)."),
    ParamSpec::num("bbr_inflight_headroom", 0.15, 0.0, 1.0, "fraction", "Headroom left below inflight_hi when cruising (kernel: BBR_UNIT x 15/100 = 38/256; x 256, floored)."),
    ParamSpec::int("bbr_bw_probe_cwnd_gain", 1.0, 0.0, 3.0, "x 0.25", "Extra cwnd gain in PROBE_UP, in units of 0.25."),
    ParamSpec::int("bbr_bw_probe_max_rounds", 63.0, 1.0, 255.0, "rounds", "Reno-coexistence bound: probe after min(this, target inflight in packets) rounds."),
    ParamSpec::int("bbr_bw_probe_rand_rounds", 2.0, 1.0, 255.0, "rounds", "rounds_since_probe starts at a random value below this."),
    ParamSpec::int("bbr_bw_probe_base_us", 2_000_000.0, 0.0, 100_000_000.0, "us", "Wall-clock wait before probing, base."),
    ParamSpec::int("bbr_bw_probe_rand_us", 1_000_000.0, 1.0, 100_000_000.0, "us", "Plus a random wait below this."),
    ParamSpec::flag("bbr_fast_path", true, "Skip the model update on app-limited ACKs without loss/ECN that would not raise the bandwidth estimate."),
    ParamSpec::flag("bbr_fast_ack_mode", true, "Receive-side ACK option of the sending host; no effect here (one-way flows)."),
    ParamSpec::flag(
        "ecn_low",
        false,
        "The route's ecn_low feature (Linux TCP_ECN_LOW, `ip route ... features ecn_low`): CE marks are shallow-threshold, so BBR uses ECN (bbr_can_use_ecn needs it and an ECN connection, [tcp] ecn). Off by default, as in Linux.",
    ),
];

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    name: "bbr3",
    summary: "BBRv3: BBR's model plus loss/ECN bounds (bw_hi/lo, inflight_hi/lo), PROBE_BW DOWN/CRUISE/REFILL/UP with 2-3 s or Reno-scale probing, PROBE_RTT every 5 s at BDP/2",
    source: "google/bbr branch v3 net/ipv4/tcp_bbr.c (BBR_VERSION 3), tcp_rate.c; draft-ietf-ccwg-bbr",
    params: PARAMS,
};

/// PROBE_BW phases (`enum bbr_pacing_gain_phase`), the values of `cycle_idx`.
pub const BBR_BW_PROBE_UP: u32 = 0;
pub const BBR_BW_PROBE_DOWN: u32 = 1;
pub const BBR_BW_PROBE_CRUISE: u32 = 2;
pub const BBR_BW_PROBE_REFILL: u32 = 3;

/// GSO_LEGACY_MAX_SIZE - 1 - MAX_TCP_HEADER (as bbr.rs).
const TSO_MAX_BYTES: u64 = 65536 - 1 - 320;
const GSO_LEGACY_MAX_SIZE: u64 = 65536;
/// sysctl_tcp_min_tso_segs.
const TCP_MIN_TSO_SEGS: u32 = 2;
/// sk_pacing_shift (Linux default 10: about 1 ms of data per TSO burst).
const SK_PACING_SHIFT: u32 = 10;

/// A natural-unit fraction or gain as the kernel's x256 integer, floored as the kernel's
/// `BBR_UNIT * a / b` integer division is.
fn fp(x: f64) -> u32 {
    (x * BBR_UNIT as f64 + 1e-9).floor() as u32
}

#[derive(Debug, Clone)]
pub struct Bbr3Config {
    pub min_rtt_win_sec: u64,
    pub probe_rtt_mode_ms: u64,
    pub probe_rtt_win_ms: u64,
    pub probe_rtt_cwnd_gain: u32,
    pub tso_rtt_shift: u32,
    pub pacing_margin_percent: u64,
    pub startup_pacing_gain: u32,
    pub startup_cwnd_gain: u32,
    pub drain_gain: u32,
    pub cwnd_gain: u32,
    /// bbr_pacing_gain[] indexed by cycle_idx (UP, DOWN, CRUISE, REFILL).
    pub pacing_gain: [u32; 4],
    pub cwnd_min_target: u32,
    pub full_bw_thresh: u32,
    pub full_bw_cnt: u32,
    pub extra_acked_gain: u32,
    pub extra_acked_win_rtts: u32,
    pub ack_epoch_acked_reset_thresh: u32,
    pub extra_acked_max_us: u64,
    pub precise_ece_ack: bool,
    pub ecn_max_rtt_us: u32,
    pub beta: u32,
    pub ecn_alpha_gain: u32,
    pub ecn_alpha_init: u32,
    pub ecn_factor: u32,
    pub ecn_thresh: u32,
    pub ecn_reprobe_gain: u32,
    pub loss_thresh: u32,
    pub full_loss_cnt: u32,
    pub full_ecn_cnt: u32,
    pub inflight_headroom: u32,
    pub bw_probe_cwnd_gain: u32,
    pub bw_probe_max_rounds: u32,
    pub bw_probe_rand_rounds: u32,
    pub bw_probe_base_us: u32,
    pub bw_probe_rand_us: u32,
    pub fast_path: bool,
    pub ecn_low: bool,
}

impl Bbr3Config {
    pub fn from_params(p: &Params) -> Self {
        let i = |n: &str| p.get(n) as u32;
        Bbr3Config {
            min_rtt_win_sec: p.get("bbr_min_rtt_win_sec") as u64,
            probe_rtt_mode_ms: p.get("bbr_probe_rtt_mode_ms") as u64,
            probe_rtt_win_ms: p.get("bbr_probe_rtt_win_ms") as u64,
            probe_rtt_cwnd_gain: fp(p.get("bbr_probe_rtt_cwnd_gain")),
            tso_rtt_shift: i("bbr_tso_rtt_shift"),
            pacing_margin_percent: p.get("bbr_pacing_margin_percent") as u64,
            startup_pacing_gain: fp(p.get("bbr_startup_pacing_gain")) + 1,
            startup_cwnd_gain: fp(p.get("bbr_startup_cwnd_gain")),
            drain_gain: fp(p.get("bbr_drain_gain")),
            cwnd_gain: fp(p.get("bbr_cwnd_gain")),
            pacing_gain: [fp(p.get("bbr_pacing_gain_up")), fp(p.get("bbr_pacing_gain_down")), BBR_UNIT, BBR_UNIT],
            cwnd_min_target: i("bbr_cwnd_min_target"),
            full_bw_thresh: fp(p.get("bbr_full_bw_thresh")),
            full_bw_cnt: i("bbr_full_bw_cnt"),
            extra_acked_gain: fp(p.get("bbr_extra_acked_gain")),
            extra_acked_win_rtts: i("bbr_extra_acked_win_rtts"),
            ack_epoch_acked_reset_thresh: i("bbr_ack_epoch_acked_reset_thresh"),
            extra_acked_max_us: p.get("bbr_extra_acked_max_us") as u64,
            precise_ece_ack: p.flag("bbr_precise_ece_ack"),
            ecn_max_rtt_us: i("bbr_ecn_max_rtt_us"),
            beta: fp(p.get("bbr_beta")),
            ecn_alpha_gain: fp(p.get("bbr_ecn_alpha_gain")),
            ecn_alpha_init: fp(p.get("bbr_ecn_alpha_init")),
            ecn_factor: fp(p.get("bbr_ecn_factor")),
            ecn_thresh: fp(p.get("bbr_ecn_thresh")),
            ecn_reprobe_gain: fp(p.get("bbr_ecn_reprobe_gain")),
            loss_thresh: fp(p.get("bbr_loss_thresh")),
            full_loss_cnt: i("bbr_full_loss_cnt"),
            full_ecn_cnt: i("bbr_full_ecn_cnt"),
            inflight_headroom: fp(p.get("bbr_inflight_headroom")),
            bw_probe_cwnd_gain: i("bbr_bw_probe_cwnd_gain"),
            bw_probe_max_rounds: i("bbr_bw_probe_max_rounds"),
            bw_probe_rand_rounds: i("bbr_bw_probe_rand_rounds"),
            bw_probe_base_us: i("bbr_bw_probe_base_us"),
            bw_probe_rand_us: i("bbr_bw_probe_rand_us"),
            fast_path: p.flag("bbr_fast_path"),
            ecn_low: p.flag("ecn_low"),
        }
    }
}

impl Default for Bbr3Config {
    fn default() -> Self {
        Self::from_params(&Params::defaults(PARAMS))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

/// `enum bbr_ack_phase`: how the incoming ACKs relate to bandwidth probing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AckPhase {
    Init,
    Refilling,
    ProbeStarting,
    ProbeFeedback,
    ProbeStopping,
}

/// `struct bbr` (v3). Field names are the kernel's.
pub struct Bbr3 {
    pub cfg: Bbr3Config,
    rng: Rng,
    mss: u32,
    pub min_rtt_us: u32,
    /// Jiffies (ms).
    pub min_rtt_stamp: u64,
    pub probe_rtt_done_stamp: u64,
    pub probe_rtt_min_us: u32,
    pub probe_rtt_min_stamp: u64,
    pub next_rtt_delivered: u64,
    /// Start of the current PROBE_BW phase, microseconds (`tp->tcp_mstamp`).
    pub cycle_mstamp: u64,
    pub mode: Mode,
    pub prev_ca_state: CaState,
    pub round_start: bool,
    pub bw_probe_up_rounds: u32,
    pub try_fast_path: bool,
    pub idle_restart: bool,
    pub probe_rtt_round_done: bool,
    pub init_cwnd: u32,
    pub pacing_gain: u32,
    pub cwnd_gain: u32,
    pub full_bw_reached: bool,
    pub full_bw_cnt: u32,
    pub cycle_idx: u32,
    pub has_seen_rtt: bool,
    pub prior_cwnd: u32,
    pub full_bw: u32,
    ack_epoch_mstamp: Time,
    pub extra_acked: [u16; 2],
    ack_epoch_acked: u32,
    extra_acked_win_rtts: u32,
    extra_acked_win_idx: usize,
    pub full_bw_now: bool,
    pub startup_ecn_rounds: u32,
    pub loss_in_cycle: bool,
    pub ecn_in_cycle: bool,
    pub loss_round_delivered: u64,
    pub undo_bw_lo: u32,
    pub undo_inflight_lo: u32,
    pub undo_inflight_hi: u32,
    pub bw_latest: u32,
    pub bw_lo: u32,
    pub bw_hi: [u32; 2],
    pub inflight_latest: u32,
    pub inflight_lo: u32,
    pub inflight_hi: u32,
    pub bw_probe_up_cnt: u32,
    pub bw_probe_up_acks: u32,
    pub probe_wait_us: u32,
    pub ecn_eligible: bool,
    pub ecn_alpha: u32,
    pub bw_probe_samples: bool,
    pub prev_probe_too_high: bool,
    pub stopped_risky_probe: bool,
    pub rounds_since_probe: u32,
    pub loss_round_start: bool,
    pub loss_in_round: bool,
    pub ecn_in_round: bool,
    pub ack_phase: AckPhase,
    pub loss_events_in_round: u32,
    pub initialized: bool,
    alpha_last_delivered: u64,
    alpha_last_delivered_ce: u64,
    /// The last `tso_segs_goal`: its key (pacing_rate, min_rtt_us, mss) and value.
    tso_goal_memo: Cell<((u64, u32, u32), u32)>,
}

impl Bbr3 {
    pub fn new(cfg: Bbr3Config, rng: Rng) -> Self {
        Bbr3 {
            cfg,
            rng,
            mss: 1448,
            min_rtt_us: u32::MAX,
            min_rtt_stamp: 0,
            probe_rtt_done_stamp: 0,
            probe_rtt_min_us: u32::MAX,
            probe_rtt_min_stamp: 0,
            next_rtt_delivered: 0,
            cycle_mstamp: 0,
            mode: Mode::Startup,
            prev_ca_state: CaState::Open,
            round_start: false,
            bw_probe_up_rounds: 0,
            try_fast_path: false,
            idle_restart: false,
            probe_rtt_round_done: false,
            init_cwnd: 10,
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
            full_bw_now: false,
            startup_ecn_rounds: 0,
            loss_in_cycle: false,
            ecn_in_cycle: false,
            loss_round_delivered: 0,
            undo_bw_lo: 0,
            undo_inflight_lo: 0,
            undo_inflight_hi: 0,
            bw_latest: 0,
            bw_lo: u32::MAX,
            bw_hi: [0; 2],
            inflight_latest: 0,
            inflight_lo: u32::MAX,
            inflight_hi: u32::MAX,
            bw_probe_up_cnt: u32::MAX,
            bw_probe_up_acks: 0,
            probe_wait_us: 0,
            ecn_eligible: false,
            ecn_alpha: BBR_UNIT,
            bw_probe_samples: false,
            prev_probe_too_high: false,
            stopped_risky_probe: false,
            rounds_since_probe: 0,
            loss_round_start: false,
            loss_in_round: false,
            ecn_in_round: false,
            ack_phase: AckPhase::Init,
            loss_events_in_round: 0,
            initialized: false,
            alpha_last_delivered: 0,
            alpha_last_delivered_ce: 0,
            // mss 0 matches no connection: the first call computes.
            tso_goal_memo: Cell::new(((0, 0, 0), 0)),
        }
    }

    #[inline]
    fn jiffies(s: &SockState) -> u64 {
        s.now / MS
    }

    #[inline]
    fn now_us(s: &SockState) -> u64 {
        s.now / US
    }

    /// rs->interval_us: the sample's interval in microseconds, -1 if invalid.
    #[inline]
    fn interval_us(rs: &RateSample) -> i64 {
        if rs.interval < 0 {
            -1
        } else {
            (rs.interval as u64 / US) as i64
        }
    }

    /// `rs->interval_us > 0`, without the division: the truncated quotient is positive
    /// exactly when the interval is at least one microsecond.
    #[inline]
    fn has_interval(rs: &RateSample) -> bool {
        rs.interval >= US as i64
    }

    /// bbr_can_use_ecn: an ECN connection on an `ecn_low` route.
    fn can_use_ecn(&self, s: &SockState) -> bool {
        s.ecn && self.cfg.ecn_low
    }

    /// bbr_max_bw: max(bw_hi[0], bw_hi[1]).
    pub fn max_bw(&self) -> u32 {
        self.bw_hi[0].max(self.bw_hi[1])
    }

    /// bbr_bw: min(max_bw, bw_lo).
    pub fn bw(&self) -> u32 {
        self.max_bw().min(self.bw_lo)
    }

    /// bbr_extra_acked.
    fn extra_acked_max(&self) -> u32 {
        self.extra_acked[0].max(self.extra_acked[1]) as u32
    }

    /// bbr_bw_to_pacing_rate (bbr_rate_bytes_per_sec with the pacing margin, at least 1).
    pub fn bw_to_pacing_rate(&self, s: &SockState, bw: u32, gain: u32) -> u64 {
        rate_bytes_per_sec_raw(bw as u64, s.mss, gain, self.cfg.pacing_margin_percent).max(1)
    }

    /// bbr_init_pacing_rate_from_rtt.
    fn init_pacing_rate_from_rtt(&mut self, s: &mut SockState) {
        let rtt_us = if s.srtt > 0 {
            self.has_seen_rtt = true;
            (s.srtt / US).max(1)
        } else {
            1000
        };
        let bw = s.cwnd as u64 * BW_UNIT / rtt_us;
        s.pacing_rate = self.bw_to_pacing_rate(s, bw as u32, self.cfg.startup_pacing_gain);
    }

    /// bbr_set_pacing_rate.
    fn set_pacing_rate(&mut self, s: &mut SockState, bw: u32, gain: u32) {
        let rate = self.bw_to_pacing_rate(s, bw, gain);
        if !self.has_seen_rtt && s.srtt > 0 {
            self.init_pacing_rate_from_rtt(s);
        }
        if self.full_bw_reached || rate > s.pacing_rate {
            s.pacing_rate = rate;
        }
    }

    /// bbr_tso_segs_goal (bbr_tso_segs_generic with GSO_LEGACY_MAX_SIZE): about 1 ms at the
    /// pacing rate plus 64 KB / 2^(min_rtt / 512 us), at least 2 segments.
    #[inline]
    pub fn tso_segs_goal(&self, s: &SockState) -> u32 {
        // Cached: a pure function of (pacing_rate, min_rtt_us, mss), which change far less
        // often than the two to four calls per ACK; the same key gives the same quotient.
        let key = (s.pacing_rate, self.min_rtt_us, s.mss);
        let (k, goal) = self.tso_goal_memo.get();
        if k == key {
            return goal;
        }
        let goal = self.tso_segs_goal_uncached(s);
        self.tso_goal_memo.set((key, goal));
        goal
    }

    #[inline(never)]
    fn tso_segs_goal_uncached(&self, s: &SockState) -> u32 {
        let mut bytes = s.pacing_rate >> SK_PACING_SHIFT;
        if self.cfg.tso_rtt_shift != 0 {
            let r = self.min_rtt_us >> self.cfg.tso_rtt_shift;
            if r < 32 {
                bytes += GSO_LEGACY_MAX_SIZE >> r;
            }
        }
        let bytes = bytes.min(TSO_MAX_BYTES);
        ((bytes / s.mss as u64) as u32).max(TCP_MIN_TSO_SEGS)
    }

    /// bbr_save_cwnd.
    fn save_cwnd(&mut self, s: &SockState) {
        if self.prev_ca_state < CaState::Recovery && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = s.cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(s.cwnd);
        }
    }

    /// bbr_bdp: ceil(bw x min_rtt x gain), or init_cwnd before any RTT sample.
    pub fn bdp(&self, bw: u32, gain: u32) -> u32 {
        if self.min_rtt_us == u32::MAX {
            return self.init_cwnd;
        }
        bdp_pkts(bw, self.min_rtt_us, gain)
    }

    /// bbr_quantization_budget (v3: a floor of 3 TSO bursts and cwnd_min_target, not an
    /// addition as in v1).
    pub fn quantization_budget(&self, s: &SockState, cwnd: u32) -> u32 {
        let tso = 3 * self.tso_segs_goal(s);
        let mut cwnd = cwnd.max(tso).max(self.cfg.cwnd_min_target);
        if self.mode == Mode::ProbeBw && self.cycle_idx == BBR_BW_PROBE_UP {
            cwnd += 2;
        }
        cwnd
    }

    /// bbr_inflight.
    pub fn inflight(&self, s: &SockState, bw: u32, gain: u32) -> u32 {
        self.quantization_budget(s, self.bdp(bw, gain))
    }

    /// bbr_packets_in_net_at_edt.
    fn packets_in_net_at_edt(&self, s: &SockState, inflight_now: u32) -> u32 {
        let edt = s.next_tx_time.max(s.now);
        let interval_us = (edt - s.now) / US;
        let interval_delivered = ((self.bw() as u64 * interval_us) >> BW_SCALE) as u32;
        let mut at_edt = inflight_now;
        if self.pacing_gain > BBR_UNIT {
            at_edt += self.tso_segs_goal(s);
        }
        at_edt.saturating_sub(interval_delivered)
    }

    /// bbr_ack_aggregation_cwnd.
    fn ack_aggregation_cwnd(&self) -> u32 {
        if self.cfg.extra_acked_gain == 0 {
            return 0;
        }
        let max_aggr = (self.bw() as u64 * self.cfg.extra_acked_max_us / BW_UNIT) as u32;
        let aggr = (self.cfg.extra_acked_gain * self.extra_acked_max()) >> BBR_SCALE;
        aggr.min(max_aggr)
    }

    /// bbr_probe_rtt_cwnd: max(cwnd_min_target, BDP x probe_rtt_cwnd_gain).
    pub fn probe_rtt_cwnd(&self) -> u32 {
        self.cfg.cwnd_min_target.max(self.bdp(self.bw(), self.cfg.probe_rtt_cwnd_gain))
    }

    /// bbr_set_cwnd (v3: no packet conservation; losses act through the lower bounds).
    fn set_cwnd(&mut self, s: &mut SockState, acked: u32, bw: u32, gain: u32, mut cwnd: u32) {
        if acked != 0 {
            let mut target = self.bdp(bw, gain);
            target += self.ack_aggregation_cwnd();
            target = self.quantization_budget(s, target);
            self.try_fast_path = false;
            if self.full_bw_reached {
                cwnd += acked;
                if cwnd >= target {
                    cwnd = target;
                    self.try_fast_path = true;
                }
            } else if cwnd < target || cwnd < 2 * self.init_cwnd {
                cwnd += acked;
            } else {
                self.try_fast_path = true;
            }
            cwnd = cwnd.max(self.cfg.cwnd_min_target);
        }
        s.cwnd = cwnd.min(s.cwnd_clamp);
        if self.mode == Mode::ProbeRtt {
            s.cwnd = s.cwnd.min(self.probe_rtt_cwnd());
        }
    }

    /// bbr_update_round_start.
    fn update_round_start(&mut self, s: &SockState, rs: &RateSample) {
        self.round_start = false;
        if Self::has_interval(rs) && rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = s.delivered;
            self.round_start = true;
        }
    }

    /// bbr_calculate_bw_sample: ceil(delivered x BW_UNIT / interval_us), 0 if invalid.
    fn calculate_bw_sample(rs: &RateSample) -> u32 {
        let iv = Self::interval_us(rs);
        if iv > 0 && rs.delivered >= 0 {
            ((rs.delivered as u64 * BW_UNIT).div_ceil(iv as u64)) as u32
        } else {
            0
        }
    }

    /// bbr_update_ack_aggregation.
    fn update_ack_aggregation(&mut self, s: &SockState, rs: &RateSample) {
        if self.cfg.extra_acked_gain == 0 || rs.acked_sacked == 0 || rs.delivered < 0 || !Self::has_interval(rs) {
            return;
        }
        let mut win_thresh = self.cfg.extra_acked_win_rtts;
        if self.round_start {
            self.extra_acked_win_rtts = (self.extra_acked_win_rtts + 1).min(0x1F);
            if !self.full_bw_reached {
                win_thresh = 1;
            }
            if self.extra_acked_win_rtts >= win_thresh {
                self.extra_acked_win_rtts = 0;
                self.extra_acked_win_idx = 1 - self.extra_acked_win_idx;
                self.extra_acked[self.extra_acked_win_idx] = 0;
            }
        }
        let epoch_us = s.delivered_mstamp.saturating_sub(self.ack_epoch_mstamp) / US;
        let expected = (self.bw() as u64 * epoch_us / BW_UNIT) as u32;
        let reset = (self.ack_epoch_acked <= expected) | (self.ack_epoch_acked + rs.acked_sacked >= self.cfg.ack_epoch_acked_reset_thresh);
        // The kernel's `if (reset) { ack_epoch_acked = 0; ack_epoch_mstamp = delivered_mstamp;
        // expected_acked = 0; }`, done with masks: the test follows the ACK timing and a branch
        // on it is mispredicted often.
        let keep = (reset as u32).wrapping_sub(1); // all ones: no reset; 0: reset
        let keep64 = (reset as u64).wrapping_sub(1);
        let expected = expected & keep;
        self.ack_epoch_mstamp = (self.ack_epoch_mstamp & keep64) | (s.delivered_mstamp & !keep64);
        self.ack_epoch_acked = ((self.ack_epoch_acked & keep) + rs.acked_sacked).min(0xFFFFF);
        let extra = (self.ack_epoch_acked - expected).min(s.cwnd);
        if extra > self.extra_acked[self.extra_acked_win_idx] as u32 {
            self.extra_acked[self.extra_acked_win_idx] = extra as u16; // u16 in struct bbr
        }
    }

    /// bbr_check_probe_rtt_done.
    fn check_probe_rtt_done(&mut self, s: &mut SockState) {
        let now_j = Self::jiffies(s);
        if !(self.probe_rtt_done_stamp != 0 && now_j > self.probe_rtt_done_stamp) {
            return;
        }
        self.probe_rtt_min_stamp = now_j; // schedule the next PROBE_RTT
        s.cwnd = s.cwnd.max(self.prior_cwnd);
        self.exit_probe_rtt(s);
    }

    /// bbr_update_min_rtt: the 5 s probe_rtt_min filter times PROBE_RTT; min_rtt (10 s) takes
    /// its value.
    fn update_min_rtt(&mut self, s: &mut SockState, rs: &RateSample) {
        let now_j = Self::jiffies(s);
        let probe_rtt_expired = now_j > self.probe_rtt_min_stamp + self.cfg.probe_rtt_win_ms;
        if rs.rtt >= 0 {
            let rtt_us = rs.rtt / US as i64;
            if rtt_us < self.probe_rtt_min_us as i64 || (probe_rtt_expired && !rs.is_ack_delayed) {
                self.probe_rtt_min_us = rtt_us as u32;
                self.probe_rtt_min_stamp = now_j;
            }
        }
        let min_rtt_expired = now_j > self.min_rtt_stamp + self.cfg.min_rtt_win_sec * 1000;
        if self.probe_rtt_min_us <= self.min_rtt_us || min_rtt_expired {
            self.min_rtt_us = self.probe_rtt_min_us;
            self.min_rtt_stamp = self.probe_rtt_min_stamp;
        }
        if self.cfg.probe_rtt_mode_ms > 0 && probe_rtt_expired && !self.idle_restart && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt; // dip, drain queue
            self.save_cwnd(s);
            self.probe_rtt_done_stamp = 0;
            self.ack_phase = AckPhase::ProbeStopping;
            self.next_rtt_delivered = s.delivered;
        }
        if self.mode == Mode::ProbeRtt {
            // Ignore low-rate samples during this mode.
            let v = s.delivered + s.packets_in_flight() as u64;
            s.app_limited = if v > 0 { v } else { 1 };
            if self.probe_rtt_done_stamp == 0 && s.packets_in_flight() <= self.probe_rtt_cwnd() {
                self.probe_rtt_done_stamp = now_j + self.cfg.probe_rtt_mode_ms;
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

    /// bbr_update_gains.
    fn update_gains(&mut self) {
        match self.mode {
            Mode::Startup => {
                self.pacing_gain = self.cfg.startup_pacing_gain;
                self.cwnd_gain = self.cfg.startup_cwnd_gain;
            }
            Mode::Drain => {
                self.pacing_gain = self.cfg.drain_gain;
                self.cwnd_gain = self.cfg.startup_cwnd_gain;
            }
            Mode::ProbeBw => {
                self.pacing_gain = self.cfg.pacing_gain[(self.cycle_idx & 3) as usize]; // cycle_idx is 0..=3
                self.cwnd_gain = self.cfg.cwnd_gain;
                if self.cfg.bw_probe_cwnd_gain != 0 && self.cycle_idx == BBR_BW_PROBE_UP {
                    self.cwnd_gain += BBR_UNIT * self.cfg.bw_probe_cwnd_gain / 4;
                }
            }
            Mode::ProbeRtt => {
                self.pacing_gain = BBR_UNIT;
                self.cwnd_gain = BBR_UNIT;
            }
        }
    }

    /// bbr_take_max_bw_sample.
    fn take_max_bw_sample(&mut self, bw: u32) {
        self.bw_hi[1] = self.bw_hi[1].max(bw);
    }

    /// bbr_advance_max_bw_filter: keep the max of the last 1-2 cycles.
    fn advance_max_bw_filter(&mut self) {
        if self.bw_hi[1] == 0 {
            return;
        }
        self.bw_hi[0] = self.bw_hi[1];
        self.bw_hi[1] = 0;
    }

    /// bbr_reset_full_bw.
    fn reset_full_bw(&mut self) {
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.full_bw_now = false;
    }

    /// bbr_target_inflight: min(inflight(bw, 1), cwnd).
    pub fn target_inflight(&self, s: &SockState) -> u32 {
        self.inflight(s, self.bw(), BBR_UNIT).min(s.cwnd)
    }

    /// bbr_is_probing_bandwidth.
    fn is_probing_bandwidth(&self) -> bool {
        self.mode == Mode::Startup
            || (self.mode == Mode::ProbeBw && (self.cycle_idx == BBR_BW_PROBE_REFILL || self.cycle_idx == BBR_BW_PROBE_UP))
    }

    /// bbr_has_elapsed_in_phase.
    fn has_elapsed_in_phase(&self, s: &SockState, interval_us: u32) -> bool {
        Self::now_us(s) as i64 - (self.cycle_mstamp + interval_us as u64) as i64 > 0
    }

    /// bbr_handle_queue_too_high_in_startup.
    fn handle_queue_too_high_in_startup(&mut self, s: &SockState) {
        self.full_bw_reached = true;
        let bdp = self.inflight(s, self.max_bw(), BBR_UNIT);
        self.inflight_hi = bdp.max(self.inflight_latest);
    }

    /// bbr_check_ecn_too_high_in_startup.
    fn check_ecn_too_high_in_startup(&mut self, s: &SockState, ce_ratio: u32) {
        if self.full_bw_reached || !self.ecn_eligible || self.cfg.full_ecn_cnt == 0 || self.cfg.ecn_thresh == 0 {
            return;
        }
        if ce_ratio >= self.cfg.ecn_thresh {
            self.startup_ecn_rounds = (self.startup_ecn_rounds + 1) & 3; // 2-bit field
        } else {
            self.startup_ecn_rounds = 0;
        }
        if self.startup_ecn_rounds >= self.cfg.full_ecn_cnt {
            self.handle_queue_too_high_in_startup(s);
        }
    }

    /// bbr_update_ecn_alpha: once per round, alpha = (1 - g) alpha + g x CE ratio of the
    /// round; returns the ratio (x256), -1 if not available.
    fn update_ecn_alpha(&mut self, s: &SockState) -> i32 {
        if !self.ecn_eligible
            && self.can_use_ecn(s)
            && self.cfg.ecn_factor != 0
            && (self.min_rtt_us <= self.cfg.ecn_max_rtt_us || self.cfg.ecn_max_rtt_us == 0)
        {
            self.ecn_eligible = true;
        }
        // PLB is off (sysctl_tcp_plb_enabled = 0): alpha only for an ECN-eligible flow.
        if !self.ecn_eligible {
            return -1;
        }
        let delivered = s.delivered - self.alpha_last_delivered;
        let delivered_ce = s.delivered_ce - self.alpha_last_delivered_ce;
        if delivered == 0 {
            return -1;
        }
        let ce_ratio = (delivered_ce << BBR_SCALE) / delivered;
        let gain = self.cfg.ecn_alpha_gain as u64;
        let mut alpha = ((BBR_UNIT as u64 - gain) * self.ecn_alpha as u64) >> BBR_SCALE;
        alpha += (gain * ce_ratio) >> BBR_SCALE;
        self.ecn_alpha = alpha.min(BBR_UNIT as u64) as u32;
        self.alpha_last_delivered = s.delivered;
        self.alpha_last_delivered_ce = s.delivered_ce;
        self.check_ecn_too_high_in_startup(s, ce_ratio as u32);
        ce_ratio as i32
    }

    /// bbr_raise_inflight_hi_slope: each PROBE_UP round doubles the growth.
    fn raise_inflight_hi_slope(&mut self, s: &SockState) {
        let growth_this_round = 1u32 << self.bw_probe_up_rounds;
        self.bw_probe_up_rounds = (self.bw_probe_up_rounds + 1).min(30);
        self.bw_probe_up_cnt = (s.cwnd / growth_this_round).max(1);
    }

    /// bbr_probe_inflight_hi_upward.
    fn probe_inflight_hi_upward(&mut self, s: &SockState, rs: &RateSample) {
        if !s.is_cwnd_limited || s.cwnd < self.inflight_hi {
            return; // not fully using inflight_hi, so don't grow it
        }
        self.bw_probe_up_acks += rs.acked_sacked;
        if self.bw_probe_up_acks >= self.bw_probe_up_cnt {
            let delta = self.bw_probe_up_acks / self.bw_probe_up_cnt;
            self.bw_probe_up_acks -= delta * self.bw_probe_up_cnt;
            self.inflight_hi = self.inflight_hi.wrapping_add(delta);
            self.try_fast_path = false;
        }
        if self.round_start {
            self.raise_inflight_hi_slope(s);
        }
    }

    /// bbr_is_inflight_too_high: loss above loss_thresh of tx_in_flight, or CE above
    /// ecn_thresh of delivered.
    pub fn is_inflight_too_high(&self, rs: &RateSample) -> bool {
        if rs.lost > 0 && rs.tx_in_flight != 0 {
            let loss_thresh = ((rs.tx_in_flight as u64 * self.cfg.loss_thresh as u64) >> BBR_SCALE) as u32;
            if rs.lost > loss_thresh {
                return true;
            }
        }
        if rs.delivered_ce > 0 && rs.delivered > 0 && self.ecn_eligible && self.cfg.ecn_thresh != 0 {
            let ecn_thresh = ((rs.delivered as u64 * self.cfg.ecn_thresh as u64) >> BBR_SCALE) as u32;
            if rs.delivered_ce > ecn_thresh {
                return true;
            }
        }
        false
    }

    /// bbr_inflight_hi_from_lost_skb: the in-flight level, within this lost packet, at which
    /// the loss rate crossed loss_thresh (one packet per segment: pcount = 1).
    pub fn inflight_hi_from_lost_skb(&self, rs: &RateSample) -> u32 {
        let pcount = 1i64;
        let inflight_prev = rs.tx_in_flight as i64 - pcount;
        if inflight_prev < 0 {
            return u32::MAX;
        }
        let lost_prev = rs.lost as i64 - pcount;
        if lost_prev < 0 {
            return u32::MAX;
        }
        let loss_thresh = self.cfg.loss_thresh as u64;
        let loss_budget = (inflight_prev as u64 * loss_thresh + BBR_UNIT as u64 - 1) >> BBR_SCALE;
        let lost_prefix = if lost_prev as u64 >= loss_budget {
            0
        } else {
            let divisor = BBR_UNIT as u64 - loss_thresh;
            if divisor == 0 {
                return u32::MAX;
            }
            ((loss_budget - lost_prev as u64) << BBR_SCALE) / divisor
        };
        (inflight_prev as u64 + lost_prefix) as u32
    }

    /// bbr_inflight_with_headroom: inflight_hi less 15 %, at least cwnd_min_target.
    pub fn inflight_with_headroom(&self) -> u32 {
        if self.inflight_hi == u32::MAX {
            return u32::MAX;
        }
        let headroom = (((self.inflight_hi as u64 * self.cfg.inflight_headroom as u64) >> BBR_SCALE) as u32).max(1);
        ((self.inflight_hi as i32).wrapping_sub(headroom as i32)).max(self.cfg.cwnd_min_target as i32) as u32
    }

    /// bbr_bound_cwnd_for_inflight_model.
    fn bound_cwnd_for_inflight_model(&self, s: &mut SockState) {
        if !self.initialized {
            return;
        }
        let mut cap = u32::MAX;
        if self.mode == Mode::ProbeBw && self.cycle_idx != BBR_BW_PROBE_CRUISE {
            cap = self.inflight_hi; // probe to see if more packets fit in the path
        } else if self.mode == Mode::ProbeRtt || (self.mode == Mode::ProbeBw && self.cycle_idx == BBR_BW_PROBE_CRUISE) {
            cap = self.inflight_with_headroom();
        }
        cap = cap.min(self.inflight_lo); // adapt to any loss/ECN since the last bw probe
        cap = cap.max(self.cfg.cwnd_min_target);
        s.cwnd = cap.min(s.cwnd);
    }

    /// bbr_ecn_cut: 1 - alpha x ecn_factor.
    fn ecn_cut(&self) -> u32 {
        BBR_UNIT - ((self.ecn_alpha * self.cfg.ecn_factor) >> BBR_SCALE)
    }

    /// bbr_init_lower_bounds.
    fn init_lower_bounds(&mut self, s: &SockState, init_bw: bool) {
        if init_bw && self.bw_lo == u32::MAX {
            self.bw_lo = self.max_bw();
        }
        if self.inflight_lo == u32::MAX {
            self.inflight_lo = s.cwnd;
        }
    }

    /// bbr_loss_lower_bounds: bw_lo and inflight_lo x (1 - beta), not below the latest round's
    /// delivery.
    fn loss_lower_bounds(&self) -> (u32, u32) {
        let loss_cut = (BBR_UNIT - self.cfg.beta) as u64;
        let bw = self.bw_latest.max(((self.bw_lo as u64 * loss_cut) >> BBR_SCALE) as u32);
        let inflight = self.inflight_latest.max(((self.inflight_lo as u64 * loss_cut) >> BBR_SCALE) as u32);
        (bw, inflight)
    }

    /// bbr_ecn_lower_bounds: inflight_lo x (1 - alpha x ecn_factor).
    fn ecn_lower_bounds(&self) -> u32 {
        ((self.inflight_lo as u64 * self.ecn_cut() as u64) >> BBR_SCALE) as u32
    }

    /// bbr_adapt_lower_bounds: once per loss round, outside bandwidth probing.
    fn adapt_lower_bounds(&mut self, s: &SockState) {
        if self.is_probing_bandwidth() {
            return;
        }
        let mut ecn_inflight_lo = u32::MAX;
        if self.ecn_in_round && self.cfg.ecn_factor != 0 {
            self.init_lower_bounds(s, false);
            ecn_inflight_lo = self.ecn_lower_bounds();
        }
        if self.loss_in_round {
            self.init_lower_bounds(s, true);
            let (bw, inflight) = self.loss_lower_bounds();
            self.bw_lo = bw;
            self.inflight_lo = inflight;
        }
        self.inflight_lo = self.inflight_lo.min(ecn_inflight_lo);
        self.bw_lo = self.bw_lo.max(1);
    }

    /// bbr_reset_lower_bounds.
    fn reset_lower_bounds(&mut self) {
        self.bw_lo = u32::MAX;
        self.inflight_lo = u32::MAX;
    }

    /// bbr_reset_congestion_signals.
    fn reset_congestion_signals(&mut self) {
        self.loss_in_round = false;
        self.ecn_in_round = false;
        self.loss_in_cycle = false;
        self.ecn_in_cycle = false;
        self.bw_latest = 0;
        self.inflight_latest = 0;
    }

    /// bbr_exit_loss_recovery.
    fn exit_loss_recovery(&mut self, s: &mut SockState) {
        s.cwnd = s.cwnd.max(self.prior_cwnd);
        self.try_fast_path = false;
    }

    /// bbr_update_latest_delivery_signals.
    fn update_latest_delivery_signals(&mut self, s: &SockState, rs: &RateSample, sample_bw: u32) {
        self.loss_round_start = false;
        if !Self::has_interval(rs) || rs.acked_sacked == 0 {
            return;
        }
        self.bw_latest = self.bw_latest.max(sample_bw);
        self.inflight_latest = self.inflight_latest.max(rs.delivered as u32);
        if rs.prior_delivered >= self.loss_round_delivered {
            self.loss_round_delivered = s.delivered;
            self.loss_round_start = true;
        }
    }

    /// bbr_advance_latest_delivery_signals (no TLP: never `is_acking_tlp_retrans_seq`).
    fn advance_latest_delivery_signals(&mut self, rs: &RateSample, sample_bw: u32) {
        if self.loss_round_start {
            self.bw_latest = sample_bw;
            self.inflight_latest = rs.delivered as u32;
        }
    }

    /// bbr_update_congestion_signals.
    fn update_congestion_signals(&mut self, s: &SockState, rs: &RateSample, sample_bw: u32) {
        if !Self::has_interval(rs) || rs.acked_sacked == 0 {
            return;
        }
        if !rs.is_app_limited || sample_bw >= self.max_bw() {
            self.take_max_bw_sample(sample_bw);
        }
        self.loss_in_round |= rs.losses > 0;
        if !self.loss_round_start {
            return;
        }
        self.adapt_lower_bounds(s);
        self.loss_in_round = false;
        self.ecn_in_round = false;
    }

    /// bbr_is_reno_coexistence_probe_time: rounds_since_probe >= min(63, target inflight).
    fn is_reno_coexistence_probe_time(&self, s: &SockState) -> bool {
        let rounds = self.cfg.bw_probe_max_rounds.min(self.target_inflight(s));
        self.rounds_since_probe >= rounds
    }

    /// bbr_pick_probe_wait: a random round-count head start below bw_probe_rand_rounds and a
    /// wall-clock wait of 2 s plus up to 1 s.
    fn pick_probe_wait(&mut self) {
        self.rounds_since_probe = self.rng.gen_range(0..self.cfg.bw_probe_rand_rounds);
        self.probe_wait_us = self.cfg.bw_probe_base_us + self.rng.gen_range(0..self.cfg.bw_probe_rand_us);
    }

    /// bbr_set_cycle_idx.
    fn set_cycle_idx(&mut self, idx: u32) {
        self.cycle_idx = idx;
        self.try_fast_path = false;
    }

    /// bbr_start_bw_probe_refill.
    fn start_bw_probe_refill(&mut self, s: &SockState, bw_probe_up_rounds: u32) {
        self.reset_lower_bounds();
        self.bw_probe_up_rounds = bw_probe_up_rounds & 0x1F; // 5-bit field
        self.bw_probe_up_acks = 0;
        self.stopped_risky_probe = false;
        self.ack_phase = AckPhase::Refilling;
        self.next_rtt_delivered = s.delivered;
        self.set_cycle_idx(BBR_BW_PROBE_REFILL);
    }

    /// bbr_start_bw_probe_up.
    fn start_bw_probe_up(&mut self, s: &SockState, sample_bw: u32) {
        self.ack_phase = AckPhase::ProbeStarting;
        self.next_rtt_delivered = s.delivered;
        self.cycle_mstamp = Self::now_us(s);
        self.reset_full_bw();
        self.full_bw = sample_bw;
        self.set_cycle_idx(BBR_BW_PROBE_UP);
        self.raise_inflight_hi_slope(s);
    }

    /// bbr_start_bw_probe_down.
    fn start_bw_probe_down(&mut self, s: &SockState) {
        self.reset_congestion_signals();
        self.bw_probe_up_cnt = u32::MAX;
        self.pick_probe_wait();
        self.cycle_mstamp = Self::now_us(s);
        self.ack_phase = AckPhase::ProbeStopping;
        self.next_rtt_delivered = s.delivered;
        self.set_cycle_idx(BBR_BW_PROBE_DOWN);
    }

    /// bbr_start_bw_probe_cruise.
    fn start_bw_probe_cruise(&mut self) {
        if self.inflight_lo != u32::MAX {
            self.inflight_lo = self.inflight_lo.min(self.inflight_hi);
        }
        self.set_cycle_idx(BBR_BW_PROBE_CRUISE);
    }

    /// bbr_handle_inflight_too_high: inflight_hi = max(tx_in_flight, target_inflight x
    /// (1 - beta)), once per probe; PROBE_UP then goes DOWN.
    fn handle_inflight_too_high(&mut self, s: &SockState, rs: &RateSample) {
        self.prev_probe_too_high = true;
        self.bw_probe_samples = false;
        if !rs.is_app_limited {
            let cut = ((self.target_inflight(s) as u64 * (BBR_UNIT - self.cfg.beta) as u64) >> BBR_SCALE) as u32;
            self.inflight_hi = rs.tx_in_flight.max(cut);
        }
        if self.mode == Mode::ProbeBw && self.cycle_idx == BBR_BW_PROBE_UP {
            self.start_bw_probe_down(s);
        }
    }

    /// bbr_adapt_upper_bounds. Returns true if it decided a state transition.
    fn adapt_upper_bounds(&mut self, s: &SockState, rs: &RateSample) -> bool {
        if self.ack_phase == AckPhase::ProbeStarting && self.round_start {
            self.ack_phase = AckPhase::ProbeFeedback;
        }
        if self.ack_phase == AckPhase::ProbeStopping && self.round_start {
            self.bw_probe_samples = false;
            self.ack_phase = AckPhase::Init;
            if self.mode == Mode::ProbeBw && !rs.is_app_limited {
                self.advance_max_bw_filter();
            }
            if self.mode == Mode::ProbeBw && self.stopped_risky_probe && !self.prev_probe_too_high {
                self.start_bw_probe_refill(s, 0);
                return true;
            }
        }
        if self.is_inflight_too_high(rs) {
            if self.bw_probe_samples {
                self.handle_inflight_too_high(s, rs);
            }
        } else {
            if self.inflight_hi == u32::MAX {
                return false;
            }
            if rs.tx_in_flight > self.inflight_hi {
                self.inflight_hi = rs.tx_in_flight;
            }
            if self.mode == Mode::ProbeBw && self.cycle_idx == BBR_BW_PROBE_UP {
                self.probe_inflight_hi_upward(s, rs);
            }
        }
        false
    }

    /// bbr_check_time_to_probe_bw.
    fn check_time_to_probe_bw(&mut self, s: &SockState) -> bool {
        if self.cfg.ecn_reprobe_gain != 0 && self.ecn_eligible && self.ecn_in_cycle && !self.loss_in_cycle && s.ca_state == CaState::Open {
            let v = (self.inflight_hi as u64 * self.cfg.ecn_reprobe_gain as u64) >> BBR_SCALE;
            // ilog2; ilog2(0) = -1 stored in a 5-bit field is 31.
            let n = if v == 0 { u32::MAX } else { 63 - v.leading_zeros() };
            self.start_bw_probe_refill(s, n);
            return true;
        }
        if self.has_elapsed_in_phase(s, self.probe_wait_us) || self.is_reno_coexistence_probe_time(s) {
            self.start_bw_probe_refill(s, 0);
            return true;
        }
        false
    }

    /// bbr_check_time_to_cruise.
    fn check_time_to_cruise(&self, s: &SockState, inflight: u32, bw: u32) -> bool {
        if inflight > self.inflight_with_headroom() {
            return false;
        }
        inflight <= self.inflight(s, bw, BBR_UNIT)
    }

    /// bbr_update_cycle_phase: PROBE_BW's DOWN -> CRUISE -> REFILL -> UP -> DOWN.
    fn update_cycle_phase(&mut self, s: &SockState, rs: &RateSample, sample_bw: u32) {
        if !self.full_bw_reached {
            return;
        }
        if self.adapt_upper_bounds(s, rs) {
            return;
        }
        if self.mode != Mode::ProbeBw {
            return;
        }
        // The kernel computes `inflight = bbr_packets_in_net_at_edt(sk, rs->prior_in_flight)`
        // and `bw = bbr_max_bw(sk)` here; UP and DOWN use them, CRUISE and REFILL do not, so
        // they are computed in those arms (pure functions of state nothing changes before).
        match self.cycle_idx {
            BBR_BW_PROBE_CRUISE => {
                self.check_time_to_probe_bw(s);
            }
            BBR_BW_PROBE_REFILL => {
                if self.round_start {
                    self.bw_probe_samples = true;
                    self.start_bw_probe_up(s, sample_bw);
                }
            }
            BBR_BW_PROBE_UP => {
                let mut is_bw_probe_done = false;
                if self.prev_probe_too_high && self.packets_in_net_at_edt(s, rs.prior_in_flight) >= self.inflight_hi {
                    self.stopped_risky_probe = true;
                    is_bw_probe_done = true;
                } else if s.is_cwnd_limited && s.cwnd >= self.inflight_hi {
                    // inflight_hi is limiting bw growth
                    self.reset_full_bw();
                    self.full_bw = sample_bw;
                } else if self.full_bw_now {
                    is_bw_probe_done = true; // plateau in estimated bw
                }
                if is_bw_probe_done {
                    self.prev_probe_too_high = false;
                    self.start_bw_probe_down(s);
                }
            }
            _ => {
                // BBR_BW_PROBE_DOWN (check_time_to_probe_bw changes nothing when false)
                if self.check_time_to_probe_bw(s) {
                    return;
                }
                let inflight = self.packets_in_net_at_edt(s, rs.prior_in_flight);
                let bw = self.max_bw();
                if self.check_time_to_cruise(s, inflight, bw) {
                    self.start_bw_probe_cruise();
                }
            }
        }
    }

    /// bbr_exit_probe_rtt.
    fn exit_probe_rtt(&mut self, s: &SockState) {
        self.reset_lower_bounds();
        if self.full_bw_reached {
            self.mode = Mode::ProbeBw;
            self.start_bw_probe_down(s);
            self.start_bw_probe_cruise();
        } else {
            self.mode = Mode::Startup;
        }
    }

    /// bbr_check_loss_too_high_in_startup.
    fn check_loss_too_high_in_startup(&mut self, s: &SockState, rs: &RateSample) {
        if self.full_bw_reached {
            return;
        }
        if rs.losses > 0 && self.loss_events_in_round < 0xF {
            self.loss_events_in_round += 1;
        }
        if self.cfg.full_loss_cnt != 0
            && self.loss_round_start
            && s.ca_state == CaState::Recovery
            && self.loss_events_in_round >= self.cfg.full_loss_cnt
            && self.is_inflight_too_high(rs)
        {
            self.handle_queue_too_high_in_startup(s);
            return;
        }
        if self.loss_round_start {
            self.loss_events_in_round = 0;
        }
    }

    /// bbr_check_full_bw_reached: three rounds without 25 % growth.
    fn check_full_bw_reached(&mut self, rs: &RateSample, sample_bw: u32) {
        if self.full_bw_now || rs.is_app_limited {
            return;
        }
        let bw_thresh = ((self.full_bw as u64 * self.cfg.full_bw_thresh as u64) >> BBR_SCALE) as u32;
        if sample_bw >= bw_thresh {
            self.reset_full_bw();
            self.full_bw = sample_bw;
            return;
        }
        if !self.round_start {
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_now = self.full_bw_cnt >= self.cfg.full_bw_cnt;
        self.full_bw_reached |= self.full_bw_now;
    }

    /// bbr_check_drain.
    #[inline]
    fn check_drain(&mut self, s: &mut SockState) {
        // Nothing to do outside STARTUP and DRAIN (every ACK in PROBE_BW): test inline.
        if matches!(self.mode, Mode::Startup | Mode::Drain) {
            self.check_drain_startup_drain(s);
        }
    }

    #[inline(never)]
    fn check_drain_startup_drain(&mut self, s: &mut SockState) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            s.ssthresh = self.inflight(s, self.max_bw(), BBR_UNIT);
            self.reset_congestion_signals();
        }
        if self.mode == Mode::Drain && self.packets_in_net_at_edt(s, s.packets_in_flight()) <= self.inflight(s, self.max_bw(), BBR_UNIT) {
            self.mode = Mode::ProbeBw;
            self.start_bw_probe_down(s);
        }
    }

    /// bbr_update_model.
    fn update_model(&mut self, s: &mut SockState, rs: &RateSample, sample_bw: u32) {
        self.update_congestion_signals(s, rs, sample_bw);
        self.update_ack_aggregation(s, rs);
        self.check_loss_too_high_in_startup(s, rs);
        self.check_full_bw_reached(rs, sample_bw);
        self.check_drain(s);
        self.update_cycle_phase(s, rs, sample_bw);
        self.update_min_rtt(s, rs);
    }

    /// bbr_run_fast_path: on an app-limited ACK without loss/ECN that would not raise max_bw,
    /// run only the state checks; skip everything if they changed nothing. Returns true to
    /// skip the control update; `update_model` false to skip only the model update.
    fn run_fast_path(&mut self, s: &mut SockState, update_model: &mut bool, rs: &RateSample, sample_bw: u32) -> bool {
        if self.cfg.fast_path
            && self.try_fast_path
            && rs.is_app_limited
            && sample_bw < self.max_bw()
            && !self.loss_in_round
            && !self.ecn_in_round
        {
            let prev_mode = self.mode;
            let prev_min_rtt_us = self.min_rtt_us;
            self.check_drain(s);
            self.update_cycle_phase(s, rs, sample_bw);
            self.update_min_rtt(s, rs);
            if self.mode == prev_mode && self.min_rtt_us == prev_min_rtt_us && self.try_fast_path {
                return true;
            }
            *update_model = false;
        }
        false
    }

    /// bbr_main.
    pub fn main(&mut self, s: &mut SockState, rs: &RateSample) {
        self.update_round_start(s, rs);
        if self.round_start {
            self.rounds_since_probe = (self.rounds_since_probe + 1).min(0xFF);
            let _ce_ratio = self.update_ecn_alpha(s); // for PLB, which is off
        }
        self.ecn_in_round |= self.ecn_eligible && rs.is_ece;
        let sample_bw = Self::calculate_bw_sample(rs);
        self.update_latest_delivery_signals(s, rs, sample_bw);
        let mut update_model = true;
        if !self.run_fast_path(s, &mut update_model, rs, sample_bw) {
            if update_model {
                self.update_model(s, rs, sample_bw);
            }
            self.update_gains();
            let bw = self.bw();
            let pg = self.pacing_gain;
            self.set_pacing_rate(s, bw, pg);
            let (cg, cwnd) = (self.cwnd_gain, s.cwnd);
            self.set_cwnd(s, rs.acked_sacked, bw, cg, cwnd);
            self.bound_cwnd_for_inflight_model(s);
        }
        self.advance_latest_delivery_signals(rs, sample_bw);
        self.prev_ca_state = s.ca_state;
        self.loss_in_cycle |= rs.lost > 0;
        self.ecn_in_cycle |= rs.delivered_ce > 0;
    }

    /// bbr_note_loss: the current round is a loss round.
    fn note_loss(&mut self, s: &SockState) {
        if !self.loss_in_round {
            self.loss_round_delivered = s.delivered;
        }
        self.loss_in_round = true;
        self.loss_in_cycle = true;
    }

    pub fn btlbw_bps(&self) -> f64 {
        self.bw() as f64 * self.mss as f64 * 8.0 * 1e6 / BW_UNIT as f64
    }
}

impl CongestionControl for Bbr3 {
    fn name(&self) -> &'static str {
        "bbr3"
    }

    /// bbr_init.
    fn init(&mut self, s: &mut SockState) {
        self.mss = s.mss;
        self.initialized = true;
        self.init_cwnd = s.cwnd.min(0x7F);
        self.prior_cwnd = s.prior_cwnd;
        s.ssthresh = INFINITE_SSTHRESH;
        self.next_rtt_delivered = s.delivered;
        self.prev_ca_state = CaState::Open;
        self.probe_rtt_done_stamp = 0;
        self.probe_rtt_round_done = false;
        let min_rtt = if s.min_rtt == Time::MAX { u32::MAX } else { (s.min_rtt / US) as u32 };
        self.probe_rtt_min_us = min_rtt;
        self.probe_rtt_min_stamp = Self::jiffies(s);
        self.min_rtt_us = min_rtt;
        self.min_rtt_stamp = Self::jiffies(s);
        self.has_seen_rtt = false;
        self.init_pacing_rate_from_rtt(s);
        self.round_start = false;
        self.idle_restart = false;
        self.full_bw_reached = false;
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.cycle_mstamp = 0;
        self.cycle_idx = 0;
        self.mode = Mode::Startup; // bbr_reset_startup_mode
        self.ack_epoch_mstamp = s.now;
        self.ack_epoch_acked = 0;
        self.extra_acked_win_rtts = 0;
        self.extra_acked_win_idx = 0;
        self.extra_acked = [0; 2];
        self.try_fast_path = false;
        self.loss_round_delivered = s.delivered + 1;
        self.loss_round_start = false;
        self.undo_bw_lo = 0;
        self.undo_inflight_lo = 0;
        self.undo_inflight_hi = 0;
        self.loss_events_in_round = 0;
        self.startup_ecn_rounds = 0;
        self.reset_congestion_signals();
        self.bw_lo = u32::MAX;
        self.bw_hi = [0; 2];
        self.inflight_lo = u32::MAX;
        self.inflight_hi = u32::MAX;
        self.reset_full_bw();
        self.bw_probe_up_cnt = u32::MAX;
        self.bw_probe_up_acks = 0;
        self.bw_probe_up_rounds = 0;
        self.probe_wait_us = 0;
        self.stopped_risky_probe = false;
        self.ack_phase = AckPhase::Init;
        self.rounds_since_probe = 0;
        self.bw_probe_samples = false;
        self.prev_probe_too_high = false;
        self.ecn_eligible = false;
        self.ecn_alpha = self.cfg.ecn_alpha_init;
        self.alpha_last_delivered = 0;
        self.alpha_last_delivered_ce = 0;
        // bbr_init has no bbr_update_gains: the gains stay 0 (the zeroed icsk_ca_priv) until
        // the first ACK's update.
        self.pacing_gain = 0;
        self.cwnd_gain = 0;
    }

    fn has_cong_control(&self) -> bool {
        true
    }

    fn wants_pacing(&self) -> bool {
        true
    }

    /// TCP_CONG_WANTS_CE_EVENTS with bbr_precise_ece_ack on an ecn_low route: the receiver
    /// echoes CE exactly (dctcp_ece_ack_update), and TCP_ECN_ECT_PERMANENT makes
    /// retransmissions ECT too. On an ECN connection without ecn_low, RFC 3168 echoes.
    fn needs_ecn(&self) -> bool {
        self.cfg.ecn_low && self.cfg.precise_ece_ack
    }

    fn cong_control(&mut self, s: &mut SockState, rs: &RateSample) {
        self.main(s, rs);
    }

    /// bbr_skb_marked_lost: while the ACKs reflect bandwidth probing, a loss rate above
    /// loss_thresh among the packets in flight when the lost one was sent cuts inflight_hi
    /// at once, at the level where the rate crossed the threshold.
    fn skb_marked_lost(&mut self, s: &mut SockState, tx: &SkbTx) {
        self.note_loss(s);
        if !self.bw_probe_samples {
            return; // not sent while probing for bandwidth
        }
        if !tx.has_delivered_mstamp {
            return;
        }
        let mut rs = RateSample {
            tx_in_flight: tx.in_flight,
            lost: (s.lost - tx.lost) as u32,
            is_app_limited: tx.is_app_limited,
            delivered: 0,
            ..RateSample::default()
        };
        if self.is_inflight_too_high(&rs) {
            rs.tx_in_flight = self.inflight_hi_from_lost_skb(&rs);
            self.handle_inflight_too_high(s, &rs);
        }
    }

    /// bbr_ssthresh: save cwnd and, for undo, the loss-adapted bounds.
    fn ssthresh(&mut self, s: &mut SockState) -> u32 {
        self.save_cwnd(s);
        self.undo_bw_lo = self.bw_lo;
        self.undo_inflight_lo = self.inflight_lo;
        self.undo_inflight_hi = self.inflight_hi;
        s.ssthresh
    }

    /// bbr_undo_cwnd: revert the short-term model to before the loss episode.
    fn undo_cwnd(&mut self, _s: &mut SockState) -> u32 {
        self.reset_full_bw();
        self.loss_in_round = false;
        self.bw_lo = self.bw_lo.max(self.undo_bw_lo);
        self.inflight_lo = self.inflight_lo.max(self.undo_inflight_lo);
        self.inflight_hi = self.inflight_hi.max(self.undo_inflight_hi);
        self.try_fast_path = false;
        self.prior_cwnd
    }

    /// bbr_set_state.
    fn set_state(&mut self, s: &mut SockState, new: CaState) {
        if new == CaState::Loss {
            self.prev_ca_state = CaState::Loss;
            self.reset_full_bw();
            if !self.is_probing_bandwidth() && self.inflight_lo == u32::MAX {
                self.inflight_lo = s.cwnd.max(self.prior_cwnd);
            }
        } else if self.prev_ca_state == CaState::Loss {
            self.exit_loss_recovery(s);
        }
    }

    /// bbr_cwnd_event (CA_EVENT_TX_START; the CE events are the receiver's, TLP is absent).
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
            btlbw_bps: self.btlbw_bps(),
            ..CcTelemetry::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng;

    fn setup(seed: u64) -> (Bbr3, SockState) {
        setup_with(seed, Bbr3Config::default())
    }

    fn setup_with(seed: u64, cfg: Bbr3Config) -> (Bbr3, SockState) {
        let mut s = SockState::new(1448, 10);
        let mut b = Bbr3::new(cfg, rng::derive(seed, 99));
        b.init(&mut s);
        (b, s)
    }

    /// One ACK `dt_us` after the previous one delivering `pkts`, whose sample spans one `rtt_us`
    /// and starts at `prior_delivered` (a new round when that is at the round's end).
    #[allow(clippy::too_many_arguments)]
    fn ack(b: &mut Bbr3, s: &mut SockState, dt_us: u64, pkts: u64, prior_delivered: u64, rtt_us: u64, losses: u32, lost: u32, tx_in_flight: u32, ce: u64) -> RateSample {
        s.now += dt_us * US;
        s.srtt = rtt_us * US;
        s.delivered += pkts;
        s.delivered_ce += ce;
        s.delivered_mstamp = s.now;
        s.lost += losses as u64;
        let rs = RateSample {
            prior_delivered,
            prior_mstamp: Some(s.now - rtt_us * US),
            delivered: (s.delivered - prior_delivered) as i64,
            delivered_ce: ce as u32,
            interval: (rtt_us * US) as i64,
            rtt: (rtt_us * US) as i64,
            acked_sacked: pkts as u32,
            prior_in_flight: s.packets_in_flight(),
            losses,
            lost,
            tx_in_flight,
            is_ece: ce > 0,
            ..RateSample::default()
        };
        b.cong_control(s, &rs);
        rs
    }

    /// One round trip: `pkts` delivered over `rtt_us` by one ACK that starts a new round.
    fn round(b: &mut Bbr3, s: &mut SockState, pkts: u64, rtt_us: u64) {
        let prior = s.delivered;
        ack(b, s, rtt_us, pkts, prior, rtt_us, 0, 0, pkts as u32, 0);
    }

    /// STARTUP with a flat `pkts` per round of `rtt_us` until PROBE_BW, with `pkts` in flight:
    /// one round sets full_bw, three without 25 % growth fill the pipe (DRAIN), and one more
    /// leaves DRAIN (on the fourth, bbr_packets_in_net_at_edt still counts a TSO burst for
    /// STARTUP's pacing gain > 1).
    fn warm(seed: u64, pkts: u64, rtt_us: u64) -> (Bbr3, SockState) {
        let (mut b, mut s) = setup(seed);
        s.packets_out = pkts as u32;
        for _ in 0..4 {
            round(&mut b, &mut s, pkts, rtt_us);
        }
        assert_eq!(b.mode, Mode::Drain);
        round(&mut b, &mut s, pkts, rtt_us);
        assert_eq!((b.mode, b.cycle_idx), (Mode::ProbeBw, BBR_BW_PROBE_CRUISE));
        (b, s)
    }

    #[test]
    fn gains_and_fractions_are_the_kernel_integers() {
        let c = Bbr3Config::default();
        assert_eq!((c.startup_pacing_gain, c.startup_cwnd_gain, c.drain_gain, c.cwnd_gain), (710, 512, 88, 512));
        assert_eq!(c.pacing_gain, [320, 232, 256, 256]);
        assert_eq!((c.beta, c.loss_thresh, c.inflight_headroom, c.probe_rtt_cwnd_gain), (76, 5, 38, 128));
        assert_eq!((c.ecn_alpha_gain, c.ecn_alpha_init, c.ecn_factor, c.ecn_thresh, c.ecn_reprobe_gain), (16, 256, 85, 128, 128));
        assert_eq!((c.full_bw_thresh, c.full_bw_cnt, c.full_loss_cnt, c.full_ecn_cnt), (320, 3, 6, 2));
        assert_eq!((c.bw_probe_max_rounds, c.bw_probe_rand_rounds, c.bw_probe_base_us, c.bw_probe_rand_us), (63, 2, 2_000_000, 1_000_000));
        assert_eq!((c.probe_rtt_win_ms, c.probe_rtt_mode_ms, c.min_rtt_win_sec, c.ecn_max_rtt_us), (5000, 200, 10, 5000));
        assert!(!c.ecn_low, "Linux's route feature ecn_low is off by default");
    }

    #[test]
    fn startup_drain_probe_bw_and_the_down_cruise_refill_up_down_cycle() {
        let (mut b, mut s) = setup(1);
        assert_eq!(b.mode, Mode::Startup);
        s.packets_out = 500;
        for pkts in [10, 20, 40, 80] {
            round(&mut b, &mut s, pkts, 100_000);
            assert_eq!((b.mode, b.pacing_gain, b.cwnd_gain), (Mode::Startup, 710, 512));
        }
        // 80 pkts / 100 ms = ceil(80 x 2^24 / 100000) = 13422; full_bw tracks each 25 % rise.
        assert_eq!((b.full_bw, b.max_bw()), (13422, 13422));
        round(&mut b, &mut s, 80, 100_000);
        round(&mut b, &mut s, 80, 100_000);
        assert!(!b.full_bw_reached && b.full_bw_cnt == 2);
        round(&mut b, &mut s, 80, 100_000);
        assert!(b.full_bw_reached && b.full_bw_now);
        assert_eq!((b.mode, b.pacing_gain, b.cwnd_gain), (Mode::Drain, 88, 512), "500 in flight > BDP: DRAIN");
        // ssthresh = bbr_inflight(max_bw, 1): BDP ceil(13422 x 100000 / 2^24) = 81 (v3's
        // quantization budget is a floor of 3 TSO bursts, here 6, not an addition).
        assert_eq!(b.bdp(b.max_bw(), BBR_UNIT), 81);
        assert_eq!(s.ssthresh, 81);
        // DRAIN ends once in flight <= 81: PROBE_BW starts in DOWN, which cruises on the same
        // ACK since in flight is already at the BDP (and there is no inflight_hi yet).
        s.packets_out = 100;
        round(&mut b, &mut s, 80, 100_000);
        assert_eq!(b.mode, Mode::Drain);
        s.packets_out = 81;
        round(&mut b, &mut s, 80, 100_000);
        assert_eq!((b.mode, b.cycle_idx, b.pacing_gain, b.cwnd_gain), (Mode::ProbeBw, BBR_BW_PROBE_CRUISE, 256, 512));
        // DOWN set ack_phase PROBE_STOPPING; this ACK starting a round ends it at once.
        assert_eq!(b.ack_phase, AckPhase::Init);
        let start = b.cycle_mstamp;
        let wait = b.probe_wait_us as u64;
        assert!((2_000_000..3_000_000).contains(&wait), "{wait}");
        // CRUISE until the wall-clock wait has elapsed (63 rounds of 100 ms would be 6.3 s).
        loop {
            round(&mut b, &mut s, 80, 100_000);
            if s.now / US - start <= wait {
                assert_eq!(b.cycle_idx, BBR_BW_PROBE_CRUISE, "at {} us", s.now / US - start);
            } else {
                break;
            }
        }
        assert_eq!((b.cycle_idx, b.pacing_gain, b.ack_phase), (BBR_BW_PROBE_REFILL, 256, AckPhase::Refilling));
        assert!((b.bw_lo, b.inflight_lo) == (u32::MAX, u32::MAX));
        // One round of REFILL, then UP: pacing 1.25, cwnd gain 2 + 0.25.
        round(&mut b, &mut s, 80, 100_000);
        assert_eq!((b.cycle_idx, b.pacing_gain, b.cwnd_gain), (BBR_BW_PROBE_UP, 320, 576));
        assert!(b.bw_probe_samples);
        assert_eq!((b.full_bw, b.full_bw_cnt), (13422, 0));
        // UP ends when the bandwidth plateaus (three rounds without 25 % growth: full_bw_now).
        round(&mut b, &mut s, 80, 100_000);
        round(&mut b, &mut s, 80, 100_000);
        assert_eq!(b.cycle_idx, BBR_BW_PROBE_UP);
        round(&mut b, &mut s, 80, 100_000);
        assert_eq!((b.cycle_idx, b.pacing_gain, b.cwnd_gain), (BBR_BW_PROBE_DOWN, 232, 512));
        // DOWN holds 0.91 while in flight is above inflight(bw, 1) = 81, then cruises.
        s.packets_out = 90;
        round(&mut b, &mut s, 80, 100_000);
        assert_eq!(b.cycle_idx, BBR_BW_PROBE_DOWN);
        s.packets_out = 81;
        round(&mut b, &mut s, 80, 100_000);
        assert_eq!((b.cycle_idx, b.pacing_gain), (BBR_BW_PROBE_CRUISE, 256));
    }

    #[test]
    fn probe_wait_is_two_to_three_seconds_and_its_draws_differ_by_seed() {
        let mut waits = Vec::new();
        for seed in 0..50 {
            let (b, _) = warm(seed, 80, 100_000);
            assert!((2_000_000..3_000_000).contains(&b.probe_wait_us));
            assert!(b.rounds_since_probe < 2);
            waits.push(b.probe_wait_us);
        }
        waits.sort();
        waits.dedup();
        assert!(waits.len() > 45);
        assert!(waits[0] < 2_200_000 && *waits.last().unwrap() > 2_800_000, "spread over the second: {waits:?}");
    }

    #[test]
    fn reno_coexistence_probes_after_min_63_target_inflight_rounds() {
        // BDP 10 packets at 40 ms: target inflight ceil(4195 x 40000 / 2^24) = 11 packets, so
        // the round bound is min(63, 11) = 11 rounds (440 ms), well before the 2-3 s clock.
        for seed in 0..6 {
            let (mut b, mut s) = warm(seed, 10, 40_000);
            assert_eq!(b.target_inflight(&s), 11);
            let r0 = b.rounds_since_probe;
            let mut k = 0;
            while b.cycle_idx == BBR_BW_PROBE_CRUISE {
                round(&mut b, &mut s, 10, 40_000);
                k += 1;
            }
            assert_eq!(b.cycle_idx, BBR_BW_PROBE_REFILL);
            assert_eq!(k, 11 - r0, "seed {seed}: started at {r0}");
        }
        // A large BDP: 63 rounds at most.
        let (mut b, mut s) = warm(7, 200, 20_000);
        assert!(b.target_inflight(&s) > 63);
        let r0 = b.rounds_since_probe;
        let mut k = 0;
        while b.cycle_idx == BBR_BW_PROBE_CRUISE {
            round(&mut b, &mut s, 200, 20_000);
            k += 1;
        }
        assert_eq!(k, 63 - r0);
    }

    /// In PROBE_UP with probe feedback (bw_probe_samples), as the cycle test gets there.
    fn in_probe_up(seed: u64) -> (Bbr3, SockState) {
        let (mut b, mut s) = warm(seed, 80, 100_000);
        while b.cycle_idx != BBR_BW_PROBE_UP {
            round(&mut b, &mut s, 80, 100_000);
        }
        assert!(b.bw_probe_samples && b.inflight_hi == u32::MAX);
        (b, s)
    }

    #[test]
    fn more_than_2_percent_loss_in_probe_up_cuts_inflight_hi_and_goes_down() {
        // 1 lost of 100 in flight is below the threshold: floor(100 x 5 / 256) = 1 is allowed.
        let (mut b, mut s) = in_probe_up(1);
        let prior = s.delivered;
        ack(&mut b, &mut s, 1000, 1, prior, 100_000, 1, 1, 100, 0);
        assert_eq!((b.cycle_idx, b.inflight_hi), (BBR_BW_PROBE_UP, u32::MAX));
        // 2 of 100: too high. inflight_hi = max(tx_in_flight, target_inflight x (1 - beta)):
        // target = min(inflight(bw, 1), cwnd) = 81 + 2 (UP's budget) = 83; 83 x 180 / 256 = 58.
        let (mut b, mut s) = in_probe_up(1);
        assert_eq!(b.target_inflight(&s), 83);
        let prior = s.delivered;
        ack(&mut b, &mut s, 1000, 1, prior, 100_000, 2, 2, 50, 0);
        assert_eq!(b.inflight_hi, 58);
        assert_eq!((b.cycle_idx, b.prev_probe_too_high, b.bw_probe_samples), (BBR_BW_PROBE_DOWN, true, false));
        // The cap applies at once: cwnd <= inflight_hi outside CRUISE.
        assert_eq!(s.cwnd, 58);
        // ... and with tx_in_flight above the cut it is tx_in_flight.
        let (mut b, mut s) = in_probe_up(2);
        let prior = s.delivered;
        ack(&mut b, &mut s, 1000, 1, prior, 100_000, 3, 3, 100, 0);
        assert_eq!(b.inflight_hi, 100);
        // CRUISE leaves 15 % headroom: 100 - floor(100 x 38 / 256) = 86.
        assert_eq!(b.inflight_with_headroom(), 86);
    }

    #[test]
    fn a_lost_packet_cuts_inflight_hi_where_the_loss_rate_crossed_the_threshold() {
        let (b, _) = setup(1);
        // 2 lost before it among 99 in flight before it: budget ceil(99 x 5 / 256) = 2 is used up.
        let rs = RateSample { tx_in_flight: 100, lost: 3, ..RateSample::default() };
        assert_eq!(b.inflight_hi_from_lost_skb(&rs), 99);
        // 299 before it, 2 lost: budget ceil(299 x 5 / 256) = 6; the prefix solving
        // (2 + p) / (299 + p) = 5/256 is (6 - 2) x 256 / 251 = 4.
        let rs = RateSample { tx_in_flight: 300, lost: 3, ..RateSample::default() };
        assert_eq!(b.inflight_hi_from_lost_skb(&rs), 303);
        // Through the hook, while probing: tp->lost - tx.lost = 10 - 7 = 3 of tx.in_flight 100.
        let (mut b, mut s) = in_probe_up(3);
        s.lost = 10;
        b.skb_marked_lost(&mut s, &SkbTx { in_flight: 100, lost: 7, is_app_limited: false, has_delivered_mstamp: true });
        assert_eq!(b.inflight_hi, 99);
        assert_eq!(b.cycle_idx, BBR_BW_PROBE_DOWN);
        // bbr_note_loss marked the round, but DOWN's new cycle resets the signals.
        assert!(!b.loss_in_round && !b.loss_in_cycle);
        // Not probing: only the loss round is noted.
        let (mut b, mut s) = warm(3, 80, 100_000);
        s.lost = 10;
        b.skb_marked_lost(&mut s, &SkbTx { in_flight: 100, lost: 7, is_app_limited: false, has_delivered_mstamp: true });
        assert_eq!(b.inflight_hi, u32::MAX);
        assert_eq!(b.loss_round_delivered, s.delivered);
    }

    #[test]
    fn a_loss_round_outside_probing_cuts_bw_lo_and_inflight_lo_by_beta() {
        let (mut b, mut s) = warm(4, 80, 100_000);
        s.cwnd = 100;
        // A loss in a round (losses > 0), then the next loss round's start applies the cut:
        // bw_lo = max(bw_latest, max_bw x 180/256), inflight_lo = max(inflight_latest, cwnd x 180/256).
        let prior = s.delivered - 10;
        ack(&mut b, &mut s, 1000, 1, prior, 100_000, 1, 1, 80, 0);
        assert!(b.loss_in_round);
        b.bw_latest = 0;
        b.inflight_latest = 0;
        let cwnd = s.cwnd;
        round(&mut b, &mut s, 40, 100_000);
        assert_eq!(b.inflight_lo, (cwnd.max(0) as u64 * 180 / 256).max(40) as u32);
        assert_eq!(b.bw_lo, ((13422u64 * 180) >> 8).max(6711) as u32);
        assert!(s.cwnd <= b.inflight_lo);
    }

    #[test]
    fn probe_rtt_after_5_s_without_a_lower_rtt_at_half_the_bdp() {
        let (mut b, mut s) = warm(5, 80, 100_000);
        assert_eq!((b.min_rtt_us, b.probe_rtt_min_stamp), (100_000, 100));
        // RTTs of 110 ms never refresh the 5 s filter: PROBE_RTT at the first ACK after 5.1 s.
        while s.now + 110 * MS <= 5_100 * MS {
            round(&mut b, &mut s, 80, 110_000);
            assert_ne!(b.mode, Mode::ProbeRtt, "at {} ms", s.now / MS);
        }
        round(&mut b, &mut s, 80, 110_000);
        assert_eq!(b.mode, Mode::ProbeRtt);
        assert_eq!(b.min_rtt_us, 100_000, "the 10 s min_rtt filter keeps 100 ms");
        assert_eq!((b.probe_rtt_min_us, b.probe_rtt_min_stamp), (110_000, s.now / MS));
        // cwnd = max(4, BDP x 0.5) = ceil(bw x 100000 x 128/256 / 2^24), where the bandwidth
        // filter has moved on to the 110 ms rounds' ceil(80 x 2^24 / 110000) = 12202: 37.
        assert_eq!(b.bw(), 12202);
        let half = b.bdp(b.bw(), 128);
        assert_eq!(half, 37);
        assert_eq!(s.cwnd, 37);
        assert_eq!((b.pacing_gain, b.cwnd_gain), (256, 256));
        // In flight down to 37: 200 ms and a round, then back to PROBE_BW (CRUISE).
        s.packets_out = 37;
        round(&mut b, &mut s, 37, 100_000);
        let done = b.probe_rtt_done_stamp;
        assert_eq!(done, s.now / MS + 200);
        while b.mode == Mode::ProbeRtt {
            round(&mut b, &mut s, 37, 100_000);
            assert!(s.now / MS <= done + 100);
        }
        assert!(s.now / MS > done);
        assert_eq!((b.mode, b.cycle_idx), (Mode::ProbeBw, BBR_BW_PROBE_CRUISE));
        assert_eq!(b.probe_rtt_min_stamp, s.now / MS, "next PROBE_RTT in 5 s");
        assert!(s.cwnd >= b.prior_cwnd.min(b.inflight_with_headroom()));
    }

    #[test]
    fn startup_exits_on_six_loss_events_in_a_recovery_round_with_high_loss() {
        for events in [5, 6] {
            let (mut b, mut s) = setup(6);
            s.packets_out = 200;
            for pkts in [10, 20, 40] {
                round(&mut b, &mut s, pkts, 40_000);
            }
            assert_eq!(b.mode, Mode::Startup);
            s.ca_state = CaState::Recovery;
            // Within the loss round (samples from before its end), `events - 1` ACKs with losses.
            let round_end = b.loss_round_delivered;
            for _ in 0..events - 1 {
                ack(&mut b, &mut s, 1000, 1, round_end - 5, 40_000, 1, 1, 80, 0);
            }
            assert_eq!(b.loss_events_in_round, events - 1);
            // The round's end: another loss, with 10 lost of 80 in flight (> 2 %).
            ack(&mut b, &mut s, 1000, 1, round_end, 40_000, 1, 10, 80, 0);
            if events == 6 {
                assert!(b.full_bw_reached);
                assert_eq!(b.mode, Mode::Drain);
                // inflight_hi = max(inflight(max_bw, 1), inflight_latest): ceil(40 x 2^24 /
                // 40000) = 16778 -> BDP 41.
                assert_eq!(b.inflight_hi, 41.max(b.inflight_latest));
            } else {
                assert!(!b.full_bw_reached);
                assert_eq!((b.mode, b.loss_events_in_round), (Mode::Startup, 0));
            }
        }
    }

    #[test]
    fn ecn_alpha_is_an_ewma_of_the_round_s_ce_ratio_and_two_high_rounds_end_startup() {
        let cfg = Bbr3Config { ecn_low: true, ..Bbr3Config::default() };
        let (mut b, mut s) = setup_with(8, cfg.clone());
        s.ecn = true;
        s.packets_out = 40;
        // First round: no min_rtt yet when alpha would update: not ECN-eligible.
        round(&mut b, &mut s, 10, 2000);
        assert!(!b.ecn_eligible && b.ecn_alpha == 256);
        // Round 2: eligible (min_rtt 2 ms <= 5 ms); 10 of 20 delivered since the start CE:
        // ratio 128; alpha = 240 x 256 / 256 + 16 x 128 / 256 = 248.
        let prior = s.delivered;
        ack(&mut b, &mut s, 2000, 10, prior, 2000, 0, 0, 20, 10);
        assert!(b.ecn_eligible);
        assert_eq!((b.ecn_alpha, b.startup_ecn_rounds), (248, 1));
        assert_eq!(b.mode, Mode::Startup);
        // Round 3: all 10 CE: ratio 256; alpha = floor(240 x 248 / 256) + 16 = 248; a second
        // round at >= 50 %: STARTUP ends (bbr_full_ecn_cnt = 2).
        let prior = s.delivered;
        ack(&mut b, &mut s, 2000, 10, prior, 2000, 0, 0, 20, 10);
        assert_eq!((b.ecn_alpha, b.startup_ecn_rounds), (248, 2));
        assert!(b.full_bw_reached);
        assert_ne!(b.mode, Mode::Startup);
        // Without ecn_low (Linux's default) or above 5 ms of min_rtt, ECN is ignored.
        let (mut b, mut s) = setup(8);
        s.ecn = true;
        round(&mut b, &mut s, 10, 2000);
        let prior = s.delivered;
        ack(&mut b, &mut s, 2000, 10, prior, 2000, 0, 0, 20, 10);
        assert!(!b.ecn_eligible && b.ecn_alpha == 256);
        let (mut b, mut s) = setup_with(8, cfg);
        s.ecn = true;
        round(&mut b, &mut s, 10, 6000);
        round(&mut b, &mut s, 10, 6000);
        assert!(!b.ecn_eligible);
    }

    #[test]
    fn an_ece_round_outside_probing_cuts_inflight_lo_by_alpha_over_3() {
        let cfg = Bbr3Config { ecn_low: true, ..Bbr3Config::default() };
        let (mut b, mut s) = setup_with(9, cfg);
        s.ecn = true;
        s.packets_out = 20;
        for _ in 0..5 {
            round(&mut b, &mut s, 20, 2000);
        }
        assert_eq!((b.mode, b.cycle_idx), (Mode::ProbeBw, BBR_BW_PROBE_CRUISE));
        assert!(b.ecn_eligible);
        b.ecn_alpha = 248;
        let cwnd = s.cwnd;
        // An ACK with ECE starting a round: first alpha takes the round's CE ratio (1 of 20:
        // 256 / 20 = 12): floor(240 x 248 / 256) + floor(16 x 12 / 256) = 232; then at the
        // loss round's start inflight_lo = cwnd x (256 - floor(232 x 85 / 256)) / 256 =
        // cwnd x 179 / 256, and cwnd follows.
        let prior = s.delivered;
        ack(&mut b, &mut s, 2000, 20, prior, 2000, 0, 0, 20, 1);
        assert_eq!(b.ecn_alpha, 232);
        assert_eq!(b.inflight_lo, (cwnd as u64 * 179 / 256) as u32);
        assert_eq!(s.cwnd, b.inflight_lo.max(4));
        // CE above half of a sample's delivered packets is "inflight too high".
        let rs = RateSample { delivered: 10, delivered_ce: 6, ..RateSample::default() };
        assert!(b.is_inflight_too_high(&rs));
        let rs = RateSample { delivered: 10, delivered_ce: 5, ..RateSample::default() };
        assert!(!b.is_inflight_too_high(&rs));
    }

    /// bbr_check_time_to_probe_bw's ECN branch (`bbr_ecn_reprobe_gain`): once a PROBE_DOWN or
    /// CRUISE cycle has delivered a CE mark and no loss, the first ACK in CA_Open starts REFILL,
    /// which resets inflight_lo (bbr_start_bw_probe_refill -> bbr_reset_lower_bounds), with
    /// bw_probe_up_rounds = ilog2(inflight_hi x 1/2), so UP's first round raises inflight_hi by
    /// about half. While the stack is in CWR (an ECE under way) it waits. With sparse CE marks
    /// (CoDel's) the sender leaves CWR within a round of each mark, so an ECN inflight_lo never
    /// stays in force (issue 14; tests/bbr3.rs).
    #[test]
    fn a_ce_mark_in_cruise_starts_refill_at_the_first_open_ack_and_resets_inflight_lo() {
        let cfg = Bbr3Config { ecn_low: true, ..Bbr3Config::default() };
        let (mut b, mut s) = setup_with(9, cfg);
        s.ecn = true;
        s.packets_out = 20;
        for _ in 0..5 {
            round(&mut b, &mut s, 20, 2000);
        }
        assert_eq!((b.mode, b.cycle_idx), (Mode::ProbeBw, BBR_BW_PROBE_CRUISE));
        assert!(b.ecn_eligible && !b.ecn_in_cycle);
        b.inflight_hi = 40;
        b.inflight_lo = 30;
        // Within the round (no round or loss-round start): an ACK of 10 packets, one CE, its
        // ECE putting the stack in CWR. The cycle now has ECN; cwnd is capped by inflight_lo.
        s.ca_state = CaState::Cwr;
        // Every sample starts before the round's end (prior_delivered below next_rtt_delivered
        // and loss_round_delivered), so none starts a round or a loss round.
        let prior = s.delivered - 10;
        ack(&mut b, &mut s, 500, 10, prior, 2000, 0, 0, 20, 1);
        assert!(b.ecn_in_cycle && !b.loss_in_cycle);
        assert_eq!((b.cycle_idx, b.inflight_lo, s.cwnd), (BBR_BW_PROBE_CRUISE, 30, 30));
        // Still in CWR: no reprobe.
        ack(&mut b, &mut s, 500, 10, prior, 2000, 0, 0, 20, 0);
        assert_eq!((b.cycle_idx, b.inflight_lo), (BBR_BW_PROBE_CRUISE, 30));
        // CWR over (CA_Open): this ACK starts REFILL and drops the lower bounds;
        // ilog2(40 x 128 / 256) = ilog2(20) = 4.
        s.ca_state = CaState::Open;
        ack(&mut b, &mut s, 500, 10, prior, 2000, 0, 0, 20, 0);
        assert_eq!((b.cycle_idx, b.ack_phase), (BBR_BW_PROBE_REFILL, AckPhase::Refilling));
        assert_eq!((b.inflight_lo, b.bw_lo, b.bw_probe_up_rounds), (u32::MAX, u32::MAX, 4));
        // One round later UP starts with growth 2^4 = 16 packets in its first round:
        // bw_probe_up_cnt = cwnd / 16 ACKed packets per inflight_hi increment.
        let cwnd = s.cwnd;
        round(&mut b, &mut s, 20, 2000);
        assert_eq!(b.cycle_idx, BBR_BW_PROBE_UP);
        assert_eq!((b.bw_probe_up_rounds, b.bw_probe_up_cnt), (5, (cwnd / 16).max(1)));
    }

    #[test]
    fn undo_restores_the_bounds_saved_at_ssthresh_and_returns_prior_cwnd() {
        let (mut b, mut s) = warm(10, 80, 100_000);
        b.bw_lo = 9000;
        b.inflight_lo = 70;
        b.inflight_hi = 90;
        s.cwnd = 120;
        let _ = b.ssthresh(&mut s);
        assert_eq!((b.undo_bw_lo, b.undo_inflight_lo, b.undo_inflight_hi, b.prior_cwnd), (9000, 70, 90, 120));
        // Losses then cut the model ...
        b.bw_lo = 6000;
        b.inflight_lo = 50;
        b.inflight_hi = 60;
        b.loss_in_round = true;
        b.full_bw = 5;
        // ... and the recovery proves spurious.
        assert_eq!(b.undo_cwnd(&mut s), 120);
        assert_eq!((b.bw_lo, b.inflight_lo, b.inflight_hi), (9000, 70, 90));
        assert!(!b.loss_in_round && b.full_bw == 0 && !b.try_fast_path);
    }

    #[test]
    fn an_rto_sets_inflight_lo_from_the_cwnd_before_it_and_leaving_loss_restores_cwnd() {
        let (mut b, mut s) = warm(11, 80, 100_000);
        s.cwnd = 150;
        let _ = b.ssthresh(&mut s);
        s.cwnd = 1;
        b.set_state(&mut s, CaState::Loss);
        assert_eq!(b.inflight_lo, 150);
        assert_eq!(b.prev_ca_state, CaState::Loss);
        b.set_state(&mut s, CaState::Open);
        assert_eq!(s.cwnd, 150);
    }

    #[test]
    fn tso_goal_adds_the_min_rtt_allowance_at_small_rtts() {
        let (mut b, mut s) = setup(12);
        s.pacing_rate = 1_250_000; // 10 Mbps: 1220 bytes per ms
        b.min_rtt_us = 40_000;
        assert_eq!(b.tso_segs_goal(&s), 2);
        b.min_rtt_us = 2000; // 64 KB >> 3 = 8192 more bytes: (1220 + 8192) / 1448 = 6
        assert_eq!(b.tso_segs_goal(&s), 6);
    }
}
