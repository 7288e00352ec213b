//! The event queue: a binary heap keyed by (time, insertion sequence), so events at the same
//! nanosecond run in the order they were scheduled. Links keep their in-flight packets in FIFO
//! delay lines and schedule only the head, so the heap holds O(links + timers) entries, not one
//! per packet.

use crate::time::Time;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

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
    FlowStart(u32),
    FlowStop(u32),
    /// Record a time-series sample.
    Sample,
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    time: Time,
    seq: u64,
    ev: Event,
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.time == o.time && self.seq == o.seq
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    fn cmp(&self, o: &Self) -> Ordering {
        // BinaryHeap is a max-heap: reverse so the earliest (time, seq) pops first.
        (o.time, o.seq).cmp(&(self.time, self.seq))
    }
}

#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    seq: u64,
}

impl EventQueue {
    pub fn with_capacity(n: usize) -> Self {
        EventQueue { heap: BinaryHeap::with_capacity(n), seq: 0 }
    }

    #[inline]
    pub fn schedule(&mut self, time: Time, ev: Event) {
        self.seq += 1;
        self.heap.push(Entry { time, seq: self.seq, ev });
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        self.heap.pop().map(|e| (e.time, e.ev))
    }

    #[inline]
    pub fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(|e| e.time)
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
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
