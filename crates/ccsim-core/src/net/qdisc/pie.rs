//! PIE (RFC 8033) as Linux implements it: `net/sched/sch_pie.c` (`pie_drop_early`,
//! `pie_process_dequeue`, `pie_calculate_probability`) with `include/net/pie.h`.
//!
//! The arithmetic is Linux's: the drop probability is a u64 scaled to `MAX_PROB` = 2^56 - 1,
//! times are psched ticks (ns >> 6), alpha and beta are integers in 1/16 (`tc pie alpha 2
//! beta 20` = 0.125 and 1.25), scaled by `MAX_PROB / PSCHED_TICKS_PER_SEC` and auto-tuned by
//! the probability's range (RFC 8033 sec. 4.2: halved below 10%, then quartered per decade
//! down to 0.0001%); an update adds at most 2% once the probability is at 10% or more, adds 2%
//! more when the delay exceeds 250 ms, and decays the probability by 1/64 when the delay was 0
//! for two updates; the measurement cycle restarts (`pie_vars_init`) when the delay stayed
//! below target/2 for two updates and the probability is 0.
//!
//! At enqueue (`pie_qdisc_enqueue`): over `limit` packets the arrival is dropped (Overflow);
//! else `pie_drop_early` decides (no early drop during the burst allowance, while the delay
//! is below target/2 and the probability below 20%, or with fewer than 2 MTU queued; then the
//! de-randomisation accumulator `accu_prob`, RFC 8033 sec. 5.4: never below 0.85, always at
//! 8.5, else a random draw); a packet chosen is marked CE instead of dropped when ECN is on, the packet is
//! ECN-capable and the probability is at most 10% (`prob <= MAX_PROB / 10`, RFC 8033 sec.
//! 5.1). As in Linux, a mark does not reset `accu_prob` (a drop or a successful draw does), so
//! once the accumulator is at 8.5 every ECN-capable arrival is marked until a drop, or until
//! the probability is 0.
//! At dequeue (`pie_process_dequeue`): the queue delay is the departing packet's sojourn (0 if
//! the queue is now empty) when `dq_rate_estimator` is off (the default); with it on, the
//! delay is the backlog over the drain rate Linux measures over 16 KB cycles (Little's law).
//! The burst allowance (150 ms, `pie_vars_init`) shrinks by the time between dequeues.
//!
//! The update timer: Linux runs `pie_calculate_probability` from a timer every `tupdate`
//! (jiffies: `tupdate` is rounded up to whole ms, HZ = 1000 assumed), the first one HZ/2 =
//! 500 ms after the discipline is created (`pie_init`). ccsim has no timer events for
//! disciplines: each enqueue and dequeue first runs every update whose time has come (at or
//! before `now`), in order, each with the state as it was at that time. Between two calls the
//! state an update reads (the delay of the last dequeue, the backlog, the drain rate) does not
//! change, so this is exactly a timer firing at each boundary; updates at the same instant as
//! a packet event run before it. The discipline is taken to be created at time 0. Updates due
//! after the last packet event of a run are not run (nothing observable depends on them).

use super::registry::{ms_param_ns, QdiscEnv, QdiscInfo};
use super::{DropCause, PacketQueue, Qdisc, Queued};
use crate::cc::{ParamSpec, Params};
use crate::net::Ecn;
use crate::rng::Rng;
use crate::time::{Time, MS};
use rand::RngCore as _;

pub const PARAMS: &[ParamSpec] = &[
    ParamSpec::num("target", 15.0, 0.001, 60_000.0, "ms", "Target queue delay (RFC 8033 QDELAY_REF; pie_params_init)."),
    ParamSpec::num("tupdate", 15.0, 1.0, 60_000.0, "ms", "Probability update period, rounded up to whole ms as Linux's jiffies (RFC 8033 T_UPDATE; pie_params_init)."),
    ParamSpec::int("limit", 1000.0, 1.0, 1e9, "pkts", "The discipline's own queue limit (pie_params_init)."),
    ParamSpec::num("alpha", 0.125, 0.0, 2.0, "Hz", "Integral gain, a multiple of 1/16 (tc pie alpha = 16 x this; RFC 8033 sec. 4.2)."),
    ParamSpec::num("beta", 1.25, 0.0, 2.0, "Hz", "Proportional gain, a multiple of 1/16 (tc pie beta = 16 x this; RFC 8033 sec. 4.2)."),
    ParamSpec::flag("bytemode", false, "Scale the drop probability by packet size over the MTU (tc pie bytemode)."),
    ParamSpec::flag("dq_rate_estimator", false, "Queue delay from the measured drain rate (Little's law) instead of packet timestamps (tc pie dq_rate_estimator)."),
];

