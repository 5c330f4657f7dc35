//! What gets a derivative, and its name and type (`tangent/names`,
//! `tangent/types`).
//!
//! The analyses say which zones are active somewhere (`pred/diff`). From
//! them: the variables whose derivative exists (a variable with a diff
//! zone; a pointer through which diff memory is reached; a pointer or array
//! whose address flows into such a pointer), the struct fields kept in the
//! derivative struct types, and the procedures differentiated.

use crate::analysis::Analysis;
use crate::analysis::locs::{ObjKind, Zone};
use crate::il::{
    BinOp, Expr, ExprKind, ProcId, Program, QualType, StmtKind, StructId, SymId, Type, TypedefId,
    UnOp,
};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::collections::BTreeSet;

/// Which symbols, fields and procedures carry derivatives.
#[derive(Default)]
pub struct DiffSets {
    pub syms: HashSet<SymId>,
    pub fields: HashSet<(StructId, usize)>,
    /// Procedures whose result has a derivative.
    pub results: HashSet<ProcId>,
    /// `tangent/call-frees`: procedures that free memory with a derivative
    /// through a pointer formal (`free_vector(v)`), so their derivative
    /// frees the derivative memory too.
    pub frees: HashSet<ProcId>,
    /// `tangent/call-sets-global`: procedures that store an address into a
    /// global pointer with a derivative pointer (`work = malloc(...)` in a
    /// `setup` routine) or free it, or call one that does, so their
    /// derivative sets or frees the derivative pointer along.
    /// With the global pointer (the first found).
    pub sets_globals: HashMap<ProcId, SymId>,
    /// `tangent/call-stores-pointer`: procedures given, through a pointer
    /// formal, memory with a derivative where they store an address
    /// (`vec_init(&v, n)` setting `v->data = malloc(...)`), so their
    /// derivative stores the derivative address alongside.
    pub stores_pointers: HashSet<ProcId>,
}

impl DiffSets {
    pub fn of(a: &Analysis<'_>, procs: &[ProcId]) -> DiffSets {
        let program = a.program;
        let mut d = DiffSets::default();
        let mut zones: Vec<Zone> = a.diff_zones.iter().copied().collect();
        let mut seen: HashSet<Zone> = zones.iter().copied().collect();
        while let Some(z) = zones.pop() {
            let info = a.locs.zone(z);
            let obj = a.locs.object(info.obj);
            let root_ty = match &obj.kind {
                ObjKind::Var(s) => {
                    d.syms.insert(*s);
                    Some(program.sym(*s).ty.clone())
                }
                ObjKind::Target { pointer, .. } => {
                    // The pointer that reaches this memory needs a derivative.
                    if seen.insert(*pointer) {
                        zones.push(*pointer);
                    }
                    pointee(program, &a.locs.zone(*pointer).ty)
                }
                ObjKind::Result(p) => {
                    d.results.insert(*p);
                    None
                }
                ObjKind::Heap { proc, stmt, .. } => {
                    let (elem, target) = alloc_elem(program, *proc, *stmt);
                    d.syms.extend(target);
                    elem
                }
                ObjKind::Control { .. } => None,
            };
            if let Some(ty) = root_ty {
                mark_path(program, &ty, &info.path, &mut d.fields);
            }
        }
        // CONTRACT §3: a head whose result is a dependent returns its
        // derivative (and the primal through `double *f`), or takes its
        // adjoint, even where that derivative is zero.
        for h in &a.heads {
            if h.dependents.contains(&crate::analysis::HeadVar::Result) {
                d.results.insert(h.proc);
            }
        }
        // The (member zone, destination) pairs of pointer members of
        // struct variables and heap blocks, each once (the points repeat
        // them).
        let mut members: Vec<(Zone, crate::analysis::locs::Place)> = procs
            .iter()
            .filter_map(|p| a.facts.get(p))
            .flat_map(|f| f.pts_before.iter().flatten().chain(f.exit_pts.iter()))
            .filter(|(z, _)| {
                let info = a.locs.zone(*z);
                !info.path.is_empty()
                    && matches!(
                        a.locs.object(info.obj).kind,
                        ObjKind::Var(_) | ObjKind::Heap { .. }
                    )
            })
            .copied()
            .collect();
        members.sort_unstable();
        members.dedup();
        // Pointers that designate diff memory, and what their values come
        // from, need derivatives too: iterate over pointer assignments.
        loop {
            let before = (
                d.syms.len(),
                d.results.len(),
                d.frees.len(),
                d.sets_globals.len(),
                d.stores_pointers.len(),
                d.fields.len(),
            );
            mark_struct_pointer_members(a, &members, &mut d);
            for &p in procs {
                let Some(body) = &program.proc(p).body else {
                    continue;
                };
                let ref_zones = a.facts.get(&p).map(|f| &f.ref_zones);
                let reaches_diff = |b: &Expr| {
                    ref_zones
                        .and_then(|rz| rz.get(&crate::analysis::facts::key(b)))
                        .is_some_and(|zs| zs.iter().any(|z| a.diff_zones.contains(z)))
                };
                crate::il::visit_stmts(&body.stmts, &mut |s| {
                    for e in stmt_exprs(s) {
                        deref_bases(e, &mut |b| {
                            // Also a pointer through which a pointer with a
                            // derivative pointer is reached (`dst->data =
                            // a.data` with `dst = &b`): the derivative
                            // pointer is reached through its derivative.
                            let reaches_derivative_pointer = || {
                                ref_zones
                                    .and_then(|rz| rz.get(&crate::analysis::facts::key(b)))
                                    .is_some_and(|zs| {
                                        zs.iter().any(|&z| has_derivative_pointer(a, &d, z))
                                    })
                            };
                            if reaches_diff(b) || reaches_derivative_pointer() {
                                address_roots(b, &mut d.syms, &mut d.fields);
                            }
                        });
                    }
                    // A pointer passed to a call where it may point to
                    // diff memory (`dot(n, row, x)` with `row = A + i *
                    // n`): the callee reads derivatives through it, so it
                    // has a derivative pointer, though this procedure
                    // never dereferences it.
                    // Not when the callee's formal has none (`seg(b, e)`
                    // only computing `e - b`): that derivative pointer
                    // would be set and never read.
                    if let StmtKind::Call { args, callee, .. } = &s.kind {
                        for arg in diff_memory_args(a, p, s, args) {
                            let k = args.iter().position(|x| std::ptr::eq(x, arg));
                            if !k.is_some_and(|k| only_compared(program, *callee, k)) {
                                pointer_roots(arg, &mut d.syms);
                            }
                        }
                    }
                    // A pointer to memory of this procedure's (a malloc'd
                    // scratch buffer) given by an active call to a formal
                    // with a derivative: the callee computes derivatives
                    // in that memory, so it gets derivative memory too.
                    if let StmtKind::Call { callee, args, .. } = &s.kind
                        && program.proc(*callee).body.is_some()
                        && a.is_active_call(p, s.id)
                    {
                        for (k, (formal, arg)) in
                            program.proc(*callee).params.iter().zip(args).enumerate()
                        {
                            // Written there with active values: a buffer
                            // only read (passive data) is left to a copy
                            // of the callee (`specialize/activity`).
                            let computes_in = || {
                                super::tangent::writes_through_formal(a, *callee, k)
                                    .is_some_and(|w| w.iter().any(|z| a.diff_zones.contains(z)))
                            };
                            if d.syms.contains(formal)
                                && is_pointer(program, &arg.ty)
                                && computes_in()
                                && root_sym(arg).is_some_and(|r| {
                                    is_pointer(program, &program.sym(r).ty)
                                        && program.sym(r).kind != crate::il::SymKind::Global
                                })
                            {
                                pointer_roots(arg, &mut d.syms);
                            }
                        }
                    }
                    // `tangent/call-frees`: a pointer with a derivative
                    // pointer given to a procedure that frees it (or a
                    // struct holding one, by value: `vec_free(v)`).
                    if let StmtKind::Call { callee, args, .. } = &s.kind {
                        for (k, (&formal, arg)) in
                            program.proc(*callee).params.iter().zip(args).enumerate()
                        {
                            if (is_pointer(program, &arg.ty)
                                || holds_real_pointer(program, &arg.ty.ty, 0))
                                && d.is_diff_ref(program, arg)
                                && frees_through(program, *callee, k, &mut Vec::new())
                            {
                                d.syms.insert(formal);
                                d.frees.insert(*callee);
                            }
                        }
                    }
                    // `tangent/call-stores-pointer`: memory with a
                    // derivative given to a procedure that stores an
                    // address there (`vec_init(&v, n)`).
                    if let StmtKind::Call { callee, args, .. } = &s.kind {
                        for (k, (&formal, arg)) in
                            program.proc(*callee).params.iter().zip(args).enumerate()
                        {
                            if is_pointer(program, &arg.ty)
                                && d.is_diff_ref(program, arg)
                                && super::tangent::writes_through_formal(a, *callee, k)
                                    .is_some_and(|w| w.iter().any(|&z| a.locs.zone(z).pointer))
                            {
                                d.syms.insert(formal);
                                d.stores_pointers.insert(*callee);
                            }
                        }
                    }
                    // `tangent/call-sets-global`: a global pointer with a
                    // derivative pointer set here, or by a callee that does.
                    let sets = stored_or_freed(s);
                    // (A global pointer, or one held in a global array or
                    // struct: `rows[0] = &mat[0]`, `F.u = ustore`.)
                    let set_global = sets.and_then(|e| {
                        let root = global_root(program, e)?;
                        (is_pointer(program, &e.ty) && d.is_diff_ref(program, e)).then_some(root)
                    });
                    let set_by_callee = match &s.kind {
                        StmtKind::Call { callee, .. } => d.sets_globals.get(callee).copied(),
                        _ => None,
                    };
                    if let Some(g) = set_global.or(set_by_callee) {
                        d.sets_globals.entry(p).or_insert(g);
                    }
                    match &s.kind {
                        // (Not a member without a derivative: `a.rowp =
                        // rowp`, an `int *` beside an active `a.val`.)
                        // A whole struct holding such pointers (`*dst =
                        // *src`): its pointer members come from the
                        // source's, so the source has derivative pointers.
                        StmtKind::Assign { lhs, rhs, .. }
                            if (is_pointer(program, &lhs.ty)
                                || holds_real_pointer(program, &lhs.ty.ty, 0))
                                && d.is_diff_ref(program, lhs) =>
                        {
                            pointer_roots(rhs, &mut d.syms);
                        }
                        StmtKind::Decl { vars, .. } => {
                            for v in vars {
                                let ty = &program.sym(v.sym).ty;
                                if !d.syms.contains(&v.sym)
                                    || !(is_pointer(program, ty)
                                        || holds_real_pointer(program, &ty.ty, 0))
                                {
                                    continue;
                                }
                                match &v.init {
                                    Some(crate::il::Init::Expr(e)) => pointer_roots(e, &mut d.syms),
                                    // `Vec v = {n, p};`: the addresses in
                                    // the list (`tangent/declarator-init`
                                    // takes each item's derivative).
                                    Some(init @ crate::il::Init::List(..)) => {
                                        crate::il::visit_init(init, &mut |e| {
                                            if holds_real_pointer(program, &e.ty.ty, 0) {
                                                pointer_roots(e, &mut d.syms);
                                            }
                                        })
                                    }
                                    None => {}
                                }
                            }
                        }
                        // `tangent/pointer-result`: a pointer with a
                        // derivative pointer set from a call's result: the
                        // callee returns the derivative pointer too.
                        StmtKind::Call {
                            callee,
                            result: Some(r),
                            args,
                            ..
                        } if is_pointer(program, &r.ty)
                            && program.proc(*callee).body.is_some()
                            && root_sym(r).is_some_and(|v| d.syms.contains(&v)) =>
                        {
                            d.results.insert(*callee);
                            // The pointers it is given that its result may
                            // come from (`return at(x, i)` in a helper).
                            for (&formal, arg) in program.proc(*callee).params.iter().zip(args) {
                                if d.syms.contains(&formal) && is_pointer(program, &arg.ty) {
                                    pointer_roots(arg, &mut d.syms);
                                }
                            }
                        }
                        // ... and what it returns has one.
                        StmtKind::Return(Some(e))
                            if d.results.contains(&p) && is_pointer(program, &e.ty) =>
                        {
                            pointer_roots(e, &mut d.syms);
                        }
                        _ => {}
                    }
                });
            }
            if (
                d.syms.len(),
                d.results.len(),
                d.frees.len(),
                d.sets_globals.len(),
                d.stores_pointers.len(),
                d.fields.len(),
            ) == before
            {
                break;
            }
        }
        d
    }

