//! The numbers the interpreter computes with: plain `f64` (bit-identical with
//! compiled C) and [`Dual`] numbers (value and one tangent component).
//!
//! Float-typed C results are computed in `f64` and then rounded to `f32`
//! ([`Real::round_to_f32`]). For `+ - * /` and `sqrt` this double rounding is
//! exact (53 ≥ 2·24 + 2), so the result equals the one computed in single
//! precision; the `float` library variants (`sinf`, ...) are called directly.
//!
//! Derivative rules of [`Dual`] at points where the function is not
//! differentiable follow what Tapenade's generated code does:
//! - `fabs'(x)` is `+1` for `x >= 0` (including `0` and `-0`), `-1` otherwise;
//! - `sqrt'(0)` and `cbrt'(0)` are `0` (Tapenade guards `x == 0`);
//! - `floor`, `ceil`, `round`, `trunc` have derivative `0`; `fmod(x, y)` has
//!   partials `1` and `-trunc(x/y)`;
//! - `fmin`/`fmax` take the derivative of the argument they return, the
//!   first one on ties;
//! - `pow(x, y)`: the `y` partial `log(x)·x^y` is taken as `0` when `x <= 0`;
//! - `copysign(x, y)`: `±ẋ` according to whether the sign of `x` is flipped;
//! - `hypot'` at `(0, 0)` is `0`.
//!
//! A partial derivative is multiplied by a tangent only when that tangent is
//! non-zero, so an infinite or NaN partial never pollutes a direction that
//! does not vary (as in generated code where the derivative statement is
//! absent for a passive argument).

use crate::il::MathFn;
use std::fmt::Debug;
use std::ops::{Add, Div, Mul, Neg, Sub};

/// A number the interpreter can compute with.
pub trait Real:
    Copy
    + Debug
    + PartialEq
    + PartialOrd
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + 'static
{
    /// A constant (its tangent is zero).
    fn from_f64(v: f64) -> Self;
    /// The primal value.
    fn value(self) -> f64;
    /// Rounds to single precision, for results of `float` type.
    fn round_to_f32(self) -> Self;
    /// Applies a math function of [`MathFn`] (except `IntAbs`); `y` is
    /// ignored by one-argument functions. `single` selects the `float`
    /// variant of the C library (`sinf` rather than `sin`).
    fn math(func: MathFn, single: bool, x: Self, y: Self) -> Self;
}

mod libm {
    use std::os::raw::c_int;
    unsafe extern "C" {
        pub fn sqrt(x: f64) -> f64;
        pub fn remainder(x: f64, y: f64) -> f64;
        pub fn nextafter(x: f64, y: f64) -> f64;
        // Rust's compiler-builtins defines its own `cbrt` and `cbrtf`,
        // which the linker prefers to glibc's: call glibc's through its
        // `_Float64` / `_Float32` aliases (same implementation as C's).
        #[link_name = "cbrtf64"]
        pub fn cbrt(x: f64) -> f64;
        pub fn exp(x: f64) -> f64;
        pub fn exp2(x: f64) -> f64;
        pub fn expm1(x: f64) -> f64;
        pub fn log(x: f64) -> f64;
        pub fn log2(x: f64) -> f64;
        pub fn log10(x: f64) -> f64;
        pub fn log1p(x: f64) -> f64;
        pub fn pow(x: f64, y: f64) -> f64;
        pub fn sin(x: f64) -> f64;
        pub fn cos(x: f64) -> f64;
        pub fn tan(x: f64) -> f64;
        pub fn asin(x: f64) -> f64;
        pub fn acos(x: f64) -> f64;
        pub fn atan(x: f64) -> f64;
        pub fn atan2(y: f64, x: f64) -> f64;
        pub fn sinh(x: f64) -> f64;
        pub fn cosh(x: f64) -> f64;
        pub fn tanh(x: f64) -> f64;
        pub fn asinh(x: f64) -> f64;
        pub fn acosh(x: f64) -> f64;
        pub fn atanh(x: f64) -> f64;
        pub fn hypot(x: f64, y: f64) -> f64;
        pub fn fabs(x: f64) -> f64;
        pub fn fmin(x: f64, y: f64) -> f64;
        pub fn fmax(x: f64, y: f64) -> f64;
        pub fn erf(x: f64) -> f64;
        pub fn erfc(x: f64) -> f64;
        pub fn lgamma_r(x: f64, sign: *mut c_int) -> f64;
        pub fn tgamma(x: f64) -> f64;
        pub fn floor(x: f64) -> f64;
        pub fn ceil(x: f64) -> f64;
        pub fn round(x: f64) -> f64;
        pub fn trunc(x: f64) -> f64;
        pub fn fmod(x: f64, y: f64) -> f64;
        pub fn copysign(x: f64, y: f64) -> f64;

        pub fn sqrtf(x: f32) -> f32;
        #[link_name = "cbrtf32"]
        pub fn cbrtf(x: f32) -> f32;
        pub fn expf(x: f32) -> f32;
        pub fn exp2f(x: f32) -> f32;
        pub fn expm1f(x: f32) -> f32;
        pub fn logf(x: f32) -> f32;
        pub fn log2f(x: f32) -> f32;
        pub fn log10f(x: f32) -> f32;
        pub fn log1pf(x: f32) -> f32;
        pub fn powf(x: f32, y: f32) -> f32;
        pub fn sinf(x: f32) -> f32;
        pub fn cosf(x: f32) -> f32;
        pub fn tanf(x: f32) -> f32;
        pub fn asinf(x: f32) -> f32;
        pub fn acosf(x: f32) -> f32;
        pub fn atanf(x: f32) -> f32;
        pub fn atan2f(y: f32, x: f32) -> f32;
        pub fn sinhf(x: f32) -> f32;
        pub fn coshf(x: f32) -> f32;
        pub fn tanhf(x: f32) -> f32;
        pub fn asinhf(x: f32) -> f32;
        pub fn acoshf(x: f32) -> f32;
        pub fn atanhf(x: f32) -> f32;
        pub fn hypotf(x: f32, y: f32) -> f32;
        pub fn fabsf(x: f32) -> f32;
        pub fn fminf(x: f32, y: f32) -> f32;
        pub fn fmaxf(x: f32, y: f32) -> f32;
        pub fn erff(x: f32) -> f32;
        pub fn erfcf(x: f32) -> f32;
        pub fn lgammaf_r(x: f32, sign: *mut c_int) -> f32;
        pub fn tgammaf(x: f32) -> f32;
        pub fn floorf(x: f32) -> f32;
        pub fn ceilf(x: f32) -> f32;
        pub fn roundf(x: f32) -> f32;
        pub fn truncf(x: f32) -> f32;
        pub fn fmodf(x: f32, y: f32) -> f32;
        pub fn copysignf(x: f32, y: f32) -> f32;
    }
}

