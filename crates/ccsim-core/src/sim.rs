//! The dumbbell and the run loop.
//!
//! Topology: each flow's sender has its own access link (rate, one-way delay, unlimited queue)
//! to the router; the router's output is the bottleneck (rate, one-way delay, drop-tail buffer,
//! Bernoulli loss on data packets as they arrive at the far end, after using link time, like a
//! corrupted frame); one receiver sits behind it. ACKs return over an uncongested reverse path
//! with the same propagation delays (bottleneck delay + the flow's access delay) and no
//! serialisation; `ack_loss` drops ACKs at random.

use crate::cc;
use crate::event::{Event, EventQueue};
use crate::metrics::{BottleneckSummary, EventLog, FlowSummary, RunOutput, Summary, TimeSeries};
use crate::net::{DelayLine, Link, Offer, QueueLimit};
use crate::rng::{self, Rng};
use crate::scenario::Scenario;
use crate::stats::{jain_index, Histogram, Running};
use crate::tcp::receiver::Receiver;
use crate::tcp::sender::Sender;
use crate::tcp::{AckPkt, DataPkt};
use crate::time::{to_ms, to_secs, Time, MS};
use rand::Rng as _;

struct Flow {
    cc_name: &'static str,
    sender: Sender,
    receiver: Receiver,
    access: Link<DataPkt>,
    acks: DelayLine<AckPkt>,
    start: Time,
    stop: Time,
    /// When the flow's connection time ended (stop, completion or end of run).
    ended_at: Option<Time>,
    rto_event_at: Option<Time>,
    delack_event_at: Option<Time>,
    pace_event_at: Option<Time>,
    rack_event_at: Option<Time>,
    /// (bytes acked, packets delivered) at the last sample.
    last_sample: (u64, u64),
}

pub struct Sim {
    pub now: Time,
    end: Time,
    q: EventQueue,
    flows: Vec<Flow>,
    bn: Link<DataPkt>,
    loss: f64,
    ack_loss: f64,
    loss_rng: Rng,
    ack_loss_rng: Rng,
    qdelay_hist: Histogram,
    qdelay: Running,
    sample_interval: Time,
    /// Whether time-series rows are recorded (and sampling events scheduled).
    timeseries: bool,
    pub ts: TimeSeries,
    /// Algorithm events (RTprop updates, forced expiry, ...).
    pub events: EventLog,
    pub event_count: u64,
    seed: u64,
    name: Option<String>,
}

/// Timers are lazy: a deadline may move without cancelling events. Schedule an event only when
/// none is pending at or before the deadline; a handler that fires early re-arms.
fn ensure_timer(q: &mut EventQueue, deadline: Option<Time>, pending: &mut Option<Time>, ev: Event) {
    if let Some(d) = deadline {
        if pending.map_or(true, |t| t > d) {
            *pending = Some(d);
            q.schedule(d, ev);
        }
    }
}

fn cc_static_name(name: &str) -> &'static str {
    cc::find(name).map(|a| a.name).expect("validated algorithm")
}

impl Sim {
    /// A run of `sc` with `seed` that records a time series (see [`Sim::with_timeseries`]).
    pub fn new(sc: &Scenario, seed: u64) -> Sim {
        Sim::with_timeseries(sc, seed, true)
    }