pub const INFO: QdiscInfo = QdiscInfo {
    name: "pie",
    summary: "Proportional Integral controller Enhanced: a drop probability steered every tupdate by the queue delay, applied at enqueue",
    source: "RFC 8033; Linux net/sched/sch_pie.c, include/net/pie.h",
    params: PARAMS,
    can_mark: true,
};

/// pie.h `MAX_PROB`: probability 1 (2^56 - 1, so that `accu_prob` cannot overflow).
pub const MAX_PROB: u64 = u64::MAX >> 8;
/// psched ticks are 2^6 ns (`PSCHED_SHIFT`).
const PSCHED_SHIFT: u32 = 6;
/// `PSCHED_TICKS_PER_SEC`.
const PSCHED_TICKS_PER_SEC: u64 = 1_000_000_000 >> PSCHED_SHIFT;
/// pie.h `QUEUE_THRESHOLD`: bytes of backlog for a drain-rate measurement cycle.
const QUEUE_THRESHOLD: u64 = 16384;
/// pie.h `DQCOUNT_INVALID` (-1 in a u64).
const DQCOUNT_INVALID: u64 = u64::MAX;
/// pie.h `DTIME_INVALID`.
const DTIME_INVALID: u64 = u64::MAX;
/// pie.h `PIE_SCALE`.
const PIE_SCALE: u32 = 8;
/// Burst allowance, 150 ms (`pie_vars_init`; RFC 8033 sec. 4.4 MAX_BURST).
const MAX_BURST: u64 = (150 * MS) >> PSCHED_SHIFT;
/// The first update, HZ/2 after creation (`pie_init`: `mod_timer(.., jiffies + HZ / 2)`).
const FIRST_UPDATE: Time = 500 * MS;

/// alpha and beta are multiples of 1/16.
pub fn check(p: &Params) -> Result<(), String> {
    for name in ["alpha", "beta"] {
        let v = p.get(name);
        if (v * 16.0).fract() != 0.0 {
            return Err(format!("{name} ({v}) must be a multiple of 1/16 = 0.0625 (Linux takes {name} x 16 as an integer)"));
        }
    }
    Ok(())
}

/// psched time (`PSCHED_NS2TICKS`).
#[inline]
fn ticks(ns: Time) -> u64 {
    ns >> PSCHED_SHIFT
}

/// Linux `struct pie_params` (times in psched ticks; alpha and beta in 1/16).
#[derive(Debug, Clone, Copy)]
pub struct PieParams {
    pub target: u64,
    /// Update period, ns (whole jiffies).
    pub tupdate: Time,
    pub limit: usize,
    pub alpha: u32,
    pub beta: u32,
    pub ecn: bool,
    pub bytemode: bool,
    pub dq_rate_estimator: bool,
    /// `psched_mtu(dev)`.
    pub mtu: u32,
}

impl PieParams {
    pub fn from_params(p: &Params, env: &QdiscEnv) -> Self {
        // usecs_to_jiffies with HZ = 1000 rounds up to a whole ms.
        let tupdate_us = ms_param_ns(p, "tupdate") / 1000;
        PieParams {
            target: ticks(ms_param_ns(p, "target")),
            tupdate: tupdate_us.div_ceil(1000) * MS,
            limit: p.get("limit") as usize,
            alpha: (p.get("alpha") * 16.0).round() as u32,
            beta: (p.get("beta") * 16.0).round() as u32,
            ecn: env.ecn,
            bytemode: p.flag("bytemode"),
            dq_rate_estimator: p.flag("dq_rate_estimator"),
            mtu: env.mtu_bytes,
        }
    }
}

/// Linux `struct pie_vars`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PieVars {
    pub qdelay: u64,
    pub qdelay_old: u64,
    pub burst_time: u64,
    pub dq_tstamp: u64,
    pub prob: u64,
    pub accu_prob: u64,
    pub dq_count: u64,
    pub avg_dq_rate: u32,
    pub backlog_old: u32,
}

