//! The dumbbell of a `[bottleneck]` scenario, as a network.
//!
//! Nodes: `sender<i>` (one host per flow), `router`, `receiver`. Links:
//! - `sender<i>` - `router`: the flow's access link; towards the router at `access_rate` with
//!   an unlimited queue and `access_delay`; back unlimited (a pure delay of `access_delay`);
//! - `router` - `receiver`: the bottleneck; towards the receiver at `rate`, `delay`, the
//!   drop-tail `buffer` and random `loss`; back unlimited with `ack_loss`.
//!
//! So ACKs see only propagation delay (bottleneck delay + access delay) and are never queued,
//! as the dumbbell always modelled them. Random streams: the bottleneck's loss draws from
//! stream BOTTLENECK_LOSS and the ACK loss from ACK_LOSS, as before the network model.

use super::Built;
use crate::net::{Network, QueueLimit};
use crate::rng::{self, stream};
use crate::scenario::{BottleneckConfig, Scenario};

/// Index of the bottleneck direction (router -> receiver) and of its reverse in the network
/// [`build`] returns.
pub struct Dumbbell {
    pub built: Built,
    pub bottleneck: u32,
    pub bottleneck_rev: u32,
}

pub fn build(sc: &Scenario, b: &BottleneckConfig, seed: u64) -> Dumbbell {
    let limit = match (b.buffer_pkts, b.buffer_bytes) {
        (Some(p), _) => QueueLimit::Packets(p),
        (None, Some(by)) => QueueLimit::Bytes(by),
        _ => QueueLimit::Unlimited,
    };
    let mut net = Network::default();
    // Exact sizes: with 100,000 flows a doubled vector of directions would hold 30 MB unused.
    net.nodes.reserve_exact(sc.flows.len() + 2);
    net.dirs.reserve_exact(2 * sc.flows.len() + 2);
    net.segs.reserve_exact(sc.flows.len());
    let senders: Vec<u32> = (0..sc.flows.len()).map(|i| net.add_node(format!("sender{i}"))).collect();
    let router = net.add_node("router");
    let receiver = net.add_node("receiver");
    let bn = net.add_dir(router, receiver, b.rate_bps, b.delay, limit, b.loss, Some(rng::derive(seed, stream::BOTTLENECK_LOSS)));
    super::install_varying(&mut net, bn, &b.vary);
    let bn_rev = net.add_dir(receiver, router, 0, b.delay, QueueLimit::Unlimited, b.ack_loss, Some(rng::derive(seed, stream::ACK_LOSS)));
    // Dummynet pipes (before the routes: a ticked ACK direction is a hop of its own).
    if let Some(t) = b.tick {
        net.dirs[bn as usize].link.set_tick(t);
        if b.tick_acks {
            net.dirs[bn_rev as usize].link.set_tick(t);
        }
    }
    let mtu = sc.flows.iter().map(|f| f.tcp.mss + crate::tcp::HEADER_BYTES).max().unwrap_or(1500);
    super::install_qdisc(&mut net, bn, &b.qdisc, mtu, seed);
    let mut routes = Vec::with_capacity(sc.flows.len());
    for (fc, &s) in sc.flows.iter().zip(&senders) {
        let up = net.add_dir(s, router, fc.access_rate_bps, fc.access_delay, QueueLimit::Unlimited, 0.0, None);
        let down = net.add_dir(router, s, 0, fc.access_delay, QueueLimit::Unlimited, 0.0, None);
        let fwd = net.route(&[up, bn]);
        let rev = net.route(&[bn_rev, down]);
        routes.push((fwd, rev));
    }
    Dumbbell { built: Built { net, routes }, bottleneck: bn, bottleneck_rev: bn_rev }
}
