//! RED (Floyd & Jacobson 1993) with "gentle", following Linux `include/net/red.h` and
//! `net/sched/sch_red.c`, with ns-3's `RedQueueDisc` as a cross-check.
//!
//! On each arrival (`red_enqueue`): the average queue is updated (`red_calc_qavg`), the
//! average is compared with the thresholds (`red_action`), and the packet is queued, marked or
//! dropped. As in Linux:
//! - avg = (1 - w) avg + w q, with q the packets waiting when the packet arrives (not itself,
//!   not the one being serialised) (`red_calc_qavg_no_idle_time`);
//! - after an idle period the average decays instead, without a sample
//!   (`red_calc_qavg_from_idle_time`): idle starts when a dequeue finds the queue empty
//!   (`red_dequeue` -> `red_start_of_idle_period`) and ends at the next arrival;
//! - between the thresholds, marks are spaced by Linux's count method (`red_action`,
//!   `red_mark_probability`): after each mark (and on entering the region) a uniform R in
//!   [0, 1) is drawn (Linux's `qR` over [0, 2^32 / (max_P / delta)), scaled), the count of
//!   packets since then is kept in `qcount`, and a packet is marked when p_b * qcount >= R. The
//!   first packet in the region only draws R. This makes the gap between marks uniform in
//!   1..1/p_b, the distribution Floyd & Jacobson's p_a = p_b / (1 - count p_b) gives;
//! - at or above max_th (2 max_th when gentle) every packet is marked (`RED_HARD_MARK`), and
//!   `harddrop` drops them even if ECN-capable (`TC_RED_HARDDROP`);
//! - a mark is an ECN CE mark when the environment enables ECN and the packet is
//!   ECN-capable, else a drop (`red_use_ecn`, `INET_ECN_set_ce`).
//!
//! Deliberate differences from Linux, each documented where it is coded:
//! - the average and the thresholds are in packets and in floating point (ns-3's packet
//!   mode), where Linux counts bytes (`qstats.backlog`) in fixed point with `Wlog` (so `weight`
//!   need not be a power of two, and p_b is not truncated to whole units of `(qavg - qth_min)
//!   >> Wlog`);
//! - the idle decay is the formula Linux's table approximates: avg *= (1 - w)^m with
//!   m = idle time / (avpkt at the link's rate), as ns-3's `Estimator` (Linux looks the shift up
//!   in tc's `Stab` table, a power-of-two approximation, linear for short idle periods);
//! - gentle RED (Floyd 2000) is not in Linux's sch_red: between max_th and 2 max_th,
//!   p_b = max_p + (1 - max_p) (avg - max_th) / max_th (ns-3 `CalculatePNew`), spaced by the
//!   same count method;
//! - adaptive RED (`TC_RED_ADAPTATIVE`), `nodrop` and the byte limit are not modelled: the
//!   link's `buffer` is the hard limit.
//!
//! Step mode: `min_th == max_th == K` is the DCTCP marker (Alizadeh et al. 2010; Linux RED with
//! `Wlog` 0 and qth_min = qth_max): the average is the instantaneous queue, and every packet
//! arriving to a queue of K or more packets is marked (or dropped: not ECN-capable, ECN off or
//! `harddrop`); `weight`, `max_p`, `gentle` and the idle decay play no part.

use super::registry::{QdiscEnv, QdiscInfo};
use super::{DropCause, PacketQueue, Qdisc, Queued};
use crate::cc::{ParamSpec, Params};
use crate::net::Ecn;
use crate::rng::Rng;
use crate::time::{tx_time, Time};
use rand::Rng as _;

pub const PARAMS: &[ParamSpec] = &[
    ParamSpec::num("min_th", 5.0, 0.0, 1e7, "pkts", "Average queue below which nothing is marked (ns-3 RedQueueDisc MinTh)."),
    ParamSpec::num("max_th", 15.0, 1.0, 1e7, "pkts", "Average queue at which p_b reaches max_p; min_th = max_th is the DCTCP step marker (ns-3 MaxTh)."),
    ParamSpec::num("max_p", 0.02, 0.0, 1.0, "prob", "p_b at max_th (tc red `probability`; ns-3 1/LInterm = 1/50)."),
    ParamSpec::num("weight", 0.002, 1e-9, 1.0, "1", "w_q of the average queue EWMA (Floyd & Jacobson 1993 sec. 11; ns-3 QW)."),
    ParamSpec::flag("gentle", true, "p_b rises from max_p to 1 between max_th and 2 max_th instead of jumping to 1 (Floyd 2000; ns-3 Gentle)."),
    ParamSpec::flag("harddrop", false, "At or above the hard threshold drop even ECN-capable packets (tc red `harddrop`)."),
    ParamSpec::num("avpkt", 1000.0, 1.0, 1e6, "bytes", "Mean packet size for the idle-time decay: m = idle / (avpkt / rate) (tc red `avpkt`)."),
];

