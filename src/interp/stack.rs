//! The adjoint stack of the C runtime (`src/runtime/aioli.h`) as builtins of
//! the interpreter, so that adjoint programs run in the IL as they do when
//! compiled and linked with `aioli.c`.
//!
//! Adjoint programs declare the runtime's functions as bodiless procedures
//! and call them like any other; a call of a bodiless procedure with one of
//! these names runs here. The machine keeps one last-in first-out stack of
//! entries for the whole run (it survives [`Machine::call`], so a split
//! adjoint's `f_fwd` and `f_bwd` may be called one after the other). Values
//! are kept as the interpreter's [`Value`]s, so dual numbers and pointers
//! come back exactly; an array is copied, cells and all, into a hidden
//! allocation and back.
//!
//! The interpreter is stricter than the C runtime, which only moves bytes:
//! each pop must name the type (and, for control markers and arrays, the
//! width or size) of the push it undoes, and popping an empty stack is an
//! [`ErrorKind::AdjointStack`] rather than an abort. The statistics count
//! as the C runtime does: the C sizes of the values (a pointer is 8 bytes),
//! and control markers as bits, a byte count being the bit count divided by
//! 8, rounded up.

use super::memory::AllocKind;
use super::real::Real;
use super::value::{Pointer, Value};
use super::{ErrorKind, Machine};
use crate::il::{QualType, RealKind, Type};

/// The runtime's functions, one per name of `aioli.h`'s adjoint stack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Builtin {
    Push(Kind),
    Pop(Kind),
    PushControl,
    PopControl,
    PushArray,
    PopArray,
    Stats,
    ResetStats,
    /// `aioli_free_later`, `aioli_sweep_open`, `aioli_sweep_close`.
    FreeLater,
    SweepOpen,
    SweepClose,
}

/// The types of single values on the stack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    Real8,
    Real4,
    Int,
    Long,
    Pointer,
}

impl Kind {
    /// The suffix of the runtime's function names.
    fn suffix(self) -> &'static str {
        match self {
            Kind::Real8 => "real8",
            Kind::Real4 => "real4",
            Kind::Int => "int",
            Kind::Long => "long",
            Kind::Pointer => "pointer",
        }
    }

    /// The size of the C type, as the statistics count it.
    fn bytes(self) -> u64 {
        match self {
            Kind::Real8 | Kind::Long | Kind::Pointer => 8,
            Kind::Real4 | Kind::Int => 4,
        }
    }

    /// The C type of the value: what a push converts its argument to.
    pub(super) fn ty(self) -> Type {
        match self {
            Kind::Real8 => Type::Real(RealKind::Double),
            Kind::Real4 => Type::Real(RealKind::Float),
            Kind::Int => QualType::int().ty,
            Kind::Long => QualType::long().ty,
            Kind::Pointer => QualType::void().pointer_to().ty,
        }
    }
}

const KINDS: [Kind; 5] = [
    Kind::Real8,
    Kind::Real4,
    Kind::Int,
    Kind::Long,
    Kind::Pointer,
];

impl Builtin {
    /// The builtin a bodiless procedure of this name stands for.
    pub(super) fn from_name(name: &str) -> Option<Builtin> {
        let rest = name.strip_prefix("aioli_")?;
        match rest {
            "push_control" => return Some(Builtin::PushControl),
            "pop_control" => return Some(Builtin::PopControl),
            "push_array" => return Some(Builtin::PushArray),
            "pop_array" => return Some(Builtin::PopArray),
            "stack_stats" => return Some(Builtin::Stats),
            "stack_reset_stats" => return Some(Builtin::ResetStats),
            "free_later" => return Some(Builtin::FreeLater),
            "sweep_open" => return Some(Builtin::SweepOpen),
            "sweep_close" => return Some(Builtin::SweepClose),
            _ => {}
        }
        let (push, suffix) = if let Some(s) = rest.strip_prefix("push_") {
            (true, s)
        } else {
            (false, rest.strip_prefix("pop_")?)
        };
        let kind = KINDS.into_iter().find(|k| k.suffix() == suffix)?;
        Some(if push {
            Builtin::Push(kind)
        } else {
            Builtin::Pop(kind)
        })
    }

    /// The C name of the function.
    pub(super) fn name(self) -> String {
        match self {
            Builtin::Push(k) => format!("aioli_push_{}", k.suffix()),
            Builtin::Pop(k) => format!("aioli_pop_{}", k.suffix()),
            Builtin::PushControl => "aioli_push_control".into(),
            Builtin::PopControl => "aioli_pop_control".into(),
            Builtin::PushArray => "aioli_push_array".into(),
            Builtin::PopArray => "aioli_pop_array".into(),
            Builtin::Stats => "aioli_stack_stats".into(),
            Builtin::ResetStats => "aioli_stack_reset_stats".into(),
            Builtin::FreeLater => "aioli_free_later".into(),
            Builtin::SweepOpen => "aioli_sweep_open".into(),
            Builtin::SweepClose => "aioli_sweep_close".into(),
        }
    }

