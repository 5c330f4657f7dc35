//! The S-expression back end: the whole IL in the form rule authors and
//! auditors read, specified in `spec/il-sexpr.md` (`il-sexpr/...`).
//!
//! Every item and every statement is one form, one per line, with the
//! statement id; expressions are nested forms on the line of their
//! statement unless they exceed 100 columns. Output is deterministic: maps
//! are only looked up, never iterated, except ordered ones.

use crate::front::source::{FileId, SourceMap};
use crate::il::{
    AllocForm, AssignSugar, BinOp, Block, Comments, Declarator, Expr, ExprKind, Init, IntKind,
    Item, ItemKind, LoopHeader, MathFn, Procedure, Program, QualType, RealKind, Stmt, StmtKind,
    Storage, StructId, SymId, Type, TypedefId, UnOp,
};
use pretty::RcDoc;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::collections::{BTreeMap, BTreeSet};

type Doc = RcDoc<'static, ()>;

const WIDTH: usize = 100;
const INDENT: isize = 2;

/// Prints the whole IL as S-expressions (`spec/il-sexpr.md`).
pub fn print_il(program: &Program, sources: &SourceMap) -> String {
    let printer = SPrinter {
        program,
        sources,
        ambiguous: HashSet::default(),
        typedef_bodies: super::typedef_bodies(program),
    };
    let mut out = RcDoc::nil();
    for (i, item) in program.items.iter().enumerate() {
        if i > 0 {
            out = out.append(RcDoc::hardline());
        }
        out = out.append(printer.item(item));
    }
    for c in &program.final_comments {
        out = out
            .append(RcDoc::hardline())
            .append(text(format!("(comment {})", quote(c))));
    }
    let mut buf = Vec::new();
    // Writing to a Vec cannot fail.
    let _ = out.append(RcDoc::hardline()).render(WIDTH, &mut buf);
    let raw = String::from_utf8_lossy(&buf);
    let mut text = String::with_capacity(raw.len());
    for line in raw.lines() {
        text.push_str(line.trim_end());
        text.push('\n');
    }
    if program.items.is_empty() && program.final_comments.is_empty() {
        text.clear();
    }
    text
}

fn text(s: impl Into<String>) -> Doc {
    RcDoc::text(s.into())
}

/// `(head parts...)`, on one line when it fits, else one part per line.
fn form(head: impl Into<String>, parts: Vec<Doc>) -> Doc {
    let head = text(format!("({}", head.into()));
    if parts.is_empty() {
        return head.append(text(")"));
    }
    head.append(
        RcDoc::concat(parts.into_iter().map(|p| RcDoc::line().append(p)))
            .nest(INDENT)
            .group(),
    )
    .append(text(")"))
}

/// A small document on one line.
fn flat(doc: &Doc) -> String {
    let mut buf = Vec::new();
    // Writing to a Vec cannot fail.
    let _ = doc.render(usize::MAX, &mut buf);
    String::from_utf8_lossy(&buf).into_owned()
}

/// A string literal with `\`, `"` and line breaks escaped.
pub(crate) fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The operator name of a binary operation (`il-sexpr/expr`).
/// One procedure's S-expression, with no statement ids and with its
/// scopes numbered in order of appearance: two procedures print alike
/// exactly when their code is the same up to the numbering of their
/// statements and scopes (`output/merge-copies`).
pub fn procedure_shape(program: &Program, proc: crate::il::ProcId) -> String {
    let sources = SourceMap::default();
    let printer = SPrinter {
        program,
        sources: &sources,
        ambiguous: HashSet::default(),
        typedef_bodies: super::typedef_bodies(program),
    };
    let item = Item {
        kind: ItemKind::Function(proc),
        span: program.proc(proc).span,
        comments: Comments::default(),
        file: program.main_file,
    };
    let mut text = String::new();
    printer
        .item(&item)
        .render_fmt(WIDTH, &mut text)
        .expect("writing to a String");
    renumber_marks(&text)
}

