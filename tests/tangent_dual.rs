//! The tangent mode on its fixture corpus (`tests/fixtures/tangent/`),
//! checked in the IL interpreter against dual numbers
//! (`aioli::check::tangent_interp::tangent_vs_dual`): for every fixture,
//! the tangent program is built through the library, then at two input
//! points (the pragma's domain, driver seeds 1 and 2), each with its own
//! random direction ẋ, the derivative procedure's dependents' derivatives
//! must equal the tangent parts of the original run with dual numbers, and
//! its primal results those of the original.
//!
//! A fixture the tool refuses must be listed in [`EXPECTED_REFUSALS`] with
//! the reason, and the test checks that it is refused with that message.

mod common;

use aioli::analysis::parse_head;
use aioli::check::domain::Domain;
use aioli::check::driver::compute_inputs;
use aioli::check::tangent_interp::{DualCheckError, DualComparison, tangent_vs_dual};
use aioli::front::{self, Loaded};
use aioli::transform::tangent::{TangentOptions, load_rules, tangent_program};
use common::{c_files, config, fixture_dir, front_options};
use std::fmt::Write;
use std::path::Path;
use std::time::Instant;

const KIND: &str = "tangent";

/// Input points: the driver's seeds (the same as `tests/tangent_corpus.rs`).
const SEEDS: [u64; 2] = [1, 2];

/// Largest relative error between the tangent code's derivative and the
/// dual numbers' for a double-precision fixture. Both compute the same
/// derivative with the same operations up to order and grouping, so they
/// agree to a few ulps; 1e-12 leaves room for cancellation in long sums.
const TOL_DOUBLE: f64 = 1e-12;

/// Fixtures computing in `float`: the interpreter rounds every `float`
/// result to single precision (as compiled C does), in the dual run (value
/// and tangent) and in the tangent code's float derivative variables, but
/// the two round at different places (the tangent code's derivative
/// expressions are grouped differently from the dual numbers' chain rule),
/// so they agree only to single precision: about 6e-8 per rounding,
/// accumulated over a few dozen operations.
const FLOAT_FIXTURES: &[&str] = &["casts_sizeof", "cpaper_fig3", "cpaper_test", "float_mixed"];
const TOL_FLOAT: f64 = 1e-5;

/// Fixtures the tangent mode refuses today: (fixture, a piece of the
/// message it must give, why).
const EXPECTED_REFUSALS: &[(&str, &str, &str)] = &[];

/// Benchmark kernels whose pragma sizes them for timing compiled code and
/// that would take seconds in the interpreter (which executes a few 10^5
/// statements a second with dual numbers): (fixture, domain replacing the
/// pragma's). bench_heat keeps its 40 steps on 400 cells instead of 4000
/// (the stencil is the same at every cell; 1.3 million statements a run at
/// full size). The other kernels run at their pragma's sizes.
const SMALLER_DOMAINS: &[(&str, &str)] =
    &[("bench_heat", "n=400 steps=40 kappa=[0.5,1.5] u[n]=[0,1]")];

fn stem(path: &Path) -> String {
    path.file_stem().unwrap().to_string_lossy().into_owned()
}

fn load(path: &Path) -> Result<Loaded, String> {
    let cfg = config(path);
    front::load(path, &front_options(&cfg.flags, &fixture_dir(KIND))).map_err(|(sources, d)| {
        format!(
            "front end rejects it: {}: {}",
            sources.location(d.span),
            d.message
        )
    })
}

/// One row of the failure table.
struct Row {
    fixture: String,
    seed: u64,
    dependent: String,
    element: String,
    dual: f64,
    tangent: f64,
    error: f64,
    what: &'static str,
}

enum Outcome {
    Checked(Vec<(u64, DualComparison)>),
    Refused(String),
}

