//! The parser: preprocessed tokens in, syntax tree (`ast`) out.
//!
//! Three steps:
//!
//! 1. The typedef "lexer hack" ([`TypedefScanner`]): identifiers that name
//!    a typedef in scope are re-tagged [`Token::TypeName`], so that the
//!    LR(1) grammar can tell declarations and casts from expressions.
//! 2. The lalrpop grammar (`grammar/c.lalrpop`) runs over the token stream.
//!    Its locations are token indices; its actions call back into
//!    [`ParseCtx`] to turn index ranges into spans, to attach comments, and
//!    to bound the depth of the tree.
//! 3. Comments no node claimed (for instance before an `#include` line) are
//!    given to the next top-level item, and a parse error becomes a located
//!    [`Diagnostic`] with a short, readable message.

use super::ast::{
    Compound, Declaration, Declarator, DeclaratorKind, Expr, ExprKind, ExternalDecl, Initializer,
    Stmt, StmtKind, StructField, StructSpec, TranslationUnit,
};
use super::diag::{Diagnostic, FrontResult};
use super::lexer::Token;
use super::preprocess::{PpComment, PpToken, Preprocessed};
use super::source::{FileId, SourceMap, Span};
use crate::il::Comments;
use lalrpop_util::ParseError;
use rustc_hash::FxHashMap as HashMap;
use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::BTreeSet;
use std::rc::Rc;

lalrpop_util::lalrpop_mod!(
    #[allow(clippy::all, clippy::pedantic, unused_parens, unused_imports)]
    grammar,
    "/c.rs"
);

/// The deepest syntax tree the parser builds, counted in nested
/// expressions, statements, declarators, initializer lists and struct
/// bodies. Everything after parsing walks the tree recursively, so a deeper
/// (pathological) input is rejected instead of overflowing the stack.
pub const MAX_NESTING: u32 = 1000;

/// How deep the typedef scanner follows nested parameter lists and struct
/// bodies before it skips their contents flatly.
const MAX_SCAN_NESTING: u32 = 64;

/// At most this many alternatives are listed in "expected ..." messages.
const MAX_EXPECTED_LISTED: usize = 6;

type GrammarError = ParseError<usize, Token, Diagnostic>;

/// Parses a preprocessed token stream into a syntax tree.
pub fn parse(pp: &Preprocessed, _sources: &SourceMap) -> FrontResult<TranslationUnit> {
    for t in &pp.tokens {
        if matches!(
            t.tok,
            Token::Newline
                | Token::LineComment(_)
                | Token::BlockComment(_)
                | Token::Hash
                | Token::HashHash
        ) {
            return Err(Diagnostic::error(
                t.span,
                format!("unexpected '{}'", spelling(&t.tok)),
            ));
        }
    }
    let mut tokens: Vec<Token> = pp.tokens.iter().map(|t| t.tok.clone()).collect();
    TypedefScanner::new(&mut tokens).run();
    let ctx = ParseCtx::new(pp);
    let stream = tokens
        .into_iter()
        .enumerate()
        .map(|(i, t)| Ok::<_, Diagnostic>((i, t, i + 1)));
    match grammar::TranslationUnitParser::new().parse(&ctx, stream) {
        Ok(items) => Ok(ctx.finish(items)),
        Err(e) => Err(ctx.diagnostic(e)),
    }
}

// ---------------------------------------------------------------------------
// Parse context: spans, comments, depth bound
// ---------------------------------------------------------------------------

/// What the grammar's actions need besides the tokens: spans of token
/// ranges, the comments not yet attached to a node, and the open subtrees'
/// depths.
pub(crate) struct ParseCtx<'a> {
    tokens: &'a [PpToken],
    final_comments: &'a [PpComment],
    main_file: FileId,
    /// Comments not attached yet, as (token index, index in that token's
    /// comments); token index `tokens.len()` stands for `final_comments`.
    unclaimed: RefCell<BTreeSet<(usize, usize)>>,
    /// Depth-tracked nodes built but not yet inside a tracked parent, as
    /// (first token, depth). LR parsing builds children before parents and
    /// left to right, so the entries starting inside a new node's range are
    /// exactly its (tracked) descendants still on this stack.
    open_nodes: RefCell<Vec<(usize, u32)>>,
}

