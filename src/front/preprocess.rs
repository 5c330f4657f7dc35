//! The C preprocessor.
//!
//! It works on the tokens of the logos lexer, so every token keeps the span
//! where the user wrote it; a token produced by a macro expansion carries the
//! span of the macro use. Macro expansion follows Prosser's algorithm: every
//! token carries a hide set (the macros whose expansion produced it), which
//! stops self-referential macros such as `#define NULL NULL`.
//!
//! Directives are handled line by line as tokens are pulled from the
//! current file; an `#include` pushes the included file on a stack and
//! emits one [`Token::IncludeMark`].

use super::FrontOptions;
use super::diag::{Diagnostic, FrontResult};
use super::lexer::{Token, spelling};
use super::source::{FileId, SourceMap, Span};
use super::system;
use logos::Logos;
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::rc::Rc;

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
    /// The comment ending the line (`#include <math.h>  /* exp */`).
    pub trailing: Option<String>,
}

/// A `#define` or `#undef` line of the main file.
#[derive(Clone, Debug, PartialEq)]
pub struct MacroLine {
    pub span: Span,
    /// The line as written (continuation lines included).
    pub text: String,
    /// The comments written before it.
    pub comments: Vec<String>,
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
    /// The `#define` and `#undef` lines of the main file, as written: the
    /// output keeps them, so that a local header it includes is read with
    /// the same macros (and the user sees them).
    pub macro_lines: Vec<MacroLine>,
    /// The macros that local headers define: (the header the main file
    /// includes, through which the definition was read; its name). The
    /// output includes those headers, so it sees these macros too.
    pub header_macros: Vec<(FileId, String)>,
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
    options: &FrontOptions,
) -> FrontResult<Preprocessed> {
    let main = match load_file(sources, path) {
        Ok(file) => file,
        Err(LoadError::Located(d)) => return Err(d),
        Err(LoadError::Unreadable(why)) => {
            let id = sources.add(path, String::new());
            return Err(Diagnostic::error(
                file_start(sources, id),
                format!("cannot read file '{}': {why}", path.display()),
            ));
        }
    };
    let mut pp = Preprocessor::new(sources, options, main.id);
    pp.predefine()?;
    pp.cache.insert(main.canonical.clone(), main.clone());
    pp.out.tokens.reserve(main.toks.len());
    pp.files.push(FileCtx::new(main));
    pp.run()?;
    Ok(pp.out)
}

/// How deep `#include`s may nest.
const MAX_INCLUDE_DEPTH: usize = 200;
/// How deep macro arguments may nest (each level is a recursive expansion).
const MAX_EXPANSION_DEPTH: usize = 200;
/// How many tokens macro expansions may produce in one translation unit;
/// bounds exponential macros.
const MAX_EXPANDED_TOKENS: usize = 2_000_000;

/// A fast hasher for macro names (the default SipHash shows in profiles:
/// every identifier is looked up).
#[derive(Default, Clone, Copy)]
struct NameHasher(u64);

impl std::hash::Hasher for NameHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }
}

type NameMap<V> = HashMap<Rc<str>, V, std::hash::BuildHasherDefault<NameHasher>>;

/// The macros whose expansion produced a token; `None` is the empty set.
type HideSet = Option<Rc<[Rc<str>]>>;

/// A token on its way through the preprocessor.
#[derive(Clone, Debug)]
struct Tok {
    tok: Token,
    span: Span,
    /// White space (or a comment) precedes it; matters for `#` stringification
    /// and to tell `#define F(x)` from `#define F (x)`.
    space: bool,
    hide: HideSet,
}

/// A token as lexed from a file, or the message of a lexer error, reported
/// only if the preprocessor actually reads it (not in a skipped group).
#[derive(Clone, Debug)]
struct LexedTok {
    kind: Result<Token, Rc<str>>,
    span: Span,
    space: bool,
}

impl LexedTok {
    fn token(&self) -> Option<&Token> {
        self.kind.as_ref().ok()
    }

    fn to_tok(&self) -> FrontResult<Tok> {
        match &self.kind {
            Ok(t) => Ok(Tok {
                tok: t.clone(),
                span: self.span,
                space: self.space,
                hide: None,
            }),
            Err(msg) => Err(Diagnostic::error(self.span, msg.to_string())),
        }
    }
}

/// A file read, lexed and analysed once per translation unit.
#[derive(Debug)]
struct LexedFile {
    id: FileId,
    toks: Vec<LexedTok>,
    /// The directory of the file, searched first by `#include "..."`.
    dir: Option<PathBuf>,
    /// The canonical path, compared by `#pragma once`.
    canonical: PathBuf,
    /// The macro of an include guard wrapping the whole file.
    guard: Option<Rc<str>>,
}

/// Why a file could not be loaded.
enum LoadError {
    /// The file could not be read at all; reported at the `#include`.
    Unreadable(String),
    /// The file was read but is not text; reported in the file itself.
    Located(Diagnostic),
}

/// Reads and lexes a file from disk.
fn load_file(sources: &mut SourceMap, path: &Path) -> Result<Rc<LexedFile>, LoadError> {
    let bytes = std::fs::read(path).map_err(|e| LoadError::Unreadable(e.to_string()))?;
    // Legacy codes write their comments in Latin-1 (`Temp\xe9rature`): a
    // file that is not UTF-8 is read as ISO-8859-1, byte for byte; a
    // stray byte outside a comment or a literal is then an unexpected
    // character, reported where it is.
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => e.as_bytes().iter().map(|&b| char::from(b)).collect(),
    };
    // A UTF-8 byte-order mark, which some editors write, is no character
    // of the program (compilers skip it too).
    let text = match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.to_string(),
        None => text,
    };
    let nul = text.find('\0');
    let id = sources.add(path, text);
    if let Some(at) = nul {
        return Err(LoadError::Located(Diagnostic::error(
            Span::new(id, at, at + 1),
            "file contains a NUL byte",
        )));
    }
    let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let dir = path.parent().map(Path::to_path_buf);
    Ok(Rc::new(lex_into_file(sources, id, dir, canonical)))
}

/// The span of a file's first character, where problems with the file as a
/// whole are reported. (An empty span there would make the caret renderer
/// slice inside a multi-byte character.)
fn file_start(sources: &SourceMap, id: FileId) -> Span {
    let first = sources.file(id).text.chars().next();
    Span::new(id, 0, first.map_or(0, char::len_utf8))
}

/// Lexes a file already in the source map.
fn lex_into_file(
    sources: &SourceMap,
    id: FileId,
    dir: Option<PathBuf>,
    canonical: PathBuf,
) -> LexedFile {
    let toks = lex_text(id, &sources.file(id).text);
    let guard = detect_guard(&toks);
    LexedFile {
        id,
        toks,
        dir,
        canonical,
        guard,
    }
}

/// Lexes a whole text, keeping newlines and comments, and turning lexer
/// errors into error tokens. An unterminated block comment ends the text.
fn lex_text(id: FileId, text: &str) -> Vec<LexedTok> {
    if !text.contains("\\\n") && !text.contains("\\\r\n") {
        return lex_spliced(id, text, None);
    }
    // C's translation phase 2 deletes each backslash-newline before
    // anything is a token: one may split a number, a name or a `//`
    // comment (which then swallows the next line). The lexer reads the
    // spliced text; spans go back to where the user wrote each token.
    let mut spliced = String::with_capacity(text.len());
    let mut origin: Vec<u32> = Vec::with_capacity(text.len() + 1);
    let mut i = 0;
    let bytes = text.as_bytes();
    while i < bytes.len() {
        if bytes[i] == b'\\' {
            let rest = &text[i + 1..];
            let skip = if rest.starts_with('\n') {
                2
            } else if rest.starts_with("\r\n") {
                3
            } else {
                0
            };
            if skip > 0 {
                i += skip;
                continue;
            }
        }
        let ch = text[i..].chars().next().unwrap_or('\0');
        for k in 0..ch.len_utf8() {
            origin.push((i + k) as u32);
        }
        spliced.push(ch);
        i += ch.len_utf8();
    }
    origin.push(text.len() as u32);
    lex_spliced(id, &spliced, Some(&origin))
}

