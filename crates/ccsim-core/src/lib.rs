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
//! loop), [`metrics`] (what a run reports) and [`limits`] (the memory a run needs, estimated
//! before it runs).

pub mod cc;
pub mod event;
pub mod limits;
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

pub use scenario::{Scenario, ScenarioError};
pub use sim::run;
