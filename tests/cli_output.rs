//! The command line's output: a reader that goes away early (`aioli parse
//! big.c | head`) ends aioli quietly, never with a panic; warnings about
//! the output go to standard error with their location.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};

#[test]
fn a_closed_pipe_ends_the_output_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.c");
    // Far more output than a pipe holds, so aioli is still writing when
    // the reader closes its end.
    let mut text = String::new();
    for k in 0..4000 {
        text.push_str(&format!(
            "/* function {k} */\ndouble f{k}(double x)\n{{\n    return x * {k}.0 + 1.0;\n}}\n"
        ));
    }
    std::fs::write(&path, text).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_aioli"))
        .arg("parse")
        .arg(&path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 16];
    child
        .stdout
        .as_mut()
        .unwrap()
        .read_exact(&mut first)
        .unwrap();
    drop(child.stdout.take());
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let status = child.wait().unwrap();
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(status.success(), "{status:?}\n{stderr}");
}

/// Standard error closed early (`2>&1 | head -1`): the messages are lost,
/// the exit status is not, and nothing panics.
#[test]
fn a_closed_stderr_loses_messages_not_the_status() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.c");
    // An unused local and an unread independent: warnings to write.
    std::fs::write(
        &path,
        "double f(double x, double a)\n{\n    double t;\n    return x * x;\n}\n",
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_aioli"))
        .args([
            "tangent",
            path.to_str().unwrap(),
            "--head",
            "f(f)/(x a)",
            "--out",
        ])
        .arg(dir.path())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stderr.take());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{status:?}");
    assert!(dir.path().join("w_d.c").exists());
}

/// `-D` with something that is not a macro name is a usage error (exit
/// status 2), not an error in the C file.
#[test]
fn a_bad_macro_definition_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.c");
    std::fs::write(&path, "double f(double x) { return x; }\n").unwrap();
    for bad in ["1X=2", "=3", "A-B"] {
        let out = Command::new(env!("CARGO_BIN_EXE_aioli"))
            .args([
                "tangent",
                path.to_str().unwrap(),
                "--head",
                "f(f)/(x)",
                "-D",
                bad,
            ])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bad}: {stderr}");
        assert!(stderr.contains("is not a macro name"), "{stderr}");
    }
    let ok = Command::new(env!("CARGO_BIN_EXE_aioli"))
        .args([
            "tangent",
            path.to_str().unwrap(),
            "--head",
            "f(f)/(x)",
            "-D",
            "SQ(a)=((a)*(a))",
        ])
        .arg("--out")
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
}

/// A head naming something the function does not have is located at the
/// function's definition, with its line and a caret (CONTRACT §1).
#[test]
fn a_bad_head_is_located_at_its_function() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.c");
    std::fs::write(&path, "/* one */\ndouble h(double a) { return a * a; }\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_aioli"))
        .args(["tangent", path.to_str().unwrap(), "--head", "h(f)/(a)"])
        .arg("--out")
        .arg(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("h.c:2:8: error: head 'h(f)/(a)': 'f' is neither a parameter of 'h'"),
        "{stderr}"
    );
    assert!(stderr.contains("\n       ^"), "{stderr}");
    assert!(!dir.path().join("h_d.c").exists());
    // No such function: the file's first line carries the message, in
    // CONTRACT §1's form; a malformed head says what form it expects.
    for (head, message) in [
        (
            "g(y)/(a)",
            "h.c:1:1: error: head 'g(y)/(a)': no function 'g' is defined in this file",
        ),
        (
            "h/(a)",
            "h.c:1:1: error: head 'h/(a)': expected the form 'f(outputs)/(inputs)'",
        ),
    ] {
        let out = differentiate("tangent", &path, head, &[], dir.path());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(stderr.contains(message), "{stderr}");
        assert!(stderr.contains("\n/* one */\n^"), "{stderr}");
    }
}

