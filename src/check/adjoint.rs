//! The adjoint half of `aioli check` (CONTRACT §6): an adjoint procedure
//! `f_b` is compared with the tangent `f_d` by the dot-product identity
//! ⟨ȳ, J ẋ⟩ = ⟨Jᵀ ȳ, ẋ⟩ (A_a), with central divided differences of `f` as
//! a second witness, and timed against `f` (R_a = T(f_b)/T(f)).
//!
//! # What runs
//!
//! [`check_adjoint`] reads both derivative files with aioli's front end,
//! matches `f_d` with `f` ([`match_signature`]) and `f_b` with `f`
//! ([`match_adjoint_signature`], CONTRACT §3's adjoint column), writes the
//! runtime (`aioli.h`, `aioli.c`) and a C driver into a work directory, and
//! builds five translation units with `cc -O2` (`$CC` honoured, `-I` of the
//! work directory for the runtime): the original, `FILE_d.c`, `FILE_b.c`,
//! `aioli.c` and the driver. The driver is the tangent check's (see
//! [`super::tangent`]: same points, same directions ẋ, same divided
//! differences) with an adjoint part. At each point, after the tangent
//! run, for each dependent in turn and then for all of them at once, it:
//!
//! 1. restores every primal input, in/out buffers included, to the
//!    point's values (`f` and `f_d` may have overwritten them);
//! 2. zeroes every adjoint (the `T_b` buffers, the adjoint globals, `fb`),
//!    and sets the adjoints of the selected dependents' elements to the
//!    point's random weights ȳ (uniform in [-1,1], drawn by aioli and
//!    embedded in the driver);
//! 3. calls `f_b` once and prints `@aioli adj SEL POINT DOT ABS`:
//!    `DOT = Σ x̄ᵢ ẋᵢ` over the directed elements (the independents'
//!    adjoints, `*xb` for reals by value and the active fields of structs,
//!    times the tangent's direction), `ABS = Σ |x̄ᵢ ẋᵢ|`, both accumulated
//!    in long double. `SEL` is the dependent's index, −1 for all.
//!
//! aioli itself forms `⟨ȳ, ẏ⟩` from the tangent lines (`ẏ = f_d`'s output)
//! and `⟨ȳ, dd_h⟩` from the divided differences of each step `h`.
//!
//! # Agreement
//!
//! The error of one comparison is `|⟨ȳ, ẏ⟩ − ⟨x̄, ẋ⟩| / S`, where `S` is the
//! larger of `Σ |ȳₑ ẏₑ|` and `Σ |x̄ᵢ ẋᵢ|`: the sums of the magnitudes of the
//! terms bound the round-off of both dot products, so a sum that cancels
//! down to little is not held to a precision it cannot have (`S = 0`, all
//! terms zero, is an exact agreement). A non-finite value is an infinite
//! error. A dependent's error is the worst over the points; its digits
//! (Tapenade's A_a) are `−log10(error)`. The check passes when every
//! dependent, and all of them together, agree better than
//! [`DEFAULT_MAX_REL_ERR`] (`1e-10`, the option `max_rel_err`): `f_b` and
//! `f_d` compute the same derivatives in another order, so they agree to
//! round-off, about 1e-15 for double precision; a mistake gives errors of
//! order one. The divided differences (the best of [`super::harness::STEPS`],
//! or of [`super::harness::SINGLE_STEPS`] for code that computes in
//! `float`, worst over the points, relative to `max(Σ |ȳₑ ddₑ|, Σ |x̄ᵢ ẋᵢ|)`)
//! must agree to `min_dd_digits` (6 by default, as the tangent check's):
//! this catches an `f_d` and an `f_b` that are wrong in the same way.
//!
//! # Cost
//!
//! R_a uses the timing of [`super::timing`]: loop A restores the inputs,
//! zeroes the adjoints, sets ȳ and calls `f_b`; loop B does all but the
//! call; `(A − B)/n` is `f_b`'s time, against `f`'s measured the same way.
//! When the runtime keeps statistics (`aioli_stack_stats`), the driver
//! resets them, calls `f_b` once at point 0 (with every ȳ set) and reports
//! the bytes pushed and the stack's peak.

