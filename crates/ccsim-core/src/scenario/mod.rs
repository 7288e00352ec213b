//! The scenario: parsed from the JSON form of the TOML file and validated in one place, with
//! every quantity's text converted by [`units`]. Every rejection names the field (as a path
//! like `flows[0].cc`), the value, and what is accepted. Unknown keys are errors, so a typo
//! never silently falls back to a default. A scenario describes its network as a `[bottleneck]`
//! dumbbell, `[[links]]` or a `[wireless]` line; the topology builders turn the first two
//! into the network model.

pub mod qdisc;
pub mod units;
pub mod varying;
pub mod workloads;

use crate::cc::{self, ParamSpec, Params};
use crate::limits::MAX_TOTAL_FLOWS;
use crate::tcp::{LossDetection, Pacing, TcpConfig, HEADER_BYTES};
use crate::time::{Time, MS, SEC};
use crate::topology::general::{Buffer, DirSpec, LinkSpec, Topology, WifiSpec};
use units::{Size, UnitError};
use crate::net::wifi::phy::{profile, PROFILES};
use crate::net::wifi::rate::{RateControl, RATE_CONTROLS};
use crate::net::wifi::{Host, TcpAcks, WirelessConfig};
use serde_json::{Map, Value};
use std::fmt;

#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioError {
    pub path: String,
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

impl std::error::Error for ScenarioError {}

fn err<T>(path: &str, message: impl Into<String>) -> Result<T, ScenarioError> {
    Err(ScenarioError { path: path.to_string(), message: message.into() })
}

/// Values longer than this are cut short in messages.
const SHOW_MAX: usize = 80;

/// A value as written, in JSON notation (strings quoted and escaped), cut short if long: a
/// message stays one readable line whatever the input.
fn show(v: &Value) -> String {
    shorten(&v.to_string())
}

fn shorten(s: &str) -> String {
    let n = s.chars().count();
    if n <= SHOW_MAX {
        return s.to_string();
    }
    let head: String = s.chars().take(SHOW_MAX - 20).collect();
    format!("{head}... ({n} characters)")
}

/// A key as it appears in a path: bare if it is a plain TOML key, else quoted (and cut short).
fn key_text(k: &str) -> String {
    if !k.is_empty() && k.len() <= SHOW_MAX && k.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-') {
        k.to_string()
    } else {
        shorten(&Value::from(k).to_string())
    }
}

fn join(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_string()
    } else {
        format!("{parent}.{key}")
    }
}

/// A table being read: tracks the path and rejects keys nobody asked for.
struct Table<'a> {
    path: String,
    map: &'a Map<String, Value>,
    allowed: Vec<&'static str>,
}

impl<'a> Table<'a> {
    fn new(path: &str, v: &'a Value, allowed: &[&'static str]) -> Result<Self, ScenarioError> {
        match v {
            Value::Object(map) => Ok(Table { path: path.to_string(), map, allowed: allowed.to_vec() }),
            other => err(path, format!("expected a table, got {}", show(other))),
        }
    }

    fn check_unknown(&self) -> Result<(), ScenarioError> {
        for k in self.map.keys() {
            if self.path.is_empty() && (k == "sweep" || k == "runs") {
                return err(k, "a sweep file: run it with `ccsim sweep FILE` (the [sweep] table and `runs` are not scenario keys)");
            }
            if !self.allowed.contains(&k.as_str()) {
                let mut acc = self.allowed.clone();
                acc.sort();
                return err(&join(&self.path, &key_text(k)), format!("unknown key; accepted keys here: {}", acc.join(", ")));
            }
        }
        Ok(())
    }

    fn get(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key)
    }

    fn p(&self, key: &str) -> String {
        join(&self.path, key)
    }

    fn require(&self, key: &str, what: &str) -> Result<&'a Value, ScenarioError> {
        self.get(key).ok_or_else(|| ScenarioError {
            path: self.p(key),
            message: format!("missing required field; accepted: {what}"),
        })
    }
}

const RATE_HELP: &str = "a rate with unit bps, kbps, Mbps or Gbps, e.g. \"10Mbps\"";
const TIME_HELP: &str = "a time with unit ns, us, ms or s, e.g. \"20ms\"";
const BUFFER_HELP: &str = "a size in pkt, B, KB, MB, KiB or MiB, or a multiple of the BDP, e.g. \"50pkt\", \"64KiB\", \"2bdp\"";
const SIZE_HELP: &str = "a size in B, KB, MB, GB, KiB, MiB or GiB, e.g. \"10MB\"";
/// The ranges of the unit parsers (crate::units), as accepted values.
const RATE_RANGE: &str = "a rate from 1bps to 10000Gbps";
const BUFFER_RANGE: &str = "a buffer from 1pkt to 1000000000pkt, from 1B to 1000000GB, or above 0bdp up to 1000bdp";
const SIZE_RANGE: &str = "a size from 1B to 1000000GB";
const PPS_RANGE: &str = "a number of packets per second in (0, 1e7], e.g. \"500pps\"";

fn as_str<'v>(path: &str, v: &'v Value, what: &str) -> Result<&'v str, ScenarioError> {
    v.as_str().map_or_else(|| err(path, format!("expected a string, got {}; accepted: {what}", show(v))), Ok)
}

/// A rate's error: malformed (`help` says what is accepted) or a number out of range.
fn rate_error<T>(path: &str, v: &Value, e: UnitError, help: &str) -> Result<T, ScenarioError> {
    match e {
        UnitError::Malformed => err(path, format!("malformed rate {}; accepted: {help}", show(v))),
        UnitError::Negative | UnitError::NotPositive => err(path, format!("{} must be positive; accepted: {RATE_RANGE}", show(v))),
        UnitError::Fraction | UnitError::OutOfRange => err(path, format!("{} is out of range; accepted: {RATE_RANGE}", show(v))),
    }
}

/// A size's error: malformed (`help` says what is accepted) or a number outside `range`.
fn size_error<T>(path: &str, v: &Value, e: UnitError, help: &str, range: &str) -> Result<T, ScenarioError> {
    match e {
        UnitError::Malformed => err(path, format!("malformed size {}; accepted: {help}", show(v))),
        UnitError::Fraction => err(path, format!("{} is not a whole number of packets; accepted: {range}", show(v))),
        UnitError::Negative | UnitError::NotPositive => err(path, format!("{} must be positive; accepted: {range}", show(v))),
        UnitError::OutOfRange => err(path, format!("{} is out of range; accepted: {range}", show(v))),
    }
}

fn parse_rate(path: &str, v: &Value) -> Result<u64, ScenarioError> {
    let s = as_str(path, v, RATE_HELP)?;
    units::parse_rate(s).or_else(|e| rate_error(path, v, e, RATE_HELP))
}

/// A time in [lo, hi]; `what` describes that range.
fn time_in(path: &str, v: &Value, lo: Time, hi: Time, what: &str) -> Result<Time, ScenarioError> {
    let s = as_str(path, v, TIME_HELP)?;
    let t = match units::parse_time(s) {
        Ok(t) => t,
        Err(UnitError::Malformed) => return err(path, format!("malformed time {}; accepted: {TIME_HELP}", show(v))),
        Err(UnitError::Negative) if lo == 0 => return err(path, format!("{} must not be negative; accepted: {what}", show(v))),
        Err(UnitError::Negative | UnitError::NotPositive) => return err(path, format!("{} must be positive; accepted: {what}", show(v))),
        Err(UnitError::Fraction | UnitError::OutOfRange) => return err(path, format!("{} is out of range; accepted: {what}", show(v))),
    };
    if t < lo || t > hi {
        return err(path, format!("{} is out of range; accepted: {what}", show(v)));
    }
    Ok(t)
}

fn int_in(path: &str, v: &Value, lo: i64, hi: i64) -> Result<i64, ScenarioError> {
    let Some(n) = v.as_i64() else {
        if v.is_u64() {
            // An integer above 2^63 - 1: a number, just too large.
            return err(path, format!("{} is out of range; accepted: an integer in [{lo}, {hi}]", show(v)));
        }
        return err(path, format!("expected an integer, got {}; accepted: an integer in [{lo}, {hi}]", show(v)));
    };
    if n < lo || n > hi {
        return err(path, format!("{n} is out of range; accepted: an integer in [{lo}, {hi}]"));
    }
    Ok(n)
}

fn float_in(path: &str, v: &Value, lo: f64, hi: f64, what: &str) -> Result<f64, ScenarioError> {
    let Some(x) = v.as_f64() else {
        return err(path, format!("expected a number, got {}; accepted: {what}", show(v)));
    };
    if !(x >= lo && x <= hi) {
        return err(path, format!("{} is out of range; accepted: {what}", show(v)));
    }
    Ok(x)
}

fn boolean(path: &str, v: &Value) -> Result<bool, ScenarioError> {
    v.as_bool().map_or_else(|| err(path, format!("expected true or false, got {}", show(v))), Ok)
}

