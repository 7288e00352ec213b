//! The 802.11 DCF (basic access) on a line of stations: one shared medium of the network.
//!
//! Stations 0..n stand in a line, one hop apart, each on a node of the network. Distances are
//! in hops. A transmission:
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
//!   transmission attempts (dot11ShortRetryLimit, 7).
//! - Stations that decode a data frame set a NAV until its ACK ends.
//! - A successful frame resets CW and starts a new backoff (post-backoff).
//! - Duplicates of a frame whose ACK was lost are ACKed but not passed up again.
//!
//! Each station has a drop-tail interface queue (Linux txqueuelen, 1000 packets by default).
//! A frame in it is addressed to the next station of its packet's route (the run loop decides
//! that when it queues the packet); a decoded frame is handed back to the run loop, which
//! passes it on along the packet's route: to the next station of this medium, onto a wired
//! link, or to the flow's receiver or sender.
//!
//! Background traffic (the `indoor` environment): other networks' frames arrive as a Poisson
//! process occupying `load` of the airtime. Every station senses them and defers, and any
//! reception they overlap is lost. Added to that is a random frame error rate `fer`.
//!
//! The medium keeps no clock or event loop of its own: every method is given the current time
//! and the run's event queue ([`Cx`]), and its events ([`Event`]`::Air*`) name the station by its
//! index among all the network's stations. Where the DCF hands a frame up in the middle of its
//! own work (a decoded frame at the end of a transmission, a packet leaving the host's CPU),
//! the method returns the frame and the run loop calls the second half after it has passed
//! the frame on ([`Dcf::tx_end_finish`], [`Dcf::cpu_kick`]), so that every random draw and
//! every event happens in the same order as when the line was a simulator of its own.
//!
//! Options, off by default (then every run is as before they existed):
//! - `rate_control` ([`super::rate`]): ARF or AARF choose each data frame's rate from the
//!   profile's ladder, per neighbour; the ACK follows at its basic rate.
//! - `hwmp`: the airtime of HWMP's path selection frames (see [`Mgmt`]); routing stays static.
//! - `mesh_beacons`: every station's mesh beacons.
//! - `tcp_acks = "out-of-band"` (line builder, [`crate::topology::line`]): TCP ACKs skip the
//!   channel.
//!
//! Not modelled:
//! - path selection (HWMP) itself: routing is static (`hwmp` adds only its frames' airtime);
//! - RTS/CTS;
//! - EIFS;
//! - rate adaptation by SNR (`rate_control` reacts to losses only; the channel has no SNR);
//! - A-MPDU aggregation;
//! - capture: any overlap in reach corrupts.

use super::phy::Phy;
use super::rate::{Arf, RateControl};
use crate::event::{Event, EventQueue};
use crate::net::{Packet, Routed};
use crate::rng::Rng;
use crate::time::Time;
use rand::Rng as _;
use std::collections::VecDeque;

/// IP + UDP header bytes of a UDP datagram.
pub const UDP_IP_HEADER: u32 = 28;

#[derive(Debug, Clone, PartialEq)]
pub struct WirelessConfig {
    /// Stations 0..=hops.
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
    /// Host processing (see [`Host`]); zero costs turn it off.
    pub host: Host,
    /// Rate adaptation ([`super::rate`]); `Fixed`: the profile's rate.
    pub rate_control: RateControl,
    /// HWMP's path selection frames: PREQ floods and PREP replies (see [`Mgmt`]).
    pub hwmp: bool,
    /// Every station sends a mesh beacon every [`BEACON_INTERVAL`].
    pub mesh_beacons: bool,
    /// Where TCP ACKs travel (line builder).
    pub tcp_acks: TcpAcks,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TcpAcks {
    /// Back over the line, hop by hop, contending with the data (802.11 frames).
    Air,
    /// Over a wired link of its own from the receiver to the sender (10 Gbps, no delay, no
    /// queue limit): a counterfactual with ACKs that take no airtime.
    OutOfBand,
}

/// HWMP and mesh management frames, sent as broadcasts (no MAC ACK, no retry) at the lowest
/// basic rate (6 Mbps, legacy preamble), ahead of the station's data frames (but not in the
/// middle of a data frame's retries). Airtime only: a frame reaches its receivers even if it
/// collides, and routing stays static.
/// - PREQ: a path's originator floods one every [`HWMP_PATH_REFRESH`], from the flow's start;
///   every station that receives it forwards it once, except its target, which answers with a
///   PREP that travels back to the originator hop by hop. A TCP flow has two paths (data and
///   ACKs), a UDP flow one.
/// - Beacon: every station every [`BEACON_INTERVAL`], staggered evenly over the interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mgmt {
    Beacon,
    Preq { orig: u16, target: u16, id: u32 },
    Prep { orig: u16 },
}

