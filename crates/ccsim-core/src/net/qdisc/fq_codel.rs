//! FQ-CoDel (RFC 8290) as Linux `net/sched/sch_fq_codel.c` implements it: packets are hashed
//! into `flows` queues, each with its own CoDel state machine ([`super::codel::CodelVars`]);
//! queues are served by deficit round robin (a quantum of bytes per round), newly active
//! queues first (the new_flows list) before the old ones (old_flows).
//!
//! As in Linux:
//! - classification is `reciprocal_scale(hash, flows)`; ccsim hashes its flow id (one number
//!   per connection, the same for data and ACKs) with `jhash_1word` (include/linux/jhash.h)
//!   keyed by a perturbation drawn from the seed, where Linux hashes the 5-tuple with the flow
//!   dissector's (symmetric) hash keyed by a boot-time random value. So two flows may share a
//!   queue, as in Linux, and which ones do is fixed by the seed;
//! - enqueue (`fq_codel_enqueue`): the packet joins its queue's tail; an empty queue not on
//!   either list joins the tail of new_flows with `deficit = quantum`; when the discipline then
//!   holds more than `limit` packets, packets are dropped from the head of the queue with the
//!   largest byte backlog (`fq_codel_drop`), which may be the arriving packet's own;
//! - dequeue (`fq_codel_dequeue`): the head queue of new_flows (else old_flows); a queue whose
//!   deficit is spent gets another quantum and moves to the tail of old_flows; else CoDel
//!   dequeues from it (dropping or marking on the way); a queue CoDel finds empty moves from
//!   new_flows to old_flows if old_flows is not empty (so a flow cannot stay "new" by
//!   emptying its queue every round), else leaves the lists; the served packet's bytes are
//!   taken from the deficit;
//! - CoDel's "backlog <= mtu" rule reads the whole discipline's backlog, not the flow's
//!   (`codel_dequeue(sch, &sch->qstats.backlog, ...)`), and all queues share one
//!   `codel_params` and one `codel_stats`.
//!
//! ECN comes from the environment: Linux's fq_codel marks by default (`cparams.ecn = true` in
//! `fq_codel_init`, where sch_codel does not); here both follow [`QdiscEnv::ecn`].
//!
//! - Over the limit, `fq_codel_drop` drops a batch from the head of the fattest queue: packets
//!   until half of that queue's bytes are gone, at most `drop_batch_size` (Linux's default 64;
//!   to amortise the linear search for the fattest queue, says `fq_codel_enqueue`). The
//!   arrival stays queued unless the batch reached it.
//!
//! Deliberate differences from Linux:
//! - `memory_limit` (32 MB of `skb->truesize`) is not modelled: `limit` (packets) and the
//!   link's `buffer` bound the queue; `ce_threshold` and external classifiers are not modelled.
//!
//! Memory: nothing is allocated until the first packet; then the bucket index (4 bytes per
//! bucket) and one queue per bucket in use, each a ring buffer that keeps its capacity, so a
//! warmed-up discipline allocates nothing per packet.

use super::codel::{CodelParams, CodelSource, CodelStats, CodelVars};
use super::registry::{ms_param_ns, QdiscEnv, QdiscInfo};
use super::{DropCause, Qdisc, Queued};
use crate::cc::{ParamSpec, Params};
use crate::time::Time;
use rand::RngCore as _;
use std::collections::VecDeque;

pub const PARAMS: &[ParamSpec] = &[
    ParamSpec::num("target", 5.0, 0.001, 60_000.0, "ms", "CoDel target of every flow queue (RFC 8290 defaults; Linux codel_params_init)."),
    ParamSpec::num("interval", 100.0, 0.001, 600_000.0, "ms", "CoDel interval of every flow queue (RFC 8290 defaults)."),
    ParamSpec::int("limit", 10240.0, 1.0, 1e9, "pkts", "Packets held in all queues before the fattest queue loses its head (fq_codel_init: 10*1024)."),
    ParamSpec::int("flows", 1024.0, 1.0, 65536.0, "queues", "Number of flow queues the hash spreads flows over (fq_codel_init; at most 65536 as fq_codel_change)."),
    ParamSpec::int("quantum", 0.0, 0.0, 1e9, "bytes", "DRR quantum: bytes a queue may send per round; 0 = the link's MTU as Linux (psched_mtu); else at least 256."),
    ParamSpec::int(
        "drop_batch_size",
        64.0,
        1.0,
        1e6,
        "pkts",
        "Over the limit, drop from the fattest queue's head until half its bytes are gone, at most this many (fq_codel_init: 64).",
    ),
];

