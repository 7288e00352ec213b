//! Event-queue benchmark, the classic "hold" model: N events pending; each step pops the
//! earliest and schedules it again a random time later, so the queue stays at N.
//! Reports nanoseconds per pop + schedule for N = 10 (a dumbbell run), 1,000 and 100,000.
//!
//!     cargo run --release -p ccsim-core --example queue_hold

use ccsim_core::event::{Event, EventQueue};

fn main() {
    let steps = 5_000_000u64;
    for (radix, &n) in [false, true].into_iter().flat_map(|r| [(r, &10usize), (r, &1_000), (r, &100_000)]) {
        let mut q: EventQueue = if radix { EventQueue::radix() } else { EventQueue::heap(n) };
        // A fixed LCG: the same schedule on every machine.
        let mut x: u64 = 1;
        let mut delay = || {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 40) % 1_000_000 + 1
        };
        for i in 0..n {
            q.schedule(delay(), Event::Pace(i as u32));
        }
        let t0 = std::time::Instant::now();
        for _ in 0..steps {
            let (t, e) = q.pop().expect("the queue never empties");
            q.schedule(t + delay(), e);
        }
        let ns = t0.elapsed().as_nanos() as f64 / steps as f64;
        println!("{} {n:>7} pending: {ns:6.1} ns per pop + schedule", if radix { "radix" } else { "heap4" });
    }
}
