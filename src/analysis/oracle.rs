//! A naive oracle for the intraprocedural analyses: a plain worklist
//! solver of the same §5.2 equations over the same elementary facts, used
//! by the tests to check the crepe programs (`datalog.rs`) and the block
//! composition (`blocks.rs`) that `analyze_proc` relies on.
//!
//! It is deliberately naive and independent of both:
//! - it works at statement (point) granularity: every point is a node of
//!   its own flow graph, and so is every empty basic block (which passes
//!   values through unchanged); the predecessors of a point are the
//!   previous point of its block or, for the first point, the last node of
//!   each predecessor block;
//! - every analysis is one classic worklist iteration from empty sets to
//!   the least fixed point, with the elementary transfer of each point
//!   written out again here (no `blocks::compose`, `blocks::forward`,
//!   `blocks::backward`, `GenKill`, no crepe);
//! - diff-liveness with control is iterated as a whole: solve the backward
//!   equations for a set of live controls, derive the live statements and
//!   controls, and repeat until the set of live controls stops growing;
//! - a test is a point like the others: Diff-live⁻(T) = use(T′) ∪
//!   (Dep(T) ⊗ Diff-live⁺(T)), plus what T reads when its control is live
//!   (`diff-live/control-use`); so the outcome zone a test writes and kills
//!   is not diff-live before it. A test is diff-live when its control is.
//!
//! The one rule taken from the code rather than the equations: a `for`
//! loop's step statement (`Point::loop_step`) restores nothing, since the
//! reversed loop recomputes its counter.
//!
//! Only the calling contexts (`varied_entry`, `useful_exit`, `live_exit`)
//! are taken from the analysis under test, since they come from the
//! interprocedural envelope, which this oracle does not recompute. It is
//! slow and meant for tests only.

use super::blocks::Set;
use super::facts::{self, PointKind, ProcFacts};
use super::locs::Zone;
use super::{Analysis, ProcResult};
use crate::il::{ProcId, Program, Stmt, StmtId, StmtKind};
use std::collections::{BTreeSet, VecDeque};

