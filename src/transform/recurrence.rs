//! `tangent/recurrence`: a derivative assignment inside a loop that reads
//! its own target, `xd = T`, is a recurrence the processor runs one
//! iteration after the other; the time of one iteration is the number of
//! operations between `xd` and T's root. T is linear in the derivatives, so
//! T = R + C * xd with R = T[xd := 0] and C = T[xd := 1, other derivatives
//! := 0], both computed from values that do not wait for the previous
//! iteration's `xd`. The assignment is written so that `xd` is the last
//! operand: its own term moved last when it is the only one reading `xd`
//! (`pd = p * td + coefd[k] + t * pd`), else `xd = R + C * xd`.

use crate::il::{BinOp, Expr, ExprKind, RealKind, Stmt, StmtKind, SymId, Type, UnOp};

/// What the rewrite needs from the host: which variables are derivatives,
/// and the simplification of a derivative expression.
pub trait Recurrences {
    fn is_derivative(&self, s: SymId) -> bool;
    fn simplify(&self, e: Expr) -> Expr;
}

/// Rewrites every derivative recurrence inside a loop of `stmts`.
pub fn shorten_recurrences(stmts: &mut [Stmt], host: &dyn Recurrences) {
    walk(stmts, false, host);
}

fn walk(stmts: &mut [Stmt], in_loop: bool, host: &dyn Recurrences) {
    for s in stmts {
        match &mut s.kind {
            StmtKind::Assign { lhs, rhs, .. } if in_loop => {
                if let ExprKind::Var(x) = lhs.kind
                    && host.is_derivative(x)
                    && let Some(new) = shortened(rhs, lhs, x, host)
                {
                    *rhs = new;
                }
            }
            StmtKind::If { then, other, .. } => {
                walk(&mut then.stmts, in_loop, host);
                if let Some(o) = other {
                    walk(&mut o.stmts, in_loop, host);
                }
            }
            StmtKind::Loop { body, .. } => walk(&mut body.stmts, true, host),
            StmtKind::Block(b) => walk(&mut b.stmts, in_loop, host),
            StmtKind::Switch { cases, .. } => {
                for c in cases {
                    walk(&mut c.body, in_loop, host);
                }
            }
            _ => {}
        }
    }
}

fn is_derivative_ref(e: &Expr, host: &dyn Recurrences) -> bool {
    matches!(
        e.kind,
        ExprKind::Var(_) | ExprKind::Index { .. } | ExprKind::Field { .. } | ExprKind::Deref(_)
    ) && super::names::root_sym(e).is_some_and(|v| host.is_derivative(v))
}

fn mentions_derivative(e: &Expr, host: &dyn Recurrences) -> bool {
    let mut found = false;
    crate::il::visit_expr(e, &mut |x| {
        found |= matches!(x.kind, ExprKind::Var(v) if host.is_derivative(v));
    });
    found
}

/// Whether `e` is linear in the derivative references it reads, with
/// coefficients that read none: `Some(reads one)`, or `None` when it is not
/// (a product of two derivatives, a derivative under a division, a call or
/// a condition).
fn linear(e: &Expr, host: &dyn Recurrences) -> Option<bool> {
    if is_derivative_ref(e, host) {
        // The indices of a derivative reference are primal.
        return match &e.kind {
            ExprKind::Var(_) => Some(true),
            _ => {
                let mut inner_ok = true;
                let mut sub = e;
                loop {
                    match &sub.kind {
                        ExprKind::Index { base, index } => {
                            inner_ok &= !mentions_derivative(index, host);
                            sub = base;
                        }
                        ExprKind::Field { base, .. } | ExprKind::Deref(base) => sub = base,
                        _ => break,
                    }
                }
                inner_ok.then_some(true)
            }
        };
    }
    match &e.kind {
        ExprKind::Binary { op, lhs, rhs } => {
            let (l, r) = (linear(lhs, host)?, linear(rhs, host)?);
            match op {
                BinOp::Add | BinOp::Sub => Some(l || r),
                BinOp::Mul if !(l && r) => Some(l || r),
                BinOp::Div if !r => Some(l),
                _ if !l && !r => Some(false),
                _ => None,
            }
        }
        ExprKind::Unary {
            op: UnOp::Neg | UnOp::Plus,
            arg,
        } => linear(arg, host),
        ExprKind::Cast { arg, .. } => linear(arg, host),
        _ => (!mentions_derivative(e, host)).then_some(false),
    }
}

/// The most operations between an occurrence of `x` and the root of `e`.
fn depth(e: &Expr, x: SymId) -> Option<usize> {
    match &e.kind {
        ExprKind::Var(v) if *v == x => Some(0),
        ExprKind::Binary { lhs, rhs, .. } => {
            let d = depth(lhs, x).max(depth(rhs, x));
            d.map(|d| d + 1)
        }
        ExprKind::Unary { arg, .. } => depth(arg, x).map(|d| d + 1),
        ExprKind::Cast { arg, .. } => depth(arg, x),
        _ => None,
    }
}

