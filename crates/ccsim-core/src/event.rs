//! The event queue: a binary heap keyed by (time, insertion sequence), so events at the same
//! nanosecond run in the order they were scheduled. Links keep their in-flight packets in FIFO
//! delay lines and schedule only the head, so the heap holds O(links + timers) entries, not one
//! per packet.

use crate::time::Time;
use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// The head packet of a flow's access-link delay line reaches the router.
    AccessArrive(u32),
    /// A flow's access link has finished serialising its current packet.
    AccessTxDone(u32),
    /// The bottleneck has finished serialising its current packet.
    BottleneckTxDone,
    /// The head packet of the bottleneck delay line reaches the receiver.
    BottleneckArrive,
    /// The head ACK of a flow's reverse-path delay line reaches the sender.
    AckArrive(u32),
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

/// A heap entry ordered by one 128-bit key: time in the high half, insertion sequence in the
/// low half, so (time, insertion order) is a single integer comparison.
#[derive(Debug, Clone, Copy)]
struct Entry<E> {
    key: u128,
    ev: E,
}

impl<E> Entry<E> {
    #[inline]
    fn time(&self) -> Time {
        (self.key >> 64) as Time
    }
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, o: &Self) -> bool {
        self.key == o.key
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<E> Ord for Entry<E> {
    #[inline]
    fn cmp(&self, o: &Self) -> Ordering {
        // BinaryHeap is a max-heap: reverse so the earliest key pops first.
        o.key.cmp(&self.key)
    }
}

/// Events in time order, same-time events in insertion order.
///
/// Events scheduled for the current instant (zero-delay hops, immediate ACKs) skip the heap
/// and go to a FIFO. Heap entries for the current instant were necessarily scheduled before
/// any of them, so "heap entries at `now` first, then the FIFO" keeps the insertion order
/// exactly.
#[derive(Debug)]
pub struct EventQueue<E = Event> {
    heap: BinaryHeap<Entry<E>>,
    now_fifo: VecDeque<E>,
    /// The time of the last popped event: the instant the FIFO belongs to.
    now: Time,
    seq: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue { heap: BinaryHeap::new(), now_fifo: VecDeque::new(), now: 0, seq: 0 }
    }
}

impl<E: Copy> EventQueue<E> {
    pub fn with_capacity(n: usize) -> Self {
        EventQueue { heap: BinaryHeap::with_capacity(n), now_fifo: VecDeque::with_capacity(16), now: 0, seq: 0 }
    }

    #[inline]
    pub fn schedule(&mut self, time: Time, ev: E) {
        debug_assert!(time >= self.now, "an event in the past");
        if time == self.now {
            self.now_fifo.push_back(ev);
            return;
        }
        self.seq += 1;
        self.heap.push(Entry { key: ((time as u128) << 64) | self.seq as u128, ev });
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(Time, E)> {
        if let Some(top) = self.heap.peek() {
            if top.time() == self.now || self.now_fifo.is_empty() {
                let e = self.heap.pop().unwrap();
                self.now = e.time();
                return Some((self.now, e.ev));
            }
        }
        self.now_fifo.pop_front().map(|ev| (self.now, ev))
    }

    #[inline]
    pub fn peek_time(&self) -> Option<Time> {
        if !self.now_fifo.is_empty() {
            return Some(self.now);
        }
        self.heap.peek().map(|e| e.time())
    }

    pub fn len(&self) -> usize {
        self.heap.len() + self.now_fifo.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
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
