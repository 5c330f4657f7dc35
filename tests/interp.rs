//! Tests of the IL interpreter on programs built by hand, checked against
//! C semantics (and against the system C compiler where it matters).

use aioli::front::source::Span;
use aioli::il::*;
use aioli::interp::{Config, Dual, ErrorKind, Machine, Real, Value};

// ---------------------------------------------------------------------------
// A small builder for IL programs.
// ---------------------------------------------------------------------------

struct B {
    p: Program,
    stmt: u32,
}

fn sp() -> Span {
    Span::default()
}

fn int_t() -> QualType {
    QualType::int()
}
fn dbl_t() -> QualType {
    QualType::double()
}
fn flt_t() -> QualType {
    QualType::new(Type::Real(RealKind::Float))
}
fn ptr(t: QualType) -> QualType {
    t.pointer_to()
}
fn arr(t: QualType, n: u64) -> QualType {
    QualType::new(Type::Array {
        elem: Box::new(t),
        len: Some(ArrayLen {
            expr: Box::new(ic(n as i64)),
            value: Some(n),
        }),
    })
}

fn ex(kind: ExprKind, ty: QualType) -> Expr {
    Expr::new(kind, ty, sp())
}
fn ic(v: i64) -> Expr {
    ex(
        ExprKind::IntConst {
            value: v,
            text: v.to_string(),
        },
        int_t(),
    )
}
fn rc(v: f64) -> Expr {
    ex(
        ExprKind::RealConst {
            value: v,
            text: v.to_string(),
        },
        dbl_t(),
    )
}
fn bin(op: BinOp, l: Expr, r: Expr, ty: QualType) -> Expr {
    ex(
        ExprKind::Binary {
            op,
            lhs: Box::new(l),
            rhs: Box::new(r),
        },
        ty,
    )
}
fn idx(base: Expr, i: Expr, elem: QualType) -> Expr {
    ex(
        ExprKind::Index {
            base: Box::new(base),
            index: Box::new(i),
        },
        elem,
    )
}
fn deref(p: Expr) -> Expr {
    let Type::Pointer(t) = &p.ty.ty else {
        panic!("deref of non-pointer")
    };
    let t = (**t).clone();
    ex(ExprKind::Deref(Box::new(p)), t)
}
fn addr(e: Expr) -> Expr {
    let t = ptr(e.ty.clone());
    ex(ExprKind::AddrOf(Box::new(e)), t)
}
fn math(f: MathFn, args: Vec<Expr>, single: bool) -> Expr {
    let (prec, ty) = if single {
        (RealKind::Float, flt_t())
    } else {
        (RealKind::Double, dbl_t())
    };
    ex(
        ExprKind::Intrinsic {
            call: Intrinsic {
                func: f,
                precision: Some(prec),
                name: f.c_name().to_string(),
            },
            args,
        },
        ty,
    )
}
fn strc(s: &str) -> Expr {
    ex(
        ExprKind::StrConst(format!("{s:?}")),
        ptr(QualType::new(Type::Int {
            kind: IntKind::Char,
            unsigned: false,
        })),
    )
}

impl B {
    fn new() -> B {
        let p = Program {
            scopes: vec![Scope::default()],
            global_scope: ScopeId(0),
            ..Program::default()
        };
        B { p, stmt: 0 }
    }

    fn sym(&mut self, name: &str, ty: QualType, kind: SymKind, storage: Storage) -> SymId {
        let id = SymId(self.p.symbols.len() as u32);
        self.p.symbols.push(Symbol {
            name: name.to_string(),
            ty,
            kind,
            storage,
            scope: ScopeId(0),
            span: sp(),
        });
        if kind == SymKind::Global {
            self.p.scopes[0].vars.insert(name.to_string(), id);
        }
        id
    }
    fn param(&mut self, name: &str, ty: QualType) -> SymId {
        self.sym(name, ty, SymKind::Param, Storage::Auto)
    }
    fn local(&mut self, name: &str, ty: QualType) -> SymId {
        self.sym(name, ty, SymKind::Local, Storage::Auto)
    }
    fn global(&mut self, name: &str, ty: QualType, init: Option<Init>) -> SymId {
        let id = self.sym(name, ty.clone(), SymKind::Global, Storage::Auto);
        self.p.items.push(Item {
            kind: ItemKind::Globals {
                base: ty,
                storage: Storage::Auto,
                vars: vec![Declarator { sym: id, init }],
            },
            span: sp(),
            comments: Comments::default(),
            file: Default::default(),
        });
        id
    }
    fn v(&self, id: SymId) -> Expr {
        ex(ExprKind::Var(id), self.p.sym(id).ty.clone())
    }
    fn st(&mut self, kind: StmtKind) -> Stmt {
        self.stmt += 1;
        Stmt {
            id: StmtId(self.stmt),
            kind,
            span: sp(),
            comments: Comments::default(),
        }
    }
    fn assign(&mut self, lhs: Expr, rhs: Expr) -> Stmt {
        self.st(StmtKind::Assign {
            lhs,
            rhs,
            sugar: AssignSugar::Plain,
        })
    }
    fn decl(&mut self, sym: SymId, init: Option<Expr>) -> Stmt {
        let base = self.p.sym(sym).ty.clone();
        let storage = self.p.sym(sym).storage;
        self.st(StmtKind::Decl {
            base,
            storage,
            vars: vec![Declarator {
                sym,
                init: init.map(Init::Expr),
            }],
        })
    }
    fn ret(&mut self, e: Expr) -> Stmt {
        self.st(StmtKind::Return(Some(e)))
    }
    fn block(&self, stmts: Vec<Stmt>) -> Block {
        Block {
            stmts,
            scope: ScopeId(0),
            closing_comments: vec![],
            span: sp(),
        }
    }
    fn for_loop(&mut self, i: SymId, n: Expr, body: Vec<Stmt>) -> Stmt {
        let init = vec![self.assign(self.v(i), ic(0))];
        let cond = bin(BinOp::Lt, self.v(i), n, int_t());
        let step = vec![self.assign(self.v(i), bin(BinOp::Add, self.v(i), ic(1), int_t()))];
        let body = self.block(body);
        self.st(StmtKind::Loop {
            header: LoopHeader::For {
                init,
                cond: Some(cond),
                step,
            },
            body,
        })
    }
    fn call(&mut self, result: Option<Expr>, callee: ProcId, args: Vec<Expr>) -> Stmt {
        self.st(StmtKind::Call {
            result,
            callee,
            args,
            decl_init: false,
        })
    }
    fn system(&mut self, name: &str, ret: QualType) -> ProcId {
        self.proc_full(name, ret, vec![], None, ProcOrigin::System)
    }
    fn proc(&mut self, name: &str, ret: QualType, params: Vec<SymId>, body: Vec<Stmt>) -> ProcId {
        let body = self.block(body);
        self.proc_full(name, ret, params, Some(body), ProcOrigin::User)
    }
    fn proc_full(
        &mut self,
        name: &str,
        ret: QualType,
        params: Vec<SymId>,
        body: Option<Block>,
        origin: ProcOrigin,
    ) -> ProcId {
        let id = ProcId(self.p.procs.len() as u32);
        self.p.procs.push(Procedure {
            name: name.to_string(),
            ret,
            params,
            scope: ScopeId(0),
            storage: Storage::Auto,
            is_inline: false,
            body,
            origin,
            span: sp(),
            comments: Comments::default(),
            stmt_count: self.stmt + 1,
        });
        id
    }
    fn strukt(&mut self, name: &str, fields: &[(&str, QualType)]) -> (StructId, QualType) {
        let id = StructId(self.p.structs.len() as u32);
        self.p.structs.push(StructDef {
            tag: Some(name.to_string()),
            fields: fields
                .iter()
                .map(|(n, t)| Field {
                    name: n.to_string(),
                    ty: t.clone(),
                    span: sp(),
                    comments: Comments::default(),
                })
                .collect(),
            span: sp(),
            comments: Comments::default(),
        });
        (id, QualType::new(Type::Struct(id)))
    }
}

