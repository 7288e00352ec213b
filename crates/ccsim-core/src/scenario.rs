//! The scenario: parsed from the JSON form of the TOML file and validated in one place.
//! Every rejection names the field (as a path like `flows[0].cc`), the value, and what is
//! accepted. Unknown keys are errors, so a typo never silently falls back to a default.

use crate::cc::{self, Params};
use crate::tcp::{LossDetection, Pacing, TcpConfig, HEADER_BYTES};
use crate::time::{Time, MS, SEC};
use crate::units::{self, Size};
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

/// Seeds are accepted in [0, 2^63 - 1] everywhere (TOML integers are signed 64-bit).
pub const MAX_SEED: u64 = i64::MAX as u64;

const TOP_KEYS: &[&str] = &["name", "description", "duration", "seed", "sample_interval", "bottleneck", "tcp", "flows"];
const BOTTLENECK_KEYS: &[&str] = &["rate", "delay", "buffer", "loss", "ack_loss"];
const TCP_KEYS: &[&str] = &[
    "mss", "delayed_ack", "delack_timeout", "min_rto", "max_rto", "initial_rto", "initial_cwnd", "rwnd", "timestamp_tick", "pacing", "dupthresh",
    "recovery",
];
const FLOW_KEYS: &[&str] = &["cc", "count", "access_rate", "access_delay", "start", "stop", "size", "params"];

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

impl Scenario {
    pub fn from_json_str(s: &str) -> Result<Scenario, ScenarioError> {
        let v: Value = serde_json::from_str(s).map_err(|e| ScenarioError { path: String::new(), message: format!("invalid scenario JSON: {e}") })?;
        Scenario::from_value(&v)
    }

    pub fn from_value(v: &Value) -> Result<Scenario, ScenarioError> {
        let top = Table::new("", v, TOP_KEYS)?;
        top.check_unknown()?;
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

        // [[flows]]
        let fv = top.require("flows", "one or more [[flows]] tables, each with cc = \"newreno\", \"cubic\" or \"bbr\"")?;
        let Value::Array(groups) = fv else {
            return err("flows", format!("expected an array of tables ([[flows]]), got {}", show(fv)));
        };
        if groups.is_empty() {
            return err("flows", "empty; accepted: one or more [[flows]] tables");
        }
        let mut allowed_flow: Vec<&'static str> = FLOW_KEYS.to_vec();
        allowed_flow.extend_from_slice(TCP_KEYS);
        let mut flows = Vec::new();
        let mut flows_norm = Vec::new();
        for (gi, g) in groups.iter().enumerate() {
            let gp = format!("flows[{gi}]");
            let t = Table::new(&gp, g, &allowed_flow)?;
            t.check_unknown()?;
            let ccv = t.require("cc", &format!("one of {}", cc::names().join(", ")))?;
            let cc_name = as_str(&t.p("cc"), ccv, &cc::names().join(", "))?;
            if cc::find(cc_name).is_none() {
                return err(&t.p("cc"), format!("unknown algorithm \"{cc_name}\"; accepted: {}", cc::names().join(", ")));
            }
            let count = match t.get("count") {
                None => 1,
                Some(x) => int_in(&t.p("count"), x, 1, 100_000)? as usize,
            };
            let arv = t.get("access_rate").cloned().unwrap_or(Value::from("1Gbps"));
            let access_rate_bps = parse_rate(&t.p("access_rate"), &arv)?;
            let adv = t.get("access_delay").cloned().unwrap_or(Value::from("0ms"));
            let access_delay = time_in(&t.p("access_delay"), &adv, 0, 100 * SEC, "a time from 0s to 100s")?;
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
            let mut ftcp = tcp.clone();
            let mut fnorm = Map::new();
            fnorm.insert("cc".into(), Value::from(cc_name));
            fnorm.insert("count".into(), Value::from(count));
            fnorm.insert("access_rate".into(), arv);
            fnorm.insert("access_delay".into(), adv);
            fnorm.insert("start".into(), sv);
            for k in ["stop", "size"] {
                if let Some(x) = t.get(k) {
                    fnorm.insert(k.into(), x.clone());
                }
            }
            for k in TCP_KEYS {
                if let Some(x) = t.get(k) {
                    apply_tcp_key(&mut ftcp, &t.p(k), k, x)?;
                    fnorm.insert((*k).into(), x.clone());
                }
            }
            if ftcp.max_rto < ftcp.min_rto {
                return err(&t.p("max_rto"), "must not be below min_rto");
            }
            let params = parse_params(&t.p("params"), cc_name, t.get("params"))?;
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
            flows_norm.push(Value::Object(fnorm));
            for _ in 0..count {
                flows.push(FlowConfig {
                    group: gi,
                    cc: cc_name.to_string(),
                    params: params.clone(),
                    tcp: ftcp.clone(),
                    access_rate_bps,
                    access_delay,
                    start,
                    stop,
                    size,
                });
            }
        }

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
            name,
            duration,
            seed,
            sample_interval,
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
