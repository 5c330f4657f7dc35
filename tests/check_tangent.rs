//! The tangent check (`check::tangent`) on hand-written tangents: each
//! fixture `tests/fixtures/check/NAME.c` has its correct tangent in
//! `NAME_d.c`, written after CONTRACT §2-3, except `wrong_d.c`, which is
//! deliberately wrong for one dependent. Compiles and runs with `cc`.

mod common;

use aioli::analysis::head::{Head, parse_head};
use aioli::check::domain::Domain;
use aioli::check::tangent::{
    CheckError, DEFAULT_MIN_DIGITS, Precision, SINGLE_STEPS, STEPS, TangentCheck,
    TangentCheckOptions, TangentParam, TangentReturn, check_tangent, find_tangent_proc,
    match_signature,
};
use aioli::front::{self, Loaded};
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    common::fixture_dir("check").join(name)
}

fn load(path: &Path) -> Loaded {
    front::load(path, &Default::default())
        .unwrap_or_else(|(s, d)| panic!("{}", front::diag::render(&s, &d)))
}

/// Options for tests: a short time budget (no timing is asserted).
fn options() -> TangentCheckOptions {
    TangentCheckOptions {
        cc: common::cc(),
        time_budget_ms: 40,
        ..Default::default()
    }
}

/// Loads `NAME.c`, reads its pragma, and checks it against `tangent`.
fn check_with(
    name: &str,
    tangent: &str,
    options: &TangentCheckOptions,
) -> Result<TangentCheck, CheckError> {
    let original = fixture(&format!("{name}.c"));
    let config = common::config(&original);
    let loaded = load(&original);
    let head: Head = parse_head(&loaded.program, &config.head).unwrap();
    let domain = Domain::parse(&config.domain).unwrap();
    check_tangent(
        &original,
        &loaded.program,
        &head,
        &domain,
        &fixture(tangent),
        options,
    )
}

fn check(name: &str) -> TangentCheck {
    check_with(name, &format!("{name}_d.c"), &options()).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// A correct tangent passes: every dependent agrees to the threshold, and
/// the timing was measured.
fn assert_passes(name: &str, dependents: &[&str]) -> TangentCheck {
    let r = check(name);
    println!("{r}");
    assert!(r.passed, "{name}:\n{r}");
    let names: Vec<&str> = r.dependents.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, dependents, "{name}");
    for d in &r.dependents {
        assert!(d.digits >= DEFAULT_MIN_DIGITS, "{name}: {d:?}");
        assert!(d.primal_digits >= DEFAULT_MIN_DIGITS, "{name}: {d:?}");
        assert!(d.has_derivative, "{name}: {d:?}");
    }
    assert!(
        r.r_t.is_some_and(|r| r > 0.0 && r.is_finite()),
        "{name}: {r}"
    );
    r
}

#[test]
fn reals_by_value() {
    let r = assert_passes("polar", &["xy"]);
    assert_eq!(r.dependents[0].elements, 2);
}

#[test]
fn pointer_arrays_overwritten_in_place() {
    // `x` is an input and an output: the divided differences are only
    // right if every call starts from fresh copies.
    let r = assert_passes("relax", &["x", "s"]);
    assert_eq!(r.dependents[0].elements, 6);
}

#[test]
fn struct_by_pointer_with_derivative_struct() {
    let r = assert_passes("particles", &["e", "p"]);
    // p: 3 particles × (x, v[2], stamp, w[2]) real elements; `stamp` is not
    // in Particle_d, its tangent is 0 and so is its divided difference.
    assert_eq!(r.dependents[1].elements, 3 * 6);
}

#[test]
fn function_result() {
    let r = assert_passes("norm", &["norm"]);
    assert_eq!(r.signature.returns, TangentReturn::Derivative);
    assert_eq!(r.signature.params.last(), Some(&TangentParam::PrimalResult));
}

#[test]
fn active_globals() {
    let r = assert_passes("gain", &["total"]);
    assert!(r.notes.is_empty(), "{:?}", r.notes);
}

