//! The network: nodes joined by link directions, and the packets that cross them.
//!
//! A network is a set of named nodes (hosts and routers alike) and, for every link between two
//! of them, two independent directions ([`network::LinkDir`]), each with its own rate,
//! propagation delay, queue and random loss. A flow is a sender on one node and a receiver on
//! another; its data follows a route of link directions and its ACKs follow the reverse
//! directions of the same links back ([`network::Route`]). A packet carries its position on
//! its flow's route, so a node needs no forwarding table: on arrival the packet moves to its
//! next hop or, at the end of its route, to the flow's receiver (data) or sender (ACKs).
//!
//! A direction with a rate serialises packets through a queue: by default [`link::Link`]'s
//! drop-tail FIFO, each packet's fate decided when it is offered (the fast path, no event per
//! serialisation); or a queue discipline in the direction's slot ([`qdisc`]), asked for the
//! next packet each time the link goes idle, so it can decide at dequeue time and serve out of
//! arrival order. A direction without a rate ("unlimited") is a pure
//! propagation delay; consecutive unlimited directions on a route are merged into one delay
//! segment per flow, so a packet crossing them costs one event.
//!
//! A shared medium ([`wifi`]: the 802.11 DCF on a line of stations) is the third kind of
//! element: a route crosses it station to station, and the medium decides when each frame
//! gets the channel and whether it arrives.

pub mod link;
pub mod network;
pub mod qdisc;
pub mod shape;
pub mod wifi;

pub use link::{DelayLine, Link, LinkStats, Offer, QueueLimit, Varying};
pub use network::{Hop, LinkDir, Network, Route, Step};

use crate::tcp::{AckPkt, DataPkt, ACK_BYTES};

/// A packet on the network: a data segment or an ACK of some flow.
#[derive(Debug, Clone, Copy)]
pub enum Packet {
    Data(DataPkt),
    Ack(AckPkt),
    /// A UDP datagram of a constant-bit-rate flow.
    Udp(UdpPkt),
}

/// A UDP datagram: its flow and its size on the wire (payload and IP + UDP headers).
#[derive(Debug, Clone, Copy)]
pub struct UdpPkt {
    pub flow: u32,
    pub ip_bytes: u32,
}

impl Packet {
    #[inline]
    pub fn flow(&self) -> u32 {
        match self {
            Packet::Data(d) => d.flow,
            Packet::Ack(a) => a.flow,
            Packet::Udp(u) => u.flow,
        }
    }

    /// The IP header's ECN field as sent (pure ACKs and UDP here are Not-ECT, as Linux sends
    /// pure ACKs: RFC 3168 section 6.1.4).
    #[inline]
    pub fn ecn(&self) -> Ecn {
        match self {
            Packet::Data(d) => d.ecn,
            _ => Ecn::NotEct,
        }
    }

    /// Bytes on the wire: payload and headers for data, the header size for a pure ACK.
    #[inline]
    pub fn wire_bytes(&self) -> u32 {
        match self {
            Packet::Data(d) => d.wire_bytes(),
            Packet::Ack(_) => ACK_BYTES,
            Packet::Udp(u) => u.ip_bytes,
        }
    }
}

/// The ECN field of a packet's IP header (RFC 3168 section 5: the two bits' codepoints).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum Ecn {
    /// Not ECN-capable transport (00): a discipline drops it where it would mark.
    #[default]
    NotEct = 0b00,
    /// ECN-capable transport, ECT(1) (01): the L4S identifier (RFC 9331).
    Ect1 = 0b01,
    /// ECN-capable transport, ECT(0) (10): classic ECN (RFC 3168).
    Ect0 = 0b10,
    /// Congestion experienced (11), set by a queue on an ECN-capable packet.
    Ce = 0b11,
}

impl Ecn {
    /// The packet may be marked instead of dropped (ECT(0), ECT(1), or already CE).
    #[inline]
    pub fn capable(self) -> bool {
        self != Ecn::NotEct
    }
}

/// A packet on its way: its flow's route position (the index of the hop it is crossing), the
/// flow, the direction (data or ACK), the size on the wire, its IP ECN field, and where the
/// packet itself is kept ([`PacketStore`]). Links, delay segments and the event loop move only
/// this 16-byte handle; the packet (up to 52 bytes: an ACK with three SACK blocks) is written
/// once when it is sent and read once when it arrives. A queue marks congestion by setting
/// `ecn` to [`Ecn::Ce`] on the handle; the receiver sees the field as it is at the route's end.
///
/// The fields are packed into two 64-bit words, read and written through methods: a struct of
/// two integers is passed and returned in registers, where one of six fields went through
/// memory at every call of the forwarding path, and a field written just before the whole
/// handle was copied (a hop count, an ECN mark) made the copy wait for the store.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub struct Routed {
    /// `flow` (bits 0-31), `bytes` (32-63).
    lo: u64,
    /// `hop` (bits 0-15), `ack` (16), `ecn` (24-25), `slot` (32-63).
    hi: u64,
}

const _: () = assert!(std::mem::size_of::<Routed>() == 16);

impl std::fmt::Debug for Routed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Routed")
            .field("flow", &self.flow())
            .field("bytes", &self.bytes())
            .field("hop", &self.hop())
            .field("ack", &self.ack())
            .field("ecn", &self.ecn())
            .field("slot", &self.slot())
            .finish()
    }
}

