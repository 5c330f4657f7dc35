//! Zones: the memory locations the data-flow analyses reason about
//! (`il/zones`, §5.1 of the specification).
//!
//! A scalar, a pointer or a whole array is one zone; a struct-typed
//! variable has one zone per leaf field (recursively), and so does an array
//! of structs (zone `a.x` stands for every element's `x`). Each allocation
//! site (`Alloc` statement) is one more zone, the memory it returns. Zones are
//! numbered densely so analyses can use bitsets.
//!
//! Invariants: every symbol of the program has at least one zone unless its
//! type holds no data (`void`, an opaque type); a symbol's zones are
//! contiguous; zone names are unique within the zones of one procedure.

use super::{Expr, ExprKind, ProcId, Program, QualType, StmtId, StmtKind, SymId, Type};
use rustc_hash::FxHashMap as HashMap;
use std::ops::Range;

/// Index of a zone in [`Zones`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ZoneId(pub u32);

/// What a zone is.
#[derive(Clone, Debug, PartialEq)]
pub enum ZoneOwner {
    /// A variable, or a leaf field of a struct variable (`path` lists the
    /// field indices from the variable's struct type down).
    Var { sym: SymId, path: Vec<usize> },
    /// The memory returned by one allocation statement.
    Heap { proc: ProcId, stmt: StmtId },
}

#[derive(Clone, Debug, PartialEq)]
pub struct Zone {
    pub owner: ZoneOwner,
    /// The type of the leaf (the element type for arrays of structs' fields).
    pub ty: QualType,
    /// Readable name: `x`, `p.x`, `pts.y`, `malloc@12`.
    pub name: String,
}

/// The zones of a whole program.
#[derive(Clone, Debug, Default)]
pub struct Zones {
    pub zones: Vec<Zone>,
    by_sym: HashMap<SymId, Range<u32>>,
    by_alloc: HashMap<(ProcId, StmtId), ZoneId>,
}

impl Zones {
    /// Numbers the zones of every symbol and allocation site.
    pub fn of(program: &Program) -> Zones {
        let mut z = Zones::default();
        for (i, sym) in program.symbols.iter().enumerate() {
            let id = SymId(i as u32);
            let start = z.zones.len() as u32;
            z.add_var(program, id, &sym.ty, &mut Vec::new(), sym.name.clone(), 0);
            z.by_sym.insert(id, start..z.zones.len() as u32);
        }
        for (pid, p) in program.defined_procs() {
            if let Some(body) = &p.body {
                super::visit_stmts(&body.stmts, &mut |s| {
                    if let StmtKind::Alloc { elem, .. } = &s.kind {
                        let line = s.span.lo;
                        z.by_alloc.insert((pid, s.id), ZoneId(z.zones.len() as u32));
                        z.zones.push(Zone {
                            owner: ZoneOwner::Heap {
                                proc: pid,
                                stmt: s.id,
                            },
                            ty: elem.clone(),
                            name: format!("{}@{}", "alloc", line),
                        });
                    }
                });
            }
        }
        z
    }

    fn add_var(
        &mut self,
        program: &Program,
        sym: SymId,
        ty: &QualType,
        path: &mut Vec<usize>,
        name: String,
        depth: usize,
    ) {
        let mut leaf = program.resolve(&ty.ty);
        // An array of structs has the zones of its element's fields.
        while let Type::Array { elem, .. } = leaf {
            if matches!(program.resolve(&elem.ty), Type::Struct(_)) {
                leaf = program.resolve(&elem.ty);
            } else {
                break;
            }
        }
        match leaf {
            Type::Void | Type::Opaque(_) => {}
            Type::Struct(s) if depth < 16 => {
                for (i, f) in program.strukt(*s).fields.iter().enumerate() {
                    path.push(i);
                    self.add_var(
                        program,
                        sym,
                        &f.ty,
                        path,
                        format!("{name}.{}", f.name),
                        depth + 1,
                    );
                    path.pop();
                }
            }
            _ => self.zones.push(Zone {
                owner: ZoneOwner::Var {
                    sym,
                    path: path.clone(),
                },
                ty: ty.clone(),
                name,
            }),
        }
    }

    pub fn zone(&self, id: ZoneId) -> &Zone {
        &self.zones[id.0 as usize]
    }

    pub fn len(&self) -> usize {
        self.zones.len()
    }

    pub fn is_empty(&self) -> bool {
        self.zones.is_empty()
    }

    /// All zones of a variable.
    pub fn of_sym(&self, sym: SymId) -> impl Iterator<Item = ZoneId> + '_ {
        self.by_sym.get(&sym).cloned().unwrap_or(0..0).map(ZoneId)
    }

    /// The zone of an allocation site.
    pub fn of_alloc(&self, proc: ProcId, stmt: StmtId) -> Option<ZoneId> {
        self.by_alloc.get(&(proc, stmt)).copied()
    }

    /// The zones a reference expression designates without following
    /// pointers: `x`, `a[i]` (all of `a`), `p.x`, `pts[i].y`. `None` when
    /// the reference goes through a pointer (`*p`, `p->x`, `q[i]` with `q`
    /// a pointer): those need the pointer analysis.
    pub fn of_ref(&self, program: &Program, e: &Expr) -> Option<Vec<ZoneId>> {
        let (sym, path) = ref_path(program, e)?;
        let prefix_matches = |z: &ZoneId| match &self.zone(*z).owner {
            ZoneOwner::Var { path: p, .. } => p.starts_with(&path),
            ZoneOwner::Heap { .. } => false,
        };
        Some(self.of_sym(sym).filter(prefix_matches).collect())
    }
}

/// The variable and field path of a reference that does not go through a
/// pointer.
fn ref_path(program: &Program, e: &Expr) -> Option<(SymId, Vec<usize>)> {
    match &e.kind {
        ExprKind::Var(s) => Some((*s, Vec::new())),
        ExprKind::Index { base, .. } => {
            if matches!(program.resolve(&base.ty.ty), Type::Array { .. }) {
                ref_path(program, base)
            } else {
                None
            }
        }
        ExprKind::Field { base, field, .. } => {
            let (s, mut p) = ref_path(program, base)?;
            p.push(*field);
            Some((s, p))
        }
        _ => None,
    }
}
