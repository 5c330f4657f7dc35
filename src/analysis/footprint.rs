//! `alias/disjoint-slices`: two pointer arguments into one array that a
//! callee provably reaches in disjoint index ranges (`axpy(n, a, &w[0],
//! &w[n])`), so that the callee's assumption that its pointer formals
//! designate separate memory holds at this call.
//!
//! The locations of `locs` make an array one atom, so they cannot tell
//! `&w[0]` and `&w[n]` apart. This module computes, for a pointer formal,
//! its *footprint*: the index ranges the callee may reach through it, as
//! affine bounds over the callee's integer formals (`[0, n - 1]` for a
//! loop `for (i = 0; i < n; i++) v[i] ...`). At the call the formals are
//! replaced by the actual arguments, and two ranges are disjoint when the
//! gap between them is a positive constant whatever the values of the
//! expressions they mention (`n / 2` stays one unknown).
//!
//! Anything the module does not understand makes the footprint unknown, and
//! unknown is never disjoint: a pointer formal that is reassigned, stored,
//! compared or handed to a library function; an index that is not affine
//! in the integer formals the callee never writes and the counters of the
//! loops around it; a loop counter written in its body; a recursive callee.

use crate::il::{
    BinOp, Expr, ExprKind, Init, LoopHeader, ProcId, Program, Stmt, StmtKind, Storage, SymId,
    SymKind, Type, UnOp, validate::same_expr, visit_stmts,
};
use std::collections::{HashMap, HashSet};

/// An integer `constant + Σ coefficient · atom`. The atoms are expressions
/// compared by structure (`same_expr`): variables, or anything not affine
/// (`n / 2`, `m * n`).
#[derive(Clone, Debug)]
struct Affine {
    terms: Vec<(Expr, i64)>,
    constant: i64,
}

impl Affine {
    fn constant(c: i64) -> Affine {
        Affine {
            terms: Vec::new(),
            constant: c,
        }
    }

    fn atom(e: &Expr) -> Affine {
        Affine {
            terms: vec![(e.clone(), 1)],
            constant: 0,
        }
    }

    fn scaled(&self, k: i64) -> Option<Affine> {
        let mut terms = Vec::with_capacity(self.terms.len());
        for (e, c) in &self.terms {
            terms.push((e.clone(), c.checked_mul(k)?));
        }
        Some(Affine {
            terms,
            constant: self.constant.checked_mul(k)?,
        })
    }

    fn plus(&self, other: &Affine) -> Option<Affine> {
        let mut out = self.clone();
        out.constant = out.constant.checked_add(other.constant)?;
        for (e, c) in &other.terms {
            match out.terms.iter_mut().find(|(f, _)| same_expr(f, e)) {
                Some((_, d)) => *d = d.checked_add(*c)?,
                None => out.terms.push((e.clone(), *c)),
            }
        }
        out.terms.retain(|(_, c)| *c != 0);
        Some(out)
    }

    /// The product of two sums whose atoms are variables, each product of
    /// two variables an atom `a * b` (in the order of their ids, so that
    /// `n * r` and `r * n` are one atom); `None` for other atoms.
    fn times(&self, other: &Affine) -> Option<Affine> {
        let var = |e: &Expr| match e.kind {
            ExprKind::Var(v) => Some(v),
            _ => None,
        };
        let mut out = Affine::constant(self.constant.checked_mul(other.constant)?);
        out = out.plus(
            &Affine {
                terms: other.terms.clone(),
                constant: 0,
            }
            .scaled(self.constant)?,
        )?;
        out = out.plus(
            &Affine {
                terms: self.terms.clone(),
                constant: 0,
            }
            .scaled(other.constant)?,
        )?;
        for (a, ca) in &self.terms {
            for (b, cb) in &other.terms {
                let (va, vb) = (var(a)?, var(b)?);
                let (first, second) = if va.0 <= vb.0 { (a, b) } else { (b, a) };
                let monomial = Expr::new(
                    ExprKind::Binary {
                        op: BinOp::Mul,
                        lhs: Box::new(first.clone()),
                        rhs: Box::new(second.clone()),
                    },
                    a.ty.clone(),
                    a.span,
                );
                out = out.plus(&Affine {
                    terms: vec![(monomial, ca.checked_mul(*cb)?)],
                    constant: 0,
                })?;
            }
        }
        Some(out)
    }

