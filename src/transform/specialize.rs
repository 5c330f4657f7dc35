//! `specialize/activity`: one differentiated copy of a procedure per
//! activity pattern of its calls, where the generalised one cannot serve.
//!
//! A procedure gets one derivative (`f_d`, `f_b`) whose formals are those
//! active at some call (generalisation, CONTRACT §3). A call passing a
//! pointer without derivative to such a formal gives the callee a zero
//! buffer (`tangent/actual-dummy`, `adjoint/actual-pointer-passive`), which
//! needs the extent of the memory pointed to. When that extent is not
//! known at the call (a pointer parameter, the heap), the call is
//! redirected to a copy of the callee made for calls passing no derivative
//! at those positions: in the copy they are passive, and its derivative
//! has no derivative parameter for them. Copies are shared by the calls
//! with the same pattern; a copy's primal is the original's.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::analysis::head::Head;
use crate::analysis::{Analysis, Mode, analyze_adjoint, analyze_for};
use crate::il::{
    AllocForm, Block, Expr, ExprKind, Init, LoopHeader, ProcId, Program, ScopeId, Stmt, StmtId,
    StmtKind, SymId,
};

use super::names::{DiffSets, is_address};

/// Which derivative code the analyses prepare: the tangent mode, or the
/// adjoint mode with or without `--split`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Tangent,
    Adjoint { split: bool },
}

/// At most this many copies: a bound on the work, far above what a program
/// with a handful of patterns per helper needs.
const MAX_COPIES: usize = 64;