fn run_fixture(path: &Path) -> Result<Outcome, String> {
    let name = stem(path);
    let cfg = config(path);
    let loaded = load(path)?;
    let program = &loaded.program;
    let head = parse_head(program, &cfg.head)?;
    let domain_text = SMALLER_DOMAINS
        .iter()
        .find(|(f, _)| *f == name)
        .map(|(_, d)| d.to_string())
        .unwrap_or(cfg.domain.clone());
    let domain = Domain::parse(&domain_text).map_err(|e| format!("domain: {e}"))?;
    let opts = TangentOptions::default();
    let rules = load_rules(&opts).map_err(|e| format!("rules: {e:?}"))?;
    let generated = aioli::transform::specialize::analyzed(
        program,
        std::slice::from_ref(&head),
        aioli::transform::specialize::Target::Tangent,
        |a| tangent_program(a, &rules, &opts),
    );
    let out = match generated {
        Ok(out) => out,
        Err(d) => {
            return Ok(Outcome::Refused(format!(
                "{}: {}",
                loaded.sources.location(d.span),
                d.message
            )));
        }
    };
    let proc_name = program.proc(head.proc).name.clone();
    let mut results = Vec::new();
    for seed in SEEDS {
        let inputs = compute_inputs(program, &proc_name, &domain, seed)
            .map_err(|e| format!("inputs (seed {seed}): {e}"))?;
        let cmp = tangent_vs_dual(program, &out, &head, &inputs, 1000 + seed)
            .map_err(|e| format!("seed {seed}: {e}"))?;
        results.push((seed, cmp));
    }
    Ok(Outcome::Checked(results))
}

#[test]
fn tangent_code_matches_dual_numbers_on_every_fixture() {
    let files = c_files(KIND);
    assert!(
        files.len() >= 30,
        "expected the tangent corpus, found {} files",
        files.len()
    );
    let names: Vec<String> = files.iter().map(|p| stem(p)).collect();
    for (f, _, _) in EXPECTED_REFUSALS {
        assert!(
            names.iter().any(|n| n == f),
            "EXPECTED_REFUSALS names '{f}', which is not a fixture"
        );
    }
    for f in FLOAT_FIXTURES {
        assert!(
            names.iter().any(|n| n == f),
            "FLOAT_FIXTURES names '{f}', which is not a fixture"
        );
    }
    for (f, _) in SMALLER_DOMAINS {
        assert!(
            names.iter().any(|n| n == f),
            "SMALLER_DOMAINS names '{f}', which is not a fixture"
        );
    }

    let mut rows: Vec<Row> = Vec::new();
    let mut problems: Vec<String> = Vec::new();
    let mut checked = 0;
    let mut log = String::new();
    for path in &files {
        let name = stem(path);
        let is_float = FLOAT_FIXTURES.contains(&name.as_str());
        if is_float {
            let text = std::fs::read_to_string(path).unwrap();
            assert!(
                text.contains("float"),
                "{name} is in FLOAT_FIXTURES but uses no float"
            );
        }
        let tol = if is_float { TOL_FLOAT } else { TOL_DOUBLE };
        let refusal = EXPECTED_REFUSALS.iter().find(|(f, _, _)| *f == name);
        let started = Instant::now();
        let outcome = run_fixture(path);
        let _ = writeln!(log, "{name}: {:.2?}", started.elapsed());
        match (outcome, refusal) {
            (Err(e), _) => problems.push(format!("{name}: {e}")),
            (Ok(Outcome::Refused(msg)), Some((_, needle, why))) => {
                if !msg.contains(needle) {
                    problems.push(format!(
                        "{name}: refused as expected ({why}), but the message does not mention '{needle}': {msg}"
                    ));
                }
            }
            (Ok(Outcome::Refused(msg)), None) => {
                problems.push(format!("{name}: the tangent mode refuses it: {msg}"))
            }
            (Ok(Outcome::Checked(_)), Some((_, _, why))) => problems.push(format!(
                "{name}: listed in EXPECTED_REFUSALS ({why}) but the tangent mode now accepts it: \
                 remove it from the list"
            )),
            (Ok(Outcome::Checked(results)), None) => {
                checked += 1;
                for (seed, cmp) in results {
                    // A comparison of zeros would check nothing.
                    if cmp.elements().all(|(_, e)| e.dual == 0.0) {
                        problems.push(format!(
                            "{name} (seed {seed}): every derivative is zero in the dual run"
                        ));
                    }
                    for d in &cmp.dependents {
                        if d.elements.is_empty() {
                            problems.push(format!(
                                "{name} (seed {seed}): dependent '{}' has no real element to compare",
                                d.name
                            ));
                        }
                        for e in &d.elements {
                            if e.error >= tol {
                                rows.push(Row {
                                    fixture: name.clone(),
                                    seed,
                                    dependent: d.name.clone(),
                                    element: e.label.clone(),
                                    dual: e.dual,
                                    tangent: e.tangent,
                                    error: e.error,
                                    what: if d.has_derivative {
                                        "derivative"
                                    } else {
                                        "derivative (f_d has none)"
                                    },
                                });
                            }
                            // The tangent code computes the original's
                            // results with the original's operations.
                            if e.primal_error != 0.0 {
                                rows.push(Row {
                                    fixture: name.clone(),
                                    seed,
                                    dependent: d.name.clone(),
                                    element: e.label.clone(),
                                    dual: e.primal_original,
                                    tangent: e.primal_tangent,
                                    error: e.primal_error,
                                    what: "primal value",
                                });
                            }
                        }
                    }
                }
            }
        }
    }
    eprintln!("per-fixture times:\n{log}");
    let mut failing: Vec<&str> = rows.iter().map(|r| r.fixture.as_str()).collect();
    failing.dedup();
    if !rows.is_empty() || !problems.is_empty() {
        let mut table = String::new();
        let _ = writeln!(
            table,
            "{:<22} {:>4} {:<14} {:<18} {:>24} {:>24} {:>10}  what",
            "fixture",
            "seed",
            "dependent",
            "element",
            "dual / original",
            "tangent / f_d",
            "rel.error"
        );
        for r in &rows {
            let _ = writeln!(
                table,
                "{:<22} {:>4} {:<14} {:<18} {:>24.16e} {:>24.16e} {:>10.2e}  {}",
                r.fixture, r.seed, r.dependent, r.element, r.dual, r.tangent, r.error, r.what
            );
        }
        panic!(
            "tangent code against dual numbers: {} fixture(s) differ ({}), {} problem(s):\n{}\n{}",
            failing.len(),
            failing.join(", "),
            problems.len(),
            problems.join("\n"),
            table
        );
    }
    assert!(checked >= 40, "only {checked} fixtures were checked");
}

