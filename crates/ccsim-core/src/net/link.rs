//! Network elements: a serialising link with a drop-tail queue and a FIFO "wire" (propagation
//! delay line), and a pure delay line.
//!
//! A link is work-conserving and FIFO, so a packet's fate is decided the moment it is offered:
//! its service starts at max(arrival, the time the link frees up) and its last bit reaches the
//! far end a serialisation and a propagation delay later. The link therefore needs no event at
//! serialisation boundaries: it keeps the start times of the accepted packets whose service has
//! not started (the queue the drop-tail limit counts) and puts every accepted packet on the
//! wire at once, stamped with its arrival time. Packets on a wire keep their order, so only the
//! head needs an event.

use super::shape::{RateShape, Steps};
use crate::time::{tx_time, Time};
use std::collections::VecDeque;

/// What varies over time on a direction (see [`crate::net::shape`]); a constant direction has
/// none and takes the fast path.
#[derive(Debug, Clone, Default)]
pub struct Varying {
    /// A trace or a rate schedule in place of the constant rate.
    pub rate: Option<RateShape>,
    /// A delay schedule: a packet's propagation delay is the one in force when its
    /// serialisation ends.
    pub delay: Option<Steps<Time>>,
    /// Let a packet overtake the packets on the wire when the delay drops (else it arrives no
    /// earlier than the packet before it: FIFO).
    pub reorder: bool,
}

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
    /// Serialisation time of the accepted packets, up to the end of the run.
    pub busy_time: Time,
    /// Integral of the number of waiting packets over time (packet-nanoseconds).
    pub queue_area: u128,
    pub queue_max: u64,
}

/// An accepted packet whose service has not started yet.
#[derive(Debug, Clone, Copy)]
struct Waiting {
    arrival: Time,
    start: Time,
    bytes: u32,
}

/// What became of an offered packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Offer {
    /// The drop-tail queue was full.
    Dropped,
    /// Accepted: it waits `queue_delay`, then is serialised and propagated. `head_arrival` is
    /// its arrival time at the far end if it is now the head of the wire (the caller schedules
    /// the arrival event).
    Accepted { queue_delay: Time, head_arrival: Option<Time> },
}

pub struct Link<T> {
    pub rate_bps: u64,
    pub delay: Time,
    pub limit: QueueLimit,
    /// The link is busy until then.
    pub(crate) free_at: Time,
    waiting: VecDeque<Waiting>,
    waiting_bytes: u64,
    /// Accepted packets, in order, with the time their last bit reaches the far end.
    pub wire: DelayLine<T>,
    pub stats: LinkStats,
    /// Time-varying rate or delay (None: the constant fast path).
    pub varying: Option<Box<Varying>>,
}

impl<T: Copy> Link<T> {
    pub fn new(rate_bps: u64, delay: Time, limit: QueueLimit) -> Self {
        Link {
            rate_bps,
            delay,
            limit,
            free_at: 0,
            waiting: VecDeque::new(),
            waiting_bytes: 0,
            wire: DelayLine::new(delay),
            stats: LinkStats::default(),
            varying: None,
        }
    }

    /// Forget the waiting packets whose service has started by `now`.
    #[inline]
    fn expire(&mut self, now: Time) {
        while let Some(w) = self.waiting.front() {
            if w.start > now {
                break;
            }
            self.waiting_bytes -= w.bytes as u64;
            self.waiting.pop_front();
        }
    }

    /// Packets and bytes waiting at `now` (not counting the one being serialised).
    pub fn queue_at(&mut self, now: Time) -> (u64, u64) {
        self.expire(now);
        (self.waiting.len() as u64, self.waiting_bytes)
    }

    /// Offer a packet of `bytes` at `now`: drop it if the drop-tail queue is full, else decide
    /// when it is served and when it reaches the far end.
    pub fn offer(&mut self, pkt: T, bytes: u32, now: Time) -> Offer {
        self.stats.packets_in += 1;
        self.expire(now);
        let full = match self.limit {
            QueueLimit::Unlimited => false,
            QueueLimit::Packets(n) => self.waiting.len() as u64 >= n,
            QueueLimit::Bytes(b) => self.waiting_bytes + bytes as u64 > b,
        };
        // An idle link takes the packet straight into service (nothing waits then either).
        if full && self.free_at > now {
            self.stats.drops += 1;
            return Offer::Dropped;
        }
        if self.varying.is_some() {
            return self.offer_varying(pkt, bytes, now);
        }
        let start = now.max(self.free_at);
        let d = tx_time(bytes as u64, self.rate_bps);
        self.free_at = start + d;
        self.stats.busy_time += d;
        self.wait(now, start, bytes);
        let head_arrival = self.wire.push_at(pkt, self.free_at + self.delay);
        Offer::Accepted { queue_delay: start - now, head_arrival }
    }