pub const INFO: QdiscInfo = QdiscInfo {
    name: "red",
    summary: "Random Early Detection: marks or drops arrivals with a probability rising with the average queue (gentle; min_th = max_th is a DCTCP step marker)",
    source: "Floyd & Jacobson 1993; Linux include/net/red.h, net/sched/sch_red.c; ns-3 RedQueueDisc",
    params: PARAMS,
    can_mark: true,
};

/// `min_th <= max_th`.
pub fn check(p: &Params) -> Result<(), String> {
    let (lo, hi) = (p.get("min_th"), p.get("max_th"));
    if lo > hi {
        return Err(format!("min_th ({lo}) must not exceed max_th ({hi})"));
    }
    Ok(())
}

#[derive(Debug, Clone)]
pub struct RedConfig {
    pub min_th: f64,
    pub max_th: f64,
    pub max_p: f64,
    pub weight: f64,
    pub gentle: bool,
    pub harddrop: bool,
    pub avpkt: u32,
}

impl RedConfig {
    pub fn from_params(p: &Params) -> Self {
        RedConfig {
            min_th: p.get("min_th"),
            max_th: p.get("max_th"),
            max_p: p.get("max_p"),
            weight: p.get("weight"),
            gentle: p.flag("gentle"),
            harddrop: p.flag("harddrop"),
            avpkt: p.get("avpkt") as u32,
        }
    }
}

impl Default for RedConfig {
    fn default() -> Self {
        Self::from_params(&Params::defaults(PARAMS))
    }
}

/// `red_action`'s verdicts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    DontMark,
    /// A probabilistic mark between the thresholds (`RED_PROB_MARK`).
    ProbMark,
    /// At or above the hard threshold (`RED_HARD_MARK`).
    HardMark,
}

pub struct Red {
    q: PacketQueue,
    cfg: RedConfig,
    ecn: bool,
    /// min_th == max_th: the instantaneous step marker.
    step: bool,
    /// Average queue, packets (`red_vars.qavg`).
    pub avg: f64,
    /// Packets since the last mark or the entry to the marking region, -1 outside it
    /// (`red_vars.qcount`).
    pub qcount: i64,
    /// The current uniform draw in [0, 1) (`red_vars.qR`, normalised).
    pub q_r: f64,
    /// Start of the current idle period (`red_vars.qidlestart`; None = not idle).
    idle_since: Option<Time>,
    /// Serialisation time of an average packet, ns (the idle decay's unit).
    avpkt_time: f64,
    rng: Rng,
    marks: u64,
}

impl Red {
    /// A RED queue on a link of `rate_bps` (the idle decay), marking when `ecn`.
    pub fn new(cfg: RedConfig, ecn: bool, rate_bps: u64, seed: u64) -> Self {
        let avpkt_time = if rate_bps > 0 { tx_time(cfg.avpkt as u64, rate_bps) as f64 } else { f64::INFINITY };
        Red {
            q: PacketQueue::default(),
            step: cfg.min_th == cfg.max_th,
            cfg,
            ecn,
            avg: 0.0,
            qcount: -1,
            q_r: 0.0,
            idle_since: None,
            avpkt_time,
            rng: crate::rng::derive(seed, 0),
            marks: 0,
        }
    }

    pub fn from_params(p: &Params, env: &QdiscEnv) -> Self {
        Red::new(RedConfig::from_params(p), env.ecn, env.rate_bps, env.seed)
    }

    /// p_b for an average queue `avg` between min_th and the hard threshold: linear from 0 at
    /// min_th to max_p at max_th, then (gentle) from max_p to 1 at 2 max_th (ns-3
    /// `CalculatePNew`; Linux: max_P (qavg - qth_min) / (qth_max - qth_min)).
    pub fn prob(&self, avg: f64) -> f64 {
        let c = &self.cfg;
        if avg < c.max_th {
            c.max_p * (avg - c.min_th) / (c.max_th - c.min_th)
        } else {
            c.max_p + (1.0 - c.max_p) * (avg - c.max_th) / c.max_th
        }
    }

