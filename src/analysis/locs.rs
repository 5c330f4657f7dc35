//! The memory the analyses reason about: objects and their zones
//! (`spec/analyses/locations.md`).
//!
//! An object is a variable, an allocation site, the target of an interface
//! pointer (what it pointed to when the procedure was entered), or a
//! function's result. An object has one zone per leaf field of its type; an
//! array (of scalars or of structs) does not multiply zones: its element
//! zones are atoms. Zones and objects are numbered densely for the
//! analyses' bitsets and Datalog relations.
//!
//! Invariants: an object's zones are contiguous and listed in field order;
//! a zone's `path` is the field path from its object's type down; a place
//! `(object, path)` designates the zones whose path starts with `path`.

use crate::il::{ProcId, Program, QualType, StmtId, StmtKind, Storage, SymId, SymKind, Type};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::ops::Range;

/// Index of a zone.
pub type Zone = u32;
/// Index of an object.
pub type Obj = u32;
/// Index of an interned place (an object and a field path). Place 0 is NULL.
pub type Place = u32;
pub const NULL_PLACE: Place = 0;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ObjKind {
    /// `loc/atom`, `loc/field`: a variable of the program.
    Var(SymId),
    /// `loc/heap`: the memory one allocation statement returns; `span` is
    /// the statement's, to name the object by its line.
    Heap {
        proc: ProcId,
        stmt: StmtId,
        span: crate::front::source::Span,
    },
    /// `loc/target`: what interface pointer zone `pointer` pointed to when
    /// `proc` was entered (`None`: a global pointer, shared by all).
    Target { proc: Option<ProcId>, pointer: Zone },
    /// `loc/result`: the value a function returns.
    Result(ProcId),
    /// `dep/summary`: the outcome of a control statement's test, so that
    /// what the statement controls depends on what the test read.
    Control { proc: ProcId, stmt: StmtId },
}

#[derive(Clone, Debug)]
pub struct Object {
    pub kind: ObjKind,
    pub zones: Range<u32>,
    /// The procedure the object belongs to; `None` for memory every
    /// procedure may reach (globals, static locals, heap, global targets).
    pub owner: Option<ProcId>,
    pub name: String,
}

#[derive(Clone, Debug)]
pub struct ZoneInfo {
    pub obj: Obj,
    pub path: Vec<usize>,
    pub ty: QualType,
    pub name: String,
    /// A real scalar (or array of reals): can carry a derivative.
    pub real: bool,
    /// Holds several values (an array, heap memory, a target): a write never
    /// certainly overwrites it all (`loc/atom`).
    pub atom: bool,
    /// The zone holds a pointer (or an array of pointers).
    pub pointer: bool,
}

/// All objects and zones of a program, and the interned places.
#[derive(Clone, Debug, Default)]
pub struct Locs {
    pub objects: Vec<Object>,
    pub zones: Vec<ZoneInfo>,
    by_sym: HashMap<SymId, Obj>,
    by_heap: HashMap<(ProcId, StmtId), Obj>,
    by_result: HashMap<ProcId, Obj>,
    by_control: HashMap<(ProcId, StmtId), Obj>,
    targets_of: HashMap<Option<ProcId>, Vec<(Zone, Obj)>>,
    pointers_with_target: HashSet<Zone>,
    /// Target objects of each interface pointer zone, per procedure.
    by_target: HashMap<(Option<ProcId>, Zone), Obj>,
    places: Vec<(Obj, Vec<usize>)>,
    place_ids: HashMap<(Obj, Vec<usize>), Place>,
    /// `ptr/global-init`: what a global pointer initialised with an
    /// address (`double *w = wk;`, `double *p = &acc;`) designates before
    /// any code sets it, by pointer zone.
    initial: HashMap<Zone, (Obj, Vec<usize>)>,
    /// While adding the targets of a deref-only pointer parameter.
    scalar_target: bool,
    scalar_target_now: bool,
}

/// How deep targets of targets go (`double ***p` is rare in scientific C).
const TARGET_DEPTH: usize = 3;

