//! Tangent code against dual numbers, both run in the IL interpreter.
//!
//! [`tangent_vs_dual`] checks the derivative procedure `f_d` that the
//! tangent mode wrote for a head `f` without compiling anything and
//! without divided differences:
//!
//! 1. a random direction ẋ is drawn (uniform in `[-1, 1]`, reproducibly
//!    from a seed) for every real element of every independent: reals by
//!    value, the buffers behind pointer parameters, the real fields of
//!    structs (also behind pointer fields), and independent globals;
//! 2. the ORIGINAL head runs in a [`Machine<Dual>`] on the driver's
//!    [`Inputs`], every independent real seeded `Dual::new(x, ẋ)` and
//!    every other real with a zero tangent; the tangent parts of the
//!    dependents after the call are the exact directional derivative
//!    `J ẋ` (up to rounding);
//! 3. the TANGENT program's `f_d` runs in a [`Machine<f64>`] on the same
//!    primal inputs, with the derivative arguments (CONTRACT §3: the one
//!    right after each differentiated parameter) holding ẋ for the
//!    independents and zero for every other derivative buffer (the
//!    caller zeroes every derivative buffer), the derivative globals `gd`
//!    likewise; the dependents' derivatives are read back from their
//!    derivative buffers, the returned value and the `gd` globals;
//! 4. per dependent element, the two derivatives are compared by relative
//!    error, and the primal results of `f_d` (which must compute the
//!    original results too) against those of the original run.
//!
//! The output program of the tangent mode only *declares* the original's
//! non-static globals (`extern`): the original translation unit defines
//! them. The tangent run therefore "links" the two, appending the
//! original's global definitions (with their initialisers) to the output
//! program's items.
//!
//! A dependent whose derivative has no home in `f_d` (no derivative
//! parameter, no derivative field in `T_d`, no `gd` global, a result that
//! is not differentiated) has derivative zero, as a Tapenade user reading
//! the signature would conclude.

use super::driver::{ArgValue, FieldValue, Inputs, StructValue};
use super::interp_run::InterpRunError;
use super::rng::SplitMix64;
use crate::analysis::head::{Head, HeadVar};
use crate::front::source::Span;
use crate::il::{ItemKind, ProcId, Program, QualType, RealKind, SymId, Type};
use crate::interp::{Config, Dual, ErrorKind, Machine, Real, Value};
use std::fmt::Write;

/// Limits of the two runs.
#[derive(Clone, Copy, Debug)]
pub struct DualOptions {
    /// Step budget of the dual-number run of the original; the tangent run
    /// gets four times as much (it executes more statements).
    pub fuel: u64,
}

impl Default for DualOptions {
    fn default() -> DualOptions {
        DualOptions { fuel: 10_000_000 }
    }
}

/// Why the comparison could not be made.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum DualCheckError {
    /// Running the original head with dual numbers failed (step limit,
    /// out-of-bounds access, ...): the inputs are unusable, not a verdict
    /// on the tangent code.
    #[error("running the original '{proc_name}' with dual numbers: {error}")]
    Original {
        proc_name: String,
        error: InterpRunError,
        /// The statement the interpreter stopped at (in the original
        /// program's sources).
        span: Span,
    },
    /// Running the tangent procedure failed although the original ran:
    /// a defect of the tangent code (or of its fuel budget).
    #[error("running the tangent procedure '{proc_name}': {error}")]
    Tangent {
        proc_name: String,
        error: InterpRunError,
        /// The statement the interpreter stopped at (the tangent
        /// program's statements carry the spans of the original ones they
        /// come from).
        span: Span,
    },
    /// The tangent program has no derivative procedure for the head, or
    /// its signature does not follow CONTRACT §3.
    #[error("signature: {0}")]
    Signature(String),
    /// Inputs or outputs this checker cannot build or read.
    #[error("unsupported {what}: {why}")]
    Unsupported { what: String, why: String },
}

/// One real element of a dependent.
#[derive(Clone, Debug, PartialEq)]
pub struct ElementComparison {
    /// `y[3]`, `pts[2].x`, `g_energy`, `f` (the result of `f`).
    pub label: String,
    /// Its derivative from the dual-number run of the original.
    pub dual: f64,
    /// Its derivative from the tangent procedure (0 where `f_d` has no
    /// derivative for it).
    pub tangent: f64,
    /// Its value after the original run.
    pub primal_original: f64,
    /// Its value after the tangent procedure's run.
    pub primal_tangent: f64,
    /// [`relative_error`] of `dual` and `tangent`.
    pub error: f64,
    /// [`relative_error`] of the two primal values.
    pub primal_error: f64,
}

/// One dependent of the head.
#[derive(Clone, Debug, PartialEq)]
pub struct DependentComparison {
    /// The dependent as the head names it: a parameter, a global, or the
    /// procedure's name for its result.
    pub name: String,
    /// Does `f_d` give this dependent a derivative at all (a derivative
    /// parameter, a returned derivative, a `gd` global)?
    pub has_derivative: bool,
    /// Every real element, in the driver's order.
    pub elements: Vec<ElementComparison>,
    /// The largest element error (0 with no element).
    pub max_error: f64,
    /// The largest primal error.
    pub max_primal_error: f64,
}

/// The result of [`tangent_vs_dual`].
#[derive(Clone, Debug, PartialEq)]
pub struct DualComparison {
    /// The name of the tangent procedure that was run.
    pub tangent_proc: String,
    /// The direction, in drawing order (label, ẋ), independents only.
    pub direction: Vec<(String, f64)>,
    /// One entry per dependent of the head, in the head's order (a
    /// dependent passed by value has no element: the callee cannot change
    /// the caller's copy).
    pub dependents: Vec<DependentComparison>,
    /// Statements the two runs executed.
    pub steps_original: u64,
    pub steps_tangent: u64,
}

impl DualComparison {
    /// The largest derivative error over every dependent.
    pub fn max_error(&self) -> f64 {
        self.dependents
            .iter()
            .map(|d| d.max_error)
            .fold(0.0, f64::max)
    }

