//! A FIFO ring buffer of `Copy` values for the per-packet queues (a link's wire and waiting
//! queue, a delay segment's line, the event queue's same-instant FIFO).
//!
//! `std::collections::VecDeque` does the same job, but its `push_back` is compiled as an
//! out-of-line call (its growth path is inlined into it), and a link pushes every packet it
//! accepts: E1 spent 4% of its time in that call (perf, 2026-11-27). Here the push is a few
//! inline instructions and growth is a cold call. Capacity is a power of two, doubled when
//! full, so a ring is as large as the most entries it ever held at once, rounded up.

/// A growable FIFO ring of `Copy` values.
#[derive(Debug, Clone)]
pub struct Ring<T> {
    /// Storage; its length (the capacity) is 0 or a power of two. Slots outside the live
    /// range hold stale copies, never read.
    buf: Vec<T>,
    /// Index of the front entry.
    head: usize,
    len: usize,
}

impl<T> Default for Ring<T> {
    fn default() -> Self {
        Ring::new()
    }
}

impl<T> Ring<T> {
    pub const fn new() -> Self {
        Ring { buf: Vec::new(), head: 0, len: 0 }
    }
}

impl<T: Copy + Default> Ring<T> {
    /// A ring with room for at least `n` entries before it grows.
    pub fn with_capacity(n: usize) -> Self {
        let mut r = Ring::new();
        if n > 0 {
            r.buf.reserve_exact(n.next_power_of_two());
        }
        r
    }

    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Entries it can hold before it grows.
    pub fn capacity(&self) -> usize {
        self.buf.capacity()
    }

    #[inline(always)]
    fn mask(&self) -> usize {
        self.buf.len().wrapping_sub(1)
    }

    #[inline]
    pub fn push_back(&mut self, v: T) {
        if self.len == self.buf.len() {
            // The growth pads with a default value, not with `v`: a call that took `v` made
            // the compiler keep it on the stack across the call and copy it from there with
            // wider loads than the stores that put it there, which cannot take their data
            // from the store buffer and wait for all older stores to reach the cache (with
            // many flows, stores that miss: perf put 13% of a 10,000-flow run on this copy).
            self.grow();
        }
        let i = (self.head + self.len) & self.mask();
        self.buf[i] = v;
        self.len += 1;
    }

    #[inline]
    pub fn pop_front(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        let v = self.buf[self.head];
        self.len -= 1;
        // An emptied ring starts again at slot 0: a queue that is mostly empty (a host's
        // access link with many flows) keeps using its first cache line instead of cycling
        // through every slot it once needed, each gone cold by its turn (a store to a cold
        // line waits for it, and enough of them fill the store buffer).
        self.head = if self.len == 0 { 0 } else { (self.head + 1) & self.mask() };
        Some(v)
    }

    #[inline]
    pub fn front(&self) -> Option<&T> {
        if self.len == 0 {
            None
        } else {
            Some(&self.buf[self.head])
        }
    }

    #[inline]
    pub fn back(&self) -> Option<&T> {
        if self.len == 0 {
            None
        } else {
            Some(&self.buf[(self.head + self.len - 1) & self.mask()])
        }
    }

    /// The entry `k` places from the front.
    #[inline]
    pub fn get(&self, k: usize) -> Option<&T> {
        if k < self.len {
            Some(&self.buf[(self.head + k) & self.mask()])
        } else {
            None
        }
    }

    pub fn clear(&mut self) {
        self.head = 0;
        self.len = 0;
    }

