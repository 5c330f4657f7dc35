//! The elementary facts of one procedure: its analysis points (simple
//! statements, control tests, returns) grouped by basic block, the pointer
//! destinations before each point, and each point's effect on zones
//! (`spec/analyses/effects.md`, `spec/analyses/calls.md`).
//!
//! Two passes over the same expressions: the first turns every
//! pointer-valued expression into a value of the pointer program and
//! solves it; the second reads the solved places back (keyed by the
//! expression's address, stable while the program is borrowed) to name the
//! zones each reference designates.

use super::locs::{Locs, NULL_PLACE, ObjKind, Place, Zone};
use super::pointers::{self, Node, PathId, PointerFacts, PointerSolution, Val};
use super::summary::Summary;
use crate::il::flow::{Branch, Enclosing, FlowGraph};
use crate::il::{
    BinOp, Expr, ExprKind, Init, LoopHeader, MathFn, ProcId, Procedure, Program, Stmt, StmtId,
    StmtKind, Storage, Type, UnOp,
};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::collections::BTreeSet;

/// What an analysis point is.
#[derive(Clone, Copy, Debug)]
pub enum PointKind<'a> {
    /// A simple statement (assignment, call, declaration, allocation, ...).
    Stmt(&'a Stmt),
    /// The test of an `if`, a loop or a `switch`.
    Test(&'a Stmt),
    /// A `return`, which writes the result.
    Return(&'a Stmt),
}

impl<'a> PointKind<'a> {
    pub fn stmt(&self) -> &'a Stmt {
        match self {
            PointKind::Stmt(s) | PointKind::Test(s) | PointKind::Return(s) => s,
        }
    }
}

/// `diff-live/effect`: a call of a library function whose effect is
/// outside the program's memory (output, ending the run), which the
/// derivative code must do as the original does.
pub fn has_observable_effect(program: &Program, kind: &PointKind<'_>) -> bool {
    // (`srand` sets the state `rand` draws from; the reads consume their
    // stream.)
    const OBSERVABLE: &[&str] = &[
        "exit", "abort", "printf", "fprintf", "puts", "putchar", "fputs", "fflush", "perror",
        "assert", "fclose", "fputc", "putc", "fwrite", "fscanf", "scanf", "fgets", "fgetc",
        "getchar", "fread", "srand",
    ];
    match kind {
        PointKind::Stmt(s) => match &s.kind {
            StmtKind::Call { callee, .. } => {
                let p = program.proc(*callee);
                p.origin == crate::il::ProcOrigin::System && OBSERVABLE.contains(&p.name.as_str())
            }
            _ => false,
        },
        _ => false,
    }
}

/// `pred/checkpointed-call`: a library function that a second run does
/// not repeat exactly: output (printed twice), input (a stream read
/// further), and state (`rand` draws the next numbers, `clock` moves on).
pub fn replays_differently(program: &Program, callee: ProcId) -> bool {
    const ONCE: &[&str] = &[
        "printf", "fprintf", "puts", "putchar", "fputs", "fflush", "perror", "fputc", "putc",
        "fwrite", "fclose", "fopen", "fscanf", "scanf", "fgets", "fgetc", "getchar", "fread",
        "rand", "srand", "clock", "time",
    ];
    let p = program.proc(callee);
    p.origin == crate::il::ProcOrigin::System && ONCE.contains(&p.name.as_str())
}

/// `diff-live/effect` at point `i` of a procedure: an observable call, or
/// a `free` of memory another procedure allocated (`adjoint/free-later`
/// hands that pointer to the runtime, so its value must be computed).
pub fn is_observable(program: &Program, f: &ProcFacts<'_>, i: usize) -> bool {
    let kind = &f.points[i].kind;
    has_observable_effect(program, kind)
        || matches!(kind, PointKind::Stmt(s)
            if f.frees_foreign.contains(&s.id) || f.calls_freeing_foreign.contains(&s.id))
}

/// The effect of one point on zones (sorted, without repetition).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Effect {
    /// `eff/read`
    pub reads: Vec<Zone>,
    /// `eff/write`
    pub writes: Vec<Zone>,
    /// `eff/kill`
    pub kills: Vec<Zone>,
    /// `eff/dep`: (before, after) for every written zone; a written zone
    /// that is not killed depends on itself.
    pub dep: Vec<(Zone, Zone)>,
    /// `eff/diff-dep`, same convention, real zones only.
    pub diff_dep: Vec<(Zone, Zone)>,
}

/// One analysis point with its block and effect.
#[derive(Clone, Debug)]
pub struct Point<'a> {
    pub kind: PointKind<'a>,
    pub block: u32,
    pub effect: Effect,
    /// The controls enclosing the point, innermost last (statement ids of
    /// `if`, loops, `switch`).
    pub enclosing: Vec<StmtId>,
    /// What the derivative of the point would read (`deriv-use/partial`).
    pub deriv: DerivInfo,
    /// A step statement of a `for` loop (`i++`): the reversed loop
    /// recomputes its counter, so store-all saves nothing before it.
    pub loop_step: bool,
}

/// The reads of a point's derivative, before activity decides which apply.
#[derive(Clone, Debug, Default)]
pub struct DerivInfo {
    /// For each differentiable leaf zone of the right-hand side, the zones
    /// its partial derivative and its address read.
    pub leaves: Vec<(Zone, Vec<Zone>)>,
    /// The zones read to address the written reference.
    pub lhs_addr: Vec<Zone>,
    /// A call: its derivative reads everything the call reads
    /// (`deriv-use/call`).
    pub call: bool,
}

/// The facts of one procedure.
#[derive(Clone, Debug)]
pub struct ProcFacts<'a> {
    pub proc: ProcId,
    pub points: Vec<Point<'a>>,
    /// The points of each block, in order.
    pub blocks: Vec<std::ops::Range<usize>>,
    pub succs: Vec<Vec<u32>>,
    pub preds: Vec<Vec<u32>>,
    /// For a call point: the callee and the map from callee zones to caller
    /// zones (`call/map-target`), with the by-value inputs
    /// (`call/by-value`).
    pub calls: HashMap<usize, CallSite>,
    /// Destinations of pointer zones before each point.
    pub pts_before: Vec<Vec<(Zone, Place)>>,
    /// Destinations of pointer zones at the exit.
    pub exit_pts: Vec<(Zone, Place)>,
    /// Every zone the facts mention.
    pub zones: BTreeSet<Zone>,
    /// The zones each reference expression designates, keyed by the
    /// expression's address (for the predicates).
    pub ref_zones: HashMap<usize, Vec<Zone>>,
    /// The point of each statement (a control statement's is its test).
    pub point_of: HashMap<StmtId, usize>,
    /// The places the pointer of each `free` statement may designate.
    pub freed: HashMap<StmtId, Vec<Place>>,
    /// The `free` statements that may release memory another procedure
    /// allocated.
    pub frees_foreign: HashSet<StmtId>,
    /// The calls of procedures that may free memory another procedure
    /// allocated, which a pointer the call reads may designate.
    pub calls_freeing_foreign: HashSet<StmtId>,
    /// The edges the block-level equations run on: the flow graph's, with
    /// every empty block but the entry and the exit bypassed (`p → e → s`
    /// becomes `p → s`). An empty block's equations are the identity, so
    /// substituting them leaves every other block's solution as it was,
    /// with fewer rows for the Datalog programs to carry.
    pub solve_edges: Vec<(u32, u32)>,
    /// Each block's successors, a bypassed one replaced by the kept blocks
    /// it leads to: a bypassed block's value, in a backward analysis, is
    /// the union of theirs.
    pub kept_succs: Vec<Vec<u32>>,
}

impl ProcFacts<'_> {
    /// The flow graph's edges between blocks, `(from, to)`.
    pub fn edges(&self) -> Vec<(u32, u32)> {
        self.succs
            .iter()
            .enumerate()
            .flat_map(|(b, ss)| ss.iter().map(move |&c| (b as u32, c)))
            .collect()
    }
}

/// `solve_edges` and `kept_succs` of a flow graph (see `ProcFacts`).
fn bypass_empty_blocks(
    blocks: &[std::ops::Range<usize>],
    succs: &[Vec<u32>],
) -> (Vec<(u32, u32)>, Vec<Vec<u32>>) {
    let kept = |b: usize| b <= 1 || !blocks[b].is_empty();
    let mut kept_succs = Vec::with_capacity(succs.len());
    for ss in succs {
        let mut out: Vec<u32> = Vec::new();
        let mut seen: Vec<u32> = Vec::new();
        let mut stack: Vec<u32> = ss.iter().rev().copied().collect();
        while let Some(c) = stack.pop() {
            if kept(c as usize) {
                if !out.contains(&c) {
                    out.push(c);
                }
            } else if !seen.contains(&c) {
                seen.push(c);
                stack.extend(succs[c as usize].iter().rev().copied());
            }
        }
        kept_succs.push(out);
    }
    let edges = kept_succs
        .iter()
        .enumerate()
        .filter(|&(b, _)| kept(b))
        .flat_map(|(b, ks)| ks.iter().map(move |&c| (b as u32, c)))
        .collect();
    (edges, kept_succs)
}

