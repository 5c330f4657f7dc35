//! Tests of the simplifier (`spec/simplify.md`): each rule on C
//! expressions read by the front end, checked for the expected output and
//! for its value on random inputs; random expression trees; snapshots of
//! typical derivative expressions; rule-file errors; determinism.
//!
//! Values are checked with a small evaluator over IL expressions that
//! computes C's types from the operands (not from the types the simplifier
//! wrote), so that an operation the simplifier rebuilt in the wrong type
//! (integer division, `float` rounding) shows as a wrong value.

use aioli::back::print_c;
use aioli::front::source::{SourceMap, Span};
use aioli::front::{FrontOptions, load};
use aioli::il::*;
use aioli::simplify::{
    BUNDLED_RULES, ITERATION_LIMIT, NODE_LIMIT, Simplifier, SimplifyError, TERM_LIMIT,
};
use proptest::prelude::*;
use std::collections::HashMap;

// ---------------------------------------------------------------------------
// Reading C expressions
// ---------------------------------------------------------------------------

/// The parameters every test expression may use.
const PARAMS: &str = "double x, double y, double z, double xd, double yd, double zd, \
                      double *a, double *ad, float f, float g, long double l, long double m, \
                      int i, int j, unsigned u, real r";

/// A one-function program `double t(PARAMS) { return EXPR; }`, read by the
/// front end, and the returned expression.
struct Case {
    program: Program,
    sources: SourceMap,
    _dir: tempfile::TempDir,
}

impl Case {
    fn new(expr: &str) -> Case {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("t.c");
        let src = format!(
            "#include <math.h>\ntypedef double real;\ndouble t({PARAMS})\n{{\n    return {expr};\n}}\n"
        );
        std::fs::write(&path, src).unwrap();
        let loaded = load(&path, &FrontOptions::default())
            .unwrap_or_else(|(_, d)| panic!("`{expr}` does not parse: {d:?}"));
        Case {
            program: loaded.program,
            sources: loaded.sources,
            _dir: dir,
        }
    }

    fn ret(&mut self) -> &mut Expr {
        let id = self.program.proc_by_name("t").unwrap();
        let body = self.program.procs[id.index()].body.as_mut().unwrap();
        match &mut body.stmts.last_mut().unwrap().kind {
            StmtKind::Return(Some(e)) => e,
            other => panic!("expected a return, got {other:?}"),
        }
    }

    fn expr(&mut self) -> Expr {
        self.ret().clone()
    }

    /// `e` printed as C by the back end, in place of the returned
    /// expression.
    fn print(&mut self, e: &Expr) -> String {
        *self.ret() = e.clone();
        let text = print_c(&self.program, &self.sources);
        // The statement from `return` to its `;`, over as many lines as
        // the printer wrapped it on, joined by single spaces.
        let start = text.find("return ").expect("a return statement");
        let end = start + text[start..].find(';').expect("its end");
        text[start + "return ".len()..end]
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    }
}

fn simplifier() -> Simplifier {
    Simplifier::new().expect("the bundled rules parse")
}

// ---------------------------------------------------------------------------
// Evaluating IL expressions with C's types
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq)]
enum V {
    /// A 32-bit `int` or `unsigned int`, as C computes it.
    Int(i64, bool),
    Real(f64, RealKind),
}

#[derive(Debug)]
enum EvalError {
    /// Division by zero, an index out of range...: the expression has no
    /// value here.
    Undefined,
    /// A node's type is not the one C gives it.
    Type(String),
}

/// Values of the variables and of the arrays' elements.
struct Env {
    scalars: HashMap<SymId, f64>,
    arrays: HashMap<SymId, Vec<f64>>,
}

/// A deterministic generator (splitmix64), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// A real of magnitude in [0.5, 2], of either sign: away from zero, so
    /// that divisions stay moderate and a comparison at tolerance 1e-12 is
    /// meaningful after reassociation.
    fn real(&mut self) -> f64 {
        let m = 0.5 + 1.5 * (self.next() >> 11) as f64 / (1u64 << 53) as f64;
        if self.next() & 1 == 0 { m } else { -m }
    }
    fn small_int(&mut self) -> f64 {
        (self.next() % 7) as f64 - 3.0
    }
}

/// Random values for every parameter of `program`: reals for reals, small
/// integers for integers (and unsigned ones too), arrays of 4 reals.
fn random_env(program: &Program, rng: &mut Rng) -> Env {
    let mut env = Env {
        scalars: HashMap::new(),
        arrays: HashMap::new(),
    };
    for (k, s) in program.symbols.iter().enumerate() {
        let id = SymId(k as u32);
        match program.resolve(&s.ty.ty) {
            Type::Real(RealKind::Float) => {
                env.scalars.insert(id, rng.real() as f32 as f64);
            }
            Type::Real(_) => {
                env.scalars.insert(id, rng.real());
            }
            Type::Int { .. } => {
                env.scalars.insert(id, rng.small_int());
            }
            Type::Pointer(_) | Type::Array { .. } => {
                env.arrays.insert(id, (0..4).map(|_| rng.real()).collect());
            }
            _ => {}
        }
    }
    env
}

fn round(v: f64, k: RealKind) -> f64 {
    match k {
        RealKind::Float => v as f32 as f64,
        _ => v,
    }
}

fn wrap(v: i64, unsigned: bool) -> V {
    if unsigned {
        V::Int(v.rem_euclid(1 << 32), true)
    } else {
        V::Int(v as i32 as i64, false)
    }
}

fn real_of(v: V) -> f64 {
    match v {
        V::Int(i, _) => i as f64,
        V::Real(r, _) => r,
    }
}

fn type_of(program: &Program, ty: &QualType) -> Option<V> {
    match program.resolve(&ty.ty) {
        Type::Real(k) => Some(V::Real(0.0, *k)),
        Type::Int { unsigned, .. } => Some(V::Int(0, *unsigned)),
        _ => None,
    }
}

