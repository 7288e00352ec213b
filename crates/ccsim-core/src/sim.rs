//! The run loop: flows (TCP endpoints, [`crate::endpoint`], or constant-rate UDP) over a
//! network of link directions and shared media ([`crate::net`]), whatever its shape. A topology
//! builder ([`crate::topology`]) supplies the network and each flow's routes; events are
//! addressed to link directions, delay segments, media stations and flows, never to topology
//! roles. The dumbbell, `[[links]]` (with or without `[[wifi]]`) and the `[wireless]` line all
//! run here.

use crate::endpoint::{Driver, Endpoint, Parts, Timer, TimerEvent};
use crate::engine::prefetch;
use crate::event::{Event, EventQueue};
use crate::metrics::{AirHopSummary, BottleneckSummary, EventLog, FlowSummary, LinkSeries, LinkSummary, RunOutput, StationPlace, StationSummary, Summary, TimeSeries, WorkloadBucket, WorkloadSummary};
use crate::net::wifi::{Cx, Frame, UDP_IP_HEADER};
use crate::net::{Hop, Network, Offer, Packet, QueueLimit, Route, Routed};
use crate::output::wireless::{WFlowSummary, WirelessOutput};
use crate::scenario::{NetworkConfig, OnOff, OnOffDist, Scenario, WFlowKind, WirelessScenario};
use crate::workload::{ideal_fct, IdealPath, WorkloadConfig};
use rand::Rng as _;
use std::collections::HashMap;
use crate::stats::jain_index;
use crate::tcp::receiver::Receiver;
use crate::tcp::sender::Sender;
use crate::tcp::{AckPkt, DataPkt};
use crate::time::{to_ms, to_secs, Time, SEC};
use crate::topology;

/// The queue a flow's time series reports.
#[derive(Debug, Clone, Copy)]
enum QueueRef {
    None,
    /// A link direction's.
    Dir(u32),
    /// A medium station's interface queue (the station's number across all media).
    Station(u32),
}

/// What a packet capture records: a link direction, or a hop of a medium (from one station
/// to its neighbour).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tapped {
    Dir(u32),
    Air { medium: u32, from: u16, to: u16 },
}

/// A constant-bit-rate UDP flow's state.
struct Udp {
    /// Time between datagrams, and their payload bytes.
    gap: Time,
    size: u32,
    sent: u64,
    received: u64,
    bytes_received: u64,
    /// On/off periods (None: constant bit rate).
    onoff: Option<Box<OnOffState>>,
}

/// A UDP flow's on/off state. Datagrams leave every `gap` of on-time: the on-time since the
/// last datagram carries over an off period, so the mean rate is exactly rate x on / (on + off).
struct OnOffState {
    cfg: OnOff,
    rng: crate::rng::Rng,
    /// End of the current on period.
    on_until: Time,
    /// On-time since the last datagram (a full gap before the first).
    carry: Time,
    /// The next UdpGen event starts an on period.
    pending_on: bool,
}

impl OnOffState {
    /// A period with mean `mean`: exponential, or Pareto with scale mean x (shape - 1) / shape.
    fn draw(&mut self, mean: Time) -> Time {
        let u: f64 = 1.0 - self.rng.gen::<f64>(); // (0, 1]
        let x = match self.cfg.dist {
            OnOffDist::Exponential => -(mean as f64) * u.ln(),
            OnOffDist::Pareto(a) => mean as f64 * (a - 1.0) / a / u.powf(1.0 / a),
        };
        x.min(1e18).round() as Time
    }
}

/// Workload flows are numbered from DYN: bit 31 set, the workload's index in bits 24-30, the
/// flow's serial number within its workload in bits 0-23. A number is never reused, so a packet
/// or timer of a finished flow is recognised (its flow is no longer alive) and dropped.
pub(crate) const DYN: u32 = 1 << 31;
const DYN_SERIALS: u32 = 1 << 24;
/// Most workload flows alive at once (an arrival beyond is not started, and counted).
pub const MAX_ALIVE: usize = crate::limits::MAX_TOTAL_FLOWS;

/// A `[[workloads]]` entry as the run drives it.
struct Workload {
    cfg: WorkloadConfig,
    /// The route of all its flows' data and ACKs.
    fwd: Route,
    rev: Route,
    ideal: IdealPath,
    arrivals: crate::rng::Rng,
    sizes: crate::rng::Rng,
    next_serial: u32,
    started: u64,
    bytes_started: u64,
    rejected: u64,
    alive: u64,
    alive_max: u64,
}

/// A workload flow alive: started, not completed.
struct Live {
    ep: Endpoint,
    /// Its number in the output (after the `[[flows]]` flows, in order of arrival).
    out_id: u32,
    start: Time,
    size: u64,
}

/// A flow of the `[wireless]` line: its `[[flows]]` entry and its stations (for its summary).
struct LineFlow {
    group: usize,
    src: usize,
    dst: usize,
}

struct Flow {
    /// The TCP connection: sender, receiver and their timers (None for a UDP flow).
    tcp: Option<Endpoint>,
    udp: Option<Box<Udp>>,
    /// The hops of the flow's data, sender to receiver, and of its ACKs, back.
    fwd: Route,
    rev: Route,
    /// The queue the flow's time series reports: the dumbbell's bottleneck, the slowest
    /// direction (the first of equals) on the flow's data route, or on a route without one its
    /// first station's interface queue.
    queue: QueueRef,
    start: Time,
    stop: Time,
    /// When the flow's connection time ended (stop, completion or end of run).
    ended_at: Option<Time>,
    /// (bytes acked, packets delivered) at the last sample.
    last_sample: (u64, u64),
}

pub struct Sim {
    pub now: Time,
    end: Time,
    q: EventQueue,
    flows: Vec<Flow>,
    net: Network,
    /// The dumbbell's bottleneck direction and its reverse (the ACKs' first hop); None for
    /// a `[[links]]` network.
    bn: Option<(u32, u32)>,
    sample_interval: Time,
    /// Whether time-series rows are recorded (and sampling events scheduled).
    timeseries: bool,
    pub ts: TimeSeries,
    /// The queues of the directions with a buffer, every sample interval.
    pub link_series: LinkSeries,
    /// Directions whose queue `link_series` records (their index in it is their position here).
    buffered: Vec<u32>,
    /// Algorithm events (RTprop updates, forced expiry, ...).
    pub events: EventLog,
    pub event_count: u64,
    seed: u64,
    name: Option<String>,
    /// The `[wireless]` line's flows (None for any other network).
    line: Option<Vec<LineFlow>>,
    /// Packet captures of chosen directions and Wi-Fi hops (None: no capture, no per-packet
    /// work), and what each captures.
    pub captures: Option<Box<crate::output::pcap::Captures>>,
    tapped: Vec<Tapped>,
    /// `[[workloads]]` (empty without), their live flows by number, the results of those that
    /// finished, and the most alive at once.
    wl: Vec<Workload>,
    live: HashMap<u32, Live>,
    done: Vec<FlowSummary>,
    live_max: usize,
    next_out_id: u32,
    /// Whether the run loop prefetches ([`Sim::prefetch_next`] and the others): with many
    /// flows (the radix event queue) or many packets in flight, whose state outgrows the
    /// caches. With a few flows and packets everything is in cache and it would only cost.
    prefetch: bool,
}

/// Packets the wires of a network hold at full rate (their bandwidth-delay products) above
/// which the run loop prefetches even with few flows: a 40 Gbps, 20 ms bottleneck holds about
/// 67,000, whose store slots and segment records outgrow the caches.
const PREFETCH_ABOVE_PACKETS: f64 = 4096.0;

/// A flow as the run loop is given it.
struct FlowInit {
    tcp: Option<Endpoint>,
    udp: Option<Box<Udp>>,
    start: Time,
    stop: Time,
    /// When its stop event is scheduled (None: none is).
    stop_event: Option<Time>,
}

impl Sim {
    /// A run of `sc` with `seed` that records a time series (see [`Sim::with_timeseries`]).
    pub fn new(sc: &Scenario, seed: u64) -> Sim {
        Sim::with_timeseries(sc, seed, true)
    }

    /// A run of `sc` with `seed`; with `timeseries` false no sampling event is scheduled and no
    /// row recorded (flows' or link queues'). Sampling only reads state, so everything else is
    /// the same either way; the event count includes the sampling ticks in both cases (see
    /// [`Sim::events`]).
    pub fn with_timeseries(sc: &Scenario, seed: u64, timeseries: bool) -> Sim {
        let mut wl_routes = Vec::new();
        let (built, bn) = match &sc.network {
            NetworkConfig::Dumbbell(b) => {
                let mut d = topology::dumbbell::build(sc, b, seed);
                // Each workload's flows leave a sender host of its own over its access link.
                let net = &mut d.built.net;
                let (router, receiver) = (net.dirs[d.bottleneck as usize].from, net.dirs[d.bottleneck as usize].to);
                let _ = receiver;
                for (k, w) in sc.workloads.iter().enumerate() {
                    let h = net.add_node(format!("workload{k}"));
                    let up = net.add_dir(h, router, w.access_rate_bps, w.access_delay, QueueLimit::Unlimited, 0.0, None);
                    let down = net.add_dir(router, h, 0, w.access_delay, QueueLimit::Unlimited, 0.0, None);
                    let fwd = net.route(&[up, d.bottleneck]);
                    let rev = net.route(&[d.bottleneck_rev, down]);
                    wl_routes.push((fwd, rev));
                }
                (d.built, Some((d.bottleneck, d.bottleneck_rev)))
            }
            NetworkConfig::Links { topology, paths, bdp_mss } if !sc.workloads.is_empty() => {
                // The workloads' paths count for Nbdp buffers as the flows' do.
                let mut all = paths.clone();
                all.extend(sc.workloads.iter().map(|w| w.path.clone()));
                let mut built = topology::general::build(topology, &all, *bdp_mss, seed);
                wl_routes = built.routes.split_off(paths.len());
                (built, None)
            }
            NetworkConfig::Links { topology, paths, bdp_mss } => (topology::general::build(topology, paths, *bdp_mss, seed), None),
        };
        let flows = sc
            .flows
            .iter()
            .enumerate()
            .map(|(i, fc)| {
                let stop = fc.stop.unwrap_or(sc.duration);
                let (tcp, udp) = match &fc.udp {
                    None => (Some(Endpoint::new(i, seed, &fc.cc, &fc.params, &fc.tcp, fc.size)), None),
                    Some(u) => {
                        let gap = (SEC as f64 / u.pps).round().max(1.0) as Time;
                        let onoff = u.onoff.map(|cfg| {
                            Box::new(OnOffState { cfg, rng: crate::rng::flow_stream(seed, i, crate::rng::stream::ONOFF), on_until: 0, carry: gap, pending_on: true })
                        });
                        (None, Some(Box::new(Udp { gap, size: u.size, sent: 0, received: 0, bytes_received: 0, onoff })))
                    }
                };
                FlowInit {
                    tcp,
                    udp,
                    start: fc.start,
                    stop,
                    stop_event: (stop < sc.duration).then_some(stop),
                }
            })
            .collect();
        let mut sim = Sim::assemble(sc.name.clone(), sc.duration, sc.sample_interval, seed, timeseries, built, bn, flows, None);
        if !sc.workloads.is_empty() {
            sim.add_workloads(&sc.workloads, wl_routes);
        }
        sim
    }