    /// `tangent/pointer-result`, `adjoint/pointer-result`: a call storing
    /// a pointer result into a pointer that has a derivative pointer, from
    /// a procedure whose result is differentiated (`p = row(a, i)`).
    pub fn sets_derivative_pointer(&self, program: &Program, s: &crate::il::Stmt) -> bool {
        matches!(&s.kind, StmtKind::Call { callee, result: Some(r), .. }
            if is_pointer(program, &r.ty)
                && program.proc(*callee).body.is_some()
                && self.results.contains(callee)
                && self.is_diff_ref(program, r))
    }

    /// A call whose derivative keeps derivative pointers in step with the
    /// pointers it sets, so it is active (and split in the adjoint) though
    /// it may compute nothing active: a call of a procedure that sets or
    /// frees a global pointer with a derivative pointer
    /// (`tangent/call-sets-global`), or one giving memory with a derivative
    /// to a procedure that stores an address there
    /// (`tangent/call-stores-pointer`).
    pub fn moves_derivative_pointers(&self, program: &Program, s: &crate::il::Stmt) -> bool {
        let StmtKind::Call { callee, args, .. } = &s.kind else {
            return false;
        };
        self.sets_globals.contains_key(callee)
            || (self.stores_pointers.contains(callee)
                && program
                    .proc(*callee)
                    .params
                    .iter()
                    .zip(args)
                    .any(|(formal, arg)| {
                        self.syms.contains(formal) && self.is_diff_ref(program, arg)
                    }))
    }

    /// `tangent/call-frees`: a call giving a pointer with a derivative
    /// pointer to a procedure that frees it: `P_d` frees both.
    pub fn frees_derivative(&self, program: &Program, s: &crate::il::Stmt) -> bool {
        matches!(&s.kind, StmtKind::Call { callee, args, .. }
        if self.frees.contains(callee)
            && program.proc(*callee).params.iter().zip(args).any(|(formal, arg)| {
                self.syms.contains(formal) && self.is_diff_ref(program, arg)
            }))
    }

    /// `pred/diff` extended to references: does `e` designate memory with
    /// a derivative?
    pub fn is_diff_ref(&self, program: &Program, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Var(s) => self.syms.contains(s),
            ExprKind::Index { base, .. } => self.is_diff_ref(program, base),
            ExprKind::Deref(p) => self.is_diff_ref(program, p),
            ExprKind::Field {
                base,
                strukt,
                field,
            } => self.fields.contains(&(*strukt, *field)) && self.is_diff_ref(program, base),
            ExprKind::AddrOf(r) => self.is_diff_ref(program, r),
            ExprKind::Cast { arg, .. } => self.is_diff_ref(program, arg),
            // `*(c ? a : b)`: the derivative of either (`tangent/ref-cond`).
            ExprKind::Cond { then, other, .. } => {
                self.is_diff_ref(program, then) || self.is_diff_ref(program, other)
            }
            ExprKind::Binary { lhs, rhs, .. } if is_pointer(program, &e.ty) => {
                // `p + k`, `k + p`, and an array decaying (`c + 1`).
                if is_address(program, &lhs.ty) {
                    self.is_diff_ref(program, lhs)
                } else {
                    self.is_diff_ref(program, rhs)
                }
            }
            _ => false,
        }
    }
}

/// What a pointer (or an array of pointers) points to.
fn pointee(program: &Program, ty: &QualType) -> Option<QualType> {
    match program.resolve(&ty.ty) {
        Type::Pointer(t) => Some((**t).clone()),
        Type::Array { elem, .. } => pointee(program, elem),
        _ => None,
    }
}