/// `adjoint/checkpoint`: a region whose snapshot needs memory of unknown
/// size (the target of a pointer parameter) is taped instead of
/// checkpointed, and the user is told where and why.
#[test]
fn a_region_that_cannot_be_checkpointed_is_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("region.c");
    std::fs::write(
        &path,
        "#include <math.h>\nvoid f(int n, double *y)\n{\n    // $AD CHECKPOINT-START\n    \
         for (int i = 1; i < n; i++) y[i] = y[i] * sin(y[i - 1]);\n    // $AD CHECKPOINT-END\n    \
         y[0] = y[0] * y[n - 1];\n}\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_aioli"))
        .args(["adjoint", "--head", "f(y)/(y)", "--out"])
        .arg(dir.path())
        .arg(&path)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(
            "region.c:5:5: warning: this $AD CHECKPOINT-START region is not checkpointed"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("'y', whose size is not known here"),
        "{stderr}"
    );
    assert!(dir.path().join("region_b.c").exists());
}

/// The passes recurse over statement lists: a long straight-line function
/// (generated code) needs more than the main thread's stack. CONTRACT §1:
/// no crash; the work thread has a stack of its own.
#[test]
fn a_long_generated_function_is_differentiated_without_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long.c");
    let mut text = String::from("double f(const double *x)\n{\n    double s = 0.0;\n");
    for k in 0..3000 {
        text.push_str(&format!("    s = s * 0.5 + x[{}] * {k}.0;\n", k % 7));
    }
    text.push_str("    return s;\n}\n");
    std::fs::write(&path, text).unwrap();
    for mode in ["adjoint", "tangent"] {
        let out = Command::new(env!("CARGO_BIN_EXE_aioli"))
            .args([mode, path.to_str().unwrap(), "--head", "f(f)/(x)", "--out"])
            .arg(dir.path())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{mode}: {err}");
    }
    let b = std::fs::read_to_string(dir.path().join("long_b.c")).unwrap();
    assert!(b.contains("void f_b(const double *x, double *xb, double fb)"));
}

/// `il/split`: a temporary made for a call before a declaration of the
/// same name (`*at(x, 0) = …;` then `double *aioli_tmp;`, as in a file
/// aioli wrote and `aioli check` reads back) takes another name: no
/// "redefinition", and the printed C declares each name once.
#[test]
fn a_temporary_gives_way_to_a_later_declaration_of_its_name() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tmpname.c");
    std::fs::write(
        &path,
        "static double *at(double *x, int i)\n{\n    return &x[i];\n}\n\
         void f(double *x)\n{\n    *at(x, 0) = x[1] * 2.0;\n    double *aioli_tmp;\n    \
         aioli_tmp = at(x, 1);\n    *aioli_tmp = x[0];\n}\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_aioli"))
        .arg("parse")
        .arg(&path)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let c = String::from_utf8_lossy(&out.stdout);
    let printed = dir.path().join("printed.c");
    std::fs::write(&printed, c.as_bytes()).unwrap();
    let cc = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
        .args(["-std=c99", "-Wall", "-Wextra", "-Werror", "-c", "-o"])
        .arg(dir.path().join("printed.o"))
        .arg(&printed)
        .output()
        .unwrap();
    assert!(
        cc.status.success(),
        "{c}\n{}",
        String::from_utf8_lossy(&cc.stderr)
    );
}

/// `aioli check --mode both` reports a problem both halves meet (a
/// parameter without a domain) once, not once per mode, at the head.
#[test]
fn a_check_error_both_modes_meet_is_reported_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nodomain.c");
    std::fs::write(
        &path,
        "void f(const double *x, const double *w, double *y)\n{\n    y[0] = x[0] * w[0];\n}\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_aioli"))
        .arg("check")
        .arg(&path)
        .args([
            "--head",
            "f(y)/(x)",
            "--mode",
            "both",
            "--domain",
            "x[1]=[0,1] y[1]=[0,0]",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.matches("has no domain").count(), 1, "{err}");
    // CONTRACT §1's form: FILE:LINE:COL, the source line and a caret.
    assert!(
        err.contains("nodomain.c:1:6: error: parameter 'w' of 'f' has no domain\n"),
        "{err}"
    );
    assert!(err.contains("\n     ^"), "{err}");
}