impl Locs {
    pub fn of(program: &Program) -> Locs {
        let mut l = Locs {
            places: vec![(u32::MAX, Vec::new())],
            ..Locs::default()
        };
        // A procedure's parameter scope, and the scope its parameters were
        // declared in (a definition after a prototype has its own).
        let mut param_scopes: HashMap<crate::il::ScopeId, ProcId> = HashMap::default();
        for (i, p) in program.procs.iter().enumerate() {
            param_scopes.insert(p.scope, ProcId(i as u32));
            if let Some(body) = &p.body {
                param_scopes.insert(body.scope, ProcId(i as u32));
            }
            for &s in &p.params {
                param_scopes.insert(program.sym(s).scope, ProcId(i as u32));
            }
        }
        for (i, sym) in program.symbols.iter().enumerate() {
            let id = SymId(i as u32);
            let owner = if sym.kind == SymKind::Global || sym.storage == Storage::Static {
                None // `loc/static-local`
            } else {
                // A prototype's parameters belong to no definition: give
                // them an owner no procedure has, so they are never global.
                Some(owner_of_scope(program, &param_scopes, sym.scope).unwrap_or(ProcId(u32::MAX)))
            };
            let o = l.add_object(program, ObjKind::Var(id), &sym.ty, owner, sym.name.clone());
            l.by_sym.insert(id, o);
        }
        // `loc/result` of a function known by its prototype only: what a
        // call of it returns (its derivative may be given by a rule). An
        // integer result (`strlen`, `lrint`) is a location too: the
        // variable it is stored into is written, and its value may be
        // needed by derivatives. So is a pointer to memory holding no
        // reals (`strchr`, `fopen`): the pointer stored is written, and a
        // test of it (`if (q != NULL)`) reads it.
        for (i, p) in program.procs.iter().enumerate() {
            let holds_value = match program.resolve(&p.ret.ty) {
                Type::Void => false,
                Type::Pointer(t) => !program.contains_real(&t.ty),
                _ => true,
            };
            if p.body.is_none() && holds_value {
                let pid = ProcId(i as u32);
                let o = l.add_object(
                    program,
                    ObjKind::Result(pid),
                    &p.ret,
                    Some(pid),
                    p.name.clone(),
                );
                l.by_result.insert(pid, o);
            }
        }
        for (pid, p) in program.defined_procs() {
            if let Some(body) = &p.body {
                crate::il::visit_stmts(&body.stmts, &mut |s| {
                    if matches!(
                        s.kind,
                        StmtKind::If { .. } | StmtKind::Loop { .. } | StmtKind::Switch { .. }
                    ) {
                        let o = l.add_object(
                            program,
                            ObjKind::Control {
                                proc: pid,
                                stmt: s.id,
                            },
                            &QualType::int(),
                            Some(pid),
                            format!("<control@{}>", s.span.lo),
                        );
                        l.by_control.insert((pid, s.id), o);
                    }
                    if let StmtKind::Alloc { elem, .. } = &s.kind {
                        let o = l.add_object(
                            program,
                            ObjKind::Heap {
                                proc: pid,
                                stmt: s.id,
                                span: s.span,
                            },
                            elem,
                            None,
                            format!("alloc@{}", s.span.lo),
                        );
                        l.by_heap.insert((pid, s.id), o);
                    }
                });
            }
            if !matches!(program.resolve(&p.ret.ty), Type::Void) {
                let o = l.add_object(
                    program,
                    ObjKind::Result(pid),
                    &p.ret,
                    Some(pid),
                    p.name.clone(),
                );
                l.by_result.insert(pid, o);
            }
            // `loc/target`: the pointers a procedure receives. A pointer
            // parameter only ever dereferenced as `*p` / `p->f` (never
            // indexed, moved, copied or passed on) designates one object,
            // so its target is not an atom.
            let single = deref_only_params(program, p);
            for &param in &p.params {
                let o = l.by_sym[&param];
                l.scalar_target = single.contains(&param);
                l.add_targets(program, Some(pid), o, 0);
                l.scalar_target = false;
            }
        }
        // The pointers a function known by its prototype only receives:
        // what its call reads and writes through them (`eff/library-call`;
        // `strlen(tag)` reads the characters of `tag`).
        for (i, p) in program.procs.iter().enumerate() {
            if p.body.is_some() {
                continue;
            }
            for &param in &p.params {
                if let Some(&o) = l.by_sym.get(&param) {
                    l.add_targets(program, Some(ProcId(i as u32)), o, 0);
                }
            }
        }
        let globals: Vec<Obj> = (0..l.objects.len() as u32)
            .filter(|&o| l.objects[o as usize].owner.is_none())
            .filter(|&o| matches!(l.objects[o as usize].kind, ObjKind::Var(_)))
            .collect();
        for o in globals {
            l.add_targets(program, None, o, 0);
        }
        for item in &program.items {
            let crate::il::ItemKind::Globals { vars, .. } = &item.kind else {
                continue;
            };
            for v in vars {
                let Some(crate::il::Init::Expr(e)) = &v.init else {
                    continue;
                };
                let o = l.by_sym[&v.sym];
                let zone = l.objects[o as usize].zones.start;
                if !l.zones[zone as usize].pointer {
                    continue;
                }
                if let Some(place) = l.address_of(program, e) {
                    l.initial.insert(zone, place);
                }
            }
        }
        l
    }

