//! Nodes, link directions, delay segments and routes (see the module comment of [`crate::net`]).

use super::link::{DelayLine, Link, QueueLimit};
use super::qdisc::{Qdisc, Queued, Slot};
use super::wifi::Dcf;
use super::{PacketStore, Routed};
use crate::rng::Rng;
use crate::stats::Histogram;
use crate::time::Time;

/// One direction of a link: from one node to another, with its own rate, delay, queue and
/// random loss.
///
/// Laid out in the order given and on its own cache lines (`repr(C, align(64))`), for runs
/// with many flows, where each host's direction has left the caches between its packets: the
/// link (see [`Link`]), then the per-packet checks (discipline, capture, random loss), then the
/// queueing-delay statistics, then what only the outputs read.
#[repr(C, align(64))]
pub struct LinkDir {
    /// Serialisation, queue and wire. For an unlimited direction (`rate_bps == 0`) only the
    /// delay and the packet counters are used: flows cross it inside their delay segments.
    pub link: Link<Routed>,
    /// A queue discipline in place of the fast path's FIFO (see [`crate::net::qdisc`]).
    pub slot: Option<Box<Slot>>,
    /// The packet capture this direction writes to (an index into the run's captures).
    pub capture: Option<u32>,
    /// The loss's random stream (None when `loss` is 0: nothing is drawn). Boxed: a stream is
    /// about 300 bytes and most directions (a dumbbell's access links) have none.
    pub loss_rng: Option<Box<Rng>>,
    /// A loss schedule in place of `loss` (drawn when a packet leaves the wire).
    pub loss_steps: Option<Box<crate::net::shape::Steps<f64>>>,
    /// Probability that a packet crossing this direction is lost at random. On a direction
    /// with a rate it is drawn when the packet leaves the wire (the packet used link time, like
    /// a corrupted frame); on an unlimited direction when the packet enters its delay segment.
    pub loss: f64,
    /// Queueing delay of the packets whose service starts within the run: their sum (ns,
    /// summed as f64 in arrival order) and their histogram.
    pub qdelay_sum: f64,
    pub qdelay_hist: Histogram,
    /// `"from->to"`, with the nodes' names.
    pub id: String,
    pub from: u32,
    pub to: u32,
}

impl LinkDir {
    #[allow(clippy::too_many_arguments)]
    pub fn new(id: String, from: u32, to: u32, rate_bps: u64, delay: Time, limit: QueueLimit, loss: f64, loss_rng: Option<Rng>) -> Self {
        LinkDir {
            id,
            from,
            to,
            link: Link::new(rate_bps, delay, limit),
            loss,
            loss_rng: if loss > 0.0 { loss_rng.map(Box::new) } else { None },
            qdelay_hist: Histogram::default(),
            qdelay_sum: 0.0,
            slot: None,
            loss_steps: None,
            capture: None,
        }
    }

    /// Prefetch what offering a packet reads: the link, the per-packet checks, the
    /// queueing-delay histogram (see [`crate::engine::prefetch`]).
    #[inline]
    pub fn prefetch_offer(&self) {
        crate::engine::prefetch::span(self, 0, std::mem::offset_of!(LinkDir, id));
        self.qdelay_hist.prefetch();
    }

    /// Serve this direction's queue with `qdisc` (before the run starts).
    pub fn set_qdisc(&mut self, qdisc: Box<dyn Qdisc>) {
        self.set_named_qdisc("custom", qdisc);
    }

    /// As [`LinkDir::set_qdisc`], with the discipline's registry name (for the outputs).
    pub fn set_named_qdisc(&mut self, name: &'static str, qdisc: Box<dyn Qdisc>) {
        assert!(!self.unlimited(), "{}: an unlimited direction has no queue", self.id);
        let mut slot = Slot::new(qdisc);
        slot.name = name;
        self.slot = Some(Box::new(slot));
    }