fn field(base: Expr, s: StructId, f: usize, ty: QualType) -> Expr {
    ex(
        ExprKind::Field {
            base: Box::new(base),
            strukt: s,
            field: f,
        },
        ty,
    )
}

fn machine<R: Real>(p: &Program) -> Machine<'_, R> {
    Machine::new(p, Config { fuel: 1_000_000 }).expect("machine")
}

fn real(v: Value<f64>) -> f64 {
    v.as_real().expect("a real")
}

// ---------------------------------------------------------------------------
// Integer semantics
// ---------------------------------------------------------------------------

/// `int f(int a, int b) { return op(a, b); }` for each operator.
fn int_binop_program(op: BinOp, ty: QualType) -> Program {
    let mut b = B::new();
    let a = b.param("a", ty.clone());
    let c = b.param("b", ty.clone());
    let r = b.ret(bin(op, b.v(a), b.v(c), ty.clone()));
    b.proc("f", ty, vec![a, c], vec![r]);
    b.p
}

#[test]
fn integer_division_truncates_and_remainder_takes_the_dividend_sign() {
    let div = int_binop_program(BinOp::Div, int_t());
    let rem = int_binop_program(BinOp::Rem, int_t());
    for (x, y) in [
        (7, 2),
        (-7, 2),
        (7, -2),
        (-7, -2),
        (i32::MIN as i64, -1),
        (5, 7),
    ] {
        let mut m = machine::<f64>(&div);
        let q = m.call("f", vec![Value::Int(x), Value::Int(y)]).unwrap();
        assert_eq!(q, Value::Int((x as i32).wrapping_div(y as i32) as i64));
        let mut m = machine::<f64>(&rem);
        let r = m.call("f", vec![Value::Int(x), Value::Int(y)]).unwrap();
        assert_eq!(r, Value::Int((x as i32).wrapping_rem(y as i32) as i64));
    }
    let mut m = machine::<f64>(&div);
    let e = m.call("f", vec![Value::Int(1), Value::Int(0)]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::DivisionByZero);
}

#[test]
fn int_arithmetic_wraps_at_32_bits_and_unsigned_compares_as_unsigned() {
    let add = int_binop_program(BinOp::Mul, int_t());
    let mut m = machine::<f64>(&add);
    let r = m
        .call("f", vec![Value::Int(65536), Value::Int(65537)])
        .unwrap();
    assert_eq!(r, Value::Int(65536i32.wrapping_mul(65537) as i64));

    // (unsigned)-1 > 1 with an int operand converted to unsigned.
    let mut b = B::new();
    let uint = QualType::new(Type::Int {
        kind: IntKind::Int,
        unsigned: true,
    });
    let a = b.param("a", uint.clone());
    let c = b.param("b", int_t());
    let r = b.ret(bin(BinOp::Gt, b.v(a), b.v(c), int_t()));
    b.proc("f", int_t(), vec![a, c], vec![r]);
    let mut m = machine::<f64>(&b.p);
    assert_eq!(
        m.call("f", vec![Value::Int(-1), Value::Int(1)]).unwrap(),
        Value::Int(1)
    );
    // Shifts: arithmetic right shift of a negative int.
    let shr = int_binop_program(BinOp::Shr, int_t());
    let mut m = machine::<f64>(&shr);
    assert_eq!(
        m.call("f", vec![Value::Int(-16), Value::Int(2)]).unwrap(),
        Value::Int(-4)
    );
}

#[test]
fn real_to_int_conversion_truncates_toward_zero() {
    let mut b = B::new();
    let x = b.param("x", dbl_t());
    let r = b.ret(b.v(x));
    b.proc("f", int_t(), vec![x], vec![r]);
    let mut m = machine::<f64>(&b.p);
    for (x, want) in [(2.9, 2), (-2.9, -2), (0.5, 0), (-0.5, 0)] {
        assert_eq!(m.call("f", vec![Value::Real(x)]).unwrap(), Value::Int(want));
    }
}

// ---------------------------------------------------------------------------
// Reals: float rounding, mixed precision
// ---------------------------------------------------------------------------

#[test]
fn float_operations_round_to_single_precision() {
    // float f(float a, float b) { float t = a * b; return t / 3.0f + a; }
    let mut b = B::new();
    let a = b.param("a", flt_t());
    let c = b.param("b", flt_t());
    let t = b.local("t", flt_t());
    let d = b.decl(t, Some(bin(BinOp::Mul, b.v(a), b.v(c), flt_t())));
    let three = ex(
        ExprKind::RealConst {
            value: 3.0,
            text: "3.0f".into(),
        },
        flt_t(),
    );
    let q = bin(BinOp::Div, b.v(t), three, flt_t());
    let r = b.ret(bin(BinOp::Add, q, b.v(a), flt_t()));
    b.proc("f", flt_t(), vec![a, c], vec![d, r]);
    let mut m = machine::<f64>(&b.p);
    for (x, y) in [(0.1f32, 0.7f32), (1.3, -2.9), (1e-3, 12345.678)] {
        let got = real(
            m.call("f", vec![Value::Real(x as f64), Value::Real(y as f64)])
                .unwrap(),
        );
        let want = (x * y) / 3.0f32 + x;
        assert_eq!(got.to_bits(), (want as f64).to_bits());
    }
}

#[test]
fn mixed_float_and_double_promote_to_double() {
    // double f(float a, double b) { return a * b; }
    let mut b = B::new();
    let a = b.param("a", flt_t());
    let c = b.param("b", dbl_t());
    let r = b.ret(bin(BinOp::Mul, b.v(a), b.v(c), dbl_t()));
    b.proc("f", dbl_t(), vec![a, c], vec![r]);
    let mut m = machine::<f64>(&b.p);
    let got = real(
        m.call("f", vec![Value::Real(0.1), Value::Real(0.1)])
            .unwrap(),
    );
    assert_eq!(got, (0.1f32 as f64) * 0.1);
}

// ---------------------------------------------------------------------------
// Control flow
// ---------------------------------------------------------------------------

#[test]
fn loop_over_pointer_parameter_sums_an_array() {
    // double sum(double *x, int n) { double s = 0; int i; for (i=0;i<n;i++) s = s + x[i]; return s; }
    let mut b = B::new();
    let x = b.param("x", ptr(dbl_t()));
    let n = b.param("n", int_t());
    let s = b.local("s", dbl_t());
    let i = b.local("i", int_t());
    let ds = b.decl(s, Some(ic(0)));
    let di = b.decl(i, None);
    let body = vec![b.assign(
        b.v(s),
        bin(BinOp::Add, b.v(s), idx(b.v(x), b.v(i), dbl_t()), dbl_t()),
    )];
    let l = b.for_loop(i, b.v(n), body);
    let r = b.ret(b.v(s));
    b.proc("sum", dbl_t(), vec![x, n], vec![ds, di, l, r]);
    let mut m = machine::<f64>(&b.p);
    let xs = [0.1, 0.2, 0.3, 0.4];
    let px = m.alloc_reals(&dbl_t(), &xs);
    let got = real(m.call("sum", vec![px, Value::Int(4)]).unwrap());
    assert_eq!(got, ((0.0 + 0.1) + 0.2 + 0.3) + 0.4);
    // Reading past the end is an error.
    let e = m.call("sum", vec![px, Value::Int(5)]).unwrap_err();
    assert!(matches!(e.kind, ErrorKind::OutOfBounds { .. }), "{e}");
}

