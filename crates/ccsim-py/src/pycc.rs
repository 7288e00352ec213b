//! Congestion controllers written in Python (`ccsim.CongestionControl` subclasses registered
//! with `ccsim.register`): a [`PyCc`] implements the engine's `CongestionControl` trait by
//! calling the class's methods, hook for hook, with the arguments the Rust trait gets.
//!
//! - `sock` is one [`PySock`] per flow: before each hook it receives a copy of the flow's
//!   `SockState`; after it, the fields an algorithm may write (cwnd, ssthresh, cwnd_cnt,
//!   cwnd_clamp, pacing_rate, cwr_request) and the events it recorded go back. Writes are
//!   checked at the assignment (an integer in range), so a bad value is an error at the user's
//!   line.
//! - Only the hooks the class overrides are called; the others run the trait's defaults in
//!   Rust (`ssthresh` then is Reno's halving, `undo_cwnd` max(cwnd, prior_cwnd)).
//! - An exception in a hook (or a bad return value) stops the run: the hook unwinds the
//!   simulation with [`HookError`] (`resume_unwind`, which prints nothing), and the binding's
//!   `guarded` turns it into `_core.AlgorithmError`, whose cause is the user's exception with
//!   its traceback. No Rust panic is involved, and Rust algorithms pay nothing for this.

use ccsim_core::cc::external::{self, ParamDecl};
use ccsim_core::cc::{AckSample, CaEvent, CaState, CcTelemetry, CongestionControl, Params, RateSample, SkbTx, SockState};
use ccsim_core::rng::Rng;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList};
use pyo3::{create_exception, intern};
use std::collections::HashSet;
use std::sync::{Arc, Mutex};

create_exception!(_core, AlgorithmError, PyValueError, "A congestion controller written in Python failed: the cause is the user's exception.");

/// The payload a failing hook unwinds the simulation with.
pub struct HookError(pub PyErr);

/// Strings that must live as long as the program (event kinds, queue states), each leaked once.
fn intern_static(s: &str) -> &'static str {
    static SEEN: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);
    let mut g = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    let set = g.get_or_insert_with(HashSet::new);
    if let Some(k) = set.get(s) {
        return k;
    }
    let k: &'static str = Box::leak(s.to_owned().into_boxed_str());
    set.insert(k);
    k
}

fn ca_state_int(s: CaState) -> u8 {
    match s {
        CaState::Open => 0,
        CaState::Disorder => 1,
        CaState::Cwr => 2,
        CaState::Recovery => 3,
        CaState::Loss => 4,
    }
}

/// Linux's `enum tcp_ca_event` values (`ccsim.CaEvent`).
fn ca_event_int(e: CaEvent) -> u8 {
    match e {
        CaEvent::TxStart => 0,
        CaEvent::CompleteCwr => 2,
        CaEvent::Loss => 3,
    }
}

/// An integer in [lo, hi] from a Python value (not a bool, not a float): `what` names it.
fn int_in(v: &Bound<'_, PyAny>, what: &str, lo: i128, hi: i128) -> PyResult<i128> {
    let accepted = format!("accepted: an integer in [{lo}, {hi}]");
    if v.is_instance_of::<PyBool>() || !v.is_instance_of::<PyInt>() {
        let r = v.repr().map(|r| r.to_string()).unwrap_or_else(|_| "?".into());
        return Err(PyTypeError::new_err(format!("{what}: {r} ({}) is not an integer; {accepted}", v.get_type().name()?)));
    }
    let x: i128 = v.extract().map_err(|_| PyValueError::new_err(format!("{what}: {v} is out of range; {accepted}")))?;
    if x < lo || x > hi {
        return Err(PyValueError::new_err(format!("{what}: {x} is out of range; {accepted}")));
    }
    Ok(x)
}

const U32_MAX: i128 = u32::MAX as i128;
const CWND_MAX: i128 = i32::MAX as i128;