    /// The largest primal error over every dependent.
    pub fn max_primal_error(&self) -> f64 {
        self.dependents
            .iter()
            .map(|d| d.max_primal_error)
            .fold(0.0, f64::max)
    }

    /// Every element, with its dependent's name.
    pub fn elements(&self) -> impl Iterator<Item = (&str, &ElementComparison)> {
        self.dependents
            .iter()
            .flat_map(|d| d.elements.iter().map(move |e| (d.name.as_str(), e)))
    }

    /// A table of every element: label, dual, tangent, error, primal values.
    pub fn table(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "{:<20} {:>24} {:>24} {:>10} {:>24} {:>24} {:>10}",
            "element", "dual", "tangent", "error", "primal (orig)", "primal (f_d)", "p.error"
        );
        for (_, e) in self.elements() {
            let _ = writeln!(
                s,
                "{:<20} {:>24.16e} {:>24.16e} {:>10.2e} {:>24.16e} {:>24.16e} {:>10.2e}",
                e.label,
                e.dual,
                e.tangent,
                e.error,
                e.primal_original,
                e.primal_tangent,
                e.primal_error
            );
        }
        s
    }
}

/// `|a − b| / max(|a|, |b|, 1e-300)`; 0 when both are equal (both zero,
/// the same infinity) or both NaN, infinite when only one is NaN or they
/// are different infinities; never NaN.
pub fn relative_error(a: f64, b: f64) -> f64 {
    if a == b || (a.is_nan() && b.is_nan()) {
        return 0.0;
    }
    let d = (a - b).abs();
    if !d.is_finite() {
        return f64::INFINITY;
    }
    d / a.abs().max(b.abs()).max(1e-300)
}

/// Runs the head of `original` with dual numbers and its tangent procedure
/// of `tangent` (the output program of the tangent mode for a set of heads
/// including `head`) on `inputs`, along one random direction drawn from
/// `direction_seed`, and compares the dependents' derivatives and values.
pub fn tangent_vs_dual(
    original: &Program,
    tangent: &Program,
    head: &Head,
    inputs: &Inputs,
    direction_seed: u64,
) -> Result<DualComparison, DualCheckError> {
    tangent_vs_dual_with(
        original,
        tangent,
        head,
        inputs,
        direction_seed,
        &DualOptions::default(),
    )
}