/// How a call point sees its callee.
#[derive(Clone, Debug, Default)]
pub struct CallSite {
    pub callee: Option<ProcId>,
    /// Callee zone → caller zones it stands for (targets, result, globals).
    pub map: HashMap<Zone, Vec<Zone>>,
    /// Callee parameter zone → caller zones the actual argument reads
    /// (all, and at differentiable positions).
    pub by_value: HashMap<Zone, (Vec<Zone>, Vec<Zone>)>,
    /// Zones read to evaluate the arguments' addresses and values.
    pub arg_reads: Vec<Zone>,
    /// The actual arguments' places, per parameter index (pointers only),
    /// for aliasing warnings.
    pub arg_places: Vec<Vec<Place>>,
}

/// Builds the facts of a procedure: points, pointer destinations, effects.
pub fn build<'a>(
    program: &'a Program,
    locs: &mut Locs,
    pid: ProcId,
    summaries: &HashMap<ProcId, Summary>,
) -> ProcFacts<'a> {
    let proc = program.proc(pid);
    let graph = FlowGraph::build(proc);
    let mut points = Vec::new();
    let mut blocks = Vec::new();
    for b in &graph.blocks {
        let start = points.len();
        let enclosing: Vec<StmtId> = b
            .enclosing
            .iter()
            .map(|e| match e {
                Enclosing::IfThen(s)
                | Enclosing::IfElse(s)
                | Enclosing::LoopBody(s)
                | Enclosing::LoopControl(s)
                | Enclosing::SwitchCase(s, _) => *s,
            })
            .collect();
        let mut enclosing_dedup: Vec<StmtId> = Vec::new();
        for s in enclosing {
            if enclosing_dedup.last() != Some(&s) {
                enclosing_dedup.push(s);
            }
        }
        let step_block = matches!(b.enclosing.last(), Some(Enclosing::LoopControl(_)));
        for s in &b.stmts {
            points.push(Point {
                kind: PointKind::Stmt(s),
                block: blocks.len() as u32,
                effect: Effect::default(),
                enclosing: enclosing_dedup.clone(),
                deriv: DerivInfo::default(),
                loop_step: step_block,
            });
        }
        match b.branch {
            Some(Branch::If(s)) | Some(Branch::LoopTest(s)) | Some(Branch::Switch(s)) => {
                let mut enc = enclosing_dedup.clone();
                if matches!(b.branch, Some(Branch::LoopTest(_))) {
                    // The loop test is part of the loop (its control).
                    if enc.last() != Some(&s.id) {
                        enc.push(s.id);
                    }
                    enc.pop();
                }
                points.push(Point {
                    kind: PointKind::Test(s),
                    block: blocks.len() as u32,
                    effect: Effect::default(),
                    enclosing: enc,
                    deriv: DerivInfo::default(),
                    loop_step: false,
                });
            }
            Some(Branch::Return(s)) => points.push(Point {
                kind: PointKind::Return(s),
                block: blocks.len() as u32,
                effect: Effect::default(),
                enclosing: enclosing_dedup.clone(),
                deriv: DerivInfo::default(),
                loop_step: false,
            }),
            None => {}
        }
        blocks.push(start..points.len());
    }
    let succs: Vec<Vec<u32>> = graph
        .blocks
        .iter()
        .map(|b| b.succs.iter().map(|s| s.0).collect())
        .collect();
    let preds: Vec<Vec<u32>> = graph
        .blocks
        .iter()
        .map(|b| b.preds.iter().map(|s| s.0).collect())
        .collect();

    // Pass 1: the pointer program.
    let mut pb = PtrBuilder {
        program,
        locs: &mut *locs,
        proc: pid,
        facts: PointerFacts::default(),
        vals: HashMap::default(),
        paths: Vec::new(),
        path_ids: HashMap::default(),
        call_vals: HashMap::default(),
        node: 0,
        summaries,
    };
    let mut block_entry = Vec::new();
    let mut block_exit = Vec::new();
    let mut point_node = vec![0; points.len()];
    for range in &blocks {
        let entry = pb.new_node();
        block_entry.push(entry);
        pb.node = entry;
        for i in range.clone() {
            pb.point(&points[i], &mut point_node[i]);
        }
        block_exit.push(pb.node);
    }
    for (b, ss) in succs.iter().enumerate() {
        for &s in ss {
            pb.facts.flow.push((block_exit[b], block_entry[s as usize]));
        }
    }
    // Pointers stored in the procedure are propagated through its graph;
    // the others keep their entry destinations (all of them when something
    // is stored through a pointer, which may reach any pointer zone).
    let stored: HashSet<Zone> = pb.facts.store_direct.iter().map(|&(_, z, _)| z).collect();
    let through = !pb.facts.store_through.is_empty();
    for (z, target) in pb.locs.entry_pointers(pid) {
        let mut places = vec![pb.locs.intern((target, Vec::new()))];
        // `ptr/global-init`: a global pointer may still hold the address
        // it was initialised with.
        if let Some(init) = pb.locs.initial_target(z).cloned() {
            places.push(pb.locs.intern(init));
        }
        for place in places {
            if through || stored.contains(&z) {
                pb.facts.entry.push((block_entry[0], z, place));
            } else {
                pb.facts.constant.push((z, place));
            }
        }
    }
    let (place_zone, place_extend) = pb.place_tables();
    let solution = pointers::solve(&pb.facts, &place_zone, &place_extend);
    let PtrBuilder {
        vals, call_vals, ..
    } = pb;

    // Pass 2: effects.
    let pts_before: Vec<Vec<(Zone, Place)>> = point_node
        .iter()
        .map(|&n| solution.pts_in[n as usize].clone())
        .collect();
    let mut eb = EffectBuilder {
        program,
        locs: &mut *locs,
        proc: pid,
        vals: &vals,
        solution: &solution,
        cache: HashMap::default(),
        memo: HashMap::default(),
    };
    let mut calls = HashMap::default();
    let mut zones = BTreeSet::new();
    for (i, p) in points.iter_mut().enumerate() {
        let (effect, call) = eb.effect(p.kind, &call_vals, summaries);
        p.deriv = eb.deriv_info(p.kind);
        if let Some(c) = call {
            calls.insert(i, c);
        }
        p.effect = effect;
    }
    // What each `free` releases (`adjoint/free-later` asks who allocated it).
    let foreign = |locs: &Locs, pl: Place| locs.allocator(pl).is_some_and(|a| a != pid);
    let mut freed = HashMap::default();
    let mut frees_foreign = HashSet::default();
    for p in &points {
        if let StmtKind::Free { ptr } = &p.kind.stmt().kind {
            let places = eb.val_places(ptr);
            if places.iter().any(|&pl| foreign(eb.locs, pl)) {
                frees_foreign.insert(p.kind.stmt().id);
            }
            freed.insert(p.kind.stmt().id, places);
        }
    }
    // Calls of a procedure that may free memory another procedure
    // allocated, reached through the pointers the call reads
    // (`adjoint/call-free-later` hands that memory to the runtime).
    let mut calls_freeing_foreign = HashSet::default();
    for (i, p) in points.iter().enumerate() {
        let PointKind::Stmt(st) = p.kind else {
            continue;
        };
        let StmtKind::Call { callee, .. } = &st.kind else {
            continue;
        };
        if !crate::transform::names::may_free(program, *callee, &mut Vec::new()) {
            continue;
        }
        let reads = &p.effect.reads;
        if solution.pts_in[point_node[i] as usize]
            .iter()
            .any(|&(z, pl)| reads.binary_search(&z).is_ok() && foreign(eb.locs, pl))
        {
            calls_freeing_foreign.insert(st.id);
        }
    }
    add_control_dependence(program, eb.locs, pid, &mut points);
    for p in &points {
        zones.extend(p.effect.reads.iter().copied());
        zones.extend(p.effect.writes.iter().copied());
    }
    let exit_pts = solution.pts_in[block_entry[1] as usize].clone();
    let ref_zones = std::mem::take(&mut eb.cache);
    let mut point_of = HashMap::default();
    for (i, p) in points.iter().enumerate() {
        point_of.entry(p.kind.stmt().id).or_insert(i);
    }
    let (solve_edges, kept_succs) = bypass_empty_blocks(&blocks, &succs);
    ProcFacts {
        proc: pid,
        points,
        blocks,
        succs,
        preds,
        calls,
        pts_before,
        exit_pts,
        zones,
        ref_zones,
        point_of,
        freed,
        frees_foreign,
        calls_freeing_foreign,
        solve_edges,
        kept_succs,
    }
}

