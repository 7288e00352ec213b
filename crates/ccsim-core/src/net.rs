//! Network elements: a serialising link with a FIFO "wire" (propagation delay line) and an
//! optional drop-tail queue. Packets on a wire keep their order, so only the head needs an event.

use crate::time::{tx_time, Time};
use std::collections::VecDeque;

/// Drop-tail limit on the packets waiting (the one being serialised is not counted, as in
/// Linux qdiscs and ns-3 devices).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum QueueLimit {
    Unlimited,
    Packets(u64),
    Bytes(u64),
}

#[derive(Debug, Clone, Default)]
pub struct LinkStats {
    /// Packets offered to the link's queue.
    pub packets_in: u64,
    /// Packets that left the far end of the wire (delivered or randomly lost there).
    pub packets_out: u64,
    pub drops: u64,
    pub random_losses: u64,
    pub busy_time: Time,
    /// Integral of the number of waiting packets over time (packet-nanoseconds).
    pub queue_area: u128,
    pub queue_max: u64,
}

pub struct Link<T> {
    pub rate_bps: u64,
    pub delay: Time,
    pub limit: QueueLimit,
    pub queue: VecDeque<T>,
    pub queue_bytes: u64,
    pub in_service: Option<T>,
    /// Propagation: packets whose last bit has left, in order.
    pub wire: DelayLine<T>,
    pub stats: LinkStats,
    last_change: Time,
}

impl<T: Copy> Link<T> {
    pub fn new(rate_bps: u64, delay: Time, limit: QueueLimit) -> Self {
        Link {
            rate_bps,
            delay,
            limit,
            queue: VecDeque::with_capacity(256),
            queue_bytes: 0,
            in_service: None,
            wire: DelayLine::new(delay),
            stats: LinkStats::default(),
            last_change: 0,
        }
    }

    fn account_queue(&mut self, now: Time) {
        self.stats.queue_area += self.queue.len() as u128 * (now - self.last_change) as u128;
        self.last_change = now;
    }

    /// Offer a packet. Returns false if the drop-tail queue is full.
    pub fn enqueue(&mut self, pkt: T, bytes: u32, now: Time) -> bool {
        self.stats.packets_in += 1;
        let full = match self.limit {
            QueueLimit::Unlimited => false,
            QueueLimit::Packets(n) => self.queue.len() as u64 >= n,
            QueueLimit::Bytes(b) => self.queue_bytes + bytes as u64 > b,
        };
        // An idle link takes the packet straight into service.
        if full && !(self.in_service.is_none() && self.queue.is_empty()) {
            self.stats.drops += 1;
            return false;
        }
        self.account_queue(now);
        self.queue.push_back(pkt);
        self.queue_bytes += bytes as u64;
        self.stats.queue_max = self.stats.queue_max.max(self.queue.len() as u64);
        true
    }

    /// Start serialising the next packet if idle. Returns (packet, time the last bit leaves).
    pub fn start_tx(&mut self, now: Time, bytes_of: impl Fn(&T) -> u32) -> Option<(T, Time)> {
        if self.in_service.is_some() {
            return None;
        }
        self.account_queue(now);
        let pkt = self.queue.pop_front()?;
        let b = bytes_of(&pkt);
        self.queue_bytes -= b as u64;
        let d = tx_time(b as u64, self.rate_bps);
        self.stats.busy_time += d;
        self.in_service = Some(pkt);
        Some((pkt, now + d))
    }

    /// Serialisation finished: put the packet on the wire. Returns its arrival time if it is
    /// now the head of the wire (the caller schedules the arrival event).
    pub fn finish_tx(&mut self, now: Time) -> Option<Time> {
        let pkt = self.in_service.take().expect("a packet in service");
        self.wire.push(pkt, now)
    }

    /// Take the head of the wire; returns it and the arrival time of the next, if any.
    pub fn arrive(&mut self) -> (T, Option<Time>) {
        self.stats.packets_out += 1;
        self.wire.pop()
    }

    pub fn in_flight(&self) -> u64 {
        self.queue.len() as u64 + self.in_service.is_some() as u64 + self.wire.line.len() as u64
    }

    pub fn finish_accounting(&mut self, now: Time) {
        if now > self.last_change {
            self.account_queue(now);
        }
    }

    /// packets_in = packets_out + drops + still queued, in service or on the wire.
    pub fn conserves(&self) -> bool {
        self.stats.packets_in == self.stats.packets_out + self.stats.drops + self.in_flight()
    }
}

/// A pure delay line (the uncongested reverse path): FIFO, constant delay.
pub struct DelayLine<T> {
    pub delay: Time,
    pub line: VecDeque<(Time, T)>,
    pub packets_in: u64,
    pub packets_out: u64,
    pub losses: u64,
}

impl<T: Copy> DelayLine<T> {
    pub fn new(delay: Time) -> Self {
        DelayLine { delay, line: VecDeque::with_capacity(256), packets_in: 0, packets_out: 0, losses: 0 }
    }

    /// Returns the arrival time if the packet is the new head.
    pub fn push(&mut self, pkt: T, now: Time) -> Option<Time> {
        self.packets_in += 1;
        let at = now + self.delay;
        self.line.push_back((at, pkt));
        if self.line.len() == 1 {
            Some(at)
        } else {
            None
        }
    }

    pub fn pop(&mut self) -> (T, Option<Time>) {
        let (_, pkt) = self.line.pop_front().expect("a packet in the delay line");
        self.packets_out += 1;
        (pkt, self.line.front().map(|(t, _)| *t))
    }

    pub fn conserves(&self) -> bool {
        self.packets_in == self.packets_out + self.losses + self.line.len() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{MS, US};

    #[test]
    fn serialisation_and_propagation() {
        // 1500 bytes at 12 Mbps = 1 ms; 10 ms propagation.
        let mut l: Link<u32> = Link::new(12_000_000, 10 * MS, QueueLimit::Packets(2));
        assert!(l.enqueue(1, 1500, 0));
        let (p, done) = l.start_tx(0, |_| 1500).unwrap();
        assert_eq!((p, done), (1, MS));
        assert_eq!(l.finish_tx(done), Some(11 * MS));
        assert_eq!(l.arrive().0, 1);
        assert!(l.conserves());
    }

    #[test]
    fn drop_tail_counts_waiting_packets_only() {
        let mut l: Link<u32> = Link::new(12_000_000, 0, QueueLimit::Packets(2));
        assert!(l.enqueue(1, 1500, 0));
        l.start_tx(0, |_| 1500).unwrap(); // 1 in service
        assert!(l.enqueue(2, 1500, 0));
        assert!(l.enqueue(3, 1500, 0));
        assert!(!l.enqueue(4, 1500, 0)); // 2 waiting: full
        assert_eq!(l.stats.drops, 1);
        assert_eq!(l.in_flight(), 3);
        assert!(l.conserves());
    }

    #[test]
    fn byte_limit() {
        let mut l: Link<u32> = Link::new(12_000_000, 0, QueueLimit::Bytes(3000));
        l.enqueue(0, 1500, 0);
        l.start_tx(0, |_| 1500);
        assert!(l.enqueue(1, 1500, 0));
        assert!(l.enqueue(2, 1500, 0));
        assert!(!l.enqueue(3, 100, 0));
        let _ = US;
    }
}
