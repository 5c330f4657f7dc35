//! Structured control for the adjoint mode (`adjoint/structure`).
//!
//! The adjoint rules reverse a tree of `if`s and loops: a branch marker per
//! two-way merge, an iteration count per loop. `switch`, `break`,
//! `continue` and a `return` before the end of a procedure make control
//! leave a construct in the middle, which those rules cannot replay. This
//! pass rewrites such procedures, before the analyses run, into the same
//! program without jumps:
//!
//! - a jump sets an integer flag (`aioli_break`, `aioli_continue`,
//!   `aioli_return`) and the statements after it run under `if (!flag)`
//!   (`adjoint/structure-jump`);
//! - when one branch of an `if` always jumps, the statements after the `if`
//!   move into the other branch instead, which needs no flag: the usual
//!   `if (c) return x; ...` and `if (c) continue; ...` become plain
//!   `if`/`else` (`adjoint/structure-absorb`);
//! - a loop whose body may leave it tests the flags in its condition; a
//!   `for` loop left by `break` or `return` becomes a `while` whose step
//!   runs only when the body did not leave (`adjoint/structure-loop`);
//! - a `return` stores its value in `aioli_result`, returned at the end
//!   (`adjoint/structure-return`);
//! - a `switch` becomes the index of the case group it enters and one
//!   `if (index <= k)` per group, so fall-through needs nothing special
//!   and a group ending in `break` becomes an `else if` chain
//!   (`adjoint/structure-switch`).
//!
//! Flags are passive integers, so the analyses and the rules see ordinary
//! `if`s and loops; a flag no test reads is removed at the end. Procedures
//! without jumps are left untouched (same statement ids).

use crate::front::source::Span;
use crate::il::{
    AssignSugar, BinOp, Block, Comments, Declarator, Expr, ExprKind, Init, LoopHeader, ProcId,
    Program, QualType, ScopeId, Stmt, StmtId, StmtKind, Storage, SwitchCase, SymId, SymKind,
    Symbol, Type, UnOp, visit_stmts,
};
use rustc_hash::FxHashSet as HashSet;
use std::borrow::Cow;
use std::collections::BTreeSet;

/// The program with every procedure that jumps rewritten without jumps;
/// borrowed unchanged when no procedure jumps.
///
/// Checkpointed regions (`$AD CHECKPOINT-START` … `$AD CHECKPOINT-END`)
/// are wrapped into blocks first (`adjoint/checkpoint`,
/// [`super::checkpoint`]).
pub fn structure_jumps(program: &Program) -> Cow<'_, Program> {
    let program = then(Cow::Borrowed(program), hoist_static_locals);
    let program = then(program, lower_struct_conditionals);
    let program = then(program, split_address_lists);
    let program = then(program, split_struct_copies);
    let program = then(program, run_once_loops);
    then(program, structure_jumps_in)
}

/// `adjoint/static-local`: a `static` local that is not read-only is a
/// global seen by one procedure (C99 6.2.4: one object for the whole run,
/// initialised once); it becomes one, a file-scope `static` named after
/// the procedure (`stage_s` for `s` in `stage`), declared right before
/// the procedure with the local's comments, so the adjoint saves,
/// restores and differentiates it as it does a global: a checkpoint or a
/// backward sweep in another frame sees the same object. Programs without
/// such locals are borrowed unchanged.
pub(crate) fn hoist_static_locals(program: &Program) -> Cow<'_, Program> {
    let writable_static = |st: &Stmt| {
        matches!(&st.kind, StmtKind::Decl { storage: Storage::Static, vars, .. }
            if vars.iter().any(|d| !super::adjoint::is_read_only(program, &program.sym(d.sym).ty)))
    };
    let mut hoisted: Vec<(ProcId, Stmt)> = Vec::new();
    let rewritten = rewrite_statements(program, writable_static, |st, _, _, p| {
        hoisted.push((p, st));
    });
    let Cow::Owned(mut out) = rewritten else {
        return Cow::Borrowed(program);
    };
    for (_, st) in &hoisted {
        if let StmtKind::Decl { vars, .. } = &st.kind {
            for d in vars {
                let name = out.symbols[d.sym.index()].name.clone();
                out.static_locals.insert(d.sym, name);
            }
        }
    }
    declare_at_file_scope(&mut out, hoisted);
    Cow::Owned(out)
}

/// `adjoint/kept-locals`: the automatic locals `kept` (each of a
/// procedure that no call re-enters while it runs) get static storage,
/// as `hoist_static_locals` gives a `static` local: a split pair's
/// `P_fwd` and `P_bwd`, two frames, then share them, so an address of
/// one that the forward sweep keeps for the backward sweep still points
/// to live memory, and so does its adjoint's. A declaration's
/// initialiser becomes assignments where it stood (C runs it at each
/// entry of the block); without one the variable starts undefined in the
/// original, so what it holds from an earlier call changes nothing.
/// `frame_statics` lists them.
pub fn hoist_kept_locals<'p>(program: &'p Program, kept: &BTreeSet<SymId>) -> Cow<'p, Program> {
    let declares_kept = |st: &Stmt| {
        matches!(&st.kind, StmtKind::Decl { storage: Storage::Auto, vars, .. }
            if vars.iter().any(|d| kept.contains(&d.sym)))
    };
    let mut hoisted: Vec<(ProcId, Stmt)> = Vec::new();
    let rewritten = rewrite_statements(program, declares_kept, |st, list, _, p| {
        let StmtKind::Decl { base, vars, .. } = &st.kind else {
            list.push(st);
            return;
        };
        let (moved, stay): (Vec<Declarator>, Vec<Declarator>) =
            vars.iter().cloned().partition(|d| kept.contains(&d.sym));
        let mut comments = Some(st.comments.clone());
        if !stay.is_empty() {
            list.push(Stmt {
                kind: StmtKind::Decl {
                    base: base.clone(),
                    storage: Storage::Auto,
                    vars: stay,
                },
                comments: comments.take().unwrap_or_default(),
                ..st.clone()
            });
        }
        for d in &moved {
            let Some(init) = &d.init else { continue };
            let sym = program.sym(d.sym);
            let var = Expr::new(ExprKind::Var(d.sym), sym.ty.clone(), st.span);
            let code = match init {
                Init::Expr(e) => vec![Stmt {
                    id: StmtId(0),
                    kind: StmtKind::Assign {
                        lhs: var,
                        rhs: e.clone(),
                        sugar: AssignSugar::Plain,
                    },
                    span: st.span,
                    comments: Comments::default(),
                }],
                Init::List(..) => super::adjoint::scalar_assignments(program, &var, init, st.span)
                    .unwrap_or_default(),
            };
            for (k, mut c) in code.into_iter().enumerate() {
                if k == 0
                    && let Some(cm) = comments.take()
                {
                    c.comments = cm;
                }
                list.push(c);
            }
        }
        let vars = moved
            .into_iter()
            .map(|d| Declarator {
                sym: d.sym,
                init: None,
            })
            .collect();
        hoisted.push((
            p,
            Stmt {
                kind: StmtKind::Decl {
                    base: base.clone(),
                    storage: Storage::Static,
                    vars,
                },
                comments: Comments::default(),
                ..st
            },
        ));
    });
    let Cow::Owned(mut out) = rewritten else {
        return Cow::Borrowed(program);
    };
    for (p, st) in &hoisted {
        if let StmtKind::Decl { vars, .. } = &st.kind {
            for d in vars {
                out.symbols[d.sym.index()].storage = Storage::Static;
                out.frame_statics.insert(d.sym, *p);
            }
        }
    }
    declare_at_file_scope(&mut out, hoisted);
    Cow::Owned(out)
}

