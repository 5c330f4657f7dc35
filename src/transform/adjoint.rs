//! Adjoint mode (§5.4): the rules of `rules/adjoint/*.rules` produce, for
//! each statement, the pair (forward sweep, backward sweep).
//!
//! - A head `f` becomes `f_b` (joint: its forward sweep, then its backward
//!   sweep). A procedure reached by active calls becomes `f_fwd` and
//!   `f_bwd`: `f_fwd` runs `f` and saves what `f_bwd` needs; `f_bwd`
//!   leaves the memory `f` overwrote as it was before `f_fwd`
//!   (spec/adjoint.md, `adjoint/proc-split`). A checkpointed call
//!   (`adjoint/call-joint`, the default) saves a snapshot and runs plain
//!   `f` forward, then restores it and runs `f_fwd ; f_bwd` backward; a
//!   split call (`--split`, `$AD NOCHECKPOINT`) runs `f_fwd` forward and
//!   `f_bwd` backward, and needs no snapshot.
//! - Before the rules run, each procedure body is lowered: declarations are
//!   hoisted to the procedure's top and their initialisers become
//!   assignments with the declaration's statement id, so the analyses'
//!   answers for the declaration apply (`adjoint/hoist`).
//! - What the rules do not cover yet is refused up front with a message
//!   and a location (`adjoint/refuse`).

use super::checkpoint;
use super::names::{DiffSets, DiffTypes, Namer, holds_pointer, is_pointer, strip_own_const};
use super::tangent::{
    binop_name, binop_of, derivative_types, field_of, is_one, is_zero, leaf_type, real_of_rank,
    real_rank,
};
use crate::analysis::Analysis;
use crate::analysis::blocks::Set;
use crate::analysis::head::Head;
use crate::analysis::locs::{NULL_PLACE, Obj, ObjKind, Zone};
use crate::engine::{self, ApplyError, Host, RuleSet, Tmpl, View};
use crate::front::diag::Diagnostic;
use crate::front::source::{SourceMap, Span};
use crate::il::validate::same_expr;
use crate::il::visit_expr as visit;
use crate::il::visit_init;
use crate::il::{
    ArrayLen, AssignSugar, BinOp, Block, Comments, Declarator, Expr, ExprKind, Init, Item,
    ItemKind, LoopHeader, MathFn, ProcId, ProcOrigin, Procedure, Program, QualType, RealKind,
    ScopeId, Stmt, StmtId, StmtKind, Storage, SymId, SymKind, Symbol, Type, UnOp,
};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::collections::BTreeSet;
use std::rc::Rc;

/// Options of `aioli adjoint`.
#[derive(Clone, Debug, Default)]
pub struct AdjointOptions {
    /// Write each emitted statement's rule ID as a trailing comment.
    pub explain: bool,
    /// Split mode for every call (`--split`): `f_fwd` in the forward
    /// sweep, `f_bwd` in the backward sweep (`adjoint/call-split`), instead
    /// of checkpointing (`adjoint/call-joint`).
    pub split: bool,
    /// Extra rule files (a user's `--rules`), after the bundled ones.
    pub user_rules: Vec<(String, String)>,
}

/// The bundled adjoint rule files, embedded so the tool works from anywhere.
pub fn bundled_adjoint_rules() -> Vec<(String, String)> {
    vec![
        rule_file!("rules/adjoint/procedure.rules"),
        rule_file!("rules/adjoint/control.rules"),
        rule_file!("rules/adjoint/assign.rules"),
        rule_file!("rules/adjoint/call.rules"),
        rule_file!("rules/adjoint/expr.rules"),
        rule_file!("rules/derivatives.rules"),
    ]
}

/// The bundled rules plus the user's.
pub fn load_adjoint_rules(opts: &AdjointOptions) -> Result<RuleSet, engine::RuleError> {
    let mut files = bundled_adjoint_rules();
    files.extend(opts.user_rules.iter().cloned());
    RuleSet::load(&files)
}

/// The text of `FILE_b.c`.
pub fn adjoint(
    program: &Program,
    sources: &SourceMap,
    heads: &[Head],
    rules: &RuleSet,
    opts: &AdjointOptions,
) -> Result<String, Diagnostic> {
    let out = adjoint_output(program, heads, rules, opts)?;
    Ok(crate::back::print_c(&out.program, sources))
}

/// What the adjoint mode gives for a file.
pub struct AdjointOutput {
    pub program: Program,
    /// The analyses' warnings, then the translation's.
    pub warnings: Vec<Diagnostic>,
    /// The IDs of every rule that built `program`.
    pub trace: BTreeSet<String>,
}

/// The output of the adjoint mode, from the program as the front end
/// gives it.
///
/// `adjoint/kept-locals`: where a split pair would keep the address of an
/// automatic local (or of its adjoint) from `P_fwd` for `P_bwd`, which
/// run in two frames, the translation is redone with that local given
/// static storage, which both frames share; the first translation's
/// refusal stands where that is not allowed (a procedure a call
/// re-enters) or does not lift it.
pub fn adjoint_output(
    program: &Program,
    heads: &[Head],
    rules: &RuleSet,
    opts: &AdjointOptions,
) -> Result<AdjointOutput, Diagnostic> {
    let structured = super::structure::structure_jumps(program);
    let target = super::specialize::Target::Adjoint { split: opts.split };
    let translate = |p: &Program| {
        super::specialize::analyzed(p, heads, target, |a| {
            let warnings = a.warnings.clone();
            adjoint_full(a, rules, opts).map(|pass| {
                let mut all = warnings;
                all.extend(pass.notes);
                let output = AdjointOutput {
                    program: pass.out,
                    warnings: all,
                    trace: pass.trace,
                };
                (output, pass.kept_locals)
            })
        })
    };
    let kept_of = |r: &Result<(AdjointOutput, BTreeSet<SymId>), Refused>| match r {
        Ok((_, k)) => k.clone(),
        Err(refused) => refused.kept_locals.clone(),
    };
    let first = translate(&structured);
    let graph = structured.call_graph();
    let mut kept: BTreeSet<SymId> = BTreeSet::new();
    let mut found = kept_of(&first);
    // Each round can only add locals; three rounds cover a local kept
    // through another local's address.
    for _ in 0..3 {
        let new: Vec<SymId> = found
            .into_iter()
            .filter(|&s| {
                !kept.contains(&s) && super::structure::can_keep_local(&structured, &graph, s)
            })
            .collect();
        if new.is_empty() {
            break;
        }
        kept.extend(new);
        let hoisted = super::structure::hoist_kept_locals(&structured, &kept);
        let next = translate(&hoisted);
        found = kept_of(&next);
        if let Ok((output, k)) = next
            && k.is_empty()
        {
            return Ok(output);
        }
    }
    first.map(|(output, _)| output).map_err(|r| r.diagnostic)
}

/// The output program of the adjoint mode.
pub fn adjoint_program(
    a: &Analysis<'_>,
    rules: &RuleSet,
    opts: &AdjointOptions,
) -> Result<Program, Diagnostic> {
    adjoint_trace(a, rules, opts).map(|(p, _)| p)
}

/// The runtime functions the generated code calls (CONTRACT §5).
const RUNTIME: &[(&str, &str, &[&str])] = &[
    ("aioli_push_real8", "void", &["double"]),
    ("aioli_pop_real8", "double", &[]),
    ("aioli_push_real4", "void", &["float"]),
    ("aioli_pop_real4", "float", &[]),
    ("aioli_push_int", "void", &["int"]),
    ("aioli_pop_int", "int", &[]),
    ("aioli_push_long", "void", &["long"]),
    ("aioli_pop_long", "long", &[]),
    ("aioli_push_control", "void", &["int", "int"]),
    ("aioli_pop_control", "int", &["int"]),
    ("aioli_push_array", "void", &["pointer", "long"]),
    ("aioli_push_pointer", "void", &["pointer"]),
    ("aioli_pop_pointer", "pointer", &[]),
    ("aioli_pop_array", "void", &["pointer", "long"]),
    ("aioli_free_later", "void", &["pointer"]),
    ("aioli_sweep_open", "void", &[]),
    ("aioli_sweep_close", "void", &[]),
];

fn runtime_type(name: &str) -> QualType {
    match name {
        "double" => QualType::double(),
        "float" => QualType::new(Type::Real(RealKind::Float)),
        "int" => QualType::int(),
        "long" => QualType::long(),
        "pointer" => QualType::void().pointer_to(),
        _ => QualType::void(),
    }
}

/// The output program and the IDs of every rule that built it.
pub fn adjoint_trace(
    a: &Analysis<'_>,
    rules: &RuleSet,
    opts: &AdjointOptions,
) -> Result<(Program, BTreeSet<String>), Diagnostic> {
    adjoint_full(a, rules, opts)
        .map(|p| (p.out, p.trace))
        .map_err(|r| r.diagnostic)
}

/// The output program and its warnings (a checkpoint region that could
/// not be checkpointed).
pub fn adjoint_with_warnings(
    a: &Analysis<'_>,
    rules: &RuleSet,
    opts: &AdjointOptions,
) -> Result<(Program, Vec<Diagnostic>), Diagnostic> {
    adjoint_full(a, rules, opts)
        .map(|p| (p.out, p.notes))
        .map_err(|r| r.diagnostic)
}

fn adjoint_full(a: &Analysis<'_>, rules: &RuleSet, opts: &AdjointOptions) -> Result<Pass, Refused> {
    // `adjoint/fwd-adjoint-pointers`: which adjoint pointer parameters each
    // `P_fwd` takes is known only once its forward sweep is built, and the
    // callers are built first (heads first, then in call-graph order): the
    // translation is redone with what the previous one found until nothing
    // new is found (the sets only grow, so this ends; most programs need
    // one translation).
    let mut needs = FwdNeeds::default();
    loop {
        let pass = adjoint_pass(a, rules, opts, &needs)?;
        let mut grew = false;
        for (p, ix) in &pass.found {
            let known = needs.entry(*p).or_default();
            for &i in ix {
                grew |= known.insert(i);
            }
        }
        if !grew {
            return Ok(pass);
        }
    }
}

/// Per procedure, the positions of the parameters whose adjoint parameter
/// its `P_fwd` takes (`adjoint/fwd-adjoint-pointers`).
type FwdNeeds = HashMap<ProcId, BTreeSet<usize>>;

/// One translation with the given `P_fwd` signatures; also returns the
/// adjoint parameters each `P_fwd` body reads.
fn adjoint_pass(
    a: &Analysis<'_>,
    rules: &RuleSet,
    opts: &AdjointOptions,
    needs: &FwdNeeds,
) -> Result<Pass, Refused> {
    let program = a.program;
    if a.split != opts.split {
        return Err(Diagnostic::error(
            program.procs.first().map(|p| p.span).unwrap_or_default(),
            "internal error: the analyses ran for another --split than the adjoint mode",
        )
        .into());
    }
    let diff = DiffSets::of(a, &a.order);
    // A procedure returning an adjoint pointer is differentiated even where
    // no value it computes is active (`adjoint/pointer-result`).
    let mut diff_procs: Vec<ProcId> = a
        .order
        .iter()
        .copied()
        .filter(|&p| {
            (a.is_diff_proc(p)
                || diff.results.contains(&p)
                || diff.sets_globals.contains_key(&p)
                || diff.stores_pointers.contains(&p))
                && program.proc(p).body.is_some()
        })
        .collect();
    // Copies last, so the user's procedure gets the plain derivative name.
    diff_procs.sort_by_key(|p| program.specialized.contains_key(p));
    let heads: HashSet<ProcId> = a.heads.iter().map(|h| h.proc).collect();
    let Some(&first) = diff_procs.first() else {
        return Err(Diagnostic::error(
            a.heads
                .first()
                .map(|h| program.proc(h.proc).span)
                .unwrap_or_default(),
            "nothing to differentiate: no head procedure has a body",
        )
        .into());
    };
    for &p in &diff_procs {
        refuse_unsupported(a, p)?;
    }
    // Declarations are hoisted to the procedure's top (`adjoint/hoist`).
    let mut hoisted_of: HashMap<ProcId, Vec<SymId>> = HashMap::default();
    for &p in &diff_procs {
        let body = program
            .proc(p)
            .body
            .as_ref()
            .expect("diff procs have bodies");
        let mut hoisted = Vec::new();
        collect_decls(&body.stmts, &mut hoisted);
        hoisted_of.insert(p, hoisted);
    }
    let mut out = program.clone_for_output();
    let mut namer = Namer::of(program);
    super::names::refuse_struct_pointer_results(program, &a.order)?;
    super::names::refuse_void_conversions(program, &a.order)?;
    super::names::refuse_hidden_writes(program, &diff_procs)?;
    super::names::refuse_stale_statics(program, &diff_procs)?;
    // The forward sweep of a joint-mode call runs the original callee.
    super::names::refuse_split_statics(program, &diff_procs, &|_, _| true)?;
    super::tangent::refuse_overlapping_calls(a, &diff_procs, true)?;
    super::tangent::refuse_global_address_calls(a, &diff_procs, true)?;
    refuse_split_calls_reading_their_writes(a, &diff_procs)?;
    super::tangent::refuse_untracked_pointers(a, &diff, &diff_procs, false)?;
    // `tangent/call-sets-global`, adjoint side: a head's `P_b` undoes, at
    // the end of its backward sweep, what its forward sweep allocated or
    // moved; a global pointer one head sets for another (`setup`, then
    // `f`, then `teardown`) would be left behind.
    if a.heads.len() > 1 {
        for h in &a.heads {
            if let Some(&g) = diff.sets_globals.get(&h.proc) {
                let what = super::names::global_pointer_phrase(program, g);
                return Err(Diagnostic::error(
                    program.proc(h.proc).span,
                    format!(
                        "head '{}' sets or frees {what} for the other heads; its adjoint undoes \
                         that before it returns, so aioli's adjoint does not support global \
                         pointers set by one head and used by another (differentiate the heads \
                         one at a time, or pass the pointer as an argument)",
                        program.proc(h.proc).name,
                    ),
                )
                .into());
            }
        }
    }
    // `adjoint/struct-types`: `T_b` with the fields of `T` ever active.
    let (types, type_items) = derivative_types(program, &mut out, &mut namer, &diff, "_b");
    let mut runtime = HashMap::default();
    for (name, ret, params) in RUNTIME {
        let id = ProcId(out.procs.len() as u32);
        let scope = ScopeId(out.scopes.len() as u32);
        out.scopes.push(crate::il::Scope {
            parent: Some(program.global_scope),
            vars: Default::default(),
        });
        let mut syms = Vec::new();
        for (i, t) in params.iter().enumerate() {
            let s = SymId(out.symbols.len() as u32);
            out.symbols.push(Symbol {
                name: format!("a{i}"),
                ty: runtime_type(t),
                kind: SymKind::Param,
                storage: Storage::Auto,
                scope,
                span: Span::default(),
            });
            syms.push(s);
        }
        out.procs.push(Procedure {
            name: name.to_string(),
            ret: runtime_type(ret),
            params: syms,
            scope,
            storage: Storage::Extern,
            is_inline: false,
            body: None,
            origin: ProcOrigin::User,
            span: Span::default(),
            comments: Comments::default(),
            stmt_count: 0,
        });
        runtime.insert(*name, id);
    }
    // Procedures a differentiated procedure calls (a recursive head gets
    // the split pair too).
    let called_by_diff: HashSet<ProcId> = diff_procs
        .iter()
        .filter_map(|c| a.facts.get(c))
        .flat_map(|f| f.calls.values().filter_map(|site| site.callee))
        .collect();
    // Which procedures checkpointed calls reach (they get the fused `P_b`)
    // and which other active calls reach (they get `P_fwd` and `P_bwd`).
    let (mut joint_called, mut split_called) = (HashSet::default(), HashSet::default());
    for c in &diff_procs {
        let Some(f) = a.facts.get(c) else { continue };
        for (&i, site) in &f.calls {
            let Some(callee) = site.callee else { continue };
            let stmt = f.points[i].kind.stmt();
            // `adjoint/pointer-result`: only `P_fwd` gives the adjoint
            // pointer, so such a call is split.
            if diff.sets_derivative_pointer(program, stmt) {
                split_called.insert(callee);
                continue;
            }
            // `tangent/call-sets-global`, `tangent/call-stores-pointer`:
            // only `P_fwd` sets the adjoint pointers along, so such a call
            // is split.
            if diff.moves_derivative_pointers(program, stmt) {
                split_called.insert(callee);
                continue;
            }
            // A passive call needs neither (it calls the original).
            if !a.is_active_call(*c, stmt.id) {
                continue;
            }
            if a.checkpointed_point(f, i) {
                joint_called.insert(callee);
            } else {
                split_called.insert(callee);
            }
        }
    }
    let mut aprocs: HashMap<ProcId, AdjointProcs> = HashMap::default();
    for &p in &diff_procs {
        let orig = program.proc(p);
        let mut make = |suffix: &str, out: &mut Program| {
            let id = ProcId(out.procs.len() as u32);
            out.procs.push(Procedure {
                name: namer.fresh(&format!("{}{suffix}", orig.name)),
                body: None,
                stmt_count: 0,
                ..orig.clone()
            });
            id
        };
        // A head gets `P_b`; a procedure that checkpointed calls reach gets
        // the fused `P_b` (`adjoint/proc-fused`), one that other calls
        // reach gets `P_fwd` and `P_bwd`; a recursive head gets its `P_b`
        // and the pair, its `P_b` saving nothing for a caller.
        let mut procs = AdjointProcs::default();
        if heads.contains(&p) {
            procs.joint = Some(make("_b", &mut out));
        } else if joint_called.contains(&p) {
            procs.fused = Some(make("_b", &mut out));
        }
        // With `--split` every head gets the pair too (CONTRACT §2: the
        // split adjoint of f is `f_fwd` and `f_bwd`).
        let pair_needed = if heads.contains(&p) {
            called_by_diff.contains(&p) || opts.split
        } else {
            split_called.contains(&p) || !joint_called.contains(&p)
        };
        if pair_needed {
            procs.fwd = Some(make("_fwd", &mut out));
            procs.bwd = Some(make("_bwd", &mut out));
        }
        aprocs.insert(p, procs);
    }
    let user_pairs: HashSet<ProcId> = heads
        .iter()
        .copied()
        .filter(|p| !called_by_diff.contains(p))
        .collect();
    let mut host = AdjointHost {
        a,
        program,
        out,
        namer,
        diff,
        types,
        type_items,
        aprocs,
        heads,
        runtime,
        rules,
        opts: opts.clone(),
        proc: first,
        stmts: Vec::new(),
        bsyms: HashMap::default(),
        trace: BTreeSet::new(),
        locals: Vec::new(),
        static_inits: HashMap::default(),
        counters: HashMap::default(),
        firsts: HashMap::default(),
        temps: HashMap::default(),
        last_temp: None,
        arg_temps: HashMap::default(),
        buffer_temps: HashMap::default(),
        branch: None,
        result_adjoint: None,
        result_pointer_adjoint: None,
        error_span: None,
        hoisted: Vec::new(),
        pending_fwd: None,
        commented: HashSet::default(),
        private_adjoints: Default::default(),
        adjoint_syms: HashSet::default(),
        precision: None,
        notes: Vec::new(),
        simplifier: crate::simplify::Simplifier::new().map_err(|e| {
            Diagnostic::error(program.proc(first).span, format!("internal error: {e}"))
        })?,
        fwd_needs: needs.clone(),
        fwd_found: FwdNeeds::default(),
        deferring: HashMap::default(),
        comments_elsewhere: String::new(),
        kept_locals: BTreeSet::new(),
        user_pairs,
    };
    for &p in &diff_procs {
        let body = &program
            .proc(p)
            .body
            .as_ref()
            .expect("diff procs have bodies")
            .stmts;
        let span = program.proc(p).span;
        let procs = host.aprocs[&p];
        // The joint version first (as a head), then the split pair and the
        // fused procedure, which share one translation.
        for split in [false, true] {
            let wanted = if split {
                procs.fwd.or(procs.fused)
            } else {
                procs.joint
            };
            if wanted.is_none() {
                continue;
            }
            if split {
                host.heads.remove(&p);
            }
            host.start_proc(p, &hoisted_of[&p]);
            let notes = host.notes.len();
            let applied = engine::apply(rules, &mut host, "proc", &AVal::Proc(p, body));
            if split && procs.joint.is_some() {
                host.heads.insert(p);
            }
            // A head's pair that only `--split` asks for, and that the
            // split translation cannot give (a local array whose adjoint
            // one sweep would keep for the other, in another frame), is
            // left out with a warning: its `P_b` stands.
            if split
                && procs.joint.is_some()
                && !called_by_diff.contains(&p)
                && let Err(e) = &applied
            {
                host.notes.truncate(notes);
                let at = host.error_span.take().unwrap_or(span);
                let name = &program.proc(p).name;
                let why = e.message.split(" (rule ").next().unwrap_or(&e.message);
                host.notes.push(Diagnostic::warning(
                    at,
                    format!(
                        "no '{name}_fwd' and '{name}_bwd' for '{name}' ('{name}_b' is \
                         written): {why}"
                    ),
                ));
                if let Some(a) = host.aprocs.get_mut(&p) {
                    a.fwd = None;
                    a.bwd = None;
                }
                continue;
            }
            if let Err(e) = applied {
                return Err(Refused {
                    diagnostic: Diagnostic::error(host.error_span.unwrap_or(span), e.message),
                    kept_locals: std::mem::take(&mut host.kept_locals),
                });
            }
        }
    }
    let trace = std::mem::take(&mut host.trace);
    let kept_locals = std::mem::take(&mut host.kept_locals);
    let found = std::mem::take(&mut host.fwd_found);
    let notes = std::mem::take(&mut host.notes);
    let head_procs: Vec<AdjointProcs> = host
        .heads
        .iter()
        .filter_map(|h| host.aprocs.get(h).copied())
        .collect();
    let (open, close, later) = (
        host.runtime["aioli_sweep_open"],
        host.runtime["aioli_sweep_close"],
        host.runtime["aioli_free_later"],
    );
    let mut out = host.finish(&diff_procs);
    bracket_sweeps(&mut out, &head_procs, [open, close, later], opts.explain);
    super::unshadow_called_functions(&mut out);
    for p in out.procs.iter_mut() {
        if let Some(b) = &mut p.body {
            let mut n = 0;
            super::tangent::renumber(&mut b.stmts, &mut n);
            p.stmt_count = n;
        }
    }
    Ok(Pass {
        out,
        trace,
        found,
        notes,
        kept_locals,
    })
}

/// What one translation gives.
struct Pass {
    out: Program,
    trace: BTreeSet<String>,
    found: FwdNeeds,
    notes: Vec<Diagnostic>,
    /// The locals that a pair left out (with a warning) would have kept
    /// by address (`adjoint/kept-locals`).
    kept_locals: BTreeSet<SymId>,
}

/// A translation refused, and the locals whose static storage could
/// lift the refusal (`adjoint/kept-locals`).
struct Refused {
    diagnostic: Diagnostic,
    kept_locals: BTreeSet<SymId>,
}

