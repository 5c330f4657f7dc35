//! The back ends: IL to C ([`print_c`]) and IL to S-expressions
//! ([`print_il`], specified in `spec/il-sexpr.md`).

pub mod c;
mod plan;
pub mod sexpr;

pub use c::print_c;
pub use sexpr::print_il;

use crate::il::{ItemKind, Program, StructId, Type, TypedefId};
use std::collections::{HashMap, HashSet};

/// Typedef items that carry the definition of a struct: for a struct
/// without an `ItemKind::Struct` item, the first typedef item whose type is
/// exactly that struct (`typedef struct [tag] { ... } Name;`).
pub(crate) fn typedef_bodies(program: &Program) -> HashMap<TypedefId, StructId> {
    let struct_items: HashSet<StructId> = program
        .items
        .iter()
        .filter_map(|i| match i.kind {
            ItemKind::Struct(s) => Some(s),
            _ => None,
        })
        .collect();
    let mut bodies = HashMap::new();
    let mut defined: HashSet<StructId> = HashSet::new();
    for item in &program.items {
        if let ItemKind::Typedef(t) = item.kind
            && let Some(td) = program.typedefs.get(t.index())
            && let Type::Struct(s) = td.ty.ty
            && !td.ty.is_const
            && !struct_items.contains(&s)
            && program.structs.get(s.index()).is_some()
            && defined.insert(s)
        {
            bodies.insert(t, s);
        }
    }
    bodies
}