/// Lexes `text`; `origin` maps each byte of a spliced text back to the
/// file's (see [`lex_text`]).
fn lex_spliced(id: FileId, text: &str, origin: Option<&[u32]>) -> Vec<LexedTok> {
    let at = |k: usize| origin.map_or(k, |o| o[k] as usize);
    // The end of a token is just after its last byte, not after a splice
    // that follows it.
    let end = |k: usize| if k == 0 { at(0) } else { at(k - 1) + 1 };
    let mut lexer = Token::lexer(text);
    let mut toks = Vec::with_capacity(text.len() / 4);
    let mut prev_end = 0;
    let mut prev_was_gap = true;
    let mut names: HashSet<Rc<str>, std::hash::BuildHasherDefault<NameHasher>> = HashSet::default();
    while let Some(result) = lexer.next() {
        let range = lexer.span();
        let space = prev_was_gap || range.start > prev_end;
        prev_end = range.end;
        let span = Span::new(id, at(range.start), end(range.end));
        match result {
            Ok(Token::Slash) if text.get(range.end..).is_some_and(|s| s.starts_with('*')) => {
                toks.push(LexedTok {
                    kind: Err(Rc::from("unterminated comment")),
                    span: Span::new(id, at(range.start), end(range.end + 1)),
                    space,
                });
                break;
            }
            Ok(mut tok) => {
                // Sharing the text of repeated names and numbers keeps the
                // heap from growing by one allocation per token.
                if let Token::Ident(text) | Token::IntLit(text) | Token::FloatLit(text) = &mut tok {
                    match names.get(&**text) {
                        Some(shared) => *text = shared.clone(),
                        None => {
                            names.insert(text.clone());
                        }
                    }
                }
                prev_was_gap = matches!(
                    tok,
                    Token::Newline | Token::LineComment(_) | Token::BlockComment(_)
                );
                toks.push(LexedTok {
                    kind: Ok(tok),
                    span,
                    space,
                });
            }
            Err(()) => {
                let ch = text.get(range.start..).and_then(|s| s.chars().next());
                let msg = match ch {
                    Some('"') => "unterminated string literal".to_string(),
                    Some('\'')
                        if text
                            .get(range.start + 1..)
                            .is_some_and(|s| s.starts_with('\'')) =>
                    {
                        "empty character constant".to_string()
                    }
                    Some('\'') => "unterminated character literal".to_string(),
                    Some(c) => format!("unexpected character '{c}'"),
                    None => "unexpected end of input".to_string(),
                };
                let hi = range.start + ch.map_or(0, char::len_utf8);
                prev_was_gap = false;
                toks.push(LexedTok {
                    kind: Err(Rc::from(msg)),
                    span: Span::new(id, at(range.start), end(hi)),
                    space,
                });
            }
        }
    }
    toks
}

/// The tokens of one line that are not comments.
fn code_of(line: &[LexedTok]) -> impl Iterator<Item = &LexedTok> {
    line.iter()
        .filter(|t| !matches!(t.kind, Ok(Token::LineComment(_) | Token::BlockComment(_))))
}

/// The include-guard macro of a file shaped `#ifndef X ... #endif` (or
/// `#if !defined X`) with nothing but comments outside.
fn detect_guard(toks: &[LexedTok]) -> Option<Rc<str>> {
    let mut lines = toks
        .split(|t| matches!(t.kind, Ok(Token::Newline)))
        .filter(|line| code_of(line).next().is_some());
    let first: Vec<Option<&Token>> = code_of(lines.next()?).take(8).map(|t| t.token()).collect();
    let guard = match first.as_slice() {
        [Some(Token::Hash), Some(Token::Ident(d)), Some(name)] if &**d == "ifndef" => {
            macro_name(name)?
        }
        [
            Some(Token::Hash),
            Some(Token::KwIf),
            Some(Token::Bang),
            Some(Token::Ident(d)),
            Some(name),
        ] if &**d == "defined" => macro_name(name)?,
        [
            Some(Token::Hash),
            Some(Token::KwIf),
            Some(Token::Bang),
            Some(Token::Ident(d)),
            Some(Token::LParen),
            Some(name),
            Some(Token::RParen),
        ] if &**d == "defined" => macro_name(name)?,
        _ => return None,
    };
    let mut depth = 1usize;
    for line in lines.by_ref() {
        let mut code = code_of(line).map(LexedTok::token);
        let (Some(Some(Token::Hash)), Some(Some(word))) = (code.next(), code.next()) else {
            continue;
        };
        match spelling(word).as_ref() {
            "if" | "ifdef" | "ifndef" => depth += 1,
            "elif" | "else" if depth == 1 => return None,
            "endif" => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            _ => {}
        }
    }
    // The guard's `#endif` must be the last line with code.
    (depth == 0 && lines.next().is_none()).then(|| Rc::from(guard))
}

/// The name of a token that can be a macro name: an identifier or a keyword
/// (the preprocessor does not know keywords).
fn macro_name(tok: &Token) -> Option<&str> {
    match tok {
        Token::Ident(s) => Some(s),
        Token::IntLit(_)
        | Token::FloatLit(_)
        | Token::StrLit(_)
        | Token::CharLit(_)
        | Token::TypeName(_)
        | Token::IncludeMark(_)
        | Token::Newline
        | Token::LineComment(_)
        | Token::BlockComment(_) => None,
        other => match spelling(other) {
            Cow::Borrowed(s) if s.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') => {
                Some(s)
            }
            _ => None,
        },
    }
}

fn in_hide_set(hide: &HideSet, name: &str) -> bool {
    hide.as_ref()
        .is_some_and(|h| h.iter().any(|n| &**n == name))
}

/// `hide ∪ {name}`.
fn hide_with(hide: &HideSet, name: &Rc<str>) -> HideSet {
    let mut names: Vec<Rc<str>> = hide.as_ref().map(|h| h.to_vec()).unwrap_or_default();
    if !names.iter().any(|n| n == name) {
        names.push(name.clone());
    }
    Some(Rc::from(names))
}

fn hide_union(a: &HideSet, b: &HideSet) -> HideSet {
    match (a, b) {
        (None, x) | (x, None) => x.clone(),
        (Some(x), Some(y)) if Rc::ptr_eq(x, y) => a.clone(),
        (Some(x), Some(y)) => {
            let mut names = x.to_vec();
            for n in y.iter() {
                if !names.contains(n) {
                    names.push(n.clone());
                }
            }
            Some(Rc::from(names))
        }
    }
}

fn hide_intersection(a: &HideSet, b: &HideSet) -> HideSet {
    match (a, b) {
        (Some(x), Some(y)) => {
            let names: Vec<Rc<str>> = x.iter().filter(|n| y.contains(n)).cloned().collect();
            (!names.is_empty()).then(|| Rc::from(names))
        }
        _ => None,
    }
}

/// One token of a macro's replacement list.
#[derive(Clone, Debug)]
struct BodyTok {
    tok: Token,
    span: Span,
    space: bool,
    /// The index of the parameter this token names, in a function-like macro.
    param: Option<usize>,
}

#[derive(Debug)]
struct Macro {
    name: Rc<str>,
    function_like: bool,
    /// Parameter names; a variadic macro's last one is `__VA_ARGS__` (or
    /// the GNU `name...`).
    params: Vec<Rc<str>>,
    variadic: bool,
    body: Vec<BodyTok>,
}