impl PieVars {
    /// `pie_vars_init` (on zeroed memory, as `qdisc_priv` is).
    pub fn init(&mut self) {
        self.burst_time = MAX_BURST;
        self.dq_tstamp = DTIME_INVALID;
        self.accu_prob = 0;
        self.dq_count = DQCOUNT_INVALID;
        self.avg_dq_rate = 0;
    }

    /// `pie_drop_early`: whether an arrival of `packet_size` bytes to `backlog` bytes is chosen
    /// for an early drop (or mark); `rnd` gives the 64-bit random draw if one is needed.
    pub fn drop_early(&mut self, params: &PieParams, backlog: u64, packet_size: u32, rnd: impl FnOnce() -> u64) -> bool {
        // Burst allowance left.
        if self.burst_time > 0 {
            return false;
        }
        // Delay below half the target and the probability low already.
        if self.qdelay < params.target / 2 && self.prob < MAX_PROB / 5 {
            return false;
        }
        // Fewer than 2 MTU-sized packets queued (like RED's min_th).
        if backlog < 2 * params.mtu as u64 {
            return false;
        }
        let local_prob = if params.bytemode && packet_size <= params.mtu {
            packet_size as u64 * (self.prob / params.mtu as u64)
        } else {
            self.prob
        };
        if local_prob == 0 {
            self.accu_prob = 0;
        } else {
            self.accu_prob += local_prob;
        }
        // De-randomisation (RFC 8033 sec. 5.4): never below 0.85, always at 8.5.
        if self.accu_prob < (MAX_PROB / 100) * 85 {
            return false;
        }
        if self.accu_prob >= (MAX_PROB / 2) * 17 {
            return true;
        }
        if (rnd() >> 8) < local_prob {
            self.accu_prob = 0;
            return true;
        }
        false
    }

    /// `pie_process_dequeue`: a packet that arrived at `arrived` leaves at `now`, `backlog`
    /// bytes left behind it.
    pub fn process_dequeue(&mut self, params: &PieParams, bytes: u32, arrived: Time, backlog: u64, now: Time) {
        let now = ticks(now);
        let mut dtime: u32 = 0;
        if !params.dq_rate_estimator {
            self.qdelay = now - ticks(arrived);
            if self.dq_tstamp != DTIME_INVALID {
                dtime = (now - self.dq_tstamp) as u32;
            }
            self.dq_tstamp = now;
            if backlog == 0 {
                self.qdelay = 0;
            }
            if dtime == 0 {
                return;
            }
        } else {
            // A measurement cycle starts once 16 KB are queued.
            if backlog >= QUEUE_THRESHOLD && self.dq_count == DQCOUNT_INVALID {
                self.dq_tstamp = now;
                self.dq_count = 0;
            }
            if self.dq_count == DQCOUNT_INVALID {
                return;
            }
            self.dq_count += bytes as u64;
            if self.dq_count < QUEUE_THRESHOLD {
                return;
            }
            let count = (self.dq_count << PIE_SCALE) as u32;
            dtime = now.wrapping_sub(self.dq_tstamp) as u32;
            if dtime == 0 {
                return;
            }
            let count = count / dtime;
            self.avg_dq_rate = if self.avg_dq_rate == 0 { count } else { (self.avg_dq_rate - (self.avg_dq_rate >> 3)) + (count >> 3) };
            // Below the threshold keep the last rate; else start the next cycle.
            if backlog < QUEUE_THRESHOLD {
                self.dq_count = DQCOUNT_INVALID;
            } else {
                self.dq_count = 0;
                self.dq_tstamp = now;
            }
        }
        // burst_allowance_reduction
        if self.burst_time > 0 {
            self.burst_time = self.burst_time.saturating_sub(dtime as u64);
        }
    }