/// ns-3 `HwmpProtocol` attribute `Dot11MeshHWMPactivePathTimeout` (5000 TU): the lifetime of a
/// reactive path; ns-3 discovers the path again (a new PREQ) when it expires
/// (ns-3-dev `src/mesh/model/dot11s/hwmp-protocol.cc`, `HwmpProtocol::GetTypeId`,
/// `ForwardUnicast`).
pub const HWMP_PATH_REFRESH: Time = 5000 * 1024 * crate::time::US;
/// ns-3 `MeshWifiInterfaceMac` attribute `BeaconInterval` (0.5 s;
/// `src/mesh/model/mesh-wifi-interface-mac.cc`).
pub const BEACON_INTERVAL: Time = 500 * crate::time::MS;
/// PREQ action frame with one target: 24 (MAC header) + 2 (category, action) + 39 (PREQ
/// element: 2 + 37, IEEE 802.11-2016 9.4.2.113) + 4 (FCS).
pub const PREQ_BYTES: u32 = 69;
/// PREP action frame: 24 + 2 + 33 (PREP element: 2 + 31, 9.4.2.114) + 4.
pub const PREP_BYTES: u32 = 63;
/// A mesh beacon: 24 + 12 (timestamp, interval, capability) + SSID (2), supported rates
/// (10), Mesh ID "mesh" (6), Mesh Configuration (9), Beacon Timing with two neighbours (14)
/// + 4 (FCS): about ns-3's.
pub const BEACON_BYTES: u32 = 81;
/// Management frames' rate: the lowest basic rate.
pub const MGMT_RATE_BPS: u64 = 6_000_000;

/// Per-packet processing in each station's host (the seed's "every packet requires a constant
/// time to process"), as a receive-livelock model (Mogul and Ramakrishnan, 1997): one CPU per
/// station, two kinds of work.
/// - Ingress, high priority: every packet entering the host's IP layer (received from the air,
///   generated by a local application, or arriving over a wired link) costs `ingress` before
///   it is delivered or queued on the interface. At most `backlog` packets wait for it (Linux
///   netdev_max_backlog); beyond that they are dropped.
/// - Egress, low priority: handing the interface queue's head frame to the NIC costs
///   `egress`; the NIC contends for the channel only once it has the frame. Egress runs only
///   when no ingress work waits, so a host busy receiving or generating starves its own
///   transmissions: past a point, more input gives less throughput.
#[derive(Debug, Clone, PartialEq)]
pub struct Host {
    pub ingress: Time,
    pub egress: Time,
    pub backlog: usize,
}

impl Host {
    pub fn none() -> Host {
        Host { ingress: 0, egress: 0, backlog: 1000 }
    }
    pub fn enabled(&self) -> bool {
        self.ingress > 0 || self.egress > 0
    }
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
            host: Host::none(),
            rate_control: RateControl::Fixed,
            hwmp: false,
            mesh_beacons: false,
            tcp_acks: TcpAcks::Air,
        }
    }
}

/// A packet on the medium: the packet itself (a medium holds its packets: it drops them
/// without telling the run loop), its route position, the medium's id for it (kept over all its
/// hops on this medium: duplicate suppression and MAC ACKs match on it) and the station it is
/// sent to.
#[derive(Debug, Clone, Copy)]
pub struct Frame {
    pub id: u64,
    /// The station the frame is addressed to (its next hop on this medium).
    pub to: u16,
    /// The route position (its `slot` is not used while the medium holds the packet).
    pub r: Routed,
    pub pkt: Packet,
}

impl Frame {
    /// Bytes of the IP packet.
    #[inline]
    pub fn ip_bytes(&self) -> u32 {
        self.r.bytes()
    }
}

#[derive(Debug, Clone, Copy)]
struct Tx {
    from: usize,
    to: usize,
    /// Corrupted at the intended receiver.
    corrupted: bool,
    ack: bool,
    /// A management broadcast (no ACK); `to` is its sender.
    mgmt: bool,
    frame_id: u64,
    /// Airtime of the MAC ACK this data frame elicits.
    ack_dur: Time,
}

crate::output::schema::record! {
    /// A station's MAC and host counters.
    #[derive(Default)]
    pub struct StationStats {
        station: usize, "", "Its index on its medium (0 is the first).";
        tx_attempts: u64, "count", "Frames it started transmitting (retries included).";
        tx_success: u64, "count", "Frames acknowledged by their receiver.";
        ack_timeouts: u64, "count", "Transmissions without a MAC ACK in time (a retry follows, or a drop).";
        retry_drops: u64, "pkts", "Frames dropped after the retry limit.";
        queue_drops: u64, "pkts", "Packets dropped because its interface queue was full.";
        collisions_at_rx: u64, "count", "Frames it received overlapped by another transmission (lost).";
        frame_errors: u64, "count", "Frames it received corrupted by the channel's error model.";
        host_drops: u64, "pkts", "Packets dropped because the host's ingress backlog was full.";
        cpu_utilization: f64, "fraction", "Fraction of the run the host's CPU was busy (0 without a host model).";
    }
}

