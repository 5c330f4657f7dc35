//! The IL interpreter: the oracle of aioli's property tests.
//!
//! It runs an [`il::Program`](crate::il::Program) with the semantics of the
//! C it came from, as gcc compiles it for x86-64 without fast-math: the same
//! integer widths and wrapping, the usual arithmetic conversions (implicit in
//! the IL: every expression's type is the converted one), `float` results
//! rounded to single precision, and the C library's own math functions, so
//! that results agree with the compiled program bit for bit. Instantiated
//! with [`Dual`] numbers it computes exact tangents.
//!
//! Memory is byte-addressed (see [`memory`]): every global, local variable,
//! parameter, heap block and string literal is an allocation, so `&x`,
//! pointer arithmetic, structs and arrays of structs work as in C, and
//! out-of-bounds accesses, reads of uninitialised memory, use after free and
//! double free are reported as [`Error`]s rather than undefined behaviour.
//!
//! A driver sets inputs with [`Machine::alloc_reals`] and friends, calls a
//! procedure with [`Machine::call`], and reads results back:
//!
//! ```text
//! let mut m = Machine::<f64>::new(&program, Config { fuel: 10_000_000 })?;
//! let x = m.alloc_reals(&QualType::double(), &[1.0, 2.0]);
//! let r = m.call("f", vec![Value::Int(2), x])?;
//! let xs = m.read_reals(x, &QualType::double(), 2)?;
//! ```
//!
//! Adjoint programs call the runtime's stack (`aioli_push_real8`, …, see
//! `src/runtime/aioli.h`) through bodiless procedures of those names, which
//! the machine runs as builtins on a stack of its own (see `stack.rs`).
//!
//! Struct values are represented by a pointer to their storage: to pass a
//! struct by value, pass `Value::Ptr` to a struct built with
//! [`Machine::alloc_zeroed`] and [`Machine::write`]; a struct returned by
//! value comes back as a pointer to a fresh copy.

mod exec;
pub mod memory;
mod printf;
pub mod real;
mod stack;
pub mod value;

pub use real::{Dual, Real};
pub use value::{IntTy, Pointer, Scalar, Value};

use crate::front::source::Span;
use crate::il::{Program, QualType, StructId, SymId};
use memory::{AllocKind, Memory};
use std::collections::HashMap;

/// Limits of a run.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    /// The number of statements (and loop iterations) the machine may
    /// execute in total before failing with [`ErrorKind::StepLimit`].
    pub fuel: u64,
}

impl Default for Config {
    fn default() -> Config {
        Config { fuel: 10_000_000 }
    }
}

/// The deepest call nesting allowed; deeper recursion fails with
/// [`ErrorKind::CallDepth`] instead of overflowing the host's stack.
pub const MAX_CALL_DEPTH: usize = 200;

/// What went wrong.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ErrorKind {
    #[error("read of uninitialised memory")]
    Uninit,
    #[error("memory read with a type other than the one written (type punning)")]
    TypePun,
    #[error("out-of-bounds access: {len} bytes at offset {offset} of a {size}-byte object")]
    OutOfBounds { offset: i64, len: u64, size: u64 },
    #[error("use of memory after it was freed or went out of scope")]
    UseAfterFree,
    #[error("double free")]
    DoubleFree,
    #[error("free of a pointer that malloc did not return")]
    InvalidFree,
    #[error("null pointer dereference")]
    NullDeref,
    #[error("invalid pointer")]
    InvalidPointer,
    #[error("step limit exceeded")]
    StepLimit,
    #[error("call depth limit exceeded")]
    CallDepth,
    #[error("integer division by zero")]
    DivisionByZero,
    #[error("library function '{0}' is not supported by the interpreter")]
    UnsupportedLibrary(String),
    #[error("no procedure named '{0}'")]
    UnknownProcedure(String),
    #[error("procedure '{0}' has no body")]
    NoBody(String),
    #[error("'{name}' takes {expected} arguments, {got} given")]
    Arity {
        name: String,
        expected: usize,
        got: usize,
    },
    #[error("no global variable named '{0}'")]
    UnknownGlobal(String),
    #[error("type error: {0}")]
    Type(String),
    #[error("not supported by the interpreter: {0}")]
    Unsupported(String),
    #[error("printf: {0}")]
    Printf(String),
    /// A misuse of the adjoint stack (`aioli_push_*` / `aioli_pop_*`): a
    /// pop from an empty stack, or one that does not mirror its push.
    #[error("adjoint stack: {0}")]
    AdjointStack(String),
    /// Not a failure: the program called `exit(status)`.
    #[error("the program called exit({0})")]
    Exit(i32),
    /// The program's `assert` found its condition false.
    #[error("assertion failed")]
    AssertionFailed,
}

