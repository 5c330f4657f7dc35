//! Diagnostics: `FILE:LINE:COL: error: message`, then the source line and a
//! caret under the offending column (CONTRACT §1).
//!
//! Every stage of the front end reports problems as a [`Diagnostic`]; the
//! CLI renders them with [`render`] and exits with status 1. The format is
//! CONTRACT's, to the character, which is why it is written here rather than
//! with a reporting crate (their layouts differ from it).

use super::source::{SourceMap, Span};
use std::fmt::Write;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
}

/// One located message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub span: Span,
    pub message: String,
}

impl Diagnostic {
    pub fn error(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            span,
            message: message.into(),
        }
    }

    pub fn warning(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            span,
            message: message.into(),
        }
    }
}

/// Result type of every front-end stage.
pub type FrontResult<T> = Result<T, Diagnostic>;

/// Renders a diagnostic as `FILE:LINE:COL: error: message`, the source line,
/// and a caret line (`^` under the span's first column, `~` under the rest of
/// the span when it stays on that line).
pub fn render(sources: &SourceMap, d: &Diagnostic) -> String {
    let file = sources.file(d.span.file);
    let (line, col) = file.line_col(d.span.lo as usize);
    let kind = match d.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}:{}:{}: {}: {}",
        file.path.display(),
        line,
        col,
        kind,
        d.message
    );
    // A file that could not be read has no line to show.
    if file.text.is_empty() {
        return out;
    }
    let text = file.line_text(line);
    let _ = writeln!(out, "{text}");
    let mut caret = String::new();
    for ch in text.chars().take(col - 1) {
        caret.push(if ch == '\t' { '\t' } else { ' ' });
    }
    caret.push('^');
    let (end_line, end_col) = file.line_col((d.span.hi as usize).max(d.span.lo as usize + 1));
    if end_line == line && end_col > col + 1 {
        for _ in 0..(end_col - col - 1) {
            caret.push('~');
        }
    }
    let _ = writeln!(out, "{caret}");
    out
}
