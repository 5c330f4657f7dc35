//! The C back end: prints the IL as C a person recognises as their own.
//!
//! Layout is done by the `pretty` crate at 100 columns: 4-space indentation,
//! K&R braces for statements and a brace on its own line for function
//! bodies. Printing hints of the IL (assignment sugar, user parentheses,
//! allocation forms, `decl_init`) and the folding of lowering temporaries
//! ([`super::plan`]) make the output read like the input.

use super::plan::{Plan, key, plan};
use crate::front::source::{SourceMap, Span};
use crate::il::{
    AllocForm, AssignSugar, BinOp, Block, Declarator, Expr, ExprKind, Init, Item, ItemKind,
    LoopHeader, Procedure, Program, QualType, RealKind, Stmt, StmtKind, Storage, StructId,
    SwitchCase, SymId, Type, TypedefId, UnOp,
};
use pretty::RcDoc;
use rustc_hash::FxHashMap as HashMap;

type Doc = RcDoc<'static, ()>;

/// What a top-level item is to the check of kept macros against the code.
enum Role {
    /// `#define NAME ...` of the main file.
    Define(String),
    /// `#include "h.h"`, standing for that header's items and macros.
    Include(crate::front::source::FileId),
    /// Another directive line.
    Directive,
    /// Declarations and definitions, printed from the (expanded) IL.
    Code,
}

/// The identifiers of C text, outside comments and literals.
fn identifiers(c: &str) -> Vec<&str> {
    let bytes = c.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        // Byte tests: `i` may stand inside a multi-byte character, and only
        // an ASCII `/` is sliced at.
        if bytes[i..].starts_with(b"/*") {
            i = c[i + 2..].find("*/").map_or(bytes.len(), |k| i + 2 + k + 2);
        } else if bytes[i..].starts_with(b"//") {
            i = c[i..].find('\n').map_or(bytes.len(), |k| i + k);
        } else if b == b'"' || b == b'\'' {
            i += 1;
            while i < bytes.len() && bytes[i] != b {
                i += if bytes[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
        } else if b.is_ascii_alphabetic() || b == b'_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            out.push(&c[start..i]);
        } else if b.is_ascii_digit() {
            // A number, suffixes and exponents included (`1e5`, `2.0f`).
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'.') {
                i += 1;
            }
        } else {
            i += 1;
        }
    }
    out
}

/// Line width the printer aims for.
const WIDTH: usize = 100;
/// Spaces per indentation level.
const INDENT: isize = 4;

/// Prints a program as C source. Items from included local headers are
/// replaced by their `#include` line.
pub fn print_c(program: &Program, sources: &SourceMap) -> String {
    let printer = CPrinter::new(program, sources);
    let mut out = trim_lines(&printer.program());
    if !program.final_comments.is_empty() {
        if !out.is_empty() {
            out.push('\n');
        }
        for c in &program.final_comments {
            out.push_str(c);
            out.push('\n');
        }
    }
    out
}

/// Strips the trailing blanks that indentation leaves on empty lines, and
/// the blank lines at the end.
fn trim_lines(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len() + 1);
    for line in raw.lines() {
        out.push_str(line.trim_end());
        out.push('\n');
    }
    while out.ends_with("\n\n") {
        out.pop();
    }
    if out == "\n" {
        out.clear();
    }
    out
}

fn render(doc: &Doc) -> String {
    let mut buf = Vec::new();
    // Writing to a Vec cannot fail.
    let _ = doc.render(WIDTH, &mut buf);
    String::from_utf8_lossy(&buf).into_owned()
}

fn text(s: impl Into<String>) -> Doc {
    RcDoc::text(s.into())
}

fn parens(d: Doc) -> Doc {
    text("(").append(d).append(text(")"))
}

/// `name(a, b)`, breaking after `(` and between arguments when too long.
fn call_doc(name: String, args: Vec<Doc>) -> Doc {
    if args.is_empty() {
        return text(format!("{name}()"));
    }
    text(format!("{name}("))
        .append(
            RcDoc::line_()
                .append(RcDoc::intersperse(args, text(",").append(RcDoc::line())))
                .nest(INDENT),
        )
        .append(RcDoc::line_())
        .append(text(")"))
        .group()
}

fn comment_doc(comment: &str) -> Doc {
    comment_doc_at(comment, None)
}

/// A comment on its own lines at the current indentation. A block comment
/// keeps the shape of its continuation lines: relative to the column its
/// owner was written at (`original`) when known, else to each other.
fn comment_doc_at(comment: &str, original: Option<usize>) -> Doc {
    let lines: Vec<&str> = comment.lines().collect();
    let Some((first, rest)) = lines.split_first() else {
        return text(comment.trim().to_string());
    };
    if rest.is_empty() {
        return text(first.trim().to_string());
    }
    let starred = rest.iter().all(|l| {
        let t = l.trim_start();
        t.is_empty() || t.starts_with('*')
    });
    let min_indent = rest
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let strip = match original {
        Some(col) if col <= min_indent => col,
        _ => min_indent,
    };
    let mut doc = text(first.trim().to_string());
    for l in rest {
        let shown = if l.trim().is_empty() {
            String::new()
        } else if starred {
            format!(" {}", l.trim())
        } else {
            l.get(strip..)
                .unwrap_or(l.trim_start())
                .trim_end()
                .to_string()
        };
        doc = doc.append(RcDoc::hardline()).append(text(shown));
    }
    doc
}

fn leading_comments(comments: &[String], original: Option<usize>) -> Doc {
    RcDoc::concat(
        comments
            .iter()
            .map(|c| comment_doc_at(c, original).append(RcDoc::hardline())),
    )
}

fn with_trailing(doc: Doc, trailing: Option<&String>) -> Doc {
    match trailing {
        Some(c) => doc.append(text("  ")).append(comment_doc(c)),
        None => doc,
    }
}

/// C precedence levels, higher binds tighter.
mod prec {
    pub const COND: u8 = 3;
    pub const OR: u8 = 4;
    pub const UNARY: u8 = 14;
    pub const POSTFIX: u8 = 15;
}

fn binop_info(op: BinOp) -> (&'static str, u8) {
    use BinOp::*;
    match op {
        Mul => ("*", 13),
        Div => ("/", 13),
        Rem => ("%", 13),
        Add => ("+", 12),
        Sub => ("-", 12),
        Shl => ("<<", 11),
        Shr => (">>", 11),
        Lt => ("<", 10),
        Le => ("<=", 10),
        Gt => (">", 10),
        Ge => (">=", 10),
        Eq => ("==", 9),
        Ne => ("!=", 9),
        BitAnd => ("&", 8),
        BitXor => ("^", 7),
        BitOr => ("|", 6),
        And => ("&&", 5),
        Or => ("||", 4),
    }
}

