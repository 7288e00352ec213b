//! Scenarios more than one integration test file builds.

use ccsim_core::Scenario;
use serde_json::{json, Value};

pub fn scenario(v: Value) -> Scenario {
    Scenario::from_value(&v).unwrap_or_else(|e| panic!("valid scenario: {e}"))
}

/// Three 10 Mbps bottlenecks in a chain (r0 -> r1 -> r2 -> r3, 10 ms each, 1 BDP), one long
/// flow of algorithm `long` across all (long_src -> long_dst), and a cross flow on each
/// bottleneck i (c{i}_src -> c{i}_dst) of algorithm `cross[i - 1]`; hosts on 1 Gbps, 1 ms links.
#[allow(dead_code)] // not every test file that shares this module uses it
pub fn parking_lot(long: &str, cross: [&str; 3], duration: &str) -> Scenario {
    let mut links = vec![];
    for i in 0..3 {
        links.push(json!({"between": [format!("r{i}"), format!("r{}", i + 1)], "rate": "10Mbps", "delay": "10ms", "buffer": "1bdp"}));
    }
    let mut flows = vec![json!({"cc": long, "src": "long_src", "dst": "long_dst"})];
    links.push(json!({"between": ["long_src", "r0"], "rate": "1Gbps", "delay": "1ms", "buffer": "1000pkt"}));
    links.push(json!({"between": ["long_dst", "r3"], "rate": "1Gbps", "delay": "1ms", "buffer": "1000pkt"}));
    for i in 1..=3 {
        links.push(json!({"between": [format!("c{i}_src"), format!("r{}", i - 1)], "rate": "1Gbps", "delay": "1ms", "buffer": "1000pkt"}));
        links.push(json!({"between": [format!("c{i}_dst"), format!("r{i}")], "rate": "1Gbps", "delay": "1ms", "buffer": "1000pkt"}));
        flows.push(json!({"cc": cross[i - 1], "src": format!("c{i}_src"), "dst": format!("c{i}_dst")}));
    }
    scenario(json!({"duration": duration, "links": links, "flows": flows}))
}
