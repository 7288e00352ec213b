//! CoDel (RFC 8289) as Linux implements it: `include/net/codel.h`, `include/net/codel_impl.h`
//! (`codel_should_drop`, `codel_dequeue`, `codel_Newton_step`, `codel_control_law`) and
//! `net/sched/sch_codel.c` (the single-queue discipline).
//!
//! The arithmetic is Linux's, so drop times match Linux exactly for the same arrival and
//! dequeue times:
//! - time is Linux's CoDel clock, nanoseconds >> 10 (1024 ns units) in a `u32` compared with
//!   wrapping signed differences (`codel_time_after`); a packet's time is its arrival time on
//!   that clock, as `codel_set_enqueue_time` stamps it;
//! - `1/sqrt(count)` is kept as Linux's 16-bit fixed-point `rec_inv_sqrt`, updated by one Newton
//!   step per drop (`codel_Newton_step`): it is coarse for small counts (count 2 gives 0.5, not
//!   0.707) and the control law uses exactly that value (`reciprocal_scale`).
//!
//! The state machine is [`CodelVars::dequeue`] over any [`CodelSource`], so [`super::fq_codel`]
//! runs one per flow queue (Linux passes `dequeue_func` and a backlog pointer the same way).
//! ECN: when the environment enables it, an ECN-capable packet is marked CE where CoDel would
//! drop it (`if (params->ecn && INET_ECN_set_ce(skb))`), and the control law goes on as after a
//! drop. Linux's `ce_threshold` marking is not modelled.
//!
//! The "backlog <= mtu" test of `codel_should_drop` reads the discipline's bytes after the
//! packet is taken out (as `dequeue_func` decrements `sch->qstats.backlog` first); `mtu` is the
//! environment's MTU (Linux: `psched_mtu(dev)`, the device MTU plus the link-layer header).

use super::registry::{ms_param_ns, QdiscEnv, QdiscInfo};
use super::{DropCause, PacketQueue, Qdisc, Queued};
use crate::cc::{ParamSpec, Params};
use crate::net::Ecn;
use crate::time::Time;

pub const PARAMS: &[ParamSpec] = &[
    ParamSpec::num("target", 5.0, 0.001, 60_000.0, "ms", "Acceptable standing queue delay (RFC 8289 TARGET; Linux codel_params_init MS2TIME(5))."),
    ParamSpec::num("interval", 100.0, 0.001, 600_000.0, "ms", "Sliding window over which the minimum delay must exceed target (RFC 8289 INTERVAL; Linux MS2TIME(100))."),
    ParamSpec::int("limit", 1000.0, 1.0, 1e9, "pkts", "The discipline's own queue limit; arrivals beyond it are dropped (sch_codel.c DEFAULT_CODEL_LIMIT)."),
];

pub const INFO: QdiscInfo = QdiscInfo {
    name: "codel",
    summary: "Controlled Delay: drops (or marks) at dequeue once the sojourn time stays above target for an interval, then at interval/sqrt(count)",
    source: "RFC 8289; Linux include/net/codel.h, include/net/codel_impl.h, net/sched/sch_codel.c",
    params: PARAMS,
    can_mark: true,
};

/// Linux `CODEL_SHIFT`: the CoDel clock counts 2^10 ns.
pub const CODEL_SHIFT: u32 = 10;
/// Linux `REC_INV_SQRT_SHIFT`: `rec_inv_sqrt` is the top 16 bits of a Q0.32 number.
const REC_INV_SQRT_SHIFT: u32 = 32 - 16;

/// A time on the CoDel clock (`codel_get_time`: ns >> CODEL_SHIFT, truncated to u32).
#[inline]
pub fn codel_time(ns: Time) -> u32 {
    (ns >> CODEL_SHIFT) as u32
}

/// `codel_time_after(a, b)`: a is after b, in wrapping serial-number arithmetic.
#[inline]
fn after(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

/// `codel_time_after_eq(a, b)`.
#[inline]
fn after_eq(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) >= 0
}

