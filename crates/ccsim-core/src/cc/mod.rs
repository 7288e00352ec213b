//! The congestion-control interface and the algorithm registry.
//!
//! The trait mirrors Linux's `struct tcp_congestion_ops` because every algorithm here is specified
//! against a kernel implementation: `ssthresh` (called on entering Recovery or Loss), `cong_avoid`
//! (window growth on an ACK when the stack allows growth), `set_state`, `cwnd_event`,
//! `pkts_acked` (the per-ACK RTT sample), `in_ack_event` (every ACK, with its ECE flag, before
//! the cumulative ACK is counted) and `cong_control` (an algorithm that sets cwnd and the
//! pacing rate itself on every ACK, as BBR does; the stack then skips PRR and `cong_avoid`)
//! and `undo_cwnd` (the cwnd to restore after a spurious reduction; not yet called, as the
//! stack models no undo).
//! Linux's `flags` field becomes queries: `needs_ecn` (`TCP_CONG_NEEDS_ECN`) and the ECT
//! codepoint an algorithm's data carries (`ecn_codepoint`).
//! Every hook has a no-op default, `now` is always an argument (inside [`SockState`]), and one
//! dispatch style is used everywhere: `Box<dyn CongestionControl>`, one virtual call per hook.

pub mod bbr;
pub mod bbr3;
pub mod bbr_expire;
pub mod bbr_rtprop;
pub mod bbrplus;
pub mod bic;
pub mod cdg;
pub mod chd;
pub mod copa;
pub mod cubic;
pub mod dctcp;
pub mod ertt;
pub mod external;
pub mod hd;
pub mod highspeed;
pub mod htcp;
pub mod hybla;
pub mod illinois;
pub mod jiffies;
pub mod lp;
pub mod newreno;
pub mod params;
pub mod prague;
pub mod scalable;
pub mod ucc;
pub mod vegas;
pub mod veno;
pub mod westwood;
pub mod yeah;

use crate::rng::Rng;
use crate::time::Time;
pub use params::{ParamSpec, Params};

/// Linux `TCP_INFINITE_SSTHRESH`.
pub const INFINITE_SSTHRESH: u32 = 0x7fff_ffff;

/// Linux's congestion-avoidance states (`enum tcp_ca_state`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum CaState {
    Open,
    Disorder,
    Cwr,
    Recovery,
    Loss,
}

/// Linux `enum tcp_ca_ack_event_flags`: `in_ack_event`'s flags. Only `CA_ACK_ECE` is raised;
/// `CA_ACK_SLOWPATH` and `CA_ACK_WIN_UPDATE` describe Linux's header-prediction fast path,
/// which the simulator does not model, and no algorithm here reads them.
pub const CA_ACK_ECE: u32 = 1 << 2;

/// Linux `enum tcp_ca_event`, the subset the simulator raises. (Linux's receiver-side
/// `CA_EVENT_ECN_IS_CE`/`CA_EVENT_ECN_NO_CE` are not events here: the receiver runs the one
/// state machine their handlers implement, `dctcp_ece_ack_update`, itself when the algorithm
/// needs ECN; see `tcp::receiver`.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaEvent {
    /// First transmission when no packet is in flight (after idle).
    TxStart,
    /// An RTO fired (before `set_state(Loss)`).
    Loss,
    /// A window reduction (Recovery, or the CWR of an ECE) ended with cwnd = ssthresh
    /// (`tcp_end_cwnd_reduction`; not raised for algorithms with `cong_control`).
    CompleteCwr,
}

