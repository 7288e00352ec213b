//! Linux's coarse clocks as the classic loss-based algorithms (westwood, htcp, bic) read them.
//!
//! The kernel is taken to run at HZ = 1000 (one jiffy = 1 ms, the common distribution
//! setting; cubic.rs assumes the same). `jiffies` starts at Linux's `INITIAL_JIFFIES`
//! (-300 s, so that it wraps five minutes after boot) and every comparison is a wrapping
//! 32-bit difference, as in the kernel: an algorithm that treats a zero timestamp as "unset"
//! (H-TCP's `undo_last_cong`) then sees what it sees in Linux.

use crate::time::{Time, MS};

/// Linux `HZ`.
pub const HZ: u32 = 1000;

/// Linux `INITIAL_JIFFIES`: `(unsigned long)(unsigned int)(-300 * HZ)`.
pub const INITIAL_JIFFIES: u32 = (-300i64 * HZ as i64) as u32;

/// Linux `tcp_jiffies32` at simulation time `now` (ns).
#[inline]
pub fn tcp_jiffies32(now: Time) -> u32 {
    ((now / MS) as u32).wrapping_add(INITIAL_JIFFIES)
}

/// Linux `usecs_to_jiffies` for HZ = 1000 (`_usecs_to_jiffies`: rounds up).
#[inline]
pub fn usecs_to_jiffies(us: u32) -> u32 {
    us.div_ceil(1000)
}

/// Linux `msecs_to_jiffies` for HZ = 1000.
#[inline]
pub const fn msecs_to_jiffies(ms: u32) -> u32 {
    ms
}

/// An `AckSample::rtt` (ns, -1 = none) as Linux's `ack_sample.rtt_us` (s32 microseconds).
#[inline]
pub fn sample_rtt_us(rtt_ns: i64) -> i64 {
    if rtt_ns < 0 {
        -1
    } else {
        rtt_ns / 1000
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jiffies_start_at_initial_jiffies_and_round_rtts_up() {
        assert_eq!(tcp_jiffies32(0), 4_294_667_296);
        assert_eq!(tcp_jiffies32(300_000 * MS), 0);
        assert_eq!(tcp_jiffies32(1_999_999), INITIAL_JIFFIES.wrapping_add(1));
        assert_eq!(usecs_to_jiffies(40_000), 40);
        assert_eq!(usecs_to_jiffies(40_001), 41);
        assert_eq!(usecs_to_jiffies(1), 1);
        assert_eq!(usecs_to_jiffies(0), 0);
        assert_eq!(sample_rtt_us(-1), -1);
        assert_eq!(sample_rtt_us(40_000_999), 40_000);
    }
}