/// Runs `f` on the analyses of `program`, or, when some call needs a copy
/// of its callee (see the module comment), of a copy of `program` with
/// those copies made and the calls redirected (`specialize/activity`).
pub fn analyzed<R>(
    program: &Program,
    heads: &[Head],
    target: Target,
    f: impl FnOnce(&Analysis<'_>) -> R,
) -> R {
    let expanded = super::expand_defining_headers(program);
    let program = expanded.as_ref().unwrap_or(program);
    // (The adjoint's pre-pass did this already.)
    let lowered = super::structure::lower_struct_conditionals(program);
    let program: &Program = &lowered;
    let mut converted = struct_results_through_pointers(program, heads);
    // The adjoint's pre-pass has run: the new `*f = v` copies go member by
    // member too (`adjoint/copy-addresses`).
    if let (Some(c), Target::Adjoint { .. }) = (&mut converted, target)
        && let std::borrow::Cow::Owned(split) = super::structure::split_struct_copies(c)
    {
        *c = split;
    }
    let program = converted.as_ref().unwrap_or(program);
    match merge_aliased_arguments(program) {
        Some(merged) => analyzed_after_merging(&merged, heads, target, f),
        None => analyzed_after_merging(program, heads, target, f),
    }
}

/// `specialize/struct-result`: a copy of `program` in which each procedure
/// (not a head) returning a struct that holds pointers to reals, whose
/// every call stores the result (`Vec t = vec_new(n);`), gives the struct
/// back through a last pointer parameter instead (`vec_new(n, &t)`, and
/// `return v;` becomes `*vec_new = v; return;`): the analyses follow the
/// addresses a procedure stores through a pointer, not those it returns.
/// `Program::struct_results` keeps the procedure as written, for printing.
/// `None` when no procedure qualifies.
fn struct_results_through_pointers(program: &Program, heads: &[Head]) -> Option<Program> {
    let candidates: Vec<ProcId> = program
        .defined_procs()
        .filter(|&(p, proc)| {
            !heads.iter().any(|h| h.proc == p)
                && matches!(program.resolve(&proc.ret.ty), crate::il::Type::Struct(_))
                && super::names::holds_real_pointer(program, &proc.ret.ty, 0)
        })
        .map(|(p, _)| p)
        .filter(|&p| {
            // Every call stores the result into a place it can point to.
            program.defined_procs().all(|(_, caller)| {
                let mut all = true;
                if let Some(b) = &caller.body {
                    crate::il::visit_stmts(&b.stmts, &mut |s| {
                        if let StmtKind::Call { callee, result, .. } = &s.kind
                            && *callee == p
                        {
                            all &= result.as_ref().is_some_and(|r| {
                                matches!(
                                    r.kind,
                                    ExprKind::Var(_)
                                        | ExprKind::Field { .. }
                                        | ExprKind::Index { .. }
                                        | ExprKind::Deref(_)
                                )
                            });
                        }
                    });
                }
                all
            })
        })
        .collect();
    if candidates.is_empty() {
        return None;
    }
    let mut out = program.clone();
    for &p in &candidates {
        let written = out.proc(p).clone();
        let name = {
            let taken = |n: &str| out.symbols.iter().any(|s| s.name == n);
            std::iter::once(written.name.clone())
                .chain((0..).map(|i| format!("{}{i}", written.name)))
                .find(|n| !taken(n))
                .expect("an unbounded supply of names")
        };
        let ty = written.ret.clone().pointer_to();
        let sym = SymId(out.symbols.len() as u32);
        out.symbols.push(crate::il::Symbol {
            name: name.clone(),
            ty: ty.clone(),
            kind: crate::il::SymKind::Param,
            storage: crate::il::Storage::Auto,
            scope: written.scope,
            span: written.span,
        });
        out.scopes[written.scope.index()].vars.insert(name, sym);
        let proc = &mut out.procs[p.index()];
        proc.params.push(sym);
        proc.ret = crate::il::QualType::void();
        if let Some(b) = proc.body.as_mut() {
            let span = written.span;
            crate::il::rewrite_stmt_lists(&mut b.stmts, &mut |list| {
                let old = std::mem::take(list);
                for st in old {
                    let StmtKind::Return(Some(e)) = &st.kind else {
                        list.push(st);
                        continue;
                    };
                    let e = e.clone();
                    let target = Expr::new(
                        ExprKind::Deref(Box::new(Expr::new(ExprKind::Var(sym), ty.clone(), span))),
                        written.ret.clone(),
                        st.span,
                    );
                    list.push(Stmt {
                        kind: StmtKind::Assign {
                            lhs: target,
                            rhs: e,
                            sugar: crate::il::AssignSugar::Plain,
                        },
                        ..st.clone()
                    });
                    list.push(Stmt {
                        kind: StmtKind::Return(None),
                        comments: Default::default(),
                        ..st
                    });
                }
            });
            // The last statement need not return.
            if matches!(
                b.stmts.last(),
                Some(Stmt {
                    kind: StmtKind::Return(None),
                    ..
                })
            ) {
                b.stmts.pop();
            }
            let mut next = 0;
            super::tangent::renumber(&mut b.stmts, &mut next);
            proc.stmt_count = next;
        }
        out.struct_results.insert(p, written);
    }
    for proc in out.procs.iter_mut() {
        if let Some(b) = proc.body.as_mut() {
            each_stmt_mut(&mut b.stmts, &mut |s| {
                if let StmtKind::Call {
                    callee,
                    result,
                    args,
                    decl_init,
                } = &mut s.kind
                    && candidates.contains(callee)
                    && let Some(r) = result.take()
                {
                    let ty = r.ty.clone().pointer_to();
                    let span = r.span;
                    args.push(Expr::new(ExprKind::AddrOf(Box::new(r)), ty, span));
                    *decl_init = false;
                }
            });
        }
    }
    Some(out)
}

fn analyzed_after_merging<R>(
    program: &Program,
    heads: &[Head],
    target: Target,
    f: impl FnOnce(&Analysis<'_>) -> R,
) -> R {
    let first = analyze(program, heads, target);
    // Only where the adjoint would refuse the overlap: copies cost a second
    // run of the analyses, and the tangent, which follows the original's
    // reads and writes in lockstep, stays right with one block.
    let refused = || {
        let diff_procs: Vec<ProcId> = first
            .order
            .iter()
            .copied()
            .filter(|&p| first.is_diff_proc(p))
            .collect();
        super::tangent::refuse_overlapping_calls(&first, &diff_procs, true).is_err()
    };
    let conflicts = match target {
        Target::Adjoint { .. } if refused() => shared_helper_blocks(&first),
        _ => BTreeSet::new(),
    };
    if !conflicts.is_empty()
        && let Some(separated) = separate_allocation_sites(program, heads, &conflicts)
    {
        let second = analyze(&separated, heads, target);
        // Kept only when it tells more blocks apart: a block shared at one
        // call site (`dot(v, v)`) stays shared in every copy.
        if shared_helper_blocks(&second).len() < conflicts.len() {
            drop(first);
            return analyzed_with_copies(&separated, second, heads, target, f);
        }
    }
    analyzed_with_copies(program, first, heads, target, f)
}

/// `specialize/activity` on `first`, the analyses of `program`.
fn analyzed_with_copies<R>(
    program: &Program,
    first: Analysis<'_>,
    heads: &[Head],
    target: Target,
    f: impl FnOnce(&Analysis<'_>) -> R,
) -> R {
    let mut requests = unsized_dummies(&first, target);
    if requests.is_empty() {
        return f(&first);
    }
    drop(first);
    let mut owned = program.clone();
    let mut copies: HashMap<(ProcId, BTreeSet<usize>), ProcId> = HashMap::new();
    loop {
        let mut progress = false;
        for r in &requests {
            progress |= redirect(&mut owned, &mut copies, r);
        }
        let a = analyze(&owned, heads, target);
        requests = unsized_dummies(&a, target);
        // No progress: the refusal at the call is the answer.
        if requests.is_empty() || !progress || copies.len() >= MAX_COPIES {
            return f(&a);
        }
    }
}

/// A block allocated by a procedure other than the caller, reached by a
/// call through two different formals (or pointers inside what they
/// designate) of a callee that writes through one of them: the caller
/// (where the overlap is seen) and the heap object.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct SharedBlock {
    caller: ProcId,
    block: crate::analysis::locs::Obj,
    allocator: ProcId,
}

/// `specialize/alloc-site`: the heap objects some call reaches through two
/// of its callee's formals, one written, that a helper allocated.
fn shared_helper_blocks(a: &Analysis<'_>) -> BTreeSet<SharedBlock> {
    use crate::analysis::locs::ObjKind;
    let mut out = BTreeSet::new();
    for (&caller, facts) in &a.facts {
        for site in facts.calls.values() {
            let Some(callee) = site.callee else { continue };
            let Some(summary) = a.summaries.get(&callee) else {
                continue;
            };
            // Per formal of the callee, the caller's heap objects its
            // targets stand for, and whether the callee writes them.
            let mut reached: BTreeMap<
                usize,
                (BTreeSet<(crate::analysis::locs::Obj, ProcId)>, bool),
            > = BTreeMap::new();
            for (&z, images) in &site.map {
                let obj = a.locs.zone(z).obj;
                let Some(k) = formal_behind(a, callee, obj) else {
                    continue;
                };
                let entry = reached.entry(k).or_default();
                entry.1 |= summary.writes.contains(&z);
                for &image in images {
                    let o = a.locs.zone(image).obj;
                    if let ObjKind::Heap { proc, .. } = a.locs.object(o).kind
                        && proc != caller
                    {
                        entry.0.insert((o, proc));
                    }
                }
            }
            let formals: Vec<_> = reached.values().collect();
            for (i, (blocks_i, written_i)) in formals.iter().enumerate() {
                for (blocks_j, written_j) in &formals[i + 1..] {
                    if *written_i || *written_j {
                        out.extend(blocks_i.intersection(blocks_j).map(|&(block, allocator)| {
                            SharedBlock {
                                caller,
                                block,
                                allocator,
                            }
                        }));
                    }
                }
            }
        }
    }
    out
}

/// The position of the formal of `callee` through which object `obj`
/// (a `loc/target` of `callee`, perhaps reached through further pointers)
/// is reached; `None` for other objects.
fn formal_behind(
    a: &Analysis<'_>,
    callee: ProcId,
    obj: crate::analysis::locs::Obj,
) -> Option<usize> {
    use crate::analysis::locs::ObjKind;
    let mut obj = obj;
    // Each step goes to the object holding the pointer: a chain, bounded
    // by the number of objects.
    for _ in 0..=a.locs.objects.len() {
        match a.locs.object(obj).kind {
            ObjKind::Target {
                proc: Some(q),
                pointer,
            } if q == callee => obj = a.locs.zone(pointer).obj,
            ObjKind::Var(sym) => {
                return a.program.proc(callee).params.iter().position(|&p| p == sym);
            }
            _ => return None,
        }
    }
    None
}

/// `specialize/alloc-site`: a copy of `program` in which the procedures
/// that allocate the `shared` blocks, and the procedures calling them on
/// the way from the callers that see the blocks shared, have one copy per
/// call site (a call site of a copy being a call site too), so that each
/// call's blocks are objects of their own (`loc/heap` names a block by
/// its allocation statement). Heads, procedures on a cycle of the call
/// graph, and the callers that see the blocks shared (and their own
/// callers) are not copied. `None` when there is nothing to copy.
fn separate_allocation_sites(
    program: &Program,
    heads: &[Head],
    shared: &BTreeSet<SharedBlock>,
) -> Option<Program> {
    let graph = program.call_graph();
    let mut callers: Vec<Vec<ProcId>> = vec![Vec::new(); program.procs.len()];
    for (p, callees) in graph.iter().enumerate() {
        for &c in callees {
            callers[c.index()].push(ProcId(p as u32));
        }
    }
    let upward = |from: &[ProcId]| -> BTreeSet<ProcId> {
        let mut seen: BTreeSet<ProcId> = from.iter().copied().collect();
        let mut work: Vec<ProcId> = from.to_vec();
        while let Some(p) = work.pop() {
            for &c in &callers[p.index()] {
                if seen.insert(c) {
                    work.push(c);
                }
            }
        }
        seen
    };
    let on_cycle = |p: ProcId| super::structure::reenters(&graph, p);
    let seen_shared: Vec<ProcId> = shared.iter().map(|b| b.caller).collect();
    let not_copied = upward(&seen_shared);
    let allocators: Vec<ProcId> = shared.iter().map(|b| b.allocator).collect();
    let copied: BTreeSet<ProcId> = upward(&allocators)
        .into_iter()
        .filter(|&p| {
            !not_copied.contains(&p)
                && !heads.iter().any(|h| h.proc == p)
                && program.proc(p).body.is_some()
                && !on_cycle(p)
        })
        .collect();
    if copied.is_empty() {
        return None;
    }
    let mut owned = program.clone();
    // A procedure of `copied` (or a copy) whose first call site is taken.
    let mut taken: BTreeSet<ProcId> = BTreeSet::new();
    let mut made = 0;
    let mut work: Vec<ProcId> = (0..program.procs.len() as u32).map(ProcId).rev().collect();
    while let Some(caller) = work.pop() {
        let Some(body) = &owned.proc(caller).body else {
            continue;
        };
        let mut sites = Vec::new();
        crate::il::visit_stmts(&body.stmts, &mut |s| {
            if let StmtKind::Call { callee, .. } = &s.kind
                && copied.contains(&owned.specialized.get(callee).copied().unwrap_or(*callee))
            {
                sites.push((s.id, *callee));
            }
        });
        for (stmt, callee) in sites {
            if taken.insert(callee) {
                continue;
            }
            if made >= MAX_COPIES {
                return None;
            }
            let original = owned.specialized.get(&callee).copied().unwrap_or(callee);
            let copy = copy_procedure(&mut owned, callee, original);
            made += 1;
            // This call is the copy's first site; the copy's own calls are
            // new sites of their callees.
            taken.insert(copy);
            work.push(copy);
            let body = owned.procs[caller.index()].body.as_mut()?;
            if let Some(Stmt {
                kind: StmtKind::Call { callee, .. },
                ..
            }) = find_stmt(&mut body.stmts, stmt)
            {
                *callee = copy;
            }
        }
    }
    (made > 0).then_some(owned)
}

fn analyze<'a>(program: &'a Program, heads: &[Head], target: Target) -> Analysis<'a> {
    match target {
        Target::Tangent => analyze_for(program, heads, Mode::Tangent),
        Target::Adjoint { split } => analyze_adjoint(program, heads, split),
    }
}

