//! `tangent/share-calls`: a `<math.h>` call that the derivative statements
//! of one source statement and the statement itself evaluate more than
//! once is evaluated once, into a temporary (`spec/tangent.md`); so is a
//! conditional holding one (a partial guarded at a singular point).
//!
//! C compilers cannot do this themselves: with `errno` (GCC's default
//! `-fmath-errno`) `exp`, `log`, `sqrt`, ... are not pure to them, so
//! `yd = (1.0 - tanh(z) * tanh(z)) * zd; y = tanh(z);` calls `tanh` three
//! times at `-O2`. Sharing the call turns it into one.
//!
//! Invariants:
//! - Only runs of simple statements (assignments and declarations) coming
//!   from the same source statement (same span) are considered: the
//!   temporaries stay next to the statement the user recognises.
//! - The window of a run ends with its first write to memory that is not
//!   a derivative (the original statement, which `tangent/assign-*` puts
//!   last): up to there only derivative memory is written, which no
//!   shared call reads (a call reading a derivative is never shared), so
//!   each shared call has the same value everywhere in the window.
//! - Past that write, up to the end of the run (a final `return`
//!   included: `*f = 1.0 / (1.0 + exp(-z)); return exp(-z) * zd / …;`),
//!   only calls whose operands are private scalars are shared: locals and
//!   parameters of integer or real type whose address the procedure never
//!   takes, which no statement of the run assigns. No write through a
//!   pointer can reach them, so the call has the same value there too.
//! - A call is shared only when at least one of its occurrences is always
//!   evaluated (not under `?:` or `&&`/`||` alone): sharing never
//!   evaluates a call the original code skipped.

use crate::il::validate::same_expr;
use crate::il::visit_expr;
use crate::il::{AssignSugar, BinOp, Expr, ExprKind, Init, MathFn, Stmt, StmtId, StmtKind, SymId};
use rustc_hash::FxHashSet as HashSet;

/// What the sharing needs from the transformation that owns the output.
pub trait Temps {
    /// `s` is a derivative variable: what it names is derivative memory.
    fn is_derivative(&self, s: SymId) -> bool;
    /// The `nth` temporary (from 0, counted per run) holding a value of
    /// `like`'s type, and the rule tag to put on its assignment.
    fn temp(&mut self, like: &Expr, nth: usize) -> Option<Expr>;
    /// `st` (a temporary's assignment) with the mode's rule tag.
    fn tagged(&self, st: Stmt) -> Stmt;
    /// `s` is a local variable or a parameter (not a global).
    fn is_local(&self, s: SymId) -> bool;
}

/// The variables of a procedure whose value no write through a pointer can
/// change: its integer and real locals and parameters whose address it
/// never takes.
struct Private {
    address_taken: HashSet<SymId>,
}

impl Private {
    fn of(stmts: &[Stmt]) -> Private {
        Private {
            address_taken: super::names::address_taken(stmts),
        }
    }

    /// Every variable `e` reads is private, and `e` reads no memory
    /// through a pointer, an index or a field.
    fn reads_only_private(&self, e: &Expr, temps: &dyn Temps) -> bool {
        let mut ok = true;
        visit_expr(e, &mut |x| match &x.kind {
            ExprKind::Var(v) => {
                ok &= temps.is_local(*v)
                    && !self.address_taken.contains(v)
                    && matches!(
                        x.ty.ty,
                        crate::il::Type::Int { .. } | crate::il::Type::Real(_)
                    );
            }
            ExprKind::Index { .. } | ExprKind::Deref(_) | ExprKind::Field { .. } => ok = false,
            _ => {}
        });
        ok
    }
}

/// Shares the repeated calls of every run of `stmts`, nested blocks
/// included.
pub fn share_calls(stmts: &mut Vec<Stmt>, temps: &mut dyn Temps) {
    let private = Private::of(stmts);
    crate::il::rewrite_stmt_lists(stmts, &mut |list| share_in(list, temps, &private));
}

fn share_in(stmts: &mut Vec<Stmt>, temps: &mut dyn Temps, private: &Private) {
    let mut out = Vec::with_capacity(stmts.len());
    let mut rest = std::mem::take(stmts).into_iter().peekable();
    while let Some(first) = rest.next() {
        if !is_simple(&first) {
            out.push(first);
            continue;
        }
        let mut run = vec![first];
        while let Some(next) = rest.next_if(|n| is_simple(n) && n.span == run[0].span) {
            run.push(next);
        }
        let hoisted = share_run(&mut run, temps, private);
        out.extend(hoisted);
        out.extend(run);
    }
    *stmts = out;
}