/// The socket state a Python hook sees (`sock`): Rust's `SockState`, fields of the same names
/// and units (windows in packets, times in ns, rates in bytes per second). `ca_state` is an
/// int (`ccsim.CaState`).
#[pyclass(name = "Sock", module = "ccsim._core")]
pub struct PySock {
    s: SockState,
}

#[pymethods]
impl PySock {
    #[getter]
    fn now(&self) -> u64 {
        self.s.now
    }
    #[getter]
    fn mss(&self) -> u32 {
        self.s.mss
    }
    #[getter]
    fn cwnd(&self) -> u32 {
        self.s.cwnd
    }
    #[setter]
    fn set_cwnd(&mut self, v: &Bound<'_, PyAny>) -> PyResult<()> {
        self.s.cwnd = int_in(v, "sock.cwnd", 1, CWND_MAX)? as u32;
        Ok(())
    }
    #[getter]
    fn ssthresh(&self) -> u32 {
        self.s.ssthresh
    }
    #[setter]
    fn set_ssthresh(&mut self, v: &Bound<'_, PyAny>) -> PyResult<()> {
        self.s.ssthresh = int_in(v, "sock.ssthresh", 1, CWND_MAX)? as u32;
        Ok(())
    }
    #[getter]
    fn cwnd_cnt(&self) -> u32 {
        self.s.cwnd_cnt
    }
    #[setter]
    fn set_cwnd_cnt(&mut self, v: &Bound<'_, PyAny>) -> PyResult<()> {
        self.s.cwnd_cnt = int_in(v, "sock.cwnd_cnt", 0, U32_MAX)? as u32;
        Ok(())
    }
    #[getter]
    fn cwnd_clamp(&self) -> u32 {
        self.s.cwnd_clamp
    }
    #[setter]
    fn set_cwnd_clamp(&mut self, v: &Bound<'_, PyAny>) -> PyResult<()> {
        self.s.cwnd_clamp = int_in(v, "sock.cwnd_clamp", 1, U32_MAX)? as u32;
        Ok(())
    }
    #[getter]
    fn pacing_rate(&self) -> u64 {
        self.s.pacing_rate
    }
    #[setter]
    fn set_pacing_rate(&mut self, v: &Bound<'_, PyAny>) -> PyResult<()> {
        self.s.pacing_rate = int_in(v, "sock.pacing_rate", 0, u64::MAX as i128)? as u64;
        Ok(())
    }
    #[getter]
    fn cwr_request(&self) -> bool {
        self.s.cwr_request
    }
    #[setter]
    fn set_cwr_request(&mut self, v: &Bound<'_, PyAny>) -> PyResult<()> {
        if !v.is_instance_of::<PyBool>() {
            return Err(PyTypeError::new_err(format!("sock.cwr_request: {} is not a bool; accepted: True or False", v.repr()?)));
        }
        self.s.cwr_request = v.extract()?;
        Ok(())
    }
    #[getter]
    fn ca_state(&self) -> u8 {
        ca_state_int(self.s.ca_state)
    }
    #[getter]
    fn packets_out(&self) -> u32 {
        self.s.packets_out
    }
    #[getter]
    fn sacked_out(&self) -> u32 {
        self.s.sacked_out
    }
    #[getter]
    fn lost_out(&self) -> u32 {
        self.s.lost_out
    }
    #[getter]
    fn retrans_out(&self) -> u32 {
        self.s.retrans_out
    }
    #[getter]
    fn delivered(&self) -> u64 {
        self.s.delivered
    }
    #[getter]
    fn delivered_mstamp(&self) -> u64 {
        self.s.delivered_mstamp
    }
    #[getter]
    fn delivered_ce(&self) -> u64 {
        self.s.delivered_ce
    }
    #[getter]
    fn lost(&self) -> u64 {
        self.s.lost
    }
    #[getter]
    fn srtt(&self) -> u64 {
        self.s.srtt
    }
    #[getter]
    fn min_rtt(&self) -> u64 {
        self.s.min_rtt
    }
    #[getter]
    fn snd_una(&self) -> u32 {
        self.s.snd_una
    }
    #[getter]
    fn snd_nxt(&self) -> u32 {
        self.s.snd_nxt
    }
    #[getter]
    fn is_cwnd_limited(&self) -> bool {
        self.s.is_cwnd_limited
    }
    #[getter]
    fn max_packets_out(&self) -> u32 {
        self.s.max_packets_out
    }
    #[getter]
    fn app_limited(&self) -> u64 {
        self.s.app_limited
    }
    #[getter]
    fn next_tx_time(&self) -> u64 {
        self.s.next_tx_time
    }
    #[getter]
    fn prior_cwnd(&self) -> u32 {
        self.s.prior_cwnd
    }
    #[getter]
    fn initial_cwnd(&self) -> u32 {
        self.s.initial_cwnd
    }
    #[getter]
    fn paced(&self) -> bool {
        self.s.paced
    }
    #[getter]
    fn lsndtime(&self) -> u64 {
        self.s.lsndtime
    }
    #[getter]
    fn cwnd_usage_seq(&self) -> u32 {
        self.s.cwnd_usage_seq
    }
    #[getter]
    fn ts_tick(&self) -> u64 {
        self.s.ts_tick
    }
    #[getter]
    fn ecn(&self) -> bool {
        self.s.ecn
    }
    #[getter]
    fn loss_is_timeout(&self) -> bool {
        self.s.loss_is_timeout
    }

