//! Generators of C programs for tests and benchmarks.
//!
//! - [`random`]: random, well-typed, UB-free C99 programs from a seed, the
//!   input of the property tests (round trip, interpreter against `cc`,
//!   and later tangent and adjoint checks);
//! - [`bench`]: deterministic, realistic scientific C files of a requested
//!   size, the input of the benchmarks.
//!
//! Both are deterministic for a seed and use their own small random number
//! generator ([`rng::Rng`]) so that the output never depends on a
//! dependency's version.

pub mod bench;
pub mod random;
pub mod rng;

pub use bench::realistic_c;
pub use random::{
    GenConfig, GenFeatures, Inputs, ParamKind, ParamSpec, RandomProgram, random_program,
};