    /// `red_calc_qavg`: the average on an arrival at `now` to `backlog` waiting packets.
    fn calc_qavg(&self, backlog: usize, now: Time) -> f64 {
        if self.step {
            // Wlog = 0: the average is the instantaneous queue.
            return backlog as f64;
        }
        let w = self.cfg.weight;
        match self.idle_since {
            // red_calc_qavg_no_idle_time: qavg = qavg (1 - W) + backlog W.
            None => (1.0 - w) * self.avg + w * backlog as f64,
            // red_calc_qavg_from_idle_time: the m average packets the idle link could have
            // sent each age the average by one step (Floyd & Jacobson 1993 sec. 11).
            Some(t0) => {
                let m = (now - t0) as f64 / self.avpkt_time;
                self.avg * (1.0 - w).powf(m)
            }
        }
    }

    /// `red_action` (with the gentle region).
    pub fn action(&mut self, avg: f64) -> Action {
        let c = &self.cfg;
        let hard = if self.step || !c.gentle { c.max_th } else { 2.0 * c.max_th };
        if avg < c.min_th {
            self.qcount = -1;
            Action::DontMark
        } else if avg >= hard {
            self.qcount = -1;
            Action::HardMark
        } else {
            self.qcount += 1;
            if self.qcount != 0 {
                // red_mark_probability: !(p_b * qcount < R).
                if self.prob(avg) * self.qcount as f64 >= self.q_r {
                    self.qcount = 0;
                    self.q_r = self.rng.gen::<f64>();
                    return Action::ProbMark;
                }
            } else {
                self.q_r = self.rng.gen::<f64>();
            }
            Action::DontMark
        }
    }
}