    /// Count a packet accepted at `now` whose service starts at `start`.
    #[inline]
    fn wait(&mut self, now: Time, start: Time, bytes: u32) {
        if start > now {
            self.waiting.push_back(Waiting { arrival: now, start, bytes });
            self.waiting_bytes += bytes as u64;
            self.stats.queue_area += (start - now) as u128;
            self.stats.queue_max = self.stats.queue_max.max(self.waiting.len() as u64);
        }
    }

    /// [`Link::offer`] on a direction whose rate or delay varies (accepted: the limit is
    /// checked).
    #[cold]
    #[inline(never)]
    fn offer_varying(&mut self, pkt: T, bytes: u32, now: Time) -> Offer {
        let (start, end) = self.service(now, now, bytes);
        self.wait(now, start, bytes);
        let head_arrival = self.put_on_wire(pkt, end);
        Offer::Accepted { queue_delay: start - now, head_arrival }
    }

    /// Serialise `bytes` that arrived at `arrival`, not starting before `earliest` (nor before
    /// the link frees up): the service start and end. Counts busy time and frees the link at
    /// the end (`Time::MAX`: never, a trailing outage).
    pub(crate) fn service(&mut self, arrival: Time, earliest: Time, bytes: u32) -> (Time, Time) {
        let shape = self.varying.as_deref_mut().and_then(|v| v.rate.as_mut());
        let (start, end) = match shape {
            Some(r) => r.serve(arrival, earliest.max(self.free_at), bytes),
            None => {
                let start = arrival.max(earliest).max(self.free_at);
                let d = tx_time(bytes as u64, self.rate_bps);
                self.stats.busy_time += d;
                (start, start + d)
            }
        };
        self.free_at = end;
        (start, end)
    }

    /// Put a packet whose serialisation ends at `end` on the wire: its arrival is `end` plus
    /// the delay then in force (no earlier than the packet before it unless the direction
    /// reorders). Returns the arrival if the packet heads the wire (never for `Time::MAX`).
    pub(crate) fn put_on_wire(&mut self, pkt: T, end: Time) -> Option<Time> {
        let (delay, reorder) = match self.varying.as_deref() {
            Some(Varying { delay: Some(d), reorder, .. }) => (d.at(end), *reorder),
            _ => (self.delay, false),
        };
        let mut at = end.saturating_add(delay);
        if !reorder {
            if let Some(&(last, _)) = self.wire.line.back() {
                at = at.max(last);
            }
            return self.wire.push_at(pkt, at).filter(|&t| t != Time::MAX);
        }
        self.wire.insert_at(pkt, at).filter(|&t| t != Time::MAX)
    }

    /// Take the head of the wire; returns it and the arrival time of the next, if any.
    pub fn arrive(&mut self) -> (T, Option<Time>) {
        self.stats.packets_out += 1;
        self.wire.pop()
    }

    /// Packets accepted and not yet out of the far end (waiting, in service or propagating).
    pub fn in_flight(&self) -> u64 {
        self.wire.line.len() as u64
    }

    /// Close the books at the end of the run: serialisation and waiting after `end` (already
    /// decided, never happening) are not counted.
    pub fn finish_accounting(&mut self, end: Time) {
        self.stats.busy_time -= self.free_at.saturating_sub(end).min(self.stats.busy_time);
        self.expire(end);
        for w in &self.waiting {
            self.stats.queue_area -= (w.start - w.arrival.max(end)) as u128;
        }
    }

    /// packets_in = packets_out + drops + still queued, in service or on the wire.
    pub fn conserves(&self) -> bool {
        self.stats.packets_in == self.stats.packets_out + self.stats.drops + self.in_flight()
    }

    /// Bytes its queue and wire hold, for memory accounting.
    pub fn heap_bytes(&self) -> usize {
        self.waiting.capacity() * std::mem::size_of::<Waiting>() + self.wire.heap_bytes()
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
        DelayLine { delay, line: VecDeque::new(), packets_in: 0, packets_out: 0, losses: 0 }
    }

    /// Returns the arrival time if the packet is the new head.
    pub fn push(&mut self, pkt: T, now: Time) -> Option<Time> {
        self.push_at(pkt, now + self.delay)
    }

    /// Add a packet arriving at `at` (not before the last one's arrival). Returns `at` if the
    /// packet is the new head.
    #[inline]
    pub fn push_at(&mut self, pkt: T, at: Time) -> Option<Time> {
        debug_assert!(self.line.back().map_or(true, |&(t, _)| t <= at), "a delay line keeps FIFO order");
        self.packets_in += 1;
        self.line.push_back((at, pkt));
        if self.line.len() == 1 {
            Some(at)
        } else {
            None
        }
    }

    /// Add a packet arriving at `at`, after the packets arriving no later (a wire that lets
    /// packets overtake). Returns `at` if the packet is the new head.
    pub fn insert_at(&mut self, pkt: T, at: Time) -> Option<Time> {
        self.packets_in += 1;
        let i = self.line.partition_point(|&(t, _)| t <= at);
        self.line.insert(i, (at, pkt));
        (i == 0).then_some(at)
    }

    pub fn pop(&mut self) -> (T, Option<Time>) {
        let (_, pkt) = self.line.pop_front().expect("a packet in the delay line");
        self.packets_out += 1;
        (pkt, self.line.front().map(|(t, _)| *t))
    }

