//! The event queue: a 4-ary heap keyed by (time, insertion sequence), so events at the same
//! nanosecond run in the order they were scheduled. Links decide a packet's service and
//! arrival times when it is offered and keep their in-flight packets in FIFO delay lines, with
//! an event for the head only, so the heap holds O(links + timers) entries, not one per packet.
//! A link with a queue discipline needs one event per packet (the end of its serialisation);
//! the first such pending event waits in one slot beside the heap instead of going through it.

use crate::time::Time;
use std::cell::Cell;
use super::ring::Ring;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Event {
    /// The head packet of a link direction's wire reaches the far end.
    LinkArrive(u32),
    /// A link direction with a queue discipline finishes serialising a packet.
    LinkTxDone(u32),
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
    #[default]
    Sample,
    /// A UDP flow's next datagram.
    UdpGen(u32),
    /// The next flow of a `[[workloads]]` entry arrives.
    WorkloadArrival(u32),
    /// A shared medium's events name a station by its number across all media (and a
    /// generation, its low 32 bits, where a newer event supersedes older ones); see
    /// [`crate::net::wifi`]. A station's backoff countdown may end.
    AirAccess { station: u16, gen: u32 },
    /// A station's transmission ends.
    AirTxEnd(u32),
    /// A station sends the MAC ACK it owes.
    AirAckStart(u32),
    /// A station's wait for a MAC ACK may time out.
    AirAckTimeout { station: u16, gen: u32 },
    /// A station's host CPU finishes its job.
    AirCpuDone(u32),
    /// Another network's frame starts or ends on a medium.
    AirBackground(u32),
    AirBackgroundEnd(u32),
    /// A station's management timer (`kind` 0: a mesh beacon; k > 0: HWMP path k - 1's PREQ).
    AirMgmt { station: u16, kind: u32 },
}

// An event is as small as a time: the queue moves thousands of them per simulated second.
const _: () = assert!(std::mem::size_of::<Event>() == 8);

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

/// The most entries [`EventQueue::next_stored_radix`] searches for its hint.
const PEEK_SCAN_MAX: usize = 16;

/// Pending events above this many (expected) use the radix queue; below, the 4-ary heap.
pub const RADIX_ABOVE: usize = 512;

/// Events in time order, same-time events in insertion order.
///
/// Events scheduled for the current instant (zero-delay hops, immediate ACKs) skip the ordered
/// store and go to a FIFO. Entries of the store for the current instant were necessarily
/// scheduled before any of them, so "stored entries at `now` first, then the FIFO" keeps the
/// insertion order exactly.
///
/// The others are kept, keyed by (time, insertion sequence), in one of two stores that pop in
/// exactly the same order (so a run gives the same results with either):
/// - a 4-ary min-heap ([`Heap4`]), fastest with few pending events (a dumbbell with a few
///   flows has about ten);
/// - a radix queue ([`Radix`]), for many pending events (thousands of flows each with timers
///   and packets in flight): it moves an entry a few times over its life by sequential appends
///   instead of sifting it through a deep heap (10,000 flows: 18% fewer instructions for the
///   whole run). Its paths are kept out of line so that the heap's stays as small as before.
#[derive(Debug)]
pub struct EventQueue<E = Event> {
    /// The store while `radix` is None.
    heap: Heap4<E>,
    /// The store of a queue made for many pending events.
    radix: Option<Box<Radix<E>>>,
    now_fifo: Ring<E>,
    /// One entry kept beside the heap ([`EventQueue::schedule_soon`]), and its time
    /// (`Time::MAX` when there is none: then every heap entry comes first with one comparison).
    soon: Option<Entry<E>>,
    soon_time: Time,
    /// The time of the last popped event: the instant the FIFO belongs to.
    now: Time,
    seq: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue { heap: Heap4 { heap: Vec::new(), n: 0 }, radix: None, now_fifo: Ring::new(), soon: None, soon_time: Time::MAX, now: 0, seq: 0 }
    }
}

impl<E: Copy + Default> EventQueue<E> {
    /// A queue for about `n` pending events: a heap up to [`RADIX_ABOVE`], a radix queue above.
    pub fn with_capacity(n: usize) -> Self {
        if n > RADIX_ABOVE {
            Self::radix()
        } else {
            Self::heap(n)
        }
    }

