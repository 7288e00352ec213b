//! Algorithms registered while the program runs, next to the built-in registry: how an
//! algorithm written outside the engine (a Python class, through `ccsim.register`) becomes a
//! name a scenario can use. An entry is the same [`AlgorithmInfo`] a built-in has (its strings
//! leaked once, at registration, so that it lives as long as the built-ins) and a factory that
//! builds one controller per flow. The engine knows nothing of Python: the bindings register a
//! factory whose controllers call the user's code.
//!
//! Registering a name again replaces the entry (a Python module edited and loaded again); a
//! built-in name cannot be registered. Lookups take a read lock, once per flow at set-up and
//! once per scenario validation; nothing here is on the per-packet path.

use super::{AlgorithmInfo, CongestionControl, ParamSpec, Params, ALGORITHMS};
use crate::rng::Rng;
use std::sync::{Arc, RwLock};

/// Builds one controller for a flow from its validated parameters, its own random stream and
/// the flow's index in the run (for the controller's error messages).
pub type Factory = Arc<dyn Fn(&Params, Rng, usize) -> Box<dyn CongestionControl> + Send + Sync>;

/// A parameter of a registered algorithm, owned (the registry turns it into a [`ParamSpec`]).
#[derive(Debug, Clone, PartialEq)]
pub struct ParamDecl {
    pub name: String,
    pub default: f64,
    pub min: f64,
    pub max: f64,
    pub unit: String,
    pub integer: bool,
    pub boolean: bool,
    pub doc: String,
}

struct Entry {
    info: &'static AlgorithmInfo,
    factory: Factory,
    /// What the caller says identifies this version (e.g. the SHA-256 of a module's source):
    /// registering the same name with the same tag again keeps the entry and leaks nothing.
    tag: String,
    decls: Vec<ParamDecl>,
}

static REGISTRY: RwLock<Vec<Entry>> = RwLock::new(Vec::new());

fn leak(s: &str) -> &'static str {
    Box::leak(s.to_owned().into_boxed_str())
}

/// Register (or replace) the algorithm `name`. Refused: an empty name, a built-in algorithm's
/// name, a parameter declared twice or with a default outside its range.
pub fn register(name: &str, summary: &str, source: &str, params: Vec<ParamDecl>, tag: &str, factory: Factory) -> Result<(), String> {
    if name.trim().is_empty() {
        return Err("the algorithm's name is empty".into());
    }
    if ALGORITHMS.iter().any(|a| a.name == name) {
        return Err(format!("name {name:?} is a built-in algorithm's; choose another"));
    }
    for (i, p) in params.iter().enumerate() {
        if params[..i].iter().any(|q| q.name == p.name) {
            return Err(format!("parameter {:?} is declared twice", p.name));
        }
        if !(p.default >= p.min && p.default <= p.max) {
            return Err(format!("parameter {:?}: default {} is outside [{}, {}]", p.name, p.default, p.min, p.max));
        }
    }
    let mut reg = REGISTRY.write().unwrap_or_else(|e| e.into_inner());
    if let Some(e) = reg.iter_mut().find(|e| e.info.name == name) {
        if e.tag == tag && e.decls == params {
            e.factory = factory;
            return Ok(());
        }
    }
    let specs: Vec<ParamSpec> = params
        .iter()
        .map(|p| ParamSpec {
            name: leak(&p.name),
            default: p.default,
            min: p.min,
            max: p.max,
            unit: leak(&p.unit),
            integer: p.integer,
            boolean: p.boolean,
            doc: leak(&p.doc),
        })
        .collect();
    let info: &'static AlgorithmInfo = Box::leak(Box::new(AlgorithmInfo {
        name: leak(name),
        summary: leak(summary),
        source: leak(source),
        params: Box::leak(specs.into_boxed_slice()),
    }));
    let entry = Entry { info, factory, tag: tag.to_owned(), decls: params };
    match reg.iter_mut().find(|e| e.info.name == name) {
        Some(e) => *e = entry,
        None => reg.push(entry),
    }
    Ok(())
}

/// Remove a registered algorithm; false if there was none of that name.
pub fn unregister(name: &str) -> bool {
    let mut reg = REGISTRY.write().unwrap_or_else(|e| e.into_inner());
    let n = reg.len();
    reg.retain(|e| e.info.name != name);
    reg.len() != n
}

pub fn find(name: &str) -> Option<&'static AlgorithmInfo> {
    REGISTRY.read().unwrap_or_else(|e| e.into_inner()).iter().find(|e| e.info.name == name).map(|e| e.info)
}

/// Whether `name` is a registered (not built-in) algorithm.
pub fn is_registered(name: &str) -> bool {
    find(name).is_some()
}

/// The registered algorithms' names, in registration order.
pub fn names() -> Vec<&'static str> {
    REGISTRY.read().unwrap_or_else(|e| e.into_inner()).iter().map(|e| e.info.name).collect()
}

/// The registered algorithms' entries, in registration order.
pub fn infos() -> Vec<&'static AlgorithmInfo> {
    REGISTRY.read().unwrap_or_else(|e| e.into_inner()).iter().map(|e| e.info).collect()
}

/// A controller of the registered algorithm `name`, or None if there is none of that name.
pub fn build(name: &str, params: &Params, rng: Rng, flow: usize) -> Option<Box<dyn CongestionControl>> {
    let factory = REGISTRY.read().unwrap_or_else(|e| e.into_inner()).iter().find(|e| e.info.name == name).map(|e| e.factory.clone())?;
    Some(factory(params, rng, flow))
}
