//! Validation support (CONTRACT §6): input domains, reproducible random
//! inputs, and generated C drivers that call a head procedure and print its
//! outputs, so that compiled code and the IL interpreter can be compared.
//!
//! - [`domain`]: the `--domain` language;
//! - [`rng`]: a deterministic generator;
//! - [`driver`]: concrete inputs, the driver's C text and the output order;
//! - [`pragma`]: the `// aioli:` configuration line of test fixtures;
//! - [`tangent`]: the tangent check (divided differences, R_t), with
//!   [`timing`] for the time measurement in its driver;
//! - [`adjoint`]: the adjoint check (dot-product test against the tangent,
//!   divided differences, R_a, stack statistics);
//! - [`adjoint_interp`]: the dot-product test run in the IL interpreter;
//! - [`harness`]: what both checks share (signatures, the driver's plan and
//!   text, building, running, reading the output).

pub mod adjoint;
pub mod adjoint_interp;
pub mod domain;
pub mod driver;
pub mod harness;
pub mod interp_run;
pub mod pragma;
pub mod rng;
pub mod tangent;
pub mod tangent_interp;
pub mod timing;

pub use interp_run::{InterpRunError, run_in_interpreter};

#[cfg(test)]
mod driver_tests;