#[derive(Debug, Clone, PartialEq)]
pub struct BottleneckConfig {
    pub rate_bps: u64,
    pub delay: Time,
    pub buffer: Size,
    /// Resolved limits: at most one is Some.
    pub buffer_pkts: Option<u64>,
    pub buffer_bytes: Option<u64>,
    pub loss: f64,
    pub ack_loss: f64,
    /// The bottleneck direction's queue discipline (the ACK direction has no queue).
    pub qdisc: qdisc::QdiscConfig,
    /// A trace or schedules in place of the constant rate, delay or loss.
    pub vary: varying::VarySpec,
    /// `tick`: serve the bottleneck direction as a FreeBSD Dummynet pipe on a kernel tick of
    /// this length (see [`crate::net::link::TickPipe`]); None: the exact link.
    pub tick: Option<Time>,
    /// `tick_acks`: the ACK direction is a Dummynet pipe too (the delay only, `bw 0`), on the
    /// same tick.
    pub tick_acks: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct FlowConfig {
    /// Index of the `[[flows]]` entry this flow came from.
    pub group: usize,
    pub cc: String,
    pub params: Params,
    pub tcp: TcpConfig,
    pub access_rate_bps: u64,
    pub access_delay: Time,
    pub start: Time,
    pub stop: Option<Time>,
    pub size: Option<u64>,
    /// A UDP flow's traffic (None: TCP with `cc`).
    pub udp: Option<UdpConfig>,
}

/// A UDP flow: `pps` datagrams per second of `size` payload bytes while on; always on
/// (constant bit rate) unless `onoff` is given.
#[derive(Debug, Clone, PartialEq)]
pub struct UdpConfig {
    pub pps: f64,
    pub size: u32,
    pub onoff: Option<OnOff>,
}

/// On/off periods of a UDP flow: each on period sends at the flow's rate, each off period is
/// silent; their lengths are drawn independently with means `on` and `off`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OnOff {
    pub on: Time,
    pub off: Time,
    pub dist: OnOffDist,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum OnOffDist {
    Exponential,
    /// Pareto with this shape (> 1), its scale set from the mean: mean x (shape - 1) / shape.
    Pareto(f64),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    pub name: Option<String>,
    pub duration: Time,
    pub seed: u64,
    pub sample_interval: Time,
    /// The network: the `[bottleneck]` dumbbell or `[[links]]`.
    pub network: NetworkConfig,
    /// One entry per flow, `count` expanded, in file order.
    pub flows: Vec<FlowConfig>,
    /// `[[workloads]]`: short flows arriving at random (empty without).
    pub workloads: Vec<crate::workload::WorkloadConfig>,
    /// The input with defaults filled in (the normalised form `validate` returns).
    pub normalized: Value,
}

/// The network a wired scenario describes.
#[derive(Debug, Clone, PartialEq)]
pub enum NetworkConfig {
    /// `[bottleneck]`: one bottleneck, each flow on an access link of its own.
    Dumbbell(BottleneckConfig),
    /// `[[links]]`: any nodes and links; each flow's node path (count expanded, in flow order).
    /// `bdp_mss` sizes the packets of a buffer given in BDP (the `[tcp]` MSS).
    Links { topology: Topology, paths: Vec<Vec<u32>>, bdp_mss: u32 },
}

impl Scenario {
    /// The dumbbell's bottleneck (None for a `[[links]]` network).
    pub fn bottleneck(&self) -> Option<&BottleneckConfig> {
        match &self.network {
            NetworkConfig::Dumbbell(b) => Some(b),
            NetworkConfig::Links { .. } => None,
        }
    }
}

/// Most packets per second of a UDP flow, however its rate is written.
pub const MAX_UDP_PPS: f64 = 1e7;

/// Seeds are accepted in [0, 2^63 - 1] everywhere (TOML integers are signed 64-bit).
pub const MAX_SEED: u64 = i64::MAX as u64;

const TOP_KEYS: &[&str] = &["name", "description", "duration", "seed", "sample_interval", "bottleneck", "links", "wifi", "tcp", "flows", "workloads"];
/// Keys of a `[[wifi]]` entry: its stations and the `[wireless]` table's channel settings.
const WIFI_KEYS: &[&str] = &[
    "stations", "profile", "environment", "queue", "rx_reach", "cs_reach", "if_reach", "retry_limit", "fer", "background_load", "background_frame",
    "host", "rts_cts", "rate_control", "hwmp", "mesh_beacons", "tcp_acks",
];
/// Most stations over all `[[wifi]]` lines (events name a station by a 16-bit number).
pub const MAX_STATIONS: usize = 65_535;
const LINK_KEYS: &[&str] = &["between", "rate", "delay", "buffer", "loss", "reverse", "qdisc", "qdisc_params", "ecn", "reorder", "tick"];
const LINK_DIR_KEYS: &[&str] = &["rate", "delay", "buffer", "loss", "qdisc", "qdisc_params", "ecn", "reorder", "tick"];
const BOTTLENECK_KEYS: &[&str] = &["rate", "delay", "buffer", "loss", "ack_loss", "qdisc", "qdisc_params", "ecn", "reorder", "tick", "tick_acks"];
/// Accepted values of `bottleneck.tick`.
const TICK_HELP: &str = "a kernel tick from 1us to 1s, e.g. \"1ms\" (Dummynet at HZ = 1000), or no key for the exact link";
const TCP_KEYS: &[&str] = &[
    "mss", "delayed_ack", "delack_timeout", "min_rto", "max_rto", "initial_rto", "initial_cwnd", "rwnd", "timestamp_tick", "pacing", "dupthresh",
    "recovery", "ecn", "tsecr_rtt", "rto_estimator",
];
const FLOW_KEYS: &[&str] = &["cc", "count", "access_rate", "access_delay", "start", "stop", "size", "params"];
/// Flow keys of a `[wireless]` scenario only.
const WIRELESS_FLOW_KEYS: &[&str] = &["protocol", "rate", "packet_size", "src", "dst"];
/// Keys of a wired UDP flow's on/off pattern.
const ONOFF_KEYS: &[&str] = &["on_time", "off_time", "on_off", "pareto_shape"];

/// Defaults of the `[tcp]` table, in the scenario's own notation.
fn tcp_defaults() -> Vec<(&'static str, Value)> {
    vec![
        ("mss", Value::from(1448)),
        ("delayed_ack", Value::from(true)),
        ("delack_timeout", Value::from("40ms")),
        ("min_rto", Value::from("200ms")),
        ("max_rto", Value::from("120s")),
        ("initial_rto", Value::from("1s")),
        ("initial_cwnd", Value::from(10)),
        ("rwnd", Value::from("unlimited")),
        ("timestamp_tick", Value::from("1ms")),
        ("pacing", Value::from("auto")),
        ("dupthresh", Value::from(3)),
        ("recovery", Value::from("rfc6675")),
        ("ecn", Value::from(false)),
        ("tsecr_rtt", Value::from(false)),
        ("rto_estimator", Value::from("rfc6298")),
    ]
}

fn apply_tcp_key(tcp: &mut TcpConfig, path: &str, key: &str, v: &Value) -> Result<(), ScenarioError> {
    match key {
        "mss" => tcp.mss = int_in(path, v, 88, 65_000)? as u32,
        "delayed_ack" => tcp.delayed_ack = boolean(path, v)?,
        "ecn" => tcp.ecn = boolean(path, v)?,
        "tsecr_rtt" => tcp.tsecr_rtt = boolean(path, v)?,
        "delack_timeout" => tcp.delack_timeout = time_in(path, v, MS, SEC, "a time from 1ms to 1s")?,
        "min_rto" => tcp.min_rto = time_in(path, v, MS, 60 * SEC, "a time from 1ms to 60s")?,
        "max_rto" => tcp.max_rto = time_in(path, v, 10 * MS, 3600 * SEC, "a time from 10ms to 3600s")?,
        "initial_rto" => tcp.initial_rto = time_in(path, v, MS, 60 * SEC, "a time from 1ms to 60s")?,
        "initial_cwnd" => tcp.initial_cwnd = int_in(path, v, 1, 10_000)? as u32,
        "rwnd" => {
            let s = as_str(path, v, &format!("\"unlimited\" or {SIZE_HELP}"))?;
            tcp.rwnd = if s == "unlimited" {
                u64::MAX
            } else {
                let range = format!("\"unlimited\" or {SIZE_RANGE}");
                match units::parse_size(s, false, false) {
                    Ok(Size::Bytes(b)) if b >= 1 => b,
                    Ok(_) => return size_error(path, v, UnitError::NotPositive, "", &range),
                    Err(e) => return size_error(path, v, e, &format!("\"unlimited\" or {SIZE_HELP}"), &range),
                }
            };
        }
        "timestamp_tick" => tcp.ts_tick = time_in(path, v, crate::time::US, SEC, "a time from 1us to 1s")?,
        "pacing" => {
            tcp.pacing = match v {
                Value::Bool(true) => Pacing::On,
                Value::Bool(false) => Pacing::Off,
                Value::String(s) if s == "auto" => Pacing::Auto,
                _ => return err(path, format!("invalid value {}; accepted: \"auto\", true or false", show(v))),
            }
        }
        "dupthresh" => tcp.dupthresh = int_in(path, v, 1, 1000)? as u32,
        "recovery" => {
            tcp.recovery = match v.as_str() {
                Some("rfc6675") => LossDetection::Rfc6675,
                Some("rack") => LossDetection::Rack,
                _ => return err(path, format!("invalid value {}; accepted: \"rfc6675\" or \"rack\"", show(v))),
            }
        }
        "rto_estimator" => {
            tcp.rto_estimator = match v.as_str() {
                Some("rfc6298") => crate::tcp::rtt::RtoEstimator::Rfc6298,
                Some("linux") => crate::tcp::rtt::RtoEstimator::Linux,
                _ => return err(path, format!("invalid value {}; accepted: \"rfc6298\" or \"linux\"", show(v))),
            }
        }
        _ => unreachable!(),
    }
    Ok(())
}

fn parse_params(path: &str, cc_name: &str, v: Option<&Value>) -> Result<Params, ScenarioError> {
    let info = cc::find(cc_name).expect("validated algorithm");
    parse_param_table(path, "algorithm", cc_name, info.params, v)
}

/// A table of parameters (`params`, `qdisc_params`) checked against `specs`, the declared
/// parameters of the algorithm or queue discipline (`kind`) `name`; defaults fill the rest. A
/// parameter in milliseconds also takes a time with its unit ("5ms", "100us").
fn parse_param_table(path: &str, kind: &str, name: &str, specs: &[ParamSpec], v: Option<&Value>) -> Result<Params, ScenarioError> {
    let mut params = Params::defaults(specs);
    let Some(v) = v else { return Ok(params) };
    let Value::Object(map) = v else {
        return err(path, format!("expected a table of parameters, got {}", show(v)));
    };
    for (k, val) in map {
        let kp = format!("{path}.{}", key_text(k));
        let Some(spec) = specs.iter().find(|s| s.name == k) else {
            let names: Vec<&str> = specs.iter().map(|s| s.name).collect();
            let accepted = if names.is_empty() { "none".to_string() } else { names.join(", ") };
            return err(&kp, format!("unknown parameter of {kind} \"{name}\"; accepted: {accepted}"));
        };
        let is_ms = spec.unit == "ms";
        let range = || if is_ms { format!("{} (ms), or a time such as \"5ms\"", spec.range_text()) } else { format!("{} ({})", spec.range_text(), spec.unit) };
        let x = if spec.boolean {
            match val {
                Value::Bool(b) => *b as u8 as f64,
                _ => return err(&kp, format!("{} is not valid for \"{name}\"; accepted: true or false", show(val))),
            }
        } else {
            let x = match (val, is_ms) {
                (Value::String(t), true) => match units::parse_time(t) {
                    Ok(ns) => ns as f64 / MS as f64,
                    Err(_) => return err(&kp, format!("{} is not valid for \"{name}\"; accepted: {}", show(val), range())),
                },
                _ => match val.as_f64() {
                    Some(x) => x,
                    None if is_ms => return err(&kp, format!("{} is not valid for \"{name}\"; accepted: {}", show(val), range())),
                    None => return err(&kp, format!("{} is not valid for \"{name}\"; accepted: {}", show(val), spec.range_text())),
                },
            };
            if !(x >= spec.min && x <= spec.max) || (spec.integer && x.fract() != 0.0) {
                return err(&kp, format!("{} is out of range for \"{name}\"; accepted: {}", show(val), range()));
            }
            x
        };
        params.set(k, x);
    }
    Ok(params)
}

/// What every scenario has, whatever its network.
struct Common {
    name: Option<String>,
    duration: Time,
    seed: u64,
    sample_interval: Time,
    tcp: TcpConfig,
    norm: Map<String, Value>,
    tcp_norm: Map<String, Value>,
}

fn parse_common(top: &Table) -> Result<Common, ScenarioError> {
    let mut norm = Map::new();
    let name = match top.get("name") {
        None => None,
        Some(x) => Some(as_str("name", x, "a string")?.to_string()),
    };
    if let Some(d) = top.get("description") {
        as_str("description", d, "a string")?;
    }
    let dv = top.require("duration", "a time such as \"100s\"")?;
    let duration = time_in("duration", dv, MS, 1_000_000 * SEC, "a time from 1ms to 1000000s")?;
    let seed = match top.get("seed") {
        None => 1,
        Some(x) => int_in("seed", x, 0, MAX_SEED as i64)? as u64,
    };
    let siv = top.get("sample_interval").cloned().unwrap_or(Value::from("100ms"));
    let sample_interval = time_in("sample_interval", &siv, MS, duration.max(MS), "a time from 1ms to the duration")?;
    for k in ["name", "description", "duration"] {
        if let Some(x) = top.get(k) {
            norm.insert(k.into(), x.clone());
        }
    }
    norm.insert("seed".into(), Value::from(seed));
    norm.insert("sample_interval".into(), siv);

    // [tcp]: defaults for every flow.
    let mut tcp = TcpConfig::default();
    let mut tcp_norm = Map::new();
    for (k, dv) in tcp_defaults() {
        tcp_norm.insert(k.into(), dv);
    }
    if let Some(tv) = top.get("tcp") {
        let t = Table::new("tcp", tv, TCP_KEYS)?;
        t.check_unknown()?;
        for k in TCP_KEYS {
            if let Some(x) = t.get(k) {
                apply_tcp_key(&mut tcp, &t.p(k), k, x)?;
                tcp_norm.insert((*k).into(), x.clone());
            }
        }
    }
    if tcp.max_rto < tcp.min_rto {
        return err("tcp.max_rto", "must not be below tcp.min_rto");
    }
    Ok(Common { name, duration, seed, sample_interval, tcp, norm, tcp_norm })
}

/// A `[[flows]]` entry's traffic: TCP with an algorithm, or UDP constant bit rate.
#[derive(Debug, Clone, PartialEq)]
pub enum Traffic {
    Tcp,
    /// `pps` datagrams per second of `size` payload bytes.
    Udp { pps: f64, size: u32 },
}

/// One flow as parsed, before it is mapped onto a network.
struct ParsedFlow {
    cfg: FlowConfig,
    traffic: Traffic,
    src: usize,
    dst: usize,
    /// On `[[links]]`: the `[[flows]]` entry's src, dst and path as written (node names).
    ends: Option<Ends>,
}

#[derive(Debug, Clone)]
struct Ends {
    src: String,
    dst: String,
    path: Option<Vec<String>>,
}

/// Which network the flows run on: their keys differ.
#[derive(Debug, Clone, Copy, PartialEq)]
enum FlowsOn {
    Dumbbell,
    /// A wireless line of stations 0..=hops.
    Wireless(usize),
    Links,
}

/// Parse `[[flows]]`. A wireless line (stations 0..=hops) allows `protocol`, `rate`,
/// `packet_size`, `src` and `dst` (station numbers), and has no access links; `[[links]]`
/// flows name their `src` and `dst` nodes and may give a `path`.
fn parse_flows(top: &Table, c: &Common, on: FlowsOn) -> Result<(Vec<ParsedFlow>, Vec<Value>), ScenarioError> {
    let hops = match on {
        FlowsOn::Wireless(h) => Some(h),
        _ => None,
    };
    if top.get("flows").is_none() && top.get("workloads").is_some() && hops.is_none() {
        // A network of workloads only.
        return Ok((Vec::new(), Vec::new()));
    }
    let fv = top.require("flows", &format!("one or more [[flows]] tables, each with cc = one of {}", cc::names().join(", ")))?;
    let Value::Array(groups) = fv else {
        return err("flows", format!("expected an array of tables ([[flows]]), got {}", show(fv)));
    };
    if groups.is_empty() {
        return err("flows", "empty; accepted: one or more [[flows]] tables");
    }
    let mut allowed_flow: Vec<&'static str> = FLOW_KEYS.to_vec();
    allowed_flow.extend_from_slice(TCP_KEYS);
    allowed_flow.extend_from_slice(WIRELESS_FLOW_KEYS);
    allowed_flow.push("path");
    allowed_flow.extend_from_slice(ONOFF_KEYS);
    let duration = c.duration;
    let mut flows = Vec::new();
    let mut flows_norm = Vec::new();
    for (gi, g) in groups.iter().enumerate() {
        let gp = format!("flows[{gi}]");
        let t = Table::new(&gp, g, &allowed_flow)?;
        t.check_unknown()?;
        match on {
            FlowsOn::Dumbbell => {
                for k in ["src", "dst", "path"] {
                    if t.get(k).is_some() {
                        let used = match k {
                            "path" => "only used with [[links]]",
                            _ => "only used in a [wireless] scenario or with [[links]]",
                        };
                        return err(&t.p(k), format!("{used}; a dumbbell flow runs from its own sender over its access link"));
                    }
                }
            }
            FlowsOn::Wireless(_) => {
                for k in ["access_rate", "access_delay", "path"] {
                    if t.get(k).is_some() {
                        return err(&t.p(k), "not used in a [wireless] scenario: flows run between stations of the line (use src and dst)");
                    }
                }
                for k in ONOFF_KEYS {
                    if t.get(k).is_some() {
                        return err(&t.p(k), "on/off UDP flows run on wired networks ([bottleneck], [[links]]); a [wireless] line's UDP flows are constant bit rate");
                    }
                }
            }
            FlowsOn::Links => {
                for k in ["access_rate", "access_delay"] {
                    if t.get(k).is_some() {
                        return err(&t.p(k), "not used with [[links]]: a host's link to the network is a [[links]] entry of its own");
                    }
                }
            }
        }
        let mut fnorm = Map::new();
        let protocol = match t.get("protocol") {
            None => "tcp",
            Some(x) => match x.as_str() {
                Some("tcp") => "tcp",
                Some("udp") => "udp",
                _ => return err(&t.p("protocol"), format!("invalid value {}; accepted: \"tcp\" or \"udp\"", show(x))),
            },
        };
        if hops.is_some() || protocol == "udp" {
            fnorm.insert("protocol".into(), Value::from(protocol));
        }
        let mut onoff = None;
        let (cc_name, traffic) = if protocol == "udp" {
            for k in ["cc", "params", "size"].iter().chain(TCP_KEYS.iter()) {
                if t.get(k).is_some() {
                    let hint = if *k == "size" { " (the datagram size is packet_size)" } else { "" };
                    return err(&t.p(k), format!("not used by a UDP flow{hint}; accepted keys for protocol = \"udp\": rate, packet_size, count, start, stop, src, dst, on_time, off_time, on_off, pareto_shape"));
                }
            }
            let psv = t.get("packet_size").cloned().unwrap_or(Value::from(1000));
            let size = int_in(&t.p("packet_size"), &psv, 1, 65_507)? as u32;
            let rv = t.require("rate", "a packet rate such as \"500pps\" or a bit rate such as \"4Mbps\" (of UDP payload)")?;
            let rs = as_str(&t.p("rate"), rv, "a packet rate such as \"500pps\" or a bit rate such as \"4Mbps\"")?;
            let pps = if let Some(n) = rs.strip_suffix("pps") {
                match units::parse_number(n) {
                    Some(x) if x > 0.0 && x <= MAX_UDP_PPS => x,
                    None => return err(&t.p("rate"), format!("malformed packet rate {}; accepted: {PPS_RANGE}", show(rv))),
                    Some(x) if x <= 0.0 => return err(&t.p("rate"), format!("{} must be positive; accepted: {PPS_RANGE}", show(rv))),
                    Some(_) => return err(&t.p("rate"), format!("{} is out of range; accepted: {PPS_RANGE}", show(rv))),
                }
            } else {
                match units::parse_rate(rs) {
                    // The cap is on packets, however the rate is written.
                    Ok(bps) => match bps as f64 / (8.0 * size as f64) {
                        x if x <= MAX_UDP_PPS => x,
                        x => {
                            return err(
                                &t.p("rate"),
                                format!(
                                    "{} with packet_size = {size} is {x:.4e} packets per second, out of range; accepted: at most 1e7 packets per second (rate / (8 x packet_size))",
                                    show(rv)
                                ),
                            )
                        }
                    },
                    Err(e) => return rate_error(&t.p("rate"), rv, e, &format!("a packet rate such as \"500pps\" or {RATE_HELP}")),
                }
            };
            fnorm.insert("rate".into(), rv.clone());
            fnorm.insert("packet_size".into(), psv);
            onoff = parse_onoff(&t, &mut fnorm)?;
            ("udp", Traffic::Udp { pps, size })
        } else {
            for k in ["rate", "packet_size"].iter().chain(ONOFF_KEYS) {
                if t.get(k).is_some() {
                    return err(&t.p(k), "only used by a UDP flow (protocol = \"udp\")");
                }
            }
            let ccv = t.require("cc", &format!("one of {}", cc::names().join(", ")))?;
            let cc_name = as_str(&t.p("cc"), ccv, &cc::names().join(", "))?;
            if cc::find(cc_name).is_none() {
                return err(&t.p("cc"), format!("unknown algorithm {}; accepted: {}", show(ccv), cc::names().join(", ")));
            }
            fnorm.insert("cc".into(), Value::from(cc_name));
            (cc_name, Traffic::Tcp)
        };
        let count = match t.get("count") {
            None => 1,
            Some(x) => int_in(&t.p("count"), x, 1, 100_000)? as usize,
        };
        // Bound the flows of all entries together, before expanding this one.
        let total = flows.len() + count;
        if total > MAX_TOTAL_FLOWS {
            let need = crate::limits::bytes_text((total as u64).saturating_mul(crate::limits::TCP_FLOW_BYTES));
            return err(
                &t.p("count"),
                format!(
                    "{count} brings the flows of all entries to {total}, too many (their state alone would need about {need}); accepted: at most {MAX_TOTAL_FLOWS} flows in all [[flows]] entries together"
                ),
            );
        }
        fnorm.insert("count".into(), Value::from(count));
        let (mut access_rate_bps, mut access_delay) = (0, 0);
        if on == FlowsOn::Dumbbell {
            let arv = t.get("access_rate").cloned().unwrap_or(Value::from("1Gbps"));
            access_rate_bps = parse_rate(&t.p("access_rate"), &arv)?;
            let adv = t.get("access_delay").cloned().unwrap_or(Value::from("0ms"));
            access_delay = time_in(&t.p("access_delay"), &adv, 0, 100 * SEC, "a time from 0s to 100s")?;
            fnorm.insert("access_rate".into(), arv);
            fnorm.insert("access_delay".into(), adv);
        }
        let (mut src, mut dst) = (0, 0);
        if let Some(h) = hops {
            src = match t.get("src") {
                None => 0,
                Some(x) => int_in(&t.p("src"), x, 0, h as i64)? as usize,
            };
            dst = match t.get("dst") {
                None => h,
                Some(x) => int_in(&t.p("dst"), x, 0, h as i64)? as usize,
            };
            if src == dst {
                return err(&t.p("dst"), format!("{dst} is the flow's own source station; accepted: a station in [0, {h}] other than src"));
            }
            fnorm.insert("src".into(), Value::from(src));
            fnorm.insert("dst".into(), Value::from(dst));
        }
        let mut ends = None;
        if on == FlowsOn::Links {
            let node_help = "a node name of [[links]]";
            let src = as_str(&t.p("src"), t.require("src", node_help)?, node_help)?.to_string();
            let dst = as_str(&t.p("dst"), t.require("dst", node_help)?, node_help)?.to_string();
            if src == dst {
                return err(&t.p("dst"), format!("\"{dst}\" is the flow's own src; accepted: another node of [[links]]"));
            }
            let path = match t.get("path") {
                None => None,
                Some(pv) => {
                    let help = "an array of node names from src to dst, e.g. [\"a\", \"r1\", \"b\"]";
                    let Value::Array(items) = pv else {
                        return err(&t.p("path"), format!("expected an array, got {}; accepted: {help}", show(pv)));
                    };
                    let mut names = Vec::with_capacity(items.len());
                    for (k, x) in items.iter().enumerate() {
                        names.push(as_str(&format!("{}[{k}]", t.p("path")), x, node_help)?.to_string());
                    }
                    Some(names)
                }
            };
            ends = Some(Ends { src, dst, path });
        }
        let sv = t.get("start").cloned().unwrap_or(Value::from("0s"));
        let start = time_in(&t.p("start"), &sv, 0, duration, "a time from 0s to the duration")?;
        let stop = match t.get("stop") {
            None => None,
            Some(x) => Some(time_in(&t.p("stop"), x, start + 1, duration, "a time after start and not after the duration")?),
        };
        let size = match t.get("size") {
            None => None,
            Some(x) => {
                let s = as_str(&t.p("size"), x, SIZE_HELP)?;
                match units::parse_size(s, false, false) {
                    Ok(Size::Bytes(b)) if b >= 1 => Some(b),
                    Ok(_) => return size_error(&t.p("size"), x, UnitError::NotPositive, SIZE_HELP, SIZE_RANGE),
                    Err(e) => return size_error(&t.p("size"), x, e, SIZE_HELP, SIZE_RANGE),
                }
            }
        };
        fnorm.insert("start".into(), sv);
        for k in ["stop", "size"] {
            if let Some(x) = t.get(k) {
                fnorm.insert(k.into(), x.clone());
            }
        }
        let mut ftcp = c.tcp.clone();
        let mut params = Params(Default::default());
        if traffic == Traffic::Tcp {
            for k in TCP_KEYS {
                if let Some(x) = t.get(k) {
                    apply_tcp_key(&mut ftcp, &t.p(k), k, x)?;
                    fnorm.insert((*k).into(), x.clone());
                }
            }
            if ftcp.max_rto < ftcp.min_rto {
                return err(&t.p("max_rto"), "must not be below min_rto");
            }
            params = parse_params(&t.p("params"), cc_name, t.get("params"))?;
            fnorm.insert("params".into(), params_norm(cc_name, &params));
        }
        flows_norm.push(Value::Object(fnorm));
        for _ in 0..count {
            flows.push(ParsedFlow {
                cfg: FlowConfig {
                    group: gi,
                    cc: cc_name.to_string(),
                    params: params.clone(),
                    tcp: ftcp.clone(),
                    access_rate_bps,
                    access_delay,
                    start,
                    stop,
                    size,
                    udp: match traffic {
                        Traffic::Udp { pps, size } => Some(UdpConfig { pps, size, onoff }),
                        Traffic::Tcp => None,
                    },
                },
                traffic: traffic.clone(),
                src,
                dst,
                ends: ends.clone(),
            });
        }
    }
    Ok((flows, flows_norm))
}

/// An algorithm's parameters in the normalised scenario (booleans and integers as such).
fn params_norm(cc_name: &str, params: &Params) -> Value {
    let info = cc::find(cc_name).expect("validated algorithm");
    let pn: Map<String, Value> = params
        .0
        .iter()
        .map(|(k, v)| {
            let spec = info.params.iter().find(|p| p.name == k).expect("declared parameter");
            let val = if spec.boolean {
                Value::from(*v != 0.0)
            } else if spec.integer {
                Value::from(*v as i64)
            } else {
                Value::from(*v)
            };
            (k.clone(), val)
        })
        .collect();
    Value::Object(pn)
}

/// A wired UDP flow's on/off pattern (None: constant bit rate): `on_time` and `off_time`
/// (mean lengths), `on_off` ("exponential" or "pareto"), `pareto_shape`.
fn parse_onoff(t: &Table, fnorm: &mut Map<String, Value>) -> Result<Option<OnOff>, ScenarioError> {
    let (on, off) = (t.get("on_time"), t.get("off_time"));
    if on.is_none() && off.is_none() {
        for k in ["on_off", "pareto_shape"] {
            if t.get(k).is_some() {
                return err(&t.p(k), "only used with on_time and off_time (an on/off UDP flow)");
            }
        }
        return Ok(None);
    }
    let what = "a mean period from 1us to 1000s, e.g. \"500ms\"";
    let Some(onv) = on else { return err(&t.p("on_time"), format!("missing: an on/off flow gives both on_time and off_time; accepted: {what}")) };
    let Some(offv) = off else { return err(&t.p("off_time"), format!("missing: an on/off flow gives both on_time and off_time; accepted: {what}")) };
    let on = time_in(&t.p("on_time"), onv, crate::time::US, 1000 * SEC, what)?;
    let off = time_in(&t.p("off_time"), offv, crate::time::US, 1000 * SEC, what)?;
    let dv = t.get("on_off").cloned().unwrap_or(Value::from("exponential"));
    let dist = match dv.as_str() {
        Some("exponential") => {
            if t.get("pareto_shape").is_some() {
                return err(&t.p("pareto_shape"), "only used with on_off = \"pareto\"");
            }
            OnOffDist::Exponential
        }
        Some("pareto") => {
            let sv = t.get("pareto_shape").cloned().unwrap_or(Value::from(1.5));
            let shape = float_in(&t.p("pareto_shape"), &sv, 1.0, 100.0, "a shape in (1, 100] (a finite mean)")?;
            if shape <= 1.0 {
                return err(&t.p("pareto_shape"), format!("{} is out of range; accepted: a shape in (1, 100] (a finite mean)", show(&sv)));
            }
            fnorm.insert("pareto_shape".into(), sv);
            OnOffDist::Pareto(shape)
        }
        _ => return err(&t.p("on_off"), format!("invalid value {}; accepted: \"exponential\" or \"pareto\"", show(&dv))),
    };
    fnorm.insert("on_time".into(), onv.clone());
    fnorm.insert("off_time".into(), offv.clone());
    fnorm.insert("on_off".into(), dv);
    Ok(Some(OnOff { on, off, dist }))
}

/// The JSON text the bindings pass in. The Python package never sends text this rejects (it
/// checks nesting, non-finite numbers and integer sizes first); serde_json's recursion limit
/// keeps the parser itself safe from deep nesting.
fn parse_json(s: &str) -> Result<Value, ScenarioError> {
    serde_json::from_str(s).map_err(|e| ScenarioError {
        path: String::new(),
        message: format!("the scenario is not valid JSON ({e}); accepted: a JSON object with the structure of a scenario file, nested at most 128 levels deep"),
    })
}

/// A scenario of either network: what `ccsim run` and the bindings accept.
#[derive(Debug, Clone, PartialEq)]
pub enum AnyScenario {
    Dumbbell(Scenario),
    Wireless(WirelessScenario),
}

impl AnyScenario {
    pub fn from_json_str(s: &str) -> Result<AnyScenario, ScenarioError> {
        let v = parse_json(s)?;
        AnyScenario::from_value(&v)
    }

