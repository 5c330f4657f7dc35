//! Transformations driven by the rules: tangent mode (this issue), adjoint
//! mode (next).

/// A bundled rule file: (its path, its text), embedded at build time so the
/// tool works from anywhere.
macro_rules! rule_file {
    ($p:literal) => {
        (
            $p.to_string(),
            include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/", $p)).to_string(),
        )
    };
}

pub mod adjoint;
pub mod checkpoint;
pub mod keep;

use crate::il::{ExprKind, Item, ItemKind, ProcId, Program, ScopeId, StmtKind, SymId};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

/// `output/merge-copies`: among `generated` (each derivative procedure
/// with the user's procedure it derives from, through any copy of it, and
/// its role: `f_fwd` and `f_bwd` are not merged, though both may be
/// empty), one derivative whose code is the same as an earlier one's of
/// the same user procedure and role, up to its own name (copies made for separate
/// allocation sites often come out alike), is dropped from `items` and its
/// calls call the earlier one. Repeated until nothing changes, so a caller
/// whose callees were merged can merge in turn.
pub(crate) fn merge_identical_copies(
    out: &mut Program,
    items: &mut Vec<Item>,
    generated: &[(ProcId, ProcId, u8)],
) {
    // Only a procedure with two derivatives in one role can merge; the
    // shapes (printing) are computed for those alone.
    let mut family_size: HashMap<(ProcId, u8), usize> = HashMap::default();
    for &(_, user, role) in generated {
        *family_size.entry((user, role)).or_default() += 1;
    }
    let candidates: HashMap<ProcId, (ProcId, u8)> = generated
        .iter()
        .filter(|&&(_, user, role)| family_size[&(user, role)] > 1)
        .map(|&(d, user, role)| (d, (user, role)))
        .collect();
    if candidates.is_empty() {
        return;
    }
    let mut merged: HashMap<ProcId, ProcId> = HashMap::default();
    loop {
        let present: HashSet<ProcId> = items
            .iter()
            .filter_map(|i| match i.kind {
                ItemKind::Function(p) => Some(p),
                _ => None,
            })
            .collect();
        let mut first: HashMap<(ProcId, u8, String), ProcId> = HashMap::default();
        let mut now: HashMap<ProcId, ProcId> = HashMap::default();
        // In the order of the output, so the one kept is the first printed.
        for item in items.iter() {
            let ItemKind::Function(d) = item.kind else {
                continue;
            };
            let Some(&(user, role)) = candidates.get(&d) else {
                continue;
            };
            if !present.contains(&d) || merged.contains_key(&d) {
                continue;
            }
            let name = std::mem::take(&mut out.procs[d.index()].name);
            let shape = crate::back::sexpr::procedure_shape(out, d);
            out.procs[d.index()].name = name;
            match first.entry((user, role, shape)) {
                std::collections::hash_map::Entry::Occupied(kept) => {
                    now.insert(d, *kept.get());
                }
                std::collections::hash_map::Entry::Vacant(v) => {
                    v.insert(d);
                }
            }
        }
        if now.is_empty() {
            return;
        }
        for p in &mut out.procs {
            if let Some(b) = p.body.as_mut() {
                specialize::each_stmt_mut(&mut b.stmts, &mut |s| {
                    if let StmtKind::Call { callee, .. } = &mut s.kind
                        && let Some(&kept) = now.get(callee)
                    {
                        *callee = kept;
                    }
                });
            }
        }
        items.retain(|i| {
            !matches!(i.kind, ItemKind::Function(p) | ItemKind::Prototype(p) if now.contains_key(&p))
        });
        merged.extend(now);
    }
}

/// The procedures the generated ones `roots` call or mention, directly or
/// through the `static` ones among them (`il/callgraph`): the output copies
/// the `static` ones. An original non-static function is the original
/// translation unit's, so what it calls is not followed.
pub(crate) fn reached_from(out: &Program, roots: impl Iterator<Item = ProcId>) -> HashSet<ProcId> {
    let graph = out.use_graph();
    let mut needed: HashSet<ProcId> = HashSet::default();
    let mut stack: Vec<ProcId> = roots.collect();
    while let Some(p) = stack.pop() {
        for &c in graph.get(p.index()).into_iter().flatten() {
            if needed.insert(c) && out.proc(c).storage == crate::il::Storage::Static {
                stack.push(c);
            }
        }
    }
    needed
}