// ---------------------------------------------------------------------------
// The checker itself, on a hand-written tangent program
// ---------------------------------------------------------------------------

/// An original with every kind of dependent and independent: a pointer
/// input, a real by value, a struct behind a pointer (read and written),
/// an output array, the result and a global.
const ORIGINAL: &str = r#"#include <math.h>
typedef struct {
    int id;
    double m;
    double x;
} P;
double g_s;
double f(int n, const double *x, double a, P *p, double *y)
{
    double s = 0.0;
    for (int i = 0; i < n; i++) {
        y[i] = sin(a * x[i]) + p->x;
        s += y[i] * y[i];
    }
    g_s = s * p->m;
    p->x = p->x * a;
    return s;
}
"#;

/// Its tangent, written by hand after CONTRACT §2-3.
const TANGENT: &str = r#"
typedef struct {
    double m;
    double x;
} P_d;
double g_sd;
double f_d(int n, const double *x, const double *xd, double a, double ad, P *p, P_d *pd,
           double *y, double *yd, double *f)
{
    double sd = 0.0, s = 0.0;
    for (int i = 0; i < n; i++) {
        yd[i] = cos(a * x[i]) * (ad * x[i] + a * xd[i]) + pd->x;
        y[i] = sin(a * x[i]) + p->x;
        sd += yd[i] * y[i] + y[i] * yd[i];
        s += y[i] * y[i];
    }
    g_sd = sd * p->m + s * pd->m;
    g_s = s * p->m;
    pd->x = pd->x * a + p->x * ad;
    p->x = p->x * a;
    *f = s;
    return sd;
}
"#;