/// Counters of one hop of a medium: a station's data frames to one neighbour (management
/// frames and MAC ACKs not counted).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HopCounts {
    /// IP packets sent over the air, each once however many attempts it took (the first
    /// attempt is counted, and captured).
    pub packets: u64,
    /// Transmissions, MAC retries included.
    pub attempts: u64,
    /// Frames the neighbour decoded and passed on (a duplicate of a frame whose MAC ACK was
    /// lost not counted again).
    pub delivered: u64,
    /// Frames dropped after the retry limit.
    pub retry_drops: u64,
}

/// Packet capture taps on hops of a medium: for each tapped hop (from, to), the capture it
/// writes to and the records so far (taken by the run loop at the end of the run).
pub type Taps = Vec<(u16, u16, u32, Vec<crate::output::pcap::Rec>)>;

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
    /// Generation of the station's pending access and ACK-timeout events: an event whose
    /// generation (its low 32 bits, as events carry it) is not the current one is stale.
    gen: u64,
    /// Last frame id received from each neighbour (duplicate suppression).
    last_rx: Vec<(usize, u64)>,
    /// Sending a MAC ACK (does not change its own frame's state).
    acking: bool,
    /// The MAC ACK it will send at the pending `AirAckStart`: (to station, frame id). A station
    /// has at most one: two frames decoded at one station within SIFS would have overlapped
    /// there, and overlapping receptions are corrupted.
    ack_due: Option<(usize, u64, Time)>,
    /// The ACK timeout of the frame it waits for (SIFS + slot + its ACK's airtime).
    ack_wait: Time,
    /// Rate adaptation toward each neighbour it has sent to.
    rc: Vec<(usize, Arf)>,
    /// Management frames waiting, sent before data frames.
    mgmt: VecDeque<Mgmt>,
    /// The last PREQ id forwarded (or answered) per originator.
    preq_seen: Vec<(u16, u32)>,
    /// Host model: packets waiting for ingress processing, the CPU's current job, whether the
    /// NIC holds the interface queue's head frame, and the CPU's busy time.
    ingress: VecDeque<Frame>,
    cpu: Option<CpuJob>,
    loaded: bool,
    cpu_busy: Time,
    stats: StationStats,
    /// Per neighbour it has sent data frames to: that hop's counters.
    hops: Vec<(u16, HopCounts)>,
}