/// `tangent/names`: a parameter or local of a generated procedure that
/// bears the name of a function the procedure calls (`double cos = 2.0;`
/// beside the derivative's `cos(x)`, a parameter `exp` beside `erf`'s
/// partial) would hide that function: it is renamed `cos0`, `cos1`, …,
/// with its derivative's name unchanged. The original called none of
/// those functions where the name was visible, so only generated code
/// can meet the clash.
pub(crate) fn unshadow_called_functions(out: &mut Program) {
    use crate::il::{ExprKind, Stmt, visit_expr};
    /// The (name, scope) pairs where a function of that name is called
    /// with that scope visible, walking with the scopes open at each point.
    fn calls(
        out: &Program,
        stmts: &[Stmt],
        open: &mut Vec<ScopeId>,
        seen: &mut HashSet<(String, ScopeId)>,
    ) {
        for st in stmts {
            let mut names: Vec<String> = Vec::new();
            match &st.kind {
                StmtKind::Call { callee, .. } => names.push(out.proc(*callee).name.clone()),
                StmtKind::Alloc { .. } => names.extend(["malloc", "calloc"].map(String::from)),
                StmtKind::Free { .. } => names.push("free".into()),
                _ => {}
            }
            for e in names::stmt_exprs(st) {
                visit_expr(e, &mut |x| {
                    if let ExprKind::Intrinsic { call, .. } = &x.kind {
                        names.push(call.spelling().to_string());
                    }
                });
            }
            for n in names {
                seen.extend(open.iter().map(|&s| (n.clone(), s)));
            }
            let nested = |b: &crate::il::Block,
                          open: &mut Vec<ScopeId>,
                          seen: &mut HashSet<(String, ScopeId)>| {
                open.push(b.scope);
                calls(out, &b.stmts, open, seen);
                open.pop();
            };
            match &st.kind {
                StmtKind::Block(b) => nested(b, open, seen),
                StmtKind::If { then, other, .. } => {
                    nested(then, open, seen);
                    if let Some(o) = other {
                        nested(o, open, seen);
                    }
                }
                StmtKind::Loop { header, body } => {
                    open.push(body.scope);
                    if let crate::il::LoopHeader::For { init, step, .. } = header {
                        calls(out, init, open, seen);
                        calls(out, step, open, seen);
                    }
                    calls(out, &body.stmts, open, seen);
                    open.pop();
                }
                StmtKind::Switch { cases, .. } => {
                    for c in cases {
                        calls(out, &c.body, open, seen);
                    }
                }
                _ => {}
            }
        }
    }
    let mut taken: HashSet<String> = out.symbols.iter().map(|s| s.name.clone()).collect();
    taken.extend(out.procs.iter().map(|p| p.name.clone()));
    for p in (0..out.procs.len()).map(|i| ProcId(i as u32)) {
        let Some(body) = &out.proc(p).body else {
            continue;
        };
        let mut seen: HashSet<(String, ScopeId)> = HashSet::default();
        let mut open = vec![out.proc(p).scope, body.scope];
        calls(out, &body.stmts, &mut open, &mut seen);
        let mut own: Vec<SymId> = out.proc(p).params.clone();
        crate::il::visit_stmts(&body.stmts, &mut |st| {
            if let StmtKind::Decl { vars, .. } = &st.kind {
                own.extend(vars.iter().map(|d| d.sym));
            }
        });
        for s in own {
            let sym = &out.symbols[s.index()];
            if !seen.contains(&(sym.name.clone(), sym.scope)) {
                continue;
            }
            let name = sym.name.clone();
            let fresh = (0..)
                .map(|k| format!("{name}{k}"))
                .find(|n| !taken.contains(n))
                .expect("an unused name");
            taken.insert(fresh.clone());
            out.symbols[s.index()].name = fresh;
        }
    }
}

