//! The TCP receiver: cumulative ACKs, SACK blocks (RFC 2018), timestamps (RFC 7323) on its own
//! clock, and delayed ACKs (RFC 5681 4.2: at least every second full segment, a timer, and an
//! immediate ACK for out-of-order data or data that fills a hole).
//!
//! On an ECN connection it echoes congestion (Linux `tcp_ecn_check_ce`, `tcp_ecn_accept_cwr`):
//! - [`EcnEcho::Classic`] (RFC 3168 6.1.3): a CE-marked segment sets ECE on every ACK until a
//!   segment with CWR arrives (Linux `TCP_ECN_DEMAND_CWR`); the first CE of such a period, and
//!   a Not-ECT segment after ECT ones (a retransmission), put it in quick-ACK mode: the next
//!   two ACKs go out at once (`tcp_enter_quickack_mode(sk, 2)`).
//! - [`EcnEcho::Precise`], for algorithms that need ECN (Linux `TCP_CONG_NEEDS_ECN`: DCTCP's
//!   `dctcp_ece_ack_update`): ECE is the CE state of the latest data segment, so an ACK echoes
//!   the state of the data it covers. When the state changes, the segment is ACKed at once, and
//!   if an ACK was being delayed, an ACK up to the previous segment goes out first, with the
//!   previous state.
//!
//! A segment with CWR is ACKed at once (Linux `tcp_ecn_accept_cwr`).
//!
//! Not modelled: Linux's quick-ACK mode at connection start, after duplicates, and its
//! adaptive ATO; D-SACK. The application reads data as soon as it is in order, so the
//! advertised window is constant.

use super::{AckPkt, DataPkt, MAX_SACK_BLOCKS};
use crate::net::Ecn;
use crate::time::Time;
use std::collections::VecDeque;

/// An out-of-order range [start, end) of segments, in the receiver's sorted list; `node` is its
/// entry in the recency list.
#[derive(Debug, Clone, Copy)]
struct Block {
    start: u32,
    end: u32,
    node: u32,
}

const NIL: u32 = u32::MAX;

/// An entry of the recency list: the block's range and its neighbours in recency order.
#[derive(Debug, Clone, Copy)]
struct Node {
    start: u32,
    end: u32,
    /// More recently changed block (NIL for the most recent).
    newer: u32,
    /// Less recently changed block (NIL for the least recent).
    older: u32,
}

/// The out-of-order blocks above rcv_nxt: sorted by start (to find, extend and merge them)
/// and, through a doubly linked list, in the order they were last changed (RFC 2018 reports
/// the most recently changed first). Changing, adding, merging or removing a block and building
/// an ACK's SACK blocks each cost the same however many blocks there are (apart from a binary
/// search and, for a block added or merged in the middle, moving the shorter side of the sorted
/// list); the old scan of every block on every ACK took 28% of a 40 Gbps run.
#[derive(Debug, Default)]
struct OooBlocks {
    sorted: VecDeque<Block>,
    /// Nodes, addressed by `Block::node`; free slots are chained through `older`.
    nodes: Vec<Node>,
    free: u32,
    /// Most and least recently changed blocks.
    newest: u32,
    oldest: u32,
}

impl OooBlocks {
    fn new() -> Self {
        OooBlocks { sorted: VecDeque::new(), nodes: Vec::new(), free: NIL, newest: NIL, oldest: NIL }
    }

    fn unlink(&mut self, n: u32) {
        let Node { newer, older, .. } = self.nodes[n as usize];
        match newer {
            NIL => self.newest = older,
            k => self.nodes[k as usize].older = older,
        }
        match older {
            NIL => self.oldest = newer,
            k => self.nodes[k as usize].newer = newer,
        }
    }

    fn push_newest(&mut self, n: u32) {
        let old = self.newest;
        {
            let node = &mut self.nodes[n as usize];
            node.newer = NIL;
            node.older = old;
        }
        match old {
            NIL => self.oldest = n,
            k => self.nodes[k as usize].newer = n,
        }
        self.newest = n;
    }