    fn minus(&self, other: &Affine) -> Option<Affine> {
        self.plus(&other.scaled(-1)?)
    }

    fn as_constant(&self) -> Option<i64> {
        self.terms.is_empty().then_some(self.constant)
    }

    /// The coefficient of variable `v` (0 when absent).
    fn coefficient(&self, v: SymId) -> i64 {
        self.terms
            .iter()
            .find(|(e, _)| matches!(e.kind, ExprKind::Var(w) if w == v))
            .map_or(0, |(_, c)| *c)
    }

    /// `self` with variable `v` replaced by `by`.
    fn substitute(&self, v: SymId, by: &Affine) -> Option<Affine> {
        let k = self.coefficient(v);
        if k == 0 {
            return Some(self.clone());
        }
        let mut rest = self.clone();
        rest.terms
            .retain(|(e, _)| !matches!(e.kind, ExprKind::Var(w) if w == v));
        rest.plus(&by.scaled(k)?)
    }
}

/// The affine form of an integer expression; with `atoms_allowed`, every
/// variable or non-affine part may be an atom, else only the variables
/// `allowed` accepts.
fn affine(e: &Expr, allowed: &dyn Fn(SymId) -> bool, any_atom: bool) -> Option<Affine> {
    match &e.kind {
        ExprKind::IntConst { value, .. } | ExprKind::CharConst { value, .. } => {
            Some(Affine::constant(*value))
        }
        ExprKind::Var(v) if allowed(*v) || any_atom => Some(Affine::atom(e)),
        ExprKind::Cast { arg, to } if matches!(to.ty, Type::Int { .. }) => {
            affine(arg, allowed, any_atom)
        }
        ExprKind::Unary { op: UnOp::Neg, arg } => affine(arg, allowed, any_atom)?.scaled(-1),
        ExprKind::Unary {
            op: UnOp::Plus,
            arg,
        } => affine(arg, allowed, any_atom),
        ExprKind::Binary { op, lhs, rhs } => {
            let linear = || -> Option<Affine> {
                let l = affine(lhs, allowed, any_atom)?;
                let r = affine(rhs, allowed, any_atom)?;
                match op {
                    BinOp::Add => l.plus(&r),
                    BinOp::Sub => l.minus(&r),
                    BinOp::Mul => match (l.as_constant(), r.as_constant()) {
                        (Some(k), _) => r.scaled(k),
                        (_, Some(k)) => l.scaled(k),
                        // At the call, a product of variables is a
                        // monomial of its own, so that `(r - 1) * n` is
                        // `r * n - n` and a row `&m[(r - 1) * n]` sits
                        // `n` before `&m[r * n]`.
                        _ if any_atom => l.times(&r),
                        _ => None,
                    },
                    _ => None,
                }
            };
            linear().or_else(|| {
                // At the call, any integer expression without effects is an
                // unknown of its own (`n / 2`); in the callee only the
                // variables allowed are.
                (any_atom && matches!(e.ty.ty, Type::Int { .. })).then(|| Affine::atom(e))
            })
        }
        _ if any_atom && matches!(e.ty.ty, Type::Int { .. }) && !has_call_like(e) => {
            Some(Affine::atom(e))
        }
        _ => None,
    }
}