/// An active call whose arguments at `passive` pass no derivative to a
/// formal with one, where no zero buffer can be sized.
#[derive(Debug)]
struct Request {
    caller: ProcId,
    stmt: StmtId,
    callee: ProcId,
    passive: BTreeSet<usize>,
}

fn unsized_dummies(a: &Analysis<'_>, target: Target) -> Vec<Request> {
    let program = a.program;
    let diff = DiffSets::of(a, &a.order);
    let diff_formal = |p: ProcId, i: usize| {
        let s = program.proc(p).params[i];
        program.contains_real(&program.sym(s).ty.ty)
            && (a.is_diff_formal_arg(p, i) || diff.syms.contains(&s))
    };
    let mut out = Vec::new();
    for &caller in &a.order {
        if !a.is_diff_proc(caller) || program.proc(caller).body.is_none() {
            continue;
        }
        let Some(facts) = a.facts.get(&caller) else {
            continue;
        };
        let mut sites: Vec<_> = facts.calls.iter().collect();
        sites.sort_by_key(|(i, _)| **i);
        for (&i, site) in sites {
            let Some(callee) = site.callee else { continue };
            let stmt = facts.points[i].kind.stmt();
            let StmtKind::Call { args, .. } = &stmt.kind else {
                continue;
            };
            if program.proc(callee).body.is_none() || !a.is_active_call(caller, stmt.id) {
                continue;
            }
            let passive: BTreeSet<usize> = args
                .iter()
                .enumerate()
                .filter(|&(k, e)| {
                    k < program.proc(callee).params.len()
                        && is_address(program, &e.ty)
                        && diff_formal(callee, k)
                        && !diff.is_diff_ref(program, e)
                        && !zero_buffer_sized(program, e, target)
                })
                .map(|(k, _)| k)
                .collect();
            if !passive.is_empty() {
                out.push(Request {
                    caller,
                    stmt: stmt.id,
                    callee,
                    passive,
                });
            }
        }
    }
    out
}