fn is_comparison(op: BinOp) -> bool {
    use BinOp::*;
    matches!(op, Lt | Le | Gt | Ge | Eq | Ne)
}

/// Parentheses C does not need but `gcc -Wparentheses` asks for, so that
/// generated code compiles without warnings.
fn clarity_parens(parent: BinOp, child: &Expr, is_lhs: bool) -> bool {
    use BinOp::*;
    match &child.kind {
        ExprKind::Binary { op, .. } => match parent {
            Or => *op == And,
            Shl | Shr => matches!(op, Add | Sub),
            // The cases gcc's `warn_about_parentheses` names, no more.
            BitOr => matches!(op, BitAnd | BitXor | Add | Sub) || is_comparison(*op),
            BitXor => matches!(op, BitAnd | Add | Sub) || is_comparison(*op),
            BitAnd => matches!(op, Add | Sub) || is_comparison(*op),
            _ if is_comparison(parent) => is_comparison(*op),
            _ => false,
        },
        // `!a == b` trips -Wlogical-not-parentheses.
        ExprKind::Unary { op: UnOp::Not, .. } => is_lhs && is_comparison(parent),
        _ => false,
    }
}

/// Structural equality of expressions, ignoring spans and parentheses.
pub(crate) fn same_expr(a: &Expr, b: &Expr) -> bool {
    use ExprKind::*;
    match (&a.kind, &b.kind) {
        (IntConst { value: x, .. }, IntConst { value: y, .. }) => x == y,
        (RealConst { value: x, .. }, RealConst { value: y, .. }) => x.to_bits() == y.to_bits(),
        (CharConst { value: x, .. }, CharConst { value: y, .. }) => x == y,
        (StrConst(x), StrConst(y)) => x == y,
        (Var(x), Var(y)) => x == y,
        (
            Index {
                base: b1,
                index: i1,
            },
            Index {
                base: b2,
                index: i2,
            },
        ) => same_expr(b1, b2) && same_expr(i1, i2),
        (
            Field {
                base: b1,
                strukt: s1,
                field: f1,
            },
            Field {
                base: b2,
                strukt: s2,
                field: f2,
            },
        ) => s1 == s2 && f1 == f2 && same_expr(b1, b2),
        (Deref(x), Deref(y)) | (AddrOf(x), AddrOf(y)) | (SizeOfExpr(x), SizeOfExpr(y)) => {
            same_expr(x, y)
        }
        (Unary { op: o1, arg: a1 }, Unary { op: o2, arg: a2 }) => o1 == o2 && same_expr(a1, a2),
        (
            Binary {
                op: o1,
                lhs: l1,
                rhs: r1,
            },
            Binary {
                op: o2,
                lhs: l2,
                rhs: r2,
            },
        ) => o1 == o2 && same_expr(l1, l2) && same_expr(r1, r2),
        (Intrinsic { call: c1, args: a1 }, Intrinsic { call: c2, args: a2 }) => {
            c1 == c2 && a1.len() == a2.len() && a1.iter().zip(a2).all(|(x, y)| same_expr(x, y))
        }
        (Cast { to: t1, arg: a1 }, Cast { to: t2, arg: a2 }) => t1 == t2 && same_expr(a1, a2),
        (
            Cond {
                cond: c1,
                then: t1,
                other: o1,
            },
            Cond {
                cond: c2,
                then: t2,
                other: o2,
            },
        ) => same_expr(c1, c2) && same_expr(t1, t2) && same_expr(o1, o2),
        (SizeOfType(x), SizeOfType(y)) => x == y,
        _ => false,
    }
}

/// `e` without a conversion the lowering inserted around it.
fn strip_cast(e: &Expr) -> &Expr {
    match &e.kind {
        ExprKind::Cast { arg, .. } if !e.parens => arg,
        _ => e,
    }
}

/// For `lhs = rhs` with `rhs` of the shape `lhs op e` (possibly converted
/// back to the type of `lhs`), the operand `e`.
fn compound_operand<'e>(lhs: &Expr, rhs: &'e Expr, want: BinOp) -> Option<&'e Expr> {
    let inner = match &rhs.kind {
        ExprKind::Cast { to, arg } if to.ty == lhs.ty.ty && !rhs.parens => arg.as_ref(),
        _ => rhs,
    };
    match &inner.kind {
        ExprKind::Binary { op, lhs: l, rhs: r }
            if *op == want && !inner.parens && same_expr(strip_cast(l), lhs) =>
        {
            Some(r)
        }
        _ => None,
    }
}

fn is_one(e: &Expr) -> bool {
    match &strip_cast(e).kind {
        ExprKind::IntConst { value, .. } | ExprKind::CharConst { value, .. } => *value == 1,
        ExprKind::RealConst { value, .. } => *value == 1.0,
        _ => false,
    }
}

/// A real literal spelled in the shortest form that reads back as the same
/// `double`, always with a `.` or an exponent.
pub(crate) fn real_text(value: f64) -> String {
    if value.is_nan() {
        return "(0.0 / 0.0)".to_string();
    }
    if value.is_infinite() {
        return if value > 0.0 {
            "(1.0 / 0.0)"
        } else {
            "(-1.0 / 0.0)"
        }
        .to_string();
    }
    let s = format!("{value:?}");
    if s.contains(['.', 'e', 'E']) {
        s
    } else {
        format!("{s}.0")
    }
}

struct CPrinter<'a> {
    program: &'a Program,
    sources: &'a SourceMap,
    /// Typedef items that carry the definition of a struct: for a struct
    /// without an item of its own, the first typedef naming exactly it.
    typedef_bodies: HashMap<TypedefId, StructId>,
}

/// The statement-level context: the plan of the enclosing procedure.
struct Ctx<'p, 'a> {
    plan: &'p Plan<'a>,
}

