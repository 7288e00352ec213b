//! Packet captures: the packets offered to chosen link directions, or sent over chosen Wi-Fi
//! hops, written as pcap files (nanosecond timestamps, `LINKTYPE_ETHERNET`) with synthetic but
//! valid Ethernet, IPv4 and TCP or UDP headers, so Wireshark's and tshark's TCP analysis work
//! on them. A Wi-Fi hop's records are taken by its medium ([`crate::net::wifi::Dcf`]): each IP
//! packet once, at the start of its first transmission (MAC retries, which an Ethernet frame
//! could not mark as such, are not repeated), handed to the capture at the end of the run.
//!
//! What a record holds: the time the packet was offered to the direction (simulated time from
//! 0; on an unlimited direction, the time it enters that direction within its delay segment),
//! so a capture holds exactly the direction's `packets_in` (dropped packets included, as a
//! tap before the queue sees them). Node `n` (0-based, in the network's order) has MAC
//! 02:00:00:nn:nn:nn and IPv4 address 10.x.y.z with x.y.z = n + 1; flow `f` (its `id` in the
//! output's `flows`: a `[[flows]]` flow's number, a workload flow's number after them in order
//! of arrival, given when it arrives) has the sender port 10000 + f mod 50000 and the receiver
//! port 5001 + f / 50000 ([`ports`]), so every flow of a run has a port pair of its own. A
//! workload flow's packets are found by its engine number (2^31 + k x 2^24 + serial) in a
//! table the capture keeps from the flow's arrival to the end of the run (4 bytes a flow),
//! so a packet still in the network after its flow completed keeps its ports. Sequence numbers are bytes:
//! segment `s` starts at 1 + s x MSS (the connection starts established, as if after a SYN
//! with ISN 0); a pure ACK carries ACK = 1 + (cumulative segment) x MSS, its SACK blocks
//! likewise, and the timestamps option (TSval, TSecr) on every segment. The IP ECN field is
//! the packet's as it reaches the direction (CE if an earlier queue marked it); ECE and CWR
//! are set as sent. Payloads are zeros, cut to `snaplen` bytes of frame; the length on the
//! wire is the frame's full length (a SACK option's bytes are in it, though the simulator
//! charges a pure ACK 52 bytes of IP whatever its SACK blocks).
//!
//! Records are kept in memory during the run (64 bytes each) and written at the end,
//! sorted by time; the bindings stop a run whose records would pass its memory limit
//! (`limits::check_capture`). A run without captures does no per-packet work for them: a direction has a
//! capture index only when it is captured.

use crate::net::{Ecn, Packet};
use crate::time::{Time, SEC};
use crate::tcp::{AckPkt, DataPkt};
use std::io::Write;

/// A captured packet: when, what, and its ECN field then.
#[derive(Debug, Clone, Copy)]
pub struct Rec {
    t: Time,
    pkt: Packet,
    ecn: Ecn,
}

impl Rec {
    #[inline]
    pub fn new(t: Time, pkt: Packet, ecn: Ecn) -> Rec {
        Rec { t, pkt, ecn }
    }
}

/// Bytes of one record in memory.
pub const RECORD_BYTES: usize = std::mem::size_of::<Rec>();

/// One direction's capture.
pub struct Capture {
    /// The direction's id (`"from->to"`).
    pub id: String,
    recs: Vec<Rec>,
}

/// Where a flow's packets come from and go: its sender's and receiver's nodes, and its MSS.
#[derive(Debug, Clone, Copy)]
pub struct FlowEnds {
    pub src: u32,
    pub dst: u32,
    pub mss: u32,
}

/// A workload's flows: their ends (all its flows share its route) and, by serial number, each
/// flow's number in the output (its `id` in `flows`), which its ports are made from.
pub struct WorkloadEnds {
    pub ends: FlowEnds,
    out_ids: Vec<u32>,
}

/// The run's captures.
pub struct Captures {
    pub caps: Vec<Capture>,
    /// The `[[flows]]` flows, by number.
    pub flows: Vec<FlowEnds>,
    /// The `[[workloads]]`, by index.
    pub workloads: Vec<WorkloadEnds>,
    pub snaplen: u32,
}

/// Default bytes kept of each frame: the largest headers (14 + 20 + 60) and a little payload.
pub const DEFAULT_SNAPLEN: u32 = 128;

