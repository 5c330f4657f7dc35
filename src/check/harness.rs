//! The machinery that the tangent check ([`super::tangent`]) and the
//! adjoint check ([`super::adjoint`]) share: matching a derivative
//! procedure's signature with the original's (CONTRACT §3, both columns),
//! the driver's plan (the storage of the inputs, the elements of the
//! independents and dependents, the calls), the random points, the driver's
//! C text, building with `cc`, running, and reading the driver's output.
//!
//! The method and the driver's output format are documented in
//! [`super::tangent`] (divided differences, R_t) and [`super::adjoint`]
//! (dot-product test, R_a).

use super::domain::{Domain, Entry, Number, ValueSpec};
use super::driver::{
    ArgValue, DriverError, FieldValue, Inputs, StructValue, c_type, compute_inputs, flat_elem,
    format_hex_float, int_literal, pass_flat,
};
use super::rng::SplitMix64;
use super::timing::{self, Timing};
use crate::analysis::head::{Head, HeadVar};
use crate::back::print_c;
use crate::front::source::SourceMap;
use crate::front::{self, FrontOptions, diag};
use crate::il::{
    Comments, Declarator, Item, ItemKind, ProcId, Procedure, Program, RealKind, Storage, StructId,
    SymId, Type,
};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The step sizes of the divided differences, relative to the inputs'
/// magnitudes (the direction is scaled by them, see the module
/// documentation of [`super::tangent`]), for double-precision code.
pub const STEPS: [f64; 6] = [1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8];

/// The steps for single-precision code: the round-off of a float
/// difference quotient is about ε_f/h with ε_f ≈ 6e-8, the truncation
/// error about h², so the best step is near ε_f^(1/3) ≈ 4e-3 (both ~1e-5),
/// where [`STEPS`]' largest, 1e-3, already loses a digit to round-off and
/// its smallest ones give none. Kept at 3e-2 and below so that a perturbed
/// input stays within 3% of its value (and of the domain). The last two,
/// 1e-5 and 1e-6, are for a dependent no float rounding reaches (the
/// `float` is a cast in another output): it agrees best at a double
/// precision step, where the large ones may cross a branch of its code.
pub const SINGLE_STEPS: [f64; 8] = [3e-2, 1e-2, 3e-3, 1e-3, 3e-4, 1e-4, 1e-5, 1e-6];

/// An element's error is relative to at least this share of the largest
/// element of its dependent at the same point.
pub const FLOOR_FRACTION: f64 = 1e-6;

/// In single precision, an element's error is also relative to at least
/// this share of the element's value. `f`'s outputs are rounded to float,
/// so a difference quotient carries round-off of about ε_f·|y|/h, 2e-5 of
/// the value |y| at the best steps (ε_f ≈ 6e-8, h ≈ 3e-3), whatever the
/// size of the derivative: a tangent element much smaller than its value
/// (a normalised vector's, say) cannot be told apart to 3 digits from its
/// difference quotient below ~2e-2 of the value. (In double precision the
/// same round-off is ~1e-11 of the value and no such floor is used.)
pub const SINGLE_VALUE_FLOOR: f64 = 3e-2;

/// The arithmetic of the code under check, which decides the divided
/// differences' steps and what round-off they carry.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Precision {
    /// Only `double` (and integers).
    #[default]
    Double,
    /// Some value is a `float`: results are rounded to about 7 digits.
    Single,
}

impl Precision {
    /// The precision of a head: single when the procedure or one it calls
    /// (transitively) has a parameter, a result or a local of type `float`
    /// (or a pointer to or an array of floats), or evaluates a `float`
    /// expression (a global, a struct field, a cast; not a `float`
    /// literal, a constant).
    pub fn of(program: &Program, proc: ProcId) -> Precision {
        fn is_float(program: &Program, t: &Type) -> bool {
            match program.resolve(t) {
                Type::Real(RealKind::Float) => true,
                Type::Pointer(e) | Type::Array { elem: e, .. } => is_float(program, &e.ty),
                // A struct's float fields show in the expressions reading
                // them.
                _ => false,
            }
        }
        let graph = program.call_graph();
        let mut seen = vec![proc];
        let mut i = 0;
        while i < seen.len() {
            for &c in &graph[seen[i].index()] {
                if !seen.contains(&c) {
                    seen.push(c);
                }
            }
            i += 1;
        }
        let float_sym = |s: SymId| is_float(program, &program.sym(s).ty.ty);
        let single = seen.iter().any(|&p| {
            let p = program.proc(p);
            if p.params.iter().any(|&s| float_sym(s)) || is_float(program, &p.ret.ty) {
                return true;
            }
            let Some(body) = &p.body else {
                return false;
            };
            let mut found = false;
            crate::il::visit_stmts(&body.stmts, &mut |st| {
                if found {
                    return;
                }
                match &st.kind {
                    crate::il::StmtKind::Decl { vars, .. } => {
                        found = vars.iter().any(|d| float_sym(d.sym));
                    }
                    // A `float` literal (`1.0F`) is a constant: it
                    // rounds no value the inputs vary.
                    kind => for_each_expr(kind, &mut |e| {
                        crate::il::visit_expr(e, &mut |x| {
                            found |= !matches!(x.kind, crate::il::ExprKind::RealConst { .. })
                                && matches!(program.resolve(&x.ty.ty), Type::Real(RealKind::Float));
                        })
                    }),
                }
            });
            found
        });
        if single {
            Precision::Single
        } else {
            Precision::Double
        }
    }

    /// The steps of the divided differences.
    pub fn steps(self) -> &'static [f64] {
        match self {
            Precision::Double => &STEPS,
            Precision::Single => &SINGLE_STEPS,
        }
    }

    /// See [`SINGLE_VALUE_FLOOR`]; 0 in double precision.
    pub fn value_floor(self) -> f64 {
        match self {
            Precision::Double => 0.0,
            Precision::Single => SINGLE_VALUE_FLOOR,
        }
    }

    /// The digits of agreement with divided differences a correct
    /// derivative reaches with margin: 6 in double precision (see
    /// [`super::tangent`]), 3 in single (the best step leaves ~1e-5 of
    /// round-off and truncation on well-conditioned elements, ~1e-4 on
    /// those whose tangent is smaller than their value).
    pub fn min_digits(self) -> f64 {
        match self {
            Precision::Double => 6.0,
            Precision::Single => 3.0,
        }
    }

    /// A note for the reports, when the precision changes the method.
    pub(crate) fn note(self) -> Option<String> {
        (self == Precision::Single).then(|| {
            format!(
                "single precision: divided differences with steps {:.0e} to {:.0e}, each element's error relative to at least {:.0e} of its value",
                SINGLE_STEPS[0],
                SINGLE_STEPS[SINGLE_STEPS.len() - 1],
                SINGLE_VALUE_FLOOR
            )
        })
    }
}

/// Calls `f` on the expressions a statement holds directly (not those of
/// nested statements).
fn for_each_expr(kind: &crate::il::StmtKind, f: &mut dyn FnMut(&crate::il::Expr)) {
    use crate::il::{LoopHeader, StmtKind};
    match kind {
        StmtKind::Assign { lhs, rhs, .. } => {
            f(lhs);
            f(rhs);
        }
        StmtKind::Call { result, args, .. } => {
            result.iter().for_each(&mut *f);
            args.iter().for_each(f);
        }
        StmtKind::Alloc { target, count, .. } => {
            f(target);
            f(count);
        }
        StmtKind::Free { ptr } => f(ptr),
        StmtKind::If { cond, .. } => f(cond),
        StmtKind::Loop { header, .. } => match header {
            LoopHeader::For { cond, .. } => cond.iter().for_each(f),
            LoopHeader::While { cond } | LoopHeader::DoWhile { cond } => f(cond),
        },
        StmtKind::Switch { selector, .. } => f(selector),
        StmtKind::Return(e) => e.iter().for_each(f),
        StmtKind::Discard(e) => f(e),
        _ => {}
    }
}

/// Digits reported for an exact agreement: a double has fewer.
pub const MAX_DIGITS: f64 = 16.0;

pub(crate) fn seconds(s: f64) -> String {
    if s < 1e-6 {
        format!("{:.1} ns", s * 1e9)
    } else if s < 1e-3 {
        format!("{:.2} us", s * 1e6)
    } else if s < 1.0 {
        format!("{:.2} ms", s * 1e3)
    } else {
        format!("{s:.2} s")
    }
}

/// Why a tangent check could not be carried out (a failed comparison is
/// not an error: it is a [`TangentCheck`] with `passed == false`).
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// The domain does not fit the head, or its parameters cannot be filled.
    #[error("{0}")]
    Inputs(#[from] DriverError),
    #[error("the tangent file aioli wrote does not pass its own front end (an aioli bug):\n{0}")]
    TangentFile(String),
    #[error("the adjoint file aioli wrote does not pass its own front end (an aioli bug):\n{0}")]
    AdjointFile(String),
    #[error("tangent signature: {0}")]
    Signature(String),
    #[error("the tangent check cannot handle this: {0}")]
    Unsupported(String),
    #[error("{what}: {error}")]
    Io { what: String, error: String },
    #[error("compiling {what} failed:\n$ {command}\n{stderr}")]
    Compile {
        what: String,
        command: String,
        stderr: String,
    },
    #[error("the check driver {status}\n{stderr}")]
    Run { status: String, stderr: String },
    #[error("unexpected output from the check driver: {0}")]
    Output(String),
}

pub(crate) fn io_error(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> CheckError {
    let what = what.into();
    move |e| CheckError::Io {
        what,
        error: e.to_string(),
    }
}

// ---------------------------------------------------------------------------
// Signatures
// ---------------------------------------------------------------------------

/// Which derivative procedure is read: CONTRACT §2-3 name the derivatives
/// and spell their types differently in each mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavor {
    /// `f_d`, derivatives `xd`, structs `T_d`, a by-value real's
    /// derivative by value.
    Tangent,
    /// `f_b`, adjoints `xb`, structs `T_b`, a by-value real's or struct's
    /// adjoint through a pointer, a real result's adjoint as a last
    /// by-value parameter `fb`.
    Adjoint,
}

impl Flavor {
    /// Suffix of a derivative variable's name (`xd`, `xb`).
    pub fn var_suffix(self) -> &'static str {
        match self {
            Flavor::Tangent => "d",
            Flavor::Adjoint => "b",
        }
    }

    /// Suffix of a derivative procedure's or struct's name (`f_d`, `T_b`).
    pub fn type_suffix(self) -> &'static str {
        match self {
            Flavor::Tangent => "_d",
            Flavor::Adjoint => "_b",
        }
    }

    /// The derivative file, in messages.
    pub fn file(self) -> &'static str {
        match self {
            Flavor::Tangent => "the tangent file",
            Flavor::Adjoint => "the adjoint file",
        }
    }

    /// Prefixes of the driver's derivative buffers and of their templates.
    fn buffer_prefix(self) -> (&'static str, &'static str) {
        match self {
            Flavor::Tangent => ("d", "z"),
            Flavor::Adjoint => ("b", "zb"),
        }
    }
}

/// What one parameter of `f_d` is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TangentParam {
    /// Parameter `i` of `f`.
    Primal(usize),
    /// The derivative of parameter `i` of `f`.
    Derivative(usize),
    /// The extra last parameter through which `f`'s result comes back.
    PrimalResult,
}

/// What `f_d` returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TangentReturn {
    /// `f` returns nothing, or something `f_d` ignores.
    Nothing,
    /// `f`'s result itself: its derivative is not computed.
    Primal,
    /// The derivative of `f`'s result, whose primal comes back through
    /// [`TangentParam::PrimalResult`].
    Derivative,
}

/// How `f_d`'s parameters correspond to `f`'s.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TangentSignature {
    /// `f_d`'s name.
    pub name: String,
    /// One entry per parameter of `f_d`, in order.
    pub params: Vec<TangentParam>,
    pub returns: TangentReturn,
}

impl TangentSignature {
    /// The position in `f_d` of the derivative of `f`'s parameter `i`.
    pub fn derivative_of(&self, i: usize) -> Option<usize> {
        self.params
            .iter()
            .position(|p| *p == TangentParam::Derivative(i))
    }

    /// The position in `f_d` of `f`'s parameter `i`.
    pub fn primal_of(&self, i: usize) -> Option<usize> {
        self.params
            .iter()
            .position(|p| *p == TangentParam::Primal(i))
    }
}

/// `base + suffix`, or that followed by digits (CONTRACT §2: a clash
/// appends `0`, `1`, …).
pub(crate) fn is_suffixed(base: &str, suffix: &str, candidate: &str) -> bool {
    candidate
        .strip_prefix(base)
        .and_then(|r| r.strip_prefix(suffix))
        .is_some_and(|digits| digits.chars().all(|c| c.is_ascii_digit()))
}

/// The names a struct goes by: its tag and the typedefs of it.
pub(crate) fn struct_names(program: &Program, sid: StructId) -> Vec<String> {
    let mut names = Vec::new();
    if let Some(tag) = program.structs.get(sid.index()).and_then(|d| d.tag.clone()) {
        names.push(tag);
    }
    for td in &program.typedefs {
        if matches!(program.resolve(&td.ty.ty), Type::Struct(s) if *s == sid) {
            names.push(td.name.clone());
        }
    }
    names
}

/// A pointer's or an array's element type and declared length.
pub(crate) fn sequence_elem(ty: &Type) -> Option<(&Type, Option<u64>)> {
    match ty {
        Type::Pointer(q) => Some((&q.ty, None)),
        Type::Array { elem, len } => Some((&elem.ty, len.as_ref().and_then(|l| l.value))),
        _ => None,
    }
}

pub(crate) fn is_pointer(ty: &Type) -> bool {
    matches!(ty, Type::Pointer(_))
}

/// Do two types of two programs denote the same C type? Structs are the
/// same when they share a name. At a parameter's top level (`param`), a
/// pointer and an array are the same (C adjusts the array).
pub(crate) fn same_type(
    a: &Program,
    at: &Type,
    b: &Program,
    bt: &Type,
    param: bool,
    depth: usize,
) -> bool {
    if depth > 16 {
        return false;
    }
    match (a.resolve(at), b.resolve(bt)) {
        (Type::Void, Type::Void) => true,
        (
            Type::Int {
                kind: k1,
                unsigned: u1,
            },
            Type::Int {
                kind: k2,
                unsigned: u2,
            },
        ) => k1 == k2 && u1 == u2,
        (Type::Real(x), Type::Real(y)) => x == y,
        (Type::Struct(s), Type::Struct(t)) => {
            let theirs = struct_names(b, *t);
            struct_names(a, *s).iter().any(|n| theirs.contains(n))
        }
        (Type::Opaque(x), Type::Opaque(y)) => x == y,
        (x, y) => match (sequence_elem(x), sequence_elem(y)) {
            (Some((ex, lx)), Some((ey, ly))) => {
                (param || (lx == ly && is_pointer(x) == is_pointer(y)))
                    && same_type(a, ex, b, ey, false, depth + 1)
            }
            _ => false,
        },
    }
}

/// Is `dt` (in the tangent program `b`) the derivative type of `pt` (in
/// the original `a`), per CONTRACT §2-3: a real of the same precision, a
/// pointer / array of those, struct `T` → `T_d`.
///
/// In adjoint mode (CONTRACT §3, adjoint column), a parameter passed by
/// value (a real, a struct) has its adjoint behind a non-const pointer:
/// `double x` → `double *xb`, `T s` → `T_b *sb`.
pub(crate) fn is_derivative_type(
    flavor: Flavor,
    a: &Program,
    pt: &Type,
    b: &Program,
    dt: &Type,
    param: bool,
    depth: usize,
) -> bool {
    if depth > 16 {
        return false;
    }
    match (a.resolve(pt), b.resolve(dt)) {
        (Type::Real(x), Type::Real(y)) => !(param && flavor == Flavor::Adjoint) && x == y,
        (Type::Struct(s), Type::Struct(t)) => {
            !(param && flavor == Flavor::Adjoint) && is_derivative_struct(flavor, a, *s, b, *t)
        }
        (x @ (Type::Real(_) | Type::Struct(_)), Type::Pointer(q))
            if param && flavor == Flavor::Adjoint =>
        {
            !q.is_const
                && match (x, b.resolve(&q.ty)) {
                    (Type::Real(k), Type::Real(l)) => k == l,
                    (Type::Struct(s), Type::Struct(t)) => {
                        is_derivative_struct(flavor, a, *s, b, *t)
                    }
                    _ => false,
                }
        }
        (x, y) => match (sequence_elem(x), sequence_elem(y)) {
            (Some((ex, lx)), Some((ey, ly))) => {
                (param || (lx == ly && is_pointer(x) == is_pointer(y)))
                    && is_derivative_type(flavor, a, ex, b, ey, false, depth + 1)
            }
            _ => false,
        },
    }
}

/// Is struct `t` named like the derivative of struct `s` (`T` → `T_d`,
/// or `T_d0`… after a clash)?
pub(crate) fn is_derivative_struct(
    flavor: Flavor,
    a: &Program,
    s: StructId,
    b: &Program,
    t: StructId,
) -> bool {
    let theirs = struct_names(b, t);
    struct_names(a, s).iter().any(|n| {
        theirs
            .iter()
            .any(|m| is_suffixed(n, flavor.type_suffix(), m))
    })
}

