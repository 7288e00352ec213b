//! The discipline registry, on the pattern of the algorithm registry (`crate::cc::ALGORITHMS`):
//! each discipline declares its name, a summary, its sources and a table of [`ParamSpec`]s;
//! [`build`] makes one from its name, validated parameters and the link it serves.
//!
//! Parameter names are Linux's `tc` names where there is one (`target`, `interval`, `limit`,
//! `flows`, `quantum`, `tupdate`, `alpha`, `beta`, `step_thresh`, `coupling_factor`, ...).
//! Times are declared with unit "ms" and given in milliseconds (f64); `tc` passes them to the
//! kernel in whole microseconds, and so does [`ms_param_ns`]. ECN is not a parameter of a
//! discipline: whether a discipline marks ECN-capable packets instead of dropping them comes
//! from the environment ([`QdiscEnv::ecn`]). Disciplines are built before the run starts: the
//! clocks of their periodic updates (PIE's and DualPI2's) start at time 0.

use super::{codel, dualpi2, fq_codel, pie, red, Fifo, Qdisc};
use crate::cc::{ParamSpec, Params};
use crate::time::{Time, US};

/// What a discipline learns from the link direction it serves.
#[derive(Debug, Clone, Copy)]
pub struct QdiscEnv {
    /// Mark ECN-capable packets (CE) where the discipline would drop them (Linux's `ecn`
    /// option of red, codel, fq_codel and pie; for dualpi2 it governs the classic queue's
    /// ECT(0) packets: the L4S queue always marks).
    pub ecn: bool,
    /// The largest packet on the wire, bytes (Linux `psched_mtu(dev)`: device MTU plus the
    /// link-layer header): CoDel's "backlog <= mtu" rule, fq_codel's default quantum, PIE's
    /// and DualPI2's "fewer than 2 MTU queued" rules, DualPI2's scheduler credit.
    pub mtu_bytes: u32,
    /// The link's rate, bits per second (RED's idle-time decay).
    pub rate_bps: u64,
    /// This discipline's own seed (the caller gives each direction its own); its random stream
    /// is `crate::rng::derive(seed, 0)` (RED, PIE, DualPI2 draws; fq_codel's hash perturbation).
    pub seed: u64,
}

/// A discipline's entry in the registry.
pub struct QdiscInfo {
    pub name: &'static str,
    pub summary: &'static str,
    pub source: &'static str,
    pub params: &'static [ParamSpec],
    /// It can mark ECN-capable packets instead of dropping them.
    pub can_mark: bool,
}

pub const FIFO_INFO: QdiscInfo = QdiscInfo {
    name: "fifo",
    summary: "Drop-tail first in, first out (the link's buffer is its only limit)",
    source: "Linux net/sched/sch_fifo.c (pfifo)",
    params: &[],
    can_mark: false,
};

pub const QDISCS: &[QdiscInfo] = &[FIFO_INFO, red::INFO, codel::INFO, fq_codel::INFO, pie::INFO, dualpi2::INFO];

pub fn find(name: &str) -> Option<&'static QdiscInfo> {
    QDISCS.iter().find(|q| q.name == name)
}

pub fn names() -> Vec<&'static str> {
    QDISCS.iter().map(|q| q.name).collect()
}

/// Rules between parameters that a [`ParamSpec`]'s range cannot express (e.g. RED's
/// `min_th <= max_th`), on parameters already checked against their ranges. The message names
/// the fields and their values.
pub fn check(name: &str, params: &Params) -> Result<(), String> {
    match name {
        "fifo" | "codel" => Ok(()),
        "red" => red::check(params),
        "fq_codel" => fq_codel::check(params),
        "pie" => pie::check(params),
        "dualpi2" => dualpi2::check(params),
        _ => Err(format!("unknown queue discipline \"{name}\"; accepted: {}", names().join(", "))),
    }
}

/// Build a discipline from its name and validated parameters (see [`check`]) for the link
/// described by `env`. `fifo` is the slot's [`Fifo`] (a direction without a discipline keeps
/// the link's own fast-path FIFO).
pub fn build(name: &str, params: &Params, env: &QdiscEnv) -> Box<dyn Qdisc> {
    match name {
        "fifo" => Box::new(Fifo::default()),
        "red" => Box::new(red::Red::from_params(params, env)),
        "codel" => Box::new(codel::Codel::from_params(params, env)),
        "fq_codel" => Box::new(fq_codel::FqCodel::from_params(params, env)),
        "pie" => Box::new(pie::Pie::from_params(params, env)),
        "dualpi2" => Box::new(dualpi2::DualPi2::from_params(params, env)),
        _ => unreachable!("discipline names are validated by the scenario"),
    }
}

/// A time parameter given in ms, in ns, rounded to a whole microsecond as `tc` passes it.
pub fn ms_param_ns(p: &Params, name: &str) -> Time {
    (p.get(name) * 1000.0).round() as Time * US
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> QdiscEnv {
        QdiscEnv { ecn: true, mtu_bytes: 1514, rate_bps: 10_000_000, seed: 7 }
    }

    #[test]
    fn registry_lists_every_discipline_with_valid_defaults() {
        assert_eq!(names(), vec!["fifo", "red", "codel", "fq_codel", "pie", "dualpi2"]);
        assert!(find("fifo").unwrap().params.is_empty());
        assert!(!find("fifo").unwrap().can_mark);
        for q in QDISCS.iter().skip(1) {
            assert!(q.can_mark, "{}", q.name);
        }
        for q in QDISCS {
            let p = Params::defaults(q.params);
            for s in q.params {
                assert!(s.default >= s.min && s.default <= s.max, "{}.{}", q.name, s.name);
                assert!(!s.doc.is_empty() && !s.unit.is_empty(), "{}.{}", q.name, s.name);
            }
            assert_eq!(check(q.name, &p), Ok(()), "{}", q.name);
            let d = build(q.name, &p, &env());
            assert_eq!((d.len(), d.bytes(), d.marks()), (0, 0, 0));
        }
        assert!(find("sfq").is_none());
        assert_eq!(check("sfq", &Params::default()), Err("unknown queue discipline \"sfq\"; accepted: fifo, red, codel, fq_codel, pie, dualpi2".to_string()));
    }

    #[test]
    fn time_parameters_are_whole_microseconds() {
        let mut p = Params::defaults(codel::PARAMS);
        p.set("target", 5.0);
        assert_eq!(ms_param_ns(&p, "target"), 5_000_000);
        p.set("target", 0.0014);
        assert_eq!(ms_param_ns(&p, "target"), 1_000);
        p.set("target", 2.5006);
        assert_eq!(ms_param_ns(&p, "target"), 2_501_000);
    }
}