    pub fn from_value(v: &Value) -> Result<AnyScenario, ScenarioError> {
        if v.get("wireless").is_some() {
            Ok(AnyScenario::Wireless(WirelessScenario::from_value(v)?))
        } else {
            Ok(AnyScenario::Dumbbell(Scenario::from_value(v)?))
        }
    }

    pub fn normalized(&self) -> &Value {
        match self {
            AnyScenario::Dumbbell(s) => &s.normalized,
            AnyScenario::Wireless(s) => &s.normalized,
        }
    }

    pub fn seed(&self) -> u64 {
        match self {
            AnyScenario::Dumbbell(s) => s.seed,
            AnyScenario::Wireless(s) => s.seed,
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
/// A flow of the `[wireless]` line, between two of its stations.
pub struct WFlow {
    /// Index of the `[[flows]]` entry the flow came from.
    pub group: usize,
    pub src: usize,
    pub dst: usize,
    pub start: Time,
    pub stop: Option<Time>,
    pub kind: WFlowKind,
}

/// A multi-hop 802.11 line (the `[wireless]` table in place of `[bottleneck]`).
#[derive(Debug, Clone, PartialEq)]
pub struct WirelessScenario {
    pub name: Option<String>,
    pub duration: Time,
    pub seed: u64,
    pub sample_interval: Time,
    pub config: WirelessConfig,
    pub flows: Vec<WFlow>,
    pub normalized: Value,
}

const WIRELESS_KEYS: &[&str] = &[
    "hops", "profile", "environment", "queue", "rx_reach", "cs_reach", "if_reach", "retry_limit", "fer", "background_load", "background_frame",
    "host", "rts_cts", "rate_control", "hwmp", "mesh_beacons", "tcp_acks",
];
const HOST_KEYS: &[&str] = &["ingress", "egress", "backlog"];

/// Named environments: (background load, frame error rate, background frame airtime).
pub const ENVIRONMENTS: &[&str] = &["darkroom", "indoor"];
fn environment(name: &str) -> Option<(f64, f64, Time)> {
    match name {
        "darkroom" => Some((0.0, 0.0, 250 * crate::time::US)),
        "indoor" => Some((INDOOR_LOAD, INDOOR_FER, 250 * crate::time::US)),
        _ => None,
    }
}
/// The `indoor` environment: other networks keep the channel busy this fraction of the time...
pub const INDOOR_LOAD: f64 = 0.3;
/// ...and this fraction of data frames is lost to noise.
pub const INDOOR_FER: f64 = 0.05;

/// Named host processing profiles (see `net::wifi::Host`).
pub const HOSTS: &[&str] = &["none", "rpi3"];
fn host_profile(name: &str) -> Option<Host> {
    match name {
        "none" => Some(Host::none()),
        // Chosen, not measured: the seed gives no per-packet cost. 0.5 ms each way puts a
        // one-hop UDP source's peak at 1 / (ingress + egress) = 1000 packets/s, the top of the
        // seed's input range.
        "rpi3" => Some(Host { ingress: 500 * crate::time::US, egress: 500 * crate::time::US, backlog: 1000 }),
        _ => None,
    }
}

/// The 802.11 settings of a `[wireless]` table or a `[[wifi]]` entry (all keys but `hops` and
/// `stations`), for a line of `hops + 1` stations; fills `wn`, the normalised table.
/// `line`: a `[wireless]` line (a `[[wifi]]` entry refuses the line-only keys `hwmp` and
/// `tcp_acks`).
fn wifi_config(w: &Table, hops: usize, wn: &mut Map<String, Value>, line: bool) -> Result<WirelessConfig, ScenarioError> {
    let pv = w.get("profile").cloned().unwrap_or(Value::from("80211n-20mhz"));
    let pname = as_str(&w.p("profile"), &pv, &PROFILES.join(", "))?;
    let Some(phy) = profile(pname) else {
        return err(&w.p("profile"), format!("unknown profile {}; accepted: {}", show(&pv), PROFILES.join(", ")));
    };
    wn.insert("profile".into(), pv.clone());
    let mut cfg = WirelessConfig::new(hops, phy);
    let ev = w.get("environment").cloned().unwrap_or(Value::from("darkroom"));
    let ename = as_str(&w.p("environment"), &ev, &ENVIRONMENTS.join(", "))?;
    let Some((load, fer, bg_frame)) = environment(ename) else {
        return err(&w.p("environment"), format!("unknown environment {}; accepted: {}", show(&ev), ENVIRONMENTS.join(", ")));
    };
    wn.insert("environment".into(), ev.clone());
    cfg.background_load = load;
    cfg.fer = fer;
    cfg.background_frame = bg_frame;
    if let Some(x) = w.get("background_load") {
        cfg.background_load = float_in(&w.p("background_load"), x, 0.0, 0.95, "a fraction of airtime in [0, 0.95]")?;
    }
    if let Some(x) = w.get("fer") {
        cfg.fer = float_in(&w.p("fer"), x, 0.0, 1.0, "a probability in [0, 1]")?;
    }
    if let Some(x) = w.get("background_frame") {
        cfg.background_frame = time_in(&w.p("background_frame"), x, crate::time::US, SEC, "a time from 1us to 1s")?;
    }
    wn.insert("background_load".into(), Value::from(cfg.background_load));
    wn.insert("fer".into(), Value::from(cfg.fer));
    wn.insert("background_frame".into(), w.get("background_frame").cloned().unwrap_or(Value::from(format!("{}us", cfg.background_frame / crate::time::US))));
    if let Some(x) = w.get("queue") {
        cfg.queue_pkts = int_in(&w.p("queue"), x, 1, 1_000_000)? as usize;
    }
    wn.insert("queue".into(), Value::from(cfg.queue_pkts));
    if let Some(x) = w.get("retry_limit") {
        cfg.retry_limit = int_in(&w.p("retry_limit"), x, 1, 255)? as u32;
    }
    wn.insert("retry_limit".into(), Value::from(cfg.retry_limit));
    if let Some(x) = w.get("rx_reach") {
        cfg.rx_reach = int_in(&w.p("rx_reach"), x, 1, 64)? as usize;
    }
    if let Some(x) = w.get("cs_reach") {
        cfg.cs_reach = int_in(&w.p("cs_reach"), x, cfg.rx_reach as i64, 64)? as usize;
    }
    if let Some(x) = w.get("if_reach") {
        cfg.if_reach = int_in(&w.p("if_reach"), x, cfg.rx_reach as i64, 64)? as usize;
    }
    if cfg.cs_reach < cfg.rx_reach {
        return err(&w.p("rx_reach"), format!("{} is beyond cs_reach = {}; a station senses every frame it can decode", cfg.rx_reach, cfg.cs_reach));
    }
    if cfg.if_reach < cfg.rx_reach {
        return err(&w.p("rx_reach"), format!("{} is beyond if_reach = {}; a frame that can be decoded also interferes", cfg.rx_reach, cfg.if_reach));
    }
    wn.insert("rx_reach".into(), Value::from(cfg.rx_reach));
    wn.insert("cs_reach".into(), Value::from(cfg.cs_reach));
    wn.insert("if_reach".into(), Value::from(cfg.if_reach));
    if let Some(x) = w.get("rts_cts") {
        if boolean(&w.p("rts_cts"), x)? {
            return err(&w.p("rts_cts"), "true is not supported: RTS/CTS is not modelled; accepted: false");
        }
    }
    wn.insert("rts_cts".into(), Value::from(false));
    // The counterfactual options (off by default) join the normalised table only when given,
    // so that a scenario without them reports exactly what it did before they existed.
    if let Some(x) = w.get("rate_control") {
        let accepted = format!("{} (\"fixed\": the profile's rate; ARF and AARF as ns-3's ArfWifiManager and AarfWifiManager)", RATE_CONTROLS.join(", "));
        let name = as_str(&w.p("rate_control"), x, &accepted)?;
        cfg.rate_control = RateControl::from_name(name).ok_or_else(|| ScenarioError { path: w.p("rate_control"), message: format!("unknown rate control {}; accepted: {accepted}", show(x)) })?;
        wn.insert("rate_control".into(), x.clone());
    }
    if let Some(x) = w.get("hwmp") {
        let accepted = "off, reactive (PREQ floods and PREP replies every 5.12 s per path)";
        cfg.hwmp = match as_str(&w.p("hwmp"), x, accepted)? {
            "off" => false,
            "reactive" => true,
            _ => return err(&w.p("hwmp"), format!("unknown HWMP mode {}; accepted: {accepted}", show(x))),
        };
        if cfg.hwmp && !line {
            return err(&w.p("hwmp"), "\"reactive\" is only for a [wireless] line; accepted here: off");
        }
        wn.insert("hwmp".into(), x.clone());
    }
    if let Some(x) = w.get("mesh_beacons") {
        cfg.mesh_beacons = boolean(&w.p("mesh_beacons"), x)?;
        wn.insert("mesh_beacons".into(), x.clone());
    }
    if let Some(x) = w.get("tcp_acks") {
        let accepted = "air (over the line, contending with data), out-of-band (a wire of their own)";
        cfg.tcp_acks = match as_str(&w.p("tcp_acks"), x, accepted)? {
            "air" => TcpAcks::Air,
            "out-of-band" => TcpAcks::OutOfBand,
            _ => return err(&w.p("tcp_acks"), format!("unknown {}; accepted: {accepted}", show(x))),
        };
        if cfg.tcp_acks == TcpAcks::OutOfBand && !line {
            return err(&w.p("tcp_acks"), "\"out-of-band\" is only for a [wireless] line; accepted here: air");
        }
        wn.insert("tcp_acks".into(), x.clone());
    }
    let hv = w.get("host").cloned().unwrap_or(Value::from("none"));
    cfg.host = match &hv {
        Value::String(sn) => match host_profile(sn) {
            Some(h) => h,
            None => return err(&w.p("host"), format!("unknown host profile {}; accepted: {} or a table with ingress, egress and backlog", show(&hv), HOSTS.join(", "))),
        },
        Value::Object(_) => {
            let h = Table::new(&w.p("host"), &hv, HOST_KEYS)?;
            h.check_unknown()?;
            let mut host = Host::none();
            if let Some(x) = h.get("ingress") {
                host.ingress = time_in(&h.p("ingress"), x, 0, SEC, "a time from 0s to 1s")?;
            }
            if let Some(x) = h.get("egress") {
                host.egress = time_in(&h.p("egress"), x, 0, SEC, "a time from 0s to 1s")?;
            }
            if let Some(x) = h.get("backlog") {
                host.backlog = int_in(&h.p("backlog"), x, 1, 1_000_000)? as usize;
            }
            host
        }
        _ => return err(&w.p("host"), format!("expected a string or a table, got {}; accepted: {} or a table with ingress, egress and backlog", show(&hv), HOSTS.join(", "))),
    };
    wn.insert(
        "host".into(),
        serde_json::json!({
            "ingress": format!("{}ns", cfg.host.ingress),
            "egress": format!("{}ns", cfg.host.egress),
            "backlog": cfg.host.backlog,
        }),
    );

    Ok(cfg)
}

impl WirelessScenario {
    pub fn from_value(v: &Value) -> Result<WirelessScenario, ScenarioError> {
        let mut keys = TOP_KEYS.to_vec();
        keys.push("wireless");
        keys.retain(|k| !["bottleneck", "links", "wifi", "workloads"].contains(k));
        if v.get("bottleneck").is_some() {
            return err("bottleneck", "a scenario has either a [bottleneck] (dumbbell) or a [wireless] table, not both");
        }
        for k in ["links", "wifi"] {
            if v.get(k).is_some() {
                return err(k, "not used with a [wireless] line; for Wi-Fi hops beside wired links, give [[links]] and [[wifi]] lines without [wireless]");
            }
        }
        let top = Table::new("", v, &keys)?;
        top.check_unknown()?;
        let mut c = parse_common(&top)?;

        let w = Table::new("wireless", top.get("wireless").expect("checked"), WIRELESS_KEYS)?;
        w.check_unknown()?;
        let mut wn = Map::new();
        let hops = int_in("wireless.hops", w.require("hops", "an integer in [1, 64]")?, 1, 64)? as usize;
        wn.insert("hops".into(), Value::from(hops));
        let cfg = wifi_config(&w, hops, &mut wn, true)?;
        let (parsed, flows_norm) = parse_flows(&top, &c, FlowsOn::Wireless(hops))?;
        let flows = parsed
            .into_iter()
            .map(|p| WFlow {
                group: p.cfg.group,
                src: p.src,
                dst: p.dst,
                start: p.cfg.start,
                stop: p.cfg.stop,
                kind: match p.traffic {
                    Traffic::Udp { pps, size } => WFlowKind::Udp { pps, size },
                    Traffic::Tcp => WFlowKind::Tcp { cc: p.cfg.cc, params: p.cfg.params, tcp: p.cfg.tcp, size: p.cfg.size },
                },
            })
            .collect();
        c.norm.insert("wireless".into(), Value::Object(wn));
        c.norm.insert("tcp".into(), Value::Object(std::mem::take(&mut c.tcp_norm)));
        c.norm.insert("flows".into(), Value::Array(flows_norm));
        Ok(WirelessScenario {
            name: c.name,
            duration: c.duration,
            seed: c.seed,
            sample_interval: c.sample_interval,
            config: cfg,
            flows,
            normalized: Value::Object(c.norm),
        })
    }
}

const NODE_LIST_MAX: usize = 12;

/// The nodes of a topology, for messages (at most [`NODE_LIST_MAX`] names).
fn node_list(topo: &Topology) -> String {
    let mut names: Vec<String> = topo.nodes.iter().take(NODE_LIST_MAX).map(|n| format!("\"{n}\"")).collect();
    if topo.nodes.len() > NODE_LIST_MAX {
        names.push(format!("... ({} nodes)", topo.nodes.len()));
    }
    names.join(", ")
}

/// A Dummynet tick (`path`) needs a constant rate and delay and the FIFO.
fn check_tick(path: &str, vary: &varying::VarySpec, qdisc: &qdisc::QdiscConfig) -> Result<(), ScenarioError> {
    if vary.rate.is_some() || vary.delay.is_some() {
        return err(path, "a Dummynet pipe has a constant rate and delay; accepted: a tick with a constant rate and delay, or no tick");
    }
    if !qdisc.is_fifo() {
        return err(path, format!("a Dummynet pipe is a FIFO; accepted: a tick with qdisc = \"fifo\" and no ECN, or no tick (qdisc is {:?})", qdisc.name));
    }
    Ok(())
}

/// One direction of a `[[links]]` entry: `rate`, `delay`, `buffer`, `loss` from table `t`,
/// missing ones from `base` (the entry's forward direction, for `reverse`) or the defaults.
/// Returns the spec and its normalised table.
fn parse_dir(t: &Table, base: Option<(&DirSpec, &Map<String, Value>)>) -> Result<(DirSpec, Map<String, Value>), ScenarioError> {
    let mut norm = base.map(|(_, n)| n.clone()).unwrap_or_default();
    let rate_help = format!("\"unlimited\" (a pure propagation delay) or {RATE_HELP}");
    let mut vary = base.map(|(b, _)| b.vary.clone()).unwrap_or_default();
    let rate_bps = match (t.get("rate"), base) {
        (Some(v), _) if v.is_object() => {
            norm.insert("rate".into(), v.clone());
            let shape = varying::parse_rate_table(&t.p("rate"), v)?;
            vary.rate = Some(shape);
            crate::net::shape::RateShape::new(vary.rate.clone().unwrap()).nominal_bps()
        }
        (Some(v), _) => {
            vary.rate = None;
            norm.insert("rate".into(), v.clone());
            if v.as_str() == Some("unlimited") {
                0
            } else {
                let s = as_str(&t.p("rate"), v, &rate_help)?;
                units::parse_rate(s).or_else(|e| rate_error(&t.p("rate"), v, e, &rate_help))?
            }
        }
        (None, Some((b, _))) => b.rate_bps,
        (None, None) => return Err(t.require("rate", &rate_help).unwrap_err()),
    };
    let delay = match (t.get("delay"), base) {
        (Some(v), _) if v.is_object() => {
            norm.insert("delay".into(), v.clone());
            let steps = varying::parse_delay_table(&t.p("delay"), v)?;
            let first = steps.steps[0].1;
            vary.delay = Some(steps);
            first
        }
        (Some(v), _) => {
            vary.delay = None;
            norm.insert("delay".into(), v.clone());
            time_in(&t.p("delay"), v, 0, 100 * SEC, "a time from 0s to 100s")?
        }
        (None, Some((b, _))) => b.delay,
        (None, None) => return Err(t.require("delay", TIME_HELP).unwrap_err()),
    };
    let buffer_help = format!("\"unlimited\" or {BUFFER_HELP}");
    let buffer = match (t.get("buffer"), base) {
        (None, Some((b, _))) => b.buffer,
        (bv, _) => {
            let v = bv.cloned().unwrap_or(Value::from("1bdp"));
            norm.insert("buffer".into(), v.clone());
            let bs = as_str(&t.p("buffer"), &v, &buffer_help)?;
            if bs == "unlimited" {
                Buffer::Unlimited
            } else {
                match units::parse_size(bs, true, true) {
                    Ok(Size::Packets(0) | Size::Bytes(0)) => return size_error(&t.p("buffer"), &v, UnitError::NotPositive, &buffer_help, BUFFER_RANGE),
                    Ok(Size::Bdp(k)) if k <= 0.0 => return size_error(&t.p("buffer"), &v, UnitError::NotPositive, &buffer_help, BUFFER_RANGE),
                    Ok(Size::Packets(n)) => Buffer::Packets(n),
                    Ok(Size::Bytes(n)) => Buffer::Bytes(n),
                    Ok(Size::Bdp(k)) => Buffer::Bdp(k),
                    Err(e) => return size_error(&t.p("buffer"), &v, e, &buffer_help, BUFFER_RANGE),
                }
            }
        }
    };
    let loss = match (t.get("loss"), base) {
        (None, Some((b, _))) => b.loss,
        (Some(v), _) if v.is_object() => {
            norm.insert("loss".into(), v.clone());
            let steps = varying::parse_loss_table(&t.p("loss"), v)?;
            let most = steps.steps.iter().map(|&(_, p)| p).fold(0.0, f64::max);
            vary.loss = Some(steps);
            most
        }
        (lv, _) => {
            vary.loss = None;
            let v = lv.cloned().unwrap_or(Value::from(0.0));
            norm.insert("loss".into(), v.clone());
            float_in(&t.p("loss"), &v, 0.0, 1.0, "a probability in [0, 1]")?
        }
    };
    if let Some(v) = t.get("reorder") {
        norm.insert("reorder".into(), v.clone());
        vary.reorder = boolean(&t.p("reorder"), v)?;
    }
    if rate_bps == 0 && (vary.delay.is_some() || vary.loss.is_some()) {
        let k = if vary.delay.is_some() { "delay" } else { "loss" };
        return err(&t.p(k), "a schedule on an unlimited direction; accepted: a schedule on a direction with a rate (a constant rate, a trace or a rate schedule), or a constant value");
    }
    let qdisc = qdisc::parse(t, base.map(|(b, _)| &b.qdisc), rate_bps == 0, &mut norm)?;
    let tick = match (t.get("tick"), base) {
        (None, Some((b, _))) => b.tick,
        (None, None) => None,
        (Some(v), _) => {
            norm.insert("tick".into(), v.clone());
            Some(time_in(&t.p("tick"), v, crate::time::US, SEC, TICK_HELP)?)
        }
    };
    if tick.is_some() {
        check_tick(&t.p("tick"), &vary, &qdisc)?;
    }
    Ok((DirSpec { rate_bps, delay, buffer, loss, qdisc, vary, tick }, norm))
}

/// `[[links]]`: the topology (nodes in order of first mention) and its normalised entries.
fn parse_links(top: &Table) -> Result<(Topology, Vec<Value>), ScenarioError> {
    let lv = top.get("links").expect("called with [[links]]");
    let Value::Array(entries) = lv else {
        return err("links", format!("expected an array of tables ([[links]]), got {}", show(lv)));
    };
    if entries.is_empty() {
        return err("links", "empty; accepted: one or more [[links]] tables, each joining two nodes");
    }
    let mut topo = Topology::default();
    let mut norms = Vec::with_capacity(entries.len());
    for (i, e) in entries.iter().enumerate() {
        let lp = format!("links[{i}]");
        let t = Table::new(&lp, e, LINK_KEYS)?;
        t.check_unknown()?;
        let help = "two different node names, e.g. [\"a\", \"r1\"]";
        let bv = t.require("between", help)?;
        let pair = match bv {
            Value::Array(a) if a.len() == 2 => a,
            _ => return err(&t.p("between"), format!("expected two node names, got {}; accepted: {help}", show(bv))),
        };
        let mut ends = [0u32; 2];
        for (k, x) in pair.iter().enumerate() {
            let name = as_str(&format!("{}[{k}]", t.p("between")), x, "a node name")?;
            if name.is_empty() {
                return err(&format!("{}[{k}]", t.p("between")), "an empty node name; accepted: any non-empty string");
            }
            ends[k] = match topo.node(name) {
                Some(n) => n,
                None => {
                    topo.nodes.push(name.to_string());
                    (topo.nodes.len() - 1) as u32
                }
            };
        }
        let [a, b] = ends;
        if a == b {
            return err(&t.p("between"), format!("{} links a node to itself; accepted: {help}", show(bv)));
        }
        if let Some((j, _)) = topo.link_between(a, b) {
            return err(
                &t.p("between"),
                format!("{} is a second link between the same two nodes (the first is links[{j}]); accepted: one link per pair of nodes", show(bv)),
            );
        }
        let (fwd, fnorm) = parse_dir(&t, None)?;
        let mut norm = Map::new();
        norm.insert("between".into(), bv.clone());
        norm.extend(fnorm.clone());
        let rev = match t.get("reverse") {
            None => fwd.clone(),
            Some(rv) => {
                let rt = Table::new(&t.p("reverse"), rv, LINK_DIR_KEYS)?;
                rt.check_unknown()?;
                let (rev, rnorm) = parse_dir(&rt, Some((&fwd, &fnorm)))?;
                norm.insert("reverse".into(), Value::Object(rnorm));
                rev
            }
        };
        topo.links.push(LinkSpec { a, b, fwd, rev });
        norms.push(Value::Object(norm));
    }
    Ok((topo, norms))
}

/// `[[wifi]]`: lines of stations on shared 802.11 channels, added to `topo` (new node names
/// join its nodes); returns the normalised entries.
fn parse_wifi(top: &Table, topo: &mut Topology) -> Result<Vec<Value>, ScenarioError> {
    let Some(wv) = top.get("wifi") else { return Ok(Vec::new()) };
    let Value::Array(entries) = wv else {
        return err("wifi", format!("expected an array of tables ([[wifi]]), got {}", show(wv)));
    };
    if entries.is_empty() {
        return err("wifi", "empty; accepted: one or more [[wifi]] tables, each a line of stations");
    }
    let mut norms = Vec::with_capacity(entries.len());
    let mut total = 0;
    for (i, e) in entries.iter().enumerate() {
        let wp = format!("wifi[{i}]");
        let t = Table::new(&wp, e, WIFI_KEYS)?;
        t.check_unknown()?;
        let help = "2 to 65 node names, the stations in line order (one hop apart), e.g. [\"ap\", \"relay\", \"phone\"]";
        let sv = t.require("stations", help)?;
        let items = match sv {
            Value::Array(a) if (2..=65).contains(&a.len()) => a,
            _ => return err(&t.p("stations"), format!("expected {help}, got {}", show(sv))),
        };
        let mut stations: Vec<u32> = Vec::with_capacity(items.len());
        for (k, x) in items.iter().enumerate() {
            let kp = format!("{}[{k}]", t.p("stations"));
            let name = as_str(&kp, x, "a node name")?;
            if name.is_empty() {
                return err(&kp, "an empty node name; accepted: any non-empty string");
            }
            let n = match topo.node(name) {
                Some(n) => n,
                None => {
                    topo.nodes.push(name.to_string());
                    (topo.nodes.len() - 1) as u32
                }
            };
            if stations.contains(&n) {
                return err(&kp, format!("\"{name}\" appears twice; accepted: a line of distinct stations"));
            }
            if let Some(&prev) = stations.last() {
                let joined = if let Some((j, _)) = topo.link_between(prev, n) {
                    Some(format!("links[{j}]"))
                } else {
                    topo.hop_between(prev, n).map(|c| match c {
                        crate::topology::general::Crossing::Air { wifi, .. } => format!("wifi[{wifi}]"),
                        crate::topology::general::Crossing::Link(j, _) => format!("links[{j}]"),
                    })
                };
                if let Some(other) = joined {
                    return err(
                        &kp,
                        format!("\"{}\" and \"{name}\" are already joined by {other}; accepted: one link or Wi-Fi hop per pair of nodes", topo.nodes[prev as usize]),
                    );
                }
            }
            stations.push(n);
        }
        total += stations.len();
        if total > MAX_STATIONS {
            return err(&t.p("stations"), format!("brings the stations of all [[wifi]] lines to {total}; accepted: at most {MAX_STATIONS}"));
        }
        let mut wn = Map::new();
        wn.insert("stations".into(), sv.clone());
        let config = wifi_config(&t, stations.len() - 1, &mut wn, false)?;
        topo.wifi.push(WifiSpec { stations, config });
        norms.push(Value::Object(wn));
    }
    Ok(norms)
}

/// A flow's node path on `topo`: its `path` checked, or the fewest-hop one.
fn flow_path(topo: &Topology, gp: &str, ends: &Ends) -> Result<Vec<u32>, ScenarioError> {
    let node = |field: &str, name: &str| {
        topo.node(name).ok_or_else(|| ScenarioError {
            path: format!("{gp}.{field}"),
            message: format!("unknown node \"{name}\"; accepted: a node of [[links]]: {}", node_list(topo)),
        })
    };
    let src = node("src", &ends.src)?;
    let dst = node("dst", &ends.dst)?;
    let Some(names) = &ends.path else {
        let path = topo.shortest_path(src, dst).ok_or_else(|| ScenarioError {
            path: format!("{gp}.dst"),
            message: format!("no route from \"{}\" to \"{}\" over [[links]]; accepted: a node connected to src", ends.src, ends.dst),
        })?;
        return hops_within_limit(&format!("{gp}.dst"), path);
    };
    let pp = format!("{gp}.path");
    if names.len() < 2 {
        return err(&pp, format!("{} has fewer than two nodes; accepted: the nodes from src to dst", show(&Value::from(names.clone()))));
    }
    let mut path = Vec::with_capacity(names.len());
    for (k, name) in names.iter().enumerate() {
        let n = node(&format!("path[{k}]"), name)?;
        if path.contains(&n) {
            return err(&format!("{pp}[{k}]"), format!("\"{name}\" appears twice; accepted: a path that visits each node once"));
        }
        if let Some(&prev) = path.last() {
            if topo.hop_between(prev, n).is_none() {
                return err(
                    &format!("{pp}[{k}]"),
                    format!(
                        "no link or Wi-Fi hop between \"{}\" and \"{name}\"; accepted: a path along [[links]] (and neighbouring stations of [[wifi]])",
                        topo.nodes[prev as usize]
                    ),
                );
            }
        }
        path.push(n);
    }
    if path[0] != src {
        return err(&format!("{pp}[0]"), format!("the path starts at \"{}\", not at src \"{}\"", names[0], ends.src));
    }
    if *path.last().unwrap() != dst {
        return err(
            &format!("{pp}[{}]", names.len() - 1),
            format!("the path ends at \"{}\", not at dst \"{}\"", names[names.len() - 1], ends.dst),
        );
    }
    hops_within_limit(&pp, path)
}

/// The most hops a flow's route may have (a packet's position on its route is a 16-bit index
/// with two values reserved: [`crate::net::Routed::ON_LAST`] and `AT_END`).
pub const MAX_ROUTE_HOPS: usize = 10_000;

fn hops_within_limit(field: &str, path: Vec<u32>) -> Result<Vec<u32>, ScenarioError> {
    let hops = path.len() - 1;
    if hops > MAX_ROUTE_HOPS {
        return err(field, format!("the route has {hops} hops; accepted: at most {MAX_ROUTE_HOPS}"));
    }
    Ok(path)
}

impl Scenario {
    /// The rest of a `[[links]]` scenario, after its common keys and flows.
    fn with_links(top: &Table, mut c: Common, parsed: Vec<ParsedFlow>, mut flows_norm: Vec<Value>) -> Result<Scenario, ScenarioError> {
        if top.get("bottleneck").is_some() {
            return err("bottleneck", "give either [bottleneck] (a dumbbell) or [[links]] (any network), not both");
        }
        let (mut topology, links_norm) = if top.get("links").is_some() { parse_links(top)? } else { (Topology::default(), Vec::new()) };
        let wifi_norm = parse_wifi(top, &mut topology)?;
        let mut paths = Vec::with_capacity(parsed.len());
        for p in &parsed {
            let gp = format!("flows[{}]", p.cfg.group);
            let ends = p.ends.as_ref().expect("[[links]] flows have ends");
            let path = flow_path(&topology, &gp, ends)?;
            if let Value::Object(m) = &mut flows_norm[p.cfg.group] {
                m.insert("src".into(), Value::from(ends.src.clone()));
                m.insert("dst".into(), Value::from(ends.dst.clone()));
                m.insert("path".into(), path.iter().map(|&n| Value::from(topology.nodes[n as usize].clone())).collect());
            }
            paths.push(path);
        }
        let mut norm = std::mem::take(&mut c.norm);
        if top.get("links").is_some() {
            norm.insert("links".into(), Value::Array(links_norm));
        }
        if !wifi_norm.is_empty() {
            norm.insert("wifi".into(), Value::Array(wifi_norm));
        }
        let (wls, wl_norm) = workloads::parse_workloads(top, &c, workloads::WlNet::Links(&topology))?;
        norm.insert("tcp".into(), Value::Object(std::mem::take(&mut c.tcp_norm)));
        if top.get("flows").is_some() {
            norm.insert("flows".into(), Value::Array(flows_norm));
        }
        if !wls.is_empty() {
            norm.insert("workloads".into(), Value::Array(wl_norm));
        }
        Ok(Scenario {
            name: c.name,
            duration: c.duration,
            seed: c.seed,
            sample_interval: c.sample_interval,
            network: NetworkConfig::Links { topology, paths, bdp_mss: c.tcp.mss },
            flows: parsed.into_iter().map(|p| p.cfg).collect(),
            workloads: wls,
            normalized: Value::Object(norm),
        })
    }
}

impl Scenario {
    pub fn from_json_str(s: &str) -> Result<Scenario, ScenarioError> {
        let v = parse_json(s)?;
        Scenario::from_value(&v)
    }

    pub fn from_value(v: &Value) -> Result<Scenario, ScenarioError> {
        if v.get("wireless").is_some() {
            return err("wireless", "a [wireless] scenario is not a dumbbell (parse it with AnyScenario)");
        }
        let top = Table::new("", v, TOP_KEYS)?;
        top.check_unknown()?;
        let mut c = parse_common(&top)?;
        let on = if top.get("links").is_some() || top.get("wifi").is_some() { FlowsOn::Links } else { FlowsOn::Dumbbell };
        let (parsed, flows_norm) = parse_flows(&top, &c, on)?;
        if on == FlowsOn::Links {
            return Scenario::with_links(&top, c, parsed, flows_norm);
        }
        let flows: Vec<FlowConfig> = parsed.into_iter().map(|p| p.cfg).collect();
        let (duration, seed, tcp) = (c.duration, c.seed, c.tcp.clone());
        let mut norm = std::mem::take(&mut c.norm);
        let tcp_norm = std::mem::take(&mut c.tcp_norm);
        // [bottleneck]
        let bv = top.require("bottleneck", "a [bottleneck] table with rate and delay")?;
        let b = Table::new("bottleneck", bv, BOTTLENECK_KEYS)?;
        b.check_unknown()?;
        let mut vary = varying::VarySpec::default();
        let rv = b.require("rate", RATE_HELP)?;
        let rate_bps = if rv.is_object() {
            let shape = varying::parse_rate_table("bottleneck.rate", rv)?;
            vary.rate = Some(shape);
            crate::net::shape::RateShape::new(vary.rate.clone().unwrap()).nominal_bps()
        } else {
            parse_rate("bottleneck.rate", rv)?
        };
        let dv = b.require("delay", TIME_HELP)?;
        let delay = if dv.is_object() {
            let steps = varying::parse_delay_table("bottleneck.delay", dv)?;
            let first = steps.steps[0].1;
            vary.delay = Some(steps);
            first
        } else {
            time_in("bottleneck.delay", dv, 0, 100 * SEC, "a time from 0s to 100s")?
        };
        let bufv = b.get("buffer").cloned().unwrap_or(Value::from("1bdp"));
        let bs = as_str("bottleneck.buffer", &bufv, BUFFER_HELP)?;
        let buffer = match units::parse_size(bs, true, true) {
            Ok(Size::Packets(0) | Size::Bytes(0)) => return size_error("bottleneck.buffer", &bufv, UnitError::NotPositive, BUFFER_HELP, BUFFER_RANGE),
            Ok(Size::Bdp(k)) if k <= 0.0 => return size_error("bottleneck.buffer", &bufv, UnitError::NotPositive, BUFFER_HELP, BUFFER_RANGE),
            Ok(b) => b,
            Err(e) => return size_error("bottleneck.buffer", &bufv, e, BUFFER_HELP, BUFFER_RANGE),
        };
        let (buffer_pkts, buffer_bytes) = match buffer {
            Size::Packets(n) => (Some(n), None),
            Size::Bytes(n) => (None, Some(n)),
            Size::Bdp(k) => {
                // BDP = rate x base RTT, the base RTT of the flow with the shortest path, in
                // packets of the [tcp] MSS plus headers.
                let min_access = flows.iter().map(|f| f.access_delay).min().unwrap_or(0);
                let rtt = 2 * (delay + min_access);
                let bdp_bytes = rate_bps as f64 * rtt as f64 / 8.0 / SEC as f64;
                let pkts = (k * bdp_bytes / (tcp.mss + HEADER_BYTES) as f64).round().max(1.0) as u64;
                (Some(pkts), None)
            }
        };
        let lossv = b.get("loss").cloned().unwrap_or(Value::from(0.0));
        let loss = if lossv.is_object() {
            let steps = varying::parse_loss_table("bottleneck.loss", &lossv)?;
            let most = steps.steps.iter().map(|&(_, p)| p).fold(0.0, f64::max);
            vary.loss = Some(steps);
            most
        } else {
            float_in("bottleneck.loss", &lossv, 0.0, 1.0, "a probability in [0, 1]")?
        };
        if let Some(v) = b.get("reorder") {
            vary.reorder = boolean("bottleneck.reorder", v)?;
        }
        let alv = b.get("ack_loss").cloned().unwrap_or(Value::from(0.0));
        let ack_loss = float_in("bottleneck.ack_loss", &alv, 0.0, 1.0, "a probability in [0, 1]")?;
        let mut bnorm = Map::new();
        bnorm.insert("rate".into(), b.get("rate").unwrap().clone());
        bnorm.insert("delay".into(), b.get("delay").unwrap().clone());
        bnorm.insert("buffer".into(), bufv);
        bnorm.insert("loss".into(), lossv);
        bnorm.insert("ack_loss".into(), alv);
        if let Some(v) = b.get("reorder") {
            bnorm.insert("reorder".into(), v.clone());
        }
        let qdisc = qdisc::parse(&b, None, false, &mut bnorm)?;
        let tick = match b.get("tick") {
            None => None,
            Some(v) => {
                let t = time_in("bottleneck.tick", v, crate::time::US, SEC, TICK_HELP)?;
                check_tick("bottleneck.tick", &vary, &qdisc)?;
                bnorm.insert("tick".into(), v.clone());
                Some(t)
            }
        };
        let tick_acks = match b.get("tick_acks") {
            None => false,
            Some(v) => {
                let on = boolean("bottleneck.tick_acks", v)?;
                if on && tick.is_none() {
                    return err("bottleneck.tick_acks", "true needs a Dummynet tick; accepted: true with bottleneck.tick set, or false");
                }
                bnorm.insert("tick_acks".into(), v.clone());
                on
            }
        };
        norm.insert("bottleneck".into(), Value::Object(bnorm));
        norm.insert("tcp".into(), Value::Object(tcp_norm));
        if top.get("flows").is_some() {
            norm.insert("flows".into(), Value::Array(flows_norm));
        }
        let (wls, wl_norm) = workloads::parse_workloads(&top, &c, workloads::WlNet::Dumbbell { rate_bps })?;
        if !wls.is_empty() {
            norm.insert("workloads".into(), Value::Array(wl_norm));
        }

        Ok(Scenario {
            name: c.name,
            duration,
            seed,
            sample_interval: c.sample_interval,
            network: NetworkConfig::Dumbbell(BottleneckConfig { rate_bps, delay, buffer, buffer_pkts, buffer_bytes, loss, ack_loss, qdisc, vary, tick, tick_acks }),
            flows,
            workloads: wls,
            normalized: Value::Object(norm),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn base() -> Value {
        json!({
            "duration": "10s",
            "bottleneck": {"rate": "10Mbps", "delay": "20ms", "buffer": "50pkt"},
            "flows": [{"cc": "cubic", "count": 2}]
        })
    }

    fn reject(edit: impl FnOnce(&mut Value)) -> String {
        let mut v = base();
        edit(&mut v);
        Scenario::from_value(&v).expect_err("must be rejected").to_string()
    }

    #[test]
    fn accepts_the_documented_example_with_defaults() {
        let sc = Scenario::from_value(&base()).unwrap();
        assert_eq!(sc.flows.len(), 2);
        assert_eq!(sc.bottleneck().unwrap().buffer_pkts, Some(50));
        assert_eq!(sc.flows[0].tcp.min_rto, 200 * MS);
        assert_eq!(sc.seed, 1);
        // 2bdp of 10 Mbps x 40 ms = 100 kB = 66.7 packets of 1500 B -> 67.
        let mut v = base();
        v["bottleneck"]["buffer"] = json!("2bdp");
        assert_eq!(Scenario::from_value(&v).unwrap().bottleneck().unwrap().buffer_pkts, Some(67));
    }

    #[test]
    fn a_dummynet_tick() {
        let mut v = base();
        v["bottleneck"]["tick"] = json!("1ms");
        let sc = Scenario::from_value(&v).unwrap();
        assert_eq!(sc.bottleneck().unwrap().tick, Some(MS));
        assert_eq!(sc.normalized["bottleneck"]["tick"], json!("1ms"));
        // Absent: the exact link, and no key in the normalised form.
        let sc = Scenario::from_value(&base()).unwrap();
        assert_eq!(sc.bottleneck().unwrap().tick, None);
        assert!(sc.normalized["bottleneck"].get("tick").is_none());
        let help = "accepted: a kernel tick from 1us to 1s, e.g. \"1ms\" (Dummynet at HZ = 1000), or no key for the exact link";
        let m = reject(|v| v["bottleneck"]["tick"] = json!("0ms"));
        assert_eq!(m, format!("bottleneck.tick: \"0ms\" is out of range; {help}"));
        let m = reject(|v| v["bottleneck"]["tick"] = json!("2s"));
        assert!(m.starts_with("bottleneck.tick: \"2s\" is out of range") && m.ends_with(help), "{m}");
        let m = reject(|v| v["bottleneck"]["tick"] = json!("1 tick"));
        assert!(m.starts_with("bottleneck.tick: malformed time \"1 tick\""), "{m}");
        let m = reject(|v| v["bottleneck"]["tick"] = json!(1));
        assert!(m.starts_with("bottleneck.tick: expected a string, got 1"), "{m}");
        let m = reject(|v| {
            v["bottleneck"]["tick"] = json!("1ms");
            v["bottleneck"]["qdisc"] = json!("codel");
        });
        assert!(m.starts_with("bottleneck.tick: a Dummynet pipe is a FIFO; accepted:"), "{m}");
        let m = reject(|v| {
            v["bottleneck"]["tick"] = json!("1ms");
            v["bottleneck"]["delay"] = json!({"schedule": [["0s", "20ms"], ["1s", "30ms"]]});
        });
        assert!(m.starts_with("bottleneck.tick: a Dummynet pipe has a constant rate and delay"), "{m}");
        let m = reject(|v| v["bottleneck"]["tick_acks"] = json!(true));
        assert_eq!(m, "bottleneck.tick_acks: true needs a Dummynet tick; accepted: true with bottleneck.tick set, or false");
        let m = reject(|v| v["bottleneck"]["tick_acks"] = json!("yes"));
        assert_eq!(m, "bottleneck.tick_acks: expected true or false, got \"yes\"");
    }

    #[test]
    fn a_dummynet_tick_on_links() {
        let links = |extra: Value| {
            let mut l = json!({"between": ["a", "b"], "rate": "10Mbps", "delay": "10ms", "buffer": "1bdp", "tick": "1ms"});
            l.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            json!({"duration": "1s", "links": [l], "flows": [{"cc": "cubic", "src": "a", "dst": "b"}]})
        };
        let sc = Scenario::from_value(&links(json!({}))).unwrap();
        let NetworkConfig::Links { topology, .. } = &sc.network else { panic!() };
        // The reverse inherits the tick, as it inherits the other keys.
        assert_eq!((topology.links[0].fwd.tick, topology.links[0].rev.tick), (Some(MS), Some(MS)));
        let sc = Scenario::from_value(&links(json!({"reverse": {"tick": "10ms"}}))).unwrap();
        let NetworkConfig::Links { topology, .. } = &sc.network else { panic!() };
        assert_eq!(topology.links[0].rev.tick, Some(10 * MS));
        let m = Scenario::from_value(&links(json!({"reverse": {"tick": "0s"}}))).unwrap_err().to_string();
        assert!(m.starts_with("links[0].reverse.tick: \"0s\" is out of range; accepted: a kernel tick"), "{m}");
        let m = Scenario::from_value(&links(json!({"qdisc": "fq_codel"}))).unwrap_err().to_string();
        assert!(m.starts_with("links[0].tick: a Dummynet pipe is a FIFO"), "{m}");
    }

    #[test]
    fn unknown_keys_name_the_key_and_list_accepted_ones() {
        let m = reject(|v| v["durration"] = json!("1s"));
        assert!(m.starts_with("durration: unknown key"), "{m}");
        let m = reject(|v| v["bottleneck"]["rat"] = json!("1Mbps"));
        assert!(m.starts_with("bottleneck.rat: unknown key") && m.contains("rate"), "{m}");
        let m = reject(|v| v["flows"][0]["ccc"] = json!("bbr"));
        assert!(m.starts_with("flows[0].ccc: unknown key"), "{m}");
    }

    #[test]
    fn a_sweep_table_points_to_ccsim_sweep() {
        let m = reject(|v| v["sweep"] = json!({"bottleneck.loss": [0, 0.01]}));
        assert!(m.starts_with("sweep: a sweep file: run it with `ccsim sweep FILE`"), "{m}");
    }

    #[test]
    fn unknown_algorithm() {
        let m = reject(|v| v["flows"][0]["cc"] = json!("cubicc"));
        assert_eq!(m, format!("flows[0].cc: unknown algorithm \"cubicc\"; accepted: {}", crate::cc::names().join(", ")));
    }

    #[test]
    fn malformed_units() {
        let m = reject(|v| v["bottleneck"]["rate"] = json!("10Mbs"));
        assert!(m.starts_with("bottleneck.rate: malformed rate \"10Mbs\"; accepted:"), "{m}");
        let m = reject(|v| v["bottleneck"]["delay"] = json!("20"));
        assert!(m.starts_with("bottleneck.delay: malformed time \"20\""), "{m}");
        let m = reject(|v| v["bottleneck"]["buffer"] = json!("50 packets"));
        assert!(m.starts_with("bottleneck.buffer: malformed size \"50 packets\""), "{m}");
        let m = reject(|v| v["duration"] = json!(100));
        assert!(m.starts_with("duration: expected a string, got 100"), "{m}");
    }

    #[test]
    fn out_of_range_values() {
        let m = reject(|v| v["bottleneck"]["loss"] = json!(1.5));
        assert_eq!(m, "bottleneck.loss: 1.5 is out of range; accepted: a probability in [0, 1]");
        let m = reject(|v| v["flows"][0]["count"] = json!(0));
        assert!(m.starts_with("flows[0].count: 0 is out of range"), "{m}");
        let m = reject(|v| v["tcp"] = json!({"mss": 0}));
        assert!(m.starts_with("tcp.mss: 0 is out of range"), "{m}");
        let m = reject(|v| v["flows"][0]["start"] = json!("20s"));
        assert!(m.starts_with("flows[0].start: \"20s\" is out of range"), "{m}");
    }

    /// Every quantity kind tells a malformed value (not a number with an accepted unit) from a
    /// number the field does not take, and gives the accepted range.
    #[test]
    fn quantities_malformed_or_out_of_range() {
        let cases: Vec<(&str, Value, &str)> = vec![
            // rates
            ("/bottleneck/rate", json!("10Mbs"), "bottleneck.rate: malformed rate \"10Mbs\"; accepted: a rate with unit bps, kbps, Mbps or Gbps, e.g. \"10Mbps\""),
            ("/bottleneck/rate", json!("100000Gbps"), "bottleneck.rate: \"100000Gbps\" is out of range; accepted: a rate from 1bps to 10000Gbps"),
            ("/bottleneck/rate", json!("0Mbps"), "bottleneck.rate: \"0Mbps\" must be positive; accepted: a rate from 1bps to 10000Gbps"),
            ("/bottleneck/rate", json!("-3Mbps"), "bottleneck.rate: \"-3Mbps\" must be positive; accepted: a rate from 1bps to 10000Gbps"),
            ("/bottleneck/rate", json!("0.1bps"), "bottleneck.rate: \"0.1bps\" is out of range; accepted: a rate from 1bps to 10000Gbps"),
            ("/flows/0/access_rate", json!("1e14bps"), "flows[0].access_rate: \"1e14bps\" is out of range; accepted: a rate from 1bps to 10000Gbps"),
            // times
            ("/duration", json!("1e9s"), "duration: \"1e9s\" is out of range; accepted: a time from 1ms to 1000000s"),
            ("/duration", json!("1e99s"), "duration: \"1e99s\" is out of range; accepted: a time from 1ms to 1000000s"),
            ("/duration", json!("-5s"), "duration: \"-5s\" must be positive; accepted: a time from 1ms to 1000000s"),
            ("/duration", json!("5"), "duration: malformed time \"5\"; accepted: a time with unit ns, us, ms or s, e.g. \"20ms\""),
            ("/bottleneck/delay", json!("-20ms"), "bottleneck.delay: \"-20ms\" must not be negative; accepted: a time from 0s to 100s"),
            ("/bottleneck/delay", json!("101s"), "bottleneck.delay: \"101s\" is out of range; accepted: a time from 0s to 100s"),
            ("/flows/0/start", json!("-1s"), "flows[0].start: \"-1s\" must not be negative; accepted: a time from 0s to the duration"),
            ("/flows/0/stop", json!("-1s"), "flows[0].stop: \"-1s\" must be positive; accepted: a time after start and not after the duration"),
            ("/tcp/min_rto", json!("0.5ms"), "tcp.min_rto: \"0.5ms\" is out of range; accepted: a time from 1ms to 60s"),
            ("/sample_interval", json!("10 fortnights"), "sample_interval: malformed time \"10 fortnights\"; accepted: a time with unit ns, us, ms or s, e.g. \"20ms\""),
            // sizes and buffers
            ("/bottleneck/buffer", json!("50 packets"), "bottleneck.buffer: malformed size \"50 packets\"; accepted: a size in pkt, B, KB, MB, KiB or MiB, or a multiple of the BDP, e.g. \"50pkt\", \"64KiB\", \"2bdp\""),
            ("/bottleneck/buffer", json!("0pkt"), "bottleneck.buffer: \"0pkt\" must be positive; accepted: a buffer from 1pkt to 1000000000pkt, from 1B to 1000000GB, or above 0bdp up to 1000bdp"),
            ("/bottleneck/buffer", json!("-2bdp"), "bottleneck.buffer: \"-2bdp\" must be positive; accepted: a buffer from 1pkt to 1000000000pkt, from 1B to 1000000GB, or above 0bdp up to 1000bdp"),
            ("/bottleneck/buffer", json!("0bdp"), "bottleneck.buffer: \"0bdp\" must be positive; accepted: a buffer from 1pkt to 1000000000pkt, from 1B to 1000000GB, or above 0bdp up to 1000bdp"),
            ("/bottleneck/buffer", json!("2.5pkt"), "bottleneck.buffer: \"2.5pkt\" is not a whole number of packets; accepted: a buffer from 1pkt to 1000000000pkt, from 1B to 1000000GB, or above 0bdp up to 1000bdp"),
            ("/bottleneck/buffer", json!("5000bdp"), "bottleneck.buffer: \"5000bdp\" is out of range; accepted: a buffer from 1pkt to 1000000000pkt, from 1B to 1000000GB, or above 0bdp up to 1000bdp"),
            ("/bottleneck/buffer", json!("1e20B"), "bottleneck.buffer: \"1e20B\" is out of range; accepted: a buffer from 1pkt to 1000000000pkt, from 1B to 1000000GB, or above 0bdp up to 1000bdp"),
            ("/flows/0/size", json!("0MB"), "flows[0].size: \"0MB\" must be positive; accepted: a size from 1B to 1000000GB"),
            ("/flows/0/size", json!("2000000GB"), "flows[0].size: \"2000000GB\" is out of range; accepted: a size from 1B to 1000000GB"),
            ("/flows/0/size", json!("10pkt"), "flows[0].size: malformed size \"10pkt\"; accepted: a size in B, KB, MB, GB, KiB, MiB or GiB, e.g. \"10MB\""),
            ("/tcp/rwnd", json!("-1KB"), "tcp.rwnd: \"-1KB\" must be positive; accepted: \"unlimited\" or a size from 1B to 1000000GB"),
            ("/tcp/rwnd", json!("lots"), "tcp.rwnd: malformed size \"lots\"; accepted: \"unlimited\" or a size in B, KB, MB, GB, KiB, MiB or GiB, e.g. \"10MB\""),
            // probabilities
            ("/bottleneck/loss", json!(1.5), "bottleneck.loss: 1.5 is out of range; accepted: a probability in [0, 1]"),
            ("/bottleneck/ack_loss", json!(-0.1), "bottleneck.ack_loss: -0.1 is out of range; accepted: a probability in [0, 1]"),
            ("/bottleneck/loss", json!("1%"), "bottleneck.loss: expected a number, got \"1%\"; accepted: a probability in [0, 1]"),
            // counts
            ("/flows/0/count", json!(0), "flows[0].count: 0 is out of range; accepted: an integer in [1, 100000]"),
            ("/flows/0/count", json!(1.5), "flows[0].count: expected an integer, got 1.5; accepted: an integer in [1, 100000]"),
            ("/tcp/mss", json!(u64::MAX), "tcp.mss: 18446744073709551615 is out of range; accepted: an integer in [88, 65000]"),
            // seeds
            ("/seed", json!(-1), "seed: -1 is out of range; accepted: an integer in [0, 9223372036854775807]"),
            ("/seed", json!(9_223_372_036_854_775_808u64), "seed: 9223372036854775808 is out of range; accepted: an integer in [0, 9223372036854775807]"),
            ("/seed", json!(1e300), "seed: expected an integer, got 1e+300; accepted: an integer in [0, 9223372036854775807]"),
            ("/seed", json!("7"), "seed: expected an integer, got \"7\"; accepted: an integer in [0, 9223372036854775807]"),
            // algorithm parameters
            ("/flows/0/params", json!({"beta": 1e300}), "flows[0].params.beta: 1e+300 is out of range for \"cubic\"; accepted: an integer in [1, 1023] (1/1024)"),
        ];
        for (ptr, value, expected) in cases {
            let m = reject(|v| {
                // Walk the pointer, creating tables on the way (base() has no [tcp]).
                let mut node = v;
                for key in ptr[1..].split('/') {
                    node = match node {
                        Value::Array(a) => &mut a[key.parse::<usize>().unwrap()],
                        other => other.as_object_mut().unwrap().entry(key).or_insert(json!({})),
                    };
                }
                *node = value.clone();
            });
            assert_eq!(m, expected);
        }
    }

    #[test]
    fn udp_rates_malformed_or_out_of_range() {
        let range = "a number of packets per second in (0, 1e7], e.g. \"500pps\"";
        for (rate, expected) in [
            ("fastpps", format!("flows[0].rate: malformed packet rate \"fastpps\"; accepted: {range}")),
            ("0pps", format!("flows[0].rate: \"0pps\" must be positive; accepted: {range}")),
            ("2e7pps", format!("flows[0].rate: \"2e7pps\" is out of range; accepted: {range}")),
            ("0Mbps", "flows[0].rate: \"0Mbps\" must be positive; accepted: a rate from 1bps to 10000Gbps".to_string()),
            ("4Mbit", "flows[0].rate: malformed rate \"4Mbit\"; accepted: a packet rate such as \"500pps\" or a rate with unit bps, kbps, Mbps or Gbps, e.g. \"10Mbps\"".to_string()),
        ] {
            let v = json!({"duration": "1s", "wireless": {"hops": 1}, "flows": [{"protocol": "udp", "rate": rate}]});
            assert_eq!(AnyScenario::from_value(&v).unwrap_err().to_string(), expected);
        }
    }

    #[test]
    fn long_and_odd_values_stay_one_short_line() {
        let long = "x".repeat(10_000);
        let m = reject(|v| v["duration"] = json!(long));
        assert_eq!(m, format!("duration: malformed time \"{}... (10002 characters); accepted: a time with unit ns, us, ms or s, e.g. \"20ms\"", "x".repeat(59)));
        let m = reject(|v| v["name"] = json!(["a\nb"]));
        assert_eq!(m, "name: expected a string, got [\"a\\nb\"]; accepted: a string");
        let m = reject(|v| v["bottleneck"]["a\nb: c"] = json!(1));
        assert!(m.starts_with("bottleneck.\"a\\nb: c\": unknown key; accepted keys here: "), "{m}");
        let m = reject(|v| v["flows"][0]["cc"] = json!("x".repeat(500)));
        assert!(m.starts_with(&format!("flows[0].cc: unknown algorithm \"{}... (502 characters); accepted: newreno, ", "x".repeat(59))), "{m}");
        let m = reject(|v| v["flows"][0]["params"] = json!({"x".repeat(500): 1}));
        assert!(m.starts_with(&format!("flows[0].params.\"{}... (502 characters): unknown parameter", "x".repeat(59))), "{m}");
    }

    #[test]
    fn json_errors_say_what_is_accepted() {
        let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
        for text in [deep.as_str(), "{", "{\"seed\": 1e999}"] {
            let m = AnyScenario::from_json_str(text).unwrap_err().to_string();
            assert!(m.starts_with("the scenario is not valid JSON ("), "{m}");
            assert!(m.ends_with("; accepted: a JSON object with the structure of a scenario file, nested at most 128 levels deep"), "{m}");
        }
    }

    #[test]
    fn missing_required_fields() {
        let m = reject(|v| {
            v.as_object_mut().unwrap().remove("duration");
        });
        assert!(m.starts_with("duration: missing required field"), "{m}");
        let m = reject(|v| {
            v["bottleneck"].as_object_mut().unwrap().remove("rate");
        });
        assert!(m.starts_with("bottleneck.rate: missing required field"), "{m}");
        let m = reject(|v| v["flows"] = json!([]));
        assert!(m.starts_with("flows: empty"), "{m}");
        // The accepted algorithms come from the registry.
        let m = reject(|v| {
            v.as_object_mut().unwrap().remove("flows");
        });
        assert!(m.ends_with(&format!("each with cc = one of {}", crate::cc::names().join(", "))), "{m}");
    }

    #[test]
    fn algorithm_parameters_are_checked_against_the_algorithm() {
        let m = reject(|v| v["flows"][0]["params"] = json!({"rate_th": 2.4}));
        assert!(m.starts_with("flows[0].params.rate_th: unknown parameter of algorithm \"cubic\"; accepted: beta,"), "{m}");
        let m = reject(|v| v["flows"][0]["params"] = json!({"beta": 2000}));
        assert!(m.starts_with("flows[0].params.beta: 2000 is out of range for \"cubic\"; accepted: an integer in [1, 1023]"), "{m}");
        let m = reject(|v| v["flows"][0]["params"] = json!({"hystart": 1}));
        assert!(m.contains("accepted: true or false"), "{m}");
        let mut v = base();
        v["flows"][0]["params"] = json!({"hystart": false, "beta": 512});
        let sc = Scenario::from_value(&v).unwrap();
        assert_eq!(sc.flows[0].params.get("beta"), 512.0);
    }

    #[test]
    fn loss_detection_is_rfc6675_or_rack() {
        let mut v = base();
        v["tcp"] = json!({"recovery": "rack"});
        assert_eq!(Scenario::from_value(&v).unwrap().flows[0].tcp.recovery, LossDetection::Rack);
        let m = reject(|v| v["tcp"] = json!({"recovery": "tlp"}));
        assert_eq!(m, "tcp.recovery: invalid value \"tlp\"; accepted: \"rfc6675\" or \"rack\"");
    }

    #[test]
    fn rto_estimator_is_rfc6298_by_default_or_linux_per_flow() {
        use crate::tcp::rtt::RtoEstimator;
        let v = base();
        assert_eq!(Scenario::from_value(&v).unwrap().flows[0].tcp.rto_estimator, RtoEstimator::Rfc6298);
        let mut v = base();
        v["tcp"] = json!({"rto_estimator": "linux"});
        assert_eq!(Scenario::from_value(&v).unwrap().flows[0].tcp.rto_estimator, RtoEstimator::Linux);
        let m = reject(|v| v["tcp"] = json!({"rto_estimator": "bsd"}));
        assert_eq!(m, "tcp.rto_estimator: invalid value \"bsd\"; accepted: \"rfc6298\" or \"linux\"");
    }

    #[test]
    fn ecn_is_a_boolean_off_by_default_and_per_flow() {
        let sc = Scenario::from_value(&base()).unwrap();
        assert!(!sc.flows[0].tcp.ecn);
        assert_eq!(sc.normalized["tcp"]["ecn"], json!(false));
        let mut v = base();
        v["tcp"] = json!({"ecn": true});
        v["flows"] = json!([{"cc": "newreno"}, {"cc": "cubic", "ecn": false}]);
        let sc = Scenario::from_value(&v).unwrap();
        assert!(sc.flows[0].tcp.ecn && !sc.flows[1].tcp.ecn);
        let m = reject(|v| v["tcp"] = json!({"ecn": 1}));
        assert_eq!(m, "tcp.ecn: expected true or false, got 1");
        let m = reject(|v| v["flows"][0]["ecn"] = json!("yes"));
        assert_eq!(m, "flows[0].ecn: expected true or false, got \"yes\"");
    }

    #[test]
    fn per_flow_tcp_overrides() {
        let mut v = base();
        v["tcp"] = json!({"mss": 1000, "delayed_ack": false});
        v["flows"] = json!([{"cc": "bbr", "mss": 1448}, {"cc": "newreno"}]);
        let sc = Scenario::from_value(&v).unwrap();
        assert_eq!((sc.flows[0].tcp.mss, sc.flows[1].tcp.mss), (1448, 1000));
        assert!(!sc.flows[0].tcp.delayed_ack);
    }
}
