//! The 802.11 DCF (basic access) on a line of stations.
//!
//! Stations 0..=hops stand in a line, one hop apart. Distances are in hops. A transmission:
//! - is received (decodable) up to `rx_reach` hops away;
//! - is sensed (carrier sense) up to `cs_reach` hops away;
//! - interferes up to `if_reach` hops away.
//! The defaults are 1, 2 and 2, so a station three hops from a sender does not hear it but
//! corrupts the receiver one hop beyond: the hidden terminal.
//!
//! Channel access:
//! - A station with a frame draws a backoff uniform in [0, CW] slots. It counts the slots down
//!   while the medium has been idle for DIFS, freezes the count while the medium is busy, and
//!   transmits when the count reaches 0.
//! - Stations whose countdowns end in the same slot transmit together and collide.
//! - The receiver ACKs a frame decoded without collision or random frame error after SIFS,
//!   at the basic rate. The ACK can itself collide.
//! - A missing ACK doubles CW up to CWmax, and a frame is dropped after `retry_limit`
//!   retries.
//! - Stations that decode a data frame set a NAV until its ACK ends.
//! - A successful frame resets CW and starts a new backoff (post-backoff).
//! - Duplicates of a frame whose ACK was lost are ACKed but not forwarded again.
//!
//! Each station has a drop-tail interface queue (Linux txqueuelen, 1000 packets by default)
//! and forwards along the line.
//!
//! Background traffic (the `indoor` environment): other networks' frames arrive as a Poisson
//! process occupying `load` of the airtime. Every station senses them and defers, and any
//! reception they overlap is lost. Added to that is a random frame error rate `fer`.
//!
//! Not modelled:
//! - path selection (HWMP) and its management traffic: routing is static;
//! - RTS/CTS;
//! - EIFS;
//! - rate adaptation;
//! - A-MPDU aggregation;
//! - capture: any overlap in reach corrupts.

use super::phy::Phy;
use crate::cc::{self, Params};
use crate::event::EventQueue;
use crate::metrics::FlowSummary;
use crate::rng::{self, Rng};
use crate::stats::jain_index;
use crate::tcp::receiver::Receiver;
use crate::tcp::sender::Sender;
use crate::tcp::{AckPkt, DataPkt, TcpConfig};
use crate::time::{to_secs, Time, MS, SEC};
use rand::Rng as _;
use serde::Serialize;
use std::collections::VecDeque;

/// IP + UDP header bytes of a UDP datagram.
pub const UDP_IP_HEADER: u32 = 28;

#[derive(Debug, Clone, PartialEq)]
pub struct WirelessConfig {
    pub hops: usize,
    pub phy: Phy,
    pub rx_reach: usize,
    pub cs_reach: usize,
    pub if_reach: usize,
    pub queue_pkts: usize,
    pub retry_limit: u32,
    /// Random frame error rate of data frames.
    pub fer: f64,
    /// Fraction of airtime taken by other networks' frames (0 = darkroom).
    pub background_load: f64,
    /// Airtime of one background frame.
    pub background_frame: Time,
}

