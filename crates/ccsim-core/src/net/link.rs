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
use crate::engine::ring::Ring;

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
#[derive(Debug, Clone, Copy, Default)]
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

/// A link direction's serialisation, drop-tail queue and wire (the fast path: each packet's
/// service start and arrival are decided when it is offered).
///
/// The fields are laid out in the order given (`repr(C)`), for the cache: a run with many
/// flows has one direction per host, touched once per packet after it has left the caches.
/// The wire (64 bytes with `Routed` packets) comes first, then the counters (64 bytes), then
/// what serialisation reads (64 bytes), then the waiting queue; [`LinkDir`](super::network::LinkDir)
/// puts its per-packet checks beside the waiting queue, so that a packet's arrival reads 3
/// cache lines of its direction and its offer 5.
#[repr(C)]
pub struct Link<T> {
    /// Accepted packets, in order, with the time their last bit reaches the far end.
    pub wire: DelayLine<T>,
    pub stats: LinkStats,
    pub rate_bps: u64,
    pub delay: Time,
    /// The link is busy until then.
    pub(crate) free_at: Time,
    waiting_bytes: u64,
    pub limit: QueueLimit,
    /// Time-varying rate or delay (None: the constant fast path).
    pub varying: Option<Box<Varying>>,
    /// Serve as a FreeBSD Dummynet pipe, on a kernel tick (None: the exact link above).
    pub tick: Option<Box<TickPipe>>,
    waiting: Ring<Waiting>,
}

/// A FreeBSD Dummynet pipe's timing (ipfw `pipe N config bw R delay D`, FIFO scheduler), in
/// place of the exact serialisation: Dummynet runs once per kernel tick (HZ = 1000: 1 ms) and
/// counts time in whole ticks. Followed from FreeBSD's sys/netpfil/ipfw (the 2010 rewrite, the
/// same in every release since 8.x):
///
/// - ip_dn_io.c `dummynet_io`: a packet arriving at an idle scheduler instance at tick `n`
///   (`dn_cfg.curr_time`, the ticks counted so far: the arrival time rounded down) starts
///   with `credit = 0` (`io_fast` is off by default: ip_dummynet.c `ip_dn_init` leaves it 0)
///   if the instance went idle before this tick (`idle_time < curr_time`), else keeps the
///   credit it had; then `serve_sched` runs at once.
/// - ip_dn_io.c `serve_sched`: `credit += (now - sched_time) * bw`; while `credit >= 0` and a
///   packet is queued, dequeue it, `credit -= hz * bits`, and put it on the delay line with
///   `output_time = curr_time + delay`. If the credit is then negative, the last packet
///   dequeued gets `output_time += ceil(-credit / bw)` ticks (its transmission ends then)
///   and the instance sleeps until `now + ceil(-credit / bw)`; else it is idle
///   (`idle_time = now`) and keeps its credit.
/// - ip_dn_io.c `dummynet_task` / `transmit_event`: each tick, the packets whose
///   `output_time` has come leave the delay line together, at the tick.
/// - ip_dummynet.c `config_link`: `delay = delay_ms * hz / 1000`, whole ticks rounded down.
/// - ip_dn_io.c `dn_enqueue`: the queue limit counts the packets not yet dequeued (the one
///   "being transmitted" is on the delay line): a packet waits in the queue until the tick at
///   which the scheduler dequeues it.
///
/// So a packet's fate is still decided when it is offered (FIFO, nothing later changes it):
/// its dequeue tick and the credit left follow from the previous packet's, and it reaches the
/// far end at tick `dequeue + delay + ceil(-credit / bw)`. Credit is kept exactly, in bit-ns
/// (Dummynet's `bits x hz` times the tick in ns): a tick adds `tick_ns x rate_bps`, a packet
/// costs `bits x 1e9`.
#[derive(Debug, Clone)]
pub struct TickPipe {
    pub tick: Time,
    /// The pipe's delay in whole ticks (rounded down, as `config_link` does).
    pub delay_ticks: u64,
    /// The dequeue tick of the last packet accepted and the credit left after it (None:
    /// nothing accepted yet).
    last: Option<(u64, i128)>,
}

