//! Byte-addressed memory made of allocations holding typed scalar cells.
//!
//! Each allocation (a global, a local variable or parameter, a heap block, a
//! string literal) has a size in bytes and a map from byte offset to the
//! scalar written there. Values are kept as numbers of the interpreter's
//! [`Real`] type rather than bytes so that dual numbers survive a store; the
//! price is that type punning (reading a `double` as a `long`) is reported
//! instead of reinterpreted.

use super::ErrorKind;
use super::real::Real;
use super::value::{IntTy, Pointer, Scalar, Value};
use crate::il::RealKind;
use std::collections::BTreeMap;

/// What an allocation was made for; used in error messages and to decide
/// whether `free` may release it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AllocKind {
    Global,
    Local,
    Heap,
    Literal,
    /// A `FILE *` object (`stdout`, `stderr`).
    Stream,
}

#[derive(Clone, Debug)]
enum Cell<R> {
    Scalar(Scalar, Value<R>),
    /// One byte known to be zero (from `memset(p, 0, n)`).
    ZeroByte,
}

#[derive(Clone, Debug)]
struct Allocation<R> {
    size: u64,
    kind: AllocKind,
    live: bool,
    /// Bytes not covered by a cell read as zero (calloc, static storage).
    zero_default: bool,
    cells: BTreeMap<u64, Cell<R>>,
}

/// The interpreter's memory. Allocation 0 is the null pointer's target.
#[derive(Clone, Debug)]
pub struct Memory<R> {
    allocs: Vec<Allocation<R>>,
}

/// Largest scalar size, bounding the search for a cell overlapping a byte.
const MAX_SCALAR: u64 = 16;

impl<R: Real> Memory<R> {
    pub fn new() -> Memory<R> {
        let null = Allocation {
            size: 0,
            kind: AllocKind::Literal,
            live: false,
            zero_default: false,
            cells: BTreeMap::new(),
        };
        Memory { allocs: vec![null] }
    }

    /// Creates an allocation of `size` bytes.
    pub fn allocate(&mut self, size: u64, kind: AllocKind, zeroed: bool) -> Pointer {
        self.allocs.push(Allocation {
            size,
            kind,
            live: true,
            zero_default: zeroed,
            cells: BTreeMap::new(),
        });
        Pointer {
            alloc: (self.allocs.len() - 1) as u32,
            offset: 0,
        }
    }

    pub fn kind(&self, p: Pointer) -> Option<AllocKind> {
        self.allocs.get(p.alloc as usize).map(|a| a.kind)
    }

    /// Releases a heap block; `free(NULL)` is a no-op.
    pub fn free(&mut self, p: Pointer) -> Result<(), ErrorKind> {
        if p.is_null() {
            return Ok(());
        }
        let a = self
            .allocs
            .get_mut(p.alloc as usize)
            .ok_or(ErrorKind::InvalidPointer)?;
        if a.kind != AllocKind::Heap || p.offset != 0 {
            return Err(ErrorKind::InvalidFree);
        }
        if !a.live {
            return Err(ErrorKind::DoubleFree);
        }
        a.live = false;
        a.cells.clear();
        Ok(())
    }

    /// Ends the lifetime of a local variable's storage.
    pub fn kill(&mut self, p: Pointer) {
        if let Some(a) = self.allocs.get_mut(p.alloc as usize) {
            a.live = false;
            a.cells.clear();
        }
    }

    fn check(&self, p: Pointer, len: u64) -> Result<&Allocation<R>, ErrorKind> {
        if p.is_null() {
            return Err(ErrorKind::NullDeref);
        }
        let a = self
            .allocs
            .get(p.alloc as usize)
            .ok_or(ErrorKind::InvalidPointer)?;
        if !a.live {
            return Err(ErrorKind::UseAfterFree);
        }
        if p.offset < 0 || (p.offset as u64).saturating_add(len) > a.size {
            return Err(ErrorKind::OutOfBounds {
                offset: p.offset,
                len,
                size: a.size,
            });
        }
        Ok(a)
    }

    fn check_mut(&mut self, p: Pointer, len: u64) -> Result<&mut Allocation<R>, ErrorKind> {
        self.check(p, len)?;
        Ok(&mut self.allocs[p.alloc as usize])
    }

    /// Reads a scalar of type `ty` at `p`.
    pub fn read(&self, p: Pointer, ty: Scalar) -> Result<Value<R>, ErrorKind> {
        let size = ty.size();
        let a = self.check(p, size)?;
        let off = p.offset as u64;
        match a.cells.get(&off) {
            Some(Cell::Scalar(stored, v)) => reinterpret(*stored, ty, *v),
            Some(Cell::ZeroByte) => {
                let all_zero =
                    (off..off + size).all(|b| matches!(a.cells.get(&b), Some(Cell::ZeroByte)));
                if all_zero {
                    Ok(ty.zero())
                } else {
                    Err(ErrorKind::Uninit)
                }
            }
            None => {
                let lo = off.saturating_sub(MAX_SCALAR - 1);
                let overlapping = a.cells.range(lo..off + size).any(|(&o, c)| match c {
                    Cell::Scalar(s, _) => o + s.size() > off,
                    Cell::ZeroByte => false,
                });
                if overlapping {
                    Err(ErrorKind::TypePun)
                } else if a.zero_default {
                    Ok(ty.zero())
                } else {
                    Err(ErrorKind::Uninit)
                }
            }
        }
    }