const HAND_HEAD: &str = "f(y f g_s p)/(x a p)";
const HAND_DOMAIN: &str = "n=4 x[n]=[-1,1] a=[0.5,1.5] p.id=1 p.m=[1,2] p.x=[-1,1] y[n]=[0,0]";

fn load_text(dir: &Path, name: &str, text: &str) -> Loaded {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    front::load(&path, &front::FrontOptions::default())
        .unwrap_or_else(|(s, d)| panic!("{}", front::diag::render(&s, &d)))
}

/// Runs the checker on the hand-written tangent with `edit` applied.
fn check_hand_written(edit: (&str, &str)) -> Result<DualComparison, DualCheckError> {
    assert!(
        edit.0.is_empty() || TANGENT.contains(edit.0),
        "no '{}' to edit",
        edit.0
    );
    let tangent_text = format!("{ORIGINAL}{}", TANGENT.replacen(edit.0, edit.1, 1));
    let dir = tempfile::tempdir().unwrap();
    let original = load_text(dir.path(), "f.c", ORIGINAL);
    let tangent = load_text(dir.path(), "f_d.c", &tangent_text);
    let head = parse_head(&original.program, HAND_HEAD).unwrap();
    let domain = Domain::parse(HAND_DOMAIN).unwrap();
    let inputs = compute_inputs(&original.program, "f", &domain, 5).unwrap();
    tangent_vs_dual(&original.program, &tangent.program, &head, &inputs, 77)
}

/// The dependents whose derivative error is at least `tol`.
fn wrong(cmp: &DualComparison, tol: f64) -> Vec<String> {
    cmp.dependents
        .iter()
        .filter(|d| d.max_error >= tol)
        .map(|d| d.name.clone())
        .collect()
}

#[test]
fn the_checker_accepts_a_correct_hand_written_tangent() {
    let cmp = check_hand_written(("", "")).unwrap();
    assert_eq!(cmp.tangent_proc, "f_d");
    let names: Vec<&str> = cmp.dependents.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["y", "f", "g_s", "p"]);
    // Every independent real got a direction: x[0..4], a, p.m, p.x.
    let seeded: Vec<&str> = cmp.direction.iter().map(|(l, _)| l.as_str()).collect();
    assert_eq!(
        seeded,
        ["x[0]", "x[1]", "x[2]", "x[3]", "a", "p[0].m", "p[0].x"]
    );
    assert!(cmp.direction.iter().all(|(_, d)| *d != 0.0));
    assert!(
        cmp.max_error() < TOL_DOUBLE,
        "max error {:e}\n{}",
        cmp.max_error(),
        cmp.table()
    );
    assert_eq!(cmp.max_primal_error(), 0.0, "\n{}", cmp.table());
    // The derivatives are not trivially zero.
    assert!(
        cmp.elements().all(|(_, e)| e.dual != 0.0),
        "\n{}",
        cmp.table()
    );
}

#[test]
fn the_checker_catches_wrong_derivatives_and_primals() {
    // A term of a derivative dropped.
    let cmp = check_hand_written(("pd->x * a + p->x * ad", "pd->x * a")).unwrap();
    assert_eq!(wrong(&cmp, 1e-3), ["p"], "\n{}", cmp.table());
    // The derivative of a global left out.
    let cmp = check_hand_written(("g_sd = sd * p->m + s * pd->m;", "")).unwrap();
    assert_eq!(wrong(&cmp, 1e-3), ["g_s"], "\n{}", cmp.table());
    // A derivative that does not see the direction of `a`.
    let cmp = check_hand_written(("(ad * x[i] + a * xd[i])", "(a * xd[i])")).unwrap();
    assert_eq!(wrong(&cmp, 1e-9), ["y", "f", "g_s"], "\n{}", cmp.table());
    // The returned derivative of the result.
    let cmp = check_hand_written(("return sd;", "return 2.0 * sd;")).unwrap();
    assert_eq!(wrong(&cmp, 1e-3), ["f"], "\n{}", cmp.table());
    // A wrong primal result, right derivatives.
    let cmp = check_hand_written(("*f = s;", "*f = s * (1.0 + 1e-15);")).unwrap();
    assert_eq!(cmp.max_error(), 0.0);
    assert!(cmp.max_primal_error() > 0.0, "\n{}", cmp.table());
    // Parameters out of the order of CONTRACT §3: a signature error.
    let err = check_hand_written(("P *p, P_d *pd,", "P_d *pd, P *p,")).unwrap_err();
    assert!(
        matches!(err, DualCheckError::Signature(_))
            && err.to_string().contains("2 parameters follow 'a'"),
        "{err}"
    );
}