impl WirelessConfig {
    pub fn new(hops: usize, phy: Phy) -> Self {
        WirelessConfig {
            hops,
            phy,
            rx_reach: 1,
            cs_reach: 2,
            if_reach: 2,
            queue_pkts: 1000,
            retry_limit: 7,
            fer: 0.0,
            background_load: 0.0,
            background_frame: 250 * crate::time::US,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum WFlowKind {
    /// Constant bit rate UDP: `pps` datagrams per second of `size` payload bytes.
    Udp { pps: f64, size: u32 },
    Tcp { cc: String, params: Params, tcp: TcpConfig, size: Option<u64> },
}

#[derive(Debug, Clone, PartialEq)]
pub struct WFlow {
    pub src: usize,
    pub dst: usize,
    pub start: Time,
    pub stop: Option<Time>,
    pub kind: WFlowKind,
}

#[derive(Debug, Clone, Copy)]
enum Payload {
    Udp,
    Data(DataPkt),
    Ack(AckPkt),
}

#[derive(Debug, Clone, Copy)]
struct Frame {
    id: u64,
    flow: u32,
    /// Final destination station.
    dst: usize,
    ip_bytes: u32,
    payload: Payload,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ev {
    Access(u32, u64),
    TxEnd(u32),
    AckStart(u32, u32, u64),
    AckTimeout(u32, u64),
    UdpGen(u32),
    FlowStart(u32),
    FlowStop(u32),
    Rto(u32),
    DelAck(u32),
    Pace(u32),
    Background,
    BackgroundEnd,
}

#[derive(Debug, Clone, Copy)]
struct Tx {
    from: usize,
    to: usize,
    /// Corrupted at the intended receiver.
    corrupted: bool,
    ack: bool,
    frame_id: u64,
}

impl Tx {
    fn new(from: usize, to: usize, corrupted: bool, ack: bool, frame_id: u64) -> Self {
        Tx { from, to, corrupted, ack, frame_id }
    }
}

#[derive(Debug, Default, Clone, Serialize)]
pub struct StationStats {
    pub station: usize,
    pub tx_attempts: u64,
    pub tx_success: u64,
    pub ack_timeouts: u64,
    pub retry_drops: u64,
    pub queue_drops: u64,
    pub collisions_at_rx: u64,
    pub frame_errors: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum St {
    Idle,
    Transmitting,
    WaitAck,
}

struct Station {
    queue: VecDeque<Frame>,
    state: St,
    backoff: Option<u32>,
    cw: u32,
    retries: u32,
    /// Transmissions it currently senses (excluding its own).
    busy: u32,
    idle_since: Time,
    nav_until: Time,
    access_at: Option<Time>,
    gen: u64,
    /// Last frame id received from each neighbour (duplicate suppression).
    last_rx: Vec<(usize, u64)>,
    /// Sending a MAC ACK (does not change its own frame's state).
    acking: bool,
    stats: StationStats,
}

struct Flow {
    src: usize,
    dst: usize,
    start: Time,
    stop: Time,
    udp: Option<(Time, u32)>,
    sender: Option<Sender>,
    receiver: Option<Receiver>,
    cc_name: &'static str,
    sent: u64,
    received: u64,
    bytes_received: u64,
    active: bool,
    ended_at: Option<Time>,
    rto_at: Option<Time>,
    delack_at: Option<Time>,
    pace_at: Option<Time>,
}

/// Per-flow results of a wireless run (UDP flows report sent/received/lost).
#[derive(Debug, Clone, Serialize)]
pub struct WFlowSummary {
    pub id: u32,
    pub kind: &'static str,
    pub src: usize,
    pub dst: usize,
    pub sent: u64,
    pub received: u64,
    pub lost: u64,
    pub loss_ratio: f64,
    pub throughput_mbps: f64,
    /// For TCP flows, the same fields as a dumbbell run.
    pub tcp: Option<FlowSummary>,
}

#[derive(Debug, Clone, Serialize)]
pub struct WirelessOutput {
    pub seed: u64,
    pub sim_seconds: f64,
    pub events: u64,
    pub wall_seconds: f64,
    pub flows: Vec<WFlowSummary>,
    pub total_throughput_mbps: f64,
    pub jain_index: f64,
    pub stations: Vec<StationStats>,
}

pub struct WirelessSim {
    cfg: WirelessConfig,
    now: Time,
    end: Time,
    q: EventQueue<Ev>,
    st: Vec<Station>,
    txs: Vec<Tx>,
    flows: Vec<Flow>,
    rng: Rng,
    bg_rng: Rng,
    bg_active: u32,
    next_id: u64,
    pub events: u64,
    seed: u64,
}

fn dist(a: usize, b: usize) -> usize {
    a.abs_diff(b)
}

impl WirelessSim {
    pub fn new(cfg: WirelessConfig, flows: &[WFlow], duration: Time, seed: u64) -> Self {
        let n = cfg.hops + 1;
        let st = (0..n)
            .map(|i| Station {
                queue: VecDeque::with_capacity(64),
                state: St::Idle,
                backoff: None,
                cw: cfg.phy.cw_min,
                retries: 0,
                busy: 0,
                idle_since: 0,
                nav_until: 0,
                access_at: None,
                gen: 0,
                last_rx: Vec::new(),
                acking: false,
                stats: StationStats { station: i, ..StationStats::default() },
            })
            .collect();
        let mut fl = Vec::new();
        let mut q = EventQueue::with_capacity(64);
        for (i, f) in flows.iter().enumerate() {
            let (udp, sender, receiver, cc_name) = match &f.kind {
                WFlowKind::Udp { pps, size } => (Some(((SEC as f64 / pps).round().max(1.0) as Time, *size)), None, None, "udp"),
                WFlowKind::Tcp { cc: name, params, tcp, size } => {
                    let algo = cc::build(name, params, rng::flow_stream(seed, i, rng::stream::CC));
                    let s = Sender::new(i as u32, tcp.clone(), *size, algo);
                    let offset = rng::flow_stream(seed, i, rng::stream::CLOCK).gen_range(0..1_000_000) * MS;
                    let r = Receiver::new(i as u32, tcp.mss, *size, tcp.delayed_ack, tcp.delack_timeout, tcp.ts_tick, offset, tcp.rwnd);
                    (None, Some(s), Some(r), cc::find(name).map(|a| a.name).unwrap_or("tcp"))
                }
            };
            fl.push(Flow {
                src: f.src,
                dst: f.dst,
                start: f.start,
                stop: f.stop.unwrap_or(duration),
                udp,
                sender,
                receiver,
                cc_name,
                sent: 0,
                received: 0,
                bytes_received: 0,
                active: false,
                ended_at: None,
                rto_at: None,
                delack_at: None,
                pace_at: None,
            });
            q.schedule(f.start, Ev::FlowStart(i as u32));
            if let Some(stop) = f.stop {
                q.schedule(stop, Ev::FlowStop(i as u32));
            }
        }
        let mut sim = WirelessSim {
            cfg,
            now: 0,
            end: duration,
            q,
            st,
            txs: Vec::with_capacity(8),
            flows: fl,
            rng: rng::derive(seed, rng::stream::BOTTLENECK_LOSS),
            bg_rng: rng::derive(seed, rng::stream::ACK_LOSS),
            bg_active: 0,
            next_id: 0,
            events: 0,
            seed,
        };
        if sim.cfg.background_load > 0.0 {
            let t = sim.bg_gap();
            sim.q.schedule(t, Ev::Background);
        }
        sim
    }

    fn bg_gap(&mut self) -> Time {
        // Poisson arrivals with rate load / frame_time.
        let mean = self.cfg.background_frame as f64 / self.cfg.background_load;
        let u: f64 = self.bg_rng.gen::<f64>().max(1e-12);
        (-u.ln() * mean) as Time
    }

    pub fn run_to_end(&mut self) {
        while let Some(t) = self.q.peek_time() {
            if t > self.end {
                break;
            }
            let (t, ev) = self.q.pop().unwrap();
            self.now = t;
            self.events += 1;
            self.handle(ev);
        }
        self.now = self.end;
    }

    fn handle(&mut self, ev: Ev) {
        let now = self.now;
        match ev {
            Ev::FlowStart(f) => {
                let fl = &mut self.flows[f as usize];
                fl.active = true;
                if fl.udp.is_some() {
                    self.q.schedule(now, Ev::UdpGen(f));
                } else if let Some(s) = fl.sender.as_mut() {
                    s.start(now);
                    self.tcp_send(f);
                }
            }
            Ev::FlowStop(f) => self.end_flow(f),
            Ev::UdpGen(f) => {
                let fl = &mut self.flows[f as usize];
                if !fl.active {
                    return;
                }
                let (gap, size) = fl.udp.unwrap();
                fl.sent += 1;
                let (src, dst) = (fl.src, fl.dst);
                let frame = self.frame(f, dst, size + UDP_IP_HEADER, Payload::Udp);
                self.enqueue(src, frame);
                if now + gap < self.flows[f as usize].stop {
                    self.q.schedule(now + gap, Ev::UdpGen(f));
                }
            }
            Ev::Access(i, gen) => {
                let s = &self.st[i as usize];
                if s.gen == gen && s.state == St::Idle && !s.acking && s.access_at == Some(now) {
                    self.transmit(i as usize);
                }
            }
            Ev::TxEnd(i) => self.tx_end(i as usize),
            Ev::AckStart(j, to, id) => self.start_tx(j as usize, to as usize, self.cfg.phy.ack_airtime(), true, id),
            Ev::AckTimeout(i, gen) => {
                let s = &self.st[i as usize];
                if s.gen == gen && s.state == St::WaitAck {
                    self.ack_timeout(i as usize);
                }
            }
            Ev::Rto(f) => {
                let fl = &mut self.flows[f as usize];
                if fl.rto_at == Some(now) {
                    fl.rto_at = None;
                }
                if fl.ended_at.is_none() {
                    if let Some(s) = fl.sender.as_mut() {
                        if s.rto_deadline.is_some_and(|d| d <= now) {
                            s.on_rto(now);
                            s.sk.events.clear();
                        }
                    }
                    self.tcp_send(f);
                }
            }
            Ev::DelAck(f) => {
                let fl = &mut self.flows[f as usize];
                if fl.delack_at == Some(now) {
                    fl.delack_at = None;
                }
                if let Some(r) = fl.receiver.as_mut() {
                    if r.delack_deadline.is_some_and(|d| d <= now) {
                        if let Some(a) = r.on_delack_timer(now) {
                            self.send_tcp_ack(f, a);
                        }
                    } else {
                        self.arm_delack(f);
                    }
                }
            }
            Ev::Pace(f) => {
                let fl = &mut self.flows[f as usize];
                if fl.pace_at == Some(now) {
                    fl.pace_at = None;
                }
                self.tcp_send(f);
            }
            Ev::Background => {
                // Another network's frame: every station senses it; any reception it overlaps
                // is lost.
                self.bg_active += 1;
                for t in self.txs.iter_mut() {
                    t.corrupted = true;
                }
                for i in 0..self.st.len() {
                    self.sense_busy(i);
                }
                let d = self.cfg.background_frame;
                self.q.schedule(now + d, Ev::BackgroundEnd);
                let gap = self.bg_gap();
                self.q.schedule(now + gap.max(1), Ev::Background);
            }
            Ev::BackgroundEnd => {
                self.bg_active -= 1;
                for i in 0..self.st.len() {
                    self.sense_idle(i);
                }
            }
        }
    }

    fn frame(&mut self, flow: u32, dst: usize, ip_bytes: u32, payload: Payload) -> Frame {
        self.next_id += 1;
        Frame { id: self.next_id, flow, dst, ip_bytes, payload }
    }

    fn next_hop(&self, at: usize, dst: usize) -> usize {
        if dst > at {
            at + 1
        } else {
            at - 1
        }
    }

    /// Put a frame in a station's interface queue (drop-tail) and start contending.
    fn enqueue(&mut self, i: usize, frame: Frame) {
        let s = &mut self.st[i];
        if s.queue.len() >= self.cfg.queue_pkts {
            s.stats.queue_drops += 1;
            return;
        }
        s.queue.push_back(frame);
        if s.queue.len() == 1 && s.state == St::Idle {
            self.contend(i);
        }
    }

    /// No transmission sensed (a NAV only delays the countdown's start, see `contend`).
    fn medium_idle(&self, i: usize) -> bool {
        self.st[i].busy == 0 && !self.st[i].acking
    }

    /// Stop a running countdown, keeping the slots already counted.
    fn freeze(&mut self, i: usize) {
        let (now, slot, difs) = (self.now, self.cfg.phy.slot, self.cfg.phy.difs());
        let s = &mut self.st[i];
        if s.access_at.take().is_some() {
            let t0 = s.idle_since.max(s.nav_until) + difs;
            if now > t0 {
                let consumed = ((now - t0) / slot) as u32;
                s.backoff = Some(s.backoff.unwrap_or(0).saturating_sub(consumed));
            }
            s.gen += 1;
        }
    }

    /// Start or resume the backoff countdown of station i if it has a frame and hears silence.
    fn contend(&mut self, i: usize) {
        let now = self.now;
        if self.st[i].queue.is_empty() || self.st[i].state != St::Idle {
            return;
        }
        if self.st[i].backoff.is_none() {
            let cw = self.st[i].cw;
            let b = self.rng.gen_range(0..=cw);
            self.st[i].backoff = Some(b);
        }
        if !self.medium_idle(i) {
            return; // resumes when the medium goes idle
        }
        let s = &mut self.st[i];
        // The countdown runs from DIFS after the medium went idle (or the NAV ended); a
        // backoff drawn while the medium had long been idle can therefore end at once.
        let t0 = s.idle_since.max(s.nav_until) + self.cfg.phy.difs();
        let at = (t0 + s.backoff.unwrap() as Time * self.cfg.phy.slot).max(now);
        s.gen += 1;
        s.access_at = Some(at);
        let gen = s.gen;
        self.q.schedule(at, Ev::Access(i as u32, gen));
    }

    /// Station i starts sensing one more transmission.
    fn sense_busy(&mut self, i: usize) {
        let now = self.now;
        let s = &mut self.st[i];
        s.busy += 1;
        if s.busy == 1 && s.state == St::Idle {
            if s.access_at == Some(now) {
                return; // it transmits in this same slot: a collision, not a deferral
            }
            self.freeze(i);
        }
    }

    fn sense_idle(&mut self, i: usize) {
        let now = self.now;
        let s = &mut self.st[i];
        s.busy -= 1;
        if s.busy == 0 {
            s.idle_since = now;
            self.contend(i);
        }
    }

    fn transmit(&mut self, i: usize) {
        let f = self.st[i].queue[0];
        let to = self.next_hop(i, f.dst);
        let d = self.cfg.phy.data_airtime(f.ip_bytes);
        let s = &mut self.st[i];
        s.access_at = None;
        s.backoff = None;
        s.stats.tx_attempts += 1;
        self.start_tx(i, to, d, false, f.id);
    }

    fn start_tx(&mut self, from: usize, to: usize, dur: Time, ack: bool, frame_id: u64) {
        let now = self.now;
        // Interference: this transmission corrupts receptions in progress at receivers within
        // if_reach (including a receiver that is itself this sender: half duplex).
        for t in self.txs.iter_mut() {
            if dist(from, t.to) <= self.cfg.if_reach {
                t.corrupted = true;
            }
        }
        // And it is itself corrupted by transmissions already on the air near its receiver, by
        // its receiver transmitting, and by background frames.
        let corrupted = self.bg_active > 0 || self.txs.iter().any(|t| dist(t.from, to) <= self.cfg.if_reach);
        self.txs.push(Tx::new(from, to, corrupted, ack, frame_id));
        if ack {
            self.st[from].acking = true;
        } else {
            self.st[from].state = St::Transmitting;
        }
        for s in 0..self.st.len() {
            if s != from && dist(s, from) <= self.cfg.cs_reach {
                self.sense_busy(s);
            }
        }
        self.q.schedule(now + dur, Ev::TxEnd(from as u32));
    }

    fn tx_end(&mut self, from: usize) {
        let now = self.now;
        let k = self.txs.iter().position(|t| t.from == from).expect("a transmission in progress");
        let tx = self.txs.swap_remove(k);
        for s in 0..self.st.len() {
            if s != from && dist(s, from) <= self.cfg.cs_reach {
                self.sense_idle(s);
            }
        }
        let phy = self.cfg.phy.clone();
        if tx.ack {
            // The ACK's sender goes back to its own business (contending, or waiting for an
            // ACK of its own).
            self.st[from].acking = false;
            let ok = !tx.corrupted;
            let i = tx.to;
            if ok && self.st[i].state == St::WaitAck && self.st[i].queue.front().map(|f| f.id) == Some(tx.frame_id) {
                self.ack_received(i);
            }
            self.contend(from);
            return;
        }
        // A data frame: the sender now waits for the ACK.
        self.st[from].state = St::WaitAck;
        self.st[from].gen += 1;
        let gen = self.st[from].gen;
        self.q.schedule(now + phy.ack_timeout(), Ev::AckTimeout(from as u32, gen));
        // Stations that decode it (within rx_reach, not the receiver) defer until its ACK ends:
        // their countdown restarts DIFS after the NAV.
        let nav = now + phy.sifs + phy.ack_airtime();
        let mut deferred = Vec::new();
        for s in 0..self.st.len() {
            if s != from && s != tx.to && dist(s, from) <= self.cfg.rx_reach && self.st[s].nav_until < nav {
                self.freeze(s);
                self.st[s].nav_until = nav;
                deferred.push(s);
            }
        }
        let j = tx.to;
        let mut ok = !tx.corrupted && self.st[j].state != St::Transmitting;
        if tx.corrupted {
            self.st[j].stats.collisions_at_rx += 1;
        } else if self.cfg.fer > 0.0 && self.rng.gen::<f64>() < self.cfg.fer {
            self.st[j].stats.frame_errors += 1;
            ok = false;
        }
        if ok {
            self.q.schedule(now + phy.sifs, Ev::AckStart(j as u32, from as u32, tx.frame_id));
            let frame = *self.st[from].queue.front().expect("the frame being sent");
            let dup = self.st[j].last_rx.iter().any(|&(n, id)| n == from && id == frame.id);
            if !dup {
                match self.st[j].last_rx.iter_mut().find(|(n, _)| *n == from) {
                    Some(e) => e.1 = frame.id,
                    None => self.st[j].last_rx.push((from, frame.id)),
                }
                self.arrive(j, frame);
            }
        }
        for s in deferred {
            self.contend(s);
        }
    }

    fn ack_received(&mut self, i: usize) {
        let cw_min = self.cfg.phy.cw_min;
        let s = &mut self.st[i];
        s.queue.pop_front();
        s.state = St::Idle;
        s.cw = cw_min;
        s.retries = 0;
        s.backoff = None;
        s.idle_since = self.now;
        s.gen += 1;
        s.stats.tx_success += 1;
        // Post-backoff: a new backoff is drawn even if the queue is empty (drawn when a frame
        // arrives, from the current CW).
        self.contend(i);
    }

    fn ack_timeout(&mut self, i: usize) {
        let (cw_min, cw_max, limit) = (self.cfg.phy.cw_min, self.cfg.phy.cw_max, self.cfg.retry_limit);
        let s = &mut self.st[i];
        s.stats.ack_timeouts += 1;
        s.state = St::Idle;
        s.retries += 1;
        if s.retries > limit {
            s.queue.pop_front();
            s.stats.retry_drops += 1;
            s.retries = 0;
            s.cw = cw_min;
        } else {
            s.cw = (2 * (s.cw + 1) - 1).min(cw_max);
        }
        s.backoff = None;
        s.idle_since = s.idle_since.max(self.now - self.cfg.phy.ack_timeout());
        self.contend(i);
    }

    /// A frame reached station j: deliver it or forward it.
    fn arrive(&mut self, j: usize, frame: Frame) {
        if frame.dst != j {
            self.enqueue(j, frame);
            return;
        }
        let now = self.now;
        let f = frame.flow;
        match frame.payload {
            Payload::Udp => {
                let fl = &mut self.flows[f as usize];
                fl.received += 1;
                fl.bytes_received += (frame.ip_bytes - UDP_IP_HEADER) as u64;
            }
            Payload::Data(p) => {
                let fl = &mut self.flows[f as usize];
                if let Some(r) = fl.receiver.as_mut() {
                    match r.on_data(&p, now) {
                        Some(a) => self.send_tcp_ack(f, a),
                        None => self.arm_delack(f),
                    }
                }
            }
            Payload::Ack(a) => {
                let fl = &mut self.flows[f as usize];
                if fl.ended_at.is_none() {
                    if let Some(s) = fl.sender.as_mut() {
                        s.on_ack(&a, now);
                        s.sk.events.clear();
                        if s.completed_at.is_some() {
                            self.end_flow(f);
                            return;
                        }
                    }
                    self.tcp_send(f);
                }
            }
        }
    }

    fn send_tcp_ack(&mut self, f: u32, a: AckPkt) {
        let fl = &self.flows[f as usize];
        let (dst, src) = (fl.src, fl.dst);
        let frame = self.frame(f, dst, crate::tcp::ACK_BYTES, Payload::Ack(a));
        self.enqueue(src, frame);
    }

    fn arm_delack(&mut self, f: u32) {
        let fl = &mut self.flows[f as usize];
        if let Some(d) = fl.receiver.as_ref().and_then(|r| r.delack_deadline) {
            if fl.delack_at.map_or(true, |t| t > d) {
                fl.delack_at = Some(d);
                self.q.schedule(d, Ev::DelAck(f));
            }
        }
    }

    fn tcp_send(&mut self, f: u32) {
        let now = self.now;
        loop {
            let fl = &mut self.flows[f as usize];
            let Some(s) = fl.sender.as_mut() else { return };
            if !s.active || s.sk.packets_in_flight() >= s.sk.cwnd {
                break;
            }
            let gate = s.pacing_gate(now);
            if gate > now {
                if fl.pace_at.map_or(true, |t| t > gate) {
                    fl.pace_at = Some(gate);
                    self.q.schedule(gate, Ev::Pace(f));
                }
                break;
            }
            match s.next_packet(now) {
                Some(p) => {
                    let (src, dst) = (fl.src, fl.dst);
                    let frame = self.frame(f, dst, p.wire_bytes(), Payload::Data(p));
                    self.enqueue(src, frame);
                }
                None => break,
            }
        }
        let fl = &mut self.flows[f as usize];
        if let Some(d) = fl.sender.as_ref().and_then(|s| s.rto_deadline) {
            if fl.rto_at.map_or(true, |t| t > d) {
                fl.rto_at = Some(d);
                self.q.schedule(d, Ev::Rto(f));
            }
        }
    }

    fn end_flow(&mut self, f: u32) {
        let now = self.now;
        let fl = &mut self.flows[f as usize];
        if fl.ended_at.is_none() {
            fl.ended_at = Some(now);
            fl.active = false;
            if let Some(s) = fl.sender.as_mut() {
                s.stop();
            }
        }
    }

    pub fn output(&self, wall_seconds: f64) -> WirelessOutput {
        let mut flows = Vec::new();
        for (i, fl) in self.flows.iter().enumerate() {
            let end = fl.ended_at.unwrap_or(self.end).min(fl.stop).max(fl.start);
            let secs = to_secs(end - fl.start).max(1e-9);
            let (kind, sent, received, bytes, tcp) = match (&fl.sender, &fl.receiver) {
                (Some(s), Some(r)) => {
                    let thr = s.stats.bytes_acked as f64 * 8.0 / secs / 1e6;
                    let st = &s.stats;
                    let fs = FlowSummary {
                        id: i as u32,
                        group: 0,
                        cc: fl.cc_name.to_string(),
                        start_s: to_secs(fl.start),
                        end_s: to_secs(end),
                        throughput_mbps: thr,
                        bytes_acked: st.bytes_acked,
                        bytes_sent: st.bytes_sent,
                        bytes_delivered: r.bytes_delivered,
                        segments_sent: st.segments_sent,
                        segments_delivered: r.segments_delivered,
                        retransmits: st.retransmits,
                        rto_count: st.rto_count,
                        fast_recoveries: st.fast_recoveries,
                        rtt_min_ms: if st.rtt.n > 0 { st.rtt.min / 1e6 } else { f64::NAN },
                        rtt_mean_ms: st.rtt.mean() / 1e6,
                        rtt_p95_ms: st.rtt_hist.quantile(0.95) / 1e6,
                        cwnd_final_pkts: s.sk.cwnd,
                        cwnd_final_bytes: s.sk.cwnd as u64 * s.cfg.mss as u64,
                        completed: s.completed_at.is_some(),
                        completion_s: s.completed_at.map(to_secs),
                    };
                    ("tcp", st.segments_sent, r.segments_delivered, st.bytes_acked, Some(fs))
                }
                _ => ("udp", fl.sent, fl.received, fl.bytes_received, None),
            };
            flows.push(WFlowSummary {
                id: i as u32,
                kind,
                src: fl.src,
                dst: fl.dst,
                sent,
                received,
                lost: sent.saturating_sub(received),
                loss_ratio: if sent > 0 { sent.saturating_sub(received) as f64 / sent as f64 } else { 0.0 },
                throughput_mbps: bytes as f64 * 8.0 / secs / 1e6,
                tcp,
            });
        }
        let thr: Vec<f64> = flows.iter().map(|f| f.throughput_mbps).collect();
        WirelessOutput {
            seed: self.seed,
            sim_seconds: to_secs(self.end),
            events: self.events,
            wall_seconds,
            total_throughput_mbps: thr.iter().sum(),
            jain_index: jain_index(&thr),
            flows,
            stations: self.st.iter().map(|s| s.stats.clone()).collect(),
        }
    }

    /// Frames still queued or in flight at the end (for conservation checks).
    pub fn queued(&self) -> usize {
        self.st.iter().map(|s| s.queue.len()).sum()
    }
}

pub fn run_wireless(cfg: WirelessConfig, flows: &[WFlow], duration: Time, seed: u64) -> WirelessOutput {
    let mut sim = WirelessSim::new(cfg, flows, duration, seed);
    let t0 = std::time::Instant::now();
    sim.run_to_end();
    sim.output(t0.elapsed().as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::SEC;
    use crate::wireless::phy;

    fn udp(src: usize, dst: usize, pps: f64) -> WFlow {
        WFlow { src, dst, start: 0, stop: None, kind: WFlowKind::Udp { pps, size: 1470 } }
    }

    fn total_collisions(out: &WirelessOutput) -> u64 {
        out.stations.iter().map(|s| s.collisions_at_rx).sum()
    }

    /// Bianchi's model for one saturated station: payload / (DIFS + mean backoff + data +
    /// SIFS + ACK), mean backoff = CWmin / 2 slots.
    #[test]
    fn one_saturated_station_reaches_bianchis_throughput() {
        for p in [phy::ieee80211g(), phy::ieee80211n_20mhz()] {
            let ip = 1470 + UDP_IP_HEADER;
            let cycle = p.difs() as f64 + p.cw_min as f64 / 2.0 * p.slot as f64 + p.data_airtime(ip) as f64 + p.sifs as f64 + p.ack_airtime() as f64;
            let model = 1470.0 * 8.0 / (cycle / 1e9) / 1e6;
            let out = run_wireless(WirelessConfig::new(1, p.clone()), &[udp(0, 1, 20_000.0)], 20 * SEC, 1);
            let thr = out.flows[0].throughput_mbps;
            assert!((thr / model - 1.0).abs() < 0.05, "{}: {thr} Mbps vs Bianchi {model}", p.name);
            assert_eq!(total_collisions(&out), 0);
        }
    }

    /// Bianchi (2000): collision probability p of n saturated stations, from the fixed point
    /// tau = 2(1 - 2p) / ((1 - 2p)(W + 1) + p W (1 - (2p)^m)), p = 1 - (1 - tau)^(n - 1).
    fn bianchi_p(n: u32, cw_min: u32, cw_max: u32) -> f64 {
        let w = (cw_min + 1) as f64;
        let m = (((cw_max + 1) / (cw_min + 1)) as f64).log2();
        let (mut lo, mut hi) = (0.0f64, 0.4999f64);
        for _ in 0..100 {
            let p = (lo + hi) / 2.0;
            let tau = 2.0 * (1.0 - 2.0 * p) / ((1.0 - 2.0 * p) * (w + 1.0) + p * w * (1.0 - (2.0 * p).powf(m)));
            let p2 = 1.0 - (1.0 - tau).powi(n as i32 - 1);
            if p2 > p {
                lo = p;
            } else {
                hi = p;
            }
        }
        (lo + hi) / 2.0
    }

    /// Senders at both ends of a 3-hop line (0 -> 1 and 3 -> 2): 3 is three hops from 0, so it
    /// does not sense 0, but it is two hops from 0's receiver and corrupts its frames. When all
    /// stations sense each other, the hidden-terminal collisions vanish: what remains is DCF's
    /// own contention (two stations ending their backoff in the same slot), as Bianchi predicts.
    #[test]
    fn hidden_terminals_collide_and_vanish_when_everyone_senses_everyone() {
        let flows = [udp(0, 1, 1500.0), udp(3, 2, 1500.0)];
        let g = phy::ieee80211g();
        let hidden = run_wireless(WirelessConfig::new(3, g.clone()), &flows, 10 * SEC, 1);
        let mut all = WirelessConfig::new(3, g.clone());
        all.cs_reach = 3;
        let sensed = run_wireless(all, &flows, 10 * SEC, 1);
        let frac = |o: &WirelessOutput| o.stations[0].ack_timeouts as f64 / o.stations[0].tx_attempts as f64;
        let contention = bianchi_p(2, g.cw_min, g.cw_max);
        assert!(frac(&hidden) > 2.5 * contention, "hidden: {} vs contention {contention}", frac(&hidden));
        assert!(hidden.stations[0].retry_drops > 0 && hidden.stations[3].retry_drops > 0);
        assert!((frac(&sensed) / contention - 1.0).abs() < 0.25, "sensed: {} vs Bianchi {contention}", frac(&sensed));
        assert_eq!(sensed.stations[0].retry_drops + sensed.stations[3].retry_drops, 0);
        assert!(total_collisions(&sensed) * 2 < total_collisions(&hidden));
    }

    #[test]
    fn udp_cbr_saturates_with_hops_and_loses_from_two_hops_on() {
        let run = |hops: usize, pps: f64| {
            let out = run_wireless(WirelessConfig::new(hops, phy::ieee80211g()), &[udp(0, hops, pps)], 10 * SEC, 1);
            (out.flows[0].throughput_mbps, out.flows[0].loss_ratio)
        };
        for hops in 1..=4 {
            let rates = [200.0, 500.0, 1000.0, 4000.0, 8000.0];
            let thr: Vec<f64> = rates.iter().map(|&r| run(hops, r).0).collect();
            // Below saturation the line carries the offered load...
            assert!((thr[0] / (200.0 * 1470.0 * 8.0 / 1e6) - 1.0).abs() < 0.02, "{hops} hops: {thr:?}");
            // ...then throughput stops rising (4000 and 8000 pps are past saturation for any
            // hop count), at a capacity that falls with the hop count.
            assert!(thr[4] < 1.02 * thr[3] && thr[3] > thr[2] * 0.99, "{hops} hops: {thr:?}");
        }
        assert!(run(1, 4000.0).0 > run(2, 4000.0).0 && run(2, 4000.0).0 > run(3, 4000.0).0);
        // Loss: none for one hop below saturation; present from two hops on at higher rates.
        assert_eq!(run(1, 2000.0).1, 0.0);
        assert!(run(2, 2000.0).1 > 0.1);
        assert!(run(3, 1000.0).1 > 0.0);
    }

    #[test]
    fn tcp_over_the_line_conserves_bytes() {
        for cc in ["cubic", "bbr", "newreno"] {
            let p = Params::defaults(crate::cc::find(cc).unwrap().params);
            let flow = WFlow {
                src: 0,
                dst: 4,
                start: 0,
                stop: None,
                kind: WFlowKind::Tcp { cc: cc.into(), params: p, tcp: TcpConfig::default(), size: Some(2_000_000) },
            };
            let out = run_wireless(WirelessConfig::new(4, phy::ieee80211n_20mhz()), &[flow], 60 * SEC, 3);
            let t = out.flows[0].tcp.as_ref().unwrap();
            assert!(t.completed, "{cc} did not complete over 4 hops");
            assert_eq!(t.bytes_delivered, 2_000_000, "{cc}: every byte exactly once");
            assert!(t.throughput_mbps > 1.0, "{cc}: {}", t.throughput_mbps);
        }
    }

    #[test]
    fn same_seed_same_result() {
        let flows = [udp(0, 3, 1200.0), udp(3, 0, 300.0)];
        let mut cfg = WirelessConfig::new(3, phy::ieee80211g());
        cfg.fer = 0.05;
        cfg.background_load = 0.2;
        let a = serde_json::to_value(run_wireless(cfg.clone(), &flows, 5 * SEC, 9)).unwrap();
        let b = serde_json::to_value(run_wireless(cfg.clone(), &flows, 5 * SEC, 9)).unwrap();
        let c = serde_json::to_value(run_wireless(cfg, &flows, 5 * SEC, 10)).unwrap();
        let strip = |mut v: serde_json::Value| {
            v.as_object_mut().unwrap().remove("wall_seconds");
            v
        };
        assert_eq!(strip(a.clone()), strip(b));
        assert_ne!(strip(a)["flows"], strip(c)["flows"]);
    }
}