pub const INFO: QdiscInfo = QdiscInfo {
    name: "fq_codel",
    summary: "Flow-queue CoDel: hashed per-flow queues served by deficit round robin with new-flow priority, CoDel on each queue",
    source: "RFC 8290; Linux net/sched/sch_fq_codel.c, include/net/codel_impl.h",
    params: PARAMS,
    can_mark: true,
};

/// Linux's smallest quantum (`fq_codel_change`: `max(256U, quantum)`).
const MIN_QUANTUM: f64 = 256.0;
/// Linux's default `drop_batch_size` (fq_codel_init).
pub const LINUX_DROP_BATCH_SIZE: usize = 64;
/// A bucket with no queue yet.
const NONE: u32 = u32::MAX;

/// `quantum` is 0 (the MTU) or at least 256.
pub fn check(p: &Params) -> Result<(), String> {
    let q = p.get("quantum");
    if q != 0.0 && q < MIN_QUANTUM {
        return Err(format!("quantum ({q}) must be 0 (the link's MTU) or at least {MIN_QUANTUM} bytes"));
    }
    Ok(())
}

/// `jhash_1word` (include/linux/jhash.h: `__jhash_nwords(a, 0, 0, initval + JHASH_INITVAL +
/// (1 << 2))`, then `__jhash_final`).
pub fn jhash_1word(a: u32, initval: u32) -> u32 {
    const JHASH_INITVAL: u32 = 0xdead_beef;
    let iv = initval.wrapping_add(JHASH_INITVAL).wrapping_add(1 << 2);
    let (mut a, mut b, mut c) = (a.wrapping_add(iv), iv, iv);
    c ^= b;
    c = c.wrapping_sub(b.rotate_left(14));
    a ^= c;
    a = a.wrapping_sub(c.rotate_left(11));
    b ^= a;
    b = b.wrapping_sub(a.rotate_left(25));
    c ^= b;
    c = c.wrapping_sub(b.rotate_left(16));
    a ^= c;
    a = a.wrapping_sub(c.rotate_left(4));
    b ^= a;
    b = b.wrapping_sub(a.rotate_left(14));
    c ^= b;
    c = c.wrapping_sub(b.rotate_left(24));
    c
}

/// Linux `struct fq_codel_flow` with its entry of `q->backlogs`. What every packet's
/// enqueue and DRR step read comes first, CoDel's state after it (`repr(C)`: in the order
/// given).
#[derive(Debug, Default)]
#[repr(C)]
struct Flow {
    q: VecDeque<Queued>,
    /// Bytes queued (`q->backlogs[idx]`).
    backlog: u64,
    deficit: i64,
    /// The next queue on its list (`flowchain`); the tail's is the head (see [`Chain`]).
    next: u32,
    /// On new_flows or old_flows (`!list_empty(&flow->flowchain)`).
    listed: bool,
    cvars: CodelVars,
    /// Its bucket (for the lists, which hold positions in `FqCodel::flows`).
    bucket: u32,
}

/// A FIFO list of flow queues linked through their `next` field, as Linux links them through
/// `flowchain` (`list_add_tail`, `list_move_tail`, `list_del_init`). The links close in a
/// circle (the tail's `next` is the head, as Linux's list head closes its circle), so that
/// moving the head of a list to its own tail, done for nearly every packet (a quantum of one
/// MTU is spent by one full-size packet), is two stores to the list and none to the queues:
/// the order of the queues is the same as with a list that ends.
#[derive(Debug, Clone, Copy)]
struct Chain {
    head: u32,
    tail: u32,
}

impl Chain {
    const EMPTY: Chain = Chain { head: NONE, tail: NONE };

    #[inline]
    fn is_empty(&self) -> bool {
        self.head == NONE
    }

    /// The queues in order (tests).
    #[cfg(test)]
    fn len(&self, flows: &[Flow]) -> usize {
        let mut n = 0;
        let mut at = self.head;
        while at != NONE {
            n += 1;
            at = if at == self.tail { NONE } else { flows[at as usize].next };
        }
        n
    }

    /// `list_add_tail`: `pos` (on no list) joins the tail.
    #[inline]
    fn push_back(&mut self, flows: &mut [Flow], pos: u32) {
        if self.head == NONE {
            self.head = pos;
        } else {
            flows[self.tail as usize].next = pos;
        }
        flows[pos as usize].next = self.head;
        self.tail = pos;
    }

    /// Take the head (the list is not empty) off the list.
    #[inline]
    fn pop_front(&mut self, flows: &mut [Flow]) {
        let h = self.head;
        if h == self.tail {
            *self = Chain::EMPTY;
        } else {
            self.head = flows[h as usize].next;
            flows[self.tail as usize].next = self.head;
        }
    }