impl Station {
    /// The counters of this station's hop to station `to`.
    #[inline]
    fn hop(&mut self, to: u16) -> &mut HopCounts {
        match self.hops.iter().position(|h| h.0 == to) {
            Some(k) => &mut self.hops[k].1,
            None => {
                self.hops.push((to, HopCounts::default()));
                &mut self.hops.last_mut().expect("just pushed").1
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Data,
    Ack,
    Mgmt,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CpuJob {
    Ingress,
    Egress,
}

/// What a medium method is lent by the run loop: the current time and the event queue.
pub struct Cx<'a> {
    pub now: Time,
    pub q: &'a mut EventQueue<Event>,
}

fn dist(a: usize, b: usize) -> usize {
    a.abs_diff(b)
}

/// One 802.11 channel shared by a line of stations.
pub struct Dcf {
    pub cfg: WirelessConfig,
    /// The network node of each station.
    pub nodes: Vec<u32>,
    /// Index of station 0 among all the network's stations (events name stations by it).
    base: u32,
    st: Vec<Station>,
    txs: Vec<Tx>,
    rng: Rng,
    bg_rng: Rng,
    bg_active: u32,
    /// Medium index, for its background events.
    index: u32,
    next_id: u64,
    /// Stations whose countdown restarts after a NAV set at the end of a data frame
    /// ([`Dcf::tx_end`] fills it, [`Dcf::tx_end_finish`] empties it).
    deferred: Vec<usize>,
    /// HWMP paths (originator, target, first PREQ time), set by the line builder.
    hwmp_paths: Vec<(usize, usize, Time)>,
    /// The last PREQ id of each path.
    preq_ids: Vec<u32>,
    /// Management frames queued so far, by kind: beacons, PREQs, PREPs (not in the output).
    pub mgmt_queued: [u64; 3],
    /// Packet captures of some of its hops (None: no capture, one test per transmission).
    pub taps: Option<Box<Taps>>,
}

/// Where a decoded frame goes: station `at` of the medium received it.
pub struct Decoded {
    pub at: usize,
    pub frame: Frame,
}

impl Dcf {
    /// A medium of `nodes.len()` stations (`cfg.hops + 1`); `base` is the index of its first
    /// station among the network's stations, `index` the medium's own. The DCF draws backoffs
    /// and frame errors from `rng` and background frames from `bg_rng`.
    pub fn new(cfg: WirelessConfig, nodes: Vec<u32>, base: u32, index: u32, rng: Rng, bg_rng: Rng) -> Dcf {
        debug_assert_eq!(nodes.len(), cfg.hops + 1);
        let st = (0..nodes.len())
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
                ack_due: None,
                ack_wait: cfg.phy.ack_timeout(),
                rc: Vec::new(),
                mgmt: VecDeque::new(),
                preq_seen: Vec::new(),
                ingress: VecDeque::new(),
                cpu: None,
                loaded: false,
                cpu_busy: 0,
                stats: StationStats { station: i, ..StationStats::default() },
                hops: Vec::new(),
            })
            .collect();
        Dcf { cfg, nodes, base, st, txs: Vec::with_capacity(8), rng, bg_rng, bg_active: 0, index, next_id: 0, deferred: Vec::new(), hwmp_paths: Vec::new(), preq_ids: Vec::new(), mgmt_queued: [0; 3], taps: None }
    }

    /// The paths whose HWMP frames the medium sends (`hwmp = "reactive"`): (originator,
    /// target, time of the first PREQ).
    pub fn set_hwmp_paths(&mut self, paths: Vec<(usize, usize, Time)>) {
        self.preq_ids = vec![0; paths.len()];
        self.hwmp_paths = paths;
    }

    pub fn stations(&self) -> usize {
        self.st.len()
    }

    /// Index of the medium's first station among the network's stations.
    pub fn base(&self) -> u32 {
        self.base
    }

    /// Schedule the first background frame (when the environment has any).
    pub fn start(&mut self, q: &mut EventQueue<Event>) {
        if self.cfg.background_load > 0.0 {
            let t = self.bg_gap();
            q.schedule(t, Event::AirBackground(self.index));
        }
        if self.cfg.hwmp {
            for (k, &(orig, _, at)) in self.hwmp_paths.iter().enumerate() {
                q.schedule(at, Event::AirMgmt { station: self.ev_station(orig) as u16, kind: k as u32 + 1 });
            }
        }
        if self.cfg.mesh_beacons {
            let n = self.st.len() as Time;
            for i in 0..self.st.len() {
                q.schedule(i as Time * BEACON_INTERVAL / n, Event::AirMgmt { station: self.ev_station(i) as u16, kind: 0 });
            }
        }
    }

    /// A management timer of station i: `kind` 0 a beacon, k > 0 the PREQ of HWMP path k - 1.
    pub fn mgmt_timer(&mut self, cx: &mut Cx, i: usize, kind: u32) {
        let ev = Event::AirMgmt { station: self.ev_station(i) as u16, kind };
        if kind == 0 {
            self.mgmt_queued[0] += 1;
            self.st[i].mgmt.push_back(Mgmt::Beacon);
            cx.q.schedule(cx.now + BEACON_INTERVAL, ev);
        } else {
            let k = kind as usize - 1;
            let (orig, target, _) = self.hwmp_paths[k];
            self.preq_ids[k] += 1;
            let id = self.preq_ids[k];
            self.mgmt_queued[1] += 1;
            self.st[i].mgmt.push_back(Mgmt::Preq { orig: orig as u16, target: target as u16, id });
            cx.q.schedule(cx.now + HWMP_PATH_REFRESH, ev);
        }
        self.contend(cx, i);
    }

    /// Station `r` has seen PREQ `id` of originator `orig` (true if it had already).
    fn preq_seen(&mut self, r: usize, orig: u16, id: u32) -> bool {
        let seen = &mut self.st[r].preq_seen;
        match seen.iter_mut().find(|e| e.0 == orig) {
            Some(e) if e.1 >= id => true,
            Some(e) => {
                e.1 = id;
                false
            }
            None => {
                seen.push((orig, id));
                false
            }
        }
    }

    fn mgmt_airtime(&self, m: Mgmt) -> Time {
        let bytes = match m {
            Mgmt::Beacon => BEACON_BYTES,
            Mgmt::Preq { .. } => PREQ_BYTES,
            Mgmt::Prep { .. } => PREP_BYTES,
        };
        self.cfg.phy.legacy_airtime(bytes, MGMT_RATE_BPS)
    }

    /// Station i's rate adaptation toward station `to`.
    fn rc(&mut self, i: usize, to: usize) -> &mut Arf {
        let adaptive = self.cfg.rate_control == RateControl::Aarf;
        let n = self.cfg.phy.ladder().len();
        let rc = &mut self.st[i].rc;
        let k = match rc.iter().position(|e| e.0 == to) {
            Some(k) => k,
            None => {
                rc.push((to, Arf::new(adaptive, n)));
                rc.len() - 1
            }
        };
        &mut rc[k].1
    }

    fn ev_station(&self, i: usize) -> u32 {
        self.base + i as u32
    }

    fn bg_gap(&mut self) -> Time {
        // Poisson arrivals with rate load / frame_time.
        let mean = self.cfg.background_frame as f64 / self.cfg.background_load;
        let u: f64 = self.bg_rng.gen::<f64>().max(1e-12);
        (-u.ln() * mean) as Time
    }

    /// A new frame of the medium (packet `pkt` at route position `r` entering it), addressed
    /// to station `to`.
    pub fn frame(&mut self, r: Routed, pkt: Packet, to: usize) -> Frame {
        self.next_id += 1;
        Frame { id: self.next_id, to: to as u16, r, pkt }
    }

    /// Interface queue of station `i`: packets and bytes.
    pub fn queue_of(&self, i: usize) -> (u32, u64) {
        let q = &self.st[i].queue;
        (q.len() as u32, q.iter().map(|f| f.ip_bytes() as u64).sum())
    }

    /// The frames held by the stations (interface queues and host backlogs).
    pub fn held(&self) -> impl Iterator<Item = &Frame> {
        self.st.iter().flat_map(|s| s.queue.iter().chain(s.ingress.iter()))
    }

    /// Every hop that sent data frames, (from, to, its counters), by sender then receiver.
    pub fn hop_counts(&self) -> Vec<(usize, usize, HopCounts)> {
        let mut out: Vec<(usize, usize, HopCounts)> = self.st.iter().enumerate().flat_map(|(i, s)| s.hops.iter().map(move |&(to, c)| (i, to as usize, c))).collect();
        out.sort_by_key(|h| (h.0, h.1));
        out
    }

    /// Per-station statistics at the end of a run of length `end`.
    pub fn station_stats(&self, end: Time) -> Vec<StationStats> {
        use crate::time::to_secs;
        self.st
            .iter()
            .map(|s| StationStats { cpu_utilization: (to_secs(s.cpu_busy) / to_secs(end).max(1e-9)).min(1.0), ..s.stats.clone() })
            .collect()
    }

    /// Bytes held by the stations' queues.
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        let st: usize = self
            .st
            .iter()
            .map(|s| (s.queue.capacity() + s.ingress.capacity()) * size_of::<Frame>() + s.last_rx.capacity() * size_of::<(usize, u64)>())
            .sum();
        st + self.txs.capacity() * size_of::<Tx>()
    }