/// One open conditional group of a file.
#[derive(Debug)]
struct Cond {
    /// The `#if` line, where an unterminated group is reported.
    span: Span,
    /// A branch of the group has been taken.
    taken: bool,
    else_seen: bool,
}

/// A file being read.
struct FileCtx {
    file: Rc<LexedFile>,
    pos: usize,
    at_line_start: bool,
    conds: Vec<Cond>,
}

impl FileCtx {
    fn new(file: Rc<LexedFile>) -> FileCtx {
        FileCtx {
            file,
            pos: 0,
            at_line_start: true,
            conds: Vec::new(),
        }
    }
}

struct Preprocessor<'a> {
    sources: &'a mut SourceMap,
    options: &'a FrontOptions,
    macros: NameMap<Rc<Macro>>,
    /// The include stack; the last file is the one being read.
    files: Vec<FileCtx>,
    /// Tokens to read before the current file (macro expansions), the next
    /// one last.
    pending: Vec<Tok>,
    /// While expanding a token list in isolation (a macro argument, an `#if`
    /// line), the part of `pending` below this index is out of reach.
    floor: usize,
    isolated: bool,
    /// Nesting of isolated expansions.
    depth: usize,
    /// Macro calls whose arguments are being collected.
    collecting_args: usize,
    expanded_tokens: usize,
    comments: Vec<PpComment>,
    prev_emitted: Option<Span>,
    once: HashSet<PathBuf>,
    cache: HashMap<PathBuf, Rc<LexedFile>>,
    system_injected: HashSet<String>,
    /// The comment ending the directive line last read, if one does.
    line_comment: Option<String>,
    out: Preprocessed,
}

/// The tokens of one directive line (after the `#`), comments removed.
type Line = Vec<LexedTok>;

impl<'a> Preprocessor<'a> {
    fn new(sources: &'a mut SourceMap, options: &'a FrontOptions, main: FileId) -> Self {
        Preprocessor {
            sources,
            options,
            macros: NameMap::default(),
            files: Vec::new(),
            pending: Vec::new(),
            floor: 0,
            isolated: false,
            depth: 0,
            collecting_args: 0,
            expanded_tokens: 0,
            comments: Vec::new(),
            prev_emitted: None,
            once: HashSet::new(),
            cache: HashMap::new(),
            system_injected: HashSet::new(),
            line_comment: None,
            out: Preprocessed {
                main_file: main,
                ..Preprocessed::default()
            },
        }
    }

    /// Defines `__STDC__`, `__STDC_VERSION__` and the `-D` macros.
    fn predefine(&mut self) -> FrontResult<()> {
        let main = self.out.main_file;
        let mut defs: Vec<(String, String)> = vec![
            ("__STDC__".into(), "1".into()),
            ("__STDC_VERSION__".into(), "199901L".into()),
            // The output is compiled by a hosted C compiler, which says so.
            ("__STDC_HOSTED__".into(), "1".into()),
        ];
        for (name, value) in &self.options.defines {
            defs.push((name.clone(), value.clone().unwrap_or_else(|| "1".into())));
        }
        for (name, value) in defs {
            let text = format!("{name} {value}");
            let nowhere = file_start(self.sources, main);
            let mut line: Line = lex_text(main, &text)
                .into_iter()
                .filter(|t| {
                    !matches!(
                        t.kind,
                        Ok(Token::Newline | Token::LineComment(_) | Token::BlockComment(_))
                    )
                })
                .collect();
            for t in &mut line {
                t.span = nowhere;
            }
            let bad_name = line
                .first()
                .and_then(LexedTok::token)
                .and_then(macro_name)
                .is_none_or(|n| Some(n) != name.split('(').next());
            if bad_name || line.iter().any(|t| t.kind.is_err()) {
                return Err(Diagnostic::error(
                    nowhere,
                    format!("invalid macro definition on the command line: -D {name}={value}"),
                ));
            }
            self.define(&line)?;
        }
        Ok(())
    }

    fn run(&mut self) -> FrontResult<()> {
        loop {
            match self.next_expanded()? {
                Some(t) => self.emit(t),
                None => {
                    let Some(ctx) = self.files.pop() else { break };
                    if let Some(cond) = ctx.conds.first() {
                        return Err(Diagnostic::error(cond.span, "unterminated #if"));
                    }
                    if self.files.is_empty() {
                        break;
                    }
                }
            }
        }
        self.out.final_comments = std::mem::take(&mut self.comments);
        Ok(())
    }

    fn emit(&mut self, t: Tok) {
        self.prev_emitted = Some(t.span);
        self.out.tokens.push(PpToken {
            tok: t.tok,
            span: t.span,
            comments: std::mem::take(&mut self.comments),
        });
    }

    fn line_of(&self, file: FileId, offset: u32) -> usize {
        let text = &self.sources.file(file).text;
        let mut offset = (offset as usize).min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        self.sources.file(file).line_col(offset).0
    }

    fn add_comment(&mut self, text: &Rc<str>, span: Span) {
        let same_line_as_prev = self.prev_emitted.is_some_and(|prev| {
            prev.file == span.file
                && self.line_of(prev.file, prev.hi) == self.line_of(span.file, span.lo)
        });
        self.comments.push(PpComment {
            text: text.to_string(),
            span,
            same_line_as_prev,
        });
    }

    /// The next token after macro expansion, or `None` at the end of the
    /// current file (or of the isolated list being expanded).
    fn next_expanded(&mut self) -> FrontResult<Option<Tok>> {
        loop {
            let Some(t) = self.next_token()? else {
                return Ok(None);
            };
            if let Token::Ident(name) = &t.tok
                && !self.macros.contains_key(&**name)
            {
                match &**name {
                    "__LINE__" => {
                        let file = self.sources.file(t.span.file);
                        let (line, _) = file.line_col(t.span.lo as usize);
                        let tok = Token::IntLit(Rc::from(line.to_string()));
                        return Ok(Some(Tok { tok, ..t }));
                    }
                    "__FILE__" => {
                        let path = self.sources.file(t.span.file).path.display().to_string();
                        let escaped = path.replace('\\', "\\\\").replace('"', "\\\"");
                        let tok = Token::StrLit(Rc::from(format!("\"{escaped}\"")));
                        return Ok(Some(Tok { tok, ..t }));
                    }
                    "_Pragma" => {
                        // `_Pragma("...")` is a `#pragma` line written as an
                        // operator; like those lines it is dropped.
                        self.pragma_operator(t.span)?;
                        continue;
                    }
                    _ => {}
                }
            }
            let Some(m) = macro_name(&t.tok).and_then(|n| self.macros.get(n)) else {
                return Ok(Some(t));
            };
            if in_hide_set(&t.hide, &m.name) || (m.function_like && !self.next_is_lparen()) {
                return Ok(Some(t));
            }
            let m = m.clone();
            self.expand(t, &m)?;
        }
    }

    /// Reads the `("...")` after `_Pragma`.
    fn pragma_operator(&mut self, at: Span) -> FrontResult<()> {
        let bad = || Diagnostic::error(at, "_Pragma expects a parenthesised string literal");
        let open = self.next_expanded()?.ok_or_else(bad)?;
        let text = self.next_expanded()?.ok_or_else(bad)?;
        let close = self.next_expanded()?.ok_or_else(bad)?;
        match (open.tok, text.tok, close.tok) {
            (Token::LParen, Token::StrLit(_), Token::RParen) => Ok(()),
            _ => Err(bad()),
        }
    }

