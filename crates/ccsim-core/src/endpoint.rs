//! A TCP flow's two ends as a run loop drives them: the [`Sender`] and [`Receiver`] with their
//! lazy timers (RTO, RACK, delayed ACK, pacing), the send loop (cwnd, receive window and pacing
//! gate, ending with Linux's tcp_cwnd_validate), ACK and data arrival, and the hand-off of the
//! algorithm's events to the run's event log. The run loop ([`crate::sim`], for every network:
//! links, media, the 802.11 line) drives its TCP flows through [`Driver`]: it supplies only its
//! event type, how a segment or an ACK leaves the host, and how a flow ends.

use crate::cc::{self, Params};
use crate::event::EventQueue;
use crate::metrics::EventLog;
use crate::rng;
use crate::tcp::receiver::{EcnEcho, Receiver};
use crate::tcp::sender::Sender;
use crate::tcp::{AckPkt, DataPkt, TcpConfig};
use crate::time::{Time, MS};
use rand::Rng as _;

/// A flow's timers, each a lazy deadline with at most one pending event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timer {
    /// The sender's retransmission timer (`Sender::rto_deadline`).
    Rto,
    /// The sender's RACK reordering timer (`Sender::rack_deadline`).
    Rack,
    /// The receiver's delayed-ACK timer (`Receiver::delack_deadline`).
    DelAck,
    /// The sender's pacing gate.
    Pace,
}

/// A run loop's event type names each flow timer's event.
pub(crate) trait TimerEvent: Copy + Default {
    fn timer(t: Timer, flow: u32) -> Self;
}

/// One TCP connection: its sender and its receiver (each keeps the earliest pending event of
/// its timers beside the timer's deadline).
pub struct Endpoint {
    pub cc_name: &'static str,
    /// The algorithm needs ECN (Linux `TCP_CONG_NEEDS_ECN`) but the connection has none: it
    /// runs its fallback (DCTCP: Reno, as Linux's `dctcp_init` does when ECN is not
    /// negotiated). The run's summary warns.
    pub ecn_fallback: bool,
    pub sender: Sender,
    pub receiver: Receiver,
}

impl Endpoint {
    /// Flow `i` of a run with `seed`: its algorithm draws from the flow's CC stream; the
    /// receiver's timestamp clock runs with an arbitrary offset (the flow's CLOCK stream) from
    /// the sender's.
    pub fn new(i: usize, seed: u64, cc_name: &str, params: &Params, tcp: &TcpConfig, size: Option<u64>) -> Endpoint {
        let cc_rng = rng::flow_stream(seed, i, rng::stream::CC);
        let mut clock_rng = rng::flow_stream(seed, i, rng::stream::CLOCK);
        let algo = cc::build(cc_name, params, cc_rng, i);
        let offset: Time = clock_rng.gen_range(0..1_000_000) * MS;
        let ecn_fallback = algo.needs_ecn() && !tcp.ecn;
        let echo = match (tcp.ecn, algo.needs_ecn()) {
            (false, _) => EcnEcho::Off,
            (true, false) => EcnEcho::Classic,
            (true, true) => EcnEcho::Precise,
        };
        let sender = Sender::new(i as u32, tcp.clone(), size, algo);
        let receiver = Receiver::new(i as u32, tcp.mss, size, tcp.delayed_ack, tcp.delack_timeout, tcp.ts_tick, offset, tcp.rwnd, echo);
        Endpoint {
            cc_name: cc::find(cc_name).map(|a| a.name).expect("validated algorithm"),
            ecn_fallback,
            sender,
            receiver,
        }
    }

    pub fn heap_bytes(&self) -> usize {
        self.sender.heap_bytes() + self.receiver.heap_bytes()
    }

    fn pending(&mut self, t: Timer) -> &mut Option<Time> {
        match t {
            Timer::Rto => &mut self.sender.rto_event_at,
            Timer::Rack => &mut self.sender.rack_event_at,
            Timer::DelAck => &mut self.receiver.delack_event_at,
            Timer::Pace => &mut self.sender.pace_event_at,
        }
    }

    fn deadline(&self, t: Timer) -> Option<Time> {
        match t {
            Timer::Rto => self.sender.rto_deadline,
            Timer::Rack => self.sender.rack_deadline,
            Timer::DelAck => self.receiver.delack_deadline,
            Timer::Pace => None,
        }
    }

    /// Timers are lazy: a deadline may move without cancelling events. Schedule an event only
    /// when none is pending at or before the deadline; a handler that fires early re-arms.
    fn ensure<E: TimerEvent>(&mut self, q: &mut EventQueue<E>, f: u32, t: Timer) {
        if let Some(d) = self.deadline(t) {
            let pending = self.pending(t);
            if pending.map_or(true, |p| p > d) {
                *pending = Some(d);
                q.schedule(d, E::timer(t, f));
            }
        }
    }
}

/// What a run loop lends a flow's handlers: its endpoint, the event queue and the run's
/// algorithm-event log.
pub(crate) struct Parts<'a, E> {
    pub ep: &'a mut Endpoint,
    pub q: &'a mut EventQueue<E>,
    pub log: &'a mut EventLog,
}

