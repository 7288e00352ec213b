//! The emulator's configuration: JSON written by the Python side (`ccsim.emulate`), which
//! derives it from a validated scenario. Unknown keys are errors.

use serde::Deserialize;
use std::fmt;

/// One side of the emulated link: a persistent TUN device inside a named network namespace.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TunSpec {
    /// The namespace file, e.g. `/var/run/netns/ccsim-1234-s`.
    pub netns: String,
    /// The TUN device's name inside that namespace.
    pub device: String,
}

/// A flow: the sender's port identifies its packets in both directions.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    pub port: u16,
    /// The flow's own access delay, added to the bottleneck delay in both directions (ns).
    #[serde(default)]
    pub access_delay_ns: u64,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Packets read from this device go through the bottleneck (the data direction).
    pub sender: TunSpec,
    /// Packets read from this device take the reverse path (ACKs).
    pub receiver: TunSpec,
    pub rate_bps: u64,
    /// One-way propagation delay of the bottleneck (ns).
    pub delay_ns: u64,
    /// Drop-tail limit in waiting packets; at most one of the two limits is set.
    #[serde(default)]
    pub buffer_pkts: Option<u64>,
    /// Drop-tail limit in waiting bytes (IP packet bytes).
    #[serde(default)]
    pub buffer_bytes: Option<u64>,
    /// Random loss probability of data-carrying packets (TCP with payload, UDP).
    #[serde(default)]
    pub loss: f64,
    /// Random loss probability of pure ACKs on the reverse path.
    #[serde(default)]
    pub ack_loss: f64,
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// The devices' MTU: the largest packet either side can send.
    pub mtu: u32,
    #[serde(default)]
    pub flows: Vec<FlowSpec>,
    /// Start of the statistics window, CLOCK_MONOTONIC ns. Packets are forwarded from the
    /// moment the emulator attaches (handshakes happen before the window opens).
    pub start_ns: u64,
    /// End of the run: the emulator stops forwarding and returns (CLOCK_MONOTONIC ns).
    pub end_ns: u64,
    /// Interval of the queue-length samples in the statistics (ns; none if absent).
    #[serde(default)]
    pub sample_interval_ns: Option<u64>,
    /// Busy-wait instead of sleeping when the next hand-over is due within this many ns
    /// (0: always sleep in ppoll).
    #[serde(default)]
    pub spin_ns: u64,
    /// Run the event loop under SCHED_FIFO at this priority (1-99), if permitted.
    #[serde(default)]
    pub realtime_priority: Option<i32>,
}

fn default_seed() -> u64 {
    1
}

#[derive(Debug, Clone, PartialEq)]
pub struct ConfigError(pub String);

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConfigError {}

impl Config {
    pub fn from_json(s: &str) -> Result<Config, ConfigError> {
        let c: Config = serde_json::from_str(s).map_err(|e| ConfigError(format!("invalid emulator configuration: {e}")))?;
        c.check()?;
        Ok(c)
    }

    fn check(&self) -> Result<(), ConfigError> {
        let bad = |field: &str, what: String| Err(ConfigError(format!("{field}: {what}")));
        if self.rate_bps == 0 {
            return bad("rate_bps", "0 is out of range; accepted: a positive rate".into());
        }
        if !(68..=65535).contains(&self.mtu) {
            return bad("mtu", format!("{} is out of range; accepted: 68 to 65535", self.mtu));
        }
        if self.buffer_pkts.is_some() && self.buffer_bytes.is_some() {
            return bad("buffer_bytes", "set together with buffer_pkts; accepted: at most one limit".into());
        }
        for (name, p) in [("loss", self.loss), ("ack_loss", self.ack_loss)] {
            if !(0.0..=1.0).contains(&p) {
                return bad(name, format!("{p} is out of range; accepted: a probability in [0, 1]"));
            }
        }
        if self.end_ns <= self.start_ns {
            return bad("end_ns", "not after start_ns".into());
        }
        if self.sample_interval_ns == Some(0) {
            return bad("sample_interval_ns", "0 is out of range; accepted: a positive interval".into());
        }
        if let Some(p) = self.realtime_priority {
            if !(1..=99).contains(&p) {
                return bad("realtime_priority", format!("{p} is out of range; accepted: 1 to 99"));
            }
        }
        let mut ports: Vec<u16> = self.flows.iter().map(|f| f.port).collect();
        ports.sort_unstable();
        if let Some(w) = ports.windows(2).find(|w| w[0] == w[1]) {
            return bad("flows", format!("port {} appears twice; accepted: one port per flow", w[0]));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(extra: &str) -> String {
        format!(
            r#"{{"sender": {{"netns": "/var/run/netns/a", "device": "ccs0"}},
                "receiver": {{"netns": "/var/run/netns/b", "device": "ccr0"}},
                "rate_bps": 10000000, "delay_ns": 20000000, "mtu": 1500,
                "start_ns": 1, "end_ns": 2{extra}}}"#
        )
    }

    #[test]
    fn defaults() {
        let c = Config::from_json(&json("")).unwrap();
        assert_eq!((c.seed, c.loss, c.buffer_pkts, c.flows.len()), (1, 0.0, None, 0));
    }

    #[test]
    fn rejections_name_the_field() {
        let e = Config::from_json(&json(r#", "loss": 2.0"#)).unwrap_err().to_string();
        assert!(e.starts_with("loss: 2 is out of range"), "{e}");
        let e = Config::from_json(&json(r#", "bogus": 1"#)).unwrap_err().to_string();
        assert!(e.contains("unknown field `bogus`"), "{e}");
        let e = Config::from_json(&json(r#", "buffer_pkts": 5, "buffer_bytes": 5"#)).unwrap_err().to_string();
        assert!(e.starts_with("buffer_bytes:"), "{e}");
        let e = Config::from_json(&json(r#", "flows": [{"port": 7}, {"port": 7}]"#)).unwrap_err().to_string();
        assert!(e.starts_with("flows: port 7 appears twice"), "{e}");
    }
}
