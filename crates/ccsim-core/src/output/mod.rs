//! What a run reports: the summary (per flow, per link direction, the dumbbell's bottleneck;
//! serialised as `ccsim run --json`), the long-format time series of flows and link queues,
//! the algorithm events ([`metrics`]), and the statistics they are computed with: running
//! means and a log-linear histogram for percentiles ([`stats`]); the `[wireless]` line's
//! summary, per flow and station ([`wireless`]). Every record and column table is declared
//! through [`schema`], which keeps the output schema (names, types, units, meaning) in one place.

pub mod metrics;
pub mod pcap;
pub mod schema;
pub mod stats;
pub mod wireless;
