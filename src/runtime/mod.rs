//! The C runtime that generated code relies on (CONTRACT §5), written by
//! `aioli runtime --out DIR`: a header that generated files include by its
//! bare name, and a source file to compile and link with them.
//!
//! The files are kept as real C files next to this module (`aioli.h`,
//! `aioli.c`) and embedded, so that they can be read, compiled and tested as
//! C, and so that the binary writes them from anywhere.
//!
//! The runtime holds what the multi-directional tangent needs
//! (`tangent/vector-runtime`): the `NBDIRSMAX` macro; and what the adjoint
//! mode needs: one last-in first-out stack for all types
//! (`aioli_push_real8` / `aioli_pop_real8`, `_real4`, `_int`, `_long`,
//! `_pointer`, `_array`, and control markers packed as bits with
//! `aioli_push_control(value, bits)`), kept in linked 64 KiB blocks that are
//! released as pops empty them. Its statistics (`aioli_stack_stats`: total
//! bytes pushed and peak size, control markers counting as bits / 8 rounded
//! up) are printed to stderr at exit when `AIOLI_STACK_STATS` is set; a pop
//! from an empty stack prints a message and aborts. The interface is fixed
//! by the adjoint mode's notes; `aioli.h` documents each function. The
//! interpreter (`crate::interp`) implements the same functions as builtins
//! for adjoint programs run in the IL.

use std::path::{Path, PathBuf};

/// The header's file name, as generated files `#include` it.
pub const HEADER_NAME: &str = "aioli.h";

/// The source file's name.
pub const SOURCE_NAME: &str = "aioli.c";

/// The header's text.
pub const HEADER: &str = include_str!("aioli.h");

/// The source file's text.
pub const SOURCE: &str = include_str!("aioli.c");

/// The default number of directions, as the header defines it; keep in
/// step with `aioli.h` (a unit test checks).
pub const DEFAULT_NBDIRSMAX: i64 = 16;

/// The `#include` line that generated files use.
pub fn include_line() -> String {
    format!("#include \"{HEADER_NAME}\"")
}

/// Writes the header and the source into `dir` (created if needed) and
/// returns their paths. Each file goes through a temporary and a rename, so
/// a failure never leaves a truncated runtime behind.
pub fn write(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let mut written = Vec::new();
    for (name, text) in [(HEADER_NAME, HEADER), (SOURCE_NAME, SOURCE)] {
        let path = dir.join(name);
        let tmp = dir.join(format!("{name}.tmp"));
        std::fs::write(&tmp, text)?;
        std::fs::rename(&tmp, &path)?;
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_defines_the_default_that_the_code_assumes() {
        let line = format!("#define NBDIRSMAX {DEFAULT_NBDIRSMAX}");
        assert!(HEADER.contains(&line), "aioli.h lacks `{line}`");
        assert!(
            HEADER.contains("#ifndef NBDIRSMAX"),
            "-DNBDIRSMAX must override the default"
        );
    }

    #[test]
    fn the_header_declares_the_adjoint_stack() {
        for name in [
            "aioli_push_real8",
            "aioli_pop_real8",
            "aioli_push_real4",
            "aioli_pop_real4",
            "aioli_push_int",
            "aioli_pop_int",
            "aioli_push_long",
            "aioli_pop_long",
            "aioli_push_pointer",
            "aioli_pop_pointer",
            "aioli_push_control",
            "aioli_pop_control",
            "aioli_push_array",
            "aioli_pop_array",
            "aioli_stack_stats",
            "aioli_stack_reset_stats",
            "aioli_free_later",
            "aioli_sweep_open",
            "aioli_sweep_close",
        ] {
            assert!(HEADER.contains(&format!("{name}(")), "aioli.h lacks {name}");
            // The scalar pushes and pops are defined inline in the header
            // (`AIOLI_INLINE_PUSH_POP(T, PUSH, POP)`); the rest in the source.
            let inline =
                HEADER.contains(&format!(", {name},")) || HEADER.contains(&format!(", {name})"));
            assert!(
                inline || SOURCE.contains(&format!("{name}(")),
                "neither aioli.h defines {name} inline nor aioli.c defines it"
            );
        }
    }

    #[test]
    fn the_source_includes_the_header_by_its_bare_name() {
        assert!(SOURCE.contains(&include_line()));
    }
}