    /// The next token before macro expansion; directives met on the way
    /// are carried out and comments collected.
    fn next_token(&mut self) -> FrontResult<Option<Tok>> {
        if self.pending.len() > self.floor {
            return Ok(self.pending.pop());
        }
        if self.isolated {
            return Ok(None);
        }
        loop {
            let Some(ctx) = self.files.last_mut() else {
                return Ok(None);
            };
            let Some(lt) = ctx.file.toks.get(ctx.pos) else {
                return Ok(None);
            };
            ctx.pos += 1;
            match &lt.kind {
                Ok(Token::Newline) => ctx.at_line_start = true,
                Ok(Token::LineComment(text) | Token::BlockComment(text)) => {
                    let (text, span) = (text.clone(), lt.span);
                    self.add_comment(&text, span);
                }
                Ok(Token::Hash) if ctx.at_line_start => {
                    let span = lt.span;
                    self.directive(span)?;
                    if self.pending.len() > self.floor {
                        return Ok(self.pending.pop());
                    }
                }
                _ => {
                    ctx.at_line_start = false;
                    return lt.to_tok().map(Some);
                }
            }
        }
    }

    /// Whether the next token is `(` (a function-like macro is called),
    /// without consuming anything.
    fn next_is_lparen(&self) -> bool {
        if self.pending.len() > self.floor {
            return self.pending.last().is_some_and(|t| t.tok == Token::LParen);
        }
        if self.isolated {
            return false;
        }
        let Some(ctx) = self.files.last() else {
            return false;
        };
        let mut at_line_start = ctx.at_line_start;
        for lt in &ctx.file.toks[ctx.pos.min(ctx.file.toks.len())..] {
            match &lt.kind {
                Ok(Token::Newline) => at_line_start = true,
                Ok(Token::LineComment(_) | Token::BlockComment(_)) => {}
                Ok(Token::Hash) if at_line_start => return false,
                Ok(t) => return *t == Token::LParen,
                Err(_) => return false,
            }
        }
        false
    }

    /// Reads the rest of the current line (the newline is consumed), without
    /// comments.
    fn read_line(&mut self) -> Line {
        let mut line = Vec::new();
        let Some(ctx) = self.files.last_mut() else {
            return line;
        };
        self.line_comment = None;
        while let Some(lt) = ctx.file.toks.get(ctx.pos) {
            ctx.pos += 1;
            match &lt.kind {
                Ok(Token::Newline) => break,
                Ok(Token::LineComment(c) | Token::BlockComment(c)) => {
                    self.line_comment = (!c.contains('\n')).then(|| c.to_string());
                }
                _ => {
                    self.line_comment = None;
                    line.push(lt.clone());
                }
            }
        }
        ctx.at_line_start = true;
        line
    }

    fn check_lexed(line: &[LexedTok]) -> FrontResult<()> {
        for t in line {
            t.to_tok()?;
        }
        Ok(())
    }

    fn directive(&mut self, hash: Span) -> FrontResult<()> {
        let line = self.read_line();
        let Some(first) = line.first() else {
            return Ok(());
        };
        let name_span = hash.to(first.span);
        let name = match &first.kind {
            Ok(Token::IntLit(_)) => return Ok(()),
            Ok(t) => macro_name(t).map(str::to_string),
            Err(_) => None,
        };
        let Some(name) = name else {
            let what = self.sources.snippet(first.span).to_string();
            return Err(Diagnostic::error(
                name_span,
                format!("invalid preprocessing directive '#{what}'"),
            ));
        };
        let args = &line[1..];
        if matches!(name.as_str(), "define" | "undef") && hash.file == self.out.main_file {
            let end = line.last().map_or(first.span.hi, |t| t.span.hi);
            let whole = Span {
                file: hash.file,
                lo: hash.lo,
                hi: end.max(hash.lo),
            };
            let mut text = self.sources.snippet(whole).to_string();
            // `#define DX 0.1  /* grid spacing */`: the output keeps it.
            if let Some(c) = &self.line_comment {
                text.push_str("  ");
                text.push_str(c);
            }
            let comments = std::mem::take(&mut self.comments)
                .into_iter()
                .map(|c| c.text)
                .collect();
            self.out.macro_lines.push(MacroLine {
                span: whole,
                text,
                comments,
            });
        }
        match name.as_str() {
            "define" => {
                Self::check_lexed(args)?;
                if args.is_empty() {
                    return Err(Diagnostic::error(name_span, "#define expects a macro name"));
                }
                if hash.file != self.out.main_file
                    && !self.out.system_files.contains(&hash.file)
                    && let (Some(top), Some(name)) =
                        (self.files.get(1), args[0].token().and_then(macro_name))
                {
                    let entry = (top.file.id, name.to_string());
                    if !self.out.header_macros.contains(&entry) {
                        self.out.header_macros.push(entry);
                    }
                }
                self.define(args)
            }
            "undef" => {
                Self::check_lexed(args)?;
                let name = self.name_argument(args, name_span, "#undef")?;
                self.macros.remove(name.as_str());
                Ok(())
            }
            "include" => self.include(args, hash, name_span),
            "if" => {
                Self::check_lexed(args)?;
                let value = self.eval_condition(args, name_span)?;
                self.open_group(name_span, value)
            }
            "ifdef" | "ifndef" => {
                Self::check_lexed(args)?;
                let macro_name = self.name_argument(args, name_span, &format!("#{name}"))?;
                let defined = self.macros.contains_key(macro_name.as_str());
                self.open_group(name_span, defined == (name == "ifdef"))
            }
            "elif" | "else" => {
                let Some(cond) = self.files.last_mut().and_then(|c| c.conds.last_mut()) else {
                    return Err(Diagnostic::error(name_span, format!("#{name} without #if")));
                };
                if cond.else_seen {
                    return Err(Diagnostic::error(name_span, format!("#{name} after #else")));
                }
                cond.else_seen = name == "else";
                // The branch being read was taken: skip the rest of the group.
                cond.taken = true;
                self.skip_group()
            }
            "endif" => {
                let popped = self.files.last_mut().and_then(|c| c.conds.pop());
                if popped.is_none() {
                    return Err(Diagnostic::error(name_span, "#endif without #if"));
                }
                Ok(())
            }
            "pragma" => {
                if let [word] = args
                    && word.token().and_then(macro_name) == Some("once")
                    && let Some(ctx) = self.files.last()
                {
                    self.once.insert(ctx.file.canonical.clone());
                }
                Ok(())
            }
            "error" => {
                let message = match (args.first(), args.last()) {
                    (Some(a), Some(b)) => self.sources.snippet(a.span.to(b.span)).to_string(),
                    _ => String::new(),
                };
                Err(Diagnostic::error(name_span, format!("#error {message}")))
            }
            "line" | "warning" | "ident" => Ok(()),
            other => Err(Diagnostic::error(
                name_span,
                format!("unknown preprocessing directive '#{other}'"),
            )),
        }
    }

    /// The single macro name `#undef`, `#ifdef` and `#ifndef` expect.
    fn name_argument(&self, args: &[LexedTok], at: Span, what: &str) -> FrontResult<String> {
        match args.first().and_then(LexedTok::token).and_then(macro_name) {
            Some(name) => Ok(name.to_string()),
            None => Err(Diagnostic::error(
                at,
                format!("{what} expects a macro name"),
            )),
        }
    }

    fn open_group(&mut self, span: Span, value: bool) -> FrontResult<()> {
        let Some(ctx) = self.files.last_mut() else {
            return Ok(());
        };
        ctx.conds.push(Cond {
            span,
            taken: value,
            else_seen: false,
        });
        if value { Ok(()) } else { self.skip_group() }
    }

