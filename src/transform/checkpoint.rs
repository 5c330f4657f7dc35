//! Checkpointed regions for the adjoint mode (`adjoint/checkpoint`).
//!
//! `// $AD CHECKPOINT-START` before a statement and `// $AD CHECKPOINT-END`
//! after a later statement of the same statement list (before the next
//! statement, trailing the last one, or before the closing brace) ask for
//! the statements between them to be checkpointed. Before the analyses
//! run, this pass wraps each such sequence into a block that keeps the
//! START comment, which is how the rules recognise it (`isCheckpoint`).
//! Blocks are transparent to the analyses, and the adjoint hoists every
//! declaration to the procedure's top first, so the wrapping changes no
//! scope the output relies on. A START without its END is left alone and
//! refused by the adjoint mode with its location.

use crate::il::{Block, Comments, ProcId, Program, ScopeId, Stmt, StmtId, StmtKind};

pub const START: &str = "$AD CHECKPOINT-START";
pub const END: &str = "$AD CHECKPOINT-END";

/// Is `s` a region this pass made?
pub fn is_region(s: &Stmt) -> bool {
    matches!(s.kind, StmtKind::Block(_)) && s.comments.leading.iter().any(|c| c.contains(START))
}

/// The procedures with a START directive.
pub fn procs_with_regions(program: &Program) -> Vec<ProcId> {
    program
        .defined_procs()
        .filter(|(_, p)| {
            let mut found = false;
            if let Some(b) = &p.body {
                crate::il::visit_stmts(&b.stmts, &mut |s| {
                    found |= s.comments.leading.iter().any(|c| c.contains(START));
                });
            }
            found
        })
        .map(|(id, _)| id)
        .collect()
}

/// Wraps the regions of procedure `p` into blocks and renumbers its
/// statements.
pub fn mark_regions(program: &mut Program, p: ProcId) {
    let proc = &mut program.procs[p.index()];
    let Some(body) = proc.body.as_mut() else {
        return;
    };
    let scope = body.scope;
    let closing = body.closing_comments.clone();
    body.stmts = mark_list(std::mem::take(&mut body.stmts), &closing, scope);
    let mut n = 0;
    super::tangent::renumber(&mut body.stmts, &mut n);
    proc.stmt_count = n;
}

fn mark_list(stmts: Vec<Stmt>, closing: &[String], scope: ScopeId) -> Vec<Stmt> {
    let mut stmts: Vec<Stmt> = stmts.into_iter().map(|s| mark_nested(s, scope)).collect();
    let mut i = 0;
    while i < stmts.len() {
        if !stmts[i].comments.leading.iter().any(|c| c.contains(START)) || is_region(&stmts[i]) {
            i += 1;
            continue;
        }
        // The region ends before the next statement with END before it,
        // with the statement that has END trailing, or at the closing
        // brace with END before it.
        let end = (i..stmts.len())
            .find_map(|k| {
                if k > i && stmts[k].comments.leading.iter().any(|c| c.contains(END)) {
                    Some(k)
                } else if stmts[k]
                    .comments
                    .trailing
                    .as_ref()
                    .is_some_and(|c| c.contains(END))
                {
                    Some(k + 1)
                } else {
                    None
                }
            })
            .or_else(|| {
                closing
                    .iter()
                    .any(|c| c.contains(END))
                    .then_some(stmts.len())
            });
        let Some(end) = end else {
            i += 1;
            continue;
        };
        let mut inner: Vec<Stmt> = stmts.drain(i..end).collect();
        let mut comments = Comments::default();
        let first = &mut inner[0].comments.leading;
        let at = first.iter().position(|c| c.contains(START)).unwrap_or(0);
        comments.leading = first.drain(..=at).collect();
        let span = inner[0].span.to(inner[inner.len() - 1].span);
        let region = Stmt {
            id: StmtId(0),
            kind: StmtKind::Block(Block {
                stmts: inner,
                scope,
                closing_comments: Vec::new(),
                span,
            }),
            span,
            comments,
        };
        stmts.insert(i, region);
        i += 1;
    }
    stmts
}

fn mark_nested(mut s: Stmt, scope: ScopeId) -> Stmt {
    let list = |b: &mut Block| {
        let closing = b.closing_comments.clone();
        b.stmts = mark_list(std::mem::take(&mut b.stmts), &closing, b.scope);
    };
    match &mut s.kind {
        StmtKind::If { then, other, .. } => {
            list(then);
            if let Some(o) = other {
                list(o);
            }
        }
        StmtKind::Loop { body, .. } => list(body),
        StmtKind::Switch { cases, .. } => {
            for c in cases {
                c.body = mark_list(std::mem::take(&mut c.body), &[], scope);
            }
        }
        StmtKind::Block(b) => list(b),
        _ => {}
    }
    s
}