    /// `list_move_tail` of the head (the list is not empty) onto this same list: with the
    /// links in a circle the head becomes the tail and its successor the head.
    #[inline]
    fn rotate(&mut self, flows: &[Flow]) {
        self.tail = self.head;
        self.head = flows[self.head as usize].next;
    }
}

pub struct FqCodel {
    buckets: u32,
    quantum: i64,
    limit: usize,
    drop_batch_size: usize,
    perturbation: u32,
    params: CodelParams,
    pub stats: CodelStats,
    /// Bucket -> position in `flows` (NONE until used); empty until the first packet.
    index: Vec<u32>,
    flows: Vec<Flow>,
    new_flows: Chain,
    old_flows: Chain,
    len: usize,
    bytes: u64,
    /// Queues that became new (`new_flow_count`).
    pub new_flow_count: u64,
    /// Packets dropped over the limit (`drop_overlimit`).
    pub drop_overlimit: u64,
    /// Per flow id below [`MEMO_FLOWS`]: its queue's position in `flows` (NONE until its first
    /// packet). The hash is a pure function of the flow id, so this only saves computing it
    /// and looking up `index` for every packet; it grows with the highest id seen.
    by_flow: Vec<u32>,
    /// For higher ids (a workload's flows): the last such arrival's id and queue position, as
    /// their packets come in bursts.
    last_high: Option<(u32, u32)>,
}

/// Flow ids whose queue position [`FqCodel`] remembers (4 bytes each, at most 256 KB); for
/// higher ids it remembers the last one.
const MEMO_FLOWS: usize = 1 << 16;

/// One flow queue and the discipline's totals as a [`CodelSource`] (`dequeue_func`).
struct FlowSource<'a> {
    q: &'a mut VecDeque<Queued>,
    backlog: &'a mut u64,
    len: &'a mut usize,
    bytes: &'a mut u64,
}

impl CodelSource for FlowSource<'_> {
    fn pop(&mut self) -> Option<Queued> {
        let p = self.q.pop_front()?;
        *self.backlog -= p.r.bytes() as u64;
        *self.len -= 1;
        *self.bytes -= p.r.bytes() as u64;
        Some(p)
    }
    /// The whole discipline's backlog (`&sch->qstats.backlog`).
    fn backlog(&self) -> u64 {
        *self.bytes
    }
}

impl FqCodel {
    /// `buckets` flow queues, DRR `quantum` bytes, `limit` packets; `perturbation` keys the hash.
    pub fn new(params: CodelParams, buckets: u32, quantum: u32, limit: usize, perturbation: u32) -> Self {
        assert!(buckets >= 1 && quantum >= 1);
        FqCodel {
            buckets,
            quantum: quantum as i64,
            limit,
            drop_batch_size: LINUX_DROP_BATCH_SIZE,
            perturbation,
            params,
            stats: CodelStats::default(),
            index: Vec::new(),
            flows: Vec::new(),
            new_flows: Chain::EMPTY,
            old_flows: Chain::EMPTY,
            len: 0,
            bytes: 0,
            new_flow_count: 0,
            drop_overlimit: 0,
            by_flow: Vec::new(),
            last_high: None,
        }
    }

    pub fn from_params(p: &Params, env: &QdiscEnv) -> Self {
        let params = CodelParams::new(ms_param_ns(p, "target"), ms_param_ns(p, "interval"), env.mtu_bytes, env.ecn);
        let quantum = match p.get("quantum") as u32 {
            0 => env.mtu_bytes,
            q => q,
        };
        let perturbation = crate::rng::derive(env.seed, 0).next_u32();
        let mut q = FqCodel::new(params, p.get("flows") as u32, quantum, p.get("limit") as usize, perturbation);
        q.drop_batch_size = p.get("drop_batch_size") as usize;
        q
    }

    /// The queue of flow id `flow` (`fq_codel_hash`: `reciprocal_scale(hash, flows_cnt)`).
    pub fn bucket(&self, flow: u32) -> u32 {
        ((jhash_1word(flow, self.perturbation) as u64 * self.buckets as u64) >> 32) as u32
    }

    /// The position in `flows` of bucket `b`'s queue, made on first use.
    fn flow_of(&mut self, b: u32) -> usize {
        if self.index.is_empty() {
            self.index = vec![NONE; self.buckets as usize];
        }
        if self.index[b as usize] == NONE {
            self.index[b as usize] = self.flows.len() as u32;
            self.flows.push(Flow { bucket: b, next: NONE, ..Flow::default() });
        }
        self.index[b as usize] as usize
    }

