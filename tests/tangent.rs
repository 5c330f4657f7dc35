//! Tangent mode on the fixture corpus (`tests/fixtures/tangent/`):
//! - every rule and derivative entry is exercised by a named fixture
//!   (the coverage table below, checked against the engine's trace);
//! - the output with `--explain` is pinned by snapshots;
//! - the output compiles with `cc -Wall -Wextra -Werror`, links with the
//!   original translation unit, and agrees with central divided
//!   differences (`aioli::check::tangent`).

mod common;

use aioli::analysis::head::parse_head;
use aioli::check::domain::Domain;
use aioli::check::tangent::{TangentCheckOptions, check_tangent};
use aioli::front;
use aioli::transform::tangent::{TangentOptions, load_rules, tangent, tangent_trace};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// For each rule and derivative ID, a fixture whose tangent uses it.
const COVERAGE: &[(&str, &str)] = &[
    ("tangent/procedure", "fig6"),
    ("tangent/formal-diff", "fig6"),
    ("tangent/formal-passive", "fig6"),
    ("tangent/formals-end", "fig6"),
    ("tangent/seq", "fig6"),
    ("tangent/seq-end", "fig6"),
    ("tangent/if-live", "cpaper_fig3"),
    ("tangent/if-dead", "rules_misc"),
    ("tangent/for-live", "fig7"),
    ("tangent/while-live", "while_loop"),
    ("tangent/do-while-live", "do_while"),
    ("tangent/loop-dead-for", "rules_misc"),
    ("tangent/loop-dead-while", "rules_misc"),
    ("tangent/loop-dead-do-while", "rules_misc"),
    ("tangent/switch-live", "switch_fallthrough"),
    ("tangent/switch-dead", "rules_misc"),
    ("tangent/cases", "switch_fallthrough"),
    ("tangent/cases-end", "switch_fallthrough"),
    ("tangent/case", "switch_fallthrough"),
    ("tangent/block", "rules_misc"),
    ("tangent/jump-break", "break_continue"),
    ("tangent/jump-continue", "break_continue"),
    ("tangent/return-diff", "fig9"),
    ("tangent/return-passive", "call_unused_result"),
    ("tangent/empty", "rules_misc"),
    ("tangent/empty-discard", "rules_misc"),
    ("tangent/assign-live-diff", "fig6"),
    ("tangent/assign-live-implicit-zero", "fig8"),
    ("tangent/assign-live-nodiff", "fig8"),
    ("tangent/assign-dead-diff", "struct_array"),
    ("tangent/assign-dead-nodiff", "struct_array"),
    ("tangent/assign-dead-implicit-zero", "rules_misc"),
    ("tangent/assign-pointer", "cpaper_fig3"),
    ("tangent/assign-pointer-dead", "rules_misc"),
    ("tangent/decl", "cpaper_test"),
    ("tangent/decl-dead", "fig9"),
    ("tangent/decl-static", "static_const_table"),
    ("tangent/declarator-dead", "fig9"),
    ("tangent/declarator-dead-passive", "fig8"),
    ("tangent/declarators-dead-end", "fig9"),
    ("tangent/declarator-zero", "rules_misc"),
    ("tangent/declarator-init", "cpaper_test"),
    ("tangent/declarator-pointer", "array_slices"),
    ("tangent/declarator-passive", "func_return"),
    ("tangent/declarators-end", "cpaper_test"),
    ("tangent/init-expr", "cpaper_test"),
    ("tangent/init-list", "rules_misc"),
    ("tangent/inits", "rules_misc"),
    ("tangent/inits-end", "rules_misc"),
    ("tangent/alloc", "malloc_scratch"),
    ("tangent/alloc-passive", "rules_misc"),
    ("tangent/free", "malloc_scratch"),
    ("tangent/free-passive", "rules_misc"),
    ("tangent/return-pointer", "pointer_results"),
    ("tangent/call-active", "fig9"),
    ("tangent/call-passive", "call_passive_int"),
    ("tangent/call-passive-implicit-zero", "rules_misc"),
    ("tangent/call-dead", "call_unused_result"),
    ("tangent/actuals-diff", "fig9"),
    ("tangent/actuals-passive", "recursion_pow"),
    ("tangent/actuals-end", "fig9"),
    ("tangent/actual-value", "fig9"),
    ("tangent/actual-ref", "struct_pointer_member"),
    ("tangent/actual-dummy", "struct_value"),
    ("tangent/expr-active", "fig6"),
    ("tangent/expr-passive", "cpaper_test"),
    ("tangent/exprs", "fig6"),
    ("tangent/exprs-end", "fig6"),
    ("tangent/d-add", "fig6"),
    ("tangent/d-sub", "fig7"),
    ("tangent/d-mul", "fig6"),
    ("tangent/d-div", "math_trig"),
    ("tangent/d-neg", "math_explog"),
    ("tangent/d-plus", "operators_arith"),
    ("tangent/d-cond", "ternary"),
    ("tangent/d-cast", "float_mixed"),
    ("tangent/d-intrinsic", "fig6"),
    ("tangent/d-ref", "fig6"),
    ("tangent/ref-var", "fig6"),
    ("tangent/ref-index", "fig6"),
    ("tangent/ref-field", "struct_pointer_member"),
    ("tangent/ref-deref", "cpaper_test"),
    ("tangent/ref-addr", "cpaper_fig3"),
    ("tangent/ref-offset", "array_slices"),
    ("tangent/ref-offset-left", "rules_misc"),
    ("tangent/ref-offset-sub", "array_slices"),
    ("tangent/ref-cast", "rules_misc"),
    ("tangent/ref-cond", "rules_misc"),
    ("deriv/sqrt", "early_return"),
    ("deriv/cbrt", "math_explog"),
    ("deriv/exp", "void_outputs"),
    ("deriv/exp2", "math_explog"),
    ("deriv/expm1", "math_explog"),
    ("deriv/log", "void_outputs"),
    ("deriv/log2", "math_explog"),
    ("deriv/log10", "math_explog"),
    ("deriv/log1p", "math_explog"),
    ("deriv/pow", "math_explog"),
    ("deriv/sin", "fig9"),
    ("deriv/cos", "fig6"),
    ("deriv/tan", "math_trig"),
    ("deriv/asin", "math_trig"),
    ("deriv/acos", "math_trig"),
    ("deriv/atan", "math_trig"),
    ("deriv/atan2", "math_trig"),
    ("deriv/sinh", "math_hyperbolic"),
    ("deriv/cosh", "math_hyperbolic"),
    ("deriv/tanh", "math_hyperbolic"),
    ("deriv/asinh", "math_hyperbolic"),
    ("deriv/acosh", "math_hyperbolic"),
    ("deriv/atanh", "math_hyperbolic"),
    ("deriv/hypot", "math_trig"),
    ("deriv/fabs", "math_special"),
    ("deriv/fmin", "math_special"),
    ("deriv/fmax", "math_special"),
    ("deriv/erf", "math_special"),
    ("deriv/erfc", "math_special"),
    ("deriv/lgamma", "math_special"),
    ("deriv/tgamma", "math_special"),
    ("deriv/fmod", "math_special"),
    ("deriv/copysign", "math_special"),
    ("tangent/init-address", "pointer_init_lists"),
    ("tangent/ref-null", "linked_list"),
    ("deriv/fma", "math_statements"),
    ("deriv/fdim", "math_statements"),
    ("deriv/ldexp", "math_statements"),
    ("deriv/scalbn", "math_statements"),
    ("deriv/remainder", "math_statements"),
    ("deriv/rint", "math_statements"),
    ("deriv/nearbyint", "math_statements"),
    ("deriv/nextafter", "math_statements"),
];

/// Fixtures aioli refuses, with the words of the refusal.
const EXPECTED_REFUSALS: &[(&str, &str)] = &[];

struct Generated {
    program: aioli::il::Program,
    heads: Vec<aioli::analysis::head::Head>,
    text: String,
    trace: BTreeSet<String>,
}

fn generate(path: &Path, explain: bool) -> Result<Generated, String> {
    let cfg = common::config(path);
    let dir = path.parent().unwrap();
    let loaded = front::load(path, &common::front_options(&cfg.flags, dir))
        .map_err(|(s, d)| front::diag::render(&s, &d))?;
    let head = parse_head(&loaded.program, &cfg.head)?;
    let opts = TangentOptions {
        explain,
        ..TangentOptions::default()
    };
    let rules = load_rules(&opts).map_err(|e| e.to_string())?;
    let (_, trace) = aioli::transform::specialize::analyzed(
        &loaded.program,
        std::slice::from_ref(&head),
        aioli::transform::specialize::Target::Tangent,
        |a| tangent_trace(a, &rules, &opts),
    )
    .map_err(|d| front::diag::render(&loaded.sources, &d))?;
    let text = tangent(
        &loaded.program,
        &loaded.sources,
        std::slice::from_ref(&head),
        &rules,
        &opts,
    )
    .map_err(|d| front::diag::render(&loaded.sources, &d))?;
    Ok(Generated {
        program: loaded.program,
        heads: vec![head],
        text,
        trace,
    })
}

fn fixtures() -> Vec<PathBuf> {
    common::c_files("tangent")
}

