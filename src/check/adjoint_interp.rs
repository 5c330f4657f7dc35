//! The dot-product test of adjoint code, in the IL interpreter.
//!
//! [`adjoint_vs_tangent_dual`] checks the adjoint procedure `f_b` that the
//! adjoint mode wrote for a head `f` against exact tangents, without
//! compiling anything:
//!
//! 1. a random direction ẋ is drawn (uniform in `[-1, 1]`, reproducibly
//!    from a seed) for every real element of every independent, and the
//!    ORIGINAL head runs in a [`Machine<Dual>`] on the driver's [`Inputs`]
//!    with the independents seeded by ẋ (exactly as
//!    [`tangent_vs_dual`](super::tangent_interp::tangent_vs_dual) does):
//!    the tangent parts of the dependents after the call are `ẏ = J ẋ`;
//! 2. random weights ȳ are drawn (from another stream of the same seed)
//!    for every real element of every dependent, and the ADJOINT
//!    program's `f_b` runs in a [`Machine<f64>`] on the same primal
//!    inputs, with every adjoint buffer zeroed except the dependents',
//!    which hold ȳ (CONTRACT §3: the adjoint parameter right after each
//!    differentiated parameter, the extra last by-value parameter `fb`
//!    for a real result, the adjoint globals `gb`); the gradient
//!    `x̄ = Jᵀ ȳ` is read back from the independents' adjoint buffers
//!    (`*xb`, `xb[i]`, `gb`);
//! 3. the two scalar products `⟨ȳ, ẏ⟩` and `⟨x̄, ẋ⟩`, equal for a correct
//!    adjoint whatever ẋ and ȳ, are compared (see
//!    [`DotComparison::error`]).
//!
//! The adjoint program only declares the original's non-static globals
//! and calls the runtime's stack through bodiless `aioli_push_*` /
//! `aioli_pop_*` procedures, which the interpreter runs as builtins; it is
//! linked with the original's global definitions as in the tangent check.
//!
//! A dependent or independent that has no adjoint in `f_b` (no adjoint
//! parameter, no `gb` global, no `fb` parameter) takes no part on the
//! adjoint side: its weight is not passed, its gradient is zero. It is
//! listed in [`DotComparison::without_adjoint`].

use super::driver::{ArgValue, Inputs};
use super::interp_run::InterpRunError;
use super::rng::SplitMix64;
use super::tangent_interp::{
    Arg, Dir, Loc, Obj, Shape, added_global, arg_obj, build_arg, call_error, elem_type,
    find_added_proc, interp_error, link, load, read_dep, relative_error, shape_of, store,
};
use crate::analysis::head::{Head, HeadVar};
use crate::front::source::Span;
use crate::il::{ProcId, Program, QualType, SymId, SymKind, Type};
use crate::interp::{Config, Dual, Machine, Real, Value};
use std::fmt::Write;

/// A dependent passed by pointer: its parameter's position, its shape,
/// and its original values by label.
type PrimalResult = (usize, Shape, Vec<(String, f64)>);

/// Limits of the two runs.
#[derive(Clone, Copy, Debug)]
pub struct DotOptions {
    /// Step budget of the dual-number run of the original; the adjoint run
    /// gets four times as much (forward and backward sweeps).
    pub fuel: u64,
    /// Run the head's split pair, `f_fwd` and then `f_bwd` (CONTRACT §2,
    /// `--split`), instead of `f_b`; `f_fwd` must also leave the original
    /// results in the dependents.
    pub split_pair: bool,
}

impl Default for DotOptions {
    fn default() -> DotOptions {
        DotOptions {
            fuel: 10_000_000,
            split_pair: false,
        }
    }
}