    /// Linux `tcp_packets_in_flight`.
    fn packets_in_flight(&self) -> u32 {
        self.s.packets_in_flight()
    }
    /// cwnd < ssthresh.
    fn in_slow_start(&self) -> bool {
        self.s.in_slow_start()
    }
    /// Linux `tcp_is_cwnd_limited`.
    fn cwnd_limited(&self) -> bool {
        self.s.cwnd_limited()
    }
    /// Linux `tcp_slow_start`: grow by `acked` up to ssthresh; returns the leftover.
    fn slow_start(&mut self, acked: &Bound<'_, PyAny>) -> PyResult<u32> {
        let a = int_in(acked, "slow_start(acked)", 0, U32_MAX)? as u32;
        Ok(self.s.slow_start(a))
    }
    /// Linux `tcp_cong_avoid_ai`: cwnd += 1 per `w` ACKed packets.
    fn cong_avoid_ai(&mut self, w: &Bound<'_, PyAny>, acked: &Bound<'_, PyAny>) -> PyResult<()> {
        let w = int_in(w, "cong_avoid_ai(w)", 0, U32_MAX)? as u32;
        let a = int_in(acked, "cong_avoid_ai(acked)", 0, U32_MAX)? as u32;
        self.s.cong_avoid_ai(w, a);
        Ok(())
    }
    /// Record an algorithm event (the run's `cc_events` table) at the current time.
    #[pyo3(signature = (kind, value=f64::NAN, value2=f64::NAN))]
    fn record(&mut self, kind: &str, value: f64, value2: f64) {
        self.s.record(intern_static(kind), value, value2);
    }
    fn __repr__(&self) -> String {
        format!("Sock(now={}, cwnd={}, ssthresh={}, ca_state={}, packets_out={})", self.s.now, self.s.cwnd, self.s.ssthresh, ca_state_int(self.s.ca_state), self.s.packets_out)
    }
}

/// `pkts_acked`'s sample (Rust `AckSample`, Linux `struct ack_sample`).
#[pyclass(name = "AckSample", module = "ccsim._core", get_all, frozen)]
pub struct PyAckSample {
    pkts_acked: u32,
    /// ns; -1 if none
    rtt: i64,
    in_flight: u32,
    ts_val: u32,
    ts_ecr: u32,
}

#[pymethods]
impl PyAckSample {
    /// One-way delay in timestamp ticks, up to a constant offset.
    fn owd_ticks(&self) -> u32 {
        self.ts_val.wrapping_sub(self.ts_ecr)
    }
}

