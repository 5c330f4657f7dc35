//! The tangent half of `aioli check` (CONTRACT §6): a tangent procedure
//! `f_d` is compared with central divided differences of the original `f`,
//! per dependent, and timed against it (R_t = T(f_d)/T(f)).
//!
//! # What runs
//!
//! [`check_tangent`] writes a C driver in a work directory and builds three
//! translation units with `cc -O2` (plus the `-I` of the original's and the
//! tangent's directories and the caller's `-I`/`-D`): the original file,
//! the tangent file (CONTRACT §3: it links with the original, whose
//! functions it calls and does not redefine), and the driver. Keeping them
//! apart is also what makes the timing fair: neither `f` nor `f_d` can be
//! inlined into the driver's loops.
//!
//! The driver knows the types and the signatures from the tangent file's
//! own declarations (its typedefs and structs, including the `T_d` types,
//! `f_d`'s prototype, its globals as `extern`), which aioli's front end
//! reads and aioli's back end prints back without the function bodies; what
//! the tangent file does not declare (usually `f` and the original's
//! globals) is declared from the original program.
//!
//! `f_d`'s parameters are matched with `f`'s by [`match_signature`]: by
//! position and type first (each primal parameter, optionally followed by
//! its derivative, then `double *f` when `f` returns a real), by name when
//! positions and types leave a choice. A struct result `T` is matched the
//! same way with its derivative type: `f_d` returns `T_d` and takes an
//! extra last `T *f` (and `f_b` an extra last `T_b fb`, by value), as
//! aioli emits them; its real fields (scalars and fixed-size arrays, nested
//! structs flattened) are the dependent's elements, `f.a`, `f.c[1]`.
//!
//! At each of `points` random points of the domain (the inputs of
//! [`compute_inputs`], point 0 with `seed` itself; integers as the domain
//! fixes them, reals drawn in `[lo,hi]`), the driver:
//!
//! 1. draws a direction: every real element of an independent that has a
//!    derivative (a real by value, the elements of a pointer to reals, the
//!    active fields of structs, the elements of an active global) gets
//!    `ẋ = u·s`, `u` uniform in `[-1,1]` and `s = |x|` (or 1 where x is
//!    0), so that a step `h` perturbs every element relatively, by at most
//!    `h·|x|`, whatever the magnitudes of the inputs;
//! 2. zeroes every derivative (parameters, `T_d` buffers, derivative
//!    globals), sets the direction, calls `f_d` once, and reads the tangents
//!    `ẏ` of the dependents (0 for a dependent that has no derivative) and
//!    `f_d`'s primal outputs;
//! 3. calls `f` on the point, then on `x + hẋ` and `x − hẋ` for each step
//!    `h` of [`STEPS`] ([`SINGLE_STEPS`] when the code computes in `float`,
//!    see [`Precision`]), every call on fresh copies of all inputs (including
//!    the original's globals: `f` may overwrite what it reads), and forms
//!    `dd_h = (f(x+hẋ) − f(x−hẋ)) / 2h`.
//!
//! Then it times `f` and `f_d` (see [`super::timing`]).
//!
//! The domain may also name globals of the original (`gain=[0.5,2]`,
//! `w[3]=[0,1]`): they are drawn at each point like parameters (an
//! extension of CONTRACT §6's language, whose entries otherwise name
//! parameters); the other globals keep their initial values.
//!
//! The driver prints one line per element and point, each starting with
//! `@aioli` so that whatever the procedures print is ignored, reals in `%a`:
//! `@aioli primal NAME INDEX POINT Y_F Y_FD` (the output of `f` and the
//! primal output of `f_d`), `@aioli dep NAME INDEX POINT TANGENT DD_1 …
//! DD_6` (one quotient per step of [`STEPS`]), then `@aioli time f A B N`
//! and `@aioli time f_d A B N` (see [`Timing`]) and `@aioli end`; a missing
//! line is an error, not a silent pass.
//!
//! # Agreement
//!
//! For one dependent, one point and one step, each element's relative
//! error is `|ẏ − dd| / max(|ẏ|, |dd|, floor)`, where `floor` is
//! [`FLOOR_FRACTION`] times the largest `|ẏ|` or `|dd|` of the dependent's
//! elements at that point: an element a million times smaller than its
//! neighbours carries the round-off of the difference quotient of their
//! magnitude, which says nothing about the tangent. A non-finite value is
//! an infinite error. The dependent's error for a step is the largest over
//! its elements and the points; its error is that of its best step (one
//! step for all elements and points: the truncation error of central
//! differences falls as h², the round-off error grows as 1/h, and which
//! wins depends on the function), and its digits of agreement (Tapenade's
//! A_t) are `−log10(error)`, between 0 and [`MAX_DIGITS`].
//!
//! The check passes when every dependent agrees to at least
//! [`DEFAULT_MIN_DIGITS`] digits (the option `min_digits`), and `f_d`'s
//! primal outputs agree with `f`'s to as many (a tangent must not change
//! the original's results; reordered operations may change a few last
//! bits, hence a threshold rather than equality). Six digits: with the best of
//! the steps, central differences of smooth double-precision code agree
//! with an exact tangent to nine digits or more (truncation ~h², round-off
//! ~ε/h, best near h = 1e-5 where both are ~1e-10), so six leaves three
//! digits of margin for ill-conditioned corners, while any actual mistake in
//! a derivative (a missing term or factor, a wrong sign, a stale value)
//! gives errors of order one, 0 to 2 digits. Single-precision code cannot
//! reach six digits this way (its differences carry ~1e-5 of round-off at
//! the best step): for it ([`Precision::of`]: the head or a procedure it
//! calls computes in `float`) the steps are [`SINGLE_STEPS`], each
//! element's error is also relative to at least [`SINGLE_VALUE_FLOOR`]
//! times its value `|y|` (the round-off of a float difference quotient
//! scales with the value, not with the derivative), each element is
//! judged at the step where it agrees best (a float rounding may reach one
//! output and not another, and the other may sit by a branch that the
//! large steps cross), and the threshold to ask for is
//! [`Precision::min_digits`], 3.
//!
//! # Not handled
//!
//! Pointers to pointers, and any parameter [`compute_inputs`] cannot fill;
//! struct fields that are pointers to structs; dependents passed by value
//! or of integer type; the pointer fields of a struct result (their length
//! is unknown; a note says so); `static` heads, and `static` globals of the
//! original as dependents (another translation unit cannot reach them; as
//! independents they get no direction, with a note);
//! globals other than scalars and fixed-size arrays of integers or reals
//! (they are neither restored between calls nor usable as head variables);
//! derivative globals of other types than reals and arrays of reals are not
//! zeroed between calls (a note says so).