/// Whether `sym` is an automatic local that `hoist_kept_locals` can give
/// static storage: declared in a procedure that no call re-enters (a
/// recursive one would share it between its activations), and not a
/// character array set from a string literal (which has no assignment).
/// `graph` is `program.call_graph()`.
pub fn can_keep_local(program: &Program, graph: &[Vec<ProcId>], sym: SymId) -> bool {
    let Some(s) = program.symbols.get(sym.index()) else {
        return false;
    };
    if s.kind != SymKind::Local || s.storage != Storage::Auto {
        return false;
    }
    program.defined_procs().any(|(p, proc)| {
        let mut declared = None;
        if let Some(b) = &proc.body {
            visit_stmts(&b.stmts, &mut |st| {
                if let StmtKind::Decl { vars, .. } = &st.kind
                    && let Some(d) = vars.iter().find(|d| d.sym == sym)
                {
                    declared = Some(d.init.clone());
                }
            });
        }
        let Some(init) = declared else {
            return false;
        };
        let string = matches!(&init, Some(Init::Expr(e)) if matches!(program.resolve(&s.ty.ty), Type::Array { .. }) && matches!(e.kind, ExprKind::StrConst(_)));
        !string && !reenters(graph, p)
    })
}

/// Whether a call from `p` can lead back to `p` (`graph` is
/// `Program::call_graph`).
pub(crate) fn reenters(graph: &[Vec<ProcId>], p: ProcId) -> bool {
    let mut seen = HashSet::default();
    let mut todo = graph[p.index()].clone();
    while let Some(q) = todo.pop() {
        if q == p {
            return true;
        }
        if seen.insert(q) {
            todo.extend(graph[q.index()].iter().copied());
        }
    }
    false
}

/// Each `(p, declaration)` becomes a file-scope `static` declaration
/// right before `p`, its variables renamed after the procedure (`stage_s`
/// for `s` in `stage`), with the declaration's comments.
fn declare_at_file_scope(out: &mut Program, hoisted: Vec<(ProcId, Stmt)>) {
    let mut taken: HashSet<String> = out.symbols.iter().map(|s| s.name.clone()).collect();
    taken.extend(out.procs.iter().map(|p| p.name.clone()));
    taken.extend(out.typedefs.iter().map(|t| t.name.clone()));
    taken.extend(out.macro_names().map(str::to_string));
    for (p, st) in hoisted {
        let StmtKind::Decl { base, vars, .. } = st.kind else {
            continue;
        };
        for d in &vars {
            let sym = &out.symbols[d.sym.index()];
            let (old_name, old_scope) = (sym.name.clone(), sym.scope);
            let base_name = format!("{}_{}", out.procs[p.index()].name, old_name);
            let name = (0..)
                .map(|i| {
                    if i == 0 {
                        base_name.clone()
                    } else {
                        format!("{base_name}{}", i - 1)
                    }
                })
                .find(|n| !taken.contains(n))
                .unwrap_or(base_name);
            taken.insert(name.clone());
            out.scopes[old_scope.index()].vars.remove(&old_name);
            let global = out.global_scope;
            out.scopes[global.index()].vars.insert(name.clone(), d.sym);
            let sym = &mut out.symbols[d.sym.index()];
            sym.name = name;
            sym.kind = SymKind::Global;
            sym.scope = global;
        }
        let at = out
            .items
            .iter()
            .position(|i| matches!(i.kind, crate::il::ItemKind::Function(f) if f == p))
            .unwrap_or(out.items.len());
        let file = out.items.get(at).map_or(out.main_file, |i| i.file);
        let mut comments = st.comments;
        // The first item of its file keeps the file's opening comment
        // first (the adjoint's runtime header takes it).
        if at < out.items.len() && !out.items[..at].iter().any(|i| i.file == file) {
            let mut leading = std::mem::take(&mut out.items[at].comments.leading);
            leading.append(&mut comments.leading);
            comments.leading = leading;
        }
        out.items.insert(
            at,
            crate::il::Item {
                kind: crate::il::ItemKind::Globals {
                    base,
                    storage: Storage::Static,
                    vars,
                },
                span: st.span,
                comments,
                file,
            },
        );
    }
}

/// `pass` applied to `program`, borrowed unchanged when the pass changes
/// nothing.
fn then<'p>(
    program: Cow<'p, Program>,
    pass: impl for<'a> Fn(&'a Program) -> Cow<'a, Program>,
) -> Cow<'p, Program> {
    let changed = match pass(&program) {
        Cow::Owned(out) => Some(out),
        Cow::Borrowed(_) => None,
    };
    match changed {
        Some(out) => Cow::Owned(out),
        None => program,
    }
}