    /// Memory the capture records of its hops hold.
    pub fn tap_bytes(&self) -> usize {
        self.taps.as_deref().map_or(0, |t| t.iter().map(|h| h.3.capacity() * crate::output::pcap::RECORD_BYTES).sum())
    }

    /// A background frame begins: every station senses it; any reception it overlaps is lost.
    pub fn background(&mut self, cx: &mut Cx) {
        self.bg_active += 1;
        for t in self.txs.iter_mut() {
            t.corrupted = true;
        }
        for i in 0..self.st.len() {
            self.sense_busy(cx, i);
        }
        let d = self.cfg.background_frame;
        cx.q.schedule(cx.now + d, Event::AirBackgroundEnd(self.index));
        let gap = self.bg_gap();
        cx.q.schedule(cx.now + gap.max(1), Event::AirBackground(self.index));
    }

    pub fn background_end(&mut self, cx: &mut Cx) {
        self.bg_active -= 1;
        for i in 0..self.st.len() {
            self.sense_idle(cx, i);
        }
    }

    /// A packet enters station i's IP layer (received from the air, generated locally, or
    /// arriving over a wired link). Without a host model it passes at once: returned, for the
    /// run loop to route. Else it waits for the host's CPU (or is dropped when the backlog is
    /// full) and comes out at a later [`Dcf::cpu_done`].
    pub fn input(&mut self, cx: &mut Cx, i: usize, frame: Frame) -> Option<Frame> {
        if self.cfg.host.ingress == 0 {
            return Some(frame);
        }
        let s = &mut self.st[i];
        if s.ingress.len() >= self.cfg.host.backlog {
            s.stats.host_drops += 1;
            return None;
        }
        s.ingress.push_back(frame);
        self.cpu_kick(cx, i);
        None
    }