impl<'a> ParseCtx<'a> {
    fn new(pp: &'a Preprocessed) -> ParseCtx<'a> {
        let mut unclaimed = BTreeSet::new();
        for (t, tok) in pp.tokens.iter().enumerate() {
            for k in 0..tok.comments.len() {
                unclaimed.insert((t, k));
            }
        }
        for k in 0..pp.final_comments.len() {
            unclaimed.insert((pp.tokens.len(), k));
        }
        ParseCtx {
            tokens: &pp.tokens,
            final_comments: &pp.final_comments,
            main_file: pp.main_file,
            unclaimed: RefCell::new(unclaimed),
            open_nodes: RefCell::new(Vec::new()),
        }
    }

    /// The span of tokens `l..r`; an empty range gives an empty span where
    /// the next token starts.
    pub(crate) fn span(&self, l: usize, r: usize) -> Span {
        if l < r && r <= self.tokens.len() {
            return self.tokens[l].span.to(self.tokens[r - 1].span);
        }
        if let Some(t) = self.tokens.get(l) {
            return Span {
                hi: t.span.lo,
                ..t.span
            };
        }
        match self.tokens.last() {
            Some(t) => Span {
                lo: t.span.hi,
                ..t.span
            },
            None => Span::new(self.main_file, 0, 0),
        }
    }

    fn comment(&self, token: usize, k: usize) -> Option<&PpComment> {
        match self.tokens.get(token) {
            Some(t) => t.comments.get(k),
            None => self.final_comments.get(k),
        }
    }

    /// Claims the unclaimed comments written before tokens `from..to`
    /// (`to` may be `tokens.len() + 1` to include the final comments) that
    /// satisfy `keep`.
    fn claim(&self, from: usize, to: usize, keep: impl Fn(&PpComment) -> bool) -> Vec<String> {
        if from >= to {
            return Vec::new();
        }
        // Most single tokens have no comments: skip the set lookup.
        if to == from + 1 && self.tokens.get(from).is_some_and(|t| t.comments.is_empty()) {
            return Vec::new();
        }
        let mut unclaimed = self.unclaimed.borrow_mut();
        let found: Vec<(usize, usize)> = unclaimed
            .range((from, 0)..(to, 0))
            .copied()
            .filter(|&(t, k)| self.comment(t, k).is_some_and(&keep))
            .collect();
        found
            .into_iter()
            .filter_map(|key| {
                unclaimed.remove(&key);
                self.comment(key.0, key.1).map(|c| c.text.clone())
            })
            .collect()
    }

    /// The comments of a node covering tokens `l..r`: as leading, the
    /// comments before its first token (those its predecessor did not take
    /// as trailing) and any left inside it by its children; as trailing, the
    /// comments on the line of its last token, written just after it.
    pub(crate) fn comments(&self, l: usize, r: usize) -> Comments {
        let trailing = self.claim(r, r + 1, |c| c.same_line_as_prev);
        // Comments of another file before the node's first token (those of
        // an included header that holds no item) stay with that file: the
        // `#include` line stands for them.
        let file = self.tokens.get(l).map(|t| t.span.file);
        let mut leading = self.claim(l, l + 1, |c| Some(c.span.file) == file);
        leading.extend(self.claim(l + 1, r, |_| true));
        Comments {
            leading,
            trailing: if trailing.is_empty() {
                None
            } else {
                Some(trailing.join(" "))
            },
        }
    }

    /// Records a node covering tokens `l..r` and fails when it nests deeper
    /// than [`MAX_NESTING`].
    fn track(&self, l: usize, r: usize) -> Result<(), GrammarError> {
        let mut open = self.open_nodes.borrow_mut();
        let mut child_depth = 0;
        while let Some(&(start, depth)) = open.last() {
            if start < l {
                break;
            }
            child_depth = child_depth.max(depth);
            open.pop();
        }
        let depth = child_depth + 1;
        if depth > MAX_NESTING {
            return Err(ParseError::User {
                error: Diagnostic::error(
                    self.span(l, r),
                    format!(
                        "this construct is nested too deeply (more than {MAX_NESTING} levels; \
                         each binary operator of a chain and each `else if` counts as one: \
                         split a long sum or branch chain into several statements)"
                    ),
                ),
            });
        }
        open.push((l, depth));
        Ok(())
    }

    pub(crate) fn compound_literal(
        &self,
        t: crate::front::ast::TypeName,
        items: Vec<Initializer>,
        l: usize,
        r: usize,
    ) -> Result<Expr, GrammarError> {
        let list = self.init_list(items, l, r)?;
        self.expr(ExprKind::CompoundLiteral(Box::new(t), Box::new(list)), l, r)
    }

    pub(crate) fn expr(&self, kind: ExprKind, l: usize, r: usize) -> Result<Expr, GrammarError> {
        self.track(l, r)?;
        Ok(Expr {
            kind,
            span: self.span(l, r),
        })
    }

    pub(crate) fn declarator(
        &self,
        kind: DeclaratorKind,
        l: usize,
        r: usize,
    ) -> Result<Declarator, GrammarError> {
        self.track(l, r)?;
        Ok(Declarator {
            kind,
            span: self.span(l, r),
        })
    }

    pub(crate) fn stmt(&self, kind: StmtKind, l: usize, r: usize) -> Result<Stmt, GrammarError> {
        self.track(l, r)?;
        Ok(Stmt {
            kind,
            span: self.span(l, r),
            comments: self.comments(l, r),
        })
    }

    /// A declaration in a block: its comments move to the statement, the
    /// one place lowering looks for a statement's comments.
    pub(crate) fn decl_stmt(
        &self,
        mut decl: Declaration,
        l: usize,
        r: usize,
    ) -> Result<Stmt, GrammarError> {
        let mut comments = std::mem::take(&mut decl.comments);
        let mut stmt = self.stmt(StmtKind::Decl(decl), l, r)?;
        comments.leading.append(&mut stmt.comments.leading);
        if comments.trailing.is_none() {
            comments.trailing = stmt.comments.trailing.take();
        }
        stmt.comments = comments;
        Ok(stmt)
    }

    /// A `{ ... }` block; `close` is the index of its `}`, whose unclaimed
    /// comments are the block's closing comments.
    pub(crate) fn compound(
        &self,
        items: Vec<Stmt>,
        close: usize,
        l: usize,
        r: usize,
    ) -> Result<Compound, GrammarError> {
        self.track(l, r)?;
        Ok(Compound {
            items,
            closing_comments: self.claim(close, close + 1, |_| true),
            span: self.span(l, r),
        })
    }

    pub(crate) fn struct_spec(
        &self,
        tag: Option<(String, Span)>,
        fields: Option<Vec<StructField>>,
        l: usize,
        r: usize,
    ) -> Result<StructSpec, GrammarError> {
        self.track(l, r)?;
        Ok(StructSpec {
            tag,
            fields,
            span: self.span(l, r),
        })
    }

    pub(crate) fn init_list(
        &self,
        items: Vec<Initializer>,
        l: usize,
        r: usize,
    ) -> Result<Initializer, GrammarError> {
        self.track(l, r)?;
        Ok(Initializer::List(items, self.span(l, r)))
    }

    /// Builds the translation unit, giving each comment still unclaimed to
    /// the next function or declaration (or, after the last one, to the
    /// closing comments of the last function).
    fn finish(&self, items: Vec<(usize, usize, ExternalDecl)>) -> TranslationUnit {
        let leftovers: Vec<(usize, usize)> = self.unclaimed.borrow().iter().copied().collect();
        let mut before: Vec<Vec<String>> = vec![Vec::new(); items.len()];
        let mut inside: Vec<Vec<String>> = vec![Vec::new(); items.len()];
        let mut at_end = Vec::new();
        // The file an item was written in (its first token's).
        let file_of = |l: usize| self.tokens.get(l).map(|tok| tok.span.file);
        for (t, k) in leftovers {
            let Some((text, file)) = self.comment(t, k).map(|c| (c.text.clone(), c.span.file))
            else {
                continue;
            };
            let first = items.partition_point(|(_, r, _)| *r <= t);
            // A comment of an included file that holds no item there (a
            // header of macros only) stays in that file: the `#include`
            // line stands for it.
            if first < items.len() && file_of(items[first].0) != Some(file) {
                continue;
            }
            // A comment right before an `#include` stays with it: the next
            // declaration may come from the included file and never be
            // printed.
            if first < items.len() && matches!(items[first].2, ExternalDecl::Include(..)) {
                before[first].push(text);
                continue;
            }
            let target =
                (first..items.len()).find(|&j| !matches!(items[j].2, ExternalDecl::Include(..)));
            match target {
                Some(j) if items[j].0 < t => inside[j].push(text),
                Some(j) => before[j].push(text),
                None => at_end.push(text),
            }
        }
        let mut items: Vec<ExternalDecl> = items.into_iter().map(|(_, _, d)| d).collect();
        for (j, item) in items.iter_mut().enumerate() {
            let comments = match item {
                ExternalDecl::Function(f) => &mut f.comments,
                ExternalDecl::Declaration(d) => &mut d.comments,
                ExternalDecl::Include(_, _, c) => c,
            };
            if before[j].is_empty() && inside[j].is_empty() {
                continue;
            }
            let mut leading = std::mem::take(&mut before[j]);
            leading.append(&mut comments.leading);
            leading.append(&mut inside[j]);
            comments.leading = leading;
        }
        TranslationUnit {
            items,
            final_comments: at_end,
        }
    }

    /// Turns a grammar error into a diagnostic at the offending token.
    fn diagnostic(&self, error: GrammarError) -> Diagnostic {
        match error {
            ParseError::User { error } => error,
            // `T x` where T is an identifier no typedef names: C allows two
            // identifiers in a row only after a type name, so T is a type
            // the tool does not know (`va_list ap`, `_Complex z`).
            ParseError::UnrecognizedToken {
                token: (l, Token::Ident(_), _),
                ..
            } if l > 0
                && matches!(
                    self.tokens.get(l - 1).map(|t| &t.tok),
                    Some(Token::Ident(_))
                )
                // ... where a declaration may start (`double x y;` is
                // another mistake).
                && (l < 2
                    || matches!(
                        self.tokens.get(l - 2).map(|t| &t.tok),
                        Some(
                            Token::Semi
                                | Token::LBrace
                                | Token::RBrace
                                | Token::LParen
                                | Token::Comma
                                | Token::KwConst
                                | Token::KwStatic
                                | Token::KwExtern
                                | Token::Newline
                        )
                    )) =>
            {
                let Some(Token::Ident(name)) = self.tokens.get(l - 1).map(|t| &t.tok) else {
                    unreachable!()
                };
                let message = if matches!(&**name, "va_list" | "__builtin_va_list") {
                    "varargs (va_list, va_start, va_arg) are not supported".to_string()
                } else {
                    format!("unknown type name '{name}'")
                };
                Diagnostic::error(self.span(l - 1, l), message)
            }
            ParseError::UnrecognizedToken {
                token: (l, tok, _),
                expected,
            } => Diagnostic::error(
                self.span(l, l + 1),
                match describe_expected(&expected) {
                    Some(list) => format!("expected {list}, found '{}'", spelling(&tok)),
                    None => format!("unexpected '{}'", spelling(&tok)),
                },
            ),
            ParseError::ExtraToken { token: (l, tok, _) } => Diagnostic::error(
                self.span(l, l + 1),
                format!("unexpected '{}'", spelling(&tok)),
            ),
            ParseError::InvalidToken { location } => {
                Diagnostic::error(self.span(location, location + 1), "invalid token")
            }
            ParseError::UnrecognizedEof { expected, .. } => {
                let end = self
                    .tokens
                    .iter()
                    .rev()
                    .find(|t| t.span.file == self.main_file)
                    .map_or(Span::new(self.main_file, 0, 0), |t| Span {
                        lo: t.span.hi,
                        ..t.span
                    });
                let message = match describe_expected(&expected) {
                    Some(list) => format!("unexpected end of input, expected {list}"),
                    None => "unexpected end of input".to_string(),
                };
                Diagnostic::error(end, message)
            }
        }
    }
}

/// How a token reads in a message.
fn spelling(tok: &Token) -> Cow<'static, str> {
    match tok {
        Token::IncludeMark(_) => Cow::Borrowed("#include"),
        Token::Newline => Cow::Borrowed("newline"),
        other => super::lexer::spelling(other),
    }
}

