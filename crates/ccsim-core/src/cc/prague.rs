//! TCP Prague as the L4S team's Linux implements it (L4STeam/linux, net/ipv4/tcp_prague.c,
//! MODULE_VERSION 0.7, the 2024 version prepared for upstream): DCTCP's response to the
//! fraction of CE-marked packets, made scalable and RTT-independent for the public Internet
//! behind an L4S queue such as DualPI2 (RFC 9331 Appendix A).
//!
//! - **Alpha**: the EWMA of the fraction of packets delivered with a CE echo, kept upscaled by
//!   1/g (`upscaled_alpha`, 24 fractional bits + 4: `PRAGUE_ALPHA_BITS`, `PRAGUE_SHIFT_G`) so
//!   that its remainder carries over; updated once per round trip of data, and with RTT
//!   independence at most once per target RTT (`prague_update_alpha`,
//!   `prague_should_update_ewma`). Not updated before the first mark (`saw_ce`).
//! - **Window**: a fractional window (`frac_cwnd`, 20 fractional bits, `CWND_UNIT`), from which
//!   cwnd is stepped by one packet per ACK towards ceil(frac_cwnd), at least 2
//!   (`prague_update_cwnd`). Additive increase on every ACK, for the packets it acknowledges
//!   that were not CE-marked (`acked - ece_delta`), also in CWR; none while a loss reduction
//!   is under way (`in_loss`).
//! - **Reduction on marks**: an ACK with a CE echo enters CWR (the stack's `tcp_enter_cwr`),
//!   where `prague_enter_cwr` takes frac_cwnd x alpha / 2 off (unbiased rounding), at most
//!   once per target RTT once RTT-independent. In mode 0 (`prague_alpha_mode`, the default)
//!   alpha starts at 0 and the first mark halves frac_cwnd instead.
//! - **RTT independence** (`RTT_CONTROL_RATE`, the only heuristic of 0.7, the default of the
//!   0.6 version that offered several): after `prague_rtt_transition` rounds out of slow
//!   start, a flow whose srtt is below `prague_rtt_target` (25 ms) grows by (srtt/target)^2
//!   packets per RTT (`prague_rate_scaled_ai_ack_increase`), and updates alpha and reduces at
//!   most once per target RTT: it behaves as a flow at the target RTT.
//! - **Rate mode** (`prague_cwnd_mode` 2, "switch", the default): a flow that has seen marks and
//!   whose cwnd is at most `prague_cwnd_transit` x 1500 bytes keeps a rate (`rate_bytes`)
//!   instead of a window, with +/- 3% pacing variation per half virtual RTT.
//! - **Pacing** (`prague_update_pacing_rate`): MTU x max(frac_cwnd, in flight) / srtt, doubled
//!   while cwnd < ssthresh / 2; the flow is always paced (`SK_PACING_NEEDED`).
//! - **Loss**: entering Recovery or an RTO halves frac_cwnd (`prague_enter_loss`); no growth
//!   until Open. This is 0.7's classic fallback: it has no RFC 3168 / classic-ECN AQM
//!   detection (0.6's `prague_ecn_fallback`, off by default there, was removed).
//! - **Without ECN** (`[tcp] ecn = false`) it is `prague_reno`: `tcp_reno_ssthresh` and
//!   `tcp_reno_cong_avoid`, as `prague_init` switches to it when ECN was not negotiated.
//!
//! Simplifications, each without effect on the response:
//! - **Feedback**: Linux Prague requires Accurate ECN (`TCP_CONG_NEEDS_ACCECN`) and reads
//!   the CE-marked delivered count (`tp->delivered_ce`, `rs->ece_delta`). ccsim's receiver
//!   gives DCTCP's precise echo instead (`needs_ecn`): ECE on exactly the ACKs of CE-marked
//!   data, and an immediate ACK whenever the CE state changes, so that no ACK covers both
//!   marked and unmarked segments. The sender counts every packet an ACK with ECE delivers as
//!   CE (`tcp_count_delivered`), so `delivered_ce` equals AccECN's count of CE-marked packets,
//!   barring ACK loss (AccECN's counters survive a lost ACK; a lost DCTCP echo loses its
//!   marks). `ece_delta` is the growth of `delivered_ce` on this ACK.
//! - **MSS reduction**: below a virtual window of 2 MTUs Linux lowers the MSS (down to 150
//!   bytes, `prague_valid_mtu`, `tcp_sync_mss`). ccsim's MSS is fixed per flow, so this is
//!   not done: the window stays at 2 full packets and the rate in rate mode. (Not without
//!   effect at `MINIMUM_RATE`: 1500-byte packets every 120 ms leave a flow pacing-limited, so
//!   never cwnd-limited, where Linux's 150-byte ones fill cwnd = 2 at RTTs of 25 ms or more;
//!   docs/algorithms.md, prague, "After an RTO".)
//! - **TSO**: `prague_burst_shift` and `prague_max_tso_segs` size GSO bursts; ccsim sends
//!   single segments, so they are accepted and have no effect (`max_tso_burst` is computed).
//! - **ECN++**: Linux sends Prague's pure ACKs and SYNs as ECT(1); ccsim's pure ACKs are
//!   Not-ECT (as for every algorithm).
//! - **Times** are the kernel's units: srtt in 1/8 us (`srtt_us`) from the stack's srtt in ns,
//!   stamps in us (`tcp_mstamp`). The kernel's rate <-> window conversions take 2^20 us for a
//!   second (`RTT2SEC_SHIFT`); they are kept as they are.

use super::newreno::reno_cong_avoid;
use super::{AlgorithmInfo, CaEvent, CaState, CongestionControl, ParamSpec, Params, RateSample, SockState};
use crate::tcp::HEADER_BYTES;