/// Reads memory whose value may differ between two evaluations at the same
/// call? Indexing and dereferences are left out of atoms to stay simple.
fn has_call_like(e: &Expr) -> bool {
    let mut found = false;
    crate::il::visit_expr(e, &mut |x| {
        found |= matches!(
            x.kind,
            ExprKind::Intrinsic { .. } | ExprKind::Deref(_) | ExprKind::Index { .. }
        );
    });
    found
}

/// An inclusive index range `[lo, hi]`.
#[derive(Clone, Debug)]
struct Range {
    lo: Affine,
    hi: Affine,
}

/// A counted loop around the current point: its counter takes values in
/// `[lo, hi]` (bounds that may mention outer counters).
struct Counter {
    var: SymId,
    lo: Affine,
    hi: Affine,
}

/// More ranges than this and the footprint is given up as unknown.
const MAX_RANGES: usize = 64;

struct Walk<'p> {
    program: &'p Program,
    /// The pointer formal whose footprint is computed.
    pointer: SymId,
    /// Integer formals the procedure never writes: the footprint's unknowns.
    fixed: HashSet<SymId>,
    counters: Vec<Counter>,
    ranges: Vec<Range>,
    /// Procedures whose footprint is being computed (recursion → unknown).
    visiting: &'p mut Vec<(ProcId, usize)>,
}