/// [`tangent_vs_dual`] with explicit limits.
pub fn tangent_vs_dual_with(
    original: &Program,
    tangent: &Program,
    head: &Head,
    inputs: &Inputs,
    direction_seed: u64,
    options: &DualOptions,
) -> Result<DualComparison, DualCheckError> {
    let linked = tangent.linked_with(original);
    let tangent: &Program = &linked;
    if inputs.head != head.proc {
        return Err(unsupported(
            "inputs",
            "they were drawn for another procedure than the head",
        ));
    }
    let proc = original.proc(head.proc);
    let name = proc.name.clone();
    if original.proc_by_name(&name) != Some(head.proc) {
        return Err(unsupported(
            format!("head '{name}'"),
            "another procedure of that name comes first in the program",
        ));
    }
    if proc.params.len() != inputs.args.len() {
        return Err(unsupported(
            format!("call of '{name}'"),
            format!(
                "{} parameters but {} arguments",
                proc.params.len(),
                inputs.args.len()
            ),
        ));
    }
    let dproc = find_tangent_proc(original, tangent, head.proc)?;
    let dname = tangent.proc(dproc).name.clone();
    let sig = match_signature(original, tangent, head.proc, dproc)?;

    // The direction, and the objects every argument describes.
    let mut rng = SplitMix64::new(direction_seed);
    let mut direction = Vec::new();
    let mut args = Vec::with_capacity(proc.params.len());
    for (&sym, arg) in proc.params.iter().zip(&inputs.args) {
        let s = original.sym(sym);
        let mut dir = Dir {
            rng: &mut rng,
            active: head.independents.contains(&HeadVar::Param(sym)),
        };
        let a = arg_obj(original, &s.ty, arg, &mut dir)
            .map_err(|why| unsupported(format!("parameter '{}'", s.name), why))?;
        if dir.active {
            a.directions(&s.name, &mut direction);
        }
        args.push(a);
    }

    // (a) The original with dual numbers.
    let original_err = |(error, span): (InterpRunError, Span)| DualCheckError::Original {
        proc_name: name.clone(),
        error,
        span,
    };
    let mut dm = Machine::<Dual>::new(original, Config { fuel: options.fuel })
        .map_err(|e| original_err(interp_error("while initialising globals", e)))?;
    let dual = |x: f64, dx: f64| Dual::new(x, dx);
    let mut global_inputs = Vec::new();
    for hv in &head.independents {
        if let HeadVar::Global(g) = *hv {
            let s = original.sym(g);
            let what = format!("global '{}'", s.name);
            let at = dm
                .global_ptr(&s.name)
                .map_err(|e| original_err(interp_error(format!("while seeding {what}"), e)))?;
            let mut dir = Dir {
                rng: &mut rng,
                active: true,
            };
            let obj = shape_of(&dm, original, at, &s.ty, &mut dir, 0)
                .map_err(|why| unsupported(&what, why))?;
            store(&mut dm, original, at, &s.ty, &obj, &dual)
                .map_err(|why| unsupported(&what, why))?;
            obj.directions(s.name.clone(), &mut direction);
            global_inputs.push((g, obj));
        }
    }
    let mut dargs = Vec::with_capacity(args.len());
    for (&sym, a) in proc.params.iter().zip(&args) {
        let s = original.sym(sym);
        dargs.push(
            build_arg(&mut dm, original, &s.ty, a, &dual)
                .map_err(|why| unsupported(format!("parameter '{}'", s.name), why))?,
        );
    }
    let dresult = dm
        .call(&name, dargs.clone())
        .map_err(|e| original_err(call_error(&name, e, &dm)))?;
    let steps_original = dm.steps();

    // The shape of every dependent, and its values in the dual run.
    let mut plans = Vec::new();
    for hv in &head.dependents {
        let (label, shape, loc) = match *hv {
            HeadVar::Param(sym) => {
                let j = proc.params.iter().position(|&s| s == sym).ok_or_else(|| {
                    unsupported("dependent", "a parameter the head does not have")
                })?;
                let s = original.sym(sym);
                match &args[j] {
                    Arg::Buffer(elems) => {
                        let elem = elem_type(original, &s.ty.ty).ok_or_else(|| {
                            unsupported(format!("parameter '{}'", s.name), "not a pointer")
                        })?;
                        (
                            s.name.clone(),
                            Shape::Buffer(elems.clone()),
                            Loc::Buffer(dargs[j], elem),
                        )
                    }
                    // The callee cannot change the caller's copy.
                    Arg::Value(_) => (s.name.clone(), Shape::Buffer(Vec::new()), Loc::Absent),
                }
            }
            HeadVar::Global(g) => {
                let s = original.sym(g);
                let at = dm.global_ptr(&s.name).map_err(|e| {
                    original_err(interp_error(format!("while reading '{}'", s.name), e))
                })?;
                let mut dir = Dir {
                    rng: &mut rng,
                    active: false,
                };
                let obj = shape_of(&dm, original, at, &s.ty, &mut dir, 0)
                    .map_err(|why| unsupported(format!("global '{}'", s.name), why))?;
                (
                    s.name.clone(),
                    Shape::Object(obj),
                    Loc::Object(at, s.ty.clone()),
                )
            }
            HeadVar::Result => match original.resolve(&proc.ret.ty) {
                Type::Real(_) => {
                    let r = dresult.as_real().ok_or_else(|| {
                        unsupported("result", format!("'{name}' returned {dresult:?}"))
                    })?;
                    (name.clone(), Shape::Scalar, Loc::Value(r))
                }
                Type::Struct(_) => {
                    let mut dir = Dir {
                        rng: &mut rng,
                        active: false,
                    };
                    let obj = shape_of(&dm, original, dresult, &proc.ret, &mut dir, 0)
                        .map_err(|why| unsupported("result", why))?;
                    (
                        name.clone(),
                        Shape::Object(obj),
                        Loc::Object(dresult, proc.ret.clone()),
                    )
                }
                _ => {
                    return Err(unsupported(
                        "result",
                        "only real and struct results are dependents",
                    ));
                }
            },
        };
        let values = read_dep(&dm, original, &shape, &loc, &label)
            .map_err(|why| unsupported(format!("dependent '{label}'"), why))?;
        plans.push((*hv, label, shape, values));
    }

    // (b) The tangent procedure.
    let tangent_err = |(error, span): (InterpRunError, Span)| DualCheckError::Tangent {
        proc_name: dname.clone(),
        error,
        span,
    };
    let linked = link(original, tangent);
    let mut tm = Machine::<f64>::new(
        &linked,
        Config {
            fuel: options.fuel.saturating_mul(4),
        },
    )
    .map_err(|e| tangent_err(interp_error("while initialising globals", e)))?;
    let primal = |x: f64, _dx: f64| x;
    let deriv = |_x: f64, dx: f64| dx;
    for (g, obj) in &global_inputs {
        if let Some(gd) = derivative_global(original, tangent, *g) {
            let s = linked.sym(gd);
            let at = tm
                .global_ptr(&s.name)
                .map_err(|e| tangent_err(interp_error(format!("while seeding '{}'", s.name), e)))?;
            store(&mut tm, &linked, at, &s.ty, obj, &deriv)
                .map_err(|why| unsupported(format!("global '{}'", s.name), why))?;
        }
    }
    let dp = linked.proc(dproc);
    let mut targs: Vec<Option<Value<f64>>> = vec![None; dp.params.len()];
    for (j, a) in args.iter().enumerate() {
        let s = linked.sym(dp.params[sig.primal[j]]);
        targs[sig.primal[j]] = Some(
            build_arg(&mut tm, &linked, &s.ty, a, &primal)
                .map_err(|why| unsupported(format!("parameter '{}'", s.name), why))?,
        );
        if let Some(k) = sig.derivative[j] {
            let ds = linked.sym(dp.params[k]);
            targs[k] = Some(
                build_arg(&mut tm, &linked, &ds.ty, a, &deriv).map_err(|why| {
                    unsupported(format!("derivative parameter '{}'", ds.name), why)
                })?,
            );
        }
    }
    // The result pointer and the type it points to.
    let result_slot = match sig.result {
        Some(k) => {
            let rty = elem_type(&linked, &linked.sym(dp.params[k]).ty.ty).ok_or_else(|| {
                DualCheckError::Signature(format!(
                    "the result parameter of '{dname}' is not a pointer"
                ))
            })?;
            let slot = tm.alloc_zeroed(&rty, 1);
            targs[k] = Some(slot);
            Some((slot, rty))
        }
        None => None,
    };
    let targs: Vec<Value<f64>> = targs
        .into_iter()
        .map(|v| {
            v.ok_or_else(|| {
                DualCheckError::Signature(format!("'{dname}' has an unmatched parameter"))
            })
        })
        .collect::<Result<_, _>>()?;
    let tresult = tm
        .call(&dname, targs.clone())
        .map_err(|e| tangent_err(call_error(&dname, e, &tm)))?;
    let steps_tangent = tm.steps();

    // Read and compare.
    let mut dependents = Vec::new();
    for (hv, label, shape, dual_values) in plans {
        let (ploc, dloc) = match hv {
            HeadVar::Param(sym) => {
                let j = proc.params.iter().position(|&s| s == sym).unwrap_or(0);
                match &args[j] {
                    Arg::Value(_) => (Loc::Absent, Loc::Absent),
                    Arg::Buffer(_) => {
                        let s = linked.sym(dp.params[sig.primal[j]]);
                        let elem = elem_type(&linked, &s.ty.ty).ok_or_else(|| {
                            unsupported(format!("parameter '{}'", s.name), "not a pointer")
                        })?;
                        let ploc = Loc::Buffer(targs[sig.primal[j]], elem);
                        let dloc = match sig.derivative[j] {
                            Some(k) => {
                                let ds = linked.sym(dp.params[k]);
                                let delem = elem_type(&linked, &ds.ty.ty).ok_or_else(|| {
                                    DualCheckError::Signature(format!(
                                        "derivative parameter '{}' of '{}' is not a pointer",
                                        ds.name, s.name
                                    ))
                                })?;
                                Loc::Buffer(targs[k], delem)
                            }
                            None => Loc::Absent,
                        };
                        (ploc, dloc)
                    }
                }
            }
            HeadVar::Global(g) => {
                let gname = &original.sym(g).name;
                let s = linked
                    .global_by_name(gname)
                    .map(|g| linked.sym(g))
                    .ok_or_else(|| {
                        unsupported(
                            format!("global '{gname}'"),
                            "the tangent program does not have it",
                        )
                    })?;
                let at = tm.global_ptr(&s.name).map_err(|e| {
                    tangent_err(interp_error(format!("while reading '{}'", s.name), e))
                })?;
                let dloc = match derivative_global(original, tangent, g) {
                    Some(gd) => {
                        let ds = linked.sym(gd);
                        let dat = tm.global_ptr(&ds.name).map_err(|e| {
                            tangent_err(interp_error(format!("while reading '{}'", ds.name), e))
                        })?;
                        Loc::Object(dat, ds.ty.clone())
                    }
                    None => Loc::Absent,
                };
                (Loc::Object(at, s.ty.clone()), dloc)
            }
            HeadVar::Result => {
                let value_loc =
                    |v: Value<f64>, ty: &QualType| -> Result<Loc<f64>, DualCheckError> {
                        match linked.resolve(&ty.ty) {
                            Type::Struct(_) => Ok(Loc::Object(v, ty.clone())),
                            _ => match v {
                                Value::Real(r) => Ok(Loc::Value(r)),
                                Value::Int(i) => Ok(Loc::Value(i as f64)),
                                other => Err(unsupported(
                                    format!("result of '{dname}'"),
                                    format!("it returned {other:?}"),
                                )),
                            },
                        }
                    };
                match &result_slot {
                    Some((slot, rty)) => (
                        Loc::Object(*slot, rty.clone()),
                        value_loc(tresult, &dp.ret)?,
                    ),
                    None => (value_loc(tresult, &dp.ret)?, Loc::Absent),
                }
            }
        };
        let has_derivative = !matches!(dloc, Loc::Absent);
        let primal_values = read_dep(&tm, &linked, &shape, &ploc, &label)
            .map_err(|why| unsupported(format!("dependent '{label}' after '{dname}'"), why))?;
        let deriv_values = read_dep(&tm, &linked, &shape, &dloc, &label)
            .map_err(|why| unsupported(format!("derivative of '{label}' after '{dname}'"), why))?;
        if primal_values.len() != dual_values.len() || deriv_values.len() != dual_values.len() {
            return Err(unsupported(
                format!("dependent '{label}'"),
                "the runs read different numbers of elements",
            ));
        }
        let mut elements = Vec::with_capacity(dual_values.len());
        for (((el, dv), (_, pv)), (_, tv)) in
            dual_values.into_iter().zip(primal_values).zip(deriv_values)
        {
            let dv = dv.unwrap_or_default();
            let d = dv.tangent();
            let t = tv.unwrap_or(0.0);
            let p0 = dv.value();
            let p1 = pv.unwrap_or(f64::NAN);
            elements.push(ElementComparison {
                label: el,
                dual: d,
                tangent: t,
                primal_original: p0,
                primal_tangent: p1,
                error: relative_error(d, t),
                primal_error: relative_error(p0, p1),
            });
        }
        let max_error = elements.iter().map(|e| e.error).fold(0.0, f64::max);
        let max_primal_error = elements.iter().map(|e| e.primal_error).fold(0.0, f64::max);
        dependents.push(DependentComparison {
            name: label,
            has_derivative,
            elements,
            max_error,
            max_primal_error,
        });
    }
    Ok(DualComparison {
        tangent_proc: dname,
        direction,
        dependents,
        steps_original,
        steps_tangent,
    })
}

