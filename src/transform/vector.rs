//! Multi-directional tangent mode (`aioli tangent --vector`; specification
//! §4.7 and Fig. 9; `spec/tangent.md`, "Vector mode"; CONTRACT §2, §3, §5).
//!
//! A pass over the scalar tangent IL that [`super::tangent::tangent_full`]
//! builds. It does not differentiate anything: every operation of `f_d` is
//! kept, in the same order, and only the storage of derivatives and the
//! repetition over directions change. So `f_dv` with `nbdirs` directions
//! computes, for direction `k`, exactly what `f_d` computes when called on
//! direction `k` alone (the tests check this bit for bit).
//!
//! - `tangent/vector-types`: every derivative gains a last dimension of size
//!   `NBDIRSMAX`, placed at the deepest point of its type (a real becomes
//!   `[NBDIRSMAX]` reals, an array of reals gains an innermost dimension, a
//!   pointer to reals points to rows of `NBDIRSMAX`, the real fields of
//!   derivative structs gain the dimension, the structs themselves do not).
//!   Taking a part of a variable (an element, a field, an offset pointer)
//!   then takes the same part of its derivative, for all directions at once.
//! - `tangent/vector-loop`: a statement that writes a derivative real runs
//!   in a loop `for (nd = 0; nd < nbdirs; nd++)` where every derivative
//!   real read or written gets `[nd]` at its deepest point; adjacent such
//!   statements share one loop. Statements of the original program,
//!   pointer assignments, allocations and calls stay outside loops.
//! - `tangent/vector-decl`, `tangent/vector-aggregate`: initialisers,
//!   struct copies and zero fills of aggregates are broken down into
//!   assignments of their real leaves (element loops for arrays).
//! - `tangent/vector-call`, `tangent/vector-return`,
//!   `tangent/vector-signature`, `tangent/vector-value-param`: the
//!   procedure interface of CONTRACT §3.
//! - `tangent/vector-names`, `tangent/vector-runtime`: names, and the
//!   `#include` of the runtime header that defines `NBDIRSMAX`.
//!
//! Why direction loops may be grouped (Fig. 9): derivative statements never
//! write an original value, and the statements for direction `k` read only
//! derivatives of direction `k` and original values. Two adjacent
//! derivative statements therefore commute across directions, and
//! `for k {A_k}; for k {B_k}` equals `for k {A_k; B_k}`.

use super::tangent::TangentInfo;
use crate::front::diag::Diagnostic;
use crate::front::source::{SourceMap, Span};
use crate::il::{
    AllocForm, ArrayLen, AssignSugar, BinOp, Block, Declarator, Expr, ExprKind, Init, Item,
    ItemKind, LoopHeader, ProcId, Program, QualType, ScopeId, Stmt, StmtId, StmtKind, Storage,
    StructId, SymId, SymKind, Symbol, Type,
};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::collections::BTreeSet;

/// The macro naming the size of the direction dimension, defined by the
/// runtime header (`tangent/vector-runtime`).
pub const NBDIRSMAX: &str = "NBDIRSMAX";

/// Differentiates `program` for `heads` in multi-directional tangent mode
/// and returns the C text of `FILE_dv.c`: the scalar tangent, then
/// [`vectorize`], then the C back end. The analyses' warnings go to `warn`.
pub fn vector_tangent(
    program: &Program,
    sources: &SourceMap,
    heads: &[crate::analysis::head::Head],
    rules: &crate::engine::RuleSet,
    opts: &super::tangent::TangentOptions,
    warn: &mut dyn FnMut(&Diagnostic),
) -> Result<String, Diagnostic> {
    let (out, info) =
        super::specialize::analyzed(program, heads, super::specialize::Target::Tangent, |a| {
            a.warnings.iter().for_each(&mut *warn);
            super::tangent::tangent_full(a, rules, opts).map(|(out, _, info)| (out, info))
        })?;
    let span = heads
        .first()
        .map(|h| program.proc(h.proc).span)
        .unwrap_or_default();
    let out =
        vectorize(out, &info).map_err(|e| Diagnostic::error(span, format!("vector mode: {e}")))?;
    Ok(crate::back::print_c(&out, sources))
}

/// Turns the scalar tangent program `out` (with what the tangent
/// transformation created, `info`) into the multi-directional tangent
/// program. Errors name a construct this pass cannot vectorize.
pub fn vectorize(out: Program, info: &TangentInfo) -> Result<Program, String> {
    Vectorizer::new(out, info).run()
}

/// Where a piece of a statement list goes.
enum Piece {
    /// Printed where it stands (already vectorized).
    Plain(Stmt),
    /// Runs once per direction, inside a direction loop (already
    /// vectorized, with `[nd]`).
    Dir(Stmt),
}

/// Which leaves of an aggregate a copy or zero fill handles: the real ones
/// run per direction, the pointer ones once (`tangent/vector-aggregate`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Part {
    Reals,
    Pointers,
}

/// What is being built for one derivative procedure.
struct ProcState {
    /// The body's scope, where created locals live.
    scope: ScopeId,
    /// The direction index `nd` and the parameter `nbdirs`.
    nd: SymId,
    nbdirs: SymId,
    used_nd: bool,
    used_nbdirs: bool,
    /// Whether this procedure returns a derivative (then through `fd`),
    /// with `fd` and its scalar type.
    fd: Option<(SymId, QualType)>,
    /// Declarations to put at the start of the body.
    top: Vec<Stmt>,
    /// Names that a new local must not take.
    names: BTreeSet<String>,
    /// Element-loop indices by nesting depth, created on demand.
    index_vars: Vec<SymId>,
}

struct Vectorizer<'i> {
    p: Program,
    info: &'i TangentInfo,
    /// Every derivative variable, including those created here.
    dsyms: HashSet<SymId>,
    /// The types of derivative variables in the scalar tangent.
    scalar_types: HashMap<SymId, QualType>,
    /// The field types of derivative structs in the scalar tangent.
    scalar_fields: HashMap<StructId, Vec<QualType>>,
    /// Each derivative procedure's parameters in the scalar tangent.
    scalar_params: HashMap<ProcId, Vec<SymId>>,
    /// The derivative procedures, sorted (output must not depend on hash
    /// order).
    dprocs: Vec<ProcId>,
    /// Derivative procedures that may write derivative globals.
    global_writers: HashSet<ProcId>,
    /// `tangent/vector-decl`: derivative variables given whole to a call
    /// (`g_dv(&a, &ad, b, bd, …)`): their directions past `nbdirs` are
    /// never set, and a compiler
    /// that cannot see the callee read only up to `nbdirs` warns that
    /// they may be used uninitialized; they start at zero.
    passed_whole: HashSet<SymId>,
    cur: Option<ProcState>,
    /// The span given to built nodes: the statement being rewritten.
    span: Span,
}