impl Walk<'_> {
    fn allowed(&self, v: SymId) -> bool {
        self.fixed.contains(&v) || self.counters.iter().any(|c| c.var == v)
    }

    fn index(&self, e: &Expr) -> Option<Affine> {
        affine(e, &|v| self.allowed(v), false)
    }

    /// The bounds of `e` over every value of the counters around, in the
    /// fixed formals only.
    fn bounds(&self, e: &Affine) -> Option<Range> {
        let mut lo = e.clone();
        let mut hi = e.clone();
        for c in self.counters.iter().rev() {
            let (kl, kh) = (lo.coefficient(c.var), hi.coefficient(c.var));
            lo = lo.substitute(c.var, if kl > 0 { &c.lo } else { &c.hi })?;
            hi = hi.substitute(c.var, if kh > 0 { &c.hi } else { &c.lo })?;
        }
        Some(Range { lo, hi })
    }

    fn reach(&mut self, r: Range) -> Option<()> {
        if self.ranges.len() >= MAX_RANGES {
            return None;
        }
        self.ranges.push(r);
        Some(())
    }

    fn is_pointer(&self, e: &Expr) -> bool {
        matches!(e.kind, ExprKind::Var(v) if v == self.pointer)
    }

    /// `pointer + e` or `pointer - e`, `&pointer[e]`, `pointer`: the offset.
    fn offset_of(&self, e: &Expr) -> Option<Option<Affine>> {
        match &e.kind {
            ExprKind::Var(_) if self.is_pointer(e) => Some(Some(Affine::constant(0))),
            ExprKind::Binary {
                op: op @ (BinOp::Add | BinOp::Sub),
                lhs,
                rhs,
            } if self.is_pointer(lhs) => {
                let k = self.index(rhs);
                Some(match op {
                    BinOp::Add => k,
                    _ => k.and_then(|k| k.scaled(-1)),
                })
            }
            ExprKind::Binary {
                op: BinOp::Add,
                lhs,
                rhs,
            } if self.is_pointer(rhs) => Some(self.index(lhs)),
            ExprKind::AddrOf(r) => match &r.kind {
                ExprKind::Index { base, index } if self.is_pointer(base) => Some(self.index(index)),
                _ => None,
            },
            _ => None,
        }
    }

    /// Walks an expression: every use of the pointer must be an access at an
    /// affine index.
    fn expr(&mut self, e: &Expr) -> Option<()> {
        match &e.kind {
            ExprKind::Var(_) if self.is_pointer(e) => None,
            ExprKind::Index { base, index } if self.is_pointer(base) => {
                let k = self.index(index)?;
                let r = self.bounds(&k)?;
                self.reach(r)?;
                self.expr(index)
            }
            ExprKind::Deref(inner) if self.offset_of(inner).is_some() => {
                let k = self.offset_of(inner).flatten()?;
                let r = self.bounds(&k)?;
                self.reach(r)?;
                // The offset's own expression may use the pointer too.
                match &inner.kind {
                    ExprKind::Binary { lhs, rhs, .. } if self.is_pointer(lhs) => self.expr(rhs),
                    ExprKind::Binary { lhs, .. } => self.expr(lhs),
                    _ => Some(()),
                }
            }
            _ => {
                let mut ok = true;
                crate::il::children(e, &mut |c| {
                    if ok {
                        ok = self.expr(c).is_some();
                    }
                });
                ok.then_some(())
            }
        }
    }

    fn stmts(&mut self, stmts: &[Stmt]) -> Option<()> {
        for s in stmts {
            self.stmt(s)?;
        }
        Some(())
    }

    fn stmt(&mut self, s: &Stmt) -> Option<()> {
        match &s.kind {
            StmtKind::Call {
                result,
                callee,
                args,
                ..
            } => {
                if let Some(r) = result {
                    self.expr(r)?;
                }
                for (k, arg) in args.iter().enumerate() {
                    match self.offset_of(arg) {
                        Some(offset) => self.passed(*callee, k, args, offset?)?,
                        None => self.expr(arg)?,
                    }
                }
                Some(())
            }
            StmtKind::If { cond, then, other } => {
                self.expr(cond)?;
                self.stmts(&then.stmts)?;
                match other {
                    Some(o) => self.stmts(&o.stmts),
                    None => Some(()),
                }
            }
            StmtKind::Switch { selector, cases } => {
                self.expr(selector)?;
                for c in cases {
                    self.stmts(&c.body)?;
                }
                Some(())
            }
            StmtKind::Block(b) => self.stmts(&b.stmts),
            StmtKind::Loop { header, body } => {
                let counter = self.counter(header, &body.stmts);
                match header {
                    LoopHeader::For { init, cond, step } => {
                        self.stmts(init)?;
                        if let Some(c) = cond {
                            self.expr(c)?;
                        }
                        self.stmts(step)?;
                    }
                    LoopHeader::While { cond } | LoopHeader::DoWhile { cond } => self.expr(cond)?,
                }
                let pushed = counter.is_some();
                if let Some(c) = counter {
                    self.counters.push(c);
                }
                let r = self.stmts(&body.stmts);
                if pushed {
                    self.counters.pop();
                }
                r
            }
            _ => {
                for e in crate::il::stmt_exprs(s) {
                    self.expr(e)?;
                }
                Some(())
            }
        }
    }

    /// `for (i = L; i < U; i++)` and its variants (`<=`, a decreasing
    /// counter with `>`/`>=`, a constant stride), the counter written only
    /// by the step and the bounds affine in what is fixed around: the
    /// counter's range.
    fn counter(&self, header: &LoopHeader, body: &[Stmt]) -> Option<Counter> {
        let LoopHeader::For {
            init,
            cond: Some(cond),
            step,
        } = header
        else {
            return None;
        };
        let [init] = init.as_slice() else { return None };
        let (var, start) = match &init.kind {
            StmtKind::Assign { lhs, rhs, .. } => match lhs.kind {
                ExprKind::Var(v) => (v, rhs),
                _ => return None,
            },
            StmtKind::Decl { vars, .. } => match vars.as_slice() {
                [d] => match &d.init {
                    Some(crate::il::Init::Expr(e)) => (d.sym, e),
                    _ => return None,
                },
                _ => return None,
            },
            _ => return None,
        };
        let [step] = step.as_slice() else { return None };
        let stride = match &step.kind {
            StmtKind::Assign { lhs, rhs, .. } if matches!(lhs.kind, ExprKind::Var(v) if v == var) => {
                match &rhs.kind {
                    ExprKind::Binary {
                        op: op @ (BinOp::Add | BinOp::Sub),
                        lhs: l,
                        rhs: r,
                    } if matches!(l.kind, ExprKind::Var(v) if v == var) => {
                        let ExprKind::IntConst { value, .. } = r.kind else {
                            return None;
                        };
                        if *op == BinOp::Add { value } else { -value }
                    }
                    _ => return None,
                }
            }
            _ => return None,
        };
        if stride == 0 || writes_var(body, var) {
            return None;
        }
        let ExprKind::Binary { op, lhs, rhs } = &cond.kind else {
            return None;
        };
        // Normalise to `var OP bound`.
        let (op, bound) = match (&lhs.kind, &rhs.kind) {
            (ExprKind::Var(v), _) if *v == var => (*op, rhs),
            (_, ExprKind::Var(v)) if *v == var => (
                match op {
                    BinOp::Lt => BinOp::Gt,
                    BinOp::Le => BinOp::Ge,
                    BinOp::Gt => BinOp::Lt,
                    BinOp::Ge => BinOp::Le,
                    _ => return None,
                },
                lhs,
            ),
            _ => return None,
        };
        let start = self.index(start)?;
        let bound = self.index(bound)?;
        let (lo, hi) = match (op, stride > 0) {
            (BinOp::Lt, true) => (start, bound.plus(&Affine::constant(-1))?),
            (BinOp::Le, true) => (start, bound),
            (BinOp::Gt, false) => (bound.plus(&Affine::constant(1))?, start),
            (BinOp::Ge, false) => (bound, start),
            _ => return None,
        };
        Some(Counter { var, lo, hi })
    }

    /// The pointer, at `offset`, passed as argument `k` of a call: the
    /// callee's footprint of that formal, its formals replaced by the
    /// arguments, shifted by the offset.
    fn passed(&mut self, callee: ProcId, k: usize, args: &[Expr], offset: Affine) -> Option<()> {
        let inner = footprint_in(self.program, callee, k, self.visiting)?;
        let q = self.program.proc(callee);
        for r in inner {
            let mut lo = r.lo.plus(&offset)?;
            let mut hi = r.hi.plus(&offset)?;
            for (j, &formal) in q.params.iter().enumerate() {
                if lo.coefficient(formal) == 0 && hi.coefficient(formal) == 0 {
                    continue;
                }
                let actual = self.index(args.get(j)?)?;
                lo = lo.substitute(formal, &actual)?;
                hi = hi.substitute(formal, &actual)?;
            }
            // Both bounds may still mention counters around the call.
            let l = self.bounds(&lo)?;
            let h = self.bounds(&hi)?;
            self.reach(Range { lo: l.lo, hi: h.hi })?;
        }
        Some(())
    }
}