// ---------------------------------------------------------------------------
// The tangent procedure and its signature
// ---------------------------------------------------------------------------

/// The derivative procedure of `head`: a procedure with a body that the
/// original does not have, named `{head}_d` or, after a clash,
/// `{head}_d0`, `{head}_d1`, ... (CONTRACT §2).
fn find_tangent_proc(
    original: &Program,
    tangent: &Program,
    head: ProcId,
) -> Result<ProcId, DualCheckError> {
    find_added_proc(original, tangent, head, "_d").ok_or_else(|| {
        DualCheckError::Signature(format!(
            "the tangent program defines no '{}_d'",
            original.proc(head).name
        ))
    })
}

/// The procedure of the output program `out` made for `head` with the
/// name suffix `suffix` (`_d`, `_b`): a procedure with a body that the
/// original does not have, named `{head}{suffix}` or, after a clash,
/// `{head}{suffix}0`, `{head}{suffix}1`, ... (CONTRACT §2).
pub(crate) fn find_added_proc(
    original: &Program,
    out: &Program,
    head: ProcId,
    suffix: &str,
) -> Option<ProcId> {
    let base = format!("{}{suffix}", original.proc(head).name);
    let added = |name: &str| {
        original.proc_by_name(name).is_none()
            && out
                .proc_by_name(name)
                .is_some_and(|p| out.proc(p).body.is_some())
    };
    std::iter::once(base.clone())
        .chain((0..100).map(|k| format!("{base}{k}")))
        .find(|n| added(n))
        .and_then(|n| out.proc_by_name(&n))
}

/// `name` is `base` followed by one or more digits.
fn is_name_with_suffix(name: &str, base: &str) -> bool {
    name.strip_prefix(base)
        .is_some_and(|rest| !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()))
}

/// Where the arguments of `f_d` go (CONTRACT §3).
struct Signature {
    /// Per original parameter: its index in `f_d`'s parameters.
    primal: Vec<usize>,
    /// Per original parameter: the index of its derivative parameter.
    derivative: Vec<Option<usize>>,
    /// The extra last parameter receiving the original result.
    result: Option<usize>,
}

