//! ccsim-core: a deterministic, single-threaded packet-level simulator for TCP congestion control.
//!
//! Determinism contract: a run is a pure function of (scenario, seed). Time is an integer number
//! of nanoseconds; same-time events run in insertion order; every random stream is derived from
//! the one scenario seed; the simulation reads no wall clock and iterates no hash map.
//!
//! Layers, from the bottom: [`time`] and [`units`] (integer time, rates, sizes), [`event`] (the
//! event queue), [`rng`] (seeded streams), [`net`] (links, queues, loss), [`tcp`] (sender,
//! receiver, SACK, RTO, rate sampling), [`cc`] (the congestion-control trait and one file per
//! algorithm), [`scenario`] (validated configuration), [`sim`] (the dumbbell wiring and the run
//! loop) and [`metrics`] (what a run reports).

pub mod cc;
pub mod event;
pub mod metrics;
pub mod net;
pub mod rng;
pub mod scenario;
pub mod sim;
pub mod stats;
pub mod tcp;
pub mod time;
pub mod units;
pub mod wireless;

/// Version of the simulation model: what a given scenario and seed produce.
///
/// Bump it with any change that alters any result of an existing scenario and seed (a
/// different number in a run's summary, time series or algorithm events, `wall_seconds`
/// aside): a fixed bug, a new default, a changed algorithm or link model. Do not bump it for
/// pure speed-ups or refactors that keep every result bit-identical. Stored sweep runs are
/// keyed by it (Python `ccsim.sweep`), so a bump makes the next sweep rerun every run instead
/// of reusing results computed by the older model.
pub const MODEL_VERSION: u32 = 1;

pub use scenario::{Scenario, ScenarioError};
pub use sim::run;