/// The element type and the target's variable of the allocation statement
/// `stmt` of `proc`.
fn alloc_elem(
    program: &Program,
    proc: ProcId,
    stmt: crate::il::StmtId,
) -> (Option<QualType>, Option<SymId>) {
    let mut found = (None, None);
    if let Some(body) = &program.proc(proc).body {
        crate::il::visit_stmts(&body.stmts, &mut |s| {
            if s.id == stmt
                && let StmtKind::Alloc { elem, target, .. } = &s.kind
            {
                found = (Some(elem.clone()), root_sym(target));
            }
        });
    }
    found
}

/// Marks the struct fields a zone's path goes through.
fn mark_path(
    program: &Program,
    ty: &QualType,
    path: &[usize],
    out: &mut HashSet<(StructId, usize)>,
) {
    out.extend(path_members(program, ty, path).0);
}

/// The struct members a zone path from a value of type `ty` goes through
/// (arrays and pointers on the way stepped into), and whether the whole
/// path was followed (false where it leaves a struct).
fn path_members(
    program: &Program,
    ty: &QualType,
    path: &[usize],
) -> (Vec<(StructId, usize)>, bool) {
    let mut members = Vec::new();
    let mut ty = ty.ty.clone();
    for &i in path {
        while let Type::Array { elem, .. } | Type::Pointer(elem) = program.resolve(&ty).clone() {
            ty = elem.ty;
        }
        let Type::Struct(s) = program.resolve(&ty).clone() else {
            return (members, false);
        };
        members.push((s, i));
        let Some(f) = program.strukt(s).fields.get(i) else {
            return (members, false);
        };
        ty = f.ty.ty.clone();
    }
    (members, true)
}

/// A struct variable with a pointer member that may point to diff memory
/// (`v.data = buf` with buf active), or to a pointer with a derivative
/// pointer (`h.v = &a` with `a.data` one), needs a derivative whose member
/// follows it, even where nothing here dereferences the member (a callee
/// does, through `&v`).
fn mark_struct_pointer_members(
    a: &Analysis<'_>,
    members: &[(Zone, crate::analysis::locs::Place)],
    d: &mut DiffSets,
) {
    let program = a.program;
    {
        for (z, place) in members {
            let info = a.locs.zone(*z);
            if !a
                .locs
                .place_zones(*place)
                .iter()
                .any(|&t| a.diff_zones.contains(&t) || has_derivative_pointer(a, d, t))
            {
                continue;
            }
            match &a.locs.object(info.obj).kind {
                ObjKind::Var(sym) => {
                    d.syms.insert(*sym);
                    mark_path(program, &program.sym(*sym).ty, &info.path, &mut d.fields);
                }
                // A heap array of such structs (`r[0].src = &x[1]` with `r`
                // from malloc): the pointers it is stored into get
                // derivative pointers to a `T_d` buffer.
                ObjKind::Heap { proc, stmt, .. } => {
                    let (elem, target) = alloc_elem(program, *proc, *stmt);
                    d.syms.extend(target);
                    if let Some(elem) = elem {
                        mark_path(program, &elem, &info.path, &mut d.fields);
                    }
                }
                _ => {}
            }
        }
    }
}

/// Is zone `z` a pointer (a variable, or a member of a struct variable)
/// that has a derivative pointer in `d`?
fn has_derivative_pointer(a: &Analysis<'_>, d: &DiffSets, z: Zone) -> bool {
    let info = a.locs.zone(z);
    if !info.pointer {
        return false;
    }
    let program = a.program;
    // The type the zone's path starts from, where the memory holding it
    // has derivative memory: a variable with a derivative, a heap block
    // allocated into a pointer with one, a formal's target whose pointer
    // has one.
    let root = match &a.locs.object(info.obj).kind {
        ObjKind::Var(sym) => d.syms.contains(sym).then(|| program.sym(*sym).ty.clone()),
        ObjKind::Heap { proc, stmt, .. } => match alloc_elem(program, *proc, *stmt) {
            (Some(elem), Some(target)) if d.syms.contains(&target) => Some(elem),
            _ => None,
        },
        ObjKind::Target { pointer, .. } => match a.locs.object(a.locs.zone(*pointer).obj).kind {
            ObjKind::Var(ps) if d.syms.contains(&ps) => pointee(program, &a.locs.zone(*pointer).ty),
            _ => None,
        },
        _ => None,
    };
    let Some(root) = root else {
        return false;
    };
    let (members, whole) = path_members(program, &root, &info.path);
    whole && members.iter().all(|m| d.fields.contains(m))
}

/// Calls `f` on every reference a dereference or index goes through.
fn deref_bases<'e>(e: &'e Expr, f: &mut impl FnMut(&'e Expr)) {
    match &e.kind {
        ExprKind::Index { base, index } => {
            f(e);
            deref_bases(base, f);
            deref_bases(index, f);
        }
        ExprKind::Deref(p) => {
            f(e);
            deref_bases(p, f);
        }
        ExprKind::Field { base, .. } => {
            f(e);
            deref_bases(base, f);
        }
        ExprKind::AddrOf(x) | ExprKind::Cast { arg: x, .. } | ExprKind::Unary { arg: x, .. } => {
            deref_bases(x, f)
        }
        ExprKind::SizeOfExpr(_) => {}
        ExprKind::Binary { lhs, rhs, .. } => {
            deref_bases(lhs, f);
            deref_bases(rhs, f);
        }
        ExprKind::Cond { cond, then, other } => {
            deref_bases(cond, f);
            deref_bases(then, f);
            deref_bases(other, f);
        }
        ExprKind::Intrinsic { args, .. } => args.iter().for_each(|a| deref_bases(a, f)),
        _ => {}
    }
}

pub use crate::il::stmt_exprs;

/// A variable assigned after its declaration (a hoisted one, a zero
/// buffer): its own `const` (and its array elements') goes, what it points
/// to keeps it.
pub(crate) fn strip_own_const(ty: &mut QualType) {
    ty.is_const = false;
    if let Type::Array { elem, .. } = &mut ty.ty {
        strip_own_const(elem);
    }
}

/// The variables whose address `stmts` take (`&x`, `&a[i]`, `&s.f`),
/// nested statements and loop headers included.
pub fn address_taken(stmts: &[crate::il::Stmt]) -> HashSet<SymId> {
    let mut out = HashSet::default();
    crate::il::visit_stmts(stmts, &mut |st| {
        for e in stmt_exprs(st) {
            crate::il::visit_expr(e, &mut |x| {
                if let ExprKind::AddrOf(a) = &x.kind
                    && let Some(r) = root_sym(a)
                {
                    out.insert(r);
                }
            });
        }
    });
    out
}

/// The variable at the root of a reference.
pub fn root_sym(e: &Expr) -> Option<SymId> {
    match &e.kind {
        ExprKind::Var(s) => Some(*s),
        ExprKind::Index { base, .. } => root_sym(base),
        ExprKind::Deref(p) => root_sym(p),
        ExprKind::Field { base, .. } => root_sym(base),
        _ => None,
    }
}

