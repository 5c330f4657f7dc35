//! Concrete inputs for a head procedure and the C driver that runs it.
//!
//! [`compute_inputs`] turns a [`Domain`] into one [`ArgValue`] per
//! parameter, drawing random values with [`SplitMix64`] in a fixed order:
//! parameters in declaration order; inside an array, elements in index
//! order; inside a struct, fields in declaration order (recursively); an
//! integer parameter or a single-valued entry draws nothing. The same seed
//! therefore always gives the same inputs. `float` values are rounded to
//! single precision when drawn, so the numbers written in the driver are
//! exactly those the procedure receives.
//!
//! [`generate_driver`] writes a C file that `#include`s the translation
//! unit, builds the inputs (arrays as static initialised arrays of the
//! evaluated size, structs field by field, reals as exact hexadecimal
//! literals), calls the head once and prints its outputs, one per line.
//!
//! # Output order
//!
//! [`describe_outputs`] lists the printed values; the driver prints exactly
//! that list, so an interpreter-side runner that follows it prints the same
//! lines. The order is:
//!
//! 1. the return value, if the head returns one (a struct result prints its
//!    scalar fields and fixed-size array fields, recursively; its pointer
//!    fields are skipped because their length is unknown);
//! 2. for each parameter in order, what it points to: every element of a
//!    pointer / array parameter; for a pointer to structs, every element's
//!    fields in declaration order, with fixed-size array fields element by
//!    element, nested structs recursively, and pointer fields element by
//!    element over the buffer the domain gave them. Parameters passed by
//!    value (scalars and structs) print nothing: the callee cannot change
//!    the caller's copy;
//! 3. every global variable defined in the main file (not in an included
//!    header, not `extern`) whose type is an integer, a real, or a
//!    fixed-size one-dimensional array of those, in source order.
//!
//! Reals are printed with `printf("%a\n", (double)v)` (see
//! [`format_hex_float`] for the same text in Rust); integers with
//! `printf("%ld\n", (long)v)`.

use super::domain::{Domain, DomainError, Entry, Number, ValueSpec};
use super::rng::SplitMix64;
use crate::il::{
    IntKind, ItemKind, ProcId, Program, QualType, RealKind, Storage, StructId, SymId, Type,
};
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

/// The largest array the driver will write out: a guard against domains
/// like `x[n*n*n]` that would produce a gigabyte of C.
pub const MAX_ELEMENTS: i64 = 1 << 20;

/// Why inputs or a driver could not be produced.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum DriverError {
    #[error("no procedure named '{0}' in this file")]
    UnknownHead(String),
    #[error("'{0}' is only declared here; the driver needs its definition")]
    NoBody(String),
    #[error("parameter '{param}' of '{head}' has type {ty}, which the driver cannot handle: {why}")]
    Unsupported {
        head: String,
        param: String,
        ty: String,
        why: String,
    },
    #[error("the file defines 'main', which the driver needs for itself")]
    DefinesMain,
    #[error("{0}")]
    Domain(#[from] DomainError),
}

/// A scalar C type, as far as inputs and outputs care.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalarKind {
    Int { kind: IntKind, unsigned: bool },
    Real(RealKind),
}

/// The value of one field of a struct input.
#[derive(Clone, Debug, PartialEq)]
pub enum FieldValue {
    Int(i64),
    Real(f64),
    /// A fixed-size array member of reals.
    RealArray(Vec<f64>),
    /// A fixed-size array member of integers.
    IntArray(Vec<i64>),
    /// A pointer member to reals, pointing to a buffer holding these.
    RealPointer(Vec<f64>),
    /// A pointer member to integers, pointing to a buffer holding these.
    IntPointer(Vec<i64>),
    Struct(StructValue),
}

/// A struct input: one value per field, in declaration order.
#[derive(Clone, Debug, PartialEq)]
pub struct StructValue {
    pub strukt: StructId,
    pub fields: Vec<FieldValue>,
}

/// The value given to one parameter of the head.
#[derive(Clone, Debug, PartialEq)]
pub enum ArgValue {
    /// An integer by value.
    Int(i64),
    /// A real by value.
    Real(f64),
    /// A pointer / array parameter of reals: the buffer it points to.
    RealArray(Vec<f64>),
    /// A pointer / array parameter of integers: the buffer it points to.
    IntArray(Vec<i64>),
    /// A struct by value.
    Struct(StructValue),
    /// A pointer to structs: the buffer it points to (one element for the
    /// `p.x=...` form of the domain).
    StructArray(Vec<StructValue>),
}

/// Concrete inputs for one call of the head.
#[derive(Clone, Debug, PartialEq)]
pub struct Inputs {
    pub head: ProcId,
    /// One value per parameter, in order.
    pub args: Vec<ArgValue>,
    /// Evaluated sizes, keyed like the domain: `x` for an array parameter,
    /// `pts` for an array of structs, `acc.samples` for a pointer field.
    pub sizes: BTreeMap<String, usize>,
    pub seed: u64,
}

/// Where a printed value lives after the call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputRoot {
    /// The head's return value.
    Return,
    /// What parameter `i` points to.
    Param(usize),
    Global(SymId),
}

/// One step from a root to a scalar: an element of an array or of the
/// buffer a pointer points to, or a struct field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathStep {
    Index(usize),
    Field(usize),
}

/// One printed line.
#[derive(Clone, Debug, PartialEq)]
pub struct OutputSlot {
    /// Readable name: `f` (the return value of `f`), `x[3]`, `pts[2].x`,
    /// `acc[0].samples[4]`, `g_total`.
    pub label: String,
    pub kind: ScalarKind,
    pub root: OutputRoot,
    pub path: Vec<PathStep>,
}