    /// Front to back.
    pub fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        (0..self.len).map(move |k| &self.buf[(self.head + k) & self.mask()])
    }

    /// The number of leading entries for which `pred` holds (the entries must be partitioned:
    /// all that hold before all that do not), as `VecDeque::partition_point`.
    pub fn partition_point(&self, mut pred: impl FnMut(&T) -> bool) -> usize {
        let (mut lo, mut hi) = (0, self.len);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if pred(&self.buf[(self.head + mid) & self.mask()]) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// Insert `v` so that it is `k` places from the front (`k <= len`), moving the entries
    /// behind it one place back.
    pub fn insert(&mut self, k: usize, v: T) {
        assert!(k <= self.len, "insert at {k} past the end ({})", self.len);
        self.push_back(v);
        let m = self.mask();
        let mut j = self.len - 1;
        while j > k {
            self.buf[(self.head + j) & m] = self.buf[(self.head + j - 1) & m];
            j -= 1;
        }
        self.buf[(self.head + k) & m] = v;
    }

    /// Double the storage (at least 4 slots, or the room reserved by `with_capacity`), the
    /// live entries moved to its start in order. The new slots hold `T::default()` (they are
    /// never read before being written).
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let fill = T::default();
        let cap = (self.buf.len() * 2).max(4);
        if self.buf.is_empty() {
            // The first push: use the room reserved ahead, if any, instead of a new vector.
            let cap = cap.max(self.buf.capacity()).next_power_of_two();
            self.buf.resize(cap, fill);
            self.head = 0;
            return;
        }
        let mut nb = Vec::with_capacity(cap);
        nb.extend(self.iter().copied());
        nb.resize(cap, fill);
        self.buf = nb;
        self.head = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    /// The ring behaves as a VecDeque under a deterministic mix of pushes, pops, inserts and
    /// clears that wraps around and grows several times.
    #[test]
    fn matches_vecdeque_under_a_mixed_sequence() {
        let mut r: Ring<u64> = Ring::new();
        let mut d: VecDeque<u64> = VecDeque::new();
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for step in 0..20_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            match x % 11 {
                0..=5 => {
                    r.push_back(step);
                    d.push_back(step);
                }
                6..=8 => assert_eq!(r.pop_front(), d.pop_front()),
                9 => {
                    let k = (x >> 8) as usize % (d.len() + 1);
                    r.insert(k, step);
                    d.insert(k, step);
                }
                _ => {
                    if x % 97 == 0 {
                        r.clear();
                        d.clear();
                    }
                }
            }
            assert_eq!(r.len(), d.len());
            assert_eq!(r.front(), d.front());
            assert_eq!(r.back(), d.back());
            if step % 1000 == 0 {
                assert!(r.iter().eq(d.iter()));
                assert_eq!(r.get(d.len() / 2), d.get(d.len() / 2));
                assert!(r.capacity().is_power_of_two() || r.capacity() == 0);
            }
        }
        assert!(r.iter().eq(d.iter()));
    }

    #[test]
    fn an_emptied_ring_starts_again_at_its_first_slot() {
        let mut r: Ring<u64> = Ring::new();
        let mut d: VecDeque<u64> = VecDeque::new();
        for v in 0..5 {
            r.push_back(v);
            d.push_back(v);
        }
        // Bursts of 1-5 entries, each drained: order kept, and each burst starts at slot 0.
        for burst in 0..200u64 {
            while let Some(v) = d.pop_front() {
                assert_eq!(r.pop_front(), Some(v));
            }
            assert!(r.is_empty());
            for k in 0..1 + burst % 5 {
                r.push_back(burst * 10 + k);
                d.push_back(burst * 10 + k);
            }
            assert!(std::ptr::eq(r.front().unwrap(), &r.buf[0]));
            assert!(r.iter().eq(d.iter()));
        }
        assert_eq!(r.capacity(), 8);
    }

    #[test]
    fn with_capacity_keeps_its_room_through_the_first_push() {
        let mut r: Ring<u64> = Ring::with_capacity(16);
        assert_eq!(r.capacity(), 16);
        for v in 0..16 {
            r.push_back(v);
        }
        assert_eq!(r.capacity(), 16);
        assert!(r.iter().copied().eq(0..16));
        r.push_back(16);
        assert_eq!(r.capacity(), 32);
        assert!(r.iter().copied().eq(0..17));
    }

    #[test]
    fn partition_point_over_a_wrapped_ring() {
        let mut r: Ring<u32> = Ring::new();
        for v in 0..6 {
            r.push_back(v);
        }
        for _ in 0..5 {
            r.pop_front();
        }
        // The live entries wrap past the end of the 8-slot storage.
        for v in [10, 20, 20, 30, 40] {
            r.push_back(v);
        }
        assert_eq!(r.iter().copied().collect::<Vec<_>>(), vec![5, 10, 20, 20, 30, 40]);
        assert_eq!(r.partition_point(|&v| v <= 20), 4);
        assert_eq!(r.partition_point(|&v| v < 5), 0);
        assert_eq!(r.partition_point(|&v| v <= 40), 6);
        r.insert(4, 25);
        assert_eq!(r.iter().copied().collect::<Vec<_>>(), vec![5, 10, 20, 20, 25, 30, 40]);
    }
}
