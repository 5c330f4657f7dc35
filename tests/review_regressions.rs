//! Regressions found by review: C programs whose printed form once
//! computed something else, did not compile, or warned. Each program is
//! printed, the output must compile with `-std=c99 -pedantic-errors -Wall
//! -Wextra -Werror` (when the original does), re-print identically, and
//! compute the same numbers as the original.

mod common;

use aioli::front::{FrontOptions, load};
use common::compile;
use std::path::Path;
use std::process::Command;

/// The program and a `main` that prints what it computes.
const CASES: &[(&str, &str, &str)] = &[
    (
        // `&&`, `||` and `?:` are sequence points: `i++` on their left
        // happens before their right operand reads `i` (`il/split`).
        "postfix_before_sequence_point",
        "int f(int *a) { int i = 0, x; x = a[i++] && a[i]; return x * 10 + i; }\n\
         int g(int *a) { int i = 0; a[5] = a[i++] ? a[i] : 9; return i * 100 + a[5]; }\n\
         int h(int *a) { int i = 0; a[4] += a[i++] || a[i]; return i * 10 + a[4]; }\n\
         int k(int *a) { int i = 3; int x = i-- > 0 ? a[i] : 0; return x * 10 + i; }\n",
        "int f(int *); int g(int *); int h(int *); int k(int *);\n\
         int main(void) { int a[6] = {1, 0, 7, 3, 0, 0}; int r1 = f(a); int r2 = g(a); int r3 = h(a); int r4 = k(a);\n\
         printf(\"%d %d %d %d\\n\", r1, r2, r3, r4); return 0; }\n",
    ),
    (
        // A temporary's declaration cannot follow a case label.
        "temporary_after_case_label",
        "static int g(int n) { return n + 1; }\n\
         int f(int n) { int x = 0; switch (n) { case 1: x = n > 0 ? g(n) : 0; break; default: x = g(g(n)) * 2; } return x; }\n",
        "int f(int);\nint main(void) { printf(\"%d %d\\n\", f(1), f(5)); return 0; }\n",
    ),
    (
        // `#if` arithmetic is unsigned when an operand is: `-1 < 0u` is
        // false.
        "if_unsigned_arithmetic",
        "int f(void) { int r = 0;\n#if -1 < 0u\n r += 8;\n#endif\n#if -1 < 0\n r += 1;\n#endif\n\
         #if (0xFFFFFFFFFFFFFFFF >> 63) == 1 && (-8 >> 1) == -4\n r += 2;\n#endif\n return r; }\n",
        "int f(void);\nint main(void) { printf(\"%d\\n\", f()); return 0; }\n",
    ),
    (
        // `(void)n;` silences -Wunused-parameter; it must survive
        // (`il/discard`).
        "void_cast_kept",
        "int f(int n, int m) { (void)n; return m + 1; }\n",
        "int f(int, int);\nint main(void) { printf(\"%d\\n\", f(1, 2)); return 0; }\n",
    ),
];

fn print(path: &Path) -> String {
    match load(path, &FrontOptions::default()) {
        Ok(l) => aioli::back::print_c(&l.program, &l.sources),
        Err((s, d)) => panic!("{}", aioli::front::diag::render(&s, &d)),
    }
}