impl OutputSlot {
    /// The printed line for a value of this slot.
    pub fn format(&self, value: f64) -> String {
        match self.kind {
            ScalarKind::Real(_) => format_hex_float(value),
            ScalarKind::Int { .. } => format!("{}", value as i64),
        }
    }
}

/// Formats a double as glibc's `printf("%a")` does: `0x1.8p+0`,
/// `-0x0p+0`, subnormals as `0x0.0000000000001p-1022`, `inf`, `nan`.
/// The text is also a valid C99 literal for finite values.
pub fn format_hex_float(v: f64) -> String {
    if v.is_nan() {
        return if v.is_sign_negative() { "-nan" } else { "nan" }.to_string();
    }
    let sign = if v.is_sign_negative() { "-" } else { "" };
    if v.is_infinite() {
        return format!("{sign}inf");
    }
    let bits = v.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i64;
    let mantissa = bits & ((1u64 << 52) - 1);
    if biased == 0 && mantissa == 0 {
        return format!("{sign}0x0p+0");
    }
    let (lead, exponent) = if biased == 0 {
        (0, -1022)
    } else {
        (1, biased - 1023)
    };
    let digits = format!("{mantissa:013x}");
    let digits = digits.trim_end_matches('0');
    let fraction = if digits.is_empty() {
        String::new()
    } else {
        format!(".{digits}")
    };
    format!("{sign}0x{lead}{fraction}p{exponent:+}")
}

// ---------------------------------------------------------------------------
// Types
// ---------------------------------------------------------------------------

/// What a type looks like to the driver, typedefs resolved.
enum Shape {
    Scalar(ScalarKind),
    Struct(StructId),
    /// Pointer or array; `len` is the declared length of an array.
    Sequence {
        elem: Box<Shape>,
        len: Option<u64>,
        is_pointer: bool,
    },
    Other,
}

fn shape(program: &Program, ty: &Type, depth: usize) -> Shape {
    if depth > 16 {
        return Shape::Other;
    }
    match program.resolve(ty) {
        Type::Int { kind, unsigned } => Shape::Scalar(ScalarKind::Int {
            kind: *kind,
            unsigned: *unsigned,
        }),
        Type::Real(k) => Shape::Scalar(ScalarKind::Real(*k)),
        Type::Struct(s) => Shape::Struct(*s),
        Type::Pointer(t) => Shape::Sequence {
            elem: Box::new(shape(program, &t.ty, depth + 1)),
            len: None,
            is_pointer: true,
        },
        Type::Array { elem, len } => Shape::Sequence {
            elem: Box::new(shape(program, &elem.ty, depth + 1)),
            len: len.as_ref().and_then(|l| l.value),
            is_pointer: false,
        },
        _ => Shape::Other,
    }
}

/// The C spelling of a type, for declarations in the driver (without
/// top-level `const`; the driver fills its buffers). Also used by the
/// tangent check's driver (`check::tangent`).
pub(crate) fn c_type(program: &Program, ty: &Type) -> Option<String> {
    Some(match ty {
        t @ (Type::Void | Type::Int { .. } | Type::Real(_)) => {
            t.scalar_c_name().unwrap_or_default()
        }
        Type::Named(t) => program.typedefs.get(t.index())?.name.clone(),
        Type::Struct(s) => match &program.structs.get(s.index())?.tag {
            Some(tag) => format!("struct {tag}"),
            None => program
                .typedefs
                .iter()
                .find(|t| matches!(&t.ty.ty, Type::Struct(id) if id == s))?
                .name
                .clone(),
        },
        Type::Pointer(t) => {
            let inner = c_type(program, &t.ty)?;
            if t.is_const {
                format!("const {inner} *")
            } else {
                format!("{inner} *")
            }
        }
        Type::Array { .. } | Type::Opaque(_) => return None,
    })
}

/// A readable spelling of a type for error messages: C's, as in a cast
/// (`double (*)[2]`, `FILE *`).
fn describe_type(program: &Program, ty: &Type) -> String {
    declarator_c(program, ty, false, String::new())
        .map(|s| s.trim_end().to_string())
        .unwrap_or_else(|| "?".to_string())
}

/// `ty` around the declarator `inner` (a name, or nothing for a type
/// name): `double (*p)[2]`, `const double *const q`, `FILE *f`. Typedef
/// names are kept; `None` only for a struct the program gives no name.
fn declarator_c(program: &Program, ty: &Type, is_const: bool, inner: String) -> Option<String> {
    let leaf = |base: String| {
        let q = if is_const { "const " } else { "" };
        if inner.is_empty() {
            format!("{q}{base}")
        } else {
            format!("{q}{base} {inner}")
        }
    };
    match ty {
        Type::Void | Type::Int { .. } | Type::Real(_) => Some(leaf(ty.scalar_c_name()?)),
        Type::Named(_) | Type::Struct(_) => Some(leaf(c_type(program, ty)?)),
        Type::Opaque(name) => Some(leaf(name.clone())),
        Type::Pointer(t) => {
            let inner = match (is_const, inner.is_empty()) {
                (true, true) => "*const".to_string(),
                (true, false) => format!("*const {inner}"),
                (false, _) => format!("*{inner}"),
            };
            declarator_c(program, &t.ty, t.is_const, inner)
        }
        Type::Array { elem, len } => {
            let inner = if inner.starts_with('*') {
                format!("({inner})")
            } else {
                inner
            };
            let n = len
                .as_ref()
                .and_then(|l| l.value)
                .map(|v| v.to_string())
                .unwrap_or_default();
            declarator_c(program, &elem.ty, elem.is_const, format!("{inner}[{n}]"))
        }
    }
}

