//! Tangent mode (`spec/tangent.md`): the rules of `rules/tangent/*.rules`
//! applied to the IL by the engine, with this module as their host.
//!
//! The host shows IL nodes to the rules as terms (`tangent/terms`), answers their guards from the analyses, and builds the IL the
//! rules' templates describe: derivative variables and procedures, typed
//! expressions, statements with provenance. Then it assembles the output
//! translation unit (`tangent/output`): the original's types and
//! declarations, derivative types and globals, and one `f_d` per
//! differentiated procedure.

use super::names::{DiffSets, DiffTypes, Namer, is_pointer};
use super::varied::VariedMap;
use crate::analysis::Analysis;
use crate::analysis::blocks::Set;
use crate::analysis::head::Head;
use crate::analysis::locs::{ObjKind, Zone};
use crate::engine::{self, ApplyError, Host, RuleSet, Tmpl, View};
use crate::front::diag::Diagnostic;
use crate::front::source::{SourceMap, Span};
use crate::il::{
    AssignSugar, BinOp, Block, Declarator, Expr, ExprKind, Init, Intrinsic, Item, ItemKind,
    LoopHeader, MathFn, ProcId, ProcOrigin, Procedure, Program, QualType, RealKind, ScopeId, Stmt,
    StmtId, StmtKind, Storage, StructDef, SwitchCase, SymId, SymKind, Symbol, Type, TypedefDef,
    UnOp,
};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

/// Options of `aioli tangent`.
#[derive(Clone, Debug)]
pub struct TangentOptions {
    /// Write each emitted statement's rule ID as a trailing comment.
    pub explain: bool,
    /// Leave derivatives that become zero implicit (§4.6), resetting them
    /// before control merges; off: every derivative is kept explicit.
    pub implicit_zero: bool,
    /// Extra rule files (a user's `--rules`), after the bundled ones.
    pub user_rules: Vec<(String, String)>,
}

impl Default for TangentOptions {
    fn default() -> Self {
        TangentOptions {
            explain: false,
            implicit_zero: true,
            user_rules: Vec::new(),
        }
    }
}

/// The bundled rule files, embedded so the tool works from anywhere.
pub fn bundled_rules() -> Vec<(String, String)> {
    vec![
        rule_file!("rules/tangent/procedure.rules"),
        rule_file!("rules/tangent/control.rules"),
        rule_file!("rules/tangent/assign.rules"),
        rule_file!("rules/tangent/call.rules"),
        rule_file!("rules/tangent/expr.rules"),
        rule_file!("rules/derivatives.rules"),
    ]
}

/// Loads the bundled rules and the user's.
pub fn load_rules(opts: &TangentOptions) -> Result<RuleSet, engine::RuleError> {
    let mut files = bundled_rules();
    files.extend(opts.user_rules.iter().cloned());
    RuleSet::load(&files)
}

/// Differentiates `program` for `heads` in tangent mode; returns the C text
/// of the output file.
pub fn tangent(
    program: &Program,
    sources: &SourceMap,
    heads: &[Head],
    rules: &RuleSet,
    opts: &TangentOptions,
) -> Result<String, Diagnostic> {
    let out =
        super::specialize::analyzed(program, heads, super::specialize::Target::Tangent, |a| {
            tangent_program(a, rules, opts)
        })?;
    Ok(crate::back::print_c(&out, sources))
}

/// The output program of the tangent mode (exposed for tests that run it
/// in the interpreter).
pub fn tangent_program(
    a: &Analysis<'_>,
    rules: &RuleSet,
    opts: &TangentOptions,
) -> Result<Program, Diagnostic> {
    tangent_trace(a, rules, opts).map(|(p, _)| p)
}

/// The output program and the IDs of every rule and derivative entry that
/// built it (for coverage tests and audits).
pub fn tangent_trace(
    a: &Analysis<'_>,
    rules: &RuleSet,
    opts: &TangentOptions,
) -> Result<(Program, std::collections::BTreeSet<String>), Diagnostic> {
    tangent_full(a, rules, opts).map(|(p, t, _)| (p, t))
}

/// What the tangent transformation created, for later passes (the vector
/// mode) that rewrite derivative code.
#[derive(Clone, Debug, Default)]
pub struct TangentInfo {
    /// Original variable → its derivative variable (locals, parameters,
    /// globals, and the made-up zero dummies map to themselves).
    pub derivative_of: HashMap<SymId, SymId>,
    /// Every derivative variable (including dummies and zero temporaries).
    pub derivative_syms: HashSet<SymId>,
    /// Original procedure → its tangent procedure.
    pub procs: HashMap<ProcId, ProcId>,
    /// Tangent procedure → the parameter receiving the original result.
    pub result_params: HashMap<ProcId, SymId>,
    /// Original struct → derivative struct.
    pub structs: HashMap<crate::il::StructId, crate::il::StructId>,
}