/// Terminals that can start an expression (as the grammar names them).
const EXPRESSION_START: &[&str] = &[
    "Ident",
    "IntLit",
    "FloatLit",
    "CharLit",
    "StrLit",
    "\"(\"",
    "\"&\"",
    "\"*\"",
    "\"+\"",
    "\"-\"",
    "\"~\"",
    "\"!\"",
    "\"++\"",
    "\"--\"",
    "\"sizeof\"",
];

/// Terminals that can start declaration specifiers.
const TYPE_START: &[&str] = &[
    "TypeName",
    "\"void\"",
    "\"char\"",
    "\"short\"",
    "\"int\"",
    "\"long\"",
    "\"float\"",
    "\"double\"",
    "\"signed\"",
    "\"unsigned\"",
    "\"_Bool\"",
    "\"struct\"",
    "\"union\"",
    "\"enum\"",
    "\"const\"",
    "\"volatile\"",
    "\"restrict\"",
    "\"typedef\"",
    "\"extern\"",
    "\"static\"",
    "\"auto\"",
    "\"register\"",
    "\"inline\"",
];

/// Terminals that can start a statement other than an expression.
const STATEMENT_START: &[&str] = &[
    "\"if\"",
    "\"while\"",
    "\"for\"",
    "\"do\"",
    "\"switch\"",
    "\"return\"",
    "\"break\"",
    "\"continue\"",
    "\"goto\"",
    "\"case\"",
    "\"default\"",
    "\"{\"",
];