    /// The object an address constant designates: an array's name or row,
    /// `&v`, `&a[k]`, maybe cast or offset.
    fn address_of(&self, program: &Program, e: &crate::il::Expr) -> Option<(Obj, Vec<usize>)> {
        use crate::il::ExprKind;
        fn reference(
            l: &Locs,
            program: &Program,
            e: &crate::il::Expr,
        ) -> Option<(Obj, Vec<usize>)> {
            match &e.kind {
                // (Not a struct member: the derivative initialiser could
                // not name it, so such an initialiser is refused.)
                ExprKind::Var(s) => Some((*l.by_sym.get(s)?, Vec::new())),
                ExprKind::Index { base, .. }
                    if matches!(program.resolve(&base.ty.ty), Type::Array { .. }) =>
                {
                    reference(l, program, base)
                }
                _ => None,
            }
        }
        match &e.kind {
            // An array, or a row of one (`M[1]`), decaying to its address.
            ExprKind::Var(_) | ExprKind::Index { .. }
                if matches!(program.resolve(&e.ty.ty), Type::Array { .. }) =>
            {
                reference(self, program, e)
            }
            ExprKind::AddrOf(r) => reference(self, program, r),
            ExprKind::Cast { arg, .. } => self.address_of(program, arg),
            ExprKind::Binary { lhs, .. } => self.address_of(program, lhs),
            _ => None,
        }
    }

    /// `ptr/global-init`: the place a global pointer zone designates by its
    /// initialiser, if it has an address one.
    pub fn initial_target(&self, z: Zone) -> Option<&(Obj, Vec<usize>)> {
        self.initial.get(&z)
    }

    /// `ptr/global-init`: the variable a global pointer's initialiser
    /// designates (`wk` for `double *w = wk;`), as the analyses took it.
    pub fn initial_variable(&self, pointer: SymId) -> Option<SymId> {
        let o = *self.by_sym.get(&pointer)?;
        let (target, _) = self.initial_target(self.objects[o as usize].zones.start)?;
        match self.objects[*target as usize].kind {
            ObjKind::Var(v) => Some(v),
            _ => None,
        }
    }

    fn add_targets(&mut self, program: &Program, proc: Option<ProcId>, obj: Obj, depth: usize) {
        if depth >= TARGET_DEPTH {
            return;
        }
        for z in self.objects[obj as usize].zones.clone() {
            let info = &self.zones[z as usize];
            if !info.pointer {
                continue;
            }
            let Some(pointee) = pointee(program, &info.ty.ty) else {
                continue;
            };
            let name = info.name.clone();
            let owner = proc;
            // Only the parameter's own target (depth 0) can be a scalar.
            let scalar = self.scalar_target && depth == 0 && info.path.is_empty();
            self.scalar_target_now = scalar;
            let t = self.add_object(
                program,
                ObjKind::Target { proc, pointer: z },
                &pointee,
                owner,
                name,
            );
            self.scalar_target_now = false;
            self.by_target.insert((proc, z), t);
            self.targets_of.entry(proc).or_default().push((z, t));
            self.pointers_with_target.insert(z);
            self.add_targets(program, proc, t, depth + 1);
        }
    }