    /// Skips lines of the current file until a branch of the innermost
    /// group is taken, or its `#endif`. Called at the start of a line.
    fn skip_group(&mut self) -> FrontResult<()> {
        let mut depth = 0usize;
        loop {
            let Some(ctx) = self.files.last_mut() else {
                return Ok(());
            };
            // Find the first token of the line.
            let mut first = None;
            while let Some(lt) = ctx.file.toks.get(ctx.pos) {
                ctx.pos += 1;
                match &lt.kind {
                    Ok(Token::LineComment(_) | Token::BlockComment(_)) => {}
                    Ok(Token::Newline) => {}
                    _ => {
                        first = Some(lt.clone());
                        break;
                    }
                }
            }
            let Some(first) = first else {
                let span = ctx.conds.last().map_or(Span::default(), |c| c.span);
                if let Some(Err(msg)) = ctx.file.toks.last().map(|t| &t.kind)
                    && &**msg == "unterminated comment"
                {
                    let comment = ctx.file.toks.last().map_or(span, |t| t.span);
                    return Err(Diagnostic::error(comment, msg.to_string()));
                }
                return Err(Diagnostic::error(span, "unterminated #if"));
            };
            let line = self.read_line();
            if first.token() != Some(&Token::Hash) {
                continue;
            }
            let Some(word) = line.first() else { continue };
            let name = word.token().map(spelling).unwrap_or_default();
            let name_span = first.span.to(word.span);
            match name.as_ref() {
                "if" | "ifdef" | "ifndef" => depth += 1,
                "endif" if depth > 0 => depth -= 1,
                "endif" => {
                    if let Some(ctx) = self.files.last_mut() {
                        ctx.conds.pop();
                    }
                    return Ok(());
                }
                "elif" | "else" if depth == 0 => {
                    let Some(cond) = self.files.last_mut().and_then(|c| c.conds.last_mut()) else {
                        return Ok(());
                    };
                    if cond.else_seen {
                        return Err(Diagnostic::error(name_span, format!("#{name} after #else")));
                    }
                    if name == "else" {
                        cond.else_seen = true;
                        if !cond.taken {
                            cond.taken = true;
                            return Ok(());
                        }
                    } else if !cond.taken {
                        Self::check_lexed(&line[1..])?;
                        if self.eval_condition(&line[1..], name_span)? {
                            if let Some(cond) =
                                self.files.last_mut().and_then(|c| c.conds.last_mut())
                            {
                                cond.taken = true;
                            }
                            return Ok(());
                        }
                    }
                }
                _ => {}
            }
        }
    }

    /// Records a `#define` (the tokens after `define`).
    fn define(&mut self, args: &[LexedTok]) -> FrontResult<()> {
        let Some(name_tok) = args.first() else {
            return Ok(());
        };
        let Some(name) = name_tok.token().and_then(macro_name) else {
            return Err(Diagnostic::error(
                name_tok.span,
                "macro name must be an identifier",
            ));
        };
        if name == "defined" {
            return Err(Diagnostic::error(
                name_tok.span,
                "'defined' cannot be a macro name",
            ));
        }
        let name: Rc<str> = Rc::from(name);
        let mut rest = &args[1..];
        let mut params: Vec<Rc<str>> = Vec::new();
        let mut variadic = false;
        let function_like = rest
            .first()
            .is_some_and(|t| t.token() == Some(&Token::LParen) && !t.space);
        if function_like {
            let open = rest[0].span;
            let mut i = 1;
            let bad = |span: Span| Diagnostic::error(span, "invalid macro parameter list");
            loop {
                let Some(t) = rest.get(i) else {
                    return Err(bad(open));
                };
                match t.token() {
                    Some(Token::RParen) if params.is_empty() && !variadic => {
                        i += 1;
                        break;
                    }
                    Some(Token::Ellipsis) => {
                        params.push(Rc::from("__VA_ARGS__"));
                        variadic = true;
                        i += 1;
                    }
                    Some(tok) => {
                        let Some(p) = macro_name(tok) else {
                            return Err(bad(t.span));
                        };
                        if params.iter().any(|q| &**q == p) {
                            return Err(Diagnostic::error(
                                t.span,
                                format!("duplicate macro parameter '{p}'"),
                            ));
                        }
                        params.push(Rc::from(p));
                        i += 1;
                        if rest.get(i).and_then(LexedTok::token) == Some(&Token::Ellipsis) {
                            variadic = true;
                            i += 1;
                        }
                    }
                    None => return Err(bad(t.span)),
                }
                match rest.get(i).and_then(LexedTok::token) {
                    Some(Token::Comma) if !variadic => i += 1,
                    Some(Token::RParen) => {
                        i += 1;
                        break;
                    }
                    _ => return Err(bad(rest.get(i).map_or(open, |t| t.span))),
                }
            }
            rest = &rest[i..];
        }
        let mut body = Vec::with_capacity(rest.len());
        for t in rest {
            let tok = t.to_tok()?.tok;
            let param = if function_like {
                macro_name(&tok).and_then(|n| params.iter().position(|p| &**p == n))
            } else {
                None
            };
            body.push(BodyTok {
                tok,
                span: t.span,
                space: t.space,
                param,
            });
        }
        if let Some(t) = body
            .first()
            .filter(|t| t.tok == Token::HashHash)
            .or_else(|| body.last().filter(|t| t.tok == Token::HashHash))
        {
            return Err(Diagnostic::error(
                t.span,
                "'##' cannot appear at either end of a macro expansion",
            ));
        }
        if function_like {
            for (i, t) in body.iter().enumerate() {
                if t.tok == Token::Hash && body.get(i + 1).is_none_or(|n| n.param.is_none()) {
                    return Err(Diagnostic::error(
                        t.span,
                        "'#' is not followed by a macro parameter",
                    ));
                }
            }
        }
        self.macros.insert(
            name.clone(),
            Rc::new(Macro {
                name,
                function_like,
                params,
                variadic,
                body,
            }),
        );
        Ok(())
    }

    /// Replaces macro `m`, used at `name`, by its expansion in the input.
    fn expand(&mut self, name: Tok, m: &Macro) -> FrontResult<()> {
        let mut result = if m.function_like {
            // `next_is_lparen` said the next token is `(`.
            self.next_token()?;
            self.collecting_args += 1;
            let collected = self.collect_args(&name, m);
            self.collecting_args -= 1;
            let (args, rparen) = collected?;
            let use_span = name.span.to(rparen.span);
            let hide = hide_with(&hide_intersection(&name.hide, &rparen.hide), &m.name);
            let mut result = self.substitute(m, &args, use_span)?;
            for t in &mut result {
                t.hide = hide_union(&t.hide, &hide);
            }
            result
        } else {
            let hide = hide_with(&name.hide, &m.name);
            let mut result = self.substitute(m, &[], name.span)?;
            for t in &mut result {
                t.hide = hide.clone();
            }
            result
        };
        if let Some(first) = result.first_mut() {
            first.space = name.space;
        }
        self.expanded_tokens += result.len();
        if self.expanded_tokens > MAX_EXPANDED_TOKENS {
            return Err(Diagnostic::error(
                name.span,
                "macro expansion produces too many tokens",
            ));
        }
        self.pending.extend(result.into_iter().rev());
        Ok(())
    }

    /// Reads the arguments of a call of `m` up to its `)`.
    fn collect_args(&mut self, name: &Tok, m: &Macro) -> FrontResult<(Vec<Vec<Tok>>, Tok)> {
        let mut args: Vec<Vec<Tok>> = vec![Vec::new()];
        let mut depth = 0usize;
        let rparen = loop {
            let Some(t) = self.next_token()? else {
                return Err(Diagnostic::error(
                    name.span,
                    format!("unterminated call of macro '{}'", m.name),
                ));
            };
            match t.tok {
                Token::LParen => depth += 1,
                Token::RParen if depth == 0 => break t,
                Token::RParen => depth -= 1,
                Token::Comma if depth == 0 && !(m.variadic && args.len() >= m.params.len()) => {
                    args.push(Vec::new());
                    continue;
                }
                _ => {}
            }
            if let Some(last) = args.last_mut() {
                last.push(t);
            }
        };
        if m.params.is_empty() && args.len() == 1 && args[0].is_empty() {
            args.clear();
        }
        if m.variadic && args.len() + 1 == m.params.len() {
            args.push(Vec::new());
        }
        if args.len() != m.params.len() {
            let expected = if m.variadic {
                format!("at least {}", m.params.len() - 1)
            } else {
                m.params.len().to_string()
            };
            return Err(Diagnostic::error(
                name.span,
                format!(
                    "macro '{}' expects {expected} argument{}, but {} given",
                    m.name,
                    if expected == "1" { "" } else { "s" },
                    args.len()
                ),
            ));
        }
        Ok((args, rparen))
    }

