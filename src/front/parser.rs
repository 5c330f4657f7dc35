//! The parser. (Stub: being written.)

use super::ast::TranslationUnit;
use super::diag::{Diagnostic, FrontResult};
use super::preprocess::Preprocessed;
use super::source::{SourceMap, Span};

/// Parses a preprocessed token stream into a syntax tree.
pub fn parse(pp: &Preprocessed, _sources: &SourceMap) -> FrontResult<TranslationUnit> {
    Err(Diagnostic::error(
        Span::new(pp.main_file, 0, 0),
        "the parser is not implemented yet",
    ))
}