/// Calls the C library's double-precision function.
fn libm_double(func: MathFn, x: f64, y: f64) -> f64 {
    use MathFn::*;
    // SAFETY: these libm functions are pure and take plain numbers; lgamma_r
    // writes only to the local `sign`.
    unsafe {
        match func {
            Sqrt => libm::sqrt(x),
            Cbrt => libm::cbrt(x),
            Exp => libm::exp(x),
            Exp2 => libm::exp2(x),
            Expm1 => libm::expm1(x),
            Log => libm::log(x),
            Log2 => libm::log2(x),
            Log10 => libm::log10(x),
            Log1p => libm::log1p(x),
            Pow => libm::pow(x, y),
            Sin => libm::sin(x),
            Cos => libm::cos(x),
            Tan => libm::tan(x),
            Asin => libm::asin(x),
            Acos => libm::acos(x),
            Atan => libm::atan(x),
            Atan2 => libm::atan2(x, y),
            Sinh => libm::sinh(x),
            Cosh => libm::cosh(x),
            Tanh => libm::tanh(x),
            Asinh => libm::asinh(x),
            Acosh => libm::acosh(x),
            Atanh => libm::atanh(x),
            Hypot => libm::hypot(x, y),
            Fabs => libm::fabs(x),
            Fmin => libm::fmin(x, y),
            Fmax => libm::fmax(x, y),
            Erf => libm::erf(x),
            Erfc => libm::erfc(x),
            Lgamma => {
                let mut sign = 0;
                libm::lgamma_r(x, &mut sign)
            }
            Tgamma => libm::tgamma(x),
            Floor => libm::floor(x),
            Ceil => libm::ceil(x),
            Round => libm::round(x),
            Trunc => libm::trunc(x),
            Fmod => libm::fmod(x, y),
            Copysign => libm::copysign(x, y),
            // Integer absolute value of a value already converted to an
            // integer; the interpreter does not route it here.
            IntAbs => x.abs(),
            Digamma => digamma(x),
        }
    }
}