/// Runs `aioli MODE FILE --head HEAD EXTRA… --out OUT`.
fn differentiate(
    mode: &str,
    file: &std::path::Path,
    head: &str,
    extra: &[&str],
    out: &std::path::Path,
) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_aioli"))
        .args([mode, file.to_str().unwrap(), "--head", head])
        .args(extra)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap()
}

/// `output/includes`: a header found beside the source is named from the
/// output directory, so the output compiles with the original's flags;
/// written beside the source, the line stays as the user wrote it.
#[test]
fn a_header_beside_the_source_is_named_from_the_output_directory() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(src.join("lib")).unwrap();
    std::fs::write(src.join("lib/api.h"), "#define SCALE 2.0\n").unwrap();
    let file = src.join("m.c");
    std::fs::write(
        &file,
        "#include \"lib/api.h\"\ndouble m(double x)\n{\n    return SCALE * x * x;\n}\n",
    )
    .unwrap();
    let out = dir.path().join("out");
    for (mode, suffix) in [("tangent", "_d"), ("adjoint", "_b")] {
        for (target, line) in [
            (&out, "#include \"../src/lib/api.h\""),
            (&src, "#include \"lib/api.h\""),
        ] {
            let run = differentiate(mode, &file, "m(m)/(x)", &[], target);
            assert!(
                run.status.success(),
                "{}",
                String::from_utf8_lossy(&run.stderr)
            );
            let text = std::fs::read_to_string(target.join(format!("m{suffix}.c"))).unwrap();
            assert!(text.contains(line), "{text}");
        }
    }
    let compiled = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
        .args(["-std=c99", "-Wall", "-Wextra", "-Werror", "-c"])
        .arg(out.join("m_d.c"))
        .arg("-o")
        .arg(dir.path().join("m_d.o"))
        .output()
        .unwrap();
    assert!(
        compiled.status.success(),
        "{}",
        String::from_utf8_lossy(&compiled.stderr)
    );
}

/// A parameter named like its function (`double f(double f)`): as an
/// input it is the parameter; as an output, the result when the parameter
/// is by value; a pointer parameter there is ambiguous, refused.
#[test]
fn a_parameter_named_like_its_function() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("same.c");
    std::fs::write(&path, "double f(double f)\n{\n    return 3.0 * f * f;\n}\n").unwrap();
    let run = differentiate("tangent", &path, "f(f)/(f)", &[], dir.path());
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    assert!(!stderr.contains("warning"), "{stderr}");
    let text = std::fs::read_to_string(dir.path().join("same_d.c")).unwrap();
    assert!(
        text.contains("double f_d(double f, double fd, double *f0)"),
        "{text}"
    );
    let pointer = dir.path().join("ptr.c");
    std::fs::write(
        &pointer,
        "double f(double *f)\n{\n    f[0] = 2.0 * f[0];\n    return f[0];\n}\n",
    )
    .unwrap();
    let run = differentiate("tangent", &pointer, "f(f)/(f)", &[], dir.path());
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("names both the result of 'f' and its parameter 'f'"),
        "{stderr}"
    );
}

/// `tangent/vector-runtime`: the file's opening comment moves before the
/// runtime header, once; the derivative of the first function does not
/// repeat it.
#[test]
fn the_opening_comment_of_a_vector_output_comes_out_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("comment.c");
    std::fs::write(
        &path,
        "/* header comment */\nstatic double h(double a) { return a * a; }\n\
void f(int n, double *x, double *y) { for (int i = 0; i < n; i++) y[i] = h(x[i]); }\n",
    )
    .unwrap();
    let run = differentiate("tangent", &path, "f(y)/(x)", &["--vector"], dir.path());
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let text = std::fs::read_to_string(dir.path().join("comment_dv.c")).unwrap();
    assert_eq!(text.matches("/* header comment */").count(), 1, "{text}");
    assert!(
        text.starts_with("/* header comment */\n#include \"aioli.h\""),
        "{text}"
    );
}

