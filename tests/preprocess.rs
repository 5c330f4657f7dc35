//! Tests of the C preprocessor through its public API.

use aioli::front::FrontOptions;
use aioli::front::diag::Diagnostic;
use aioli::front::lexer::Token;
use aioli::front::lexer::spelling;
use aioli::front::preprocess::{Preprocessed, preprocess};
use aioli::front::source::SourceMap;
use aioli::front::system;
use proptest::prelude::*;
use std::path::{Path, PathBuf};
use tempfile::TempDir;

/// A temporary directory holding the files of one test.
struct Tree {
    dir: TempDir,
}

impl Tree {
    fn new(files: &[(&str, &str)]) -> Tree {
        let dir = tempfile::tempdir().expect("temp dir");
        for (name, text) in files {
            let path = dir.path().join(name);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).expect("mkdir");
            }
            std::fs::write(path, text).expect("write");
        }
        Tree { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn run(
        &self,
        main: &str,
        options: &FrontOptions,
    ) -> (SourceMap, Result<Preprocessed, Diagnostic>) {
        let mut sources = SourceMap::new();
        let result = preprocess(&mut sources, &self.path(main), options);
        (sources, result)
    }
}

/// Preprocesses one file and returns its tokens' spellings joined by spaces.
fn pp_text(text: &str) -> String {
    pp_with(&[("main.c", text)], &FrontOptions::default())
}

fn pp_with(files: &[(&str, &str)], options: &FrontOptions) -> String {
    let tree = Tree::new(files);
    let (sources, result) = tree.run("main.c", options);
    match result {
        Ok(pp) => joined(&pp),
        Err(d) => panic!(
            "unexpected error {}: {}",
            sources.location(d.span),
            d.message
        ),
    }
}

