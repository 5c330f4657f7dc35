//! The adjoint check (`check::adjoint`) on hand-written derivatives: each
//! fixture `tests/fixtures/adjcheck/NAME.c` has its tangent in `NAME_d.c`
//! and its adjoint in `NAME_b.c`, written after CONTRACT §2-3;
//! `arr_wrong_b.c` is deliberately wrong. Compiles and runs with `cc`.

mod common;

use aioli::analysis::head::{Head, parse_head};
use aioli::check::adjoint::{
    AdjointCheck, AdjointCheckOptions, AdjointParam, CheckError, DEFAULT_MAX_REL_ERR, check_adjoint,
};
use aioli::front::{self, Loaded};
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    common::fixture_dir("adjcheck").join(name)
}

fn load(path: &Path) -> Loaded {
    front::load(path, &Default::default())
        .unwrap_or_else(|(s, d)| panic!("{}", front::diag::render(&s, &d)))
}

/// Options for tests: a short time budget (no timing is asserted).
fn options() -> AdjointCheckOptions {
    AdjointCheckOptions {
        cc: common::cc(),
        time_budget_ms: 40,
        ..Default::default()
    }
}

/// Checks `NAME.c` (its pragma's head and domain) against the given
/// tangent and adjoint files.
fn check_with(
    name: &str,
    tangent: &Path,
    adjoint: &Path,
    options: &AdjointCheckOptions,
) -> Result<AdjointCheck, CheckError> {
    let original = fixture(&format!("{name}.c"));
    let config = common::config(&original);
    let loaded = load(&original);
    let head: Head = parse_head(&loaded.program, &config.head).unwrap();
    let domain = aioli::check::domain::Domain::parse(&config.domain).unwrap();
    check_adjoint(
        &original,
        &loaded.program,
        &head,
        &domain,
        tangent,
        adjoint,
        options,
    )
}

fn check(name: &str) -> AdjointCheck {
    check_with(
        name,
        &fixture(&format!("{name}_d.c")),
        &fixture(&format!("{name}_b.c")),
        &options(),
    )
    .unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// A correct adjoint passes: every dependent and all of them together
/// agree with the tangent to round-off, and R_a was measured.
fn assert_passes(name: &str, dependents: &[&str]) -> AdjointCheck {
    let r = check(name);
    println!("{r}");
    assert!(r.passed, "{name}:\n{r}");
    let names: Vec<&str> = r.dependents.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, dependents, "{name}");
    for d in r.dependents.iter().chain([&r.overall]) {
        assert!(d.rel_err < DEFAULT_MAX_REL_ERR, "{name}: {d:?}");
        assert!(d.digits >= 10.0, "{name}: {d:?}");
        assert!(d.dd_digits >= 6.0, "{name}: {d:?}");
        assert!(d.has_adjoint, "{name}: {d:?}");
    }
    assert!(
        r.r_a.is_some_and(|r| r > 0.0 && r.is_finite()),
        "{name}: {r}"
    );
    assert!(r.to_string().contains("PASSED"), "{r}");
    r
}

#[test]
fn reals_by_value_and_a_result() {
    let r = assert_passes("scal", &["scal"]);
    use AdjointParam::*;
    assert_eq!(
        r.signature.params,
        vec![Primal(0), Adjoint(0), Primal(1), Adjoint(1), ResultAdjoint]
    );
    assert_eq!(r.overall.elements, 1);
}

#[test]
fn a_struct_result_by_value() {
    // rotate_b takes the result's adjoint as `AB_b rotateb`, by value.
    let r = assert_passes("rot", &["rotate"]);
    use AdjointParam::*;
    assert_eq!(
        r.signature.params,
        vec![Primal(0), Adjoint(0), Primal(1), Adjoint(1), ResultAdjoint]
    );
    // `a` and `b`; `turns` is an integer.
    assert_eq!(r.overall.elements, 2);
}

#[test]
fn a_struct_result_adjoint_that_drops_a_field_fails() {
    let dir = tempfile::tempdir().unwrap();
    let right = std::fs::read_to_string(fixture("rot_b.c")).unwrap();
    let wrong = right.replace(" + (c * v.a - s * v.b) * rotateb.b;", ";");
    assert_ne!(wrong, right);
    let adjoint = dir.path().join("rot_b.c");
    std::fs::write(&adjoint, wrong).unwrap();
    let r = check_with("rot", &fixture("rot_d.c"), &adjoint, &options()).unwrap();
    println!("{r}");
    assert!(!r.passed, "{r}");
    assert!(r.overall.digits < 3.0, "{r}");
}

#[test]
fn arrays_with_the_runtime_stack() {
    let r = assert_passes("arr", &["y"]);
    assert_eq!(r.dependents[0].elements, 6);
    // arr_b pushes one double per element: 6 × 8 bytes, all on the stack
    // at once.
    assert_eq!(r.pushed_bytes, Some(48), "{r}");
    assert_eq!(r.peak_bytes, Some(48), "{r}");
    assert!(r.to_string().contains("48 bytes pushed"), "{r}");
}

