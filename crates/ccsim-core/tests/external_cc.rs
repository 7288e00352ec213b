//! Algorithms registered while the program runs (`cc::external`), in their own test binary so
//! that the registrations do not show in other tests' lists of algorithm names.

use ccsim_core::cc::external::{self, ParamDecl};
use ccsim_core::cc::newreno::{NewReno, NewRenoConfig};
use ccsim_core::cc::{self, AckSample, CaEvent, CaState, CongestionControl, Params, RateSample, SockState};
use ccsim_core::sim::run;
use ccsim_core::Scenario;
use serde_json::{json, Value};
use std::sync::Arc;

/// NewReno under another name: every hook forwarded.
struct Renamed(NewReno, &'static str);

impl CongestionControl for Renamed {
    fn name(&self) -> &'static str {
        self.1
    }
    fn init(&mut self, s: &mut SockState) {
        self.0.init(s)
    }
    fn ssthresh(&mut self, s: &mut SockState) -> u32 {
        self.0.ssthresh(s)
    }
    fn cong_avoid(&mut self, s: &mut SockState, acked: u32) {
        self.0.cong_avoid(s, acked)
    }
    fn set_state(&mut self, s: &mut SockState, new: CaState) {
        self.0.set_state(s, new)
    }
    fn cwnd_event(&mut self, s: &mut SockState, ev: CaEvent) {
        self.0.cwnd_event(s, ev)
    }
    fn pkts_acked(&mut self, s: &mut SockState, a: &AckSample) {
        self.0.pkts_acked(s, a)
    }
    fn cong_control(&mut self, s: &mut SockState, rs: &RateSample) {
        self.0.cong_control(s, rs)
    }
}

fn decl(name: &str, default: f64) -> ParamDecl {
    ParamDecl { name: name.into(), default, min: 0.0, max: 1.0, unit: "".into(), integer: false, boolean: false, doc: "".into() }
}

fn register_reno(name: &'static str) {
    let factory: external::Factory = Arc::new(move |p: &Params, _rng, _flow| {
        let mut cfg = NewRenoConfig::default();
        cfg.beta = p.get("beta");
        Box::new(Renamed(NewReno::new(cfg), name)) as Box<dyn CongestionControl>
    });
    external::register(name, "NewReno, registered", "a test", vec![decl("beta", 0.5)], "v1", factory).unwrap();
}

fn scenario(cc: &str, params: Value) -> Scenario {
    let v = json!({
        "duration": "20s",
        "bottleneck": {"rate": "10Mbps", "delay": "20ms", "buffer": "50pkt", "loss": 0.01},
        "tcp": {"mss": 1000},
        "flows": [{"cc": cc, "count": 2, "params": params}],
    });
    Scenario::from_value(&v).unwrap_or_else(|e| panic!("{e}"))
}

fn summary(sc: &Scenario) -> Value {
    let mut v: Value = serde_json::from_str(&run(sc, Some(3)).summary.to_json()).unwrap();
    v.as_object_mut().unwrap().remove("wall_seconds");
    v
}

#[test]
fn a_registered_algorithm_runs_as_the_built_in_it_wraps() {
    register_reno("ext-reno");
    assert!(cc::names().contains(&"ext-reno"));
    assert_eq!(cc::find("ext-reno").unwrap().params[0].name, "beta");
    let ext = summary(&scenario("ext-reno", json!({})));
    let builtin = summary(&scenario("newreno", json!({})));
    // Everything but the algorithm's name is identical.
    let s = ext.to_string().replace("ext-reno", "newreno");
    assert_eq!(s, builtin.to_string());
    // Parameters reach the factory, validated against the declaration.
    let half = summary(&scenario("ext-reno", json!({"beta": 0.5})));
    assert_eq!(half, ext);
    let other = summary(&scenario("ext-reno", json!({"beta": 0.7})));
    assert_ne!(other, ext);
    let e = Scenario::from_value(&json!({"duration": "1s", "bottleneck": {"rate": "10Mbps", "delay": "1ms", "buffer": "10pkt"},
        "flows": [{"cc": "ext-reno", "params": {"beta": 2}}]}))
    .unwrap_err()
    .to_string();
    assert!(e.contains("flows[0].params.beta") && e.contains("[0, 1]"), "{e}");
}

#[test]
fn built_in_names_are_refused_and_registration_can_be_undone() {
    let f: external::Factory = Arc::new(|_: &Params, _, _| Box::new(NewReno::new(NewRenoConfig::default())) as Box<dyn CongestionControl>);
    let e = external::register("cubic", "", "", vec![], "", f.clone()).unwrap_err();
    assert!(e.contains("built-in"), "{e}");
    assert!(external::register(" ", "", "", vec![], "", f.clone()).is_err());
    assert!(external::register("x", "", "", vec![decl("a", 0.1), decl("a", 0.2)], "", f.clone()).unwrap_err().contains("twice"));
    assert!(external::register("x", "", "", vec![decl("a", 3.0)], "", f.clone()).unwrap_err().contains("outside"));
    external::register("ext-gone", "", "", vec![], "t", f.clone()).unwrap();
    assert!(cc::find("ext-gone").is_some());
    // The same name and tag again keeps the entry (the same leaked info).
    let before = cc::find("ext-gone").unwrap() as *const _;
    external::register("ext-gone", "", "", vec![], "t", f.clone()).unwrap();
    assert_eq!(before, cc::find("ext-gone").unwrap() as *const _);
    // A new tag replaces it.
    external::register("ext-gone", "", "", vec![decl("a", 0.1)], "t2", f).unwrap();
    assert_eq!(cc::find("ext-gone").unwrap().params.len(), 1);
    assert!(external::unregister("ext-gone"));
    assert!(cc::find("ext-gone").is_none() && !external::unregister("ext-gone"));
}
