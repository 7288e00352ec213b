//! The TCP sender: scoreboard, loss recovery, RTO, rate sampling and pacing.
//!
//! The order of work on an ACK follows Linux `tcp_ack`: SACK tagging, cumulative ACK
//! (`tcp_clean_rtx_queue`, RTT sample, `pkts_acked`), loss marking and the recovery state
//! machine (`tcp_fastretrans_alert`, with RFC 6675 IsLost), delivery-rate sample
//! (`tcp_rate_gen`), then `tcp_cong_control` (the algorithm's `cong_control`, or PRR in
//! Recovery, or `cong_avoid`). Transmission is then driven by the simulator.
//!
//! Loss detection is RFC 6675's DupThresh rule or RACK (RFC 8985, Linux `tcp_recovery.c`),
//! chosen by `TcpConfig::recovery`.
//!
//! ECN (`TcpConfig::ecn`, RFC 3168 as Linux): new data carries ECT (`tcp_ecn_send`); an ACK
//! with ECE in Open or Disorder enters CWR (`tcp_try_to_open` -> `tcp_enter_cwr`): ssthresh
//! from the algorithm, cwnd reduced by PRR over the window (`tcp_cwnd_reduction`), CWR on the
//! next new segment (`tcp_ecn_queue_cwr`, also on entering Recovery or Loss), and no further
//! reduction until a segment sent after the reduction began is acknowledged.
//!
//! Not modelled (Linux has them): TLP (the probe timeout of RACK-TLP; a lost tail or a lost
//! retransmission waits for the RACK timer or the RTO), F-RTO, undo via DSACK or timestamps,
//! TSO/GSO, TCP Small Queues, Nagle, the SYN handshake.

use super::rtt::RttEstimator;
use super::{AckPkt, DataPkt, LossDetection, Pacing, TcpConfig};
use crate::cc::{AckSample, CaEvent, CaState, CongestionControl, RateSample, SkbTx, SockState, CA_ACK_ECE};
use crate::net::Ecn;
use crate::stats::{Histogram, Running};
use crate::time::{Time, SEC};
use std::collections::VecDeque;

const SACKED: u8 = 1;
const LOST: u8 = 2;
/// Currently retransmitted and not yet (s)acked (Linux TCPCB_SACKED_RETRANS).
const RETRANS: u8 = 4;
/// Retransmitted at least once (Linux TCPCB_EVER_RETRANS): no RTT sample (Karn).
const EVER_RETRANS: u8 = 8;
/// The rate stamp was consumed by a SACK (Linux clears tx.delivered_mstamp).
const RATE_DONE: u8 = 16;

/// Per-segment scoreboard entry (Linux `tcp_skb_cb` fields that matter here).
#[derive(Debug, Clone, Copy)]
struct Seg {
    /// Time of the latest (re)transmission.
    sent: Time,
    /// tcp_rate.c stamps taken when (re)sent.
    tx_delivered: u64,
    tx_delivered_mstamp: Time,
    tx_first_tx_mstamp: Time,
    tx_app_limited: bool,
    flags: u8,
    /// `tp->delivered_ce` when (re)sent (Linux `tx.delivered_ce`).
    tx_delivered_ce: u32,
    /// Packets in flight when (re)sent, counting this one (BBRv3's `tx.in_flight`,
    /// `tcp_set_tx_in_flight`).
    tx_in_flight: u32,
    /// `tp->lost` when (re)sent (BBRv3's `tx.lost`).
    tx_lost: u64,
}

/// Counters a run reports for each flow.
#[derive(Debug, Clone, Default)]
pub struct SenderStats {
    pub bytes_sent: u64,
    pub segments_sent: u64,
    pub retransmits: u64,
    pub rto_count: u64,
    pub fast_recoveries: u64,
    /// Entries into CWR on an ACK with ECE (each a cwnd reduction).
    pub ece_reductions: u64,
    /// Payload bytes cumulatively acknowledged.
    pub bytes_acked: u64,
    pub rtt: Running,
    pub rtt_hist: Histogram,
}

pub struct Sender {
    pub id: u32,
    pub sk: SockState,
    pub cc: Box<dyn CongestionControl>,
    pub cfg: TcpConfig,
    /// Total segments to send (u32::MAX = unlimited) and the last one's payload.
    total_segs: u32,
    last_len: u32,
    segs: VecDeque<Seg>,
    /// End (exclusive) of the highest SACKed segment.
    high_sacked: u32,
    /// Segments below this have had RFC 6675 loss marking applied.
    lost_hint: u32,
    /// Lowest segment that may be lost and not yet retransmitted.
    retx_hint: u32,
    /// Recovery point (RFC 6675 RecoveryPoint; Linux high_seq).
    pub high_seq: u32,
    prr_delivered: u32,
    prr_out: u32,
    pub rtt: RttEstimator,
    /// When the retransmission timer fires (None = not armed).
    pub rto_deadline: Option<Time>,
    /// The earliest pending `Rto` and `Pace` events of this flow (timers are lazy, see
    /// [`crate::endpoint::Endpoint`]): kept beside the deadline, which every ACK reads, so that
    /// checking them costs no cache line of their own.
    pub(crate) rto_event_at: Option<Time>,
    pub(crate) pace_event_at: Option<Time>,
    /// Linux first_tx_mstamp (tcp_rate.c).
    first_tx_mstamp: Time,
    sack_cache: [(u32, u32); super::MAX_SACK_BLOCKS],
    sack_cache_n: usize,
    /// Peer's advertised window in bytes.
    snd_wnd: u64,
    pub stats: SenderStats,
    pub active: bool,
    pub completed_at: Option<Time>,
    data_segs_out: u64,
    /// Timeouts since the cumulative ACK last advanced (Linux icsk_retransmits).
    rto_retries: u32,
    rack: Rack,
    /// When the RACK reordering timer fires (None = not armed).
    pub rack_deadline: Option<Time>,
    /// The earliest pending `RackTimer` event (as `rto_event_at`).
    pub(crate) rack_event_at: Option<Time>,
    /// The ECN field of new data (Not-ECT without ECN) and of retransmissions (`tcp_ecn_send`:
    /// ECT only if the algorithm needs ECN).
    ect: Ecn,
    ect_retx: Ecn,
    /// Linux TCP_ECN_QUEUE_CWR: the next new data segment carries CWR.
    queue_cwr: bool,
    /// The CWR state is Linux's (`tcp_enter_cwr`, on ECE): PRR reduces cwnd and it ends once a
    /// segment above high_seq is acknowledged. Otherwise an algorithm's `cwr_request` holds
    /// cwnd until high_seq is.
    cwr_prr: bool,
}

/// RACK state (Linux `tp->rack` plus the send-time-ordered queue `tsorted_sent_queue`).
#[derive(Debug, Default)]
struct Rack {
    /// Send time and sequence of the most recently sent segment that has been delivered.
    mstamp: Time,
    end_seq: u32,
    /// RTT of that delivery.
    rtt: Time,
    /// A delivery advanced the state since the last detection.
    advanced: bool,
    /// Transmissions in send order: (seq, send time). Entries are dropped lazily when their
    /// segment is delivered, marked lost, or sent again.
    tsorted: VecDeque<(u32, Time)>,
}

impl Sender {
    pub fn new(id: u32, cfg: TcpConfig, size_bytes: Option<u64>, cc: Box<dyn CongestionControl>) -> Self {
        let (total_segs, last_len) = match size_bytes {
            None => (u32::MAX, cfg.mss),
            Some(b) => {
                let n = b.div_ceil(cfg.mss as u64).max(1);
                let last = (b - (n - 1) * cfg.mss as u64) as u32;
                (n as u32, last.max(1))
            }
        };
        let mut sk = SockState::new(cfg.mss, cfg.initial_cwnd);
        sk.ts_tick = cfg.ts_tick;
        sk.paced = match cfg.pacing {
            Pacing::On => true,
            Pacing::Off => false,
            Pacing::Auto => cc.wants_pacing(),
        };
        let rtt = RttEstimator::new(cfg.initial_rto, cfg.min_rto, cfg.max_rto, cfg.ts_tick).with_estimator(cfg.rto_estimator);
        sk.ecn = cfg.ecn;
        let ect = if cfg.ecn { cc.ecn_codepoint() } else { Ecn::NotEct };
        let ect_retx = if cc.needs_ecn() { ect } else { Ecn::NotEct };
        Sender {
            id,
            sk,
            cc,
            total_segs,
            last_len,
            segs: VecDeque::new(),
            high_sacked: 0,
            lost_hint: 0,
            retx_hint: 0,
            high_seq: 0,
            prr_delivered: 0,
            prr_out: 0,
            rtt,
            rto_deadline: None,
            rto_event_at: None,
            pace_event_at: None,
            first_tx_mstamp: 0,
            sack_cache: [(0, 0); super::MAX_SACK_BLOCKS],
            sack_cache_n: 0,
            snd_wnd: cfg.rwnd,
            cfg,
            stats: SenderStats::default(),
            active: false,
            completed_at: None,
            data_segs_out: 0,
            rto_retries: 0,
            rack: Rack::default(),
            rack_deadline: None,
            rack_event_at: None,
            ect,
            ect_retx,
            queue_cwr: false,
            cwr_prr: false,
        }
    }