/// Terminals that continue a complete expression.
const OPERATORS: &[&str] = &[
    "\"(\"", "\"[\"", "\".\"", "\"->\"", "\"++\"", "\"--\"", "\"*\"", "\"/\"", "\"%\"", "\"+\"",
    "\"-\"", "\"<<\"", "\">>\"", "\"<\"", "\">\"", "\"<=\"", "\">=\"", "\"==\"", "\"!=\"", "\"&\"",
    "\"^\"", "\"|\"", "\"&&\"", "\"||\"", "\"?\"", "\"=\"", "\"+=\"", "\"-=\"", "\"*=\"", "\"/=\"",
    "\"%=\"", "\"&=\"", "\"|=\"", "\"^=\"", "\"<<=\"", "\">>=\"",
];

/// A short, readable list of what the grammar expected, e.g.
/// `one of ';', ',' or '='`; `None` when it expected nothing.
fn describe_expected(expected: &[String]) -> Option<String> {
    let has = |name: &str| expected.iter().any(|e| e == name);
    let mut hidden: Vec<&str> = Vec::new();
    let mut groups: Vec<&str> = Vec::new();
    if has("\"if\"") && has("\"while\"") {
        hidden.extend(STATEMENT_START);
        groups.push("statement");
    }
    if has("Ident") && has("IntLit") {
        hidden.extend(EXPRESSION_START);
        groups.push("expression");
    }
    if !has("Ident") && has("\"+\"") && has("\"*\"") && has("\"==\"") {
        hidden.extend(OPERATORS);
        groups.push("operator");
    }
    if has("\"int\"") && has("\"double\"") {
        hidden.extend(TYPE_START);
        groups.push("type");
    }
    let mut listed: Vec<String> = Vec::new();
    // Closing punctuation first: it is usually what is missing.
    for closer in ["\";\"", "\")\"", "\"]\"", "\"}\"", "\",\"", "\":\""] {
        if has(closer) && !hidden.contains(&closer) {
            listed.push(readable_terminal(closer));
        }
    }
    listed.extend(groups.iter().map(|g| g.to_string()));
    for e in expected {
        let name = e.as_str();
        if hidden.contains(&name) {
            continue;
        }
        let readable = readable_terminal(name);
        if !listed.contains(&readable) {
            listed.push(readable);
        }
    }
    if listed.is_empty() {
        return None;
    }
    let truncated = listed.len() > MAX_EXPECTED_LISTED;
    listed.truncate(MAX_EXPECTED_LISTED);
    Some(match listed.len() {
        1 => listed.remove(0),
        _ if truncated => format!("one of {}, ...", listed.join(", ")),
        _ => {
            let last = listed.pop().unwrap_or_default();
            format!("one of {} or {last}", listed.join(", "))
        }
    })
}