/// The socket state a congestion controller may read and write: Linux's `struct tcp_sock`
/// fields that the ops touch. Windows are in packets (MSS-sized segments), as in Linux.
#[derive(Debug, Clone)]
pub struct SockState {
    pub now: Time,
    pub mss: u32,
    pub cwnd: u32,
    pub ssthresh: u32,
    /// Linux `snd_cwnd_cnt`: ACKed packets counted towards the next additive increase.
    pub cwnd_cnt: u32,
    pub cwnd_clamp: u32,
    pub ca_state: CaState,
    /// Segments sent and not cumulatively acknowledged (`packets_out`).
    pub packets_out: u32,
    pub sacked_out: u32,
    pub lost_out: u32,
    pub retrans_out: u32,
    /// Packets delivered (cumulatively or selectively acked), each counted once (`tp->delivered`).
    pub delivered: u64,
    /// Time of the latest delivery (`delivered_mstamp`).
    pub delivered_mstamp: Time,
    /// Packets delivered by ACKs that carried ECE (`tp->delivered_ce`, counted by
    /// `tcp_count_delivered`).
    pub delivered_ce: u64,
    /// Packets marked lost over the connection's life (`tp->lost`).
    pub lost: u64,
    /// Smoothed RTT in ns; 0 until the first sample.
    pub srtt: Time,
    /// Minimum RTT seen (`tcp_min_rtt`), in ns; `Time::MAX` until the first sample.
    pub min_rtt: Time,
    pub snd_una: u32,
    pub snd_nxt: u32,
    /// The last transmission attempt was stopped by cwnd (`tcp_is_cwnd_limited`).
    pub is_cwnd_limited: bool,
    /// Largest `packets_out` seen in the current window (`max_packets_out`).
    pub max_packets_out: u32,
    /// Linux `app_limited`: nonzero while the flow is application-limited.
    pub app_limited: u64,
    /// Pacing rate in bytes per second (`sk_pacing_rate`); 0 = not set.
    pub pacing_rate: u64,
    /// Earliest departure time of the next packet (`tcp_wstamp_ns`), for EDT pacing.
    pub next_tx_time: Time,
    /// cwnd before the current reduction (PRR's RecoverFS; BBR's saved cwnd is its own).
    pub prior_cwnd: u32,
    pub initial_cwnd: u32,
    /// The stack paces this flow (Linux `sk_pacing_status != SK_PACING_NONE`).
    pub paced: bool,
    /// Time of the last data transmission (Linux `lsndtime`).
    pub lsndtime: Time,
    /// End of the window over which cwnd use is tracked (Linux `cwnd_usage_seq`).
    pub cwnd_usage_seq: u32,
    /// The TCP timestamp clock tick (sender and receiver), for algorithms that count in ticks.
    pub ts_tick: Time,
    /// Set by an algorithm to enter CWR after the current hook: cwnd stays where the algorithm
    /// put it, with no growth and no further reduction, until everything outstanding now is
    /// acknowledged (FreeBSD CONGRECOVERY; Linux TCP_CA_CWR without PRR).
    pub cwr_request: bool,
    /// The connection is ECN-capable (Linux `tp->ecn_flags & TCP_ECN_OK`): `[tcp] ecn`.
    pub ecn: bool,
    /// While `ssthresh()` runs: true for a retransmission timeout, false for a loss detected
    /// by duplicate ACKs or SACK (FreeBSD's CC_RTO vs CC_NDUPACK; Linux does not tell).
    pub loss_is_timeout: bool,
    /// Events an algorithm records (RTprop updates, forced expiry, ...); the simulator drains
    /// them into the run's event table. Empty for most algorithms: no per-packet cost.
    pub events: Vec<CcEvent>,
}

/// A timestamped algorithm event for the run's event table.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CcEvent {
    pub time: Time,
    pub kind: &'static str,
    /// Main value (e.g. the new RTprop in ms).
    pub value: f64,
    /// Second value (e.g. the RTT sample in ms that triggered the event).
    pub value2: f64,
}

impl SockState {
    /// Record an algorithm event at the current time.
    pub fn record(&mut self, kind: &'static str, value: f64, value2: f64) {
        let time = self.now;
        self.events.push(CcEvent { time, kind, value, value2 });
    }
}

impl SockState {
    /// A socket for unit tests: MSS 1448, initial window 10, the given cwnd and ssthresh.
    #[cfg(test)]
    pub fn with_window(cwnd: u32, ssthresh: u32) -> Self {
        let mut s = SockState::new(1448, 10);
        s.cwnd = cwnd;
        s.ssthresh = ssthresh;
        s
    }