/// `warn/alias`, the certain case refused in both modes: an active call
/// whose arguments designate the same memory the callee writes through.
/// The callee was analysed as if they were distinct, so its derivative
/// would be wrong.
///
/// With `same_base` (the adjoint mode), two arguments into the same
/// variable at different or unknown offsets (`shift(a, a + 1, n)`) count
/// too: the backward sweep reads values the callee's analysis believed no
/// write through the other argument could change, so they were not saved.
/// The tangent follows the original's reads and writes in lockstep and
/// stays right there.
pub(crate) fn refuse_overlapping_calls(
    a: &Analysis<'_>,
    diff_procs: &[ProcId],
    same_base: bool,
) -> Result<(), Diagnostic> {
    let program = a.program;
    // `warn/alias` at an active call where two arguments are certainly the
    // same address (`f(y, &y[0])`): the callee was analysed as if they did
    // not overlap, so its derivative would be wrong. Refused. A may-alias
    // that the pointer analysis cannot rule out (buffers swapped in a
    // loop) stays a warning.
    for &p in diff_procs {
        let Some(f) = a.facts.get(&p) else { continue };
        for (&i, site) in &f.calls {
            let stmt = f.points[i].kind.stmt();
            let Some(callee) = site.callee else { continue };
            // Overlap matters only if the callee writes through one of the
            // overlapping arguments (`mul(c, x, x)` only reads x twice).
            let writes_through =
                |k: usize| writes_through_formal(a, callee, k).is_some_and(|w| !w.is_empty());
            // A formal only ever used as `*p` designates one element
            // (`loc/target`, not an atom): two such formals overlap only
            // at the same address (`rotate(&x[0], &x[n - 1])` with n > 1
            // does not), a may-alias left to `warn/alias`; a formal the
            // callee indexes reaches neighbouring elements too.
            let indexed = |k: usize| {
                let Some(&formal) = program.proc(callee).params.get(k) else {
                    return true;
                };
                let o = a.locs.of_sym(formal);
                program.proc(callee).body.is_none()
                    || a.locs.object_zones(o).any(|z| {
                        a.locs
                            .target(callee, z)
                            .is_none_or(|t| a.locs.object_zones(t).any(|tz| a.locs.zone(tz).atom))
                    })
            };
            // `specialize/alias`: a formal the callee never mentions (one
            // merged into another) gives no access.
            let mentioned = |k: usize| formal_mentioned(program, callee, k);
            if a.is_active_call(p, stmt.id)
                && overlapping_arguments(stmt, same_base)
                    .into_iter()
                    .filter(|&(i, j, _)| mentioned(i) && mentioned(j))
                    .filter(|&(i, j, certain)| certain || indexed(i) || indexed(j))
                    // `alias/disjoint-slices`: `axpy(n, a, &w[0], &w[n])`.
                    .filter(|&(i, j, certain)| {
                        certain
                            || !crate::analysis::footprint::disjoint_arguments(
                                program, p, stmt, i, j,
                            )
                    })
                    .any(|(i, j, _)| writes_through(i) || writes_through(j))
            {
                return Err(Diagnostic::error(
                    stmt.span,
                    format!(
                        "two arguments of '{}' may designate the same memory; this call is active, \
                         and aioli does not differentiate calls whose arguments overlap (pass \
                         separate buffers, or copy one argument first)",
                        program.proc(callee).name
                    ),
                ));
            }
            // Adjoint: two pointers that each designate one and the same
            // variable that is not an array (`double *p = &t, *q = &t;
            // cp(p, q)`): the same address, though spelled apart, which
            // `specialize/alias` cannot see.
            if same_base
                && a.is_active_call(p, stmt.id)
                && let Some((i, j)) = same_single_place(a, site, &mentioned, &writes_through)
            {
                return Err(Diagnostic::error(
                    stmt.span,
                    format!(
                        "arguments {} and {} of '{}' designate the same variable through different \
                         pointers; this call is active, and the adjoint of '{}' was built as if \
                         they did not overlap (pass the same pointer twice, which aioli merges, \
                         or copy one first)",
                        i + 1,
                        j + 1,
                        program.proc(callee).name,
                        program.proc(callee).name
                    ),
                ));
            }
            // The formal whose pointee is `t`, if one is.
            let formal_of = |t: crate::analysis::locs::Obj| {
                program.proc(callee).params.iter().position(|&formal| {
                    a.locs
                        .object_zones(a.locs.of_sym(formal))
                        .any(|z| a.locs.target(callee, z) == Some(t))
                })
            };
            if same_base
                && a.is_active_call(p, stmt.id)
                && let Some((t1, t2)) = aliased_targets(a, callee, site)
                // `alias/disjoint-slices`, for two formals.
                && !matches!((formal_of(t1), formal_of(t2)), (Some(i), Some(j))
                    if crate::analysis::footprint::disjoint_arguments(program, p, stmt, i, j))
            {
                return Err(Diagnostic::error(
                    stmt.span,
                    format!(
                        "'{}' reaches the same memory through '{}' and '{}' (the pointers it is \
                         given may designate one array: aioli tells two parts of one block \
                         apart only when the call itself passes them as slices it can \
                         compare, such as `&a[0]` and `&a[n]` with the callee's extents); \
                         this call is active, and the adjoint of '{}' was built as if they \
                         did not overlap (pass the slices in the call, give it separate \
                         buffers, or copy one first)",
                        program.proc(callee).name,
                        a.locs.object(t1).name,
                        a.locs.object(t2).name,
                        program.proc(callee).name
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Two pointer arguments of a call, both `mentioned` by the callee and
/// one of them `written` through, that each designate exactly one place,
/// the same, of a variable that is not an array (nor inside one).
fn same_single_place(
    a: &Analysis<'_>,
    site: &crate::analysis::facts::CallSite,
    mentioned: &dyn Fn(usize) -> bool,
    written: &dyn Fn(usize) -> bool,
) -> Option<(usize, usize)> {
    let single = |k: usize| match site.arg_places.get(k).map(Vec::as_slice) {
        Some(&[place]) => {
            let (o, _) = a.locs.place(place)?;
            let whole_scalar = matches!(a.locs.object(o).kind, ObjKind::Var(_))
                && a.locs
                    .place_zones(place)
                    .iter()
                    .all(|&z| !a.locs.zone(z).atom);
            whole_scalar.then_some(place)
        }
        _ => None,
    };
    let n = site.arg_places.len();
    for i in 0..n {
        for j in i + 1..n {
            if let (Some(x), Some(y)) = (single(i), single(j))
                && x == y
                && mentioned(i)
                && mentioned(j)
                && (written(i) || written(j))
            {
                return Some((i, j));
            }
        }
    }
    None
}

/// Does `callee`'s body mention its formal at position `k` (true for a
/// procedure without body, or a position past its formals)?
pub(crate) fn formal_mentioned(program: &Program, callee: ProcId, k: usize) -> bool {
    let proc = program.proc(callee);
    let (Some(body), Some(&formal)) = (&proc.body, proc.params.get(k)) else {
        return true;
    };
    let mut seen = false;
    crate::il::visit_stmts(&body.stmts, &mut |s| {
        for e in crate::il::stmt_exprs(s) {
            crate::il::visit_expr(e, &mut |x| seen |= x.kind == ExprKind::Var(formal));
        }
    });
    seen
}

/// Two memories `callee` reaches through different pointers (formals, or
/// pointer members of what they point to: `jb->in`, `jb->out`) that are
/// one variable of the caller at this call, each pointer having that
/// single destination, with one of them indexed and one written by the
/// callee: the callee's analysis took them for distinct memory
/// (`warn/alias`, made an error in adjoint mode, whose backward sweep
/// zeroes one adjoint after adding into the other).
fn aliased_targets(
    a: &Analysis<'_>,
    callee: ProcId,
    site: &crate::analysis::facts::CallSite,
) -> Option<(crate::analysis::locs::Obj, crate::analysis::locs::Obj)> {
    let sm = a.summaries.get(&callee)?;
    // Each callee target object, with the caller objects it stands for.
    let mut images: BTreeMap<crate::analysis::locs::Obj, BTreeSet<crate::analysis::locs::Obj>> =
        BTreeMap::new();
    for (&z, caller) in &site.map {
        let obj = a.locs.zone(z).obj;
        // The callee's formals' targets, and the global pointers' (`src =
        // u; dst = u + 1; kernel();`), which it equally takes as distinct.
        if !matches!(a.locs.object(obj).kind,
            ObjKind::Target { proc: Some(q), .. } if q == callee)
            && !matches!(a.locs.object(obj).kind, ObjKind::Target { proc: None, .. })
        {
            continue;
        }
        images
            .entry(obj)
            .or_default()
            .extend(caller.iter().map(|&c| a.locs.zone(c).obj));
    }
    let written = |o| a.locs.object_zones(o).any(|z| sm.writes.contains(&z));
    let indexed = |o| a.locs.object_zones(o).any(|z| a.locs.zone(z).atom);
    let targets: Vec<_> = images.iter().filter(|(_, img)| img.len() == 1).collect();
    for (i, (t1, img1)) in targets.iter().enumerate() {
        for (t2, img2) in &targets[i + 1..] {
            if img1 == img2 && (written(**t1) || written(**t2)) && (indexed(**t1) || indexed(**t2))
            {
                return Some((**t1, **t2));
            }
        }
    }
    None
}

/// The zones `callee` writes in the memory its formal `k` points to at
/// entry (its target, `loc/target`), from its summary; `None` when it has
/// no summary (no body), empty when it has no formal `k`.
pub(crate) fn writes_through_formal(
    a: &Analysis<'_>,
    callee: ProcId,
    k: usize,
) -> Option<Vec<Zone>> {
    let sm = a.summaries.get(&callee)?;
    let Some(&formal) = a.program.proc(callee).params.get(k) else {
        return Some(Vec::new());
    };
    let formal = a.locs.of_sym(formal);
    Some(
        sm.writes
            .iter()
            .copied()
            .filter(|&z| {
                matches!(
                    a.locs.object(a.locs.zone(z).obj).kind,
                    ObjKind::Target { proc: Some(q), pointer }
                        if q == callee && a.locs.zone(pointer).obj == formal
                )
            })
            .collect(),
    )
}

/// `warn/alias`, certain case with a global, refused in both modes.
pub(crate) fn refuse_global_address_calls(
    a: &Analysis<'_>,
    diff_procs: &[ProcId],
    through_pointers: bool,
) -> Result<(), Diagnostic> {
    let program = a.program;
    // `warn/alias`, certain case with a global: an active call passes the
    // address of a global (`f(&g)`) that the callee also reads or writes by
    // name, and one of the two accesses writes. The callee was analysed as
    // if its parameter and the global were distinct, so its derivative would
    // miss the interaction. Refused, like two equal addresses above.
    for &p in diff_procs {
        let Some(f) = a.facts.get(&p) else { continue };
        let mut calls: Vec<_> = f.calls.iter().collect();
        calls.sort_by_key(|(i, _)| **i);
        for (&i, site) in calls {
            let stmt = f.points[i].kind.stmt();
            let Some(callee) = site.callee else { continue };
            let Some(sm) = a.summaries.get(&callee) else {
                continue;
            };
            if !a.is_active_call(p, stmt.id) {
                continue;
            }
            // Whether the callee writes through formal k, which receives
            // the global's address.
            let writes_through_param =
                |k: usize| writes_through_formal(a, callee, k).is_some_and(|w| !w.is_empty());
            let mut globals = global_addresses(stmt);
            // In adjoint mode, also a global a pointer argument may point to
            // (`p = g; acc(p)`): the callee's backward sweep zeroes or reads
            // one adjoint after adding into the other, where the tangent
            // follows the original's accesses in lockstep.
            if through_pointers {
                for (k, places) in site.arg_places.iter().enumerate() {
                    for &pl in places {
                        if let Some((o, _)) = a.locs.place(pl)
                            && let ObjKind::Var(v) = a.locs.object(o).kind
                            && !globals.contains(&(k, v))
                        {
                            globals.push((k, v));
                        }
                    }
                }
            }
            for (k, sym) in globals {
                if program.sym(sym).kind != SymKind::Global {
                    continue;
                }
                let o = a.locs.of_sym(sym);
                let reads = a.locs.object_zones(o).any(|z| sm.reads.contains(&z));
                let writes = a.locs.object_zones(o).any(|z| sm.writes.contains(&z));
                if writes || (reads && writes_through_param(k)) {
                    return Err(Diagnostic::error(
                        stmt.span,
                        format!(
                            "this active call passes the address of global '{}', which '{}' also \
                             uses by name; aioli does not differentiate such overlapping accesses \
                             (pass a copy of '{}', or let '{}' use only its parameter)",
                            program.sym(sym).name,
                            program.proc(callee).name,
                            program.sym(sym).name,
                            program.proc(callee).name
                        ),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Does `proc` change the pointers reached through its pointer formal `k`
/// only by moving them along (`r->cur = r->cur + 1`, `r->cur += 2`,
/// `r->cur++`), never storing another address there nor giving the formal
/// to a call?
fn only_advances(program: &Program, proc: ProcId, k: usize) -> bool {
    let p = program.proc(proc);
    let (Some(body), Some(&formal)) = (&p.body, p.params.get(k)) else {
        return false;
    };
    let rooted = |e: &Expr| super::names::root_sym(e) == Some(formal);
    let mut ok = true;
    crate::il::visit_stmts(&body.stmts, &mut |st| {
        // Any store of a pointer through the formal (an assignment, an
        // allocation, a call's result) must be `X = X ± k`.
        if let Some(target) = crate::il::stored_ref(st)
            && rooted(target)
            && matches!(program.resolve(&target.ty.ty), Type::Pointer(_))
        {
            let advance = matches!(&st.kind, StmtKind::Assign { lhs, rhs, .. }
                if !matches!(lhs.kind, ExprKind::Var(_))
                    && matches!(&rhs.kind, ExprKind::Binary {
                        op: BinOp::Add | BinOp::Sub,
                        lhs: base,
                        rhs: offset,
                    } if crate::il::validate::same_expr(base, lhs)
                        && !matches!(program.resolve(&offset.ty.ty), Type::Pointer(_))));
            ok &= advance;
        }
        if let StmtKind::Call { args, .. } = &st.kind {
            for arg in args {
                crate::il::visit_expr(arg, &mut |x| {
                    ok &= !matches!(x.kind, ExprKind::Var(v) if v == formal);
                });
            }
        }
    });
    ok
}

/// Does an initialiser list hold the address of memory holding reals that
/// may carry a derivative, at any depth: a variable the heads name or some
/// procedure writes (not a string, not `const` or never-written weights,
/// which stay passive whatever points to them)?
/// With `through`, the code stores through the initialised global itself
/// (`tab[1][0] = …`), so whatever it points to counts as written.
fn holds_address(
    a: &Analysis<'_>,
    written: &HashSet<SymId>,
    through: bool,
    items: &[Init],
) -> bool {
    let program = a.program;
    let live = |v: SymId| {
        !super::adjoint::is_read_only(program, &program.sym(v).ty)
            && (through
                || written.contains(&v)
                || a.heads.iter().any(|h| {
                    h.dependents
                        .iter()
                        .chain(&h.independents)
                        .any(|hv| *hv == crate::analysis::HeadVar::Global(v))
                }))
    };
    items.iter().any(|i| match i {
        Init::List(inner, _) => holds_address(a, written, through, inner),
        Init::Expr(e) => {
            crate::transform::names::address_type(program, &e.ty)
                .is_some_and(|t| program.contains_real(&t.ty))
                && !crate::il::is_null_constant(e)
                && super::adjoint::address_root(e).is_none_or(live)
        }
    })
}

/// Pointers whose derivative pointers aioli cannot keep in step, refused
/// in both modes (the derivative would read the wrong memory):
/// - a call given `&p` for a pointer `p` that has a derivative pointer,
///   where the callee may store a new address through it and is not
///   differentiated for that (`tangent/call-stores-pointer`: a library
///   function, or a formal without derivative);
/// - a global pointer with a derivative pointer set only under a test of
///   state that outlives a call (`if (!work) work = malloc(...)`).
pub(crate) fn refuse_untracked_pointers(
    a: &Analysis<'_>,
    diff: &DiffSets,
    diff_procs: &[ProcId],
    allow_advances: bool,
) -> Result<(), Diagnostic> {
    let program = a.program;
    let pointer_to_real = |ty: &QualType| match program.resolve(&ty.ty) {
        Type::Pointer(t) => program.contains_real(&t.ty),
        _ => false,
    };
    for &p in diff_procs {
        let Some(body) = &program.proc(p).body else {
            continue;
        };
        let mut found: Option<Diagnostic> = None;
        crate::il::visit_stmts(&body.stmts, &mut |st| {
            let StmtKind::Call { callee, args, .. } = &st.kind else {
                return;
            };
            if found.is_some() {
                return;
            }
            let callee = *callee;
            for (k, arg) in args.iter().enumerate() {
                let ExprKind::AddrOf(r) = &arg.kind else {
                    continue;
                };
                let ExprKind::Var(v) = &r.kind else { continue };
                let ty = &program.sym(*v).ty;
                // `&p` of a pointer with a derivative pointer, or `&s` of a
                // struct with derivative pointer members (`vec_init(&v, n)`
                // storing `v->data`): the derivative pointers must follow
                // what the callee stores there. A struct without derivative
                // (a passive grid's `grid_build(&g, n)`) has none to move:
                // the analyses carry the stored addresses back to the
                // caller (`call/map-target`), so its pointers designate
                // no active memory anywhere.
                let tracked = diff.syms.contains(v)
                    && (pointer_to_real(ty)
                        || super::names::holds_real_pointer(program, &ty.ty, 0));
                if !tracked {
                    continue;
                }
                let stores_pointer = !pointer_to_real(ty);
                if k >= program.proc(callee).params.len() {
                    continue;
                }
                let writes = match writes_through_formal(a, callee, k) {
                    Some(w) => w.iter().any(|&z| !stores_pointer || a.locs.zone(z).pointer),
                    // Without a body: any non-const pointer parameter.
                    None => true,
                };
                // In tangent mode, a helper that only moves the pointer
                // members along (`r->cur = r->cur + 1`, a reader's cursor)
                // leaves them designating the memory they did: the
                // caller's analysis stays right, and the derivative moves
                // the derivative member alike (`tangent/assign-pointer`).
                // The adjoint's backward sweep would need the members'
                // old values, which nothing here records for the caller.
                // `tangent/call-stores-pointer`: the helper is
                // differentiated and stores the derivative address along.
                let differentiated = diff.stores_pointers.contains(&callee)
                    && program
                        .proc(callee)
                        .params
                        .get(k)
                        .is_some_and(|f| diff.syms.contains(f));
                if writes
                    && !differentiated
                    && !(allow_advances && stores_pointer && only_advances(program, callee, k))
                {
                    found = Some(Diagnostic::error(
                        st.span,
                        format!(
                            "'{}' may store a new address into '{}', whose derivative \
                             pointers aioli cannot move along with it; return the new address \
                             or assign '{}' here",
                            program.proc(callee).name,
                            program.sym(*v).name,
                            program.sym(*v).name
                        ),
                    ));
                    return;
                }
            }
        });
        if let Some(d) = found {
            return Err(d);
        }
    }
    // `tangent/call-sets-global`, refused: a global pointer set only when
    // state that outlives a call says so (`if (!work) work = malloc(...)`,
    // `if (n > cap)`): the original and derivative procedures share that
    // state, so after a call of the original the derivative pointer would
    // never be set.
    let mut state: HashSet<SymId> = HashSet::default();
    for &p in &a.order {
        if let Some(body) = &program.proc(p).body {
            crate::il::visit_stmts(&body.stmts, &mut |st| {
                // (A `free` changes no variable's value.)
                let set = super::names::stored_or_freed(st)
                    .filter(|_| !matches!(st.kind, StmtKind::Free { .. }));
                if let Some(e) = set
                    && let Some(root) = super::names::direct_root(program, e)
                    && (program.sym(root).kind == SymKind::Global
                        || program.sym(root).storage == crate::il::Storage::Static)
                {
                    state.insert(root);
                }
            });
        }
    }
    // A variable the head assigns first thing, before any control or call
    // (`cap = 2;`), does not outlive a call.
    for h in &a.heads {
        let top: HashSet<SymId> = program
            .proc(h.proc)
            .body
            .iter()
            .flat_map(|b| b.stmts.iter())
            .take_while(|st| {
                matches!(
                    st.kind,
                    StmtKind::Assign { .. } | StmtKind::Decl { .. } | StmtKind::Empty
                )
            })
            .filter_map(|st| match &st.kind {
                StmtKind::Assign { lhs, .. } => match &lhs.kind {
                    ExprKind::Var(v) => Some(*v),
                    _ => None,
                },
                _ => None,
            })
            .collect();
        state.retain(|v| !top.contains(v) || a.heads.iter().any(|o| o.proc != h.proc));
    }
    for &p in diff_procs {
        let Some(body) = &program.proc(p).body else {
            continue;
        };
        let sets_here = |st: &Stmt| -> Option<SymId> {
            let direct = super::names::stored_or_freed(st).and_then(|e| {
                let root = super::names::direct_root(program, e)?;
                (program.sym(root).kind == SymKind::Global
                    && is_pointer(program, &e.ty)
                    && diff.is_diff_ref(program, e))
                .then_some(root)
            });
            direct.or_else(|| match &st.kind {
                StmtKind::Call { callee, .. } => diff.sets_globals.get(callee).copied(),
                _ => None,
            })
        };
        if let Some((span, g, reads)) =
            state_guarded_set(&body.stmts, &state, &sets_here, &mut Vec::new())
        {
            let what = super::names::global_pointer_phrase(program, g);
            return Err(Diagnostic::error(
                span,
                format!(
                    "{what} is set or freed here only when '{}', which persists from call to \
                     call, says so; the original procedures share that state, so after a call of \
                     the original its derivative pointer would not be set (set it on every \
                     call, or keep the state with the derivative's caller)",
                    program.sym(reads).name,
                ),
            ));
        }
    }
    // `ptr/global-init`, refused: a global pointer initialised with an
    // address aioli does not follow (`&S.a[0]`, a struct member), used
    // through: the analyses and the derivative initialiser would not know
    // what it designates.
    // What the heads and what they call write (a `main` filling weights
    // before the call leaves them passive here).
    let mut written: HashSet<SymId> = HashSet::default();
    for &p in &a.order {
        if let Some(body) = &program.proc(p).body {
            crate::il::visit_stmts(&body.stmts, &mut |st| {
                written.extend(crate::il::stored_ref(st).and_then(super::names::root_sym));
            });
        }
    }
    for item in &program.items {
        let ItemKind::Globals { vars, .. } = &item.kind else {
            continue;
        };
        for v in vars {
            // A list (`double *tab[2] = {a, b};`, `View gv = {g, 4};`)
            // holding an address: `ptr/global-init` follows a single one.
            let listed = match &v.init {
                Some(Init::List(items, _)) => {
                    holds_address(a, &written, written.contains(&v.sym), items)
                }
                _ => false,
            };
            if !listed {
                let Some(Init::Expr(e)) = &v.init else {
                    continue;
                };
                if !is_pointer(program, &program.sym(v.sym).ty)
                    || crate::il::is_null_constant(e)
                    || a.locs.initial_variable(v.sym).is_some()
                {
                    continue;
                }
            }
            let mut used = false;
            for &p in &a.order {
                if let Some(body) = &program.proc(p).body {
                    crate::il::visit_stmts(&body.stmts, &mut |st| {
                        for x in super::names::stmt_exprs(st) {
                            crate::il::visit_expr(x, &mut |y| {
                                used |= matches!(y.kind, ExprKind::Var(s) if s == v.sym);
                            });
                        }
                    });
                }
            }
            if used {
                return Err(Diagnostic::error(
                    program.sym(v.sym).span,
                    format!(
                        "aioli does not follow the address{} global {}'{}' is initialised \
                         with (only an array, a row of one, or the address of a variable or of \
                         an element, given to a single pointer); assign {}'{}' in the code \
                         instead",
                        if listed { "es" } else { "" },
                        if listed { "" } else { "pointer " },
                        program.sym(v.sym).name,
                        if listed { "the pointers of " } else { "" },
                        program.sym(v.sym).name,
                    ),
                ));
            }
        }
    }
    // The same, wherever the test is (a loop, an early `return`, `g = c ?
    // g : x`): a global pointer with a derivative pointer that the code
    // sets somewhere, dereferenced, by a head or by what it calls, where it
    // may still hold the address it had before the head was called.
    // (Not an array of pointers: its zone is an atom, which a loop setting
    // every element never overwrites for the analyses.)
    let global_pointer_zones = |g: SymId| -> Vec<Zone> {
        a.locs
            .object_zones(a.locs.of_sym(g))
            .filter(|&z| a.locs.zone(z).pointer && !a.locs.zone(z).atom)
            .collect()
    };
    let mut managed: Vec<(SymId, Vec<Zone>)> = Vec::new();
    for &p in &a.order {
        if let Some(body) = &program.proc(p).body {
            crate::il::visit_stmts(&body.stmts, &mut |st| {
                if let Some(e) = super::names::stored_or_freed(st)
                    && let Some(g) = super::names::direct_root(program, e)
                    && program.sym(g).kind == SymKind::Global
                    && diff.syms.contains(&g)
                    && is_pointer(program, &e.ty)
                    && !managed.iter().any(|(m, _)| *m == g)
                {
                    let zones = global_pointer_zones(g);
                    if !zones.is_empty() {
                        managed.push((g, zones));
                    }
                }
            });
        }
    }
    if managed.is_empty() {
        return Ok(());
    }
    let is_entry_target = |z: Zone, place: crate::analysis::locs::Place| {
        a.locs.place(place).is_some_and(|(o, _)| {
            matches!(a.locs.object(o).kind, ObjKind::Target { proc: None, pointer } if pointer == z)
        })
    };
    // Per procedure, the managed globals it dereferences, itself or through
    // a callee, where they may still hold what they held when it was
    // entered (`ObjKind::Target { proc: None }`), with where.
    let mut stale: HashMap<ProcId, HashMap<SymId, crate::front::source::Span>> = HashMap::default();
    loop {
        let mut grew = false;
        for &p in &a.order {
            let Some(f) = a.facts.get(&p) else { continue };
            let mut found: Vec<(SymId, crate::front::source::Span)> = Vec::new();
            for (i, point) in f.points.iter().enumerate() {
                let st = point.kind.stmt();
                let mut used: Vec<SymId> = Vec::new();
                if let StmtKind::Call { callee, .. } = &st.kind
                    && let Some(c) = stale.get(callee)
                {
                    used.extend(c.keys().copied());
                }
                for e in super::names::stmt_exprs(st) {
                    // A dereference: `*g`, `g[i]`, `g->f`, `F.u[i]` (not
                    // `F.n` or `rows[i]`, which read the global itself).
                    crate::il::visit_expr(e, &mut |x| {
                        let base = match &x.kind {
                            ExprKind::Index { base, .. } if is_pointer(program, &base.ty) => base,
                            ExprKind::Deref(base) => base,
                            _ => return,
                        };
                        if let Some(g) = super::names::direct_root(program, base) {
                            used.push(g);
                        }
                    });
                }
                for (g, zones) in &managed {
                    if !used.contains(g) {
                        continue;
                    }
                    let entry_value = f.pts_before.get(i).is_some_and(|pts| {
                        pts.iter()
                            .any(|&(z, place)| zones.contains(&z) && is_entry_target(z, place))
                    });
                    if entry_value {
                        found.push((*g, st.span));
                    }
                }
            }
            let known = stale.entry(p).or_default();
            for (g, span) in found {
                if let std::collections::hash_map::Entry::Vacant(slot) = known.entry(g) {
                    slot.insert(span);
                    grew = true;
                }
            }
        }
        if !grew {
            break;
        }
    }
    for h in &a.heads {
        let Some(uses) = stale.get(&h.proc) else {
            continue;
        };
        if let Some((g, span)) = uses.iter().min_by_key(|(_, sp)| sp.lo) {
            return Err(Diagnostic::error(
                *span,
                format!(
                    "global pointer '{}' may still hold here the address it had before '{}' \
                     was called, though the code sets it elsewhere: after a call of the \
                     original its derivative pointer would not follow (set '{}' on every call \
                     before it is used)",
                    program.sym(*g).name,
                    program.proc(h.proc).name,
                    program.sym(*g).name,
                ),
            ));
        }
    }
    Ok(())
}

/// The output program, the rule trace and what was created.
pub fn tangent_full(
    a: &Analysis<'_>,
    rules: &RuleSet,
    opts: &TangentOptions,
) -> Result<(Program, std::collections::BTreeSet<String>, TangentInfo), Diagnostic> {
    let program = a.program;
    let diff = DiffSets::of(a, &a.order);
    // A procedure returning a derivative pointer is differentiated even
    // where no value it computes is active (`tangent/pointer-result`).
    let mut diff_procs: Vec<ProcId> = a
        .order
        .iter()
        .copied()
        .filter(|&p| {
            (a.is_diff_proc(p)
                || diff.results.contains(&p)
                || diff.frees.contains(&p)
                || diff.sets_globals.contains_key(&p)
                || diff.stores_pointers.contains(&p))
                && program.proc(p).body.is_some()
        })
        .collect();
    // Copies last, so the user's procedure gets the plain derivative name.
    diff_procs.sort_by_key(|p| program.specialized.contains_key(p));
    super::names::refuse_struct_pointer_results(program, &a.order)?;
    super::names::refuse_void_conversions(program, &a.order)?;
    super::names::refuse_hidden_writes(program, &diff_procs)?;
    super::names::refuse_stale_statics(program, &diff_procs)?;
    super::names::refuse_split_statics(program, &diff_procs, &|p, s| {
        !a.is_active_call(p, s.id)
            && !diff.sets_derivative_pointer(program, s)
            && !diff.frees_derivative(program, s)
            && !diff.moves_derivative_pointers(program, s)
    })?;
    let mut out = program.clone_for_output();
    let mut namer = Namer::of(program);
    let (types, new_type_items) = derivative_types(program, &mut out, &mut namer, &diff, "_d");
    // Reserve the derivative procedures so calls can name them.
    if diff_procs.is_empty() {
        return Err(Diagnostic::error(
            a.heads
                .first()
                .map(|h| program.proc(h.proc).span)
                .unwrap_or_default(),
            "nothing to differentiate: no head procedure has a body",
        ));
    }
    refuse_overlapping_calls(a, &diff_procs, false)?;
    refuse_global_address_calls(a, &diff_procs, false)?;
    refuse_untracked_pointers(a, &diff, &diff_procs, true)?;
    let mut dprocs = HashMap::default();
    for &p in &diff_procs {
        let orig = program.proc(p);
        let id = ProcId(out.procs.len() as u32);
        out.procs.push(Procedure {
            name: namer.fresh(&format!("{}_d", orig.name)),
            body: None,
            stmt_count: 0,
            ..orig.clone()
        });
        dprocs.insert(p, id);
    }
    let mut host = TangentHost {
        a,
        program,
        out,
        namer,
        diff,
        types,
        dprocs,
        dsyms: HashMap::default(),
        opts: opts.clone(),
        rules,
        proc: ProcId(0),
        stmts: Vec::new(),
        varied: VariedMap::default(),
        result_param: None,
        error_span: None,
        dummies: HashMap::default(),
        pending_decls: Vec::new(),
        trace: Default::default(),
        info: TangentInfo::default(),
        simplifier: crate::simplify::Simplifier::new().map_err(|e| {
            Diagnostic::error(
                program.proc(diff_procs[0]).span,
                format!("internal error: {e}"),
            )
        })?,
        precision: None,
        live_memo: HashMap::default(),
        freeing_jump_controls: HashSet::default(),
        primal_syms: HashMap::default(),
        param_targets: HashMap::default(),
        call_temps: Vec::new(),
        diff_formals: Default::default(),
        global_dnames: HashMap::default(),
    };
    // CONTRACT §2: an active global `g` has the derivative `gd`, which a
    // local's derivative named first (`double sd` for a block's `s`) must
    // not take.
    let mut dglobals: Vec<SymId> = host
        .diff
        .syms
        .iter()
        .copied()
        .filter(|&s| program.sym(s).kind == SymKind::Global)
        .collect();
    dglobals.sort();
    for g in dglobals {
        let name = host.namer.fresh(&format!("{}d", program.sym(g).name));
        host.global_dnames.insert(g, name);
    }
    for (z, info) in a.locs.zones.iter().enumerate() {
        if let ObjKind::Target {
            proc: Some(p),
            pointer,
        } = a.locs.object(info.obj).kind
            && !info.atom
            && info.real
            && let ObjKind::Var(ps) = a.locs.object(a.locs.zone(pointer).obj).kind
        {
            host.param_targets
                .entry(p)
                .or_default()
                .push((z as Zone, ps));
        }
    }
    for &p in &diff_procs {
        host.proc = p;
        host.namer.enter_proc(p);
        let body = program
            .proc(p)
            .body
            .as_ref()
            .map(|b| b.stmts.as_slice())
            .unwrap_or(&[]);
        let scope = program
            .proc(p)
            .body
            .as_ref()
            .map(|b| b.scope)
            .unwrap_or(program.proc(p).scope);
        host.varied = VariedMap::of(a, p, body, scope);
        host.result_param = host.result_param_for(p);
        if let Some(r) = host.result_param {
            host.info.result_params.insert(host.dprocs[&p], r);
        }
        host.stmts.clear();
        host.live_memo.clear();
        host.freeing_jump_controls.clear();
        if super::names::may_free(program, p, &mut Vec::new()) {
            host.freeing_jump_controls = crate::analysis::jump_controls(program, p)
                .into_iter()
                .collect();
        }
        let span = program.proc(p).span;
        engine::apply(rules, &mut host, "proc", &Val::Proc(p))
            .map_err(|e| Diagnostic::error(host.error_span.unwrap_or(span), e.message))?;
    }
    // `ptr/global-init`: a derivative global pointer starts at the
    // derivative of the global its original is initialised with.
    for root in super::initialiser_roots(a, &host.diff, host.dsyms.keys().copied()) {
        host.dsym(root);
    }
    let trace = std::mem::take(&mut host.trace);
    let mut info = std::mem::take(&mut host.info);
    info.derivative_of = host.dsyms.clone();
    info.derivative_syms.extend(host.dsyms.values().copied());
    info.procs = host.dprocs.clone();
    info.structs = host.types.structs.clone();
    let mut out = host.finish(&diff_procs, new_type_items);
    super::unshadow_called_functions(&mut out);
    for p in out.procs.iter_mut() {
        if let Some(b) = &mut p.body {
            let mut n = 0;
            renumber(&mut b.stmts, &mut n);
            p.stmt_count = n;
        }
    }
    let problems = crate::il::validate::validate(&out);
    if let (Some(e), Some(p)) = (problems.first(), diff_procs.first()) {
        return Err(Diagnostic::error(
            program.proc(*p).span,
            format!("internal error: the tangent IL is malformed: {e}"),
        ));
    }
    Ok((out, trace, info))
}

/// Gives a procedure's statements the ids 0, 1, ... in tree order.
pub(crate) fn renumber(stmts: &mut [Stmt], n: &mut u32) {
    for s in stmts {
        s.id = StmtId(*n);
        *n += 1;
        match &mut s.kind {
            StmtKind::If { then, other, .. } => {
                renumber(&mut then.stmts, n);
                if let Some(o) = other {
                    renumber(&mut o.stmts, n);
                }
            }
            StmtKind::Loop { header, body } => {
                if let LoopHeader::For { init, step, .. } = header {
                    renumber(init, n);
                    renumber(step, n);
                }
                renumber(&mut body.stmts, n);
            }
            StmtKind::Switch { cases, .. } => {
                cases.iter_mut().for_each(|c| renumber(&mut c.body, n))
            }
            StmtKind::Block(b) => renumber(&mut b.stmts, n),
            _ => {}
        }
    }
}

/// Creates the derivative struct types (`tangent/types`; the adjoint's
/// `adjoint/struct-types` with `suffix` `_b`): `T_d` with the fields of `T`
/// that are ever active, in order. Returns the items to add after each
/// original type item.
pub(super) fn derivative_types(
    program: &Program,
    out: &mut Program,
    namer: &mut Namer,
    diff: &DiffSets,
    suffix: &str,
) -> (DiffTypes, HashMap<usize, Vec<ItemKind>>) {
    let mut types = DiffTypes::default();
    let mut items: HashMap<usize, Vec<ItemKind>> = HashMap::default();
    let with_fields: Vec<usize> = (0..program.structs.len())
        .filter(|&s| diff.fields.iter().any(|(t, _)| t.index() == s))
        .collect();
    for &s in &with_fields {
        let id = crate::il::StructId(out.structs.len() as u32);
        let orig = program.strukt(crate::il::StructId(s as u32));
        out.structs.push(StructDef {
            tag: None,
            fields: Vec::new(),
            ..orig.clone()
        });
        types.structs.insert(crate::il::StructId(s as u32), id);
    }
    // Typedef names first: in `typedef struct Cell {...} Cell;` the tag
    // and the typedef share a name (C keeps tags apart), and so do
    // `Cell_d`'s, as CONTRACT §2 names it.
    let mut typedef_names: HashMap<(String, crate::il::StructId), String> = HashMap::default();
    for (i, t) in program.typedefs.iter().enumerate() {
        if let Type::Struct(s) = &t.ty.ty
            && let Some(&d) = types.structs.get(s)
        {
            let id = crate::il::TypedefId(out.typedefs.len() as u32);
            let name = namer.fresh(&format!("{}{suffix}", t.name));
            typedef_names.insert((t.name.clone(), *s), name.clone());
            out.typedefs.push(TypedefDef {
                name,
                ty: QualType::new(Type::Struct(d)),
                span: t.span,
            });
            types.typedefs.insert(crate::il::TypedefId(i as u32), id);
        }
    }
    for &s in &with_fields {
        let d = types.structs[&crate::il::StructId(s as u32)];
        let sid = crate::il::StructId(s as u32);
        let tag = program.structs[s].tag.as_ref().map(|t| {
            typedef_names
                .get(&(t.clone(), sid))
                .cloned()
                .unwrap_or_else(|| namer.fresh(&format!("{t}{suffix}")))
        });
        out.structs[d.index()].tag = tag;
    }
    for &s in &with_fields {
        let sid = crate::il::StructId(s as u32);
        let fields = program
            .strukt(sid)
            .fields
            .iter()
            .enumerate()
            .filter(|(i, _)| diff.fields.contains(&(sid, *i)))
            .map(|(_, f)| {
                let mut ty = types.of(program, &f.ty);
                // An adjoint is written through its pointer members even
                // where the original only reads (`const double *coef`).
                if suffix == "_b"
                    && let Type::Pointer(target) = &mut ty.ty
                {
                    target.is_const = false;
                }
                crate::il::Field {
                    ty,
                    comments: Default::default(),
                    ..f.clone()
                }
            })
            .collect();
        out.structs[types.structs[&sid].index()].fields = fields;
    }
    for (i, item) in program.items.iter().enumerate() {
        match &item.kind {
            ItemKind::Struct(s) => {
                if let Some(&d) = types.structs.get(s) {
                    items.entry(i).or_default().push(ItemKind::Struct(d));
                }
            }
            ItemKind::Typedef(t) => {
                if let Some(&d) = types.typedefs.get(t) {
                    items.entry(i).or_default().push(ItemKind::Typedef(d));
                }
            }
            _ => {}
        }
    }
    (types, items)
}

/// `base.name` in the output program, `base` being of a (derivative)
/// struct type (`tangent/ref-field`, `adjoint/ref-field`).
pub(super) fn field_of(
    out: &Program,
    base: Expr,
    name: &str,
    span: Span,
) -> Result<Expr, ApplyError> {
    let Type::Struct(sid) = out.resolve(&base.ty.ty).clone() else {
        return Err(ApplyError::new(format!(
            "field '{name}' of a value that is not a struct"
        )));
    };
    let def = out.strukt(sid);
    let Some(i) = def.fields.iter().position(|f| f.name == name) else {
        return Err(ApplyError::new(format!(
            "the derivative struct has no field '{name}'"
        )));
    };
    let ty = def.fields[i].ty.clone();
    Ok(Expr::new(
        ExprKind::Field {
            base: Box::new(base),
            strukt: sid,
            field: i,
        },
        ty,
        span,
    ))
}

/// A value the rules see: an IL node of the original program, or a piece
/// of output being built.
#[derive(Clone)]
pub enum Val<'a> {
    Proc(ProcId),
    Formals(ProcId, usize),
    Formal(ProcId, usize),
    Stmts(&'a [Stmt]),
    Stmt(&'a Stmt),
    Cases(&'a [SwitchCase]),
    Case(&'a SwitchCase),
    Decls(&'a [Declarator]),
    Declarator(&'a Declarator),
    Inits(&'a [Init]),
    Init(&'a Init),
    Expr(&'a Expr),
    Exprs(&'a [Expr]),
    Args(&'a Stmt, usize),
    Arg(&'a Stmt, usize),
    Sym(SymId),
    Atom(Rc<str>),
    Num(f64),
    Code(Vec<Stmt>),
    New(Expr),
    NewInit(Init),
    NewDecl(Declarator),
    NewCase(SwitchCase),
    List(Vec<Val<'a>>),
}

struct TangentHost<'x, 'a> {
    a: &'x Analysis<'a>,
    program: &'a Program,
    out: Program,
    namer: Namer,
    diff: DiffSets,
    types: DiffTypes,
    dprocs: HashMap<ProcId, ProcId>,
    dsyms: HashMap<SymId, SymId>,
    opts: TangentOptions,
    rules: &'x RuleSet,
    proc: ProcId,
    /// Enclosing statements of the node being differentiated.
    stmts: Vec<&'a Stmt>,
    varied: VariedMap,
    /// The `double *f` parameter carrying the original result.
    result_param: Option<SymId>,
    error_span: Option<Span>,
    /// Zero derivatives made up for call arguments without one, by call
    /// statement address and argument index.
    dummies: HashMap<(usize, usize), (Stmt, Expr)>,
    /// Declarations to put at the start of the procedure being built.
    pending_decls: Vec<Stmt>,
    /// Every rule and derivative entry used (`tangent_trace`).
    trace: std::collections::BTreeSet<String>,
    info: TangentInfo,
    simplifier: crate::simplify::Simplifier,
    /// The precision of the intrinsic call being differentiated: its
    /// partials are computed in it (a double `sin` of a float argument has
    /// a double derivative).
    precision: Option<RealKind>,
    live_memo: HashMap<StmtId, bool>,
    /// The controls holding a jump, in a procedure that frees: the kept
    /// frees (`tangent/free`, `tangent/call-frees`) run only where the
    /// jumps let them, as the analysis's own live statements do
    /// (`diff-live/control`).
    freeing_jump_controls: HashSet<StmtId>,
    /// `dsyms` inverted: the primal of each derivative symbol.
    primal_syms: HashMap<SymId, SymId>,
    /// Per procedure, the real scalar zones its pointer parameters point
    /// to, with the pointer (`exit_needed` reads them at every exit, and
    /// the zones of the whole program are too many to scan there).
    param_targets: HashMap<ProcId, Vec<(Zone, SymId)>>,
    /// The temporaries of `tangent/share-calls` in the procedure being
    /// built, reused from one statement to the next.
    call_temps: Vec<(QualType, SymId)>,
    /// `is_diff_formal`'s answers: the analysis scans the callee's points
    /// for each question, and every call site asks about every argument.
    diff_formals: std::cell::RefCell<HashMap<(ProcId, usize), bool>>,
    /// The names of the active globals' derivatives, taken before any
    /// local's.
    global_dnames: HashMap<SymId, String>,
}

impl super::recurrence::Recurrences for TangentHost<'_, '_> {
    fn is_derivative(&self, s: SymId) -> bool {
        <Self as super::share::Temps>::is_derivative(self, s)
    }

    fn simplify(&self, e: Expr) -> Expr {
        TangentHost::simplify(self, e)
    }
}

impl super::share::Temps for TangentHost<'_, '_> {
    fn is_derivative(&self, s: SymId) -> bool {
        self.primal_syms.contains_key(&s) || self.info.derivative_syms.contains(&s)
    }

    fn temp(&mut self, like: &Expr, nth: usize) -> Option<Expr> {
        let ty = QualType {
            is_const: false,
            ..like.ty.clone()
        };
        let existing = self
            .call_temps
            .iter()
            .filter(|(t, _)| *t == ty)
            .nth(nth)
            .map(|&(_, s)| s);
        let sym = match existing {
            Some(s) => s,
            None => {
                let (var, decl) = self.temp(&ty, "temp").ok()?;
                let ExprKind::Var(s) = var.kind else {
                    return None;
                };
                self.pending_decls.push(decl);
                self.call_temps.push((ty, s));
                s
            }
        };
        let mut v = self.var(sym);
        v.span = like.span;
        Some(v)
    }

    fn tagged(&self, st: Stmt) -> Stmt {
        self.tag(vec![st], "tangent/share-calls")
            .pop()
            .expect("one statement in, one out")
    }

    fn is_local(&self, s: SymId) -> bool {
        self.out.symbols.get(s.index()).is_some_and(|sym| {
            matches!(
                sym.kind,
                crate::il::SymKind::Param | crate::il::SymKind::Local | crate::il::SymKind::Temp
            )
        })
    }
}

pub(super) fn binop_name(op: BinOp) -> &'static str {
    use BinOp::*;
    match op {
        Add => "add",
        Sub => "sub",
        Mul => "mul",
        Div => "div",
        Rem => "rem",
        Lt => "lt",
        Le => "le",
        Gt => "gt",
        Ge => "ge",
        Eq => "eq",
        Ne => "ne",
        And => "and",
        Or => "or",
        BitAnd => "bitand",
        BitOr => "bitor",
        BitXor => "bitxor",
        Shl => "shl",
        Shr => "shr",
    }
}

pub(super) fn binop_of(name: &str) -> Option<BinOp> {
    use BinOp::*;
    Some(match name {
        "add" => Add,
        "sub" => Sub,
        "mul" => Mul,
        "div" => Div,
        "lt" => Lt,
        "le" => Le,
        "gt" => Gt,
        "ge" => Ge,
        "eq" => Eq,
        "ne" => Ne,
        "and" => And,
        "or" => Or,
        _ => return None,
    })
}

pub(super) fn real_rank(program: &Program, t: &QualType) -> u8 {
    match program.resolve(&t.ty) {
        Type::Real(RealKind::Float) => 1,
        Type::Real(RealKind::Double) => 2,
        Type::Real(RealKind::LongDouble) => 3,
        _ => 0,
    }
}

/// A call of `<math.h>` function `f` in derivative code: in the precision
/// of the call being differentiated (`precision`: `exp` of a `float`
/// stays `exp`), else in that of its widest real argument; digamma, which
/// the output defines once, in double.
pub(super) fn intrinsic_expr(
    program: &Program,
    f: MathFn,
    precision: Option<RealKind>,
    args: Vec<Expr>,
    span: Span,
) -> Expr {
    let rank = match precision {
        Some(RealKind::Float) => 1,
        Some(RealKind::Double) => 2,
        Some(RealKind::LongDouble) => 3,
        None => args
            .iter()
            .map(|e| real_rank(program, &e.ty))
            .max()
            .unwrap_or(2)
            .max(1),
    };
    let (precision, name) = match rank {
        _ if f == MathFn::Digamma => (RealKind::Double, f.c_name().to_string()),
        1 => (RealKind::Float, format!("{}f", f.c_name())),
        3 => (RealKind::LongDouble, format!("{}l", f.c_name())),
        _ => (RealKind::Double, f.c_name().to_string()),
    };
    Expr::new(
        ExprKind::Intrinsic {
            call: Intrinsic {
                func: f,
                precision: Some(precision),
                name,
            },
            args,
        },
        real_of_rank(rank),
        span,
    )
}

pub(super) fn real_of_rank(r: u8) -> QualType {
    QualType::new(Type::Real(match r {
        1 => RealKind::Float,
        3 => RealKind::LongDouble,
        _ => RealKind::Double,
    }))
}

impl<'x, 'a> TangentHost<'x, 'a> {
    fn stmt(&self) -> Option<&'a Stmt> {
        self.stmts.last().copied()
    }

    fn span(&self) -> Span {
        self.stmt()
            .map(|s| s.span)
            .unwrap_or(self.program.proc(self.proc).span)
    }

    fn expr_of(&self, v: &Val<'a>) -> Result<Expr, ApplyError> {
        Ok(self.expr_ref(v)?.into_owned())
    }

    /// The expression a value stands for, borrowed where the value holds
    /// it: guards only look (`expr_of` copies it for building).
    fn expr_ref<'v>(&self, v: &'v Val<'a>) -> Result<std::borrow::Cow<'v, Expr>, ApplyError> {
        use std::borrow::Cow;
        Ok(match v {
            Val::Expr(e) => Cow::Borrowed(*e),
            Val::New(e) | Val::Init(Init::Expr(e)) | Val::NewInit(Init::Expr(e)) => {
                Cow::Borrowed(e)
            }
            Val::Arg(s, i) => Cow::Borrowed(self.arg_expr(s, *i)),
            Val::Sym(s) => Cow::Owned(self.var(*s)),
            Val::Num(x) => Cow::Owned(self.real(*x, QualType::double())),
            _ => {
                return Err(ApplyError::new(format!(
                    "expected an expression, got {}",
                    self.describe(v)
                )));
            }
        })
    }

    /// `expr_of` for a constructor's own argument `i`, taken out of `args`:
    /// an expression a premise built is moved, not copied (the operands of
    /// a derivative's sums and products are whole subtrees).
    fn take_expr(&self, args: &mut [Val<'a>], i: usize) -> Result<Expr, ApplyError> {
        match std::mem::replace(&mut args[i], Val::List(Vec::new())) {
            Val::New(e) | Val::NewInit(Init::Expr(e)) => Ok(e),
            other => {
                let e = self.expr_of(&other);
                args[i] = other;
                e
            }
        }
    }

    /// A zero initialiser shaped like the type: `0.0`, `{0.0}`,
    /// `{{0.0}}` for an array of arrays of reals, and C's universal zero
    /// `{0}` for a struct or an array of structs (which C compilers do not
    /// warn about, whatever the first member's type).
    fn zero_init(&self, ty: &QualType, span: Span) -> Init {
        match self.out.resolve(&ty.ty).clone() {
            Type::Array { elem, .. } => match self.zero_init(&elem, span) {
                Init::Expr(e) => Init::List(vec![Init::Expr(e)], span),
                inner if self.out.contains_real(&elem.ty) && !is_universal_zero(&inner) => {
                    Init::List(vec![inner], span)
                }
                _ => universal_zero(span),
            },
            // Real fields only: each written, as a person would; otherwise
            // `{0}` (a pointer or aggregate member cannot take `0.0`).
            Type::Struct(s) => {
                let fields: Vec<QualType> = self
                    .out
                    .strukt(s)
                    .fields
                    .iter()
                    .map(|f| f.ty.clone())
                    .collect();
                if fields.iter().all(|t| self.out.is_real(&t.ty)) {
                    Init::List(
                        fields
                            .iter()
                            .map(|t| Init::Expr(self.real(0.0, t.clone())))
                            .collect(),
                        span,
                    )
                } else {
                    universal_zero(span)
                }
            }
            Type::Pointer(_) => Init::Expr(Expr::new(
                ExprKind::IntConst {
                    value: 0,
                    text: "0".into(),
                },
                QualType::int(),
                span,
            )),
            _ => Init::Expr(self.real(0.0, ty.clone())),
        }
    }

    fn primal_of(&self, d: SymId) -> Option<SymId> {
        self.primal_syms.get(&d).copied()
    }

    /// The items of a derivative initialiser that the derivative type has.
    fn filter_init(&self, init: Init, primal_ty: &QualType) -> Init {
        if is_universal_zero(&init) {
            return init;
        }
        let span = match &init {
            Init::List(_, span) => *span,
            Init::Expr(e) => e.span,
        };
        match self.filter_items(init, primal_ty) {
            // No active item was written: all zero.
            Init::List(items, _) if items.is_empty() => universal_zero(span),
            i => i,
        }
    }

    fn filter_items(&self, init: Init, primal_ty: &QualType) -> Init {
        match (init, self.program.resolve(&primal_ty.ty).clone()) {
            (Init::List(items, span), Type::Array { elem, .. }) => Init::List(
                items
                    .into_iter()
                    .map(|i| self.filter_init(i, &elem))
                    .collect(),
                span,
            ),
            (Init::List(items, span), Type::Struct(sid)) => {
                let fields = self.program.strukt(sid).fields.clone();
                Init::List(
                    items
                        .into_iter()
                        .zip(fields.iter().enumerate())
                        .filter(|(_, (i, _))| self.diff.fields.contains(&(sid, *i)))
                        .map(|(item, (_, f))| self.filter_init(item, &f.ty))
                        .collect(),
                    span,
                )
            }
            (i, _) => i,
        }
    }

    /// The original expression a node stands for.
    fn node_expr(&self, node: &Val<'a>) -> Option<&'a Expr> {
        match node {
            Val::Expr(e) => Some(e),
            Val::Init(Init::Expr(e)) => Some(e),
            Val::Arg(s, i) => Some(self.arg_expr(s, *i)),
            _ => None,
        }
    }

    fn arg_expr(&self, s: &'a Stmt, i: usize) -> &'a Expr {
        match &s.kind {
            StmtKind::Call { args, .. } => &args[i],
            _ => unreachable!("arguments belong to calls"),
        }
    }

    fn code_of(&self, v: Val<'a>) -> Result<Vec<Stmt>, ApplyError> {
        match v {
            Val::Code(c) => Ok(c),
            Val::List(items) => {
                let mut out = Vec::new();
                for i in items {
                    out.extend(self.code_of(i)?);
                }
                Ok(out)
            }
            Val::Stmt(s) => Ok(vec![s.clone()]),
            other => Err(ApplyError::new(format!(
                "expected statements, got {}",
                self.describe(&other)
            ))),
        }
    }

    fn list_of(&self, v: Val<'a>) -> Result<Vec<Val<'a>>, ApplyError> {
        match v {
            Val::List(items) => Ok(items),
            other => Err(ApplyError::new(format!(
                "expected a list, got {}",
                self.describe(&other)
            ))),
        }
    }

    fn var(&self, s: SymId) -> Expr {
        let sym = &self.out.symbols[s.index()];
        Expr::new(ExprKind::Var(s), sym.ty.clone(), self.span())
    }

    /// `e` retyped to the real type `like` when `e` is a number; `e`
    /// otherwise.
    fn number_as(&self, e: Expr, like: &QualType) -> Expr {
        number_as(&self.out, e, like, |v, ty| self.real(v, ty))
    }

    fn real(&self, x: f64, ty: QualType) -> Expr {
        let ty = if real_rank(self.program, &ty) == 0 {
            QualType::double()
        } else {
            ty
        };
        let mut text = crate::back::c::real_text(x.abs());
        if real_rank(self.program, &ty) == 1 {
            text.push('f');
        }
        let e = Expr::new(
            ExprKind::RealConst {
                value: x.abs(),
                text,
            },
            ty.clone(),
            self.span(),
        );
        if x < 0.0 {
            Expr::new(
                ExprKind::Unary {
                    op: UnOp::Neg,
                    arg: Box::new(e),
                },
                ty,
                self.span(),
            )
        } else {
            e
        }
    }

    fn binary(&self, op: BinOp, l: Expr, r: Expr) -> Expr {
        let ty = if op.is_truth_valued() {
            QualType::int()
        } else if is_pointer(&self.out, &l.ty) {
            l.ty.clone()
        } else if is_pointer(&self.out, &r.ty) {
            r.ty.clone()
        } else if let Type::Array { elem, .. } = self.out.resolve(&l.ty.ty) {
            // An array operand decays to the address of its first element.
            (**elem).clone().pointer_to()
        } else if let Type::Array { elem, .. } = self.out.resolve(&r.ty.ty) {
            (**elem).clone().pointer_to()
        } else {
            let rank = real_rank(&self.out, &l.ty).max(real_rank(&self.out, &r.ty));
            if rank == 0 {
                l.ty.clone()
            } else {
                real_of_rank(rank)
            }
        };
        Expr::new(
            ExprKind::Binary {
                op,
                lhs: Box::new(l),
                rhs: Box::new(r),
            },
            ty,
            self.span(),
        )
    }

    /// The derivative symbol of `s`, created on first use next to `s`.
    fn dsym(&mut self, s: SymId) -> SymId {
        if let Some(&d) = self.dsyms.get(&s) {
            return d;
        }
        let orig = self.program.sym(s).clone();
        let name = if orig.kind == SymKind::Global {
            match self.global_dnames.remove(&s) {
                Some(name) => name,
                None => self.namer.fresh(&format!("{}d", orig.name)),
            }
        } else {
            self.namer.fresh_local(&format!("{}d", orig.name))
        };
        let mut ty = self.types.of(&self.out, &orig.ty);
        if orig.kind == SymKind::Global || orig.kind == SymKind::Local {
            ty.is_const = false;
        }
        let id = SymId(self.out.symbols.len() as u32);
        self.out.symbols.push(Symbol {
            name: name.clone(),
            ty,
            // `tangent/static-local`: a static local's derivative is static
            // too, carried from call to call with the value.
            storage: if orig.storage == Storage::Extern {
                Storage::Auto
            } else {
                orig.storage
            },
            ..orig.clone()
        });
        self.out.scopes[orig.scope.index()].vars.insert(name, id);
        self.dsyms.insert(s, id);
        self.primal_syms.insert(id, s);
        id
    }

    fn zones_of(&self, e: &Expr) -> Vec<Zone> {
        self.a
            .facts
            .get(&self.proc)
            .and_then(|f| f.ref_zones.get(&crate::analysis::facts::key(e)))
            .cloned()
            .unwrap_or_default()
    }

    fn active_after(&self) -> Set {
        let Some(s) = self.stmt() else {
            return Set::new();
        };
        self.a.active_after(self.proc, s.id)
    }

    fn is_active_expr(&self, e: &Expr) -> bool {
        let Some(s) = self.stmt() else { return false };
        if self.a.is_active_expr(self.proc, s.id, e) {
            return true;
        }
        // A struct whose derivative holds derivative pointers carries them
        // along even when no real in it is active (`b = a` with only `a.u
        // = x` in it): a zero derivative would leave `bd.u` null.
        if self.a.is_ref(e)
            && matches!(self.out.resolve(&e.ty.ty), Type::Struct(_))
            && self.diff.is_diff_ref(&self.out, e)
            && crate::analysis::facts::struct_has_pointer(
                &self.out,
                &self.types.of(&self.out, &e.ty).ty,
                0,
            )
        {
            return true;
        }
        // A declaration initialises its declarators in order: a later
        // initialiser may read an earlier declarator, active only after.
        if matches!(s.kind, StmtKind::Decl { .. }) {
            let after = self.a.active_after(self.proc, s.id);
            let mut leaves = Vec::new();
            self.a.diff_leaves(self.proc, e, &mut leaves);
            return leaves.iter().any(|z| after.contains(z));
        }
        false
    }

    fn is_diff_val(&self, v: &Val<'a>) -> bool {
        match v {
            Val::Sym(s) => self.diff.syms.contains(s),
            Val::Arg(s, i) => self.diff.is_diff_ref(&self.out, self.arg_expr(s, *i)),
            Val::Expr(e) => self.diff.is_diff_ref(&self.out, e),
            Val::Atom(_) => false,
            _ => false,
        }
    }

    /// `tangent/assign-live-implicit-zero`: is the derivative of the reference
    /// needed after the statement? Pointers always follow their primal.
    fn derivative_needed_after(&self, v: &Val<'a>) -> bool {
        if !self.opts.implicit_zero {
            return self.is_diff_val(v);
        }
        match v {
            Val::Sym(s) => {
                if is_pointer(&self.out, &self.program.sym(*s).ty) {
                    return self.diff.syms.contains(s);
                }
                let after = self.active_after();
                let o = self.a.locs.of_sym(*s);
                self.a.locs.object_zones(o).any(|z| after.contains(&z))
            }
            Val::Expr(e) => {
                // Implicit zeros only for whole scalar variables: a field or
                // a pointed-to value may be read later through its aggregate
                // (a struct passed by value), which would see a stale part;
                // so may a whole struct variable (`s = t;` then `h(s, w)`
                // passes the stale `sd` to `h_d`).
                if is_pointer(&self.out, &e.ty)
                    || !matches!(e.kind, ExprKind::Var(_))
                    || !self.out.is_real(&e.ty.ty)
                {
                    return self.diff.is_diff_ref(&self.out, e);
                }
                let after = self.active_after();
                self.zones_of(e).iter().any(|z| after.contains(z))
            }
            _ => false,
        }
    }

    fn is_diff_formal(&self, proc: ProcId, i: usize) -> bool {
        if !self.dprocs.contains_key(&proc) {
            return false;
        }
        if let Some(&known) = self.diff_formals.borrow().get(&(proc, i)) {
            return known;
        }
        let p = self.program.proc(proc);
        let sym = p.params[i];
        let ty = &self.program.sym(sym).ty.ty;
        // `tangent/call-frees`: a `void *` formal that a freeing helper
        // releases (`release(void *p)`) gets the derivative buffer, to
        // release it too.
        let untyped_freed = matches!(self.out.resolve(ty), Type::Pointer(t)
            if matches!(self.out.resolve(&t.ty), Type::Void))
            && self.diff.frees.contains(&proc);
        let answer = (self.out.contains_real(ty) || untyped_freed)
            && (self.a.is_diff_formal_arg(proc, i) || self.diff.syms.contains(&sym));
        self.diff_formals.borrow_mut().insert((proc, i), answer);
        answer
    }

    /// `tangent/pointer-result`: a call storing a pointer result that
    /// has a derivative pointer: active even where no value is, since
    /// only `P_d` gives the derivative pointer.
    fn sets_derivative_pointer(&self, s: &Stmt) -> bool {
        self.diff.sets_derivative_pointer(&self.out, s)
            && matches!(&s.kind, StmtKind::Call { callee, .. } if self.result_is_diff(*callee))
    }

    fn result_is_diff(&self, proc: ProcId) -> bool {
        let ret = &self.program.proc(proc).ret;
        let real = match self.out.resolve(&ret.ty) {
            // `tangent/pointer-result`
            Type::Pointer(t) => self.out.contains_real(&t.ty),
            _ => self.out.contains_real(&ret.ty),
        };
        self.dprocs.contains_key(&proc) && real && self.diff.results.contains(&proc)
    }

    /// The derivative reference of `e` (`ref` relation's result when built
    /// directly, for resets).
    fn zone_lvalue(&mut self, z: Zone, scope: ScopeId) -> Option<Expr> {
        let info = self.a.locs.zone(z).clone();
        if info.atom || !info.real || info.pointer {
            return None;
        }
        // A scalar target of a pointer parameter of this procedure: `*pd`.
        if let ObjKind::Target {
            proc: Some(p),
            pointer,
        } = self.a.locs.object(info.obj).kind.clone()
        {
            let pinfo = self.a.locs.zone(pointer).clone();
            let ObjKind::Var(ps) = self.a.locs.object(pinfo.obj).kind.clone() else {
                return None;
            };
            if p != self.proc || !pinfo.path.is_empty() {
                return None;
            }
            let &d = self.dsyms.get(&ps)?;
            let pd = self.var(d);
            let Type::Pointer(t) = self.out.resolve(&pd.ty.ty).clone() else {
                return None;
            };
            let span = self.span();
            let mut e = Expr::new(ExprKind::Deref(Box::new(pd)), (*t).clone(), span);
            let mut ty = pointee_of(self.program, &self.program.sym(ps).ty)?;
            for &i in &info.path {
                let Type::Struct(sid) = self.program.resolve(&ty.ty).clone() else {
                    return None;
                };
                if !self.diff.fields.contains(&(sid, i)) {
                    return None;
                }
                let f = &self.program.strukt(sid).fields[i];
                ty = f.ty.clone();
                e = self.field(e, &f.name.clone()).ok()?;
            }
            if ty.is_const || !self.program.is_real(&ty.ty) {
                return None;
            }
            return Some(e);
        }
        let ObjKind::Var(s) = self.a.locs.object(info.obj).kind.clone() else {
            return None;
        };
        if !self.diff.syms.contains(&s) {
            return None;
        }
        // Only what this procedure can name: its own locals and globals,
        // and its `static` locals (interface zones, `loc/static-local`,
        // owned by no procedure: their derivative keeps its value from
        // call to call, so a reset is as needed as a global's).
        let sym = self.program.sym(s);
        let own_static = sym.storage == Storage::Static
            && self.scope_encloses(self.program.proc(self.proc).scope, sym.scope);
        if sym.kind != SymKind::Global
            && !own_static
            && self.a.locs.object(info.obj).owner != Some(self.proc)
        {
            return None;
        }
        // A local declared inside the construct is out of scope here (and
        // starts at zero each time it is declared).
        if sym.kind != SymKind::Global && !self.scope_encloses(sym.scope, scope) {
            return None;
        }
        let d = self.dsym(s);
        let mut e = self.var(d);
        let mut ty = self.program.sym(s).ty.clone();
        for &i in &info.path {
            let Type::Struct(sid) = self.out.resolve(&ty.ty).clone() else {
                return None;
            };
            if !self.diff.fields.contains(&(sid, i)) {
                return None;
            }
            let f = &self.program.strukt(sid).fields[i];
            ty = f.ty.clone();
            e = self.field(e, &f.name.clone()).ok()?;
        }
        if !self.out.is_real(&ty.ty) {
            return None;
        }
        Some(e)
    }

    fn scope_encloses(&self, outer: ScopeId, mut inner: ScopeId) -> bool {
        loop {
            if inner == outer {
                return true;
            }
            match self.program.scopes[inner.index()].parent {
                Some(p) => inner = p,
                None => return false,
            }
        }
    }

    /// The scope around a statement list's first statement, or around the
    /// current statement when the list is empty.
    fn scope_at(&self, first: Option<&Stmt>) -> ScopeId {
        let s = first.or(self.stmt());
        s.and_then(|s| self.varied.scope.get(&s.id).copied())
            .unwrap_or_else(|| {
                self.program
                    .proc(self.proc)
                    .body
                    .as_ref()
                    .map(|b| b.scope)
                    .unwrap_or(self.program.global_scope)
            })
    }

    fn field(&self, base: Expr, name: &str) -> Result<Expr, ApplyError> {
        field_of(&self.out, base, name, self.span())
    }

    /// `tangent/reset-merge`: `zd = 0` for the zones varied at a merge but
    /// not on the edge reaching it (their derivative is implicit zero).
    fn resets(&mut self, at_merge: &Set, on_edge: &Set, scope: ScopeId) -> Vec<Stmt> {
        if !self.opts.implicit_zero {
            return Vec::new();
        }
        let mut out = Vec::new();
        for &z in at_merge.difference(on_edge) {
            if let Some(lv) = self.zone_lvalue(z, scope) {
                let zero = self.real(0.0, lv.ty.clone());
                out.push(self.mk_stmt(StmtKind::Assign {
                    lhs: lv,
                    rhs: zero,
                    sugar: AssignSugar::Plain,
                }));
            }
        }
        out
    }

    /// `tangent/reset-merge` at the procedure's entry: a global array (or
    /// a global's array member) that no call varies before it enters, but
    /// that the procedure varies, has a derivative whose storage holds
    /// what the last call left there (an array's zone is never killed, so
    /// no assignment resets it before it is first read): it is set to
    /// zero here, element by element.
    fn entry_resets(&mut self) -> Vec<Stmt> {
        if !self.opts.implicit_zero {
            return Vec::new();
        }
        let entry = self
            .a
            .results
            .get(&self.proc)
            .map(|r| r.varied_entry.clone())
            .unwrap_or_default();
        let mut later = self.varied.exit.clone();
        for set in self.varied.before.values() {
            later.extend(set.iter().copied());
        }
        let mut zones: Vec<Zone> = later.difference(&entry).copied().collect();
        zones.sort();
        let mut out = Vec::new();
        for z in zones {
            let info = self.a.locs.zone(z).clone();
            if !info.atom || !info.real || info.pointer {
                continue;
            }
            let ObjKind::Var(s) = self.a.locs.object(info.obj).kind.clone() else {
                continue;
            };
            if self.program.sym(s).kind != SymKind::Global || !self.diff.syms.contains(&s) {
                continue;
            }
            let d = self.dsym(s);
            let lv = self.var(d);
            let ty = self.program.sym(s).ty.clone();
            let path = info.path.clone();
            out.extend(self.zero_zone(lv, &ty, &path, false));
        }
        out
    }

    /// `lv = 0` over the part of a derivative that the zone path `path`
    /// (field indices of the original type `ty`) selects, in every element
    /// of the arrays on the way (`prd[k].a` for the zone `pr[].a`); only a
    /// part under an array (`arrayed`) or an array itself is zeroed here,
    /// a scalar being `tangent/reset-merge`'s at the merges.
    fn zero_zone(&mut self, lv: Expr, ty: &QualType, path: &[usize], arrayed: bool) -> Vec<Stmt> {
        match self.program.resolve(&ty.ty).clone() {
            Type::Array { elem, len } => {
                let Some(n) = len.as_ref().and_then(|l| l.value) else {
                    return Vec::new();
                };
                self.counted_loop(n as i64, lv, |host, element| {
                    host.zero_zone(element, &elem, path, true)
                })
            }
            Type::Struct(sid) if !path.is_empty() => {
                if !self.diff.fields.contains(&(sid, path[0])) {
                    return Vec::new();
                }
                let f = self.program.strukt(sid).fields[path[0]].clone();
                match self.field(lv, &f.name) {
                    Ok(e) => self.zero_zone(e, &f.ty, &path[1..], arrayed),
                    Err(_) => Vec::new(),
                }
            }
            _ if arrayed => self.zero_elements(lv),
            _ => Vec::new(),
        }
    }

    /// `for (int k = 0; k < n; k++) { body(base[k]) }`, nothing when the
    /// body is empty.
    fn counted_loop(
        &mut self,
        n: i64,
        base: Expr,
        body: impl FnOnce(&mut Self, Expr) -> Vec<Stmt>,
    ) -> Vec<Stmt> {
        let int = Expr::int;
        let Type::Array { elem, .. } = self.out.resolve(&base.ty.ty).clone() else {
            return Vec::new();
        };
        let Ok((k, mut decl)) = self.temp(&QualType::int(), "k") else {
            return Vec::new();
        };
        if let StmtKind::Decl { vars, .. } = &mut decl.kind {
            vars[0].init = Some(Init::Expr(int(0, self.span())));
        }
        let span = self.span();
        let element = Expr::new(
            ExprKind::Index {
                base: Box::new(base),
                index: Box::new(k.clone()),
            },
            (*elem).clone(),
            span,
        );
        let stmts = body(self, element);
        if stmts.is_empty() {
            return Vec::new();
        }
        let cond = self.binary(BinOp::Lt, k.clone(), int(n, span));
        let next = self.binary(BinOp::Add, k.clone(), int(1, span));
        let scope = self.scope_at(None);
        vec![self.mk_stmt(StmtKind::Loop {
            header: LoopHeader::For {
                init: vec![decl],
                cond: Some(cond),
                step: vec![self.mk_stmt(StmtKind::Assign {
                    lhs: k,
                    rhs: next,
                    sugar: AssignSugar::Increment,
                })],
            },
            body: Block {
                stmts,
                scope,
                closing_comments: Vec::new(),
                span,
            },
        })]
    }

    /// `lv = 0` over every real of a derivative array: a loop per
    /// dimension, a field at a time for an element of a `T_d` struct
    /// (pointer members are left alone: they point to the user's buffers).
    fn zero_elements(&mut self, lv: Expr) -> Vec<Stmt> {
        match self.out.resolve(&lv.ty.ty).clone() {
            Type::Real(_) => {
                let zero = self.real(0.0, lv.ty.clone());
                vec![self.mk_stmt(StmtKind::Assign {
                    lhs: lv,
                    rhs: zero,
                    sugar: AssignSugar::Plain,
                })]
            }
            Type::Struct(sid) => {
                let fields: Vec<String> = self.out.structs[sid.index()]
                    .fields
                    .iter()
                    .map(|f| f.name.clone())
                    .collect();
                let mut out = Vec::new();
                for name in fields {
                    if let Ok(f) = self.field(lv.clone(), &name) {
                        out.extend(self.zero_elements(f));
                    }
                }
                out
            }
            Type::Array { len, .. } => {
                let Some(n) = len.as_ref().and_then(|l| l.value) else {
                    return Vec::new();
                };
                self.counted_loop(n as i64, lv, |host, element| host.zero_elements(element))
            }
            _ => Vec::new(),
        }
    }

    fn mk_stmt(&self, kind: StmtKind) -> Stmt {
        Stmt {
            id: StmtId(0),
            kind,
            span: self.span(),
            comments: Default::default(),
        }
    }

    fn tag(&self, mut code: Vec<Stmt>, rule: &str) -> Vec<Stmt> {
        if self.opts.explain {
            for s in &mut code {
                if s.comments
                    .trailing
                    .as_deref()
                    .is_none_or(|t| !t.contains("/* tangent/") && !t.contains("/* deriv/"))
                {
                    let tag = format!("/* {rule} */");
                    s.comments.trailing = Some(match s.comments.trailing.take() {
                        Some(t) => format!("{tag} {t}"),
                        None => tag,
                    });
                }
            }
        }
        code
    }

    fn block_like(&self, b: &Block, stmts: Vec<Stmt>) -> Block {
        Block {
            stmts,
            scope: b.scope,
            closing_comments: b.closing_comments.clone(),
            span: b.span,
        }
    }

    /// The derivative of an intrinsic call by the chain rule
    /// (`tangent/d-intrinsic`, partials from `rules/derivatives.rules`).
    fn chain(
        &mut self,
        name: &str,
        args: &[Expr],
        dargs: Vec<Expr>,
        rule: &str,
    ) -> Result<Expr, ApplyError> {
        let Some(d) = self.rules.derivatives.get(name).cloned() else {
            return Err(ApplyError::new(format!(
                "no derivative is known for '{name}'"
            )));
        };
        self.trace.insert(d.id.clone());
        let ty = args
            .first()
            .map(|a| a.ty.clone())
            .unwrap_or_else(QualType::double);
        let mut total: Option<Expr> = None;
        for (i, da) in dargs.into_iter().enumerate() {
            if is_zero(&da) {
                continue;
            }
            let mut env: Vec<(String, Val<'a>)> = d
                .params
                .iter()
                .cloned()
                .zip(args.iter().map(|a| Val::New(a.clone())))
                .collect();
            env.reverse();
            let partial = self.instantiate_partial(&d.partials[i], &env, rule)?;
            let mut term = if is_one(&partial) {
                da.clone()
            } else {
                self.binary(BinOp::Mul, partial, da.clone())
            };
            // Where the singular condition is known false (`pow(x, 3.0)`:
            // `x == 0 && 3.0 < 1`), the partial is finite everywhere.
            let never_singular = match d.singular.get(i) {
                Some(c) => {
                    let c = self.instantiate_partial(c, &env, rule)?;
                    super::names::decided(&c) == Some(false)
                }
                None => false,
            };
            if d.guarded && !never_singular {
                // `deriv/...` marked guarded: the partial is infinite at a
                // finite point; a zero direction must still give zero.
                let zero = self.real(0.0, da.ty.clone());
                let test = self.binary(BinOp::Eq, da, zero.clone());
                let ty = term.ty.clone();
                let span = self.span();
                term = Expr::new(
                    ExprKind::Cond {
                        cond: Box::new(test),
                        then: Box::new(zero),
                        other: Box::new(term),
                    },
                    ty,
                    span,
                );
            }
            total = Some(match total {
                None => term,
                Some(t) => self.binary(BinOp::Add, t, term),
            });
        }
        Ok(total.unwrap_or_else(|| self.real(0.0, ty)))
    }

    fn instantiate_partial(
        &mut self,
        t: &Tmpl,
        env: &[(String, Val<'a>)],
        rule: &str,
    ) -> Result<Expr, ApplyError> {
        let v = self.instantiate_val(t, env, rule)?;
        self.expr_of(&v)
    }

    fn instantiate_val(
        &mut self,
        t: &Tmpl,
        env: &[(String, Val<'a>)],
        rule: &str,
    ) -> Result<Val<'a>, ApplyError> {
        Ok(match t {
            Tmpl::Var(v) => env
                .iter()
                .find(|(n, _)| n == v)
                .map(|(_, x)| x.clone())
                .ok_or_else(|| ApplyError::new(format!("unbound ?{v} in a derivative entry")))?,
            Tmpl::Atom(a) => Val::Atom(a.as_str().into()),
            Tmpl::Num(x) => Val::Num(*x),
            Tmpl::Node(h, kids, _) => {
                let mut args = Vec::new();
                for k in kids {
                    args.push(self.instantiate_val(k, env, rule)?);
                }
                let node = Val::Atom("derivative".into());
                self.build(h, args, &node, rule)?
            }
        })
    }

    /// Assembles the output program (`tangent/output`).
    fn finish(
        mut self,
        diff_procs: &[ProcId],
        type_items: HashMap<usize, Vec<ItemKind>>,
    ) -> Program {
        let program = self.program;
        let mut items = Vec::new();
        let main = program.main_file;
        let dglobals: BTreeMap<SymId, SymId> = self
            .dsyms
            .iter()
            .filter(|(s, _)| program.sym(**s).kind == SymKind::Global)
            .map(|(a, b)| (*a, *b))
            .collect();
        let mut declared_dglobals = HashSet::default();
        let generated: Vec<ProcId> = self.dprocs.values().copied().collect();
        super::specialize::call_originals(&mut self.out, &generated);
        // Static functions of the original that the output calls, directly
        // or through other copies, are copied; the others are left out.
        let needed = super::reached_from(&self.out, self.dprocs.values().copied());
        for (i, item) in program.items.iter().enumerate() {
            match &item.kind {
                ItemKind::Function(p) => {
                    let p = *p;
                    if let Some(&d) = self.dprocs.get(&p) {
                        if program.proc(p).storage == Storage::Static {
                            if needed.contains(&p) {
                                items.push(item.clone());
                            }
                        } else {
                            items.push(Item {
                                kind: ItemKind::Prototype(p),
                                comments: Default::default(),
                                ..item.clone()
                            });
                        }
                        // Generated code is the output's own even for a
                        // procedure of an included header (whose items the
                        // `#include` line stands for).
                        if diff_procs.contains(&p) {
                            items.push(Item {
                                kind: ItemKind::Function(d),
                                file: main,
                                ..item.clone()
                            });
                        }
                    } else if program.proc(p).storage == Storage::Static {
                        if needed.contains(&p) {
                            items.push(item.clone());
                        }
                    } else {
                        items.push(Item {
                            kind: ItemKind::Prototype(p),
                            comments: Default::default(),
                            ..item.clone()
                        });
                    }
                    for c in super::specialize::copies_of(program, p) {
                        if let (true, Some(&d)) = (diff_procs.contains(&c), self.dprocs.get(&c)) {
                            items.push(Item {
                                kind: ItemKind::Function(d),
                                comments: Default::default(),
                                file: main,
                                ..item.clone()
                            });
                        }
                    }
                }
                ItemKind::Globals {
                    base,
                    storage,
                    vars,
                } if item.file == main => {
                    // The original translation unit defines these; the
                    // output only declares them (`tangent/output`).
                    let keep_definition = *storage == Storage::Static;
                    items.push(Item {
                        kind: ItemKind::Globals {
                            base: base.clone(),
                            storage: if keep_definition {
                                *storage
                            } else {
                                Storage::Extern
                            },
                            vars: vars
                                .iter()
                                .map(|v| Declarator {
                                    sym: v.sym,
                                    init: if keep_definition {
                                        v.init.clone()
                                    } else {
                                        None
                                    },
                                })
                                .collect(),
                        },
                        ..item.clone()
                    });
                    let mut dvars = Vec::new();
                    for v in vars {
                        if let Some(&d) = dglobals.get(&v.sym) {
                            let init =
                                super::derivative_pointer_init(program, &self.out, v.sym, &|s| {
                                    dglobals.get(&s).copied()
                                });
                            dvars.push(Declarator { sym: d, init });
                            declared_dglobals.insert(d);
                        }
                    }
                    if !dvars.is_empty() {
                        let base = self.types.of(&self.out, base);
                        items.push(Item {
                            kind: ItemKind::Globals {
                                base: QualType {
                                    is_const: false,
                                    ..base
                                },
                                storage: if keep_definition {
                                    Storage::Static
                                } else {
                                    Storage::Auto
                                },
                                vars: dvars,
                            },
                            comments: Default::default(),
                            ..item.clone()
                        });
                    }
                }
                _ => items.push(item.clone()),
            }
            if let Some(extra) = type_items.get(&i) {
                for k in extra {
                    items.push(Item {
                        kind: k.clone(),
                        comments: Default::default(),
                        file: main,
                        ..item.clone()
                    });
                }
            }
        }
        // Derivatives of globals declared in headers are defined here.
        for (&s, &d) in &dglobals {
            if !declared_dglobals.contains(&d) {
                let sym = &self.out.symbols[d.index()];
                let span = program.sym(s).span;
                items.push(Item {
                    kind: ItemKind::Globals {
                        base: sym.ty.clone(),
                        storage: Storage::Auto,
                        vars: vec![Declarator { sym: d, init: None }],
                    },
                    span,
                    comments: Default::default(),
                    file: main,
                });
            }
        }
        let dprocs: Vec<ProcId> = self.dprocs.values().copied().collect();
        super::declare_before_use(&self.out, &dprocs.iter().copied().collect(), &mut items);
        super::define_globals_before_use(
            &self.out,
            &dprocs.iter().copied().collect(),
            &dglobals.values().copied().collect(),
            &mut items,
        );
        super::drop_undefined_static_prototypes(&self.out, &mut items);
        super::drop_unused_static_globals(&self.out, &mut items);
        super::mention_uncalled_header_statics(
            &mut self.out,
            &dprocs.iter().copied().collect(),
            &items,
        );
        add_digamma_if_called(
            &self.out,
            &dprocs,
            &mut items,
            program.proc(diff_procs[0]).span,
            main,
        );
        let families: Vec<(ProcId, ProcId, u8)> = self
            .dprocs
            .iter()
            .map(|(&p, &d)| (d, program.specialized.get(&p).copied().unwrap_or(p), 0))
            .collect();
        super::merge_identical_copies(&mut self.out, &mut items, &families);
        self.out.items = items;
        for p in &mut self.out.procs {
            p.origin = if p.origin == ProcOrigin::System {
                ProcOrigin::System
            } else {
                ProcOrigin::User
            };
        }
        self.out
    }
}

/// Puts `comments` before a statement's own leading comments.
fn prepend_comments(st: &mut Stmt, mut comments: Vec<String>) {
    comments.append(&mut st.comments.leading);
    st.comments.leading = comments;
}

/// The refusal of an active call of an external function without
/// partials (`tangent/call-external-unknown`,
/// `adjoint/call-external-unknown`), with an entry to fill in.
pub(crate) fn no_derivative_message(program: &Program, callee: ProcId) -> String {
    let proc = program.proc(callee);
    let name = &proc.name;
    let arity = proc.params.len().max(1);
    let vars: Vec<String> = (0..arity).map(|i| format!("?X{}", i + 1)).collect();
    let partials = vec!["(...)"; arity].join(", ");
    format!(
        "no derivative is known for external function '{name}': give one with --rules FILE, \
         e.g. `derivative user/{name} ({name} {}) : {partials}` (one partial per argument)",
        vars.join(" ")
    )
}

/// Inserts the digamma helper after the last `#include` when a derivative
/// of lgamma or tgamma in one of `procs` calls it.
pub(super) fn add_digamma_if_called(
    out: &Program,
    procs: &[ProcId],
    items: &mut Vec<Item>,
    fallback: Span,
    main: crate::front::source::FileId,
) {
    let mut uses_digamma = false;
    for &d in procs {
        if let Some(b) = &out.proc(d).body {
            crate::il::visit_stmts(&b.stmts, &mut |st| {
                for e in super::names::stmt_exprs(st) {
                    uses_digamma |= calls_digamma(e);
                }
            });
        }
    }
    if !uses_digamma {
        return;
    }
    let at = items
        .iter()
        .rposition(|i| {
            matches!(
                i.kind,
                ItemKind::SystemInclude(_) | ItemKind::LocalInclude { .. }
            )
        })
        .map(|i| i + 1)
        .unwrap_or(0);
    let span = items.first().map(|i| i.span).unwrap_or(fallback);
    items.insert(
        at,
        Item {
            kind: ItemKind::MacroLine(DIGAMMA_C.to_string()),
            span,
            comments: Default::default(),
            file: main,
        },
    );
}

/// The digamma function ψ = lgamma′ in C, for the derivatives of `lgamma`
/// and `tgamma` (`deriv/lgamma`): the recurrence ψ(x) = ψ(x + 1) − 1/x up
/// to x ≥ 10, then the asymptotic series; the same algorithm as the
/// interpreter's `interp::real::digamma`.
const DIGAMMA_C: &str = "\
/* The digamma function (derivative of lgamma), written by aioli. */
static double aioli_digamma(double x)
{
    double result = 0.0;
    if (x <= 0.0) {
        if (x == floor(x)) {
            return (x - x) / (x - x);
        }
        return aioli_digamma(1.0 - x) - 3.14159265358979323846 / tan(3.14159265358979323846 * x);
    }
    while (x < 10.0) {
        result -= 1.0 / x;
        x += 1.0;
    }
    double f = 1.0 / (x * x);
    double series = f * (1.0 / 12.0 - f * (1.0 / 120.0 - f * (1.0 / 252.0 - f * (1.0 / 240.0 - f / 132.0))));
    return result + log(x) - 0.5 / x - series;
}";

/// C's universal zero initialiser `{0}`.
fn universal_zero(span: Span) -> Init {
    Init::List(
        vec![Init::Expr(Expr::new(
            ExprKind::IntConst {
                value: 0,
                text: "0".into(),
            },
            QualType::int(),
            span,
        ))],
        span,
    )
}

fn is_universal_zero(init: &Init) -> bool {
    matches!(init, Init::List(items, _) if matches!(items.as_slice(),
        [Init::Expr(Expr { kind: ExprKind::IntConst { value: 0, .. }, .. })]))
}

/// `tangent/actual-dummy`: the type of the variable a zero dummy for the
/// pointer argument `e` stands for: a fixed-size array for `w` and
/// `&w[i]` (the callee may read `w[i]`, `w[i+1]`, …), the referenced
/// type for any other `&r`; `None` when the extent of the memory is not
/// known here (a pointer parameter, the heap).
pub(crate) fn dummy_extent<'p>(program: &'p Program, e: &'p Expr) -> Option<&'p QualType> {
    let fixed_array = |v: SymId| {
        let ty = &program.sym(v).ty;
        match program.resolve(&ty.ty) {
            Type::Array { len: Some(l), .. } if l.value.is_some() => Some(ty),
            _ => None,
        }
    };
    match &e.kind {
        ExprKind::AddrOf(r) => match &r.kind {
            ExprKind::Index { base, .. } => match &base.kind {
                ExprKind::Var(v) => fixed_array(*v),
                _ => None,
            },
            _ => Some(&r.ty),
        },
        ExprKind::Var(v) => fixed_array(*v),
        _ => None,
    }
}

fn calls_digamma(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Intrinsic { call, args } => {
            call.func == MathFn::Digamma || args.iter().any(calls_digamma)
        }
        ExprKind::Index { base, index } => calls_digamma(base) || calls_digamma(index),
        ExprKind::Field { base, .. } => calls_digamma(base),
        ExprKind::Deref(x)
        | ExprKind::AddrOf(x)
        | ExprKind::Unary { arg: x, .. }
        | ExprKind::Cast { arg: x, .. } => calls_digamma(x),
        ExprKind::Binary { lhs, rhs, .. } => calls_digamma(lhs) || calls_digamma(rhs),
        ExprKind::Cond { cond, then, other } => {
            calls_digamma(cond) || calls_digamma(then) || calls_digamma(other)
        }
        _ => false,
    }
}

/// The variables whose address a call passes as an argument (`&g`,
/// `&g[2]`, `&g.f`, an array `g`).
fn global_addresses(s: &Stmt) -> Vec<(usize, SymId)> {
    fn root(e: &Expr) -> Option<SymId> {
        match &e.kind {
            ExprKind::Var(v) => Some(*v),
            ExprKind::Index { base, .. } => root(base),
            ExprKind::Field { base, .. } => root(base),
            _ => None,
        }
    }
    fn address(e: &Expr) -> Option<SymId> {
        match &e.kind {
            ExprKind::Var(v) if matches!(e.ty.ty, Type::Array { .. }) => Some(*v),
            ExprKind::Cast { arg, .. } => address(arg),
            ExprKind::AddrOf(r) => root(r),
            _ => None,
        }
    }
    let StmtKind::Call { args, .. } = &s.kind else {
        return Vec::new();
    };
    args.iter()
        .enumerate()
        .filter_map(|(k, e)| address(e).map(|v| (k, v)))
        .collect()
}

/// The pairs of argument positions of a call that pass the same address
/// (`y` and `&y[0]`, `p + 1` and `&p[1]`), or with `same_base` addresses
/// into the same variable (`a` and `a + 1`, `&x[i]` and `&x[j]`); the
/// flag tells the same address.
pub(crate) fn overlapping_arguments(s: &Stmt, same_base: bool) -> Vec<(usize, usize, bool)> {
    // An offset `i + k` as (i, k), `k` as (None, k); `None` when it has
    // another form.
    type Offset = Option<(Option<SymId>, i64)>;
    fn linear(e: &Expr) -> Offset {
        match &e.kind {
            ExprKind::IntConst { value, .. } => Some((None, *value)),
            ExprKind::Var(v) => Some((Some(*v), 0)),
            ExprKind::Cast { arg, .. } => linear(arg),
            ExprKind::Binary { op, lhs, rhs } => match (op, linear(lhs)?, linear(rhs)?) {
                (BinOp::Add, (Some(v), a), (None, b)) | (BinOp::Add, (None, a), (Some(v), b)) => {
                    Some((Some(v), a.checked_add(b)?))
                }
                (BinOp::Sub, (Some(v), a), (None, b)) => Some((Some(v), a.checked_sub(b)?)),
                _ => None,
            },
            _ => None,
        }
    }
    // The variable an argument points into, and the offset.
    fn address(e: &Expr) -> Option<(SymId, Offset)> {
        match &e.kind {
            ExprKind::Var(v) => Some((*v, Some((None, 0)))),
            ExprKind::Cast { arg, .. } => address(arg),
            ExprKind::AddrOf(r) => match &r.kind {
                ExprKind::Index { base, index } => match &base.kind {
                    ExprKind::Var(v) => Some((*v, linear(index))),
                    _ => None,
                },
                ExprKind::Var(v) => Some((*v, Some((None, 0)))),
                _ => None,
            },
            ExprKind::Binary {
                op: op @ (BinOp::Add | BinOp::Sub),
                lhs,
                rhs,
            } => match &lhs.kind {
                ExprKind::Var(v) => {
                    let offset = match (op, linear(rhs)) {
                        (BinOp::Add, k) => k,
                        (_, Some((None, k))) => Some((None, k.checked_neg()?)),
                        _ => None,
                    };
                    Some((*v, offset))
                }
                _ => None,
            },
            _ => None,
        }
    }
    let StmtKind::Call { args, .. } = &s.kind else {
        return Vec::new();
    };
    // Values passed by value are copies: only pointers can overlap.
    let addrs: Vec<(usize, (SymId, Offset))> = args
        .iter()
        .enumerate()
        .filter(|(_, a)| {
            matches!(a.ty.ty, Type::Pointer(_) | Type::Array { .. })
                || matches!(a.kind, ExprKind::AddrOf(_))
        })
        .filter_map(|(k, a)| address(a).map(|ad| (k, ad)))
        .collect();
    let mut pairs = Vec::new();
    for (n, (i, a)) in addrs.iter().enumerate() {
        for (j, b) in &addrs[n + 1..] {
            let certain = a.1.is_some() && a == b;
            if certain || (same_base && a.0 == b.0) {
                pairs.push((*i, *j, certain));
            }
        }
    }
    pairs
}

fn pointee_of(program: &Program, ty: &QualType) -> Option<QualType> {
    match program.resolve(&ty.ty) {
        Type::Pointer(t) => Some((**t).clone()),
        _ => None,
    }
}

fn collect_syms(e: &Expr, out: &mut HashSet<SymId>) {
    match &e.kind {
        ExprKind::Var(s) => {
            out.insert(*s);
        }
        ExprKind::Index { base, index } => {
            collect_syms(base, out);
            collect_syms(index, out);
        }
        ExprKind::Field { base, .. } => collect_syms(base, out),
        ExprKind::Deref(x)
        | ExprKind::AddrOf(x)
        | ExprKind::Unary { arg: x, .. }
        | ExprKind::Cast { arg: x, .. } => collect_syms(x, out),
        ExprKind::SizeOfExpr(x) => collect_syms(x, out),
        ExprKind::Binary { lhs, rhs, .. } => {
            collect_syms(lhs, out);
            collect_syms(rhs, out);
        }
        ExprKind::Intrinsic { args, .. } => args.iter().for_each(|a| collect_syms(a, out)),
        ExprKind::Cond { cond, then, other } => {
            collect_syms(cond, out);
            collect_syms(then, out);
            collect_syms(other, out);
        }
        _ => {}
    }
}

pub(super) fn is_zero(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::RealConst { value, .. } => *value == 0.0,
        ExprKind::IntConst { value, .. } => *value == 0,
        _ => false,
    }
}

pub(super) fn is_one(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::RealConst { value, .. } => *value == 1.0,
        ExprKind::IntConst { value, .. } => *value == 1,
        _ => false,
    }
}

impl<'x, 'a> Host for TangentHost<'x, 'a> {
    type Val = Val<'a>;

    fn view(&self, v: &Val<'a>) -> View<Val<'a>> {
        match v {
            Val::Proc(p) => {
                let proc = self.program.proc(*p);
                match &proc.body {
                    Some(b) => View::Node(
                        "function",
                        vec![Val::Proc(*p), Val::Formals(*p, 0), Val::Stmts(&b.stmts)],
                    ),
                    None => View::Opaque,
                }
            }
            Val::Formals(p, i) => {
                if *i < self.program.proc(*p).params.len() {
                    View::Cons(Val::Formal(*p, *i), Val::Formals(*p, i + 1))
                } else {
                    View::Nil
                }
            }
            Val::Stmts(list) => match list.split_first() {
                Some((h, t)) => View::Cons(Val::Stmt(h), Val::Stmts(t)),
                None => View::Nil,
            },
            Val::Cases(list) => match list.split_first() {
                Some((h, t)) => View::Cons(Val::Case(h), Val::Cases(t)),
                None => View::Nil,
            },
            Val::Decls(list) => match list.split_first() {
                Some((h, t)) => View::Cons(Val::Declarator(h), Val::Decls(t)),
                None => View::Nil,
            },
            Val::Inits(list) => match list.split_first() {
                Some((h, t)) => View::Cons(Val::Init(h), Val::Inits(t)),
                None => View::Nil,
            },
            Val::Exprs(list) => match list.split_first() {
                Some((h, t)) => View::Cons(Val::Expr(h), Val::Exprs(t)),
                None => View::Nil,
            },
            Val::Args(s, i) => {
                let n = match &s.kind {
                    StmtKind::Call { args, .. } => args.len(),
                    _ => 0,
                };
                if *i < n {
                    View::Cons(Val::Arg(s, *i), Val::Args(s, i + 1))
                } else {
                    View::Nil
                }
            }
            Val::Case(c) => View::Node("case", vec![Val::Stmts(&c.body)]),
            Val::Declarator(d) => View::Node(
                "var",
                vec![
                    Val::Sym(d.sym),
                    match &d.init {
                        Some(i) => Val::Init(i),
                        None => Val::Atom("none".into()),
                    },
                ],
            ),
            Val::Init(Init::Expr(e)) => self.view(&Val::Expr(e)),
            Val::Init(Init::List(items, _)) => View::Node("init-list", vec![Val::Inits(items)]),
            Val::Stmt(s) => self.view_stmt(s),
            Val::Expr(e) => self.view_expr(e),
            Val::Arg(s, i) => self.view_expr(self.arg_expr(s, *i)),
            Val::Atom(a) => View::Atom(a.to_string()),
            Val::Num(x) => View::Num(*x),
            Val::List(items) => match items.split_first() {
                Some((h, t)) => View::Cons(h.clone(), Val::List(t.to_vec())),
                None => View::Nil,
            },
            _ => View::Opaque,
        }
    }

    fn describe(&self, v: &Val<'a>) -> String {
        match v {
            Val::Stmt(s) => format!(
                "the statement at byte {} ({:?})",
                s.span.lo,
                std::mem::discriminant(&s.kind)
            ),
            Val::Expr(e) => format!("an expression at byte {}", e.span.lo),
            Val::Proc(p) => format!("procedure '{}'", self.program.proc(*p).name),
            Val::Sym(s) => format!("variable '{}'", self.program.sym(*s).name),
            Val::Arg(_, i) => format!("argument {}", i + 1),
            Val::Atom(a) => format!("'{a}'"),
            Val::Num(x) => format!("{x}"),
            Val::Code(_) => "statements".into(),
            Val::New(_) => "a built expression".into(),
            Val::List(_) => "a list".into(),
            _ => "a term".into(),
        }
    }

    fn fired(&mut self, rule: &str) {
        self.trace.insert(rule.to_string());
    }

    fn atom(&self, name: &str) -> Val<'a> {
        Val::Atom(name.into())
    }

    fn num(&self, x: f64) -> Val<'a> {
        Val::Num(x)
    }

    fn enter(&mut self, _relation: &str, node: &Val<'a>) {
        if let Val::Stmt(s) = node {
            self.stmts.push(s);
            // An error is reported at the statement last entered.
            self.error_span = Some(s.span);
        }
    }

    fn leave(&mut self, _relation: &str, node: &Val<'a>) {
        if let Val::Stmt(_) = node {
            self.stmts.pop();
        }
    }

    fn guard(&mut self, name: &str, args: &[Val<'a>], node: &Val<'a>) -> Result<bool, ApplyError> {
        let subject = args.first().unwrap_or(node);
        let r = match name {
            "isLiveForDiff" => match self.stmt() {
                Some(s) => self.is_live(s),
                None => true,
            },
            "isActiveCall" => self.stmt().is_some_and(|s| {
                self.a.is_active_call(self.proc, s.id)
                    || self.sets_derivative_pointer(s)
                    || self.diff.frees_derivative(&self.out, s)
                    || self.diff.moves_derivative_pointers(&self.out, s)
            }),
            "isActiveExpr" => {
                // What is not an expression is an error, as in `isPointer`.
                let e = self.expr_ref(subject)?;
                match subject {
                    Val::Expr(orig) => self.is_active_expr(orig),
                    Val::Arg(s, i) => self.is_active_expr(self.arg_expr(s, *i)),
                    Val::Init(Init::Expr(orig)) => self.is_active_expr(orig),
                    _ => !is_zero(&e),
                }
            }
            "isDiff" => self.is_diff_val(subject),
            "isActiveAfter" => self.derivative_needed_after(subject),
            "isRef" => match subject {
                Val::Expr(e) => self.a.is_ref(e),
                Val::Arg(s, i) => self.a.is_ref(self.arg_expr(s, *i)),
                Val::Init(Init::Expr(e)) => self.a.is_ref(e),
                _ => false,
            },
            "isPointer" => {
                let e = self.expr_ref(subject)?;
                is_pointer(&self.out, &e.ty)
            }
            "isNullPointer" => {
                let e = self.expr_ref(subject)?;
                matches!(e.kind, ExprKind::IntConst { value: 0, .. })
            }
            // A pointer, or an array standing for its first element's address.
            "isAddress" => {
                let e = self.expr_ref(subject)?;
                super::names::is_address(&self.out, &e.ty)
            }
            "isReal" => {
                let e = self.expr_ref(subject)?;
                self.out.is_real(&e.ty.ty)
            }
            "isExpr" => matches!(
                subject,
                Val::Expr(_) | Val::Init(Init::Expr(_)) | Val::Arg(..)
            ),
            "isDiffProc" => match subject {
                Val::Proc(p) => self.dprocs.contains_key(p),
                _ => false,
            },
            "hasBody" => match subject {
                Val::Proc(p) => self.program.proc(*p).body.is_some(),
                _ => false,
            },
            "hasDerivative" => match subject {
                Val::Proc(p) => self
                    .rules
                    .derivatives
                    .contains_key(&self.program.proc(*p).name),
                _ => false,
            },
            "isDiffFormalArg" => match subject {
                Val::Formal(p, i) => self.is_diff_formal(*p, *i),
                Val::Arg(s, i) => match &s.kind {
                    StmtKind::Call { callee, .. } => self.is_diff_formal(*callee, *i),
                    _ => false,
                },
                _ => false,
            },
            "resultIsDiff" => self.result_is_diff(self.proc),
            "isNone" => matches!(subject, Val::Atom(a) if &**a == "none"),
            other => return Err(ApplyError::new(format!("unknown predicate '{other}'"))),
        };
        Ok(r)
    }

    fn build(
        &mut self,
        head: &str,
        args: Vec<Val<'a>>,
        node: &Val<'a>,
        rule: &str,
    ) -> Result<Val<'a>, ApplyError> {
        let count = args.len();
        let arity = |n: usize| -> Result<(), ApplyError> {
            if count == n {
                Ok(())
            } else {
                Err(ApplyError::new(format!(
                    "constructor '{head}' takes {n} arguments, got {count}"
                )))
            }
        };
        let mut args = args;
        Ok(match head {
            "seq" => {
                let mut code: Vec<Stmt> = Vec::new();
                let mut dropped_first = false;
                for (k, a) in args.into_iter().enumerate() {
                    let part = self.code_of(a)?;
                    dropped_first |= k == 0 && part.is_empty();
                    code.extend(part);
                }
                // A statement that became nothing (dropped as not live) hands
                // the user's comments around it to the next statement kept.
                if dropped_first
                    && let Val::Stmts([first, ..]) = node
                    && let Some(next) = code.first_mut()
                {
                    let mut carried = first.comments.leading.clone();
                    carried.extend(first.comments.trailing.iter().cloned());
                    prepend_comments(next, carried);
                }
                // The comment heading the user's statement heads what the
                // statement became, derivative first (`/* predict */` above
                // `xd = 0.95 * xd;`, not between it and `x = 0.95 * x;`).
                if let Val::Stmt(orig) = node
                    && !orig.comments.leading.is_empty()
                    && let Some(k) = code.iter().position(|c| {
                        c.id == orig.id && c.comments.leading == orig.comments.leading
                    })
                    && k > 0
                {
                    let moved = std::mem::take(&mut code[k].comments.leading);
                    prepend_comments(&mut code[0], moved);
                }
                Val::Code(code)
            }
            "nothing" => Val::Code(Vec::new()),
            "list" => Val::List(args),
            "cons" => {
                arity(2)?;
                let tail = args.pop().unwrap_or(Val::List(Vec::new()));
                let head_v = args.pop().unwrap_or(Val::List(Vec::new()));
                let mut l = vec![head_v];
                l.extend(self.list_of(tail)?);
                Val::List(l)
            }
            "same" => match node {
                Val::Stmt(s) => Val::Code(self.tag(vec![(*s).clone()], rule)),
                _ => return Err(ApplyError::new("'same' copies a statement")),
            },
            "assign" => {
                arity(2)?;
                let rhs = self.take_expr(&mut args, 1)?;
                let lhs = self.take_expr(&mut args, 0)?;
                let rhs = self.convert(rhs, &lhs.ty);
                let s = self.mk_stmt(StmtKind::Assign {
                    lhs,
                    rhs,
                    sugar: AssignSugar::Plain,
                });
                Val::Code(self.tag(vec![s], rule))
            }
            "assign-result" => {
                arity(1)?;
                let e = self.take_expr(&mut args, 0)?;
                let Some(f) = self.result_param else {
                    return Err(ApplyError::new("no result parameter in this procedure"));
                };
                let ret = self.program.proc(self.proc).ret.clone();
                let p = self.var(f);
                let lhs = Expr::new(ExprKind::Deref(Box::new(p)), ret, self.span());
                let s = self.mk_stmt(StmtKind::Assign {
                    lhs,
                    rhs: e,
                    sugar: AssignSugar::Plain,
                });
                Val::Code(self.tag(vec![s], rule))
            }
            "return" => {
                arity(1)?;
                let e = match &args[0] {
                    Val::Atom(a) if &**a == "none" => None,
                    v => Some(self.expr_of(v)?),
                };
                let orig = match node {
                    Val::Stmt(s) => Some((*s).clone()),
                    _ => None,
                };
                let mut s = self.mk_stmt(StmtKind::Return(e));
                if let Some(o) = orig {
                    s.comments = o.comments;
                }
                Val::Code(self.tag(vec![s], rule))
            }
            "if" => {
                arity(3)?;
                let Val::Stmt(orig) = node else {
                    return Err(ApplyError::new("'if' rebuilds an if"));
                };
                let StmtKind::If { cond, then, other } = &orig.kind else {
                    return Err(ApplyError::new("'if' rebuilds an if"));
                };
                let e_code = self.code_of(args.pop().unwrap_or(Val::Code(vec![])))?;
                let t_code = self.code_of(args.pop().unwrap_or(Val::Code(vec![])))?;
                let other = match other {
                    Some(o) if !e_code.is_empty() => Some(self.block_like(o, e_code)),
                    // An empty `else` stays when the user wrote something in
                    // it, statements or only a comment.
                    Some(o) => Some(self.block_like(o, e_code)).filter(|b| {
                        !b.stmts.is_empty() || !o.stmts.is_empty() || !o.closing_comments.is_empty()
                    }),
                    None if !e_code.is_empty() => Some(Block {
                        stmts: e_code,
                        scope: then.scope,
                        closing_comments: Vec::new(),
                        span: then.span,
                    }),
                    None => None,
                };
                let s = Stmt {
                    kind: StmtKind::If {
                        cond: cond.clone(),
                        then: self.block_like(then, t_code),
                        other,
                    },
                    ..(*orig).clone()
                };
                Val::Code(self.tag(vec![s], rule))
            }
            "for" | "while" | "do-while" => {
                let Val::Stmt(orig) = node else {
                    return Err(ApplyError::new("loops rebuild a loop"));
                };
                let StmtKind::Loop { header, body } = &orig.kind else {
                    return Err(ApplyError::new("loops rebuild a loop"));
                };
                let body_code = self.code_of(args.pop().unwrap_or(Val::Code(vec![])))?;
                let header = match header {
                    LoopHeader::For { cond, .. } => {
                        arity(3)?;
                        let step = self.code_of(args.pop().unwrap_or(Val::Code(vec![])))?;
                        let init = self.code_of(args.pop().unwrap_or(Val::Code(vec![])))?;
                        LoopHeader::For {
                            init,
                            cond: cond.clone(),
                            step,
                        }
                    }
                    h => h.clone(),
                };
                let s = Stmt {
                    kind: StmtKind::Loop {
                        header,
                        body: self.block_like(body, body_code),
                    },
                    ..(*orig).clone()
                };
                Val::Code(self.tag(vec![s], rule))
            }
            "switch" => {
                arity(1)?;
                let Val::Stmt(orig) = node else {
                    return Err(ApplyError::new("'switch' rebuilds a switch"));
                };
                let StmtKind::Switch { selector, .. } = &orig.kind else {
                    return Err(ApplyError::new("'switch' rebuilds a switch"));
                };
                let mut cases = Vec::new();
                for c in self.list_of(args.pop().unwrap_or(Val::List(vec![])))? {
                    match c {
                        Val::NewCase(c) => cases.push(c),
                        other => {
                            return Err(ApplyError::new(format!(
                                "a switch holds cases, not {}",
                                self.describe(&other)
                            )));
                        }
                    }
                }
                // C needs a statement after the last label.
                if let Some(last) = cases.last_mut()
                    && last.body.is_empty()
                {
                    last.body.push(self.mk_stmt(StmtKind::Empty));
                }
                let s = Stmt {
                    kind: StmtKind::Switch {
                        selector: selector.clone(),
                        cases,
                    },
                    ..(*orig).clone()
                };
                Val::Code(self.tag(vec![s], rule))
            }
            "case" => {
                arity(1)?;
                let Val::Case(orig) = node else {
                    return Err(ApplyError::new("'case' rebuilds a case"));
                };
                let body = self.code_of(args.pop().unwrap_or(Val::Code(vec![])))?;
                Val::NewCase(SwitchCase {
                    body,
                    ..(*orig).clone()
                })
            }
            "block" => {
                arity(1)?;
                let Val::Stmt(orig) = node else {
                    return Err(ApplyError::new("'block' rebuilds a block"));
                };
                let StmtKind::Block(b) = &orig.kind else {
                    return Err(ApplyError::new("'block' rebuilds a block"));
                };
                let code = self.code_of(args.pop().unwrap_or(Val::Code(vec![])))?;
                let s = Stmt {
                    kind: StmtKind::Block(self.block_like(b, code)),
                    ..(*orig).clone()
                };
                Val::Code(self.tag(vec![s], rule))
            }
            "decl" => {
                arity(1)?;
                let Val::Stmt(orig) = node else {
                    return Err(ApplyError::new("'decl' rebuilds a declaration"));
                };
                let StmtKind::Decl { storage, .. } = &orig.kind else {
                    return Err(ApplyError::new("'decl' rebuilds a declaration"));
                };
                let mut decls = Vec::new();
                for d in self.list_of(args.pop().unwrap_or(Val::List(vec![])))? {
                    match d {
                        Val::NewDecl(d) => decls.push(d),
                        other => {
                            return Err(ApplyError::new(format!(
                                "a declaration holds declarators, not {}",
                                self.describe(&other)
                            )));
                        }
                    }
                }
                // One declaration per run of declarators of the same base
                // type, in order (a derivative struct has its own type).
                let mut out: Vec<Stmt> = Vec::new();
                let mut first = true;
                for d in decls {
                    let base = leaf_type(&self.out.symbols[d.sym.index()].ty);
                    let extend = matches!(out.last(), Some(Stmt { kind: StmtKind::Decl { base: b, .. }, .. }) if *b == base);
                    if extend {
                        if let Some(Stmt {
                            kind: StmtKind::Decl { vars, .. },
                            ..
                        }) = out.last_mut()
                        {
                            vars.push(d);
                        }
                    } else {
                        let mut s = self.mk_stmt(StmtKind::Decl {
                            base,
                            storage: *storage,
                            vars: vec![d],
                        });
                        if first {
                            s.comments.leading = orig.comments.leading.clone();
                            first = false;
                        }
                        out.push(s);
                    }
                }
                if let Some(last) = out.last_mut() {
                    last.comments.trailing = orig.comments.trailing.clone();
                }
                Val::Code(self.tag(out, rule))
            }
            "declare" => {
                arity(2)?;
                let init = match args.pop() {
                    Some(Val::Atom(a)) if &*a == "none" => None,
                    Some(Val::Init(i)) => Some(i.clone()),
                    Some(Val::NewInit(i)) => Some(i),
                    Some(v) => Some(Init::Expr(self.expr_of(&v)?)),
                    None => None,
                };
                let Some(Val::Sym(s)) = args.pop() else {
                    return Err(ApplyError::new("'declare' names a variable"));
                };
                // A derivative struct keeps only the active fields: its
                // initialiser list keeps only their items.
                let init = match (init, self.primal_of(s)) {
                    (Some(Init::List(items, span)), Some(p)) => {
                        let ty = self.program.sym(p).ty.clone();
                        Some(self.filter_init(Init::List(items, span), &ty))
                    }
                    (i, _) => i,
                };
                let init = init.map(|i| match i {
                    Init::Expr(e) => {
                        let ty = self.out.symbols[s.index()].ty.clone();
                        Init::Expr(self.convert(e, &ty))
                    }
                    l => l,
                });
                Val::NewDecl(Declarator { sym: s, init })
            }
            "zero-init" => {
                arity(1)?;
                let Val::Sym(s) = args[0] else {
                    return Err(ApplyError::new("'zero-init' names a variable"));
                };
                let sym = self.program.sym(s);
                // Static storage starts at zero (`tangent/static-local`).
                let static_storage = sym.storage == Storage::Static || sym.kind == SymKind::Global;
                let span = self.span();
                match self.out.resolve(&sym.ty.ty) {
                    _ if static_storage => Val::Atom("none".into()),
                    Type::Pointer(_) => Val::Atom("none".into()),
                    Type::Array { len: Some(l), .. } if l.value.is_none() => {
                        return Err(ApplyError::new(format!(
                            "the derivative of variable-length array '{}' cannot be initialised to zero",
                            sym.name
                        )));
                    }
                    Type::Array { .. } | Type::Struct(_) => {
                        let ty = self.types.of(&self.out, &sym.ty);
                        Val::NewInit(self.zero_init(&ty, span))
                    }
                    _ => {
                        let ty = sym.ty.clone();
                        Val::New(self.real(0.0, ty))
                    }
                }
            }
            "init-list" => {
                arity(1)?;
                let span = self.span();
                let mut items = Vec::new();
                for v in self.list_of(args.pop().unwrap_or(Val::List(vec![])))? {
                    items.push(match v {
                        Val::NewInit(i) => i,
                        Val::Init(i) => i.clone(),
                        v => Init::Expr(self.expr_of(&v)?),
                    });
                }
                Val::NewInit(Init::List(items, span))
            }
            "varName" => {
                arity(1)?;
                match &args[0] {
                    Val::Sym(s) => Val::Sym(self.dsym(*s)),
                    Val::Formal(p, i) => {
                        // A formal with a derivative parameter has a
                        // derivative wherever it is used.
                        let s = self.program.proc(*p).params[*i];
                        self.diff.syms.insert(s);
                        Val::Sym(self.dsym(s))
                    }
                    other => {
                        return Err(ApplyError::new(format!(
                            "varName of {}",
                            self.describe(other)
                        )));
                    }
                }
            }
            "var" => {
                arity(1)?;
                match &args[0] {
                    Val::Sym(s) => Val::New(self.var(*s)),
                    other => {
                        return Err(ApplyError::new(format!("var of {}", self.describe(other))));
                    }
                }
            }
            "index" => {
                arity(2)?;
                let i = self.take_expr(&mut args, 1)?;
                let b = self.take_expr(&mut args, 0)?;
                let ty = match self.out.resolve(&b.ty.ty) {
                    Type::Pointer(t) => (**t).clone(),
                    Type::Array { elem, .. } => (**elem).clone(),
                    _ => return Err(ApplyError::new("indexing a value that is not an array")),
                };
                let span = self.span();
                Val::New(Expr::new(
                    ExprKind::Index {
                        base: Box::new(b),
                        index: Box::new(i),
                    },
                    ty,
                    span,
                ))
            }
            "field" => {
                arity(2)?;
                let Val::Atom(name) = args[1].clone() else {
                    return Err(ApplyError::new("'field' takes a field name"));
                };
                let b = self.take_expr(&mut args, 0)?;
                Val::New(self.field(b, &name)?)
            }
            "deref" => {
                arity(1)?;
                let p = self.take_expr(&mut args, 0)?;
                let ty = match self.out.resolve(&p.ty.ty) {
                    Type::Pointer(t) => (**t).clone(),
                    Type::Array { elem, .. } => (**elem).clone(),
                    _ => {
                        return Err(ApplyError::new(
                            "dereferencing a value that is not a pointer",
                        ));
                    }
                };
                let span = self.span();
                Val::New(Expr::new(ExprKind::Deref(Box::new(p)), ty, span))
            }
            "addr" => {
                arity(1)?;
                let r = self.take_expr(&mut args, 0)?;
                let ty = r.ty.clone().pointer_to();
                let span = self.span();
                Val::New(Expr::new(ExprKind::AddrOf(Box::new(r)), ty, span))
            }
            "cast" => {
                arity(1)?;
                let a = self.take_expr(&mut args, 0)?;
                let to = match self.node_expr(node).map(|e| &e.kind) {
                    Some(ExprKind::Cast { to, .. }) => self.types.of(&self.out, to),
                    _ => return Err(ApplyError::new("'cast' rebuilds a cast")),
                };
                let span = self.span();
                Val::New(Expr::new(
                    ExprKind::Cast {
                        to: to.clone(),
                        arg: Box::new(a),
                    },
                    to,
                    span,
                ))
            }
            "cond" => {
                arity(3)?;
                let b = self.take_expr(&mut args, 2)?;
                let a = self.take_expr(&mut args, 1)?;
                let c = self.take_expr(&mut args, 0)?;
                // A template's number takes the other branch's precision
                // (`(x == 0 ? 0 : P)` in `float` code stays `float`).
                let (a_ty, b_ty) = (a.ty.clone(), b.ty.clone());
                let (a, b) = (self.number_as(a, &b_ty), self.number_as(b, &a_ty));
                let ty = super::names::address_type(&self.out, &a.ty)
                    .or_else(|| super::names::address_type(&self.out, &b.ty))
                    .unwrap_or_else(|| {
                        real_of_rank(real_rank(&self.out, &a.ty).max(real_rank(&self.out, &b.ty)))
                    });
                // A template's test on numbers (`deriv/pow` at `pow(2.0,
                // x)`: `2.0 == 0`) is decided here.
                if let Some(known) = super::names::decided(&c) {
                    return Ok(Val::New(if known { a } else { b }));
                }
                let span = self.span();
                Val::New(Expr::new(
                    ExprKind::Cond {
                        cond: Box::new(c),
                        then: Box::new(a),
                        other: Box::new(b),
                    },
                    ty,
                    span,
                ))
            }
            "neg" => {
                arity(1)?;
                let a = self.take_expr(&mut args, 0)?;
                let ty = a.ty.clone();
                let span = self.span();
                Val::New(Expr::new(
                    ExprKind::Unary {
                        op: UnOp::Neg,
                        arg: Box::new(a),
                    },
                    ty,
                    span,
                ))
            }
            "real" => {
                arity(1)?;
                let Val::Num(x) = args[0] else {
                    return Err(ApplyError::new("'real' takes a number"));
                };
                Val::New(self.real(x, QualType::double()))
            }
            "zero" => {
                arity(1)?;
                let ty = match &args[0] {
                    Val::Expr(e) => e.ty.clone(),
                    Val::Arg(s, i) => self.arg_expr(s, *i).ty.clone(),
                    Val::Init(Init::Expr(e)) => e.ty.clone(),
                    v => self.expr_of(v)?.ty,
                };
                if self.out.is_real(&ty.ty) || !self.out.contains_real(&ty.ty) {
                    Val::New(self.real(0.0, ty))
                } else {
                    // A struct's zero derivative: a zeroed local.
                    let dty = self.types.of(&self.out, &ty);
                    let (var, mut decl) = self.temp(&dty, "zerod")?;
                    if let ExprKind::Var(v) = var.kind {
                        self.info.derivative_syms.insert(v);
                    }
                    if let StmtKind::Decl { vars, .. } = &mut decl.kind {
                        let span = self.span();
                        vars[0].init = Some(self.zero_init(&dty, span));
                    }
                    self.pending_decls.push(decl);
                    Val::New(var)
                }
            }
            "simplify" => {
                arity(1)?;
                let e = self.take_expr(&mut args, 0)?;
                Val::New(self.simplify(e))
            }
            "chain" => {
                arity(3)?;
                let dargs = self
                    .list_of(args.pop().unwrap_or(Val::List(vec![])))?
                    .iter()
                    .map(|v| self.expr_of(v))
                    .collect::<Result<Vec<_>, _>>()?;
                let Val::Exprs(orig_args) = args[1] else {
                    return Err(ApplyError::new("'chain' takes the call's arguments"));
                };
                let Val::Atom(name) = &args[0] else {
                    return Err(ApplyError::new("'chain' takes a function name"));
                };
                let name = name.to_string();
                let precision = match self.node_expr(node).map(|e| &e.kind) {
                    Some(ExprKind::Intrinsic { call, .. }) => call.precision,
                    _ => None,
                };
                let saved = std::mem::replace(&mut self.precision, precision);
                let r = self.chain(&name, orig_args, dargs, rule);
                self.precision = saved;
                Val::New(r?)
            }
            "call-d" => {
                arity(3)?;
                self.call_d(args, node, rule)?
            }
            "alloc-d" => {
                arity(0)?;
                self.alloc_d(node, rule)?
            }
            "free-d" => {
                arity(0)?;
                let Val::Stmt(orig) = node else {
                    return Err(ApplyError::new("'free-d' follows a free"));
                };
                let StmtKind::Free { ptr } = &orig.kind else {
                    return Err(ApplyError::new("'free-d' follows a free"));
                };
                let dptr = self.dref(ptr)?;
                let s = self.mk_stmt(StmtKind::Free { ptr: dptr });
                Val::Code(self.tag(vec![s], rule))
            }
            "merge" => {
                arity(2)?;
                let new = self.code_of(args.pop().unwrap_or(Val::Code(vec![])))?;
                let Val::Stmts(orig) = args[0] else {
                    return Err(ApplyError::new("'merge' takes the original branch"));
                };
                let Some(s) = self.stmt() else {
                    return Err(ApplyError::new("'merge' outside a statement"));
                };
                let entry = self.varied.before.get(&s.id).cloned().unwrap_or_default();
                let mut code = new;
                if let (Some(at), Some(end)) = (
                    self.varied.after.get(&s.id).cloned(),
                    self.varied.end_of(orig, &entry),
                ) {
                    let scope = self.scope_at(orig.first());
                    let r = self.resets(&at, &end, scope);
                    code.extend(self.tag(r, "tangent/reset-merge"));
                }
                Val::Code(code)
            }
            "loop-entry" => {
                arity(0)?;
                let Some(s) = self.stmt() else {
                    return Err(ApplyError::new("'loop-entry' outside a loop"));
                };
                let head = self.loop_merge_set(s.id);
                let before = self.varied.before.get(&s.id).cloned().unwrap_or_default();
                let scope = self.scope_at(None);
                let r = self.resets(&head, &before, scope);
                Val::Code(self.tag(r, "tangent/reset-merge"))
            }
            "loop-body" => {
                arity(2)?;
                let new = self.code_of(args.pop().unwrap_or(Val::Code(vec![])))?;
                let Val::Stmts(orig) = args[0] else {
                    return Err(ApplyError::new("'loop-body' takes the original body"));
                };
                let Some(s) = self.stmt() else {
                    return Err(ApplyError::new("'loop-body' outside a loop"));
                };
                let head = self.loop_merge_set(s.id);
                let mut code = new;
                if let Some(end) = self.varied.end_of(orig, &head) {
                    let scope = self.scope_at(orig.first());
                    let r = self.resets(&head, &end, scope);
                    code.extend(self.tag(r, "tangent/reset-merge"));
                }
                Val::Code(code)
            }
            "before-jump" => {
                arity(0)?;
                let Some(s) = self.stmt() else {
                    return Err(ApplyError::new("'before-jump' outside a statement"));
                };
                let here = self.varied.before.get(&s.id).cloned().unwrap_or_default();
                let target = match &s.kind {
                    StmtKind::Break => self
                        .stmts
                        .iter()
                        .rev()
                        .skip(1)
                        .find(|t| matches!(t.kind, StmtKind::Loop { .. } | StmtKind::Switch { .. }))
                        .and_then(|t| self.varied.after.get(&t.id).cloned()),
                    StmtKind::Continue => self
                        .stmts
                        .iter()
                        .rev()
                        .skip(1)
                        .find(|t| matches!(t.kind, StmtKind::Loop { .. }))
                        .map(|t| self.loop_merge_set(t.id)),
                    _ => Some(self.exit_needed()),
                };
                let scope = self.scope_at(None);
                let r = match target {
                    Some(t) => self.resets(&t, &here, scope),
                    None => Vec::new(),
                };
                Val::Code(self.tag(r, "tangent/reset-merge"))
            }
            "entry-resets" => {
                arity(0)?;
                let r = self.entry_resets();
                Val::Code(self.tag(r, "tangent/reset-merge"))
            }
            "exit-resets" => {
                arity(0)?;
                let body = self
                    .program
                    .proc(self.proc)
                    .body
                    .as_ref()
                    .map(|b| b.stmts.as_slice())
                    .unwrap_or(&[]);
                let entry = self
                    .a
                    .results
                    .get(&self.proc)
                    .map(|r| r.varied_entry.clone())
                    .unwrap_or_default();
                let r = match self.varied.end_of(body, &entry) {
                    Some(end)
                        if !matches!(body.last().map(|s| &s.kind), Some(StmtKind::Return(_))) =>
                    {
                        let need = self.exit_needed();
                        let scope = self.scope_at(body.first());
                        self.resets(&need, &end, scope)
                    }
                    _ => Vec::new(),
                };
                Val::Code(self.tag(r, "tangent/reset-merge"))
            }
            "function-d" => {
                arity(2)?;
                self.function_d(args, rule)?
            }
            _ => {
                let mut args = match self.build_more(head, args, node, rule)? {
                    Ok(v) => return Ok(v),
                    Err(args) => args,
                };
                if let Some(op) = binop_of(head) {
                    arity(2)?;
                    let r = self.take_expr(&mut args, 1)?;
                    let l = self.take_expr(&mut args, 0)?;
                    return Ok(Val::New(self.binary(op, l, r)));
                }
                let intrinsic = if head == "digamma" {
                    Some((MathFn::Digamma, None))
                } else {
                    MathFn::from_c_name(head)
                };
                if let Some((f, _)) = intrinsic {
                    if args.len() != f.arity() {
                        return Err(ApplyError::new(format!(
                            "'{head}' takes {} arguments",
                            f.arity()
                        )));
                    }
                    let es = (0..args.len())
                        .map(|i| self.take_expr(&mut args, i))
                        .collect::<Result<Vec<_>, _>>()?;
                    let span = self.span();
                    return Ok(Val::New(intrinsic_expr(
                        &self.out,
                        f,
                        self.precision,
                        es,
                        span,
                    )));
                }
                return Err(ApplyError::new(format!("unknown constructor '{head}'")));
            }
        })
    }
}

/// The base type of a declaration: the type without its pointer and array
/// declarators.
pub(super) fn leaf_type(ty: &QualType) -> QualType {
    match &ty.ty {
        Type::Pointer(t) | Type::Array { elem: t, .. } => leaf_type(t),
        _ => ty.clone(),
    }
}

impl<'x, 'a> TangentHost<'x, 'a> {
    /// C converts implicitly; the IL carries the conversion in types only,
    /// so an expression stored into a float keeps its own type.
    fn convert(&self, e: Expr, _to: &QualType) -> Expr {
        e
    }

    /// `pred/live-for-diff` in tangent mode: needed by the derivatives or
    /// by the original outputs (the analyses ran with `diff-live/exit` at
    /// the interface), or writing a value some later statement reads
    /// (`inout/dead`), so that no kept statement reads a dropped one.
    fn is_live(&mut self, s: &'a Stmt) -> bool {
        if let Some(&l) = self.live_memo.get(&s.id) {
            return l;
        }
        let mut live = self.a.is_live_for_diff(self.proc, s.id);
        if !live {
            live = match &s.kind {
                StmtKind::If { .. }
                | StmtKind::Loop { .. }
                | StmtKind::Switch { .. }
                | StmtKind::Block(_) => {
                    let mut inner = Vec::new();
                    match &s.kind {
                        StmtKind::If { then, other, .. } => {
                            inner.extend(then.stmts.iter());
                            inner.extend(other.iter().flat_map(|o| o.stmts.iter()));
                        }
                        // The loop control is needed only if the body is.
                        StmtKind::Loop { body, .. } => inner.extend(body.stmts.iter()),
                        StmtKind::Switch { cases, .. } => {
                            inner.extend(cases.iter().flat_map(|c| c.body.iter()))
                        }
                        StmtKind::Block(b) => inner.extend(b.stmts.iter()),
                        _ => {}
                    }
                    self.freeing_jump_controls.contains(&s.id)
                        || inner.into_iter().any(|t| self.is_live(t))
                }
                // `tangent/free` and `tangent/free-passive` keep every
                // `free`, and the allocation it releases is kept because
                // the `free` reads its pointer: the loop or branch around
                // it must stay too, or each call leaks what it allocated.
                StmtKind::Free { .. } => true,
                // A call that frees, as `free` itself (`release(w)`).
                StmtKind::Call { callee, .. }
                    if super::names::may_free(self.program, *callee, &mut Vec::new()) =>
                {
                    true
                }
                _ => self.writes_read_later(s),
            };
        }
        self.live_memo.insert(s.id, live);
        live
    }

    /// Does the statement write a zone that some path after it reads?
    fn writes_read_later(&self, s: &Stmt) -> bool {
        let (Some(f), Some(r)) = (self.a.facts.get(&self.proc), self.a.results.get(&self.proc))
        else {
            return true;
        };
        let Some(&i) = f.point_of.get(&s.id) else {
            return false;
        };
        let writes = &f.points[i].effect.writes;
        if writes.is_empty() {
            return false;
        }
        // Dead after the point: Dead⁻ of the next point, or of the first
        // point of every successor block.
        let block = f.points[i].block as usize;
        let mut afters: Vec<&Set> = Vec::new();
        if i + 1 < f.blocks[block].end {
            afters.push(&r.dead[i + 1]);
        } else {
            let mut stack: Vec<u32> = f.succs[block].clone();
            let mut seen = HashSet::default();
            while let Some(b) = stack.pop() {
                if !seen.insert(b) {
                    continue;
                }
                let range = &f.blocks[b as usize];
                if range.start < range.end {
                    afters.push(&r.dead[range.start]);
                } else if f.succs[b as usize].is_empty() {
                    // The exit: what the caller can see is read there.
                    return true;
                } else {
                    stack.extend(f.succs[b as usize].iter().copied());
                }
            }
            if afters.is_empty() {
                return true;
            }
        }
        writes.iter().any(|w| afters.iter().any(|d| !d.contains(w)))
    }

    /// `tangent/expr-active`'s simplification of a derivative expression
    /// (`spec/simplify.md`).
    fn simplify(&self, e: Expr) -> Expr {
        self.simplifier.simplify(&self.out, &e)
    }

    /// Zones whose derivative the caller reads at the exit: active
    /// globals varied there, and every scalar target of a pointer
    /// parameter that has a derivative parameter (the caller may have
    /// passed it varied; where it is not varied at an exit its derivative
    /// is zero and is reset so).
    fn exit_needed(&self) -> Set {
        let mut out: Set = self
            .varied
            .exit
            .iter()
            .copied()
            .filter(|z| self.a.diff_zones.contains(z))
            .filter(|&z| {
                let info = self.a.locs.zone(z);
                matches!(self.a.locs.object(info.obj).kind, ObjKind::Var(s) if self.program.sym(s).kind == SymKind::Global)
            })
            .collect();
        // Only zones the procedure may write: one it never writes keeps the
        // caller's derivative, whatever Varied says about it here.
        let writes: HashSet<Zone> = self
            .a
            .summaries
            .get(&self.proc)
            .map(|sm| sm.writes.iter().copied().collect())
            .unwrap_or_default();
        for &(z, ps) in self.param_targets.get(&self.proc).into_iter().flatten() {
            if writes.contains(&z) && self.dsyms.contains_key(&ps) {
                out.insert(z);
            }
        }
        out
    }

    /// The derivative of a reference or pointer expression, built directly
    /// (for `free` and allocation targets).
    fn dref(&mut self, e: &Expr) -> Result<Expr, ApplyError> {
        let span = self.span();
        Ok(match &e.kind {
            ExprKind::Var(s) => {
                let d = self.dsym(*s);
                self.var(d)
            }
            ExprKind::Index { base, index } => {
                let b = self.dref(base)?;
                let ty = match self.out.resolve(&b.ty.ty) {
                    Type::Pointer(t) => (**t).clone(),
                    Type::Array { elem, .. } => (**elem).clone(),
                    _ => return Err(ApplyError::new("indexing a value that is not an array")),
                };
                Expr::new(
                    ExprKind::Index {
                        base: Box::new(b),
                        index: index.clone(),
                    },
                    ty,
                    span,
                )
            }
            ExprKind::Field {
                base,
                strukt,
                field,
            } => {
                let b = self.dref(base)?;
                let name = self
                    .program
                    .field_name(*strukt, *field)
                    .unwrap_or("")
                    .to_string();
                self.field(b, &name)?
            }
            ExprKind::Deref(p) => {
                let p = self.dref(p)?;
                let ty = match self.out.resolve(&p.ty.ty) {
                    Type::Pointer(t) => (**t).clone(),
                    _ => {
                        return Err(ApplyError::new(
                            "dereferencing a value that is not a pointer",
                        ));
                    }
                };
                Expr::new(ExprKind::Deref(Box::new(p)), ty, span)
            }
            ExprKind::Cast { to, arg } => {
                let a = self.dref(arg)?;
                let to = self.types.of(&self.out, to);
                Expr::new(
                    ExprKind::Cast {
                        to: to.clone(),
                        arg: Box::new(a),
                    },
                    to,
                    span,
                )
            }
            // `free(v + nl - 1)`: the derivative pointer moved alike.
            ExprKind::Binary {
                op: op @ (BinOp::Add | BinOp::Sub),
                lhs,
                rhs,
            } if super::names::is_address(self.program, &lhs.ty) => {
                let l = self.dref(lhs)?;
                let ty = l.ty.clone();
                Expr::new(
                    ExprKind::Binary {
                        op: *op,
                        lhs: Box::new(l),
                        rhs: rhs.clone(),
                    },
                    ty,
                    span,
                )
            }
            _ => {
                return Err(ApplyError::new(
                    "this pointer expression has no derivative counterpart",
                ));
            }
        })
    }

    /// `tangent/alloc`: the derivative buffer, allocated zeroed where the
    /// original is allocated.
    fn alloc_d(&mut self, node: &Val<'a>, rule: &str) -> Result<Val<'a>, ApplyError> {
        let Val::Stmt(orig) = node else {
            return Err(ApplyError::new("'alloc-d' follows an allocation"));
        };
        let StmtKind::Alloc {
            target,
            elem,
            count,
            form,
            ..
        } = &orig.kind
        else {
            return Err(ApplyError::new("'alloc-d' follows an allocation"));
        };
        let dtarget = self.dref(target)?;
        let delem = self.types.of(&self.out, elem);
        let size = Expr::new(
            ExprKind::SizeOfType(delem.clone()),
            QualType::size_t(),
            self.span(),
        );
        let cast = match form {
            crate::il::AllocForm::Malloc { cast, .. }
            | crate::il::AllocForm::Calloc { cast, .. } => {
                cast.as_ref().map(|c| self.types.of(&self.out, c))
            }
        };
        let s = self.mk_stmt(StmtKind::Alloc {
            target: dtarget,
            elem: delem,
            count: count.clone(),
            zeroed: true,
            form: crate::il::AllocForm::Calloc {
                count: count.clone(),
                size,
                cast,
            },
            decl_init: false,
        });
        Ok(Val::Code(self.tag(vec![s], rule)))
    }

    /// `const double y = g(x);` becomes `y = g_d(…)` or a write through
    /// `&y`, apart from the declaration: that local is not `const` in the
    /// derivative code.
    fn unconst_result(&mut self, result: &Expr) {
        if let ExprKind::Var(v) = &result.kind
            && self.out.sym(*v).kind == SymKind::Local
        {
            self.out.symbols[v.index()].ty.is_const = false;
        }
    }

    /// `tangent/call-active`: `call P_d(ARGS_d)`, the original result
    /// through an extra pointer when the callee's result has a derivative.
    fn call_d(
        &mut self,
        mut args: Vec<Val<'a>>,
        node: &Val<'a>,
        rule: &str,
    ) -> Result<Val<'a>, ApplyError> {
        let result = args.pop().unwrap_or(Val::Atom("none".into()));
        let dargs = self.list_of(args.pop().unwrap_or(Val::List(vec![])))?;
        let Some(Val::Proc(callee)) = args.pop() else {
            return Err(ApplyError::new("'call-d' names the callee"));
        };
        let Some(&dcallee) = self.dprocs.get(&callee) else {
            return Err(ApplyError::new(format!(
                "'{}' is called actively but is not differentiated",
                self.program.proc(callee).name
            )));
        };
        let mut es = Vec::new();
        for a in &dargs {
            es.push(self.expr_of(a)?);
        }
        let Val::Stmt(orig) = node else {
            return Err(ApplyError::new("'call-d' follows a call"));
        };
        let mut pre = Vec::new();
        let mut post = Vec::new();
        let call_result = if self.result_is_diff(callee) {
            let ret = QualType {
                is_const: false,
                ..self.program.proc(callee).ret.clone()
            };
            let res = match &result {
                Val::Atom(_) => {
                    // The original result is not used: a local receives it.
                    let t = self.temp(&ret, "result")?;
                    pre.push(t.1);
                    t.0
                }
                v => {
                    let r = self.expr_of(v)?;
                    if self.out.resolve(&r.ty.ty) == self.out.resolve(&ret.ty) {
                        r
                    } else {
                        // Stored with a conversion (a double result into a
                        // float): the pointer must have the result's type.
                        let t = self.temp(&ret, "result")?;
                        pre.push(t.1);
                        post.push(self.mk_stmt(StmtKind::Assign {
                            lhs: r,
                            rhs: t.0.clone(),
                            sugar: AssignSugar::Plain,
                        }));
                        t.0
                    }
                }
            };
            self.unconst_result(&res);
            let span = self.span();
            es.push(Expr::new(
                ExprKind::AddrOf(Box::new(res.clone())),
                ret.clone().pointer_to(),
                span,
            ));
            // A derivative pointer follows its pointer wherever it is set
            // (`tangent/assign-pointer`).
            let dres = match &result {
                Val::Expr(r)
                    if self.diff.is_diff_ref(&self.out, r)
                        && (is_pointer(&self.out, &r.ty)
                            || self.derivative_needed_after(&Val::Expr(r))) =>
                {
                    Some(engine::apply(self.rules, self, "ref", &Val::Expr(r))?.remove(0))
                }
                _ => None,
            };
            match dres {
                Some(d) => Some(self.expr_of(&d)?),
                None => None,
            }
        } else {
            match &result {
                Val::Atom(_) => None,
                v => {
                    let r = self.expr_of(v)?;
                    self.unconst_result(&r);
                    Some(r)
                }
            }
        };
        let s = Stmt {
            kind: StmtKind::Call {
                result: call_result,
                callee: dcallee,
                args: es,
                decl_init: false,
            },
            ..(*orig).clone()
        };
        let mut code = self.tag(pre, rule);
        let resets = self.call_entry_resets(orig, callee);
        code.extend(self.tag(resets, "tangent/reset-merge"));
        code.extend(self.tag(vec![s], rule));
        code.extend(self.tag(post, rule));
        // The callee's result has no derivative (it is passive): where the
        // caller stores it, the derivative becomes zero.
        if !self.result_is_diff(callee)
            && let Val::Expr(r) = result
            && self.diff.is_diff_ref(&self.out, r)
            && !is_pointer(&self.out, &r.ty)
            && self.out.is_real(&r.ty.ty)
            && self.derivative_needed_after(&Val::Expr(r))
        {
            let dr = engine::apply(self.rules, self, "ref", &Val::Expr(r))?.remove(0);
            let lhs = self.expr_of(&dr)?;
            let zero = self.real(0.0, lhs.ty.clone());
            let z = self.mk_stmt(StmtKind::Assign {
                lhs,
                rhs: zero,
                sugar: AssignSugar::Plain,
            });
            code.extend(self.tag(vec![z], rule));
        }
        Ok(Val::Code(code))
    }

    /// `tangent/reset-merge` at a call: one `P_d` serves every call to P,
    /// so the entry of P joins the call edges. A caller zone that P may
    /// read at entry (a global, the target of a pointer argument), varied
    /// at P's entry through another call but not varied before this one,
    /// may hold a stale derivative (implicit zero): reset it before the
    /// call.
    fn call_entry_resets(&mut self, s: &Stmt, callee: ProcId) -> Vec<Stmt> {
        let Some(f) = self.a.facts.get(&self.proc) else {
            return Vec::new();
        };
        let Some(site) = f.point_of.get(&s.id).and_then(|i| f.calls.get(i)) else {
            return Vec::new();
        };
        let entry = self
            .a
            .results
            .get(&callee)
            .map(|r| &r.varied_entry)
            .cloned()
            .unwrap_or_default();
        let reads: HashSet<Zone> = self
            .a
            .summaries
            .get(&callee)
            .map(|sm| sm.reads.iter().copied().collect())
            .unwrap_or_default();
        let before = self.varied.before.get(&s.id).cloned().unwrap_or_default();
        let mut need = Set::new();
        for (cz, zs) in &site.map {
            if entry.contains(cz) && reads.contains(cz) {
                need.extend(zs.iter().copied().filter(|z| !before.contains(z)));
            }
        }
        let scope = self.scope_at(None);
        self.resets(&need, &Set::new(), scope)
    }

    /// A new local variable of type `ty` declared here: the variable and
    /// its declaration.
    fn temp(&mut self, ty: &QualType, base: &str) -> Result<(Expr, Stmt), ApplyError> {
        let body_scope = self
            .program
            .proc(self.proc)
            .body
            .as_ref()
            .map(|b| b.scope)
            .ok_or_else(|| ApplyError::new("a temporary outside a body"))?;
        let name = self.namer.fresh_local(base);
        let id = SymId(self.out.symbols.len() as u32);
        self.out.symbols.push(Symbol {
            name: name.clone(),
            ty: QualType {
                is_const: false,
                ..ty.clone()
            },
            kind: SymKind::Local,
            storage: Storage::Auto,
            scope: body_scope,
            span: self.span(),
        });
        self.out.scopes[body_scope.index()].vars.insert(name, id);
        let d = self.mk_stmt(StmtKind::Decl {
            base: leaf_type(ty),
            storage: Storage::Auto,
            vars: vec![Declarator {
                sym: id,
                init: None,
            }],
        });
        Ok((self.var(id), d))
    }

    /// The `double *f` parameter through which `f_d` returns the original
    /// result, when `f`'s result has a derivative (CONTRACT §3).
    fn result_param_for(&mut self, p: ProcId) -> Option<SymId> {
        if !self.result_is_diff(p) {
            return None;
        }
        let orig = self.program.proc(p).clone();
        // A parameter named like the procedure hides it inside the body;
        // a recursive passive call would then fail: rename in that case.
        // So does a parameter or local already named so (`g(double g)`).
        let calls_itself = self.calls_itself(p) || self.namer.declared_in(p, &orig.name);
        let name = if calls_itself {
            self.namer.fresh_local(&format!("{}0", orig.name))
        } else {
            orig.name.clone()
        };
        let id = SymId(self.out.symbols.len() as u32);
        self.out.symbols.push(Symbol {
            name: name.clone(),
            // `const double f(…)`: the result is written through it.
            ty: QualType {
                is_const: false,
                ..orig.ret.clone()
            }
            .pointer_to(),
            kind: SymKind::Param,
            storage: Storage::Auto,
            scope: orig.scope,
            span: orig.span,
        });
        self.out.scopes[orig.scope.index()].vars.insert(name, id);
        Some(id)
    }

    fn calls_itself(&self, p: ProcId) -> bool {
        let mut found = false;
        if let Some(b) = &self.program.proc(p).body {
            crate::il::visit_stmts(&b.stmts, &mut |s| {
                found |= matches!(s.kind, StmtKind::Call { callee, .. } if callee == p);
            });
        }
        found
    }

    /// `tangent/procedure`: the derivative procedure's header and body.
    fn function_d(&mut self, mut args: Vec<Val<'a>>, _rule: &str) -> Result<Val<'a>, ApplyError> {
        let body_val = args.pop().unwrap_or(Val::Code(vec![]));
        let formals = self.list_of(args.pop().unwrap_or(Val::List(vec![])))?;
        let p = self.proc;
        let program: &'a Program = self.program;
        let orig = program.proc(p);
        let mut params = Vec::new();
        for f in formals {
            match f {
                Val::Formal(_, i) => params.push(orig.params[i]),
                Val::Sym(s) => params.push(s),
                other => {
                    return Err(ApplyError::new(format!(
                        "a formal list holds {}",
                        self.describe(&other)
                    )));
                }
            }
        }
        let mut ret = orig.ret.clone();
        if let Some(id) = self.result_param {
            params.push(id);
            ret = QualType {
                is_const: false,
                ..self.types.of(&self.out, &orig.ret)
            };
        }
        let mut body_code = self.code_of(body_val)?;
        // `(void)xd;` for a parameter the body never reads (a derivative,
        // or a formal merged into another, `specialize/alias`), so that the
        // output compiles without warnings.
        let mut used = HashSet::default();
        crate::il::visit_stmts(&body_code, &mut |st| {
            for e in super::names::stmt_exprs(st) {
                collect_syms(e, &mut used);
            }
        });
        let mut voids = Vec::new();
        for &prm in &params {
            if !used.contains(&prm) {
                let span = self.span();
                let v = self.var(prm);
                let void = QualType::void();
                let cast = Expr::new(
                    ExprKind::Cast {
                        to: void.clone(),
                        arg: Box::new(v),
                    },
                    void,
                    span,
                );
                voids.push(self.mk_stmt(StmtKind::Discard(cast)));
            }
        }
        self.drop_resets_after_zero_decls(&mut body_code);
        self.drop_unread_derivatives(&mut body_code);
        super::recurrence::shorten_recurrences(&mut body_code, self);
        self.call_temps.clear();
        super::share::share_calls(&mut body_code, self);
        let mut head = std::mem::take(&mut self.pending_decls);
        head.extend(voids);
        head.extend(body_code);
        body_code = head;
        let Some(ob) = &orig.body else {
            return Err(ApplyError::new("a procedure without a body"));
        };
        let d = self.dprocs[&p];
        let dp = &mut self.out.procs[d.index()];
        dp.params = params;
        dp.ret = ret;
        dp.storage = if orig.storage == Storage::Static {
            Storage::Static
        } else {
            Storage::Auto
        };
        dp.body = Some(Block {
            stmts: body_code,
            scope: ob.scope,
            closing_comments: ob.closing_comments.clone(),
            span: ob.span,
        });
        dp.origin = ProcOrigin::User;
        Ok(Val::Code(Vec::new()))
    }
}

/// `e` as a number of the real type `like` when `e` is a number constant
/// and `like` a real type (both modes' `cond` templates: the other
/// branch's type).
pub(crate) fn number_as(
    out: &Program,
    e: Expr,
    like: &QualType,
    real: impl Fn(f64, QualType) -> Expr,
) -> Expr {
    let value = match &e.kind {
        ExprKind::RealConst { value, .. } => *value,
        ExprKind::IntConst { value, .. } => *value as f64,
        _ => return e,
    };
    if real_rank(out, like) == 0 || real_rank(out, like) == real_rank(out, &e.ty) {
        return e;
    }
    let mut ty = like.clone();
    ty.is_const = false;
    real(value, ty)
}

impl<'x, 'a> TangentHost<'x, 'a> {
    /// `tangent/assign-live-implicit-zero`, after simplification: a scalar
    /// derivative nothing reads (`aioli_tmpd = g_d(x, xd, &aioli_tmp);`
    /// for `g(x) * 0.0`, whose derivative term simplified away) is not
    /// computed: its assignments go, a call keeps only its effects, and
    /// its declarator is dropped (C warns about a variable set but unused).
    fn drop_unread_derivatives(&self, stmts: &mut Vec<Stmt>) {
        loop {
            let mut read: HashSet<SymId> = HashSet::default();
            let mut written: HashSet<SymId> = HashSet::default();
            // Stored by something this pass cannot drop (an allocation).
            let mut kept_stores: HashSet<SymId> = HashSet::default();
            crate::il::visit_stmts(stmts, &mut |st| {
                let target = crate::il::stored_ref(st);
                if let Some(Expr {
                    kind: ExprKind::Var(v),
                    ..
                }) = target
                {
                    written.insert(*v);
                    if !matches!(st.kind, StmtKind::Assign { .. } | StmtKind::Call { .. }) {
                        kept_stores.insert(*v);
                    }
                }
                if let StmtKind::Decl { vars, .. } = &st.kind {
                    written.extend(vars.iter().map(|d| d.sym));
                }
                for e in crate::il::stmt_exprs(st) {
                    if target
                        .is_some_and(|t| std::ptr::eq(t, e) && matches!(t.kind, ExprKind::Var(_)))
                    {
                        continue;
                    }
                    crate::il::visit_expr(e, &mut |x| {
                        if let ExprKind::Var(v) = x.kind {
                            read.insert(v);
                        }
                    });
                }
            });
            // (A loop header's statements stay: they are not in a list the
            // rewrite below sees.)
            let mut in_headers: HashSet<SymId> = HashSet::default();
            crate::il::visit_stmts(stmts, &mut |st| {
                if let StmtKind::Loop {
                    header: LoopHeader::For { init, step, .. },
                    ..
                } = &st.kind
                {
                    for h in init.iter().chain(step) {
                        for e in crate::il::stmt_exprs(h) {
                            collect_syms(e, &mut in_headers);
                        }
                        if let StmtKind::Decl { vars, .. } = &h.kind {
                            in_headers.extend(vars.iter().map(|d| d.sym));
                        }
                    }
                }
            });
            // A derivative nobody reads, and also an original local whose
            // every reader was sliced away (`int cnt = 0;` after `cnt++`
            // went, not being live): C warns about either.
            let dead: HashSet<SymId> = written
                .into_iter()
                .filter(|s| {
                    !read.contains(s) && !in_headers.contains(s) && !kept_stores.contains(s)
                })
                .filter(|s| {
                    let sym = &self.out.symbols[s.index()];
                    matches!(sym.kind, SymKind::Local | SymKind::Temp)
                        && sym.storage == Storage::Auto
                        && (!self.primal_syms.contains_key(s) || self.out.is_real(&sym.ty.ty))
                })
                .collect();
            if dead.is_empty() {
                return;
            }
            let is_dead = |e: &Expr| matches!(e.kind, ExprKind::Var(v) if dead.contains(&v));
            crate::il::rewrite_stmt_lists(stmts, &mut |list| {
                // A dropped statement's comments (the user's, which the
                // first derivative statement of a line carries) go to the
                // next statement kept.
                let mut orphan: Vec<String> = Vec::new();
                let mut kept: Vec<Stmt> = Vec::with_capacity(list.len());
                for mut st in list.drain(..) {
                    let keep = match &mut st.kind {
                        StmtKind::Assign { lhs, .. } => !is_dead(lhs),
                        StmtKind::Call { result, .. } => {
                            if result.as_ref().is_some_and(is_dead) {
                                *result = None;
                            }
                            true
                        }
                        StmtKind::Decl { vars, .. } => {
                            vars.retain(|d| !dead.contains(&d.sym));
                            !vars.is_empty()
                        }
                        _ => true,
                    };
                    if !keep {
                        orphan.append(&mut st.comments.leading);
                        if let Some(t) = st.comments.trailing.take()
                            && !t.starts_with("/* tangent/")
                            && !t.starts_with("/* deriv/")
                        {
                            orphan.push(t);
                        }
                        continue;
                    }
                    if !orphan.is_empty() {
                        orphan.append(&mut st.comments.leading);
                        st.comments.leading = std::mem::take(&mut orphan);
                    }
                    kept.push(st);
                }
                if let Some(last) = kept.last_mut()
                    && !orphan.is_empty()
                {
                    let own = last.comments.trailing.take().into_iter();
                    last.comments.trailing = Some(own.chain(orphan).collect::<Vec<_>>().join(" "));
                }
                *list = kept;
            });
        }
    }

    /// `tangent/reset-merge`: `vd = 0.0;` after `double vd = 0.0, v =
    /// ...;`, or `rd.acc = 0.0;` after `rd.acc = 0.0; r.acc = 0.0;`, stores
    /// what that memory already holds (nothing between can write it).
    fn drop_resets_after_zero_decls(&self, stmts: &mut Vec<Stmt>) {
        crate::il::rewrite_stmt_lists(stmts, &mut |list| self.drop_resets_in(list));
    }

    fn drop_resets_in(&self, stmts: &mut Vec<Stmt>) {
        let is_zero =
            |e: &Expr| matches!(e.kind, ExprKind::RealConst { value, .. } if value == 0.0);
        // `vd = 0.0;`, `rd.acc = 0.0;`, `ud[1] = 0.0;` on a derivative
        // variable: the reset and the memory it zeroes (root, path).
        let reset_of = |st: &Stmt| match &st.kind {
            StmtKind::Assign { lhs, rhs, .. } if is_zero(rhs) => {
                reset_key(&self.out, lhs).filter(|(d, _)| self.primal_syms.contains_key(d))
            }
            _ => None,
        };
        let mut zeroed: HashSet<(SymId, String)> = HashSet::default();
        // A dropped reset's comments (the user's, moved to the first
        // statement their statement became) go to the next statement kept.
        let mut orphaned: Vec<String> = Vec::new();
        stmts.retain_mut(|st| {
            let reset = reset_of(st);
            if let Some(k) = &reset
                && (zeroed.contains(k) || zeroed.contains(&(k.0, String::new())))
            {
                orphaned.append(&mut st.comments.leading);
                return false;
            }
            if !orphaned.is_empty() {
                prepend_comments(st, std::mem::take(&mut orphaned));
            }
            // (Storing zero keeps every other zeroed memory zero.)
            if let Some(k) = reset {
                zeroed.insert(k);
                return true;
            }
            match &st.kind {
                // A declaration writes only the variables it declares: a
                // reset after further declarations still follows the
                // zeroing one.
                StmtKind::Decl { vars, .. } => {
                    for v in vars {
                        if let Some(Init::Expr(e)) = &v.init
                            && is_zero(e)
                        {
                            zeroed.insert((v.sym, String::new()));
                        }
                    }
                }
                // An assignment to a variable's own memory (not through a
                // pointer) changes that variable only.
                StmtKind::Assign { lhs, .. } => match super::names::direct_root(&self.out, lhs) {
                    Some(root) => zeroed.retain(|(r, _)| *r != root),
                    None => zeroed.clear(),
                },
                _ => zeroed.clear(),
            }
            true
        });
    }

    fn view_stmt(&self, s: &'a Stmt) -> View<Val<'a>> {
        let none = || Val::Atom("none".into());
        match &s.kind {
            StmtKind::Assign { lhs, rhs, .. } => {
                View::Node("assign", vec![Val::Expr(lhs), Val::Expr(rhs)])
            }
            StmtKind::Call { result, callee, .. } => View::Node(
                "call",
                vec![
                    Val::Proc(*callee),
                    Val::Args(s, 0),
                    result.as_ref().map(Val::Expr).unwrap_or_else(none),
                ],
            ),
            StmtKind::Decl {
                vars,
                storage: Storage::Static,
                ..
            } => View::Node("decl-static", vec![Val::Decls(vars)]),
            StmtKind::Decl { vars, .. } => View::Node("decl", vec![Val::Decls(vars)]),
            StmtKind::Alloc { target, count, .. } => {
                View::Node("alloc", vec![Val::Expr(target), Val::Expr(count)])
            }
            StmtKind::Free { ptr } => View::Node("free", vec![Val::Expr(ptr)]),
            StmtKind::If { cond, then, other } => View::Node(
                "if",
                vec![
                    Val::Expr(cond),
                    Val::Stmts(&then.stmts),
                    Val::Stmts(other.as_ref().map(|o| o.stmts.as_slice()).unwrap_or(&[])),
                ],
            ),
            StmtKind::Loop { header, body } => match header {
                LoopHeader::For { init, cond, step } => View::Node(
                    "for",
                    vec![
                        Val::Stmts(init),
                        cond.as_ref().map(Val::Expr).unwrap_or_else(none),
                        Val::Stmts(step),
                        Val::Stmts(&body.stmts),
                    ],
                ),
                LoopHeader::While { cond } => {
                    View::Node("while", vec![Val::Expr(cond), Val::Stmts(&body.stmts)])
                }
                LoopHeader::DoWhile { cond } => {
                    View::Node("do-while", vec![Val::Expr(cond), Val::Stmts(&body.stmts)])
                }
            },
            StmtKind::Switch { selector, cases } => {
                View::Node("switch", vec![Val::Expr(selector), Val::Cases(cases)])
            }
            StmtKind::Break => View::Node("break", vec![]),
            StmtKind::Continue => View::Node("continue", vec![]),
            StmtKind::Return(e) => View::Node(
                "return",
                vec![e.as_ref().map(Val::Expr).unwrap_or_else(none)],
            ),
            StmtKind::Block(b) => View::Node("block", vec![Val::Stmts(&b.stmts)]),
            StmtKind::Empty => View::Node("empty", vec![]),
            StmtKind::Discard(e) => View::Node("discard", vec![Val::Expr(e)]),
        }
    }

    fn view_expr(&self, e: &'a Expr) -> View<Val<'a>> {
        match &e.kind {
            ExprKind::IntConst { value, .. } => View::Node("int", vec![Val::Num(*value as f64)]),
            ExprKind::RealConst { value, .. } => View::Node("real", vec![Val::Num(*value)]),
            ExprKind::CharConst { value, .. } => View::Node("char", vec![Val::Num(*value as f64)]),
            ExprKind::StrConst(_) => View::Node("str", vec![]),
            ExprKind::Var(s) => View::Node("var", vec![Val::Sym(*s)]),
            ExprKind::Index { base, index } => {
                View::Node("index", vec![Val::Expr(base), Val::Expr(index)])
            }
            ExprKind::Field {
                base,
                strukt,
                field,
            } => View::Node(
                "field",
                vec![
                    Val::Expr(base),
                    Val::Atom(
                        self.program
                            .field_name(*strukt, *field)
                            .unwrap_or("")
                            .into(),
                    ),
                ],
            ),
            ExprKind::Deref(p) => View::Node("deref", vec![Val::Expr(p)]),
            ExprKind::AddrOf(r) => View::Node("addr", vec![Val::Expr(r)]),
            ExprKind::Unary { op, arg } => View::Node(
                match op {
                    UnOp::Neg => "neg",
                    UnOp::Plus => "plus",
                    UnOp::Not => "not",
                    UnOp::BitNot => "bitnot",
                },
                vec![Val::Expr(arg)],
            ),
            ExprKind::Binary { op, lhs, rhs } => {
                View::Node(binop_name(*op), vec![Val::Expr(lhs), Val::Expr(rhs)])
            }
            ExprKind::Intrinsic { call, args } => View::Node(
                "intrinsic",
                vec![Val::Atom(call.func.c_name().into()), Val::Exprs(args)],
            ),
            ExprKind::Cast { arg, .. } => View::Node("cast", vec![Val::Expr(arg)]),
            ExprKind::Cond { cond, then, other } => View::Node(
                "cond",
                vec![Val::Expr(cond), Val::Expr(then), Val::Expr(other)],
            ),
            ExprKind::SizeOfType(_) => View::Node("sizeof-type", vec![]),
            ExprKind::SizeOfExpr(x) => View::Node("sizeof", vec![Val::Expr(x)]),
        }
    }

    /// Builders that need more than a line.
    fn build_more(
        &mut self,
        head: &str,
        mut args: Vec<Val<'a>>,
        node: &Val<'a>,
        rule: &str,
    ) -> Result<Result<Val<'a>, Vec<Val<'a>>>, ApplyError> {
        Ok(Ok(match head {
            "switch-entry" => {
                let Some(s) = self.stmt() else {
                    return Err(ApplyError::new("'switch-entry' outside a switch"));
                };
                let before = self.varied.before.get(&s.id).cloned().unwrap_or_default();
                let mut later = self.varied.after.get(&s.id).cloned().unwrap_or_default();
                if let StmtKind::Switch { cases, .. } = &s.kind {
                    for c in cases {
                        if let Some(first) = c.body.first()
                            && let Some(b) = self.varied.before.get(&first.id)
                        {
                            later.extend(b.iter().copied());
                        }
                    }
                }
                let scope = self.scope_at(None);
                let r = self.resets(&later, &before, scope);
                Val::Code(self.tag(r, "tangent/reset-merge"))
            }
            "case-merge" => {
                let new = self.code_of(args.pop().unwrap_or(Val::Code(vec![])))?;
                let (Val::Case(case), Some(s)) = (node, self.stmt()) else {
                    return Err(ApplyError::new("'case-merge' inside a case"));
                };
                let StmtKind::Switch { cases, .. } = &s.kind else {
                    return Err(ApplyError::new("'case-merge' inside a switch"));
                };
                let i = cases
                    .iter()
                    .position(|c| std::ptr::eq(c, *case))
                    .unwrap_or(0);
                let start = |c: &SwitchCase| {
                    c.body
                        .first()
                        .and_then(|f| self.varied.before.get(&f.id).cloned())
                };
                let next = cases[i + 1..]
                    .iter()
                    .find_map(start)
                    .or_else(|| self.varied.after.get(&s.id).cloned());
                let entry = start(case).unwrap_or_default();
                let mut code = new;
                if let (Some(next), Some(end)) = (next, self.varied.end_of(&case.body, &entry)) {
                    let scope = self.scope_at(None);
                    let r = self.resets(&next, &end, scope);
                    code.extend(self.tag(r, "tangent/reset-merge"));
                }
                Val::Code(code)
            }
            "dummy-decl" | "dummy-ref" => {
                let Some(Val::Arg(s, i)) = args.first().cloned() else {
                    return Err(ApplyError::new(format!("'{head}' takes an argument")));
                };
                let key = (s as *const Stmt as usize, i);
                if !self.dummies.contains_key(&key) {
                    let e = self.arg_expr(s, i);
                    let pointer = is_pointer(&self.out, &e.ty);
                    let mut ty = if pointer {
                        match dummy_extent(self.program, e) {
                            Some(t) => self.types.of(&self.out, t),
                            None => return Err(self.dummy_error(s, i)),
                        }
                    } else {
                        self.types.of(&self.out, &e.ty)
                    };
                    // The vector mode zeroes it by assignments.
                    super::names::strip_own_const(&mut ty);
                    if super::names::holds_pointer(&self.out, &ty.ty, 0) {
                        // Its pointer members would be null where the
                        // callee reads derivatives through them.
                        return Err(ApplyError::new(format!(
                            "argument {} of this call has no derivative here, and a zero derivative of \
                             its type would hold null pointers the callee reads through",
                            i + 1
                        )));
                    }
                    let (var, mut decl) = self.temp(&ty, "dummyd")?;
                    if let ExprKind::Var(v) = var.kind {
                        self.info.derivative_syms.insert(v);
                    }
                    if let StmtKind::Decl { vars, .. } = &mut decl.kind {
                        let span = self.span();
                        vars[0].init = Some(self.zero_init(&ty, span));
                    }
                    let r = if pointer {
                        match self.out.resolve(&ty.ty) {
                            Type::Array { .. } => var,
                            _ => {
                                let span = self.span();
                                Expr::new(
                                    ExprKind::AddrOf(Box::new(var.clone())),
                                    ty.clone().pointer_to(),
                                    span,
                                )
                            }
                        }
                    } else {
                        var
                    };
                    self.dummies.insert(key, (decl, r));
                }
                let (decl, r) = self.dummies[&key].clone();
                if head == "dummy-decl" {
                    Val::Code(self.tag(vec![decl], rule))
                } else {
                    Val::New(r)
                }
            }
            "external-chain" => {
                let dargs = self
                    .list_of(args.pop().unwrap_or(Val::List(vec![])))?
                    .iter()
                    .map(|v| self.expr_of(v))
                    .collect::<Result<Vec<_>, _>>()?;
                let (Some(Val::Args(s, _)), Some(Val::Proc(p))) = (args.pop(), args.pop()) else {
                    return Err(ApplyError::new(
                        "'external-chain' takes the callee and its arguments",
                    ));
                };
                let StmtKind::Call { args: cargs, .. } = &s.kind else {
                    return Err(ApplyError::new("not a call"));
                };
                let name = self.program.proc(p).name.clone();
                Val::New(self.chain(&name, cargs, dargs, rule)?)
            }
            "no-derivative" => {
                let Some(Val::Proc(p)) = args.first() else {
                    return Err(ApplyError::new("'no-derivative' names a callee"));
                };
                return Err(ApplyError::new(no_derivative_message(self.program, *p)));
            }
            "external-outputs" => {
                let Some(Val::Proc(p)) = args.first() else {
                    return Err(ApplyError::new("'external-outputs' names a callee"));
                };
                let proc = self.program.proc(*p);
                let writes_reals = proc.params.iter().any(|&s| {
                    let ty = &self.program.sym(s).ty;
                    match self.out.resolve(&ty.ty) {
                        Type::Pointer(t) => !t.is_const && self.out.contains_real(&t.ty),
                        _ => false,
                    }
                });
                if writes_reals && !self.is_system(*p) {
                    return Err(ApplyError::new(format!(
                        "external function '{}' may write reals through a pointer argument; aioli cannot \
                         differentiate it without its body",
                        proc.name
                    )));
                }
                match node {
                    Val::Stmt(s) => Val::Code(self.tag(vec![(*s).clone()], rule)),
                    _ => Val::Code(vec![]),
                }
            }
            _ => return Ok(Err(args)),
        }))
    }

    /// What must hold its true derivative at a loop's header: what is
    /// varied there, and what is varied after the loop (through a `break`)
    /// since the test's exit edge leaves from the header
    /// (`tangent/reset-merge`).
    fn loop_merge_set(&self, id: StmtId) -> Set {
        let mut set = self.varied.header.get(&id).cloned().unwrap_or_default();
        if let Some(after) = self.varied.after.get(&id) {
            set.extend(after.iter().copied());
        }
        set
    }

    fn is_system(&self, p: ProcId) -> bool {
        self.program.proc(p).origin == ProcOrigin::System
    }

    fn dummy_error(&self, s: &Stmt, i: usize) -> ApplyError {
        let callee = match &s.kind {
            StmtKind::Call { callee, .. } => self.program.proc(*callee).name.clone(),
            _ => String::new(),
        };
        ApplyError::new(format!(
            "argument {} of this call to '{callee}' has no derivative here, and aioli cannot size a zero \
             derivative buffer for it (pass a fixed-size array or the address of a variable)",
            i + 1
        ))
    }
}

/// The first statement setting a global pointer (`sets`) under a test
/// reading persistent state, with that state's variable.
fn state_guarded_set(
    stmts: &[Stmt],
    state: &HashSet<SymId>,
    sets: &dyn Fn(&Stmt) -> Option<SymId>,
    tests: &mut Vec<SymId>,
) -> Option<(crate::front::source::Span, SymId, SymId)> {
    for st in stmts {
        if let Some(g) = sets(st)
            && let Some(&reads) = tests.first()
        {
            return Some((st.span, g, reads));
        }
        let mut nested = |cond: Option<&Expr>, blocks: Vec<&[Stmt]>| {
            let before = tests.len();
            if let Some(c) = cond {
                crate::il::visit_expr(c, &mut |x| {
                    if let ExprKind::Var(v) = &x.kind
                        && state.contains(v)
                    {
                        tests.push(*v);
                    }
                });
            }
            let found = blocks
                .into_iter()
                .find_map(|b| state_guarded_set(b, state, sets, tests));
            tests.truncate(before);
            found
        };
        let found = match &st.kind {
            StmtKind::If { cond, then, other } => nested(
                Some(cond),
                std::iter::once(then.stmts.as_slice())
                    .chain(other.as_ref().map(|o| o.stmts.as_slice()))
                    .collect(),
            ),
            StmtKind::Switch { selector, cases } => nested(
                Some(selector),
                cases.iter().map(|c| c.body.as_slice()).collect(),
            ),
            StmtKind::Loop { body, .. } => nested(None, vec![body.stmts.as_slice()]),
            StmtKind::Block(b) => nested(None, vec![b.stmts.as_slice()]),
            _ => None,
        };
        if found.is_some() {
            return found;
        }
    }
    None
}

/// A reference to fixed memory of a variable (`v`, `v.f`, `a[1]`), as
/// the variable and a key of the path; `None` for an index that varies or
/// a path through a pointer.
fn reset_key(program: &Program, e: &Expr) -> Option<(SymId, String)> {
    match &e.kind {
        ExprKind::Var(v) => Some((*v, String::new())),
        ExprKind::Field { base, field, .. } => {
            let (root, path) = reset_key(program, base)?;
            Some((root, format!("{path}.{field}")))
        }
        ExprKind::Index { base, index }
            if matches!(program.resolve(&base.ty.ty), Type::Array { .. }) =>
        {
            let ExprKind::IntConst { value, .. } = &index.kind else {
                return None;
            };
            let (root, path) = reset_key(program, base)?;
            Some((root, format!("{path}[{value}]")))
        }
        _ => None,
    }
}