    /// The discipline's name: "fifo" on the fast path.
    pub fn qdisc_name(&self) -> &'static str {
        self.slot.as_ref().map_or("fifo", |s| s.name)
    }

    /// Overflows: the buffer's, and the discipline's own limit.
    pub fn overflow_drops(&self) -> u64 {
        self.link.stats.drops + self.slot.as_ref().map_or(0, |s| s.overflow_drops)
    }

    /// Drops by the discipline's AQM decision.
    pub fn aqm_drops(&self) -> u64 {
        self.slot.as_ref().map_or(0, |s| s.aqm_drops)
    }

    /// ECN marks by the discipline.
    pub fn marks(&self) -> u64 {
        self.slot.as_ref().map_or(0, |s| s.qdisc.marks())
    }

    /// Packets and bytes waiting at `now` (not the one being serialised).
    pub fn queue_at(&mut self, now: Time) -> (u64, u64) {
        match &self.slot {
            None => self.link.queue_at(now),
            Some(s) => (s.waiting as u64, s.qdisc.bytes()),
        }
    }

    /// Packets accepted and not yet out of the far end.
    pub fn in_flight(&self) -> u64 {
        let held = self.slot.as_ref().map_or(0, |s| s.waiting as u64 + s.in_service.is_some() as u64);
        self.link.in_flight() + held
    }

    /// packets_in = packets_out + drops (the buffer's and the discipline's) + still queued, in
    /// service or on the wire.
    pub fn conserves(&self) -> bool {
        let st = &self.link.stats;
        let aqm = self.slot.as_ref().map_or(0, |s| s.overflow_drops + s.aqm_drops);
        st.packets_in == st.packets_out + st.drops + aqm + self.in_flight()
    }

    /// The slot path: packet `r` arrives at `now`. The buffer's limit first (as on the fast
    /// path: only while the link is busy, the packet in service not counted), then the
    /// discipline. Returns the end of a serialisation that starts now (the caller schedules
    /// `LinkTxDone`). Dropped packets are freed in `packets`.
    pub fn slot_offer(&mut self, r: Routed, now: Time, packets: &mut PacketStore) -> Option<Time> {
        let slot = self.slot.as_mut().expect("a direction with a queue discipline");
        self.link.stats.packets_in += 1;
        let busy = slot.in_service.is_some();
        let full = busy
            && match self.link.limit {
                QueueLimit::Unlimited => false,
                QueueLimit::Packets(n) => slot.waiting as u64 >= n,
                QueueLimit::Bytes(b) => slot.qdisc.bytes() + r.bytes() as u64 > b,
            };
        if full {
            self.link.stats.drops += 1;
            packets.discard(r.slot());
            return None;
        }
        Self::integrate(&mut self.link.stats, slot, now);
        let verdict = slot.qdisc.enqueue(Queued { r, arrived: now }, now, &mut slot.dropped);
        slot.count_waiting(verdict.is_ok(), false);
        // Packets dropped to make room (fq_codel's batch, perhaps with the arrival).
        slot.take_dropped(packets);
        if let Err((p, cause)) = verdict {
            slot.count_drop(cause);
            packets.discard(p.r.slot());
            // An idle link asks the discipline for a packet after every enqueue, as Linux's
            // qdisc_run does after dev_queue_xmit's enqueue: the (empty) dequeue is where a
            // discipline notes that the link is idle (RED's red_start_of_idle_period), so an
            // idle period goes on after a dropped arrival.
            return if busy { None } else { self.start_service(now, packets) };
        }
        if busy {
            // It waits (an idle link takes it at once, and it never counts as queued).
            self.link.stats.queue_max = self.link.stats.queue_max.max(slot.waiting as u64);
            None
        } else {
            self.start_service(now, packets)
        }
    }

    /// The slot path: the serialisation that ended at `now` puts its packet on the wire. Returns
    /// its arrival time at the far end if it heads the wire (the caller schedules
    /// `LinkArrive`), and the end of the next serialisation, if one starts.
    pub fn slot_tx_done(&mut self, now: Time, packets: &mut PacketStore) -> (Option<Time>, Option<Time>) {
        let slot = self.slot.as_mut().expect("a direction with a queue discipline");
        let r = slot.in_service.take().expect("a packet in service");
        let head = if self.link.varying.is_some() { self.link.put_on_wire(r, now) } else { self.link.wire.push_at(r, now + self.link.delay) };
        (head, self.start_service(now, packets))
    }

    /// Start serialising the discipline's next packet, if any; returns when it ends.
    fn start_service(&mut self, now: Time, packets: &mut PacketStore) -> Option<Time> {
        let slot = self.slot.as_mut().expect("a direction with a queue discipline");
        Self::integrate(&mut self.link.stats, slot, now);
        let next = slot.qdisc.dequeue(now, &mut slot.dropped);
        slot.count_waiting(false, next.is_some());
        slot.take_dropped(packets);
        let p = next?;
        let sojourn = now - p.arrived;
        self.qdelay_hist.add(sojourn);
        self.qdelay_sum += sojourn as f64;
        slot.in_service = Some(p.r);
        if self.link.varying.is_some() {
            // The end may be Time::MAX (a trailing outage): no event then.
            let (_, end) = self.link.service(p.arrived, now, p.r.bytes());
            return (end != Time::MAX).then_some(end);
        }
        let d = crate::time::tx_time(p.r.bytes() as u64, self.link.rate_bps);
        self.link.stats.busy_time += d;
        self.link.free_at = now + d;
        Some(now + d)
    }

    /// Add the packets waiting since the last change to the queue's time integral.
    fn integrate(stats: &mut super::link::LinkStats, slot: &mut Slot, now: Time) {
        stats.queue_area += slot.waiting as u128 * (now - slot.last_change) as u128;
        slot.last_change = now;
    }

    /// Close the books at the end of the run (`end`).
    pub fn finish_accounting(&mut self, end: Time) {
        self.link.finish_accounting(end);
        if let Some(slot) = self.slot.as_mut() {
            Self::integrate(&mut self.link.stats, slot, end.max(slot.last_change));
        }
    }

    /// Mean queueing delay (ns) of the packets whose service started within the run; NaN if none.
    pub fn qdelay_mean(&self) -> f64 {
        match self.qdelay_hist.count() {
            0 => f64::NAN,
            n => self.qdelay_sum / n as f64,
        }
    }

    /// A pure propagation delay: no serialisation, no queue.
    #[inline]
    pub fn unlimited(&self) -> bool {
        self.link.rate_bps == 0
    }

    /// Draw the random loss for a packet leaving the wire at `now`: as [`LinkDir::lose`], with
    /// the loss schedule's probability if there is one (a draw for every packet then).
    #[inline(always)]
    pub fn lose_at(&mut self, now: Time) -> bool {
        match &self.loss_steps {
            None => self.lose(),
            Some(s) => {
                use rand::Rng as _;
                let p = s.at(now);
                self.loss_rng.as_mut().is_some_and(|r| r.gen::<f64>() < p)
            }
        }
    }

    /// The bits this direction could carry in [0, t] (its rate, trace or schedule).
    pub fn capacity_bits(&self, t: Time) -> f64 {
        match self.link.varying.as_deref().and_then(|v| v.rate.as_ref()) {
            Some(r) => r.capacity_bits(t),
            None => self.link.rate_bps as f64 * t as f64 / crate::time::SEC as f64,
        }
    }

    /// Fraction of the run it was serialising; for a trace or rate schedule, the bytes it
    /// served within the run over its capacity then.
    pub fn utilization(&self, end: Time) -> f64 {
        match self.link.varying.as_deref().and_then(|v| v.rate.as_ref()) {
            Some(r) => {
                let cap = r.capacity_bits(end);
                if cap > 0.0 { (r.served_bytes as f64 * 8.0 / cap).min(1.0) } else { 0.0 }
            }
            None => (self.link.stats.busy_time as f64 / end as f64).min(1.0),
        }
    }

    /// Draw this direction's random loss for one packet (no draw when `loss` is 0).
    #[inline]
    pub fn lose(&mut self) -> bool {
        use rand::Rng as _;
        match self.loss_rng.as_mut() {
            Some(r) => r.gen::<f64>() < self.loss,
            None => false,
        }
    }
}