use super::domain::Domain;
pub use super::harness::{
    CheckError, FLOOR_FRACTION, MAX_DIGITS, Precision, SINGLE_STEPS, SINGLE_VALUE_FLOOR, STEPS,
    TangentParam, TangentReturn, TangentSignature, digits, find_tangent_proc, match_signature,
    max_relative_error, max_relative_error_of_values, parse_hex_float, relative_errors_of_values,
};
use super::harness::{
    DerivativeProc, Flavor, Group, Plan, Results, Unit, WorkDir, build, build_plan, checkable_head,
    declarations_of, draw_inputs, draw_points, driver_source, io_error, load_derivative,
    parse_output, ratio, run, seconds,
};
use crate::analysis::head::Head;
use crate::front::FrontOptions;
use crate::il::Program;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Digits of agreement a dependent needs by default (see the module
/// documentation for why six).
pub const DEFAULT_MIN_DIGITS: f64 = 6.0;

/// How to run a tangent check.
#[derive(Clone, Debug)]
pub struct TangentCheckOptions {
    /// Seed of the random inputs (point `p` uses a seed derived from it;
    /// point 0 uses it as is) and of the directions.
    pub seed: u64,
    /// Number of random points.
    pub points: usize,
    /// The C compiler, possibly with arguments (`$CC`, else `cc`).
    pub cc: String,
    /// Time to spend measuring R_t, about; 0 skips the measurement.
    pub time_budget_ms: u64,
    /// Digits of agreement every dependent needs to pass.
    pub min_digits: f64,
    /// `-I` and `-D`, for reading the tangent file and for `cc`.
    pub front: FrontOptions,
    /// The driver is killed after this long.
    pub run_timeout_ms: u64,
    /// Write the driver and the objects here and keep them (for
    /// debugging); by default they go to a temporary directory that is
    /// removed afterwards.
    pub keep_dir: Option<PathBuf>,
}

impl Default for TangentCheckOptions {
    fn default() -> Self {
        TangentCheckOptions {
            seed: 1,
            points: 3,
            cc: std::env::var("CC")
                .ok()
                .filter(|s| !s.trim().is_empty())
                .unwrap_or_else(|| "cc".to_string()),
            time_budget_ms: 200,
            min_digits: DEFAULT_MIN_DIGITS,
            front: FrontOptions::default(),
            run_timeout_ms: 120_000,
            keep_dir: None,
        }
    }
}

/// The comparison for one dependent.
#[derive(Clone, Debug, PartialEq)]
pub struct DependentReport {
    /// As in the head: a parameter, a global, or the function's name for
    /// its result.
    pub name: String,
    /// Real elements compared at each point.
    pub elements: usize,
    /// Digits of agreement between tangent and divided differences (A_t):
    /// `−log10(max_rel_err)`, between 0 and [`MAX_DIGITS`].
    pub digits: f64,
    /// The largest relative error over elements and points, at the best
    /// step.
    pub max_rel_err: f64,
    /// The step of [`STEPS`] (or [`SINGLE_STEPS`]) that agreed best.
    pub best_step: f64,
    /// Where the largest error is: `y[3] at point 1`.
    pub worst: Option<String>,
    /// Does `f_d` compute a derivative for it? (Without, its tangent is 0.)
    pub has_derivative: bool,
    /// Digits of agreement between `f_d`'s primal outputs and `f`'s.
    pub primal_digits: f64,
}

/// The result of [`check_tangent`]; `Display` prints a readable report.
#[derive(Clone, Debug, PartialEq)]
pub struct TangentCheck {
    pub head: String,
    pub tangent: String,
    pub points: usize,
    pub min_digits: f64,
    pub dependents: Vec<DependentReport>,
    /// Seconds per call of `f` and of `f_d`, when measured.
    pub time_f: Option<f64>,
    pub time_f_d: Option<f64>,
    /// T(f_d)/T(f).
    pub r_t: Option<f64>,
    /// Every dependent (and `f_d`'s primal outputs) agrees to `min_digits`,
    /// and there is at least one dependent.
    pub passed: bool,
    /// How `f_d`'s parameters were matched with `f`'s.
    pub signature: TangentSignature,
    /// Things worth knowing: independents without a direction, dependents
    /// without a derivative, globals left alone.
    pub notes: Vec<String>,
}

impl fmt::Display for TangentCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "tangent check of {} against {}: {} ({} point{}, pass at {} digits)",
            self.tangent,
            self.head,
            if self.passed { "PASSED" } else { "FAILED" },
            self.points,
            if self.points == 1 { "" } else { "s" },
            self.min_digits
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
            "  {:<width$}  digits  max rel err  best h  primal digits  worst",
            "dependent"
        )?;
        for d in &self.dependents {
            let mark = if d.digits >= self.min_digits && d.primal_digits >= self.min_digits {
                ""
            } else {
                "  <-- FAILS"
            };
            writeln!(
                f,
                "  {:<width$}  {:>6.1}  {:>11.2e}  {:>6.0e}  {:>13.1}  {}{}{}",
                d.name,
                d.digits,
                d.max_rel_err,
                d.best_step,
                d.primal_digits,
                d.worst.as_deref().unwrap_or("-"),
                if d.has_derivative {
                    ""
                } else {
                    " (no derivative: tangent 0)"
                },
                mark
            )?;
        }
        match (self.r_t, self.time_f, self.time_f_d) {
            (Some(r), Some(tf), Some(td)) => writeln!(
                f,
                "  R_t = T({})/T({}) = {r:.2} ({} per call of {}, {} of {})",
                self.tangent,
                self.head,
                seconds(tf),
                self.head,
                seconds(td),
                self.tangent
            )?,
            _ => writeln!(f, "  R_t not measured")?,
        }
        for n in &self.notes {
            writeln!(f, "  note: {n}")?;
        }
        Ok(())
    }
}