/// The elements a pointer (or array) parameter's buffer holds: what it
/// points to, or, when that is an array of fixed length (`double A[2][2]`,
/// which C adjusts to `double (*A)[2]`), the elements of those arrays, all
/// rows one after the other; with the number of them in one element of
/// the pointer (2 for `double (*)[2]`, 1 for `double *`).
pub(crate) fn flat_elem<'p>(program: &'p Program, ty: &'p Type) -> Option<(&'p QualType, u64)> {
    let mut elem = match program.resolve(ty) {
        Type::Pointer(t) => t.as_ref(),
        Type::Array { elem, .. } => elem.as_ref(),
        _ => return None,
    };
    let mut count = 1u64;
    for _ in 0..16 {
        match program.resolve(&elem.ty) {
            Type::Array { elem: inner, len } => {
                count = count.checked_mul(len.as_ref().and_then(|l| l.value)?)?;
                elem = inner.as_ref();
            }
            _ => return Some((elem, count)),
        }
    }
    None
}

/// How a buffer of [`flat_elem`]s is passed as an argument of type `ty`:
/// as is, or cast (`(double (*)[2])buf`) when `ty` points to arrays.
pub(crate) fn pass_flat(program: &Program, ty: &Type, buffer: &str) -> Option<String> {
    let rows = match program.resolve(ty) {
        Type::Pointer(t) => matches!(program.resolve(&t.ty), Type::Array { .. }),
        Type::Array { elem, .. } => matches!(program.resolve(&elem.ty), Type::Array { .. }),
        _ => false,
    };
    if !rows {
        return Some(buffer.to_string());
    }
    // A parameter written as an array is a pointer to its element.
    let ptr = match program.resolve(ty) {
        Type::Array { elem, .. } => Type::Pointer(elem.clone()),
        t => t.clone(),
    };
    Some(format!(
        "({}){buffer}",
        declarator_c(program, &ptr, false, String::new())?
    ))
}

fn int_fits(v: i64, kind: IntKind, unsigned: bool) -> bool {
    let bits = kind.size() * 8;
    if kind == IntKind::Bool {
        return v == 0 || v == 1;
    }
    if unsigned {
        v >= 0 && (bits >= 64 || (v as u64) < (1u64 << bits))
    } else if bits >= 64 {
        true
    } else {
        let half = 1i64 << (bits - 1);
        (-half..half).contains(&v)
    }
}

// ---------------------------------------------------------------------------
// Inputs
// ---------------------------------------------------------------------------

struct InputBuilder<'a> {
    program: &'a Program,
    head_name: &'a str,
    ints: BTreeMap<String, i64>,
    rng: SplitMix64,
    sizes: BTreeMap<String, usize>,
}

