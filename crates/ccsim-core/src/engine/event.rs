//! The event queue: a 4-ary heap keyed by (time, insertion sequence), so events at the same
//! nanosecond run in the order they were scheduled. Links decide a packet's service and
//! arrival times when it is offered and keep their in-flight packets in FIFO delay lines, with
//! an event for the head only, so the heap holds O(links + timers) entries, not one per packet.

use crate::time::Time;
use std::collections::VecDeque;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// The head packet of a link direction's wire reaches the far end.
    LinkArrive(u32),
    /// The head packet of a delay segment (a run of unlimited directions) reaches its end.
    SegArrive(u32),
    /// A flow's retransmission timer may be due.
    Rto(u32),
    /// A flow's delayed-ACK timer may be due.
    DelAck(u32),
    /// A flow's pacing gate may open.
    Pace(u32),
    /// A flow's RACK reordering timer may be due.
    RackTimer(u32),
    FlowStart(u32),
    FlowStop(u32),
    /// Record a time-series sample.
    Sample,
}

/// A heap entry: (time, insertion sequence) orders it.
#[derive(Debug, Clone, Copy)]
struct Entry<E> {
    time: Time,
    seq: u64,
    ev: E,
}

impl<E> Entry<E> {
    /// (time, seq) as one integer, so an ordering test is a single wide comparison.
    #[inline(always)]
    fn key(&self) -> u128 {
        ((self.time as u128) << 64) | self.seq as u128
    }
}

/// Children per node of the heap: a 4-ary heap is half as deep as a binary one, and its
/// children sit side by side in memory.
const ARITY: usize = 4;

/// Events in time order, same-time events in insertion order.
///
/// A 4-ary min-heap keyed by (time, insertion sequence). The slots after the last entry hold
/// sentinels (time = MAX), at least ARITY - 1 of them, so every node with a child has all
/// ARITY of them and the smallest is chosen without branches (the order of pending events is
/// data the branch predictor cannot learn).
///
/// Events scheduled for the current instant (zero-delay hops, immediate ACKs) skip the heap
/// and go to a FIFO. Heap entries for the current instant were necessarily scheduled before
/// any of them, so "heap entries at `now` first, then the FIFO" keeps the insertion order
/// exactly.
#[derive(Debug)]
pub struct EventQueue<E = Event> {
    /// Entries in [0, n), sentinels after.
    heap: Vec<Entry<E>>,
    n: usize,
    now_fifo: VecDeque<E>,
    /// The time of the last popped event: the instant the FIFO belongs to.
    now: Time,
    seq: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue { heap: Vec::new(), n: 0, now_fifo: VecDeque::new(), now: 0, seq: 0 }
    }
}

impl<E: Copy> EventQueue<E> {
    pub fn with_capacity(n: usize) -> Self {
        EventQueue {
            heap: Vec::with_capacity(n + ARITY),
            n: 0,
            now_fifo: VecDeque::with_capacity(16),
            now: 0,
            seq: 0,
        }
    }