impl From<Diagnostic> for Refused {
    fn from(diagnostic: Diagnostic) -> Self {
        Refused {
            diagnostic,
            kept_locals: BTreeSet::new(),
        }
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct AdjointProcs {
    /// A head's `P_b`.
    joint: Option<ProcId>,
    /// A callee's `P_b`: `P_fwd` and `P_bwd` fused (`adjoint/proc-fused`).
    fused: Option<ProcId>,
    fwd: Option<ProcId>,
    bwd: Option<ProcId>,
}

// ---------------------------------------------------------------------------
// What is refused (`adjoint/refuse`)
// ---------------------------------------------------------------------------

fn refuse_unsupported(a: &Analysis<'_>, p: ProcId) -> Result<(), Diagnostic> {
    let program = a.program;
    let proc = program.proc(p);
    let err = |span: Span, what: &str| {
        Err(Diagnostic::error(
            span,
            format!(
                "the adjoint mode does not handle {what} yet (in '{}')",
                proc.name
            ),
        ))
    };
    let body = proc
        .body
        .as_ref()
        .map(|b| b.stmts.as_slice())
        .unwrap_or(&[]);
    fn walk(
        a: &Analysis<'_>,
        p: ProcId,
        stmts: &[Stmt],
        top: bool,
        err: &dyn Fn(Span, &str) -> Result<(), Diagnostic>,
    ) -> Result<(), Diagnostic> {
        let program = a.program;
        for (i, s) in stmts.iter().enumerate() {
            let last = top && i + 1 == stmts.len();
            if s.comments
                .leading
                .iter()
                .any(|c| c.contains(checkpoint::START))
                && !checkpoint::is_region(s)
            {
                return Err(Diagnostic::error(
                    s.span,
                    format!(
                        "'{}' has no '{}' after it in the same block",
                        checkpoint::START,
                        checkpoint::END
                    ),
                ));
            }
            if checkpoint::is_region(s) {
                // The forward sweep runs the region as the original does
                // and its adjoint runs it again: it must not leave the
                // procedure or allocate.
                let mut bad = None;
                crate::il::visit_stmts(std::slice::from_ref(s), &mut |x| {
                    if bad.is_none() {
                        bad = match x.kind {
                            StmtKind::Return(_) => Some((x.span, "a return")),
                            StmtKind::Alloc { .. } | StmtKind::Free { .. } => {
                                Some((x.span, "malloc, calloc or free"))
                            }
                            _ => None,
                        };
                    }
                });
                if let Some((span, what)) = bad {
                    return Err(Diagnostic::error(
                        span,
                        format!(
                            "the adjoint mode does not handle {what} inside a checkpointed region yet (in '{}')",
                            program.proc(p).name
                        ),
                    ));
                }
            }
            match &s.kind {
                // `structure_jumps` removed every other jump before the
                // analyses ran (`adjoint/structure`).
                StmtKind::Switch { .. } | StmtKind::Break | StmtKind::Continue => {
                    return Err(Diagnostic::error(
                        s.span,
                        "internal error: a jump reached the adjoint rules",
                    ));
                }
                StmtKind::Return(_) if !last => {
                    return Err(Diagnostic::error(
                        s.span,
                        "internal error: an early return reached the adjoint rules",
                    ));
                }
                StmtKind::Decl { vars, storage, .. } => {
                    for d in vars {
                        let ty = &program.sym(d.sym).ty;
                        // A `static const` table holds the same values at
                        // every call, so the adjoint may initialise its
                        // own copy on entry like any local; a writable
                        // static carries state from call to call that a
                        // copy would not share with the original.
                        if *storage == Storage::Static && !is_read_only(program, ty) {
                            return err(s.span, "static local variables that are not const");
                        }
                        if matches!(&ty.ty, Type::Array { len, .. }
                            if len.as_ref().and_then(|l| l.value).is_none())
                        {
                            return err(s.span, "arrays of variable length");
                        }
                    }
                }
                // Without a real result, `adjoint/call-external-passive`;
                // with a scalar one, `adjoint/call-external`.
                StmtKind::Call {
                    callee,
                    result: Some(r),
                    ..
                } if a.is_active_call(p, s.id)
                    && program.proc(*callee).body.is_none()
                    && has_real(program, &r.ty)
                    && !program.is_real(&r.ty.ty) =>
                {
                    return err(
                        s.span,
                        "active calls of external functions returning a struct",
                    );
                }
                StmtKind::If { then, other, .. } => {
                    walk(a, p, &then.stmts, false, err)?;
                    if let Some(o) = other {
                        walk(a, p, &o.stmts, false, err)?;
                    }
                }
                StmtKind::Loop { header, body } => {
                    if let LoopHeader::For { init, step, .. } = header {
                        walk(a, p, init, false, err)?;
                        walk(a, p, step, false, err)?;
                    }
                    walk(a, p, &body.stmts, false, err)?;
                }
                StmtKind::Block(b) => walk(a, p, &b.stmts, false, err)?,
                _ => {}
            }
        }
        Ok(())
    }
    walk(a, p, body, true, &err)
}

/// Is `ty` a struct (a value, not a pointer to one)?
fn is_struct(program: &Program, ty: &QualType) -> bool {
    matches!(program.resolve(&ty.ty), Type::Struct(_))
}

/// The element type of an array of arrays, at the bottom.
fn innermost(program: &Program, ty: &QualType) -> QualType {
    match program.resolve(&ty.ty) {
        Type::Array { elem, .. } => innermost(program, elem),
        _ => ty.clone(),
    }
}

/// A real, or a struct, pointer or array holding reals somewhere: what
/// can carry an adjoint (`adjoint/struct-types`).
fn has_real(program: &Program, ty: &QualType) -> bool {
    real_rank(program, ty) > 0 || program.contains_real(&ty.ty)
}

/// `e` without the conversions around it.
fn peel_casts(e: &Expr) -> &Expr {
    match &e.kind {
        ExprKind::Cast { arg, .. } => peel_casts(arg),
        _ => e,
    }
}

/// The value of an integer constant, possibly negated or converted.
fn konst_any(e: &Expr) -> Option<i64> {
    match &peel_casts(e).kind {
        ExprKind::IntConst { value, .. } => Some(*value),
        ExprKind::Unary { op: UnOp::Neg, arg } => match &peel_casts(arg).kind {
            ExprKind::IntConst { value, .. } => value.checked_neg(),
            _ => None,
        },
        _ => None,
    }
}

/// `adjoint/call-split`, refused: a split call whose arguments read what
/// the call itself writes (`upd(&s, x[k], &k)` with `upd` incrementing
/// `*k`). `P_bwd` restores what P overwrote only inside, so its arguments
/// (`&xb[k]`) would be evaluated with the value the forward call left.
/// A joint call restores that memory before its adjoint call, and is
/// right.
fn refuse_split_calls_reading_their_writes(
    a: &Analysis<'_>,
    diff_procs: &[ProcId],
) -> Result<(), Diagnostic> {
    for &p in diff_procs {
        let (Some(f), Some(r)) = (a.facts.get(&p), a.results.get(&p)) else {
            continue;
        };
        let mut calls: Vec<_> = f.calls.iter().collect();
        calls.sort_by_key(|(i, _)| **i);
        for (&i, site) in calls {
            let stmt = f.points[i].kind.stmt();
            let StmtKind::Call { callee, args, .. } = &stmt.kind else {
                continue;
            };
            if !r.active[i]
                || a.checkpointed_point(f, i)
                || a.program.proc(*callee).body.is_none()
                || site.callee.is_none()
            {
                continue;
            }
            // The variables the arguments' addresses depend on: indices,
            // offsets, dereferenced pointers (`x[k]`, whose adjoint goes
            // to `&xb[k]`), not a variable whose address is passed.
            let mut addressing = Vec::new();
            for arg in args {
                crate::il::visit_expr(arg, &mut |x| match &x.kind {
                    ExprKind::Index { index, .. } => vars_of(index, &mut addressing),
                    ExprKind::Deref(ptr) => vars_of(ptr, &mut addressing),
                    ExprKind::Binary {
                        op: BinOp::Add | BinOp::Sub,
                        lhs,
                        rhs,
                    } if super::names::is_address(a.program, &x.ty) => {
                        for side in [lhs, rhs] {
                            if !super::names::is_address(a.program, &side.ty) {
                                vars_of(side, &mut addressing);
                            }
                        }
                    }
                    _ => {}
                });
            }
            let writes = &f.points[i].effect.writes;
            let changed = addressing.iter().find_map(|&v| {
                a.locs
                    .object_zones(a.locs.of_sym(v))
                    .find(|z| writes.contains(z))
            });
            if let Some(z) = changed {
                let name = &a.locs.zone(z).name;
                return Err(Diagnostic::error(
                    f.points[i].kind.stmt().span,
                    format!(
                        "this call changes '{name}', which its own arguments read; the split \
                         adjoint would evaluate the arguments of its backward call with the value \
                         the call left (differentiate it without --split, or pass a copy of \
                         '{name}')"
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// The variables `e` reads whole: not those it reads only a member of
/// (`c.level`), whose other members a call may write (`&c`).
fn vars_of(e: &Expr, out: &mut Vec<SymId>) {
    match &e.kind {
        ExprKind::Var(v) => out.push(*v),
        ExprKind::Field { .. } | ExprKind::SizeOfExpr(_) => {}
        _ => crate::il::children(e, &mut |c| vars_of(c, out)),
    }
}

// ---------------------------------------------------------------------------
// Hoisting (`adjoint/hoist`)
// ---------------------------------------------------------------------------

/// The bytes of a string literal as spelled in the source (quotes and
/// escapes; adjacent literals concatenated), without the terminating zero;
/// `None` for a spelling this does not read (a wide or UTF-8 prefix).
fn string_bytes(spelling: &str) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut chars = spelling.bytes().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_ascii_whitespace()) {
            chars.next();
        }
        match chars.next() {
            None => return Some(out),
            Some(b'"') => {}
            Some(_) => return None,
        }
        loop {
            match chars.next()? {
                b'"' => break,
                b'\\' => {
                    let c = chars.next()?;
                    let value = match c {
                        b'n' => b'\n',
                        b't' => b'\t',
                        b'r' => b'\r',
                        b'a' => 0x07,
                        b'b' => 0x08,
                        b'f' => 0x0c,
                        b'v' => 0x0b,
                        b'\\' | b'\'' | b'"' | b'?' => c,
                        b'x' => {
                            let mut v: u32 = 0;
                            while let Some(d) = chars.peek().and_then(|d| (*d as char).to_digit(16))
                            {
                                v = v.checked_mul(16)?.checked_add(d)?;
                                chars.next();
                            }
                            u8::try_from(v).ok()?
                        }
                        b'0'..=b'7' => {
                            let mut v = u32::from(c - b'0');
                            for _ in 0..2 {
                                match chars.peek() {
                                    Some(d @ b'0'..=b'7') => {
                                        v = v * 8 + u32::from(d - b'0');
                                        chars.next();
                                    }
                                    _ => break,
                                }
                            }
                            u8::try_from(v).ok()?
                        }
                        _ => return None,
                    };
                    out.push(value);
                }
                c => out.push(c),
            }
        }
    }
}

/// A character constant for a byte: `'a'`, `'\0'`, `'\x7f'`.
fn char_spelling(b: u8) -> String {
    match b {
        0 => "'\\0'".to_string(),
        b'\t' => "'\\t'".to_string(),
        b'\n' => "'\\n'".to_string(),
        b'\'' => "'\\''".to_string(),
        b'\\' => "'\\\\'".to_string(),
        b' '..=b'~' => format!("'{}'", b as char),
        _ => format!("'\\x{b:02x}'"),
    }
}

/// Is every scalar of an object of this type `const` (`const double`,
/// `const double w[3]`)?
pub(crate) fn is_read_only(program: &Program, ty: &QualType) -> bool {
    ty.is_const
        || match program.resolve(&ty.ty) {
            Type::Array { elem, .. } => is_read_only(program, elem),
            _ => false,
        }
}

/// Where a statement writing a variable stands (`adjoint/if-recompute`).
#[derive(Clone, Copy, PartialEq)]
enum WriteSite {
    /// A declaration directly in the procedure's body: run once.
    TopLevel,
    /// The header (initialisation or step) of the loop statement.
    Header(StmtId),
    /// Anywhere else.
    Nested,
}

/// The sites of the statements of `stmts` (at `site`) that write `v`.
fn writes_of(stmts: &[Stmt], v: SymId, site: WriteSite) -> Vec<WriteSite> {
    let mut out = Vec::new();
    let writes = |e: &Expr| matches!(peel_casts(e).kind, ExprKind::Var(w) if w == v);
    let nested = |s: WriteSite| match s {
        WriteSite::TopLevel => WriteSite::Nested,
        other => other,
    };
    for st in stmts {
        match &st.kind {
            StmtKind::Decl { vars, .. } if vars.iter().any(|d| d.sym == v && d.init.is_some()) => {
                out.push(site)
            }
            StmtKind::Assign { lhs, .. } if writes(lhs) => out.push(nested(site)),
            StmtKind::Call {
                result: Some(r), ..
            } if writes(r) => out.push(nested(site)),
            StmtKind::Alloc { target, .. } if writes(target) => out.push(nested(site)),
            StmtKind::Loop { header, body } => {
                if let LoopHeader::For { init, step, .. } = header {
                    out.extend(writes_of(init, v, WriteSite::Header(st.id)));
                    out.extend(writes_of(step, v, WriteSite::Header(st.id)));
                }
                out.extend(writes_of(&body.stmts, v, WriteSite::Nested));
            }
            StmtKind::If { then, other, .. } => {
                out.extend(writes_of(&then.stmts, v, WriteSite::Nested));
                if let Some(o) = other {
                    out.extend(writes_of(&o.stmts, v, WriteSite::Nested));
                }
            }
            StmtKind::Block(b) => out.extend(writes_of(&b.stmts, v, WriteSite::Nested)),
            StmtKind::Switch { .. } => {
                // Not reached by the adjoint rules (`adjoint/structure`):
                // counted as a write, the cautious side.
                out.push(WriteSite::Nested);
            }
            _ => {}
        }
    }
    out
}

/// The static locals of `stmts` with their initialisers
/// (`adjoint/decl-static`).
fn collect_static_inits(stmts: &[Stmt], out: &mut HashMap<SymId, Option<Init>>) {
    crate::il::visit_stmts(stmts, &mut |s| {
        if let StmtKind::Decl {
            vars,
            storage: Storage::Static,
            ..
        } = &s.kind
        {
            out.extend(vars.iter().map(|d| (d.sym, d.init.clone())));
        }
    });
}

fn collect_decls(stmts: &[Stmt], out: &mut Vec<SymId>) {
    crate::il::visit_stmts(stmts, &mut |s| {
        if let StmtKind::Decl { vars, .. } = &s.kind {
            out.extend(vars.iter().map(|d| d.sym));
        }
    });
}

// ---------------------------------------------------------------------------
// The host
// ---------------------------------------------------------------------------

/// A call being translated into its forward sweep (`forward_call`).
struct ForwardCall<'x> {
    stmt: &'x Stmt,
    /// The callee's `P_fwd`.
    fwd: ProcId,
    /// The arguments `P_fwd` takes.
    args: Vec<Expr>,
    /// The original call's result: the original expression, since the
    /// analyses' answers are keyed by its address (`must_save`).
    result: Option<&'x Expr>,
}

/// A value the adjoint rules see.
#[derive(Clone)]
// Built expressions and statements are moved, not boxed: values live only
// while a rule runs.
#[allow(clippy::large_enum_variant)]
enum AVal<'a> {
    /// A procedure and its lowered body.
    Proc(ProcId, &'a [Stmt]),
    Formals(ProcId, usize),
    Formal(ProcId, usize),
    Stmts(&'a [Stmt]),
    Stmt(&'a Stmt),
    Decls(&'a [Declarator]),
    Declarator(&'a Declarator),
    Init(&'a Init),
    Expr(&'a Expr),
    Args(&'a Stmt, usize),
    Arg(&'a Stmt, usize),
    Sym(SymId),
    Atom(Rc<str>),
    Num(f64),
    Code(Vec<Stmt>),
    New(Expr),
    /// A popped branch marker: the pop statement and the value to test.
    Popped(Stmt, Expr),
    List(Vec<AVal<'a>>),
    /// An expression with the adjoint value propagated into it.
    With(Box<AVal<'a>>, Box<AVal<'a>>),
}

/// A `for` loop the backward sweep reverses by stepping its index back
/// (`adjoint/for-canonical`).
#[derive(Clone, Debug)]
struct CanonicalFor {
    index: SymId,
    /// The constant step, nonzero: `i += step` (negative for `i -= k`).
    step: i64,
    /// The index's value at entry when INIT is `i = c` with a constant c
    /// from which stepping back once does not overflow, for a signed index.
    first: Option<i64>,
    /// With `first` and a step of ±1, the index's last value computed from
    /// a bound that nothing in the procedure writes (`i < n` gives
    /// `n - 1`): the forward sweep then records nothing.
    last: Option<Expr>,
}

struct AdjointHost<'x, 'a> {
    a: &'x Analysis<'a>,
    program: &'a Program,
    out: Program,
    namer: Namer,
    diff: DiffSets,
    /// Original struct types → their adjoint types `T_b`.
    types: DiffTypes,
    /// The `T_b` items to add after each original type item (by index).
    type_items: HashMap<usize, Vec<ItemKind>>,
    aprocs: HashMap<ProcId, AdjointProcs>,
    heads: HashSet<ProcId>,
    runtime: HashMap<&'static str, ProcId>,
    rules: &'x RuleSet,
    opts: AdjointOptions,
    proc: ProcId,
    stmts: Vec<&'x Stmt>,
    /// Original variable → its adjoint variable.
    bsyms: HashMap<SymId, SymId>,
    trace: BTreeSet<String>,
    /// Declarations of the procedure being built: adjoints, counters, temporaries.
    locals: Vec<(SymId, Option<Init>)>,
    /// The static const locals of the procedure being built, with their
    /// initialisers (`adjoint/decl-static`).
    static_inits: HashMap<SymId, Option<Init>>,
    counters: HashMap<StmtId, SymId>,
    /// `adjoint/for-canonical`: the variable holding a loop's first index.
    firsts: HashMap<StmtId, SymId>,
    temps: HashMap<String, SymId>,
    last_temp: Option<SymId>,
    arg_temps: HashMap<(usize, usize), SymId>,
    /// `adjoint/actual-pointer-passive`: zero buffers by the variable they
    /// stand for.
    buffer_temps: HashMap<SymId, SymId>,
    branch: Option<SymId>,
    result_adjoint: Option<SymId>,
    /// `P_fwd`'s `T_b **Pb` through which it gives back the adjoint
    /// pointer of its pointer result (`adjoint/pointer-result`).
    result_pointer_adjoint: Option<SymId>,
    error_span: Option<Span>,
    hoisted: Vec<SymId>,
    /// The forward sweep of a split procedure, finished with its backward
    /// sweep (its final saves are what the backward sweep reads).
    pending_fwd: Option<Vec<Stmt>>,
    /// Declarations whose comments were already given to an assignment.
    commented: HashSet<StmtId>,
    /// By-value real parameters the procedure assigns → their private
    /// adjoint locals (`adjoint/by-value`).
    private_adjoints: std::collections::BTreeMap<SymId, SymId>,
    /// The adjoint variables of the procedure being finished
    /// (`adjoint/share-calls` reads them).
    adjoint_syms: HashSet<SymId>,
    /// The precision of the `<math.h>` call whose partials are being
    /// built: they call the same variant (`exp` of a `float` stays `exp`).
    precision: Option<RealKind>,
    /// `adjoint/simplify`.
    simplifier: crate::simplify::Simplifier,
    /// Warnings about the output (a checkpoint region taped instead).
    notes: Vec<Diagnostic>,
    /// The adjoint pointer parameters each `P_fwd` takes
    /// (`adjoint/fwd-adjoint-pointers`), and those this translation found
    /// its forward sweeps read.
    fwd_needs: FwdNeeds,
    fwd_found: FwdNeeds,
    /// `adjoint/call-free-later`: each procedure's copy whose frees are
    /// put off.
    deferring: HashMap<ProcId, ProcId>,
    /// The comments `P_fwd` carries, while `P_bwd` is built
    /// (`adjoint/comments`).
    comments_elsewhere: String,
    /// Automatic locals whose address (or their adjoint's) a forward
    /// sweep would keep for a backward sweep in another frame
    /// (`adjoint/kept-locals`).
    kept_locals: BTreeSet<SymId>,
    /// Heads whose pair only the user calls (`--split`, and no
    /// differentiated procedure calls them).
    user_pairs: HashSet<ProcId>,
}

impl super::share::Temps for AdjointHost<'_, '_> {
    fn is_derivative(&self, s: SymId) -> bool {
        self.adjoint_syms.contains(&s)
    }

    fn temp(&mut self, like: &Expr, nth: usize) -> Option<Expr> {
        let mut ty = like.ty.clone();
        ty.is_const = false;
        let key = format!("call/{nth}/{:?}", ty.ty);
        let t = match self.temps.get(&key) {
            Some(&t) => t,
            None => {
                let name = self.namer.fresh_local("temp");
                let t = self.new_sym(&name, ty, SymKind::Local);
                self.locals.push((t, None));
                self.temps.insert(key, t);
                t
            }
        };
        let mut v = self.var(t);
        v.span = like.span;
        Some(v)
    }

    fn tagged(&self, st: Stmt) -> Stmt {
        self.tag(vec![st], "adjoint/share-calls")
            .pop()
            .expect("one statement in, one out")
    }

    fn is_local(&self, s: SymId) -> bool {
        self.out.symbols.get(s.index()).is_some_and(|sym| {
            matches!(
                sym.kind,
                crate::il::SymKind::Param | crate::il::SymKind::Local | crate::il::SymKind::Temp
            )
        })
    }
}

impl<'x, 'a: 'x> AdjointHost<'x, 'a> {
    /// `adjoint/simplify`: the right-hand side of every assignment to
    /// adjoint memory goes through the simplifier, as the tangent's
    /// derivative expressions do (`spec/simplify.md`).
    fn simplify_adjoints(&self, stmts: &mut Vec<Stmt>) {
        crate::il::rewrite_stmt_lists(stmts, &mut |list| {
            for st in list.iter_mut() {
                let StmtKind::Assign { lhs, rhs, sugar } = &mut st.kind else {
                    continue;
                };
                if !super::names::root_sym(lhs).is_some_and(|r| self.adjoint_syms.contains(&r)) {
                    continue;
                }
                match (sugar, &mut rhs.kind) {
                    // `X += E`: E alone; `X += -F` becomes `X -= F`.
                    (
                        AssignSugar::Compound(op @ (BinOp::Add | BinOp::Sub)),
                        ExprKind::Binary {
                            op: rop,
                            rhs: operand,
                            ..
                        },
                    ) => {
                        let mut e = self.simplifier.simplify(&self.out, operand);
                        if let ExprKind::Unary { op: UnOp::Neg, arg } = e.kind {
                            e = *arg;
                            *op = if *op == BinOp::Add {
                                BinOp::Sub
                            } else {
                                BinOp::Add
                            };
                            *rop = *op;
                        }
                        **operand = e;
                    }
                    (AssignSugar::Compound(_), _) => {}
                    _ => *rhs = self.simplifier.simplify(&self.out, rhs),
                }
            }
        });
    }

    /// `adjoint/merge-increments`: `X = 0.0; X += E;` becomes `X = E;`
    /// when E cannot read X, and `T = X; X = T;` loses its second
    /// statement (`tempb = sb; sb = 0.0; sb += tempb;` is what a statement
    /// `s -= …` leaves).
    fn merge_zero_increments(&self, stmts: &mut Vec<Stmt>) {
        crate::il::rewrite_stmt_lists(stmts, &mut |list| self.merge_increments_in(list));
    }

    fn merge_increments_in(&self, stmts: &mut Vec<Stmt>) {
        let mut out: Vec<Stmt> = Vec::with_capacity(stmts.len());
        for st in std::mem::take(stmts) {
            let merged = out.last().and_then(|prev| {
                self.doubled_increment(prev, &st)
                    .or_else(|| self.zeroed_increment(prev, &st))
            });
            match (merged, out.last_mut()) {
                (Some(kind), Some(prev)) => {
                    prev.kind = kind;
                    prev.comments.leading.extend(st.comments.leading);
                    self.retag(prev, "adjoint/merge-increments");
                }
                _ => out.push(st),
            }
            self.drop_copy_back(&mut out);
        }
        *stmts = out;
    }

    /// `X += E` (`X = X + E`) with X adjoint memory: `(X, E)`.
    fn increment<'s>(&self, st: &'s Stmt) -> Option<(&'s Expr, &'s Expr, BinOp)> {
        let StmtKind::Assign {
            lhs,
            rhs,
            sugar: AssignSugar::Compound(op @ (BinOp::Add | BinOp::Sub)),
        } = &st.kind
        else {
            return None;
        };
        let ExprKind::Binary {
            op: rop,
            lhs: again,
            rhs: e,
        } = &rhs.kind
        else {
            return None;
        };
        let adjoint = super::names::root_sym(lhs).is_some_and(|r| self.adjoint_syms.contains(&r));
        (adjoint && rop == op && same_expr(lhs, again)).then_some((lhs, &**e, *op))
    }

    /// `X = 0.0; X += E;` as `X = E;`, when E cannot read X.
    fn zeroed_increment(&self, prev: &Stmt, st: &Stmt) -> Option<StmtKind> {
        let StmtKind::Assign {
            lhs: x, rhs: zero, ..
        } = &prev.kind
        else {
            return None;
        };
        let (y, e, BinOp::Add) = self.increment(st)? else {
            return None;
        };
        let is_zero = matches!(zero.kind, ExprKind::RealConst { value, .. } if value == 0.0);
        (is_zero && same_expr(x, y) && self.reads_no_adjoint_memory(e, x)).then(|| {
            StmtKind::Assign {
                lhs: y.clone(),
                rhs: e.clone(),
                sugar: AssignSugar::Plain,
            }
        })
    }

    /// With `--explain`, `rule` replaces the rule tag that leads `st`'s
    /// trailing comment (the user's comment after it stays).
    fn retag(&self, st: &mut Stmt, rule: &str) {
        if !self.opts.explain {
            return;
        }
        let tag = format!("/* {rule} */");
        let rest = match st.comments.trailing.take() {
            Some(t) if t.starts_with("/* adjoint/") => t
                .find("*/")
                .map(|end| t[end + 2..].trim_start().to_string())
                .unwrap_or_default(),
            Some(t) => t,
            None => String::new(),
        };
        st.comments.trailing = Some(if rest.is_empty() {
            tag
        } else {
            format!("{tag} {rest}")
        });
    }

    /// `X += E; X += E;` (the adjoint of `m * m`) as one statement,
    /// `X += 2.0 * E`, when E cannot read X.
    fn doubled_increment(&self, prev: &Stmt, st: &Stmt) -> Option<StmtKind> {
        let (x, e1, op) = self.increment(prev)?;
        let (y, e2, op2) = self.increment(st)?;
        if op != op2
            || !same_expr(x, y)
            || !same_expr(e1, e2)
            || !self.reads_no_adjoint_memory(e1, x)
        {
            return None;
        }
        let StmtKind::Assign { rhs: sum, .. } = &prev.kind else {
            return None;
        };
        let two = self.real(2.0, e1.ty.clone());
        let twice = Expr::new(
            ExprKind::Binary {
                op: BinOp::Mul,
                lhs: Box::new(two),
                rhs: Box::new(e1.clone()),
            },
            e1.ty.clone(),
            e1.span,
        );
        Some(StmtKind::Assign {
            lhs: x.clone(),
            rhs: Expr::new(
                ExprKind::Binary {
                    op,
                    lhs: Box::new(x.clone()),
                    rhs: Box::new(twice),
                },
                sum.ty.clone(),
                sum.span,
            ),
            sugar: AssignSugar::Compound(op),
        })
    }

    /// `T = X; X = T;` at the end of `out`: the second statement goes.
    fn drop_copy_back(&self, out: &mut Vec<Stmt>) {
        let [.., first, second] = out.as_slice() else {
            return;
        };
        if let (
            StmtKind::Assign { lhs: t, rhs: x, .. },
            StmtKind::Assign {
                lhs: x2,
                rhs: t2,
                sugar: AssignSugar::Plain,
            },
        ) = (&first.kind, &second.kind)
            && same_expr(x, x2)
            && same_expr(t, t2)
            && second.comments.leading.is_empty()
            && self.is_adjoint_scalar(t)
        {
            out.pop();
        }
    }

    /// `v` is a scalar adjoint variable (a temporary, a local adjoint).
    fn is_adjoint_scalar(&self, v: &Expr) -> bool {
        matches!(v.kind, ExprKind::Var(s) if self.adjoint_syms.contains(&s))
            && matches!(self.out.resolve(&v.ty.ty), Type::Real(_))
    }

    /// `e` reads no adjoint memory that may be `x`'s: original memory is
    /// never adjoint memory, and of the adjoints it reads only scalar
    /// variables other than `x`'s root.
    fn reads_no_adjoint_memory(&self, e: &Expr, x: &Expr) -> bool {
        let root = super::names::root_sym(x);
        let mut ok = true;
        visit(e, &mut |sub| match &sub.kind {
            ExprKind::Var(s) if self.adjoint_syms.contains(s) => {
                ok &= Some(*s) != root
                    && (matches!(self.out.resolve(&sub.ty.ty), Type::Real(_))
                        || root.is_some_and(|r| self.apart(r, *s)));
            }
            ExprKind::Var(s) if Some(*s) == root => ok = false,
            _ => {}
        });
        ok
    }

    /// Do two distinct adjoint variables designate memory that cannot
    /// overlap? Each is an array of its own, or a pointer parameter: the
    /// adjoint buffers of distinct parameters are distinct, as the
    /// parameters are (calls passing overlapping memory for two of them
    /// are refused, and a head's caller passes one buffer per parameter).
    /// A pointer local may point into either.
    fn apart(&self, a: SymId, b: SymId) -> bool {
        let own = |s: SymId| {
            let sym = &self.out.symbols[s.index()];
            match self.out.resolve(&sym.ty.ty) {
                Type::Array { .. } => true,
                Type::Pointer(_) => sym.kind == SymKind::Param,
                _ => false,
            }
        };
        a != b && own(a) && own(b)
    }

    /// Every variable of the procedure being built that holds an adjoint
    /// (adjoint variables and parameters, adjoint temporaries, zero
    /// buffers); a variable left out is taken for original memory, which
    /// is the cautious side for `adjoint/share-calls`.
    fn adjoint_symbols(&self) -> HashSet<SymId> {
        let mut out: HashSet<SymId> = self.bsyms.values().copied().collect();
        out.extend(self.private_adjoints.values().copied());
        out.extend(self.result_adjoint);
        out.extend(self.buffer_temps.values().copied());
        out.extend(self.arg_temps.values().copied());
        // `assign/…` and `arg…/…` temporaries hold adjoints; `result/…`
        // ones hold a call's original result too, others are integers
        // or original values.
        out.extend(
            self.temps
                .iter()
                .filter(|(k, _)| k.starts_with("assign/") || k.starts_with("arg"))
                .map(|(_, &t)| t),
        );
        out
    }

    fn start_proc(&mut self, p: ProcId, hoisted: &[SymId]) {
        self.proc = p;
        self.namer.enter_proc(p);
        self.stmts.clear();
        self.locals.clear();
        self.counters.clear();
        self.firsts.clear();
        self.temps.clear();
        self.arg_temps.clear();
        self.buffer_temps.clear();
        self.branch = None;
        self.last_temp = None;
        self.result_adjoint = None;
        self.result_pointer_adjoint = None;
        self.hoisted = hoisted.to_vec();
        self.static_inits.clear();
        if let Some(b) = &self.program.proc(p).body {
            collect_static_inits(&b.stmts, &mut self.static_inits);
        }
        // Locals of this procedure get fresh adjoints per procedure.
        let own: Vec<SymId> = self
            .bsyms
            .keys()
            .copied()
            .filter(|s| self.program.sym(*s).kind != SymKind::Global)
            .collect();
        for s in own {
            self.bsyms.remove(&s);
        }
        // Hoisted locals get names of their own: one declared in an inner
        // block may share its name with another local, a parameter, or a
        // global or procedure it hid only inside that block, and at the
        // top it would hide them everywhere (`adjoint/hoist`).
        let mut seen: HashSet<String> = self
            .program
            .proc(p)
            .params
            .iter()
            .map(|&q| self.program.sym(q).name.clone())
            .collect();
        for &s in hoisted {
            let name = self.out.symbols[s.index()].name.clone();
            if !seen.insert(name.clone()) || self.namer.is_global(&name) {
                let fresh = self.namer.fresh_local(&name);
                self.out.symbols[s.index()].name = fresh.clone();
                seen.insert(fresh);
            } else {
                // A name given by an earlier pass over this procedure (the
                // `k0` of `f_fwd`, again in `f_bwd`) is taken here too.
                self.namer.reserve_local(&name);
            }
        }
        self.private_adjoints.clear();
        let mut assigned = HashSet::default();
        let mut field_assigned = HashSet::default();
        if let Some(b) = &self.program.proc(p).body {
            assigned_vars(&b.stmts, &mut assigned, &mut field_assigned);
        }
        // A called procedure that may overwrite active memory its caller
        // sees (through a pointer formal or a global) zeroes that memory's
        // adjoint in its backward sweep, which may be the very adjoint the
        // caller passed for a by-value argument (`g(&p, p)`, `g(gv)`): its
        // by-value parameters then get private adjoints (`adjoint/by-value`).
        let writes_visible = !self.heads.contains(&p)
            && self.a.summaries.get(&p).is_some_and(|sm| {
                sm.writes.iter().any(|&z| {
                    let zone = self.a.locs.zone(z);
                    let obj = self.a.locs.object(zone.obj);
                    self.a.is_diff_zone(z)
                        && zone.real
                        && (obj.owner.is_none()
                            || matches!(obj.kind, crate::analysis::locs::ObjKind::Target { .. }))
                })
            });
        for &s in &self.program.proc(p).params.clone() {
            let sym = self.program.sym(s);
            // A by-value real or struct that is assigned, a part of which
            // is assigned, or whose address is taken (a callee may write
            // it) (`adjoint/by-value`, `adjoint/struct-by-value`).
            if (assigned.contains(&s) || field_assigned.contains(&s) || writes_visible)
                && (real_rank(self.program, &sym.ty) > 0 || is_struct(self.program, &sym.ty))
                && self.diff.syms.contains(&s)
            {
                let name = self.namer.fresh_local(&format!("{}b_local", sym.name));
                let mut ty = self.types.of(self.program, &sym.ty);
                ty.is_const = false;
                let local = self.new_sym(&name, ty.clone(), SymKind::Local);
                let zero = self.zero_init(&ty);
                self.locals.push((local, Some(zero)));
                self.private_adjoints.insert(s, local);
            }
        }
        let proc = self.program.proc(p);
        if is_struct(self.program, &proc.ret) && self.diff.results.contains(&p) {
            // `adjoint/struct-result`: a struct result's adjoint, by value.
            let ty = self.types.of(self.program, &proc.ret);
            let name = self.namer.fresh_local(&format!("{}b", proc.name));
            self.result_adjoint = Some(self.new_sym(&name, ty, SymKind::Param));
        } else if real_rank(self.program, &proc.ret) > 0 && self.diff.results.contains(&p) {
            let ty = real_of_rank(real_rank(self.program, &proc.ret));
            let name = self.namer.fresh_local(&format!("{}b", proc.name));
            self.result_adjoint = Some(self.new_sym(&name, ty, SymKind::Param));
        } else if is_pointer(self.program, &proc.ret) && self.diff.results.contains(&p) {
            // `adjoint/pointer-result`: `T_b **Pb` (adjoint memory is
            // written: no `const`, even under a `const double *` result).
            let mut ty = self.types.of(self.program, &proc.ret);
            strip_const(&mut ty);
            let name = self.namer.fresh_local(&format!("{}b", proc.name));
            self.result_pointer_adjoint =
                Some(self.new_sym(&name, ty.pointer_to(), SymKind::Param));
        }
    }

    fn span(&self) -> Span {
        self.stmts.last().map(|s| s.span).unwrap_or_default()
    }

    fn stmt(&self) -> Option<&'x Stmt> {
        self.stmts.last().copied()
    }

    fn new_sym(&mut self, name: &str, ty: QualType, kind: SymKind) -> SymId {
        let scope = self.program.proc(self.proc).scope;
        let id = SymId(self.out.symbols.len() as u32);
        self.out.symbols.push(Symbol {
            name: name.to_string(),
            ty,
            kind,
            storage: Storage::Auto,
            scope,
            span: self.program.proc(self.proc).span,
        });
        id
    }

    fn var(&self, s: SymId) -> Expr {
        Expr::new(
            ExprKind::Var(s),
            self.out.symbols[s.index()].ty.clone(),
            self.span(),
        )
    }

    fn real(&self, x: f64, ty: QualType) -> Expr {
        let ty = if real_rank(&self.out, &ty) == 0 {
            QualType::double()
        } else {
            ty
        };
        let mut text = crate::back::c::real_text(x.abs());
        if real_rank(&self.out, &ty) == 1 {
            text.push('f');
        }
        let e = Expr::new(
            ExprKind::RealConst {
                value: x.abs(),
                text,
            },
            ty.clone(),
            self.span(),
        );
        if x < 0.0 {
            Expr::new(
                ExprKind::Unary {
                    op: UnOp::Neg,
                    arg: Box::new(e),
                },
                ty,
                self.span(),
            )
        } else {
            e
        }
    }

    fn int(&self, v: i64) -> Expr {
        Expr::new(
            ExprKind::IntConst {
                value: v,
                text: v.to_string(),
            },
            QualType::int(),
            self.span(),
        )
    }

    fn binary(&self, op: BinOp, l: Expr, r: Expr) -> Expr {
        let ty = if op.is_truth_valued() {
            QualType::int()
        } else if is_pointer(&self.out, &l.ty) {
            l.ty.clone()
        } else if is_pointer(&self.out, &r.ty) {
            r.ty.clone()
        } else if let Type::Array { elem, .. } = self.out.resolve(&l.ty.ty) {
            // An array operand decays to the address of its first element.
            (**elem).clone().pointer_to()
        } else if let Type::Array { elem, .. } = self.out.resolve(&r.ty.ty) {
            (**elem).clone().pointer_to()
        } else {
            let rank = real_rank(&self.out, &l.ty).max(real_rank(&self.out, &r.ty));
            if rank == 0 {
                l.ty.clone()
            } else {
                real_of_rank(rank)
            }
        };
        // Light algebra so the output reads as a person would write it.
        if op == BinOp::Mul {
            if is_one(&l) {
                return r;
            }
            if is_one(&r) {
                return l;
            }
        }
        if op == BinOp::Div && is_one(&r) {
            return l;
        }
        Expr::new(
            ExprKind::Binary {
                op,
                lhs: Box::new(l),
                rhs: Box::new(r),
            },
            ty,
            self.span(),
        )
    }

    fn neg(&self, e: Expr) -> Expr {
        if let ExprKind::Unary { op: UnOp::Neg, arg } = e.kind {
            return *arg;
        }
        let ty = e.ty.clone();
        Expr::new(
            ExprKind::Unary {
                op: UnOp::Neg,
                arg: Box::new(e),
            },
            ty,
            self.span(),
        )
    }

    fn assign(&self, lhs: Expr, rhs: Expr, sugar: AssignSugar) -> Stmt {
        Stmt {
            id: StmtId(0),
            kind: StmtKind::Assign { lhs, rhs, sugar },
            span: self.span(),
            comments: Comments::default(),
        }
    }

    fn call_stmt(&self, callee: ProcId, args: Vec<Expr>, result: Option<Expr>) -> Stmt {
        Stmt {
            id: StmtId(0),
            kind: StmtKind::Call {
                result,
                callee,
                args,
                decl_init: false,
            },
            span: self.span(),
            comments: Comments::default(),
        }
    }

    fn runtime_call(&self, name: &str, args: Vec<Expr>, result: Option<Expr>) -> Stmt {
        self.call_stmt(self.runtime[name], args, result)
    }

    fn tag(&self, mut code: Vec<Stmt>, rule: &str) -> Vec<Stmt> {
        if self.opts.explain {
            for s in &mut code {
                if s.comments
                    .trailing
                    .as_deref()
                    .is_none_or(|t| !t.contains("/* adjoint/"))
                {
                    let tag = format!("/* {rule} */");
                    s.comments.trailing = Some(match s.comments.trailing.take() {
                        Some(t) => format!("{tag} {t}"),
                        None => tag,
                    });
                }
            }
        }
        code
    }

    fn expr_of(&self, v: &AVal<'a>) -> Result<Expr, ApplyError> {
        Ok(match v {
            AVal::Expr(e) => (*e).clone(),
            AVal::New(e) => e.clone(),
            AVal::Num(x) => self.real(*x, QualType::double()),
            AVal::Arg(s, i) => self.arg_expr(s, *i).clone(),
            AVal::Sym(s) => self.var(*s),
            AVal::Popped(_, e) => e.clone(),
            _ => return Err(ApplyError::new("an expression was expected")),
        })
    }

    fn code_of(&self, v: AVal<'a>) -> Result<Vec<Stmt>, ApplyError> {
        Ok(match v {
            AVal::Code(c) => c,
            AVal::Stmt(s) => vec![s.clone()],
            AVal::List(items) => {
                let mut out = Vec::new();
                for i in items {
                    out.extend(self.code_of(i)?);
                }
                out
            }
            AVal::Atom(a) if &*a == "none" => Vec::new(),
            _ => return Err(ApplyError::new("statements were expected")),
        })
    }

    fn arg_expr(&self, s: &'a Stmt, i: usize) -> &'a Expr {
        match &s.kind {
            StmtKind::Call { args, .. } => &args[i],
            _ => unreachable!("arguments of a non-call"),
        }
    }

    fn zones_of(&self, e: &Expr) -> Vec<Zone> {
        self.a
            .facts
            .get(&self.proc)
            .and_then(|f| f.ref_zones.get(&crate::analysis::facts::key(e)))
            .cloned()
            .unwrap_or_default()
    }

    fn is_split(&self) -> bool {
        !self.heads.contains(&self.proc)
    }

    /// In a split procedure, is `z` caller-visible memory whose value at
    /// entry a caller reads after `P_bwd` (`tbr/caller-restore`)? Then
    /// `P_fwd` saves it wherever it overwrites it, and `P_bwd` restores
    /// it.
    fn caller_needs(&self, z: Zone) -> bool {
        self.is_split()
            && !matches!(
                self.a.locs.object(self.a.locs.zone(z).obj).kind,
                ObjKind::Var(v) if self.program.sym(v).kind != SymKind::Global
            )
            && self
                .a
                .caller_restore
                .get(&self.proc)
                .is_some_and(|r| r.contains(&z))
    }

    /// Must the forward sweep save the value `lhs` holds before the current
    /// statement overwrites it? restore(I) meets its zones, or (split) the
    /// caller sees the memory (`adjoint/proc-split`).
    fn must_save(&self, lhs: &Expr) -> bool {
        let Some(s) = self.stmt() else { return false };
        let restore: Set = self.needed_here();
        let zones = self.zones_of(lhs);
        // A real's old value is read back only by the partials of active
        // statements, which the analyses' restore(I) and TBR⁻(I) already
        // hold (deriv-use), so `s += a * b` does not save s. An integer or
        // pointer read by its own right-hand side (`i++`) is still saved:
        // adjoint references the host emits for statements the analyses
        // do not count as active (`yb[i] = 0.0`) read it as an address,
        // and a for loop's step is left out of restore(I) altogether.
        let loop_step = self
            .a
            .facts
            .get(&self.proc)
            .and_then(|f| f.point_of.get(&s.id).map(|&i| f.points[i].loop_step))
            .unwrap_or(true);
        let real_lhs = real_rank(self.program, &lhs.ty) > 0;
        let read_by_itself = match &s.kind {
            StmtKind::Assign { rhs, .. } if loop_step || !real_lhs => {
                let mut hit = false;
                visit(rhs, &mut |x| {
                    if self.a.is_ref(x) && self.zones_of(x).iter().any(|z| zones.contains(z)) {
                        hit = true;
                    }
                });
                hit
            }
            _ => false,
        };
        read_by_itself
            || zones.iter().any(|z| restore.contains(z))
            || zones.iter().any(|&z| self.caller_needs(z))
    }

    /// Zones the forward sweep must keep for the backward sweep at the
    /// current statement: restore(I), widened with TBR⁻(I).
    fn needed_here(&self) -> Set {
        let Some(s) = self.stmt() else {
            return Set::new();
        };
        let mut set = self.a.restore(self.proc, s.id);
        set.extend(self.a.tbr_before(self.proc, s.id));
        set
    }

    fn must_save_sym(&self, v: SymId) -> bool {
        let needed = self.needed_here();
        self.a
            .locs
            .object_zones(self.a.locs.of_sym(v))
            .any(|z| needed.contains(&z))
    }

    /// What the current statement saves, as references.
    fn saved_refs(&self) -> Result<Vec<Expr>, ApplyError> {
        let Some(s) = self.stmt() else {
            return Ok(Vec::new());
        };
        match &s.kind {
            StmtKind::Assign { lhs, .. } => Ok(if self.must_save(lhs) {
                vec![lhs.clone()]
            } else {
                Vec::new()
            }),
            StmtKind::Call { result, callee, .. } => {
                // (A call setting pointers along is split though passive:
                // `P_fwd` saves what it overwrites, as an active one does.)
                let active_split = (self.a.is_active_call(self.proc, s.id)
                    || self.diff.moves_derivative_pointers(self.program, s))
                    && self.program.proc(*callee).body.is_some()
                    && !self.is_joint_call(s);
                self.call_saves(s.id, result.as_ref(), *callee, !active_split)
            }
            _ => Ok(Vec::new()),
        }
    }

    /// `v := INIT` as assignments: a struct field by field, an array
    /// element by element (`adjoint/struct-init`, `adjoint/declarator-list`).
    fn init_assign_code(&mut self, v: SymId, init: &Init) -> Result<Vec<Stmt>, ApplyError> {
        let var = self.var(v);
        let mut strings = false;
        visit_init(init, &mut |e| {
            strings |= matches!(e.kind, ExprKind::StrConst(_));
        });
        // A `char *` set to a literal is an ordinary assignment.
        let array = matches!(
            self.out.resolve(&self.out.symbols[v.index()].ty.ty),
            Type::Array { .. }
        );
        if strings && array {
            // The declaration moves to the top of the procedure and its
            // initializer becomes assignments, which C has not for arrays:
            // one per character (`adjoint/init-string`).
            let name = &self.out.symbols[v.index()].name;
            let refused = || {
                ApplyError::new(format!(
                    "the adjoint mode does not yet support this string literal initializer of '{name}'"
                ))
            };
            let (Init::Expr(e), Type::Array { elem, len }) =
                (init, self.out.resolve(&self.out.symbols[v.index()].ty.ty))
            else {
                return Err(refused());
            };
            let ExprKind::StrConst(spelling) = &e.kind else {
                return Err(refused());
            };
            let (Some(bytes), Some(n)) =
                (string_bytes(spelling), len.as_ref().and_then(|l| l.value))
            else {
                return Err(refused());
            };
            let elem_ty = (**elem).clone();
            let mut code = Vec::new();
            for k in 0..n {
                let b = bytes.get(k as usize).copied().unwrap_or(0);
                let target = Expr::new(
                    ExprKind::Index {
                        base: Box::new(var.clone()),
                        index: Box::new(self.int(k as i64)),
                    },
                    elem_ty.clone(),
                    self.span(),
                );
                let c = Expr::new(
                    ExprKind::CharConst {
                        value: i64::from(b),
                        text: char_spelling(b),
                    },
                    QualType::int(),
                    self.span(),
                );
                code.push(self.assign(target, c, AssignSugar::Plain));
            }
            return Ok(code);
        }
        if let Init::Expr(e) = init {
            return Ok(vec![self.assign(var, e.clone(), AssignSugar::Plain)]);
        }
        let mut addresses = false;
        visit_init(init, &mut |e| {
            addresses |= super::names::is_address(self.program, &e.ty)
                && (self.is_diff_address(e)
                    || address_root(e).is_some_and(|r| self.diff.syms.contains(&r)));
        });
        if addresses {
            // Each such item needs its adjoint pointer set and restored
            // (`adjoint/assign-pointer`), which the list does not go through.
            return Err(ApplyError::new(format!(
                "the adjoint mode does not yet support an initialiser list holding addresses of active memory ('{}'): assign its elements one by one",
                self.out.symbols[v.index()].name
            )));
        }
        // `adjoint/struct-init`, `adjoint/declarator-list`: one assignment
        // per scalar of the variable, C's zero where the list gives none.
        scalar_assignments(&self.out, &var, init, self.span()).ok_or_else(|| {
            ApplyError::new("internal error: an initialiser path outside its variable")
        })
    }

    /// `base` followed along an initialiser path; for an adjoint `T_b`
    /// base (`adjoint`), fields are found by name and a field the adjoint
    /// type lacks (never active) gives `None`.
    fn follow(
        &self,
        base: Expr,
        path: &[InitStep],
        adjoint: bool,
    ) -> Result<Option<Expr>, ApplyError> {
        let mut e = base;
        for step in path {
            e = match *step {
                InitStep::Field(sid, k) if adjoint => {
                    let name = self.program.strukt(sid).fields[k].name.clone();
                    match field_of(&self.out, e, &name, self.span()) {
                        Ok(f) => f,
                        Err(_) => return Ok(None),
                    }
                }
                step => follow_step(&self.out, e, step, self.span())
                    .ok_or_else(|| ApplyError::new("internal error: an index into a non-array"))?,
            };
        }
        Ok(Some(e))
    }

    /// A copy of original statements to run as they are in the forward
    /// sweep (`adjoint/checkpoint`): declarations, hoisted already,
    /// become the assignments of their initialisers.
    fn plain_copy(&mut self, stmts: &[Stmt]) -> Result<Vec<Stmt>, ApplyError> {
        let mut out = Vec::new();
        for st in stmts {
            let mut st = st.clone();
            match &mut st.kind {
                // `adjoint/decl-static`: declared at the top already.
                StmtKind::Decl {
                    storage: Storage::Static,
                    ..
                } => continue,
                StmtKind::Decl { vars, .. } => {
                    let mut code = Vec::new();
                    for d in vars.iter() {
                        if let Some(init) = &d.init {
                            code.extend(self.init_assign_code(d.sym, init)?);
                        }
                    }
                    if let Some(first) = code.first_mut() {
                        first.comments = st.comments.clone();
                    }
                    out.extend(code);
                    continue;
                }
                StmtKind::Call { decl_init, .. } => *decl_init = false,
                StmtKind::If { then, other, .. } => {
                    then.stmts = self.plain_copy(&then.stmts)?;
                    if let Some(o) = other {
                        o.stmts = self.plain_copy(&o.stmts)?;
                    }
                }
                StmtKind::Loop { header, body } => {
                    if let LoopHeader::For { init, step, .. } = header {
                        *init = self.plain_copy(init)?;
                        *step = self.plain_copy(step)?;
                    }
                    body.stmts = self.plain_copy(&body.stmts)?;
                }
                StmtKind::Block(b) => b.stmts = self.plain_copy(&b.stmts)?,
                _ => {}
            }
            out.push(st);
        }
        Ok(out)
    }

    /// `isJoint`: the call is checkpointed (`adjoint/call-joint`). The
    /// analyses decide it (`pred/checkpointed-call`), since TBR after a
    /// split call differs (`tbr/call-exit`).
    fn is_joint_call(&self, s: &Stmt) -> bool {
        self.a.is_checkpointed_call(self.proc, s.id)
    }

    /// The call the rule `head` is translating, with its callee's forward
    /// or backward sweep procedure.
    fn current_call_sweep(
        &self,
        head: &str,
        sweep: Sweep,
    ) -> Result<(&'x Stmt, ProcId), ApplyError> {
        let outside = || ApplyError::new(format!("'{head}' outside a call"));
        let s = self.stmt().ok_or_else(outside)?;
        let StmtKind::Call { callee, .. } = &s.kind else {
            return Err(outside());
        };
        let pair = self.aprocs.get(callee);
        let (proc, what) = match sweep {
            Sweep::Forward => (pair.and_then(|a| a.fwd), "forward"),
            Sweep::Backward => (pair.and_then(|a| a.bwd), "backward"),
        };
        let proc = proc.ok_or_else(|| {
            ApplyError::new(format!(
                "'{}' has no {what} sweep procedure",
                self.program.proc(*callee).name
            ))
        })?;
        Ok((s, proc))
    }

    /// The call being translated, its `P_fwd`, the arguments `P_fwd`
    /// takes (`fwd_args`, the adjoint arguments from `argsb`) and the
    /// call's result: what `call-forward` and `call-forward-pointer` build
    /// on.
    fn forward_call(
        &mut self,
        head: &str,
        argsb: &AVal<'x>,
    ) -> Result<ForwardCall<'x>, ApplyError> {
        let (s, fwd) = self.current_call_sweep(head, Sweep::Forward)?;
        let StmtKind::Call {
            result,
            args,
            callee,
            ..
        } = &s.kind
        else {
            unreachable!("a call, checked by current_call_sweep")
        };
        let args = self.fwd_args(*callee, args, argsb)?;
        Ok(ForwardCall {
            stmt: s,
            fwd,
            args,
            result: result.as_ref(),
        })
    }

    /// `adjoint/comments`: every comment of the original body appears in
    /// the output. A comment whose statement the forward sweep dropped
    /// (a value only its derivative needed) goes to the first statement
    /// built for that statement (its backward sweep), or, when nothing
    /// was built for it, to the first statement built for a later one.
    fn keep_user_comments(&self, body: &mut [Stmt]) {
        let Some(orig) = &self.program.proc(self.proc).body else {
            return;
        };
        let mut present = self.comments_elsewhere.clone();
        crate::il::visit_stmts(body, &mut |st| {
            present.extend(st.comments.leading.iter().map(|c| c.as_str()));
            present.extend(st.comments.trailing.as_deref());
        });
        let mut missing: Vec<(Span, Vec<String>)> = Vec::new();
        crate::il::visit_stmts(&orig.stmts, &mut |st| {
            let lost: Vec<String> = st
                .comments
                .leading
                .iter()
                .chain(st.comments.trailing.as_ref())
                .filter(|c| !present.contains(c.as_str()))
                .cloned()
                .collect();
            if !lost.is_empty() {
                missing.push((st.span, lost));
            }
        });
        for (span, lost) in missing {
            let target = find_stmt_mut(body, &|s| s.span == span)
                .is_some()
                .then_some(span);
            let found = match target {
                Some(span) => find_stmt_mut(body, &|s| s.span == span),
                None => find_stmt_mut(body, &|s| s.span.file == span.file && s.span.lo > span.lo),
            };
            if let Some(st) = found {
                let mut leading = lost;
                leading.append(&mut st.comments.leading);
                st.comments.leading = leading;
            }
        }
    }

    /// `adjoint/unread-restores`: a local scalar or by-value parameter
    /// that the backward sweep `bwd` never reads (`n` of `while (n-- >
    /// 0)`, saved at `n--` as an integer read by its own update, when the
    /// loop is replayed from its count) needs none of the values the
    /// forward sweep saved for it: its pushes in `fwd` and its pops in
    /// `bwd` go. Every push of a variable's value is mirrored by a pop
    /// into that variable at the mirrored point, so the stack stays
    /// balanced.
    fn drop_unread_restores(&self, fwd: &mut Vec<Stmt>, bwd: &mut Vec<Stmt>) {
        const PAIRS: [(&str, &str); 5] = [
            ("aioli_push_real8", "aioli_pop_real8"),
            ("aioli_push_real4", "aioli_pop_real4"),
            ("aioli_push_int", "aioli_pop_int"),
            ("aioli_push_long", "aioli_pop_long"),
            ("aioli_push_pointer", "aioli_pop_pointer"),
        ];
        let pushes: HashSet<ProcId> = PAIRS
            .iter()
            .filter_map(|(push, _)| self.runtime.get(push).copied())
            .collect();
        let pops: HashSet<ProcId> = PAIRS
            .iter()
            .filter_map(|(_, pop)| self.runtime.get(pop).copied())
            .collect();
        let proc = self.program.proc(self.proc);
        let scalar = |v: SymId| {
            matches!(
                self.out.resolve(&self.out.symbols[v.index()].ty.ty),
                Type::Int { .. } | Type::Real(_) | Type::Pointer(_)
            )
        };
        let mut read = HashSet::default();
        reads(bwd, &mut read);
        // A variable whose address is taken may be read through it.
        let mut parts = HashSet::default();
        for code in [&*fwd, &*bwd] {
            crate::il::visit_stmts(code, &mut |st| {
                for e in super::names::stmt_exprs(st) {
                    visit(e, &mut |x| {
                        if let ExprKind::AddrOf(r) = &x.kind {
                            parts.extend(super::names::root_sym(r));
                        }
                    });
                }
            });
        }
        let unread: HashSet<SymId> = self
            .hoisted
            .iter()
            .chain(proc.params.iter())
            .copied()
            .filter(|&v| scalar(v) && !read.contains(&v) && !parts.contains(&v))
            .collect();
        if unread.is_empty() {
            return;
        }
        let of_unread = |e: &Expr| match &peel_casts(e).kind {
            ExprKind::Var(v) => unread.contains(v),
            _ => false,
        };
        retain_simple(fwd, &mut |s| match &s.kind {
            StmtKind::Call { callee, args, .. } if pushes.contains(callee) => {
                !(args.len() == 1 && of_unread(&args[0]))
            }
            _ => true,
        });
        retain_simple(bwd, &mut |s| match &s.kind {
            StmtKind::Call {
                callee,
                result: Some(r),
                ..
            } if pops.contains(callee) => !of_unread(r),
            _ => true,
        });
    }

    /// `adjoint/kept-locals`: the locals of the procedure being built (or
    /// of the one it copies) that were given static storage.
    fn own_frame_statics(&self) -> Vec<SymId> {
        let original = self
            .program
            .specialized
            .get(&self.proc)
            .copied()
            .unwrap_or(self.proc);
        self.program
            .frame_statics
            .iter()
            .filter(|&(_, &p)| p == original)
            .map(|(&s, _)| s)
            .collect()
    }

    /// `adjoint/kept-locals`: a local's adjoint is zero where the backward
    /// sweep of its procedure starts (the local is dead once the procedure
    /// returns); given static storage, it holds what the last backward
    /// sweep left, so it is set to zero there. (A head's are, with its
    /// other globals, by `adjoint/global-exit`.)
    fn frame_adjoint_resets(&mut self) -> Vec<Stmt> {
        if self.a.heads.iter().any(|h| h.proc == self.proc) {
            return Vec::new();
        }
        let statics = self.own_frame_statics();
        let out = self.zero_adjoints_of(statics);
        self.tag(out, "adjoint/kept-locals")
    }

    /// `v̄ := 0` over the whole of the adjoint of each of `vars` that has
    /// one (pointers and read-only variables have none to zero).
    fn zero_adjoints_of(&mut self, vars: impl IntoIterator<Item = SymId>) -> Vec<Stmt> {
        let mut out = Vec::new();
        for v in vars {
            let ty = &self.program.sym(v).ty;
            if !self.diff.syms.contains(&v)
                || is_pointer(self.program, ty)
                || is_read_only(self.program, ty)
            {
                continue;
            }
            let Ok(b) = self.bsym(v) else { continue };
            let vb = self.var(b);
            if let Ok(code) = self.zero_memory(vb, 0) {
                out.extend(code);
            }
        }
        out
    }

    /// `adjoint/global-exit`: at the start of a head's backward sweep, the
    /// adjoint of each active global that the head (or a callee) reads or
    /// writes and that is not one of its dependents is set to zero: that global's weight
    /// at the head's exit is zero, and its adjoint's storage holds what
    /// the last call left there (the gradient with respect to its value
    /// at entry).
    fn exit_adjoint_resets(&mut self) -> Vec<Stmt> {
        let Some(head) = self.a.heads.iter().find(|h| h.proc == self.proc) else {
            return Vec::new();
        };
        let dependents: HashSet<SymId> = head
            .dependents
            .iter()
            .filter_map(|d| match d {
                crate::analysis::head::HeadVar::Global(g) => Some(*g),
                _ => None,
            })
            .collect();
        // The globals the head's code (its callees' included) reads or
        // writes: its summary's interface zones.
        let mut used: BTreeSet<SymId> = BTreeSet::new();
        if let Some(sm) = self.a.summaries.get(&self.proc) {
            for &z in sm.reads.iter().chain(&sm.writes) {
                if let ObjKind::Var(v) = self.a.locs.object(self.a.locs.zone(z).obj).kind
                    && self.program.sym(v).kind == SymKind::Global
                {
                    used.insert(v);
                }
            }
        }
        let out = self.zero_adjoints_of(used.into_iter().filter(|g| !dependents.contains(g)));
        self.tag(out, "adjoint/global-exit")
    }

    /// `adjoint/fwd-adjoint-pointers`: a forward sweep reads no adjoint
    /// value, so an adjoint array local (or zero buffer) it mentions is
    /// an address it keeps (`pb = tb` for `p = t`, `tb` passed to a
    /// callee's `P_fwd`) for the backward sweep. `P_fwd` and `P_bwd` have
    /// two frames, so that address would be the dead `P_fwd` frame's:
    /// refused (the fused `P_b` and a head's `P_b` have one frame).
    fn refuse_local_adjoint_addresses(&mut self, fwd: &[Stmt]) -> Result<(), (ApplyError, Span)> {
        // The variables whose address the code takes: `&v…`, or an array
        // `v` standing for its first element's.
        let mut addressed = HashSet::default();
        // A callee's `P_fwd` given a local's adjoint for a formal that the
        // callee only reads or writes through (`mesh_init(&m, &mb, n)`
        // storing `mb->w = calloc(...)`) keeps no address: what it stores
        // there is a value, carried to `P_bwd` with the local.
        let fwd_of: HashMap<ProcId, ProcId> = self
            .aprocs
            .iter()
            .filter_map(|(&orig, a)| Some((a.fwd?, orig)))
            .collect();
        let passed_through = |st: &Stmt, arg: usize| -> bool {
            let StmtKind::Call { callee, args, .. } = &st.kind else {
                return false;
            };
            let Some(&orig) = fwd_of.get(callee) else {
                return false;
            };
            let local = match &args[arg].kind {
                ExprKind::AddrOf(r) => matches!(r.kind, ExprKind::Var(_)),
                ExprKind::Var(_) => true,
                _ => false,
            };
            local
                && self.fwd_adjoint_formal(orig, arg).is_some_and(|k| {
                    super::names::only_dereferenced(self.program, orig, k, &mut Vec::new())
                })
        };
        // `adjoint/call-pointer-result`: `v.d = P_fwd(…, &vb.d)` gives
        // `P_fwd` where to store the result's adjoint pointer, which it
        // does not keep (the same as `&pb` for a pointer `pb`, below).
        let result_adjoint_out = |st: &Stmt, arg: usize| -> bool {
            let StmtKind::Call { callee, args, .. } = &st.kind else {
                return false;
            };
            fwd_of.get(callee).is_some_and(|&orig| {
                arg + 1 == args.len()
                    && is_pointer(self.program, &self.program.proc(orig).ret)
                    && matches!(&args[arg].kind, ExprKind::AddrOf(r) if is_pointer(&self.out, &r.ty))
            })
        };
        crate::il::visit_stmts(fwd, &mut |st| {
            let exprs: Vec<&Expr> = match &st.kind {
                StmtKind::Call { args, result, .. } => result
                    .iter()
                    .chain(
                        args.iter()
                            .enumerate()
                            .filter(|&(k, _)| !passed_through(st, k) && !result_adjoint_out(st, k))
                            .map(|(_, a)| a),
                    )
                    .collect(),
                _ => super::names::stmt_exprs(st),
            };
            for e in exprs {
                visit(e, &mut |x| match &x.kind {
                    // (`&s.v[1]` with `v` a pointer member is an address
                    // in the memory `v` points to, not in `s`.)
                    ExprKind::AddrOf(r) => {
                        addressed.extend(own_storage_root(&self.out, r));
                    }
                    ExprKind::Var(v)
                        if matches!(
                            self.out.resolve(&self.out.symbols[v.index()].ty.ty),
                            Type::Array { .. }
                        ) =>
                    {
                        addressed.insert(*v);
                    }
                    _ => {}
                });
            }
        });
        let local_adjoints = self
            .bsyms
            .iter()
            .filter(|(s, _)| self.program.sym(**s).kind != SymKind::Global)
            .map(|(s, b)| (*b, *s))
            .chain(self.buffer_temps.iter().map(|(s, b)| (*b, *s)));
        let mut refused = None;
        for (b, s) in local_adjoints {
            let sym = &self.out.symbols[b.index()];
            // An adjoint pointer whose address is taken is an out-parameter
            // (`p = P_fwd(…, &pb)`, `adjoint/call-pointer-result`): the
            // address it receives is saved by value, not its own storage.
            let pointer = matches!(self.out.resolve(&sym.ty.ty), Type::Pointer(_));
            if sym.kind == SymKind::Param || pointer || !addressed.contains(&b) {
                continue;
            }
            // `adjoint/kept-locals`: the translation is redone with it
            // static where that is allowed.
            self.kept_locals.insert(s);
            if refused.is_some() {
                continue;
            }
            let name = &self.program.proc(self.proc).name;
            let local = &self.program.sym(s).name;
            // A head's own pair (`--split`) is left out with this reason;
            // a callee reached by split calls is refused with it.
            let message = if self
                .aprocs
                .get(&self.proc)
                .is_some_and(|a| a.joint.is_some())
            {
                format!(
                    "the adjoint of the local '{local}' would be kept by address from '{name}_fwd' to '{name}_bwd', which run in two frames; allocate '{local}' with malloc or pass it in as a parameter to get the pair"
                )
            } else {
                format!(
                    "the adjoint mode does not handle yet, in '{name}', which a split call reaches, a pointer to the local '{local}' kept from its forward sweep to its backward sweep (they run in two frames, so its adjoint would be a different array); allocate '{local}' with malloc, pass it in as a parameter, or checkpoint the calls of '{name}' (remove `--split` or `$AD NOCHECKPOINT`, and pass it memory of known extent)"
                )
            };
            refused = Some((ApplyError::new(message), self.program.sym(s).span));
        }
        if let Some(r) = refused {
            return Err(r);
        }
        // A pointer set to a local's address (`double **pu = &u;`, or its
        // adjoint `pub = &ub`) and saved for the backward sweep: restored
        // there, it would point into the forward sweep's dead frame.
        let mut holds_local: HashMap<SymId, SymId> = HashMap::default();
        crate::il::visit_stmts(fwd, &mut |st| {
            if let StmtKind::Assign { lhs, rhs, .. } = &st.kind
                && let ExprKind::Var(p) = lhs.kind
                && let ExprKind::AddrOf(r) = &crate::il::strip_casts(rhs).kind
                && let Some(l) = own_storage_root(&self.out, r)
            {
                let sym = &self.out.symbols[l.index()];
                if matches!(sym.kind, SymKind::Local | SymKind::Temp)
                    && sym.storage != crate::il::Storage::Static
                {
                    holds_local.insert(p, l);
                }
            }
        });
        let push = self.runtime["aioli_push_pointer"];
        let mut kept: Vec<SymId> = Vec::new();
        crate::il::visit_stmts(fwd, &mut |st| {
            if let StmtKind::Call { callee, args, .. } = &st.kind
                && *callee == push
                && let Some(ExprKind::Var(p)) =
                    args.first().map(|a| &crate::il::strip_casts(a).kind)
                && let Some(&l) = holds_local.get(p)
                && !kept.contains(&l)
            {
                kept.push(l);
            }
        });
        self.kept_locals.extend(kept.iter().copied());
        if let Some(&l) = kept.first() {
            let name = &self.program.proc(self.proc).name;
            let local = &self.out.symbols[l.index()].name;
            let message = if self
                .aprocs
                .get(&self.proc)
                .is_some_and(|a| a.joint.is_some())
            {
                format!(
                    "the address of the local '{local}' would be kept from '{name}_fwd' to '{name}_bwd', which run in two frames; to get the pair, keep no address of a local variable in a pointer the derivatives read"
                )
            } else {
                format!(
                    "the adjoint mode does not handle yet, in '{name}', which a split call reaches, the address of the local '{local}' kept from its forward sweep to its backward sweep (they run in two frames); keep no address of a local variable in a pointer the derivatives read, or checkpoint the calls of '{name}' (remove `--split` or `$AD NOCHECKPOINT`)"
                )
            };
            return Err((ApplyError::new(message), self.out.symbols[l.index()].span));
        }
        Ok(())
    }

    /// The arguments of a call of `callee`'s `P_fwd`: the primal ones, each
    /// followed by its adjoint from `argsb` (the `P_bwd` argument list,
    /// `adjoint/actual-args`) where `P_fwd` takes it
    /// (`adjoint/fwd-adjoint-pointers`).
    fn fwd_args(
        &self,
        callee: ProcId,
        primal: &[Expr],
        argsb: &AVal<'x>,
    ) -> Result<Vec<Expr>, ApplyError> {
        let Some(needed) = self.fwd_needs.get(&callee).filter(|n| !n.is_empty()) else {
            return Ok(primal.to_vec());
        };
        let AVal::List(items) = argsb else {
            return Err(ApplyError::new(
                "'call-forward' takes the adjoint arguments",
            ));
        };
        let mut items = items.iter();
        let mut out = Vec::new();
        for (i, a) in primal.iter().enumerate() {
            out.push(a.clone());
            items.next();
            if !self.is_diff_formal(callee, i) {
                continue;
            }
            let ab = items
                .next()
                .ok_or_else(|| ApplyError::new("internal error: an adjoint argument is missing"))?;
            if !needed.contains(&i) {
                continue;
            }
            out.push(self.expr_of(ab)?);
        }
        Ok(out)
    }

    /// The snapshot of a checkpointed region (`adjoint/checkpoint`): the
    /// variables holding a zone the region reads that anything in the
    /// procedure writes, or a zone it writes that is TBR at its start or
    /// (in a split procedure) visible to the caller. Memory that is not a
    /// variable: an error, and the region is not checkpointed.
    fn region_snapshot(&self, region: &Stmt) -> Result<Vec<Expr>, String> {
        let (Some(f), Some(r)) = (self.a.facts.get(&self.proc), self.a.results.get(&self.proc))
        else {
            return Ok(Vec::new());
        };
        let mut inside = HashSet::default();
        crate::il::visit_stmts(std::slice::from_ref(region), &mut |x| {
            inside.insert(x.id);
        });
        let (mut reads, mut writes, mut written) = (Set::new(), Set::new(), Set::new());
        let mut first: Option<usize> = None;
        for (i, pt) in f.points.iter().enumerate() {
            written.extend(pt.effect.writes.iter().copied());
            if inside.contains(&pt.kind.stmt().id) {
                reads.extend(pt.effect.reads.iter().copied());
                writes.extend(pt.effect.writes.iter().copied());
                first = Some(first.map_or(i, |f: usize| f.min(i)));
            }
        }
        let tbr_at_start = first.map(|i| &r.tbr_in[i]);
        // Of the variables, only those the region may read before it
        // writes them (`left` in `double left = u[0]; … left = mid;` is
        // not).
        let mut exposed = HashSet::default();
        exposed_reads(
            std::slice::from_ref(region),
            &mut HashSet::default(),
            &mut exposed,
        );
        let mut zones: Set = reads
            .intersection(&written)
            .copied()
            .filter(
                |&z| match self.a.locs.object(self.a.locs.zone(z).obj).kind {
                    ObjKind::Var(v) => exposed.contains(&v),
                    _ => true,
                },
            )
            .collect();
        for &z in &writes {
            if tbr_at_start.is_some_and(|t| t.contains(&z)) || self.caller_needs(z) {
                zones.insert(z);
            }
        }
        let objs: BTreeSet<_> = zones.iter().map(|&z| self.a.locs.zone(z).obj).collect();
        self.whole_variables(objs).map_err(|name| {
            format!(
                "the snapshot of a checkpointed region needs {name}, whose size is not known here"
            )
        })
    }

    /// The variables holding memory objects, to be saved whole; else a
    /// description of the first object that is not a variable (memory
    /// reached through a pointer parameter, the heap: its size is not
    /// known here), quoted as the message puts it.
    fn whole_variables(&self, objs: BTreeSet<Obj>) -> Result<Vec<Expr>, String> {
        objs.into_iter()
            .map(|o| match self.a.locs.object(o).kind {
                ObjKind::Var(v)
                    if self.program.sym(v).kind != SymKind::Param
                        || !is_pointer(self.program, &self.program.sym(v).ty) =>
                {
                    Ok(self.var(v))
                }
                // A heap block has no source name (`alloc@N` is the
                // analyses' own).
                ObjKind::Heap { proc, .. } => Err(format!(
                    "a block that '{}' allocates",
                    self.program.proc(proc).name
                )),
                _ => Err(format!("'{}'", self.a.locs.object(o).name)),
            })
            .collect()
    }

    /// What the forward sweep saves before call `id`: its result when it
    /// must be saved, and with `own_writes`, the variables of restore(I)
    /// the call overwrites (a passive call, whose writes nothing else
    /// restores; a checkpointed call, whose snapshot they are, since
    /// restore(I) holds what the call reads, `deriv-use/call`). Memory
    /// that is not a variable has no known size here: an error.
    fn call_saves(
        &self,
        id: StmtId,
        result: Option<&Expr>,
        callee: ProcId,
        own_writes: bool,
    ) -> Result<Vec<Expr>, ApplyError> {
        let mut out = Vec::new();
        if let Some(r) = result
            && self.must_save(r)
        {
            out.push(r.clone());
        }
        if own_writes {
            // A passive call's own writes are saved here: nothing
            // else restores them.
            let mut restore = self.a.restore(self.proc, id);
            // What this call writes that a caller of this (split)
            // procedure reads back (`adjoint/proc-split`,
            // `tbr/caller-restore`).
            if let Some(f) = self.a.facts.get(&self.proc)
                && let Some(&i) = f.point_of.get(&id)
            {
                for &z in &f.points[i].effect.writes {
                    if self.caller_needs(z) {
                        restore.insert(z);
                    }
                }
            }
            // The result's reference is saved above, unless the callee
            // writes its zone too (`y[0] = g(y, s)`, g writing `y[1]`).
            let own = self
                .a
                .facts
                .get(&self.proc)
                .and_then(|f| Some(self.a.callee_writes(f, *f.point_of.get(&id)?)))
                .unwrap_or_default();
            let result_zones: Vec<Zone> = result
                .iter()
                .flat_map(|r| self.zones_of(r))
                .filter(|z| !own.contains(z))
                .collect();
            let mut objs = BTreeSet::new();
            for z in restore.iter().copied() {
                if result_zones.contains(&z) {
                    continue;
                }
                objs.insert(self.a.locs.zone(z).obj);
            }
            out.extend(self.whole_variables(objs).map_err(|name| {
                ApplyError::new(format!(
                    "the adjoint mode cannot yet save the memory that this call of '{}' overwrites in {name} (its size is not known here)",
                    self.program.proc(callee).name
                ))
            })?);
        }
        Ok(out)
    }

    /// The parts of a value, field by field for a struct (nested structs
    /// recursively); any other value is its own single part
    /// (`adjoint/struct-field-wise`).
    fn parts(&self, e: Expr) -> Vec<Expr> {
        match self.out.resolve(&e.ty.ty).clone() {
            Type::Struct(sid) => {
                let names: Vec<String> = self
                    .out
                    .strukt(sid)
                    .fields
                    .iter()
                    .map(|f| f.name.clone())
                    .collect();
                names
                    .iter()
                    .filter_map(|n| field_of(&self.out, e.clone(), n, self.span()).ok())
                    .flat_map(|f| self.member_parts(f))
                    .collect()
            }
            _ => vec![e],
        }
    }

    /// The parts of a struct member: a small fixed-size array member of
    /// reals element by element (`v.c[0]`, `v.c[1]`), so a whole struct
    /// holding one is copied, saved and differentiated like its scalars.
    fn member_parts(&self, m: Expr) -> Vec<Expr> {
        const MAX_ELEMENTS: u64 = 32;
        if let Type::Array {
            elem,
            len: Some(ArrayLen { value: Some(n), .. }),
        } = self.out.resolve(&m.ty.ty).clone()
            && n <= MAX_ELEMENTS
            && self.out.contains_real(&elem.ty)
        {
            return (0..n as i64)
                .flat_map(|k| {
                    let at = Expr::new(
                        ExprKind::Index {
                            base: Box::new(m.clone()),
                            index: Box::new(self.int(k)),
                        },
                        (*elem).clone(),
                        self.span(),
                    );
                    self.member_parts(at)
                })
                .collect();
        }
        self.parts(m)
    }

    /// The real parts of an adjoint value (a real, or a `T_b` struct field
    /// by field); a pointer or array member has no adjoint value to add:
    /// refused (`adjoint/struct-field-wise`).
    fn real_parts(&self, e: Expr) -> Result<Vec<Expr>, ApplyError> {
        let parts = self.parts(e);
        for p in &parts {
            if real_rank(&self.out, &p.ty) == 0 {
                return Err(ApplyError::new(
                    "the adjoint mode does not handle yet a whole struct value with a pointer or array member that has an adjoint (copied, passed or returned by value)",
                ));
            }
        }
        Ok(parts)
    }

    /// Pushes of a value: a struct field by field (`adjoint/struct-field-wise`).
    fn push_all(&self, r: &Expr) -> Vec<Stmt> {
        self.parts(r.clone())
            .iter()
            .map(|p| self.push_of(p))
            .collect()
    }

    /// The pops matching [`push_all`](Self::push_all), in reverse order.
    fn pop_all(&self, r: &Expr) -> Vec<Stmt> {
        self.parts(r.clone())
            .iter()
            .rev()
            .map(|p| self.pop_of(p))
            .collect()
    }

    /// `r := 0` for an adjoint reference, field by field for a `T_b`.
    fn zero_all(&self, r: Expr) -> Result<Vec<Stmt>, ApplyError> {
        Ok(self
            .real_parts(r)?
            .into_iter()
            .map(|p| {
                let zero = self.real(0.0, p.ty.clone());
                self.assign(p, zero, AssignSugar::Plain)
            })
            .collect())
    }

    /// `r += v` for adjoint values, field by field for a `T_b`.
    fn increment_all(&self, r: Expr, v: Expr) -> Result<Vec<Stmt>, ApplyError> {
        let rs = self.real_parts(r)?;
        let vs = self.real_parts(v)?;
        if rs.len() != vs.len() {
            return Err(ApplyError::new(
                "internal error: an adjoint increment between different struct types",
            ));
        }
        Ok(rs
            .into_iter()
            .zip(vs)
            .map(|(r, v)| {
                let rhs = self.binary(BinOp::Add, r.clone(), v);
                self.assign(r, rhs, AssignSugar::Compound(BinOp::Add))
            })
            .collect())
    }

    /// The adjoint type of a value of type `ty` (of the original program or
    /// already an adjoint type): `T_b` for a struct `T`.
    fn adjoint_type(&self, ty: &QualType) -> QualType {
        if let Type::Struct(s) = self.out.resolve(&ty.ty)
            && self.types.structs.values().any(|d| d == s)
        {
            return ty.clone();
        }
        self.types.of(self.program, ty)
    }

    fn push_of(&self, r: &Expr) -> Stmt {
        let resolved = self.out.resolve(&r.ty.ty).clone();
        match resolved {
            Type::Array { .. } => {
                let size = Expr::new(
                    ExprKind::SizeOfExpr(Box::new(r.clone())),
                    QualType::size_t(),
                    self.span(),
                );
                self.runtime_call("aioli_push_array", vec![self.void_pointer(r), size], None)
            }
            Type::Pointer(_) => {
                self.runtime_call("aioli_push_pointer", vec![self.void_pointer(r)], None)
            }
            Type::Real(RealKind::Float) => {
                self.runtime_call("aioli_push_real4", vec![r.clone()], None)
            }
            Type::Real(_) => self.runtime_call("aioli_push_real8", vec![r.clone()], None),
            Type::Int {
                kind: crate::il::IntKind::Long | crate::il::IntKind::LongLong,
                ..
            } => self.runtime_call("aioli_push_long", vec![r.clone()], None),
            _ => self.runtime_call("aioli_push_int", vec![r.clone()], None),
        }
    }

    /// `(void *)p`: the runtime takes plain `void *` (a `const void *`
    /// parameter makes compilers warn about uninitialised pointees), so
    /// `const` is cast away explicitly; the runtime only copies bytes.
    fn void_pointer(&self, e: &Expr) -> Expr {
        let void_ptr = QualType::void().pointer_to();
        Expr::new(
            ExprKind::Cast {
                to: void_ptr.clone(),
                arg: Box::new(e.clone()),
            },
            void_ptr,
            self.span(),
        )
    }

    fn pop_of(&self, r: &Expr) -> Stmt {
        let resolved = self.out.resolve(&r.ty.ty).clone();
        match resolved {
            Type::Array { .. } => {
                let size = Expr::new(
                    ExprKind::SizeOfExpr(Box::new(r.clone())),
                    QualType::size_t(),
                    self.span(),
                );
                self.runtime_call("aioli_pop_array", vec![r.clone(), size], None)
            }
            Type::Pointer(_) => self.runtime_call("aioli_pop_pointer", vec![], Some(r.clone())),
            Type::Real(RealKind::Float) => {
                self.runtime_call("aioli_pop_real4", vec![], Some(r.clone()))
            }
            Type::Real(_) => self.runtime_call("aioli_pop_real8", vec![], Some(r.clone())),
            Type::Int {
                kind: crate::il::IntKind::Long | crate::il::IntKind::LongLong,
                ..
            } => self.runtime_call("aioli_pop_long", vec![], Some(r.clone())),
            _ => self.runtime_call("aioli_pop_int", vec![], Some(r.clone())),
        }
    }

    /// The adjoint variable of `s`, created on first use.
    fn bsym(&mut self, s: SymId) -> Result<SymId, ApplyError> {
        if let Some(&b) = self.bsyms.get(&s) {
            return Ok(b);
        }
        let orig = self.program.sym(s).clone();
        if orig.kind == SymKind::Param {
            return Err(ApplyError::new(format!(
                "internal error: parameter '{}' has no adjoint parameter",
                orig.name
            )));
        }
        // `adjoint/struct-types`: a struct's adjoint has type `T_b`.
        let mut ty = self.types.of(self.program, &orig.ty);
        ty.is_const = false;
        strip_const(&mut ty);
        let id = if orig.kind == SymKind::Global {
            let name = self.namer.fresh(&format!("{}b", orig.name));
            let id = SymId(self.out.symbols.len() as u32);
            self.out.symbols.push(Symbol {
                name: name.clone(),
                ty,
                storage: Storage::Auto,
                ..orig
            });
            let g = self.program.global_scope;
            self.out.scopes[g.index()].vars.insert(name, id);
            id
        } else {
            // The local's name in the output (a hoisted one may have been
            // renamed).
            let base = &self.out.symbols[s.index()].name;
            let name = self.namer.fresh_local(&format!("{base}b"));
            let zero = self.zero_init(&ty);
            let id = self.new_sym(&name, ty, SymKind::Local);
            self.locals.push((id, Some(zero)));
            id
        };
        self.bsyms.insert(s, id);
        Ok(id)
    }

    /// A zero initialiser shaped like the type: `0.0`, `{0.0}`, and for a
    /// struct every field (so -Wmissing-field-initializers stays quiet).
    fn zero_init(&self, ty: &QualType) -> Init {
        match self.out.resolve(&ty.ty).clone() {
            Type::Array { elem, .. } => Init::List(vec![self.zero_init(&elem)], self.span()),
            Type::Struct(sid) => Init::List(
                self.out
                    .strukt(sid)
                    .fields
                    .iter()
                    .map(|f| self.zero_init(&f.ty))
                    .collect(),
                self.span(),
            ),
            Type::Pointer(_) | Type::Int { .. } => Init::Expr(self.int(0)),
            Type::Real(_) => Init::Expr(self.real(0.0, ty.clone())),
            _ => Init::Expr(self.int(0)),
        }
    }

    /// The adjoint reference of variable `s` (`adjoint/ref-var`).
    fn adjoint_var(&mut self, s: SymId) -> Result<Expr, ApplyError> {
        if let Some(&local) = self.private_adjoints.get(&s) {
            return Ok(self.var(local));
        }
        let b = self.bsym(s)?;
        let e = self.var(b);
        let orig = self.program.sym(s);
        // A real (or struct) passed by value has a pointer adjoint parameter.
        if orig.kind == SymKind::Param && !is_pointer(self.program, &orig.ty) {
            let ty = match self.out.resolve(&e.ty.ty) {
                Type::Pointer(t) => (**t).clone(),
                _ => orig.ty.clone(),
            };
            return Ok(Expr::new(ExprKind::Deref(Box::new(e)), ty, self.span()));
        }
        Ok(e)
    }

    /// `isDiff` of a reference, or of an address computed from one (`&r`,
    /// `p + k`, a cast).
    fn is_diff_address(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::AddrOf(r) => self.is_diff_address(r),
            ExprKind::Cast { arg, .. } => self.is_diff_address(arg),
            // `n > 2 ? x : x + 1` passed to a call (`adjoint/ref-cond`).
            ExprKind::Cond { then, other, .. } if is_pointer(self.program, &e.ty) => {
                self.is_diff_address(then) && self.is_diff_address(other)
            }
            ExprKind::Binary {
                op: BinOp::Add | BinOp::Sub,
                lhs,
                rhs,
            } if is_pointer(self.program, &e.ty) => {
                if super::names::is_address(self.program, &lhs.ty) {
                    self.is_diff_address(lhs)
                } else {
                    self.is_diff_address(rhs)
                }
            }
            ExprKind::Var(v) if is_pointer(self.program, &e.ty) => self.diff.syms.contains(v),
            // A table of pointers (`double *rows[n]` given to a helper
            // reading `A[i][j]`): diff when its pointers have adjoints.
            ExprKind::Var(v) if holds_pointers(self.program, &e.ty.ty) => {
                self.diff.syms.contains(v) || self.a.is_diff(self.proc, e)
            }
            // A pointer member or element whose target is diff (`a.v = buf`,
            // `rows[0] = a`), or a struct whose only diff part is such a
            // member's target.
            ExprKind::Field { .. } | ExprKind::Index { .. } | ExprKind::Deref(_)
                if is_pointer(self.program, &e.ty) =>
            {
                self.a.is_diff(self.proc, e) || self.diff.is_diff_ref(self.program, e)
            }
            ExprKind::Var(_) | ExprKind::Index { .. } | ExprKind::Field { .. }
                if is_struct(self.program, &e.ty) =>
            {
                self.a.is_diff(self.proc, e) || self.diff.is_diff_ref(self.program, e)
            }
            _ => self.a.is_diff(self.proc, e),
        }
    }

    /// Does `s` contain a passive call that overwrites active memory? Its
    /// backward sweep must zero those adjoints (`adjoint/call-passive`,
    /// `adjoint/call-dead`), which needs the control around it replayed.
    /// `adjoint/free-later`: does this `free` release only memory that a
    /// procedure the adjoint calls as it is allocated (a helper without
    /// differentiated versions, `w = mk(n)` or `grid_build(&g, n)`)? No
    /// allocation the adjoint reverses frees such memory, and the backward
    /// sweep may still read it.
    fn frees_unreversed(&self, s: &Stmt) -> bool {
        let Some(places) = self
            .a
            .facts
            .get(&self.proc)
            .and_then(|f| f.freed.get(&s.id))
        else {
            return false;
        };
        let real_places = || places.iter().filter(|&&p| p != NULL_PLACE);
        real_places().next().is_some()
            && real_places().all(|&p| self.a.locs.allocator(p).is_some_and(|a| self.unreversed(a)))
    }

    /// Does no sweep of this adjoint reverse `p`'s allocations (no
    /// differentiated version of `p`)?
    fn unreversed(&self, p: ProcId) -> bool {
        !self.aprocs.contains_key(&p)
    }

    /// Is something statement `s` writes diff-live after it?
    fn writes_live(&self, s: &Stmt) -> bool {
        let (Some(f), Some(r)) = (self.a.facts.get(&self.proc), self.a.results.get(&self.proc))
        else {
            return true;
        };
        let Some(&i) = f.point_of.get(&s.id) else {
            return true;
        };
        f.points[i]
            .effect
            .writes
            .iter()
            .any(|w| r.live_out[i].contains(w))
    }

    /// `adjoint/call-free-later`: a call of a procedure the adjoint does
    /// not reverse (no differentiated version) that may free memory, none
    /// of which an allocation the adjoint reverses made: every heap block
    /// a pointer the call reads may designate was allocated by such a
    /// procedure too (so no backward sweep frees it as well).
    fn frees_later_call(&self, s: &Stmt) -> bool {
        let StmtKind::Call { callee, .. } = &s.kind else {
            return false;
        };
        if self.aprocs.contains_key(callee)
            || !super::names::may_free(self.program, *callee, &mut Vec::new())
        {
            return false;
        }
        let Some(f) = self.a.facts.get(&self.proc) else {
            return false;
        };
        let Some(&i) = f.point_of.get(&s.id) else {
            return false;
        };
        let reads = &f.points[i].effect.reads;
        f.pts_before[i].iter().all(|&(z, pl)| {
            reads.binary_search(&z).is_err()
                || self.a.locs.allocator(pl).is_none_or(|a| self.unreversed(a))
        })
    }

    /// The copy of procedure `c` that a forward sweep calls for
    /// `adjoint/call-free-later`: `c`'s body with each `free(p)` made
    /// `aioli_free_later((void *)p)`, and each call of a procedure that
    /// may free made a call of that procedure's copy. Made once per
    /// procedure, `static`, named `c_fwd`.
    fn deferring_copy(&mut self, c: ProcId) -> ProcId {
        if let Some(&d) = self.deferring.get(&c) {
            return d;
        }
        let orig = self.program.proc(c).clone();
        let id = ProcId(self.out.procs.len() as u32);
        self.out.procs.push(Procedure {
            name: self.namer.fresh(&format!("{}_fwd", orig.name)),
            storage: Storage::Static,
            body: None,
            ..orig.clone()
        });
        self.deferring.insert(c, id);
        let Some(mut body) = orig.body.clone() else {
            return id;
        };
        let mut freeing = Vec::new();
        crate::il::visit_stmts(&body.stmts, &mut |s| {
            if let StmtKind::Call { callee, .. } = &s.kind
                && super::names::may_free(self.program, *callee, &mut Vec::new())
            {
                freeing.push(*callee);
            }
        });
        let copies: HashMap<ProcId, ProcId> = freeing
            .into_iter()
            .map(|q| (q, self.deferring_copy(q)))
            .collect();
        let later = self.runtime["aioli_free_later"];
        let void_ptr = QualType::void().pointer_to();
        crate::il::rewrite_stmt_lists(&mut body.stmts, &mut |list| {
            for s in list.iter_mut() {
                match &mut s.kind {
                    StmtKind::Free { ptr } => {
                        let arg = Expr::new(
                            ExprKind::Cast {
                                to: void_ptr.clone(),
                                arg: Box::new(ptr.clone()),
                            },
                            void_ptr.clone(),
                            ptr.span,
                        );
                        s.kind = StmtKind::Call {
                            result: None,
                            callee: later,
                            args: vec![arg],
                            decl_init: false,
                        };
                    }
                    StmtKind::Call { callee, .. } => {
                        if let Some(&copy) = copies.get(callee) {
                            *callee = copy;
                        }
                    }
                    _ => {}
                }
            }
        });
        self.out.procs[id.index()].body = Some(body);
        id
    }

    fn zeroes_adjoints(&self, s: &Stmt) -> bool {
        let mut found = false;
        crate::il::visit_stmt(s, &mut |x| {
            found = found || self.passive_call_zeroes(x);
        });
        found
    }

    /// Is zone `z` useful after point `i` of the current procedure? (Yes
    /// where the analyses have no results for it, the cautious side.) A
    /// zone that is not has a zero adjoint there: no later derivative
    /// reads it.
    fn useful_after_point(&self, i: usize, z: Zone) -> bool {
        self.a
            .results
            .get(&self.proc)
            .is_none_or(|r| r.useful_out[i].contains(&z))
    }

    /// A passive call whose result or written memory is active and useful
    /// after it: `zero-call-writes` has adjoints to zero there. (One not
    /// useful after the call has a zero adjoint there already.)
    fn passive_call_zeroes(&self, s: &Stmt) -> bool {
        let StmtKind::Call { result, .. } = &s.kind else {
            return false;
        };
        if self.a.is_active_call(self.proc, s.id) {
            return false;
        }
        let point = self
            .a
            .facts
            .get(&self.proc)
            .and_then(|f| f.point_of.get(&s.id).map(|&i| (i, &f.points[i])));
        let useful_after = |z: Zone| point.is_none_or(|(i, _)| self.useful_after_point(i, z));
        result.as_ref().is_some_and(|r| {
            real_rank(self.program, &r.ty) > 0
                && self.is_diff_address(r)
                && self.zones_of(r).into_iter().any(useful_after)
        }) || point.is_some_and(|(_, pt)| {
            pt.effect
                .writes
                .iter()
                .any(|&z| self.a.is_diff_zone(z) && useful_after(z))
        })
    }

    /// The formal of `c` whose adjoint is argument `pos` of a call of
    /// `c`'s `P_fwd` (in `fwd_args`' order: each primal argument, then its
    /// adjoint where `P_fwd` takes it), if that argument is an adjoint.
    fn fwd_adjoint_formal(&self, c: ProcId, pos: usize) -> Option<usize> {
        let needed = self.fwd_needs.get(&c)?;
        let mut at = 0;
        for i in 0..self.program.proc(c).params.len() {
            at += 1;
            if self.is_diff_formal(c, i) && needed.contains(&i) {
                if at == pos {
                    return Some(i);
                }
                at += 1;
            }
        }
        None
    }

    /// The parts of a by-value parameter's adjoint `*b` paired with those
    /// of its private adjoint `local` (`adjoint/by-value`).
    fn private_parts(&self, local: SymId, b: SymId) -> Vec<(Expr, Expr)> {
        let ty = self.out.symbols[local.index()].ty.clone();
        let star = Expr::new(ExprKind::Deref(Box::new(self.var(b))), ty, self.span());
        self.parts(star)
            .into_iter()
            .zip(self.parts(self.var(local)))
            .collect()
    }

    /// `local.p = b->p` for each adjoint pointer member of a by-value
    /// struct's private adjoint (`adjoint/struct-by-value`).
    fn follow_pointer_members(&self, local: SymId, b: SymId) -> Vec<Stmt> {
        self.private_parts(local, b)
            .into_iter()
            .filter(|(caller, _)| is_pointer(&self.out, &caller.ty))
            .map(|(caller, private)| self.assign(private, caller, AssignSugar::Plain))
            .collect()
    }

    fn is_diff_formal(&self, p: ProcId, i: usize) -> bool {
        let proc = self.program.proc(p);
        let Some(&s) = proc.params.get(i) else {
            return false;
        };
        let ty = &self.program.sym(s).ty;
        // A pointer whose target holds diff memory only through a pointer
        // member (`a->v[i]`) is in the diff symbols, not the diff formals.
        has_real(self.program, ty)
            && (self.a.is_diff_formal_arg(p, i) || self.diff.syms.contains(&s))
    }

    /// The zero adjoint buffer passed for call `s`'s pointer argument `i`,
    /// which has no adjoint (`adjoint/actual-pointer-passive`): a local of
    /// the adjoint type of the variable the pointer points into, returned
    /// with that variable. Refused when the pointer's target is not a variable of
    /// known size (a pointer parameter, the heap).
    fn buffer_temp(&mut self, s: &'x Stmt, i: usize) -> Result<(SymId, SymId), ApplyError> {
        let actual = self.arg_expr(s, i);
        let root = pointee_variable(self.program, actual).map_err(|why| {
            ApplyError::new(format!(
                "the adjoint mode does not yet pass a zero adjoint buffer for a pointer argument without adjoint ({why})"
            ))
        })?;
        // One buffer per variable: two arguments pointing into the same
        // variable get adjoints that overlap as they do.
        if let Some(&t) = self.buffer_temps.get(&root) {
            return Ok((root, t));
        }
        let mut ty = self.adjoint_type(&self.program.sym(root).ty);
        strip_own_const(&mut ty);
        let name = self
            .namer
            .fresh_local(&format!("{}b", self.program.sym(root).name));
        let t = self.new_sym(&name, ty, SymKind::Local);
        self.locals.push((t, None));
        self.buffer_temps.insert(root, t);
        Ok((root, t))
    }

    /// `r := 0` over the whole of an adjoint variable: loops over array
    /// dimensions, field by field for a `T_b`.
    fn zero_memory(&mut self, r: Expr, depth: usize) -> Result<Vec<Stmt>, ApplyError> {
        let Type::Array { elem, len } = self.out.resolve(&r.ty.ty).clone() else {
            return self.zero_all(r);
        };
        let Some(n) = len.as_ref().and_then(|l| l.value) else {
            return Err(ApplyError::new(
                "the adjoint mode does not yet pass a zero adjoint buffer for an array of unknown size",
            ));
        };
        let n = n as i64;
        let key = format!("zero-index/{depth}");
        let k = match self.temps.get(&key) {
            Some(&k) => k,
            None => {
                let name = self.namer.fresh_local("k");
                let k = self.new_sym(&name, QualType::int(), SymKind::Local);
                self.locals.push((k, None));
                self.temps.insert(key, k);
                k
            }
        };
        let kv = self.var(k);
        let element = Expr::new(
            ExprKind::Index {
                base: Box::new(r),
                index: Box::new(kv.clone()),
            },
            (*elem).clone(),
            self.span(),
        );
        let body = self.zero_memory(element, depth + 1)?;
        let cond = self.binary(BinOp::Lt, kv.clone(), self.int(n));
        let one = self.int(1);
        let next = self.binary(BinOp::Add, kv.clone(), one);
        Ok(vec![self.mk(StmtKind::Loop {
            header: LoopHeader::For {
                init: vec![self.assign(kv.clone(), self.int(0), AssignSugar::Plain)],
                cond: Some(cond),
                step: vec![self.assign(kv, next, AssignSugar::Increment)],
            },
            body: self.block(body),
        })])
    }

    fn temp(&mut self, ty: &QualType, key: String) -> SymId {
        let (key, tty) = if let Type::Struct(sid) = self.out.resolve(&ty.ty).clone() {
            // A `T_b` temporary for a struct's adjoint.
            (format!("{key}/struct{}", sid.index()), {
                // Assigned in the backward sweep, whatever the original.
                let mut t = self.adjoint_type(ty);
                t.is_const = false;
                t
            })
        } else {
            let rank = real_rank(&self.out, ty).max(1);
            (format!("{key}/{rank}"), real_of_rank(rank))
        };
        if let Some(&t) = self.temps.get(&key) {
            return t;
        }
        let base = if key.starts_with("arg") {
            "argb"
        } else {
            "tempb"
        };
        let name = self.namer.fresh_local(base);
        let t = self.new_sym(&name, tty, SymKind::Local);
        self.locals.push((t, None));
        self.temps.insert(key, t);
        t
    }

    /// The temporary holding the `k`-th call that `adjoint/keep-intrinsics`
    /// keeps for the statement being translated.
    fn kept_temp(&mut self, call: &Expr, k: usize) -> SymId {
        let mut ty = call.ty.clone();
        ty.is_const = false;
        let key = format!("keep/{k}/{:?}", ty.ty);
        if let Some(&t) = self.temps.get(&key) {
            return t;
        }
        let name = self.namer.fresh_local("temp");
        let t = self.new_sym(&name, ty, SymKind::Local);
        self.locals.push((t, None));
        self.temps.insert(key, t);
        t
    }

    /// A temporary of an original struct type: a struct result computed
    /// before the old value of its target is saved (`adjoint/call-split`).
    fn primal_temp(&mut self, ty: &QualType) -> SymId {
        self.result_temp(ty, "primal", "aioli_result")
    }

    /// A temporary of type `ty` for a call's result, one per kind of use
    /// and type.
    fn result_temp(&mut self, ty: &QualType, use_: &str, base: &str) -> SymId {
        let key = format!("{use_}/{:?}", ty.ty);
        if let Some(&t) = self.temps.get(&key) {
            return t;
        }
        let name = self.namer.fresh_local(base);
        let mut ty = ty.clone();
        ty.is_const = false;
        let t = self.new_sym(&name, ty, SymKind::Local);
        self.locals.push((t, None));
        self.temps.insert(key, t);
        t
    }

    fn counter(&mut self) -> Result<SymId, ApplyError> {
        let Some(s) = self.stmt() else {
            return Err(ApplyError::new("a loop counter outside a loop"));
        };
        if let Some(&c) = self.counters.get(&s.id) {
            return Ok(c);
        }
        let name = self.namer.fresh_local("aioli_iter");
        let c = self.new_sym(&name, QualType::int(), SymKind::Local);
        self.locals.push((c, None));
        self.counters.insert(s.id, c);
        Ok(c)
    }

    /// `isCanonicalFor`: `for (INIT; C; i += k) BODY` with a constant k ≠ 0,
    /// an integer index `i` local to the procedure whose address is never
    /// taken, a body that never assigns `i` and that is left only through
    /// C (no break, continue, return or switch inside). Then the indices
    /// visited are first, first + k, …, exit − k, where first is i after
    /// INIT and exit is i after the loop (`adjoint/for-canonical`).
    /// `adjoint/if-recompute`: the test of `s` (an `if`) has the same value
    /// at its mirror in the backward sweep as in the forward sweep: it
    /// reads no memory, only integer locals and parameters whose address
    /// is never taken and which nothing writes but a declaration at the
    /// procedure's top level (run once, before the test) or the header of
    /// a canonical `for` enclosing the test (whose backward sweep steps
    /// the index through the same values).
    fn recomputable_test(&self, s: &Stmt) -> bool {
        let StmtKind::If { cond, .. } = &s.kind else {
            return false;
        };
        let Some(body) = &self.program.proc(self.proc).body else {
            return false;
        };
        let mut vars = Vec::new();
        let mut pure = true;
        visit(cond, &mut |e| match &e.kind {
            ExprKind::Var(v) => vars.push(*v),
            ExprKind::IntConst { .. }
            | ExprKind::CharConst { .. }
            | ExprKind::Unary { .. }
            | ExprKind::Binary { .. }
            | ExprKind::Cast { .. } => {}
            _ => pure = false,
        });
        if !pure {
            return false;
        }
        // The canonical `for` loops enclosing the test, by their index.
        let enclosing: Vec<(StmtId, SymId)> = self
            .stmts
            .iter()
            .filter_map(|l| self.canonical_for(l).map(|c| (l.id, c.index)))
            .collect();
        let address_taken = super::names::address_taken(&body.stmts);
        vars.iter().all(|&v| {
            let sym = self.program.sym(v);
            matches!(sym.kind, SymKind::Local | SymKind::Param)
                && matches!(self.program.resolve(&sym.ty.ty), Type::Int { .. })
                && !address_taken.contains(&v)
                && writes_of(&body.stmts, v, WriteSite::TopLevel)
                    .into_iter()
                    .all(|w| match w {
                        WriteSite::TopLevel => true,
                        WriteSite::Header(l) => enclosing.contains(&(l, v)),
                        WriteSite::Nested => false,
                    })
        })
    }

    fn canonical_for(&self, s: &Stmt) -> Option<CanonicalFor> {
        let StmtKind::Loop {
            header:
                LoopHeader::For {
                    init,
                    cond: Some(cond),
                    step,
                },
            body,
        } = &s.kind
        else {
            return None;
        };
        let [st] = step.as_slice() else {
            return None;
        };
        let StmtKind::Assign { lhs, rhs, .. } = &st.kind else {
            return None;
        };
        let ExprKind::Var(i) = lhs.kind else {
            return None;
        };
        let sym = self.program.sym(i);
        let signed = match self.program.resolve(&sym.ty.ty) {
            Type::Int {
                kind:
                    crate::il::IntKind::Int | crate::il::IntKind::Long | crate::il::IntKind::LongLong,
                unsigned,
            } => !unsigned,
            _ => return None,
        };
        if sym.kind == SymKind::Global {
            return None;
        }
        let is_i = |e: &Expr| matches!(peel_casts(e).kind, ExprKind::Var(v) if v == i);
        let konst = |e: &Expr| match peel_casts(e).kind {
            ExprKind::IntConst { value, .. } if value > 0 => Some(value),
            _ => None,
        };
        let step = match &peel_casts(rhs).kind {
            ExprKind::Binary {
                op: BinOp::Add,
                lhs: l,
                rhs: r,
            } => {
                if is_i(l) {
                    konst(r)?
                } else if is_i(r) {
                    konst(l)?
                } else {
                    return None;
                }
            }
            ExprKind::Binary {
                op: BinOp::Sub,
                lhs: l,
                rhs: r,
            } if is_i(l) => -konst(r)?,
            _ => return None,
        };
        // The body leaves the index alone and is left only through C.
        let mut ok = true;
        crate::il::visit_stmts(&body.stmts, &mut |x| match &x.kind {
            StmtKind::Assign { lhs, .. } if is_i(lhs) => ok = false,
            StmtKind::Call {
                result: Some(r), ..
            } if is_i(r) => ok = false,
            StmtKind::Alloc { target, .. } if is_i(target) => ok = false,
            StmtKind::Decl { vars, .. } if vars.iter().any(|d| d.sym == i) => ok = false,
            StmtKind::Break
            | StmtKind::Continue
            | StmtKind::Return(_)
            | StmtKind::Switch { .. } => ok = false,
            _ => {}
        });
        // Nothing else can write it: its address is never taken.
        if let Some(b) = &self.program.proc(self.proc).body {
            crate::il::visit_stmts(&b.stmts, &mut |x| {
                for e in super::names::stmt_exprs(x) {
                    visit(e, &mut |y| {
                        if let ExprKind::AddrOf(r) = &y.kind
                            && matches!(peel_casts(r).kind, ExprKind::Var(v) if v == i)
                        {
                            ok = false;
                        }
                    });
                }
            });
        }
        if !ok {
            return None;
        }
        let bits = match self.program.resolve(&sym.ty.ty) {
            Type::Int {
                kind: crate::il::IntKind::Int,
                ..
            } => 32,
            _ => 64,
        };
        let min = if bits == 32 {
            i64::from(i32::MIN)
        } else {
            i64::MIN
        };
        let max = if bits == 32 {
            i64::from(i32::MAX)
        } else {
            i64::MAX
        };
        let first = match init.as_slice() {
            [x] if signed => match &x.kind {
                StmtKind::Assign { lhs, rhs, .. } if is_i(lhs) => konst_any(rhs),
                StmtKind::Decl { vars, .. } => match vars.as_slice() {
                    [d] if d.sym == i => match &d.init {
                        Some(Init::Expr(e)) => konst_any(e),
                        _ => None,
                    },
                    _ => None,
                },
                _ => None,
            },
            _ => None,
        }
        .filter(|&c| {
            c >= min && c <= max && c.checked_sub(step).is_some_and(|b| b >= min && b <= max)
        });
        let last = first.and_then(|_| self.invariant_last(i, step, cond));
        Some(CanonicalFor {
            index: i,
            step,
            first,
            last,
        })
    }

    /// `adjoint/for-canonical`, invariant bound: for `i < B`, `i <= B`
    /// (step 1) or `i > B`, `i >= B` (step −1), with B built of integer
    /// constants and integer variables that no point of the procedure
    /// writes (calls included), the last index visited when the loop runs
    /// at all: `B - 1`, `B`, `B + 1`, `B`. When the loop runs no
    /// iteration, the reversed loop's test fails at once on that same
    /// value, since it lies beyond the first index.
    fn invariant_last(&self, i: SymId, step: i64, cond: &Expr) -> Option<Expr> {
        let ExprKind::Binary { op, lhs, rhs } = &peel_casts(cond).kind else {
            return None;
        };
        if !matches!(peel_casts(lhs).kind, ExprKind::Var(v) if v == i) {
            return None;
        }
        let adjust = match (op, step) {
            (BinOp::Lt, 1) => -1,
            (BinOp::Le, 1) | (BinOp::Ge, -1) => 0,
            (BinOp::Gt, -1) => 1,
            _ => return None,
        };
        let f = self.a.facts.get(&self.proc)?;
        let mut vars = Vec::new();
        let mut ok = true;
        visit(rhs, &mut |e| match &e.kind {
            ExprKind::Var(v) => vars.push(*v),
            ExprKind::IntConst { .. }
            | ExprKind::Cast { .. }
            | ExprKind::Binary {
                op: BinOp::Add | BinOp::Sub | BinOp::Mul,
                ..
            } => {}
            _ => ok = false,
        });
        if !ok || vars.contains(&i) {
            return None;
        }
        for v in vars {
            if !matches!(
                self.program.resolve(&self.program.sym(v).ty.ty),
                Type::Int { .. }
            ) {
                return None;
            }
            let zones: Vec<Zone> = self.a.locs.object_zones(self.a.locs.of_sym(v)).collect();
            let writers = f
                .points
                .iter()
                .filter(|pt| pt.effect.writes.iter().any(|w| zones.contains(w)))
                .count();
            if writers > 0 && !(writers == 1 && self.set_once_outside_loops(v)) {
                return None;
            }
        }
        let bound = (**rhs).clone();
        let mut last = match adjust {
            0 => bound,
            k => {
                let op = if k < 0 { BinOp::Sub } else { BinOp::Add };
                self.binary(op, bound, self.int(1))
            }
        };
        last.ty = self.out.symbols[i.index()].ty.clone();
        last.ty.is_const = false;
        Some(last)
    }

    /// A local whose one write is its declaration at the procedure's top
    /// level (`int m = n;`, run once), whose address is never taken:
    /// whatever reads it after that, a loop or its replay in the backward
    /// sweep, sees one value, as it would a parameter nothing writes
    /// (`adjoint/for-canonical`).
    fn set_once_outside_loops(&self, v: SymId) -> bool {
        let sym = self.program.sym(v);
        let Some(body) = &self.program.proc(self.proc).body else {
            return false;
        };
        matches!(sym.kind, SymKind::Local | SymKind::Temp)
            && sym.storage != Storage::Static
            && !super::names::address_taken(&body.stmts).contains(&v)
            && writes_of(&body.stmts, v, WriteSite::TopLevel) == [WriteSite::TopLevel]
    }

    /// The variable holding the current loop's first index
    /// (`adjoint/for-canonical`), of the index's type.
    fn first_var(&mut self, index: SymId) -> Result<SymId, ApplyError> {
        let Some(s) = self.stmt() else {
            return Err(ApplyError::new("a loop's first index outside a loop"));
        };
        if let Some(&f) = self.firsts.get(&s.id) {
            return Ok(f);
        }
        let name = self.namer.fresh_local("aioli_from");
        let mut ty = self.out.symbols[index.index()].ty.clone();
        ty.is_const = false;
        let f = self.new_sym(&name, ty, SymKind::Local);
        self.locals.push((f, None));
        self.firsts.insert(s.id, f);
        Ok(f)
    }

    fn block(&self, stmts: Vec<Stmt>) -> Block {
        let scope = self
            .program
            .proc(self.proc)
            .body
            .as_ref()
            .map(|b| b.scope)
            .unwrap_or(self.program.proc(self.proc).scope);
        Block {
            stmts,
            scope,
            closing_comments: Vec::new(),
            span: self.span(),
        }
    }

    fn mk(&self, kind: StmtKind) -> Stmt {
        Stmt {
            id: StmtId(0),
            kind,
            span: self.span(),
            comments: Comments::default(),
        }
    }

    fn view_stmt(&self, s: &'x Stmt) -> View<AVal<'x>> {
        let none = || AVal::Atom("none".into());
        match &s.kind {
            StmtKind::Assign { lhs, rhs, .. } => {
                View::Node("assign", vec![AVal::Expr(lhs), AVal::Expr(rhs)])
            }
            StmtKind::Call { result, callee, .. } => View::Node(
                "call",
                vec![
                    AVal::Sym(SymId(callee.0)),
                    AVal::Args(s, 0),
                    result.as_ref().map(AVal::Expr).unwrap_or_else(none),
                ],
            ),
            StmtKind::If { cond, then, other } => View::Node(
                "if",
                vec![
                    AVal::Expr(cond),
                    AVal::Stmts(&then.stmts),
                    AVal::Stmts(other.as_ref().map(|o| o.stmts.as_slice()).unwrap_or(&[])),
                ],
            ),
            StmtKind::Loop { header, body } => match header {
                LoopHeader::For { init, cond, step } => View::Node(
                    "for",
                    vec![
                        AVal::Stmts(init),
                        cond.as_ref().map(AVal::Expr).unwrap_or_else(none),
                        AVal::Stmts(step),
                        AVal::Stmts(&body.stmts),
                    ],
                ),
                LoopHeader::While { cond } => {
                    View::Node("while", vec![AVal::Expr(cond), AVal::Stmts(&body.stmts)])
                }
                LoopHeader::DoWhile { cond } => {
                    View::Node("do-while", vec![AVal::Expr(cond), AVal::Stmts(&body.stmts)])
                }
            },
            StmtKind::Block(b) => View::Node("block", vec![AVal::Stmts(&b.stmts)]),
            StmtKind::Decl {
                vars,
                storage: Storage::Static,
                ..
            } => View::Node("decl-static", vec![AVal::Decls(vars)]),
            StmtKind::Decl { vars, .. } => View::Node("decl", vec![AVal::Decls(vars)]),
            StmtKind::Alloc { target, count, .. } => {
                View::Node("alloc", vec![AVal::Expr(target), AVal::Expr(count)])
            }
            StmtKind::Free { ptr } => View::Node("free", vec![AVal::Expr(ptr)]),
            StmtKind::Return(e) => View::Node(
                "return",
                vec![e.as_ref().map(AVal::Expr).unwrap_or_else(none)],
            ),
            StmtKind::Empty | StmtKind::Discard(_) => View::Node("empty", vec![]),
            _ => View::Opaque,
        }
    }

    fn view_expr(&self, e: &'x Expr) -> View<AVal<'x>> {
        match &e.kind {
            ExprKind::IntConst { value, .. } => View::Node("int", vec![AVal::Num(*value as f64)]),
            ExprKind::RealConst { value, .. } => View::Node("real", vec![AVal::Num(*value)]),
            ExprKind::Var(s) => View::Node("var", vec![AVal::Sym(*s)]),
            ExprKind::Index { base, index } => {
                View::Node("index", vec![AVal::Expr(base), AVal::Expr(index)])
            }
            ExprKind::Field {
                base,
                strukt,
                field,
            } => View::Node(
                "field",
                vec![
                    AVal::Expr(base),
                    AVal::Atom(
                        self.program
                            .field_name(*strukt, *field)
                            .unwrap_or("")
                            .into(),
                    ),
                ],
            ),
            ExprKind::Deref(p) => View::Node("deref", vec![AVal::Expr(p)]),
            ExprKind::AddrOf(r) => View::Node("addr", vec![AVal::Expr(r)]),
            ExprKind::Unary { op, arg } => View::Node(
                match op {
                    UnOp::Neg => "neg",
                    UnOp::Plus => "plus",
                    UnOp::Not => "not",
                    UnOp::BitNot => "bitnot",
                },
                vec![AVal::Expr(arg)],
            ),
            ExprKind::Binary { op, lhs, rhs } => {
                View::Node(binop_name(*op), vec![AVal::Expr(lhs), AVal::Expr(rhs)])
            }
            ExprKind::Intrinsic { call, args } => View::Node(
                "intrinsic",
                vec![
                    AVal::Atom(call.func.c_name().into()),
                    AVal::List(args.iter().map(AVal::Expr).collect()),
                ],
            ),
            ExprKind::Cast { arg, .. } => View::Node("cast", vec![AVal::Expr(arg)]),
            ExprKind::Cond { cond, then, other } => View::Node(
                "cond",
                vec![AVal::Expr(cond), AVal::Expr(then), AVal::Expr(other)],
            ),
            _ => View::Opaque,
        }
    }

    /// `adjoint/intrinsic`: the (argument, partial × VAL) pairs.
    fn partials(&mut self, f: &str, args: &[AVal<'x>], val: Expr) -> Result<AVal<'x>, ApplyError> {
        let Some(d) = self.rules.derivatives.get(f).cloned() else {
            return Err(ApplyError::new(format!("no derivative is known for '{f}'")));
        };
        self.trace.insert(d.id.clone());
        let exprs: Vec<Expr> = args
            .iter()
            .map(|a| self.expr_of(a))
            .collect::<Result<_, _>>()?;
        let mut env: Vec<(String, Expr)> = d.params.iter().cloned().zip(exprs.clone()).collect();
        env.reverse();
        let mut pairs = Vec::new();
        for (i, arg) in args.iter().enumerate() {
            if real_rank(&self.out, &exprs[i].ty) == 0 {
                continue;
            }
            let partial = self.instantiate(&d.partials[i], &env)?;
            if is_zero(&partial) {
                continue;
            }
            let span = self.span();
            let cond = |cond: Expr, then: Expr, other: Expr| {
                let ty = other.ty.clone();
                Expr::new(
                    ExprKind::Cond {
                        cond: Box::new(cond),
                        then: Box::new(then),
                        other: Box::new(other),
                    },
                    ty,
                    span,
                )
            };
            let term = match d.singular.get(i) {
                // `adjoint/intrinsic-singular`: at a point where the
                // partial is infinite, it is taken as zero (a test on the
                // primal arguments, as Tapenade's `x == 0 ? 0 : …` for
                // sqrt). A test on V̄ would not do: V̄ is not zero there
                // when a later statement has a zero partial (`p = fmax(x,
                // 0); sqrt(p)` at x < 0), and that zero partial times an
                // infinite p̄ gives x̄ = NaN. Only the partial is under the
                // test: V̄ is evaluated unconditionally, so the calls it
                // shares with the partial can be shared
                // (`adjoint/share-calls`). A condition known false
                // (`pow(q, 1.5)`: 1.5 < 1) leaves the partial unguarded.
                Some(c) if d.guarded => match fold_known(self.instantiate(c, &env)?) {
                    // A partial that tests the condition itself
                    // (`deriv/pow`'s ∂y) is zero there already.
                    Some(test) if matches!(&partial.kind, ExprKind::Cond { cond, .. } if **cond == test) => {
                        self.binary(BinOp::Mul, partial, val.clone())
                    }
                    Some(test) => {
                        let zero = self.real(0.0, partial.ty.clone());
                        let guarded = cond(test, zero, partial);
                        self.binary(BinOp::Mul, guarded, val.clone())
                    }
                    None => self.binary(BinOp::Mul, partial, val.clone()),
                },
                // Without conditions (a user's entry), a zero V̄ gives a
                // zero term even where the partial is infinite.
                _ if d.guarded => {
                    let zero = self.real(0.0, val.ty.clone());
                    let test = self.binary(BinOp::Eq, val.clone(), zero.clone());
                    let product = self.binary(BinOp::Mul, partial, val.clone());
                    cond(test, zero, product)
                }
                _ => self.binary(BinOp::Mul, partial, val.clone()),
            };
            pairs.push(AVal::With(Box::new(arg.clone()), Box::new(AVal::New(term))));
        }
        Ok(AVal::List(pairs))
    }

    fn instantiate(&mut self, t: &Tmpl, env: &[(String, Expr)]) -> Result<Expr, ApplyError> {
        Ok(match t {
            Tmpl::Var(v) => env
                .iter()
                .find(|(n, _)| n == v)
                .map(|(_, x)| x.clone())
                .ok_or_else(|| ApplyError::new(format!("unbound ?{v} in a derivative entry")))?,
            Tmpl::Num(x) => self.real(*x, QualType::double()),
            Tmpl::Atom(a) => {
                return Err(ApplyError::new(format!("atom '{a}' in a derivative entry")));
            }
            Tmpl::Node(h, kids, _) => {
                let mut args = Vec::new();
                for k in kids {
                    args.push(self.instantiate(k, env)?);
                }
                self.build_expr(h, args)?
            }
        })
    }

    /// Expression constructors of rule templates and derivative entries.
    fn build_expr(&self, head: &str, mut args: Vec<Expr>) -> Result<Expr, ApplyError> {
        let arity = |n: usize| {
            if args.len() == n {
                Ok(())
            } else {
                Err(ApplyError::new(format!("'{head}' takes {n} arguments")))
            }
        };
        Ok(match head {
            "neg" => {
                arity(1)?;
                self.neg(args.remove(0))
            }
            "cond" => {
                arity(3)?;
                let other = args.pop().unwrap_or_else(|| self.int(0));
                let then = args.pop().unwrap_or_else(|| self.int(0));
                let cond = args.pop().unwrap_or_else(|| self.int(0));
                // A template's number takes the other branch's precision.
                let real = |v, ty| self.real(v, ty);
                let (then_ty, other_ty) = (then.ty.clone(), other.ty.clone());
                let (then, other) = (
                    super::tangent::number_as(&self.out, then, &other_ty, real),
                    super::tangent::number_as(&self.out, other, &then_ty, real),
                );
                let rank = real_rank(&self.out, &then.ty)
                    .max(real_rank(&self.out, &other.ty))
                    .max(1);
                // Choosing between adjoint pointers (`adjoint/ref-cond`).
                let ty = super::names::address_type(&self.out, &then.ty)
                    .or_else(|| super::names::address_type(&self.out, &other.ty))
                    .unwrap_or_else(|| real_of_rank(rank));
                // A template's test on numbers (`deriv/pow` at `pow(2.0,
                // x)`: `2.0 == 0`) is decided here.
                if let Some(known) = super::names::decided(&cond) {
                    return Ok(if known { then } else { other });
                }
                Expr::new(
                    ExprKind::Cond {
                        cond: Box::new(cond),
                        then: Box::new(then),
                        other: Box::new(other),
                    },
                    ty,
                    self.span(),
                )
            }
            _ if binop_of(head).is_some() => {
                arity(2)?;
                let op = binop_of(head).expect("guarded");
                let r = args.pop().unwrap_or_else(|| self.int(0));
                let l = args.pop().unwrap_or_else(|| self.int(0));
                self.binary(op, l, r)
            }
            _ => {
                let f = if head == "digamma" {
                    MathFn::Digamma
                } else {
                    match MathFn::from_c_name(head) {
                        Some((f, _)) => f,
                        None => {
                            return Err(ApplyError::new(format!(
                                "unknown constructor '{head}' in an expression"
                            )));
                        }
                    }
                };
                arity(f.arity())?;
                super::tangent::intrinsic_expr(&self.out, f, self.precision, args, self.span())
            }
        })
    }

    fn address_of(&self, e: Expr) -> Expr {
        if let ExprKind::Deref(p) = e.kind {
            return *p;
        }
        let ty = e.ty.clone().pointer_to();
        Expr::new(ExprKind::AddrOf(Box::new(e)), ty, self.span())
    }

    /// `adjoint/proc-joint`, `adjoint/proc-split`: a finished procedure.
    fn make_proc(
        &mut self,
        id: ProcId,
        params: Vec<SymId>,
        ret: QualType,
        mut body: Vec<Stmt>,
        prologue: Vec<Stmt>,
        with_adjoints: bool,
    ) -> Result<(), ApplyError> {
        let orig = self.program.proc(self.proc).clone();
        let mut all = prologue;
        if with_adjoints {
            // `adjoint/by-value`: a real parameter passed by value that the
            // procedure assigns has its adjoint in a private local (it is
            // read and zeroed there, and the caller may pass one address
            // for two arguments); its value is added to `*xb` at the end.
            let privates: Vec<(SymId, SymId)> = self
                .private_adjoints
                .iter()
                .map(|(a, b)| (*a, *b))
                .collect();
            for (p, local) in privates {
                let Some(&b) = self.bsyms.get(&p) else {
                    continue;
                };
                // A struct's private adjoint is added field by field; its
                // adjoint pointer members follow the caller's from the
                // start (`adjoint/struct-by-value`).
                for (caller, private) in self.private_parts(local, b) {
                    if !is_pointer(&self.out, &caller.ty) {
                        body.extend(self.increment_all(caller, private)?);
                    }
                }
                // (Not where nothing reads the private adjoint: C warns
                // about a variable set but not used.)
                let mut read_here = HashSet::default();
                collect_used(&body, &mut read_here);
                if read_here.contains(&local) {
                    let follow = self.follow_pointer_members(local, b);
                    body.splice(0..0, follow);
                }
            }
        }
        all.append(&mut body);
        self.adjoint_syms = self.adjoint_symbols();
        self.simplify_adjoints(&mut all);
        self.merge_zero_increments(&mut all);
        // The hoisted locals, the lowering's temporaries (the value of a
        // call in an expression whose use the forward sweep dropped) and
        // the adjoint temporaries (`tempb = *outb` before a reset that
        // propagates to no leaf).
        let mut candidates = self.hoisted.clone();
        let mut adjoint_temps: Vec<SymId> = self.temps.values().copied().collect();
        adjoint_temps.sort();
        candidates.extend(adjoint_temps);
        crate::il::visit_stmts(&all, &mut |s| {
            for e in super::names::stmt_exprs(s) {
                visit(e, &mut |x| {
                    if let ExprKind::Var(v) = x.kind
                        && self.out.symbols[v.index()].kind == SymKind::Temp
                        && !candidates.contains(&v)
                    {
                        candidates.push(v);
                    }
                });
            }
        });
        self.cancel_junction_saves(&mut all);
        drop_unread_scalars(&mut all, &candidates);
        drop_empty_loops(&mut all);
        drop_empty_branches(&mut all);
        super::share::share_calls(&mut all, self);
        let mut body = all;
        // A local only ever set (an adjoint cursor the backward sweep pops
        // and never follows): its pops stay, for the stack, its values go,
        // and so does the variable (C warns about one set but not used).
        let mut read: HashSet<SymId> = HashSet::default();
        collect_read(&body, &mut read);
        let only_set: HashSet<SymId> = self
            .hoisted
            .iter()
            .copied()
            .chain(self.locals.iter().map(|(s, _)| *s))
            .filter(|s| !read.contains(s))
            .collect();
        if !only_set.is_empty() {
            forget_values(&mut body, &only_set);
        }
        let mut used: HashSet<SymId> = HashSet::default();
        collect_used(&body, &mut used);
        let mut read: HashSet<SymId> = HashSet::default();
        collect_read(&body, &mut read);
        let mut decls = Vec::new();
        for &s in &params {
            // Unused, or only set (a by-value parameter restored from the
            // stack that nothing reads after): `(void)n;` keeps
            // -Wunused-parameter and -Wunused-but-set-parameter quiet.
            if !used.contains(&s) || !read.contains(&s) {
                let v = self.var(s);
                let cast = Expr::new(
                    ExprKind::Cast {
                        to: QualType::void(),
                        arg: Box::new(v),
                    },
                    QualType::void(),
                    self.span(),
                );
                decls.push(self.mk(StmtKind::Discard(cast)));
            }
        }
        for &s in &self.hoisted {
            if !used.contains(&s) {
                continue;
            }
            // `adjoint/decl-static`: as the original declares it.
            if let Some(init) = self.static_inits.get(&s) {
                let ty = self.out.symbols[s.index()].ty.clone();
                decls.push(self.mk(StmtKind::Decl {
                    base: leaf_type(&ty),
                    storage: Storage::Static,
                    vars: vec![Declarator {
                        sym: s,
                        init: init.clone(),
                    }],
                }));
                continue;
            }
            strip_own_const(&mut self.out.symbols[s.index()].ty);
            let ty = self.out.symbols[s.index()].ty.clone();
            // Scalars start at zero: the forward sweep may save a variable
            // before the original's first assignment to it.
            let init = match self.out.resolve(&ty.ty) {
                Type::Real(_) => Some(Init::Expr(self.real(0.0, ty.clone()))),
                Type::Int { .. } | Type::Pointer(_) => Some(Init::Expr(self.int(0))),
                // A struct, or an array of structs: every field.
                Type::Struct(_) => Some(self.zero_init(&ty)),
                // An array of structs or of arrays: braces at every level.
                Type::Array { elem, .. }
                    if is_struct(&self.out, &innermost(&self.out, elem))
                        || is_aggregate(&self.out, elem) =>
                {
                    Some(self.zero_init(&ty))
                }
                Type::Array { .. } => Some(Init::List(vec![Init::Expr(self.int(0))], self.span())),
                _ => None,
            };
            decls.push(self.decl(s, ty, init));
        }
        if with_adjoints {
            let locals = self.locals.clone();
            for (s, init) in locals {
                if !used.contains(&s) {
                    continue;
                }
                let ty = self.out.symbols[s.index()].ty.clone();
                decls.push(self.decl(s, ty, init));
            }
        } else {
            // The forward sweep needs only its counters and branch marker,
            // and the adjoint pointers it allocates (saved before they are
            // set: they start null, members of an adjoint struct too).
            let locals = self.locals.clone();
            for (s, init) in locals {
                if used.contains(&s) {
                    let ty = self.out.symbols[s.index()].ty.clone();
                    let init =
                        init.filter(|_| holds_pointer(&self.out, self.out.resolve(&ty.ty), 0));
                    decls.push(self.decl(s, ty, init));
                }
            }
        }
        if with_adjoints {
            self.keep_user_comments(&mut body);
        }
        decls.append(&mut body);
        let scope = orig.body.as_ref().map(|b| b.scope).unwrap_or(orig.scope);
        let p = &mut self.out.procs[id.index()];
        p.params = params;
        p.ret = ret;
        p.body = Some(Block {
            stmts: decls,
            scope,
            closing_comments: orig
                .body
                .as_ref()
                .map(|b| b.closing_comments.clone())
                .unwrap_or_default(),
            span: orig.body.as_ref().map(|b| b.span).unwrap_or(orig.span),
        });
        Ok(())
    }

    /// `P_bwd` restores its by-value parameters from the stack, so a
    /// `const double c` of the original is a parameter of its own there,
    /// without the const (a top-level qualifier is no part of the
    /// function's type); `P_b` and `P_fwd`, which never assign it, keep
    /// the user's `const`.
    fn unconst_restored_params(&mut self, id: ProcId) {
        let params = self.out.procs[id.index()].params.clone();
        let mut renamed = Vec::with_capacity(params.len());
        for s in params {
            let sym = &self.out.symbols[s.index()];
            if !sym.ty.is_const || matches!(self.out.resolve(&sym.ty.ty), Type::Pointer(_)) {
                renamed.push(s);
                continue;
            }
            let mut copy = sym.clone();
            copy.ty.is_const = false;
            let fresh = SymId(self.out.symbols.len() as u32);
            self.out.symbols.push(copy);
            if let Some(body) = &mut self.out.procs[id.index()].body {
                crate::il::rename_var(&mut body.stmts, s, fresh);
            }
            renamed.push(fresh);
        }
        self.out.procs[id.index()].params = renamed;
    }

    /// `adjoint/junction`: `push(V) ; S ; V = pop()` with S touching
    /// neither the stack (no call) nor V (V a scalar whose address is never
    /// taken) pops the value V still holds: both are dropped. This is where
    /// a forward sweep meets its backward sweep in one procedure (a loop's
    /// final counter, a value saved by a last assignment).
    fn cancel_junction_saves(&self, body: &mut Vec<Stmt>) {
        const PAIRS: [(&str, &str); 5] = [
            ("aioli_push_real8", "aioli_pop_real8"),
            ("aioli_push_real4", "aioli_pop_real4"),
            ("aioli_push_int", "aioli_pop_int"),
            ("aioli_push_long", "aioli_pop_long"),
            ("aioli_push_pointer", "aioli_pop_pointer"),
        ];
        let pairs: Vec<(ProcId, ProcId)> = PAIRS
            .iter()
            .filter_map(|(push, pop)| Some((*self.runtime.get(push)?, *self.runtime.get(pop)?)))
            .collect();
        let address_taken = super::names::address_taken(body);
        let is_scalar = |v: SymId| {
            matches!(
                self.out.resolve(&self.out.symbols[v.index()].ty.ty),
                Type::Real(_) | Type::Int { .. } | Type::Pointer(_)
            )
        };
        let popped = |s: &Stmt| match &s.kind {
            StmtKind::Call {
                callee,
                result:
                    Some(Expr {
                        kind: ExprKind::Var(v),
                        ..
                    }),
                ..
            } => pairs
                .iter()
                .find(|(_, pop)| pop == callee)
                .map(|(push, _)| (*push, *v)),
            _ => None,
        };
        let pushes = |s: &Stmt, push: ProcId, v: SymId| match &s.kind {
            StmtKind::Call {
                callee,
                args,
                result: None,
                ..
            } if *callee == push => {
                let mut arg = args.first();
                while let Some(Expr {
                    kind: ExprKind::Cast { arg: inner, .. },
                    ..
                }) = arg
                {
                    arg = Some(inner);
                }
                matches!(arg, Some(Expr { kind: ExprKind::Var(w), .. }) if *w == v)
            }
            _ => false,
        };
        // A call may push, pop or write V; an allocation writes its
        // target without being an assignment: the scan stops at either.
        let has_call = |s: &Stmt| {
            let mut found = false;
            crate::il::visit_stmts(std::slice::from_ref(s), &mut |x| {
                found |= matches!(
                    x.kind,
                    StmtKind::Call { .. } | StmtKind::Alloc { .. } | StmtKind::Free { .. }
                );
            });
            found
        };
        crate::il::rewrite_stmt_lists(body, &mut |list| {
            let mut j = 0;
            while j < list.len() {
                let Some((push, v)) = popped(&list[j]) else {
                    j += 1;
                    continue;
                };
                if !is_scalar(v) || address_taken.contains(&v) {
                    j += 1;
                    continue;
                }
                let mut matched = None;
                for i in (0..j).rev() {
                    if pushes(&list[i], push, v) {
                        matched = Some(i);
                        break;
                    }
                    let mut whole = HashSet::default();
                    let mut parts = HashSet::default();
                    assigned_vars(std::slice::from_ref(&list[i]), &mut whole, &mut parts);
                    if has_call(&list[i]) || whole.contains(&v) || parts.contains(&v) {
                        break;
                    }
                }
                match matched {
                    Some(i) => {
                        list.remove(j);
                        list.remove(i);
                        j -= 1;
                    }
                    None => j += 1,
                }
            }
        });
    }

    /// The adjoint of an original reference (`ref` relation).
    fn ref_adjoint(&mut self, r: &'x Expr) -> Result<Expr, ApplyError> {
        let rules = self.rules;
        let v = engine::apply(rules, self, "ref", &AVal::Expr(r))?;
        self.expr_of(
            v.first()
                .ok_or_else(|| ApplyError::new("'ref' yields nothing"))?,
        )
    }

    fn decl(&self, s: SymId, ty: QualType, init: Option<Init>) -> Stmt {
        self.mk(StmtKind::Decl {
            base: leaf_type(&ty),
            storage: Storage::Auto,
            vars: vec![Declarator { sym: s, init }],
        })
    }

    fn params_of(&mut self, list: &AVal<'x>) -> Result<Vec<SymId>, ApplyError> {
        let mut out = Vec::new();
        let AVal::List(items) = list else {
            return Ok(out);
        };
        for it in items {
            match it {
                AVal::Formal(p, i) => out.push(self.program.proc(*p).params[*i]),
                AVal::Sym(s) => out.push(*s),
                _ => return Err(ApplyError::new("a formal parameter was expected")),
            }
        }
        Ok(out)
    }

    /// Original variables whose final values the backward sweep reads
    /// (split mode saves them at the end of the forward sweep): the locals
    /// and by-value parameters it may read before writing them
    /// (`for (i = pop; …)` sets i first). A parameter P never assigns is
    /// saved all the same: the caller evaluates the argument again for
    /// `P_bwd` on memory the call itself may have overwritten
    /// (`rotate(&x[i], &x[i + 1], x[i] * 0.5)`).
    fn read_in(&self, code: &[Stmt]) -> Vec<SymId> {
        let mut used = HashSet::default();
        exposed_reads(code, &mut HashSet::default(), &mut used);
        let proc = self.program.proc(self.proc);
        // A static const local is declared in each sweep with its values
        // (`adjoint/decl-static`): nothing to carry.
        let mut out: Vec<SymId> = self
            .hoisted
            .iter()
            .copied()
            .filter(|s| used.contains(s) && !self.static_inits.contains_key(s))
            .collect();
        for &s in &proc.params {
            if used.contains(&s) && !is_pointer(self.program, &self.program.sym(s).ty) {
                out.push(s);
            }
        }
        // `adjoint/kept-locals`: a local given static storage, which the
        // backward sweep may read through the addresses it keeps: carried
        // like a local, so that forward sweeps run one after the other
        // before their backward sweeps (a taped time loop) each find their
        // own values.
        // Its adjoint too where that holds pointers the forward sweep set
        // (`aliasb = wb + 1`): the next forward sweep sets them anew.
        for s in self.own_frame_statics() {
            out.push(s);
            if let Some(&b) = self.bsyms.get(&s) {
                let ty = &self.out.symbols[b.index()].ty;
                if holds_pointer(&self.out, self.out.resolve(&ty.ty), 0) {
                    out.push(b);
                }
            }
        }
        // An adjoint pointer the forward sweep set (`tb = calloc(...)`
        // following `t = malloc(...)`, or a member `bb.u` of an adjoint
        // struct), read before the backward sweep restores it at the
        // allocation's mirror.
        for (s, _) in &self.locals {
            let ty = &self.out.symbols[s.index()].ty;
            if used.contains(s) && holds_pointer(&self.out, self.out.resolve(&ty.ty), 0) {
                out.push(*s);
            }
        }
        out
    }
}

impl<'x, 'a: 'x> AdjointHost<'x, 'a> {
    /// Assembles the output program (`adjoint/output`): the original's
    /// declarations, its globals as `extern`, the adjoints of globals, the
    /// runtime header, and the adjoint procedures after each original one.
    fn finish(mut self, diff_procs: &[ProcId]) -> Program {
        let program = self.program;
        let main = program.main_file;
        let generated: Vec<ProcId> = self
            .aprocs
            .values()
            .flat_map(|a| [a.joint, a.fused, a.fwd, a.bwd])
            .flatten()
            .chain(self.deferring.values().copied())
            .collect();
        super::specialize::call_originals(&mut self.out, &generated);
        let needed = super::reached_from(&self.out, generated.iter().copied());
        // `ptr/global-init`: an adjoint global pointer starts at the adjoint
        // of the global its original is initialised with.
        for root in super::initialiser_roots(self.a, &self.diff, self.bsyms.keys().copied()) {
            let _ = self.bsym(root);
        }
        let bglobals: Vec<(SymId, SymId)> = {
            let mut v: Vec<(SymId, SymId)> = self
                .bsyms
                .iter()
                .filter(|(s, _)| program.sym(**s).kind == SymKind::Global)
                .map(|(a, b)| (*a, *b))
                .collect();
            v.sort();
            v
        };
        let mut items = Vec::new();
        let mut header_done = false;
        let mut moved_comments: Vec<String> = Vec::new();
        let header = |file| Item {
            kind: ItemKind::MacroLine(crate::runtime::include_line()),
            span: Span::default(),
            comments: Comments::default(),
            file,
        };
        for (index, item) in program.items.iter().enumerate() {
            // The runtime header first: a user macro defined before it
            // (`#define sp 0.25`) would rewrite its declarations.
            // It takes the file's opening comment, which the derivatives
            // of a first function then leave out (it came out twice).
            let first_of_main;
            let item = if !header_done && item.file == main {
                let mut h = header(main);
                h.comments.leading = item.comments.leading.clone();
                moved_comments = item.comments.leading.clone();
                items.push(h);
                header_done = true;
                let mut rest = item.clone();
                rest.comments.leading.clear();
                first_of_main = rest;
                &first_of_main
            } else {
                item
            };
            match &item.kind {
                ItemKind::Function(p) => {
                    let p = *p;
                    let static_needed =
                        program.proc(p).storage == Storage::Static && needed.contains(&p);
                    if static_needed {
                        self.out.procs[p.index()]
                            .comments
                            .leading
                            .retain(|c| !moved_comments.contains(c));
                        items.push(item.clone());
                    } else if program.proc(p).storage != Storage::Static {
                        items.push(Item {
                            kind: ItemKind::Prototype(p),
                            comments: Default::default(),
                            ..item.clone()
                        });
                    }
                    // Then the copies made for other activity patterns
                    // (`specialize/activity`).
                    let copies = super::specialize::copies_of(program, p);
                    for (copy, p) in
                        std::iter::once((false, p)).chain(copies.into_iter().map(|c| (true, c)))
                    {
                        if diff_procs.contains(&p)
                            && let Some(a) = self.aprocs.get(&p)
                        {
                            // A recursive head's `P_b` calls `P_fwd`/`P_bwd`.
                            for id in [a.fwd, a.bwd, a.fused, a.joint].into_iter().flatten() {
                                self.out.procs[id.index()]
                                    .comments
                                    .leading
                                    .retain(|c| !moved_comments.contains(c));
                                items.push(Item {
                                    kind: ItemKind::Function(id),
                                    file: main,
                                    comments: if copy {
                                        Default::default()
                                    } else {
                                        item.comments.clone()
                                    },
                                    ..item.clone()
                                });
                            }
                        }
                    }
                    // `adjoint/call-free-later`: the copy whose frees are
                    // put off.
                    if let Some(&copy) = self.deferring.get(&p) {
                        items.push(Item {
                            kind: ItemKind::Function(copy),
                            file: main,
                            comments: Default::default(),
                            ..item.clone()
                        });
                    }
                }
                ItemKind::Globals {
                    base,
                    storage,
                    vars,
                } if item.file == main => {
                    let keep_definition = *storage == Storage::Static;
                    items.push(Item {
                        kind: ItemKind::Globals {
                            base: base.clone(),
                            storage: if keep_definition {
                                *storage
                            } else {
                                Storage::Extern
                            },
                            vars: vars
                                .iter()
                                .map(|v| Declarator {
                                    sym: v.sym,
                                    init: if keep_definition {
                                        v.init.clone()
                                    } else {
                                        None
                                    },
                                })
                                .collect(),
                        },
                        ..item.clone()
                    });
                }
                _ => {
                    items.push(item.clone());
                    for kind in self.type_items.remove(&index).unwrap_or_default() {
                        items.push(Item {
                            kind,
                            comments: Default::default(),
                            file: main,
                            ..item.clone()
                        });
                    }
                }
            }
        }
        if !header_done {
            items.push(header(main));
        }
        let generated: HashSet<ProcId> = self
            .aprocs
            .values()
            .flat_map(|a| [a.joint, a.fused, a.fwd, a.bwd])
            .flatten()
            .chain(self.deferring.values().copied())
            .collect();
        super::declare_before_use(&self.out, &generated, &mut items);
        super::drop_undefined_static_prototypes(&self.out, &mut items);
        super::drop_unused_static_globals(&self.out, &mut items);
        super::mention_uncalled_header_statics(&mut self.out, &generated, &items);
        // Adjoints of globals, defined here, before the first procedure.
        let at = items
            .iter()
            .position(|i| matches!(i.kind, ItemKind::Function(_) | ItemKind::Prototype(_)))
            .unwrap_or(items.len());
        let mut gitems = Vec::new();
        let adjoint_of: HashMap<SymId, SymId> = bglobals.iter().copied().collect();
        for &(s, b) in &bglobals {
            let sym = &self.out.symbols[b.index()];
            let init = super::derivative_pointer_init(program, &self.out, s, &|g| {
                adjoint_of.get(&g).copied()
            });
            // (A local given static storage for the pair keeps its
            // adjoint private too: `adjoint/kept-locals`.)
            let storage = if program.frame_statics.contains_key(&s) {
                Storage::Static
            } else {
                Storage::Auto
            };
            gitems.push(Item {
                kind: ItemKind::Globals {
                    base: leaf_type(&sym.ty),
                    storage,
                    vars: vec![Declarator { sym: b, init }],
                },
                span: program.sym(s).span,
                comments: Default::default(),
                file: main,
            });
        }
        items.splice(at..at, gitems);
        let generated: Vec<ProcId> = self
            .aprocs
            .values()
            .flat_map(|a| [a.joint, a.fused, a.fwd, a.bwd])
            .flatten()
            .chain(self.deferring.values().copied())
            .collect();
        super::tangent::add_digamma_if_called(
            &self.out,
            &generated,
            &mut items,
            program.proc(diff_procs[0]).span,
            main,
        );
        let families: Vec<(ProcId, ProcId, u8)> = self
            .aprocs
            .iter()
            .flat_map(|(&p, a)| {
                let user = program.specialized.get(&p).copied().unwrap_or(p);
                [a.joint, a.fused, a.fwd, a.bwd]
                    .into_iter()
                    .zip(0u8..)
                    .filter_map(move |(d, role)| Some((d?, user, role)))
            })
            .chain(
                self.deferring
                    .iter()
                    .map(|(&p, &d)| (d, program.specialized.get(&p).copied().unwrap_or(p), 4)),
            )
            .collect();
        super::merge_identical_copies(&mut self.out, &mut items, &families);
        self.out.items = items;
        self.out
    }
}

/// Removes what the forward sweep writes into hoisted variables that
/// nothing reads (their readers were sliced away): scalars, and local
/// arrays and structs whose parts are only stored (`c.v[0] = x * x` when
/// the fused `P_b` drops `return c`); `t = f_fwd(x)` keeps the call.
/// `adjoint/free-later`: where a forward sweep hands memory to
/// `aioli_free_later`, each head's `P_b` opens a sweep at its start and
/// closes it at its end, and its pair does so across its two halves
/// (`P_fwd` opens, `P_bwd` closes), so the runtime frees that memory when
/// the outermost adjoint call ends. Output without such memory is left as
/// it is.
fn bracket_sweeps(out: &mut Program, heads: &[AdjointProcs], runtime: [ProcId; 3], explain: bool) {
    let [open, close, later] = runtime;
    let mut uses_later = false;
    for p in &out.procs {
        if let Some(b) = &p.body {
            crate::il::visit_stmts(&b.stmts, &mut |s| {
                uses_later |= matches!(&s.kind, StmtKind::Call { callee, .. } if *callee == later);
            });
        }
    }
    if !uses_later {
        return;
    }
    // Statement ids are handed out again once every procedure is built.
    let call = |callee: ProcId, span: Span| Stmt {
        id: crate::il::StmtId(0),
        kind: StmtKind::Call {
            result: None,
            callee,
            args: Vec::new(),
            decl_init: false,
        },
        span,
        comments: Comments {
            trailing: explain.then(|| "/* adjoint/free-later */".to_string()),
            ..Comments::default()
        },
    };
    for h in heads {
        for (proc, opens, closes) in [
            (h.joint, true, true),
            (h.fwd, true, false),
            (h.bwd, false, true),
        ] {
            let Some(proc) = proc else { continue };
            let span = out.procs[proc.index()].span;
            let Some(body) = &mut out.procs[proc.index()].body else {
                continue;
            };
            if opens {
                // After the declarations and `(void)x;` lines at the top.
                let at = body
                    .stmts
                    .iter()
                    .position(|s| !matches!(s.kind, StmtKind::Decl { .. } | StmtKind::Discard(_)))
                    .unwrap_or(body.stmts.len());
                body.stmts.insert(at, call(open, span));
            }
            if closes {
                body.stmts.push(call(close, span));
            }
        }
    }
}

fn drop_unread_scalars(body: &mut Vec<Stmt>, hoisted: &[SymId]) {
    // Until nothing changes: dropping `r = 1.0 + t` leaves `t` unread.
    let mut dead: HashSet<SymId> = HashSet::default();
    loop {
        let mut read = HashSet::default();
        reads_but_self_updates(body, &mut read);
        let before = dead.len();
        dead.extend(hoisted.iter().copied().filter(|s| !read.contains(s)));
        if dead.len() == before {
            return;
        }
        prune_writes(body, &dead);
    }
}

/// `adjoint/empty-loop`: a forward-sweep `for` loop whose body the
/// slicing emptied (`s += x[i] * x[i]` when no sweep needs `s`) is
/// dropped when it only counts: its header assigns and steps its index
/// and nothing else, and every read of that index in the procedure sits
/// in a `for` loop whose header assigns the index first, so no read can
/// see the value the dropped loop would have left.
fn drop_empty_loops(body: &mut Vec<Stmt>) {
    let mut outside = HashSet::default();
    index_reads_outside_loops(body, &mut Vec::new(), &mut outside);
    crate::il::rewrite_stmt_lists(body, &mut |list| {
        list.retain(|s| counting_loop_index(s).is_none_or(|i| outside.contains(&i)));
    });
}

/// A recomputed test (`adjoint/if-recompute`) may be left guarding
/// branches the cleanup passes emptied: an `if` with nothing in either
/// branch is dropped (IL tests have no effects; one with a comment of the
/// user's before it stays),
/// and one with only an `else` tests the opposite.
fn drop_empty_branches(body: &mut Vec<Stmt>) {
    let empty = |b: &Block| b.stmts.is_empty() && b.closing_comments.is_empty();
    // A popped branch marker (`if (b)`, `if (b == 0)`) stays: the pop
    // before it sets `b`, which must be read.
    let marker = |c: &Expr| match &c.kind {
        ExprKind::Var(_) => true,
        ExprKind::Binary {
            op: BinOp::Eq,
            lhs,
            rhs,
        } => {
            matches!(lhs.kind, ExprKind::Var(_))
                && matches!(rhs.kind, ExprKind::IntConst { value: 0, .. })
        }
        _ => false,
    };
    crate::il::rewrite_stmt_lists(body, &mut |list| {
        list.retain(|s| {
            !matches!(&s.kind, StmtKind::If { cond, then, other }
                if !marker(cond) && empty(then) && other.as_ref().is_none_or(&empty)
                    && s.comments.leading.is_empty())
        });
        for s in list.iter_mut() {
            if let StmtKind::If { cond, then, other } = &mut s.kind
                && !marker(cond)
                && empty(then)
                && let Some(o) = other.take()
            {
                *cond = negated(cond);
                *then = o;
            }
        }
    });
}

/// The opposite test: a comparison of integers turned around (`i < n`
/// gives `i >= n`; of reals, NaN would make that wrong), else `!(c)`.
fn negated(cond: &Expr) -> Expr {
    let int = |e: &Expr| matches!(e.ty.ty, Type::Int { .. });
    if let ExprKind::Binary { op, lhs, rhs } = &cond.kind
        && int(lhs)
        && int(rhs)
    {
        let flipped = match op {
            BinOp::Eq => Some(BinOp::Ne),
            BinOp::Ne => Some(BinOp::Eq),
            BinOp::Lt => Some(BinOp::Ge),
            BinOp::Ge => Some(BinOp::Lt),
            BinOp::Gt => Some(BinOp::Le),
            BinOp::Le => Some(BinOp::Gt),
            _ => None,
        };
        if let Some(op) = flipped {
            return Expr {
                kind: ExprKind::Binary {
                    op,
                    lhs: lhs.clone(),
                    rhs: rhs.clone(),
                },
                ..cond.clone()
            };
        }
    }
    let mut arg = cond.clone();
    arg.parens = true;
    Expr::new(
        ExprKind::Unary {
            op: UnOp::Not,
            arg: Box::new(arg),
        },
        QualType::int(),
        cond.span,
    )
}

/// The index of a `for` loop with an empty body whose header only assigns
/// and steps that index.
fn counting_loop_index(s: &Stmt) -> Option<SymId> {
    let StmtKind::Loop {
        header: LoopHeader::For { init, step, .. },
        body,
    } = &s.kind
    else {
        return None;
    };
    if !body.stmts.is_empty() {
        return None;
    }
    let [first] = init.as_slice() else {
        return None;
    };
    let index = assigned_var(first)?;
    step.iter()
        .all(|s| assigned_var(s) == Some(index))
        .then_some(index)
}

/// The variable a statement assigns as a whole (`i = 0`, `i += 2`).
fn assigned_var(s: &Stmt) -> Option<SymId> {
    match &s.kind {
        StmtKind::Assign { lhs, .. } => match lhs.kind {
            ExprKind::Var(v) => Some(v),
            _ => None,
        },
        _ => None,
    }
}

/// Adds to `out` every variable `e` reads that `known` does not hold.
fn reads_not_in(e: &Expr, known: impl Fn(SymId) -> bool, out: &mut HashSet<SymId>) {
    visit(e, &mut |x| {
        if let ExprKind::Var(v) = x.kind
            && !known(v)
        {
            out.insert(v);
        }
    });
}

/// Variables read outside every `for` loop whose header assigns them
/// (`covered` holds the indices of the enclosing ones).
fn index_reads_outside_loops(stmts: &[Stmt], covered: &mut Vec<SymId>, out: &mut HashSet<SymId>) {
    for s in stmts {
        match &s.kind {
            StmtKind::Loop {
                header: LoopHeader::For { init, cond, step },
                body,
            } => {
                index_reads_outside_loops(init, covered, out);
                let index = init.iter().find_map(assigned_var);
                covered.extend(index);
                if let Some(c) = cond {
                    reads_not_in(c, |v| covered.contains(&v), out);
                }
                index_reads_outside_loops(step, covered, out);
                index_reads_outside_loops(&body.stmts, covered, out);
                if index.is_some() {
                    covered.pop();
                }
            }
            _ => {
                let lhs = match &s.kind {
                    StmtKind::Assign { lhs, .. } => Some(lhs),
                    StmtKind::Call {
                        result: Some(r), ..
                    } => Some(r),
                    _ => None,
                };
                for e in super::names::stmt_exprs(s) {
                    if lhs.is_some_and(|l| std::ptr::eq(l, e)) && var_path_root(e).is_some() {
                        continue;
                    }
                    reads_not_in(e, |v| covered.contains(&v), out);
                }
                match &s.kind {
                    StmtKind::If { then, other, .. } => {
                        index_reads_outside_loops(&then.stmts, covered, out);
                        if let Some(o) = other {
                            index_reads_outside_loops(&o.stmts, covered, out);
                        }
                    }
                    StmtKind::Loop { body, .. } | StmtKind::Block(body) => {
                        index_reads_outside_loops(&body.stmts, covered, out)
                    }
                    StmtKind::Switch { cases, .. } => {
                        for c in cases {
                            index_reads_outside_loops(&c.body, covered, out);
                        }
                    }
                    _ => {}
                }
            }
        }
    }
}

/// Variables whose values statements read (a variable only assigned is not).
fn reads(stmts: &[Stmt], out: &mut HashSet<SymId>) {
    crate::il::visit_stmts(stmts, &mut |s| {
        let skip: Option<&Expr> = match &s.kind {
            StmtKind::Assign { lhs, .. } => Some(lhs),
            StmtKind::Call {
                result: Some(r), ..
            } => Some(r),
            _ => None,
        };
        for e in super::names::stmt_exprs(s) {
            if skip.is_some_and(|k| std::ptr::eq(k, e)) && var_path_root(e).is_some() {
                continue;
            }
            visit(e, &mut |x| {
                if let ExprKind::Var(v) = x.kind {
                    out.insert(v);
                }
            });
        }
    });
}

/// Variables whose values statements read, but for a variable's reads in
/// its own update (`s += a[i]`, `s = 2.0 * s`): a variable read only there
/// is read by nothing else.
fn reads_but_self_updates(stmts: &[Stmt], out: &mut HashSet<SymId>) {
    crate::il::visit_stmts(stmts, &mut |s| {
        let (skip, own) = match &s.kind {
            StmtKind::Assign { lhs, .. } => (Some(lhs), store_root(lhs)),
            StmtKind::Call {
                result: Some(r), ..
            } => (Some(r), None),
            _ => (None, None),
        };
        let mut note = |x: &Expr| {
            if let ExprKind::Var(v) = x.kind
                && Some(v) != own
            {
                out.insert(v);
            }
        };
        for e in super::names::stmt_exprs(s) {
            if skip.is_some_and(|k| std::ptr::eq(k, e)) {
                store_reads(e, &mut note);
                continue;
            }
            visit(e, &mut note);
        }
    });
}

/// The variable a store writes part of when it writes the variable's own
/// memory: `v`, `v.f`, `a[i]`, `c.v[0]` of a local array or struct, not
/// `p[i]` through a pointer.
fn store_root(e: &Expr) -> Option<SymId> {
    match &e.kind {
        ExprKind::Var(v) => Some(*v),
        ExprKind::Field { base, .. } => store_root(base),
        ExprKind::Index { base, .. } if matches!(base.ty.ty, Type::Array { .. }) => {
            store_root(base)
        }
        _ => None,
    }
}

/// What a store's target reads: the indices along the path of a
/// `store_root` target, everything for another target.
fn store_reads(e: &Expr, note: &mut impl FnMut(&Expr)) {
    match &e.kind {
        ExprKind::Var(_) => {}
        ExprKind::Field { base, .. } if store_root(base).is_some() => store_reads(base, note),
        ExprKind::Index { base, index } if store_root(e).is_some() => {
            store_reads(base, note);
            visit(index, note);
        }
        _ => visit(e, note),
    }
}

/// Variables `stmts` may read before writing them (upward-exposed reads),
/// over-approximated: a loop body or a branch may not run, so what it
/// writes counts as written only inside it (both branches of an `if`, and
/// a `do` body, count after them).
fn exposed_reads(stmts: &[Stmt], written: &mut HashSet<SymId>, out: &mut HashSet<SymId>) {
    for s in stmts {
        match &s.kind {
            StmtKind::Loop { header, body } => match header {
                LoopHeader::For { init, cond, step } => {
                    exposed_reads(init, written, out);
                    if let Some(c) = cond {
                        reads_not_in(c, |v| written.contains(&v), out);
                    }
                    let mut inner = written.clone();
                    exposed_reads(&body.stmts, &mut inner, out);
                    exposed_reads(step, &mut inner, out);
                }
                LoopHeader::While { cond } => {
                    reads_not_in(cond, |v| written.contains(&v), out);
                    exposed_reads(&body.stmts, &mut written.clone(), out);
                }
                LoopHeader::DoWhile { cond } => {
                    exposed_reads(&body.stmts, written, out);
                    reads_not_in(cond, |v| written.contains(&v), out);
                }
            },
            StmtKind::If { cond, then, other } => {
                reads_not_in(cond, |v| written.contains(&v), out);
                let mut a = written.clone();
                exposed_reads(&then.stmts, &mut a, out);
                let mut b = written.clone();
                if let Some(o) = other {
                    exposed_reads(&o.stmts, &mut b, out);
                }
                *written = a.intersection(&b).copied().collect();
            }
            StmtKind::Block(b) => exposed_reads(&b.stmts, written, out),
            // A declaration reads its initialiser and starts a variable
            // whose earlier value nothing can read.
            StmtKind::Decl { vars, .. } => {
                for d in vars {
                    if let Some(init) = &d.init {
                        visit_init(init, &mut |e| {
                            reads_not_in(e, |v| written.contains(&v), out)
                        });
                    }
                    written.insert(d.sym);
                }
            }
            _ => {
                // A simple statement reads (all of `reads`) before it
                // writes; anything else is taken as reading everything it
                // mentions and writing nothing.
                let one = std::slice::from_ref(s);
                let mut r = HashSet::default();
                reads(one, &mut r);
                out.extend(r.into_iter().filter(|v| !written.contains(v)));
                if matches!(s.kind, StmtKind::Assign { .. } | StmtKind::Call { .. }) {
                    assigned_vars(one, written, &mut HashSet::default());
                }
            }
        }
    }
}

/// The variable of `v` or `v.f.g` (a struct field is a part of it).
fn var_path_root(e: &Expr) -> Option<SymId> {
    match &e.kind {
        ExprKind::Var(v) => Some(*v),
        ExprKind::Field { base, .. } => var_path_root(base),
        _ => None,
    }
}

/// The first simple or compound statement of `stmts` (in order, outer
/// before inner) for which `pick` holds.
fn find_stmt_mut<'s>(stmts: &'s mut [Stmt], pick: &dyn Fn(&Stmt) -> bool) -> Option<&'s mut Stmt> {
    for st in stmts {
        if pick(st) {
            return Some(st);
        }
        let inner = match &mut st.kind {
            StmtKind::If { then, other, .. } => match find_stmt_mut(&mut then.stmts, pick) {
                Some(s) => Some(s),
                None => other
                    .as_mut()
                    .and_then(|o| find_stmt_mut(&mut o.stmts, pick)),
            },
            StmtKind::Loop { header, body } => {
                let in_header = match header {
                    LoopHeader::For { init, .. } => find_stmt_mut(init, pick),
                    _ => None,
                };
                match in_header {
                    Some(s) => Some(s),
                    None => find_stmt_mut(&mut body.stmts, pick),
                }
            }
            StmtKind::Block(b) => find_stmt_mut(&mut b.stmts, pick),
            _ => None,
        };
        if inner.is_some() {
            return inner;
        }
    }
    None
}

/// Do a call's arguments read the variable its result is stored in
/// (`q = peek(q, &y[i])`)?
fn args_read_target(args: &[Expr], target: &Expr) -> bool {
    let Some(root) = super::names::root_sym(target) else {
        return true;
    };
    let mut found = false;
    for a in args {
        crate::il::visit_expr(a, &mut |x| {
            found |= matches!(x.kind, ExprKind::Var(v) if v == root)
        });
    }
    found
}

/// A singular-point condition with its comparisons of two numbers decided
/// (`p == 0.0 && 0.5 < 1.0` is `p == 0.0`): `None` when it is known false.
fn fold_known(e: Expr) -> Option<Expr> {
    use super::names::decided;
    match decided(&e) {
        Some(false) => return None,
        // Always singular: kept as written (it has no variable to test).
        Some(true) => return Some(e),
        None => {}
    }
    let ExprKind::Binary {
        op: BinOp::And,
        lhs,
        rhs,
    } = &e.kind
    else {
        return Some(e);
    };
    match (decided(lhs), decided(rhs)) {
        (Some(false), _) | (_, Some(false)) => None,
        (Some(true), _) => fold_known((**rhs).clone()),
        (_, Some(true)) => fold_known((**lhs).clone()),
        _ => Some(e),
    }
}

/// Keeps the simple statements of `stmts` (at every depth) for which `keep`
/// holds; the comments of a dropped statement go to the next statement
/// kept in its list (or the previous one), so none is lost.
fn retain_simple(stmts: &mut Vec<Stmt>, keep: &mut dyn FnMut(&Stmt) -> bool) {
    let mut out: Vec<Stmt> = Vec::with_capacity(stmts.len());
    let mut orphan = Comments::default();
    for mut s in stmts.drain(..) {
        let compound = matches!(
            s.kind,
            StmtKind::If { .. } | StmtKind::Loop { .. } | StmtKind::Block(_)
        );
        if !compound && !keep(&s) {
            orphan.leading.append(&mut s.comments.leading);
            // The `--explain` tag names the dropped statement's rule: it
            // goes with it; a user comment after it stays.
            if let Some(t) = s.comments.trailing.take() {
                let user = match t.strip_prefix("/* adjoint/") {
                    Some(rest) => rest.split_once("*/").map_or("", |(_, r)| r).trim(),
                    None => t.as_str(),
                };
                if !user.is_empty() {
                    orphan.leading.push(user.to_string());
                }
            }
            continue;
        }
        match &mut s.kind {
            StmtKind::If { then, other, .. } => {
                retain_simple(&mut then.stmts, keep);
                if let Some(o) = other {
                    retain_simple(&mut o.stmts, keep);
                }
            }
            StmtKind::Loop { header, body } => {
                if let LoopHeader::For { init, step, .. } = header {
                    retain_simple(init, keep);
                    retain_simple(step, keep);
                }
                retain_simple(&mut body.stmts, keep);
            }
            StmtKind::Block(b) => retain_simple(&mut b.stmts, keep),
            _ => {}
        }
        if !orphan.is_empty() {
            let mut leading = std::mem::take(&mut orphan.leading);
            leading.append(&mut s.comments.leading);
            s.comments.leading = leading;
        }
        out.push(s);
    }
    if !orphan.is_empty()
        && let Some(last) = out.last_mut()
    {
        last.comments.leading.append(&mut orphan.leading);
    }
    *stmts = out;
}

/// Drops assignments to the variables of `dead` (or their fields), and the
/// results of calls stored into them.
fn prune_writes(stmts: &mut Vec<Stmt>, dead: &HashSet<SymId>) {
    let is_dead = |e: &Expr| store_root(e).is_some_and(|v| dead.contains(&v));
    stmts.retain(|s| !matches!(&s.kind, StmtKind::Assign { lhs, .. } if is_dead(lhs)));
    for s in stmts.iter_mut() {
        match &mut s.kind {
            StmtKind::Call { result, .. } if result.as_ref().is_some_and(is_dead) => {
                *result = None;
            }
            StmtKind::If { then, other, .. } => {
                prune_writes(&mut then.stmts, dead);
                if let Some(o) = other {
                    prune_writes(&mut o.stmts, dead);
                }
            }
            StmtKind::Loop { header, body } => {
                if let LoopHeader::For { init, step, .. } = header {
                    prune_writes(init, dead);
                    prune_writes(step, dead);
                }
                prune_writes(&mut body.stmts, dead);
            }
            StmtKind::Block(b) => prune_writes(&mut b.stmts, dead),
            _ => {}
        }
    }
}

/// Variables assigned as a whole somewhere in `stmts` (`out`), and those
/// of which a part is assigned or whose address is taken (`parts`).
fn assigned_vars(stmts: &[Stmt], out: &mut HashSet<SymId>, parts: &mut HashSet<SymId>) {
    crate::il::visit_stmts(stmts, &mut |s| {
        let target = match &s.kind {
            StmtKind::Assign { lhs, .. } => Some(lhs),
            StmtKind::Call {
                result: Some(r), ..
            } => Some(r),
            _ => None,
        };
        if let Some(Expr {
            kind: ExprKind::Var(v),
            ..
        }) = target
        {
            out.insert(*v);
        }
        if let Some(r) = target.and_then(super::names::root_sym) {
            parts.insert(r);
        }
        // Memory written through an address: `&s`, `&s.f`, or an array
        // member `s.c` passed to a callee.
        for e in super::names::stmt_exprs(s) {
            visit(e, &mut |x| {
                if let ExprKind::AddrOf(r) = &x.kind
                    && let Some(v) = super::names::root_sym(r)
                {
                    parts.insert(v);
                }
            });
        }
        if let StmtKind::Call { args, .. } = &s.kind {
            for a in args {
                if matches!(a.ty.ty, Type::Pointer(_) | Type::Array { .. })
                    && let Some(v) = super::names::root_sym(a)
                {
                    parts.insert(v);
                }
            }
        }
    });
}

/// Variables a generated body mentions.
fn collect_used(stmts: &[Stmt], used: &mut HashSet<SymId>) {
    crate::il::visit_stmts(stmts, &mut |s| {
        for e in super::names::stmt_exprs(s) {
            visit(e, &mut |x| {
                if let ExprKind::Var(v) = x.kind {
                    used.insert(v);
                }
            });
        }
    });
}

/// The variables `stmts` read: every one they mention, but where it is
/// only the whole target of an assignment.
/// Drops the assignments to the variables of `vars` and the results of
/// the calls stored in them (the calls stay: a pop keeps the stack
/// balanced).
fn forget_values(stmts: &mut Vec<Stmt>, vars: &HashSet<SymId>) {
    crate::il::rewrite_stmt_lists(stmts, &mut |list| {
        list.retain(|st| {
            !matches!(&st.kind, StmtKind::Assign { lhs, .. }
                if matches!(lhs.kind, ExprKind::Var(v) if vars.contains(&v)))
        });
        for st in list.iter_mut() {
            if let StmtKind::Call { result, .. } = &mut st.kind
                && matches!(result.as_ref().map(|r| &r.kind), Some(ExprKind::Var(v)) if vars.contains(v))
            {
                *result = None;
            }
        }
    });
}

fn collect_read(stmts: &[Stmt], read: &mut HashSet<SymId>) {
    crate::il::visit_stmts(stmts, &mut |s| {
        for e in super::names::stmt_exprs(s) {
            let whole_target = match &s.kind {
                StmtKind::Assign { lhs, .. } => std::ptr::eq(e, lhs),
                StmtKind::Call {
                    result: Some(r), ..
                } => std::ptr::eq(e, r),
                _ => false,
            };
            if whole_target && matches!(e.kind, ExprKind::Var(_)) {
                continue;
            }
            visit(e, &mut |x| {
                if let ExprKind::Var(v) = x.kind {
                    read.insert(v);
                }
            });
        }
    });
}

fn strip_const(ty: &mut QualType) {
    ty.is_const = false;
    match &mut ty.ty {
        Type::Pointer(t) | Type::Array { elem: t, .. } => strip_const(t),
        _ => {}
    }
}

impl<'x, 'a: 'x> Host for AdjointHost<'x, 'a> {
    type Val = AVal<'x>;

    fn view(&self, v: &AVal<'x>) -> View<AVal<'x>> {
        match v {
            AVal::Proc(p, body) => View::Node(
                "function",
                vec![
                    AVal::Sym(SymId(p.0)),
                    AVal::Formals(*p, 0),
                    AVal::Stmts(body),
                ],
            ),
            AVal::Formals(p, i) => {
                if *i < self.program.proc(*p).params.len() {
                    View::Cons(AVal::Formal(*p, *i), AVal::Formals(*p, i + 1))
                } else {
                    View::Nil
                }
            }
            AVal::Stmts(list) => match list.split_first() {
                Some((h, t)) => View::Cons(AVal::Stmt(h), AVal::Stmts(t)),
                None => View::Nil,
            },
            AVal::Args(s, i) => {
                let n = match &s.kind {
                    StmtKind::Call { args, .. } => args.len(),
                    _ => 0,
                };
                if *i < n {
                    View::Cons(AVal::Arg(s, *i), AVal::Args(s, i + 1))
                } else {
                    View::Nil
                }
            }
            AVal::Stmt(s) => self.view_stmt(s),
            AVal::Decls(list) => match list.split_first() {
                Some((d, t)) => View::Cons(AVal::Declarator(d), AVal::Decls(t)),
                None => View::Nil,
            },
            AVal::Declarator(d) => View::Node(
                "var",
                vec![
                    AVal::Sym(d.sym),
                    match &d.init {
                        Some(Init::Expr(e)) => AVal::Expr(e),
                        Some(i) => AVal::Init(i),
                        None => AVal::Atom("none".into()),
                    },
                ],
            ),
            AVal::Init(i) => View::Node("init-list", vec![AVal::Init(i)]),
            AVal::Expr(e) => self.view_expr(e),
            AVal::Arg(s, i) => match &s.kind {
                StmtKind::Call { args, .. } => self.view_expr(&args[*i]),
                _ => View::Opaque,
            },
            AVal::Atom(a) => View::Atom(a.to_string()),
            AVal::Num(x) => View::Num(*x),
            AVal::List(items) => match items.split_first() {
                Some((h, t)) => View::Cons(h.clone(), AVal::List(t.to_vec())),
                None => View::Nil,
            },
            AVal::With(e, v) => View::Node("with", vec![(**e).clone(), (**v).clone()]),
            _ => View::Opaque,
        }
    }

    fn describe(&self, v: &AVal<'x>) -> String {
        match v {
            AVal::Stmt(s) => format!("the statement at byte {}", s.span.lo),
            AVal::Expr(e) => format!("an expression at byte {}", e.span.lo),
            AVal::Proc(p, _) => format!("procedure '{}'", self.program.proc(*p).name),
            _ => "a term".into(),
        }
    }

    fn fired(&mut self, rule: &str) {
        self.trace.insert(rule.to_string());
    }

    fn atom(&self, name: &str) -> AVal<'x> {
        AVal::Atom(name.into())
    }

    fn num(&self, x: f64) -> AVal<'x> {
        AVal::Num(x)
    }

    fn enter(&mut self, _relation: &str, node: &AVal<'x>) {
        if let AVal::Stmt(s) = node {
            self.stmts.push(s);
            self.error_span = Some(s.span);
        }
    }

    fn leave(&mut self, _relation: &str, node: &AVal<'x>) {
        if let AVal::Stmt(_) = node {
            self.stmts.pop();
        }
    }

    fn guard(
        &mut self,
        name: &str,
        args: &[AVal<'x>],
        node: &AVal<'x>,
    ) -> Result<bool, ApplyError> {
        let subject = args.first().unwrap_or(node);
        let orig_expr = |v: &AVal<'x>| -> Option<&'x Expr> {
            match v {
                AVal::Expr(e) => Some(e),
                AVal::Arg(s, i) => match &s.kind {
                    StmtKind::Call { args, .. } => Some(&args[*i]),
                    _ => None,
                },
                _ => None,
            }
        };
        Ok(match name {
            "isHead" => match subject {
                AVal::Sym(p) => self.heads.contains(&ProcId(p.0)),
                _ => false,
            },
            "isLiveForDiff" => match self.stmt() {
                Some(s) => {
                    let live = self.a.is_live_for_diff(self.proc, s.id);
                    if !live
                        && matches!(s.kind, StmtKind::If { .. } | StmtKind::Loop { .. })
                        && self.zeroes_adjoints(s)
                    {
                        // Its backward sweep would have to replay control
                        // that the forward sweep no longer computes.
                        return Err(ApplyError::new(
                            "the adjoint mode does not handle yet a passive call that overwrites active memory inside a branch or loop the derivatives otherwise do not need",
                        ));
                    }
                    // A call of the original that frees memory: the
                    // backward sweep may still read that memory.
                    if live
                        && let StmtKind::Call { callee, .. } = &s.kind
                        && !self.aprocs.contains_key(callee)
                        && !self.frees_later_call(s)
                        && self.program.proc(*callee).body.is_some()
                        && super::names::may_free(self.program, *callee, &mut Vec::new())
                    {
                        // Live only for what it frees (`diff-live/effect`)
                        // and no copy can put that off: a reversed
                        // allocation frees the memory, the call is left out.
                        if !self.writes_live(s) {
                            return Ok(false);
                        }
                        let name = &self.program.proc(*callee).name;
                        return Err(ApplyError::new(format!(
                            "the adjoint mode does not handle yet a call of '{name}' whose result or writes the derivatives need and that frees memory: the backward sweep may still read what it frees; free that memory in '{}' after the call, or split '{name}' in two",
                            self.program.proc(self.proc).name
                        )));
                    }
                    live
                }
                None => true,
            },
            "isCanonicalFor" => self.stmt().is_some_and(|s| self.canonical_for(s).is_some()),
            "isRecomputableTest" => self.stmt().is_some_and(|s| self.recomputable_test(s)),
            "isActiveCall" => self.stmt().is_some_and(|s| {
                self.a.is_active_call(self.proc, s.id)
                    || self.diff.sets_derivative_pointer(self.program, s)
                    || self.diff.moves_derivative_pointers(self.program, s)
            }),
            "isJoint" => self.stmt().is_some_and(|s| {
                self.is_joint_call(s)
                    && !self.diff.sets_derivative_pointer(self.program, s)
                    && !self.diff.moves_derivative_pointers(self.program, s)
            }),
            "setsAdjointPointer" => self
                .stmt()
                .is_some_and(|s| self.diff.sets_derivative_pointer(self.program, s)),
            "resultIsPointer" => self.result_pointer_adjoint.is_some(),
            "isCheckpoint" => match self.stmt() {
                Some(s) if checkpoint::is_region(s) => match self.region_snapshot(s) {
                    Ok(_) => true,
                    Err(why) => {
                        // `adjoint/checkpoint`: a region whose snapshot
                        // cannot be taken is taped like any other code
                        // (right, but not checkpointed): the user is told.
                        let note = Diagnostic::warning(
                            s.span,
                            format!(
                                "this $AD CHECKPOINT-START region is not checkpointed (its values \
                                 are stored on the stack instead): {why}"
                            ),
                        );
                        if !self.notes.iter().any(|n| n.span == note.span) {
                            self.notes.push(note);
                        }
                        false
                    }
                },
                _ => false,
            },
            "hasBody" => match subject {
                AVal::Sym(p) => self.program.proc(ProcId(p.0)).body.is_some(),
                _ => false,
            },
            "hasDerivative" => match subject {
                AVal::Sym(p) => self
                    .rules
                    .derivatives
                    .contains_key(&self.program.proc(ProcId(p.0)).name),
                _ => false,
            },
            "isDiffFormalArg" => match subject {
                AVal::Formal(p, i) => self.is_diff_formal(*p, *i),
                AVal::Arg(s, i) => match &s.kind {
                    StmtKind::Call { callee, .. } => self.is_diff_formal(*callee, *i),
                    _ => false,
                },
                _ => false,
            },
            "isActiveExpr" => match (orig_expr(subject), self.stmt()) {
                (Some(e), Some(s)) => {
                    (real_rank(self.program, &e.ty) > 0 || is_struct(self.program, &e.ty))
                        && self.a.is_active_expr(self.proc, s.id, e)
                }
                _ => false,
            },
            "isRef" => orig_expr(subject).is_some_and(|e| self.a.is_ref(e)),
            // `adjoint/actual-converted`: a real passed by value to a
            // formal of another precision (a `double` to a `float`).
            "isConverted" => match subject {
                AVal::Arg(s, i) => match &s.kind {
                    StmtKind::Call { callee, args, .. } => {
                        let formal = self
                            .program
                            .proc(*callee)
                            .params
                            .get(*i)
                            .map(|&f| real_rank(self.program, &self.program.sym(f).ty));
                        // The adjoint passed is the one of the reference under the
                        // casts (`twice((float)x)` passes x's), so its type counts.
                        let actual = args
                            .get(*i)
                            .map(|a| real_rank(self.program, &peel_casts(a).ty));
                        matches!((formal, actual), (Some(f), Some(a)) if f > 0 && a > 0 && f != a)
                    }
                    _ => false,
                },
                _ => false,
            },
            "isReal" => orig_expr(subject).is_some_and(|e| real_rank(self.program, &e.ty) > 0),
            // A real or a struct: passed by value (`adjoint/arg-ref-value`).
            "isByValue" => orig_expr(subject).is_some_and(|e| {
                real_rank(self.program, &e.ty) > 0 || is_struct(self.program, &e.ty)
            }),
            "isExpr" => matches!(subject, AVal::Expr(_)),
            "isUnreversedMemory" => self.stmt().is_some_and(|s| self.frees_unreversed(s)),
            "freesLater" => self.stmt().is_some_and(|s| self.frees_later_call(s)),
            "isPointer" => match subject {
                AVal::Sym(v) => is_pointer(self.program, &self.program.sym(*v).ty),
                // An array passed as an argument is a pointer to its first
                // element.
                other => {
                    orig_expr(other).is_some_and(|e| super::names::is_address(self.program, &e.ty))
                }
            },
            "isDiff" if matches!(subject, AVal::Sym(_)) => match subject {
                AVal::Sym(v) => {
                    self.diff.syms.contains(v) && has_real(self.program, &self.program.sym(*v).ty)
                }
                _ => false,
            },
            "isDiff" => orig_expr(subject)
                .is_some_and(|e| has_real(self.program, &e.ty) && self.is_diff_address(e)),
            "isNone" => matches!(subject, AVal::Atom(a) if &**a == "none"),
            "isNullPointer" => orig_expr(subject)
                .is_some_and(|e| matches!(e.kind, ExprKind::IntConst { value: 0, .. })),
            "mayOverlapRhs" => match self.stmt().map(|s| &s.kind) {
                Some(StmtKind::Assign { lhs, rhs, .. }) => {
                    let lz = self.zones_of(lhs);
                    let mut overlap = false;
                    visit(rhs, &mut |x| {
                        if self.a.is_ref(x) && self.zones_of(x).iter().any(|z| lz.contains(z)) {
                            overlap = true;
                        }
                    });
                    overlap
                }
                _ => true,
            },
            _ => return Err(ApplyError::new(format!("unknown guard '{name}'"))),
        })
    }

    fn build(
        &mut self,
        head: &str,
        mut args: Vec<AVal<'x>>,
        node: &AVal<'x>,
        rule: &str,
    ) -> Result<AVal<'x>, ApplyError> {
        let arity = |n: usize, args: &Vec<AVal<'x>>| {
            if args.len() == n {
                Ok(())
            } else {
                Err(ApplyError::new(format!("'{head}' takes {n} arguments")))
            }
        };
        Ok(match head {
            "nothing" => AVal::Code(Vec::new()),
            "with" => {
                arity(2, &args)?;
                let v = args.pop().unwrap_or(AVal::Num(0.0));
                let e = args.pop().unwrap_or(AVal::Num(0.0));
                AVal::With(Box::new(e), Box::new(v))
            }
            "list" => AVal::List(args),
            "seq" => {
                let mut code = Vec::new();
                for a in args {
                    code.extend(self.code_of(a)?);
                }
                AVal::Code(code)
            }
            "external-outputs" => {
                // `adjoint/call-external-passive`: the call as written,
                // unless the function may write reals through a pointer.
                arity(1, &args)?;
                let AVal::Sym(p) = args[0] else {
                    return Err(ApplyError::new("'external-outputs' names a callee"));
                };
                let proc = self.program.proc(ProcId(p.0));
                let writes_reals = proc.params.iter().any(|&f| {
                    match self.program.resolve(&self.program.sym(f).ty.ty) {
                        Type::Pointer(t) => !t.is_const && self.program.contains_real(&t.ty),
                        _ => false,
                    }
                });
                if writes_reals && proc.origin != ProcOrigin::System {
                    return Err(ApplyError::new(format!(
                        "external function '{}' may write reals through a pointer argument; aioli cannot \
                         differentiate it without its body",
                        proc.name
                    )));
                }
                let s = self
                    .stmt()
                    .ok_or_else(|| ApplyError::new("'external-outputs' outside a statement"))?;
                AVal::Code(self.tag(vec![s.clone()], rule))
            }
            "same" => {
                let s = self
                    .stmt()
                    .ok_or_else(|| ApplyError::new("'same' outside a statement"))?;
                if let StmtKind::Block(b) = &s.kind {
                    let mut copy = s.clone();
                    let stmts = self.plain_copy(&b.stmts)?;
                    if let StmtKind::Block(cb) = &mut copy.kind {
                        cb.stmts = stmts;
                    }
                    return Ok(AVal::Code(self.tag(vec![copy], rule)));
                }
                let mut s = s.clone();
                match &mut s.kind {
                    StmtKind::Call { decl_init, .. } => *decl_init = false,
                    StmtKind::Alloc {
                        decl_init,
                        zeroed,
                        form,
                        count,
                        elem,
                        ..
                    } => {
                        *decl_init = false;
                        // `adjoint/alloc`: zeroed, so that the forward
                        // sweep may save an element before its first
                        // assignment.
                        if !*zeroed {
                            *zeroed = true;
                            let cast = match form {
                                crate::il::AllocForm::Malloc { cast, .. }
                                | crate::il::AllocForm::Calloc { cast, .. } => cast.clone(),
                            };
                            *form = crate::il::AllocForm::Calloc {
                                count: count.clone(),
                                size: Expr::new(
                                    ExprKind::SizeOfType(elem.clone()),
                                    QualType::size_t(),
                                    s.span,
                                ),
                                cast,
                            };
                        }
                    }
                    _ => {}
                }
                AVal::Code(self.tag(vec![s], rule))
            }
            "assign" => {
                arity(2, &args)?;
                let r = self.expr_of(&args[1])?;
                let l = self.expr_of(&args[0])?;
                let s = self.assign(l, r, AssignSugar::Plain);
                AVal::Code(self.tag(vec![s], rule))
            }
            "push-adjoint-pointer" | "pop-adjoint-pointer" => {
                arity(1, &args)?;
                // The original left-hand side itself: the analyses know
                // expressions by address.
                let lhs: &Expr = match self.stmt().map(|s| &s.kind) {
                    Some(StmtKind::Assign { lhs, .. }) => lhs,
                    _ => return Err(ApplyError::new(format!("'{head}' outside an assignment"))),
                };
                let pb = self.expr_of(&args[0])?;
                let code = if self.must_save(lhs) {
                    vec![if head == "push-adjoint-pointer" {
                        self.push_of(&pb)
                    } else {
                        self.pop_of(&pb)
                    }]
                } else {
                    Vec::new()
                };
                AVal::Code(self.tag(code, rule))
            }
            "push-var-adjoint" | "pop-var-adjoint" => {
                arity(1, &args)?;
                let AVal::Sym(v) = args[0] else {
                    return Err(ApplyError::new(format!("'{head}' takes a variable")));
                };
                let code = if self.must_save_sym(v) {
                    let vb = self.adjoint_var(v)?;
                    vec![if head == "push-var-adjoint" {
                        self.push_of(&vb)
                    } else {
                        self.pop_of(&vb)
                    }]
                } else {
                    Vec::new()
                };
                AVal::Code(self.tag(code, rule))
            }
            "push-pointer" | "pop-pointer" => {
                arity(1, &args)?;
                let p = self.expr_of(&args[0])?;
                let s = if head == "push-pointer" {
                    self.push_of(&p)
                } else {
                    self.pop_of(&p)
                };
                AVal::Code(self.tag(vec![s], rule))
            }
            "free" => {
                arity(1, &args)?;
                let p = self.expr_of(&args[0])?;
                let s = self.mk(StmtKind::Free { ptr: p });
                AVal::Code(self.tag(vec![s], rule))
            }
            "call-free-later" => {
                arity(0, &args)?;
                let s = self
                    .stmt()
                    .ok_or_else(|| ApplyError::new("'call-free-later' outside a call"))?;
                let StmtKind::Call { callee, .. } = &s.kind else {
                    return Err(ApplyError::new("'call-free-later' outside a call"));
                };
                let copy = self.deferring_copy(*callee);
                let mut call = s.clone();
                if let StmtKind::Call { callee, .. } = &mut call.kind {
                    *callee = copy;
                }
                AVal::Code(self.tag(vec![call], rule))
            }
            "free-later" => {
                arity(1, &args)?;
                let p = self.expr_of(&args[0])?;
                let s = self.runtime_call("aioli_free_later", vec![self.void_pointer(&p)], None);
                AVal::Code(self.tag(vec![s], rule))
            }
            "alloc-adjoint" => {
                arity(1, &args)?;
                let tb = self.expr_of(&args[0])?;
                let s = self
                    .stmt()
                    .ok_or_else(|| ApplyError::new("'alloc-adjoint' outside an allocation"))?;
                let StmtKind::Alloc {
                    elem, count, form, ..
                } = &s.kind
                else {
                    return Err(ApplyError::new("'alloc-adjoint' outside an allocation"));
                };
                // An array of structs `T` has an adjoint array of `T_b`
                // (`adjoint/struct-types`).
                let mut belem = self.adjoint_type(elem);
                strip_const(&mut belem);
                let size = Expr::new(
                    ExprKind::SizeOfType(belem.clone()),
                    QualType::size_t(),
                    self.span(),
                );
                let cast = match form {
                    crate::il::AllocForm::Malloc { cast, .. }
                    | crate::il::AllocForm::Calloc { cast, .. } => {
                        cast.as_ref().map(|c| self.adjoint_type(c))
                    }
                };
                let a = self.mk(StmtKind::Alloc {
                    target: tb,
                    elem: belem,
                    count: count.clone(),
                    zeroed: true,
                    form: crate::il::AllocForm::Calloc {
                        count: count.clone(),
                        size,
                        cast,
                    },
                    decl_init: false,
                });
                AVal::Code(self.tag(vec![a], rule))
            }
            "cons" => {
                arity(2, &args)?;
                let tail = args.pop().unwrap_or(AVal::List(Vec::new()));
                let head_v = args.pop().unwrap_or(AVal::List(Vec::new()));
                let mut items = vec![head_v];
                match tail {
                    AVal::List(t) => items.extend(t),
                    AVal::Code(c) if c.is_empty() => {}
                    other => items.push(other),
                }
                AVal::List(items)
            }
            "push-snapshot" | "pop-snapshot" => {
                // `adjoint/checkpoint`: the region's snapshot, pushed before
                // the region runs plainly, popped before it runs again.
                let s = self
                    .stmt()
                    .ok_or_else(|| ApplyError::new("a snapshot outside a region"))?;
                let refs = self.region_snapshot(s).map_err(ApplyError::new)?;
                let code = if head == "push-snapshot" {
                    refs.iter().flat_map(|r| self.push_all(r)).collect()
                } else {
                    refs.iter().rev().flat_map(|r| self.pop_all(r)).collect()
                };
                AVal::Code(self.tag(code, rule))
            }
            "push-restore" => {
                let refs = self.saved_refs()?;
                let code = refs.iter().flat_map(|r| self.push_all(r)).collect();
                AVal::Code(self.tag(code, rule))
            }
            "pop-restore" => {
                let refs = self.saved_refs()?;
                let code = refs.iter().rev().flat_map(|r| self.pop_all(r)).collect();
                AVal::Code(self.tag(code, rule))
            }
            "push-var" | "pop-var" => {
                arity(1, &args)?;
                let AVal::Sym(v) = args[0] else {
                    return Err(ApplyError::new(format!("'{head}' takes a variable")));
                };
                let code = if self.must_save_sym(v) {
                    let e = self.var(v);
                    if head == "push-var" {
                        self.push_all(&e)
                    } else {
                        self.pop_all(&e)
                    }
                } else {
                    Vec::new()
                };
                AVal::Code(self.tag(code, rule))
            }
            "init-assign" => {
                arity(2, &args)?;
                let AVal::Sym(v) = args[0] else {
                    return Err(ApplyError::new("'init-assign' takes a variable"));
                };
                let init = match &args[1] {
                    AVal::Init(i) => (*i).clone(),
                    other => Init::Expr(self.expr_of(other)?),
                };
                let mut code = self.init_assign_code(v, &init)?;
                if let (Some(first), Some(s)) = (code.first_mut(), self.stmt())
                    && !self.commented.contains(&s.id)
                {
                    first.comments = s.comments.clone();
                    self.commented.insert(s.id);
                }
                AVal::Code(self.tag(code, rule))
            }
            "buffer-temp" => {
                // `adjoint/actual-pointer-passive`: a zero buffer shaped as
                // the variable the pointer points into.
                arity(1, &args)?;
                let AVal::Arg(s, i) = args[0] else {
                    return Err(ApplyError::new("'buffer-temp' takes an argument"));
                };
                let (_, t) = self.buffer_temp(s, i)?;
                AVal::New(self.var(t))
            }
            "buffer-adjoint" => {
                // The pointer's own address computation, on the buffer
                // instead of the variable: `&w[i]` passes `&wb[i]`.
                arity(1, &args)?;
                let AVal::Arg(s, i) = args[0] else {
                    return Err(ApplyError::new("'buffer-adjoint' takes an argument"));
                };
                let (root, t) = self.buffer_temp(s, i)?;
                let before = self.private_adjoints.insert(root, t);
                let adjoint = self.ref_adjoint(self.arg_expr(s, i));
                match before {
                    Some(b) => self.private_adjoints.insert(root, b),
                    None => self.private_adjoints.remove(&root),
                };
                AVal::New(adjoint.map_err(|e| {
                    ApplyError::new(format!(
                        "the adjoint mode does not yet pass a zero adjoint buffer for this pointer argument without adjoint ({})",
                        e.message
                    ))
                })?)
            }
            "zero-memory" => {
                arity(1, &args)?;
                let r = self.expr_of(&args[0])?;
                let code = self.zero_memory(r, 0)?;
                AVal::Code(self.tag(code, rule))
            }
            "no-derivative" => {
                let Some(AVal::Sym(p)) = args.first() else {
                    return Err(ApplyError::new("'no-derivative' names a callee"));
                };
                return Err(ApplyError::new(super::tangent::no_derivative_message(
                    self.program,
                    ProcId(p.0),
                )));
            }
            "zero-call-writes" => {
                let s = self
                    .stmt()
                    .ok_or_else(|| ApplyError::new("'zero-call-writes' outside a call"))?;
                let StmtKind::Call { result, callee, .. } = &s.kind else {
                    return Err(ApplyError::new("'zero-call-writes' outside a call"));
                };
                let mut code = Vec::new();
                let mut result_zones = Vec::new();
                if let Some(r) = result {
                    result_zones = self.zones_of(r);
                    if real_rank(self.program, &r.ty) > 0 && self.is_diff_address(r) {
                        let rb = self.ref_adjoint(r)?;
                        let zero = self.real(0.0, rb.ty.clone());
                        code.push(self.assign(rb, zero, AssignSugar::Plain));
                    }
                }
                if let Some(f) = self.a.facts.get(&self.proc)
                    && let Some(&i) = f.point_of.get(&s.id)
                {
                    for &z in &f.points[i].effect.writes {
                        if result_zones.contains(&z)
                            || !self.a.is_diff_zone(z)
                            || !self.useful_after_point(i, z)
                        {
                            continue;
                        }
                        let obj = self.a.locs.object(self.a.locs.zone(z).obj);
                        match obj.kind {
                            ObjKind::Var(v)
                                if real_rank(self.program, &self.program.sym(v).ty) > 0 =>
                            {
                                let vb = self.adjoint_var(v)?;
                                let zero = self.real(0.0, vb.ty.clone());
                                code.push(self.assign(vb, zero, AssignSugar::Plain));
                            }
                            _ => {
                                return Err(ApplyError::new(format!(
                                    "the adjoint mode does not yet handle a passive call of '{}' that overwrites active memory ('{}')",
                                    self.program.proc(*callee).name,
                                    obj.name
                                )));
                            }
                        }
                    }
                }
                AVal::Code(self.tag(code, rule))
            }
            "list-adjoints" => {
                arity(2, &args)?;
                let AVal::Sym(v) = args[0] else {
                    return Err(ApplyError::new("'list-adjoints' takes a variable"));
                };
                let AVal::Init(init @ Init::List(..)) = args[1] else {
                    return Err(ApplyError::new("'list-adjoints' takes an initialiser list"));
                };
                let vb = self.adjoint_var(v)?;
                let var = self.var(v);
                let mut leaves = Vec::new();
                init_leaves(self.program, &var.ty, init, &mut Vec::new(), &mut leaves);
                // `adjoint/struct-init`: the adjoint of each scalar, in
                // reverse order; a zero-filled one only loses its adjoint.
                let rules = self.rules;
                let mut code = Vec::new();
                for (path, item) in leaves.into_iter().rev() {
                    let Some(vbk) = self.follow(vb.clone(), &path, true)? else {
                        continue;
                    };
                    if real_rank(&self.out, &vbk.ty) == 0 && !is_struct(&self.out, &vbk.ty) {
                        continue;
                    }
                    if let Some(e) = item {
                        let with =
                            AVal::With(Box::new(AVal::Expr(e)), Box::new(AVal::New(vbk.clone())));
                        for r in engine::apply(rules, self, "adj", &with)? {
                            code.extend(self.code_of(r)?);
                        }
                    }
                    code.extend(self.zero_all(vbk)?);
                }
                AVal::Code(self.tag(code, rule))
            }
            "push-branch" => {
                arity(1, &args)?;
                let v = match args[0] {
                    AVal::Num(x) => x as i64,
                    _ => 0,
                };
                let s =
                    self.runtime_call("aioli_push_control", vec![self.int(v), self.int(1)], None);
                AVal::Code(self.tag(vec![s], rule))
            }
            "pop-branch" => {
                let b = match self.branch {
                    Some(b) => b,
                    None => {
                        let name = self.namer.fresh_local("aioli_branch");
                        let b = self.new_sym(&name, QualType::int(), SymKind::Local);
                        self.locals.push((b, None));
                        self.branch = Some(b);
                        b
                    }
                };
                let pop =
                    self.runtime_call("aioli_pop_control", vec![self.int(1)], Some(self.var(b)));
                AVal::Popped(pop, self.var(b))
            }
            "if" => {
                arity(3, &args)?;
                let other = self.code_of(args.pop().unwrap_or(AVal::Code(vec![])))?;
                let then = self.code_of(args.pop().unwrap_or(AVal::Code(vec![])))?;
                if then.is_empty() && other.is_empty() && !matches!(args[0], AVal::Popped(..)) {
                    return Ok(AVal::Code(Vec::new()));
                }
                let cond_v = args.pop().unwrap_or(AVal::Num(0.0));
                let popped = matches!(cond_v, AVal::Popped(..));
                let mut code = Vec::new();
                let cond = match cond_v {
                    AVal::Popped(pop, e) => {
                        if then.is_empty() && other.is_empty() {
                            // Still popped, the marker was pushed; its value
                            // chooses nothing.
                            let mut pop = pop;
                            if let StmtKind::Call { result, .. } = &mut pop.kind {
                                *result = None;
                            }
                            code.push(pop);
                            return Ok(AVal::Code(self.tag(code, rule)));
                        }
                        code.push(pop);
                        e
                    }
                    v => self.expr_of(&v)?,
                };
                let (cond, then, other) = if then.is_empty() && !other.is_empty() {
                    // A branch marker reads `b == 0`; a test of the
                    // original (`adjoint/if-recompute`) is turned around.
                    let cond = if popped {
                        let zero = self.int(0);
                        self.binary(BinOp::Eq, cond, zero)
                    } else {
                        negated(&cond)
                    };
                    (cond, other, Vec::new())
                } else {
                    (cond, then, other)
                };
                let s = self.mk(StmtKind::If {
                    cond,
                    then: self.block(then),
                    other: if other.is_empty() {
                        None
                    } else {
                        Some(self.block(other))
                    },
                });
                code.push(s);
                AVal::Code(self.tag(code, rule))
            }
            "counted-while" | "counted-do-while" => {
                arity(2, &args)?;
                let body = self.code_of(args.pop().unwrap_or(AVal::Code(vec![])))?;
                let cond = match args.pop() {
                    Some(AVal::Atom(a)) if &*a == "none" => self.int(1),
                    Some(v) => self.expr_of(&v)?,
                    None => self.int(1),
                };
                let c = self.counter()?;
                let mut body = body;
                let one = self.int(1);
                body.push(self.assign(
                    self.var(c),
                    self.binary(BinOp::Add, self.var(c), one),
                    AssignSugar::Increment,
                ));
                let header = if head == "counted-while" {
                    LoopHeader::While { cond }
                } else {
                    LoopHeader::DoWhile { cond }
                };
                let code = vec![
                    self.assign(self.var(c), self.int(0), AssignSugar::Plain),
                    self.mk(StmtKind::Loop {
                        header,
                        body: self.block(body),
                    }),
                    self.runtime_call("aioli_push_int", vec![self.var(c)], None),
                ];
                AVal::Code(self.tag(code, rule))
            }
            "canonical-for" => {
                // `adjoint/for-canonical`, forward sweep: INIT_F, the loop
                // with BODY_F, then what the backward sweep steps between.
                arity(2, &args)?;
                let body = self.code_of(args.pop().unwrap_or(AVal::Code(vec![])))?;
                let init = self.code_of(args.pop().unwrap_or(AVal::Code(vec![])))?;
                let s = self
                    .stmt()
                    .ok_or_else(|| ApplyError::new("'canonical-for' outside a loop"))?;
                let c = self
                    .canonical_for(s)
                    .ok_or_else(|| ApplyError::new("'canonical-for' on another loop"))?;
                let StmtKind::Loop {
                    header: LoopHeader::For { cond, step, .. },
                    ..
                } = &s.kind
                else {
                    return Err(ApplyError::new("'canonical-for' on another loop"));
                };
                let (cond, step) = (cond.clone(), step.clone());
                let i = self.var(c.index);
                let mut code = Vec::new();
                let simple_init = matches!(init.as_slice(),
                    [Stmt { kind: StmtKind::Assign { lhs, .. }, .. }]
                        if matches!(lhs.kind, ExprKind::Var(v) if v == c.index));
                let header_init = if c.first.is_some() && simple_init {
                    init
                } else {
                    code.extend(init);
                    Vec::new()
                };
                let first = match c.first {
                    Some(_) => None,
                    None => {
                        let f = self.first_var(c.index)?;
                        code.push(self.assign(self.var(f), i.clone(), AssignSugar::Plain));
                        Some(f)
                    }
                };
                code.push(self.mk(StmtKind::Loop {
                    header: LoopHeader::For {
                        init: header_init,
                        cond,
                        step,
                    },
                    body: self.block(body),
                }));
                match first {
                    // The backward sweep computes the last index from the
                    // invariant bound.
                    None if c.last.is_some() => {}
                    // The last index visited, exit − k (no overflow: see
                    // `canonical_for`).
                    None => {
                        let k = self.int(c.step.abs());
                        let op = if c.step > 0 { BinOp::Sub } else { BinOp::Add };
                        let mut last = self.binary(op, i, k);
                        last.ty = self.out.symbols[c.index.index()].ty.clone();
                        last.ty.is_const = false;
                        code.push(self.push_of(&last));
                    }
                    // The exit and first indices.
                    Some(f) => {
                        code.push(self.push_of(&i));
                        code.push(self.push_of(&self.var(f)));
                    }
                }
                AVal::Code(self.tag(code, rule))
            }
            "canonical-for-backward" => {
                // `adjoint/for-canonical`, backward sweep: BODY_B for the
                // indices of the forward sweep, last to first.
                arity(1, &args)?;
                let mut body = self.code_of(args.pop().unwrap_or(AVal::Code(vec![])))?;
                let s = self
                    .stmt()
                    .ok_or_else(|| ApplyError::new("'canonical-for-backward' outside a loop"))?;
                let c = self
                    .canonical_for(s)
                    .ok_or_else(|| ApplyError::new("'canonical-for-backward' on another loop"))?;
                let i = self.var(c.index);
                let k = self.int(c.step.abs());
                let (op, sugar) = match (c.step > 0, c.step.abs() == 1) {
                    (true, true) => (BinOp::Sub, AssignSugar::Decrement),
                    (true, false) => (BinOp::Sub, AssignSugar::Compound(BinOp::Sub)),
                    (false, true) => (BinOp::Add, AssignSugar::Increment),
                    (false, false) => (BinOp::Add, AssignSugar::Compound(BinOp::Add)),
                };
                let mut back = self.binary(op, i.clone(), k);
                back.ty = i.ty.clone();
                let step_back = self.assign(i.clone(), back, sugar);
                let code = match c.first {
                    Some(first) => {
                        // for (i = last; i >= first; i -= k), `<=` for a
                        // decreasing index.
                        let test = if c.step > 0 { BinOp::Ge } else { BinOp::Le };
                        let mut bound = self.int(first);
                        bound.ty = i.ty.clone();
                        let cond = self.binary(test, i.clone(), bound);
                        let start = match &c.last {
                            Some(last) => self.assign(i.clone(), last.clone(), AssignSugar::Plain),
                            None => self.pop_of(&i),
                        };
                        vec![self.mk(StmtKind::Loop {
                            header: LoopHeader::For {
                                init: vec![start],
                                cond: Some(cond),
                                step: vec![step_back],
                            },
                            body: self.block(body),
                        })]
                    }
                    None => {
                        // i = exit; while (i != first) { i -= k; BODY_B }
                        let f = self.first_var(c.index)?;
                        let cond = self.binary(BinOp::Ne, i.clone(), self.var(f));
                        body.insert(0, step_back);
                        vec![
                            self.pop_of(&self.var(f)),
                            self.pop_of(&i),
                            self.mk(StmtKind::Loop {
                                header: LoopHeader::While { cond },
                                body: self.block(body),
                            }),
                        ]
                    }
                };
                AVal::Code(self.tag(code, rule))
            }
            "replay-count" => {
                arity(1, &args)?;
                let mut body = self.code_of(args.pop().unwrap_or(AVal::Code(vec![])))?;
                let c = self.counter()?;
                let one = self.int(1);
                body.push(self.assign(
                    self.var(c),
                    self.binary(BinOp::Sub, self.var(c), one),
                    AssignSugar::Decrement,
                ));
                let cond = self.binary(BinOp::Gt, self.var(c), self.int(0));
                let code = vec![
                    self.runtime_call("aioli_pop_int", vec![], Some(self.var(c))),
                    self.mk(StmtKind::Loop {
                        header: LoopHeader::While { cond },
                        body: self.block(body),
                    }),
                ];
                AVal::Code(self.tag(code, rule))
            }
            "assign-result-pointer" => {
                // `adjoint/return-pointer`: `*Pb = E_b` in `P_fwd` only.
                arity(1, &args)?;
                match self.result_pointer_adjoint {
                    Some(pb) if self.is_split() => {
                        let rhs = self.expr_of(&args[0])?;
                        let p = self.var(pb);
                        let lhs =
                            Expr::new(ExprKind::Deref(Box::new(p)), rhs.ty.clone(), self.span());
                        let s = self.assign(lhs, rhs, AssignSugar::Plain);
                        AVal::Code(self.tag(vec![s], rule))
                    }
                    _ => AVal::Code(Vec::new()),
                }
            }
            "forward-return" => {
                arity(1, &args)?;
                if self.is_split() {
                    let e = self.expr_of(&args[0])?;
                    let s = self.mk(StmtKind::Return(Some(e)));
                    AVal::Code(self.tag(vec![s], rule))
                } else {
                    AVal::Code(Vec::new())
                }
            }
            "result-adjoint" => match self.result_adjoint {
                Some(r) => AVal::New(self.var(r)),
                None => AVal::New(self.real(0.0, QualType::double())),
            },
            "adjoint-temp" => {
                arity(1, &args)?;
                let refb = self.expr_of(&args[0])?;
                let t = self.temp(&refb.ty, "assign".into());
                self.last_temp = Some(t);
                AVal::New(self.var(t))
            }
            "keep-forward" | "keep-backward" => {
                // `adjoint/keep-intrinsics`: (keep-… RHS CODE ADJOINT).
                arity(3, &args)?;
                let adjoint = self.code_of(args.pop().unwrap_or(AVal::Num(0.0)))?;
                let mut code = self.code_of(args.pop().unwrap_or(AVal::Num(0.0)))?;
                let rhs = self.expr_of(&args[0])?;
                // A head's `return` is not in its forward sweep.
                let returns = matches!(self.stmt().map(|s| &s.kind), Some(StmtKind::Return(_)));
                let kept = if returns && !self.is_split() {
                    Vec::new()
                } else {
                    super::keep::kept_calls(&rhs, &adjoint)
                };
                if kept.is_empty() {
                    return Ok(AVal::Code(code));
                }
                let temps: Vec<Expr> = kept
                    .iter()
                    .enumerate()
                    .map(|(k, c)| {
                        let t = self.kept_temp(c, k);
                        self.var(t)
                    })
                    .collect();
                let mut moved = Vec::new();
                if head == "keep-forward" {
                    // The assignment (or `return`) the rule copied is the
                    // code's last.
                    let at = code
                        .iter()
                        .rposition(|s| {
                            matches!(s.kind, StmtKind::Assign { .. } | StmtKind::Return(Some(_)))
                        })
                        .ok_or_else(|| ApplyError::new("'keep-forward' without an assignment"))?;
                    for (c, t) in kept.iter().zip(&temps) {
                        moved.push(self.assign(t.clone(), c.clone(), AssignSugar::Plain));
                        moved.push(self.push_of(t));
                        super::keep::replace_in_stmts(&mut code[at..=at], c, t);
                    }
                    let moved = self.tag(moved, "adjoint/keep-intrinsics");
                    code.splice(at..at, moved);
                } else {
                    for (c, t) in kept.iter().zip(&temps) {
                        super::keep::replace_in_stmts(&mut code, c, t);
                    }
                    for t in temps.iter().rev() {
                        moved.push(self.pop_of(t));
                    }
                    let moved = self.tag(moved, "adjoint/keep-intrinsics");
                    code.splice(0..0, moved);
                }
                AVal::Code(code)
            }
            "take-adjoint" => {
                arity(1, &args)?;
                let refb = self.expr_of(&args[0])?;
                let t = self
                    .last_temp
                    .ok_or_else(|| ApplyError::new("'take-adjoint' without 'adjoint-temp'"))?;
                let mut code = vec![self.assign(self.var(t), refb.clone(), AssignSugar::Plain)];
                code.extend(self.zero_all(refb)?);
                AVal::Code(self.tag(code, rule))
            }
            "zero" => {
                arity(1, &args)?;
                let r = self.expr_of(&args[0])?;
                let code = self.zero_all(r)?;
                AVal::Code(self.tag(code, rule))
            }
            "increment" => {
                arity(2, &args)?;
                let v = self.expr_of(&args[1])?;
                let r = self.expr_of(&args[0])?;
                let code = self.increment_all(r, v)?;
                AVal::Code(self.tag(code, rule))
            }
            "varName" => {
                arity(1, &args)?;
                match args[0] {
                    AVal::Sym(s) => AVal::New(self.adjoint_var(s)?),
                    _ => return Err(ApplyError::new("'varName' takes a variable")),
                }
            }
            "index" => {
                arity(2, &args)?;
                let i = self.expr_of(&args[1])?;
                let b = self.expr_of(&args[0])?;
                let ty = match self.out.resolve(&b.ty.ty) {
                    Type::Pointer(t) | Type::Array { elem: t, .. } => (**t).clone(),
                    _ => QualType::double(),
                };
                let mut ty = ty;
                strip_const(&mut ty);
                AVal::New(Expr::new(
                    ExprKind::Index {
                        base: Box::new(b),
                        index: Box::new(i),
                    },
                    ty,
                    self.span(),
                ))
            }
            "field" => {
                arity(2, &args)?;
                let AVal::Atom(name) = &args[1] else {
                    return Err(ApplyError::new("'field' takes a field name"));
                };
                let b = self.expr_of(&args[0])?;
                AVal::New(field_of(&self.out, b, name, self.span())?)
            }
            "deref" => {
                arity(1, &args)?;
                let p = self.expr_of(&args[0])?;
                let mut ty = match self.out.resolve(&p.ty.ty) {
                    Type::Pointer(t) | Type::Array { elem: t, .. } => (**t).clone(),
                    _ => QualType::double(),
                };
                strip_const(&mut ty);
                AVal::New(Expr::new(ExprKind::Deref(Box::new(p)), ty, self.span()))
            }
            "address-of" => {
                arity(1, &args)?;
                let e = self.expr_of(&args[0])?;
                AVal::New(self.address_of(e))
            }
            "arg-temp" => {
                arity(1, &args)?;
                let (s, i) = match &args[0] {
                    AVal::Arg(s, i) => (*s as *const Stmt as usize, *i),
                    _ => return Err(ApplyError::new("'arg-temp' takes an argument")),
                };
                let mut ty = self.expr_of(&args[0])?.ty;
                // A real formal's own precision (`adjoint/actual-converted`).
                if let AVal::Arg(st, _) = &args[0]
                    && let StmtKind::Call { callee, .. } = &st.kind
                    && let Some(&f) = self.program.proc(*callee).params.get(i)
                    && real_rank(self.program, &self.program.sym(f).ty) > 0
                {
                    ty = self.program.sym(f).ty.clone();
                }
                let t = match self.arg_temps.get(&(s, i)) {
                    Some(&t) => t,
                    None => {
                        let t = self.temp(&ty, format!("arg{i}"));
                        self.arg_temps.insert((s, i), t);
                        t
                    }
                };
                AVal::New(self.var(t))
            }
            "partials" => {
                arity(3, &args)?;
                let val = self.expr_of(&args[2])?;
                let f = match &args[0] {
                    AVal::Atom(a) => a.to_string(),
                    // `adjoint/call-external`: the callee of a call.
                    AVal::Sym(p) => self.program.proc(ProcId(p.0)).name.clone(),
                    _ => return Err(ApplyError::new("'partials' takes a function name")),
                };
                let list = match &args[1] {
                    AVal::List(l) => l.clone(),
                    AVal::Args(s, from) => {
                        let n = match &s.kind {
                            StmtKind::Call { args, .. } => args.len(),
                            _ => 0,
                        };
                        (*from..n).map(|i| AVal::Arg(s, i)).collect()
                    }
                    _ => Vec::new(),
                };
                let precision = match node {
                    AVal::With(call, _) => match &**call {
                        AVal::Expr(e) => intrinsic_precision(e),
                        AVal::New(e) => intrinsic_precision(e),
                        _ => None,
                    },
                    _ => None,
                };
                let saved = std::mem::replace(&mut self.precision, precision);
                let r = self.partials(&f, &list, val);
                self.precision = saved;
                r?
            }
            "adjoint-formal" => {
                arity(1, &args)?;
                let AVal::Formal(p, i) = args[0] else {
                    return Err(ApplyError::new("'adjoint-formal' takes a formal"));
                };
                let s = self.program.proc(p).params[i];
                let orig = self.program.sym(s).clone();
                let mut ty = self.types.of(self.program, &orig.ty);
                strip_const(&mut ty);
                if !is_pointer(&self.out, &ty) {
                    ty = ty.pointer_to();
                }
                if let Type::Array { elem, .. } = &ty.ty {
                    ty = (**elem).clone().pointer_to();
                }
                let name = self.namer.fresh_local(&format!("{}b", orig.name));
                let b = self.new_sym(&name, ty, SymKind::Param);
                self.bsyms.insert(s, b);
                AVal::Sym(b)
            }
            "push-call-pointer" | "pop-call-pointer-before" | "pop-call-pointer-after" => {
                // `adjoint/call-pointer-result`: the pointer the call sets
                // and its adjoint pointer. When the arguments read them
                // (`q = peek(q, ...)`), they are saved after `P_fwd`'s own
                // records (see `call-forward-pointer`) and restored before
                // `P_bwd`; otherwise saved before `P_fwd` and restored
                // after `P_bwd`.
                arity(1, &args)?;
                let (r, reread) = match self.stmt().map(|s| &s.kind) {
                    Some(StmtKind::Call {
                        result: Some(r),
                        args: cargs,
                        ..
                    }) => (r, args_read_target(cargs, r)),
                    _ => return Err(ApplyError::new(format!("'{head}' outside a call"))),
                };
                let rb = self.expr_of(&args[0])?;
                let code = match (self.must_save(r), head) {
                    (true, "push-call-pointer") if !reread => {
                        vec![self.push_of(r), self.push_of(&rb)]
                    }
                    (true, "pop-call-pointer-before") if reread => {
                        vec![self.pop_of(&rb), self.pop_of(r)]
                    }
                    (true, "pop-call-pointer-after") if !reread => {
                        vec![self.pop_of(&rb), self.pop_of(r)]
                    }
                    _ => Vec::new(),
                };
                AVal::Code(self.tag(code, rule))
            }
            "call-forward-pointer" => {
                // `adjoint/call-pointer-result`: `p = P_fwd(ARGS, &pb)`;
                // when p and pb are needed after, into temporaries first,
                // so that they are saved above what `P_fwd` pushes.
                arity(3, &args)?;
                let ForwardCall {
                    stmt: s,
                    fwd,
                    args: mut cargs,
                    result,
                } = self.forward_call(head, &args[1])?;
                let rb = self.expr_of(&args[2])?;
                let ty = rb.ty.clone().pointer_to();
                let saved = result
                    .filter(|r| self.must_save(r))
                    .filter(|r| {
                        matches!(&s.kind, StmtKind::Call { args, .. } if args_read_target(args, r))
                    })
                    .cloned();
                let code = match saved {
                    Some(r) => {
                        let t = self.result_temp(&r.ty, "pointer-result", "aioli_result");
                        let tb =
                            self.result_temp(&rb.ty, "pointer-result-adjoint", "aioli_resultb");
                        let (tv, tbv) = (self.var(t), self.var(tb));
                        cargs.push(Expr::new(
                            ExprKind::AddrOf(Box::new(tbv.clone())),
                            ty,
                            self.span(),
                        ));
                        let mut c = self.call_stmt(fwd, cargs, Some(tv.clone()));
                        c.comments = s.comments.clone();
                        vec![
                            c,
                            self.push_of(&r),
                            self.push_of(&rb),
                            self.assign(r, tv, AssignSugar::Plain),
                            self.assign(rb, tbv, AssignSugar::Plain),
                        ]
                    }
                    None => {
                        cargs.push(Expr::new(ExprKind::AddrOf(Box::new(rb)), ty, self.span()));
                        let mut c = self.call_stmt(fwd, cargs, result.cloned());
                        c.comments = s.comments.clone();
                        vec![c]
                    }
                };
                AVal::Code(self.tag(code, rule))
            }
            "call-forward" => {
                arity(2, &args)?;
                let ForwardCall {
                    stmt: s,
                    fwd,
                    args: cargs,
                    result,
                } = self.forward_call(head, &args[1])?;
                let saved = match result {
                    Some(r) if self.must_save(r) => Some(r.clone()),
                    _ => None,
                };
                let code = match saved {
                    Some(r) => {
                        let t = if is_struct(self.program, &r.ty) {
                            self.primal_temp(&r.ty)
                        } else {
                            self.temp(&r.ty, "result".into())
                        };
                        let mut c = self.call_stmt(fwd, cargs, Some(self.var(t)));
                        c.comments = s.comments.clone();
                        let mut code = vec![c];
                        code.extend(self.push_all(&r));
                        code.push(self.assign(r, self.var(t), AssignSugar::Plain));
                        code
                    }
                    None => {
                        let mut c = self.call_stmt(fwd, cargs, result.cloned());
                        c.comments = s.comments.clone();
                        vec![c]
                    }
                };
                AVal::Code(self.tag(code, rule))
            }
            "call-backward" | "call-adjoint" => {
                arity(2, &args)?;
                // `call-adjoint` runs the callee's two sweeps back to back:
                // its fused `P_b`, or `P_fwd` then `P_bwd` for a recursive
                // head (whose own `P_b` saves nothing for a caller).
                let fused = match self.stmt().map(|s| &s.kind) {
                    Some(StmtKind::Call { callee, .. }) if head == "call-adjoint" => {
                        self.aprocs.get(callee).and_then(|a| a.fused)
                    }
                    _ => None,
                };
                let (s, bwd) = match fused {
                    Some(p_b) => (self.stmt().expect("a call, matched above"), p_b),
                    None => self.current_call_sweep(head, Sweep::Backward)?,
                };
                let mut code = Vec::new();
                if head == "call-adjoint" && fused.is_none() {
                    let (_, fwd) = self.current_call_sweep(head, Sweep::Forward)?;
                    let StmtKind::Call {
                        args: cargs,
                        callee,
                        ..
                    } = &s.kind
                    else {
                        unreachable!("a call, checked by current_call_sweep")
                    };
                    let fargs = self.fwd_args(*callee, cargs, &args[1])?;
                    code.push(self.call_stmt(fwd, fargs, None));
                }
                let StmtKind::Call { result, callee, .. } = &s.kind else {
                    unreachable!("a call, checked by current_call_sweep")
                };
                let mut cargs = Vec::new();
                if let AVal::List(items) = &args[1] {
                    for it in items {
                        cargs.push(self.expr_of(it)?);
                    }
                }
                let callee_ret = self.program.proc(*callee).ret.clone();
                let valued =
                    |ty: &QualType| real_rank(self.program, ty) > 0 || is_struct(self.program, ty);
                let result_has_adjoint = valued(&callee_ret) && self.diff.results.contains(callee);
                if result_has_adjoint {
                    match result {
                        Some(r) if valued(&r.ty) && self.a.is_diff(self.proc, r) => {
                            // A struct result's adjoint is a `T_b` by value
                            // (`adjoint/struct-result`).
                            let rb = self.ref_adjoint(r)?;
                            let t = self.temp(&r.ty, "result".into());
                            code.push(self.assign(self.var(t), rb.clone(), AssignSugar::Plain));
                            code.extend(self.zero_all(rb)?);
                            cargs.push(self.var(t));
                        }
                        _ if is_struct(self.program, &callee_ret) => {
                            let t = self.temp(&callee_ret, "result".into());
                            code.extend(self.zero_all(self.var(t))?);
                            cargs.push(self.var(t));
                        }
                        _ => cargs.push(self.real(0.0, callee_ret.clone())),
                    }
                }
                if !result_has_adjoint
                    && let Some(r) = result
                    && valued(&r.ty)
                    && self.a.is_diff(self.proc, r)
                {
                    // The callee's result depends on none of its active
                    // inputs: the value written is a constant for the
                    // derivatives, and its adjoint stops here.
                    let rb = self.ref_adjoint(r)?;
                    code.extend(self.zero_all(rb)?);
                }
                code.push(self.call_stmt(bwd, cargs, None));
                AVal::Code(self.tag(code, rule))
            }
            "joint-procedure" => {
                arity(3, &args)?;
                let mut bwd = self.code_of(args.pop().unwrap_or(AVal::Code(vec![])))?;
                let mut fwd = self.code_of(args.pop().unwrap_or(AVal::Code(vec![])))?;
                self.drop_unread_restores(&mut fwd, &mut bwd);
                let mut params = self.params_of(&args[0])?;
                if let Some(r) = self.result_adjoint {
                    params.push(r);
                }
                let id = self.aprocs[&self.proc].joint.expect("heads are joint");
                let mut body = fwd;
                body.extend(self.exit_adjoint_resets());
                body.extend(bwd);
                self.make_proc(id, params, QualType::void(), body, Vec::new(), true)?;
                AVal::Code(Vec::new())
            }
            "split-forward" => {
                // Built with the backward sweep below: the forward sweep's
                // final saves depend on what the backward sweep reads.
                arity(1, &args)?;
                let fwd = self.code_of(args.pop().unwrap_or(AVal::Code(vec![])))?;
                self.pending_fwd = Some(fwd);
                AVal::Code(Vec::new())
            }
            "split-backward" => {
                arity(2, &args)?;
                let mut bwd = self.code_of(args.pop().unwrap_or(AVal::Code(vec![])))?;
                let mut params = self.params_of(&args[0])?;
                if let Some(r) = self.result_adjoint {
                    params.push(r);
                }
                let procs = self.aprocs[&self.proc];
                let mut fwd = self.pending_fwd.take().unwrap_or_default();
                self.drop_unread_restores(&mut fwd, &mut bwd);
                if let Some(fused) = procs.fused {
                    // `adjoint/proc-fused`: F then B in one body; B reads
                    // the locals where F left them, so nothing is saved at
                    // the junction, and the result is not returned.
                    let mut body = fwd.clone();
                    if matches!(body.last().map(|s| &s.kind), Some(StmtKind::Return(_))) {
                        body.pop();
                    }
                    body.extend(self.frame_adjoint_resets());
                    body.extend(bwd.iter().cloned());
                    self.make_proc(
                        fused,
                        params.clone(),
                        QualType::void(),
                        body,
                        Vec::new(),
                        true,
                    )?;
                }
                let Some(id) = procs.bwd else {
                    return Ok(AVal::Code(Vec::new()));
                };
                let mut elsewhere = String::new();
                crate::il::visit_stmts(&fwd, &mut |st| {
                    elsewhere.extend(st.comments.leading.iter().map(|c| c.as_str()));
                    elsewhere.extend(st.comments.trailing.as_deref());
                });
                self.comments_elsewhere = elsewhere;
                let saved = self.read_in(&bwd);
                let mut pops: Vec<Stmt> = saved
                    .iter()
                    .rev()
                    .flat_map(|&s| self.pop_all(&self.var(s)))
                    .collect();
                if self.user_pairs.contains(&self.proc) {
                    pops.extend(self.exit_adjoint_resets());
                }
                pops.extend(self.frame_adjoint_resets());
                self.make_proc(id, params.clone(), QualType::void(), bwd, pops, true)?;
                self.unconst_restored_params(id);
                self.comments_elsewhere.clear();
                let pushes: Vec<Stmt> = saved
                    .iter()
                    .flat_map(|&s| self.push_all(&self.var(s)))
                    .collect();
                let at = match fwd.last().map(|s| &s.kind) {
                    Some(StmtKind::Return(_)) => fwd.len() - 1,
                    _ => fwd.len(),
                };
                let pushes = self.tag(pushes, rule);
                fwd.splice(at..at, pushes);
                let fid = self.aprocs[&self.proc].fwd.expect("split procs have a fwd");
                let orig = self.program.proc(self.proc).clone();
                // `adjoint/fwd-adjoint-pointers`: the forward sweep sets
                // adjoint pointers from the adjoint pointer parameters
                // (`pyb = yb`, saved for the backward sweep), or passes
                // them to a callee's `P_fwd`: it takes those parameters,
                // each after its primal one, as `P_bwd` does.
                let mut used = HashSet::default();
                collect_used(&fwd, &mut used);
                if let Err((e, at)) = self.refuse_local_adjoint_addresses(&fwd) {
                    self.error_span = Some(at);
                    return Err(e);
                }
                let needed = self.fwd_needs.get(&self.proc).cloned().unwrap_or_default();
                let mut fparams = Vec::new();
                let mut follows = Vec::new();
                for (i, &s) in orig.params.iter().enumerate() {
                    fparams.push(s);
                    let Some(&b) = self.bsyms.get(&s) else {
                        continue;
                    };
                    if !params.contains(&b) {
                        continue;
                    }
                    // A by-value struct's private adjoint, whose pointer
                    // members follow the caller's (`adjoint/struct-by-value`):
                    // read here, it needs them here too.
                    let private = self
                        .private_adjoints
                        .get(&s)
                        .copied()
                        .filter(|l| used.contains(l));
                    if used.contains(&b) || private.is_some() {
                        self.fwd_found.entry(self.proc).or_default().insert(i);
                    }
                    if needed.contains(&i) {
                        fparams.push(b);
                        if let Some(local) = private {
                            follows.extend(self.follow_pointer_members(local, b));
                        }
                    }
                }
                fwd.splice(0..0, follows);
                fparams.extend(self.result_pointer_adjoint);
                self.make_proc(fid, fparams, orig.ret.clone(), fwd, Vec::new(), false)?;
                AVal::Code(Vec::new())
            }
            _ => {
                let exprs = args
                    .iter()
                    .map(|a| self.expr_of(a))
                    .collect::<Result<Vec<_>, _>>()?;
                AVal::New(self.build_expr(head, exprs)?)
            }
        })
    }
}

/// The variable whose storage the pointer value `e` points into, when its
/// extent is known here: an array (`w`, `w + i`, `&w[i]`), or a scalar or
/// struct variable (`&s`, `&cells[i].pos`). Otherwise, why not: a pointer
/// variable's target has no extent the caller knows.
pub(crate) fn pointee_variable(program: &Program, e: &Expr) -> Result<SymId, String> {
    fn of_ref(program: &Program, r: &Expr) -> Result<SymId, String> {
        match &r.kind {
            ExprKind::Var(v) if !is_pointer(program, &program.sym(*v).ty) => Ok(*v),
            ExprKind::Index { base, .. } => match &base.kind {
                ExprKind::Var(v) if is_pointer(program, &program.sym(*v).ty) => Err(format!(
                    "'{}' is a pointer: the extent of the memory it points to is not known here",
                    program.sym(*v).name
                )),
                _ => of_ref(program, base),
            },
            ExprKind::Field { base, .. } => of_ref(program, base),
            ExprKind::Var(v) => Err(format!(
                "'{}' is a pointer: the extent of the memory it points to is not known here",
                program.sym(*v).name
            )),
            _ => Err("the memory it points to is not a variable".into()),
        }
    }
    match &e.kind {
        ExprKind::AddrOf(r) => of_ref(program, r),
        ExprKind::Cast { arg, .. } => pointee_variable(program, arg),
        ExprKind::Binary {
            op: BinOp::Add | BinOp::Sub,
            lhs,
            rhs,
        } => {
            if super::names::is_address(program, &lhs.ty) {
                pointee_variable(program, lhs)
            } else {
                pointee_variable(program, rhs)
            }
        }
        ExprKind::Var(_) => of_ref(program, e),
        _ => Err("the memory it points to is not a variable".into()),
    }
}

/// The expressions of an initialiser, nested lists included.
/// The variable an address expression points into (`a`, `&a[i]`,
/// `&s.f`, `a + k`).
/// The precision a `<math.h>` call was written with (`expf`: float).
fn intrinsic_precision(e: &Expr) -> Option<RealKind> {
    match &e.kind {
        ExprKind::Intrinsic { call, .. } => call.precision,
        _ => None,
    }
}

/// The variable an address expression points into (`a`, `&a[1]`, `&s.f`,
/// `a + i`, through casts).
pub(crate) fn address_root(e: &Expr) -> Option<SymId> {
    match &e.kind {
        ExprKind::Var(v) => Some(*v),
        ExprKind::AddrOf(r) | ExprKind::Cast { arg: r, .. } => address_root(r),
        ExprKind::Index { base, .. } | ExprKind::Field { base, .. } => address_root(base),
        ExprKind::Binary { lhs, .. } => address_root(lhs),
        _ => None,
    }
}

/// Which of a callee's split procedures (`P_fwd`, `P_bwd`).
#[derive(Clone, Copy)]
enum Sweep {
    Forward,
    Backward,
}

/// A step from a variable to one of its scalars: an element, or field k
/// of a struct.
#[derive(Clone, Copy, Debug)]
pub(super) enum InitStep {
    Index(usize),
    Field(crate::il::StructId, usize),
}

/// The scalars an initialiser sets, in order: each with its path from the
/// variable of type `ty` and its expression, `None` where C zero-fills.
/// Nested lists and C's brace elision (`double m[2][2] = {1, 2, 3, 4}`)
/// are followed; an expression of the member's own struct type is one
/// leaf (a whole-struct copy).
/// `var`'s scalars set from `init`, one assignment each in C's order,
/// C's zero where the list gives none (`adjoint/declarator-list`,
/// `adjoint/init-addresses`); `None` for a path `var`'s type lacks.
pub(super) fn scalar_assignments(
    program: &Program,
    var: &Expr,
    init: &Init,
    span: Span,
) -> Option<Vec<Stmt>> {
    let mut leaves = Vec::new();
    init_leaves(program, &var.ty, init, &mut Vec::new(), &mut leaves);
    let mut code = Vec::new();
    for (path, item) in leaves {
        let mut lhs = var.clone();
        for &step in &path {
            lhs = follow_step(program, lhs, step, span)?;
        }
        let rhs = match item {
            Some(e) => e.clone(),
            None => {
                let rank = real_rank(program, &lhs.ty);
                let (kind, ty) = if rank > 0 {
                    let mut text = crate::back::c::real_text(0.0);
                    if rank == 1 {
                        text.push('f');
                    }
                    (ExprKind::RealConst { value: 0.0, text }, lhs.ty.clone())
                } else {
                    let text = "0".into();
                    (ExprKind::IntConst { value: 0, text }, QualType::int())
                };
                Expr::new(kind, ty, span)
            }
        };
        code.push(Stmt {
            id: StmtId(0),
            kind: StmtKind::Assign {
                lhs,
                rhs,
                sugar: AssignSugar::Plain,
            },
            span,
            comments: Comments::default(),
        });
    }
    Some(code)
}

/// One step of an initialiser path into `e`, of an original type; `None`
/// for an index into what is not an array.
pub(super) fn follow_step(program: &Program, e: Expr, step: InitStep, span: Span) -> Option<Expr> {
    Some(match step {
        InitStep::Index(k) => {
            let elem = match program.resolve(&e.ty.ty) {
                Type::Array { elem, .. } | Type::Pointer(elem) => (**elem).clone(),
                _ => return None,
            };
            let index = Expr::new(
                ExprKind::IntConst {
                    value: k as i64,
                    text: k.to_string(),
                },
                QualType::int(),
                span,
            );
            Expr::new(
                ExprKind::Index {
                    base: Box::new(e),
                    index: Box::new(index),
                },
                elem,
                span,
            )
        }
        InitStep::Field(sid, k) => {
            let ty = program.strukt(sid).fields[k].ty.clone();
            Expr::new(
                ExprKind::Field {
                    base: Box::new(e),
                    strukt: sid,
                    field: k,
                },
                ty,
                span,
            )
        }
    })
}

fn init_leaves<'e>(
    program: &Program,
    ty: &QualType,
    init: &'e Init,
    path: &mut Vec<InitStep>,
    out: &mut Vec<(Vec<InitStep>, Option<&'e Expr>)>,
) {
    match init {
        Init::Expr(e) => out.push((path.clone(), Some(e))),
        Init::List(items, _) => {
            let mut pos = 0;
            if is_aggregate(program, ty) {
                fill_aggregate(program, ty, items, &mut pos, path, out);
            } else {
                // A scalar in braces: `double x = {1.0};`.
                fill_member(program, ty, items, &mut pos, path, out);
            }
        }
    }
}

fn is_aggregate(program: &Program, ty: &QualType) -> bool {
    matches!(
        program.resolve(&ty.ty),
        Type::Array { .. } | Type::Struct(_)
    )
}

/// The members of an aggregate (elements or fields) with their types.
fn members(program: &Program, ty: &QualType, items_left: usize) -> Vec<(InitStep, QualType)> {
    match program.resolve(&ty.ty) {
        Type::Array { elem, len } => {
            let n = len
                .as_ref()
                .and_then(|l| l.value)
                .map_or(items_left, |n| n as usize);
            (0..n)
                .map(|k| (InitStep::Index(k), (**elem).clone()))
                .collect()
        }
        Type::Struct(sid) => program
            .strukt(*sid)
            .fields
            .iter()
            .enumerate()
            .map(|(k, f)| (InitStep::Field(*sid, k), f.ty.clone()))
            .collect(),
        _ => Vec::new(),
    }
}

fn fill_aggregate<'e>(
    program: &Program,
    ty: &QualType,
    items: &'e [Init],
    pos: &mut usize,
    path: &mut Vec<InitStep>,
    out: &mut Vec<(Vec<InitStep>, Option<&'e Expr>)>,
) {
    for (step, mty) in members(program, ty, items.len().saturating_sub(*pos)) {
        path.push(step);
        fill_member(program, &mty, items, pos, path, out);
        path.pop();
    }
}

fn fill_member<'e>(
    program: &Program,
    ty: &QualType,
    items: &'e [Init],
    pos: &mut usize,
    path: &mut Vec<InitStep>,
    out: &mut Vec<(Vec<InitStep>, Option<&'e Expr>)>,
) {
    match items.get(*pos) {
        None => zero_fill(program, ty, path, out),
        Some(sub @ Init::List(..)) => {
            *pos += 1;
            init_leaves(program, ty, sub, path, out);
        }
        Some(Init::Expr(e)) => {
            let same_struct = matches!(
                (program.resolve(&ty.ty), program.resolve(&e.ty.ty)),
                (Type::Struct(a), Type::Struct(b)) if a == b
            );
            if is_aggregate(program, ty) && !same_struct {
                // Brace elision: the member takes its scalars from this
                // same list.
                fill_aggregate(program, ty, items, pos, path, out);
            } else {
                *pos += 1;
                out.push((path.clone(), Some(e)));
            }
        }
    }
}

fn zero_fill(
    program: &Program,
    ty: &QualType,
    path: &mut Vec<InitStep>,
    out: &mut Vec<(Vec<InitStep>, Option<&Expr>)>,
) {
    if is_aggregate(program, ty) {
        for (step, mty) in members(program, ty, 0) {
            path.push(step);
            zero_fill(program, &mty, path, out);
            path.pop();
        }
    } else {
        out.push((path.clone(), None));
    }
}

/// The variable whose own storage reference `r` designates (`u`, `s.f`,
/// `a[i]` with `a` an array), not memory reached through a pointer
/// (`p[i]`, `*p`, `p->f`).
fn own_storage_root(program: &Program, r: &Expr) -> Option<SymId> {
    match &r.kind {
        ExprKind::Var(v) => Some(*v),
        ExprKind::Field { base, .. } => own_storage_root(program, base),
        ExprKind::Index { base, .. }
            if matches!(program.resolve(&base.ty.ty), Type::Array { .. }) =>
        {
            own_storage_root(program, base)
        }
        _ => None,
    }
}

/// Is `ty` an array (of arrays) of pointers?
fn holds_pointers(program: &Program, ty: &Type) -> bool {
    match program.resolve(ty) {
        Type::Array { elem, .. } => {
            matches!(program.resolve(&elem.ty), Type::Pointer(_))
                || holds_pointers(program, &elem.ty)
        }
        _ => false,
    }
}