/// `dep/summary`: a test writes its control's outcome zone from what it
/// reads; every write the control encloses depends on that outcome, and
/// when the control holds a `break`, `continue` or `return`, every write of
/// the procedure does (the jump decides what runs afterwards).
fn add_control_dependence(program: &Program, locs: &Locs, pid: ProcId, points: &mut [Point<'_>]) {
    let jumps = super::jump_controls(program, pid);
    let mut everywhere = Vec::new();
    for p in points.iter_mut() {
        if let PointKind::Test(s) = p.kind
            && let Some(c) = locs.of_control(pid, s.id)
        {
            let reads = p.effect.reads.clone();
            p.effect.writes.push(c);
            p.effect.kills.push(c);
            p.effect.writes.sort_unstable();
            p.effect.kills.sort_unstable();
            for u in reads {
                p.effect.dep.push((u, c));
            }
            p.effect.dep.sort_unstable();
            if jumps.contains(&s.id) {
                everywhere.push(c);
            }
        }
    }
    for p in points.iter_mut() {
        let mut controls: Vec<Zone> = p
            .enclosing
            .iter()
            .filter_map(|&c| locs.of_control(pid, c))
            .collect();
        controls.extend(everywhere.iter().copied());
        controls.sort_unstable();
        controls.dedup();
        let writes = p.effect.writes.clone();
        for w in writes {
            if controls.contains(&w) {
                continue;
            }
            for &c in &controls {
                p.effect.dep.push((c, w));
            }
        }
        p.effect.dep.sort_unstable();
        p.effect.dep.dedup();
    }
}

/// The zones and narrowed places of (place, path) pairs.
type PlaceTables = (Vec<(Place, PathId, Zone)>, Vec<(Place, PathId, Place)>);

/// A reference resolved to where it starts and the field path below.
#[derive(Clone, Debug)]
enum RefBase {
    /// A variable or result object, directly.
    Direct(super::locs::Obj),
    /// Through a pointer value.
    Through(Val),
}

struct PtrBuilder<'p, 'l> {
    program: &'p Program,
    locs: &'l mut Locs,
    proc: ProcId,
    facts: PointerFacts,
    vals: HashMap<usize, Val>,
    paths: Vec<Vec<usize>>,
    path_ids: HashMap<Vec<usize>, PathId>,
    /// (call statement, callee interface pointer zone) → the value the
    /// pointer had at the call, in caller terms.
    call_vals: HashMap<(StmtId, Zone), Val>,
    node: Node,
    summaries: &'p HashMap<ProcId, Summary>,
}

pub fn key(e: &Expr) -> usize {
    e as *const Expr as usize
}

fn is_pointer_like(program: &Program, e: &Expr) -> bool {
    matches!(
        program.resolve(&e.ty.ty),
        Type::Pointer(_) | Type::Array { .. }
    )
}

impl PtrBuilder<'_, '_> {
    fn new_node(&mut self) -> Node {
        self.facts.nodes += 1;
        self.facts.nodes - 1
    }

    fn new_val(&mut self) -> Val {
        let v = self.facts.vals;
        self.facts.vals += 1;
        self.facts.val_at.push((v, self.node));
        v
    }

    fn path_id(&mut self, path: &[usize]) -> PathId {
        if let Some(&p) = self.path_ids.get(path) {
            return p;
        }
        let id = self.paths.len() as PathId;
        self.paths.push(path.to_vec());
        self.path_ids.insert(path.to_vec(), id);
        id
    }

    /// Starts a node for a point that stores pointers; returns it. The
    /// point's expressions are evaluated at it; what follows sees its
    /// output through a fresh node.
    fn store_node(&mut self) -> (Node, Node) {
        let n = self.new_node();
        self.facts.flow.push((self.node, n));
        self.node = n;
        let after = self.new_node();
        self.facts.flow.push((n, after));
        (n, after)
    }

    fn point(&mut self, p: &Point<'_>, point_node: &mut Node) {
        let s = p.kind.stmt();
        *point_node = self.node;
        match p.kind {
            PointKind::Test(s) => {
                match &s.kind {
                    StmtKind::If { cond, .. } => self.expr(cond),
                    StmtKind::Switch { selector, .. } => self.expr(selector),
                    StmtKind::Loop { header, .. } => match header {
                        LoopHeader::For { cond: Some(c), .. }
                        | LoopHeader::While { cond: c }
                        | LoopHeader::DoWhile { cond: c } => self.expr(c),
                        LoopHeader::For { cond: None, .. } => {}
                    },
                    _ => {}
                }
                return;
            }
            PointKind::Return(_) => {
                if let StmtKind::Return(Some(e)) = &s.kind {
                    let stores = is_pointer_like(self.program, e);
                    if stores {
                        let (n, after) = self.store_node();
                        *point_node = n;
                        let v = self.pval(e);
                        if let Some(r) = self.locs.of_result(self.proc) {
                            for z in self.locs.object_zones(r).collect::<Vec<_>>() {
                                self.facts.store_direct.push((n, z, v));
                                self.facts.strong.push((n, z));
                            }
                        }
                        self.node = after;
                    } else {
                        self.expr(e);
                    }
                }
                return;
            }
            PointKind::Stmt(_) => {}
        }
        match &s.kind {
            StmtKind::Assign { lhs, rhs, .. } => {
                if self.holds_pointers(lhs) {
                    let (n, after) = self.store_node();
                    *point_node = n;
                    self.store(lhs, rhs, n);
                    self.node = after;
                } else {
                    self.lref(lhs);
                    self.expr(rhs);
                }
            }
            StmtKind::Decl { vars, .. } => {
                let any_ptr = vars.iter().any(|d| {
                    d.init.is_some()
                        && self
                            .locs
                            .object_zones(self.locs.of_sym(d.sym))
                            .any(|z| self.locs.zone(z).pointer)
                });
                let (n, after) = if any_ptr {
                    let (n, a) = self.store_node();
                    *point_node = n;
                    (Some(n), Some(a))
                } else {
                    (None, None)
                };
                for d in vars {
                    match &d.init {
                        Some(Init::Expr(e)) => {
                            let obj = self.locs.of_sym(d.sym);
                            if let Some(n) = n
                                && is_pointer_like(self.program, e)
                            {
                                let v = self.pval(e);
                                for z in self.locs.object_zones(obj).collect::<Vec<_>>() {
                                    if self.locs.zone(z).pointer {
                                        self.facts.store_direct.push((n, z, v));
                                        if !self.locs.zone(z).atom {
                                            self.facts.strong.push((n, z));
                                        }
                                    }
                                }
                            } else if let Some(n) = n
                                && self.holds_struct_pointers(e)
                            {
                                self.struct_copy(RefBase::Direct(obj), &[], e, n);
                            } else {
                                self.expr(e);
                            }
                        }
                        Some(Init::List(items, _)) => {
                            let obj = self.locs.of_sym(d.sym);
                            self.init_list(obj, items, n);
                        }
                        None => {}
                    }
                }
                if let Some(a) = after {
                    self.node = a;
                }
            }
            StmtKind::Alloc { target, count, .. } => {
                let (n, after) = self.store_node();
                *point_node = n;
                self.expr(count);
                let heap = self.locs.of_heap(self.proc, s.id);
                let v = self.new_val();
                if let Some(h) = heap {
                    let place = self.locs.intern((h, Vec::new()));
                    self.facts.val_static.push((v, place));
                }
                self.store_value(target, v, n);
                self.node = after;
            }
            StmtKind::Free { ptr } => self.expr(ptr),
            StmtKind::Call {
                result,
                callee,
                args,
                ..
            } => self.call(s, result.as_ref(), *callee, args, point_node),
            StmtKind::Discard(e) => self.expr(e),
            _ => {}
        }
    }

    fn init_list(&mut self, obj: super::locs::Obj, items: &[Init], n: Option<Node>) {
        for item in items {
            match item {
                Init::Expr(e) => {
                    if let Some(n) = n
                        && is_pointer_like(self.program, e)
                    {
                        // A pointer in an initializer list: weak store into
                        // every pointer zone of the variable.
                        let v = self.pval(e);
                        for z in self.locs.object_zones(obj).collect::<Vec<_>>() {
                            if self.locs.zone(z).pointer {
                                self.facts.store_direct.push((n, z, v));
                            }
                        }
                    } else {
                        self.expr(e);
                    }
                }
                Init::List(inner, _) => self.init_list(obj, inner, n),
            }
        }
    }

    /// Does assigning to this reference store a pointer (a pointer, or a
    /// struct with pointer fields)?
    fn holds_pointers(&self, lhs: &Expr) -> bool {
        is_pointer_like(self.program, lhs) || self.holds_struct_pointers(lhs)
    }

    fn holds_struct_pointers(&self, e: &Expr) -> bool {
        matches!(self.program.resolve(&e.ty.ty), Type::Struct(_))
            && struct_has_pointer(self.program, &e.ty.ty, 0)
    }

    fn store(&mut self, lhs: &Expr, rhs: &Expr, n: Node) {
        if is_pointer_like(self.program, lhs) {
            let v = self.pval(rhs);
            self.store_value(lhs, v, n);
        } else {
            // `eff/struct-copy`: a struct with pointer fields.
            let (base, path) = self.lref(lhs);
            self.struct_copy(base, &path, rhs, n);
        }
    }

    /// Stores the pointer fields of struct value `rhs` into the reference
    /// `(base, path)`.
    fn struct_copy(&mut self, base: RefBase, path: &[usize], rhs: &Expr, n: Node) {
        let mut sources = Vec::new();
        if !self.struct_sources(rhs, &mut sources) {
            self.expr(rhs);
            return;
        }
        let mut leaves = Vec::new();
        pointer_leaves(self.program, &rhs.ty.ty, &mut Vec::new(), &mut leaves, 0);
        for leaf in leaves {
            let v = self.new_val();
            for (src_base, src_path) in &sources {
                let mut sp = src_path.clone();
                sp.extend_from_slice(&leaf);
                self.load_into(v, src_base, &sp);
            }
            let mut dp = path.to_vec();
            dp.extend_from_slice(&leaf);
            self.store_at(&base, &dp, v, n, true);
        }
    }

    /// The references a struct value is copied from: the value itself, or
    /// each branch of a conditional (`flag ? a : b`, whose test is read).
    /// False for another form (a call's result is a temporary already).
    fn struct_sources(&mut self, rhs: &Expr, out: &mut Vec<(RefBase, Vec<usize>)>) -> bool {
        match &rhs.kind {
            ExprKind::Var(_)
            | ExprKind::Index { .. }
            | ExprKind::Field { .. }
            | ExprKind::Deref(_) => {
                out.push(self.lref(rhs));
                true
            }
            ExprKind::Cond { cond, then, other } => {
                self.expr(cond);
                self.struct_sources(then, out) && self.struct_sources(other, out)
            }
            _ => false,
        }
    }

    /// `v` loads the pointer zones of reference `(base, path)`.
    fn load_into(&mut self, v: Val, base: &RefBase, path: &[usize]) {
        match base {
            RefBase::Direct(obj) => {
                let place = self.locs.intern((*obj, Vec::new()));
                let place = self.locs.extend(place, path);
                for z in self.locs.place_zones(place) {
                    if self.locs.zone(z).pointer {
                        self.facts.val_load.push((v, z));
                    }
                }
            }
            RefBase::Through(w) => {
                let pid = self.path_id(path);
                self.facts.val_load_through.push((v, *w, pid));
            }
        }
    }

    fn store_value(&mut self, lhs: &Expr, v: Val, n: Node) {
        let (base, path) = self.lref(lhs);
        let whole = !matches!(lhs.kind, ExprKind::Index { .. });
        self.store_at(&base, &path, v, n, whole);
    }

    /// `ptr/strong`, `ptr/weak`
    fn store_at(&mut self, base: &RefBase, path: &[usize], v: Val, n: Node, whole: bool) {
        match base {
            RefBase::Direct(obj) => {
                let place = self.locs.intern((*obj, Vec::new()));
                let place = self.locs.extend(place, path);
                let zs = self.locs.place_zones(place);
                let single = zs.len() == 1;
                for z in zs {
                    if !self.locs.zone(z).pointer {
                        continue;
                    }
                    self.facts.store_direct.push((n, z, v));
                    if single && whole && !self.locs.zone(z).atom {
                        self.facts.strong.push((n, z));
                    }
                }
            }
            RefBase::Through(a) => {
                let pid = self.path_id(path);
                self.facts.store_through.push((n, *a, pid, v));
            }
        }
    }

    /// Registers the pointer values inside an rvalue.
    fn expr(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Var(_)
            | ExprKind::Index { .. }
            | ExprKind::Field { .. }
            | ExprKind::Deref(_) => {
                self.lref(e);
                if is_pointer_like(self.program, e) {
                    self.pval(e);
                }
            }
            ExprKind::AddrOf(_) => {
                self.pval(e);
            }
            ExprKind::Unary { arg, .. } | ExprKind::Cast { arg, .. } => {
                if is_pointer_like(self.program, e) {
                    self.pval(e);
                } else {
                    self.expr(arg)
                }
            }
            ExprKind::SizeOfExpr(_) => {}
            ExprKind::Binary { lhs, rhs, .. } => {
                if is_pointer_like(self.program, e) {
                    self.pval(e);
                } else {
                    self.expr(lhs);
                    self.expr(rhs);
                }
            }
            ExprKind::Intrinsic { args, .. } => args.iter().for_each(|a| self.expr(a)),
            ExprKind::Cond { cond, then, other } => {
                if is_pointer_like(self.program, e) {
                    self.pval(e);
                } else {
                    self.expr(cond);
                    self.expr(then);
                    self.expr(other);
                }
            }
            _ => {}
        }
    }

    /// The value of a pointer-valued (or array-valued, decaying) expression.
    fn pval(&mut self, e: &Expr) -> Val {
        if let Some(&v) = self.vals.get(&key(e)) {
            return v;
        }
        let v = self.new_val();
        self.vals.insert(key(e), v);
        let array_typed = matches!(self.program.resolve(&e.ty.ty), Type::Array { .. });
        match &e.kind {
            // An array decays to the address of its first element.
            ExprKind::Var(_)
            | ExprKind::Index { .. }
            | ExprKind::Field { .. }
            | ExprKind::Deref(_)
                if array_typed =>
            {
                let (base, path) = self.lref(e);
                self.address_into(v, &base, &path);
            }
            // `ptr/load`
            ExprKind::Var(_)
            | ExprKind::Index { .. }
            | ExprKind::Field { .. }
            | ExprKind::Deref(_) => {
                let (base, path) = self.lref(e);
                self.load_into(v, &base, &path);
            }
            // `ptr/address`
            ExprKind::AddrOf(r) => {
                let (base, path) = self.lref(r);
                self.address_into(v, &base, &path);
            }
            // `ptr/copy`
            ExprKind::Cast { arg, .. } | ExprKind::Unary { arg, .. } => {
                if is_pointer_like(self.program, arg) {
                    let w = self.pval(arg);
                    self.facts.val_copy.push((v, w));
                } else {
                    self.expr(arg);
                    if is_null(arg) {
                        self.facts.val_static.push((v, NULL_PLACE));
                    }
                }
            }
            ExprKind::Binary { lhs, rhs, op } => {
                for side in [lhs, rhs] {
                    if is_pointer_like(self.program, side) && matches!(op, BinOp::Add | BinOp::Sub)
                    {
                        let w = self.pval(side);
                        self.facts.val_copy.push((v, w));
                    } else {
                        self.expr(side);
                    }
                }
            }
            ExprKind::Cond { cond, then, other } => {
                self.expr(cond);
                for side in [then, other] {
                    if is_pointer_like(self.program, side) {
                        let w = self.pval(side);
                        self.facts.val_copy.push((v, w));
                    } else if is_null(side) {
                        self.facts.val_static.push((v, NULL_PLACE));
                    }
                }
            }
            // `ptr/null`
            ExprKind::IntConst { .. } => self.facts.val_static.push((v, NULL_PLACE)),
            _ => {}
        }
        v
    }

    /// `v` is the address of reference `(base, path)`.
    fn address_into(&mut self, v: Val, base: &RefBase, path: &[usize]) {
        match base {
            RefBase::Direct(obj) => {
                let place = self.locs.intern((*obj, Vec::new()));
                let place = self.locs.extend(place, path);
                self.facts.val_static.push((v, place));
            }
            RefBase::Through(w) => {
                let pid = self.path_id(path);
                self.facts.val_extend.push((v, *w, pid));
            }
        }
    }

    /// Resolves a reference to its base and field path, registering the
    /// values of the pointers it goes through and of its indices.
    fn lref(&mut self, e: &Expr) -> (RefBase, Vec<usize>) {
        match &e.kind {
            ExprKind::Var(s) => (RefBase::Direct(self.locs.of_sym(*s)), Vec::new()),
            ExprKind::Index { base, index } => {
                self.expr(index);
                if matches!(self.program.resolve(&base.ty.ty), Type::Array { .. }) {
                    self.lref(base)
                } else {
                    let v = self.pval(base);
                    (RefBase::Through(v), Vec::new())
                }
            }
            ExprKind::Field { base, field, .. } => {
                let (b, mut p) = self.lref(base);
                p.push(*field);
                (b, p)
            }
            ExprKind::Deref(inner) => {
                let v = self.pval(inner);
                (RefBase::Through(v), Vec::new())
            }
            ExprKind::Cast { arg, .. } => self.lref(arg),
            _ => {
                // Not a reference (a struct-valued call result is a temp).
                self.expr(e);
                let v = self.new_val();
                (RefBase::Through(v), Vec::new())
            }
        }
    }

    fn call(
        &mut self,
        s: &Stmt,
        result: Option<&Expr>,
        callee: ProcId,
        args: &[Expr],
        point_node: &mut Node,
    ) {
        // Arguments are evaluated before the call.
        for a in args {
            self.expr(a);
        }
        if let Some(r) = result {
            self.lref(r);
        }
        let summary = self.summaries.get(&callee);
        // `call/map-target`: the value each callee interface pointer had at
        // the call, in caller terms.
        let entry = self.locs.entry_pointers(callee);
        for (zp, _) in &entry {
            self.call_value(s.id, callee, *zp, args);
        }
        let result_ptr = result.is_some_and(|r| self.holds_pointers(r));
        let writes_ptr = summary.is_some_and(|sm| {
            sm.ptr_exit.iter().any(|(z, _)| {
                !matches!(
                    self.locs.object(self.locs.zone(*z).obj).kind,
                    ObjKind::Result(_)
                )
            })
        });
        // `eff/library-call`: a library function has no summary; pointers it
        // receives the address of keep their destinations.
        if !(result_ptr || writes_ptr) {
            return;
        }
        let (n, after) = self.store_node();
        *point_node = n;
        // The arguments' values were taken before the call (at the node
        // before this one); the callee's exit destinations are stored here.
        if let Some(sm) = summary {
            for (z, place) in sm.ptr_exit.clone() {
                let v = self.map_place(s.id, callee, place, args);
                let Some(v) = v else { continue };
                let owner = self.locs.object(self.locs.zone(z).obj).kind.clone();
                match owner {
                    ObjKind::Result(_) => {
                        if let Some(r) = result {
                            let (base, path) = self.lref(r);
                            let zs = self.locs.zone(z).path.clone();
                            let mut p = path.clone();
                            p.extend_from_slice(&zs);
                            self.store_at(&base, &p, v, n, true);
                        }
                    }
                    ObjKind::Target { pointer, .. } => {
                        // A pointer inside a target (the callee's or a
                        // global pointer's): store through the caller's
                        // value of the target's pointer.
                        let w = self.call_value(s.id, callee, pointer, args);
                        let zpath = self.locs.zone(z).path.clone();
                        let pid = self.path_id(&zpath);
                        self.facts.store_through.push((n, w, pid, v));
                    }
                    _ => {
                        // A global pointer: weak (the callee may not write it
                        // on every path).
                        self.facts.store_direct.push((n, z, v));
                        if sm.kills.contains(&z) && !self.locs.zone(z).atom {
                            self.facts.strong.push((n, z));
                        }
                    }
                }
            }
        }
        self.node = after;
    }

    /// The caller's value of callee interface pointer zone `zp` at call `s`.
    fn call_value(&mut self, s: StmtId, callee: ProcId, zp: Zone, args: &[Expr]) -> Val {
        if let Some(&v) = self.call_vals.get(&(s, zp)) {
            return v;
        }
        let info = self.locs.zone(zp).clone();
        let obj = self.locs.object(info.obj).clone();
        let v = match obj.kind {
            ObjKind::Var(sym) => {
                let cproc = self.program.proc(callee);
                match cproc.params.iter().position(|p| *p == sym) {
                    Some(i) if i < args.len() => {
                        let arg = &args[i];
                        if info.path.is_empty() {
                            self.pval(arg)
                        } else {
                            // A pointer field of a struct passed by value.
                            let v = self.new_val();
                            let (base, path) = self.lref(arg);
                            let mut p = path;
                            p.extend_from_slice(&info.path);
                            self.load_into(v, &base, &p);
                            v
                        }
                    }
                    Some(_) => self.new_val(),
                    None => {
                        // A global pointer: its value at the call.
                        let v = self.new_val();
                        self.facts.val_load.push((v, zp));
                        v
                    }
                }
            }
            // A callee's target, or a global pointer's (`loc/target`: what
            // the global held when the callee was entered, which is what
            // it holds at the call).
            ObjKind::Target { pointer, .. } => {
                let w = self.call_value(s, callee, pointer, args);
                let v = self.new_val();
                let pid = self.path_id(&info.path);
                self.facts.val_load_through.push((v, w, pid));
                v
            }
            _ => {
                let v = self.new_val();
                self.facts.val_load.push((v, zp));
                v
            }
        };
        self.call_vals.insert((s, zp), v);
        v
    }

    /// A callee place as a caller value (`call/map-target`); `None` for a
    /// callee local (an address that must not escape).
    fn map_place(&mut self, s: StmtId, callee: ProcId, place: Place, args: &[Expr]) -> Option<Val> {
        let v = self.new_val();
        let Some((obj, path)) = self.locs.place(place) else {
            self.facts.val_static.push((v, NULL_PLACE));
            return Some(v);
        };
        let path = path.to_vec();
        let o = self.locs.object(obj).clone();
        match o.kind {
            ObjKind::Target { proc, pointer } if proc.is_none_or(|p| p == callee) => {
                let w = self.call_value(s, callee, pointer, args);
                let pid = self.path_id(&path);
                self.facts.val_extend.push((v, w, pid));
            }
            _ if o.owner.is_none() => self.facts.val_static.push((v, place)),
            _ => return None,
        }
        Some(v)
    }

    /// Every (place, path) pair the solution may need: zones and narrowed
    /// places, for the places this procedure's values can hold (the static
    /// ones and the entry targets, closed under narrowing).
    fn place_tables(&mut self) -> PlaceTables {
        let mut zone_rows = Vec::new();
        let mut extend_rows = Vec::new();
        let mut todo: Vec<Place> = self
            .facts
            .val_static
            .iter()
            .map(|&(_, p)| p)
            .chain(self.facts.entry.iter().map(|&(_, _, p)| p))
            .chain(self.facts.constant.iter().map(|&(_, p)| p))
            .collect();
        // Places reachable through loads: what pointer zones inside the
        // known places may hold at entry (their targets).
        let mut seen = HashSet::default();
        let paths = self.paths.clone();
        while let Some(p) = todo.pop() {
            if !seen.insert(p) {
                continue;
            }
            for (pid, path) in paths.iter().enumerate() {
                let q = self.locs.extend(p, path);
                extend_rows.push((p, pid as PathId, q));
                todo.push(q);
                for z in self.locs.place_zones(q) {
                    zone_rows.push((p, pid as PathId, z));
                }
            }
            for z in self.locs.place_zones(p) {
                if self.locs.zone(z).pointer
                    && let Some(t) = self.locs.target(self.proc, z)
                {
                    todo.push(self.locs.intern((t, Vec::new())));
                }
            }
        }
        (zone_rows, extend_rows)
    }
}

