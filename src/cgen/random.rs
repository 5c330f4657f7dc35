//! Random, well-typed, UB-free C99 programs, as source text, from a seed.
//!
//! Every program defines a few helper procedures and one head procedure with
//! the fixed signature
//!
//! ```c
//! void head(int n, const double *x, double *y, double a)
//! ```
//!
//! to be called with `n` equal to [`RandomProgram::n`], `x` and `y` arrays of
//! `n` values in `[-1, 1]` and `a` in `[0.5, 1.5]` (see
//! [`RandomProgram::domain`]); `y` is read and written.
//!
//! Safety comes by construction rather than by filtering: the generator
//! tracks, for every real storage location, a bound on its magnitude and, for
//! every integer, an interval, and it only writes expressions whose bounds it
//! can prove. Concretely:
//! - every writable real location holds a value of magnitude at most [`B`];
//!   an expression with a larger bound is squashed (`tanh`, `sin`, `atan`,
//!   ...) before being stored, and compound assignments to such locations are
//!   contractive (`v *= cos(e)`, `v += 0.5 * (u - v)`, `v /= 1.0 + e * e`);
//! - unbounded accumulation (`acc += e`) goes only to accumulators declared
//!   just before a loop nest and not read inside it; their bound after the
//!   nest is the number of iterations times the bound of the terms;
//! - array indexes are integer expressions whose interval lies inside the
//!   array; integer division and modulo are by positive constants only;
//!   integers stay small;
//! - math functions are applied on their safe domains only
//!   (`sqrt(e * e + 1.0)`, `log1p(e * e)`, `exp(tanh(e))`, ...), and a
//!   division's denominator is at least a positive constant;
//! - every local is initialised where it is declared, every variable and
//!   parameter is read (unread ones are folded into a "sink" variable before
//!   their scope closes), so `-Wall -Wextra -Werror` passes;
//! - running time is bounded by a cost estimate (loop trip counts are known
//!   because `n` is fixed).

use super::rng::Rng;

/// Magnitude bound of every writable real storage location.
const B: f64 = 4.0;
/// Past this magnitude a subexpression is squashed back.
const CAP: f64 = 64.0;
/// Past this magnitude an integer expression is wrapped by a modulo.
const INT_CAP: i64 = 1000;
/// Estimated number of statement executions one call of `head` may cost.
const COST_LIMIT: u64 = 60_000;

/// Which constructs the generated programs use.
#[derive(Clone, Debug)]
pub struct GenFeatures {
    /// `while` loops with a counter.
    pub while_loops: bool,
    /// `do ... while` loops with a counter.
    pub do_while: bool,
    /// `switch` statements with fall-through.
    pub switch: bool,
    /// A `typedef struct` used by value and by pointer.
    pub structs: bool,
    /// A recursive helper with bounded depth.
    pub recursion: bool,
    /// `float` variables and helpers mixed with `double`.
    pub floats: bool,
    /// Global variables.
    pub globals: bool,
    /// Explicit casts between `int`, `float` and `double`.
    pub casts: bool,
    /// Leading and trailing comments.
    pub comments: bool,
    /// Calls passing arrays, slices `&x[i]` and addresses of scalars.
    pub pointer_calls: bool,
    /// Constructs whose value is not a smooth function of the real inputs:
    /// comparisons of reals, `fabs`, `fmin`, `fmax`, `(int)` of a real,
    /// `cbrt` and `hypot` near zero. Turn off for derivative checks.
    pub discontinuous: bool,
    /// `break` and `continue` inside loops.
    pub break_continue: bool,
    /// `return` in the middle of a helper.
    pub early_return: bool,
    /// Calls inside conditions, `?:` branches and initializer lists, where
    /// a call is evaluated conditionally or cannot become a statement of
    /// its own. Off by default: the lowering does not accept them yet.
    pub conditional_calls: bool,
}

impl Default for GenFeatures {
    fn default() -> Self {
        GenFeatures {
            while_loops: true,
            do_while: true,
            switch: true,
            structs: true,
            recursion: true,
            floats: true,
            globals: true,
            casts: true,
            comments: true,
            pointer_calls: true,
            discontinuous: true,
            break_continue: true,
            early_return: true,
            conditional_calls: false,
        }
    }
}

/// Shape and size of the generated programs.
#[derive(Clone, Debug)]
pub struct GenConfig {
    /// The value of `n` the head is called with (the length of `x` and `y`).
    pub n: usize,
    /// Maximal depth of an expression tree.
    pub max_expr_depth: u32,
    /// Maximal nesting of loops.
    pub max_loop_depth: usize,
    /// Maximal number of statements of one procedure (nested ones count).
    pub max_statements: usize,
    /// Fewest ordinary helper procedures (the recursive and struct helpers
    /// come on top).
    pub min_helpers: usize,
    /// Most ordinary helper procedures.
    pub max_helpers: usize,
    /// Most lines of a program; the generator retries smaller when over.
    pub max_lines: usize,
    /// Which constructs to use.
    pub features: GenFeatures,
}

impl Default for GenConfig {
    fn default() -> Self {
        GenConfig {
            n: 6,
            max_expr_depth: 3,
            max_loop_depth: 3,
            max_statements: 14,
            min_helpers: 2,
            max_helpers: 4,
            max_lines: 150,
            features: GenFeatures::default(),
        }
    }
}

impl GenConfig {
    /// The default configuration without the non-smooth constructs, for
    /// derivative checks.
    pub fn smooth() -> GenConfig {
        let mut config = GenConfig::default();
        config.features.discontinuous = false;
        config
    }
}

/// What kind of value a parameter of the head takes.
#[derive(Clone, Debug, PartialEq)]
pub enum ParamKind {
    /// An integer with this fixed value.
    Int(i64),
    /// A real by value, in `[lo, hi]`.
    Real { lo: f64, hi: f64 },
    /// A pointer to `len` reals in `[lo, hi]`; `output` when the head writes
    /// them.
    RealArray {
        len: usize,
        lo: f64,
        hi: f64,
        output: bool,
    },
}

/// One parameter of the head, in order.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamSpec {
    pub name: String,
    pub kind: ParamKind,
}

/// Concrete inputs of one call of the head.
#[derive(Clone, Debug, PartialEq)]
pub struct Inputs {
    pub n: usize,
    pub x: Vec<f64>,
    pub y: Vec<f64>,
    pub a: f64,
}

/// A generated program and how to call it.
#[derive(Clone, Debug)]
pub struct RandomProgram {
    /// The C99 translation unit.
    pub source: String,
    /// The head procedure's name (always `head`), with the signature
    /// `void head(int n, const double *x, double *y, double a)`.
    pub head: String,
    /// The value of `n` the head must be called with.
    pub n: usize,
    /// The head's parameters, in order.
    pub params: Vec<ParamSpec>,
    /// The input domain in the syntax of CONTRACT §6, e.g.
    /// `n=6 x[n]=[-1,1] y[n]=[-1,1] a=[0.5,1.5]`.
    pub domain: String,
}

impl RandomProgram {
    /// Deterministic inputs inside the domain, drawn from `seed`.
    pub fn sample_inputs(&self, seed: u64) -> Inputs {
        let mut rng = Rng::new(seed ^ 0x5EED_1A7E_0000_0001);
        let mut draw = |lo: f64, hi: f64| {
            // Round to a short decimal so that the values print exactly in C.
            let v = lo + (hi - lo) * rng.unit();
            (v * 1024.0).round() / 1024.0
        };
        let x = (0..self.n).map(|_| draw(-1.0, 1.0)).collect();
        let y = (0..self.n).map(|_| draw(-1.0, 1.0)).collect();
        let a = draw(0.5, 1.5);
        Inputs { n: self.n, x, y, a }
    }