use super::domain::Domain;
use super::harness::{
    AdjointDriver, DepPlan, DerivativeProc, Flavor, Plan, Results, Unit, WorkDir, build,
    build_plan, checkable_head, declarations_of, declared_names, digits, draw_inputs, draw_points,
    driver_source, find_tangent_proc, io_error, load_derivative, match_signature, parse_output,
    ratio, run, seconds,
};
pub use super::harness::{
    AdjointParam, AdjointSignature, CheckError, find_adjoint_proc, match_adjoint_signature,
};
use super::tangent::DEFAULT_MIN_DIGITS;
use crate::analysis::head::Head;
use crate::front::FrontOptions;
use crate::il::Program;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The dot-product test's default threshold on the relative error.
pub const DEFAULT_MAX_REL_ERR: f64 = 1e-10;

/// How to run an adjoint check.
#[derive(Clone, Debug)]
pub struct AdjointCheckOptions {
    /// Seed of the random inputs, directions and weights ȳ.
    pub seed: u64,
    /// Number of random points.
    pub points: usize,
    /// The C compiler, possibly with arguments (`$CC`, else `cc`).
    pub cc: String,
    /// Time to spend measuring R_t and R_a, about; 0 skips the measurement.
    pub time_budget_ms: u64,
    /// The dot-product test passes below this relative error.
    pub max_rel_err: f64,
    /// Digits of agreement with the divided differences needed to pass.
    pub min_dd_digits: f64,
    /// `-I` and `-D`, for reading the derivative files and for `cc`.
    pub front: FrontOptions,
    /// The driver is killed after this long.
    pub run_timeout_ms: u64,
    /// Write the driver, the runtime and the objects here and keep them.
    pub keep_dir: Option<PathBuf>,
}

impl Default for AdjointCheckOptions {
    fn default() -> Self {
        let t = super::tangent::TangentCheckOptions::default();
        AdjointCheckOptions {
            seed: t.seed,
            points: t.points,
            cc: t.cc,
            time_budget_ms: t.time_budget_ms,
            max_rel_err: DEFAULT_MAX_REL_ERR,
            min_dd_digits: DEFAULT_MIN_DIGITS,
            front: t.front,
            run_timeout_ms: t.run_timeout_ms,
            keep_dir: None,
        }
    }
}

/// The dot-product test for one dependent (or all of them at once).
#[derive(Clone, Debug, PartialEq)]
pub struct AdjointDependentReport {
    /// As in the head; `(all)` for every dependent at once.
    pub name: String,
    /// Real elements weighted by ȳ.
    pub elements: usize,
    /// Does `f_b` take an adjoint for it? (Without, ȳ cannot reach `f_b`.)
    pub has_adjoint: bool,
    /// Worst relative error of ⟨ȳ, ẏ⟩ against ⟨x̄, ẋ⟩ over the points.
    pub rel_err: f64,
    /// `−log10(rel_err)` (A_a).
    pub digits: f64,
    /// The point of the worst error.
    pub worst_point: Option<usize>,
    /// Digits of agreement of ⟨x̄, ẋ⟩ with ⟨ȳ, divided differences⟩.
    pub dd_digits: f64,
    /// The step that agreed best (of [`super::harness::STEPS`], or
    /// [`super::harness::SINGLE_STEPS`] in single precision).
    pub dd_step: f64,
}

/// The result of [`check_adjoint`]; `Display` prints a readable report.
#[derive(Clone, Debug, PartialEq)]
pub struct AdjointCheck {
    pub head: String,
    pub tangent: String,
    pub adjoint: String,
    pub points: usize,
    pub max_rel_err: f64,
    pub min_dd_digits: f64,
    pub dependents: Vec<AdjointDependentReport>,
    /// Every dependent at once.
    pub overall: AdjointDependentReport,
    /// Seconds per call of `f` and of `f_b`, when measured.
    pub time_f: Option<f64>,
    pub time_f_b: Option<f64>,
    /// T(f_b)/T(f).
    pub r_a: Option<f64>,
    /// Bytes one call of `f_b` pushes, and the stack's peak during it,
    /// when the runtime keeps statistics.
    pub pushed_bytes: Option<u64>,
    pub peak_bytes: Option<u64>,
    /// Every dependent and all of them agree (dot product and divided
    /// differences), and there is at least one dependent.
    pub passed: bool,
    /// How `f_b`'s parameters were matched with `f`'s.
    pub signature: AdjointSignature,
    pub notes: Vec<String>,
}