impl InputBuilder<'_> {
    fn unsupported(&self, param: &str, ty: &Type, why: &str) -> DriverError {
        DriverError::Unsupported {
            head: self.head_name.to_string(),
            param: param.to_string(),
            ty: describe_type(self.program, ty),
            why: why.to_string(),
        }
    }

    fn size(
        &self,
        e: &Entry,
        which: &Option<super::domain::SizeExpr>,
    ) -> Result<usize, DriverError> {
        let expr = which.as_ref().ok_or_else(|| {
            DomainError::new(format!(
                "'{}' needs a size, as in '{}[n]=...'",
                e.key(),
                e.key()
            ))
        })?;
        let v = expr.eval(&self.ints)?;
        if !(1..=MAX_ELEMENTS).contains(&v) {
            return Err(DomainError::new(format!(
                "size of '{}' is {v}; it must be between 1 and {MAX_ELEMENTS}",
                e.key()
            ))
            .into());
        }
        Ok(v as usize)
    }

    fn real(&mut self, e: &Entry, kind: RealKind) -> f64 {
        match e.value {
            ValueSpec::Single(n) if kind == RealKind::Float => n.as_f64() as f32 as f64,
            ValueSpec::Single(n) => n.as_f64(),
            ValueSpec::Range { lo, hi } => {
                let (lo, hi) = (lo.as_f64(), hi.as_f64());
                let v = self.rng.real_in(lo, hi);
                if kind == RealKind::Float {
                    float_inside(v, lo, hi)
                } else {
                    v
                }
            }
        }
    }

    fn int(&mut self, e: &Entry, kind: IntKind, unsigned: bool) -> Result<i64, DriverError> {
        let not_integer = || {
            DomainError::new(format!(
                "'{}' is an integer: its domain '{}' must use integers",
                e.key(),
                e.value
            ))
        };
        let v = match e.value {
            ValueSpec::Single(n) => n.as_i64().ok_or_else(not_integer)?,
            ValueSpec::Range { lo, hi } => {
                let (lo, hi) = (
                    lo.as_i64().ok_or_else(not_integer)?,
                    hi.as_i64().ok_or_else(not_integer)?,
                );
                for bound in [lo, hi] {
                    if !int_fits(bound, kind, unsigned) {
                        return Err(out_of_range(e, bound).into());
                    }
                }
                self.rng.int_in(lo, hi)
            }
        };
        if !int_fits(v, kind, unsigned) {
            return Err(out_of_range(e, v).into());
        }
        Ok(v)
    }

    fn reals(&mut self, e: &Entry, n: usize, kind: RealKind) -> Vec<f64> {
        (0..n).map(|_| self.real(e, kind)).collect()
    }

    fn ints_of(
        &mut self,
        e: &Entry,
        n: usize,
        kind: IntKind,
        unsigned: bool,
    ) -> Result<Vec<i64>, DriverError> {
        (0..n).map(|_| self.int(e, kind, unsigned)).collect()
    }

    /// Builds one struct value from the entries about `param` whose field
    /// path starts with `prefix`; marks the entries it used.
    fn strukt(
        &mut self,
        param: &str,
        sid: StructId,
        prefix: &[String],
        entries: &[&Entry],
        used: &mut [bool],
        depth: usize,
    ) -> Result<StructValue, DriverError> {
        let program = self.program;
        let def = program.strukt(sid);
        let mut fields = Vec::with_capacity(def.fields.len());
        for field in &def.fields {
            let mut path = prefix.to_vec();
            path.push(field.name.clone());
            let dotted = format!("{param}.{}", path.join("."));
            let fshape = shape(program, &field.ty.ty, 0);
            if let Shape::Struct(inner) = fshape {
                if depth > 8 {
                    return Err(self.unsupported(param, &field.ty.ty, "structs nested too deeply"));
                }
                let v = self.strukt(param, inner, &path, entries, used, depth + 1)?;
                fields.push(FieldValue::Struct(v));
                continue;
            }
            let index = entries
                .iter()
                .position(|e| e.fields == path)
                .ok_or_else(|| {
                    DomainError::new(format!(
                        "field '{dotted}' of parameter '{param}' of '{}' has no domain",
                        self.head_name
                    ))
                })?;
            used[index] = true;
            let e = entries[index];
            let value = match fshape {
                Shape::Scalar(ScalarKind::Real(k)) => FieldValue::Real(self.real(e, k)),
                Shape::Scalar(ScalarKind::Int { kind, unsigned }) => {
                    FieldValue::Int(self.int(e, kind, unsigned)?)
                }
                Shape::Sequence {
                    elem,
                    len,
                    is_pointer,
                } => {
                    let n = if is_pointer {
                        let n = self.size(e, &e.field_count)?;
                        self.sizes.insert(format!("{param}.{}", path.join(".")), n);
                        n
                    } else {
                        match len {
                            Some(n) if n > 0 && n <= MAX_ELEMENTS as u64 => n as usize,
                            _ => {
                                return Err(self.unsupported(
                                    param,
                                    &field.ty.ty,
                                    &format!(
                                        "field '{dotted}' is an array without a usable length"
                                    ),
                                ));
                            }
                        }
                    };
                    match (*elem, is_pointer) {
                        (Shape::Scalar(ScalarKind::Real(k)), false) => {
                            FieldValue::RealArray(self.reals(e, n, k))
                        }
                        (Shape::Scalar(ScalarKind::Real(k)), true) => {
                            FieldValue::RealPointer(self.reals(e, n, k))
                        }
                        (Shape::Scalar(ScalarKind::Int { kind, unsigned }), false) => {
                            FieldValue::IntArray(self.ints_of(e, n, kind, unsigned)?)
                        }
                        (Shape::Scalar(ScalarKind::Int { kind, unsigned }), true) => {
                            FieldValue::IntPointer(self.ints_of(e, n, kind, unsigned)?)
                        }
                        _ => {
                            return Err(self.unsupported(
                                param,
                                &field.ty.ty,
                                &format!(
                                    "field '{dotted}' must be an array of (or pointer to) integers or reals"
                                ),
                            ));
                        }
                    }
                }
                _ => {
                    return Err(self.unsupported(
                        param,
                        &field.ty.ty,
                        &format!("field '{dotted}' has a type the driver cannot fill"),
                    ));
                }
            };
            if e.field_count.is_some()
                && !matches!(
                    value,
                    FieldValue::RealPointer(_) | FieldValue::IntPointer(_)
                )
            {
                return Err(DomainError::new(format!(
                    "'{}' gives a size, but field '{dotted}' is not a pointer",
                    e.key()
                ))
                .into());
            }
            fields.push(value);
        }
        Ok(StructValue {
            strukt: sid,
            fields,
        })
    }
}

/// `v` rounded to single precision, moved back inside `[lo, hi]` by one
/// float step when rounding crossed a bound that is not a float itself
/// (a domain like `[0.1,0.2]` must hold for the float the procedure gets).
fn float_inside(v: f64, lo: f64, hi: f64) -> f64 {
    let f = v as f32;
    let step_down = |x: f32| {
        f32::from_bits(if x > 0.0 {
            x.to_bits() - 1
        } else {
            x.to_bits() + 1
        })
    };
    let step_up = |x: f32| {
        f32::from_bits(if x >= 0.0 {
            x.to_bits() + 1
        } else {
            x.to_bits() - 1
        })
    };
    let f = if (f as f64) > hi && f != 0.0 {
        step_down(f)
    } else {
        f
    };
    let f = if (f as f64) < lo { step_up(f) } else { f };
    f as f64
}

fn out_of_range(e: &Entry, v: i64) -> DomainError {
    DomainError::new(format!(
        "value {v} of '{}' does not fit its C integer type",
        e.key()
    ))
}

/// Finds a head procedure that has a body.
fn find_head(program: &Program, head: &str) -> Result<ProcId, DriverError> {
    let id = program
        .procs
        .iter()
        .position(|p| p.name == head && p.body.is_some())
        .map(|i| ProcId(i as u32));
    match id {
        Some(id) => Ok(id),
        None if program.proc_by_name(head).is_some() => Err(DriverError::NoBody(head.to_string())),
        None => Err(DriverError::UnknownHead(head.to_string())),
    }
}

