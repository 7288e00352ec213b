//! Thin PyO3 bindings: scenario JSON in; summary JSON and time-series columns out. All
//! validation and simulation happen in ccsim-core; ergonomics live in the Python package.

use ccsim_core::cc;
use ccsim_core::limits::{self, MemoryEstimate};
use ccsim_core::metrics::LinkSeries;
use ccsim_core::output::schema::ColumnData;
use ccsim_core::scenario::MAX_SEED;
use ccsim_core::sim::Sim;
use ccsim_core::scenario::AnyScenario;
use ccsim_emu::{Config as EmuConfig, Emulator};
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyDict, PyList, PyString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

mod pycc;

fn parse(scenario_json: &str) -> PyResult<AnyScenario> {
    AnyScenario::from_json_str(scenario_json).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Turn a Rust panic (a bug) into a Python RuntimeError instead of printing panic text; a
/// Python algorithm's failure (which unwinds the run with `pycc::HookError`) comes back as the
/// AlgorithmError it carries.
fn guarded<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(e) => {
            let e = match e.downcast::<pycc::HookError>() {
                Ok(h) => return Err(h.0),
                Err(e) => e,
            };
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
    use ccsim_core::tcp::{rtt::RtoEstimator, LossDetection, Pacing};
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
        if !sc.workloads.is_empty() {
            return Err(PyValueError::new_err("workloads: emulation runs [[flows]] TCP flows; [[workloads]] can only be simulated"));
        }
        if let Some(f) = sc.flows.iter().find(|f| f.udp.is_some()) {
            return Err(PyValueError::new_err(format!("flows[{}].protocol: emulation runs TCP flows; UDP flows can only be simulated", f.group)));
        }
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
                        "ecn": t.ecn,
                        "tsecr_rtt": t.tsecr_rtt,
                        "rto_estimator": match t.rto_estimator { RtoEstimator::Rfc6298 => "rfc6298", RtoEstimator::Linux => "linux" },
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
                "tick_ns": b.tick,
            },
            "flows": flows,
        })
        .to_string())
    })
}

/// A list of Python strings with one string object per distinct value (a column of a few
/// algorithm names holds pointers to a few strings, not one string object per row).
fn str_list<'py>(py: Python<'py>, values: &[Option<&'static str>]) -> PyResult<Bound<'py, PyList>> {
    let mut seen: Vec<(&'static str, Bound<'py, PyAny>)> = Vec::new();
    let none = py.None().into_bound(py);
    let items = values
        .iter()
        .map(|v| match v {
            None => none.clone(),
            Some(s) => match seen.iter().find(|(k, _)| std::ptr::eq(*k, *s) || *k == *s) {
                Some((_, o)) => o.clone(),
                None => {
                    let o = PyString::new(py, s).into_any();
                    seen.push((s, o.clone()));
                    o
                }
            },
        })
        .collect::<Vec<_>>();
    PyList::new(py, items)
}

fn strs(v: Vec<&'static str>) -> Vec<Option<&'static str>> {
    v.into_iter().map(Some).collect()
}

/// A number that a column holds as 8 native-endian bytes: f64 as it is, integers as i64
/// (the type pandas gives them).
trait Cell: Copy {
    fn bytes(self) -> [u8; 8];
}
impl Cell for f64 {
    fn bytes(self) -> [u8; 8] {
        self.to_ne_bytes()
    }
}
impl Cell for u32 {
    fn bytes(self) -> [u8; 8] {
        (self as i64).to_ne_bytes()
    }
}
impl Cell for u64 {
    fn bytes(self) -> [u8; 8] {
        (self.min(i64::MAX as u64) as i64).to_ne_bytes()
    }
}

/// A numeric column as a bytearray of native float64 or int64 values (numpy.frombuffer reads
/// it without a copy): 8 bytes per row, where a list of Python numbers takes 32 or more and
/// makes every garbage collection walk millions of items.
fn packed<'py, T: Cell>(py: Python<'py>, v: Vec<T>) -> PyResult<Bound<'py, PyAny>> {
    let b = PyByteArray::new_with(py, v.len() * 8, |buf| {
        for (chunk, x) in buf.chunks_exact_mut(8).zip(&v) {
            chunk.copy_from_slice(&x.bytes());
        }
        Ok(())
    })?;
    Ok(b.into_any())
}

