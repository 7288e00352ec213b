//! Cutting a run into chunks of events, and running without a time series, change nothing
//! but what is recorded.

use ccsim_core::cc;
use ccsim_core::metrics::{EventLog, TimeSeries, MAX_CC_EVENTS, TRUNCATED_KIND};
use ccsim_core::scenario::{AnyScenario, WirelessScenario};
use ccsim_core::sim::Sim;
use ccsim_core::Scenario;
use serde_json::{json, Value};

fn without_wall(s: &str) -> Value {
    let mut v: Value = serde_json::from_str(s).unwrap();
    v.as_object_mut().unwrap().remove("wall_seconds");
    v
}

/// Every column of a time series, as JSON text (NaN-safe, bit-exact for f64).
fn ts_text(ts: &TimeSeries) -> String {
    let f = |v: &Vec<f64>| v.iter().map(|x| x.to_bits()).collect::<Vec<u64>>();
    format!(
        "{:?}",
        (
            (f(&ts.time_s), &ts.flow, &ts.cc, f(&ts.delivery_rate_mbps), f(&ts.goodput_mbps), &ts.bytes_acked),
            (&ts.cwnd_pkts, f(&ts.srtt_ms), f(&ts.rtprop_ms), f(&ts.btlbw_mbps), f(&ts.pacing_rate_mbps), &ts.inflight_pkts),
            (f(&ts.rho), &ts.queue_state, f(&ts.shadow_wnd_pkts), &ts.queue_pkts, &ts.queue_bytes),
        )
    )
}

fn ev_text(ev: &EventLog) -> String {
    let f = |v: &Vec<f64>| v.iter().map(|x| x.to_bits()).collect::<Vec<u64>>();
    format!("{:?}", (f(&ev.time_s), &ev.flow, &ev.cc, &ev.kind, f(&ev.value), f(&ev.value2)))
}

/// A dumbbell with every algorithm, random and ACK loss, and flows starting and stopping.
fn dumbbell() -> Scenario {
    let flows: Vec<Value> = cc::names()
        .iter()
        .enumerate()
        .map(|(i, name)| json!({"cc": name, "start": format!("{}ms", 37 * i), "access_delay": format!("{}ms", i % 3)}))
        .chain([json!({"cc": "cubic", "start": "1s", "stop": "4s", "size": "2MB"})])
        .collect();
    Scenario::from_value(&json!({
        "duration": "6s",
        "sample_interval": "7ms",
        "bottleneck": {"rate": "40Mbps", "delay": "10ms", "buffer": "30pkt", "loss": 0.002, "ack_loss": 0.002},
        "tcp": {"recovery": "rack"},
        "flows": flows,
    }))
    .unwrap()
}

fn wireless() -> WirelessScenario {
    match AnyScenario::from_value(&json!({
        "duration": "4s",
        "sample_interval": "3ms",
        "wireless": {"hops": 3, "environment": "indoor", "host": "rpi3"},
        "flows": [
            {"cc": "bbr-rtprop", "params": {"rate_th": 1.05}},
            {"cc": "cubic", "start": "0.5s"},
            {"protocol": "udp", "rate": "400pps", "src": 1, "dst": 3},
        ],
    }))
    .unwrap()
    {
        AnyScenario::Wireless(w) => w,
        _ => unreachable!(),
    }
}

/// (summary without wall time, time series, events) of a dumbbell run cut every `budget` events.
fn run_dumbbell(sc: &Scenario, timeseries: bool, budget: u64) -> (Value, String, String) {
    let mut sim = Sim::with_timeseries(sc, 5, timeseries);
    let mut chunks = 0u64;
    while !sim.run_until_limited(sim.end_time(), budget) {
        chunks += 1;
    }
    if budget < 1000 {
        assert!(chunks > 1000, "the run was cut into {chunks} chunks only");
    }
    sim.finish();
    let mut out = sim.into_output(sc, 0.0);
    (without_wall(&out.summary.to_json()), ts_text(&out.timeseries), ev_text(&out.events.take_closed()))
}