    /// Set up the workloads on their routes and schedule each one's first arrival.
    fn add_workloads(&mut self, cfgs: &[WorkloadConfig], routes: Vec<(Route, Route)>) {
        self.next_out_id = self.flows.len() as u32;
        for (k, (cfg, (fwd, rev))) in cfgs.iter().zip(routes).enumerate() {
            let ideal = ideal_path(&self.net, &fwd, &rev, cfg.tcp.mss, cfg.tcp.initial_cwnd);
            let mut w = Workload {
                cfg: cfg.clone(),
                fwd,
                rev,
                ideal,
                arrivals: crate::rng::derive(self.seed, crate::rng::stream::WORKLOAD_BASE + 2 * k as u64),
                sizes: crate::rng::derive(self.seed, crate::rng::stream::WORKLOAD_BASE + 2 * k as u64 + 1),
                next_serial: 0,
                started: 0,
                bytes_started: 0,
                rejected: 0,
                alive: 0,
                alive_max: 0,
            };
            let first = cfg.start.saturating_add(exp_gap(&mut w.arrivals, cfg.flows_per_s));
            if first < cfg.stop {
                self.q.schedule(first, Event::WorkloadArrival(k as u32));
            }
            self.wl.push(w);
        }
    }

    /// The next flow of workload `k` arrives now: it starts (unless too many are alive), and
    /// the one after is scheduled.
    fn workload_arrival(&mut self, k: u32) {
        let now = self.now;
        let w = &mut self.wl[k as usize];
        let size = w.cfg.cdf.sample(&mut w.sizes);
        let gap = exp_gap(&mut w.arrivals, w.cfg.flows_per_s);
        let next = now.saturating_add(gap);
        if next < w.cfg.stop {
            self.q.schedule(next, Event::WorkloadArrival(k));
        }
        w.started += 1;
        w.bytes_started += size;
        if self.live.len() >= MAX_ALIVE || w.next_serial >= DYN_SERIALS {
            w.rejected += 1;
            return;
        }
        let id = DYN | (k << 24) | w.next_serial;
        w.next_serial += 1;
        w.alive += 1;
        w.alive_max = w.alive_max.max(w.alive);
        let ep = Endpoint::new(id as usize, self.seed, &w.cfg.cc, &w.cfg.params, &w.cfg.tcp, Some(size));
        let out_id = self.next_out_id;
        self.next_out_id += 1;
        if let Some(c) = self.captures.as_mut() {
            c.workload_flow(k, id & (DYN_SERIALS - 1), out_id);
        }
        self.live.insert(id, Live { ep, out_id, start: now, size });
        self.live_max = self.live_max.max(self.live.len());
        self.start_flow(id);
    }

    /// A workload flow's results (completed at `done`, or still alive at the end of the run).
    fn workload_record(&self, id: u32, l: &Live, done: Option<Time>) -> FlowSummary {
        let k = ((id >> 24) & 0x7f) as usize;
        let w = &self.wl[k];
        let end = done.unwrap_or(self.end).max(l.start);
        let conn = end - l.start;
        let thr = if conn > 0 { l.ep.sender.stats.bytes_acked as f64 * 8.0 / to_secs(conn) / 1e6 } else { 0.0 };
        let mut fs = tcp_summary(l.out_id as usize, k, &l.ep, l.start, end, thr, Vec::new());
        fs.cc = String::new(); // filled in at output: no string per finished flow
        let ideal = ideal_fct(l.size, &w.ideal) / 1e9;
        let fct = done.map(|t| to_secs(t - l.start));
        fs.workload = Some(k);
        fs.size_bytes = Some(l.size);
        fs.fct_s = Some(fct.unwrap_or(f64::NAN));
        fs.ideal_fct_s = Some(ideal);
        fs.slowdown = Some(fct.map_or(f64::NAN, |f| f / ideal));
        fs
    }

    /// Workload flows alive now, and the most alive at once so far (the engine's workload flow
    /// storage: a live flow's endpoint; finished flows keep only their output row).
    pub fn workload_flows_alive(&self) -> (usize, usize) {
        (self.live.len(), self.live_max)
    }