    /// The position of flow id `flow`'s queue when `by_flow` does not have it: hashed, then
    /// remembered in `by_flow` (ids below [`MEMO_FLOWS`]) or as the last high id.
    #[inline(never)]
    fn position_of(&mut self, flow: u32) -> usize {
        let id = flow as usize;
        if id >= MEMO_FLOWS {
            if let Some((f, pos)) = self.last_high {
                if f == flow {
                    return pos as usize;
                }
            }
        }
        let pos = self.flow_of(self.bucket(flow));
        if id < MEMO_FLOWS {
            if self.by_flow.len() <= id {
                self.by_flow.resize(id + 1, NONE);
            }
            self.by_flow[id] = pos as u32;
        } else {
            self.last_high = Some((flow, pos as u32));
        }
        pos
    }

    /// `fq_codel_enqueue`: queue `pos`, on no list, joins the tail of new_flows with a quantum.
    #[inline(never)]
    fn activate(&mut self, pos: usize) {
        let f = &mut self.flows[pos];
        f.listed = true;
        f.deficit = self.quantum;
        self.new_flows.push_back(&mut self.flows, pos as u32);
        self.new_flow_count += 1;
    }

    /// `fq_codel_enqueue` over the limit: a batch from the fattest queue's head.
    #[cold]
    #[inline(never)]
    fn drop_over_limit(&mut self, dropped: &mut Vec<(Queued, DropCause)>) {
        self.drop_fattest(self.drop_batch_size, |d| dropped.push((d, DropCause::Overflow)));
    }

    /// `fq_codel_dequeue` found queue `pos`, the head of new_flows (`from_new`) or else of
    /// old_flows, empty: a new queue passes through old_flows (if any) to prevent starvation;
    /// otherwise it leaves the lists.
    #[inline(never)]
    fn emptied(&mut self, pos: u32, from_new: bool) {
        if from_new {
            self.new_flows.pop_front(&mut self.flows);
            if !self.old_flows.is_empty() {
                self.old_flows.push_back(&mut self.flows, pos);
                return;
            }
        } else {
            self.old_flows.pop_front(&mut self.flows);
        }
        self.flows[pos as usize].listed = false;
    }

    /// `fq_codel_drop`: drop from the head of the queue with the largest backlog (the lowest
    /// bucket among equals) until half its bytes are gone or `max_packets` are; each goes to
    /// `drop`. Returns the bucket.
    pub fn drop_fattest(&mut self, max_packets: usize, mut drop: impl FnMut(Queued)) -> u32 {
        // Linux scans every bucket; ccsim scans the buckets in use, in bucket order.
        let mut best: Option<(u64, u32)> = None;
        for &pos in self.index.iter().filter(|&&i| i != NONE) {
            let f = &self.flows[pos as usize];
            if f.backlog > best.map_or(0, |(b, _)| b) {
                best = Some((f.backlog, f.bucket));
            }
        }
        let (maxbacklog, bucket) = best.expect("a queue over its limit holds packets");
        let threshold = maxbacklog >> 1;
        let f = &mut self.flows[self.index[bucket as usize] as usize];
        let (mut len, mut i) = (0u64, 0usize);
        loop {
            let p = f.q.pop_front().expect("the fattest queue holds packets");
            len += p.r.bytes() as u64;
            drop(p);
            i += 1;
            if i >= max_packets || len >= threshold {
                break;
            }
        }
        f.backlog -= len;
        self.bytes -= len;
        self.len -= i;
        self.drop_overlimit += i as u64;
        bucket
    }
}

impl Qdisc for FqCodel {
    /// `fq_codel_enqueue`.
    fn enqueue(&mut self, p: Queued, _now: Time, dropped: &mut Vec<(Queued, DropCause)>) -> Result<(), (Queued, DropCause)> {
        let pos = match self.by_flow.get(p.r.flow() as usize) {
            Some(&pos) if pos != NONE => pos as usize,
            _ => self.position_of(p.r.flow()),
        };
        let f = &mut self.flows[pos];
        f.q.push_back(p);
        f.backlog += p.r.bytes() as u64;
        if !f.listed {
            self.activate(pos);
        }
        self.bytes += p.r.bytes() as u64;
        self.len += 1;
        if self.len > self.limit {
            // fq_codel_enqueue: over the limit, fq_codel_drop takes a batch from the fattest
            // queue's head (the arrival stays queued unless the batch reached it).
            self.drop_over_limit(dropped);
        }
        Ok(())
    }

