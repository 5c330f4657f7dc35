//! Evaluation of expressions and execution of statements.

use super::memory::AllocKind;
use super::printf::{self, PrintArg};
use super::real::Real;
use super::stack::Builtin;
use super::value::{IntTy, Pointer, Scalar, Value};
use super::{Error, ErrorKind, Frame, MAX_CALL_DEPTH, Machine};
use crate::il::{
    BinOp, Expr, ExprKind, Init, IntKind, ItemKind, LoopHeader, MathFn, ProcId, QualType, RealKind,
    Stmt, StmtKind, Storage, SymId, SymKind, Type, UnOp,
};

/// How control leaves a statement.
enum Flow<'p, R> {
    Normal,
    Break,
    Continue,
    /// A returned value with the type of the returned expression.
    Return(Value<R>, Option<&'p Type>),
}

/// The arithmetic type of a value: what the usual conversions work on.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Num {
    Int(IntTy),
    Real(RealKind),
}

type Res<T> = Result<T, ErrorKind>;

fn real_rank(k: RealKind) -> u8 {
    match k {
        RealKind::Float => 0,
        RealKind::Double => 1,
        RealKind::LongDouble => 2,
    }
}

/// Integer promotion: types narrower than `int` become `int`.
fn promote(t: IntTy) -> IntTy {
    if t.bits < 32 {
        IntTy::INT
    } else {
        IntTy {
            boolean: false,
            ..t
        }
    }
}

/// The usual arithmetic conversions (C11 6.3.1.8).
fn common(a: Num, b: Num) -> Num {
    match (a, b) {
        (Num::Real(x), Num::Real(y)) => Num::Real(if real_rank(x) >= real_rank(y) { x } else { y }),
        (Num::Real(x), _) | (_, Num::Real(x)) => Num::Real(x),
        (Num::Int(x), Num::Int(y)) => {
            let (x, y) = (promote(x), promote(y));
            if x == y {
                return Num::Int(x);
            }
            if x.unsigned == y.unsigned {
                return Num::Int(if x.rank() >= y.rank() { x } else { y });
            }
            let (u, s) = if x.unsigned { (x, y) } else { (y, x) };
            if u.rank() >= s.rank() {
                Num::Int(u)
            } else if s.bits > u.bits {
                Num::Int(s)
            } else {
                Num::Int(IntTy {
                    unsigned: true,
                    ..s
                })
            }
        }
    }
}

fn truthy<R: Real>(v: Value<R>) -> Res<bool> {
    match v {
        Value::Int(i) => Ok(i != 0),
        Value::Real(r) => Ok(r.value() != 0.0),
        Value::Ptr(p) => Ok(!p.is_null()),
        Value::Uninit => Err(ErrorKind::Uninit),
    }
}