/// Calls the C library's single-precision function.
fn libm_single(func: MathFn, x: f32, y: f32) -> f32 {
    use MathFn::*;
    // SAFETY: as in `libm_double`.
    unsafe {
        match func {
            Sqrt => libm::sqrtf(x),
            Cbrt => libm::cbrtf(x),
            Exp => libm::expf(x),
            Exp2 => libm::exp2f(x),
            Expm1 => libm::expm1f(x),
            Log => libm::logf(x),
            Log2 => libm::log2f(x),
            Log10 => libm::log10f(x),
            Log1p => libm::log1pf(x),
            Pow => libm::powf(x, y),
            Sin => libm::sinf(x),
            Cos => libm::cosf(x),
            Tan => libm::tanf(x),
            Asin => libm::asinf(x),
            Acos => libm::acosf(x),
            Atan => libm::atanf(x),
            Atan2 => libm::atan2f(x, y),
            Sinh => libm::sinhf(x),
            Cosh => libm::coshf(x),
            Tanh => libm::tanhf(x),
            Asinh => libm::asinhf(x),
            Acosh => libm::acoshf(x),
            Atanh => libm::atanhf(x),
            Hypot => libm::hypotf(x, y),
            Fabs => libm::fabsf(x),
            Fmin => libm::fminf(x, y),
            Fmax => libm::fmaxf(x, y),
            Erf => libm::erff(x),
            Erfc => libm::erfcf(x),
            Lgamma => {
                let mut sign = 0;
                libm::lgammaf_r(x, &mut sign)
            }
            Tgamma => libm::tgammaf(x),
            Floor => libm::floorf(x),
            Ceil => libm::ceilf(x),
            Round => libm::roundf(x),
            Trunc => libm::truncf(x),
            Fmod => libm::fmodf(x, y),
            Copysign => libm::copysignf(x, y),
            IntAbs => x.abs(),
            Digamma => digamma(x as f64) as f32,
        }
    }
}

impl Real for f64 {
    fn from_f64(v: f64) -> f64 {
        v
    }
    fn value(self) -> f64 {
        self
    }
    fn round_to_f32(self) -> f64 {
        self as f32 as f64
    }
    fn math(func: MathFn, single: bool, x: f64, y: f64) -> f64 {
        if single {
            libm_single(func, x as f32, y as f32) as f64
        } else {
            libm_double(func, x, y)
        }
    }
}

/// The digamma function ψ = Γ'/Γ, the derivative of `lgamma`.
/// C's `remainder`: x − n·y with n the integer nearest x/y (ties to
/// even), computed exactly.
pub fn c_remainder(x: f64, y: f64) -> f64 {
    // SAFETY: a pure libm function of two numbers.
    unsafe { libm::remainder(x, y) }
}

/// C's `nextafter`: the neighbour of x in the direction of y.
pub fn c_nextafter(x: f64, y: f64) -> f64 {
    // SAFETY: a pure libm function of two numbers.
    unsafe { libm::nextafter(x, y) }
}

pub fn digamma(x: f64) -> f64 {
    if x.is_nan() || x == f64::NEG_INFINITY {
        return f64::NAN;
    }
    if x <= 0.0 {
        if x == x.floor() {
            return f64::NAN;
        }
        // Reflection: ψ(1 − x) − ψ(x) = π cot(πx).
        let pi = std::f64::consts::PI;
        return digamma(1.0 - x) - pi / (pi * x).tan();
    }
    let mut x = x;
    let mut result = 0.0;
    // Shift upward until the asymptotic series is accurate to ~1e-14.
    while x < 10.0 {
        result -= 1.0 / x;
        x += 1.0;
    }
    let f = 1.0 / (x * x);
    let series =
        f * (1.0 / 12.0 - f * (1.0 / 120.0 - f * (1.0 / 252.0 - f * (1.0 / 240.0 - f / 132.0))));
    result + x.ln() - 0.5 / x - series
}

/// A dual number: a value and one tangent component.
#[derive(Clone, Copy, Debug, Default)]
pub struct Dual {
    v: f64,
    d: f64,
}

impl Dual {
    /// The dual number `v + d·ε`.
    pub fn new(v: f64, d: f64) -> Dual {
        Dual { v, d }
    }
    /// The tangent component.
    pub fn tangent(self) -> f64 {
        self.d
    }
}

/// Comparisons look at values only, as the C program's branches do.
impl PartialEq for Dual {
    fn eq(&self, other: &Dual) -> bool {
        self.v == other.v
    }
}

impl PartialOrd for Dual {
    fn partial_cmp(&self, other: &Dual) -> Option<std::cmp::Ordering> {
        self.v.partial_cmp(&other.v)
    }
}

impl Add for Dual {
    type Output = Dual;
    fn add(self, o: Dual) -> Dual {
        Dual::new(self.v + o.v, self.d + o.d)
    }
}

impl Sub for Dual {
    type Output = Dual;
    fn sub(self, o: Dual) -> Dual {
        Dual::new(self.v - o.v, self.d - o.d)
    }
}

impl Mul for Dual {
    type Output = Dual;
    fn mul(self, o: Dual) -> Dual {
        Dual::new(self.v * o.v, scale(o.v, self.d) + scale(self.v, o.d))
    }
}

impl Div for Dual {
    type Output = Dual;
    fn div(self, o: Dual) -> Dual {
        let q = self.v / o.v;
        // (ẋ − q·ẏ) / y, as Tapenade writes it.
        let num = self.d - scale(q, o.d);
        let d = if num == 0.0 { 0.0 } else { num / o.v };
        Dual::new(q, d)
    }
}

