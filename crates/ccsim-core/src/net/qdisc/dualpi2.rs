//! DualPI2, the coupled dual-queue AQM of RFC 9332, as Linux `net/sched/sch_dualpi2.c`
//! (in mainline Linux since 2025) implements it.
//!
//! - Classification (`dualpi2_skb_classify` with the default `ecn_mask` = ECT(1)): packets
//!   whose ECN field has the ECT(1) bit set, ECT(1) and CE, go to the L4S queue (L); Not-ECT
//!   and ECT(0) packets to the classic queue (C).
//! - The PI2 controller (`calculate_probability`), every `tupdate`: with qdelay the larger of
//!   the two queues' head-of-line delays (now minus the head packet's arrival; 0 for an empty
//!   queue; Linux takes the max of both queues, not the classic queue's alone),
//!   p' += alpha (qdelay - target) + beta (qdelay - qdelay_prev), in Linux's u32 fixed point
//!   (probability 1 = 2^32 - 1; alpha and beta given in Hz, sent by tc as x256 integers, 0.16
//!   -> 41 and 3.2 -> 819, then scaled by `dualpi2_scale_alpha_beta` and divided by 64 per
//!   update, `__scale_delta`), clamped to [0, 1] by wrap detection.
//! - Coupling (`must_drop`): classic packets are dropped (or marked, if ECT(0) and ECN is on)
//!   with p_C = p'^2, as two independent draws both under p' (`dualpi2_classic_marking`); L4S
//!   packets are marked with p_L = k p' (`dualpi2_scalable_marking`), k = `coupling_factor`
//!   (2). When k p' exceeds 1 (overload) L4S packets get the classic treatment: dropped with
//!   p'^2 if `drop_on_overload`, else marked. Nothing is dropped or marked while fewer than 2
//!   MTU are queued in both queues together. By default this happens at dequeue
//!   (`drop_enqueue` off), on the packet leaving, with the backlog left behind it.
//! - The L4S native AQM (`do_step_aqm`): an L4S packet leaving the L queue after a sojourn
//!   above `step_thresh` (1 ms) is marked, if the L queue held at least `min_qlen_step`
//!   packets when it arrived (0: always).
//! - The scheduler (`dequeue_packet`): a weighted round robin on a byte credit. L is served
//!   when it has packets and C is empty or the credit is <= 0; serving L while C waits adds
//!   wc x bytes to the credit, serving C while L waits takes wl x bytes from it, with
//!   wc = `classic_protection` percent and wl = 100 - wc; the credit starts (and restarts
//!   whenever both queues are empty) at MTU x (wc - wl), so L goes first. A dropped packet
//!   does not change the credit.
//! - `limit` packets (both queues) bound the discipline: an arrival beyond it is dropped.
//!
//! The PI2 update timer is an hrtimer every `tupdate` from the discipline's creation (time 0
//! here). As for [`super::pie`], ccsim runs each update lazily at the first enqueue or dequeue
//! at or after its time, in order, with the head-of-line delays of that time (the queues'
//! heads do not change between two calls), which is exactly the timer's result.
//!
//! Not modelled: `memory_limit` (Linux's default is `limit` x 2 MTU of truesize: `limit` and
//! the link's buffer bound the queue), tc filters and the `skb->priority` classification, the
//! step threshold in packets, GSO splitting (ccsim has no GSO). Linux's `ecn_mark` counter
//! counts a packet twice if both the PI2 marking and the step mark hit it; [`Qdisc::marks`]
//! counts it once.

use super::registry::{ms_param_ns, QdiscEnv, QdiscInfo};
use super::{DropCause, Qdisc, Queued};
use crate::cc::{ParamSpec, Params};
use crate::net::Ecn;
use crate::rng::Rng;
use crate::time::Time;
use rand::RngCore as _;
use std::collections::VecDeque;