#[test]
fn struct_result_by_value() {
    // rotate_d returns AB_d and the primal comes back through `AB *rotate`.
    let r = assert_passes("rotate", &["rotate"]);
    assert_eq!(r.signature.returns, TangentReturn::Derivative);
    use TangentParam::*;
    assert_eq!(
        r.signature.params,
        [
            Primal(0),
            Derivative(0),
            Primal(1),
            Derivative(1),
            PrimalResult
        ]
    );
    // `a` and `b`; `turns` is an integer.
    assert_eq!(r.dependents[0].elements, 2);
}

#[test]
fn a_wrong_struct_result_tangent_fails() {
    let dir = tempfile::tempdir().unwrap();
    let right = std::fs::read_to_string(fixture("rotate_d.c")).unwrap();
    // A sign error in one term of one field.
    let wrong = right.replace("(c * vd.b - s * thd * v.b)", "(c * vd.b + s * thd * v.b)");
    assert_ne!(wrong, right);
    let tangent = dir.path().join("rotate_d.c");
    std::fs::write(&tangent, wrong).unwrap();
    let r = check_with("rotate", tangent.to_str().unwrap(), &options()).unwrap();
    println!("{r}");
    assert!(!r.passed, "{r}");
    assert!(r.dependents[0].digits < 2.0, "{r}");
    assert!(
        r.dependents[0]
            .worst
            .as_deref()
            .is_some_and(|w| w.starts_with("rotate.b")),
        "{r}"
    );
}

#[test]
fn struct_by_value_global_array_and_a_passive_dependent() {
    let r = check("weigh");
    println!("{r}");
    assert!(r.passed, "{r}");
    let names: Vec<&str> = r.dependents.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["weigh", "out", "label"]);
    for d in &r.dependents {
        assert!(d.digits >= DEFAULT_MIN_DIGITS, "{d:?}");
    }
    // `label` has no derivative: its tangent is 0, and so are its
    // divided differences.
    assert!(r.dependents[0].has_derivative && r.dependents[1].has_derivative);
    assert!(!r.dependents[2].has_derivative);
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("'label'") && n.contains("taken as 0")),
        "{:?}",
        r.notes
    );
    assert!(r.to_string().contains("no derivative: tangent 0"));
}

#[test]
fn a_wrong_tangent_fails_on_its_dependent() {
    let r = check("wrong");
    println!("{r}");
    assert!(!r.passed, "{r}");
    let mean = &r.dependents[0];
    let var = &r.dependents[1];
    assert_eq!((mean.name.as_str(), var.name.as_str()), ("mean", "var"));
    assert!(mean.digits >= DEFAULT_MIN_DIGITS, "{mean:?}");
    assert!(var.digits < 2.0, "{var:?}");
    assert!(var.primal_digits >= DEFAULT_MIN_DIGITS, "{var:?}");
    assert!(r.to_string().contains("FAILED"));
    assert!(r.to_string().contains("<-- FAILS"));
}

#[test]
fn another_procedures_tangent_is_a_signature_error() {
    // polar_d.c has no relax_d.
    let err = check_with("relax", "polar_d.c", &options()).unwrap_err();
    assert!(matches!(err, CheckError::Signature(_)), "{err}");
    assert!(err.to_string().contains("relax_d"), "{err}");
}

/// Runs the polar check against a tangent file with the given text.
fn check_polar_against(tangent_text: &str) -> Result<TangentCheck, CheckError> {
    let dir = tempfile::tempdir().unwrap();
    let tangent = dir.path().join("polar_d.c");
    std::fs::write(&tangent, tangent_text).unwrap();
    let original = fixture("polar.c");
    let config = common::config(&original);
    let loaded = load(&original);
    let head = parse_head(&loaded.program, &config.head).unwrap();
    let domain = Domain::parse(&config.domain).unwrap();
    check_tangent(
        &original,
        &loaded.program,
        &head,
        &domain,
        &tangent,
        &options(),
    )
}

#[test]
fn a_tangent_aioli_cannot_read_is_reported_with_its_location() {
    let err = check_polar_against(
        "void polar_d(double r, double rd, double theta, double thetad, double *xy, double *xyd)\n{\n    xyd[0] = undeclared_thing;\n}\n",
    )
    .unwrap_err();
    assert!(matches!(err, CheckError::TangentFile(_)), "{err}");
    let text = err.to_string();
    assert!(text.contains("polar_d.c:3:14: error:"), "{text}");
    assert!(text.contains("undeclared_thing"), "{text}");
}