    /// A run of `sc` with `seed`; with `timeseries` false no sampling event is scheduled and no
    /// row recorded. Sampling only reads state, so everything else is the same either way; the
    /// event count includes the sampling ticks in both cases (see [`Sim::events`]).
    pub fn with_timeseries(sc: &Scenario, seed: u64, timeseries: bool) -> Sim {
        let b = &sc.bottleneck;
        let limit = match (b.buffer_pkts, b.buffer_bytes) {
            (Some(p), _) => QueueLimit::Packets(p),
            (None, Some(by)) => QueueLimit::Bytes(by),
            _ => QueueLimit::Unlimited,
        };
        let mut flows = Vec::with_capacity(sc.flows.len());
        for (i, fc) in sc.flows.iter().enumerate() {
            let cc_rng = rng::flow_stream(seed, i, rng::stream::CC);
            let mut clock_rng = rng::flow_stream(seed, i, rng::stream::CLOCK);
            let algo = cc::build(&fc.cc, &fc.params, cc_rng);
            let sender = Sender::new(i as u32, fc.tcp.clone(), fc.size, algo);
            // The receiver's timestamp clock runs with an arbitrary offset from the sender's.
            let offset: Time = clock_rng.gen_range(0..1_000_000) * MS;
            let receiver =
                Receiver::new(i as u32, fc.tcp.mss, fc.size, fc.tcp.delayed_ack, fc.tcp.delack_timeout, fc.tcp.ts_tick, offset, fc.tcp.rwnd);
            flows.push(Flow {
                cc_name: cc_static_name(&fc.cc),
                sender,
                receiver,
                access: Link::new(fc.access_rate_bps, fc.access_delay, QueueLimit::Unlimited),
                acks: DelayLine::new(b.delay + fc.access_delay),
                start: fc.start,
                stop: fc.stop.unwrap_or(sc.duration),
                ended_at: None,
                rto_event_at: None,
                delack_event_at: None,
                pace_event_at: None,
                rack_event_at: None,
                last_sample: (0, 0),
            });
        }
        let mut q = EventQueue::with_capacity(64 + 8 * flows.len());
        for (i, f) in flows.iter().enumerate() {
            q.schedule(f.start, Event::FlowStart(i as u32));
            if f.stop < sc.duration {
                q.schedule(f.stop, Event::FlowStop(i as u32));
            }
        }
        if timeseries {
            q.schedule(sc.sample_interval, Event::Sample);
        }
        Sim {
            now: 0,
            end: sc.duration,
            q,
            flows,
            bn: Link::new(b.rate_bps, b.delay, limit),
            loss: b.loss,
            ack_loss: b.ack_loss,
            loss_rng: rng::derive(seed, rng::stream::BOTTLENECK_LOSS),
            ack_loss_rng: rng::derive(seed, rng::stream::ACK_LOSS),
            qdelay_hist: Histogram::default(),
            qdelay: Running::default(),
            sample_interval: sc.sample_interval,
            timeseries,
            ts: TimeSeries::default(),
            events: EventLog::default(),
            event_count: 0,
            seed,
            name: sc.name.clone(),
        }
    }

    /// Run until the scenario's duration (events at exactly the end time still run).
    pub fn run_to_end(&mut self) {
        self.run_until(self.end);
        self.finish();
    }

    pub fn end_time(&self) -> Time {
        self.end
    }

    /// Close the books at the end of the run.
    pub fn finish(&mut self) {
        self.now = self.end;
        self.bn.finish_accounting(self.end);
    }

    /// Run every event up to time `t` (capped at the end of the run). Callers may run in
    /// chunks (to check for interrupts between them): the result is the same.
    pub fn run_until(&mut self, t: Time) {
        self.run_until_limited(t, u64::MAX);
    }

    /// As [`Sim::run_until`], but return after at most `max_events` events. Returns true when
    /// every event up to `t` has run, false when the budget ran out first (call again to go
    /// on). However a run is cut into calls, its events run in the same order.
    pub fn run_until_limited(&mut self, t: Time, max_events: u64) -> bool {
        let t = t.min(self.end);
        let stop_at = self.event_count.saturating_add(max_events);
        while let Some(pt) = self.q.peek_time() {
            if pt > t {
                return true;
            }
            if self.event_count == stop_at {
                return false;
            }
            let (pt, ev) = self.q.pop().unwrap();
            self.now = pt;
            self.event_count += 1;
            self.handle(ev);
        }
        true
    }

    /// Events processed so far, counting the sampling ticks of `sample_interval` up to now
    /// also when no time series is recorded, so a summary is the same with or without one.
    pub fn events(&self) -> u64 {
        if self.timeseries {
            self.event_count
        } else {
            self.event_count + self.now.min(self.end) / self.sample_interval
        }
    }

