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

use crate::il::{Item, ItemKind, ProcId, Program, StmtKind};
use std::collections::HashSet;

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
    let mut used: HashSet<crate::il::SymId> = HashSet::new();
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
    let mut defined = HashSet::new();
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
pub mod names;
pub mod recurrence;
pub mod share;
pub mod specialize;
pub mod structure;
pub mod tangent;
pub mod varied;
pub mod vector;