/// Set `d[name]` to a converted column, then honour Ctrl-C (a column of millions of rows
/// takes a moment to convert).
fn put<'py>(py: Python<'py>, d: &Bound<'py, PyDict>, name: &str, column: PyResult<Bound<'py, PyAny>>) -> PyResult<()> {
    d.set_item(name, column?)?;
    py.check_signals()
}

/// A column table (the time series, the algorithm events, the link queues), one entry per
/// column in the schema's order (`ccsim_core::output::schema`): numeric columns as bytearrays
/// of float64/int64 (see [`packed`]), string columns as lists of strings (and None), with one
/// Python string per distinct value; `names` are the strings an interned column indexes. Each
/// engine column is freed as soon as it is converted.
fn table_columns<'py>(py: Python<'py>, cols: Vec<(&'static str, ColumnData)>, names: &[String]) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let ids: Vec<Bound<'_, PyAny>> = names.iter().map(|s| PyString::new(py, s).into_any()).collect();
    for (name, data) in cols {
        let column = match data {
            ColumnData::F64(v) => packed(py, v),
            ColumnData::U32(v) => packed(py, v),
            ColumnData::U64(v) => packed(py, v),
            ColumnData::Str(v) => str_list(py, &strs(v)).map(|l| l.into_any()),
            ColumnData::OptStr(v) => str_list(py, &v).map(|l| l.into_any()),
            ColumnData::Interned(v) => PyList::new(py, v.iter().map(|k| ids[k.0 as usize].clone())).map(|l| l.into_any()),
        };
        put(py, &d, name, column)?;
    }
    Ok(d)
}

/// A simulation the binding runs in chunks of events.
trait Chunked: Send {
    /// Run at most `max_events` events; true when the run has reached its end.
    fn step(&mut self, max_events: u64) -> bool;
    fn queue_heap_bytes(&self) -> usize;
    /// Memory held by packet captures (written at the end of the run).
    fn capture_heap_bytes(&self) -> usize {
        0
    }
    /// (simulated time so far, end of the run)
    fn clock(&self) -> (u64, u64);
}

impl Chunked for Sim {
    fn step(&mut self, max_events: u64) -> bool {
        self.run_until_limited(self.end_time(), max_events)
    }
    fn queue_heap_bytes(&self) -> usize {
        Sim::queue_heap_bytes(self)
    }
    fn capture_heap_bytes(&self) -> usize {
        Sim::capture_heap_bytes(self)
    }
    fn clock(&self) -> (u64, u64) {
        (self.now, self.end_time())
    }
}

/// Wall time a chunk aims at: Ctrl-C is honoured between chunks.
const CHUNK: Duration = Duration::from_millis(20);
/// How often the memory of queued packets is checked (it costs O(flows)).
const WATCH_EVERY: Duration = Duration::from_millis(250);

/// The memory budget of one run: the limit in bytes, where it comes from (for messages),
/// and the run's estimate.
struct Budget<'a> {
    limit: u64,
    text: &'a str,
    estimate: MemoryEstimate,
}