fn is_null(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::IntConst { value: 0, .. } => true,
        ExprKind::Cast { arg, .. } => is_null(arg),
        _ => false,
    }
}

/// Does a type hold a pointer, in a field or an element?
pub(crate) fn struct_has_pointer(program: &Program, ty: &Type, depth: usize) -> bool {
    if depth > 16 {
        return false;
    }
    match program.resolve(ty) {
        Type::Pointer(_) => true,
        Type::Array { elem, .. } => struct_has_pointer(program, &elem.ty, depth + 1),
        Type::Struct(s) => program
            .strukt(*s)
            .fields
            .iter()
            .any(|f| struct_has_pointer(program, &f.ty.ty, depth + 1)),
        _ => false,
    }
}

/// Field paths of the pointer leaves of a struct type.
fn pointer_leaves(
    program: &Program,
    ty: &Type,
    path: &mut Vec<usize>,
    out: &mut Vec<Vec<usize>>,
    depth: usize,
) {
    if depth > 16 {
        return;
    }
    match program.resolve(ty) {
        Type::Pointer(_) => out.push(path.clone()),
        Type::Array { elem, .. } => pointer_leaves(program, &elem.ty, path, out, depth + 1),
        Type::Struct(s) => {
            for (i, f) in program.strukt(*s).fields.iter().enumerate() {
                path.push(i);
                pointer_leaves(program, &f.ty.ty, path, out, depth + 1);
                path.pop();
            }
        }
        _ => {}
    }
}

