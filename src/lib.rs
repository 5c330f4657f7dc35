//! aioli: automatic differentiation of C, by source transformation.
//!
//! The pipeline is front (C → IL), analyses, transformation by rules,
//! simplification, back (IL → C). See `ARCHITECTURE.md` for the code map.

/// The tool allocates and frees many small IL nodes, sets and documents;
/// glibc's allocator took a quarter of the time on large files, mimalloc
/// much less (README, "Speed"). Every binary linking the library uses it.
///
/// Built without transparent huge pages (`no_thp`): the kernel zeroes a
/// whole 2 MiB page on its first touch, and on the 50K-line file that
/// zeroing took about a third of the run.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's `mi_option_purge_delay` (the enum in its `mimalloc.h`, v3).
/// The crate names no constant for it; the assertion below fails the build
/// if a new version of the crate reorders the options.
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;
const _: () = assert!(libmimalloc_sys::_mi_option_last == 47);

/// Call once at the start of a process that runs the pipeline: memory freed
/// between phases stays with the process instead of going back to the
/// kernel, which would zero it again on the next phase's first touch.
/// A run lasts seconds and then exits, so returning memory early gains
/// nothing.
pub fn keep_freed_memory() {
    // SAFETY: `mi_option_set` only stores an integer in mimalloc's option
    // table; purging reads it each time it runs.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1) };
}

pub mod analysis;
pub mod back;
pub mod check;
pub mod front;
// `gen` is a reserved keyword in Rust 2024, hence the raw identifier.
pub mod cgen;
pub mod engine;
pub mod il;
pub mod interp;
pub mod par;
pub mod runtime;
pub mod simplify;
pub mod transform;