    /// The replacement list of `m` with its parameters replaced, `#` and
    /// `##` applied.
    fn substitute(
        &mut self,
        m: &Macro,
        args: &[Vec<Tok>],
        use_span: Span,
    ) -> FrontResult<Vec<Tok>> {
        let mut expanded: Vec<Option<Vec<Tok>>> = vec![None; args.len()];
        let mut out: Vec<Tok> = Vec::with_capacity(m.body.len());
        // The last item pushed was an empty argument next to `##`.
        let mut placemarker = false;
        let body = &m.body;
        let from_body = |b: &BodyTok| Tok {
            tok: b.tok.clone(),
            span: use_span,
            space: b.space,
            hide: None,
        };
        let mut i = 0;
        while i < body.len() {
            let b = &body[i];
            let next = body.get(i + 1);
            if m.function_like
                && b.tok == Token::Hash
                && let Some(p) = next.and_then(|n| n.param)
            {
                let mut t = stringify(&args[p], use_span);
                t.space = b.space;
                out.push(t);
                placemarker = false;
                i += 2;
                continue;
            }
            if b.tok == Token::HashHash
                && let Some(next) = next
            {
                let rhs: Vec<Tok> = match next.param {
                    Some(p) => args[p].clone(),
                    None => vec![from_body(next)],
                };
                i += 2;
                // GNU `, ## __VA_ARGS__`: the comma goes when nothing is passed.
                if m.variadic
                    && next.param == Some(m.params.len() - 1)
                    && rhs.is_empty()
                    && !placemarker
                    && out.last().is_some_and(|t| t.tok == Token::Comma)
                {
                    out.pop();
                    continue;
                }
                let mut rhs = rhs.into_iter();
                if placemarker {
                    out.extend(rhs);
                } else if let Some(first) = rhs.next() {
                    match out.pop() {
                        Some(lhs) => out.push(paste(&lhs, &first, use_span)?),
                        None => out.push(first),
                    }
                    out.extend(rhs);
                }
                placemarker = out.is_empty();
                continue;
            }
            match b.param {
                Some(p) if next.is_some_and(|n| n.tok == Token::HashHash) => {
                    placemarker = args[p].is_empty();
                    out.extend(args[p].iter().cloned());
                }
                Some(p) => {
                    if expanded[p].is_none() {
                        expanded[p] = Some(self.expand_isolated(args[p].clone(), use_span)?);
                    }
                    let mut toks = expanded[p].clone().unwrap_or_default();
                    if let Some(first) = toks.first_mut() {
                        first.space = b.space;
                    }
                    out.extend(toks);
                    placemarker = false;
                }
                None => {
                    out.push(from_body(b));
                    placemarker = false;
                }
            }
            i += 1;
        }
        Ok(out)
    }

    /// Fully macro-expands a token list on its own (a macro argument, an
    /// `#if` expression).
    fn expand_isolated(&mut self, toks: Vec<Tok>, at: Span) -> FrontResult<Vec<Tok>> {
        if self.depth >= MAX_EXPANSION_DEPTH {
            return Err(Diagnostic::error(at, "macro expansion nested too deeply"));
        }
        let saved = (self.floor, self.isolated);
        self.depth += 1;
        self.floor = self.pending.len();
        self.isolated = true;
        self.pending.extend(toks.into_iter().rev());
        let mut out = Vec::new();
        let result = loop {
            match self.next_expanded() {
                Ok(Some(t)) => out.push(t),
                Ok(None) => break Ok(out),
                Err(e) => break Err(e),
            }
        };
        self.pending.truncate(self.floor);
        (self.floor, self.isolated) = saved;
        self.depth -= 1;
        result
    }

    /// Evaluates the expression of `#if` or `#elif`.
    fn eval_condition(&mut self, args: &[LexedTok], at: Span) -> FrontResult<bool> {
        let mut toks = Vec::with_capacity(args.len());
        let mut i = 0;
        while i < args.len() {
            let t = args[i].to_tok()?;
            if matches!(&t.tok, Token::Ident(n) if &**n == "defined") {
                let (name, used) = match args.get(i + 1).and_then(LexedTok::token) {
                    Some(Token::LParen) => (
                        args.get(i + 2)
                            .and_then(LexedTok::token)
                            .and_then(macro_name),
                        args.get(i + 3).and_then(LexedTok::token) == Some(&Token::RParen),
                    ),
                    Some(tok) => (macro_name(tok), true),
                    None => (None, false),
                };
                let Some(name) = name.filter(|_| used) else {
                    return Err(Diagnostic::error(t.span, "'defined' expects a macro name"));
                };
                let value = if self.macros.contains_key(name) {
                    "1"
                } else {
                    "0"
                };
                toks.push(Tok {
                    tok: Token::IntLit(Rc::from(value)),
                    ..t
                });
                i += if args[i + 1].token() == Some(&Token::LParen) {
                    4
                } else {
                    2
                };
                continue;
            }
            toks.push(t);
            i += 1;
        }
        let toks = self.expand_isolated(toks, at)?;
        if toks.is_empty() {
            return Err(Diagnostic::error(at, "#if with no expression"));
        }
        let mut eval = Evaluator {
            toks: &toks,
            pos: 0,
            live: true,
            at,
            nesting: 0,
        };
        let value = eval.conditional()?;
        if let Some(extra) = toks.get(eval.pos) {
            return Err(Diagnostic::error(
                extra.span,
                format!("unexpected '{}' in #if expression", spelling(&extra.tok)),
            ));
        }
        Ok(value.is_true())
    }