/// `#N` (statement ids) removed, and each `@N` (a scope, after an
/// ambiguous name) replaced by its rank of first appearance.
fn renumber_marks(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut scopes: HashMap<String, usize> = HashMap::default();
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if (c == '#' || c == '@') && chars.peek().is_some_and(|(_, d)| d.is_ascii_digit()) {
            let mut end = i + 1;
            while let Some(&(j, d)) = chars.peek() {
                if !d.is_ascii_digit() {
                    break;
                }
                end = j + 1;
                chars.next();
            }
            if c == '@' {
                let next = scopes.len();
                let rank = *scopes.entry(text[i + 1..end].to_string()).or_insert(next);
                out.push_str(&format!("@{rank}"));
            }
        } else {
            out.push(c);
        }
    }
    out
}

pub fn binop_name(op: BinOp) -> &'static str {
    use BinOp::*;
    match op {
        Add => "add",
        Sub => "sub",
        Mul => "mul",
        Div => "div",
        Rem => "rem",
        Lt => "lt",
        Le => "le",
        Gt => "gt",
        Ge => "ge",
        Eq => "eq",
        Ne => "ne",
        And => "and",
        Or => "or",
        BitAnd => "bitand",
        BitOr => "bitor",
        BitXor => "bitxor",
        Shl => "shl",
        Shr => "shr",
    }
}

fn binop_c(op: BinOp) -> &'static str {
    use BinOp::*;
    match op {
        Add => "+",
        Sub => "-",
        Mul => "*",
        Div => "/",
        Rem => "%",
        Lt => "<",
        Le => "<=",
        Gt => ">",
        Ge => ">=",
        Eq => "==",
        Ne => "!=",
        And => "&&",
        Or => "||",
        BitAnd => "&",
        BitOr => "|",
        BitXor => "^",
        Shl => "<<",
        Shr => ">>",
    }
}

/// The name of an intrinsic in S-expressions: the C name of the `double`
/// version, `int-abs` for the integer absolute value.
pub fn mathfn_name(f: MathFn) -> &'static str {
    match f {
        MathFn::IntAbs => "int-abs",
        f => f.c_name(),
    }
}

struct SPrinter<'a> {
    program: &'a Program,
    sources: &'a SourceMap,
    /// Symbols whose name alone is ambiguous in the procedure being printed.
    ambiguous: HashSet<SymId>,
    /// Typedefs that define a struct (`super::typedef_bodies`).
    typedef_bodies: HashMap<TypedefId, StructId>,
}