    /// A queue on a 4-ary heap with room for `n` pending events.
    pub fn heap(n: usize) -> Self {
        EventQueue { heap: Heap4 { heap: Vec::with_capacity(n + ARITY), n: 0 }, radix: None, now_fifo: Ring::with_capacity(16), soon: None, soon_time: Time::MAX, now: 0, seq: 0 }
    }

    /// A queue on a radix queue.
    pub fn radix() -> Self {
        EventQueue { heap: Heap4 { heap: Vec::new(), n: 0 }, radix: Some(Box::new(Radix::new())), now_fifo: Ring::with_capacity(16), soon: None, soon_time: Time::MAX, now: 0, seq: 0 }
    }

    #[inline]
    pub fn schedule(&mut self, time: Time, ev: E) {
        debug_assert!(time >= self.now, "an event in the past");
        if time == self.now {
            self.now_fifo.push_back(ev);
            return;
        }
        if self.radix.is_some() {
            return self.schedule_radix(time, ev);
        }
        self.seq += 1;
        self.heap.push(Entry { time, seq: self.seq, ev });
    }

    /// As [`EventQueue::schedule`] (the same order: the entry takes the next insertion
    /// sequence), for an event that is due soon and scheduled once per packet, of which a run
    /// usually has one pending: the end of a serialisation on a link direction with a queue
    /// discipline. The first such event is kept beside the heap, where `pop` takes it with one
    /// comparison instead of sifting it into the heap and out again; others (several such
    /// directions busy at once, or a radix queue) are scheduled as usual.
    #[inline]
    pub fn schedule_soon(&mut self, time: Time, ev: E) {
        if self.soon.is_some() || self.radix.is_some() || time == self.now {
            return self.schedule(time, ev);
        }
        debug_assert!(time > self.now, "an event in the past");
        self.seq += 1;
        self.soon = Some(Entry { time, seq: self.seq, ev });
        self.soon_time = time;
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(Time, E)> {
        if self.radix.is_some() {
            return self.pop_radix();
        }
        if self.heap.n > 0 {
            let top = self.heap.heap[0];
            if top.time < self.soon_time || (top.time == self.soon_time && self.soon.is_some_and(|e| top.seq < e.seq)) {
                if top.time == self.now || self.now_fifo.is_empty() {
                    self.heap.pop();
                    self.now = top.time;
                    return Some((self.now, top.ev));
                }
                return self.now_fifo.pop_front().map(|ev| (self.now, ev));
            }
        }
        if let Some(e) = self.soon {
            if e.time == self.now || self.now_fifo.is_empty() {
                self.soon = None;
                self.soon_time = Time::MAX;
                self.now = e.time;
                return Some((self.now, e.ev));
            }
        }
        self.now_fifo.pop_front().map(|ev| (self.now, ev))
    }

    // The radix queue's paths stay out of line, so that the heap's (a few flows, the common
    // case) is as small as before the radix queue existed.

    #[cold]
    #[inline(never)]
    fn schedule_radix(&mut self, time: Time, ev: E) {
        self.seq += 1;
        let e = Entry { time, seq: self.seq, ev };
        self.radix.as_mut().expect("a radix queue").push(e);
    }

    #[cold]
    #[inline(never)]
    fn pop_radix(&mut self) -> Option<(Time, E)> {
        let r = self.radix.as_mut().expect("a radix queue");
        if let Some(t) = r.peek_time() {
            if t == self.now || self.now_fifo.is_empty() {
                let e = r.pop();
                self.now = e.time;
                return Some((self.now, e.ev));
            }
        }
        self.now_fifo.pop_front().map(|ev| (self.now, ev))
    }

    /// The queue keeps its entries in the radix store (it was made for many pending events).
    #[inline(always)]
    pub fn is_radix(&self) -> bool {
        self.radix.is_some()
    }

    /// The event the store gives next (unless one is scheduled before it or is due now), to
    /// prefetch what it will read: the heap's top, or [`EventQueue::next_stored_radix`].
    #[inline]
    pub fn next_stored(&self) -> Option<E> {
        if self.radix.is_some() {
            self.next_stored_radix()
        } else if self.heap.n > 0 {
            Some(self.heap.heap[0].ev)
        } else {
            None
        }
    }

    /// With the radix store: the event it gives next (unless one is scheduled before it), to
    /// prefetch what that event will read. None with the heap store (a few flows, whose state
    /// stays in cache) or when the store is empty. Finding it is the search the next pop does
    /// anyway (the position is kept).
    ///
    /// Only when that is cheap: when the smallest entry's bucket holds more than a few
    /// entries it is not searched (None). Right after a pop the near buckets are often empty
    /// until the popped event's handler schedules its follow-ups (a link's next arrival, a
    /// sender's next packet), so the lowest non-empty bucket can be a far one holding
    /// thousands of entries (10,000 flows: ~10,000 events 17-34 ms ahead), whose minimum the
    /// follow-ups would displace before it is popped: searching it here cost a scan of the
    /// whole bucket each time.
    #[inline]
    pub fn next_stored_radix(&self) -> Option<E> {
        let r = self.radix.as_ref()?;
        r.find_min_within(PEEK_SCAN_MAX).map(|(b, i)| r.buckets[b as usize][i as usize].ev)
    }

    #[cold]
    #[inline(never)]
    fn peek_radix(&self) -> Option<Time> {
        self.radix.as_ref().expect("a radix queue").peek_time()
    }

    #[inline(always)]
    pub fn peek_time(&self) -> Option<Time> {
        if !self.now_fifo.is_empty() {
            return Some(self.now);
        }
        if self.radix.is_some() {
            return self.peek_radix();
        }
        let t = self.heap.peek_time();
        if self.soon_time == Time::MAX {
            return t;
        }
        Some(t.map_or(self.soon_time, |t| t.min(self.soon_time)))
    }

    pub fn len(&self) -> usize {
        let stored = match &self.radix {
            None => self.heap.n,
            Some(r) => r.n,
        };
        stored + self.soon.is_some() as usize + self.now_fifo.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes the queue holds, for memory accounting.
    pub fn heap_bytes(&self) -> usize {
        let stored = match &self.radix {
            None => self.heap.heap.capacity() * std::mem::size_of::<Entry<E>>(),
            Some(r) => r.buckets.iter().map(|b| b.capacity()).sum::<usize>() * std::mem::size_of::<Entry<E>>(),
        };
        stored + self.now_fifo.capacity() * std::mem::size_of::<E>()
    }
}

/// A 4-ary min-heap keyed by (time, insertion sequence). The slots after the last entry hold
/// sentinels (time = MAX), at least ARITY - 1 of them, so every node with a child has all
/// ARITY of them and the smallest is chosen without branches (the order of pending events is
/// data the branch predictor cannot learn).
#[derive(Debug)]
struct Heap4<E> {
    /// Entries in [0, n), sentinels after.
    heap: Vec<Entry<E>>,
    n: usize,
}

impl<E: Copy> Heap4<E> {
    #[inline]
    fn push(&mut self, e: Entry<E>) {
        if self.heap.len() < self.n + ARITY {
            // Grow, padding with sentinels (their payload is never returned).
            self.heap.resize(self.n + 2 * ARITY, Entry { time: Time::MAX, seq: u64::MAX, ev: e.ev });
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

    #[inline(always)]
    fn peek_time(&self) -> Option<Time> {
        if self.n > 0 {
            Some(self.heap[0].time)
        } else {
            None
        }
    }

    /// Remove the smallest entry (the heap is not empty).
    #[inline]
    fn pop(&mut self) -> Entry<E> {
        let top = self.heap[0];
        self.n -= 1;
        let last = self.heap[self.n];
        self.heap[self.n].time = Time::MAX;
        self.heap[self.n].seq = u64::MAX;
        if self.n > 0 {
            self.sift_down_from_root(last);
        }
        top
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
}

/// A radix queue (a radix heap with a cached minimum) of entries keyed by (time, insertion
/// sequence) as one 128-bit integer. Keys only grow: every new key is above `base`, the key of
/// the last entry taken out. An entry lives in bucket `b` when the highest bit in which its key
/// differs from `base` is bit `b`, so every entry of a lower bucket is smaller than every entry
/// of a higher one, and the smallest entry is in the lowest non-empty bucket. Taking it out
/// makes its key the new base and moves the rest of its bucket to lower buckets: an entry moves
/// down at most once per bucket, and each move is a sequential append.
#[derive(Debug)]
struct Radix<E> {
    buckets: Vec<Vec<Entry<E>>>,
    /// Bit `b` set when bucket `b` is not empty.
    nonempty: u128,
    base: u128,
    n: usize,
    /// Where the smallest entry is (bucket, index), once found; kept up to date by `push` and
    /// cleared by `pop`, so a peek followed by a pop searches once.
    min: Cell<Option<(u32, u32)>>,
}

impl<E: Copy> Radix<E> {
    fn new() -> Self {
        Radix { buckets: (0..128).map(|_| Vec::new()).collect(), nonempty: 0, base: 0, n: 0, min: Cell::new(None) }
    }

    #[inline(always)]
    fn bucket(&self, key: u128) -> usize {
        debug_assert!(key > self.base, "keys only grow");
        127 - (key ^ self.base).leading_zeros() as usize
    }

    #[inline]
    fn push(&mut self, e: Entry<E>) {
        let k = e.key();
        let b = self.bucket(k);
        let v = &mut self.buckets[b];
        v.push(e);
        self.nonempty |= 1u128 << b;
        self.n += 1;
        if let Some((mb, mi)) = self.min.get() {
            if k < self.buckets[mb as usize][mi as usize].key() {
                self.min.set(Some((b as u32, (self.buckets[b].len() - 1) as u32)));
            }
        }
    }

    /// [`Radix::find_min`] if it is cached or the lowest non-empty bucket holds at most `max`
    /// entries; else None (and nothing is searched).
    #[inline]
    fn find_min_within(&self, max: usize) -> Option<(u32, u32)> {
        if let Some(m) = self.min.get() {
            return Some(m);
        }
        if self.nonempty == 0 || self.buckets[self.nonempty.trailing_zeros() as usize].len() > max {
            return None;
        }
        self.find_min()
    }

    /// Position of the smallest entry: the smallest of the lowest non-empty bucket.
    #[inline]
    fn find_min(&self) -> Option<(u32, u32)> {
        if let Some(m) = self.min.get() {
            return Some(m);
        }
        if self.nonempty == 0 {
            return None;
        }
        let b = self.nonempty.trailing_zeros();
        let v = &self.buckets[b as usize];
        let mut best = 0;
        let mut bk = v[0].key();
        for (i, e) in v.iter().enumerate().skip(1) {
            let k = e.key();
            if k < bk {
                bk = k;
                best = i;
            }
        }
        let m = (b, best as u32);
        self.min.set(Some(m));
        Some(m)
    }

    #[inline]
    fn peek_time(&self) -> Option<Time> {
        self.find_min().map(|(b, i)| self.buckets[b as usize][i as usize].time)
    }

    /// Remove the smallest entry (the queue is not empty).
    #[inline]
    fn pop(&mut self) -> Entry<E> {
        let (b, i) = self.find_min().expect("an entry");
        let b = b as usize;
        self.min.set(None);
        self.n -= 1;
        let e = self.buckets[b].swap_remove(i as usize);
        self.base = e.key();
        // The rest of the bucket now differs from the base in a lower bit. The bit set is
        // built in a register and stored whole: updated in place bit by bit, it was compiled
        // as 4-byte read-modify-writes, which the next search's 8-byte loads of it cannot take
        // from the store buffer; they then waited for every older store to reach the cache,
        // with many flows a long wait behind stores that miss (perf: 10% of a 10,000-flow run).
        let mut nonempty = self.nonempty & !(1u128 << b);
        if !self.buckets[b].is_empty() {
            let mut v = std::mem::take(&mut self.buckets[b]);
            for x in v.drain(..) {
                let nb = self.bucket(x.key());
                self.buckets[nb].push(x);
                nonempty |= 1u128 << nb;
            }
            self.buckets[b] = v;
        }
        self.nonempty = nonempty;
        e
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn both() -> [EventQueue; 2] {
        [EventQueue::heap(0), EventQueue::radix()]
    }

    #[test]
    fn the_radix_hint_is_the_next_pop_or_nothing() {
        let mut q = EventQueue::radix();
        // 100 entries in one far bucket: too many to search for a hint.
        for k in 0..100u32 {
            q.schedule((1 << 20) + (k as u64 * 37) % 100, Event::Rto(k));
        }
        assert_eq!(q.next_stored_radix(), None);
        assert_eq!(q.pop(), Some(((1 << 20), Event::Rto(0))));
        // The pop spread the bucket out: a hint, when there is one, is the next pop; the
        // order is the schedule's (by time).
        let (mut hints, mut last) = (0, 1 << 20);
        for _ in 1..100 {
            let hint = q.next_stored_radix();
            let (t, e) = q.pop().expect("an entry");
            assert!(t > last);
            last = t;
            if let Some(h) = hint {
                assert_eq!(h, e);
                hints += 1;
            }
        }
        assert_eq!(q.pop(), None);
        // Offsets 64..99 share a bucket of 36 after the first pop: no hint until it splits.
        assert!((60..99).contains(&hints), "{hints} hints");
        assert_eq!(EventQueue::<Event>::heap(0).next_stored_radix(), None);
    }

    #[test]
    fn same_time_events_pop_in_insertion_order() {
        for mut q in both() {
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
    }

    #[test]
    fn events_for_the_current_instant_keep_insertion_order_behind_earlier_ones() {
        for mut q in both() {
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
        for round in 0..400u32 {
            let mut q = if round % 2 == 0 { EventQueue::heap(0) } else { EventQueue::radix() };
            let mut reference: Vec<(Time, u32, u32)> = Vec::new(); // (time, order, id)
            let mut now: Time = 0;
            let mut order = 0u32;
            let steps = 1 + (next() % 300) as usize;
            for _ in 0..steps {
                if next() % 3 != 0 || reference.is_empty() {
                    // Few distinct times, so ties are common; sometimes exactly now; some
                    // rounds spread over a wide range (many radix buckets).
                    let spread = if round % 4 < 2 { 1 + round as u64 % 7 } else { 1 << (round % 50) };
                    let t = now + next() % spread;
                    order += 1;
                    // schedule_soon keeps the same order (it uses the one slot beside the
                    // heap when free, the heap or radix queue otherwise).
                    if next() % 3 == 0 {
                        q.schedule_soon(t, Event::Pace(order));
                    } else {
                        q.schedule(t, Event::Pace(order));
                    }
                    reference.push((t, order, order));
                } else {
                    reference.sort();
                    let (t, _, id) = reference.remove(0);
                    assert_eq!(q.peek_time(), Some(t), "round {round}");
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
        for mut q in both() {
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

    /// The two stores pop the same events in the same order under a hold model with peeks
    /// (as the run loop peeks before each pop) and bursts of same-time events.
    #[test]
    fn heap_and_radix_pop_the_same_sequence() {
        let mut x: u64 = 5;
        let mut next = move || {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            x >> 33
        };
        let (mut h, mut r) = (EventQueue::heap(0), EventQueue::radix());
        for i in 0..5_000u32 {
            let t = next() % 1_000_000;
            h.schedule(t, Event::Pace(i));
            r.schedule(t, Event::Pace(i));
        }
        for step in 0..200_000u32 {
            assert_eq!(h.peek_time(), r.peek_time());
            let (a, b) = (h.pop(), r.pop());
            assert_eq!(a, b, "step {step}");
            let (t, _) = a.unwrap();
            for k in 0..(next() % 3) {
                let d = match next() % 4 {
                    0 => 0,
                    1 => next() % 10,
                    _ => next() % 2_000_000,
                };
                h.schedule(t + d, Event::Rto(step * 4 + k as u32));
                r.schedule(t + d, Event::Rto(step * 4 + k as u32));
            }
            assert_eq!(h.len(), r.len());
            if h.is_empty() {
                break;
            }
        }
    }
}
