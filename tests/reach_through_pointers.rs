//! A head's independents and dependents are all the real memory its
//! parameters reach, through every level of pointers: `a[i][j]` of a
//! `double **a`, and `g->u[i]` of a struct passed by pointer whose member
//! points to the data. Both once came out silently passive (a zero
//! derivative with only a warning). `aioli check` cannot build a driver
//! for `double **`, so this test writes its own: the tangent against
//! central divided differences, the adjoint by the dot-product test.

mod common;

use std::path::Path;
use std::process::Command;

const PROGRAM: &str = "\
#include <math.h>
typedef struct { int n; double *u; } Grid;
/* rows[i][j] and g->u[i] are both read and written */
void f(int n, double **rows, Grid *g, double *y)
{
    for (int i = 0; i < n; i++) {
        y[i] = rows[i][0] * rows[i][1] + sin(g->u[i]);
        rows[i][1] = rows[i][0] * g->u[i];
        g->u[i] = exp(0.1 * rows[i][1]);
    }
}
";

const DRIVER: &str = "\
#include <stdio.h>
#include <math.h>
typedef struct { int n; double *u; } Grid;
typedef struct { double *u; } Grid_d;
typedef struct { double *u; } Grid_b;
void f(int n, double **rows, Grid *g, double *y);
void f_d(int n, double **rows, double **rowsd, Grid *g, Grid_d *gd, double *y, double *yd);
void f_b(int n, double **rows, double **rowsb, Grid *g, Grid_b *gb, double *y, double *yb);
#define N 3
/* The state: rows (N x 2), g->u (N), y (N), packed as 3N+... reals. */
static double r0[N][2], u0[N];
static void run(const double *x, double *out)
{
    double r[N][2], u[N], y[N];
    double *rows[N];
    Grid g = {N, u};
    for (int i = 0; i < N; i++) { r[i][0] = x[2*i]; r[i][1] = x[2*i+1]; u[i] = x[2*N+i]; rows[i] = r[i]; }
    f(N, rows, &g, y);
    for (int i = 0; i < N; i++) { out[i] = y[i]; out[N+2*i] = r[i][0]; out[N+2*i+1] = r[i][1]; out[3*N+i] = u[i]; }
}
int main(void)
{
    double x[3*N], dx[3*N], ybar[4*N];
    for (int i = 0; i < N; i++) { r0[i][0] = 0.3 + 0.1*i; r0[i][1] = -0.2 + 0.25*i; u0[i] = 0.5 - 0.15*i; }
    for (int i = 0; i < N; i++) { x[2*i] = r0[i][0]; x[2*i+1] = r0[i][1]; x[2*N+i] = u0[i]; }
    for (int k = 0; k < 3*N; k++) dx[k] = 0.7 - 0.11*k;
    for (int k = 0; k < 4*N; k++) ybar[k] = 0.4 + 0.09*k;
    /* tangent */
    double r[N][2], rd[N][2], u[N], ud[N], y[N], yd[N];
    double *rows[N], *rowsd[N];
    Grid g = {N, u};
    Grid_d gd = {ud};
    for (int i = 0; i < N; i++) {
        r[i][0] = x[2*i]; r[i][1] = x[2*i+1]; u[i] = x[2*N+i];
        rd[i][0] = dx[2*i]; rd[i][1] = dx[2*i+1]; ud[i] = dx[2*N+i];
        rows[i] = r[i]; rowsd[i] = rd[i]; yd[i] = 0.0;
    }
    f_d(N, rows, rowsd, &g, &gd, y, yd);
    double tan[4*N];
    for (int i = 0; i < N; i++) { tan[i] = yd[i]; tan[N+2*i] = rd[i][0]; tan[N+2*i+1] = rd[i][1]; tan[3*N+i] = ud[i]; }
    double worst = 0.0, h = 1e-6;
    double xp[3*N], xm[3*N], op[4*N], om[4*N];
    for (int k = 0; k < 3*N; k++) { xp[k] = x[k] + h*dx[k]; xm[k] = x[k] - h*dx[k]; }
    run(xp, op); run(xm, om);
    for (int k = 0; k < 4*N; k++) {
        double dd = (op[k] - om[k]) / (2*h);
        double err = fabs(dd - tan[k]) / (1.0 + fabs(dd));
        if (err > worst) worst = err;
    }
    /* adjoint: inputs x at their values, adjoints of the outputs ybar */
    double rb[N][2], ub[N], yb[N];
    double *rowsb[N];
    Grid_b gb = {ub};
    for (int i = 0; i < N; i++) {
        r[i][0] = x[2*i]; r[i][1] = x[2*i+1]; u[i] = x[2*N+i];
        yb[i] = ybar[i]; rb[i][0] = ybar[N+2*i]; rb[i][1] = ybar[N+2*i+1]; ub[i] = ybar[3*N+i];
        rows[i] = r[i]; rowsb[i] = rb[i];
    }
    f_b(N, rows, rowsb, &g, &gb, y, yb);
    double lhs = 0.0, rhs = 0.0;
    for (int k = 0; k < 4*N; k++) lhs += ybar[k] * tan[k];
    for (int i = 0; i < N; i++) rhs += rb[i][0]*dx[2*i] + rb[i][1]*dx[2*i+1] + ub[i]*dx[2*N+i];
    printf(\"%.3e %.3e\\n\", worst, fabs(lhs - rhs) / fabs(lhs));
    return 0;
}
";

fn aioli(args: &[&str]) {
    let out = Command::new(env!("CARGO_BIN_EXE_aioli"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "aioli {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("warning"), "aioli {args:?}: {stderr}");
}

#[test]
fn pointer_to_pointer_and_struct_member_data_are_active() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let source = d.join("reach.c");
    std::fs::write(&source, PROGRAM).unwrap();
    let out = d.to_str().unwrap();
    let head = "f(y rows g)/(rows g)";
    aioli(&[
        "tangent",
        source.to_str().unwrap(),
        "--head",
        head,
        "--out",
        out,
    ]);
    aioli(&[
        "adjoint",
        source.to_str().unwrap(),
        "--head",
        head,
        "--out",
        out,
    ]);
    aioli(&["runtime", "--out", out]);
    let tangent = std::fs::read_to_string(d.join("reach_d.c")).unwrap();
    assert!(tangent.contains("double **rowsd"), "{tangent}");
    let driver = d.join("main.c");
    std::fs::write(&driver, DRIVER).unwrap();
    let exe = d.join("reach");
    let strict = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-I", out];
    let sources: [&Path; 5] = [
        &source,
        &d.join("reach_d.c"),
        &d.join("reach_b.c"),
        &d.join("aioli.c"),
        &driver,
    ];
    common::compile(&strict, &sources, &exe).unwrap();
    let run = Command::new(&exe).output().unwrap();
    assert!(run.status.success());
    let text = String::from_utf8_lossy(&run.stdout);
    let errors: Vec<f64> = text
        .split_whitespace()
        .map(|w| w.parse().unwrap())
        .collect();
    assert!(
        errors[0] < 1e-7,
        "tangent against divided differences: {text}"
    );
    assert!(errors[1] < 1e-12, "dot-product test: {text}");
}