impl TickPipe {
    pub fn new(tick: Time, delay: Time) -> Self {
        assert!(tick > 0, "a tick of zero");
        TickPipe { tick, delay_ticks: delay / tick, last: None }
    }

    /// The tick at which a packet arriving at `now` is dequeued and the credit then, before
    /// its own cost (see the type's comment).
    fn dequeue_at(&self, now: Time, rate_bps: u64) -> (u64, i128) {
        let n = now / self.tick;
        let Some((tp, cp)) = self.last else { return (n, 0) };
        let gain = self.tick as i128 * rate_bps as i128;
        // The instance is ready again at tick r with credit cr >= 0 (idle from then on).
        let (r, cr) = if cp >= 0 {
            (tp, cp)
        } else {
            let k = (-cp + gain - 1) / gain;
            (tp + k as u64, cp + k * gain)
        };
        if n <= r {
            (r, cr)
        } else {
            // Idle since before this tick: the credit is reset (`idle_time < curr_time`).
            (n, 0)
        }
    }
}

impl<T: Copy + Default> Link<T> {
    pub fn new(rate_bps: u64, delay: Time, limit: QueueLimit) -> Self {
        Link {
            rate_bps,
            delay,
            limit,
            free_at: 0,
            waiting: Ring::new(),
            waiting_bytes: 0,
            wire: DelayLine::new(delay),
            stats: LinkStats::default(),
            varying: None,
            tick: None,
        }
    }

    /// Serve this link as a Dummynet pipe on a kernel tick of `tick` (see [`TickPipe`]),
    /// before the run starts. Its delay becomes whole ticks (rounded down).
    pub fn set_tick(&mut self, tick: Time) {
        assert!(self.varying.is_none(), "a ticked link has a constant rate and delay");
        self.tick = Some(Box::new(TickPipe::new(tick, self.delay)));
    }