/// The arguments of call `s` (in procedure `p`) that may point to diff
/// memory.
fn diff_memory_args<'e>(
    a: &Analysis<'_>,
    p: ProcId,
    s: &crate::il::Stmt,
    args: &'e [Expr],
) -> Vec<&'e Expr> {
    let Some(f) = a.facts.get(&p) else {
        return Vec::new();
    };
    let Some(site) = f.point_of.get(&s.id).and_then(|i| f.calls.get(i)) else {
        return Vec::new();
    };
    let pts = f.point_of.get(&s.id).and_then(|&i| f.pts_before.get(i));
    // Memory holding pointers to diff memory, up to a few levels down (a
    // table of row pointers `double *rows[n]` or an NR `double **m`
    // given to a helper that reads `A[i][j]`): the callee follows the
    // derivative pointers through the derivative of the table.
    let reaches_diff = |zones: &[Zone]| -> bool {
        let mut level: Vec<Zone> = zones.to_vec();
        let mut seen: HashSet<Zone> = level.iter().copied().collect();
        for _ in 0..4 {
            if level.iter().any(|z| a.diff_zones.contains(z)) {
                return true;
            }
            let Some(pts) = pts else { return false };
            let next: Vec<Zone> = pts
                .iter()
                .filter(|(z, _)| level.contains(z))
                .flat_map(|&(_, place)| a.locs.place_zones(place))
                .filter(|z| seen.insert(*z))
                .collect();
            if next.is_empty() {
                return false;
            }
            level = next;
        }
        false
    };
    // (Only an argument whose memory holds pointers is followed further.)
    let program = a.program;
    let holds_pointers = |arg: &Expr| match program.resolve(&arg.ty.ty) {
        Type::Pointer(t) => matches!(program.resolve(&t.ty), Type::Pointer(_)),
        Type::Array { elem, .. } => matches!(program.resolve(&elem.ty), Type::Pointer(_)),
        _ => false,
    };
    args.iter()
        .zip(&site.arg_places)
        .filter(|(arg, places)| {
            places.iter().any(|&pl| {
                let zones = a.locs.place_zones(pl);
                zones.iter().any(|z| a.diff_zones.contains(z))
                    || (holds_pointers(arg) && reaches_diff(&zones))
            })
        })
        .map(|(arg, _)| arg)
        .collect()
}

/// Is pointer formal `k` of `proc` only subtracted from or compared with
/// other pointers (`e - b`, `p < end`), never followed?
fn only_compared(program: &Program, proc: ProcId, k: usize) -> bool {
    let p = program.proc(proc);
    let (Some(body), Some(&formal)) = (&p.body, p.params.get(k)) else {
        return false;
    };
    let is_formal = |e: &Expr| matches!(e.kind, ExprKind::Var(v) if v == formal);
    let mut uses = 0usize;
    let mut compared = 0usize;
    crate::il::visit_stmts(&body.stmts, &mut |s| {
        for e in stmt_exprs(s) {
            crate::il::visit_expr(e, &mut |x| {
                if is_formal(x) {
                    uses += 1;
                }
                if let ExprKind::Binary { op, lhs, rhs } = &x.kind
                    && matches!(
                        op,
                        crate::il::BinOp::Sub
                            | crate::il::BinOp::Lt
                            | crate::il::BinOp::Le
                            | crate::il::BinOp::Gt
                            | crate::il::BinOp::Ge
                            | crate::il::BinOp::Eq
                            | crate::il::BinOp::Ne
                    )
                    && is_pointer(program, &lhs.ty)
                    && is_pointer(program, &rhs.ty)
                {
                    compared += usize::from(is_formal(lhs)) + usize::from(is_formal(rhs));
                }
            });
        }
    });
    compared > 0 && compared == uses
}

/// The variables a reference goes through, pointer arithmetic included
/// (`*(q + 1)` → q; `*(c ? a : b)` → a and b), and the struct members it
/// goes through (`a.rows[i][0]`: `rows` holds the address, so it needs a
/// derivative pointer).
fn address_roots(e: &Expr, out: &mut HashSet<SymId>, fields: &mut HashSet<(StructId, usize)>) {
    match &e.kind {
        ExprKind::Deref(p) => {
            member_of(p, fields);
            pointer_roots(p, out)
        }
        ExprKind::Index { base, .. } => {
            member_of(base, fields);
            address_roots(base, out, fields)
        }
        ExprKind::Field { base, .. } => address_roots(base, out, fields),
        _ => out.extend(root_sym(e)),
    }
}

/// Marks the members an address `e` is read through (`a.rows`,
/// `p->data`, `h.pp[0]`: `pp`).
fn member_of(e: &Expr, fields: &mut HashSet<(StructId, usize)>) {
    match &e.kind {
        ExprKind::Field {
            base,
            strukt,
            field,
        } => {
            fields.insert((*strukt, *field));
            member_of(base, fields);
        }
        ExprKind::Index { base, .. } | ExprKind::Cast { arg: base, .. } => member_of(base, fields),
        _ => {}
    }
}

/// The variables whose memory a pointer-valued expression may point into.
fn pointer_roots(e: &Expr, out: &mut HashSet<SymId>) {
    match &e.kind {
        ExprKind::Var(s) => {
            out.insert(*s);
        }
        ExprKind::AddrOf(r) => out.extend(root_sym(r)),
        ExprKind::Cast { arg, .. } => pointer_roots(arg, out),
        // `p + k` or `k + p`: the operand that has a root.
        ExprKind::Binary { lhs, rhs, .. } => {
            let mut left = HashSet::default();
            pointer_roots(lhs, &mut left);
            if left.is_empty() {
                pointer_roots(rhs, out);
            } else {
                out.extend(left);
            }
        }
        ExprKind::Cond { then, other, .. } => {
            pointer_roots(then, out);
            pointer_roots(other, out);
        }
        ExprKind::Index { .. } | ExprKind::Field { .. } | ExprKind::Deref(_) => {
            out.extend(root_sym(e))
        }
        _ => {}
    }
}

pub fn is_pointer(program: &Program, ty: &QualType) -> bool {
    matches!(program.resolve(&ty.ty), Type::Pointer(_))
}

/// A pointer, or an array standing for the address of its first element
/// (the operand of `c + 1`, an argument `c`).
pub fn is_address(program: &Program, ty: &QualType) -> bool {
    matches!(
        program.resolve(&ty.ty),
        Type::Pointer(_) | Type::Array { .. }
    )
}

/// Fresh names that clash with nothing in the program (CONTRACT §2: append
/// `0`, then `1`, ...).
pub struct Namer {
    taken: BTreeSet<String>,
    /// The names each procedure declares (parameters and locals).
    by_proc: HashMap<ProcId, BTreeSet<String>>,
    /// Every name of `by_proc`, whichever procedure declares it.
    declared_anywhere: HashSet<String>,
    /// Names of the procedure being differentiated (its parameters and
    /// locals, and what was created for it): local names need only avoid
    /// these and the global ones.
    local: BTreeSet<String>,
}

impl Namer {
    pub fn of(program: &Program) -> Namer {
        let mut taken = BTreeSet::new();
        taken.extend(
            program
                .symbols
                .iter()
                .filter(|s| s.kind == crate::il::SymKind::Global)
                .map(|s| s.name.clone()),
        );
        taken.extend(program.procs.iter().map(|p| p.name.clone()));
        taken.extend(program.typedefs.iter().map(|t| t.name.clone()));
        taken.extend(program.structs.iter().filter_map(|s| s.tag.clone()));
        // (The vector mode's direction counter picks a name free in each
        // procedure, so a derivative may be `nd`, as CONTRACT §2 names
        // the derivative of `n`.)
        for kw in ["nbdirs", "NBDIRSMAX"] {
            taken.insert(kw.to_string());
        }
        // The output keeps the user's `#define` lines: a name they define
        // would replace a generated variable of that name.
        taken.extend(program.macro_names().map(str::to_string));
        // Enumerators the output spells by name (`il/enum`).
        for item in &program.items {
            if let crate::il::ItemKind::Enum { constants, .. } = &item.kind {
                taken.extend(constants.iter().map(|c| c.name.clone()));
            }
        }
        // The procedure owning each scope: scopes are created after their
        // parent, so one pass in order inherits the owner.
        let mut owner: Vec<Option<ProcId>> = vec![None; program.scopes.len()];
        for (i, p) in program.procs.iter().enumerate() {
            owner[p.scope.index()] = Some(ProcId(i as u32));
            if let Some(b) = &p.body {
                owner[b.scope.index()] = Some(ProcId(i as u32));
            }
        }
        for i in 0..program.scopes.len() {
            if owner[i].is_none()
                && let Some(par) = program.scopes[i].parent
            {
                owner[i] = owner[par.index()];
            }
        }
        let mut by_proc: HashMap<ProcId, BTreeSet<String>> = HashMap::default();
        for sym in &program.symbols {
            if let Some(p) = owner.get(sym.scope.index()).copied().flatten() {
                by_proc.entry(p).or_default().insert(sym.name.clone());
            }
        }
        let declared_anywhere = by_proc.values().flatten().cloned().collect();
        Namer {
            taken,
            by_proc,
            declared_anywhere,
            local: BTreeSet::new(),
        }
    }