/// A head naming an `int` as an input or output is a bad head: exit 1,
/// located at the function, no output (CONTRACT §1).
#[test]
fn a_head_naming_an_integer_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("k.c");
    std::fs::write(
        &path,
        "double f(double x, int k)\n{\n    return x * k;\n}\n",
    )
    .unwrap();
    for head in ["f(f)/(k)", "f(k)/(x)"] {
        let run = differentiate("tangent", &path, head, &[], dir.path());
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(1), "{stderr}");
        assert!(stderr.contains("k.c:1:8: error: head"), "{stderr}");
        assert!(stderr.contains("'k' holds no real value"), "{stderr}");
        assert!(!dir.path().join("k_d.c").exists());
    }
}

/// Legal C that editors and old codes write: a `register` parameter (the
/// one storage class C99 allows there, also in a prototype) and a UTF-8
/// byte-order mark at the top of the file (probeAT). A file that cannot be
/// read is reported by its name alone, without an empty source line and a
/// stray caret (probeAR).
#[test]
fn register_parameters_and_a_byte_order_mark_are_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("reg.c");
    std::fs::write(
        &file,
        "\u{feff}static double cube(register double v);\n\
         static double cube(register double v)\n{\n    register double s = v * v;\n    return s * v;\n}\n\
         double f(double x)\n{\n    return cube(x);\n}\n",
    )
    .unwrap();
    let out = dir.path().join("out");
    let run = differentiate("tangent", &file, "f(f)/(x)", &[], &out);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let text = std::fs::read_to_string(out.join("reg_d.c")).unwrap();
    assert!(!text.contains('\u{feff}'), "{text}");
    assert!(
        text.contains("static double cube_d(double v, double vd, double *cube)"),
        "{text}"
    );

    let missing = differentiate("tangent", &dir.path().join("none.c"), "f", &[], &out);
    assert_eq!(missing.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&missing.stderr);
    assert!(
        stderr.contains("none.c:1:1: error: cannot read file"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

/// `warn/static-local`: a `static` local that carries an input from one
/// call to the next (`last = x`) has its own copy in the output, which the
/// original's calls do not change: both modes say so at its declaration.
/// A table computed once from constants and its flag carry no input: no
/// warning.
#[test]
fn a_static_local_carrying_an_input_between_calls_is_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("st.c");
    std::fs::write(
        &path,
        "double f(double x)\n{\n    static double last = 0.0;\n    double y = x * x + last * x;\n    \
         last = x;\n    return y;\n}\n\n\
         double g(double x)\n{\n    static int init = 0;\n    static double w[3];\n    if (!init) {\n        \
         for (int i = 0; i < 3; i++)\n            w[i] = 1.0 / (i + 1);\n        init = 1;\n    }\n    \
         return w[0] * x + w[1] * x * x + w[2] * x * x * x;\n}\n\n\
         static double prev = 1.0;\nstatic const double scale = 2.0;\n\n\
         double h(double x)\n{\n    double y = scale * prev * x * x;\n    prev = x;\n    return y;\n}\n\n\
         static double cache;\n\n\
         double k(double x)\n{\n    cache = x * x;\n    return cache + 1.0;\n}\n",
    )
    .unwrap();
    // `cache` is written before it is read in every call: it carries
    // nothing from one call to the next, and gets no warning.
    for mode in ["tangent", "adjoint"] {
        let out = Command::new(env!("CARGO_BIN_EXE_aioli"))
            .arg(mode)
            .arg(&path)
            .args([
                "--head", "f(f)/(x)", "--head", "g(g)/(x)", "--head", "h(h)/(x)",
            ])
            .args(["--head", "k(k)/(x)"])
            .arg("--out")
            .arg(dir.path())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{mode}: {err}");
        assert!(
            err.contains(
                "st.c:3:19: warning: 'last' is a static local that carries a value from one call to the next"
            ),
            "{mode}: {err}"
        );
        // A file-scope static is as much out of the output's reach.
        assert!(
            err.contains(
                "st.c:21:15: warning: 'prev' is a static variable of its file that carries a value from one call to the next"
            ),
            "{mode}: {err}"
        );
        assert_eq!(err.matches("warning:").count(), 2, "{mode}: {err}");
    }
}

/// `tangent/output`: the derivative of a `static inline` helper of a
/// header stands at the `#include`, ahead of the main file's globals; the
/// derivative of a global it reads is defined before it, so the scalar and
/// vector outputs compile and give the derivative in the global.
#[test]
fn a_header_helper_reading_an_active_global_comes_after_its_derivative() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "g3.h",
        "#pragma once\nextern double k;\nstatic inline double scale(double a) { return k * a; }\n",
    );
    let file = write(
        dir.path(),
        "g3.c",
        "#include \"g3.h\"\ndouble k = 0.3;\nvoid f(double *x, double *y)\n{\n    y[0] = scale(x[0]);\n}\n",
    );
    let driver = write(
        dir.path(),
        "drv.c",
        "#include <stdio.h>\nextern double kd;\nvoid f_d(double *x, double *xd, double *y, double *yd);\n\
         int main(void)\n{\n    double x = 2.0, xd = 0.5, y = 0.0, yd = 0.0;\n    kd = 1.0;\n    \
         f_d(&x, &xd, &y, &yd);\n    printf(\"%.17g %.17g\\n\", y, yd);\n    return 0;\n}\n",
    );
    for extra in [&[][..], &["--vector"][..]] {
        let run = differentiate("tangent", &file, "f(y)/(x k)", extra, dir.path());
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
    }
    let out = build_and_run(dir.path(), &[&file, &dir.path().join("g3_d.c"), &driver]);
    let vector = dir.path().join("g3_dv.c");
    cc_werror(
        dir.path(),
        &[Path::new("-c"), &vector],
        &dir.path().join("v.o"),
    );
    // y = k x = 0.6, ẏ = k̇ x + k ẋ = 2 + 0.15.
    assert_eq!(out, "0.59999999999999998 2.1499999999999999\n");
}