/// `cong_control`'s rate sample (Rust `RateSample`, Linux `struct rate_sample`).
#[pyclass(name = "RateSample", module = "ccsim._core", get_all, frozen)]
pub struct PyRateSample {
    prior_delivered: u64,
    prior_mstamp: Option<u64>,
    delivered: i64,
    prior_delivered_ce: u32,
    delivered_ce: u32,
    interval: i64,
    rtt: i64,
    losses: u32,
    acked_sacked: u32,
    prior_in_flight: u32,
    is_app_limited: bool,
    is_retrans: bool,
    is_ack_delayed: bool,
    tx_in_flight: u32,
    prior_lost: u64,
    lost: u32,
    is_ece: bool,
}

/// `skb_marked_lost`'s segment (Rust `SkbTx`, Linux `tcp_skb_cb`'s `tx` fields).
#[pyclass(name = "SkbTx", module = "ccsim._core", get_all, frozen)]
pub struct PySkbTx {
    in_flight: u32,
    lost: u64,
    is_app_limited: bool,
    has_delivered_mstamp: bool,
}

/// Which hooks the class overrides.
#[derive(Clone, Copy, Default)]
struct Hooks {
    init: bool,
    ssthresh: bool,
    cong_avoid: bool,
    set_state: bool,
    cwnd_event: bool,
    pkts_acked: bool,
    in_ack_event: bool,
    cong_control: bool,
    skb_marked_lost: bool,
    undo_cwnd: bool,
    telemetry: bool,
}

impl Hooks {
    fn from_names(names: &[String]) -> PyResult<Hooks> {
        let mut h = Hooks::default();
        for n in names {
            match n.as_str() {
                "init" => h.init = true,
                "ssthresh" => h.ssthresh = true,
                "cong_avoid" => h.cong_avoid = true,
                "set_state" => h.set_state = true,
                "cwnd_event" => h.cwnd_event = true,
                "pkts_acked" => h.pkts_acked = true,
                "in_ack_event" => h.in_ack_event = true,
                "cong_control" => h.cong_control = true,
                "skb_marked_lost" => h.skb_marked_lost = true,
                "undo_cwnd" => h.undo_cwnd = true,
                "telemetry" => h.telemetry = true,
                other => return Err(PyValueError::new_err(format!("unknown hook {other:?}"))),
            }
        }
        Ok(h)
    }
}

/// What every flow of one registered class shares.
struct ClassInfo {
    name: &'static str,
    cls: Py<PyAny>,
    hooks: Hooks,
    pacing: bool,
    needs_ecn: bool,
    ect1: bool,
    decls: Vec<ParamDecl>,
}

/// One flow's controller: an instance of the user's class.
pub struct PyCc {
    class: Arc<ClassInfo>,
    obj: Py<PyAny>,
    sock: Py<PySock>,
    flow: usize,
}

/// Stop the run: the user's exception becomes the cause of an AlgorithmError naming the
/// algorithm, the hook, the simulated time and the flow.
fn fail(py: Python<'_>, name: &str, hook: &str, now: u64, flow: usize, err: PyErr) -> ! {
    let msg = format!("algorithm {name:?}, flow {flow}, hook {hook}() at t = {:.6} s: {}", now as f64 / 1e9, err.value(py));
    let e = AlgorithmError::new_err(msg);
    e.set_cause(py, Some(err));
    std::panic::resume_unwind(Box::new(HookError(e)))
}

