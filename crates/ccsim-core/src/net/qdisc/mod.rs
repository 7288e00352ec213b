//! The queue-discipline slot of a link direction: disciplines that decide at dequeue time
//! (CoDel, PIE's drop at dequeue) or serve out of arrival order (fair queueing).
//!
//! A direction normally runs the fast path of [`crate::net::link::Link`]: a drop-tail FIFO
//! that decides each packet's service start when the packet is offered and needs no event at
//! the end of a serialisation. A direction with a [`Slot`] instead serialises one packet at a
//! time: the discipline gets every arriving packet ([`Qdisc::enqueue`]), and each time the link
//! goes idle it is asked for the next one ([`Qdisc::dequeue`]); the end of each serialisation is
//! an event of its own (`LinkTxDone`), after which the packet goes onto the same propagation
//! wire as on the fast path. The direction's `buffer` stays the hard limit, enforced before the
//! discipline sees the packet, exactly as the fast path enforces it (the packet being
//! serialised is not counted, and an idle link takes a packet whatever the limit).
//!
//! The trait follows Linux's `struct Qdisc_ops` (`include/net/sch_generic.h`: `enqueue`,
//! `dequeue`, `peek`, with drops reported to the caller) and ns-3's `QueueDisc`
//! (`src/traffic-control/model/queue-disc.h`: `DoEnqueue`, `DoDequeue`, drop reasons counted
//! per cause). A discipline may drop at enqueue (RED, PIE, a full per-flow queue) or at dequeue
//! (CoDel, several packets in one call); either way the packets come back to the link, which
//! frees them and counts the drop by cause. Marking (ECN) acts on the handle ([`Routed`]),
//! which the discipline holds by value: it sets `r.ecn()` to CE and counts the mark
//! ([`Qdisc::marks`]).
//!
//! Disciplines here: [`Fifo`] (the fast path's FIFO, decided at dequeue: the slot's reference,
//! tested to give the fast path's results) and [`RoundRobin`] (one FIFO per flow, served in
//! turn: the smallest discipline that serves out of arrival order); in their own files, the
//! AQMs as Linux implements them: [`red`], [`codel`], [`fq_codel`], [`pie`] and [`dualpi2`],
//! named, described and built by name in [`registry`].

pub mod codel;
pub mod dualpi2;
pub mod fq_codel;
pub mod pie;
pub mod red;
pub mod registry;

pub use registry::{build, check, find, names, QdiscEnv, QdiscInfo, QDISCS};


use super::Routed;
use crate::time::Time;
use std::collections::VecDeque;

/// A packet in a discipline's care, with the time it arrived (sojourn = dequeue - arrival).
///
/// `repr(C)`, the handle first: the link builds a `Queued` on its stack from a 16-byte copy of
/// the handle and an 8-byte store of the time, and the discipline copies it into its queue
/// with a 16-byte and an 8-byte load at the same offsets, which the CPU serves from its store
/// buffer. In Rust's default order (the time first) the 16-byte load straddled the two stores
/// and waited for them to reach the cache: in a cpu-clock profile of `bench/qdisc.py`'s codel
/// run, `Codel::enqueue` fell from 6.8 to 4.1 ns per delivered segment with this order.
#[derive(Debug, Clone, Copy)]
#[repr(C)]
pub struct Queued {
    pub r: Routed,
    pub arrived: Time,
}

/// Why a discipline dropped a packet (the buffer's hard limit is counted by the link).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropCause {
    /// The discipline's own limit (e.g. a per-flow queue full).
    Overflow,
    /// An active-queue-management decision (RED, CoDel, PIE).
    Aqm,
}

/// A queue discipline: it holds the packets waiting for the link (not the one being
/// serialised) and chooses which goes next.
pub trait Qdisc: Send {
    /// A packet arrives at `now`. Returns it back with the cause if the discipline drops it
    /// instead of queueing it. Packets it drops to make room (fq_codel's batch from the head of
    /// its fattest queue, which may include the arrival) go to `dropped`, and it returns `Ok`.
    fn enqueue(&mut self, p: Queued, now: Time, dropped: &mut Vec<(Queued, DropCause)>) -> Result<(), (Queued, DropCause)>;
    /// The link is idle at `now`: the next packet to serialise, if any. Packets the discipline
    /// drops on the way go to `dropped`.
    fn dequeue(&mut self, now: Time, dropped: &mut Vec<(Queued, DropCause)>) -> Option<Queued>;
    /// Packets waiting.
    fn len(&self) -> usize;
    /// Bytes waiting.
    fn bytes(&self) -> u64;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The packets waiting, in any order (for the end-of-run accounting).
    fn packets(&self) -> Vec<Queued>;
    /// Bytes it holds, for memory accounting.
    fn heap_bytes(&self) -> usize;
    /// ECN marks it made: packets it set to CE (by setting `r.ecn()` on the handle, at enqueue
    /// or at dequeue) where it would otherwise have dropped them. A discipline counts its own,
    /// as Linux's do (`red_stats.prob_mark`, `codel_stats.ecn_mark`).
    fn marks(&self) -> u64 {
        0
    }
}

