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
    // A very long line (generated code) is shown as a window around the
    // column, so that the message stays readable.
    let chars: Vec<char> = text.chars().collect();
    let (first, last) = if chars.len() > LINE_WINDOW {
        let first = (col - 1).saturating_sub(LINE_WINDOW / 3);
        (first, (first + LINE_WINDOW).min(chars.len()))
    } else {
        (0, chars.len())
    };
    let clipped_before = if first > 0 { "..." } else { "" };
    let clipped_after = if last < chars.len() { "..." } else { "" };
    let shown: String = chars[first..last].iter().collect();
    let _ = writeln!(out, "{clipped_before}{shown}{clipped_after}");
    let mut caret = " ".repeat(clipped_before.len());
    for &ch in chars.iter().take(col - 1).skip(first) {
        caret.push(if ch == '\t' { '\t' } else { ' ' });
    }
    caret.push('^');
    let (end_line, end_col) = file.line_col((d.span.hi as usize).max(d.span.lo as usize + 1));
    if end_line == line && end_col > col + 1 {
        let end = (end_col - 1).min(last.max(col));
        for _ in col..end {
            caret.push('~');
        }
    }
    let _ = writeln!(out, "{caret}");
    out
}

/// The most characters of a source line a diagnostic shows.
const LINE_WINDOW: usize = 160;