impl Captures {
    /// Captures of the directions `ids` of a run whose `[[flows]]` flows are `flows` and whose
    /// workloads' flows have the ends `workloads`.
    pub fn new(ids: Vec<String>, flows: Vec<FlowEnds>, workloads: Vec<FlowEnds>, snaplen: u32) -> Captures {
        Captures {
            caps: ids.into_iter().map(|id| Capture { id, recs: Vec::new() }).collect(),
            flows,
            workloads: workloads.into_iter().map(|ends| WorkloadEnds { ends, out_ids: Vec::new() }).collect(),
            snaplen,
        }
    }

    /// Workload `k`'s next flow (its serial number is the number of its flows so far) is flow
    /// `out_id` of the output. Kept to the end of the run: a finished flow's stragglers are
    /// captured with its ports.
    pub fn workload_flow(&mut self, k: u32, serial: u32, out_id: u32) {
        let w = &mut self.workloads[k as usize];
        debug_assert_eq!(w.out_ids.len(), serial as usize, "workload flows are registered in order");
        w.out_ids.push(out_id);
    }

    /// The ends of the flow numbered `flow` in the engine, and its number in the output (the
    /// number its ports are made from): a `[[flows]]` flow's own; a workload flow's
    /// (`crate::sim::DYN` + k x 2^24 + serial) as registered by [`Captures::workload_flow`].
    fn ends(&self, flow: u32) -> (FlowEnds, u32) {
        if flow < crate::sim::DYN {
            (self.flows[flow as usize], flow)
        } else {
            let w = &self.workloads[((flow >> 24) & 0x7f) as usize];
            (w.ends, w.out_ids[(flow & 0x00ff_ffff) as usize])
        }
    }

    /// Add records a medium's tap on capture `c`'s hop took.
    pub fn absorb(&mut self, c: u32, recs: &mut Vec<Rec>) {
        self.caps[c as usize].recs.append(recs);
    }

    /// Record `pkt` (ECN field `ecn`) offered to capture `c`'s direction at `t`.
    #[inline]
    pub fn record(&mut self, c: u32, t: Time, pkt: Packet, ecn: Ecn) {
        self.caps[c as usize].recs.push(Rec { t, pkt, ecn });
    }

    /// Memory the records hold (they stay in memory until written), and the workload flows'
    /// numbers (4 bytes a flow).
    pub fn heap_bytes(&self) -> usize {
        let recs: usize = self.caps.iter().map(|c| c.recs.capacity() * std::mem::size_of::<Rec>()).sum();
        recs + self.workloads.iter().map(|w| w.out_ids.capacity() * 4).sum::<usize>()
    }

    /// Packets in capture `c`.
    pub fn len(&self, c: usize) -> usize {
        self.caps[c].recs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.caps.iter().all(|c| c.recs.is_empty())
    }

    /// Capture `c` as a pcap file.
    pub fn write(&mut self, c: usize, out: &mut impl Write) -> std::io::Result<()> {
        let snaplen = self.snaplen;
        let mut recs = std::mem::take(&mut self.caps[c].recs);
        recs.sort_by_key(|r| r.t);
        // Global header: nanosecond magic, version 2.4, UTC, accuracy 0, snaplen, Ethernet.
        out.write_all(&0xa1b2_3c4du32.to_le_bytes())?;
        out.write_all(&2u16.to_le_bytes())?;
        out.write_all(&4u16.to_le_bytes())?;
        out.write_all(&0i32.to_le_bytes())?;
        out.write_all(&0u32.to_le_bytes())?;
        out.write_all(&snaplen.to_le_bytes())?;
        out.write_all(&1u32.to_le_bytes())?;
        let mut frame = Vec::with_capacity(1600);
        for r in &recs {
            frame.clear();
            let (f, id) = self.ends(r.pkt.flow());
            build_frame(&mut frame, &r.pkt, r.ecn, f, id);
            let incl = frame.len().min(snaplen as usize);
            out.write_all(&((r.t / SEC) as u32).to_le_bytes())?;
            out.write_all(&((r.t % SEC) as u32).to_le_bytes())?;
            out.write_all(&(incl as u32).to_le_bytes())?;
            out.write_all(&(frame.len() as u32).to_le_bytes())?;
            out.write_all(&frame[..incl])?;
        }
        self.caps[c].recs = recs;
        Ok(())
    }

    /// Write every capture into `dir` as `<from>-<to>.pcap` (created if missing); returns
    /// the files written, in order.
    pub fn write_dir(&mut self, dir: &std::path::Path) -> std::io::Result<Vec<std::path::PathBuf>> {
        std::fs::create_dir_all(dir)?;
        let mut files = Vec::new();
        for c in 0..self.caps.len() {
            let name: String = self.caps[c].id.replace("->", "-").chars().map(|ch| if ch.is_ascii_alphanumeric() || "-_.".contains(ch) { ch } else { '_' }).collect();
            let p = dir.join(format!("{name}.pcap"));
            let mut w = std::io::BufWriter::new(std::fs::File::create(&p)?);
            self.write(c, &mut w)?;
            w.flush()?;
            files.push(p);
        }
        Ok(files)
    }
}

