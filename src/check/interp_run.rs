//! Runs a head procedure in the IL interpreter the way the generated C
//! driver runs it, and prints the same text.
//!
//! [`run_in_interpreter`] mirrors [`generate_driver`](super::driver::generate_driver):
//!
//! - an array parameter gets a buffer of exactly the evaluated size holding
//!   the input values (the driver's `static T aioli_in_x[n] = {...}`);
//! - a struct parameter (by value or through a pointer) gets zeroed storage
//!   (the driver's buffers are `static`, hence zero-initialised), filled
//!   field by field; a pointer field points to its own buffer holding the
//!   field's values;
//! - the head is called once, then every [`OutputSlot`] is read by
//!   following its root and path and printed one per line, reals as
//!   `printf("%a")` prints them and integers as `printf("%ld")`.
//!
//! Whatever the program itself printed to `stdout` comes first, as it does
//! in the driver's output, so that the returned text is byte-identical to
//! the driver's standard output.

use super::driver::{
    ArgValue, FieldValue, Inputs, OutputRoot, OutputSlot, PathStep, ScalarKind, StructValue,
};
use crate::il::{Program, QualType, Type};
use crate::interp::{Config, ErrorKind, Machine, Value};

/// Why the interpreter could not produce the driver's output.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum InterpRunError {
    /// The interpreter failed (out-of-bounds access, uninitialised read,
    /// step limit, unsupported library function, ...).
    #[error("interpreter error {during}: {message}")]
    Interp { during: String, message: String },
    /// The program called `exit(status)`; `stdout` is what it printed
    /// before (the driver prints the same and exits with that status).
    #[error("the program called exit({status})")]
    Exit { status: i32, stdout: String },
    /// An argument or output the runner cannot build or read.
    #[error("unsupported {what}: {why}")]
    Unsupported { what: String, why: String },
}

fn interp_error(during: impl Into<String>, e: crate::interp::Error) -> InterpRunError {
    InterpRunError::Interp {
        during: during.into(),
        message: e.to_string(),
    }
}

fn unsupported(what: impl Into<String>, why: impl Into<String>) -> InterpRunError {
    InterpRunError::Unsupported {
        what: what.into(),
        why: why.into(),
    }
}

/// The element type of a pointer or array type.
fn elem_type(program: &Program, ty: &Type) -> Option<QualType> {
    match program.resolve(ty) {
        Type::Pointer(t) => Some((**t).clone()),
        Type::Array { elem, .. } => Some((**elem).clone()),
        _ => None,
    }
}

/// The elements of a pointer parameter's buffer: what it points to, through
/// rows of fixed length (`double (*A)[2]`: doubles), as the driver lays
/// them out ([`super::driver::flat_elem`]).
fn buffer_elem(program: &Program, ty: &Type) -> Option<QualType> {
    super::driver::flat_elem(program, ty).map(|(e, _)| e.clone())
}

struct Runner<'a, 'p> {
    program: &'p Program,
    m: &'a mut Machine<'p, f64>,
}

impl Runner<'_, '_> {
    /// Fills the struct `value` stored at `base` field by field.
    fn fill_struct(
        &mut self,
        what: &str,
        base: Value<f64>,
        value: &StructValue,
    ) -> Result<(), InterpRunError> {
        let program = self.program;
        let def = program.strukt(value.strukt);
        if def.fields.len() != value.fields.len() {
            return Err(unsupported(
                what,
                "the struct value does not have one value per field",
            ));
        }
        for (fi, (field, fv)) in def.fields.iter().zip(&value.fields).enumerate() {
            let fwhat = format!("{what}.{}", field.name);
            let during = || format!("while filling '{fwhat}'");
            let fp = self
                .m
                .field_ptr(base, value.strukt, fi)
                .map_err(|e| interp_error(during(), e))?;
            match fv {
                FieldValue::Int(v) => self
                    .m
                    .write(fp, &field.ty, Value::Int(*v))
                    .map_err(|e| interp_error(during(), e))?,
                FieldValue::Real(v) => self
                    .m
                    .write(fp, &field.ty, Value::Real(*v))
                    .map_err(|e| interp_error(during(), e))?,
                FieldValue::RealArray(_) | FieldValue::IntArray(_) => {
                    let elem = elem_type(program, &field.ty.ty)
                        .ok_or_else(|| unsupported(&fwhat, "the field is not an array"))?;
                    let values: Vec<Value<f64>> = match fv {
                        FieldValue::RealArray(vs) => vs.iter().map(|v| Value::Real(*v)).collect(),
                        FieldValue::IntArray(vs) => vs.iter().map(|v| Value::Int(*v)).collect(),
                        _ => Vec::new(),
                    };
                    for (k, v) in values.into_iter().enumerate() {
                        let q = self
                            .m
                            .elem_ptr(fp, &elem, k as i64)
                            .map_err(|e| interp_error(during(), e))?;
                        self.m
                            .write(q, &elem, v)
                            .map_err(|e| interp_error(during(), e))?;
                    }
                }
                FieldValue::RealPointer(vs) => {
                    let elem = elem_type(program, &field.ty.ty)
                        .ok_or_else(|| unsupported(&fwhat, "the field is not a pointer"))?;
                    let buf = self.m.alloc_reals(&elem, vs);
                    self.m
                        .write(fp, &field.ty, buf)
                        .map_err(|e| interp_error(during(), e))?;
                }
                FieldValue::IntPointer(vs) => {
                    let elem = elem_type(program, &field.ty.ty)
                        .ok_or_else(|| unsupported(&fwhat, "the field is not a pointer"))?;
                    let buf = self.m.alloc_ints(&elem, vs);
                    self.m
                        .write(fp, &field.ty, buf)
                        .map_err(|e| interp_error(during(), e))?;
                }
                FieldValue::Struct(inner) => self.fill_struct(&fwhat, fp, inner)?,
            }
        }
        Ok(())
    }
}

