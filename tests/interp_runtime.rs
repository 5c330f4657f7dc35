//! The interpreter runs the C runtime's adjoint stack (`aioli.h`) as
//! builtins: programs parsed by the front end, which include the runtime's
//! header as generated adjoint code does, push and pop values of every type,
//! arrays and control markers, and read the statistics.

use aioli::front::{FrontOptions, Loaded, load};
use aioli::interp::{Config, Dual, ErrorKind, Machine, Real, Value};

/// Parses `source` (which may `#include "aioli.h"`: the runtime is written
/// next to it), keeping the directory alive with the result.
fn load_text(source: &str) -> (tempfile::TempDir, Loaded) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    aioli::runtime::write(dir.path()).expect("writing the runtime");
    let path = dir.path().join("stack.c");
    std::fs::write(&path, source).expect("writing the program");
    let loaded = load(&path, &FrontOptions::default())
        .unwrap_or_else(|(s, d)| panic!("{}", aioli::front::diag::render(&s, &d)));
    (dir, loaded)
}

fn machine<R: Real>(l: &Loaded) -> Machine<'_, R> {
    Machine::new(&l.program, Config { fuel: 10_000_000 }).expect("machine")
}

const PROGRAM: &str = r#"
#include "aioli.h"

typedef struct { double x; int n; } S;

/* Pushes values of every type, clobbers them, pops them back and writes
 * what came back into `out`; returns the number of mismatched markers. */
int roundtrip(double x, int n, double *out) {
    double a[4];
    float g = 1.25f;
    long l = 1234567890123L;
    double *p = &a[2];
    S s;
    int i, bad = 0;
    size_t pushed, peak;
    for (i = 0; i < 4; i++) a[i] = x * i;
    s.x = -x; s.n = n;
    aioli_push_real8(x);
    aioli_push_real4(g);
    aioli_push_int(n);
    aioli_push_long(l);
    aioli_push_pointer(p);
    aioli_push_control(5, 3);
    aioli_push_array(a, sizeof(a));
    aioli_push_array(&s, sizeof s);
    for (i = 0; i < n; i++) {
        aioli_push_control(i % 2, 1);
        aioli_push_control(i & 65535, 16);
    }
    x = 0; g = 0; n = 0; l = 0; p = 0; s.x = 0; s.n = 0;
    for (i = 0; i < 4; i++) a[i] = -1;
    for (i = 99; i >= 0; i--) {
        if (aioli_pop_control(16) != (i & 65535)) bad++;
        if (aioli_pop_control(1) != i % 2) bad++;
    }
    aioli_pop_array(&s, sizeof s);
    aioli_pop_array(a, sizeof(a));
    if (aioli_pop_control(3) != 5) bad++;
    p = aioli_pop_pointer();
    l = aioli_pop_long();
    n = aioli_pop_int();
    g = aioli_pop_real4();
    x = aioli_pop_real8();
    aioli_stack_stats(&pushed, &peak);
    out[0] = x; out[1] = g; out[2] = n; out[3] = l; out[4] = *p;
    out[5] = a[0]; out[6] = a[1]; out[7] = a[2]; out[8] = a[3];
    out[9] = s.x; out[10] = s.n;
    out[11] = pushed; out[12] = peak;
    aioli_stack_reset_stats();
    aioli_stack_stats(&pushed, &peak);
    out[13] = pushed; out[14] = peak;
    return bad;
}

/* A derivative survives the stack. */
double square_through_the_stack(double x) {
    double y;
    aioli_push_real8(x * x);
    y = aioli_pop_real8();
    return 3 * y;
}

/* The two halves of a split adjoint: called one after the other. */
void forward(double x, int k) {
    aioli_push_control(k, 2);
    aioli_push_real8(x);
}
double backward(void) {
    double x = aioli_pop_real8();
    return x * aioli_pop_control(2);
}

double pop_empty(void) { return aioli_pop_real8(); }
double pop_wrong_type(void) { aioli_push_int(1); return aioli_pop_real8(); }
int pop_wrong_width(void) { aioli_push_control(1, 2); return aioli_pop_control(3); }
void pop_wrong_size(void) {
    double a[3], b[2];
    a[0] = a[1] = a[2] = 0;
    aioli_push_array(a, sizeof a);
    aioli_pop_array(b, sizeof b);
}
void push_too_wide(void) { aioli_push_control(4, 2); }
void push_bad_width(void) { aioli_push_control(0, 17); }
double uninit_cells_stay_uninit(void) {
    double a[2], b[2];
    a[0] = 1;
    aioli_push_array(a, sizeof a);
    b[0] = 5; b[1] = 6;
    aioli_pop_array(b, sizeof b);
    return b[0] + b[1];
}
"#;

fn double() -> aioli::il::QualType {
    aioli::il::QualType::double()
}