/// Recomputes every per-point result of `proc` from its facts and the
/// calling contexts stored in `analysis.results[&proc]`.
pub fn solve(analysis: &Analysis<'_>, proc: ProcId) -> ProcResult {
    let f = &analysis.facts[&proc];
    let given = &analysis.results[&proc];
    let g = Graph::of(f);
    let n = f.points.len();
    let mut r = ProcResult {
        varied_entry: given.varied_entry.clone(),
        useful_exit: given.useful_exit.clone(),
        live_exit: given.live_exit.clone(),
        ..ProcResult::default()
    };

    // activity/varied-*: forward, Varied⁺ = Varied⁻ ⊗ Diff-dep(I).
    let (vin, vout) = g.forward(&r.varied_entry, |i, s| {
        let e = &f.points[i].effect;
        image(s, &e.writes, &e.diff_dep)
    });
    r.varied_in = g.point_values(&vin);
    r.varied_out = g.point_values(&vout);

    // activity/useful-*: backward, Useful⁻ = Diff-dep(I) ⊗ Useful⁺.
    let (uin, uout) = g.backward(&r.useful_exit, |i, s| {
        let e = &f.points[i].effect;
        preimage(s, &e.writes, &e.diff_dep)
    });
    r.useful_in = g.point_values(&uin);
    r.useful_out = g.point_values(&uout);

    // deriv-use/*, activity/active.
    r.deriv_use = vec![Set::new(); n];
    r.active = vec![false; n];
    // `deriv-use/adjoint-reset`: in adjoint mode, a zone varied anywhere
    // in the procedure may have a nonzero adjoint wherever it is useful.
    let varied_anywhere: Set = if analysis.mode == crate::analysis::Mode::Adjoint {
        (0..n)
            .flat_map(|i| r.varied_in[i].iter().chain(r.varied_out[i].iter()))
            .copied()
            .collect()
    } else {
        Set::new()
    };
    for i in 0..n {
        let (active, uses) = derivative(f, &r, i, &varied_anywhere);
        r.active[i] = active;
        r.deriv_use[i] = uses;
    }

    diff_live(analysis.program, f, &g, &mut r);

    // tbr/*: forward from ∅ at the entry; tbr/restore.
    // `tbr/restore-address`, as a transfer that looks at what comes in:
    // a point that restores something reads its target's address in I′.
    let restores = |i: usize, s: &Set, uses: &Set| {
        r.diff_live[i]
            && !f.points[i].loop_step
            && f.points[i]
                .effect
                .writes
                .iter()
                .any(|z| s.contains(z) || uses.contains(z))
    };
    let (tin, _) = g.forward(&Set::new(), |i, s| {
        let mut t: Set = s.union(&r.deriv_use[i]).copied().collect();
        if restores(i, s, &r.deriv_use[i]) {
            t.extend(f.points[i].deriv.lhs_addr.iter().copied());
        }
        if r.diff_live[i] {
            for z in &f.points[i].effect.kills {
                t.remove(z);
            }
        }
        // `tbr/call-exit`: an active split call's writes, after it.
        if analysis.mode == crate::analysis::Mode::Adjoint
            && r.active[i]
            && f.points[i].deriv.call
            && !analysis.checkpointed_point(f, i)
        {
            t.extend(f.points[i].effect.writes.iter().copied());
        }
        t
    });
    r.tbr_in = g.point_values(&tin);
    for i in 0..n {
        if restores(i, &r.tbr_in[i], &r.deriv_use[i]) {
            let addr = f.points[i].deriv.lhs_addr.clone();
            r.deriv_use[i].extend(addr);
        }
    }
    r.restore = (0..n)
        .map(|i| {
            // A for loop's step statement is recomputed by the reversed
            // loop, so nothing is saved before it.
            if !r.diff_live[i] || f.points[i].loop_step {
                return Set::new();
            }
            f.points[i]
                .effect
                .writes
                .iter()
                .copied()
                .filter(|z| r.tbr_in[i].contains(z) || r.deriv_use[i].contains(z))
                .collect()
        })
        .collect();

    // adj-out/*: backward from ∅ at the exit.
    let (ain, aout) = g.backward(&Set::new(), |i, s| {
        if !r.diff_live[i] {
            return s.clone();
        }
        let mut a = s.clone();
        a.extend(f.points[i].effect.writes.iter().copied());
        a.retain(|z| !r.tbr_in[i].contains(z) && !r.deriv_use[i].contains(z));
        a
    });
    r.adj_out_in = g.point_values(&ain);
    r.adj_out_out = g.point_values(&aout);

    // inout/cst, inout/dead: backward may-write and upward-exposed reads.
    let (wa_in, _) = g.backward(&Set::new(), |i, s| {
        let mut w = s.clone();
        w.extend(f.points[i].effect.writes.iter().copied());
        w
    });
    let (up_in, _) = g.backward(&Set::new(), |i, s| {
        let e = &f.points[i].effect;
        let mut u: Set = s.iter().copied().filter(|z| !e.kills.contains(z)).collect();
        u.extend(e.reads.iter().copied());
        u
    });
    let wa_in = g.point_values(&wa_in);
    let up_in = g.point_values(&up_in);
    r.cst = wa_in
        .iter()
        .map(|w| f.zones.iter().copied().filter(|z| !w.contains(z)).collect())
        .collect();
    r.dead = up_in
        .iter()
        .map(|u| f.zones.iter().copied().filter(|z| !u.contains(z)).collect())
        .collect();
    r
}

/// `S ⊗ R(I)` forward: zones `w` such that some `u ∈ S` has `(u, w)` in
/// the point's relation, plus the zones of `S` the point does not write
/// (the identity part).
fn image(s: &Set, writes: &[Zone], rel: &[(Zone, Zone)]) -> Set {
    let mut out = Set::new();
    for &z in s {
        if !writes.contains(&z) {
            out.insert(z);
        }
    }
    for &(u, w) in rel {
        if s.contains(&u) {
            out.insert(w);
        }
    }
    out
}

/// `R(I) ⊗ S` backward: zones `u` such that `(u, w)` is in the point's
/// relation for some `w ∈ S`, plus the zones of `S` the point does not
/// write.
fn preimage(s: &Set, writes: &[Zone], rel: &[(Zone, Zone)]) -> Set {
    let mut out = Set::new();
    for &z in s {
        if !writes.contains(&z) {
            out.insert(z);
        }
    }
    for &(u, w) in rel {
        if s.contains(&w) {
            out.insert(u);
        }
    }
    out
}