#[test]
fn a_tangent_that_does_not_link_reports_cc() {
    // Valid C for aioli's front end and for `cc -c`; `helper` is defined
    // nowhere, so the link fails and its message must reach the user.
    let err = check_polar_against(
        "double helper(double);\nvoid polar_d(double r, double rd, double theta, double thetad, double *xy, double *xyd)\n{\n    xyd[0] = helper(rd);\n    xy[0] = r;\n}\n",
    )
    .unwrap_err();
    assert!(matches!(err, CheckError::Compile { .. }), "{err}");
    let text = err.to_string();
    assert!(text.contains("link"), "{text}");
    assert!(text.contains("helper"), "{text}");
}

#[test]
fn macros_of_the_tangent_file_do_not_break_the_driver() {
    // The driver repeats the tangent file's `#define` lines; short
    // lower-case macros must not collide with the driver's own names.
    let mut text = String::from("#include <math.h>\n");
    for name in [
        "e", "t", "p", "h", "u", "v", "i", "n", "a", "b", "out", "point", "what", "name", "ts",
        "t0", "grow", "target", "with", "without",
    ] {
        text.push_str(&format!("#define {name} 1\n"));
    }
    text.push_str(&std::fs::read_to_string(fixture("polar_d.c")).unwrap());
    let r = check_polar_against(&text).unwrap();
    assert!(r.passed, "{r}");
}

#[test]
fn a_missing_compiler_is_an_error_not_a_panic() {
    let opts = TangentCheckOptions {
        cc: "/nonexistent/aioli-cc".to_string(),
        ..options()
    };
    let err = check_with("polar", "polar_d.c", &opts).unwrap_err();
    assert!(matches!(err, CheckError::Compile { .. }), "{err}");
    assert!(err.to_string().contains("/nonexistent/aioli-cc"), "{err}");
}

#[test]
fn a_bad_domain_is_an_inputs_error() {
    let original = fixture("polar.c");
    let loaded = load(&original);
    let head = parse_head(&loaded.program, "polar(xy)/(r theta)").unwrap();
    let domain = Domain::parse("r=[0.5,2] xy[2]=[0,0]").unwrap();
    let err = check_tangent(
        &original,
        &loaded.program,
        &head,
        &domain,
        &fixture("polar_d.c"),
        &options(),
    )
    .unwrap_err();
    assert!(matches!(err, CheckError::Inputs(_)), "{err}");
    assert!(err.to_string().contains("theta"), "{err}");
}

#[test]
fn zero_time_budget_skips_timing() {
    let opts = TangentCheckOptions {
        time_budget_ms: 0,
        points: 1,
        ..options()
    };
    let r = check_with("norm", "norm_d.c", &opts).unwrap();
    assert!(r.passed, "{r}");
    assert_eq!(r.r_t, None);
    assert!(r.to_string().contains("R_t not measured"));
}

#[test]
fn the_work_directory_can_be_kept() {
    let dir = tempfile::tempdir().unwrap();
    let opts = TangentCheckOptions {
        keep_dir: Some(dir.path().to_path_buf()),
        time_budget_ms: 0,
        points: 1,
        ..options()
    };
    let r = check_with("particles", "particles_d.c", &opts).unwrap();
    assert!(r.passed, "{r}");
    let driver = std::fs::read_to_string(dir.path().join("driver.c")).unwrap();
    assert!(driver.contains("energy_d("), "{driver}");
    assert!(driver.contains("Particle_d"), "{driver}");
}

// ---------------------------------------------------------------------------
// Signature matching, on programs written for the purpose
// ---------------------------------------------------------------------------