/// Checks that every field of the derivative struct `t` is the derivative
/// of the field of `s` with the same name, recursively.
pub(crate) fn check_derivative_struct(
    flavor: Flavor,
    a: &Program,
    s: StructId,
    b: &Program,
    t: StructId,
    depth: usize,
) -> Result<(), CheckError> {
    if depth > 8 {
        return Err(CheckError::Unsupported(
            "derivative structs nested too deeply".to_string(),
        ));
    }
    let primal = a.strukt(s);
    let name = |p: &Program, id| struct_names(p, id).first().cloned().unwrap_or_default();
    for g in &b.strukt(t).fields {
        let Some(field) = primal.fields.iter().find(|f| f.name == g.name) else {
            return Err(CheckError::Signature(format!(
                "field '{}' of derivative struct '{}' is not a field of '{}'",
                g.name,
                name(b, t),
                name(a, s)
            )));
        };
        if !is_derivative_type(flavor, a, &field.ty.ty, b, &g.ty.ty, false, 0) {
            return Err(CheckError::Signature(format!(
                "field '{}' of derivative struct '{}' does not have the derivative type of '{}.{}'",
                g.name,
                name(b, t),
                name(a, s),
                field.name
            )));
        }
        if let (Type::Struct(inner), Type::Struct(dinner)) =
            (a.resolve(&field.ty.ty), b.resolve(&g.ty.ty))
        {
            check_derivative_struct(flavor, a, *inner, b, *dinner, depth + 1)?;
        }
    }
    Ok(())
}

/// Finds the tangent procedure of `proc` in the tangent program: `f_d`
/// (or `f_d0`, … after a clash), with a body.
pub fn find_tangent_proc(
    original: &Program,
    proc: ProcId,
    tangent: &Program,
) -> Result<ProcId, CheckError> {
    find_derivative_proc(Flavor::Tangent, original, proc, tangent)
}

/// Finds the adjoint procedure of `proc` in the adjoint program: `f_b`
/// (or `f_b0`, … after a clash), with a body.
pub fn find_adjoint_proc(
    original: &Program,
    proc: ProcId,
    adjoint: &Program,
) -> Result<ProcId, CheckError> {
    find_derivative_proc(Flavor::Adjoint, original, proc, adjoint)
}

pub(crate) fn find_derivative_proc(
    flavor: Flavor,
    original: &Program,
    proc: ProcId,
    tangent: &Program,
) -> Result<ProcId, CheckError> {
    let f = &original.proc(proc).name;
    let suffix = flavor.type_suffix();
    let wanted = format!("{f}{suffix}");
    let candidates: Vec<ProcId> = tangent
        .defined_procs()
        .filter(|(_, p)| is_suffixed(f, suffix, &p.name))
        .map(|(id, _)| id)
        .collect();
    candidates
        .iter()
        .copied()
        .find(|id| tangent.proc(*id).name == wanted)
        .or_else(|| candidates.first().copied())
        .ok_or_else(|| {
            CheckError::Signature(format!(
                "{} defines no '{wanted}' (CONTRACT §2)",
                flavor.file()
            ))
        })
}

/// What `f` returns that can have a derivative.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ResultKind {
    Real(RealKind),
    /// A struct by value: `f_d` returns `T_d` and the primal comes back
    /// through `T *f`; `f_b` takes `T_b fb` by value (CONTRACT §3's rule
    /// for a real result, with the struct's derivative type).
    Struct(StructId),
}

impl ResultKind {
    pub(crate) fn of(program: &Program, proc: ProcId) -> Option<ResultKind> {
        match program.resolve(&program.proc(proc).ret.ty) {
            Type::Real(k) => Some(ResultKind::Real(*k)),
            Type::Struct(s) => Some(ResultKind::Struct(*s)),
            _ => None,
        }
    }

    /// The extra result parameter, for messages: `'double *f'`, `'T *f'`
    /// (tangent), `'double fb'`, `'T_b fb'` (adjoint).
    fn param_text(self, flavor: Flavor, original: &Program, f: &str) -> String {
        let t = match self {
            ResultKind::Real(k) => Type::Real(k).scalar_c_name().unwrap_or_default(),
            ResultKind::Struct(s) => struct_names(original, s)
                .first()
                .cloned()
                .unwrap_or_else(|| "struct".to_string()),
        };
        match (flavor, self) {
            (Flavor::Tangent, _) => format!("'{t} *{f}'"),
            (Flavor::Adjoint, ResultKind::Real(_)) => format!("'{t} {f}b'"),
            (Flavor::Adjoint, ResultKind::Struct(_)) => format!("'{t}_b {f}b'"),
        }
    }
}

pub(crate) struct Matcher<'a> {
    pub(crate) flavor: Flavor,
    pub(crate) original: &'a Program,
    pub(crate) tangent: &'a Program,
    pub(crate) primal: Vec<(&'a str, &'a Type)>,
    pub(crate) tparams: Vec<(&'a str, &'a Type)>,
    pub(crate) result: Option<ResultKind>,
    pub(crate) found: Vec<Vec<TangentParam>>,
}

/// Enough complete matchings to see an ambiguity; more are not looked at.
pub(crate) const MAX_MATCHINGS: usize = 64;

impl Matcher<'_> {
    pub(crate) fn search(&mut self, i: usize, j: usize, acc: &mut Vec<TangentParam>) {
        if self.found.len() >= MAX_MATCHINGS {
            return;
        }
        let (np, nt) = (self.primal.len(), self.tparams.len());
        if i == np {
            if j == nt {
                self.found.push(acc.clone());
            } else if j + 1 == nt && self.is_result_param(self.tparams[j].1) {
                acc.push(TangentParam::PrimalResult);
                self.found.push(acc.clone());
                acc.pop();
            }
            return;
        }
        if j >= nt || nt - j < np - i {
            return;
        }
        if !same_type(
            self.original,
            self.primal[i].1,
            self.tangent,
            self.tparams[j].1,
            true,
            0,
        ) {
            return;
        }
        acc.push(TangentParam::Primal(i));
        if j + 1 < nt
            && is_derivative_type(
                self.flavor,
                self.original,
                self.primal[i].1,
                self.tangent,
                self.tparams[j + 1].1,
                true,
                0,
            )
        {
            acc.push(TangentParam::Derivative(i));
            self.search(i + 1, j + 2, acc);
            acc.pop();
        }
        self.search(i + 1, j + 1, acc);
        acc.pop();
    }

    /// `double *f` (tangent): a pointer to (non-const) reals of the
    /// result's precision; `double fb` (adjoint): a real of the result's
    /// precision, by value. For a struct result `T`: `T *f`, `T_b fb`.
    pub(crate) fn is_result_param(&self, ty: &Type) -> bool {
        let (a, b) = (self.original, self.tangent);
        match (self.result, self.flavor) {
            (None, _) => false,
            (Some(ResultKind::Real(kind)), Flavor::Adjoint) => {
                matches!(b.resolve(ty), Type::Real(k) if *k == kind)
            }
            (Some(ResultKind::Struct(s)), Flavor::Adjoint) => {
                matches!(b.resolve(ty), Type::Struct(t) if is_derivative_struct(Flavor::Adjoint, a, s, b, *t))
            }
            (Some(result), Flavor::Tangent) => match b.resolve(ty) {
                Type::Pointer(q) if !q.is_const => match (result, b.resolve(&q.ty)) {
                    (ResultKind::Real(kind), Type::Real(k)) => *k == kind,
                    (ResultKind::Struct(s), Type::Struct(_)) => {
                        same_type(a, &Type::Struct(s), b, &q.ty, false, 0)
                    }
                    _ => false,
                },
                _ => false,
            },
        }
    }

    /// How well the names follow CONTRACT §2 (primal names kept,
    /// derivatives `xd`, the result parameter named like the function).
    pub(crate) fn score(&self, m: &[TangentParam], f: &str) -> usize {
        m.iter()
            .enumerate()
            .map(|(j, p)| {
                let name = self.tparams[j].0;
                match *p {
                    TangentParam::Primal(i) if name == self.primal[i].0 => 2,
                    TangentParam::Derivative(i)
                        if is_suffixed(self.primal[i].0, self.flavor.var_suffix(), name) =>
                    {
                        2
                    }
                    TangentParam::PrimalResult
                        if is_suffixed(
                            f,
                            match self.flavor {
                                Flavor::Tangent => "",
                                Flavor::Adjoint => "b",
                            },
                            name,
                        ) =>
                    {
                        1
                    }
                    _ => 0,
                }
            })
            .sum()
    }
}

pub(crate) fn describe_params(program: &Program, proc: ProcId) -> String {
    let p = program.proc(proc);
    let names: Vec<&str> = p
        .params
        .iter()
        .map(|s| program.sym(*s).name.as_str())
        .collect();
    format!("{}({})", p.name, names.join(", "))
}

/// Matches the parameters of `tangent_proc` (in the tangent program) with
/// those of `proc` (in the original) per CONTRACT §3: each parameter of
/// `f`, in order and with the same type, optionally followed by a
/// parameter of its derivative type, then, when `f` returns a real, an
/// optional last `double *f`, with which `f_d` returns the result's
/// derivative. A struct result `T` extends the rule with its derivative
/// type: an optional last `T *f`, with which `f_d` returns `T_d`. When
/// several matchings fit the types (two reals in a row: `double x, double
/// y` may be `x, xd` or `x, y`), the one whose names follow CONTRACT §2
/// wins; a remaining tie is an error.
pub fn match_signature(
    original: &Program,
    proc: ProcId,
    tangent: &Program,
    tangent_proc: ProcId,
) -> Result<TangentSignature, CheckError> {
    let f = original.proc(proc);
    let fd = tangent.proc(tangent_proc);
    let result = ResultKind::of(original, proc);
    let params = match_params(Flavor::Tangent, original, proc, tangent, tangent_proc)?;
    let returns = if params.contains(&TangentParam::PrimalResult) {
        let derivative = match (result, tangent.resolve(&fd.ret.ty)) {
            (Some(ResultKind::Real(kind)), Type::Real(k)) => *k == kind,
            (Some(ResultKind::Struct(s)), Type::Struct(t))
                if is_derivative_struct(Flavor::Tangent, original, s, tangent, *t) =>
            {
                check_derivative_struct(Flavor::Tangent, original, s, tangent, *t, 0)?;
                true
            }
            _ => false,
        };
        if !derivative {
            let last = fd.params.last().map(|s| tangent.sym(*s).name.as_str());
            return Err(CheckError::Signature(format!(
                "'{}' has the extra result parameter '{}', so it must return the derivative of '{}''s result ({})",
                fd.name,
                last.unwrap_or(""),
                f.name,
                match result {
                    Some(ResultKind::Struct(_)) => "its struct's derivative type, T_d for T",
                    _ => "a real",
                }
            )));
        }
        TangentReturn::Derivative
    } else if matches!(original.resolve(&f.ret.ty), Type::Void) {
        TangentReturn::Nothing
    } else if same_type(original, &f.ret.ty, tangent, &fd.ret.ty, false, 0) {
        if result.is_some() {
            TangentReturn::Primal
        } else {
            TangentReturn::Nothing
        }
    } else if matches!(tangent.resolve(&fd.ret.ty), Type::Void) && result.is_none() {
        TangentReturn::Nothing
    } else {
        return Err(CheckError::Signature(format!(
            "'{}' returns neither what '{}' returns nor, with an extra last parameter {}, its derivative",
            fd.name,
            f.name,
            result
                .unwrap_or(ResultKind::Real(RealKind::Double))
                .param_text(Flavor::Tangent, original, &f.name)
        )));
    };
    Ok(TangentSignature {
        name: fd.name.clone(),
        params,
        returns,
    })
}

/// What one parameter of `f_b` is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AdjointParam {
    /// Parameter `i` of `f`.
    Primal(usize),
    /// The adjoint of parameter `i` of `f` (behind a pointer).
    Adjoint(usize),
    /// The extra last parameter `double fb`: the adjoint of `f`'s result.
    ResultAdjoint,
}

/// How `f_b`'s parameters correspond to `f`'s (`f_b` returns nothing).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdjointSignature {
    /// `f_b`'s name.
    pub name: String,
    /// One entry per parameter of `f_b`, in order.
    pub params: Vec<AdjointParam>,
}

impl AdjointSignature {
    /// The position in `f_b` of the adjoint of `f`'s parameter `i`.
    pub fn adjoint_of(&self, i: usize) -> Option<usize> {
        self.params
            .iter()
            .position(|p| *p == AdjointParam::Adjoint(i))
    }

    /// The same matching in the tangent's terms, which the driver's plan
    /// reads (`PrimalResult` standing for `fb`).
    pub(crate) fn as_plan_signature(&self) -> TangentSignature {
        TangentSignature {
            name: self.name.clone(),
            params: self
                .params
                .iter()
                .map(|p| match *p {
                    AdjointParam::Primal(i) => TangentParam::Primal(i),
                    AdjointParam::Adjoint(i) => TangentParam::Derivative(i),
                    AdjointParam::ResultAdjoint => TangentParam::PrimalResult,
                })
                .collect(),
            returns: TangentReturn::Nothing,
        }
    }
}

/// Matches the parameters of `adjoint_proc` (in the adjoint program) with
/// those of `proc` (in the original) per CONTRACT §3's adjoint column: each
/// parameter of `f`, in order and with the same type, optionally followed
/// by its adjoint (`double x` → `double *xb`, `double *x` → `double *xb`,
/// `T *p` → `T_b *pb`, `T s` → `T_b *sb`), then, when `f` returns a real,
/// an optional last `double fb` (a struct `T`: `T_b fb`, by value as
/// well); `f_b` returns void. Ambiguities are settled by names as in
/// [`match_signature`].
pub fn match_adjoint_signature(
    original: &Program,
    proc: ProcId,
    adjoint: &Program,
    adjoint_proc: ProcId,
) -> Result<AdjointSignature, CheckError> {
    let fb = adjoint.proc(adjoint_proc);
    let params = match_params(Flavor::Adjoint, original, proc, adjoint, adjoint_proc)?;
    if !matches!(adjoint.resolve(&fb.ret.ty), Type::Void) {
        return Err(CheckError::Signature(format!(
            "'{}' must return void (CONTRACT §3: a real result's adjoint is the extra last parameter 'double {}b', a struct result's 'T_b {}b')",
            fb.name,
            original.proc(proc).name,
            original.proc(proc).name
        )));
    }
    Ok(AdjointSignature {
        name: fb.name.clone(),
        params: params
            .into_iter()
            .map(|p| match p {
                TangentParam::Primal(i) => AdjointParam::Primal(i),
                TangentParam::Derivative(i) => AdjointParam::Adjoint(i),
                TangentParam::PrimalResult => AdjointParam::ResultAdjoint,
            })
            .collect(),
    })
}

/// The matching of CONTRACT §3 (either column) shared by
/// [`match_signature`] and [`match_adjoint_signature`]; `TangentParam::
/// PrimalResult` stands for the extra result parameter of the flavor.
/// When several matchings fit the types, the one whose names follow
/// CONTRACT §2 wins; a remaining tie is an error.
pub(crate) fn match_params(
    flavor: Flavor,
    original: &Program,
    proc: ProcId,
    tangent: &Program,
    tangent_proc: ProcId,
) -> Result<Vec<TangentParam>, CheckError> {
    let f = original.proc(proc);
    let fd = tangent.proc(tangent_proc);
    let params = |p: &'_ Program, ids: &[SymId]| -> Vec<(String, Type)> {
        ids.iter()
            .map(|s| (p.sym(*s).name.clone(), p.sym(*s).ty.ty.clone()))
            .collect()
    };
    let primal = params(original, &f.params);
    let tparams = params(tangent, &fd.params);
    let result = ResultKind::of(original, proc);
    let mut m = Matcher {
        flavor,
        original,
        tangent,
        primal: primal.iter().map(|(n, t)| (n.as_str(), t)).collect(),
        tparams: tparams.iter().map(|(n, t)| (n.as_str(), t)).collect(),
        result,
        found: Vec::new(),
    };
    m.search(0, 0, &mut Vec::new());
    let mismatch = || {
        let what = match flavor {
            Flavor::Tangent => "derivative",
            Flavor::Adjoint => "adjoint (behind a pointer for a parameter passed by value)",
        };
        let tail = match result {
            Some(r @ ResultKind::Struct(_)) => format!(
                "then {} since '{}' returns a struct",
                r.param_text(flavor, original, &f.name),
                f.name
            ),
            _ => format!(
                "then {} when '{}' returns a real",
                ResultKind::Real(RealKind::Double).param_text(flavor, original, &f.name),
                f.name
            ),
        };
        CheckError::Signature(format!(
            "the parameters of {} do not follow CONTRACT §3 for {}: each parameter of '{}' in order, \
             each optionally followed by its {what}, {tail}",
            describe_params(tangent, tangent_proc),
            describe_params(original, proc),
            f.name,
        ))
    };
    let best = m
        .found
        .iter()
        .map(|c| m.score(c, &f.name))
        .max()
        .ok_or_else(mismatch)?;
    let winners: Vec<&Vec<TangentParam>> = m
        .found
        .iter()
        .filter(|c| m.score(c, &f.name) == best)
        .collect();
    if winners.len() > 1 {
        return Err(CheckError::Signature(format!(
            "the parameters of {} can be read in {} ways against {}; name the derivatives as CONTRACT §2 says",
            describe_params(tangent, tangent_proc),
            winners.len(),
            describe_params(original, proc)
        )));
    }
    Ok(winners[0].clone())
}

// ---------------------------------------------------------------------------
// The driver's plan
// ---------------------------------------------------------------------------