/// Draws concrete inputs for `head` inside `domain`, reproducibly from
/// `seed`. Every parameter must be named by the domain and every domain
/// entry must name a parameter.
pub fn compute_inputs(
    program: &Program,
    head: &str,
    domain: &Domain,
    seed: u64,
) -> Result<Inputs, DriverError> {
    let head_id = find_head(program, head)?;
    let proc = program.proc(head_id);
    let names: Vec<&str> = proc
        .params
        .iter()
        .map(|&s| program.sym(s).name.as_str())
        .collect();
    if let Some(e) = domain
        .entries
        .iter()
        .find(|e| !names.contains(&e.param.as_str()))
    {
        return Err(DomainError::new(format!(
            "domain names '{}', which is not a parameter of '{head}'",
            e.param
        ))
        .into());
    }
    let mut b = InputBuilder {
        program,
        head_name: head,
        ints: BTreeMap::new(),
        rng: SplitMix64::new(seed),
        sizes: BTreeMap::new(),
    };
    let no_domain = |name: &str| {
        DriverError::from(DomainError::new(format!(
            "parameter '{name}' of '{head}' has no domain"
        )))
    };

    // Integer parameters first: sizes are expressions over them.
    for (&sym, &name) in proc.params.iter().zip(&names) {
        if let Shape::Scalar(ScalarKind::Int { kind, unsigned }) =
            shape(program, &program.sym(sym).ty.ty, 0)
        {
            let e = domain
                .entries_for(name)
                .next()
                .ok_or_else(|| no_domain(name))?;
            if e.count.is_some() || !e.fields.is_empty() {
                return Err(DomainError::new(format!(
                    "'{}': parameter '{name}' is a scalar integer; write {name}=VALUE",
                    e.key()
                ))
                .into());
            }
            let v = match e.value {
                ValueSpec::Single(Number::Int(v)) if int_fits(v, kind, unsigned) => v,
                ValueSpec::Single(Number::Int(v)) => return Err(out_of_range(e, v).into()),
                _ => {
                    return Err(DomainError::new(format!(
                        "integer parameter '{name}' needs one integer value, as in {name}=8, not '{}'",
                        e.value
                    ))
                    .into());
                }
            };
            b.ints.insert(name.to_string(), v);
        }
    }

    let mut args = Vec::with_capacity(names.len());
    for (&sym, &name) in proc.params.iter().zip(&names) {
        let ty = &program.sym(sym).ty.ty;
        let entries: Vec<&Entry> = domain.entries_for(name).collect();
        if entries.is_empty() {
            return Err(no_domain(name));
        }
        let single = |what: &str| -> Result<&Entry, DriverError> {
            match entries.as_slice() {
                [e] if e.fields.is_empty() && e.field_count.is_none() => Ok(e),
                _ => Err(DomainError::new(format!(
                    "parameter '{name}' of '{head}' is {what}; give it one entry without fields"
                ))
                .into()),
            }
        };
        let arg = match shape(program, ty, 0) {
            Shape::Scalar(ScalarKind::Int { .. }) => ArgValue::Int(b.ints[name]),
            Shape::Scalar(ScalarKind::Real(k)) => {
                let e = single("a real")?;
                if e.count.is_some() {
                    return Err(DomainError::new(format!(
                        "'{}': parameter '{name}' is a scalar real; write {name}=[lo,hi]",
                        e.key()
                    ))
                    .into());
                }
                ArgValue::Real(b.real(e, k))
            }
            Shape::Struct(sid) => {
                if let Some(e) = entries
                    .iter()
                    .find(|e| e.count.is_some() || e.fields.is_empty())
                {
                    return Err(DomainError::new(format!(
                        "'{}': parameter '{name}' is a struct passed by value; name its fields, as in {name}.x=[0,1]",
                        e.key()
                    ))
                    .into());
                }
                let mut used = vec![false; entries.len()];
                let v = b.strukt(name, sid, &[], &entries, &mut used, 0)?;
                check_all_used(name, &entries, &used)?;
                ArgValue::Struct(v)
            }
            Shape::Sequence { elem, .. } => match *elem {
                Shape::Scalar(kind) => {
                    let e = single("an array")?;
                    let n = b.size(e, &e.count)?;
                    b.sizes.insert(name.to_string(), n);
                    match kind {
                        ScalarKind::Real(k) => ArgValue::RealArray(b.reals(e, n, k)),
                        ScalarKind::Int { kind, unsigned } => {
                            ArgValue::IntArray(b.ints_of(e, n, kind, unsigned)?)
                        }
                    }
                }
                Shape::Sequence { .. } => {
                    // Rows of fixed length (`double A[2][2]`): one buffer
                    // of all their elements.
                    let scalar = flat_elem(program, ty).and_then(|(e, rows)| {
                        match shape(program, &e.ty, 0) {
                            Shape::Scalar(k) => Some((k, rows)),
                            _ => None,
                        }
                    });
                    let Some((kind, row)) = scalar else {
                        return Err(b.unsupported(
                            name,
                            ty,
                            "only pointers to integers, reals, structs or fixed-size arrays of integers or reals get a buffer",
                        ));
                    };
                    let e = single("an array")?;
                    let n = b.size(e, &e.count)?;
                    if !(n as u64).is_multiple_of(row) {
                        return Err(DomainError::new(format!(
                            "'{}': parameter '{name}' has type {}, rows of {row} elements; give it a number of elements that is a multiple of {row}",
                            e.key(),
                            describe_type(program, ty)
                        ))
                        .into());
                    }
                    b.sizes.insert(name.to_string(), n);
                    match kind {
                        ScalarKind::Real(k) => ArgValue::RealArray(b.reals(e, n, k)),
                        ScalarKind::Int { kind, unsigned } => {
                            ArgValue::IntArray(b.ints_of(e, n, kind, unsigned)?)
                        }
                    }
                }
                Shape::Struct(sid) => {
                    if let Some(e) = entries.iter().find(|e| e.fields.is_empty()) {
                        return Err(DomainError::new(format!(
                            "'{}': parameter '{name}' points to structs; name their fields, as in {name}[n].x=[0,1]",
                            e.key()
                        ))
                        .into());
                    }
                    // Every entry must agree on the number of structs.
                    let mut count = None;
                    for e in &entries {
                        let n = match &e.count {
                            Some(_) => b.size(e, &e.count)?,
                            None => 1,
                        };
                        if count.is_some_and(|c| c != n) {
                            return Err(DomainError::new(format!(
                                "entries for '{name}' disagree on its number of elements"
                            ))
                            .into());
                        }
                        count = Some(n);
                    }
                    let n = count.unwrap_or(1);
                    b.sizes.insert(name.to_string(), n);
                    let mut used = vec![false; entries.len()];
                    let mut elems = Vec::with_capacity(n);
                    for _ in 0..n {
                        elems.push(b.strukt(name, sid, &[], &entries, &mut used, 0)?);
                    }
                    check_all_used(name, &entries, &used)?;
                    ArgValue::StructArray(elems)
                }
                Shape::Other => {
                    return Err(b.unsupported(
                        name,
                        ty,
                        "only pointers to integers, reals, structs or fixed-size arrays of integers or reals get a buffer",
                    ));
                }
            },
            Shape::Other => {
                return Err(b.unsupported(
                    name,
                    ty,
                    "it is not an integer, a real, a struct or a pointer",
                ));
            }
        };
        args.push(arg);
    }
    Ok(Inputs {
        head: head_id,
        args,
        sizes: b.sizes,
        seed,
    })
}