fn mac(n: u32) -> [u8; 6] {
    [0x02, 0, 0, (n >> 16) as u8, (n >> 8) as u8, n as u8]
}

fn ip(n: u32) -> [u8; 4] {
    let a = n + 1;
    [10, (a >> 16) as u8, (a >> 8) as u8, a as u8]
}

/// The Internet checksum of `data` (one's complement sum of 16-bit words), starting from `sum`.
fn checksum(mut sum: u32, data: &[u8]) -> u16 {
    let mut chunks = data.chunks_exact(2);
    for c in &mut chunks {
        sum += u16::from_be_bytes([c[0], c[1]]) as u32;
    }
    if let [b] = chunks.remainder() {
        sum += (*b as u32) << 8;
    }
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// The ports of flow `id` (its number in the output): the sender's 10000 + id mod 50000, the
/// receiver's 5001 + id / 50000; distinct pairs for every id below 50000 x 60535 (more flows
/// than a run can number).
pub fn ports(id: u32) -> (u16, u16) {
    ((10000 + id % 50000) as u16, (5001 + id / 50000) as u16)
}

/// The full frame of a packet of flow `id` of the output (payload zeros).
fn build_frame(buf: &mut Vec<u8>, pkt: &Packet, ecn: Ecn, f: FlowEnds, id: u32) {
    let (src, dst) = match pkt {
        Packet::Ack(_) => (f.dst, f.src),
        _ => (f.src, f.dst),
    };
    let (sport, dport) = ports(id);
    let (sport, dport) = if matches!(pkt, Packet::Ack(_)) { (dport, sport) } else { (sport, dport) };
    // Transport header and payload length.
    let mut l4: Vec<u8> = Vec::with_capacity(60);
    let (proto, payload) = match pkt {
        Packet::Data(d) => {
            tcp_header(&mut l4, sport, dport, seq_bytes(d.seq, f.mss), 1, d.cwr, false, 65535, d.tsval, 0, &[], f.mss);
            (6u8, d.len)
        }
        Packet::Ack(a) => {
            let win = a.rwnd.min(65535) as u16;
            tcp_header(&mut l4, sport, dport, 1, seq_bytes(a.cum, f.mss), false, a.ece, win, a.tsval, a.tsecr, a.sacks(), f.mss);
            (6, 0)
        }
        Packet::Udp(u) => {
            let len = u.ip_bytes - 20;
            l4.extend_from_slice(&sport.to_be_bytes());
            l4.extend_from_slice(&dport.to_be_bytes());
            l4.extend_from_slice(&(len as u16).to_be_bytes());
            l4.extend_from_slice(&[0, 0]); // no checksum (allowed over IPv4)
            (17, len - 8)
        }
    };
    let total = 20 + l4.len() as u32 + payload;
    // Transport checksum over the pseudo-header, the header and the zero payload.
    if proto == 6 {
        let (s, d) = (ip(src), ip(dst));
        let l4len = l4.len() as u32 + payload;
        let pseudo = u16::from_be_bytes([s[0], s[1]]) as u32
            + u16::from_be_bytes([s[2], s[3]]) as u32
            + u16::from_be_bytes([d[0], d[1]]) as u32
            + u16::from_be_bytes([d[2], d[3]]) as u32
            + 6
            + (l4len >> 16)
            + (l4len & 0xffff);
        let c = checksum(pseudo, &l4);
        l4[16..18].copy_from_slice(&c.to_be_bytes());
    }
    // Ethernet.
    buf.extend_from_slice(&mac(dst));
    buf.extend_from_slice(&mac(src));
    buf.extend_from_slice(&[0x08, 0x00]);
    // IPv4: no options, DF, TTL 64.
    let ip0 = buf.len();
    buf.extend_from_slice(&[0x45, ecn as u8]);
    buf.extend_from_slice(&(total.min(65535) as u16).to_be_bytes());
    buf.extend_from_slice(&[0, 0, 0x40, 0, 64, proto, 0, 0]);
    buf.extend_from_slice(&ip(src));
    buf.extend_from_slice(&ip(dst));
    let c = checksum(0, &buf[ip0..ip0 + 20]);
    buf[ip0 + 10..ip0 + 12].copy_from_slice(&c.to_be_bytes());
    buf.extend_from_slice(&l4);
    buf.resize(buf.len() + payload as usize, 0);
}

/// Byte sequence number of segment `s` (1 + s x MSS, modulo 2^32).
fn seq_bytes(s: u32, mss: u32) -> u32 {
    (1u64 + s as u64 * mss as u64) as u32
}

#[allow(clippy::too_many_arguments)]
fn tcp_header(l4: &mut Vec<u8>, sport: u16, dport: u16, seq: u32, ack: u32, cwr: bool, ece: bool, win: u16, tsval: u32, tsecr: u32, sacks: &[(u32, u32)], mss: u32) {
    // Options: NOP NOP TS (12 bytes); NOP NOP SACK (2 + 8n) if any.
    let opt_len = 12 + if sacks.is_empty() { 0 } else { 4 + 8 * sacks.len() };
    let off = ((20 + opt_len) / 4) as u8;
    l4.extend_from_slice(&sport.to_be_bytes());
    l4.extend_from_slice(&dport.to_be_bytes());
    l4.extend_from_slice(&seq.to_be_bytes());
    l4.extend_from_slice(&ack.to_be_bytes());
    // Flags: ACK always; CWR 0x80, ECE 0x40.
    let flags = 0x10 | if cwr { 0x80 } else { 0 } | if ece { 0x40 } else { 0 };
    l4.extend_from_slice(&[off << 4, flags]);
    l4.extend_from_slice(&win.to_be_bytes());
    l4.extend_from_slice(&[0, 0, 0, 0]); // checksum, urgent pointer
    l4.extend_from_slice(&[1, 1, 8, 10]);
    l4.extend_from_slice(&tsval.to_be_bytes());
    l4.extend_from_slice(&tsecr.to_be_bytes());
    if !sacks.is_empty() {
        l4.extend_from_slice(&[1, 1, 5, (2 + 8 * sacks.len()) as u8]);
        for &(a, b) in sacks {
            l4.extend_from_slice(&seq_bytes(a, mss).to_be_bytes());
            l4.extend_from_slice(&seq_bytes(b, mss).to_be_bytes());
        }
    }
}

/// A data segment's frame length (for tests).
pub fn data_frame_len(d: &DataPkt) -> usize {
    14 + 20 + 32 + d.len as usize
}

/// An ACK's frame (for tests).
pub fn ack_frame(a: &AckPkt, f: FlowEnds) -> Vec<u8> {
    let mut b = Vec::new();
    build_frame(&mut b, &Packet::Ack(*a), Ecn::NotEct, f, a.flow);
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_checksum_to_zero() {
        let d = DataPkt { flow: 3, seq: 7, len: 1448, tsval: 99, retx: false, ecn: Ecn::Ect0, cwr: true };
        let f = FlowEnds { src: 0, dst: 5, mss: 1448 };
        let mut b = Vec::new();
        build_frame(&mut b, &Packet::Data(d), Ecn::Ce, f, 3);
        assert_eq!(b.len(), data_frame_len(&d));
        // IPv4 header checksums to 0 with its checksum in.
        assert_eq!(checksum(0, &b[14..34]), 0);
        assert_eq!(b[15] & 3, Ecn::Ce as u8);
        assert_eq!(u32::from_be_bytes(b[38..42].try_into().unwrap()), 1 + 7 * 1448);
        assert_eq!(b[47] & 0x80, 0x80);
        let a = AckPkt { flow: 3, cum: 5, nsack: 2, sack: [(6, 8), (9, 10), (0, 0)], tsval: 1, tsecr: 99, rwnd: u32::MAX, ece: true };
        let b = ack_frame(&a, f);
        assert_eq!(b.len(), 14 + 20 + 20 + 12 + 4 + 16);
        assert_eq!(b[47] & 0x40, 0x40);
    }

    #[test]
    fn every_flow_number_has_a_port_pair_of_its_own() {
        let mut seen = std::collections::HashSet::new();
        // The first 200,000 numbers, and the largest a run can give (128 workloads of 2^24
        // flows after 100,000 [[flows]] flows) and the last that has a pair of its own.
        let top = 128 * (1u32 << 24) + 100_000;
        for id in (0..200_000).chain(top - 100_000..top).chain([50_000 * 60_535 - 1]) {
            assert!(seen.insert(ports(id)), "{id}");
        }
        assert_eq!(ports(0), (10000, 5001));
        assert_eq!(ports(50_001), (10001, 5002));
        assert_eq!(ports(50_000 * 60_535 - 1), (59999, 65535));
    }
}