    /// Starts naming inside procedure `proc`: its own names are taken.
    pub fn enter_proc(&mut self, proc: ProcId) {
        self.local = self.by_proc.get(&proc).cloned().unwrap_or_default();
    }

    /// A global name (procedures, types, global variables), which no
    /// procedure's own name hides (`double h_d` in `f` would hide `h_d`).
    pub fn fresh(&mut self, base: &str) -> String {
        let hidden = |n: &str| self.declared_anywhere.contains(n);
        let n = if !hidden(base) {
            self.pick(base, |_, _| true)
        } else {
            (0..)
                .map(|i| format!("{base}{i}"))
                .find(|n| !self.taken.contains(n) && !self.local.contains(n) && !hidden(n))
                .unwrap_or_else(|| base.to_string())
        };
        self.taken.insert(n.clone());
        n
    }

    /// Is `name` a global one (a global variable, procedure, type, macro,
    /// or a name generated for the whole output)?
    pub fn is_global(&self, name: &str) -> bool {
        self.taken.contains(name)
    }

    /// Does procedure `proc` declare `name` (a parameter or a local)?
    pub fn declared_in(&self, proc: ProcId, name: &str) -> bool {
        self.by_proc
            .get(&proc)
            .is_some_and(|names| names.contains(name))
    }

    /// A name local to the current procedure.
    pub fn fresh_local(&mut self, base: &str) -> String {
        let n = self.pick(base, |_, _| true);
        self.local.insert(n.clone());
        n
    }

    /// Marks `name` as a local of the current procedure, so that no fresh
    /// local takes it.
    pub fn reserve_local(&mut self, name: &str) {
        self.local.insert(name.to_string());
    }

    fn pick(&self, base: &str, _ok: impl Fn(&Self, &str) -> bool) -> String {
        let free = |n: &str| !self.taken.contains(n) && !self.local.contains(n);
        if free(base) {
            return base.to_string();
        }
        (0..)
            .map(|i| format!("{base}{i}"))
            .find(|n| free(n))
            .unwrap_or_else(|| base.to_string())
    }
}

/// Derivative struct and typedef ids of the output program.
#[derive(Default)]
pub struct DiffTypes {
    pub structs: HashMap<StructId, StructId>,
    pub typedefs: HashMap<TypedefId, TypedefId>,
}

impl DiffTypes {
    /// The type of the derivative of a value of type `ty`
    /// (`tangent/types`): reals and arrays and pointers of reals keep their
    /// type, structs become their derivative struct.
    pub fn of(&self, program: &Program, ty: &QualType) -> QualType {
        QualType {
            ty: self.of_type(program, &ty.ty),
            is_const: ty.is_const,
        }
    }

    fn of_type(&self, program: &Program, ty: &Type) -> Type {
        match ty {
            Type::Named(t) => match self.typedefs.get(t) {
                Some(d) => Type::Named(*d),
                None => match program.resolve(ty) {
                    Type::Struct(_) | Type::Pointer(_) | Type::Array { .. } => {
                        self.of_type(program, program.resolve(ty))
                    }
                    _ => ty.clone(),
                },
            },
            Type::Struct(s) => Type::Struct(*self.structs.get(s).unwrap_or(s)),
            Type::Pointer(t) => Type::Pointer(Box::new(self.of(program, t))),
            Type::Array { elem, len } => Type::Array {
                elem: Box::new(self.of(program, elem)),
                len: len.clone(),
            },
            _ => ty.clone(),
        }
    }
}

/// Does a value of type `ty` hold a pointer (itself, an element, a field)?
pub(crate) fn holds_pointer(p: &Program, ty: &Type, depth: usize) -> bool {
    holds_pointer_to(p, ty, depth, &|_| true)
}

/// Does a value of type `ty` hold a pointer to memory containing reals
/// (itself, or in a field or element)?
pub(crate) fn holds_real_pointer(p: &Program, ty: &Type, depth: usize) -> bool {
    holds_pointer_to(p, ty, depth, &|t| p.contains_real(t))
}

/// Does a value of type `ty` hold a pointer whose pointee satisfies
/// `pointee`? Past 32 levels of nesting, yes: the cautious answer for the
/// refusals that ask.
fn holds_pointer_to(p: &Program, ty: &Type, depth: usize, pointee: &dyn Fn(&Type) -> bool) -> bool {
    if depth > 32 {
        return true;
    }
    match p.resolve(ty) {
        Type::Pointer(t) => pointee(&t.ty),
        Type::Array { elem, .. } => holds_pointer_to(p, &elem.ty, depth + 1, pointee),
        Type::Struct(s) => p
            .strukt(*s)
            .fields
            .iter()
            .any(|f| holds_pointer_to(p, &f.ty.ty, depth + 1, pointee)),
        _ => false,
    }
}

/// The first call statement in `procs` (in order, each body in source
/// order) for which `pick` holds: its location and callee.
fn first_call(
    program: &Program,
    procs: &[ProcId],
    pick: impl Fn(&crate::il::Stmt) -> bool,
) -> Option<(crate::front::source::Span, ProcId)> {
    for &p in procs {
        let Some(body) = &program.proc(p).body else {
            continue;
        };
        let mut found = None;
        crate::il::visit_stmts(&body.stmts, &mut |s| {
            if found.is_none()
                && pick(s)
                && let StmtKind::Call { callee, .. } = &s.kind
            {
                found = Some((s.span, *callee));
            }
        });
        if found.is_some() {
            return found;
        }
    }
    None
}

/// `adjoint/refuse` (both modes): a struct result holding a pointer to
/// reals. A bare pointer result is differentiated instead
/// (`tangent/pointer-result`, `adjoint/pointer-result`).
pub(crate) fn refuse_struct_pointer_results(
    program: &Program,
    procs: &[ProcId],
) -> Result<(), crate::front::diag::Diagnostic> {
    // A struct result holding a pointer to reals (`Vec v = vec_new(n)`):
    // the analyses do not carry the address it holds from the callee to
    // the caller, so what the caller writes through it would be lost.
    let returns_struct_pointer = |s: &crate::il::Stmt| match &s.kind {
        StmtKind::Call {
            callee,
            result: Some(_),
            ..
        } => {
            program.proc(*callee).body.is_some()
                && !is_pointer(program, &program.proc(*callee).ret)
                && holds_real_pointer(program, &program.proc(*callee).ret.ty, 0)
        }
        _ => false,
    };
    if let Some((span, callee)) = first_call(program, procs, returns_struct_pointer) {
        return Err(crate::front::diag::Diagnostic::error(
            span,
            format!(
                "'{}' returns a struct holding a pointer to reals; aioli does not follow \
                 addresses from a callee's result to its caller yet (fill the struct in the \
                 caller, or pass the buffer as a parameter)",
                program.proc(callee).name
            ),
        ));
    }
    Ok(())
}