    /// Station i's CPU finished its job: a packet that passed ingress is returned (the run loop
    /// routes it, then calls [`Dcf::cpu_kick`]); a frame loaded into the NIC starts contending.
    pub fn cpu_done(&mut self, cx: &mut Cx, i: usize) -> Option<Frame> {
        match self.st[i].cpu.take() {
            Some(CpuJob::Ingress) => Some(self.st[i].ingress.pop_front().expect("a packet being processed")),
            Some(CpuJob::Egress) => {
                self.st[i].loaded = true;
                self.contend(cx, i);
                None
            }
            None => unreachable!("CpuDone without a job"),
        }
    }

    /// Start the CPU's next job if it is free: ingress first, then loading the interface
    /// queue's head frame into the NIC.
    pub fn cpu_kick(&mut self, cx: &mut Cx, i: usize) {
        let host = &self.cfg.host;
        let s = &mut self.st[i];
        if s.cpu.is_some() {
            return;
        }
        let (job, cost) = if !s.ingress.is_empty() {
            (CpuJob::Ingress, host.ingress)
        } else if host.egress > 0 && !s.loaded && !s.queue.is_empty() && s.state == St::Idle {
            (CpuJob::Egress, host.egress)
        } else {
            return;
        };
        s.cpu = Some(job);
        s.cpu_busy += cost;
        cx.q.schedule(cx.now + cost, Event::AirCpuDone(self.base + i as u32));
    }

    /// Put a frame in a station's interface queue (drop-tail) and start contending.
    pub fn enqueue(&mut self, cx: &mut Cx, i: usize, frame: Frame) {
        let s = &mut self.st[i];
        if s.queue.len() >= self.cfg.queue_pkts {
            s.stats.queue_drops += 1;
            return;
        }
        s.queue.push_back(frame);
        if s.queue.len() == 1 && s.state == St::Idle && s.mgmt.is_empty() {
            self.contend(cx, i);
        }
    }

    /// No transmission sensed (a NAV only delays the countdown's start, see `contend`).
    fn medium_idle(&self, i: usize) -> bool {
        self.st[i].busy == 0 && !self.st[i].acking
    }