/// Do two types (of two programs) have the same shape: the same scalar,
/// pointers to the same shape, structs with the same field names?
fn same_shape(pa: &Program, a: &Type, pb: &Program, b: &Type, depth: usize) -> bool {
    if depth > 8 {
        return true;
    }
    match (pa.resolve(a), pb.resolve(b)) {
        (Type::Pointer(x), Type::Pointer(y)) => same_shape(pa, &x.ty, pb, &y.ty, depth + 1),
        (Type::Array { elem: x, .. }, Type::Array { elem: y, .. }) => {
            same_shape(pa, &x.ty, pb, &y.ty, depth + 1)
        }
        (Type::Struct(x), Type::Struct(y)) => {
            let (fx, fy) = (&pa.strukt(*x).fields, &pb.strukt(*y).fields);
            fx.len() == fy.len() && fx.iter().zip(fy).all(|(f, g)| f.name == g.name)
        }
        (x, y) => x == y,
    }
}

/// Matches `f_d`'s parameters with `f`'s (CONTRACT §3): the primal
/// parameters keep their names and order; a derivative parameter comes
/// right after its primal; the result pointer, if any, comes last, named
/// like the procedure (maybe with a digit suffix) and typed `ret *`.
fn match_signature(
    original: &Program,
    tangent: &Program,
    head: ProcId,
    dproc: ProcId,
) -> Result<Signature, DualCheckError> {
    let orig = original.proc(head);
    let dp = tangent.proc(dproc);
    let oname = |s: SymId| original.sym(s).name.as_str();
    let dname = |s: SymId| tangent.sym(s).name.as_str();
    let bad = |why: String| {
        let list = |p: &[SymId], prog: &Program| {
            p.iter()
                .map(|&s| prog.sym(s).name.clone())
                .collect::<Vec<_>>()
                .join(", ")
        };
        DualCheckError::Signature(format!(
            "'{}({})' against '{}({})': {why}",
            dp.name,
            list(&dp.params, tangent),
            orig.name,
            list(&orig.params, original),
        ))
    };
    let returns = !matches!(original.resolve(&orig.ret.ty), Type::Void);
    let is_result = |s: SymId| -> bool {
        let sym = tangent.sym(s);
        let named = sym.name == orig.name || is_name_with_suffix(&sym.name, &orig.name);
        let typed = match tangent.resolve(&sym.ty.ty) {
            Type::Pointer(t) => same_shape(tangent, &t.ty, original, &orig.ret.ty, 0),
            _ => false,
        };
        returns && named && typed
    };
    let mut primal = Vec::with_capacity(orig.params.len());
    let mut derivative = Vec::with_capacity(orig.params.len());
    let mut result = None;
    if orig.params.is_empty() {
        match dp.params.as_slice() {
            [] => {}
            [r] if is_result(*r) => result = Some(0),
            _ => return Err(bad("unexpected parameters".into())),
        }
        return Ok(Signature {
            primal,
            derivative,
            result,
        });
    }
    let mut i = 0;
    for (j, &s) in orig.params.iter().enumerate() {
        if dp.params.get(i).map(|&d| dname(d)) != Some(oname(s)) {
            return Err(bad(format!(
                "parameter {} of '{}' should be '{}'",
                i + 1,
                dp.name,
                oname(s)
            )));
        }
        primal.push(i);
        i += 1;
        let next = orig.params.get(j + 1).map(|&n| oname(n));
        let start = i;
        while i < dp.params.len() && Some(dname(dp.params[i])) != next {
            i += 1;
        }
        let extras = &dp.params[start..i];
        let last = j + 1 == orig.params.len();
        let d = match (extras, last) {
            ([], _) => None,
            ([_], false) => Some(start),
            ([r], true) if is_result(*r) => {
                result = Some(start);
                None
            }
            ([_], true) => Some(start),
            ([_, r], true) if is_result(*r) => {
                result = Some(start + 1);
                Some(start)
            }
            _ => {
                return Err(bad(format!(
                    "{} parameters follow '{}'",
                    extras.len(),
                    oname(s)
                )));
            }
        };
        if let Some(k) = d {
            check_derivative_type(original, s, tangent, dp.params[k]).map_err(bad)?;
        }
        derivative.push(d);
    }
    Ok(Signature {
        primal,
        derivative,
        result,
    })
}

/// A derivative parameter has the shape of its primal: a real for a real,
/// a pointer for a pointer, a struct for a struct.
fn check_derivative_type(
    original: &Program,
    primal: SymId,
    tangent: &Program,
    deriv: SymId,
) -> Result<(), String> {
    let p = original.sym(primal);
    let d = tangent.sym(deriv);
    let kind = |prog: &Program, ty: &Type| match prog.resolve(ty) {
        Type::Real(_) => "a real",
        Type::Pointer(_) | Type::Array { .. } => "a pointer",
        Type::Struct(_) => "a struct",
        Type::Int { .. } => "an integer",
        _ => "something else",
    };
    let (kp, kd) = (kind(original, &p.ty.ty), kind(tangent, &d.ty.ty));
    if kp != kd || kp == "an integer" || kp == "something else" {
        return Err(format!(
            "'{}' follows '{}' as its derivative, but it is {kd} where the primal is {kp}",
            d.name, p.name
        ));
    }
    Ok(())
}

/// The derivative global `gd` of `g` in the tangent program: a global the
/// original does not have, named `{g}d` or, after a clash, `{g}d0`, ...
fn derivative_global(original: &Program, tangent: &Program, g: SymId) -> Option<SymId> {
    added_global(original, tangent, g, "d")
}

/// The global of the output program `out` made for `g` with the name
/// suffix `suffix` (`d`, `b`): a global the original does not have, named
/// `{g}{suffix}` or, after a clash, `{g}{suffix}0`, ...
pub(crate) fn added_global(
    original: &Program,
    out: &Program,
    g: SymId,
    suffix: &str,
) -> Option<SymId> {
    let base = format!("{}{suffix}", original.sym(g).name);
    std::iter::once(base.clone())
        .chain((0..100).map(|k| format!("{base}{k}")))
        .find(|n| original.global_by_name(n).is_none() && out.global_by_name(n).is_some())
        .and_then(|n| out.global_by_name(&n))
}