#[test]
fn switch_falls_through_until_break() {
    // int f(int k) { int r = 0; switch (k) { case 1: r = r + 1; case 2: r = r + 10; break; case 3: r = 100; default: r = r + 1000; } return r; }
    let mut b = B::new();
    let k = b.param("k", int_t());
    let r = b.local("r", int_t());
    let d = b.decl(r, Some(ic(0)));
    let case = |_: &mut B, labels: Vec<Option<Expr>>, body: Vec<Stmt>| SwitchCase {
        labels,
        body,
        span: sp(),
        comments: Comments::default(),
    };
    let add = |b: &mut B, v: i64| b.assign(b.v(r), bin(BinOp::Add, b.v(r), ic(v), int_t()));
    let s1 = add(&mut b, 1);
    let c1 = case(&mut b, vec![Some(ic(1))], vec![s1]);
    let s2 = add(&mut b, 10);
    let brk = b.st(StmtKind::Break);
    let c2 = case(&mut b, vec![Some(ic(2))], vec![s2, brk]);
    let s3 = b.assign(b.v(r), ic(100));
    let c3 = case(&mut b, vec![Some(ic(3))], vec![s3]);
    let s4 = add(&mut b, 1000);
    let c4 = case(&mut b, vec![None], vec![s4]);
    let sw = b.st(StmtKind::Switch {
        selector: b.v(k),
        cases: vec![c1, c2, c3, c4],
    });
    let ret = b.ret(b.v(r));
    b.proc("f", int_t(), vec![k], vec![d, sw, ret]);
    let mut m = machine::<f64>(&b.p);
    for (k, want) in [(1, 11), (2, 10), (3, 1100), (4, 1000)] {
        assert_eq!(m.call("f", vec![Value::Int(k)]).unwrap(), Value::Int(want));
    }
}

#[test]
fn recursion_and_the_step_limit() {
    // int fib(int n) { if (n < 2) return n; int a; int b; a = fib(n-1); b = fib(n-2); return a + b; }
    let mut b = B::new();
    let n = b.param("n", int_t());
    let x = b.local("a", int_t());
    let y = b.local("b", int_t());
    let r0 = b.ret(b.v(n));
    let then = b.block(vec![r0]);
    let iff = b.st(StmtKind::If {
        cond: bin(BinOp::Lt, b.v(n), ic(2), int_t()),
        then,
        other: None,
    });
    let dx = b.decl(x, None);
    let dy = b.decl(y, None);
    let fib = ProcId(0);
    let c1 = b.call(
        Some(b.v(x)),
        fib,
        vec![bin(BinOp::Sub, b.v(n), ic(1), int_t())],
    );
    let c2 = b.call(
        Some(b.v(y)),
        fib,
        vec![bin(BinOp::Sub, b.v(n), ic(2), int_t())],
    );
    let r = b.ret(bin(BinOp::Add, b.v(x), b.v(y), int_t()));
    b.proc("fib", int_t(), vec![n], vec![iff, dx, dy, c1, c2, r]);
    let mut m = machine::<f64>(&b.p);
    assert_eq!(
        m.call("fib", vec![Value::Int(15)]).unwrap(),
        Value::Int(610)
    );
    let mut m = Machine::<f64>::new(&b.p, Config { fuel: 1000 }).unwrap();
    let e = m.call("fib", vec![Value::Int(25)]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::StepLimit);
    assert_eq!(e.to_string(), "step limit exceeded");
    let mut m = machine::<f64>(&b.p);
    let e = m.call("fib", vec![Value::Int(100_000)]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::CallDepth);
}

#[test]
fn infinite_loop_hits_the_step_limit() {
    let mut b = B::new();
    let body = b.block(vec![]);
    let l = b.st(StmtKind::Loop {
        header: LoopHeader::While { cond: ic(1) },
        body,
    });
    b.proc("f", QualType::void(), vec![], vec![l]);
    let mut m = machine::<f64>(&b.p);
    assert_eq!(m.call("f", vec![]).unwrap_err().kind, ErrorKind::StepLimit);
}

// ---------------------------------------------------------------------------
// Memory
// ---------------------------------------------------------------------------

#[test]
fn structs_by_value_and_by_pointer() {
    // struct P { int tag; double x; float y; };
    // double norm2(struct P p) { p.x = p.x * 2; return p.x * p.x + p.y * p.y; }
    // void scale(struct P *p, double a) { p->x = p->x * a; (*p).y = a; }
    let mut b = B::new();
    let (sid, st) = b.strukt("P", &[("tag", int_t()), ("x", dbl_t()), ("y", flt_t())]);
    let p = b.param("p", st.clone());
    let px = field(b.v(p), sid, 1, dbl_t());
    let py = field(b.v(p), sid, 2, flt_t());
    let s0 = b.assign(px.clone(), bin(BinOp::Mul, px.clone(), ic(2), dbl_t()));
    let r = b.ret(bin(
        BinOp::Add,
        bin(BinOp::Mul, px.clone(), px.clone(), dbl_t()),
        bin(BinOp::Mul, py.clone(), py.clone(), flt_t()),
        dbl_t(),
    ));
    b.proc("norm2", dbl_t(), vec![p], vec![s0, r]);
    let q = b.param("q", ptr(st.clone()));
    let a = b.param("a", dbl_t());
    let qx = field(deref(b.v(q)), sid, 1, dbl_t());
    let qy = field(deref(b.v(q)), sid, 2, flt_t());
    let s1 = b.assign(qx.clone(), bin(BinOp::Mul, qx, b.v(a), dbl_t()));
    let s2 = b.assign(qy, b.v(a));
    b.proc("scale", QualType::void(), vec![q, a], vec![s1, s2]);
    // struct P swap(struct P *a, struct P *b) copies through a local.
    let pa = b.param("pa", ptr(st.clone()));
    let pb = b.param("pb", ptr(st.clone()));
    let t = b.local("t", st.clone());
    let d = b.decl(t, Some(deref(b.v(pa))));
    let c1 = b.assign(deref(b.v(pa)), deref(b.v(pb)));
    let c2 = b.assign(deref(b.v(pb)), b.v(t));
    let r = b.ret(b.v(t));
    b.proc("swap", st.clone(), vec![pa, pb], vec![d, c1, c2, r]);

    let mut m = machine::<f64>(&b.p);
    let s = m.alloc_zeroed(&st, 2);
    let s1 = m.elem_ptr(s, &st, 1).unwrap();
    let fx = m.field_ptr_by_name(s, sid, "x").unwrap();
    let fy = m.field_ptr_by_name(s, sid, "y").unwrap();
    m.write(fx, &dbl_t(), Value::Real(1.5)).unwrap();
    m.write(fy, &flt_t(), Value::Real(0.1)).unwrap();
    let got = real(m.call("norm2", vec![s]).unwrap());
    let y = 0.1f32;
    assert_eq!(got, 3.0 * 3.0 + (y * y) as f64);
    // By value: the caller's struct is unchanged.
    assert_eq!(m.read(fx, &dbl_t()).unwrap(), Value::Real(1.5));
    m.call("scale", vec![s, Value::Real(4.0)]).unwrap();
    assert_eq!(m.read(fx, &dbl_t()).unwrap(), Value::Real(6.0));
    assert_eq!(m.read(fy, &flt_t()).unwrap(), Value::Real(4.0));
    // Array of structs: element 1 is zero; swapping returns the old s[0].
    let old = m.call("swap", vec![s, s1]).unwrap();
    let ox = m.field_ptr(old, sid, 1).unwrap();
    assert_eq!(m.read(ox, &dbl_t()).unwrap(), Value::Real(6.0));
    assert_eq!(m.read(fx, &dbl_t()).unwrap(), Value::Real(0.0));
    let s1x = m.field_ptr(s1, sid, 1).unwrap();
    assert_eq!(m.read(s1x, &dbl_t()).unwrap(), Value::Real(6.0));
}