fn is_simple(s: &Stmt) -> bool {
    matches!(
        s.kind,
        StmtKind::Assign { .. } | StmtKind::Decl { .. } | StmtKind::Return(Some(_))
    )
}

/// The expressions a run evaluates in evaluation order: those before its
/// first write of non-derivative memory, that write's own included, then
/// the rest; and the variables the run assigns.
fn window<'s>(run: &'s mut [Stmt], temps: &dyn Temps) -> Window<'s> {
    let mut w = Window {
        within: Vec::new(),
        beyond: Vec::new(),
        assigned: Vec::new(),
    };
    let mut past = false;
    for s in run.iter_mut() {
        let out = if past { &mut w.beyond } else { &mut w.within };
        match &mut s.kind {
            StmtKind::Assign { lhs, rhs, .. } => {
                let root = crate::transform::names::root_sym(lhs);
                w.assigned.extend(root);
                let primal = root.is_none_or(|r| !temps.is_derivative(r));
                lhs_operands(lhs, out);
                out.push(rhs);
                past |= primal;
            }
            StmtKind::Decl { vars, .. } => {
                for d in vars.iter_mut() {
                    let out = if past { &mut w.beyond } else { &mut w.within };
                    w.assigned.push(d.sym);
                    if let Some(init) = &mut d.init {
                        init_exprs(init, out);
                    }
                    past |= !temps.is_derivative(d.sym);
                }
            }
            StmtKind::Return(Some(e)) => out.push(e),
            _ => break,
        }
    }
    w
}

struct Window<'s> {
    within: Vec<&'s mut Expr>,
    beyond: Vec<&'s mut Expr>,
    assigned: Vec<SymId>,
}

/// The operands a reference evaluates (indices, pointers), not the
/// reference itself.
fn lhs_operands<'s>(lhs: &'s mut Expr, out: &mut Vec<&'s mut Expr>) {
    match &mut lhs.kind {
        ExprKind::Index { base, index } => {
            lhs_operands(base, out);
            out.push(index);
        }
        ExprKind::Field { base, .. } => lhs_operands(base, out),
        ExprKind::Deref(p) => out.push(p),
        _ => {}
    }
}

fn init_exprs<'s>(init: &'s mut Init, out: &mut Vec<&'s mut Expr>) {
    match init {
        Init::Expr(e) => out.push(e),
        Init::List(items, _) => {
            for i in items {
                init_exprs(i, out);
            }
        }
    }
}

