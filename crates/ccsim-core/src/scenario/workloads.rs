//! `[[workloads]]`: short flows with Poisson arrivals and sizes from a CDF (see
//! [`crate::workload`]). A workload's `sizes` is a built-in name or a table
//! `{ file = "PATH", cdf = "TEXT" }`: the Python layer turns a file path (relative to the
//! scenario file) into that table, so the core never reads files.

use super::{as_str, cc, err, float_in, join, parse_params, parse_rate, show, time_in, Common, Table, ScenarioError, TCP_KEYS};
use crate::time::SEC;
use crate::topology::general::Topology;
use crate::workload::{self, Arrivals, Cdf, WorkloadConfig};
use serde_json::{Map, Value};

const WORKLOAD_KEYS: &[&str] = &["cc", "params", "sizes", "load", "arrivals", "link", "src", "dst", "path", "start", "stop", "access_rate", "access_delay"];

/// Most flows a workload may be expected to start (flows per second x its arrival time): a
/// workload's flows are numbered with 24 bits.
pub const MAX_WORKLOAD_FLOWS: f64 = 10_000_000.0;
/// Most `[[workloads]]` entries (a flow's number holds its workload's in 7 bits).
pub const MAX_WORKLOADS: usize = 128;

/// The network the workloads run on.
pub(super) enum WlNet<'a> {
    /// The dumbbell's bottleneck rate.
    Dumbbell { rate_bps: u64 },
    Links(&'a Topology),
}

fn sizes_help() -> String {
    let names: Vec<String> = workload::BUILTINS.iter().map(|b| format!("\"{}\"", b.0)).collect();
    format!("a built-in ({}) or a CDF file path, relative to the scenario file (lines \"SIZE_BYTES CUMULATIVE_PERCENT\")", names.join(", "))
}