/// One step of a route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hop {
    /// A direction with a rate, shared by every flow that crosses it.
    Dir(u32),
    /// A run of consecutive unlimited directions, private to one flow's route.
    Seg(u32),
    /// One hop over a shared medium, from one of its stations to another.
    Air { medium: u16, from: u16, to: u16 },
}

/// One step of a path, as a topology builder gives it to [`Network::route_steps`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// A link direction.
    Dir(u32),
    /// A hop over a medium, between two of its stations.
    Air { medium: u16, from: u16, to: u16 },
}

/// A run of unlimited directions on one flow's route, crossed as one propagation delay.
/// The line counts the packets that entered, left and were lost; the directions' own counters
/// are added up from their segments when a run reports ([`Network::segment_counts`]).
///
/// The line comes first, on its own cache line (`repr(C, align(64))`): a packet's entry and
/// exit read only it (whether the segment is lossy is in [`Network::seg_lossy`]).
#[repr(C, align(64))]
pub struct Segment {
    pub line: DelayLine<Routed>,
    /// The directions, in route order.
    pub dirs: Box<[u32]>,
    /// Packets lost in each direction (by position in `dirs`; empty unless the segment is
    /// lossy).
    pub lost: Box<[u64]>,
}

/// Hops a route holds in place (a dumbbell's routes have 2); longer routes are boxed.
const ROUTE_INLINE: usize = 4;

