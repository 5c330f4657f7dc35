//! Varied zones along the statement tree, for the implicit-zero resets
//! (`tangent/reset-merge`).
//!
//! The analyses give Varied per simple statement; the control structure is
//! a tree, so the state at the end of a branch, at a loop header or at a
//! `break` is recovered by walking the tree and joining as the flow graph
//! does. A derivative variable whose zone is not varied on an edge holds
//! either its true value zero or a stale value (implicit zero); where such
//! an edge joins one on which the zone is varied, the tangent code resets
//! the derivative on the first edge.

use crate::analysis::Analysis;
use crate::analysis::blocks::Set;
use crate::il::{LoopHeader, ProcId, ScopeId, Stmt, StmtId, StmtKind};
use rustc_hash::FxHashMap as HashMap;

/// Varied states around the statements of one procedure.
#[derive(Default)]
pub struct VariedMap {
    /// Varied just before each statement.
    pub before: HashMap<StmtId, Set>,
    /// Varied just after it; absent when control never falls through.
    pub after: HashMap<StmtId, Set>,
    /// Varied at each loop's header (the join of entry and back edges).
    pub header: HashMap<StmtId, Set>,
    /// Varied at each procedure exit (`return` or the end), joined.
    pub exit: Set,
    /// The innermost block scope around each statement.
    pub scope: HashMap<StmtId, ScopeId>,
}

struct Walk<'x, 'a> {
    a: &'x Analysis<'a>,
    proc: ProcId,
    map: VariedMap,
    /// Enclosing loops and switches: (is a loop, break states, continue states).
    jumps: Vec<(bool, Vec<Set>, Vec<Set>)>,
}

impl VariedMap {
    pub fn of(a: &Analysis<'_>, proc: ProcId, body: &[Stmt], scope: ScopeId) -> VariedMap {
        let entry = a
            .results
            .get(&proc)
            .map(|r| r.varied_entry.clone())
            .unwrap_or_default();
        let mut w = Walk {
            a,
            proc,
            map: VariedMap::default(),
            jumps: Vec::new(),
        };
        if let Some(end) = w.list(body, Some(entry), scope) {
            w.map.exit.extend(end);
        }
        w.map
    }

    /// The state at the end of a statement list entered with `entry`.
    pub fn end_of(&self, list: &[Stmt], entry: &Set) -> Option<Set> {
        match list.last() {
            None => Some(entry.clone()),
            Some(s) => self.after.get(&s.id).cloned(),
        }
    }
}

impl Walk<'_, '_> {
    fn point_sets(&self, s: &Stmt) -> Option<(Set, Set)> {
        let f = self.a.facts.get(&self.proc)?;
        let i = *f.point_of.get(&s.id)?;
        let r = self.a.results.get(&self.proc)?;
        Some((r.varied_in[i].clone(), r.varied_out[i].clone()))
    }

    fn list(&mut self, stmts: &[Stmt], mut state: Option<Set>, scope: ScopeId) -> Option<Set> {
        for s in stmts {
            // Code after a jump is unreachable except through a label C
            // does not have here; an empty state keeps the walk total.
            let now = state.take().unwrap_or_default();
            state = self.stmt(s, now, scope);
        }
        state
    }

    fn stmt(&mut self, s: &Stmt, state: Set, scope: ScopeId) -> Option<Set> {
        self.map.before.insert(s.id, state.clone());
        self.map.scope.insert(s.id, scope);
        let out = match &s.kind {
            StmtKind::If { then, other, .. } => {
                let test = self.point_sets(s).map(|p| p.1).unwrap_or(state);
                let a = self.list(&then.stmts, Some(test.clone()), then.scope);
                let b = match other {
                    Some(o) => self.list(&o.stmts, Some(test), o.scope),
                    None => Some(test),
                };
                join(a, b)
            }
            StmtKind::Loop { header, body } => {
                let entry = match header {
                    LoopHeader::For { init, .. } => self.list(init, Some(state.clone()), scope),
                    _ => Some(state.clone()),
                }
                .unwrap_or_default();
                let at_test = self.point_sets(s).map(|p| p.1);
                let head = match at_test.clone() {
                    Some(t) => t.union(&entry).copied().collect(),
                    None => entry,
                };
                self.map.header.insert(s.id, head.clone());
                self.jumps.push((true, Vec::new(), Vec::new()));
                let end = self.list(&body.stmts, Some(head.clone()), body.scope);
                let mut back = end.clone();
                for c in self.jumps.last().map(|j| j.2.clone()).unwrap_or_default() {
                    back = join(back, Some(c));
                }
                if let LoopHeader::For { step, .. } = header {
                    let _ = self.list(step, back, scope);
                }
                let (_, breaks, _) = self.jumps.pop().unwrap_or_default();
                let test_exits = match header {
                    LoopHeader::For { cond: None, .. } => None,
                    _ => Some(at_test.unwrap_or(head)),
                };
                breaks
                    .into_iter()
                    .fold(test_exits, |acc, b| join(acc, Some(b)))
            }
            StmtKind::Switch { cases, .. } => {
                let test = self.point_sets(s).map(|p| p.1).unwrap_or(state);
                self.jumps.push((false, Vec::new(), Vec::new()));
                let mut fall: Option<Set> = None;
                for c in cases {
                    let start = join(fall.take(), Some(test.clone()));
                    fall = self.list(&c.body, start, scope);
                }
                let (_, breaks, _) = self.jumps.pop().unwrap_or_default();
                let has_default = cases.iter().any(|c| c.labels.iter().any(|l| l.is_none()));
                let mut out = fall;
                if !has_default {
                    out = join(out, Some(test));
                }
                breaks.into_iter().fold(out, |acc, b| join(acc, Some(b)))
            }
            StmtKind::Block(b) => self.list(&b.stmts, Some(state), b.scope),
            StmtKind::Break => {
                if let Some(j) = self.jumps.last_mut() {
                    j.1.push(state);
                }
                None
            }
            StmtKind::Continue => {
                if let Some(j) = self.jumps.iter_mut().rev().find(|j| j.0) {
                    j.2.push(state);
                }
                None
            }
            StmtKind::Return(_) => {
                let at = self.point_sets(s).map(|p| p.1).unwrap_or(state);
                self.map.exit.extend(at);
                None
            }
            _ => Some(self.point_sets(s).map(|p| p.1).unwrap_or(state)),
        };
        if let Some(o) = &out {
            self.map.after.insert(s.id, o.clone());
        }
        out
    }
}

fn join(a: Option<Set>, b: Option<Set>) -> Option<Set> {
    match (a, b) {
        (None, x) | (x, None) => x,
        (Some(mut x), Some(y)) => {
            x.extend(y);
            Some(x)
        }
    }
}