    /// Forget the waiting packets whose service has started by `now`.
    #[inline]
    fn expire(&mut self, now: Time) {
        // Every waiting packet starts before the link frees up (`wait`): once it has, they
        // all have started, and the queue is emptied without reading its entries (with many
        // flows an idle host link's entries have left the caches).
        if self.free_at <= now {
            if !self.waiting.is_empty() {
                self.waiting.clear();
                self.waiting_bytes = 0;
            }
            return;
        }
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
    #[inline]
    pub fn offer(&mut self, pkt: T, bytes: u32, now: Time) -> Offer {
        self.stats.packets_in += 1;
        self.expire(now);
        if self.tick.is_some() {
            return self.offer_tick(pkt, bytes, now);
        }
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

    /// Waiting packets (not counting `bytes` about to join) make the limit refuse one more.
    #[inline]
    fn full(&self, bytes: u32) -> bool {
        match self.limit {
            QueueLimit::Unlimited => false,
            QueueLimit::Packets(n) => self.waiting.len() as u64 >= n,
            QueueLimit::Bytes(b) => self.waiting_bytes + bytes as u64 > b,
        }
    }

    /// [`Link::offer`] on a Dummynet pipe (see [`TickPipe`]). The limit is ccsim's (packets
    /// waiting, or their bytes with this one), counted over the packets not yet dequeued; as
    /// on the exact link, a packet dequeued at once is never dropped. A link without a rate
    /// (Dummynet's `bw 0`) only delays: out at tick `n + delay`.
    #[cold]
    #[inline(never)]
    fn offer_tick(&mut self, pkt: T, bytes: u32, now: Time) -> Offer {
        let rate = self.rate_bps;
        let tp = self.tick.as_deref().expect("a ticked link");
        let (tick, delay_ticks) = (tp.tick, tp.delay_ticks);
        let (deq, credit) = if rate == 0 { (now / tick, 0) } else { tp.dequeue_at(now, rate) };
        let start = deq * tick;
        if start > now && self.full(bytes) {
            self.stats.drops += 1;
            return Offer::Dropped;
        }
        let mut out = deq + delay_ticks;
        if rate > 0 {
            let gain = tick as i128 * rate as i128;
            let left = credit - bytes as i128 * 8 * 1_000_000_000;
            if left < 0 {
                // The last packet of the tick's batch leaves when its transmission ends.
                out += ((-left + gain - 1) / gain) as u64;
            }
            self.tick.as_deref_mut().expect("a ticked link").last = Some((deq, left));
            self.stats.busy_time += tx_time(bytes as u64, rate);
            self.free_at = self.free_at.max((out - delay_ticks) * tick);
        }
        // Out at the tick; a packet put straight through (delay 0, credit left) leaves at once
        // (`serve_sched` calls `transmit_event` with the arrival's tick, which has begun).
        let mut at = (out * tick).max(now);
        if let Some(&(last, _)) = self.wire.line.back() {
            at = at.max(last);
        }
        self.wait(now, start, bytes);
        let head_arrival = self.wire.push_at(pkt, at);
        Offer::Accepted { queue_delay: start.saturating_sub(now), head_arrival }
    }

    /// Count a packet accepted at `now` whose service starts at `start`.
    #[inline]
    fn wait(&mut self, now: Time, start: Time, bytes: u32) {
        if start > now {
            debug_assert!(start <= self.free_at, "a packet waits to start before the link frees up");
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
        for w in self.waiting.iter() {
            self.stats.queue_area -= (w.start - w.arrival.max(end)) as u128;
        }
    }

    /// packets_in = packets_out + drops + still queued, in service or on the wire.
    pub fn conserves(&self) -> bool {
        self.stats.packets_in == self.stats.packets_out + self.stats.drops + self.in_flight()
    }

    /// Bytes its queue and wire hold, for memory accounting.
    pub fn heap_bytes(&self) -> usize {
        self.waiting.capacity() * std::mem::size_of::<Waiting>() + self.wire.heap_bytes() + self.tick.as_ref().map_or(0, |_| std::mem::size_of::<TickPipe>())
    }
}

/// A pure delay line (the uncongested reverse path): FIFO, constant delay.
pub struct DelayLine<T> {
    pub delay: Time,
    pub line: Ring<(Time, T)>,
    pub packets_in: u64,
    pub packets_out: u64,
    pub losses: u64,
}

impl<T: Copy + Default> DelayLine<T> {
    pub fn new(delay: Time) -> Self {
        DelayLine { delay, line: Ring::new(), packets_in: 0, packets_out: 0, losses: 0 }
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

    /// Arrival times at the far end of the packets offered at `times` (µs) to a 10 Mbps
    /// Dummynet pipe with a 1 ms tick and `delay`, in µs (None: dropped).
    fn ticked(delay: Time, limit: QueueLimit, bytes: u32, times_us: &[u64]) -> (Vec<Option<u64>>, Link<u32>) {
        let mut l: Link<u32> = Link::new(10_000_000, delay, limit);
        l.set_tick(MS);
        let mut ok = Vec::new();
        for (i, &t) in times_us.iter().enumerate() {
            ok.push(matches!(l.offer(i as u32, bytes, t * 1000), Offer::Accepted { .. }));
        }
        let mut out = Vec::new();
        for &accepted in &ok {
            out.push(accepted.then(|| {
                let at = l.wire.line.front().unwrap().0;
                l.arrive();
                at / 1000
            }));
        }
        assert!(l.conserves());
        (out, l)
    }

    #[test]
    fn a_dummynet_pipe_releases_a_packet_at_the_tick_its_transmission_ends() {
        // 1500 B at 10 Mbps = 1.2 ticks. The first arrives at tick 0 (0.3 ms): credit 0, out
        // at 0 + 20 + ceil(1.2) = 22 ms. Those queued behind it are dequeued when the credit
        // is back at >= 0 and leave at the ceiling of their fluid finish times 2.4, 3.6, 4.8,
        // 6.0, 7.2 ticks (+ 20). An exact link would deliver at 21.5, 22.7, 23.9, ... ms.
        let (out, _) = ticked(20 * MS, QueueLimit::Unlimited, 1500, &[300, 500, 600, 700, 800, 900]);
        assert_eq!(out, [22_000, 23_000, 24_000, 25_000, 26_000, 28_000].map(Some));
    }

    #[test]
    fn a_dummynet_pipe_resets_its_credit_after_a_whole_idle_tick_and_keeps_it_within_one() {
        // After 0.3 ms the pipe is idle from tick 2 with credit 0.8 tick. At 30.4 ms (tick 30)
        // the credit is reset to 0: out at 30 + 20 + 2. The next at 32.0 ms is in the tick the
        // pipe went idle (32: 30 + ceil(1.2)), so it keeps the 0.8: out at 32 + 20 + 1.
        let (out, _) = ticked(20 * MS, QueueLimit::Unlimited, 1500, &[300, 30_400, 32_000]);
        assert_eq!(out, [22_000, 52_000, 53_000].map(Some));
    }

    #[test]
    fn a_dummynet_pipe_sends_what_the_credit_covers_in_one_burst() {
        // 100 B = 0.08 tick. The first (tick 0) leaves at 0 + 5 + 1; the next two, queued
        // while the scheduler sleeps until tick 1, are dequeued there with credit 0.92 and
        // stay covered: out at 1 + 5, the same tick. One at 1.5 ms comes in the tick the pipe
        // went idle with credit left: dequeued at once, out at 1 + 5 too.
        let (out, _) = ticked(5 * MS, QueueLimit::Unlimited, 100, &[100, 200, 300, 1500]);
        assert_eq!(out, [6_000, 6_000, 6_000, 6_000].map(Some));
        // Without a delay such a packet goes straight through, at its arrival (the fast path).
        let (out, _) = ticked(0, QueueLimit::Unlimited, 100, &[100, 200, 1500]);
        assert_eq!(out, [Some(1_000), Some(1_000), Some(1_500)]);
    }

    #[test]
    fn a_dummynet_pipe_counts_the_packets_not_yet_dequeued_against_its_limit() {
        // One slot: at 0.5 ms the second waits for tick 2, so the third is dropped. At
        // 2.1 ms the second has been dequeued, so the fourth is taken (dequeued at tick 3,
        // where the credit is back at >= 0: out at 3 + 20 + 1).
        let (out, l) = ticked(20 * MS, QueueLimit::Packets(1), 1500, &[300, 500, 600, 2_100]);
        assert_eq!(out, [Some(22_000), Some(23_000), None, Some(24_000)]);
        assert_eq!(l.stats.drops, 1);
    }

    #[test]
    fn a_dummynet_pipe_rounds_its_delay_down_to_whole_ticks_and_without_a_rate_only_delays() {
        let (out, _) = ticked(MS * 25 / 10, QueueLimit::Unlimited, 1500, &[300]);
        assert_eq!(out, [Some(4_000)]); // 0 + 2 + 2
        let mut l: Link<u32> = Link::new(0, 20 * MS, QueueLimit::Unlimited);
        l.set_tick(MS);
        assert_eq!(l.offer(0, 1500, 300_000), Offer::Accepted { queue_delay: 0, head_arrival: Some(20 * MS) });
        assert_eq!(l.offer(1, 1500, 999_999), Offer::Accepted { queue_delay: 0, head_arrival: None });
        assert_eq!(l.offer(2, 1500, MS), Offer::Accepted { queue_delay: 0, head_arrival: None });
        assert_eq!(l.arrive(), (0, Some(20 * MS)));
        assert_eq!(l.arrive(), (1, Some(21 * MS)));
    }

    #[test]
    fn a_dummynet_pipe_delivers_its_rate() {
        // Backlogged for 1 s: 10 Mbps of 1500 B packets is 833.3 a second; all are out by
        // 1 s + 1 tick + the delay.
        let mut l: Link<u32> = Link::new(10_000_000, 20 * MS, QueueLimit::Unlimited);
        l.set_tick(MS);
        for i in 0..834 {
            accepted(l.offer(i, 1500, 0));
        }
        let mut last = 0;
        let mut per_tick = std::collections::BTreeMap::new();
        while let Some(&(t, _)) = l.wire.line.front() {
            assert_eq!(t % MS, 0, "leaves at a tick");
            *per_tick.entry(t).or_insert(0) += 1;
            last = t;
            l.arrive();
        }
        // 834 x 1.2 ticks = 1000.8 -> tick 1001, + 20.
        assert_eq!(last, 1021 * MS);
        assert!(per_tick.values().all(|&n| n == 1));
    }
}