    /// A run of the `[wireless]` line `sc` with `seed` (see [`Sim::with_timeseries`]).
    pub fn line(sc: &WirelessScenario, seed: u64, timeseries: bool) -> Sim {
        let built = topology::line::build(sc, seed);
        let mut line = Vec::with_capacity(sc.flows.len());
        let flows = sc
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| {
                line.push(LineFlow { group: f.group, src: f.src, dst: f.dst });
                let (tcp, udp) = match &f.kind {
                    WFlowKind::Udp { pps, size } => {
                        let gap = (SEC as f64 / pps).round().max(1.0) as Time;
                        (None, Some(Box::new(Udp { gap, size: *size, sent: 0, received: 0, bytes_received: 0, onoff: None })))
                    }
                    WFlowKind::Tcp { cc, params, tcp, size } => (Some(Endpoint::new(i, seed, cc, params, tcp, *size)), None),
                };
                // The line schedules a stop event whenever the flow has a stop time.
                FlowInit { tcp, udp, start: f.start, stop: f.stop.unwrap_or(sc.duration), stop_event: f.stop }
            })
            .collect();
        Sim::assemble(sc.name.clone(), sc.duration, sc.sample_interval, seed, timeseries, built, None, flows, Some(line))
    }

    #[allow(clippy::too_many_arguments)]
    fn assemble(
        name: Option<String>,
        duration: Time,
        sample_interval: Time,
        seed: u64,
        timeseries: bool,
        built: topology::Built,
        bn: Option<(u32, u32)>,
        inits: Vec<FlowInit>,
        line: Option<Vec<LineFlow>>,
    ) -> Sim {
        let topology::Built { mut net, routes } = built;
        for d in &mut net.dirs {
            if let Some(r) = d.link.varying.as_deref_mut().and_then(|v| v.rate.as_mut()) {
                r.horizon = duration;
            }
        }
        let buffered: Vec<u32> = (0..net.dirs.len() as u32)
            .filter(|&d| {
                let l = &net.dirs[d as usize].link;
                l.rate_bps > 0 && l.limit != QueueLimit::Unlimited
            })
            .collect();
        let buffered_ids: Vec<String> = buffered.iter().map(|&d| net.dirs[d as usize].id.clone()).collect();
        let mut flows = Vec::with_capacity(inits.len());
        let mut q = EventQueue::with_capacity(64 + 8 * inits.len());
        let prefetch = q.is_radix() || net.wire_packets() > PREFETCH_ABOVE_PACKETS;
        for (i, (fi, (fwd, rev))) in inits.into_iter().zip(routes).enumerate() {
            q.schedule(fi.start, Event::FlowStart(i as u32));
            if let Some(t) = fi.stop_event {
                q.schedule(t, Event::FlowStop(i as u32));
            }
            flows.push(Flow {
                tcp: fi.tcp,
                udp: fi.udp,
                queue: match bn {
                    Some((d, _)) => QueueRef::Dir(d),
                    None => queue_of(&net, &fwd),
                },
                fwd,
                rev,
                start: fi.start,
                stop: fi.stop,
                ended_at: None,
                last_sample: (0, 0),
            });
        }
        for m in &mut net.media {
            m.start(&mut q);
        }
        if timeseries {
            q.schedule(sample_interval, Event::Sample);
        }
        Sim {
            now: 0,
            end: duration,
            q,
            flows,
            net,
            bn,
            sample_interval,
            timeseries,
            ts: TimeSeries::default(),
            link_series: LinkSeries { links: buffered_ids, ..LinkSeries::default() },
            buffered,
            events: EventLog::default(),
            event_count: 0,
            seed,
            name,
            line,
            captures: None,
            tapped: Vec::new(),
            wl: Vec::new(),
            live: HashMap::new(),
            done: Vec::new(),
            live_max: 0,
            next_out_id: 0,
            prefetch,
        }
    }

    /// Capture the packets of `ids`, each in a pcap of its own ([`crate::output::pcap`]),
    /// frames cut to `snaplen` bytes. Call before the run. An id `"a->b"` names the link
    /// direction from node a to node b (the packets offered to it), or, without one, the hop
    /// of the first Wi-Fi medium on which a and b are neighbouring stations (the packets a
    /// sends b over the air, at their first transmission): the hop routes take between them.
    /// On a `[wireless]` line it names the hop between stations a and b.
    pub fn capture(&mut self, ids: &[String], snaplen: u32) -> Result<(), String> {
        assert!(self.now == 0 && self.event_count == 0, "captures are set before the run");
        let mut targets = Vec::with_capacity(ids.len());
        for (k, id) in ids.iter().enumerate() {
            if ids[..k].contains(id) {
                return Err(format!("pcap_links: {id:?} is named twice; accepted: each link direction or Wi-Fi hop once"));
            }
            match self.capture_target(id) {
                Some(t) => targets.push(t),
                None => {
                    let what = match (self.net.media.is_empty(), self.line.is_some()) {
                        (true, _) => "link direction",
                        (false, true) => "Wi-Fi hop",
                        (false, false) => "link direction or Wi-Fi hop",
                    };
                    return Err(format!("pcap_links: no {what} {id:?}; accepted: {}", self.capture_ids().join(", ")));
                }
            }
        }
        let flows = (0..self.flows.len())
            .map(|i| {
                let (src, dst) = self.route_ends(&self.flows[i].fwd);
                let mss = self.flows[i].tcp.as_ref().map_or(1448, |ep| ep.sender.cfg.mss);
                crate::output::pcap::FlowEnds { src, dst, mss }
            })
            .collect();
        let workloads = self
            .wl
            .iter()
            .map(|w| {
                let (src, dst) = self.route_ends(&w.fwd);
                crate::output::pcap::FlowEnds { src, dst, mss: w.cfg.tcp.mss }
            })
            .collect();
        for (c, &t) in targets.iter().enumerate() {
            match t {
                Tapped::Dir(d) => self.net.dirs[d as usize].capture = Some(c as u32),
                Tapped::Air { medium, from, to } => {
                    self.net.media[medium as usize].taps.get_or_insert_with(Default::default).push((from, to, c as u32, Vec::new()))
                }
            }
        }
        self.captures = Some(Box::new(crate::output::pcap::Captures::new(ids.to_vec(), flows, workloads, snaplen)));
        self.tapped = targets;
        Ok(())
    }

    /// What a capture id names (see [`Sim::capture`]).
    fn capture_target(&self, id: &str) -> Option<Tapped> {
        if self.line.is_none() {
            if let Some(d) = self.net.dir_named(id) {
                return Some(Tapped::Dir(d));
            }
        }
        self.air_hops().into_iter().find(|h| h.0 == id).map(|h| h.1)
    }

    /// Every hop of every medium, each way between neighbouring stations, with its id
    /// (`"a->b"`, the stations' node names), medium by medium, station by station.
    fn air_hops(&self) -> Vec<(String, Tapped)> {
        let mut out = Vec::new();
        for (m, med) in self.net.media.iter().enumerate() {
            let n = &med.nodes;
            for k in 0..n.len().saturating_sub(1) {
                for (from, to) in [(k, k + 1), (k + 1, k)] {
                    let id = format!("{}->{}", self.net.nodes[n[from] as usize], self.net.nodes[n[to] as usize]);
                    out.push((id, Tapped::Air { medium: m as u32, from: from as u16, to: to as u16 }));
                }
            }
        }
        out
    }

    /// The ids a capture accepts, as [`Sim::capture_target`] resolves them: the link
    /// directions (none on a `[wireless]` line), then the Wi-Fi hops no link direction shadows.
    fn capture_ids(&self) -> Vec<String> {
        let mut out: Vec<String> = if self.line.is_some() { Vec::new() } else { self.net.dirs.iter().map(|d| d.id.clone()).collect() };
        for (id, _) in self.air_hops() {
            if !out.contains(&id) {
                out.push(id);
            }
        }
        out
    }

    /// An upper bound, before the run, on the packets the captures will record (for the memory
    /// estimate, [`crate::limits`]), the sum over the captured directions of:
    /// - data: the packets the data routes through it can carry over the run: for each distinct
    ///   direction or Wi-Fi hop that bounds one of those routes (its slowest direction with a
    ///   rate, or a hop, below), what it lets through over the run in packets of the smallest
    ///   MSS + 52 bytes of the flows there; for a direction with a rate or a hop, at most what
    ///   it lets through itself;
    /// - ACKs: one per data segment delivered at most, so the same count over the flows whose
    ///   ACKs cross it (for a direction with a rate, at most its capacity in 52-byte ACKs);
    /// - a TCP flow's last segment, which may be shorter: one per flow crossing it (for a
    ///   workload, [`crate::limits::workload_flows`]);
    /// - UDP datagrams: all those the UDP flows crossing it send.
    ///
    /// The data count is an upper bound on the packets the slowest directions carry, not on
    /// those dropped before they get through (a capture records drops): for those it adds
    /// [`crate::limits::CAPTURE_DROP_ALLOWANCE`] of itself, which heavier losses exceed. A
    /// route with no rate and no Wi-Fi hop has no bound and counts nothing. The run still
    /// watches the records and stops when they pass the limit (`limits::check_capture`).
    ///
    /// A Wi-Fi hop bounds packets as a direction does, by the frames its sender can send over
    /// the run: one at a time, each taking at least its airtime at the profile's rate (the
    /// highest rate control may choose), SIFS and its MAC ACK's airtime; a route's bound is
    /// the tightest of its slowest direction's and its hops'. A packet is captured on a hop
    /// once however many MAC attempts it takes.
    pub fn capture_bound(&self) -> u64 {
        self.tapped.iter().fold(0u64, |n, &t| n.saturating_add(self.capture_bound_of(t)))
    }

    /// [`Sim::capture_bound`] of one captured direction or hop.
    fn capture_bound_of(&self, target: Tapped) -> u64 {
        use crate::limits::{packets_bits, workload_flows};
        /// What bounds a route's packets: a direction with a rate, or a hop of a medium.
        #[derive(PartialEq, Clone, Copy)]
        enum Key {
            Dir(u32),
            Air(u16, u16, u16),
        }
        let end = self.end;
        // Packets of `wire` bytes a key lets through over the run: a direction's capacity; a
        // hop's sender sends one data frame at a time, each taking at least its airtime at the
        // profile's (highest) rate, SIFS and its MAC ACK's airtime.
        let through = |k: Key, wire: u32| match k {
            Key::Dir(d) => packets_bits(self.net.dirs[d as usize].capacity_bits(end), wire),
            Key::Air(m, _, _) => {
                let p = &self.net.media[m as usize].cfg.phy;
                end / (p.data_airtime(wire) + p.sifs + p.ack_airtime()).max(1)
            }
        };
        let crosses = |route: &Route| {
            route.hops().iter().any(|h| match (*h, target) {
                (Hop::Dir(x), Tapped::Dir(d)) => x == d,
                (Hop::Seg(s), Tapped::Dir(d)) => self.net.segs[s as usize].dirs.contains(&d),
                (Hop::Air { medium, from, to }, Tapped::Air { medium: m, from: f, to: t }) => (medium as u32, from, to) == (m, f, t),
                _ => false,
            })
        };
        // What bounds a route's packets of `wire` bytes most tightly: its slowest direction
        // with a rate or one of its Wi-Fi hops (None: neither, no bound).
        let limit = |route: &Route, wire: u32| -> Option<Key> {
            let air = route.hops().iter().filter_map(|h| match *h {
                Hop::Air { medium, from, to } => Some(Key::Air(medium, from, to)),
                _ => None,
            });
            slowest(&self.net, route).map(Key::Dir).into_iter().chain(air).min_by_key(|&k| through(k, wire))
        };
        // (what bounds them, the smallest wire size) for data and for ACKs.
        let mut data: Vec<(Key, u32)> = Vec::new();
        let mut acks: Vec<(Key, u32)> = Vec::new();
        let add = |v: &mut Vec<(Key, u32)>, k: Option<Key>, wire: u32| {
            if let Some(k) = k {
                match v.iter_mut().find(|e| e.0 == k) {
                    Some(e) => e.1 = e.1.min(wire),
                    None => v.push((k, wire)),
                }
            }
        };
        let (mut short, mut udp, mut data_wire) = (0u64, 0u64, u32::MAX);
        let mut tcp = |fwd: &Route, rev: &Route, mss: u32, flows: u64, data: &mut Vec<_>, acks: &mut Vec<_>| {
            let wire = mss + crate::tcp::HEADER_BYTES;
            if crosses(fwd) {
                add(data, limit(fwd, wire), wire);
                data_wire = data_wire.min(wire);
                short = short.saturating_add(flows);
            }
            if crosses(rev) {
                add(acks, limit(fwd, wire), wire);
                short = short.saturating_add(flows);
            }
        };
        for f in &self.flows {
            match (&f.tcp, &f.udp) {
                (Some(ep), _) => tcp(&f.fwd, &f.rev, ep.sender.cfg.mss, 1, &mut data, &mut acks),
                (None, Some(u)) if crosses(&f.fwd) => {
                    let active = f.stop.min(end).saturating_sub(f.start);
                    udp = udp.saturating_add(active.div_ceil(u.gap) + 1);
                }
                _ => {}
            }
        }
        for w in &self.wl {
            tcp(&w.fwd, &w.rev, w.cfg.tcp.mss, workload_flows(&w.cfg, end), &mut data, &mut acks);
        }
        let sum = |v: &[(Key, u32)]| v.iter().fold(0u64, |n, &(k, wire)| n.saturating_add(through(k, wire)));
        // At most what the captured direction or hop itself lets through.
        let own = |wire: u32| match target {
            Tapped::Dir(d) if self.net.dirs[d as usize].unlimited() => u64::MAX,
            Tapped::Dir(d) => through(Key::Dir(d), wire),
            Tapped::Air { medium, from, to } => through(Key::Air(medium as u16, from, to), wire),
        };
        let allowance = |n: u64| n.saturating_add((n as f64 * crate::limits::CAPTURE_DROP_ALLOWANCE).ceil() as u64);
        let data_pkts = if data.is_empty() { 0 } else { allowance(sum(&data).min(own(data_wire))) };
        let ack_pkts = if acks.is_empty() { 0 } else { sum(&acks).min(own(crate::tcp::ACK_BYTES)) };
        data_pkts.saturating_add(ack_pkts).saturating_add(short).saturating_add(udp)
    }

    /// The directions a capture takes by default: the dumbbell's bottleneck, else the queue
    /// each flow's series reports (the slowest direction of its data route), then each
    /// workload's slowest direction, each once.
    pub fn default_capture_links(&self) -> Vec<String> {
        if let Some((bn, _)) = self.bn {
            return vec![self.net.dirs[bn as usize].id.clone()];
        }
        let mut out: Vec<String> = Vec::new();
        let routes = self.flows.iter().map(|f| &f.fwd).chain(self.wl.iter().map(|w| &w.fwd));
        for route in routes {
            let id = match queue_of(&self.net, route) {
                QueueRef::Dir(d) => self.net.dirs[d as usize].id.clone(),
                _ => match route.hops().iter().find(|h| matches!(h, Hop::Air { .. })) {
                    Some(&Hop::Air { medium, from, to }) => {
                        let n = &self.net.media[medium as usize].nodes;
                        format!("{}->{}", self.net.nodes[n[from as usize] as usize], self.net.nodes[n[to as usize] as usize])
                    }
                    _ => continue,
                },
            };
            if !out.contains(&id) {
                out.push(id);
            }
        }
        out
    }

    /// The first and last node of a route.
    fn route_ends(&self, route: &Route) -> (u32, u32) {
        let ends = |h: &Hop| match *h {
            Hop::Dir(d) => (self.net.dirs[d as usize].from, self.net.dirs[d as usize].to),
            Hop::Seg(s) => {
                let ds = &self.net.segs[s as usize].dirs;
                (self.net.dirs[ds[0] as usize].from, self.net.dirs[ds[ds.len() - 1] as usize].to)
            }
            Hop::Air { medium, from, to } => {
                let n = &self.net.media[medium as usize].nodes;
                (n[from as usize], n[to as usize])
            }
        };
        match (route.hops().first(), route.hops().last()) {
            (Some(a), Some(b)) => (ends(a).0, ends(b).1),
            _ => (0, 0),
        }
    }

    /// Record packet `r` offered to direction `d` at `t` in the direction's capture.
    #[cold]
    #[inline(never)]
    fn record(&mut self, c: u32, t: Time, r: Routed) {
        let pkt = self.net.packets.get(r.slot());
        if let Some(caps) = self.captures.as_mut() {
            caps.record(c, t, pkt, r.ecn());
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
        for d in &mut self.net.dirs {
            d.finish_accounting(self.end);
        }
        // The records the media's taps took join their captures.
        if let Some(caps) = self.captures.as_mut() {
            for m in &mut self.net.media {
                for t in m.taps.iter_mut().flat_map(|t| t.iter_mut()) {
                    caps.absorb(t.2, &mut t.3);
                }
            }
        }
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
            if self.prefetch {
                self.prefetch_next();
            }
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

    /// Prefetch, while the event before it runs, what the next stored event will read first:
    /// its direction, its segment (and the packet that arrives from it, with its flow's
    /// sender or receiver) or its flow. With many flows or packets in flight
    /// ([`Sim::prefetch`]) that state is no longer in cache. Results do not depend on it.
    #[inline(never)]
    fn prefetch_next(&self) {
        let Some(ev) = self.q.next_stored() else { return };
        match ev {
            Event::LinkArrive(d) | Event::LinkTxDone(d) => {
                if let Some(x) = self.net.dirs.get(d as usize) {
                    prefetch::first(x);
                }
            }
            Event::SegArrive(s) => {
                if let Some(x) = self.net.segs.get(s as usize) {
                    prefetch::all(x);
                }
                // The packet it will deliver, from the dense copy of its handle: its slot and
                // its flow's sender or receiver (what depends on those lines is asked for when
                // the event runs, [`Sim::prefetch_segment_head`]).
                if let Some(&h) = self.net.seg_heads.get(s as usize) {
                    if h.hop() == Routed::ON_LAST {
                        self.prefetch_route_end(h);
                    }
                }
            }
            Event::Rto(f) | Event::RackTimer(f) | Event::DelAck(f) | Event::Pace(f) => {
                if let Some(x) = self.flows.get(f as usize) {
                    prefetch::all(x);
                }
            }
            _ => {}
        }
    }

    /// Prefetch what a packet at the end of its route will read: its store slot and its
    /// flow's receiver (data) or sender (ACKs), all at once instead of one miss after another.
    #[inline]
    fn prefetch_route_end(&self, r: Routed) {
        self.net.packets.prefetch(r.slot());
        if let Some(Flow { tcp: Some(ep), .. }) = self.flows.get(r.flow() as usize) {
            if r.ack() {
                prefetch::all(&ep.sender);
            } else {
                prefetch::all(&ep.receiver);
            }
        }
    }

    fn handle(&mut self, ev: Event) {
        let now = self.now;
        match ev {
            Event::FlowStart(f) => {
                if self.flows[f as usize].udp.is_some() {
                    self.q.schedule(now, Event::UdpGen(f));
                } else {
                    self.start_flow(f);
                }
            }
            Event::UdpGen(f) => self.udp_send(f),
            Event::WorkloadArrival(k) => self.workload_arrival(k),
            Event::AirAccess { station, gen } => {
                let (m, i) = self.net.station(station as u32);
                self.net.media[m].access(&mut Cx { now, q: &mut self.q }, i, gen);
            }
            Event::AirTxEnd(g) => {
                let (m, i) = self.net.station(g);
                if let Some(d) = self.net.media[m].tx_end(&mut Cx { now, q: &mut self.q }, i) {
                    self.station_input(m, d.at, d.frame);
                }
                self.net.media[m].tx_end_finish(&mut Cx { now, q: &mut self.q });
            }
            Event::AirAckStart(g) => {
                let (m, i) = self.net.station(g);
                self.net.media[m].ack_start(&mut Cx { now, q: &mut self.q }, i);
            }
            Event::AirAckTimeout { station, gen } => {
                let (m, i) = self.net.station(station as u32);
                self.net.media[m].ack_timeout(&mut Cx { now, q: &mut self.q }, i, gen);
            }
            Event::AirCpuDone(g) => {
                let (m, i) = self.net.station(g);
                if let Some(frame) = self.net.media[m].cpu_done(&mut Cx { now, q: &mut self.q }, i) {
                    self.station_arrive(m, i, frame);
                }
                self.net.media[m].cpu_kick(&mut Cx { now, q: &mut self.q }, i);
            }
            Event::AirBackground(m) => self.net.media[m as usize].background(&mut Cx { now, q: &mut self.q }),
            Event::AirBackgroundEnd(m) => self.net.media[m as usize].background_end(&mut Cx { now, q: &mut self.q }),
            Event::AirMgmt { station, kind } => {
                let (m, i) = self.net.station(station as u32);
                self.net.media[m].mgmt_timer(&mut Cx { now, q: &mut self.q }, i, kind);
            }
            Event::FlowStop(f) => self.end_flow(f),
            Event::LinkArrive(d) => {
                let dir = &mut self.net.dirs[d as usize];
                if dir.link.varying.is_some() && !dir.link.wire.line.front().is_some_and(|&(t, _)| t <= now) {
                    // A wire that reorders: an event for a head that an earlier packet overtook.
                    return;
                }
                let (r, next) = dir.link.arrive();
                if let Some(t) = next {
                    self.q.schedule(t, Event::LinkArrive(d));
                }
                if dir.lose_at(now) {
                    dir.link.stats.random_losses += 1;
                    self.net.packets.discard(r.slot());
                } else {
                    if next.is_some() && self.prefetch {
                        self.prefetch_wire_ahead(d);
                    }
                    self.forward(r.next());
                }
            }
            Event::LinkTxDone(d) => {
                let crate::net::Network { dirs, packets, .. } = &mut self.net;
                let (head, next) = dirs[d as usize].slot_tx_done(now, packets);
                if let Some(t) = head {
                    self.q.schedule(t, Event::LinkArrive(d));
                }
                if let Some(t) = next {
                    self.q.schedule_soon(t, Event::LinkTxDone(d));
                }
            }
            Event::SegArrive(s) => {
                if self.prefetch {
                    self.prefetch_segment_head(s);
                }
                let seg = &mut self.net.segs[s as usize];
                let (r, next) = seg.line.pop();
                if let Some(t) = next {
                    if let Some(&(_, h)) = seg.line.line.front() {
                        self.net.seg_heads[s as usize] = h;
                    }
                    self.q.schedule(t, Event::SegArrive(s));
                }
                self.forward(r.next());
            }
            Event::Rto(f) => self.flow_timer(f, Timer::Rto),
            Event::RackTimer(f) => self.flow_timer(f, Timer::Rack),
            Event::DelAck(f) => self.flow_timer(f, Timer::DelAck),
            Event::Pace(f) => self.flow_timer(f, Timer::Pace),
            Event::Sample => {
                self.sample();
                let next = now + self.sample_interval;
                if next <= self.end {
                    self.q.schedule(next, Event::Sample);
                }
            }
        }
    }

    /// A flow's timer event (a finished workload flow's is dropped).
    #[inline]
    fn flow_timer(&mut self, f: u32, t: Timer) {
        if f >= DYN && !self.live.contains_key(&f) {
            return;
        }
        self.on_timer(f, t)
    }

    /// The route of flow `f`'s data or ACKs (a workload flow's: its workload's).
    #[inline]
    fn route_of(&self, f: u32, ack: bool) -> &Route {
        if f < DYN {
            let fl = &self.flows[f as usize];
            if ack {
                &fl.rev
            } else {
                &fl.fwd
            }
        } else {
            let w = &self.wl[((f >> 24) & 0x7f) as usize];
            if ack {
                &w.rev
            } else {
                &w.fwd
            }
        }
    }

    /// Move a packet onto hop `r.hop()` of its flow's route, or hand it to the flow's receiver
    /// (data) or sender (ACKs) at the end of the route.
    fn forward(&mut self, mut r: Routed) {
        if r.hop() == Routed::AT_END {
            return self.route_end(r);
        }
        let route = self.route_of(r.flow(), r.ack());
        let hop = route.hop(r.hop() as usize);
        // A frame's hop index is read again on the medium (station_arrive): only a wired last
        // hop is marked.
        if matches!(hop, Some(Hop::Dir(_) | Hop::Seg(_))) && r.hop() as usize + 1 == route.len() {
            r.set_hop(Routed::ON_LAST);
        }
        match hop {
            Some(Hop::Dir(d)) => self.offer(d, r),
            Some(Hop::Seg(s)) => self.enter_segment(s, r),
            Some(Hop::Air { medium, from, to }) => self.air_enter(medium as usize, from as usize, to as usize, r),
            None => self.route_end(r),
        }
    }

    /// A packet comes to station `from` of a medium from outside it (generated there, or off a
    /// wired link), to cross the medium to station `to`: it becomes a frame of the medium and
    /// enters the station's IP layer.
    fn air_enter(&mut self, m: usize, from: usize, to: usize, r: Routed) {
        let pkt = self.net.packets.take(r.slot());
        let frame = self.net.media[m].frame(r, pkt, to);
        self.station_input(m, from, frame);
    }

    /// A frame enters station `k`'s IP layer (from outside the medium or received over it).
    fn station_input(&mut self, m: usize, k: usize, frame: Frame) {
        let now = self.now;
        if let Some(frame) = self.net.media[m].input(&mut Cx { now, q: &mut self.q }, k, frame) {
            self.station_arrive(m, k, frame);
        }
    }

    /// A frame passed station `k`'s IP layer. If it is about to cross the medium from `k` (it
    /// entered here), or was received here and its route goes on over the medium from `k`, it
    /// joins `k`'s interface queue (keeping its frame id over the medium); else it leaves the
    /// medium: onto its route's next hop, or to the flow's receiver or sender.
    fn station_arrive(&mut self, m: usize, k: usize, frame: Frame) {
        let now = self.now;
        let mut r = frame.r;
        let route = self.route_of(r.flow(), r.ack());
        let leaving_from_k = |h: Option<Hop>| match h {
            Some(Hop::Air { medium, from, to }) if medium as usize == m && from as usize == k => Some(to),
            _ => None,
        };
        let to = match leaving_from_k(route.hop(r.hop() as usize)) {
            Some(to) => Some(to),
            None => {
                r = r.next();
                leaving_from_k(route.hop(r.hop() as usize))
            }
        };
        match to {
            Some(to) => self.net.media[m].enqueue(&mut Cx { now, q: &mut self.q }, k, Frame { to, r, ..frame }),
            None => {
                r.set_slot(self.net.packets.put(frame.pkt));
                self.forward(r)
            }
        }
    }

    /// A UDP flow sends its next datagram and schedules the one after (while it runs).
    fn udp_send(&mut self, f: u32) {
        let now = self.now;
        let fl = &mut self.flows[f as usize];
        if fl.ended_at.is_some() {
            return;
        }
        let u = fl.udp.as_mut().expect("a UDP flow");
        if u.onoff.is_some() {
            return self.onoff_send(f);
        }
        u.sent += 1;
        let (gap, bytes) = (u.gap, u.size + UDP_IP_HEADER);
        let stop = fl.stop;
        let r = Routed::new(Packet::Udp(crate::net::UdpPkt { flow: f, ip_bytes: bytes }), &mut self.net.packets);
        self.forward(r);
        if now + gap < stop {
            self.q.schedule(now + gap, Event::UdpGen(f));
        }
    }

    /// An on/off UDP flow's event: an on period starts, or a datagram is due in one.
    #[cold]
    fn onoff_send(&mut self, f: u32) {
        let now = self.now;
        let fl = &mut self.flows[f as usize];
        let stop = fl.stop;
        let u = fl.udp.as_mut().expect("a UDP flow");
        let gap = u.gap;
        let o = u.onoff.as_mut().expect("on/off");
        let next = if o.pending_on {
            o.pending_on = false;
            let on = o.draw(o.cfg.on);
            o.on_until = now.saturating_add(on);
            let first = now + gap.saturating_sub(o.carry);
            if first < o.on_until {
                first
            } else {
                o.carry += on;
                o.pending_on = true;
                let off = o.draw(o.cfg.off);
                o.on_until.saturating_add(off)
            }
        } else {
            u.sent += 1;
            let bytes = u.size + UDP_IP_HEADER;
            o.carry = 0;
            let next = if now + gap < o.on_until {
                now + gap
            } else {
                o.carry = o.on_until - now;
                o.pending_on = true;
                let off = o.draw(o.cfg.off);
                o.on_until.saturating_add(off)
            };
            let r = Routed::new(Packet::Udp(crate::net::UdpPkt { flow: f, ip_bytes: bytes }), &mut self.net.packets);
            self.forward(r);
            next
        };
        if next < stop {
            self.q.schedule(next, Event::UdpGen(f));
        }
    }

    /// The next packets on direction `d`'s wire (a bottleneck's next arrivals, one and two
    /// serialisation times from now), in two stages: for the one after next, its store slot,
    /// its flow's receiver (or sender) and the route its answer takes; for the next (whose
    /// route was prefetched one arrival ago), the first hop of that route, which its ACK will
    /// enter.
    #[inline(never)]
    fn prefetch_wire_ahead(&self, d: u32) {
        let line = &self.net.dirs[d as usize].link.wire.line;
        let (next, after) = (line.front().map(|e| e.1), line.get(1).map(|e| e.1));
        if let Some(n) = after.filter(|n| n.hop() == Routed::ON_LAST) {
            self.prefetch_route_end(n);
            if let Some(fl) = self.flows.get(n.flow() as usize) {
                prefetch::first(if n.ack() { &fl.fwd } else { &fl.rev });
            }
        }
        if let Some(n) = next.filter(|n| n.hop() == Routed::ON_LAST && !n.ack()) {
            if let Some(fl) = self.flows.get(n.flow() as usize) {
                match fl.rev.hop(0) {
                    Some(Hop::Seg(s)) => {
                        if let Some(x) = self.net.segs.get(s as usize) {
                            prefetch::first(x);
                        }
                    }
                    Some(Hop::Dir(d)) => {
                        if let Some(x) = self.net.dirs.get(d as usize) {
                            x.prefetch_offer();
                        }
                    }
                    _ => {}
                }
            }
        }
    }

    /// A delay segment's front packet is about to arrive: if that ends its route, prefetch
    /// for it from the copy of its handle in [`Network::seg_heads`] (the line's buffer is not
    /// read yet).
    #[inline(never)]
    fn prefetch_segment_head(&self, s: u32) {
        if let Some(&h) = self.net.seg_heads.get(s as usize) {
            if h.hop() == Routed::ON_LAST {
                self.prefetch_route_end_all(h);
            }
        }
    }

    /// [`Sim::prefetch_route_end`], and for an ACK what the sends it allows will read.
    #[inline(never)]
    fn prefetch_route_end_all(&self, r: Routed) {
        self.prefetch_route_end(r);
        if r.ack() {
            if let Some(Flow { tcp: Some(ep), fwd, .. }) = self.flows.get(r.flow() as usize) {
                ep.sender.prefetch_ack_path();
                if let Some(Hop::Dir(d)) = fwd.hop(0) {
                    if let Some(x) = self.net.dirs.get(d as usize) {
                        x.prefetch_offer();
                    }
                }
            }
        }
    }

    /// A packet at the end of its route: data to the flow's receiver, an ACK to its sender.
    fn route_end(&mut self, r: Routed) {
        // Only with many flows or many packets in flight (`Sim::prefetch`).
        if self.prefetch {
            self.prefetch_route_end_all(r);
        }
        match self.net.packets.take(r.slot()) {
            Packet::Data(mut pkt) => {
                if pkt.flow >= DYN && !self.live.contains_key(&pkt.flow) {
                    return; // a finished workload flow's straggler
                }
                // The ECN field as the network left it (a queue may have set CE on the handle).
                pkt.ecn = r.ecn();
                self.data_arrives(&pkt)
            }
            Packet::Ack(ack) => self.ack_arrives(&ack),
            Packet::Udp(u) => {
                let udp = self.flows[u.flow as usize].udp.as_mut().expect("a UDP flow");
                udp.received += 1;
                udp.bytes_received += (u.ip_bytes - UDP_IP_HEADER) as u64;
            }
        }
    }

    /// Offer a packet to a direction's queue; schedule its arrival if it heads the wire.
    fn offer(&mut self, d: u32, r: Routed) {
        let now = self.now;
        let dir = &mut self.net.dirs[d as usize];
        if let Some(c) = dir.capture {
            self.record(c, now, r);
        }
        let dir = &mut self.net.dirs[d as usize];
        if dir.slot.is_some() {
            return self.slot_offer(d, r);
        }
        match dir.link.offer(r, r.bytes(), now) {
            Offer::Accepted { queue_delay, head_arrival } => {
                // Queueing delay of the packets whose service starts within the run.
                if now + queue_delay <= self.end {
                    dir.qdelay_hist.add(queue_delay);
                    dir.qdelay_sum += queue_delay as f64;
                }
                if let Some(at) = head_arrival {
                    self.q.schedule(at, Event::LinkArrive(d));
                }
            }
            Offer::Dropped => self.net.packets.discard(r.slot()),
        }
    }

    /// Offer a packet to a direction served by a queue discipline.
    #[cold]
    #[inline(never)]
    fn slot_offer(&mut self, d: u32, r: Routed) {
        let now = self.now;
        let crate::net::Network { dirs, packets, .. } = &mut self.net;
        if let Some(t) = dirs[d as usize].slot_offer(r, now, packets) {
            self.q.schedule_soon(t, Event::LinkTxDone(d));
        }
    }

    /// A packet enters a delay segment (a run of unlimited directions): each direction's
    /// random loss is drawn now, in route order; a packet that survives arrives after the
    /// segment's total delay.
    fn enter_segment(&mut self, s: u32, r: Routed) {
        let now = self.now;
        if self.captures.is_some() {
            self.record_segment(s, r);
        }
        let crate::net::Network { dirs, segs, seg_lossy, seg_heads, packets, .. } = &mut self.net;
        let seg = &mut segs[s as usize];
        if seg_lossy[s as usize] {
            for (k, &d) in seg.dirs.iter().enumerate() {
                if dirs[d as usize].lose() {
                    seg.lost[k] += 1;
                    seg.line.packets_in += 1;
                    seg.line.losses += 1;
                    packets.discard(r.slot());
                    return;
                }
            }
        }
        if let Some(at) = seg.line.push(r, now) {
            seg_heads[s as usize] = r;
            self.q.schedule(at, Event::SegArrive(s));
        }
    }

    /// Record a packet entering delay segment `s` in the captures of its directions: each at
    /// the time it enters that direction, up to the first whose random loss takes it (the
    /// draws are made after this, from the same streams, so they are replayed on a copy).
    #[cold]
    #[inline(never)]
    fn record_segment(&mut self, s: u32, r: Routed) {
        let now = self.now;
        let mut t = now;
        let n = self.net.segs[s as usize].dirs.len();
        for k in 0..n {
            let d = self.net.segs[s as usize].dirs[k] as usize;
            let dir = &self.net.dirs[d];
            if let Some(c) = dir.capture {
                self.record(c, t, r);
            }
            let dir = &self.net.dirs[d];
            // Would this direction lose it? Draw on a copy of its stream (the real draw follows).
            if let Some(rng) = dir.loss_rng.as_deref() {
                use rand::Rng as _;
                if rng.clone().gen::<f64>() < dir.loss {
                    return;
                }
            }
            t += dir.link.delay;
        }
    }

    fn sample(&mut self) {
        let t = to_secs(self.now);
        let interval = to_secs(self.sample_interval);
        for (i, fl) in self.flows.iter_mut().enumerate() {
            let (qp, qb) = match fl.queue {
                QueueRef::Dir(d) => {
                    let (p, b) = self.net.dirs[d as usize].queue_at(self.now);
                    (p as u32, b)
                }
                QueueRef::Station(g) => {
                    let (m, k) = self.net.station(g);
                    self.net.media[m].queue_of(k)
                }
                QueueRef::None => (0, 0),
            };
            match (&fl.tcp, &fl.udp) {
                (Some(ep), _) => self.ts.push_sender(t, i as u32, ep.cc_name, &ep.sender, &mut fl.last_sample, interval, qp, qb),
                (None, Some(u)) => self.ts.push_udp(t, i as u32, u.bytes_received, &mut fl.last_sample.0, interval, qp, qb),
                (None, None) => unreachable!("a flow is TCP or UDP"),
            }
        }
        for (k, &d) in self.buffered.iter().enumerate() {
            let (qp, qb) = self.net.dirs[d as usize].queue_at(self.now);
            self.link_series.push(t, k as u32, qp, qb);
        }
    }

    /// Conservation on every link: packets in = out + drops + still queued or on the wire.
    pub fn check_conservation(&self) -> Result<(), String> {
        self.net.check_conservation()?;
        for f in &self.flows {
            if let Some(ep) = &f.tcp {
                ep.sender.check_invariants()?;
            }
        }
        for l in self.live.values() {
            l.ep.sender.check_invariants()?;
        }
        Ok(())
    }

    /// Bytes held by everything that grows with the packets queued and in flight (links,
    /// ACK paths, senders' and receivers' buffers, the event queue): for a caller that watches
    /// a run's memory (see [`crate::limits`]). O(flows).
    /// Memory the packet captures hold so far (0 without captures).
    pub fn capture_heap_bytes(&self) -> usize {
        self.captures.as_ref().map_or(0, |c| c.heap_bytes() + self.net.media.iter().map(|m| m.tap_bytes()).sum::<usize>())
    }

    pub fn queue_heap_bytes(&self) -> usize {
        let flows: usize = self.flows.iter().map(|f| f.tcp.as_ref().map_or(0, |ep| ep.heap_bytes())).sum();
        let live: usize = self.live.values().map(|l| l.ep.heap_bytes()).sum();
        flows + live + self.net.heap_bytes() + self.q.heap_bytes()
    }

    pub fn flow_sender(&self, i: usize) -> &Sender {
        &self.flows[i].tcp.as_ref().expect("a TCP flow").sender
    }
    pub fn flow_receiver(&self, i: usize) -> &Receiver {
        &self.flows[i].tcp.as_ref().expect("a TCP flow").receiver
    }
    pub fn network(&self) -> &Network {
        &self.net
    }

    /// Serve direction `d`'s queue with a queue discipline instead of the fast path's FIFO
    /// (call before the run starts).
    pub fn set_qdisc(&mut self, d: u32, qdisc: Box<dyn crate::net::qdisc::Qdisc>) {
        assert!(self.now == 0 && self.event_count == 0, "a queue discipline is set before the run");
        self.net.dirs[d as usize].set_qdisc(qdisc);
    }

    pub fn summary(&self, wall_seconds: f64) -> Summary {
        let mut flows = Vec::with_capacity(self.flows.len());
        for (i, fl) in self.flows.iter().enumerate() {
            let Some(ep) = &fl.tcp else {
                if let Some(u) = &fl.udp {
                    flows.push(self.udp_summary(i, fl, u));
                }
                continue;
            };
            let s = &ep.sender;
            let end = fl.ended_at.unwrap_or(self.end).max(fl.start);
            let started = self.end > fl.start || fl.ended_at.is_some();
            let conn = end.saturating_sub(fl.start);
            let thr = if conn > 0 && started { s.stats.bytes_acked as f64 * 8.0 / to_secs(conn) / 1e6 } else { 0.0 };
            flows.push(tcp_summary(i, 0, ep, fl.start, end, thr, self.path_names(&fl.fwd)));
        }
        let thr: Vec<f64> = flows.iter().map(|f| f.throughput_mbps).collect();
        let mut warnings = self.access_limited_warnings();
        warnings.extend(self.ecn_fallback_warnings());
        let dur = to_secs(self.end);
        let mut summary = Summary {
            name: self.name.clone(),
            seed: self.seed,
            sim_seconds: dur,
            events: self.events(),
            wall_seconds,
            total_throughput_mbps: thr.iter().sum(),
            jain_index: jain_index(&thr),
            flows,
            links: self.links_summary(),
            bottleneck: self.bottleneck_summary(),
            warnings,
            stations: self.stations_summary(),
            air_hops: self.air_hops_summary(),
            workloads: Vec::new(),
        };
        if !self.wl.is_empty() {
            self.add_workload_summary(&mut summary);
        }
        summary
    }

    /// A wired UDP flow's row: datagrams sent, received, lost and in flight.
    fn udp_summary(&self, i: usize, fl: &Flow, u: &Udp) -> FlowSummary {
        let end = fl.ended_at.unwrap_or(self.end).min(fl.stop).max(fl.start);
        let secs = to_secs(end - fl.start).max(1e-9);
        let in_flight = self.net.packets.live().filter(|p| matches!(p, Packet::Udp(d) if d.flow == i as u32)).count() as u64
            + self.net.media.iter().flat_map(|m| m.held()).filter(|fr| fr.r.flow() == i as u32 && !fr.r.ack()).count() as u64;
        FlowSummary {
            id: i as u32,
            group: 0,
            cc: "udp".to_string(),
            start_s: to_secs(fl.start),
            end_s: to_secs(end),
            throughput_mbps: u.bytes_received as f64 * 8.0 / secs / 1e6,
            bytes_acked: 0,
            bytes_sent: u.sent * u.size as u64,
            bytes_delivered: u.bytes_received,
            segments_sent: u.sent,
            segments_delivered: u.received,
            retransmits: 0,
            rto_count: 0,
            fast_recoveries: 0,
            ce_received: 0,
            ece_reductions: 0,
            rtt_min_ms: f64::NAN,
            rtt_mean_ms: f64::NAN,
            rtt_p95_ms: f64::NAN,
            cwnd_final_pkts: 0,
            cwnd_final_bytes: 0,
            completed: false,
            completion_s: None,
            path: self.path_names(&fl.fwd),
            workload: None,
            size_bytes: None,
            fct_s: None,
            ideal_fct_s: None,
            slowdown: None,
            datagrams_sent: Some(u.sent),
            datagrams_received: Some(u.received),
            datagrams_lost: Some(u.sent.saturating_sub(u.received).saturating_sub(in_flight)),
            datagrams_in_flight: Some(in_flight),
        }
    }

    /// The workload flows (finished, then alive at the end, in order of arrival) after the
    /// `[[flows]]` flows, and each workload's summary.
    fn add_workload_summary(&self, summary: &mut Summary) {
        let mut rows: Vec<FlowSummary> = self.done.clone();
        rows.extend(self.live.iter().map(|(&id, l)| self.workload_record(id, l, None)));
        rows.sort_by_key(|r| r.id);
        for r in &mut rows {
            r.cc = self.wl[r.workload.expect("a workload flow")].cfg.cc.clone();
        }
        for (k, w) in self.wl.iter().enumerate() {
            let mine: Vec<&FlowSummary> = rows.iter().filter(|r| r.workload == Some(k)).collect();
            let mut buckets = vec![bucket("all", &mine)];
            let mut lo = 0u64;
            for &(label, hi) in crate::workload::BUCKETS {
                let inb: Vec<&FlowSummary> = mine.iter().copied().filter(|r| (lo..hi).contains(&r.size_bytes.unwrap_or(0))).collect();
                buckets.push(bucket(label, &inb));
                lo = hi;
            }
            let span = to_secs(w.cfg.stop - w.cfg.start);
            let mut warn = Vec::new();
            if w.rejected > 0 {
                warn.push(format!(
                    "workload {k}: {} arrivals not started ({MAX_ALIVE} workload flows were alive at once, or its {DYN_SERIALS} flow numbers ran out)",
                    w.rejected
                ));
            }
            if w.cfg.tcp.delayed_ack {
                warn.push(format!(
                    "workload {k}: delayed ACKs without Linux's quick-ACK mode at connection start (not modelled): a flow whose last segment is left unpaired waits up to delack_timeout ({} ms) for its final ACK, which dominates the slowdown of short flows; delayed_ack = false removes that wait",
                    w.cfg.tcp.delack_timeout / crate::time::MS
                ));
            }
            summary.warnings.extend(warn);
            summary.workloads.push(WorkloadSummary {
                id: k,
                cc: w.cfg.cc.clone(),
                sizes: w.cfg.sizes_name.clone(),
                arrival_rate: w.cfg.flows_per_s,
                load: match w.cfg.arrivals {
                    crate::workload::Arrivals::Load(x) => Some(x),
                    crate::workload::Arrivals::Rate(_) => None,
                },
                link: w.cfg.link.clone(),
                cdf_mean_bytes: w.cfg.cdf.mean(),
                mean_size_bytes: if w.started > 0 { w.bytes_started as f64 / w.started as f64 } else { f64::NAN },
                offered_load: w.cfg.link_rate_bps.map(|r| w.bytes_started as f64 * 8.0 / (r as f64 * span)),
                rejected: w.rejected,
                alive_max: w.alive_max,
                buckets,
            });
        }
        summary.flows.extend(rows);
    }

    /// Every hop of the network's media that sent data frames, medium by medium, then by
    /// sending and receiving station.
    fn air_hops_summary(&self) -> Vec<AirHopSummary> {
        let mut out = Vec::new();
        for (m, med) in self.net.media.iter().enumerate() {
            for (from, to, c) in med.hop_counts() {
                let name = |k: usize| &self.net.nodes[med.nodes[k] as usize];
                out.push(AirHopSummary {
                    id: format!("{}->{}", name(from), name(to)),
                    medium: self.line.is_none().then_some(m),
                    packets: c.packets,
                    attempts: c.attempts,
                    delivered: c.delivered,
                    retry_drops: c.retry_drops,
                });
            }
        }
        out
    }

    /// Every station of the network's media.
    fn stations_summary(&self) -> Vec<StationSummary> {
        let mut out = Vec::new();
        for (m, med) in self.net.media.iter().enumerate() {
            for (stats, &node) in med.station_stats(self.end).into_iter().zip(&med.nodes) {
                out.push(StationSummary { place: StationPlace { medium: m, node: self.net.nodes[node as usize].clone() }, stats });
            }
        }
        out
    }

    /// The results of a `[wireless]` line run (see [`Sim::line`]): per flow, TCP or UDP, and
    /// per station.
    pub fn wireless_output(&self, wall_seconds: f64) -> WirelessOutput {
        let line = self.line.as_ref().expect("a [wireless] line");
        let mut flows = Vec::with_capacity(self.flows.len());
        for (i, (fl, lf)) in self.flows.iter().zip(line).enumerate() {
            let end = fl.ended_at.unwrap_or(self.end).min(fl.stop).max(fl.start);
            let secs = to_secs(end - fl.start).max(1e-9);
            let (kind, sent, received, bytes, tcp) = match (&fl.tcp, &fl.udp) {
                (Some(ep), _) => {
                    let st = &ep.sender.stats;
                    let thr = st.bytes_acked as f64 * 8.0 / secs / 1e6;
                    let fs = tcp_summary(i, lf.group, ep, fl.start, end, thr, Vec::new());
                    ("tcp", st.segments_sent, ep.receiver.segments_delivered, st.bytes_acked, Some(fs))
                }
                (None, Some(u)) => ("udp", u.sent, u.received, u.bytes_received, None),
                (None, None) => unreachable!("a flow is TCP or UDP"),
            };
            // Packets still queued in a station (interface queue or host backlog) at the end are
            // in flight, not lost.
            let in_flight = self.net.media.iter().flat_map(|m| m.held()).filter(|fr| fr.r.flow() == i as u32 && !fr.r.ack()).count() as u64;
            let lost = sent.saturating_sub(received).saturating_sub(in_flight);
            flows.push(WFlowSummary {
                id: i as u32,
                group: lf.group,
                start_s: to_secs(fl.start),
                end_s: to_secs(end),
                kind,
                src: lf.src,
                dst: lf.dst,
                sent,
                received,
                lost,
                in_flight,
                loss_ratio: if sent > 0 { lost as f64 / sent as f64 } else { 0.0 },
                throughput_mbps: bytes as f64 * 8.0 / secs / 1e6,
                tcp,
            });
        }
        let thr: Vec<f64> = flows.iter().map(|f| f.throughput_mbps).collect();
        WirelessOutput {
            seed: self.seed,
            sim_seconds: to_secs(self.end),
            events: self.events(),
            wall_seconds,
            total_throughput_mbps: thr.iter().sum(),
            jain_index: jain_index(&thr),
            flows,
            stations: self.net.media.iter().flat_map(|m| m.station_stats(self.end)).collect(),
            air_hops: self.air_hops_summary(),
        }
    }

    /// The dumbbell's bottleneck statistics (None on a `[[links]]` network).
    fn bottleneck_summary(&self) -> Option<BottleneckSummary> {
        let (bn, bn_rev) = self.bn?;
        let bn = &self.net.dirs[bn as usize];
        let st = &bn.link.stats;
        Some(BottleneckSummary {
        rate_mbps: bn.link.rate_bps as f64 / 1e6,
        delay_ms: to_ms(bn.link.delay),
        buffer_pkts: match bn.link.limit {
            QueueLimit::Packets(p) => Some(p),
            _ => None,
        },
        buffer_bytes: match bn.link.limit {
            QueueLimit::Bytes(b) => Some(b),
            _ => None,
        },
        qdisc: bn.qdisc_name().to_string(),
        packets_in: st.packets_in,
        packets_out: st.packets_out,
        drops: bn.overflow_drops(),
        aqm_drops: bn.aqm_drops(),
        marks: bn.marks(),
        random_losses: st.random_losses,
        ack_losses: self.net.segment_counts()[bn_rev as usize].2 + self.net.dirs[bn_rev as usize].link.stats.random_losses,
        utilization: bn.utilization(self.end),
        capacity_mbps: bn.capacity_bits(self.end) / to_secs(self.end) / 1e6,
        queue_mean_pkts: st.queue_area as f64 / self.end as f64,
        queue_max_pkts: st.queue_max,
        queue_delay_mean_ms: bn.qdelay_mean() / 1e6,
        queue_delay_p95_ms: bn.qdelay_hist.quantile(0.95) / 1e6,
    })
    }

    /// The node names along a route: the first hop's start, then each hop's end.
    fn path_names(&self, route: &Route) -> Vec<String> {
        // Each hop as (from node, to node).
        let mut steps: Vec<(u32, u32)> = Vec::new();
        let dir = |d: u32| (self.net.dirs[d as usize].from, self.net.dirs[d as usize].to);
        for h in route.hops().iter() {
            match *h {
                Hop::Dir(d) => steps.push(dir(d)),
                Hop::Seg(s) => steps.extend(self.net.segs[s as usize].dirs.iter().map(|&d| dir(d))),
                Hop::Air { medium, from, to } => {
                    let nodes = &self.net.media[medium as usize].nodes;
                    steps.push((nodes[from as usize], nodes[to as usize]));
                }
            }
        }
        let name = |n: u32| self.net.nodes[n as usize].clone();
        let mut out: Vec<String> = steps.first().map(|&(from, _)| name(from)).into_iter().collect();
        out.extend(steps.iter().map(|&(_, to)| name(to)));
        out
    }

    /// Every direction that carried packets.
    fn links_summary(&self) -> Vec<LinkSummary> {
        let end = self.end as f64;
        let seg = self.net.segment_counts();
        self.net
            .dirs
            .iter()
            .zip(seg)
            .filter(|(d, s)| d.link.stats.packets_in + s.0 > 0)
            .map(|(d, (s_in, s_out, s_lost))| {
                let (l, st) = (&d.link, &d.link.stats);
                LinkSummary {
                    id: d.id.clone(),
                    rate_mbps: (!d.unlimited()).then(|| l.rate_bps as f64 / 1e6),
                    delay_ms: to_ms(l.delay),
                    buffer_pkts: match l.limit {
                        QueueLimit::Packets(p) => Some(p),
                        _ => None,
                    },
                    buffer_bytes: match l.limit {
                        QueueLimit::Bytes(b) => Some(b),
                        _ => None,
                    },
                    qdisc: (!d.unlimited()).then(|| d.qdisc_name().to_string()),
                    packets_in: st.packets_in + s_in,
                    packets_out: st.packets_out + s_out,
                    drops: d.overflow_drops(),
                    aqm_drops: d.aqm_drops(),
                    marks: d.marks(),
                    random_losses: st.random_losses + s_lost,
                    utilization: if d.unlimited() { 0.0 } else { d.utilization(self.end) },
                    capacity_mbps: (!d.unlimited()).then(|| d.capacity_bits(self.end) / to_secs(self.end) / 1e6),
                    queue_mean_pkts: st.queue_area as f64 / end,
                    queue_max_pkts: st.queue_max,
                    queue_delay_mean_ms: if d.unlimited() { 0.0 } else { d.qdelay_mean() / 1e6 },
                    queue_delay_p95_ms: if d.unlimited() { 0.0 } else { d.qdelay_hist.quantile(0.95) / 1e6 },
                }
            })
            .collect()
    }

    /// One line per flow whose own access link, not the bottleneck, limited it: the access
    /// link was serialising for at least [`ACCESS_LIMITED_BUSY`] of the flow's active time.
    fn access_limited_warnings(&self) -> Vec<String> {
        let Some((bn, _)) = self.bn else { return Vec::new() };
        let bn_rate = self.net.dirs[bn as usize].link.rate_bps;
        let mut out = Vec::new();
        for (i, fl) in self.flows.iter().enumerate() {
            let Some(&Hop::Dir(access)) = fl.fwd.hops().first() else { continue };
            if access == bn {
                continue;
            }
            let end = fl.ended_at.unwrap_or(self.end).max(fl.start);
            let active = end.saturating_sub(fl.start);
            if active == 0 {
                continue;
            }
            let link = &self.net.dirs[access as usize].link;
            let busy = (link.stats.busy_time as f64 / active as f64).min(1.0);
            if busy >= ACCESS_LIMITED_BUSY {
                out.push(format!(
                    "flow {i}: its access link ({} Mbps) was busy {:.0}% of the flow's active time, so it, not the bottleneck ({} Mbps), limited the flow",
                    link.rate_bps as f64 / 1e6,
                    100.0 * busy,
                    bn_rate as f64 / 1e6
                ));
            }
        }
        out
    }
}

impl Sim {
    /// One line per algorithm that needs ECN but runs on flows without it (see
    /// [`Endpoint::ecn_fallback`]), naming the first few flows.
    fn ecn_fallback_warnings(&self) -> Vec<String> {
        let mut by_cc: Vec<(&'static str, Vec<usize>)> = Vec::new();
        for (i, fl) in self.flows.iter().enumerate() {
            match &fl.tcp {
                Some(ep) if ep.ecn_fallback => match by_cc.iter_mut().find(|(cc, _)| *cc == ep.cc_name) {
                    Some((_, ids)) => ids.push(i),
                    None => by_cc.push((ep.cc_name, vec![i])),
                },
                _ => {}
            }
        }
        by_cc
            .into_iter()
            .map(|(cc, ids)| {
                let mut shown: Vec<String> = ids.iter().take(5).map(|i| i.to_string()).collect();
                if ids.len() > 5 {
                    shown.push(format!("... ({} flows)", ids.len()));
                }
                let which = if ids.len() == 1 { "flow" } else { "flows" };
                format!(
                    "{which} {}: {cc} needs ECN but [tcp] ecn is false, so it runs without it as Linux does when ECN is not negotiated ({cc}: as Reno)",
                    shown.join(", ")
                )
            })
            .collect()
    }
}

impl TimerEvent for Event {
    #[inline]
    fn timer(t: Timer, flow: u32) -> Event {
        match t {
            Timer::Rto => Event::Rto(flow),
            Timer::Rack => Event::RackTimer(flow),
            Timer::DelAck => Event::DelAck(flow),
            Timer::Pace => Event::Pace(flow),
        }
    }
}

/// The network's flows: a segment or an ACK enters hop 0 of its flow's data or ACK route.
impl Driver for Sim {
    type Ev = Event;

    #[inline]
    fn now(&self) -> Time {
        self.now
    }

    #[inline]
    fn parts(&mut self, f: u32) -> Parts<'_, Event> {
        let ep = if f < DYN { self.flows[f as usize].tcp.as_mut().expect("a TCP flow") } else { &mut self.live.get_mut(&f).expect("a live workload flow").ep };
        Parts { ep, q: &mut self.q, log: &mut self.events }
    }

    #[inline]
    fn ended(&self, f: u32) -> bool {
        if f < DYN {
            self.flows[f as usize].ended_at.is_some()
        } else {
            !self.live.contains_key(&f)
        }
    }

    fn end_flow(&mut self, f: u32) {
        let now = self.now;
        if f >= DYN {
            // A workload flow completed: keep its row, free its state.
            if let Some(l) = self.live.remove(&f) {
                let rec = self.workload_record(f, &l, Some(now));
                self.done.push(rec);
                self.wl[((f >> 24) & 0x7f) as usize].alive -= 1;
            }
            return;
        }
        let fl = &mut self.flows[f as usize];
        if fl.ended_at.is_none() {
            fl.ended_at = Some(now);
            if let Some(ep) = fl.tcp.as_mut() {
                ep.sender.stop();
            }
        }
    }

    #[inline]
    fn send_data(&mut self, pkt: DataPkt) {
        let r = Routed::new(Packet::Data(pkt), &mut self.net.packets);
        self.forward(r);
    }

    #[inline]
    fn send_ack(&mut self, ack: AckPkt) {
        let r = Routed::new(Packet::Ack(ack), &mut self.net.packets);
        self.forward(r);
    }
}

/// A TCP flow's summary: flow `i` of `[[flows]]` entry `group`, connected from `start` to
/// `end`, with throughput `thr` (Mbps).
fn tcp_summary(i: usize, group: usize, ep: &Endpoint, start: Time, end: Time, thr: f64, path: Vec<String>) -> FlowSummary {
    let s = &ep.sender;
    let rtt = &s.stats.rtt;
    FlowSummary {
        id: i as u32,
        group,
        cc: ep.cc_name.to_string(),
        start_s: to_secs(start),
        end_s: to_secs(end),
        throughput_mbps: thr,
        bytes_acked: s.stats.bytes_acked,
        bytes_sent: s.stats.bytes_sent,
        bytes_delivered: ep.receiver.bytes_delivered,
        segments_sent: s.stats.segments_sent,
        segments_delivered: ep.receiver.segments_delivered,
        retransmits: s.stats.retransmits,
        rto_count: s.stats.rto_count,
        fast_recoveries: s.stats.fast_recoveries,
        ce_received: ep.receiver.ce_received,
        ece_reductions: s.stats.ece_reductions,
        rtt_min_ms: if rtt.n > 0 { rtt.min / 1e6 } else { f64::NAN },
        rtt_mean_ms: rtt.mean() / 1e6,
        rtt_p95_ms: s.stats.rtt_hist.quantile(0.95) / 1e6,
        cwnd_final_pkts: s.sk.cwnd,
        cwnd_final_bytes: s.sk.cwnd as u64 * s.cfg.mss as u64,
        completed: s.completed_at.is_some(),
        completion_s: s.completed_at.map(to_secs),
        path,
        workload: None,
        size_bytes: None,
        fct_s: None,
        ideal_fct_s: None,
        slowdown: None,
        datagrams_sent: None,
        datagrams_received: None,
        datagrams_lost: None,
        datagrams_in_flight: None,
    }
}

/// An exponential gap (nanoseconds) of a Poisson process of `per_s` events per second.
fn exp_gap(rng: &mut crate::rng::Rng, per_s: f64) -> Time {
    let u: f64 = 1.0 - rng.gen::<f64>(); // (0, 1]
    (-u.ln() / per_s * SEC as f64).min(1e18).round() as Time
}

/// FCT and slowdown of `rows` (completed ones), as a bucket of the workload summary.
fn bucket(label: &'static str, rows: &[&FlowSummary]) -> WorkloadBucket {
    let mut fct: Vec<f64> = rows.iter().filter_map(|r| r.fct_s).filter(|x| x.is_finite()).collect();
    let mut sd: Vec<f64> = rows.iter().filter_map(|r| r.slowdown).filter(|x| x.is_finite()).collect();
    fct.sort_by(f64::total_cmp);
    sd.sort_by(f64::total_cmp);
    let mean = |v: &[f64]| if v.is_empty() { f64::NAN } else { v.iter().sum::<f64>() / v.len() as f64 };
    WorkloadBucket {
        bucket: label,
        started: rows.len() as u64,
        completed: fct.len() as u64,
        fct_mean_s: mean(&fct),
        fct_p50_s: quantile(&fct, 0.5),
        fct_p99_s: quantile(&fct, 0.99),
        slowdown_mean: mean(&sd),
        slowdown_p50: quantile(&sd, 0.5),
        slowdown_p99: quantile(&sd, 0.99),
    }
}

/// The q-quantile of sorted values, interpolating linearly between order statistics (NaN if
/// empty).
fn quantile(v: &[f64], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let h = q * (v.len() - 1) as f64;
    let (i, frac) = (h.floor() as usize, h - h.floor());
    if i + 1 < v.len() {
        v[i] + (v[i + 1] - v[i]) * frac
    } else {
        v[i]
    }
}

/// What the ideal FCT over a route needs (see [`crate::workload::ideal_fct`]): the slowest
/// rate the data crosses, and the base RTT with one packet's serialisation on every other
/// direction with a rate the data crosses and one ACK's on every one the ACKs cross. A Wi-Fi
/// hop adds nothing (no airtime is counted).
fn ideal_path(net: &Network, fwd: &Route, rev: &Route, mss: u32, iw: u32) -> IdealPath {
    let (mut rtt, mut other) = (0.0, 0.0);
    let ack_bits = (crate::tcp::ACK_BYTES * 8) as f64;
    let slow = slowest(net, fwd);
    for (route, data) in [(fwd, true), (rev, false)] {
        for h in route.hops().iter() {
            match *h {
                Hop::Dir(d) => {
                    let l = &net.dirs[d as usize].link;
                    rtt += l.delay as f64;
                    if l.rate_bps > 0 && data && Some(d) != slow {
                        other += 8e9 / l.rate_bps as f64;
                    } else if l.rate_bps > 0 && !data {
                        rtt += ack_bits * 1e9 / l.rate_bps as f64;
                    }
                }
                Hop::Seg(s) => rtt += net.segs[s as usize].dirs.iter().map(|&d| net.dirs[d as usize].link.delay as f64).sum::<f64>(),
                Hop::Air { .. } => {}
            }
        }
    }
    let rate_bps = slow.map_or(u64::MAX, |d| net.dirs[d as usize].link.rate_bps);
    IdealPath { rate_bps, rtt, other_ns_per_byte: other, mss, iw }
}

/// The queue a flow's time series reports: the slowest direction with a rate on its data
/// route (the first of equals); on a route without one, its first medium station's.
fn queue_of(net: &Network, route: &Route) -> QueueRef {
    if let Some(d) = slowest(net, route) {
        return QueueRef::Dir(d);
    }
    for h in route.hops() {
        if let Hop::Air { medium, from, .. } = *h {
            return QueueRef::Station(net.media[medium as usize].base() + from as u32);
        }
    }
    QueueRef::None
}

/// The slowest direction with a rate on a route (the first of equals), if any.
fn slowest(net: &Network, route: &Route) -> Option<u32> {
    let mut best: Option<u32> = None;
    for h in route.hops().iter() {
        if let Hop::Dir(d) = *h {
            let r = net.dirs[d as usize].link.rate_bps;
            if best.map_or(true, |b| r < net.dirs[b as usize].link.rate_bps) {
                best = Some(d);
            }
        }
    }
    best
}

/// The share of a flow's active time its access link must be busy for the run to warn that
/// the access link limited the flow.
pub const ACCESS_LIMITED_BUSY: f64 = 0.9;

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
    /// The results of a `[wireless]` line run: the summary JSON (as `ccsim run --json` prints
    /// it), the time series and the algorithm events.
    pub fn into_line_output(mut self, sc: &WirelessScenario, wall_seconds: f64) -> (serde_json::Value, TimeSeries, EventLog) {
        let summary = self.wireless_output(wall_seconds).summary_json(sc.name.as_deref(), &sc.normalized["wireless"]);
        (summary, std::mem::take(&mut self.ts), self.events.take_closed())
    }

    /// The run's results; `wall_seconds` is reported, never used by the simulation.
    pub fn into_output(mut self, sc: &Scenario, wall_seconds: f64) -> RunOutput {
        let mut summary = self.summary(wall_seconds);
        for (fs, fc) in summary.flows.iter_mut().zip(&sc.flows) {
            fs.group = fc.group;
        }
        RunOutput {
            summary,
            timeseries: std::mem::take(&mut self.ts),
            events: self.events.take_closed(),
            link_series: std::mem::take(&mut self.link_series),
        }
    }
}

#[cfg(test)]
mod prefetch_gate_tests {
    use super::*;

    fn sim(rate: &str, count: u32) -> Sim {
        let v = serde_json::json!({
            "duration": "1s",
            "bottleneck": {"rate": rate, "delay": "20ms", "buffer": "1bdp"},
            "flows": [{"cc": "cubic", "count": count}]
        });
        Sim::new(&Scenario::from_value(&v).expect("valid scenario"), 1)
    }

    #[test]
    fn the_run_loop_prefetches_with_many_packets_in_flight_or_many_flows_only() {
        // 40 Gbps x 20 ms: 66,667 packets of 1,500 bytes on the bottleneck's wire (the
        // access links have no delay, the reverse direction no rate).
        let big = sim("40Gbps", 2);
        assert!((big.net.wire_packets() - 40e9 * 0.020 / 12_000.0).abs() < 1e-6);
        assert!(big.prefetch);
        // E1's link: 17 packets; two flows: no prefetch.
        let e1 = sim("10Mbps", 2);
        assert!(e1.net.wire_packets() < 20.0);
        assert!(!e1.prefetch);
        // Thousands of flows (the radix event queue) on the same small link: prefetch.
        assert!(sim("10Mbps", 2000).prefetch);
    }
}