/// Can the mode pass a zero buffer for the pointer argument `e`?
fn zero_buffer_sized(program: &Program, e: &Expr, target: Target) -> bool {
    match target {
        Target::Tangent => super::tangent::dummy_extent(program, e)
            .is_some_and(|t| !super::names::holds_pointer(program, &t.ty, 0)),
        Target::Adjoint { .. } => super::adjoint::pointee_variable(program, e).is_ok(),
    }
}

/// Points the request's call at the copy of its callee for the pattern
/// (made on first use). Returns whether the call changed.
fn redirect(
    program: &mut Program,
    copies: &mut HashMap<(ProcId, BTreeSet<usize>), ProcId>,
    r: &Request,
) -> bool {
    let original = program
        .specialized
        .get(&r.callee)
        .copied()
        .unwrap_or(r.callee);
    // A copy's own pattern is kept: the call passes nothing there either.
    // Keyed by the procedure the pattern applies to: the user's, or a
    // `specialize/alias` copy (whose body differs from the user's).
    let mut base = r.callee;
    let mut pattern = r.passive.clone();
    if let Some(((b, before), _)) = copies.iter().find(|(_, c)| **c == r.callee) {
        base = *b;
        pattern.extend(before.iter().copied());
    }
    let copy = match copies.get(&(base, pattern.clone())) {
        Some(&c) => c,
        None => {
            let c = copy_procedure(program, r.callee, original);
            copies.insert((base, pattern), c);
            c
        }
    };
    if copy == r.callee {
        return false;
    }
    let Some(body) = program.procs[r.caller.index()].body.as_mut() else {
        return false;
    };
    match find_stmt(&mut body.stmts, r.stmt) {
        Some(Stmt {
            kind: StmtKind::Call { callee, .. },
            ..
        }) => {
            *callee = copy;
            true
        }
        _ => false,
    }
}