/// `v` converted to the type `ty`.
fn convert(program: &Program, v: V, ty: &QualType) -> Result<V, EvalError> {
    Ok(match type_of(program, ty) {
        Some(V::Real(_, k)) => V::Real(round(real_of(v), k), k),
        Some(V::Int(_, unsigned)) => match v {
            V::Int(i, _) => wrap(i, unsigned),
            V::Real(r, _) if r.is_finite() && r.abs() < 2e9 => wrap(r.trunc() as i64, unsigned),
            V::Real(..) => return Err(EvalError::Undefined),
        },
        None => return Err(EvalError::Type(format!("unsupported type {ty:?}"))),
    })
}

/// Checks that a computed value has the type the node says it has.
fn typed(program: &Program, e: &Expr, v: V) -> Result<V, EvalError> {
    let same = match (type_of(program, &e.ty), v) {
        (Some(V::Real(_, a)), V::Real(_, b)) => a == b,
        (Some(V::Int(..)), V::Int(..)) => true,
        _ => false,
    };
    if same {
        Ok(v)
    } else {
        Err(EvalError::Type(format!(
            "node has type {:?} but C computes {v:?}: {e:?}",
            e.ty.ty
        )))
    }
}

fn math(f: MathFn, a: f64, b: f64) -> f64 {
    match f {
        MathFn::Sin => a.sin(),
        MathFn::Cos => a.cos(),
        MathFn::Tan => a.tan(),
        MathFn::Exp => a.exp(),
        MathFn::Log => a.ln(),
        MathFn::Sqrt => a.sqrt(),
        MathFn::Fabs => a.abs(),
        MathFn::Tanh => a.tanh(),
        MathFn::Atan => a.atan(),
        MathFn::Pow => a.powf(b),
        MathFn::Atan2 => a.atan2(b),
        MathFn::Hypot => a.hypot(b),
        other => panic!("the evaluator does not know {other:?}"),
    }
}

/// The value of `e` with C's semantics, types computed from the operands.
fn eval(program: &Program, e: &Expr, env: &Env) -> Result<V, EvalError> {
    use ExprKind::*;
    let v = match &e.kind {
        IntConst { value, .. } | CharConst { value, .. } => {
            let unsigned = matches!(type_of(program, &e.ty), Some(V::Int(_, true)));
            wrap(*value, unsigned)
        }
        RealConst { value, text } => {
            let k = match type_of(program, &e.ty) {
                Some(V::Real(_, k)) => k,
                _ => return Err(EvalError::Type("real constant of non-real type".into())),
            };
            let body = text.trim_end_matches(['f', 'F', 'l', 'L']);
            let value = match k {
                RealKind::Float => body.parse::<f32>().map_or(*value as f32, |v| v) as f64,
                _ => *value,
            };
            V::Real(value, k)
        }
        Var(s) => {
            let value = *env.scalars.get(s).ok_or(EvalError::Undefined)?;
            convert(
                program,
                V::Real(value, RealKind::Double),
                &program.sym(*s).ty,
            )?
        }
        Index { base, index } => {
            let ExprKind::Var(s) = base.kind else {
                return Err(EvalError::Type("index of a non-variable".into()));
            };
            let k = match eval(program, index, env)? {
                V::Int(k, _) => k,
                V::Real(..) => return Err(EvalError::Type("real index".into())),
            };
            let array = env.arrays.get(&s).ok_or(EvalError::Undefined)?;
            let value = *usize::try_from(k)
                .ok()
                .and_then(|k| array.get(k))
                .ok_or(EvalError::Undefined)?;
            V::Real(value, RealKind::Double)
        }
        Unary { op, arg } => {
            let a = eval(program, arg, env)?;
            match (op, a) {
                (UnOp::Plus, _) => a,
                (UnOp::Neg, V::Int(i, u)) => wrap(-i, u),
                (UnOp::Neg, V::Real(r, k)) => V::Real(-r, k),
                _ => return Err(EvalError::Type(format!("unsupported {op:?}"))),
            }
        }
        Binary { op, lhs, rhs } => {
            let a = eval(program, lhs, env)?;
            let b = eval(program, rhs, env)?;
            binary(*op, a, b)?
        }
        Intrinsic { call, args } => {
            let k = call.precision.ok_or(EvalError::Undefined)?;
            let vals: Vec<f64> = args
                .iter()
                .map(|a| eval(program, a, env).map(|v| round(real_of(v), k)))
                .collect::<Result<_, _>>()?;
            let r = math(call.func, vals[0], vals.get(1).copied().unwrap_or(0.0));
            V::Real(round(r, k), k)
        }
        Cast { to, arg } => convert(program, eval(program, arg, env)?, to)?,
        Cond { cond, then, other } => {
            let c = eval(program, cond, env)?;
            let taken = if real_of(c) != 0.0 { then } else { other };
            return convert(program, eval(program, taken, env)?, &e.ty);
        }
        _ => return Err(EvalError::Type(format!("unsupported expression {e:?}"))),
    };
    typed(program, e, v)
}