/// An old `aioli.h` next to the user's file (a runtime written there by an
/// earlier `aioli runtime --out .`) does not stand in for the runtime the
/// check writes: the adjoint file, elsewhere, includes the check's.
#[test]
fn a_stale_runtime_header_next_to_the_source_is_not_used() {
    let user = tempfile::tempdir().unwrap();
    let generated = tempfile::tempdir().unwrap();
    let original = user.path().join("arr.c");
    std::fs::copy(fixture("arr.c"), &original).unwrap();
    std::fs::write(
        user.path().join("aioli.h"),
        "#error \"a stale runtime header was included\"\n",
    )
    .unwrap();
    let tangent = generated.path().join("arr_d.c");
    let adjoint = generated.path().join("arr_b.c");
    std::fs::copy(fixture("arr_d.c"), &tangent).unwrap();
    std::fs::copy(fixture("arr_b.c"), &adjoint).unwrap();
    let config = common::config(&original);
    let loaded = load(&original);
    let head: Head = parse_head(&loaded.program, &config.head).unwrap();
    let domain = aioli::check::domain::Domain::parse(&config.domain).unwrap();
    let r = check_adjoint(
        &original,
        &loaded.program,
        &head,
        &domain,
        &tangent,
        &adjoint,
        &options(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(r.passed, "{r}");
}

#[test]
fn struct_by_pointer_in_and_out() {
    let r = assert_passes("cloud", &["e", "p"]);
    // p: 3 points × (x, w[2]).
    assert_eq!(r.dependents[1].elements, 9);
    assert_eq!(r.overall.elements, 10);
}

#[test]
fn global_dependent_and_independent() {
    let r = assert_passes("glob", &["total"]);
    assert!(r.notes.is_empty(), "{:?}", r.notes);
}

#[test]
fn a_wrong_adjoint_fails() {
    let r = check_with(
        "arr",
        &fixture("arr_d.c"),
        &fixture("arr_wrong_b.c"),
        &options(),
    )
    .unwrap();
    println!("{r}");
    assert!(!r.passed, "{r}");
    let y = &r.dependents[0];
    assert!(y.rel_err > 1e-3, "{y:?}");
    assert!(y.digits < 3.0, "{y:?}");
    assert!(y.dd_digits < 3.0, "{y:?}");
    let text = r.to_string();
    assert!(text.contains("FAILED"), "{text}");
    assert!(text.contains("<-- FAILS"), "{text}");
}

/// Writes `text` as an adjoint file and checks `scal` against it.
fn check_scal_against(text: &str) -> Result<AdjointCheck, CheckError> {
    let dir = tempfile::tempdir().unwrap();
    let adjoint = dir.path().join("scal_b.c");
    std::fs::write(&adjoint, text).unwrap();
    check_with("scal", &fixture("scal_d.c"), &adjoint, &options())
}

#[test]
fn a_by_value_adjoint_is_a_signature_error() {
    // `double yb` instead of `double *yb`: CONTRACT §3 puts the adjoint of
    // a real passed by value behind a pointer.
    let err = check_scal_against(
        "#include <math.h>\nvoid scal_b(double x, double *xb, double y, double yb, double scalb)\n{\n    *xb += scalb * x;\n    (void)y; (void)yb;\n}\n",
    )
    .unwrap_err();
    assert!(matches!(err, CheckError::Signature(_)), "{err}");
    let text = err.to_string();
    assert!(text.contains("CONTRACT §3"), "{text}");
    assert!(text.contains("scal_b(x, xb, y, yb, scalb)"), "{text}");
}

#[test]
fn an_adjoint_returning_a_value_is_a_signature_error() {
    let err = check_scal_against(
        "double scal_b(double x, double *xb, double y, double *yb, double scalb)\n{\n    *xb += scalb; *yb += scalb;\n    return x + y;\n}\n",
    )
    .unwrap_err();
    assert!(matches!(err, CheckError::Signature(_)), "{err}");
    assert!(err.to_string().contains("must return void"), "{err}");
}

#[test]
fn a_missing_adjoint_procedure_is_a_signature_error() {
    let err = check_scal_against("void other_b(double x, double *xb)\n{\n    *xb += x;\n}\n")
        .unwrap_err();
    assert!(matches!(err, CheckError::Signature(_)), "{err}");
    assert!(err.to_string().contains("no 'scal_b'"), "{err}");
}

#[test]
fn an_unreadable_adjoint_is_reported_with_its_location() {
    let err = check_scal_against(
        "void scal_b(double x, double *xb, double y, double *yb, double scalb)\n{\n    *xb += nowhere;\n}\n",
    )
    .unwrap_err();
    assert!(matches!(err, CheckError::AdjointFile(_)), "{err}");
    assert!(err.to_string().contains("scal_b.c:3:"), "{err}");
}

#[test]
fn an_adjoint_ignoring_the_result_weight_fails() {
    // Signature right, body forgets `scalb` for y: the dot product sees it.
    let r = check_scal_against(
        "#include <math.h>\nvoid scal_b(double x, double *xb, double y, double *yb, double scalb)\n{\n    double e = exp(x * y);\n    *xb += (2.0 * x * sin(y) + y * e) * scalb;\n    *yb += x * x * cos(y) + x * e;\n}\n",
    )
    .unwrap();
    assert!(!r.passed, "{r}");
}

#[test]
fn zero_time_budget_skips_timing_and_the_directory_can_be_kept() {
    let dir = tempfile::tempdir().unwrap();
    let opts = AdjointCheckOptions {
        time_budget_ms: 0,
        points: 1,
        keep_dir: Some(dir.path().to_path_buf()),
        ..options()
    };
    let r = check_with("cloud", &fixture("cloud_d.c"), &fixture("cloud_b.c"), &opts).unwrap();
    assert!(r.passed, "{r}");
    assert_eq!(r.r_a, None);
    assert!(r.to_string().contains("R_a not measured"), "{r}");
    let driver = std::fs::read_to_string(dir.path().join("driver.c")).unwrap();
    assert!(driver.contains("cloud_b("), "{driver}");
    assert!(driver.contains("Pt_b"), "{driver}");
    assert!(dir.path().join("aioli.h").exists());
    assert!(dir.path().join("aioli.c").exists());
}
