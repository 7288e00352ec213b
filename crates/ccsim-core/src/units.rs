//! Parsing of the scenario format's units. Every conversion from text to numbers lives here.
//!
//! Rates are decimal bits per second (`10Mbps` = 10^7 bit/s); times are `ns`, `us`, `ms`, `s`;
//! sizes are `B`, `KB`, `MB`, `GB` (decimal), `KiB`, `MiB`, `GiB` (binary) or `pkt`.

use crate::time::Time;

fn split_number(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let idx = s
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_digit() || *c == '.' || *c == '-' || *c == '+'))
        .map(|(i, _)| i)
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(idx);
    if num.is_empty() {
        return None;
    }
    let v: f64 = num.parse().ok()?;
    if !v.is_finite() {
        return None;
    }
    Some((v, unit.trim()))
}

/// Parse a rate such as "10Mbps" into bits per second.
pub fn parse_rate(s: &str) -> Option<u64> {
    let (v, unit) = split_number(s)?;
    let mult = match unit {
        "bps" => 1.0,
        "kbps" | "Kbps" => 1e3,
        "Mbps" => 1e6,
        "Gbps" => 1e9,
        _ => return None,
    };
    let bps = (v * mult).round();
    if bps < 1.0 || bps > 1e13 {
        return None;
    }
    Some(bps as u64)
}

/// Parse a time such as "20ms" into nanoseconds.
pub fn parse_time(s: &str) -> Option<Time> {
    let (v, unit) = split_number(s)?;
    let mult = match unit {
        "ns" => 1.0,
        "us" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        _ => return None,
    };
    let ns = (v * mult).round();
    if !(0.0..=1e18).contains(&ns) {
        return None;
    }
    Some(ns as Time)
}

/// A queue or transfer size as written in a scenario.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Size {
    Packets(u64),
    Bytes(u64),
    /// A multiple of the bandwidth-delay product (bottleneck rate x base RTT).
    Bdp(f64),
}

pub fn parse_size(s: &str, allow_pkt: bool, allow_bdp: bool) -> Option<Size> {
    let st = s.trim();
    if allow_bdp {
        if let Some(num) = st.strip_suffix("bdp").or_else(|| st.strip_suffix("BDP")) {
            let v: f64 = num.trim().parse().ok()?;
            if !(v.is_finite() && v >= 0.0) {
                return None;
            }
            return Some(Size::Bdp(v));
        }
    }
    let (v, unit) = split_number(st)?;
    if v < 0.0 {
        return None;
    }
    let mult = match unit {
        "pkt" | "pkts" if allow_pkt => {
            if v.fract() != 0.0 {
                return None;
            }
            return Some(Size::Packets(v as u64));
        }
        "B" => 1.0,
        "KB" | "kB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    Some(Size::Bytes((v * mult).round() as u64))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{MS, SEC, US};

    #[test]
    fn rates() {
        assert_eq!(parse_rate("10Mbps"), Some(10_000_000));
        assert_eq!(parse_rate("1.5Gbps"), Some(1_500_000_000));
        assert_eq!(parse_rate("64kbps"), Some(64_000));
        assert_eq!(parse_rate("10Mbs"), None);
        assert_eq!(parse_rate("Mbps"), None);
        assert_eq!(parse_rate("0Mbps"), None);
    }

    #[test]
    fn times() {
        assert_eq!(parse_time("20ms"), Some(20 * MS));
        assert_eq!(parse_time("1.5s"), Some(1500 * MS));
        assert_eq!(parse_time("250us"), Some(250 * US));
        assert_eq!(parse_time("100s"), Some(100 * SEC));
        assert_eq!(parse_time("20"), None);
        assert_eq!(parse_time("-1ms"), None);
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("50pkt", true, true), Some(Size::Packets(50)));
        assert_eq!(parse_size("2bdp", true, true), Some(Size::Bdp(2.0)));
        assert_eq!(parse_size("64KiB", true, true), Some(Size::Bytes(65536)));
        assert_eq!(parse_size("1.5MB", true, true), Some(Size::Bytes(1_500_000)));
        assert_eq!(parse_size("10MB", false, false), Some(Size::Bytes(10_000_000)));
        assert_eq!(parse_size("50pkt", false, false), None);
        assert_eq!(parse_size("2bdp", true, false), None);
        assert_eq!(parse_size("50 packets", true, true), None);
        assert_eq!(parse_size("1.5pkt", true, true), None);
    }
}