pub(super) fn parse_workloads(top: &Table, c: &Common, net: WlNet) -> Result<(Vec<WorkloadConfig>, Vec<Value>), ScenarioError> {
    let Some(wv) = top.get("workloads") else { return Ok((Vec::new(), Vec::new())) };
    let Value::Array(entries) = wv else {
        return err("workloads", format!("expected an array of tables ([[workloads]]), got {}", show(wv)));
    };
    if entries.len() > MAX_WORKLOADS {
        return err("workloads", format!("{} entries; accepted: at most {MAX_WORKLOADS} [[workloads]] entries", entries.len()));
    }
    let mut allowed: Vec<&'static str> = WORKLOAD_KEYS.to_vec();
    allowed.extend_from_slice(TCP_KEYS);
    let mut out = Vec::with_capacity(entries.len());
    let mut norms = Vec::with_capacity(entries.len());
    for (i, e) in entries.iter().enumerate() {
        let t = Table::new(&format!("workloads[{i}]"), e, &allowed)?;
        t.check_unknown()?;
        let mut n = Map::new();
        let ccv = t.require("cc", &format!("one of {}", cc::names().join(", ")))?;
        let cc_name = as_str(&t.p("cc"), ccv, &cc::names().join(", "))?;
        if cc::find(cc_name).is_none() {
            return err(&t.p("cc"), format!("unknown algorithm {}; accepted: {}", show(ccv), cc::names().join(", ")));
        }
        n.insert("cc".into(), Value::from(cc_name));
        // Sizes.
        let sv = t.require("sizes", &sizes_help())?;
        let (cdf_text, sizes_name) = match sv {
            Value::String(s) => match workload::builtin(s) {
                Some(text) => (text.to_string(), s.clone()),
                None if s.contains('/') || s.contains('.') => {
                    return err(
                        &t.p("sizes"),
                        format!("{} looks like a file path; the Python layer (ccsim run, ccsim.run) reads CDF files; the core accepts {} or a table {{ file, cdf }}", show(sv), sizes_help()),
                    )
                }
                None => return err(&t.p("sizes"), format!("unknown built-in {}; accepted: {}", show(sv), sizes_help())),
            },
            Value::Object(m) => {
                let st = Table::new(&t.p("sizes"), sv, &["file", "cdf"])?;
                st.check_unknown()?;
                let file = as_str(&st.p("file"), st.require("file", "the CDF file's path")?, "the CDF file's path")?.to_string();
                let text = as_str(&st.p("cdf"), st.require("cdf", "the CDF file's text")?, "the CDF file's text")?.to_string();
                let _ = m;
                (text, file)
            }
            _ => return err(&t.p("sizes"), format!("expected a string, got {}; accepted: {}", show(sv), sizes_help())),
        };
        let cdf = Cdf::parse(&cdf_text).or_else(|m| err(&t.p("sizes"), format!("{sizes_name}: {m}")))?;
        n.insert("sizes".into(), sv.clone());
        // Where: the dumbbell's own sender host, or a path on [[links]].
        let (mut access_rate_bps, mut access_delay, mut path, mut link, mut link_rate) = (0, 0, Vec::new(), None, None);
        match net {
            WlNet::Dumbbell { rate_bps } => {
                for k in ["src", "dst", "path", "link"] {
                    if t.get(k).is_some() {
                        return err(&t.p(k), "only used with [[links]]; on a dumbbell a workload's flows run from a sender host of its own over its access link and the bottleneck");
                    }
                }
                let arv = t.get("access_rate").cloned().unwrap_or(Value::from("1Gbps"));
                access_rate_bps = parse_rate(&t.p("access_rate"), &arv)?;
                let adv = t.get("access_delay").cloned().unwrap_or(Value::from("0ms"));
                access_delay = time_in(&t.p("access_delay"), &adv, 0, 100 * SEC, "a time from 0s to 100s")?;
                n.insert("access_rate".into(), arv);
                n.insert("access_delay".into(), adv);
                link = Some("router->receiver".to_string());
                link_rate = Some(rate_bps);
            }
            WlNet::Links(topo) => {
                for k in ["access_rate", "access_delay"] {
                    if t.get(k).is_some() {
                        return err(&t.p(k), "not used with [[links]]: a host's link to the network is a [[links]] entry of its own");
                    }
                }
                let node_help = "a node name of [[links]]";
                let src = as_str(&t.p("src"), t.require("src", node_help)?, node_help)?.to_string();
                let dst = as_str(&t.p("dst"), t.require("dst", node_help)?, node_help)?.to_string();
                if src == dst {
                    return err(&t.p("dst"), format!("\"{dst}\" is the workload's own src; accepted: another node of [[links]]"));
                }
                let pv = match t.get("path") {
                    None => None,
                    Some(pv) => {
                        let Value::Array(items) = pv else {
                            return err(&t.p("path"), format!("expected an array, got {}; accepted: an array of node names from src to dst", show(pv)));
                        };
                        let mut names = Vec::with_capacity(items.len());
                        for (k, x) in items.iter().enumerate() {
                            names.push(as_str(&format!("{}[{k}]", t.p("path")), x, node_help)?.to_string());
                        }
                        Some(names)
                    }
                };
                let ends = super::Ends { src: src.clone(), dst: dst.clone(), path: pv };
                path = super::flow_path(topo, &t.path, &ends)?;
                n.insert("src".into(), Value::from(src));
                n.insert("dst".into(), Value::from(dst));
                n.insert("path".into(), path.iter().map(|&k| Value::from(topo.nodes[k as usize].clone())).collect());
                if let Some(lv) = t.get("link") {
                    let help = "a direction \"FROM->TO\" of [[links]] on the workload's path, e.g. \"r1->r2\"";
                    let ls = as_str(&t.p("link"), lv, help)?;
                    let on_path = ls.split_once("->").and_then(|(a, b)| {
                        let (a, b) = (topo.node(a)?, topo.node(b)?);
                        let (li, rev) = topo.link_between(a, b)?;
                        path.windows(2).any(|w| w[0] == a && w[1] == b).then_some((li, rev))
                    });
                    let Some((li, rev)) = on_path else {
                        return err(&t.p("link"), format!("{} is not a direction of [[links]] on the workload's path; accepted: {help}", show(lv)));
                    };
                    let l = &topo.links[li];
                    let rate = if rev { l.rev.rate_bps } else { l.fwd.rate_bps };
                    if rate == 0 {
                        return err(&t.p("link"), format!("{} is unlimited (a pure delay): load has no rate to refer to; accepted: {help} with a rate", show(lv)));
                    }
                    link = Some(ls.to_string());
                    link_rate = Some(rate);
                    n.insert("link".into(), lv.clone());
                }
            }
        }
        // Arrivals.
        let (arrivals, flows_per_s) = match (t.get("load"), t.get("arrivals")) {
            (Some(_), Some(_)) => return err(&t.p("arrivals"), "give either load or arrivals, not both"),
            (None, None) => {
                return err(&t.p("load"), "missing; accepted: load = a fraction of the link's rate in (0, 1), or arrivals = flows per second such as \"200/s\"")
            }
            (Some(lv), None) => {
                let load = float_in(&t.p("load"), lv, 0.0, 1.0, "a fraction of the link's rate in (0, 1): offered load below capacity")?;
                if load <= 0.0 || load >= 1.0 {
                    return err(&t.p("load"), format!("{} is out of range; accepted: a fraction of the link's rate in (0, 1): offered load below capacity", show(lv)));
                }
                let Some(rate) = link_rate else {
                    return err(&t.p("link"), "missing: with [[links]], load refers to the rate of a link direction on the workload's path; accepted: link = \"FROM->TO\", or arrivals instead of load");
                };
                n.insert("load".into(), lv.clone());
                (Arrivals::Load(load), load * rate as f64 / (8.0 * cdf.mean()))
            }
            (None, Some(av)) => {
                let help = "flows per second, e.g. \"200/s\"";
                let s = as_str(&t.p("arrivals"), av, help)?;
                let x = s.strip_suffix("/s").and_then(|x| super::units::parse_number(x.trim()));
                match x {
                    Some(x) if x > 0.0 && x.is_finite() => {
                        n.insert("arrivals".into(), av.clone());
                        (Arrivals::Rate(x), x)
                    }
                    _ => return err(&t.p("arrivals"), format!("invalid value {}; accepted: a positive number of {help}", show(av))),
                }
            }
        };
        let sv = t.get("start").cloned().unwrap_or(Value::from("0s"));
        let start = time_in(&t.p("start"), &sv, 0, c.duration, "a time from 0s to the duration")?;
        let stop = match t.get("stop") {
            None => c.duration,
            Some(x) => time_in(&t.p("stop"), x, start + 1, c.duration, "a time after start and not after the duration")?,
        };
        n.insert("start".into(), sv);
        if let Some(x) = t.get("stop") {
            n.insert("stop".into(), x.clone());
        }
        let expected = flows_per_s * (stop - start) as f64 / SEC as f64;
        if expected > MAX_WORKLOAD_FLOWS {
            return err(
                &join(&t.path, if t.get("load").is_some() { "load" } else { "arrivals" }),
                format!("{flows_per_s:.4} flows per second from start to stop is about {expected:.3e} flows; accepted: at most {MAX_WORKLOAD_FLOWS:.0e} flows per workload (lower the rate or shorten start..stop)"),
            );
        }
        // TCP settings and the algorithm's parameters, as for [[flows]].
        let mut tcp = c.tcp.clone();
        for k in TCP_KEYS {
            if let Some(x) = t.get(k) {
                super::apply_tcp_key(&mut tcp, &t.p(k), k, x)?;
                n.insert((*k).into(), x.clone());
            }
        }
        if tcp.max_rto < tcp.min_rto {
            return err(&t.p("max_rto"), "must not be below min_rto");
        }
        let params = parse_params(&t.p("params"), cc_name, t.get("params"))?;
        n.insert("params".into(), super::params_norm(cc_name, &params));
        out.push(WorkloadConfig {
            cc: cc_name.to_string(),
            params,
            tcp,
            cdf,
            sizes_name,
            arrivals,
            flows_per_s,
            link,
            link_rate_bps: link_rate,
            start,
            stop,
            access_rate_bps,
            access_delay,
            path,
        });
        norms.push(Value::Object(n));
    }
    Ok((out, norms))
}
