//! Parsing of the scenario format's units. Every conversion from text to numbers lives here.
//!
//! Rates are decimal bits per second (`10Mbps` = 10^7 bit/s); times are `ns`, `us`, `ms`, `s`;
//! sizes are `B`, `KB`, `MB`, `GB` (decimal), `KiB`, `MiB`, `GiB` (binary) or `pkt`. A number
//! is decimal, with an optional sign, fraction and exponent (`1.5e3ms`).
//!
//! Every parser tells apart text that is not a number with an accepted unit
//! ([`UnitError::Malformed`]) from a number the quantity cannot take: below zero
//! ([`UnitError::Negative`]), zero where only a positive value makes sense
//! ([`UnitError::NotPositive`]), a fraction of a packet ([`UnitError::Fraction`]), or beyond
//! the quantity's range ([`UnitError::OutOfRange`]; the ranges are the constants below).

use crate::time::Time;

/// Why a quantity was rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnitError {
    /// Not a number followed by one of the accepted units.
    Malformed,
    /// A number below zero.
    Negative,
    /// Zero or below, for a quantity that must be positive.
    NotPositive,
    /// A fraction of a packet.
    Fraction,
    /// A number beyond the quantity's range.
    OutOfRange,
}

/// Rates: 1 bit/s to 10 Tbit/s.
pub const MIN_RATE_BPS: u64 = 1;
pub const MAX_RATE_BPS: u64 = 10_000_000_000_000;
/// Times: at most 10^9 s (fields have their own, narrower ranges).
pub const MAX_TIME_NS: Time = 1_000_000_000_000_000_000;
/// Sizes in bytes: at most 10^15 B (1000000GB).
pub const MAX_BYTES: u64 = 1_000_000_000_000_000;
/// Sizes in packets: at most 10^9.
pub const MAX_PKTS: u64 = 1_000_000_000;
/// Multiples of the bandwidth-delay product: at most 1000.
pub const MAX_BDP: f64 = 1000.0;

/// The leading decimal number of `s` (sign, digits, fraction, exponent) and the rest, trimmed.
/// None if `s` does not start with a number. The number may be infinite (`1e999`).
fn split_number(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let b = s.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let mut digits = 0;
    while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.') {
        digits += b[i].is_ascii_digit() as usize;
        i += 1;
    }
    if digits == 0 {
        return None;
    }
    // An exponent only if digits follow: "1e9s" is 1e9 seconds.
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        let mut j = i + 1;
        if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
            j += 1;
        }
        if j < b.len() && b[j].is_ascii_digit() {
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            i = j;
        }
    }
    let (num, unit) = s.split_at(i);
    let v: f64 = num.parse().ok()?;
    Some((v, unit.trim()))
}

/// A whole string that is a decimal number (as [`split_number`] reads it), or None.
pub fn parse_number(s: &str) -> Option<f64> {
    match split_number(s)? {
        (v, "") => Some(v),
        _ => None,
    }
}

/// Parse a rate such as "10Mbps" into bits per second, from [`MIN_RATE_BPS`] to [`MAX_RATE_BPS`].
pub fn parse_rate(s: &str) -> Result<u64, UnitError> {
    let (v, unit) = split_number(s).ok_or(UnitError::Malformed)?;
    let mult = match unit {
        "bps" => 1.0,
        "kbps" | "Kbps" => 1e3,
        "Mbps" => 1e6,
        "Gbps" => 1e9,
        _ => return Err(UnitError::Malformed),
    };
    if v <= 0.0 {
        return Err(UnitError::NotPositive);
    }
    let bps = (v * mult).round();
    if !(bps >= MIN_RATE_BPS as f64 && bps <= MAX_RATE_BPS as f64) {
        return Err(UnitError::OutOfRange);
    }
    Ok(bps as u64)
}

/// Parse a time such as "20ms" into nanoseconds, from 0 to [`MAX_TIME_NS`].
pub fn parse_time(s: &str) -> Result<Time, UnitError> {
    let (v, unit) = split_number(s).ok_or(UnitError::Malformed)?;
    let mult = match unit {
        "ns" => 1.0,
        "us" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        _ => return Err(UnitError::Malformed),
    };
    if v < 0.0 {
        return Err(UnitError::Negative);
    }
    let ns = (v * mult).round();
    if ns > MAX_TIME_NS as f64 {
        return Err(UnitError::OutOfRange);
    }
    Ok(ns as Time)
}

/// A queue or transfer size as written in a scenario.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Size {
    Packets(u64),
    Bytes(u64),
    /// A multiple of the bandwidth-delay product (bottleneck rate x base RTT).
    Bdp(f64),
}