/// Why the comparison could not be made.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum DotCheckError {
    /// Running the original head with dual numbers failed: the inputs are
    /// unusable, not a verdict on the adjoint code.
    #[error("running the original '{proc_name}' with dual numbers: {error}")]
    Original {
        proc_name: String,
        error: InterpRunError,
        span: Span,
    },
    /// Running the adjoint procedure failed although the original ran: a
    /// defect of the adjoint code (or of its fuel budget).
    #[error("running the adjoint procedure '{proc_name}': {error}")]
    Adjoint {
        proc_name: String,
        error: InterpRunError,
        /// The statement the interpreter stopped at (the adjoint
        /// program's statements carry the spans of the original ones).
        span: Span,
    },
    /// The adjoint program has no adjoint procedure for the head, or its
    /// signature does not follow CONTRACT §3.
    #[error("signature: {0}")]
    Signature(String),
    /// Inputs or outputs this checker cannot build or read.
    #[error("unsupported {what}: {why}")]
    Unsupported { what: String, why: String },
}

/// The result of [`adjoint_vs_tangent_dual`].
#[derive(Clone, Debug, PartialEq)]
pub struct DotComparison {
    /// The name of the adjoint procedure that was run.
    pub adjoint_proc: String,
    /// ẋ, per real element of the independents: (label, ẋ, x̄), x̄ the
    /// gradient `f_b` left in the element's adjoint (0 without one).
    pub independents: Vec<(String, f64, f64)>,
    /// ȳ, per real element of the dependents: (label, ȳ, ẏ), ẏ the exact
    /// tangent from the dual-number run (a dependent passed by value has
    /// no element: the callee cannot change the caller's copy).
    pub dependents: Vec<(String, f64, f64)>,
    /// `⟨ȳ, ẏ⟩`.
    pub weighted_tangent: f64,
    /// `⟨x̄, ẋ⟩`.
    pub weighted_gradient: f64,
    /// `max(Σ|ȳᵢ ẏᵢ|, Σ|x̄ᵢ ẋᵢ|)`: the size of the terms of the two sums.
    pub scale: f64,
    /// `|⟨ȳ, ẏ⟩ − ⟨x̄, ẋ⟩| / max(scale, 1e-300)` (0 when the two are
    /// equal): the relative error of the two scalar products, measured
    /// against the size of their terms so that a sum that cancels to
    /// nearly zero does not turn rounding into a large relative error. At
    /// least [`relative_error`] of the two sums whenever no term cancels.
    pub error: f64,
    /// [`relative_error`] of the two sums, without the scale.
    pub plain_error: f64,
    /// Head variables whose adjoint `f_b` does not have.
    pub without_adjoint: Vec<String>,
    /// Statements the two runs executed.
    pub steps_original: u64,
    pub steps_adjoint: u64,
    /// Entries `f_b` left on the adjoint stack (0 for a correct adjoint).
    pub stack_left: usize,
}

impl DotComparison {
    /// A table of every element: the independents (ẋ, x̄), the dependents
    /// (ȳ, ẏ), then the two products.
    pub fn table(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "{:<24} {:>24} {:>24}", "independent", "xdot", "xbar");
        for (l, xd, xb) in &self.independents {
            let _ = writeln!(s, "{l:<24} {xd:>24.16e} {xb:>24.16e}");
        }
        let _ = writeln!(s, "{:<24} {:>24} {:>24}", "dependent", "ybar", "ydot");
        for (l, yb, yd) in &self.dependents {
            let _ = writeln!(s, "{l:<24} {yb:>24.16e} {yd:>24.16e}");
        }
        let _ = writeln!(
            s,
            "<ybar, ydot> = {:.17e}\n<xbar, xdot> = {:.17e}\nerror {:.2e} (plain {:.2e}, scale {:.3e}), stack left {}",
            self.weighted_tangent,
            self.weighted_gradient,
            self.error,
            self.plain_error,
            self.scale,
            self.stack_left
        );
        if !self.without_adjoint.is_empty() {
            let _ = writeln!(s, "without adjoint: {}", self.without_adjoint.join(", "));
        }
        s
    }
}

