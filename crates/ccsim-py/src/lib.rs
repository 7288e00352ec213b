//! Thin PyO3 bindings: scenario JSON in; summary JSON and time-series columns out. All
//! validation and simulation happen in ccsim-core; ergonomics live in the Python package.

use ccsim_core::metrics::{EventLog, LinkSeries, TimeSeries};
use ccsim_core::scenario::MAX_SEED;
use ccsim_core::sim::Sim;
use ccsim_core::time::SEC;
use ccsim_core::cc;
use ccsim_core::scenario::AnyScenario;
use ccsim_core::wireless::dcf::WirelessSim;
use ccsim_emu::{Config as EmuConfig, Emulator};
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::panic::{catch_unwind, AssertUnwindSafe};

fn parse(scenario_json: &str) -> PyResult<AnyScenario> {
    AnyScenario::from_json_str(scenario_json).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Turn a Rust panic (a bug) into a Python RuntimeError instead of printing panic text.
fn guarded<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(e) => {
            let msg = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown".into());
            Err(PyRuntimeError::new_err(format!("internal error in the ccsim engine (please report it): {msg}")))
        }
    }
}

/// Validate a scenario (JSON of the TOML structure); return it normalised, defaults filled in.
#[pyfunction]
fn validate(scenario_json: &str) -> PyResult<String> {
    guarded(|| Ok(parse(scenario_json)?.normalized().to_string()))
}

/// The scenario with every value resolved to plain numbers (ns, bps, bytes, packets): what the
/// emulation needs to set up the same experiment with real TCP. `count` is expanded, as in a run.
#[pyfunction]
fn resolve(scenario_json: &str) -> PyResult<String> {
    use ccsim_core::tcp::{LossDetection, Pacing};
    use serde_json::{json, Value};
    guarded(|| {
        let sc = match parse(scenario_json)? {
            AnyScenario::Dumbbell(sc) => sc,
            AnyScenario::Wireless(_) => {
                return Err(PyValueError::new_err(
                    "wireless: a [wireless] line can only be simulated; emulation runs dumbbell scenarios ([bottleneck])",
                ))
            }
        };
        let Some(b) = sc.bottleneck() else {
            return Err(PyValueError::new_err(
                "links: emulation runs dumbbell scenarios ([bottleneck]); a [[links]] network can only be simulated",
            ));
        };
        let flows: Vec<Value> = sc
            .flows
            .iter()
            .map(|f| {
                let t = &f.tcp;
                json!({
                    "group": f.group,
                    "cc": f.cc,
                    "params": f.params.0,
                    "access_rate_bps": f.access_rate_bps,
                    "access_delay_ns": f.access_delay,
                    "start_ns": f.start,
                    "stop_ns": f.stop,
                    "size_bytes": f.size,
                    "tcp": {
                        "mss": t.mss,
                        "delayed_ack": t.delayed_ack,
                        "delack_timeout_ns": t.delack_timeout,
                        "min_rto_ns": t.min_rto,
                        "max_rto_ns": t.max_rto,
                        "initial_rto_ns": t.initial_rto,
                        "initial_cwnd": t.initial_cwnd,
                        "rwnd_bytes": if t.rwnd == u64::MAX { None } else { Some(t.rwnd) },
                        "timestamp_tick_ns": t.ts_tick,
                        "pacing": match t.pacing { Pacing::Auto => json!("auto"), Pacing::On => json!(true), Pacing::Off => json!(false) },
                        "dupthresh": t.dupthresh,
                        "recovery": match t.recovery { LossDetection::Rfc6675 => "rfc6675", LossDetection::Rack => "rack" },
                    },
                })
            })
            .collect();
        Ok(json!({
            "name": sc.name,
            "duration_ns": sc.duration,
            "seed": sc.seed,
            "sample_interval_ns": sc.sample_interval,
            "bottleneck": {
                "rate_bps": b.rate_bps,
                "delay_ns": b.delay,
                "buffer_pkts": b.buffer_pkts,
                "buffer_bytes": b.buffer_bytes,
                "loss": b.loss,
                "ack_loss": b.ack_loss,
            },
            "flows": flows,
        })
        .to_string())
    })
}