/// `codel_Newton_step`: one Newton iteration of rec_inv_sqrt towards 1/sqrt(count),
/// new = (invsqrt / 2) * (3 - count * invsqrt^2), in Q0.32.
pub fn newton_step(count: u32, rec_inv_sqrt: u16) -> u16 {
    let invsqrt = (rec_inv_sqrt as u32) << REC_INV_SQRT_SHIFT;
    let invsqrt2 = ((invsqrt as u64 * invsqrt as u64) >> 32) as u32;
    let mut val = (3u64 << 32).wrapping_sub(count as u64 * invsqrt2 as u64);
    val >>= 2; // avoid overflow in the multiply (codel_impl.h)
    val = val.wrapping_mul(invsqrt as u64) >> (32 - 2 + 1);
    (val >> REC_INV_SQRT_SHIFT) as u16
}

/// `codel_control_law`: t + interval / sqrt(count), with 1/sqrt(count) as rec_inv_sqrt
/// (`reciprocal_scale(interval, rec_inv_sqrt << REC_INV_SQRT_SHIFT)`).
pub fn control_law(t: u32, interval: u32, rec_inv_sqrt: u16) -> u32 {
    let scale = ((rec_inv_sqrt as u32) << REC_INV_SQRT_SHIFT) as u64;
    t.wrapping_add(((interval as u64 * scale) >> 32) as u32)
}

/// Linux `struct codel_params` (times on the CoDel clock).
#[derive(Debug, Clone, Copy)]
pub struct CodelParams {
    pub target: u32,
    pub interval: u32,
    /// Bytes: no drop while the backlog is at most this (`params->mtu`).
    pub mtu: u32,
    /// Mark ECN-capable packets instead of dropping them.
    pub ecn: bool,
}

impl CodelParams {
    /// From times in ns (Linux: `(us * NSEC_PER_USEC) >> CODEL_SHIFT`).
    pub fn new(target_ns: Time, interval_ns: Time, mtu: u32, ecn: bool) -> Self {
        CodelParams { target: codel_time(target_ns), interval: codel_time(interval_ns), mtu, ecn }
    }
}

/// Linux `struct codel_vars`: one CoDel state machine (one per flow queue in fq_codel).
#[derive(Debug, Clone, Copy, Default)]
pub struct CodelVars {
    /// Drops (or marks) since entering the dropping state.
    pub count: u32,
    /// count at the entry to the last dropping state.
    pub lastcount: u32,
    pub dropping: bool,
    /// 1/sqrt(count) in Q0.16.
    pub rec_inv_sqrt: u16,
    /// When the sojourn will have stayed above target for an interval (0 = below target).
    pub first_above_time: u32,
    /// Time of the next drop (or of the last one).
    pub drop_next: u32,
    /// Sojourn of the last packet looked at.
    pub ldelay: u32,
}

/// Linux `struct codel_stats` (what ccsim reads of it).
#[derive(Debug, Clone, Copy, Default)]
pub struct CodelStats {
    /// Largest packet seen (bytes).
    pub maxpacket: u32,
    pub drop_count: u64,
    pub ecn_mark: u64,
}

/// The queue a CoDel state machine controls (Linux: `dequeue_func` and the `backlog` pointer).
pub trait CodelSource {
    /// Take the head packet out, updating the backlog (`dequeue_func`).
    fn pop(&mut self) -> Option<Queued>;
    /// Bytes of backlog the "backlog <= mtu" test reads.
    fn backlog(&self) -> u64;
}

impl CodelVars {
    /// `codel_should_drop`: whether `p` (just taken out) may be dropped at `now`.
    pub fn should_drop(&mut self, p: Option<&Queued>, params: &CodelParams, stats: &mut CodelStats, backlog: u64, now: u32) -> bool {
        let Some(p) = p else {
            self.first_above_time = 0;
            return false;
        };
        self.ldelay = now.wrapping_sub(codel_time(p.arrived));
        stats.maxpacket = stats.maxpacket.max(p.r.bytes());
        if !after_eq(self.ldelay, params.target) || backlog <= params.mtu as u64 {
            // Went below: stay below for at least an interval.
            self.first_above_time = 0;
            return false;
        }
        if self.first_above_time == 0 {
            // Just went above: if it stays above for an interval, dropping is OK.
            self.first_above_time = now.wrapping_add(params.interval);
            false
        } else {
            after(now, self.first_above_time)
        }
    }