/// Is `v` assigned, or its address taken, anywhere in `stmts`?
fn writes_var(stmts: &[Stmt], v: SymId) -> bool {
    let mut found = false;
    crate::il::visit_stmts(stmts, &mut |s| {
        if found {
            return;
        }
        found =
            crate::il::stored_ref(s).is_some_and(|t| matches!(t.kind, ExprKind::Var(w) if w == v));
        for e in crate::il::stmt_exprs(s) {
            crate::il::visit_expr(e, &mut |x| {
                if let ExprKind::AddrOf(r) = &x.kind {
                    found |= matches!(r.kind, ExprKind::Var(w) if w == v);
                }
            });
        }
    });
    found
}

/// The index ranges `proc` may reach through its pointer formal `k`,
/// affine in its integer formals; `None` when unknown.
fn footprint_in(
    program: &Program,
    proc: ProcId,
    k: usize,
    visiting: &mut Vec<(ProcId, usize)>,
) -> Option<Vec<Range>> {
    let p = program.proc(proc);
    let body = p.body.as_ref()?;
    let &pointer = p.params.get(k)?;
    if visiting.contains(&(proc, k)) || visiting.len() > 16 {
        return None;
    }
    let fixed: HashSet<SymId> = p
        .params
        .iter()
        .copied()
        .filter(|&f| {
            matches!(program.resolve(&program.sym(f).ty.ty), Type::Int { .. })
                && !writes_var(&body.stmts, f)
        })
        .collect();
    if writes_var(&body.stmts, pointer) {
        return None;
    }
    visiting.push((proc, k));
    let mut walk = Walk {
        program,
        pointer,
        fixed,
        counters: Vec::new(),
        ranges: Vec::new(),
        visiting,
    };
    let r = walk.stmts(&body.stmts);
    let ranges = walk.ranges;
    visiting.pop();
    r.map(|()| ranges)
}