/// Packets in arrival order and their total bytes: the storage of a single-queue discipline
/// (FIFO, RED, CoDel, PIE). No allocation per packet once it has grown.
#[derive(Debug, Default)]
pub struct PacketQueue {
    q: VecDeque<Queued>,
    bytes: u64,
}

impl PacketQueue {
    #[inline]
    pub fn push(&mut self, p: Queued) {
        self.bytes += p.r.bytes() as u64;
        self.q.push_back(p);
    }
    #[inline]
    pub fn pop(&mut self) -> Option<Queued> {
        let p = self.q.pop_front()?;
        self.bytes -= p.r.bytes() as u64;
        Some(p)
    }
    pub fn front(&self) -> Option<&Queued> {
        self.q.front()
    }
    pub fn len(&self) -> usize {
        self.q.len()
    }
    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
    pub fn packets(&self) -> Vec<Queued> {
        self.q.iter().copied().collect()
    }
    pub fn heap_bytes(&self) -> usize {
        self.q.capacity() * std::mem::size_of::<Queued>()
    }
}

/// The storage methods of [`Qdisc`] (`len`, `bytes`, `packets`, `heap_bytes`) for a discipline
/// whose waiting packets are all in its [`PacketQueue`] field `$q`.
#[macro_export]
macro_rules! packet_queue_storage {
    ($q:ident) => {
        fn len(&self) -> usize {
            self.$q.len()
        }
        fn bytes(&self) -> u64 {
            self.$q.bytes()
        }
        fn packets(&self) -> Vec<$crate::net::qdisc::Queued> {
            self.$q.packets()
        }
        fn heap_bytes(&self) -> usize {
            self.$q.heap_bytes()
        }
    };
}

/// First in, first out, decided at dequeue.
#[derive(Debug, Default)]
pub struct Fifo {
    q: PacketQueue,
}

impl Qdisc for Fifo {
    fn enqueue(&mut self, p: Queued, _now: Time, _dropped: &mut Vec<(Queued, DropCause)>) -> Result<(), (Queued, DropCause)> {
        self.q.push(p);
        Ok(())
    }
    fn dequeue(&mut self, _now: Time, _dropped: &mut Vec<(Queued, DropCause)>) -> Option<Queued> {
        self.q.pop()
    }
    crate::packet_queue_storage!(q);
}

/// One FIFO per flow, the non-empty ones served a packet each in turn (in the order they
/// became non-empty): packet-by-packet round robin, with no notion of bytes (DRR with a quantum
/// of one packet).
#[derive(Debug, Default)]
pub struct RoundRobin {
    /// Per flow id: its queue.
    queues: Vec<VecDeque<Queued>>,
    /// Flows with packets, in service order.
    active: VecDeque<u32>,
    len: usize,
    bytes: u64,
}

impl Qdisc for RoundRobin {
    fn enqueue(&mut self, p: Queued, _now: Time, _dropped: &mut Vec<(Queued, DropCause)>) -> Result<(), (Queued, DropCause)> {
        let f = p.r.flow() as usize;
        if f >= self.queues.len() {
            self.queues.resize_with(f + 1, VecDeque::new);
        }
        if self.queues[f].is_empty() {
            self.active.push_back(f as u32);
        }
        self.queues[f].push_back(p);
        self.len += 1;
        self.bytes += p.r.bytes() as u64;
        Ok(())
    }
    fn dequeue(&mut self, _now: Time, _dropped: &mut Vec<(Queued, DropCause)>) -> Option<Queued> {
        let f = self.active.pop_front()?;
        let q = &mut self.queues[f as usize];
        let p = q.pop_front().expect("an active flow has packets");
        if !q.is_empty() {
            self.active.push_back(f);
        }
        self.len -= 1;
        self.bytes -= p.r.bytes() as u64;
        Some(p)
    }
    fn len(&self) -> usize {
        self.len
    }
    fn bytes(&self) -> u64 {
        self.bytes
    }
    fn packets(&self) -> Vec<Queued> {
        self.queues.iter().flat_map(|q| q.iter().copied()).collect()
    }
    fn heap_bytes(&self) -> usize {
        self.queues.iter().map(|q| q.capacity() * std::mem::size_of::<Queued>()).sum::<usize>() + self.active.capacity() * 4
    }
}