impl<'i> Vectorizer<'i> {
    fn new(p: Program, info: &'i TangentInfo) -> Vectorizer<'i> {
        let mut dprocs: Vec<ProcId> = info.procs.values().copied().collect();
        dprocs.sort();
        let dsyms: HashSet<SymId> = info.derivative_syms.clone();
        let scalar_types = dsyms.iter().map(|&s| (s, p.sym(s).ty.clone())).collect();
        let scalar_fields = info
            .structs
            .values()
            .map(|&s| (s, p.strukt(s).fields.iter().map(|f| f.ty.clone()).collect()))
            .collect();
        let scalar_params = dprocs
            .iter()
            .map(|&d| (d, p.proc(d).params.clone()))
            .collect();
        let global_writers = global_writers(&p, &dsyms, &dprocs);
        let mut passed_whole = HashSet::default();
        for &d in &dprocs {
            if let Some(b) = &p.proc(d).body {
                crate::il::visit_stmts(&b.stmts, &mut |st| {
                    if let StmtKind::Call { args, .. } = &st.kind {
                        for a in args {
                            let a = match &a.kind {
                                ExprKind::AddrOf(r) => r,
                                _ => a,
                            };
                            if let ExprKind::Var(v) = a.kind
                                && dsyms.contains(&v)
                            {
                                passed_whole.insert(v);
                            }
                        }
                    }
                });
            }
        }
        Vectorizer {
            p,
            info,
            dsyms,
            scalar_types,
            scalar_fields,
            scalar_params,
            dprocs,
            global_writers,
            passed_whole,
            cur: None,
            span: Span::default(),
        }
    }

    fn run(mut self) -> Result<Program, String> {
        self.vector_types();
        for d in self.dprocs.clone() {
            self.procedure(d)?;
        }
        self.rename_procedures();
        self.include_runtime();
        for p in &mut self.p.procs {
            if let Some(b) = &mut p.body {
                let mut n = 0;
                super::tangent::renumber(&mut b.stmts, &mut n);
                p.stmt_count = n;
            }
        }
        let problems = crate::il::validate::validate(&self.p);
        if let Some(e) = problems.first() {
            return Err(format!("internal error: the vector IL is malformed: {e}"));
        }
        Ok(self.p)
    }

    // -- types ---------------------------------------------------------------

    /// `NBDIRSMAX` as an array length: the printer spells the text, the
    /// value is the runtime's default (only layout computations read it).
    fn dims(&self) -> ArrayLen {
        ArrayLen {
            expr: Box::new(Expr::new(
                ExprKind::IntConst {
                    value: crate::runtime::DEFAULT_NBDIRSMAX,
                    text: NBDIRSMAX.to_string(),
                },
                QualType::int(),
                Span::default(),
            )),
            value: Some(crate::runtime::DEFAULT_NBDIRSMAX as u64),
        }
    }

    /// `tangent/vector-types`: the type of a derivative with the direction
    /// dimension added at the deepest point. Structs are unchanged: their
    /// real fields get the dimension instead.
    fn vt(&self, q: &QualType) -> QualType {
        match &q.ty {
            Type::Real(_) => self.with_dims(q),
            Type::Named(_) => match self.p.resolve(&q.ty) {
                Type::Real(_) => self.with_dims(q),
                // A typedef of a pointer or array type cannot take the
                // extra dimension inside it: spell the type out.
                t @ (Type::Pointer(_) | Type::Array { .. }) => {
                    let spelled = QualType {
                        ty: t.clone(),
                        is_const: q.is_const,
                    };
                    self.vt(&spelled)
                }
                _ => q.clone(),
            },
            Type::Pointer(t) => QualType {
                ty: Type::Pointer(Box::new(self.vt(t))),
                is_const: q.is_const,
            },
            Type::Array { elem, len } => QualType {
                ty: Type::Array {
                    elem: Box::new(self.vt(elem)),
                    len: len.clone(),
                },
                is_const: q.is_const,
            },
            _ => q.clone(),
        }
    }

    /// `T[NBDIRSMAX]`: a C array's qualifier belongs to its elements.
    fn with_dims(&self, elem: &QualType) -> QualType {
        QualType::new(Type::Array {
            elem: Box::new(elem.clone()),
            len: Some(self.dims()),
        })
    }

    fn vector_types(&mut self) {
        let mut structs: Vec<StructId> = self.info.structs.values().copied().collect();
        structs.sort();
        for s in structs {
            let fields: Vec<QualType> = self
                .p
                .strukt(s)
                .fields
                .iter()
                .map(|f| self.vt(&f.ty))
                .collect();
            for (f, ty) in self.p.structs[s.index()].fields.iter_mut().zip(fields) {
                f.ty = ty;
            }
        }
        let mut syms: Vec<SymId> = self.dsyms.iter().copied().collect();
        syms.sort();
        for s in syms {
            let sym = self.p.sym(s);
            let ty = if sym.kind == SymKind::Param && self.p.is_real(&sym.ty.ty) {
                // CONTRACT §3: `double x` → `const double xd[NBDIRSMAX]`.
                self.with_dims(&QualType {
                    is_const: true,
                    ..sym.ty.clone()
                })
            } else {
                self.vt(&sym.ty)
            };
            self.p.symbols[s.index()].ty = ty;
        }
    }

    fn is_ptr(&self, q: &QualType) -> bool {
        matches!(self.p.resolve(&q.ty), Type::Pointer(_))
    }

    fn is_real(&self, q: &QualType) -> bool {
        self.p.is_real(&q.ty)
    }

    fn struct_of(&self, q: &QualType) -> Option<StructId> {
        match self.p.resolve(&q.ty) {
            Type::Struct(s) => Some(*s),
            _ => None,
        }
    }

    /// The type of a derivative variable in the scalar tangent.
    fn scalar_type(&self, s: SymId) -> QualType {
        self.scalar_types
            .get(&s)
            .cloned()
            .unwrap_or_else(|| self.p.sym(s).ty.clone())
    }

    /// A struct's field types in the scalar tangent.
    fn scalar_field_types(&self, s: StructId) -> Vec<QualType> {
        match self.scalar_fields.get(&s) {
            Some(f) => f.clone(),
            None => self
                .p
                .strukt(s)
                .fields
                .iter()
                .map(|f| f.ty.clone())
                .collect(),
        }
    }

    // -- names ---------------------------------------------------------------

    /// The names visible in a procedure: global names and those of every
    /// scope under its parameter scope.
    fn proc_names(&self, d: ProcId) -> BTreeSet<String> {
        let mut names = self.global_names();
        let mut scopes = HashSet::default();
        scopes.insert(self.p.proc(d).scope);
        if let Some(b) = &self.p.proc(d).body {
            scopes.insert(b.scope);
        }
        // A child scope is created after its parent: one pass finds them all.
        for (i, sc) in self.p.scopes.iter().enumerate() {
            if sc.parent.is_some_and(|par| scopes.contains(&par)) {
                scopes.insert(ScopeId(i as u32));
            }
        }
        names.extend(
            self.p
                .symbols
                .iter()
                .filter(|s| scopes.contains(&s.scope))
                .map(|s| s.name.clone()),
        );
        names
    }

    fn global_names(&self) -> BTreeSet<String> {
        let mut names: BTreeSet<String> = self
            .p
            .symbols
            .iter()
            .filter(|s| s.kind == SymKind::Global)
            .map(|s| s.name.clone())
            .collect();
        names.extend(self.p.procs.iter().map(|p| p.name.clone()));
        names.extend(self.p.typedefs.iter().map(|t| t.name.clone()));
        names.extend(self.p.structs.iter().filter_map(|s| s.tag.clone()));
        names.insert(NBDIRSMAX.to_string());
        names.extend(self.p.macro_names().map(str::to_string));
        names
    }

    /// `tangent/vector-names`: `base`, or `base0`, `base1`, … on a clash
    /// (CONTRACT §2).
    fn fresh(names: &mut BTreeSet<String>, base: &str) -> String {
        let name = if names.contains(base) {
            (0..)
                .map(|i| format!("{base}{i}"))
                .find(|n| !names.contains(n))
                .unwrap_or_default()
        } else {
            base.to_string()
        };
        names.insert(name.clone());
        name
    }

    fn new_sym(&mut self, name: String, ty: QualType, kind: SymKind, scope: ScopeId) -> SymId {
        let id = SymId(self.p.symbols.len() as u32);
        self.p.symbols.push(Symbol {
            name: name.clone(),
            ty,
            kind,
            storage: Storage::Auto,
            scope,
            span: self.span,
        });
        self.p.scopes[scope.index()].vars.insert(name, id);
        id
    }

    fn st(&mut self) -> &mut ProcState {
        self.cur.as_mut().expect("inside a procedure")
    }

    /// A local of the procedure being built, declared at the start of its
    /// body.
    fn top_local(&mut self, base: &str, vector_ty: QualType, decl_base: QualType) -> SymId {
        let name = Self::fresh(&mut self.st().names, base);
        let scope = self.st().scope;
        let id = self.new_sym(name, vector_ty, SymKind::Local, scope);
        let decl = self.mk_stmt(StmtKind::Decl {
            base: decl_base,
            storage: Storage::Auto,
            vars: vec![Declarator {
                sym: id,
                init: None,
            }],
        });
        self.st().top.push(decl);
        id
    }

    /// A derivative temporary of scalar type `ty` (a real or a derivative
    /// struct), declared at the start of the body with its direction
    /// dimension. Returns the variable as a scalar-IL expression.
    fn derivative_temp(&mut self, base: &str, ty: &QualType) -> Expr {
        let ty = QualType {
            is_const: false,
            ..ty.clone()
        };
        let vty = self.vt(&ty);
        let id = self.top_local(base, vty, ty.clone());
        // Zeroed whole: only the first nbdirs directions are set, and the
        // whole array is passed on.
        let span = self.span;
        if let Some(Stmt {
            kind: StmtKind::Decl { vars, .. },
            ..
        }) = self.st().top.last_mut()
        {
            vars[0].init = Some(Init::List(
                vec![Init::Expr(Expr::new(
                    ExprKind::IntConst {
                        value: 0,
                        text: "0".into(),
                    },
                    QualType::int(),
                    span,
                ))],
                span,
            ));
        }
        self.dsyms.insert(id);
        self.scalar_types.insert(id, ty.clone());
        self.mk(ExprKind::Var(id), ty)
    }

    /// The element-loop index of nesting depth `depth` (declared with `nd`).
    fn index_var(&mut self, depth: usize) -> SymId {
        while self.st().index_vars.len() <= depth {
            let base = format!("ii{}", self.st().index_vars.len() + 1);
            let name = Self::fresh(&mut self.st().names, &base);
            let scope = self.st().scope;
            let id = self.new_sym(name, QualType::int(), SymKind::Local, scope);
            self.st().index_vars.push(id);
        }
        self.st().index_vars[depth]
    }

    // -- building IL ---------------------------------------------------------

    fn mk(&self, kind: ExprKind, ty: QualType) -> Expr {
        Expr::new(kind, ty, self.span)
    }

    fn mk_stmt(&self, kind: StmtKind) -> Stmt {
        Stmt {
            id: StmtId(0),
            kind,
            span: self.span,
            comments: Default::default(),
        }
    }

    fn int(&self, v: i64) -> Expr {
        self.mk(
            ExprKind::IntConst {
                value: v,
                text: String::new(),
            },
            QualType::int(),
        )
    }

    fn var(&self, s: SymId) -> Expr {
        self.mk(ExprKind::Var(s), self.p.sym(s).ty.clone())
    }

    /// A zero of a real type; the printer spells it with the type's suffix.
    fn zero(&self, ty: &QualType) -> Expr {
        self.mk(
            ExprKind::RealConst {
                value: 0.0,
                text: String::new(),
            },
            QualType {
                is_const: false,
                ..ty.clone()
            },
        )
    }

    fn nd(&mut self) -> Expr {
        self.st().used_nd = true;
        let nd = self.st().nd;
        self.var(nd)
    }

    fn nbdirs(&mut self) -> Expr {
        self.st().used_nbdirs = true;
        let n = self.st().nbdirs;
        self.var(n)
    }

    fn assign(&self, lhs: Expr, rhs: Expr) -> Stmt {
        self.mk_stmt(StmtKind::Assign {
            lhs,
            rhs,
            sugar: AssignSugar::Plain,
        })
    }

    fn block(&mut self, stmts: Vec<Stmt>) -> Block {
        let scope = self.st().scope;
        Block {
            stmts,
            scope,
            closing_comments: Vec::new(),
            span: self.span,
        }
    }

    /// `for (i = from; i < bound; i++) body`.
    fn counted_loop(&mut self, i: SymId, from: Expr, bound: Expr, body: Vec<Stmt>) -> Stmt {
        let iv = self.var(i);
        let one = self.int(1);
        let init = self.assign(iv.clone(), from);
        let cond = self.mk(
            ExprKind::Binary {
                op: BinOp::Lt,
                lhs: Box::new(iv.clone()),
                rhs: Box::new(bound),
            },
            QualType::int(),
        );
        let inc = self.mk(
            ExprKind::Binary {
                op: BinOp::Add,
                lhs: Box::new(iv.clone()),
                rhs: Box::new(one),
            },
            QualType::int(),
        );
        let step = self.mk_stmt(StmtKind::Assign {
            lhs: iv,
            rhs: inc,
            sugar: AssignSugar::Increment,
        });
        let body = self.block(body);
        self.mk_stmt(StmtKind::Loop {
            header: LoopHeader::For {
                init: vec![init],
                cond: Some(cond),
                step: vec![step],
            },
            body,
        })
    }

    /// `tangent/vector-loop`: the direction loop around `body`.
    fn direction_loop(&mut self, mut body: Vec<Stmt>) -> Stmt {
        let nd = self.st().nd;
        let zero = self.int(0);
        let bound = self.nbdirs();
        self.st().used_nd = true;
        // A comment introducing the first statement introduces the loop.
        let comments = body
            .first_mut()
            .map(|s| std::mem::take(&mut s.comments.leading))
            .unwrap_or_default();
        let mut l = self.counted_loop(nd, zero, bound, body);
        l.comments.leading = comments;
        l
    }

    /// Direction loops around each run of adjacent per-direction pieces.
    fn assemble(&mut self, pieces: Vec<Piece>) -> Vec<Stmt> {
        let mut out = Vec::new();
        let mut run = Vec::new();
        for piece in pieces {
            match piece {
                Piece::Dir(s) => run.push(s),
                Piece::Plain(s) => {
                    if !run.is_empty() {
                        let l = self.direction_loop(std::mem::take(&mut run));
                        out.push(l);
                    }
                    out.push(s);
                }
            }
        }
        if !run.is_empty() {
            let l = self.direction_loop(run);
            out.push(l);
        }
        out
    }

    // -- expressions ---------------------------------------------------------

    /// Does `e` designate derivative memory, or point into it? The scalar
    /// type of `e` says whether it is a real value, a pointer or a struct.
    fn is_dref(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Var(s) => self.dsyms.contains(s),
            ExprKind::Index { base, .. }
            | ExprKind::Field { base, .. }
            | ExprKind::Deref(base)
            | ExprKind::AddrOf(base) => self.is_dref(base),
            ExprKind::Cast { arg, .. } if self.is_ptr(&e.ty) => self.is_dref(arg),
            ExprKind::Binary { lhs, rhs, .. } if self.is_ptr(&e.ty) => {
                if super::names::is_address(&self.p, &lhs.ty) {
                    self.is_dref(lhs)
                } else {
                    self.is_dref(rhs)
                }
            }
            ExprKind::Cond { then, .. }
                if self.is_ptr(&e.ty) || self.struct_of(&e.ty).is_some() =>
            {
                self.is_dref(then)
            }
            _ => false,
        }
    }