pub const PARAMS: &[ParamSpec] = &[
    ParamSpec::int("limit", 10000.0, 1.0, 1e9, "pkts", "Packets in both queues together (dualpi2_reset_default: 10000, 125 ms at 1 Gbps)."),
    ParamSpec::num("target", 15.0, 0.0, 4000.0, "ms", "PI2 target queue delay (RFC 9332 App. A; dualpi2_reset_default)."),
    ParamSpec::num("tupdate", 16.0, 0.001, 4000.0, "ms", "PI2 update period (RFC 9332 App. A; dualpi2_reset_default)."),
    ParamSpec::num("alpha", 0.16, 0.00390625, 8_388_607.0, "Hz", "PI2 integral gain (RFC 9332 App. A; tc sends x256: 41)."),
    ParamSpec::num("beta", 3.2, 0.00390625, 8_388_607.0, "Hz", "PI2 proportional gain (RFC 9332 App. A; tc sends x256: 819)."),
    ParamSpec::num("step_thresh", 1.0, 0.0, 4000.0, "ms", "L4S queue sojourn above which its packets are marked: Linux's step where RFC 9332 App. A has a ramp (dualpi2_reset_default)."),
    ParamSpec::int("min_qlen_step", 0.0, 0.0, 1e9, "pkts", "The step mark applies only to packets arriving to an L4S queue this long (dualpi2_reset_default: 0)."),
    ParamSpec::int("coupling_factor", 2.0, 1.0, 255.0, "1", "k in p_L = k p' (RFC 9332 recommends 2; dualpi2_reset_default)."),
    ParamSpec::int("classic_protection", 10.0, 0.0, 100.0, "%", "Weight of the classic queue in the scheduler, wc (wl = 100 - wc) (dualpi2_reset_default: 10)."),
    ParamSpec::flag("drop_on_overload", true, "When k p' > 1, drop L4S packets with p'^2 instead of only marking them (TC_DUALPI2_DROP_OVERLOAD_DROP)."),
    ParamSpec::flag("drop_enqueue", false, "Apply the PI2 drop/mark at enqueue instead of dequeue (TC_DUALPI2_DROP_EARLY_DROP_ENQUEUE)."),
];

pub const INFO: QdiscInfo = QdiscInfo {
    name: "dualpi2",
    summary: "Coupled dual-queue AQM: PI2 on the larger queue delay, classic p' squared, L4S k p' plus a 1 ms step mark, weighted round robin",
    source: "RFC 9332; Linux net/sched/sch_dualpi2.c",
    params: PARAMS,
    can_mark: true,
};

/// Probability 1 (`MAX_PROB` = U32_MAX).
pub const MAX_PROB: u32 = u32::MAX;
/// tc sends alpha and beta in units of 1/256 Hz (`ALPHA_BETA_SHIFT`).
const ALPHA_BETA_SHIFT: u32 = 8;
/// Internal alpha and beta are in units of 64 ns (`ALPHA_BETA_GRANULARITY`).
const ALPHA_BETA_GRANULARITY: u32 = 6;
/// `ALPHA_BETA_SCALING`.
const ALPHA_BETA_SCALING: u32 = ALPHA_BETA_SHIFT - ALPHA_BETA_GRANULARITY;
/// Weights are in percent (`MAX_WC`).
const MAX_WC: i32 = 100;

/// The gains (alpha, beta in 1/256 Hz as tc sends them) fit Linux's netlink range.
pub fn check(p: &Params) -> Result<(), String> {
    for name in ["alpha", "beta"] {
        let v = p.get(name);
        let sent = (v * 256.0).round();
        if !(1.0..=((1u64 << 31) - 1) as f64).contains(&sent) {
            return Err(format!("{name} ({v} Hz) must be between 1/256 and 2^31-1 units of 1/256 Hz"));
        }
    }
    Ok(())
}

/// `dualpi2_scale_alpha_beta`: a gain in 1/256 Hz to the internal unit.
pub fn scale_alpha_beta(param: u32) -> u32 {
    (((param as u64 * MAX_PROB as u64) >> ALPHA_BETA_SCALING) / 1_000_000_000) as u32
}

/// A packet in one of the queues, with what Linux keeps in its control block.
#[derive(Debug, Clone, Copy)]
struct Entry {
    p: Queued,
    /// The ECN field at classification (`dualpi2_skb_cb.ect`).
    ect: Ecn,
    /// The step threshold applies (`apply_step`).
    apply_step: bool,
}