#[test]
fn malloc_free_and_memory_errors() {
    // double f(int n) { double *w = malloc(n * sizeof(double)); w[0]=1; w[n-1]=2; double r = w[0] + w[n-1]; free(w); return r; }
    let mut b = B::new();
    let n = b.param("n", int_t());
    let w = b.local("w", ptr(dbl_t()));
    let r = b.local("r", dbl_t());
    let dw = b.decl(w, None);
    let alloc = b.st(StmtKind::Alloc {
        target: b.v(w),
        elem: dbl_t(),
        count: b.v(n),
        zeroed: false,
        form: AllocForm::Malloc {
            bytes: ic(0),
            cast: None,
        },
        decl_init: false,
    });
    let last = || {
        bin(
            BinOp::Sub,
            ex(ExprKind::Var(SymId(0)), int_t()),
            ic(1),
            int_t(),
        )
    };
    let s1 = b.assign(idx(b.v(w), ic(0), dbl_t()), rc(1.0));
    let s2 = b.assign(idx(b.v(w), last(), dbl_t()), rc(2.0));
    let dr = b.decl(
        r,
        Some(bin(
            BinOp::Add,
            idx(b.v(w), ic(0), dbl_t()),
            idx(b.v(w), last(), dbl_t()),
            dbl_t(),
        )),
    );
    let fr = b.st(StmtKind::Free { ptr: b.v(w) });
    let ret = b.ret(b.v(r));
    b.proc(
        "f",
        dbl_t(),
        vec![n],
        vec![dw, alloc, s1, s2, dr, fr.clone(), ret.clone()],
    );
    // Variants: read after free, double free, read of an unset element.
    let after = b.ret(idx(b.v(w), ic(0), dbl_t()));
    let dw2 = b.decl(w, None);
    let alloc2 = b.st(StmtKind::Alloc {
        target: b.v(w),
        elem: dbl_t(),
        count: b.v(n),
        zeroed: false,
        form: AllocForm::Malloc {
            bytes: ic(0),
            cast: None,
        },
        decl_init: false,
    });
    b.proc("g", dbl_t(), vec![n], vec![dw2, alloc2, fr.clone(), after]);
    let mut m = machine::<f64>(&b.p);
    assert_eq!(real(m.call("f", vec![Value::Int(3)]).unwrap()), 3.0);
    assert_eq!(real(m.call("f", vec![Value::Int(1)]).unwrap()), 4.0);
    let e = m.call("g", vec![Value::Int(3)]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::UseAfterFree);
    let heap = m.alloc_uninit(&dbl_t(), 2);
    m.free(heap).unwrap();
    assert_eq!(m.free(heap).unwrap_err().kind, ErrorKind::DoubleFree);
    let fresh = m.alloc_uninit(&dbl_t(), 2);
    let e = m.read_reals(fresh, &dbl_t(), 1).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Uninit);
    assert_eq!(e.to_string(), "read of uninitialised memory");
}

#[test]
fn pointers_to_locals_and_pointer_arithmetic() {
    // double f(double *x) { double y = 1; double *p = &y; *p = *p + *(x + 2); double *q = x + 3; return *p + (q - x); }
    let mut b = B::new();
    let x = b.param("x", ptr(dbl_t()));
    let y = b.local("y", dbl_t());
    let p = b.local("p", ptr(dbl_t()));
    let q = b.local("q", ptr(dbl_t()));
    let dy = b.decl(y, Some(rc(1.0)));
    let dp = b.decl(p, Some(addr(b.v(y))));
    let x2 = bin(BinOp::Add, b.v(x), ic(2), ptr(dbl_t()));
    let s = b.assign(
        deref(b.v(p)),
        bin(BinOp::Add, deref(b.v(p)), deref(x2), dbl_t()),
    );
    let dq = b.decl(q, Some(bin(BinOp::Add, ic(3), b.v(x), ptr(dbl_t()))));
    let diff = bin(BinOp::Sub, b.v(q), b.v(x), QualType::long());
    let r = b.ret(bin(BinOp::Add, deref(b.v(p)), diff, dbl_t()));
    b.proc("f", dbl_t(), vec![x], vec![dy, dp, s, dq, r]);
    let mut m = machine::<f64>(&b.p);
    let xs = m.alloc_reals(&dbl_t(), &[0.0, 0.0, 5.0, 0.0]);
    assert_eq!(real(m.call("f", vec![xs]).unwrap()), 9.0);
}

#[test]
fn globals_static_locals_and_initializer_lists() {
    // double g[3] = {1, 2}; int counter(void) { static int k = 10; k = k + 1; return k; }
    let mut b = B::new();
    let g = b.global(
        "g",
        arr(dbl_t(), 3),
        Some(Init::List(
            vec![Init::Expr(ic(1)), Init::Expr(rc(2.5))],
            sp(),
        )),
    );
    let k = b.sym("k", int_t(), SymKind::Local, Storage::Static);
    let dk = b.decl(k, Some(ic(10)));
    let inc = b.assign(b.v(k), bin(BinOp::Add, b.v(k), ic(1), int_t()));
    let gi = b.assign(
        idx(b.v(g), ic(2), dbl_t()),
        bin(BinOp::Add, idx(b.v(g), ic(2), dbl_t()), b.v(k), dbl_t()),
    );
    let r = b.ret(b.v(k));
    b.proc("counter", int_t(), vec![], vec![dk, inc, gi, r]);
    let mut m = machine::<f64>(&b.p);
    assert_eq!(m.call("counter", vec![]).unwrap(), Value::Int(11));
    assert_eq!(m.call("counter", vec![]).unwrap(), Value::Int(12));
    let gp = m.global_ptr("g").unwrap();
    assert_eq!(m.read_reals(gp, &dbl_t(), 3).unwrap(), vec![1.0, 2.5, 23.0]);
}

// ---------------------------------------------------------------------------
// printf and exit
// ---------------------------------------------------------------------------

