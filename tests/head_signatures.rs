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
    let d = dir.path();
    let source = d.join("passive.c");
    std::fs::write(&source, PROGRAM).unwrap();
    let out = d.to_str().unwrap();
    for mode in ["tangent", "adjoint"] {
        let run = Command::new(env!("CARGO_BIN_EXE_aioli"))
            .args([
                mode,
                source.to_str().unwrap(),
                "--head",
                "f(f)/(x)",
                "--out",
                out,
            ])
            .output()
            .unwrap();
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
    }
    let runtime = Command::new(env!("CARGO_BIN_EXE_aioli"))
        .args(["runtime", "--out", out])
        .output()
        .unwrap();
    assert!(runtime.status.success());
    let driver = d.join("main.c");
    std::fs::write(&driver, DRIVER).unwrap();
    let exe = d.join("passive");
    let strict = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-I", out];
    let sources = [
        source.as_path(),
        &d.join("passive_d.c"),
        &d.join("passive_b.c"),
        &d.join("aioli.c"),
        &driver,
    ];
    common::compile(&strict, &sources, &exe).unwrap();
    let run = Command::new(&exe).output().unwrap();
    assert!(run.status.success());
    assert_eq!(String::from_utf8_lossy(&run.stdout), "0 9 0\n");
}