/// A binary operator with C's usual arithmetic conversions.
fn binary(op: BinOp, a: V, b: V) -> Result<V, EvalError> {
    use BinOp::*;
    if matches!(op, Lt | Le | Gt | Ge | Eq | Ne) {
        let (x, y) = (real_of(a), real_of(b));
        let t = match op {
            Lt => x < y,
            Le => x <= y,
            Gt => x > y,
            Ge => x >= y,
            Eq => x == y,
            _ => x != y,
        };
        return Ok(V::Int(t as i64, false));
    }
    Ok(match (a, b) {
        (V::Int(x, ux), V::Int(y, uy)) => {
            let unsigned = ux || uy;
            let (x, y) = match (wrap(x, unsigned), wrap(y, unsigned)) {
                (V::Int(x, _), V::Int(y, _)) => (x, y),
                _ => unreachable!(),
            };
            let r = match op {
                Add => x + y,
                Sub => x - y,
                Mul => x * y,
                Div if y == 0 => return Err(EvalError::Undefined),
                Div => x / y,
                Rem if y == 0 => return Err(EvalError::Undefined),
                Rem => x % y,
                _ => return Err(EvalError::Type(format!("unsupported {op:?}"))),
            };
            wrap(r, unsigned)
        }
        _ => {
            let k = match (a, b) {
                (V::Real(_, p), V::Real(_, q)) => p.max(q),
                (V::Real(_, p), _) | (_, V::Real(_, p)) => p,
                _ => unreachable!(),
            };
            let (x, y) = (round(real_of(a), k), round(real_of(b), k));
            let r = match op {
                Add => x + y,
                Sub => x - y,
                Mul => x * y,
                Div => x / y,
                _ => return Err(EvalError::Type(format!("unsupported real {op:?}"))),
            };
            V::Real(round(r, k), k)
        }
    })
}

fn node_count(e: &Expr) -> usize {
    use ExprKind::*;
    1 + match &e.kind {
        Index { base, index } => node_count(base) + node_count(index),
        Field { base: a, .. }
        | Deref(a)
        | AddrOf(a)
        | Unary { arg: a, .. }
        | Cast { arg: a, .. }
        | SizeOfExpr(a) => node_count(a),
        Binary { lhs, rhs, .. } => node_count(lhs) + node_count(rhs),
        Intrinsic { args, .. } => args.iter().map(node_count).sum(),
        Cond { cond, then, other } => node_count(cond) + node_count(then) + node_count(other),
        _ => 0,
    }
}

/// Do `a` and `b` agree within a relative and an absolute tolerance?
fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * a.abs().max(b.abs()) + tol
}

/// Checks the contract of `Simplifier::simplify` for `before` ↦ `after`:
/// same type, no more nodes, and the same value on random inputs wherever
/// `before` has a finite value. Returns how many inputs were compared.
fn check_contract(
    program: &Program,
    before: &Expr,
    after: &Expr,
    tol: f64,
    trials: usize,
    seed: u64,
) -> Result<usize, String> {
    if after.ty != before.ty {
        return Err(format!("type {:?} became {:?}", before.ty, after.ty));
    }
    if node_count(after) > node_count(before) {
        return Err(format!(
            "{} nodes became {}",
            node_count(before),
            node_count(after)
        ));
    }
    let mut rng = Rng(seed);
    let mut compared = 0;
    for _ in 0..trials {
        let env = random_env(program, &mut rng);
        let want = match eval(program, before, &env) {
            Ok(v) if real_of(v).is_finite() => v,
            Ok(_) | Err(EvalError::Undefined) => continue,
            Err(EvalError::Type(t)) => return Err(format!("input: {t}")),
        };
        let got = match eval(program, after, &env) {
            Ok(v) => v,
            Err(EvalError::Undefined) => return Err("the result is undefined".to_string()),
            Err(EvalError::Type(t)) => return Err(format!("result: {t}")),
        };
        if !close(real_of(want), real_of(got), tol) {
            return Err(format!("value {want:?} became {got:?}"));
        }
        compared += 1;
    }
    Ok(compared)
}

/// Tolerance for expressions computed in `double`.
const TOL: f64 = 1e-12;
/// Tolerance for expressions computed in `float`.
const TOL_FLOAT: f64 = 1e-6;

/// Simplifies the C expression `input`, checks the contract, and returns
/// the result printed as C.
fn simplified_with(s: &Simplifier, input: &str, tol: f64) -> String {
    let mut case = Case::new(input);
    let e = case.expr();
    let out = s.simplify(&case.program, &e);
    let compared = check_contract(&case.program, &e, &out, tol, 200, 7)
        .unwrap_or_else(|m| panic!("`{input}`: {m}"));
    assert!(
        compared > 50,
        "`{input}`: too few inputs where it is defined"
    );
    case.print(&out)
}

/// The simplification of an expression that has no finite value anywhere,
/// printed: only the type and the size are checked.
fn printed(input: &str) -> String {
    let mut case = Case::new(input);
    let e = case.expr();
    let out = simplifier().simplify(&case.program, &e);
    check_contract(&case.program, &e, &out, TOL, 0, 0).unwrap();
    case.print(&out)
}

fn simplified(input: &str) -> String {
    simplified_with(&simplifier(), input, TOL)
}

#[track_caller]
fn assert_simplifies(input: &str, expected: &str) {
    assert_eq!(simplified(input), expected, "simplifying `{input}`");
}

// ---------------------------------------------------------------------------
// One test per rule
// ---------------------------------------------------------------------------

/// `simplify/add-zero`
#[test]
fn add_zero() {
    assert_simplifies("x + 0.0", "x");
    assert_simplifies("0.0 + x * y", "x * y");
    assert_simplifies("xd * y + 0", "xd * y");
}

/// `simplify/sub-zero`
#[test]
fn sub_zero() {
    assert_simplifies("x - 0.0", "x");
    assert_simplifies("x * y - 0.0 * z", "x * y");
}

/// `simplify/zero-sub`
#[test]
fn zero_sub() {
    assert_simplifies("0.0 - x", "-x");
    assert_simplifies("0.0 - x * yd", "-(x * yd)");
}

/// `simplify/mul-one`
#[test]
fn mul_one() {
    assert_simplifies("1.0 * xd", "xd");
    assert_simplifies("xd * 1.0", "xd");
    assert_simplifies("1 * xd * y + x * yd", "xd * y + x * yd");
}

/// `simplify/mul-zero`: a strong zero.
#[test]
fn mul_zero() {
    assert_simplifies("0.0 * x + xd * y", "xd * y");
    assert_simplifies("xd * y + sin(x) * 0.0", "xd * y");
    assert_simplifies("0.0 * (x / y)", "0.0");
}