fn report(plan: &Plan, points: usize, results: &Results) -> Vec<DependentReport> {
    let (steps, value_floor) = (plan.precision.steps(), plan.precision.value_floor());
    plan.deps
        .iter()
        .zip(&results.deps)
        .map(|(dep, r)| {
            let count = dep.len();
            let n = count * points;
            // Per step, every element's error at every point.
            let errors: Vec<Vec<f64>> = (0..steps.len())
                .map(|h| {
                    (0..points)
                        .flat_map(|p| {
                            let range = p * count..(p + 1) * count;
                            relative_errors_of_values(
                                &r.tangent[range.clone()],
                                &r.dd[h * n..][range.clone()],
                                &r.y[range],
                                value_floor,
                            )
                        })
                        .collect()
                })
                .collect();
            // (worst error, its step, its element)
            let mut best: Option<(f64, usize, Option<usize>)> = None;
            if plan.precision == Precision::Single {
                // Each element at its own best step: a float rounding may
                // reach some elements and not others (a cast in one
                // output), which agree best at steps far apart.
                for at in 0..n {
                    let mut element: Option<(f64, usize)> = None;
                    for (h, e) in errors.iter().enumerate() {
                        if element.is_none_or(|(err, _)| e[at] < err) {
                            element = Some((e[at], h));
                        }
                    }
                    if let Some((err, h)) = element
                        && best.is_none_or(|(e, _, _)| err > e)
                    {
                        best = Some((err, h, Some(at)));
                    }
                }
            } else {
                // One step for the dependent: the one whose worst element
                // over all points agrees best.
                for (h, e) in errors.iter().enumerate() {
                    let mut worst: (f64, Option<usize>) = (0.0, None);
                    for (at, &err) in e.iter().enumerate() {
                        if worst.1.is_none() || err > worst.0 {
                            worst = (err, Some(at));
                        }
                    }
                    if best.is_none_or(|(b, _, _)| worst.0 < b) {
                        best = Some((worst.0, h, worst.1));
                    }
                }
            }
            let (err, step, at) = best.unwrap_or((0.0, 0, None));
            let mut primal_err = 0.0f64;
            for p in 0..points {
                let range = p * count..(p + 1) * count;
                let (e, _) = max_relative_error(&r.y[range.clone()], &r.yfd[range]);
                primal_err = primal_err.max(e);
            }
            DependentReport {
                name: dep.name.clone(),
                elements: count,
                digits: digits(err),
                max_rel_err: err,
                best_step: steps[step],
                worst: at.filter(|_| err > 0.0).map(|a| {
                    format!(
                        "{} at point {}",
                        dep.label_of(a % count.max(1)),
                        a / count.max(1)
                    )
                }),
                has_derivative: dep.has_derivative,
                primal_digits: digits(primal_err),
            }
        })
        .collect()
}