/// A primal object the driver saves once per point and restores before
/// every call.
pub(crate) struct Buffer {
    /// The object the procedures see (a driver array, or a global).
    pub(crate) work: String,
    pub(crate) save: String,
    pub(crate) elem_c: String,
    /// `None` for a scalar global.
    pub(crate) len: Option<usize>,
    /// Declared by the driver (not a global of the original).
    pub(crate) declare: bool,
}

/// A derivative object the driver zeroes before every call of `f_d`.
pub(crate) struct DBuffer {
    pub(crate) name: String,
    pub(crate) elem_c: String,
    pub(crate) len: Option<usize>,
    pub(crate) declare: bool,
    /// A copy holding zeros and the pointers to derivative buffers, for
    /// `T_d` objects with pointer fields (zeroing them byte by byte would
    /// lose the pointers).
    pub(crate) template: Option<String>,
}

/// Real elements with one access pattern: `outer × inner` of them,
/// element (k, j) at the C lvalues `primal`, `save` and `deriv` with `{k}`
/// and `{j}` replaced.
#[derive(Clone, Debug)]
pub(crate) struct Group {
    pub(crate) outer: usize,
    pub(crate) inner: usize,
    pub(crate) primal: String,
    pub(crate) save: String,
    pub(crate) deriv: Option<String>,
    /// The adjoint's lvalue, in an adjoint check (filled in from the
    /// adjoint plan's group of the same elements).
    pub(crate) adj: Option<String>,
    pub(crate) label: String,
}

impl Group {
    pub(crate) fn len(&self) -> usize {
        self.outer * self.inner
    }

    pub(crate) fn label_of(&self, index: usize) -> String {
        let inner = self.inner.max(1);
        self.label
            .replace("{k}", &(index / inner).to_string())
            .replace("{j}", &(index % inner).to_string())
    }
}

/// A template as C, with the loop counters of [`for_each`].
pub(crate) fn c_access(template: &str) -> String {
    template.replace("{k}", "aioli_k").replace("{j}", "aioli_j")
}

/// A head dependent: its elements and where the driver reads them.
pub(crate) struct DepPlan {
    pub(crate) name: String,
    pub(crate) groups: Vec<Group>,
    pub(crate) has_derivative: bool,
}

impl DepPlan {
    pub(crate) fn len(&self) -> usize {
        self.groups.iter().map(Group::len).sum()
    }

    pub(crate) fn label_of(&self, mut index: usize) -> String {
        for g in &self.groups {
            if index < g.len() {
                return g.label_of(index);
            }
            index -= g.len();
        }
        format!("{}#{index}", self.name)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SlotKind {
    Scalar,
    Array(usize),
    Pointer(usize),
}

/// One non-struct field of a struct input, nested structs flattened.
#[derive(Clone, Debug)]
pub(crate) struct Slot {
    /// `.inner.x`.
    pub(crate) path: String,
    pub(crate) kind: SlotKind,
    pub(crate) real: bool,
    /// The derivative struct has this field (along the whole path).
    pub(crate) deriv: bool,
    /// Element type of a pointer field's buffer.
    pub(crate) elem_c: String,
}

pub(crate) enum ParamLayout {
    /// An integer by value: a literal in the calls.
    Int,
    /// A real by value (one element) or a pointer to reals or integers.
    Flat { elem_c: String, real: bool },
    /// Structs; one for a struct by value.
    Structs { slots: Vec<Slot>, count: usize },
}

/// A global the domain gives values to.
pub(crate) struct GlobalInput {
    pub(crate) name: String,
    pub(crate) entry: Entry,
    pub(crate) kind: Scalar,
    pub(crate) len: Option<usize>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Scalar {
    Int,
    Real(RealKind),
}

pub(crate) struct Plan {
    pub(crate) head: String,
    pub(crate) tangent: String,
    pub(crate) buffers: Vec<Buffer>,
    pub(crate) dbuffers: Vec<DBuffer>,
    /// Statements that point the `T_d` templates' pointer fields to their
    /// derivative buffers.
    pub(crate) template_inits: String,
    pub(crate) layouts: Vec<ParamLayout>,
    pub(crate) global_inputs: Vec<GlobalInput>,
    /// The real elements of the independents, all of them.
    pub(crate) independents: Vec<Group>,
    /// Those that have a derivative: they get a direction.
    pub(crate) directed: Vec<Group>,
    pub(crate) deps: Vec<DepPlan>,
    pub(crate) f_call: String,
    pub(crate) fd_call: String,
    /// C type of `f`'s result, when it is a real or a struct.
    pub(crate) result_c: Option<String>,
    /// C type of the derivative of `f`'s result: what `f_d` returns
    /// (`aioli_resd`) or `f_b` takes (`aioli_resb`); `result_c` when the
    /// derivative procedure has none.
    pub(crate) result_deriv_c: Option<String>,
    /// Declarations of the original's things the tangent file lacks.
    pub(crate) original_decls: String,
    pub(crate) notes: Vec<String>,
    /// The head's arithmetic: the divided differences' steps.
    pub(crate) precision: Precision,
}

pub(crate) fn dims(len: Option<usize>) -> String {
    len.map(|n| format!("[{n}]")).unwrap_or_default()
}

/// The builtin spelling of a scalar type (typedefs resolved).
pub(crate) fn scalar_c(program: &Program, ty: &Type) -> Option<String> {
    match program.resolve(ty) {
        t @ (Type::Int { .. } | Type::Real(_)) => t.scalar_c_name(),
        _ => None,
    }
}

pub(crate) fn scalar_of(program: &Program, ty: &Type) -> Option<Scalar> {
    match program.resolve(ty) {
        Type::Int { .. } => Some(Scalar::Int),
        Type::Real(k) => Some(Scalar::Real(*k)),
        _ => None,
    }
}

/// The C spelling of a declaration `ty name` for a prototype or an
/// `extern`: scalars by their builtin names, structs by the names the
/// program gives them; array parameters as pointers (`double m[][2]` as
/// `double (*m)[2]`).
pub(crate) fn spell_decl(program: &Program, ty: &Type, name: &str) -> Option<String> {
    spell_declarator(program, ty, name.to_string(), true)
}

/// [`spell_decl`] around a declarator; `top`: `ty` is the parameter's own
/// type, where an array stands for a pointer.
fn spell_declarator(program: &Program, ty: &Type, inner: String, top: bool) -> Option<String> {
    let qualified = |q: &crate::il::QualType, inner: String| {
        let d = spell_declarator(program, &q.ty, inner, false)?;
        Some(if q.is_const { format!("const {d}") } else { d })
    };
    match program.resolve(ty) {
        Type::Void | Type::Int { .. } | Type::Real(_) => {
            Some(format!("{} {inner}", program.resolve(ty).scalar_c_name()?))
        }
        Type::Struct(_) => Some(format!("{} {inner}", c_type(program, ty)?)),
        Type::Pointer(q) => qualified(q, format!("*{inner}")),
        Type::Array { elem, .. } if top => qualified(elem, format!("*{inner}")),
        Type::Array { elem, len } => {
            let n = len.as_ref().and_then(|l| l.value)?;
            let inner = if inner.starts_with('*') {
                format!("({inner})")
            } else {
                inner
            };
            qualified(elem, format!("{inner}[{n}]"))
        }
        Type::Named(_) | Type::Opaque(_) => None,
    }
}

/// The globals of the original the driver saves and restores: defined in
/// the main file, not `static` (another translation unit cannot reach
/// them), not `const`, scalars or fixed-size arrays of integers or reals.
pub(crate) fn restorable_globals(program: &Program) -> Vec<(SymId, Scalar, Option<usize>)> {
    let mut out = Vec::new();
    for item in &program.items {
        if item.file != program.main_file {
            continue;
        }
        let ItemKind::Globals { storage, vars, .. } = &item.kind else {
            continue;
        };
        if *storage != Storage::Auto {
            continue;
        }
        for d in vars {
            let sym = program.sym(d.sym);
            if sym.ty.is_const || out.iter().any(|(s, _, _)| *s == d.sym) {
                continue;
            }
            match program.resolve(&sym.ty.ty) {
                Type::Array { elem, len } if !elem.is_const => {
                    if let (Some(kind), Some(n)) = (
                        scalar_of(program, &elem.ty),
                        len.as_ref().and_then(|l| l.value),
                    ) && n > 0
                        && n <= super::driver::MAX_ELEMENTS as u64
                    {
                        out.push((d.sym, kind, Some(n as usize)));
                    }
                }
                t => {
                    if let Some(kind) = scalar_of(program, t) {
                        out.push((d.sym, kind, None));
                    }
                }
            }
        }
    }
    out
}

/// The derivative globals of the tangent file, keyed by the original
/// global they differentiate: globals defined there, not `static`, named
/// `gd` (or `gd0`, …) after an original global `g` they do not clash with,
/// of its derivative type.
pub(crate) fn derivative_globals(
    flavor: Flavor,
    original: &Program,
    tangent: &Program,
) -> BTreeMap<String, (SymId, Storage)> {
    let mut out = BTreeMap::new();
    let originals: Vec<(String, SymId)> = original
        .items
        .iter()
        .filter(|i| i.file == original.main_file)
        .filter_map(|i| match &i.kind {
            ItemKind::Globals { vars, .. } => Some(vars),
            _ => None,
        })
        .flatten()
        .map(|d| (original.sym(d.sym).name.clone(), d.sym))
        .collect();
    for item in &tangent.items {
        if item.file != tangent.main_file {
            continue;
        }
        let ItemKind::Globals { storage, vars, .. } = &item.kind else {
            continue;
        };
        if *storage == Storage::Extern {
            continue;
        }
        for d in vars {
            let sym = tangent.sym(d.sym);
            if originals.iter().any(|(n, _)| *n == sym.name) {
                continue;
            }
            let of = originals.iter().find(|(g, s)| {
                is_suffixed(g, flavor.var_suffix(), &sym.name)
                    && is_derivative_type(
                        flavor,
                        original,
                        &original.sym(*s).ty.ty,
                        tangent,
                        &sym.ty.ty,
                        false,
                        0,
                    )
            });
            if let Some((g, _)) = of {
                // The exact name `gd` wins over `gd0` when both exist.
                let better = match out.get(g) {
                    Some((prev, _)) => tangent.sym(*prev).name.len() > sym.name.len(),
                    None => true,
                };
                if better {
                    out.insert(g.clone(), (d.sym, *storage));
                }
            }
        }
    }
    out
}

/// Flattens the fields of a struct input (nested structs into their
/// fields), in declaration order.
pub(crate) fn leaves<'a>(value: &'a StructValue, out: &mut Vec<&'a FieldValue>) {
    for f in &value.fields {
        match f {
            FieldValue::Struct(inner) => leaves(inner, out),
            other => out.push(other),
        }
    }
}

/// The slots of a struct input, matching [`leaves`], and which of them the
/// derivative struct `dsid` (of the tangent program) holds.
pub(crate) fn build_slots(
    original: &Program,
    tangent: &Program,
    value: &StructValue,
    dsid: Option<StructId>,
    prefix: &str,
    depth: usize,
    out: &mut Vec<Slot>,
) -> Result<(), CheckError> {
    if depth > 8 {
        return Err(CheckError::Unsupported(
            "structs nested too deeply".to_string(),
        ));
    }
    let def = original.strukt(value.strukt);
    for (field, fv) in def.fields.iter().zip(&value.fields) {
        let path = format!("{prefix}.{}", field.name);
        let dfield = dsid.and_then(|d| {
            tangent
                .strukt(d)
                .fields
                .iter()
                .find(|g| g.name == field.name)
        });
        let pointee = || {
            sequence_elem(original.resolve(&field.ty.ty))
                .and_then(|(e, _)| scalar_c(original, e))
                .unwrap_or_else(|| "double".to_string())
        };
        let (kind, real, elem_c) = match fv {
            FieldValue::Struct(inner) => {
                let dinner = dfield.and_then(|g| match tangent.resolve(&g.ty.ty) {
                    Type::Struct(s) => Some(*s),
                    _ => None,
                });
                build_slots(original, tangent, inner, dinner, &path, depth + 1, out)?;
                continue;
            }
            FieldValue::Real(_) => (SlotKind::Scalar, true, String::new()),
            FieldValue::Int(_) => (SlotKind::Scalar, false, String::new()),
            FieldValue::RealArray(v) => (SlotKind::Array(v.len()), true, String::new()),
            FieldValue::IntArray(v) => (SlotKind::Array(v.len()), false, String::new()),
            FieldValue::RealPointer(v) => (SlotKind::Pointer(v.len()), true, pointee()),
            FieldValue::IntPointer(v) => (SlotKind::Pointer(v.len()), false, pointee()),
        };
        out.push(Slot {
            path,
            kind,
            real,
            deriv: real && dfield.is_some(),
            elem_c,
        });
    }
    Ok(())
}

/// The fields of a struct result, nested structs flattened (as
/// [`build_slots`] for an input): scalars and fixed-size arrays of them,
/// and which of them the derivative struct `dsid` (of the derivative
/// program) holds. Fields the driver cannot read whole (pointers, whose
/// length is unknown; arrays of structs or of arrays) go to `skipped`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn result_slots(
    original: &Program,
    deriv: &Program,
    sid: StructId,
    dsid: Option<StructId>,
    prefix: &str,
    depth: usize,
    out: &mut Vec<Slot>,
    skipped: &mut Vec<String>,
) {
    if depth > 8 {
        skipped.push(prefix.to_string());
        return;
    }
    for field in &original.strukt(sid).fields {
        let path = format!("{prefix}.{}", field.name);
        let dfield =
            dsid.and_then(|d| deriv.strukt(d).fields.iter().find(|g| g.name == field.name));
        let (kind, elem) = match original.resolve(&field.ty.ty) {
            Type::Struct(inner) => {
                let dinner = dfield.and_then(|g| match deriv.resolve(&g.ty.ty) {
                    Type::Struct(s) => Some(*s),
                    _ => None,
                });
                result_slots(
                    original,
                    deriv,
                    *inner,
                    dinner,
                    &path,
                    depth + 1,
                    out,
                    skipped,
                );
                continue;
            }
            Type::Array {
                elem,
                len: Some(len),
            } if len.value.is_some() => {
                (SlotKind::Array(len.value.unwrap_or(0) as usize), &elem.ty)
            }
            t @ (Type::Int { .. } | Type::Real(_)) => (SlotKind::Scalar, t),
            _ => {
                skipped.push(path);
                continue;
            }
        };
        let real = match original.resolve(elem) {
            Type::Real(_) => true,
            Type::Int { .. } => false,
            _ => {
                skipped.push(path);
                continue;
            }
        };
        out.push(Slot {
            path,
            kind,
            real,
            deriv: real && dfield.is_some(),
            elem_c: String::new(),
        });
    }
}

/// Names of a pointer field's buffers, unique per parameter, element and
/// slot.
pub(crate) fn field_buffer(prefix: &str, i: usize, k: usize, nslots: usize, slot: usize) -> String {
    format!("aioli_{prefix}{i}_b{}", k * nslots + slot)
}

/// The independents' elements the check perturbs: those with a
/// derivative, and also those without one (a field left out of `T_d`)
/// that are not dependents too. The tangent takes the direction of the
/// latter as having no effect, so divided differences catch a derivative
/// the tool forgot (`g->u[i]` read through a struct pointer); a field
/// that is both, and that no statement touches (`p.stamp`), would only
/// show its own identity, which `T_d` leaves out by design (CONTRACT §2).
pub(crate) fn directed_groups(independents: &[Group], deps: &[DepPlan]) -> Vec<Group> {
    independents
        .iter()
        .filter(|g| {
            g.deriv.is_some()
                || !deps
                    .iter()
                    .flat_map(|d| &d.groups)
                    .any(|dg| dg.label == g.label)
        })
        .cloned()
        .collect()
}

/// The real elements of parameter `i` (see [`Group`]).
pub(crate) fn param_groups(
    dp: &str,
    i: usize,
    name: &str,
    layout: &ParamLayout,
    arg: &ArgValue,
    has_deriv: bool,
) -> Vec<Group> {
    let d = |tpl: String| has_deriv.then_some(tpl);
    match (layout, arg) {
        (ParamLayout::Flat { real: true, .. }, ArgValue::Real(_)) => vec![Group {
            outer: 1,
            inner: 1,
            primal: format!("aioli_w{i}[0]"),
            save: format!("aioli_s{i}[0]"),
            deriv: d(format!("aioli_{dp}{i}[0]")),
            adj: None,
            label: name.to_string(),
        }],
        (ParamLayout::Flat { real: true, .. }, ArgValue::RealArray(v)) => vec![Group {
            outer: 1,
            inner: v.len(),
            primal: format!("aioli_w{i}[{{j}}]"),
            save: format!("aioli_s{i}[{{j}}]"),
            deriv: d(format!("aioli_{dp}{i}[{{j}}]")),
            adj: None,
            label: format!("{name}[{{j}}]"),
        }],
        (ParamLayout::Structs { slots, count }, _) => {
            let by_value = matches!(arg, ArgValue::Struct(_));
            let lp = if by_value {
                name.to_string()
            } else {
                format!("{name}[{{k}}]")
            };
            let mut groups = Vec::new();
            for (s, slot) in slots.iter().enumerate().filter(|(_, s)| s.real) {
                let sd = has_deriv && slot.deriv;
                let path = &slot.path;
                match slot.kind {
                    SlotKind::Scalar | SlotKind::Array(_) => {
                        let (inner, index) = match slot.kind {
                            SlotKind::Array(m) => (m, "[{j}]"),
                            _ => (1, ""),
                        };
                        groups.push(Group {
                            outer: *count,
                            inner,
                            primal: format!("aioli_w{i}[{{k}}]{path}{index}"),
                            save: format!("aioli_s{i}[{{k}}]{path}{index}"),
                            deriv: sd.then(|| format!("aioli_{dp}{i}[{{k}}]{path}{index}")),
                            adj: None,
                            label: format!("{lp}{path}{index}"),
                        });
                    }
                    SlotKind::Pointer(m) => {
                        for k in 0..*count {
                            let b = |p| field_buffer(p, i, k, slots.len(), s);
                            groups.push(Group {
                                outer: 1,
                                inner: m,
                                primal: format!("{}[{{j}}]", b("w")),
                                save: format!("{}[{{j}}]", b("s")),
                                deriv: sd.then(|| format!("{}[{{j}}]", b(dp))),
                                adj: None,
                                label: format!(
                                    "{}{path}[{{j}}]",
                                    lp.replace("{k}", &k.to_string())
                                ),
                            });
                        }
                    }
                }
            }
            groups
        }
        _ => Vec::new(),
    }
}

/// The element type of a pointer / array parameter's buffer (through
/// rows of fixed length, see [`flat_elem`]), or the type of a by-value
/// one, spelled for the driver.
pub(crate) fn storage_c(program: &Program, ty: &Type, by_value: bool) -> Option<String> {
    if by_value {
        return c_type(program, ty);
    }
    let (elem, _) = flat_elem(program, ty)?;
    match program.resolve(&elem.ty) {
        Type::Struct(_) => c_type(program, &elem.ty),
        _ => scalar_c(program, &elem.ty),
    }
}

/// The struct a parameter holds (by value) or points to.
pub(crate) fn param_struct(program: &Program, ty: &Type) -> Option<StructId> {
    match program.resolve(ty) {
        Type::Struct(s) => Some(*s),
        t => match sequence_elem(t).map(|(e, _)| program.resolve(e)) {
            Some(Type::Struct(s)) => Some(*s),
            _ => None,
        },
    }
}

/// Builds a [`Plan`] step by step: the parameters' storage, the globals',
/// the head variables' elements, the calls, the declarations.
pub(crate) struct PlanBuilder<'a> {
    pub(crate) original: &'a Program,
    pub(crate) tangent: &'a Program,
    pub(crate) flavor: Flavor,
    pub(crate) sig: &'a TangentSignature,
    pub(crate) f: &'a Procedure,
    pub(crate) fd: &'a Procedure,
    pub(crate) first: &'a Inputs,
    pub(crate) buffers: Vec<Buffer>,
    pub(crate) dbuffers: Vec<DBuffer>,
    pub(crate) template_inits: String,
    pub(crate) layouts: Vec<ParamLayout>,
    pub(crate) notes: Vec<String>,
    /// `f`'s arguments, which are also `f_d`'s primal arguments.
    pub(crate) f_args: Vec<String>,
    pub(crate) deriv_args: Vec<Option<String>>,
    /// Restorable globals: index of their save buffer, kind, length.
    pub(crate) global_slot: HashMap<SymId, (usize, Scalar, Option<usize>)>,
    /// Original global name → its derivative global's name.
    pub(crate) global_deriv: HashMap<String, String>,
    /// `extern` declarations of the globals the tangent file lacks.
    pub(crate) extern_decls: String,
}