/// Run `sim` to its end without the GIL, in chunks of events sized to take about [`CHUNK`] of
/// wall time each (the first is 16384 events; each next one is scaled by how long the last
/// took), so Ctrl-C (KeyboardInterrupt) is honoured within a fraction of a second however
/// costly a simulated second is. Cutting a run into chunks does not change it. With a budget,
/// the buffers of queued packets are watched and the run stopped (ValueError) when they
/// would take more memory than the budget leaves them.
fn in_chunks(py: Python<'_>, sim: &mut impl Chunked, budget: Option<&Budget>) -> PyResult<()> {
    let start_bytes = sim.queue_heap_bytes() as u64;
    let mut max_events: u64 = 1 << 14;
    let mut watched = Instant::now();
    let mut last_grown = 0u64;
    loop {
        let t0 = Instant::now();
        let done = py.allow_threads(|| sim.step(max_events));
        let took = t0.elapsed();
        py.check_signals()?;
        if done {
            return Ok(());
        }
        if let Some(b) = budget {
            // Captures grow by every packet: checked after every chunk (it costs O(captures)).
            let captured = sim.capture_heap_bytes() as u64;
            if captured > 0 {
                let (now, end) = sim.clock();
                limits::check_capture(&b.estimate, b.limit, b.text, last_grown, captured, now, end).map_err(PyValueError::new_err)?;
            }
            if watched.elapsed() >= WATCH_EVERY {
                watched = Instant::now();
                let grown = (sim.queue_heap_bytes() as u64).saturating_sub(start_bytes);
                let (now, end) = sim.clock();
                limits::check_growth(&b.estimate, b.limit, b.text, grown, now, end).map_err(PyValueError::new_err)?;
                last_grown = grown;
            }
        }
        // Scale the next chunk towards CHUNK, by at most 8x either way.
        let scale = CHUNK.as_secs_f64() / took.as_secs_f64().max(1e-6);
        max_events = ((max_events as f64 * scale.clamp(0.125, 8.0)) as u64).clamp(64, 1 << 26);
    }
}

/// Run one simulation. Returns (summary_json, time-series columns, event columns, link-queue
/// columns).
///
/// `timeseries` false records no time series (the columns are empty). With `memory_limit`
/// (bytes), the run is first estimated and refused (ValueError, naming `limit_text` as the
/// limit's origin) if it would need more, and stopped if its queues outgrow the limit. The
/// GIL is released while the simulation runs, in chunks of about 20 ms of wall time; between
/// chunks Ctrl-C is honoured.
#[pyfunction]
/// With `pcap_dir`, the packets offered to the directions `pcap_links` (default: the
/// bottleneck) are written there as pcap files (ccsim_core::output::pcap); the fifth element
/// lists them as (direction, file, packets).
#[pyo3(signature = (scenario_json, seed=None, timeseries=true, memory_limit=None, limit_text="", pcap_dir=None, pcap_links=None, pcap_snaplen=128))]
#[allow(clippy::type_complexity, clippy::too_many_arguments)]
fn run<'py>(
    py: Python<'py>,
    scenario_json: &str,
    seed: Option<u64>,
    timeseries: bool,
    memory_limit: Option<u64>,
    limit_text: &str,
    pcap_dir: Option<String>,
    pcap_links: Option<Vec<String>>,
    pcap_snaplen: u32,
) -> PyResult<(String, Bound<'py, PyDict>, Bound<'py, PyDict>, Bound<'py, PyDict>, Vec<(String, String, usize)>)> {
    guarded(|| {
        let sc = parse(scenario_json)?;
        if let Some(s) = seed {
            if s > MAX_SEED {
                return Err(PyValueError::new_err(format!("seed: {s} is out of range; accepted: an integer in [0, {MAX_SEED}]")));
            }
        }
        let seed = seed.unwrap_or(sc.seed());
        // Refuse what would not fit before allocating anything for the run.
        let mut budget = match memory_limit {
            Some(limit) => Some(Budget {
                limit,
                text: limit_text,
                estimate: limits::check(&sc, timeseries, limit, limit_text).map_err(PyValueError::new_err)?,
            }),
            None => None,
        };
        let rows = limits::estimate(&sc, timeseries).timeseries_rows;
        let t0 = Instant::now();
        let mut pcaps = Vec::new();
        let (summary, ts, ev, mut ls) = match &sc {
            AnyScenario::Dumbbell(sc) => {
                let mut sim = Sim::with_timeseries(sc, seed, timeseries);
                if budget.is_some() {
                    sim.ts.reserve_exact(rows as usize);
                }
                if pcap_dir.is_some() {
                    set_up_capture(&mut sim, pcap_links.clone(), pcap_snaplen, budget.as_mut())?;
                }
                in_chunks(py, &mut sim, budget.as_ref())?;
                sim.finish();
                if let Some(dir) = &pcap_dir {
                    pcaps = write_captures(&mut sim, dir)?;
                }
                let out = sim.into_output(sc, t0.elapsed().as_secs_f64());
                (out.summary.to_json(), out.timeseries, out.events, out.link_series)
            }
            AnyScenario::Wireless(sc) => {
                let mut sim = Sim::line(sc, seed, timeseries);
                if budget.is_some() {
                    sim.ts.reserve_exact(rows as usize);
                }
                if pcap_dir.is_some() {
                    set_up_capture(&mut sim, pcap_links.clone(), pcap_snaplen, budget.as_mut())?;
                }
                in_chunks(py, &mut sim, budget.as_ref())?;
                sim.finish();
                if let Some(dir) = &pcap_dir {
                    pcaps = write_captures(&mut sim, dir)?;
                }
                let (summary, ts, ev) = sim.into_line_output(sc, t0.elapsed().as_secs_f64());
                (summary.to_string(), ts, ev, LinkSeries::default())
            }
        };
        let cols = table_columns(py, ts.into_columns(), &[])?;
        let ev = table_columns(py, ev.into_columns(), &[])?;
        let names = std::mem::take(&mut ls.links);
        let ls = table_columns(py, ls.into_columns(), &names)?;
        Ok((summary, cols, ev, ls, pcaps))
    })
}