/// Compiles and runs a C program, returning its standard output.
fn run_c(source: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let c = dir.path().join("t.c");
    let exe = dir.path().join("t");
    std::fs::write(&c, source).unwrap();
    let status = std::process::Command::new(std::env::var("CC").unwrap_or("cc".into()))
        .arg("-O0")
        .arg(&c)
        .arg("-o")
        .arg(&exe)
        .arg("-lm")
        .status()
        .unwrap();
    assert!(status.success());
    let out = std::process::Command::new(&exe).output().unwrap();
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn printf_matches_the_c_library() {
    let fmt = "%d %i %u %ld %5d|%-5d|%05d %+d %x %X %#x %o %c %s %.3s|%8.3f|%-10.2e|%g %g %g %g %.17g %e %f %a %a %a %a %.3a %G %%\n";
    let args_c = "-42, 7, -1, -123456789012L, 42, 42, 42, 42, 255, 255, 255, 8, 'z', \"hello\", \"hello\", 3.25159, 31415.9, 0.0001, 1e-5, 123456.0, 1234567.0, 0.1, 1e300, -2.5, 1.0, 0.1, -0.0, 5e-324, 1.99999, 1e-10";
    let expected = run_c(&format!(
        "#include <stdio.h>\nint main(void) {{ printf({fmt:?}, {args_c}); return 0; }}\n"
    ));

    let mut b = B::new();
    let printf = b.system("printf", int_t());
    let uint = QualType::new(Type::Int {
        kind: IntKind::Int,
        unsigned: true,
    });
    let neg1u = ex(
        ExprKind::Cast {
            to: uint.clone(),
            arg: Box::new(ic(-1)),
        },
        uint,
    );
    let long = ex(
        ExprKind::IntConst {
            value: -123456789012,
            text: "-123456789012L".into(),
        },
        QualType::long(),
    );
    let chr = ex(
        ExprKind::CharConst {
            value: b'z' as i64,
            text: "'z'".into(),
        },
        int_t(),
    );
    let mut args = vec![strc(fmt), ic(-42), ic(7), neg1u, long];
    args.extend([42, 42, 42, 42, 255, 255, 255, 8].map(ic));
    args.extend([chr, strc("hello"), strc("hello")]);
    args.extend(
        [
            3.25159, 31415.9, 0.0001, 1e-5, 123456.0, 1234567.0, 0.1, 1e300, -2.5, 1.0, 0.1, -0.0,
            5e-324, 1.99999, 1e-10,
        ]
        .map(rc),
    );
    let c = b.call(None, printf, args);
    b.proc("main", int_t(), vec![], vec![c]);
    let mut m = machine::<f64>(&b.p);
    m.call("main", vec![]).unwrap();
    assert_eq!(m.output(), expected);
}

#[test]
fn exit_stops_the_run_with_its_status_and_unknown_library_calls_fail() {
    let mut b = B::new();
    let exit = b.system("exit", QualType::void());
    let puts = b.system("puts", int_t());
    let qsort = b.system("qsort", QualType::void());
    let s0 = b.call(None, puts, vec![strc("bye")]);
    let s1 = b.call(None, exit, vec![ic(3)]);
    let s2 = b.call(None, puts, vec![strc("not reached")]);
    b.proc("f", QualType::void(), vec![], vec![s0, s1, s2]);
    let s3 = b.call(None, qsort, vec![]);
    b.proc("g", QualType::void(), vec![], vec![s3]);
    let mut m = machine::<f64>(&b.p);
    assert_eq!(m.call("f", vec![]).unwrap_err().kind, ErrorKind::Exit(3));
    assert_eq!(m.output(), "bye\n");
    let e = m.call("g", vec![]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "library function 'qsort' is not supported by the interpreter"
    );
}

// ---------------------------------------------------------------------------
// Math functions: bit-identical with C, derivatives of dual numbers
// ---------------------------------------------------------------------------

/// Sample arguments inside each function's domain.
fn samples(f: MathFn) -> Vec<(f64, f64)> {
    use MathFn::*;
    match f {
        Asin | Acos | Atanh => vec![(0.3, 0.0), (-0.7, 0.0), (0.01, 0.0)],
        Acosh => vec![(1.5, 0.0), (3.7, 0.0)],
        Log | Log2 | Log10 | Sqrt | Lgamma | Tgamma => vec![(0.3, 0.0), (2.7, 0.0), (11.1, 0.0)],
        Log1p => vec![(-0.3, 0.0), (2.7, 0.0)],
        Pow => vec![(1.7, 2.3), (0.4, -1.3), (3.0, 0.5)],
        Atan2 | Hypot => vec![(0.3, 0.8), (-1.2, 0.4), (0.5, -2.0)],
        Fmin | Fmax => vec![(0.3, 0.8), (1.2, 0.4)],
        Fmod => vec![(5.3, 1.2), (-5.3, 1.7)],
        Copysign => vec![(0.3, -1.0), (-0.7, -2.0), (0.5, 3.0)],
        Floor | Ceil | Round | Trunc => vec![(1.3, 0.0), (-2.7, 0.0)],
        _ => vec![(0.3, 0.0), (-1.1, 0.0), (2.2, 0.0)],
    }
}

/// `double f(double x, double y) { return F(x[, y]); }` for each function.
fn math_program(single: bool) -> Program {
    let mut b = B::new();
    for &f in MathFn::ALL {
        if f == MathFn::IntAbs {
            continue;
        }
        let t = if single { flt_t() } else { dbl_t() };
        let x = b.param("x", t.clone());
        let y = b.param("y", t.clone());
        let args = if f.arity() == 2 {
            vec![b.v(x), b.v(y)]
        } else {
            vec![b.v(x)]
        };
        let r = b.ret(math(f, args, single));
        b.proc(f.c_name(), t, vec![x, y], vec![r]);
    }
    b.p
}

#[test]
fn math_functions_are_bit_identical_with_compiled_c() {
    for single in [false, true] {
        let (t, suffix, conv) = if single {
            ("float", "f", "(double)")
        } else {
            ("double", "", "")
        };
        let mut c = String::from("#include <stdio.h>\n#include <math.h>\nint main(void) {\n");
        c.push_str(&format!("  volatile {t} x, y;\n"));
        let mut cases = Vec::new();
        for &f in MathFn::ALL {
            if f == MathFn::IntAbs {
                continue;
            }
            for (x, y) in samples(f) {
                let call = if f.arity() == 2 {
                    format!("{}{suffix}(x, y)", f.c_name())
                } else {
                    format!("{}{suffix}(x)", f.c_name())
                };
                c.push_str(&format!(
                    "  x = {x:e}; y = {y:e}; printf(\"%a\\n\", {conv}{call});\n"
                ));
                cases.push((f, x, y));
            }
        }
        c.push_str("  return 0;\n}\n");
        let expected: Vec<String> = run_c(&c).lines().map(str::to_string).collect();
        let p = math_program(single);
        let mut m = machine::<f64>(&p);
        let round = |v: f64| if single { v as f32 as f64 } else { v };
        for ((f, x, y), want) in cases.iter().zip(&expected) {
            let got = real(
                m.call(
                    f.c_name(),
                    vec![Value::Real(round(*x)), Value::Real(round(*y))],
                )
                .unwrap(),
            );
            let mut out = String::new();
            // Format through the interpreter's own printf: compare text.
            let mut pb = B::new();
            let printf = pb.system("printf", int_t());
            let s = pb.call(None, printf, vec![strc("%a\n"), rc(got)]);
            pb.proc("main", int_t(), vec![], vec![s]);
            let mut pm = machine::<f64>(&pb.p);
            pm.call("main", vec![]).unwrap();
            out.push_str(pm.output());
            assert_eq!(
                out.trim_end(),
                want,
                "{}{} ({x}, {y})",
                f.c_name(),
                if single { "f" } else { "" }
            );
        }
    }
}

#[test]
fn dual_numbers_give_derivatives_of_every_math_function() {
    let p = math_program(false);
    for &f in MathFn::ALL {
        if f == MathFn::IntAbs {
            continue;
        }
        for (x, y) in samples(f) {
            for (dx, dy) in [(1.0, 0.0), (0.0, 1.0)] {
                if dy != 0.0 && f.arity() == 1 {
                    continue;
                }
                let mut m = machine::<Dual>(&p);
                let r = m
                    .call(
                        f.c_name(),
                        vec![Value::Real(Dual::new(x, dx)), Value::Real(Dual::new(y, dy))],
                    )
                    .unwrap();
                let tangent = r.as_real().unwrap().tangent();
                let h = 1e-6;
                let mut mp = machine::<f64>(&p);
                let fp = real(
                    mp.call(
                        f.c_name(),
                        vec![Value::Real(x + h * dx), Value::Real(y + h * dy)],
                    )
                    .unwrap(),
                );
                let fm = real(
                    mp.call(
                        f.c_name(),
                        vec![Value::Real(x - h * dx), Value::Real(y - h * dy)],
                    )
                    .unwrap(),
                );
                let fd = (fp - fm) / (2.0 * h);
                let tol = 1e-6 * (1.0 + fd.abs());
                assert!(
                    (tangent - fd).abs() <= tol,
                    "{}({x}, {y}) direction ({dx}, {dy}): dual {tangent} vs differences {fd}",
                    f.c_name()
                );
            }
        }
    }
}

#[test]
fn dual_numbers_document_the_non_differentiable_points() {
    let d = |f: MathFn, x: f64, y: f64, dx: f64, dy: f64| {
        Dual::math(f, false, Dual::new(x, dx), Dual::new(y, dy)).tangent()
    };
    assert_eq!(d(MathFn::Fabs, 0.0, 0.0, 1.0, 0.0), 1.0);
    assert_eq!(d(MathFn::Fabs, -0.0, 0.0, 1.0, 0.0), 1.0);
    assert_eq!(d(MathFn::Sqrt, 0.0, 0.0, 1.0, 0.0), 0.0);
    assert_eq!(d(MathFn::Floor, 2.5, 0.0, 1.0, 0.0), 0.0);
    assert_eq!(d(MathFn::Fmin, 1.0, 1.0, 2.0, 3.0), 2.0);
    assert_eq!(d(MathFn::Fmax, 1.0, 1.0, 2.0, 3.0), 2.0);
    assert_eq!(d(MathFn::Pow, 0.0, 2.0, 0.0, 1.0), 0.0);
    assert_eq!(d(MathFn::Pow, -2.0, 2.0, 1.0, 1.0), -4.0);
    assert_eq!(d(MathFn::Fmod, 5.3, 1.2, 0.0, 1.0), -4.0);
}

#[test]
fn dual_tangent_of_a_small_program() {
    // double f(double *x, int n) { double s = 0; int i; for (i = 0; i < n; i++) s = s + sin(x[i]) * x[i] * x[i]; return s; }
    let mut b = B::new();
    let x = b.param("x", ptr(dbl_t()));
    let n = b.param("n", int_t());
    let s = b.local("s", dbl_t());
    let i = b.local("i", int_t());
    let ds = b.decl(s, Some(ic(0)));
    let di = b.decl(i, None);
    let xi = || {
        idx(
            ex(ExprKind::Var(SymId(0)), ptr(dbl_t())),
            ex(ExprKind::Var(SymId(3)), int_t()),
            dbl_t(),
        )
    };
    let term = bin(
        BinOp::Mul,
        bin(
            BinOp::Mul,
            math(MathFn::Sin, vec![xi()], false),
            xi(),
            dbl_t(),
        ),
        xi(),
        dbl_t(),
    );
    let body = vec![b.assign(b.v(s), bin(BinOp::Add, b.v(s), term, dbl_t()))];
    let l = b.for_loop(i, b.v(n), body);
    let r = b.ret(b.v(s));
    b.proc("f", dbl_t(), vec![x, n], vec![ds, di, l, r]);
    let xs = [0.3, -1.2, 2.0];
    let seeds = [1.0, 0.5, -2.0];
    let mut m = machine::<Dual>(&b.p);
    let duals: Vec<Dual> = xs
        .iter()
        .zip(&seeds)
        .map(|(v, d)| Dual::new(*v, *d))
        .collect();
    let px = m.alloc_real_values(&dbl_t(), &duals);
    let r = m
        .call("f", vec![px, Value::Int(3)])
        .unwrap()
        .as_real()
        .unwrap();
    let want: f64 = xs
        .iter()
        .zip(&seeds)
        .map(|(x, d)| (x.cos() * x * x + 2.0 * x * x.sin()) * d)
        .sum();
    assert!(
        (r.tangent() - want).abs() < 1e-14,
        "{} vs {want}",
        r.tangent()
    );
    let primal: f64 = xs.iter().map(|x| x.sin() * x * x).fold(0.0, |a, b| a + b);
    assert_eq!(r.value(), primal);
}

// ---------------------------------------------------------------------------
// Whole C programs: the interpreter's output equals the compiled program's.
// ---------------------------------------------------------------------------

/// Runs `main` of a C file in the interpreter and as compiled by `cc -O0`,
/// and compares what they print (results are printed with `%a`, so the
/// comparison is bit for bit).
fn check_c_program(name: &str) {
    let source = C_PROGRAMS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, s)| *s)
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, source).unwrap();
    let expected = run_c(source);
    let loaded = match aioli::front::load(&path, &Default::default()) {
        Ok(l) => l,
        Err((sources, d)) => panic!("{name}: front end: {d:?} {}", sources.location(d.span)),
    };
    let mut m = Machine::<f64>::new(&loaded.program, Config { fuel: 10_000_000 }).unwrap();
    match m.call("main", vec![]) {
        Ok(_) => {}
        Err(e) if e.kind == ErrorKind::Exit(0) => {}
        Err(e) => panic!(
            "{name}: {e} at {}\noutput so far:\n{}",
            loaded.sources.location(e.span),
            m.output()
        ),
    }
    assert_eq!(m.output(), expected, "{name}");
}

