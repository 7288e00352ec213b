//! The TCP receiver: cumulative ACKs, SACK blocks (RFC 2018), timestamps (RFC 7323) on its own
//! clock, and delayed ACKs (RFC 5681 4.2: at least every second full segment, a timer, and an
//! immediate ACK for out-of-order data or data that fills a hole).
//!
//! Not modelled: Linux's quick-ACK mode at connection start and its adaptive ATO, D-SACK.
//! The application reads data as soon as it is in order, so the advertised window is constant.

use super::{AckPkt, DataPkt, MAX_SACK_BLOCKS};
use crate::time::Time;

#[derive(Debug, Clone, Copy)]
struct Block {
    start: u32,
    end: u32,
    /// Recency stamp: higher = updated more recently (RFC 2018 block ordering).
    touched: u64,
}

pub struct Receiver {
    pub flow: u32,
    pub rcv_nxt: u32,
    /// Out-of-order ranges above rcv_nxt, sorted and disjoint.
    ooo: Vec<Block>,
    clock: u64,
    /// RFC 7323 TS.Recent and Last.ACK.sent.
    ts_recent: u32,
    last_ack_sent: u32,
    /// Full segments received since the last ACK.
    unacked: u32,
    pub delack_deadline: Option<Time>,
    delayed_ack: bool,
    delack_timeout: Time,
    ts_tick: Time,
    /// Offset of the receiver's clock from the sender's (the two need not agree).
    clock_offset: Time,
    rwnd: u64,
    /// Payload bytes handed to the application, in order, each once.
    pub bytes_delivered: u64,
    pub segments_delivered: u64,
    pub duplicates: u64,
    /// Segment most recently delivered in order (for the conservation check).
    pub last_delivered_seq: Option<u32>,
    mss: u32,
    total_segs: u32,
    last_len: u32,
}

impl Receiver {
    /// `size` is the transfer size in bytes (None = unlimited), so that the receiver knows the
    /// length of segments it buffered out of order.
    #[allow(clippy::too_many_arguments)]
    pub fn new(flow: u32, mss: u32, size: Option<u64>, delayed_ack: bool, delack_timeout: Time, ts_tick: Time, clock_offset: Time, rwnd: u64) -> Self {
        let (total_segs, last_len) = match size {
            None => (u32::MAX, mss),
            Some(b) => {
                let n = b.div_ceil(mss as u64).max(1);
                (n as u32, (b - (n - 1) * mss as u64).max(1) as u32)
            }
        };
        Receiver {
            flow,
            rcv_nxt: 0,
            ooo: Vec::new(),
            clock: 0,
            ts_recent: 0,
            last_ack_sent: 0,
            unacked: 0,
            delack_deadline: None,
            delayed_ack,
            delack_timeout,
            ts_tick,
            clock_offset,
            rwnd,
            bytes_delivered: 0,
            segments_delivered: 0,
            duplicates: 0,
            last_delivered_seq: None,
            mss,
            total_segs,
            last_len,
        }
    }

    fn touch(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }

    /// Handle an arriving segment. Returns an ACK to send now, or None if the ACK is delayed
    /// (the caller then arms the timer at `delack_deadline`).
    pub fn on_data(&mut self, p: &DataPkt, now: Time) -> Option<AckPkt> {
        // RFC 7323 4.3: TS.Recent <- SEG.TSval if SEG.SEQ <= Last.ACK.sent.
        if p.seq <= self.last_ack_sent {
            self.ts_recent = p.tsval;
        }
        let mut immediate = false;
        if p.seq < self.rcv_nxt || self.in_ooo(p.seq) {
            self.duplicates += 1;
            immediate = true;
        } else if p.seq == self.rcv_nxt {
            let had_holes = !self.ooo.is_empty();
            self.deliver(p.seq, p.len as u64);
            // Pull in any out-of-order data now in sequence.
            while let Some(b) = self.ooo.first().copied() {
                if b.start != self.rcv_nxt {
                    break;
                }
                self.ooo.remove(0);
                for s in b.start..b.end {
                    let len = self.seg_len(s);
                    self.deliver(s, len);
                }
            }
            if had_holes {
                immediate = true; // data that fills a hole is ACKed at once
            } else {
                self.unacked += 1;
                if !self.delayed_ack || self.unacked >= 2 {
                    immediate = true;
                }
            }
        } else {
            self.insert_ooo(p.seq);
            immediate = true; // out-of-order data is ACKed at once
        }
        if immediate {
            Some(self.make_ack(now))
        } else {
            if self.delack_deadline.is_none() {
                self.delack_deadline = Some(now + self.delack_timeout);
            }
            None
        }
    }

    fn seg_len(&self, seq: u32) -> u64 {
        if seq + 1 == self.total_segs {
            self.last_len as u64
        } else {
            self.mss as u64
        }
    }

    fn deliver(&mut self, seq: u32, len: u64) {
        debug_assert_eq!(seq, self.rcv_nxt);
        self.rcv_nxt = seq + 1;
        self.segments_delivered += 1;
        self.bytes_delivered += len;
        self.last_delivered_seq = Some(seq);
    }

    /// Is `seq` already held out of order? (Blocks are sorted: binary search.)
    fn in_ooo(&self, seq: u32) -> bool {
        let i = self.ooo.partition_point(|b| b.end <= seq);
        i < self.ooo.len() && self.ooo[i].start <= seq
    }