    pub fn new(mss: u32, initial_cwnd: u32) -> Self {
        SockState {
            now: 0,
            mss,
            cwnd: initial_cwnd,
            ssthresh: INFINITE_SSTHRESH,
            cwnd_cnt: 0,
            cwnd_clamp: u32::MAX / 2,
            ca_state: CaState::Open,
            packets_out: 0,
            sacked_out: 0,
            lost_out: 0,
            retrans_out: 0,
            delivered: 0,
            delivered_mstamp: 0,
            delivered_ce: 0,
            lost: 0,
            srtt: 0,
            min_rtt: Time::MAX,
            snd_una: 0,
            snd_nxt: 0,
            is_cwnd_limited: true,
            max_packets_out: 0,
            app_limited: 0,
            pacing_rate: 0,
            next_tx_time: 0,
            prior_cwnd: 0,
            initial_cwnd,
            paced: false,
            lsndtime: 0,
            cwnd_usage_seq: 0,
            ts_tick: crate::time::MS,
            cwr_request: false,
            ecn: false,
            loss_is_timeout: false,
            events: Vec::new(),
        }
    }

    /// Linux `tcp_packets_in_flight`: packets_out - (sacked_out + lost_out) + retrans_out.
    #[inline]
    pub fn packets_in_flight(&self) -> u32 {
        (self.packets_out + self.retrans_out).saturating_sub(self.sacked_out + self.lost_out)
    }

    #[inline]
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    /// Linux `tcp_is_cwnd_limited`.
    pub fn cwnd_limited(&self) -> bool {
        if self.is_cwnd_limited {
            return true;
        }
        if self.in_slow_start() {
            return self.cwnd < 2 * self.max_packets_out;
        }
        false
    }

    /// Linux `tcp_slow_start`: grow by `acked` up to ssthresh; returns the leftover acked count.
    pub fn slow_start(&mut self, acked: u32) -> u32 {
        let cwnd = (self.cwnd + acked).min(self.ssthresh);
        let left = acked - (cwnd - self.cwnd).min(acked);
        self.cwnd = cwnd.min(self.cwnd_clamp);
        left
    }

    /// Linux `tcp_cong_avoid_ai`: cwnd += 1 per `w` ACKed packets (carrying the remainder).
    pub fn cong_avoid_ai(&mut self, w: u32, acked: u32) {
        let w = w.max(1);
        if self.cwnd_cnt >= w {
            self.cwnd_cnt = 0;
            self.cwnd += 1;
        }
        self.cwnd_cnt += acked;
        if self.cwnd_cnt >= w {
            let delta = self.cwnd_cnt / w;
            self.cwnd_cnt -= delta * w;
            self.cwnd += delta;
        }
        self.cwnd = self.cwnd.min(self.cwnd_clamp);
    }
}

/// Linux `struct rate_sample` (tcp_rate.c), built on every ACK.
#[derive(Debug, Clone, Copy)]
pub struct RateSample {
    /// `tp->delivered` when the sampled packet was sent.
    pub prior_delivered: u64,
    /// `delivered_mstamp` when the sampled packet was sent; `None` if no packet was sampled.
    pub prior_mstamp: Option<Time>,
    /// Packets delivered over the interval; -1 if the sample is invalid.
    pub delivered: i64,
    /// `tp->delivered_ce` when the sampled packet was sent (Linux keeps 20 bits, here 32).
    pub prior_delivered_ce: u32,
    /// Of `delivered`, those delivered by ACKs with ECE (`rs->delivered_ce`); 0 if invalid.
    pub delivered_ce: u32,
    /// Interval in ns (max of send and ACK phases); -1 if invalid.
    pub interval: i64,
    /// RTT of the newest (s)acked never-retransmitted packet, ns; -1 if none.
    pub rtt: i64,
    /// Packets newly marked lost on this ACK.
    pub losses: u32,
    /// Packets newly (s)acked on this ACK.
    pub acked_sacked: u32,
    /// packets_in_flight before this ACK was processed.
    pub prior_in_flight: u32,
    pub is_app_limited: bool,
    pub is_retrans: bool,
    pub is_ack_delayed: bool,
    /// Packets in flight when the sampled packet was sent, counting it (`rs->tx_in_flight`,
    /// from the packet's `tx.in_flight`; BBRv3's tcp_rate.c); 0 if no packet was sampled.
    pub tx_in_flight: u32,
    /// `tp->lost` when the sampled packet was sent (`rs->prior_lost`, its `tx.lost`).
    pub prior_lost: u64,
    /// Packets marked lost between the sampled packet's transmission and this ACK
    /// (`rs->lost = tp->lost - rs->prior_lost`); 0 if the sample is invalid.
    pub lost: u32,
    /// The ACK carries ECE on an ECN connection (`rs->is_ece`, Linux FLAG_ECE; BBRv3).
    pub is_ece: bool,
}