/// Drops the user's prototypes of `static` functions the output does not
/// define (a forward declaration for mutual recursion): C warns about a
/// `static` function declared and never defined.
pub(crate) fn drop_undefined_static_prototypes(out: &Program, items: &mut Vec<Item>) {
    let defined: HashSet<ProcId> = items
        .iter()
        .filter_map(|i| match i.kind {
            ItemKind::Function(p) => Some(p),
            _ => None,
        })
        .collect();
    items.retain(|i| match i.kind {
        ItemKind::Prototype(p) => {
            out.proc(p).storage != crate::il::Storage::Static || defined.contains(&p)
        }
        _ => true,
    });
}

/// Drops the output's copies of `static` globals that none of its
/// functions or other globals' initialisers mention (a counter only a
/// dropped passive statement updated): C warns about an unused `static`
/// variable, and the output must compile without warnings.
pub(crate) fn drop_unused_static_globals(out: &Program, items: &mut Vec<Item>) {
    let mut used: HashSet<crate::il::SymId> = HashSet::default();
    let mut note = |e: &crate::il::Expr| {
        crate::il::visit_expr(e, &mut |x| {
            if let crate::il::ExprKind::Var(v) = &x.kind {
                used.insert(*v);
            }
        })
    };
    for item in items.iter() {
        match &item.kind {
            ItemKind::Function(p) => {
                if let Some(b) = &out.proc(*p).body {
                    crate::il::visit_stmts(&b.stmts, &mut |s| {
                        crate::il::stmt_exprs(s).into_iter().for_each(&mut note);
                    });
                }
            }
            ItemKind::Globals { vars, .. } => {
                for i in vars.iter().filter_map(|v| v.init.as_ref()) {
                    crate::il::visit_init(i, &mut note);
                }
            }
            _ => {}
        }
    }
    items.retain(|i| match &i.kind {
        ItemKind::Globals {
            storage: crate::il::Storage::Static,
            vars,
            ..
        } if i.file == out.main_file => vars.iter().any(|v| used.contains(&v.sym)),
        _ => true,
    });
}

/// Mutual recursion: a generated procedure called before its definition
/// gets a prototype in front of the first generated definition.
pub(crate) fn declare_before_use(
    out: &Program,
    generated: &HashSet<ProcId>,
    items: &mut Vec<Item>,
) {
    let mut defined = HashSet::default();
    let mut early = Vec::new();
    for item in items.iter() {
        let ItemKind::Function(p) = item.kind else {
            continue;
        };
        if !generated.contains(&p) {
            continue;
        }
        defined.insert(p);
        if let Some(b) = &out.proc(p).body {
            crate::il::visit_stmts(&b.stmts, &mut |s| {
                if let StmtKind::Call { callee, .. } = &s.kind
                    && generated.contains(callee)
                    && !defined.contains(callee)
                    && !early.contains(callee)
                {
                    early.push(*callee);
                }
            });
        }
    }
    let Some(at) = items
        .iter()
        .position(|i| matches!(i.kind, ItemKind::Function(p) if generated.contains(&p)))
    else {
        return;
    };
    let template = items[at].clone();
    let protos: Vec<Item> = early
        .into_iter()
        .map(|p| Item {
            kind: ItemKind::Prototype(p),
            comments: Default::default(),
            ..template.clone()
        })
        .collect();
    items.splice(at..at, protos);
}
/// The definition of a derivative global (one of `owned`) that comes after
/// a generated procedure using it moves up to just before that procedure:
/// the derivative of a `static inline` helper of a header is placed at the
/// `#include`, ahead of the main file's globals (`tangent/output`).
pub(crate) fn define_globals_before_use(
    out: &Program,
    generated: &HashSet<ProcId>,
    owned: &HashSet<SymId>,
    items: &mut Vec<Item>,
) {
    // Each move takes an item up past at least one procedure, so this ends.
    loop {
        let mut defined_at: HashMap<SymId, usize> = HashMap::default();
        for (j, item) in items.iter().enumerate() {
            if let ItemKind::Globals { vars, .. } = &item.kind {
                for v in vars.iter().filter(|v| owned.contains(&v.sym)) {
                    defined_at.insert(v.sym, j);
                }
            }
        }
        // Only a procedure before the last such definition can come too
        // early: most outputs define every derivative global before any
        // procedure, and nothing is scanned.
        let Some(&last) = defined_at.values().max() else {
            return;
        };
        let first_late = items[..last].iter().enumerate().find_map(|(i, item)| {
            let ItemKind::Function(p) = item.kind else {
                return None;
            };
            let body = out
                .proc(p)
                .body
                .as_ref()
                .filter(|_| generated.contains(&p))?;
            let mut late: Option<usize> = None;
            crate::il::visit_stmts(&body.stmts, &mut |s| {
                for e in crate::il::stmt_exprs(s) {
                    crate::il::visit_expr(e, &mut |x| {
                        if let ExprKind::Var(v) = x.kind
                            && let Some(&j) = defined_at.get(&v)
                            && j > i
                        {
                            late = Some(late.map_or(j, |l| l.min(j)));
                        }
                    });
                }
            });
            late.map(|j| (i, j))
        });
        let Some((user, definition)) = first_late else {
            return;
        };
        let item = items.remove(definition);
        items.insert(user, item);
    }
}