impl AdjointCheck {
    fn row_passes(&self, d: &AdjointDependentReport) -> bool {
        d.rel_err < self.max_rel_err && d.dd_digits >= self.min_dd_digits
    }
}

impl fmt::Display for AdjointCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "adjoint check of {} against {} (dot product with {}): {} ({} point{}, pass below {:.0e} relative error and at {} digits against divided differences)",
            self.adjoint,
            self.head,
            self.tangent,
            if self.passed { "PASSED" } else { "FAILED" },
            self.points,
            if self.points == 1 { "" } else { "s" },
            self.max_rel_err,
            self.min_dd_digits
        )?;
        let width = self
            .dependents
            .iter()
            .map(|d| d.name.len())
            .max()
            .unwrap_or(0)
            .max("dependent".len());
        writeln!(
            f,
            "  {:<width$}  digits  rel err    DD digits  best h  worst",
            "dependent"
        )?;
        for d in self.dependents.iter().chain([&self.overall]) {
            writeln!(
                f,
                "  {:<width$}  {:>6.1}  {:>9.2e}  {:>9.1}  {:>6.0e}  {}{}{}",
                d.name,
                d.digits,
                d.rel_err,
                d.dd_digits,
                d.dd_step,
                d.worst_point
                    .map(|p| format!("point {p}"))
                    .unwrap_or_else(|| "-".to_string()),
                if d.has_adjoint { "" } else { " (no adjoint)" },
                if self.row_passes(d) {
                    ""
                } else {
                    "  <-- FAILS"
                }
            )?;
        }
        match (self.r_a, self.time_f, self.time_f_b) {
            (Some(r), Some(tf), Some(tb)) => writeln!(
                f,
                "  R_a = T({})/T({}) = {r:.2} ({} per call of {}, {} of {})",
                self.adjoint,
                self.head,
                seconds(tf),
                self.head,
                seconds(tb),
                self.adjoint
            )?,
            _ => writeln!(f, "  R_a not measured")?,
        }
        match (self.pushed_bytes, self.peak_bytes) {
            (Some(p), Some(k)) => writeln!(
                f,
                "  stack: {p} bytes pushed by one call of {} (peak {k} bytes)",
                self.adjoint
            )?,
            _ => writeln!(f, "  stack: not measured (the runtime keeps no statistics)")?,
        }
        for n in &self.notes {
            writeln!(f, "  note: {n}")?;
        }
        Ok(())
    }
}

/// Fills the tangent plan's groups with the adjoint plan's lvalues of the
/// same elements (both plans come from the same inputs, so their groups
/// correspond one to one).
fn attach_adjoints(plan: &mut Plan, adjoint: &Plan) -> Result<(), CheckError> {
    let mismatch =
        || CheckError::Unsupported("the tangent and adjoint plans do not correspond".to_string());
    if plan.independents.len() != adjoint.independents.len()
        || plan.deps.len() != adjoint.deps.len()
    {
        return Err(mismatch());
    }
    for (g, a) in plan.independents.iter_mut().zip(&adjoint.independents) {
        if g.label != a.label || g.len() != a.len() {
            return Err(mismatch());
        }
        g.adj = a.deriv.clone();
    }
    plan.directed = crate::check::harness::directed_groups(&plan.independents, &plan.deps);
    for (d, a) in plan.deps.iter_mut().zip(&adjoint.deps) {
        if d.groups.len() != a.groups.len() {
            return Err(mismatch());
        }
        for (g, ag) in d.groups.iter_mut().zip(&a.groups) {
            g.adj = ag.deriv.clone();
        }
    }
    Ok(())
}

/// `|a − b| / max(sa, sb)`, 0 when both scales are 0, infinite when
/// anything is not finite.
fn dot_error(a: f64, sa: f64, b: f64, sb: f64) -> f64 {
    if ![a, sa, b, sb].iter().all(|v| v.is_finite()) {
        return f64::INFINITY;
    }
    let scale = sa.max(sb);
    if scale == 0.0 {
        0.0
    } else {
        (a - b).abs() / scale
    }
}