    fn handle(&mut self, ev: Event) {
        let now = self.now;
        match ev {
            Event::FlowStart(f) => {
                let fl = &mut self.flows[f as usize];
                fl.sender.start(now);
                self.try_send(f);
            }
            Event::FlowStop(f) => self.end_flow(f),
            Event::AccessArrive(f) => {
                let (pkt, next) = self.flows[f as usize].access.arrive();
                if let Some(t) = next {
                    self.q.schedule(t, Event::AccessArrive(f));
                }
                self.bottleneck_enqueue(pkt);
            }
            Event::BottleneckArrive => {
                let (pkt, next) = self.bn.arrive();
                if let Some(t) = next {
                    self.q.schedule(t, Event::BottleneckArrive);
                }
                if self.loss > 0.0 && self.loss_rng.gen::<f64>() < self.loss {
                    self.bn.stats.random_losses += 1;
                } else {
                    self.deliver_data(pkt);
                }
            }
            Event::AckArrive(f) => {
                let fl = &mut self.flows[f as usize];
                let (ack, next) = fl.acks.pop();
                if let Some(t) = next {
                    self.q.schedule(t, Event::AckArrive(f));
                }
                if fl.ended_at.is_none() {
                    fl.sender.on_ack(&ack, now);
                    self.drain_cc_events(f);
                    let fl = &mut self.flows[f as usize];
                    if fl.sender.completed_at.is_some() {
                        self.end_flow(f);
                    } else {
                        self.try_send(f);
                    }
                }
            }
            Event::Rto(f) => {
                let fl = &mut self.flows[f as usize];
                if fl.rto_event_at == Some(now) {
                    fl.rto_event_at = None;
                }
                if fl.ended_at.is_none() {
                    if let Some(d) = fl.sender.rto_deadline {
                        if d <= now {
                            fl.sender.on_rto(now);
                            self.drain_cc_events(f);
                            self.try_send(f);
                        }
                    }
                    self.ensure_rto_event(f);
                }
            }
            Event::RackTimer(f) => {
                let fl = &mut self.flows[f as usize];
                if fl.rack_event_at == Some(now) {
                    fl.rack_event_at = None;
                }
                if fl.ended_at.is_none() {
                    if let Some(d) = fl.sender.rack_deadline {
                        if d <= now {
                            fl.sender.on_rack_timer(now);
                            self.drain_cc_events(f);
                            self.try_send(f);
                        }
                    }
                    self.ensure_rack_event(f);
                }
            }
            Event::DelAck(f) => {
                let fl = &mut self.flows[f as usize];
                if fl.delack_event_at == Some(now) {
                    fl.delack_event_at = None;
                }
                if let Some(d) = fl.receiver.delack_deadline {
                    if d <= now {
                        if let Some(ack) = fl.receiver.on_delack_timer(now) {
                            self.send_ack(f, ack);
                        }
                    } else {
                        self.ensure_delack_event(f);
                    }
                }
            }
            Event::Pace(f) => {
                let fl = &mut self.flows[f as usize];
                if fl.pace_event_at == Some(now) {
                    fl.pace_event_at = None;
                }
                self.try_send(f);
            }
            Event::Sample => {
                self.sample();
                let next = now + self.sample_interval;
                if next <= self.end {
                    self.q.schedule(next, Event::Sample);
                }
            }
        }
    }

    /// Move events the flow's algorithm recorded into the run's event table.
    fn drain_cc_events(&mut self, f: u32) {
        let fl = &mut self.flows[f as usize];
        if !fl.sender.sk.events.is_empty() {
            for e in fl.sender.sk.events.drain(..) {
                self.events.push(f, fl.cc_name, e);
            }
        }
    }

    fn end_flow(&mut self, f: u32) {
        let now = self.now;
        let fl = &mut self.flows[f as usize];
        if fl.ended_at.is_none() {
            fl.ended_at = Some(now);
            fl.sender.stop();
        }
    }

    /// Send whatever cwnd, the receive window and the pacer allow now.
    fn try_send(&mut self, f: u32) {
        let now = self.now;
        let mut sent = 0;
        loop {
            let fl = &mut self.flows[f as usize];
            if !fl.sender.active || fl.sender.sk.packets_in_flight() >= fl.sender.sk.cwnd {
                break;
            }
            let gate = fl.sender.pacing_gate(now);
            if gate > now {
                if fl.pace_event_at.map_or(true, |t| t > gate) {
                    fl.pace_event_at = Some(gate);
                    self.q.schedule(gate, Event::Pace(f));
                }
                break;
            }
            match fl.sender.next_packet(now) {
                Some(pkt) => {
                    sent += 1;
                    // The access queue is unlimited: every packet is accepted.
                    if let Offer::Accepted { head_arrival: Some(at), .. } = fl.access.offer(pkt, pkt.wire_bytes(), now) {
                        self.q.schedule(at, Event::AccessArrive(f));
                    }
                }
                None => break,
            }
        }
        self.ensure_rack_event(f);
        // tcp_write_xmit ends with tcp_cwnd_validate when it sent or was cwnd-limited.
        let s = &mut self.flows[f as usize].sender;
        if s.active {
            let limited = s.sk.packets_in_flight() >= s.sk.cwnd;
            if sent > 0 || limited {
                s.cwnd_validate(limited);
            }
        }
        self.ensure_rto_event(f);
    }