    /// Carries out `#include`; `args` follow the word `include`.
    fn include(&mut self, args: &[LexedTok], hash: Span, name_span: Span) -> FrontResult<()> {
        let line_span = args.last().map_or(name_span, |t| hash.to(t.span));
        if self.collecting_args > 0 {
            return Err(Diagnostic::error(
                name_span,
                "#include inside macro arguments",
            ));
        }
        let (name, system) = match args.first().map(|t| &t.kind) {
            Some(Ok(Token::StrLit(s))) => (s[1..s.len() - 1].to_string(), false),
            Some(Ok(Token::Lt)) => {
                let Some(gt) = args.iter().find(|t| t.token() == Some(&Token::Gt)) else {
                    return Err(Diagnostic::error(line_span, "missing '>' in #include"));
                };
                let inner = Span {
                    lo: args[0].span.hi,
                    hi: gt.span.lo,
                    ..gt.span
                };
                (self.sources.snippet(inner).to_string(), true)
            }
            _ => {
                // `#include MACRO`: the expansion must be a string.
                Self::check_lexed(args)?;
                let toks = args
                    .iter()
                    .map(LexedTok::to_tok)
                    .collect::<FrontResult<Vec<_>>>()?;
                let expanded = self.expand_isolated(toks, name_span)?;
                match expanded.as_slice() {
                    [
                        Tok {
                            tok: Token::StrLit(s),
                            ..
                        },
                    ] => (s[1..s.len() - 1].to_string(), false),
                    _ => {
                        return Err(Diagnostic::error(
                            line_span,
                            "#include expects \"FILE\" or <FILE>",
                        ));
                    }
                }
            }
        };
        if name.is_empty() {
            return Err(Diagnostic::error(line_span, "empty file name in #include"));
        }
        if self.files.len() > MAX_INCLUDE_DEPTH {
            return Err(Diagnostic::error(line_span, "#include nested too deeply"));
        }
        let written = if system {
            format!("#include <{name}>")
        } else {
            format!("#include \"{name}\"")
        };
        let including_dir = self.files.last().and_then(|c| c.file.dir.clone());
        let mut candidates: Vec<PathBuf> = Vec::new();
        if !system && let Some(dir) = including_dir {
            candidates.push(dir.join(&name));
        }
        candidates.extend(self.options.include_dirs.iter().map(|d| d.join(&name)));
        let local = candidates.into_iter().find(|p| p.is_file());
        let known_system = system::header_text(&name);
        let file = match (local, known_system) {
            (_, Some(text)) if system => Some(self.system_file(&name, text)),
            (Some(path), _) => Some(self.local_file(&path, line_span)?),
            (None, Some(text)) => Some(self.system_file(&name, text)),
            (None, None) if system => None,
            (None, None) => {
                return Err(Diagnostic::error(
                    line_span,
                    format!("cannot find include file '{name}'"),
                ));
            }
        };
        // `None` inside: the file is known but must not be read again.
        let file = file.flatten();
        let index = self.out.includes.len() as u32;
        self.out.includes.push(IncludeRecord {
            written,
            system,
            file: file.as_ref().map(|f| f.id),
            trailing: self.line_comment.clone(),
        });
        self.pending.push(Tok {
            tok: Token::IncludeMark(index),
            span: line_span,
            space: true,
            hide: None,
        });
        if let Some(file) = file {
            self.files.push(FileCtx::new(file));
        }
        Ok(())
    }

    /// The virtual file of a known system header, or `None` when it was
    /// already injected in this translation unit.
    fn system_file(&mut self, name: &str, text: &str) -> Option<Rc<LexedFile>> {
        if !self.system_injected.insert(name.to_string()) {
            return None;
        }
        let path = format!("<{name}>");
        let id = self.sources.add(&path, text.to_string());
        self.out.system_files.insert(id);
        Some(Rc::new(lex_into_file(
            self.sources,
            id,
            None,
            PathBuf::from(path),
        )))
    }

    /// A local file to read for an `#include`, or `None` when `#pragma once`
    /// or its include guard says it must be skipped.
    fn local_file(&mut self, path: &Path, at: Span) -> FrontResult<Option<Rc<LexedFile>>> {
        let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        if self.once.contains(&canonical) {
            return Ok(None);
        }
        let file = match self.cache.get(&canonical) {
            Some(file) => file.clone(),
            None => {
                let file = match load_file(self.sources, path) {
                    Ok(file) => file,
                    Err(LoadError::Located(d)) => return Err(d),
                    Err(LoadError::Unreadable(why)) => {
                        return Err(Diagnostic::error(
                            at,
                            format!("cannot read include file '{}': {why}", path.display()),
                        ));
                    }
                };
                self.cache.insert(canonical, file.clone());
                file
            }
        };
        if file
            .guard
            .as_ref()
            .is_some_and(|g| self.macros.contains_key(g))
        {
            return Ok(None);
        }
        Ok(Some(file))
    }
}

/// `#x`: the spelling of an argument as a string literal.
fn stringify(arg: &[Tok], span: Span) -> Tok {
    let mut text = String::from("\"");
    for (i, t) in arg.iter().enumerate() {
        if i > 0 && t.space {
            text.push(' ');
        }
        let s = spelling(&t.tok);
        if matches!(t.tok, Token::StrLit(_) | Token::CharLit(_)) {
            for c in s.chars() {
                if c == '"' || c == '\\' {
                    text.push('\\');
                }
                text.push(c);
            }
        } else {
            text.push_str(&s);
        }
    }
    text.push('"');
    Tok {
        tok: Token::StrLit(Rc::from(text)),
        span,
        space: false,
        hide: None,
    }
}

/// `a ## b`: the token spelled by both spellings glued together.
fn paste(lhs: &Tok, rhs: &Tok, span: Span) -> FrontResult<Tok> {
    let (a, b) = (spelling(&lhs.tok), spelling(&rhs.tok));
    let glued = format!("{a}{b}");
    let mut lexer = Token::lexer(&glued);
    let tok = match (lexer.next(), lexer.next()) {
        (Some(Ok(tok)), None)
            if lexer.span().end == glued.len()
                && !matches!(
                    tok,
                    Token::LineComment(_) | Token::BlockComment(_) | Token::Newline
                ) =>
        {
            tok
        }
        _ => {
            return Err(Diagnostic::error(
                span,
                format!("pasting \"{a}\" and \"{b}\" does not give a valid preprocessing token"),
            ));
        }
    };
    Ok(Tok {
        tok,
        span,
        space: lhs.space,
        hide: None,
    })
}

/// A value of an `#if` expression: C evaluates them in `intmax_t` or
/// `uintmax_t`, and an unsigned operand makes an operation unsigned
/// (`-1 < 0u` is false).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct PpNum {
    bits: i64,
    unsigned: bool,
}

impl PpNum {
    fn signed(bits: i64) -> PpNum {
        PpNum {
            bits,
            unsigned: false,
        }
    }

    fn truth(b: bool) -> PpNum {
        PpNum::signed(i64::from(b))
    }

    fn is_true(self) -> bool {
        self.bits != 0
    }
}

/// The evaluator of `#if` expressions, with wrapping 64-bit arithmetic,
/// signed or unsigned as C's conversions say.
struct Evaluator<'t> {
    toks: &'t [Tok],
    pos: usize,
    /// The operand being evaluated matters (not behind a short circuit), so
    /// a division by zero is an error.
    live: bool,
    at: Span,
    /// Nesting of parentheses and unary operators, bounded so that no input
    /// exhausts the stack.
    nesting: usize,
}

/// How deep an `#if` expression may nest.
const MAX_IF_NESTING: usize = 256;