    /// Stop a running countdown, keeping the slots already counted.
    fn freeze(&mut self, cx: &Cx, i: usize) {
        let (now, slot, difs) = (cx.now, self.cfg.phy.slot, self.cfg.phy.difs());
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
    fn contend(&mut self, cx: &mut Cx, i: usize) {
        let now = cx.now;
        if (self.st[i].queue.is_empty() && self.st[i].mgmt.is_empty()) || self.st[i].state != St::Idle {
            return;
        }
        if self.cfg.host.egress > 0 && !self.st[i].loaded && self.st[i].mgmt.is_empty() {
            // The NIC does not have the frame yet: the host's CPU must hand it over first.
            self.cpu_kick(cx, i);
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
        let station = self.ev_station(i);
        let s = &mut self.st[i];
        // The countdown runs from DIFS after the medium went idle (or the NAV ended); a
        // backoff drawn while the medium had long been idle can therefore end at once.
        let t0 = s.idle_since.max(s.nav_until) + self.cfg.phy.difs();
        let at = (t0 + s.backoff.unwrap() as Time * self.cfg.phy.slot).max(now);
        s.gen += 1;
        s.access_at = Some(at);
        cx.q.schedule(at, Event::AirAccess { station: station as u16, gen: s.gen as u32 });
    }

    /// Station i starts sensing one more transmission.
    fn sense_busy(&mut self, cx: &Cx, i: usize) {
        let s = &mut self.st[i];
        s.busy += 1;
        if s.busy == 1 && s.state == St::Idle {
            if s.access_at == Some(cx.now) {
                return; // it transmits in this same slot: a collision, not a deferral
            }
            self.freeze(cx, i);
        }
    }

    fn sense_idle(&mut self, cx: &mut Cx, i: usize) {
        let s = &mut self.st[i];
        s.busy -= 1;
        if s.busy == 0 {
            s.idle_since = cx.now;
            self.contend(cx, i);
        }
    }

    /// Station i's countdown may have ended (`gen`: the event's generation).
    pub fn access(&mut self, cx: &mut Cx, i: usize, gen: u32) {
        let s = &self.st[i];
        if s.gen as u32 == gen && s.state == St::Idle && !s.acking && s.access_at == Some(cx.now) {
            self.transmit(cx, i);
        }
    }

    fn transmit(&mut self, cx: &mut Cx, i: usize) {
        if let Some(&m) = self.st[i].mgmt.front() {
            if self.st[i].retries == 0 {
                let d = self.mgmt_airtime(m);
                let s = &mut self.st[i];
                s.access_at = None;
                s.backoff = None;
                self.start_tx(cx, i, i, d, Kind::Mgmt, 0, 0);
                return;
            }
        }
        let f = self.st[i].queue[0];
        let (d, ack_dur) = match self.cfg.rate_control {
            RateControl::Fixed => (self.cfg.phy.data_airtime(f.ip_bytes()), self.cfg.phy.ack_airtime()),
            RateControl::Arf | RateControl::Aarf => {
                let k = self.rc(i, f.to as usize).rate;
                let (rate, ack_rate) = self.cfg.phy.ladder()[k];
                (self.cfg.phy.data_airtime_at(f.ip_bytes(), rate), self.cfg.phy.ack_airtime_at(ack_rate))
            }
        };
        let s = &mut self.st[i];
        s.access_at = None;
        s.backoff = None;
        s.stats.tx_attempts += 1;
        let first = s.retries == 0;
        let hop = s.hop(f.to);
        hop.attempts += 1;
        if first {
            hop.packets += 1;
            if let Some(taps) = self.taps.as_deref_mut() {
                if let Some(t) = taps.iter_mut().find(|t| t.0 as usize == i && t.1 == f.to) {
                    t.3.push(crate::output::pcap::Rec::new(cx.now, f.pkt, f.r.ecn()));
                }
            }
        }
        self.start_tx(cx, i, f.to as usize, d, Kind::Data, f.id, ack_dur);
    }

    /// Station j sends the MAC ACK it owes (SIFS after a decoded frame).
    pub fn ack_start(&mut self, cx: &mut Cx, j: usize) {
        let (to, id, d) = self.st[j].ack_due.take().expect("a MAC ACK due");
        self.start_tx(cx, j, to, d, Kind::Ack, id, 0);
    }

    #[allow(clippy::too_many_arguments)]
    fn start_tx(&mut self, cx: &mut Cx, from: usize, to: usize, dur: Time, kind: Kind, frame_id: u64, ack_dur: Time) {
        let ack = kind == Kind::Ack;
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
        self.txs.push(Tx { from, to, corrupted, ack, mgmt: kind == Kind::Mgmt, frame_id, ack_dur });
        if ack {
            self.st[from].acking = true;
        } else {
            self.st[from].state = St::Transmitting;
        }
        for s in 0..self.st.len() {
            if s != from && dist(s, from) <= self.cfg.cs_reach {
                self.sense_busy(cx, s);
            }
        }
        cx.q.schedule(cx.now + dur, Event::AirTxEnd(self.base + from as u32));
    }

    /// Station `from`'s transmission ends. A data frame decoded at its receiver (not a
    /// duplicate) is returned for the run loop to pass into the receiver's IP layer; the run
    /// loop then calls [`Dcf::tx_end_finish`].
    pub fn tx_end(&mut self, cx: &mut Cx, from: usize) -> Option<Decoded> {
        let now = cx.now;
        self.deferred.clear();
        let k = self.txs.iter().position(|t| t.from == from).expect("a transmission in progress");
        let tx = self.txs.swap_remove(k);
        for s in 0..self.st.len() {
            if s != from && dist(s, from) <= self.cfg.cs_reach {
                self.sense_idle(cx, s);
            }
        }
        if tx.ack {
            // The ACK's sender goes back to its own business (contending, or waiting for an
            // ACK of its own). Its own ACK kept the medium busy for it: a countdown restarts
            // DIFS after the ACK ends, not after the data frame it acknowledged.
            self.st[from].acking = false;
            if self.st[from].busy == 0 {
                self.st[from].idle_since = now;
            }
            let ok = !tx.corrupted;
            let i = tx.to;
            if ok && self.st[i].state == St::WaitAck && self.st[i].queue.front().map(|f| f.id) == Some(tx.frame_id) {
                self.ack_received(cx, i);
            }
            self.contend(cx, from);
            return None;
        }
        if tx.mgmt {
            self.mgmt_end(cx, from);
            return None;
        }
        let (sifs, ack_airtime) = (self.cfg.phy.sifs, tx.ack_dur);
        let ack_timeout = sifs + self.cfg.phy.slot + ack_airtime;
        // A data frame: the sender now waits for the ACK.
        self.st[from].ack_wait = ack_timeout;
        self.st[from].state = St::WaitAck;
        self.st[from].gen += 1;
        let gen = self.st[from].gen;
        cx.q.schedule(now + ack_timeout, Event::AirAckTimeout { station: self.ev_station(from) as u16, gen: gen as u32 });
        // Stations that decode it (within rx_reach, not the receiver) defer until its ACK ends:
        // their countdown restarts DIFS after the NAV.
        let nav = now + sifs + ack_airtime;
        for s in 0..self.st.len() {
            if s != from && s != tx.to && dist(s, from) <= self.cfg.rx_reach && self.st[s].nav_until < nav {
                self.freeze(cx, s);
                self.st[s].nav_until = nav;
                self.deferred.push(s);
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
            debug_assert!(self.st[j].ack_due.is_none(), "one MAC ACK due per station");
            self.st[j].ack_due = Some((from, tx.frame_id, ack_airtime));
            cx.q.schedule(now + sifs, Event::AirAckStart(self.ev_station(j)));
            let frame = *self.st[from].queue.front().expect("the frame being sent");
            let dup = self.st[j].last_rx.iter().any(|&(n, id)| n == from && id == frame.id);
            if !dup {
                match self.st[j].last_rx.iter_mut().find(|(n, _)| *n == from) {
                    Some(e) => e.1 = frame.id,
                    None => self.st[j].last_rx.push((from, frame.id)),
                }
                self.st[from].hop(j as u16).delivered += 1;
                return Some(Decoded { at: j, frame });
            }
        }
        None
    }

    /// A management broadcast of station `from` ended: it goes back to contending, and the
    /// frames it triggers join their stations' management queues.
    fn mgmt_end(&mut self, cx: &mut Cx, from: usize) {
        let now = cx.now;
        let m = self.st[from].mgmt.pop_front().expect("the management frame sent");
        let s = &mut self.st[from];
        s.state = St::Idle;
        s.backoff = None;
        if s.busy == 0 {
            s.idle_since = now;
        }
        s.gen += 1;
        let mut woken: Vec<usize> = Vec::new();
        match m {
            Mgmt::Beacon => {}
            Mgmt::Preq { orig, target, id } => {
                let reach = self.cfg.rx_reach;
                for r in 0..self.st.len() {
                    if r == from || r == orig as usize || dist(r, from) > reach || self.preq_seen(r, orig, id) {
                        continue;
                    }
                    let next = if r == target as usize { Mgmt::Prep { orig } } else { Mgmt::Preq { orig, target, id } };
                    self.mgmt_queued[if r == target as usize { 2 } else { 1 }] += 1;
                    self.st[r].mgmt.push_back(next);
                    woken.push(r);
                }
            }
            Mgmt::Prep { orig } => {
                let o = orig as usize;
                let next = if o > from { from + 1 } else { from - 1 };
                if next != o {
                    self.mgmt_queued[2] += 1;
                    self.st[next].mgmt.push_back(Mgmt::Prep { orig });
                    woken.push(next);
                }
            }
        }
        self.contend(cx, from);
        for r in woken {
            self.contend(cx, r);
        }
    }

    /// The rest of [`Dcf::tx_end`], after the decoded frame (if any) was passed on: the
    /// stations that set a NAV resume their countdowns.
    pub fn tx_end_finish(&mut self, cx: &mut Cx) {
        for k in 0..self.deferred.len() {
            let s = self.deferred[k];
            self.contend(cx, s);
        }
        self.deferred.clear();
    }

    fn ack_received(&mut self, cx: &mut Cx, i: usize) {
        let cw_min = self.cfg.phy.cw_min;
        if self.cfg.rate_control != RateControl::Fixed {
            let to = self.st[i].queue.front().expect("the frame acknowledged").to as usize;
            self.rc(i, to).ok();
        }
        let s = &mut self.st[i];
        s.queue.pop_front();
        s.loaded = false;
        s.state = St::Idle;
        s.cw = cw_min;
        s.retries = 0;
        s.backoff = None;
        s.idle_since = cx.now;
        s.gen += 1;
        s.stats.tx_success += 1;
        // Post-backoff: a new backoff is drawn even if the queue is empty (drawn when a frame
        // arrives, from the current CW).
        self.contend(cx, i);
    }

    /// Station i's ACK timeout may have expired (`gen`: the event's generation).
    pub fn ack_timeout(&mut self, cx: &mut Cx, i: usize, gen: u32) {
        let s = &self.st[i];
        if s.gen as u32 != gen || s.state != St::WaitAck {
            return;
        }
        let (cw_min, cw_max, limit) = (self.cfg.phy.cw_min, self.cfg.phy.cw_max, self.cfg.retry_limit);
        if self.cfg.rate_control != RateControl::Fixed {
            let to = self.st[i].queue.front().expect("the frame unacknowledged").to as usize;
            self.rc(i, to).failed();
        }
        let s = &mut self.st[i];
        s.stats.ack_timeouts += 1;
        s.state = St::Idle;
        s.retries += 1;
        // retry_limit counts transmission attempts (dot11ShortRetryLimit).
        if s.retries >= limit {
            let to = s.queue.front().expect("the frame dropped").to;
            s.hop(to).retry_drops += 1;
            s.queue.pop_front();
            s.loaded = false;
            s.stats.retry_drops += 1;
            s.retries = 0;
            s.cw = cw_min;
        } else {
            s.cw = (2 * (s.cw + 1) - 1).min(cw_max);
        }
        s.backoff = None;
        s.idle_since = s.idle_since.max(cx.now - s.ack_wait);
        self.contend(cx, i);
    }
}