/// A run loop that drives TCP flows. It supplies the required methods; the provided ones are
/// the flows' behaviour, the same in every loop.
pub(crate) trait Driver {
    type Ev: TimerEvent;

    fn now(&self) -> Time;
    /// Flow `f`'s endpoint (a TCP flow) with the queue and log.
    fn parts(&mut self, f: u32) -> Parts<'_, Self::Ev>;
    /// Whether flow `f` has ended (stopped or completed): its sender then ignores ACKs and
    /// timers.
    fn ended(&self, f: u32) -> bool;
    /// End flow `f` now (its transfer completed).
    fn end_flow(&mut self, f: u32);
    /// A data segment leaves the flow's sender.
    fn send_data(&mut self, pkt: DataPkt);
    /// An ACK leaves the flow's receiver.
    fn send_ack(&mut self, ack: AckPkt);

    /// The flow starts: the algorithm's init, then whatever it may send.
    fn start_flow(&mut self, f: u32) {
        let now = self.now();
        self.parts(f).ep.sender.start(now);
        self.try_send(f);
    }

    /// Send whatever cwnd, the receive window and the pacer allow now (tcp_write_xmit).
    fn try_send(&mut self, f: u32) {
        let now = self.now();
        let mut sent = 0;
        loop {
            let Parts { ep, q, .. } = self.parts(f);
            if !ep.sender.active || ep.sender.sk.packets_in_flight() >= ep.sender.sk.cwnd {
                break;
            }
            let gate = ep.sender.pacing_gate(now);
            if gate > now {
                if ep.sender.pace_event_at.map_or(true, |t| t > gate) {
                    ep.sender.pace_event_at = Some(gate);
                    q.schedule(gate, Self::Ev::timer(Timer::Pace, f));
                }
                break;
            }
            match ep.sender.next_packet(now) {
                Some(pkt) => {
                    sent += 1;
                    self.send_data(pkt);
                }
                None => break,
            }
        }
        let Parts { ep, q, .. } = self.parts(f);
        ep.ensure(q, f, Timer::Rack);
        // tcp_write_xmit ends with tcp_cwnd_validate when it sent or was cwnd-limited.
        let s = &mut ep.sender;
        if s.active {
            let limited = s.sk.packets_in_flight() >= s.sk.cwnd;
            if sent > 0 || limited {
                s.cwnd_validate(limited);
            }
        }
        ep.ensure(q, f, Timer::Rto);
    }

    /// A timer event of flow `f` (it may be early: a lazy timer's deadline can move later).
    fn on_timer(&mut self, f: u32, t: Timer) {
        let now = self.now();
        let ended = self.ended(f);
        let Parts { ep, q, .. } = self.parts(f);
        let pending = ep.pending(t);
        if *pending == Some(now) {
            *pending = None;
        }
        match t {
            Timer::Rto | Timer::Rack => {
                if ended {
                    return;
                }
                if ep.deadline(t).is_some_and(|d| d <= now) {
                    match t {
                        Timer::Rto => ep.sender.on_rto(now),
                        _ => ep.sender.on_rack_timer(now),
                    }
                    self.drain_cc_events(f);
                    self.try_send(f);
                }
                let Parts { ep, q, .. } = self.parts(f);
                ep.ensure(q, f, t);
            }
            Timer::DelAck => {
                if let Some(d) = ep.receiver.delack_deadline {
                    if d <= now {
                        if let Some(ack) = ep.receiver.on_delack_timer(now) {
                            self.send_ack(ack);
                        }
                    } else {
                        ep.ensure(q, f, t);
                    }
                }
            }
            Timer::Pace => self.try_send(f),
        }
    }

    /// A data segment reaches the flow's receiver: it ACKs now (DCTCP's receiver may first
    /// send the ACK it was delaying) or arms its delayed ACK.
    fn data_arrives(&mut self, pkt: &DataPkt) {
        let now = self.now();
        let f = pkt.flow;
        let Parts { ep, q, .. } = self.parts(f);
        let acks = ep.receiver.on_data(pkt, now);
        if acks.ack.is_none() {
            ep.ensure(q, f, Timer::DelAck);
        }
        if let Some(prior) = acks.prior {
            self.send_ack(prior);
        }
        if let Some(ack) = acks.ack {
            self.send_ack(ack);
        }
    }

    /// An ACK reaches the flow's sender (ignored once the flow ended).
    fn ack_arrives(&mut self, ack: &AckPkt) {
        let now = self.now();
        let f = ack.flow;
        if self.ended(f) {
            return;
        }
        self.parts(f).ep.sender.on_ack(ack, now);
        self.drain_cc_events(f);
        if self.parts(f).ep.sender.completed_at.is_some() {
            self.end_flow(f);
        } else {
            self.try_send(f);
        }
    }

    /// Move the events flow `f`'s algorithm recorded into the run's event log.
    fn drain_cc_events(&mut self, f: u32) {
        let Parts { ep, log, .. } = self.parts(f);
        if !ep.sender.sk.events.is_empty() {
            for e in ep.sender.sk.events.drain(..) {
                log.push(f, ep.cc_name, e);
            }
        }
    }
}