fn columns<'py>(py: Python<'py>, ts: &TimeSeries) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("time_s", PyList::new(py, &ts.time_s)?)?;
    d.set_item("flow", PyList::new(py, &ts.flow)?)?;
    d.set_item("cc", PyList::new(py, &ts.cc)?)?;
    d.set_item("delivery_rate_mbps", PyList::new(py, &ts.delivery_rate_mbps)?)?;
    d.set_item("goodput_mbps", PyList::new(py, &ts.goodput_mbps)?)?;
    d.set_item("bytes_acked", PyList::new(py, &ts.bytes_acked)?)?;
    d.set_item("cwnd_pkts", PyList::new(py, &ts.cwnd_pkts)?)?;
    d.set_item("srtt_ms", PyList::new(py, &ts.srtt_ms)?)?;
    d.set_item("rtprop_ms", PyList::new(py, &ts.rtprop_ms)?)?;
    d.set_item("btlbw_mbps", PyList::new(py, &ts.btlbw_mbps)?)?;
    d.set_item("pacing_rate_mbps", PyList::new(py, &ts.pacing_rate_mbps)?)?;
    d.set_item("inflight_pkts", PyList::new(py, &ts.inflight_pkts)?)?;
    d.set_item("rho", PyList::new(py, &ts.rho)?)?;
    d.set_item("queue_state", PyList::new(py, &ts.queue_state)?)?;
    d.set_item("shadow_wnd_pkts", PyList::new(py, &ts.shadow_wnd_pkts)?)?;
    d.set_item("queue_pkts", PyList::new(py, &ts.queue_pkts)?)?;
    d.set_item("queue_bytes", PyList::new(py, &ts.queue_bytes)?)?;
    Ok(d)
}

fn link_columns<'py>(py: Python<'py>, ls: &LinkSeries) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let names: Vec<&str> = ls.link.iter().map(|&k| ls.links[k as usize].as_str()).collect();
    d.set_item("time_s", PyList::new(py, &ls.time_s)?)?;
    d.set_item("link", PyList::new(py, names)?)?;
    d.set_item("queue_pkts", PyList::new(py, &ls.queue_pkts)?)?;
    d.set_item("queue_bytes", PyList::new(py, &ls.queue_bytes)?)?;
    Ok(d)
}

fn event_columns<'py>(py: Python<'py>, ev: &EventLog) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("time_s", PyList::new(py, &ev.time_s)?)?;
    d.set_item("flow", PyList::new(py, &ev.flow)?)?;
    d.set_item("cc", PyList::new(py, &ev.cc)?)?;
    d.set_item("kind", PyList::new(py, &ev.kind)?)?;
    d.set_item("value", PyList::new(py, &ev.value)?)?;
    d.set_item("value2", PyList::new(py, &ev.value2)?)?;
    Ok(d)
}

/// Advance a simulation to `end` in chunks of 1 s of simulated time, without the GIL,
/// honouring Ctrl-C between chunks.
fn in_chunks(py: Python<'_>, end: u64, mut run_until: impl FnMut(u64) + Send) -> PyResult<()> {
    let mut t = 0;
    while t < end {
        t = (t + SEC).min(end);
        py.allow_threads(|| run_until(t));
        py.check_signals()?;
    }
    Ok(())
}