pub(crate) fn unsupported(what: String) -> CheckError {
    CheckError::Unsupported(what)
}

impl PlanBuilder<'_> {
    /// Storage, arguments and layout of parameter `i`.
    pub(crate) fn param(&mut self, i: usize, sym: SymId, arg: &ArgValue) -> Result<(), CheckError> {
        let (original, tangent, f, fd) = (self.original, self.tangent, self.f, self.fd);
        let name = &original.sym(sym).name;
        let ty = &original.sym(sym).ty.ty;
        // f_d's own spelling of the parameter's types: the driver sees
        // the tangent file's declarations.
        let tprimal = self
            .sig
            .primal_of(i)
            .map(|j| &tangent.sym(fd.params[j]).ty.ty)
            .ok_or_else(|| {
                CheckError::Signature(format!("parameter '{name}' is missing from '{}'", fd.name))
            })?;
        let tderiv = self
            .sig
            .derivative_of(i)
            .map(|j| &tangent.sym(fd.params[j]).ty.ty);
        let by_value = matches!(
            arg,
            ArgValue::Int(_) | ArgValue::Real(_) | ArgValue::Struct(_)
        );
        let spell = |p: &Program, t: &Type| {
            storage_c(p, t, by_value).ok_or_else(|| {
                unsupported(format!(
                    "the type of parameter '{name}' of '{}' cannot be spelled in the driver",
                    f.name
                ))
            })
        };
        // An adjoint of something passed by value is behind a pointer
        // (CONTRACT §3): its buffer holds the pointee.
        let deriv_by_value = by_value && self.flavor == Flavor::Tangent;
        let spell_d = |t: &Type| {
            storage_c(tangent, t, deriv_by_value).ok_or_else(|| {
                unsupported(format!(
                    "the type of the derivative of parameter '{name}' of '{}' cannot be spelled in the driver",
                    f.name
                ))
            })
        };
        let (dp, tp) = self.flavor.buffer_prefix();
        // Scalars by value are one-element arrays, passed as `x[0]`; their
        // adjoints as the array (a pointer to its element).
        let pass = |prefix: &str| {
            if by_value && (prefix == "w" || deriv_by_value) {
                format!("aioli_{prefix}{i}[0]")
            } else {
                format!("aioli_{prefix}{i}")
            }
        };
        let mut deriv_arg = tderiv.map(|_| pass(dp));
        let layout = match arg {
            ArgValue::Int(v) => {
                self.f_args.push(int_literal(*v));
                ParamLayout::Int
            }
            ArgValue::Real(_) | ArgValue::RealArray(_) | ArgValue::IntArray(_) => {
                let len = match arg {
                    ArgValue::RealArray(v) => v.len(),
                    ArgValue::IntArray(v) => v.len(),
                    _ => 1,
                };
                let elem_c = if by_value {
                    scalar_c(original, ty)
                } else {
                    flat_elem(original, ty).and_then(|(e, _)| scalar_c(original, &e.ty))
                }
                .ok_or_else(|| {
                    unsupported(format!("parameter '{name}' has no scalar element type"))
                })?;
                self.buffers.push(Buffer {
                    work: format!("aioli_w{i}"),
                    save: format!("aioli_s{i}"),
                    elem_c: elem_c.clone(),
                    len: Some(len),
                    declare: true,
                });
                if let Some(dt) = tderiv {
                    self.dbuffers.push(DBuffer {
                        name: format!("aioli_{dp}{i}"),
                        elem_c: spell_d(dt)?,
                        len: Some(len),
                        declare: true,
                        template: None,
                    });
                }
                // Rows of fixed length (`double (*A)[2]`): the flat
                // buffers are passed cast to the parameters' types.
                let cast = |p: &Program, t: &Type, prefix: &str| {
                    let buffer = pass(prefix);
                    if by_value {
                        return Ok(buffer);
                    }
                    pass_flat(p, t, &buffer).ok_or_else(|| {
                        unsupported(format!(
                            "the type of parameter '{name}' of '{}' cannot be spelled in the driver",
                            f.name
                        ))
                    })
                };
                self.f_args.push(cast(original, ty, "w")?);
                deriv_arg = tderiv.map(|dt| cast(tangent, dt, dp)).transpose()?;
                ParamLayout::Flat {
                    elem_c,
                    real: !matches!(arg, ArgValue::IntArray(_)),
                }
            }
            ArgValue::Struct(_) | ArgValue::StructArray(_) => {
                let values: Vec<&StructValue> = match arg {
                    ArgValue::Struct(v) => vec![v],
                    ArgValue::StructArray(v) => v.iter().collect(),
                    _ => Vec::new(),
                };
                let Some(v0) = values.first() else {
                    return Err(unsupported(format!(
                        "parameter '{name}' points to no struct"
                    )));
                };
                let dsid = match tderiv
                    .map(|dt| (param_struct(original, ty), param_struct(tangent, dt)))
                {
                    Some((Some(s), Some(d))) => {
                        check_derivative_struct(self.flavor, original, s, tangent, d, 0)?;
                        Some(d)
                    }
                    _ => None,
                };
                let mut slots = Vec::new();
                build_slots(original, tangent, v0, dsid, "", 0, &mut slots)?;
                let count = values.len();
                self.buffers.push(Buffer {
                    work: format!("aioli_w{i}"),
                    save: format!("aioli_s{i}"),
                    elem_c: spell(tangent, tprimal)?,
                    len: Some(count),
                    declare: true,
                });
                if let Some(dt) = tderiv {
                    self.dbuffers.push(DBuffer {
                        name: format!("aioli_{dp}{i}"),
                        elem_c: spell_d(dt)?,
                        len: Some(count),
                        declare: true,
                        template: Some(format!("aioli_{tp}{i}")),
                    });
                }
                // Pointer fields get buffers of their own, per struct.
                for k in 0..count {
                    for (s, slot) in slots.iter().enumerate() {
                        let SlotKind::Pointer(m) = slot.kind else {
                            continue;
                        };
                        self.buffers.push(Buffer {
                            work: field_buffer("w", i, k, slots.len(), s),
                            save: field_buffer("s", i, k, slots.len(), s),
                            elem_c: slot.elem_c.clone(),
                            len: Some(m),
                            declare: true,
                        });
                        if tderiv.is_some() && slot.deriv {
                            let dname = field_buffer(dp, i, k, slots.len(), s);
                            let _ = writeln!(
                                self.template_inits,
                                "    aioli_{tp}{i}[{k}]{} = {dname};",
                                slot.path
                            );
                            self.dbuffers.push(DBuffer {
                                name: dname,
                                elem_c: slot.elem_c.clone(),
                                len: Some(m),
                                declare: true,
                                template: None,
                            });
                        }
                    }
                }
                self.f_args.push(pass("w"));
                ParamLayout::Structs { slots, count }
            }
        };
        self.deriv_args.push(deriv_arg);
        self.layouts.push(layout);
        Ok(())
    }

    /// The original's globals, saved and restored around every call, and
    /// the tangent file's derivative globals, zeroed before every `f_d`.
    pub(crate) fn globals(&mut self) {
        let (original, tangent) = (self.original, self.tangent);
        for (n, (sym, kind, len)) in restorable_globals(original).into_iter().enumerate() {
            let s = original.sym(sym);
            let elem_c = match original.resolve(&s.ty.ty) {
                Type::Array { elem, .. } => scalar_c(original, &elem.ty),
                t => scalar_c(original, t),
            }
            .unwrap_or_else(|| "double".to_string());
            if tangent.global_by_name(&s.name).is_none() {
                let _ = writeln!(
                    self.extern_decls,
                    "extern {elem_c} {}{};",
                    s.name,
                    dims(len)
                );
            }
            self.buffers.push(Buffer {
                work: s.name.clone(),
                save: format!("aioli_g{n}"),
                elem_c,
                len,
                declare: false,
            });
            self.global_slot.insert(sym, (n, kind, len));
        }
        for (g, (dsym, storage)) in derivative_globals(self.flavor, original, tangent) {
            let ds = tangent.sym(dsym);
            let (elem, len) = match tangent.resolve(&ds.ty.ty) {
                Type::Array { elem, len } => (
                    &elem.ty,
                    len.as_ref().and_then(|l| l.value).map(|n| n as usize),
                ),
                t => (t, None),
            };
            let is_array = matches!(tangent.resolve(&ds.ty.ty), Type::Array { .. });
            let real =
                matches!(tangent.resolve(elem), Type::Real(_)) && (!is_array || len.is_some());
            // A fixed-size array of arrays of reals (`gd[2][2]`) is zeroed
            // whole like the others; the driver does not seed or read it
            // (a head naming it is refused by `global_groups`).
            if storage == Storage::Auto && !real && only_reals(tangent, &ds.ty.ty) {
                self.dbuffers.push(DBuffer {
                    name: ds.name.clone(),
                    elem_c: "double".to_string(),
                    len: None,
                    declare: false,
                    template: None,
                });
                continue;
            }
            match (storage, real) {
                (Storage::Auto, true) => {
                    self.dbuffers.push(DBuffer {
                        name: ds.name.clone(),
                        elem_c: scalar_c(tangent, elem).unwrap_or_else(|| "double".to_string()),
                        len,
                        declare: false,
                        template: None,
                    });
                    self.global_deriv.insert(g, ds.name.clone());
                }
                (Storage::Static, _) => self.notes.push(format!(
                    "derivative global '{}' is static in the tangent file: the driver cannot reach it, so '{g}' is treated as having no derivative",
                    ds.name
                )),
                _ => self.notes.push(format!(
                    "derivative global '{}' is neither a real nor an array of reals: it is not zeroed between calls",
                    ds.name
                )),
            }
        }
    }

    /// The globals the domain gives values to.
    pub(crate) fn global_inputs(&self, entries: &[Entry]) -> Result<Vec<GlobalInput>, CheckError> {
        let mut out = Vec::new();
        for e in entries {
            let sym = self
                .original
                .global_by_name(&e.param)
                .ok_or_else(|| unsupported(format!("'{}' is not a global", e.param)))?;
            let &(_, kind, len) = self.global_slot.get(&sym).ok_or_else(|| {
                unsupported(format!(
                    "the domain gives global '{}', but the driver can only set non-static, non-const globals of the main file that are integers, reals or fixed-size arrays of them",
                    e.param
                ))
            })?;
            out.push(GlobalInput {
                name: e.param.clone(),
                entry: e.clone(),
                kind,
                len,
            });
        }
        Ok(out)
    }

    /// The real elements of a global head variable, and whether it has a
    /// derivative global.
    pub(crate) fn global_groups(&self, sym: SymId) -> Result<(Vec<Group>, bool), CheckError> {
        let s = self.original.sym(sym);
        let &(n, kind, len) = self.global_slot.get(&sym).ok_or_else(|| {
            unsupported(format!(
                "global '{}' is not one the driver can reach and restore (it must be a non-static, non-const global of the main file, a real or a fixed-size array of reals)",
                s.name
            ))
        })?;
        if kind == Scalar::Int {
            return Ok((Vec::new(), false));
        }
        let deriv = self.global_deriv.get(&s.name);
        let (inner, index) = match len {
            Some(m) => (m, "[{j}]"),
            None => (1, ""),
        };
        Ok((
            vec![Group {
                outer: 1,
                inner,
                primal: format!("{}{index}", s.name),
                save: format!("aioli_g{n}{index}"),
                deriv: deriv.map(|d| format!("{d}{index}")),
                adj: None,
                label: format!("{}{index}", s.name),
            }],
            deriv.is_some(),
        ))
    }

    pub(crate) fn param_index(&self, sym: SymId, role: &str) -> Result<usize, CheckError> {
        self.f.params.iter().position(|s| *s == sym).ok_or_else(|| {
            unsupported(format!(
                "{role} '{}' is not a parameter of '{}'",
                self.original.sym(sym).name,
                self.f.name
            ))
        })
    }

    /// The real elements of the independents, with their derivatives where
    /// they have some.
    pub(crate) fn independents(&mut self, head: &Head) -> Result<Vec<Group>, CheckError> {
        let mut directed = Vec::new();
        for var in &head.independents {
            let (name, groups, has) = match *var {
                HeadVar::Param(sym) => {
                    let i = self.param_index(sym, "independent")?;
                    let name = &self.original.sym(sym).name;
                    let has = self.sig.derivative_of(i).is_some();
                    let groups = param_groups(
                        self.flavor.buffer_prefix().0,
                        i,
                        name,
                        &self.layouts[i],
                        &self.first.args[i],
                        has,
                    );
                    (name, groups, has)
                }
                HeadVar::Global(sym) if !self.global_slot.contains_key(&sym) => {
                    // As for the globals no head names: the driver can
                    // neither set nor restore it, so it keeps the value the
                    // program gives it.
                    self.notes.push(format!(
                        "independent '{}' is a global the driver cannot reach (static, const, or not of the main file): it gets no direction",
                        self.original.sym(sym).name
                    ));
                    continue;
                }
                HeadVar::Global(sym) => {
                    let (groups, has) = self.global_groups(sym)?;
                    (&self.original.sym(sym).name, groups, has)
                }
                HeadVar::Result => {
                    return Err(unsupported(format!(
                        "'{}' (the result) cannot be an independent",
                        self.f.name
                    )));
                }
            };
            if groups.is_empty() {
                self.notes.push(format!(
                    "independent '{name}' holds no real: it gets no direction"
                ));
            } else if !has {
                self.notes.push(match self.flavor {
                    Flavor::Tangent => format!(
                        "independent '{name}' has no derivative in the tangent file: it gets no direction"
                    ),
                    Flavor::Adjoint => format!(
                        "independent '{name}' has no adjoint in the adjoint file: its adjoint is taken as 0"
                    ),
                });
            }
            directed.extend(groups);
        }
        Ok(directed)
    }

    /// The dependents' elements, with their derivatives where they have
    /// some.
    pub(crate) fn dependents(
        &mut self,
        head: &Head,
        result: Option<ResultKind>,
    ) -> Result<Vec<DepPlan>, CheckError> {
        let f = self.f;
        let mut deps = Vec::new();
        for var in &head.dependents {
            let (name, groups, has) = match *var {
                HeadVar::Param(sym) => {
                    let i = self.param_index(sym, "dependent")?;
                    let name = self.original.sym(sym).name.clone();
                    match &self.first.args[i] {
                        ArgValue::Int(_) | ArgValue::Real(_) | ArgValue::Struct(_) => {
                            return Err(unsupported(format!(
                                "dependent '{name}' is passed by value: '{}' cannot change it",
                                f.name
                            )));
                        }
                        ArgValue::IntArray(_) => {
                            return Err(unsupported(format!(
                                "dependent '{name}' holds integers, which have no derivative"
                            )));
                        }
                        _ => {}
                    }
                    let has = self.sig.derivative_of(i).is_some();
                    let groups = param_groups(
                        self.flavor.buffer_prefix().0,
                        i,
                        &name,
                        &self.layouts[i],
                        &self.first.args[i],
                        has,
                    );
                    let has = groups.iter().any(|g| g.deriv.is_some());
                    (name, groups, has)
                }
                HeadVar::Global(sym) => {
                    let name = self.original.sym(sym).name.clone();
                    let (groups, has) = self.global_groups(sym)?;
                    if groups.is_empty() {
                        return Err(unsupported(format!(
                            "dependent '{name}' is an integer, which has no derivative"
                        )));
                    }
                    (name, groups, has)
                }
                HeadVar::Result => {
                    let has = match self.flavor {
                        Flavor::Tangent => self.sig.returns == TangentReturn::Derivative,
                        Flavor::Adjoint => self.sig.params.contains(&TangentParam::PrimalResult),
                    };
                    let deriv = format!("aioli_res{}", self.flavor.var_suffix());
                    let groups = match result {
                        Some(ResultKind::Real(_)) => vec![Group {
                            outer: 1,
                            inner: 1,
                            primal: "aioli_res".to_string(),
                            save: "aioli_res".to_string(),
                            deriv: has.then_some(deriv),
                            adj: None,
                            label: f.name.clone(),
                        }],
                        Some(ResultKind::Struct(sid)) => self.result_groups(sid, has)?,
                        None => {
                            return Err(unsupported(format!(
                                "the result of '{}' is neither a real nor a struct",
                                f.name
                            )));
                        }
                    };
                    let has = groups.iter().any(|g| g.deriv.is_some());
                    (f.name.clone(), groups, has)
                }
            };
            if !has {
                self.notes.push(match self.flavor {
                    Flavor::Tangent => format!(
                        "dependent '{name}' has no derivative in '{}': its tangent is taken as 0",
                        self.fd.name
                    ),
                    Flavor::Adjoint => format!(
                        "dependent '{name}' has no adjoint in '{}': its adjoint cannot be set",
                        self.fd.name
                    ),
                });
            }
            deps.push(DepPlan {
                name,
                groups,
                has_derivative: has,
            });
        }
        Ok(deps)
    }

    /// The real elements of a struct result `aioli_res` (see
    /// [`result_slots`]), with their derivatives in `aioli_resd` (the
    /// `T_d` that `f_d` returns) or `aioli_resb` (`f_b`'s `T_b fb`) when
    /// `has` (the derivative procedure has them at all).
    fn result_groups(&mut self, sid: StructId, has: bool) -> Result<Vec<Group>, CheckError> {
        let (original, tangent, fd) = (self.original, self.tangent, self.fd);
        let dsid = if has {
            let dty = match self.flavor {
                Flavor::Tangent => Some(&fd.ret.ty),
                Flavor::Adjoint => self
                    .sig
                    .params
                    .iter()
                    .position(|p| *p == TangentParam::PrimalResult)
                    .map(|j| &tangent.sym(fd.params[j]).ty.ty),
            };
            match dty.map(|t| tangent.resolve(t)) {
                Some(Type::Struct(d)) => {
                    check_derivative_struct(self.flavor, original, sid, tangent, *d, 0)?;
                    Some(*d)
                }
                _ => None,
            }
        } else {
            None
        };
        let mut slots = Vec::new();
        let mut skipped = Vec::new();
        result_slots(
            original,
            tangent,
            sid,
            dsid,
            "",
            0,
            &mut slots,
            &mut skipped,
        );
        for path in skipped {
            self.notes.push(format!(
                "field '{}{path}' of the result is not a real, a struct or a fixed-size array of reals: it is not compared",
                self.f.name
            ));
        }
        let sfx = self.flavor.var_suffix();
        Ok(slots
            .iter()
            .filter(|s| s.real)
            .map(|slot| {
                let (inner, index) = match slot.kind {
                    SlotKind::Array(m) => (m, "[{j}]"),
                    _ => (1, ""),
                };
                let path = &slot.path;
                Group {
                    outer: 1,
                    inner,
                    primal: format!("aioli_res{path}{index}"),
                    save: format!("aioli_res{path}{index}"),
                    deriv: slot.deriv.then(|| format!("aioli_res{sfx}{path}{index}")),
                    adj: None,
                    label: format!("{}{path}{index}", self.f.name),
                }
            })
            .collect())
    }

    /// The statements that call `f` and `f_d`.
    pub(crate) fn calls(&self, has_result: bool) -> (String, String) {
        let (f, fd) = (self.f, self.fd);
        let f_call = if has_result {
            format!("aioli_res = {}({});", f.name, self.f_args.join(", "))
        } else {
            format!("(void){}({});", f.name, self.f_args.join(", "))
        };
        let fd_args: Vec<String> = self
            .sig
            .params
            .iter()
            .map(|p| match *p {
                TangentParam::Primal(i) => self.f_args[i].clone(),
                TangentParam::Derivative(i) => self.deriv_args[i].clone().unwrap_or_default(),
                TangentParam::PrimalResult => match self.flavor {
                    Flavor::Tangent => "&aioli_res".to_string(),
                    Flavor::Adjoint => "aioli_resb".to_string(),
                },
            })
            .collect();
        let args = fd_args.join(", ");
        let fd_call = match self.sig.returns {
            TangentReturn::Derivative => format!("aioli_resd = {}({args});", fd.name),
            TangentReturn::Primal if has_result => format!("aioli_res = {}({args});", fd.name),
            _ => format!("(void){}({args});", fd.name),
        };
        (f_call, fd_call)
    }

    /// What the driver must declare because the tangent file does not:
    /// `f`'s prototype, the globals it restores.
    pub(crate) fn original_decls(&self) -> Result<String, CheckError> {
        let (original, f) = (self.original, self.f);
        let mut out = String::new();
        if self.tangent.proc_by_name(&f.name).is_none() {
            let params: Option<Vec<String>> = f
                .params
                .iter()
                .map(|&s| spell_decl(original, &original.sym(s).ty.ty, &original.sym(s).name))
                .collect();
            // The return type is spelled around the function's name, as a
            // declarator (`double *f`).
            let ret = spell_decl(original, &f.ret.ty, &f.name);
            match (params, ret) {
                (Some(p), Some(r)) => {
                    let p = if p.is_empty() {
                        "void".to_string()
                    } else {
                        p.join(", ")
                    };
                    let _ = writeln!(out, "{r}({p});");
                }
                _ => {
                    return Err(unsupported(format!(
                        "the tangent file does not declare '{}', and its prototype cannot be spelled for the driver",
                        f.name
                    )));
                }
            }
        }
        out.push_str(&self.extern_decls);
        Ok(out)
    }
}