/// The C programs, by file name.
const C_PROGRAMS: &[(&str, &str)] = &[
    (
        "exitcode.c",
        r#"#include <stdio.h>
#include <stdlib.h>
int main(void) {
    double s = 0;
    for (int i = 1; i < 100; i++) {
        s += 1.0 / (i * i);
        if (s > 1.6) { printf("%a %d\n", s, i); exit(0); }
    }
    printf("never\n");
    return 1;
}
"#,
    ),
    (
        "formats.c",
        r#"#include <stdio.h>
int main(void) {
    double v[5] = {0.1, 123456789.0, 1e-7, -2.5, 100.0};
    for (int i = 0; i < 5; i++)
        printf("%g|%.17g|%e|%f|%10.3f|%-12.4e|\n", v[i], v[i], v[i], v[i], v[i], v[i]);
    fprintf(stdout, "%s=%5d|%-4x|%c\n", "val", 42, 255, 'Q');
    puts("done");
    return 0;
}
"#,
    ),
    (
        "globals.c",
        r#"#include <stdio.h>
double scale = 2.5;
int counts[4];
static double table[3] = {1.5, -2.0};
int next(void) { static int k = 100; int r = k; k++; return r; }
void bump(int i) { counts[i % 4] += i; }
int main(void) {
    for (int i = 0; i < 10; i++) bump(i);
    next(); next();
    table[2] = scale * table[0];
    printf("%d %d %d %d %d %a\n", counts[0], counts[1], counts[2], counts[3], next(), table[2]);
    return 0;
}
"#,
    ),
    (
        "heap.c",
        r#"#include <stdio.h>
#include <stdlib.h>
double *make(int n) {
    double *v = (double *)malloc(n * sizeof(double));
    for (int i = 0; i < n; i++) v[i] = 1.0 / (i + 1);
    return v;
}
int main(void) {
    int n = 6;
    double *v = make(n);
    int *c = calloc(n, sizeof(int));
    double s = 0;
    for (int i = 0; i < n; i++) { s += v[i]; c[i] += i * i; }
    free(v);
    printf("%a %d\n", s, c[5]);
    free(c);
    return 0;
}
"#,
    ),
    (
        "intdiv.c",
        r#"#include <stdio.h>
int main(void) {
    int a[] = {7, -7, 13, -13};
    int b[] = {2, -2, 5, -5};
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            printf("%d %d ", a[i] / b[j], a[i] % b[j]);
    unsigned u = 7;
    printf("\n%u %d %d %ld\n", u - 10, -7 >> 1, 1 << 30, 3000000000L / -7);
    return 0;
}
"#,
    ),
    (
        "logic.c",
        r#"#include <stdio.h>
int calls = 0;
int check(int v) { calls++; return v > 2; }
int main(void) {
    int r = 0;
    for (int i = 0; i < 6; i++) {
        int t = check(i);
        if (i > 3 && t) r += 1;
        if (i < 1 || t) r += 10;
        r += (i % 2 == 0) ? 100 : -100;
        r += !i;
    }
    double x = 3.0;
    x *= 1.5; x -= 0.25; x /= 3;
    int j = 10; j <<= 2; j |= 3; j ^= 5; j &= 0x3c; j %= 7;
    char c = 'a'; c += 2;
    printf("%d %d %a %d %c %d\n", r, calls, x, j, c, c);
    return 0;
}
"#,
    ),
    (
        "loops.c",
        r#"#include <stdio.h>
double poly(const double *a, int n, double x) {
    double s = 0.0;
    for (int i = n - 1; i >= 0; i--) s = s * x + a[i];
    return s;
}
int collatz(int n) {
    int steps = 0;
    while (n != 1) {
        if (n % 2 == 0) n /= 2; else n = 3 * n + 1;
        steps++;
    }
    return steps;
}
int main(void) {
    double a[5] = {1.0, -0.5, 0.25, 0.125, -0.0625};
    int k = 0;
    do { k += 3; if (k == 9) continue; if (k > 20) break; } while (k < 100);
    printf("%a %a %d %d\n", poly(a, 5, 0.3), poly(a, 3, -1.7), collatz(27), k);
    return 0;
}
"#,
    ),
    (
        "mathfns.c",
        r#"#include <stdio.h>
#include <math.h>
int main(void) {
    double x = 0.7, y = 2.3;
    printf("%a %a %a %a %a %a\n", sin(x) * cos(y), exp(x) - log(y), pow(y, x), atan2(x, y), hypot(x, y), sqrt(y));
    printf("%a %a %a %a %a %a\n", tanh(x), erf(x), lgamma(y), tgamma(x), cbrt(y), fmod(y, x));
    printf("%a %a %a %a %a\n", floor(-y), ceil(y), fabs(-x), fmin(x, y), sinf(0.3f));
    return 0;
}
"#,
    ),
    (
        "matrix.c",
        r#"#include <stdio.h>
#define N 3
void matmul(double a[N][N], double b[N][N], double c[N][N]) {
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            c[i][j] = 0;
            for (int k = 0; k < N; k++) c[i][j] += a[i][k] * b[k][j];
        }
}
int main(void) {
    double a[N][N] = {{1, 2, 3}, {4, 5, 6}, {7, 8, 10}};
    double b[N][N] = {{0.5, 0, 0}, {0, 0.25, 0}, {0.1, 0, 1}};
    double c[N][N];
    matmul(a, b, c);
    for (int i = 0; i < N; i++) printf("%a %a %a\n", c[i][0], c[i][1], c[i][2]);
    return 0;
}
"#,
    ),
    (
        "mixed.c",
        r#"#include <stdio.h>
float f(float a, double b) { float t = a * a; return t / 3 + b; }
int main(void) {
    float x = 0.1f;
    double y = 0.1;
    float z = f(x, y);
    double w = z * y + x;
    int i = (int)(w * 1000);
    printf("%a %a %d %a\n", (double)z, w, i, x + y);
    return 0;
}
"#,
    ),
    (
        "newton.c",
        r#"#include <stdio.h>
#include <math.h>
double f(double x) { return x * x * x - 2 * x - 5; }
double df(double x) { return 3 * x * x - 2; }
double newton(double x0, int *iters) {
    double x = x0;
    for (*iters = 0; *iters < 50; (*iters)++) {
        double dx = f(x) / df(x);
        x -= dx;
        if (fabs(dx) < 1e-15) break;
    }
    return x;
}
int main(void) {
    int it;
    double r = newton(2.0, &it);
    printf("%a %d\n", r, it);
    return 0;
}
"#,
    ),
    (
        "ptrarith.c",
        r#"#include <stdio.h>
void axpy(int n, double a, const double *x, double *y) {
    const double *end = x + n;
    while (x < end) { *y += a * *x; x++; y++; }
}
int main(void) {
    double x[4] = {1, 2, 3, 4}, y[4] = {0.5, 0.25, 0.125, 0.0625};
    axpy(2, 0.3, &x[1], y + 2);
    double *p = &y[3];
    long d = p - y;
    printf("%a %a %a %a %ld\n", y[0], y[1], y[2], y[3], d);
    return 0;
}
"#,
    ),
    (
        "recursion.c",
        r#"#include <stdio.h>
double power(double x, int n) {
    if (n == 0) return 1.0;
    if (n < 0) return 1.0 / power(x, -n);
    double h = power(x, n / 2);
    return n % 2 ? h * h * x : h * h;
}
int ack(int m, int n) {
    if (m == 0) return n + 1;
    if (n == 0) return ack(m - 1, 1);
    return ack(m - 1, ack(m, n - 1));
}
int main(void) {
    printf("%a %a %d\n", power(1.1, 13), power(0.7, -5), ack(2, 3));
    return 0;
}
"#,
    ),
    (
        "structs.c",
        r#"#include <stdio.h>
typedef struct { double x, y; int id; } Point;
typedef struct { Point p[3]; double w; } Tri;
Point mid(Point a, Point b) { Point m; m.x = (a.x + b.x) / 2; m.y = (a.y + b.y) / 2; m.id = a.id + b.id; return m; }
void shift(Point *p, double dx) { p->x += dx; (*p).y -= dx; }
double area(const Tri *t) {
    return 0.5 * ((t->p[1].x - t->p[0].x) * (t->p[2].y - t->p[0].y) - (t->p[2].x - t->p[0].x) * (t->p[1].y - t->p[0].y));
}
int main(void) {
    Point a = {1.0, 2.0, 1}, b = {3.5, -1.25, 2};
    Point m = mid(a, b);
    shift(&m, 0.1);
    Tri t;
    t.p[0] = a; t.p[1] = b; t.p[2] = m; t.w = 2.0;
    Tri u = t;
    shift(&u.p[2], 1.0);
    printf("%a %a %d %a %a\n", m.x, m.y, m.id, area(&t), area(&u));
    return 0;
}
"#,
    ),
    (
        "switch.c",
        r#"#include <stdio.h>
int classify(int c) {
    int r = 0;
    switch (c) {
    case 0:
    case 1: r += 1;
    case 2: r += 10; break;
    case 3: { r = 100; }
    default: r += 1000;
    case 7: r += 5;
    }
    return r;
}
int main(void) {
    for (int i = -1; i < 9; i++) printf("%d ", classify(i));
    printf("\n");
    return 0;
}
"#,
    ),
];

