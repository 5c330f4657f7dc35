//! CONTRACT §3 holds for a head whatever the analyses find: a result
//! named as a dependent is returned by `f_d` (the primal through an extra
//! `double *f`) and taken by `f_b` as `double fb`, even when it depends on
//! no independent (its derivative is then zero). It once came back as the
//! primal value from `f_d`, read by a caller as the derivative.

mod common;

use std::process::Command;

const PROGRAM: &str = "\
double f(double x, double a)
{
    (void)x;
    return a * a;
}
";

const DRIVER: &str = "\
#include <stdio.h>
double f_d(double x, double xd, double a, double *f);
void f_b(double x, double *xb, double a, double fb);
int main(void)
{
    double primal = 0.0, xb = 0.0;
    double d = f_d(0.5, 1.0, 3.0, &primal);
    f_b(0.5, &xb, 3.0, 1.0);
    printf(\"%g %g %g\\n\", d, primal, xb);
    return 0;
}
";

#[test]
fn a_passive_result_keeps_its_derivative_in_the_signature() {
    let dir = tempfile::tempdir().unwrap();
    let (stdout, _) = link_and_run(dir.path(), "passive", PROGRAM, "f(f)/(x)", DRIVER);
    assert_eq!(stdout, "0 9 0\n");
}

/// Writes `STEM.c`, differentiates it in both modes with `head`, builds
/// it with both outputs, the runtime and `driver` (`-Werror`), runs it:
/// its standard output, and what the tool printed on standard error.
fn link_and_run(
    d: &std::path::Path,
    stem: &str,
    program: &str,
    head: &str,
    driver: &str,
) -> (String, String) {
    let source = d.join(format!("{stem}.c"));
    std::fs::write(&source, program).unwrap();
    let out = d.to_str().unwrap();
    let mut stderr = String::new();
    for mode in ["tangent", "adjoint"] {
        let run = Command::new(env!("CARGO_BIN_EXE_aioli"))
            .args([mode, source.to_str().unwrap(), "--head", head, "--out", out])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&run.stderr);
        assert!(run.status.success(), "{text}");
        stderr.push_str(&text);
    }
    let runtime = Command::new(env!("CARGO_BIN_EXE_aioli"))
        .args(["runtime", "--out", out])
        .output()
        .unwrap();
    assert!(runtime.status.success());
    let main = d.join("main.c");
    std::fs::write(&main, driver).unwrap();
    let exe = d.join(stem);
    let strict = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-I", out];
    let sources = [
        source.as_path(),
        &d.join(format!("{stem}_d.c")),
        &d.join(format!("{stem}_b.c")),
        &d.join("aioli.c"),
        &main,
    ];
    common::compile(&strict, &sources, &exe).unwrap();
    let run = Command::new(&exe).output().unwrap();
    assert!(run.status.success());
    (String::from_utf8_lossy(&run.stdout).into_owned(), stderr)
}

/// A global pointer named in the head stands for the memory it points to,
/// as a pointer parameter does: its derivative is a global pointer of the
/// output (`fieldd`, `fieldb`, CONTRACT §2) that the caller points at a
/// derivative buffer. It was once taken for the pointer itself, which
/// holds no real, and the derivative came out zero.
#[test]
fn a_global_pointer_in_the_head_stands_for_its_target() {
    let program = "\
double *field; /* the caller's data */
double *out;
double model(double x)
{
    out[0] = x * field[0] + field[1] * field[1];
    return out[0] * x;
}
";
    let driver = "\
#include <math.h>
#include <stdio.h>
extern double *field, *out, *fieldd, *outd, *fieldb, *outb;
double model(double x);
double model_d(double x, double xd, double *model);
void model_b(double x, double *xb, double modelb);
int main(void)
{
    double f[2] = {0.5, 2.0}, o[1] = {0.0}, fd[2] = {0.7, -1.1}, od[1] = {0.0};
    double fb[2] = {0.0, 0.0}, ob[1] = {0.25}, primal = 0.0, xb = 0.0;
    double x = 1.5, xd = 0.3;
    field = f; out = o; fieldd = fd; outd = od; fieldb = fb; outb = ob;
    double d = model_d(x, xd, &primal);
    double o0 = x * f[0] + f[1] * f[1];
    double o0d = xd * f[0] + x * fd[0] + 2.0 * f[1] * fd[1];
    int ok = fabs(primal - o0 * x) < 1e-12 && fabs(od[0] - o0d) < 1e-12
        && fabs(d - (o0d * x + o0 * xd)) < 1e-12;
    model_b(x, &xb, 1.0);
    double o0b = 0.25 + x;
    ok = ok && fabs(xb - (o0 + f[0] * o0b)) < 1e-12 && fabs(fb[0] - x * o0b) < 1e-12
        && fabs(fb[1] - 2.0 * f[1] * o0b) < 1e-12;
    printf(\"%s\\n\", ok ? \"ok\" : \"wrong\");
    return 0;
}
";
    let dir = tempfile::tempdir().unwrap();
    let (stdout, stderr) = link_and_run(
        dir.path(),
        "gp",
        program,
        "model(model out)/(x field)",
        driver,
    );
    assert!(!stderr.contains("warning"), "{stderr}");
    let tangent = std::fs::read_to_string(dir.path().join("gp_d.c")).unwrap();
    assert!(tangent.contains("double *fieldd;"), "{tangent}");
    assert_eq!(stdout, "ok\n");
}
