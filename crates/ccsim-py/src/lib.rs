//! Thin PyO3 bindings: scenario JSON in; summary JSON and time-series columns out. All
//! validation and simulation happen in ccsim-core; ergonomics live in the Python package.

use ccsim_core::metrics::TimeSeries;
use ccsim_core::{cc, Scenario};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

fn parse(scenario_json: &str) -> PyResult<Scenario> {
    Scenario::from_json_str(scenario_json).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Validate a scenario (JSON of the TOML structure); return it normalised, defaults filled in.
#[pyfunction]
fn validate(scenario_json: &str) -> PyResult<String> {
    let sc = parse(scenario_json)?;
    Ok(sc.normalized.to_string())
}

fn columns<'py>(py: Python<'py>, ts: &TimeSeries) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("time_s", PyList::new(py, &ts.time_s)?)?;
    d.set_item("flow", PyList::new(py, &ts.flow)?)?;
    d.set_item("cc", PyList::new(py, &ts.cc)?)?;
    d.set_item("delivery_rate_mbps", PyList::new(py, &ts.delivery_rate_mbps)?)?;
    d.set_item("bytes_acked", PyList::new(py, &ts.bytes_acked)?)?;
    d.set_item("cwnd_pkts", PyList::new(py, &ts.cwnd_pkts)?)?;
    d.set_item("srtt_ms", PyList::new(py, &ts.srtt_ms)?)?;
    d.set_item("rtprop_ms", PyList::new(py, &ts.rtprop_ms)?)?;
    d.set_item("btlbw_mbps", PyList::new(py, &ts.btlbw_mbps)?)?;
    d.set_item("pacing_rate_mbps", PyList::new(py, &ts.pacing_rate_mbps)?)?;
    d.set_item("inflight_pkts", PyList::new(py, &ts.inflight_pkts)?)?;
    d.set_item("queue_pkts", PyList::new(py, &ts.queue_pkts)?)?;
    d.set_item("queue_bytes", PyList::new(py, &ts.queue_bytes)?)?;
    Ok(d)
}

/// Run one simulation. Returns (summary_json, time-series columns). The GIL is released while
/// the simulation runs, so threads can run scenarios in parallel.
#[pyfunction]
#[pyo3(signature = (scenario_json, seed=None))]
fn run<'py>(py: Python<'py>, scenario_json: &str, seed: Option<u64>) -> PyResult<(String, Bound<'py, PyDict>)> {
    let sc = parse(scenario_json)?;
    let out = py.allow_threads(|| ccsim_core::run(&sc, seed));
    let cols = columns(py, &out.timeseries)?;
    Ok((out.summary.to_json(), cols))
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
                    "doc": p.doc,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    serde_json::Value::from(list).to_string()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(algorithms, m)?)?;
    Ok(())
}