impl<'a> CPrinter<'a> {
    fn new(program: &'a Program, sources: &'a SourceMap) -> CPrinter<'a> {
        let typedef_bodies = super::typedef_bodies(program);
        CPrinter {
            program,
            sources,
            typedef_bodies,
        }
    }

    /// The 0-based column a span starts at in its file, when the file is
    /// known (hand-built IL has no source).
    fn column(&self, span: Span) -> Option<usize> {
        let (_, file) = self.sources.files().find(|(id, _)| *id == span.file)?;
        let lo = span.lo as usize;
        if lo > file.text.len() || !file.text.is_char_boundary(lo) {
            return None;
        }
        let (_, col) = file.line_col(lo);
        Some(col - 1)
    }

    // -- program and items ---------------------------------------------------

    fn program(&self) -> String {
        let items: Vec<&Item> = self
            .program
            .items
            .iter()
            .filter(|item| item.file == self.program.main_file)
            .collect();
        // Each item prints on its own: on every core, in order.
        let printed: Vec<(String, bool, u8, Role)> =
            crate::par::map(&items, |item| self.item(item))
                .into_iter()
                .flatten()
                .collect();
        // The output's code is already expanded: a kept `#define` whose
        // name the code after it still spells (a macro calling the function
        // it is named after, `#define log(v) log(eps + (v))`; a name the
        // source `#undef`s in a body and then declares) would expand it a
        // second time. Such a line goes; a local header's macro gets an
        // `#undef` after the header's `#include`.
        let mut later: std::collections::HashSet<&str> = Default::default();
        let mut dropped = vec![false; printed.len()];
        let mut undefs: Vec<Vec<&str>> = vec![Vec::new(); printed.len()];
        for i in (0..printed.len()).rev() {
            match &printed[i].3 {
                Role::Code => later.extend(identifiers(&printed[i].0)),
                Role::Define(name) => dropped[i] = later.contains(name.as_str()),
                Role::Include(file) => {
                    for (f, name) in &self.program.header_macros {
                        if f == file
                            && later.contains(name.as_str())
                            && !undefs[i].contains(&name.as_str())
                        {
                            undefs[i].push(name);
                        }
                    }
                }
                Role::Directive => {}
            }
        }
        let mut out = String::new();
        let mut prev: Option<(bool, u8)> = None;
        for (i, (_, spacious, group, _)) in printed.iter().enumerate() {
            if dropped[i] {
                continue;
            }
            if let Some((prev_spacious, prev_group)) = prev {
                out.push('\n');
                if *spacious || prev_spacious || *group != prev_group {
                    out.push('\n');
                }
            }
            out.push_str(&printed[i].0);
            for name in &undefs[i] {
                out.push_str(&format!("\n#undef {name}"));
            }
            prev = Some((*spacious, *group));
        }
        out.push('\n');
        out
    }

    /// One item of the main file, rendered: its text, whether it stands
    /// apart with blank lines, its group and its role for the macro pass.
    /// `None` for a procedure printed elsewhere.
    fn item(&self, item: &Item) -> Option<(String, bool, u8, Role)> {
        let empty_plan = Plan::default();
        let ctx = Ctx { plan: &empty_plan };
        let role = match &item.kind {
            ItemKind::MacroLine(s) => match crate::il::defined_macro(s) {
                Some(name) => Role::Define(name.to_string()),
                None if s.trim_start().starts_with('#') => Role::Directive,
                None => Role::Code,
            },
            ItemKind::LocalInclude { file, .. } => Role::Include(*file),
            ItemKind::SystemInclude(_) => Role::Directive,
            _ => Role::Code,
        };
        let (doc, group) = match &item.kind {
            ItemKind::SystemInclude(s) => (include_line(s), 0),
            ItemKind::MacroLine(s) => (text(s.clone()), 0),
            ItemKind::LocalInclude { written, .. } => (include_line(written), 0),
            ItemKind::Typedef(t) => (self.typedef_item(*t), 1),
            ItemKind::Struct(s) => (self.struct_body(*s).append(text(";")), 2),
            ItemKind::Enum { tag, constants } => (enum_item(tag.as_deref(), constants), 2),
            ItemKind::Globals {
                base,
                storage,
                vars,
            } => (
                self.declaration(base, *storage, vars, None, &ctx)
                    .append(text(";")),
                1,
            ),
            ItemKind::Prototype(p) => match self.as_written(*p) {
                Some(proc) => (self.proc_header(proc).append(text(";")), 1),
                None => return None,
            },
            ItemKind::Function(p) => match self.as_written(*p) {
                Some(proc) => (self.function(proc), 2),
                None => return None,
            },
        };
        let mut comments: Vec<String> = item.comments.leading.clone();
        let mut trailing = item.comments.trailing.as_ref();
        // A prototype's comments are its item's own: the procedure
        // holds the definition's.
        if let ItemKind::Function(p) = &item.kind
            && let Some(proc) = self.as_written(*p)
            && proc.comments != item.comments
        {
            comments.extend(proc.comments.leading.iter().cloned());
            trailing = trailing.or(proc.comments.trailing.as_ref());
        }
        let doc = leading_comments(&comments, self.column(item.span))
            .append(with_trailing(doc, trailing));
        Some((render(&doc), group == 2, group, role))
    }

    /// `typedef T name;`, or `typedef struct [tag] { ... } name;` at the
    /// typedef that defines a struct.
    fn typedef_item(&self, id: TypedefId) -> Doc {
        let Some(td) = self.program.typedefs.get(id.index()) else {
            return RcDoc::nil();
        };
        let leaf = leaf(&td.ty);
        let base = match self.typedef_bodies.get(&id) {
            Some(s) => self.struct_body(*s),
            None => text(self.base_name(leaf)),
        };
        let decl = self.declarator(&td.ty, leaf, td.name.clone());
        text("typedef ")
            .append(base)
            .append(text(" "))
            .append(text(decl.unwrap_or_else(|| td.name.clone())))
            .append(text(";"))
    }

    fn struct_body(&self, id: StructId) -> Doc {
        let Some(def) = self.program.structs.get(id.index()) else {
            return RcDoc::nil();
        };
        let head = match &def.tag {
            Some(tag) => format!("struct {tag} {{"),
            None => "struct {".to_string(),
        };
        let fields = def.fields.iter().map(|f| {
            let leaf = leaf(&f.ty);
            let decl = self
                .declarator(&f.ty, leaf, f.name.clone())
                .unwrap_or_else(|| f.name.clone());
            let line = text(format!("{} {};", self.base_name(leaf), decl));
            RcDoc::hardline()
                .append(leading_comments(&f.comments.leading, self.column(f.span)))
                .append(with_trailing(line, f.comments.trailing.as_ref()))
        });
        text(head)
            .append(RcDoc::concat(fields).nest(INDENT))
            .append(RcDoc::hardline())
            .append(text("}"))
    }

    fn proc_header(&self, proc: &Procedure) -> Doc {
        let mut prefix = String::new();
        match proc.storage {
            Storage::Static => prefix.push_str("static "),
            Storage::Extern => prefix.push_str("extern "),
            Storage::Auto => {}
        }
        if proc.is_inline {
            prefix.push_str("inline ");
        }
        let params: Vec<Doc> = proc
            .params
            .iter()
            .filter_map(|p| Some((p, self.program.symbols.get(p.index())?)))
            .map(|(p, sym)| {
                let ty = self.program.array_params.get(p).unwrap_or(&sym.ty);
                text(self.full_declaration(ty, &sym.name))
            })
            .collect();
        let params = if params.is_empty() {
            text("(void)")
        } else {
            text("(")
                .append(
                    RcDoc::line_()
                        .append(RcDoc::intersperse(params, text(",").append(RcDoc::line())))
                        .nest(INDENT),
                )
                .append(RcDoc::line_())
                .append(text(")"))
                .group()
        };
        // The function declarator goes where a variable name would; a
        // marker splits the return type around it (`double *f(...)`).
        const MARK: &str = "\u{1}";
        let ret_leaf = leaf(&proc.ret);
        let shape = self
            .declarator(&proc.ret, ret_leaf, MARK.to_string())
            .unwrap_or_else(|| MARK.to_string());
        let (before, after) = shape.split_once(MARK).unwrap_or((&shape, ""));
        text(format!(
            "{prefix}{} {before}{}",
            self.base_name(ret_leaf),
            proc.name
        ))
        .append(params)
        .append(text(after.to_string()))
    }

    fn function(&self, proc: &Procedure) -> Doc {
        let header = self.proc_header(proc);
        let Some(body) = &proc.body else {
            return header.append(text(";"));
        };
        let plan = plan(self.program, &body.stmts);
        let ctx = Ctx { plan: &plan };
        header
            .append(RcDoc::hardline())
            .append(self.block(body, &ctx))
    }

    // -- types and declarators -------------------------------------------------

    /// The spelling of a type that is not a pointer or an array.
    fn base_name(&self, qt: &QualType) -> String {
        let konst = if qt.is_const { "const " } else { "" };
        let name = match &qt.ty {
            t @ (Type::Void | Type::Int { .. } | Type::Real(_)) => {
                t.scalar_c_name().unwrap_or_default()
            }
            Type::Struct(s) => self.struct_name(*s),
            Type::Named(t) => self
                .program
                .typedefs
                .get(t.index())
                .map_or_else(|| format!("__typedef_{}", t.0), |td| td.name.clone()),
            Type::Opaque(name) => name.clone(),
            Type::Pointer(_) | Type::Array { .. } => return self.type_name(qt),
        };
        format!("{konst}{name}")
    }

    /// `struct tag`, or the typedef name of an anonymous struct.
    fn struct_name(&self, id: StructId) -> String {
        match self
            .program
            .structs
            .get(id.index())
            .and_then(|s| s.tag.as_ref())
        {
            Some(tag) => format!("struct {tag}"),
            None => self
                .program
                .typedefs
                .iter()
                .find(|t| t.ty.ty == Type::Struct(id))
                .map_or_else(|| format!("struct __anon{}", id.0), |t| t.name.clone()),
        }
    }

    /// A type name as in a cast: `double *`, `double (*)[3]`.
    fn type_name(&self, qt: &QualType) -> String {
        let leaf = leaf(qt);
        let decl = self.declarator(qt, leaf, String::new()).unwrap_or_default();
        let base = self.base_name(leaf);
        if decl.is_empty() {
            base
        } else {
            format!("{base} {decl}")
        }
    }

    /// `type name` for a single declarator: a parameter, a field.
    fn full_declaration(&self, ty: &QualType, name: &str) -> String {
        let leaf = leaf(ty);
        let decl = self
            .declarator(ty, leaf, name.to_string())
            .unwrap_or_else(|| name.to_string());
        let base = self.base_name(leaf);
        if decl.is_empty() {
            base
        } else {
            format!("{base} {decl}")
        }
    }

    /// The declarator that turns `base` into `ty` around `inner` (a name or
    /// nothing): `*p`, `a[10]`, `(*p)[3]`, `*const p`. `None` when `ty`
    /// is not built from `base` by pointers and arrays.
    fn declarator(&self, ty: &QualType, base: &QualType, inner: String) -> Option<String> {
        if ty == base {
            return Some(inner);
        }
        match &ty.ty {
            Type::Pointer(target) => {
                let s = match (ty.is_const, inner.is_empty()) {
                    (true, true) => "*const".to_string(),
                    (true, false) => format!("*const {inner}"),
                    (false, _) => format!("*{inner}"),
                };
                self.declarator(target, base, s)
            }
            Type::Array { elem, len } => {
                let inner = if inner.starts_with('*') {
                    format!("({inner})")
                } else {
                    inner
                };
                let len = match len {
                    Some(l) => render(&self.expr(
                        &l.expr,
                        0,
                        &Ctx {
                            plan: &Plan::default(),
                        },
                    )),
                    None => String::new(),
                };
                self.declarator(elem, base, format!("{inner}[{len}]"))
            }
            _ => None,
        }
    }

    fn sym_name(&self, s: SymId) -> String {
        self.program
            .symbols
            .get(s.index())
            .map_or_else(|| format!("__sym{}", s.0), |sym| sym.name.clone())
    }

    fn sym_type(&self, s: SymId) -> QualType {
        self.program
            .symbols
            .get(s.index())
            .map_or_else(QualType::int, |sym| sym.ty.clone())
    }

    /// A declaration without its `;`. Declarators that cannot share the
    /// base type are printed as declarations of their own.
    fn declaration(
        &self,
        base: &QualType,
        storage: Storage,
        vars: &[Declarator],
        absorbed: Option<&Stmt>,
        ctx: &Ctx,
    ) -> Doc {
        let storage = match storage {
            Storage::Static => "static ",
            Storage::Extern => "extern ",
            Storage::Auto => "",
        };
        let vars: Vec<&Declarator> = vars
            .iter()
            .filter(|d| !ctx.plan.folded.contains_key(&d.sym))
            .collect();
        let last = vars.len().saturating_sub(1);
        let shared = is_leaf(base)
            && vars.iter().all(|d| {
                self.declarator(&self.sym_type(d.sym), base, String::new())
                    .is_some()
            });
        let one = |i: usize, d: &Declarator, base: &QualType| -> Doc {
            let ty = self.sym_type(d.sym);
            let name = self.sym_name(d.sym);
            let decl = self.declarator(&ty, base, name.clone()).unwrap_or(name);
            let init = match (&d.init, absorbed) {
                // `-Wmissing-field-initializers` spares only C's universal
                // zero: a user's `{0}` for a struct whose first member is
                // an aggregate is held as `{{0}}`, and a derivative's as
                // `{0.0}`.
                (Some(init), _) if self.elides_zero_members(init, &ty) => Some(text("{0}")),
                (Some(init), _) => Some(self.init(init, ctx)),
                (None, Some(s)) if i == last => self.simple_rhs(s, ctx),
                _ => None,
            };
            match init {
                Some(init) => text(format!("{decl} ="))
                    .append(RcDoc::line())
                    .append(init)
                    .group(),
                None => text(decl),
            }
        };
        if shared {
            let decls: Vec<Doc> = vars
                .iter()
                .enumerate()
                .map(|(i, d)| one(i, d, base))
                .collect();
            text(storage)
                .append(text(self.base_name(base)))
                .append(text(" "))
                .append(RcDoc::intersperse(decls, text(", ")))
                .nest(INDENT)
        } else {
            let decls: Vec<Doc> = vars
                .iter()
                .enumerate()
                .map(|(i, d)| {
                    let ty = self.sym_type(d.sym);
                    let base = leaf(&ty).clone();
                    text(storage)
                        .append(text(self.base_name(&base)))
                        .append(text(" "))
                        .append(one(i, d, &base))
                        .nest(INDENT)
                })
                .collect();
            RcDoc::intersperse(decls, text(";").append(RcDoc::hardline()))
        }
    }

    /// Is `init` all literal zeros, leaving out a member of some struct?
    fn elides_zero_members(&self, init: &Init, ty: &QualType) -> bool {
        fn all_zero(init: &Init) -> bool {
            match init {
                Init::Expr(e) => {
                    matches!(e.kind, ExprKind::IntConst { value: 0, .. })
                        || matches!(e.kind, ExprKind::RealConst { value, .. } if value == 0.0)
                }
                Init::List(items, _) => items.iter().all(all_zero),
            }
        }
        fn short(p: &Program, init: &Init, ty: &Type) -> bool {
            match (init, p.resolve(ty)) {
                (Init::List(items, _), Type::Struct(s)) => {
                    let fields = &p.strukt(*s).fields;
                    items.len() < fields.len()
                        || items.iter().zip(fields).any(|(i, f)| short(p, i, &f.ty.ty))
                }
                (Init::List(items, _), Type::Array { elem, .. }) => {
                    items.iter().any(|i| short(p, i, &elem.ty))
                }
                _ => false,
            }
        }
        all_zero(init) && short(self.program, init, &ty.ty)
    }

    fn init(&self, init: &Init, ctx: &Ctx) -> Doc {
        match init {
            Init::Expr(e) => self.expr(e, prec::COND - 1, ctx),
            Init::List(items, _) => {
                if items.is_empty() {
                    return text("{0}");
                }
                let items: Vec<Doc> = items.iter().map(|i| self.init(i, ctx)).collect();
                text("{")
                    .append(
                        RcDoc::line_()
                            .append(RcDoc::intersperse(items, text(",").append(RcDoc::line())))
                            .nest(INDENT),
                    )
                    .append(RcDoc::line_())
                    .append(text("}"))
                    .group()
            }
        }
    }

    // -- statements ------------------------------------------------------------

    fn block(&self, b: &Block, ctx: &Ctx) -> Doc {
        let mut inner = self.stmt_list(&b.stmts, ctx);
        for c in &b.closing_comments {
            inner = inner.append(RcDoc::hardline()).append(comment_doc(c));
        }
        text("{")
            .append(inner.nest(INDENT))
            .append(RcDoc::hardline())
            .append(text("}"))
    }

    /// The statements of a list, each preceded by a line break. Comments of
    /// statements that are not printed where they stand move to the next
    /// printed statement.
    fn stmt_list(&self, stmts: &[Stmt], ctx: &Ctx) -> Doc {
        let mut out = RcDoc::nil();
        let mut carried: Vec<String> = Vec::new();
        let mut carried_trailing: Option<&String> = None;
        for s in stmts {
            if ctx.plan.hidden.contains(&key(s)) {
                // A call printed as a declaration's initializer brings its
                // comments to that declaration, not to the next statement.
                if ctx.plan.decl_init.values().any(|a| key(a) == key(s)) {
                    continue;
                }
                carried.extend(s.comments.leading.iter().cloned());
                carried_trailing = carried_trailing.or(s.comments.trailing.as_ref());
                continue;
            }
            let mut leading = std::mem::take(&mut carried);
            leading.extend(s.comments.leading.iter().cloned());
            let mut trailing = s.comments.trailing.as_ref().or(carried_trailing.take());
            if let Some(absorbed) = ctx.plan.decl_init.get(&key(s)) {
                leading.extend(absorbed.comments.leading.iter().cloned());
                trailing = trailing.or(absorbed.comments.trailing.as_ref());
            }
            let doc = with_trailing(self.stmt(s, ctx), trailing);
            out = out
                .append(RcDoc::hardline())
                .append(leading_comments(&leading, self.column(s.span)))
                .append(doc);
        }
        if !carried.is_empty() || carried_trailing.is_some() {
            carried.extend(carried_trailing.cloned());
            out = out.append(RcDoc::hardline()).append(RcDoc::intersperse(
                carried.iter().map(|c| comment_doc(c)),
                RcDoc::hardline(),
            ));
        }
        out
    }

    fn stmt(&self, s: &Stmt, ctx: &Ctx) -> Doc {
        match &s.kind {
            StmtKind::Assign { .. }
            | StmtKind::Call { .. }
            | StmtKind::Alloc { .. }
            | StmtKind::Free { .. } => match self.simple_stmt(s, ctx) {
                Some(d) => d.append(text(";")),
                None => text(";"),
            },
            StmtKind::Decl {
                base,
                storage,
                vars,
            } => {
                let absorbed = ctx.plan.decl_init.get(&key(s)).copied();
                self.declaration(base, *storage, vars, absorbed, ctx)
                    .append(text(";"))
            }
            StmtKind::If { cond, then, other } => self.if_stmt(cond, then, other.as_ref(), ctx),
            StmtKind::Loop { header, body } => self.loop_stmt(header, body, ctx),
            StmtKind::Switch { selector, cases } => self.switch_stmt(selector, cases, ctx),
            StmtKind::Break => text("break;"),
            StmtKind::Continue => text("continue;"),
            StmtKind::Return(None) => text("return;"),
            StmtKind::Return(Some(e)) => text("return ")
                .append(self.expr(e, 0, ctx))
                .append(text(";"))
                .nest(INDENT),
            StmtKind::Block(b) => self.block(b, ctx),
            StmtKind::Empty => text(";"),
            StmtKind::Discard(e) => self.expr(e, 0, ctx).append(text(";")),
        }
    }

    /// A statement that C writes as an expression (`x += e`, `f(a)`,
    /// `p = malloc(n)`, `free(p)`), without its `;`.
    fn simple_stmt(&self, s: &Stmt, ctx: &Ctx) -> Option<Doc> {
        let doc = match &s.kind {
            StmtKind::Assign { lhs, rhs, sugar } => self.assign(lhs, rhs, *sugar, ctx),
            // `specialize/struct-result`: `f(a, &x)` is `x = f(a)` as written.
            StmtKind::Call {
                result: None,
                callee,
                args,
                ..
            } if self.returns_through_last(*callee) => {
                let (last, given) = args.split_last()?;
                let ExprKind::AddrOf(target) = &last.kind else {
                    return None;
                };
                self.expr(target, prec::UNARY, ctx)
                    .append(text(" ="))
                    .append(RcDoc::line())
                    .append(self.call_expr(*callee, given, ctx))
                    .group()
            }
            StmtKind::Call { result: None, .. } => self.simple_rhs(s, ctx)?,
            StmtKind::Call {
                result: Some(target),
                ..
            }
            | StmtKind::Alloc { target, .. } => self
                .expr(target, prec::UNARY, ctx)
                .append(text(" ="))
                .append(RcDoc::line())
                .append(self.simple_rhs(s, ctx)?)
                .group(),
            StmtKind::Free { ptr } => call_doc("free".to_string(), vec![self.expr(ptr, 0, ctx)]),
            _ => return None,
        };
        Some(doc.nest(INDENT))
    }

    /// The value side of a call or an allocation: `f(a, b)`,
    /// `(double *)malloc(n * sizeof(double))`.
    fn simple_rhs(&self, s: &Stmt, ctx: &Ctx) -> Option<Doc> {
        match &s.kind {
            StmtKind::Call { callee, args, .. } => Some(self.call_expr(*callee, args, ctx)),
            StmtKind::Alloc { form, .. } => {
                let (cast, call) = match form {
                    AllocForm::Malloc { bytes, cast } => (
                        cast,
                        call_doc("malloc".to_string(), vec![self.expr(bytes, 0, ctx)]),
                    ),
                    AllocForm::Calloc { count, size, cast } => (
                        cast,
                        call_doc(
                            "calloc".to_string(),
                            vec![self.expr(count, 0, ctx), self.expr(size, 0, ctx)],
                        ),
                    ),
                };
                Some(match cast {
                    Some(t) => text(format!("({})", self.type_name(t))).append(call),
                    None => call,
                })
            }
            _ => None,
        }
    }

    /// The procedure as the user wrote it: the one of `specialize/struct-result`
    /// for a procedure rewritten to return its struct through a pointer.
    fn as_written(&self, p: crate::il::ProcId) -> Option<&crate::il::Procedure> {
        self.program
            .struct_results
            .get(&p)
            .or_else(|| self.program.procs.get(p.index()))
    }

    /// Does a call of `callee` give its struct result back through its
    /// last argument, where the user wrote `x = f(a)`
    /// (`specialize/struct-result`; also a copy of such a procedure)?
    fn returns_through_last(&self, callee: crate::il::ProcId) -> bool {
        let original = self
            .program
            .specialized
            .get(&callee)
            .copied()
            .unwrap_or(callee);
        self.program.struct_results.contains_key(&original)
    }

    fn call_expr(&self, callee: crate::il::ProcId, args: &[Expr], ctx: &Ctx) -> Doc {
        let name = self
            .program
            .procs
            .get(callee.index())
            .map_or_else(|| format!("__proc{}", callee.0), |p| p.name.clone());
        call_doc(name, args.iter().map(|a| self.expr(a, 0, ctx)).collect())
    }

    fn assign(&self, lhs: &Expr, rhs: &Expr, sugar: AssignSugar, ctx: &Ctx) -> Doc {
        let target = self.expr(lhs, prec::UNARY, ctx);
        match sugar {
            AssignSugar::Compound(op) => {
                if let Some(e) = compound_operand(lhs, rhs, op) {
                    let (sym, _) = binop_info(op);
                    return target
                        .append(text(format!(" {sym}=")))
                        .append(RcDoc::line())
                        .append(self.expr(e, 0, ctx))
                        .group();
                }
            }
            AssignSugar::Increment | AssignSugar::Decrement => {
                let (op, spelled) = if sugar == AssignSugar::Increment {
                    (BinOp::Add, "++")
                } else {
                    (BinOp::Sub, "--")
                };
                if compound_operand(lhs, rhs, op).is_some_and(is_one) {
                    return self.expr(lhs, prec::POSTFIX, ctx).append(text(spelled));
                }
            }
            AssignSugar::Plain => {}
        }
        target
            .append(text(" ="))
            .append(RcDoc::line())
            .append(self.expr(rhs, 0, ctx))
            .group()
    }

    fn if_stmt(&self, cond: &Expr, then: &Block, other: Option<&Block>, ctx: &Ctx) -> Doc {
        let mut doc = text("if (")
            .append(self.expr(cond, 0, ctx).nest(INDENT))
            .append(text(") "))
            .append(self.block(then, ctx));
        if let Some(o) = other {
            doc = doc.append(text(" else "));
            let visible: Vec<&Stmt> = o
                .stmts
                .iter()
                .filter(|s| !ctx.plan.hidden.contains(&key(s)))
                .collect();
            match visible.as_slice() {
                [only]
                    if o.stmts.len() == 1
                        && o.closing_comments.is_empty()
                        && only.comments.is_empty()
                        && matches!(only.kind, StmtKind::If { .. }) =>
                {
                    doc = doc.append(self.stmt(only, ctx));
                }
                _ => doc = doc.append(self.block(o, ctx)),
            }
        }
        doc
    }

    fn loop_stmt(&self, header: &LoopHeader, body: &Block, ctx: &Ctx) -> Doc {
        match header {
            LoopHeader::While { cond } => text("while (")
                .append(self.expr(cond, 0, ctx).nest(INDENT))
                .append(text(") "))
                .append(self.block(body, ctx)),
            LoopHeader::DoWhile { cond } => text("do ")
                .append(self.block(body, ctx))
                .append(text(" while ("))
                .append(self.expr(cond, 0, ctx).nest(INDENT))
                .append(text(");")),
            LoopHeader::For { init, cond, step } => {
                self.for_stmt(init, cond.as_ref(), step, body, ctx)
            }
        }
    }

    fn for_stmt(
        &self,
        init: &[Stmt],
        cond: Option<&Expr>,
        step: &[Stmt],
        body: &Block,
        ctx: &Ctx,
    ) -> Doc {
        let init_v = visible_stmts(init, ctx);
        let step_v = visible_stmts(step, ctx);
        let step_docs: Option<Vec<Doc>> = step_v.iter().map(|s| self.simple_stmt(s, ctx)).collect();
        let init_doc: Option<Doc> = match init_v.as_slice() {
            [] => Some(RcDoc::nil()),
            [
                s @ Stmt {
                    kind:
                        StmtKind::Decl {
                            base,
                            storage,
                            vars,
                        },
                    ..
                },
            ] if is_leaf(base)
                && vars.iter().all(|d| {
                    self.declarator(&self.sym_type(d.sym), base, String::new())
                        .is_some()
                }) =>
            {
                let absorbed = ctx.plan.decl_init.get(&key(s)).copied();
                Some(self.declaration(base, *storage, vars, absorbed, ctx))
            }
            list => list
                .iter()
                .map(|s| self.simple_stmt(s, ctx))
                .collect::<Option<Vec<Doc>>>()
                .map(|docs| RcDoc::intersperse(docs, text(", "))),
        };
        let cond_doc = cond.map_or_else(RcDoc::nil, |c| self.expr(c, 0, ctx));
        match (init_doc, step_docs) {
            (Some(init_doc), Some(step_docs)) => {
                let cond_part = if cond.is_some() {
                    text(" ").append(cond_doc)
                } else {
                    RcDoc::nil()
                };
                let step_part = if step_docs.is_empty() {
                    RcDoc::nil()
                } else {
                    text(" ").append(RcDoc::intersperse(step_docs, text(", ")))
                };
                text("for (")
                    .append(init_doc)
                    .append(text(";"))
                    .append(cond_part)
                    .append(text(";"))
                    .append(step_part)
                    .nest(INDENT)
                    .append(text(") "))
                    .append(self.block(body, ctx))
            }
            (None, Some(step_docs)) => {
                // The initialisation is not one C clause: run it first, in a
                // block of its own so that its declarations keep their scope.
                let step_part = if step_docs.is_empty() {
                    RcDoc::nil()
                } else {
                    text(" ").append(RcDoc::intersperse(step_docs, text(", ")))
                };
                let cond_part = if cond.is_some() {
                    text(" ").append(cond_doc)
                } else {
                    RcDoc::nil()
                };
                let loop_doc = text("for (;")
                    .append(cond_part)
                    .append(text(";"))
                    .append(step_part)
                    .nest(INDENT)
                    .append(text(") "))
                    .append(self.block(body, ctx));
                text("{")
                    .append(
                        self.stmt_list(init, ctx)
                            .append(RcDoc::hardline())
                            .append(loop_doc)
                            .nest(INDENT),
                    )
                    .append(RcDoc::hardline())
                    .append(text("}"))
            }
            (_, None) => {
                // A step that C cannot write as an expression: a while loop
                // with the step at the end of the body.
                let cond_doc = if cond.is_some() { cond_doc } else { text("1") };
                let body_doc = text("{")
                    .append(
                        self.stmt_list(&body.stmts, ctx)
                            .append(self.stmt_list(step, ctx))
                            .nest(INDENT),
                    )
                    .append(RcDoc::hardline())
                    .append(text("}"));
                text("{")
                    .append(
                        self.stmt_list(init, ctx)
                            .append(RcDoc::hardline())
                            .append(text("while ("))
                            .append(cond_doc)
                            .append(text(") "))
                            .append(body_doc)
                            .nest(INDENT),
                    )
                    .append(RcDoc::hardline())
                    .append(text("}"))
            }
        }
    }

    fn switch_stmt(&self, selector: &Expr, cases: &[SwitchCase], ctx: &Ctx) -> Doc {
        let cases = cases.iter().map(|c| {
            let labels = c.labels.iter().map(|l| match l {
                Some(e) => text("case ")
                    .append(self.expr(e, prec::COND, ctx))
                    .append(text(":")),
                None => text("default:"),
            });
            let labels = RcDoc::intersperse(labels, RcDoc::hardline());
            let labels = with_trailing(labels, c.comments.trailing.as_ref());
            RcDoc::hardline()
                .append(leading_comments(&c.comments.leading, self.column(c.span)))
                .append(labels)
                .append(self.stmt_list(&c.body, ctx).nest(INDENT))
        });
        text("switch (")
            .append(self.expr(selector, 0, ctx))
            .append(text(") {"))
            .append(RcDoc::concat(cases).nest(INDENT))
            .append(RcDoc::hardline())
            .append(text("}"))
    }

    // -- expressions -----------------------------------------------------------

    /// An expression in a context that needs precedence `min` or tighter.
    fn expr(&self, e: &Expr, min: u8, ctx: &Ctx) -> Doc {
        let (doc, p) = self.expr_inner(e, ctx);
        if e.parens || p < min {
            parens(doc)
        } else {
            doc
        }
    }

    fn literal(text_: &str, fallback: String) -> (Doc, u8) {
        let s = if text_.is_empty() {
            fallback
        } else {
            text_.to_string()
        };
        let p = if s.starts_with('-') || s.starts_with('(') {
            prec::UNARY
        } else {
            prec::POSTFIX
        };
        (text(s), p)
    }

    fn expr_inner(&self, e: &Expr, ctx: &Ctx) -> (Doc, u8) {
        match &e.kind {
            ExprKind::IntConst { value, text: t } => Self::literal(t, value.to_string()),
            ExprKind::RealConst { value, text: t } => {
                let suffix = match &e.ty.ty {
                    Type::Real(RealKind::Float) => "f",
                    Type::Real(RealKind::LongDouble) => "L",
                    _ => "",
                };
                let fallback = real_text(*value);
                let fallback = if fallback.starts_with('(') {
                    fallback
                } else {
                    format!("{fallback}{suffix}")
                };
                Self::literal(t, fallback)
            }
            ExprKind::CharConst { value, text: t } => Self::literal(t, char_text(*value)),
            ExprKind::StrConst(s) => (text(s.clone()), prec::POSTFIX),
            ExprKind::Var(s) => match ctx.plan.folded.get(s) {
                Some(call) => match self.simple_rhs(call, ctx) {
                    Some(d) => (d, prec::POSTFIX),
                    None => (text(self.sym_name(*s)), prec::POSTFIX),
                },
                None => (text(self.sym_name(*s)), prec::POSTFIX),
            },
            ExprKind::Index { base, index } => (
                self.expr(base, prec::POSTFIX, ctx)
                    .append(text("["))
                    .append(self.expr(index, 0, ctx))
                    .append(text("]")),
                prec::POSTFIX,
            ),
            ExprKind::Field {
                base,
                strukt,
                field,
            } => {
                let name = self
                    .program
                    .field_name(*strukt, *field)
                    .map_or_else(|| format!("__field{field}"), str::to_string);
                match &base.kind {
                    ExprKind::Deref(p) if !base.parens => (
                        self.expr(p, prec::POSTFIX, ctx)
                            .append(text(format!("->{name}"))),
                        prec::POSTFIX,
                    ),
                    _ => (
                        self.expr(base, prec::POSTFIX, ctx)
                            .append(text(format!(".{name}"))),
                        prec::POSTFIX,
                    ),
                }
            }
            ExprKind::Deref(a) => (self.prefix("*", a, ctx), prec::UNARY),
            ExprKind::AddrOf(a) => (self.prefix("&", a, ctx), prec::UNARY),
            ExprKind::Unary { op, arg } => {
                let sym = match op {
                    UnOp::Neg => "-",
                    UnOp::Plus => "+",
                    UnOp::Not => "!",
                    UnOp::BitNot => "~",
                };
                (self.prefix(sym, arg, ctx), prec::UNARY)
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let (sym, p) = binop_info(*op);
                let l_min = if clarity_parens(*op, lhs, true) {
                    u8::MAX
                } else {
                    p
                };
                let r_min = if clarity_parens(*op, rhs, false) {
                    u8::MAX
                } else {
                    p + 1
                };
                (
                    self.expr(lhs, l_min, ctx)
                        .append(text(format!(" {sym}")))
                        .append(RcDoc::line())
                        .append(self.expr(rhs, r_min, ctx))
                        .group(),
                    p,
                )
            }
            ExprKind::Intrinsic { call, args } => {
                let name = call.spelling().to_string();
                (
                    call_doc(name, args.iter().map(|a| self.expr(a, 0, ctx)).collect()),
                    prec::POSTFIX,
                )
            }
            ExprKind::Cast { to, arg } => (
                text(format!("({})", self.type_name(to))).append(self.expr(arg, prec::UNARY, ctx)),
                prec::UNARY,
            ),
            ExprKind::Cond { cond, then, other } => (
                self.expr(cond, prec::OR, ctx)
                    .append(RcDoc::line())
                    .append(text("? "))
                    .append(self.expr(then, 0, ctx))
                    .append(RcDoc::line())
                    .append(text(": "))
                    .append(self.expr(other, prec::COND, ctx))
                    .group(),
                prec::COND,
            ),
            ExprKind::SizeOfType(t) => {
                (text(format!("sizeof({})", self.type_name(t))), prec::UNARY)
            }
            // `sizeof(x)` as usually written, without doubling the user's
            // own parentheses.
            ExprKind::SizeOfExpr(a) if a.parens => {
                (text("sizeof").append(self.expr(a, 0, ctx)), prec::UNARY)
            }
            ExprKind::SizeOfExpr(a) => (
                text("sizeof(")
                    .append(self.expr(a, 0, ctx))
                    .append(text(")")),
                prec::UNARY,
            ),
        }
    }

    /// A prefix operator; parenthesises an operand that would otherwise
    /// glue to it (`- -x`, `-(-1)`, `&&x`).
    fn prefix(&self, sym: &str, arg: &Expr, ctx: &Ctx) -> Doc {
        let (doc, p) = self.expr_inner(arg, ctx);
        let first = render(&doc).chars().next();
        let glues = matches!(
            (sym, first),
            ("-", Some('-')) | ("+", Some('+')) | ("&", Some('&'))
        );
        let wrap = arg.parens || p < prec::UNARY || glues;
        text(sym.to_string()).append(if wrap { parens(doc) } else { doc })
    }
}