/// The terms of a sum, with their signs (`true` for a subtracted one).
fn terms(e: &Expr, negated: bool, out: &mut Vec<(bool, Expr)>) {
    match &e.kind {
        ExprKind::Binary {
            op: op @ (BinOp::Add | BinOp::Sub),
            lhs,
            rhs,
        } => {
            terms(lhs, negated, out);
            terms(rhs, negated ^ (*op == BinOp::Sub), out);
        }
        ExprKind::Unary { op: UnOp::Neg, arg } => terms(arg, !negated, out),
        _ => out.push((negated, e.clone())),
    }
}

fn binary(op: BinOp, l: Expr, r: Expr, like: &Expr) -> Expr {
    Expr::new(
        ExprKind::Binary {
            op,
            lhs: Box::new(l),
            rhs: Box::new(r),
        },
        like.ty.clone(),
        like.span,
    )
}

fn real(value: f64, like: &Expr) -> Expr {
    let mut text = crate::back::c::real_text(value);
    if matches!(like.ty.ty, Type::Real(RealKind::Float)) {
        text.push('f');
    }
    Expr::new(
        ExprKind::RealConst { value, text },
        like.ty.clone(),
        like.span,
    )
}

fn is_real_const(e: &Expr, value: f64) -> bool {
    matches!(e.kind, ExprKind::RealConst { value: v, .. } if v == value)
}

/// `e` with `x` replaced by `with_x` and every other derivative reference
/// by `with_others` (when given).
fn substitute(
    e: &Expr,
    x: SymId,
    with_x: &Expr,
    with_others: Option<&Expr>,
    host: &dyn Recurrences,
) -> Expr {
    if matches!(e.kind, ExprKind::Var(v) if v == x) {
        return with_x.clone();
    }
    if let Some(o) = with_others
        && is_derivative_ref(e, host)
    {
        return o.clone();
    }
    let mut out = e.clone();
    match &mut out.kind {
        ExprKind::Binary { lhs, rhs, .. } => {
            **lhs = substitute(lhs, x, with_x, with_others, host);
            **rhs = substitute(rhs, x, with_x, with_others, host);
        }
        ExprKind::Unary { arg, .. } | ExprKind::Cast { arg, .. } => {
            **arg = substitute(arg, x, with_x, with_others, host);
        }
        _ => {}
    }
    out
}

fn shortened(rhs: &Expr, lhs: &Expr, x: SymId, host: &dyn Recurrences) -> Option<Expr> {
    let before = depth(rhs, x)?;
    if before <= 2 || linear(rhs, host) != Some(true) {
        return None;
    }
    // Only one term reads x, as `x` or `x * c`: move it last.
    let mut sum = Vec::new();
    terms(rhs, false, &mut sum);
    let (own, others): (Vec<_>, Vec<_>) = sum.into_iter().partition(|(_, t)| depth(t, x).is_some());
    if let [(own_negated, own_term)] = own.as_slice()
        && depth(own_term, x)? <= 1
        && !others.is_empty()
    {
        let mut rest = others.into_iter();
        let (neg, first) = rest.next()?;
        let mut acc = if neg {
            Expr::new(
                ExprKind::Unary {
                    op: UnOp::Neg,
                    arg: Box::new(first),
                },
                rhs.ty.clone(),
                rhs.span,
            )
        } else {
            first
        };
        for (neg, t) in rest {
            acc = binary(if neg { BinOp::Sub } else { BinOp::Add }, acc, t, rhs);
        }
        let op = if *own_negated { BinOp::Sub } else { BinOp::Add };
        return Some(binary(op, acc, own_term.clone(), rhs));
    }
    // Otherwise R + C * x.
    let coefficient = host.simplify(substitute(
        rhs,
        x,
        &real(1.0, lhs),
        Some(&real(0.0, lhs)),
        host,
    ));
    let rest = host.simplify(substitute(rhs, x, &real(0.0, lhs), None, host));
    let size = crate::simplify::node_count;
    if size(&coefficient) + size(&rest) > 2 * size(rhs) + 4
        || mentions_derivative(&coefficient, host)
    {
        return None;
    }
    let x_ref = lhs.clone();
    let own = if is_real_const(&coefficient, 1.0) {
        x_ref
    } else if is_real_const(&coefficient, 0.0) {
        return Some(rest);
    } else {
        binary(BinOp::Mul, coefficient, x_ref, rhs)
    };
    Some(match rest.kind {
        _ if is_real_const(&rest, 0.0) => own,
        // `C * xd - r` rather than `-r + C * xd`: the same two operations.
        ExprKind::Unary { op: UnOp::Neg, arg } => binary(BinOp::Sub, own, *arg, rhs),
        _ => binary(BinOp::Add, rest, own, rhs),
    })
}
