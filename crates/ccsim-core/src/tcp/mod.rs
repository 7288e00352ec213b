//! TCP as Linux and the RFCs do it, at segment granularity: a bulk [`sender::Sender`] with a
//! SACK scoreboard, RFC 6675 loss marking, PRR (RFC 6937), RTO (RFC 6298 with Karn's rule),
//! delivery-rate sampling (Linux tcp_rate.c) and EDT pacing; a [`receiver::Receiver`] with
//! cumulative ACKs, SACK blocks (RFC 2018), timestamps (RFC 7323) and delayed ACKs (RFC 5681).
//!
//! With `TcpConfig::ecn`, ECN as RFC 3168 and Linux do it (`tcp_ecn_send`,
//! `tcp_ecn_check_ce`, `tcp_enter_cwr`), with DCTCP's precise echo for algorithms that need
//! ECN (Linux `TCP_CONG_NEEDS_ECN`).
//!
//! Sequence numbers count segments (each MSS bytes, the last one possibly shorter), as Linux
//! counts packets for congestion control. The connection starts established (no handshake).

#[cfg(test)]
mod ecn_tests;
pub mod receiver;
pub mod rtt;
pub mod sender;

use crate::time::Time;

/// Bytes of IPv4 + TCP header + timestamp option on every segment (20 + 20 + 12).
pub const HEADER_BYTES: u32 = 52;
/// Size of a pure ACK on the wire (headers + timestamps; SACK blocks ignored).
pub const ACK_BYTES: u32 = 52;
/// SACK blocks per ACK: 3 fit beside the timestamp option in 40 bytes of options.
pub const MAX_SACK_BLOCKS: usize = 3;

/// A data segment on the wire.
#[derive(Debug, Clone, Copy)]
pub struct DataPkt {
    pub flow: u32,
    pub seq: u32,
    /// Payload bytes.
    pub len: u32,
    /// Sender's timestamp clock (TSval).
    pub tsval: u32,
    pub retx: bool,
    /// The IP header's ECN field: as sent, and at the receiver as the network left it
    /// (CE if a queue marked it).
    pub ecn: crate::net::Ecn,
    /// The TCP header's CWR flag: the sender reduced its window after an ECE (RFC 3168 6.1.2).
    pub cwr: bool,
}

impl DataPkt {
    #[inline]
    pub fn wire_bytes(&self) -> u32 {
        self.len + HEADER_BYTES
    }
}

/// A pure ACK on the wire. `sack` holds `nsack` half-open segment ranges [start, end).
#[derive(Debug, Clone, Copy)]
pub struct AckPkt {
    pub flow: u32,
    pub cum: u32,
    pub nsack: u8,
    pub sack: [(u32, u32); MAX_SACK_BLOCKS],
    /// Receiver's own timestamp clock when the ACK was sent (its TSval).
    pub tsval: u32,
    /// TSecr: the TSval echoed (RFC 7323 TS.Recent).
    pub tsecr: u32,
    /// Advertised receive window in bytes; `u32::MAX` = unlimited (also a configured window of
    /// 4 GiB or more, far above any window TCP's scaling can advertise: 1 GiB).
    pub rwnd: u32,
    /// The TCP header's ECE flag: the receiver echoes congestion experienced (RFC 3168 6.1.3;
    /// with an algorithm that needs ECN, the CE state of the data this ACK covers).
    pub ece: bool,
}

impl AckPkt {
    pub fn sacks(&self) -> &[(u32, u32)] {
        &self.sack[..self.nsack as usize]
    }
}

/// Per-flow TCP settings (the scenario's `[tcp]` table merged with per-flow overrides).
#[derive(Debug, Clone, PartialEq)]
pub struct TcpConfig {
    pub mss: u32,
    pub delayed_ack: bool,
    pub delack_timeout: Time,
    pub min_rto: Time,
    pub max_rto: Time,
    pub initial_rto: Time,
    pub initial_cwnd: u32,
    /// Receive window in bytes (u64::MAX = never limits).
    pub rwnd: u64,
    /// Timestamp clock tick of sender and receiver.
    pub ts_tick: Time,
    pub pacing: Pacing,
    /// Duplicate threshold for RFC 6675 loss marking.
    pub dupthresh: u32,
    /// How losses are detected on SACK information.
    pub recovery: LossDetection,
    /// The connection is ECN-capable (RFC 3168; Linux `TCP_ECN_OK`, as if negotiated in the
    /// handshake the simulator does not model): data carries ECT, the receiver echoes CE with
    /// ECE, the sender reduces its window once per window of data and sets CWR.
    pub ecn: bool,
    /// An ACK that advances snd_una but covers only retransmitted segments (no RTT sample by
    /// Karn's rule) takes its RTT from the timestamp echo, as Linux does
    /// (tcp_input.c: tcp_ack_update_rtt, tcp_rtt_tsopt_us): for the RTO estimator, min_rtt and
    /// the algorithm's sample. Off by default (the model's behaviour until this option).
    pub tsecr_rtt: bool,
    /// How the retransmission timeout follows the RTT samples (RFC 6298 by default).
    pub rto_estimator: rtt::RtoEstimator,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LossDetection {
    /// RFC 6675: a segment is lost once `dupthresh` segments above it are SACKed.
    Rfc6675,
    /// RACK (RFC 8985, Linux tcp_recovery.c): a segment is lost once a segment sent after it
    /// is delivered and it is older than the latest RTT plus a reordering window. Also detects
    /// lost retransmissions without waiting for the RTO.
    Rack,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pacing {
    /// Pace when the algorithm asks for it (BBR), as Linux does with `sk_pacing_status`.
    Auto,
    /// Always pace; window algorithms use Linux's tcp_update_pacing_rate (200% / 120%).
    On,
    Off,
}

impl Default for TcpConfig {
    fn default() -> Self {
        use crate::time::{MS, SEC};
        TcpConfig {
            mss: 1448,
            delayed_ack: true,
            delack_timeout: 40 * MS,
            min_rto: 200 * MS,
            max_rto: 120 * SEC,
            initial_rto: SEC,
            initial_cwnd: 10,
            rwnd: u64::MAX,
            ts_tick: MS,
            pacing: Pacing::Auto,
            dupthresh: 3,
            recovery: LossDetection::Rfc6675,
            ecn: false,
            tsecr_rtt: false,
            rto_estimator: rtt::RtoEstimator::Rfc6298,
        }
    }
}