    /// A derivative reference or pointer with its vector type
    /// (`tangent/vector-types`), without the direction index.
    fn retype(&mut self, e: &Expr) -> Result<Expr, String> {
        let (kind, ty) = match &e.kind {
            ExprKind::Var(s) => (ExprKind::Var(*s), self.p.sym(*s).ty.clone()),
            ExprKind::Index { base, index } => {
                let b = self.retype(base)?;
                let ty = self.element(&b.ty)?;
                let i = self.vexpr(index, false)?;
                (
                    ExprKind::Index {
                        base: Box::new(b),
                        index: Box::new(i),
                    },
                    ty,
                )
            }
            ExprKind::Field {
                base,
                strukt,
                field,
            } => {
                let b = self.retype(base)?;
                let ty = self
                    .p
                    .strukt(*strukt)
                    .fields
                    .get(*field)
                    .map(|f| f.ty.clone())
                    .ok_or("a field of a derivative struct is missing")?;
                (
                    ExprKind::Field {
                        base: Box::new(b),
                        strukt: *strukt,
                        field: *field,
                    },
                    ty,
                )
            }
            ExprKind::Deref(p) => {
                let b = self.retype(p)?;
                let ty = self.element(&b.ty)?;
                (ExprKind::Deref(Box::new(b)), ty)
            }
            ExprKind::AddrOf(r) => {
                let b = self.retype(r)?;
                let ty = b.ty.clone().pointer_to();
                (ExprKind::AddrOf(Box::new(b)), ty)
            }
            ExprKind::Cast { to, arg } => {
                let a = self.retype(arg)?;
                let to = self.vt(to);
                (
                    ExprKind::Cast {
                        to: to.clone(),
                        arg: Box::new(a),
                    },
                    to,
                )
            }
            ExprKind::Binary { op, lhs, rhs } => {
                // Pointer arithmetic; an array operand (`cd + k`) stands for
                // the address of its first element.
                let left = super::names::is_address(&self.p, &lhs.ty);
                let (l, r) = if left {
                    (self.retype(lhs)?, self.vexpr(rhs, false)?)
                } else {
                    (self.vexpr(lhs, false)?, self.retype(rhs)?)
                };
                let base = if left { &l.ty } else { &r.ty };
                let ty = match self.p.resolve(&base.ty) {
                    Type::Array { elem, .. } => (**elem).clone().pointer_to(),
                    _ => base.clone(),
                };
                (
                    ExprKind::Binary {
                        op: *op,
                        lhs: Box::new(l),
                        rhs: Box::new(r),
                    },
                    ty,
                )
            }
            ExprKind::Cond { cond, then, other } => {
                let c = self.vexpr(cond, false)?;
                let t = self.retype(then)?;
                let o = self.retype(other)?;
                let ty = t.ty.clone();
                (
                    ExprKind::Cond {
                        cond: Box::new(c),
                        then: Box::new(t),
                        other: Box::new(o),
                    },
                    ty,
                )
            }
            // The null pointer constant (`c ? &a[i - 1] : 0`) designates
            // nothing in any direction.
            ExprKind::IntConst { .. } => (e.kind.clone(), e.ty.clone()),
            _ => return Err("a derivative expression of an unexpected form".into()),
        };
        Ok(Expr {
            kind,
            ty,
            span: e.span,
            parens: e.parens,
        })
    }

    /// `e` converted to `target` where C needs a cast: a pointer to rows
    /// of `NBDIRSMAX` does not convert implicitly to a pointer to `const`
    /// rows (before C23), which a `const double *x` parameter's derivative
    /// is (CONTRACT §3).
    fn fit(&self, e: Expr, target: &QualType) -> Expr {
        // An array of rows (`cd`, `double cd[3][NBDIRSMAX]`) stands for a
        // pointer to its first row.
        let rows = |q: &QualType| match self.p.resolve(&q.ty) {
            Type::Pointer(t) | Type::Array { elem: t, .. } => match self.p.resolve(&t.ty) {
                Type::Array { elem, .. } => Some(self.p.resolve(&elem.ty).clone()),
                _ => None,
            },
            _ => None,
        };
        let konst = |q: &QualType| match self.p.resolve(&q.ty) {
            Type::Pointer(t) | Type::Array { elem: t, .. } => match &t.ty {
                Type::Array { elem, .. } => elem.is_const,
                _ => false,
            },
            _ => false,
        };
        match (rows(&e.ty), rows(target)) {
            (Some(_), Some(_)) if konst(target) && !konst(&e.ty) => {
                let to = QualType {
                    is_const: false,
                    ..target.clone()
                };
                self.mk(
                    ExprKind::Cast {
                        to: to.clone(),
                        arg: Box::new(e),
                    },
                    to,
                )
            }
            _ => e,
        }
    }

    /// The element type of an array or the target type of a pointer.
    fn element(&self, q: &QualType) -> Result<QualType, String> {
        match self.p.resolve(&q.ty) {
            Type::Pointer(t) | Type::Array { elem: t, .. } => Ok((**t).clone()),
            _ => Err("indexing a derivative that is neither an array nor a pointer".into()),
        }
    }