pub const PARAMS: &[ParamSpec] = &[
    ParamSpec::int(
        "prague_burst_shift",
        12.0,
        0.0,
        31.0,
        "log2 s",
        "Maximal GSO burst duration, 2^-prague_burst_shift s (tcp_prague.c; 12: about 0.25 ms). No effect in ccsim (no TSO/GSO).",
    ),
    ParamSpec::int(
        "prague_max_tso_segs",
        0.0,
        0.0,
        65535.0,
        "segments",
        "Maximum TSO/GSO segments, 0 = no limit (tcp_prague.c). No effect in ccsim (no TSO/GSO).",
    ),
    ParamSpec::int(
        "prague_rtt_transition",
        4.0,
        0.0,
        1_000_000.0,
        "rounds",
        "Rounds after slow start before the flow becomes RTT independent (tcp_prague.c DEFAULT_RTT_TRANSITION).",
    ),
    ParamSpec::int(
        "prague_rtt_target",
        25_000.0,
        1.0,
        100_000.0,
        "us",
        "RTT scaling target: below it the flow grows and reduces as a flow at this RTT would (tcp_prague.c RTT_TARGET, 25 ms).",
    ),
    ParamSpec::int(
        "prague_alpha_mode",
        0.0,
        0.0,
        1.0,
        "mode",
        "Slow-start mode: 0 = alpha starts at 0 and the first mark halves the window; 1 = alpha starts at 1 (tcp_prague.c).",
    ),
    ParamSpec::int(
        "prague_cwnd_mode",
        2.0,
        0.0,
        3.0,
        "mode",
        "0 = fractional window; 1 = rate based; 2 = switch to rate based at or below prague_cwnd_transit packets (tcp_prague.c; bit 0 the mode, bit 1 the switch).",
    ),
    ParamSpec::int(
        "prague_cwnd_transit",
        4.0,
        0.0,
        1_000_000.0,
        "x 1500 B",
        "The rate-mode switching point in 1500-byte packets (tcp_prague.c, MTU_SYS units).",
    ),
];

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    name: "prague",
    summary: "TCP Prague (L4S): DCTCP-like scalable response to ECT(1) CE marks with a 24-bit alpha, fractional window, RTT independence below a 25 ms target, paced; needs [tcp] ecn = true, else Reno",
    source: "L4STeam/linux net/ipv4/tcp_prague.c (v0.7); RFC 9331 Appendix A; RFC 9332",
    params: PARAMS,
};

pub const PRAGUE_ALPHA_BITS: u32 = 24;
pub const PRAGUE_MAX_ALPHA: u64 = 1 << PRAGUE_ALPHA_BITS;
pub const CWND_UNIT: u32 = 20;
pub const ONE_CWND: u64 = 1 << CWND_UNIT;
pub const PRAGUE_SHIFT_G: u32 = 4;
const MIN_CWND_RTT: u32 = 2;
/// Minimum rate: 100 kbps, in bytes/s.
pub const MINIMUM_RATE: u64 = 12_500;
const MAX_SCALED_RTT: u64 = 100 * 1000; // us
const MTU_SYS: u64 = 1500;
const RATE_OFFSET: u64 = 4; // 4/128 ~= 3%
const OFFSET_UNIT: u32 = 7;
const HSRTT_SHIFT: u32 = 7;
const RTT2SEC_SHIFT: u32 = 23;
const USEC_PER_SEC: u64 = 1_000_000;

#[derive(Debug, Clone)]
pub struct PragueConfig {
    pub burst_shift: u32,
    pub max_tso_segs: u32,
    pub rtt_transition: u32,
    /// us.
    pub rtt_target: u32,
    pub alpha_mode: u32,
    pub cwnd_mode: u32,
    pub cwnd_transit: u32,
}

impl PragueConfig {
    pub fn from_params(p: &Params) -> Self {
        PragueConfig {
            burst_shift: p.get("prague_burst_shift") as u32,
            max_tso_segs: p.get("prague_max_tso_segs") as u32,
            rtt_transition: p.get("prague_rtt_transition") as u32,
            rtt_target: p.get("prague_rtt_target") as u32,
            alpha_mode: p.get("prague_alpha_mode") as u32,
            cwnd_mode: p.get("prague_cwnd_mode") as u32,
            cwnd_transit: p.get("prague_cwnd_transit") as u32,
        }
    }
}

impl Default for PragueConfig {
    fn default() -> Self {
        Self::from_params(&Params::defaults(PARAMS))
    }
}

#[inline]
fn mul_u64_u64_shr(a: u64, b: u64, shift: u32) -> u64 {
    ((a as u128 * b as u128) >> shift) as u64
}

/// DIV64_U64_ROUND_CLOSEST: (x + d / 2) / d without overflow. In 64 bits when x + d / 2 fits
/// (always, in practice; the same quotient), else in 128 (a library call, several times slower).
#[inline]
fn div_round_closest(x: u64, d: u64) -> u64 {
    match x.checked_add(d >> 1) {
        Some(n) => n / d,
        None => ((x as u128 + (d as u128 >> 1)) / d as u128) as u64,
    }
}

#[inline]
fn div_round_up(x: u64, d: u64) -> u64 {
    x.div_ceil(d)
}

/// Linux `struct prague`.
pub struct Prague {
    cfg: PragueConfig,
    /// ECN was not on at init: Linux's `prague_reno` ops.
    reno: bool,
    /// us.
    cwr_stamp: u64,
    /// us.
    alpha_stamp: u64,
    /// alpha x 2^24 x 16.
    pub upscaled_alpha: u64,
    /// Per non-CE ACKed packet, x 2^20 (before the division by the window).
    pub ai_ack_increase: u64,
    mtu_cache: u32,
    /// srtt (1/8 us) x 128, smoothed over 128 rounds.
    hsrtt_us: u64,
    /// The window x 2^20.
    pub frac_cwnd: u64,
    /// Bytes/s.
    pub rate_bytes: u64,
    loss_rate_bytes: u64,
    loss_cwnd: u32,
    pub max_tso_burst: u32,
    old_delivered: u64,
    old_delivered_ce: u64,
    next_seq: u32,
    pub round: u32,
    pub saw_ce: bool,
    alpha_mode: bool,
    cwnd_mode_transit: bool,
    pub cwnd_mode: u32,
    pub in_loss: bool,
    /// `delivered_ce` at the previous `cong_control`, for `rs->ece_delta`.
    last_delivered_ce: u64,
}