    pub fn conserves(&self) -> bool {
        self.packets_in == self.packets_out + self.losses + self.line.len() as u64
    }

    /// Bytes the line holds, for memory accounting.
    pub fn heap_bytes(&self) -> usize {
        self.line.capacity() * std::mem::size_of::<(Time, T)>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::MS;

    fn accepted(o: Offer) -> (Time, Option<Time>) {
        match o {
            Offer::Accepted { queue_delay, head_arrival } => (queue_delay, head_arrival),
            Offer::Dropped => panic!("dropped"),
        }
    }

    #[test]
    fn serialisation_and_propagation() {
        // 1500 bytes at 12 Mbps = 1 ms; 10 ms propagation.
        let mut l: Link<u32> = Link::new(12_000_000, 10 * MS, QueueLimit::Packets(2));
        assert_eq!(accepted(l.offer(1, 1500, 0)), (0, Some(11 * MS)));
        // The second waits for the first and is not the head of the wire.
        assert_eq!(accepted(l.offer(2, 1500, 0)), (MS, None));
        assert_eq!(l.arrive(), (1, Some(12 * MS)));
        assert_eq!(l.arrive(), (2, None));
        assert!(l.conserves());
    }

    #[test]
    fn drop_tail_counts_waiting_packets_only() {
        let mut l: Link<u32> = Link::new(12_000_000, 0, QueueLimit::Packets(2));
        accepted(l.offer(1, 1500, 0)); // in service until 1 ms
        accepted(l.offer(2, 1500, 0)); // waits until 1 ms
        accepted(l.offer(3, 1500, 0)); // waits until 2 ms
        assert_eq!(l.offer(4, 1500, 0), Offer::Dropped); // 2 waiting: full
        assert_eq!(l.queue_at(0), (2, 3000));
        // At 1 ms packet 2 starts service: one waits, so there is room again.
        assert_eq!(l.queue_at(MS), (1, 1500));
        assert_eq!(accepted(l.offer(5, 1500, MS)).0, 2 * MS);
        assert_eq!(l.stats.drops, 1);
        assert_eq!(l.in_flight(), 4);
        assert!(l.conserves());
    }

    #[test]
    fn an_idle_link_takes_a_packet_whatever_the_limit() {
        let mut l: Link<u32> = Link::new(12_000_000, 0, QueueLimit::Packets(0));
        assert_eq!(accepted(l.offer(1, 1500, 0)).0, 0);
        assert_eq!(l.offer(2, 1500, MS / 2), Offer::Dropped);
        // Free again at exactly 1 ms.
        assert_eq!(accepted(l.offer(3, 1500, MS)).0, 0);
    }

    #[test]
    fn byte_limit() {
        let mut l: Link<u32> = Link::new(12_000_000, 0, QueueLimit::Bytes(3000));
        accepted(l.offer(0, 1500, 0));
        accepted(l.offer(1, 1500, 0));
        accepted(l.offer(2, 1500, 0));
        assert_eq!(l.offer(3, 100, 0), Offer::Dropped);
    }

    #[test]
    fn busy_time_and_queue_integral_stop_at_the_end_of_the_run() {
        let mut l: Link<u32> = Link::new(12_000_000, 0, QueueLimit::Unlimited);
        for i in 0..4 {
            accepted(l.offer(i, 1500, 0)); // served 0-1, 1-2, 2-3, 3-4 ms
        }
        assert_eq!(l.stats.queue_max, 3);
        // Waiting time decided: 1 + 2 + 3 ms.
        assert_eq!(l.stats.queue_area, 6 * MS as u128);
        // The run ends at 2.5 ms: busy 2.5 ms; waiting up to then 1 + 2 + 2.5 ms.
        l.finish_accounting(5 * MS / 2);
        assert_eq!(l.stats.busy_time, 5 * MS / 2);
        assert_eq!(l.stats.queue_area, 11 * MS as u128 / 2);
    }

    #[test]
    fn a_delay_schedule_keeps_fifo_order_unless_reorder() {
        use crate::net::shape::Steps;
        for reorder in [false, true] {
            let mut l: Link<u32> = Link::new(12_000_000, 100 * MS, QueueLimit::Unlimited);
            l.varying = Some(Box::new(Varying { rate: None, delay: Some(Steps::new(vec![(0, 100 * MS), (2 * MS, 10 * MS)])), reorder }));
            // Ends at 1 ms: arrives at 101 ms. Ends at 2 ms: 10 ms delay, 12 ms.
            assert_eq!(accepted(l.offer(1, 1500, 0)), (0, Some(101 * MS)));
            let (_, head) = accepted(l.offer(2, 1500, 0));
            if reorder {
                assert_eq!(head, Some(12 * MS));
                assert_eq!(l.arrive(), (2, Some(101 * MS)));
            } else {
                assert_eq!(head, None);
                assert_eq!(l.arrive(), (1, Some(101 * MS)));
            }
        }
    }
}