/// Whether point `i` has a derivative statement, and use(I').
///
/// - a call is active when a zone it reads or writes is active before
///   (varied and useful before) or after it; its derivative reads all the
///   call reads and the zones its arguments are evaluated from
///   (`deriv-use/call`);
/// - another point is active when a zone it writes is active after it; its
///   derivative reads what addresses the written reference and, for every
///   differentiable leaf varied before it, what that partial derivative
///   reads (`deriv-use/partial`, `deriv-use/address`);
/// - otherwise a point that writes a zone varied before it and useful after
///   it is active too: the derivative of that zone is reset to zero, which
///   reads only the address of the written reference; in adjoint mode, so
///   is a point that writes a zone useful after it and varied anywhere in
///   the procedure (`deriv-use/adjoint-reset`).
fn derivative(f: &ProcFacts<'_>, r: &ProcResult, i: usize, varied_anywhere: &Set) -> (bool, Set) {
    let p = &f.points[i];
    let e = &p.effect;
    let active_before = |z: &Zone| r.varied_in[i].contains(z) && r.useful_in[i].contains(z);
    let active_after = |z: &Zone| r.varied_out[i].contains(z) && r.useful_out[i].contains(z);
    let mut uses = Set::new();
    if p.deriv.call {
        let touched = e.reads.iter().chain(e.writes.iter());
        let active = touched.clone().any(|z| active_before(z) || active_after(z))
            || e.writes
                .iter()
                .any(|w| varied_anywhere.contains(w) && r.useful_out[i].contains(w));
        if !active {
            return (false, uses);
        }
        uses.extend(e.reads.iter().copied());
        if let Some(site) = f.calls.get(&i) {
            uses.extend(site.arg_reads.iter().copied());
        }
        return (true, uses);
    }
    if e.writes.iter().any(active_after) {
        uses.extend(p.deriv.lhs_addr.iter().copied());
        for (leaf, needs) in &p.deriv.leaves {
            if r.varied_in[i].contains(leaf) {
                uses.extend(needs.iter().copied());
            }
        }
        return (true, uses);
    }
    let resets = e
        .writes
        .iter()
        .any(|w| r.varied_in[i].contains(w) && r.useful_out[i].contains(w));
    let adjoint_reset = e
        .writes
        .iter()
        .any(|w| varied_anywhere.contains(w) && r.useful_out[i].contains(w));
    if resets || adjoint_reset {
        uses.extend(p.deriv.lhs_addr.iter().copied());
        return (true, uses);
    }
    (false, uses)
}

/// diff-live/*: the backward equations for a given set of live controls,
/// then the live statements and controls they imply, until the set of live
/// controls is stable (least fixed point, starting from none).
fn diff_live(program: &Program, f: &ProcFacts<'_>, g: &Graph, r: &mut ProcResult) {
    let n = f.points.len();
    let jumps = jump_controls(program, f.proc);
    // Every control the points know of: the enclosing ones and the tested
    // ones, plus the ones enclosing a jump.
    let mut controls: BTreeSet<StmtId> = jumps.clone();
    for p in &f.points {
        controls.extend(p.enclosing.iter().copied());
        if let PointKind::Test(s) = p.kind {
            controls.insert(s.id);
        }
    }
    let mut live_controls: BTreeSet<StmtId> = BTreeSet::new();
    loop {
        let (lin, lout) = g.backward(&r.live_exit, |i, s| {
            let p = &f.points[i];
            let e = &p.effect;
            // diff-live/dep, diff-live/untouched, diff-live/use
            let mut l = preimage(s, &e.writes, &e.dep);
            l.extend(r.deriv_use[i].iter().copied());
            // diff-live/effect
            if facts::is_observable(program, f, i) {
                l.extend(e.reads.iter().copied());
            }
            // diff-live/control-use
            if let PointKind::Test(st) = p.kind
                && live_controls.contains(&st.id)
            {
                l.extend(e.reads.iter().copied());
            }
            l
        });
        r.live_in = g.point_values(&lin);
        r.live_out = g.point_values(&lout);
        // diff-live/stmt; a test is live when its control is.
        r.diff_live = (0..n)
            .map(|i| match f.points[i].kind {
                PointKind::Test(st) => live_controls.contains(&st.id),
                _ => {
                    facts::is_observable(program, f, i)
                        || f.points[i]
                            .effect
                            .writes
                            .iter()
                            .any(|w| r.live_out[i].contains(w))
                }
            })
            .collect();
        // diff-live/control
        let any = (0..n).any(|i| r.diff_live[i] || r.active[i]);
        let mut next = live_controls.clone();
        for &c in &controls {
            let encloses_live = (0..n)
                .any(|i| (r.diff_live[i] || r.active[i]) && f.points[i].enclosing.contains(&c));
            if encloses_live || (any && jumps.contains(&c)) {
                next.insert(c);
            }
        }
        if next == live_controls {
            break;
        }
        live_controls = next;
    }
    r.live_controls = live_controls;
}