impl PyCc {
    /// Run one hook: copy the state in, call, copy the writable fields and the events back.
    fn call<R>(&mut self, s: &mut SockState, hook: &'static str, f: impl FnOnce(Python<'_>, &Bound<'_, PyAny>, &Py<PySock>) -> PyResult<R>) -> R {
        Python::with_gil(|py| {
            {
                let mut b = self.sock.borrow_mut(py);
                b.s.clone_from(s);
            }
            let r = f(py, self.obj.bind(py), &self.sock);
            let mut b = self.sock.borrow_mut(py);
            match r {
                Ok(v) => {
                    s.cwnd = b.s.cwnd;
                    s.ssthresh = b.s.ssthresh;
                    s.cwnd_cnt = b.s.cwnd_cnt;
                    s.cwnd_clamp = b.s.cwnd_clamp;
                    s.pacing_rate = b.s.pacing_rate;
                    s.cwr_request = b.s.cwr_request;
                    s.events.extend(b.s.events.drain(..).skip(s.events.len()));
                    v
                }
                Err(e) => {
                    drop(b);
                    fail(py, self.class.name, hook, s.now, self.flow, e)
                }
            }
        })
    }

    /// A hook returning a window: an integer in [1, 2^31 - 1].
    fn window(&mut self, s: &mut SockState, hook: &'static str) -> u32 {
        self.call(s, hook, |py, o, sock| {
            let v = o.call_method1(pyo3::types::PyString::intern(py, hook), (sock,))?;
            Ok(int_in(&v, &format!("{hook}() returned"), 1, CWND_MAX)? as u32)
        })
    }
}