    fn ensure_rto_event(&mut self, f: u32) {
        let fl = &mut self.flows[f as usize];
        ensure_timer(&mut self.q, fl.sender.rto_deadline, &mut fl.rto_event_at, Event::Rto(f));
    }

    fn ensure_rack_event(&mut self, f: u32) {
        let fl = &mut self.flows[f as usize];
        ensure_timer(&mut self.q, fl.sender.rack_deadline, &mut fl.rack_event_at, Event::RackTimer(f));
    }

    fn ensure_delack_event(&mut self, f: u32) {
        let fl = &mut self.flows[f as usize];
        ensure_timer(&mut self.q, fl.receiver.delack_deadline, &mut fl.delack_event_at, Event::DelAck(f));
    }

    fn bottleneck_enqueue(&mut self, pkt: DataPkt) {
        let now = self.now;
        if let Offer::Accepted { queue_delay, head_arrival } = self.bn.offer(pkt, pkt.wire_bytes(), now) {
            // Queueing delay of the packets whose service starts within the run.
            if now + queue_delay <= self.end {
                self.qdelay_hist.add(queue_delay);
                self.qdelay.add(queue_delay as f64);
            }
            if let Some(at) = head_arrival {
                self.q.schedule(at, Event::BottleneckArrive);
            }
        }
    }

    fn deliver_data(&mut self, pkt: DataPkt) {
        let now = self.now;
        let f = pkt.flow;
        let fl = &mut self.flows[f as usize];
        match fl.receiver.on_data(&pkt, now) {
            Some(ack) => self.send_ack(f, ack),
            None => self.ensure_delack_event(f),
        }
    }

    fn send_ack(&mut self, f: u32, ack: AckPkt) {
        let now = self.now;
        let fl = &mut self.flows[f as usize];
        if self.ack_loss > 0.0 && self.ack_loss_rng.gen::<f64>() < self.ack_loss {
            fl.acks.packets_in += 1;
            fl.acks.losses += 1;
            return;
        }
        if let Some(at) = fl.acks.push(ack, now) {
            self.q.schedule(at, Event::AckArrive(f));
        }
    }

    fn sample(&mut self) {
        let t = to_secs(self.now);
        let (qp, qb) = self.bn.queue_at(self.now);
        let qp = qp as u32;
        let interval = to_secs(self.sample_interval);
        for (i, fl) in self.flows.iter_mut().enumerate() {
            self.ts.push_sender(t, i as u32, fl.cc_name, &fl.sender, &mut fl.last_sample, interval, qp, qb);
        }
    }

    /// Conservation on every link: packets in = out + drops + still queued or on the wire.
    pub fn check_conservation(&self) -> Result<(), String> {
        if !self.bn.conserves() {
            return Err(format!("bottleneck: {:?} with {} in flight", self.bn.stats, self.bn.in_flight()));
        }
        for (i, f) in self.flows.iter().enumerate() {
            if !f.access.conserves() {
                return Err(format!("flow {i} access link: {:?} with {} in flight", f.access.stats, f.access.in_flight()));
            }
            if !f.acks.conserves() {
                return Err(format!("flow {i} ACK path does not conserve packets"));
            }
            f.sender.check_invariants()?;
        }
        Ok(())
    }

    /// Bytes held by everything that grows with the packets queued and in flight (links,
    /// ACK paths, senders' and receivers' buffers, the event queue): for a caller that watches
    /// a run's memory (see [`crate::limits`]). O(flows).
    pub fn queue_heap_bytes(&self) -> usize {
        let flows: usize = self.flows.iter().map(|f| f.sender.heap_bytes() + f.receiver.heap_bytes() + f.access.heap_bytes() + f.acks.heap_bytes()).sum();
        flows + self.bn.heap_bytes() + self.q.heap_bytes()
    }

    pub fn flow_sender(&self, i: usize) -> &Sender {
        &self.flows[i].sender
    }
    pub fn flow_receiver(&self, i: usize) -> &Receiver {
        &self.flows[i].receiver
    }
    pub fn bottleneck(&self) -> &Link<DataPkt> {
        &self.bn
    }