// ---------------------------------------------------------------------------
// Pass 2: effects
// ---------------------------------------------------------------------------

struct EffectBuilder<'p, 'l> {
    program: &'p Program,
    locs: &'l mut Locs,
    proc: ProcId,
    vals: &'l HashMap<usize, Val>,
    solution: &'l PointerSolution,
    cache: HashMap<usize, Vec<Zone>>,
    /// Resolved references (`ref_zones`), by address.
    memo: HashMap<usize, RefZones>,
}

/// The zones a reference designates, what computing its address reads,
/// and whether writing it certainly overwrites all of it.
#[derive(Clone, Default, Debug)]
pub(crate) struct RefZones {
    pub zones: Vec<Zone>,
    pub address_reads: Vec<Zone>,
    pub must: bool,
}

impl EffectBuilder<'_, '_> {
    fn val_places(&self, e: &Expr) -> Vec<Place> {
        self.vals
            .get(&key(e))
            .map(|v| self.solution.val_places[*v as usize].clone())
            .unwrap_or_default()
    }

    /// `ptr/resolve`
    fn ref_zones(&mut self, e: &Expr) -> RefZones {
        // The same reference is resolved for its reads, its differentiable
        // reads and its partials. Not a variable: cheap, and the only kind
        // a declaration makes as a temporary, whose address a later one
        // may reuse.
        let memo = !matches!(e.kind, ExprKind::Var(_));
        if memo && let Some(r) = self.memo.get(&key(e)) {
            return r.clone();
        }
        let r = self.resolve_ref(e);
        if memo {
            self.memo.insert(key(e), r.clone());
        }
        r
    }

    fn resolve_ref(&mut self, e: &Expr) -> RefZones {
        let mut r = RefZones::default();
        let (places, path, must) = self.ref_places(e, &mut r.address_reads);
        let mut zones = Vec::new();
        for p in &places {
            let q = self.locs.extend(*p, &path);
            zones.extend(self.locs.place_zones(q));
        }
        zones.sort_unstable();
        zones.dedup();
        // `eff/kill`: one non-atom destination, written whole.
        r.must = must
            && places.len() == 1
            && !zones.is_empty()
            && zones.iter().all(|z| !self.locs.zone(*z).atom);
        self.cache.insert(key(e), zones.clone());
        r.zones = zones;
        r
    }

    /// The places a reference starts from, the field path below, and
    /// whether it designates its places whole (no array indexing).
    fn ref_places(&mut self, e: &Expr, reads: &mut Vec<Zone>) -> (Vec<Place>, Vec<usize>, bool) {
        match &e.kind {
            ExprKind::Var(s) => {
                let o = self.locs.of_sym(*s);
                (vec![self.locs.intern((o, Vec::new()))], Vec::new(), true)
            }
            ExprKind::Index { base, index } => {
                self.reads(index, reads);
                if matches!(self.program.resolve(&base.ty.ty), Type::Array { .. }) {
                    let (p, path, _) = self.ref_places(base, reads);
                    (p, path, false)
                } else {
                    self.reads(base, reads);
                    (self.val_places(base), Vec::new(), false)
                }
            }
            ExprKind::Field { base, field, .. } => {
                let (p, mut path, must) = self.ref_places(base, reads);
                path.push(*field);
                (p, path, must)
            }
            ExprKind::Deref(inner) => {
                self.reads(inner, reads);
                (self.val_places(inner), Vec::new(), true)
            }
            ExprKind::Cast { arg, .. } => self.ref_places(arg, reads),
            _ => {
                self.reads(e, reads);
                (Vec::new(), Vec::new(), false)
            }
        }
    }