/// Capture `links` (default: [`Sim::default_capture_links`]) of `sim`, frames cut to `snaplen`
/// bytes, and with a budget, refuse the run if the captured packets' bound
/// ([`Sim::capture_bound`], known once the routes are) would not fit.
fn set_up_capture(sim: &mut Sim, links: Option<Vec<String>>, snaplen: u32, budget: Option<&mut Budget>) -> PyResult<()> {
    if !(14..=65535).contains(&snaplen) {
        return Err(PyValueError::new_err(format!("pcap_snaplen: {snaplen} is out of range; accepted: an integer in [14, 65535]")));
    }
    let links = links.unwrap_or_else(|| sim.default_capture_links());
    sim.capture(&links, snaplen).map_err(PyValueError::new_err)?;
    if let Some(b) = budget {
        b.estimate = limits::check_capture_estimate(b.estimate, sim.capture_bound(), b.limit, b.text).map_err(PyValueError::new_err)?;
    }
    Ok(())
}

/// Write `sim`'s captures into `dir` (after the run): (id, file, packets) each.
fn write_captures(sim: &mut Sim, dir: &str) -> PyResult<Vec<(String, String, usize)>> {
    let Some(caps) = sim.captures.as_mut() else { return Ok(Vec::new()) };
    let files = caps.write_dir(std::path::Path::new(dir)).map_err(|e| PyValueError::new_err(format!("pcap: cannot write the captures into {dir:?}: {e}")))?;
    Ok(files.into_iter().enumerate().map(|(c, f)| (caps.caps[c].id.clone(), f.to_string_lossy().into_owned(), caps.len(c))).collect())
}