fn joined(pp: &Preprocessed) -> String {
    pp.tokens
        .iter()
        .map(|t| spelling(&t.tok).into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Preprocesses files expecting an error; returns `line:col: message`
/// (the location without the directory).
fn pp_error(files: &[(&str, &str)]) -> String {
    let tree = Tree::new(files);
    let (sources, result) = tree.run("main.c", &FrontOptions::default());
    match result {
        Ok(pp) => panic!("expected an error, got {}", joined(&pp)),
        Err(d) => {
            let location = sources.location(d.span);
            let file = sources.file(d.span.file).path.clone();
            let short = location
                .strip_prefix(&file.display().to_string())
                .unwrap_or(&location)
                .to_string();
            let name = file
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            format!("{name}{short}: {}", d.message)
        }
    }
}

fn defines(list: &[(&str, Option<&str>)]) -> FrontOptions {
    FrontOptions {
        include_dirs: vec![],
        defines: list
            .iter()
            .map(|(n, v)| (n.to_string(), v.map(str::to_string)))
            .collect(),
    }
}

#[test]
fn plain_tokens_pass_through() {
    assert_eq!(pp_text("int x = 1;\n"), "int x = 1 ;");
}

#[test]
fn local_include_with_include_dir_and_guard() {
    let files = [
        (
            "main.c",
            "#include \"a.h\"\n#include \"b.h\"\n#include \"a.h\"\nint z;\n",
        ),
        ("a.h", "#ifndef A_H\n#define A_H\nint a;\n#endif\n"),
        (
            "inc/b.h",
            "// comment before the guard\n#ifndef B_H\n#define B_H\n#include \"a.h\"\nint b;\n#endif\n",
        ),
    ];
    let tree = Tree::new(&files);
    let options = FrontOptions {
        // b.h finds a.h through the second directory.
        include_dirs: vec![tree.path("inc"), tree.path(".")],
        defines: vec![],
    };
    let (sources, result) = tree.run("main.c", &options);
    let pp = result.expect("preprocesses");
    assert_eq!(
        joined(&pp),
        "<include 0> int a ; <include 1> <include 2> int b ; <include 3> int z ;"
    );
    assert_eq!(pp.includes.len(), 4);
    assert_eq!(pp.includes[0].written, "#include \"a.h\"");
    assert!(!pp.includes[0].system);
    let a = pp.includes[0].file.expect("a.h read");
    assert!(sources.file(a).path.ends_with("a.h"));
    assert!(pp.includes[1].file.is_some());
    // Included again: skipped thanks to the guard.
    assert_eq!(pp.includes[2].file, None);
    assert_eq!(pp.includes[3].file, None);
    // The include marks carry the directive's span.
    let mark = &pp.tokens[0];
    assert_eq!(sources.snippet(mark.span), "#include \"a.h\"");
    // Tokens of the header point into the header.
    assert_eq!(pp.tokens[1].span.file, a);
}

#[test]
fn files_that_are_not_fully_guarded_are_read_again() {
    let files = [
        (
            "main.c",
            "#include \"g.h\"\n#include \"g.h\"\n#include \"e.h\"\n#include \"e.h\"\n",
        ),
        ("g.h", "#ifndef G\n#define G\nint g;\n#endif\nint after;\n"),
        (
            "e.h",
            "#if !defined(E)\n#define E\nint e;\n#else\nint again;\n#endif\n",
        ),
    ];
    let tree = Tree::new(&files);
    let (_, result) = tree.run("main.c", &FrontOptions::default());
    let pp = result.expect("preprocesses");
    assert_eq!(
        joined(&pp),
        "<include 0> int g ; int after ; <include 1> int after ; <include 2> int e ; <include 3> int again ;"
    );
    assert!(pp.includes.iter().all(|r| r.file.is_some()));
}

#[test]
fn pragma_once_skips_second_include() {
    let files = [
        ("main.c", "#include \"p.h\"\n#include \"./p.h\"\nint z;\n"),
        ("p.h", "#pragma once\n#pragma omp parallel\nint p;\n"),
    ];
    let tree = Tree::new(&files);
    let (_, result) = tree.run("main.c", &FrontOptions::default());
    let pp = result.expect("preprocesses");
    assert_eq!(joined(&pp), "<include 0> int p ; <include 1> int z ;");
    assert!(pp.includes[0].file.is_some());
    assert_eq!(pp.includes[1].file, None);
    assert_eq!(pp.includes[1].written, "#include \"./p.h\"");
}

#[test]
fn missing_include_is_an_error_at_the_directive() {
    assert_eq!(
        pp_error(&[("main.c", "int a;\n  #include \"nope.h\"\n")]),
        "main.c:2:3: cannot find include file 'nope.h'"
    );
}

#[test]
fn system_headers_are_virtual_and_injected_once() {
    let text = "#include <math.h>\n#include <stdio.h>\n#include <math.h>\n#include <unistd.h>\ndouble y = M_PI;\nvoid *p = NULL;\n";
    let tree = Tree::new(&[("main.c", text)]);
    let (sources, result) = tree.run("main.c", &FrontOptions::default());
    let pp = result.expect("preprocesses");
    assert_eq!(pp.includes.len(), 4);
    assert_eq!(pp.includes[0].written, "#include <math.h>");
    assert!(pp.includes[0].system);
    let math = pp.includes[0].file.expect("math.h injected");
    assert!(pp.system_files.contains(&math));
    assert_eq!(sources.file(math).path, Path::new("<math.h>"));
    assert!(pp.includes[1].file.is_some());
    assert_eq!(pp.includes[2].file, None);
    assert_eq!(pp.includes[3].file, None);
    assert_eq!(pp.system_files.len(), 2);
    let text = joined(&pp);
    assert!(text.contains("double sqrt ( double ) ;"), "{text}");
    assert!(
        text.ends_with("double y = 3.14159265358979323846 ; void * p = NULL ;"),
        "{text}"
    );
    // Exactly one size_t typedef although two headers declare it.
    assert_eq!(text.matches("typedef unsigned long size_t").count(), 1);
}

#[test]
fn object_and_function_like_macros() {
    let text = "#define N 10\n#define SQR(x) ((x)*(x))\n#define ADD(a, b) a + b\nint v = SQR(N) + ADD(SQR(1), N);\n";
    assert_eq!(
        pp_text(text),
        "int v = ( ( 10 ) * ( 10 ) ) + ( ( 1 ) * ( 1 ) ) + 10 ;"
    );
}

#[test]
fn function_like_macro_without_parens_is_not_expanded() {
    assert_eq!(pp_text("#define F(x) x\nint F;\nF\n(2);\n"), "int F ; 2 ;");
}

#[test]
fn self_reference_stops() {
    assert_eq!(
        pp_text("#define NULL NULL\nvoid *p = NULL;\n"),
        "void * p = NULL ;"
    );
    assert_eq!(pp_text("#define foo a foo b\nfoo\n"), "a foo b");
    // Mutual recursion stops too.
    assert_eq!(pp_text("#define A B\n#define B A\nA B\n"), "A B");
    // The classic example of the C standard (6.10.3.5).
    let text = "#define x 3\n#define f(a) f(x * (a))\n#undef x\n#define x 2\n#define g f\n#define z z[0]\nf(y+1) + f(f(z)) % g(z);\n";
    assert_eq!(
        pp_text(text),
        "f ( 2 * ( y + 1 ) ) + f ( 2 * ( f ( 2 * ( z [ 0 ] ) ) ) ) % f ( 2 * ( z [ 0 ] ) ) ;"
    );
}

#[test]
fn stringify_and_paste() {
    let text = "#define STR(x) #x\n#define CAT(a, b) a ## b\n#define XSTR(x) STR(x)\n#define V 42\nSTR(a + \"q\") CAT(var, 1) CAT(, z) XSTR(V) STR(V)\n";
    assert_eq!(pp_text(text), "\"a + \\\"q\\\"\" var1 z \"42\" \"V\"");
    assert_eq!(pp_text("#define CAT(a, b) a ## b\nCAT(<, <=)\n"), "<<=");
}

#[test]
fn variadic_macros() {
    let text = "#define P(fmt, ...) printf(fmt, __VA_ARGS__)\n#define Q(fmt, ...) printf(fmt, ## __VA_ARGS__)\nP(\"%d %d\", 1, 2); Q(\"x\");\n";
    assert_eq!(
        pp_text(text),
        "printf ( \"%d %d\" , 1 , 2 ) ; printf ( \"x\" ) ;"
    );
}

#[test]
fn expanded_tokens_point_at_the_use() {
    let text = "#define TWICE(x) (2 * (x))\n#define ONE 1\nint a = TWICE(b) + ONE;\n";
    let tree = Tree::new(&[("main.c", text)]);
    let (sources, result) = tree.run("main.c", &FrontOptions::default());
    let pp = result.expect("preprocesses");
    let spelled: Vec<(String, String)> = pp
        .tokens
        .iter()
        .map(|t| {
            (
                spelling(&t.tok).into_owned(),
                sources.snippet(t.span).to_string(),
            )
        })
        .collect();
    let find = |s: &str| {
        spelled
            .iter()
            .find(|(a, _)| a == s)
            .map(|(_, b)| b.as_str())
    };
    assert_eq!(find("2"), Some("TWICE(b)"));
    assert_eq!(find("b"), Some("b"));
    assert_eq!(find("1"), Some("ONE"));
    let two = pp
        .tokens
        .iter()
        .find(|t| spelling(&t.tok) == "2")
        .expect("2");
    assert!(sources.location(two.span).ends_with(":3:9"));
}

#[test]
fn conditionals_with_command_line_defines() {
    let text = "#if defined(FAST) && LEVEL > 2\nfast\n#elif defined SLOW || !LEVEL\nslow\n#else\nmedium\n#endif\n#ifdef FAST\nf\n#endif\n#ifndef FAST\nnf\n#endif\n";
    let opts = |d: &[(&str, Option<&str>)]| pp_with(&[("main.c", text)], &defines(d));
    assert_eq!(opts(&[("FAST", None), ("LEVEL", Some("3"))]), "fast f");
    assert_eq!(opts(&[("FAST", None), ("LEVEL", Some("2"))]), "medium f");
    assert_eq!(opts(&[("SLOW", None), ("LEVEL", Some("2"))]), "slow nf");
    assert_eq!(opts(&[]), "slow nf");
    assert_eq!(opts(&[("LEVEL", Some("1"))]), "medium nf");
}

#[test]
fn constant_expressions() {
    let cases = [
        ("1 + 2 * 3 == 7", true),
        ("(1 << 4) == 16 && (0x10 | 1) == 17", true),
        ("-1 < 0 ? 5 % 3 == 2 : 0", true),
        ("UNKNOWN", false),
        ("~0 == -1 && (6 ^ 3) == 5 && (6 & 3) == 2", true),
        ("__STDC_VERSION__ >= 199901L && __STDC__", true),
        ("0 && 1 / 0", false),
        ("'a' == 97", true),
        ("!defined(__STDC__)", false),
    ];
    for (expr, expected) in cases {
        let text = format!("#if {expr}\nyes\n#else\nno\n#endif\n");
        let want = if expected { "yes" } else { "no" };
        assert_eq!(pp_text(&text), want, "{expr}");
    }
}

#[test]
fn deep_if_expressions_are_bounded() {
    let text = format!(
        "#if {}1{}\n#endif\n",
        "(".repeat(100_000),
        ")".repeat(100_000)
    );
    let message = pp_error(&[("main.c", &text)]);
    assert!(message.contains("nested too deeply"), "{message}");
    let text = format!("#if {}1\n#endif\n", "1 ? 2 : ".repeat(100_000));
    let message = pp_error(&[("main.c", &text)]);
    assert!(message.contains("nested too deeply"), "{message}");
    let text = format!("#if {}1\n#endif\n", "- ".repeat(100_000));
    let message = pp_error(&[("main.c", &text)]);
    assert!(message.contains("nested too deeply"), "{message}");
}

#[test]
fn function_like_command_line_define() {
    let options = defines(&[("TWICE(x)", Some("(2*(x))")), ("N", None)]);
    assert_eq!(
        pp_with(&[("main.c", "TWICE(N)\n")], &options),
        "( 2 * ( 1 ) )"
    );
}

#[test]
fn nested_skipped_groups() {
    let text = "#if 0\n#if 1\nno\n#else\nno\n#endif\n#elif 1\nyes\n#else\nno\n#endif\n#undef X\n# \n#line 5\n";
    assert_eq!(pp_text(text), "yes");
}

#[test]
fn skipped_groups_may_hold_anything() {
    assert_eq!(
        pp_text("#if 0\nit's $ broken \"\n#bogus\n#endif\nok\n"),
        "ok"
    );
}

#[test]
fn comments_attach_to_the_next_token() {
    let text = "// header\nint x; // why\n/* block\n   comment */\nint y;\n#define A 1 // dropped\nint z = A; /* end */\n// final\n";
    let tree = Tree::new(&[("main.c", text)]);
    let (_, result) = tree.run("main.c", &FrontOptions::default());
    let pp = result.expect("preprocesses");
    let int_x = &pp.tokens[0];
    assert_eq!(int_x.comments.len(), 1);
    assert_eq!(int_x.comments[0].text, "// header");
    assert!(!int_x.comments[0].same_line_as_prev);
    let int_y = &pp.tokens[3];
    assert_eq!(spelling(&int_y.tok), "int");
    let texts: Vec<(&str, bool)> = int_y
        .comments
        .iter()
        .map(|c| (c.text.as_str(), c.same_line_as_prev))
        .collect();
    assert_eq!(
        texts,
        vec![("// why", true), ("/* block\n   comment */", false)]
    );
    let int_z = &pp.tokens[6];
    assert!(int_z.comments.is_empty());
    let finals: Vec<(&str, bool)> = pp
        .final_comments
        .iter()
        .map(|c| (c.text.as_str(), c.same_line_as_prev))
        .collect();
    assert_eq!(finals, vec![("/* end */", true), ("// final", false)]);
}

#[test]
fn include_mark_takes_the_comments_before_it() {
    let files = [("main.c", "/* math */\n#include <math.h>\n"), ("x.h", "")];
    let tree = Tree::new(&files);
    let (_, result) = tree.run("main.c", &FrontOptions::default());
    let pp = result.expect("preprocesses");
    assert_eq!(pp.tokens[0].tok, Token::IncludeMark(0));
    assert_eq!(pp.tokens[0].comments.len(), 1);
    assert_eq!(pp.tokens[0].comments[0].text, "/* math */");
}

#[test]
fn errors_are_located() {
    let cases: &[(&str, &str)] = &[
        ("int a;\n#if 1\nint b;\n", "main.c:2:1: unterminated #if"),
        ("#if 0\nint b;\n", "main.c:1:1: unterminated #if"),
        ("int a;\n  #else\n", "main.c:2:3: #else without #if"),
        ("\n#endif\n", "main.c:2:1: #endif without #if"),
        (
            "#define F(a, b) a\nint x = F(1);\n",
            "main.c:2:9: macro 'F' expects 2 arguments, but 1 given",
        ),
        (
            "#define F(a) a\nint x = F(1, 2);\n",
            "main.c:2:9: macro 'F' expects 1 argument, but 2 given",
        ),
        (
            "#define F(a) a\nint x = F(1, (2);\n",
            "main.c:2:9: unterminated call of macro 'F'",
        ),
        ("int a;\n#error stop here\n", "main.c:2:1: #error stop here"),
        (
            "#frobnicate\n",
            "main.c:1:1: unknown preprocessing directive '#frobnicate'",
        ),
        (
            "int a; /* never\nends\n",
            "main.c:1:8: unterminated comment",
        ),
        ("int a = 1 @ 2;\n", "main.c:1:11: unexpected character '@'"),
        (
            "char *s = \"abc;\n",
            "main.c:1:11: unterminated string literal",
        ),
        (
            "char c = 'a;\n",
            "main.c:1:10: unterminated character literal",
        ),
        ("int é;\n", "main.c:1:5: unexpected character 'é'"),
        (
            "#if 1 +\n#endif\n",
            "main.c:1:1: expected a value at the end of #if expression",
        ),
        ("#if 1 / 0\n#endif\n", "main.c:1:7: division by zero in #if"),
    ];
    for (text, expected) in cases {
        assert_eq!(pp_error(&[("main.c", text)]), *expected, "{text}");
    }
}

#[test]
fn errors_in_included_files_point_into_them() {
    let files = [
        ("main.c", "#include \"h.h\"\n"),
        ("h.h", "int a;\n#endif\n"),
    ];
    assert_eq!(pp_error(&files), "h.h:2:1: #endif without #if");
}

#[test]
fn include_recursion_is_bounded() {
    let files = [
        ("main.c", "#include \"self.h\"\n"),
        ("self.h", "int a;\n#include \"self.h\"\n"),
    ];
    let message = pp_error(&files);
    assert!(message.ends_with("#include nested too deeply"), "{message}");
    assert!(message.starts_with("self.h:2:1"), "{message}");
}

/// A file that is not UTF-8 is read as Latin-1 (legacy comments); a stray
/// byte in code and a NUL byte are reported where they are.
#[test]
fn bad_bytes_are_reported_where_they_are() {
    let tree = Tree::new(&[]);
    std::fs::write(
        tree.path("latin1.c"),
        b"/* Temp\xe9rature en \xb0C */\nint a;\n",
    )
    .expect("write");
    std::fs::write(tree.path("main.c"), b"int a;\nint b\xff;\n").expect("write");
    std::fs::write(tree.path("nul.c"), b"#include \"nul.h\"\n").expect("write");
    std::fs::write(tree.path("nul.h"), b"int\0a;\n").expect("write");
    let (_, result) = tree.run("latin1.c", &FrontOptions::default());
    assert!(result.is_ok(), "{result:?}");
    let (sources, result) = tree.run("main.c", &FrontOptions::default());
    let d = result.expect_err("a stray byte");
    assert!(
        sources.location(d.span).ends_with("main.c:2:6"),
        "{}",
        sources.location(d.span)
    );
    let (sources, result) = tree.run("nul.c", &FrontOptions::default());
    let d = result.expect_err("NUL byte");
    assert!(
        sources.location(d.span).ends_with("nul.h:1:4"),
        "{}",
        sources.location(d.span)
    );
    let (sources, result) = tree.run("absent.c", &FrontOptions::default());
    let d = result.expect_err("absent");
    assert!(sources.location(d.span).ends_with("absent.c:1:1"));
}

#[test]
fn exponential_macros_are_bounded() {
    let mut text = String::new();
    for i in 0..40 {
        text.push_str(&format!("#define M{i} M{} M{}\n", i + 1, i + 1));
    }
    text.push_str("M0\n");
    let message = pp_error(&[("main.c", &text)]);
    assert!(message.contains("too many tokens"), "{message}");
    let deep = format!(
        "#define F(x) x\n{}1{}\n",
        "F(".repeat(5000),
        ")".repeat(5000)
    );
    let message = pp_error(&[("main.c", &deep)]);
    assert!(message.contains("too deeply"), "{message}");
}

#[test]
fn system_header_texts_lex_cleanly() {
    use logos::Logos;
    for name in system::known_headers() {
        let text = system::header_text(name).expect("known");
        for tok in Token::lexer(text) {
            assert!(tok.is_ok(), "{name}");
        }
    }
    let math = system::header_text("math.h").expect("math.h");
    for f in [
        "sqrt", "cbrt", "exp2", "atanh", "hypot", "tgamma", "copysign", "trunc",
    ] {
        assert!(math.contains(&format!("double {f}(")), "{f}");
        assert!(math.contains(&format!("float {f}f(")), "{f}f");
    }
    let stdio = system::header_text("stdio.h").expect("stdio.h");
    assert!(stdio.contains("typedef struct _IO_FILE FILE;"));
    // `assert` is a call, unless NDEBUG makes it nothing.
    let assert_h = system::header_text("assert.h").expect("assert.h");
    assert!(assert_h.contains("void assert(int);"));
    assert!(assert_h.contains("#ifdef NDEBUG\n#define assert(e) ((void)0)"));
}

#[test]
fn system_headers_preprocess_cleanly_together() {
    let mut text = String::new();
    for name in system::known_headers() {
        text.push_str(&format!("#include <{name}>\n"));
    }
    text.push_str("int m = INT_MIN; bool t = true; size_t n; assert(n);\n");
    let out = pp_text(&text);
    assert!(
        out.ends_with("int m = ( - 2147483647 - 1 ) ; _Bool t = 1 ; size_t n ; assert ( n ) ;"),
        "{out}"
    );
}

/// A dense 50,000-line input preprocesses completely (its speed is measured
/// by `cargo bench --bench front`; tests never time things).
#[test]
fn large_input_preprocesses() {
    let mut text = String::from("#define SQR(x) ((x)*(x))\n#include <math.h>\n");
    for i in 0..50_000 {
        text.push_str(&format!(
            "double f{i}(double x) {{ return SQR(x) + sin(x) * {i}.0; }} // c\n"
        ));
    }
    let tree = Tree::new(&[("main.c", &text)]);
    let (_, result) = tree.run("main.c", &FrontOptions::default());
    let pp = result.expect("preprocesses");
    assert!(pp.tokens.len() > 1_000_000);
}

fn run_bytes(bytes: &[u8]) {
    let tree = Tree::new(&[("h.h", "#define H 1\n")]);
    std::fs::write(tree.path("main.c"), bytes).expect("write");
    let mut sources = SourceMap::new();
    let options = FrontOptions {
        include_dirs: vec![tree.path(".")],
        defines: vec![("D".into(), Some("2".into()))],
    };
    let result = preprocess(&mut sources, &tree.path("main.c"), &options);
    if let Err(d) = result {
        // Rendering must not panic either.
        let _ = aioli::front::diag::render(&sources, &d);
    }
}

const SEED: &str = "#include \"h.h\"\n#include <math.h>\n#define F(a, b) a ## b + #a\n#define G(...) F(__VA_ARGS__)\n#if defined(H) && D > 1\nint F(x, y) = G(1, 2); /* c */\n#elif 0\n#else\n#endif\n// end é\n";

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        run_bytes(&bytes);
    }

    #[test]
    fn mutated_c_never_panics(cut in 0usize..400, len in 0usize..20, insert in "[#()\"'/*,a-z0-9 \n\\\\é]{0,12}") {
        let mut bytes = SEED.as_bytes().to_vec();
        let at = cut.min(bytes.len());
        let end = (at + len).min(bytes.len());
        bytes.splice(at..end, insert.bytes());
        run_bytes(&bytes);
    }
}

