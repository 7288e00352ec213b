//! Algorithm parameters: each algorithm declares a table of [`ParamSpec`]s (name, default, unit,
//! accepted range, source); a scenario's `params = { ... }` is checked against it.

use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy)]
pub struct ParamSpec {
    pub name: &'static str,
    pub default: f64,
    pub min: f64,
    pub max: f64,
    pub unit: &'static str,
    /// Values must be whole numbers (booleans are 0/1 integers written as true/false).
    pub integer: bool,
    pub boolean: bool,
    pub doc: &'static str,
}

impl ParamSpec {
    pub const fn num(name: &'static str, default: f64, min: f64, max: f64, unit: &'static str, doc: &'static str) -> Self {
        ParamSpec { name, default, min, max, unit, integer: false, boolean: false, doc }
    }
    pub const fn int(name: &'static str, default: f64, min: f64, max: f64, unit: &'static str, doc: &'static str) -> Self {
        ParamSpec { name, default, min, max, unit, integer: true, boolean: false, doc }
    }
    pub const fn flag(name: &'static str, default: bool, doc: &'static str) -> Self {
        ParamSpec {
            name,
            default: if default { 1.0 } else { 0.0 },
            min: 0.0,
            max: 1.0,
            unit: "bool",
            integer: true,
            boolean: true,
            doc,
        }
    }
    pub fn range_text(&self) -> String {
        if self.boolean {
            "true or false".to_string()
        } else if self.integer {
            format!("an integer in [{}, {}]", self.min, self.max)
        } else {
            format!("a number in [{}, {}]", self.min, self.max)
        }
    }
}

/// Concatenate two parameter tables at compile time (a variant's table = its base's + its own).
pub const fn concat<const N: usize>(a: &[ParamSpec], b: &[ParamSpec]) -> [ParamSpec; N] {
    let mut out = [ParamSpec::num("", 0.0, 0.0, 0.0, "", ""); N];
    let mut i = 0;
    while i < a.len() {
        out[i] = a[i];
        i += 1;
    }
    let mut j = 0;
    while j < b.len() {
        out[a.len() + j] = b[j];
        j += 1;
    }
    out
}

/// Validated parameter values (every declared parameter present, defaults filled in).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Params(pub BTreeMap<String, f64>);

impl Params {
    pub fn defaults(specs: &[ParamSpec]) -> Self {
        Params(specs.iter().map(|s| (s.name.to_string(), s.default)).collect())
    }
    pub fn get(&self, name: &str) -> f64 {
        *self.0.get(name).unwrap_or_else(|| panic!("parameter {name} not declared"))
    }
    pub fn flag(&self, name: &str) -> bool {
        self.get(name) != 0.0
    }
    pub fn set(&mut self, name: &str, v: f64) {
        self.0.insert(name.to_string(), v);
    }
}