/// The memory a run of the scenario needs (see ccsim_core::limits), as JSON: the total and
/// each part in bytes and counts.
/// With `pcap`, it includes the records of a capture of `pcap_links` (default: as `run`'s).
#[pyfunction]
#[pyo3(signature = (scenario_json, timeseries=true, pcap=false, pcap_links=None))]
fn estimate_memory(scenario_json: &str, timeseries: bool, pcap: bool, pcap_links: Option<Vec<String>>) -> PyResult<String> {
    guarded(|| {
        let sc = parse(scenario_json)?;
        let mut e = limits::estimate(&sc, timeseries);
        if pcap {
            let mut sim = match &sc {
                AnyScenario::Dumbbell(s) => Sim::with_timeseries(s, s.seed, false),
                AnyScenario::Wireless(s) => Sim::line(s, s.seed, false),
            };
            set_up_capture(&mut sim, pcap_links, 128, None)?;
            e = e.with_capture(sim.capture_bound());
        }
        Ok(e.to_json().to_string())
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

/// The output schema (every record and column table: names, types, units, meaning), as JSON;
/// see `ccsim_core::output::schema::to_json`.
#[pyfunction]
fn schema() -> String {
    ccsim_core::output::schema::to_json().to_string()
}

/// A parameter table as JSON (algorithms' and queue disciplines' alike).
fn params_json(params: &[cc::ParamSpec]) -> Vec<serde_json::Value> {
    params
        .iter()
        .map(|p| {
            serde_json::json!({
                "name": p.name,
                "default": if p.boolean { serde_json::Value::from(p.default != 0.0) } else { serde_json::Value::from(p.default) },
                "unit": p.unit,
                "range": p.range_text(),
                "min": p.min,
                "max": p.max,
                "doc": p.doc,
            })
        })
        .collect()
}

/// Every algorithm with its parameters, as JSON: the built-ins, then those registered from
/// Python (`"registered": true`).
#[pyfunction]
fn algorithms() -> String {
    let list: Vec<serde_json::Value> = cc::ALGORITHMS
        .iter()
        .map(|a| (a, false))
        .chain(cc::external::infos().into_iter().map(|a| (a, true)))
        .map(|(a, registered)| {
            serde_json::json!({"name": a.name, "summary": a.summary, "source": a.source, "params": params_json(a.params), "registered": registered})
        })
        .collect();
    serde_json::Value::from(list).to_string()
}

/// Every queue discipline with its parameters and whether it can mark ECN, as JSON.
#[pyfunction]
fn qdiscs() -> String {
    let list: Vec<serde_json::Value> = ccsim_core::net::qdisc::QDISCS
        .iter()
        .map(|q| serde_json::json!({"name": q.name, "summary": q.summary, "source": q.source, "can_mark": q.can_mark, "params": params_json(q.params)}))
        .collect();
    serde_json::Value::from(list).to_string()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // Panics are reported as RuntimeError by `guarded`; do not also print Rust panic text.
    std::panic::set_hook(Box::new(|_| {}));
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("MODEL_VERSION", ccsim_core::MODEL_VERSION)?;
    m.add("BUILD_PGO", env!("CCSIM_BUILD_PGO") == "1")?;
    m.add("BUILD_PGO_STALE", env!("CCSIM_BUILD_PGO_STALE") == "1")?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(estimate_memory, m)?)?;
    m.add_function(wrap_pyfunction!(algorithms, m)?)?;
    m.add_function(wrap_pyfunction!(qdiscs, m)?)?;
    m.add_function(wrap_pyfunction!(schema, m)?)?;
    m.add_function(wrap_pyfunction!(resolve, m)?)?;
    m.add_function(wrap_pyfunction!(emulate_link, m)?)?;
    m.add_function(wrap_pyfunction!(pycc::register_cc, m)?)?;
    m.add_function(wrap_pyfunction!(pycc::unregister_cc, m)?)?;
    m.add_function(wrap_pyfunction!(pycc::registered_ccs, m)?)?;
    m.add_function(wrap_pyfunction!(pycc::trace_builtin, m)?)?;
    m.add_function(wrap_pyfunction!(pycc::take_trace, m)?)?;
    m.add("AlgorithmError", m.py().get_type::<pycc::AlgorithmError>())?;
    m.add_class::<pycc::PySock>()?;
    m.add_class::<pycc::PyAckSample>()?;
    m.add_class::<pycc::PyRateSample>()?;
    m.add_class::<pycc::PySkbTx>()?;
    Ok(())
}