/// The hops a flow's data (or ACKs) cross, in order. The first [`ROUTE_INLINE`] are held in
/// place, so the run loop finds a packet's next hop in the flow's own memory, without following
/// a pointer; the rest of a longer route is boxed.
#[derive(Debug, Clone)]
pub struct Route {
    len: u32,
    first: [Hop; ROUTE_INLINE],
    rest: Box<[Hop]>,
    /// All hops (for the rare walks over a whole route).
    all: Box<[Hop]>,
}

impl Default for Route {
    fn default() -> Self {
        Route::new(&[])
    }
}

impl Route {
    pub fn new(hops: &[Hop]) -> Route {
        // Scenarios allow at most MAX_ROUTE_HOPS; two hop indices are reserved (Routed::ON_LAST).
        debug_assert!(hops.len() < crate::net::Routed::ON_LAST as usize, "a route of {} hops", hops.len());
        let mut first = [Hop::Dir(0); ROUTE_INLINE];
        let k = hops.len().min(ROUTE_INLINE);
        first[..k].copy_from_slice(&hops[..k]);
        Route { len: hops.len() as u32, first, rest: hops[k..].into(), all: hops.into() }
    }

    /// Hop `i`, if the route has one.
    #[inline(always)]
    pub fn hop(&self, i: usize) -> Option<Hop> {
        if i >= self.len as usize {
            None
        } else if i < ROUTE_INLINE {
            Some(self.first[i])
        } else {
            Some(self.rest[i - ROUTE_INLINE])
        }
    }