impl CongestionControl for PyCc {
    fn name(&self) -> &'static str {
        self.class.name
    }
    fn init(&mut self, s: &mut SockState) {
        if self.class.hooks.init {
            self.call(s, "init", |py, o, sock| o.call_method1(intern!(py, "init"), (sock,)).map(drop));
        }
    }
    fn ssthresh(&mut self, s: &mut SockState) -> u32 {
        if self.class.hooks.ssthresh {
            self.window(s, "ssthresh")
        } else {
            (s.cwnd >> 1).max(2)
        }
    }
    fn cong_avoid(&mut self, s: &mut SockState, acked: u32) {
        if self.class.hooks.cong_avoid {
            self.call(s, "cong_avoid", |py, o, sock| o.call_method1(intern!(py, "cong_avoid"), (sock, acked)).map(drop));
        }
    }
    fn set_state(&mut self, s: &mut SockState, new: CaState) {
        if self.class.hooks.set_state {
            let st = ca_state_int(new);
            self.call(s, "set_state", |py, o, sock| o.call_method1(intern!(py, "set_state"), (sock, st)).map(drop));
        }
    }
    fn cwnd_event(&mut self, s: &mut SockState, ev: CaEvent) {
        if self.class.hooks.cwnd_event {
            let e = ca_event_int(ev);
            self.call(s, "cwnd_event", |py, o, sock| o.call_method1(intern!(py, "cwnd_event"), (sock, e)).map(drop));
        }
    }
    fn pkts_acked(&mut self, s: &mut SockState, a: &AckSample) {
        if self.class.hooks.pkts_acked {
            let sample = PyAckSample { pkts_acked: a.pkts_acked, rtt: a.rtt, in_flight: a.in_flight, ts_val: a.ts_val, ts_ecr: a.ts_ecr };
            self.call(s, "pkts_acked", |py, o, sock| {
                let sample = Py::new(py, sample)?;
                o.call_method1(intern!(py, "pkts_acked"), (sock, sample)).map(drop)
            });
        }
    }
    fn in_ack_event(&mut self, s: &mut SockState, flags: u32) {
        if self.class.hooks.in_ack_event {
            self.call(s, "in_ack_event", |py, o, sock| o.call_method1(intern!(py, "in_ack_event"), (sock, flags)).map(drop));
        }
    }
    fn has_cong_control(&self) -> bool {
        self.class.hooks.cong_control
    }
    fn cong_control(&mut self, s: &mut SockState, rs: &RateSample) {
        if self.class.hooks.cong_control {
            let r = PyRateSample {
                prior_delivered: rs.prior_delivered,
                prior_mstamp: rs.prior_mstamp,
                delivered: rs.delivered,
                prior_delivered_ce: rs.prior_delivered_ce,
                delivered_ce: rs.delivered_ce,
                interval: rs.interval,
                rtt: rs.rtt,
                losses: rs.losses,
                acked_sacked: rs.acked_sacked,
                prior_in_flight: rs.prior_in_flight,
                is_app_limited: rs.is_app_limited,
                is_retrans: rs.is_retrans,
                is_ack_delayed: rs.is_ack_delayed,
                tx_in_flight: rs.tx_in_flight,
                prior_lost: rs.prior_lost,
                lost: rs.lost,
                is_ece: rs.is_ece,
            };
            self.call(s, "cong_control", |py, o, sock| {
                let r = Py::new(py, r)?;
                o.call_method1(intern!(py, "cong_control"), (sock, r)).map(drop)
            });
        }
    }
    fn skb_marked_lost(&mut self, s: &mut SockState, tx: &SkbTx) {
        if self.class.hooks.skb_marked_lost {
            let t = PySkbTx { in_flight: tx.in_flight, lost: tx.lost, is_app_limited: tx.is_app_limited, has_delivered_mstamp: tx.has_delivered_mstamp };
            self.call(s, "skb_marked_lost", |py, o, sock| {
                let t = Py::new(py, t)?;
                o.call_method1(intern!(py, "skb_marked_lost"), (sock, t)).map(drop)
            });
        }
    }
    fn undo_cwnd(&mut self, s: &mut SockState) -> u32 {
        if self.class.hooks.undo_cwnd {
            self.window(s, "undo_cwnd")
        } else {
            s.cwnd.max(s.prior_cwnd)
        }
    }
    fn wants_pacing(&self) -> bool {
        self.class.pacing
    }
    fn needs_ecn(&self) -> bool {
        self.class.needs_ecn
    }
    fn ecn_codepoint(&self) -> ccsim_core::net::Ecn {
        if self.class.ect1 {
            ccsim_core::net::Ecn::Ect1
        } else {
            ccsim_core::net::Ecn::Ect0
        }
    }
    /// `telemetry()` returns a dict with any of rtprop_ms, btlbw_bps, rho, queue_state,
    /// shadow_wnd_pkts (the time-series columns Rust algorithms fill).
    fn telemetry(&self) -> CcTelemetry {
        let mut t = CcTelemetry::default();
        if !self.class.hooks.telemetry {
            return t;
        }
        Python::with_gil(|py| {
            let r = (|| -> PyResult<()> {
                let d = self.obj.bind(py).call_method0(intern!(py, "telemetry"))?;
                let d = d.downcast::<PyDict>().map_err(|_| PyTypeError::new_err("telemetry() must return a dict"))?;
                for (k, v) in d.iter() {
                    let k: String = k.extract()?;
                    match k.as_str() {
                        "rtprop_ms" => t.rtprop_ms = v.extract()?,
                        "btlbw_bps" => t.btlbw_bps = v.extract()?,
                        "rho" => t.rho = v.extract()?,
                        "shadow_wnd_pkts" => t.shadow_wnd_pkts = v.extract()?,
                        "queue_state" => t.queue_state = Some(intern_static(&v.extract::<String>()?)),
                        other => {
                            return Err(PyValueError::new_err(format!(
                                "telemetry(): unknown column {other:?}; accepted: rtprop_ms, btlbw_bps, rho, queue_state, shadow_wnd_pkts"
                            )))
                        }
                    }
                }
                Ok(())
            })();
            if let Err(e) = r {
                let now = self.sock.borrow(py).s.now;
                fail(py, self.class.name, "telemetry", now, self.flow, e);
            }
        });
        t
    }
}

/// A validated parameter value in the Python type of its default.
fn param_value(py: Python<'_>, d: &ParamDecl, v: f64) -> PyObject {
    if d.boolean {
        PyBool::new(py, v != 0.0).to_owned().into_any().unbind()
    } else if d.integer {
        (v as i64).into_pyobject(py).expect("int").into_any().unbind()
    } else {
        PyFloat::new(py, v).into_any().unbind()
    }
}

