//! Allocation-free summary statistics: running mean/min/max and a log-linear histogram for
//! percentiles (relative error below 1/64, about 1.6%).

#[derive(Debug, Clone, Default)]
pub struct Running {
    pub n: u64,
    pub sum: f64,
    pub min: f64,
    pub max: f64,
}

impl Running {
    pub fn add(&mut self, x: f64) {
        if self.n == 0 {
            self.min = x;
            self.max = x;
        } else {
            self.min = self.min.min(x);
            self.max = self.max.max(x);
        }
        self.n += 1;
        self.sum += x;
    }
    pub fn mean(&self) -> f64 {
        if self.n == 0 {
            f64::NAN
        } else {
            self.sum / self.n as f64
        }
    }
}

const SUB_BITS: u32 = 6;
const SUB: usize = 1 << SUB_BITS;
const BUCKETS: usize = (64 - SUB_BITS as usize + 1) * SUB;

/// Log-linear histogram of u64 values (e.g. nanoseconds). Values below 64 are exact; above,
/// each power of two is split into 64 linear sub-buckets (3,776 buckets in all).
///
/// Zeros are counted apart, and of the other buckets only the range between the lowest and the
/// highest one that received a value is stored. So an empty histogram holds no memory, a flow
/// whose RTT stays within one power of two holds at most 64 counters (512 bytes) instead of
/// all 3,776 (30 KB), and a queueing-delay histogram (mostly zeros, then delays of one or a
/// few serialisation times) does not store the empty buckets in between. The range grows when a
/// value falls outside it (at most once per bucket over a run, never on the common path);
/// quantiles are the same as with every bucket stored.
#[derive(Clone, Default)]
pub struct Histogram {
    /// Values equal to 0 (bucket 0).
    zeros: u64,
    /// Counts of buckets `lo .. lo + counts.len()` (all above bucket 0).
    counts: Vec<u64>,
    lo: u32,
    /// Where in `counts` the last value went (a hint for [`Histogram::prefetch`]; it may be
    /// off after the range grew downwards).
    last: u32,
    n: u64,
}

impl std::fmt::Debug for Histogram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Histogram(n={})", self.n)
    }
}

impl Histogram {
    #[inline]
    fn index(v: u64) -> usize {
        if v < SUB as u64 {
            return v as usize;
        }
        let e = 63 - v.leading_zeros(); // >= SUB_BITS
        let sub = ((v >> (e - SUB_BITS)) & (SUB as u64 - 1)) as usize;
        ((e - SUB_BITS + 1) as usize) * SUB + sub
    }

    /// Lower bound and width of bucket `i`.
    fn bounds(i: usize) -> (u64, u64) {
        if i < SUB {
            return (i as u64, 1);
        }
        let e = (i / SUB) as u32 + SUB_BITS - 1;
        let sub = (i % SUB) as u64;
        let width = 1u64 << (e - SUB_BITS);
        ((1u64 << e) + sub * width, width)
    }

    /// Widen the stored range to hold bucket `i` (outside it). The buffer grows by at least a
    /// quarter (so a range that creeps outwards is not copied on every new bucket) and at most
    /// to the range needed plus that quarter, not to a power of two.
    #[cold]
    #[inline(never)]
    fn widen(&mut self, i: usize) {
        debug_assert!(i < BUCKETS);
        let lo = self.lo as usize;
        let len = self.counts.len();
        let new_len = if len == 0 { 1 } else { len + if i < lo { lo - i } else { i + 1 - lo - len } };
        if new_len > self.counts.capacity() {
            let want = new_len.max(len + len / 4).max(8).min(BUCKETS);
            self.counts.reserve_exact(want - len);
        }
        if len == 0 {
            self.lo = i as u32;
            self.counts.push(0);
        } else if i < lo {
            self.counts.splice(0..0, std::iter::repeat(0).take(lo - i));
            self.lo = i as u32;
        } else {
            self.counts.resize(i - lo + 1, 0);
        }
    }

    /// Buckets stored (for memory accounting).
    pub fn stored_buckets(&self) -> usize {
        self.counts.len()
    }

    /// Prefetch the counter the last value went to (the next value, an RTT or a queueing
    /// delay like the last, likely goes to the same cache line; see
    /// [`crate::engine::prefetch`]).
    #[inline]
    pub fn prefetch(&self) {
        if let Some(c) = self.counts.get(self.last as usize) {
            crate::engine::prefetch::first(c);
        }
    }

