//! The printing plan of a procedure body: which lowering temporaries are
//! folded back into their use, and which calls and allocations become the
//! initializer of the declaration before them.
//!
//! Lowering pulls every call out of its expression into a temporary
//! (`il/split`); printing that literally would make `y = 2 * f(x) + 1;` come
//! back as three statements. The plan undoes it only where doing so keeps
//! the meaning: the call runs exactly once, at the same point, and nothing
//! else observes the temporary.

use crate::il::{
    AllocForm, Block, Expr, ExprKind, Init, LoopHeader, Stmt, StmtKind, SymId, SymKind,
};
use crate::il::{BinOp, Program};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

/// Identity of a statement inside one procedure body: its address, which is
/// unique even when the IL breaks the unique-id invariant.
pub(crate) fn key(s: &Stmt) -> usize {
    std::ptr::from_ref(s) as usize
}

/// What the C printer does differently from a literal rendering.
#[derive(Default)]
pub(crate) struct Plan<'a> {
    /// Temporaries printed as the call that computes them.
    pub folded: HashMap<SymId, &'a Stmt>,
    /// Statements not printed where they stand (folded calls, absorbed
    /// initializers, declarations of folded temporaries only).
    pub hidden: HashSet<usize>,
    /// Declaration statement → the call or allocation printed as the
    /// initializer of its last declarator.
    pub decl_init: HashMap<usize, &'a Stmt>,
}

#[derive(Clone, Copy, PartialEq)]
enum Write {
    /// The result of a call statement (`decl_init` flag).
    CallResult(bool),
    Other,
}

#[derive(Default)]
struct Usage {
    /// For each variable: the statement reading it, and whether the read is
    /// evaluated exactly once each time that statement runs.
    reads: HashMap<SymId, Vec<(usize, bool)>>,
    writes: HashMap<SymId, Vec<(usize, Write)>>,
    addressed: HashSet<SymId>,
}

impl Usage {
    fn read(&mut self, e: &Expr, stmt: usize, once: bool, under_addr: bool) {
        match &e.kind {
            ExprKind::Var(s) => {
                self.reads.entry(*s).or_default().push((stmt, once));
                if under_addr {
                    self.addressed.insert(*s);
                }
            }
            ExprKind::IntConst { .. }
            | ExprKind::RealConst { .. }
            | ExprKind::CharConst { .. }
            | ExprKind::StrConst(_)
            | ExprKind::SizeOfType(_) => {}
            ExprKind::Index { base, index } => {
                self.read(base, stmt, once, under_addr);
                self.read(index, stmt, once, false);
            }
            ExprKind::Field { base, .. } => self.read(base, stmt, once, under_addr),
            ExprKind::Deref(a) => self.read(a, stmt, once, false),
            ExprKind::AddrOf(a) => self.read(a, stmt, once, true),
            ExprKind::Unary { arg, .. } => self.read(arg, stmt, once, false),
            ExprKind::Binary { op, lhs, rhs } => {
                self.read(lhs, stmt, once, false);
                // The right operand of `&&` and `||` may not run at all.
                let short = matches!(op, BinOp::And | BinOp::Or);
                self.read(rhs, stmt, once && !short, false);
            }
            ExprKind::Intrinsic { args, .. } => {
                for a in args {
                    self.read(a, stmt, once, false);
                }
            }
            ExprKind::Cast { arg, .. } => self.read(arg, stmt, once, false),
            ExprKind::Cond { cond, then, other } => {
                self.read(cond, stmt, once, false);
                self.read(then, stmt, false, false);
                self.read(other, stmt, false, false);
            }
            // Not evaluated: never fold into it.
            ExprKind::SizeOfExpr(a) => self.read(a, stmt, false, false),
        }
    }

    /// A stored-to reference: a bare variable is a write, anything else
    /// reads its parts.
    fn target(&mut self, e: &Expr, stmt: usize, how: Write) {
        if let ExprKind::Var(s) = &e.kind {
            self.writes.entry(*s).or_default().push((stmt, how));
        } else {
            self.read(e, stmt, true, false);
        }
    }

