//! Time-varying link fields: `rate = { trace = "file" }`, `rate = { schedule = [...] }`,
//! `delay = { schedule = [...] }`, `loss = { schedule = [...] }` and `reorder` (see
//! [`crate::net::shape`] for what they do).

use super::{err, float_in, show, time_in, units, ScenarioError, Table, UnitError, RATE_HELP, TIME_HELP};
use crate::net::shape::{RateShape, Shape, Steps, Trace};
use crate::net::Varying;
use crate::time::{Time, SEC};
use serde_json::Value;

/// The time-varying parts of a direction, as configured (each None: constant).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct VarySpec {
    pub rate: Option<Shape>,
    pub delay: Option<Steps<Time>>,
    pub loss: Option<Steps<f64>>,
    pub reorder: bool,
}

impl VarySpec {
    pub fn is_constant(&self) -> bool {
        self.rate.is_none() && self.delay.is_none() && self.loss.is_none()
    }

    /// The link's varying state (None if only the loss varies, or nothing).
    pub fn link_varying(&self) -> Option<Box<Varying>> {
        if self.rate.is_none() && self.delay.is_none() {
            return None;
        }
        Some(Box::new(Varying { rate: self.rate.clone().map(RateShape::new), delay: self.delay.clone(), reorder: self.reorder }))
    }
}

const TRACE_HELP: &str = "{ trace = \"file\" } (a mahimahi trace: one time in milliseconds per line, each a 1500-byte delivery opportunity; the path relative to the scenario file) or { schedule = [[\"0s\", \"10Mbps\"], [\"20s\", \"2Mbps\"]] }";

/// A rate written as a table: a trace or a schedule. `constant_help` says what a plain rate is.
pub(super) fn parse_rate_table(path: &str, v: &Value) -> Result<Shape, ScenarioError> {
    let t = Table::new(path, v, &["trace", "schedule"])?;
    t.check_unknown()?;
    match (t.get("trace"), t.get("schedule")) {
        (Some(tv), None) => {
            let p = t.p("trace");
            let Some(file) = tv.as_str() else {
                return err(&p, format!("expected the path of a trace file, got {}; accepted: {TRACE_HELP}", show(tv)));
            };
            let text = std::fs::read_to_string(file).or_else(|e| err(&p, format!("cannot read the trace file {}: {e}; accepted: the path of a mahimahi trace file, relative to the scenario file", show(tv))))?;
            let trace = Trace::parse(&text).or_else(|e| err(&p, format!("the trace file {} is not a mahimahi trace: {e}", show(tv))))?;
            Ok(Shape::Trace(trace))
        }
        (None, Some(sv)) => {
            let steps = parse_steps(&t.p("schedule"), sv, "a rate with unit bps, kbps, Mbps or Gbps (\"0bps\": an outage), e.g. \"10Mbps\"", |p, x| {
                let s = x.as_str().map_or_else(|| err(p, format!("expected a rate, got {}; accepted: {RATE_HELP} (\"0bps\": an outage)", show(x))), Ok)?;
                match units::parse_rate(s) {
                    Ok(r) => Ok(r),
                    Err(UnitError::NotPositive) if units::parse_number(s.trim_end_matches(|c: char| c.is_ascii_alphabetic())) == Some(0.0) => Ok(0),
                    Err(e) => super::rate_error(p, x, e, &format!("{RATE_HELP} (\"0bps\": an outage)")),
                }
            })?;
            if steps.steps.iter().all(|&(_, r)| r == 0) {
                return err(&t.p("schedule"), "every step is an outage (0bps); accepted: at least one step with a rate above 0");
            }
            Ok(Shape::Schedule(steps))
        }
        _ => err(path, format!("expected one of trace or schedule, got {}; accepted: {TRACE_HELP}", show(v))),
    }
}

/// `delay = { schedule = [...] }`.
pub(super) fn parse_delay_table(path: &str, v: &Value) -> Result<Steps<Time>, ScenarioError> {
    let t = Table::new(path, v, &["schedule"])?;
    t.check_unknown()?;
    let sv = t.require("schedule", "[[\"0s\", \"20ms\"], [\"10s\", \"80ms\"]]: (from, delay) steps")?;
    parse_steps(&t.p("schedule"), sv, "a time from 0s to 100s", |p, x| time_in(p, x, 0, 100 * SEC, "a time from 0s to 100s"))
}

/// `loss = { schedule = [...] }`.
pub(super) fn parse_loss_table(path: &str, v: &Value) -> Result<Steps<f64>, ScenarioError> {
    let t = Table::new(path, v, &["schedule"])?;
    t.check_unknown()?;
    let sv = t.require("schedule", "[[\"0s\", 0.0], [\"10s\", 0.05]]: (from, probability) steps")?;
    parse_steps(&t.p("schedule"), sv, "a probability in [0, 1]", |p, x| float_in(p, x, 0.0, 1.0, "a probability in [0, 1]"))
}

/// `[[from, value], ...]`: the first from "0s", the times increasing.
fn parse_steps<T: Copy>(path: &str, v: &Value, value_help: &str, value: impl Fn(&str, &Value) -> Result<T, ScenarioError>) -> Result<Steps<T>, ScenarioError> {
    let help = format!("an array of [time, value] steps, the first at \"0s\", the times increasing; a time: {TIME_HELP}; a value: {value_help}");
    let Value::Array(items) = v else {
        return err(path, format!("expected an array of steps, got {}; accepted: {help}", show(v)));
    };
    if items.is_empty() {
        return err(path, format!("empty; accepted: {help}"));
    }
    let mut steps: Vec<(Time, T)> = Vec::with_capacity(items.len());
    for (i, it) in items.iter().enumerate() {
        let p = format!("{path}[{i}]");
        let pair = match it {
            Value::Array(a) if a.len() == 2 => a,
            _ => return err(&p, format!("expected a [time, value] pair, got {}; accepted: {help}", show(it))),
        };
        let t = time_in(&format!("{p}[0]"), &pair[0], 0, 1_000_000 * SEC, "a time from 0s to 1000000s")?;
        if i == 0 && t != 0 {
            return err(&format!("{p}[0]"), format!("the first step starts at {}; accepted: the first step at \"0s\"", show(&pair[0])));
        }
        if let Some(&(prev, _)) = steps.last() {
            if t <= prev {
                return err(&format!("{p}[0]"), format!("{} is not after the previous step's time (out of order); accepted: {help}", show(&pair[0])));
            }
        }
        steps.push((t, value(&format!("{p}[1]"), &pair[1])?));
    }
    Ok(Steps::new(steps))
}