/// An error with the span of the statement that caused it (the default span
/// for errors of the driver API).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{kind}")]
pub struct Error {
    pub kind: ErrorKind,
    pub span: Span,
}

impl Error {
    fn at(kind: ErrorKind, span: Span) -> Error {
        Error { kind, span }
    }
}

impl From<ErrorKind> for Error {
    fn from(kind: ErrorKind) -> Error {
        Error {
            kind,
            span: Span::default(),
        }
    }
}

/// The variables of one procedure activation.
#[derive(Default)]
struct Frame {
    vars: HashMap<SymId, Pointer>,
    /// Storage of the variables declared so far, innermost last, so that
    /// leaving a block ends the lifetime of its variables.
    locals: Vec<Pointer>,
}

/// An interpreter for one program, with its memory and output.
pub struct Machine<'p, R: Real> {
    program: &'p Program,
    fuel: u64,
    steps: u64,
    mem: Memory<R>,
    globals: HashMap<SymId, Pointer>,
    statics: HashMap<SymId, Pointer>,
    strings: HashMap<String, Pointer>,
    frames: Vec<Frame>,
    stdout: String,
    stderr: String,
    stdout_stream: Pointer,
    stderr_stream: Pointer,
    stdin_stream: Pointer,
    span: Span,
    /// The adjoint stack of the runtime's builtins (see [`stack`]).
    stack: stack::Stack<R>,
}