impl SPrinter<'_> {
    // -- items -------------------------------------------------------------------

    fn item(&self, item: &Item) -> Doc {
        let mut attrs = Vec::new();
        if item.file != self.program.main_file {
            attrs.push(text(format!(":in {}", self.file_name(item.file))));
        }
        let doc = match &item.kind {
            ItemKind::SystemInclude(s) => form(
                "include-system",
                vec![text(quote(s))].into_iter().chain(attrs).collect(),
            ),
            ItemKind::MacroLine(s) => form(
                "macro-line",
                vec![text(quote(s))].into_iter().chain(attrs).collect(),
            ),
            ItemKind::Enum { tag, constants } => {
                let mut parts = vec![text(tag.clone().unwrap_or_else(|| "_".into()))];
                parts.extend(
                    constants
                        .iter()
                        .map(|c| text(format!("({} {})", c.name, c.value))),
                );
                parts.extend(attrs);
                form("enum", parts)
            }
            ItemKind::LocalInclude { written, file } => {
                let mut parts = vec![
                    text(quote(written)),
                    text(format!(":file {}", self.file_name(*file))),
                ];
                parts.extend(attrs);
                form("include-local", parts)
            }
            ItemKind::Typedef(t) => match self.program.typedefs.get(t.index()) {
                Some(td) if self.typedef_bodies.contains_key(t) => {
                    // The typedef that defines a struct shows its fields.
                    let mut head = text(format!("(typedef {}", td.name));
                    for a in attrs {
                        head = head.append(text(" ")).append(a);
                    }
                    let body = match td.ty.ty {
                        Type::Struct(s) => self.struct_def(s, vec![]),
                        _ => self.ty(&td.ty),
                    };
                    head.append(RcDoc::hardline().append(body).nest(INDENT))
                        .append(text(")"))
                }
                Some(td) => {
                    let mut parts = vec![text(td.name.clone()), self.ty(&td.ty)];
                    parts.extend(attrs);
                    form("typedef", parts)
                }
                None => form("typedef", attrs),
            },
            ItemKind::Struct(s) => self.struct_def(*s, attrs),
            ItemKind::Globals {
                base: _,
                storage,
                vars,
            } => {
                let mut parts = storage_attr(*storage);
                parts.extend(attrs);
                parts.extend(vars.iter().map(|d| self.declarator(d)));
                form("globals", parts)
            }
            ItemKind::Prototype(p) => match self.program.procs.get(p.index()) {
                Some(proc) => self.proc_head("prototype", proc, attrs).append(text(")")),
                None => form("prototype", attrs),
            },
            ItemKind::Function(p) => match self.program.procs.get(p.index()) {
                Some(proc) => self.function(proc, attrs),
                None => form("function", attrs),
            },
        };
        self.with_comments(doc, &item.comments)
    }

    fn file_name(&self, file: FileId) -> String {
        quote(&self.path_of(file))
    }

    /// A file's path relative to the main file's directory when it lies
    /// below it, so the text does not depend on where the sources are.
    fn path_of(&self, file: FileId) -> String {
        let main_dir = self
            .sources
            .files()
            .find(|(id, _)| *id == self.program.main_file)
            .and_then(|(_, f)| f.path.parent().map(|p| p.to_path_buf()));
        match self.sources.files().find(|(id, _)| *id == file) {
            None => format!("file {}", file.0),
            Some((_, f)) => {
                let relative = main_dir
                    .as_deref()
                    .filter(|d| !d.as_os_str().is_empty())
                    .and_then(|d| f.path.strip_prefix(d).ok());
                relative.unwrap_or(&f.path).display().to_string()
            }
        }
    }

    fn struct_def(&self, id: StructId, attrs: Vec<Doc>) -> Doc {
        let Some(def) = self.program.structs.get(id.index()) else {
            return form("struct", attrs);
        };
        let mut head = text(format!("(struct {}", self.struct_name(id)));
        for a in attrs {
            head = head.append(text(" ")).append(a);
        }
        let fields = def.fields.iter().map(|f| {
            let field = form("field", vec![text(f.name.clone()), self.ty(&f.ty)]);
            RcDoc::hardline().append(self.with_comments(field, &f.comments))
        });
        head.append(RcDoc::concat(fields).nest(INDENT))
            .append(text(")"))
    }

    /// `(kind name (ret T) (params ...)` without the closing parenthesis.
    fn proc_head(&self, kind: &str, proc: &Procedure, attrs: Vec<Doc>) -> Doc {
        let mut parts = vec![text(proc.name.clone())];
        parts.extend(storage_attr(proc.storage));
        if proc.is_inline {
            parts.push(text(":inline"));
        }
        if proc.origin == crate::il::ProcOrigin::System {
            parts.push(text(":system"));
        }
        parts.extend(attrs);
        parts.push(form("ret", vec![self.ty(&proc.ret)]));
        let params = proc
            .params
            .iter()
            .map(|p| match self.program.symbols.get(p.index()) {
                Some(sym) => form("var", vec![text(self.var_name(*p)), self.ty(&sym.ty)]),
                None => text(format!("(var ?{})", p.0)),
            })
            .collect();
        parts.push(form("params", params));
        text(format!("({kind}")).append(RcDoc::concat(
            parts.into_iter().map(|p| text(" ").append(p)),
        ))
    }

    fn function(&self, proc: &Procedure, attrs: Vec<Doc>) -> Doc {
        // Disambiguation is per procedure, so that a name is suffixed only
        // where a reader could confuse two variables.
        let mut inner = SPrinter {
            program: self.program,
            sources: self.sources,
            ambiguous: HashSet::default(),
            typedef_bodies: HashMap::default(),
        };
        inner.ambiguous = ambiguous_syms(self.program, proc);
        let head = inner.proc_head("function", proc, attrs);
        match &proc.body {
            Some(body) => head
                .append(inner.block_body(body).nest(INDENT))
                .append(text(")")),
            None => head.append(text(")")),
        }
    }

    // -- names and types -----------------------------------------------------------

    fn var_name(&self, s: SymId) -> String {
        match self.program.symbols.get(s.index()) {
            Some(sym) if self.ambiguous.contains(&s) => format!("{}@{}", sym.name, sym.scope.0),
            // An unnamed prototype parameter.
            Some(sym) if sym.name.is_empty() => "\"\"".to_string(),
            Some(sym) => sym.name.clone(),
            None => format!("?{}", s.0),
        }
    }

    fn struct_name(&self, id: StructId) -> String {
        match self
            .program
            .structs
            .get(id.index())
            .and_then(|s| s.tag.clone())
        {
            Some(tag) => tag,
            None => format!("#{}", id.0),
        }
    }

    fn ty(&self, qt: &QualType) -> Doc {
        let inner = match &qt.ty {
            Type::Void => text("void"),
            Type::Int { kind, unsigned } => {
                let k = match kind {
                    IntKind::Bool => "bool",
                    IntKind::Char => "char",
                    IntKind::SignedChar => "signed-char",
                    IntKind::Short => "short",
                    IntKind::Int => "int",
                    IntKind::Long => "long",
                    IntKind::LongLong => "long-long",
                };
                if *unsigned {
                    text(format!("(unsigned {k})"))
                } else {
                    text(k)
                }
            }
            Type::Real(RealKind::Float) => text("float"),
            Type::Real(RealKind::Double) => text("double"),
            Type::Real(RealKind::LongDouble) => text("long-double"),
            Type::Pointer(t) => form("ptr", vec![self.ty(t)]),
            Type::Array { elem, len } => {
                let mut parts = vec![self.ty(elem)];
                if let Some(l) = len {
                    match l.value {
                        Some(v) => parts.push(text(v.to_string())),
                        None => parts.push(self.expr(&l.expr)),
                    }
                }
                form("array", parts)
            }
            Type::Struct(s) => text(format!("(struct {})", self.struct_name(*s))),
            Type::Named(t) => {
                let name = self
                    .program
                    .typedefs
                    .get(t.index())
                    .map_or_else(|| format!("?{}", t.0), |td| td.name.clone());
                text(format!("(named {name})"))
            }
            Type::Opaque(name) => text(format!("(opaque {name})")),
        };
        if qt.is_const {
            form("const", vec![inner])
        } else {
            inner
        }
    }

    // -- statements ------------------------------------------------------------------

    fn with_comments(&self, doc: Doc, comments: &Comments) -> Doc {
        let mut out = RcDoc::nil();
        for c in &comments.leading {
            out = out
                .append(text(format!("(comment {})", quote(c))))
                .append(RcDoc::hardline());
        }
        out = out.append(doc);
        if let Some(c) = &comments.trailing {
            out = out
                .append(RcDoc::hardline())
                .append(text(format!("(comment :trailing {})", quote(c))));
        }
        out
    }

    /// The statements of a block, each on a new line.
    fn block_body(&self, b: &Block) -> Doc {
        let mut out = self.stmts(&b.stmts);
        for c in &b.closing_comments {
            out = out
                .append(RcDoc::hardline())
                .append(text(format!("(comment {})", quote(c))));
        }
        out
    }

    fn stmts(&self, stmts: &[Stmt]) -> Doc {
        RcDoc::concat(stmts.iter().map(|s| RcDoc::hardline().append(self.stmt(s))))
    }

    /// `(name stmts...)` with the statements one per line.
    fn section(&self, name: &str, b: &Block) -> Doc {
        text(format!("({name}"))
            .append(self.block_body(b).nest(INDENT))
            .append(text(")"))
    }

    fn stmt(&self, s: &Stmt) -> Doc {
        let id = format!("#{}", s.id.0);
        let doc = match &s.kind {
            StmtKind::Assign { lhs, rhs, sugar } => {
                let mut head = id;
                let mut parts = Vec::new();
                match sugar {
                    AssignSugar::Plain => {}
                    AssignSugar::Compound(op) => {
                        head.push_str(&format!(" :sugar {}=", binop_c(*op)))
                    }
                    AssignSugar::Increment => head.push_str(" :sugar ++"),
                    AssignSugar::Decrement => head.push_str(" :sugar --"),
                }
                parts.push(self.expr(lhs));
                parts.push(self.expr(rhs));
                form(format!("assign {head}"), parts)
            }
            StmtKind::Call {
                result,
                callee,
                args,
                decl_init,
            } => {
                let mut head = id;
                let mut parts = Vec::new();
                if *decl_init {
                    head.push_str(" :decl-init");
                }
                let name = self
                    .program
                    .procs
                    .get(callee.index())
                    .map_or_else(|| format!("?{}", callee.0), |p| p.name.clone());
                parts.push(text(name));
                parts.push(form("args", args.iter().map(|a| self.expr(a)).collect()));
                if let Some(r) = result {
                    parts.push(form("result", vec![self.expr(r)]));
                }
                form(format!("call {head}"), parts)
            }
            StmtKind::Decl {
                base: _,
                storage,
                vars,
            } => {
                let mut head = id;
                let mut parts = Vec::new();
                for attr in storage_attr(*storage) {
                    head.push_str(&format!(" {}", flat(&attr)));
                }
                parts.extend(vars.iter().map(|d| self.declarator(d)));
                form(format!("decl {head}"), parts)
            }
            StmtKind::Alloc {
                target,
                elem,
                count,
                zeroed,
                form: how,
                decl_init,
            } => {
                let mut head = id;
                let mut parts = Vec::new();
                let cast = match how {
                    AllocForm::Malloc { cast, .. } => {
                        head.push_str(" :malloc");
                        cast
                    }
                    AllocForm::Calloc { cast, .. } => {
                        head.push_str(" :calloc");
                        cast
                    }
                };
                if *zeroed {
                    head.push_str(" :zeroed");
                }
                if *decl_init {
                    head.push_str(" :decl-init");
                }
                if let Some(c) = cast {
                    head.push_str(" :cast");
                    parts.push(self.ty(c));
                }
                parts.push(self.expr(target));
                parts.push(self.ty(elem));
                parts.push(self.expr(count));
                form(format!("alloc {head}"), parts)
            }
            StmtKind::Free { ptr } => form(format!("free {id}"), vec![self.expr(ptr)]),
            StmtKind::If { cond, then, other } => {
                // The branches go on their own lines, so the form is built
                // open rather than with `form`.
                let doc = text(format!("(if #{} ", s.id.0)).append(self.expr(cond));
                let mut branches = RcDoc::hardline().append(self.section("then", then));
                if let Some(o) = other {
                    branches = branches
                        .append(RcDoc::hardline())
                        .append(self.section("else", o));
                }
                doc.append(branches.nest(INDENT)).append(text(")"))
            }
            StmtKind::Loop { header, body } => {
                let (head, parts) = match header {
                    LoopHeader::For { init, cond, step } => {
                        let list = |name: &str, stmts: &[Stmt]| {
                            text(format!("({name}"))
                                .append(self.stmts(stmts).nest(INDENT))
                                .append(text(")"))
                        };
                        let mut parts = vec![list("init", init)];
                        if let Some(c) = cond {
                            parts.push(form("cond", vec![self.expr(c)]));
                        }
                        parts.push(list("step", step));
                        ("for", parts)
                    }
                    LoopHeader::While { cond } => {
                        ("while", vec![form("cond", vec![self.expr(cond)])])
                    }
                    LoopHeader::DoWhile { cond } => {
                        ("do-while", vec![form("cond", vec![self.expr(cond)])])
                    }
                };
                let mut inner = RcDoc::nil();
                for p in parts {
                    inner = inner.append(RcDoc::hardline()).append(p);
                }
                inner = inner
                    .append(RcDoc::hardline())
                    .append(self.section("body", body));
                text(format!("({head} #{}", s.id.0))
                    .append(inner.nest(INDENT))
                    .append(text(")"))
            }
            StmtKind::Switch { selector, cases } => {
                let cases = cases.iter().map(|c| {
                    let labels: Vec<Doc> = c
                        .labels
                        .iter()
                        .map(|l| match l {
                            Some(e) => self.expr(e),
                            None => text("default"),
                        })
                        .collect();
                    let head = text("(case").append(RcDoc::concat(
                        labels.into_iter().map(|l| text(" ").append(l)),
                    ));
                    let case = head
                        .append(self.stmts(&c.body).nest(INDENT))
                        .append(text(")"));
                    RcDoc::hardline().append(self.with_comments(case, &c.comments))
                });
                text(format!("(switch #{} ", s.id.0))
                    .append(self.expr(selector))
                    .append(RcDoc::concat(cases).nest(INDENT))
                    .append(text(")"))
            }
            StmtKind::Break => form(format!("break #{}", s.id.0), vec![]),
            StmtKind::Continue => form(format!("continue #{}", s.id.0), vec![]),
            StmtKind::Return(None) => form(format!("return #{}", s.id.0), vec![]),
            StmtKind::Return(Some(e)) => form(format!("return #{}", s.id.0), vec![self.expr(e)]),
            StmtKind::Block(b) => text(format!("(block #{} :scope {}", s.id.0, b.scope.0))
                .append(self.block_body(b).nest(INDENT))
                .append(text(")")),
            StmtKind::Empty => form(format!("empty #{}", s.id.0), vec![]),
            StmtKind::Discard(e) => form(format!("discard #{}", s.id.0), vec![self.expr(e)]),
        };
        self.with_comments(doc, &s.comments)
    }

    fn declarator(&self, d: &Declarator) -> Doc {
        let mut parts = vec![text(self.var_name(d.sym))];
        match self.program.symbols.get(d.sym.index()) {
            Some(sym) => parts.push(self.ty(&sym.ty)),
            None => parts.push(text("?")),
        }
        if let Some(init) = &d.init {
            parts.push(self.init(init));
        }
        form("var", parts)
    }

    fn init(&self, init: &Init) -> Doc {
        match init {
            Init::Expr(e) => self.expr(e),
            Init::List(items, _) => form("list", items.iter().map(|i| self.init(i)).collect()),
        }
    }

    // -- expressions -----------------------------------------------------------------

    fn expr(&self, e: &Expr) -> Doc {
        match &e.kind {
            ExprKind::IntConst { value, text: t } => text(format!(
                "(int {})",
                if t.is_empty() {
                    value.to_string()
                } else {
                    t.clone()
                }
            )),
            ExprKind::RealConst { value, text: t } => text(format!(
                "(real {})",
                if t.is_empty() {
                    super::c::real_text(*value)
                } else {
                    t.clone()
                }
            )),
            ExprKind::CharConst { value, text: t } => text(format!(
                "(char {})",
                if t.is_empty() {
                    value.to_string()
                } else {
                    t.clone()
                }
            )),
            ExprKind::StrConst(s) => text(format!("(str {s})")),
            ExprKind::Var(s) => text(format!("(var {})", self.var_name(*s))),
            ExprKind::Index { base, index } => {
                form("index", vec![self.expr(base), self.expr(index)])
            }
            ExprKind::Field {
                base,
                strukt,
                field,
            } => {
                let name = self
                    .program
                    .field_name(*strukt, *field)
                    .map_or_else(|| format!("?{field}"), str::to_string);
                form("field", vec![self.expr(base), text(name)])
            }
            ExprKind::Deref(a) => form("deref", vec![self.expr(a)]),
            ExprKind::AddrOf(a) => form("addr", vec![self.expr(a)]),
            ExprKind::Unary { op, arg } => {
                let name = match op {
                    UnOp::Neg => "neg",
                    UnOp::Plus => "plus",
                    UnOp::Not => "not",
                    UnOp::BitNot => "bitnot",
                };
                form(name, vec![self.expr(arg)])
            }
            ExprKind::Binary { op, lhs, rhs } => {
                form(binop_name(*op), vec![self.expr(lhs), self.expr(rhs)])
            }
            ExprKind::Intrinsic { call, args } => {
                let mut parts = Vec::new();
                if !call.name.is_empty() && call.name != call.func.c_name() {
                    parts.push(text(format!(":as {}", call.name)));
                }
                parts.extend(args.iter().map(|a| self.expr(a)));
                form(mathfn_name(call.func), parts)
            }
            ExprKind::Cast { to, arg } => form("cast", vec![self.ty(to), self.expr(arg)]),
            ExprKind::Cond { cond, then, other } => form(
                "cond",
                vec![self.expr(cond), self.expr(then), self.expr(other)],
            ),
            ExprKind::SizeOfType(t) => form("sizeof-type", vec![self.ty(t)]),
            ExprKind::SizeOfExpr(a) => form("sizeof", vec![self.expr(a)]),
        }
    }
}

