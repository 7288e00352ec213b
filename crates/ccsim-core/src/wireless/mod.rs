//! A multi-hop IEEE 802.11 DCF line: stations 0..=hops in a line, one shared channel,
//! static routing along the line. See [`dcf`] for the model and what it leaves out.

pub mod dcf;
pub mod phy;

pub use dcf::{run_wireless, WFlow, WFlowKind, WirelessConfig, WirelessOutput};