    pub fn start(&mut self, now: Time) {
        self.active = true;
        self.sk.now = now;
        self.sk.delivered_mstamp = now;
        self.first_tx_mstamp = now;
        self.cc.init(&mut self.sk);
        self.update_pacing_rate();
    }

    #[inline]
    fn seg(&self, seq: u32) -> &Seg {
        &self.segs[(seq - self.sk.snd_una) as usize]
    }

    #[inline]
    fn seg_mut(&mut self, seq: u32) -> &mut Seg {
        let i = (seq - self.sk.snd_una) as usize;
        &mut self.segs[i]
    }

    fn seg_len(&self, seq: u32) -> u32 {
        if seq + 1 == self.total_segs {
            self.last_len
        } else {
            self.cfg.mss
        }
    }

    pub fn has_unsent_data(&self) -> bool {
        self.sk.snd_nxt < self.total_segs
    }

    /// True when everything of a finite transfer is cumulatively acknowledged.
    pub fn all_acked(&self) -> bool {
        self.total_segs != u32::MAX && self.sk.snd_una >= self.total_segs
    }

    fn ts_now(&self, now: Time) -> u32 {
        (now / self.cfg.ts_tick) as u32
    }

    /// tcp_rate_skb_sent: a (re)transmitted segment's record, sent at `sent` with `flags`,
    /// stamped with the delivery state. (The "nothing in flight" reset of first_tx_mstamp is
    /// done by the caller before sending.) The record is written whole, never field by field
    /// after it is in place: with many flows its slot is a cold line, and updating it there (a
    /// read of the flags) waited for that line.
    fn stamped_seg(&self, sent: Time, flags: u8) -> Seg {
        Seg {
            sent,
            tx_delivered: self.sk.delivered,
            tx_delivered_mstamp: self.sk.delivered_mstamp,
            tx_first_tx_mstamp: self.first_tx_mstamp,
            tx_app_limited: self.sk.app_limited != 0,
            flags,
            tx_delivered_ce: self.sk.delivered_ce as u32,
            // The caller has already counted the segment in packets_out or retrans_out, so
            // this is Linux's tcp_packets_in_flight() + tcp_skb_pcount(skb) before the send.
            tx_in_flight: self.sk.packets_in_flight(),
            tx_lost: self.sk.lost,
        }
    }

    /// The next segment to transmit now, if cwnd and the receive window allow one
    /// (RFC 6675 NextSeg rules 1 and 2, in Linux's order: lost segments, then new data).
    ///
    /// Inlined into the send loop, so that the packet goes to its store slot from registers:
    /// returned through memory, its three one-byte fields were written by three stores and
    /// read back by one four-byte load, which cannot take its data from the store buffer and
    /// so waited for every older store to reach the cache (with many flows, stores that
    /// miss: perf put 7% of a 10,000-flow run on that load).
    #[inline]
    pub fn next_packet(&mut self, now: Time) -> Option<DataPkt> {
        if !self.active {
            return None;
        }
        self.sk.now = now;
        if self.sk.packets_in_flight() >= self.sk.cwnd {
            return None;
        }
        // Rule 1: the lowest lost segment not yet retransmitted.
        if self.sk.lost_out > self.sk.retrans_out {
            let mut seq = self.retx_hint.max(self.sk.snd_una);
            while seq < self.sk.snd_nxt {
                let f = self.seg(seq).flags;
                if f & LOST != 0 && f & (RETRANS | SACKED) == 0 {
                    break;
                }
                seq += 1;
            }
            if seq < self.sk.snd_nxt {
                self.retx_hint = seq + 1;
                self.sk.retrans_out += 1;
                let flags = (self.seg(seq).flags | RETRANS | EVER_RETRANS) & !RATE_DONE;
                *self.seg_mut(seq) = self.stamped_seg(now, flags);
                self.stats.retransmits += 1;
                if seq == self.sk.snd_una {
                    self.arm_rto(now);
                }
                return Some(self.emit(seq, true, now));
            }
            self.retx_hint = self.sk.snd_nxt;
        }
        // Rule 2: new data, within the peer's receive window.
        let wnd_segs = (self.snd_wnd / self.cfg.mss as u64).max(1);
        if self.has_unsent_data() && ((self.sk.snd_nxt - self.sk.snd_una) as u64) < wnd_segs {
            let seq = self.sk.snd_nxt;
            if self.sk.packets_out == 0 {
                self.cc.cwnd_event(&mut self.sk, CaEvent::TxStart);
                self.first_tx_mstamp = now;
                self.sk.delivered_mstamp = now;
            }
            self.sk.snd_nxt += 1;
            self.sk.packets_out += 1;
            let seg = self.stamped_seg(now, 0);
            self.segs.push_back(seg);
            if self.rto_deadline.is_none() {
                self.arm_rto(now);
            }
            return Some(self.emit(seq, false, now));
        }
        // Nothing to send although cwnd has room: application-limited if the data ran out
        // (tcp_rate_check_app_limited).
        if !self.has_unsent_data() && self.sk.lost_out <= self.sk.retrans_out {
            let v = self.sk.delivered + self.sk.packets_in_flight() as u64;
            self.sk.app_limited = if v > 0 { v } else { 1 };
        }
        None
    }

    /// Linux tcp_cwnd_validate, after a transmission attempt: remember whether cwnd limited
    /// this window, or else the most packets outstanding in it.
    pub fn cwnd_validate(&mut self, is_cwnd_limited: bool) {
        let sk = &mut self.sk;
        if sk.snd_una >= sk.cwnd_usage_seq || is_cwnd_limited || (!sk.is_cwnd_limited && sk.packets_out > sk.max_packets_out) {
            sk.is_cwnd_limited = is_cwnd_limited;
            sk.max_packets_out = sk.packets_out;
            sk.cwnd_usage_seq = sk.snd_nxt;
        }
    }

    #[inline]
    fn emit(&mut self, seq: u32, retx: bool, now: Time) -> DataPkt {
        let len = self.seg_len(seq);
        if self.cfg.recovery == LossDetection::Rack {
            self.rack.tsorted.push_back((seq, now));
        }
        // tcp_write_xmit / tcp_xmit_retransmit_queue: prr_out counts in a cwnd reduction
        // (tcp_in_cwnd_reduction: CWR or Recovery).
        if matches!(self.sk.ca_state, CaState::Recovery | CaState::Cwr) {
            self.prr_out += 1;
        }
        self.stats.segments_sent += 1;
        self.stats.bytes_sent += len as u64;
        self.data_segs_out += 1;
        // tcp_ecn_send: new data is ECT and takes a queued CWR; a retransmission is Not-ECT
        // unless the algorithm needs ECN.
        let (ecn, cwr) = if retx { (self.ect_retx, false) } else { (self.ect, std::mem::take(&mut self.queue_cwr)) };
        let pkt = DataPkt { flow: self.id, seq, len, tsval: self.ts_now(now), retx, ecn, cwr };
        if self.sk.paced {
            // Linux paces on skb->len, the payload, as sk_pacing_rate counts payload bytes.
            self.advance_pacing_clock(len, now);
        }
        self.sk.lsndtime = now;
        pkt
    }

    /// tcp_update_skb_after_send: advance the earliest departure time by len / pacing_rate,
    /// crediting up to half a packet's time when the clock had fallen behind (idle).
    fn advance_pacing_clock(&mut self, payload_bytes: u32, now: Time) {
        let prior = self.sk.next_tx_time;
        self.sk.next_tx_time = self.sk.next_tx_time.max(now);
        let rate = self.sk.pacing_rate;
        if rate > 0 && self.data_segs_out >= 10 {
            // u64 is enough (a segment is < 2^16 bytes) and far cheaper than u128 division.
            let mut len_ns = payload_bytes as u64 * SEC / rate;
            let credit = self.sk.next_tx_time - prior;
            len_ns -= (len_ns / 2).min(credit);
            self.sk.next_tx_time += len_ns;
        }
    }

    /// Earliest time the pacer lets the next packet leave (now if not paced).
    pub fn pacing_gate(&self, now: Time) -> Time {
        if self.sk.paced {
            self.sk.next_tx_time.max(now)
        } else {
            now
        }
    }

    fn arm_rto(&mut self, now: Time) {
        self.rto_deadline = Some(now + self.rtt.current());
    }

