//! The scenario: parsed from the JSON form of the TOML file and validated in one place.
//! Every rejection names the field (as a path like `flows[0].cc`), the value, and what is
//! accepted. Unknown keys are errors, so a typo never silently falls back to a default.

use crate::cc::{self, Params};
use crate::limits::MAX_TOTAL_FLOWS;
use crate::tcp::{LossDetection, Pacing, TcpConfig, HEADER_BYTES};
use crate::time::{Time, MS, SEC};
use crate::units::{self, Size};
use crate::wireless::dcf::{Host, WFlow, WFlowKind, WirelessConfig};
use crate::wireless::phy::{profile, PROFILES};
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

fn show(v: &Value) -> String {
    match v {
        Value::String(s) => format!("\"{s}\""),
        other => other.to_string(),
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
                return err(&join(&self.path, k), format!("unknown key; accepted keys here: {}", acc.join(", ")));
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

fn as_str<'v>(path: &str, v: &'v Value, what: &str) -> Result<&'v str, ScenarioError> {
    v.as_str().map_or_else(|| err(path, format!("expected a string, got {}; accepted: {what}", show(v))), Ok)
}

fn parse_rate(path: &str, v: &Value) -> Result<u64, ScenarioError> {
    let s = as_str(path, v, RATE_HELP)?;
    units::parse_rate(s).map_or_else(|| err(path, format!("malformed rate {}; accepted: {RATE_HELP}", show(v))), Ok)
}

fn parse_time(path: &str, v: &Value) -> Result<Time, ScenarioError> {
    let s = as_str(path, v, TIME_HELP)?;
    units::parse_time(s).map_or_else(|| err(path, format!("malformed time {}; accepted: {TIME_HELP}", show(v))), Ok)
}

fn time_in(path: &str, v: &Value, lo: Time, hi: Time, what: &str) -> Result<Time, ScenarioError> {
    let t = parse_time(path, v)?;
    if t < lo || t > hi {
        return err(path, format!("{} is out of range; accepted: {what}", show(v)));
    }
    Ok(t)
}

fn int_in(path: &str, v: &Value, lo: i64, hi: i64) -> Result<i64, ScenarioError> {
    let Some(n) = v.as_i64() else {
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
        return err(path, format!("{x} is out of range; accepted: {what}"));
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
}

#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    pub name: Option<String>,
    pub duration: Time,
    pub seed: u64,
    pub sample_interval: Time,
    pub bottleneck: BottleneckConfig,
    /// One entry per flow, `count` expanded, in file order.
    pub flows: Vec<FlowConfig>,
    /// The input with defaults filled in (the normalised form `validate` returns).
    pub normalized: Value,
}

/// Most packets per second of a UDP flow, however its rate is written.
pub const MAX_UDP_PPS: f64 = 1e7;

/// Seeds are accepted in [0, 2^63 - 1] everywhere (TOML integers are signed 64-bit).
pub const MAX_SEED: u64 = i64::MAX as u64;

const TOP_KEYS: &[&str] = &["name", "description", "duration", "seed", "sample_interval", "bottleneck", "tcp", "flows"];
const BOTTLENECK_KEYS: &[&str] = &["rate", "delay", "buffer", "loss", "ack_loss"];
const TCP_KEYS: &[&str] = &[
    "mss", "delayed_ack", "delack_timeout", "min_rto", "max_rto", "initial_rto", "initial_cwnd", "rwnd", "timestamp_tick", "pacing", "dupthresh",
    "recovery",
];
const FLOW_KEYS: &[&str] = &["cc", "count", "access_rate", "access_delay", "start", "stop", "size", "params"];
/// Flow keys of a `[wireless]` scenario only.
const WIRELESS_FLOW_KEYS: &[&str] = &["protocol", "rate", "packet_size", "src", "dst"];

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
    ]
}