/// `specialize/alias`: a copy of `program` in which every call giving one
/// address to several pointer formals that can be merged calls a copy of
/// its callee where they are one formal; `None` when no call does.
fn merge_aliased_arguments(program: &Program) -> Option<Program> {
    let mut owned: Option<Program> = None;
    let mut copies: HashMap<(ProcId, Vec<Vec<usize>>), ProcId> = HashMap::new();
    let mut work: Vec<ProcId> = (0..program.procs.len() as u32).map(ProcId).rev().collect();
    while let Some(caller) = work.pop() {
        let current = owned.as_ref().unwrap_or(program);
        let Some(body) = &current.proc(caller).body else {
            continue;
        };
        let mut sites = Vec::new();
        crate::il::visit_stmts(&body.stmts, &mut |s| {
            if let StmtKind::Call { callee, .. } = &s.kind {
                let groups = mergeable_groups(current, s, *callee);
                if !groups.is_empty() {
                    sites.push((s.id, *callee, groups));
                }
            }
        });
        for (stmt, callee, groups) in sites {
            let merged = owned.get_or_insert_with(|| program.clone());
            let key = (callee, groups);
            let copy = match copies.get(&key) {
                Some(&c) => c,
                None if copies.len() >= MAX_COPIES => continue,
                None => {
                    let original = merged.specialized.get(&callee).copied().unwrap_or(callee);
                    let c = copy_procedure(merged, callee, original);
                    merge_formals(merged, c, &key.1);
                    copies.insert(key, c);
                    work.push(c);
                    c
                }
            };
            let body = merged.procs[caller.index()].body.as_mut()?;
            if let Some(Stmt {
                kind: StmtKind::Call { callee, .. },
                ..
            }) = find_stmt(&mut body.stmts, stmt)
            {
                *callee = copy;
            }
        }
    }
    owned
}