/// The stack's srtt as Linux's `srtt_us` (1/8 us).
#[inline]
fn srtt_us8(s: &SockState) -> u64 {
    s.srtt * 8 / 1000
}

#[inline]
fn mstamp_us(s: &SockState) -> u64 {
    s.now / 1000
}

/// `(USEC_PER_SEC << 3) x mtu / srtt_us` (srtt in 1/8 us; the numerator alone while srtt is
/// 0): bytes per second per packet of window, the first factor of
/// prague_frac_cwnd_to_pacing_rate and of prague_update_pacing_rate.
#[inline]
fn packet_rate(s: &SockState) -> u64 {
    let rate = (USEC_PER_SEC << 3) * mtu(s);
    let srtt = srtt_us8(s);
    if srtt != 0 {
        rate / srtt
    } else {
        rate
    }
}

/// tcp_mss_to_mtu.
#[inline]
fn mtu(s: &SockState) -> u64 {
    (s.mss + HEADER_BYTES) as u64
}

impl Prague {
    pub fn new(cfg: PragueConfig) -> Self {
        Prague {
            cfg,
            reno: false,
            cwr_stamp: 0,
            alpha_stamp: 0,
            upscaled_alpha: 0,
            ai_ack_increase: ONE_CWND,
            mtu_cache: 0,
            hsrtt_us: 0,
            frac_cwnd: 0,
            rate_bytes: 0,
            loss_rate_bytes: 0,
            loss_cwnd: 0,
            max_tso_burst: 1,
            old_delivered: 0,
            old_delivered_ce: 0,
            next_seq: 0,
            round: 0,
            saw_ce: false,
            alpha_mode: false,
            cwnd_mode_transit: false,
            cwnd_mode: 0,
            in_loss: false,
            last_delivered_ce: 0,
        }
    }

    /// Falls back to Reno (ECN off on the connection).
    pub fn is_reno(&self) -> bool {
        self.reno
    }

    /// alpha x 2^24 (what Linux reports as `prague_alpha`).
    pub fn alpha(&self) -> u64 {
        self.upscaled_alpha >> PRAGUE_SHIFT_G
    }

    /// prague_is_rtt_indep.
    pub fn is_rtt_indep(&self, s: &SockState) -> bool {
        !s.in_slow_start() && self.round >= self.cfg.rtt_transition
    }

    fn e2e_rtt_elapsed(&self, s: &SockState) -> bool {
        s.snd_una >= self.next_seq
    }

    /// prague_target_rtt: in 1/8 us, as srtt_us.
    fn target_rtt(&self) -> u64 {
        (self.cfg.rtt_target as u64) << 3
    }

    fn elapsed_since_alpha_update(&self, s: &SockState) -> u64 {
        mstamp_us(s).saturating_sub(self.alpha_stamp)
    }

    fn target_rtt_elapsed(&self, s: &SockState) -> bool {
        (self.target_rtt() >> 3) <= self.elapsed_since_alpha_update(s)
    }

    /// prague_should_update_ewma.
    fn should_update_ewma(&self, s: &SockState) -> bool {
        self.e2e_rtt_elapsed(s) && (!self.is_rtt_indep(s) || self.target_rtt_elapsed(s))
    }

    /// prague_rate_scaled_ai_ack_increase: (rtt / target)^2 x 2^20 below the target, with
    /// `rtt` in 1/8 us.
    pub fn rate_scaled_ai_ack_increase(&self, rtt: u64) -> u64 {
        let target = self.target_rtt();
        if rtt >= target {
            return ONE_CWND;
        }
        let increase = (rtt << CWND_UNIT) * rtt;
        div_round_closest(increase, target * target)
    }

    /// prague_frac_cwnd_to_snd_cwnd.
    fn frac_cwnd_to_snd_cwnd(&self, s: &SockState) -> u32 {
        let c = ((self.frac_cwnd + (ONE_CWND - 1)) >> CWND_UNIT).min(u32::MAX as u64) as u32;
        c.max(MIN_CWND_RTT).min(s.cwnd_clamp)
    }

    fn virtual_rtt(&self, s: &SockState) -> u64 {
        self.target_rtt().max(srtt_us8(s))
    }

    fn half_virtual_rtt_elapsed(&self, s: &SockState) -> bool {
        (self.virtual_rtt(s) >> (3 + 1)) <= self.elapsed_since_alpha_update(s)
    }

    /// prague_pacing_rate_to_frac_cwnd.
    fn pacing_rate_to_frac_cwnd(&self, s: &SockState) -> u64 {
        let hs = self.hsrtt_us >> HSRTT_SHIFT;
        let rtt = if hs != 0 { hs } else { srtt_us8(s) };
        div_round_up(mul_u64_u64_shr(self.rate_bytes, rtt, RTT2SEC_SHIFT - CWND_UNIT), mtu(s))
    }

    /// prague_frac_cwnd_to_pacing_rate.
    fn frac_cwnd_to_pacing_rate(&self, s: &SockState) -> u64 {
        self.frac_cwnd_to_pacing_rate_at(packet_rate(s))
    }

    /// prague_frac_cwnd_to_pacing_rate with its first factor, [`packet_rate`], given.
    #[inline]
    fn frac_cwnd_to_pacing_rate_at(&self, packet_rate: u64) -> u64 {
        mul_u64_u64_shr(packet_rate, self.frac_cwnd, CWND_UNIT).max(MINIMUM_RATE)
    }

    /// prague_ai_ack_increase.
    fn update_ai_ack_increase(&mut self, s: &SockState) {
        let rtt = srtt_us8(s);
        self.ai_ack_increase = if self.round < self.cfg.rtt_transition || rtt == 0 || rtt > (MAX_SCALED_RTT << 3) {
            ONE_CWND
        } else {
            self.rate_scaled_ai_ack_increase(rtt)
        };
    }

    /// prague_update_pacing_rate.
    fn update_pacing_rate(&mut self, s: &mut SockState) {
        self.update_pacing_rate_at(s, packet_rate(s));
    }

