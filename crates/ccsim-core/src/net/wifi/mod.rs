//! Shared media: the IEEE 802.11 DCF channel. A medium is an element of the network like a
//! link direction, but shared: a line of stations, each on a node, contending for one channel
//! ([`dcf::Dcf`]); [`phy`] gives the PHY profiles and frame airtimes. A route crosses a medium
//! hop by hop, station to station ([`crate::net::Hop::Air`]); the run loop hands a packet to a
//! station's IP layer and gets decoded frames back, so a scenario can mix wired links and
//! Wi-Fi hops (`[[wifi]]` beside `[[links]]`), and the `[wireless]` line is one medium with a
//! builder of its own ([`crate::topology::line`]).

pub mod dcf;
pub mod phy;
pub mod rate;

pub use dcf::{Cx, Dcf, Decoded, Frame, HopCounts, Host, StationStats, Taps, TcpAcks, WirelessConfig, UDP_IP_HEADER};
pub use rate::RateControl;