/// The groups (two or more positions, in order) of call `s`'s arguments
/// that give `callee` one address through formals it can merge.
fn mergeable_groups(program: &Program, s: &Stmt, callee: ProcId) -> Vec<Vec<usize>> {
    let proc = program.proc(callee);
    let Some(body) = &proc.body else {
        return Vec::new();
    };
    let StmtKind::Call { args, .. } = &s.kind else {
        return Vec::new();
    };
    // The pointee type of each pointer formal; what the body does with the
    // formals is looked at only for a call that gives one address twice.
    let pointee = |k: usize| -> Option<&crate::il::QualType> {
        match &program.sym(*proc.params.get(k)?).ty.ty {
            crate::il::Type::Pointer(t) => Some(t),
            _ => None,
        }
    };
    let certain = std::cell::OnceCell::new();
    let same_address = |i: usize, j: usize| {
        crate::il::validate::same_expr(&address_shape(&args[i]), &address_shape(&args[j]))
            || certain
                .get_or_init(|| super::tangent::overlapping_arguments(s, false))
                .contains(&(i.min(j), i.max(j), true))
    };
    // Formals the body assigns or takes the address of.
    let moved = std::cell::OnceCell::new();
    let fixed = |k: usize| {
        let moved = moved.get_or_init(|| {
            let mut out = super::names::address_taken(&body.stmts);
            crate::il::visit_stmts(&body.stmts, &mut |st| {
                if let Some(Expr {
                    kind: ExprKind::Var(v),
                    ..
                }) = crate::il::stored_ref(st)
                {
                    out.insert(*v);
                }
            });
            out
        });
        !moved.contains(&proc.params[k])
    };
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut grouped = vec![false; args.len()];
    for i in 0..args.len() {
        if grouped[i] {
            continue;
        }
        let Some(ti) = pointee(i) else { continue };
        let group: Vec<usize> = std::iter::once(i)
            .chain((i + 1..args.len()).filter(|&j| {
                !grouped[j]
                    && pointee(j).is_some_and(|tj| tj.ty == ti.ty)
                    && same_address(i, j)
                    && fixed(i)
                    && fixed(j)
            }))
            .collect();
        if group.len() > 1 {
            for &k in &group {
                grouped[k] = true;
            }
            groups.push(group);
        }
    }
    groups
}

/// An address with its types erased (a merged `const` formal leaves its
/// own types on the nodes above it: `i->data` read as `o->data`), and
/// `&e[0]` written `e` (`&y[0]` is `y`, `&A[0][0]` is `A[0]`).
fn address_shape(e: &Expr) -> Expr {
    let mut e = e.clone();
    loop {
        let first_element = match &e.kind {
            ExprKind::AddrOf(r) => match &r.kind {
                ExprKind::Index { base, index }
                    if matches!(index.kind, ExprKind::IntConst { value: 0, .. }) =>
                {
                    Some((**base).clone())
                }
                _ => None,
            },
            _ => None,
        };
        match first_element {
            Some(base) => e = base,
            None => break,
        }
    }
    fn erase(e: &mut Expr) {
        e.ty = crate::il::QualType::void();
        crate::il::children_mut(e, &mut erase);
    }
    erase(&mut e);
    e
}

/// In copy `c`, each group's formals become its first formal through
/// which writes are allowed (its first if none is): the others stay in the
/// signature, unused.
fn merge_formals(program: &mut Program, c: ProcId, groups: &[Vec<usize>]) {
    for group in groups {
        let params = program.proc(c).params.clone();
        let writable = |k: &&usize| match &program.sym(params[**k]).ty.ty {
            crate::il::Type::Pointer(t) => !t.is_const,
            _ => false,
        };
        let kept_at = *group.iter().find(writable).unwrap_or(&group[0]);
        let kept = params[kept_at];
        let kept_ty = program.sym(kept).ty.clone();
        let Some(body) = program.procs[c.index()].body.as_mut() else {
            continue;
        };
        for &k in group.iter().filter(|&&k| k != kept_at) {
            rename_formal(&mut body.stmts, params[k], kept, &kept_ty);
        }
    }
}

/// Renames `from` to `to` in `stmts`, the mentions taking `to`'s type (a
/// `const double *` formal becoming a `double *` one).
fn rename_formal(stmts: &mut [Stmt], from: SymId, to: SymId, ty: &crate::il::QualType) {
    let syms = BTreeMap::from([(from, to)]);
    let scopes = rustc_hash::FxHashMap::default();
    let map = Remap {
        syms: &syms,
        scopes: &scopes,
        retyped: Some((to, ty)),
    };
    map.stmts(stmts);
}

fn find_stmt(stmts: &mut [Stmt], id: StmtId) -> Option<&mut Stmt> {
    for s in stmts {
        if s.id == id {
            return Some(s);
        }
        let found = match &mut s.kind {
            StmtKind::If { then, other, .. } => find_stmt(&mut then.stmts, id)
                .or_else(|| other.as_mut().and_then(|o| find_stmt(&mut o.stmts, id))),
            StmtKind::Loop { header, body } => {
                let in_header = match header {
                    LoopHeader::For { init, step, .. } => {
                        find_stmt(init, id).or_else(|| find_stmt(step, id))
                    }
                    _ => None,
                };
                match in_header {
                    Some(s) => Some(s),
                    None => find_stmt(&mut body.stmts, id),
                }
            }
            StmtKind::Switch { cases, .. } => {
                cases.iter_mut().find_map(|c| find_stmt(&mut c.body, id))
            }
            StmtKind::Block(b) => find_stmt(&mut b.stmts, id),
            _ => None,
        };
        if found.is_some() {
            return found;
        }
    }
    None
}