    /// The parameter types that the arguments are converted to, as the
    /// prototype of `aioli.h` would have them converted.
    pub(super) fn params(self) -> Vec<Type> {
        let size_t = QualType::size_t().ty;
        let int = QualType::int().ty;
        let void_ptr = QualType::void().pointer_to().ty;
        match self {
            Builtin::Push(k) => vec![k.ty()],
            Builtin::Pop(_) | Builtin::ResetStats | Builtin::SweepOpen | Builtin::SweepClose => {
                vec![]
            }
            Builtin::FreeLater => vec![void_ptr.clone()],
            Builtin::PushControl => vec![int.clone(), int],
            Builtin::PopControl => vec![int],
            Builtin::PushArray | Builtin::PopArray => vec![void_ptr, size_t],
            Builtin::Stats => vec![
                QualType::size_t().pointer_to().ty,
                QualType::size_t().pointer_to().ty,
            ],
        }
    }
}

/// One pushed item.
#[derive(Clone, Debug)]
enum Entry<R> {
    Value(Kind, Value<R>),
    Control {
        value: i64,
        bits: i64,
    },
    /// `bytes` bytes copied into the hidden allocation `copy` (none when
    /// `bytes` is 0).
    Array {
        copy: Option<Pointer>,
        bytes: u64,
    },
}

impl<R> Entry<R> {
    /// What pushed it, for error messages.
    fn describe(&self) -> String {
        match self {
            Entry::Value(k, _) => format!("aioli_push_{}", k.suffix()),
            Entry::Control { bits, .. } => format!("aioli_push_control with {bits} bits"),
            Entry::Array { bytes, .. } => format!("aioli_push_array of {bytes} bytes"),
        }
    }
}

/// The stack and its statistics.
#[derive(Clone, Debug)]
pub(super) struct Stack<R> {
    entries: Vec<Entry<R>>,
    /// Bytes of values (not control markers) pushed since the last reset.
    pushed_data: u64,
    /// Control bits pushed since the last reset.
    pushed_bits: u64,
    /// Bytes of values now on the stack.
    current_data: u64,
    /// Control bits now on the stack.
    current_bits: u64,
    /// The peak of the size since the last reset, in bytes.
    peak: u64,
    /// Blocks handed to `aioli_free_later`, freed when the outermost
    /// sweep closes; and how many sweeps are open.
    later: Vec<Pointer>,
    sweeps: u64,
}

impl<R> Default for Stack<R> {
    fn default() -> Stack<R> {
        Stack {
            entries: Vec::new(),
            pushed_data: 0,
            pushed_bits: 0,
            current_data: 0,
            current_bits: 0,
            peak: 0,
            later: Vec::new(),
            sweeps: 0,
        }
    }
}

impl<R> Stack<R> {
    /// The size in bytes, control bits rounded up.
    fn size(&self) -> u64 {
        self.current_data + self.current_bits.div_ceil(8)
    }

    fn push(&mut self, e: Entry<R>, bytes: u64, bits: u64) {
        self.entries.push(e);
        self.pushed_data += bytes;
        self.pushed_bits += bits;
        self.current_data += bytes;
        self.current_bits += bits;
        self.peak = self.peak.max(self.size());
    }

    fn pop(&mut self, b: Builtin) -> Result<Entry<R>, ErrorKind> {
        let e = self.entries.pop().ok_or_else(|| {
            ErrorKind::AdjointStack(format!(
                "{}: pop from an empty stack (a pop without its push)",
                b.name()
            ))
        })?;
        let (bytes, bits) = match &e {
            Entry::Value(k, _) => (k.bytes(), 0),
            Entry::Control { bits, .. } => (0, *bits as u64),
            Entry::Array { bytes, .. } => (*bytes, 0),
        };
        self.current_data -= bytes;
        self.current_bits -= bits;
        Ok(e)
    }

    /// Total bytes pushed and peak size since the last reset.
    pub(super) fn stats(&self) -> (u64, u64) {
        (self.pushed_data + self.pushed_bits.div_ceil(8), self.peak)
    }

    /// The number of items on the stack.
    pub(super) fn depth(&self) -> usize {
        self.entries.len()
    }
}

fn mismatch<R>(b: Builtin, found: &Entry<R>) -> ErrorKind {
    ErrorKind::AdjointStack(format!(
        "{} does not match the push it undoes: the top of the stack was pushed by {}",
        b.name(),
        found.describe()
    ))
}

fn int_arg<R: Copy + std::fmt::Debug>(b: Builtin, v: Value<R>) -> Result<i64, ErrorKind> {
    v.as_int().ok_or_else(|| {
        ErrorKind::Type(format!(
            "{}: expected an integer argument, found {v:?}",
            b.name()
        ))
    })
}