macro_rules! c_program_tests {
    ($($test:ident => $file:literal,)*) => {
        $(
            #[test]
            fn $test() {
                check_c_program($file);
            }
        )*
    };
}

c_program_tests! {
    c_loops => "loops.c",
    c_switch_fall_through => "switch.c",
    c_recursion => "recursion.c",
    c_structs_by_value_and_pointer => "structs.c",
    c_malloc_calloc_free => "heap.c",
    c_pointer_arithmetic => "ptrarith.c",
    c_float_and_double_mixed => "mixed.c",
    c_integer_division_of_negatives => "intdiv.c",
    c_math_functions => "mathfns.c",
    c_globals_and_statics => "globals.c",
    c_two_dimensional_arrays => "matrix.c",
    c_logic_and_compound_assignment => "logic.c",
    c_printf_formats => "formats.c",
    c_newton_through_pointer_counter => "newton.c",
    c_exit => "exitcode.c",
}

/// Lowers a C source given as text.
fn load_c(name: &str, source: &str) -> (tempfile::TempDir, aioli::front::Loaded) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, source).unwrap();
    match aioli::front::load(&path, &Default::default()) {
        Ok(l) => (dir, l),
        Err((sources, d)) => panic!("{name}: {} {}", d.message, sources.location(d.span)),
    }
}