/// `il/cond-struct` (both modes): a struct value holding a pointer to
/// reals chosen by a conditional (`Vec c = flag ? a : b;`, `c = f ? a :
/// b;`) is assigned in an `if`: `Vec c; if (flag) c = a; else c = b;`, so
/// each branch is a copy from a reference that the rules (and
/// `adjoint/copy-addresses`) handle with its derivative pointers.
/// Procedures without such a conditional are left untouched.
pub(crate) fn lower_struct_conditionals(program: &Program) -> Cow<'_, Program> {
    let chosen = |e: &Expr| {
        matches!(e.kind, ExprKind::Cond { .. })
            && matches!(program.resolve(&e.ty.ty), Type::Struct(_))
            && super::names::holds_real_pointer(program, &e.ty.ty, 0)
    };
    let lowers = |st: &Stmt| match &st.kind {
        StmtKind::Assign {
            rhs,
            sugar: AssignSugar::Plain,
            ..
        } => chosen(rhs),
        StmtKind::Decl {
            storage: Storage::Auto,
            vars,
            ..
        } => vars
            .iter()
            .any(|d| matches!(&d.init, Some(Init::Expr(e)) if chosen(e))),
        _ => false,
    };
    rewrite_statements(program, lowers, |st, list, scope, _| match &st.kind {
        StmtKind::Assign { lhs, rhs, .. } => {
            let mut chosen_copy = choose(lhs, rhs, st.span, scope);
            chosen_copy.comments = st.comments.clone();
            list.push(chosen_copy);
        }
        StmtKind::Decl { vars, .. } => {
            list.push(declaration_without(
                &st,
                |d| matches!(&d.init, Some(Init::Expr(e)) if chosen(e)),
            ));
            let mut ifs = Vec::new();
            for d in vars {
                if let Some(Init::Expr(e)) = &d.init
                    && chosen(e)
                {
                    let var =
                        Expr::new(ExprKind::Var(d.sym), program.sym(d.sym).ty.clone(), st.span);
                    ifs.push(choose(&var, e, st.span, scope));
                }
            }
            if let Some(last) = ifs.last_mut() {
                last.comments.trailing = st.comments.trailing.clone();
            }
            list.extend(ifs);
        }
        _ => list.push(st),
    })
}

/// `program` with each statement for which `matches` holds replaced by
/// what `rewrite` pushes for it (given the statement, the list being
/// rebuilt, the procedure body's scope and the procedure), in every statement list of
/// the procedures that have one; those procedures' statements are
/// renumbered, the others keep their ids, and a program without such a
/// statement is borrowed unchanged.
fn rewrite_statements<'p>(
    program: &'p Program,
    matches: impl Fn(&Stmt) -> bool,
    mut rewrite: impl FnMut(Stmt, &mut Vec<Stmt>, ScopeId, ProcId),
) -> Cow<'p, Program> {
    let todo = procs_with(program, &matches);
    if todo.is_empty() {
        return Cow::Borrowed(program);
    }
    let mut out = program.clone();
    for p in todo {
        let proc = &mut out.procs[p.index()];
        let Some(body) = &mut proc.body else {
            continue;
        };
        let scope = body.scope;
        crate::il::rewrite_stmt_lists(&mut body.stmts, &mut |list| {
            for st in std::mem::take(list) {
                if matches(&st) {
                    rewrite(st, list, scope, p);
                } else {
                    list.push(st);
                }
            }
        });
        let mut next = 0;
        super::tangent::renumber(&mut body.stmts, &mut next);
        proc.stmt_count = next;
    }
    Cow::Owned(out)
}

/// `if (c) lhs = a; else lhs = b;` for `lhs = c ? a : b`, nested
/// conditionals in turn.
fn choose(lhs: &Expr, rhs: &Expr, span: Span, scope: ScopeId) -> Stmt {
    let stmt = |kind| Stmt {
        id: StmtId(0),
        kind,
        span,
        comments: Comments::default(),
    };
    let ExprKind::Cond { cond, then, other } = &rhs.kind else {
        return stmt(StmtKind::Assign {
            lhs: lhs.clone(),
            rhs: rhs.clone(),
            sugar: AssignSugar::Plain,
        });
    };
    // The branches declare nothing: they may name the body's scope.
    let branch = |e: &Expr| Block {
        stmts: vec![choose(lhs, e, span, scope)],
        scope,
        closing_comments: Vec::new(),
        span,
    };
    stmt(StmtKind::If {
        cond: (**cond).clone(),
        then: branch(then),
        other: Some(branch(other)),
    })
}

/// `adjoint/init-addresses`: a local initialised by a list holding an
/// address (`double *rows[2] = {m, m + 3};`, `Poly p = {c, 3};`) is
/// declared without it, followed by one assignment per scalar in C's order
/// (C's zero where the list gives none), so that each address goes through
/// `adjoint/assign-pointer` with its adjoint pointer. Procedures without
/// such a list are left untouched (same statement ids).
fn split_address_lists(program: &Program) -> Cow<'_, Program> {
    let holds_address = |init: &Init| {
        let mut found = false;
        crate::il::visit_init(init, &mut |e| {
            found |= super::names::is_address(program, &e.ty);
        });
        matches!(init, Init::List(..)) && found
    };
    let splits = |st: &Stmt| {
        matches!(&st.kind, StmtKind::Decl { storage: Storage::Auto, vars, .. }
            if vars.iter().any(|d| d.init.as_ref().is_some_and(holds_address)))
    };
    rewrite_statements(program, splits, |st, list, _, _| {
        let StmtKind::Decl { base, vars, .. } = &st.kind else {
            unreachable!("splits matched a declaration")
        };
        let mut comments = Some(st.comments.clone());
        for d in vars {
            let address_list = d.init.as_ref().is_some_and(holds_address);
            let mut decl = Stmt {
                id: StmtId(0),
                kind: StmtKind::Decl {
                    base: base.clone(),
                    storage: Storage::Auto,
                    vars: vec![Declarator {
                        sym: d.sym,
                        init: if address_list { None } else { d.init.clone() },
                    }],
                },
                span: st.span,
                comments: comments.take().unwrap_or_default(),
            };
            if !address_list {
                list.push(decl);
                continue;
            }
            decl.comments.trailing = None;
            list.push(decl);
            let init = d.init.as_ref().expect("an address list");
            let var = Expr::new(ExprKind::Var(d.sym), program.sym(d.sym).ty.clone(), st.span);
            let assignments = super::adjoint::scalar_assignments(program, &var, init, st.span)
                .expect("a declaration's list fits its variable");
            list.extend(assignments);
            if let Some(last) = list.last_mut() {
                last.comments.trailing = st.comments.trailing.clone();
            }
        }
    })
}

/// `adjoint/copy-addresses`: a whole struct value holding a pointer to
/// reals copied from a reference (`c = b;`, `Vec c = a;`, `*p = v;`) is
/// copied member by member, so that each address goes through
/// `adjoint/assign-pointer` with its adjoint pointer. Procedures without
/// such a copy are left untouched (same statement ids).
pub(crate) fn split_struct_copies(program: &Program) -> Cow<'_, Program> {
    let splits = |st: &Stmt| {
        one_declarator_each(st)
            .iter()
            .any(|single| member_copies(program, single).is_some())
    };
    // `Vec b = a, c = a;`: one declaration per declarator, in order.
    rewrite_statements(program, splits, |st, list, _, _| {
        for st in one_declarator_each(&st) {
            let Some(mut copies) = member_copies(program, &st) else {
                list.push(st);
                continue;
            };
            let trailing = st.comments.trailing.clone();
            let mut comments = Some(st.comments.clone());
            if matches!(st.kind, StmtKind::Decl { .. }) {
                list.push(declaration_without(&st, |_| true));
                comments = None;
            }
            if let Some(first) = copies.first_mut()
                && let Some(c) = comments.take()
            {
                first.comments = c;
                first.comments.trailing = None;
            }
            if let Some(last) = copies.last_mut() {
                last.comments.trailing = trailing;
            }
            list.extend(copies);
        }
    })
}