    /// `codel_dequeue`: the next packet of `src` at `now` (ns), dropping (to `dropped`) or
    /// marking on the way as the control law says.
    #[inline(always)]
    pub fn dequeue<S: CodelSource>(
        &mut self,
        src: &mut S,
        params: &CodelParams,
        stats: &mut CodelStats,
        now_ns: Time,
        dropped: &mut Vec<(Queued, DropCause)>,
    ) -> Option<Queued> {
        let Some(p) = src.pop() else {
            self.dropping = false;
            return None;
        };
        let now = codel_time(now_ns);
        let drop = self.should_drop(Some(&p), params, stats, src.backlog(), now);
        if !self.dropping && !drop {
            // Neither branch of codel_dequeue's "if (vars->dropping) ... else if (drop)": the
            // packet goes as it is (nearly every packet).
            return Some(p);
        }
        self.dequeue_acting(p, drop, src, params, stats, now, dropped)
    }

    /// The rest of [`CodelVars::dequeue`] for packet `p` (just taken out; `drop` is what
    /// `codel_should_drop` said of it at `now`) when CoDel is dropping or is to start.
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn dequeue_acting<S: CodelSource>(
        &mut self,
        mut p: Queued,
        drop: bool,
        src: &mut S,
        params: &CodelParams,
        stats: &mut CodelStats,
        now: u32,
        dropped: &mut Vec<(Queued, DropCause)>,
    ) -> Option<Queued> {
        if self.dropping {
            if !drop {
                // Sojourn below target: leave the dropping state.
                self.dropping = false;
            } else if after_eq(now, self.drop_next) {
                // Time for the next drop; a large backlog may call for several now.
                while self.dropping && after_eq(now, self.drop_next) {
                    self.count = self.count.wrapping_add(1);
                    self.rec_inv_sqrt = newton_step(self.count, self.rec_inv_sqrt);
                    if params.ecn && p.r.ecn().capable() {
                        p.r.set_ecn(Ecn::Ce);
                        stats.ecn_mark += 1;
                        self.drop_next = control_law(self.drop_next, params.interval, self.rec_inv_sqrt);
                        return Some(p);
                    }
                    dropped.push((p, DropCause::Aqm));
                    stats.drop_count += 1;
                    let next = src.pop();
                    if !self.should_drop(next.as_ref(), params, stats, src.backlog(), now) {
                        self.dropping = false;
                    } else {
                        self.drop_next = control_law(self.drop_next, params.interval, self.rec_inv_sqrt);
                    }
                    match next {
                        Some(n) => p = n,
                        None => return None,
                    }
                }
            }
        } else if drop {
            if params.ecn && p.r.ecn().capable() {
                p.r.set_ecn(Ecn::Ce);
                stats.ecn_mark += 1;
            } else {
                dropped.push((p, DropCause::Aqm));
                stats.drop_count += 1;
                let next = src.pop();
                self.should_drop(next.as_ref(), params, stats, src.backlog(), now);
                match next {
                    Some(n) => p = n,
                    None => {
                        // Linux goes on with a NULL skb: the state below is still updated.
                        self.enter_dropping(params, now);
                        return None;
                    }
                }
            }
            self.enter_dropping(params, now);
        }
        Some(p)
    }

    /// The tail of `codel_dequeue`'s "else if (drop)" branch: enter the dropping state, starting
    /// from the last cycle's drop rate if the queue went above target soon after leaving it.
    fn enter_dropping(&mut self, params: &CodelParams, now: u32) {
        self.dropping = true;
        let delta = self.count.wrapping_sub(self.lastcount);
        // codel_time_before(now - drop_next, 16 * interval)
        if delta > 1 && after(16u32.wrapping_mul(params.interval), now.wrapping_sub(self.drop_next)) {
            self.count = delta;
            // Not precise, but the next Newton steps correct it quadratically (codel_impl.h).
            self.rec_inv_sqrt = newton_step(self.count, self.rec_inv_sqrt);
        } else {
            self.count = 1;
            self.rec_inv_sqrt = (!0u32 >> REC_INV_SQRT_SHIFT) as u16;
        }
        self.lastcount = self.count;
        self.drop_next = control_law(now, params.interval, self.rec_inv_sqrt);
    }
}

/// A single FIFO as a [`CodelSource`].
impl CodelSource for PacketQueue {
    fn pop(&mut self) -> Option<Queued> {
        PacketQueue::pop(self)
    }
    fn backlog(&self) -> u64 {
        self.bytes()
    }
}

