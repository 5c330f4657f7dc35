//! Run-time values: integers, reals, pointers.

use crate::il::{IntKind, RealKind};

/// A pointer: an allocation and a byte offset into it. Allocation 0 is the
/// null pointer. Offsets may leave the allocation (C allows one past the
/// end); only dereferencing checks bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Pointer {
    pub alloc: u32,
    pub offset: i64,
}

impl Pointer {
    /// The null pointer.
    pub const NULL: Pointer = Pointer {
        alloc: 0,
        offset: 0,
    };

    /// Is this the null pointer?
    pub fn is_null(self) -> bool {
        self.alloc == 0
    }

    /// This pointer moved by `bytes`.
    pub fn add_bytes(self, bytes: i64) -> Pointer {
        Pointer {
            alloc: self.alloc,
            offset: self.offset.wrapping_add(bytes),
        }
    }
}

/// A scalar value. Integers are kept normalised to their C type (sign- or
/// zero-extended from its width; `unsigned long` as the `i64` with the same
/// bits). Struct and array values are represented by a pointer to their
/// storage: passing one where the parameter is a struct copies it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value<R> {
    Int(i64),
    Real(R),
    Ptr(Pointer),
    /// The value of a function that fell off its end without `return`.
    Uninit,
}

impl<R: Copy> Value<R> {
    /// The integer, if this is one.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }
    /// The real, if this is one.
    pub fn as_real(&self) -> Option<R> {
        match self {
            Value::Real(r) => Some(*r),
            _ => None,
        }
    }
    /// The pointer, if this is one.
    pub fn as_ptr(&self) -> Option<Pointer> {
        match self {
            Value::Ptr(p) => Some(*p),
            _ => None,
        }
    }
}

/// An integer type: width in bits and signedness.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IntTy {
    pub bits: u32,
    pub unsigned: bool,
    /// `_Bool`: conversion yields 0 or 1 rather than truncating.
    pub boolean: bool,
}

impl IntTy {
    pub const INT: IntTy = IntTy {
        bits: 32,
        unsigned: false,
        boolean: false,
    };
    pub const LONG: IntTy = IntTy {
        bits: 64,
        unsigned: false,
        boolean: false,
    };
    pub const CHAR: IntTy = IntTy {
        bits: 8,
        unsigned: false,
        boolean: false,
    };

    /// The type for an IL integer kind.
    pub fn of(kind: IntKind, unsigned: bool) -> IntTy {
        IntTy {
            bits: (kind.size() * 8) as u32,
            unsigned: unsigned || kind == IntKind::Bool,
            boolean: kind == IntKind::Bool,
        }
    }

    /// Truncates to the width and extends back according to signedness.
    pub fn normalize(self, v: i64) -> i64 {
        if self.boolean {
            return (v != 0) as i64;
        }
        if self.bits >= 64 {
            return v;
        }
        let shift = 64 - self.bits;
        if self.unsigned {
            ((v as u64) << shift >> shift) as i64
        } else {
            (v << shift) >> shift
        }
    }

    /// Integer conversion rank, for the usual arithmetic conversions.
    pub fn rank(self) -> u32 {
        self.bits
    }
}

/// The type of a memory cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scalar {
    Int(IntTy),
    Real(RealKind),
    Ptr,
}

impl Scalar {
    /// Size in bytes.
    pub fn size(self) -> u64 {
        match self {
            Scalar::Int(t) => (t.bits / 8) as u64,
            Scalar::Real(RealKind::Float) => 4,
            Scalar::Real(RealKind::Double) => 8,
            Scalar::Real(RealKind::LongDouble) => 16,
            Scalar::Ptr => 8,
        }
    }

    /// The value of all-zero bytes.
    pub fn zero<R: super::real::Real>(self) -> Value<R> {
        match self {
            Scalar::Int(_) => Value::Int(0),
            Scalar::Real(_) => Value::Real(R::from_f64(0.0)),
            Scalar::Ptr => Value::Ptr(Pointer::NULL),
        }
    }
}