    fn add_object(
        &mut self,
        program: &Program,
        kind: ObjKind,
        ty: &QualType,
        owner: Option<ProcId>,
        name: String,
    ) -> Obj {
        let id = self.objects.len() as Obj;
        let start = self.zones.len() as u32;
        let forced_atom = match kind {
            ObjKind::Var(_) | ObjKind::Result(_) => false,
            ObjKind::Target { .. } => !self.scalar_target_now,
            ObjKind::Heap { .. } => true,
            ObjKind::Control { .. } => false,
        };
        self.add_leaves(
            program,
            id,
            ty,
            &mut Vec::new(),
            name.clone(),
            false,
            forced_atom,
            0,
        );
        self.objects.push(Object {
            kind,
            zones: start..self.zones.len() as u32,
            owner,
            name,
        });
        let place = (id, Vec::new());
        self.intern(place);
        id
    }

    #[allow(clippy::too_many_arguments)]
    fn add_leaves(
        &mut self,
        program: &Program,
        obj: Obj,
        ty: &QualType,
        path: &mut Vec<usize>,
        name: String,
        in_array: bool,
        forced_atom: bool,
        depth: usize,
    ) {
        let mut leaf = program.resolve(&ty.ty);
        let mut array = in_array;
        while let Type::Array { elem, .. } = leaf {
            array = true;
            match program.resolve(&elem.ty) {
                t @ (Type::Struct(_) | Type::Array { .. }) => leaf = t,
                _ => break,
            }
        }
        match leaf {
            Type::Void | Type::Opaque(_) => {}
            Type::Struct(s) if depth < 16 => {
                for (i, f) in program.strukt(*s).fields.iter().enumerate() {
                    path.push(i);
                    self.add_leaves(
                        program,
                        obj,
                        &f.ty,
                        path,
                        format!("{name}.{}", f.name),
                        array,
                        forced_atom,
                        depth + 1,
                    );
                    path.pop();
                }
            }
            _ => {
                let scalar = scalar_of(program, &ty.ty);
                self.zones.push(ZoneInfo {
                    obj,
                    path: path.clone(),
                    ty: ty.clone(),
                    name,
                    real: program.is_real(scalar),
                    atom: array || forced_atom,
                    pointer: matches!(program.resolve(scalar), Type::Pointer(_)),
                });
            }
        }
    }

    pub fn intern(&mut self, place: (Obj, Vec<usize>)) -> Place {
        if let Some(&p) = self.place_ids.get(&place) {
            return p;
        }
        let id = self.places.len() as Place;
        self.places.push(place.clone());
        self.place_ids.insert(place, id);
        id
    }

    pub fn place(&self, p: Place) -> Option<(Obj, &[usize])> {
        if p == NULL_PLACE {
            return None;
        }
        let (o, path) = &self.places[p as usize];
        Some((*o, path))
    }

    /// The procedure whose allocation statement made the heap block a
    /// place lies in (`loc/heap`); `None` for NULL and other memory.
    pub fn allocator(&self, p: Place) -> Option<ProcId> {
        let (o, _) = self.place(p)?;
        match self.objects[o as usize].kind {
            ObjKind::Heap { proc, .. } => Some(proc),
            _ => None,
        }
    }

    pub fn place_count(&self) -> usize {
        self.places.len()
    }

    /// The place `p` narrowed by a field path (`ptr/resolve`).
    pub fn extend(&mut self, p: Place, path: &[usize]) -> Place {
        if p == NULL_PLACE || path.is_empty() {
            return p;
        }
        let (o, base) = self.places[p as usize].clone();
        let mut full = base;
        full.extend_from_slice(path);
        // Beyond the object's fields (a cast between struct types), the
        // whole object stands for the place.
        if !self
            .object_zones(o)
            .any(|z| self.zones[z as usize].path.starts_with(&full))
        {
            return self.intern((o, Vec::new()));
        }
        self.intern((o, full))
    }

    /// The zones a place designates.
    pub fn place_zones(&self, p: Place) -> Vec<Zone> {
        let Some((o, path)) = self.place(p) else {
            return Vec::new();
        };
        let matching: Vec<Zone> = self
            .object_zones(o)
            .filter(|&z| self.zones[z as usize].path.starts_with(path))
            .collect();
        if matching.is_empty() {
            self.object_zones(o).collect()
        } else {
            matching
        }
    }