/// The dot-product and divided-difference errors of one selection of
/// dependents (`sel`: a dependent's index, or `deps.len()` for all).
fn compare(
    plan: &Plan,
    points: &[super::harness::PointData],
    results: &Results,
    sel: usize,
) -> Result<AdjointDependentReport, CheckError> {
    let npoints = points.len();
    let steps = plan.precision.steps();
    let nsteps = steps.len();
    let mut worst = (0.0f64, None);
    // Per step: the worst error over the points.
    let mut dd_worst = vec![0.0f64; nsteps];
    let mut elements = 0;
    for (p, point) in points.iter().enumerate() {
        let (rhs, rhs_abs) = results
            .adj
            .get(sel)
            .and_then(|v| v[p])
            .ok_or_else(|| CheckError::Output(format!("no adjoint result at point {p}")))?;
        let (mut lhs, mut lhs_abs) = (0.0f64, 0.0f64);
        let mut dd = vec![(0.0f64, 0.0f64); nsteps];
        let mut offset = 0;
        elements = 0;
        for (d, (dep, r)) in plan.deps.iter().zip(&results.deps).enumerate() {
            let count = dep.len();
            if sel == plan.deps.len() || sel == d {
                elements += count;
                for e in 0..count {
                    let yb = point.ybar[offset + e];
                    let t = yb * r.tangent[p * count + e];
                    lhs += t;
                    lhs_abs += t.abs();
                    for (h, acc) in dd.iter_mut().enumerate() {
                        let t = yb * r.dd[h * count * npoints + p * count + e];
                        acc.0 += t;
                        acc.1 += t.abs();
                    }
                }
            }
            offset += count;
        }
        let err = dot_error(lhs, lhs_abs, rhs, rhs_abs);
        if worst.1.is_none() || err > worst.0 {
            worst = (err, Some(p));
        }
        for (h, (v, a)) in dd.iter().enumerate() {
            dd_worst[h] = dd_worst[h].max(dot_error(*v, *a, rhs, rhs_abs));
        }
    }
    let (best_h, dd_err) =
        dd_worst
            .iter()
            .copied()
            .enumerate()
            .fold(
                (0, f64::INFINITY),
                |best, (h, e)| {
                    if e < best.1 { (h, e) } else { best }
                },
            );
    let (name, has_adjoint) = match plan.deps.get(sel) {
        Some(dep) => (dep.name.clone(), dep.groups.iter().any(|g| g.adj.is_some())),
        None => (
            "(all)".to_string(),
            plan.deps
                .iter()
                .all(|d: &DepPlan| d.groups.iter().any(|g| g.adj.is_some())),
        ),
    };
    Ok(AdjointDependentReport {
        name,
        elements,
        has_adjoint,
        rel_err: worst.0,
        digits: digits(worst.0),
        worst_point: worst.1.filter(|_| worst.0 > 0.0),
        dd_digits: digits(dd_err),
        dd_step: steps[best_h],
    })
}