    /// Process one ACK (Linux tcp_ack). Returns true if the ACK was used.
    pub fn on_ack(&mut self, ack: &AckPkt, now: Time) -> bool {
        if !self.active {
            return false;
        }
        self.sk.now = now;
        if ack.cum < self.sk.snd_una || ack.cum > self.sk.snd_nxt {
            return false; // old or impossible ACK
        }
        self.snd_wnd = if ack.rwnd == u32::MAX { u64::MAX } else { ack.rwnd as u64 };
        // tcp_ecn_rcv_ecn_echo: ECE counts only on an ECN connection.
        let ece = ack.ece && self.sk.ecn;
        let prior_in_flight = self.sk.packets_in_flight();
        let prior_snd_una = self.sk.snd_una;
        let prior_lost = self.sk.lost;
        let prior_bytes_acked = self.stats.bytes_acked;
        let prior_sacked = self.sk.sacked_out;
        let mut rs = RateSample { prior_in_flight, is_ece: ece, ..RateSample::default() };
        let mut newly_delivered: u32 = 0;
        // RTT candidates: (first, last) send times of newly (s)acked never-retransmitted segments.
        let mut sack_rtt: Option<(Time, Time)> = None;
        let mut seq_rtt: Option<(Time, Time)> = None;
        let mut last_rate_seq: Option<u32> = None;

        // 1. SACK tagging (tcp_sacktag_write_queue), skipping ranges already processed on the
        //    previous ACK (Linux's recv_sack_cache).
        for &(bs, be) in ack.sacks() {
            let bs = bs.max(ack.cum);
            let be = be.min(self.sk.snd_nxt);
            let mut seq = bs;
            while seq < be {
                if let Some(end) = self.cached_sack_end(seq) {
                    seq = end.max(seq + 1);
                    continue;
                }
                let f = self.seg(seq).flags;
                if f & SACKED == 0 {
                    let mut nf = f | SACKED;
                    if f & LOST != 0 {
                        nf &= !LOST;
                        self.sk.lost_out -= 1;
                    }
                    if f & RETRANS != 0 {
                        nf &= !RETRANS;
                        self.sk.retrans_out -= 1;
                    }
                    self.sk.sacked_out += 1;
                    self.sk.delivered += 1;
                    newly_delivered += 1;
                    let sent = self.seg(seq).sent;
                    self.rack_advance(f, seq, sent, now);
                    if f & EVER_RETRANS == 0 {
                        sack_rtt = Some(match sack_rtt {
                            None => (sent, sent),
                            Some((a, b)) => (a.min(sent), b.max(sent)),
                        });
                    }
                    self.rate_skb_delivered(seq, &mut rs, &mut last_rate_seq);
                    self.seg_mut(seq).flags = nf | RATE_DONE;
                    if seq + 1 > self.high_sacked {
                        self.high_sacked = seq + 1;
                    }
                }
                seq += 1;
            }
        }
        self.sack_cache_n = ack.nsack as usize;
        self.sack_cache[..ack.nsack as usize].copy_from_slice(ack.sacks());
        // tcp_count_delivered: packets delivered by an ACK with ECE are delivered_ce too.
        if ece {
            self.sk.delivered_ce += newly_delivered as u64;
        }

        // 2. Cumulative ACK (tcp_clean_rtx_queue). snd_una moves now; the packets it delivers
        //    are counted after in_ack_event, as Linux counts them in tcp_clean_rtx_queue.
        let mut cum_delivered = 0u64;
        let mut pkts_acked = 0u32;
        let mut retrans_data_acked = false;
        while self.sk.snd_una < ack.cum {
            let seq = self.sk.snd_una;
            let f = self.segs[0].flags;
            if f & RETRANS != 0 {
                self.sk.retrans_out -= 1;
            }
            if f & LOST != 0 {
                self.sk.lost_out -= 1;
            }
            if f & EVER_RETRANS != 0 {
                // Linux FLAG_RETRANS_DATA_ACKED: no cumulative-ACK RTT sample on this ACK.
                retrans_data_acked = true;
            }
            if f & SACKED != 0 {
                self.sk.sacked_out -= 1;
            } else {
                cum_delivered += 1;
                newly_delivered += 1;
                let sent = self.segs[0].sent;
                self.rack_advance(f, seq, sent, now);
                if f & EVER_RETRANS == 0 {
                    seq_rtt = Some(match seq_rtt {
                        None => (sent, sent),
                        Some((a, b)) => (a.min(sent), b.max(sent)),
                    });
                }
                self.rate_skb_delivered(seq, &mut rs, &mut last_rate_seq);
            }
            self.stats.bytes_acked += self.seg_len(seq) as u64;
            pkts_acked += 1;
            self.segs.pop_front();
            self.sk.snd_una += 1;
            self.sk.packets_out -= 1;
        }
        // Linux tcp_in_ack_event, between the snd_una update and tcp_clean_rtx_queue.
        self.cc.in_ack_event(&mut self.sk, if ece { CA_ACK_ECE } else { 0 });
        self.sk.delivered += cum_delivered;
        if ece {
            self.sk.delivered_ce += cum_delivered;
        }
        let una_advanced = self.sk.snd_una > prior_snd_una;
        if retrans_data_acked {
            seq_rtt = None;
        }
        if una_advanced {
            self.rto_retries = 0;
        }
        if self.high_sacked < self.sk.snd_una {
            self.high_sacked = self.sk.snd_una;
        }
        self.lost_hint = self.lost_hint.max(self.sk.snd_una);
        self.retx_hint = self.retx_hint.max(self.sk.snd_una);

        // RTT (tcp_ack_update_rtt): RTO from the oldest cumulatively acked segment, else the
        // oldest SACKed one; the CC sample from the newest (s)acked one.
        let mut seq_rtt_ns = seq_rtt.map(|(first, _)| now - first).or(sack_rtt.map(|(first, _)| now - first));
        let mut ca_rtt_ns = sack_rtt.or(seq_rtt).map(|(_, last)| now - last);
        // tcp_ack_update_rtt: with no segment to time (all retransmitted), data acked and a
        // timestamp echo, both samples come from the echo (tcp_rtt_tsopt_us: at least one tick).
        if self.cfg.tsecr_rtt && seq_rtt_ns.is_none() && una_advanced && ack.tsecr != 0 {
            let delta = self.ts_now(now).wrapping_sub(ack.tsecr);
            if delta < (i32::MAX as u32) / 1000 {
                let r = delta.max(1) as Time * self.cfg.ts_tick;
                seq_rtt_ns = Some(r);
                ca_rtt_ns = Some(r);
            }
        }
        rs.rtt = ca_rtt_ns.map(|r| r as i64).unwrap_or(-1);
        if let Some(r) = seq_rtt_ns {
            if let Some(ca) = ca_rtt_ns {
                self.sk.min_rtt = self.sk.min_rtt.min(ca.max(1));
            }
            self.rtt.sample(r, self.sk.snd_una, self.sk.snd_nxt);
            self.sk.srtt = self.rtt.srtt;
        }
        if let Some(ca) = ca_rtt_ns {
            self.stats.rtt.add(ca as f64);
            self.stats.rtt_hist.add(ca);
        }
        // Linux FLAG_ACK_MAYBE_DELAYED: one runt segment acked, nothing SACKed before.
        let acked_bytes = self.stats.bytes_acked - prior_bytes_acked;
        rs.is_ack_delayed =
            pkts_acked == 1 && prior_sacked == 0 && acked_bytes < self.cfg.mss as u64 && rs.prior_delivered + 1 == self.sk.delivered;
        let sample = AckSample { pkts_acked, rtt: rs.rtt, in_flight: prior_in_flight, ts_val: ack.tsval, ts_ecr: ack.tsecr };
        self.cc.pkts_acked(&mut self.sk, &sample);
        // A delay-based backoff decided on this ACK takes effect before any growth.
        self.apply_cwr_request();

        // Retransmission timer (RFC 6298 5.2, 5.3).
        if una_advanced {
            if self.sk.packets_out > 0 {
                self.arm_rto(now);
            } else {
                self.rto_deadline = None;
            }
        }

        // 3. Loss marking and the recovery state machine (tcp_fastretrans_alert).
        match self.cfg.recovery {
            LossDetection::Rfc6675 => self.mark_lost(),
            LossDetection::Rack => {
                self.rack_mark_lost(now);
            }
        }
        self.update_state(ece);
        let newly_lost = (self.sk.lost - prior_lost) as u32;

        // 4. Delivery-rate sample (tcp_rate_gen).
        self.rate_gen(newly_delivered, newly_lost, &mut rs, now);

        // 5. Congestion control (tcp_cong_control).
        if self.cc.has_cong_control() {
            self.cc.cong_control(&mut self.sk, &rs);
        } else {
            match self.sk.ca_state {
                CaState::Recovery => self.prr(newly_delivered, newly_lost, una_advanced),
                CaState::Cwr if self.cwr_prr => self.prr(newly_delivered, newly_lost, una_advanced),
                CaState::Cwr => {} // the algorithm set cwnd; hold it
                _ if una_advanced => self.cc.cong_avoid(&mut self.sk, newly_delivered),
                _ => {}
            }
            self.update_pacing_rate();
        }
        self.apply_cwr_request();

        if self.all_acked() && self.completed_at.is_none() {
            self.completed_at = Some(now);
            self.rto_deadline = None;
        }
        true
    }

    fn cached_sack_end(&self, seq: u32) -> Option<u32> {
        self.sack_cache[..self.sack_cache_n].iter().find(|&&(s, e)| s <= seq && seq < e).map(|&(_, e)| e)
    }

