//! The C runtime that generated code relies on (CONTRACT §5), written by
//! `aioli runtime --out DIR`: a header that generated files include by its
//! bare name, and a source file to compile and link with them.
//!
//! The files are kept as real C files next to this module (`aioli.h`,
//! `aioli.c`) and embedded, so that they can be read, compiled and tested as
//! C, and so that the binary writes them from anywhere.
//!
//! For now the runtime holds what the multi-directional tangent needs
//! (`tangent/vector-runtime`): the `NBDIRSMAX` macro. The adjoint mode adds
//! its stack and statistics.

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
    fn the_source_includes_the_header_by_its_bare_name() {
        assert!(SOURCE.contains(&include_line()));
    }
}