/// Run one simulation. Returns (summary_json, time-series columns, event columns, link-queue columns). The GIL is released while
/// the simulation runs, in chunks of 1 s of simulated time; between chunks Ctrl-C is honoured.
#[pyfunction]
#[pyo3(signature = (scenario_json, seed=None))]
#[allow(clippy::type_complexity)]
fn run<'py>(py: Python<'py>, scenario_json: &str, seed: Option<u64>) -> PyResult<(String, Bound<'py, PyDict>, Bound<'py, PyDict>, Bound<'py, PyDict>)> {
    guarded(|| {
        let sc = parse(scenario_json)?;
        if let Some(s) = seed {
            if s > MAX_SEED {
                return Err(PyValueError::new_err(format!("seed: {s} is out of range; accepted: an integer in [0, {MAX_SEED}]")));
            }
        }
        let seed = seed.unwrap_or(sc.seed());
        let t0 = std::time::Instant::now();
        // Run in chunks of 1 s of simulated time, honouring Ctrl-C between chunks.
        let (summary, ts, ev, ls) = match &sc {
            AnyScenario::Dumbbell(sc) => {
                let mut sim = Sim::new(sc, seed);
                let end = sim.end_time();
                in_chunks(py, end, |t| sim.run_until(t))?;
                sim.finish();
                let out = sim.into_output(sc, t0.elapsed().as_secs_f64());
                (out.summary.to_json(), out.timeseries, out.events, out.link_series)
            }
            AnyScenario::Wireless(sc) => {
                let mut sim = WirelessSim::new(sc.config.clone(), &sc.flows, sc.duration, seed);
                sim.sample_every(sc.sample_interval);
                let end = sim.end_time();
                in_chunks(py, end, |t| sim.run_until(t))?;
                sim.finish();
                let out = sim.output(t0.elapsed().as_secs_f64());
                let summary = out.summary_json(sc.name.as_deref(), &sc.normalized["wireless"]).to_string();
                (summary, std::mem::take(&mut sim.ts), std::mem::take(&mut sim.cc_events), LinkSeries::default())
            }
        };
        let cols = columns(py, &ts)?;
        let ev = event_columns(py, &ev)?;
        let ls = link_columns(py, &ls)?;
        Ok((summary, cols, ev, ls))
    })
}

/// Run the link emulator (Linux) between the two TUN devices the configuration names, until its
/// `end_ns`; return the statistics as JSON. The GIL is released while packets are forwarded; the
/// call comes back to Python about every 100 ms to honour signals (Ctrl-C raises
/// KeyboardInterrupt, and the devices are released) and to call `on_tick()`, whose true result
/// stops the run early.
#[pyfunction]
#[pyo3(signature = (config_json, on_tick=None))]
fn emulate_link(py: Python<'_>, config_json: &str, on_tick: Option<Bound<'_, PyAny>>) -> PyResult<String> {
    guarded(|| {
        let cfg = EmuConfig::from_json(config_json).map_err(|e| PyValueError::new_err(e.to_string()))?;
        let mut emu = py.allow_threads(|| Emulator::open(cfg)).map_err(|e| PyOSError::new_err(e.to_string()))?;
        loop {
            let done = py.allow_threads(|| emu.run_for(100 * ccsim_core::time::MS)).map_err(|e| PyOSError::new_err(e.to_string()))?;
            py.check_signals()?;
            if done {
                break;
            }
            if let Some(cb) = &on_tick {
                if cb.call0()?.is_truthy()? {
                    emu.stop();
                    break;
                }
            }
        }
        Ok(emu.finish().to_json())
    })
}

/// Every algorithm with its parameters, as JSON.
#[pyfunction]
fn algorithms() -> String {
    let list: Vec<serde_json::Value> = cc::ALGORITHMS
        .iter()
        .map(|a| {
            serde_json::json!({
                "name": a.name,
                "summary": a.summary,
                "source": a.source,
                "params": a.params.iter().map(|p| serde_json::json!({
                    "name": p.name,
                    "default": if p.boolean { serde_json::Value::from(p.default != 0.0) } else { serde_json::Value::from(p.default) },
                    "unit": p.unit,
                    "range": p.range_text(),
                    "min": p.min,
                    "max": p.max,
                    "doc": p.doc,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    serde_json::Value::from(list).to_string()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // Panics are reported as RuntimeError by `guarded`; do not also print Rust panic text.
    std::panic::set_hook(Box::new(|_| {}));
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("MODEL_VERSION", ccsim_core::MODEL_VERSION)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(algorithms, m)?)?;
    m.add_function(wrap_pyfunction!(resolve, m)?)?;
    m.add_function(wrap_pyfunction!(emulate_link, m)?)?;
    Ok(())
}