    /// Block `i` changed: record its range and make it the most recent.
    fn touch(&mut self, i: usize) {
        let b = self.sorted[i];
        let node = &mut self.nodes[b.node as usize];
        node.start = b.start;
        node.end = b.end;
        if self.newest != b.node {
            self.unlink(b.node);
            self.push_newest(b.node);
        }
    }

    /// Insert a new block at position `i` of the sorted list, as the most recent.
    fn insert(&mut self, i: usize, start: u32, end: u32) {
        let node = Node { start, end, newer: NIL, older: NIL };
        let n = if self.free != NIL {
            let n = self.free;
            self.free = self.nodes[n as usize].older;
            self.nodes[n as usize] = node;
            n
        } else {
            self.nodes.push(node);
            (self.nodes.len() - 1) as u32
        };
        self.sorted.insert(i, Block { start, end, node: n });
        self.push_newest(n);
    }

    /// Remove block `i` of the sorted list.
    fn remove(&mut self, i: usize) -> Block {
        let b = self.sorted.remove(i).expect("a block");
        self.unlink(b.node);
        self.nodes[b.node as usize].older = self.free;
        self.free = b.node;
        b
    }

    /// The ranges of the most recently changed blocks, most recent first.
    fn recent(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        let mut n = self.newest;
        std::iter::from_fn(move || {
            if n == NIL {
                return None;
            }
            let node = &self.nodes[n as usize];
            n = node.older;
            Some((node.start, node.end))
        })
    }
}

/// How the receiver echoes CE marks (see the module comment).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EcnEcho {
    /// Not an ECN connection: no ECE.
    Off,
    /// RFC 3168: ECE from a CE mark until CWR.
    Classic,
    /// DCTCP's: ECE = the CE state of the data the ACK covers.
    Precise,
}

/// The ACKs a data segment makes the receiver send now, in this order.
#[derive(Debug, Clone, Copy, Default)]
pub struct Acks {
    /// [`EcnEcho::Precise`] only: the ACK that was being delayed, sent first with the CE state
    /// of the data it covers (up to the previous segment), because this segment changed it.
    pub prior: Option<AckPkt>,
    /// The ACK of this segment; None if it is delayed (the caller arms the timer at
    /// `delack_deadline`).
    pub ack: Option<AckPkt>,
}

/// The receiver's ECN state (Linux `tp->ecn_flags` and DCTCP's `ce_state`/`prior_rcv_nxt`).
#[derive(Debug, Clone, Copy)]
struct EcnRx {
    echo: EcnEcho,
    /// TCP_ECN_DEMAND_CWR: set ECE on ACKs.
    demand_cwr: bool,
    /// TCP_ECN_SEEN: an ECT or CE segment has arrived.
    seen: bool,
    /// DCTCP's ce_state: the latest data segment was CE.
    ce_state: bool,
    /// DCTCP's prior_rcv_nxt: rcv_nxt after the previous data segment.
    prior_rcv_nxt: u32,
}

pub struct Receiver {
    pub flow: u32,
    pub rcv_nxt: u32,
    /// Out-of-order ranges above rcv_nxt, sorted and disjoint, with their recency order.
    ooo: OooBlocks,
    /// RFC 7323 TS.Recent and Last.ACK.sent.
    ts_recent: u32,
    last_ack_sent: u32,
    /// Full segments received since the last ACK.
    unacked: u32,
    pub delack_deadline: Option<Time>,
    /// The earliest pending `DelAck` event of this flow (timers are lazy, see
    /// [`crate::endpoint::Endpoint`]), beside the deadline so that checking it costs no cache
    /// line of its own.
    pub(crate) delack_event_at: Option<Time>,
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
    ecn: EcnRx,
    /// Linux icsk_ack.quick: ACKs still to send at once (quick-ACK mode; entered only on ECN
    /// signals here).
    quick: u32,
    /// Data segments that arrived with CE, duplicates included.
    pub ce_received: u64,
}