// ---------------------------------------------------------------------------
// Small programs, one construct each, where the random programs of
// tests/tangent_random.rs found the tangent code wrong
// ---------------------------------------------------------------------------

/// A small program: (name, what it exercises, C source, head, domain).
type Small = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
);

const SMALL_PROGRAMS: &[Small] = &[
    (
        "reset_in_loop_control",
        "passive values assigned in a loop to an array element and to a local \
         (the derivatives are reset: a control that passes)",
        r#"void f(double x, double *out, double *y)
{
    y[0] = x * x;
    for (int i = 0; i < 2; i++) {
        y[0] = (double) i;
    }
    double t = x * x;
    for (int i = 0; i < 2; i++) {
        t = 1.0;
    }
    *out = y[0] * x + t * x;
}
"#,
        "f(out y)/(x)",
        "x=[0.5,1.5] out[1]=[0,0] y[1]=[0,0]",
    ),
    (
        "deref_reset_in_loop",
        "`*out = (double) i` in a loop: a passive value through a pointer; \
         `*outd` must become 0",
        r#"void f(double x, double *out, double *y)
{
    *out = x * x;
    for (int i = 0; i < 2; i++) {
        *out = (double) i;
    }
    y[0] = *out * x;
}
"#,
        "f(out y)/(x)",
        "x=[0.5,1.5] out[1]=[0,0] y[1]=[0,0]",
    ),
    (
        "deref_reset_in_branch",
        "`*out = 1.0` in a branch taken at run time; `*outd` must become 0",
        r#"void f(double x, int k, double *out)
{
    *out = x * x;
    if (k > 0) {
        *out = 1.0;
    }
    *out = *out * x;
}
"#,
        "f(out)/(x)",
        "x=[0.5,1.5] k=1 out[1]=[0,0]",
    ),
    (
        "callee_makes_output_passive",
        "a callee that overwrites `*out` with a constant (`g_d` leaves `*outd` \
         as it was, `(void)outd`); the caller's derivative must become 0",
        r#"static void g(double u, int k, double *out)
{
    if (k > 0) {
        *out = *out * u;
    }
    *out = 2.0;
}
void f(int k, const double *x, double *y)
{
    double r = x[0] * x[0];
    g(x[1], k, &r);
    y[0] = r * x[1];
}
"#,
        "f(y)/(x)",
        "k=0 x[2]=[0.5,1.5] y[1]=[0,0]",
    ),
    (
        "passive_call_result_into_active_element",
        "`y[i] = g(1.5)` in a loop: a passive call's result overwrites an \
         active element; `yd[i]` must become 0",
        r#"double g(double u)
{
    return u * u;
}
void f(double x, double *y)
{
    y[0] = x * x;
    y[1] = x * x;
    for (int i = 0; i < 2; i++) {
        y[i] = g(1.5);
    }
    y[0] = y[0] * x;
    y[1] = y[1] * x;
}
"#,
        "f(y)/(x)",
        "x=[0.5,1.5] y[2]=[0,0]",
    ),
    (
        "dropped_definition_of_a_kept_read",
        "a passive loop filling `buf` is dropped, but the dead declaration \
         `double s = sin(buf[1])` that reads it is kept (uninitialised read)",
        r#"#include <math.h>
void f(int n, const double *x, double *y)
{
    double buf[2];
    for (int i = 0; i < 2; i++) {
        buf[i] = 0.5 * i;
    }
    double s = sin(buf[1]);
    s = 2.0;
    for (int i = 0; i < n; i++) {
        y[i] = s * x[i];
    }
}
"#,
        "f(y)/(x)",
        "n=3 x[n]=[0.5,1.5] y[n]=[0,0]",
    ),
    (
        "passive_array_argument_dummy",
        "`dot(&w[1], x, 3)` with `w` passive: the dummy derivative passed for \
         it is one double (`double dummyd`), and `dot_d` reads `pd[1]`, `pd[2]`",
        r#"double w[4] = {0.5, -1.0, 2.0, 0.25};
static double dot(const double *p, const double *q, int m)
{
    double s = 0.0;
    for (int i = 0; i < m; i++) {
        s += p[i] * q[i];
    }
    return s;
}
void f(const double *x, double *y)
{
    y[0] = dot(&w[1], x, 3);
    y[1] = dot(x, x, 3);
}
"#,
        "f(y)/(x)",
        "x[3]=[0.5,1.5] y[2]=[0,0]",
    ),
    (
        "derivative_struct_initializer",
        "`S s = {1.5, x[0], 2}` where `S_d` has only the field `b`: the \
         derivative's initialiser `{0.0, xd[0], 0.0}` follows `S`'s fields, \
         so `sd.b` gets 0.0",
        r#"typedef struct {
    double a;
    double b;
    int k;
} S;
static double use(S s)
{
    double r = s.b * s.b;
    if (s.a > 1.0) {
        r = 2.0 * r;
    }
    return r;
}
void f(const double *x, double *y)
{
    S s = {1.5, x[0], 2};
    y[0] = use(s);
}
"#,
        "f(y)/(x)",
        "x[1]=[0.5,1.5] y[1]=[0,0]",
    ),
    (
        "double_math_on_float_argument",
        "`sin(x[0])` with `float x[]` calls the double `sin` (the argument \
         is promoted); its derivative must be `cos((double)x[0])`, not the \
         single-precision `cosf` (errors of 1e-8 in a double result)",
        r#"#include <math.h>
void f(const float *x, double *y)
{
    y[0] = sin(x[0]) + exp(x[1]);
}
"#,
        "f(y)/(x)",
        "x[2]=[0.5,1.5] y[1]=[0,0]",
    ),
    (
        "singular_partial_times_zero_tangent",
        "`sqrt(t)` and `hypot(t, t)` at t = 0 where t does not vary (k = 0): \
         the partials 0.5/sqrt(0) and t/hypot(t, t) are infinite or NaN and \
         multiply a zero tangent, giving NaN; Tapenade guards these",
        r#"#include <math.h>
void f(int k, const double *x, double *y)
{
    double t = k * x[0];
    y[0] = sqrt(t) + x[0];
    y[1] = hypot(t, t) + x[1];
}
"#,
        "f(y)/(x)",
        "k=0 x[2]=[0.5,1.5] y[2]=[0,0]",
    ),
    (
        "stale_global_derivative_at_call",
        "`g = 0.0` leaves gd stale (implicit zero) where g stops varying; \
         `h_d` reads gd because another call passes g varied: the call \
         edge joins h's entry, so gd must be reset before the second call \
         (found by seed 11739741135263409594, non-smooth)",
        r#"#include <math.h>
double g = 0.0;
static double h(double c, double w)
{
    return c + sin(g) * w;
}
void f(const double *x, double *y)
{
    double v = x[0];
    g = 0.5 * x[1];
    v = h(v, 0.7);
    g = 0.0;
    for (int i = 0; i < 2; i++) {
        y[i] = h(v, 0.3);
    }
}
"#,
        "f(y)/(x)",
        "x[2]=[0.5,1.5] y[2]=[0,0]",
    ),
    (
        "stale_pointer_target_derivative_at_call",
        "`v = 2.0` leaves vd stale; `scale(&v, a)` passes &vd to `scale_d`, \
         which reads *pd (varied at its entry through the first call): vd \
         must be reset before the second call",
        r#"static void scale(double *p, double w)
{
    *p = *p * w;
}
void f(const double *x, double *y)
{
    double v = x[0];
    scale(&v, x[1]);
    y[0] = v;
    v = 2.0;
    scale(&v, x[1]);
    y[1] = v;
}
"#,
        "f(y)/(x)",
        "x[2]=[0.5,1.5] y[2]=[0,0]",
    ),
    (
        "stale_struct_derivative_passed_by_value",
        "`s = t;` with t passive left sd stale (implicit zero for a whole \
         struct variable); `h(s, w)` then passes sd by value to `h_d`: a \
         struct's derivative is always assigned (found by hand while \
         fixing the call-entry resets)",
        r#"typedef struct {
    double p;
    double q;
} S;
static double h(S s, double w)
{
    return s.p * s.q + w;
}
void f(const double *x, double *y)
{
    S s = {x[0], 2.0};
    S t = {3.0, 4.0};
    y[0] = h(s, x[1]);
    s = t;
    y[1] = h(s, x[1]);
}
"#,
        "f(y)/(x)",
        "x[2]=[0.5,1.5] y[2]=[0,0]",
    ),
];