/// Matches `f` in `original` with its tangent in `tangent` (C texts).
fn signature(
    original: &str,
    tangent: &str,
) -> Result<(Vec<TangentParam>, TangentReturn), CheckError> {
    let dir = tempfile::tempdir().unwrap();
    let (o, t) = (dir.path().join("o.c"), dir.path().join("o_d.c"));
    std::fs::write(&o, original).unwrap();
    std::fs::write(&t, tangent).unwrap();
    let (o, t) = (load(&o), load(&t));
    let f = o.program.proc_by_name("f").unwrap();
    let fd = find_tangent_proc(&o.program, f, &t.program)?;
    let s = match_signature(&o.program, f, &t.program, fd)?;
    Ok((s.params, s.returns))
}

#[test]
fn signature_by_value_reals_use_names_to_decide() {
    use TangentParam::*;
    let original = "double f(double x, double y) { return x * y; }\n";
    // Only y is differentiated: `x, y, yd` — types alone also allow
    // `x, xd, y`; the names decide.
    let (p, r) = signature(
        original,
        "double f_d(double x, double y, double yd, double *f) { *f = x * y; return x * yd; }\n",
    )
    .unwrap();
    assert_eq!(p, vec![Primal(0), Primal(1), Derivative(1), PrimalResult]);
    assert_eq!(r, TangentReturn::Derivative);
    let (p, _) = signature(
        original,
        "double f_d(double x, double xd, double y, double *f) { *f = x * y; return xd * y; }\n",
    )
    .unwrap();
    assert_eq!(p, vec![Primal(0), Derivative(0), Primal(1), PrimalResult]);
}

#[test]
fn signature_clash_suffixes_and_passive_result() {
    use TangentParam::*;
    // `xd` is taken by the original, so the derivative is `xd0`; without
    // the extra parameter, f_d returns the primal result.
    let (p, r) = signature(
        "double f(const double *x, int xd) { return x[xd]; }\n",
        "double f_d(const double *x, const double *xd0, int xd) { return x[xd]; }\n",
    )
    .unwrap();
    assert_eq!(p, vec![Primal(0), Derivative(0), Primal(1)]);
    assert_eq!(r, TangentReturn::Primal);
}

#[test]
fn signature_structs_need_derivative_structs() {
    use TangentParam::*;
    let original =
        "typedef struct { double a; int n; } S;\nvoid f(S *s, double *y) { y[0] = s->a; }\n";
    let (p, r) = signature(
        original,
        "typedef struct { double a; int n; } S;\ntypedef struct { double a; } S_d;\nvoid f_d(S *s, S_d *sd, double *y, double *yd) { yd[0] = sd->a; y[0] = s->a; }\n",
    )
    .unwrap();
    assert_eq!(p, vec![Primal(0), Derivative(0), Primal(1), Derivative(1)]);
    assert_eq!(r, TangentReturn::Nothing);
    // A `double *` after `S *` is not its derivative.
    let err = signature(
        original,
        "typedef struct { double a; int n; } S;\nvoid f_d(S *s, double *sd, double *y, double *yd) { yd[0] = sd[0]; y[0] = s->a; }\n",
    )
    .unwrap_err();
    assert!(matches!(err, CheckError::Signature(_)), "{err}");
}

#[test]
fn signature_struct_result() {
    use TangentParam::*;
    let original = "typedef struct { double a; int k; } R;\nR f(double x) { R r; r.a = x; r.k = 1; return r; }\n";
    let types = "typedef struct { double a; int k; } R;\ntypedef struct { double a; } R_d;\n";
    let (p, r) = signature(
        original,
        &format!(
            "{types}R_d f_d(double x, double xd, R *f) {{ R_d d; d.a = xd; f->a = x; f->k = 1; return d; }}\n"
        ),
    )
    .unwrap();
    assert_eq!(p, vec![Primal(0), Derivative(0), PrimalResult]);
    assert_eq!(r, TangentReturn::Derivative);
    // Without the result parameter, f_d returns the primal struct.
    let (p, r) = signature(
        original,
        &format!(
            "{types}R f_d(double x, double xd) {{ R r; r.a = x + 0 * xd; r.k = 1; return r; }}\n"
        ),
    )
    .unwrap();
    assert_eq!(p, vec![Primal(0), Derivative(0)]);
    assert_eq!(r, TangentReturn::Primal);
    // With it, f_d must return the derivative struct, not R.
    let err = signature(
        original,
        &format!("{types}R f_d(double x, double xd, R *f) {{ f->a = x; f->k = 1; return *f; (void)xd; }}\n"),
    )
    .unwrap_err();
    assert!(matches!(err, CheckError::Signature(_)), "{err}");
    assert!(err.to_string().contains("derivative type"), "{err}");
}