/// Where a path has got to while reading an output slot.
enum Place {
    /// A value already in hand (a scalar returned by the head).
    Value(Value<f64>),
    /// A buffer given to a pointer parameter, indexed by the next step.
    Buffer(Value<f64>, QualType),
    /// An object of type `ty` stored at a pointer.
    Object(Value<f64>, QualType),
}

/// Calls the head with `inputs` in the interpreter, builds every argument
/// as the C driver does, and returns the text the driver prints: what the
/// program itself wrote to `stdout`, then one line per slot of `slots`
/// (normally [`describe_outputs`](super::driver::describe_outputs)).
pub fn run_in_interpreter(
    program: &Program,
    inputs: &Inputs,
    slots: &[OutputSlot],
    fuel: u64,
) -> Result<String, InterpRunError> {
    let proc = program.proc(inputs.head);
    if program.proc_by_name(&proc.name) != Some(inputs.head) {
        return Err(unsupported(
            format!("head '{}'", proc.name),
            "another procedure of that name comes first in the program",
        ));
    }
    if proc.params.len() != inputs.args.len() {
        return Err(unsupported(
            format!("call of '{}'", proc.name),
            format!(
                "{} parameters but {} arguments",
                proc.params.len(),
                inputs.args.len()
            ),
        ));
    }
    let mut m = Machine::<f64>::new(program, Config { fuel })
        .map_err(|e| interp_error("while initialising globals", e))?;
    let mut runner = Runner { program, m: &mut m };

    // Arguments, as the driver builds them.
    let mut args = Vec::with_capacity(inputs.args.len());
    for (&sym, arg) in proc.params.iter().zip(&inputs.args) {
        let s = program.sym(sym);
        let what = format!("parameter '{}'", s.name);
        let elem = || {
            buffer_elem(program, &s.ty.ty)
                .ok_or_else(|| unsupported(&what, "an array value for a non-pointer parameter"))
        };
        let v = match arg {
            ArgValue::Int(v) => Value::Int(*v),
            ArgValue::Real(v) => Value::Real(*v),
            ArgValue::RealArray(vs) => runner.m.alloc_reals(&elem()?, vs),
            ArgValue::IntArray(vs) => runner.m.alloc_ints(&elem()?, vs),
            ArgValue::Struct(sv) => {
                let storage = runner.m.alloc_zeroed(&s.ty, 1);
                runner.fill_struct(&s.name, storage, sv)?;
                storage
            }
            ArgValue::StructArray(elems) => {
                let ety = elem()?;
                let storage = runner.m.alloc_zeroed(&ety, elems.len() as u64);
                for (k, sv) in elems.iter().enumerate() {
                    let at = runner
                        .m
                        .elem_ptr(storage, &ety, k as i64)
                        .map_err(|e| interp_error(format!("while building '{}'", s.name), e))?;
                    runner.fill_struct(&format!("{}[{k}]", s.name), at, sv)?;
                }
                storage
            }
        };
        args.push(v);
    }
    let arg_values = args.clone();

    let result = match m.call(&proc.name, args) {
        Ok(v) => v,
        Err(e) => {
            if let ErrorKind::Exit(status) = e.kind {
                return Err(InterpRunError::Exit {
                    status,
                    stdout: m.output().to_string(),
                });
            }
            return Err(interp_error(format!("while running '{}'", proc.name), e));
        }
    };

    let mut out = m.output().to_string();
    for slot in slots {
        let during = || format!("while reading output '{}'", slot.label);
        let mut place = match slot.root {
            OutputRoot::Return => {
                if matches!(program.resolve(&proc.ret.ty), Type::Struct(_)) {
                    Place::Object(result, proc.ret.clone())
                } else {
                    Place::Value(result)
                }
            }
            OutputRoot::Param(i) => {
                let (Some(&sym), Some(&v)) = (proc.params.get(i), arg_values.get(i)) else {
                    return Err(unsupported(
                        format!("output '{}'", slot.label),
                        format!("no parameter {i}"),
                    ));
                };
                let s = program.sym(sym);
                match buffer_elem(program, &s.ty.ty) {
                    Some(elem) => Place::Buffer(v, elem),
                    // A struct by value: the caller's copy.
                    None => Place::Object(v, s.ty.clone()),
                }
            }
            OutputRoot::Global(sym) => {
                let s = program.sym(sym);
                if program.global_by_name(&s.name) != Some(sym) {
                    return Err(unsupported(
                        format!("output '{}'", slot.label),
                        "the global's name does not find it in the global scope",
                    ));
                }
                let p = m
                    .global_ptr(&s.name)
                    .map_err(|e| interp_error(during(), e))?;
                Place::Object(p, s.ty.clone())
            }
        };
        for step in &slot.path {
            place = match (place, *step) {
                (Place::Buffer(p, elem), PathStep::Index(k)) => {
                    let q = m
                        .elem_ptr(p, &elem, k as i64)
                        .map_err(|e| interp_error(during(), e))?;
                    Place::Object(q, elem)
                }
                (Place::Object(p, ty), PathStep::Index(k)) => match program.resolve(&ty.ty) {
                    Type::Array { elem, .. } => {
                        let elem = (**elem).clone();
                        let q = m
                            .elem_ptr(p, &elem, k as i64)
                            .map_err(|e| interp_error(during(), e))?;
                        Place::Object(q, elem)
                    }
                    Type::Pointer(elem) => {
                        let elem = (**elem).clone();
                        let buf = m.read(p, &ty).map_err(|e| interp_error(during(), e))?;
                        let q = m
                            .elem_ptr(buf, &elem, k as i64)
                            .map_err(|e| interp_error(during(), e))?;
                        Place::Object(q, elem)
                    }
                    _ => {
                        return Err(unsupported(
                            format!("output '{}'", slot.label),
                            "an index step on something that is not an array or pointer",
                        ));
                    }
                },
                (Place::Object(p, ty), PathStep::Field(f)) => match program.resolve(&ty.ty) {
                    Type::Struct(sid) => {
                        let sid = *sid;
                        let field = program.strukt(sid).fields.get(f).ok_or_else(|| {
                            unsupported(format!("output '{}'", slot.label), format!("no field {f}"))
                        })?;
                        let q = m
                            .field_ptr(p, sid, f)
                            .map_err(|e| interp_error(during(), e))?;
                        Place::Object(q, field.ty.clone())
                    }
                    _ => {
                        return Err(unsupported(
                            format!("output '{}'", slot.label),
                            "a field step on something that is not a struct",
                        ));
                    }
                },
                (Place::Value(_), _) | (Place::Buffer(..), PathStep::Field(_)) => {
                    return Err(unsupported(
                        format!("output '{}'", slot.label),
                        "a path step the value does not have",
                    ));
                }
            };
        }
        let value = match place {
            Place::Value(v) => v,
            Place::Object(p, ty) => m.read(p, &ty).map_err(|e| interp_error(during(), e))?,
            Place::Buffer(..) => {
                return Err(unsupported(
                    format!("output '{}'", slot.label),
                    "the path ends at a buffer, not at a scalar",
                ));
            }
        };
        let line = match (slot.kind, value) {
            // `printf("%ld", (long)v)`: the integer itself (formatting it
            // through an `f64` would round integers beyond 2^53).
            (ScalarKind::Int { .. }, Value::Int(i)) => i.to_string(),
            (ScalarKind::Int { .. }, Value::Real(r)) => slot.format(r),
            (ScalarKind::Real(_), Value::Real(r)) => slot.format(r),
            (ScalarKind::Real(_), Value::Int(i)) => slot.format(i as f64),
            (_, other) => {
                return Err(unsupported(
                    format!("output '{}'", slot.label),
                    format!("the interpreter holds {other:?} there"),
                ));
            }
        };
        out.push_str(&line);
        out.push('\n');
    }
    Ok(out)
}