    pub fn object_zones(&self, o: Obj) -> impl Iterator<Item = Zone> + '_ {
        self.objects[o as usize].zones.clone()
    }

    pub fn of_sym(&self, s: SymId) -> Obj {
        self.by_sym[&s]
    }

    pub fn of_heap(&self, proc: ProcId, stmt: StmtId) -> Option<Obj> {
        self.by_heap.get(&(proc, stmt)).copied()
    }

    /// The zone of a control statement's test outcome.
    pub fn of_control(&self, proc: ProcId, stmt: StmtId) -> Option<Zone> {
        self.by_control
            .get(&(proc, stmt))
            .map(|&o| self.objects[o as usize].zones.start)
    }

    /// Is this a zone the user can name (not a control outcome)?
    pub fn is_user_visible(&self, z: Zone) -> bool {
        !matches!(
            self.objects[self.zones[z as usize].obj as usize].kind,
            ObjKind::Control { .. }
        )
    }

    /// Does some procedure receive a target for this pointer zone?
    pub fn has_target(&self, z: Zone) -> bool {
        self.pointers_with_target.contains(&z)
    }

    pub fn of_result(&self, proc: ProcId) -> Option<Obj> {
        self.by_result.get(&proc).copied()
    }

    /// Every zone of object `o` and of the targets its pointers reach in
    /// `proc`, through every level of pointers (`g->u[i]`, `a[i][j]`), as
    /// deep as the targets go: the pointer zones themselves included.
    pub fn reach(&self, proc: ProcId, o: Obj) -> Vec<Zone> {
        let mut zones = Vec::new();
        let mut seen = Vec::new();
        let mut todo = vec![o];
        while let Some(o) = todo.pop() {
            if seen.contains(&o) {
                continue;
            }
            seen.push(o);
            for z in self.object_zones(o) {
                zones.push(z);
                if let Some(t) = self.target(proc, z) {
                    todo.push(t);
                }
            }
        }
        zones
    }

    /// The target object of interface pointer zone `z` in `proc`, or of a
    /// global pointer.
    pub fn target(&self, proc: ProcId, z: Zone) -> Option<Obj> {
        self.by_target
            .get(&(Some(proc), z))
            .or_else(|| self.by_target.get(&(None, z)))
            .copied()
    }

    pub fn zone(&self, z: Zone) -> &ZoneInfo {
        &self.zones[z as usize]
    }

    pub fn object(&self, o: Obj) -> &Object {
        &self.objects[o as usize]
    }

    pub fn zone_count(&self) -> usize {
        self.zones.len()
    }

    /// Is the zone memory every procedure may reach (global, static, heap,
    /// global target)?
    pub fn is_global(&self, z: Zone) -> bool {
        self.objects[self.zones[z as usize].obj as usize]
            .owner
            .is_none()
    }

    /// Is the zone part of `proc`'s interface: what a caller can see of its
    /// effects (globals, heap, its targets, its result)?
    pub fn is_interface(&self, proc: ProcId, z: Zone) -> bool {
        let o = &self.objects[self.zones[z as usize].obj as usize];
        match o.kind {
            ObjKind::Target { proc: Some(p), .. } | ObjKind::Result(p) => p == proc,
            _ => o.owner.is_none(),
        }
    }

    /// The pointer zones whose targets a procedure receives, with the
    /// target (`ptr/entry`).
    pub fn entry_pointers(&self, proc: ProcId) -> Vec<(Zone, Obj)> {
        let mut v: Vec<(Zone, Obj)> = self
            .targets_of
            .get(&Some(proc))
            .into_iter()
            .chain(self.targets_of.get(&None))
            .flatten()
            .copied()
            .collect();
        v.sort();
        v
    }
}

/// The scalar type at the bottom of arrays.
fn scalar_of<'a>(program: &'a Program, ty: &'a Type) -> &'a Type {
    let mut t = program.resolve(ty);
    while let Type::Array { elem, .. } = t {
        t = program.resolve(&elem.ty);
    }
    t
}