    /// tcp_rate_skb_delivered: take the stamps of the most recently sent delivered segment.
    fn rate_skb_delivered(&mut self, seq: u32, rs: &mut RateSample, last_seq: &mut Option<u32>) {
        let s = *self.seg(seq);
        if s.flags & RATE_DONE != 0 {
            return;
        }
        let sent_after = match *last_seq {
            None => true,
            Some(ls) => s.sent > self.first_tx_mstamp || (s.sent == self.first_tx_mstamp && seq > ls),
        };
        if rs.prior_mstamp.is_none() || sent_after {
            rs.prior_delivered = s.tx_delivered;
            rs.prior_mstamp = Some(s.tx_delivered_mstamp);
            rs.is_app_limited = s.tx_app_limited;
            rs.is_retrans = s.flags & RETRANS != 0;
            rs.prior_delivered_ce = s.tx_delivered_ce;
            rs.tx_in_flight = s.tx_in_flight;
            rs.prior_lost = s.tx_lost;
            *last_seq = Some(seq);
            self.first_tx_mstamp = s.sent;
            // send phase of this flight: from the first to the last send in it
            rs.interval = (s.sent - s.tx_first_tx_mstamp) as i64;
        }
    }

    /// tcp_rate_gen.
    fn rate_gen(&mut self, delivered: u32, lost: u32, rs: &mut RateSample, now: Time) {
        if self.sk.app_limited != 0 && self.sk.delivered > self.sk.app_limited {
            self.sk.app_limited = 0;
        }
        if delivered > 0 {
            self.sk.delivered_mstamp = now;
        }
        rs.acked_sacked = delivered;
        rs.losses = lost;
        let Some(prior_mstamp) = rs.prior_mstamp else {
            rs.delivered = -1;
            rs.interval = -1;
            return;
        };
        rs.delivered = (self.sk.delivered - rs.prior_delivered) as i64;
        rs.lost = (self.sk.lost - rs.prior_lost) as u32;
        rs.delivered_ce = (self.sk.delivered_ce as u32).wrapping_sub(rs.prior_delivered_ce);
        let snd = rs.interval;
        let ack = (now - prior_mstamp) as i64;
        rs.interval = snd.max(ack);
        // A sample shorter than min RTT is implausible (ACK compression): drop it.
        if self.sk.min_rtt != Time::MAX && (rs.interval as u64) < self.sk.min_rtt {
            rs.interval = -1;
        }
    }

    /// tcp_rack_advance: a newly delivered segment updates the RACK send time and RTT.
    fn rack_advance(&mut self, flags: u8, seq: u32, sent: Time, now: Time) {
        if self.cfg.recovery != LossDetection::Rack {
            return;
        }
        let rtt = now - sent;
        // For a retransmitted segment an RTT below min RTT means the original was delivered:
        // ambiguous, so it does not advance RACK.
        if flags & EVER_RETRANS != 0 && self.sk.min_rtt != Time::MAX && rtt < self.sk.min_rtt {
            return;
        }
        self.rack.advanced = true;
        self.rack.rtt = rtt;
        if sent > self.rack.mstamp || (sent == self.rack.mstamp && seq + 1 > self.rack.end_seq) {
            self.rack.mstamp = sent;
            self.rack.end_seq = seq + 1;
        }
    }

    /// tcp_rack_reo_wnd: no reordering window during recovery or once DupThresh segments are
    /// SACKed (the simulated paths never reorder, so reordering is never "seen"); otherwise
    /// min_rtt / 4, at most srtt.
    fn rack_reo_wnd(&self) -> Time {
        if self.sk.ca_state >= CaState::Recovery || self.sk.sacked_out >= self.cfg.dupthresh {
            return 0;
        }
        let min_rtt = if self.sk.min_rtt == Time::MAX { 0 } else { self.sk.min_rtt };
        (min_rtt / 4).min(self.sk.srtt)
    }

    /// tcp_rack_mark_lost / tcp_rack_detect_loss: every segment sent before the most recently
    /// delivered one and older than rack.rtt + reo_wnd is lost, including retransmissions.
    /// Arms the reordering timer for the ones not yet old enough. Returns the number marked.
    fn rack_mark_lost(&mut self, now: Time) -> u32 {
        if !self.rack.advanced {
            return 0;
        }
        self.rack.advanced = false;
        let reo_wnd = self.rack_reo_wnd();
        let mut marked = 0;
        let mut wait: Time = 0;
        let mut i = 0;
        while i < self.rack.tsorted.len() {
            let (seq, sent) = self.rack.tsorted[i];
            // Drop entries whose segment is gone, delivered, already lost or re-sent since.
            let live = seq >= self.sk.snd_una && seq < self.sk.snd_nxt && {
                let s = self.seg(seq);
                s.sent == sent && s.flags & SACKED == 0 && !(s.flags & LOST != 0 && s.flags & RETRANS == 0)
            };
            if !live {
                if i == 0 {
                    self.rack.tsorted.pop_front();
                } else {
                    i += 1;
                }
                continue;
            }
            if !(self.rack.mstamp > sent || (self.rack.mstamp == sent && self.rack.end_seq > seq + 1)) {
                break; // sent after the most recently delivered segment
            }
            let deadline = sent + self.rack.rtt + reo_wnd;
            if deadline <= now {
                self.rack_mark_skb_lost(seq);
                marked += 1;
                if i == 0 {
                    self.rack.tsorted.pop_front();
                } else {
                    i += 1;
                }
            } else {
                wait = wait.max(deadline - now);
                i += 1;
            }
        }
        // Linux adds TCP_TIMEOUT_MIN (2 jiffies) to the reordering timeout.
        self.rack_deadline = if wait > 0 { Some(now + wait + 2 * crate::time::MS) } else { None };
        marked
    }

    /// tcp_mark_skb_lost: a lost retransmission loses its RETRANS mark (so it goes out again)
    /// and counts as a new loss.
    fn rack_mark_skb_lost(&mut self, seq: u32) {
        let f = self.seg(seq).flags;
        if f & RETRANS != 0 {
            self.seg_mut(seq).flags = f & !RETRANS;
            self.sk.retrans_out -= 1;
            self.sk.lost += 1;
            self.notify_skb_lost(seq);
        } else if f & LOST == 0 {
            self.seg_mut(seq).flags = f | LOST;
            self.sk.lost_out += 1;
            self.sk.lost += 1;
            self.notify_skb_lost(seq);
        }
        self.retx_hint = self.retx_hint.min(seq);
    }

    /// tcp_notify_skb_loss_event (BBRv3): after `tp->lost` counted a segment newly marked
    /// lost, the algorithm's `skb_marked_lost` hook sees the segment's transmission record.
    fn notify_skb_lost(&mut self, seq: u32) {
        let s = self.seg(seq);
        let tx = SkbTx {
            in_flight: s.tx_in_flight,
            lost: s.tx_lost,
            is_app_limited: s.tx_app_limited,
            has_delivered_mstamp: s.flags & RATE_DONE == 0,
        };
        self.cc.skb_marked_lost(&mut self.sk, &tx);
    }

    /// The RACK reordering timer fired (tcp_rack_reo_timeout): detect again, start recovery
    /// if something is now lost.
    pub fn on_rack_timer(&mut self, now: Time) {
        self.sk.now = now;
        self.rack_deadline = None;
        if !self.active || self.sk.packets_out == 0 {
            return;
        }
        self.rack.advanced = true;
        if self.rack_mark_lost(now) > 0 && self.sk.ca_state < CaState::Recovery {
            self.enter_recovery();
        }
    }

    /// RFC 6675 IsLost: a segment is lost once `dupthresh` segments above it are SACKed.
    /// Finds the dupthresh-th SACKed segment from the top and marks every un-SACKed segment
    /// below it lost (once; the boundary only moves up).
    fn mark_lost(&mut self) {
        if self.sk.sacked_out < self.cfg.dupthresh || self.high_sacked <= self.lost_hint {
            return;
        }
        let mut count = 0;
        let mut p = self.high_sacked;
        while p > self.lost_hint {
            p -= 1;
            if self.seg(p).flags & SACKED != 0 {
                count += 1;
                if count == self.cfg.dupthresh {
                    break;
                }
            }
        }
        if count < self.cfg.dupthresh {
            return;
        }
        for seq in self.lost_hint..p {
            let f = self.seg(seq).flags;
            if f & (SACKED | LOST) == 0 {
                self.seg_mut(seq).flags = f | LOST;
                self.sk.lost_out += 1;
                self.sk.lost += 1;
                self.notify_skb_lost(seq);
                self.retx_hint = self.retx_hint.min(seq);
            }
        }
        self.lost_hint = p;
    }

