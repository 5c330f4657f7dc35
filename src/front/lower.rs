//! Lowering from the syntax tree to IL. (Stub: being written.)

use super::ast::TranslationUnit;
use super::diag::{Diagnostic, FrontResult};
use super::preprocess::Preprocessed;
use super::source::{SourceMap, Span};
use crate::il::Program;

/// A lowered program and the warnings met on the way.
pub struct Lowered {
    pub program: Program,
    pub warnings: Vec<Diagnostic>,
}

/// Builds the IL program of a translation unit.
pub fn lower(
    _tu: &TranslationUnit,
    pp: &Preprocessed,
    _sources: &SourceMap,
) -> FrontResult<Lowered> {
    Err(Diagnostic::error(
        Span::new(pp.main_file, 0, 0),
        "lowering is not implemented yet",
    ))
}
