//! The event engine and clock: integer nanosecond time ([`time`]), the event queue that orders
//! everything that happens by (time, insertion order) ([`event`]), and the seeded random streams
//! every random consumer draws from ([`rng`]), the FIFO ring the per-packet queues use ([`ring`]), and the software prefetch that hides the memory latency of many flows' state ([`prefetch`]). Nothing here knows about packets or networks;
//! the run loop ([`crate::sim`]) pops events and hands them to the layers above.

pub mod event;
pub mod prefetch;
pub mod ring;
pub mod rng;
pub mod time;