/// Rewrites the run's window so that each call shared by it reads a
/// temporary, and returns the temporaries' assignments, in the order they
/// must run.
fn share_run(run: &mut [Stmt], temps: &mut dyn Temps, private: &Private) -> Vec<Stmt> {
    // Each shared call is first replaced by a placeholder variable (a
    // symbol no program has), so that the temporaries can be named in the
    // order their assignments run.
    let placeholder = |k: usize| SymId(u32::MAX - k as u32);
    let mut defs: Vec<(SymId, Expr)> = Vec::new();
    loop {
        let fresh = placeholder(defs.len());
        let Window {
            within: mut exprs,
            beyond,
            assigned,
        } = window(run, temps);
        for (_, def) in defs.iter_mut() {
            exprs.push(def);
        }
        // Calls shared past the first write read only private scalars the
        // run leaves alone.
        let unchanged = |c: &Expr| {
            let mut ok = private.reads_only_private(c, temps);
            visit_expr(c, &mut |x| {
                if let ExprKind::Var(v) = x.kind {
                    ok &= !assigned.contains(&v);
                }
            });
            ok
        };
        let Some(shared) = most_shared(&exprs, &beyond, &unchanged, temps) else {
            break;
        };
        let var = Expr::new(ExprKind::Var(fresh), shared.ty.clone(), shared.span);
        let also_beyond = unchanged(&shared);
        for e in exprs {
            replace(e, &shared, &var);
        }
        if also_beyond {
            for e in beyond {
                replace(e, &shared, &var);
            }
        }
        // A later (smaller) shared call occurs only inside earlier ones'
        // definitions, never the reverse: it runs first.
        defs.insert(0, (fresh, shared));
    }
    if defs.is_empty() {
        return Vec::new();
    }
    let mut named: Vec<(SymId, Expr)> = Vec::new();
    let mut count_of_type: Vec<(crate::il::QualType, usize)> = Vec::new();
    for (p, def) in &defs {
        let nth = match count_of_type.iter_mut().find(|(t, _)| *t == def.ty) {
            Some((_, n)) => {
                *n += 1;
                *n - 1
            }
            None => {
                count_of_type.push((def.ty.clone(), 1));
                0
            }
        };
        let Some(var) = temps.temp(def, nth) else {
            // No temporary to be had: undo, by putting the calls back.
            let mut calls: Vec<(SymId, Expr)> = defs.clone();
            for k in 0..calls.len() {
                let (sym, call) = calls[k].clone();
                for (_, later) in calls.iter_mut().skip(k + 1) {
                    substitute(later, sym, &call);
                }
            }
            let w = window(run, temps);
            for e in w.within.into_iter().chain(w.beyond) {
                for (sym, call) in &calls {
                    substitute(e, *sym, call);
                }
            }
            return Vec::new();
        };
        named.push((*p, var));
    }
    let mut out = Vec::new();
    for (p, mut def) in defs.clone() {
        for (q, var) in &named {
            substitute(&mut def, *q, var);
        }
        let var = named.iter().find(|(q, _)| *q == p).map(|(_, v)| v.clone());
        let st = Stmt {
            id: StmtId(0),
            kind: StmtKind::Assign {
                lhs: var.expect("every placeholder is named"),
                rhs: def,
                sugar: AssignSugar::Plain,
            },
            span: run[0].span,
            comments: Default::default(),
        };
        out.push(temps.tagged(st));
    }
    let w = window(run, temps);
    for e in w.within.into_iter().chain(w.beyond) {
        for (q, var) in &named {
            substitute(e, *q, var);
        }
    }
    if let Some(first) = out.first_mut() {
        first.comments.leading = std::mem::take(&mut run[0].comments.leading);
    }
    out
}

/// The largest call (or conditional holding one) occurring at least
/// twice among `exprs`, and `beyond`
/// where it is `unchanged` there, once at least unconditionally, that reads
/// no derivative.
fn most_shared(
    exprs: &[&mut Expr],
    beyond: &[&mut Expr],
    unchanged: &dyn Fn(&Expr) -> bool,
    temps: &dyn Temps,
) -> Option<Expr> {
    let mut calls: Vec<(&Expr, bool)> = Vec::new();
    for e in exprs {
        collect(e, true, true, &mut calls);
    }
    let mut later: Vec<(&Expr, bool)> = Vec::new();
    for e in beyond {
        collect(e, true, true, &mut later);
    }
    later.retain(|(c, _)| unchanged(c));
    let calls: Vec<(&Expr, bool)> = calls.into_iter().chain(later).collect();
    // Equal calls have equal shape hashes: comparing within a bucket keeps
    // this linear in the number of calls (a 300-term sum of `sin(k * x) *
    // cos(x)` has 1,200 calls, and this runs once per call shared).
    let mut buckets: std::collections::HashMap<u64, Vec<usize>> = Default::default();
    for (i, &(c, _)) in calls.iter().enumerate() {
        buckets.entry(shape_hash(c)).or_default().push(i);
    }
    let mut best: Option<(&Expr, usize)> = None;
    for (i, &(c, _)) in calls.iter().enumerate() {
        let bucket = &buckets[&shape_hash(c)];
        let same: Vec<usize> = bucket
            .iter()
            .copied()
            .filter(|&j| j == i || same_expr(c, calls[j].0))
            .collect();
        if same.first() != Some(&i) || reads_derivative(c, temps) {
            continue;
        }
        let occurrences: Vec<bool> = same.iter().map(|&j| calls[j].1).collect();
        if occurrences.len() < 2 || !occurrences.iter().any(|&a| a) {
            continue;
        }
        let size = crate::simplify::node_count(c);
        if best.is_none_or(|(_, s)| size > s) {
            best = Some((c, size));
        }
    }
    best.map(|(c, _)| c.clone())
}

/// A hash of an expression's shape and leaves: `same_expr` expressions
/// have the same hash (types are left out, which only merges buckets).
fn shape_hash(e: &Expr) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    visit_expr(e, &mut |x| {
        std::mem::discriminant(&x.kind).hash(&mut h);
        match &x.kind {
            ExprKind::Var(v) => v.hash(&mut h),
            ExprKind::IntConst { value, .. } => value.hash(&mut h),
            ExprKind::RealConst { text, .. } => text.hash(&mut h),
            _ => {}
        }
    });
    h.finish()
}