/// `alias/disjoint-slices`, slices through pointer variables: the variables
/// of a caller that have one value wherever they are read (parameters
/// never assigned; automatic locals given a value by one statement no loop
/// encloses, never their address; arrays), and the expression that value
/// was given by, where one was.
struct Fixed<'p> {
    fixed: HashSet<SymId>,
    value: HashMap<SymId, &'p Expr>,
}

impl<'p> Fixed<'p> {
    fn of(program: &'p Program, caller: ProcId) -> Fixed<'p> {
        let mut fixed = Fixed {
            fixed: HashSet::new(),
            value: HashMap::new(),
        };
        let proc = program.proc(caller);
        let Some(body) = &proc.body else {
            return fixed;
        };
        // Per variable: how many statements give it a value, and whether
        // one of them is in a loop (where it may give another value each
        // time round).
        let mut given: HashMap<SymId, (u32, bool)> = HashMap::new();
        let mut value: HashMap<SymId, &'p Expr> = HashMap::new();
        fn walk<'p>(
            stmts: &'p [Stmt],
            in_loop: bool,
            given: &mut HashMap<SymId, (u32, bool)>,
            value: &mut HashMap<SymId, &'p Expr>,
        ) {
            let mut set = |v: SymId, by: Option<&'p Expr>| {
                let g = given.entry(v).or_default();
                g.0 += 1;
                g.1 |= in_loop;
                if let Some(e) = by {
                    value.insert(v, e);
                }
            };
            let mut nested: Vec<(&'p [Stmt], bool)> = Vec::new();
            for st in stmts {
                match &st.kind {
                    StmtKind::Decl { vars, .. } => {
                        for d in vars {
                            match &d.init {
                                Some(Init::Expr(e)) => set(d.sym, Some(e)),
                                Some(Init::List(..)) => set(d.sym, None),
                                None => {}
                            }
                        }
                    }
                    StmtKind::Assign { lhs, rhs, .. } => {
                        if let ExprKind::Var(v) = lhs.kind {
                            set(v, Some(rhs));
                        }
                    }
                    StmtKind::Call {
                        result: Some(r), ..
                    } => {
                        if let ExprKind::Var(v) = r.kind {
                            set(v, None);
                        }
                    }
                    StmtKind::Alloc { target, .. } => {
                        if let ExprKind::Var(v) = target.kind {
                            set(v, None);
                        }
                    }
                    StmtKind::If { then, other, .. } => {
                        nested.push((&then.stmts, in_loop));
                        if let Some(o) = other {
                            nested.push((&o.stmts, in_loop));
                        }
                    }
                    StmtKind::Loop { header, body } => {
                        if let LoopHeader::For { init, step, .. } = header {
                            nested.push((init, in_loop));
                            nested.push((step, true));
                        }
                        nested.push((&body.stmts, true));
                    }
                    StmtKind::Switch { cases, .. } => {
                        for c in cases {
                            nested.push((&c.body, in_loop));
                        }
                    }
                    StmtKind::Block(b) => nested.push((&b.stmts, in_loop)),
                    _ => {}
                }
            }
            for (stmts, in_loop) in nested {
                walk(stmts, in_loop, given, value);
            }
        }
        walk(&body.stmts, false, &mut given, &mut value);
        // `&w` lets a callee change `w`; `&w[k]` does not.
        let mut taken: HashSet<SymId> = HashSet::new();
        visit_stmts(&body.stmts, &mut |st| {
            for e in crate::il::stmt_exprs(st) {
                crate::il::visit_expr(e, &mut |x| {
                    if let ExprKind::AddrOf(r) = &x.kind
                        && let ExprKind::Var(v) = r.kind
                    {
                        taken.insert(v);
                    }
                });
            }
        });
        let candidates = proc
            .params
            .iter()
            .copied()
            .chain(given.keys().copied())
            .chain(value.values().flat_map(|e| arrays_in(program, e)))
            .collect::<HashSet<_>>();
        for v in candidates {
            let sym = program.sym(v);
            let (times, in_loop) = given.get(&v).copied().unwrap_or((0, false));
            let once = match sym.kind {
                SymKind::Param => times == 0,
                SymKind::Local | SymKind::Temp => times == 1 && !in_loop,
                SymKind::Global => false,
            };
            // An array's address never changes.
            let array = matches!(program.resolve(&sym.ty.ty), Type::Array { .. });
            if array || once && sym.storage != Storage::Static && !taken.contains(&v) {
                fixed.fixed.insert(v);
                if let Some(e) = value.get(&v) {
                    fixed.value.insert(v, e);
                }
            }
        }
        fixed
    }