/// `simplify/mul-minus-one`
#[test]
fn mul_minus_one() {
    assert_simplifies("x * -1.0", "-x");
    assert_simplifies("-1.0 * x", "-x");
    assert_simplifies("y + -1.0 * x", "y - x");
}

/// `simplify/div-one`
#[test]
fn div_one() {
    assert_simplifies("x / 1.0", "x");
    assert_simplifies("(x + y) / 1", "x + y");
}

/// `simplify/zero-div`
#[test]
fn zero_div() {
    assert_simplifies("0.0 / x + y", "y");
    assert_simplifies("xd / y - 0.0 * x / (y * y)", "xd / y");
}

/// `simplify/neg-neg`
#[test]
fn neg_neg() {
    assert_simplifies("-(-x)", "x");
    assert_simplifies("-(-(x * y)) + z", "x * y + z");
}

/// `simplify/neg-sub`
#[test]
fn neg_sub() {
    assert_simplifies("-(x - y)", "y - x");
    assert_simplifies("-(0.0 - xd)", "xd");
}

/// `simplify/sub-self`: structurally equal leaves are one symbol.
#[test]
fn sub_self() {
    assert_simplifies("x - x", "0.0");
    assert_simplifies("a[i] * x - a[i] * x + y", "y");
    assert_simplifies("ad[i + 1] - ad[i + 1]", "0.0");
}

/// `simplify/sub-neg`
#[test]
fn sub_neg() {
    assert_simplifies("x - -y", "x + y");
    assert_simplifies("x - -1.0", "x + 1.0");
}

/// `simplify/add-neg`
#[test]
fn add_neg() {
    assert_simplifies("x + -y", "x - y");
    assert_simplifies("-y + x", "x - y");
    assert_simplifies("x + -2.0", "x - 2.0");
}

/// `simplify/mul-neg`: negations move out of products.
#[test]
fn mul_neg() {
    assert_simplifies("-x * -y", "x * y");
    assert_simplifies("x * -y", "-(x * y)");
    assert_simplifies("-x * y", "-(x * y)");
    // A negative coefficient reads as one: it stays where it was.
    assert_simplifies("-2.0 * x", "-2.0 * x");
}

/// `simplify/div-neg`
#[test]
fn div_neg() {
    assert_simplifies("-x / -y", "x / y");
    assert_simplifies("x / -y", "-(x / y)");
    assert_simplifies("-x / y", "-(x / y)");
}

/// `simplify/mul-recip`
#[test]
fn mul_recip() {
    assert_simplifies("1.0 / y * xd", "xd / y");
    assert_simplifies("xd * (1.0 / y)", "xd / y");
    assert_simplifies("x * (1 / y) * 1.0", "x / y");
}

/// `simplify/add-self`
#[test]
fn add_self() {
    assert_simplifies("x + x", "2.0 * x");
    assert_simplifies("sin(x) * xd + sin(x) * xd", "2.0 * (sin(x) * xd)");
}

/// `simplify/add-sub-cancel`
#[test]
fn add_sub_cancel() {
    assert_simplifies("x + y - y", "x");
    assert_simplifies("x - y + y", "x");
    assert_simplifies("(y + x) - y", "x");
}

/// `simplify/add-comm`: with `simplify/sub-self`, sums in another order
/// cancel.
#[test]
fn add_comm() {
    assert_simplifies("(x + y) - (y + x)", "0.0");
    assert_simplifies("xd + 0.0 * y", "xd");
    // Operands keep the input's order when nothing is gained.
    assert_simplifies("y + x", "y + x");
}

/// `simplify/mul-comm`
#[test]
fn mul_comm() {
    assert_simplifies("xd * y - y * xd", "0.0");
    assert_simplifies("y * x * 1.0", "y * x");
}

/// `simplify/add-const-assoc`
#[test]
fn add_const_assoc() {
    assert_simplifies("2.0 + (3.0 + x)", "x + 5.0");
    assert_simplifies("2.0 + x + 3.0", "x + 5.0");
}

/// `simplify/mul-const-assoc`
#[test]
fn mul_const_assoc() {
    assert_simplifies("2.0 * (3.0 * x)", "6.0 * x");
    assert_simplifies("2.0 * x * 3.0", "6.0 * x");
    assert_simplifies("0.5 * (4 * xd)", "2.0 * xd");
}

/// `simplify/scaled-square`: the derivative of `0.25 * a * a` is one
/// product.
#[test]
fn scaled_square() {
    assert_simplifies("0.25 * xd * x + 0.25 * x * xd", "0.5 * (xd * x)");
    assert_simplifies("2.0 * x * y", "2.0 * x * y");
    assert_simplifies("3.0 * y * x - -(3.0 * x * y)", "6.0 * (y * x)");
}

/// `simplify/factor`
#[test]
fn factor() {
    assert_simplifies("x * yd + x * zd", "x * (yd + zd)");
    assert_simplifies("x * yd - zd * x", "x * (yd - zd)");
}

