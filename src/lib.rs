//! aioli: automatic differentiation of C, by source transformation.
//!
//! The pipeline is front (C → IL), analyses, transformation by rules,
//! simplification, back (IL → C). See `ARCHITECTURE.md` for the code map.

/// The tool allocates and frees many small IL nodes, sets and documents;
/// glibc's allocator took a quarter of the time on large files, mimalloc
/// much less (README, "Speed"). Every binary linking the library uses it.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

pub mod analysis;
pub mod back;
pub mod check;
pub mod front;
// `gen` is a reserved keyword in Rust 2024, hence the raw identifier.
pub mod cgen;
pub mod engine;
pub mod il;
pub mod interp;
pub mod runtime;
pub mod simplify;
pub mod transform;