    pub fn summary(&self, wall_seconds: f64) -> Summary {
        let mut flows = Vec::with_capacity(self.flows.len());
        for (i, fl) in self.flows.iter().enumerate() {
            let s = &fl.sender;
            let end = fl.ended_at.unwrap_or(self.end).max(fl.start);
            let started = self.end > fl.start || fl.ended_at.is_some();
            let conn = end.saturating_sub(fl.start);
            let thr = if conn > 0 && started { s.stats.bytes_acked as f64 * 8.0 / to_secs(conn) / 1e6 } else { 0.0 };
            let rtt = &s.stats.rtt;
            flows.push(FlowSummary {
                id: i as u32,
                group: 0,
                cc: fl.cc_name.to_string(),
                start_s: to_secs(fl.start),
                end_s: to_secs(end),
                throughput_mbps: thr,
                bytes_acked: s.stats.bytes_acked,
                bytes_sent: s.stats.bytes_sent,
                bytes_delivered: fl.receiver.bytes_delivered,
                segments_sent: s.stats.segments_sent,
                segments_delivered: fl.receiver.segments_delivered,
                retransmits: s.stats.retransmits,
                rto_count: s.stats.rto_count,
                fast_recoveries: s.stats.fast_recoveries,
                rtt_min_ms: if rtt.n > 0 { rtt.min / 1e6 } else { f64::NAN },
                rtt_mean_ms: rtt.mean() / 1e6,
                rtt_p95_ms: s.stats.rtt_hist.quantile(0.95) / 1e6,
                cwnd_final_pkts: s.sk.cwnd,
                cwnd_final_bytes: s.sk.cwnd as u64 * s.cfg.mss as u64,
                completed: s.completed_at.is_some(),
                completion_s: s.completed_at.map(to_secs),
            });
        }
        let thr: Vec<f64> = flows.iter().map(|f| f.throughput_mbps).collect();
        let st = &self.bn.stats;
        let dur = to_secs(self.end);
        Summary {
            name: self.name.clone(),
            seed: self.seed,
            sim_seconds: dur,
            events: self.events(),
            wall_seconds,
            total_throughput_mbps: thr.iter().sum(),
            jain_index: jain_index(&thr),
            flows,
            bottleneck: BottleneckSummary {
                rate_mbps: self.bn.rate_bps as f64 / 1e6,
                delay_ms: to_ms(self.bn.delay),
                buffer_pkts: match self.bn.limit {
                    QueueLimit::Packets(p) => Some(p),
                    _ => None,
                },
                buffer_bytes: match self.bn.limit {
                    QueueLimit::Bytes(b) => Some(b),
                    _ => None,
                },
                packets_in: st.packets_in,
                packets_out: st.packets_out,
                drops: st.drops,
                random_losses: st.random_losses,
                ack_losses: self.flows.iter().map(|f| f.acks.losses).sum(),
                utilization: (st.busy_time as f64 / self.end as f64).min(1.0),
                queue_mean_pkts: st.queue_area as f64 / self.end as f64,
                queue_max_pkts: st.queue_max,
                queue_delay_mean_ms: self.qdelay.mean() / 1e6,
                queue_delay_p95_ms: self.qdelay_hist.quantile(0.95) / 1e6,
            },
        }
    }
}

/// Run a scenario. `seed` overrides the scenario's seed. The wall time is the run loop's only
/// (it is reported, never used by the simulation).
pub fn run(sc: &Scenario, seed: Option<u64>) -> RunOutput {
    let seed = seed.unwrap_or(sc.seed);
    let mut sim = Sim::new(sc, seed);
    let t0 = std::time::Instant::now();
    sim.run_to_end();
    sim.into_output(sc, t0.elapsed().as_secs_f64())
}

impl Sim {
    /// The run's results; `wall_seconds` is reported, never used by the simulation.
    pub fn into_output(mut self, sc: &Scenario, wall_seconds: f64) -> RunOutput {
        let mut summary = self.summary(wall_seconds);
        for (fs, fc) in summary.flows.iter_mut().zip(&sc.flows) {
            fs.group = fc.group;
        }
        RunOutput { summary, timeseries: std::mem::take(&mut self.ts), events: self.events.take_closed() }
    }
}