    /// `pie_calculate_probability` with `backlog` bytes queued.
    pub fn calculate_probability(&mut self, params: &PieParams, backlog: u64) {
        let backlog = backlog as u32;
        let (qdelay, qdelay_old);
        if params.dq_rate_estimator {
            qdelay_old = self.qdelay;
            self.qdelay_old = self.qdelay;
            qdelay = (backlog << PIE_SCALE).checked_div(self.avg_dq_rate).map_or(0, |d| d as u64);
        } else {
            qdelay = self.qdelay;
            qdelay_old = self.qdelay_old;
        }
        // A zero delay with a non-empty queue: too little to measure, no decay this round.
        let mut update_prob = !(qdelay == 0 && backlog != 0);

        // alpha and beta in 1/16, scaled to the probability per psched tick.
        let mut alpha = (params.alpha as u64 * (MAX_PROB / PSCHED_TICKS_PER_SEC)) >> 4;
        let mut beta = (params.beta as u64 * (MAX_PROB / PSCHED_TICKS_PER_SEC)) >> 4;
        // Auto-tuning by the probability's range (RFC 8033 sec. 4.2).
        if self.prob < MAX_PROB / 10 {
            alpha >>= 1;
            beta >>= 1;
            let mut power: u64 = 100;
            while self.prob < MAX_PROB / power && power <= 1_000_000 {
                alpha >>= 2;
                beta >>= 2;
                power *= 10;
            }
        }
        // delta = alpha (qdelay - target) + beta (qdelay - qdelay_old), in wrapping u64 as Linux.
        let mut delta = (alpha.wrapping_mul(qdelay.wrapping_sub(params.target)) as i64)
            .wrapping_add(beta.wrapping_mul(qdelay.wrapping_sub(qdelay_old)) as i64);
        let oldprob = self.prob;
        // Increase by at most 2% per update once at 10%.
        if delta > (MAX_PROB / (100 / 2)) as i64 && self.prob >= MAX_PROB / 10 {
            delta = ((MAX_PROB / 100) * 2) as i64;
        }
        // Non-linear drop: 2% more per update above 250 ms.
        if qdelay > ticks(250 * MS) {
            delta += (MAX_PROB / (100 / 2)) as i64;
        }
        self.prob = self.prob.wrapping_add(delta as u64);
        if delta > 0 {
            if self.prob < oldprob {
                self.prob = MAX_PROB;
                update_prob = false;
            }
        } else if self.prob > oldprob {
            self.prob = 0;
        }
        // Delay 0 for two updates: decay to 63/64.
        if qdelay == 0 && qdelay_old == 0 && update_prob {
            self.prob -= self.prob / 64;
        }
        self.qdelay = qdelay;
        self.backlog_old = backlog;
        // Restart the measurement cycle after two low-delay updates with no probability.
        if self.qdelay < params.target / 2 && self.qdelay_old < params.target / 2 && self.prob == 0 && (!params.dq_rate_estimator || self.avg_dq_rate > 0) {
            self.init();
        }
        if !params.dq_rate_estimator {
            self.qdelay_old = qdelay;
        }
    }
}

pub struct Pie {
    q: PacketQueue,
    pub params: PieParams,
    pub vars: PieVars,
    /// Time of the next update (the timer's expiry).
    next_update: Time,
    rng: Rng,
    marks: u64,
}

impl Pie {
    pub fn new(params: PieParams, seed: u64) -> Self {
        let mut vars = PieVars::default();
        vars.init();
        Pie { q: PacketQueue::default(), params, vars, next_update: FIRST_UPDATE, rng: crate::rng::derive(seed, 0), marks: 0 }
    }

    pub fn from_params(p: &Params, env: &QdiscEnv) -> Self {
        Pie::new(PieParams::from_params(p, env), env.seed)
    }

    /// Run the updates due at or before `now` (`pie_timer`), each with the state of its time.
    fn catch_up(&mut self, now: Time) {
        while self.next_update <= now {
            self.vars.calculate_probability(&self.params, self.q.bytes());
            self.next_update += self.params.tupdate;
        }
    }
}