    /// prague_update_pacing_rate with [`packet_rate`] given.
    fn update_pacing_rate_at(&mut self, s: &mut SockState, packet_rate: u64) {
        let mut rate;
        if self.is_rtt_indep(s) && self.cwnd_mode == 1 {
            let offset = mul_u64_u64_shr(RATE_OFFSET, self.rate_bytes, OFFSET_UNIT);
            rate = if self.half_virtual_rtt_elapsed(s) { self.rate_bytes - offset } else { self.rate_bytes + offset };
        } else {
            let max_inflight = ((self.frac_cwnd >> CWND_UNIT) as u32).max(s.packets_in_flight()) as u64;
            rate = packet_rate.saturating_mul(max_inflight).max(MINIMUM_RATE);
            self.rate_bytes = rate;
        }
        if s.cwnd < s.ssthresh / 2 {
            rate = rate.saturating_mul(2);
        }
        let burst = rate / mtu(s);
        self.max_tso_burst = ((burst >> self.cfg.burst_shift) as u32).max(1);
        if self.cfg.max_tso_segs > 0 {
            // prague_tso_segs (no effect here: no TSO).
            self.max_tso_burst = self.max_tso_burst.min(self.cfg.max_tso_segs);
        }
        s.pacing_rate = rate;
    }

    /// prague_new_round.
    fn new_round(&mut self, s: &SockState) {
        self.next_seq = s.snd_nxt;
        self.old_delivered_ce = s.delivered_ce;
        self.old_delivered = s.delivered;
        if !s.in_slow_start() {
            self.round = self.round.wrapping_add(1);
            if self.round == 0 {
                self.round = self.cfg.rtt_transition;
            }
        }
        self.update_ai_ack_increase(s);
    }

    /// prague_cwnd_changed.
    fn cwnd_changed(&mut self, s: &SockState) {
        self.update_ai_ack_increase(s);
    }

    /// prague_update_alpha: upscaled_alpha = upscaled_alpha - upscaled_alpha/16 + F x 2^24,
    /// F the round's CE-delivered over delivered packets. (The MSS reduction that follows in
    /// Linux is not modelled, see the module comment.)
    fn update_alpha(&mut self, s: &SockState) {
        if self.saw_ce {
            let alpha = self.upscaled_alpha;
            let mut ecn_segs = s.delivered_ce - self.old_delivered_ce;
            if ecn_segs > 0 {
                let acked_segs = (s.delivered - self.old_delivered) as u32;
                ecn_segs <<= PRAGUE_ALPHA_BITS;
                ecn_segs /= acked_segs.max(1) as u64;
            }
            let alpha = alpha - (alpha >> PRAGUE_SHIFT_G) + ecn_segs;
            self.alpha_stamp = mstamp_us(s);
            self.upscaled_alpha = alpha.min(PRAGUE_MAX_ALPHA << PRAGUE_SHIFT_G);
        }
        self.hsrtt_us = self.hsrtt_us + srtt_us8(s) - (self.hsrtt_us >> HSRTT_SHIFT);
        self.new_round(s);
    }

    /// prague_update_cwnd.
    fn update_cwnd(&mut self, s: &mut SockState, rs: &RateSample, packet_rate: u64) {
        let mut acked = rs.acked_sacked as i64;
        let ece_delta = s.delivered_ce - self.last_delivered_ce;
        self.last_delivered_ce = s.delivered_ce;
        if ece_delta > 0 {
            if !self.saw_ce && !self.alpha_mode {
                self.frac_cwnd = (self.frac_cwnd + 1) >> 1;
            }
            self.saw_ce = true;
            acked -= ece_delta as i64;
        }
        if !(acked <= 0 || self.in_loss || !s.cwnd_limited()) {
            if s.in_slow_start() {
                acked = s.slow_start(acked as u32) as i64;
                self.frac_cwnd = (s.cwnd as u64) << CWND_UNIT;
                if acked == 0 {
                    self.cwnd_changed(s);
                    return;
                }
            }
            let acked = acked as u64;
            if self.is_rtt_indep(s) && self.cwnd_mode == 1 {
                let mtu_used = mtu(s);
                let vrtt = self.virtual_rtt(s);
                let increase = ((acked * MTU_SYS) << RTT2SEC_SHIFT) / vrtt;
                let divisor = mtu_used << RTT2SEC_SHIFT;
                let new_cwnd = ((self.rate_bytes as u128 * vrtt as u128).div_ceil(divisor as u128)) as u64;
                if new_cwnd != 0 {
                    self.rate_bytes += div_round_closest(increase, new_cwnd);
                }
                self.frac_cwnd = (self.frac_cwnd + acked).max(self.pacing_rate_to_frac_cwnd(s));
            } else {
                // increase = acked x ai_ack_increase / frac_cwnd (x 2^20), rounded to nearest.
                let mut increase = acked * self.ai_ack_increase;
                let new_cwnd = self.frac_cwnd;
                if new_cwnd != 0 {
                    // (increase << 20) in 64 bits when it fits (the same quotient).
                    increase = if increase >> (64 - CWND_UNIT) == 0 {
                        div_round_closest(increase << CWND_UNIT, new_cwnd)
                    } else {
                        let shifted = (increase as u128) << CWND_UNIT;
                        ((shifted + (new_cwnd as u128 >> 1)) / new_cwnd as u128) as u64
                    };
                }
                // x MTU_SYS / mtu: the identity at a 1500-byte MTU unless the product wraps.
                if mtu(s) != MTU_SYS || increase > u64::MAX / MTU_SYS {
                    increase = increase.wrapping_mul(MTU_SYS) / mtu(s);
                }
                self.frac_cwnd += acked.max(increase);
                let rate = self.frac_cwnd_to_pacing_rate_at(packet_rate);
                self.rate_bytes = (self.rate_bytes + acked).max(rate);
            }
        }
        // adjust:
        let new_cwnd = self.frac_cwnd_to_snd_cwnd(s);
        if s.cwnd > new_cwnd {
            s.cwnd -= 1;
            s.ssthresh = s.cwnd;
            self.cwnd_changed(s);
        } else if s.cwnd < new_cwnd {
            s.cwnd += 1;
            self.cwnd_changed(s);
        }
    }