/// `adjoint/refuse` (both modes): a library function called with a
/// pointer through which it may write the program's memory (`memmove(y,
/// x, …)`, `modf(x, &i)`, `scanf("%lf", &x)`): the analyses cannot see
/// which values it writes, so its effect would be lost. Strings (`char`),
/// opaque objects (`FILE *`) and untyped pointers pass; so do `memcpy`
/// and `memset` on typed memory, which the front end writes as loops
/// (`il/mem-loop`).
pub(crate) fn refuse_hidden_writes(
    program: &Program,
    procs: &[ProcId],
) -> Result<(), crate::front::diag::Diagnostic> {
    let writable_data = |e: &Expr| {
        let e = crate::il::strip_casts(e);
        let pointee = match program.resolve(&e.ty.ty) {
            Type::Pointer(t) => (**t).clone(),
            Type::Array { elem, .. } => (**elem).clone(),
            _ => return false,
        };
        !pointee.is_const
            && !matches!(
                program.resolve(&pointee.ty),
                Type::Void
                    | Type::Opaque(_)
                    | Type::Int {
                        kind: crate::il::IntKind::Char | crate::il::IntKind::SignedChar,
                        ..
                    }
            )
    };
    for &p in procs {
        let Some(body) = &program.proc(p).body else {
            continue;
        };
        let mut found = None;
        crate::il::visit_stmts(&body.stmts, &mut |s| {
            let StmtKind::Call { callee, args, .. } = &s.kind else {
                return;
            };
            let proc = program.proc(*callee);
            if found.is_some() || proc.origin != crate::il::ProcOrigin::System {
                return;
            }
            for (i, a) in args.iter().enumerate() {
                let may_write = match proc.params.get(i) {
                    Some(&f) => match program.resolve(&program.sym(f).ty.ty) {
                        Type::Pointer(t) => !t.is_const,
                        _ => false,
                    },
                    None => true,
                };
                if may_write && writable_data(a) {
                    found = Some((s.span, proc.name.clone(), i + 1));
                    return;
                }
            }
        });
        if let Some((span, name, i)) = found {
            return Err(crate::front::diag::Diagnostic::error(
                span,
                format!(
                    "'{name}' may write the program's memory through argument {i}, and aioli cannot \
                     see what it writes; write the computation out (a loop for a copy)"
                ),
            ));
        }
    }
    Ok(())
}

/// The type of an address value: a pointer's own, an array's decayed to a
/// pointer to its first element; `None` for other values (`c ? bd : yd`
/// with `bd` an array is a pointer).
pub(crate) fn address_type(program: &Program, ty: &QualType) -> Option<QualType> {
    match program.resolve(&ty.ty) {
        Type::Pointer(_) => Some(ty.clone()),
        Type::Array { elem, .. } => Some(QualType::new(Type::Pointer(elem.clone()))),
        _ => None,
    }
}

/// Per procedure with a body, the `static` globals it uses by name and
/// those it changes (stores into, or takes the address of): what
/// `refuse_stale_statics` and `refuse_split_statics` judge from.
#[derive(Default)]
struct StaticUses {
    used: BTreeSet<SymId>,
    changed: BTreeSet<SymId>,
}

fn static_global_uses(program: &Program) -> Vec<(ProcId, StaticUses)> {
    // (A local given static storage for the adjoint's pair is the
    // original's automatic variable: nothing outside the output shares it.)
    let is_static_global = |s: SymId| {
        let sym = program.sym(s);
        sym.kind == crate::il::SymKind::Global
            && sym.storage == crate::il::Storage::Static
            && !program.frame_statics.contains_key(&s)
    };
    let mut out = Vec::new();
    for (p, proc) in program.defined_procs() {
        let Some(body) = &proc.body else { continue };
        let mut u = StaticUses::default();
        crate::il::visit_stmts(&body.stmts, &mut |s| {
            if let Some(v) = crate::il::stored_ref(s)
                .and_then(root_sym)
                .filter(|&v| is_static_global(v))
            {
                u.changed.insert(v);
            }
            for e in stmt_exprs(s) {
                crate::il::visit_expr(e, &mut |x| match &x.kind {
                    ExprKind::Var(v) if is_static_global(*v) => {
                        u.used.insert(*v);
                    }
                    ExprKind::AddrOf(r) => {
                        if let Some(v) = root_sym(r).filter(|&v| is_static_global(v)) {
                            u.changed.insert(v);
                        }
                    }
                    _ => {}
                });
            }
        });
        out.push((p, u));
    }
    out
}

/// `tangent/output` (both modes): the output carries its own copy of a
/// `static` global, which a procedure it does not hold may change in the
/// original (`set_k(3.0)` before `f`): the derivative code would read the
/// copy's stale value. Refused where differentiated code reads such a
/// global.
pub(crate) fn refuse_stale_statics(
    program: &Program,
    procs: &[ProcId],
) -> Result<(), crate::front::diag::Diagnostic> {
    // The procedures whose changes reach the output's copy: the
    // differentiated ones, and a `static` function only they (or other
    // such functions) call, which the output holds a copy of (`rnd()`
    // advancing a file-local RNG state that the head seeds).
    let graph = program.call_graph();
    let mut callers: HashMap<ProcId, Vec<ProcId>> = HashMap::default();
    for (caller, callees) in graph.iter().enumerate() {
        for &c in callees {
            callers.entry(c).or_default().push(ProcId(caller as u32));
        }
    }
    let mut held: HashSet<ProcId> = procs.iter().copied().collect();
    loop {
        let before = held.len();
        for (p, proc) in program.defined_procs() {
            if held.contains(&p) || proc.storage != crate::il::Storage::Static {
                continue;
            }
            if callers
                .get(&p)
                .is_some_and(|cs| !cs.is_empty() && cs.iter().all(|c| held.contains(c)))
            {
                held.insert(p);
            }
        }
        if held.len() == before {
            break;
        }
    }
    // Static globals that other procedures write or take the address of,
    // and those they use.
    let mut changed_elsewhere: HashMap<SymId, String> = HashMap::default();
    let mut used_elsewhere: HashMap<SymId, String> = HashMap::default();
    let uses = static_global_uses(program);
    let mut called_by_output: HashSet<ProcId> = HashSet::default();
    let mut todo: Vec<ProcId> = held.iter().copied().collect();
    while let Some(p) = todo.pop() {
        for &c in &graph[p.0 as usize] {
            if !held.contains(&c) && called_by_output.insert(c) {
                todo.push(c);
            }
        }
    }
    for (p, u) in &uses {
        if held.contains(p) {
            continue;
        }
        for &v in &u.changed {
            changed_elsewhere
                .entry(v)
                .or_insert_with(|| program.proc(*p).name.clone());
        }
        // A function the output calls by name is judged, with the call
        // site, by `refuse_split_statics`; a `static` one nothing calls
        // reads nothing; nor does `main` (the program that the tool's
        // output, linked in, serves as a library to its own driver).
        let uncalled_static = program.proc(*p).storage == crate::il::Storage::Static
            && callers.get(p).is_none_or(|cs| cs.is_empty());
        let main = program.proc(*p).name == "main";
        if called_by_output.contains(p) || uncalled_static || main {
            continue;
        }
        for &v in &u.used {
            used_elsewhere
                .entry(v)
                .or_insert_with(|| program.proc(*p).name.clone());
        }
    }
    // The converse: the output changes its copy, and an original function
    // reads the original's, which the derivative code leaves as it was
    // (`f_d` updates `last`, the original `get_last()` still returns the
    // old value).
    for (p, u) in &uses {
        if !held.contains(p) {
            continue;
        }
        let Some(v) = u.changed.iter().find(|v| used_elsewhere.contains_key(v)) else {
            continue;
        };
        let Some(body) = &program.proc(*p).body else {
            continue;
        };
        let mut at = None;
        crate::il::visit_stmts(&body.stmts, &mut |s| {
            if at.is_none() && crate::il::stored_ref(s).and_then(root_sym) == Some(*v) {
                at = Some(s.span);
            }
        });
        let name = &program.sym(*v).name;
        return Err(crate::front::diag::Diagnostic::error(
            at.unwrap_or(program.sym(*v).span),
            format!(
                "'{name}' is a static global that '{}' reads; the output has its own copy of it, \
                 whose changes '{}' would not see (make it non-static so the output can share \
                 the original's)",
                used_elsewhere[v], used_elsewhere[v]
            ),
        ));
    }
    if changed_elsewhere.is_empty() {
        return Ok(());
    }
    for &p in procs {
        let Some(body) = &program.proc(p).body else {
            continue;
        };
        let mut found = None;
        crate::il::visit_stmts(&body.stmts, &mut |s| {
            for e in stmt_exprs(s) {
                crate::il::visit_expr(e, &mut |x| {
                    if let ExprKind::Var(v) = x.kind
                        && found.is_none()
                        && let Some(writer) = changed_elsewhere.get(&v)
                    {
                        found = Some((x.span, program.sym(v).name.clone(), writer.clone()));
                    }
                });
            }
        });
        if let Some((span, name, writer)) = found {
            return Err(crate::front::diag::Diagnostic::error(
                span,
                format!(
                    "'{name}' is a static global that '{writer}' changes; the output has its own \
                     copy of it, which would keep its first value (make it non-static so the \
                     output can share the original's)"
                ),
            ));
        }
    }
    Ok(())
}