    /// An expression of the scalar tangent in vector form. Inside a
    /// direction loop (`in_loop`), a derivative real gets `[nd]` at its
    /// deepest point (`tangent/vector-loop`); outside, a derivative real is
    /// an error (the caller must have put the statement in a loop).
    fn vexpr(&mut self, e: &Expr, in_loop: bool) -> Result<Expr, String> {
        if self.is_dref(e) {
            if !self.is_real(&e.ty) {
                return self.retype(e);
            }
            if !in_loop {
                return Err("internal error: a derivative value outside a direction loop".into());
            }
            let r = self.retype(e)?;
            let nd = self.nd();
            return Ok(self.mk(
                ExprKind::Index {
                    base: Box::new(r),
                    index: Box::new(nd),
                },
                e.ty.clone(),
            ));
        }
        let mut out = e.clone();
        match &mut out.kind {
            ExprKind::IntConst { .. }
            | ExprKind::RealConst { .. }
            | ExprKind::CharConst { .. }
            | ExprKind::StrConst(_)
            | ExprKind::Var(_)
            | ExprKind::SizeOfType(_) => {}
            ExprKind::Index { base, index } => {
                **base = self.vexpr(base, in_loop)?;
                **index = self.vexpr(index, in_loop)?;
            }
            ExprKind::Field { base, .. } | ExprKind::Deref(base) | ExprKind::AddrOf(base) => {
                **base = self.vexpr(base, in_loop)?;
            }
            ExprKind::Unary { arg, .. } => **arg = self.vexpr(arg, in_loop)?,
            // `(void)xd;` and `sizeof` name a derivative without reading a
            // direction.
            ExprKind::Cast { to, arg } if matches!(to.ty, Type::Void) && self.is_dref(arg) => {
                **arg = self.retype(arg)?;
            }
            ExprKind::SizeOfExpr(arg) if self.is_dref(arg) => **arg = self.retype(arg)?,
            ExprKind::Cast { arg, .. } | ExprKind::SizeOfExpr(arg) => {
                **arg = self.vexpr(arg, in_loop)?
            }
            ExprKind::Binary { lhs, rhs, .. } => {
                **lhs = self.vexpr(lhs, in_loop)?;
                **rhs = self.vexpr(rhs, in_loop)?;
            }
            ExprKind::Intrinsic { args, .. } => {
                for a in args.iter_mut() {
                    *a = self.vexpr(a, in_loop)?;
                }
            }
            ExprKind::Cond { cond, then, other } => {
                **cond = self.vexpr(cond, in_loop)?;
                **then = self.vexpr(then, in_loop)?;
                **other = self.vexpr(other, in_loop)?;
            }
        }
        Ok(out)
    }

    fn vinit(&mut self, init: &Init) -> Result<Init, String> {
        Ok(match init {
            Init::Expr(e) => Init::Expr(self.vexpr(e, false)?),
            Init::List(items, span) => Init::List(
                items
                    .iter()
                    .map(|i| self.vinit(i))
                    .collect::<Result<_, _>>()?,
                *span,
            ),
        })
    }

    /// A scalar-IL statement of the per-direction kind (a derivative real
    /// assignment, or an element loop of them) in vector form.
    fn dir_stmt(&mut self, s: &Stmt) -> Result<Stmt, String> {
        let kind = match &s.kind {
            StmtKind::Assign { lhs, rhs, sugar } => StmtKind::Assign {
                lhs: self.vexpr(lhs, true)?,
                rhs: self.vexpr(rhs, true)?,
                sugar: *sugar,
            },
            StmtKind::Loop {
                header: LoopHeader::For { init, cond, step },
                body,
            } => {
                let init = init
                    .iter()
                    .map(|s| self.plain_stmt(s))
                    .collect::<Result<_, _>>()?;
                let step = step
                    .iter()
                    .map(|s| self.plain_stmt(s))
                    .collect::<Result<_, _>>()?;
                let cond = cond.as_ref().map(|c| self.vexpr(c, false)).transpose()?;
                let stmts = body
                    .stmts
                    .iter()
                    .map(|s| self.dir_stmt(s))
                    .collect::<Result<_, _>>()?;
                StmtKind::Loop {
                    header: LoopHeader::For { init, cond, step },
                    body: Block {
                        stmts,
                        ..body.clone()
                    },
                }
            }
            _ => {
                return Err(
                    "internal error: a statement of an unexpected kind in a direction loop".into(),
                );
            }
        };
        Ok(Stmt { kind, ..s.clone() })
    }

    /// A statement that must stay one statement (a loop header's): no
    /// derivative value may appear in it.
    fn plain_stmt(&mut self, s: &Stmt) -> Result<Stmt, String> {
        let mut pieces = Vec::new();
        self.stmt(s, &mut pieces)?;
        match (pieces.pop(), pieces.is_empty()) {
            (Some(Piece::Plain(s)), true) => Ok(s),
            _ => Err(
                "a derivative statement in a for-loop step: not supported in vector mode".into(),
            ),
        }
    }

    // -- aggregates (`tangent/vector-aggregate`) -----------------------------

    /// Scalar-IL statements that copy `rhs` into `lhs` (or zero `lhs`, when
    /// `rhs` is `None`), restricted to the leaves of `part`, for a value of
    /// scalar type `ty`: one assignment per real or pointer leaf, with
    /// element loops over arrays.
    fn leaves(
        &mut self,
        lhs: &Expr,
        rhs: Option<&Expr>,
        ty: &QualType,
        part: Part,
        depth: usize,
    ) -> Result<Vec<Stmt>, String> {
        let resolved = self.p.resolve(&ty.ty).clone();
        Ok(match resolved {
            Type::Real(_) if part == Part::Reals => {
                let value = rhs.cloned().unwrap_or_else(|| self.zero(ty));
                vec![self.assign(lhs.clone(), value)]
            }
            Type::Pointer(_) if part == Part::Pointers => {
                let value = rhs.cloned().unwrap_or_else(|| self.int(0));
                vec![self.assign(lhs.clone(), value)]
            }
            Type::Struct(sid) => {
                let mut out = Vec::new();
                for (i, fty) in self.scalar_field_types(sid).into_iter().enumerate() {
                    let field = |b: &Expr| {
                        Expr::new(
                            ExprKind::Field {
                                base: Box::new(b.clone()),
                                strukt: sid,
                                field: i,
                            },
                            fty.clone(),
                            b.span,
                        )
                    };
                    let r = rhs.map(|r| project(r, &field));
                    out.extend(self.leaves(&field(lhs), r.as_ref(), &fty, part, depth)?);
                }
                out
            }
            Type::Array { elem, len } => {
                let Some(len) = len else {
                    return Err("copying or zeroing a derivative array of unknown length".into());
                };
                let i = self.index_var(depth);
                let iv = self.var(i);
                let index = |b: &Expr| {
                    Expr::new(
                        ExprKind::Index {
                            base: Box::new(b.clone()),
                            index: Box::new(iv.clone()),
                        },
                        (*elem).clone(),
                        b.span,
                    )
                };
                let r = rhs.map(|r| project(r, &index));
                let body = self.leaves(&index(lhs), r.as_ref(), &elem, part, depth + 1)?;
                if body.is_empty() {
                    Vec::new()
                } else {
                    let from = self.int(0);
                    vec![self.counted_loop(i, from, (*len.expr).clone(), body)]
                }
            }
            _ => Vec::new(),
        })
    }