/// `simplify/fold`: in the precision of the expression, never to an
/// infinity, never a division by zero.
#[test]
fn fold() {
    assert_simplifies("(2.0 + 3.0) * x", "5.0 * x");
    assert_simplifies("x * (1.0 / 4.0)", "x * 0.25");
    assert_simplifies("-(2.0) * -(3.0) * x", "6.0 * x");
    assert_simplifies("2.0 * (4.0 * 0.001) * x", "0.008 * x");
    // A result needing many more digits than its operands is not folded:
    // `0.1 * 3.0` is 0.30000000000000004, `1.0 / 3.0` 0.3333333333333333.
    assert_simplifies("0.1 * 3.0 * x", "0.1 * 3.0 * x");
    assert_simplifies("x * (1.0 / 3.0)", "x / 3.0");
    // Kept as written (these have no finite value to compare).
    assert_eq!(printed("x + 1.0 / 0.0"), "x + 1.0 / 0.0");
    assert_eq!(printed("x * (1e308 * 10.0)"), "x * (1e308 * 10.0)");
    assert_eq!(printed("x / (1.0 - 1.0)"), "x / 0.0");
    // The negation of zero keeps its sign: atan2 (and copysign) read it.
    assert_simplifies("atan2(-0.0, x) * y", "atan2(-0.0, x) * y");
    assert_simplifies("atan2(-0.0, x) + 0.0", "atan2(-0.0, x)");
    // `float` arithmetic for a `float` expression.
    assert_eq!(
        simplified_with(&simplifier(), "f * (0.1f * 3.0f)", TOL_FLOAT),
        "f * 0.3f"
    );
    // `long double`: exact integers fold, a decimal the IL cannot hold
    // exactly is a leaf.
    assert_simplifies("l * (2.0L * 3.0L)", "l * 6.0L");
    assert_simplifies("l * (0.1L * 3.0L)", "l * (0.1L * 3.0L)");
    // Two `long double` literals the IL stores as one `double` are two
    // leaves: they differ in `long double`.
    assert_simplifies(
        "l * 0.1L - l * 0.10000000000000000001L",
        "l * (0.1L - 0.10000000000000000001L)",
    );
}

// ---------------------------------------------------------------------------
// The domain, the types, the cost, the limits
// ---------------------------------------------------------------------------

/// `simplify/domain`: integer arithmetic and casts are opaque; integer
/// constants in real operations are reals.
#[test]
fn domain_leaves_are_opaque() {
    // `i - i` is 0, but integer arithmetic is never rewritten.
    assert_simplifies("(i - i) * x", "(i - i) * x");
    assert_simplifies("x * (i / 2 * 2) * 1.0", "x * (i / 2 * 2)");
    assert_simplifies("(double)(i / j) * 1.0", "(double)(i / j)");
    assert_simplifies("(double)(x * 1.0) + 0.0", "(double)(x * 1.0)");
    assert_simplifies("2 * x * 3", "6.0 * x");
    // Unary plus is dropped.
    assert_simplifies("+x * 1.0", "x");
}

/// `simplify/domain`: a conditional's branches are simplified, its
/// condition is not.
#[test]
fn domain_conditional() {
    assert_simplifies("x > 0.0 ? 1.0 * xd : -1.0 * xd", "x > 0.0 ? xd : -xd");
    assert_simplifies("x * 1.0 > 0.0 ? xd : yd", "x * 1.0 > 0.0 ? xd : yd");
    assert_simplifies("(x > y ? xd : yd) * 1.0 + 0.0", "x > y ? xd : yd");
}

/// `simplify/domain`: intrinsics are uninterpreted function symbols.
#[test]
fn domain_intrinsics() {
    assert_simplifies("sin(x + 0.0) * xd - sin(x) * xd", "0.0");
    assert_simplifies("cos(x) * xd * 1.0", "cos(x) * xd");
    assert_simplifies("pow(x, 2.0 - 1.0) * xd", "pow(x, 1.0) * xd");
    assert_simplifies("sqrt(x * x)", "sqrt(x * x)");
}

/// `simplify/cost`: an intrinsic's argument is extracted as written, but
/// for folded constants and what the input's own nodes give, so that the
/// call stays the original's (and is computed once with it).
#[test]
fn intrinsic_arguments_keep_their_spelling() {
    assert_simplifies(
        "exp(-y * x * x) * (-(yd * x) * x - xd * (x * y)) + 0.0",
        "exp(-y * x * x) * (-(x * (yd * x)) - xd * (x * y))",
    );
    assert_simplifies("exp(-y * x * (x + 0.0)) * xd", "exp(-y * x * x) * xd");
    assert_simplifies("3.0 * pow(x, 3.0 - 1.0) * xd", "3.0 * pow(x, 2.0) * xd");
}

/// `simplify/domain`: arithmetic of another precision inside an
/// expression is simplified in its own precision.
#[test]
fn domain_other_precision() {
    assert_simplifies("x + f * 1.0f", "x + f");
    assert_eq!(
        simplified_with(&simplifier(), "f * 1.0f + 0.0f", TOL_FLOAT),
        "f"
    );
    assert_simplifies("l * 1.0L - 0.0L", "l");
}

/// `simplify/types`: the root keeps the input's type; operators are
/// rebuilt so that C computes them in the precision of the input.
#[test]
fn types() {
    // The result of `i * 1.0` is `i` converted.
    assert_simplifies("i * 1.0", "(double)i");
    // `u - j` would be an `unsigned` subtraction.
    assert_simplifies("u * x - j * x", "x * ((double)u - j)");
    // `f * g` would round to `float`.
    assert_simplifies("f * 1.0 * g", "(double)f * g");
    // Through a typedef.
    assert_simplifies("r * 1.0 + 0.0", "r");
    // New constants in the spelling of the precision.
    assert_eq!(
        simplified_with(&simplifier(), "2.0f * (f * 3.0f)", TOL_FLOAT),
        "6.0f * f"
    );
    assert_simplifies("2.0L * (l * 3.0L)", "6.0L * l");
    // The user's spelling of a constant is kept.
    assert_simplifies("1e-3 * x * 1.0", "1e-3 * x");
}

/// `simplify/types`: the returned expression has exactly the input's type,
/// a new node has the span of the input and no parentheses.
#[test]
fn types_spans_and_parens() {
    let s = simplifier();
    let mut case = Case::new("(xd * 1.0) * (y + 0.0)");
    let e = case.expr();
    let out = s.simplify(&case.program, &e);
    assert_eq!(out.ty, e.ty);
    assert_eq!(out.span, e.span);
    assert!(!out.parens);
    assert_eq!(case.print(&out), "xd * y");
}