/// `tangent/output` (both modes): a `static` global that the output's own
/// copy and the original's both serve. Code the output holds (its
/// differentiated procedures, its copies of `static` functions) uses the
/// copy; an original non-static function the output calls by its name
/// (`by_name`: in tangent mode a passive call, in adjoint mode any call,
/// whose forward sweep runs the original) runs with the original's, and
/// so do the functions it calls. Where both sides use a static global
/// that something writes, the two copies drift apart (`s = x; g(x);
/// y = s * s` with `g` scaling `s`): refused.
pub(crate) fn refuse_split_statics(
    program: &Program,
    procs: &[ProcId],
    by_name: &dyn Fn(ProcId, &crate::il::Stmt) -> bool,
) -> Result<(), crate::front::diag::Diagnostic> {
    // Static globals each procedure uses by name, and the ones written
    // anywhere.
    let mut uses: HashMap<ProcId, BTreeSet<SymId>> = HashMap::default();
    let mut written: HashSet<SymId> = HashSet::default();
    for (p, u) in static_global_uses(program) {
        written.extend(u.changed.iter().copied());
        uses.insert(p, u.used);
    }
    if written.is_empty() {
        return Ok(());
    }
    let calls_of = |p: ProcId| -> Vec<(ProcId, &crate::il::Stmt)> {
        let mut out = Vec::new();
        if let Some(body) = &program.proc(p).body {
            crate::il::visit_stmts(&body.stmts, &mut |s| {
                if let StmtKind::Call { callee, .. } = &s.kind
                    && program.proc(*callee).body.is_some()
                {
                    out.push((*callee, s));
                }
            });
        }
        out
    };
    let is_static_proc = |q: ProcId| program.proc(q).storage == crate::il::Storage::Static;
    // Held: the procedures differentiated, and the static ones their
    // by-name calls reach (copied). Original: the non-static ones those
    // calls reach, with everything they call. Each with a call that
    // reaches it, for the message.
    let mut held: Vec<ProcId> = procs.to_vec();
    let mut original: HashMap<ProcId, (ProcId, crate::front::source::Span)> = HashMap::default();
    let mut stack: Vec<(ProcId, bool)> = procs.iter().map(|&p| (p, true)).collect();
    let mut seen: HashSet<(ProcId, bool)> = stack.iter().copied().collect();
    while let Some((p, is_held)) = stack.pop() {
        for (q, s) in calls_of(p) {
            // A differentiated procedure's active call runs the callee's
            // derivative, held already; a copy calls everything by name.
            if is_held && procs.contains(&p) && !by_name(p, s) {
                continue;
            }
            let q_held = is_held && is_static_proc(q);
            if q_held {
                held.push(q);
            } else {
                original.entry(q).or_insert((p, s.span));
            }
            if seen.insert((q, q_held)) {
                stack.push((q, q_held));
            }
        }
    }
    let held_uses: BTreeSet<SymId> = held
        .iter()
        .flat_map(|p| uses.get(p).into_iter().flatten().copied())
        .collect();
    let mut originals: Vec<_> = original.iter().collect();
    originals.sort_by_key(|(q, _)| q.index());
    for (&q, &(caller, span)) in originals {
        let shared = uses
            .get(&q)
            .into_iter()
            .flatten()
            .find(|v| held_uses.contains(v) && written.contains(v));
        if let Some(&v) = shared {
            let name = &program.sym(v).name;
            return Err(crate::front::diag::Diagnostic::error(
                span,
                format!(
                    "'{}' uses '{name}', a static global of the original file, and so does the \
                     derivative code, which has its own copy of '{name}': this call from '{}' runs \
                     the original '{}', which sees only the original's copy (make '{name}' \
                     non-static, or '{}' static so the output carries its own copy of it)",
                    program.proc(q).name,
                    program.proc(caller).name,
                    program.proc(q).name,
                    program.proc(q).name
                ),
            ));
        }
    }
    Ok(())
}

/// Does `proc` free the memory its pointer formal `k` points to on entry,
/// itself (`free(p)`) or through a call it gives `p` to?
pub(crate) fn frees_through(
    program: &Program,
    proc: ProcId,
    k: usize,
    visiting: &mut Vec<(ProcId, usize)>,
) -> bool {
    let p = program.proc(proc);
    let (Some(body), Some(&formal)) = (&p.body, p.params.get(k)) else {
        return false;
    };
    if visiting.contains(&(proc, k)) {
        return false;
    }
    visiting.push((proc, k));
    // The formal, cast or moved by pointer arithmetic (`free((char *)(v +
    // nl - NR_END))`, Numerical Recipes' `free_dvector`), or a pointer
    // stored in what it points to (`free(b->u)`, `free(rows[i])`).
    fn based_on(e: &Expr, formal: SymId) -> bool {
        match &e.kind {
            ExprKind::Var(v) => *v == formal,
            ExprKind::Cast { arg, .. } => based_on(arg, formal),
            ExprKind::Field { base, .. } | ExprKind::Index { base, .. } => based_on(base, formal),
            ExprKind::Deref(p) => based_on(p, formal),
            ExprKind::Binary {
                op: crate::il::BinOp::Add | crate::il::BinOp::Sub,
                lhs,
                rhs,
            } => {
                based_on(lhs, formal)
                    || matches!(rhs.ty.ty, Type::Pointer(_)) && based_on(rhs, formal)
            }
            _ => false,
        }
    }
    let is_formal = |e: &Expr| based_on(e, formal);
    let mut found = false;
    crate::il::visit_stmts(&body.stmts, &mut |s| {
        if found {
            return;
        }
        match &s.kind {
            StmtKind::Free { ptr } => found = is_formal(ptr),
            StmtKind::Call { callee, args, .. } => {
                for (j, arg) in args.iter().enumerate() {
                    if !found && is_formal(arg) {
                        found = frees_through(program, *callee, j, visiting);
                    }
                }
            }
            _ => {}
        }
    });
    visiting.pop();
    found
}

/// Does a call to `proc` free anything, itself or through its callees?
pub(crate) fn may_free(program: &Program, proc: ProcId, visiting: &mut Vec<ProcId>) -> bool {
    let Some(body) = &program.proc(proc).body else {
        return false;
    };
    if visiting.contains(&proc) {
        return false;
    }
    visiting.push(proc);
    let mut found = false;
    crate::il::visit_stmts(&body.stmts, &mut |s| match &s.kind {
        StmtKind::Free { .. } => found = true,
        StmtKind::Call { callee, .. } if !found => found = may_free(program, *callee, visiting),
        _ => {}
    });
    visiting.pop();
    found
}

/// The global variable a reference designates memory of without going
/// through a pointer (`g`, `rows[i]`, `F.u`), if any.
fn global_root(program: &Program, e: &Expr) -> Option<SymId> {
    direct_root(program, e).filter(|&v| program.sym(v).kind == crate::il::SymKind::Global)
}

/// The variable a reference designates memory of without going through a
/// pointer (`g`, `rows[i]`, `F.u`; not `*p`, `p[i]`, `p->f`).
pub(crate) fn direct_root(program: &Program, e: &Expr) -> Option<SymId> {
    match &e.kind {
        ExprKind::Var(v) => Some(*v),
        ExprKind::Field { base, .. } => direct_root(program, base),
        ExprKind::Index { base, .. }
            if matches!(program.resolve(&base.ty.ty), crate::il::Type::Array { .. }) =>
        {
            direct_root(program, base)
        }
        _ => None,
    }
}

/// The reference a statement stores into (`r = …`, `r = malloc(…)`,
/// `r = f(…)`) or frees (`free(r)`).
pub(crate) fn stored_or_freed(s: &crate::il::Stmt) -> Option<&Expr> {
    match &s.kind {
        StmtKind::Assign { lhs, .. } => Some(lhs),
        StmtKind::Alloc { target, .. } => Some(target),
        StmtKind::Call { result, .. } => result.as_ref(),
        StmtKind::Free { ptr } => Some(ptr),
        _ => None,
    }
}