impl Receiver {
    /// `size` is the transfer size in bytes (None = unlimited), so that the receiver knows the
    /// length of segments it buffered out of order.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        flow: u32,
        mss: u32,
        size: Option<u64>,
        delayed_ack: bool,
        delack_timeout: Time,
        ts_tick: Time,
        clock_offset: Time,
        rwnd: u64,
        echo: EcnEcho,
    ) -> Self {
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
            ooo: OooBlocks::new(),
            ts_recent: 0,
            last_ack_sent: 0,
            unacked: 0,
            delack_deadline: None,
            delack_event_at: None,
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
            ecn: EcnRx { echo, demand_cwr: false, seen: false, ce_state: false, prior_rcv_nxt: 0 },
            quick: 0,
            ce_received: 0,
        }
    }

    /// Handle an arriving segment: the ACKs to send now (none if the ACK is delayed: the
    /// caller then arms the timer at `delack_deadline`).
    pub fn on_data(&mut self, p: &DataPkt, now: Time) -> Acks {
        // RFC 7323 4.3: TS.Recent <- SEG.TSval if SEG.SEQ <= Last.ACK.sent.
        if p.seq <= self.last_ack_sent {
            self.ts_recent = p.tsval;
        }
        let mut out = Acks::default();
        // ICSK_ACK_NOW: an ECN event asks for an immediate ACK.
        let mut ack_now = false;
        if p.ecn == Ecn::Ce {
            self.ce_received += 1;
        }
        // tcp_ecn_accept_cwr (from tcp_ack, on every segment): the sender reduced; stop
        // echoing, and ACK this data at once (its cwnd may be very low).
        if p.cwr && self.ecn.echo != EcnEcho::Off {
            self.ecn.demand_cwr = false;
            ack_now = true;
        }
        let mut immediate = false;
        if p.seq < self.rcv_nxt {
            self.duplicates += 1;
            immediate = true;
        } else if p.seq == self.rcv_nxt {
            let had_holes = !self.ooo.sorted.is_empty();
            self.deliver(p.seq, p.len as u64);
            // tcp_event_data_recv: the ECN check sees rcv_nxt past this segment, before the
            // out-of-order data it unblocks is pulled in.
            out.prior = self.check_ce(p, now, &mut ack_now);
            // Pull in any out-of-order data now in sequence.
            while let Some(b) = if had_holes { self.ooo.sorted.front().copied() } else { None } {
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
                if !self.delayed_ack || self.unacked >= 2 || self.quick > 0 || ack_now {
                    immediate = true;
                }
            }
        } else {
            // tcp_data_queue_ofo: the ECN check comes first, also for data already held.
            out.prior = self.check_ce(p, now, &mut ack_now);
            if self.in_ooo(p.seq) {
                self.duplicates += 1;
            } else {
                self.insert_ooo(p.seq);
            }
            immediate = true; // out-of-order data is ACKed at once
        }
        if immediate {
            out.ack = Some(self.make_ack(now));
        } else if self.delack_deadline.is_none() {
            self.delack_deadline = Some(now + self.delack_timeout);
        }
        out
    }

    /// Linux __tcp_ecn_check_ce for a data segment, with DCTCP's CE state machine when the
    /// echo is precise (`dctcp_ece_ack_update`, which Linux runs from the CA_EVENT_ECN_IS_CE /
    /// CA_EVENT_ECN_NO_CE events first). Returns the ACK of the previous CE state if one was
    /// being delayed; sets `ack_now` when this segment must be ACKed at once.
    fn check_ce(&mut self, p: &DataPkt, now: Time, ack_now: &mut bool) -> Option<AckPkt> {
        if self.ecn.echo == EcnEcho::Off {
            return None;
        }
        let mut prior = None;
        match p.ecn {
            Ecn::NotEct => {
                // "If ECT is not set on a segment, and we already seen ECT on a previous
                // segment, it is probably a retransmit": ACK quickly.
                if self.ecn.seen {
                    self.enter_quickack_mode();
                }
            }
            ecn => {
                let ce = ecn == Ecn::Ce;
                if self.ecn.echo == EcnEcho::Precise {
                    prior = self.ce_state_update(ce, now, ack_now);
                }
                if ce && !self.ecn.demand_cwr {
                    // "Better not delay acks, sender can have a very low cwnd".
                    self.enter_quickack_mode();
                    self.ecn.demand_cwr = true;
                }
                self.ecn.seen = true;
            }
        }
        prior
    }

    /// dctcp_ece_ack_update: on a change of CE state, send the delayed ACK (if any) up to
    /// the previous segment with the previous state, and ACK this one at once; ECE then
    /// follows the new state.
    fn ce_state_update(&mut self, ce: bool, now: Time, ack_now: &mut bool) -> Option<AckPkt> {
        let mut prior = None;
        if self.ecn.ce_state != ce {
            // icsk_ack.pending & ICSK_ACK_TIMER: an ACK is being delayed.
            if self.delack_deadline.is_some() {
                self.ecn.demand_cwr = self.ecn.ce_state;
                // Linux __tcp_send_ack(sk, prior_rcv_nxt): an ACK that does not acknowledge
                // the newest data leaves the delayed-ACK state alone (tcp_event_ack_sent).
                prior = Some(self.build_ack(self.ecn.prior_rcv_nxt, now));
            }
            *ack_now = true;
        }
        self.ecn.prior_rcv_nxt = self.rcv_nxt;
        self.ecn.ce_state = ce;
        self.ecn.demand_cwr = ce;
        prior
    }

    /// tcp_enter_quickack_mode(sk, 2) (tcp_incr_quickack): the next
    /// min(max(rwnd / (2 MSS), or 2 if that is 0), 2) ACKs go out at once.
    fn enter_quickack_mode(&mut self) {
        let by_window = self.rwnd / (2 * self.mss as u64);
        let quickacks = if by_window == 0 { 2 } else { by_window.min(2) as u32 };
        self.quick = self.quick.max(quickacks);
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
        let v = &self.ooo.sorted;
        if v.is_empty() {
            return false;
        }
        let i = v.partition_point(|b| b.end <= seq);
        i < v.len() && v[i].start <= seq
    }

    /// Add an out-of-order segment: extend a block (merging it with the next one if the gap
    /// closes), or start a new one. The block it lands in becomes the most recently changed.
    fn insert_ooo(&mut self, seq: u32) {
        // Find the position: blocks are sorted by start.
        let v = &mut self.ooo.sorted;
        let i = v.partition_point(|b| b.end < seq);
        if i < v.len() && v[i].end == seq {
            v[i].end = seq + 1;
            if i + 1 < v.len() && v[i + 1].start == seq + 1 {
                let next = self.ooo.remove(i + 1);
                self.ooo.sorted[i].end = next.end;
            }
            self.ooo.touch(i);
        } else if i < v.len() && v[i].start == seq + 1 {
            v[i].start = seq;
            self.ooo.touch(i);
        } else {
            self.ooo.insert(i, seq, seq + 1);
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

    /// The ACK of everything received (tcp_send_ack + tcp_event_ack_sent): the delayed-ACK
    /// state clears and quick-ACK mode counts one ACK down.
    fn make_ack(&mut self, now: Time) -> AckPkt {
        self.unacked = 0;
        self.delack_deadline = None;
        self.last_ack_sent = self.rcv_nxt;
        self.quick = self.quick.saturating_sub(1);
        self.build_ack(self.rcv_nxt, now)
    }

    /// An ACK of everything below `cum`, with the current SACK blocks and ECE.
    fn build_ack(&self, cum: u32, now: Time) -> AckPkt {
        let mut ack = AckPkt {
            flow: self.flow,
            cum,
            nsack: 0,
            sack: [(0, 0); MAX_SACK_BLOCKS],
            tsval: ((now + self.clock_offset) / self.ts_tick) as u32,
            tsecr: self.ts_recent,
            rwnd: self.rwnd.min(u32::MAX as u64) as u32,
            ece: self.ecn.demand_cwr,
        };
        // RFC 2018: the most recently changed block first, then the next most recent ones.
        for b in self.ooo.recent().take(MAX_SACK_BLOCKS) {
            ack.sack[ack.nsack as usize] = b;
            ack.nsack += 1;
        }
        ack
    }

    pub fn ooo_blocks(&self) -> Vec<(u32, u32)> {
        self.ooo.sorted.iter().map(|b| (b.start, b.end)).collect()
    }

    /// Bytes its out-of-order block list holds, for memory accounting.
    pub fn heap_bytes(&self) -> usize {
        self.ooo.sorted.capacity() * std::mem::size_of::<Block>() + self.ooo.nodes.capacity() * std::mem::size_of::<Node>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::MS;

    fn rcv(delayed: bool) -> Receiver {
        Receiver::new(0, 1000, None, delayed, 40 * MS, MS, 0, u64::MAX, EcnEcho::Off)
    }

    fn seg(seq: u32, tsval: u32) -> DataPkt {
        DataPkt { flow: 0, seq, len: 1000, tsval, retx: false, ecn: Ecn::NotEct, cwr: false }
    }

    /// The blocks as a plain sorted list with recency stamps, every ACK choosing the most
    /// recent by a scan (the receiver's former implementation): the reference.
    #[derive(Default)]
    struct Reference {
        rcv_nxt: u32,
        blocks: Vec<(u32, u32, u64)>,
        clock: u64,
    }

    impl Reference {
        fn on_data(&mut self, seq: u32) -> (u32, Vec<(u32, u32)>) {
            let held = self.blocks.iter().any(|&(s, e, _)| s <= seq && seq < e);
            if seq == self.rcv_nxt {
                self.rcv_nxt += 1;
                while let Some(&(s, e, _)) = self.blocks.first() {
                    if s != self.rcv_nxt {
                        break;
                    }
                    self.blocks.remove(0);
                    self.rcv_nxt = e;
                }
            } else if seq > self.rcv_nxt && !held {
                self.clock += 1;
                let t = self.clock;
                let i = self.blocks.partition_point(|b| b.1 < seq);
                if i < self.blocks.len() && self.blocks[i].1 == seq {
                    self.blocks[i].1 = seq + 1;
                    self.blocks[i].2 = t;
                    if i + 1 < self.blocks.len() && self.blocks[i + 1].0 == seq + 1 {
                        let next = self.blocks.remove(i + 1);
                        self.blocks[i].1 = next.1;
                    }
                } else if i < self.blocks.len() && self.blocks[i].0 == seq + 1 {
                    self.blocks[i].0 = seq;
                    self.blocks[i].2 = t;
                } else {
                    self.blocks.insert(i, (seq, seq + 1, t));
                }
            }
            let mut by_recency = self.blocks.clone();
            by_recency.sort_by_key(|b| std::cmp::Reverse(b.2));
            (self.rcv_nxt, by_recency.iter().take(MAX_SACK_BLOCKS).map(|b| (b.0, b.1)).collect())
        }
    }

    /// Random arrival orders with losses, duplicates and late retransmissions: every ACK's
    /// cumulative point and SACK blocks match the reference, and so do the blocks held.
    #[test]
    fn sack_blocks_match_a_scan_of_every_block_by_recency() {
        let mut x: u64 = 3;
        let mut next = move |m: u64| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 33) % m
        };
        for round in 0..300 {
            let mut r = rcv(false);
            let mut reference = Reference::default();
            let n = 20 + next(400) as u32;
            // Send 0..n in order, losing some; then retransmit the lost ones in a random order,
            // mixed with duplicates of delivered segments.
            let loss = 1 + next(6);
            let mut arrivals: Vec<u32> = (0..n).filter(|_| next(10) >= loss).collect();
            let mut lost: Vec<u32> = (0..n).filter(|s| !arrivals.contains(s)).collect();
            while !lost.is_empty() {
                let k = next(lost.len() as u64) as usize;
                arrivals.push(lost.swap_remove(k));
                if next(4) == 0 {
                    arrivals.push(next(n as u64) as u32);
                }
            }
            for (k, &seq) in arrivals.iter().enumerate() {
                let a = r.on_data(&seg(seq, 0), k as Time * MS).ack.expect("immediate ACKs");
                let (cum, sacks) = reference.on_data(seq);
                assert_eq!((a.cum, a.sacks()), (cum, &sacks[..]), "round {round}, arrival {k} (seq {seq})");
                let held: Vec<(u32, u32)> = reference.blocks.iter().map(|b| (b.0, b.1)).collect();
                assert_eq!(r.ooo_blocks(), held);
            }
            assert_eq!(r.rcv_nxt, n);
            assert!(r.ooo_blocks().is_empty());
        }
    }

    #[test]
    fn delayed_ack_every_second_segment_or_timer() {
        let mut r = rcv(true);
        assert!(r.on_data(&seg(0, 7), 0).ack.is_none());
        assert_eq!(r.delack_deadline, Some(40 * MS));
        let a = r.on_data(&seg(1, 8), MS).ack.expect("second segment is ACKed at once");
        assert_eq!(a.cum, 2);
        assert_eq!(a.tsecr, 7, "RFC 7323: echo the earliest unacknowledged segment's TSval");
        assert_eq!(r.delack_deadline, None);
        // A lone segment is ACKed by the 40 ms timer.
        assert!(r.on_data(&seg(2, 9), 10 * MS).ack.is_none());
        assert_eq!(r.delack_deadline, Some(50 * MS));
        let a = r.on_delack_timer(50 * MS).unwrap();
        assert_eq!(a.cum, 3);
        assert_eq!(a.tsval, 50, "receiver's own clock");
    }

    #[test]
    fn out_of_order_data_is_acked_at_once_with_sack_blocks_newest_first() {
        let mut r = rcv(true);
        r.on_data(&seg(0, 0), 0);
        let a = r.on_data(&seg(2, 0), MS).ack.unwrap();
        assert_eq!((a.cum, a.sacks()), (1, &[(2, 3)][..]));
        let a = r.on_data(&seg(5, 0), 2 * MS).ack.unwrap();
        assert_eq!(a.sacks(), &[(5, 6), (2, 3)]);
        let a = r.on_data(&seg(3, 0), 3 * MS).ack.unwrap();
        assert_eq!(a.sacks(), &[(2, 4), (5, 6)], "the block just extended comes first");
        // Filling the hole delivers 1..=3 and ACKs at once.
        let a = r.on_data(&seg(1, 0), 4 * MS).ack.unwrap();
        assert_eq!((a.cum, a.sacks()), (4, &[(5, 6)][..]));
        assert_eq!(r.bytes_delivered, 4000);
        // A duplicate is ACKed at once and not delivered again.
        let a = r.on_data(&seg(2, 0), 5 * MS).ack.unwrap();
        assert_eq!(a.cum, 4);
        assert_eq!(r.bytes_delivered, 4000);
        assert_eq!(r.duplicates, 1);
    }

    // ECN: the receiver's echo, packet by packet.

    fn ecn_rcv(echo: EcnEcho) -> Receiver {
        Receiver::new(0, 1000, None, true, 40 * MS, MS, 0, u64::MAX, echo)
    }

    fn data(seq: u32, ecn: Ecn, cwr: bool) -> DataPkt {
        DataPkt { ecn, cwr, ..seg(seq, 0) }
    }

    /// One arrival at `ms`: (cum, ECE) of each ACK sent now, the DCTCP prior ACK first.
    fn arrive(r: &mut Receiver, seq: u32, ecn: Ecn, cwr: bool, ms: Time) -> Vec<(u32, bool)> {
        let a = r.on_data(&data(seq, ecn, cwr), ms * MS);
        a.prior.into_iter().chain(a.ack).map(|a| (a.cum, a.ece)).collect()
    }

    use Ecn::{Ce, Ect0, NotEct};

    #[test]
    fn classic_echo_latches_ece_from_a_ce_mark_until_cwr() {
        let mut r = ecn_rcv(EcnEcho::Classic);
        assert_eq!(arrive(&mut r, 0, Ect0, false, 0), vec![], "delayed");
        // CE: ECE from now on, and quick-ACK mode (two ACKs at once).
        assert_eq!(arrive(&mut r, 1, Ce, false, 1), vec![(2, true)]);
        assert_eq!(arrive(&mut r, 2, Ect0, false, 2), vec![(3, true)], "the second quick ACK");
        assert_eq!(arrive(&mut r, 3, Ect0, false, 3), vec![], "delayed again");
        // Every ACK echoes until CWR, whatever the data's marks.
        assert_eq!(arrive(&mut r, 4, Ect0, false, 4), vec![(5, true)]);
        assert_eq!(arrive(&mut r, 5, Ce, false, 5), vec![], "a further CE within the period is not quick-ACKed");
        let a = r.on_delack_timer(45 * MS).unwrap();
        assert_eq!((a.cum, a.ece), (6, true));
        // CWR: the echo stops, and that segment is ACKed at once (tcp_ecn_accept_cwr).
        assert_eq!(arrive(&mut r, 6, Ect0, true, 50), vec![(7, false)]);
        assert_eq!(arrive(&mut r, 7, Ect0, false, 51), vec![]);
        assert_eq!(arrive(&mut r, 8, Ect0, false, 52), vec![(9, false)]);
        // A CE on the CWR segment itself starts a new period.
        assert_eq!(arrive(&mut r, 9, Ce, true, 53), vec![(10, true)]);
        assert_eq!(r.ce_received, 3);
    }

    #[test]
    fn classic_echo_quick_acks_a_not_ect_segment_after_ect_ones() {
        let mut r = ecn_rcv(EcnEcho::Classic);
        // Not-ECT before any ECT: nothing special.
        assert_eq!(arrive(&mut r, 0, NotEct, false, 0), vec![]);
        assert_eq!(arrive(&mut r, 1, Ect0, false, 1), vec![(2, false)]);
        // Not-ECT after ECT is probably a retransmission (Linux __tcp_ecn_check_ce): the next
        // two ACKs go out at once.
        assert_eq!(arrive(&mut r, 2, NotEct, false, 2), vec![(3, false)]);
        assert_eq!(arrive(&mut r, 3, Ect0, false, 3), vec![(4, false)]);
        assert_eq!(arrive(&mut r, 4, Ect0, false, 4), vec![]);
    }

    #[test]
    fn precise_echo_acks_a_ce_change_at_once_after_the_delayed_ack_of_the_old_state() {
        let mut r = ecn_rcv(EcnEcho::Precise);
        assert_eq!(arrive(&mut r, 0, Ect0, false, 0), vec![], "delayed");
        // CE while 0's ACK is delayed: first the ACK of 0 without ECE (cum 1, the data before
        // this segment), then this segment's, with ECE.
        assert_eq!(arrive(&mut r, 1, Ce, false, 1), vec![(1, false), (2, true)]);
        // Same state: delayed ACKs as usual, each echoing the state of the data it covers.
        assert_eq!(arrive(&mut r, 2, Ce, false, 2), vec![]);
        assert_eq!(arrive(&mut r, 3, Ce, false, 3), vec![(4, true)]);
        // Back to not-CE with no ACK delayed: only this segment's ACK, at once, without ECE.
        assert_eq!(arrive(&mut r, 4, Ect0, false, 4), vec![(5, false)]);
        assert_eq!(arrive(&mut r, 5, Ect0, false, 5), vec![]);
        assert_eq!(arrive(&mut r, 6, Ect0, false, 6), vec![(7, false)]);
        // A lone CE segment: ACKed at once; its successor (CE too) is delayed and the timer
        // ACKs it with ECE.
        assert_eq!(arrive(&mut r, 7, Ce, false, 7), vec![(8, true)]);
        assert_eq!(arrive(&mut r, 8, Ce, false, 8), vec![]);
        let a = r.on_delack_timer(48 * MS).unwrap();
        assert_eq!((a.cum, a.ece), (9, true));
        // CWR does not silence the precise echo: the CE state of the data decides.
        assert_eq!(arrive(&mut r, 9, Ce, true, 50), vec![(10, true)]);
        assert_eq!(arrive(&mut r, 10, Ce, false, 51), vec![]);
        // An out-of-order segment changing the state while an ACK is delayed: the old-state
        // ACK (cum 11, no new SACK block yet), then the out-of-order ACK with its block.
        let a = r.on_data(&data(12, Ect0, false), 52 * MS);
        let (p, a) = (a.prior.unwrap(), a.ack.unwrap());
        assert_eq!((p.cum, p.ece, p.sacks()), (11, true, &[][..]));
        assert_eq!((a.cum, a.ece, a.sacks()), (11, false, &[(12, 13)][..]));
        assert_eq!(r.ce_received, 7);
    }

    #[test]
    fn without_ecn_nothing_is_echoed() {
        let mut r = ecn_rcv(EcnEcho::Off);
        assert_eq!(arrive(&mut r, 0, Ce, false, 0), vec![]);
        assert_eq!(arrive(&mut r, 1, Ce, true, 1), vec![(2, false)]);
        assert_eq!(r.ce_received, 2, "the marks are still counted");
    }
}