    fn insert_ooo(&mut self, seq: u32) {
        let t = self.touch();
        // Find the position: blocks are sorted by start.
        let i = self.ooo.partition_point(|b| b.end < seq);
        if i < self.ooo.len() && self.ooo[i].end == seq {
            self.ooo[i].end = seq + 1;
            self.ooo[i].touched = t;
            if i + 1 < self.ooo.len() && self.ooo[i + 1].start == seq + 1 {
                let next = self.ooo.remove(i + 1);
                self.ooo[i].end = next.end;
            }
        } else if i < self.ooo.len() && self.ooo[i].start == seq + 1 {
            self.ooo[i].start = seq;
            self.ooo[i].touched = t;
        } else {
            self.ooo.insert(i, Block { start: seq, end: seq + 1, touched: t });
        }
    }

    /// The delayed-ACK timer fired.
    pub fn on_delack_timer(&mut self, now: Time) -> Option<AckPkt> {
        self.delack_deadline = None;
        if self.unacked > 0 {
            Some(self.make_ack(now))
        } else {
            None
        }
    }

    fn make_ack(&mut self, now: Time) -> AckPkt {
        self.unacked = 0;
        self.delack_deadline = None;
        self.last_ack_sent = self.rcv_nxt;
        let mut ack = AckPkt {
            flow: self.flow,
            cum: self.rcv_nxt,
            nsack: 0,
            sack: [(0, 0); MAX_SACK_BLOCKS],
            tsval: ((now + self.clock_offset) / self.ts_tick) as u32,
            tsecr: self.ts_recent,
            rwnd: self.rwnd.min(u32::MAX as u64) as u32,
        };
        // RFC 2018: the most recently changed block first, then the next most recent ones.
        // One pass keeps the MAX_SACK_BLOCKS most recent (recency stamps are unique).
        let mut top: [Option<&Block>; MAX_SACK_BLOCKS] = [None; MAX_SACK_BLOCKS];
        for b in &self.ooo {
            let mut cur = b;
            for slot in top.iter_mut() {
                match slot {
                    None => {
                        *slot = Some(cur);
                        break;
                    }
                    Some(t) if cur.touched > t.touched => {
                        let prev = *t;
                        *slot = Some(cur);
                        cur = prev;
                    }
                    _ => {}
                }
            }
        }
        for b in top.iter().flatten() {
            ack.sack[ack.nsack as usize] = (b.start, b.end);
            ack.nsack += 1;
        }
        ack
    }

    pub fn ooo_blocks(&self) -> Vec<(u32, u32)> {
        self.ooo.iter().map(|b| (b.start, b.end)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::MS;

    fn rcv(delayed: bool) -> Receiver {
        Receiver::new(0, 1000, None, delayed, 40 * MS, MS, 0, u64::MAX)
    }

    fn seg(seq: u32, tsval: u32) -> DataPkt {
        DataPkt { flow: 0, seq, len: 1000, tsval, retx: false }
    }

    #[test]
    fn delayed_ack_every_second_segment_or_timer() {
        let mut r = rcv(true);
        assert!(r.on_data(&seg(0, 7), 0).is_none());
        assert_eq!(r.delack_deadline, Some(40 * MS));
        let a = r.on_data(&seg(1, 8), MS).expect("second segment is ACKed at once");
        assert_eq!(a.cum, 2);
        assert_eq!(a.tsecr, 7, "RFC 7323: echo the earliest unacknowledged segment's TSval");
        assert_eq!(r.delack_deadline, None);
        // A lone segment is ACKed by the 40 ms timer.
        assert!(r.on_data(&seg(2, 9), 10 * MS).is_none());
        assert_eq!(r.delack_deadline, Some(50 * MS));
        let a = r.on_delack_timer(50 * MS).unwrap();
        assert_eq!(a.cum, 3);
        assert_eq!(a.tsval, 50, "receiver's own clock");
    }

    #[test]
    fn out_of_order_data_is_acked_at_once_with_sack_blocks_newest_first() {
        let mut r = rcv(true);
        r.on_data(&seg(0, 0), 0);
        let a = r.on_data(&seg(2, 0), MS).unwrap();
        assert_eq!((a.cum, a.sacks()), (1, &[(2, 3)][..]));
        let a = r.on_data(&seg(5, 0), 2 * MS).unwrap();
        assert_eq!(a.sacks(), &[(5, 6), (2, 3)]);
        let a = r.on_data(&seg(3, 0), 3 * MS).unwrap();
        assert_eq!(a.sacks(), &[(2, 4), (5, 6)], "the block just extended comes first");
        // Filling the hole delivers 1..=3 and ACKs at once.
        let a = r.on_data(&seg(1, 0), 4 * MS).unwrap();
        assert_eq!((a.cum, a.sacks()), (4, &[(5, 6)][..]));
        assert_eq!(r.bytes_delivered, 4000);
        // A duplicate is ACKed at once and not delivered again.
        let a = r.on_data(&seg(2, 0), 5 * MS).unwrap();
        assert_eq!(a.cum, 4);
        assert_eq!(r.bytes_delivered, 4000);
        assert_eq!(r.duplicates, 1);
    }
}
