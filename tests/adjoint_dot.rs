//! Adjoint mode on the fixture corpus (`tests/fixtures/adjoint/`): the
//! dot-product test in the IL interpreter
//! (`aioli::check::adjoint_interp::adjoint_vs_tangent_dual`).
//!
//! For every fixture, with its pragma's head and domain, in the default
//! mode (calls checkpointed) and with `--split`, the adjoint mode either
//! - writes `f_b` (with `--split` also the head's `f_fwd` and `f_bwd`,
//!   run one after the other as a second adjoint, `f_fwd` leaving the
//!   original results), and then at three input points `⟨ȳ, J ẋ⟩` (the
//!   original run with dual numbers) must equal `⟨Jᵀ ȳ, ẋ⟩` (`f_b` run in
//!   the interpreter) to a relative error below 1e-10 (1e-5 for fixtures
//!   with `float` variables), and `f_b` must leave the adjoint stack
//!   empty; or
//! - refuses with one of the documented "not yet" messages of
//!   `src/transform/adjoint.rs` (`adjoint/refuse`, [`REFUSALS`]): a crash
//!   or any other error fails.
//!
//! The test prints a table of every fixture's outcome (`cargo test --test
//! adjoint_dot -- --nocapture`).

mod common;

use aioli::analysis::head::parse_head;
use aioli::check::adjoint_interp::{DotCheckError, DotOptions, adjoint_vs_tangent_dual};
use aioli::check::domain::Domain;
use aioli::check::driver::compute_inputs;
use aioli::front;
use aioli::transform::adjoint::{AdjointOptions, adjoint_output, load_adjoint_rules};
use std::path::Path;

/// The words of the adjoint mode's documented refusals: what it does not
/// support yet.
const REFUSALS: &[&str] = &[
    "the adjoint mode does not handle ",
    "the adjoint mode does not yet pass a zero adjoint buffer",
    "the adjoint mode does not differentiate lgamma and tgamma yet",
    "the adjoint mode cannot yet save the memory",
];

/// Input points per fixture.
const POINTS: u64 = 3;

/// The outcome of one fixture.
enum Outcome {
    /// The largest error over the points, and the products at the worst.
    Passed {
        error: f64,
        tangent: f64,
        gradient: f64,
    },
    Failed(String),
    Refused(String),
}

fn is_documented_refusal(message: &str) -> bool {
    REFUSALS.iter().any(|w| message.contains(w)) && message.contains("yet")
}

fn run(path: &Path, split: bool) -> Outcome {
    let cfg = common::config(path);
    let dir = path.parent().unwrap();
    let loaded = match front::load(path, &common::front_options(&cfg.flags, dir)) {
        Ok(l) => l,
        Err((s, d)) => {
            return Outcome::Failed(format!("front end: {}", front::diag::render(&s, &d)));
        }
    };
    let program = &loaded.program;
    let head = match parse_head(program, &cfg.head) {
        Ok(h) => h,
        Err(e) => return Outcome::Failed(format!("head: {e}")),
    };
    let opts = AdjointOptions {
        split,
        ..AdjointOptions::default()
    };
    let rules = load_adjoint_rules(&opts).expect("the bundled adjoint rules load");
    let generated = adjoint_output(program, std::slice::from_ref(&head), &rules, &opts);
    let out = match generated {
        Ok(o) => o.program,
        Err(d) => {
            let message = front::diag::render(&loaded.sources, &d);
            return if is_documented_refusal(&d.message) {
                Outcome::Refused(d.message.clone())
            } else {
                Outcome::Failed(format!("an undocumented refusal: {message}"))
            };
        }
    };
    // `float` variables of the file itself (not of the system headers).
    let single = program
        .symbols
        .iter()
        .any(|s| s.span.file == program.main_file && format!("{:?}", s.ty.ty).contains("Float"));
    let tolerance = if single { 1e-5 } else { 1e-10 };
    let domain = Domain::parse(&cfg.domain).expect("the pragma's domain parses");
    let name = &program.proc(head.proc).name;
    let mut worst: Option<(f64, f64, f64)> = None;
    for point in 1..=POINTS {
        let inputs = match compute_inputs(program, name, &domain, point) {
            Ok(i) => i,
            Err(e) => return Outcome::Failed(format!("inputs at point {point}: {e}")),
        };
        // With `--split`, `f_b` and the head's pair `f_fwd ; f_bwd` alike
        // (a head whose pair the split translation cannot give has `f_b`
        // alone, with a warning).
        let pair = split
            && out
                .proc_by_name(&format!("{name}_fwd"))
                .is_some_and(|p| out.proc(p).body.is_some());
        for split_pair in [false, true].into_iter().take(if pair { 2 } else { 1 }) {
            let options = DotOptions {
                split_pair,
                ..DotOptions::default()
            };
            let half = if split_pair { " (f_fwd ; f_bwd)" } else { "" };
            let cmp = match adjoint_vs_tangent_dual(
                program,
                &out,
                &head,
                &inputs,
                point.wrapping_mul(0x9E37_79B9),
                &options,
            ) {
                Ok(c) => c,
                Err(e) => {
                    let at = match &e {
                        DotCheckError::Adjoint { span, .. }
                        | DotCheckError::Original { span, .. }
                            if *span != Default::default() =>
                        {
                            format!(" at {}", loaded.sources.location(*span))
                        }
                        _ => String::new(),
                    };
                    return Outcome::Failed(format!("point {point}{half}: {e}{at}"));
                }
            };
            if cmp.error >= tolerance || cmp.stack_left != 0 {
                return Outcome::Failed(format!(
                    "point {point}{half}: error {:.2e} (tolerance {tolerance:.0e}), stack left {}\n{}",
                    cmp.error,
                    cmp.stack_left,
                    cmp.table()
                ));
            }
            if worst.is_none_or(|(e, _, _)| cmp.error > e) {
                worst = Some((cmp.error, cmp.weighted_tangent, cmp.weighted_gradient));
            }
        }
    }
    let (error, tangent, gradient) = worst.unwrap_or_default();
    Outcome::Passed {
        error,
        tangent,
        gradient,
    }
}