impl Routed {
    /// A handle from its fields.
    #[inline(always)]
    pub fn from_parts(flow: u32, bytes: u32, hop: u16, ack: bool, ecn: Ecn, slot: u32) -> Routed {
        Routed { lo: flow as u64 | (bytes as u64) << 32, hi: hop as u64 | (ack as u64) << 16 | (ecn as u64) << 24 | (slot as u64) << 32 }
    }

    /// A packet at the start of its route, kept in `store`.
    #[inline]
    pub fn new(pkt: Packet, store: &mut PacketStore) -> Routed {
        Routed::from_parts(pkt.flow(), pkt.wire_bytes(), 0, matches!(pkt, Packet::Ack(_)), pkt.ecn(), store.put(pkt))
    }

    /// The flow the packet belongs to.
    #[inline(always)]
    pub fn flow(self) -> u32 {
        self.lo as u32
    }

    /// Its size on the wire.
    #[inline(always)]
    pub fn bytes(self) -> u32 {
        (self.lo >> 32) as u32
    }

    /// The index of the hop of its route it is crossing (or [`Routed::ON_LAST`],
    /// [`Routed::AT_END`]).
    #[inline(always)]
    pub fn hop(self) -> u16 {
        self.hi as u16
    }

    /// An ACK (it follows the flow's ACK route), else data.
    #[inline(always)]
    pub fn ack(self) -> bool {
        (self.hi >> 16) & 1 != 0
    }

    /// The IP header's ECN field (copied from the packet when it is sent).
    #[inline(always)]
    pub fn ecn(self) -> Ecn {
        match (self.hi >> 24) & 3 {
            0b00 => Ecn::NotEct,
            0b01 => Ecn::Ect1,
            0b10 => Ecn::Ect0,
            _ => Ecn::Ce,
        }
    }

    /// The packet's slot in the run's [`PacketStore`].
    #[inline(always)]
    pub fn slot(self) -> u32 {
        (self.hi >> 32) as u32
    }

    #[inline(always)]
    pub fn set_hop(&mut self, hop: u16) {
        self.hi = (self.hi & !0xffff) | hop as u64;
    }

    #[inline(always)]
    pub fn set_ecn(&mut self, ecn: Ecn) {
        self.hi = (self.hi & !(3 << 24)) | (ecn as u64) << 24;
    }

    #[inline(always)]
    pub fn set_slot(&mut self, slot: u32) {
        self.hi = (self.hi & 0xffff_ffff) | (slot as u64) << 32;
    }

    /// The same packet, one hop further.
    #[inline(always)]
    pub fn next(self) -> Routed {
        debug_assert!(self.hop() < Routed::AT_END, "a packet past the end of its route moved on");
        Routed { hi: self.hi + 1, ..self }
    }

    /// `hop` of a packet crossing the last wired hop of its route (a link direction or a delay
    /// segment): one hop further it is [`Routed::AT_END`], so its arrival is handed to the
    /// receiver (or sender) without reading the route again. The route was in cache when the
    /// packet entered that hop; an RTT's worth of other flows later it no longer is.
    pub const ON_LAST: u16 = u16::MAX - 1;
    /// `hop` of a packet past the end of its route.
    pub const AT_END: u16 = u16::MAX;
}

/// The packets on links and delay segments, each in a slot until it arrives or is lost. Freed
/// slots are reused last-freed first, so the store stays as large as the most packets ever in
/// flight at once and the recently used slots stay in cache. No allocation once it has grown.
#[derive(Debug, Default)]
pub struct PacketStore {
    slots: Vec<Slot>,
    free: Vec<u32>,
}

/// A store slot: one packet on a cache line of its own. A packet is read once, when it
/// arrives, an RTT or so after it was written: with thousands of flows the line is no longer
/// in cache then, and a packet (up to 52 bytes) that straddled two lines would cost two misses.
#[derive(Debug, Clone, Copy)]
#[repr(align(64))]
struct Slot(Packet);

impl PacketStore {
    /// Keep `pkt`; returns its slot.
    #[inline]
    pub fn put(&mut self, pkt: Packet) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = Slot(pkt);
                i
            }
            None => {
                self.slots.push(Slot(pkt));
                (self.slots.len() - 1) as u32
            }
        }
    }

    /// The packet in `slot`, which becomes free.
    #[inline]
    pub fn take(&mut self, slot: u32) -> Packet {
        self.free.push(slot);
        self.slots[slot as usize].0
    }

    /// Prefetch the line of `slot`'s packet (see [`crate::engine::prefetch`]).
    #[inline(always)]
    pub fn prefetch(&self, slot: u32) {
        if let Some(s) = self.slots.get(slot as usize) {
            crate::engine::prefetch::first(s);
        }
    }

    /// The packet in `slot` (it stays).
    #[inline]
    pub fn get(&self, slot: u32) -> Packet {
        self.slots[slot as usize].0
    }

    /// Free `slot` (its packet was lost).
    #[inline]
    pub fn discard(&mut self, slot: u32) {
        self.free.push(slot);
    }

    /// Packets held.
    /// The packets held now (queued, on a wire, in a delay line): O(slots), for counts at the
    /// end of a run.
    pub fn live(&self) -> impl Iterator<Item = &Packet> {
        let mut free = vec![false; self.slots.len()];
        for &i in &self.free {
            free[i as usize] = true;
        }
        self.slots.iter().zip(free).filter(|(_, f)| !f).map(|(p, _)| &p.0)
    }

    pub fn len(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes it holds, for memory accounting.
    pub fn heap_bytes(&self) -> usize {
        self.slots.capacity() * std::mem::size_of::<Slot>() + self.free.capacity() * 4
    }
}