/// A derivative procedure and how its parameters match the original's.
pub(crate) struct DerivativeProc<'a> {
    pub(crate) flavor: Flavor,
    /// The derivative file's program.
    pub(crate) program: &'a Program,
    pub(crate) proc: ProcId,
    /// For an adjoint, [`AdjointSignature::as_plan_signature`].
    pub(crate) sig: &'a TangentSignature,
}

pub(crate) fn build_plan(
    original: &Program,
    head: &Head,
    derivative: DerivativeProc<'_>,
    first: &Inputs,
    global_entries: &[Entry],
) -> Result<Plan, CheckError> {
    let DerivativeProc {
        flavor,
        program: tangent,
        proc: tangent_proc,
        sig,
    } = derivative;
    let f = original.proc(head.proc);
    let mut b = PlanBuilder {
        flavor,
        original,
        tangent,
        sig,
        f,
        fd: tangent.proc(tangent_proc),
        first,
        buffers: Vec::new(),
        dbuffers: Vec::new(),
        template_inits: String::new(),
        layouts: Vec::new(),
        notes: Vec::new(),
        f_args: Vec::new(),
        deriv_args: Vec::new(),
        global_slot: HashMap::new(),
        global_deriv: HashMap::new(),
        extern_decls: String::new(),
    };
    for (i, (&sym, arg)) in f.params.iter().zip(&first.args).enumerate() {
        b.param(i, sym, arg)?;
    }
    b.globals();
    let global_inputs = b.global_inputs(global_entries)?;
    let result = ResultKind::of(original, head.proc);
    let result_c = match result {
        Some(ResultKind::Real(_)) => scalar_c(original, &f.ret.ty),
        Some(ResultKind::Struct(_)) => Some(c_type(original, &f.ret.ty).ok_or_else(|| {
            unsupported(format!(
                "the result type of '{}' cannot be spelled in the driver",
                f.name
            ))
        })?),
        None => None,
    };
    // What f_d returns, or f_b's extra last parameter.
    let deriv_ty = match flavor {
        Flavor::Tangent => (sig.returns == TangentReturn::Derivative).then_some(&b.fd.ret.ty),
        Flavor::Adjoint => sig
            .params
            .iter()
            .position(|p| *p == TangentParam::PrimalResult)
            .map(|j| &tangent.sym(b.fd.params[j]).ty.ty),
    };
    let result_deriv_c = match (result, deriv_ty) {
        (Some(ResultKind::Real(_)), Some(t)) => scalar_c(tangent, t),
        (Some(ResultKind::Struct(_)), Some(t)) => c_type(tangent, t),
        _ => None,
    }
    .or_else(|| result_c.clone());
    let independents = b.independents(head)?;
    let deps = b.dependents(head, result)?;
    let directed = directed_groups(&independents, &deps);
    let (f_call, fd_call) = b.calls(result_c.is_some());
    let original_decls = b.original_decls()?;
    let precision = Precision::of(original, head.proc);
    b.notes.extend(precision.note());
    Ok(Plan {
        head: f.name.clone(),
        tangent: b.fd.name.clone(),
        buffers: b.buffers,
        dbuffers: b.dbuffers,
        template_inits: b.template_inits,
        layouts: b.layouts,
        global_inputs,
        independents,
        directed,
        deps,
        f_call,
        fd_call,
        result_c,
        result_deriv_c,
        original_decls,
        notes: b.notes,
        precision,
    })
}

// ---------------------------------------------------------------------------
// Preparing a check
// ---------------------------------------------------------------------------

/// The head's procedure, if a driver in another translation unit can call
/// it at `points` points.
pub(crate) fn checkable_head<'p>(
    program: &'p Program,
    head: &Head,
    points: usize,
) -> Result<&'p Procedure, CheckError> {
    if points == 0 {
        return Err(CheckError::Unsupported(
            "the check needs at least one point".to_string(),
        ));
    }
    let Some(f) = program.procs.get(head.proc.index()) else {
        return Err(CheckError::Unsupported(
            "the head names no procedure of the program".to_string(),
        ));
    };
    if f.body.is_none() {
        return Err(DriverError::NoBody(f.name.clone()).into());
    }
    if f.storage == Storage::Static {
        return Err(CheckError::Unsupported(format!(
            "'{}' is static: a driver in another translation unit cannot call it",
            f.name
        )));
    }
    if program
        .procs
        .iter()
        .any(|p| p.name == "main" && p.body.is_some())
    {
        return Err(DriverError::DefinesMain.into());
    }
    Ok(f)
}

/// A derivative file, read by aioli's own front end (with the runtime's
/// directory, if given, then the directories of the original and of the
/// derivative first on the include path: an old `aioli.h` next to the
/// original must not stand in for the runtime).
pub(crate) fn load_derivative(
    flavor: Flavor,
    path: &Path,
    original_path: &Path,
    runtime_dir: Option<&Path>,
    front: &FrontOptions,
) -> Result<front::Loaded, CheckError> {
    let mut front_options = front.clone();
    for p in [path, original_path] {
        // A file named without a directory is in the current one.
        let dir = match p.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => std::path::PathBuf::from("."),
        };
        front_options.include_dirs.insert(0, dir);
    }
    if let Some(d) = runtime_dir {
        front_options.include_dirs.insert(0, d.to_path_buf());
    }
    front::load(path, &front_options).map_err(|(sources, d)| {
        let text = diag::render(&sources, &d);
        match flavor {
            Flavor::Tangent => CheckError::TangentFile(text),
            Flavor::Adjoint => CheckError::AdjointFile(text),
        }
    })
}

/// The inputs of each point (the domain's parameters, through
/// [`compute_inputs`]) and the domain's entries that name globals.
pub(crate) fn draw_inputs(
    program: &Program,
    f: &Procedure,
    domain: &Domain,
    seed: u64,
    points: usize,
) -> Result<(Vec<Inputs>, Vec<Entry>), CheckError> {
    let is_param = |n: &str| f.params.iter().any(|s| program.sym(*s).name == n);
    let (param_entries, global_entries): (Vec<Entry>, Vec<Entry>) = domain
        .entries
        .iter()
        .cloned()
        .partition(|e| is_param(&e.param) || program.global_by_name(&e.param).is_none());
    let param_domain = Domain {
        entries: param_entries,
    };
    let mut inputs = Vec::with_capacity(points);
    for p in 0..points {
        inputs.push(compute_inputs(
            program,
            &f.name,
            &param_domain,
            point_seed(seed, p),
        )?);
    }
    Ok((inputs, global_entries))
}

/// The random data of each point: the globals the domain names, the
/// direction's random part (one per directed element of `plan`), then the
/// adjoint check's `ȳ` (one per dependent element, uniform in [-1,1]).
pub(crate) fn draw_points(
    program: &Program,
    f: &Procedure,
    plan: &Plan,
    inputs: Vec<Inputs>,
    seed: u64,
) -> Result<Vec<PointData>, CheckError> {
    let ndir: usize = plan.directed.iter().map(Group::len).sum();
    let nout: usize = plan.deps.iter().map(DepPlan::len).sum();
    // Integer parameters are fixed, so every point has the layout the
    // driver's storage is sized for; this is a guard.
    let first_args = inputs[0].args.clone();
    let mut points = Vec::with_capacity(inputs.len());
    for (p, input) in inputs.into_iter().enumerate() {
        if input.args.len() != first_args.len()
            || !input
                .args
                .iter()
                .zip(&first_args)
                .all(|(a, b)| same_layout(a, b))
        {
            return Err(CheckError::Unsupported(
                "the inputs changed shape between points".to_string(),
            ));
        }
        let ints: BTreeMap<String, i64> = f
            .params
            .iter()
            .zip(&input.args)
            .filter_map(|(s, a)| match a {
                ArgValue::Int(v) => Some((program.sym(*s).name.clone(), *v)),
                _ => None,
            })
            .collect();
        let mut rng = SplitMix64::new(point_seed(seed, p) ^ 0x5851_F42D_4C95_7F2D);
        let mut globals = Vec::new();
        for g in &plan.global_inputs {
            globals.push(draw_global(g, &ints, &mut rng)?);
        }
        let u = (0..ndir).map(|_| rng.real_in(-1.0, 1.0)).collect();
        let ybar = (0..nout).map(|_| rng.real_in(-1.0, 1.0)).collect();
        points.push(PointData {
            inputs: input,
            globals,
            u,
            ybar,
        });
    }
    Ok(points)
}

/// `b / a`, when both were measured and `a` is positive.
pub(crate) fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if a > 0.0 => Some(b / a),
        _ => None,
    }
}

// ---------------------------------------------------------------------------
// Points
// ---------------------------------------------------------------------------

/// Values of a global the domain names, at one point.
pub(crate) enum GlobalValue {
    Reals(Vec<f64>),
    Ints(Vec<i64>),
}

pub(crate) struct PointData {
    pub(crate) inputs: Inputs,
    pub(crate) globals: Vec<GlobalValue>,
    /// The random part of the direction, one per directed element.
    pub(crate) u: Vec<f64>,
    /// The adjoint check's weights of the dependents' elements.
    pub(crate) ybar: Vec<f64>,
}

/// Seed of point `p`: point 0 uses the seed itself, so that it sees the
/// inputs `check::driver` draws for that seed; the others hash the point
/// number in. (Adding a multiple of SplitMix64's own increment would only
/// shift point 0's sequence: point 1 would see point 0's values, one
/// element later.)
pub(crate) fn point_seed(seed: u64, p: usize) -> u64 {
    if p == 0 {
        return seed;
    }
    SplitMix64::new(seed ^ (p as u64).wrapping_mul(0xD1B5_4A32_D192_ED03)).next_u64()
}

