//! Just enough IPv4/TCP/UDP parsing to tell flows apart and data from pure ACKs.

pub const PROTO_TCP: u8 = 6;
pub const PROTO_UDP: u8 = 17;

const TCP_FIN: u8 = 0x01;
const TCP_SYN: u8 = 0x02;
const TCP_RST: u8 = 0x04;

/// What the emulator needs to know about a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Info {
    pub proto: u8,
    pub src_port: u16,
    pub dst_port: u16,
    /// Transport payload bytes (TCP data, UDP data).
    pub payload: u32,
    /// TCP flags byte (0 for other protocols).
    pub tcp_flags: u8,
}

impl Info {
    /// A packet random loss may hit in the data direction: a TCP segment carrying data (as in
    /// the simulator, where only data packets cross the bottleneck) or a UDP datagram. The
    /// handshake and pure ACKs are never dropped at random: the simulator has no handshake.
    pub fn carries_data(&self) -> bool {
        match self.proto {
            PROTO_TCP => self.payload > 0,
            PROTO_UDP => true,
            _ => false,
        }
    }

    /// A pure ACK (no data, no SYN/FIN/RST): what `ack_loss` may hit on the reverse path.
    pub fn is_pure_ack(&self) -> bool {
        self.proto == PROTO_TCP && self.payload == 0 && self.tcp_flags & (TCP_SYN | TCP_FIN | TCP_RST) == 0
    }
}

/// Parse an IPv4 packet as read from a TUN device without packet information. `None` for
/// anything else (IPv6, truncated headers, fragments after the first).
pub fn parse(p: &[u8]) -> Option<Info> {
    if p.len() < 20 || p[0] >> 4 != 4 {
        return None;
    }
    let ihl = ((p[0] & 0x0f) as usize) * 4;
    let total = u16::from_be_bytes([p[2], p[3]]) as usize;
    if ihl < 20 || total < ihl || total > p.len() {
        return None;
    }
    let frag_offset = u16::from_be_bytes([p[6], p[7]]) & 0x1fff;
    if frag_offset != 0 {
        return None;
    }
    let proto = p[9];
    let l4 = &p[ihl..total];
    match proto {
        PROTO_TCP if l4.len() >= 20 => {
            let doff = ((l4[12] >> 4) as usize) * 4;
            if doff < 20 || doff > l4.len() {
                return None;
            }
            Some(Info {
                proto,
                src_port: u16::from_be_bytes([l4[0], l4[1]]),
                dst_port: u16::from_be_bytes([l4[2], l4[3]]),
                payload: (l4.len() - doff) as u32,
                tcp_flags: l4[13],
            })
        }
        PROTO_UDP if l4.len() >= 8 => Some(Info {
            proto,
            src_port: u16::from_be_bytes([l4[0], l4[1]]),
            dst_port: u16::from_be_bytes([l4[2], l4[3]]),
            payload: (l4.len() - 8) as u32,
            tcp_flags: 0,
        }),
        _ => None,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// An IPv4/TCP packet with a 32-byte TCP header (timestamps), as Linux sends them.
    pub(crate) fn tcp_packet(sport: u16, dport: u16, flags: u8, payload: usize) -> Vec<u8> {
        let total = 20 + 32 + payload;
        let mut p = vec![0u8; total];
        p[0] = 0x45;
        p[2..4].copy_from_slice(&(total as u16).to_be_bytes());
        p[6] = 0x40; // DF
        p[8] = 64;
        p[9] = PROTO_TCP;
        p[20..22].copy_from_slice(&sport.to_be_bytes());
        p[22..24].copy_from_slice(&dport.to_be_bytes());
        p[32] = 8 << 4;
        p[33] = flags;
        p
    }

    #[test]
    fn tcp_data_ack_and_handshake() {
        let data = parse(&tcp_packet(20000, 5001, 0x10, 1448)).unwrap();
        assert_eq!((data.src_port, data.dst_port, data.payload), (20000, 5001, 1448));
        assert!(data.carries_data() && !data.is_pure_ack());
        let ack = parse(&tcp_packet(5001, 20000, 0x10, 0)).unwrap();
        assert!(ack.is_pure_ack() && !ack.carries_data());
        let syn = parse(&tcp_packet(20000, 5001, 0x02, 0)).unwrap();
        assert!(!syn.is_pure_ack() && !syn.carries_data());
        let fin = parse(&tcp_packet(5001, 20000, 0x11, 0)).unwrap();
        assert!(!fin.is_pure_ack());
    }

    #[test]
    fn rejects_what_it_cannot_read() {
        assert_eq!(parse(&[0x60; 40]), None); // IPv6
        let mut p = tcp_packet(1, 2, 0x10, 10);
        p[2..4].copy_from_slice(&9999u16.to_be_bytes()); // total length beyond the buffer
        assert_eq!(parse(&p), None);
        let mut frag = tcp_packet(1, 2, 0x10, 10);
        frag[7] = 1; // a later fragment: no transport header
        assert_eq!(parse(&frag), None);
    }

    #[test]
    fn udp() {
        let mut p = vec![0u8; 28 + 100];
        p[0] = 0x45;
        p[2..4].copy_from_slice(&128u16.to_be_bytes());
        p[9] = PROTO_UDP;
        p[20..22].copy_from_slice(&30000u16.to_be_bytes());
        let i = parse(&p).unwrap();
        assert_eq!((i.src_port, i.payload), (30000, 100));
        assert!(i.carries_data());
    }
}