impl Default for RateSample {
    fn default() -> Self {
        RateSample {
            prior_delivered: 0,
            prior_mstamp: None,
            delivered: -1,
            prior_delivered_ce: 0,
            delivered_ce: 0,
            interval: -1,
            rtt: -1,
            losses: 0,
            acked_sacked: 0,
            prior_in_flight: 0,
            is_app_limited: false,
            is_retrans: false,
            is_ack_delayed: false,
            tx_in_flight: 0,
            prior_lost: 0,
            lost: 0,
            is_ece: false,
        }
    }
}

/// What a segment recorded when it was last (re)transmitted (Linux `TCP_SKB_CB(skb)->tx`),
/// passed to [`CongestionControl::skb_marked_lost`] when the segment is marked lost.
#[derive(Debug, Clone, Copy, Default)]
pub struct SkbTx {
    /// Packets in flight when it was sent, counting it (`tx.in_flight`).
    pub in_flight: u32,
    /// `tp->lost` when it was sent (`tx.lost`).
    pub lost: u64,
    /// The flow was application-limited when it was sent (`tx.is_app_limited`).
    pub is_app_limited: bool,
    /// Its rate stamp is still valid (Linux `tx.delivered_mstamp != 0`: not consumed by a SACK).
    pub has_delivered_mstamp: bool,
}

/// Linux `struct ack_sample` for `pkts_acked`.
#[derive(Debug, Clone, Copy, Default)]
pub struct AckSample {
    pub pkts_acked: u32,
    /// RTT in ns of the newest newly acked never-retransmitted packet; -1 if none.
    pub rtt: i64,
    pub in_flight: u32,
    /// The ACK's timestamp option: the receiver's own clock (TSval) and the echoed sender
    /// clock (TSecr), both in ticks. `ts_val - ts_ecr` is the one-way delay plus an unknown
    /// constant clock offset.
    pub ts_val: u32,
    pub ts_ecr: u32,
}

impl AckSample {
    /// One-way delay in ticks, up to the (constant) offset between the two clocks.
    pub fn owd_ticks(&self) -> u32 {
        self.ts_val.wrapping_sub(self.ts_ecr)
    }
}

/// What an algorithm exposes for the time series (NaN where it has no such quantity).
#[derive(Debug, Clone, Copy)]
pub struct CcTelemetry {
    /// BBR's RTprop (min_rtt), ms.
    pub rtprop_ms: f64,
    /// BBR's bottleneck bandwidth estimate, bits per second.
    pub btlbw_bps: f64,
    /// Estimated bottleneck utilization rho (UCC, BBR+).
    pub rho: f64,
    /// Inferred bottleneck queue state (CDG): "unknown", "empty", "rising", "full", "falling".
    pub queue_state: Option<&'static str>,
    /// Shadow window in packets (CHD, CDG).
    pub shadow_wnd_pkts: f64,
}

impl Default for CcTelemetry {
    fn default() -> Self {
        CcTelemetry { rtprop_ms: f64::NAN, btlbw_bps: f64::NAN, rho: f64::NAN, queue_state: None, shadow_wnd_pkts: f64::NAN }
    }
}