    /// `e` reads only fixed variables and integer arithmetic on them (no
    /// memory, which may change between two reads).
    fn settled(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::IntConst { .. } | ExprKind::CharConst { .. } => true,
            ExprKind::Var(v) => self.fixed.contains(v),
            ExprKind::Cast { arg, .. } | ExprKind::Unary { arg, .. } => self.settled(arg),
            ExprKind::Binary { lhs, rhs, .. } => self.settled(lhs) && self.settled(rhs),
            ExprKind::AddrOf(r) => match &r.kind {
                ExprKind::Index { base, index } => self.settled(base) && self.settled(index),
                _ => false,
            },
            _ => false,
        }
    }
}

/// The array variables `e` reads.
fn arrays_in(program: &Program, e: &Expr) -> Vec<SymId> {
    let mut out = Vec::new();
    crate::il::visit_expr(e, &mut |x| {
        if let ExprKind::Var(v) = x.kind
            && matches!(program.resolve(&program.sym(v).ty.ty), Type::Array { .. })
        {
            out.push(v);
        }
    });
    out
}

/// The variable an argument points into and its offset, looking through
/// pointer variables the caller gives one settled value (`double *r = w +
/// n;`): read at the call, `r` is `w + n`.
fn address(e: &Expr, fixed: &Fixed<'_>, depth: u32) -> Option<(SymId, Affine)> {
    let (v, offset) = address_as_written(e)?;
    if depth < 8
        && let Some(&by) = fixed.value.get(&v)
        && fixed.settled(by)
        && let Some((w, inner)) = address(by, fixed, depth + 1)
        && fixed.fixed.contains(&w)
    {
        return Some((w, inner.plus(&offset)?));
    }
    Some((v, offset))
}