/// How a message names the global `g` whose pointer is set: `global
/// pointer 'g'`, or `a pointer in global 'F'` for one held in a global
/// array or struct (`rows[0] = &mat[0]`, `F.u = ustore`).
pub(crate) fn global_pointer_phrase(program: &Program, g: SymId) -> String {
    if is_pointer(program, &program.sym(g).ty) {
        format!("global pointer '{}'", program.sym(g).name)
    } else {
        format!("a pointer in global '{}'", program.sym(g).name)
    }
}

/// The value of a test on numbers (`2.0 == 0`, `0.5 < 1 && 3 > 2`), when
/// every comparison in it is between two constants.
pub(crate) fn decided(e: &Expr) -> Option<bool> {
    fn number(e: &Expr) -> Option<f64> {
        match &e.kind {
            ExprKind::Cast { arg, .. } => number(arg),
            ExprKind::Unary { op: UnOp::Neg, arg } => number(arg).map(|v| -v),
            ExprKind::RealConst { value, .. } => Some(*value),
            ExprKind::IntConst { value, .. } => Some(*value as f64),
            _ => None,
        }
    }
    let ExprKind::Binary { op, lhs, rhs } = &e.kind else {
        return None;
    };
    match op {
        BinOp::And => match (decided(lhs), decided(rhs)) {
            (Some(false), _) | (_, Some(false)) => Some(false),
            (Some(true), Some(true)) => Some(true),
            _ => None,
        },
        BinOp::Or => match (decided(lhs), decided(rhs)) {
            (Some(true), _) | (_, Some(true)) => Some(true),
            (Some(false), Some(false)) => Some(false),
            _ => None,
        },
        _ => {
            let (a, b) = (number(lhs)?, number(rhs)?);
            Some(match op {
                BinOp::Lt => a < b,
                BinOp::Le => a <= b,
                BinOp::Gt => a > b,
                BinOp::Ge => a >= b,
                BinOp::Eq => a == b,
                BinOp::Ne => a != b,
                _ => return None,
            })
        }
    }
}

/// `il/void-pointer` (both modes): a `void *` value converted to a pointer
/// to memory holding reals (`double *u = p;`, `(double *)p`, the result
/// of a `void *xmalloc(size_t)` wrapper). The analyses type memory by its
/// allocation, and a block allocated through a `void *` has no real
/// element for them, so stores of active values through the converted
/// pointer would reach nothing they know: refused, where the converted
/// pointer leaves a procedure reachable from a head. A direct `malloc` or
/// `calloc` given to a typed pointer is an allocation of that type, not a
/// conversion.
pub(crate) fn refuse_void_conversions(
    program: &Program,
    procs: &[ProcId],
) -> Result<(), crate::front::diag::Diagnostic> {
    use crate::il::{Init, StmtKind};
    let is_void_ptr = |ty: &QualType| matches!(program.resolve(&ty.ty), Type::Pointer(t) if matches!(program.resolve(&t.ty), Type::Void));
    let to_reals = |ty: &QualType| {
        matches!(program.resolve(&ty.ty), Type::Pointer(t)
            if !matches!(program.resolve(&t.ty), Type::Void) && program.contains_real(&t.ty))
    };
    let refusal = |span: crate::front::source::Span| {
        crate::front::diag::Diagnostic::error(
            span,
            "a 'void *' value converted to a pointer to reals: aioli types memory by its \
             allocation, and memory allocated through a 'void *' has no type it can follow; \
             allocate it with a typed pointer ('double *u = malloc(n * sizeof *u);'), or give \
             the allocating function a typed result",
        )
    };
    for &p in procs {
        let proc = program.proc(p);
        let Some(body) = &proc.body else { continue };
        let mut found: Option<crate::front::diag::Diagnostic> = None;
        // `NULL`, `(void *)0`: a null pointer constant designates nothing.
        let check = |value: &Expr, target: &QualType, found: &mut Option<_>| {
            if found.is_none()
                && is_void_ptr(&value.ty)
                && to_reals(target)
                && !crate::il::is_null_constant(value)
            {
                *found = Some(refusal(value.span));
            }
        };
        crate::il::visit_stmts(&body.stmts, &mut |s| {
            // Explicit casts anywhere.
            for e in stmt_exprs(s) {
                crate::il::visit_expr(e, &mut |x| {
                    if let ExprKind::Cast { to, arg } = &x.kind {
                        check(arg, to, &mut found);
                    }
                });
            }
            match &s.kind {
                StmtKind::Assign { lhs, rhs, .. } => check(rhs, &lhs.ty, &mut found),
                StmtKind::Decl { vars, .. } => {
                    for d in vars {
                        if let Some(Init::Expr(e)) = &d.init {
                            check(e, &program.sym(d.sym).ty, &mut found);
                        }
                    }
                }
                StmtKind::Call {
                    callee,
                    args,
                    result,
                    ..
                } => {
                    let callee = program.proc(*callee);
                    for (arg, &formal) in args.iter().zip(&callee.params) {
                        check(arg, &program.sym(formal).ty, &mut found);
                    }
                    if let Some(r) = result
                        && found.is_none()
                        && is_void_ptr(&callee.ret)
                        && to_reals(&r.ty)
                    {
                        found = Some(refusal(s.span));
                    }
                }
                StmtKind::Return(Some(e)) => check(e, &proc.ret, &mut found),
                _ => {}
            }
        });
        if let Some(d) = found {
            return Err(d);
        }
    }
    Ok(())
}

/// Does procedure `q` use its pointer formal `k` only to reach memory
/// through it (`*p`, `p[i]`, `p->f`, or passing it on as such to a
/// procedure that does the same), never copying, storing, comparing,
/// reassigning it or taking an address inside what it points to? Then no
/// address derived from the formal outlives the call. A procedure without
/// body, and recursion, answer no.
pub(crate) fn only_dereferenced(
    program: &Program,
    q: ProcId,
    k: usize,
    visiting: &mut Vec<(ProcId, usize)>,
) -> bool {
    use crate::il::StmtKind;
    if visiting.contains(&(q, k)) {
        return false;
    }
    let proc = program.proc(q);
    let (Some(body), Some(&formal)) = (&proc.body, proc.params.get(k)) else {
        return false;
    };
    // Is the formal used anywhere in `e` but as the base of `*`/`[]`, or
    // inside an address taken?
    fn escapes(e: &Expr, formal: SymId) -> bool {
        match &e.kind {
            ExprKind::Var(v) => *v == formal,
            ExprKind::Deref(inner) if matches!(inner.kind, ExprKind::Var(_)) => false,
            ExprKind::Index { base, index } if matches!(base.kind, ExprKind::Var(_)) => {
                escapes(index, formal)
            }
            ExprKind::AddrOf(r) => {
                let mut found = false;
                crate::il::visit_expr(r, &mut |x| {
                    found |= matches!(x.kind, ExprKind::Var(v) if v == formal);
                });
                found
            }
            _ => {
                let mut found = false;
                crate::il::children(e, &mut |c| found |= escapes(c, formal));
                found
            }
        }
    }
    visiting.push((q, k));
    let mut ok = true;
    crate::il::visit_stmts(&body.stmts, &mut |s| {
        if !ok {
            return;
        }
        if let Some(target) = crate::il::stored_ref(s)
            && matches!(target.kind, ExprKind::Var(v) if v == formal)
        {
            ok = false;
            return;
        }
        match &s.kind {
            StmtKind::Call {
                callee,
                args,
                result,
                ..
            } => {
                for (j, a) in args.iter().enumerate() {
                    let passed_on = matches!(a.kind, ExprKind::Var(v) if v == formal);
                    if passed_on {
                        ok &= only_dereferenced(program, *callee, j, visiting);
                    } else {
                        ok &= !escapes(a, formal);
                    }
                }
                if let Some(r) = result {
                    ok &= !escapes(r, formal);
                }
            }
            _ => {
                for e in stmt_exprs(s) {
                    ok &= !escapes(e, formal);
                }
            }
        }
    });
    visiting.pop();
    ok
}