    /// Can an aggregate derivative be copied leaf by leaf from `e`: a
    /// derivative reference, or a `?:` between such?
    fn is_aggregate_source(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Cond { then, other, .. } => {
                self.is_aggregate_source(then) && self.is_aggregate_source(other)
            }
            _ => self.is_dref(e) && crate::il::validate::is_reference(e),
        }
    }

    /// A copy or zero fill of an aggregate derivative: its pointer leaves
    /// once, then its real leaves per direction.
    fn aggregate(
        &mut self,
        lhs: &Expr,
        rhs: Option<&Expr>,
        ty: &QualType,
        out: &mut Vec<Piece>,
    ) -> Result<(), String> {
        for s in self.leaves(lhs, rhs, ty, Part::Pointers, 0)? {
            self.stmt(&s, out)?;
        }
        for s in self.leaves(lhs, rhs, ty, Part::Reals, 0)? {
            let v = self.dir_stmt(&s)?;
            out.push(Piece::Dir(v));
        }
        Ok(())
    }

    /// `tangent/vector-decl`: the assignments that an initialiser of a
    /// derivative of scalar type `ty` at `lhs` stands for.
    fn init_pieces(
        &mut self,
        lhs: &Expr,
        init: &Init,
        ty: &QualType,
        out: &mut Vec<Piece>,
    ) -> Result<(), String> {
        match init {
            Init::Expr(e) if self.is_real(ty) => {
                let s = self.assign(lhs.clone(), e.clone());
                let v = self.dir_stmt(&s)?;
                out.push(Piece::Dir(v));
            }
            Init::Expr(e) if self.struct_of(ty).is_some() && self.is_aggregate_source(e) => {
                self.aggregate(lhs, Some(e), ty, out)?;
            }
            Init::Expr(e) => {
                let s = self.assign(lhs.clone(), e.clone());
                self.stmt(&s, out)?;
            }
            Init::List(items, _) => {
                // What a list leaves out is zero (C99 6.7.8): zero the whole
                // object first unless the list gives every leaf.
                if is_zero_init(init) || !self.complete(init, ty) {
                    self.aggregate(lhs, None, ty, out)?;
                }
                if is_zero_init(init) {
                    return Ok(());
                }
                match self.p.resolve(&ty.ty).clone() {
                    Type::Array { elem, .. } => {
                        for (k, item) in items.iter().enumerate() {
                            let at = self.int(k as i64);
                            let l = self.mk(
                                ExprKind::Index {
                                    base: Box::new(lhs.clone()),
                                    index: Box::new(at),
                                },
                                (*elem).clone(),
                            );
                            self.init_pieces(&l, item, &elem, out)?;
                        }
                    }
                    Type::Struct(sid) => {
                        for (k, (item, fty)) in
                            items.iter().zip(self.scalar_field_types(sid)).enumerate()
                        {
                            let l = self.mk(
                                ExprKind::Field {
                                    base: Box::new(lhs.clone()),
                                    strukt: sid,
                                    field: k,
                                },
                                fty.clone(),
                            );
                            self.init_pieces(&l, item, &fty, out)?;
                        }
                    }
                    _ => {
                        return Err(
                            "an initialiser list for a derivative that is not an aggregate".into(),
                        );
                    }
                }
            }
        }
        Ok(())
    }

    /// Does an initialiser give a value to every leaf of `ty`?
    fn complete(&self, init: &Init, ty: &QualType) -> bool {
        match (init, self.p.resolve(&ty.ty)) {
            (Init::Expr(_), _) => true,
            (Init::List(items, _), Type::Array { elem, len }) => {
                len.as_ref().and_then(|l| l.value) == Some(items.len() as u64)
                    && items.iter().all(|i| self.complete(i, elem))
            }
            (Init::List(items, _), Type::Struct(s)) => {
                let fields = self.scalar_field_types(*s);
                items.len() == fields.len()
                    && items.iter().zip(&fields).all(|(i, f)| self.complete(i, f))
            }
            (Init::List(items, _), _) => items.len() == 1,
        }
    }

    // -- statements ----------------------------------------------------------

    fn list(&mut self, stmts: &[Stmt]) -> Result<Vec<Stmt>, String> {
        let mut pieces = Vec::new();
        for s in stmts {
            self.stmt(s, &mut pieces)?;
        }
        Ok(self.assemble(pieces))
    }

    fn sub_block(&mut self, b: &Block) -> Result<Block, String> {
        Ok(Block {
            stmts: self.list(&b.stmts)?,
            ..b.clone()
        })
    }

    /// One statement of the scalar tangent, as pieces of the vector one.
    fn stmt(&mut self, s: &Stmt, out: &mut Vec<Piece>) -> Result<(), String> {
        self.span = s.span;
        let plain = |kind: StmtKind| Piece::Plain(Stmt { kind, ..s.clone() });
        match &s.kind {
            StmtKind::Assign { lhs, rhs, sugar } if self.is_dref(lhs) => {
                if self.is_real(&lhs.ty) {
                    let v = self.dir_stmt(s)?;
                    out.push(Piece::Dir(v));
                } else if self.is_ptr(&lhs.ty) {
                    let l = self.retype(lhs)?;
                    let r = self.vexpr(rhs, false)?;
                    let r = self.fit(r, &l.ty);
                    out.push(plain(StmtKind::Assign {
                        lhs: l,
                        rhs: r,
                        sugar: *sugar,
                    }));
                } else if self.struct_of(&lhs.ty).is_some() && self.is_aggregate_source(rhs) {
                    let mut pieces = Vec::new();
                    self.aggregate(lhs, Some(rhs), &lhs.ty.clone(), &mut pieces)?;
                    attach_comments(s, &mut pieces);
                    out.extend(pieces);
                } else {
                    // A whole-value copy would also copy the directions
                    // beyond `nbdirs`, which the caller may own.
                    return Err(
                        "a derivative aggregate assigned from an expression of a form \
                         the vector mode does not handle"
                            .into(),
                    );
                }
            }
            StmtKind::Assign { lhs, rhs, sugar } => {
                let l = self.vexpr(lhs, false)?;
                let r = self.vexpr(rhs, false)?;
                out.push(plain(StmtKind::Assign {
                    lhs: l,
                    rhs: r,
                    sugar: *sugar,
                }));
            }
            StmtKind::Decl {
                base,
                storage,
                vars,
            } => self.decl(s, base, *storage, vars, out)?,
            StmtKind::Call {
                result,
                callee,
                args,
                decl_init,
            } => {
                if self.scalar_params.contains_key(callee) {
                    self.call(s, result.as_ref(), *callee, args, out)?;
                } else {
                    let result = result.as_ref().map(|r| self.vexpr(r, false)).transpose()?;
                    let args = args
                        .iter()
                        .map(|a| self.vexpr(a, false))
                        .collect::<Result<_, _>>()?;
                    out.push(plain(StmtKind::Call {
                        result,
                        callee: *callee,
                        args,
                        decl_init: *decl_init,
                    }));
                }
            }
            StmtKind::Alloc {
                target,
                elem,
                count,
                zeroed,
                form,
                decl_init,
            } => {
                let count_v = self.vexpr(count, false)?;
                let kind = if self.is_dref(target) {
                    let target = self.retype(target)?;
                    let elem = self.vt(elem);
                    let size = self.mk(ExprKind::SizeOfType(elem.clone()), QualType::size_t());
                    let form = match form {
                        AllocForm::Calloc { count, cast, .. } => AllocForm::Calloc {
                            count: self.vexpr(count, false)?,
                            size,
                            cast: cast.as_ref().map(|c| self.vt(c)),
                        },
                        AllocForm::Malloc { cast, .. } => AllocForm::Malloc {
                            bytes: self.mk(
                                ExprKind::Binary {
                                    op: BinOp::Mul,
                                    lhs: Box::new(count_v.clone()),
                                    rhs: Box::new(size),
                                },
                                QualType::size_t(),
                            ),
                            cast: cast.as_ref().map(|c| self.vt(c)),
                        },
                    };
                    StmtKind::Alloc {
                        target,
                        elem,
                        count: count_v,
                        zeroed: *zeroed,
                        form,
                        decl_init: *decl_init,
                    }
                } else {
                    let form = match form {
                        AllocForm::Calloc { count, size, cast } => AllocForm::Calloc {
                            count: self.vexpr(count, false)?,
                            size: self.vexpr(size, false)?,
                            cast: cast.clone(),
                        },
                        AllocForm::Malloc { bytes, cast } => AllocForm::Malloc {
                            bytes: self.vexpr(bytes, false)?,
                            cast: cast.clone(),
                        },
                    };
                    StmtKind::Alloc {
                        target: self.vexpr(target, false)?,
                        elem: elem.clone(),
                        count: count_v,
                        zeroed: *zeroed,
                        form,
                        decl_init: *decl_init,
                    }
                };
                out.push(plain(kind));
            }
            StmtKind::Free { ptr } => {
                let ptr = self.vexpr(ptr, false)?;
                out.push(plain(StmtKind::Free { ptr }));
            }
            StmtKind::If { cond, then, other } => {
                let cond = self.vexpr(cond, false)?;
                let then = self.sub_block(then)?;
                let other = other.as_ref().map(|o| self.sub_block(o)).transpose()?;
                out.push(plain(StmtKind::If { cond, then, other }));
            }
            StmtKind::Loop { header, body } => self.loop_stmt(s, header, body, out)?,
            StmtKind::Switch { selector, cases } => {
                let selector = self.vexpr(selector, false)?;
                let mut new_cases = Vec::new();
                for c in cases {
                    new_cases.push(crate::il::SwitchCase {
                        body: self.list(&c.body)?,
                        ..c.clone()
                    });
                }
                out.push(plain(StmtKind::Switch {
                    selector,
                    cases: new_cases,
                }));
            }
            StmtKind::Return(Some(e)) if self.cur.as_ref().is_some_and(|c| c.fd.is_some()) => {
                self.return_derivative(s, e, out)?
            }
            StmtKind::Return(e) => {
                let e = e.as_ref().map(|e| self.vexpr(e, false)).transpose()?;
                out.push(plain(StmtKind::Return(e)));
            }
            StmtKind::Block(b) => {
                let b = self.sub_block(b)?;
                out.push(plain(StmtKind::Block(b)));
            }
            StmtKind::Discard(e) => {
                let e = self.vexpr(e, false)?;
                out.push(plain(StmtKind::Discard(e)));
            }
            StmtKind::Break | StmtKind::Continue | StmtKind::Empty => {
                out.push(Piece::Plain(s.clone()))
            }
        }
        Ok(())
    }

    fn loop_stmt(
        &mut self,
        s: &Stmt,
        header: &LoopHeader,
        body: &Block,
        out: &mut Vec<Piece>,
    ) -> Result<(), String> {
        let original_body = body;
        let mut body = self.sub_block(body)?;
        let header = match header {
            LoopHeader::While { cond } => LoopHeader::While {
                cond: self.vexpr(cond, false)?,
            },
            LoopHeader::DoWhile { cond } => LoopHeader::DoWhile {
                cond: self.vexpr(cond, false)?,
            },
            LoopHeader::For { init, cond, step } => {
                let mut init_pieces = Vec::new();
                for i in init {
                    self.stmt(i, &mut init_pieces)?;
                }
                let mut step_pieces = Vec::new();
                for st in step {
                    self.stmt(st, &mut step_pieces)?;
                }
                let mut cond = cond.as_ref().map(|c| self.vexpr(c, false)).transpose()?;
                let step = if step_pieces.iter().any(|p| matches!(p, Piece::Dir(_))) {
                    // A derivative update in the step needs a direction
                    // loop, which a header cannot hold: the step moves to
                    // the end of the body, which nothing skips when no
                    // `continue` leaves it; else to the top of the body,
                    // skipped on the first pass by a flag, followed by the
                    // test (as the front end lowers such steps, `il/split`).
                    let step_stmts = self.assemble(step_pieces);
                    if continues(&original_body.stmts) {
                        let flag = self.top_local("aioli_first", QualType::int(), QualType::int());
                        let flag_var = self.var(flag);
                        let one = self.int(1);
                        out.push(Piece::Plain(self.assign(flag_var.clone(), one)));
                        let not_first = self.mk(
                            ExprKind::Unary {
                                op: crate::il::UnOp::Not,
                                arg: Box::new(flag_var.clone()),
                            },
                            QualType::int(),
                        );
                        let step_block = self.block(step_stmts);
                        let mut head = vec![
                            self.mk_stmt(StmtKind::If {
                                cond: not_first,
                                then: step_block,
                                other: None,
                            }),
                            self.assign(flag_var, self.int(0)),
                        ];
                        if let Some(c) = cond.take() {
                            let mut inner = c;
                            inner.parens = true;
                            let negated = self.mk(
                                ExprKind::Unary {
                                    op: crate::il::UnOp::Not,
                                    arg: Box::new(inner),
                                },
                                QualType::int(),
                            );
                            let exit = self.block(vec![self.mk_stmt(StmtKind::Break)]);
                            head.push(self.mk_stmt(StmtKind::If {
                                cond: negated,
                                then: exit,
                                other: None,
                            }));
                        }
                        body.stmts.splice(0..0, head);
                    } else {
                        body.stmts.extend(step_stmts);
                    }
                    Vec::new()
                } else {
                    step_pieces
                        .into_iter()
                        .map(|p| match p {
                            Piece::Plain(s) | Piece::Dir(s) => s,
                        })
                        .collect()
                };
                if init_pieces.iter().any(|p| matches!(p, Piece::Dir(_))) {
                    // A derivative initialisation in the header needs a
                    // direction loop, which a header cannot hold: the
                    // initialisations move before the loop, in a block that
                    // keeps the scope of what they declare.
                    let mut stmts = self.assemble(init_pieces);
                    stmts.push(Stmt {
                        kind: StmtKind::Loop {
                            header: LoopHeader::For {
                                init: Vec::new(),
                                cond,
                                step,
                            },
                            body,
                        },
                        ..s.clone()
                    });
                    let b = Block {
                        stmts,
                        ..self.block(Vec::new())
                    };
                    out.push(Piece::Plain(self.mk_stmt(StmtKind::Block(b))));
                    return Ok(());
                }
                let init = init_pieces
                    .into_iter()
                    .map(|p| match p {
                        Piece::Plain(s) | Piece::Dir(s) => s,
                    })
                    .collect();
                LoopHeader::For { init, cond, step }
            }
        };
        out.push(Piece::Plain(Stmt {
            kind: StmtKind::Loop { header, body },
            ..s.clone()
        }));
        Ok(())
    }

    /// `tangent/vector-decl`: derivative declarators lose their
    /// initialisers, which become assignments per direction right after
    /// the declaration. Pointer derivatives keep theirs (they are
    /// addresses, the same for every direction).
    fn decl(
        &mut self,
        s: &Stmt,
        base: &QualType,
        storage: Storage,
        vars: &[Declarator],
        out: &mut Vec<Piece>,
    ) -> Result<(), String> {
        let mut current: Vec<Declarator> = Vec::new();
        let mut pending: Vec<Piece> = Vec::new();
        // Names the pending initialisers read: moving them after a later
        // declarator of the same name would make them read that one.
        let mut pending_names: HashSet<String> = HashSet::default();
        let mut first = true;
        let flush = |current: &mut Vec<Declarator>,
                     pending: &mut Vec<Piece>,
                     first: &mut bool,
                     out: &mut Vec<Piece>| {
            if !current.is_empty() {
                let mut st = Stmt {
                    kind: StmtKind::Decl {
                        base: base.clone(),
                        storage,
                        vars: std::mem::take(current),
                    },
                    ..s.clone()
                };
                if !*first {
                    st.comments = Default::default();
                }
                *first = false;
                out.push(Piece::Plain(st));
            }
            out.append(pending);
        };
        for d in vars {
            let name = self.p.sym(d.sym).name.clone();
            if pending_names.contains(&name) {
                flush(&mut current, &mut pending, &mut first, out);
                pending_names.clear();
            }
            let sty = self.scalar_type(d.sym);
            match &d.init {
                // A static local is initialised once, before the program
                // runs, and static storage starts at zero in every
                // direction: a per-call loop would reset it.
                Some(init)
                    if self.dsyms.contains(&d.sym)
                        && !self.is_ptr(&sty)
                        && storage == Storage::Static =>
                {
                    if !is_zero_init(init) {
                        return Err(format!(
                            "the static derivative '{}' has a non-zero initialiser",
                            self.p.sym(d.sym).name
                        ));
                    }
                    current.push(Declarator {
                        sym: d.sym,
                        init: None,
                    });
                }
                Some(init) if self.dsyms.contains(&d.sym) && !self.is_ptr(&sty) => {
                    // Set by assignments now, so not `const` (`const
                    // double w[2] = {...}`); the printer then declares it
                    // apart from its primal.
                    super::names::strip_own_const(&mut self.p.symbols[d.sym.index()].ty);
                    let zero = (self.passed_whole.contains(&d.sym) && self.p.is_real(&sty.ty))
                        .then(|| Init::List(vec![Init::Expr(self.zero(&sty))], self.span));
                    current.push(Declarator {
                        sym: d.sym,
                        init: zero,
                    });
                    collect_names(&self.p, init, &mut pending_names);
                    let lhs = self.mk(ExprKind::Var(d.sym), sty.clone());
                    self.init_pieces(&lhs, init, &sty, &mut pending)?;
                }
                init => {
                    let mut init = init.as_ref().map(|i| self.vinit(i)).transpose()?;
                    if let Some(Init::Expr(e)) = &mut init {
                        let target = self.p.sym(d.sym).ty.clone();
                        *e = self.fit(e.clone(), &target);
                    }
                    current.push(Declarator { sym: d.sym, init });
                }
            }
        }
        flush(&mut current, &mut pending, &mut first, out);
        Ok(())
    }

    /// `tangent/vector-call`: `P_d(ARGS)` becomes `P_dv(ARGS, nbdirs)`.
    /// Derivative arguments are arrays (the callee reads and writes the
    /// caller's); a by-value derivative that is not a reference to a
    /// derivative of the parameter's type is computed into a temporary
    /// first. The result's derivative, when `P_d` returns one, goes through
    /// the parameter before the primal-result pointer.
    fn call(
        &mut self,
        s: &Stmt,
        result: Option<&Expr>,
        callee: ProcId,
        args: &[Expr],
        out: &mut Vec<Piece>,
    ) -> Result<(), String> {
        let params = self.scalar_params[&callee].clone();
        if params.len() != args.len() {
            return Err(format!(
                "a call to '{}' with {} arguments for {} parameters",
                self.p.proc(callee).name,
                args.len(),
                params.len()
            ));
        }
        let mut pieces = Vec::new();
        let mut new_args = Vec::new();
        for (a, &prm) in args.iter().zip(&params) {
            let pty = self.scalar_type(prm);
            if self.dsyms.contains(&prm) && self.is_real(&pty) {
                let same_type = self.p.resolve(&a.ty.ty) == self.p.resolve(&pty.ty);
                if self.is_dref(a) && crate::il::validate::is_reference(a) && same_type {
                    new_args.push(self.retype(a)?);
                } else {
                    let t = self.derivative_temp("aioli_argd", &pty);
                    let set = self.assign(t.clone(), a.clone());
                    let v = self.dir_stmt(&set)?;
                    pieces.push(Piece::Dir(v));
                    new_args.push(self.retype(&t)?);
                }
            } else {
                let v = self.vexpr(a, false)?;
                let target = self.p.sym(prm).ty.clone();
                new_args.push(self.fit(v, &target));
            }
        }
        let mut new_result = None;
        let mut after = None;
        if self.info.result_params.contains_key(&callee) {
            let ret = self.p.proc(callee).ret.clone();
            let target = match result {
                Some(r) => r.clone(),
                // The caller does not need the derivative of the result,
                // but the callee writes it somewhere.
                None => self.derivative_temp("aioli_resultd", &ret),
            };
            let fd_arg = if self.struct_of(&target.ty).is_some()
                || matches!(self.p.resolve(&target.ty.ty), Type::Pointer(_))
            {
                let mut r = self.retype(&target)?;
                // The callee's result type, from its primal-result
                // parameter (`double **at`).
                let callee_ret = self.info.result_params.get(&callee).and_then(|&r| {
                    match self.p.resolve(&self.p.sym(r).ty.ty) {
                        Type::Pointer(t) => Some(QualType {
                            is_const: false,
                            ..(**t).clone()
                        }),
                        _ => None,
                    }
                });
                let pointee_const = |ty: &QualType| match self.p.resolve(&ty.ty) {
                    Type::Pointer(q) => Some(q.is_const),
                    _ => None,
                };
                let differs = match (&callee_ret, pointee_const(&target.ty)) {
                    (Some(c), Some(t)) => pointee_const(c).is_some_and(|cc| cc != t),
                    _ => false,
                };
                if let (true, Some(bare)) = (differs, callee_ret) {
                    // `const double *r = at(x, 1)`: `&rd` would be a
                    // `const double (**)[NBDIRSMAX]`, which C does not
                    // convert to the callee's `double (**)[NBDIRSMAX]`;
                    // a temporary of the callee's type receives it.
                    let t = self.derivative_temp("aioli_resultd", &bare);
                    let t = self.retype(&t)?;
                    let cast = self.mk(
                        ExprKind::Cast {
                            to: r.ty.clone(),
                            arg: Box::new(t.clone()),
                        },
                        r.ty.clone(),
                    );
                    after = Some(self.assign(r, cast));
                    r = t;
                }
                let ty = r.ty.clone().pointer_to();
                self.mk(ExprKind::AddrOf(Box::new(r)), ty)
            } else {
                self.retype(&target)?
            };
            let at = new_args.len().saturating_sub(1);
            new_args.insert(at, fd_arg);
        } else if let Some(r) = result {
            new_result = Some(self.vexpr(r, false)?);
        }
        let n = self.nbdirs();
        new_args.push(n);
        let decl_init = match &s.kind {
            StmtKind::Call { decl_init, .. } => *decl_init && new_result.is_some(),
            _ => false,
        };
        pieces.push(Piece::Plain(Stmt {
            kind: StmtKind::Call {
                result: new_result,
                callee,
                args: new_args,
                decl_init,
            },
            ..s.clone()
        }));
        if let Some(a) = after {
            pieces.push(Piece::Plain(a));
        }
        if pieces.len() > 1 {
            // The call's comments introduce the temporaries computed for it.
            let leading = match pieces.last_mut() {
                Some(Piece::Plain(c)) => std::mem::take(&mut c.comments.leading),
                _ => Vec::new(),
            };
            if let Some(Piece::Dir(first)) = pieces.first_mut() {
                first.comments.leading = leading;
            }
        }
        out.extend(pieces);
        Ok(())
    }

    /// `tangent/vector-return`: `return ed;` fills the result's derivative
    /// parameter for every direction, then returns.
    fn return_derivative(
        &mut self,
        s: &Stmt,
        e: &Expr,
        out: &mut Vec<Piece>,
    ) -> Result<(), String> {
        let (fd, fty) = self
            .st()
            .fd
            .clone()
            .expect("a procedure returning a derivative");
        let mut pieces = Vec::new();
        if self.is_real(&fty) {
            let lhs = self.mk(ExprKind::Var(fd), fty.clone());
            let set = self.assign(lhs, e.clone());
            let v = self.dir_stmt(&set)?;
            pieces.push(Piece::Dir(v));
        } else if matches!(self.p.resolve(&fty.ty), Type::Pointer(_)) {
            // A derivative pointer (`tangent/pointer-result`).
            let vty = self.vt(&fty);
            let p = self.mk(ExprKind::Var(fd), vty.clone().pointer_to());
            let lhs = self.mk(ExprKind::Deref(Box::new(p)), vty);
            let rhs = self.vexpr(e, false)?;
            pieces.push(Piece::Plain(self.assign(lhs, rhs)));
        } else {
            // A struct result comes back through a pointer.
            let p = self.mk(ExprKind::Var(fd), fty.clone().pointer_to());
            let lhs = self.mk(ExprKind::Deref(Box::new(p)), fty.clone());
            if self.is_aggregate_source(e) {
                self.aggregate(&lhs, Some(e), &fty, &mut pieces)?;
            } else {
                let set = self.assign(lhs, e.clone());
                self.stmt(&set, &mut pieces)?;
            }
        }
        attach_comments(s, &mut pieces);
        out.extend(pieces);
        out.push(Piece::Plain(Stmt {
            kind: StmtKind::Return(None),
            comments: Default::default(),
            ..s.clone()
        }));
        Ok(())
    }

    // -- procedures ----------------------------------------------------------

    /// `tangent/vector-signature`: the parameters of `f_dv` and its body.
    fn procedure(&mut self, d: ProcId) -> Result<(), String> {
        let proc = self.p.proc(d).clone();
        let Some(body) = &proc.body else {
            return Ok(());
        };
        self.span = proc.span;
        let mut names = self.proc_names(d);
        let nd_name = Self::fresh(&mut names, "nd");
        let nbdirs_name = Self::fresh(&mut names, "nbdirs");
        let nd = self.new_sym(nd_name, QualType::int(), SymKind::Local, body.scope);
        let nbdirs = self.new_sym(nbdirs_name, QualType::int(), SymKind::Param, proc.scope);
        self.cur = Some(ProcState {
            scope: body.scope,
            nd,
            nbdirs,
            used_nd: false,
            used_nbdirs: false,
            fd: None,
            top: Vec::new(),
            names,
            index_vars: Vec::new(),
        });
        let mut params = proc.params.clone();
        let mut ret = proc.ret.clone();
        if let Some(&primal_result) = self.info.result_params.get(&d) {
            // CONTRACT §3: `double fd[NBDIRSMAX]` before the primal-result
            // pointer; a struct result's derivative through a pointer.
            let scalar = QualType {
                is_const: false,
                ..proc.ret.clone()
            };
            let base = format!("{}d", self.p.sym(primal_result).name);
            let name = Self::fresh(&mut self.st().names, &base);
            let vty = if self.is_real(&scalar) {
                self.with_dims(&scalar)
            } else {
                // A struct, or a pointer (`tangent/pointer-result`): its
                // derivative comes back through a pointer.
                self.vt(&scalar).pointer_to()
            };
            let fd = self.new_sym(name, vty, SymKind::Param, proc.scope);
            self.dsyms.insert(fd);
            self.scalar_types.insert(fd, scalar.clone());
            self.st().fd = Some((fd, scalar));
            let at = params
                .iter()
                .position(|&p| p == primal_result)
                .unwrap_or(params.len());
            params.insert(at, fd);
            ret = QualType::void();
        }
        params.push(nbdirs);
        // `tangent/vector-value-param`: by-value derivatives that need a
        // copy of their own.
        let mut copies = Vec::new();
        let writes_shared = writes_shared_memory(self, &body.stmts);
        for slot in params.iter_mut() {
            let s = *slot;
            let sym = self.p.sym(s).clone();
            let is_fd = self
                .cur
                .as_ref()
                .and_then(|c| c.fd.as_ref())
                .is_some_and(|(fd, _)| *fd == s);
            if is_fd
                || !self.dsyms.contains(&s)
                || sym.kind != SymKind::Param
                || !self.is_real(&self.scalar_type(s))
            {
                continue;
            }
            let use_ = value_param_use(&body.stmts, s);
            if !(use_.written || use_.addressed || (use_.read && writes_shared)) {
                continue;
            }
            let name = Self::fresh(&mut self.st().names, &sym.name);
            let param = self.new_sym(name, sym.ty.clone(), SymKind::Param, proc.scope);
            let elem = QualType {
                is_const: false,
                ..self.scalar_type(s)
            };
            let local_ty = self.with_dims(&elem);
            let local = &mut self.p.symbols[s.index()];
            local.kind = SymKind::Local;
            local.scope = body.scope;
            local.ty = local_ty;
            *slot = param;
            copies.push((s, param, elem));
        }
        let mut pieces = Vec::new();
        for (local, param, elem) in copies {
            let decl = self.mk_stmt(StmtKind::Decl {
                base: elem.clone(),
                storage: Storage::Auto,
                vars: vec![Declarator {
                    sym: local,
                    init: None,
                }],
            });
            self.st().top.push(decl);
            // Both are derivative reals of scalar type `elem` here.
            self.dsyms.insert(param);
            self.scalar_types.insert(param, elem.clone());
            let l = self.mk(ExprKind::Var(local), elem.clone());
            let r = self.mk(ExprKind::Var(param), elem.clone());
            let set = self.assign(l, r);
            let v = self.dir_stmt(&set)?;
            pieces.push(Piece::Dir(v));
        }
        for s in &body.stmts {
            self.stmt(s, &mut pieces)?;
        }
        let mut stmts = self.assemble(pieces);
        // `return ed;` at the end became `...; return;`, which says nothing
        // there.
        if let Some(last) = stmts.last()
            && matches!(last.kind, StmtKind::Return(None))
            && last.comments.is_empty()
        {
            stmts.pop();
        }
        let st = self.cur.take().expect("inside a procedure");
        self.span = proc.span;
        let mut head = Vec::new();
        let counters: Vec<SymId> = st
            .used_nd
            .then_some(st.nd)
            .into_iter()
            .chain(st.index_vars)
            .collect();
        if !counters.is_empty() {
            head.push(
                self.mk_stmt(StmtKind::Decl {
                    base: QualType::int(),
                    storage: Storage::Auto,
                    vars: counters
                        .into_iter()
                        .map(|sym| Declarator { sym, init: None })
                        .collect(),
                }),
            );
        }
        head.extend(merge_decls(st.top));
        if !st.used_nbdirs {
            // No derivative is computed here: keep the compiler quiet about
            // the unused count.
            let v = self.var(st.nbdirs);
            let void = QualType::void();
            head.push(self.mk_stmt(StmtKind::Discard(self.mk(
                ExprKind::Cast {
                    to: void.clone(),
                    arg: Box::new(v),
                },
                void,
            ))));
        }
        head.extend(stmts);
        let dp = &mut self.p.procs[d.index()];
        dp.params = params;
        dp.ret = ret;
        if let Some(b) = &mut dp.body {
            b.stmts = head;
        }
        Ok(())
    }

    /// `tangent/vector-names`: `f_d` becomes `f_dv`.
    fn rename_procedures(&mut self) {
        let mut names = self.global_names();
        let mut pairs: Vec<(ProcId, ProcId)> =
            self.info.procs.iter().map(|(&o, &d)| (o, d)).collect();
        pairs.sort();
        for (orig, d) in pairs {
            let base = format!("{}_dv", self.p.proc(orig).name);
            let name = Self::fresh(&mut names, &base);
            self.p.procs[d.index()].name = name;
        }
    }

    /// `tangent/vector-runtime`: `#include "aioli.h"` first (the runtime
    /// header defines `NBDIRSMAX`, which the derivative types placed right
    /// after the header defining their struct already use), after the
    /// file's opening comment.
    fn include_runtime(&mut self) {
        let main = self.p.main_file;
        let span = self.p.items.first().map(|i| i.span).unwrap_or_default();
        // A verbatim line: the header is not an input file, so it has no
        // file id for a `LocalInclude`.
        let mut item = Item {
            kind: ItemKind::MacroLine(crate::runtime::include_line()),
            span,
            comments: Default::default(),
            file: main,
        };
        if let Some(first) = self.p.items.iter_mut().find(|i| i.file == main) {
            item.comments.leading = std::mem::take(&mut first.comments.leading);
        }
        // The derivative of a first function carries the comment too, as
        // its procedure's own: it would come out twice.
        let moved = &item.comments.leading;
        if !moved.is_empty() {
            for proc in &mut self.p.procs {
                if proc.comments.leading.starts_with(moved) {
                    proc.comments.leading.drain(..moved.len());
                }
            }
        }
        let first = self
            .p
            .items
            .iter()
            .position(|i| i.file == main)
            .unwrap_or(0);
        self.p.items.insert(first, item);
    }
}