/// The tangent program linked with the original translation unit: the
/// output declares the original's globals `extern`; the original defines
/// them, with their initialisers.
pub(crate) fn link(original: &Program, tangent: &Program) -> Program {
    let mut linked = tangent.clone();
    for item in &original.items {
        if let ItemKind::Globals { vars, .. } = &item.kind
            && vars.iter().any(|d| d.init.is_some())
        {
            linked.items.push(item.clone());
        }
    }
    linked
}

// ---------------------------------------------------------------------------
// Objects: what an argument or a global holds
// ---------------------------------------------------------------------------

/// A value with, for every real, its primal value and its direction.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Obj {
    Real {
        x: f64,
        dx: f64,
    },
    Int(i64),
    /// Fields by name, in declaration order (a derivative struct `T_d`
    /// takes those of its fields, by name).
    Struct {
        fields: Vec<(String, Obj)>,
    },
    /// The elements of a fixed-size array, stored inline.
    Array(Vec<Obj>),
    /// A pointer field: the elements of the buffer it points to.
    Pointer(Vec<Obj>),
    /// Not read or written (a pointer in a global or a result).
    Opaque,
}

/// An argument of the head.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Arg {
    /// A scalar or a struct by value.
    Value(Obj),
    /// A pointer parameter: the buffer it points to.
    Buffer(Vec<Obj>),
}

impl Arg {
    /// Appends (label, ẋ) for every real.
    pub(crate) fn directions(&self, name: &str, out: &mut Vec<(String, f64)>) {
        match self {
            Arg::Value(o) => o.directions(name.to_string(), out),
            Arg::Buffer(elems) => {
                for (i, o) in elems.iter().enumerate() {
                    o.directions(format!("{name}[{i}]"), out);
                }
            }
        }
    }
}

impl Obj {
    pub(crate) fn directions(&self, label: String, out: &mut Vec<(String, f64)>) {
        match self {
            Obj::Real { dx, .. } => out.push((label, *dx)),
            Obj::Int(_) | Obj::Opaque => {}
            Obj::Struct { fields } => {
                for (fname, f) in fields {
                    f.directions(format!("{label}.{fname}"), out);
                }
            }
            Obj::Array(elems) | Obj::Pointer(elems) => {
                for (i, o) in elems.iter().enumerate() {
                    o.directions(format!("{label}[{i}]"), out);
                }
            }
        }
    }
}

/// Draws the direction of the reals of one independent (zero for the
/// others, drawing nothing).
pub(crate) struct Dir<'r> {
    pub(crate) rng: &'r mut SplitMix64,
    pub(crate) active: bool,
}

impl Dir<'_> {
    pub(crate) fn draw(&mut self, kind: RealKind) -> f64 {
        if !self.active {
            return 0.0;
        }
        let v = self.rng.real_in(-1.0, 1.0);
        // A float independent gets a direction it can hold exactly, so
        // both runs see the same one.
        if kind == RealKind::Float {
            v as f32 as f64
        } else {
            v
        }
    }
}

fn real_kind(program: &Program, ty: &Type) -> Option<RealKind> {
    match program.resolve(ty) {
        Type::Real(k) => Some(*k),
        _ => None,
    }
}

/// The element type of a pointer or array type.
pub(crate) fn elem_type(program: &Program, ty: &Type) -> Option<QualType> {
    match program.resolve(ty) {
        Type::Pointer(t) => Some((**t).clone()),
        Type::Array { elem, .. } => Some((**elem).clone()),
        _ => None,
    }
}

fn reals(
    program: &Program,
    elem: &QualType,
    vs: &[f64],
    dir: &mut Dir,
) -> Result<Vec<Obj>, String> {
    let kind = real_kind(program, &elem.ty).ok_or("real values for a non-real element type")?;
    Ok(vs
        .iter()
        .map(|&x| Obj::Real {
            x,
            dx: dir.draw(kind),
        })
        .collect())
}

pub(crate) fn arg_obj(
    program: &Program,
    ty: &QualType,
    arg: &ArgValue,
    dir: &mut Dir,
) -> Result<Arg, String> {
    let elem = || elem_type(program, &ty.ty).ok_or("an array value for a non-pointer parameter");
    Ok(match arg {
        ArgValue::Int(i) => Arg::Value(Obj::Int(*i)),
        ArgValue::Real(x) => {
            let kind = real_kind(program, &ty.ty).ok_or("a real value for a non-real parameter")?;
            Arg::Value(Obj::Real {
                x: *x,
                dx: dir.draw(kind),
            })
        }
        ArgValue::RealArray(vs) => Arg::Buffer(reals(program, &elem()?, vs, dir)?),
        ArgValue::IntArray(vs) => Arg::Buffer(vs.iter().map(|&i| Obj::Int(i)).collect()),
        ArgValue::Struct(sv) => Arg::Value(struct_obj(program, sv, dir)?),
        ArgValue::StructArray(svs) => Arg::Buffer(
            svs.iter()
                .map(|sv| struct_obj(program, sv, dir))
                .collect::<Result<_, _>>()?,
        ),
    })
}

fn struct_obj(program: &Program, sv: &StructValue, dir: &mut Dir) -> Result<Obj, String> {
    let def = program.strukt(sv.strukt);
    if def.fields.len() != sv.fields.len() {
        return Err("the struct value does not have one value per field".into());
    }
    let mut fields = Vec::with_capacity(def.fields.len());
    for (field, fv) in def.fields.iter().zip(&sv.fields) {
        let elem = || {
            elem_type(program, &field.ty.ty)
                .ok_or_else(|| format!("field '{}' is not an array or pointer", field.name))
        };
        let obj = match fv {
            FieldValue::Int(i) => Obj::Int(*i),
            FieldValue::Real(x) => {
                let kind = real_kind(program, &field.ty.ty)
                    .ok_or_else(|| format!("field '{}' is not real", field.name))?;
                Obj::Real {
                    x: *x,
                    dx: dir.draw(kind),
                }
            }
            FieldValue::RealArray(vs) => Obj::Array(reals(program, &elem()?, vs, dir)?),
            FieldValue::IntArray(vs) => Obj::Array(vs.iter().map(|&i| Obj::Int(i)).collect()),
            FieldValue::RealPointer(vs) => Obj::Pointer(reals(program, &elem()?, vs, dir)?),
            FieldValue::IntPointer(vs) => Obj::Pointer(vs.iter().map(|&i| Obj::Int(i)).collect()),
            FieldValue::Struct(inner) => struct_obj(program, inner, dir)?,
        };
        fields.push((field.name.clone(), obj));
    }
    Ok(Obj::Struct { fields })
}