/// `"\";\""` becomes `';'`; named terminals become words.
fn readable_terminal(name: &str) -> String {
    if let Some(inner) = name.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
        return format!("'{inner}'");
    }
    match name {
        "Ident" => "identifier",
        "TypeName" => "type name",
        "IntLit" | "FloatLit" => "number",
        "CharLit" => "character constant",
        "StrLit" => "string",
        "IncludeMark" => "#include",
        other => other,
    }
    .to_string()
}

// ---------------------------------------------------------------------------
// The typedef scanner ("lexer hack")
// ---------------------------------------------------------------------------

/// Re-tags identifiers that name a typedef as [`Token::TypeName`].
///
/// It follows C's scopes with braces and reads declarations just enough to
/// find the names they declare:
///
/// - a declaration starts at the beginning of a statement (after `;`, `{`,
///   `}`, an `#include` mark, `for (`, or at the start) with a storage class,
///   a qualifier, a type keyword, `struct`/`union`/`enum`, or a typedef name;
/// - its declared names are the identifiers of its declarators that are not
///   inside a parameter list, an array length or an initializer (so
///   `typedef double (*fp)(double);` declares `fp`, and
///   `typedef struct P {double x;} P, *PP;` declares `P` and `PP`, not `x`);
/// - a `typedef` makes those names type names from there to the end of the
///   enclosing block; any other declaration of such a name (a variable, or a
///   parameter of the function whose body follows) hides the typedef until
///   the end of the block;
/// - a typedef name is a type specifier only where no type specifier came
///   before it in the same declaration (`T T2;`, and the second `P` of
///   `typedef struct P P;` is a declared name);
/// - struct, union and enum tags (after the keyword), member names (after
///   `.` and `->`) and `goto` labels are never re-tagged.
///
/// Not handled, being rare in the code this tool reads: a for-loop
/// declaration that hides a typedef leaks to the enclosing block, and
/// struct fields or enumerators named like a typedef do not hide it.
struct TypedefScanner<'t> {
    tokens: &'t mut [Token],
    /// For each name that is or hides a typedef: (block depth, is a
    /// typedef), innermost last.
    names: HashMap<Rc<str>, Vec<(u32, bool)>>,
    /// Names given an entry in each open block, to undo at its `}`.
    declared_in_block: Vec<Vec<Rc<str>>>,
}

