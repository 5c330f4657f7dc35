//! The C runtime's adjoint stack (CONTRACT §5, /work/notes/adjoint-api.md):
//! C programs compiled against the runtime that `aioli::runtime::write`
//! produces check LIFO order and exact values for every type, control
//! markers of every width, arrays, pointers, the statistics, the exit report
//! and the failure on an empty stack.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn cc() -> String {
    std::env::var("CC").unwrap_or_else(|_| "cc".to_string())
}

/// The strict flags the runtime must compile with, without a warning.
const STRICT: &[&str] = &["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"];

/// What every test program starts with.
const PRELUDE: &str = r#"
#include "aioli.h"
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define CHECK(c) do { if (!(c)) { \
    fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
    exit(1); } } while (0)
"#;

/// Writes the runtime and `main_src` (after [`PRELUDE`]) into `dir` and
/// compiles them with the strict flags and `extra`; panics with the
/// compiler's messages on failure.
fn build(dir: &Path, main_src: &str, extra: &[&str]) -> PathBuf {
    let written = aioli::runtime::write(dir).expect("writing the runtime");
    assert_eq!(written.len(), 2);
    let main = dir.join("main.c");
    std::fs::write(&main, format!("{PRELUDE}{main_src}")).unwrap();
    let exe = dir.join("main");
    let out = Command::new(cc())
        .args(STRICT)
        .args(extra)
        .arg("-I")
        .arg(dir)
        .arg(&main)
        .arg(dir.join(aioli::runtime::SOURCE_NAME))
        .arg("-o")
        .arg(&exe)
        .arg("-lm")
        .output()
        .expect("running the C compiler");
    assert!(
        out.status.success(),
        "compilation failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}

fn run(exe: &Path, stats_env: bool) -> Output {
    let mut cmd = Command::new(exe);
    if stats_env {
        cmd.env("AIOLI_STACK_STATS", "1");
    } else {
        cmd.env_remove("AIOLI_STACK_STATS");
    }
    cmd.output().expect("running the test program")
}

/// Builds and runs a program that must succeed and print `ok`.
fn run_ok(main_src: &str, extra: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let exe = build(dir.path(), main_src, extra);
    let out = run(&exe, false);
    assert!(
        out.status.success() && String::from_utf8_lossy(&out.stdout) == "ok\n",
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A random walk of pushes and pops of every type, on top of a million
/// doubles: the values come back bit for bit in reverse order.
const LIFO_PROGRAM: &str = r#"
static unsigned long long rng = 88172645463325252ULL;
static unsigned long long next(void) {
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    return rng;
}

enum { REAL8, REAL4, INT, LONG, POINTER, CONTROL, ARRAY, KINDS };
#define MAXDEPTH 400000
#define BIGARRAY 200000
static unsigned char kind[MAXDEPTH];
static unsigned long long seed[MAXDEPTH];
static long size[MAXDEPTH];
static double pool[1000];
static unsigned char buf[BIGARRAY], want[BIGARRAY];

static double real8_of(unsigned long long s) {
    static const double special[] = {0.0, -0.0, 1.0, -1.5, DBL_MIN, DBL_MAX,
                                     -DBL_MAX, 4.9406564584124654e-324};
    double d;
    if (s % 8 == 0) {
        if ((s >> 3) % 10 == 0) return HUGE_VAL;
        if ((s >> 3) % 10 == 1) return -HUGE_VAL;
        return special[(s >> 3) % 8];
    }
    memcpy(&d, &s, sizeof d);
    return d;
}
static float real4_of(unsigned long long s) {
    uint32_t b = (uint32_t)(s >> 17);
    float f;
    if (s % 8 == 0) return (s >> 3) % 2 ? -0.0f : FLT_MAX;
    memcpy(&f, &b, sizeof f);
    return f;
}
static int int_of(unsigned long long s) {
    if (s % 16 == 0) return INT_MIN;
    if (s % 16 == 1) return INT_MAX;
    return (int)(s % 2000001) - 1000000;
}
static long long_of(unsigned long long s) {
    if (s % 16 == 0) return LONG_MIN;
    if (s % 16 == 1) return LONG_MAX;
    return (long)(s % 2000000001) - 1000000000L;
}
static void *pointer_of(unsigned long long s) {
    if (s % 1001 == 1000) return NULL;
    return &pool[s % 1001];
}
static void fill(unsigned char *a, long n, unsigned long long s) {
    long j;
    for (j = 0; j < n; j++) a[j] = (unsigned char)((s >> (j % 50)) + (unsigned long long)j * 7);
}
static int same_bits(const void *a, const void *b, size_t n) {
    return memcmp(a, b, n) == 0;
}

static void push(long i) {
    unsigned long long s = next();
    unsigned char k = (unsigned char)(s % KINDS);
    s = next();
    kind[i] = k;
    seed[i] = s;
    switch (k) {
    case REAL8: { double d = real8_of(s); aioli_push_real8(d); break; }
    case REAL4: aioli_push_real4(real4_of(s)); break;
    case INT: aioli_push_int(int_of(s)); break;
    case LONG: aioli_push_long(long_of(s)); break;
    case POINTER: aioli_push_pointer(pointer_of(s)); break;
    case CONTROL: {
        int bits = 1 + (int)(s % 16);
        size[i] = bits;
        aioli_push_control((int)((s >> 8) & ((1u << bits) - 1u)), bits);
        break;
    }
    case ARRAY: {
        long n = s % 1000 == 0 ? BIGARRAY : (long)(s % 100);
        size[i] = n;
        fill(buf, n, s);
        aioli_push_array(buf, (size_t)n);
        break;
    }
    }
}

static void pop(long i) {
    unsigned long long s = seed[i];
    switch (kind[i]) {
    case REAL8: {
        double got = aioli_pop_real8(), w = real8_of(s);
        if (w != w) CHECK(got != got); else CHECK(same_bits(&got, &w, sizeof w));
        break;
    }
    case REAL4: {
        float got = aioli_pop_real4(), w = real4_of(s);
        if (w != w) CHECK(got != got); else CHECK(same_bits(&got, &w, sizeof w));
        break;
    }
    case INT: CHECK(aioli_pop_int() == int_of(s)); break;
    case LONG: CHECK(aioli_pop_long() == long_of(s)); break;
    case POINTER: CHECK(aioli_pop_pointer() == pointer_of(s)); break;
    case CONTROL: {
        int bits = (int)size[i];
        CHECK(aioli_pop_control(bits) == (int)((s >> 8) & ((1u << bits) - 1u)));
        break;
    }
    case ARRAY: {
        long n = size[i];
        memset(buf, 0xAA, (size_t)n);
        aioli_pop_array(buf, (size_t)n);
        fill(want, n, s);
        CHECK(same_bits(buf, want, (size_t)n));
        break;
    }
    }
}

int main(void) {
    long i, depth = 0, steps;
    const long doubles = 1000000;
    size_t pushed, peak;
    CHECK(sizeof(unsigned long long) == 8 && sizeof(double) == 8);
    for (i = 0; i < doubles; i++) aioli_push_real8((double)i * 0.5 - 3.25);
    for (steps = 0; steps < 3000000; steps++) {
        if (depth == 0 || (depth < MAXDEPTH && next() % 10 < 6)) push(depth++);
        else pop(--depth);
    }
    while (depth > 0) pop(--depth);
    for (i = doubles - 1; i >= 0; i--) CHECK(aioli_pop_real8() == (double)i * 0.5 - 3.25);
    aioli_stack_stats(&pushed, &peak);
    CHECK(peak >= (size_t)doubles * 8);
    CHECK(pushed >= peak);
    printf("ok\n");
    return 0;
}
"#;

#[test]
fn every_type_comes_back_in_lifo_order_bit_for_bit() {
    run_ok(LIFO_PROGRAM, &["-O1"]);
}

#[test]
fn control_markers_of_every_width_interleave_with_values() {
    run_ok(
        r#"
int main(void) {
    int round, bits;
    /* Several accumulator words' worth, each width with its extreme values,
     * a double between markers. */
    for (round = 0; round < 5000; round++) {
        for (bits = 1; bits <= 16; bits++) {
            int max = (1 << bits) - 1;
            aioli_push_control(max, bits);
            aioli_push_control(0, bits);
            aioli_push_control((round * 7919 + bits) & max, bits);
            if (bits % 5 == round % 5) aioli_push_real8(round + bits * 0.25);
        }
    }
    for (round = 4999; round >= 0; round--) {
        for (bits = 16; bits >= 1; bits--) {
            int max = (1 << bits) - 1;
            if (bits % 5 == round % 5) CHECK(aioli_pop_real8() == round + bits * 0.25);
            CHECK(aioli_pop_control(bits) == ((round * 7919 + bits) & max));
            CHECK(aioli_pop_control(bits) == 0);
            CHECK(aioli_pop_control(bits) == max);
        }
    }
    /* 5000 rounds of 3 * (1 + ... + 16) bits, and 16 doubles every 5 rounds. */
    {
        size_t pushed, peak;
        aioli_stack_stats(&pushed, &peak);
        CHECK(pushed == 5000 * 3 * 136 / 8 + 1000 * 16 * 8);
        CHECK(peak == pushed);
    }
    printf("ok\n");
    return 0;
}
"#,
        &[],
    );
}

#[test]
fn arrays_and_pointers_round_trip() {
    run_ok(
        r#"
typedef struct { double x; int n; double *p; } S;
int main(void) {
    double a[1000], b[1000];
    S s, t;
    double *big = malloc(300000 * sizeof *big);
    long i;
    CHECK(big != NULL);
    for (i = 0; i < 1000; i++) a[i] = i * 1.5 - 7;
    for (i = 0; i < 300000; i++) big[i] = (double)i / 3;
    s.x = -0.0; s.n = 42; s.p = &a[3];
    aioli_push_array(a, sizeof(a));
    aioli_push_pointer(&a[17]);
    aioli_push_array(big, 300000 * sizeof(double));   /* spans several blocks */
    aioli_push_array(&s, sizeof s);
    aioli_push_pointer(NULL);
    aioli_push_array(NULL, 0);
    aioli_push_pointer("literal");
    aioli_pop_array(NULL, 0);
    CHECK(aioli_pop_pointer() != NULL);
    CHECK(aioli_pop_pointer() == NULL);
    memset(&t, 0, sizeof t);
    aioli_pop_array(&t, sizeof t);
    CHECK(memcmp(&t, &s, sizeof s) == 0 && t.p == &a[3] && t.n == 42);
    for (i = 0; i < 300000; i++) big[i] = 0;
    aioli_pop_array(big, 300000 * sizeof(double));
    for (i = 0; i < 300000; i++) CHECK(big[i] == (double)i / 3);
    CHECK(aioli_pop_pointer() == &a[17]);
    aioli_pop_array(b, sizeof(b));
    CHECK(memcmp(a, b, sizeof a) == 0);
    free(big);
    printf("ok\n");
    return 0;
}
"#,
        &[],
    );
}

#[test]
fn pushes_and_pops_across_a_block_boundary_reuse_the_block() {
    // A sawtooth across the boundary of the first block: the runtime keeps
    // the released block, so this is quick; the values must survive.
    run_ok(
        r#"
int main(void) {
    static unsigned char fill[65536 - 3];
    long i;
    memset(fill, 7, sizeof fill);
    aioli_push_array(fill, sizeof fill);
    for (i = 0; i < 2000000; i++) {
        aioli_push_real8((double)i);
        aioli_push_int((int)i);
        CHECK(aioli_pop_int() == (int)i);
        CHECK(aioli_pop_real8() == (double)i);
    }
    memset(fill, 0, sizeof fill);
    aioli_pop_array(fill, sizeof fill);
    for (i = 0; i < (long)sizeof fill; i++) CHECK(fill[i] == 7);
    printf("ok\n");
    return 0;
}
"#,
        &[],
    );
}

#[test]
fn statistics_are_exact_for_a_known_sequence() {
    run_ok(
        r#"
static void expect(size_t pushed, size_t peak) {
    size_t p = 99, k = 99;
    aioli_stack_stats(&p, &k);
    if (p != pushed || k != peak) {
        fprintf(stderr, "stats: %lu pushed, peak %lu; expected %lu, %lu\n",
                (unsigned long)p, (unsigned long)k,
                (unsigned long)pushed, (unsigned long)peak);
        exit(1);
    }
}
int main(void) {
    char a[100];
    int i;
    memset(a, 1, sizeof a);
    expect(0, 0);
    aioli_stack_stats(NULL, NULL);
    aioli_push_real8(1.0);                    /* 8 */
    aioli_push_int(2);                        /* 4: 12 */
    expect(12, 12);
    aioli_push_control(1, 3);                 /* 3 bits: 13 bytes */
    expect(13, 13);
    for (i = 0; i < 5; i++) aioli_push_control(0, 1);  /* 8 bits: still 13 */
    expect(13, 13);
    aioli_push_control(0, 1);                 /* 9 bits: 14 */
    expect(14, 14);
    aioli_push_array(a, sizeof a);            /* 100: 114 */
    aioli_pop_array(a, sizeof a);
    expect(114, 114);
    aioli_push_real4(1.0f);                   /* 4: pushed 118, size 18 */
    aioli_push_long(3);                       /* 8: pushed 126, size 26 */
    aioli_push_pointer(a);                    /* sizeof(void *) */
    expect(126 + sizeof(void *), 114);
    aioli_stack_reset_stats();                /* pushed 0, peak := size */
    expect(0, 26 + sizeof(void *));
    CHECK(aioli_pop_pointer() == a);
    CHECK(aioli_pop_long() == 3);
    CHECK(aioli_pop_real4() == 1.0f);
    aioli_stack_reset_stats();
    expect(0, 14);
    aioli_push_control(5, 16);                /* 9 + 16 = 25 bits: 8 + 4 bytes */
    expect(2, 16);
    CHECK(aioli_pop_control(16) == 5);
    for (i = 0; i < 6; i++) CHECK(aioli_pop_control(1) == 0);
    CHECK(aioli_pop_control(3) == 1);
    CHECK(aioli_pop_int() == 2);
    CHECK(aioli_pop_real8() == 1.0);
    aioli_stack_reset_stats();
    expect(0, 0);
    printf("ok\n");
    return 0;
}
"#,
        &[],
    );
}

/// The fast paths keep no statistics but a count of bytes popped; the
/// rest is derived when asked for. A random walk in runs (so that peaks
/// are reached, left and reached again, within a block and across blocks
/// and control words) checks the derived figures against a model kept by
/// the program, at moments far apart so that the check itself does not
/// refresh the runtime's state every step, and across resets.
#[test]
fn statistics_match_a_model_over_a_random_walk() {
    run_ok(
        r#"
static unsigned long long rng = 0x9E3779B97F4A7C15ULL;
static unsigned long long next(void) {
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    return rng;
}
#define MAXDEPTH 300000
static unsigned char kind[MAXDEPTH];
static int width[MAXDEPTH];
static unsigned char buf[70000];
/* The model: bytes of values and control bits pushed since the reset,
 * now on the stack, and the peak of the size since the reset. */
static size_t m_pushed, m_bits, m_data, m_cur_bits, m_peak;
static size_t bytes(size_t bits) { return bits / 8 + (bits % 8 != 0); }
static void note(void) {
    size_t size = m_data + bytes(m_cur_bits);
    if (size > m_peak) m_peak = size;
}
static size_t value_size(int k, long i) {
    switch (k) {
    case 0: return 8;
    case 1: return 4;
    case 2: return sizeof(int);
    case 3: return sizeof(long);
    case 4: return sizeof(void *);
    default: return (size_t)width[i];
    }
}
static void push(long i) {
    int k = (int)(next() % 7);
    kind[i] = (unsigned char)k;
    if (k == 5) {
        width[i] = 1 + (int)(next() % 16);
        aioli_push_control(0, width[i]);
        m_bits += (size_t)width[i];
        m_cur_bits += (size_t)width[i];
    } else {
        if (k == 6) width[i] = next() % 50 == 0 ? 66000 : (int)(next() % 40);
        switch (k) {
        case 0: aioli_push_real8(1.0); break;
        case 1: aioli_push_real4(1.0f); break;
        case 2: aioli_push_int(1); break;
        case 3: aioli_push_long(1); break;
        case 4: aioli_push_pointer(buf); break;
        default: aioli_push_array(buf, (size_t)width[i]); break;
        }
        m_pushed += value_size(k, i);
        m_data += value_size(k, i);
    }
    note();
}
static void pop(long i) {
    switch (kind[i]) {
    case 0: (void)aioli_pop_real8(); break;
    case 1: (void)aioli_pop_real4(); break;
    case 2: (void)aioli_pop_int(); break;
    case 3: (void)aioli_pop_long(); break;
    case 4: (void)aioli_pop_pointer(); break;
    case 5: (void)aioli_pop_control(width[i]); m_cur_bits -= (size_t)width[i]; return;
    default: aioli_pop_array(buf, (size_t)width[i]); break;
    }
    m_data -= value_size(kind[i], i);
}
static void expect(long step) {
    size_t pushed = 0, peak = 0;
    aioli_stack_stats(&pushed, &peak);
    if (pushed != m_pushed + bytes(m_bits) || peak != m_peak) {
        fprintf(stderr, "step %ld: %lu pushed, peak %lu; the model says %lu, %lu\n", step,
                (unsigned long)pushed, (unsigned long)peak,
                (unsigned long)(m_pushed + bytes(m_bits)), (unsigned long)m_peak);
        exit(1);
    }
}
int main(void) {
    long depth = 0, step, run;
    for (step = 0; step < 4000; step++) {
        int up = depth == 0 || (depth < MAXDEPTH - 1000 && next() % 2 == 0);
        long len = (long)(next() % 600);
        for (run = 0; run < len; run++) {
            if (up) push(depth++);
            else if (depth > 0) pop(--depth);
        }
        if (next() % 16 == 0) expect(step);
        if (next() % 97 == 0) {
            aioli_stack_reset_stats();
            m_pushed = m_bits = 0;
            m_peak = m_data + bytes(m_cur_bits);
            expect(step);
        }
    }
    expect(step);
    while (depth > 0) pop(--depth);
    expect(step + 1);
    printf("ok\n");
    return 0;
}
"#,
        &["-O2"],
    );
}

#[test]
fn the_exit_report_appears_only_when_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let exe = build(
        dir.path(),
        r#"
int main(void) {
    aioli_push_real8(1.0);
    aioli_push_real8(2.0);
    aioli_push_control(1, 1);
    (void)aioli_pop_control(1);
    (void)aioli_pop_real8();
    aioli_push_int(3);
    printf("done\n");
    return 0;
}
"#,
        &[],
    );
    let out = run(&exe, true);
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "aioli stack: 21 bytes pushed, peak 17 bytes\n"
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "done\n");
    let out = run(&exe, false);
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}

/// Runs a program that must abort with a message containing each of
/// `expected`.
fn check_aborts(main_src: &str, expected: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let exe = build(dir.path(), main_src, &[]);
    let out = run(&exe, false);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "the program should have failed; stderr:\n{stderr}"
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "", "{stderr}");
    for e in expected {
        assert!(stderr.contains(e), "stderr lacks `{e}`:\n{stderr}");
    }
}

#[test]
fn popping_an_empty_stack_aborts_with_a_message() {
    let cases = [
        ("(void)aioli_pop_real8();", "aioli_pop_real8"),
        ("(void)aioli_pop_real4();", "aioli_pop_real4"),
        ("(void)aioli_pop_int();", "aioli_pop_int"),
        ("(void)aioli_pop_long();", "aioli_pop_long"),
        ("(void)aioli_pop_pointer();", "aioli_pop_pointer"),
        ("(void)aioli_pop_control(1);", "aioli_pop_control"),
        (
            "double a[2]; aioli_pop_array(a, sizeof a);",
            "aioli_pop_array",
        ),
        // Some values, but fewer than the pop needs.
        (
            "aioli_push_int(1); (void)aioli_pop_real8();",
            "aioli_pop_real8",
        ),
        (
            "aioli_push_control(1, 3); (void)aioli_pop_control(4);",
            "aioli_pop_control",
        ),
        (
            "aioli_push_real8(1); (void)aioli_pop_real8(); (void)aioli_pop_int();",
            "aioli_pop_int",
        ),
    ];
    for (body, name) in cases {
        check_aborts(
            &format!("int main(void) {{ {body} printf(\"returned\\n\"); return 0; }}\n"),
            &[name, "empty adjoint stack"],
        );
    }
}

#[test]
fn control_markers_out_of_range_abort_with_a_message() {
    for (body, message) in [
        ("aioli_push_control(0, 0);", "width 0 outside 1..16"),
        ("aioli_push_control(0, 17);", "width 17 outside 1..16"),
        (
            "aioli_push_control(4, 2);",
            "value 4 does not fit in 2 bits",
        ),
        (
            "aioli_push_control(-1, 2);",
            "value -1 does not fit in 2 bits",
        ),
        ("(void)aioli_pop_control(20);", "width 20 outside 1..16"),
    ] {
        check_aborts(
            &format!("int main(void) {{ {body} printf(\"returned\\n\"); return 0; }}\n"),
            &[message],
        );
    }
}

/// Whether the compiler builds and runs a program with `flags`; the reason
/// if not.
fn probe(flags: &[&str]) -> Result<(), String> {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("probe.c");
    std::fs::write(&src, "int main(void) { return 0; }\n").unwrap();
    let exe = dir.path().join("probe");
    let out = Command::new(cc())
        .args(flags)
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", cc()))?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    let run = Command::new(&exe).output().map_err(|e| e.to_string())?;
    if !run.status.success() {
        return Err(format!(
            "the probe built but failed to run: {}",
            String::from_utf8_lossy(&run.stderr)
        ));
    }
    Ok(())
}

#[test]
fn the_runtime_is_clean_under_address_and_undefined_behaviour_sanitizers() {
    let flags = [
        "-fsanitize=address,undefined",
        "-fno-sanitize-recover=all",
        "-g",
    ];
    if let Err(why) = probe(&flags) {
        eprintln!(
            "skipping the sanitizer run: {} cannot build with {}:\n{why}",
            cc(),
            flags.join(" ")
        );
        return;
    }
    run_ok(LIFO_PROGRAM, &flags);
}

#[test]
fn the_runtime_honours_an_nbdirsmax_override() {
    // -DNBDIRSMAX overrides the default, and the runtime reports it.
    run_ok(
        r#"
int main(void) {
    CHECK(NBDIRSMAX == 4 && aioli_nbdirsmax() == 4);
    printf("ok\n");
    return 0;
}
"#,
        &["-DNBDIRSMAX=4"],
    );
}
