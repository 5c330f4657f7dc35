//! The questions the transformation rules ask of the analyses, as one API
//! (`spec/analyses/predicates.md`). Statements are named by procedure and
//! statement id; expressions by reference (they must belong to the
//! analysed program).

use super::blocks::Set;
use super::facts::{PointKind, for_each_diff_ref, key};
use super::locs::Zone;
use super::{Analysis, ProcResult};
use crate::il::{Expr, ExprKind, ProcId, StmtId};
use rustc_hash::FxHashMap as HashMap;

impl Analysis<'_> {
    fn point(&self, proc: ProcId, stmt: StmtId) -> Option<(usize, &ProcResult)> {
        let i = *self.facts.get(&proc)?.point_of.get(&stmt)?;
        Some((i, self.results.get(&proc)?))
    }

    /// The in-out classes of a procedure's interface zones (from its
    /// summary): `inout/read-then-written`, `inout/read-only`,
    /// `inout/written-only`; every other zone is `inout/untouched`.
    pub fn inout_classes(&self, proc: ProcId) -> (Set, Set, Set) {
        let mut both = Set::new();
        let mut read_only = Set::new();
        let mut written_only = Set::new();
        let Some(sm) = self.summaries.get(&proc) else {
            return (both, read_only, written_only);
        };
        let visible = |z: &Zone| self.locs.is_interface(proc, *z) && self.locs.is_user_visible(*z);
        for z in sm.reads.iter().filter(|z| visible(z)) {
            if sm.writes.contains(z) {
                both.insert(*z);
            } else {
                read_only.insert(*z);
            }
        }
        for z in sm.writes.iter().filter(|z| visible(z)) {
            if !sm.reads.contains(z) {
                written_only.insert(*z);
            }
        }
        (both, read_only, written_only)
    }

    /// Active⁻ at a statement (`activity/active`).
    pub fn active_before(&self, proc: ProcId, stmt: StmtId) -> Set {
        self.point(proc, stmt)
            .map(|(i, r)| {
                r.varied_in[i]
                    .intersection(&r.useful_in[i])
                    .copied()
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Active⁺ at a statement.
    pub fn active_after(&self, proc: ProcId, stmt: StmtId) -> Set {
        self.point(proc, stmt)
            .map(|(i, r)| {
                r.varied_out[i]
                    .intersection(&r.useful_out[i])
                    .copied()
                    .collect()
            })
            .unwrap_or_default()
    }

    /// `pred/active-expr`: does `expr`, evaluated at statement `stmt`, use
    /// differentiably a zone active before the statement?
    pub fn is_active_expr(&self, proc: ProcId, stmt: StmtId, expr: &Expr) -> bool {
        let active = self.active_before(proc, stmt);
        let mut leaves = Vec::new();
        self.diff_leaves(proc, expr, &mut leaves);
        leaves.iter().any(|z| active.contains(z))
    }

    /// The zones `expr` reads at differentiable positions.
    pub fn diff_leaves(&self, proc: ProcId, e: &Expr, out: &mut Vec<Zone>) {
        let Some(f) = self.facts.get(&proc) else {
            return;
        };
        for_each_diff_ref(self.program, e, &mut |r| {
            if let Some(zs) = f.ref_zones.get(&key(r)) {
                out.extend(zs.iter().copied().filter(|z| self.locs.zone(*z).real));
            }
        });
    }

    /// `pred/active-call`: a call with an argument active before or after.
    pub fn is_active_call(&self, proc: ProcId, stmt: StmtId) -> bool {
        self.point(proc, stmt)
            .is_some_and(|(i, r)| r.active[i] && self.facts[&proc].points[i].deriv.call)
    }

    /// `pred/checkpointed-call`: an active call the adjoint checkpoints
    /// (`adjoint/call-joint`); see `Analysis::checkpointed_point`.
    pub fn is_checkpointed_call(&self, proc: ProcId, stmt: StmtId) -> bool {
        self.is_active_call(proc, stmt)
            && self
                .facts
                .get(&proc)
                .and_then(|f| {
                    f.point_of
                        .get(&stmt)
                        .map(|&i| self.checkpointed_point(f, i))
                })
                .unwrap_or(false)
    }

    /// `pred/live-for-diff`: the statement (or control) is needed by the
    /// derivatives.
    pub fn is_live_for_diff(&self, proc: ProcId, stmt: StmtId) -> bool {
        let Some(r) = self.results.get(&proc) else {
            return false;
        };
        if r.live_controls.contains(&stmt) {
            return true;
        }
        self.point(proc, stmt).is_some_and(|(i, r)| {
            !matches!(self.facts[&proc].points[i].kind, PointKind::Test(_)) && r.diff_live[i]
        })
    }

    /// `pred/ref`: is the expression a memory reference?
    pub fn is_ref(&self, e: &Expr) -> bool {
        matches!(
            e.kind,
            ExprKind::Var(_) | ExprKind::Index { .. } | ExprKind::Field { .. } | ExprKind::Deref(_)
        )
    }

    /// `pred/diff-proc`: a head, or called by at least one active call.
    pub fn is_diff_proc(&self, proc: ProcId) -> bool {
        if self.heads.iter().any(|h| h.proc == proc) {
            return true;
        }
        self.call_points(proc)
            .iter()
            .any(|&(caller, i)| self.results[&caller].active[i])
    }

    /// The call points of `proc`: `(caller, point)`.
    fn call_points(&self, proc: ProcId) -> &[(ProcId, usize)] {
        let index = self.call_index.get_or_init(|| {
            let mut idx: HashMap<ProcId, Vec<(ProcId, usize)>> = HashMap::default();
            for (caller, f) in &self.facts {
                for (&i, site) in &f.calls {
                    if let Some(c) = site.callee {
                        idx.entry(c).or_default().push((*caller, i));
                    }
                }
            }
            for v in idx.values_mut() {
                v.sort_unstable();
            }
            idx
        });
        index.get(&proc).map_or(&[], |v| v.as_slice())
    }

    /// `pred/diff-formal`: formal `index` of `proc` is a head's independent
    /// or dependent, or some active call passes it an actual active at the
    /// call, or it (or its target) is active somewhere inside `proc`.
    pub fn is_diff_formal_arg(&self, proc: ProcId, index: usize) -> bool {
        let Some(&sym) = self.program.proc(proc).params.get(index) else {
            return false;
        };
        let Some(r) = self.results.get(&proc) else {
            return false;
        };
        let zones = self.locs.reach(proc, self.locs.of_sym(sym));
        let is_head_var = self.heads.iter().any(|h| {
            h.proc == proc
                && h.dependents
                    .iter()
                    .chain(h.independents.iter())
                    .any(|v| *v == super::HeadVar::Param(sym))
        });
        let active_inside = (0..r.varied_in.len()).any(|i| {
            zones.iter().any(|z| {
                (r.varied_in[i].contains(z) && r.useful_in[i].contains(z))
                    || (r.varied_out[i].contains(z) && r.useful_out[i].contains(z))
            })
        });
        // `deriv-use/adjoint-reset`: an active point only overwrites the
        // target, and must zero the adjoint the caller passes.
        let resets_inside = self.mode == super::Mode::Adjoint
            && self.facts.get(&proc).is_some_and(|f| {
                (0..r.active.len()).any(|i| {
                    r.active[i]
                        && f.points[i]
                            .effect
                            .writes
                            .iter()
                            .any(|w| zones.contains(w) && r.useful_out[i].contains(w))
                })
            });
        let active_at_a_call = self.call_points(proc).iter().any(|&(caller, i)| {
            let f = &self.facts[&caller];
            let cr = &self.results[&caller];
            let site = &f.calls[&i];
            {
                cr.active[i]
                    && zones.iter().any(|z| {
                        let actual = match site.by_value.get(z) {
                            Some((reads, _)) => reads.as_slice(),
                            None => site.map.get(z).map_or(&[][..], |v| v.as_slice()),
                        };
                        actual.iter().any(|a| {
                            (cr.varied_in[i].contains(a) && cr.useful_in[i].contains(a))
                                || (cr.varied_out[i].contains(a) && cr.useful_out[i].contains(a))
                        })
                    })
            }
        });
        is_head_var || active_at_a_call || active_inside || resets_inside
    }

    /// `pred/diff`: the zone is active somewhere in the program.
    pub fn is_diff_zone(&self, z: Zone) -> bool {
        self.diff_zones.contains(&z)
    }

    /// `pred/diff`: a reference designating a zone active somewhere.
    pub fn is_diff(&self, proc: ProcId, reference: &Expr) -> bool {
        self.facts
            .get(&proc)
            .and_then(|f| f.ref_zones.get(&key(reference)))
            .is_some_and(|zs| zs.iter().any(|z| self.is_diff_zone(*z)))
    }

    /// `pred/tbr`: TBR⁻ before a statement.
    pub fn tbr_before(&self, proc: ProcId, stmt: StmtId) -> Set {
        self.point(proc, stmt)
            .map(|(i, r)| r.tbr_in[i].clone())
            .unwrap_or_default()
    }

    /// `pred/restore`: what the store-all forward sweep saves before the
    /// statement, out(I) ∩ (TBR⁻(I) ∪ use(I')).
    pub fn restore(&self, proc: ProcId, stmt: StmtId) -> Set {
        self.point(proc, stmt)
            .map(|(i, r)| r.restore[i].clone())
            .unwrap_or_default()
    }

    /// `pred/snapshot`: the snapshot of a checkpointed call,
    /// SNP = out(C) ∩ (TBR⁻(C) ∪ Diff-live⁻(C)) (`adj-out/snapshot`).
    pub fn snapshot(&self, proc: ProcId, stmt: StmtId) -> Set {
        let Some((i, r)) = self.point(proc, stmt) else {
            return Set::new();
        };
        self.facts[&proc].points[i]
            .effect
            .writes
            .iter()
            .copied()
            .filter(|z| r.tbr_in[i].contains(z) || r.live_in[i].contains(z))
            .collect()
    }
}