fn check_all_used(name: &str, entries: &[&Entry], used: &[bool]) -> Result<(), DriverError> {
    match entries.iter().zip(used).find(|(_, u)| !**u) {
        Some((e, _)) => Err(DomainError::new(format!(
            "'{}' does not name a field of parameter '{name}'",
            e.key()
        ))
        .into()),
        None => Ok(()),
    }
}

// ---------------------------------------------------------------------------
// Outputs
// ---------------------------------------------------------------------------

struct OutputWalker<'a> {
    program: &'a Program,
    slots: Vec<OutputSlot>,
}

impl OutputWalker<'_> {
    fn push(&mut self, label: String, kind: ScalarKind, root: OutputRoot, path: Vec<PathStep>) {
        self.slots.push(OutputSlot {
            label,
            kind,
            root,
            path,
        });
    }

    /// The fields of a struct at `label` / `path`; `value` supplies the
    /// lengths of pointer fields (absent for a returned struct).
    fn strukt(
        &mut self,
        sid: StructId,
        label: &str,
        root: OutputRoot,
        path: &[PathStep],
        value: Option<&StructValue>,
        depth: usize,
    ) {
        let program = self.program;
        if depth > 8 {
            return;
        }
        for (fi, field) in program.strukt(sid).fields.iter().enumerate() {
            let flabel = format!("{label}.{}", field.name);
            let mut fpath = path.to_vec();
            fpath.push(PathStep::Field(fi));
            let fvalue = value.and_then(|v| v.fields.get(fi));
            match shape(program, &field.ty.ty, 0) {
                Shape::Scalar(kind) => self.push(flabel, kind, root, fpath),
                Shape::Struct(inner) => {
                    let inner_value = match fvalue {
                        Some(FieldValue::Struct(s)) => Some(s),
                        _ => None,
                    };
                    self.strukt(inner, &flabel, root, &fpath, inner_value, depth + 1);
                }
                Shape::Sequence {
                    elem,
                    len,
                    is_pointer,
                } => {
                    let Shape::Scalar(kind) = *elem else { continue };
                    let n = if is_pointer {
                        match fvalue {
                            Some(FieldValue::RealPointer(v)) => v.len(),
                            Some(FieldValue::IntPointer(v)) => v.len(),
                            _ => continue,
                        }
                    } else {
                        len.unwrap_or(0).min(MAX_ELEMENTS as u64) as usize
                    };
                    for k in 0..n {
                        let mut epath = fpath.clone();
                        epath.push(PathStep::Index(k));
                        self.push(format!("{flabel}[{k}]"), kind, root, epath);
                    }
                }
                Shape::Other => {}
            }
        }
    }
}

/// The values the driver prints, in order (see the module documentation).
pub fn describe_outputs(program: &Program, inputs: &Inputs) -> Vec<OutputSlot> {
    let proc = program.proc(inputs.head);
    let mut w = OutputWalker {
        program,
        slots: Vec::new(),
    };
    match shape(program, &proc.ret.ty, 0) {
        Shape::Scalar(kind) => w.push(proc.name.clone(), kind, OutputRoot::Return, Vec::new()),
        Shape::Struct(sid) => w.strukt(sid, &proc.name, OutputRoot::Return, &[], None, 0),
        _ => {}
    }
    for (i, (&sym, arg)) in proc.params.iter().zip(&inputs.args).enumerate() {
        let name = &program.sym(sym).name;
        let root = OutputRoot::Param(i);
        match arg {
            ArgValue::RealArray(v) => {
                let kind = match flat_elem(program, &program.sym(sym).ty.ty)
                    .map(|(e, _)| shape(program, &e.ty, 0))
                {
                    Some(Shape::Scalar(k)) => k,
                    _ => ScalarKind::Real(RealKind::Double),
                };
                for k in 0..v.len() {
                    w.push(format!("{name}[{k}]"), kind, root, vec![PathStep::Index(k)]);
                }
            }
            ArgValue::IntArray(v) => {
                let kind = match flat_elem(program, &program.sym(sym).ty.ty)
                    .map(|(e, _)| shape(program, &e.ty, 0))
                {
                    Some(Shape::Scalar(k)) => k,
                    _ => ScalarKind::Int {
                        kind: IntKind::Int,
                        unsigned: false,
                    },
                };
                for k in 0..v.len() {
                    w.push(format!("{name}[{k}]"), kind, root, vec![PathStep::Index(k)]);
                }
            }
            ArgValue::StructArray(elems) => {
                for (k, s) in elems.iter().enumerate() {
                    w.strukt(
                        s.strukt,
                        &format!("{name}[{k}]"),
                        root,
                        &[PathStep::Index(k)],
                        Some(s),
                        0,
                    );
                }
            }
            ArgValue::Int(_) | ArgValue::Real(_) | ArgValue::Struct(_) => {}
        }
    }
    for sym in printable_globals(program) {
        let s = program.sym(sym);
        match shape(program, &s.ty.ty, 0) {
            Shape::Scalar(kind) => {
                w.push(s.name.clone(), kind, OutputRoot::Global(sym), Vec::new())
            }
            Shape::Sequence {
                elem,
                len: Some(n),
                is_pointer: false,
            } => {
                if let Shape::Scalar(kind) = *elem {
                    for k in 0..n.min(MAX_ELEMENTS as u64) as usize {
                        w.push(
                            format!("{}[{k}]", s.name),
                            kind,
                            OutputRoot::Global(sym),
                            vec![PathStep::Index(k)],
                        );
                    }
                }
            }
            _ => {}
        }
    }
    w.slots
}

