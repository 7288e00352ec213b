//! The queue-discipline registry: each discipline's name, parameters (checked like algorithm
//! parameters), source, and whether it can mark ECN; and how a scenario's choice becomes a
//! discipline in a link direction's slot.

use super::{Fifo, Qdisc};
use crate::cc::{ParamSpec, Params};

/// A discipline's entry in the registry.
pub struct QdiscInfo {
    pub name: &'static str,
    pub summary: &'static str,
    pub source: &'static str,
    pub params: &'static [ParamSpec],
    /// It can mark ECN-capable packets instead of dropping them (`ecn = true`).
    pub can_mark: bool,
}

pub const FIFO: QdiscInfo = QdiscInfo {
    name: "fifo",
    summary: "Drop-tail first in, first out: a packet arriving to a full buffer is dropped (the default).",
    source: "Linux net/sched/sch_fifo.c (pfifo); ns-3 FifoQueueDisc",
    params: &[],
    can_mark: false,
};

pub const QDISCS: &[QdiscInfo] = &[FIFO];

pub fn find(name: &str) -> Option<&'static QdiscInfo> {
    QDISCS.iter().find(|q| q.name == name)
}

pub fn names() -> Vec<&'static str> {
    QDISCS.iter().map(|q| q.name).collect()
}

/// Rules between a discipline's parameters that their ranges cannot express; the message
/// names the parameters and values.
pub fn check(_name: &str, _params: &Params) -> Result<(), String> {
    Ok(())
}

/// What a discipline may need to know about its link direction and run.
#[derive(Debug, Clone, Copy)]
pub struct QdiscEnv {
    /// Mark ECN-capable packets instead of dropping them.
    pub ecn: bool,
    /// The largest packet on the wire (MSS + headers), bytes.
    pub mtu_bytes: u32,
    pub rate_bps: u64,
    /// The seed of the discipline's own random stream.
    pub seed: u64,
}

/// Build discipline `name` (validated) with `params` (validated, defaults filled in).
pub fn build(name: &str, _params: &Params, _env: &QdiscEnv) -> Box<dyn Qdisc> {
    match name {
        "fifo" => Box::new(Fifo::default()),
        _ => unreachable!("discipline names are validated by the scenario"),
    }
}