/// Appends a copy of procedure `p` with its own parameters, locals and
/// scopes (the analyses key memory by symbol), recorded as a copy of
/// `original`.
fn copy_procedure(program: &mut Program, p: ProcId, original: ProcId) -> ProcId {
    let mut proc = program.procs[p.index()].clone();
    // The comments before the header are printed once, with the original.
    proc.comments = Default::default();
    let mut scopes = vec![proc.scope];
    if let Some(b) = &proc.body {
        block_scopes(b, &mut scopes);
    }
    // Only the procedure's own scopes: a block that declares nothing may
    // name an enclosing one.
    let owned_by_proc = |mut s: ScopeId| loop {
        if s == proc.scope {
            return true;
        }
        match program.scopes[s.index()].parent {
            Some(p) => s = p,
            None => return false,
        }
    };
    scopes.retain(|&s| owned_by_proc(s));
    let mut scope_map: rustc_hash::FxHashMap<ScopeId, ScopeId> = Default::default();
    for &s in &scopes {
        scope_map.insert(s, ScopeId(program.scopes.len() as u32));
        program.scopes.push(program.scopes[s.index()].clone());
    }
    let mut sym_map: BTreeMap<SymId, SymId> = BTreeMap::new();
    for i in 0..program.symbols.len() {
        if let Some(&scope) = scope_map.get(&program.symbols[i].scope) {
            let mut sym = program.symbols[i].clone();
            sym.scope = scope;
            sym_map.insert(SymId(i as u32), SymId(program.symbols.len() as u32));
            program.symbols.push(sym);
        }
    }
    for &new in scope_map.values() {
        let scope = &mut program.scopes[new.index()];
        if let Some(parent) = scope.parent.and_then(|s| scope_map.get(&s)) {
            scope.parent = Some(*parent);
        }
        for v in scope.vars.values_mut() {
            if let Some(n) = sym_map.get(v) {
                *v = *n;
            }
        }
    }
    let map = Remap {
        syms: &sym_map,
        scopes: &scope_map,
        retyped: None,
    };
    proc.scope = scope_map[&proc.scope];
    for s in proc.params.iter_mut() {
        *s = map.sym(*s);
    }
    if let Some(b) = proc.body.as_mut() {
        map.block(b);
    }
    for (old, new) in &sym_map {
        if let Some(ty) = program.array_params.get(old).cloned() {
            program.array_params.insert(*new, ty);
        }
    }
    let id = ProcId(program.procs.len() as u32);
    program.procs.push(proc);
    program.specialized.insert(id, original);
    id
}

fn block_scopes(b: &Block, out: &mut Vec<ScopeId>) {
    if !out.contains(&b.scope) {
        out.push(b.scope);
    }
    crate::il::visit_stmts(&b.stmts, &mut |s| match &s.kind {
        StmtKind::If { then, other, .. } => {
            out.push(then.scope);
            if let Some(o) = other {
                out.push(o.scope);
            }
        }
        StmtKind::Loop { body, .. } | StmtKind::Block(body) => out.push(body.scope),
        _ => {}
    });
    out.sort();
    out.dedup();
}

/// Old symbols and scopes of the copied procedure → the copy's.
struct Remap<'m> {
    syms: &'m BTreeMap<SymId, SymId>,
    scopes: &'m rustc_hash::FxHashMap<ScopeId, ScopeId>,
    /// A variable whose mentions take this type.
    retyped: Option<(SymId, &'m crate::il::QualType)>,
}

