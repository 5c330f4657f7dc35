//! The static data-flow analyses of §5.2 (`spec/analyses/`): pointer
//! destinations, in-out, dependency and diff-dependency, activity,
//! diff-liveness, TBR and adjoint-out, interprocedural.
//!
//! Order of work:
//! 1. bottom-up on the call graph (callees first, strongly connected
//!    components iterated to a fixed point, `call/recursion`): each
//!    procedure's facts (points, pointer destinations, effects) and its
//!    summary (`call/summary`);
//! 2. top-down (heads first, `call/envelope`): activity, derivative uses,
//!    diff-liveness, TBR, adjoint-out and in-out per procedure, each
//!    procedure once in the envelope of its calling contexts.
//!
//! Each analysis is a crepe program over the blocks of one procedure
//! (`datalog.rs`), fed with block transfers composed once (`blocks.rs`);
//! per-point values are recovered by sweeping each block with the same
//! elementary equations.
//!
//! Invariants: a procedure's facts are built after every callee outside
//! its component has its final summary; results exist for every procedure
//! reachable from a head.

pub mod blocks;
pub mod datalog;
pub mod facts;
pub mod footprint;
pub mod head;
pub mod locs;
pub mod oracle;
pub mod pointers;
pub mod predicates;
pub mod report;
pub mod summary;

use blocks::{GenKill, Rel, Set};
use facts::ProcFacts;
pub use head::{Head, HeadVar, parse_head};
use locs::{Locs, ObjKind, Zone};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::collections::BTreeSet;
use summary::Summary;

use crate::front::diag::Diagnostic;
use crate::il::{ProcId, Program, StmtId, StmtKind};

/// Per-point results of one procedure.
#[derive(Clone, Debug, Default)]
pub struct ProcResult {
    pub varied_in: Vec<Set>,
    pub varied_out: Vec<Set>,
    pub useful_in: Vec<Set>,
    pub useful_out: Vec<Set>,
    /// `deriv-use/partial`: use(I').
    pub deriv_use: Vec<Set>,
    /// The point has a derivative statement.
    pub active: Vec<bool>,
    pub live_in: Vec<Set>,
    pub live_out: Vec<Set>,
    /// `diff-live/stmt`
    pub diff_live: Vec<bool>,
    /// `diff-live/control`: live control statements.
    pub live_controls: BTreeSet<StmtId>,
    pub tbr_in: Vec<Set>,
    /// `tbr/restore`
    pub restore: Vec<Set>,
    pub adj_out_in: Vec<Set>,
    pub adj_out_out: Vec<Set>,
    /// `inout/cst`
    pub cst: Vec<Set>,
    /// `inout/dead`
    pub dead: Vec<Set>,
    /// Entry contexts used: varied at entry, useful and diff-live at exit.
    pub varied_entry: Set,
    pub useful_exit: Set,
    pub live_exit: Set,
}

/// The results of all analyses on a program for a set of heads.
pub struct Analysis<'a> {
    pub program: &'a Program,
    pub locs: Locs,
    pub heads: Vec<Head>,
    /// Procedures analysed, heads first then in call-graph order.
    pub order: Vec<ProcId>,
    pub facts: HashMap<ProcId, ProcFacts<'a>>,
    pub summaries: HashMap<ProcId, Summary>,
    /// The in-out solution of each procedure's final facts.
    pub(crate) inout: HashMap<ProcId, InoutSolution>,
    pub results: HashMap<ProcId, ProcResult>,
    /// Zones active at some point of some procedure (`pred/diff`).
    pub diff_zones: Set,
    pub warnings: Vec<Diagnostic>,
    /// The derivative code these results prepare.
    pub mode: Mode,
    /// The call points of each callee, `(caller, point)`, built on first
    /// use by the predicates.
    pub(crate) call_index: std::sync::OnceLock<HashMap<ProcId, Vec<(ProcId, usize)>>>,
    /// `tbr/caller-restore`, adjoint mode: for a procedure reached by
    /// calls, its caller-visible zones whose values at its entry some
    /// caller's backward sweep reads after the callee's backward sweep
    /// (TBR⁻ at the call, or, transitively, the caller's own callers').
    pub caller_restore: HashMap<ProcId, Set>,
    /// Adjoint mode with `--split`: no call is checkpointed.
    pub split: bool,
    /// `pred/checkpointed-call`: the procedures that call, themselves or
    /// through others, a library function a second run does not repeat
    /// (`facts::replays_differently`): a checkpoint would run them twice.
    pub replay_unsafe: HashSet<ProcId>,
}

/// Which derivative code the analyses prepare: it decides what is live at
/// a head's exit (`diff-live/exit`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// The caller reads only derivatives: nothing is live at the exit.
    Adjoint,
    /// The tangent procedure also returns the original results, so every
    /// zone the caller can see is live at the head's exit.
    Tangent,
}

/// Runs every analysis for the given heads, for adjoint code.
pub fn analyze<'a>(program: &'a Program, heads: &[Head]) -> Analysis<'a> {
    analyze_for(program, heads, Mode::Adjoint)
}

/// Runs every analysis for the given heads and mode (adjoint mode: calls
/// checkpointed where they can be, see [`analyze_adjoint`]).
pub fn analyze_for<'a>(program: &'a Program, heads: &[Head], mode: Mode) -> Analysis<'a> {
    analyze_with(program, heads, mode, false)
}

/// Runs every analysis for adjoint code; `split` (`--split`): no call is
/// checkpointed (`pred/checkpointed-call`).
pub fn analyze_adjoint<'a>(program: &'a Program, heads: &[Head], split: bool) -> Analysis<'a> {
    analyze_with(program, heads, Mode::Adjoint, split)
}

fn analyze_with<'a>(program: &'a Program, heads: &[Head], mode: Mode, split: bool) -> Analysis<'a> {
    let mut locs = Locs::of(program);
    let graph = program.call_graph();
    let order = reachable(program, &graph, heads);
    let sccs = bottom_up_components(program, &graph, &order);
    let mut summaries: HashMap<ProcId, Summary> = HashMap::default();
    let mut facts: HashMap<ProcId, ProcFacts<'a>> = HashMap::default();
    let mut inout: HashMap<ProcId, InoutSolution> = HashMap::default();
    // Components in waves: the callees of each are all in earlier waves.
    // A wave's facts are built in turn (they intern places), then its
    // components are summarized independently, on every core.
    for wave in waves(&sccs, |p| graph[p.index()].clone(), false) {
        let (recursive, single): (Vec<Component>, Vec<Component>) =
            wave.into_iter().partition(|comp| comp.recursive);
        let built: Vec<(ProcId, ProcFacts<'a>)> = single
            .iter()
            .map(|comp| {
                (
                    comp.procs[0],
                    facts::build(program, &mut locs, comp.procs[0], &summaries),
                )
            })
            .collect();
        let solved = crate::par::map(&built, |(_, f)| summarize(&locs, f, program));
        for ((p, f), (s, sol)) in built.into_iter().zip(solved) {
            inout.insert(p, sol);
            summaries.insert(p, s);
            facts.insert(p, f);
        }
        // `call/recursion`: iterate the component from empty summaries.
        for comp in recursive {
            let comp = comp.procs;
            for &p in comp {
                summaries.insert(p, Summary::default());
            }
            for _round in 0..64 {
                let mut changed = false;
                for &p in comp {
                    let f = facts::build(program, &mut locs, p, &summaries);
                    let (s, sol) = summarize(&locs, &f, program);
                    inout.insert(p, sol);
                    if summaries.get(&p) != Some(&s) {
                        changed = true;
                        summaries.insert(p, s);
                    }
                    facts.insert(p, f);
                }
                if !changed {
                    break;
                }
            }
        }
    }
    let mut a = Analysis {
        program,
        locs,
        heads: heads.to_vec(),
        order: order.clone(),
        facts,
        summaries,
        inout,
        results: HashMap::default(),
        diff_zones: Set::new(),
        warnings: Vec::new(),
        mode,
        call_index: std::sync::OnceLock::new(),
        caller_restore: HashMap::default(),
        split,
        replay_unsafe: replay_unsafe(program, &graph),
    };
    a.top_down(&sccs, mode);
    let mut reset_only = Set::new();
    for (p, r) in &a.results {
        for i in 0..r.varied_in.len() {
            a.diff_zones
                .extend(r.varied_in[i].intersection(&r.useful_in[i]));
            a.diff_zones
                .extend(r.varied_out[i].intersection(&r.useful_out[i]));
            // `deriv-use/adjoint-reset`: caller-visible memory that an
            // active point only overwrites (`*c = 0.0` in a callee) has an
            // adjoint, arriving from the caller, that the point must zero.
            // Only a zone varied somewhere in the procedure (its entry
            // included, where `call/envelope` puts what a caller varies):
            // the adjoint of one never varied stays zero, and it needs no
            // adjoint at all (no `pas` field in `M_b` for a constant).
            if mode == Mode::Adjoint
                && r.active[i]
                && let Some(f) = a.facts.get(p)
            {
                let varied_somewhere = |w: &Zone| {
                    r.varied_in
                        .iter()
                        .chain(&r.varied_out)
                        .any(|v| v.contains(w))
                };
                reset_only.extend(
                    f.points[i]
                        .effect
                        .writes
                        .iter()
                        .copied()
                        .filter(|w| r.useful_out[i].contains(w))
                        .filter(|w| varied_somewhere(w))
                        .filter(|&w| {
                            let o = a.locs.object(a.locs.zone(w).obj);
                            o.owner.is_none() || matches!(o.kind, locs::ObjKind::Target { .. })
                        }),
                );
            }
        }
    }
    a.diff_zones.extend(reset_only);
    a.warn();
    a
}