    #[inline]
    pub fn schedule(&mut self, time: Time, ev: E) {
        debug_assert!(time >= self.now, "an event in the past");
        if time == self.now {
            self.now_fifo.push_back(ev);
            return;
        }
        self.seq += 1;
        let e = Entry { time, seq: self.seq, ev };
        if self.heap.len() < self.n + ARITY {
            // Grow, padding with sentinels (their payload is never returned).
            self.heap.resize(self.n + 2 * ARITY, Entry { time: Time::MAX, seq: u64::MAX, ev });
        }
        let k = e.key();
        // Sift up with a hole: move parents down until e's place is found.
        let mut i = self.n;
        self.n += 1;
        while i > 0 {
            let p = (i - 1) / ARITY;
            let pe = self.heap[p];
            if pe.key() <= k {
                break;
            }
            self.heap[i] = pe;
            i = p;
        }
        self.heap[i] = e;
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(Time, E)> {
        if self.n > 0 {
            let top = self.heap[0];
            if top.time == self.now || self.now_fifo.is_empty() {
                self.n -= 1;
                let last = self.heap[self.n];
                self.heap[self.n].time = Time::MAX;
                self.heap[self.n].seq = u64::MAX;
                if self.n > 0 {
                    self.sift_down_from_root(last);
                }
                self.now = top.time;
                return Some((self.now, top.ev));
            }
        }
        self.now_fifo.pop_front().map(|ev| (self.now, ev))
    }

    /// Put `e` in the root's hole and move it down to its place.
    #[inline]
    fn sift_down_from_root(&mut self, e: Entry<E>) {
        let n = self.n;
        let k = e.key();
        let h = &mut self.heap[..];
        let mut i = 0;
        loop {
            let c = i * ARITY + 1;
            if c >= n {
                break;
            }
            // All four children exist (sentinels pad the end): pick the smallest with selects.
            let (k0, k1, k2, k3) = (h[c].key(), h[c + 1].key(), h[c + 2].key(), h[c + 3].key());
            let (a, ka) = if k1 < k0 { (c + 1, k1) } else { (c, k0) };
            let (b, kb) = if k3 < k2 { (c + 3, k3) } else { (c + 2, k2) };
            let (m, mk) = if kb < ka { (b, kb) } else { (a, ka) };
            if k <= mk {
                break;
            }
            h[i] = h[m];
            i = m;
        }
        h[i] = e;
    }

    #[inline]
    pub fn peek_time(&self) -> Option<Time> {
        if !self.now_fifo.is_empty() {
            return Some(self.now);
        }
        if self.n > 0 {
            Some(self.heap[0].time)
        } else {
            None
        }
    }

    pub fn len(&self) -> usize {
        self.n + self.now_fifo.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes the queue holds, for memory accounting.
    pub fn heap_bytes(&self) -> usize {
        self.heap.capacity() * std::mem::size_of::<Entry<E>>() + self.now_fifo.capacity() * std::mem::size_of::<E>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_time_events_pop_in_insertion_order() {
        let mut q = EventQueue::default();
        q.schedule(10, Event::Rto(3));
        q.schedule(5, Event::Sample);
        q.schedule(10, Event::Rto(1));
        q.schedule(10, Event::Rto(2));
        assert_eq!(q.pop(), Some((5, Event::Sample)));
        assert_eq!(q.pop(), Some((10, Event::Rto(3))));
        assert_eq!(q.pop(), Some((10, Event::Rto(1))));
        assert_eq!(q.pop(), Some((10, Event::Rto(2))));
        assert_eq!(q.pop(), None);
    }

    #[test]
    fn events_for_the_current_instant_keep_insertion_order_behind_earlier_ones() {
        let mut q = EventQueue::default();
        q.schedule(10, Event::Rto(1));
        q.schedule(10, Event::Rto(2));
        q.schedule(20, Event::Sample);
        assert_eq!(q.pop(), Some((10, Event::Rto(1))));
        // Scheduled now, for now: after Rto(2), which was scheduled earlier for the same time.
        q.schedule(10, Event::Pace(7));
        q.schedule(10, Event::Pace(8));
        assert_eq!(q.peek_time(), Some(10));
        assert_eq!(q.pop(), Some((10, Event::Rto(2))));
        q.schedule(10, Event::Pace(9));
        assert_eq!(q.pop(), Some((10, Event::Pace(7))));
        assert_eq!(q.pop(), Some((10, Event::Pace(8))));
        assert_eq!(q.pop(), Some((10, Event::Pace(9))));
        assert_eq!(q.pop(), Some((20, Event::Sample)));
        assert_eq!(q.pop(), None);
    }

    /// Random interleavings of schedule and pop against a reference: a list sorted by
    /// (time, insertion order). Covers growth from empty, sentinel padding and draining.
    #[test]
    fn pops_in_time_then_insertion_order_like_a_sorted_list() {
        let mut x: u64 = 99;
        let mut next = move || {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            x >> 33
        };
        for round in 0..200u32 {
            let mut q = EventQueue::default();
            let mut reference: Vec<(Time, u32, u32)> = Vec::new(); // (time, order, id)
            let mut now: Time = 0;
            let mut order = 0u32;
            let steps = 1 + (next() % 300) as usize;
            for _ in 0..steps {
                if next() % 3 != 0 || reference.is_empty() {
                    // Few distinct times, so ties are common; sometimes exactly now.
                    let t = now + next() % (1 + round as u64 % 7);
                    order += 1;
                    q.schedule(t, Event::Pace(order));
                    reference.push((t, order, order));
                } else {
                    reference.sort();
                    let (t, _, id) = reference.remove(0);
                    assert_eq!(q.pop(), Some((t, Event::Pace(id))), "round {round}");
                    now = t;
                }
                assert_eq!(q.len(), reference.len());
            }
            reference.sort();
            for (t, _, id) in reference {
                assert_eq!(q.pop(), Some((t, Event::Pace(id))));
            }
            assert_eq!(q.pop(), None);
            assert!(q.is_empty());
        }
    }

    #[test]
    fn stays_ordered_with_many_pending() {
        let mut q = EventQueue::default();
        let mut x: u64 = 12345;
        for i in 0..100_000u32 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            q.schedule(x >> 40, Event::Pace(i));
        }
        let mut last = (0, 0u64);
        let mut n = 0;
        while let Some((t, _)) = q.pop() {
            assert!(t >= last.0);
            last.0 = t;
            n += 1;
        }
        assert_eq!(n, 100_000);
        let _ = last.1;
    }
}