impl Qdisc for Red {
    /// `red_enqueue`.
    fn enqueue(&mut self, mut p: Queued, now: Time, _dropped: &mut Vec<(Queued, DropCause)>) -> Result<(), (Queued, DropCause)> {
        self.avg = self.calc_qavg(self.q.len(), now);
        self.idle_since = None;
        let can_mark = self.ecn && p.r.ecn().capable();
        match self.action(self.avg) {
            Action::DontMark => {}
            // Mark if ECN is on and the packet is ECN-capable, else drop (red_use_ecn,
            // INET_ECN_set_ce); at the hard threshold harddrop drops even those.
            Action::ProbMark | Action::HardMark if !can_mark => return Err((p, DropCause::Aqm)),
            Action::HardMark if self.cfg.harddrop => return Err((p, DropCause::Aqm)),
            Action::ProbMark | Action::HardMark => {
                p.r.set_ecn(Ecn::Ce);
                self.marks += 1;
            }
        }
        self.q.push(p);
        Ok(())
    }
    /// `red_dequeue`: an empty queue starts an idle period.
    fn dequeue(&mut self, now: Time, _dropped: &mut Vec<(Queued, DropCause)>) -> Option<Queued> {
        match self.q.pop() {
            Some(p) => Some(p),
            None => {
                if self.idle_since.is_none() {
                    self.idle_since = Some(now);
                }
                None
            }
        }
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
    use crate::time::MS;

    fn pkt(slot: u32, ecn: Ecn) -> Queued {
        Queued { r: Routed::from_parts(0, 1000, 0, false, ecn, slot), arrived: 0 }
    }

    fn cfg(min_th: f64, max_th: f64, max_p: f64, weight: f64, gentle: bool) -> RedConfig {
        RedConfig { min_th, max_th, max_p, weight, gentle, harddrop: false, avpkt: 1000 }
    }

    #[test]
    fn red_average_queue_is_the_ewma_of_arrivals_and_decays_when_idle() {
        // w = 1/2, thresholds out of reach; 8 Mb/s: an average packet (1000 B) takes 1 ms.
        let mut r = Red::new(cfg(100.0, 200.0, 0.1, 0.5, true), false, 8_000_000, 1);
        let mut d = Vec::new();
        // Five arrivals see 0, 1, 2, 3, 4 packets waiting:
        // avg = 0, 0.5, 0.5 x 0.5 + 0.5 x 2 = 1.25, 2.125, 3.0625.
        let mut avgs = Vec::new();
        for i in 0..5 {
            r.enqueue(pkt(i, Ecn::NotEct), 0, &mut Vec::new()).unwrap();
            avgs.push(r.avg);
        }
        assert_eq!(avgs, vec![0.0, 0.5, 1.25, 2.125, 3.0625]);
        // Two leave; the next arrival sees 3: 0.5 x 3.0625 + 0.5 x 3 = 3.03125.
        r.dequeue(MS, &mut d);
        r.dequeue(2 * MS, &mut d);
        r.enqueue(pkt(5, Ecn::NotEct), 2 * MS, &mut Vec::new()).unwrap();
        assert_eq!(r.avg, 3.03125);
        // The queue empties at 6 ms (the dequeue that finds it empty starts the idle period);
        // an arrival 3 ms later: m = 3 average packet times, avg = 3.03125 x 0.5^3, no sample.
        for t in 3..=6 {
            r.dequeue(t * MS, &mut d);
        }
        assert!(r.is_empty());
        r.dequeue(6 * MS, &mut d);
        r.enqueue(pkt(6, Ecn::NotEct), 9 * MS, &mut Vec::new()).unwrap();
        assert_eq!(r.avg, 0.37890625);
        // Not idle any more: the next arrival (1 waiting) is a plain sample again.
        r.enqueue(pkt(7, Ecn::NotEct), 9 * MS, &mut Vec::new()).unwrap();
        assert_eq!(r.avg, 0.5 * 0.37890625 + 0.5);
        assert_eq!(r.marks(), 0);
    }

    #[test]
    fn red_probability_is_linear_then_gentle() {
        // min_th 4, max_th 12, max_p 1/4 (values exact in binary).
        let r = Red::new(cfg(4.0, 12.0, 0.25, 0.002, true), false, 8_000_000, 1);
        // Linear: max_p (avg - min_th) / (max_th - min_th).
        assert_eq!(r.prob(4.0), 0.0);
        assert_eq!(r.prob(8.0), 0.125);
        assert_eq!(r.prob(10.0), 0.1875);
        // Gentle: max_p + (1 - max_p) (avg - max_th) / max_th, from 1/4 at 12 to 1 at 24.
        assert_eq!(r.prob(12.0), 0.25);
        assert_eq!(r.prob(18.0), 0.625);
        assert_eq!(r.prob(21.0), 0.8125);
        let mut r = r;
        assert_eq!(r.action(3.5), Action::DontMark);
        assert_eq!(r.qcount, -1);
        assert_eq!(r.action(23.5), Action::DontMark); // enters the region: qcount 0, draws R
        assert_eq!(r.qcount, 0);
        assert_eq!(r.action(24.0), Action::HardMark);
        assert_eq!(r.qcount, -1);
        // Without gentle, max_th is the hard threshold.
        let mut r = Red::new(cfg(4.0, 12.0, 0.25, 0.002, false), false, 8_000_000, 1);
        assert_eq!(r.action(11.9), Action::DontMark);
        assert_eq!(r.action(12.0), Action::HardMark);
    }

    #[test]
    fn red_spaces_marks_by_count_as_linux() {
        let mut r = Red::new(cfg(4.0, 12.0, 0.25, 0.002, true), true, 8_000_000, 1);
        // p_b = 0.125 at avg 8. The first packet in the region only draws R, whatever R was.
        r.q_r = 0.0;
        assert_eq!(r.action(8.0), Action::DontMark);
        assert_eq!(r.qcount, 0);
        // With R = 0.3: marked when 0.125 x qcount >= 0.3, i.e. at qcount 3.
        r.q_r = 0.3;
        let a: Vec<Action> = (0..3).map(|_| r.action(8.0)).collect();
        assert_eq!(a, vec![Action::DontMark, Action::DontMark, Action::ProbMark]);
        assert_eq!(r.qcount, 0);
        // With R = 0.99: at qcount 8 (0.125 x 8 = 1 >= 0.99).
        r.q_r = 0.99;
        let a: Vec<Action> = (0..8).map(|_| r.action(8.0)).collect();
        assert_eq!(a.iter().position(|&x| x == Action::ProbMark), Some(7));
        assert_eq!(a.iter().filter(|&&x| x == Action::ProbMark).count(), 1);
        // Leaving the region resets the count.
        r.action(3.0);
        assert_eq!(r.qcount, -1);
        // In the gentle region the same rule with p_b = 0.625 (avg 18): R = 0.9 -> qcount 2.
        r.action(18.0);
        r.q_r = 0.9;
        assert_eq!((r.action(18.0), r.action(18.0)), (Action::DontMark, Action::ProbMark));
    }

    #[test]
    fn red_marks_ecn_capable_packets_and_drops_the_others() {
        // w = 1: the average is the queue seen, min 1, max 2 (not a step: 1 != 2), max_p 1:
        // an arrival to 1 waiting is in the region (p_b 0); to 2 or more (gentle, < 4) p_b >= 1.
        let mut r = Red::new(cfg(1.0, 2.0, 1.0, 1.0, true), true, 8_000_000, 1);
        r.enqueue(pkt(0, Ecn::Ect0), 0, &mut Vec::new()).unwrap(); // sees 0
        r.enqueue(pkt(1, Ecn::Ect0), 0, &mut Vec::new()).unwrap(); // sees 1: enters, draws R
        let p = r.enqueue(pkt(2, Ecn::NotEct), 0, &mut Vec::new()).unwrap_err(); // sees 2: p_b 1 -> mark -> drop
        assert_eq!((p.0.r.slot(), p.1), (2, DropCause::Aqm));
        r.enqueue(pkt(3, Ecn::Ect1), 0, &mut Vec::new()).unwrap(); // sees 2 again: qcount 1, p_b 1 -> marked
        assert_eq!(r.marks(), 1);
        let mut d = Vec::new();
        let ecn: Vec<Ecn> = std::iter::from_fn(|| r.dequeue(0, &mut d)).map(|p| p.r.ecn()).collect();
        assert_eq!(ecn, vec![Ecn::Ect0, Ecn::Ect0, Ecn::Ce]);
    }

    #[test]
    fn red_step_marks_exactly_the_arrivals_to_k_or_more() {
        // DCTCP: K = 3, ECN on; weight and max_p play no part.
        let mut r = Red::new(cfg(3.0, 3.0, 0.0, 0.002, true), true, 8_000_000, 1);
        let mut d = Vec::new();
        let mut marked = Vec::new();
        // Arrivals to 0..5 waiting: the 4th, 5th and 6th are marked.
        for i in 0..6 {
            r.enqueue(pkt(i, Ecn::Ect0), 0, &mut Vec::new()).unwrap();
        }
        // Four leave (2 waiting): an arrival to 2 passes, the next (to 3) is marked.
        for _ in 0..4 {
            marked.push(r.dequeue(0, &mut d).unwrap().r.ecn() == Ecn::Ce);
        }
        r.enqueue(pkt(6, Ecn::Ect0), 0, &mut Vec::new()).unwrap();
        r.enqueue(pkt(7, Ecn::Ect0), 0, &mut Vec::new()).unwrap();
        marked.extend(std::iter::from_fn(|| r.dequeue(0, &mut d)).map(|p| p.r.ecn() == Ecn::Ce));
        assert_eq!(marked, vec![false, false, false, true, true, true, false, true]);
        assert_eq!(r.marks(), 4);
        // A Not-ECT arrival to K is dropped; with harddrop an ECN-capable one is too.
        for i in 0..3 {
            r.enqueue(pkt(10 + i, Ecn::Ect0), 0, &mut Vec::new()).unwrap();
        }
        assert_eq!(r.enqueue(pkt(13, Ecn::NotEct), 0, &mut Vec::new()).unwrap_err().1, DropCause::Aqm);
        let mut hard = Red::new(RedConfig { harddrop: true, ..cfg(3.0, 3.0, 0.0, 0.002, true) }, true, 8_000_000, 1);
        for i in 0..3 {
            hard.enqueue(pkt(i, Ecn::Ect0), 0, &mut Vec::new()).unwrap();
        }
        assert_eq!(hard.enqueue(pkt(3, Ecn::Ect0), 0, &mut Vec::new()).unwrap_err().1, DropCause::Aqm);
        assert_eq!(hard.marks(), 0);
    }

    #[test]
    fn red_check_rejects_min_above_max() {
        let mut p = Params::defaults(PARAMS);
        assert_eq!(check(&p), Ok(()));
        p.set("min_th", 20.0);
        assert_eq!(check(&p), Err("min_th (20) must not exceed max_th (15)".to_string()));
        p.set("max_th", 20.0);
        assert_eq!(check(&p), Ok(()));
    }
}
