//! A link direction's queue discipline in a scenario: `qdisc`, `qdisc_params` and `ecn` on
//! `[bottleneck]`, on a `[[links]]` entry and on its `reverse` table.

use super::{as_str, boolean, err, parse_param_table, show, ScenarioError, Table};
use crate::cc::Params;
use crate::net::qdisc::registry;
use serde_json::{Map, Value};

/// The keys this module reads from a link table.
pub const QDISC_KEYS: &[&str] = &["qdisc", "qdisc_params", "ecn"];

/// A direction's discipline: its name, parameters (validated, defaults filled in) and
/// whether it marks ECN-capable packets instead of dropping them.
#[derive(Debug, Clone, PartialEq)]
pub struct QdiscConfig {
    pub name: String,
    pub params: Params,
    pub ecn: bool,
}

impl Default for QdiscConfig {
    fn default() -> Self {
        QdiscConfig { name: "fifo".into(), params: Params::default(), ecn: false }
    }
}

impl QdiscConfig {
    /// The default: drop-tail FIFO without marking, served by the link's fast path (no slot).
    pub fn is_fifo(&self) -> bool {
        self.name == "fifo" && !self.ecn
    }
}

/// Read `qdisc`, `qdisc_params` and `ecn` from `t`. Without any of them the direction takes
/// `base` (a `reverse` table: its link's forward direction, unless the reverse is unlimited)
/// or the default FIFO. `unlimited`
/// says the direction has no rate (a pure delay, no queue): only the FIFO fits it. The keys
/// given are copied into `norm` (only those: a scenario without them normalises as before).
pub(super) fn parse(t: &Table, base: Option<&QdiscConfig>, unlimited: bool, norm: &mut Map<String, Value>) -> Result<QdiscConfig, ScenarioError> {
    if QDISC_KEYS.iter().all(|k| t.get(k).is_none()) {
        // An unlimited direction has no queue: it inherits nothing.
        return Ok(if unlimited { QdiscConfig::default() } else { base.cloned().unwrap_or_default() });
    }
    let names = registry::names().join(", ");
    let name = match t.get("qdisc") {
        None => "fifo".to_string(),
        Some(v) => {
            norm.insert("qdisc".into(), v.clone());
            let s = as_str(&t.p("qdisc"), v, &format!("a queue discipline: {names}"))?;
            if registry::find(s).is_none() {
                return err(&t.p("qdisc"), format!("unknown queue discipline {}; accepted: {names} (`ccsim qdiscs` lists them)", show(v)));
            }
            s.to_string()
        }
    };
    let info = registry::find(&name).expect("a known discipline");
    if unlimited && name != "fifo" {
        return err(
            &t.p("qdisc"),
            format!("\"{name}\" on a direction without a rate (rate = \"unlimited\" is a pure delay, with no queue); accepted: \"fifo\", or give the direction a rate"),
        );
    }
    if let Some(v) = t.get("qdisc_params") {
        norm.insert("qdisc_params".into(), v.clone());
    }
    let params = parse_param_table(&t.p("qdisc_params"), "queue discipline", &name, info.params, t.get("qdisc_params"))?;
    if let Err(m) = registry::check(&name, &params) {
        return err(&t.p("qdisc_params"), m);
    }
    let ecn = match t.get("ecn") {
        None => false,
        Some(v) => {
            norm.insert("ecn".into(), v.clone());
            boolean(&t.p("ecn"), v)?
        }
    };
    if ecn && !info.can_mark {
        let markers: Vec<&str> = registry::QDISCS.iter().filter(|q| q.can_mark).map(|q| q.name).collect();
        let markers = if markers.is_empty() { "none yet".to_string() } else { markers.join(", ") };
        return err(&t.p("ecn"), format!("true, but \"{name}\" cannot mark (it only drops); accepted: false, or a discipline that marks: {markers}"));
    }
    Ok(QdiscConfig { name, params, ecn })
}

#[cfg(test)]
mod tests {
    use crate::scenario::{NetworkConfig, Scenario};
    use serde_json::{json, Value};

    fn dumbbell(extra: Value) -> Value {
        let mut v = json!({
            "duration": "1s",
            "bottleneck": {"rate": "10Mbps", "delay": "10ms"},
            "flows": [{"cc": "cubic"}],
        });
        for (k, x) in extra.as_object().unwrap() {
            v["bottleneck"][k] = x.clone();
        }
        v
    }

    fn links(extra: Value, reverse: Option<Value>) -> Value {
        let mut link = json!({"between": ["a", "b"], "rate": "10Mbps", "delay": "1ms"});
        for (k, x) in extra.as_object().unwrap() {
            link[k] = x.clone();
        }
        if let Some(r) = reverse {
            link["reverse"] = r;
        }
        json!({"duration": "1s", "links": [link], "flows": [{"cc": "cubic", "src": "a", "dst": "b"}]})
    }

    fn error(v: Value) -> String {
        Scenario::from_value(&v).unwrap_err().to_string()
    }

    #[test]
    fn the_default_is_the_fifo_fast_path_and_keeps_the_normalised_form() {
        let sc = Scenario::from_value(&dumbbell(json!({}))).unwrap();
        let b = sc.bottleneck().unwrap();
        assert!(b.qdisc.is_fifo());
        // No qdisc key in the normalised form unless the scenario has one.
        assert!(sc.normalized["bottleneck"].get("qdisc").is_none());
        let sc = Scenario::from_value(&dumbbell(json!({"qdisc": "fifo"}))).unwrap();
        assert_eq!(sc.normalized["bottleneck"]["qdisc"], json!("fifo"));
        assert!(sc.bottleneck().unwrap().qdisc.is_fifo());
    }