/// Runs the head of `original` with dual numbers along a random ẋ, and
/// its adjoint procedure of `adjoint_out` (the output program of the
/// adjoint mode for a set of heads including `head`) with random weights
/// ȳ on the dependents, both on `inputs`, and compares `⟨ȳ, J ẋ⟩` with
/// `⟨Jᵀ ȳ, ẋ⟩`. ẋ and ȳ are drawn from `seed`.
pub fn adjoint_vs_tangent_dual(
    original: &Program,
    adjoint_out: &Program,
    head: &Head,
    inputs: &Inputs,
    seed: u64,
    options: &DotOptions,
) -> Result<DotComparison, DotCheckError> {
    let linked = adjoint_out.linked_with(original);
    let adjoint_out: &Program = &linked;
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
    let bproc = find_added_proc(original, adjoint_out, head.proc, "_b").ok_or_else(|| {
        DotCheckError::Signature(format!("the adjoint program defines no '{name}_b'"))
    })?;
    let split_pair = if options.split_pair {
        let half = |suffix: &str| {
            find_added_proc(original, adjoint_out, head.proc, suffix).ok_or_else(|| {
                DotCheckError::Signature(format!("the adjoint program defines no '{name}{suffix}'"))
            })
        };
        Some((half("_fwd")?, half("_bwd")?))
    } else {
        None
    };
    let bname = match split_pair {
        Some((_, bwd)) => adjoint_out.proc(bwd).name.clone(),
        None => adjoint_out.proc(bproc).name.clone(),
    };
    let sig = match_signature(original, adjoint_out, head.proc, bproc)?;

    // ẋ (and the primal values) of every argument, and ȳ of every
    // dependent passed by pointer, from two streams.
    let mut xrng = SplitMix64::new(seed);
    let mut yrng = SplitMix64::new(seed ^ 0x5DEE_CE66_D1CE_5EED);
    let mut xargs = Vec::with_capacity(proc.params.len());
    let mut yargs = Vec::with_capacity(proc.params.len());
    for (&sym, arg) in proc.params.iter().zip(&inputs.args) {
        let s = original.sym(sym);
        let what = || format!("parameter '{}'", s.name);
        let mut dir = Dir {
            rng: &mut xrng,
            active: head.independents.contains(&HeadVar::Param(sym)),
        };
        xargs
            .push(arg_obj(original, &s.ty, arg, &mut dir).map_err(|why| unsupported(what(), why))?);
        let mut dir = Dir {
            rng: &mut yrng,
            active: head.dependents.contains(&HeadVar::Param(sym)) && by_pointer(arg),
        };
        yargs
            .push(arg_obj(original, &s.ty, arg, &mut dir).map_err(|why| unsupported(what(), why))?);
    }

    // (a) The original with dual numbers: ẏ = J ẋ.
    let original_err = |(error, span): (InterpRunError, Span)| DotCheckError::Original {
        proc_name: name.clone(),
        error,
        span,
    };
    let mut dm = Machine::<Dual>::new(original, Config { fuel: options.fuel })
        .map_err(|e| original_err(interp_error("while initialising globals", e)))?;
    let dual = |x: f64, dx: f64| Dual::new(x, dx);
    // Independent globals: (global, its ẋ).
    let mut global_x = Vec::new();
    for hv in &head.independents {
        if let HeadVar::Global(g) = *hv {
            let s = original.sym(g);
            let what = format!("global '{}'", s.name);
            let at = dm
                .global_ptr(&s.name)
                .map_err(|e| original_err(interp_error(format!("while seeding {what}"), e)))?;
            let mut dir = Dir {
                rng: &mut xrng,
                active: true,
            };
            let obj = shape_of(&dm, original, at, &s.ty, &mut dir, 0)
                .map_err(|why| unsupported(&what, why))?;
            store(&mut dm, original, at, &s.ty, &obj, &dual)
                .map_err(|why| unsupported(&what, why))?;
            global_x.push((g, obj));
        }
    }
    let mut dargs = Vec::with_capacity(xargs.len());
    for (&sym, a) in proc.params.iter().zip(&xargs) {
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

    // Per dependent: its ȳ (an object whose directions are the weights),
    // where its adjoint goes in f_b, and its ẏ.
    let mut dependents = Vec::new();
    // The original results of the dependents passed by pointer, and the
    // function's own: what `f_fwd` must leave.
    let mut primal_results: Vec<PrimalResult> = Vec::new();
    let mut primal_result: Option<f64> = None;
    let mut global_y = Vec::new();
    let mut result_y = None;
    let mut without_adjoint = Vec::new();
    for hv in &head.dependents {
        let (label, ybar, values) = match *hv {
            HeadVar::Param(sym) => {
                let j = param_index(proc.params.as_slice(), sym)?;
                let s = original.sym(sym);
                match (&xargs[j], &yargs[j]) {
                    (Arg::Buffer(elems), Arg::Buffer(_)) => {
                        let elem = elem_type(original, &s.ty.ty).ok_or_else(|| {
                            unsupported(format!("parameter '{}'", s.name), "not a pointer")
                        })?;
                        let values = read_dep(
                            &dm,
                            original,
                            &Shape::Buffer(elems.clone()),
                            &Loc::Buffer(dargs[j], elem),
                            &s.name,
                        )
                        .map_err(|why| unsupported(format!("dependent '{}'", s.name), why))?;
                        if sig.adjoint[j].is_none() {
                            without_adjoint.push(s.name.clone());
                        }
                        primal_results.push((
                            j,
                            Shape::Buffer(elems.clone()),
                            values
                                .iter()
                                .filter_map(|(l, v)| v.map(|d| (l.clone(), d.value())))
                                .collect(),
                        ));
                        (s.name.clone(), yargs[j].clone(), values)
                    }
                    // The callee cannot change the caller's copy: no element.
                    _ => continue,
                }
            }
            HeadVar::Global(g) => {
                let s = original.sym(g);
                let what = || format!("global '{}'", s.name);
                let at = dm.global_ptr(&s.name).map_err(|e| {
                    original_err(interp_error(format!("while reading '{}'", s.name), e))
                })?;
                let mut dir = Dir {
                    rng: &mut yrng,
                    active: true,
                };
                let obj = shape_of(&dm, original, at, &s.ty, &mut dir, 0)
                    .map_err(|why| unsupported(what(), why))?;
                let values = read_dep(
                    &dm,
                    original,
                    &Shape::Object(obj.clone()),
                    &Loc::Object(at, s.ty.clone()),
                    &s.name,
                )
                .map_err(|why| unsupported(what(), why))?;
                if adjoint_global(original, adjoint_out, g).is_none() {
                    without_adjoint.push(s.name.clone());
                }
                global_y.push((g, obj.clone()));
                (s.name.clone(), Arg::Value(obj), values)
            }
            HeadVar::Result => {
                let kind = match original.resolve(&proc.ret.ty) {
                    Type::Real(k) => *k,
                    _ => {
                        return Err(unsupported(
                            "result",
                            "only a real result can be a dependent of an adjoint",
                        ));
                    }
                };
                let r = dresult.as_real().ok_or_else(|| {
                    unsupported("result", format!("'{name}' returned {dresult:?}"))
                })?;
                let mut dir = Dir {
                    rng: &mut yrng,
                    active: true,
                };
                let w = dir.draw(kind);
                if sig.result.is_none() {
                    without_adjoint.push(format!("{name} (result)"));
                }
                primal_result = Some(r.value());
                result_y = Some(w);
                (
                    name.clone(),
                    Arg::Value(Obj::Real {
                        x: r.value(),
                        dx: w,
                    }),
                    vec![(name.clone(), Some(r))],
                )
            }
        };
        let mut weights = Vec::new();
        ybar.directions(&label, &mut weights);
        if weights.len() != values.len() {
            return Err(unsupported(
                format!("dependent '{label}'"),
                "its weights and its tangents have different numbers of elements",
            ));
        }
        for ((l, w), (_, v)) in weights.into_iter().zip(values) {
            dependents.push((l, w, v.map(|d| d.tangent()).unwrap_or(0.0)));
        }
    }

    // (b) The adjoint procedure: x̄ = Jᵀ ȳ.
    let adjoint_err = |(error, span): (InterpRunError, Span)| DotCheckError::Adjoint {
        proc_name: bname.clone(),
        error,
        span,
    };
    let linked = link_adjoint(original, adjoint_out);
    let mut am = Machine::<f64>::new(
        &linked,
        Config {
            fuel: options.fuel.saturating_mul(4),
        },
    )
    .map_err(|e| adjoint_err(interp_error("while initialising globals", e)))?;
    let primal = |x: f64, _dx: f64| x;
    let weight = |_x: f64, dx: f64| dx;
    for (g, obj) in &global_y {
        if let Some(gb) = adjoint_global(original, adjoint_out, *g) {
            let s = linked.sym(gb);
            let at = am
                .global_ptr(&s.name)
                .map_err(|e| adjoint_err(interp_error(format!("while seeding '{}'", s.name), e)))?;
            store(&mut am, &linked, at, &s.ty, obj, &weight)
                .map_err(|why| unsupported(format!("global '{}'", s.name), why))?;
        }
    }
    let bp = linked.proc(bproc);
    let mut bargs: Vec<Option<Value<f64>>> = vec![None; bp.params.len()];
    // Per parameter: where its adjoint is, with the element type.
    let mut adjoint_at: Vec<Option<(Value<f64>, QualType)>> = vec![None; xargs.len()];
    for (j, (xa, ya)) in xargs.iter().zip(&yargs).enumerate() {
        let s = linked.sym(bp.params[sig.primal[j]]);
        bargs[sig.primal[j]] = Some(
            build_arg(&mut am, &linked, &s.ty, xa, &primal)
                .map_err(|why| unsupported(format!("parameter '{}'", s.name), why))?,
        );
        if let Some(k) = sig.adjoint[j] {
            let bs = linked.sym(bp.params[k]);
            let elem = elem_type(&linked, &bs.ty.ty).ok_or_else(|| {
                DotCheckError::Signature(format!(
                    "adjoint parameter '{}' of '{bname}' is not a pointer",
                    bs.name
                ))
            })?;
            // A by-value primal's adjoint is a one-element buffer.
            let buffer = match ya {
                Arg::Value(o) => Arg::Buffer(vec![o.clone()]),
                b @ Arg::Buffer(_) => b.clone(),
            };
            let v = build_arg(&mut am, &linked, &bs.ty, &buffer, &weight)
                .map_err(|why| unsupported(format!("adjoint parameter '{}'", bs.name), why))?;
            bargs[k] = Some(v);
            adjoint_at[j] = Some((v, elem));
        }
    }
    if let Some(k) = sig.result {
        bargs[k] = Some(Value::Real(result_y.unwrap_or(0.0)));
    }
    let bargs: Vec<Value<f64>> = bargs
        .into_iter()
        .map(|v| {
            v.ok_or_else(|| {
                DotCheckError::Signature(format!("'{bname}' has an unmatched parameter"))
            })
        })
        .collect::<Result<_, _>>()?;
    match split_pair {
        None => {
            am.call(&bname, bargs)
                .map_err(|e| adjoint_err(call_error(&bname, e, &am)))?;
        }
        Some((fwd, bwd)) => {
            // `f_bwd` takes f_b's parameters in f_b's order, `f_fwd` those
            // of them it needs (`adjoint/fwd-adjoint-pointers`), by name.
            let bwd = linked.proc(bwd);
            if bwd.params.len() != bargs.len() {
                return Err(DotCheckError::Signature(format!(
                    "'{bname}' has {} parameters, '{}' {}",
                    bwd.params.len(),
                    linked.proc(bproc).name,
                    bargs.len()
                )));
            }
            let fp = linked.proc(fwd);
            let fname = fp.name.clone();
            let mut fargs = Vec::with_capacity(fp.params.len());
            for s in &fp.params {
                let name = &linked.sym(*s).name;
                let k = bwd
                    .params
                    .iter()
                    .position(|b| linked.sym(*b).name == *name)
                    .ok_or_else(|| {
                        DotCheckError::Signature(format!(
                            "parameter '{name}' of '{fname}' is not one of '{bname}'"
                        ))
                    })?;
                fargs.push(bargs[k]);
            }
            let fwd_err = |(error, span): (InterpRunError, Span)| DotCheckError::Adjoint {
                proc_name: fname.clone(),
                error,
                span,
            };
            let result = am
                .call(&fname, fargs)
                .map_err(|e| fwd_err(call_error(&fname, e, &am)))?;
            let differs = |want: f64, got: f64| relative_error(want, got) > 1e-12;
            if let Some(want) = primal_result {
                let got = result.as_real().unwrap_or(f64::NAN);
                if differs(want, got) {
                    return Err(unsupported(
                        format!("'{fname}'"),
                        format!("it returned {got}, the original {want}"),
                    ));
                }
            }
            for (j, shape, want) in &primal_results {
                let s = linked.sym(bp.params[sig.primal[*j]]);
                let elem = elem_type(&linked, &s.ty.ty).ok_or_else(|| {
                    unsupported(format!("parameter '{}'", s.name), "not a pointer")
                })?;
                let got = read_dep(
                    &am,
                    &linked,
                    shape,
                    &Loc::Buffer(bargs[sig.primal[*j]], elem),
                    &s.name,
                )
                .map_err(|why| unsupported(format!("dependent '{}'", s.name), why))?;
                for ((label, w), (_, g)) in want.iter().zip(&got) {
                    let g = g.unwrap_or(f64::NAN);
                    if differs(*w, g) {
                        return Err(unsupported(
                            format!("'{fname}'"),
                            format!("it left {label} = {g}, the original {w}"),
                        ));
                    }
                }
            }
            am.call(&bname, bargs)
                .map_err(|e| adjoint_err(call_error(&bname, e, &am)))?;
        }
    }
    let steps_adjoint = am.steps();
    let stack_left = am.stack_depth();

    // Read x̄, pairing it with ẋ.
    let mut independents = Vec::new();
    for (j, &sym) in proc.params.iter().enumerate() {
        if !head.independents.contains(&HeadVar::Param(sym)) {
            continue;
        }
        let s = original.sym(sym);
        let mut xdots = Vec::new();
        xargs[j].directions(&s.name, &mut xdots);
        let mut xbars = Vec::new();
        match (&xargs[j], &adjoint_at[j]) {
            (_, None) => without_adjoint.push(s.name.clone()),
            (Arg::Value(o), Some((at, elem))) => load(
                &am,
                &linked,
                Some((*at, elem.clone())),
                o,
                s.name.clone(),
                &mut xbars,
            )
            .map_err(|why| unsupported(format!("adjoint of '{}'", s.name), why))?,
            (Arg::Buffer(elems), Some((at, elem))) => {
                xbars = read_dep(
                    &am,
                    &linked,
                    &Shape::Buffer(elems.clone()),
                    &Loc::Buffer(*at, elem.clone()),
                    &s.name,
                )
                .map_err(|why| unsupported(format!("adjoint of '{}'", s.name), why))?;
            }
        }
        pair(&s.name, xdots, xbars, &mut independents)?;
    }
    for (g, obj) in &global_x {
        let s = original.sym(*g);
        let mut xdots = Vec::new();
        obj.directions(s.name.clone(), &mut xdots);
        let mut xbars = Vec::new();
        match adjoint_global(original, adjoint_out, *g) {
            Some(gb) => {
                let bs = linked.sym(gb);
                let at = am.global_ptr(&bs.name).map_err(|e| {
                    adjoint_err(interp_error(format!("while reading '{}'", bs.name), e))
                })?;
                load(
                    &am,
                    &linked,
                    Some((at, bs.ty.clone())),
                    obj,
                    s.name.clone(),
                    &mut xbars,
                )
                .map_err(|why| unsupported(format!("adjoint of '{}'", s.name), why))?;
            }
            None => without_adjoint.push(s.name.clone()),
        }
        pair(&s.name, xdots, xbars, &mut independents)?;
    }

    let weighted_tangent: f64 = dependents.iter().map(|(_, w, v)| w * v).sum();
    let weighted_gradient: f64 = independents.iter().map(|(_, d, b)| d * b).sum();
    let scale = f64::max(
        dependents.iter().map(|(_, w, v)| (w * v).abs()).sum(),
        independents.iter().map(|(_, d, b)| (d * b).abs()).sum(),
    );
    let plain_error = relative_error(weighted_tangent, weighted_gradient);
    let error = if plain_error == 0.0 || plain_error.is_infinite() {
        plain_error
    } else {
        (weighted_tangent - weighted_gradient).abs()
            / scale
                .max(weighted_tangent.abs())
                .max(weighted_gradient.abs())
                .max(1e-300)
    };
    Ok(DotComparison {
        adjoint_proc: bname,
        independents,
        dependents,
        weighted_tangent,
        weighted_gradient,
        scale,
        error,
        plain_error,
        without_adjoint,
        steps_original,
        steps_adjoint,
        stack_left,
    })
}

/// The adjoint global `gb` of `g`: a global of the adjoint program that
/// the original does not have, named `{g}b` or, after a clash, `{g}b0`,
/// ... Found among the program's symbols, whether or not the global scope
/// lists it (the adjoint mode adds `gb` symbols without registering them
/// there).
fn adjoint_global(original: &Program, out: &Program, g: SymId) -> Option<SymId> {
    added_global(original, out, g, "b").or_else(|| {
        let base = format!("{}b", original.sym(g).name);
        std::iter::once(base.clone())
            .chain((0..100).map(|k| format!("{base}{k}")))
            .filter(|n| original.global_by_name(n).is_none())
            .find_map(|n| {
                out.symbols
                    .iter()
                    .position(|s| s.kind == SymKind::Global && s.name == n)
                    .map(|i| SymId(i as u32))
            })
    })
}

/// The adjoint program linked with the original's global definitions
/// (as for the tangent check), with every global symbol listed in the
/// global scope so that the machine finds it by name.
fn link_adjoint(original: &Program, out: &Program) -> Program {
    let mut linked = link(original, out);
    let scope = linked.global_scope.index();
    for (i, s) in out.symbols.iter().enumerate() {
        if s.kind == SymKind::Global && !linked.scopes[scope].vars.contains_key(&s.name) {
            linked.scopes[scope]
                .vars
                .insert(s.name.clone(), SymId(i as u32));
        }
    }
    linked
}

/// Is the argument a buffer behind a pointer (whose elements the callee
/// may change)?
fn by_pointer(arg: &ArgValue) -> bool {
    matches!(
        arg,
        ArgValue::RealArray(_) | ArgValue::IntArray(_) | ArgValue::StructArray(_)
    )
}

fn param_index(params: &[SymId], sym: SymId) -> Result<usize, DotCheckError> {
    params
        .iter()
        .position(|&s| s == sym)
        .ok_or_else(|| unsupported("head variable", "a parameter the head does not have"))
}

/// Appends (label, ẋ, x̄) for every element; x̄ is 0 where `xbars` is
/// empty (no adjoint).
fn pair(
    name: &str,
    xdots: Vec<(String, f64)>,
    xbars: Vec<(String, Option<f64>)>,
    out: &mut Vec<(String, f64, f64)>,
) -> Result<(), DotCheckError> {
    if xbars.is_empty() {
        out.extend(xdots.into_iter().map(|(l, d)| (l, d, 0.0)));
        return Ok(());
    }
    if xbars.len() != xdots.len() {
        return Err(unsupported(
            format!("independent '{name}'"),
            "its direction and its adjoint have different numbers of elements",
        ));
    }
    for ((l, d), (_, b)) in xdots.into_iter().zip(xbars) {
        out.push((l, d, b.unwrap_or(0.0)));
    }
    Ok(())
}

/// Where the arguments of `f_b` go (CONTRACT §3).
struct Signature {
    /// Per original parameter: its index in `f_b`'s parameters.
    primal: Vec<usize>,
    /// Per original parameter: the index of its adjoint parameter.
    adjoint: Vec<Option<usize>>,
    /// The extra last by-value parameter `fb`, the adjoint of the result.
    result: Option<usize>,
}

/// Matches `f_b`'s parameters with `f`'s (CONTRACT §3): the primal
/// parameters keep their names and order; an adjoint parameter, always a
/// pointer, comes right after its primal; the adjoint of a real result
/// comes last, a real by value.
fn match_signature(
    original: &Program,
    out: &Program,
    head: ProcId,
    bproc: ProcId,
) -> Result<Signature, DotCheckError> {
    let orig = original.proc(head);
    let bp = out.proc(bproc);
    let oname = |s: SymId| original.sym(s).name.as_str();
    let bname = |s: SymId| out.sym(s).name.as_str();
    let bad = |why: String| {
        let list = |p: &[SymId], prog: &Program| {
            p.iter()
                .map(|&s| prog.sym(s).name.clone())
                .collect::<Vec<_>>()
                .join(", ")
        };
        DotCheckError::Signature(format!(
            "'{}({})' against '{}({})': {why}",
            bp.name,
            list(&bp.params, out),
            orig.name,
            list(&orig.params, original),
        ))
    };
    let returns_real = matches!(original.resolve(&orig.ret.ty), Type::Real(_));
    let is_result =
        |s: SymId| returns_real && matches!(out.resolve(&out.sym(s).ty.ty), Type::Real(_));
    let is_pointer = |s: SymId| matches!(out.resolve(&out.sym(s).ty.ty), Type::Pointer(_));
    if !matches!(out.resolve(&bp.ret.ty), Type::Void) {
        return Err(bad("it does not return void".into()));
    }
    let mut primal = Vec::with_capacity(orig.params.len());
    let mut adjoint = Vec::with_capacity(orig.params.len());
    let mut result = None;
    let mut i = 0;
    // The parameters after the last primal one.
    let mut tail = |start: usize, extras: &[SymId]| -> Result<Option<usize>, DotCheckError> {
        match extras {
            [] => Ok(None),
            [r] if is_result(*r) => {
                result = Some(start);
                Ok(None)
            }
            [a] if is_pointer(*a) => Ok(Some(start)),
            [a, r] if is_pointer(*a) && is_result(*r) => {
                result = Some(start + 1);
                Ok(Some(start))
            }
            _ => Err(bad(format!(
                "{} unexpected parameters at the end",
                extras.len()
            ))),
        }
    };
    if orig.params.is_empty() {
        if tail(0, &bp.params)?.is_some() {
            return Err(bad("an adjoint parameter without a primal".into()));
        }
        return Ok(Signature {
            primal,
            adjoint,
            result,
        });
    }
    for (j, &s) in orig.params.iter().enumerate() {
        if bp.params.get(i).map(|&d| bname(d)) != Some(oname(s)) {
            return Err(bad(format!(
                "parameter {} of '{}' should be '{}'",
                i + 1,
                bp.name,
                oname(s)
            )));
        }
        primal.push(i);
        i += 1;
        let next = orig.params.get(j + 1).map(|&n| oname(n));
        let start = i;
        while i < bp.params.len() && Some(bname(bp.params[i])) != next {
            i += 1;
        }
        let extras = &bp.params[start..i];
        let a = if j + 1 == orig.params.len() {
            tail(start, extras)?
        } else {
            match extras {
                [] => None,
                [a] if is_pointer(*a) => Some(start),
                _ => {
                    return Err(bad(format!(
                        "{} parameters follow '{}' (expected at most one pointer)",
                        extras.len(),
                        oname(s)
                    )));
                }
            }
        };
        if let Some(k) = a {
            check_adjoint_type(original, s, out, bp.params[k]).map_err(&bad)?;
        }
        adjoint.push(a);
    }
    Ok(Signature {
        primal,
        adjoint,
        result,
    })
}

/// The adjoint of a real by value is a pointer to a real; that of a
/// pointer, a pointer; that of a struct by value, a pointer to a struct.
fn check_adjoint_type(
    original: &Program,
    primal: SymId,
    out: &Program,
    adj: SymId,
) -> Result<(), String> {
    let p = original.sym(primal);
    let a = out.sym(adj);
    let pointee = match out.resolve(&a.ty.ty) {
        Type::Pointer(t) => out.resolve(&t.ty).clone(),
        _ => {
            return Err(format!(
                "adjoint '{}' of '{}' is not a pointer",
                a.name, p.name
            ));
        }
    };
    let ok = match original.resolve(&p.ty.ty) {
        Type::Real(_) => matches!(pointee, Type::Real(_)),
        Type::Struct(_) => matches!(pointee, Type::Struct(_)),
        Type::Pointer(_) | Type::Array { .. } => true,
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "'{}' follows '{}' as its adjoint, but its type does not fit",
            a.name, p.name
        ))
    }
}

fn unsupported(what: impl Into<String>, why: impl Into<String>) -> DotCheckError {
    DotCheckError::Unsupported {
        what: what.into(),
        why: why.into(),
    }
}