#[test]
fn signature_mismatches_are_reported() {
    let err = signature(
        "void f(double *x, int n) { x[0] = n; }\n",
        "void f_d(int n, double *x, double *xd) { x[0] = n; xd[0] = 0; }\n",
    )
    .unwrap_err();
    assert!(err.to_string().contains("CONTRACT §3"), "{err}");
    let err = signature(
        "void f(double *x) { x[0] = 1; }\n",
        "void g_d(double *x, double *xd) { x[0] = 1; xd[0] = 0; }\n",
    )
    .unwrap_err();
    assert!(err.to_string().contains("no 'f_d'"), "{err}");
}

/// `aioli check` on a file named without a directory that includes a local
/// header: the derivative files, written elsewhere, find the header in the
/// original's directory (the current one).
#[test]
fn a_local_header_is_found_for_a_file_in_the_current_directory() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("sqr.h"), "#define SQR(a) ((a) * (a))\n").unwrap();
    std::fs::write(
        dir.path().join("sqr.c"),
        "#include \"sqr.h\"\ndouble f(const double *x)\n{\n    return SQR(x[0]);\n}\n",
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_aioli"))
        .current_dir(dir.path())
        .args([
            "check",
            "sqr.c",
            "--head",
            "f(f)/(x)",
            "--domain",
            "x[1]=[0.5,1]",
        ])
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("PASSED"), "{text}");
}

/// Runs `aioli check` on `source`, written as `NAME.c` in a new directory;
/// whether it exited with 0, and what it printed (stdout, then stderr).
fn aioli_check(name: &str, source: &str, head: &str, domain: &str, mode: &str) -> (bool, String) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(format!("{name}.c"));
    std::fs::write(&file, source).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_aioli"))
        .arg("check")
        .arg(&file)
        .args(["--head", head, "--domain", domain, "--mode", mode])
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), text)
}

// ---------------------------------------------------------------------------
// A bare head (`--head f`) and globals
// ---------------------------------------------------------------------------

/// `g` is written by a callee, `tmp` written before it is read, `scale`
/// only read, `half` const; `f` returns nothing and has no pointer.
const GLOBALS_PROGRAM: &str = "double g;\ndouble tmp;\ndouble scale = 2.0;\nconst double half = 0.5;\n\nstatic void store(double v)\n{\n    g = v;\n}\n\nvoid f(double x)\n{\n    tmp = x * scale;\n    store(tmp * tmp * half);\n}\n";

#[test]
fn a_bare_head_takes_the_globals_the_procedure_reads_and_writes() {
    use aioli::analysis::head::HeadVar;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("globals.c");
    std::fs::write(&file, GLOBALS_PROGRAM).unwrap();
    let loaded = load(&file);
    let p = &loaded.program;
    let head = parse_head(p, "f").unwrap();
    let names = |vs: &[HeadVar]| -> Vec<String> {
        vs.iter()
            .map(|v| match *v {
                HeadVar::Param(s) | HeadVar::Global(s) => p.sym(s).name.clone(),
                HeadVar::Result => "(result)".to_string(),
            })
            .collect()
    };
    // Written, also through a callee: outputs. Read before written: an
    // input; `tmp` is only read after `f` writes it, `half` is const.
    assert_eq!(names(&head.dependents), ["g", "tmp"]);
    assert_eq!(names(&head.independents), ["x", "scale"]);
    assert!(matches!(head.dependents[0], HeadVar::Global(_)));
}

#[test]
fn a_bare_head_checks_the_globals_it_writes() {
    let (ok, text) = aioli_check("globals", GLOBALS_PROGRAM, "f", "x=[0.5,1]", "both");
    assert!(ok, "{text}");
    assert!(!text.contains("nothing was compared"), "{text}");
    assert!(!text.contains("FAILED"), "{text}");
    // Both dependents, in the tangent table and in the adjoint table.
    for dep in ["g", "tmp"] {
        let rows = text
            .lines()
            .filter(|l| l.trim_start().starts_with(&format!("{dep} ")))
            .count();
        assert_eq!(rows, 2, "{dep}:\n{text}");
    }
}