    /// `eff/read`: the zones evaluating `e` reads.
    fn reads(&mut self, e: &Expr, out: &mut Vec<Zone>) {
        match &e.kind {
            ExprKind::Var(_)
            | ExprKind::Index { .. }
            | ExprKind::Field { .. }
            | ExprKind::Deref(_) => {
                let r = self.ref_zones(e);
                out.extend(r.address_reads);
                // An array-valued reference decays to an address: its
                // contents are not read.
                if !matches!(self.program.resolve(&e.ty.ty), Type::Array { .. }) {
                    out.extend(r.zones);
                }
            }
            ExprKind::AddrOf(r) => {
                let rz = self.ref_zones(r);
                out.extend(rz.address_reads);
            }
            ExprKind::Unary { arg, .. } | ExprKind::Cast { arg, .. } => self.reads(arg, out),
            ExprKind::Binary { lhs, rhs, .. } => {
                self.reads(lhs, out);
                self.reads(rhs, out);
            }
            ExprKind::Intrinsic { args, .. } => args.iter().for_each(|a| self.reads(a, out)),
            ExprKind::Cond { cond, then, other } => {
                self.reads(cond, out);
                self.reads(then, out);
                self.reads(other, out);
            }
            _ => {}
        }
    }

    /// `eff/diff-dep`, `eff/nondiff`: the zones read at differentiable positions.
    fn diff_reads(&mut self, e: &Expr, out: &mut Vec<Zone>) {
        let program = self.program;
        for_each_diff_ref(program, e, &mut |r| {
            let zones = self.ref_zones(r).zones;
            out.extend(zones.into_iter().filter(|z| self.locs.zone(*z).real));
        });
    }

    fn is_struct(&self, e: &Expr) -> bool {
        matches!(self.program.resolve(&e.ty.ty), Type::Struct(_))
    }

    /// The effect of assigning `rhs` (already evaluated into `reads` and
    /// `dreads`) to the reference `lhs`.
    fn assign_into(&mut self, lhs: &Expr, rhs: Option<&Expr>, eff: &mut EffectAcc) {
        let target = self.ref_zones(lhs);
        eff.reads.extend(target.address_reads.iter().copied());
        let mut reads = target.address_reads.clone();
        let mut dreads = Vec::new();
        if let Some(r) = rhs {
            self.reads(r, &mut reads);
            self.diff_reads(r, &mut dreads);
        }
        eff.reads.extend(reads.iter().copied());
        let struct_copy = self.is_struct(lhs)
            && rhs.is_some_and(|r| {
                self.is_struct(r)
                    && matches!(
                        r.kind,
                        ExprKind::Var(_)
                            | ExprKind::Index { .. }
                            | ExprKind::Field { .. }
                            | ExprKind::Deref(_)
                    )
            });
        if struct_copy {
            // `eff/struct-copy`: field to field.
            let src = self.ref_zones(rhs.unwrap());
            for &w in &target.zones {
                let wpath = self.locs.zone(w).path.clone();
                let matching: Vec<Zone> = src
                    .zones
                    .iter()
                    .copied()
                    .filter(|&u| same_leaf(&self.locs.zone(u).path, &wpath))
                    .collect();
                let matching = if matching.is_empty() {
                    src.zones.clone()
                } else {
                    matching
                };
                eff.write(w, target.must, self.locs.zone(w).real);
                for &u in src.address_reads.iter().chain(target.address_reads.iter()) {
                    eff.dep.push((u, w));
                }
                for &u in &matching {
                    eff.dep.push((u, w));
                    if self.locs.zone(w).real && self.locs.zone(u).real {
                        eff.diff_dep.push((u, w));
                    }
                }
            }
            return;
        }
        for &w in &target.zones {
            let real = self.locs.zone(w).real;
            eff.write(w, target.must, real);
            for &u in &reads {
                eff.dep.push((u, w));
            }
            if real {
                for &u in &dreads {
                    eff.diff_dep.push((u, w));
                }
            }
        }
    }

    fn effect(
        &mut self,
        kind: PointKind<'_>,
        call_vals: &HashMap<(StmtId, Zone), Val>,
        summaries: &HashMap<ProcId, Summary>,
    ) -> (Effect, Option<CallSite>) {
        let mut acc = EffectAcc::default();
        let mut site = None;
        match kind {
            // `eff/control`
            PointKind::Test(s) => {
                let mut reads = Vec::new();
                match &s.kind {
                    StmtKind::If { cond, .. } => self.reads(cond, &mut reads),
                    StmtKind::Switch { selector, .. } => self.reads(selector, &mut reads),
                    StmtKind::Loop { header, .. } => match header {
                        LoopHeader::For { cond: Some(c), .. }
                        | LoopHeader::While { cond: c }
                        | LoopHeader::DoWhile { cond: c } => self.reads(c, &mut reads),
                        LoopHeader::For { cond: None, .. } => {}
                    },
                    _ => {}
                }
                acc.reads = reads;
            }
            // `eff/return`
            PointKind::Return(s) => {
                if let StmtKind::Return(Some(e)) = &s.kind {
                    let mut reads = Vec::new();
                    let mut dreads = Vec::new();
                    self.reads(e, &mut reads);
                    self.diff_reads(e, &mut dreads);
                    acc.reads.extend(reads.iter().copied());
                    if let Some(r) = self.locs.of_result(self.proc) {
                        let zs: Vec<Zone> = self.locs.object_zones(r).collect();
                        let src = if self.is_struct(e) {
                            Some(self.ref_zones(e))
                        } else {
                            None
                        };
                        for w in zs {
                            let real = self.locs.zone(w).real;
                            acc.write(w, true, real);
                            let wpath = self.locs.zone(w).path.clone();
                            for &u in &reads {
                                let field_ok = src.as_ref().is_none_or(|s| {
                                    !s.zones.contains(&u)
                                        || same_leaf(&self.locs.zone(u).path, &wpath)
                                });
                                if field_ok {
                                    acc.dep.push((u, w));
                                }
                            }
                            if real {
                                for &u in &dreads {
                                    let field_ok = src
                                        .as_ref()
                                        .is_none_or(|_| same_leaf(&self.locs.zone(u).path, &wpath));
                                    if field_ok {
                                        acc.diff_dep.push((u, w));
                                    }
                                }
                            }
                        }
                    }
                }
            }
            PointKind::Stmt(s) => match &s.kind {
                StmtKind::Assign { lhs, rhs, .. } => self.assign_into(lhs, Some(rhs), &mut acc),
                // `eff/decl`: a static local's initialiser takes effect
                // once, before the program runs, not here.
                StmtKind::Decl { storage, .. } if *storage == Storage::Static => {}
                StmtKind::Decl { vars, .. } => {
                    for d in vars {
                        let obj = self.locs.of_sym(d.sym);
                        match &d.init {
                            Some(Init::Expr(e)) => {
                                let var = var_expr(self.program, d.sym, s);
                                self.assign_into(&var, Some(e), &mut acc);
                            }
                            Some(Init::List(items, _)) => {
                                // `eff/decl`: each item reaches the part it
                                // initialises (`Noise nz = {x, 0.1};` makes
                                // `nz.dt` depend on nothing); every part
                                // from all items where the items do not
                                // follow the type (brace elision).
                                let ty = self.program.sym(d.sym).ty.ty.clone();
                                let mut parts = Vec::new();
                                let by_part = self.init_reads_by_part(
                                    &ty,
                                    items,
                                    &mut Vec::new(),
                                    &mut parts,
                                );
                                let mut reads = Vec::new();
                                let mut dreads = Vec::new();
                                if by_part {
                                    for (_, r, dr) in &parts {
                                        reads.extend(r.iter().copied());
                                        dreads.extend(dr.iter().copied());
                                    }
                                } else {
                                    self.init_reads(items, &mut reads, &mut dreads);
                                }
                                acc.reads.extend(reads.iter().copied());
                                let zs: Vec<Zone> = self.locs.object_zones(obj).collect();
                                let whole = zs.len() == 1 && !self.locs.zone(zs[0]).atom;
                                for w in zs {
                                    let real = self.locs.zone(w).real;
                                    acc.write(w, whole, real);
                                    let mut from: Vec<Zone> = Vec::new();
                                    let mut dfrom: Vec<Zone> = Vec::new();
                                    if by_part {
                                        let path = &self.locs.zone(w).path;
                                        for (prefix, r, dr) in &parts {
                                            if path.starts_with(prefix) {
                                                from.extend(r.iter().copied());
                                                dfrom.extend(dr.iter().copied());
                                            }
                                        }
                                    } else {
                                        from.clone_from(&reads);
                                        dfrom.clone_from(&dreads);
                                    }
                                    for &u in &from {
                                        acc.dep.push((u, w));
                                    }
                                    if real {
                                        for &u in &dfrom {
                                            acc.diff_dep.push((u, w));
                                        }
                                    }
                                }
                            }
                            None => {}
                        }
                    }
                }
                // `eff/alloc`
                StmtKind::Alloc {
                    target,
                    count,
                    zeroed,
                    ..
                } => {
                    let mut reads = Vec::new();
                    self.reads(count, &mut reads);
                    acc.reads.extend(reads.iter().copied());
                    let t = self.ref_zones(target);
                    acc.reads.extend(t.address_reads.iter().copied());
                    for &w in &t.zones {
                        acc.write(w, t.must, false);
                        // A needed pointer needs the size of its block.
                        for &u in reads.iter().chain(&t.address_reads) {
                            acc.dep.push((u, w));
                        }
                    }
                    if *zeroed && let Some(h) = self.locs.of_heap(self.proc, s.id) {
                        for w in self.locs.object_zones(h).collect::<Vec<_>>() {
                            let real = self.locs.zone(w).real;
                            acc.write(w, false, real);
                        }
                    }
                }
                // `eff/free`
                StmtKind::Free { ptr } => {
                    let mut reads = Vec::new();
                    self.reads(ptr, &mut reads);
                    acc.reads = reads;
                }
                StmtKind::Discard(e) => {
                    let mut reads = Vec::new();
                    self.reads(e, &mut reads);
                    acc.reads = reads;
                }
                StmtKind::Call {
                    result,
                    callee,
                    args,
                    ..
                } => {
                    site = Some(self.call_effect(
                        s,
                        result.as_ref(),
                        *callee,
                        args,
                        call_vals,
                        summaries,
                        &mut acc,
                    ));
                }
                _ => {}
            },
        }
        (acc.finish(), site)
    }