/// Globals defined in the main file, in source order.
fn printable_globals(program: &Program) -> Vec<SymId> {
    let mut out = Vec::new();
    for item in &program.items {
        if item.file != program.main_file {
            continue;
        }
        if let ItemKind::Globals { storage, vars, .. } = &item.kind
            && *storage != Storage::Extern
        {
            out.extend(vars.iter().map(|d| d.sym));
        }
    }
    out
}

// ---------------------------------------------------------------------------
// Driver text
// ---------------------------------------------------------------------------

/// A C literal for an integer (the most negative `long long` has no
/// literal of its own).
pub(crate) fn int_literal(v: i64) -> String {
    if v == i64::MIN {
        "(-9223372036854775807LL - 1)".to_string()
    } else {
        v.to_string()
    }
}

/// An initialiser list, eight values a line.
fn init_list(values: &[String]) -> String {
    let mut s = String::from("{");
    for (i, v) in values.iter().enumerate() {
        if i % 8 == 0 {
            s.push_str("\n    ");
        } else {
            s.push(' ');
        }
        s.push_str(v);
        s.push(',');
    }
    s.push_str("\n}");
    s
}

struct DriverWriter<'a> {
    program: &'a Program,
    head: &'a str,
    /// File-scope declarations (buffers).
    decls: String,
    /// Statements of `main` that fill struct inputs.
    fills: String,
}

impl<'a> DriverWriter<'a> {
    fn type_name(&self, param: &str, ty: &Type) -> Result<String, DriverError> {
        c_type(self.program, ty).ok_or_else(|| self.unspellable(param, ty))
    }

    fn unspellable(&self, param: &str, ty: &Type) -> DriverError {
        DriverError::Unsupported {
            head: self.head.to_string(),
            param: param.to_string(),
            ty: describe_type(self.program, ty),
            why: "the driver cannot spell this type in C".to_string(),
        }
    }

    /// The element type of a pointer or array parameter / field.
    fn elem_type<'t>(&self, ty: &'t Type) -> Option<&'t Type>
    where
        'a: 't,
    {
        match self.program.resolve(ty) {
            Type::Pointer(t) => Some(&t.ty),
            Type::Array { elem, .. } => Some(&elem.ty),
            _ => None,
        }
    }

    fn buffer(&mut self, elem_c: &str, name: &str, values: Vec<String>) {
        let _ = writeln!(
            self.decls,
            "static {elem_c} {name}[{}] = {};",
            values.len(),
            init_list(&values)
        );
    }

    /// Fills struct `value` at lvalue `target` field by field; `buf` is the
    /// stem of names for the buffers of pointer fields.
    fn fill_struct(
        &mut self,
        param: &str,
        target: &str,
        buf: &str,
        value: &StructValue,
    ) -> Result<(), DriverError> {
        let program = self.program;
        let def = program.strukt(value.strukt);
        for (field, fv) in def.fields.iter().zip(&value.fields) {
            let lv = format!("{target}.{}", field.name);
            let stem = format!("{buf}_{}", field.name);
            match fv {
                FieldValue::Int(v) => {
                    let _ = writeln!(self.fills, "    {lv} = {};", int_literal(*v));
                }
                FieldValue::Real(v) => {
                    let _ = writeln!(self.fills, "    {lv} = {};", format_hex_float(*v));
                }
                FieldValue::RealArray(vs) => {
                    for (k, v) in vs.iter().enumerate() {
                        let _ = writeln!(self.fills, "    {lv}[{k}] = {};", format_hex_float(*v));
                    }
                }
                FieldValue::IntArray(vs) => {
                    for (k, v) in vs.iter().enumerate() {
                        let _ = writeln!(self.fills, "    {lv}[{k}] = {};", int_literal(*v));
                    }
                }
                FieldValue::RealPointer(_) | FieldValue::IntPointer(_) => {
                    let elem =
                        self.elem_type(&field.ty.ty)
                            .ok_or_else(|| DriverError::Unsupported {
                                head: self.head.to_string(),
                                param: param.to_string(),
                                ty: describe_type(program, &field.ty.ty),
                                why: format!("field '{lv}' is not a pointer"),
                            })?;
                    let elem_c = self.type_name(param, elem)?;
                    let values = match fv {
                        FieldValue::RealPointer(vs) => {
                            vs.iter().map(|v| format_hex_float(*v)).collect()
                        }
                        FieldValue::IntPointer(vs) => vs.iter().map(|v| int_literal(*v)).collect(),
                        _ => Vec::new(),
                    };
                    self.buffer(&elem_c, &stem, values);
                    let _ = writeln!(self.fills, "    {lv} = {stem};");
                }
                FieldValue::Struct(inner) => self.fill_struct(param, &lv, &stem, inner)?,
            }
        }
        Ok(())
    }
}