// ---------------------------------------------------------------------------
// Single precision
// ---------------------------------------------------------------------------

#[test]
fn single_precision_code_is_compared_with_its_own_steps() {
    let original = fixture("unitvec.c");
    let loaded = load(&original);
    let f = loaded.program.proc_by_name("unitvec").unwrap();
    assert_eq!(Precision::of(&loaded.program, f), Precision::Single);
    let polar = load(&fixture("polar.c"));
    let g = polar.program.proc_by_name("polar").unwrap();
    assert_eq!(Precision::of(&polar.program, g), Precision::Double);
    // A `float` literal in double code is a constant: still double, with
    // double's thresholds; a cast to float is not.
    let dir = tempfile::tempdir().unwrap();
    for (name, body, precision) in [
        ("literal.c", "return x * 1.5F + 0.25f;", Precision::Double),
        ("cast.c", "return (float)x * 1.5;", Precision::Single),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, format!("double h(double x)\n{{\n    {body}\n}}\n")).unwrap();
        let loaded = load(&path);
        let h = loaded.program.proc_by_name("h").unwrap();
        assert_eq!(Precision::of(&loaded.program, h), precision, "{body}");
    }

    let opts = TangentCheckOptions {
        min_digits: Precision::Single.min_digits(),
        ..options()
    };
    let r = check_with("unitvec", "unitvec_d.c", &opts).unwrap();
    println!("{r}");
    // Correct to float precision: with double precision's steps (1e-3 and
    // below) its divided differences agreed to 2.3 digits only.
    assert!(r.passed, "{r}");
    let d = &r.dependents[0];
    assert!(d.digits >= 3.0, "{d:?}");
    assert!(SINGLE_STEPS.contains(&d.best_step), "{d:?}");
    assert!(
        r.notes.iter().any(|n| n.contains("single precision")),
        "{:?}",
        r.notes
    );
    // Double precision keeps its own steps.
    let r = check("polar");
    assert!(STEPS.contains(&r.dependents[0].best_step), "{r}");
    assert!(r.notes.is_empty(), "{:?}", r.notes);
}

/// In single precision each element is compared at its own best step: an
/// output rounded through a float agrees at 3e-2, a double output next to
/// a branch only at 1e-6, which crosses the branch at every step the
/// float output can use (before, the dependent failed at 0.7 digits). A
/// tangent wrong by 2.5% on the double output still fails.
#[test]
fn single_precision_elements_take_their_own_steps() {
    let opts = TangentCheckOptions {
        min_digits: Precision::Single.min_digits(),
        ..options()
    };
    let r = check_with("float_one_output", "float_one_output_d.c", &opts).unwrap();
    println!("{r}");
    assert!(r.passed, "{r}");
    assert!(r.dependents[0].digits >= 3.0, "{r}");
    let dir = tempfile::tempdir().unwrap();
    let right = std::fs::read_to_string(fixture("float_one_output_d.c")).unwrap();
    let wrong = right.replace("yd[1] = 4.0 * (xd * x);", "yd[1] = 4.1 * (xd * x);");
    assert_ne!(wrong, right);
    let wrong_path = dir.path().join("float_one_output_d.c");
    std::fs::write(&wrong_path, wrong).unwrap();
    let original = fixture("float_one_output.c");
    let loaded = load(&original);
    let config = common::config(&original);
    let head: Head = parse_head(&loaded.program, &config.head).unwrap();
    let domain = Domain::parse(&config.domain).unwrap();
    let r = check_tangent(
        &original,
        &loaded.program,
        &head,
        &domain,
        &wrong_path,
        &opts,
    )
    .unwrap();
    println!("{r}");
    assert!(!r.passed, "{r}");
}