/// Declaration `st` without the initialisers `moved` picks (the statements
/// after it take their place), its leading comments kept and its trailing
/// one left to those statements.
fn declaration_without(st: &Stmt, moved: impl Fn(&Declarator) -> bool) -> Stmt {
    let StmtKind::Decl {
        base,
        storage,
        vars,
    } = &st.kind
    else {
        return st.clone();
    };
    Stmt {
        id: StmtId(0),
        kind: StmtKind::Decl {
            base: base.clone(),
            storage: *storage,
            vars: vars
                .iter()
                .map(|d| Declarator {
                    sym: d.sym,
                    init: if moved(d) { None } else { d.init.clone() },
                })
                .collect(),
        },
        span: st.span,
        comments: Comments {
            leading: st.comments.leading.clone(),
            trailing: None,
        },
    }
}

/// A declaration of several declarators as one declaration each, in
/// order, the comments before the first and after the last; any other
/// statement alone.
fn one_declarator_each(st: &Stmt) -> Vec<Stmt> {
    let StmtKind::Decl {
        base,
        storage,
        vars,
    } = &st.kind
    else {
        return vec![st.clone()];
    };
    if vars.len() < 2 {
        return vec![st.clone()];
    }
    let n = vars.len();
    vars.iter()
        .enumerate()
        .map(|(k, d)| {
            let mut comments = Comments::default();
            if k == 0 {
                comments.leading = st.comments.leading.clone();
            }
            if k + 1 == n {
                comments.trailing = st.comments.trailing.clone();
            }
            Stmt {
                id: StmtId(0),
                kind: StmtKind::Decl {
                    base: base.clone(),
                    storage: *storage,
                    vars: vec![d.clone()],
                },
                span: st.span,
                comments,
            }
        })
        .collect()
}

/// The member-by-member assignments that replace statement `st`, when it
/// copies a whole struct value holding a pointer to reals from a reference
/// into a place whose address reads no memory (`adjoint/copy-addresses`):
/// an assignment, or a local declaration with one declarator.
fn member_copies(program: &Program, st: &Stmt) -> Option<Vec<Stmt>> {
    let (lhs, rhs) = match &st.kind {
        StmtKind::Assign {
            lhs,
            rhs,
            sugar: AssignSugar::Plain,
        } => (lhs.clone(), rhs),
        StmtKind::Decl {
            storage: Storage::Auto,
            vars,
            ..
        } if vars.len() == 1 => {
            let Some(Init::Expr(e)) = &vars[0].init else {
                return None;
            };
            let sym = vars[0].sym;
            (
                Expr::new(ExprKind::Var(sym), program.sym(sym).ty.clone(), st.span),
                e,
            )
        }
        _ => return None,
    };
    if !matches!(program.resolve(&lhs.ty.ty), Type::Struct(_))
        || !super::names::holds_real_pointer(program, &lhs.ty.ty, 0)
        || !fixed_place(&lhs)
        || !fixed_place(rhs)
    {
        return None;
    }
    let mut paths = Vec::new();
    member_paths(program, &lhs.ty.ty, &mut Vec::new(), &mut paths, 0)?;
    let mut code = Vec::new();
    for path in paths {
        let (mut l, mut r) = (lhs.clone(), rhs.clone());
        for &step in &path {
            l = super::adjoint::follow_step(program, l, step, st.span)?;
            r = super::adjoint::follow_step(program, r, step, st.span)?;
        }
        code.push(Stmt {
            id: StmtId(0),
            kind: StmtKind::Assign {
                lhs: l,
                rhs: r,
                sugar: AssignSugar::Plain,
            },
            span: st.span,
            comments: Comments::default(),
        });
    }
    Some(code)
}

/// A reference whose address reads no memory but variables: a variable, or
/// a field, element or `*` of such a reference, indices made of variables
/// and constants (writing the members of the copy's target then cannot move
/// either side).
fn fixed_place(e: &Expr) -> bool {
    fn plain_index(e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Var(_) | ExprKind::IntConst { .. } => true,
            ExprKind::Binary { lhs, rhs, .. } => plain_index(lhs) && plain_index(rhs),
            ExprKind::Unary { arg, .. } | ExprKind::Cast { arg, .. } => plain_index(arg),
            _ => false,
        }
    }
    match &e.kind {
        ExprKind::Var(_) => true,
        ExprKind::Field { base, .. } => fixed_place(base),
        ExprKind::Index { base, index } => fixed_place(base) && plain_index(index),
        ExprKind::Deref(p) => matches!(p.kind, ExprKind::Var(_)),
        _ => false,
    }
}

/// The paths to the members a struct copy assigns one by one: a member
/// holding no pointer to reals whole, one that does split in turn, an
/// array's elements one by one. `None` when an array on the way has no
/// known length or more than 32 elements.
fn member_paths(
    program: &Program,
    ty: &Type,
    path: &mut Vec<super::adjoint::InitStep>,
    out: &mut Vec<Vec<super::adjoint::InitStep>>,
    depth: usize,
) -> Option<()> {
    const MAX_ELEMENTS: u64 = 32;
    if depth > 32 {
        return None;
    }
    let splits = super::names::holds_real_pointer(program, ty, 0);
    match program.resolve(ty) {
        Type::Struct(sid) if splits => {
            for (k, f) in program.strukt(*sid).fields.iter().enumerate() {
                path.push(super::adjoint::InitStep::Field(*sid, k));
                member_paths(program, &f.ty.ty, path, out, depth + 1)?;
                path.pop();
            }
        }
        Type::Array { elem, len } => {
            let n = len.as_ref().and_then(|l| l.value)?;
            if n > MAX_ELEMENTS {
                return None;
            }
            for k in 0..n as usize {
                path.push(super::adjoint::InitStep::Index(k));
                member_paths(program, &elem.ty, path, out, depth + 1)?;
                path.pop();
            }
        }
        _ => out.push(path.clone()),
    }
    Some(())
}

fn structure_jumps_in(program: &Program) -> Cow<'_, Program> {
    let todo: Vec<ProcId> = program
        .defined_procs()
        .filter(|(_, p)| p.body.as_ref().is_some_and(|b| needs_structuring(&b.stmts)))
        .map(|(id, _)| id)
        .collect();
    let regions = super::checkpoint::procs_with_regions(program);
    if todo.is_empty() && regions.is_empty() {
        return Cow::Borrowed(program);
    }
    let mut out = program.clone();
    for p in regions {
        super::checkpoint::mark_regions(&mut out, p);
    }
    let mut taken: HashSet<String> = out.symbols.iter().map(|s| s.name.clone()).collect();
    for p in todo {
        restructure_proc(&mut out, p, &mut taken);
    }
    Cow::Owned(out)
}