    /// `deriv-use/partial`, `deriv-use/address`, `deriv-use/call`
    fn deriv_info(&mut self, kind: PointKind<'_>) -> DerivInfo {
        let mut d = DerivInfo::default();
        match kind {
            PointKind::Test(_) => {}
            PointKind::Return(s) => {
                if let StmtKind::Return(Some(e)) = &s.kind {
                    self.partials(e, &[], &mut d.leaves);
                }
            }
            PointKind::Stmt(s) => match &s.kind {
                StmtKind::Assign { lhs, rhs, .. } => {
                    d.lhs_addr = self.ref_zones(lhs).address_reads;
                    self.partials(rhs, &[], &mut d.leaves);
                }
                StmtKind::Decl { vars, .. } => {
                    for v in vars {
                        match &v.init {
                            Some(Init::Expr(e)) => self.partials(e, &[], &mut d.leaves),
                            Some(Init::List(items, _)) => self.partials_list(items, &mut d.leaves),
                            None => {}
                        }
                    }
                }
                StmtKind::Call { .. } => d.call = true,
                _ => {}
            },
        }
        d
    }

    fn partials_list(&mut self, items: &[Init], out: &mut Vec<(Zone, Vec<Zone>)>) {
        for i in items {
            match i {
                Init::Expr(e) => self.partials(e, &[], out),
                Init::List(inner, _) => self.partials_list(inner, out),
            }
        }
    }

    /// The differentiable leaves of `e`, each with the zones its partial
    /// derivative reads (`needs` from the enclosing operations).
    fn partials(&mut self, e: &Expr, needs: &[Zone], out: &mut Vec<(Zone, Vec<Zone>)>) {
        if !self.program.is_real(&e.ty.ty) && !self.is_struct(e) {
            return;
        }
        let with = |this: &mut Self, extra: &Expr| -> Vec<Zone> {
            let mut n = needs.to_vec();
            this.reads(extra, &mut n);
            n
        };
        match &e.kind {
            ExprKind::Var(_)
            | ExprKind::Index { .. }
            | ExprKind::Field { .. }
            | ExprKind::Deref(_) => {
                let r = self.ref_zones(e);
                for z in r.zones {
                    if self.locs.zone(z).real {
                        let mut n = needs.to_vec();
                        n.extend(r.address_reads.iter().copied());
                        out.push((z, n));
                    }
                }
            }
            ExprKind::Unary { op, arg } => {
                if matches!(op, UnOp::Neg | UnOp::Plus) {
                    self.partials(arg, needs, out)
                }
            }
            ExprKind::Cast { arg, .. } => self.partials(arg, needs, out),
            ExprKind::Binary { op, lhs, rhs } => match op {
                BinOp::Add | BinOp::Sub => {
                    self.partials(lhs, needs, out);
                    self.partials(rhs, needs, out);
                }
                BinOp::Mul => {
                    let nl = with(self, rhs);
                    self.partials(lhs, &nl, out);
                    let nr = with(self, lhs);
                    self.partials(rhs, &nr, out);
                }
                BinOp::Div => {
                    let nl = with(self, rhs);
                    self.partials(lhs, &nl, out);
                    let mut nr = with(self, lhs);
                    self.reads(rhs, &mut nr);
                    self.partials(rhs, &nr, out);
                }
                _ => {}
            },
            ExprKind::Intrinsic { call, args } => {
                if matches!(
                    call.func,
                    MathFn::Floor | MathFn::Ceil | MathFn::Round | MathFn::Trunc
                ) {
                    return;
                }
                let mut n = needs.to_vec();
                for a in args {
                    self.reads(a, &mut n);
                }
                let diff_args = if call.func == MathFn::Copysign {
                    1
                } else {
                    args.len()
                };
                for a in &args[..diff_args.min(args.len())] {
                    self.partials(a, &n, out);
                }
            }
            ExprKind::Cond { cond, then, other } => {
                let n = with(self, cond);
                self.partials(then, &n, out);
                self.partials(other, &n, out);
            }
            _ => {}
        }
    }

    /// The reads (all, differentiable) of each item of an initialiser list
    /// of a `ty` value, by the path of the part it initialises (field
    /// indices, arrays skipped, as `Locs` numbers zones); `false` where
    /// the items do not follow the type (brace elision: `{1.0, 2.0}` for
    /// an array of structs), whose parts are then not told apart.
    fn init_reads_by_part(
        &mut self,
        ty: &Type,
        items: &[Init],
        path: &mut Vec<usize>,
        out: &mut Vec<(Vec<usize>, Vec<Zone>, Vec<Zone>)>,
    ) -> bool {
        let resolved = self.program.resolve(ty).clone();
        let aggregate = |program: &Program, t: &Type| {
            matches!(program.resolve(t), Type::Struct(_) | Type::Array { .. })
        };
        for (k, item) in items.iter().enumerate() {
            let part = match &resolved {
                Type::Array { elem, .. } => elem.ty.clone(),
                Type::Struct(sid) => match self.program.strukt(*sid).fields.get(k) {
                    Some(f) => {
                        path.push(k);
                        f.ty.ty.clone()
                    }
                    None => return false,
                },
                // A scalar in braces: `double x = {1.0};`.
                t => t.clone(),
            };
            let ok = match item {
                Init::List(inner, _) => self.init_reads_by_part(&part, inner, path, out),
                Init::Expr(e) => {
                    if aggregate(self.program, &part) && !aggregate(self.program, &e.ty.ty) {
                        false
                    } else {
                        let mut reads = Vec::new();
                        let mut dreads = Vec::new();
                        self.reads(e, &mut reads);
                        self.diff_reads(e, &mut dreads);
                        out.push((path.clone(), reads, dreads));
                        true
                    }
                }
            };
            if matches!(resolved, Type::Struct(_)) {
                path.pop();
            }
            if !ok {
                return false;
            }
        }
        true
    }

    fn init_reads(&mut self, items: &[Init], reads: &mut Vec<Zone>, dreads: &mut Vec<Zone>) {
        for i in items {
            match i {
                Init::Expr(e) => {
                    self.reads(e, reads);
                    self.diff_reads(e, dreads);
                }
                Init::List(inner, _) => self.init_reads(inner, reads, dreads),
            }
        }
    }