#[test]
fn a_float_tangent_wrong_by_one_percent_fails() {
    let dir = tempfile::tempdir().unwrap();
    let right = std::fs::read_to_string(fixture("unitvec_d.c")).unwrap();
    let wrong = right.replace(
        "outd[i] = (xd[i] - x[i] / r * rd) / r;",
        "outd[i] = 1.01f * (xd[i] - x[i] / r * rd) / r;",
    );
    assert_ne!(wrong, right);
    let tangent = dir.path().join("unitvec_d.c");
    std::fs::write(&tangent, wrong).unwrap();
    let original = fixture("unitvec.c");
    let config = common::config(&original);
    let loaded = load(&original);
    let head = parse_head(&loaded.program, &config.head).unwrap();
    let domain = Domain::parse(&config.domain).unwrap();
    let opts = TangentCheckOptions {
        min_digits: Precision::Single.min_digits(),
        ..options()
    };
    let r = check_tangent(&original, &loaded.program, &head, &domain, &tangent, &opts).unwrap();
    println!("{r}");
    assert!(!r.passed, "{r}");
    assert!(r.dependents[0].digits < 2.5, "{r}");
}

// ---------------------------------------------------------------------------
// Parameters declared as arrays of arrays
// ---------------------------------------------------------------------------

#[test]
fn a_two_dimensional_array_parameter_is_checked() {
    let source = "double det(double A[2][2])\n{\n    return A[0][0] * A[1][1] - A[0][1] * A[1][0];\n}\n\nvoid mul(int n, const double A[][2], float B[2][2])\n{\n    for (int i = 0; i < 2; i++)\n        for (int j = 0; j < 2; j++)\n            B[i][j] = (float)(A[i][j] * A[j][i] * n);\n}\n";
    let (ok, text) = aioli_check("mat", source, "det(det)/(A)", "A[4]=[0.5,1]", "both");
    assert!(ok, "{text}");
    assert_eq!(text.matches("PASSED").count(), 2, "{text}");
    let (ok, text) = aioli_check(
        "mat",
        source,
        "mul(B)/(A)",
        "n=2 A[4]=[0.5,1] B[4]=[0,0]",
        "tangent",
    );
    assert!(ok, "{text}");
    assert!(text.contains("PASSED"), "{text}");
    // The domain gives whole rows.
    let (ok, text) = aioli_check("mat", source, "det(det)/(A)", "A[3]=[0.5,1]", "tangent");
    assert!(!ok, "{text}");
    assert!(text.contains("double (*)[2]"), "{text}");
    assert!(text.contains("multiple of 2"), "{text}");
}

#[test]
fn an_unsupported_parameter_type_is_spelled_in_c() {
    let (ok, text) = aioli_check(
        "pp",
        "double h(double **p)\n{\n    return p[0][0];\n}\n",
        "h(h)/(p)",
        "p[1]=[0,1]",
        "tangent",
    );
    assert!(!ok, "{text}");
    assert!(text.contains("has type double **,"), "{text}");
    assert!(!text.contains("type ?"), "{text}");
}

// ---------------------------------------------------------------------------
// A struct result, on aioli's own derivatives
// ---------------------------------------------------------------------------

#[test]
fn a_struct_result_is_checked_in_both_modes() {
    let source = "#include <math.h>\n\ntypedef struct {\n    double a, b;\n} AB;\n\nAB rotate(AB v, double th)\n{\n    AB r;\n    r.a = cos(th) * v.a - sin(th) * v.b;\n    r.b = sin(th) * v.a + cos(th) * v.b;\n    return r;\n}\n";
    let (ok, text) = aioli_check(
        "rot",
        source,
        "rotate(rotate)/(v th)",
        "v.a=[0.5,1] v.b=[0.5,1] th=[0,1]",
        "both",
    );
    assert!(ok, "{text}");
    assert_eq!(text.matches("PASSED").count(), 2, "{text}");
    assert!(!text.contains("CONTRACT"), "{text}");
}

#[test]
fn a_struct_result_with_integer_and_array_fields_is_checked() {
    let source = "typedef struct {\n    double a;\n    int k;\n    double c[2];\n} R;\n\nR mk(const double *x, double p, int k)\n{\n    R r;\n    r.a = x[0] * x[1];\n    r.k = k;\n    r.c[0] = x[1] * x[1];\n    r.c[1] = p;\n    return r;\n}\n";
    let (ok, text) = aioli_check(
        "mk",
        source,
        "mk(mk)/(x)",
        "x[2]=[0.5,1] p=[0,1] k=3",
        "tangent",
    );
    assert!(ok, "{text}");
    assert!(text.contains("PASSED"), "{text}");
}