/// The object of type `ty` stored at `at` (a global, a returned struct),
/// its reals drawn a direction from `dir`. Pointers are opaque.
pub(crate) fn shape_of<R: Real>(
    m: &Machine<'_, R>,
    program: &Program,
    at: Value<R>,
    ty: &QualType,
    dir: &mut Dir,
    depth: usize,
) -> Result<Obj, String> {
    if depth > 16 {
        return Err("types nested too deeply".into());
    }
    Ok(match program.resolve(&ty.ty) {
        Type::Real(kind) => {
            let kind = *kind;
            let x = match m.read(at, ty).map_err(|e| e.to_string())? {
                Value::Real(r) => r.value(),
                other => return Err(format!("a real holds {other:?}")),
            };
            Obj::Real {
                x,
                dx: dir.draw(kind),
            }
        }
        Type::Int { .. } => match m.read(at, ty).map_err(|e| e.to_string())? {
            Value::Int(i) => Obj::Int(i),
            other => return Err(format!("an integer holds {other:?}")),
        },
        Type::Struct(sid) => {
            let sid = *sid;
            let mut fields = Vec::new();
            for (k, f) in program.strukt(sid).fields.iter().enumerate() {
                let fp = m.field_ptr(at, sid, k).map_err(|e| e.to_string())?;
                let obj = shape_of(m, program, fp, &f.ty, dir, depth + 1)?;
                fields.push((f.name.clone(), obj));
            }
            Obj::Struct { fields }
        }
        Type::Array {
            elem,
            len: Some(len),
        } if len.value.is_some() => {
            let n = len.value.unwrap_or(0);
            let mut elems = Vec::new();
            for i in 0..n {
                let q = m.elem_ptr(at, elem, i as i64).map_err(|e| e.to_string())?;
                elems.push(shape_of(m, program, q, elem, dir, depth + 1)?);
            }
            Obj::Array(elems)
        }
        _ => Obj::Opaque,
    })
}

/// Stores `obj` at `at` as an object of type `ty`, each real made by
/// `make(x, ẋ)`. For a struct type, every field of `ty`'s struct takes
/// the value of the field of the same name in `obj`: the same code fills
/// a `T` and its derivative `T_d` (which has only the active fields).
pub(crate) fn store<R: Real>(
    m: &mut Machine<'_, R>,
    program: &Program,
    at: Value<R>,
    ty: &QualType,
    obj: &Obj,
    make: &dyn Fn(f64, f64) -> R,
) -> Result<(), String> {
    match (program.resolve(&ty.ty), obj) {
        (_, Obj::Opaque) => Ok(()),
        (Type::Real(_), Obj::Real { x, dx }) => m
            .write(at, ty, Value::Real(make(*x, *dx)))
            .map_err(|e| e.to_string()),
        (Type::Int { .. }, Obj::Int(i)) => {
            m.write(at, ty, Value::Int(*i)).map_err(|e| e.to_string())
        }
        (Type::Struct(sid), Obj::Struct { fields }) => {
            let sid = *sid;
            for (k, f) in program.strukt(sid).fields.iter().enumerate() {
                let Some((_, src)) = fields.iter().find(|(name, _)| *name == f.name) else {
                    return Err(format!("field '{}' has no counterpart", f.name));
                };
                let fp = m.field_ptr(at, sid, k).map_err(|e| e.to_string())?;
                store(m, program, fp, &f.ty, src, make)?;
            }
            Ok(())
        }
        (Type::Array { elem, .. }, Obj::Array(elems)) => {
            for (i, o) in elems.iter().enumerate() {
                let q = m.elem_ptr(at, elem, i as i64).map_err(|e| e.to_string())?;
                store(m, program, q, elem, o, make)?;
            }
            Ok(())
        }
        (Type::Pointer(elem), Obj::Pointer(elems)) => {
            let buf = alloc_buffer(m, program, elem, elems, make)?;
            m.write(at, ty, buf).map_err(|e| e.to_string())
        }
        (t, o) => Err(format!("cannot store {o:?} in an object of type {t:?}")),
    }
}

/// A zeroed buffer of `elems.len()` elements of `elem`, filled.
fn alloc_buffer<R: Real>(
    m: &mut Machine<'_, R>,
    program: &Program,
    elem: &QualType,
    elems: &[Obj],
    make: &dyn Fn(f64, f64) -> R,
) -> Result<Value<R>, String> {
    let buf = m.alloc_zeroed(elem, elems.len() as u64);
    for (i, o) in elems.iter().enumerate() {
        let q = m.elem_ptr(buf, elem, i as i64).map_err(|e| e.to_string())?;
        store(m, program, q, elem, o, make)?;
    }
    Ok(buf)
}

/// The value passed for a parameter of type `ty` (the primal's, or the
/// derivative's in the tangent program).
pub(crate) fn build_arg<R: Real>(
    m: &mut Machine<'_, R>,
    program: &Program,
    ty: &QualType,
    arg: &Arg,
    make: &dyn Fn(f64, f64) -> R,
) -> Result<Value<R>, String> {
    match arg {
        Arg::Value(Obj::Int(i)) => Ok(Value::Int(*i)),
        Arg::Value(Obj::Real { x, dx }) => Ok(Value::Real(make(*x, *dx))),
        Arg::Value(obj @ Obj::Struct { .. }) => {
            let storage = m.alloc_zeroed(ty, 1);
            store(m, program, storage, ty, obj, make)?;
            Ok(storage)
        }
        Arg::Value(other) => Err(format!("cannot pass {other:?} by value")),
        Arg::Buffer(elems) => {
            let elem = elem_type(program, &ty.ty).ok_or("a buffer for a non-pointer parameter")?;
            alloc_buffer(m, program, &elem, elems, make)
        }
    }
}