/// `il/mem-loop`: `memcpy` or `memset` of one element (a struct copied
/// with `sizeof(Rec)`) is that element's assignment, not a loop of one
/// trip, whose zero-trip path made `warn/uninit` see the copy unwritten.
#[test]
fn a_one_element_memcpy_is_an_assignment() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "rec.c",
        "#include <string.h>\ntypedef struct { double a; int tag; } Rec;\n\
         double twocopies(double x)\n{\n    Rec r1, r2, r3;\n    r1.a = x * x;\n    r1.tag = 1;\n    \
         memcpy(&r2, &r1, sizeof(Rec));\n    memcpy(&r3, &r2, sizeof r3);\n    return r3.a;\n}\n",
    );
    for (mode, suffix) in [("tangent", "_d"), ("adjoint", "_b")] {
        let run = differentiate(mode, &file, "twocopies(twocopies)/(x)", &[], dir.path());
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(run.status.success(), "{stderr}");
        assert!(!stderr.contains("warning"), "{mode}: {stderr}");
        let text = std::fs::read_to_string(dir.path().join(format!("rec{suffix}.c"))).unwrap();
        assert!(!text.contains("for ("), "{text}");
    }
    let text = std::fs::read_to_string(dir.path().join("rec_d.c")).unwrap();
    for line in ["r2d = r1d;", "r2 = r1;", "r3d = r2d;", "r3 = r2;"] {
        assert!(text.contains(line), "{line} in {text}");
    }
}