#[test]
fn c_program_tangent_with_dual_numbers_matches_divided_differences() {
    let source = r#"
#include <math.h>
typedef struct { double a; double b; } Coef;
double model(const double *x, int n, Coef c, double *out) {
    double s = 0.0;
    for (int i = 0; i < n; i++) {
        double t = c.a * x[i] + c.b;
        out[i] = t > 0 ? sqrt(t) : -t;
        s += pow(fabs(t), 1.5) + sin(x[i]) * out[i];
    }
    return s / n;
}
"#;
    let (_dir, loaded) = load_c("model.c", source);
    let p = &loaded.program;
    let coef = p
        .structs
        .iter()
        .position(|s| s.fields.len() == 2 && s.fields[0].name == "a")
        .map(|i| StructId(i as u32))
        .unwrap();
    let coef_t = QualType::new(Type::Struct(coef));
    let xs = [0.3, -1.2, 2.0, 0.9];
    let seeds = [0.7, -0.2, 1.1, 0.4];
    let (ca, cb, dca) = (1.3, 0.4, 0.5);
    // f64 run at x + h·ẋ, for divided differences.
    let run = |h: f64| -> (f64, Vec<f64>) {
        let mut m = machine::<f64>(p);
        let x: Vec<f64> = xs.iter().zip(&seeds).map(|(x, d)| x + h * d).collect();
        let px = m.alloc_reals(&dbl_t(), &x);
        let out = m.alloc_uninit(&dbl_t(), 4);
        let c = m.alloc_zeroed(&coef_t, 1);
        let fa = m.field_ptr(c, coef, 0).unwrap();
        let fb = m.field_ptr(c, coef, 1).unwrap();
        m.write(fa, &dbl_t(), Value::Real(ca + h * dca)).unwrap();
        m.write(fb, &dbl_t(), Value::Real(cb)).unwrap();
        let r = real(m.call("model", vec![px, Value::Int(4), c, out]).unwrap());
        (r, m.read_reals(out, &dbl_t(), 4).unwrap())
    };
    let mut m = machine::<Dual>(p);
    let x: Vec<Dual> = xs
        .iter()
        .zip(&seeds)
        .map(|(x, d)| Dual::new(*x, *d))
        .collect();
    let px = m.alloc_real_values(&dbl_t(), &x);
    let out = m.alloc_uninit(&dbl_t(), 4);
    let c = m.alloc_zeroed(&coef_t, 1);
    let fa = m.field_ptr(c, coef, 0).unwrap();
    let fb = m.field_ptr(c, coef, 1).unwrap();
    m.write(fa, &dbl_t(), Value::Real(Dual::new(ca, dca)))
        .unwrap();
    m.write(fb, &dbl_t(), Value::Real(Dual::new(cb, 0.0)))
        .unwrap();
    let r = m.call("model", vec![px, Value::Int(4), c, out]).unwrap();
    let r = r.as_real().unwrap();
    let outs = m.read_reals(out, &dbl_t(), 4).unwrap();
    let h = 1e-6;
    let (fp, op) = run(h);
    let (fm, om) = run(-h);
    let (f0, o0) = run(0.0);
    assert_eq!(r.value(), f0, "the primal of the dual run is the f64 run");
    assert!((r.tangent() - (fp - fm) / (2.0 * h)).abs() < 1e-7);
    for i in 0..4 {
        assert_eq!(outs[i].value(), o0[i]);
        assert!((outs[i].tangent() - (op[i] - om[i]) / (2.0 * h)).abs() < 1e-7);
    }
}

#[test]
fn c_programs_with_undefined_behaviour_are_reported() {
    let source = r#"
#include <stdlib.h>
double past_end(void) { double a[3] = {1, 2, 3}; double s = 0; for (int i = 0; i <= 3; i++) s += a[i]; return s; }
double unset(void) { double a[3]; a[0] = 1; return a[0] + a[1]; }
double null_deref(void) { double *p = 0; return *p; }
double after_free(void) { double *p = malloc(2 * sizeof(double)); p[0] = 1; free(p); return p[0]; }
double *dangling(void) { double x = 1; return &x; }
double use_dangling(void) { double *p; p = dangling(); return *p; }
int div_zero(int k) { return 10 / k; }
"#;
    let (_dir, loaded) = load_c("ub.c", source);
    let mut m = machine::<f64>(&loaded.program);
    let mut kind = |f: &str, args: Vec<Value<f64>>| m.call(f, args).unwrap_err().kind;
    assert!(matches!(
        kind("past_end", vec![]),
        ErrorKind::OutOfBounds { .. }
    ));
    assert_eq!(kind("unset", vec![]), ErrorKind::Uninit);
    assert_eq!(kind("null_deref", vec![]), ErrorKind::NullDeref);
    assert_eq!(kind("after_free", vec![]), ErrorKind::UseAfterFree);
    assert_eq!(kind("use_dangling", vec![]), ErrorKind::UseAfterFree);
    assert_eq!(
        kind("div_zero", vec![Value::Int(0)]),
        ErrorKind::DivisionByZero
    );
    // The error points at the offending statement.
    let e = m.call("null_deref", vec![]).unwrap_err();
    assert_eq!(loaded.sources.snippet(e.span), "return *p;");
}