/// A part (`step`: a field or an element) of an aggregate value: of the
/// reference itself, or of both branches of a `?:` choosing between
/// references, so that `(c ? ad : bd).re[nd]` is written `c ? ad.re[nd] :
/// bd.re[nd]`.
fn project(e: &Expr, step: &impl Fn(&Expr) -> Expr) -> Expr {
    match &e.kind {
        ExprKind::Cond { cond, then, other } => {
            let t = project(then, step);
            let o = project(other, step);
            let ty = t.ty.clone();
            Expr {
                kind: ExprKind::Cond {
                    cond: cond.clone(),
                    then: Box::new(t),
                    other: Box::new(o),
                },
                ty,
                span: e.span,
                parens: e.parens,
            }
        }
        _ => step(e),
    }
}

/// Adjacent declarations of the same base type, without initialisers, as
/// one (`double ad[NBDIRSMAX], bd[NBDIRSMAX];`).
fn merge_decls(decls: Vec<Stmt>) -> Vec<Stmt> {
    let mut out: Vec<Stmt> = Vec::new();
    for d in decls {
        if let (
            Some(Stmt {
                kind:
                    StmtKind::Decl {
                        base: b0,
                        storage: s0,
                        vars: v0,
                    },
                ..
            }),
            StmtKind::Decl {
                base,
                storage,
                vars,
            },
        ) = (out.last_mut(), &d.kind)
            && b0 == base
            && s0 == storage
            && vars.iter().chain(v0.iter()).all(|v| v.init.is_none())
        {
            v0.extend(vars.iter().cloned());
            continue;
        }
        out.push(d);
    }
    out
}