    /// prague_enter_loss: halve.
    fn enter_loss(&mut self, s: &SockState) {
        self.loss_cwnd = s.cwnd;
        self.loss_rate_bytes = self.rate_bytes;
        if self.is_rtt_indep(s) && self.cwnd_mode == 1 {
            self.rate_bytes -= self.rate_bytes >> 1;
            self.frac_cwnd = self.pacing_rate_to_frac_cwnd(s);
        } else {
            self.frac_cwnd -= self.frac_cwnd >> 1;
            self.rate_bytes = self.frac_cwnd_to_pacing_rate(s);
        }
        self.in_loss = true;
    }

    /// prague_enter_cwr: frac_cwnd -= frac_cwnd x alpha / 2, rounded to nearest; at most once
    /// per target RTT once RTT independent.
    fn enter_cwr(&mut self, s: &SockState) {
        let now = mstamp_us(s);
        if self.is_rtt_indep(s) && (self.target_rtt() >> 3) > now.saturating_sub(self.cwr_stamp) {
            return;
        }
        self.cwr_stamp = now;
        let alpha = self.upscaled_alpha >> PRAGUE_SHIFT_G;
        if self.is_rtt_indep(s) && self.cwnd_mode == 1 {
            let reduction = mul_u64_u64_shr(self.rate_bytes, alpha, PRAGUE_ALPHA_BITS + 1);
            self.rate_bytes = self.rate_bytes.saturating_sub(reduction).max(MINIMUM_RATE);
            self.frac_cwnd = self.pacing_rate_to_frac_cwnd(s);
        } else {
            let reduction = ((alpha as u128 * self.frac_cwnd as u128 + PRAGUE_MAX_ALPHA as u128) >> (PRAGUE_ALPHA_BITS + 1)) as u64;
            self.frac_cwnd -= reduction;
            self.rate_bytes = self.frac_cwnd_to_pacing_rate(s);
        }
    }

    /// prague_cwnd_undo (the `undo_cwnd` hook; the stack does not call it yet).
    pub fn cwnd_undo(&mut self, s: &SockState) -> u32 {
        if self.reno {
            return s.cwnd.max(s.prior_cwnd);
        }
        self.in_loss = false;
        self.rate_bytes = self.rate_bytes.max(self.loss_rate_bytes);
        self.frac_cwnd = self.pacing_rate_to_frac_cwnd(s);
        self.loss_cwnd.max(s.cwnd)
    }
}

