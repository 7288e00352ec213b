//! The output schema (`output::schema`) describes what runs really report: every object of a
//! dumbbell, a `[[links]]` network with Wi-Fi hops and a `[wireless]` line has the keys of its
//! table, every key that may not be absent present, and values of the
//! declared type; the column tables hand over their columns in the schema's order.

use ccsim_core::output::schema::{self, ColumnData, Type};
use ccsim_core::scenario::AnyScenario;
use ccsim_core::sim::Sim;
use ccsim_core::Scenario;
use serde_json::{json, Value};

/// Check `obj` against table `name`, and its nested records against theirs.
fn check(name: &str, obj: &Value, seen: &mut Vec<String>) {
    let table = schema::table(name).unwrap_or_else(|| panic!("no table {name}"));
    seen.push(name.to_string());
    let o = obj.as_object().unwrap_or_else(|| panic!("{name}: not an object: {obj}"));
    let cols: Vec<_> = table.columns().collect();
    let keys: Vec<&str> = o.keys().map(String::as_str).collect();
    // (The order is the declaration order by construction: `record!` emits struct and schema
    // from one list. serde_json's Value sorts keys, so only membership is checked here.)
    for k in &keys {
        assert!(cols.iter().any(|c| c.name == *k), "{name}: key {k:?} is not in the schema");
    }
    // A UDP flow of a `[wireless]` line has only a few of a TCP flow's keys (the table says
    // which); they are checked when present.
    let udp = name == "line_flows" && o.get("protocol") == Some(&json!("udp"));
    for c in &cols {
        let v = o.get(c.name);
        if v.is_none() || v == Some(&Value::Null) {
            assert!(udp || c.nullable || (c.ty == Type::Float && v.is_some()), "{name}.{}: missing but not nullable", c.name);
            continue;
        }
        let v = v.unwrap();
        let ok = match c.ty {
            Type::Int => v.is_u64() || v.is_i64(),
            Type::Float => v.is_number(),
            Type::Str | Type::Category => v.is_string(),
            Type::Bool => v.is_boolean(),
            Type::StrList => v.as_array().is_some_and(|a| a.iter().all(Value::is_string)),
            Type::Record(t) => {
                check(t, v, seen);
                true
            }
            Type::Records(t) => {
                for r in v.as_array().expect("a list") {
                    check(t, r, seen);
                }
                true
            }
            Type::Object => v.is_object(),
        };
        assert!(ok, "{name}.{}: {v} is not of type {}", c.name, c.ty.name());
    }
}

fn dumbbell() -> Scenario {
    Scenario::from_value(&json!({
        "duration": "3s",
        "bottleneck": {"rate": "20Mbps", "delay": "10ms", "buffer": "40pkt", "loss": 0.001},
        "flows": [{"cc": "cubic"}, {"cc": "bbr", "size": "100KB"}, {"cc": "cdg"}, {"cc": "bbr-rtprop"}],
    }))
    .unwrap()
}

fn network_with_wifi() -> Scenario {
    Scenario::from_value(&json!({
        "duration": "3s",
        "links": [
            {"between": ["server", "r1"], "rate": "50Mbps", "delay": "5ms", "buffer": "50pkt"},
            {"between": ["r1", "ap"], "rate": "unlimited", "delay": "1ms"},
        ],
        "wifi": [{"stations": ["ap", "sta"]}],
        "flows": [{"cc": "cubic", "src": "server", "dst": "sta"}],
    }))
    .unwrap()
}

#[test]
fn every_object_a_run_reports_follows_its_table() {
    let mut seen = Vec::new();
    for sc in [dumbbell(), network_with_wifi()] {
        let mut sim = Sim::with_timeseries(&sc, 1, true);
        sim.run_to_end();
        let out = sim.into_output(&sc, 0.0);
        let v: Value = serde_json::from_str(&out.summary.to_json()).unwrap();
        check("summary", &v, &mut seen);
        let names: Vec<&str> = out.timeseries.into_columns().iter().map(|(n, _)| *n).collect();
        assert_eq!(names, schema::table("timeseries").unwrap().names());
        let names: Vec<&str> = out.link_series.into_columns().iter().map(|(n, _)| *n).collect();
        assert_eq!(names, schema::table("link_queues").unwrap().names());
        let names: Vec<&str> = out.events.into_columns().iter().map(|(n, _)| *n).collect();
        assert_eq!(names, schema::table("cc_events").unwrap().names());
    }
    let line = match AnyScenario::from_value(&json!({
        "duration": "2s",
        "wireless": {"hops": 2},
        "flows": [{"cc": "cubic"}, {"protocol": "udp", "rate": "100pps", "src": 0, "dst": 2}],
    }))
    .unwrap()
    {
        AnyScenario::Wireless(w) => w,
        _ => unreachable!(),
    };
    let mut sim = Sim::line(&line, 1, true);
    sim.run_to_end();
    let (summary, _, _) = sim.into_line_output(&line, 0.0);
    check("line_summary", &summary, &mut seen);
    seen.sort();
    seen.dedup();
    // Every record table was met (the column tables are checked above).
    for t in ["summary", "flows", "bottleneck", "links", "stations", "line_summary", "line_flows"] {
        assert!(seen.iter().any(|s| s == t), "no run reported a {t} record");
    }
}

/// Each column's data is of its declared type, in every column table.
fn check_types(table: &str, cols: Vec<(&'static str, ColumnData)>) {
    let t = schema::table(table).unwrap();
    assert_eq!(cols.len(), t.columns().count(), "{table}");
    for ((name, data), c) in cols.iter().zip(t.columns()) {
        assert_eq!(*name, c.name);
        let ok = match data {
            ColumnData::F64(_) => c.ty == Type::Float,
            ColumnData::U32(_) | ColumnData::U64(_) => c.ty == Type::Int,
            ColumnData::Str(_) | ColumnData::OptStr(_) => matches!(c.ty, Type::Str | Type::Category),
            ColumnData::Interned(_) => c.ty == Type::Category,
        };
        assert!(ok, "{table}.{name}: {:?} data for a {} column", std::mem::discriminant(data), c.ty.name());
    }
}

#[test]
fn the_column_tables_hand_over_the_declared_types() {
    for sc in [dumbbell(), network_with_wifi()] {
        let mut sim = Sim::with_timeseries(&sc, 1, true);
        sim.run_to_end();
        let mut out = sim.into_output(&sc, 0.0);
        assert!(!out.timeseries.is_empty() && !out.link_series.is_empty());
        check_types("timeseries", out.timeseries.into_columns());
        check_types("link_queues", out.link_series.into_columns());
        let events = out.events.take_closed();
        assert!(sc.bottleneck().is_none() || !events.is_empty(), "the dumbbell's bbr-rtprop logs events");
        check_types("cc_events", events.into_columns());
    }
}