/// `simplify/cost`: of equally simple forms, the one that reads naturally;
/// the input when nothing is strictly better.
#[test]
fn cost_prefers_natural_forms() {
    assert_simplifies("x + -(y * z)", "x - y * z");
    assert_simplifies("-1.0 * sin(x) * xd", "-(sin(x) * xd)");
    assert_simplifies("xd * y + x * yd", "xd * y + x * yd");
    assert_simplifies("x * yd + xd * y", "x * yd + xd * y");
    assert_simplifies("(x) * +y", "(x) * +y");
}

/// `simplify/limits`: the fast path skips the e-graph when no rule can
/// help; a large expression stays within the limits.
#[test]
fn limits() {
    let s = simplifier();
    for (input, searches) in [
        ("xd * y + x * yd", 0),
        ("x", 0),
        ("sin(x) * xd", 0),
        ("(i + 1) * x", 0),
        ("xd * y + 0.0", 1),
        ("x * y - y * x", 1),
    ] {
        let mut case = Case::new(input);
        let e = case.expr();
        let (_, stats) = s.simplify_with_stats(&case.program, &e);
        assert_eq!(stats.searches, searches, "`{input}`: {stats:?}");
    }

    // A sum of 24 products with repeated factors and constants.
    let terms: Vec<String> = (0..24)
        .map(|k| {
            let v = ["x", "y", "z", "xd"][k % 4];
            let w = ["yd", "zd", "a[i]", "ad[j]"][(k / 4) % 4];
            format!("{}.0 * {v} * ({w} + {v} * {w})", k % 3 + 1)
        })
        .collect();
    let input = terms.join(" + ");
    let mut case = Case::new(&input);
    let e = case.expr();
    let (out, stats) = s.simplify_with_stats(&case.program, &e);
    println!("{} nodes: {stats:?}", node_count(&e));
    assert!(stats.max_iterations <= ITERATION_LIMIT, "{stats:?}");
    assert_eq!(stats.limited, 0, "{stats:?}");
    check_contract(&case.program, &e, &out, TOL, 100, 3).unwrap();
    assert!(node_count(&out) < node_count(&e));

    // Beyond TERM_LIMIT nodes a term is neither converted nor searched (a
    // long sum's tangent would repeat that at each of its levels), but its
    // own sub-expressions still are: here the conditional's branches.
    let long: Vec<String> = (0..250).map(|k| format!("{}.0 * x", k + 1)).collect();
    let input = format!("{} + (i > 0 ? xd * 1.0 : yd + 0.0)", long.join(" + "));
    let mut case = Case::new(&input);
    let e = case.expr();
    assert!(node_count(&e) > TERM_LIMIT);
    let (out, stats) = s.simplify_with_stats(&case.program, &e);
    assert_eq!(stats.searches, 2, "{stats:?}");
    let printed = case.print(&out);
    assert!(printed.starts_with("1.0 * x + 2.0 * x"), "{printed}");
    assert!(printed.ends_with("(i > 0 ? xd : yd)"), "{printed}");
    check_contract(&case.program, &e, &out, TOL, 100, 3).unwrap();

    // General associativity and commutativity make the e-graph of a long
    // sum grow exponentially: the node limit stops it.
    let explosive = "simplify/assoc: (+ (+ ?a ?b) ?c) => (+ ?a (+ ?b ?c))\n\
                     simplify/comm: (+ ?a ?b) => (+ ?b ?a)\n\
                     simplify/zero: (+ ?a 0) => ?a\n";
    let s = Simplifier::from_texts(&[("explosive.rules", explosive)]).unwrap();
    let input = "x + y + z + xd + yd + zd + a[0] + a[1] + a[2] + ad[0] + ad[1] + ad[2] + 0.0";
    let mut case = Case::new(input);
    let e = case.expr();
    let (out, stats) = s.simplify_with_stats(&case.program, &e);
    println!("{input}: {stats:?}");
    assert_eq!(stats.limited, 1, "{stats:?}");
    assert!(stats.max_iterations <= ITERATION_LIMIT, "{stats:?}");
    // The limit is checked after the matches in each e-class, so it is
    // exceeded by at most those.
    assert!(stats.max_nodes > NODE_LIMIT, "{stats:?}");
    assert!(stats.max_nodes < 2 * NODE_LIMIT, "{stats:?}");
    check_contract(&case.program, &e, &out, TOL, 100, 3).unwrap();
    // What was found before the limit is kept.
    assert_eq!(node_count(&out), node_count(&e) - 2);
    let (again, _) = s.simplify_with_stats(&case.program, &e);
    assert_eq!(out, again);
}

/// `simplify/limits`: the same input gives the same output, whatever was
/// simplified before and whichever `Simplifier` does it.
#[test]
fn determinism() {
    let inputs = [
        "1.0 * xd * y + x * yd + 0.0 * z",
        "x * yd + x * zd - zd * x",
        "2.0 * x * 3.0 + y * 0.5 * 4.0",
        "a[i] * ad[j] + ad[j] * a[i] - x * (y + z) + (z + y) * x",
        "sin(x) * xd * -1.0 + cos(y) * -yd",
    ];
    let first = simplifier();
    let second = simplifier();
    let run = |s: &Simplifier, order: &mut dyn Iterator<Item = &&str>| {
        let mut out: Vec<(String, String)> = order
            .map(|input| {
                let mut case = Case::new(input);
                let e = case.expr();
                let r = s.simplify(&case.program, &e);
                (input.to_string(), format!("{r:?}"))
            })
            .collect();
        out.sort();
        out
    };
    let a = run(&first, &mut inputs.iter());
    let b = run(&first, &mut inputs.iter().rev());
    let c = run(&second, &mut inputs.iter());
    assert_eq!(a, b);
    assert_eq!(a, c);
}

/// The tangent engine may share one `Simplifier` between threads.
#[test]
fn simplifier_is_send_and_sync() {
    fn shareable<T: Send + Sync>(_: &T) {}
    shareable(&simplifier());
}