/// The calls worth sharing in `e`, each with whether it is always
/// evaluated there.
pub(crate) fn collect_calls<'e>(e: &'e Expr, always: bool, out: &mut Vec<(&'e Expr, bool)>) {
    collect(e, always, false, out);
}

/// The calls worth sharing in `e`, and with `guarded` the conditionals
/// holding one (`c == 0.0 ? 0.0 : 0.5 / sqrt(c)`, a partial guarded at a
/// singular point): two equal conditionals evaluate the same call under
/// the same test, so one of them, if always evaluated, computes it for
/// both without evaluating it where the original did not.
fn collect<'e>(e: &'e Expr, always: bool, guarded: bool, out: &mut Vec<(&'e Expr, bool)>) {
    let collect_calls = |e: &'e Expr, always: bool, out: &mut Vec<(&'e Expr, bool)>| {
        collect(e, always, guarded, out)
    };
    match &e.kind {
        ExprKind::Intrinsic { args, call } => {
            if worth_sharing(call.func) {
                out.push((e, always));
            }
            for a in args {
                collect_calls(a, always, out);
            }
        }
        ExprKind::Cond { cond, then, other } => {
            if guarded {
                let mut inner = Vec::new();
                collect(then, false, false, &mut inner);
                collect(other, false, false, &mut inner);
                if !inner.is_empty() {
                    out.push((e, always));
                }
            }
            collect_calls(cond, always, out);
            collect_calls(then, false, out);
            collect_calls(other, false, out);
        }
        ExprKind::Binary {
            op: BinOp::And | BinOp::Or,
            lhs,
            rhs,
        } => {
            collect_calls(lhs, always, out);
            collect_calls(rhs, false, out);
        }
        ExprKind::Binary { lhs, rhs, .. } => {
            collect_calls(lhs, always, out);
            collect_calls(rhs, always, out);
        }
        ExprKind::Index { base, index } => {
            collect_calls(base, always, out);
            collect_calls(index, always, out);
        }
        ExprKind::Field { base, .. } => collect_calls(base, always, out),
        ExprKind::Deref(a)
        | ExprKind::AddrOf(a)
        | ExprKind::Unary { arg: a, .. }
        | ExprKind::Cast { arg: a, .. } => collect_calls(a, always, out),
        // `sizeof` does not evaluate its operand.
        ExprKind::SizeOfExpr(_)
        | ExprKind::SizeOfType(_)
        | ExprKind::IntConst { .. }
        | ExprKind::RealConst { .. }
        | ExprKind::CharConst { .. }
        | ExprKind::StrConst(_)
        | ExprKind::Var(_) => {}
    }
}

/// Compilers inline these (one instruction or a few, no `errno`) and merge
/// repeated ones themselves: a temporary would only make the code longer.
pub(crate) fn worth_sharing(f: MathFn) -> bool {
    !matches!(
        f,
        MathFn::Fabs
            | MathFn::Fmin
            | MathFn::Fmax
            | MathFn::Floor
            | MathFn::Ceil
            | MathFn::Round
            | MathFn::Trunc
            | MathFn::Copysign
            | MathFn::IntAbs
    )
}

fn reads_derivative(e: &Expr, temps: &dyn Temps) -> bool {
    let mut found = false;
    visit_expr(e, &mut |s| {
        if let ExprKind::Var(v) = s.kind {
            found |= temps.is_derivative(v);
        }
    });
    found
}

/// Replaces each read of `sym` by `by`.
fn substitute(e: &mut Expr, sym: SymId, by: &Expr) {
    replace_where(e, &|x| matches!(x.kind, ExprKind::Var(s) if s == sym), by);
}

pub(crate) fn replace(e: &mut Expr, term: &Expr, var: &Expr) {
    replace_where(e, &|x| same_expr(x, term), var);
}

fn replace_where(e: &mut Expr, is_target: &dyn Fn(&Expr) -> bool, var: &Expr) {
    if is_target(e) {
        let span = e.span;
        *e = var.clone();
        e.span = span;
        return;
    }
    // `sizeof`'s operand is not evaluated: nothing there is replaced.
    if !matches!(e.kind, ExprKind::SizeOfExpr(_)) {
        crate::il::children_mut(e, &mut |c| replace_where(c, is_target, var));
    }
}
