//! Integer nanosecond simulation time.

/// Simulation time or duration in nanoseconds.
pub type Time = u64;

pub const NS: Time = 1;
pub const US: Time = 1_000;
pub const MS: Time = 1_000_000;
pub const SEC: Time = 1_000_000_000;

/// Time to serialise `bytes` at `rate_bps` bits per second, rounded up to a whole nanosecond.
#[inline]
pub fn tx_time(bytes: u64, rate_bps: u64) -> Time {
    // bytes * 8e9 / rate; u64 unless the product could overflow (over 2.3 GB at once).
    if bytes < (1 << 31) {
        (bytes * 8 * SEC).div_ceil(rate_bps)
    } else {
        (bytes as u128 * 8 * SEC as u128).div_ceil(rate_bps as u128) as Time
    }
}

#[inline]
pub fn to_secs(t: Time) -> f64 {
    t as f64 / SEC as f64
}

#[inline]
pub fn to_ms(t: Time) -> f64 {
    t as f64 / MS as f64
}

#[inline]
pub fn to_us(t: Time) -> u64 {
    t / US
}
