//! The back ends: IL to C ([`print_c`]) and IL to S-expressions
//! ([`print_il`], specified in `spec/il-sexpr.md`).

pub mod c;
mod plan;
pub mod sexpr;

pub use c::print_c;
pub use sexpr::print_il;

use crate::il::{ItemKind, Program, StructId, Type, TypedefId};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

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
    let mut bodies = HashMap::default();
    let mut defined: HashSet<StructId> = HashSet::default();
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

/// `output/includes`: the main file's `#include "…"` lines rewritten to
/// name the same header from `out_dir`, where the output is written, when
/// the header was found beside `source` (not through `-I`) and `out_dir`
/// is another directory: `#include "lib/api.h"` in `src/m.c` becomes
/// `#include "../src/lib/api.h"` in `out/m_d.c`, so the output compiles
/// with the flags the original needs. A header found through `-I` is left
/// as written: the same `-I` finds it from the output.
pub fn relocate_local_includes(
    program: &mut Program,
    sources: &crate::front::source::SourceMap,
    source: &std::path::Path,
    out_dir: &std::path::Path,
) {
    let Some(source_dir) = absolute(source.parent().unwrap_or(std::path::Path::new("."))) else {
        return;
    };
    let Some(out_dir) = absolute(out_dir) else {
        return;
    };
    if source_dir == out_dir {
        return;
    }
    let main = program.main_file;
    for item in &mut program.items {
        let ItemKind::LocalInclude { written, file } = &mut item.kind else {
            continue;
        };
        if item.file != main {
            continue;
        }
        let Some(name) = written
            .strip_prefix("#include \"")
            .and_then(|r| r.strip_suffix('"'))
        else {
            continue;
        };
        let Some(header) = absolute(&sources.file(*file).path) else {
            continue;
        };
        if header
            != source_dir
                .join(name)
                .components()
                .collect::<std::path::PathBuf>()
        {
            continue;
        }
        if let Some(relative) = relative_path(&out_dir, &header)
            && let Some(text) = relative.to_str()
            && !text.contains('"')
        {
            *written = format!("#include \"{text}\"");
        }
    }
}

/// `path` made absolute (against the current directory) with `.` and `..`
/// resolved lexically.
fn absolute(path: &std::path::Path) -> Option<std::path::PathBuf> {
    use std::path::Component;
    let joined = std::path::absolute(path).ok()?;
    let mut out = std::path::PathBuf::new();
    for c in joined.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    Some(out)
}

/// The path of `to` from directory `from`, both absolute and normalised
/// (`../src/lib/api.h`), with `/` between components.
fn relative_path(from: &std::path::Path, to: &std::path::Path) -> Option<std::path::PathBuf> {
    let from: Vec<_> = from.components().collect();
    let to: Vec<_> = to.components().collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    if common == 0 {
        return None;
    }
    let mut out = std::path::PathBuf::new();
    for _ in common..from.len() {
        out.push("..");
    }
    for c in &to[common..] {
        out.push(c);
    }
    Some(out)
}
