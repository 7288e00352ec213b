//! ccsim-emu: the bottleneck of a ccsim dumbbell, emulated in user space for real Linux TCP.
//!
//! Two network namespaces (senders, receivers) each hold a TUN device. The emulator attaches to
//! both and moves every IP packet between them through the same link model the simulator uses
//! (`docs/model.md`):
//!
//! - **data direction** (sender side to receiver side): a drop-tail queue (packets or bytes,
//!   the packet being serialised not counted), serialisation at the bottleneck rate on the IP
//!   packet's bytes, Bernoulli random loss of data-carrying packets after they used link time,
//!   then the flow's one-way propagation delay (bottleneck delay + its access delay);
//! - **reverse direction** (ACKs): the same propagation delay, optional random loss of pure
//!   ACKs, no queue and no serialisation.
//!
//! Flows are told apart by TCP/UDP port (the sender's port). Time is CLOCK_MONOTONIC in
//! nanoseconds, which every network namespace shares. The random streams are the engine's
//! (`ccsim_core::rng`), seeded from the scenario seed.
//!
//! Layers: [`config`] (what Python passes in, as JSON), [`packet`] (IPv4 header parsing),
//! [`link`] (the link model on integer time, free of I/O and unit-tested on virtual time),
//! [`pool`] (pre-allocated packet buffers), [`sys`] (Linux system calls: TUN in a namespace,
//! ppoll, clocks) and [`emulator`] (the single-threaded event loop tying them together).

pub mod config;
pub mod emulator;
pub mod link;
pub mod packet;
pub mod pool;
pub mod sys;

pub use config::Config;
pub use emulator::Emulator;