    /// The state machine of tcp_fastretrans_alert; `ece`: the ACK carries ECE (FLAG_ECE).
    fn update_state(&mut self, ece: bool) {
        let st = self.sk.ca_state;
        // Leaving Recovery or Loss once the recovery point is acknowledged.
        if (st == CaState::Recovery || st == CaState::Loss || st == CaState::Cwr) && self.sk.snd_una >= self.high_seq {
            if st == CaState::Cwr && self.cwr_prr {
                // Linux holds CWR until something above high_seq is acknowledged, so that the
                // segment carrying CWR has reached the receiver; then tcp_end_cwnd_reduction.
                if self.sk.snd_una > self.high_seq {
                    self.end_cwnd_reduction();
                    self.set_ca_state(CaState::Open);
                }
            } else {
                if st == CaState::Recovery {
                    self.end_cwnd_reduction();
                }
                self.set_ca_state(CaState::Open);
            }
        }
        if self.sk.ca_state < CaState::Recovery {
            if self.sk.lost_out > 0 {
                self.enter_recovery();
            } else {
                // tcp_try_to_open: an ECE enters CWR unless a reduction is under way.
                if ece && self.sk.ca_state < CaState::Cwr {
                    self.enter_cwr();
                }
                if self.sk.ca_state == CaState::Cwr {
                    // stays in CWR until the recovery point is acknowledged
                } else if self.sk.sacked_out > 0 {
                    if self.sk.ca_state != CaState::Disorder {
                        self.set_ca_state(CaState::Disorder);
                    }
                } else if self.sk.ca_state != CaState::Open {
                    self.set_ca_state(CaState::Open);
                }
            }
        }
    }

    /// tcp_end_cwnd_reduction: PRR ends at ssthresh (an algorithm with its own cong_control
    /// keeps its cwnd), then CA_EVENT_COMPLETE_CWR (Linux returns before both for
    /// cong_control algorithms).
    fn end_cwnd_reduction(&mut self) {
        if !self.cc.has_cong_control() && self.sk.ssthresh < crate::cc::INFINITE_SSTHRESH {
            self.sk.cwnd = self.sk.ssthresh;
        }
        if !self.cc.has_cong_control() {
            self.cc.cwnd_event(&mut self.sk, CaEvent::CompleteCwr);
        }
    }

    /// tcp_init_cwnd_reduction, shared by CWR on ECE and Recovery: a new ssthresh from the
    /// algorithm, PRR's counters from zero, high_seq at snd_nxt, and CWR queued for the next
    /// new segment on an ECN connection (tcp_ecn_queue_cwr).
    fn init_cwnd_reduction(&mut self) {
        self.high_seq = self.sk.snd_nxt;
        self.sk.cwnd_cnt = 0;
        self.sk.prior_cwnd = self.sk.cwnd;
        self.prr_delivered = 0;
        self.prr_out = 0;
        self.sk.loss_is_timeout = false;
        self.sk.ssthresh = self.cc.ssthresh(&mut self.sk);
        self.queue_cwr |= self.sk.ecn;
    }

    /// tcp_enter_cwr on an ECE (RFC 3168 6.1.2): one reduction per window of data.
    fn enter_cwr(&mut self) {
        self.stats.ece_reductions += 1;
        self.init_cwnd_reduction();
        self.set_ca_state(CaState::Cwr);
        self.cwr_prr = true;
    }

    /// Enter CWR if the algorithm asked for it (see `SockState::cwr_request`).
    fn apply_cwr_request(&mut self) {
        if self.sk.cwr_request {
            self.sk.cwr_request = false;
            if self.sk.ca_state < CaState::Cwr {
                self.high_seq = self.sk.snd_nxt;
                self.set_ca_state(CaState::Cwr);
            }
        }
    }

    fn set_ca_state(&mut self, st: CaState) {
        self.cc.set_state(&mut self.sk, st);
        self.sk.ca_state = st;
        if st != CaState::Cwr {
            self.cwr_prr = false;
        }
    }

    /// tcp_enter_recovery: a new reduction (tcp_init_cwnd_reduction) unless one is under way
    /// (tcp_in_cwnd_reduction: the CWR of an ECE, whose ssthresh, PRR counters and high_seq
    /// carry on). An algorithm's held CWR (`cwr_request`) starts a new one.
    fn enter_recovery(&mut self) {
        self.stats.fast_recoveries += 1;
        if !(self.sk.ca_state == CaState::Cwr && self.cwr_prr) {
            self.init_cwnd_reduction();
        }
        self.set_ca_state(CaState::Recovery);
    }

    /// RFC 6937 PRR as Linux tcp_cwnd_reduction.
    fn prr(&mut self, newly_acked_sacked: u32, newly_lost: u32, una_advanced: bool) {
        if newly_acked_sacked == 0 || self.sk.prior_cwnd == 0 {
            return;
        }
        let in_flight = self.sk.packets_in_flight() as i64;
        let ssthresh = self.sk.ssthresh as i64;
        let delta = ssthresh - in_flight;
        self.prr_delivered += newly_acked_sacked;
        let mut sndcnt: i64;
        if delta < 0 {
            // Proportional rate reduction: sndcnt = ceil(ssthresh * prr_delivered / RecoverFS) - prr_out
            let dividend = ssthresh as u64 * self.prr_delivered as u64 + self.sk.prior_cwnd as u64 - 1;
            sndcnt = (dividend / self.sk.prior_cwnd as u64) as i64 - self.prr_out as i64;
        } else {
            // Slow-start reduction bound.
            sndcnt = (self.prr_delivered as i64 - self.prr_out as i64).max(newly_acked_sacked as i64);
            if una_advanced && newly_lost == 0 {
                sndcnt += 1;
            }
            sndcnt = sndcnt.min(delta);
        }
        // Force a fast retransmit on entering recovery.
        sndcnt = sndcnt.max(if self.prr_out > 0 { 0 } else { 1 });
        self.sk.cwnd = (in_flight + sndcnt).max(1) as u32;
    }

    /// tcp_update_pacing_rate for window algorithms when pacing is on: 2x cwnd/srtt in slow
    /// start (tcp_pacing_ss_ratio = 200), 1.2x in congestion avoidance (tcp_pacing_ca_ratio).
    /// Like Linux, the rate is kept up to date even when the flow is not paced (HyStart reads it).
    fn update_pacing_rate(&mut self) {
        if self.cc.has_cong_control() {
            return;
        }
        let ratio: u64 = if self.sk.cwnd < self.sk.ssthresh / 2 { 200 } else { 120 };
        let w = self.sk.cwnd.max(self.sk.packets_out) as u64;
        let bytes = self.cfg.mss as u64 * w * ratio / 100;
        let srtt = if self.sk.srtt > 0 { self.sk.srtt } else { crate::time::MS };
        // The same quotient in u64 whenever the product fits (always, short of a window of
        // 18 GB): a u128 division is a library call on every ACK.
        self.sk.pacing_rate = match bytes.checked_mul(SEC) {
            Some(p) => p / srtt,
            None => (bytes as u128 * SEC as u128 / srtt as u128) as u64,
        };
    }

    /// The retransmission timer fired at `now` (tcp_retransmit_timer + tcp_enter_loss).
    pub fn on_rto(&mut self, now: Time) {
        self.sk.now = now;
        self.rto_deadline = None;
        self.rack_deadline = None;
        if !self.active || self.sk.packets_out == 0 {
            return;
        }
        self.stats.rto_count += 1;
        let st = self.sk.ca_state;
        // tcp_enter_loss: a new ssthresh unless this is a repeated timeout of the same loss.
        if st <= CaState::Disorder || self.high_seq <= self.sk.snd_una || (st == CaState::Loss && self.rto_retries == 0) {
            self.sk.prior_cwnd = self.sk.cwnd;
            self.sk.loss_is_timeout = true;
            self.sk.ssthresh = self.cc.ssthresh(&mut self.sk);
            self.sk.loss_is_timeout = false;
            self.cc.cwnd_event(&mut self.sk, CaEvent::Loss);
        }
        // tcp_timeout_mark_lost: every un-SACKed segment is lost; retransmissions are forgotten,
        // and a lost retransmission counts as a new loss (tcp_mark_skb_lost).
        for i in 0..self.segs.len() {
            let f = self.segs[i].flags;
            if f & SACKED == 0 {
                let newly = f & LOST == 0 || f & RETRANS != 0;
                if f & LOST == 0 {
                    self.sk.lost_out += 1;
                    self.sk.lost += 1;
                } else if f & RETRANS != 0 {
                    self.sk.lost += 1;
                }
                self.segs[i].flags = (f | LOST) & !RETRANS;
                if newly {
                    let seq = self.sk.snd_una + i as u32;
                    self.notify_skb_lost(seq);
                }
            }
        }
        self.sk.retrans_out = 0;
        self.rto_retries += 1;
        self.lost_hint = self.high_sacked.max(self.sk.snd_una);
        self.retx_hint = self.sk.snd_una;
        self.sk.cwnd = self.sk.packets_in_flight() + 1;
        self.sk.cwnd_cnt = 0;
        self.high_seq = self.sk.snd_nxt;
        self.set_ca_state(CaState::Loss);
        // tcp_enter_loss: tcp_ecn_queue_cwr.
        self.queue_cwr |= self.sk.ecn;
        self.rtt.on_timeout();
        self.arm_rto(now);
    }

    pub fn stop(&mut self) {
        self.active = false;
        self.rto_deadline = None;
        self.rack_deadline = None;
    }