// ---------------------------------------------------------------------------
// Reading dependents
// ---------------------------------------------------------------------------

/// The shape of a dependent, from the original run.
#[derive(Clone, Debug)]
pub(crate) enum Shape {
    /// The buffer behind a pointer parameter.
    Buffer(Vec<Obj>),
    /// A global, a struct result.
    Object(Obj),
    /// A real result.
    Scalar,
}

/// Where a dependent (or its derivative) is after a run.
#[derive(Clone, Debug)]
pub(crate) enum Loc<R> {
    Buffer(Value<R>, QualType),
    Object(Value<R>, QualType),
    Value(R),
    /// Nowhere: its derivative is zero.
    Absent,
}

pub(crate) type Read<R> = Vec<(String, Option<R>)>;

pub(crate) fn read_dep<R: Real>(
    m: &Machine<'_, R>,
    program: &Program,
    shape: &Shape,
    loc: &Loc<R>,
    name: &str,
) -> Result<Read<R>, String> {
    let mut out = Vec::new();
    match (shape, loc) {
        (Shape::Buffer(elems), Loc::Buffer(base, elem)) => {
            for (i, o) in elems.iter().enumerate() {
                let q = m
                    .elem_ptr(*base, elem, i as i64)
                    .map_err(|e| e.to_string())?;
                load(
                    m,
                    program,
                    Some((q, elem.clone())),
                    o,
                    format!("{name}[{i}]"),
                    &mut out,
                )?;
            }
        }
        (Shape::Buffer(elems), Loc::Absent) => {
            for (i, o) in elems.iter().enumerate() {
                load(m, program, None, o, format!("{name}[{i}]"), &mut out)?;
            }
        }
        (Shape::Object(o), Loc::Object(at, ty)) => load(
            m,
            program,
            Some((*at, ty.clone())),
            o,
            name.to_string(),
            &mut out,
        )?,
        (Shape::Object(o), Loc::Absent) => load(m, program, None, o, name.to_string(), &mut out)?,
        (Shape::Scalar, Loc::Value(r)) => out.push((name.to_string(), Some(*r))),
        (Shape::Scalar, Loc::Object(at, ty)) => match m.read(*at, ty).map_err(|e| e.to_string())? {
            Value::Real(r) => out.push((name.to_string(), Some(r))),
            other => return Err(format!("'{name}' holds {other:?}")),
        },
        (Shape::Scalar, Loc::Absent) => out.push((name.to_string(), None)),
        (s, l) => return Err(format!("a {s:?} cannot be read from {l:?}")),
    }
    Ok(out)
}

/// Appends every real of `obj` (the primal shape), read from `at` if the
/// object exists there (`None`: the derivative is absent, i.e. zero).
pub(crate) fn load<R: Real>(
    m: &Machine<'_, R>,
    program: &Program,
    at: Option<(Value<R>, QualType)>,
    obj: &Obj,
    label: String,
    out: &mut Read<R>,
) -> Result<(), String> {
    match obj {
        Obj::Int(_) | Obj::Opaque => {}
        Obj::Real { .. } => {
            let v = match at {
                None => None,
                Some((p, ty)) => match m.read(p, &ty).map_err(|e| format!("{label}: {e}"))? {
                    Value::Real(r) => Some(r),
                    other => return Err(format!("{label} holds {other:?}")),
                },
            };
            out.push((label, v));
        }
        Obj::Struct { fields } => {
            for (fname, f) in fields {
                let sub = match &at {
                    None => None,
                    Some((p, ty)) => match program.resolve(&ty.ty) {
                        Type::Struct(sid) => {
                            let sid = *sid;
                            match program
                                .strukt(sid)
                                .fields
                                .iter()
                                .position(|g| g.name == *fname)
                            {
                                Some(fi) => Some((
                                    m.field_ptr(*p, sid, fi).map_err(|e| e.to_string())?,
                                    program.strukt(sid).fields[fi].ty.clone(),
                                )),
                                None => None,
                            }
                        }
                        _ => return Err(format!("{label} is not a struct")),
                    },
                };
                load(m, program, sub, f, format!("{label}.{fname}"), out)?;
            }
        }
        Obj::Array(elems) | Obj::Pointer(elems) => {
            let base = match &at {
                None => None,
                Some((p, ty)) => {
                    let elem = elem_type(program, &ty.ty)
                        .ok_or_else(|| format!("{label} is not an array or pointer"))?;
                    let base = if matches!(obj, Obj::Pointer(_)) {
                        m.read(*p, ty).map_err(|e| format!("{label}: {e}"))?
                    } else {
                        *p
                    };
                    Some((base, elem))
                }
            };
            for (i, o) in elems.iter().enumerate() {
                let sub = match &base {
                    None => None,
                    Some((b, elem)) => Some((
                        m.elem_ptr(*b, elem, i as i64).map_err(|e| e.to_string())?,
                        elem.clone(),
                    )),
                };
                load(m, program, sub, o, format!("{label}[{i}]"), out)?;
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

fn unsupported(what: impl Into<String>, why: impl Into<String>) -> DualCheckError {
    DualCheckError::Unsupported {
        what: what.into(),
        why: why.into(),
    }
}

pub(crate) fn interp_error(
    during: impl Into<String>,
    e: crate::interp::Error,
) -> (InterpRunError, Span) {
    (
        InterpRunError::Interp {
            during: during.into(),
            message: e.to_string(),
        },
        e.span,
    )
}

pub(crate) fn call_error<R: Real>(
    name: &str,
    e: crate::interp::Error,
    m: &Machine<'_, R>,
) -> (InterpRunError, Span) {
    match e.kind {
        ErrorKind::Exit(status) => (
            InterpRunError::Exit {
                status,
                stdout: m.output().to_string(),
            },
            e.span,
        ),
        _ => interp_error(format!("while running '{name}'"), e),
    }
}