/// What `must_drop` did to a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Pass,
    Marked,
    Drop,
}

/// What the PI2 verdict reads of the discipline.
#[derive(Debug, Clone, Copy)]
struct Coupling {
    /// p' (1 = 2^32 - 1).
    prob: u32,
    /// k (`coupling_factor`).
    k: u32,
    drop_overload: bool,
    /// Mark classic ECT(0) packets instead of dropping them.
    ecn: bool,
}

impl Coupling {
    /// `dualpi2_classic_marking` (C queue) or `dualpi2_scalable_marking` (L queue), each
    /// `dualpi2_roll` a u32 `draw()` at most the probability.
    fn verdict(&self, e: &mut Entry, l4s: bool, mut draw: impl FnMut() -> u32) -> Verdict {
        let p = self.prob;
        let local_l_prob = p as u64 * self.k as u64;
        let overload = local_l_prob > MAX_PROB as u64;
        let mut roll = |prob: u32| draw() <= prob;
        if !l4s {
            // p_C = p'^2: two draws.
            if roll(p) && roll(p) {
                if overload || e.ect == Ecn::NotEct || !self.ecn {
                    return Verdict::Drop;
                }
                e.p.r.set_ecn(Ecn::Ce);
                return Verdict::Marked;
            }
            return Verdict::Pass;
        }
        if overload {
            // k p' > 1: the classic drop p'^2 (drop_on_overload), else mark.
            if !(self.drop_overload && roll(p) && roll(p)) {
                e.p.r.set_ecn(Ecn::Ce);
                return Verdict::Marked;
            }
            return Verdict::Drop;
        }
        // p_L = k p' (below 1 here, so it fits a u32).
        if roll(local_l_prob as u32) {
            if e.ect == Ecn::NotEct {
                return Verdict::Drop;
            }
            e.p.r.set_ecn(Ecn::Ce);
            return Verdict::Marked;
        }
        Verdict::Pass
    }
}

pub struct DualPi2 {
    l: VecDeque<Entry>,
    c: VecDeque<Entry>,
    /// Bytes in both queues (`sch->qstats.backlog`).
    bytes: u64,
    limit: usize,
    mtu: u32,
    ecn: bool,
    /// PI2 target and period, ns.
    target: u64,
    tupdate: Time,
    /// Internal gains (`pi2_alpha`, `pi2_beta`).
    pub alpha: u32,
    pub beta: u32,
    /// The base probability p' (`pi2_prob`), 1 = 2^32 - 1.
    pub prob: u32,
    /// qdelay at the last update, ns (`last_qdelay`).
    pub last_qdelay: u64,
    step_thresh: u64,
    min_qlen_step: usize,
    coupling: u32,
    drop_overload: bool,
    drop_early: bool,
    /// WRR credit and its weights (`c_protection_*`).
    pub credit: i32,
    credit_init: i32,
    wc: i32,
    wl: i32,
    next_update: Time,
    rng: Rng,
    marks: u64,
    /// Packets marked by the step threshold (`step_marks`).
    pub step_marks: u64,
}

impl DualPi2 {
    pub fn from_params(p: &Params, env: &QdiscEnv) -> Self {
        let wc = p.get("classic_protection") as i32;
        let wl = MAX_WC - wc;
        // dualpi2_calculate_c_protection: the credit starts at MTU x (wc - wl).
        let credit_init = env.mtu_bytes as i32 * (wc - wl);
        DualPi2 {
            l: VecDeque::new(),
            c: VecDeque::new(),
            bytes: 0,
            limit: p.get("limit") as usize,
            mtu: env.mtu_bytes,
            ecn: env.ecn,
            target: ms_param_ns(p, "target"),
            tupdate: ms_param_ns(p, "tupdate"),
            alpha: scale_alpha_beta((p.get("alpha") * 256.0).round() as u32),
            beta: scale_alpha_beta((p.get("beta") * 256.0).round() as u32),
            prob: 0,
            last_qdelay: 0,
            step_thresh: ms_param_ns(p, "step_thresh"),
            min_qlen_step: p.get("min_qlen_step") as usize,
            coupling: p.get("coupling_factor") as u32,
            drop_overload: p.flag("drop_on_overload"),
            drop_early: p.flag("drop_enqueue"),
            credit: credit_init,
            credit_init,
            wc,
            wl,
            next_update: ms_param_ns(p, "tupdate"),
            rng: crate::rng::derive(env.seed, 0),
            marks: 0,
            step_marks: 0,
        }
    }