fn apply_tcp_key(tcp: &mut TcpConfig, path: &str, key: &str, v: &Value) -> Result<(), ScenarioError> {
    match key {
        "mss" => tcp.mss = int_in(path, v, 88, 65_000)? as u32,
        "delayed_ack" => tcp.delayed_ack = boolean(path, v)?,
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
                match units::parse_size(s, false, false) {
                    Some(Size::Bytes(b)) if b >= 1 => b,
                    _ => return err(path, format!("malformed size {}; accepted: \"unlimited\" or {SIZE_HELP}", show(v))),
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
        _ => unreachable!(),
    }
    Ok(())
}

fn parse_params(path: &str, cc_name: &str, v: Option<&Value>) -> Result<Params, ScenarioError> {
    let info = cc::find(cc_name).expect("validated algorithm");
    let mut params = Params::defaults(info.params);
    let Some(v) = v else { return Ok(params) };
    let Value::Object(map) = v else {
        return err(path, format!("expected a table of parameters, got {}", show(v)));
    };
    for (k, val) in map {
        let kp = format!("{path}.{k}");
        let Some(spec) = info.params.iter().find(|s| s.name == k) else {
            let names: Vec<&str> = info.params.iter().map(|s| s.name).collect();
            let accepted = if names.is_empty() { "none".to_string() } else { names.join(", ") };
            return err(&kp, format!("unknown parameter of algorithm \"{cc_name}\"; accepted: {accepted}"));
        };
        let x = if spec.boolean {
            match val {
                Value::Bool(b) => *b as u8 as f64,
                _ => return err(&kp, format!("{} is not valid for \"{cc_name}\"; accepted: true or false", show(val))),
            }
        } else {
            let Some(x) = val.as_f64() else {
                return err(&kp, format!("{} is not valid for \"{cc_name}\"; accepted: {}", show(val), spec.range_text()));
            };
            if !(x >= spec.min && x <= spec.max) || (spec.integer && x.fract() != 0.0) {
                return err(&kp, format!("{} is out of range for \"{cc_name}\"; accepted: {} ({})", show(val), spec.range_text(), spec.unit));
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
}

/// Parse `[[flows]]`. `hops` is `Some` for a wireless line (stations 0..=hops), which allows
/// `protocol`, `rate`, `packet_size`, `src` and `dst`, and has no access links.
fn parse_flows(top: &Table, c: &Common, hops: Option<usize>) -> Result<(Vec<ParsedFlow>, Vec<Value>), ScenarioError> {
    let fv = top.require("flows", "one or more [[flows]] tables, each with cc = \"newreno\", \"cubic\" or \"bbr\"")?;
    let Value::Array(groups) = fv else {
        return err("flows", format!("expected an array of tables ([[flows]]), got {}", show(fv)));
    };
    if groups.is_empty() {
        return err("flows", "empty; accepted: one or more [[flows]] tables");
    }
    let mut allowed_flow: Vec<&'static str> = FLOW_KEYS.to_vec();
    allowed_flow.extend_from_slice(TCP_KEYS);
    allowed_flow.extend_from_slice(WIRELESS_FLOW_KEYS);
    let duration = c.duration;
    let mut flows = Vec::new();
    let mut flows_norm = Vec::new();
    for (gi, g) in groups.iter().enumerate() {
        let gp = format!("flows[{gi}]");
        let t = Table::new(&gp, g, &allowed_flow)?;
        t.check_unknown()?;
        match hops {
            None => {
                for k in WIRELESS_FLOW_KEYS {
                    if t.get(k).is_some() {
                        return err(&t.p(k), "only used in a [wireless] scenario; a dumbbell flow is TCP from its own sender over its access link");
                    }
                }
            }
            Some(_) => {
                for k in ["access_rate", "access_delay"] {
                    if t.get(k).is_some() {
                        return err(&t.p(k), "not used in a [wireless] scenario: flows run between stations of the line (use src and dst)");
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
        if hops.is_some() {
            fnorm.insert("protocol".into(), Value::from(protocol));
        }
        let (cc_name, traffic) = if protocol == "udp" {
            for k in ["cc", "params", "size"].iter().chain(TCP_KEYS.iter()) {
                if t.get(k).is_some() {
                    let hint = if *k == "size" { " (the datagram size is packet_size)" } else { "" };
                    return err(&t.p(k), format!("not used by a UDP flow{hint}; accepted keys for protocol = \"udp\": rate, packet_size, count, start, stop, src, dst"));
                }
            }
            let psv = t.get("packet_size").cloned().unwrap_or(Value::from(1000));
            let size = int_in(&t.p("packet_size"), &psv, 1, 65_507)? as u32;
            let rv = t.require("rate", "a packet rate such as \"500pps\" or a bit rate such as \"4Mbps\" (of UDP payload)")?;
            let rs = as_str(&t.p("rate"), rv, "a packet rate such as \"500pps\" or a bit rate such as \"4Mbps\"")?;
            let pps = if let Some(n) = rs.strip_suffix("pps") {
                match n.trim().parse::<f64>() {
                    Ok(x) if x > 0.0 && x <= MAX_UDP_PPS => x,
                    _ => return err(&t.p("rate"), format!("{} is not a valid packet rate; accepted: a number of packets per second in (0, 1e7], e.g. \"500pps\"", show(rv))),
                }
            } else {
                match units::parse_rate(rs) {
                    // The cap is on packets, however the rate is written.
                    Some(bps) => match bps as f64 / (8.0 * size as f64) {
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
                    None => return err(&t.p("rate"), format!("malformed rate {}; accepted: a packet rate such as \"500pps\" or {RATE_HELP}", show(rv))),
                }
            };
            fnorm.insert("rate".into(), rv.clone());
            fnorm.insert("packet_size".into(), psv);
            ("udp", Traffic::Udp { pps, size })
        } else {
            for k in ["rate", "packet_size"] {
                if t.get(k).is_some() {
                    return err(&t.p(k), "only used by a UDP flow (protocol = \"udp\")");
                }
            }
            let ccv = t.require("cc", &format!("one of {}", cc::names().join(", ")))?;
            let cc_name = as_str(&t.p("cc"), ccv, &cc::names().join(", "))?;
            if cc::find(cc_name).is_none() {
                return err(&t.p("cc"), format!("unknown algorithm \"{cc_name}\"; accepted: {}", cc::names().join(", ")));
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
        if hops.is_none() {
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
                    Some(Size::Bytes(b)) if b >= 1 => Some(b),
                    Some(_) => return err(&t.p("size"), format!("{} is out of range; accepted: at least 1B", show(x))),
                    None => return err(&t.p("size"), format!("malformed size {}; accepted: {SIZE_HELP}", show(x))),
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
            fnorm.insert("params".into(), Value::Object(pn));
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
                },
                traffic: traffic.clone(),
                src,
                dst,
            });
        }
    }
    Ok((flows, flows_norm))
}

/// A scenario of either network: what `ccsim run` and the bindings accept.
#[derive(Debug, Clone, PartialEq)]
pub enum AnyScenario {
    Dumbbell(Scenario),
    Wireless(WirelessScenario),
}

impl AnyScenario {
    pub fn from_json_str(s: &str) -> Result<AnyScenario, ScenarioError> {
        let v: Value = serde_json::from_str(s).map_err(|e| ScenarioError { path: String::new(), message: format!("invalid scenario JSON: {e}") })?;
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
    "host", "rts_cts",
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

/// Named host processing profiles (see `wireless::dcf::Host`).
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

impl WirelessScenario {
    pub fn from_value(v: &Value) -> Result<WirelessScenario, ScenarioError> {
        let mut keys = TOP_KEYS.to_vec();
        keys.push("wireless");
        keys.retain(|k| *k != "bottleneck");
        if v.get("bottleneck").is_some() {
            return err("bottleneck", "a scenario has either a [bottleneck] (dumbbell) or a [wireless] table, not both");
        }
        let top = Table::new("", v, &keys)?;
        top.check_unknown()?;
        let mut c = parse_common(&top)?;

        let w = Table::new("wireless", top.get("wireless").expect("checked"), WIRELESS_KEYS)?;
        w.check_unknown()?;
        let mut wn = Map::new();
        let hops = int_in("wireless.hops", w.require("hops", "an integer in [1, 64]")?, 1, 64)? as usize;
        wn.insert("hops".into(), Value::from(hops));
        let pv = w.get("profile").cloned().unwrap_or(Value::from("80211n-20mhz"));
        let pname = as_str("wireless.profile", &pv, &PROFILES.join(", "))?;
        let Some(phy) = profile(pname) else {
            return err("wireless.profile", format!("unknown profile {}; accepted: {}", show(&pv), PROFILES.join(", ")));
        };
        wn.insert("profile".into(), pv.clone());
        let mut cfg = WirelessConfig::new(hops, phy);
        let ev = w.get("environment").cloned().unwrap_or(Value::from("darkroom"));
        let ename = as_str("wireless.environment", &ev, &ENVIRONMENTS.join(", "))?;
        let Some((load, fer, bg_frame)) = environment(ename) else {
            return err("wireless.environment", format!("unknown environment {}; accepted: {}", show(&ev), ENVIRONMENTS.join(", ")));
        };
        wn.insert("environment".into(), ev.clone());
        cfg.background_load = load;
        cfg.fer = fer;
        cfg.background_frame = bg_frame;
        if let Some(x) = w.get("background_load") {
            cfg.background_load = float_in("wireless.background_load", x, 0.0, 0.95, "a fraction of airtime in [0, 0.95]")?;
        }
        if let Some(x) = w.get("fer") {
            cfg.fer = float_in("wireless.fer", x, 0.0, 1.0, "a probability in [0, 1]")?;
        }
        if let Some(x) = w.get("background_frame") {
            cfg.background_frame = time_in("wireless.background_frame", x, crate::time::US, SEC, "a time from 1us to 1s")?;
        }
        wn.insert("background_load".into(), Value::from(cfg.background_load));
        wn.insert("fer".into(), Value::from(cfg.fer));
        wn.insert("background_frame".into(), w.get("background_frame").cloned().unwrap_or(Value::from(format!("{}us", cfg.background_frame / crate::time::US))));
        if let Some(x) = w.get("queue") {
            cfg.queue_pkts = int_in("wireless.queue", x, 1, 1_000_000)? as usize;
        }
        wn.insert("queue".into(), Value::from(cfg.queue_pkts));
        if let Some(x) = w.get("retry_limit") {
            cfg.retry_limit = int_in("wireless.retry_limit", x, 1, 255)? as u32;
        }
        wn.insert("retry_limit".into(), Value::from(cfg.retry_limit));
        if let Some(x) = w.get("rx_reach") {
            cfg.rx_reach = int_in("wireless.rx_reach", x, 1, 64)? as usize;
        }
        if let Some(x) = w.get("cs_reach") {
            cfg.cs_reach = int_in("wireless.cs_reach", x, cfg.rx_reach as i64, 64)? as usize;
        }
        if let Some(x) = w.get("if_reach") {
            cfg.if_reach = int_in("wireless.if_reach", x, cfg.rx_reach as i64, 64)? as usize;
        }
        if cfg.cs_reach < cfg.rx_reach {
            return err("wireless.rx_reach", format!("{} is beyond cs_reach = {}; a station senses every frame it can decode", cfg.rx_reach, cfg.cs_reach));
        }
        if cfg.if_reach < cfg.rx_reach {
            return err("wireless.rx_reach", format!("{} is beyond if_reach = {}; a frame that can be decoded also interferes", cfg.rx_reach, cfg.if_reach));
        }
        wn.insert("rx_reach".into(), Value::from(cfg.rx_reach));
        wn.insert("cs_reach".into(), Value::from(cfg.cs_reach));
        wn.insert("if_reach".into(), Value::from(cfg.if_reach));
        if let Some(x) = w.get("rts_cts") {
            if boolean("wireless.rts_cts", x)? {
                return err("wireless.rts_cts", "true is not supported: RTS/CTS is not modelled; accepted: false");
            }
        }
        wn.insert("rts_cts".into(), Value::from(false));
        let hv = w.get("host").cloned().unwrap_or(Value::from("none"));
        cfg.host = match &hv {
            Value::String(sn) => match host_profile(sn) {
                Some(h) => h,
                None => return err("wireless.host", format!("unknown host profile {}; accepted: {} or a table with ingress, egress and backlog", show(&hv), HOSTS.join(", "))),
            },
            Value::Object(_) => {
                let h = Table::new("wireless.host", &hv, HOST_KEYS)?;
                h.check_unknown()?;
                let mut host = Host::none();
                if let Some(x) = h.get("ingress") {
                    host.ingress = time_in("wireless.host.ingress", x, 0, SEC, "a time from 0s to 1s")?;
                }
                if let Some(x) = h.get("egress") {
                    host.egress = time_in("wireless.host.egress", x, 0, SEC, "a time from 0s to 1s")?;
                }
                if let Some(x) = h.get("backlog") {
                    host.backlog = int_in("wireless.host.backlog", x, 1, 1_000_000)? as usize;
                }
                host
            }
            _ => return err("wireless.host", format!("expected a string or a table, got {}; accepted: {} or a table with ingress, egress and backlog", show(&hv), HOSTS.join(", "))),
        };
        wn.insert(
            "host".into(),
            serde_json::json!({
                "ingress": format!("{}ns", cfg.host.ingress),
                "egress": format!("{}ns", cfg.host.egress),
                "backlog": cfg.host.backlog,
            }),
        );

        let (parsed, flows_norm) = parse_flows(&top, &c, Some(hops))?;
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

impl Scenario {
    pub fn from_json_str(s: &str) -> Result<Scenario, ScenarioError> {
        let v: Value = serde_json::from_str(s).map_err(|e| ScenarioError { path: String::new(), message: format!("invalid scenario JSON: {e}") })?;
        Scenario::from_value(&v)
    }

    pub fn from_value(v: &Value) -> Result<Scenario, ScenarioError> {
        if v.get("wireless").is_some() {
            return err("wireless", "a [wireless] scenario is not a dumbbell (parse it with AnyScenario)");
        }
        let top = Table::new("", v, TOP_KEYS)?;
        top.check_unknown()?;
        let mut c = parse_common(&top)?;
        let (parsed, flows_norm) = parse_flows(&top, &c, None)?;
        let flows: Vec<FlowConfig> = parsed.into_iter().map(|p| p.cfg).collect();
        let (duration, seed, tcp) = (c.duration, c.seed, c.tcp.clone());
        let mut norm = std::mem::take(&mut c.norm);
        let tcp_norm = std::mem::take(&mut c.tcp_norm);
        // [bottleneck]
        let bv = top.require("bottleneck", "a [bottleneck] table with rate and delay")?;
        let b = Table::new("bottleneck", bv, BOTTLENECK_KEYS)?;
        b.check_unknown()?;
        let rate_bps = parse_rate("bottleneck.rate", b.require("rate", RATE_HELP)?)?;
        let delay = time_in("bottleneck.delay", b.require("delay", TIME_HELP)?, 0, 100 * SEC, "a time from 0s to 100s")?;
        let bufv = b.get("buffer").cloned().unwrap_or(Value::from("1bdp"));
        let bs = as_str("bottleneck.buffer", &bufv, BUFFER_HELP)?;
        let buffer = units::parse_size(bs, true, true)
            .ok_or_else(|| ScenarioError { path: "bottleneck.buffer".into(), message: format!("malformed size {}; accepted: {BUFFER_HELP}", show(&bufv)) })?;
        let (buffer_pkts, buffer_bytes) = match buffer {
            Size::Packets(n) => {
                if n < 1 {
                    return err("bottleneck.buffer", format!("{} is out of range; accepted: at least 1pkt", show(&bufv)));
                }
                (Some(n), None)
            }
            Size::Bytes(n) => {
                if n < 1 {
                    return err("bottleneck.buffer", format!("{} is out of range; accepted: at least 1B", show(&bufv)));
                }
                (None, Some(n))
            }
            Size::Bdp(k) if k <= 0.0 => {
                return err("bottleneck.buffer", format!("{} is out of range; accepted: a positive multiple of the BDP", show(&bufv)));
            }
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
        let loss = float_in("bottleneck.loss", &lossv, 0.0, 1.0, "a probability in [0, 1]")?;
        let alv = b.get("ack_loss").cloned().unwrap_or(Value::from(0.0));
        let ack_loss = float_in("bottleneck.ack_loss", &alv, 0.0, 1.0, "a probability in [0, 1]")?;
        let mut bnorm = Map::new();
        bnorm.insert("rate".into(), b.get("rate").unwrap().clone());
        bnorm.insert("delay".into(), b.get("delay").unwrap().clone());
        bnorm.insert("buffer".into(), bufv);
        bnorm.insert("loss".into(), lossv);
        bnorm.insert("ack_loss".into(), alv);
        norm.insert("bottleneck".into(), Value::Object(bnorm));
        norm.insert("tcp".into(), Value::Object(tcp_norm));
        norm.insert("flows".into(), Value::Array(flows_norm));

        Ok(Scenario {
            name: c.name,
            duration,
            seed,
            sample_interval: c.sample_interval,
            bottleneck: BottleneckConfig { rate_bps, delay, buffer, buffer_pkts, buffer_bytes, loss, ack_loss },
            flows,
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
        assert_eq!(sc.bottleneck.buffer_pkts, Some(50));
        assert_eq!(sc.flows[0].tcp.min_rto, 200 * MS);
        assert_eq!(sc.seed, 1);
        // 2bdp of 10 Mbps x 40 ms = 100 kB = 66.7 packets of 1500 B -> 67.
        let mut v = base();
        v["bottleneck"]["buffer"] = json!("2bdp");
        assert_eq!(Scenario::from_value(&v).unwrap().bottleneck.buffer_pkts, Some(67));
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
        assert!(m.starts_with("flows[0].cc: unknown algorithm \"cubicc\"; accepted: newreno, cubic, bbr, "), "{m}");
        for name in crate::cc::names() {
            assert!(m.contains(name), "{m} lacks {name}");
        }
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
    fn per_flow_tcp_overrides() {
        let mut v = base();
        v["tcp"] = json!({"mss": 1000, "delayed_ack": false});
        v["flows"] = json!([{"cc": "bbr", "mss": 1448}, {"cc": "newreno"}]);
        let sc = Scenario::from_value(&v).unwrap();
        assert_eq!((sc.flows[0].tcp.mss, sc.flows[1].tcp.mss), (1448, 1000));
        assert!(!sc.flows[0].tcp.delayed_ack);
    }
}