#[test]
fn adjoint_passes_the_dot_product_test_or_refuses_with_a_documented_message() {
    let mut table = Vec::new();
    let mut failures = Vec::new();
    let (mut passed, mut refused) = (0, 0);
    // Each fixture twice: calls checkpointed by default, and all split
    // (`--split`).
    let files = common::c_files("adjoint");
    let runs = files.iter().flat_map(|f| [(f, false), (f, true)]);
    for (f, split) in runs {
        let stem = f.file_stem().unwrap().to_string_lossy().into_owned();
        let name = if split {
            format!("{stem} --split")
        } else {
            stem
        };
        match run(f, split) {
            Outcome::Passed {
                error,
                tangent,
                gradient,
            } => {
                passed += 1;
                table.push(format!(
                    "{name:<24} pass     error {error:9.2e}  <ybar,ydot> {tangent:>23.16e}  <xbar,xdot> {gradient:>23.16e}"
                ));
            }
            Outcome::Refused(m) => {
                refused += 1;
                table.push(format!("{name:<24} refused  {m}"));
            }
            Outcome::Failed(m) => {
                table.push(format!(
                    "{name:<24} FAIL     {}",
                    m.lines().next().unwrap_or("")
                ));
                failures.push(format!("{name}: {m}"));
            }
        }
    }
    println!("{}", table.join("\n"));
    println!(
        "{passed} passed, {refused} refused, {} failed",
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{}\n\n{}",
        table.join("\n"),
        failures.join("\n\n")
    );
}

/// The checker itself: on a hand-written adjoint of a known function it
/// agrees, and a wrong adjoint is caught.
#[test]
fn the_checker_catches_a_wrong_adjoint() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sq.c");
    std::fs::write(
        &path,
        "void sq(int n, const double *x, double a, double *y)\n{\n    for (int i = 0; i < n; i++)\n        y[i] = a * x[i] * x[i];\n}\n",
    )
    .unwrap();
    let loaded = front::load(&path, &Default::default()).unwrap();
    let program = &loaded.program;
    let head = parse_head(program, "sq(y)/(x a)").unwrap();
    let domain = Domain::parse("n=3 x[n]=[-1,1] a=[0.5,2] y[n]=[0,0]").unwrap();
    let inputs = compute_inputs(program, "sq", &domain, 7).unwrap();
    // A hand-written adjoint, right and then with a factor 2 missing.
    for (factor, right) in [("2.0", true), ("1.0", false)] {
        let text = format!(
            "void sq(int n, const double *x, double a, double *y)\n{{\n    for (int i = 0; i < n; i++)\n        y[i] = a * x[i] * x[i];\n}}\n\
             void sq_b(int n, const double *x, double *xb, double a, double *ab, double *y, double *yb)\n{{\n    \
             (void)y;\n    for (int i = 0; i < n; i++) {{\n        xb[i] += {factor} * a * x[i] * yb[i];\n        \
             *ab += x[i] * x[i] * yb[i];\n        yb[i] = 0.0;\n    }}\n}}\n"
        );
        let bpath = dir.path().join("sq_b.c");
        std::fs::write(&bpath, text).unwrap();
        let out = front::load(&bpath, &Default::default()).unwrap().program;
        let cmp =
            adjoint_vs_tangent_dual(program, &out, &head, &inputs, 11, &DotOptions::default())
                .unwrap();
        assert_eq!(cmp.independents.len(), 4, "{}", cmp.table());
        assert_eq!(cmp.dependents.len(), 3, "{}", cmp.table());
        if right {
            assert!(cmp.error < 1e-14, "{}", cmp.table());
        } else {
            assert!(cmp.error > 1e-3, "{}", cmp.table());
        }
    }
}

/// Runs the dot-product test on one file given by `AIOLI_DOT_FILE` (with a
/// fixture pragma on its first line), e.g. a bug reproducer:
/// `AIOLI_DOT_FILE=path.c cargo test --test adjoint_dot -- --nocapture`.
/// Without the variable it does nothing.
#[test]
fn dot_product_test_of_one_file() {
    let Ok(path) = std::env::var("AIOLI_DOT_FILE") else {
        return;
    };
    // `AIOLI_DOT_SPLIT` set: with `--split`.
    match run(Path::new(&path), std::env::var("AIOLI_DOT_SPLIT").is_ok()) {
        Outcome::Passed {
            error,
            tangent,
            gradient,
        } => println!(
            "pass: error {error:.2e}, <ybar,ydot> {tangent:.17e}, <xbar,xdot> {gradient:.17e}"
        ),
        Outcome::Refused(m) => println!("refused: {m}"),
        Outcome::Failed(m) => panic!("{m}"),
    }
}
