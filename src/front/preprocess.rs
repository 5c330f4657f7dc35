//! The C preprocessor. (Stub: being written.)

use super::FrontOptions;
use super::diag::{Diagnostic, FrontResult};
use super::lexer::Token;
use super::source::{FileId, SourceMap, Span};
use std::collections::HashSet;
use std::path::Path;

/// A comment met while preprocessing.
#[derive(Clone, Debug, PartialEq)]
pub struct PpComment {
    /// The comment with its delimiters.
    pub text: String,
    pub span: Span,
    /// It starts on the line where the previous token ends (a trailing
    /// comment such as `x = 1; // why`).
    pub same_line_as_prev: bool,
}

/// A token after preprocessing, with the comments written before it.
#[derive(Clone, Debug, PartialEq)]
pub struct PpToken {
    pub tok: Token,
    /// Where the user wrote it; for a token produced by a macro expansion,
    /// the span of the macro's use.
    pub span: Span,
    /// Comments between the previous token and this one.
    pub comments: Vec<PpComment>,
}

/// One `#include` line.
#[derive(Clone, Debug, PartialEq)]
pub struct IncludeRecord {
    /// The directive as written, e.g. `#include <math.h>`.
    pub written: String,
    /// `<...>` rather than `"..."`.
    pub system: bool,
    /// The file read for it: a local file, or the virtual header with the
    /// declarations the tool knows for a system header (`front/system.rs`);
    /// `None` for a system header the tool knows nothing about, or a file
    /// skipped because of `#pragma once` or its include guard.
    pub file: Option<FileId>,
}

/// The result of preprocessing a translation unit.
#[derive(Clone, Debug, Default)]
pub struct Preprocessed {
    /// Tokens without newlines, comments or directives. An `#include` line
    /// is one [`Token::IncludeMark`] token (index into `includes`), followed
    /// by the tokens of the included file.
    pub tokens: Vec<PpToken>,
    pub includes: Vec<IncludeRecord>,
    /// Comments after the last token.
    pub final_comments: Vec<PpComment>,
    /// Virtual files holding system-header declarations.
    pub system_files: HashSet<FileId>,
    /// The file named on the command line.
    pub main_file: FileId,
}

/// Reads `path` and everything it includes, expands macros, evaluates
/// conditionals.
pub fn preprocess(
    sources: &mut SourceMap,
    path: &Path,
    _options: &FrontOptions,
) -> FrontResult<Preprocessed> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let file = sources.add(path, text);
    Err(Diagnostic::error(
        Span::new(file, 0, 0),
        "the preprocessor is not implemented yet",
    ))
}