/// Does `b` have the layout of `a` (what the driver's storage was sized
/// for)? Integer parameters are fixed, so sizes never change between
/// points; this is a guard.
pub(crate) fn same_layout(a: &ArgValue, b: &ArgValue) -> bool {
    pub(crate) fn fields(a: &StructValue, b: &StructValue) -> bool {
        a.strukt == b.strukt
            && a.fields.len() == b.fields.len()
            && a.fields.iter().zip(&b.fields).all(|(x, y)| match (x, y) {
                (FieldValue::Int(_), FieldValue::Int(_))
                | (FieldValue::Real(_), FieldValue::Real(_)) => true,
                (FieldValue::RealArray(u), FieldValue::RealArray(v))
                | (FieldValue::RealPointer(u), FieldValue::RealPointer(v)) => u.len() == v.len(),
                (FieldValue::IntArray(u), FieldValue::IntArray(v))
                | (FieldValue::IntPointer(u), FieldValue::IntPointer(v)) => u.len() == v.len(),
                (FieldValue::Struct(u), FieldValue::Struct(v)) => fields(u, v),
                _ => false,
            })
    }
    match (a, b) {
        (ArgValue::Int(x), ArgValue::Int(y)) => x == y,
        (ArgValue::Real(_), ArgValue::Real(_)) => true,
        (ArgValue::RealArray(u), ArgValue::RealArray(v)) => u.len() == v.len(),
        (ArgValue::IntArray(u), ArgValue::IntArray(v)) => u.len() == v.len(),
        (ArgValue::Struct(u), ArgValue::Struct(v)) => fields(u, v),
        (ArgValue::StructArray(u), ArgValue::StructArray(v)) => {
            u.len() == v.len() && u.iter().zip(v).all(|(x, y)| fields(x, y))
        }
        _ => false,
    }
}

pub(crate) fn draw_global(
    g: &GlobalInput,
    ints: &BTreeMap<String, i64>,
    rng: &mut SplitMix64,
) -> Result<GlobalValue, CheckError> {
    let e = &g.entry;
    let bad =
        |why: String| CheckError::Inputs(DriverError::Domain(super::domain::DomainError::new(why)));
    if !e.fields.is_empty() || e.field_count.is_some() {
        return Err(bad(format!(
            "'{}': global '{}' has no fields",
            e.key(),
            g.name
        )));
    }
    let n = match (g.len, &e.count) {
        (None, None) => 1,
        (None, Some(_)) => {
            return Err(bad(format!(
                "'{}': global '{}' is a scalar; write {}=...",
                e.key(),
                g.name,
                g.name
            )));
        }
        (Some(len), None) => len,
        (Some(len), Some(c)) => {
            let v = c.eval(ints).map_err(|e| CheckError::Inputs(e.into()))?;
            if v != len as i64 {
                return Err(bad(format!(
                    "'{}': global '{}' has {len} elements, not {v}",
                    e.key(),
                    g.name
                )));
            }
            len
        }
    };
    Ok(match g.kind {
        Scalar::Real(k) => GlobalValue::Reals(
            (0..n)
                .map(|_| {
                    let v = match e.value {
                        ValueSpec::Single(x) => x.as_f64(),
                        ValueSpec::Range { lo, hi } => rng.real_in(lo.as_f64(), hi.as_f64()),
                    };
                    if k == RealKind::Float {
                        v as f32 as f64
                    } else {
                        v
                    }
                })
                .collect(),
        ),
        Scalar::Int => {
            let int = |x: Number| {
                x.as_i64().ok_or_else(|| {
                    bad(format!(
                        "'{}' is an integer: its domain '{}' must use integers",
                        e.key(),
                        e.value
                    ))
                })
            };
            let mut out = Vec::with_capacity(n);
            for _ in 0..n {
                out.push(match e.value {
                    ValueSpec::Single(x) => int(x)?,
                    ValueSpec::Range { lo, hi } => rng.int_in(int(lo)?, int(hi)?),
                });
            }
            GlobalValue::Ints(out)
        }
    })
}

// ---------------------------------------------------------------------------
// Driver text
// ---------------------------------------------------------------------------

/// Initialiser list, eight values a line.
pub(crate) fn init_list(values: impl Iterator<Item = String>) -> String {
    let mut s = String::from("{");
    for (i, v) in values.enumerate() {
        s.push_str(if i % 8 == 0 { "\n    " } else { " " });
        s.push_str(&v);
        s.push(',');
    }
    s.push_str("\n}");
    s
}

/// A loop over a group's elements; `body` gets (primal, save, deriv, index)
/// as C and returns a statement.
pub(crate) fn for_each(
    out: &mut String,
    g: &Group,
    offset: usize,
    body: impl Fn(&str, &str, Option<&str>, &str) -> String,
) {
    let index = format!("{offset} + aioli_k * {} + aioli_j", g.inner);
    let deriv = g.deriv.as_deref().map(c_access);
    let _ = writeln!(
        out,
        "    for (aioli_k = 0; aioli_k < {}; aioli_k++)\n        for (aioli_j = 0; aioli_j < {}; aioli_j++)\n            {}",
        g.outer,
        g.inner,
        body(
            &c_access(&g.primal),
            &c_access(&g.save),
            deriv.as_deref(),
            &index
        )
    );
}

pub(crate) const LOOP_VARS: &str =
    "    long aioli_k, aioli_j;\n    (void)aioli_k;\n    (void)aioli_j;\n";

/// The statements and constants that load point `p`'s inputs into the
/// working storage.
pub(crate) fn load_point(
    plan: &Plan,
    p: usize,
    data: &PointData,
) -> Result<(String, String), CheckError> {
    let mut consts = String::new();
    let mut body = String::new();
    let real = |v: f64| format_hex_float(v);
    for (i, (layout, arg)) in plan.layouts.iter().zip(&data.inputs.args).enumerate() {
        match (layout, arg) {
            (ParamLayout::Int, _) => {}
            (ParamLayout::Flat { .. }, ArgValue::Real(v)) => {
                let _ = writeln!(body, "    aioli_w{i}[0] = {};", real(*v));
            }
            (ParamLayout::Flat { elem_c, .. }, ArgValue::RealArray(_) | ArgValue::IntArray(_)) => {
                let values: Box<dyn Iterator<Item = String>> = match arg {
                    ArgValue::RealArray(v) => Box::new(v.iter().map(|x| real(*x))),
                    ArgValue::IntArray(v) => Box::new(v.iter().map(|x| int_literal(*x))),
                    _ => Box::new(std::iter::empty()),
                };
                let c = format!("aioli_p{p}_w{i}");
                let _ = writeln!(
                    consts,
                    "static const {elem_c} {c}[] = {};",
                    init_list(values)
                );
                let _ = writeln!(body, "    memcpy(aioli_w{i}, {c}, sizeof aioli_w{i});");
            }
            (
                ParamLayout::Structs { slots, count },
                ArgValue::Struct(_) | ArgValue::StructArray(_),
            ) => {
                let values: Vec<&StructValue> = match arg {
                    ArgValue::Struct(v) => vec![v],
                    ArgValue::StructArray(v) => v.iter().collect(),
                    _ => Vec::new(),
                };
                if values.len() != *count {
                    return Err(CheckError::Unsupported(
                        "the number of structs changed between points".to_string(),
                    ));
                }
                for (k, value) in values.iter().enumerate() {
                    let mut fields = Vec::new();
                    leaves(value, &mut fields);
                    if fields.len() != slots.len() {
                        return Err(CheckError::Unsupported(
                            "the fields of a struct input changed between points".to_string(),
                        ));
                    }
                    for (s, (slot, fv)) in slots.iter().zip(fields).enumerate() {
                        let lv = format!("aioli_w{i}[{k}]{}", slot.path);
                        match fv {
                            FieldValue::Real(v) => {
                                let _ = writeln!(body, "    {lv} = {};", real(*v));
                            }
                            FieldValue::Int(v) => {
                                let _ = writeln!(body, "    {lv} = {};", int_literal(*v));
                            }
                            FieldValue::RealArray(vs) => {
                                for (j, v) in vs.iter().enumerate() {
                                    let _ = writeln!(body, "    {lv}[{j}] = {};", real(*v));
                                }
                            }
                            FieldValue::IntArray(vs) => {
                                for (j, v) in vs.iter().enumerate() {
                                    let _ = writeln!(body, "    {lv}[{j}] = {};", int_literal(*v));
                                }
                            }
                            FieldValue::RealPointer(_) | FieldValue::IntPointer(_) => {
                                let values: Vec<String> = match fv {
                                    FieldValue::RealPointer(v) => {
                                        v.iter().map(|x| real(*x)).collect()
                                    }
                                    FieldValue::IntPointer(v) => {
                                        v.iter().map(|x| int_literal(*x)).collect()
                                    }
                                    _ => Vec::new(),
                                };
                                let work = field_buffer("w", i, k, slots.len(), s);
                                let c = format!("aioli_p{p}_{}", &work["aioli_".len()..]);
                                let _ = writeln!(
                                    consts,
                                    "static const {} {c}[] = {};",
                                    slot.elem_c,
                                    init_list(values.into_iter())
                                );
                                let _ = writeln!(body, "    memcpy({work}, {c}, sizeof {work});");
                                let _ = writeln!(body, "    {lv} = {work};");
                            }
                            FieldValue::Struct(_) => {}
                        }
                    }
                }
            }
            _ => {
                return Err(CheckError::Unsupported(
                    "the inputs changed shape between points".to_string(),
                ));
            }
        }
    }
    for (n, (g, v)) in plan.global_inputs.iter().zip(&data.globals).enumerate() {
        let values: Vec<String> = match v {
            GlobalValue::Reals(v) => v.iter().map(|x| real(*x)).collect(),
            GlobalValue::Ints(v) => v.iter().map(|x| int_literal(*x)).collect(),
        };
        match g.len {
            None => {
                let _ = writeln!(
                    body,
                    "    {} = {};",
                    g.name,
                    values.first().cloned().unwrap_or_default()
                );
            }
            Some(_) => {
                let elem = match g.kind {
                    Scalar::Int => "long long",
                    Scalar::Real(_) => "long double",
                };
                // Element by element: the global's own element type may
                // differ from the constant's, so no memcpy.
                let c = format!("aioli_p{p}_g{n}");
                let _ = writeln!(
                    consts,
                    "static const {elem} {c}[] = {};",
                    init_list(values.into_iter())
                );
                let _ = writeln!(
                    body,
                    "    for (aioli_j = 0; aioli_j < (long)(sizeof {c} / sizeof {c}[0]); aioli_j++)\n        {}[aioli_j] = {c}[aioli_j];",
                    g.name
                );
            }
        }
    }
    Ok((consts, body))
}

/// What an adjoint check adds to the tangent's driver.
pub(crate) struct AdjointDriver<'a> {
    /// The adjoint plan: its derivative buffers are the adjoints, its
    /// `fd_call` calls `f_b`.
    pub(crate) plan: &'a Plan,
    /// Declarations of the adjoint file that the tangent file lacks.
    pub(crate) decls: String,
    /// The runtime has `aioli_stack_stats`.
    pub(crate) stack_stats: bool,
}