impl<'p, R: Real> Machine<'p, R> {
    /// A machine with every global allocated (zero-initialised, as static
    /// storage is in C) and then initialised from its initializer.
    pub fn new(program: &'p Program, config: Config) -> Result<Machine<'p, R>, Error> {
        let mut mem = Memory::new();
        let stdout_stream = mem.allocate(0, AllocKind::Stream, true);
        let stderr_stream = mem.allocate(0, AllocKind::Stream, true);
        let stdin_stream = mem.allocate(0, AllocKind::Stream, true);
        let mut m = Machine {
            program,
            fuel: config.fuel,
            steps: 0,
            mem,
            globals: HashMap::new(),
            statics: HashMap::new(),
            strings: HashMap::new(),
            frames: Vec::new(),
            stdout: String::new(),
            stderr: String::new(),
            stdout_stream,
            stderr_stream,
            stdin_stream,
            span: Span::default(),
            stack: stack::Stack::default(),
        };
        m.init_globals()?;
        Ok(m)
    }

    /// Calls the procedure `name` with arguments given in the parameters'
    /// types (an `Int` passed for a real parameter is converted; a struct
    /// parameter takes a pointer to the struct to copy). Returns its result,
    /// `Value::Uninit` for `void`.
    pub fn call(&mut self, name: &str, args: Vec<Value<R>>) -> Result<Value<R>, Error> {
        let id = self
            .program
            .proc_by_name(name)
            .ok_or_else(|| ErrorKind::UnknownProcedure(name.to_string()))?;
        let proc = self.program.proc(id);
        if args.len() != proc.params.len() {
            return Err(ErrorKind::Arity {
                name: name.to_string(),
                expected: proc.params.len(),
                got: args.len(),
            }
            .into());
        }
        let mut converted = Vec::with_capacity(args.len());
        for (v, p) in args.into_iter().zip(&proc.params) {
            let ty = self.storage_type(*p);
            converted.push(self.coerce(v, &ty)?);
        }
        self.frames.clear();
        self.call_proc(id, converted)
    }

    /// Allocates an array holding `values` as elements of the real type
    /// `elem` (rounded to `float` if that is the type).
    pub fn alloc_reals(&mut self, elem: &QualType, values: &[f64]) -> Value<R> {
        let rs: Vec<R> = values.iter().map(|v| R::from_f64(*v)).collect();
        self.alloc_real_values(elem, &rs)
    }

    /// Like [`Machine::alloc_reals`], from numbers of the machine's type
    /// (dual numbers carrying tangent seeds).
    pub fn alloc_real_values(&mut self, elem: &QualType, values: &[R]) -> Value<R> {
        let vals: Vec<Value<R>> = values.iter().map(|r| Value::Real(*r)).collect();
        self.alloc_scalars(elem, &vals)
    }

    /// Allocates an array holding `values` as elements of the integer type
    /// `elem`.
    pub fn alloc_ints(&mut self, elem: &QualType, values: &[i64]) -> Value<R> {
        let vals: Vec<Value<R>> = values.iter().map(|i| Value::Int(*i)).collect();
        self.alloc_scalars(elem, &vals)
    }

    fn alloc_scalars(&mut self, elem: &QualType, values: &[Value<R>]) -> Value<R> {
        let size = self.program.size_align(&elem.ty).0;
        let p = self.mem.allocate(
            size.saturating_mul(values.len() as u64),
            AllocKind::Heap,
            false,
        );
        for (i, v) in values.iter().enumerate() {
            let q = p.add_bytes((i as u64 * size) as i64);
            // Values the element type cannot hold stay uninitialised, and
            // reading them reports it.
            let _ = self.write(Value::Ptr(q), elem, *v);
        }
        Value::Ptr(p)
    }

    /// Allocates `count` zero-initialised elements of `elem` (e.g. a struct
    /// to fill with [`Machine::write`]).
    pub fn alloc_zeroed(&mut self, elem: &QualType, count: u64) -> Value<R> {
        let size = self.program.size_align(&elem.ty).0;
        Value::Ptr(
            self.mem
                .allocate(size.saturating_mul(count), AllocKind::Heap, true),
        )
    }

    /// Allocates `count` uninitialised elements of `elem`.
    pub fn alloc_uninit(&mut self, elem: &QualType, count: u64) -> Value<R> {
        let size = self.program.size_align(&elem.ty).0;
        Value::Ptr(
            self.mem
                .allocate(size.saturating_mul(count), AllocKind::Heap, false),
        )
    }

    /// A pointer to element `index` of an array of `elem` at `base`.
    pub fn elem_ptr(&self, base: Value<R>, elem: &QualType, index: i64) -> Result<Value<R>, Error> {
        let p = expect_ptr(base)?;
        let size = self.program.size_align(&elem.ty).0 as i64;
        Ok(Value::Ptr(p.add_bytes(index.wrapping_mul(size))))
    }

    /// A pointer to field `field` of the struct `strukt` at `base`.
    pub fn field_ptr(
        &self,
        base: Value<R>,
        strukt: StructId,
        field: usize,
    ) -> Result<Value<R>, Error> {
        let p = expect_ptr(base)?;
        let off = self.program.field_offset(strukt, field) as i64;
        Ok(Value::Ptr(p.add_bytes(off)))
    }

    /// Like [`Machine::field_ptr`], naming the field.
    pub fn field_ptr_by_name(
        &self,
        base: Value<R>,
        strukt: StructId,
        field: &str,
    ) -> Result<Value<R>, Error> {
        let index = self
            .program
            .strukt(strukt)
            .fields
            .iter()
            .position(|f| f.name == field)
            .ok_or_else(|| ErrorKind::Type(format!("no field '{field}'")))?;
        self.field_ptr(base, strukt, index)
    }

    /// Stores `value` (converted to the scalar type `ty`) at `at`.
    pub fn write(&mut self, at: Value<R>, ty: &QualType, value: Value<R>) -> Result<(), Error> {
        let p = expect_ptr(at)?;
        let v = self.coerce(value, &ty.ty)?;
        let scalar = self.scalar_of(&ty.ty)?;
        self.mem.write(p, scalar, v)?;
        Ok(())
    }

    /// Loads the scalar of type `ty` at `at`.
    pub fn read(&self, at: Value<R>, ty: &QualType) -> Result<Value<R>, Error> {
        let p = expect_ptr(at)?;
        let scalar = self.scalar_of(&ty.ty)?;
        Ok(self.mem.read(p, scalar)?)
    }

    /// Reads `n` reals of type `elem` from the array at `at`.
    pub fn read_reals(&self, at: Value<R>, elem: &QualType, n: usize) -> Result<Vec<R>, Error> {
        (0..n)
            .map(|i| {
                let q = self.elem_ptr(at, elem, i as i64)?;
                match self.read(q, elem)? {
                    Value::Real(r) => Ok(r),
                    other => {
                        Err(ErrorKind::Type(format!("expected a real, found {other:?}")).into())
                    }
                }
            })
            .collect()
    }

    /// Reads `n` integers of type `elem` from the array at `at`.
    pub fn read_ints(&self, at: Value<R>, elem: &QualType, n: usize) -> Result<Vec<i64>, Error> {
        (0..n)
            .map(|i| {
                let q = self.elem_ptr(at, elem, i as i64)?;
                match self.read(q, elem)? {
                    Value::Int(v) => Ok(v),
                    other => {
                        Err(ErrorKind::Type(format!("expected an integer, found {other:?}")).into())
                    }
                }
            })
            .collect()
    }

    /// The address of a global variable (for arrays and structs).
    pub fn global_ptr(&self, name: &str) -> Result<Value<R>, Error> {
        let id = self
            .program
            .global_by_name(name)
            .ok_or_else(|| ErrorKind::UnknownGlobal(name.to_string()))?;
        let p = self
            .globals
            .get(&id)
            .ok_or_else(|| ErrorKind::UnknownGlobal(name.to_string()))?;
        Ok(Value::Ptr(*p))
    }

    /// The value of a scalar global variable.
    pub fn read_global(&self, name: &str) -> Result<Value<R>, Error> {
        let p = self.global_ptr(name)?;
        let id = self
            .program
            .global_by_name(name)
            .ok_or_else(|| ErrorKind::UnknownGlobal(name.to_string()))?;
        self.read(p, &self.program.sym(id).ty)
    }

    /// Sets a scalar global variable.
    pub fn write_global(&mut self, name: &str, value: Value<R>) -> Result<(), Error> {
        let p = self.global_ptr(name)?;
        let id = self
            .program
            .global_by_name(name)
            .ok_or_else(|| ErrorKind::UnknownGlobal(name.to_string()))?;
        let ty = self.program.sym(id).ty.clone();
        self.write(p, &ty, value)
    }

    /// Frees a block made by the driver or by the program's `malloc`.
    pub fn free(&mut self, p: Value<R>) -> Result<(), Error> {
        let p = expect_ptr(p)?;
        Ok(self.mem.free(p)?)
    }

    /// What the program printed to `stdout`.
    pub fn output(&self) -> &str {
        &self.stdout
    }

    /// What the program printed to `stderr`.
    pub fn error_output(&self) -> &str {
        &self.stderr
    }

    /// The number of items on the adjoint stack (`aioli_push_*` calls not
    /// yet popped); an adjoint run should leave it as it found it.
    pub fn stack_depth(&self) -> usize {
        self.stack.depth()
    }

    /// The adjoint stack's statistics, as `aioli_stack_stats` reports them:
    /// total bytes pushed and peak size in bytes since the machine was made
    /// or `aioli_stack_reset_stats` was last called.
    pub fn stack_stats(&self) -> (u64, u64) {
        self.stack.stats()
    }

    /// Statements executed so far.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// Sets the remaining step budget.
    pub fn set_fuel(&mut self, fuel: u64) {
        self.fuel = fuel;
    }
}

fn expect_ptr<R: Copy + std::fmt::Debug>(v: Value<R>) -> Result<Pointer, Error> {
    match v {
        Value::Ptr(p) => Ok(p),
        other => Err(ErrorKind::Type(format!("expected a pointer, found {other:?}")).into()),
    }
}