    fn init(&mut self, init: &Init, stmt: usize) {
        match init {
            Init::Expr(e) => self.read(e, stmt, true, false),
            Init::List(items, _) => {
                for i in items {
                    self.init(i, stmt);
                }
            }
        }
    }

    fn stmts<'a>(&mut self, stmts: &'a [Stmt], lists: &mut Vec<&'a [Stmt]>) {
        lists.push(stmts);
        for s in stmts {
            self.stmt(s, lists);
        }
    }

    fn block<'a>(&mut self, b: &'a Block, lists: &mut Vec<&'a [Stmt]>) {
        self.stmts(&b.stmts, lists);
    }

    fn stmt<'a>(&mut self, s: &'a Stmt, lists: &mut Vec<&'a [Stmt]>) {
        let k = key(s);
        match &s.kind {
            StmtKind::Assign { lhs, rhs, .. } => {
                self.target(lhs, k, Write::Other);
                self.read(rhs, k, true, false);
            }
            StmtKind::Call {
                result,
                args,
                decl_init,
                ..
            } => {
                if let Some(r) = result {
                    self.target(r, k, Write::CallResult(*decl_init));
                }
                for a in args {
                    self.read(a, k, true, false);
                }
            }
            StmtKind::Decl { vars, .. } => {
                for d in vars {
                    if let Some(init) = &d.init {
                        self.writes
                            .entry(d.sym)
                            .or_default()
                            .push((k, Write::Other));
                        self.init(init, k);
                    }
                }
            }
            StmtKind::Alloc {
                target,
                count,
                form,
                ..
            } => {
                self.target(target, k, Write::Other);
                self.read(count, k, true, false);
                match form {
                    AllocForm::Malloc { bytes, .. } => self.read(bytes, k, true, false),
                    AllocForm::Calloc { count, size, .. } => {
                        self.read(count, k, true, false);
                        self.read(size, k, true, false);
                    }
                }
            }
            StmtKind::Free { ptr } => self.read(ptr, k, true, false),
            StmtKind::If { cond, then, other } => {
                self.read(cond, k, true, false);
                self.block(then, lists);
                if let Some(o) = other {
                    self.block(o, lists);
                }
            }
            StmtKind::Loop { header, body } => {
                match header {
                    LoopHeader::For { init, cond, step } => {
                        self.stmts(init, lists);
                        if let Some(c) = cond {
                            self.read(c, k, false, false);
                        }
                        self.stmts(step, lists);
                    }
                    LoopHeader::While { cond } | LoopHeader::DoWhile { cond } => {
                        self.read(cond, k, false, false)
                    }
                }
                self.block(body, lists);
            }
            StmtKind::Switch { selector, cases } => {
                self.read(selector, k, true, false);
                for c in cases {
                    for e in c.labels.iter().flatten() {
                        self.read(e, k, false, false);
                    }
                    self.stmts(&c.body, lists);
                }
            }
            StmtKind::Return(Some(e)) => self.read(e, k, true, false),
            StmtKind::Discard(e) => self.read(e, k, false, false),
            StmtKind::Block(b) => self.block(b, lists),
            StmtKind::Return(None) | StmtKind::Break | StmtKind::Continue | StmtKind::Empty => {}
        }
    }
}

/// The variable a call or allocation stores its result to, when that is a
/// bare variable.
fn stored_var(s: &Stmt) -> Option<SymId> {
    let target = match &s.kind {
        StmtKind::Call {
            result: Some(r), ..
        } => r,
        StmtKind::Alloc { target, .. } => target,
        _ => return None,
    };
    match &target.kind {
        ExprKind::Var(v) => Some(*v),
        _ => None,
    }
}

