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

use crate::net::{Network, Route};

/// A network and, for each flow in scenario order, the route of its data and of its ACKs.
pub struct Built {
    pub net: Network,
    pub routes: Vec<(Route, Route)>,
}
