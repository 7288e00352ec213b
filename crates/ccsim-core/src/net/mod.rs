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
//! A direction with a rate serialises packets through a queue ([`link::Link`]: drop-tail FIFO,
//! each packet's fate decided when it is offered; the queue slot is where disciplines that
//! decide at dequeue time will plug in). A direction without a rate ("unlimited") is a pure
//! propagation delay; consecutive unlimited directions on a route are merged into one delay
//! segment per flow, so a packet crossing them costs one event.

pub mod link;
pub mod network;

pub use link::{DelayLine, Link, LinkStats, Offer, QueueLimit};
pub use network::{Hop, LinkDir, Network, Route};

use crate::tcp::{AckPkt, DataPkt, ACK_BYTES};

/// A packet on the network: a data segment or an ACK of some flow.
#[derive(Debug, Clone, Copy)]
pub enum Packet {
    Data(DataPkt),
    Ack(AckPkt),
}

impl Packet {
    #[inline]
    pub fn flow(&self) -> u32 {
        match self {
            Packet::Data(d) => d.flow,
            Packet::Ack(a) => a.flow,
        }
    }

    /// Bytes on the wire: payload and headers for data, the header size for a pure ACK.
    #[inline]
    pub fn wire_bytes(&self) -> u32 {
        match self {
            Packet::Data(d) => d.wire_bytes(),
            Packet::Ack(_) => ACK_BYTES,
        }
    }
}

/// A packet and its position on its flow's route: the index of the hop it is crossing. The
/// flow, the direction (data or ACK) and the size on the wire are kept beside the packet, so
/// forwarding reads them without branching on the packet's kind.
#[derive(Debug, Clone, Copy)]
pub struct Routed {
    pub flow: u32,
    pub bytes: u32,
    pub hop: u16,
    /// An ACK (it follows the flow's ACK route), else data.
    pub ack: bool,
    pub pkt: Packet,
}

impl Routed {
    #[inline]
    pub fn new(pkt: Packet) -> Routed {
        Routed { flow: pkt.flow(), bytes: pkt.wire_bytes(), hop: 0, ack: matches!(pkt, Packet::Ack(_)), pkt }
    }

    /// The same packet, one hop further.
    #[inline]
    pub fn next(self) -> Routed {
        Routed { hop: self.hop + 1, ..self }
    }
}