/// C's translation phase 2: a backslash-newline is deleted before anything
/// is a token, inside a number, a name or a `//` comment (which then goes
/// on over the next line).
#[test]
fn backslash_newlines_are_spliced_before_tokens() {
    assert_eq!(
        pp_text("double z = 2.0\\\n5 * ex\\\np(x);\n"),
        "double z = 2.05 * exp ( x ) ;"
    );
    assert_eq!(
        pp_text("y = x; // scale \\\ny = 3.0 * y;\nreturn y;\n"),
        "y = x ; return y ;"
    );
    assert_eq!(
        pp_text("#define SQ(a) \\\n  ((a) * (a))\nSQ(t)\n"),
        "( ( t ) * ( t ) )"
    );
}

/// The predefined macros a hosted C99 compiler has, and `_Pragma`.
#[test]
fn predefined_macros_and_the_pragma_operator() {
    assert_eq!(
        pp_text("#if __STDC_HOSTED__\nint hosted;\n#endif\n"),
        "int hosted ;"
    );
    assert_eq!(
        pp_text("int a = __LINE__;\n\nint b = __LINE__;\n"),
        "int a = 1 ; int b = 3 ;"
    );
    let file = pp_text("const char *f = __FILE__;\n");
    assert!(file.contains("main.c\""), "{file}");
    assert_eq!(
        pp_text("#define IVDEP _Pragma(\"GCC ivdep\")\nIVDEP\nfor (;;) ;\n"),
        "for ( ; ; ) ;"
    );
    let bad = pp_error(&[("main.c", "_Pragma(x)\nint a;\n")]);
    assert!(
        bad.contains("_Pragma expects a parenthesised string literal"),
        "{bad}"
    );
}

/// `<stdint.h>` declares the exact-width integer types.
#[test]
fn stdint_types_are_known() {
    let text = system::header_text("stdint.h").expect("stdint.h is known");
    for t in [
        "int32_t",
        "int64_t",
        "uint32_t",
        "uint64_t",
        "intptr_t",
        "uintptr_t",
    ] {
        assert!(text.contains(&format!(" {t};")), "{t}");
    }
}

/// A comment ending an `#include` line stays with it (the output prints
/// the line with it).
#[test]
fn an_include_keeps_its_trailing_comment() {
    let tree = Tree::new(&[("main.c", "#include <math.h>  /* exp */\nint a;\n")]);
    let (_, result) = tree.run("main.c", &FrontOptions::default());
    let pp = result.expect("preprocesses");
    assert_eq!(pp.includes[0].trailing.as_deref(), Some("/* exp */"));
}