/// What the callers of each procedure tell it (`call/envelope`), in the
/// procedure's own zones: varied at entry, useful and diff-live at exit.
#[derive(Default)]
struct Contexts {
    varied: HashMap<ProcId, Set>,
    useful: HashMap<ProcId, Set>,
    live: HashMap<ProcId, Set>,
}

impl Contexts {
    fn of(&self, p: ProcId) -> (Set, Set, Set) {
        let get = |m: &HashMap<ProcId, Set>| m.get(&p).cloned().unwrap_or_default();
        (get(&self.varied), get(&self.useful), get(&self.live))
    }
}

/// A component of the call graph, as `waves` hands it out.
struct Component<'s> {
    procs: &'s [ProcId],
    /// Several procedures, or one that calls itself: solved by iteration
    /// (`call/recursion`).
    recursive: bool,
}

/// The components of `sccs` (callees before callers, `callees` giving each
/// procedure's) grouped in waves. Bottom-up, every callee of a component
/// is in an earlier wave; top-down (`callers_first`), every caller is.
/// Within a wave the components keep the order of the pass (`sccs`' order,
/// reversed top-down). Should a call reach a component not yet placed (the
/// components are not in call order after all), each component gets a wave
/// of its own, which is the order of the pass.
fn waves(
    sccs: &[Vec<ProcId>],
    callees: impl Fn(ProcId) -> Vec<ProcId>,
    callers_first: bool,
) -> Vec<Vec<Component<'_>>> {
    let comp_of: HashMap<ProcId, usize> = sccs
        .iter()
        .enumerate()
        .flat_map(|(c, comp)| comp.iter().map(move |&p| (p, c)))
        .collect();
    let pass: Vec<usize> = if callers_first {
        (0..sccs.len()).rev().collect()
    } else {
        (0..sccs.len()).collect()
    };
    let mut callee_comps: Vec<Vec<usize>> = vec![Vec::new(); sccs.len()];
    let mut recursive: Vec<bool> = sccs.iter().map(|comp| comp.len() > 1).collect();
    let mut in_call_order = true;
    for (c, comp) in sccs.iter().enumerate() {
        for &p in comp {
            for callee in callees(p) {
                match comp_of.get(&callee) {
                    Some(&d) if d < c => callee_comps[c].push(d),
                    Some(&d) if d > c => in_call_order = false,
                    Some(_) => recursive[c] = true,
                    None => {}
                }
            }
        }
    }
    let mut wave_of = vec![0usize; sccs.len()];
    for (k, &c) in pass.iter().enumerate() {
        if !in_call_order {
            wave_of[c] = k;
            continue;
        }
        for &d in &callee_comps[c] {
            if callers_first {
                wave_of[d] = wave_of[d].max(wave_of[c] + 1);
            } else {
                wave_of[c] = wave_of[c].max(wave_of[d] + 1);
            }
        }
    }
    let mut waves: Vec<Vec<Component<'_>>> = Vec::new();
    for &c in &pass {
        let w = wave_of[c];
        if waves.len() <= w {
            waves.resize_with(w + 1, Vec::new);
        }
        waves[w].push(Component {
            procs: &sccs[c],
            recursive: recursive[c],
        });
    }
    waves
}

/// The procedures from which a call of a library function that a second
/// run does not repeat is reachable (see `Analysis::replay_unsafe`).
fn replay_unsafe(program: &Program, graph: &[Vec<ProcId>]) -> HashSet<ProcId> {
    let mut callers: Vec<Vec<ProcId>> = vec![Vec::new(); graph.len()];
    for (p, callees) in graph.iter().enumerate() {
        for &c in callees {
            callers[c.index()].push(ProcId(p as u32));
        }
    }
    let mut unsafe_procs: HashSet<ProcId> = HashSet::default();
    let mut work: Vec<ProcId> = (0..program.procs.len() as u32)
        .map(ProcId)
        .filter(|&p| facts::replays_differently(program, p))
        .collect();
    while let Some(p) = work.pop() {
        for &c in &callers[p.index()] {
            if unsafe_procs.insert(c) {
                work.push(c);
            }
        }
    }
    unsafe_procs
}

/// Procedures with a body reachable from the heads, heads first, then
/// depth-first in call order.
fn reachable(program: &Program, graph: &[Vec<ProcId>], heads: &[Head]) -> Vec<ProcId> {
    let mut order = Vec::new();
    let mut stack: Vec<ProcId> = heads.iter().rev().map(|h| h.proc).collect();
    while let Some(p) = stack.pop() {
        if order.contains(&p) || program.proc(p).body.is_none() {
            continue;
        }
        order.push(p);
        for &c in graph[p.index()].iter().rev() {
            stack.push(c);
        }
    }
    order
}