/// Checks the adjoint procedure of `head` in `adjoint_path` (`FILE_b.c`)
/// against its tangent in `tangent_path` (`FILE_d.c`) by the dot-product
/// test, and against central divided differences of the original in
/// `original_path` (whose lowered form is `program`), at `options.points`
/// random points of `domain`; measures R_a and the stack. See the module
/// documentation for the method and the pass criterion.
pub fn check_adjoint(
    original_path: &Path,
    program: &Program,
    head: &Head,
    domain: &Domain,
    tangent_path: &Path,
    adjoint_path: &Path,
    options: &AdjointCheckOptions,
) -> Result<AdjointCheck, CheckError> {
    let f = checkable_head(program, head, options.points)?;
    let tloaded = load_derivative(
        Flavor::Tangent,
        tangent_path,
        original_path,
        None,
        &options.front,
    )?;
    let tangent = &tloaded.program;
    let tangent_proc = find_tangent_proc(program, head.proc, tangent)?;
    let tsig = match_signature(program, head.proc, tangent, tangent_proc)?;
    // The runtime goes into the work directory first: the adjoint file
    // includes its header, for aioli's front end and for `cc` alike.
    let dir = WorkDir::new(options.keep_dir.as_deref())?;
    crate::runtime::write(&dir.path).map_err(io_error("writing the runtime"))?;
    let aloaded = load_derivative(
        Flavor::Adjoint,
        adjoint_path,
        original_path,
        Some(&dir.path),
        &options.front,
    )?;
    let adjoint = &aloaded.program;
    let adjoint_proc = find_adjoint_proc(program, head.proc, adjoint)?;
    let asig = match_adjoint_signature(program, head.proc, adjoint, adjoint_proc)?;

    let (inputs, global_entries) = draw_inputs(program, f, domain, options.seed, options.points)?;
    let mut plan = build_plan(
        program,
        head,
        DerivativeProc {
            flavor: Flavor::Tangent,
            program: tangent,
            proc: tangent_proc,
            sig: &tsig,
        },
        &inputs[0],
        &global_entries,
    )?;
    let aplan = build_plan(
        program,
        head,
        DerivativeProc {
            flavor: Flavor::Adjoint,
            program: adjoint,
            proc: adjoint_proc,
            sig: &asig.as_plan_signature(),
        },
        &inputs[0],
        &global_entries,
    )?;
    attach_adjoints(&mut plan, &aplan)?;
    let points = draw_points(program, f, &plan, inputs, options.seed)?;

    let tangent_decls = declarations_of(
        tangent,
        &tloaded.sources,
        &[&tsig.name, &f.name],
        &Default::default(),
    );
    let adjoint_decls = declarations_of(
        adjoint,
        &aloaded.sources,
        &[&asig.name, &f.name],
        &declared_names(tangent),
    );
    let stack_stats = crate::runtime::HEADER.contains("aioli_stack_stats");
    let extra = AdjointDriver {
        plan: &aplan,
        decls: adjoint_decls,
        stack_stats,
    };
    let source = driver_source(
        &plan,
        &points,
        &tangent_decls,
        options.seed,
        options.time_budget_ms,
        Some(&extra),
    )?;
    let driver_path = dir.path.join("driver.c");
    std::fs::write(&driver_path, source)
        .map_err(io_error(format!("writing {}", driver_path.display())))?;
    let units = [
        Unit {
            what: "the original file",
            source: original_path.to_path_buf(),
            object: "original.o",
        },
        Unit {
            what: "the tangent file",
            source: tangent_path.to_path_buf(),
            object: "tangent.o",
        },
        Unit {
            what: "the adjoint file",
            source: adjoint_path.to_path_buf(),
            object: "adjoint.o",
        },
        Unit {
            what: "the runtime",
            source: dir.path.join(crate::runtime::SOURCE_NAME),
            object: "aioli_runtime.o",
        },
        Unit {
            what: "the check driver",
            source: driver_path,
            object: "driver.o",
        },
    ];
    // The runtime's directory comes first: an old `aioli.h` next to the
    // user's file must not stand in for the one the adjoint needs.
    let exe = build(
        &options.cc,
        &options.front,
        &dir.path,
        &units,
        std::slice::from_ref(&dir.path),
    )?;
    let output = run(&exe, Duration::from_millis(options.run_timeout_ms.max(1)))?;
    let results = parse_output(&plan, points.len(), &output)?;

    let mut dependents = Vec::new();
    for sel in 0..plan.deps.len() {
        dependents.push(compare(&plan, &points, &results, sel)?);
    }
    let overall = compare(&plan, &points, &results, plan.deps.len())?;
    let time_f = results.time_f.and_then(|t| t.per_call());
    let time_f_b = results.time_fb.and_then(|t| t.per_call());
    let mut notes = aplan.notes.clone();
    if plan.directed.iter().all(|g| g.deriv.is_none()) {
        notes.push(
            "no independent has a derivative in the tangent file: every product is 0".to_string(),
        );
    }
    if dependents.is_empty() {
        notes.push("the head has no dependent: nothing was compared".to_string());
    }
    let mut check = AdjointCheck {
        head: f.name.clone(),
        tangent: tsig.name.clone(),
        adjoint: asig.name.clone(),
        points: points.len(),
        max_rel_err: options.max_rel_err,
        min_dd_digits: options.min_dd_digits,
        dependents,
        overall,
        time_f,
        time_f_b,
        r_a: ratio(time_f, time_f_b),
        pushed_bytes: results.stack.map(|s| s.0),
        peak_bytes: results.stack.map(|s| s.1),
        passed: false,
        signature: asig,
        notes,
    };
    check.passed = !check.dependents.is_empty()
        && check
            .dependents
            .iter()
            .chain([&check.overall])
            .all(|d| check.row_passes(d));
    Ok(check)
}