/// Moves a statement's comments onto the first and last of the pieces
/// that replace it.
fn attach_comments(s: &Stmt, pieces: &mut [Piece]) {
    if let Some(Piece::Plain(f) | Piece::Dir(f)) = pieces.first_mut() {
        f.comments.leading = s.comments.leading.clone();
    }
    if let Some(Piece::Plain(l) | Piece::Dir(l)) = pieces.last_mut() {
        l.comments.trailing = s.comments.trailing.clone();
    }
}

/// Is every leaf of an initialiser a literal zero?
fn is_zero_init(init: &Init) -> bool {
    match init {
        Init::Expr(e) => match &e.kind {
            ExprKind::RealConst { value, .. } => *value == 0.0,
            ExprKind::IntConst { value, .. } => *value == 0,
            _ => false,
        },
        Init::List(items, _) => items.iter().all(is_zero_init),
    }
}

fn collect_names(p: &Program, init: &Init, out: &mut HashSet<String>) {
    fn expr(p: &Program, e: &Expr, out: &mut HashSet<String>) {
        if let ExprKind::Var(s) = &e.kind {
            out.insert(p.sym(*s).name.clone());
        }
        for_children(e, &mut |c| expr(p, c, out));
    }
    match init {
        Init::Expr(e) => expr(p, e, out),
        Init::List(items, _) => items.iter().for_each(|i| collect_names(p, i, out)),
    }
}