#[test]
fn reviewed_programs_round_trip() {
    for (name, program, main) in CASES {
        let dir = tempfile::tempdir().unwrap();
        let original = dir.path().join(format!("{name}.c"));
        std::fs::write(&original, program).unwrap();
        let printed_text = print(&original);
        let printed = dir.path().join(format!("{name}_printed.c"));
        std::fs::write(&printed, &printed_text).unwrap();
        assert_eq!(print(&printed), printed_text, "{name}: not idempotent");
        let strict = [
            "-std=c99",
            "-pedantic-errors",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-c",
        ];
        compile(&strict, &[&printed], &dir.path().join("p.o"))
            .unwrap_or_else(|e| panic!("{name}: printed C rejected:\n{e}\n{printed_text}"));
        let driver = dir.path().join("main.c");
        std::fs::write(&driver, format!("#include <stdio.h>\n{main}")).unwrap();
        let mut outputs = Vec::new();
        for (tag, file) in [("orig", &original), ("printed", &printed)] {
            let exe = dir.path().join(tag);
            compile(&["-std=c99", "-w"], &[file, &driver], &exe).unwrap();
            let run = Command::new(&exe).output().unwrap();
            outputs.push(String::from_utf8_lossy(&run.stdout).into_owned());
        }
        assert_eq!(
            outputs[0], outputs[1],
            "{name}: different numbers\n{printed_text}"
        );
    }
}

/// A `#define` of the main file before `#include "cfg.h"` configures the
/// header: the output keeps the `#define` line, or the header would be read
/// with other macros (here: `real_t` would become `double`).
#[test]
fn macro_lines_before_a_local_include_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let inc = dir.path().join("inc");
    std::fs::create_dir(&inc).unwrap();
    std::fs::write(
        inc.join("cfg.h"),
        "#ifndef CFG_H\n#define CFG_H\n#ifndef REAL\n#define REAL double\n#endif\ntypedef REAL real_t;\n#endif\n",
    )
    .unwrap();
    let original = dir.path().join("cfg.c");
    std::fs::write(
        &original,
        "/* single precision */\n#define REAL float\n#include \"cfg.h\"\ndouble third(void) { real_t t = 1.0 / 3.0; return t; }\n",
    )
    .unwrap();
    let options = FrontOptions {
        include_dirs: vec![inc.clone()],
        defines: Vec::new(),
    };
    let loaded = load(&original, &options)
        .unwrap_or_else(|(s, d)| panic!("{}", aioli::front::diag::render(&s, &d)));
    let printed_text = aioli::back::print_c(&loaded.program, &loaded.sources);
    assert!(
        printed_text
            .starts_with("/* single precision */\n#define REAL float\n#include \"cfg.h\"\n"),
        "{printed_text}"
    );
    let printed = dir.path().join("cfg_printed.c");
    std::fs::write(&printed, &printed_text).unwrap();
    let driver = dir.path().join("main.c");
    std::fs::write(
        &driver,
        "#include <stdio.h>\ndouble third(void);\nint main(void) { printf(\"%a\\n\", third()); return 0; }\n",
    )
    .unwrap();
    let include = format!("-I{}", inc.display());
    let mut outputs = Vec::new();
    for (tag, file) in [("orig", &original), ("printed", &printed)] {
        let exe = dir.path().join(tag);
        compile(&["-std=c99", "-w", &include], &[file, &driver], &exe).unwrap();
        let run = Command::new(&exe).output().unwrap();
        outputs.push(String::from_utf8_lossy(&run.stdout).into_owned());
    }
    assert_eq!(outputs[0], outputs[1]);
}

/// Spellings that carry meaning survive printing: `signed char` (plain
/// `char` may be unsigned on another platform), comments inside a `for`
/// header (printed before the loop), and a comment at the end of the file
/// (it stays there rather than moving into the last function).
#[test]
fn meaningful_spellings_survive() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.c");
    std::fs::write(
        &path,
        "int sc(int v)\n{\n    signed char c = (signed char)v;\n    for (/* from zero */ int i = 0; /* to v */ i < v; i++) {\n        c++;\n    }\n    return c < 0;\n}\n\n/* end of file */\n",
    )
    .unwrap();
    let printed = print(&path);
    assert!(
        printed.contains("signed char c = (signed char)v;"),
        "{printed}"
    );
    assert!(printed.ends_with("}\n\n/* end of file */\n"), "{printed}");
    assert!(
        printed.contains("    /* from zero */\n    /* to v */\n    for (int i = 0; i < v; i++) {"),
        "{printed}"
    );
}
