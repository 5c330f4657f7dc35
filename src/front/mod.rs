//! The C front end: preprocessing, lexing, parsing, lowering to IL.
//!
//! `load` runs the whole chain on a file. Each stage reports the first
//! problem it meets as a located [`diag::Diagnostic`]; none panics.

pub mod ast;
pub mod diag;
pub mod lexer;
pub mod lower;
pub mod parser;
pub mod preprocess;
pub mod source;
pub mod system;

use diag::Diagnostic;
use source::SourceMap;
use std::path::{Path, PathBuf};

/// What the command line says about preprocessing.
#[derive(Clone, Debug, Default)]
pub struct FrontOptions {
    /// `-I DIR`, in order.
    pub include_dirs: Vec<PathBuf>,
    /// `-D NAME` (value `None`, meaning `1`) and `-D NAME=VAL`.
    pub defines: Vec<(String, Option<String>)>,
}

/// A translation unit read from disk and lowered to IL.
pub struct Loaded {
    pub sources: SourceMap,
    pub program: crate::il::Program,
    pub warnings: Vec<Diagnostic>,
}

/// Reads, preprocesses, parses and lowers `path`. On error, the source map
/// is returned too so that the diagnostic can be rendered.
pub fn load(path: &Path, options: &FrontOptions) -> Result<Loaded, (SourceMap, Diagnostic)> {
    let mut sources = SourceMap::new();
    let result = (|| {
        let pp = preprocess::preprocess(&mut sources, path, options)?;
        let tu = parser::parse(&pp, &sources)?;
        lower::lower(&tu, &pp, &sources)
    })();
    match result {
        Ok(lowered) => Ok(Loaded {
            sources,
            program: lowered.program,
            warnings: lowered.warnings,
        }),
        Err(d) => Err((sources, d)),
    }
}