    #[inline]
    pub fn hops(&self) -> &[Hop] {
        &self.all
    }
    #[inline]
    pub fn len(&self) -> usize {
        self.len as usize
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[derive(Default)]
pub struct Network {
    pub nodes: Vec<String>,
    pub dirs: Vec<LinkDir>,
    pub segs: Vec<Segment>,
    /// Per segment: whether any of its directions loses packets at random (else no draw is
    /// made). Kept apart from the segments, dense, so that checking it stays in the caches.
    pub seg_lossy: Vec<bool>,
    /// Per segment, a copy of the handle at the front of its line (stale while the line is
    /// empty), kept dense (16 bytes a segment) so that it stays in cache: with many flows the
    /// run loop reads it one event ahead of the segment's arrival event to prefetch the
    /// packet's slot and its flow's state, before the segment itself is read.
    pub seg_heads: Vec<Routed>,
    /// Shared media (802.11 channels).
    pub media: Vec<Dcf>,
    /// The medium of each station, stations numbered across all media in order (events
    /// name a station by this number).
    pub station_medium: Vec<u16>,
    /// The packets on directions and segments (they carry handles, [`Routed`]).
    pub packets: PacketStore,
}

impl Network {
    pub fn add_node(&mut self, name: impl Into<String>) -> u32 {
        self.nodes.push(name.into());
        (self.nodes.len() - 1) as u32
    }

    /// Add a direction from `from` to `to`; returns its index.
    #[allow(clippy::too_many_arguments)]
    pub fn add_dir(&mut self, from: u32, to: u32, rate_bps: u64, delay: Time, limit: QueueLimit, loss: f64, loss_rng: Option<Rng>) -> u32 {
        let id = format!("{}->{}", self.nodes[from as usize], self.nodes[to as usize]);
        self.dirs.push(LinkDir::new(id, from, to, rate_bps, delay, limit, loss, loss_rng));
        (self.dirs.len() - 1) as u32
    }

    /// Add a shared medium whose stations stand on `nodes` (built by `make` from the index of
    /// its first station among all stations and its own index); returns its index.
    pub fn add_medium(&mut self, make: impl FnOnce(u32, u32) -> Dcf) -> u16 {
        let m = self.media.len();
        let base = self.station_medium.len() as u32;
        let dcf = make(base, m as u32);
        self.station_medium.extend(std::iter::repeat(m as u16).take(dcf.stations()));
        self.media.push(dcf);
        m as u16
    }

    /// The medium and the local index of station `g` (numbered across all media).
    #[inline]
    pub fn station(&self, g: u32) -> (usize, usize) {
        let m = self.station_medium[g as usize] as usize;
        (m, (g - self.media[m].base()) as usize)
    }

    /// The route over `dirs` (consecutive directions, each starting where the previous ends):
    /// each direction with a rate (or a Dummynet tick) is a hop of its own; each run of
    /// unlimited directions becomes one new delay segment.
    pub fn route(&mut self, dirs: &[u32]) -> Route {
        let steps: Vec<Step> = dirs.iter().map(|&d| Step::Dir(d)).collect();
        self.route_steps(&steps)
    }

    /// The route over `steps`: as [`Network::route`], with hops over media kept as they are.
    pub fn route_steps(&mut self, steps: &[Step]) -> Route {
        let mut hops = Vec::with_capacity(steps.len());
        let mut run: Vec<u32> = Vec::new();
        for &st in steps {
            let d = match st {
                Step::Dir(d) => d,
                Step::Air { medium, from, to } => {
                    if !run.is_empty() {
                        hops.push(self.segment(std::mem::take(&mut run)));
                    }
                    hops.push(Hop::Air { medium, from, to });
                    continue;
                }
            };
            // A ticked direction without a rate (a Dummynet pipe's delay line) is a hop of its
            // own: its tick is not a pure delay.
            if self.dirs[d as usize].unlimited() && self.dirs[d as usize].link.tick.is_none() {
                run.push(d);
                continue;
            }
            if !run.is_empty() {
                hops.push(self.segment(std::mem::take(&mut run)));
            }
            hops.push(Hop::Dir(d));
        }
        if !run.is_empty() {
            hops.push(self.segment(run));
        }
        Route::new(&hops)
    }

    fn segment(&mut self, dirs: Vec<u32>) -> Hop {
        let delay = dirs.iter().map(|&d| self.dirs[d as usize].link.delay).sum();
        let lossy = dirs.iter().any(|&d| self.dirs[d as usize].loss > 0.0);
        let lost = if lossy { vec![0; dirs.len()].into_boxed_slice() } else { Box::default() };
        self.segs.push(Segment { dirs: dirs.into_boxed_slice(), line: DelayLine::new(delay), lost });
        self.seg_lossy.push(lossy);
        self.seg_heads.push(Routed::default());
        Hop::Seg((self.segs.len() - 1) as u32)
    }

    /// Full-size (1,500-byte) packets the directions with a rate hold on their wires at that
    /// rate: the sum of their bandwidth-delay products.
    pub fn wire_packets(&self) -> f64 {
        self.dirs.iter().map(|d| d.link.rate_bps as f64 * d.link.delay as f64 / 1e9 / (8.0 * 1500.0)).sum()
    }

    /// Packets in, out and randomly lost on each unlimited direction, from the segments that
    /// cross it: a packet enters a direction unless an earlier direction of its segment lost it,
    /// and leaves it unless this direction lost it or it is still in the segment's line.
    pub fn segment_counts(&self) -> Vec<(u64, u64, u64)> {
        let mut c = vec![(0u64, 0u64, 0u64); self.dirs.len()];
        for s in &self.segs {
            let entered = s.line.packets_in;
            let mut lost_before = 0;
            for (k, &d) in s.dirs.iter().enumerate() {
                let lost_here = s.lost.get(k).copied().unwrap_or(0);
                let e = &mut c[d as usize];
                let reached = entered - lost_before;
                e.0 += reached;
                e.2 += lost_here;
                // Still in the line: in every direction of the segment, out of none.
                e.1 += reached - lost_here - s.line.line.len() as u64;
                lost_before += lost_here;
            }
        }
        c
    }

    /// Propagation delay of a route's hops (no serialisation or queueing).
    pub fn propagation(&self, route: &Route) -> Time {
        route
            .hops()
            .iter()
            .map(|h| match *h {
                Hop::Dir(d) => self.dirs[d as usize].link.delay,
                Hop::Seg(s) => self.segs[s as usize].line.delay,
                Hop::Air { .. } => 0,
            })
            .sum()
    }

    /// The direction with id `id` (`"from->to"`).
    pub fn dir_named(&self, id: &str) -> Option<u32> {
        self.dirs.iter().position(|d| d.id == id).map(|i| i as u32)
    }

    /// Bytes held by the directions' queues and wires and the segments' lines (what grows with
    /// the packets in flight).
    pub fn heap_bytes(&self) -> usize {
        self.dirs.iter().map(|d| d.link.heap_bytes() + d.slot.as_ref().map_or(0, |s| s.qdisc.heap_bytes())).sum::<usize>()
            + self.segs.iter().map(|s| s.line.heap_bytes()).sum::<usize>()
            + self.media.iter().map(|m| m.heap_bytes()).sum::<usize>()
            + self.packets.heap_bytes()
    }

    /// Conservation on every direction and segment: in = out + dropped + lost + in flight.
    pub fn check_conservation(&self) -> Result<(), String> {
        for (i, s) in self.segs.iter().enumerate() {
            if !s.line.conserves() {
                return Err(format!("delay segment {i} does not conserve packets"));
            }
        }
        for d in &self.dirs {
            if !d.unlimited() && !d.conserves() {
                return Err(format!("link {}: {:?} with {} in flight", d.id, d.link.stats, d.in_flight()));
            }
        }
        Ok(())
    }
}