    /// Packets waiting in the L4S and the classic queue.
    pub fn queue_lens(&self) -> (usize, usize) {
        (self.l.len(), self.c.len())
    }

    /// `calculate_probability` at `now`: the next p'.
    pub fn calculate_probability(&mut self, now: Time) -> u32 {
        let head = |q: &VecDeque<Entry>| q.front().map_or(0, |e| now - e.p.arrived);
        let qdelay = head(&self.l).max(head(&self.c));
        let mut delta = (qdelay as i64 - self.target as i64).wrapping_mul(self.alpha as i64);
        delta = delta.wrapping_add((qdelay as i64 - self.last_qdelay as i64).wrapping_mul(self.beta as i64));
        self.last_qdelay = qdelay;
        // Bound to [0, MAX_PROB] by wrap detection; the step is delta / 2^6 (__scale_delta).
        let new_prob = if delta > 0 {
            let n = ((delta as u64) >> ALPHA_BETA_GRANULARITY).wrapping_add(self.prob as u64) as u32;
            if n < self.prob { MAX_PROB } else { n }
        } else {
            let n = (self.prob as u64).wrapping_sub(delta.unsigned_abs() >> ALPHA_BETA_GRANULARITY) as u32;
            if n > self.prob { 0 } else { n }
        };
        // Without drops on overload, p_L = k p' is capped at 1.
        if !self.drop_overload {
            return new_prob.min(MAX_PROB / self.coupling);
        }
        new_prob
    }

    /// Run the updates due at or before `now` (`dualpi2_timer`), each at its own time.
    fn catch_up(&mut self, now: Time) {
        while self.next_update <= now {
            let t = self.next_update;
            self.prob = self.calculate_probability(t);
            self.next_update += self.tupdate;
        }
    }

    /// Mark `e` CE (it is ECN-capable).
    fn mark(e: &mut Entry) {
        e.p.r.set_ecn(Ecn::Ce);
    }

    /// `must_drop`: the PI2 verdict on `e` (in the L queue if `l4s`), `self.bytes` queued.
    fn must_drop(&mut self, e: &mut Entry, l4s: bool) -> Verdict {
        // Never while fewer than 2 MTU are queued.
        if self.bytes < 2 * self.mtu as u64 {
            return Verdict::Pass;
        }
        let c = Coupling { prob: self.prob, k: self.coupling, drop_overload: self.drop_overload, ecn: self.ecn };
        let rng = &mut self.rng;
        c.verdict(e, l4s, || rng.next_u32())
    }

    /// `dequeue_packet`: the WRR choice. Returns the entry, whether it is from the L queue,
    /// and the credit change if it is delivered.
    fn dequeue_packet(&mut self) -> Option<(Entry, bool, i32)> {
        let c_len = self.c.len();
        let (e, l4s, change) = if !self.l.is_empty() && (c_len == 0 || self.credit <= 0) {
            let e = self.l.pop_front().expect("L has packets");
            (e, true, if c_len > 0 { self.wc } else { 0 })
        } else if c_len > 0 {
            let e = self.c.pop_front().expect("C has packets");
            (e, false, if !self.l.is_empty() { -self.wl } else { 0 })
        } else {
            self.credit = self.credit_init;
            return None;
        };
        self.bytes -= e.p.r.bytes() as u64;
        Some((e, l4s, change * e.p.r.bytes() as i32))
    }
}

