//! ECN across both ends: a sender and a receiver joined by a fixed-delay path that marks CE
//! on chosen segments, as a packet trace on virtual time.

use super::receiver::{EcnEcho, Receiver};
use super::sender::Sender;
use super::{AckPkt, DataPkt, TcpConfig};
use crate::cc::newreno::{NewReno, NewRenoConfig};
use crate::cc::CaState;
use crate::net::Ecn;
use crate::time::{Time, MS};
use std::collections::VecDeque;

/// One-way delay of the path.
const D: Time = 10 * MS;

/// What happened, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ev {
    /// The sender sent `seq` (with CWR?).
    Sent { seq: u32, cwr: bool },
    /// The receiver got `seq`, marked CE?
    Got { seq: u32, ce: bool },
    /// An ACK reached the sender.
    Ack { cum: u32, ece: bool },
}

/// Runs a NewReno ECN flow until `until`; the path marks CE on the first transmission of the
/// segments in `marked`. The receiver ACKs every segment (no delayed ACKs), to keep the trace
/// short.
fn trace(marked: &[u32], until: Time) -> (Vec<Ev>, Sender) {
    let cfg = TcpConfig { initial_cwnd: 10, ecn: true, delayed_ack: false, ..TcpConfig::default() };
    let mut tx = Sender::new(0, cfg, None, Box::new(NewReno::new(NewRenoConfig::default())));
    let mut rx = Receiver::new(0, 1448, None, false, 40 * MS, MS, 0, u64::MAX, EcnEcho::Classic);
    tx.start(0);
    let mut log = Vec::new();
    // The path: (arrival time, packet), FIFO in each direction (a constant delay keeps order).
    let mut data: VecDeque<(Time, DataPkt)> = VecDeque::new();
    let mut acks: VecDeque<(Time, AckPkt)> = VecDeque::new();
    let mut now = 0;
    let send = |tx: &mut Sender, now: Time, data: &mut VecDeque<(Time, DataPkt)>, log: &mut Vec<Ev>| {
        while let Some(mut p) = tx.next_packet(now) {
            log.push(Ev::Sent { seq: p.seq, cwr: p.cwr });
            assert_eq!(p.ecn, if p.retx { Ecn::NotEct } else { Ecn::Ect0 });
            if !p.retx && marked.contains(&p.seq) {
                p.ecn = Ecn::Ce;
            }
            data.push_back((now + D, p));
        }
    };
    send(&mut tx, now, &mut data, &mut log);
    while now < until {
        let next_data = data.front().map(|d| d.0);
        let next_ack = acks.front().map(|a| a.0);
        let data_first = match (next_data, next_ack) {
            (None, None) => break,
            (Some(t), Some(a)) => t <= a,
            (d, _) => d.is_some(),
        };
        if data_first {
            let (t, p) = data.pop_front().unwrap();
            now = t;
            log.push(Ev::Got { seq: p.seq, ce: p.ecn == Ecn::Ce });
            let out = rx.on_data(&p, now);
            assert!(out.prior.is_none(), "a classic receiver sends one ACK per segment");
            acks.push_back((now + D, out.ack.expect("no delayed ACKs")));
        } else {
            let (t, a) = acks.pop_front().unwrap();
            now = t;
            log.push(Ev::Ack { cum: a.cum, ece: a.ece });
            tx.on_ack(&a, now);
            send(&mut tx, now, &mut data, &mut log);
        }
    }
    (log, tx)
}

#[test]
fn a_ce_mark_is_echoed_until_cwr_and_reduces_cwnd_once_per_window() {
    // Segments 3 and 7 are marked, both in the first window (0-9).
    let (log, tx) = trace(&[3, 7], 100 * MS);
    let acks: Vec<(u32, bool)> = log.iter().filter_map(|e| if let Ev::Ack { cum, ece } = *e { Some((cum, ece)) } else { None }).collect();
    // The ACKs of 0-2 carry no ECE; from 3's on, every ACK does...
    assert_eq!(&acks[..3], &[(1, false), (2, false), (3, false)]);
    let first_ece = acks.iter().position(|a| a.1).unwrap();
    assert_eq!(acks[first_ece].0, 4, "the ACK of the first CE segment echoes it");
    // ... up to the ACK of the segment that carried CWR: the first new segment sent after the
    // first ECE arrived. Slow start sent 10-15 on the ACKs of 0-2, so it is 16; one CWR only.
    let sent_after = |i: usize| log[i..].iter().find_map(|e| if let Ev::Sent { seq, .. } = *e { Some(seq) } else { None });
    let first_ece_at = log.iter().position(|e| *e == Ev::Ack { cum: 4, ece: true }).unwrap();
    assert_eq!(sent_after(first_ece_at), Some(16));
    let cwr: Vec<u32> = log.iter().filter_map(|e| if let Ev::Sent { seq, cwr: true } = *e { Some(seq) } else { None }).collect();
    assert_eq!(cwr, vec![16], "CWR on the first new segment after the reduction, once");
    let after_cwr = acks.iter().position(|a| a.0 == 17).unwrap();
    assert!(acks[first_ece..after_cwr].iter().all(|a| a.1), "ECE until CWR arrives: {acks:?}");
    assert!(acks[after_cwr..].iter().all(|a| !a.1), "ECE stops at CWR: {acks:?}");
    // Two marks, 13 ECE ACKs (those of 3-15), one window: exactly one reduction, from
    // cwnd 13 to ssthresh 6.
    assert_eq!(acks.iter().filter(|a| a.1).count(), 13);
    assert_eq!(tx.stats.ece_reductions, 1);
    assert_eq!(tx.sk.ssthresh, 6);
    assert_eq!((tx.stats.fast_recoveries, tx.stats.retransmits), (0, 0));
    assert_eq!(tx.sk.delivered_ce, 13, "packets delivered by ECE ACKs");
}

#[test]
fn a_mark_in_a_later_window_reduces_again() {
    // 3 in the first window; 40 long after the first reduction ended.
    let (log, tx) = trace(&[3, 40], 200 * MS);
    assert_eq!(tx.stats.ece_reductions, 2);
    let cwr: Vec<u32> = log.iter().filter_map(|e| if let Ev::Sent { seq, cwr: true } = *e { Some(seq) } else { None }).collect();
    assert_eq!(cwr.len(), 2);
    assert_eq!(cwr[0], 16);
    assert!(cwr[1] > 40, "{cwr:?}");
    assert_eq!(tx.sk.ca_state, CaState::Open, "both reductions ended");
}