fn for_children(e: &Expr, f: &mut impl FnMut(&Expr)) {
    match &e.kind {
        ExprKind::Index { base, index } => {
            f(base);
            f(index);
        }
        ExprKind::Field { base, .. }
        | ExprKind::Deref(base)
        | ExprKind::AddrOf(base)
        | ExprKind::Unary { arg: base, .. }
        | ExprKind::Cast { arg: base, .. }
        | ExprKind::SizeOfExpr(base) => f(base),
        ExprKind::Binary { lhs, rhs, .. } => {
            f(lhs);
            f(rhs);
        }
        ExprKind::Intrinsic { args, .. } => args.iter().for_each(f),
        ExprKind::Cond { cond, then, other } => {
            f(cond);
            f(then);
            f(other);
        }
        _ => {}
    }
}

/// How a body uses a by-value derivative parameter.
#[derive(Default)]
struct ValueUse {
    read: bool,
    written: bool,
    addressed: bool,
}

/// `tangent/vector-value-param`: in C a by-value derivative is the
/// callee's own copy; as an array it is the caller's memory. Writing it,
/// taking its address, or reading it after the procedure may have written
/// memory the caller can see (through which the argument could alias)
/// needs a copy.
fn value_param_use(stmts: &[Stmt], s: SymId) -> ValueUse {
    fn expr(e: &Expr, s: SymId, u: &mut ValueUse) {
        match &e.kind {
            ExprKind::Var(v) if *v == s => u.read = true,
            ExprKind::AddrOf(r) if matches!(r.kind, ExprKind::Var(v) if v == s) => {
                u.addressed = true
            }
            _ => for_children(e, &mut |c| expr(c, s, u)),
        }
    }
    let mut u = ValueUse::default();
    crate::il::visit_stmts(stmts, &mut |st| {
        match &st.kind {
            StmtKind::Assign { lhs, .. }
            | StmtKind::Call {
                result: Some(lhs), ..
            }
            | StmtKind::Alloc { target: lhs, .. }
                if super::names::root_sym(lhs) == Some(s) =>
            {
                u.written = true
            }
            // `(void)xd;` reads nothing.
            StmtKind::Discard(_) => return,
            _ => {}
        }
        for e in super::names::stmt_exprs(st) {
            expr(e, s, &mut u);
        }
    });
    u
}

/// May the body write derivative memory that its caller can see: through
/// a pointer, to a global, or in a called derivative procedure that is
/// given such memory or writes globals? (Writes to the procedure's own
/// locals, directly or by a callee, cannot alias an argument.)
fn writes_shared_memory(v: &Vectorizer<'_>, stmts: &[Stmt]) -> bool {
    let mut found = false;
    crate::il::visit_stmts(stmts, &mut |st| match &st.kind {
        StmtKind::Assign { lhs, .. } if v.is_dref(lhs) => found |= shared(v, lhs),
        StmtKind::Call {
            callee,
            args,
            result,
            ..
        } if v.scalar_params.contains_key(callee) => {
            found |= v.global_writers.contains(callee);
            found |= result
                .as_ref()
                .is_some_and(|r| v.is_dref(r) && shared(v, r));
            for (a, &prm) in args.iter().zip(&v.scalar_params[callee]) {
                let pty = v.scalar_type(prm);
                if v.dsyms.contains(&prm) && !v.is_real(&pty) {
                    found |= !local_object(v, a);
                }
            }
        }
        _ => {}
    });
    found
}

/// Is a derivative reference outside the procedure's own locals (reached
/// through a pointer, or a global)?
fn shared(v: &Vectorizer<'_>, e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Var(s) => v.p.sym(*s).kind == SymKind::Global,
        ExprKind::Index { base, .. } => v.is_ptr(&base.ty) || shared(v, base),
        ExprKind::Field { base, .. } => shared(v, base),
        _ => true,
    }
}

/// Does a derivative argument designate only the procedure's own local
/// memory, with no pointer inside that could lead elsewhere?
fn local_object(v: &Vectorizer<'_>, a: &Expr) -> bool {
    let (object, ty) = match &a.kind {
        ExprKind::AddrOf(r) => (&**r, &r.ty),
        ExprKind::Var(_) if matches!(v.p.resolve(&a.ty.ty), Type::Array { .. }) => (a, &a.ty),
        ExprKind::Var(_) if v.struct_of(&a.ty).is_some() => (a, &a.ty),
        ExprKind::Binary { lhs, rhs, .. } if v.is_ptr(&a.ty) => {
            return if super::names::is_address(&v.p, &lhs.ty) {
                local_object(v, lhs)
            } else {
                local_object(v, rhs)
            };
        }
        _ => return false,
    };
    let root_is_local = super::names::root_sym(object)
        .is_some_and(|s| matches!(v.p.sym(s).kind, SymKind::Local | SymKind::Temp));
    root_is_local && !shared(v, object) && !super::names::holds_pointer(&v.p, &ty.ty, 0)
}

/// The derivative procedures that may write a derivative global, directly
/// or through the derivative procedures they call.
fn global_writers(p: &Program, dsyms: &HashSet<SymId>, dprocs: &[ProcId]) -> HashSet<ProcId> {
    let global_root = |e: &Expr| {
        super::names::root_sym(e)
            .is_some_and(|s| dsyms.contains(&s) && p.sym(s).kind == SymKind::Global)
    };
    let mut writers = HashSet::default();
    loop {
        let before = writers.len();
        for &d in dprocs {
            let Some(body) = &p.proc(d).body else {
                continue;
            };
            let mut w = false;
            crate::il::visit_stmts(&body.stmts, &mut |st| match &st.kind {
                StmtKind::Assign { lhs, .. } => w |= global_root(lhs),
                StmtKind::Call { callee, result, .. } => {
                    w |= writers.contains(callee) || result.as_ref().is_some_and(&global_root)
                }
                _ => {}
            });
            if w {
                writers.insert(d);
            }
        }
        if writers.len() == before {
            return writers;
        }
    }
}

/// Does a `continue` in `stmts` (outside nested loops) go to the loop that
/// holds them?
fn continues(stmts: &[Stmt]) -> bool {
    stmts.iter().any(|s| match &s.kind {
        StmtKind::Continue => true,
        StmtKind::If { then, other, .. } => {
            continues(&then.stmts) || other.as_ref().is_some_and(|o| continues(&o.stmts))
        }
        StmtKind::Block(b) => continues(&b.stmts),
        StmtKind::Switch { cases, .. } => cases.iter().any(|c| continues(&c.body)),
        _ => false,
    })
}