impl Qdisc for DualPi2 {
    /// `dualpi2_enqueue_skb` after `dualpi2_skb_classify`.
    fn enqueue(&mut self, p: Queued, now: Time, _dropped: &mut Vec<(Queued, DropCause)>) -> Result<(), (Queued, DropCause)> {
        self.catch_up(now);
        if self.l.len() + self.c.len() >= self.limit {
            return Err((p, DropCause::Overflow));
        }
        // ecn_mask = ECT(1): the ECT(1) bit set (ECT(1), CE) means L4S.
        let l4s = (p.r.ecn() as u8) & (Ecn::Ect1 as u8) != 0;
        let mut e = Entry { p, ect: p.r.ecn(), apply_step: false };
        if self.drop_early {
            match self.must_drop(&mut e, l4s) {
                Verdict::Drop => return Err((e.p, DropCause::Aqm)),
                Verdict::Marked => self.marks += 1,
                Verdict::Pass => {}
            }
        }
        self.bytes += e.p.r.bytes() as u64;
        if l4s {
            e.apply_step = self.l.len() >= self.min_qlen_step;
            self.l.push_back(e);
        } else {
            self.c.push_back(e);
        }
        Ok(())
    }

    /// `dualpi2_qdisc_dequeue`.
    fn dequeue(&mut self, now: Time, dropped: &mut Vec<(Queued, DropCause)>) -> Option<Queued> {
        self.catch_up(now);
        while let Some((mut e, l4s, change)) = self.dequeue_packet() {
            let mut marked = false;
            if !self.drop_early {
                match self.must_drop(&mut e, l4s) {
                    Verdict::Drop => {
                        dropped.push((e.p, DropCause::Aqm));
                        continue;
                    }
                    Verdict::Marked => marked = true,
                    Verdict::Pass => {}
                }
            }
            // do_step_aqm: the L4S queue's own step marking on the sojourn time.
            if l4s && e.apply_step && now - e.p.arrived > self.step_thresh {
                if e.ect == Ecn::NotEct {
                    dropped.push((e.p, DropCause::Aqm));
                    continue;
                }
                Self::mark(&mut e);
                self.step_marks += 1;
                marked = true;
            }
            if marked {
                self.marks += 1;
            }
            self.credit += change;
            return Some(e.p);
        }
        None
    }
    fn len(&self) -> usize {
        self.l.len() + self.c.len()
    }
    fn bytes(&self) -> u64 {
        self.bytes
    }
    fn packets(&self) -> Vec<Queued> {
        self.l.iter().chain(self.c.iter()).map(|e| e.p).collect()
    }
    fn heap_bytes(&self) -> usize {
        (self.l.capacity() + self.c.capacity()) * std::mem::size_of::<Entry>()
    }
    fn marks(&self) -> u64 {
        self.marks
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::Routed;
    use crate::time::MS;

    fn dualpi2(mtu: u32, params: &[(&str, f64)]) -> DualPi2 {
        let mut p = Params::defaults(PARAMS);
        for &(k, v) in params {
            p.set(k, v);
        }
        DualPi2::from_params(&p, &QdiscEnv { ecn: true, mtu_bytes: mtu, rate_bps: 10_000_000, seed: 11 })
    }

    fn pkt(slot: u32, ecn: Ecn, arrived: Time) -> Queued {
        Queued { r: Routed::from_parts(0, 1000, 0, false, ecn, slot), arrived }
    }

    fn entry(ecn: Ecn) -> Entry {
        Entry { p: pkt(0, ecn, 0), ect: ecn, apply_step: false }
    }

    #[test]
    fn dualpi2_gains_and_credit_are_linux_s() {
        let q = dualpi2(1500, &[]);
        // dualpi2_scale_alpha_beta(41) = (41 x (2^32 - 1) >> 2) / 10^9; (819 ...).
        assert_eq!((q.alpha, q.beta), (44, 879));
        // MTU x (wc - wl) = 1500 x (10 - 90).
        assert_eq!((q.credit, q.wc, q.wl), (-120_000, 10, 90));
        assert_eq!((q.target, q.tupdate, q.step_thresh, q.next_update), (15 * MS, 16 * MS, MS, 16 * MS));
    }

    #[test]
    fn dualpi2_classifies_ect1_and_ce_as_l4s() {
        let mut q = dualpi2(1514, &[]);
        for (i, e) in [Ecn::NotEct, Ecn::Ect1, Ecn::Ect0, Ecn::Ce].into_iter().enumerate() {
            q.enqueue(pkt(i as u32, e, 0), 0, &mut Vec::new()).unwrap();
        }
        assert_eq!(q.queue_lens(), (2, 2));
        // The scheduler starts with L (negative credit); nothing waited: no marks.
        let mut d = Vec::new();
        let out: Vec<(u32, Ecn)> = std::iter::from_fn(|| q.dequeue(0, &mut d)).map(|p| (p.r.slot(), p.r.ecn())).collect();
        assert_eq!(out, vec![(1, Ecn::Ect1), (3, Ecn::Ce), (0, Ecn::NotEct), (2, Ecn::Ect0)]);
        assert!(d.is_empty());
    }

    #[test]
    fn dualpi2_couples_classic_p_squared_and_l4s_k_p() {
        // p' = (2^32 - 1) / 5 = 0.2 exactly: p_C = 0.04, p_L = 2 x 0.2 = 0.4.
        let p = 858_993_459;
        let c = Coupling { prob: p, k: 2, drop_overload: true, ecn: true };
        let verdict = |c: &Coupling, ecn: Ecn, l4s: bool, draws: &[u32]| {
            let mut e = entry(ecn);
            let mut it = draws.iter();
            let v = c.verdict(&mut e, l4s, || *it.next().expect("a scripted draw"));
            (v, e.p.r.ecn(), it.len())
        };
        // Classic: dropped when both draws are at most p' (the second is drawn only if the
        // first is), marked instead if ECT(0) and ECN is on.
        assert_eq!(verdict(&c, Ecn::NotEct, false, &[p, p]), (Verdict::Drop, Ecn::NotEct, 0));
        assert_eq!(verdict(&c, Ecn::NotEct, false, &[p, p + 1]), (Verdict::Pass, Ecn::NotEct, 0));
        assert_eq!(verdict(&c, Ecn::NotEct, false, &[p + 1, 0]), (Verdict::Pass, Ecn::NotEct, 1));
        assert_eq!(verdict(&c, Ecn::Ect0, false, &[0, p]), (Verdict::Marked, Ecn::Ce, 0));
        let no_ecn = Coupling { ecn: false, ..c };
        assert_eq!(verdict(&no_ecn, Ecn::Ect0, false, &[0, p]), (Verdict::Drop, Ecn::Ect0, 0));
        // L4S: marked when one draw is at most k p' = 1717986918.
        assert_eq!(verdict(&c, Ecn::Ect1, true, &[1_717_986_918]), (Verdict::Marked, Ecn::Ce, 0));
        assert_eq!(verdict(&c, Ecn::Ect1, true, &[1_717_986_919]), (Verdict::Pass, Ecn::Ect1, 0));
        // Overload (k p' > 1): L4S packets get the classic drop p'^2, else a mark; classic
        // ECT(0) packets are dropped.
        let over = Coupling { prob: 0x9000_0000, ..c };
        assert_eq!(verdict(&over, Ecn::Ect1, true, &[5, 0x9000_0000]), (Verdict::Drop, Ecn::Ect1, 0));
        assert_eq!(verdict(&over, Ecn::Ect1, true, &[0x9000_0001]), (Verdict::Marked, Ecn::Ce, 0));
        assert_eq!(verdict(&over, Ecn::Ect0, false, &[1, 2]), (Verdict::Drop, Ecn::Ect0, 0));
        let mark_over = Coupling { drop_overload: false, ..over };
        assert_eq!(verdict(&mark_over, Ecn::Ect1, true, &[]), (Verdict::Marked, Ecn::Ce, 0));
        // With the seeded stream: p_C = (p_L / k)^2 within sampling error, for two p'.
        for (p, pc, pl) in [(858_993_459u32, 0.04, 0.4), (1_431_655_765, 1.0 / 9.0, 2.0 / 3.0)] {
            let c = Coupling { prob: p, ..c };
            let mut rng = crate::rng::derive(3, 0);
            let n = 400_000;
            let classic = (0..n).filter(|_| c.verdict(&mut entry(Ecn::NotEct), false, || rng.next_u32()) == Verdict::Drop).count() as f64 / n as f64;
            let l4s = (0..n).filter(|_| c.verdict(&mut entry(Ecn::Ect1), true, || rng.next_u32()) == Verdict::Marked).count() as f64 / n as f64;
            assert!((classic - pc).abs() < 0.003 && (l4s - pl).abs() < 0.005, "p' {p}: p_C {classic}, p_L {l4s}");
            assert!((classic - (l4s / 2.0).powi(2)).abs() < 0.004, "p' {p}");
        }
    }

    #[test]
    fn dualpi2_step_marks_l4s_packets_that_waited_over_1_ms() {
        // 2000 B queued < 2 MTU: no PI2 verdicts, only the step.
        let mut q = dualpi2(1514, &[]);
        q.enqueue(pkt(0, Ecn::Ect1, 0), 0, &mut Vec::new()).unwrap();
        q.enqueue(pkt(1, Ecn::Ect1, 0), 0, &mut Vec::new()).unwrap();
        let mut d = Vec::new();
        // A sojourn of exactly 1 ms is not above the threshold; 1 ms + 1 ns is.
        assert_eq!(q.dequeue(MS, &mut d).unwrap().r.ecn(), Ecn::Ect1);
        assert_eq!(q.dequeue(MS + 1, &mut d).unwrap().r.ecn(), Ecn::Ce);
        assert_eq!((q.marks(), q.step_marks), (1, 1));
        // Classic packets never see the step.
        q.enqueue(pkt(2, Ecn::Ect0, 0), 0, &mut Vec::new()).unwrap();
        assert_eq!(q.dequeue(10 * MS, &mut d).unwrap().r.ecn(), Ecn::Ect0);
        // min_qlen_step 2: only packets arriving to an L queue of 2 or more are stepped.
        let mut q = dualpi2(1514, &[("min_qlen_step", 2.0)]);
        for i in 0..3 {
            q.enqueue(pkt(i, Ecn::Ect1, 0), 0, &mut Vec::new()).unwrap();
        }
        let ecn: Vec<Ecn> = std::iter::from_fn(|| q.dequeue(5 * MS, &mut d)).map(|p| p.r.ecn()).collect();
        assert_eq!(ecn, vec![Ecn::Ect1, Ecn::Ect1, Ecn::Ce]);
        assert!(d.is_empty());
    }

    #[test]
    fn dualpi2_scheduler_gives_the_classic_queue_its_weight() {
        // MTU 1500, wc 10, wl 90, 1000 B packets: the credit starts at -120000; each L packet
        // served while C waits adds 10 x 1000, each C packet served while L waits takes
        // 90 x 1000. L goes while the credit is <= 0: 13 packets first (-120000 -> +10000),
        // then C (-80000), then 9 L (-> +10000), C, the 8 L left, then the rest of C.
        let mut q = dualpi2(1500, &[]);
        for i in 0..30 {
            q.enqueue(pkt(i, Ecn::Ect1, 0), 0, &mut Vec::new()).unwrap();
        }
        for i in 100..105 {
            q.enqueue(pkt(i, Ecn::NotEct, 0), 0, &mut Vec::new()).unwrap();
        }
        // p' = 0: a PI2 verdict needs a draw of 0 (one in 2^32); this stream draws none.
        let mut d = Vec::new();
        let mut out = Vec::new();
        let mut credits = Vec::new();
        while let Some(p) = q.dequeue(0, &mut d) {
            out.push(p.r.slot());
            credits.push(q.credit);
        }
        let mut expect: Vec<u32> = (0..13).collect();
        expect.push(100);
        expect.extend(13..22);
        expect.push(101);
        expect.extend(22..30);
        expect.extend(102..105);
        assert_eq!(out, expect);
        assert_eq!((credits[12], credits[13], credits[22], credits[23], credits[31]), (10_000, -80_000, 10_000, -80_000, 0));
        // Both empty: the credit is back at its start.
        assert_eq!((q.credit, d.len(), q.marks()), (-120_000, 0, 0));
    }

    #[test]
    fn dualpi2_probability_updates_every_tupdate_on_the_larger_head_delay() {
        let mut q = dualpi2(1514, &[]);
        let mut d = Vec::new();
        q.enqueue(pkt(0, Ecn::NotEct, 0), 0, &mut Vec::new()).unwrap();
        // The next event, at 50 ms, runs the updates of 16, 32 and 48 ms with head delays
        // 16, 32, 48 ms: delta = (qdelay - 15 ms) x 44 + (qdelay - last) x 879, p' += delta / 64:
        // 14108000000 / 64 = 220437500, + 231437500, + 242437500.
        q.enqueue(pkt(1, Ecn::Ect1, 50 * MS), 50 * MS, &mut Vec::new()).unwrap();
        assert_eq!((q.prob, q.last_qdelay, q.next_update), (694_312_500, 48 * MS, 64 * MS));
        // At 64 ms the heads have waited 64 ms (C) and 14 ms (L): the larger counts,
        // (49 ms x 44 + 16 ms x 879) / 64 = 253437500.
        assert_eq!(q.calculate_probability(64 * MS), 694_312_500 + 253_437_500);
        q.last_qdelay = 48 * MS; // undo the probe
        // Empty both queues at 50 ms; then the delay is 0: (0 - 15 ms) x 44 + (0 - 48 ms) x 879
        // = -42852000000 -> -669562500; then -660000000 / 64 = -10312500 per update, floored at 0.
        q.dequeue(50 * MS, &mut d).unwrap();
        q.dequeue(50 * MS, &mut d).unwrap();
        let mut probs = Vec::new();
        for ms in [64, 80, 96, 112] {
            assert!(q.dequeue(ms * MS, &mut d).is_none());
            probs.push(q.prob);
        }
        assert_eq!(probs, vec![24_750_000, 14_437_500, 4_125_000, 0]);
        assert!(d.is_empty());
        // An older L4S head counts the same way: 16 ms at the first update.
        let mut q = dualpi2(1514, &[]);
        q.enqueue(pkt(0, Ecn::Ect1, 0), 0, &mut Vec::new()).unwrap();
        q.enqueue(pkt(1, Ecn::NotEct, 10 * MS), 10 * MS, &mut Vec::new()).unwrap();
        q.enqueue(pkt(2, Ecn::NotEct, 16 * MS), 16 * MS, &mut Vec::new()).unwrap();
        assert_eq!(q.prob, 220_437_500);
    }

    #[test]
    fn dualpi2_drops_on_overload_while_two_mtu_are_queued() {
        // p' = 1: k p' > 1 (overload). L: 0, 1 (ECT(1)); C: 2, 3, 4 (Not-ECT), 5 (ECT(0)),
        // 6..=9 (Not-ECT); 1000 B each, MTU 1514: verdicts while 3028 B stay behind.
        for (drop_on_overload, out, dropped, marks) in [(1.0, vec![6, 7, 8, 9], vec![0, 1, 2, 3, 4, 5], 0), (0.0, vec![0, 1, 6, 7, 8, 9], vec![2, 3, 4, 5], 2)] {
            let mut q = dualpi2(1514, &[("limit", 10.0), ("drop_on_overload", drop_on_overload)]);
            q.prob = MAX_PROB;
            q.next_update = Time::MAX;
            for i in 0..10 {
                let e = match i {
                    0 | 1 => Ecn::Ect1,
                    5 => Ecn::Ect0,
                    _ => Ecn::NotEct,
                };
                q.enqueue(pkt(i, e, 0), 0, &mut Vec::new()).unwrap();
            }
            assert_eq!(q.enqueue(pkt(10, Ecn::NotEct, 0), 0, &mut Vec::new()).unwrap_err().1, DropCause::Overflow);
            let mut d = Vec::new();
            let got: Vec<u32> = std::iter::from_fn(|| q.dequeue(0, &mut d)).map(|p| p.r.slot()).collect();
            // Each roll at p' = 2^32 - 1 succeeds: L4S packets take the classic drop (or, without
            // drop_on_overload, a mark); classic packets, ECT(0) too, are dropped; the last four
            // leave less than 2 MTU behind them.
            assert_eq!(got, out);
            assert_eq!(d.iter().map(|(p, _)| p.r.slot()).collect::<Vec<_>>(), dropped);
            assert!(d.iter().all(|(_, c)| *c == DropCause::Aqm));
            assert_eq!(q.marks(), marks);
        }
    }
}