fn build(py: Python<'_>, class: &Arc<ClassInfo>, params: &Params, flow: usize) -> PyResult<PyCc> {
    let obj = class.cls.bind(py).call0()?;
    let values = PyDict::new(py);
    for d in &class.decls {
        let v = param_value(py, d, params.get(&d.name));
        obj.setattr(d.name.as_str(), &v)?;
        values.set_item(d.name.as_str(), v)?;
    }
    obj.setattr(intern!(py, "params"), values)?;
    let sock = Py::new(py, PySock { s: SockState::new(1, 1) })?;
    Ok(PyCc { class: class.clone(), obj: obj.unbind(), sock, flow })
}

/// Register a Python class as the algorithm `name` (`ccsim.register` checks the class and
/// computes `hooks` and `params`; `params` is a list of (name, default, kind) with kind "bool",
/// "int" or "float"). `tag` identifies the version (the module's content hash).
#[pyfunction]
#[pyo3(signature = (name, cls, params, hooks, tag, summary="", source="", pacing=false, needs_ecn=false, ect1=false))]
#[allow(clippy::too_many_arguments)]
pub fn register_cc(
    name: &str,
    cls: Py<PyAny>,
    params: &Bound<'_, PyList>,
    hooks: Vec<String>,
    tag: &str,
    summary: &str,
    source: &str,
    pacing: bool,
    needs_ecn: bool,
    ect1: bool,
) -> PyResult<()> {
    let hooks = Hooks::from_names(&hooks)?;
    let mut decls = Vec::new();
    for item in params.iter() {
        let (pname, default, kind): (String, f64, String) = item.extract()?;
        let (integer, boolean, min, max) = match kind.as_str() {
            "bool" => (true, true, 0.0, 1.0),
            "int" => (true, false, -9.007_199_254_740_992e15, 9.007_199_254_740_992e15),
            "float" => (false, false, f64::MIN, f64::MAX),
            other => return Err(PyValueError::new_err(format!("parameter {pname}: unknown kind {other:?}"))),
        };
        let unit = if boolean { "bool" } else { "" };
        decls.push(ParamDecl { name: pname, default, min, max, unit: unit.into(), integer, boolean, doc: String::new() });
    }
    let leaked_name = intern_static(name);
    let class = Arc::new(ClassInfo { name: leaked_name, cls, hooks, pacing, needs_ecn, ect1, decls: decls.clone() });
    let factory: external::Factory = Arc::new(move |p: &Params, _rng: Rng, flow: usize| {
        Python::with_gil(|py| match build(py, &class, p, flow) {
            Ok(cc) => Box::new(cc) as Box<dyn CongestionControl>,
            Err(e) => fail(py, class.name, "__init__", 0, flow, e),
        })
    });
    external::register(name, summary, source, decls, tag, factory).map_err(PyValueError::new_err)
}

/// Remove a registered algorithm; False if there was none of that name.
#[pyfunction]
pub fn unregister_cc(name: &str) -> bool {
    external::unregister(name)
}

/// The registered algorithms' names.
#[pyfunction]
pub fn registered_ccs() -> Vec<&'static str> {
    external::names()
}

// -- hook tracing (tests: the order the engine calls a built-in's hooks) ----------------------