/// With several heads, each takes the domain entries naming its own
/// parameters and the globals (CONTRACT §6); an entry naming neither is
/// an error.
#[test]
fn several_heads_share_one_domain() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("two.c");
    std::fs::write(
        &file,
        "double k = 1.0;\n\
         void g(const double *x, double *y)\n{\n    *y = k * x[0] * x[0];\n}\n\
         double h(double s)\n{\n    return k * s * s * s;\n}\n",
    )
    .unwrap();
    let run = |domain: &str| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_aioli"))
            .arg("check")
            .arg(&file)
            .args(["--head", "g(y)/(x)", "--head", "h(h)/(s)", "--mode", "both"])
            .args(["--domain", domain])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string()
            + &String::from_utf8_lossy(&out.stderr);
        (out.status.success(), text)
    };
    let (ok, text) = run("x[1]=[0.5,1] y[1]=[0,0] s=[0.5,1]");
    assert!(ok, "{text}");
    assert_eq!(text.matches("PASSED").count(), 4, "{text}");
    let (ok, text) = run("x[1]=[0.5,1] y[1]=[0,0] s=[0.5,1] k=[1,2]");
    assert!(ok, "{text}");
    assert_eq!(text.matches("PASSED").count(), 4, "{text}");
    let (ok, text) = run("x[1]=[0.5,1] y[1]=[0,0] s=[0.5,1] q=1");
    assert!(!ok);
    assert!(
        text.contains("'q', which is neither a parameter of a head nor a global"),
        "{text}"
    );
}

/// A tangent that forgot a derivative field (`Grid_d` without `u`, the
/// data behind the struct's pointer member) fails: the check perturbs
/// every real element of the independents, not only those the tangent
/// has derivatives for, so divided differences see what it left out.
#[test]
fn a_forgotten_derivative_field_fails() {
    let r = check("grid");
    assert!(r.passed, "{r}");
    let dir = tempfile::tempdir().unwrap();
    let right = std::fs::read_to_string(fixture("grid_d.c")).unwrap();
    let forgot = right
        .replace(
            "typedef struct {\n    double w;\n    double *u;\n} Grid_d;",
            "typedef struct {\n    double w;\n} Grid_d;",
        )
        .replace(
            "(gd->w * g->u[0] + g->w * gd->u[0]) * g->u[1] + g->w * g->u[0] * gd->u[1]",
            "gd->w * g->u[0] * g->u[1]",
        );
    assert_ne!(forgot, right);
    let tangent = dir.path().join("grid_d.c");
    std::fs::write(&tangent, forgot).unwrap();
    let r = check_with("grid", tangent.to_str().unwrap(), &options()).unwrap();
    assert!(!r.passed, "{r}");
}

/// A global array of arrays that the head accumulates into (`g[i][j] +=`,
/// after a helper cleared it) has a derivative global `gd[2][2]` that the
/// driver must zero before every call, as it does a one-dimensional one:
/// it was left alone ("neither a real nor an array of reals"), so the
/// derivatives of successive calls piled up and both checks failed.
#[test]
fn a_two_dimensional_derivative_global_is_zeroed_between_calls() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("grid2.c");
    std::fs::write(
        &path,
        "double g[2][2];\n\nstatic void clear(void)\n{\n    for (int i = 0; i < 2; i++)\n        \
         for (int j = 0; j < 2; j++) g[i][j] = 0.0;\n}\n\n\
         void f(const double *x, double *s)\n{\n    clear();\n    for (int i = 0; i < 2; i++)\n        \
         for (int j = 0; j < 2; j++) g[i][j] += x[i] * x[j];\n    \
         *s = g[0][0] + g[0][1] + g[1][0] + g[1][1];\n}\n",
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_aioli"))
        .arg("check")
        .arg(&path)
        .args(["--head", "f(s)/(x)", "--domain", "x[2]=[0.5,2] s[1]=[0,0]"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    assert!(!text.contains("not zeroed"), "{text}");
}