impl Qdisc for Pie {
    /// `pie_qdisc_enqueue`.
    fn enqueue(&mut self, mut p: Queued, now: Time, _dropped: &mut Vec<(Queued, DropCause)>) -> Result<(), (Queued, DropCause)> {
        self.catch_up(now);
        if self.q.len() >= self.params.limit {
            self.vars.accu_prob = 0;
            return Err((p, DropCause::Overflow));
        }
        let rng = &mut self.rng;
        if self.vars.drop_early(&self.params, self.q.bytes(), p.r.bytes(), || rng.next_u64()) {
            // Mark instead if ECN-capable and the probability is at most 10%.
            if self.params.ecn && self.vars.prob <= MAX_PROB / 10 && p.r.ecn().capable() {
                p.r.set_ecn(Ecn::Ce);
                self.marks += 1;
            } else {
                self.vars.accu_prob = 0;
                return Err((p, DropCause::Aqm));
            }
        }
        self.q.push(p);
        Ok(())
    }
    /// `pie_qdisc_dequeue`.
    fn dequeue(&mut self, now: Time, _dropped: &mut Vec<(Queued, DropCause)>) -> Option<Queued> {
        self.catch_up(now);
        let p = self.q.pop()?;
        self.vars.process_dequeue(&self.params, p.r.bytes(), p.arrived, self.q.bytes(), now);
        Some(p)
    }
    crate::packet_queue_storage!(q);
    fn marks(&self) -> u64 {
        self.marks
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::Routed;

    fn env(ecn: bool) -> QdiscEnv {
        QdiscEnv { ecn, mtu_bytes: 1514, rate_bps: 10_000_000, seed: 5 }
    }

    fn params(ecn: bool) -> PieParams {
        PieParams::from_params(&Params::defaults(PARAMS), &env(ecn))
    }

    fn pkt(slot: u32, ecn: Ecn, arrived: Time) -> Queued {
        Queued { r: Routed::from_parts(0, 1000, 0, false, ecn, slot), arrived }
    }

    #[test]
    fn pie_defaults_are_linux_s() {
        let p = params(false);
        // 15 ms = 234375 psched ticks of 64 ns; tc alpha 2, beta 20 (1/16).
        assert_eq!((p.target, p.tupdate, p.limit, p.alpha, p.beta), (234_375, 15 * MS, 1000, 2, 20));
        let mut v = PieVars::default();
        v.init();
        assert_eq!((v.burst_time, v.dq_tstamp, v.dq_count), (2_343_750, DTIME_INVALID, DQCOUNT_INVALID));
        assert_eq!(MAX_PROB, 72_057_594_037_927_935);
        // tupdate is whole jiffies: 15.2 ms -> 16 ms.
        let mut q = Params::defaults(PARAMS);
        q.set("tupdate", 15.2);
        assert_eq!(PieParams::from_params(&q, &env(false)).tupdate, 16 * MS);
        // alpha and beta must be multiples of 1/16.
        q.set("alpha", 0.1);
        assert_eq!(check(&q), Err("alpha (0.1) must be a multiple of 1/16 = 0.0625 (Linux takes alpha x 16 as an integer)".to_string()));
        q.set("alpha", 0.1875);
        assert_eq!(check(&q), Ok(()));
    }

    /// One update with delay `ms` (set as the last dequeue would) and `backlog` bytes.
    fn update(v: &mut PieVars, p: &PieParams, ms: u64, backlog: u64) -> u64 {
        v.qdelay = ticks(ms * MS);
        v.calculate_probability(p, backlog);
        v.prob
    }

    #[test]
    fn pie_probability_updates_follow_linux_arithmetic() {
        // Each value worked out with sch_pie.c's integer arithmetic (MAX_PROB = 2^56 - 1,
        // target 234375 ticks, alpha = 2 x (MAX_PROB / 15625000) >> 4 = 576460752 and
        // beta = 5764607522 before auto-tuning; see pie_auto_tuning_scales_the_gains).
        let p = params(false);
        let mut v = PieVars::default();
        v.init();
        let seq: Vec<u64> = [(300, 3000), (300, 3000), (300, 3000), (300, 3000), (300, 3000), (240, 3000), (180, 3000), (120, 3000), (60, 3000), (20, 3000)]
            .iter()
            .map(|&(ms, b)| update(&mut v, &p, ms, b))
            .collect();
        assert_eq!(
            seq,
            vec![
                // prob 0: gains >> 11; delta = 281474 x (4687500 - 234375) + 2814749 x 4687500,
                // plus 2% for a delay above 250 ms.
                1_455_599_455_602_308,
                // 2.0%: gains >> 1 (1% to 10%): 288230376 x 4453125 + 2% (250 ms rule).
                4_180_277_229_485_866,
                6_904_955_003_369_424,
                9_629_632_777_252_982,
                // 13.4% >= 10%: full gains, delta capped at 2% (the +2% above 250 ms on top).
                12_511_936_538_770_098,
                // Falling delay: beta's term is negative.
                9_134_236_818_145_098,
                5_216_105_142_520_098,
                2_986_823_327_207_598,
                487_325_534_395_098,
                42_595_071_426_348,
            ]
        );
        // Delay 0 with an empty queue: the drop to 0 ends in the floor (underflow check).
        assert_eq!(update(&mut v, &p, 0, 0), 0);
        assert_eq!(v.burst_time, MAX_BURST); // unchanged so far: 0 was the first low update.
        v.burst_time = 0;
        // Two low-delay updates with probability 0: the measurement cycle restarts
        // (pie_vars_init: the burst allowance is back).
        assert_eq!(update(&mut v, &p, 0, 0), 0);
        assert_eq!((v.burst_time, v.dq_tstamp), (MAX_BURST, DTIME_INVALID));
    }

    #[test]
    fn pie_decays_the_probability_when_the_delay_stays_zero() {
        let p = params(false);
        // 50%, delay 0 now and at the last update: delta = -576460752 x 234375, then the
        // probability loses 1/64 (sch_pie.c: prob -= prob / 64).
        let mut v = PieVars { prob: MAX_PROB / 2, ..PieVars::default() };
        assert_eq!(update(&mut v, &p, 0, 0), 35_332_850_139_116_874);
        // No decay when the queue is not empty (the delay was too small to measure).
        let mut v = PieVars { prob: MAX_PROB / 2, ..PieVars::default() };
        assert_eq!(update(&mut v, &p, 0, 1000), 35_893_689_030_213_967);
        assert_eq!(MAX_PROB / 2 - 576_460_752 * 234_375, 35_893_689_030_213_967);
    }

    #[test]
    fn pie_auto_tuning_scales_the_gains_by_the_probability_range() {
        // The delta of one update from delay 0 to 15 ms + 1 tick over the old delay 15 ms:
        // alpha x 1 + beta x 1 = alpha + beta, with the gains of the probability's range.
        let p = params(false);
        let gains = |prob: u64| {
            let mut v = PieVars { prob, qdelay_old: p.target, ..PieVars::default() };
            v.qdelay = p.target + 1;
            v.calculate_probability(&p, 3000);
            v.prob - prob
        };
        let full = 576_460_752 + 5_764_607_522;
        assert_eq!(gains(MAX_PROB / 10), full); // >= 10%: unscaled
        assert_eq!(gains(MAX_PROB / 10 - 1), 288_230_376 + 2_882_303_761); // [1%, 10%): / 2
        assert_eq!(gains(MAX_PROB / 100), 288_230_376 + 2_882_303_761);
        assert_eq!(gains(MAX_PROB / 100 - 1), 72_057_594 + 720_575_940); // [0.1%, 1%): / 8
        assert_eq!(gains(MAX_PROB / 1000 - 1), 18_014_398 + 180_143_985); // / 32
        assert_eq!(gains(MAX_PROB / 10_000 - 1), 4_503_599 + 45_035_996); // / 128
        assert_eq!(gains(MAX_PROB / 100_000 - 1), 1_125_899 + 11_258_999); // / 512
        assert_eq!(gains(MAX_PROB / 1_000_000 - 1), 281_474 + 2_814_749); // / 2048
        assert_eq!(gains(0), 281_474 + 2_814_749);
    }

    #[test]
    fn pie_burst_allowance_holds_off_early_drops_for_150_ms_of_dequeues() {
        let mut q = Pie::from_params(&Params::defaults(PARAMS), &env(false));
        q.next_update = Time::MAX; // no timer: the probability stays where it is set
        q.vars.prob = MAX_PROB; // 100%
        q.vars.qdelay = q.params.target;
        let mut d = Vec::new();
        for i in 0..200 {
            q.enqueue(pkt(i, Ecn::NotEct, 0), 0, &mut Vec::new()).unwrap();
        }
        // Dequeues 1 ms apart: the first sets dq_tstamp, each later one takes 15625 ticks
        // (1 ms) off the 2343750 (150 ms) allowance.
        for ms in 1..=150u64 {
            q.dequeue(ms * MS, &mut d).unwrap();
            assert_eq!(q.vars.burst_time, 2_343_750 - 15_625 * (ms - 1), "{ms} ms");
            q.vars.qdelay = q.params.target; // as if every packet had waited the target
        }
        // Still 1 ms of allowance: every arrival is accepted at 100%.
        q.enqueue(pkt(500, Ecn::NotEct, 150 * MS), 150 * MS, &mut Vec::new()).unwrap();
        q.dequeue(151 * MS, &mut d).unwrap();
        q.vars.qdelay = q.params.target;
        assert_eq!(q.vars.burst_time, 0);
        // Allowance spent: at 100% the first arrival draws (accumulator 1 >= 0.85) and
        // (rnd >> 8) < MAX_PROB holds for every draw but one in 2^56: dropped, accumulator 0.
        assert_eq!(q.enqueue(pkt(501, Ecn::NotEct, 151 * MS), 151 * MS, &mut Vec::new()).unwrap_err().1, DropCause::Aqm);
        assert_eq!(q.vars.accu_prob, 0);
    }

    #[test]
    fn pie_marks_ecn_capable_packets_only_up_to_10_percent() {
        let mut q = Pie::from_params(&Params::defaults(PARAMS), &env(true));
        q.next_update = Time::MAX;
        q.vars.burst_time = 0;
        q.vars.qdelay = q.params.target;
        // 4000 B queued (at least 2 MTU: early drops are possible).
        for i in 0..4 {
            q.enqueue(pkt(i, Ecn::Ect0, 0), 0, &mut Vec::new()).unwrap(); // prob 0: accepted, accu reset to 0
        }
        // At exactly 10%, with the accumulator at 8.5: chosen without a draw, and marked.
        q.vars.prob = MAX_PROB / 10;
        q.vars.accu_prob = (MAX_PROB / 2) * 17;
        q.enqueue(pkt(3, Ecn::Ect0, 0), 0, &mut Vec::new()).unwrap();
        assert_eq!(q.marks(), 1);
        // Linux does not reset the accumulator on a mark: the next arrival is chosen too.
        q.enqueue(pkt(4, Ecn::Ect1, 0), 0, &mut Vec::new()).unwrap();
        assert_eq!(q.marks(), 2);
        // A Not-ECT packet is dropped, which resets the accumulator.
        assert_eq!(q.enqueue(pkt(5, Ecn::NotEct, 0), 0, &mut Vec::new()).unwrap_err().1, DropCause::Aqm);
        assert_eq!(q.vars.accu_prob, 0);
        // Above 10% ECN-capable packets are dropped too.
        q.vars.prob = MAX_PROB / 10 + 1;
        q.vars.accu_prob = (MAX_PROB / 2) * 17;
        assert_eq!(q.enqueue(pkt(6, Ecn::Ect0, 0), 0, &mut Vec::new()).unwrap_err().1, DropCause::Aqm);
        assert_eq!(q.marks(), 2);
        let mut d = Vec::new();
        let ecn: Vec<Ecn> = std::iter::from_fn(|| q.dequeue(0, &mut d)).map(|p| p.r.ecn()).collect();
        assert_eq!(ecn, vec![Ecn::Ect0, Ecn::Ect0, Ecn::Ect0, Ecn::Ect0, Ecn::Ce, Ecn::Ce]);
        // Over the limit: an Overflow drop.
        let mut small = Params::defaults(PARAMS);
        small.set("limit", 1.0);
        let mut q = Pie::from_params(&small, &env(true));
        q.enqueue(pkt(0, Ecn::Ect0, 0), 0, &mut Vec::new()).unwrap();
        assert_eq!(q.enqueue(pkt(1, Ecn::Ect0, 0), 0, &mut Vec::new()).unwrap_err().1, DropCause::Overflow);
    }

    #[test]
    fn pie_runs_the_missed_updates_in_order_at_the_next_packet() {
        let mut q = Pie::from_params(&Params::defaults(PARAMS), &env(false));
        let mut d = Vec::new();
        // 40 packets at 0, one leaves every ms until 39 ms: the last one waited 39 ms
        // (609375 ticks) and 1000 B stay queued. No update yet (the first is at 500 ms).
        for i in 0..40 {
            q.enqueue(pkt(i, Ecn::NotEct, 0), 0, &mut Vec::new()).unwrap();
        }
        for ms in 1..=39 {
            q.dequeue(ms * MS, &mut d).unwrap();
        }
        assert_eq!((q.vars.qdelay, q.vars.prob, q.next_update), (609_375, 0, 500 * MS));
        // The next event at 560 ms runs the updates of 500, 515, 530, 545 and 560 ms, each
        // with delay 39 ms and 1000 B queued (the old delay 0 at the first), as a timer would:
        // the probability after each is 1820790421875, 3509640046875, 5198489671875,
        // 6887339296875, 8576188921875.
        q.enqueue(pkt(40, Ecn::NotEct, 560 * MS), 560 * MS, &mut Vec::new()).unwrap();
        assert_eq!((q.vars.prob, q.vars.qdelay_old, q.next_update), (8_576_188_921_875, 609_375, 575 * MS));
        // One more dequeue just before 575 ms runs none.
        q.dequeue(575 * MS - 1, &mut d).unwrap();
        assert_eq!(q.vars.prob, 8_576_188_921_875);
    }
}