/// Does every index of range `a` lie below every index of range `b`?
/// Yes when the gap `lo_b - hi_a` is a constant ≥ 1, or when it is at
/// least such a constant wherever both ranges hold an index: a range
/// [lo, hi] that holds one has `hi - lo ≥ 0`, so the gap minus
/// non-negative multiples of the two widths bounds it from below
/// (`&w[2n]` and `&w[0]` with the width `n - 1`: the gap `n + 1` is
/// `(n - 1) + 2`).
fn below((alo, ahi): &(Affine, Affine), (blo, bhi): &(Affine, Affine)) -> bool {
    let (Some(gap), Some(width_a), Some(width_b)) =
        (blo.minus(ahi), ahi.minus(alo), bhi.minus(blo))
    else {
        return false;
    };
    // The multiples worth trying: those that cancel one of the gap's terms.
    let multiples = |width: &Affine| -> Vec<i64> {
        let mut out = vec![0];
        for (e, g) in &gap.terms {
            if let Some((_, w)) = width.terms.iter().find(|(f, _)| same_expr(f, e))
                && *w != 0
                && g % w == 0
                && g / w > 0
            {
                out.push(g / w);
            }
        }
        out
    };
    multiples(&width_a).iter().any(|&ka| {
        multiples(&width_b).iter().any(|&kb| {
            width_a
                .scaled(ka)
                .and_then(|x| gap.minus(&x))
                .and_then(|rest| width_b.scaled(kb).and_then(|y| rest.minus(&y)))
                .and_then(|rest| rest.as_constant())
                .is_some_and(|c| c >= 1)
        })
    })
}

/// The variable an argument points into and the offset: `w`, `&w[e]`,
/// `w + e`.
fn address_as_written(e: &Expr) -> Option<(SymId, Affine)> {
    let any = |e: &Expr| affine(e, &|_| true, true);
    match &e.kind {
        ExprKind::Var(v) => Some((*v, Affine::constant(0))),
        ExprKind::AddrOf(r) => match &r.kind {
            ExprKind::Index { base, index } => match base.kind {
                ExprKind::Var(v) => Some((v, any(index)?)),
                _ => None,
            },
            _ => None,
        },
        ExprKind::Binary {
            op: op @ (BinOp::Add | BinOp::Sub),
            lhs,
            rhs,
        } => match lhs.kind {
            ExprKind::Var(v) => {
                let k = any(rhs)?;
                Some((v, if *op == BinOp::Add { k } else { k.scaled(-1)? }))
            }
            _ => None,
        },
        _ => None,
    }
}

/// `alias/disjoint-slices`: at the call statement `call`, do arguments `i`
/// and `j` point into the same variable at offsets such that every index
/// the callee reaches through one is apart from every index it reaches
/// through the other?
pub fn disjoint_arguments(
    program: &Program,
    caller: ProcId,
    call: &Stmt,
    i: usize,
    j: usize,
) -> bool {
    let StmtKind::Call { callee, args, .. } = &call.kind else {
        return false;
    };
    let (Some(a), Some(b)) = (args.get(i), args.get(j)) else {
        return false;
    };
    let fixed = Fixed::of(program, caller);
    let (Some((va, oa)), Some((vb, ob))) = (address(a, &fixed, 0), address(b, &fixed, 0)) else {
        return false;
    };
    if va != vb {
        return false;
    }
    let mut visiting = Vec::new();
    let (Some(fa), Some(fb)) = (
        footprint_in(program, *callee, i, &mut visiting),
        footprint_in(program, *callee, j, &mut visiting),
    ) else {
        return false;
    };
    let q = program.proc(*callee);
    // A range of the callee, in the caller's terms.
    let at_call = |r: &Range, offset: &Affine| -> Option<(Affine, Affine)> {
        let mut lo = r.lo.plus(offset)?;
        let mut hi = r.hi.plus(offset)?;
        for (k, &formal) in q.params.iter().enumerate() {
            if lo.coefficient(formal) == 0 && hi.coefficient(formal) == 0 {
                continue;
            }
            let actual = affine(args.get(k)?, &|_| true, true)?;
            lo = lo.substitute(formal, &actual)?;
            hi = hi.substitute(formal, &actual)?;
        }
        Some((lo, hi))
    };
    let apart = |a: &(Affine, Affine), b: &(Affine, Affine)| below(a, b) || below(b, a);
    fa.iter().all(|ra| {
        fb.iter()
            .all(|rb| match (at_call(ra, &oa), at_call(rb, &ob)) {
                (Some(x), Some(y)) => apart(&x, &y),
                _ => false,
            })
    })
}