/// One traced hook call: (flow, simulated time in ns, hook, its argument or -1).
type TraceEntry = (usize, u64, &'static str, i64);

static TRACE: Mutex<Vec<TraceEntry>> = Mutex::new(Vec::new());

fn trace(flow: usize, now: u64, hook: &'static str, arg: i64) {
    TRACE.lock().unwrap_or_else(|e| e.into_inner()).push((flow, now, hook, arg));
}

/// A built-in algorithm whose every hook call is logged before it is forwarded.
struct Traced {
    inner: Box<dyn CongestionControl>,
    name: &'static str,
    flow: usize,
}

impl CongestionControl for Traced {
    fn name(&self) -> &'static str {
        self.name
    }
    fn init(&mut self, s: &mut SockState) {
        trace(self.flow, s.now, "init", -1);
        self.inner.init(s)
    }
    fn ssthresh(&mut self, s: &mut SockState) -> u32 {
        trace(self.flow, s.now, "ssthresh", -1);
        self.inner.ssthresh(s)
    }
    fn cong_avoid(&mut self, s: &mut SockState, acked: u32) {
        trace(self.flow, s.now, "cong_avoid", acked as i64);
        self.inner.cong_avoid(s, acked)
    }
    fn set_state(&mut self, s: &mut SockState, new: CaState) {
        trace(self.flow, s.now, "set_state", ca_state_int(new) as i64);
        self.inner.set_state(s, new)
    }
    fn cwnd_event(&mut self, s: &mut SockState, ev: CaEvent) {
        trace(self.flow, s.now, "cwnd_event", ca_event_int(ev) as i64);
        self.inner.cwnd_event(s, ev)
    }
    fn pkts_acked(&mut self, s: &mut SockState, a: &AckSample) {
        trace(self.flow, s.now, "pkts_acked", a.pkts_acked as i64);
        self.inner.pkts_acked(s, a)
    }
    fn in_ack_event(&mut self, s: &mut SockState, flags: u32) {
        trace(self.flow, s.now, "in_ack_event", flags as i64);
        self.inner.in_ack_event(s, flags)
    }
    fn has_cong_control(&self) -> bool {
        self.inner.has_cong_control()
    }
    fn cong_control(&mut self, s: &mut SockState, rs: &RateSample) {
        trace(self.flow, s.now, "cong_control", rs.delivered);
        self.inner.cong_control(s, rs)
    }
    fn skb_marked_lost(&mut self, s: &mut SockState, tx: &SkbTx) {
        trace(self.flow, s.now, "skb_marked_lost", tx.in_flight as i64);
        self.inner.skb_marked_lost(s, tx)
    }
    fn undo_cwnd(&mut self, s: &mut SockState) -> u32 {
        trace(self.flow, s.now, "undo_cwnd", -1);
        self.inner.undo_cwnd(s)
    }
    fn wants_pacing(&self) -> bool {
        self.inner.wants_pacing()
    }
    fn needs_ecn(&self) -> bool {
        self.inner.needs_ecn()
    }
    fn ecn_codepoint(&self) -> ccsim_core::net::Ecn {
        self.inner.ecn_codepoint()
    }
    fn telemetry(&self) -> CcTelemetry {
        self.inner.telemetry()
    }
}

/// Register `<builtin>+trace`: the built-in algorithm with every hook call logged (read with
/// [`take_trace`]). For tests of the hook order.
#[pyfunction]
pub fn trace_builtin(builtin: &str) -> PyResult<String> {
    let info = ccsim_core::cc::ALGORITHMS
        .iter()
        .find(|a| a.name == builtin)
        .ok_or_else(|| PyValueError::new_err(format!("unknown built-in algorithm {builtin:?}")))?;
    let name = intern_static(&format!("{builtin}+trace"));
    let inner_name = info.name;
    let decls = info
        .params
        .iter()
        .map(|p| ParamDecl {
            name: p.name.into(),
            default: p.default,
            min: p.min,
            max: p.max,
            unit: p.unit.into(),
            integer: p.integer,
            boolean: p.boolean,
            doc: p.doc.into(),
        })
        .collect();
    let factory: external::Factory = Arc::new(move |p: &Params, rng: Rng, flow: usize| {
        Box::new(Traced { inner: ccsim_core::cc::build(inner_name, p, rng, flow), name, flow }) as Box<dyn CongestionControl>
    });
    external::register(name, info.summary, info.source, decls, "trace", factory).map_err(PyValueError::new_err)?;
    Ok(name.to_string())
}

/// The traced hook calls since the last call, as (flow, now_ns, hook, arg) tuples.
#[pyfunction]
pub fn take_trace() -> Vec<TraceEntry> {
    std::mem::take(&mut *TRACE.lock().unwrap_or_else(|e| e.into_inner()))
}