/// `output/defining-headers`: a local header that defines a global and a
/// function (`globals.inc`) is not included again by the output, which
/// declares them instead; the output links with the original and gives
/// the derivative.
#[test]
fn a_header_defining_globals_and_functions_is_expanded_not_included() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "defs.inc",
        "/* shared state and a helper */\ndouble beta = 1.5;\ndouble sq(double a) { return a * a; }\n",
    );
    let file = write(
        dir.path(),
        "g.c",
        "#include \"defs.inc\"\nvoid g(double *x, double *y)\n{\n    y[0] = beta * sq(x[0]);\n}\n",
    );
    let driver = write(
        dir.path(),
        "drv.c",
        "#include <stdio.h>\nvoid g_d(double *x, double *xd, double *y, double *yd);\n\
         void g_b(double *x, double *xb, double *y, double *yb);\n\
         int main(void)\n{\n    double x = 2.0, xd = 1.0, y = 0.0, yd = 0.0, xb = 0.0, yb = 1.0;\n    \
         g_d(&x, &xd, &y, &yd);\n    g_b(&x, &xb, &y, &yb);\n    printf(\"%g %g %g\\n\", y, yd, xb);\n    \
         return 0;\n}\n",
    );
    for mode in ["tangent", "adjoint"] {
        let run = differentiate(mode, &file, "g(y)/(x)", &[], dir.path());
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
    }
    let text = std::fs::read_to_string(dir.path().join("g_d.c")).unwrap();
    assert!(!text.contains("#include \"defs.inc\""), "{text}");
    assert!(text.contains("extern double beta;"), "{text}");
    let out = build_and_run(
        dir.path(),
        &[
            &file,
            &dir.path().join("g_d.c"),
            &dir.path().join("g_b.c"),
            &driver,
        ],
    );
    // y = β x², ẏ = 2 β x ẋ = 6, x̄ = 2 β x ȳ = 6.
    assert_eq!(out, "6 6 6\n");
}

/// `tangent/assign-dead-nodiff`, `tangent/seq`, `tangent/decl-dead`: a
/// statement the tangent drops (not live for derivatives nor results)
/// hands its comments to the next statement kept; a local whose every use
/// was dropped (`int cnt = 0;`) is not declared, so the output compiles
/// without `-Wall` warnings; an empty `else` the user commented stays.
#[test]
fn a_dropped_statement_keeps_its_comments_and_unused_locals_go() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "drop.c",
        "void f(double *x, double *y)\n{\n    int cnt = 0;\n    /* comment A: bookkeeping only */\n    \
         cnt = cnt + 1; // comment B\n    y[0] = x[0] * x[0];\n    if (x[0] > 0) {\n        \
         y[1] = x[1];\n    } else {\n        /* comment C: nothing to do */\n    }\n}\n",
    );
    let run = differentiate("tangent", &file, "f(y)/(x)", &[], dir.path());
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let text = std::fs::read_to_string(dir.path().join("drop_d.c")).unwrap();
    assert!(!text.contains("cnt"), "{text}");
    let a = text.find("/* comment A: bookkeeping only */").expect(&text);
    let b = text.find("// comment B").expect(&text);
    let first = text.find("yd[0] =").expect(&text);
    assert!(a < b && b < first, "{text}");
    // An empty `else` holding only a comment keeps it.
    assert!(
        text.contains("} else {\n        /* comment C: nothing to do */\n    }"),
        "{text}"
    );
    cc_werror(
        dir.path(),
        &[Path::new("-c"), &dir.path().join("drop_d.c")],
        &dir.path().join("drop_d.o"),
    );
}

/// Compiles with `cc -std=c99 -Wall -Wextra -Werror`, `dir` and its
/// runtime `dir/rt` on the include path; fails the test on any diagnostic.
fn cc_werror(dir: &Path, args: &[&Path], out: &Path) {
    let compiled = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
        .args(["-std=c99", "-Wall", "-Wextra", "-Werror", "-I"])
        .arg(dir)
        .arg("-I")
        .arg(dir.join("rt"))
        .args(args)
        .arg("-o")
        .arg(out)
        .output()
        .unwrap();
    assert!(
        compiled.status.success(),
        "{}",
        String::from_utf8_lossy(&compiled.stderr)
    );
}

