//! Seeded random streams. One scenario seed; each consumer gets its own independent stream,
//! derived from (seed, stream id) with SplitMix64, so adding a consumer never shifts another's
//! numbers. ChaCha8 is a specified algorithm: identical output on every platform.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

pub type Rng = ChaCha8Rng;

/// Stream identifiers. Flow-specific streams add the flow index.
pub mod stream {
    pub const BOTTLENECK_LOSS: u64 = 1;
    pub const ACK_LOSS: u64 = 2;
    pub const FLOW_BASE: u64 = 1 << 20;
    /// Random loss of the directions of `[[links]]`: `LINK_BASE + 2 * link + direction`.
    pub const LINK_BASE: u64 = 1 << 40;
    /// The Wi-Fi media of `[[wifi]]`: `MEDIUM_BASE + 2 * line` (backoffs, frame errors) and
    /// `+ 1` (background frames).
    pub const MEDIUM_BASE: u64 = 1 << 41;
    /// Queue disciplines that draw (RED, PIE, ...): `QDISC_BASE + direction index`.
    pub const QDISC_BASE: u64 = 1 << 42;
    /// `[[workloads]]` entry k: its arrivals from `WORKLOAD_BASE + 2k`, its flow sizes from
    /// `WORKLOAD_BASE + 2k + 1` (its flows' own streams are flow streams of their numbers).
    pub const WORKLOAD_BASE: u64 = 1 << 43;
    pub const FLOW_STRIDE: u64 = 16;
    /// Per-flow sub-streams (offset within a flow's block).
    pub const CC: u64 = 0;
    pub const CLOCK: u64 = 1;
    /// A wired UDP flow's on/off periods.
    pub const ONOFF: u64 = 2;
}

fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

pub fn derive(seed: u64, stream_id: u64) -> Rng {
    let a = splitmix64(seed ^ splitmix64(stream_id));
    let b = splitmix64(a ^ 0xD1B5_4A32_D192_ED03);
    let c = splitmix64(b);
    let d = splitmix64(c);
    let mut key = [0u8; 32];
    for (i, w) in [a, b, c, d].iter().enumerate() {
        key[i * 8..i * 8 + 8].copy_from_slice(&w.to_le_bytes());
    }
    ChaCha8Rng::from_seed(key)
}

pub fn flow_stream(seed: u64, flow: usize, sub: u64) -> Rng {
    derive(seed, stream::FLOW_BASE + flow as u64 * stream::FLOW_STRIDE + sub)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng as _;

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let a: Vec<u64> = (0..4).map({ let mut r = derive(7, 1); move |_| r.gen() }).collect();
        let b: Vec<u64> = (0..4).map({ let mut r = derive(7, 1); move |_| r.gen() }).collect();
        let c: Vec<u64> = (0..4).map({ let mut r = derive(7, 2); move |_| r.gen() }).collect();
        let d: Vec<u64> = (0..4).map({ let mut r = derive(8, 1); move |_| r.gen() }).collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_ne!(a, d);
    }
}