impl<'t> TypedefScanner<'t> {
    fn new(tokens: &'t mut [Token]) -> TypedefScanner<'t> {
        TypedefScanner {
            tokens,
            names: HashMap::default(),
            declared_in_block: vec![Vec::new()],
        }
    }

    fn depth(&self) -> u32 {
        self.declared_in_block.len() as u32 - 1
    }

    fn is_typedef(&self, name: &str) -> bool {
        self.names
            .get(name)
            .and_then(|v| v.last())
            .is_some_and(|&(_, t)| t)
    }

    fn declare(&mut self, name: Rc<str>, is_typedef: bool) {
        if !is_typedef && !self.is_typedef(&name) {
            return;
        }
        let depth = self.depth();
        let entries = self.names.entry(name.clone()).or_default();
        match entries.last_mut() {
            Some(last) if last.0 == depth => last.1 = is_typedef,
            _ => {
                entries.push((depth, is_typedef));
                if let Some(block) = self.declared_in_block.last_mut() {
                    block.push(name);
                }
            }
        }
    }

    fn open_block(&mut self) {
        self.declared_in_block.push(Vec::new());
    }

    fn close_block(&mut self) {
        if self.declared_in_block.len() <= 1 {
            return;
        }
        for name in self.declared_in_block.pop().unwrap_or_default() {
            if let Some(entries) = self.names.get_mut(&name) {
                entries.pop();
            }
        }
    }

    fn tok(&self, i: usize) -> Option<&Token> {
        self.tokens.get(i)
    }

    fn ident_at(&self, i: usize) -> Option<Rc<str>> {
        match self.tokens.get(i) {
            Some(Token::Ident(n)) => Some(n.clone()),
            _ => None,
        }
    }

    /// Re-tags the identifier at `i` if it names a typedef in scope.
    fn retag(&mut self, i: usize) {
        if let Some(name) = self.ident_at(i)
            && self.is_typedef(&name)
        {
            self.tokens[i] = Token::TypeName(name);
        }
    }

    fn run(&mut self) {
        let mut i = 0;
        let mut at_statement_start = true;
        let mut body_params: Vec<Rc<str>> = Vec::new();
        while i < self.tokens.len() {
            if at_statement_start && self.starts_declaration(i) {
                let (next, params) = self.declaration(i, 0);
                body_params = params;
                i = next.max(i + 1);
                continue;
            }
            let params = std::mem::take(&mut body_params);
            at_statement_start = false;
            match &self.tokens[i] {
                Token::LBrace => {
                    self.open_block();
                    for p in params {
                        self.declare(p, false);
                    }
                    at_statement_start = true;
                }
                Token::RBrace => {
                    self.close_block();
                    at_statement_start = true;
                }
                Token::Semi | Token::IncludeMark(_) => at_statement_start = true,
                Token::KwFor if self.tok(i + 1) == Some(&Token::LParen) => {
                    i += 2;
                    at_statement_start = true;
                    continue;
                }
                Token::Dot | Token::Arrow | Token::KwGoto => {
                    // A member name or label, never a type.
                    i += 2;
                    continue;
                }
                Token::KwStruct | Token::KwUnion | Token::KwEnum => {
                    i += 2;
                    continue;
                }
                Token::Ident(_) => self.retag(i),
                _ => {}
            }
            i += 1;
        }
    }

    fn starts_declaration(&self, i: usize) -> bool {
        match self.tok(i) {
            Some(Token::Ident(name)) => {
                self.is_typedef(name) && self.tok(i + 1) != Some(&Token::Colon)
            }
            Some(t) => is_specifier_keyword(t),
            None => false,
        }
    }

    /// Reads a declaration from `i`; returns where it ends (after its `;`,
    /// or at the `{` of a function body) and, for a function definition,
    /// the names of its parameters.
    fn declaration(&mut self, i: usize, nesting: u32) -> (usize, Vec<Rc<str>>) {
        let (mut i, is_typedef) = self.specifiers(i, nesting);
        loop {
            let (next, name, params) = self.declarator(i, nesting);
            if let Some(name) = name {
                self.declare(name, is_typedef);
            }
            i = next;
            if self.tok(i) == Some(&Token::Assign) {
                i = self.skip_expression(i + 1, &[Token::Comma, Token::Semi]);
            }
            match self.tok(i) {
                Some(Token::Comma) => i += 1,
                Some(Token::Semi) => return (i + 1, Vec::new()),
                Some(Token::LBrace) => return (i, params),
                _ => return (i, Vec::new()),
            }
        }
    }

    /// Reads declaration specifiers; returns where they end and whether
    /// they include `typedef`.
    fn specifiers(&mut self, mut i: usize, nesting: u32) -> (usize, bool) {
        let mut seen_type = false;
        let mut is_typedef = false;
        while let Some(tok) = self.tok(i) {
            match tok {
                Token::KwTypedef => is_typedef = true,
                Token::KwStruct | Token::KwUnion | Token::KwEnum => {
                    let is_enum = *tok == Token::KwEnum;
                    seen_type = true;
                    i += 1;
                    if self.ident_at(i).is_some() {
                        i += 1;
                    }
                    if self.tok(i) == Some(&Token::LBrace) {
                        i = if is_enum {
                            self.skip_expression(i + 1, &[]) + 1
                        } else {
                            self.struct_body(i + 1, nesting + 1)
                        };
                    }
                    continue;
                }
                Token::Ident(name) => {
                    if seen_type || !self.is_typedef(name) {
                        break;
                    }
                    seen_type = true;
                    self.retag(i);
                }
                t if is_type_keyword(t) => seen_type = true,
                t if is_specifier_keyword(t) => {}
                _ => break,
            }
            i += 1;
        }
        (i, is_typedef)
    }

    /// Reads struct fields from `i` (after `{`); returns the index after
    /// the closing `}`.
    fn struct_body(&mut self, mut i: usize, nesting: u32) -> usize {
        if nesting > MAX_SCAN_NESTING {
            return self.skip_expression(i, &[]) + 1;
        }
        while let Some(tok) = self.tok(i) {
            match tok {
                Token::RBrace => return i + 1,
                Token::Semi => i += 1,
                _ => {
                    let start = i;
                    let (mut j, _) = self.specifiers(i, nesting);
                    loop {
                        let (next, _, _) = self.declarator(j, nesting);
                        j = next;
                        if self.tok(j) == Some(&Token::Colon) {
                            j = self.skip_expression(j + 1, &[Token::Comma, Token::Semi]);
                        }
                        if self.tok(j) == Some(&Token::Comma) {
                            j += 1;
                        } else {
                            break;
                        }
                    }
                    i = if j > start { j } else { start + 1 };
                }
            }
        }
        i
    }

    /// Reads a declarator from `i`; returns where it ends, the name it
    /// declares, and the parameter names of its first parameter list.
    fn declarator(&mut self, mut i: usize, nesting: u32) -> (usize, Option<Rc<str>>, Vec<Rc<str>>) {
        let mut groups = 0u32;
        let mut name = None;
        let mut params = None;
        // After the name, `)` or `]`, a `(` opens a parameter list.
        let mut after_operand = false;
        while let Some(tok) = self.tok(i) {
            match tok {
                Token::Star | Token::KwConst | Token::KwVolatile | Token::KwRestrict => {
                    after_operand = false;
                    i += 1;
                }
                Token::Ident(n) if name.is_none() && !after_operand => {
                    name = Some(n.clone());
                    after_operand = true;
                    i += 1;
                }
                Token::LParen => {
                    let grouping = !after_operand
                        && match self.tok(i + 1) {
                            Some(Token::Star | Token::LParen | Token::LBracket) => true,
                            Some(Token::Ident(n)) => !self.is_typedef(n),
                            _ => false,
                        };
                    if grouping {
                        groups += 1;
                        i += 1;
                    } else {
                        let (next, names) = self.parameter_list(i + 1, nesting + 1);
                        if params.is_none() {
                            params = Some(names);
                        }
                        i = next;
                    }
                    after_operand = !grouping;
                }
                Token::RParen if groups > 0 => {
                    groups -= 1;
                    after_operand = true;
                    i += 1;
                }
                Token::LBracket => {
                    i = self.skip_expression(i + 1, &[]) + 1;
                    after_operand = true;
                }
                _ => break,
            }
        }
        (i, name, params.unwrap_or_default())
    }

    /// Reads parameters from `i` (after `(`); returns the index after the
    /// closing `)` and the parameters' names.
    fn parameter_list(&mut self, mut i: usize, nesting: u32) -> (usize, Vec<Rc<str>>) {
        if nesting > MAX_SCAN_NESTING {
            return (self.skip_expression(i, &[]) + 1, Vec::new());
        }
        let mut names = Vec::new();
        while let Some(tok) = self.tok(i) {
            match tok {
                Token::RParen => return (i + 1, names),
                Token::Comma | Token::Ellipsis => i += 1,
                _ => {
                    let start = i;
                    let (j, _) = self.specifiers(i, nesting);
                    let (k, name, _) = self.declarator(j, nesting);
                    names.extend(name);
                    if k > start {
                        i = k;
                    } else {
                        // Not a parameter: leave it to the parser to report.
                        self.retag(start);
                        i = start + 1;
                    }
                }
            }
        }
        (i, names)
    }

    /// Skips an expression (or brace-enclosed list) from `i`, re-tagging
    /// typedef names inside it; stops at a token of `stops` outside
    /// brackets, or at a closing bracket that it did not open.
    fn skip_expression(&mut self, mut i: usize, stops: &[Token]) -> usize {
        let mut open = 0u32;
        while let Some(tok) = self.tok(i) {
            match tok {
                Token::LParen | Token::LBracket | Token::LBrace => open += 1,
                Token::RParen | Token::RBracket | Token::RBrace => {
                    if open == 0 {
                        return i;
                    }
                    open -= 1;
                }
                Token::Dot | Token::Arrow | Token::KwStruct | Token::KwUnion | Token::KwEnum => {
                    i += 2;
                    continue;
                }
                Token::Ident(_) => self.retag(i),
                t if open == 0 && stops.contains(t) => return i,
                _ => {}
            }
            i += 1;
        }
        i
    }
}

fn is_type_keyword(t: &Token) -> bool {
    matches!(
        t,
        Token::KwVoid
            | Token::KwChar
            | Token::KwShort
            | Token::KwInt
            | Token::KwLong
            | Token::KwFloat
            | Token::KwDouble
            | Token::KwSigned
            | Token::KwUnsigned
            | Token::KwBool
            | Token::KwStruct
            | Token::KwUnion
            | Token::KwEnum
    )
}

fn is_specifier_keyword(t: &Token) -> bool {
    is_type_keyword(t)
        || matches!(
            t,
            Token::KwTypedef
                | Token::KwExtern
                | Token::KwStatic
                | Token::KwAuto
                | Token::KwRegister
                | Token::KwConst
                | Token::KwVolatile
                | Token::KwRestrict
                | Token::KwInline
        )
}