/// The procedures with a statement, nested ones included, that `pred`
/// holds for.
fn procs_with(program: &Program, pred: impl Fn(&Stmt) -> bool) -> Vec<ProcId> {
    program
        .defined_procs()
        .filter(|(_, p)| {
            let mut found = false;
            if let Some(b) = &p.body {
                visit_stmts(&b.stmts, &mut |s| found |= pred(s));
            }
            found
        })
        .map(|(id, _)| id)
        .collect()
}

/// `adjoint/structure-once`: `do { B } while (0)`, the braces of a
/// statement-like macro, runs B once; without a `break` or `continue` of
/// its own it is the block `{ B }`, which the adjoint reverses without
/// counting iterations.
fn run_once_loops(program: &Program) -> Cow<'_, Program> {
    let todo = procs_with(program, runs_once);
    if todo.is_empty() {
        return Cow::Borrowed(program);
    }
    let mut out = program.clone();
    for p in todo {
        if let Some(body) = &mut out.procs[p.index()].body {
            crate::il::rewrite_stmt_lists(&mut body.stmts, &mut |list| {
                for st in list.iter_mut() {
                    if runs_once(st)
                        && let StmtKind::Loop { body, .. } = &mut st.kind
                    {
                        let body = std::mem::replace(
                            body,
                            Block {
                                stmts: Vec::new(),
                                scope: body.scope,
                                closing_comments: Vec::new(),
                                span: body.span,
                            },
                        );
                        st.kind = StmtKind::Block(body);
                    }
                }
            });
        }
    }
    Cow::Owned(out)
}

/// Is `s` a `do … while (0)` that no `break` or `continue` leaves?
fn runs_once(s: &Stmt) -> bool {
    let StmtKind::Loop {
        header: LoopHeader::DoWhile { cond },
        body,
    } = &s.kind
    else {
        return false;
    };
    matches!(cond.kind, ExprKind::IntConst { value: 0, .. }) && !leaves_loop(&body.stmts)
}

/// Does a `break` or `continue` in `stmts` leave the loop they are the
/// body of (not a nested loop, a `break` not in a nested `switch`)?
fn leaves_loop(stmts: &[Stmt]) -> bool {
    stmts.iter().any(|s| match &s.kind {
        StmtKind::Break | StmtKind::Continue => true,
        StmtKind::Block(b) => leaves_loop(&b.stmts),
        StmtKind::If { then, other, .. } => {
            leaves_loop(&then.stmts) || other.as_ref().is_some_and(|o| leaves_loop(&o.stmts))
        }
        StmtKind::Switch { cases, .. } => cases.iter().any(|c| {
            let mut cont = false;
            visit_stmts(&c.body, &mut |x| {
                cont |= matches!(x.kind, StmtKind::Continue)
            });
            cont
        }),
        _ => false,
    })
}

/// Does a body contain a switch, a break, a continue, or a return that is
/// not its last statement?
fn needs_structuring(body: &[Stmt]) -> bool {
    let mut found = false;
    visit_stmts(body, &mut |s| {
        found |= matches!(
            s.kind,
            StmtKind::Switch { .. } | StmtKind::Break | StmtKind::Continue
        )
    });
    found || returns_early(body)
}

/// Does a body contain a `return` that is not its last statement?
fn returns_early(body: &[Stmt]) -> bool {
    let last = body.last().map(|s| s.id);
    let mut early = false;
    visit_stmts(body, &mut |s| {
        early |= matches!(s.kind, StmtKind::Return(_)) && Some(s.id) != last;
    });
    early
}

fn restructure_proc(program: &mut Program, p: ProcId, taken: &mut HashSet<String>) {
    let proc = program.proc(p);
    let body = proc.body.clone().expect("a defined procedure");
    let span = proc.span;
    let ret_ty = proc.ret.clone();
    let mut s = Structurer {
        program,
        scope: body.scope,
        span,
        new_syms: Vec::new(),
        ret: None,
        taken: std::mem::take(taken),
    };
    if returns_early(&body.stmts) {
        let flag = s.new_flag("aioli_return");
        let value = (!matches!(ret_ty.ty, Type::Void)).then(|| {
            let mut ty = ret_ty.clone();
            ty.is_const = false;
            s.new_sym("aioli_result", ty)
        });
        s.ret = Some(ReturnTarget { flag, value });
    }
    let ctx = Targets::default();
    let lowered = s.seq(body.stmts, &ctx);
    let mut stmts = Vec::new();
    if let Some(r) = &s.ret {
        stmts.push(s.set(r.flag, 0, span));
    }
    stmts.extend(lowered.stmts);
    if let Some(ReturnTarget { value: Some(v), .. }) = s.ret {
        let e = s.var(v, span);
        stmts.push(s.stmt(StmtKind::Return(Some(e)), span));
    }
    // Flags no test reads: drop their assignments and their symbols'
    // declarations (`adjoint/structure-jump`).
    let mut read = HashSet::default();
    flags_read(&stmts, &mut read);
    let flags: Vec<SymId> = s.new_syms.clone();
    let dead: HashSet<SymId> = flags
        .iter()
        .copied()
        .filter(|f| s.program.sym(*f).name.starts_with("aioli_") && !read.contains(f))
        .filter(|f| s.ret.as_ref().and_then(|r| r.value) != Some(*f))
        .collect();
    drop_flag_sets(&mut stmts, &dead);
    let mut decls: Vec<Stmt> = flags
        .iter()
        .filter(|f| !dead.contains(f))
        .map(|&f| {
            let base = s.program.sym(f).ty.clone();
            // The result is set on every path that reaches the final
            // `return`, but only the flags say so: start it at zero so no
            // analysis sees it read uninitialised.
            let init = match s.program.resolve(&base.ty) {
                _ if s.ret.as_ref().and_then(|r| r.value) != Some(f) => None,
                Type::Real(_) => Some(Init::Expr(Expr::new(
                    ExprKind::RealConst {
                        value: 0.0,
                        text: "0.0".into(),
                    },
                    base.clone(),
                    span,
                ))),
                Type::Int { .. } => Some(Init::Expr(Expr::int(0, span))),
                Type::Pointer(_) => Some(Init::Expr(Expr::new(
                    ExprKind::IntConst {
                        value: 0,
                        text: "0".into(),
                    },
                    base.clone(),
                    span,
                ))),
                _ => None,
            };
            s.stmt(
                StmtKind::Decl {
                    base,
                    storage: Storage::Auto,
                    vars: vec![Declarator { sym: f, init }],
                },
                span,
            )
        })
        .collect();
    decls.extend(stmts);
    *taken = std::mem::take(&mut s.taken);
    let mut stmts = decls;
    let mut next = 0;
    super::tangent::renumber(&mut stmts, &mut next);
    let proc = &mut program.procs[p.index()];
    let body = proc.body.as_mut().expect("a defined procedure");
    body.stmts = stmts;
    proc.stmt_count = next;
}