pub trait CongestionControl: Send {
    fn name(&self) -> &'static str;
    /// Called once when the flow starts.
    fn init(&mut self, _s: &mut SockState) {}
    /// New slow-start threshold on entering Recovery or Loss (required, as in Linux).
    fn ssthresh(&mut self, s: &mut SockState) -> u32;
    /// Window growth on an ACK when the stack allows it (not in CWR/Recovery).
    fn cong_avoid(&mut self, _s: &mut SockState, _acked: u32) {}
    fn set_state(&mut self, _s: &mut SockState, _new: CaState) {}
    fn cwnd_event(&mut self, _s: &mut SockState, _ev: CaEvent) {}
    fn pkts_acked(&mut self, _s: &mut SockState, _sample: &AckSample) {}
    /// Every ACK (Linux `in_ack_event`, from `tcp_ack`): after SACK processing and the
    /// `snd_una` update, before the packets this ACK cumulatively acknowledges are counted in
    /// `delivered`/`delivered_ce` (Linux counts those in `tcp_clean_rtx_queue`, after the
    /// hook). `flags` holds [`CA_ACK_ECE`] when the ACK carries ECE on an ECN connection.
    fn in_ack_event(&mut self, _s: &mut SockState, _flags: u32) {}
    /// Algorithms that own cwnd and pacing on every ACK (Linux `cong_control`). When this
    /// returns true the stack calls [`CongestionControl::cong_control`] instead of PRR and
    /// `cong_avoid`, and does not set cwnd = ssthresh on leaving Recovery.
    fn has_cong_control(&self) -> bool {
        false
    }
    fn cong_control(&mut self, _s: &mut SockState, _rs: &RateSample) {}
    /// Linux BBRv3's `skb_marked_lost` (google/bbr v3, called from `tcp_mark_skb_lost` through
    /// `tcp_notify_skb_loss_event`): a segment was just marked lost (a first loss, or a
    /// retransmission lost again), after `SockState::lost` counted it, during loss marking
    /// (before `cong_control` of the same ACK, or in an RTO before `set_state(Loss)`).
    fn skb_marked_lost(&mut self, _s: &mut SockState, _tx: &SkbTx) {}
    /// Linux `undo_cwnd`: the cwnd to restore when a window reduction proves spurious
    /// (`tcp_undo_cwnd_reduction`). The default is `tcp_reno_undo_cwnd`, max(cwnd, prior_cwnd).
    /// The stack models no undo yet (no DSACK or Eifel detection of spurious retransmissions,
    /// see `tcp::sender`), so it never calls this hook; algorithms carry their Linux undo so
    /// that it is tested and ready when the stack gains undo.
    fn undo_cwnd(&mut self, s: &mut SockState) -> u32 {
        s.cwnd.max(s.prior_cwnd)
    }
    /// Whether the flow must be paced at `SockState::pacing_rate` (BBR sets
    /// `sk_pacing_status`); other algorithms are paced only when the scenario asks for it.
    fn wants_pacing(&self) -> bool {
        false
    }
    /// Linux `TCP_CONG_NEEDS_ECN` (`tcp_ca_needs_ecn`): on an ECN connection the receiver
    /// echoes the CE state of each segment exactly (DCTCP's `dctcp_ece_ack_update` instead of
    /// RFC 3168's latch until CWR), and retransmissions carry ECT too (`tcp_ecn_send`).
    fn needs_ecn(&self) -> bool {
        false
    }
    /// The ECT codepoint of the data segments of an ECN connection: ECT(0), as Linux's
    /// `INET_ECN_xmit`, unless the algorithm asks for ECT(1) (the L4S identifier, RFC 9331).
    fn ecn_codepoint(&self) -> crate::net::Ecn {
        crate::net::Ecn::Ect0
    }
    fn telemetry(&self) -> CcTelemetry {
        CcTelemetry::default()
    }
}

/// An algorithm's entry in the registry.
pub struct AlgorithmInfo {
    pub name: &'static str,
    pub summary: &'static str,
    pub source: &'static str,
    pub params: &'static [ParamSpec],
}