/// A link direction's discipline and its serialiser's state.
pub struct Slot {
    pub qdisc: Box<dyn Qdisc>,
    /// Its registry name ("custom" for one set directly, as the tests do).
    pub name: &'static str,
    /// The packet being serialised.
    pub in_service: Option<Routed>,
    /// Time of the last change of the number waiting (for the queue's time integral).
    pub last_change: Time,
    /// Drops by the discipline, by cause.
    pub overflow_drops: u64,
    pub aqm_drops: u64,
    /// Reused buffer for the packets a dequeue drops.
    pub dropped: Vec<(Queued, DropCause)>,
    /// Packets the discipline holds: its `len()`, counted here from what each enqueue and
    /// dequeue returns so that the per-packet path (the buffer check, the queue's time
    /// integral, its maximum) makes no call through the trait object for it.
    pub waiting: usize,
}

impl Slot {
    pub fn new(qdisc: Box<dyn Qdisc>) -> Slot {
        let waiting = qdisc.len();
        Slot { qdisc, name: "custom", in_service: None, last_change: 0, overflow_drops: 0, aqm_drops: 0, dropped: Vec::new(), waiting }
    }

    /// After an enqueue (`queued`: it returned Ok) or a dequeue (`queued`: false; `served`: it
    /// returned a packet): update [`Slot::waiting`] before `dropped` is emptied. Every packet in
    /// `dropped` was held (or was the arrival, when the enqueue returned Ok).
    #[inline]
    pub fn count_waiting(&mut self, queued: bool, served: bool) {
        self.waiting = self.waiting + queued as usize - served as usize - self.dropped.len();
        debug_assert_eq!(self.waiting, self.qdisc.len(), "the slot's count of waiting packets");
    }

    /// Count and free the packets the discipline left in `dropped` (none, nearly always).
    #[inline]
    pub fn take_dropped(&mut self, packets: &mut crate::net::PacketStore) {
        if !self.dropped.is_empty() {
            self.free_dropped(packets);
        }
    }

    #[cold]
    #[inline(never)]
    fn free_dropped(&mut self, packets: &mut crate::net::PacketStore) {
        let mut dropped = std::mem::take(&mut self.dropped);
        for (p, cause) in dropped.drain(..) {
            self.count_drop(cause);
            packets.discard(p.r.slot());
        }
        self.dropped = dropped; // keep its room: no allocation per drop
    }

    /// Count a drop by the discipline.
    pub fn count_drop(&mut self, cause: DropCause) {
        match cause {
            DropCause::Overflow => self.overflow_drops += 1,
            DropCause::Aqm => self.aqm_drops += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(flow: u32, n: u32) -> Queued {
        Queued { r: Routed::from_parts(flow, 1000 + n, 0, false, crate::net::Ecn::NotEct, n), arrived: n as Time }
    }

    fn drain(q: &mut dyn Qdisc) -> Vec<u32> {
        let mut d = Vec::new();
        std::iter::from_fn(|| q.dequeue(0, &mut d)).map(|p| p.r.slot()).collect()
    }

    #[test]
    fn fifo_serves_in_arrival_order_and_counts_bytes() {
        let mut q = Fifo::default();
        for (i, f) in [0, 1, 0, 2].into_iter().enumerate() {
            q.enqueue(pkt(f, i as u32), 0, &mut Vec::new()).unwrap();
        }
        assert_eq!((q.len(), q.bytes()), (4, 4006));
        assert_eq!(drain(&mut q), vec![0, 1, 2, 3]);
        assert_eq!((q.len(), q.bytes()), (0, 0));
    }

    #[test]
    fn round_robin_serves_flows_in_turn() {
        // Flow 0 sends a burst of three, then flows 1 and 2 one each, then flow 1 another.
        let mut q = RoundRobin::default();
        for (slot, f) in [(0, 0), (1, 0), (2, 0), (3, 1), (4, 2), (5, 1)] {
            q.enqueue(pkt(f, slot), 0, &mut Vec::new()).unwrap();
        }
        assert_eq!(q.len(), 6);
        // 0 (flow 0), 3 (flow 1), 4 (flow 2), 1 (flow 0), 5 (flow 1), 2 (flow 0).
        assert_eq!(drain(&mut q), vec![0, 3, 4, 1, 5, 2]);
        // A flow that empties leaves the rotation and rejoins at its end.
        q.enqueue(pkt(2, 6), 0, &mut Vec::new()).unwrap();
        q.enqueue(pkt(0, 7), 0, &mut Vec::new()).unwrap();
        q.enqueue(pkt(2, 8), 0, &mut Vec::new()).unwrap();
        assert_eq!(drain(&mut q), vec![6, 7, 8]);
        assert_eq!(q.bytes(), 0);
    }
}