fn stem(p: &Path) -> String {
    p.file_stem().unwrap().to_string_lossy().into_owned()
}

fn refused(name: &str) -> Option<&'static str> {
    EXPECTED_REFUSALS
        .iter()
        .find(|(f, _)| *f == name)
        .map(|(_, w)| *w)
}

#[test]
fn every_rule_has_a_fixture_that_uses_it() {
    // AIOLI_PRINT_TRACES=1 prints each fixture's trace, to update the table.
    let print = std::env::var("AIOLI_PRINT_TRACES").is_ok();
    let mut traces = std::collections::BTreeMap::new();
    for f in fixtures() {
        if refused(&stem(&f)).is_some() {
            continue;
        }
        let g = generate(&f, false).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        if print {
            println!(
                "{}: {}",
                stem(&f),
                g.trace.iter().cloned().collect::<Vec<_>>().join(" ")
            );
        }
        traces.insert(stem(&f), g.trace);
    }
    let mut rules = BTreeSet::new();
    for (name, text) in aioli::transform::tangent::bundled_rules() {
        let (rs, ds) = aioli::engine::syntax::parse_file(&name, &text).unwrap();
        rules.extend(rs.into_iter().map(|r| r.id));
        rules.extend(ds.into_iter().map(|d| d.id));
    }
    let mut problems = Vec::new();
    for (id, fixture) in COVERAGE {
        match traces.get(*fixture) {
            Some(t) if t.contains(*id) => {}
            Some(_) => problems.push(format!("{fixture} does not use {id}")),
            None => problems.push(format!("{fixture}: no such fixture")),
        }
    }
    let covered: BTreeSet<&str> = COVERAGE.iter().map(|(id, _)| *id).collect();
    for r in &rules {
        if !covered.contains(r.as_str()) && !UNREACHABLE.iter().any(|(id, _)| id == r) {
            let users: Vec<_> = traces
                .iter()
                .filter(|(_, t)| t.contains(r))
                .map(|(f, _)| f.as_str())
                .collect();
            problems.push(format!(
                "{r} has no fixture in COVERAGE (used by: {users:?})"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Rules no fixture of the corpus reaches, with the reason.
const UNREACHABLE: &[(&str, &str)] = &[
    (
        "tangent/assign-dead-diff",
        "in tangent mode the original outputs are live at the exit, so a value whose derivative is needed is live too",
    ),
    (
        "tangent/call-passive-result",
        "isActiveCall includes the result's Active+, so such a call is active (tangent/call-active zeroes the result's derivative)",
    ),
    (
        "tangent/call-external",
        "needs a --rules file: external_function_with_a_user_derivative",
    ),
    (
        "tangent/call-external-unknown",
        "a refusal: external_function_without_derivative_is_refused",
    ),
    (
        "tangent/call-external-passive",
        "external_call_without_active_result_is_kept",
    ),
    (
        "deriv/floor",
        "integer-valued: the analyses never make its call active (`diff-dep` positions)",
    ),
    ("deriv/ceil", "integer-valued, as deriv/floor"),
    ("deriv/round", "integer-valued, as deriv/floor"),
    ("deriv/trunc", "integer-valued, as deriv/floor"),
    ("deriv/abs", "the integer abs is never active"),
];

fn tangent_of_text(
    name: &str,
    c: &str,
    head: &str,
    user_rules: &[(String, String)],
) -> Result<String, String> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, c).unwrap();
    let loaded =
        front::load(&path, &Default::default()).map_err(|(s, d)| front::diag::render(&s, &d))?;
    let head = parse_head(&loaded.program, head)?;
    let opts = TangentOptions {
        explain: true,
        user_rules: user_rules.to_vec(),
        ..TangentOptions::default()
    };
    let rules = load_rules(&opts).map_err(|e| e.to_string())?;
    tangent(&loaded.program, &loaded.sources, &[head], &rules, &opts)
        .map_err(|d| front::diag::render(&loaded.sources, &d))
}

const EXTERNAL: &str = "double softplus(double x);\n\
void f(const double *x, double *y)\n\
{\n\
    y[0] = softplus(x[0] * x[1]);\n\
}\n";

#[test]
fn external_function_with_a_user_derivative() {
    let rules = vec![(
        "my.rules".to_string(),
        "# `user/softplus`\nderivative user/softplus (softplus ?X) : (div 1 (add 1 (exp (neg ?X))))\n".to_string(),
    )];
    let out = tangent_of_text("ext.c", EXTERNAL, "f(y)/(x)", &rules).unwrap();
    assert!(out.contains("/* tangent/call-external */"), "{out}");
    assert!(
        out.contains("exp(-(x[0] * x[1]))")
            || out.contains("exp(-x[0] * x[1])")
            || out.contains("exp("),
        "{out}"
    );
    insta::assert_snapshot!("tangent_external_user_rule", out);
}

#[test]
fn external_function_without_derivative_is_refused() {
    let err = tangent_of_text("ext.c", EXTERNAL, "f(y)/(x)", &[]).unwrap_err();
    assert!(
        err.contains("no derivative is known for external function 'softplus'"),
        "{err}"
    );
    assert!(err.contains("ext.c:"), "the error is located: {err}");
}

#[test]
fn external_call_without_active_result_is_kept() {
    let c = "#include <stdio.h>\nvoid f(const double *x, double *y)\n{\n    printf(\"%g\\n\", x[0]);\n    y[0] = 2.0 * x[0];\n}\n";
    let out = tangent_of_text("print.c", c, "f(y)/(x)", &[]).unwrap();
    assert!(
        out.contains("printf(\"%g\\n\", x[0]);  /* tangent/call-external-passive */"),
        "{out}"
    );
}

#[test]
fn a_broken_user_rule_file_is_reported_with_file_and_line() {
    let rules = vec![(
        "my.rules".to_string(),
        "\nderivative user/g (g ?X) (cos ?X)\n".to_string(),
    )];
    let err = tangent_of_text("ext.c", EXTERNAL, "f(y)/(x)", &rules).unwrap_err();
    assert!(err.starts_with("my.rules:2:"), "{err}");
}

#[test]
fn explained_output_snapshots() {
    for f in fixtures() {
        let name = stem(&f);
        if refused(&name).is_some() {
            continue;
        }
        let g = generate(&f, true).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        insta::assert_snapshot!(format!("tangent_{name}"), g.text);
    }
}

/// `tangent/output`, `tangent/names`, `tangent/types`, `tangent/terms`: the
/// output of every fixture is valid C under `-Wall -Wextra -Werror` and
/// links with the original translation unit (`tangent/reset-merge` is
/// checked numerically by `tests/tangent_dual.rs`).
#[test]
fn output_compiles_without_warnings_and_links_with_the_original() {
    let work = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for f in fixtures() {
        let name = stem(&f);
        if refused(&name).is_some() {
            continue;
        }
        let cfg = common::config(&f);
        let dir = f.parent().unwrap();
        let g = generate(&f, true).unwrap();
        let out = work.path().join(format!("{name}_d.c"));
        std::fs::write(&out, &g.text).unwrap();
        let main = work.path().join(format!("{name}_main.c"));
        std::fs::write(&main, "int main(void) { return 0; }\n").unwrap();
        let exe = work.path().join(&name);
        let status = std::process::Command::new(common::cc())
            .args(["-std=c99", "-Wall", "-Wextra", "-Werror", "-O0"])
            .args(common::cc_flags(&cfg.flags, dir))
            .arg(&f)
            .arg(&out)
            .arg(&main)
            .arg("-lm")
            .arg("-o")
            .arg(&exe)
            .output()
            .unwrap();
        if !status.status.success() {
            failures.push(format!(
                "{name}:\n{}",
                String::from_utf8_lossy(&status.stderr)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn tangent_agrees_with_divided_differences() {
    let work = tempfile::tempdir().unwrap();
    let mut report = Vec::new();
    let mut failed = false;
    for f in fixtures() {
        let name = stem(&f);
        if refused(&name).is_some() {
            continue;
        }
        let cfg = common::config(&f);
        let g = generate(&f, false).unwrap();
        let out = work.path().join(format!("{name}_d.c"));
        std::fs::write(&out, &g.text).unwrap();
        let single = g
            .program
            .symbols
            .iter()
            .any(|s| format!("{:?}", s.ty.ty).contains("Float"));
        let opts = TangentCheckOptions {
            front: common::front_options(&cfg.flags, f.parent().unwrap()),
            time_budget_ms: 0,
            points: 2,
            // Divided differences in single precision reach about half of
            // float's digits.
            min_digits: if single { 2.0 } else { 5.0 },
            ..TangentCheckOptions::default()
        };
        let domain = Domain::parse(&cfg.domain).unwrap();
        match check_tangent(&f, &g.program, &g.heads[0], &domain, &out, &opts) {
            Ok(r) => {
                let worst = r
                    .dependents
                    .iter()
                    .map(|d| d.digits)
                    .fold(f64::INFINITY, f64::min);
                report.push(format!(
                    "{name}: {worst:.1} digits{}",
                    if r.passed { "" } else { "  FAILED" }
                ));
                failed |= !r.passed;
            }
            Err(e) => {
                report.push(format!("{name}: error {e}"));
                failed = true;
            }
        }
    }
    assert!(!failed, "{}", report.join("\n"));
}

#[test]
fn refused_fixtures_are_refused_with_a_message() {
    for (name, words) in EXPECTED_REFUSALS {
        let f = common::fixture_dir("tangent").join(format!("{name}.c"));
        match generate(&f, false) {
            Ok(_) => panic!("{name} is no longer refused: remove it from EXPECTED_REFUSALS"),
            Err(e) => assert!(e.contains(words), "{name}: {e}"),
        }
    }
}

/// `specialize/alias`: one address given to two formals of a callee that
/// writes through one (`g(y, &y[0])`) goes to a copy of the callee where
/// they are one formal, the other left unused (`(void)p;`); a callee that
/// moves one of them cannot be given the copy, and the call is refused.
/// Passed twice and only read there (`mul(c, x, x)`), the copy reads one
/// formal twice.
#[test]
fn one_buffer_passed_twice_to_an_active_call_goes_to_a_merged_copy() {
    let c = "static void g(const double *p, double *q)\n{\n    q[0] = q[0] * p[0];\n}\nvoid f(double *y)\n{\n    g(y, &y[0]);\n}\n";
    let out = tangent_of_text("alias.c", c, "f(y)/(y)", &[]).unwrap();
    assert!(out.contains("g_d(y, &y[0], &yd[0]);"), "{out}");
    assert!(out.contains("(void)p;"), "{out}");
    assert!(out.contains("qd[0] = qd[0] * (q[0] + q[0]);"), "{out}");
    let c = "static void g(const double *p, double *q, int n)\n{\n    for (int i = 0; i < n; i++) {\n        q[i] = q[i] * p[0];\n        p++;\n    }\n}\nvoid f(double *y)\n{\n    g(y, &y[0], 2);\n}\n";
    let err = tangent_of_text("moved.c", c, "f(y)/(y)", &[]).unwrap_err();
    assert!(err.contains("arguments overlap"), "{err}");
    assert!(err.contains("moved.c:10:5"), "{err}");
    let c = "static void mul(double *c, const double *a, const double *b)\n{\n    c[0] = a[0] * b[0];\n}\n\
double f(double *x)\n{\n    double c[1];\n    mul(c, x, x);\n    return c[0];\n}\n";
    let out = tangent_of_text("twice.c", c, "f(f)/(x)", &[]).unwrap();
    assert!(out.contains("mul_d(c, cd, x, xd, x);"), "{out}");
}

/// `specialize/struct-result`, `il/cond-struct`, `tangent/names`,
/// `tangent/call-frees`: structs holding pointers to reals as values. A
/// constructor returning one gives it back through a pointer
/// (`vec_zeros_d(n, &t, &td)`), a view chosen by `?:` is chosen in an `if`
/// with its derivative, a local pointer to a struct whose pointer member
/// has a derivative gets one (`dstd = &otherd`), and a destructor taking
/// the struct by value frees the derivative buffer too. A passive call of
/// such a constructor, and the constructor the output carries, print as
/// written. Numbers: the fixture's checks.
#[test]
fn struct_values_holding_pointers_keep_their_derivative_pointers() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tangent");
    let g = generate(&dir.join("struct_values.c"), false).unwrap();
    let code = common::code_without_comments(&g.text);
    for line in [
        "vec_zeros_d(n, &t, &td);",
        "vec_view_d(x, xd, n, &vx, &vxd);",
        "chosend = vxd;",
        "Vec_d *dstd = &otherd;",
        "*dstd = *srcd;",
        "vec_free_d(t, td);",
        "free(vd.data);",
    ] {
        assert!(code.contains(line), "{line} in {code}");
    }
    let c = "#include <stdlib.h>\ntypedef struct {\n    int n;\n    double *data;\n} Vec;\n\
static Vec vec_ones(int n)\n{\n    Vec v;\n    v.n = n;\n    v.data = malloc(n * sizeof(double));\n    for (int i = 0; i < n; i++)\n        v.data[i] = 1.0;\n    return v;\n}\n\
double f(int n, const double *x)\n{\n    Vec w = vec_ones(n);\n    double s = 0.0;\n    for (int i = 0; i < n; i++)\n        s += w.data[i] * x[i] * x[i];\n    free(w.data);\n    return s;\n}\n";
    let out = tangent_of_text("passive.c", c, "f(f)/(x)", &[]).unwrap();
    for line in [
        "static Vec vec_ones(int n)",
        "return v;",
        "w = vec_ones(n);",
    ] {
        assert!(out.contains(line), "{line} in {out}");
    }
    // Pointers reached through members and local pointers get derivative
    // pointers (`tangent/names`).
    let g = generate(&dir.join("pointer_members.c"), false).unwrap();
    let code = common::code_without_comments(&g.text);
    for line in [
        "Vec_d *v;",
        "hd.v = &ad;",
        "md.rows = tabd;",
        "tabd[i] = &xd[i * n];",
        "Vec_d *pbd = &bd;",
        "pbd->data = md.rows[n - 1];",
    ] {
        assert!(code.contains(line), "{line} in {code}");
    }
    // Cursors and copies of pointers into a heap pool of nodes.
    let g = generate(&dir.join("linked_nodes.c"), false).unwrap();
    let code = common::code_without_comments(&g.text);
    for line in [
        "Node_d *curd = headd;",
        "curd->next = ndd;",
        "Node_d *td = headd;",
        "td->next = &poold[2];",
    ] {
        assert!(code.contains(line), "{line} in {code}");
    }
}

#[test]
fn a_global_passed_by_address_to_a_callee_using_it_by_name_is_refused() {
    // `g(&s)` where g also writes `s` by name: the callee's analysis treats
    // `*out` and `s` as distinct, so the derivative would be wrong.
    let c = "double s;\nstatic void g(double u, double *out)\n{\n    s = u * u;\n    *out = *out * s;\n}\nvoid f(double a, double *y)\n{\n    s = a;\n    g(2.0, &s);\n    *y = s;\n}\n";
    let err = tangent_of_text("gal.c", c, "f(y)/(a)", &[]).unwrap_err();
    assert!(err.contains("address of global 's'"), "{err}");
    assert!(err.contains("gal.c:10:5"), "{err}");
    // Passing a different global is fine.
    let ok = "double s;\ndouble t;\nstatic void g(double u, double *out)\n{\n    s = u * u;\n    *out = *out * s;\n}\nvoid f(double a, double *y)\n{\n    t = a;\n    g(2.0, &t);\n    *y = t;\n}\n";
    tangent_of_text("gal.c", ok, "f(y)/(a)", &[]).expect("distinct globals are differentiated");
}

/// `tangent/share-calls`: each call the statement and its derivative both
/// need is made once (the fixture is also compiled, run and compared with
/// divided differences and dual numbers like every other); a call only
/// under a `?:` branch stays where it is; `tangent/reset-merge` leaves out
/// the reset right after a declaration that zeroes the same derivative.
#[test]
fn shared_calls_are_computed_once_and_keep_the_values() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tangent");
    let g = generate(&dir.join("shared_calls.c"), false).unwrap();
    let body = &g.text[g.text.find("shared_calls_d(").unwrap()..];
    let code = common::code_without_comments(body);
    let count = |call: &str| code.matches(call).count();
    for call in [
        "tanh(u * v)",
        "exp(u)",
        "log(v)",
        "expf(w[1])",
        "sin(v)",
        "pow(u, v)",
    ] {
        assert_eq!(count(call), 1, "{call} in\n{body}");
    }
    assert!(body.contains("temp = sqrt(u);"), "{body}");
    assert!(body.contains("temp0 = exp(temp);"), "{body}");
    assert_eq!(count("sqrt(u)"), 1, "{body}");
    assert_eq!(count("sqrt(v)"), 2, "{body}");
    assert!(body.contains("float temp1;"), "{body}");
    // The value of u before `u = exp(u)` is the one its derivative reads.
    let at = body.find("temp = exp(u);").unwrap();
    assert!(body[at..].find("ud = temp * ud;").is_some(), "{body}");
    // Past the primal result's store, up to the `return`: a call of
    // private scalars only (z, a parameter whose address is not taken).
    let sigm = tangent_of_text(
        "sigm.c",
        "#include <math.h>\ndouble sigm(double z, double *q)\n{\n    return 1.0 / (1.0 + exp(-z)) + exp(q[0]);\n}\n",
        "sigm(sigm)/(z q)",
        &[],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let sigm = common::code_without_comments(&sigm);
    assert_eq!(sigm.matches("exp(-z)").count(), 1, "{sigm}");
    // exp(q[0]) reads memory the result's store may change: not past it.
    assert_eq!(sigm.matches("exp(q[0])").count(), 2, "{sigm}");
    let horner = generate(&dir.join("bench_horner.c"), false).unwrap();
    assert!(horner.text.contains("double dpd = 0.0, dp = 0.0;"));
    assert!(!horner.text.contains("dpd = 0.0;\n"), "{}", horner.text);
}

/// `tangent/recurrence`: in a loop, a derivative assignment reading its
/// own target puts that target last, so one iteration waits for the
/// previous one through one multiplication and one addition: Horner's
/// `pd` keeps its terms and moves its own last; the Newton step's `zd`,
/// read in several terms, becomes R + C * zd; `termd`'s division moves
/// into its coefficient. A recurrence outside a loop is left as written.
#[test]
fn recurrences_put_their_own_derivative_last() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tangent");
    let g = generate(&dir.join("bench_horner.c"), false).unwrap();
    let code = common::code_without_comments(&g.text);
    assert!(code.contains("pd = p * td + coefd[k] + pd * t;"), "{code}");
    assert!(code.contains("dpd = dp * td + pd + dpd * t;"), "{code}");
    let g = generate(&dir.join("while_loop.c"), false).unwrap();
    let code = common::code_without_comments(&g.text);
    let zd = &code[code.find("zd =\n").unwrap()..];
    let zd = zd[..zd.find(';').unwrap()]
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(zd.ends_with("* zd"), "{zd}");
    assert_eq!(zd.matches("zd").count(), 2, "{zd}");
    assert!(
        code.contains("termd = term * xd / k + x / k * termd;"),
        "{code}"
    );
    let work = tempfile::tempdir().unwrap();
    let path = work.path().join("once.c");
    std::fs::write(
        &path,
        "// aioli: head='once(y)/(x)'\nvoid once(double x, double *y)\n{\n    double s = x;\n    s = (s * x + x) / (s + 2.0);\n    *y = s;\n}\n",
    )
    .unwrap();
    let g = generate(&path, false).unwrap();
    let code = common::code_without_comments(&g.text);
    let sd = &code[code.find("sd =").unwrap()..];
    assert!(
        !sd[..sd.find(';').unwrap()].trim_end().ends_with("* sd"),
        "{code}"
    );
}

/// `tangent/names`, `tangent/actual-dummy`, `specialize/activity`: a
/// struct whose pointer member points to passive data, passed where the
/// callee's formal has a derivative, would need a zero dummy with null
/// pointer members; each such call goes to a copy of the callee in which
/// that formal is passive instead.
#[test]
fn a_dummy_derivative_holding_pointers_gives_way_to_a_copy() {
    let src = "typedef struct { double *v; int n; } Vec;\n\
static double dot(const Vec *a, const Vec *b)\n\
{\n\
    double s = 0.0;\n\
    for (int i = 0; i < a->n; i++) s += a->v[i] * b->v[i];\n\
    return s;\n\
}\n\
double f(int n, const double *x, double *data)\n\
{\n\
    double buf[8];\n\
    for (int i = 0; i < n; i++) buf[i] = 2.0 * x[i];\n\
    Vec a, b;\n\
    a.v = buf;\n\
    a.n = n;\n\
    b.v = data;\n\
    b.n = n;\n\
    return dot(&a, &b) + dot(&b, &a);\n\
}\n";
    let out = tangent_of_text("dummy.c", src, "f(f)/(x)", &[]).unwrap();
    let code = common::code_without_comments(&out);
    // `dot` for (active, passive) and its copy for (passive, active).
    assert!(code.contains("dot_d(&a, &ad, &b, &aioli_tmp);"), "{code}");
    assert!(code.contains("dot_d0(&b, &a, &ad, &aioli_tmp1);"), "{code}");
    assert!(!code.contains("dummyd"), "{code}");
}

/// `il/decl`, `il/mem-loop`, `adjoint/refuse` (both modes): declarators
/// reading earlier ones of their declaration are initialised in turn;
/// `memcpy` and `memset` on typed memory are loops whose derivatives both
/// modes write (fixture `chains_and_copies`, checked like every fixture);
/// `memmove` and `modf`, whose writes aioli cannot see, are refused at the
/// call instead of being dropped.
#[test]
fn library_writes_are_loops_or_refused() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tangent");
    let g = generate(&dir.join("chains_and_copies.c"), false).unwrap();
    let code = common::code_without_comments(&g.text);
    assert!(code.contains("yd[aioli_tmp] = xd[aioli_tmp];"), "{code}");
    assert!(code.contains("bufd[aioli_tmp1] = 0.0;"), "{code}");
    assert!(
        code.contains("double t2d = 2.0 * (td * t), t2 = t * t;"),
        "{code}"
    );
    assert!(
        !code.contains("memcpy(") && !code.contains("memset("),
        "{code}"
    );
    for (call, arg) in [
        ("memmove(y, x, n * sizeof(double));", 1),
        ("y[0] = modf(x[0], &y[1]);", 2),
    ] {
        let src = format!(
            "#include <math.h>\n#include <string.h>\nvoid f(int n, const double *x, double *y)\n{{\n    {call}\n    y[0] *= x[0];\n}}\n"
        );
        let err = tangent_of_text("hidden.c", &src, "f(y)/(x)", &[]).unwrap_err();
        assert!(err.contains("hidden.c:5:"), "{err}");
        assert!(
            err.contains(&format!("through argument {arg}, and aioli cannot see")),
            "{err}"
        );
    }
}

/// `specialize/activity`: `dot` is called with both arguments active and
/// with a slice of a passive pointer parameter or a passive heap buffer,
/// whose zero dummy cannot be sized: those calls go to a copy with no
/// derivative for that argument; a copy's own calls (`rownorm`'s copy
/// calling `dot`, the recursive `rdot`) go to copies too; primal calls
/// stay calls of the user's functions. The fixture's numbers are checked
/// like every fixture's (dual numbers, divided differences, compiled).
#[test]
fn calls_with_other_activity_patterns_get_copies() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tangent");
    let g = generate(&dir.join("activity_patterns.c"), false).unwrap();
    let code = common::code_without_comments(&g.text);
    let flat = code.split_whitespace().collect::<Vec<_>>().join(" ");
    for signature in [
        "static double dot_d( const double *a, const double *ad, const double *b, const double *bd, int d, double *dot )",
        "static double dot_d0(const double *a, const double *b, const double *bd, int d, double *dot)",
        "static double rdot_d0(const double *a, const double *b, const double *bd, int d,",
    ] {
        assert!(flat.contains(signature), "{signature} in {code}");
    }
    for call in [
        "dot_d0(&X[i * d], w, wd, d,",
        "rownorm_d0(&X[i * d], w, wd, d,",
        "dot_d(w, wd, v, vd, d,",
        "rdot_d0(mean, w, wd, d,",
        "pd = dot_d0(row, w, wd, d, &p);",
        "rdot_d0(a + 1, b + 1, bd + 1, d - 1,",
    ] {
        assert!(flat.contains(call), "{call} in {code}");
    }
    // No copy's primal is defined: `dot` is defined once (the static
    // function the output carries), and nowhere under another name.
    assert_eq!(flat.matches("static double dot(").count(), 0, "{code}");
}

/// `tangent/pointer-result`: a helper returning a pointer to memory with
/// derivatives returns the derivative pointer, the primal pointer coming
/// back through `&p`; in adjoint mode `P_fwd` returns the primal pointer
/// and gives the adjoint one back (`adjoint/pointer-result`).
#[test]
fn pointer_results_come_back_with_their_derivative_pointers() {
    let src = "#include <stdlib.h>\n\
static double *sq(const double *z)\n\
{\n\
double *p = malloc(sizeof(double));\n\
p[0] = z[0] * z[0];\n\
return p;\n\
}\n\
double f(const double *z)\n\
{\n\
double *p = sq(z);\n\
double r = p[0];\n\
free(p);\n\
return r;\n\
}\n";
    let code = tangent_of_text("ptr.c", src, "f(f)/(z)", &[]).unwrap();
    let flat: String = code
        .lines()
        .map(|l| l.split("/*").next().unwrap_or(""))
        .flat_map(str::split_whitespace)
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        flat.contains("static double *sq_d(const double *z, const double *zd, double **sq)"),
        "{code}"
    );
    assert!(flat.contains("*sq = p; return pd;"), "{code}");
    assert!(flat.contains("pd = sq_d(z, zd, &p);"), "{code}");
    // The fixture's accessor is read inside an expression: the call that
    // sets the primal pointer is not folded into the statement reading it.
    let path = fixtures()
        .into_iter()
        .find(|p| stem(p) == "pointer_results")
        .unwrap();
    let fixture = generate(&path, false).unwrap();
    let flat: String = fixture
        .text
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        flat.contains("aioli_tmpd = cell_d(g, gd, i, &aioli_tmp);"),
        "{}",
        fixture.text
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ptr.c");
    std::fs::write(&path, src).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_aioli"))
        .args([
            "adjoint",
            path.to_str().unwrap(),
            "--head",
            "f(f)/(z)",
            "--out",
        ])
        .arg(dir.path())
        .output()
        .unwrap();
    // The adjoint mode: `P_fwd` gives the adjoint pointer back
    // (`adjoint/pointer-result`).
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let b = std::fs::read_to_string(dir.path().join("ptr_b.c")).unwrap();
    assert!(
        b.contains("static double *sq_fwd(const double *z, double **sqb)"),
        "{b}"
    );
    assert!(b.contains("*sqb = pb;"), "{b}");
    assert!(b.contains("sq_fwd(z, &pb);"), "{b}");
}

/// `diff-live/effect`: output and `exit` in the original stay in the
/// derivative code, with the test guarding them and the values they print,
/// though no derivative needs them.
#[test]
fn output_and_exit_stay_in_the_derivative_code() {
    let src = "#include <stdio.h>\n#include <stdlib.h>\n\
void f(double *x, double *y)\n{\n    double t = x[1] * 3.0;\n    puts(\"start\");\n\
    if (x[0] > 100.0) {\n        fprintf(stderr, \"bad input %g\\n\", t);\n        exit(1);\n    }\n\
    y[0] = x[0] * x[0];\n}\n";
    let code = tangent_of_text("effects.c", src, "f(y)/(x)", &[]).unwrap();
    assert!(code.contains("puts(\"start\");"), "{code}");
    assert!(code.contains("if (x[0] > 100.0)"), "{code}");
    assert!(code.contains("exit(1);"), "{code}");
    // The value printed is computed, though no derivative reads it.
    assert!(code.contains("t = x[1] * 3.0"), "{code}");
}

/// CONTRACT §3: the primal result of `const double f(…)` comes back
/// through a `double *f` that `f_d` writes, not a `const double *`.
#[test]
fn a_const_result_comes_back_through_a_writable_pointer() {
    let src = "static const double sq(double x)\n{\n    return x * x;\n}\n\
double f(double x)\n{\n    return sq(x) + x;\n}\n";
    let code = tangent_of_text("cr.c", src, "f(f)/(x)", &[]).unwrap();
    assert!(
        code.contains("static double sq_d(double x, double xd, double *sq)"),
        "{code}"
    );
    assert!(!code.contains("const double aioli_tmp"), "{code}");
}

/// `eff/library-call`: an integer a library function returns is stored
/// (`strlen`, `atoi`, `lrint`), and what the function reads through a
/// pointer is kept (`tag`'s initialiser), when a derivative reads it.
#[test]
fn library_integer_results_are_kept() {
    let c = "#include <math.h>\n#include <stdlib.h>\n#include <string.h>\n\
void f(const double *x, double *y)\n{\n    const char tag[] = \"42\";\n    int n = (int)strlen(tag);\n    int a = atoi(tag);\n    long k = lrint(x[1]);\n    y[0] = n * x[0] + a * x[0] + k * x[0];\n}\n";
    let out = tangent_of_text("ints.c", c, "f(y)/(x)", &[]).unwrap();
    for kept in [
        "const char tag[3] = \"42\";",
        "int n = (int)strlen(tag);",
        "int a = atoi(tag);",
        "long k = lrint(x[1]);",
    ] {
        assert!(out.contains(kept), "{kept} missing:\n{out}");
    }
    // The classification macros of <math.h>, read as functions.
    let c = "#include <math.h>\nvoid f(const double *x, double *y)\n{\n    y[0] = x[0];\n    if (isnormal(x[1]) && fpclassify(x[0]) == FP_NORMAL)\n        y[0] = x[0] * x[1];\n}\n";
    let out = tangent_of_text("classify.c", c, "f(y)/(x)", &[]).unwrap();
    assert!(out.contains("aioli_tmp = isnormal(x[1]);"), "{out}");
    assert!(out.contains("fpclassify(x[0]) == 4;"), "{out}");
}

/// `tangent/call-external-unknown`: the rest of `<math.h>` without
/// partials (`modf` writes through a pointer) is refused, never taken as
/// constant.
#[test]
fn math_functions_without_partials_are_refused() {
    let c = "#include <math.h>\nvoid f(const double *x, double *y)\n{\n    double whole;\n    y[0] = modf(x[0] * 3.0, &whole) + whole;\n}\n";
    let err = tangent_of_text("modf.c", c, "f(y)/(x)", &[]).unwrap_err();
    assert!(err.contains("'modf'"), "{err}");
}

/// Comments after a closing brace (`} /* end for */`, `} // end while`,
/// `} /* end switch */`, `} /* end if */ else if …`) and before an opening
/// one (`while (…) /* scan */ {`) stay next to their construct, and the
/// braces they follow are not wrapped in a block of their own (the tangent
/// printed `{ { … } /* end if */ }`, an `else if` became `else { if`, and a
/// switch's comment was lost); the adjoint keeps each of them too.
#[test]
fn comments_around_braces_stay_with_their_construct() {
    let src = "double f(const double *x, int n, int k)\n{\n    double s = 0.0;\n    int i = 0;\n\
    switch (k) {\n    case 0:\n        s = x[0];\n        break;\n    default:\n        s = 2.0 * x[0];\n    } /* end switch */\n\
    while (i < n) /* scan */ {\n        s += x[i] * s;\n        i++;\n    } // end while\n\
    for (int j = 0; j < n; j++) {\n        if (x[j] > 1.0) {\n            s += x[j] * x[j];\n        } /* end if */\n\
        else if (x[j] < 0.5) {\n            s -= x[j];\n        } // end else-if\n        else {\n            s += 2.0 * x[j];\n        }\n    } /* end for */\n\
    do {\n        s *= 0.5;\n    } /* halve */ while (s > 10.0); // done\n\
    if (n > 100) /* empty */ {\n    } else {\n        s = s * 2.0;\n    }\n    return s;\n}\n";
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("braces.c");
    std::fs::write(&path, src).unwrap();
    let generate = |mode: &str, suffix: &str| {
        let run = std::process::Command::new(env!("CARGO_BIN_EXE_aioli"))
            .args([mode, path.to_str().unwrap(), "--head", "f(f)/(x)", "--out"])
            .arg(dir.path())
            .output()
            .unwrap();
        assert_eq!(
            run.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
        std::fs::read_to_string(dir.path().join(format!("braces_{suffix}.c"))).unwrap()
    };
    let out = generate("tangent", "d");
    for line in [
        "    }  /* end switch */\n",
        "    while (i < n) {\n        /* scan */\n",
        "    }  // end while\n",
        "        } else if (x[j] < 0.5) {\n",
        "        }  /* end if */ // end else-if\n",
        "    }  /* end for */\n",
        "    } while (s > 10.0);  /* halve */ // done\n",
        "    }  /* empty */\n",
    ] {
        assert!(out.contains(line), "{line}\n{out}");
    }
    assert!(!out.contains("{\n            {"), "{out}");
    let adjoint = generate("adjoint", "b");
    for c in [
        "/* end switch */",
        "/* scan */",
        "// end while",
        "/* end if */ // end else-if",
        "/* end for */",
        "/* halve */ // done",
        "/* empty */",
    ] {
        assert!(adjoint.contains(c), "{c}\n{adjoint}");
    }
}

/// `tangent/call-stores-pointer`: helpers storing a new address through a
/// pointer formal (`swap(&p, &q)`, `vec_init(&v, n)` mallocing
/// `v->data`) are differentiated, storing the derivative address alongside
/// (they were refused); a struct result holding a pointer still is refused.
#[test]
fn helpers_storing_addresses_through_pointer_formals_are_differentiated() {
    let swap = "static void swap(double **a, double **b)\n{\n    double *t = *a;\n    *a = *b;\n    *b = t;\n}\nvoid f(const double *x, double *y)\n{\n    double u[2], v[2];\n    double *p = u, *q = v;\n    u[0] = x[0];\n    u[1] = x[1];\n    v[0] = 2.0 * x[1];\n    v[1] = x[0] * x[0];\n    swap(&p, &q);\n    y[0] = p[0] * q[1] + p[1];\n}\n";
    let out = tangent_of_text("swap.c", swap, "f(y)/(x)", &[]).unwrap();
    let code = common::code_without_comments(&out);
    for line in ["*ad = *bd;", "*bd = td;", "swap_d(&p, &pd, &q, &qd);"] {
        assert!(code.contains(line), "{line}\n{code}");
    }
    let init = "#include <stdlib.h>\ntypedef struct {\n    int n;\n    double *data;\n} Vec;\nstatic void vec_init(Vec *v, int n)\n{\n    v->n = n;\n    v->data = (double *)malloc((size_t)n * sizeof(double));\n}\nstatic Vec vec_wrap(double *buf, int n)\n{\n    Vec v;\n    v.n = n;\n    v.data = buf;\n    return v;\n}\nvoid f(const double *x, double *y)\n{\n    Vec v;\n    vec_init(&v, 2);\n    v.data[0] = x[0] * x[1];\n    y[0] = v.data[0];\n    free(v.data);\n}\nvoid g(const double *x, double *y)\n{\n    double buf[2];\n    Vec v = vec_wrap(buf, 2);\n    v.data[0] = x[0] * x[1];\n    y[0] = buf[0];\n}\n";
    let out = tangent_of_text("init.c", init, "f(y)/(x)", &[]).unwrap();
    let code = common::code_without_comments(&out);
    for line in [
        "vd->data = (double *)calloc((size_t)n, sizeof(double));",
        "vec_init_d(&v, &vd, 2);",
        "free(vd.data);",
    ] {
        assert!(code.contains(line), "{line}\n{code}");
    }
    // `specialize/struct-result`: the struct comes back through a pointer.
    let out = tangent_of_text("init.c", init, "g(y)/(x)", &[]).unwrap();
    assert!(out.contains("vec_wrap_d(buf, bufd, 2, &v, &vd);"), "{out}");
    // A call dropping the result leaves the procedure as it is, and the
    // calls keeping it are refused.
    let dropped = init.replace(
        "    Vec v = vec_wrap(buf, 2);\n",
        "    vec_wrap(buf, 1);\n    Vec v = vec_wrap(buf, 2);\n",
    );
    let err = tangent_of_text("init.c", &dropped, "g(y)/(x)", &[]).unwrap_err();
    assert!(err.contains("init.c:30:"), "{err}");
    assert!(
        err.contains("'vec_wrap' returns a struct holding a pointer to reals"),
        "{err}"
    );
    let path = common::fixture_dir("tangent").join("pointer_stores.c");
    let text = std::fs::read_to_string(&path).unwrap();
    let out = tangent_of_text("pointer_stores.c", &text, "pointer_stores(y)/(x)", &[]).unwrap();
    let code = common::code_without_comments(&out);
    for line in [
        "*ppd = calloc((size_t)n, sizeof(double));",
        "grow_d(&buf, &bufd, n);",
        "rd->cur = &rd->acc;",
    ] {
        assert!(code.contains(line), "{line}\n{code}");
    }
}

/// `tangent/call-sets-global`, `call/map-target`: a global pointer set in
/// one procedure and read through in another. A helper reading through a
/// global its caller pointed at the independents reads their derivatives
/// (it was refused); a `setup` allocating a global work buffer and a
/// `teardown` freeing it, neither computing anything active, are
/// differentiated so the derivative buffer is allocated and freed along
/// (`f_d` called the originals and wrote through a null `workd`).
#[test]
fn global_pointers_set_in_another_procedure_carry_their_derivatives() {
    let global = "static const double *gp;\nstatic double rd(void)\n{\n    return gp[0] * gp[1];\n}\nvoid f(const double *x, double *y)\n{\n    gp = x;\n    y[0] = rd();\n}\n";
    let out = tangent_of_text("gptr.c", global, "f(y)/(x)", &[]).unwrap();
    let code = common::code_without_comments(&out);
    for line in [
        "gpd = xd;",
        "yd[0] = rd_d(&y[0]);",
        "return gpd[0] * gp[1] + gp[0] * gpd[1];",
    ] {
        assert!(code.contains(line), "{line}\n{code}");
    }
    // `ptr/global-init`: the derivative pointer starts at the derivative
    // array (it was null, and the array had none).
    let init = "double wk[8];\ndouble *w = wk;\nvoid f(int n, const double *x, double *y)\n{\n    for (int i = 0; i < n; i++)\n        w[i] = x[i] * x[i];\n    for (int i = 0; i < n; i++)\n        y[i] = w[i];\n}\n";
    let out = tangent_of_text("init.c", init, "f(y)/(x)", &[]).unwrap();
    assert!(out.contains("double wkd[8];\n"), "{out}");
    assert!(out.contains("double *wd = wkd;"), "{out}");
    // An allocation left to state that outlives the call is refused.
    let lazy = "#include <stdlib.h>\ndouble *work;\ndouble f(const double *x)\n{\n    if (!work)\n        work = malloc(4 * sizeof(double));\n    work[0] = x[0] * x[0];\n    return work[0] * x[1];\n}\n";
    let err = tangent_of_text("lazy.c", lazy, "f(f)/(x)", &[]).unwrap_err();
    assert!(err.contains("lazy.c:6:9:"), "{err}");
    assert!(
        err.contains("global pointer 'work' is set or freed here only when 'work'"),
        "{err}"
    );
    // The same guard as a loop, with the pointer initialised: refused where
    // the stale address would be used (it gave a zero derivative).
    let looped = "double wk[8];\ndouble *w = wk;\nint cnt = 0;\nstatic void bind(double *x)\n{\n    while (cnt < 1) {\n        w = x;\n        cnt++;\n    }\n}\n\
double f(int n, double *x)\n{\n    double s = 0.0;\n    bind(x);\n    for (int i = 0; i < n; i++)\n        s += w[i] * w[i];\n    return s;\n}\n";
    let err = tangent_of_text("looped.c", looped, "f(f)/(x)", &[]).unwrap_err();
    assert!(err.contains("looped.c:16:"), "{err}");
    assert!(
        err.contains("global pointer 'w' may still hold here the address it had before 'f'"),
        "{err}"
    );
    // An initialiser through a struct member is refused (the derivative
    // pointer started null).
    let member = "struct P {\n    double a[4];\n};\nstruct P S;\ndouble *w = &S.a[0];\ndouble f(double *x)\n{\n    S.a[0] = x[0];\n    return w[0] * w[0];\n}\n";
    let err = tangent_of_text("member.c", member, "f(f)/(x)", &[]).unwrap_err();
    assert!(err.contains("member.c:5:9:"), "{err}");
    assert!(
        err.contains("aioli does not follow the address global pointer 'w' is initialised with"),
        "{err}"
    );
    let path = common::fixture_dir("tangent").join("global_pointers.c");
    let text = std::fs::read_to_string(&path).unwrap();
    let out = tangent_of_text("global_pointers.c", &text, "global_pointers(y)/(x)", &[]).unwrap();
    let code = common::code_without_comments(&out);
    for line in [
        "workd = calloc((size_t)n, sizeof(double));",
        "setup_d(n);",
        "free(workd);",
        "teardown_d();",
        "viewd = &wd;",
        "double *offd = offsetsd;",
    ] {
        assert!(code.contains(line), "{line}\n{code}");
    }
}

/// `tangent/names`: a local or parameter named like a function that only
/// the derivative calls (`cos` for `sin`'s partial, `exp` for `erf`'s) is
/// renamed, so the call reaches the function; the output compiles.
#[test]
fn names_hiding_a_function_the_derivative_calls_are_renamed() {
    let c = "#include <math.h>\nvoid f(const double *x, double exp, double *y)\n{\n    double cos = 2.0; /* hides cos */\n    y[0] = sin(x[0]) * cos + erf(x[1]) * exp;\n}\n";
    let out = tangent_of_text("hide.c", c, "f(y)/(x)", &[]).unwrap();
    let code = common::code_without_comments(&out);
    for line in [
        "void f_d(const double *x, const double *xd, double exp0, double *y, double *yd)",
        "double cos0 = 2.0;",
        "cos(x[0]) * xd[0] * cos0",
        "exp(-(x[1] * x[1]))",
        "y[0] = sin(x[0]) * cos0 + erf(x[1]) * exp0;",
    ] {
        assert!(code.contains(line), "{line}\n{code}");
    }
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("hide_d.c");
    std::fs::write(&src, &out).unwrap();
    common::compile(
        &["-std=c99", "-Wall", "-Wextra", "-Werror", "-c"],
        &[&src],
        &dir.path().join("hide_d.o"),
    )
    .unwrap();
}

/// CONTRACT §2: an active global `s` has the derivative `sd`, even where
/// a block's local `s` is met first; the local's derivative gives way.
#[test]
fn an_active_global_keeps_its_derivative_name_over_a_local() {
    let c = "double s;\nstatic void bump(double v) { s += v * v; }\n\
             void f(int n, double *x, double *y)\n{\n    bump(x[0]);\n    {\n        \
             double s = x[0];\n        y[0] = s;\n    }\n    y[n - 1] += s;\n}\n";
    let out = tangent_of_text("glob.c", c, "f(y)/(x)", &[]).unwrap();
    let code = common::code_without_comments(&out);
    for line in [
        "double sd;",
        "sd = 2.0 * (vd * v);",
        "double sd0 = xd[0], s = x[0];",
        "yd[n - 1] = yd[n - 1] + sd;",
    ] {
        assert!(code.contains(line), "{line}\n{code}");
    }
}

/// `deriv/pow` in `float` code: the zeros of its tests are `float`, so the
/// partials are not computed in `double`.
#[test]
fn float_pow_partials_stay_float() {
    let c = "#include <math.h>\nfloat f(float x, float a)\n{\n    return powf(x, a);\n}\n";
    let out = tangent_of_text("powf.c", c, "f(f)/(x a)", &[]).unwrap();
    let code = common::code_without_comments(&out);
    assert!(
        code.contains("(a == 0.0 ? 0.0f : a * powf(x, a - 1.0))"),
        "{code}"
    );
    assert!(
        code.contains("(x == 0.0 ? 0.0f : logf(x) * temp)"),
        "{code}"
    );
}

/// `tangent/static-local`: a static local's derivative is static too, so
/// a cache hit returns the derivative stored with the value: `cached(a) +
/// cached(a)` has derivative 4a, the second call hitting the cache (a
/// derivative reset per call gave 2a).
#[test]
fn a_static_local_carries_its_derivative_from_call_to_call() {
    let cached = "static double cached(double v)\n{\n    static double last_in = -1.0, last_out;\n    if (v != last_in) {\n        last_in = v;\n        last_out = v * v;\n    }\n    return last_out;\n}\ndouble f(double a)\n{\n    return cached(a) + cached(a);\n}\n";
    let out = tangent_of_text("cached.c", cached, "f(f)/(a)", &[]).unwrap();
    assert!(
        out.contains("static double last_in = -1.0, last_outd, last_out;"),
        "{out}"
    );
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("cached_d.c");
    std::fs::write(&src, &out).unwrap();
    let main = dir.path().join("main.c");
    std::fs::write(
        &main,
        "#include <stdio.h>\ndouble f_d(double a, double ad, double *f);\nint main(void)\n{\n    double r;\n    double d = f_d(1.5, 1.0, &r);\n    printf(\"%g %g\\n\", d, r);\n    return 0;\n}\n",
    )
    .unwrap();
    let exe = dir.path().join("run");
    common::compile(
        &["-std=c99", "-Wall", "-Wextra", "-Werror"],
        &[&src, &main],
        &exe,
    )
    .unwrap();
    let run = std::process::Command::new(&exe).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&run.stdout), "6 4.5\n");
    // A static array a static pointer designates keeps static storage
    // with it.
    let kept = "double f(const double *x, int n)\n{\n    static double *cur;\n    static double w[4];\n    if (!cur)\n        cur = w;\n    double s = 0.0;\n    for (int i = 0; i < n; i++)\n        cur[i % 4] = x[i] * x[i];\n    for (int i = 0; i < 4; i++)\n        s += w[i];\n    return s;\n}\n";
    let out = tangent_of_text("kept.c", kept, "f(f)/(x)", &[]).unwrap();
    assert!(out.contains("static double wd[4], w[4];"), "{out}");
    assert!(out.contains("static double *curd, *cur;"), "{out}");
}

/// `tangent/output`: `f_d` writes the output's copy of a static global,
/// then a passive call runs the original `sel`, which reads the original's
/// copy (the branch taken depended on the last call of `f`): refused. An
/// active call runs `g_d`, which the output holds, and is accepted; so is
/// `sel` made static (the output carries its own copy).
#[test]
fn a_static_global_shared_with_an_original_function_is_refused() {
    let passive = "static double s;\nint sel(void)\n{\n    return s > 1.0;\n}\n\
void f(double x, double *y)\n{\n    s = x * x;\n    if (sel())\n        y[0] = x * 3.0;\n    else\n        y[0] = x * x;\n}\n";
    let err = tangent_of_text("sel.c", passive, "f(y)/(x)", &[]).unwrap_err();
    assert!(
        err.contains("sel.c:9:9: error: 'sel' uses 's', a static global of the original file"),
        "{err}"
    );
    let held = passive.replace("int sel(", "static int sel(");
    tangent_of_text("held.c", &held, "f(y)/(x)", &[]).unwrap();
    let active = "static double s;\nvoid g(double v)\n{\n    s = s * v;\n}\n\
double f(double x)\n{\n    s = x;\n    g(x);\n    return s * s;\n}\n";
    let out = tangent_of_text("active.c", active, "f(f)/(x)", &[]).unwrap();
    assert!(out.contains("g_d(x, xd);"), "{out}");
}

/// `tangent/call-frees`: helpers that free memory with a derivative are
/// differentiated so that they free the derivative memory too (the calls
/// were dropped or kept passive: `f_d` leaked every derivative buffer),
/// including Numerical Recipes' `free_dvector`, which frees a pointer
/// moved back by the lower index.
#[test]
fn helpers_that_free_release_the_derivative_memory_too() {
    let path = common::fixture_dir("tangent").join("free_helpers.c");
    let text = std::fs::read_to_string(&path).unwrap();
    let out = tangent_of_text("free_helpers.c", &text, "free_helpers(y)/(x)", &[]).unwrap();
    let code = common::code_without_comments(&out);
    for line in [
        "free((char *)(vd + nl - 1));",
        "free(md[i]);",
        "free(pd);",
        "release_d(s, sd);",
        "free_matrix_d(m, md, n);",
        "free_dvector_d(w, wd, 1, n);",
    ] {
        assert!(code.contains(line), "{line}\n{code}");
    }
}

/// A helper that only moves a struct's pointer member along (a reader's
/// cursor, `r->cur = r->cur + 1`) is differentiated in tangent mode, the
/// derivative member moved alike (it was refused: "may store a new
/// address"); so is one that stores another address there
/// (`tangent/call-stores-pointer`).
#[test]
fn a_cursor_moved_by_a_helper_is_differentiated() {
    let reader = "typedef struct { const double *cur; double acc; } Reader;\n\
static void take(Reader *r)\n{\n    r->acc += r->cur[0] * r->cur[0];\n    r->cur = r->cur + 1;\n}\n\
double f(const double *x)\n{\n    Reader r;\n    r.cur = x;\n    r.acc = 0.0;\n    take(&r);\n    take(&r);\n    return r.acc;\n}\n";
    let out = tangent_of_text("reader.c", reader, "f(f)/(x)", &[]).unwrap();
    let code = common::code_without_comments(&out);
    assert!(code.contains("rd->cur = rd->cur + 1;"), "{code}");
    assert!(code.contains("take_d(&r, &rd);"), "{code}");
    let rewound = reader.replace(
        "r->cur = r->cur + 1;",
        "r->cur = r->cur + 1;\n    if (r->acc > 9.0)\n        r->cur = &r->acc;",
    );
    let out = tangent_of_text("rewound.c", &rewound, "f(f)/(x)", &[]).unwrap();
    let code = common::code_without_comments(&out);
    assert!(code.contains("rd->cur = &rd->acc;"), "{code}");
}

/// `il/void-pointer`: memory allocated through a `void *` (`void *p =
/// malloc(...)`, a `void *xmalloc(size_t)` wrapper) has no type the
/// analyses follow, so stores of active values through the converted
/// pointer were lost (a zero derivative and a primal read of uninitialised
/// memory): refused in both modes, with the fix. A `void *` parameter of a
/// freeing helper (`release(void *p)`) is fine: it gets the derivative
/// buffer to free it too (`release_d` read an undeclared `pd`).
#[test]
fn void_pointer_memory_is_refused_and_a_void_free_helper_frees_the_derivative() {
    let body = "    for (int i = 0; i < n; i++)\n        u[i] = x[i] * x[i];\n    \
                for (int i = 0; i < n; i++)\n        y[i] = u[i];\n";
    let local = format!(
        "#include <stdlib.h>\nvoid f(int n, double *x, double *y)\n{{\n    \
         void *p = malloc(n * sizeof(double));\n    double *u = (double *)p;\n{body}    free(p);\n}}\n"
    );
    let wrapper = format!(
        "#include <stdlib.h>\nstatic void *xmalloc(size_t sz)\n{{\n    return malloc(sz);\n}}\n\
         void f(int n, double *x, double *y)\n{{\n    double *u = xmalloc(n * sizeof(double));\n{body}    free(u);\n}}\n"
    );
    for (name, text, at) in [
        ("local.c", &local, "local.c:5:27:"),
        ("wrapper.c", &wrapper, "wrapper.c:8:17:"),
    ] {
        let err = tangent_of_text(name, text, "f(y)/(x)", &[]).unwrap_err();
        assert!(err.contains(at), "{err}");
        assert!(
            err.contains("a 'void *' value converted to a pointer to reals"),
            "{err}"
        );
    }
    let release = "#include <stdlib.h>\nstatic void release(void *p)\n{\n    free(p);\n}\n\
         void f(int n, double *x, double *y)\n{\n    double *t = (double *)malloc(n * sizeof(double));\n    \
         for (int i = 0; i < n; i++)\n        t[i] = x[i] * x[i];\n    \
         for (int i = 0; i < n; i++)\n        y[i] = t[i] * x[i];\n    release(t);\n}\n";
    let out = tangent_of_text("release.c", release, "f(y)/(x)", &[]).unwrap();
    let code = common::code_without_comments(&out);
    for line in [
        "static void release_d(void *p, void *pd)",
        "release_d(t, td);",
    ] {
        assert!(code.contains(line), "{line}\n{code}");
    }
}

/// `tangent/output`: a `static` global that a `static` helper changes is
/// the output's own when only differentiated code calls the helper: the
/// output calls its copy of the helper, which changes the output's copy
/// (a file-local RNG state the head seeds; it was refused). Changed by a
/// helper that an original non-static function calls, it stays refused.
#[test]
fn a_static_global_changed_only_by_copied_helpers_is_accepted() {
    let rng = "static unsigned int seed;\n\
         static double rnd(void)\n{\n    seed = seed * 1664525u + 1013904223u;\n    \
         return (seed >> 8) / 16777216.0;\n}\n\
         void f(int n, const double *x, double *y)\n{\n    seed = 1u;\n    \
         for (int i = 0; i < n; i++)\n        y[i] = x[i] * (1.0 + rnd());\n}\n";
    let code =
        common::code_without_comments(&tangent_of_text("rng.c", rng, "f(y)/(x)", &[]).unwrap());
    for line in [
        "static unsigned int seed;",
        "static double rnd(void)",
        "seed = 1u;",
    ] {
        assert!(code.contains(line), "{line}\n{code}");
    }
    let outside = "static double k = 1.0;\n\
         static void bump(void)\n{\n    k += 1.0;\n}\n\
         void set_k(void)\n{\n    bump();\n}\n\
         double f(double x)\n{\n    return k * x * x;\n}\n";
    let err = tangent_of_text("outside.c", outside, "f(f)/(x)", &[]).unwrap_err();
    assert!(
        err.contains("'k' is a static global that 'bump' changes"),
        "{err}"
    );
}

/// `tangent/output`: a `static` global that the head changes and an
/// original function reads is refused where the head changes it: `f_d`
/// changes the output's copy, and the original `get_last_norm()` would
/// still return the old value (found by probeAS). Used by the head alone,
/// it is the output's own.
#[test]
fn a_static_global_the_head_changes_and_another_function_reads_is_refused() {
    let accessor = "#include <math.h>\n\
         static double last_norm;\n\
         double get_last_norm(void) { return last_norm; }\n\
         double f(int n, const double *x)\n{\n    double s = 0.0;\n    \
         for (int i = 0; i < n; i++)\n        s += x[i] * x[i];\n    \
         last_norm = sqrt(s);\n    return last_norm * x[0];\n}\n";
    let err = tangent_of_text("accessor.c", accessor, "f(f)/(x)", &[]).unwrap_err();
    assert!(
        err.contains(
            "accessor.c:9:5: error: 'last_norm' is a static global that 'get_last_norm' reads"
        ),
        "{err}"
    );
    let own = accessor.replace("double get_last_norm(void) { return last_norm; }\n", "");
    let code = tangent_of_text("own.c", &own, "f(f)/(x)", &[]).unwrap();
    assert!(code.contains("static double last_norm;"), "{code}");
    // A `static` reader that nothing calls reads nothing (probeAU).
    let dead = accessor.replace(
        "double get_last_norm(void)",
        "static double get_last_norm(void)",
    );
    tangent_of_text("dead.c", &dead, "f(f)/(x)", &[]).unwrap();
    // Nor does `main` reading it (a program printing its last result).
    let program = accessor.replace(
        "double get_last_norm(void) { return last_norm; }",
        "int main(void) { return last_norm > 1.0; }",
    );
    tangent_of_text("program.c", &program, "f(f)/(x)", &[]).unwrap();
}

/// `ptr/global-init` follows one address given to one pointer; a table of
/// pointers or a struct initialised with addresses of real data is refused
/// where differentiated code uses it (its derivatives came out zero, found
/// by probeAS). A table of strings is no concern.
#[test]
fn a_global_initialised_with_a_list_of_addresses_is_refused() {
    let table = "double a[2], b[2];\n\
         double *tab[2] = {a, b};\n\
         void f(void)\n{\n    tab[1][0] = tab[0][0] * tab[0][0];\n}\n";
    let err = tangent_of_text("table.c", table, "f(b)/(a)", &[]).unwrap_err();
    assert!(
        err.contains("table.c:2:9: error: aioli does not follow the addresses global 'tab' is initialised with"),
        "{err}"
    );
    let view = "typedef struct {\n    double *v;\n    int n;\n} View;\n\
         double g[4];\n\
         View gv = {g, 4};\n\
         void f(double *y)\n{\n    for (int i = 0; i < gv.n; i++)\n        y[0] += gv.v[i] * gv.v[i];\n}\n";
    let err = tangent_of_text("view.c", view, "f(y)/(g)", &[]).unwrap_err();
    assert!(
        err.contains("assign the pointers of 'gv' in the code instead"),
        "{err}"
    );
    let names = "const char *names[2] = {\"a\", \"b\"};\n\
         double f(double x)\n{\n    return names[0][0] == 'a' ? x * x : x;\n}\n";
    tangent_of_text("names.c", names, "f(f)/(x)", &[]).unwrap();
    // Weights no code writes and no head names stay passive whatever
    // points to them, `const` or not (probeAU).
    for weights in ["static const double", "static double"] {
        let table = format!(
            "{weights} w0[2] = {{1.0, 2.0}}, w1[2] = {{3.0, 4.0}};\n\
             static {} *W[2] = {{w0, w1}};\n\
             double f(const double *x)\n{{\n    return W[0][0] * x[0] * x[0] + W[1][1] * x[1];\n}}\n",
            if weights.contains("const") {
                "const double"
            } else {
                "double"
            }
        );
        let code = tangent_of_text("weights.c", &table, "f(f)/(x)", &[]).unwrap();
        assert!(code.contains("W[1][1] * xd[1];"), "{code}");
    }
    // Weights a `main` fills before calling the head are passive there too.
    let filled = "static double w0[2];
static double *W[1] = {w0};
         double f(const double *x)
{
    return W[0][1] * x[0] * x[0];
}
         int main(void)
{
    double x[1] = {2.0};
    w0[1] = 3.0;
    return f(x) > 1.0;
}
";
    tangent_of_text("filled.c", filled, "f(f)/(x)", &[]).unwrap();
}

/// `eff/decl`: each item of an initialiser list reaches only the part it
/// initialises, so `Noise nz = {x, 0.1};` leaves `nz.dt` passive and
/// `Noise_d` holds `q` alone, as field-by-field assignments do (CONTRACT
/// §2; found by probeAT). The derivative of `n` is `nd` (CONTRACT §2): the
/// vector mode's direction counter takes another name.
#[test]
fn an_initialiser_list_activates_only_the_fields_it_sets_from_active_values() {
    let src = "typedef struct {\n    double q, dt;\n} Noise;\n\
         static double use(const Noise *n)\n{\n    return n->q * n->dt;\n}\n\
         double f(double x)\n{\n    Noise nz = {x, 0.1};\n    return use(&nz);\n}\n";
    let code =
        common::code_without_comments(&tangent_of_text("init.c", src, "f(f)/(x)", &[]).unwrap());
    assert!(
        code.contains("typedef struct {\n    double q;\n} Noise_d;"),
        "{code}"
    );
    assert!(code.contains("return nd->q * n->dt;"), "{code}");
    assert!(code.contains("Noise_d nzd = {xd};"), "{code}");
    // Brace elision (items not following the type) keeps every part
    // depending on every item.
    let elided = "typedef struct {\n    double q, dt;\n} Noise;\n\
         double f(double x)\n{\n    Noise nz[2] = {x, 0.1, 0.2, x};\n    return nz[0].q * nz[1].dt;\n}\n";
    let code = common::code_without_comments(
        &tangent_of_text("elided.c", elided, "f(f)/(x)", &[]).unwrap(),
    );
    assert!(code.contains("double dt;\n} Noise_d;"), "{code}");
}

/// The standard functions of `<string.h>`, `<stdio.h>`, `<time.h>` and
/// `<math.h>` that passive code calls are known (`strncmp`, `strchr`,
/// `fopen`, `clock`, `logb`, …); a pointer they return is written where
/// it is stored (`loc/result`), so the call stays before a test of it;
/// a file closed, like one written, stays closed (`diff-live/effect`).
#[test]
fn standard_library_calls_in_passive_code_are_kept() {
    let src = "#include <stdio.h>\n#include <string.h>\n#include <stdlib.h>\n#include <time.h>\n#include <math.h>\n\
double f(const char *mode, double x)\n{\n    clock_t t0 = clock();\n    double s = x;\n    if (strncmp(mode, \"sq\", 2) == 0)\n        s = x * x;\n\
    char buf[16];\n    strcpy(buf, \"e\");\n    strcat(buf, \"x\");\n    const char *q = strchr(buf, 'x');\n    if (q != NULL && strstr(buf, \"ex\") != NULL)\n        s = s + exp(x);\n\
    int e = ilogb(x) + (int)logb(x);\n    FILE *log = fopen(\"/dev/null\", \"w\");\n    if (log != NULL) {\n        fprintf(log, \"%d %ld\\n\", e, (long)(clock() - t0));\n        fclose(log);\n    }\n    (void)time(NULL);\n    return s;\n}\n";
    let out = tangent_of_text("std.c", src, "f(f)/(x)", &[]).unwrap();
    let code = common::code_without_comments(&out);
    for line in [
        "q = strchr(buf, 'x');",
        "FILE *log = fopen(\"/dev/null\", \"w\");",
        "fclose(log);",
    ] {
        assert!(code.contains(line), "{line} in {code}");
    }
}

/// `diff-live/effect`: `srand` sets the numbers `rand` draws, so the
/// tangent keeps it where the original has it.
#[test]
fn srand_is_kept_before_the_draws_it_seeds() {
    let src = "#include <stdlib.h>\n\
double f(double x)\n{\n    srand(11);\n    double r = (double)(rand() % 7);\n    return r * x * x;\n}\n";
    let out = tangent_of_text("seed.c", src, "f(f)/(x)", &[]).unwrap();
    let code = common::code_without_comments(&out);
    let seed = code.find("srand(11);").expect(&code);
    let draw = code.find("rand() % 7").expect(&code);
    assert!(seed < draw, "{code}");
}

/// `tangent/reset-merge` for a `static` local (`loc/static-local`): its
/// derivative keeps its value from call to call like a global's, so a
/// branch setting the static to a constant resets the derivative too.
#[test]
fn a_static_local_set_to_a_constant_resets_its_derivative() {
    let src = "static double scale(double v, int first)\n{\n    static double last = 0.0;\n    if (first)\n        last = 0.0;\n    double r = v * v + 0.5 * last;\n    last = v;\n    return r;\n}\n\
void f(int n, double *x, double *y)\n{\n    for (int i = 0; i < n; i++)\n        y[i] = scale(x[i], i == 0);\n}\n";
    let out = tangent_of_text("last.c", src, "f(y)/(x)", &[]).unwrap();
    let code: Vec<String> = common::code_without_comments(&out)
        .lines()
        .map(|l| l.trim().to_string())
        .collect();
    let at = code.iter().position(|l| l == "if (first) {").expect(&out);
    assert_eq!(
        code[at + 1..at + 4],
        ["last = 0.0;", "lastd = 0.0;", "}"],
        "{out}"
    );
}
