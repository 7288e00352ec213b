//! Short-flow workloads (`[[workloads]]`): flow sizes drawn from an empirical CDF, Poisson
//! arrivals, and the ideal flow-completion time a flow's slowdown is measured against.
//!
//! A CDF is a text of lines `SIZE_BYTES CUMULATIVE_PERCENT` (blank lines and `#` comments
//! allowed), sizes and percentages non-decreasing, the last percentage 100. It is read
//! piecewise linearly: a uniform draw u in [0, 100) falls between two points and the size is
//! interpolated between theirs (below the first point's percentage, the first point's size).
//! Two are built in, shipped with their sources in `crates/ccsim-core/data/workloads/`:
//! `websearch` (DCTCP, Alizadeh et al. 2010) and `hadoop` (Facebook Hadoop, Roy et al. 2015).

use crate::time::Time;
use rand::Rng as _;

/// The built-in size distributions: (name, CDF text, source).
pub const BUILTINS: &[(&str, &str, &str)] = &[
    (
        "websearch",
        include_str!("../data/workloads/websearch.cdf"),
        "web search (DCTCP paper, Alizadeh et al., SIGCOMM 2010), as tabulated in the HPCC artifact (traffic_gen/WebSearch_distribution.txt)",
    ),
    (
        "hadoop",
        include_str!("../data/workloads/hadoop.cdf"),
        "Facebook Hadoop (Roy et al., SIGCOMM 2015), as tabulated in the HPCC artifact (traffic_gen/FbHdp_distribution.txt)",
    ),
];

/// The CDF text of built-in `name`.
pub fn builtin(name: &str) -> Option<&'static str> {
    BUILTINS.iter().find(|b| b.0 == name).map(|b| b.1)
}

/// An empirical flow-size distribution: points (size in bytes, cumulative percent).
#[derive(Debug, Clone, PartialEq)]
pub struct Cdf {
    pub points: Vec<(f64, f64)>,
}

impl Cdf {
    /// Parse a CDF text. The error says which line and why (the caller names the file).
    pub fn parse(text: &str) -> Result<Cdf, String> {
        let mut points: Vec<(f64, f64)> = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let n = i + 1;
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields.len() != 2 {
                return Err(format!("line {n}: {line:?} is not two numbers; accepted: lines \"SIZE_BYTES CUMULATIVE_PERCENT\""));
            }
            let (Ok(x), Ok(p)) = (fields[0].parse::<f64>(), fields[1].parse::<f64>()) else {
                return Err(format!("line {n}: {line:?} is not two numbers; accepted: lines \"SIZE_BYTES CUMULATIVE_PERCENT\""));
            };
            if !x.is_finite() || !(0.0..=1e15).contains(&x) {
                return Err(format!("line {n}: size {} is out of range; accepted: a size in bytes from 0 to 1e15", fields[0]));
            }
            if !p.is_finite() || !(0.0..=100.0).contains(&p) {
                return Err(format!("line {n}: percentage {} is out of range; accepted: a cumulative percentage from 0 to 100", fields[1]));
            }
            if let Some(&(px, pp)) = points.last() {
                if x < px || p < pp {
                    return Err(format!(
                        "line {n}: ({} B, {}%) comes after ({px} B, {pp}%): the CDF is not monotonic; accepted: sizes and percentages that never decrease",
                        fields[0], fields[1]
                    ));
                }
            }
            points.push((x, p));
        }
        let Some(&(_, last)) = points.last() else {
            return Err("no points; accepted: lines \"SIZE_BYTES CUMULATIVE_PERCENT\" ending at 100".into());
        };
        if last != 100.0 {
            return Err(format!("the last point is at {last}%, the CDF does not reach 100%; accepted: a CDF whose last percentage is 100"));
        }
        if points.iter().all(|&(x, _)| x < 1.0) {
            return Err("every size is below 1 byte; accepted: sizes in bytes".into());
        }
        Ok(Cdf { points })
    }

    /// Mean flow size in bytes of the piecewise-linear reading (a point mass at the first
    /// point for its percentage).
    pub fn mean(&self) -> f64 {
        let (x0, p0) = self.points[0];
        let mut m = p0 / 100.0 * x0;
        for w in self.points.windows(2) {
            let ((xa, pa), (xb, pb)) = (w[0], w[1]);
            m += (pb - pa) / 100.0 * (xa + xb) / 2.0;
        }
        m
    }

    /// The size at cumulative percentage `q` in [0, 100) (the inverse of the CDF).
    pub fn quantile(&self, q: f64) -> f64 {
        let (x0, p0) = self.points[0];
        if q < p0 {
            return x0;
        }
        for w in self.points.windows(2) {
            let ((xa, pa), (xb, pb)) = (w[0], w[1]);
            if q < pb {
                return if pb > pa { xa + (xb - xa) * (q - pa) / (pb - pa) } else { xb };
            }
        }
        self.points.last().unwrap().0
    }

    /// One flow size in bytes (at least 1), from a uniform draw of `rng`.
    pub fn sample(&self, rng: &mut crate::rng::Rng) -> u64 {
        let u: f64 = rng.gen::<f64>() * 100.0;
        (self.quantile(u).round() as u64).max(1)
    }
}

/// How a workload's flows arrive.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Arrivals {
    /// Offered load as a fraction of `link`'s rate: flows per second = load x rate / (8 x mean size).
    Load(f64),
    /// Flows per second.
    Rate(f64),
}

