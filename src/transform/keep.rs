//! `adjoint/keep-intrinsics`: a costly `<math.h>` call that an assignment
//! evaluates in the forward sweep and that its adjoint evaluates again in
//! the backward sweep is computed once, in the forward sweep, into a
//! temporary that is pushed; the backward sweep pops it instead of calling
//! the function again (`spec/adjoint.md`).
//!
//! A push and a pop cost a few stores and loads; `exp`, `tanh` or `pow`
//! cost tens of cycles, and the backward sweep of a smooth objective is
//! mostly such partial derivatives (`exp(x)` for `exp`, `1 - tanh(z)²` for
//! `tanh`). Tapenade recomputes them; this rule trades 8 bytes of stack
//! per evaluation for the second call.
//!
//! Invariants:
//! - Only calls that the assignment's right-hand side always evaluates
//!   (not under `?:` or `&&`/`||` alone) are kept: the forward sweep never
//!   evaluates a call the original skipped.
//! - The adjoint reads the call's arguments in the state before the
//!   assignment (that is what makes it correct at all), which is the state
//!   in which the forward sweep evaluates the call: the popped value is the
//!   value the backward sweep would have computed.
//! - The choice depends only on the right-hand side and the adjoint
//!   statements, so the forward and backward halves, built separately,
//!   agree on it: the push and the pop come in mirrored order around the
//!   statement's own saves.

use super::share::{collect_calls, replace, worth_sharing};
use crate::il::validate::same_expr;
use crate::il::{Block, Expr, ExprKind, Init, LoopHeader, MathFn, Stmt, StmtKind};

/// The calls of `rhs` to keep for the adjoint statements `adjoint`, largest
/// first; none is inside another.
pub fn kept_calls(rhs: &Expr, adjoint: &[Stmt]) -> Vec<Expr> {
    let mut calls = Vec::new();
    collect_calls(rhs, true, &mut calls);
    let mut candidates: Vec<&Expr> = Vec::new();
    for (c, always) in calls {
        let ExprKind::Intrinsic { call, .. } = &c.kind else {
            continue;
        };
        if always && costly(call.func) && !candidates.iter().any(|d| same_expr(c, d)) {
            candidates.push(c);
        }
    }
    candidates.sort_by_key(|c| std::cmp::Reverse(crate::simplify::node_count(c)));
    let mut kept: Vec<Expr> = Vec::new();
    for c in candidates {
        if kept.iter().any(|k| contains(k, c)) {
            continue;
        }
        if adjoint.iter().any(|s| stmt_contains(s, c)) {
            kept.push(c.clone());
        }
    }
    kept
}

/// Functions whose call costs much more than a push and a pop: not those
/// compilers inline ([`worth_sharing`]), nor `sqrt` and `fmod`, which cost
/// about as much as one.
fn costly(f: MathFn) -> bool {
    worth_sharing(f) && !matches!(f, MathFn::Sqrt | MathFn::Fmod | MathFn::Digamma)
}

fn contains(e: &Expr, term: &Expr) -> bool {
    let mut found = false;
    crate::il::visit_expr(e, &mut |x| found |= same_expr(x, term));
    found
}

fn stmt_contains(s: &Stmt, term: &Expr) -> bool {
    let mut found = false;
    crate::il::visit_stmts(std::slice::from_ref(s), &mut |st| {
        for e in super::names::stmt_exprs(st) {
            found |= contains(e, term);
        }
    });
    found
}

/// Replaces `term` by `var` in every expression of `stmts`, nested
/// statements included.
pub fn replace_in_stmts(stmts: &mut [Stmt], term: &Expr, var: &Expr) {
    for s in stmts {
        replace_in_stmt(s, term, var);
    }
}

fn replace_in_block(b: &mut Block, term: &Expr, var: &Expr) {
    replace_in_stmts(&mut b.stmts, term, var);
}

fn replace_in_init(i: &mut Init, term: &Expr, var: &Expr) {
    match i {
        Init::Expr(e) => replace(e, term, var),
        Init::List(items, _) => items.iter_mut().for_each(|i| replace_in_init(i, term, var)),
    }
}

fn replace_in_stmt(s: &mut Stmt, term: &Expr, var: &Expr) {
    match &mut s.kind {
        StmtKind::Assign { lhs, rhs, .. } => {
            replace(lhs, term, var);
            replace(rhs, term, var);
        }
        StmtKind::Call { result, args, .. } => {
            result.iter_mut().for_each(|r| replace(r, term, var));
            args.iter_mut().for_each(|a| replace(a, term, var));
        }
        StmtKind::Decl { vars, .. } => {
            for d in vars {
                if let Some(i) = &mut d.init {
                    replace_in_init(i, term, var);
                }
            }
        }
        StmtKind::Alloc { target, count, .. } => {
            replace(target, term, var);
            replace(count, term, var);
        }
        StmtKind::Free { ptr } => replace(ptr, term, var),
        StmtKind::Return(Some(e)) | StmtKind::Discard(e) => replace(e, term, var),
        StmtKind::If { cond, then, other } => {
            replace(cond, term, var);
            replace_in_block(then, term, var);
            if let Some(o) = other {
                replace_in_block(o, term, var);
            }
        }
        StmtKind::Switch { selector, cases } => {
            replace(selector, term, var);
            for c in cases {
                replace_in_stmts(&mut c.body, term, var);
            }
        }
        StmtKind::Loop { header, body } => {
            match header {
                LoopHeader::For { init, cond, step } => {
                    replace_in_stmts(init, term, var);
                    cond.iter_mut().for_each(|c| replace(c, term, var));
                    replace_in_stmts(step, term, var);
                }
                LoopHeader::While { cond } | LoopHeader::DoWhile { cond } => {
                    replace(cond, term, var)
                }
            }
            replace_in_block(body, term, var);
        }
        StmtKind::Block(b) => replace_in_block(b, term, var),
        StmtKind::Break | StmtKind::Continue | StmtKind::Return(None) | StmtKind::Empty => {}
    }
}