// ---------------------------------------------------------------------------
// The check
// ---------------------------------------------------------------------------

/// Checks the tangent procedure of `head` in `tangent_path` (the generated
/// `FILE_d.c`) against central divided differences of the original in
/// `original_path` (whose lowered form is `program`), at `options.points`
/// random points of `domain`, and measures R_t. See the module
/// documentation for the method and the pass criterion.
///
/// The domain may also name globals of the original (`gain=[0.5,2]`,
/// `w[3]=[0,1]`), which then get random values at each point like
/// parameters; globals it does not name keep their initial values.
pub fn check_tangent(
    original_path: &Path,
    program: &Program,
    head: &Head,
    domain: &Domain,
    tangent_path: &Path,
    options: &TangentCheckOptions,
) -> Result<TangentCheck, CheckError> {
    let f = checkable_head(program, head, options.points)?;
    let loaded = load_derivative(
        Flavor::Tangent,
        tangent_path,
        original_path,
        None,
        &options.front,
    )?;
    let tangent = &loaded.program;
    let tangent_proc = find_tangent_proc(program, head.proc, tangent)?;
    let signature = match_signature(program, head.proc, tangent, tangent_proc)?;
    let (inputs, global_entries) = draw_inputs(program, f, domain, options.seed, options.points)?;
    let plan = build_plan(
        program,
        head,
        DerivativeProc {
            flavor: Flavor::Tangent,
            program: tangent,
            proc: tangent_proc,
            sig: &signature,
        },
        &inputs[0],
        &global_entries,
    )?;
    let ndir: usize = plan
        .directed
        .iter()
        .filter(|g| g.deriv.is_some())
        .map(Group::len)
        .sum();
    let points = draw_points(program, f, &plan, inputs, options.seed)?;

    let tangent_decls = declarations_of(
        tangent,
        &loaded.sources,
        &[&signature.name, &f.name],
        &Default::default(),
    );
    let source = driver_source(
        &plan,
        &points,
        &tangent_decls,
        options.seed,
        options.time_budget_ms,
        None,
    )?;
    let dir = WorkDir::new(options.keep_dir.as_deref())?;
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
            what: "the check driver",
            source: driver_path,
            object: "driver.o",
        },
    ];
    let exe = build(&options.cc, &options.front, &dir.path, &units, &[])?;
    let output = run(&exe, Duration::from_millis(options.run_timeout_ms.max(1)))?;
    let results = parse_output(&plan, points.len(), &output)?;
    let dependents = report(&plan, points.len(), &results);

    let time_f = results.time_f.and_then(|t| t.per_call());
    let time_f_d = results.time_fd.and_then(|t| t.per_call());
    let r_t = ratio(time_f, time_f_d);
    let mut notes = plan.notes.clone();
    if ndir == 0 {
        notes.push("no independent has a derivative: every tangent is 0".to_string());
    }
    if dependents.is_empty() {
        notes.push("the head has no dependent: nothing was compared".to_string());
    }
    let passed = !dependents.is_empty()
        && dependents
            .iter()
            .all(|d| d.digits >= options.min_digits && d.primal_digits >= options.min_digits);
    Ok(TangentCheck {
        head: f.name.clone(),
        tangent: signature.name.clone(),
        points: points.len(),
        min_digits: options.min_digits,
        dependents,
        time_f,
        time_f_d,
        r_t,
        passed,
        signature,
        notes,
    })
}