/// One `[[workloads]]` entry, resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkloadConfig {
    pub cc: String,
    pub params: crate::cc::Params,
    pub tcp: crate::tcp::TcpConfig,
    /// The size distribution and its name (a built-in's, or the file's as given).
    pub cdf: Cdf,
    pub sizes_name: String,
    pub arrivals: Arrivals,
    /// Flows per second (resolved from `load` against the link's rate, or as given).
    pub flows_per_s: f64,
    /// The link whose rate `load` refers to (the dumbbell's bottleneck: "router->receiver").
    pub link: Option<String>,
    /// The link's rate (for `load`; the bottleneck's on a dumbbell).
    pub link_rate_bps: Option<u64>,
    /// Arrivals from `start` until `stop`.
    pub start: Time,
    pub stop: Time,
    /// Dumbbell: the workload's own sender host's access link.
    pub access_rate_bps: u64,
    pub access_delay: Time,
    /// `[[links]]`: the node path of its flows (both ends included).
    pub path: Vec<u32>,
}

/// The size buckets the summary reports FCT and slowdown by: (label, upper bound in bytes,
/// exclusive).
pub const BUCKETS: &[(&str, u64)] = &[("<100KB", 100_000), ("100KB-10MB", 10_000_000), (">10MB", u64::MAX)];

/// What the ideal flow-completion time of a path needs: the slowest direction's rate, the base
/// round trip (propagation both ways, plus one ACK's serialisation on every direction with a
/// rate the ACKs cross), and the serialisation per byte on the other directions with a rate
/// the data crosses (each segment is stored and forwarded there).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IdealPath {
    pub rate_bps: u64,
    /// Nanoseconds.
    pub rtt: f64,
    /// Nanoseconds per byte over the data's other directions with a rate.
    pub other_ns_per_byte: f64,
    pub mss: u32,
    pub iw: u32,
}

/// The flow-completion time (nanoseconds) of a `size`-byte transfer alone on an empty `path`,
/// by ideal slow start: round k sends min(iw x 2^k, what is left) segments back to back at the
/// slowest rate; round k + 1 starts when the first segment of round k is acknowledged (its
/// serialisation at the slowest rate and on the other directions, plus the base RTT, later),
/// unless round k still occupies the slowest link then, in which case the rest streams at its
/// rate. The transfer completes when the last segment's ACK arrives (the last segment's own
/// serialisation on the other directions counted, none of the earlier ones'). No handshake, no
/// delayed-ACK wait, no loss.
pub fn ideal_fct(size: u64, p: &IdealPath) -> f64 {
    let mss = p.mss as u64;
    let n = size.div_ceil(mss).max(1);
    let per_bit = 1e9 / p.rate_bps as f64;
    let tp = (mss + crate::tcp::HEADER_BYTES as u64) as f64 * 8.0 * per_bit;
    let last_bytes = (size - (n - 1) * mss + crate::tcp::HEADER_BYTES as u64) as f64;
    let last = last_bytes * 8.0 * per_bit;
    let tail = last + p.rtt + last_bytes * p.other_ns_per_byte;
    let round = tp + p.rtt + (mss + crate::tcp::HEADER_BYTES as u64) as f64 * p.other_ns_per_byte;
    let (mut t, mut sent, mut w) = (0.0f64, 0u64, p.iw.max(1) as u64);
    loop {
        let b = w.min(n - sent);
        if sent + b == n {
            return t + (b - 1) as f64 * tp + tail;
        }
        if b as f64 * tp >= round {
            return t + (n - sent - 1) as f64 * tp + tail;
        }
        sent += b;
        t += round;
        w = w.saturating_mul(2);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_parse_and_their_means() {
        let ws = Cdf::parse(builtin("websearch").unwrap()).unwrap();
        assert!((ws.mean() - 1_711_250.0).abs() < 1.0);
        let hd = Cdf::parse(builtin("hadoop").unwrap()).unwrap();
        assert!((hd.mean() - 120_420.75).abs() < 1.0);
        assert_eq!(ws.quantile(0.0), 0.0);
        assert_eq!(ws.quantile(7.5), 5000.0);
    }

    #[test]
    fn bad_cdfs_say_why() {
        assert!(Cdf::parse("0 0\n100 50\n").unwrap_err().contains("does not reach 100%"));
        assert!(Cdf::parse("0 0\n100 60\n50 100\n").unwrap_err().contains("not monotonic"));
        assert!(Cdf::parse("0 0\n100 60\n200 50\n300 100").unwrap_err().contains("line 3"));
        assert!(Cdf::parse("").unwrap_err().contains("no points"));
        assert!(Cdf::parse("1 x\n").unwrap_err().contains("not two numbers"));
        assert!(Cdf::parse("# c\n\n1000 100 # all\n").is_ok());
    }

    #[test]
    fn ideal_fct_rounds() {
        // 10 Mbps, 1448 B segments (1500 B on the wire: 1.2 ms), RTT 20 ms, IW 10.
        let p = IdealPath { rate_bps: 10_000_000, rtt: 20e6, other_ns_per_byte: 0.0, mss: 1448, iw: 10 };
        // One segment: 1.2 ms + 20 ms.
        assert!((ideal_fct(1448, &p) - 21.2e6).abs() < 1.0);
        // 10 segments: one round.
        assert!((ideal_fct(14_480, &p) - (12e6 + 20e6)).abs() < 1.0);
        // 11 segments: a second round of one, 21.2 ms after the first started.
        assert!((ideal_fct(14_481, &p) - (21.2e6 + 0.0 + (1.0 + 52.0) * 8.0 * 100.0 + 20e6)).abs() < 1.0);
        // Large: streams after the pipe fills; close to size / rate + a few RTTs.
        let big = ideal_fct(100_000_000, &p);
        assert!(big > 100e6 * 8.0 / 10e6 * 1e9 && big < 100e6 * 8.0 / 10e6 * 1e9 * 1.1);
    }
}