    /// A C `main` that calls the head on `inputs` and prints the `n` outputs
    /// `y[i]`, one per line, with `%.17g`. Compile it together with
    /// [`RandomProgram::source`] and link with `-lm`.
    pub fn c_main(&self, inputs: &Inputs) -> String {
        let list = |v: &[f64]| {
            v.iter()
                .map(|f| format!("{f:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        format!(
            "#include <stdio.h>\n\
             void {head}(int n, const double *x, double *y, double a);\n\
             int main(void)\n{{\n    \
             double x[{n}] = {{{x}}};\n    \
             double y[{n}] = {{{y}}};\n    \
             {head}({n}, x, y, {a:?});\n    \
             for (int i = 0; i < {n}; i++) {{\n        \
             printf(\"%.17g\\n\", y[i]);\n    }}\n    \
             return 0;\n}}\n",
            head = self.head,
            n = inputs.n,
            x = list(&inputs.x),
            y = list(&inputs.y),
            a = inputs.a,
        )
    }
}

/// Generates the program for `seed`. Deterministic: the same seed and
/// configuration give the same text.
pub fn random_program(seed: u64, config: &GenConfig) -> RandomProgram {
    let mut best: Option<String> = None;
    let mut scale = 1.0;
    // Retry with smaller budgets when a program comes out too long; the
    // attempts are seeded from `seed`, so the result stays deterministic.
    for attempt in 0..12u64 {
        let mut gen_config = config.clone();
        if attempt >= 4 {
            gen_config.max_helpers = config.min_helpers;
        }
        let source = Gen::new(
            seed.wrapping_add(attempt.wrapping_mul(0x9E37_79B9)),
            &gen_config,
            scale,
        )
        .program();
        let lines = source.lines().count();
        let better = match &best {
            None => true,
            Some(b) => lines < b.lines().count(),
        };
        if better {
            best = Some(source);
        }
        if lines <= config.max_lines {
            break;
        }
        scale *= 0.8;
    }
    let n = config.n.max(1);
    RandomProgram {
        source: best.unwrap_or_default(),
        head: "head".to_string(),
        n,
        params: vec![
            ParamSpec {
                name: "n".into(),
                kind: ParamKind::Int(n as i64),
            },
            ParamSpec {
                name: "x".into(),
                kind: ParamKind::RealArray {
                    len: n,
                    lo: -1.0,
                    hi: 1.0,
                    output: false,
                },
            },
            ParamSpec {
                name: "y".into(),
                kind: ParamKind::RealArray {
                    len: n,
                    lo: -1.0,
                    hi: 1.0,
                    output: true,
                },
            },
            ParamSpec {
                name: "a".into(),
                kind: ParamKind::Real { lo: 0.5, hi: 1.5 },
            },
        ],
        domain: format!("n={n} x[n]=[-1,1] y[n]=[-1,1] a=[0.5,1.5]"),
    }
}

// ---------------------------------------------------------------------------
// Model of the program being generated.

/// What the generator knows about a variable.
#[derive(Clone, Debug)]
enum Kind {
    Real {
        float: bool,
        bound: f64,
        writable: bool,
    },
    Int {
        lo: i64,
        hi: i64,
        writable: bool,
    },
    RealArr {
        float: bool,
        len: usize,
        bound: f64,
        writable: bool,
    },
    IntArr {
        len: usize,
        lo: i64,
        hi: i64,
    },
    /// `double *out`: one writable real, read and written as `*out`.
    Out,
    /// A variable of the program's struct type, or a pointer to one.
    Struct {
        pointer: bool,
    },
}

/// Accumulators and counters are write-only inside the loop nest that
/// follows their declaration.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Lock {
    Free,
    /// `acc += term` allowed; `base` is the trip product at declaration.
    AccReal {
        base: u64,
    },
    /// `cnt++` allowed.
    AccInt {
        base: u64,
    },
}

#[derive(Clone, Debug)]
struct Var {
    name: String,
    kind: Kind,
    read: bool,
    lock: Lock,
    /// Growth so far of an accumulator or counter.
    pending: f64,
    global: bool,
}

impl Var {
    fn new(name: impl Into<String>, kind: Kind) -> Var {
        Var {
            name: name.into(),
            kind,
            read: false,
            lock: Lock::Free,
            pending: 0.0,
            global: false,
        }
    }
}

/// A parameter kind of a helper.
#[derive(Clone, Debug)]
enum PKind {
    Real { float: bool },
    Int { lo: i64, hi: i64 },
    SliceIn { len: usize },
    SliceOut { len: usize },
    Out,
    StructVal,
    StructPtr,
}

#[derive(Clone, Debug, PartialEq)]
enum Ret {
    Void,
    Real { float: bool },
    Int { lo: i64, hi: i64 },
}

#[derive(Clone, Debug)]
struct Helper {
    name: String,
    params: Vec<(String, PKind)>,
    ret: Ret,
    cost: u64,
    called: bool,
}

impl Helper {
    fn pure_(&self) -> bool {
        self.ret != Ret::Void
    }
}

#[derive(Clone, Debug)]
struct StructDef {
    name: String,
    /// Real fields (name, is float), then one int field in `[0, 3]`.
    reals: Vec<(String, bool)>,
    tag: String,
}

/// One enclosing loop.
#[derive(Clone, Debug)]
struct LoopFrame {
    var: String,
    /// `continue` would skip the counter update of a `while` loop.
    continue_ok: bool,
}

/// State of the procedure being generated.
#[derive(Default)]
struct Proc {
    lines: Vec<String>,
    indent: usize,
    scopes: Vec<Vec<Var>>,
    top_decls: Vec<String>,
    trips: u64,
    loops: Vec<LoopFrame>,
    /// Accumulators and counters (name) of the loop nests being generated.
    accs: Vec<String>,
    cost: u64,
    budget: i64,
    pure_: bool,
    /// Helpers `0..callable` may be called.
    callable: usize,
    sink: String,
    /// Loop upper bounds available: text and interval.
    extents: Vec<(String, i64, i64)>,
    nest: usize,
    ret: Option<Ret>,
    /// The text standing for the length `n` of the head's arrays.
    n_text: Option<String>,
    /// Inside a condition, a `?:` or an initializer list: no calls there
    /// unless `conditional_calls`.
    no_calls: u32,
}

type At = (usize, usize);

struct IE {
    s: String,
    lo: i64,
    hi: i64,
}

const PHRASES: &[&str] = &[
    "keep the magnitude bounded",
    "damped update",
    "smooth blend of the two values",
    "relaxation step",
    "local contribution",
    "boundary term",
    "second sweep, in reverse order",
    "cheap estimate first",
    "fold into the running value",
    "the index wraps around the end",
    "stencil on the neighbours",
    "limit the step",
    "scale by the global factor",
    "this branch is the common case",
    "accumulate over the window",
    "normalise by a positive denominator",
    "reuse the previous value",
    "strided pass over the data",
    "small correction",
    "mix the state and the input",
];

const HELPER_NAMES: &[&str] = &[
    "blend", "relax", "flux", "damp", "shape", "weight", "spread", "smooth", "limiter", "kernel",
    "sweep", "stretch", "couple", "settle", "drift", "probe",
];

const LOOP_VARS: &[&str] = &["i", "j", "k", "l", "ii", "jj", "kk", "ll"];

struct Gen<'c> {
    rng: Rng,
    cfg: &'c GenConfig,
    n: usize,
    scale: f64,
    helpers: Vec<Helper>,
    strukt: Option<StructDef>,
    globals: Vec<Var>,
    global_lines: Vec<String>,
    counter: usize,
    p: Proc,
}

fn fmt_real(v: f64) -> String {
    let s = format!("{v}");
    if s.contains('.') || s.contains('e') {
        s
    } else {
        format!("{s}.0")
    }
}

/// Removes one pair of parentheses around the whole of `s`.
fn strip(s: &str) -> &str {
    if !(s.starts_with('(') && s.ends_with(')')) {
        return s;
    }
    let mut depth = 0i32;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 && i != s.len() - 1 {
                    return s;
                }
            }
            _ => {}
        }
    }
    &s[1..s.len() - 1]
}

/// `s` as an operand of a unary operator.
fn operand(s: &str) -> String {
    if s.starts_with('-') || s.contains(' ') && !(s.starts_with('(') && strip(s) != s) {
        format!("({s})")
    } else {
        s.to_string()
    }
}