struct ReturnTarget {
    flag: SymId,
    /// `aioli_result`, for a procedure that returns a value.
    value: Option<SymId>,
}

/// The flags the jumps in the current position set.
#[derive(Clone, Default)]
struct Targets {
    /// The innermost enclosing loop or switch's break flag.
    brk: Option<SymId>,
    /// The innermost enclosing loop's continue flag.
    cont: Option<SymId>,
}

/// A rewritten statement list.
struct Lowered {
    stmts: Vec<Stmt>,
    /// Flags it may set (that a later statement must test).
    may: Vec<SymId>,
    /// Every path through it ends with a jump.
    must: bool,
}

struct Structurer<'p> {
    program: &'p mut Program,
    scope: ScopeId,
    span: Span,
    new_syms: Vec<SymId>,
    ret: Option<ReturnTarget>,
    /// Every symbol name of the program, for clash-free new names.
    taken: HashSet<String>,
}

impl Structurer<'_> {
    fn new_sym(&mut self, base: &str, ty: QualType) -> SymId {
        let mut name = base.to_string();
        let mut n = 0;
        while taken_contains(&self.taken, &name) {
            name = format!("{base}{n}");
            n += 1;
        }
        let id = SymId(self.program.symbols.len() as u32);
        self.program.symbols.push(Symbol {
            name: name.clone(),
            ty,
            kind: SymKind::Local,
            storage: Storage::Auto,
            scope: self.scope,
            span: self.span,
        });
        self.program.scopes[self.scope.index()]
            .vars
            .insert(name.clone(), id);
        self.taken.insert(name);
        self.new_syms.push(id);
        id
    }

    fn new_flag(&mut self, base: &str) -> SymId {
        self.new_sym(base, QualType::int())
    }

    fn var(&self, s: SymId, span: Span) -> Expr {
        Expr::new(ExprKind::Var(s), self.program.sym(s).ty.clone(), span)
    }

    fn binary(op: BinOp, l: Expr, r: Expr, span: Span) -> Expr {
        Expr::new(
            ExprKind::Binary {
                op,
                lhs: Box::new(l),
                rhs: Box::new(r),
            },
            QualType::int(),
            span,
        )
    }

    fn stmt(&self, kind: StmtKind, span: Span) -> Stmt {
        Stmt {
            id: StmtId(0),
            kind,
            span,
            comments: Comments::default(),
        }
    }

    fn assign(&self, lhs: Expr, rhs: Expr, span: Span) -> Stmt {
        self.stmt(
            StmtKind::Assign {
                lhs,
                rhs,
                sugar: AssignSugar::Plain,
            },
            span,
        )
    }

    fn set(&self, flag: SymId, v: i64, span: Span) -> Stmt {
        self.assign(self.var(flag, span), Expr::int(v, span), span)
    }

    fn block(&self, stmts: Vec<Stmt>, span: Span) -> Block {
        Block {
            stmts,
            scope: self.scope,
            closing_comments: Vec::new(),
            span,
        }
    }

    /// `!f1 && !f2 && ...`
    fn none_set(&self, flags: &[SymId], span: Span) -> Option<Expr> {
        flags
            .iter()
            .map(|&f| {
                Expr::new(
                    ExprKind::Unary {
                        op: UnOp::Not,
                        arg: Box::new(self.var(f, span)),
                    },
                    QualType::int(),
                    span,
                )
            })
            .reduce(|a, b| Self::binary(BinOp::And, a, b, span))
    }

    /// `if (!flags) { stmts }`.
    fn guarded(&self, flags: &[SymId], stmts: Vec<Stmt>, span: Span) -> Vec<Stmt> {
        match self.none_set(flags, span) {
            Some(cond) if !stmts.is_empty() => vec![self.stmt(
                StmtKind::If {
                    cond,
                    then: self.block(stmts, span),
                    other: None,
                },
                span,
            )],
            _ => stmts,
        }
    }

    /// A statement list: `adjoint/structure-jump` and
    /// `adjoint/structure-absorb`.
    fn seq(&mut self, stmts: Vec<Stmt>, ctx: &Targets) -> Lowered {
        let mut out = Vec::new();
        let mut may: Vec<SymId> = Vec::new();
        let mut rest = stmts.into_iter();
        while let Some(s) = rest.next() {
            let s = match s.kind {
                StmtKind::If { cond, then, other } => {
                    let then_jumps = always_jumps(&then.stmts);
                    let else_jumps = other.as_ref().is_some_and(|o| always_jumps(&o.stmts));
                    let remaining: Vec<Stmt> = if then_jumps != else_jumps {
                        rest.by_ref().collect()
                    } else {
                        Vec::new()
                    };
                    let (then, other) = if then_jumps && !else_jumps {
                        let mut o = other.unwrap_or_else(|| self.block(Vec::new(), s.span));
                        o.stmts.extend(remaining);
                        (then, (!o.stmts.is_empty()).then_some(o))
                    } else if else_jumps && !then_jumps {
                        let mut t = then;
                        t.stmts.extend(remaining);
                        (t, other)
                    } else {
                        (then, other)
                    };
                    Stmt {
                        kind: StmtKind::If { cond, then, other },
                        ..s
                    }
                }
                kind => Stmt { kind, ..s },
            };
            let l = self.stmt_of(s, ctx);
            out.extend(l.stmts);
            union(&mut may, &l.may);
            if l.must {
                return Lowered {
                    stmts: out,
                    may,
                    must: true,
                };
            }
            if !l.may.is_empty() {
                let remaining: Vec<Stmt> = rest.by_ref().collect();
                if remaining.is_empty() {
                    break;
                }
                let span = remaining[0].span;
                let r = self.seq(remaining, ctx);
                out.extend(self.guarded(&l.may, r.stmts, span));
                union(&mut may, &r.may);
                return Lowered {
                    stmts: out,
                    may,
                    must: r.must,
                };
            }
        }
        Lowered {
            stmts: out,
            may,
            must: false,
        }
    }

    fn stmt_of(&mut self, s: Stmt, ctx: &Targets) -> Lowered {
        let span = s.span;
        let comments = s.comments.clone();
        let with_comments = |mut stmts: Vec<Stmt>| {
            if let Some(first) = stmts.first_mut()
                && first.comments.is_empty()
            {
                first.comments = comments.clone();
            }
            stmts
        };
        match s.kind {
            StmtKind::Break => {
                let flag = ctx.brk.expect("break inside a loop or switch");
                Lowered {
                    stmts: with_comments(vec![self.set(flag, 1, span)]),
                    may: vec![flag],
                    must: true,
                }
            }
            StmtKind::Continue => {
                let flag = ctx.cont.expect("continue inside a loop");
                Lowered {
                    stmts: with_comments(vec![self.set(flag, 1, span)]),
                    may: vec![flag],
                    must: true,
                }
            }
            StmtKind::Return(value) => {
                let Some(r) = &self.ret else {
                    // The procedure's last statement.
                    return Lowered {
                        stmts: vec![Stmt {
                            kind: StmtKind::Return(value),
                            ..s
                        }],
                        may: Vec::new(),
                        must: false,
                    };
                };
                let flag = r.flag;
                let mut stmts = Vec::new();
                if let (Some(v), Some(e)) = (r.value, value) {
                    stmts.push(self.assign(self.var(v, span), e, span));
                }
                stmts.push(self.set(flag, 1, span));
                Lowered {
                    stmts: with_comments(stmts),
                    may: vec![flag],
                    must: true,
                }
            }
            StmtKind::If { cond, then, other } => {
                let t = self.seq(then.stmts, ctx);
                let o = other.map(|o| (self.seq(o.stmts.clone(), ctx), o));
                let mut may = t.may.clone();
                let mut must = t.must;
                let other = match o {
                    Some((l, b)) => {
                        union(&mut may, &l.may);
                        must &= l.must;
                        Some(Block {
                            stmts: l.stmts,
                            ..b
                        })
                    }
                    None => {
                        must = false;
                        None
                    }
                };
                Lowered {
                    stmts: vec![Stmt {
                        kind: StmtKind::If {
                            cond,
                            then: Block {
                                stmts: t.stmts,
                                ..then
                            },
                            other,
                        },
                        ..s
                    }],
                    may,
                    must,
                }
            }
            StmtKind::Block(b) => {
                let l = self.seq(b.stmts, ctx);
                Lowered {
                    stmts: vec![Stmt {
                        kind: StmtKind::Block(Block {
                            stmts: l.stmts,
                            ..b
                        }),
                        ..s
                    }],
                    may: l.may,
                    must: l.must,
                }
            }
            StmtKind::Loop { header, body } => {
                self.lower_loop(s.id, span, s.comments, header, body)
            }
            StmtKind::Switch { selector, cases } => {
                self.lower_switch(span, s.comments, selector, cases, ctx)
            }
            kind => Lowered {
                stmts: vec![Stmt { kind, ..s }],
                may: Vec::new(),
                must: false,
            },
        }
    }

    /// `adjoint/structure-loop`.
    fn lower_loop(
        &mut self,
        id: StmtId,
        span: Span,
        comments: Comments,
        header: LoopHeader,
        body: Block,
    ) -> Lowered {
        let brk = jumps_to_loop(&body.stmts, true).then(|| self.new_flag("aioli_break"));
        let cont = jumps_to_loop(&body.stmts, false).then(|| self.new_flag("aioli_continue"));
        let inner = Targets { brk, cont };
        let l = self.seq(body.stmts, &inner);
        // Flags that end the loop: its own break, and a return.
        let leaving: Vec<SymId> = l
            .may
            .iter()
            .copied()
            .filter(|f| Some(*f) != cont && Some(*f) != brk)
            .collect();
        let mut exits: Vec<SymId> = brk.into_iter().collect();
        exits.extend(leaving.iter().copied());
        let mut stmts_body = Vec::new();
        if let Some(c) = cont {
            stmts_body.push(self.set(c, 0, span));
        }
        stmts_body.extend(l.stmts);
        let with_exits = |s: &Self, cond: Option<Expr>| -> Expr {
            let test = s.none_set(&exits, span);
            match (test, cond) {
                (Some(t), Some(c)) if is_true(&c) => t,
                (Some(t), Some(c)) => Self::binary(BinOp::And, t, c, span),
                (Some(t), None) => t,
                (None, Some(c)) => c,
                (None, None) => Expr::int(1, span),
            }
        };
        let mut out = Vec::new();
        if let Some(b) = brk {
            out.push(self.set(b, 0, span));
        }
        let header = match header {
            LoopHeader::For { init, cond, step } if !exits.is_empty() => {
                // The step runs only when the body did not leave the loop.
                let mut pre = init;
                pre.append(&mut out);
                out = pre;
                let step = self.guarded(&exits, step, span);
                stmts_body.extend(step);
                LoopHeader::While {
                    cond: with_exits(self, cond),
                }
            }
            LoopHeader::For { init, cond, step } => LoopHeader::For { init, cond, step },
            LoopHeader::While { cond } => LoopHeader::While {
                cond: with_exits(self, Some(cond)),
            },
            LoopHeader::DoWhile { cond } => LoopHeader::DoWhile {
                cond: with_exits(self, Some(cond)),
            },
        };
        let loop_stmt = Stmt {
            id,
            kind: StmtKind::Loop {
                header,
                body: Block {
                    stmts: stmts_body,
                    ..body
                },
            },
            span,
            comments,
        };
        let wrap = matches!(out.first(), Some(s) if matches!(s.kind, StmtKind::Decl { .. }));
        out.push(loop_stmt);
        let stmts = if wrap {
            // A `for` declaring its index, turned into a `while`: keep the
            // declaration's scope to the loop.
            vec![self.stmt(StmtKind::Block(self.block(out, span)), span)]
        } else {
            out
        };
        Lowered {
            stmts,
            may: leaving,
            must: false,
        }
    }

    /// `adjoint/structure-switch`.
    fn lower_switch(
        &mut self,
        span: Span,
        comments: Comments,
        selector: Expr,
        cases: Vec<SwitchCase>,
        ctx: &Targets,
    ) -> Lowered {
        let n = cases.len() as i64;
        let default = cases
            .iter()
            .position(|c| c.labels.iter().any(Option::is_none))
            .map_or(n, |d| d as i64);
        // index = sel == a ? 0 : sel == b ? 1 : ... : default
        let mut index = Expr::int(default, span);
        for (k, c) in cases.iter().enumerate().rev() {
            let test = c
                .labels
                .iter()
                .flatten()
                .map(|l| Self::binary(BinOp::Eq, selector.clone(), l.clone(), span))
                .reduce(|a, b| Self::binary(BinOp::Or, a, b, span));
            if let Some(test) = test {
                index = Expr::new(
                    ExprKind::Cond {
                        cond: Box::new(test),
                        then: Box::new(Expr::int(k as i64, span)),
                        other: Box::new(index),
                    },
                    QualType::int(),
                    span,
                );
            }
        }
        let case_var = self.new_sym("aioli_case", QualType::int());
        let brk = cases
            .iter()
            .any(|c| jumps_to_loop(&c.body, true))
            .then(|| self.new_flag("aioli_break"));
        let mut out = Vec::new();
        let mut first = self.assign(self.var(case_var, span), index, span);
        first.comments = comments;
        out.push(first);
        if let Some(b) = brk {
            out.push(self.set(b, 0, span));
        }
        let has_default = default < n;
        let groups: Vec<Stmt> = cases
            .into_iter()
            .enumerate()
            .map(|(k, c)| {
                if has_default && k as i64 == n - 1 {
                    // With a default, the index is at most n - 1: the last
                    // group runs whenever control reaches it.
                    let mut s = self.stmt(StmtKind::Block(self.block(c.body, c.span)), c.span);
                    s.comments = c.comments;
                    return s;
                }
                let cond = Self::binary(
                    BinOp::Le,
                    self.var(case_var, c.span),
                    Expr::int(k as i64, c.span),
                    c.span,
                );
                let mut s = self.stmt(
                    StmtKind::If {
                        cond,
                        then: self.block(c.body, c.span),
                        other: None,
                    },
                    c.span,
                );
                s.comments = c.comments;
                s
            })
            .collect();
        let inner = Targets {
            brk,
            cont: ctx.cont,
        };
        let l = self.seq(groups, &inner);
        out.extend(l.stmts);
        Lowered {
            stmts: out,
            may: l.may.into_iter().filter(|f| Some(*f) != brk).collect(),
            must: false,
        }
    }
}