    /// `fq_codel_dequeue`.
    fn dequeue(&mut self, now: Time, dropped: &mut Vec<(Queued, DropCause)>) -> Option<Queued> {
        loop {
            let from_new = !self.new_flows.is_empty();
            let pos = if from_new { self.new_flows.head } else { self.old_flows.head };
            if pos == NONE {
                return None;
            }
            let f = &mut self.flows[pos as usize];
            if f.deficit <= 0 {
                // Spent: another quantum, and to the tail of old_flows.
                f.deficit += self.quantum;
                if from_new {
                    self.new_flows.pop_front(&mut self.flows);
                    self.old_flows.push_back(&mut self.flows, pos);
                } else {
                    self.old_flows.rotate(&self.flows);
                }
                continue;
            }
            let mut src = FlowSource { q: &mut f.q, backlog: &mut f.backlog, len: &mut self.len, bytes: &mut self.bytes };
            match f.cvars.dequeue(&mut src, &self.params, &mut self.stats, now, dropped) {
                Some(p) => {
                    f.deficit -= p.r.bytes() as i64;
                    return Some(p);
                }
                None => self.emptied(pos, from_new),
            }
        }
    }
    fn len(&self) -> usize {
        self.len
    }
    fn bytes(&self) -> u64 {
        self.bytes
    }
    fn packets(&self) -> Vec<Queued> {
        self.flows.iter().flat_map(|f| f.q.iter().copied()).collect()
    }
    fn heap_bytes(&self) -> usize {
        (self.index.capacity() + self.by_flow.capacity()) * 4
            + self.flows.capacity() * std::mem::size_of::<Flow>()
            + self.flows.iter().map(|f| f.q.capacity() * std::mem::size_of::<Queued>()).sum::<usize>()
    }
    fn marks(&self) -> u64 {
        self.stats.ecn_mark
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::{Ecn, Routed};
    use crate::time::MS;

    /// Flow ids 0..=5 with perturbation 0 land in buckets 18, 458, 953, 612, 87 and 982
    /// (jhash_1word, then reciprocal_scale to 1024), all different.
    const A: u32 = 1;
    const B: u32 = 2;
    const C: u32 = 3;

    fn pkt(flow: u32, slot: u32, bytes: u32) -> Queued {
        Queued { r: Routed::from_parts(flow, bytes, 0, false, Ecn::NotEct, slot), arrived: 0 }
    }

    fn fq(quantum: u32, limit: usize) -> FqCodel {
        FqCodel::new(CodelParams::new(5 * MS, 100 * MS, 1514, false), 1024, quantum, limit, 0)
    }

    /// Dequeue everything at t = 0 (sojourn 0: CoDel never acts); the slots in service order.
    fn drain(q: &mut FqCodel) -> Vec<u32> {
        let mut d = Vec::new();
        let out = std::iter::from_fn(|| q.dequeue(0, &mut d)).map(|p| p.r.slot()).collect();
        assert!(d.is_empty());
        out
    }

    #[test]
    fn fq_codel_hash_is_jhash_1word_scaled_to_the_buckets() {
        assert_eq!(jhash_1word(0, 0), 0x0493_96b8);
        assert_eq!(jhash_1word(1, 0), 0x72a8_2a9b);
        assert_eq!(jhash_1word(5, 0), 0xf5a8_a9b6);
        let q = fq(1514, 10240);
        assert_eq!((0..6).map(|f| q.bucket(f)).collect::<Vec<_>>(), vec![18, 458, 953, 612, 87, 982]);
        // The perturbation moves flows: 0x12345678 puts them elsewhere.
        let q = FqCodel::new(CodelParams::new(5 * MS, 100 * MS, 1514, false), 1024, 1514, 10240, 0x1234_5678);
        assert_eq!((0..6).map(|f| q.bucket(f)).collect::<Vec<_>>(), vec![972, 137, 31, 505, 325, 998]);
    }

    #[test]
    fn low_and_high_flow_ids_find_the_queue_of_their_bucket() {
        // Ids below MEMO_FLOWS are remembered per id, higher ones (a workload's) as the last
        // one; either way a flow's packets share the queue of its bucket, and two flows share
        // a queue only if their buckets are equal.
        let mut q = fq(1514, 10240);
        let (h1, h2) = ((1u32 << 31) | 7, (1u32 << 31) | 8);
        assert_ne!(q.bucket(h1), q.bucket(h2));
        let ids = [A, h1, h1, h2, A, h1, B, h2];
        for (slot, &f) in ids.iter().enumerate() {
            q.enqueue(pkt(f, slot as u32, 100), 0, &mut Vec::new()).unwrap();
        }
        // Four queues (A, h1, h2, B), each holding its own flow's packets.
        assert_eq!(q.flows.len(), 4);
        for f in &q.flows {
            let owners: Vec<u32> = f.q.iter().map(|p| ids[p.r.slot() as usize]).collect();
            assert!(owners.iter().all(|&o| q.bucket(o) == f.bucket), "{owners:?}");
        }
        assert_eq!(q.flows.iter().map(|f| f.q.len()).collect::<Vec<_>>(), vec![2, 3, 2, 1]);
    }

    #[test]
    fn fq_codel_serves_by_drr_with_new_flow_priority() {
        // Quantum 1500. A: four 1500 B packets (slots 1..=4); B: six 500 B packets (11..=16).
        let mut q = fq(1500, 10240);
        for i in 1..=4 {
            q.enqueue(pkt(A, i, 1500), 0, &mut Vec::new()).unwrap();
        }
        for i in 11..=16 {
            q.enqueue(pkt(B, i, 500), 0, &mut Vec::new()).unwrap();
        }
        assert_eq!((q.new_flow_count, q.len(), q.bytes()), (2, 10, 9000));
        let mut d = Vec::new();
        let mut out: Vec<u32> = (0..5).map(|_| q.dequeue(0, &mut d).unwrap().r.slot()).collect();
        // A (new, 1500) sends A1 and is spent; it moves to old_flows with a new quantum.
        // B (new) sends three 500 B packets, is spent, moves to old_flows behind A; A sends A2.
        assert_eq!(out, vec![1, 11, 12, 13, 2]);
        // A new flow C arrives: it is served before the old flows' backlog.
        q.enqueue(pkt(C, 21, 1000), 0, &mut Vec::new()).unwrap();
        assert_eq!(q.new_flow_count, 3);
        out = drain(&mut q);
        // C1; C is then empty and, old_flows not being empty, goes to old_flows (behind A and B);
        // A is spent (gets a quantum, to the tail), B sends its last three, A sends A3; C is
        // empty and leaves; A4 after B leaves.
        assert_eq!(out, vec![21, 14, 15, 16, 3, 4]);
        assert!(q.is_empty() && q.new_flows.is_empty() && q.old_flows.is_empty());
        // A flow that comes back after leaving the lists is new again.
        q.enqueue(pkt(A, 5, 1500), 0, &mut Vec::new()).unwrap();
        assert_eq!((q.new_flow_count, drain(&mut q)), (4, vec![5]));
    }

    /// Linux's `fq_codel_dequeue` over plain lists (`VecDeque`s of queues, `list_move_tail`
    /// as remove-and-push), with CoDel idle (every packet served at its arrival time): the
    /// service order of [`FqCodel`] (circular lists, the rotation of the old list's head as two
    /// stores) must be the same, packet for packet, for any arrivals.
    #[test]
    fn fq_codel_lists_serve_as_linux_lists_do() {
        use std::collections::VecDeque as Q;
        struct Reference {
            queues: Vec<Q<(u32, u32)>>,
            deficit: Vec<i64>,
            listed: Vec<bool>,
            new_flows: Q<usize>,
            old_flows: Q<usize>,
            quantum: i64,
        }
        impl Reference {
            fn enqueue(&mut self, q: usize, slot: u32, bytes: u32) {
                self.queues[q].push_back((slot, bytes));
                if !self.listed[q] {
                    self.listed[q] = true;
                    self.deficit[q] = self.quantum;
                    self.new_flows.push_back(q);
                }
            }
            fn dequeue(&mut self) -> Option<u32> {
                loop {
                    let from_new = !self.new_flows.is_empty();
                    let q = if from_new { *self.new_flows.front()? } else { *self.old_flows.front()? };
                    let list = if from_new { &mut self.new_flows } else { &mut self.old_flows };
                    if self.deficit[q] <= 0 {
                        self.deficit[q] += self.quantum;
                        list.pop_front();
                        self.old_flows.push_back(q);
                        continue;
                    }
                    match self.queues[q].pop_front() {
                        Some((slot, bytes)) => {
                            self.deficit[q] -= bytes as i64;
                            return Some(slot);
                        }
                        None => {
                            list.pop_front();
                            if from_new && !self.old_flows.is_empty() {
                                self.old_flows.push_back(q);
                            } else {
                                self.listed[q] = false;
                            }
                        }
                    }
                }
            }
        }
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let (mut served, mut idle) = (0, 0);
        for quantum in [300u32, 1514] {
            for _ in 0..200 {
                let mut q = fq(quantum, 10240);
                // Flow ids 0..=5: six different buckets (see the hash test), one queue each.
                let flows: Vec<u32> = (0..6).collect();
                let mut r = Reference {
                    queues: vec![Q::new(); 6],
                    deficit: vec![0; 6],
                    listed: vec![false; 6],
                    new_flows: Q::new(),
                    old_flows: Q::new(),
                    quantum: quantum as i64,
                };
                let mut slot = 0;
                let mut d = Vec::new();
                for _ in 0..300 {
                    if next(5) < 3 {
                        // An arrival of 66 to 3000 bytes on one of 6 flows (6 buckets).
                        let f = next(6) as usize;
                        let bytes = [66, 500, 1500, 1514, 3000][next(5) as usize];
                        q.enqueue(pkt(flows[f], slot, bytes), 0, &mut d).unwrap();
                        r.enqueue(f, slot, bytes);
                        slot += 1;
                    } else {
                        let got = q.dequeue(0, &mut d).map(|p| p.r.slot());
                        assert_eq!(got, r.dequeue());
                        if got.is_some() { served += 1 } else { idle += 1 }
                    }
                }
                assert!(d.is_empty());
                assert_eq!(drain(&mut q), std::iter::from_fn(|| r.dequeue()).collect::<Vec<_>>());
            }
        }
        // Both kinds of dequeue happened plenty of times.
        assert!(served > 10_000 && idle > 500, "{served} {idle}");
    }

    #[test]
    fn fq_codel_quantum_shares_bytes_not_packets() {
        // Quantum 500: A sends 1000 B packets, B 250 B packets; each gets 1000 B per two rounds.
        let mut q = fq(500, 10240);
        for i in 1..=3 {
            q.enqueue(pkt(A, i, 1000), 0, &mut Vec::new()).unwrap();
        }
        for i in 11..=22 {
            q.enqueue(pkt(B, i, 250), 0, &mut Vec::new()).unwrap();
        }
        // A1 takes A's deficit to -500: A needs a round to get back to 0 and another to send.
        assert_eq!(drain(&mut q), vec![1, 11, 12, 13, 14, 2, 15, 16, 17, 18, 3, 19, 20, 21, 22]);
    }

    #[test]
    fn fq_codel_over_the_limit_drops_a_batch_from_the_head_of_the_fattest_queue() {
        // Limit 10: A 6 x 1000 B, B 3 x 1500 B, C 1 x 100 B.
        let mut q = fq(1514, 10);
        let mut d = Vec::new();
        for i in 0..6 {
            q.enqueue(pkt(A, i, 1000), 0, &mut d).unwrap();
        }
        for i in 10..13 {
            q.enqueue(pkt(B, i, 1500), 0, &mut d).unwrap();
        }
        q.enqueue(pkt(C, 20, 100), 0, &mut d).unwrap();
        assert!(d.is_empty());
        // The 11th packet (C's second) is queued; A (6000 B) is the fattest and loses packets
        // from its head until half its bytes are gone (fq_codel_drop): 3 x 1000 >= 3000.
        q.enqueue(pkt(C, 21, 100), 0, &mut d).unwrap();
        assert_eq!(d.iter().map(|(p, c)| (p.r.slot(), *c)).collect::<Vec<_>>(),
                   vec![(0, DropCause::Overflow), (1, DropCause::Overflow), (2, DropCause::Overflow)]);
        assert_eq!((q.len(), q.bytes(), q.drop_overlimit), (8, 3000 + 4500 + 200, 3));
        // B (4500 B) is now the fattest: 2 packets reach half of it (3000 >= 2250).
        let mut batch = Vec::new();
        q.drop_fattest(LINUX_DROP_BATCH_SIZE, |p| batch.push(p.r.slot()));
        assert_eq!(batch, vec![10, 11]);
        assert_eq!((q.len(), q.bytes(), q.drop_overlimit), (6, 3000 + 1500 + 200, 5));
        // The batch stops at drop_batch_size: 1 drops one packet only.
        let mut batch = Vec::new();
        q.drop_fattest(1, |p| batch.push(p.r.slot()));
        assert_eq!(batch, vec![3]);
        // Among equal backlogs the lowest bucket loses: A (458) and C (612) with 2000 B each.
        q.enqueue(pkt(C, 22, 1800), 0, &mut d).unwrap();
        let mut batch = Vec::new();
        q.drop_fattest(1, |p| batch.push(p.r.slot()));
        assert_eq!(batch, vec![4]);
        // Still all new flows, in the order they arrived: A, B, C.
        assert_eq!(drain(&mut q), vec![5, 12, 20, 21, 22]);
    }

    #[test]
    fn fq_codel_batch_can_take_the_arrival_itself() {
        // Limit 2, one flow: the third packet puts A over the limit; A (3 x 1000 B) loses its
        // head until 1500 B are gone: two packets, and the arrival stays.
        let mut q = fq(1514, 2);
        let mut d = Vec::new();
        for i in 0..3 {
            q.enqueue(pkt(A, i, 1000), 0, &mut d).unwrap();
        }
        assert_eq!(d.iter().map(|(p, _)| p.r.slot()).collect::<Vec<_>>(), vec![0, 1]);
        assert_eq!(drain(&mut q), vec![2]);
        // Limit 1: A holds 100 B and a 3000 B packet arrives. Half of A's 3100 B is reached
        // only with the arrival: the batch takes both, enqueue still returns Ok.
        let mut q = fq(1514, 1);
        d.clear();
        q.enqueue(pkt(A, 0, 100), 0, &mut d).unwrap();
        assert!(q.enqueue(pkt(A, 1, 3000), 0, &mut d).is_ok());
        assert_eq!(d.iter().map(|(p, _)| p.r.slot()).collect::<Vec<_>>(), vec![0, 1]);
        assert!(q.is_empty() && q.bytes() == 0);
        // The same with drop_batch_size = 1: only the head goes; the arrival stays.
        let mut q = fq(1514, 1);
        q.drop_batch_size = 1;
        d.clear();
        q.enqueue(pkt(A, 0, 100), 0, &mut d).unwrap();
        q.enqueue(pkt(A, 1, 3000), 0, &mut d).unwrap();
        assert_eq!(d.iter().map(|(p, _)| p.r.slot()).collect::<Vec<_>>(), vec![0]);
        assert_eq!(drain(&mut q), vec![1]);
    }

    #[test]
    fn fq_codel_codel_acts_per_queue_on_the_whole_backlog() {
        // A: two packets, B: five, all 1000 B, all arrived at 0. CoDel on A's queue reads the
        // whole discipline's backlog (as Linux: &sch->qstats.backlog), so A's last packet is
        // not spared by the "backlog <= mtu" rule while B's packets wait.
        let mut q = fq(1514, 10240);
        q.enqueue(pkt(A, 1, 1000), 0, &mut Vec::new()).unwrap();
        q.enqueue(pkt(A, 2, 1000), 0, &mut Vec::new()).unwrap();
        for i in 11..=15 {
            q.enqueue(pkt(B, i, 1000), 0, &mut Vec::new()).unwrap();
        }
        let mut d = Vec::new();
        // 10 ms: A1 leaves 6000 B behind it, waited 10 ms: A's first_above_time =
        // 9765 + 97656 (a per-flow backlog, 1000 B, would not have started the clock).
        assert_eq!(q.dequeue(10 * MS, &mut d).unwrap().r.slot(), 1);
        let a = &q.flows[q.index[q.bucket(A) as usize] as usize];
        assert_eq!((a.cvars.first_above_time, a.deficit), (107_421, 514));
        // 200 ms: A2 (alone in its queue, 5000 B of B behind) is dropped; A empties and leaves
        // the lists; B1 is served (B's own CoDel clock only starts now).
        assert_eq!(q.dequeue(200 * MS, &mut d).unwrap().r.slot(), 11);
        assert_eq!(d.iter().map(|(p, c)| (p.r.slot(), *c)).collect::<Vec<_>>(), vec![(2, DropCause::Aqm)]);
        let b = &q.flows[q.index[q.bucket(B) as usize] as usize];
        assert_eq!((b.cvars.first_above_time, b.cvars.dropping), (195_312 + 97_656, false));
        assert_eq!((q.new_flows.len(&q.flows), q.old_flows.len(&q.flows), q.len(), q.stats.drop_count), (1, 0, 4, 1));
        // The same A alone: nothing behind A2, no drop.
        let mut q = fq(1514, 10240);
        q.enqueue(pkt(A, 1, 1000), 0, &mut Vec::new()).unwrap();
        q.enqueue(pkt(A, 2, 1000), 0, &mut Vec::new()).unwrap();
        d.clear();
        assert_eq!(q.dequeue(10 * MS, &mut d).unwrap().r.slot(), 1);
        assert_eq!(q.dequeue(200 * MS, &mut d).unwrap().r.slot(), 2);
        assert!(d.is_empty());
    }

    #[test]
    fn fq_codel_allocates_nothing_until_used_and_checks_quantum() {
        let q = FqCodel::from_params(&Params::defaults(PARAMS), &QdiscEnv { ecn: true, mtu_bytes: 1514, rate_bps: 1, seed: 3 });
        assert_eq!((q.heap_bytes(), q.quantum, q.buckets, q.limit), (0, 1514, 1024, 10240));
        let mut p = Params::defaults(PARAMS);
        p.set("quantum", 100.0);
        assert_eq!(check(&p), Err("quantum (100) must be 0 (the link's MTU) or at least 256 bytes".to_string()));
        p.set("quantum", 256.0);
        assert_eq!(check(&p), Ok(()));
    }
}
