//! ccsim-core: a deterministic, single-threaded packet-level simulator for TCP congestion control.
//!
//! Determinism contract: a run is a pure function of (scenario, seed). Time is an integer number
//! of nanoseconds; same-time events run in insertion order; every random stream is derived from
//! the one scenario seed; the simulation reads no wall clock and iterates no hash map.
//!
//! Layers, from the bottom, each a folder with its own module comment:
//! - [`engine`]: integer time, the event queue, seeded random streams;
//! - [`net`]: nodes, link directions (serialisation, queue, propagation, loss), delay
//!   segments, shared media (the 802.11 DCF) and routes;
//! - [`topology`]: builders that turn a scenario's network into the network model (the
//!   dumbbell, `[[links]]` with `[[wifi]]`, the `[wireless]` line);
//! - [`tcp`]: sender (SACK scoreboard, RFC 6675 and RACK loss detection, PRR, RTO, rate
//!   sampling, pacing) and receiver;
//! - [`cc`]: the congestion-control trait and one file per algorithm;
//! - [`scenario`]: the validated configuration and its units;
//! - [`endpoint`]: a TCP flow's sender and receiver with their timers, as every run loop
//!   drives them (the send loop, timer, ACK and data handlers, in one place);
//! - [`sim`]: the one run loop that ties them together, for every network;
//! - [`output`]: what a run reports;
//! - [`limits`]: the memory a run needs, estimated from the scenario before it runs.
//! `docs/architecture.md` follows a packet through these layers.

pub mod cc;
pub mod endpoint;
pub mod engine;
pub mod limits;
pub mod net;
pub mod output;
pub mod scenario;
pub mod sim;
pub mod tcp;
pub mod topology;
pub mod workload;


// The layers' modules under their short names, as the code uses them.
pub use engine::{event, rng, time};
pub use output::{metrics, stats};
pub use scenario::units;

/// Version of the simulation model: what a given scenario and seed produce.
///
/// Bump it with any change that alters any result of an existing scenario and seed (a
/// different number in a run's summary, time series or algorithm events, `wall_seconds`
/// aside): a fixed bug, a new default, a changed algorithm or link model. Do not bump it for
/// pure speed-ups or refactors that keep every result bit-identical. Stored sweep runs are
/// keyed by it (Python `ccsim.sweep`), so a bump makes the next sweep rerun every run instead
/// of reusing results computed by the older model. `validation/identity/check.py` holds the
/// hashes of every existing scenario's results: a bump goes with re-recording them, in the same
/// commit, with the reason.
pub const MODEL_VERSION: u32 = 3;

pub use scenario::{Scenario, ScenarioError};
pub use sim::run;