fn taken_contains(taken: &HashSet<String>, name: &str) -> bool {
    taken.contains(name)
}

fn union(into: &mut Vec<SymId>, from: &[SymId]) {
    for f in from {
        if !into.contains(f) {
            into.push(*f);
        }
    }
}

fn is_true(e: &Expr) -> bool {
    matches!(e.kind, ExprKind::IntConst { value, .. } if value != 0)
}

/// Does every path through the list end with a jump?
fn always_jumps(stmts: &[Stmt]) -> bool {
    stmts.iter().any(|s| match &s.kind {
        StmtKind::Break | StmtKind::Continue | StmtKind::Return(_) => true,
        StmtKind::If {
            then,
            other: Some(o),
            ..
        } => always_jumps(&then.stmts) && always_jumps(&o.stmts),
        StmtKind::Block(b) => always_jumps(&b.stmts),
        _ => false,
    })
}

/// Does the body contain a `break` (`breaks`) or `continue` that leaves
/// this loop (not one of a nested loop, nor a `break` of a nested switch)?
/// With `breaks`, also whether a case body has a `break` leaving its switch.
fn jumps_to_loop(stmts: &[Stmt], breaks: bool) -> bool {
    stmts.iter().any(|s| match &s.kind {
        StmtKind::Break => breaks,
        StmtKind::Continue => !breaks,
        StmtKind::If { then, other, .. } => {
            jumps_to_loop(&then.stmts, breaks)
                || other
                    .as_ref()
                    .is_some_and(|o| jumps_to_loop(&o.stmts, breaks))
        }
        StmtKind::Block(b) => jumps_to_loop(&b.stmts, breaks),
        // A switch's break is its own; its continue is the loop's.
        StmtKind::Switch { cases, .. } => {
            !breaks && cases.iter().any(|c| jumps_to_loop(&c.body, false))
        }
        _ => false,
    })
}