impl Remap<'_> {
    fn sym(&self, s: SymId) -> SymId {
        self.syms.get(&s).copied().unwrap_or(s)
    }

    fn block(&self, b: &mut Block) {
        if let Some(&s) = self.scopes.get(&b.scope) {
            b.scope = s;
        }
        self.stmts(&mut b.stmts);
    }

    fn stmts(&self, stmts: &mut [Stmt]) {
        for s in stmts {
            self.stmt(s);
        }
    }

    fn stmt(&self, s: &mut Stmt) {
        match &mut s.kind {
            StmtKind::Assign { lhs, rhs, .. } => {
                self.expr(lhs);
                self.expr(rhs);
            }
            StmtKind::Call { result, args, .. } => {
                if let Some(r) = result {
                    self.expr(r);
                }
                args.iter_mut().for_each(|a| self.expr(a));
            }
            StmtKind::Decl { vars, .. } => {
                for v in vars {
                    v.sym = self.sym(v.sym);
                    if let Some(init) = &mut v.init {
                        self.init(init);
                    }
                }
            }
            StmtKind::Alloc {
                target,
                count,
                form,
                ..
            } => {
                self.expr(target);
                self.expr(count);
                match form {
                    AllocForm::Malloc { bytes, .. } => self.expr(bytes),
                    AllocForm::Calloc { count, size, .. } => {
                        self.expr(count);
                        self.expr(size);
                    }
                }
            }
            StmtKind::Free { ptr } => self.expr(ptr),
            StmtKind::If { cond, then, other } => {
                self.expr(cond);
                self.block(then);
                if let Some(o) = other {
                    self.block(o);
                }
            }
            StmtKind::Loop { header, body } => {
                match header {
                    LoopHeader::For { init, cond, step } => {
                        self.stmts(init);
                        if let Some(c) = cond {
                            self.expr(c);
                        }
                        self.stmts(step);
                    }
                    LoopHeader::While { cond } | LoopHeader::DoWhile { cond } => self.expr(cond),
                }
                self.block(body);
            }
            StmtKind::Switch { selector, cases } => {
                self.expr(selector);
                for c in cases {
                    for l in c.labels.iter_mut().flatten() {
                        self.expr(l);
                    }
                    self.stmts(&mut c.body);
                }
            }
            StmtKind::Return(Some(e)) | StmtKind::Discard(e) => self.expr(e),
            StmtKind::Block(b) => self.block(b),
            StmtKind::Return(None) | StmtKind::Break | StmtKind::Continue | StmtKind::Empty => {}
        }
    }

    fn init(&self, init: &mut Init) {
        match init {
            Init::Expr(e) => self.expr(e),
            Init::List(items, _) => items.iter_mut().for_each(|i| self.init(i)),
        }
    }

    fn expr(&self, e: &mut Expr) {
        match &mut e.kind {
            ExprKind::Var(s) => {
                *s = self.sym(*s);
                if let Some((v, ty)) = self.retyped
                    && *s == v
                {
                    e.ty = ty.clone();
                }
            }
            ExprKind::Index { base, index } => {
                self.expr(base);
                self.expr(index);
            }
            ExprKind::Field { base, .. } => self.expr(base),
            ExprKind::Deref(x) | ExprKind::AddrOf(x) | ExprKind::SizeOfExpr(x) => self.expr(x),
            ExprKind::Unary { arg, .. } | ExprKind::Cast { arg, .. } => self.expr(arg),
            ExprKind::Binary { lhs, rhs, .. } => {
                self.expr(lhs);
                self.expr(rhs);
            }
            ExprKind::Intrinsic { args, .. } => args.iter_mut().for_each(|a| self.expr(a)),
            ExprKind::Cond { cond, then, other } => {
                self.expr(cond);
                self.expr(then);
                self.expr(other);
            }
            _ => {}
        }
    }
}

/// The copies of `p` (`specialize/activity`), in the order they were made.
pub(crate) fn copies_of(program: &Program, p: ProcId) -> Vec<ProcId> {
    program
        .specialized
        .iter()
        .filter(|(_, o)| **o == p)
        .map(|(c, _)| *c)
        .collect()
}

/// Calls to a copy's primal in the bodies of `procs` call the original:
/// the output defines no copy's primal (the original translation unit
/// has the original).
pub(crate) fn call_originals(out: &mut Program, procs: &[ProcId]) {
    if out.specialized.is_empty() {
        return;
    }
    let originals = out.specialized.clone();
    for &p in procs {
        if let Some(b) = out.procs[p.index()].body.as_mut() {
            each_stmt_mut(&mut b.stmts, &mut |s| {
                if let StmtKind::Call { callee, .. } = &mut s.kind
                    && let Some(&o) = originals.get(callee)
                {
                    *callee = o;
                }
            });
        }
    }
}

pub(crate) fn each_stmt_mut(stmts: &mut [Stmt], f: &mut impl FnMut(&mut Stmt)) {
    for s in stmts {
        f(s);
        match &mut s.kind {
            StmtKind::If { then, other, .. } => {
                each_stmt_mut(&mut then.stmts, f);
                if let Some(o) = other {
                    each_stmt_mut(&mut o.stmts, f);
                }
            }
            StmtKind::Loop { header, body } => {
                if let LoopHeader::For { init, step, .. } = header {
                    each_stmt_mut(init, f);
                    each_stmt_mut(step, f);
                }
                each_stmt_mut(&mut body.stmts, f);
            }
            StmtKind::Switch { cases, .. } => {
                for c in cases {
                    each_stmt_mut(&mut c.body, f);
                }
            }
            StmtKind::Block(b) => each_stmt_mut(&mut b.stmts, f),
            _ => {}
        }
    }
}
