//! Checks of the IL invariants stated in `spec/il.md` (`il/invariants`).
//!
//! Lowering and every later transformation must produce IL that passes
//! these checks; tests run them on every fixture. A failure is a bug in the
//! tool, never in the user's input, so it is reported as a list of
//! human-readable problems rather than as a diagnostic.

use super::{
    AssignSugar, BinOp, Block, Expr, ExprKind, LoopHeader, Procedure, Program, Stmt, StmtKind,
};
use rustc_hash::FxHashSet as HashSet;

/// Returns every violated invariant, empty when the program is well formed.
pub fn validate(program: &Program) -> Vec<String> {
    let mut problems = Vec::new();
    for (_, p) in program.defined_procs() {
        let mut v = Validator {
            program,
            proc: p,
            ids: HashSet::default(),
            loop_depth: 0,
            switch_depth: 0,
            problems: &mut problems,
        };
        if let Some(body) = &p.body {
            v.block(body);
        }
    }
    problems
}

struct Validator<'a> {
    program: &'a Program,
    proc: &'a Procedure,
    ids: HashSet<u32>,
    loop_depth: usize,
    switch_depth: usize,
    problems: &'a mut Vec<String>,
}

impl Validator<'_> {
    fn problem(&mut self, s: &Stmt, what: &str) {
        self.problems
            .push(format!("{}: statement #{}: {what}", self.proc.name, s.id.0));
    }

    fn block(&mut self, b: &Block) {
        for s in &b.stmts {
            self.stmt(s);
        }
    }

    fn stmts(&mut self, stmts: &[Stmt]) {
        for s in stmts {
            self.stmt(s);
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        if s.id.0 >= self.proc.stmt_count {
            self.problem(s, "id beyond the procedure's stmt_count");
        }
        if !self.ids.insert(s.id.0) {
            self.problem(s, "id used twice");
        }
        match &s.kind {
            StmtKind::Assign { lhs, rhs, sugar } => {
                if !is_reference(lhs) {
                    self.problem(s, "assignment to something that is not a reference");
                }
                let expected = match sugar {
                    AssignSugar::Plain => None,
                    AssignSugar::Compound(op) => Some(*op),
                    AssignSugar::Increment => Some(BinOp::Add),
                    AssignSugar::Decrement => Some(BinOp::Sub),
                };
                if let Some(op) = expected {
                    let ok = matches!(&rhs.kind, ExprKind::Binary { op: o, lhs: l, .. }
                        if *o == op && same_reference(l, lhs));
                    if !ok {
                        self.problem(s, "assignment sugar does not match its right-hand side");
                    }
                }
            }
            StmtKind::Call { callee, args, .. } => match self.program.procs.get(callee.index()) {
                None => self.problem(s, "call of an unknown procedure"),
                Some(p) => {
                    let variadic = p.origin == super::ProcOrigin::System;
                    if args.len() != p.params.len() && !variadic {
                        self.problem(s, "argument count differs from the parameter count");
                    }
                }
            },
            StmtKind::Alloc { target, .. } if !is_reference(target) => {
                self.problem(s, "allocation into something that is not a reference");
            }
            StmtKind::If { then, other, .. } => {
                self.block(then);
                if let Some(o) = other {
                    self.block(o);
                }
            }
            StmtKind::Loop { header, body } => {
                if let LoopHeader::For { init, step, .. } = header {
                    self.stmts(init);
                    self.stmts(step);
                }
                self.loop_depth += 1;
                self.block(body);
                self.loop_depth -= 1;
            }
            StmtKind::Switch { cases, .. } => {
                self.switch_depth += 1;
                for c in cases {
                    self.stmts(&c.body);
                }
                self.switch_depth -= 1;
            }
            StmtKind::Break if self.loop_depth + self.switch_depth == 0 => {
                self.problem(s, "break outside a loop or switch");
            }
            StmtKind::Continue if self.loop_depth == 0 => {
                self.problem(s, "continue outside a loop");
            }
            StmtKind::Block(b) => self.block(b),
            _ => {}
        }
    }
}

/// A reference designates memory: `x`, `a[i]`, `s.f`, `*p`.
pub fn is_reference(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Var(_) | ExprKind::Deref(_) | ExprKind::Index { .. } => true,
        ExprKind::Field { base, .. } => is_reference(base),
        _ => false,
    }
}

/// Structural equality of two references, ignoring spans and parentheses.
pub fn same_reference(a: &Expr, b: &Expr) -> bool {
    match (&a.kind, &b.kind) {
        (ExprKind::Var(x), ExprKind::Var(y)) => x == y,
        (ExprKind::Deref(x), ExprKind::Deref(y)) => same_expr(x, y),
        (
            ExprKind::Index {
                base: b1,
                index: i1,
            },
            ExprKind::Index {
                base: b2,
                index: i2,
            },
            // The base may be any pointer value: `(c ? w : u)[0]`.
        ) => (same_reference(b1, b2) || same_expr(b1, b2)) && same_expr(i1, i2),
        (
            ExprKind::Field {
                base: b1,
                field: f1,
                ..
            },
            ExprKind::Field {
                base: b2,
                field: f2,
                ..
            },
        ) => f1 == f2 && same_reference(b1, b2),
        _ => false,
    }
}

/// Structural equality of two expressions, ignoring spans and parentheses
/// (types and the spelling of constants count).
pub fn same_expr(a: &Expr, b: &Expr) -> bool {
    use ExprKind::*;
    if a.ty != b.ty {
        return false;
    }
    match (&a.kind, &b.kind) {
        (
            Index {
                base: a1,
                index: a2,
            },
            Index {
                base: b1,
                index: b2,
            },
        )
        | (
            Binary {
                lhs: a1, rhs: a2, ..
            },
            Binary {
                lhs: b1, rhs: b2, ..
            },
        ) => same_operator(&a.kind, &b.kind) && same_expr(a1, b1) && same_expr(a2, b2),
        (
            Field {
                base: x,
                strukt: s1,
                field: f1,
            },
            Field {
                base: y,
                strukt: s2,
                field: f2,
            },
        ) => s1 == s2 && f1 == f2 && same_expr(x, y),
        (Deref(x), Deref(y)) | (AddrOf(x), AddrOf(y)) | (SizeOfExpr(x), SizeOfExpr(y)) => {
            same_expr(x, y)
        }
        (Unary { op: o1, arg: x }, Unary { op: o2, arg: y }) => o1 == o2 && same_expr(x, y),
        (Intrinsic { call: c1, args: x }, Intrinsic { call: c2, args: y }) => {
            c1 == c2 && x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_expr(p, q))
        }
        (Cast { to: t1, arg: x }, Cast { to: t2, arg: y }) => t1 == t2 && same_expr(x, y),
        (
            Cond {
                cond: a1,
                then: a2,
                other: a3,
            },
            Cond {
                cond: b1,
                then: b2,
                other: b3,
            },
        ) => same_expr(a1, b1) && same_expr(a2, b2) && same_expr(a3, b3),
        (
            IntConst { .. }
            | RealConst { .. }
            | CharConst { .. }
            | StrConst(_)
            | Var(_)
            | SizeOfType(_),
            _,
        ) => a.kind == b.kind,
        _ => false,
    }
}

/// Two binary nodes have the same operator (other nodes: true).
fn same_operator(a: &ExprKind, b: &ExprKind) -> bool {
    match (a, b) {
        (ExprKind::Binary { op: x, .. }, ExprKind::Binary { op: y, .. }) => x == y,
        _ => true,
    }
}