/// The C expression, in the driver, of an output slot.
fn slot_expr(program: &Program, inputs: &Inputs, slot: &OutputSlot) -> String {
    let proc = program.proc(inputs.head);
    let mut s = match slot.root {
        OutputRoot::Return => RESULT_VAR.to_string(),
        OutputRoot::Param(i) => param_var(&program.sym(proc.params[i]).name),
        OutputRoot::Global(sym) => program.sym(sym).name.clone(),
    };
    let mut sid: Option<StructId> = None;
    let mut ty: Option<Type> = match slot.root {
        OutputRoot::Return => Some(proc.ret.ty.clone()),
        OutputRoot::Param(i) => Some(program.sym(proc.params[i]).ty.ty.clone()),
        OutputRoot::Global(sym) => Some(program.sym(sym).ty.ty.clone()),
    };
    for step in &slot.path {
        match step {
            PathStep::Index(k) => {
                let _ = write!(s, "[{k}]");
                ty = ty.and_then(|t| match program.resolve(&t) {
                    Type::Pointer(e) => Some(e.ty.clone()),
                    Type::Array { elem, .. } => Some(elem.ty.clone()),
                    _ => None,
                });
            }
            PathStep::Field(f) => {
                if let Some(Type::Struct(id)) = ty.as_ref().map(|t| program.resolve(t)) {
                    sid = Some(*id);
                }
                let field = sid.and_then(|id| program.strukt(id).fields.get(*f));
                match field {
                    Some(field) => {
                        let _ = write!(s, ".{}", field.name);
                        ty = Some(field.ty.ty.clone());
                    }
                    None => ty = None,
                }
            }
        }
    }
    s
}

const RESULT_VAR: &str = "aioli_result";

fn param_var(name: &str) -> String {
    format!("aioli_in_{name}")
}

/// The C source of a driver that `#include`s `include_path`, calls the head
/// with `inputs` and prints [`describe_outputs`] one value per line.
pub fn generate_driver(
    program: &Program,
    inputs: &Inputs,
    include_path: &Path,
) -> Result<String, DriverError> {
    if program
        .procs
        .iter()
        .any(|p| p.name == "main" && p.body.is_some())
    {
        return Err(DriverError::DefinesMain);
    }
    let proc = program.proc(inputs.head);
    let mut w = DriverWriter {
        program,
        head: &proc.name,
        decls: String::new(),
        fills: String::new(),
    };
    let mut call_args = Vec::with_capacity(inputs.args.len());
    for (&sym, arg) in proc.params.iter().zip(&inputs.args) {
        let s = program.sym(sym);
        let var = param_var(&s.name);
        match arg {
            ArgValue::Int(v) => call_args.push(int_literal(*v)),
            ArgValue::Real(v) => call_args.push(format_hex_float(*v)),
            ArgValue::RealArray(_) | ArgValue::IntArray(_) => {
                let elem = flat_elem(program, &s.ty.ty)
                    .map(|(e, _)| e.ty.clone())
                    .unwrap_or(Type::Void);
                let t = w.type_name(&s.name, &elem)?;
                let values = match arg {
                    ArgValue::RealArray(vs) => vs.iter().map(|v| format_hex_float(*v)).collect(),
                    ArgValue::IntArray(vs) => vs.iter().map(|v| int_literal(*v)).collect(),
                    _ => Vec::new(),
                };
                w.buffer(&t, &var, values);
                let arg = pass_flat(program, &s.ty.ty, &var)
                    .ok_or_else(|| w.unspellable(&s.name, &s.ty.ty))?;
                call_args.push(arg);
            }
            ArgValue::Struct(v) => {
                let t = w.type_name(&s.name, &s.ty.ty)?;
                let _ = writeln!(w.decls, "static {t} {var};");
                w.fill_struct(&s.name, &var, &var, v)?;
                call_args.push(var);
            }
            ArgValue::StructArray(elems) => {
                let elem = w.elem_type(&s.ty.ty).cloned().unwrap_or(Type::Void);
                let t = w.type_name(&s.name, &elem)?;
                let _ = writeln!(w.decls, "static {t} {var}[{}];", elems.len());
                for (k, e) in elems.iter().enumerate() {
                    w.fill_struct(&s.name, &format!("{var}[{k}]"), &format!("{var}_{k}"), e)?;
                }
                call_args.push(var);
            }
        }
    }
    let slots = describe_outputs(program, inputs);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "/* Driver generated by aioli for '{}' (seed {}).\n * Prints {} values, one a line, in the order of check::driver::describe_outputs. */",
        proc.name,
        inputs.seed,
        slots.len()
    );
    out.push_str("#include <stdio.h>\n");
    let path = include_path
        .to_string_lossy()
        .replace('\\', "\\\\")
        .replace('"', "\\\"");
    let _ = writeln!(out, "#include \"{path}\"\n");
    out.push_str(&w.decls);
    out.push_str("\nint main(void)\n{\n");
    out.push_str(&w.fills);
    let call = format!("{}({})", proc.name, call_args.join(", "));
    match program.resolve(&proc.ret.ty) {
        Type::Void => {
            let _ = writeln!(out, "    {call};");
        }
        ret => {
            let _ = ret;
            let t = w.type_name(&proc.name, &proc.ret.ty)?;
            let _ = writeln!(out, "    {t} {RESULT_VAR} = {call};");
        }
    }
    for slot in &slots {
        let e = slot_expr(program, inputs, slot);
        match slot.kind {
            ScalarKind::Real(_) => {
                let _ = writeln!(out, "    printf(\"%a\\n\", (double)({e}));");
            }
            ScalarKind::Int { .. } => {
                let _ = writeln!(out, "    printf(\"%ld\\n\", (long)({e}));");
            }
        }
    }
    out.push_str("    return 0;\n}\n");
    Ok(out)
}