/// Decodes a string literal as spelled (quotes, escapes, adjacent pieces)
/// into its bytes, without the terminating NUL.
fn unescape(spelled: &str) -> Vec<u8> {
    let mut out = Vec::new();
    let bytes = spelled.as_bytes();
    let mut i = 0;
    let mut inside = false;
    while i < bytes.len() {
        let c = bytes[i];
        if !inside {
            if c == b'"' {
                inside = true;
            }
            i += 1;
            continue;
        }
        match c {
            b'"' => {
                inside = false;
                i += 1;
            }
            b'\\' if i + 1 < bytes.len() => {
                let e = bytes[i + 1];
                i += 2;
                match e {
                    b'n' => out.push(b'\n'),
                    b't' => out.push(b'\t'),
                    b'r' => out.push(b'\r'),
                    b'a' => out.push(7),
                    b'b' => out.push(8),
                    b'f' => out.push(12),
                    b'v' => out.push(11),
                    b'x' => {
                        let mut v: u32 = 0;
                        while i < bytes.len() && bytes[i].is_ascii_hexdigit() {
                            v = v.wrapping_mul(16) + (bytes[i] as char).to_digit(16).unwrap_or(0);
                            i += 1;
                        }
                        out.push(v as u8);
                    }
                    b'0'..=b'7' => {
                        let mut v: u32 = (e - b'0') as u32;
                        let mut n = 1;
                        while n < 3 && i < bytes.len() && (b'0'..=b'7').contains(&bytes[i]) {
                            v = v * 8 + (bytes[i] - b'0') as u32;
                            i += 1;
                            n += 1;
                        }
                        out.push(v as u8);
                    }
                    other => out.push(other),
                }
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

impl<'p, R: Real> Machine<'p, R> {
    fn fail(&self, kind: ErrorKind) -> Error {
        Error::at(kind, self.span)
    }

    // -----------------------------------------------------------------
    // Types
    // -----------------------------------------------------------------

    fn resolve(&self, ty: &'p Type) -> &'p Type {
        self.program.resolve(ty)
    }

    fn num_of(&self, ty: &Type) -> Option<Num> {
        match self.program.resolve(ty) {
            Type::Int { kind, unsigned } => Some(Num::Int(IntTy::of(*kind, *unsigned))),
            Type::Real(k) => Some(Num::Real(*k)),
            _ => None,
        }
    }

    /// The cell type of a scalar C type.
    pub(super) fn scalar_of(&self, ty: &Type) -> Res<Scalar> {
        match self.program.resolve(ty) {
            Type::Int { kind, unsigned } => Ok(Scalar::Int(IntTy::of(*kind, *unsigned))),
            Type::Real(k) => Ok(Scalar::Real(*k)),
            Type::Pointer(_) | Type::Opaque(_) => Ok(Scalar::Ptr),
            other => Err(ErrorKind::Type(format!("{other:?} is not a scalar type"))),
        }
    }

    fn is_aggregate(&self, ty: &Type) -> bool {
        matches!(
            self.program.resolve(ty),
            Type::Struct(_) | Type::Array { .. }
        )
    }

    fn size_of(&self, ty: &Type) -> u64 {
        self.program.size_align(ty).0
    }

    /// The type a variable is stored with: array parameters are pointers.
    pub(super) fn storage_type(&self, sym: SymId) -> Type {
        let s = self.program.sym(sym);
        match (s.kind, self.program.resolve(&s.ty.ty)) {
            (SymKind::Param, Type::Array { elem, .. }) => Type::Pointer(elem.clone()),
            _ => s.ty.ty.clone(),
        }
    }

    /// Converts a value given by a driver to `to`, without a source type
    /// (integers are taken as signed).
    pub(super) fn coerce(&self, v: Value<R>, to: &Type) -> Res<Value<R>> {
        let from = match v {
            Value::Int(_) => Type::Int {
                kind: IntKind::Long,
                unsigned: false,
            },
            Value::Real(_) => Type::Real(RealKind::Double),
            Value::Ptr(_) => Type::Pointer(Box::new(QualType::void())),
            Value::Uninit => return Ok(Value::Uninit),
        };
        if self.is_aggregate(to) {
            return Ok(v);
        }
        if let (Type::Real(RealKind::Float), Value::Real(_)) = (self.program.resolve(to), v) {
            return self.convert(v, &Type::Real(RealKind::Double), to);
        }
        self.convert(v, &from, to)
    }

    /// Converts `v` of type `from` to type `to`, as C does on assignment.
    fn convert(&self, v: Value<R>, from: &Type, to: &Type) -> Res<Value<R>> {
        if let Value::Uninit = v {
            return Err(ErrorKind::Uninit);
        }
        let to_r = self.program.resolve(to);
        match to_r {
            Type::Void => Ok(Value::Uninit),
            Type::Struct(_) | Type::Array { .. } => Ok(v),
            Type::Pointer(_) | Type::Opaque(_) => match v {
                Value::Ptr(_) => Ok(v),
                Value::Int(0) => Ok(Value::Ptr(Pointer::NULL)),
                _ => Err(ErrorKind::Unsupported(
                    "conversion of a non-zero integer to a pointer".into(),
                )),
            },
            Type::Int { kind, unsigned } => {
                let t = IntTy::of(*kind, *unsigned);
                match v {
                    Value::Int(i) => Ok(Value::Int(t.normalize(i))),
                    Value::Real(r) => {
                        let x = r.value();
                        if t.boolean {
                            return Ok(Value::Int((x != 0.0) as i64));
                        }
                        // C truncates toward zero; out-of-range is UB, Rust
                        // saturates.
                        let i = if t.unsigned && t.bits == 64 {
                            x as u64 as i64
                        } else {
                            x as i64
                        };
                        Ok(Value::Int(t.normalize(i)))
                    }
                    Value::Ptr(p) if t.boolean => Ok(Value::Int(!p.is_null() as i64)),
                    _ => Err(ErrorKind::Unsupported(
                        "conversion of a pointer to an integer".into(),
                    )),
                }
            }
            Type::Real(k) => {
                let r = match v {
                    Value::Real(r) => r,
                    Value::Int(i) => {
                        let unsigned64 = matches!(
                            self.num_of(from),
                            Some(Num::Int(IntTy {
                                unsigned: true,
                                bits: 64,
                                ..
                            }))
                        );
                        // Convert with one rounding straight to the target.
                        let x = match (k, unsigned64) {
                            (RealKind::Float, true) => (i as u64) as f32 as f64,
                            (RealKind::Float, false) => i as f32 as f64,
                            (_, true) => (i as u64) as f64,
                            (_, false) => i as f64,
                        };
                        return Ok(Value::Real(R::from_f64(x)));
                    }
                    _ => {
                        return Err(ErrorKind::Type("conversion of a pointer to a real".into()));
                    }
                };
                Ok(Value::Real(if *k == RealKind::Float {
                    r.round_to_f32()
                } else {
                    r
                }))
            }
            Type::Named(_) => Err(ErrorKind::Type("unresolved typedef".into())),
        }
    }

    fn to_num(&self, v: Value<R>, from: &Type, to: Num) -> Res<Value<R>> {
        let ty = match to {
            Num::Int(t) => Type::Int {
                kind: match t.bits {
                    8 => IntKind::Char,
                    16 => IntKind::Short,
                    32 => IntKind::Int,
                    _ => IntKind::Long,
                },
                unsigned: t.unsigned,
            },
            Num::Real(k) => Type::Real(k),
        };
        self.convert(v, from, &ty)
    }

    // -----------------------------------------------------------------
    // Globals and variables
    // -----------------------------------------------------------------

    pub(super) fn init_globals(&mut self) -> Result<(), Error> {
        let program = self.program;
        for (i, s) in program.symbols.iter().enumerate() {
            if s.kind != SymKind::Global {
                continue;
            }
            let id = SymId(i as u32);
            let size = self.size_of(&s.ty.ty);
            let p = self.mem.allocate(size, AllocKind::Global, true);
            let stream = match s.name.as_str() {
                "stdout" => Some(self.stdout_stream),
                "stderr" => Some(self.stderr_stream),
                "stdin" => Some(self.stdin_stream),
                _ => None,
            };
            if let Some(stream) = stream
                && matches!(program.resolve(&s.ty.ty), Type::Pointer(_))
            {
                self.mem.write(p, Scalar::Ptr, Value::Ptr(stream))?;
            }
            self.globals.insert(id, p);
        }
        for item in &program.items {
            if let ItemKind::Globals { vars, .. } = &item.kind {
                self.span = item.span;
                for d in vars {
                    if let (Some(init), Some(p)) = (&d.init, self.globals.get(&d.sym).copied()) {
                        let ty = &program.sym(d.sym).ty.ty;
                        self.init_object(p, ty, init)
                            .map_err(|k| Error::at(k, item.span))?;
                    }
                }
            }
        }
        Ok(())
    }

    fn var_ptr(&mut self, sym: SymId) -> Res<Pointer> {
        if let Some(p) = self.frames.last().and_then(|f| f.vars.get(&sym)) {
            return Ok(*p);
        }
        if let Some(p) = self.statics.get(&sym) {
            return Ok(*p);
        }
        if let Some(p) = self.globals.get(&sym) {
            return Ok(*p);
        }
        // A block-scope `extern` declaration names a global.
        let s = self.program.sym(sym);
        if let Some(g) = self.program.global_by_name(&s.name)
            && let Some(p) = self.globals.get(&g)
        {
            return Ok(*p);
        }
        Err(ErrorKind::Type(format!(
            "variable '{}' used before its declaration",
            s.name
        )))
    }

    fn string_literal(&mut self, spelled: &str) -> Pointer {
        if let Some(p) = self.strings.get(spelled) {
            return *p;
        }
        let bytes = unescape(spelled);
        let p = self
            .mem
            .allocate(bytes.len() as u64 + 1, AllocKind::Literal, true);
        for (i, b) in bytes.iter().enumerate() {
            let _ = self.mem.write(
                p.add_bytes(i as i64),
                Scalar::Int(IntTy::CHAR),
                Value::Int(IntTy::CHAR.normalize(*b as i64)),
            );
        }
        self.strings.insert(spelled.to_string(), p);
        p
    }

    // -----------------------------------------------------------------
    // Expressions
    // -----------------------------------------------------------------

    /// The address of an lvalue.
    fn place(&mut self, e: &'p Expr) -> Res<Pointer> {
        match &e.kind {
            ExprKind::Var(sym) => self.var_ptr(*sym),
            ExprKind::Index { base, index } => {
                let b = self.eval(base)?;
                let Value::Ptr(p) = b else {
                    return Err(ErrorKind::Type("indexing a non-pointer".into()));
                };
                let i = self.eval_int(index)?;
                let size = self.size_of(&e.ty.ty) as i64;
                Ok(p.add_bytes(i.wrapping_mul(size)))
            }
            ExprKind::Field {
                base,
                strukt,
                field,
            } => {
                let p = self.place(base)?;
                Ok(p.add_bytes(self.program.field_offset(*strukt, *field) as i64))
            }
            ExprKind::Deref(inner) => match self.eval(inner)? {
                Value::Ptr(p) => Ok(p),
                Value::Int(0) => Err(ErrorKind::NullDeref),
                _ => Err(ErrorKind::Type("dereference of a non-pointer".into())),
            },
            ExprKind::Cond { cond, then, other } if self.is_aggregate(&e.ty.ty) => {
                if truthy(self.eval(cond)?)? {
                    self.place(then)
                } else {
                    self.place(other)
                }
            }
            ExprKind::Cast { arg, .. } if self.is_aggregate(&e.ty.ty) => self.place(arg),
            ExprKind::StrConst(s) => Ok(self.string_literal(s)),
            _ => Err(ErrorKind::Type("expression is not an lvalue".into())),
        }
    }

    fn eval_int(&mut self, e: &'p Expr) -> Res<i64> {
        match self.eval(e)? {
            Value::Int(i) => Ok(i),
            Value::Uninit => Err(ErrorKind::Uninit),
            _ => Err(ErrorKind::Type("expected an integer".into())),
        }
    }

    fn load(&mut self, p: Pointer, ty: &Type) -> Res<Value<R>> {
        let scalar = self.scalar_of(ty)?;
        self.mem.read(p, scalar)
    }

    /// The value of an expression. Arrays decay to a pointer to their first
    /// element; structs are represented by a pointer to their storage.
    fn eval(&mut self, e: &'p Expr) -> Res<Value<R>> {
        let ty = self.resolve(&e.ty.ty);
        if let Type::Array { .. } = ty {
            // An array parameter is a pointer variable.
            if let ExprKind::Var(sym) = &e.kind
                && self.program.sym(*sym).kind == SymKind::Param
            {
                let p = self.var_ptr(*sym)?;
                return self.mem.read(p, Scalar::Ptr);
            }
            return Ok(Value::Ptr(self.place(e)?));
        }
        if let Type::Struct(_) = ty {
            return Ok(Value::Ptr(self.place(e)?));
        }
        match &e.kind {
            ExprKind::IntConst { value, .. } | ExprKind::CharConst { value, .. } => {
                match self.num_of(&e.ty.ty) {
                    Some(Num::Int(t)) => Ok(Value::Int(t.normalize(*value))),
                    Some(Num::Real(_)) => self.convert(
                        Value::Int(*value),
                        &Type::Int {
                            kind: IntKind::Long,
                            unsigned: false,
                        },
                        &e.ty.ty,
                    ),
                    None if *value == 0 => Ok(Value::Ptr(Pointer::NULL)),
                    None => Ok(Value::Int(*value)),
                }
            }
            ExprKind::RealConst { value, .. } => self.convert(
                Value::Real(R::from_f64(*value)),
                &Type::Real(RealKind::Double),
                &e.ty.ty,
            ),
            ExprKind::StrConst(s) => Ok(Value::Ptr(self.string_literal(s))),
            ExprKind::Var(_)
            | ExprKind::Index { .. }
            | ExprKind::Field { .. }
            | ExprKind::Deref(_) => {
                let p = self.place(e)?;
                self.load(p, &e.ty.ty)
            }
            ExprKind::AddrOf(inner) => Ok(Value::Ptr(self.place(inner)?)),
            ExprKind::Unary { op, arg } => self.eval_unary(*op, arg, e),
            ExprKind::Binary { op, lhs, rhs } => self.eval_binary(*op, lhs, rhs, e),
            ExprKind::Intrinsic { call, args } => {
                if call.func == MathFn::IntAbs {
                    let a = args
                        .first()
                        .ok_or(ErrorKind::Type("abs without argument".into()))?;
                    let v = self.eval(a)?;
                    let v = self.convert(v, &a.ty.ty, &e.ty.ty)?;
                    return match (v, self.num_of(&e.ty.ty)) {
                        (Value::Int(i), Some(Num::Int(t))) => {
                            Ok(Value::Int(t.normalize(i.wrapping_abs())))
                        }
                        _ => Err(ErrorKind::Type("abs of a non-integer".into())),
                    };
                }
                let kind = call.precision.unwrap_or(RealKind::Double);
                let real_ty = Type::Real(kind);
                let mut xs = [R::from_f64(0.0); 2];
                if args.len() != call.func.arity() {
                    return Err(ErrorKind::Arity {
                        name: call.name.clone(),
                        expected: call.func.arity(),
                        got: args.len(),
                    });
                }
                for (slot, a) in xs.iter_mut().zip(args) {
                    let v = self.eval(a)?;
                    match self.convert(v, &a.ty.ty, &real_ty)? {
                        Value::Real(r) => *slot = r,
                        _ => return Err(ErrorKind::Type("non-real math argument".into())),
                    }
                }
                let r = R::math(call.func, kind == RealKind::Float, xs[0], xs[1]);
                self.convert(Value::Real(r), &real_ty, &e.ty.ty)
            }
            ExprKind::Cast { to, arg } => {
                let v = self.eval(arg)?;
                self.convert(v, &arg.ty.ty, &to.ty)
            }
            ExprKind::Cond { cond, then, other } => {
                let branch = if truthy(self.eval(cond)?)? {
                    then
                } else {
                    other
                };
                let v = self.eval(branch)?;
                self.convert(v, &branch.ty.ty, &e.ty.ty)
            }
            ExprKind::SizeOfType(t) => Ok(Value::Int(self.size_of(&t.ty) as i64)),
            ExprKind::SizeOfExpr(inner) => {
                let size = match (&inner.kind, self.resolve(&inner.ty.ty)) {
                    (ExprKind::Var(sym), Type::Array { .. })
                        if self.program.sym(*sym).kind == SymKind::Param =>
                    {
                        8
                    }
                    _ => self.size_of(&inner.ty.ty),
                };
                Ok(Value::Int(size as i64))
            }
        }
    }

    fn eval_unary(&mut self, op: UnOp, arg: &'p Expr, e: &'p Expr) -> Res<Value<R>> {
        let v = self.eval(arg)?;
        if op == UnOp::Not {
            return Ok(Value::Int(!truthy(v)? as i64));
        }
        let v = self.convert(v, &arg.ty.ty, &e.ty.ty)?;
        let t = self.num_of(&e.ty.ty);
        match (op, v, t) {
            (UnOp::Plus, _, _) => Ok(v),
            (UnOp::Neg, Value::Int(i), Some(Num::Int(t))) => {
                Ok(Value::Int(t.normalize(i.wrapping_neg())))
            }
            (UnOp::Neg, Value::Real(r), Some(Num::Real(k))) => {
                let r = -r;
                Ok(Value::Real(if k == RealKind::Float {
                    r.round_to_f32()
                } else {
                    r
                }))
            }
            (UnOp::BitNot, Value::Int(i), Some(Num::Int(t))) => Ok(Value::Int(t.normalize(!i))),
            _ => Err(ErrorKind::Type(format!("operator {op:?} on {v:?}"))),
        }
    }

    fn eval_binary(
        &mut self,
        op: BinOp,
        lhs: &'p Expr,
        rhs: &'p Expr,
        e: &'p Expr,
    ) -> Res<Value<R>> {
        match op {
            BinOp::And => {
                let l = truthy(self.eval(lhs)?)?;
                return Ok(Value::Int((l && truthy(self.eval(rhs)?)?) as i64));
            }
            BinOp::Or => {
                let l = truthy(self.eval(lhs)?)?;
                return Ok(Value::Int((l || truthy(self.eval(rhs)?)?) as i64));
            }
            _ => {}
        }
        let a = self.eval(lhs)?;
        let b = self.eval(rhs)?;
        if matches!(a, Value::Uninit) || matches!(b, Value::Uninit) {
            return Err(ErrorKind::Uninit);
        }
        let is_cmp = matches!(
            op,
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne
        );
        // Pointer arithmetic and comparisons.
        if matches!(a, Value::Ptr(_)) || matches!(b, Value::Ptr(_)) {
            return self.pointer_binary(op, a, b, lhs, rhs, is_cmp);
        }
        if is_cmp {
            let (Some(ta), Some(tb)) = (self.num_of(&lhs.ty.ty), self.num_of(&rhs.ty.ty)) else {
                return Err(ErrorKind::Type(
                    "comparison of non-arithmetic values".into(),
                ));
            };
            let t = common(ta, tb);
            let a = self.to_num(a, &lhs.ty.ty, t)?;
            let b = self.to_num(b, &rhs.ty.ty, t)?;
            let ord = match (a, b, t) {
                (Value::Int(x), Value::Int(y), Num::Int(it)) if it.unsigned && it.bits == 64 => {
                    (x as u64).partial_cmp(&(y as u64))
                }
                (Value::Int(x), Value::Int(y), _) => x.partial_cmp(&y),
                (Value::Real(x), Value::Real(y), _) => x.value().partial_cmp(&y.value()),
                _ => return Err(ErrorKind::Type("mixed comparison".into())),
            };
            use std::cmp::Ordering::*;
            let r = match op {
                BinOp::Lt => ord == Some(Less),
                BinOp::Le => matches!(ord, Some(Less | Equal)),
                BinOp::Gt => ord == Some(Greater),
                BinOp::Ge => matches!(ord, Some(Greater | Equal)),
                BinOp::Eq => ord == Some(Equal),
                _ => ord != Some(Equal),
            };
            return Ok(Value::Int(r as i64));
        }
        let t = self
            .num_of(&e.ty.ty)
            .ok_or_else(|| ErrorKind::Type("arithmetic of non-arithmetic type".into()))?;
        if matches!(op, BinOp::Shl | BinOp::Shr) {
            let a = self.to_num(a, &lhs.ty.ty, t)?;
            let (Value::Int(x), Value::Int(n), Num::Int(it)) = (a, b, t) else {
                return Err(ErrorKind::Type("shift of a non-integer".into()));
            };
            // x86 masks the count; C calls an oversized count undefined.
            let n = (n as u32) & (it.bits.max(32) - 1);
            let r = if op == BinOp::Shl {
                x.wrapping_shl(n)
            } else if it.unsigned {
                ((x as u64) >> n) as i64
            } else {
                x >> n
            };
            return Ok(Value::Int(it.normalize(r)));
        }
        let a = self.to_num(a, &lhs.ty.ty, t)?;
        let b = self.to_num(b, &rhs.ty.ty, t)?;
        match (a, b, t) {
            (Value::Int(x), Value::Int(y), Num::Int(it)) => int_op(op, x, y, it).map(Value::Int),
            (Value::Real(x), Value::Real(y), Num::Real(k)) => {
                let r = match op {
                    BinOp::Add => x + y,
                    BinOp::Sub => x - y,
                    BinOp::Mul => x * y,
                    BinOp::Div => x / y,
                    _ => return Err(ErrorKind::Type(format!("operator {op:?} on reals"))),
                };
                Ok(Value::Real(if k == RealKind::Float {
                    r.round_to_f32()
                } else {
                    r
                }))
            }
            _ => Err(ErrorKind::Type(format!(
                "operator {op:?} on mismatched operands"
            ))),
        }
    }

    fn pointee_size(&self, ty: &Type) -> i64 {
        match self.program.resolve(ty) {
            Type::Pointer(t) => {
                // `void *` arithmetic is byte arithmetic (a GNU extension).
                if matches!(self.program.resolve(&t.ty), Type::Void) {
                    1
                } else {
                    self.size_of(&t.ty) as i64
                }
            }
            Type::Array { elem, .. } => self.size_of(&elem.ty) as i64,
            _ => 1,
        }
    }

    fn pointer_binary(
        &mut self,
        op: BinOp,
        a: Value<R>,
        b: Value<R>,
        lhs: &'p Expr,
        rhs: &'p Expr,
        is_cmp: bool,
    ) -> Res<Value<R>> {
        let as_ptr = |v: Value<R>| match v {
            Value::Ptr(p) => Some(p),
            Value::Int(0) => Some(Pointer::NULL),
            _ => None,
        };
        if is_cmp {
            let (Some(p), Some(q)) = (as_ptr(a), as_ptr(b)) else {
                return Err(ErrorKind::Type(
                    "comparison of a pointer with a non-pointer".into(),
                ));
            };
            if !matches!(op, BinOp::Eq | BinOp::Ne) && p.alloc != q.alloc {
                return Err(ErrorKind::Unsupported(
                    "ordering comparison of pointers into different objects".into(),
                ));
            }
            let r = match op {
                BinOp::Lt => p.offset < q.offset,
                BinOp::Le => p.offset <= q.offset,
                BinOp::Gt => p.offset > q.offset,
                BinOp::Ge => p.offset >= q.offset,
                BinOp::Eq => p == q,
                _ => p != q,
            };
            return Ok(Value::Int(r as i64));
        }
        match (op, a, b) {
            (BinOp::Add, Value::Ptr(p), Value::Int(i)) => {
                let s = self.pointee_size(&lhs.ty.ty);
                Ok(Value::Ptr(p.add_bytes(i.wrapping_mul(s))))
            }
            (BinOp::Add, Value::Int(i), Value::Ptr(p)) => {
                let s = self.pointee_size(&rhs.ty.ty);
                Ok(Value::Ptr(p.add_bytes(i.wrapping_mul(s))))
            }
            (BinOp::Sub, Value::Ptr(p), Value::Int(i)) => {
                let s = self.pointee_size(&lhs.ty.ty);
                Ok(Value::Ptr(p.add_bytes(i.wrapping_neg().wrapping_mul(s))))
            }
            (BinOp::Sub, Value::Ptr(p), Value::Ptr(q)) => {
                if p.alloc != q.alloc {
                    return Err(ErrorKind::Unsupported(
                        "difference of pointers into different objects".into(),
                    ));
                }
                let s = self.pointee_size(&lhs.ty.ty).max(1);
                Ok(Value::Int(p.offset.wrapping_sub(q.offset).wrapping_div(s)))
            }
            _ => Err(ErrorKind::Type(format!("operator {op:?} on pointers"))),
        }
    }

    // -----------------------------------------------------------------
    // Storing
    // -----------------------------------------------------------------

    /// Stores `v` (of type `from`) into the object of type `ty` at `p`:
    /// a conversion for scalars, a copy for structs and arrays.
    fn store(&mut self, p: Pointer, ty: &Type, v: Value<R>, from: &Type) -> Res<()> {
        if self.is_aggregate(ty) {
            let Value::Ptr(src) = v else {
                return Err(ErrorKind::Type("aggregate copy from a non-object".into()));
            };
            let n = self.size_of(ty);
            return self.mem.copy(p, src, n);
        }
        let v = self.convert(v, from, ty)?;
        let scalar = self.scalar_of(ty)?;
        self.mem.write(p, scalar, v)
    }

    /// Initialises the object of type `ty` at `p`.
    fn init_object(&mut self, p: Pointer, ty: &'p Type, init: &'p Init) -> Res<()> {
        match init {
            Init::Expr(e) => {
                if let (Type::Array { len, .. }, ExprKind::StrConst(s)) =
                    (self.resolve(ty), &e.kind)
                {
                    let mut bytes = unescape(s);
                    bytes.push(0);
                    let cap = len
                        .as_ref()
                        .and_then(|l| l.value)
                        .unwrap_or(bytes.len() as u64);
                    bytes.truncate(cap as usize);
                    self.mem.zero(p, cap)?;
                    for (i, b) in bytes.iter().enumerate() {
                        self.mem.write(
                            p.add_bytes(i as i64),
                            Scalar::Int(IntTy::CHAR),
                            Value::Int(IntTy::CHAR.normalize(*b as i64)),
                        )?;
                    }
                    return Ok(());
                }
                let v = self.eval(e)?;
                self.store(p, ty, v, &e.ty.ty)
            }
            Init::List(items, _) => {
                let size = self.size_of(ty);
                if p.offset == 0 && self.mem.size_of(p) == Some(size) {
                    self.mem.set_zero_default(p);
                } else {
                    self.mem.zero(p, size)?;
                }
                let mut pos = 0;
                self.init_list(p, ty, items, &mut pos)
            }
        }
    }

    /// Fills the aggregate at `p` from `items[*pos..]`, with C's brace
    /// elision: a sub-aggregate not given its own braces takes as many
    /// items as it has scalars.
    fn init_list(
        &mut self,
        p: Pointer,
        ty: &'p Type,
        items: &'p [Init],
        pos: &mut usize,
    ) -> Res<()> {
        let subs: Vec<(u64, &'p Type)> = match self.resolve(ty) {
            Type::Array { elem, len } => {
                let n = len
                    .as_ref()
                    .and_then(|l| l.value)
                    .unwrap_or(items.len() as u64);
                let s = self.size_of(&elem.ty);
                (0..n).map(|i| (i * s, &elem.ty)).collect()
            }
            Type::Struct(id) => self
                .program
                .strukt(*id)
                .fields
                .iter()
                .enumerate()
                .map(|(i, f)| (self.program.field_offset(*id, i), &f.ty.ty))
                .collect(),
            _ => vec![(0, ty)],
        };
        for (off, sub_ty) in subs {
            let Some(item) = items.get(*pos) else {
                return Ok(());
            };
            let q = p.add_bytes(off as i64);
            match item {
                Init::List(inner, _) => {
                    *pos += 1;
                    let mut inner_pos = 0;
                    self.init_list(q, sub_ty, inner, &mut inner_pos)?;
                }
                Init::Expr(e) => {
                    let elided = self.is_aggregate(sub_ty)
                        && !self.is_aggregate(&e.ty.ty)
                        && !matches!(e.kind, ExprKind::StrConst(_));
                    if elided {
                        self.init_list(q, sub_ty, items, pos)?;
                    } else {
                        *pos += 1;
                        self.init_object(q, sub_ty, item)?;
                    }
                }
            }
        }
        Ok(())
    }

    // -----------------------------------------------------------------
    // Statements
    // -----------------------------------------------------------------

    fn burn(&mut self) -> Result<(), Error> {
        if self.fuel == 0 {
            return Err(self.fail(ErrorKind::StepLimit));
        }
        self.fuel -= 1;
        self.steps += 1;
        Ok(())
    }

    fn frame(&mut self) -> &mut Frame {
        if self.frames.is_empty() {
            self.frames.push(Frame::default());
        }
        let last = self.frames.len() - 1;
        &mut self.frames[last]
    }

    fn scope_mark(&mut self) -> usize {
        self.frame().locals.len()
    }

    /// Ends the lifetime of the variables declared since `mark`.
    fn scope_exit(&mut self, mark: usize) {
        let doomed: Vec<Pointer> = self.frame().locals.drain(mark..).collect();
        for p in doomed {
            self.mem.kill(p);
        }
    }

    fn exec_block(&mut self, stmts: &'p [Stmt]) -> Result<Flow<'p, R>, Error> {
        let mark = self.scope_mark();
        let mut flow = Flow::Normal;
        for s in stmts {
            match self.exec(s) {
                Ok(Flow::Normal) => {}
                Ok(f) => {
                    flow = f;
                    break;
                }
                Err(e) => {
                    self.scope_exit(mark);
                    return Err(e);
                }
            }
        }
        self.scope_exit(mark);
        Ok(flow)
    }

    fn cond(&mut self, e: &'p Expr) -> Result<bool, Error> {
        let v = self.eval(e).map_err(|k| self.fail(k))?;
        truthy(v).map_err(|k| self.fail(k))
    }

    fn exec(&mut self, s: &'p Stmt) -> Result<Flow<'p, R>, Error> {
        self.span = s.span;
        self.burn()?;
        let span = s.span;
        let at = |k: ErrorKind| Error::at(k, span);
        match &s.kind {
            StmtKind::Assign { lhs, rhs, .. } => {
                let v = self.eval(rhs).map_err(at)?;
                let p = self.place(lhs).map_err(at)?;
                self.store(p, &lhs.ty.ty, v, &rhs.ty.ty).map_err(at)?;
                Ok(Flow::Normal)
            }
            StmtKind::Call {
                result,
                callee,
                args,
                ..
            } => {
                let proc = self.program.proc(*callee);
                // The runtime's scalar pushes and pops have inline bodies in
                // aioli.h (fast paths over the C runtime's blocks); the
                // interpreter keeps its own stack for them.
                let runtime_stack =
                    proc.name.starts_with("aioli_push_") || proc.name.starts_with("aioli_pop_");
                let v = if proc.body.is_some() && !runtime_stack {
                    if args.len() != proc.params.len() {
                        return Err(at(ErrorKind::Arity {
                            name: proc.name.clone(),
                            expected: proc.params.len(),
                            got: args.len(),
                        }));
                    }
                    let mut vals = Vec::with_capacity(args.len());
                    for (a, p) in args.iter().zip(&proc.params) {
                        let v = self.eval(a).map_err(at)?;
                        let ty = self.storage_type(*p);
                        vals.push(self.convert(v, &a.ty.ty, &ty).map_err(at)?);
                    }
                    self.call_proc(*callee, vals)?
                } else {
                    self.call_library(&proc.name, args).map_err(at)?
                };
                self.span = span;
                if let Some(r) = result {
                    let p = self.place(r).map_err(at)?;
                    let ret = &self.program.proc(*callee).ret.ty;
                    self.store(p, &r.ty.ty, v, ret).map_err(at)?;
                }
                Ok(Flow::Normal)
            }
            StmtKind::Decl { vars, .. } => {
                for d in vars {
                    self.declare(d.sym, d.init.as_ref()).map_err(at)?;
                }
                Ok(Flow::Normal)
            }
            StmtKind::Alloc {
                target,
                elem,
                count,
                zeroed,
                ..
            } => {
                let n = self.eval(count).map_err(at)?;
                let n = self
                    .convert(n, &count.ty.ty, &QualType::size_t().ty)
                    .map_err(at)?;
                let Value::Int(n) = n else {
                    return Err(at(ErrorKind::Type("allocation count".into())));
                };
                let size = self.size_of(&elem.ty).max(1);
                let bytes = (n as u64).checked_mul(size).filter(|b| *b < 1 << 32);
                let v = match bytes {
                    Some(b) => Value::Ptr(self.mem.allocate(b, AllocKind::Heap, *zeroed)),
                    None => Value::Ptr(Pointer::NULL),
                };
                let p = self.place(target).map_err(at)?;
                self.mem.write(p, Scalar::Ptr, v).map_err(at)?;
                Ok(Flow::Normal)
            }
            StmtKind::Free { ptr } => {
                match self.eval(ptr).map_err(at)? {
                    Value::Ptr(p) => self.mem.free(p).map_err(at)?,
                    Value::Int(0) => {}
                    _ => return Err(at(ErrorKind::InvalidFree)),
                }
                Ok(Flow::Normal)
            }
            StmtKind::If { cond, then, other } => {
                if self.cond(cond)? {
                    self.exec_block(&then.stmts)
                } else if let Some(o) = other {
                    self.exec_block(&o.stmts)
                } else {
                    Ok(Flow::Normal)
                }
            }
            StmtKind::Loop { header, body } => self.exec_loop(header, &body.stmts),
            StmtKind::Switch { selector, cases } => {
                let sel = self.eval(selector).map_err(at)?;
                let sel_ty = match self.num_of(&selector.ty.ty) {
                    Some(Num::Int(t)) => promote(t),
                    _ => return Err(at(ErrorKind::Type("switch on a non-integer".into()))),
                };
                let sel = self
                    .to_num(sel, &selector.ty.ty, Num::Int(sel_ty))
                    .map_err(at)?;
                let mut start = None;
                let mut default = None;
                'search: for (i, c) in cases.iter().enumerate() {
                    for l in &c.labels {
                        match l {
                            None => default = default.or(Some(i)),
                            Some(e) => {
                                let v = self.eval(e).map_err(at)?;
                                let v = self.to_num(v, &e.ty.ty, Num::Int(sel_ty)).map_err(at)?;
                                if v == sel {
                                    start = Some(i);
                                    break 'search;
                                }
                            }
                        }
                    }
                }
                let Some(start) = start.or(default) else {
                    return Ok(Flow::Normal);
                };
                let mark = self.scope_mark();
                let mut flow = Flow::Normal;
                'cases: for c in &cases[start..] {
                    for st in &c.body {
                        match self.exec(st) {
                            Ok(Flow::Normal) => {}
                            Ok(Flow::Break) => break 'cases,
                            Ok(f) => {
                                flow = f;
                                break 'cases;
                            }
                            Err(e) => {
                                self.scope_exit(mark);
                                return Err(e);
                            }
                        }
                    }
                }
                self.scope_exit(mark);
                Ok(flow)
            }
            StmtKind::Break => Ok(Flow::Break),
            StmtKind::Continue => Ok(Flow::Continue),
            StmtKind::Return(e) => {
                let Some(e) = e else {
                    return Ok(Flow::Return(Value::Uninit, None));
                };
                let v = self.eval(e).map_err(at)?;
                if let (Type::Struct(_), Value::Ptr(src)) = (self.resolve(&e.ty.ty), v) {
                    // Copy the struct out now: the blocks being left end
                    // the lifetime of the variable it may live in.
                    let size = self.size_of(&e.ty.ty);
                    let copy = self.mem.allocate(size, AllocKind::Global, false);
                    self.mem.copy(copy, src, size).map_err(at)?;
                    return Ok(Flow::Return(Value::Ptr(copy), Some(&e.ty.ty)));
                }
                Ok(Flow::Return(v, Some(&e.ty.ty)))
            }
            StmtKind::Block(b) => self.exec_block(&b.stmts),
            StmtKind::Empty => Ok(Flow::Normal),
            StmtKind::Discard(e) if self.program.is_function_mention(e) => Ok(Flow::Normal),
            StmtKind::Discard(e) => {
                // C evaluates it: reading freed memory here is still an error.
                self.eval(e)?;
                Ok(Flow::Normal)
            }
        }
    }

    fn exec_loop(
        &mut self,
        header: &'p LoopHeader,
        body: &'p [Stmt],
    ) -> Result<Flow<'p, R>, Error> {
        let mark = self.scope_mark();
        let result = self.exec_loop_inner(header, body);
        self.scope_exit(mark);
        result
    }

    fn exec_loop_inner(
        &mut self,
        header: &'p LoopHeader,
        body: &'p [Stmt],
    ) -> Result<Flow<'p, R>, Error> {
        let (cond, step, test_first): (Option<&'p Expr>, &'p [Stmt], bool) = match header {
            LoopHeader::For { init, cond, step } => {
                for s in init {
                    if let f @ Flow::Return(..) = self.exec(s)? {
                        return Ok(f);
                    }
                }
                (cond.as_ref(), step, true)
            }
            LoopHeader::While { cond } => (Some(cond), &[], true),
            LoopHeader::DoWhile { cond } => (Some(cond), &[], false),
        };
        let mut first = true;
        loop {
            self.burn()?;
            if (test_first || !first)
                && let Some(c) = cond
                && !self.cond(c)?
            {
                return Ok(Flow::Normal);
            }
            first = false;
            match self.exec_block(body)? {
                Flow::Break => return Ok(Flow::Normal),
                f @ Flow::Return(..) => return Ok(f),
                Flow::Normal | Flow::Continue => {}
            }
            for s in step {
                self.exec(s)?;
            }
        }
    }

    fn declare(&mut self, sym: SymId, init: Option<&'p Init>) -> Res<()> {
        let s = self.program.sym(sym);
        match s.storage {
            Storage::Extern => Ok(()),
            Storage::Static => {
                if self.statics.contains_key(&sym) {
                    return Ok(());
                }
                let size = self.size_of(&s.ty.ty);
                let p = self.mem.allocate(size, AllocKind::Global, true);
                self.statics.insert(sym, p);
                if let Some(init) = init {
                    self.init_object(p, &s.ty.ty, init)?;
                }
                Ok(())
            }
            Storage::Auto => {
                let size = match self.resolve(&s.ty.ty) {
                    // A variable-length array: its length is evaluated now.
                    Type::Array {
                        elem,
                        len: Some(len),
                    } if len.value.is_none() => {
                        let n = self.eval(&len.expr)?;
                        let n = self.convert(n, &len.expr.ty.ty, &QualType::long().ty)?;
                        let n = n.as_int().unwrap_or(0).max(0) as u64;
                        n.saturating_mul(self.size_of(&elem.ty))
                    }
                    Type::Array { len: None, elem } => match init {
                        Some(Init::List(items, _)) => {
                            (items.len() as u64).saturating_mul(self.size_of(&elem.ty))
                        }
                        Some(Init::Expr(Expr {
                            kind: ExprKind::StrConst(t),
                            ..
                        })) => unescape(t).len() as u64 + 1,
                        _ => 0,
                    },
                    _ => self.size_of(&s.ty.ty),
                };
                let p = self.mem.allocate(size, AllocKind::Local, false);
                let frame = self.frame();
                frame.vars.insert(sym, p);
                frame.locals.push(p);
                if let Some(init) = init {
                    self.init_object(p, &s.ty.ty, init)?;
                }
                Ok(())
            }
        }
    }

    /// Runs a procedure with a body on arguments already converted to the
    /// parameters' types.
    pub(super) fn call_proc(&mut self, id: ProcId, args: Vec<Value<R>>) -> Result<Value<R>, Error> {
        let program = self.program;
        let proc = program.proc(id);
        let Some(body) = &proc.body else {
            return Err(self.fail(ErrorKind::NoBody(proc.name.clone())));
        };
        if self.frames.len() >= MAX_CALL_DEPTH {
            return Err(self.fail(ErrorKind::CallDepth));
        }
        let mut frame = Frame::default();
        for (sym, v) in proc.params.iter().zip(args) {
            let ty = self.storage_type(*sym);
            let p = self
                .mem
                .allocate(self.size_of(&ty), AllocKind::Local, false);
            frame.vars.insert(*sym, p);
            frame.locals.push(p);
            if let Err(k) = self.store(p, &ty, v, &ty) {
                for q in frame.locals {
                    self.mem.kill(q);
                }
                return Err(self.fail(k));
            }
        }
        self.frames.push(frame);
        let flow = self.exec_block(&body.stmts);
        let returned = match flow {
            Ok(Flow::Return(v, from)) => self.return_value(v, from, &proc.ret.ty),
            Ok(_) => Ok(Value::Uninit),
            Err(e) => Err(e),
        };
        if let Some(frame) = self.frames.pop() {
            for q in frame.locals {
                self.mem.kill(q);
            }
        }
        returned
    }

    /// Converts a returned value to the return type.
    fn return_value(
        &mut self,
        v: Value<R>,
        from: Option<&'p Type>,
        ret: &'p Type,
    ) -> Result<Value<R>, Error> {
        let Some(from) = from else {
            return Ok(Value::Uninit);
        };
        if self.is_aggregate(ret) {
            // Already copied out by the `return` statement.
            return Ok(v);
        }
        self.convert(v, from, ret).map_err(|k| self.fail(k))
    }

    // -----------------------------------------------------------------
    // The C library
    // -----------------------------------------------------------------

    fn print_args(&mut self, args: &'p [Expr]) -> Res<Vec<PrintArg>> {
        let mut out = Vec::with_capacity(args.len());
        for a in args {
            let v = self.eval(a)?;
            out.push(match v {
                Value::Int(i) => PrintArg::Int(i),
                Value::Real(r) => PrintArg::Real(r.value()),
                Value::Ptr(p) => PrintArg::Ptr(p),
                Value::Uninit => return Err(ErrorKind::Uninit),
            });
        }
        Ok(out)
    }

    fn format(&mut self, fmt: &'p Expr, rest: &'p [Expr]) -> Res<String> {
        let Value::Ptr(f) = self.eval(fmt)? else {
            return Err(ErrorKind::Printf("format is not a string".into()));
        };
        let fmt = self.mem.read_c_string(f)?;
        let args = self.print_args(rest)?;
        let mem = &self.mem;
        printf::format(&fmt, &args, &|p| mem.read_c_string(p))
    }

    fn arg_ptr(&mut self, args: &'p [Expr], i: usize) -> Res<Pointer> {
        match args.get(i).map(|a| self.eval(a)).transpose()? {
            Some(Value::Ptr(p)) => Ok(p),
            Some(Value::Int(0)) => Ok(Pointer::NULL),
            _ => Err(ErrorKind::Type(format!(
                "argument {} is not a pointer",
                i + 1
            ))),
        }
    }

    /// Argument `i` converted to `double`, as a prototype would.
    fn arg_real(&mut self, args: &'p [Expr], i: usize) -> Res<R> {
        let a = args
            .get(i)
            .ok_or_else(|| ErrorKind::Type(format!("missing argument {}", i + 1)))?;
        let v = self.eval(a)?;
        match self.convert(v, &a.ty.ty, &Type::Real(RealKind::Double))? {
            Value::Real(r) => Ok(r),
            _ => Err(ErrorKind::Type("expected a real argument".into())),
        }
    }

    /// The `<math.h>` functions called as statements (`deriv/fma` …):
    /// written with the operations of [`Real`], so dual numbers carry the
    /// derivative the rules state; the value is the C library's.
    fn call_math_statement(&mut self, name: &str, args: &'p [Expr]) -> Res<Option<R>> {
        let arity = match name {
            "fma" => 3,
            "fdim" | "ldexp" | "scalbn" | "remainder" | "nextafter" => 2,
            "rint" | "nearbyint" => 1,
            _ => return Ok(None),
        };
        if args.len() != arity {
            return Err(ErrorKind::Arity {
                name: name.to_string(),
                expected: arity,
                got: args.len(),
            });
        }
        let x = self.arg_real(args, 0)?;
        // `v` with the value replaced by `exact` (same derivative).
        let with_value = |v: R, exact: f64| v + R::from_f64(exact - v.value());
        Ok(Some(match name {
            "fma" => {
                let (y, z) = (self.arg_real(args, 1)?, self.arg_real(args, 2)?);
                with_value(x * y + z, x.value().mul_add(y.value(), z.value()))
            }
            "fdim" => {
                let y = self.arg_real(args, 1)?;
                if x > y { x - y } else { R::from_f64(0.0) }
            }
            "ldexp" | "scalbn" => {
                let n = self.arg_int(args, 1)?.clamp(-4000, 4000) as i32;
                let scale = 2f64.powi(n);
                with_value(x * R::from_f64(scale), x.value() * scale)
            }
            "remainder" => {
                let y = self.arg_real(args, 1)?;
                let exact = super::real::c_remainder(x.value(), y.value());
                let n = ((x.value() - exact) / y.value()).round();
                with_value(x - y * R::from_f64(n), exact)
            }
            "nextafter" => {
                let y = self.arg_real(args, 1)?;
                with_value(x, super::real::c_nextafter(x.value(), y.value()))
            }
            // rint, nearbyint: the default rounding mode, ties to even.
            _ => R::from_f64(x.value().round_ties_even()),
        }))
    }

    /// The integer-valued `<math.h>` functions: their values only.
    fn call_math_integer(&mut self, name: &str, args: &'p [Expr]) -> Res<Option<i64>> {
        if !matches!(
            name,
            "lrint"
                | "lround"
                | "signbit"
                | "isnan"
                | "isinf"
                | "isfinite"
                | "isnormal"
                | "fpclassify"
        ) {
            return Ok(None);
        }
        if args.len() != 1 {
            return Err(ErrorKind::Arity {
                name: name.to_string(),
                expected: 1,
                got: args.len(),
            });
        }
        let x = self.arg_real(args, 0)?.value();
        Ok(Some(match name {
            "lrint" => x.round_ties_even() as i64,
            "lround" => x.round() as i64,
            "signbit" => i64::from(x.is_sign_negative()),
            "isnan" => i64::from(x.is_nan()),
            "isinf" => i64::from(x.is_infinite()),
            "isnormal" => i64::from(x.is_normal()),
            // The values of `FP_NAN`, ... as the tool's <math.h> (and
            // glibc's) define them.
            "fpclassify" => match x.classify() {
                std::num::FpCategory::Nan => 0,
                std::num::FpCategory::Infinite => 1,
                std::num::FpCategory::Zero => 2,
                std::num::FpCategory::Subnormal => 3,
                std::num::FpCategory::Normal => 4,
            },
            _ => i64::from(x.is_finite()),
        }))
    }

    fn arg_int(&mut self, args: &'p [Expr], i: usize) -> Res<i64> {
        let a = args
            .get(i)
            .ok_or_else(|| ErrorKind::Type(format!("missing argument {}", i + 1)))?;
        let v = self.eval(a)?;
        match self.convert(v, &a.ty.ty, &QualType::long().ty)? {
            Value::Int(i) => Ok(i),
            _ => Err(ErrorKind::Type("expected an integer argument".into())),
        }
    }

    fn write_stream(&mut self, stream: Pointer, text: &str) -> Res<()> {
        if stream == self.stdout_stream {
            self.stdout.push_str(text);
        } else if stream == self.stderr_stream {
            self.stderr.push_str(text);
        } else {
            return Err(ErrorKind::UnsupportedLibrary(
                "output to a stream other than stdout or stderr".into(),
            ));
        }
        Ok(())
    }

    /// A procedure without a body: the C library functions the
    /// interpreter implements; anything else is an error.
    fn call_library(&mut self, name: &str, args: &'p [Expr]) -> Res<Value<R>> {
        let count = |n: usize| -> Res<()> {
            if args.len() < n {
                Err(ErrorKind::Arity {
                    name: name.to_string(),
                    expected: n,
                    got: args.len(),
                })
            } else {
                Ok(())
            }
        };
        match name {
            "printf" => {
                count(1)?;
                let s = self.format(&args[0], &args[1..])?;
                self.stdout.push_str(&s);
                Ok(Value::Int(s.len() as i64))
            }
            "fprintf" => {
                count(2)?;
                let stream = self.arg_ptr(args, 0)?;
                let s = self.format(&args[1], &args[2..])?;
                self.write_stream(stream, &s)?;
                Ok(Value::Int(s.len() as i64))
            }
            "puts" => {
                count(1)?;
                let p = self.arg_ptr(args, 0)?;
                let s = self.mem.read_c_string(p)?;
                self.stdout.push_str(&s);
                self.stdout.push('\n');
                Ok(Value::Int(1))
            }
            "putchar" => {
                count(1)?;
                let c = self.arg_int(args, 0)?;
                self.stdout.push((c as u8) as char);
                Ok(Value::Int(c & 0xff))
            }
            "fputs" => {
                count(2)?;
                let p = self.arg_ptr(args, 0)?;
                let stream = self.arg_ptr(args, 1)?;
                let s = self.mem.read_c_string(p)?;
                self.write_stream(stream, &s)?;
                Ok(Value::Int(1))
            }
            "fflush" => Ok(Value::Int(0)),
            "assert" => {
                count(1)?;
                let v = self.eval(&args[0])?;
                if truthy(v)? {
                    Ok(Value::Int(0))
                } else {
                    Err(ErrorKind::AssertionFailed)
                }
            }
            "exit" => {
                count(1)?;
                let status = self.arg_int(args, 0)?;
                Err(ErrorKind::Exit(status as i32))
            }
            "memcpy" | "memmove" => {
                count(3)?;
                let d = self.arg_ptr(args, 0)?;
                let s = self.arg_ptr(args, 1)?;
                let n = self.arg_int(args, 2)?;
                self.mem.copy(d, s, n as u64)?;
                Ok(Value::Ptr(d))
            }
            "strlen" => {
                count(1)?;
                let p = self.arg_ptr(args, 0)?;
                let mut n: i64 = 0;
                loop {
                    match self.mem.read(p.add_bytes(n), Scalar::Int(IntTy::CHAR))? {
                        Value::Int(0) => break,
                        Value::Int(_) => n += 1,
                        _ => return Err(ErrorKind::TypePun),
                    }
                }
                Ok(Value::Int(n))
            }
            "strcmp" => {
                count(2)?;
                let a = self.arg_ptr(args, 0)?;
                let b = self.arg_ptr(args, 1)?;
                let mut k: i64 = 0;
                loop {
                    // C compares the characters as unsigned char.
                    let at = |v: Value<R>| -> Result<i64, ErrorKind> {
                        match v {
                            Value::Int(c) => Ok(c & 0xff),
                            _ => Err(ErrorKind::TypePun),
                        }
                    };
                    let ca = at(self.mem.read(a.add_bytes(k), Scalar::Int(IntTy::CHAR))?)?;
                    let cb = at(self.mem.read(b.add_bytes(k), Scalar::Int(IntTy::CHAR))?)?;
                    if ca != cb || ca == 0 {
                        return Ok(Value::Int((ca - cb).signum()));
                    }
                    k += 1;
                }
            }
            "memset" => {
                count(3)?;
                let d = self.arg_ptr(args, 0)?;
                let c = self.arg_int(args, 1)?;
                let n = self.arg_int(args, 2)? as u64;
                if c & 0xff == 0 {
                    self.mem.zero(d, n)?;
                } else {
                    for i in 0..n {
                        self.mem.write(
                            d.add_bytes(i as i64),
                            Scalar::Int(IntTy::CHAR),
                            Value::Int(IntTy::CHAR.normalize(c)),
                        )?;
                    }
                }
                Ok(Value::Ptr(d))
            }
            "malloc" | "calloc" => {
                let bytes = if name == "malloc" {
                    count(1)?;
                    self.arg_int(args, 0)? as u64
                } else {
                    count(2)?;
                    (self.arg_int(args, 0)? as u64).saturating_mul(self.arg_int(args, 1)? as u64)
                };
                if bytes >= 1 << 32 {
                    return Ok(Value::Ptr(Pointer::NULL));
                }
                Ok(Value::Ptr(self.mem.allocate(
                    bytes,
                    AllocKind::Heap,
                    name == "calloc",
                )))
            }
            "free" => {
                count(1)?;
                let p = self.arg_ptr(args, 0)?;
                self.mem.free(p)?;
                Ok(Value::Uninit)
            }
            _ => {
                if let Some(b) = Builtin::from_name(name) {
                    return self.call_stack_builtin(b, args);
                }
                if let Some(r) = self.call_math_statement(name, args)? {
                    return Ok(Value::Real(r));
                }
                if let Some(i) = self.call_math_integer(name, args)? {
                    return Ok(Value::Int(i));
                }
                if let Some((func, precision)) = MathFn::from_c_name(name) {
                    let mut vals = Vec::new();
                    for a in args {
                        let v = self.eval(a)?;
                        vals.push((v, &a.ty.ty));
                    }
                    return self.library_math(name, func, precision, vals);
                }
                Err(ErrorKind::UnsupportedLibrary(name.to_string()))
            }
        }
    }

    /// A function of the runtime's adjoint stack: its arguments converted
    /// to the parameter types of `aioli.h`, as the prototype would.
    fn call_stack_builtin(&mut self, b: Builtin, args: &'p [Expr]) -> Res<Value<R>> {
        let params = b.params();
        if args.len() != params.len() {
            return Err(ErrorKind::Arity {
                name: b.name(),
                expected: params.len(),
                got: args.len(),
            });
        }
        let mut vals = Vec::with_capacity(args.len());
        for (a, ty) in args.iter().zip(&params) {
            let v = self.eval(a)?;
            vals.push(self.convert(v, &a.ty.ty, ty)?);
        }
        self.stack_builtin(b, vals)
    }

    /// A math function called as a procedure rather than an intrinsic.
    fn library_math(
        &self,
        name: &str,
        func: MathFn,
        precision: Option<RealKind>,
        vals: Vec<(Value<R>, &Type)>,
    ) -> Res<Value<R>> {
        if vals.len() != func.arity() {
            return Err(ErrorKind::Arity {
                name: name.to_string(),
                expected: func.arity(),
                got: vals.len(),
            });
        }
        let Some(kind) = precision else {
            let (v, ty) = vals[0];
            let v = self.convert(v, ty, &QualType::long().ty)?;
            let i = v.as_int().unwrap_or(0);
            let t = if name == "abs" {
                IntTy::INT
            } else {
                IntTy::LONG
            };
            return Ok(Value::Int(t.normalize(t.normalize(i).wrapping_abs())));
        };
        let real_ty = Type::Real(kind);
        let mut xs = [R::from_f64(0.0); 2];
        for (slot, (v, ty)) in xs.iter_mut().zip(vals) {
            match self.convert(v, ty, &real_ty)? {
                Value::Real(r) => *slot = r,
                _ => return Err(ErrorKind::Type("non-real math argument".into())),
            }
        }
        Ok(Value::Real(R::math(
            func,
            kind == RealKind::Float,
            xs[0],
            xs[1],
        )))
    }
}

/// Integer arithmetic in the type `t`, wrapping.
fn int_op(op: BinOp, x: i64, y: i64, t: IntTy) -> Res<i64> {
    let u = t.unsigned && t.bits == 64;
    let r = match op {
        BinOp::Add => x.wrapping_add(y),
        BinOp::Sub => x.wrapping_sub(y),
        BinOp::Mul => x.wrapping_mul(y),
        BinOp::Div | BinOp::Rem => {
            if y == 0 {
                return Err(ErrorKind::DivisionByZero);
            }
            match (op, u) {
                (BinOp::Div, true) => ((x as u64) / (y as u64)) as i64,
                (BinOp::Div, false) => x.wrapping_div(y),
                (_, true) => ((x as u64) % (y as u64)) as i64,
                (_, false) => x.wrapping_rem(y),
            }
        }
        BinOp::BitAnd => x & y,
        BinOp::BitOr => x | y,
        BinOp::BitXor => x ^ y,
        _ => return Err(ErrorKind::Type(format!("operator {op:?} on integers"))),
    };
    Ok(t.normalize(r))
}