/// Writes the runtime to `dir/rt`, builds `sources` with it into one
/// program (warnings are errors) and returns what the program prints.
fn build_and_run(dir: &Path, sources: &[&Path]) -> String {
    let rt = dir.join("rt");
    let made = Command::new(env!("CARGO_BIN_EXE_aioli"))
        .args(["runtime", "--out"])
        .arg(&rt)
        .output()
        .unwrap();
    assert!(made.status.success());
    let exe = dir.join("run");
    let runtime = rt.join("aioli.c");
    let mut all: Vec<&Path> = sources.to_vec();
    all.push(&runtime);
    cc_werror(dir, &all, &exe);
    let ran = Command::new(&exe).output().unwrap();
    String::from_utf8_lossy(&ran.stdout).into_owned()
}

/// A header of macros only, without include guard: its comments stay in
/// it (the `#include` line stands for them), not copied into the output
/// before the next item of the main file.
#[test]
fn comments_of_a_header_without_items_stay_in_it() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "units.h",
        "/* units.h: physical constants */\n#define G0 9.81 /* gravity */\n// end of units.h\n",
    );
    let file = write(
        dir.path(),
        "u.c",
        "/* u.c: main file */\n#include \"units.h\"\n/* after includes */\n\
         void f(double *x, double *y)\n{\n    y[0] = G0 * x[0] * x[0];\n}\n",
    );
    for (mode, suffix) in [("tangent", "_d"), ("adjoint", "_b")] {
        let run = differentiate(mode, &file, "f(y)/(x)", &[], dir.path());
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
        let text = std::fs::read_to_string(dir.path().join(format!("u{suffix}.c"))).unwrap();
        assert!(
            !text.contains("units.h:") && !text.contains("end of units.h"),
            "{text}"
        );
        for kept in ["/* u.c: main file */", "/* after includes */"] {
            assert!(text.contains(kept), "{kept} in {text}");
        }
    }
}

/// Writes `text` to `dir/name` and returns the path.
fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// The analyses and the printer spread their work over the cores
/// (`src/par.rs`); the output must not depend on how many there are.
/// A generated file of many procedures, differentiated in both modes on
/// one thread and on four, gives the same bytes.
#[test]
fn outputs_do_not_depend_on_the_number_of_threads() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("many.c");
    let text = aioli::cgen::realistic_c(1500, 7);
    std::fs::write(&path, &text).unwrap();
    let loaded = aioli::front::load(&path, &aioli::front::FrontOptions::default()).unwrap();
    let program = &loaded.program;
    let mut called = vec![false; program.procs.len()];
    for callees in program.call_graph() {
        for c in callees {
            called[c.index()] = true;
        }
    }
    let heads: Vec<String> = program
        .defined_procs()
        .filter(|(id, _)| !called[id.index()])
        .map(|(_, p)| p.name.clone())
        .collect();
    assert!(heads.len() > 10, "too few heads to share out: {heads:?}");
    for (mode, suffix) in [("tangent", "_d"), ("adjoint", "_b")] {
        let mut outputs = Vec::new();
        for threads in ["1", "4"] {
            let out = dir.path().join(format!("{mode}{threads}"));
            let mut cmd = Command::new(env!("CARGO_BIN_EXE_aioli"));
            cmd.arg(mode).arg(&path).arg("--out").arg(&out);
            for h in &heads {
                cmd.arg("--head").arg(h);
            }
            let result = cmd.env("AIOLI_THREADS", threads).output().unwrap();
            assert!(
                result.status.success(),
                "{mode} on {threads} thread(s): {}",
                String::from_utf8_lossy(&result.stderr)
            );
            outputs.push(std::fs::read_to_string(out.join(format!("many{suffix}.c"))).unwrap());
        }
        assert!(
            outputs[0] == outputs[1],
            "{mode}: one thread and four threads wrote different code"
        );
    }
}