impl<'c> Gen<'c> {
    fn new(seed: u64, cfg: &'c GenConfig, scale: f64) -> Gen<'c> {
        Gen {
            rng: Rng::new(seed),
            cfg,
            n: cfg.n.max(1),
            scale,
            helpers: Vec::new(),
            strukt: None,
            globals: Vec::new(),
            global_lines: Vec::new(),
            counter: 0,
            p: Proc::default(),
        }
    }

    fn f(&self) -> &GenFeatures {
        &self.cfg.features
    }

    fn fresh(&mut self, prefix: &str) -> String {
        self.counter += 1;
        format!("{prefix}{}", self.counter)
    }

    // -- program -----------------------------------------------------------

    fn program(mut self) -> String {
        let mut out = Vec::new();
        let titles = [
            "Generated test program: helpers and one head procedure.",
            "Random kernel for property tests.",
            "A small numerical procedure with its helpers.",
        ];
        let title = *self.rng.pick(&titles);
        out.push(format!("/* {title} */"));
        out.push("#include <math.h>".to_string());
        out.push(String::new());
        if self.f().structs {
            self.make_struct(&mut out);
        }
        if self.f().globals {
            self.make_globals();
            out.append(&mut self.global_lines.clone());
            out.push(String::new());
        }
        let count = self.rng.range(
            self.cfg.min_helpers as i64,
            self.cfg.max_helpers.max(self.cfg.min_helpers) as i64,
        ) as usize;
        let mut kinds: Vec<usize> = (0..count).map(|_| self.rng.below(7) as usize).collect();
        if self.f().recursion {
            let at = self.rng.below(kinds.len() as u64 + 1) as usize;
            kinds.insert(at, 7);
        }
        if self.f().structs {
            kinds.push(8);
            kinds.push(9);
        }
        for kind in kinds {
            let text = self.helper(kind);
            out.extend(text);
            out.push(String::new());
        }
        out.extend(self.head());
        let mut s = out.join("\n");
        s.push('\n');
        s
    }

    fn make_struct(&mut self, out: &mut Vec<String>) {
        let themes: [(&str, [&str; 3], &str); 4] = [
            ("Cell", ["pos", "vel", "mass"], "tag"),
            ("Particle", ["x0", "v0", "w0"], "kind"),
            ("State", ["temp", "press", "dens"], "phase"),
            ("Node", ["val", "grad", "rate"], "level"),
        ];
        let (name, fields, tag) = *self.rng.pick(&themes);
        let count = self.rng.range(2, 3) as usize;
        let mut reals = Vec::new();
        for field in fields.iter().take(count) {
            let float = self.f().floats && self.rng.chance(0.25);
            reals.push((field.to_string(), float));
        }
        out.push("/* A record passed by value and by pointer. */".into());
        out.push("typedef struct {".into());
        for (field, float) in &reals {
            out.push(format!(
                "    {} {field};",
                if *float { "float" } else { "double" }
            ));
        }
        out.push(format!("    int {tag}; /* in [0, 3] */"));
        out.push(format!("}} {name};"));
        out.push(String::new());
        self.strukt = Some(StructDef {
            name: name.to_string(),
            reals,
            tag: tag.to_string(),
        });
    }

    fn make_globals(&mut self) {
        let scales = ["g_scale", "g_gain", "g_factor"];
        let steps = ["g_steps", "g_passes", "g_rounds"];
        let works = ["g_work", "g_state", "g_level"];
        let coefs = ["g_coef", "g_weights", "g_table"];
        let scale_value = *self.rng.pick(&[0.75, 0.5, 1.25, 0.9]);
        let steps_value = self.rng.range(2, 4);
        let name = self.rng.pick(&scales).to_string();
        self.global_lines
            .push(format!("double {name} = {};", fmt_real(scale_value)));
        let mut v = Var::new(
            name,
            Kind::Real {
                float: false,
                bound: scale_value,
                writable: false,
            },
        );
        v.global = true;
        self.globals.push(v);
        let name = self.rng.pick(&steps).to_string();
        self.global_lines.push(format!(
            "int {name} = {steps_value}; /* a small trip count */"
        ));
        let mut v = Var::new(
            name,
            Kind::Int {
                lo: steps_value,
                hi: steps_value,
                writable: false,
            },
        );
        v.global = true;
        self.globals.push(v);
        let name = self.rng.pick(&works).to_string();
        self.global_lines.push(format!(
            "double {name} = 0.0; /* reset by the head on entry */"
        ));
        let mut v = Var::new(
            name,
            Kind::Real {
                float: false,
                bound: B,
                writable: true,
            },
        );
        v.global = true;
        self.globals.push(v);
        let name = self.rng.pick(&coefs).to_string();
        let values: Vec<f64> = (0..4)
            .map(|_| *self.rng.pick(&[0.5, -0.25, 0.125, 1.0, -0.75, 0.3]))
            .collect();
        let bound = values.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        self.global_lines.push(format!(
            "double {name}[4] = {{{}}};",
            values
                .iter()
                .map(|v| fmt_real(*v))
                .collect::<Vec<_>>()
                .join(", ")
        ));
        let mut v = Var::new(
            name,
            Kind::RealArr {
                float: false,
                len: 4,
                bound,
                writable: false,
            },
        );
        v.global = true;
        self.globals.push(v);
    }

    fn start_proc(&mut self, pure_: bool, ret: Option<Ret>) {
        let budget = ((self.cfg.max_statements as f64 * self.scale).round() as i64).max(2);
        let mut globals = self.globals.clone();
        for g in &mut globals {
            g.read = true;
        }
        self.p = Proc {
            scopes: vec![globals, Vec::new()],
            indent: 1,
            trips: 1,
            budget: self.rng.range(budget / 2 + 1, budget),
            pure_,
            callable: self.helpers.len(),
            ret,
            ..Proc::default()
        };
        self.p.extents.push(("3".into(), 3, 3));
        self.p.extents.push(("4".into(), 4, 4));
        let steps = self.globals.iter().find_map(|g| match g.kind {
            Kind::Int { lo, hi, .. } => Some((g.name.clone(), lo, hi)),
            _ => None,
        });
        if let Some(steps) = steps {
            self.p.extents.push(steps);
        }
        let sink_names = ["acc", "res", "keep", "trail", "mixv"];
        let sink = self.rng.pick(&sink_names).to_string();
        self.p.sink = sink.clone();
        let mut v = Var::new(
            sink.clone(),
            Kind::Real {
                float: false,
                bound: B,
                writable: true,
            },
        );
        v.read = true;
        self.p.scopes[1].push(v);
        self.emit(format!("double {sink} = 0.0;"));
    }

    fn add_param(&mut self, name: &str, kind: Kind) {
        self.p.scopes[1].push(Var::new(name, kind));
    }

    fn finish_proc(&mut self, signature: String) -> Vec<String> {
        let mut out = Vec::new();
        if self.f().comments && self.rng.chance(0.6) {
            let phrase = *self.rng.pick(PHRASES);
            out.push(format!(
                "/* {}: {phrase}. */",
                signature.split('(').next().unwrap_or("")
            ));
        }
        out.push(signature);
        out.push("{".into());
        for d in &self.p.top_decls {
            out.push(format!("    {d}"));
        }
        out.append(&mut self.p.lines);
        out.push("}".into());
        out
    }

    // -- helpers -----------------------------------------------------------

    fn helper(&mut self, kind: usize) -> Vec<String> {
        let base = self.rng.pick(HELPER_NAMES).to_string();
        let name = format!("{base}_{}", self.helpers.len() + 1);
        let n = self.n;
        let len = self.rng.range(2, n.max(2) as i64) as usize;
        let len = len.min(n);
        let floats = self.f().floats;
        let (params, ret): (Vec<(String, PKind)>, Ret) = match kind {
            0 => (
                vec![
                    ("u".into(), PKind::Real { float: false }),
                    (
                        "v".into(),
                        PKind::Real {
                            float: floats && self.rng.chance(0.3),
                        },
                    ),
                ],
                Ret::Real { float: false },
            ),
            1 if self.f().pointer_calls => (
                vec![
                    ("p".into(), PKind::SliceIn { len }),
                    (
                        "m".into(),
                        PKind::Int {
                            lo: 1,
                            hi: len as i64,
                        },
                    ),
                ],
                Ret::Real { float: false },
            ),
            2 if self.f().pointer_calls => (
                vec![
                    ("v".into(), PKind::SliceOut { len }),
                    (
                        "m".into(),
                        PKind::Int {
                            lo: 1,
                            hi: len as i64,
                        },
                    ),
                    ("s".into(), PKind::Real { float: false }),
                ],
                Ret::Void,
            ),
            3 if self.f().pointer_calls => (
                vec![
                    ("u".into(), PKind::Real { float: false }),
                    ("out".into(), PKind::Out),
                ],
                Ret::Void,
            ),
            4 if floats => (
                vec![
                    ("u".into(), PKind::Real { float: true }),
                    ("k".into(), PKind::Int { lo: 0, hi: 7 }),
                ],
                Ret::Real { float: true },
            ),
            // An int result computed from reals is not smooth.
            5 if self.f().discontinuous => (
                vec![
                    ("k".into(), PKind::Int { lo: 0, hi: 9 }),
                    ("u".into(), PKind::Real { float: false }),
                ],
                Ret::Int {
                    lo: 0,
                    hi: self.rng.range(2, 6),
                },
            ),
            6 if self.f().pointer_calls => (
                vec![
                    ("p".into(), PKind::SliceIn { len }),
                    ("q".into(), PKind::SliceOut { len }),
                ],
                Ret::Void,
            ),
            7 => return self.recursive_helper(name),
            8 if self.strukt.is_some() => (
                vec![
                    ("c".into(), PKind::StructVal),
                    ("w".into(), PKind::Real { float: false }),
                ],
                Ret::Real { float: false },
            ),
            9 if self.strukt.is_some() => (
                vec![
                    ("c".into(), PKind::StructPtr),
                    ("h".into(), PKind::Real { float: false }),
                ],
                Ret::Void,
            ),
            _ => (
                vec![("u".into(), PKind::Real { float: false })],
                Ret::Real { float: false },
            ),
        };
        let pure_ = ret != Ret::Void;
        self.start_proc(pure_, Some(ret.clone()));
        let mut sig_params = Vec::new();
        for (pname, pk) in &params {
            let sname = self
                .strukt
                .as_ref()
                .map(|s| s.name.clone())
                .unwrap_or_default();
            let (decl, kind) = match pk {
                PKind::Real { float } => (
                    format!("{} {pname}", if *float { "float" } else { "double" }),
                    Kind::Real {
                        float: *float,
                        bound: B,
                        writable: true,
                    },
                ),
                PKind::Int { lo, hi } => {
                    self.p.extents.push((pname.clone(), *lo, *hi));
                    (
                        format!("int {pname}"),
                        Kind::Int {
                            lo: *lo,
                            hi: *hi,
                            writable: false,
                        },
                    )
                }
                PKind::SliceIn { len } => (
                    format!("const double *{pname}"),
                    Kind::RealArr {
                        float: false,
                        len: *len,
                        bound: B,
                        writable: false,
                    },
                ),
                PKind::SliceOut { len } => (
                    format!("double *{pname}"),
                    Kind::RealArr {
                        float: false,
                        len: *len,
                        bound: B,
                        writable: true,
                    },
                ),
                PKind::Out => (format!("double *{pname}"), Kind::Out),
                PKind::StructVal => (format!("{sname} {pname}"), Kind::Struct { pointer: false }),
                PKind::StructPtr => (format!("{sname} *{pname}"), Kind::Struct { pointer: true }),
            };
            sig_params.push(decl);
            self.add_param(pname, kind);
        }
        let ret_text = match ret {
            Ret::Void => "void",
            Ret::Real { float: true } => "float",
            Ret::Real { float: false } => "double",
            Ret::Int { .. } => "int",
        };
        let stmts = self.p.budget as usize;
        self.block(stmts.max(1));
        self.sink_scope_top();
        self.final_fold(&ret);
        let cost = self.p.cost.max(1) + 4;
        let sig = format!("{ret_text} {name}({})", sig_params.join(", "));
        let text = self.finish_proc(sig);
        self.helpers.push(Helper {
            name,
            params,
            ret,
            cost,
            called: false,
        });
        text
    }

    /// Folds the sink into the procedure's result.
    fn final_fold(&mut self, ret: &Ret) {
        let sink = self.p.sink.clone();
        match ret {
            Ret::Real { float } => {
                let (e, b) = self.real_expr(2);
                let text = format!("({e} + 0.25 * {sink})");
                let s = self.squash(text, b + B * 0.25, B);
                let cast = if *float && self.f().casts {
                    "(float) "
                } else {
                    ""
                };
                let s = if cast.is_empty() {
                    strip(&s).to_string()
                } else {
                    format!("{cast}{}", operand(&s))
                };
                self.emit(format!("return {s};"));
            }
            Ret::Int { lo, hi } => {
                let e = self.int_expr(2);
                // The sink must be read; without real comparisons it is
                // read through a product by zero.
                let bump = if self.f().discontinuous {
                    format!("({sink} > 0.0 ? 1 : 0)")
                } else {
                    format!("(int) (0.0 * {sink})")
                };
                let e = IE {
                    s: format!("({} + {bump})", e.s),
                    lo: e.lo,
                    hi: e.hi + 1,
                };
                let s = self.fit(&e, *lo, *hi);
                self.emit(format!("return {};", strip(&s)));
            }
            Ret::Void => {
                // Write the sink into the first writable output.
                let at = self.find(|v| {
                    matches!(
                        v.kind,
                        Kind::Out
                            | Kind::RealArr { writable: true, .. }
                            | Kind::Struct { pointer: true }
                    ) && !v.global
                });
                if let Some(&at) = at.first() {
                    let v = self.var(at).clone();
                    let place = match v.kind {
                        Kind::Out => format!("*{}", v.name),
                        Kind::RealArr { .. } => format!("{}[0]", v.name),
                        _ => {
                            let field = self
                                .strukt
                                .as_ref()
                                .map(|s| s.reals[0].0.clone())
                                .unwrap_or_default();
                            format!("{}->{field}", v.name)
                        }
                    };
                    self.emit(format!("{place} = 0.5 * ({place} + tanh({sink}));"));
                }
            }
        }
    }

    fn recursive_helper(&mut self, name: String) -> Vec<String> {
        let depth_max = self.rng.range(2, 5);
        let params = vec![
            ("u".to_string(), PKind::Real { float: false }),
            (
                "depth".to_string(),
                PKind::Int {
                    lo: 0,
                    hi: depth_max,
                },
            ),
        ];
        self.start_proc(true, Some(Ret::Real { float: false }));
        self.add_param(
            "u",
            Kind::Real {
                float: false,
                bound: B,
                writable: true,
            },
        );
        self.add_param(
            "depth",
            Kind::Int {
                lo: 0,
                hi: depth_max,
                writable: false,
            },
        );
        // Mark the parameters as read: the base case and the call read them.
        for v in &mut self.p.scopes[1] {
            v.read = true;
        }
        self.emit("/* base case: the depth is bounded by the caller */");
        self.emit("if (depth <= 0) {");
        self.p.indent += 1;
        let (e, b) = self.real_expr(2);
        let s = self.squash(format!("(u + {e})"), B + b, B);
        self.emit(format!("return {};", strip(&s)));
        self.p.indent -= 1;
        self.emit("}");
        let budget = (self.p.budget / 2).max(1) as usize;
        self.block(budget.min(3));
        self.sink_scope_top();
        let (e, b) = self.real_expr(2);
        let arg = self.squash(format!("(0.8 * u + {e})"), 0.8 * B + b, B);
        let (e2, b2) = self.real_expr(1);
        let tail = self.squash(e2, b2, 1.0);
        let sink = self.p.sink.clone();
        let two = self.rng.chance(0.3);
        let body = if two {
            format!(
                "0.25 * ({name}({}, depth - 1) + {name}(-0.5 * u, depth - 1)) + 0.5 * {tail} + 0.1 * {sink}",
                strip(&arg)
            )
        } else {
            format!(
                "0.5 * {name}({}, depth - 1) + 0.5 * {tail} + 0.1 * {sink}",
                strip(&arg)
            )
        };
        let s = self.squash(format!("({body})"), 2.0 * B, B);
        self.emit(format!("return {};", strip(&s)));
        let calls: u64 = if two {
            1 << (depth_max + 1)
        } else {
            depth_max as u64 + 1
        };
        let cost = (self.p.cost.max(1) + 4) * calls;
        let text = self.finish_proc(format!("double {name}(double u, int depth)"));
        self.helpers.push(Helper {
            name,
            params,
            ret: Ret::Real { float: false },
            cost,
            called: false,
        });
        text
    }

    fn head(&mut self) -> Vec<String> {
        self.start_proc(false, None);
        let n = self.n;
        self.p.n_text = Some("n".into());
        self.p.extents.push(("n".into(), n as i64, n as i64));
        self.add_param(
            "n",
            Kind::Int {
                lo: n as i64,
                hi: n as i64,
                writable: false,
            },
        );
        self.add_param(
            "x",
            Kind::RealArr {
                float: false,
                len: n,
                bound: 1.0,
                writable: false,
            },
        );
        self.add_param(
            "y",
            Kind::RealArr {
                float: false,
                len: n,
                bound: B,
                writable: true,
            },
        );
        self.add_param(
            "a",
            Kind::Real {
                float: false,
                bound: B,
                writable: true,
            },
        );
        if let Some(g) = self
            .globals
            .iter()
            .find(|g| matches!(g.kind, Kind::Real { writable: true, .. }))
        {
            let name = g.name.clone();
            self.emit(format!(
                "{name} = 0.5 * a; /* the head owns the global state */"
            ));
        }
        if self.strukt.is_some() {
            self.struct_decl();
        }
        let stmts = self.p.budget as usize + 4;
        self.block(stmts);
        // Call every helper nobody has called yet, so that none is dead.
        for h in 0..self.helpers.len() {
            if !self.helpers[h].called && self.can_call(h) {
                self.call_stmt(h, true);
            }
        }
        self.sink_scope_top();
        // Write every output.
        let var = self.loop_var();
        self.emit(format!("for (int {var} = 0; {var} < n; {var}++) {{"));
        self.p.indent += 1;
        self.p.scopes.push(vec![{
            let mut v = Var::new(
                var.clone(),
                Kind::Int {
                    lo: 0,
                    hi: n as i64 - 1,
                    writable: false,
                },
            );
            v.read = true;
            v
        }]);
        self.p.loops.push(LoopFrame {
            var: var.clone(),
            continue_ok: true,
        });
        let (e, b) = self.real_expr(2);
        let sink = self.p.sink.clone();
        let text = format!(
            "(0.5 * y[{var}] + 0.25 * x[{var}] + 0.25 * {sink} + 0.125 * {})",
            operand(&e)
        );
        let s = self.squash(text, 0.5 * B + 0.25 + 0.25 * B + 0.125 * b, B);
        self.emit(format!("y[{var}] = {};", strip(&s)));
        self.p.loops.pop();
        self.p.scopes.pop();
        self.p.indent -= 1;
        self.emit("}");
        self.finish_proc("void head(int n, const double *x, double *y, double a)".into())
    }

    // -- emission and scopes ----------------------------------------------

    fn emit(&mut self, line: impl AsRef<str>) {
        let line = line.as_ref();
        let pad = "    ".repeat(self.p.indent);
        self.p.lines.push(format!("{pad}{line}"));
    }

    fn maybe_comment(&mut self) {
        if self.f().comments && self.rng.chance(0.1) {
            let phrase = *self.rng.pick(PHRASES);
            if self.rng.chance(0.5) {
                self.emit(format!("// {phrase}"));
            } else {
                self.emit(format!("/* {phrase} */"));
            }
        }
    }

    /// Emits a statement, sometimes with a trailing comment.
    fn stmt_line(&mut self, text: String) {
        if self.f().comments && self.rng.chance(0.07) {
            let phrase = *self.rng.pick(PHRASES);
            self.emit(format!("{text} // {phrase}"));
        } else {
            self.emit(text);
        }
    }

    fn find(&self, pred: impl Fn(&Var) -> bool) -> Vec<At> {
        let mut out = Vec::new();
        for (s, scope) in self.p.scopes.iter().enumerate() {
            for (i, v) in scope.iter().enumerate() {
                if pred(v) && !self.shadowed(v, s) {
                    out.push((s, i));
                }
            }
        }
        out
    }

    /// A later scope declares the same name (a while counter is narrowed in
    /// its body).
    fn shadowed(&self, v: &Var, s: usize) -> bool {
        self.p.scopes[s + 1..]
            .iter()
            .any(|scope| scope.iter().any(|w| w.name == v.name))
    }

    /// One of `cands`, preferring locals and parameters over globals so that
    /// the program works on its data rather than on its constants.
    fn pick_var(&mut self, cands: &[At]) -> At {
        let locals: Vec<At> = cands.iter().copied().filter(|&at| at.0 > 0).collect();
        if !locals.is_empty() && self.rng.chance(0.85) {
            *self.rng.pick(&locals)
        } else {
            *self.rng.pick(cands)
        }
    }

    fn var(&self, at: At) -> &Var {
        &self.p.scopes[at.0][at.1]
    }

    fn mark(&mut self, at: At) -> Var {
        self.p.scopes[at.0][at.1].read = true;
        self.p.scopes[at.0][at.1].clone()
    }

    fn declare(&mut self, v: Var) {
        if let Some(scope) = self.p.scopes.last_mut() {
            scope.push(v);
        }
    }

    fn open(&mut self) {
        self.p.indent += 1;
        self.p.nest += 1;
        self.p.scopes.push(Vec::new());
    }

    fn close(&mut self) {
        self.sink_scope_top();
        self.p.scopes.pop();
        self.p.indent -= 1;
        self.p.nest -= 1;
    }

    /// Reads every unread variable of the innermost scope into the sink.
    fn sink_scope_top(&mut self) {
        let sink = self.p.sink.clone();
        let unread: Vec<Var> = self
            .p
            .scopes
            .last()
            .map(|s| s.iter().filter(|v| !v.read).cloned().collect())
            .unwrap_or_default();
        for v in unread {
            let field0 = self
                .strukt
                .as_ref()
                .map(|s| s.reals[0].0.clone())
                .unwrap_or_default();
            let r = match v.kind {
                Kind::Real { .. } => v.name.clone(),
                Kind::Int { .. } => format!("0.25 * {}", v.name),
                Kind::RealArr { .. } => format!("{}[0]", v.name),
                Kind::IntArr { .. } => format!("0.25 * {}[0]", v.name),
                Kind::Out => format!("*{}", v.name),
                Kind::Struct { pointer: false } => format!("{}.{field0}", v.name),
                Kind::Struct { pointer: true } => format!("{}->{field0}", v.name),
            };
            self.emit(format!("{sink} += 0.5 * (tanh({r}) - {sink});"));
        }
        if let Some(scope) = self.p.scopes.last_mut() {
            for v in scope {
                v.read = true;
            }
        }
    }

    fn loop_var(&mut self) -> String {
        for name in LOOP_VARS {
            let used = self.p.loops.iter().any(|l| l.var == *name)
                || self
                    .p
                    .scopes
                    .iter()
                    .any(|s| s.iter().any(|v| v.name == *name));
            if !used {
                return name.to_string();
            }
        }
        self.fresh("it")
    }

    // -- statements --------------------------------------------------------

    fn block(&mut self, max: usize) {
        let count = self.rng.range(1, max.max(1) as i64);
        for _ in 0..count {
            if self.p.budget <= 0 {
                break;
            }
            self.stmt();
        }
    }

    fn stmt(&mut self) {
        self.p.budget -= 1;
        self.maybe_comment();
        let f = self.f().clone();
        let in_loop = !self.p.loops.is_empty();
        let can_nest = self.p.nest < 4 && self.p.budget > 0;
        let loops_ok = can_nest && self.p.loops.len() < self.cfg.max_loop_depth;
        let has_acc = !self.p.accs.is_empty();
        let weights = [
            5,                                               // 0 real decl
            3,                                               // 1 int decl
            if can_nest { 2 } else { 0 },                    // 2 array decl
            6,                                               // 3 real assign
            4,                                               // 4 contractive compound
            2,                                               // 5 int update
            if can_nest { 4 } else { 0 },                    // 6 if chain
            if loops_ok { 6 } else { 0 },                    // 7 for
            if loops_ok && f.while_loops { 2 } else { 0 },   // 8 while
            if loops_ok && f.do_while { 1 } else { 0 },      // 9 do while
            if can_nest && f.switch { 2 } else { 0 },        // 10 switch
            4,                                               // 11 call
            if has_acc { 8 } else { 0 },                     // 12 accumulate
            if in_loop && f.break_continue { 1 } else { 0 }, // 13 break/continue
            if self.strukt.is_some() && !self.p.pure_ {
                1
            } else {
                0
            }, // 14 struct decl
            if self.p.ret.as_ref().is_some_and(|r| *r != Ret::Void)
                && f.early_return
                && self.p.nest > 0
            {
                1
            } else {
                0
            }, // 15 early return
        ];
        match self.rng.weighted(&weights) {
            0 => self.real_decl(),
            1 => self.int_decl(),
            2 => self.array_decl(),
            3 => self.real_assign(),
            4 => self.compound(),
            5 => self.int_update(),
            6 => self.if_chain(),
            7 => self.for_loop(),
            8 => self.while_loop(false),
            9 => self.while_loop(true),
            10 => self.switch(),
            11 => self.call_any(),
            12 => self.accumulate(),
            13 => self.exit_stmt(),
            14 => self.struct_decl(),
            _ => self.early_return(),
        }
    }

    fn real_decl(&mut self) {
        let float = self.f().floats && self.rng.chance(0.25);
        let prefix = if float {
            "f"
        } else {
            *self.rng.pick(&["t", "w", "r", "z", "s"])
        };
        let name = self.fresh(prefix);
        let (e, b) = self.real_expr(self.cfg.max_expr_depth);
        let s = self.squash(e, b, B);
        let s = if float && self.f().casts && self.rng.chance(0.5) {
            format!("(float) {}", operand(&s))
        } else {
            strip(&s).to_string()
        };
        let ty = if float { "float" } else { "double" };
        self.stmt_line(format!("{ty} {name} = {s};"));
        self.declare(Var::new(
            name,
            Kind::Real {
                float,
                bound: B,
                writable: true,
            },
        ));
    }

    fn int_decl(&mut self) {
        let prefix = *self.rng.pick(&["q", "m", "c", "d"]);
        let name = self.fresh(prefix);
        let e = self.int_expr(2);
        let lo = e.lo.min(0);
        let hi = e.hi.max(0);
        self.stmt_line(format!("int {name} = {};", strip(&e.s)));
        self.declare(Var::new(
            name,
            Kind::Int {
                lo,
                hi,
                writable: true,
            },
        ));
    }

    fn array_decl(&mut self) {
        let int_array = self.rng.chance(0.25);
        let len = if self.rng.chance(0.5) {
            self.n
        } else {
            self.rng.range(2, 5) as usize
        };
        let float = !int_array && self.f().floats && self.rng.chance(0.2);
        let name = self.fresh(if int_array { "idx" } else { "buf" });
        let var = self.loop_var();
        self.p.cost += self.p.trips * len as u64;
        if int_array {
            let modulus = if self.rng.chance(0.6) { self.n } else { len } as i64;
            let mul = self.rng.range(1, 5);
            let add = self.rng.range(0, 3);
            self.emit(format!("int {name}[{len}];"));
            self.emit(format!("for (int {var} = 0; {var} < {len}; {var}++) {{"));
            self.emit(format!(
                "    {name}[{var}] = ({var} * {mul} + {add}) % {modulus};"
            ));
            self.emit("}");
            self.declare(Var::new(
                name,
                Kind::IntArr {
                    len,
                    lo: 0,
                    hi: modulus - 1,
                },
            ));
            return;
        }
        let ty = if float { "float" } else { "double" };
        if len <= 4 && self.rng.chance(0.4) {
            let mut items = Vec::new();
            self.p.no_calls += 1;
            for _ in 0..len {
                let (e, b) = self.real_expr(1);
                items.push(strip(&self.squash(e, b, B)).to_string());
            }
            self.p.no_calls -= 1;
            self.stmt_line(format!("{ty} {name}[{len}] = {{{}}};", items.join(", ")));
        } else {
            self.emit(format!("{ty} {name}[{len}];"));
            self.emit(format!("for (int {var} = 0; {var} < {len}; {var}++) {{"));
            self.p.indent += 1;
            let mut v = Var::new(
                var.clone(),
                Kind::Int {
                    lo: 0,
                    hi: len as i64 - 1,
                    writable: false,
                },
            );
            v.read = true;
            self.p.scopes.push(vec![v]);
            let (e, b) = self.real_expr(2);
            let s = self.squash(format!("({e} + 0.5 * {var})"), b + 0.5 * len as f64, B);
            self.emit(format!("{name}[{var}] = {};", strip(&s)));
            self.p.scopes.pop();
            self.p.indent -= 1;
            self.emit("}");
        }
        self.declare(Var::new(
            name,
            Kind::RealArr {
                float,
                len,
                bound: B,
                writable: true,
            },
        ));
    }

    fn struct_decl(&mut self) {
        let Some(def) = self.strukt.clone() else {
            return;
        };
        let name = self.fresh("cell");
        let mut items = Vec::new();
        let init_list = self.rng.chance(0.5);
        self.p.no_calls += u32::from(init_list);
        for _ in &def.reals {
            let (e, b) = self.real_expr(1);
            items.push(strip(&self.squash(e, b, B)).to_string());
        }
        self.p.no_calls -= u32::from(init_list);
        let tag = self.rng.range(0, 3);
        if init_list {
            items.push(tag.to_string());
            self.stmt_line(format!("{} {name} = {{{}}};", def.name, items.join(", ")));
        } else {
            self.emit(format!("{} {name};", def.name));
            for ((field, _), item) in def.reals.iter().zip(&items) {
                self.emit(format!("{name}.{field} = {item};"));
            }
            self.emit(format!("{name}.{} = {tag};", def.tag));
        }
        self.declare(Var::new(name, Kind::Struct { pointer: false }));
    }

    /// A writable real location: its text and whether it is a float.
    fn place(&mut self) -> Option<(String, bool)> {
        let pure_ = self.p.pure_;
        let cands = self.find(|v| {
            v.lock == Lock::Free
                && !(v.global && pure_)
                && matches!(
                    v.kind,
                    Kind::Real { writable: true, .. }
                        | Kind::RealArr { writable: true, .. }
                        | Kind::Out
                        | Kind::Struct { .. }
                )
        });
        if cands.is_empty() {
            return None;
        }
        let at = self.pick_var(&cands);
        let v = self.var(at).clone();
        Some(match v.kind {
            Kind::Real { float, .. } => (v.name, float),
            Kind::RealArr { float, len, .. } => {
                let i = self.index(len);
                (format!("{}[{i}]", v.name), float)
            }
            Kind::Out => (format!("*{}", v.name), false),
            Kind::Struct { pointer } => {
                let def = self.strukt.clone()?;
                let (field, float) = self.rng.pick(&def.reals).clone();
                let sep = if pointer { "->" } else { "." };
                (format!("{}{sep}{field}", v.name), float)
            }
            _ => return None,
        })
    }

    fn real_assign(&mut self) {
        let Some((place, _)) = self.place() else {
            return self.real_decl();
        };
        let (e, b) = self.real_expr(self.cfg.max_expr_depth);
        let s = self.squash(e, b, B);
        if s == place {
            // Never `v = v;`: halve instead.
            self.stmt_line(format!("{place} *= 0.5;"));
            return;
        }
        self.stmt_line(format!("{place} = {};", strip(&s)));
    }

    fn compound(&mut self) {
        let Some((place, _)) = self.place() else {
            return self.real_decl();
        };
        let text = match self.rng.below(6) {
            0 => {
                let (e, b) = self.real_expr(2);
                let c = *self.rng.pick(&["cos", "sin", "tanh", "erf"]);
                let _ = b;
                format!("{place} *= {c}({});", strip(&e))
            }
            1 => {
                let (e, _) = self.real_atom();
                format!("{place} /= (1.0 + {e} * {e});")
            }
            2 => format!(
                "{place} *= {};",
                self.rng.pick(&["0.5", "0.75", "0.9", "-0.5"])
            ),
            3 => format!("{place} /= {};", self.rng.pick(&["2.0", "1.5", "4.0"])),
            4 => {
                let (e, b) = self.real_expr(2);
                let u = self.squash(e, b, B);
                format!("{place} += 0.5 * ({} - {place});", u)
            }
            _ => {
                let (e, b) = self.real_expr(2);
                let u = self.squash(e, b, B);
                format!("{place} -= 0.25 * ({place} - {});", u)
            }
        };
        self.stmt_line(text);
    }

    fn int_update(&mut self) {
        let cands = self
            .find(|v| v.lock == Lock::Free && matches!(v.kind, Kind::Int { writable: true, .. }));
        if cands.is_empty() {
            return self.int_decl();
        }
        let at = *self.rng.pick(&cands);
        let v = self.var(at).clone();
        let Kind::Int { lo, hi, .. } = v.kind else {
            return;
        };
        let name = v.name;
        match self.rng.below(5) {
            0 if hi > lo => {
                let inc = *self.rng.pick(&["++", "+= 1"]);
                if inc == "++" {
                    self.emit(format!("if ({name} < {hi}) {{"));
                    self.emit(format!("    {name}++;"));
                } else {
                    self.emit(format!("if ({name} < {hi}) {{"));
                    self.emit(format!("    {name} += 1;"));
                }
                self.emit("}");
            }
            1 if hi > lo => {
                self.emit(format!("if ({name} > {lo}) {{"));
                self.emit(format!("    --{name};"));
                self.emit("}");
            }
            2 if lo <= 0 && hi >= 0 => {
                let op = *self.rng.pick(&["/= 2", "%= 3", "/= 3"]);
                self.stmt_line(format!("{name} {op};"));
            }
            _ => {
                let e = self.int_expr(2);
                let e = IE {
                    s: format!("({name} + {})", e.s),
                    lo: lo + e.lo,
                    hi: hi + e.hi,
                };
                let s = self.fit(&e, lo, hi);
                self.stmt_line(format!("{name} = {};", strip(&s)));
            }
        }
    }

    fn if_chain(&mut self) {
        let c = self.cond(2);
        self.emit(format!("if {} {{", paren_cond(&c)));
        self.sub_block();
        let arms = self.rng.below(3);
        for arm in 0..arms {
            if arm + 1 == arms && self.rng.chance(0.6) {
                self.emit("} else {");
            } else {
                let c = self.cond(2);
                self.emit(format!("}} else if {} {{", paren_cond(&c)));
            }
            self.sub_block();
        }
        self.emit("}");
    }

    fn sub_block(&mut self) {
        self.open();
        let max = (self.p.budget.max(1) as usize).min(3);
        self.p.budget += 1;
        self.block(max);
        self.close();
    }

    fn for_loop(&mut self) {
        // Choose the extent: a known bound, or an enclosing index.
        let ext = self.p.extents.clone();
        let (u, ulo, uhi) = self.rng.pick(&ext).clone();
        let _ = ulo;
        if uhi < 1 {
            return;
        }
        let var = self.loop_var();
        let top = self.rng.chance(0.3);
        let decl = if top {
            let d = format!("int {var};");
            if !self.p.top_decls.contains(&d) {
                self.p.top_decls.push(d);
            }
            String::new()
        } else {
            "int ".to_string()
        };
        let outer = self.find(|v| {
            v.lock == Lock::Free
                && matches!(v.kind, Kind::Int { writable: false, lo, .. } if lo >= 0)
        });
        let outer: Vec<At> = outer
            .into_iter()
            .filter(|&at| self.p.loops.iter().any(|l| l.var == self.var(at).name))
            .collect();
        let form = if !outer.is_empty() && self.rng.chance(0.3) {
            5 + self.rng.below(2)
        } else {
            self.rng.below(5)
        };
        let (header, lo, hi, trips) = match form {
            5 | 6 => {
                let at = *self.rng.pick(&outer);
                let o = self.mark(at);
                let Kind::Int {
                    lo: olo, hi: ohi, ..
                } = o.kind
                else {
                    return;
                };
                if form == 5 || olo > uhi - 1 {
                    (
                        format!("for ({decl}{var} = 0; {var} <= {}; {var}++)", o.name),
                        0,
                        ohi,
                        (ohi + 1) as u64,
                    )
                } else {
                    (
                        format!("for ({decl}{var} = {}; {var} < {u}; {var}++)", o.name),
                        olo,
                        uhi - 1,
                        (uhi - olo) as u64,
                    )
                }
            }
            1 => {
                let s = self.rng.range(2, 3);
                (
                    format!("for ({decl}{var} = 0; {var} < {u}; {var} += {s})"),
                    0,
                    uhi - 1,
                    ((uhi + s - 1) / s) as u64,
                )
            }
            2 => (
                format!("for ({decl}{var} = {u} - 1; {var} >= 0; {var}--)"),
                0,
                uhi - 1,
                uhi as u64,
            ),
            3 if uhi >= 2 => (
                format!("for ({decl}{var} = 1; {var} <= {u} - 1; ++{var})"),
                1,
                uhi - 1,
                (uhi - 1) as u64,
            ),
            4 => (
                format!("for ({decl}{var} = {u}; {var} > 0; {var} -= 2)"),
                1,
                uhi,
                ((uhi + 1) / 2) as u64,
            ),
            _ => (
                format!("for ({decl}{var} = 0; {var} < {u}; {var}++)"),
                0,
                uhi - 1,
                uhi as u64,
            ),
        };
        if self.p.cost + self.p.trips * trips * 4 > COST_LIMIT {
            return self.real_assign();
        }
        let accs = self.declare_accs();
        self.emit(format!("{header} {{"));
        self.open();
        let mut v = Var::new(
            var.clone(),
            Kind::Int {
                lo,
                hi,
                writable: false,
            },
        );
        v.read = true;
        self.declare(v);
        self.p.loops.push(LoopFrame {
            var: var.clone(),
            continue_ok: true,
        });
        self.loop_body(trips);
        self.p.loops.pop();
        self.close();
        self.emit("}");
        self.unlock(accs);
    }

    fn loop_body(&mut self, trips: u64) {
        let saved = self.p.trips;
        self.p.trips = saved.saturating_mul(trips.max(1));
        self.p.cost += self.p.trips;
        let max = (self.p.budget.max(1) as usize).min(4);
        self.p.budget += 1;
        self.block(max);
        self.p.trips = saved;
    }

    /// Declares accumulators and counters for the loop nest about to start.
    fn declare_accs(&mut self) -> Vec<String> {
        let mut names = Vec::new();
        if !self.rng.chance(0.45) {
            return names;
        }
        let count = self.rng.range(1, 2);
        for _ in 0..count {
            let base = self.p.trips;
            if self.rng.chance(0.3) {
                let name = self.fresh("cnt");
                self.emit(format!("int {name} = 0;"));
                let mut v = Var::new(
                    name.clone(),
                    Kind::Int {
                        lo: 0,
                        hi: 0,
                        writable: false,
                    },
                );
                v.lock = Lock::AccInt { base };
                self.declare(v);
                names.push(name);
            } else {
                let float = self.f().floats && self.rng.chance(0.2);
                let name = self.fresh(if float { "fsum" } else { "sum" });
                let ty = if float { "float" } else { "double" };
                self.emit(format!("{ty} {name} = 0.0;"));
                let mut v = Var::new(
                    name.clone(),
                    Kind::Real {
                        float,
                        bound: 0.0,
                        writable: false,
                    },
                );
                v.lock = Lock::AccReal { base };
                self.declare(v);
                names.push(name);
            }
        }
        self.p.accs.extend(names.iter().cloned());
        names
    }

    fn unlock(&mut self, names: Vec<String>) {
        for name in &names {
            self.p.accs.retain(|a| a != name);
            for scope in &mut self.p.scopes {
                for v in scope.iter_mut() {
                    if &v.name == name && v.lock != Lock::Free {
                        match v.lock {
                            Lock::AccReal { .. } => {
                                if let Kind::Real { bound, .. } = &mut v.kind {
                                    *bound = v.pending;
                                }
                            }
                            Lock::AccInt { .. } => {
                                if let Kind::Int { hi, .. } = &mut v.kind {
                                    *hi = v.pending.ceil() as i64;
                                }
                            }
                            Lock::Free => {}
                        }
                        v.lock = Lock::Free;
                    }
                }
            }
        }
    }

    fn accumulate(&mut self) {
        let accs = self.p.accs.clone();
        if accs.is_empty() {
            return self.real_assign();
        }
        let name = self.rng.pick(&accs).clone();
        let Some(at) = self
            .find(|v| v.name == name && v.lock != Lock::Free)
            .first()
            .copied()
        else {
            return;
        };
        let v = self.var(at).clone();
        let trips = self.p.trips;
        match v.lock {
            Lock::AccReal { base } => {
                let times = (trips / base.max(1)).max(1) as f64;
                let (e, b) = self.real_expr(2);
                let target = *self.rng.pick(&[1.0, 2.0]);
                let term = self.squash(e, b, target);
                let bound = b.min(target);
                let op = *self.rng.pick(&["+=", "+=", "-="]);
                self.stmt_line(format!("{name} {op} {};", strip(&term)));
                self.p.scopes[at.0][at.1].pending += times * bound;
            }
            Lock::AccInt { base } => {
                let times = (trips / base.max(1)).max(1) as f64;
                let (text, inc) = match self.rng.below(3) {
                    0 => (format!("{name}++;"), 1.0),
                    1 => (format!("++{name};"), 1.0),
                    _ => (format!("{name} += 2;"), 2.0),
                };
                self.stmt_line(text);
                self.p.scopes[at.0][at.1].pending += times * inc;
            }
            Lock::Free => {}
        }
    }

    fn while_loop(&mut self, do_while: bool) {
        let k = self.rng.range(2, 5);
        let step = if self.rng.chance(0.7) { 1 } else { 2 };
        let trips = ((k + step - 1) / step) as u64;
        if self.p.cost + self.p.trips * trips * 4 > COST_LIMIT {
            return self.real_assign();
        }
        let name = self.fresh("w");
        let accs = self.declare_accs();
        self.emit(format!("int {name} = 0;"));
        let extra = if !do_while && self.rng.chance(0.3) {
            let c = self.cond(1);
            format!(" && {}", paren_cond(&c))
        } else {
            String::new()
        };
        if do_while {
            self.emit("do {");
        } else {
            self.emit(format!("while ({name} < {k}{extra}) {{"));
        }
        self.open();
        let mut v = Var::new(
            name.clone(),
            Kind::Int {
                lo: 0,
                hi: k - 1,
                writable: false,
            },
        );
        v.read = true;
        self.declare(v);
        self.p.loops.push(LoopFrame {
            var: name.clone(),
            continue_ok: false,
        });
        self.loop_body(trips);
        self.p.loops.pop();
        if step == 1 {
            self.emit(format!("{name}++;"));
        } else {
            self.emit(format!("{name} += 2;"));
        }
        self.close();
        if do_while {
            self.emit(format!("}} while ({name} < {k});"));
        } else {
            self.emit("}");
        }
        self.unlock(accs);
        let mut v = Var::new(
            name,
            Kind::Int {
                lo: 0,
                hi: k + 1,
                writable: false,
            },
        );
        v.read = true;
        self.declare(v);
    }

    fn switch(&mut self) {
        let cases = self.rng.range(2, 4);
        self.p.no_calls += 1;
        let e = self.int_expr(2);
        self.p.no_calls -= 1;
        let s = self.fit(&e, 0, cases);
        self.emit(format!("switch ({}) {{", strip(&s)));
        for case in 0..cases {
            self.emit(format!("case {case}: {{"));
            self.open();
            let max = (self.p.budget.max(1) as usize).min(2);
            self.p.budget += 1;
            self.block(max);
            let fall = self.rng.chance(0.4);
            // Sink before `break`, or the sink would be dead code.
            self.sink_scope_top();
            if !fall {
                self.emit("break;");
            }
            self.close();
            self.emit("}");
            if fall {
                self.emit("    /* fall through */");
            }
        }
        self.emit("default: {");
        self.open();
        self.p.budget += 1;
        self.block(1);
        self.sink_scope_top();
        self.emit("break;");
        self.close();
        self.emit("}");
        self.emit("}");
    }

    fn exit_stmt(&mut self) {
        let Some(frame) = self.p.loops.last().cloned() else {
            return;
        };
        let word = if frame.continue_ok && self.rng.chance(0.5) {
            "continue"
        } else {
            "break"
        };
        let c = self.cond(1);
        self.emit(format!("if {} {{", paren_cond(&c)));
        self.emit(format!("    {word};"));
        self.emit("}");
    }

    fn early_return(&mut self) {
        let Some(ret) = self.p.ret.clone() else {
            return;
        };
        let c = self.cond(1);
        self.emit(format!("if {} {{", paren_cond(&c)));
        self.p.indent += 1;
        match ret {
            Ret::Real { .. } => {
                let (e, b) = self.real_expr(2);
                let s = self.squash(e, b, B);
                self.emit(format!("return {};", strip(&s)));
            }
            Ret::Int { lo, hi } => {
                let e = self.int_expr(1);
                let s = self.fit(&e, lo, hi);
                self.emit(format!("return {};", strip(&s)));
            }
            Ret::Void => self.emit("return;"),
        }
        self.p.indent -= 1;
        self.emit("}");
    }

    // -- calls -------------------------------------------------------------

    fn can_call(&self, h: usize) -> bool {
        let helper = &self.helpers[h];
        if self.p.pure_ && !helper.pure_() {
            return false;
        }
        if self.p.cost + self.p.trips.saturating_mul(helper.cost) > COST_LIMIT {
            return false;
        }
        helper.params.iter().all(|(_, pk)| match pk {
            PKind::Real { .. } | PKind::Int { .. } => true,
            PKind::SliceIn { len } => !self
                .find(|v| {
                    v.lock == Lock::Free
                        && matches!(v.kind, Kind::RealArr { float: false, len: l, .. } if l >= *len)
                })
                .is_empty(),
            PKind::SliceOut { len } => !self
                .find(|v| {
                    v.lock == Lock::Free
                        && matches!(v.kind, Kind::RealArr { float: false, writable: true, len: l, .. } if l >= *len)
                })
                .is_empty(),
            PKind::Out => !self.out_places().is_empty(),
            PKind::StructVal => !self.find(|v| matches!(v.kind, Kind::Struct { .. })).is_empty(),
            PKind::StructPtr => !self.find(|v| matches!(v.kind, Kind::Struct { .. })).is_empty(),
        })
    }

    fn out_places(&self) -> Vec<At> {
        let pure_ = self.p.pure_;
        self.find(|v| {
            v.lock == Lock::Free
                && !(v.global && pure_)
                && matches!(
                    v.kind,
                    Kind::Real {
                        float: false,
                        writable: true,
                        ..
                    } | Kind::RealArr {
                        float: false,
                        writable: true,
                        ..
                    } | Kind::Out
                )
        })
    }

    fn args(&mut self, h: usize) -> String {
        let params = self.helpers[h].params.clone();
        let mut args = Vec::new();
        for (_, pk) in params {
            let arg = match pk {
                PKind::Real { float } => {
                    let (e, b) = self.real_expr(2);
                    let s = self.squash(e, b, B);
                    if float && self.f().casts && self.rng.chance(0.5) {
                        format!("(float) {}", operand(&s))
                    } else {
                        strip(&s).to_string()
                    }
                }
                PKind::Int { lo, hi } => {
                    if self.rng.chance(0.4) {
                        self.rng.range(lo, hi).to_string()
                    } else {
                        let e = self.int_expr(1);
                        strip(&self.fit(&e, lo, hi)).to_string()
                    }
                }
                PKind::SliceIn { len } | PKind::SliceOut { len } => {
                    let out = matches!(pk, PKind::SliceOut { .. });
                    let cands = self.find(|v| {
                        v.lock == Lock::Free
                            && matches!(v.kind, Kind::RealArr { float: false, len: l, writable, .. }
                                if l >= len && (writable || !out))
                    });
                    let at = *self.rng.pick(&cands);
                    let v = self.mark(at);
                    let Kind::RealArr { len: l, .. } = v.kind else {
                        continue;
                    };
                    if l == len || self.rng.chance(0.3) {
                        if self.rng.chance(0.3) {
                            format!("&{}[0]", v.name)
                        } else {
                            v.name
                        }
                    } else {
                        let i = self.index(l - len + 1);
                        format!("&{}[{i}]", v.name)
                    }
                }
                PKind::Out => {
                    let cands = self.out_places();
                    let at = *self.rng.pick(&cands);
                    let v = self.mark(at);
                    match v.kind {
                        Kind::Out => v.name,
                        Kind::RealArr { len, .. } => {
                            let i = self.index(len);
                            format!("&{}[{i}]", v.name)
                        }
                        _ => format!("&{}", v.name),
                    }
                }
                PKind::StructVal | PKind::StructPtr => {
                    let cands = self.find(|v| matches!(v.kind, Kind::Struct { .. }));
                    let at = *self.rng.pick(&cands);
                    let v = self.mark(at);
                    let Kind::Struct { pointer } = v.kind else {
                        continue;
                    };
                    match (matches!(pk, PKind::StructPtr), pointer) {
                        (true, true) | (false, false) => v.name,
                        (true, false) => format!("&{}", v.name),
                        (false, true) => format!("*{}", v.name),
                    }
                }
            };
            args.push(arg);
        }
        args.join(", ")
    }

    /// A call statement to helper `h`; `forced` when it is the call that
    /// keeps the helper alive.
    fn call_stmt(&mut self, h: usize, forced: bool) {
        let _ = forced;
        self.p.cost += self.p.trips.saturating_mul(self.helpers[h].cost);
        self.helpers[h].called = true;
        let name = self.helpers[h].name.clone();
        let args = self.args(h);
        let call = format!("{name}({args})");
        let sink = self.p.sink.clone();
        match self.helpers[h].ret.clone() {
            Ret::Void => self.stmt_line(format!("{call};")),
            Ret::Real { float } => {
                if self.rng.chance(0.5) {
                    let v = self.fresh(if float { "f" } else { "r" });
                    let ty = if float { "float" } else { "double" };
                    self.stmt_line(format!("{ty} {v} = {call};"));
                    self.declare(Var::new(
                        v,
                        Kind::Real {
                            float,
                            bound: B,
                            writable: true,
                        },
                    ));
                } else {
                    self.stmt_line(format!("{sink} += 0.5 * (tanh({call}) - {sink});"));
                }
            }
            Ret::Int { lo, hi } => {
                let v = self.fresh("q");
                self.stmt_line(format!("int {v} = {call};"));
                self.declare(Var::new(
                    v,
                    Kind::Int {
                        lo: lo.min(0),
                        hi: hi.max(0),
                        writable: true,
                    },
                ));
            }
        }
    }

    fn call_any(&mut self) {
        let cands: Vec<usize> = (0..self.p.callable).filter(|&h| self.can_call(h)).collect();
        if cands.is_empty() {
            return self.real_assign();
        }
        // Prefer helpers not called yet, so that the call graph is connected.
        let fresh: Vec<usize> = cands
            .iter()
            .copied()
            .filter(|&h| !self.helpers[h].called)
            .collect();
        let h = if !fresh.is_empty() && self.rng.chance(0.7) {
            *self.rng.pick(&fresh)
        } else {
            *self.rng.pick(&cands)
        };
        self.call_stmt(h, false);
    }

    /// A call of a pure helper inside an expression.
    fn call_expr(&mut self, want_int: bool) -> Option<(String, f64, i64, i64)> {
        if self.p.no_calls > 0 && !self.f().conditional_calls {
            return None;
        }
        let cands: Vec<usize> = (0..self.p.callable)
            .filter(|&h| {
                let helper = &self.helpers[h];
                helper.pure_()
                    && matches!(helper.ret, Ret::Int { .. }) == want_int
                    && self.can_call(h)
            })
            .collect();
        if cands.is_empty() {
            return None;
        }
        let h = *self.rng.pick(&cands);
        self.p.cost += self.p.trips.saturating_mul(self.helpers[h].cost);
        self.helpers[h].called = true;
        let name = self.helpers[h].name.clone();
        let args = self.args(h);
        let (lo, hi) = match self.helpers[h].ret {
            Ret::Int { lo, hi } => (lo, hi),
            _ => (0, 0),
        };
        Some((format!("{name}({args})"), B, lo, hi))
    }

    // -- expressions -------------------------------------------------------

    /// Brings `e` (of bound `b`) within `target`.
    fn squash(&mut self, e: String, b: f64, target: f64) -> String {
        if b <= target {
            return e;
        }
        let inner = strip(&e).to_string();
        let short = !inner.contains(' ') || inner.len() < 16;
        let disc = self.f().discontinuous;
        let mut options: Vec<(u32, String)> = vec![
            (4, format!("tanh({inner})")),
            (2, format!("sin({inner})")),
            (1, format!("erf({inner})")),
        ];
        if target >= 2.0 {
            options.push((2, format!("2.0 * tanh(0.5 * {})", operand(&e))));
            options.push((1, format!("atan({inner})")));
            if disc {
                options.push((1, format!("fmin(fmax({inner}, -2.0), 2.0)")));
            }
        }
        if short {
            options.push((1, format!("({e} / (1.0 + fabs({e})))")));
            options.push((1, format!("({e} / sqrt(1.0 + {e} * {e}))")));
        }
        let weights: Vec<u32> = options.iter().map(|o| o.0).collect();
        let i = self.rng.weighted(&weights);
        options.swap_remove(i).1
    }

    fn constant(&mut self) -> (String, f64) {
        let v = *self
            .rng
            .pick(&[0.5, 0.25, 1.5, 2.0, 0.75, 0.125, 3.0, 1.0, 0.1, 0.3, 0.05]);
        (fmt_real(v), v)
    }

    fn real_atom(&mut self) -> (String, f64) {
        let cands = self.find(|v| {
            v.lock == Lock::Free
                && matches!(
                    v.kind,
                    Kind::Real { .. }
                        | Kind::RealArr { .. }
                        | Kind::Out
                        | Kind::Struct { .. }
                        | Kind::Int { .. }
                )
        });
        let w = [2, if cands.is_empty() { 0 } else { 12 }, 1];
        match self.rng.weighted(&w) {
            1 => {
                let at = self.pick_var(&cands);
                let v = self.mark(at);
                match v.kind {
                    Kind::Real { bound, .. } => (v.name, bound),
                    Kind::Int { lo, hi, .. } => {
                        let m = lo.abs().max(hi.abs()) as f64;
                        if self.f().casts && self.rng.chance(0.5) {
                            (format!("(double) {}", v.name), m)
                        } else {
                            (format!("(0.25 * {})", v.name), 0.25 * m)
                        }
                    }
                    Kind::RealArr { len, bound, .. } => {
                        let i = self.index(len);
                        (format!("{}[{i}]", v.name), bound)
                    }
                    Kind::Out => (format!("(*{})", v.name), B),
                    Kind::Struct { pointer } => {
                        let Some(def) = self.strukt.clone() else {
                            return self.constant();
                        };
                        let (field, _) = self.rng.pick(&def.reals).clone();
                        let sep = if pointer { "->" } else { "." };
                        (format!("{}{sep}{field}", v.name), B)
                    }
                    Kind::IntArr { .. } => self.constant(),
                }
            }
            2 => match self.call_expr(false) {
                Some((s, b, _, _)) => (s, b),
                None => self.constant(),
            },
            _ => self.constant(),
        }
    }

    fn real_expr(&mut self, depth: u32) -> (String, f64) {
        if depth == 0 || self.rng.chance(0.25) {
            return self.real_atom();
        }
        let disc = self.f().discontinuous;
        let cast = if self.f().casts && self.f().floats {
            1
        } else {
            0
        };
        let (s, b) = match self
            .rng
            .weighted(&[10, 8, 4, 2, 12, if disc { 2 } else { 0 }, cast])
        {
            0 => {
                let (l, lb) = self.real_expr(depth - 1);
                let (r, rb) = self.real_expr(depth - 1);
                let op = *self.rng.pick(&["+", "-"]);
                (format!("({l} {op} {r})"), lb + rb)
            }
            1 => {
                let (l, lb) = self.real_expr(depth - 1);
                let (r, rb) = if self.rng.chance(0.4) {
                    self.constant()
                } else {
                    self.real_expr(depth - 1)
                };
                (format!("({l} * {r})"), lb * rb)
            }
            2 => {
                let (l, lb) = self.real_expr(depth - 1);
                let (d, dmin) = self.denominator();
                (format!("({l} / {d})"), lb / dmin)
            }
            3 => {
                let (l, lb) = self.real_expr(depth - 1);
                (format!("-{}", operand(&l)), lb)
            }
            4 => self.math(depth - 1),
            5 => {
                let c = self.cond(1);
                self.p.no_calls += 1;
                let (l, lb) = self.real_expr(depth - 1);
                let (r, rb) = self.real_expr(depth - 1);
                self.p.no_calls -= 1;
                (
                    format!("({} ? {} : {})", paren_cond(&c), strip(&l), strip(&r)),
                    lb.max(rb),
                )
            }
            _ => {
                let (l, lb) = self.real_expr(depth - 1);
                if self.f().casts && self.f().floats {
                    (format!("(double) (float) {}", operand(&l)), lb)
                } else {
                    (l, lb)
                }
            }
        };
        if b > CAP {
            let t = self.squash(s, b, B);
            (t, B)
        } else {
            (s, b)
        }
    }

    /// A denominator and its positive lower bound.
    fn denominator(&mut self) -> (String, f64) {
        match self.rng.below(5) {
            0 => {
                let (e, _) = self.real_atom();
                (format!("(1.0 + {e} * {e})"), 1.0)
            }
            1 => {
                let (e, _) = self.real_expr(1);
                (format!("(2.0 + sin({}))", strip(&e)), 1.0)
            }
            2 => {
                let (e, _) = self.real_expr(1);
                (
                    format!("(1.0 + exp({}))", strip(&self.squash(e, CAP * 10.0, 2.0))),
                    1.0,
                )
            }
            3 if self.f().discontinuous => {
                let (e, _) = self.real_expr(1);
                (format!("(1.0 + fabs({}))", strip(&e)), 1.0)
            }
            _ => {
                let c = *self.rng.pick(&[2.0, 3.0, 4.0, 1.5, 8.0]);
                (fmt_real(c), c)
            }
        }
    }

    fn math(&mut self, depth: u32) -> (String, f64) {
        let disc = self.f().discontinuous;
        let w = [
            3,                        // sin cos
            3,                        // tanh atan erf
            2,                        // sqrt(e*e + 1)
            2,                        // log(1 + e*e), log1p
            2,                        // exp(-e*e), exp(tanh e), expm1(tanh e)
            1,                        // pow
            1,                        // atan2
            1,                        // hypot(e, 1.0)
            1,                        // cbrt smooth
            1,                        // sinh/cosh of tanh
            if disc { 3 } else { 0 }, // fabs fmin fmax hypot cbrt
        ];
        match self.rng.weighted(&w) {
            0 => {
                let (e, _) = self.real_expr(depth);
                let f = *self.rng.pick(&["sin", "cos"]);
                (format!("{f}({})", strip(&e)), 1.0)
            }
            1 => {
                let (e, _) = self.real_expr(depth);
                let f = *self.rng.pick(&["tanh", "atan", "erf"]);
                (
                    format!("{f}({})", strip(&e)),
                    if f == "atan" { 1.571 } else { 1.0 },
                )
            }
            2 => {
                let (e, b) = self.real_atom();
                (format!("sqrt({e} * {e} + 1.0)"), (b * b + 1.0).sqrt())
            }
            3 => {
                let (e, b) = self.real_atom();
                if self.rng.chance(0.5) {
                    (format!("log(1.0 + {e} * {e})"), (1.0 + b * b).ln())
                } else {
                    (format!("log1p({e} * {e})"), (1.0 + b * b).ln())
                }
            }
            4 => match self.rng.below(3) {
                0 => {
                    let (e, _) = self.real_atom();
                    (format!("exp(-{e} * {e})"), 1.0)
                }
                1 => {
                    let (e, _) = self.real_expr(depth);
                    (format!("exp(tanh({}))", strip(&e)), std::f64::consts::E)
                }
                _ => {
                    let (e, _) = self.real_expr(depth);
                    (format!("expm1(tanh({}))", strip(&e)), 1.7183)
                }
            },
            5 => {
                let p = *self.rng.pick(&[0.5, 1.5, 2.0, 0.75]);
                if disc && self.rng.chance(0.5) {
                    let (e, b) = self.real_expr(depth);
                    (
                        format!("pow(fabs({}) + 1.0, {})", strip(&e), fmt_real(p)),
                        (b + 1.0).powf(p),
                    )
                } else {
                    let (e, b) = self.real_atom();
                    (
                        format!("pow({e} * {e} + 1.0, {})", fmt_real(p)),
                        (b * b + 1.0).powf(p),
                    )
                }
            }
            6 => {
                let (e1, _) = self.real_expr(depth);
                let (e2, _) = self.real_expr(depth);
                (
                    format!("atan2({}, 2.0 + cos({}))", strip(&e1), strip(&e2)),
                    1.571,
                )
            }
            7 => {
                let (e, b) = self.real_expr(depth);
                (format!("hypot({}, 1.0)", strip(&e)), (b * b + 1.0).sqrt())
            }
            8 => {
                let (e, _) = self.real_expr(depth);
                (format!("cbrt(2.0 + tanh({}))", strip(&e)), 1.443)
            }
            9 => {
                let (e, _) = self.real_expr(depth);
                let f = *self.rng.pick(&["sinh", "cosh"]);
                (format!("{f}(tanh({}))", strip(&e)), 1.544)
            }
            _ => {
                let (e1, b1) = self.real_expr(depth);
                match self.rng.below(5) {
                    0 => (format!("fabs({})", strip(&e1)), b1),
                    1 | 2 => {
                        let (e2, b2) = self.real_expr(depth);
                        let f = *self.rng.pick(&["fmin", "fmax"]);
                        (format!("{f}({}, {})", strip(&e1), strip(&e2)), b1.max(b2))
                    }
                    3 => {
                        let (e2, b2) = self.real_expr(depth);
                        (
                            format!("hypot({}, {})", strip(&e1), strip(&e2)),
                            (b1 * b1 + b2 * b2).sqrt(),
                        )
                    }
                    _ => (format!("cbrt({})", strip(&e1)), b1.cbrt()),
                }
            }
        }
    }

    fn int_atom(&mut self) -> IE {
        let cands = self.find(|v| {
            v.lock == Lock::Free
                && matches!(
                    v.kind,
                    Kind::Int { .. } | Kind::IntArr { .. } | Kind::Struct { .. }
                )
        });
        let disc_cast = self.f().discontinuous && self.f().casts;
        let w = [
            3,
            if cands.is_empty() { 0 } else { 10 },
            1,
            if disc_cast { 1 } else { 0 },
        ];
        match self.rng.weighted(&w) {
            1 => {
                let at = self.pick_var(&cands);
                let v = self.mark(at);
                match v.kind {
                    Kind::Int { lo, hi, .. } => IE { s: v.name, lo, hi },
                    Kind::IntArr { len, lo, hi } => {
                        let i = self.index(len);
                        IE {
                            s: format!("{}[{i}]", v.name),
                            lo,
                            hi,
                        }
                    }
                    Kind::Struct { pointer } => {
                        let tag = self
                            .strukt
                            .as_ref()
                            .map(|s| s.tag.clone())
                            .unwrap_or_default();
                        let sep = if pointer { "->" } else { "." };
                        // The tag field is kept in [0, 3] by every write.
                        IE {
                            s: format!("{}{sep}{tag}", v.name),
                            lo: 0,
                            hi: 3,
                        }
                    }
                    _ => self.int_const(),
                }
            }
            2 => match self.call_expr(true) {
                Some((s, _, lo, hi)) => IE { s, lo, hi },
                None => self.int_const(),
            },
            3 => {
                let (e, b) = self.real_expr(1);
                let s = if b > 50.0 { self.squash(e, b, B) } else { e };
                let m = b.min(B.max(b.min(50.0))).floor() as i64;
                IE {
                    s: format!("(int) {}", operand(&s)),
                    lo: -m,
                    hi: m,
                }
            }
            _ => self.int_const(),
        }
    }

    fn int_const(&mut self) -> IE {
        let v = self.rng.range(0, 7);
        IE {
            s: v.to_string(),
            lo: v,
            hi: v,
        }
    }

    fn int_expr(&mut self, depth: u32) -> IE {
        if depth == 0 || self.rng.chance(0.35) {
            return self.int_atom();
        }
        let e = match self.rng.below(6) {
            0 | 1 => {
                let l = self.int_expr(depth - 1);
                let r = self.int_expr(depth - 1);
                if self.rng.chance(0.5) {
                    IE {
                        s: format!("({} + {})", l.s, r.s),
                        lo: l.lo + r.lo,
                        hi: l.hi + r.hi,
                    }
                } else {
                    IE {
                        s: format!("({} - {})", l.s, r.s),
                        lo: l.lo - r.hi,
                        hi: l.hi - r.lo,
                    }
                }
            }
            2 => {
                let l = self.int_expr(depth - 1);
                let c = self.rng.range(2, 5);
                IE {
                    s: format!("({} * {c})", l.s),
                    lo: l.lo * c,
                    hi: l.hi * c,
                }
            }
            3 => {
                let l = self.int_expr(depth - 1);
                let c = self.rng.range(2, 4);
                IE {
                    s: format!("({} / {c})", l.s),
                    lo: l.lo / c,
                    hi: l.hi / c,
                }
            }
            4 => {
                let l = self.int_expr(depth - 1);
                let c = self.rng.range(2, 7);
                let (lo, hi) = mod_interval(l.lo, l.hi, c);
                IE {
                    s: format!("({} % {c})", l.s),
                    lo,
                    hi,
                }
            }
            _ => {
                let c = self.cond(1);
                self.p.no_calls += 1;
                let l = self.int_expr(depth - 1);
                let r = self.int_expr(depth - 1);
                self.p.no_calls -= 1;
                IE {
                    s: format!("({} ? {} : {})", paren_cond(&c), strip(&l.s), strip(&r.s)),
                    lo: l.lo.min(r.lo),
                    hi: l.hi.max(r.hi),
                }
            }
        };
        if e.lo < -INT_CAP || e.hi > INT_CAP {
            let (lo, hi) = mod_interval(e.lo, e.hi, 97);
            IE {
                s: format!("({} % 97)", e.s),
                lo,
                hi,
            }
        } else {
            e
        }
    }

    /// `e` brought into `[lo, hi]`.
    fn fit(&mut self, e: &IE, lo: i64, hi: i64) -> String {
        if e.lo >= lo && e.hi <= hi {
            return e.s.clone();
        }
        let w = hi - lo + 1;
        let wrapped = if e.lo >= 0 {
            format!("({} % {w})", e.s)
        } else {
            format!("(({} % {w} + {w}) % {w})", e.s)
        };
        match lo.cmp(&0) {
            std::cmp::Ordering::Equal => wrapped,
            std::cmp::Ordering::Greater => format!("({wrapped} + {lo})"),
            std::cmp::Ordering::Less => format!("({wrapped} - {})", -lo),
        }
    }

    /// An index expression valid for an array of `len` elements.
    fn index(&mut self, len: usize) -> String {
        let len_i = len as i64;
        let fits = self.find(|v| {
            v.lock == Lock::Free
                && matches!(v.kind, Kind::Int { lo, hi, .. } if lo >= 0 && hi < len_i)
        });
        let nonneg = self.find(|v| {
            v.lock == Lock::Free
                && matches!(v.kind, Kind::Int { lo, hi, .. } if lo >= 0 && hi < INT_CAP)
        });
        let arrays = self.find(|v| {
            v.lock == Lock::Free
                && matches!(v.kind, Kind::IntArr { lo, hi, .. } if lo >= 0 && hi < len_i)
        });
        let len_text = match &self.p.n_text {
            Some(n) if len == self.n => n.clone(),
            _ => len.to_string(),
        };
        let w = [
            if fits.is_empty() { 0 } else { 8 },
            if fits.is_empty() { 0 } else { 2 },
            if nonneg.is_empty() { 0 } else { 2 },
            2,
            1,
            if arrays.is_empty() { 0 } else { 2 },
        ];
        match self.rng.weighted(&w) {
            0 => {
                let at = self.pick_var(&fits);
                self.mark(at).name
            }
            1 => {
                let at = *self.rng.pick(&fits);
                let v = self.mark(at);
                format!("{len_text} - 1 - {}", v.name)
            }
            2 => {
                let at = *self.rng.pick(&nonneg);
                let v = self.mark(at);
                let c = self.rng.range(1, 3);
                format!("({} + {c}) % {len_text}", v.name)
            }
            3 => self.rng.range(0, len_i - 1).to_string(),
            5 => {
                let at = *self.rng.pick(&arrays);
                let v = self.mark(at);
                let Kind::IntArr { len: l, .. } = v.kind else {
                    return "0".into();
                };
                let i = self.index(l);
                format!("{}[{i}]", v.name)
            }
            _ => {
                let e = self.int_expr(1);
                strip(&self.fit(&e, 0, len_i - 1)).to_string()
            }
        }
    }

    fn cond(&mut self, depth: u32) -> String {
        self.p.no_calls += 1;
        let c = self.cond_inner(depth);
        self.p.no_calls -= 1;
        c
    }

    fn cond_inner(&mut self, depth: u32) -> String {
        let disc = self.f().discontinuous;
        match self.rng.weighted(&[
            5,
            if disc { 4 } else { 0 },
            2,
            if depth > 0 { 2 } else { 0 },
        ]) {
            1 => {
                let (l, _) = self.real_expr(1);
                let (r, _) = self.real_expr(1);
                if l == r {
                    return format!("({l} > 0.5)");
                }
                let op = *self.rng.pick(&["<", ">", "<=", ">="]);
                format!("({} {op} {})", l, r)
            }
            2 => {
                let e = self.int_expr(1);
                let c = self.rng.range(2, 3);
                format!("(({} % {c}) == 0)", e.s)
            }
            3 => {
                let l = self.cond(depth - 1);
                let r = self.cond(depth - 1);
                let op = *self.rng.pick(&["&&", "||"]);
                format!("({l} {op} {r})")
            }
            _ => {
                let l = self.int_expr(1);
                let r = self.int_expr(1);
                if l.s == r.s {
                    return format!("({} > 2)", l.s);
                }
                let op = *self.rng.pick(&["<", ">", "<=", ">=", "==", "!="]);
                format!("({} {op} {})", l.s, r.s)
            }
        }
    }
}

/// The interval of `e % c` for `e` in `[lo, hi]` and a positive constant `c`.
fn mod_interval(lo: i64, hi: i64, c: i64) -> (i64, i64) {
    if lo >= 0 {
        (0, hi.min(c - 1))
    } else if hi <= 0 {
        (lo.max(-(c - 1)), 0)
    } else {
        (-(c - 1), c - 1)
    }
}

/// A condition with exactly one pair of parentheses around it, for `if`.
fn paren_cond(c: &str) -> String {
    format!("({})", strip(c))
}