/// The CoDel discipline (`sch_codel.c`): one FIFO, tail drop at `limit`, CoDel at dequeue.
pub struct Codel {
    q: PacketQueue,
    limit: usize,
    pub params: CodelParams,
    pub vars: CodelVars,
    pub stats: CodelStats,
}

impl Codel {
    pub fn new(target_ns: Time, interval_ns: Time, limit: usize, mtu: u32, ecn: bool) -> Self {
        Codel {
            q: PacketQueue::default(),
            limit,
            params: CodelParams::new(target_ns, interval_ns, mtu, ecn),
            vars: CodelVars::default(),
            stats: CodelStats::default(),
        }
    }

    pub fn from_params(p: &Params, env: &QdiscEnv) -> Self {
        Codel::new(ms_param_ns(p, "target"), ms_param_ns(p, "interval"), p.get("limit") as usize, env.mtu_bytes, env.ecn)
    }
}

impl Qdisc for Codel {
    /// `codel_qdisc_enqueue`: tail drop at the limit.
    fn enqueue(&mut self, p: Queued, _now: Time, _dropped: &mut Vec<(Queued, DropCause)>) -> Result<(), (Queued, DropCause)> {
        if self.q.len() >= self.limit {
            return Err((p, DropCause::Overflow));
        }
        self.q.push(p);
        Ok(())
    }
    fn dequeue(&mut self, now: Time, dropped: &mut Vec<(Queued, DropCause)>) -> Option<Queued> {
        self.vars.dequeue(&mut self.q, &self.params, &mut self.stats, now, dropped)
    }
    crate::packet_queue_storage!(q);
    fn marks(&self) -> u64 {
        self.stats.ecn_mark
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::Routed;
    use crate::time::MS;

    fn pkt(slot: u32, bytes: u32, arrived: Time, ecn: Ecn) -> Queued {
        Queued { r: Routed::from_parts(0, bytes, 0, false, ecn, slot), arrived }
    }

    /// target 5 ms, interval 100 ms, limit 10000, MTU 1514.
    fn codel(ecn: bool) -> Codel {
        Codel::new(5 * MS, 100 * MS, 10_000, 1514, ecn)
    }

    /// The Linux values of the drop schedule when 3000 packets of 1000 B arrive at t = 0 and
    /// the link takes one every 1 ms from t = 1 ms (a queue held above target), worked out
    /// with codel_impl.h's integer arithmetic (CoDel clock = ns >> 10):
    /// - target = MS2TIME(5) = 4882, interval = MS2TIME(100) = 97656;
    /// - at 5 ms the sojourn (4882) is no longer below target: first_above_time =
    ///   4882 + 97656 = 102538; dropping is allowed once now is after it: 104 ms is 101562,
    ///   105 ms is 102539, so the first drop is at 105 ms, one interval after 5 ms;
    /// - then count = 1, rec_inv_sqrt = 0xffff, drop_next = 102539 + (97656 x 0xffff0000 >> 32)
    ///   = 200193 (204 997 632 ns), and each drop does count += 1, one Newton step
    ///   (count 2 gives 32769 = 0.50002, not 1/sqrt 2: Linux's first steps are coarse) and
    ///   drop_next += interval x rec_inv_sqrt / 2^16.
    ///
    /// Each entry: (dequeue time in ms, rec_inv_sqrt after the drop, drop_next after it).
    const SCHEDULE: [(u64, u16, u32); 28] = [
        (105, 65535, 200193),
        (205, 32769, 249022),
        (255, 36864, 303953),
        (312, 31968, 351588),
        (361, 28935, 394704),
        (405, 26481, 434163),
        (445, 24588, 470801),
        (483, 23037, 505128),
        (518, 21746, 537531),
        (551, 20647, 568297),
        (582, 19699, 597650),
        (612, 18869, 625766),
        (641, 18136, 652790),
        (669, 17481, 678838),
        (696, 16893, 704010),
        (721, 16360, 728388),
        (746, 15874, 752042),
        (771, 15429, 775032),
        (794, 15019, 797411),
        (817, 14640, 819226),
        (839, 14288, 840516),
        (861, 13961, 861319),
        (882, 13655, 881666),
        (903, 13368, 901585),
        (924, 13099, 921103),
        (944, 12845, 940243),
        (963, 12605, 959025),
        (983, 12379, 977471),
    ];

    /// Dequeue every 1 ms for 1 s from a backlog of 3000 packets of 1000 B that arrived at 0;
    /// returns, per dequeue that dropped or marked, (ms, rec_inv_sqrt, drop_next), and the
    /// packets delivered.
    fn held_above_target(c: &mut Codel, ecn: Ecn) -> (Vec<(u64, u16, u32)>, Vec<Queued>) {
        for i in 0..3000 {
            c.enqueue(pkt(i, 1000, 0, ecn), 0, &mut Vec::new()).unwrap();
        }
        let (mut events, mut out, mut dropped) = (Vec::new(), Vec::new(), Vec::new());
        for ms in 1..=1000 {
            let marks = c.marks();
            let p = c.dequeue(ms * MS, &mut dropped).unwrap();
            if !dropped.is_empty() || c.marks() > marks {
                assert!(dropped.len() + (c.marks() - marks) as usize == 1, "one drop or mark at {ms} ms");
                events.push((ms, c.vars.rec_inv_sqrt, c.vars.drop_next));
                dropped.clear();
            }
            out.push(p);
        }
        (events, out)
    }

    #[test]
    fn codel_drops_first_one_interval_after_target_then_at_interval_over_sqrt_count() {
        let mut c = codel(false);
        let (events, out) = held_above_target(&mut c, Ecn::NotEct);
        assert_eq!(events, SCHEDULE.to_vec());
        // The drop times in ns as Linux computes them: the first at 105 ms, the next due at
        // drop_next x 1024 ns.
        assert_eq!(SCHEDULE[0].2 as u64 * 1024, 204_997_632);
        assert_eq!(SCHEDULE[1].2 as u64 * 1024, 254_998_528);
        assert_eq!((c.stats.drop_count, c.marks(), c.vars.count), (28, 0, 28));
        assert!(c.vars.dropping);
        // 1000 delivered, 28 dropped: the queue holds the rest.
        assert_eq!((out.len(), c.len(), c.bytes()), (1000, 3000 - 1028, 1_972_000));
        assert!(out.iter().all(|p| p.r.ecn() == Ecn::NotEct));
    }

    #[test]
    fn codel_fixed_point_inverse_square_root_and_control_law_are_linux_s() {
        // codel_Newton_step from 1.0 (0xffff) at count 2, then on.
        assert_eq!(newton_step(2, 0xffff), 32769);
        assert_eq!(newton_step(3, 32769), 36864);
        assert_eq!(newton_step(4, 36864), 31968);
        // reciprocal_scale(97656, 0xffff << 16) = 97654; with 32769 (0.5): 48828.
        assert_eq!(control_law(102_539, 97_656, 0xffff), 200_193);
        assert_eq!(control_law(200_193, 97_656, 32769), 249_022);
        // Wrapping clock: the law adds modulo 2^32.
        assert_eq!(control_law(u32::MAX - 10, 97_656, 0xffff), 97_643);
        assert_eq!((codel_time(5 * MS), codel_time(100 * MS)), (4882, 97656));
    }

    #[test]
    fn codel_ecn_marks_instead_of_dropping_on_the_same_schedule() {
        let mut c = codel(true);
        let (events, out) = held_above_target(&mut c, Ecn::Ect0);
        assert_eq!(events, SCHEDULE.to_vec());
        assert_eq!((c.stats.drop_count, c.marks()), (0, 28));
        // Every dequeue delivered the head packet; the marked ones carry CE.
        let marked: Vec<u32> = out.iter().filter(|p| p.r.ecn() == Ecn::Ce).map(|p| p.r.slot()).collect();
        let expect: Vec<u32> = SCHEDULE.iter().map(|&(ms, _, _)| ms as u32 - 1).collect();
        assert_eq!(marked, expect);
        assert_eq!(c.len(), 2000);
        // Not-ECT packets are still dropped with ECN on.
        let mut c = codel(true);
        let (events, _) = held_above_target(&mut c, Ecn::NotEct);
        assert_eq!(events, SCHEDULE.to_vec());
        assert_eq!((c.stats.drop_count, c.marks()), (28, 0));
    }

    #[test]
    fn codel_leaves_the_dropping_state_when_the_sojourn_falls_below_target() {
        let mut c = codel(false);
        // Three packets that arrived at 0, then five that arrived at 103 ms.
        for i in 0..8 {
            c.enqueue(pkt(i, 1000, if i < 3 { 0 } else { 103 * MS }, Ecn::NotEct), 0, &mut Vec::new()).unwrap();
        }
        let mut d = Vec::new();
        // 5 ms: sojourn 4882 >= target: first_above_time = 4882 + 97656.
        assert_eq!(c.dequeue(5 * MS, &mut d).unwrap().r.slot(), 0);
        assert_eq!((c.vars.first_above_time, c.vars.dropping, d.len()), (102_538, false, 0));
        // 105 ms (102539): drop packet 1, deliver 2, enter dropping with count 1.
        assert_eq!(c.dequeue(105 * MS, &mut d).unwrap().r.slot(), 2);
        assert_eq!(d.iter().map(|(p, cause)| (p.r.slot(), *cause)).collect::<Vec<_>>(), vec![(1, DropCause::Aqm)]);
        assert_eq!((c.vars.dropping, c.vars.count, c.vars.drop_next), (true, 1, 200_193));
        // 106 ms: packet 3 waited 3 ms < target: leave the dropping state, no drop.
        d.clear();
        assert_eq!(c.dequeue(106 * MS, &mut d).unwrap().r.slot(), 3);
        assert_eq!((c.vars.dropping, c.vars.first_above_time, d.len()), (false, 0, 0));
        // 300 ms: above target again (197 ms), but a whole interval must pass first.
        assert_eq!(c.dequeue(300 * MS, &mut d).unwrap().r.slot(), 4);
        assert_eq!((c.vars.dropping, c.vars.first_above_time, d.len()), (false, 292_968 + 97_656, 0));
        for (ms, slot) in [(301, 5), (302, 6), (303, 7)] {
            assert_eq!(c.dequeue(ms * MS, &mut d).unwrap().r.slot(), slot);
        }
        assert!(d.is_empty());
        // An empty queue also ends the dropping state.
        c.vars.dropping = true;
        assert!(c.dequeue(304 * MS, &mut d).is_none());
        assert!(!c.vars.dropping && d.is_empty());
    }

    #[test]
    fn codel_never_drops_while_the_backlog_is_at_most_one_mtu() {
        // One packet waits behind the one leaving; both arrived at 0, so the sojourn grows to
        // 300 ms, but the backlog left (1000 B) is at most the MTU (1514 B).
        for (mtu, drops) in [(1514, vec![]), (999, vec![105])] {
            let mut c = Codel::new(5 * MS, 100 * MS, 10_000, mtu, false);
            c.enqueue(pkt(0, 1000, 0, Ecn::NotEct), 0, &mut Vec::new()).unwrap();
            let mut d = Vec::new();
            let mut dropped_at = Vec::new();
            for ms in 1..=300 {
                c.enqueue(pkt(ms as u32, 1000, 0, Ecn::NotEct), ms * MS, &mut Vec::new()).unwrap();
                c.dequeue(ms * MS, &mut d);
                if !d.is_empty() {
                    dropped_at.push(ms);
                    d.clear();
                }
            }
            // With an MTU of 999 B the 1000 B left counts: the first drop comes at 105 ms, and
            // it empties the queue (the packet after it has nothing behind it), which ends the
            // dropping state at the next dequeue.
            assert_eq!(dropped_at, drops, "mtu {mtu}");
            assert_eq!(c.stats.maxpacket, 1000);
        }
    }

    #[test]
    fn codel_tail_drops_at_its_limit() {
        let mut c = Codel::new(5 * MS, 100 * MS, 2, 1514, false);
        c.enqueue(pkt(0, 1000, 0, Ecn::NotEct), 0, &mut Vec::new()).unwrap();
        c.enqueue(pkt(1, 1000, 0, Ecn::NotEct), 0, &mut Vec::new()).unwrap();
        let (p, cause) = c.enqueue(pkt(2, 1000, 0, Ecn::NotEct), 0, &mut Vec::new()).unwrap_err();
        assert_eq!((p.r.slot(), cause, c.len(), c.bytes()), (2, DropCause::Overflow, 2, 2000));
    }
}