pub const ALGORITHMS: &[AlgorithmInfo] =
    &[newreno::INFO, cubic::INFO, bbr::INFO, bbr3::INFO, ucc::INFO, bbr_expire::INFO, bbr_rtprop::INFO, bbrplus::INFO, hd::INFO, chd::INFO, cdg::INFO,
      dctcp::INFO, prague::INFO, copa::INFO, vegas::INFO, westwood::INFO, illinois::INFO, htcp::INFO, bic::INFO, highspeed::INFO,
      scalable::INFO, hybla::INFO, veno::INFO, yeah::INFO, lp::INFO];

/// A built-in algorithm, or one registered while the program runs ([`external`]).
pub fn find(name: &str) -> Option<&'static AlgorithmInfo> {
    ALGORITHMS.iter().find(|a| a.name == name).or_else(|| external::find(name))
}

/// Every algorithm a scenario may name: the built-ins, then the registered ones.
pub fn names() -> Vec<&'static str> {
    let mut v: Vec<&'static str> = ALGORITHMS.iter().map(|a| a.name).collect();
    v.extend(external::names());
    v
}

/// Build an algorithm from its name and validated parameters. `rng` is the flow's own stream;
/// `flow` the flow's index in the run (registered algorithms name it in their errors).
pub fn build(name: &str, params: &Params, rng: Rng, flow: usize) -> Box<dyn CongestionControl> {
    match name {
        "newreno" => Box::new(newreno::NewReno::new(newreno::NewRenoConfig::from_params(params))),
        "cubic" => Box::new(cubic::Cubic::new(cubic::CubicConfig::from_params(params))),
        "bbr" => Box::new(bbr::Bbr::new(bbr::BbrConfig::from_params(params), rng)),
        "ucc" => Box::new(ucc::Ucc::new(ucc::UccConfig::from_params(params))),
        "bbr-expire" => Box::new(bbr_expire::BbrExpire::new(params, rng)),
        "bbr-rtprop" => Box::new(bbr_rtprop::BbrRtprop::new(params, rng)),
        "bbrplus" => Box::new(bbrplus::BbrPlus::new(params, rng)),
        "hd" => Box::new(hd::Hd::new(hd::HdConfig::from_params(params), rng)),
        "chd" => Box::new(chd::Chd::new(chd::ChdConfig::from_params(params), rng)),
        "cdg" => Box::new(cdg::Cdg::new(cdg::CdgConfig::from_params(params), rng)),
        "dctcp" => Box::new(dctcp::Dctcp::new(dctcp::DctcpConfig::from_params(params))),
        "bbr3" => Box::new(bbr3::Bbr3::new(bbr3::Bbr3Config::from_params(params), rng)),
        "westwood" => Box::new(westwood::Westwood::new()),
        "htcp" => Box::new(htcp::Htcp::new(htcp::HtcpConfig::from_params(params))),
        "bic" => Box::new(bic::Bic::new(bic::BicConfig::from_params(params))),
        "highspeed" => Box::new(highspeed::HighSpeed::new()),
        "scalable" => Box::new(scalable::Scalable::new(scalable::ScalableConfig::from_params(params))),
        "hybla" => Box::new(hybla::Hybla::new(hybla::HyblaConfig::from_params(params))),
        "vegas" => Box::new(vegas::Vegas::new(vegas::VegasConfig::from_params(params))),
        "veno" => Box::new(veno::Veno::new()),
        "yeah" => Box::new(yeah::Yeah::new()),
        "illinois" => Box::new(illinois::Illinois::new(illinois::IllinoisConfig::from_params(params))),
        "lp" => Box::new(lp::Lp::new(lp::LpConfig::from_params(params))),
        "prague" => Box::new(prague::Prague::new(prague::PragueConfig::from_params(params))),
        "copa" => Box::new(copa::Copa::new(copa::CopaConfig::from_params(params))),
        _ => external::build(name, params, rng, flow).expect("algorithm names are validated by the scenario"),
    }
}