/// Parse a size: bytes (at most [`MAX_BYTES`]), and if allowed whole packets (at most
/// [`MAX_PKTS`]) or a multiple of the BDP (at most [`MAX_BDP`]). Zero is returned as such: the
/// fields decide whether they take it.
pub fn parse_size(s: &str, allow_pkt: bool, allow_bdp: bool) -> Result<Size, UnitError> {
    let (v, unit) = split_number(s).ok_or(UnitError::Malformed)?;
    enum Kind {
        Pkt,
        Bdp,
        Bytes(f64),
    }
    let kind = match unit {
        "pkt" | "pkts" if allow_pkt => Kind::Pkt,
        "bdp" | "BDP" if allow_bdp => Kind::Bdp,
        "B" => Kind::Bytes(1.0),
        "KB" | "kB" => Kind::Bytes(1e3),
        "MB" => Kind::Bytes(1e6),
        "GB" => Kind::Bytes(1e9),
        "KiB" => Kind::Bytes(1024.0),
        "MiB" => Kind::Bytes(1024.0 * 1024.0),
        "GiB" => Kind::Bytes(1024.0 * 1024.0 * 1024.0),
        _ => return Err(UnitError::Malformed),
    };
    if v < 0.0 {
        return Err(UnitError::Negative);
    }
    match kind {
        Kind::Pkt => {
            if v > MAX_PKTS as f64 {
                return Err(UnitError::OutOfRange);
            }
            if v.fract() != 0.0 {
                return Err(UnitError::Fraction);
            }
            Ok(Size::Packets(v as u64))
        }
        Kind::Bdp => {
            if v > MAX_BDP {
                return Err(UnitError::OutOfRange);
            }
            Ok(Size::Bdp(v))
        }
        Kind::Bytes(mult) => {
            let b = (v * mult).round();
            if b > MAX_BYTES as f64 {
                return Err(UnitError::OutOfRange);
            }
            Ok(Size::Bytes(b as u64))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{MS, SEC, US};
    use UnitError::*;

    #[test]
    fn rates() {
        assert_eq!(parse_rate("10Mbps"), Ok(10_000_000));
        assert_eq!(parse_rate("1.5Gbps"), Ok(1_500_000_000));
        assert_eq!(parse_rate("64kbps"), Ok(64_000));
        assert_eq!(parse_rate("1e7bps"), Ok(10_000_000));
        assert_eq!(parse_rate("10000Gbps"), Ok(MAX_RATE_BPS));
        assert_eq!(parse_rate("1bps"), Ok(1));
        assert_eq!(parse_rate("10Mbs"), Err(Malformed));
        assert_eq!(parse_rate("Mbps"), Err(Malformed));
        assert_eq!(parse_rate("nanMbps"), Err(Malformed));
        assert_eq!(parse_rate("infMbps"), Err(Malformed));
        assert_eq!(parse_rate("0Mbps"), Err(NotPositive));
        assert_eq!(parse_rate("-5Mbps"), Err(NotPositive));
        assert_eq!(parse_rate("0.4bps"), Err(OutOfRange));
        assert_eq!(parse_rate("100000Gbps"), Err(OutOfRange));
        assert_eq!(parse_rate("1e999Gbps"), Err(OutOfRange));
    }

    #[test]
    fn times() {
        assert_eq!(parse_time("20ms"), Ok(20 * MS));
        assert_eq!(parse_time("1.5s"), Ok(1500 * MS));
        assert_eq!(parse_time("250us"), Ok(250 * US));
        assert_eq!(parse_time("100s"), Ok(100 * SEC));
        assert_eq!(parse_time("0s"), Ok(0));
        assert_eq!(parse_time("1e9s"), Ok(MAX_TIME_NS));
        assert_eq!(parse_time("2.5e-3s"), Ok(2500 * US));
        assert_eq!(parse_time("20"), Err(Malformed));
        assert_eq!(parse_time("1e9"), Err(Malformed));
        assert_eq!(parse_time("1es"), Err(Malformed));
        assert_eq!(parse_time("-1ms"), Err(Negative));
        assert_eq!(parse_time("-20xs"), Err(Malformed));
        assert_eq!(parse_time("1.1e9s"), Err(OutOfRange));
        assert_eq!(parse_time("1e999s"), Err(OutOfRange));
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("50pkt", true, true), Ok(Size::Packets(50)));
        assert_eq!(parse_size("2bdp", true, true), Ok(Size::Bdp(2.0)));
        assert_eq!(parse_size("64KiB", true, true), Ok(Size::Bytes(65536)));
        assert_eq!(parse_size("1.5MB", true, true), Ok(Size::Bytes(1_500_000)));
        assert_eq!(parse_size("10MB", false, false), Ok(Size::Bytes(10_000_000)));
        assert_eq!(parse_size("0pkt", true, true), Ok(Size::Packets(0)));
        assert_eq!(parse_size("1000000GB", false, false), Ok(Size::Bytes(MAX_BYTES)));
        assert_eq!(parse_size("50pkt", false, false), Err(Malformed));
        assert_eq!(parse_size("2bdp", true, false), Err(Malformed));
        assert_eq!(parse_size("50 packets", true, true), Err(Malformed));
        assert_eq!(parse_size("nanbdp", true, true), Err(Malformed));
        assert_eq!(parse_size("1.5pkt", true, true), Err(Fraction));
        assert_eq!(parse_size("-1pkt", true, true), Err(Negative));
        assert_eq!(parse_size("-2bdp", true, true), Err(Negative));
        assert_eq!(parse_size("-10MB", false, false), Err(Negative));
        assert_eq!(parse_size("2000000000pkt", true, true), Err(OutOfRange));
        assert_eq!(parse_size("1001bdp", true, true), Err(OutOfRange));
        assert_eq!(parse_size("1e30GB", false, false), Err(OutOfRange));
    }

    #[test]
    fn numbers() {
        assert_eq!(parse_number("500"), Some(500.0));
        assert_eq!(parse_number(" 2.5e3 "), Some(2500.0));
        assert_eq!(parse_number("nan"), None);
        assert_eq!(parse_number("inf"), None);
        assert_eq!(parse_number("5x"), None);
        assert_eq!(parse_number(""), None);
    }
}