/// Strongly connected components of the reachable call graph, callees
/// before callers (Tarjan).
fn bottom_up_components(
    program: &Program,
    graph: &[Vec<ProcId>],
    procs: &[ProcId],
) -> Vec<Vec<ProcId>> {
    struct T<'g> {
        graph: &'g [Vec<ProcId>],
        index: HashMap<ProcId, usize>,
        low: HashMap<ProcId, usize>,
        on: BTreeSet<ProcId>,
        stack: Vec<ProcId>,
        out: Vec<Vec<ProcId>>,
        next: usize,
        defined: BTreeSet<ProcId>,
    }
    fn visit(t: &mut T<'_>, v: ProcId) {
        // Iterative would avoid deep recursion; call graphs are shallow
        // enough in practice (depth = call chain length).
        t.index.insert(v, t.next);
        t.low.insert(v, t.next);
        t.next += 1;
        t.stack.push(v);
        t.on.insert(v);
        for &w in &t.graph[v.index()] {
            if !t.defined.contains(&w) {
                continue;
            }
            if !t.index.contains_key(&w) {
                visit(t, w);
                let lw = t.low[&w];
                let lv = t.low.get_mut(&v).unwrap();
                *lv = (*lv).min(lw);
            } else if t.on.contains(&w) {
                let iw = t.index[&w];
                let lv = t.low.get_mut(&v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if t.low[&v] == t.index[&v] {
            let mut comp = Vec::new();
            while let Some(w) = t.stack.pop() {
                t.on.remove(&w);
                comp.push(w);
                if w == v {
                    break;
                }
            }
            comp.reverse();
            t.out.push(comp);
        }
    }
    let mut t = T {
        graph,
        index: HashMap::default(),
        low: HashMap::default(),
        on: BTreeSet::new(),
        stack: Vec::new(),
        out: Vec::new(),
        next: 0,
        defined: procs
            .iter()
            .copied()
            .filter(|p| program.proc(*p).body.is_some())
            .collect(),
    };
    for &p in procs {
        if !t.index.contains_key(&p) {
            visit(&mut t, p);
        }
    }
    t.out
}

/// Zones meaningful at a procedure's entry: its interface and its
/// parameters' values.
fn entry_visible(locs: &Locs, proc: ProcId, program: &Program, z: Zone) -> bool {
    if locs.is_interface(proc, z) {
        return !matches!(locs.object(locs.zone(z).obj).kind, ObjKind::Result(_));
    }
    match locs.object(locs.zone(z).obj).kind {
        ObjKind::Var(s) => program.proc(proc).params.contains(&s),
        _ => false,
    }
}

/// `call/summary`: a procedure's summary from its facts, with the in-out
/// solution it reads, kept for the per-point sets and the warnings (one
/// run serves all three).
fn summarize(locs: &Locs, f: &ProcFacts<'_>, program: &Program) -> (Summary, InoutSolution) {
    let proc = f.proc;
    let mut s = Summary::default();
    let mut written = BTreeSet::new();
    for p in &f.points {
        written.extend(p.effect.writes.iter().copied());
    }
    let visible = |z: Zone| entry_visible(locs, proc, program, z);
    // Below, only rows from entry-visible zones to interface zones are
    // read, and whether written interface zones are kept (`dependency`).
    let interface = |z: Zone| locs.is_interface(proc, z);
    let (dep, kept) = dependency(f, Rel::Dep, visible, interface, |z| {
        interface(z) && written.contains(&z)
    });
    let (diff_dep, _) = dependency(f, Rel::DiffDep, visible, interface, |_| false);
    // `inout/must-write`: written, and not kept on any path to the exit.
    for &w in &written {
        if !locs.is_interface(proc, w) {
            continue;
        }
        s.writes.push(w);
        if !kept.contains(&w) {
            s.kills.push(w);
        }
    }
    for (u, w) in dep {
        if locs.is_interface(proc, w) && visible(u) {
            s.dep.push((u, w));
        }
    }
    for (u, w) in diff_dep {
        if locs.is_interface(proc, w) && visible(u) {
            s.diff_dep.push((u, w));
        }
    }
    // `dep/summary`: a zone maybe left unwritten keeps its value.
    for &w in &s.writes {
        if kept.contains(&w) {
            s.dep.push((w, w));
            if locs.zone(w).real {
                s.diff_dep.push((w, w));
            }
        }
    }
    let up = inout_solution(f, &uninit_candidates(locs, f, program));
    for &z in &up.up_in[0] {
        if visible(z) {
            s.reads.push(z);
        }
    }
    for &(z, place) in &f.exit_pts {
        if s.writes.contains(&z) {
            s.ptr_exit.push((z, place));
        }
    }
    s.normalize();
    (s, up)
}

/// The dependency relation at the exit of a procedure (`dep/summary`),
/// for the entry zones `source` accepts and the exit zones `dest` accepts,
/// and the zones maybe still holding their entry value there among those
/// `source` or `keep` accepts. The equations never change a row's entry
/// zone, and a row starts only where some block's composed relation reads
/// it; a row ending in a zone no block reads feeds no other row: leaving
/// the other zones out of `Mentioned`, and out of `Through` as targets,
/// leaves every row asked for as it was.
fn dependency(
    f: &ProcFacts<'_>,
    rel: Rel,
    source: impl Fn(Zone) -> bool,
    dest: impl Fn(Zone) -> bool,
    keep: impl Fn(Zone) -> bool,
) -> (Vec<(Zone, Zone)>, Set) {
    use datalog::dependency::*;
    let mut rt = Program::new();
    rt.extend([Entry(0)]);
    rt.extend(f.solve_edges.iter().map(|&(a, b)| Edge(a, b)));
    let composed: Vec<blocks::Composed> = f
        .blocks
        .iter()
        .map(|range| blocks::compose(&f.points[range.clone()], rel))
        .collect();
    let read: Set = composed
        .iter()
        .flat_map(|c| c.through.iter().map(|&(u, _)| u))
        .collect();
    let target = |w: Zone| read.contains(&w) || dest(w);
    let mentioned: Set = f
        .zones
        .iter()
        .copied()
        .filter(|&z| (source(z) && read.contains(&z)) || keep(z))
        .collect();
    // `Written` and `Killed` are only asked about a row's exit zone (a
    // `Through` target) and a kept zone (a `Mentioned` one).
    let mut targets = Set::new();
    for (b, c) in composed.iter().enumerate() {
        let b = b as u32;
        for &(u, w) in &c.through {
            if target(w) {
                targets.insert(w);
                rt.extend([Through(b, u, w)]);
            }
        }
    }
    for (b, c) in composed.iter().enumerate() {
        let b = b as u32;
        rt.extend(
            c.written
                .iter()
                .filter(|w| targets.contains(w))
                .map(|&w| Written(b, w)),
        );
        rt.extend(
            c.killed
                .iter()
                .filter(|w| mentioned.contains(w))
                .map(|&w| Killed(b, w)),
        );
    }
    rt.extend(mentioned.iter().map(|&z| Mentioned(z)));
    let (dep_in, kept_in) = rt.run_with_hasher::<rustc_hash::FxBuildHasher>();
    let exit = 1;
    let mut dep: Vec<(Zone, Zone)> = dep_in
        .into_iter()
        .filter(|d| d.0 == exit)
        .map(|d| (d.1, d.2))
        .collect();
    dep.sort_unstable();
    let kept: Set = kept_in
        .into_iter()
        .filter(|k| k.0 == exit)
        .map(|k| k.1)
        .collect();
    (dep, kept)
}
/// The in-out solution of a procedure, per block: zones maybe read before
/// being overwritten from the block's start on, zones maybe written from
/// there on, and the uninitialised locals at its start.
pub(crate) struct InoutSolution {
    up_in: Vec<Set>,
    write_after: Vec<Set>,
    uninit_in: Vec<Set>,
}

/// The locals `warn/uninit` watches: scalars and structs the procedure
/// declares itself. Not arrays, nor the array members of a struct (atoms,
/// `loc/atom`): a loop that fills one may, as far as the analysis knows,
/// run no iteration, and every array filled by a loop would be warned
/// about.
fn uninit_candidates(locs: &Locs, f: &ProcFacts<'_>, program: &Program) -> Set {
    f.zones
        .iter()
        .copied()
        .filter(|&z| {
            let o = locs.object(locs.zone(z).obj);
            match o.kind {
                ObjKind::Var(s) => {
                    let sym = program.sym(s);
                    o.owner == Some(f.proc)
                        && sym.kind == crate::il::SymKind::Local
                        && !matches!(program.resolve(&sym.ty.ty), crate::il::Type::Array { .. })
                        && !locs.zone(z).atom
                }
                _ => false,
            }
        })
        .collect()
}

fn inout_solution(f: &ProcFacts<'_>, locals: &Set) -> InoutSolution {
    use datalog::inout::*;
    let mut rt = Program::new();
    rt.extend([Entry(0)]);
    rt.extend(f.solve_edges.iter().map(|&(a, b)| Edge(a, b)));
    rt.extend(locals.iter().map(|&z| Local(z)));
    let mut killed_in = Vec::with_capacity(f.blocks.len());
    let mut read = Set::new();
    for (b, range) in f.blocks.iter().enumerate() {
        let b = b as u32;
        // `inout/upward-read` composed backward over the block.
        let mut up = Set::new();
        let mut written = Set::new();
        let mut killed = Set::new();
        for p in f.points[range.clone()].iter().rev() {
            for z in &p.effect.kills {
                up.remove(z);
            }
            up.extend(p.effect.reads.iter().copied());
            written.extend(p.effect.writes.iter().copied());
            killed.extend(p.effect.kills.iter().copied());
        }
        rt.extend(up.iter().map(|&z| UpGen(b, z)));
        rt.extend(written.iter().map(|&z| Written(b, z)));
        read.extend(up);
        killed_in.push(killed);
    }
    // `Killed` is only asked about an upward-exposed read (an `UpGen` zone).
    for (b, killed) in killed_in.into_iter().enumerate() {
        let b = b as u32;
        rt.extend(
            killed
                .into_iter()
                .filter(|z| read.contains(z))
                .map(|z| Killed(b, z)),
        );
    }
    let (up_in, write_after, uninit) = rt.run_with_hasher::<rustc_hash::FxBuildHasher>();
    let nb = f.blocks.len();
    let mut sol = InoutSolution {
        up_in: vec![Set::new(); nb],
        write_after: vec![Set::new(); nb],
        uninit_in: vec![Set::new(); nb],
    };
    for UpIn(b, z) in up_in {
        sol.up_in[b as usize].insert(z);
    }
    for WriteAfter(b, z) in write_after {
        sol.write_after[b as usize].insert(z);
    }
    for UninitIn(b, z) in uninit {
        sol.uninit_in[b as usize].insert(z);
    }
    sol
}

impl<'a> Analysis<'a> {
    /// The zones of a head variable in the head procedure.
    pub fn head_zones(&self, head: &Head, v: HeadVar) -> Vec<Zone> {
        match v {
            HeadVar::Param(s) | HeadVar::Global(s) => {
                // The memory a parameter or global reaches: its own zones,
                // and for a pointer what it points to, followed through the
                // pointers found there (`g->u[i]`, `a[i][j]` of a
                // `double **a`, the caller's buffer a `double *field`
                // global points to).
                let mut zs: Vec<Zone> = self
                    .locs
                    .reach(head.proc, self.locs.of_sym(s))
                    .into_iter()
                    .filter(|&z| self.locs.target(head.proc, z).is_none())
                    .collect();
                zs.sort_unstable();
                zs
            }
            HeadVar::Result => self
                .locs
                .of_result(head.proc)
                .map(|o| self.locs.object_zones(o).collect())
                .unwrap_or_default(),
        }
    }

    fn top_down(&mut self, sccs: &[Vec<ProcId>], mode: Mode) {
        // Contexts gathered from call sites: varied at entry, useful and
        // diff-live at exit, in callee zones.
        let mut ctx = Contexts::default();
        // The interface of each head (`Locs::is_interface`), from one pass
        // over the objects rather than one over every zone per head.
        let mut shared: Vec<Zone> = Vec::new();
        let mut own: HashMap<ProcId, Vec<Zone>> = HashMap::default();
        // `diff-live/exit`: the tangent, and a head's `f_fwd` under
        // `--split`, return the original results.
        let results_live = mode == Mode::Tangent || self.split;
        if results_live {
            for o in &self.locs.objects {
                match o.kind {
                    ObjKind::Target { proc: Some(p), .. } | ObjKind::Result(p) => {
                        own.entry(p).or_default().extend(o.zones.clone())
                    }
                    _ if o.owner.is_none() => shared.extend(o.zones.clone()),
                    _ => {}
                }
            }
        }
        for h in &self.heads.clone() {
            if results_live {
                // `diff-live/exit`, tangent mode and `--split`: the
                // original results.
                let visible = shared
                    .iter()
                    .chain(own.get(&h.proc).into_iter().flatten())
                    .copied();
                ctx.live.entry(h.proc).or_default().extend(visible);
            }
            for &v in &h.independents {
                let zs = self.head_zones(h, v);
                ctx.varied
                    .entry(h.proc)
                    .or_default()
                    .extend(zs.into_iter().filter(|z| self.locs.zone(*z).real));
            }
            for &v in &h.dependents {
                let zs = self.head_zones(h, v);
                ctx.useful
                    .entry(h.proc)
                    .or_default()
                    .extend(zs.into_iter().filter(|z| self.locs.zone(*z).real));
            }
        }
        // Components in waves: the callers of each are all in earlier
        // waves, so its contexts are complete when its wave starts, and the
        // components of one wave are analysed independently, on every core.
        // Contexts only grow by union, so the order in which a wave's
        // results give them to callees does not matter.
        let callees = |p: ProcId| -> Vec<ProcId> {
            self.facts.get(&p).map_or_else(Vec::new, |f| {
                f.calls.values().filter_map(|site| site.callee).collect()
            })
        };
        for wave in waves(sccs, callees, true) {
            let (recursive, single): (Vec<Component>, Vec<Component>) =
                wave.into_iter().partition(|comp| comp.recursive);
            let single: Vec<ProcId> = single.into_iter().map(|comp| comp.procs[0]).collect();
            let this = &*self;
            let results = crate::par::map(&single, |&p| {
                let (ve, ue, le) = ctx.of(p);
                this.analyze_proc(p, ve, ue, le)
            });
            for (p, r) in single.into_iter().zip(results) {
                self.give_contexts(p, &r, &[p], mode, &mut ctx);
                self.results.insert(p, r);
            }
            for comp in recursive {
                let comp = comp.procs;
                for _round in 0..64 {
                    let mut changed = false;
                    for &p in comp {
                        let (ve, ue, le) = ctx.of(p);
                        let r = self.analyze_proc(p, ve, ue, le);
                        changed |= self.give_contexts(p, &r, comp, mode, &mut ctx);
                        self.results.insert(p, r);
                    }
                    if !changed {
                        break;
                    }
                }
            }
        }
    }

    /// `call/envelope`: the contexts procedure `p`, analysed as `r`, gives
    /// its callees, and (adjoint mode) `tbr/caller-restore`. True when a
    /// context of a procedure of `comp`, the component being solved, grew.
    fn give_contexts(
        &mut self,
        p: ProcId,
        r: &ProcResult,
        comp: &[ProcId],
        mode: Mode,
        ctx: &mut Contexts,
    ) -> bool {
        let mut changed = false;
        // `call/envelope`: contexts this procedure gives its callees.
        let f = &self.facts[&p];
        let mut varied_somewhere: Option<Set> = None;
        // `tbr/caller-restore`: what this procedure's own
        // callers read back (grown by its recursive calls
        // through the component's rounds).
        let own = self.caller_restore.get(&p).cloned().unwrap_or_default();
        for (&i, site) in &f.calls {
            let Some(callee) = site.callee else { continue };
            if !self.facts.contains_key(&callee) {
                continue;
            }
            let mut v = Set::new();
            let mut u = Set::new();
            let mut l = Set::new();
            // `call/envelope`, adjoint mode: memory an active call
            // overwrites whose adjoint it must zero counts as
            // varied at the callee's entry, so the callee's
            // overwrite is active (`deriv-use/adjoint-reset`).
            let reset: Set = if mode == Mode::Adjoint && r.active[i] {
                let somewhere = varied_somewhere.get_or_insert_with(|| {
                    r.varied_in
                        .iter()
                        .chain(&r.varied_out)
                        .flatten()
                        .copied()
                        .collect()
                });
                f.points[i]
                    .effect
                    .writes
                    .iter()
                    .copied()
                    .filter(|w| r.useful_out[i].contains(w) && somewhere.contains(w))
                    .collect()
            } else {
                Set::new()
            };
            // `tbr/caller-restore`: what this caller's backward
            // sweep reads, after the callee's, of what the call
            // overwrites: restore(c) (the argument expressions'
            // adjoints read use(c′) after `P_bwd`), and what this
            // procedure's own callers read back.
            if mode == Mode::Adjoint {
                let needed: Set = f.points[i]
                    .effect
                    .writes
                    .iter()
                    .copied()
                    .filter(|w| {
                        r.tbr_in[i].contains(w) || r.deriv_use[i].contains(w) || own.contains(w)
                    })
                    .collect();
                let add: Vec<Zone> = site
                    .map
                    .iter()
                    .filter(|(_, zs)| zs.iter().any(|z| needed.contains(z)))
                    .map(|(&cz, _)| cz)
                    .collect();
                let e = self.caller_restore.entry(callee).or_default();
                let before = e.len();
                e.extend(add);
                if e.len() != before && comp.contains(&callee) {
                    changed = true;
                }
            }
            for (&cz, (_, diff)) in &site.by_value {
                if diff.iter().any(|z| r.varied_in[i].contains(z)) {
                    v.insert(cz);
                }
            }
            for (&cz, zs) in &site.map {
                if zs
                    .iter()
                    .any(|z| r.varied_in[i].contains(z) || reset.contains(z))
                {
                    v.insert(cz);
                }
                if zs.iter().any(|z| r.useful_out[i].contains(z)) {
                    u.insert(cz);
                }
                if zs.iter().any(|z| r.live_out[i].contains(z)) {
                    l.insert(cz);
                }
            }
            // Varied at entry: what the callee receives, never its
            // result (`call/envelope`).
            let v: Set = v
                .into_iter()
                .filter(|z| self.locs.zone(*z).real)
                .filter(|z| {
                    !matches!(
                        self.locs.object(self.locs.zone(*z).obj).kind,
                        ObjKind::Result(_)
                    )
                })
                .collect();
            let u: Set = u.into_iter().filter(|z| self.locs.zone(*z).real).collect();
            for (ctx, add) in [
                (&mut ctx.varied, v),
                (&mut ctx.useful, u),
                (&mut ctx.live, l),
            ] {
                let e = ctx.entry(callee).or_default();
                let before = e.len();
                e.extend(add);
                if e.len() != before && comp.contains(&callee) {
                    changed = true;
                }
            }
        }
        changed
    }

    /// `pred/checkpointed-call`: is the call at point `i` checkpointed in
    /// adjoint mode (`adjoint/call-joint`)? A call of a procedure with a
    /// body, unless `--split`, or `$AD NOCHECKPOINT` on the call or on the
    /// callee's header, or it writes memory that is not a variable (no
    /// snapshot can hold it without its extent). Activity is the caller's
    /// business (`pred/active-call`).
    pub(crate) fn checkpointed_point(&self, f: &ProcFacts<'_>, i: usize) -> bool {
        if self.mode != Mode::Adjoint || self.split || !f.points[i].deriv.call {
            return false;
        }
        let s = f.points[i].kind.stmt();
        let StmtKind::Call { callee, result, .. } = &s.kind else {
            return false;
        };
        // The result's target is saved as a reference, not by the snapshot,
        // unless the callee also writes its zone (`y[0] = g(y, s)` with g
        // writing `y[1]`: the reference saves one element of the atom).
        let own = self.callee_writes(f, i);
        let result_zones: Vec<Zone> = result
            .as_ref()
            .and_then(|r| f.ref_zones.get(&facts::key(r)))
            .map_or(&[][..], |v| v.as_slice())
            .iter()
            .copied()
            .filter(|z| !own.contains(z))
            .collect();
        let callee_id = callee;
        let callee = self.program.proc(*callee);
        let directive = |c: &crate::il::Comments| {
            c.leading
                .iter()
                .chain(c.trailing.iter())
                .any(|t| t.contains("$AD NOCHECKPOINT"))
        };
        callee.body.is_some()
            && !directive(&s.comments)
            && !directive(&callee.comments)
            && !self.replay_unsafe.contains(callee_id)
            && f.points[i].effect.writes.iter().all(|&w| {
                if result_zones.contains(&w) {
                    return true;
                }
                // A pointer the callee sets (`g = a2`) needs its adjoint
                // pointer set along, which only `P_fwd` does: the original
                // run by a checkpoint would leave it behind.
                if self.locs.zone(w).pointer {
                    return false;
                }
                match self.locs.object(self.locs.zone(w).obj).kind {
                    ObjKind::Var(v) => {
                        let sym = self.program.sym(v);
                        sym.kind != crate::il::SymKind::Param
                            || !matches!(
                                self.program.resolve(&sym.ty.ty),
                                crate::il::Type::Pointer(_)
                            )
                    }
                    _ => false,
                }
            })
    }

    /// The caller zones the callee of the call at point `i` writes itself,
    /// the assignment of its result apart.
    pub(crate) fn callee_writes(&self, f: &ProcFacts<'_>, i: usize) -> BTreeSet<Zone> {
        let mut out = BTreeSet::new();
        let Some(site) = f.calls.get(&i) else {
            return out;
        };
        let Some(sm) = site.callee.and_then(|c| self.summaries.get(&c)) else {
            // A library call: its writes are all its own.
            out.extend(f.points[i].effect.writes.iter().copied());
            return out;
        };
        for z in &sm.writes {
            if matches!(
                self.locs.object(self.locs.zone(*z).obj).kind,
                ObjKind::Result(_)
            ) {
                continue;
            }
            match site.map.get(z) {
                Some(zs) => out.extend(zs.iter().copied()),
                None => {
                    out.insert(*z);
                }
            }
        }
        out
    }

    /// Every intraprocedural analysis of one procedure in a given context.
    fn analyze_proc(
        &self,
        p: ProcId,
        varied_entry: Set,
        useful_exit: Set,
        live_exit: Set,
    ) -> ProcResult {
        let f = &self.facts[&p];
        let n = f.points.len();
        let nb = f.blocks.len();
        let mut r = ProcResult {
            varied_entry: varied_entry.clone(),
            useful_exit: useful_exit.clone(),
            live_exit: live_exit.clone(),
            ..ProcResult::default()
        };
        let composed: Vec<blocks::Composed> = f
            .blocks
            .iter()
            .map(|range| blocks::compose(&f.points[range.clone()], Rel::DiffDep))
            .collect();
        let edges = &f.solve_edges;

        // Varied (forward). Every row descends from a seed: without one,
        // nothing is varied and there is nothing to run.
        let varied_in_block: Vec<Set> = if varied_entry.is_empty() {
            vec![Set::new(); nb]
        } else {
            use datalog::varied::*;
            let mut rt = Program::new();
            rt.extend(edges.iter().map(|&(a, b)| Edge(a, b)));
            rt.extend(varied_entry.iter().map(|&z| Seed(0, z)));
            // `Written` is only asked about a varied zone: a seed or a
            // `Through` target.
            let mut reach = varied_entry.clone();
            for c in &composed {
                reach.extend(c.through.iter().map(|&(_, w)| w));
            }
            for (b, c) in composed.iter().enumerate() {
                let b = b as u32;
                rt.extend(c.through.iter().map(|&(u, w)| Through(b, u, w)));
                rt.extend(
                    c.written
                        .iter()
                        .filter(|w| reach.contains(w))
                        .map(|&w| Written(b, w)),
                );
            }
            let (vin,) = rt.run_with_hasher::<rustc_hash::FxBuildHasher>();
            let mut v = vec![Set::new(); nb];
            for VariedIn(b, z) in vin {
                v[b as usize].insert(z);
            }
            v
        };
        // Useful (backward), likewise from its seeds.
        let useful_out_block: Vec<Set> = if useful_exit.is_empty() {
            vec![Set::new(); nb]
        } else {
            use datalog::useful::*;
            let mut rt = Program::new();
            rt.extend(edges.iter().map(|&(a, b)| Edge(a, b)));
            rt.extend(useful_exit.iter().map(|&z| Seed(1, z)));
            // `Written` is only asked about a useful zone: a seed or a
            // `Through` source.
            let mut reach = useful_exit.clone();
            for c in &composed {
                reach.extend(c.through.iter().map(|&(u, _)| u));
            }
            for (b, c) in composed.iter().enumerate() {
                let b = b as u32;
                rt.extend(c.through.iter().map(|&(u, w)| Through(b, u, w)));
                rt.extend(
                    c.written
                        .iter()
                        .filter(|w| reach.contains(w))
                        .map(|&w| Written(b, w)),
                );
            }
            let (uout,) = rt.run_with_hasher::<rustc_hash::FxBuildHasher>();
            let mut v = vec![Set::new(); nb];
            for UsefulOut(b, z) in uout {
                v[b as usize].insert(z);
            }
            v
        };
        r.varied_in = vec![Set::new(); n];
        r.varied_out = vec![Set::new(); n];
        r.useful_in = vec![Set::new(); n];
        r.useful_out = vec![Set::new(); n];
        for ((range, vin), uout) in f.blocks.iter().zip(varied_in_block).zip(useful_out_block) {
            let mut s = vin;
            for i in range.clone() {
                let next = blocks::forward(&s, &f.points[i].effect, Rel::DiffDep);
                r.varied_in[i] = std::mem::replace(&mut s, next);
                r.varied_out[i] = s.clone();
            }
            let mut s = uout;
            for i in range.clone().rev() {
                let next = blocks::backward(&s, &f.points[i].effect, Rel::DiffDep);
                r.useful_out[i] = std::mem::replace(&mut s, next);
                r.useful_in[i] = s.clone();
            }
        }
        // Derivative uses and active points.
        r.deriv_use = vec![Set::new(); n];
        r.active = vec![false; n];
        // Zones varied somewhere in the procedure: their adjoints may be
        // nonzero wherever they are useful (`deriv-use/adjoint-reset`).
        let varied_somewhere: Set = if self.mode == Mode::Adjoint {
            r.varied_in
                .iter()
                .chain(r.varied_out.iter())
                .flatten()
                .copied()
                .collect()
        } else {
            Set::new()
        };
        for i in 0..n {
            let pt = &f.points[i];
            let active_after: Set = r.varied_out[i]
                .intersection(&r.useful_out[i])
                .copied()
                .collect();
            let writes_active = pt.effect.writes.iter().any(|w| active_after.contains(w));
            let resets = pt
                .effect
                .writes
                .iter()
                .any(|w| r.varied_in[i].contains(w) && r.useful_out[i].contains(w));
            let d = &pt.deriv;
            if d.call {
                // `deriv-use/call`: an active call (isActiveCall)
                let active_arg = pt
                    .effect
                    .reads
                    .iter()
                    .chain(pt.effect.writes.iter())
                    .any(|z| {
                        (r.varied_in[i].contains(z) && r.useful_in[i].contains(z))
                            || active_after.contains(z)
                    });
                // `deriv-use/adjoint-reset`, at a call: it overwrites a zone
                // whose adjoint it must zero, which only the callee, writing
                // exactly that memory, can do.
                let resets_memory = pt
                    .effect
                    .writes
                    .iter()
                    .any(|w| r.useful_out[i].contains(w) && varied_somewhere.contains(w));
                if active_arg || resets_memory {
                    r.active[i] = true;
                    r.deriv_use[i] = pt.effect.reads.iter().copied().collect();
                    if let Some(site) = f.calls.get(&i) {
                        r.deriv_use[i].extend(site.arg_reads.iter().copied());
                    }
                }
            } else if writes_active {
                r.active[i] = true;
                // `deriv-use/partial`, `deriv-use/address`
                let u = &mut r.deriv_use[i];
                u.extend(d.lhs_addr.iter().copied());
                for (leaf, needs) in &d.leaves {
                    if r.varied_in[i].contains(leaf) {
                        u.extend(needs.iter().copied());
                    }
                }
            } else if resets
                || pt
                    .effect
                    .writes
                    .iter()
                    .any(|w| r.useful_out[i].contains(w) && varied_somewhere.contains(w))
            {
                // The derivative of the overwritten zone is reset to zero.
                r.active[i] = true;
                r.deriv_use[i].extend(d.lhs_addr.iter().copied());
            }
        }
        self.diff_live(f, &mut r, live_exit);
        self.tbr_adj_out(f, &mut r);
        self.inout_points(f, &mut r);
        r
    }

    fn diff_live(&self, f: &ProcFacts<'_>, r: &mut ProcResult, live_exit: Set) {
        use datalog::diff_live::*;
        let n = f.points.len();
        let nb = f.blocks.len();
        let mut rt = Program::new();
        rt.extend(f.solve_edges.iter().map(|&(a, b)| Edge(a, b)));
        rt.extend(live_exit.iter().map(|&z| Seed(1, z)));
        let mut point_of_test: Vec<Option<usize>> = vec![None; nb];
        // `Written`, `TestWrite` and `LiveIf` are only asked about a zone
        // that can be live: a seed, or read by a block, a test or a
        // derivative. They are given once those are all known.
        let mut live_able = live_exit.clone();
        let mut written: Vec<(u32, Zone)> = Vec::new();
        let mut test_writes: Vec<(u32, Zone)> = Vec::new();
        let mut live_if: Vec<(u32, u32, Zone)> = Vec::new();
        for (b, range) in f.blocks.iter().enumerate() {
            let bu = b as u32;
            let mut simple = range.clone();
            if let Some(last) = range.clone().last()
                && let facts::PointKind::Test(s) = f.points[last].kind
            {
                point_of_test[b] = Some(last);
                simple = range.start..last;
                rt.extend([TestOf(bu, s.id.0)]);
                let te = &f.points[last].effect;
                rt.extend(te.reads.iter().map(|&z| TestRead(bu, z)));
                live_able.extend(te.reads.iter().copied());
                test_writes.extend(te.writes.iter().map(|&z| (bu, z)));
                rt.extend(te.dep.iter().map(|&(u, w)| TestDep(bu, u, w)));
                live_able.extend(te.dep.iter().map(|&(u, _)| u));
            }
            let c = blocks::compose(&f.points[simple.clone()], Rel::Dep);
            rt.extend(c.through.iter().map(|&(u, w)| Through(bu, u, w)));
            live_able.extend(c.through.iter().map(|&(u, _)| u));
            written.extend(c.written.iter().map(|&w| (bu, w)));
            // Backward over the block: the uses of later derivatives
            // (static part) and, for each point, which block-end zones make
            // it live (`diff-live/stmt`).
            let mut uses = Set::new();
            let mut influence: HashMap<Zone, Set> = HashMap::default();
            for i in simple.clone().rev() {
                let e = &f.points[i].effect;
                let observable = facts::is_observable(self.program, f, i);
                // Is this point live because of later derivative uses, or
                // because of what it does outside memory (`diff-live/effect`)?
                if observable || e.writes.iter().any(|w| uses.contains(w)) {
                    rt.extend([StaticLive(i as u32)]);
                }
                let mut ends = Set::new();
                for w in &e.writes {
                    match influence.get(w) {
                        Some(s) => ends.extend(s.iter().copied()),
                        None => {
                            ends.insert(*w);
                        }
                    }
                }
                live_if.extend(ends.iter().map(|&w| (i as u32, bu, w)));
                // Step both back over the point.
                uses = blocks::backward(&uses, e, Rel::Dep);
                uses.extend(r.deriv_use[i].iter().copied());
                // `diff-live/effect`: what it prints is computed.
                if observable {
                    uses.extend(e.reads.iter().copied());
                }
                // Updated in place: a zone neither written nor read keeps
                // its entry. What the point's reads flow into is taken
                // from the influence after it, before any entry changes.
                let mut adds: Vec<(Zone, Set)> = Vec::with_capacity(e.dep.len());
                for &(u, w) in &e.dep {
                    let tgt = influence.get(&w).cloned().unwrap_or_else(|| Set::from([w]));
                    adds.push((u, tgt));
                }
                // A zone the point overwrites no longer carries its earlier
                // value anywhere, but through what the point reads from it.
                for w in &e.writes {
                    influence.insert(*w, Set::new());
                }
                for (u, tgt) in adds {
                    let entry = influence.entry(u).or_insert_with(|| {
                        // Zones read but not written keep their identity too.
                        if e.writes.binary_search(&u).is_err() {
                            Set::from([u])
                        } else {
                            Set::new()
                        }
                    });
                    entry.extend(tgt);
                }
            }
            rt.extend(uses.iter().map(|&z| UseGen(bu, z)));
            live_able.extend(uses);
        }
        for (i, pt) in f.points.iter().enumerate() {
            if r.active[i] {
                rt.extend([ActiveStmt(i as u32)]);
            }
            for &c in &pt.enclosing {
                rt.extend([Encloses(c.0, i as u32)]);
            }
        }
        for c in jump_controls(self.program, f.proc) {
            rt.extend([HasJump(c.0)]);
        }
        let able = |z: &Zone| live_able.contains(z);
        rt.extend(
            written
                .into_iter()
                .filter(|(_, z)| able(z))
                .map(|(b, z)| Written(b, z)),
        );
        rt.extend(
            test_writes
                .into_iter()
                .filter(|(_, z)| able(z))
                .map(|(b, z)| TestWrite(b, z)),
        );
        rt.extend(
            live_if
                .into_iter()
                .filter(|(_, _, z)| able(z))
                .map(|(i, b, z)| LiveIf(i, b, z)),
        );
        let (live_end, stmt_live, control_live) = rt.run_with_hasher::<rustc_hash::FxBuildHasher>();
        let mut end = vec![Set::new(); nb];
        for LiveEnd(b, z) in live_end {
            end[b as usize].insert(z);
        }
        let stmt_live: BTreeSet<u32> = stmt_live.into_iter().map(|s| s.0).collect();
        r.live_controls = control_live.into_iter().map(|c| StmtId(c.0)).collect();
        r.live_in = vec![Set::new(); n];
        r.live_out = vec![Set::new(); n];
        r.diff_live = vec![false; n];
        let mut block_in = vec![Set::new(); nb];
        for (b, (range, s)) in f.blocks.iter().zip(end).enumerate() {
            let mut s = s;
            let simple_end = point_of_test[b].unwrap_or(range.end);
            if let Some(t) = point_of_test[b] {
                r.live_in[t] = s.clone();
                if let facts::PointKind::Test(st) = f.points[t].kind {
                    r.diff_live[t] = r.live_controls.contains(&st.id);
                }
            }
            for i in (range.start..simple_end).rev() {
                let mut next = blocks::backward(&s, &f.points[i].effect, Rel::Dep);
                next.extend(r.deriv_use[i].iter().copied());
                r.live_out[i] = std::mem::replace(&mut s, next);
                r.live_in[i] = s.clone();
                r.diff_live[i] = stmt_live.contains(&(i as u32));
            }
            block_in[b] = s;
        }
        for (b, t) in point_of_test.iter().enumerate() {
            if let Some(t) = *t {
                let mut s = Set::new();
                for &c in &f.kept_succs[b] {
                    s.extend(block_in[c as usize].iter().copied());
                }
                r.live_out[t] = s;
            }
        }
    }

    /// TBR (forward) then adjoint-out (backward), with the store-all
    /// restore sets.
    fn tbr_adj_out(&self, f: &ProcFacts<'_>, r: &mut ProcResult) {
        let n = f.points.len();
        let nb = f.blocks.len();
        let edges = &f.solve_edges;
        // Each point's sets, made once for the block transfers and the
        // sweeps.
        let kill: Vec<Set> = (0..n)
            .map(|i| {
                if r.diff_live[i] {
                    // `tbr/present`: only a statement kept in the forward
                    // sweep overwrites anything.
                    f.points[i].effect.kills.iter().copied().collect()
                } else {
                    Set::new()
                }
            })
            .collect();
        // `tbr/call-exit`: a split callee's backward sweep reads, at its
        // start, values the call left in memory it writes, so what an
        // active call writes is to be recorded after it, like what it
        // reads (`deriv-use/call`).
        let exit_reads: Vec<Set> = (0..n)
            .map(|i| {
                if self.mode == Mode::Adjoint
                    && r.active[i]
                    && f.points[i].deriv.call
                    && !self.checkpointed_point(f, i)
                {
                    f.points[i].effect.writes.iter().copied().collect()
                } else {
                    Set::new()
                }
            })
            .collect();
        // TBR: forward gen/kill. `tbr/restore-address`: the pop that
        // restores a statement's target in the backward sweep reads the
        // target's address (`row[p] = pop`), so where restore(I) ≠ ∅ the
        // address reads join use(I′); each round only adds, so this stops.
        loop {
            let mut transfers = Vec::with_capacity(nb);
            for range in &f.blocks {
                let mut gk = GenKill::default();
                for i in range.clone() {
                    gk.then(&r.deriv_use[i], &kill[i]);
                    if !exit_reads[i].is_empty() {
                        gk.then(&exit_reads[i], &Set::new());
                    }
                }
                transfers.push(gk);
            }
            let tbr_block_in = gen_kill(edges, 0, &Set::new(), &transfers, nb);
            r.tbr_in = vec![Set::new(); n];
            r.restore = vec![Set::new(); n];
            for (range, s) in f.blocks.iter().zip(tbr_block_in) {
                let mut s = s;
                for i in range.clone() {
                    if r.diff_live[i] && !f.points[i].loop_step {
                        // `tbr/restore`: out(I) ∩ (TBR⁻(I) ∪ use(I')); a for
                        // loop's step is regenerated by the reversed loop
                        r.restore[i] = f.points[i]
                            .effect
                            .writes
                            .iter()
                            .copied()
                            .filter(|z| s.contains(z) || r.deriv_use[i].contains(z))
                            .collect();
                    }
                    let mut next = blocks::step(&s, &r.deriv_use[i], &kill[i]);
                    next.extend(exit_reads[i].iter().copied());
                    r.tbr_in[i] = std::mem::replace(&mut s, next);
                }
            }
            let mut grew = false;
            for i in 0..n {
                if !r.restore[i].is_empty() {
                    for &z in &f.points[i].deriv.lhs_addr {
                        grew |= r.deriv_use[i].insert(z);
                    }
                }
            }
            if !grew {
                break;
            }
        }
        // Adjoint-out: backward gen/kill on reversed edges.
        let reversed: Vec<(u32, u32)> = edges.iter().map(|&(a, b)| (b, a)).collect();
        let step_sets: Vec<(Set, Set)> = (0..n)
            .map(|i| {
                if r.diff_live[i] {
                    // `adj-out/write`
                    let out: Set = f.points[i].effect.writes.iter().copied().collect();
                    let saved: Set = r.tbr_in[i].union(&r.deriv_use[i]).copied().collect();
                    (out, saved)
                } else {
                    // `adj-out/absent`
                    (Set::new(), Set::new())
                }
            })
            .collect();
        let mut transfers = Vec::with_capacity(nb);
        for range in &f.blocks {
            let mut gk = GenKill::default();
            for i in range.clone().rev() {
                let (add, remove) = &step_sets[i];
                gk.then(add, remove);
            }
            transfers.push(gk);
        }
        let adj_block_out = gen_kill(&reversed, 1, &Set::new(), &transfers, nb);
        r.adj_out_in = vec![Set::new(); n];
        r.adj_out_out = vec![Set::new(); n];
        for (range, s) in f.blocks.iter().zip(adj_block_out) {
            let mut s = s;
            for i in range.clone().rev() {
                let (add, remove) = &step_sets[i];
                let next = blocks::step(&s, add, remove);
                r.adj_out_out[i] = std::mem::replace(&mut s, next);
                r.adj_out_in[i] = s.clone();
            }
        }
    }

    /// The warnings users need (`spec/analyses/warnings.md`).
    fn warn(&mut self) {
        let mut out = Vec::new();
        for h in &self.heads {
            let p = self.program.proc(h.proc);
            let Some(sm) = self.summaries.get(&h.proc) else {
                continue;
            };
            let depends = |u: Zone, w: Zone| {
                sm.diff_dep.contains(&(u, w)) || (u == w && !sm.writes.contains(&w))
            };
            let name = |v: HeadVar| match v {
                HeadVar::Param(s) | HeadVar::Global(s) => self.program.sym(s).name.clone(),
                HeadVar::Result => p.name.clone(),
            };
            let dep_zones: Vec<(HeadVar, Vec<Zone>)> = h
                .dependents
                .iter()
                .map(|&v| (v, self.head_zones(h, v)))
                .collect();
            let indep_zones: Vec<(HeadVar, Vec<Zone>)> = h
                .independents
                .iter()
                .map(|&v| (v, self.head_zones(h, v)))
                .collect();
            // `warn/independent-unused`
            for (v, us) in &indep_zones {
                let used = us.iter().any(|&u| {
                    dep_zones
                        .iter()
                        .any(|(_, ws)| ws.iter().any(|&w| depends(u, w)))
                });
                if !used {
                    out.push(Diagnostic::warning(
                        p.span,
                        format!(
                            "independent '{}' of '{}': no dependent depends on it differentiably, so its derivative is zero",
                            name(*v),
                            p.name
                        ),
                    ));
                }
            }
            // `warn/dependent-constant`
            for (v, ws) in &dep_zones {
                let reached = ws.iter().any(|&w| {
                    indep_zones
                        .iter()
                        .any(|(_, us)| us.iter().any(|&u| depends(u, w)))
                });
                if !reached {
                    out.push(Diagnostic::warning(
                        p.span,
                        format!(
                            "dependent '{}' of '{}' depends on no independent, so its derivative is zero",
                            name(*v),
                            p.name
                        ),
                    ));
                }
            }
        }
        // `warn/static-local`
        // Static storage the output copies: static locals, and file-scope
        // statics (internal linkage, out of the output's reach), but not
        // automatic locals the adjoint moved to static storage
        // (`adjoint/kept-locals`), which live one activation each.
        let is_copied_static = |s: crate::il::SymId| {
            let sym = self.program.sym(s);
            (matches!(
                sym.kind,
                crate::il::SymKind::Local | crate::il::SymKind::Global
            ) && sym.storage == crate::il::Storage::Static
                && !self.program.frame_statics.contains_key(&s))
                || self.program.static_locals.contains_key(&s)
        };
        let static_of = |z: Zone| match self.locs.object(self.locs.zone(z).obj).kind {
            ObjKind::Var(s) if is_copied_static(s) => Some(s),
            _ => None,
        };
        // Static zones whose exit value depends differentiably on an input
        // (a real computed from it), then those of them a head's entry
        // useful set holds.
        let mut carried: BTreeSet<(Zone, crate::il::SymId)> = BTreeSet::new();
        for &pid in &self.order {
            let Some(sm) = self.summaries.get(&pid) else {
                continue;
            };
            for &(u, w) in &sm.diff_dep {
                if let Some(s) = static_of(w)
                    && static_of(u).is_none()
                {
                    carried.insert((w, s));
                }
            }
        }
        // Of those, the ones whose value at a head's entry, the one the
        // last call left, is useful: a static that every call writes
        // before it reads it carries nothing.
        let mut statics: BTreeSet<crate::il::SymId> = BTreeSet::new();
        let head_entries = self
            .heads
            .iter()
            .filter_map(|h| self.results.get(&h.proc)?.useful_in.first());
        for set in head_entries {
            statics.extend(
                carried
                    .iter()
                    .filter(|(w, _)| set.contains(w))
                    .map(|&(_, s)| s),
            );
        }
        for s in statics {
            let sym = self.program.sym(s);
            let (name, what) = match self.program.static_locals.get(&s) {
                Some(name) => (name, "static local"),
                None if sym.kind == crate::il::SymKind::Local => (&sym.name, "static local"),
                None => (&sym.name, "static variable of its file"),
            };
            out.push(Diagnostic::warning(
                sym.span,
                format!(
                    "'{name}' is a {what} that carries a value from one call to the next: \
                     the output keeps its own copy of it, which calls of the original function do \
                     not change (and the other way round), so derivative code called after the \
                     original starts from another state"
                ),
            ));
        }
        for &pid in &self.order {
            let f = &self.facts[&pid];
            // `warn/uninit`
            let sol = &self.inout[&pid];
            let mut warned = Set::new();
            for (b, range) in f.blocks.iter().enumerate() {
                let mut un = sol.uninit_in[b].clone();
                for i in range.clone() {
                    let e = &f.points[i].effect;
                    for z in &e.reads {
                        if un.contains(z) && warned.insert(*z) {
                            let s = f.points[i].kind.stmt();
                            out.push(Diagnostic::warning(
                                s.span,
                                format!(
                                    "'{}' may be used uninitialized here",
                                    self.locs.zone(*z).name
                                ),
                            ));
                        }
                    }
                    for z in &e.writes {
                        un.remove(z);
                    }
                }
            }
            // `warn/alias`
            // In source order, so the warnings come out the same every run.
            let mut calls: Vec<(&usize, &facts::CallSite)> = f.calls.iter().collect();
            calls.sort_by_key(|(i, _)| **i);
            for (&i, site) in calls {
                let Some(callee) = site.callee else { continue };
                let cproc = self.program.proc(callee);
                let sm = self.summaries.get(&callee);
                let writes_target = |k: usize| -> bool {
                    let Some(&sym) = cproc.params.get(k) else {
                        return false;
                    };
                    let o = self.locs.of_sym(sym);
                    self.locs.object_zones(o).any(|z| {
                        self.locs.target(callee, z).is_some_and(|t| {
                            let written: Vec<Zone> = match sm {
                                Some(sm) => sm.writes.clone(),
                                None => Vec::new(),
                            };
                            self.locs.object_zones(t).any(|tz| written.contains(&tz))
                        }) || (sm.is_none()
                            && matches!(self.program.resolve(&self.locs.zone(z).ty.ty),
                                crate::il::Type::Pointer(t) if !t.is_const))
                    })
                };
                let objs = |k: usize| -> Set {
                    site.arg_places[k]
                        .iter()
                        .filter_map(|&pl| self.locs.place(pl).map(|(o, _)| o))
                        .collect()
                };
                let n = site.arg_places.len();
                let span = f.points[i].kind.stmt().span;
                let mut reported = false;
                for a in 0..n {
                    for b in a + 1..n {
                        if reported {
                            continue;
                        }
                        let shared: Vec<u32> = objs(a).intersection(&objs(b)).copied().collect();
                        // Two members of one struct (`kick(&p->x, &p->v)`)
                        // share an object but no zone.
                        let zones = |k: usize| -> std::collections::HashSet<Zone> {
                            site.arg_places[k]
                                .iter()
                                .flat_map(|&pl| self.locs.place_zones(pl))
                                .collect()
                        };
                        if !shared.is_empty()
                            && !zones(a).is_disjoint(&zones(b))
                            && (writes_target(a) || writes_target(b))
                            // `specialize/alias`: a formal the callee
                            // never mentions gives no access.
                            && crate::transform::tangent::formal_mentioned(self.program, callee, a)
                            && crate::transform::tangent::formal_mentioned(self.program, callee, b)
                            && !footprint::disjoint_arguments(
                                self.program,
                                pid,
                                f.points[i].kind.stmt(),
                                a,
                                b,
                            )
                        {
                            reported = true;
                            // A heap block has no source name (`alloc@N`
                            // is the analyses' own).
                            let shared_obj = self.locs.object(shared[0]);
                            let what = match shared_obj.kind {
                                ObjKind::Heap { .. } => "one allocated block".to_string(),
                                _ => format!("'{}'", shared_obj.name),
                            };
                            out.push(Diagnostic::warning(
                                span,
                                format!(
                                    "arguments {} and {} of '{}' may designate the same memory ({what}), which '{}' writes; it is analysed as if they did not overlap",
                                    a + 1,
                                    b + 1,
                                    cproc.name,
                                    cproc.name
                                ),
                            ));
                        }
                    }
                }
                // An argument pointing to a global the callee uses directly.
                if let Some(sm) = sm {
                    for a in 0..n {
                        for o in objs(a) {
                            // A heap block is not a global: a block the
                            // callee allocates is a fresh one each time
                            // (`t = insert(t, key)` building a tree).
                            if reported
                                || self.locs.object(o).owner.is_some()
                                || matches!(self.locs.object(o).kind, ObjKind::Heap { .. })
                            {
                                continue;
                            }
                            let direct = self
                                .locs
                                .object_zones(o)
                                .any(|z| sm.reads.contains(&z) || sm.writes.contains(&z));
                            if direct
                                && (writes_target(a)
                                    || self.locs.object_zones(o).any(|z| sm.writes.contains(&z)))
                            {
                                reported = true;
                                out.push(Diagnostic::warning(
                                    span,
                                    format!(
                                        "argument {} of '{}' may point to global '{}', which '{}' also uses directly; it is analysed as if they did not overlap",
                                        a + 1,
                                        cproc.name,
                                        self.locs.object(o).name,
                                        cproc.name
                                    ),
                                ));
                            }
                        }
                    }
                }
            }
        }
        self.warnings = out;
    }

    /// `inout/cst` and `inout/dead` per point.
    fn inout_points(&self, f: &ProcFacts<'_>, r: &mut ProcResult) {
        let sol = &self.inout[&f.proc];
        let n = f.points.len();
        r.cst = vec![Set::new(); n];
        r.dead = vec![Set::new(); n];
        let mentioned: Set = f.zones.iter().copied().collect();
        for (b, range) in f.blocks.iter().enumerate() {
            let mut up = Set::new();
            let mut wr = Set::new();
            for &c in &f.kept_succs[b] {
                up.extend(sol.up_in[c as usize].iter().copied());
                wr.extend(sol.write_after[c as usize].iter().copied());
            }
            for i in range.clone().rev() {
                let e = &f.points[i].effect;
                for z in &e.kills {
                    up.remove(z);
                }
                up.extend(e.reads.iter().copied());
                wr.extend(e.writes.iter().copied());
                r.cst[i] = mentioned.difference(&wr).copied().collect();
                r.dead[i] = mentioned.difference(&up).copied().collect();
            }
        }
    }
}

/// Runs the gen/kill program from a seed at block `seed_block`; returns
/// the value at each block's start (in the edges' direction).
fn gen_kill(
    edges: &[(u32, u32)],
    seed_block: u32,
    seed: &Set,
    transfers: &[GenKill],
    nb: usize,
) -> Vec<Set> {
    use datalog::gen_kill::*;
    // Every row descends from a seed or a gen: without either, nothing
    // reaches anywhere.
    if seed.is_empty() && transfers.iter().all(|t| t.gen_set.is_empty()) {
        return vec![Set::new(); nb];
    }
    // Only a seed or a gen ever reaches a block, so `Removes` is only
    // asked about those zones.
    let mut reaching: Set = seed.clone();
    for t in transfers {
        reaching.extend(t.gen_set.iter().copied());
    }
    let mut rt = Program::new();
    rt.extend(edges.iter().map(|&(a, b)| Edge(a, b)));
    rt.extend(seed.iter().map(|&z| Seed(seed_block, z)));
    for (b, t) in transfers.iter().enumerate() {
        let b = b as u32;
        rt.extend(t.gen_set.iter().map(|&z| Adds(b, z)));
        rt.extend(
            t.kill
                .iter()
                .filter(|z| reaching.contains(z))
                .map(|&z| Removes(b, z)),
        );
    }
    let (ins,) = rt.run_with_hasher::<rustc_hash::FxBuildHasher>();
    let mut v = vec![Set::new(); nb];
    for Reach(b, z) in ins {
        v[b as usize].insert(z);
    }
    v
}

/// Controls (if, loop, switch) that enclose a `break`, `continue` or
/// `return`: they decide which later statements run.
pub(crate) fn jump_controls(program: &Program, proc: ProcId) -> Vec<StmtId> {
    let mut out = Vec::new();
    fn walk(stmts: &[crate::il::Stmt], stack: &mut Vec<StmtId>, out: &mut Vec<StmtId>) {
        for s in stmts {
            match &s.kind {
                StmtKind::Break | StmtKind::Continue | StmtKind::Return(_) => {
                    out.extend(stack.iter().copied())
                }
                StmtKind::If { then, other, .. } => {
                    stack.push(s.id);
                    walk(&then.stmts, stack, out);
                    if let Some(o) = other {
                        walk(&o.stmts, stack, out);
                    }
                    stack.pop();
                }
                StmtKind::Loop { body, .. } => {
                    stack.push(s.id);
                    walk(&body.stmts, stack, out);
                    stack.pop();
                }
                StmtKind::Switch { cases, .. } => {
                    stack.push(s.id);
                    for c in cases {
                        walk(&c.body, stack, out);
                    }
                    stack.pop();
                }
                StmtKind::Block(b) => walk(&b.stmts, stack, out),
                _ => {}
            }
        }
    }
    if let Some(body) = &program.proc(proc).body {
        walk(&body.stmts, &mut Vec::new(), &mut out);
    }
    out.sort_unstable();
    out.dedup();
    out
}