fn storage_attr(storage: Storage) -> Vec<Doc> {
    match storage {
        Storage::Auto => vec![],
        Storage::Static => vec![text(":static")],
        Storage::Extern => vec![text(":extern")],
    }
}

/// The variables of a procedure whose names are shared by another variable
/// the procedure uses (a global, a parameter, a local of another block).
fn ambiguous_syms(program: &Program, proc: &Procedure) -> HashSet<SymId> {
    let mut used: BTreeSet<SymId> = proc.params.iter().copied().collect();
    if let Some(body) = &proc.body {
        crate::il::visit_stmts(&body.stmts, &mut |s| collect_stmt_syms(s, &mut used));
    }
    let mut by_name: BTreeMap<&str, Vec<SymId>> = BTreeMap::new();
    for s in &used {
        if let Some(sym) = program.symbols.get(s.index()) {
            by_name.entry(sym.name.as_str()).or_default().push(*s);
        }
    }
    by_name
        .into_values()
        .filter(|ids| ids.len() > 1)
        .flatten()
        .collect()
}

fn collect_stmt_syms(s: &Stmt, out: &mut BTreeSet<SymId>) {
    let mut e = |x: &Expr| collect_expr_syms(x, out);
    match &s.kind {
        StmtKind::Assign { lhs, rhs, .. } => {
            e(lhs);
            e(rhs);
        }
        StmtKind::Call { result, args, .. } => {
            result.iter().chain(args).for_each(e);
        }
        StmtKind::Decl { vars, .. } => {
            for d in vars {
                out.insert(d.sym);
                if let Some(i) = &d.init {
                    collect_init_syms(i, out);
                }
            }
        }
        StmtKind::Alloc { target, count, .. } => {
            e(target);
            e(count);
        }
        StmtKind::Free { ptr } => e(ptr),
        StmtKind::If { cond, .. } => e(cond),
        StmtKind::Loop { header, .. } => match header {
            LoopHeader::For { cond: Some(c), .. } => e(c),
            LoopHeader::For { cond: None, .. } => {}
            LoopHeader::While { cond } | LoopHeader::DoWhile { cond } => e(cond),
        },
        StmtKind::Switch { selector, .. } => e(selector),
        StmtKind::Return(Some(x)) => e(x),
        _ => {}
    }
}