    /// Writes a scalar of type `ty` at `p`; `Value::Uninit` makes the bytes
    /// uninitialised again.
    pub fn write(&mut self, p: Pointer, ty: Scalar, v: Value<R>) -> Result<(), ErrorKind> {
        let size = ty.size();
        let a = self.check_mut(p, size)?;
        let off = p.offset as u64;
        clear_range(a, off, off + size);
        if !matches!(v, Value::Uninit) {
            a.cells.insert(off, Cell::Scalar(ty, v));
        } else if a.zero_default {
            // There is no "uninitialised" over zero-default storage: leave
            // the old value's bytes undefined by storing nothing readable.
            a.cells.insert(off, Cell::Scalar(ty, Value::Uninit));
        }
        Ok(())
    }

    /// `memcpy`: copies the cells of `n` bytes (overlap behaves as memmove).
    pub fn copy(&mut self, dst: Pointer, src: Pointer, n: u64) -> Result<(), ErrorKind> {
        if n == 0 {
            return Ok(());
        }
        let src_alloc = self.check(src, n)?;
        let s0 = src.offset as u64;
        let zero = src_alloc.zero_default;
        let cells: Vec<(u64, Cell<R>)> = src_alloc
            .cells
            .range(s0..s0 + n)
            .filter(|(o, c)| match c {
                Cell::Scalar(s, _) => **o + s.size() <= s0 + n,
                Cell::ZeroByte => true,
            })
            .map(|(o, c)| (o - s0, c.clone()))
            .collect();
        let d = self.check_mut(dst, n)?;
        let d0 = dst.offset as u64;
        clear_range(d, d0, d0 + n);
        if zero && !d.zero_default {
            // The source's implicit zeros become explicit in the target.
            for b in d0..d0 + n {
                d.cells.insert(b, Cell::ZeroByte);
            }
        }
        for (o, c) in cells {
            if let Cell::Scalar(s, _) = &c {
                clear_range(d, d0 + o, d0 + o + s.size());
            }
            d.cells.insert(d0 + o, c);
        }
        Ok(())
    }

    /// `memset(p, 0, n)` and zero-initialisation of part of an object.
    pub fn zero(&mut self, p: Pointer, n: u64) -> Result<(), ErrorKind> {
        let a = self.check_mut(p, n)?;
        let o = p.offset as u64;
        clear_range(a, o, o + n);
        if !a.zero_default {
            for b in o..o + n {
                a.cells.insert(b, Cell::ZeroByte);
            }
        }
        Ok(())
    }

    /// Marks a whole allocation as reading zero where not written (used
    /// before an initializer list fills part of an object).
    pub fn set_zero_default(&mut self, p: Pointer) {
        if let Some(a) = self.allocs.get_mut(p.alloc as usize) {
            a.zero_default = true;
        }
    }

    /// Reads a NUL-terminated string of `char`s.
    pub fn read_c_string(&self, p: Pointer) -> Result<String, ErrorKind> {
        let mut bytes = Vec::new();
        let mut q = p;
        loop {
            let c = self.read(q, Scalar::Int(IntTy::CHAR))?;
            let Value::Int(b) = c else {
                return Err(ErrorKind::TypePun);
            };
            if b == 0 {
                break;
            }
            bytes.push(b as u8);
            q.offset += 1;
            if bytes.len() > 1 << 24 {
                return Err(ErrorKind::OutOfBounds {
                    offset: q.offset,
                    len: 1,
                    size: 0,
                });
            }
        }
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// Size in bytes of the allocation `p` points into.
    pub fn size_of(&self, p: Pointer) -> Option<u64> {
        self.allocs.get(p.alloc as usize).map(|a| a.size)
    }
}

impl<R: Real> Default for Memory<R> {
    fn default() -> Self {
        Memory::new()
    }
}

/// Removes every cell that overlaps `lo..hi`.
fn clear_range<R>(a: &mut Allocation<R>, lo: u64, hi: u64) {
    let start = lo.saturating_sub(MAX_SCALAR - 1);
    let doomed: Vec<u64> = a
        .cells
        .range(start..hi)
        .filter(|(o, c)| match c {
            Cell::Scalar(s, _) => **o + s.size() > lo,
            Cell::ZeroByte => **o >= lo,
        })
        .map(|(o, _)| *o)
        .collect();
    for o in doomed {
        a.cells.remove(&o);
    }
}

/// Reads a stored scalar as another scalar type of the same size: integers
/// of the same width reinterpret their bits; anything else is type punning.
fn reinterpret<R: Real>(stored: Scalar, want: Scalar, v: Value<R>) -> Result<Value<R>, ErrorKind> {
    if let Value::Uninit = v {
        return Err(ErrorKind::Uninit);
    }
    match (stored, want, v) {
        (a, b, _) if a == b => Ok(v),
        (Scalar::Int(a), Scalar::Int(b), Value::Int(i)) if a.bits == b.bits => {
            Ok(Value::Int(b.normalize(i)))
        }
        (Scalar::Real(RealKind::Double), Scalar::Real(RealKind::LongDouble), _)
        | (Scalar::Real(RealKind::LongDouble), Scalar::Real(RealKind::Double), _) => Ok(v),
        _ => Err(ErrorKind::TypePun),
    }
}