#[test]
fn values_arrays_and_markers_come_back_in_lifo_order() {
    let (_dir, l) = load_text(PROGRAM);
    let mut m = machine::<f64>(&l);
    let out = m.alloc_reals(&double(), &[0.0; 15]);
    let bad = m
        .call("roundtrip", vec![Value::Real(2.5), Value::Int(100), out])
        .unwrap_or_else(|e| panic!("{e} at {}", l.sources.location(e.span)));
    assert_eq!(bad, Value::Int(0));
    let got = m.read_reals(out, &double(), 15).unwrap();
    // 8 + 4 + 4 + 8 + 8 + 32 + 16 (the struct, padded) bytes, and
    // 3 + 100 * 17 bits = 213 bytes rounded up.
    let data = 8 + 4 + 4 + 8 + 8 + 32 + 16;
    let control = (3 + 100 * 17_u64).div_ceil(8) as f64;
    assert_eq!(
        got,
        vec![
            2.5,
            1.25,
            100.0,
            1234567890123.0,
            5.0,
            0.0,
            2.5,
            5.0,
            7.5,
            -2.5,
            100.0,
            data as f64 + control,
            data as f64 + control,
            0.0,
            0.0
        ]
    );
    assert_eq!(m.stack_depth(), 0);
    assert_eq!(m.stack_stats(), (0, 0));
}

#[test]
fn a_dual_number_keeps_its_tangent_on_the_stack() {
    let (_dir, l) = load_text(PROGRAM);
    let mut m = machine::<Dual>(&l);
    let r = m
        .call(
            "square_through_the_stack",
            vec![Value::Real(Dual::new(2.0, 1.0))],
        )
        .unwrap();
    let r = r.as_real().unwrap();
    assert_eq!(r.value(), 12.0);
    assert_eq!(r.tangent(), 12.0);
}

#[test]
fn the_stack_survives_between_calls() {
    let (_dir, l) = load_text(PROGRAM);
    let mut m = machine::<f64>(&l);
    m.call("forward", vec![Value::Real(1.5), Value::Int(3)])
        .unwrap();
    m.call("forward", vec![Value::Real(2.0), Value::Int(1)])
        .unwrap();
    assert_eq!(m.stack_depth(), 4);
    assert_eq!(m.stack_stats(), (17, 17));
    assert_eq!(m.call("backward", vec![]).unwrap(), Value::Real(2.0));
    assert_eq!(m.call("backward", vec![]).unwrap(), Value::Real(4.5));
    assert_eq!(m.stack_depth(), 0);
}

/// Calls `name` and returns the adjoint-stack error's message.
fn stack_error(name: &str) -> String {
    let (_dir, l) = load_text(PROGRAM);
    let mut m = machine::<f64>(&l);
    match m.call(name, vec![]) {
        Ok(v) => panic!("{name} returned {v:?}"),
        Err(e) => match e.kind {
            ErrorKind::AdjointStack(msg) => {
                assert!(
                    l.sources.location(e.span).to_string().contains("stack.c"),
                    "{name}: the error should point into the program"
                );
                msg
            }
            other => panic!("{name}: {other}"),
        },
    }
}

#[test]
fn misuses_of_the_stack_are_errors_with_a_message() {
    let cases = [
        ("pop_empty", "aioli_pop_real8: pop from an empty stack"),
        (
            "pop_wrong_type",
            "aioli_pop_real8 does not match the push it undoes: the top of the stack was pushed by aioli_push_int",
        ),
        (
            "pop_wrong_width",
            "aioli_pop_control does not match the push it undoes: the top of the stack was pushed by aioli_push_control with 2 bits",
        ),
        (
            "pop_wrong_size",
            "aioli_pop_array does not match the push it undoes: the top of the stack was pushed by aioli_push_array of 24 bytes",
        ),
        (
            "push_too_wide",
            "aioli_push_control: value 4 does not fit in 2 bits",
        ),
        (
            "push_bad_width",
            "aioli_push_control: width 17 outside 1..16",
        ),
    ];
    for (name, expected) in cases {
        let msg = stack_error(name);
        assert!(
            msg.starts_with(expected),
            "{name}: got `{msg}`, expected `{expected}`"
        );
    }
}

#[test]
fn an_array_comes_back_with_its_uninitialised_cells() {
    let (_dir, l) = load_text(PROGRAM);
    let mut m = machine::<f64>(&l);
    let e = m.call("uninit_cells_stay_uninit", vec![]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Uninit);
}

#[test]
fn the_interpreter_agrees_with_the_compiled_runtime() {
    // The same program compiled with the C runtime gives the same values
    // and the same statistics.
    let (dir, l) = load_text(PROGRAM);
    let mut m = machine::<f64>(&l);
    let out = m.alloc_reals(&double(), &[0.0; 15]);
    m.call("roundtrip", vec![Value::Real(2.5), Value::Int(100), out])
        .unwrap();
    let interpreted = m.read_reals(out, &double(), 15).unwrap();

    let d = dir.path();
    std::fs::write(
        d.join("main.c"),
        r#"#include <stdio.h>
int roundtrip(double x, int n, double *out);
int main(void) {
    double out[15];
    int i, bad = roundtrip(2.5, 100, out);
    printf("%d", bad);
    for (i = 0; i < 15; i++) printf(" %.17g", out[i]);
    printf("\n");
    return 0;
}
"#,
    )
    .unwrap();
    let exe = d.join("main");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let built = std::process::Command::new(cc)
        .args(["-std=c99", "-I"])
        .arg(d)
        .args([d.join("stack.c"), d.join("main.c"), d.join("aioli.c")])
        .arg("-o")
        .arg(&exe)
        .output()
        .expect("running the C compiler");
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let run = std::process::Command::new(&exe).output().unwrap();
    assert!(run.status.success());
    let text = String::from_utf8_lossy(&run.stdout);
    let mut fields = text.split_whitespace();
    assert_eq!(fields.next(), Some("0"));
    let compiled: Vec<f64> = fields.map(|f| f.parse().unwrap()).collect();
    assert_eq!(compiled, interpreted);
}