/// Tangent of one small program through the library, checked against dual
/// numbers at two points; the failing elements as table rows.
fn check_small(dir: &Path, small: &Small) -> Result<Vec<String>, String> {
    let (name, _, source, head_text, domain_text) = *small;
    let path = dir.join(format!("{name}.c"));
    std::fs::write(&path, source).unwrap();
    let loaded = front::load(&path, &front::FrontOptions::default())
        .map_err(|(s, d)| front::diag::render(&s, &d))?;
    let program = &loaded.program;
    let head = parse_head(program, head_text)?;
    let domain = Domain::parse(domain_text).map_err(|e| e.to_string())?;
    let opts = TangentOptions::default();
    let rules = load_rules(&opts).map_err(|e| format!("{e:?}"))?;
    let out = aioli::transform::specialize::analyzed(
        program,
        std::slice::from_ref(&head),
        aioli::transform::specialize::Target::Tangent,
        |a| tangent_program(a, &rules, &opts),
    )
    .map_err(|d| {
        format!(
            "refused: {}: {}",
            loaded.sources.location(d.span),
            d.message
        )
    })?;
    let mut rows = Vec::new();
    for seed in SEEDS {
        let inputs = compute_inputs(program, "f", &domain, seed).map_err(|e| e.to_string())?;
        let cmp = tangent_vs_dual(program, &out, &head, &inputs, 1000 + seed).map_err(|e| {
            let at = match &e {
                DualCheckError::Tangent { span, .. } => {
                    format!(" at {}", loaded.sources.location(*span))
                }
                _ => String::new(),
            };
            format!("{e}{at}")
        })?;
        for (dep, e) in cmp.elements() {
            if e.error >= TOL_DOUBLE || e.primal_error != 0.0 {
                rows.push(format!(
                    "  seed {seed} {dep:<4} {:<6} dual {:>24.16e} tangent {:>24.16e} error {:.2e}, primal error {:.2e}",
                    e.label, e.dual, e.tangent, e.error, e.primal_error
                ));
            }
        }
    }
    Ok(rows)
}

#[test]
fn tangent_code_matches_dual_numbers_on_small_programs() {
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for small in SMALL_PROGRAMS {
        let (name, what, ..) = *small;
        match check_small(dir.path(), small) {
            Ok(rows) if rows.is_empty() => {}
            Ok(rows) => failures.push(format!("{name}: {what}\n{}", rows.join("\n"))),
            Err(e) => failures.push(format!("{name}: {what}\n  {e}")),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} small programs: tangent code differs from dual numbers:\n\n{}",
        failures.len(),
        SMALL_PROGRAMS.len(),
        failures.join("\n\n")
    );
}