    #[inline]
    pub fn add(&mut self, v: u64) {
        self.n += 1;
        if v == 0 {
            self.zeros += 1;
            return;
        }
        let i = Self::index(v);
        let mut k = i.wrapping_sub(self.lo as usize);
        if k >= self.counts.len() {
            self.widen(i);
            k = i - self.lo as usize;
        }
        self.counts[k] += 1;
        self.last = k as u32;
    }

    pub fn count(&self) -> u64 {
        self.n
    }

    /// The q-quantile (0..=1), as the midpoint of the bucket holding it. NaN when empty.
    pub fn quantile(&self, q: f64) -> f64 {
        if self.n == 0 {
            return f64::NAN;
        }
        let rank = ((q * self.n as f64).ceil() as u64).clamp(1, self.n);
        if self.zeros >= rank {
            return 0.0; // bucket 0: [0, 1), midpoint (1 - 1) / 2
        }
        let mut acc = self.zeros;
        for (k, &c) in self.counts.iter().enumerate() {
            acc += c;
            if acc >= rank {
                let (lo, w) = Self::bounds(self.lo as usize + k);
                return lo as f64 + (w as f64 - 1.0) / 2.0;
            }
        }
        unreachable!("rank within count")
    }
}

/// Jain's fairness index (sum x)^2 / (n sum x^2); 1 for an empty or all-zero set.
pub fn jain_index(xs: &[f64]) -> f64 {
    let n = xs.len() as f64;
    let s: f64 = xs.iter().sum();
    let s2: f64 = xs.iter().map(|x| x * x).sum();
    if xs.is_empty() || s2 == 0.0 {
        1.0
    } else {
        s * s / (n * s2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_quantiles_within_resolution() {
        let mut h = Histogram::default();
        for v in 1..=10_000u64 {
            h.add(v * 1000);
        }
        let p50 = h.quantile(0.5);
        let p95 = h.quantile(0.95);
        assert!((p50 / 5_000_000.0 - 1.0).abs() < 0.02, "{p50}");
        assert!((p95 / 9_500_000.0 - 1.0).abs() < 0.02, "{p95}");
        let mut small = Histogram::default();
        small.add(3);
        assert_eq!(small.quantile(0.95), 3.0);
    }

    /// The stored range gives the quantiles every bucket would: compared with a dense count
    /// of all 3,776 buckets, on values that widen the range downwards and upwards.
    #[test]
    fn stored_range_gives_the_quantiles_of_all_buckets() {
        let mut x: u64 = 7;
        for round in 0..50 {
            let mut h = Histogram::default();
            let mut dense = vec![0u64; BUCKETS];
            assert_eq!(h.stored_buckets(), 0);
            assert!(h.quantile(0.5).is_nan());
            let n = 1 + round * 37;
            for _ in 0..n {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let shift = (x >> 58) as u32; // 0..63: spread over many powers of two
                let v = if x % 5 == 0 { 0 } else { (x >> 11) >> shift };
                h.add(v);
                dense[Histogram::index(v)] += 1;
            }
            let stored = match dense[1..].iter().position(|&c| c > 0) {
                Some(first) => dense.iter().rposition(|&c| c > 0).unwrap() - first,
                None => 0,
            };
            assert_eq!(h.stored_buckets(), stored);
            for q in [0.0, 0.01, 0.25, 0.5, 0.95, 0.99, 1.0] {
                let rank = ((q * n as f64).ceil() as u64).clamp(1, n as u64);
                let mut acc = 0;
                let i = dense.iter().position(|&c| {
                    acc += c;
                    acc >= rank
                });
                let (lo, w) = Histogram::bounds(i.unwrap());
                assert_eq!(h.quantile(q), lo as f64 + (w as f64 - 1.0) / 2.0, "round {round} q {q}");
            }
        }
    }

    #[test]
    fn bucket_bounds_invert_index() {
        for v in [0u64, 1, 63, 64, 65, 127, 128, 1000, 123_456_789, u64::MAX / 3] {
            let (lo, w) = Histogram::bounds(Histogram::index(v));
            assert!(lo <= v && v < lo.saturating_add(w).max(lo + 1), "{v} -> [{lo}, +{w})");
        }
    }

    #[test]
    fn jain() {
        assert!((jain_index(&[5.0, 5.0]) - 1.0).abs() < 1e-12);
        assert!((jain_index(&[10.0, 0.0]) - 0.5).abs() < 1e-12);
        assert!((jain_index(&[1.0, 2.0, 3.0]) - 36.0 / 42.0).abs() < 1e-12);
    }
}