    /// `call/summary`, `call/by-value`, `call/map-target`, `call/map-result`
    #[allow(clippy::too_many_arguments)]
    fn call_effect(
        &mut self,
        s: &Stmt,
        result: Option<&Expr>,
        callee: ProcId,
        args: &[Expr],
        call_vals: &HashMap<(StmtId, Zone), Val>,
        summaries: &HashMap<ProcId, Summary>,
        acc: &mut EffectAcc,
    ) -> CallSite {
        let cproc = self.program.proc(callee);
        let mut site = CallSite {
            callee: Some(callee),
            ..CallSite::default()
        };
        let mut arg_reads = Vec::new();
        for a in args {
            self.reads(a, &mut arg_reads);
            let places = if is_pointer_like(self.program, a) {
                self.val_places(a)
            } else {
                Vec::new()
            };
            site.arg_places.push(places);
        }
        let result_ref = result.map(|r| self.ref_zones(r));
        if let Some(r) = &result_ref {
            arg_reads.extend(r.address_reads.iter().copied());
        }
        site.arg_reads = arg_reads.clone();
        acc.reads.extend(arg_reads.iter().copied());
        let summary = match summaries.get(&callee) {
            Some(sm) => sm.clone(),
            None => library_summary(self.program, self.locs, callee, cproc),
        };
        // The caller zones of each callee zone the summary mentions.
        let mut mentioned: BTreeSet<Zone> = BTreeSet::new();
        mentioned.extend(summary.reads.iter().copied());
        mentioned.extend(summary.writes.iter().copied());
        for &(u, w) in summary.dep.iter().chain(summary.diff_dep.iter()) {
            mentioned.insert(u);
            mentioned.insert(w);
        }
        for z in mentioned {
            let info = self.locs.zone(z).clone();
            let obj = self.locs.object(info.obj).clone();
            match obj.kind {
                // A prototype's parameters have no owning definition.
                ObjKind::Var(sym) if obj.owner == Some(callee) || cproc.params.contains(&sym) => {
                    // `call/by-value`: a parameter is a copy of the actual.
                    if let Some(i) = cproc.params.iter().position(|p| *p == sym)
                        && let Some(a) = args.get(i)
                    {
                        let mut r = Vec::new();
                        let mut d = Vec::new();
                        if info.path.is_empty() || !self.is_struct(a) {
                            self.reads(a, &mut r);
                            self.diff_reads(a, &mut d);
                        } else {
                            let src = self.ref_zones(a);
                            r.extend(src.address_reads.iter().copied());
                            for u in src.zones {
                                if same_leaf(&self.locs.zone(u).path, &info.path) {
                                    r.push(u);
                                    if self.locs.zone(u).real {
                                        d.push(u);
                                    }
                                }
                            }
                        }
                        site.by_value.insert(z, (r, d));
                    }
                }
                ObjKind::Target { proc, pointer } if proc.is_none_or(|p| p == callee) => {
                    let v = call_vals.get(&(s.id, pointer)).copied();
                    let places = v
                        .map(|v| self.solution.val_places[v as usize].clone())
                        .unwrap_or_default();
                    let mut zs = Vec::new();
                    for pl in places {
                        let q = self.locs.extend(pl, &info.path);
                        zs.extend(self.locs.place_zones(q));
                    }
                    zs.sort_unstable();
                    zs.dedup();
                    site.map.insert(z, zs);
                }
                ObjKind::Result(p) if p == callee => {
                    let zs = match &result_ref {
                        Some(r) => r
                            .zones
                            .iter()
                            .copied()
                            .filter(|&u| {
                                info.path.is_empty()
                                    || same_leaf(&self.locs.zone(u).path, &info.path)
                            })
                            .collect(),
                        None => Vec::new(),
                    };
                    site.map.insert(z, zs);
                }
                _ if obj.owner.is_none() => {
                    site.map.insert(z, vec![z]);
                }
                _ => {
                    // A callee local: invisible to the caller.
                    site.map.insert(z, Vec::new());
                }
            }
        }
        let out = |z: Zone| site.map.get(&z).cloned().unwrap_or_default();
        let input = |z: Zone, diff: bool| -> Vec<Zone> {
            match site.by_value.get(&z) {
                Some((r, d)) => {
                    if diff {
                        d.clone()
                    } else {
                        r.clone()
                    }
                }
                None => out(z),
            }
        };
        for &z in &summary.reads {
            acc.reads.extend(input(z, false));
        }
        let killed: BTreeSet<Zone> = summary
            .kills
            .iter()
            .flat_map(|&z| {
                let m = out(z);
                let exact = m.len() == 1
                    && !self.locs.zone(m[0]).atom
                    && (self.locs.is_global(z)
                        || matches!(
                            self.locs.object(self.locs.zone(z).obj).kind,
                            ObjKind::Result(_)
                        ) && result_ref.as_ref().is_some_and(|r| r.must));
                if exact { m } else { Vec::new() }
            })
            .collect();
        for &z in &summary.writes {
            for w in out(z) {
                let real = self.locs.zone(w).real;
                acc.write(w, killed.contains(&w), real);
            }
        }
        for &(u, w) in &summary.dep {
            let ins = input(u, false);
            for w2 in out(w) {
                for &u2 in &ins {
                    acc.dep.push((u2, w2));
                }
            }
        }
        for &(u, w) in &summary.diff_dep {
            let ins = input(u, true);
            for w2 in out(w) {
                if !self.locs.zone(w2).real {
                    continue;
                }
                for &u2 in &ins {
                    if self.locs.zone(u2).real {
                        acc.diff_dep.push((u2, w2));
                    }
                }
            }
        }
        // The address computations of the result and of pointer arguments
        // feed every written zone.
        let addr: Vec<Zone> = result_ref
            .as_ref()
            .map(|r| r.address_reads.clone())
            .unwrap_or_default();
        for w in acc.writes_list() {
            for &u in &addr {
                acc.dep.push((u, w));
            }
        }
        site
    }
}

/// `eff/diff-dep`, `eff/nondiff`: calls `f` on every reference of `e` at a
/// differentiable position: not in an index or address, not under an
/// integer-valued operation, a comparison, `floor`-like functions, the
/// condition of `?:` or `copysign`'s sign.
pub(crate) fn for_each_diff_ref(program: &Program, e: &Expr, f: &mut impl FnMut(&Expr)) {
    if !program.is_real(&e.ty.ty) && !matches!(program.resolve(&e.ty.ty), Type::Struct(_)) {
        return; // integer-valued
    }
    match &e.kind {
        ExprKind::Var(_) | ExprKind::Index { .. } | ExprKind::Field { .. } | ExprKind::Deref(_) => {
            f(e)
        }
        ExprKind::Unary {
            op: UnOp::Neg | UnOp::Plus,
            arg,
        }
        | ExprKind::Cast { arg, .. } => for_each_diff_ref(program, arg, f),
        ExprKind::Binary {
            op: BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div,
            lhs,
            rhs,
        } => {
            for_each_diff_ref(program, lhs, f);
            for_each_diff_ref(program, rhs, f);
        }
        ExprKind::Intrinsic { call, args } => match call.func {
            MathFn::Floor | MathFn::Ceil | MathFn::Round | MathFn::Trunc => {}
            MathFn::Copysign => {
                if let Some(a) = args.first() {
                    for_each_diff_ref(program, a, f)
                }
            }
            _ => args.iter().for_each(|a| for_each_diff_ref(program, a, f)),
        },
        ExprKind::Cond { then, other, .. } => {
            for_each_diff_ref(program, then, f);
            for_each_diff_ref(program, other, f);
        }
        _ => {}
    }
}

/// Two zone paths name the same leaf field (the suffix after the common
/// object prefix is what matters for a struct copy).
fn same_leaf(a: &[usize], b: &[usize]) -> bool {
    let n = a.len().min(b.len());
    a[a.len() - n..] == b[b.len() - n..]
}

/// A `Var` expression for a declarator, to reuse the assignment effect.
fn var_expr(program: &Program, sym: crate::il::SymId, s: &Stmt) -> Expr {
    Expr::new(ExprKind::Var(sym), program.sym(sym).ty.clone(), s.span)
}

/// `eff/library-call`: what a procedure without a body does, from its
/// signature: reads its arguments and what they point to, writes what
/// non-const pointers point to and its result; `memcpy`/`memmove` copy
/// differentiably from source to destination.
pub fn library_summary(
    program: &Program,
    locs: &mut Locs,
    callee: ProcId,
    cproc: &Procedure,
) -> Summary {
    let mut sm = Summary::default();
    let mut inputs = Vec::new();
    let mut real_inputs = Vec::new();
    let mut outputs = Vec::new();
    for &p in &cproc.params {
        let o = locs.of_sym(p);
        for z in locs.object_zones(o).collect::<Vec<_>>() {
            inputs.push(z);
            if locs.zone(z).real {
                real_inputs.push(z);
            }
            if let Some(t) = locs.target(callee, z) {
                let is_const = match program.resolve(&locs.zone(z).ty.ty) {
                    Type::Pointer(q) => q.is_const,
                    _ => true,
                };
                for tz in locs.object_zones(t).collect::<Vec<_>>() {
                    inputs.push(tz);
                    if locs.zone(tz).real {
                        real_inputs.push(tz);
                    }
                    if !is_const {
                        outputs.push(tz);
                    }
                }
            }
        }
    }
    if let Some(r) = locs.of_result(callee) {
        for z in locs.object_zones(r).collect::<Vec<_>>() {
            outputs.push(z);
            sm.kills.push(z);
        }
    }
    let copies = matches!(cproc.name.as_str(), "memcpy" | "memmove");
    // A standard function returning a real (`fma`, `ldexp`, `modf`) is
    // differentiable like a user's external: its derivative comes from a
    // rule, and without one its active call is refused, never taken as
    // constant. Others (`printf`, `memset`) move no real value.
    let differentiable =
        cproc.origin == crate::il::ProcOrigin::User || program.contains_real(&cproc.ret.ty);
    for &w in &outputs {
        for &u in &inputs {
            sm.dep.push((u, w));
        }
        let real_out = locs.zone(w).real;
        if real_out && (differentiable || copies) {
            for &u in &real_inputs {
                sm.diff_dep.push((u, w));
            }
        }
        if !sm.kills.contains(&w) {
            sm.dep.push((w, w));
            if real_out {
                sm.diff_dep.push((w, w));
            }
        }
    }
    sm.reads = inputs;
    sm.writes = outputs;
    sm.normalize();
    sm
}

/// Accumulates an effect; `finish` sorts and adds the self-dependencies of
/// written zones that are not killed.
#[derive(Default)]
struct EffectAcc {
    reads: Vec<Zone>,
    writes: Vec<(Zone, bool, bool)>,
    dep: Vec<(Zone, Zone)>,
    diff_dep: Vec<(Zone, Zone)>,
}

impl EffectAcc {
    fn write(&mut self, z: Zone, must: bool, real: bool) {
        self.writes.push((z, must, real));
    }

    fn writes_list(&self) -> Vec<Zone> {
        self.writes.iter().map(|w| w.0).collect()
    }

    fn finish(mut self) -> Effect {
        let mut e = Effect::default();
        self.reads.sort_unstable();
        self.reads.dedup();
        e.reads = self.reads;
        let mut must: HashMap<Zone, (bool, bool)> = HashMap::default();
        for (z, m, real) in self.writes {
            let entry = must.entry(z).or_insert((true, real));
            entry.0 &= m;
        }
        for (&z, &(m, real)) in &must {
            e.writes.push(z);
            if m {
                e.kills.push(z);
            } else {
                // `eff/dep`: an element write keeps the rest of the zone.
                self.dep.push((z, z));
                if real {
                    self.diff_dep.push((z, z));
                }
            }
        }
        e.writes.sort_unstable();
        e.kills.sort_unstable();
        self.dep.sort_unstable();
        self.dep.dedup();
        self.diff_dep.sort_unstable();
        self.diff_dep.dedup();
        e.dep = self.dep;
        e.diff_dep = self.diff_dep;
        e
    }
}