// ---------------------------------------------------------------------------
// Rule files
// ---------------------------------------------------------------------------

fn error_of(text: &str) -> SimplifyError {
    match Simplifier::from_texts(&[("extra.rules", text)]) {
        Ok(_) => panic!("`{text}` should not parse"),
        Err(e) => e,
    }
}

/// `simplify/rules-syntax`: errors name the file and the line.
#[test]
fn rule_file_errors() {
    let cases = [
        (
            "# fine\n\nsimplify/a: (+ ?x 0) => ?x\nbroken line\n",
            4,
            "expected",
        ),
        ("simplify/Bad: (+ ?x 0) => ?x", 1, "not a rule ID"),
        ("other/a: (+ ?x 0) => ?x", 1, "not a rule ID"),
        ("\nsimplify/a: (+ ?x 0) ?x", 2, "`=>`"),
        ("simplify/a: (+ ?x 0) => ?x => ?x", 1, "more than one"),
        ("simplify/a: (frob ?x) => ?x", 1, "unknown operator `frob`"),
        ("simplify/a: (sin ?x ?y) => ?x", 1, "takes 1"),
        ("simplify/a: (+ ?x 0) => ?y", 1, "?y"),
        (
            "simplify/a: (* ?x 0.1) => ?x",
            1,
            "not exactly representable",
        ),
        ("simplify/a: ?x => (+ ?x 0)", 1, "must be an operation"),
        ("simplify/a: (+ ?x ?y) => ?x if const ?z", 1, "?z"),
        ("simplify/a: (+ ?x ?y) => ?x if nonzero ?y", 1, "if const"),
        ("simplify/a: (+ ?x ( => ?x", 1, "left side"),
        ("simplify/a: (+ ?x 0) => (+ ?x", 1, "right side"),
        ("simplify/a: (+ ?x 0) => (+ ?x inf)", 1, "finite number"),
    ];
    for (text, line, needle) in cases {
        let e = error_of(text);
        assert_eq!(
            (e.file.as_str(), e.line),
            ("extra.rules", line),
            "{text}: {e}"
        );
        let shown = e.to_string();
        assert!(
            shown.starts_with(&format!("extra.rules:{line}: ")),
            "{text}: {shown}"
        );
        assert!(shown.contains(needle), "{text}: `{shown}` lacks `{needle}`");
    }
}

/// `simplify/rules-syntax`: extra rules, conditions and comments work, and
/// the rules used are exactly those given.
#[test]
fn rule_files_extend() {
    let extra = "# square roots of squares, for this test only\n\
                 simplify/sqrt-square: (sqrt (* ?x ?x)) => (fabs ?x)  # trailing comment\n";
    let mut files = BUNDLED_RULES.to_vec();
    files.push(("extra.rules", extra));
    let s = Simplifier::from_texts(&files).unwrap();
    assert_eq!(simplified_with(&s, "sqrt(x * x) * 1.0", TOL), "fabs(x)");
    let only = Simplifier::from_texts(&[("extra.rules", extra)]).unwrap();
    assert_eq!(only.rules().count(), 1);
    assert_eq!(
        only.rules().next(),
        Some(("simplify/sqrt-square", "extra.rules", 2))
    );
    // Without the bundled rules, `* 1.0` stays; folding is not a rule.
    assert_eq!(simplified_with(&only, "x * 1.0", TOL), "x * 1.0");
    assert_eq!(simplified_with(&only, "x * (1.0 + 1.0)", TOL), "x * 2.0");
}

/// Every bundled rule's ID has its section in `spec/simplify.md`.
#[test]
fn bundled_rules_are_specified() {
    let spec =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/spec/simplify.md")).unwrap();
    let s = simplifier();
    assert!(s.rules().count() >= 20);
    for (id, file, line) in s.rules() {
        assert!(
            spec.contains(&format!("### `{id}` — ")),
            "{file}:{line}: `{id}` has no section in spec/simplify.md"
        );
    }
}

// ---------------------------------------------------------------------------
// Typical derivative expressions
// ---------------------------------------------------------------------------

/// Expressions as tangent rules produce them, before and after.
#[test]
fn typical_derivatives() {
    let inputs = [
        "1.0 * xd * y + x * yd",
        "xd * y + x * yd + 0.0 * z",
        "0.0 * x + 2.0 * xd",
        "2.0 * x * xd",
        "cos(x) * xd * 1.0 + 0.0",
        "1.0 / y * xd - x / (y * y) * yd",
        "exp(x) * (1.0 * xd + 0.0 * yd)",
        "ad[i] * a[i] + a[i] * ad[i]",
        "-1.0 * sin(x) * xd",
        "2.0 * pow(x, 2.0 - 1.0) * xd + 0.0 * log(x) * pow(x, 2.0) * 0.0",
        "x > 0.0 ? 1.0 * xd : -1.0 * xd",
        "0.5 * xd / sqrt(x)",
        "(xd * y - x * yd) / (y * y) * 1.0",
        "-(0.0 - xd) * (y * 1.0) + -(x * -yd)",
        "zd * (x * y) + z * (xd * y + x * yd) - z * 0.0",
        "3 * x * x * xd",
    ];
    let s = simplifier();
    let mut lines = Vec::new();
    for input in inputs {
        lines.push(format!(
            "{input}\n    => {}",
            simplified_with(&s, input, TOL)
        ));
    }
    insta::assert_snapshot!(lines.join("\n"));
}

// ---------------------------------------------------------------------------
// Random expression trees
// ---------------------------------------------------------------------------

/// The shape of a random expression; leaves are the program's variables,
/// `a[k]`, and constants.
#[derive(Clone, Debug)]
enum Shape {
    Var(usize),
    IntVar(usize),
    Elem(i64),
    Real(f64),
    Int(i64),
    Neg(Box<Shape>),
    Plus(Box<Shape>),
    Bin(BinOp, Box<Shape>, Box<Shape>),
    Call(MathFn, Box<Shape>),
    Cond(Box<Shape>, Box<Shape>),
}