/// `output/defining-headers`: a local header the main file includes that
/// defines something with external linkage (`double beta = 1.5;`, a
/// non-`static`, non-`inline` function) cannot be included by the output
/// too, whose link with the original would define it twice. Its items are
/// taken as the main file's, where its `#include` stood: the output then
/// declares its globals `extern` and its functions by prototype, as it does
/// the main file's. `None` when no such header is included.
pub(crate) fn expand_defining_headers(program: &Program) -> Option<Program> {
    use crate::il::Storage;
    let main = program.main_file;
    let direct: HashSet<crate::front::source::FileId> = program
        .items
        .iter()
        .filter(|i| i.file == main)
        .filter_map(|i| match i.kind {
            ItemKind::LocalInclude { file, .. } => Some(file),
            _ => None,
        })
        .collect();
    let defining: HashSet<crate::front::source::FileId> = program
        .items
        .iter()
        .filter(|i| direct.contains(&i.file))
        .filter(|i| match &i.kind {
            ItemKind::Function(p) => {
                let proc = program.proc(*p);
                proc.storage != Storage::Static && !proc.is_inline
            }
            ItemKind::Globals { storage, .. } => *storage == Storage::Auto,
            _ => false,
        })
        .map(|i| i.file)
        .collect();
    if defining.is_empty() {
        return None;
    }
    let mut out = program.clone();
    out.items.retain(
        |i| !matches!(i.kind, ItemKind::LocalInclude { file, .. } if i.file == main && defining.contains(&file)),
    );
    for item in &mut out.items {
        if defining.contains(&item.file) {
            item.file = main;
        }
    }
    Some(out)
}

pub mod names;
pub mod recurrence;
pub mod share;
pub mod specialize;
pub mod structure;
pub mod tangent;
pub mod varied;
pub mod vector;

/// A non-inline `static` function defined in a user header that the
/// output includes but no longer calls (its derivative took its place)
/// would make C warn that it is unused; a generated procedure (an
/// exported one if it can, as the head's derivative reads best) names it
/// in `(void)name;` (`tangent/output`, `adjoint/output`). The
/// original translation unit calls it, so it has no such warning.
pub(crate) fn mention_uncalled_header_statics(
    out: &mut Program,
    generated: &HashSet<ProcId>,
    items: &[Item],
) {
    let mut called: HashSet<ProcId> = HashSet::default();
    for item in items {
        if let ItemKind::Function(p) = item.kind
            && let Some(b) = &out.proc(p).body
        {
            crate::il::visit_stmts(&b.stmts, &mut |s| {
                if let StmtKind::Call { callee, .. } = &s.kind {
                    called.insert(*callee);
                }
            });
        }
    }
    // The output's item list leaves out the header's uncalled statics; the
    // original's (still `out.items` here) has them.
    let uncalled: Vec<ProcId> = out
        .items
        .iter()
        .filter_map(|item| match item.kind {
            ItemKind::Function(p) if item.file != out.main_file => Some(p),
            _ => None,
        })
        .filter(|&p| {
            let proc = out.proc(p);
            proc.storage == crate::il::Storage::Static
                && !proc.is_inline
                && proc.body.is_some()
                && !called.contains(&p)
        })
        .collect();
    let mut mentioned: std::collections::HashMap<ProcId, usize> = Default::default();
    for p in uncalled {
        let (name, span) = (out.proc(p).name.clone(), out.proc(p).span);
        // At the top of the body only a parameter can hide the function
        // (`hsq_d` has its primal result pointer `double *hsq`).
        let hosts: Vec<ProcId> = items
            .iter()
            .filter_map(|i| match i.kind {
                ItemKind::Function(g)
                    if generated.contains(&g)
                        && out.proc(g).params.iter().all(|&x| out.sym(x).name != name) =>
                {
                    Some(g)
                }
                _ => None,
            })
            .collect();
        let Some(&host) = hosts
            .iter()
            .find(|&&g| out.proc(g).storage != crate::il::Storage::Static)
            .or(hosts.first())
        else {
            continue;
        };
        let at = *mentioned.entry(host).or_insert(0);
        mentioned.insert(host, at + 1);
        let cast = out.mention_function(&name, span);
        let proc = &mut out.procs[host.index()];
        let id = crate::il::StmtId(proc.stmt_count);
        proc.stmt_count += 1;
        if let Some(body) = &mut proc.body {
            body.stmts.insert(
                at,
                crate::il::Stmt {
                    id,
                    kind: StmtKind::Discard(cast),
                    span,
                    comments: Default::default(),
                },
            );
        }
    }
}

