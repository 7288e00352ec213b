//! Topology builders: each turns a scenario's description of a network into the one network
//! model ([`crate::net::Network`]) and a route for every flow's data and ACKs. The run loop
//! ([`crate::sim`]) knows nothing of shapes; a new topology is a new builder here.
//!
//! - [`dumbbell`]: the `[bottleneck]` shorthand: every flow's sender on a host of its own with
//!   an access link into one router, one bottleneck from the router to the receiver, ACKs back
//!   over pure propagation delays.
//! - [`general`]: `[[links]]`: any nodes and links, flows along a given or the fewest-hop path,
//!   ACKs back along the same links; `[[wifi]]` lines of stations on shared media beside them.
//! - [`line`]: the `[wireless]` line: stations on one 802.11 medium, flows between any two.

pub mod dumbbell;
pub mod general;
pub mod line;

use crate::net::qdisc::registry::{self, QdiscEnv};
use crate::net::{Network, Route};
use crate::rng::{self, stream};
use rand::RngCore as _;
use crate::scenario::qdisc::QdiscConfig;

/// A network and, for each flow in scenario order, the route of its data and of its ACKs.
pub struct Built {
    pub net: Network,
    pub routes: Vec<(Route, Route)>,
}

/// Put direction `d`'s queue under discipline `q`, unless it is the default FIFO (which the
/// link's fast path serves). `mtu` is the largest packet the flows send (MSS + headers). The
/// discipline's random stream is `QDISC_BASE + d`.
pub fn install_qdisc(net: &mut Network, d: u32, q: &QdiscConfig, mtu: u32, seed: u64) {
    if q.is_fifo() {
        return;
    }
    let dir = &mut net.dirs[d as usize];
    let env = QdiscEnv { ecn: q.ecn, mtu_bytes: mtu, rate_bps: dir.link.rate_bps, seed: rng::derive(seed, stream::QDISC_BASE + d as u64).next_u64() };
    let info = registry::find(&q.name).expect("a validated discipline");
    dir.set_named_qdisc(info.name, registry::build(&q.name, &q.params, &env));
}

/// Give direction `d` its trace or schedules (nothing for a constant direction).
pub fn install_varying(net: &mut Network, d: u32, v: &crate::scenario::varying::VarySpec) {
    if v.is_constant() {
        return;
    }
    let dir = &mut net.dirs[d as usize];
    dir.link.varying = v.link_varying();
    dir.loss_steps = v.loss.clone().map(Box::new);
}