/// Does `user` mention a variable whose address `call` passes (`f_d(x, xd,
/// &t)` storing the primal result in `t`)? Folded into `user`, the call
/// would run while `user` is evaluated, and C leaves the order of the
/// operands unspecified: a read of `t` in `user` might come first.
fn reads_what_call_addresses(call: &Stmt, user: &Stmt) -> bool {
    let StmtKind::Call { args, .. } = &call.kind else {
        return false;
    };
    let mut addressed = HashSet::default();
    for a in args {
        crate::il::visit_expr(a, &mut |e| {
            if let ExprKind::AddrOf(r) = &e.kind
                && let ExprKind::Var(v) = &r.kind
            {
                addressed.insert(*v);
            }
        });
    }
    if addressed.is_empty() {
        return false;
    }
    let mut found = false;
    for e in crate::il::stmt_exprs(user) {
        crate::il::visit_expr(e, &mut |x| {
            found |= matches!(&x.kind, ExprKind::Var(v) if addressed.contains(v));
        });
    }
    found
}

fn is_decl_init(s: &Stmt) -> bool {
    matches!(
        &s.kind,
        StmtKind::Call {
            decl_init: true,
            ..
        } | StmtKind::Alloc {
            decl_init: true,
            ..
        }
    )
}

/// Works out the plan of one statement list tree (a procedure body).
pub(crate) fn plan<'a>(program: &Program, stmts: &'a [Stmt]) -> Plan<'a> {
    let mut usage = Usage::default();
    let mut lists = Vec::new();
    usage.stmts(stmts, &mut lists);

    let is_temp = |s: SymId| {
        program
            .symbols
            .get(s.index())
            .is_some_and(|sym| sym.kind == SymKind::Temp)
    };
    // Candidates: a temporary written once, by a call, read once where the
    // read runs exactly once, and never addressed.
    let candidate = |s: SymId| -> Option<usize> {
        if !is_temp(s) || usage.addressed.contains(&s) {
            return None;
        }
        let reads = usage.reads.get(&s)?;
        let writes = usage.writes.get(&s)?;
        match (reads.as_slice(), writes.as_slice()) {
            ([(use_stmt, true)], [(_, Write::CallResult(false))]) => Some(*use_stmt),
            _ => None,
        }
    };
    let temp_only_decl = |s: &Stmt| match &s.kind {
        StmtKind::Decl { vars, .. } => {
            !vars.is_empty()
                && vars
                    .iter()
                    .all(|d| d.init.is_none() && candidate(d.sym).is_some())
        }
        _ => false,
    };

    let mut plan = Plan::default();
    for list in &lists {
        // Backwards, so that the calls folded into the same use and written
        // after this one are known: they may stand between it and the use
        // (`f(g(x) + h(y))` lowers to the calls of g, h, then f).
        for (i, s) in list.iter().enumerate().rev() {
            let StmtKind::Call { .. } = &s.kind else {
                continue;
            };
            let Some(temp) = stored_var(s) else {
                continue;
            };
            let Some(use_stmt) = candidate(temp) else {
                continue;
            };
            let next = list[i + 1..].iter().find(|n| {
                key(n) == use_stmt || (!temp_only_decl(n) && !plan.hidden.contains(&key(n)))
            });
            if next.is_some_and(|n| key(n) == use_stmt && !reads_what_call_addresses(s, n)) {
                plan.folded.insert(temp, s);
                plan.hidden.insert(key(s));
            }
        }
    }
    for list in &lists {
        for s in list.iter() {
            if let StmtKind::Decl { vars, .. } = &s.kind
                && !vars.is_empty()
                && vars.iter().all(|d| plan.folded.contains_key(&d.sym))
            {
                plan.hidden.insert(key(s));
            }
        }
    }
    for list in &lists {
        for (i, s) in list.iter().enumerate() {
            if !is_decl_init(s) || plan.hidden.contains(&key(s)) {
                continue;
            }
            let Some(var) = stored_var(s) else {
                continue;
            };
            let prev = list[..i]
                .iter()
                .rev()
                .find(|p| !plan.hidden.contains(&key(p)));
            let Some(prev) = prev else {
                continue;
            };
            if let StmtKind::Decl { vars, .. } = &prev.kind
                && let Some(last) = vars.last()
                && last.sym == var
                && last.init.is_none()
                && !plan.decl_init.contains_key(&key(prev))
            {
                plan.decl_init.insert(key(prev), s);
                plan.hidden.insert(key(s));
            }
        }
    }
    plan
}