fn ptr_arg<R: Copy + std::fmt::Debug>(b: Builtin, v: Value<R>) -> Result<Pointer, ErrorKind> {
    v.as_ptr().ok_or_else(|| {
        ErrorKind::Type(format!(
            "{}: expected a pointer argument, found {v:?}",
            b.name()
        ))
    })
}

fn check_width(b: Builtin, bits: i64) -> Result<(), ErrorKind> {
    if (1..=16).contains(&bits) {
        Ok(())
    } else {
        Err(ErrorKind::AdjointStack(format!(
            "{}: width {bits} outside 1..16",
            b.name()
        )))
    }
}

impl<'p, R: Real> Machine<'p, R> {
    /// Runs a builtin on arguments already converted to
    /// [`Builtin::params`]; returns the function's result (`Uninit` for
    /// `void`).
    pub(super) fn stack_builtin(
        &mut self,
        b: Builtin,
        args: Vec<Value<R>>,
    ) -> Result<Value<R>, ErrorKind> {
        let arg = |i: usize| args.get(i).copied().unwrap_or(Value::Uninit);
        match b {
            Builtin::Push(k) => {
                self.stack.push(Entry::Value(k, arg(0)), k.bytes(), 0);
                Ok(Value::Uninit)
            }
            Builtin::Pop(k) => match self.stack.pop(b)? {
                Entry::Value(found, v) if found == k => Ok(v),
                other => Err(mismatch(b, &other)),
            },
            Builtin::PushControl => {
                let value = int_arg(b, arg(0))?;
                let bits = int_arg(b, arg(1))?;
                check_width(b, bits)?;
                if !(0..1 << bits).contains(&value) {
                    return Err(ErrorKind::AdjointStack(format!(
                        "{}: value {value} does not fit in {bits} bits",
                        b.name()
                    )));
                }
                self.stack
                    .push(Entry::Control { value, bits }, 0, bits as u64);
                Ok(Value::Uninit)
            }
            Builtin::PopControl => {
                let bits = int_arg(b, arg(0))?;
                check_width(b, bits)?;
                match self.stack.pop(b)? {
                    Entry::Control { value, bits: w } if w == bits => Ok(Value::Int(value)),
                    other => Err(mismatch(b, &other)),
                }
            }
            Builtin::PushArray => {
                let src = ptr_arg(b, arg(0))?;
                let bytes = int_arg(b, arg(1))? as u64;
                let copy = if bytes == 0 {
                    None
                } else {
                    let copy = self.mem.allocate(bytes, AllocKind::Global, false);
                    self.mem.copy(copy, src, bytes)?;
                    Some(copy)
                };
                self.stack.push(Entry::Array { copy, bytes }, bytes, 0);
                Ok(Value::Uninit)
            }
            Builtin::PopArray => {
                let dst = ptr_arg(b, arg(0))?;
                let bytes = int_arg(b, arg(1))? as u64;
                match self.stack.pop(b)? {
                    Entry::Array { copy, bytes: n } if n == bytes => {
                        if let Some(copy) = copy {
                            self.mem.copy(dst, copy, bytes)?;
                            self.mem.kill(copy);
                        }
                        Ok(Value::Uninit)
                    }
                    other => Err(mismatch(b, &other)),
                }
            }
            Builtin::Stats => {
                let (pushed, peak) = self.stack.stats();
                let size_t = self.scalar_of(&QualType::size_t().ty)?;
                for (i, v) in [(0, pushed), (1, peak)] {
                    let p = ptr_arg(b, arg(i))?;
                    if !p.is_null() {
                        self.mem.write(p, size_t, Value::Int(v as i64))?;
                    }
                }
                Ok(Value::Uninit)
            }
            Builtin::ResetStats => {
                self.stack.pushed_data = 0;
                self.stack.pushed_bits = 0;
                self.stack.peak = self.stack.size();
                Ok(Value::Uninit)
            }
            Builtin::FreeLater => {
                match arg(0) {
                    Value::Ptr(p) if !p.is_null() => self.stack.later.push(p),
                    Value::Ptr(_) | Value::Int(0) => {}
                    _ => return Err(ErrorKind::InvalidFree),
                }
                Ok(Value::Uninit)
            }
            Builtin::SweepOpen => {
                self.stack.sweeps += 1;
                Ok(Value::Uninit)
            }
            Builtin::SweepClose => {
                if self.stack.sweeps == 0 {
                    return Err(ErrorKind::AdjointStack(format!(
                        "{}: no adjoint call is open (a close without its open)",
                        b.name()
                    )));
                }
                self.stack.sweeps -= 1;
                if self.stack.sweeps == 0 {
                    while let Some(p) = self.stack.later.pop() {
                        self.mem.free(p)?;
                    }
                }
                Ok(Value::Uninit)
            }
        }
    }
}