impl Neg for Dual {
    type Output = Dual;
    fn neg(self) -> Dual {
        Dual::new(-self.v, -self.d)
    }
}

/// `partial · tangent`, zero when the tangent is zero whatever the partial.
fn scale(partial: f64, tangent: f64) -> f64 {
    if tangent == 0.0 {
        0.0
    } else {
        partial * tangent
    }
}

/// The partial derivatives `(∂f/∂x, ∂f/∂y)` of `func` at `(x, y)`, where `r`
/// is the function's value there.
fn partials(func: MathFn, x: f64, y: f64, r: f64) -> (f64, f64) {
    use MathFn::*;
    use std::f64::consts::{LN_2, LN_10, PI};
    match func {
        Sqrt => (if x == 0.0 { 0.0 } else { 0.5 / r }, 0.0),
        Cbrt => (if x == 0.0 { 0.0 } else { 1.0 / (3.0 * r * r) }, 0.0),
        Exp => (r, 0.0),
        Exp2 => (LN_2 * r, 0.0),
        Expm1 => (r + 1.0, 0.0),
        Log => (1.0 / x, 0.0),
        Log2 => (1.0 / (x * LN_2), 0.0),
        Log10 => (1.0 / (x * LN_10), 0.0),
        Log1p => (1.0 / (1.0 + x), 0.0),
        Pow => {
            let dx = if y == 0.0 { 0.0 } else { y * x.powf(y - 1.0) };
            let dy = if x <= 0.0 { 0.0 } else { x.ln() * r };
            (dx, dy)
        }
        Sin => (x.cos(), 0.0),
        Cos => (-x.sin(), 0.0),
        Tan => (1.0 + r * r, 0.0),
        Asin => (1.0 / (1.0 - x * x).sqrt(), 0.0),
        Acos => (-1.0 / (1.0 - x * x).sqrt(), 0.0),
        Atan => (1.0 / (1.0 + x * x), 0.0),
        // atan2(x, y): here x is the C function's first argument (the
        // ordinate).
        Atan2 => {
            let n = x * x + y * y;
            (y / n, -x / n)
        }
        Sinh => (x.cosh(), 0.0),
        Cosh => (x.sinh(), 0.0),
        Tanh => (1.0 - r * r, 0.0),
        Asinh => (1.0 / (x * x + 1.0).sqrt(), 0.0),
        Acosh => (1.0 / (x * x - 1.0).sqrt(), 0.0),
        Atanh => (1.0 / (1.0 - x * x), 0.0),
        Hypot => {
            if r == 0.0 {
                (0.0, 0.0)
            } else {
                (x / r, y / r)
            }
        }
        Fabs => (if x >= 0.0 { 1.0 } else { -1.0 }, 0.0),
        Fmin => {
            if y < x || x.is_nan() {
                (0.0, 1.0)
            } else {
                (1.0, 0.0)
            }
        }
        Fmax => {
            if y > x || x.is_nan() {
                (0.0, 1.0)
            } else {
                (1.0, 0.0)
            }
        }
        Erf => (2.0 / PI.sqrt() * (-x * x).exp(), 0.0),
        Erfc => (-2.0 / PI.sqrt() * (-x * x).exp(), 0.0),
        Lgamma => (digamma(x), 0.0),
        Tgamma => (r * digamma(x), 0.0),
        Floor | Ceil | Round | Trunc => (0.0, 0.0),
        Fmod => (1.0, -(x / y).trunc()),
        Copysign => {
            let flipped = x.is_sign_negative() != y.is_sign_negative();
            (if flipped { -1.0 } else { 1.0 }, 0.0)
        }
        IntAbs => (if x >= 0.0 { 1.0 } else { -1.0 }, 0.0),
        // Second derivatives are not needed: the trigamma function is not
        // implemented.
        Digamma => (f64::NAN, 0.0),
    }
}

impl Real for Dual {
    fn from_f64(v: f64) -> Dual {
        Dual::new(v, 0.0)
    }
    fn value(self) -> f64 {
        self.v
    }
    /// Rounds the tangent too: the derivative of a `float` variable is a
    /// `float` in generated code.
    fn round_to_f32(self) -> Dual {
        Dual::new(self.v as f32 as f64, self.d as f32 as f64)
    }
    fn math(func: MathFn, single: bool, x: Dual, y: Dual) -> Dual {
        let r = f64::math(func, single, x.v, y.v);
        let (px, py) = partials(func, x.v, y.v, r);
        let d = scale(px, x.d) + scale(py, y.d);
        let d = if single { d as f32 as f64 } else { d };
        Dual::new(r, d)
    }
}