fn collect_init_syms(i: &Init, out: &mut BTreeSet<SymId>) {
    match i {
        Init::Expr(e) => collect_expr_syms(e, out),
        Init::List(items, _) => items.iter().for_each(|i| collect_init_syms(i, out)),
    }
}

fn collect_expr_syms(e: &Expr, out: &mut BTreeSet<SymId>) {
    match &e.kind {
        ExprKind::Var(s) => {
            out.insert(*s);
        }
        ExprKind::Index { base, index } => {
            collect_expr_syms(base, out);
            collect_expr_syms(index, out);
        }
        ExprKind::Field { base: a, .. }
        | ExprKind::Deref(a)
        | ExprKind::AddrOf(a)
        | ExprKind::Unary { arg: a, .. }
        | ExprKind::Cast { arg: a, .. }
        | ExprKind::SizeOfExpr(a) => collect_expr_syms(a, out),
        ExprKind::Binary { lhs, rhs, .. } => {
            collect_expr_syms(lhs, out);
            collect_expr_syms(rhs, out);
        }
        ExprKind::Intrinsic { args, .. } => args.iter().for_each(|a| collect_expr_syms(a, out)),
        ExprKind::Cond { cond, then, other } => {
            collect_expr_syms(cond, out);
            collect_expr_syms(then, out);
            collect_expr_syms(other, out);
        }
        _ => {}
    }
}