/// The driver's C text: the tangent check's (see [`super::tangent`]),
/// and with `adj` the adjoint check's (see [`super::adjoint`]); `plan` is
/// the tangent plan, its groups' `adj` filled in for an adjoint check.
pub(crate) fn driver_source(
    plan: &Plan,
    points: &[PointData],
    tangent_decls: &str,
    seed: u64,
    budget_ms: u64,
    adj: Option<&AdjointDriver>,
) -> Result<String, CheckError> {
    let ndir = plan.directed.iter().map(Group::len).sum::<usize>();
    let nout = plan.deps.iter().map(DepPlan::len).sum::<usize>();
    let steps = plan.precision.steps();
    let nsteps = steps.len();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "/* Tangent-check driver generated by aioli: '{}' against '{}', {} points, seed {seed}.\n * Prints '@aioli primal', '@aioli dep', '@aioli time' and '@aioli end' lines\n * (see check::tangent). */",
        plan.tangent,
        plan.head,
        points.len()
    );
    out.push_str(
        "#ifndef _POSIX_C_SOURCE\n#define _POSIX_C_SOURCE 199309L\n#endif\n#include <stdio.h>\n#include <string.h>\n#include <math.h>\n#include <time.h>\n\n",
    );
    if adj.is_some() {
        // Before the files' own declarations: a user macro they repeat
        // (`#define sp 0.25`) must not reach the runtime header's code.
        out.push_str(&crate::runtime::include_line());
        out.push('\n');
    }
    out.push_str(
        "/* ---- Declarations of the tangent file (its bodies are compiled apart). ---- */\n",
    );
    out.push_str(tangent_decls);
    if let Some(a) = adj {
        out.push_str(
            "\n/* ---- Declarations of the adjoint file that the tangent file lacks. ---- */\n",
        );
        out.push_str(&a.decls);
        if a.stack_stats {
            out.push_str("#include <stddef.h>\nvoid aioli_stack_stats(size_t *pushed_bytes, size_t *peak_bytes);\nvoid aioli_stack_reset_stats(void);\n");
        }
    }
    out.push_str(
        "\n/* ---- Declarations of the original file that the tangent file lacks. ---- */\n",
    );
    out.push_str(&plan.original_decls);
    out.push_str(
        "\n/* ---- The driver. ---- */\n#if defined(__GNUC__) || defined(__clang__)\n#define AIOLI_BARRIER() __asm__ __volatile__(\"\" ::: \"memory\")\n#else\n#define AIOLI_BARRIER() ((void)0)\n#endif\n\n",
    );
    let _ = writeln!(out, "#define AIOLI_NDIR {}", ndir.max(1));
    let _ = writeln!(out, "#define AIOLI_NOUT {}", nout.max(1));
    let _ = writeln!(out, "#define AIOLI_NSTEPS {nsteps}");
    let _ = writeln!(out, "#define AIOLI_NPOINTS {}", points.len());
    let _ = writeln!(
        out,
        "#define AIOLI_INIT_ADJOINTS() {}\n",
        if adj.is_some() {
            "aioli_init_adjoints()"
        } else {
            "((void)0)"
        }
    );

    for b in &plan.buffers {
        if b.declare {
            let _ = writeln!(out, "static {} {}{};", b.elem_c, b.work, dims(b.len));
        }
        let _ = writeln!(out, "static {} {}{};", b.elem_c, b.save, dims(b.len));
    }
    for d in &plan.dbuffers {
        if d.declare {
            let _ = writeln!(out, "static {} {}{};", d.elem_c, d.name, dims(d.len));
        }
        if let Some(t) = &d.template {
            let _ = writeln!(out, "static {} {t}{};", d.elem_c, dims(d.len));
        }
    }
    if let (Some(r), Some(d)) = (&plan.result_c, &plan.result_deriv_c) {
        let _ = writeln!(out, "static {r} aioli_res;\nstatic {d} aioli_resd;");
    }
    if let Some(a) = adj {
        for d in &a.plan.dbuffers {
            if d.declare {
                let _ = writeln!(out, "static {} {}{};", d.elem_c, d.name, dims(d.len));
            }
            if let Some(t) = &d.template {
                let _ = writeln!(out, "static {} {t}{};", d.elem_c, dims(d.len));
            }
        }
        if let Some(r) = &a.plan.result_deriv_c {
            let _ = writeln!(out, "static {r} aioli_resb;");
        }
        out.push_str("static const double *aioli_ybar_now;\n");
    }
    out.push_str("static double aioli_dir[AIOLI_NDIR];\n");
    out.push_str(
        "static double aioli_y[AIOLI_NOUT], aioli_yfd[AIOLI_NOUT], aioli_tan[AIOLI_NOUT];\nstatic double aioli_yp[AIOLI_NOUT], aioli_ym[AIOLI_NOUT];\nstatic double aioli_dd[AIOLI_NSTEPS * AIOLI_NOUT];\n",
    );
    let steps: Vec<String> = steps.iter().map(|s| format_hex_float(*s)).collect();
    let _ = writeln!(
        out,
        "static const double aioli_steps[AIOLI_NSTEPS] = {{{}}};\n",
        steps.join(", ")
    );

    // Points.
    for (p, data) in points.iter().enumerate() {
        let (consts, body) = load_point(plan, p, data)?;
        out.push_str(&consts);
        let _ = writeln!(
            out,
            "static const double aioli_u{p}[AIOLI_NDIR] = {};",
            init_list(
                data.u
                    .iter()
                    .map(|u| format_hex_float(*u))
                    .chain((data.u.is_empty()).then(|| "0".to_string()))
            )
        );
        if adj.is_some() {
            let _ = writeln!(
                out,
                "static const double aioli_ybar{p}[AIOLI_NOUT] = {};",
                init_list(
                    data.ybar
                        .iter()
                        .map(|u| format_hex_float(*u))
                        .chain((data.ybar.is_empty()).then(|| "0".to_string()))
                )
            );
        }
        let _ = writeln!(
            out,
            "static void aioli_load_{p}(void)\n{{\n{LOOP_VARS}{body}}}\n"
        );
    }
    out.push_str("static void aioli_load(int aioli_point)\n{\n    switch (aioli_point) {\n");
    for p in 0..points.len() {
        let _ = writeln!(out, "    case {p}: aioli_load_{p}(); break;");
    }
    out.push_str("    default: break;\n    }\n}\n\n");
    let us: Vec<String> = (0..points.len()).map(|p| format!("aioli_u{p}")).collect();
    let _ = writeln!(
        out,
        "static const double *const aioli_u[AIOLI_NPOINTS] = {{{}}};\n",
        us.join(", ")
    );
    if adj.is_some() {
        let ys: Vec<String> = (0..points.len())
            .map(|p| format!("aioli_ybar{p}"))
            .collect();
        let _ = writeln!(
            out,
            "static const double *const aioli_ybar[AIOLI_NPOINTS] = {{{}}};\n",
            ys.join(", ")
        );
    }

    // Saving and restoring the primal inputs, zeroing the derivatives.
    out.push_str("static void aioli_save(void)\n{\n");
    for b in &plan.buffers {
        let _ = writeln!(
            out,
            "    memcpy(&{}, &{}, sizeof {});",
            b.save, b.work, b.save
        );
    }
    out.push_str("}\n\nstatic void aioli_reset(void)\n{\n");
    for b in &plan.buffers {
        let _ = writeln!(
            out,
            "    memcpy(&{}, &{}, sizeof {});",
            b.work, b.save, b.save
        );
    }
    out.push_str("    AIOLI_BARRIER();\n}\n\nstatic void aioli_init_derivatives(void)\n{\n");
    for d in &plan.dbuffers {
        if let Some(t) = &d.template {
            let _ = writeln!(out, "    memset(&{t}, 0, sizeof {t});");
        }
    }
    out.push_str(&plan.template_inits);
    out.push_str("}\n\nstatic void aioli_zero_derivatives(void)\n{\n");
    for d in &plan.dbuffers {
        match &d.template {
            Some(t) => {
                let _ = writeln!(out, "    memcpy(&{}, &{t}, sizeof {t});", d.name);
            }
            None => {
                let _ = writeln!(out, "    memset(&{}, 0, sizeof {});", d.name, d.name);
            }
        }
    }
    if plan.result_c.is_some() {
        out.push_str("    memset(&aioli_resd, 0, sizeof aioli_resd);\n");
    }
    out.push_str("}\n\n");

    // Directions, seeding, perturbing.
    out.push_str(
        "static double aioli_scale(double aioli_v)\n{\n    return aioli_v != 0.0 && isfinite(aioli_v) ? fabs(aioli_v) : 1.0;\n}\n\n",
    );
    out.push_str("static void aioli_directions(const double *aioli_u_in)\n{\n");
    out.push_str(LOOP_VARS);
    let mut offset = 0;
    for g in &plan.directed {
        for_each(&mut out, g, offset, |_, save, _, i| {
            format!("aioli_dir[{i}] = aioli_u_in[{i}] * aioli_scale((double)({save}));")
        });
        offset += g.len();
    }
    out.push_str("}\n\nstatic void aioli_seed(void)\n{\n");
    out.push_str(LOOP_VARS);
    out.push_str("    aioli_zero_derivatives();\n");
    let mut offset = 0;
    for g in &plan.directed {
        for_each(&mut out, g, offset, |_, _, d, i| match d {
            Some(d) => format!("{d} = aioli_dir[{i}];"),
            // No derivative: the direction only perturbs the primal.
            None => format!("(void)aioli_dir[{i}];"),
        });
        offset += g.len();
    }
    out.push_str("}\n\nstatic void aioli_perturb(double aioli_t)\n{\n");
    out.push_str(LOOP_VARS);
    let mut offset = 0;
    for g in &plan.directed {
        for_each(&mut out, g, offset, |primal, save, _, i| {
            format!("{primal} = {save} + aioli_t * aioli_dir[{i}];")
        });
        offset += g.len();
    }
    out.push_str("    AIOLI_BARRIER();\n}\n\n");

    // Reading the dependents.
    for (fname, tangent) in [("aioli_primal_out", false), ("aioli_tangent_out", true)] {
        let _ = writeln!(out, "static void {fname}(double *aioli_out)\n{{");
        out.push_str(LOOP_VARS);
        let mut offset = 0;
        for dep in &plan.deps {
            for g in &dep.groups {
                for_each(&mut out, g, offset, |primal, _, d, i| {
                    if tangent {
                        match d {
                            Some(d) => format!("aioli_out[{i}] = (double)({d});"),
                            None => format!("aioli_out[{i}] = 0.0;"),
                        }
                    } else {
                        format!("aioli_out[{i}] = (double)({primal});")
                    }
                });
                offset += g.len();
            }
        }
        out.push_str("}\n\n");
    }

    if let Some(a) = adj {
        adjoint_functions(&mut out, plan, a);
    }

    // Calls.
    let _ = writeln!(
        out,
        "static void aioli_call_f(void)\n{{\n    {}\n}}\n\nstatic void aioli_call_f_d(void)\n{{\n    {}\n}}\n",
        plan.f_call, plan.fd_call
    );
    if let Some(a) = adj {
        let _ = writeln!(
            out,
            "static void aioli_call_f_b(void)\n{{\n    {}\n}}\n",
            a.plan.fd_call
        );
    }
    out.push_str(&timing::c_code(adj.is_some()));

    // main.
    out.push_str(
        r#"
int main(void)
{
    int aioli_p, aioli_h;
    long aioli_e;
    aioli_init_derivatives();
    AIOLI_INIT_ADJOINTS();
    aioli_save(); /* the original's globals as the program starts */
    for (aioli_p = 0; aioli_p < AIOLI_NPOINTS; aioli_p++) {
        aioli_reset();
        aioli_load(aioli_p);
        aioli_save();
        aioli_directions(aioli_u[aioli_p]);
        aioli_reset();
        aioli_seed();
        aioli_call_f_d();
        aioli_tangent_out(aioli_tan);
        aioli_primal_out(aioli_yfd);
        aioli_reset();
        aioli_call_f();
        aioli_primal_out(aioli_y);
        for (aioli_h = 0; aioli_h < AIOLI_NSTEPS; aioli_h++) {
            double aioli_t = aioli_steps[aioli_h];
            aioli_reset();
            aioli_perturb(aioli_t);
            aioli_call_f();
            aioli_primal_out(aioli_yp);
            aioli_reset();
            aioli_perturb(-aioli_t);
            aioli_call_f();
            aioli_primal_out(aioli_ym);
            for (aioli_e = 0; aioli_e < AIOLI_NOUT; aioli_e++)
                aioli_dd[aioli_h * AIOLI_NOUT + aioli_e] = (aioli_yp[aioli_e] - aioli_ym[aioli_e]) / (2.0 * aioli_t);
        }
"#,
    );
    let mut offset = 0;
    for dep in &plan.deps {
        let n = dep.len();
        let _ = writeln!(
            out,
            "        for (aioli_e = 0; aioli_e < {n}; aioli_e++) {{\n            printf(\"@aioli primal {name} %ld %d %a %a\\n\", aioli_e, aioli_p, aioli_y[{offset} + aioli_e], aioli_yfd[{offset} + aioli_e]);\n            printf(\"@aioli dep {name} %ld %d %a\", aioli_e, aioli_p, aioli_tan[{offset} + aioli_e]);\n            for (aioli_h = 0; aioli_h < AIOLI_NSTEPS; aioli_h++)\n                printf(\" %a\", aioli_dd[aioli_h * AIOLI_NOUT + {offset} + aioli_e]);\n            printf(\"\\n\");\n        }}",
            name = dep.name
        );
        offset += n;
    }
    if adj.is_some() {
        // One f_b call per dependent (its ȳ alone), then one with all.
        let _ = writeln!(
            out,
            "        for (aioli_h = -1; aioli_h < {ndeps}; aioli_h++) {{\n            long double aioli_dot = 0.0L, aioli_abs = 0.0L;\n            aioli_reset();\n            aioli_seed_adjoints(aioli_ybar[aioli_p], aioli_h);\n            aioli_call_f_b();\n            aioli_adjoint_dot(&aioli_dot, &aioli_abs);\n            printf(\"@aioli adj %d %d %a %a\\n\", aioli_h, aioli_p, (double)aioli_dot, (double)aioli_abs);\n        }}",
            ndeps = plan.deps.len()
        );
    }
    out.push_str("    }\n");
    if let Some(a) = adj
        && a.stack_stats
    {
        out.push_str("    {\n        size_t aioli_pushed = 0, aioli_peak = 0;\n        aioli_reset();\n        aioli_load(0);\n        aioli_save();\n        aioli_stack_reset_stats();\n        aioli_seed_adjoints(aioli_ybar[0], -1);\n        aioli_call_f_b();\n        aioli_stack_stats(&aioli_pushed, &aioli_peak);\n        printf(\"@aioli stack %lu %lu\\n\", (unsigned long)aioli_pushed, (unsigned long)aioli_peak);\n    }\n");
    }
    if budget_ms > 0 {
        // Two procedures share the budget, or three with f_b.
        let share = if adj.is_some() { 2.0 / 3.0 } else { 1.0 };
        let target = format_hex_float(timing::loop_target_seconds(budget_ms) * share);
        let (count, names, with, without) = if adj.is_some() {
            (3, "\"f\", \"f_d\", \"f_b\"", "1, 2, 4", "0, 3, 5")
        } else {
            (2, "\"f\", \"f_d\"", "1, 2", "0, 3")
        };
        let _ = writeln!(
            out,
            "    aioli_reset();\n    aioli_load(0);\n    aioli_save();\n    aioli_directions(aioli_u[0]);"
        );
        if adj.is_some() {
            let _ = writeln!(out, "    aioli_ybar_now = aioli_ybar[0];");
        }
        let _ = writeln!(
            out,
            "    {{\n        static const char *const aioli_names[] = {{{names}}};\n        static const int aioli_with[] = {{{with}}};\n        static const int aioli_without[] = {{{without}}};\n        aioli_time_all({count}, aioli_names, aioli_with, aioli_without, {target});\n    }}"
        );
    }
    out.push_str("    printf(\"@aioli end\\n\");\n    return 0;\n}\n");
    Ok(out)
}

/// The adjoint check's functions in the driver: `aioli_init_adjoints`
/// (templates of `T_b` objects with pointer fields), `aioli_zero_adjoints`,
/// `aioli_seed_adjoints(ybar, sel)` (zero every adjoint, then set the
/// dependents' adjoints to `ȳ`: only dependent `sel`'s, or all when `sel`
/// is negative) and `aioli_adjoint_dot` (`Σ x̄·ẋ` and `Σ |x̄·ẋ|` over the
/// directed elements, in long double).
fn adjoint_functions(out: &mut String, plan: &Plan, a: &AdjointDriver) {
    out.push_str("static void aioli_init_adjoints(void)\n{\n");
    for d in &a.plan.dbuffers {
        if let Some(t) = &d.template {
            let _ = writeln!(out, "    memset(&{t}, 0, sizeof {t});");
        }
    }
    out.push_str(&a.plan.template_inits);
    out.push_str("}\n\nstatic void aioli_zero_adjoints(void)\n{\n");
    for d in &a.plan.dbuffers {
        match &d.template {
            Some(t) => {
                let _ = writeln!(out, "    memcpy(&{}, &{t}, sizeof {t});", d.name);
            }
            None => {
                let _ = writeln!(out, "    memset(&{}, 0, sizeof {});", d.name, d.name);
            }
        }
    }
    if plan.result_c.is_some() {
        out.push_str("    memset(&aioli_resb, 0, sizeof aioli_resb);\n");
    }
    out.push_str(
        "}\n\nstatic void aioli_seed_adjoints(const double *aioli_yb, int aioli_sel)\n{\n",
    );
    out.push_str(LOOP_VARS);
    out.push_str("    aioli_zero_adjoints();\n");
    let mut offset = 0;
    for (d, dep) in plan.deps.iter().enumerate() {
        for g in &dep.groups {
            if let Some(adj) = &g.adj {
                let lv = c_access(adj);
                for_each(out, g, offset, |_, _, _, i| {
                    format!("if (aioli_sel < 0 || aioli_sel == {d}) {lv} = aioli_yb[{i}];")
                });
            }
            offset += g.len();
        }
    }
    out.push_str("    AIOLI_BARRIER();\n}\n\nstatic void aioli_adjoint_dot(long double *aioli_dot, long double *aioli_abs)\n{\n");
    out.push_str(LOOP_VARS);
    let mut offset = 0;
    for g in &plan.directed {
        if let Some(adj) = &g.adj {
            let lv = c_access(adj);
            for_each(out, g, offset, |_, _, _, i| {
                format!(
                    "{{ long double aioli_v = (long double)({lv}) * aioli_dir[{i}]; *aioli_dot += aioli_v; *aioli_abs += fabsl(aioli_v); }}"
                )
            });
        }
        offset += g.len();
    }
    out.push_str("}\n\n");
}

/// The tangent file's declarations: its includes, macros, types, its
/// globals as `extern` (not the `static` ones), and the prototypes of
/// `keep` (not its other functions), printed by aioli's back end.
pub(crate) fn declarations_of(
    tangent: &Program,
    sources: &SourceMap,
    keep: &[&str],
    skip: &HashSet<String>,
) -> String {
    let mut p = tangent.clone();
    p.final_comments.clear();
    p.items = tangent
        .items
        .iter()
        .filter_map(|item| {
            let kind = match &item.kind {
                ItemKind::Function(id) | ItemKind::Prototype(id) => {
                    let proc = tangent.proc(*id);
                    if proc.storage == Storage::Static
                        || proc.is_inline
                        || !keep.contains(&proc.name.as_str())
                        || skip.contains(&format!("proc {}", proc.name))
                    {
                        return None;
                    }
                    ItemKind::Prototype(*id)
                }
                ItemKind::Globals {
                    base,
                    storage,
                    vars,
                } => {
                    let vars: Vec<Declarator> = vars
                        .iter()
                        .filter(|d| !skip.contains(&format!("var {}", tangent.sym(d.sym).name)))
                        .map(|d| Declarator {
                            sym: d.sym,
                            init: None,
                        })
                        .collect();
                    if *storage == Storage::Static || vars.is_empty() {
                        return None;
                    }
                    ItemKind::Globals {
                        base: base.clone(),
                        storage: Storage::Extern,
                        vars,
                    }
                }
                other => {
                    if item_names(tangent, other).iter().any(|n| skip.contains(n)) {
                        return None;
                    }
                    other.clone()
                }
            };
            Some(Item {
                kind,
                span: item.span,
                comments: Comments::default(),
                file: item.file,
            })
        })
        .collect();
    print_c(&p, sources)
}

/// What an item of the main file declares, as keys of the `skip` set of
/// [`declarations_of`]: `typedef T`, `struct TAG`, `var g`, `proc f`,
/// `macro LINE`, `include "x.h"`.
pub(crate) fn item_names(program: &Program, kind: &ItemKind) -> Vec<String> {
    match kind {
        ItemKind::SystemInclude(_) => Vec::new(),
        ItemKind::MacroLine(line) => vec![format!("macro {line}")],
        ItemKind::LocalInclude { written, .. } => vec![format!("include {written}")],
        ItemKind::Typedef(id) => vec![format!("typedef {}", program.typedefs[id.index()].name)],
        ItemKind::Enum { constants, .. } => constants
            .iter()
            .map(|c| format!("enumerator {}", c.name))
            .collect(),
        ItemKind::Struct(id) => program
            .structs
            .get(id.index())
            .and_then(|d| d.tag.clone())
            .map(|t| vec![format!("struct {t}")])
            .unwrap_or_default(),
        ItemKind::Globals { vars, .. } => vars
            .iter()
            .map(|d| format!("var {}", program.sym(d.sym).name))
            .collect(),
        ItemKind::Prototype(id) | ItemKind::Function(id) => {
            vec![format!("proc {}", program.proc(*id).name)]
        }
    }
}

/// Everything the main file of `program` declares (see [`item_names`]),
/// so that a second file's declarations can leave those out.
pub(crate) fn declared_names(program: &Program) -> HashSet<String> {
    program
        .items
        .iter()
        .flat_map(|i| item_names(program, &i.kind))
        .collect()
}

// ---------------------------------------------------------------------------
// Building and running
// ---------------------------------------------------------------------------

/// The work directory: the caller's, kept, or a fresh temporary one,
/// removed when dropped.
pub(crate) struct WorkDir {
    pub(crate) path: PathBuf,
    pub(crate) remove: bool,
}

impl WorkDir {
    pub(crate) fn new(keep: Option<&Path>) -> Result<WorkDir, CheckError> {
        if let Some(dir) = keep {
            std::fs::create_dir_all(dir)
                .map_err(io_error(format!("creating {}", dir.display())))?;
            return Ok(WorkDir {
                path: dir.to_path_buf(),
                remove: false,
            });
        }
        static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let base = std::env::temp_dir();
        for _ in 0..100 {
            let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.subsec_nanos())
                .unwrap_or(0);
            let path = base.join(format!("aioli-check-{}-{n}-{nanos}", std::process::id()));
            match std::fs::create_dir(&path) {
                Ok(()) => return Ok(WorkDir { path, remove: true }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(io_error(format!("creating {}", path.display()))(e)),
            }
        }
        Err(CheckError::Io {
            what: "creating a temporary directory".to_string(),
            error: "every name tried exists".to_string(),
        })
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        if self.remove {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

/// `$CC` may hold arguments (`ccache gcc`, `gcc -m64`).
pub(crate) fn cc_command(cc: &str) -> Result<Command, CheckError> {
    let mut words = cc.split_whitespace();
    let program = words.next().ok_or_else(|| CheckError::Compile {
        what: "anything".to_string(),
        command: String::new(),
        stderr: "no C compiler given".to_string(),
    })?;
    let mut c = Command::new(program);
    c.args(words);
    Ok(c)
}

pub(crate) fn describe_command(c: &Command) -> String {
    let mut s = c.get_program().to_string_lossy().into_owned();
    for a in c.get_args() {
        s.push(' ');
        s.push_str(&a.to_string_lossy());
    }
    s
}

/// Runs the compile commands (in parallel), then the link.
/// A translation unit of the driver's program: what it is (for messages),
/// its source, its object's file name in the work directory.
pub(crate) struct Unit {
    pub(crate) what: &'static str,
    pub(crate) source: PathBuf,
    pub(crate) object: &'static str,
}

/// Compiles `units` into objects in `dir` (in parallel), with `-O2`, the
/// `-I` of each unit's directory (the driver's too), `include_dirs`, and
/// the caller's `-I`/`-D`, then links them with `-lm`.
pub(crate) fn build(
    cc: &str,
    front: &FrontOptions,
    dir: &Path,
    units: &[Unit],
    include_dirs: &[PathBuf],
) -> Result<PathBuf, CheckError> {
    let mut flags: Vec<String> = vec!["-O2".to_string()];
    let mut include_dirs: Vec<PathBuf> = include_dirs.to_vec();
    for p in units.iter().map(|u| u.source.as_path()) {
        let parent = p.parent().filter(|d| !d.as_os_str().is_empty());
        include_dirs.push(parent.map_or_else(|| PathBuf::from("."), Path::to_path_buf));
    }
    include_dirs.extend(front.include_dirs.iter().cloned());
    for d in &include_dirs {
        let d = std::fs::canonicalize(d).unwrap_or_else(|_| d.clone());
        flags.push(format!("-I{}", d.display()));
    }
    for (name, value) in &front.defines {
        flags.push(match value {
            Some(v) => format!("-D{name}={v}"),
            None => format!("-D{name}"),
        });
    }
    let mut children = Vec::new();
    for Unit {
        what,
        source,
        object,
    } in units
    {
        let mut c = cc_command(cc)?;
        c.args(&flags)
            .arg("-c")
            .arg(source)
            .arg("-o")
            .arg(dir.join(object))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let command = describe_command(&c);
        let child = c.spawn().map_err(|e| CheckError::Compile {
            what: what.to_string(),
            command: command.clone(),
            stderr: format!("cannot run '{cc}': {e}"),
        })?;
        children.push((what, command, child));
    }
    let mut first_error = None;
    for (what, command, child) in children {
        let result = child.wait_with_output();
        let error = match result {
            Ok(o) if o.status.success() => None,
            Ok(o) => Some(String::from_utf8_lossy(&o.stderr).into_owned()),
            Err(e) => Some(e.to_string()),
        };
        if let (Some(stderr), None) = (error, &first_error) {
            first_error = Some(CheckError::Compile {
                what: what.to_string(),
                command,
                stderr,
            });
        }
    }
    if let Some(e) = first_error {
        return Err(e);
    }
    let exe = dir.join("driver");
    let mut c = cc_command(cc)?;
    c.arg("-O2").arg("-o").arg(&exe);
    for u in units {
        c.arg(dir.join(u.object));
    }
    c.arg("-lm").stdin(Stdio::null());
    let command = describe_command(&c);
    let o = c.output().map_err(|e| CheckError::Compile {
        what: "the link".to_string(),
        command: command.clone(),
        stderr: e.to_string(),
    })?;
    if !o.status.success() {
        return Err(CheckError::Compile {
            what: format!(
                "the link of {}",
                units.iter().map(|u| u.what).collect::<Vec<_>>().join(", ")
            ),
            command,
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        });
    }
    Ok(exe)
}

/// Runs the driver, reading its output as it comes (it may print more
/// than a pipe holds), killing it after the timeout.
pub(crate) fn run(exe: &Path, timeout: Duration) -> Result<String, CheckError> {
    let mut child = Command::new(exe)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(io_error(format!("running {}", exe.display())))?;
    let reader = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut bytes);
            }
            String::from_utf8_lossy(&bytes).into_owned()
        })
    };
    let stdout = reader(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let stderr = reader(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if start.elapsed() > timeout => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return Err(io_error("waiting for the check driver")(e)),
        }
    };
    let out = stdout.join().unwrap_or_default();
    let err = stderr.join().unwrap_or_default();
    match status {
        None => Err(CheckError::Run {
            status: format!(
                "did not finish within {} ms and was killed",
                timeout.as_millis()
            ),
            stderr: err,
        }),
        Some(s) if !s.success() => Err(CheckError::Run {
            status: format!("failed ({s})"),
            stderr: err,
        }),
        Some(_) => Ok(out),
    }
}