/// `ptr/global-init`: the initialiser of a derivative global pointer,
/// designating the derivative of what the original's initialiser
/// designates (`double *wd = wkd;` for `double *w = wk;`, `&accd` for
/// `&acc`, `&matd[2]` for `&mat[2]`), when that is a global with a
/// derivative reached without a struct member; `None` otherwise (the
/// derivative pointer then starts null).
pub(crate) fn derivative_pointer_init(
    program: &crate::il::Program,
    out: &crate::il::Program,
    original: crate::il::SymId,
    derivative_of: &dyn Fn(crate::il::SymId) -> Option<crate::il::SymId>,
) -> Option<crate::il::Init> {
    use crate::il::{ExprKind, Init};
    fn subst(
        e: &crate::il::Expr,
        out: &crate::il::Program,
        derivative_of: &dyn Fn(crate::il::SymId) -> Option<crate::il::SymId>,
    ) -> Option<crate::il::Expr> {
        let mut d = e.clone();
        match &mut d.kind {
            ExprKind::Var(s) => {
                let ds = derivative_of(*s)?;
                *s = ds;
                d.ty = out.sym(ds).ty.clone();
            }
            ExprKind::AddrOf(r) => **r = subst(r, out, derivative_of)?,
            ExprKind::Index { base, .. } => **base = subst(base, out, derivative_of)?,
            ExprKind::Cast { arg, .. } => **arg = subst(arg, out, derivative_of)?,
            ExprKind::Binary { lhs, .. } => **lhs = subst(lhs, out, derivative_of)?,
            _ => return None,
        }
        Some(d)
    }
    if !matches!(
        program.resolve(&program.sym(original).ty.ty),
        crate::il::Type::Pointer(_)
    ) {
        return None;
    }
    let Init::Expr(e) = global_initializer(program, original)? else {
        return None;
    };
    subst(e, out, derivative_of).map(Init::Expr)
}

/// `ptr/global-init`: the globals with a derivative that the given
/// derivative-carrying global pointers are initialised with (`wk` for
/// `double *w = wk;`): their derivatives must exist for `wd = wkd`.
pub(crate) fn initialiser_roots(
    a: &crate::analysis::Analysis<'_>,
    diff: &names::DiffSets,
    pointers: impl Iterator<Item = crate::il::SymId>,
) -> Vec<crate::il::SymId> {
    pointers
        .filter_map(|p| a.locs.initial_variable(p))
        .filter(|root| diff.syms.contains(root))
        .collect()
}

/// The initialiser of a global variable's definition, if any.
fn global_initializer(
    program: &crate::il::Program,
    global: crate::il::SymId,
) -> Option<&crate::il::Init> {
    program.items.iter().find_map(|item| match &item.kind {
        crate::il::ItemKind::Globals { vars, .. } => vars
            .iter()
            .find(|v| v.sym == global)
            .and_then(|v| v.init.as_ref()),
        _ => None,
    })
}