/// What a pointer (or array of pointers) zone points to.
fn pointee(program: &Program, ty: &Type) -> Option<QualType> {
    match scalar_of(program, ty) {
        Type::Pointer(t) => match program.resolve(&t.ty) {
            Type::Void | Type::Opaque(_) => None,
            _ => Some((**t).clone()),
        },
        _ => None,
    }
}

/// The procedure whose scopes contain `scope`.
fn owner_of_scope(
    program: &Program,
    param_scopes: &HashMap<crate::il::ScopeId, ProcId>,
    scope: crate::il::ScopeId,
) -> Option<ProcId> {
    let mut s = scope;
    loop {
        if let Some(&p) = param_scopes.get(&s) {
            return Some(p);
        }
        s = program.scopes[s.index()].parent?;
    }
}

/// Pointer parameters used only as `*p` or `p->f`.
fn deref_only_params(program: &Program, p: &crate::il::Procedure) -> Vec<SymId> {
    use crate::il::{Expr, ExprKind, Init, LoopHeader};
    let mut candidates: Vec<SymId> = p
        .params
        .iter()
        .copied()
        .filter(|s| matches!(program.resolve(&program.sym(*s).ty.ty), Type::Pointer(_)))
        .collect();
    fn walk(e: &Expr, under_deref: bool, bad: &mut Vec<SymId>) {
        match &e.kind {
            ExprKind::Var(s) if !under_deref => bad.push(*s),
            ExprKind::Var(_) => {}
            ExprKind::Deref(inner) => walk(inner, true, bad),
            ExprKind::Index { base, index } => {
                walk(base, false, bad);
                walk(index, false, bad);
            }
            ExprKind::Field { base, .. } => walk(base, false, bad),
            ExprKind::AddrOf(a)
            | ExprKind::Unary { arg: a, .. }
            | ExprKind::Cast { arg: a, .. }
            | ExprKind::SizeOfExpr(a) => walk(a, false, bad),
            ExprKind::Binary { lhs, rhs, .. } => {
                walk(lhs, false, bad);
                walk(rhs, false, bad);
            }
            ExprKind::Intrinsic { args, .. } => args.iter().for_each(|a| walk(a, false, bad)),
            ExprKind::Cond { cond, then, other } => {
                walk(cond, false, bad);
                walk(then, false, bad);
                walk(other, false, bad);
            }
            _ => {}
        }
    }
    fn init(i: &Init, bad: &mut Vec<SymId>) {
        match i {
            Init::Expr(e) => walk(e, false, bad),
            Init::List(items, _) => items.iter().for_each(|i| init(i, bad)),
        }
    }
    let mut bad = Vec::new();
    if let Some(body) = &p.body {
        crate::il::visit_stmts(&body.stmts, &mut |s| match &s.kind {
            StmtKind::Assign { lhs, rhs, .. } => {
                walk(lhs, false, &mut bad);
                walk(rhs, false, &mut bad);
            }
            StmtKind::Call { result, args, .. } => {
                if let Some(r) = result {
                    walk(r, false, &mut bad);
                }
                args.iter().for_each(|a| walk(a, false, &mut bad));
            }
            StmtKind::Decl { vars, .. } => {
                for d in vars {
                    if let Some(i) = &d.init {
                        init(i, &mut bad);
                    }
                }
            }
            StmtKind::Alloc { target, count, .. } => {
                walk(target, false, &mut bad);
                walk(count, false, &mut bad);
            }
            StmtKind::Free { ptr } => walk(ptr, false, &mut bad),
            StmtKind::If { cond, .. } => walk(cond, false, &mut bad),
            StmtKind::Loop { header, .. } => match header {
                LoopHeader::For { cond: Some(c), .. }
                | LoopHeader::While { cond: c }
                | LoopHeader::DoWhile { cond: c } => walk(c, false, &mut bad),
                LoopHeader::For { cond: None, .. } => {}
            },
            StmtKind::Switch { selector, .. } => walk(selector, false, &mut bad),
            StmtKind::Return(Some(e)) | StmtKind::Discard(e) => walk(e, false, &mut bad),
            _ => {}
        });
    }
    candidates.retain(|s| !bad.contains(s));
    candidates
}