impl CongestionControl for Prague {
    fn name(&self) -> &'static str {
        "prague"
    }

    /// prague_init (or the switch to `prague_reno` without ECN).
    fn init(&mut self, s: &mut SockState) {
        if !s.ecn {
            self.reno = true;
            return;
        }
        self.alpha_stamp = mstamp_us(s);
        self.alpha_mode = self.cfg.alpha_mode & 1 == 1;
        self.upscaled_alpha = if self.alpha_mode { PRAGUE_MAX_ALPHA << PRAGUE_SHIFT_G } else { 0 };
        self.frac_cwnd = (s.cwnd as u64) << CWND_UNIT;
        self.max_tso_burst = 1;
        let srtt = srtt_us8(s);
        self.rate_bytes = if srtt != 0 {
            (packet_rate(s) * s.cwnd.max(s.packets_in_flight()) as u64).max(MINIMUM_RATE)
        } else {
            MINIMUM_RATE
        };
        self.update_pacing_rate(s);
        self.loss_rate_bytes = 0;
        self.round = 0;
        self.saw_ce = s.delivered_ce > 0;
        self.last_delivered_ce = s.delivered_ce;
        self.mtu_cache = mtu(s) as u32;
        self.hsrtt_us = if srtt != 0 { srtt << HSRTT_SHIFT } else { 1 << (HSRTT_SHIFT + 3) };
        self.cwnd_mode_transit = (self.cfg.cwnd_mode & 2) >> 1 == 1;
        self.cwnd_mode = self.cfg.cwnd_mode & 1;
        self.new_round(s);
    }

    /// prague_ssthresh: unchanged (the reduction is `prague_enter_cwr`/`prague_enter_loss`);
    /// `tcp_reno_ssthresh` for the fallback.
    fn ssthresh(&mut self, s: &mut SockState) -> u32 {
        if self.reno {
            return (s.cwnd >> 1).max(2);
        }
        s.ssthresh
    }

    /// Only the `prague_reno` fallback: tcp_reno_cong_avoid.
    fn cong_avoid(&mut self, s: &mut SockState, acked: u32) {
        reno_cong_avoid(s, acked);
    }

    /// prague_state.
    fn set_state(&mut self, s: &mut SockState, new: CaState) {
        if self.reno || new == s.ca_state {
            return;
        }
        match new {
            CaState::Recovery => self.enter_loss(s),
            CaState::Cwr => self.enter_cwr(s),
            CaState::Open => self.in_loss = false,
            _ => {}
        }
    }

    /// prague_cwnd_event: CA_EVENT_LOSS (an RTO) halves.
    fn cwnd_event(&mut self, s: &mut SockState, ev: CaEvent) {
        if !self.reno && ev == CaEvent::Loss {
            self.enter_loss(s);
        }
    }

    fn has_cong_control(&self) -> bool {
        !self.reno
    }

    /// prague_cong_control.
    fn cong_control(&mut self, s: &mut SockState, rs: &RateSample) {
        // srtt and the MTU do not change within one ACK: one division for the three uses.
        let packet_rate = packet_rate(s);
        self.update_cwnd(s, rs, packet_rate);
        if self.should_update_ewma(s) {
            self.update_alpha(s);
        }
        self.update_pacing_rate_at(s, packet_rate);
        if self.cwnd_mode_transit {
            let cwnd_bytes = s.cwnd as u64 * mtu(s);
            let transit = self.cfg.cwnd_transit as u64 * MTU_SYS;
            if self.saw_ce && cwnd_bytes <= transit {
                self.cwnd_mode = 1;
                self.frac_cwnd = self.pacing_rate_to_frac_cwnd(s);
            } else {
                self.cwnd_mode = 0;
                self.rate_bytes = self.frac_cwnd_to_pacing_rate_at(packet_rate);
            }
        }
    }

    fn undo_cwnd(&mut self, s: &mut SockState) -> u32 {
        self.cwnd_undo(s)
    }

    /// `SK_PACING_NEEDED` (set by prague_init). Read when the flow is built, before init knows
    /// whether ECN is on, so the `prague_reno` fallback is paced too (at the stack's rate).
    fn wants_pacing(&self) -> bool {
        true
    }
    /// TCP_CONG_NEEDS_ECN (and NEEDS_ACCECN: see the module comment).
    fn needs_ecn(&self) -> bool {
        !self.reno
    }
    /// TCP_CONG_WANTS_ECT_1.
    fn ecn_codepoint(&self) -> crate::net::Ecn {
        crate::net::Ecn::Ect1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::MS;

    /// DIV64_U64_ROUND_CLOSEST in 64 bits where x + d / 2 fits, in 128 where it does not: the
    /// same quotient as the 128-bit formula everywhere, the overflow edge included.
    #[test]
    fn div_round_closest_is_the_128_bit_quotient_at_the_overflow_edge() {
        let wide = |x: u64, d: u64| ((x as u128 + (d as u128 >> 1)) / d as u128) as u64;
        for d in [1, 2, 3, 7, 1 << 20, (1 << 40) + 1, u64::MAX / 3, u64::MAX - 1, u64::MAX] {
            let edge = u64::MAX - (d >> 1);
            for x in [0, 1, d / 2, d, 12_345_678_901, edge.saturating_sub(1), edge, edge.saturating_add(1), u64::MAX] {
                assert_eq!(div_round_closest(x, d), wide(x, d), "x {x}, d {d}");
            }
        }
        assert_eq!(div_round_closest(5, 2), 3); // halves round up
        assert_eq!(div_round_closest(u64::MAX, u64::MAX), 1);
    }

    /// An ECN connection, MSS 1448 (MTU 1500), cwnd `cwnd`, out of slow start.
    fn sock(cwnd: u32) -> SockState {
        let mut s = SockState::new(1448, 10);
        s.ecn = true;
        s.cwnd = cwnd;
        s.ssthresh = cwnd;
        s
    }

    fn prague(s: &mut SockState) -> Prague {
        let mut p = Prague::new(PragueConfig::default());
        p.init(s);
        p
    }

    /// One round: `delivered` packets, `ce` of them CE-echoed; the round's end is passed.
    fn round(p: &mut Prague, s: &mut SockState, delivered: u64, ce: u64) {
        s.delivered += delivered;
        s.delivered_ce += ce;
        s.snd_una = s.snd_nxt;
        s.snd_nxt += 100;
        p.update_alpha(s);
    }

    #[test]
    fn alpha_is_a_24_bit_ewma_kept_upscaled_by_16() {
        let mut s = sock(100);
        let mut p = prague(&mut s);
        assert_eq!(p.upscaled_alpha, 0, "prague_alpha_mode 0: alpha starts at 0");
        // Before the first mark alpha is not updated, whatever the counts say.
        round(&mut p, &mut s, 10, 5);
        assert_eq!(p.upscaled_alpha, 0);
        p.saw_ce = true;
        // F = 5/10: + (5 << 24) / 10 = 8,388,608; alpha = g F = 1/32 of 2^24 = 524,288.
        round(&mut p, &mut s, 10, 5);
        assert_eq!((p.upscaled_alpha, p.alpha()), (8_388_608, 524_288));
        // F = 1: 8,388,608 - 8,388,608/16 + 2^24 = 24,641,536.
        round(&mut p, &mut s, 10, 10);
        assert_eq!(p.upscaled_alpha, 24_641_536);
        // F = 3/7: + floor(3 x 2^24 / 7) = 7,190,235; - 24,641,536/16 = 1,540,096.
        round(&mut p, &mut s, 7, 3);
        assert_eq!(p.upscaled_alpha, 24_641_536 - 1_540_096 + 7_190_235);
        // No marks: the remainder is kept (DCTCP's x1024 alpha would lose it): 30,291,675 -
        // 1,893,229 (floor of /16) = 28,398,446.
        round(&mut p, &mut s, 10, 0);
        assert_eq!(p.upscaled_alpha, 28_398_446);
        // All marked for long: alpha reaches 1 (2^24) and stays.
        for _ in 0..300 {
            round(&mut p, &mut s, 10, 10);
        }
        assert_eq!(p.alpha(), 1 << 24);
    }

    #[test]
    fn the_first_mark_halves_and_marks_reduce_by_alpha_over_two() {
        let mut s = sock(100);
        let mut p = prague(&mut s);
        assert_eq!(p.frac_cwnd, 100 << 20);
        // The first CE echo (prague_alpha_mode 0): frac_cwnd = (frac_cwnd + 1) >> 1; the
        // marked packet adds nothing.
        s.delivered_ce = 1;
        let rs = RateSample { acked_sacked: 1, ..RateSample::default() };
        let r = packet_rate(&s);
        p.update_cwnd(&mut s, &rs, r);
        assert_eq!((p.frac_cwnd, p.saw_ce), (50 << 20, true));
        assert_eq!((s.cwnd, s.ssthresh), (99, 99), "cwnd steps down one packet per ACK");
        // CWR with alpha = 1/2: frac_cwnd - (2^23 x frac_cwnd + 2^24) >> 25 = 3/4 of it.
        p.upscaled_alpha = (1 << 23) << 4;
        p.frac_cwnd = 100 << 20;
        p.enter_cwr(&s);
        assert_eq!(p.frac_cwnd, 75 << 20);
        // alpha = 3/2^24: 3 x 100 x 2^20 / 2^25 = 9.375 -> 9 (rounded to nearest, not up).
        p.upscaled_alpha = 3 << 4;
        p.frac_cwnd = 100 << 20;
        p.enter_cwr(&s);
        assert_eq!(p.frac_cwnd, (100 << 20) - 9);
        // Loss halves.
        p.frac_cwnd = 101 << 20;
        p.enter_loss(&s);
        assert_eq!((p.frac_cwnd, p.in_loss), ((101 << 20) - (101 << 19), true));
    }

    #[test]
    fn additive_increase_is_one_packet_per_window_before_rtt_independence() {
        let mut s = sock(10);
        let mut p = prague(&mut s);
        s.srtt = 5 * MS;
        p.round = 0;
        p.update_ai_ack_increase(&s);
        assert_eq!(p.ai_ack_increase, 1 << 20, "round < prague_rtt_transition: unscaled");
        // One unmarked packet acked at frac_cwnd 10: 2^20 x 2^20 / (10 x 2^20) = 104,857.6
        // -> 104,858 (rounded to nearest), x 1500 / 1500 (MTU = MSS 1448 + 52).
        let rs = RateSample { acked_sacked: 1, ..RateSample::default() };
        let r = packet_rate(&s);
        p.update_cwnd(&mut s, &rs, r);
        assert_eq!(p.frac_cwnd, (10 << 20) + 104_858);
        assert_eq!(s.cwnd, 11, "ceil(frac_cwnd)");
    }

    #[test]
    fn rtt_independence_scales_the_increase_by_rtt_over_target_squared() {
        let mut s = sock(10);
        let mut p = prague(&mut s);
        p.round = 4;
        // Target 25 ms = 200,000 in 1/8 us. 5 ms: (40,000 / 200,000)^2 x 2^20 = 41,943.04.
        // 10 ms: 0.16 x 2^20 = 167,772.16; 12.5 ms: 1/4; at and above the target: 2^20.
        for (rtt_us, want) in [(5_000, 41_943), (10_000, 167_772), (12_500, 262_144), (25_000, 1 << 20), (50_000, 1 << 20)] {
            let rtt_ns = rtt_us * 1000;
            s.srtt = rtt_ns;
            p.update_ai_ack_increase(&s);
            assert_eq!(p.ai_ack_increase, want, "srtt {rtt_ns} ns");
        }
        // Over 100 ms (MAX_SCALED_RTT) and before the transition: unscaled.
        s.srtt = 101 * MS;
        p.update_ai_ack_increase(&s);
        assert_eq!(p.ai_ack_increase, 1 << 20);
        // Per-RTT rate growth: 5 ms flow: 0.04 packets per 5 ms RTT = 1/625 packet/ms^2 ...
        // the same as a 25 ms flow's 1 packet per 25 ms RTT: 1/625.
        let g5 = 41_943.04 / (1u64 << 20) as f64 / (5.0 * 5.0);
        let g25 = 1.0 / (25.0 * 25.0);
        assert!((g5 - g25).abs() < 1e-9);
    }

    #[test]
    fn rtt_independent_flows_reduce_and_update_alpha_at_most_once_per_target_rtt() {
        let mut s = sock(100);
        let mut p = prague(&mut s);
        p.round = 4;
        p.upscaled_alpha = (1 << 23) << 4;
        s.now = 100 * MS;
        p.enter_cwr(&s);
        assert_eq!(p.frac_cwnd, 75 << 20);
        s.now = 124 * MS;
        p.enter_cwr(&s);
        assert_eq!(p.frac_cwnd, 75 << 20, "24 ms after the last reduction: none");
        s.now = 125 * MS;
        p.enter_cwr(&s);
        assert_eq!(p.frac_cwnd, (75 << 20) - ((75 << 20) >> 2), "25 ms after: 1/4 off");
        // The EWMA: the round's end is passed, but 25 ms have not elapsed since the update.
        p.alpha_stamp = 110_000;
        s.snd_una = s.snd_nxt;
        assert!(!p.should_update_ewma(&s));
        s.now = 135 * MS;
        assert!(p.should_update_ewma(&s));
        // Not yet RTT independent (round < 4): every round.
        p.round = 3;
        s.now = 111 * MS;
        assert!(p.should_update_ewma(&s));
    }

    #[test]
    fn pacing_is_mtu_times_window_over_srtt_and_ect1_is_sent() {
        let mut s = sock(100);
        let mut p = prague(&mut s);
        assert!(p.wants_pacing() && p.needs_ecn() && p.ecn_codepoint() == crate::net::Ecn::Ect1);
        s.srtt = 20 * MS;
        p.frac_cwnd = 100 << 20;
        p.update_pacing_rate(&mut s);
        // 8e6 x 1500 / 160,000 = 75,000 B/s per packet, x 100.
        assert_eq!(s.pacing_rate, 7_500_000);
        s.ssthresh = 202;
        p.update_pacing_rate(&mut s);
        assert_eq!(s.pacing_rate, 15_000_000, "doubled while cwnd < ssthresh / 2");
    }

    /// One ACK of one packet through `prague_cong_control`, with `in_flight` packets left in
    /// flight and `cwnd_limited` as the stack's `tcp_is_cwnd_limited` flag.
    fn ack(p: &mut Prague, s: &mut SockState, in_flight: u32, cwnd_limited: bool) {
        s.packets_out = in_flight;
        s.is_cwnd_limited = cwnd_limited;
        let rs = RateSample { acked_sacked: 1, ..RateSample::default() };
        p.cong_control(s, &rs);
    }

    /// The state the 40 Mbps / 1000-packet PIE run (5 ms base RTT, seed 1) reaches at its RTO,
    /// 1.229 s: the RTO came in Recovery, so `tcp_enter_loss` neither recomputes ssthresh
    /// (540, from the step-wise decrements) nor sends `CA_EVENT_LOSS`; cwnd = in flight + 1 = 1.
    /// frac_cwnd is the Recovery's halved 509.75, srtt 305.193 ms (the 1000-packet queue),
    /// hsrtt 4.46 ms (its 128-round average, from ~0 at init: ccsim has no handshake), marks
    /// seen, round 0 (slow start until the loss).
    fn after_the_rto() -> (Prague, SockState) {
        let mut s = sock(10);
        s.ssthresh = u32::MAX;
        let mut p = prague(&mut s);
        s.cwnd = 1;
        s.ssthresh = 540;
        s.srtt = 305_193 * 1000;
        s.snd_una = 0;
        s.snd_nxt = 1000;
        p.next_seq = 1000; // the round ends far later: no alpha/hsrtt update on these ACKs
        p.hsrtt_us = 35_680 << HSRTT_SHIFT; // 4460 us in 1/8 us
        p.frac_cwnd = 509 * ONE_CWND + 3 * ONE_CWND / 4;
        p.saw_ce = true;
        p.in_loss = true;
        (p, s)
    }

    #[test]
    fn after_an_rto_the_mode_switch_collapses_the_window_through_srtt_over_hsrtt() {
        // prague_update_cwnd, prague_update_pacing_rate and the cwnd_mode_transit switch of
        // prague_cong_control, as the kernel runs them: cwnd <= 4 x 1500 bytes with saw_ce puts
        // the flow in rate mode, where frac_cwnd = rate_bytes x hsrtt / MTU
        // (prague_pacing_rate_to_frac_cwnd), while rate_bytes = MTU x frac_cwnd / srtt
        // (prague_update_pacing_rate, not RTT-independent in slow start): each ACK scales the
        // window by hsrtt / srtt = 1/68.
        let (mut p, mut s) = after_the_rto();
        // 8e6 x 1500 / 2,441,544 (srtt in 1/8 us) = 4914 B/s per packet.
        ack(&mut p, &mut s, 0, true);
        assert_eq!((s.cwnd, p.cwnd_mode, p.rate_bytes), (2, 1, 4914 * 509));
        // ceil((2,501,226 x 35,680 >> 3) / 1500): 7.09 packets.
        assert_eq!(p.frac_cwnd, 7_436_979);
        assert_eq!(s.pacing_rate, 2 * 2_501_226, "doubled: cwnd < ssthresh / 2");
        ack(&mut p, &mut s, 1, true);
        assert_eq!((s.cwnd, p.rate_bytes, p.frac_cwnd), (3, 4914 * 7, 102_277));
        // ceil(0.098) = 1 < MIN_CWND_RTT: cwnd steps down and ssthresh follows it; out of slow
        // start, max(frac_cwnd >> 20, in flight) = 0 packets: MINIMUM_RATE.
        ack(&mut p, &mut s, 0, true);
        assert_eq!((s.cwnd, s.ssthresh, p.rate_bytes, s.pacing_rate), (2, 2, MINIMUM_RATE, MINIMUM_RATE));
        assert_eq!(p.frac_cwnd, 37_167, "ceil((12,500 x 35,680 >> 3) / 1500): 0.035 packets");
        // In Loss nothing grows (in_loss), whatever the cwnd-limited flag says.
        for _ in 0..20 {
            ack(&mut p, &mut s, 0, true);
        }
        assert_eq!((s.cwnd, p.rate_bytes, p.frac_cwnd), (2, MINIMUM_RATE, 37_167));
    }

    #[test]
    fn at_the_minimum_rate_only_a_cwnd_limited_ack_grows_it() {
        // After the Loss episode (Open, in_loss cleared) and with srtt back at 5 ms (Linux's
        // TSecr sample): one 1500-byte packet every 120 ms leaves the ACK with nothing in flight
        // and cwnd (2) never full, so tcp_is_cwnd_limited is false and prague_update_cwnd skips
        // all growth; the pacing rate stays max(0 packets x MTU / srtt, MINIMUM_RATE).
        let (mut p, mut s) = after_the_rto();
        for (infl, lim) in [(0, true), (1, true), (0, true)] {
            ack(&mut p, &mut s, infl, lim);
        }
        p.in_loss = false;
        s.srtt = 5 * MS; // 40,000 in 1/8 us: 300,000 B/s per packet
        for _ in 0..50 {
            ack(&mut p, &mut s, 0, false);
        }
        assert_eq!((s.cwnd, p.rate_bytes, p.frac_cwnd, s.pacing_rate), (2, MINIMUM_RATE, 37_167, MINIMUM_RATE));
        // RTT-independent (4 rounds out of slow start) it is rate mode proper: the pacing rate
        // is rate_bytes +/- 3 % (4/128: 390 B/s) and rate_bytes grows only when cwnd-limited.
        p.round = 4;
        for _ in 0..50 {
            ack(&mut p, &mut s, 0, false);
        }
        assert_eq!(p.rate_bytes, MINIMUM_RATE);
        assert!(s.pacing_rate == MINIMUM_RATE + 390 || s.pacing_rate == MINIMUM_RATE - 390);
        // One cwnd-limited ACK before RTT independence: the 1/W increase over a 0.035-packet
        // window, round(2^40 / 37,167) = 29,583,007 (28.2 packets), then the rate is MTU x 28 /
        // srtt and the switch keeps 23.8 packets of it (hsrtt 4.46 ms against srtt 5 ms).
        p.round = 0;
        ack(&mut p, &mut s, 0, true);
        assert_eq!((s.cwnd, p.rate_bytes), (3, 300_000 * 28));
        assert_eq!(p.frac_cwnd, 24_976_000);
        // From there cwnd climbs a packet per ACK and the flow leaves rate mode (cwnd > 4).
        for _ in 0..3 {
            ack(&mut p, &mut s, 1, false);
        }
        assert_eq!((s.cwnd, p.cwnd_mode), (6, 0));
        assert!(s.pacing_rate > 5_000_000, "{}", s.pacing_rate);
    }

    #[test]
    fn without_ecn_it_is_reno() {
        let mut s = sock(100);
        s.ecn = false;
        let mut p = prague(&mut s);
        assert!(p.is_reno() && !p.needs_ecn() && !p.has_cong_control());
        assert_eq!(p.ssthresh(&mut s), 50);
    }
}