/// The controls (if, loop, switch) that enclose, at any depth, a `break`,
/// a `continue` or a `return`, from the statement tree.
fn jump_controls(program: &Program, proc: ProcId) -> BTreeSet<StmtId> {
    fn walk(stmts: &[Stmt], open: &mut Vec<StmtId>, out: &mut BTreeSet<StmtId>) {
        for s in stmts {
            match &s.kind {
                StmtKind::Break | StmtKind::Continue | StmtKind::Return(_) => {
                    out.extend(open.iter().copied());
                }
                StmtKind::If { then, other, .. } => {
                    open.push(s.id);
                    walk(&then.stmts, open, out);
                    if let Some(o) = other {
                        walk(&o.stmts, open, out);
                    }
                    open.pop();
                }
                StmtKind::Loop { body, .. } => {
                    open.push(s.id);
                    walk(&body.stmts, open, out);
                    open.pop();
                }
                StmtKind::Switch { cases, .. } => {
                    open.push(s.id);
                    for c in cases {
                        walk(&c.body, open, out);
                    }
                    open.pop();
                }
                StmtKind::Block(b) => walk(&b.stmts, open, out),
                _ => {}
            }
        }
    }
    let mut out = BTreeSet::new();
    if let Some(body) = &program.proc(proc).body {
        walk(&body.stmts, &mut Vec::new(), &mut out);
    }
    out
}

/// The statement-level flow graph: nodes `0..n` are the points, nodes
/// `n..` the empty blocks.
struct Graph {
    points: usize,
    succ: Vec<Vec<usize>>,
    pred: Vec<Vec<usize>>,
    /// The node where each block's values start and end.
    first: Vec<usize>,
    last: Vec<usize>,
}

impl Graph {
    fn of(f: &ProcFacts<'_>) -> Graph {
        let n = f.points.len();
        let mut first = Vec::with_capacity(f.blocks.len());
        let mut last = Vec::with_capacity(f.blocks.len());
        let mut nodes = n;
        for range in &f.blocks {
            if range.is_empty() {
                first.push(nodes);
                last.push(nodes);
                nodes += 1;
            } else {
                first.push(range.start);
                last.push(range.end - 1);
            }
        }
        let mut succ = vec![Vec::new(); nodes];
        for range in &f.blocks {
            for (i, next) in range.clone().zip(range.clone().skip(1)) {
                succ[i].push(next);
            }
        }
        for (b, ss) in f.succs.iter().enumerate() {
            for &c in ss {
                let (from, to) = (last[b], first[c as usize]);
                if !succ[from].contains(&to) {
                    succ[from].push(to);
                }
            }
        }
        let mut pred = vec![Vec::new(); nodes];
        for (a, ss) in succ.iter().enumerate() {
            for &b in ss {
                pred[b].push(a);
            }
        }
        Graph {
            points: n,
            succ,
            pred,
            first,
            last,
        }
    }

    /// The values of the point nodes.
    fn point_values(&self, v: &[Set]) -> Vec<Set> {
        v[..self.points].to_vec()
    }

    /// Forward: `in(v) = seed (at the entry block's start) ∪ ⋃ out(preds)`,
    /// `out(v) = transfer(in(v))` for a point, `in(v)` for an empty block.
    fn forward(&self, seed: &Set, transfer: impl Fn(usize, &Set) -> Set) -> (Vec<Set>, Vec<Set>) {
        self.solve(self.first[0], seed, &self.pred, &self.succ, transfer)
    }

    /// Backward: `out(v) = seed (at the exit block's end) ∪ ⋃ in(succs)`,
    /// `in(v) = transfer(out(v))`. Returns (in, out).
    fn backward(&self, seed: &Set, transfer: impl Fn(usize, &Set) -> Set) -> (Vec<Set>, Vec<Set>) {
        let (outs, ins) = self.solve(self.last[1], seed, &self.succ, &self.pred, transfer);
        (ins, outs)
    }

    /// The worklist: `before(v) = seed at v0 ∪ ⋃ after(from)`,
    /// `after(v) = transfer(before(v))`; every node is visited at least
    /// once, and a node whose `after` changes puts its `to` nodes back.
    fn solve(
        &self,
        seeded: usize,
        seed: &Set,
        from: &[Vec<usize>],
        to: &[Vec<usize>],
        transfer: impl Fn(usize, &Set) -> Set,
    ) -> (Vec<Set>, Vec<Set>) {
        let nodes = self.succ.len();
        let mut before = vec![Set::new(); nodes];
        let mut after = vec![Set::new(); nodes];
        let mut queued = vec![true; nodes];
        let mut work: VecDeque<usize> = (0..nodes).collect();
        while let Some(v) = work.pop_front() {
            queued[v] = false;
            let mut b = if v == seeded {
                seed.clone()
            } else {
                Set::new()
            };
            for &p in &from[v] {
                b.extend(after[p].iter().copied());
            }
            let a = if v < self.points {
                transfer(v, &b)
            } else {
                b.clone()
            };
            before[v] = b;
            if a != after[v] {
                after[v] = a;
                for &w in &to[v] {
                    if !queued[w] {
                        queued[w] = true;
                        work.push_back(w);
                    }
                }
            }
        }
        (before, after)
    }
}