/// Variables read in conditions (where flags are tested).
fn flags_read(stmts: &[Stmt], out: &mut HashSet<SymId>) {
    fn vars(e: &Expr, out: &mut HashSet<SymId>) {
        match &e.kind {
            ExprKind::Var(s) => {
                out.insert(*s);
            }
            ExprKind::Unary { arg, .. } => vars(arg, out),
            ExprKind::Binary { lhs, rhs, .. } => {
                vars(lhs, out);
                vars(rhs, out);
            }
            ExprKind::Cond { cond, then, other } => {
                vars(cond, out);
                vars(then, out);
                vars(other, out);
            }
            _ => {}
        }
    }
    visit_stmts(stmts, &mut |s| match &s.kind {
        StmtKind::If { cond, .. } => vars(cond, out),
        StmtKind::Loop { header, .. } => match header {
            LoopHeader::For { cond: Some(c), .. }
            | LoopHeader::While { cond: c }
            | LoopHeader::DoWhile { cond: c } => vars(c, out),
            LoopHeader::For { cond: None, .. } => {}
        },
        _ => {}
    });
}

/// Removes `flag = k;` for the dead flags.
fn drop_flag_sets(stmts: &mut Vec<Stmt>, dead: &HashSet<SymId>) {
    stmts.retain(|s| {
        !matches!(&s.kind, StmtKind::Assign { lhs, .. }
            if matches!(lhs.kind, ExprKind::Var(v) if dead.contains(&v)))
    });
    for s in stmts.iter_mut() {
        match &mut s.kind {
            StmtKind::If { then, other, .. } => {
                drop_flag_sets(&mut then.stmts, dead);
                if let Some(o) = other {
                    drop_flag_sets(&mut o.stmts, dead);
                }
            }
            StmtKind::Loop { header, body } => {
                if let LoopHeader::For { init, step, .. } = header {
                    drop_flag_sets(init, dead);
                    drop_flag_sets(step, dead);
                }
                drop_flag_sets(&mut body.stmts, dead);
            }
            StmtKind::Block(b) => drop_flag_sets(&mut b.stmts, dead),
            _ => {}
        }
        // `if (c) {} else { S }` (a jump whose flag nobody reads, with the
        // rest absorbed into the other branch) reads as `if (!c) { S }`.
        if let StmtKind::If { cond, then, other } = &mut s.kind
            && then.stmts.is_empty()
            && let Some(o) = other.take()
        {
            let span = cond.span;
            let c = std::mem::replace(cond, Expr::int(0, span));
            *cond = Expr::new(
                ExprKind::Unary {
                    op: UnOp::Not,
                    arg: Box::new(Expr { parens: true, ..c }),
                },
                QualType::int(),
                span,
            );
            *then = o;
        }
    }
    // An `if` left with nothing in either branch does nothing (conditions
    // have no side effects in the IL).
    stmts.retain(|s| {
        !matches!(&s.kind, StmtKind::If { then, other, .. }
            if then.stmts.is_empty() && other.as_ref().is_none_or(|o| o.stmts.is_empty()))
    });
}