/// The statements of a loop header list that are printed.
fn visible_stmts<'s>(list: &'s [Stmt], ctx: &Ctx) -> Vec<&'s Stmt> {
    list.iter()
        .filter(|s| !ctx.plan.hidden.contains(&key(s)) && !matches!(s.kind, StmtKind::Empty))
        .collect()
}

fn include_line(s: &str) -> Doc {
    let s = s.trim();
    if s.starts_with('#') {
        text(s.to_string())
    } else {
        text(format!("#include {s}"))
    }
}

fn char_text(value: i64) -> String {
    match u8::try_from(value) {
        Ok(b) if b.is_ascii_graphic() && b != b'\'' && b != b'\\' => format!("'{}'", b as char),
        Ok(b' ') => "' '".to_string(),
        _ => value.to_string(),
    }
}

/// The innermost type of a pointer or array type.
fn leaf(qt: &QualType) -> &QualType {
    let mut t = qt;
    // Types are finite trees; the bound only guards against misuse.
    for _ in 0..256 {
        match &t.ty {
            Type::Pointer(inner) => t = inner,
            Type::Array { elem, .. } => t = elem,
            _ => break,
        }
    }
    t
}

fn is_leaf(qt: &QualType) -> bool {
    !matches!(qt.ty, Type::Pointer(_) | Type::Array { .. })
}

/// `enum Model { LINEAR, QUAD = 4 };` (`il/enum`): a value the source gave
/// is written, the others are left to counting as they were.
fn enum_item(tag: Option<&str>, constants: &[crate::il::EnumConstant]) -> Doc {
    let head = match tag {
        Some(t) => format!("enum {t} {{"),
        None => "enum {".to_string(),
    };
    let items = constants.iter().map(|c| {
        if c.written {
            text(format!("{} = {}", c.name, c.value))
        } else {
            text(c.name.clone())
        }
    });
    text(head)
        .append(
            RcDoc::line()
                .append(RcDoc::intersperse(items, text(",").append(RcDoc::line())))
                .nest(INDENT),
        )
        .append(RcDoc::line())
        .append(text("};"))
        .group()
}

#[cfg(test)]
mod tests {
    use super::identifiers;

    /// Names outside comments and literals, whatever bytes stand between.
    #[test]
    fn identifiers_skip_comments_literals_and_other_text() {
        let c = "/* log é */ y = log(x) + 1e5; // temp\n s = \"ub\\\"\" + 'é' + ub2 é t";
        assert_eq!(identifiers(c), ["y", "log", "x", "s", "ub2", "t"]);
    }
}