impl Evaluator<'_> {
    fn peek(&self) -> Option<&Token> {
        self.toks.get(self.pos).map(|t| &t.tok)
    }

    fn error_here(&self, what: &str) -> Diagnostic {
        match self.toks.get(self.pos) {
            Some(t) => Diagnostic::error(
                t.span,
                format!("{what} in #if expression, found '{}'", spelling(&t.tok)),
            ),
            None => Diagnostic::error(self.at, format!("{what} at the end of #if expression")),
        }
    }

    fn expect(&mut self, tok: Token, what: &str) -> FrontResult<()> {
        if self.peek() == Some(&tok) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.error_here(what))
        }
    }

    fn conditional(&mut self) -> FrontResult<PpNum> {
        self.nesting += 1;
        let value = self.conditional_nested();
        self.nesting -= 1;
        value
    }

    fn conditional_nested(&mut self) -> FrontResult<PpNum> {
        if self.nesting > MAX_IF_NESTING {
            return Err(Diagnostic::error(
                self.toks.get(self.pos).map_or(self.at, |t| t.span),
                "#if expression nested too deeply",
            ));
        }
        let cond = self.binary(0)?;
        if self.peek() != Some(&Token::Question) {
            return Ok(cond);
        }
        self.pos += 1;
        let live = self.live;
        self.live = live && cond.is_true();
        let yes = self.conditional()?;
        self.expect(Token::Colon, "expected ':'")?;
        self.live = live && !cond.is_true();
        let no = self.conditional()?;
        self.live = live;
        let unsigned = yes.unsigned || no.unsigned;
        let chosen = if cond.is_true() { yes } else { no };
        Ok(PpNum {
            bits: chosen.bits,
            unsigned,
        })
    }

    fn precedence(tok: &Token) -> Option<u8> {
        Some(match tok {
            Token::OrOr => 1,
            Token::AndAnd => 2,
            Token::Pipe => 3,
            Token::Caret => 4,
            Token::Amp => 5,
            Token::EqEq | Token::NotEq => 6,
            Token::Lt | Token::Gt | Token::Le | Token::Ge => 7,
            Token::Shl | Token::Shr => 8,
            Token::Plus | Token::Minus => 9,
            Token::Star | Token::Slash | Token::Percent => 10,
            _ => return None,
        })
    }

    fn binary(&mut self, min: u8) -> FrontResult<PpNum> {
        let mut lhs = self.unary()?;
        while let Some(op) = self.peek().cloned() {
            let Some(prec) = Self::precedence(&op) else {
                break;
            };
            if prec <= min {
                break;
            }
            let op_span = self.toks[self.pos].span;
            self.pos += 1;
            let live = self.live;
            match op {
                Token::AndAnd => self.live = live && lhs.is_true(),
                Token::OrOr => self.live = live && !lhs.is_true(),
                _ => {}
            }
            let rhs = self.binary(prec)?;
            self.live = live;
            let unsigned = lhs.unsigned || rhs.unsigned;
            let (a, b) = (lhs.bits, rhs.bits);
            let (ua, ub) = (a as u64, b as u64);
            let arith = |bits: i64| PpNum { bits, unsigned };
            lhs = match op {
                Token::OrOr => PpNum::truth(lhs.is_true() || rhs.is_true()),
                Token::AndAnd => PpNum::truth(lhs.is_true() && rhs.is_true()),
                Token::Pipe => arith(a | b),
                Token::Caret => arith(a ^ b),
                Token::Amp => arith(a & b),
                Token::EqEq => PpNum::truth(a == b),
                Token::NotEq => PpNum::truth(a != b),
                Token::Lt if unsigned => PpNum::truth(ua < ub),
                Token::Gt if unsigned => PpNum::truth(ua > ub),
                Token::Le if unsigned => PpNum::truth(ua <= ub),
                Token::Ge if unsigned => PpNum::truth(ua >= ub),
                Token::Lt => PpNum::truth(a < b),
                Token::Gt => PpNum::truth(a > b),
                Token::Le => PpNum::truth(a <= b),
                Token::Ge => PpNum::truth(a >= b),
                // A shift has the type of its left operand.
                Token::Shl => PpNum {
                    bits: a.wrapping_shl(b as u32 & 63),
                    unsigned: lhs.unsigned,
                },
                Token::Shr if lhs.unsigned => PpNum {
                    bits: ua.wrapping_shr(b as u32 & 63) as i64,
                    unsigned: true,
                },
                Token::Shr => PpNum::signed(a.wrapping_shr(b as u32 & 63)),
                Token::Plus => arith(a.wrapping_add(b)),
                Token::Minus => arith(a.wrapping_sub(b)),
                Token::Star => arith(a.wrapping_mul(b)),
                Token::Slash | Token::Percent if b == 0 => {
                    if self.live {
                        return Err(Diagnostic::error(op_span, "division by zero in #if"));
                    }
                    arith(0)
                }
                Token::Slash if unsigned => arith((ua / ub) as i64),
                Token::Slash => arith(a.wrapping_div(b)),
                _ if unsigned => arith((ua % ub) as i64),
                _ => arith(a.wrapping_rem(b)),
            };
        }
        Ok(lhs)
    }

    fn unary(&mut self) -> FrontResult<PpNum> {
        self.nesting += 1;
        let value = self.unary_nested();
        self.nesting -= 1;
        value
    }

    fn unary_nested(&mut self) -> FrontResult<PpNum> {
        let Some(t) = self.toks.get(self.pos) else {
            return Err(self.error_here("expected a value"));
        };
        if self.nesting > MAX_IF_NESTING {
            return Err(Diagnostic::error(
                t.span,
                "#if expression nested too deeply",
            ));
        }
        let span = t.span;
        self.pos += 1;
        Ok(match &t.tok {
            Token::Plus => self.unary()?,
            Token::Minus => {
                let v = self.unary()?;
                PpNum {
                    bits: v.bits.wrapping_neg(),
                    ..v
                }
            }
            Token::Bang => PpNum::truth(!self.unary()?.is_true()),
            Token::Tilde => {
                let v = self.unary()?;
                PpNum { bits: !v.bits, ..v }
            }
            Token::LParen => {
                let value = self.conditional()?;
                self.expect(Token::RParen, "expected ')'")?;
                value
            }
            Token::IntLit(s) => parse_int(s).ok_or_else(|| {
                Diagnostic::error(span, format!("invalid integer constant '{s}' in #if"))
            })?,
            Token::CharLit(s) => PpNum::signed(char_value(s)),
            Token::FloatLit(_) => {
                return Err(Diagnostic::error(
                    span,
                    "floating constant in #if expression",
                ));
            }
            tok if macro_name(tok).is_some() => PpNum::signed(0),
            _ => {
                self.pos -= 1;
                return Err(self.error_here("expected a value"));
            }
        })
    }
}

/// The value of a C integer literal in `#if`: unsigned with a `u` suffix
/// or when it does not fit `intmax_t`.
fn parse_int(s: &str) -> Option<PpNum> {
    let digits = s.trim_end_matches(['u', 'U', 'l', 'L']);
    let value = if let Some(hex) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        u64::from_str_radix(hex, 16).ok()?
    } else if digits.len() > 1 && digits.starts_with('0') {
        u64::from_str_radix(&digits[1..], 8).ok()?
    } else {
        digits.parse::<u64>().ok()?
    };
    Some(PpNum {
        bits: value as i64,
        unsigned: s.contains(['u', 'U']) || value > i64::MAX as u64,
    })
}

/// The value of a character literal such as `'a'` or `'\n'`.
fn char_value(s: &str) -> i64 {
    let inner = s.get(1..s.len().saturating_sub(1)).unwrap_or("");
    let mut chars = inner.chars();
    match (chars.next(), chars.next()) {
        (Some('\\'), Some(c)) => match c {
            'n' => 10,
            't' => 9,
            'r' => 13,
            'a' => 7,
            'b' => 8,
            'f' => 12,
            'v' => 11,
            'x' => i64::from_str_radix(chars.as_str(), 16).unwrap_or(0),
            '0'..='7' => {
                let octal: String = std::iter::once(c).chain(chars).collect();
                i64::from_str_radix(&octal, 8).unwrap_or(0)
            }
            other => other as i64,
        },
        (Some(c), _) => c as i64,
        (None, _) => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int_literals() {
        let signed = |v| Some(PpNum::signed(v));
        assert_eq!(parse_int("10"), signed(10));
        assert_eq!(parse_int("0x1F"), signed(31));
        assert_eq!(parse_int("010"), signed(8));
        assert_eq!(parse_int("199901L"), signed(199901));
        assert_eq!(parse_int("09"), None);
        assert_eq!(
            parse_int("0u"),
            Some(PpNum {
                bits: 0,
                unsigned: true
            })
        );
        assert_eq!(
            parse_int("0xFFFFFFFFFFFFFFFF"),
            Some(PpNum {
                bits: -1,
                unsigned: true
            })
        );
    }

    #[test]
    fn char_literals() {
        assert_eq!(char_value("'a'"), 97);
        assert_eq!(char_value("'\\n'"), 10);
        assert_eq!(char_value("'\\0'"), 0);
    }

    #[test]
    fn system_headers_lex_cleanly() {
        for name in system::known_headers() {
            let text = system::header_text(name).unwrap_or_default();
            for t in lex_text(FileId(0), text) {
                assert!(t.kind.is_ok(), "{name}: {:?}", t.kind);
            }
        }
    }
}