// ---------------------------------------------------------------------------
// Output
// ---------------------------------------------------------------------------

/// Parses what C's `printf("%a")` prints: `0x1.8p+0`, `-0x0p+0`,
/// `0x0.0000000000001p-1022`, `inf`, `-nan`. Also plain decimal numbers.
pub fn parse_hex_float(text: &str) -> Option<f64> {
    let (negative, body) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let sign = if negative { -1.0 } else { 1.0 };
    let lower = body.to_ascii_lowercase();
    if lower == "inf" || lower == "infinity" {
        return Some(sign * f64::INFINITY);
    }
    if lower == "nan" || lower.starts_with("nan(") {
        return Some(f64::NAN);
    }
    let Some(hex) = lower.strip_prefix("0x") else {
        return body.parse::<f64>().ok().map(|v| sign * v);
    };
    let (mantissa, exponent) = hex.split_once('p').unwrap_or((hex, "0"));
    let exponent: i64 = exponent.parse().ok()?;
    let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if int_part.is_empty() && frac_part.is_empty() {
        return None;
    }
    // Up to 15 hex digits fit a u64 exactly; glibc prints at most 1 + 13.
    let digits: String = int_part.chars().chain(frac_part.chars()).collect();
    if digits.len() > 15 || !digits.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let value = u64::from_str_radix(&digits, 16).ok()? as f64;
    let shift = exponent.checked_sub(4 * frac_part.len() as i64)?;
    Some(sign * scale_by_power_of_two(value, shift))
}

/// `x · 2^e` without overflow in the intermediate powers.
pub(crate) fn scale_by_power_of_two(mut x: f64, mut e: i64) -> f64 {
    while e > 1000 {
        x *= 2f64.powi(1000);
        e -= 1000;
    }
    while e < -1000 {
        x *= 2f64.powi(-1000);
        e += 1000;
        if x == 0.0 {
            return x;
        }
    }
    x * 2f64.powi(e as i32)
}

/// Everything the driver printed about one dependent.
pub(crate) struct DepResults {
    /// `[point][element]`.
    pub(crate) tangent: Vec<f64>,
    /// `[step][point][element]`.
    pub(crate) dd: Vec<f64>,
    pub(crate) y: Vec<f64>,
    pub(crate) yfd: Vec<f64>,
    pub(crate) seen: Vec<bool>,
}

pub(crate) struct Results {
    pub(crate) deps: Vec<DepResults>,
    pub(crate) time_f: Option<Timing>,
    pub(crate) time_fd: Option<Timing>,
    pub(crate) time_fb: Option<Timing>,
    /// Adjoint check: `(Σ x̄·ẋ, Σ |x̄·ẋ|)` per `[selection][point]`, the
    /// selection being a dependent's index, or the number of dependents
    /// for all of them at once.
    pub(crate) adj: Vec<Vec<Option<(f64, f64)>>>,
    /// Bytes pushed by one call of `f_b`, and the stack's peak.
    pub(crate) stack: Option<(u64, u64)>,
}

pub(crate) fn parse_output(plan: &Plan, points: usize, text: &str) -> Result<Results, CheckError> {
    let by_name: HashMap<&str, usize> = plan
        .deps
        .iter()
        .enumerate()
        .map(|(i, d)| (d.name.as_str(), i))
        .collect();
    let nsteps = plan.precision.steps().len();
    let mut deps: Vec<DepResults> = plan
        .deps
        .iter()
        .map(|d| {
            let n = d.len() * points;
            DepResults {
                tangent: vec![f64::NAN; n],
                dd: vec![f64::NAN; n * nsteps],
                y: vec![f64::NAN; n],
                yfd: vec![f64::NAN; n],
                seen: vec![false; n],
            }
        })
        .collect();
    let (mut time_f, mut time_fd, mut time_fb, mut ended) = (None, None, None, false);
    let mut adj = vec![vec![None; points]; plan.deps.len() + 1];
    let mut stack = None;
    for (lineno, line) in text.lines().enumerate() {
        // The procedures may print too, even on the same line.
        let Some(at) = line.find("@aioli ") else {
            continue;
        };
        let words: Vec<&str> = line[at..].split_whitespace().collect();
        let bad = || {
            CheckError::Output(format!(
                "line {}: cannot read '{}'",
                lineno + 1,
                &line[at..]
            ))
        };
        let float = |s: &str| parse_hex_float(s).ok_or_else(bad);
        match words.get(1).copied() {
            Some("end") => ended = true,
            Some("time") if words.len() == 6 => {
                let t = Timing {
                    with_call: float(words[3])?,
                    without_call: float(words[4])?,
                    iterations: words[5].parse().map_err(|_| bad())?,
                };
                match words[2] {
                    "f" => time_f = Some(t),
                    "f_d" => time_fd = Some(t),
                    "f_b" => time_fb = Some(t),
                    _ => return Err(bad()),
                }
            }
            Some("adj") if words.len() == 6 => {
                let sel: i64 = words[2].parse().map_err(|_| bad())?;
                let p: usize = words[3].parse().map_err(|_| bad())?;
                let sel = if sel < 0 {
                    plan.deps.len()
                } else {
                    sel as usize
                };
                if sel > plan.deps.len() || p >= points {
                    return Err(bad());
                }
                adj[sel][p] = Some((float(words[4])?, float(words[5])?));
            }
            Some("stack") if words.len() == 4 => {
                stack = Some((
                    words[2].parse().map_err(|_| bad())?,
                    words[3].parse().map_err(|_| bad())?,
                ));
            }
            Some(kind @ ("dep" | "primal")) => {
                let d = *by_name
                    .get(words.get(2).copied().unwrap_or(""))
                    .ok_or_else(bad)?;
                let count = plan.deps[d].len();
                let e: usize = words.get(3).and_then(|w| w.parse().ok()).ok_or_else(bad)?;
                let p: usize = words.get(4).and_then(|w| w.parse().ok()).ok_or_else(bad)?;
                if e >= count || p >= points {
                    return Err(bad());
                }
                let at = p * count + e;
                let r = &mut deps[d];
                if kind == "primal" {
                    if words.len() != 7 {
                        return Err(bad());
                    }
                    r.y[at] = float(words[5])?;
                    r.yfd[at] = float(words[6])?;
                } else {
                    if words.len() != 6 + nsteps {
                        return Err(bad());
                    }
                    r.tangent[at] = float(words[5])?;
                    for h in 0..nsteps {
                        r.dd[h * count * points + at] = float(words[6 + h])?;
                    }
                    r.seen[at] = true;
                }
            }
            _ => return Err(bad()),
        }
    }
    if !ended {
        return Err(CheckError::Output(
            "the driver stopped before its end (no '@aioli end' line)".to_string(),
        ));
    }
    for (d, r) in plan.deps.iter().zip(&deps) {
        if let Some(missing) = r.seen.iter().position(|s| !s) {
            let count = d.len().max(1);
            return Err(CheckError::Output(format!(
                "no result for {} at point {}",
                d.label_of(missing % count),
                missing / count
            )));
        }
    }
    Ok(Results {
        deps,
        time_f,
        time_fd,
        time_fb,
        adj,
        stack,
    })
}

/// The largest relative error between `a` and `b`, element by element,
/// each relative to `max(|a|, |b|, floor)` with `floor` a share
/// ([`FLOOR_FRACTION`]) of the largest magnitude in either; the index of
/// the worst element. A non-finite value is an infinite error.
pub fn max_relative_error(a: &[f64], b: &[f64]) -> (f64, Option<usize>) {
    max_relative_error_of_values(a, b, &[], 0.0)
}

/// [`max_relative_error`], each element's error also relative to at least
/// `value_floor` times the magnitude of its value in `values` (missing or
/// non-finite values count as 0; see [`SINGLE_VALUE_FLOOR`]).
pub fn max_relative_error_of_values(
    a: &[f64],
    b: &[f64],
    values: &[f64],
    value_floor: f64,
) -> (f64, Option<usize>) {
    let mut worst = (0.0, None);
    for (i, err) in relative_errors_of_values(a, b, values, value_floor)
        .into_iter()
        .enumerate()
    {
        if worst.1.is_none() || err > worst.0 {
            worst = (err, Some(i));
        }
    }
    worst
}

/// Each element's error in [`max_relative_error_of_values`].
pub fn relative_errors_of_values(
    a: &[f64],
    b: &[f64],
    values: &[f64],
    value_floor: f64,
) -> Vec<f64> {
    let magnitude = a
        .iter()
        .chain(b)
        .filter(|v| v.is_finite())
        .fold(0.0f64, |m, v| m.max(v.abs()));
    let floor = (FLOOR_FRACTION * magnitude).max(f64::MIN_POSITIVE);
    a.iter()
        .zip(b)
        .enumerate()
        .map(|(i, (x, y))| {
            let value = values.get(i).copied().filter(|v| v.is_finite());
            let floor = floor.max(value_floor * value.unwrap_or(0.0).abs());
            if x.is_finite() && y.is_finite() {
                (x - y).abs() / x.abs().max(y.abs()).max(floor)
            } else {
                f64::INFINITY
            }
        })
        .collect()
}

/// Digits of agreement for a relative error.
pub fn digits(rel_err: f64) -> f64 {
    if rel_err.is_nan() {
        0.0
    } else if rel_err <= 0.0 {
        MAX_DIGITS
    } else {
        (-rel_err.log10()).clamp(0.0, MAX_DIGITS)
    }
}

/// Is `ty` a real, or a fixed-size array (of arrays) of reals: memory that
/// all-zero bytes make 0.0 throughout?
fn only_reals(program: &Program, ty: &Type) -> bool {
    match program.resolve(ty) {
        Type::Real(_) => true,
        Type::Array { elem, len } => {
            len.as_ref().is_some_and(|l| l.value.is_some()) && only_reals(program, &elem.ty)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    pub(crate) fn hex_floats_round_trip() {
        for v in [
            0.0,
            -0.0,
            1.0,
            -1.5,
            0.1,
            1e-310,
            f64::MIN_POSITIVE,
            f64::MAX,
            -123456.789e-200,
            f64::EPSILON,
        ] {
            let text = format_hex_float(v);
            let back = parse_hex_float(&text).unwrap();
            assert_eq!(back.to_bits(), v.to_bits(), "{text}");
        }
        assert_eq!(parse_hex_float("inf"), Some(f64::INFINITY));
        assert_eq!(parse_hex_float("-inf"), Some(f64::NEG_INFINITY));
        assert!(parse_hex_float("-nan").unwrap().is_nan());
        assert_eq!(parse_hex_float("0x1p-1074"), Some(f64::from_bits(1)));
        assert_eq!(parse_hex_float("2.5"), Some(2.5));
        for bad in [
            "",
            "0x",
            "0xp3",
            "0x1.g",
            "0x1p",
            "x",
            "0x1.00000000000000001p0",
        ] {
            assert_eq!(parse_hex_float(bad), None, "{bad}");
        }
    }

    #[test]
    pub(crate) fn relative_errors_use_a_floor() {
        // Equal values: no error.
        assert_eq!(max_relative_error(&[1.0, 2.0], &[1.0, 2.0]).0, 0.0);
        // An element a million times smaller than the largest one is
        // judged against a millionth of it, not against itself.
        let (e, at) = max_relative_error(&[1.0, 1e-12], &[1.0, 2e-12]);
        assert!(e < 2e-6, "{e}");
        assert_eq!(at, Some(1));
        // A plain relative error.
        let (e, _) = max_relative_error(&[2.0], &[1.0]);
        assert!((e - 0.5).abs() < 1e-15);
        // Non-finite values never agree.
        assert_eq!(max_relative_error(&[f64::NAN], &[1.0]).0, f64::INFINITY);
        // Zeros everywhere agree.
        assert_eq!(max_relative_error(&[0.0], &[0.0]).0, 0.0);
    }

    #[test]
    pub(crate) fn digits_are_bounded() {
        assert_eq!(digits(0.0), MAX_DIGITS);
        assert_eq!(digits(f64::NAN), 0.0);
        assert_eq!(digits(f64::INFINITY), 0.0);
        assert_eq!(digits(10.0), 0.0);
        assert!((digits(1e-7) - 7.0).abs() < 1e-12);
    }

    #[test]
    pub(crate) fn suffixes_follow_the_clash_rule() {
        assert!(is_suffixed("x", "d", "xd"));
        assert!(is_suffixed("x", "d", "xd0"));
        assert!(is_suffixed("x", "d", "xd12"));
        assert!(!is_suffixed("x", "d", "xdd"));
        assert!(!is_suffixed("x", "d", "x"));
        assert!(is_suffixed("T", "_d", "T_d"));
        assert!(is_suffixed("f", "", "f"));
        assert!(is_suffixed("f", "", "f1"));
        assert!(!is_suffixed("f", "", "g"));
    }

    #[test]
    pub(crate) fn points_draw_unrelated_values() {
        assert_eq!(point_seed(42, 0), 42);
        // No point's sequence is another's, shifted.
        let stream = |p| {
            let mut r = SplitMix64::new(point_seed(42, p));
            (0..8).map(|_| r.next_u64()).collect::<Vec<_>>()
        };
        let streams: Vec<Vec<u64>> = (0..4).map(stream).collect();
        for (a, sa) in streams.iter().enumerate() {
            for sb in &streams[a + 1..] {
                assert!(sa.iter().all(|x| !sb.contains(x)));
            }
        }
    }
}
