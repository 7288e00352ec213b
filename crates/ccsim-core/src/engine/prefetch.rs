//! Software prefetch: ask the memory system for a cache line that the run loop will read soon,
//! so that with thousands of flows (whose state has left the caches between two of their
//! packets) the line arrives while other work is done, and several lines arrive at once
//! instead of one after another. A prefetch is only a hint: it changes no value, so results
//! are the same with or without it. On targets other than x86-64 it does nothing.

/// Bytes per cache line.
pub const LINE: usize = 64;

/// Prefetch the line holding `p` into every cache level.
#[inline(always)]
pub fn line(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: PREFETCHT0 is a hint that never faults and writes nothing, whatever the address
    // (Intel SDM vol. 2B, PREFETCHh: "a prefetch instruction ... does not generate
    // exceptions"); it is the only unsafe code of the crate.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(p as *const i8)
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Prefetch the first line of `*r`.
#[inline(always)]
pub fn first<T>(r: &T) {
    line(r as *const T as *const u8)
}

/// Prefetch the lines of the `len` bytes from `p`.
#[inline(always)]
pub fn bytes(p: *const u8, len: usize) {
    // From the line holding byte 0 to the one holding byte `len - 1`.
    let mut a = (p as usize) & !(LINE - 1);
    let end = p as usize + len;
    while a < end {
        line(p.wrapping_add(a.wrapping_sub(p as usize)));
        a += LINE;
    }
}

/// Prefetch the lines of bytes `from..to` of `*r` (offsets into it; clamped to its size).
#[inline(always)]
pub fn span<T>(r: &T, from: usize, to: usize) {
    let to = to.min(std::mem::size_of::<T>());
    if from < to {
        bytes((r as *const T as *const u8).wrapping_add(from), to - from);
    }
}

/// Prefetch every line of `*r`.
#[inline(always)]
pub fn all<T>(r: &T) {
    span(r, 0, std::mem::size_of::<T>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prefetch_changes_nothing() {
        let v: Vec<u64> = (0..1000).collect();
        let a = [7u64; 100];
        all(&a);
        span(&a, 8, 1 << 20);
        first(&v[999]);
        line(std::ptr::null());
        assert_eq!(v.iter().sum::<u64>(), 999 * 1000 / 2);
        assert_eq!(a.iter().sum::<u64>(), 700);
    }
}