    #[test]
    fn bad_disciplines_name_the_field_and_what_is_accepted() {
        let m = error(dumbbell(json!({"qdisc": "fq-codel"})));
        assert!(m.starts_with("bottleneck.qdisc: unknown queue discipline \"fq-codel\"; accepted: fifo"), "{m}");
        let m = error(dumbbell(json!({"qdisc": 3})));
        assert!(m.starts_with("bottleneck.qdisc: expected a string"), "{m}");
        let m = error(dumbbell(json!({"ecn": "yes"})));
        assert_eq!(m, "bottleneck.ecn: expected true or false, got \"yes\"");
        let m = error(dumbbell(json!({"ecn": true})));
        assert!(m.starts_with("bottleneck.ecn: true, but \"fifo\" cannot mark (it only drops); accepted: false"), "{m}");
        let m = error(dumbbell(json!({"qdisc_params": {"target": "5ms"}})));
        assert_eq!(m, "bottleneck.qdisc_params.target: unknown parameter of queue discipline \"fifo\"; accepted: none");
        let m = error(links(json!({"qdisc_params": 1}), None));
        assert_eq!(m, "links[0].qdisc_params: expected a table of parameters, got 1");
    }

    #[test]
    fn parameters_are_checked_against_the_discipline_and_times_take_units() {
        let sc = Scenario::from_value(&dumbbell(json!({"qdisc": "codel", "qdisc_params": {"target": "2ms", "interval": 50}}))).unwrap();
        let q = &sc.bottleneck().unwrap().qdisc;
        assert_eq!((q.name.as_str(), q.params.get("target"), q.params.get("interval"), q.params.get("limit")), ("codel", 2.0, 50.0, 1000.0));
        assert_eq!(sc.normalized["bottleneck"]["qdisc_params"], json!({"target": "2ms", "interval": 50}));
        let sc = Scenario::from_value(&dumbbell(json!({"qdisc": "codel", "qdisc_params": {"target": "500us"}}))).unwrap();
        assert_eq!(sc.bottleneck().unwrap().qdisc.params.get("target"), 0.5);
        let m = error(dumbbell(json!({"qdisc": "codel", "qdisc_params": {"target": "5 parsecs"}})));
        assert_eq!(m, "bottleneck.qdisc_params.target: \"5 parsecs\" is not valid for \"codel\"; accepted: a number in [0.001, 60000] (ms), or a time such as \"5ms\"");
        let m = error(dumbbell(json!({"qdisc": "codel", "qdisc_params": {"target": "-5ms"}})));
        assert!(m.starts_with("bottleneck.qdisc_params.target: \"-5ms\" is not valid for \"codel\""), "{m}");
        let m = error(dumbbell(json!({"qdisc": "codel", "qdisc_params": {"target": "2min"}})));
        assert!(m.starts_with("bottleneck.qdisc_params.target: \"2min\" is not valid"), "{m}");
        let m = error(dumbbell(json!({"qdisc": "codel", "qdisc_params": {"limit": 0}})));
        assert_eq!(m, "bottleneck.qdisc_params.limit: 0 is out of range for \"codel\"; accepted: an integer in [1, 1000000000] (pkts)");
        let m = error(dumbbell(json!({"qdisc": "codel", "qdisc_params": {"quantum": 1514}})));
        assert_eq!(m, "bottleneck.qdisc_params.quantum: unknown parameter of queue discipline \"codel\"; accepted: target, interval, limit");
        // A rule between parameters.
        let m = error(dumbbell(json!({"qdisc": "red", "qdisc_params": {"min_th": 30, "max_th": 20}})));
        assert!(m.starts_with("bottleneck.qdisc_params: ") && m.contains("min_th") && m.contains("max_th"), "{m}");
        // ECN on a discipline that marks.
        let sc = Scenario::from_value(&dumbbell(json!({"qdisc": "red", "qdisc_params": {"min_th": 20, "max_th": 20}, "ecn": true}))).unwrap();
        assert!(sc.bottleneck().unwrap().qdisc.ecn);
    }

    #[test]
    fn an_unlimited_direction_takes_no_discipline() {
        let m = error(links(json!({"rate": "unlimited", "qdisc": "codel"}), None));
        assert!(m.starts_with("links[0].qdisc: \"codel\" on a direction without a rate"), "{m}");
        // A reverse with a rate inherits codel; an unlimited one has no queue and inherits nothing.
        let rev = |r: Value| {
            let sc = Scenario::from_value(&links(json!({"qdisc": "codel"}), Some(r))).unwrap();
            let NetworkConfig::Links { topology, .. } = &sc.network else { panic!("links") };
            topology.links[0].rev.qdisc.name.clone()
        };
        assert_eq!(rev(json!({"rate": "1Mbps"})), "codel");
        assert_eq!(rev(json!({"rate": "unlimited"})), "fifo");
        let m = error(links(json!({"qdisc": "codel"}), Some(json!({"rate": "unlimited", "qdisc": "pie"}))));
        assert!(m.starts_with("links[0].reverse.qdisc: \"pie\" on a direction without a rate"), "{m}");
    }

    #[test]
    fn a_reverse_direction_inherits_the_discipline_unless_it_names_one() {
        let v = links(json!({"qdisc": "fifo"}), Some(json!({"rate": "unlimited"})));
        // An unlimited reverse inherits "fifo" (the only discipline without a queue's needs).
        let sc = Scenario::from_value(&v).unwrap();
        let NetworkConfig::Links { topology, .. } = &sc.network else { panic!("links") };
        assert_eq!(topology.links[0].rev.qdisc.name, "fifo");
        let m = error(links(json!({}), Some(json!({"rate": "unlimited", "qdisc": "fifo", "ecn": true}))));
        assert!(m.starts_with("links[0].reverse.ecn: true, but \"fifo\" cannot mark"), "{m}");
    }
}