    /// Scoreboard consistency (for tests): counters equal a recount of the flags.
    pub fn check_invariants(&self) -> Result<(), String> {
        let (mut sacked, mut lost, mut retrans) = (0, 0, 0);
        for s in &self.segs {
            if s.flags & SACKED != 0 {
                sacked += 1;
            }
            if s.flags & LOST != 0 {
                lost += 1;
            }
            if s.flags & RETRANS != 0 {
                retrans += 1;
            }
        }
        let c = (self.sk.sacked_out, self.sk.lost_out, self.sk.retrans_out, self.sk.packets_out);
        if (sacked, lost, retrans, self.segs.len() as u32) != c {
            return Err(format!(
                "flow {}: counters (sacked, lost, retrans, out) = {:?} but scoreboard has ({}, {}, {}, {})",
                self.id,
                c,
                sacked,
                lost,
                retrans,
                self.segs.len()
            ));
        }
        Ok(())
    }

    pub fn is_sacked(&self, seq: u32) -> bool {
        seq >= self.sk.snd_una && seq < self.sk.snd_nxt && self.seg(seq).flags & SACKED != 0
    }
    pub fn is_lost(&self, seq: u32) -> bool {
        seq >= self.sk.snd_una && seq < self.sk.snd_nxt && self.seg(seq).flags & LOST != 0
    }
}

impl Sender {
    /// Prefetch what an ACK's processing reads beyond the sender itself: the oldest segment
    /// record, the algorithm's state and the RTT histogram (see [`crate::engine::prefetch`]).
    #[inline]
    pub fn prefetch_ack_path(&self) {
        use crate::engine::prefetch;
        if let Some(s) = self.segs.front() {
            prefetch::first(s);
        }
        let cc: &dyn CongestionControl = &*self.cc;
        prefetch::bytes(cc as *const dyn CongestionControl as *const u8, std::mem::size_of_val(cc));
        self.stats.rtt_hist.prefetch();
    }

    /// Bytes its growing buffers hold (segment records, RACK's send-order queue, pending
    /// algorithm events), for memory accounting.
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        self.segs.capacity() * size_of::<Seg>()
            + self.rack.tsorted.capacity() * size_of::<(u32, Time)>()
            + self.sk.events.capacity() * size_of::<crate::cc::CcEvent>()
    }
}