fn shape() -> impl Strategy<Value = Shape> {
    let leaf = prop_oneof![
        4 => (0..4usize).prop_map(Shape::Var),
        1 => (0..2usize).prop_map(Shape::IntVar),
        1 => (0..3i64).prop_map(Shape::Elem),
        2 => prop::sample::select(vec![0.0, 1.0, 2.0, 0.5, 3.0]).prop_map(Shape::Real),
        1 => (0..3i64).prop_map(Shape::Int),
    ];
    leaf.prop_recursive(5, 40, 2, |inner| {
        let op = prop::sample::select(vec![BinOp::Add, BinOp::Sub, BinOp::Mul, BinOp::Div]);
        prop_oneof![
            2 => inner.clone().prop_map(|a| Shape::Neg(Box::new(a))),
            1 => inner.clone().prop_map(|a| Shape::Plus(Box::new(a))),
            8 => (op, inner.clone(), inner.clone())
                .prop_map(|(o, a, b)| Shape::Bin(o, Box::new(a), Box::new(b))),
            1 => (prop::sample::select(vec![MathFn::Sin, MathFn::Exp]), inner.clone())
                .prop_map(|(f, a)| Shape::Call(f, Box::new(a))),
            1 => (inner.clone(), inner)
                .prop_map(|(a, b)| Shape::Cond(Box::new(a), Box::new(b))),
        ]
    })
}

/// A hand-built program with the variables the shapes use.
fn tree_program() -> Program {
    let mut p = Program::default();
    p.scopes.push(Scope::default());
    let mut var = |name: &str, ty: QualType| {
        p.symbols.push(Symbol {
            name: name.to_string(),
            ty,
            kind: SymKind::Param,
            storage: Storage::Auto,
            scope: ScopeId(0),
            span: Span::default(),
        });
    };
    for n in ["x", "y", "z", "w"] {
        var(n, QualType::double());
    }
    var("i", QualType::int());
    var("n", QualType::int());
    var("a", QualType::double().pointer_to());
    p
}

fn ex(kind: ExprKind, ty: QualType) -> Expr {
    Expr::new(kind, ty, Span::default())
}

/// The IL of a shape, with C's types: an operation on two integers is
/// integer arithmetic (an opaque leaf to the simplifier).
fn build(s: &Shape) -> Expr {
    let dbl = QualType::double;
    let is_int = |e: &Expr| matches!(e.ty.ty, Type::Int { .. });
    match s {
        Shape::Var(k) => ex(ExprKind::Var(SymId(*k as u32)), dbl()),
        Shape::IntVar(k) => ex(ExprKind::Var(SymId(4 + *k as u32)), QualType::int()),
        Shape::Elem(k) => ex(
            ExprKind::Index {
                base: Box::new(ex(ExprKind::Var(SymId(6)), dbl().pointer_to())),
                index: Box::new(ex(
                    ExprKind::IntConst {
                        value: *k,
                        text: k.to_string(),
                    },
                    QualType::int(),
                )),
            },
            dbl(),
        ),
        Shape::Real(v) => ex(
            ExprKind::RealConst {
                value: *v,
                text: format!("{v:?}"),
            },
            dbl(),
        ),
        Shape::Int(v) => ex(
            ExprKind::IntConst {
                value: *v,
                text: v.to_string(),
            },
            QualType::int(),
        ),
        Shape::Neg(a) | Shape::Plus(a) => {
            let a = build(a);
            let op = if matches!(s, Shape::Neg(_)) {
                UnOp::Neg
            } else {
                UnOp::Plus
            };
            let ty = a.ty.clone();
            ex(
                ExprKind::Unary {
                    op,
                    arg: Box::new(a),
                },
                ty,
            )
        }
        Shape::Bin(op, a, b) => {
            let (a, b) = (build(a), build(b));
            let ty = if is_int(&a) && is_int(&b) {
                QualType::int()
            } else {
                dbl()
            };
            ex(
                ExprKind::Binary {
                    op: *op,
                    lhs: Box::new(a),
                    rhs: Box::new(b),
                },
                ty,
            )
        }
        Shape::Call(f, a) => ex(
            ExprKind::Intrinsic {
                call: Intrinsic {
                    func: *f,
                    precision: Some(RealKind::Double),
                    name: f.c_name().to_string(),
                },
                args: vec![build(a)],
            },
            dbl(),
        ),
        Shape::Cond(a, b) => {
            let cond = ex(
                ExprKind::Binary {
                    op: BinOp::Lt,
                    lhs: Box::new(ex(ExprKind::Var(SymId(0)), dbl())),
                    rhs: Box::new(ex(ExprKind::Var(SymId(1)), dbl())),
                },
                QualType::int(),
            );
            let (a, b) = (build(a), build(b));
            let ty = if is_int(&a) && is_int(&b) {
                QualType::int()
            } else {
                dbl()
            };
            ex(
                ExprKind::Cond {
                    cond: Box::new(cond),
                    then: Box::new(a),
                    other: Box::new(b),
                },
                ty,
            )
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    /// All the rules at once, on random trees over `double` and `int`
    /// leaves: the value is kept (relative and absolute tolerance 1e-12,
    /// where the input is finite), the type is kept, the node count never
    /// grows, and simplifying twice gives the same result.
    #[test]
    fn random_trees_keep_their_value(s in shape(), seed in any::<u64>()) {
        let program = tree_program();
        let simplifier = simplifier();
        let e = build(&s);
        let out = simplifier.simplify(&program, &e);
        let again = simplifier.simplify(&program, &e);
        prop_assert_eq!(&out, &again);
        if let Err(m) = check_contract(&program, &e, &out, TOL, 20, seed) {
            return Err(TestCaseError::fail(format!("{e:?}\n=> {out:?}\n{m}")));
        }
    }
}