fn run_wireless(sc: &WirelessScenario, timeseries: bool, budget: u64) -> (Value, String, String) {
    let mut sim = Sim::line(sc, 5, timeseries);
    // Cut by time as well as by events: 1 s steps, each run in chunks.
    let mut t = 0;
    while t < sim.end_time() {
        t = (t + 1_000_000_000).min(sim.end_time());
        while !sim.run_until_limited(t, budget) {}
    }
    sim.finish();
    let (summary, ts, ev) = sim.into_line_output(sc, 0.0);
    (without_wall(&summary.to_string()), ts_text(&ts), ev_text(&ev))
}

#[test]
fn a_dumbbell_run_cut_into_chunks_of_events_is_the_same_run() {
    let sc = dumbbell();
    let whole = run_dumbbell(&sc, true, u64::MAX);
    assert!(whole.0["events"].as_u64().unwrap() > 50_000);
    for budget in [1, 7, 4096] {
        assert_eq!(run_dumbbell(&sc, true, budget), whole, "budget {budget}");
    }
}

#[test]
fn a_wireless_run_cut_into_chunks_of_events_is_the_same_run() {
    let sc = wireless();
    let whole = run_wireless(&sc, true, u64::MAX);
    assert!(whole.0["events"].as_u64().unwrap() > 50_000);
    for budget in [1, 13, 4096] {
        assert_eq!(run_wireless(&sc, true, budget), whole, "budget {budget}");
    }
}

#[test]
fn without_a_time_series_the_summary_and_events_are_the_same() {
    let sc = dumbbell();
    let (with, ts, ev) = run_dumbbell(&sc, true, u64::MAX);
    let (without, ts0, ev0) = run_dumbbell(&sc, false, u64::MAX);
    assert_eq!(without, with);
    assert_eq!(ev0, ev);
    assert_ne!(ev, ev_text(&EventLog::default()), "the test should cover algorithms that log events");
    assert_ne!(ts0, ts);
    assert_eq!(ts0, ts_text(&TimeSeries::default()));
    // The sampling ticks are counted in `events` either way: 6 s / 7 ms of them.
    let mut sim = Sim::with_timeseries(&sc, 5, true);
    sim.run_to_end();
    let samples = (0..sim.ts.len()).filter(|&i| sim.ts.flow[i] == 0).count() as u64;
    assert_eq!(samples, 6000 / 7);

    let sc = wireless();
    let (with, ts, ev) = run_wireless(&sc, true, u64::MAX);
    let (without, ts0, ev0) = run_wireless(&sc, false, 999);
    assert_eq!(without, with);
    assert_eq!(ev0, ev);
    assert!(ev.contains("rtprop_update"), "the test should cover an algorithm that logs events");
    assert_eq!(ts0, ts_text(&TimeSeries::default()));
    assert_ne!(ts0, ts);
}

#[test]
fn the_event_log_keeps_at_most_max_rows_and_closes_with_a_marker() {
    let mut log = EventLog::default();
    let ev = |t: u64| cc::CcEvent { time: t, kind: "rtprop_update", value: 1.0, value2: 2.0 };
    for i in 0..MAX_CC_EVENTS as u64 {
        log.push(3, "bbr-rtprop", ev(i));
    }
    let full = log.clone().take_closed();
    assert_eq!(full.len(), MAX_CC_EVENTS);
    assert!(!full.kind.contains(&TRUNCATED_KIND));
    for i in 0..25u64 {
        log.push(4, "bbr-expire", ev(5_000_000_000 + i));
    }
    assert_eq!(log.len(), MAX_CC_EVENTS);
    let closed = log.take_closed();
    assert_eq!(closed.len(), MAX_CC_EVENTS + 1);
    let last = closed.len() - 1;
    assert_eq!(
        (closed.time_s[last], closed.flow[last], closed.cc[last], closed.kind[last], closed.value[last]),
        (5.0, 4, "bbr-expire", TRUNCATED_KIND, 25.0)
    );
    assert!(closed.value2[last].is_nan());
    assert!(log.is_empty() && log.dropped == 0);
}