/// Packet-trace tests: a sender driven by hand-written ACKs on virtual time.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::newreno::{NewReno, NewRenoConfig};
    use crate::tcp::LossDetection;
    use crate::time::MS;

    fn sender(cwnd: u32) -> Sender {
        let cfg = TcpConfig { initial_cwnd: cwnd, ..TcpConfig::default() };
        let mut s = Sender::new(0, cfg, None, Box::new(NewReno::new(NewRenoConfig::default())));
        s.start(0);
        s
    }

    /// Send everything the window allows at `now`; returns the (seq, retx) sent.
    fn send(s: &mut Sender, now: Time) -> Vec<(u32, bool)> {
        let mut v = Vec::new();
        while let Some(p) = s.next_packet(now) {
            v.push((p.seq, p.retx));
        }
        v
    }

    fn ack(cum: u32, sacks: &[(u32, u32)]) -> AckPkt {
        let mut a = AckPkt { flow: 0, cum, nsack: sacks.len() as u8, sack: [(0, 0); 3], tsval: 0, tsecr: 0, rwnd: u32::MAX, ece: false };
        a.sack[..sacks.len()].copy_from_slice(sacks);
        a
    }

    #[test]
    fn sack_scoreboard_counts_each_segment_once() {
        let mut s = sender(10);
        assert_eq!(send(&mut s, 0).len(), 10);
        s.on_ack(&ack(0, &[(1, 2)]), 50 * MS);
        assert_eq!(s.sk.sacked_out, 1);
        assert!(s.is_sacked(1) && !s.is_sacked(0));
        // The same block again plus a new one: only segment 2 is new.
        s.on_ack(&ack(0, &[(1, 3)]), 51 * MS);
        assert_eq!(s.sk.sacked_out, 2);
        assert_eq!(s.sk.delivered, 2);
        assert_eq!(s.sk.ca_state, CaState::Disorder);
        assert_eq!(s.sk.lost_out, 0, "two SACKed above is below DupThresh");
        s.check_invariants().unwrap();
    }

    #[test]
    fn rfc6675_is_lost_needs_dupthresh_sacked_segments_above() {
        let mut s = sender(10);
        send(&mut s, 0);
        // SACKed: 2, 5, 8, 9.
        s.on_ack(&ack(0, &[(8, 10), (5, 6), (2, 3)]), 50 * MS);
        // 0, 1 have 4 SACKed above; 3, 4 have 3 (5, 8, 9); 6, 7 have only 2.
        let lost: Vec<u32> = (0..10).filter(|&q| s.is_lost(q)).collect();
        assert_eq!(lost, vec![0, 1, 3, 4]);
        assert_eq!(s.sk.ca_state, CaState::Recovery);
        assert_eq!(s.sk.ssthresh, 5);
        // pipe = 10 - (4 SACKed + 4 lost) = 2 < ssthresh, so PRR's slow-start reduction bound
        // applies: sndcnt = min(ssthresh - pipe, max(prr_delivered - prr_out, newly)) = min(3, 4).
        assert_eq!(s.sk.packets_in_flight(), 2);
        assert_eq!(s.sk.cwnd, 5);
        // NextSeg rule 1: lost holes first, lowest first.
        assert_eq!(send(&mut s, 50 * MS), vec![(0, true), (1, true), (3, true)]);
        s.check_invariants().unwrap();
    }

    #[test]
    fn partial_ack_keeps_recovery_and_retransmits_next_hole() {
        let mut s = sender(10);
        send(&mut s, 0);
        // Segments 0 and 5 are lost; 1-4 and 6-9 arrive.
        s.on_ack(&ack(0, &[(1, 5)]), 50 * MS);
        assert_eq!(s.sk.ca_state, CaState::Recovery);
        assert_eq!(s.high_seq, 10);
        let out = send(&mut s, 50 * MS);
        assert_eq!(out[0], (0, true));
        s.on_ack(&ack(0, &[(6, 10), (1, 5)]), 51 * MS);
        assert!(s.is_lost(5));
        // Partial ACK: the retransmitted 0 arrives, cumulative ACK moves to 5 (< recovery point 10).
        s.on_ack(&ack(5, &[(6, 10)]), 90 * MS);
        assert_eq!(s.sk.ca_state, CaState::Recovery, "partial ACK stays in recovery");
        let out = send(&mut s, 90 * MS);
        assert!(out.contains(&(5, true)), "next hole retransmitted: {out:?}");
        // Full ACK of everything up to the recovery point ends recovery at cwnd = ssthresh.
        let nxt = s.sk.snd_nxt;
        s.on_ack(&ack(10, &[]), 130 * MS);
        assert_eq!(s.sk.ca_state, CaState::Open);
        assert_eq!(s.sk.cwnd, 5);
        assert!(nxt >= 10);
        s.check_invariants().unwrap();
    }

    #[test]
    fn rto_backs_off_exponentially_and_restarts_from_one_segment() {
        let mut s = sender(4);
        send(&mut s, 0);
        assert_eq!(s.rto_deadline, Some(1000 * MS), "initial RTO is 1 s");
        s.on_rto(1000 * MS);
        assert_eq!(s.sk.cwnd, 1);
        assert_eq!(s.sk.ca_state, CaState::Loss);
        assert_eq!(s.sk.ssthresh, 2);
        assert_eq!(send(&mut s, 1000 * MS), vec![(0, true)]);
        assert_eq!(s.rto_deadline, Some(3000 * MS), "doubled: 1 s + 2 s");
        s.on_rto(3000 * MS);
        assert_eq!(send(&mut s, 3000 * MS), vec![(0, true)]);
        assert_eq!(s.rto_deadline, Some(7000 * MS), "doubled again: 3 s + 4 s");
        assert_eq!(s.stats.rto_count, 2);
    }

    #[test]
    fn tsecr_rtt_times_an_ack_of_retransmitted_data_from_the_echo() {
        let cfg = TcpConfig { initial_cwnd: 2, tsecr_rtt: true, ..TcpConfig::default() };
        let mut s = Sender::new(0, cfg, None, Box::new(NewReno::new(NewRenoConfig::default())));
        s.start(0);
        send(&mut s, 0); // 0, 1
        s.on_rto(1000 * MS);
        send(&mut s, 1000 * MS); // retransmit 0, stamped TSval 1000 (1 ms ticks)
        // The receiver echoes the retransmission's TSval: RTT = 1100 - 1000 ticks = 100 ms.
        s.on_ack(&AckPkt { tsecr: 1000, ..ack(1, &[]) }, 1100 * MS);
        assert!(s.rtt.has_sample);
        assert_eq!(s.rtt.srtt, 100 * MS);
        assert_eq!(s.rtt.backoff, 0, "a valid sample ends the backoff (tcp_ack_update_rtt -> tcp_set_rto)");
        assert_eq!(s.sk.min_rtt, 100 * MS);
        // Without an echo (tsecr 0, as Linux's rcv_tsecr test) there is no sample.
        let mut s = Sender::new(0, TcpConfig { initial_cwnd: 2, tsecr_rtt: true, ..TcpConfig::default() }, None,
                                Box::new(NewReno::new(NewRenoConfig::default())));
        s.start(0);
        send(&mut s, 0);
        s.on_rto(1000 * MS);
        send(&mut s, 1000 * MS);
        s.on_ack(&ack(1, &[]), 1100 * MS);
        assert!(!s.rtt.has_sample);
    }

    #[test]
    fn the_linux_rto_estimator_arms_the_timer_at_srtt_plus_the_floor() {
        use super::super::rtt::RtoEstimator;
        // Two segments out at 0, the first acked at 10 ms: RTT 10 ms, one left in flight, so
        // the timer is re-armed from the ACK. RFC 6298: max(200, 10 + 4 x 5) = 200 ms later;
        // Linux: 10 + max(2 x 10, 200) = 210 ms later.
        for (kind, rto) in [(RtoEstimator::Rfc6298, 200 * MS), (RtoEstimator::Linux, 210 * MS)] {
            let cfg = TcpConfig { initial_cwnd: 2, delayed_ack: false, rto_estimator: kind, ..TcpConfig::default() };
            let mut s = Sender::new(0, cfg, None, Box::new(NewReno::new(NewRenoConfig::default())));
            s.start(0);
            send(&mut s, 0);
            s.on_ack(&ack(1, &[]), 10 * MS);
            assert_eq!(s.rtt.srtt, 10 * MS);
            assert_eq!(s.rto_deadline, Some(10 * MS + rto), "{kind:?}");
        }
    }

    #[test]
    fn karn_no_rtt_sample_from_retransmitted_segments() {
        let mut s = sender(2);
        send(&mut s, 0); // 0, 1
        s.on_rto(1000 * MS);
        send(&mut s, 1000 * MS); // retransmit 0
        assert!(!s.rtt.has_sample);
        // The ACK covers only retransmitted segment 0: no sample, backoff stays.
        s.on_ack(&ack(1, &[]), 1100 * MS);
        assert!(!s.rtt.has_sample);
        assert_eq!(s.rtt.backoff, 1);
        // Slow start from cwnd 1 -> 2: segment 1 (marked lost by the RTO) is retransmitted and
        // new segment 2 goes out for the first time.
        assert_eq!(send(&mut s, 1100 * MS), vec![(1, true), (2, false)]);
        s.on_ack(&ack(2, &[]), 1200 * MS);
        assert!(!s.rtt.has_sample, "ACK of a retransmitted segment: no sample");
        // Segment 2 was never retransmitted: a valid sample of 1250 - 1100 = 150 ms; backoff ends.
        s.on_ack(&ack(3, &[]), 1250 * MS);
        assert!(s.rtt.has_sample);
        assert_eq!(s.rtt.srtt, 150 * MS);
        assert_eq!(s.rtt.backoff, 0);
    }

    #[test]
    fn repeated_timeouts_keep_the_first_ssthresh() {
        let mut s = sender(20);
        send(&mut s, 0);
        s.on_rto(1000 * MS);
        assert_eq!(s.sk.ssthresh, 10);
        send(&mut s, 1000 * MS);
        // The retransmission is lost too: the second timeout must not recompute ssthresh from
        // cwnd = 1 (Linux tcp_enter_loss checks icsk_retransmits).
        s.on_rto(3000 * MS);
        assert_eq!(s.sk.ssthresh, 10);
        assert_eq!(s.sk.cwnd, 1);
    }

    #[test]
    fn pacing_spaces_packets_by_payload_over_rate() {
        let cfg = TcpConfig { initial_cwnd: 100, pacing: Pacing::On, ..TcpConfig::default() };
        let mut s = Sender::new(0, cfg, None, Box::new(NewReno::new(NewRenoConfig::default())));
        s.start(0);
        s.sk.pacing_rate = 1_448_000; // bytes/s: one 1448-byte payload per ms
        // The first 9 segments are not paced: Linux counts data_segs_out before
        // tcp_update_skb_after_send tests data_segs_out >= 10.
        for _ in 0..9 {
            s.next_packet(0).unwrap();
        }
        assert_eq!(s.pacing_gate(0), 0);
        s.next_packet(0).unwrap();
        // The 10th advances the departure clock by 1448 B / 1.448 MB/s = 1 ms.
        assert_eq!(s.pacing_gate(0), MS);
        s.next_packet(MS).unwrap();
        assert_eq!(s.pacing_gate(MS), 2 * MS);
    }

    fn rack_sender(cwnd: u32) -> Sender {
        let cfg = TcpConfig { initial_cwnd: cwnd, recovery: LossDetection::Rack, ..TcpConfig::default() };
        let mut s = Sender::new(0, cfg, None, Box::new(NewReno::new(NewRenoConfig::default())));
        s.start(0);
        s
    }

    #[test]
    fn rack_marks_a_hole_lost_once_three_segments_above_are_sacked() {
        let mut s = rack_sender(10);
        for i in 0..10 {
            assert_eq!(s.next_packet(i * MS).map(|p| p.seq), Some(i as u32));
        }
        // 1 and 2 SACKed at 50/51 ms: with fewer than DupThresh SACKed and no recovery, the
        // reordering window is min_rtt / 4, so 0 is not lost yet and the timer is armed.
        s.on_ack(&ack(0, &[(1, 2)]), 50 * MS);
        s.on_ack(&ack(0, &[(1, 3)]), 51 * MS);
        assert!(!s.is_lost(0));
        assert!(s.rack_deadline.is_some());
        // A third SACKed segment: no reordering window; 0 (sent before 3, older than RACK's
        // RTT) is lost and recovery starts.
        s.on_ack(&ack(0, &[(1, 4)]), 52 * MS);
        assert!(s.is_lost(0));
        assert!(!s.is_lost(4), "4 was sent after the newest delivered segment");
        assert_eq!(s.sk.ca_state, CaState::Recovery);
        s.check_invariants().unwrap();
    }

    #[test]
    fn rack_reordering_timer_marks_the_hole_after_the_window() {
        let mut s = rack_sender(4);
        for i in 0..4 {
            s.next_packet(i * MS).unwrap();
        }
        s.on_ack(&ack(0, &[(1, 2)]), 49 * MS); // RTT 48 ms; min_rtt 48 ms -> reo_wnd 12 ms
        assert!(!s.is_lost(0));
        // 0 was sent at 0: lost once now >= 0 + 48 + 12 ms = 60 ms; the timer adds 2 ms.
        assert_eq!(s.rack_deadline, Some(49 * MS + 11 * MS + 2 * MS));
        s.on_rack_timer(62 * MS);
        assert!(s.is_lost(0));
        assert_eq!(s.sk.ca_state, CaState::Recovery);
        assert_eq!(send(&mut s, 62 * MS)[0], (0, true));
    }

    #[test]
    fn rack_detects_a_lost_retransmission_without_a_timeout() {
        let mut s = rack_sender(20);
        send(&mut s, 0); // 0..19 at t = 0
        s.on_ack(&ack(0, &[(1, 5)]), 50 * MS);
        assert!(s.is_lost(0));
        let out = send(&mut s, 50 * MS);
        assert_eq!(out[0], (0, true)); // retransmission of 0 at 50 ms
        // The retransmission is lost too. Segments sent with or after it are SACKed later
        // (the new data sent at 50 ms, seqs 20..): RACK sees 0's retransmission is older than
        // the newest delivered segment and marks it lost again, with no RTO.
        let newest = *out.last().unwrap();
        assert!(newest.0 >= 20, "{out:?}");
        s.on_ack(&ack(0, &[(1, 20), (20, newest.0 + 1)]), 150 * MS);
        assert!(s.is_lost(0));
        assert_eq!(s.sk.retrans_out, 0, "the lost retransmission is no longer in flight");
        let again = send(&mut s, 150 * MS);
        assert!(again.contains(&(0, true)), "{again:?}");
        assert_eq!(s.stats.rto_count, 0);
        s.check_invariants().unwrap();
    }

    #[test]
    fn prr_reduces_gradually_then_ends_at_ssthresh() {
        let mut s = sender(20);
        send(&mut s, 0);
        // Segment 0 lost; SACKs of 1..=3 trigger recovery: ssthresh 10, RecoverFS 20.
        s.on_ack(&ack(0, &[(1, 4)]), 50 * MS);
        assert_eq!(s.sk.ssthresh, 10);
        // prr_delivered = 3: sndcnt = ceil(10 * 3 / 20) = 2
        assert_eq!(s.sk.cwnd, s.sk.packets_in_flight() + 2);
        send(&mut s, 50 * MS);
        // Each further SACKed segment: sndcnt = ceil(10 * prr_delivered / 20) - prr_out.
        s.on_ack(&ack(0, &[(1, 5)]), 51 * MS); // prr_delivered 4 -> ceil(2) - 2 = 0
        assert_eq!(s.sk.cwnd, s.sk.packets_in_flight());
        s.on_ack(&ack(0, &[(1, 6)]), 52 * MS); // 5 -> ceil(2.5) - 2 = 1
        assert_eq!(s.sk.cwnd, s.sk.packets_in_flight() + 1);
    }

    // ECN (RFC 3168 as Linux): packet traces of the sender alone.

    fn ecn_sender(cwnd: u32, cc: Box<dyn CongestionControl>) -> Sender {
        let cfg = TcpConfig { initial_cwnd: cwnd, ecn: true, ..TcpConfig::default() };
        let mut s = Sender::new(0, cfg, None, cc);
        s.start(0);
        s
    }

    fn newreno() -> Box<dyn CongestionControl> {
        Box::new(NewReno::new(NewRenoConfig::default()))
    }

    fn ece(cum: u32, sacks: &[(u32, u32)]) -> AckPkt {
        AckPkt { ece: true, ..ack(cum, sacks) }
    }

    /// Send what the window allows: (seq, ECN field, CWR) of each segment.
    fn send_ecn(s: &mut Sender, now: Time) -> Vec<(u32, Ecn, bool)> {
        std::iter::from_fn(|| s.next_packet(now)).map(|p| (p.seq, p.ecn, p.cwr)).collect()
    }

    #[test]
    fn ece_reduces_once_per_window_with_prr_and_sets_cwr_on_the_next_new_segment() {
        let mut s = ecn_sender(10, newreno());
        let first = send_ecn(&mut s, 0);
        assert_eq!(first, (0..10).map(|q| (q, Ecn::Ect0, false)).collect::<Vec<_>>());
        // ECE: CWR with ssthresh 5, high_seq = snd_nxt = 10. PRR (tcp_cwnd_reduction): pipe
        // 8 > ssthresh, sndcnt = ceil(5 x 2 / 10) - 0 = 1.
        s.on_ack(&ece(2, &[]), 50 * MS);
        assert_eq!((s.sk.ca_state, s.sk.ssthresh, s.high_seq, s.stats.ece_reductions), (CaState::Cwr, 5, 10, 1));
        assert_eq!(s.sk.cwnd, 9);
        assert_eq!(send_ecn(&mut s, 50 * MS), vec![(10, Ecn::Ect0, true)], "CWR on the first new segment");
        // More ECE within the window: no second reduction; PRR goes on:
        // ceil(5 x 4 / 10) - 1 = 1 more, and CWR is not repeated.
        s.on_ack(&ece(4, &[]), 51 * MS);
        assert_eq!((s.sk.ca_state, s.sk.ssthresh, s.stats.ece_reductions), (CaState::Cwr, 5, 1));
        assert_eq!(s.sk.cwnd, 8);
        assert_eq!(send_ecn(&mut s, 51 * MS), vec![(11, Ecn::Ect0, false)]);
        // Everything up to high_seq acknowledged: pipe 2 < ssthresh, PRR's slow-start bound
        // min(ssthresh - pipe, max(10 - 2, 6) + 1) = 3. Still CWR: Linux waits for an ACK
        // above high_seq (the CWR segment's).
        s.on_ack(&ece(10, &[]), 52 * MS);
        assert_eq!((s.sk.ca_state, s.sk.cwnd, s.stats.ece_reductions), (CaState::Cwr, 5, 1));
        assert_eq!(send_ecn(&mut s, 52 * MS).len(), 3);
        // The CWR segment is acknowledged (and the receiver stopped echoing): back to Open at
        // cwnd = ssthresh (tcp_end_cwnd_reduction), then congestion avoidance.
        s.on_ack(&ack(11, &[]), 53 * MS);
        assert_eq!((s.sk.ca_state, s.sk.cwnd, s.sk.cwnd_cnt), (CaState::Open, 5, 1));
        // A new ECE after the window: a second reduction, from 5 to 2.
        s.on_ack(&ece(12, &[]), 54 * MS);
        assert_eq!((s.sk.ca_state, s.sk.ssthresh, s.high_seq, s.stats.ece_reductions), (CaState::Cwr, 2, 15, 2));
        assert_eq!(send_ecn(&mut s, 54 * MS), vec![(15, Ecn::Ect0, true)]);
        assert_eq!(s.stats.fast_recoveries, 0);
        s.check_invariants().unwrap();
    }

    #[test]
    fn retransmissions_are_not_ect_unless_the_algorithm_needs_ecn_and_recovery_queues_cwr() {
        for (cc, retx_ecn) in [(newreno(), Ecn::NotEct), (Box::new(NeedsEcn(NewReno::new(NewRenoConfig::default()))) as _, Ecn::Ect0)] {
            let name = cc.name();
            let mut s = ecn_sender(10, cc);
            send_ecn(&mut s, 0);
            // 1-3 SACKed: 0 is lost, Recovery with ssthresh 5. PRR lets 2 out: the
            // retransmission of 0, then new segment 10, which carries the CWR queued on entering
            // Recovery.
            s.on_ack(&ack(0, &[(1, 4)]), 50 * MS);
            assert_eq!((s.sk.ca_state, s.sk.ssthresh), (CaState::Recovery, 5), "{name}");
            assert_eq!(send_ecn(&mut s, 50 * MS), vec![(0, retx_ecn, false), (10, Ecn::Ect0, true)], "{name}");
            assert_eq!(s.stats.ece_reductions, 0, "{name}");
        }
    }

    #[test]
    fn without_ecn_data_is_not_ect_and_ece_is_ignored() {
        let mut s = sender(10);
        assert!(send_ecn(&mut s, 0).iter().all(|&(_, e, c)| e == Ecn::NotEct && !c));
        s.on_ack(&ece(2, &[]), 50 * MS);
        assert_eq!((s.sk.ca_state, s.sk.cwnd, s.sk.delivered_ce, s.stats.ece_reductions), (CaState::Open, 12, 0, 0));
    }

    #[test]
    fn ece_in_recovery_is_ignored_and_recovery_from_ece_cwr_continues_the_reduction() {
        let mut s = ecn_sender(20, newreno());
        send_ecn(&mut s, 0);
        s.on_ack(&ece(1, &[]), 50 * MS);
        assert_eq!((s.sk.ca_state, s.sk.ssthresh, s.high_seq), (CaState::Cwr, 10, 20));
        let sent = send_ecn(&mut s, 50 * MS);
        assert_eq!(sent, vec![(20, Ecn::Ect0, true)]);
        // 1 is lost (2-4 SACKed): Recovery, but tcp_enter_recovery finds a reduction under
        // way: no new ssthresh (it would be 19 / 2 = 9), high_seq stays 20 (not 21).
        s.on_ack(&ece(1, &[(2, 5)]), 51 * MS);
        assert_eq!((s.sk.ca_state, s.sk.ssthresh, s.high_seq), (CaState::Recovery, 10, 20));
        assert_eq!((s.stats.fast_recoveries, s.stats.ece_reductions), (1, 1));
        // ECE in Recovery changes nothing; Recovery ends at high_seq with cwnd = ssthresh.
        s.on_ack(&ece(1, &[(2, 8)]), 52 * MS);
        assert_eq!((s.sk.ca_state, s.stats.ece_reductions), (CaState::Recovery, 1));
        send(&mut s, 52 * MS);
        // (Then congestion avoidance on the 13 newly delivered: 10 + 1.)
        s.on_ack(&ack(20, &[]), 90 * MS);
        assert_eq!((s.sk.ca_state, s.sk.ssthresh, s.sk.cwnd), (CaState::Open, 10, 11));
        s.check_invariants().unwrap();
    }

    /// NewReno with Linux's TCP_CONG_NEEDS_ECN flag (as DCTCP has).
    struct NeedsEcn(NewReno);

    impl CongestionControl for NeedsEcn {
        fn name(&self) -> &'static str {
            "newreno-needs-ecn"
        }
        fn ssthresh(&mut self, s: &mut SockState) -> u32 {
            self.0.ssthresh(s)
        }
        fn needs_ecn(&self) -> bool {
            true
        }
    }

    /// What `in_ack_event` saw: (snd_una, delivered, delivered_ce, flags) per call.
    type Seen = std::sync::Arc<std::sync::Mutex<Vec<(u32, u64, u64, u32)>>>;

    /// Records what `in_ack_event` sees.
    struct Probe(Seen);

    impl CongestionControl for Probe {
        fn name(&self) -> &'static str {
            "probe"
        }
        fn ssthresh(&mut self, s: &mut SockState) -> u32 {
            (s.cwnd / 2).max(2)
        }
        fn in_ack_event(&mut self, s: &mut SockState, flags: u32) {
            self.0.lock().unwrap().push((s.snd_una, s.delivered, s.delivered_ce, flags));
        }
    }

    #[test]
    fn in_ack_event_sees_the_new_snd_una_and_the_sacked_but_not_the_cumulatively_acked() {
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut s = ecn_sender(10, Box::new(Probe(seen.clone())));
        send(&mut s, 0);
        // 4 and 5 SACKed, 0 and 1 cumulatively acked, with ECE: Linux counts the SACKed in
        // tcp_sacktag_write_queue, before in_ack_event, the others in tcp_clean_rtx_queue.
        s.on_ack(&ece(2, &[(4, 6)]), 50 * MS);
        assert_eq!(seen.lock().unwrap()[0], (2, 2, 2, crate::cc::CA_ACK_ECE));
        assert_eq!((s.sk.delivered, s.sk.delivered_ce), (4, 4));
        s.on_ack(&ack(3, &[(4, 6)]), 51 * MS);
        assert_eq!(seen.lock().unwrap()[1], (3, 4, 4, 0));
        assert_eq!((s.sk.delivered, s.sk.delivered_ce), (5, 4));
    }
}
