//! Adjoint mode on the fixture corpus (`tests/fixtures/adjoint/`), with
//! each fixture's pragma (`// aioli: head=... domain=...`) and the compiled
//! C code:
//! - every fixture is differentiated, or refused with a message listed in
//!   [`EXPECTED_REFUSALS`] (a new refusal or a crash fails);
//! - the output with `--explain` is pinned by snapshots;
//! - `FILE_b.c` compiles with `cc -std=c99 -Wall -Wextra -Werror` (with and
//!   without `--split`), and links
//!   with the original, the tangent `FILE_d.c` and the runtime (CONTRACT §5);
//! - the check driver (original, tangent, adjoint, runtime) runs cleanly
//!   under AddressSanitizer and UndefinedBehaviorSanitizer;
//! - `aioli::check::adjoint` (CONTRACT §6): the dot-product test against
//!   the tangent and the divided differences pass; a table prints R_a and
//!   the bytes pushed (`cargo test --release --test adjoint -- --nocapture`);
//! - every rule of `rules/adjoint/*.rules` is exercised by a named fixture
//!   (the coverage table below, checked against the engine's trace).
//!
//! A fixture on which the adjoint mode is known to be wrong is listed in
//! [`KNOWN_WRONG`] with what was observed; it is skipped by the check it
//! fails, and the test fails when it passes again.

mod common;

use aioli::analysis::head::{Head, parse_head};
use aioli::check::adjoint::{AdjointCheck, AdjointCheckOptions, check_adjoint};
use aioli::check::domain::Domain;
use aioli::front;
use aioli::il::Program;
use aioli::transform::adjoint::{
    AdjointOptions, adjoint, adjoint_output, bundled_adjoint_rules, load_adjoint_rules,
};
use aioli::transform::tangent::{TangentOptions, load_rules, tangent};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Fixtures the adjoint mode refuses, with words of the refusal. The
/// fixtures with jumps (`break_continue`, `early_return`, `recursion`,
/// `switch_break`, `switch_fallthrough`, `jumps_nested`) are differentiated
/// after `structure_jumps` rewrote them (`adjoint/structure`,
/// `adjoint/structure-jump`, `adjoint/structure-absorb`,
/// `adjoint/structure-loop`, `adjoint/structure-return`,
/// `adjoint/structure-switch`), and checked like every other fixture.
/// `random_reset` (a random program the adjoint got wrong) checks that an
/// overwrite inside an otherwise dead loop zeroes the adjoint of an
/// independent used after the loop (`deriv-use/adjoint-reset`).
/// Fixtures the adjoint mode refuses, with words of the refusal.
const EXPECTED_REFUSALS: &[(&str, &str)] = &[];

/// Which check a known-wrong fixture fails.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Check {
    /// `check_adjoint`'s dot product or divided differences.
    Numbers,
    /// AddressSanitizer / UndefinedBehaviorSanitizer.
    Sanitizer,
}

/// Fixtures whose adjoint is wrong today (adjoint-mode bugs), the check
/// they fail and what was observed.
const KNOWN_WRONG: &[(&str, Check, &str)] = &[];

/// For each rule of `rules/adjoint/*.rules`, a fixture whose adjoint uses it.
const COVERAGE: &[(&str, &str)] = &[
    ("adjoint/cast", "keep_intrinsics"),
    ("adjoint/ref-cast", "row_tables"),
    ("adjoint/empty", "header_statics"),
    ("adjoint/checkpoint", "checkpoint_region"),
    ("adjoint/call-joint", "fig12"),
    ("adjoint/call-joint-dead", "fig12"),
    ("adjoint/call-passive", "passive_buffer"),
    ("adjoint/actual-pointer-passive", "passive_buffer"),
    ("adjoint/alloc-passive", "activity_patterns"),
    ("adjoint/call-external-passive", "chains_and_copies"),
    ("adjoint/assign-dead-diff-direct", "reset_through_pointer"),
    ("adjoint/loop-dead-for", "random_reset"),
    ("adjoint/call-dead", "random_reset"),
    ("adjoint/block", "break_continue"),
    ("adjoint/assign-dead-nodiff", "early_return"),
    ("adjoint/proc-joint", "fig7"),
    ("adjoint/proc-split", "fig12"),
    ("adjoint/formal-diff", "fig7"),
    ("adjoint/formal-passive", "fig7"),
    ("adjoint/formals-end", "fig7"),
    ("adjoint/seq", "fig7"),
    ("adjoint/seq-end", "fig7"),
    ("adjoint/if-live", "fig7"),
    ("adjoint/if-recompute", "if_nested"),
    ("adjoint/for-canonical", "fig7"),
    ("adjoint/for-live", "for_strides"),
    ("adjoint/while-live", "cfr_example"),
    ("adjoint/do-while-live", "do_while"),
    ("adjoint/return-last", "fig12"),
    ("adjoint/assign-live-diff", "fig7"),
    ("adjoint/assign-live-diff-direct", "fig10"),
    ("adjoint/assign-live-nodiff", "assign_passive"),
    ("adjoint/assign-dead-diff", "fig11"),
    ("adjoint/assign-pointer", "pointer_walk"),
    ("adjoint/alloc", "malloc_scratch"),
    ("adjoint/free", "malloc_scratch"),
    ("adjoint/free-later", "helper_allocates"),
    ("adjoint/call-free-later", "helper_allocates"),
    ("adjoint/decl", "fig7"),
    ("adjoint/decl-static", "static_const_table"),
    ("adjoint/declarator-diff", "fig10"),
    ("adjoint/declarator-dead-diff", "assign_active"),
    ("adjoint/declarator-pointer", "alias_readonly"),
    ("adjoint/declarator-nodiff", "fig7"),
    ("adjoint/declarator-dead-nodiff", "dead_passive_init"),
    ("adjoint/declarator-list", "pointer_walk"),
    ("adjoint/declarator-none", "fig11"),
    ("adjoint/declarators-end", "fig7"),
    ("adjoint/call-split", "call_nocheckpoint"),
    ("adjoint/call-pointer-result", "pointer_results"),
    ("adjoint/return-pointer", "pointer_results"),
    ("adjoint/actual-args", "fig12"),
    ("adjoint/actual-args-passive", "fig12"),
    ("adjoint/actual-args-end", "fig12"),
    ("adjoint/actual-ref", "fig12"),
    ("adjoint/actual-expr", "fig12"),
    ("adjoint/actual-converted", "mixed_precision_call"),
    ("adjoint/arg-ref-value", "fig12"),
    ("adjoint/arg-ref-pointer", "call_repeated"),
    ("adjoint/expr-active", "fig7"),
    ("adjoint/expr-passive", "fig7"),
    ("adjoint/leaf", "fig7"),
    ("adjoint/add", "fig11"),
    ("adjoint/sub", "fig7"),
    ("adjoint/mul", "fig7"),
    ("adjoint/div", "fig10"),
    ("adjoint/neg", "if_else"),
    ("adjoint/cond", "malloc_scratch"),
    ("adjoint/intrinsic", "fig12"),
    ("adjoint/call-external", "math_statements"),
    ("adjoint/ref-null", "linked_list"),
    ("adjoint/call-external-dead", "math_statements"),
    ("adjoint/each", "fig12"),
    ("adjoint/each-end", "fig12"),
    ("adjoint/ref-var", "fig7"),
    ("adjoint/ref-index", "fig7"),
    ("adjoint/ref-field", "struct_pointer"),
    ("adjoint/ref-deref", "fig7"),
    ("adjoint/ref-addr", "call_repeated"),
    ("adjoint/ref-offset", "alias_readonly"),
    ("adjoint/ref-offset-sub", "pointer_walk"),
    ("adjoint/ref-offset-left", "pointer_arith_local"),
    ("adjoint/ref-cond", "pointer_arith_local"),
    ("adjoint/if-dead", "dead_branch_call"),
];

/// Rules no fixture of the corpus reaches, with the reason.
const UNREACHABLE: &[(&str, &str)] = &[
    (
        "adjoint/call-external-unknown",
        "a refusal: external_calls_need_partials",
    ),
    (
        "adjoint/loop-dead-while",
        "every while loop of the accepted fixtures computes something the derivatives need",
    ),
    (
        "adjoint/loop-dead-do-while",
        "every do-while loop of the accepted fixtures computes something the derivatives need",
    ),
    (
        "adjoint/return-void",
        "no accepted fixture has `return;` (early returns, e.g. early_return.c, are refused)",
    ),
    (
        "adjoint/actual-passive-ref",
        "no accepted fixture passes a real without adjoint where the callee's parameter has one",
    ),
    (
        "adjoint/plus",
        "no accepted fixture applies unary `+` to an active value",
    ),
];

struct Generated {
    program: Program,
    head: Head,
    text: String,
    trace: BTreeSet<String>,
}

fn load(path: &Path) -> Result<(front::Loaded, Head), String> {
    let cfg = common::config(path);
    let dir = path.parent().unwrap();
    let loaded = front::load(path, &common::front_options(&cfg.flags, dir))
        .map_err(|(s, d)| front::diag::render(&s, &d))?;
    let head = parse_head(&loaded.program, &cfg.head)?;
    Ok((loaded, head))
}

/// The adjoint of a fixture (`FILE_b.c`'s text) and the rules that built it.
fn generate(path: &Path, explain: bool) -> Result<Generated, String> {
    generate_with(
        path,
        &AdjointOptions {
            explain,
            ..AdjointOptions::default()
        },
    )
}

fn generate_with(path: &Path, opts: &AdjointOptions) -> Result<Generated, String> {
    let (loaded, head) = load(path)?;
    let rules = load_adjoint_rules(opts).map_err(|e| e.to_string())?;
    let output = adjoint_output(&loaded.program, std::slice::from_ref(&head), &rules, opts)
        .map_err(|d| front::diag::render(&loaded.sources, &d))?;
    let trace = output.trace;
    let text = aioli::back::print_c(&output.program, &loaded.sources);
    Ok(Generated {
        program: loaded.program,
        head,
        text,
        trace,
    })
}

/// The tangent of a fixture (`FILE_d.c`'s text).
fn tangent_text(path: &Path) -> Result<String, String> {
    let (loaded, head) = load(path)?;
    let opts = TangentOptions::default();
    let rules = load_rules(&opts).map_err(|e| e.to_string())?;
    tangent(&loaded.program, &loaded.sources, &[head], &rules, &opts)
        .map_err(|d| front::diag::render(&loaded.sources, &d))
}

fn fixtures() -> Vec<PathBuf> {
    common::c_files("adjoint")
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

/// The fixtures the adjoint mode differentiates.
fn accepted() -> Vec<PathBuf> {
    fixtures()
        .into_iter()
        .filter(|f| refused(&stem(f)).is_none())
        .collect()
}

fn known_wrong(name: &str, check: Check) -> Option<&'static str> {
    KNOWN_WRONG
        .iter()
        .find(|(f, c, _)| *f == name && *c == check)
        .map(|(_, _, w)| *w)
}

/// Does the head (or anything in the file) hold `float` values?
fn single_precision(program: &Program) -> bool {
    program
        .symbols
        .iter()
        .any(|s| s.span.file == program.main_file && format!("{:?}", s.ty.ty).contains("Float"))
}

#[test]
fn every_fixture_is_differentiated_or_refused_with_a_message() {
    let mut problems = Vec::new();
    let (mut ok, mut no) = (0, 0);
    for f in fixtures() {
        let name = stem(&f);
        let result = std::panic::catch_unwind(|| generate(&f, false).map(|_| ()));
        match (result, refused(&name)) {
            (Err(_), _) => problems.push(format!("{name}: the adjoint mode panicked")),
            (Ok(Ok(())), None) => ok += 1,
            (Ok(Ok(())), Some(_)) => problems.push(format!(
                "{name} is no longer refused: remove it from EXPECTED_REFUSALS"
            )),
            (Ok(Err(e)), None) => problems.push(format!("{name}: refused:\n{e}")),
            (Ok(Err(e)), Some(words)) => {
                no += 1;
                if !e.contains(words) {
                    problems.push(format!(
                        "{name}: refused with another message than '{words}':\n{e}"
                    ));
                } else if !e.contains(&format!("{name}.c:")) {
                    problems.push(format!("{name}: the refusal is not located:\n{e}"));
                }
            }
        }
    }
    println!("{ok} differentiated, {no} refused");
    for (name, _) in EXPECTED_REFUSALS {
        if !fixtures().iter().any(|f| stem(f) == *name) {
            problems.push(format!("EXPECTED_REFUSALS: no fixture {name}"));
        }
    }
    for (name, _, _) in KNOWN_WRONG {
        if !accepted().iter().any(|f| stem(f) == *name) {
            problems.push(format!("KNOWN_WRONG: no accepted fixture {name}"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn explained_output_snapshots() {
    for f in accepted() {
        let name = stem(&f);
        let g = generate(&f, true).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        insta::assert_snapshot!(name, g.text);
    }
}

/// `FILE_b.c` compiles without warnings against the runtime header, and
/// links with the original translation unit, the tangent and the runtime.
#[test]
fn output_compiles_without_warnings_and_links_with_the_original_tangent_and_runtime() {
    let work = tempfile::tempdir().unwrap();
    let rt = work.path().join("runtime");
    aioli::runtime::write(&rt).unwrap();
    let runtime_source = rt.join(aioli::runtime::SOURCE_NAME);
    let main = work.path().join("main.c");
    std::fs::write(&main, "int main(void) { return 0; }\n").unwrap();
    let include = format!("-I{}", rt.display());
    let mut failures = Vec::new();
    for f in accepted() {
        let name = stem(&f);
        let cfg = common::config(&f);
        let flags = common::cc_flags(&cfg.flags, f.parent().unwrap());
        let g = generate(&f, true).unwrap();
        let adj = work.path().join(format!("{name}_b.c"));
        std::fs::write(&adj, &g.text).unwrap();
        let tan = work.path().join(format!("{name}_d.c"));
        std::fs::write(&tan, tangent_text(&f).unwrap()).unwrap();
        let mut strict: Vec<String> = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-c"]
            .map(String::from)
            .to_vec();
        strict.push(include.clone());
        strict.extend(flags.iter().cloned());
        let object = work.path().join(format!("{name}_b.o"));
        if let Err(e) = common::compile(&strict, &[&adj], &object) {
            failures.push(format!("{name}_b.c does not compile cleanly:\n{e}"));
            continue;
        }
        // With `--split` (the head's `f_fwd` and `f_bwd` too), where the
        // split translation accepts the fixture.
        let split_opts = AdjointOptions {
            split: true,
            ..AdjointOptions::default()
        };
        if let Ok(g) = generate_with(&f, &split_opts) {
            let split_adj = work.path().join(format!("{name}_split_b.c"));
            std::fs::write(&split_adj, &g.text).unwrap();
            let object = work.path().join(format!("{name}_split_b.o"));
            if let Err(e) = common::compile(&strict, &[&split_adj], &object) {
                failures.push(format!(
                    "{name}_b.c (--split) does not compile cleanly:\n{e}"
                ));
            }
        }
        let mut link: Vec<String> = vec!["-std=c99".to_string(), include.clone()];
        link.extend(flags.iter().cloned());
        let exe = work.path().join(&name);
        if let Err(e) = common::compile(&link, &[&f, &tan, &adj, &runtime_source, &main], &exe) {
            failures.push(format!("{name}: the link fails:\n{e}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Writes the tangent and the adjoint of `f` into `dir` and runs
/// `check_adjoint` on them.
fn check(f: &Path, dir: &Path, options: AdjointCheckOptions) -> Result<AdjointCheck, String> {
    let name = stem(f);
    let cfg = common::config(f);
    let g = generate(f, false)?;
    let tan = dir.join(format!("{name}_d.c"));
    std::fs::write(&tan, tangent_text(f)?).unwrap();
    let adj = dir.join(format!("{name}_b.c"));
    std::fs::write(&adj, &g.text).unwrap();
    let domain = Domain::parse(&cfg.domain).map_err(|e| e.to_string())?;
    let options = AdjointCheckOptions {
        front: common::front_options(&cfg.flags, f.parent().unwrap()),
        ..options
    };
    check_adjoint(f, &g.program, &g.head, &domain, &tan, &adj, &options).map_err(|e| e.to_string())
}

/// The sanitizer flags, if the compiler builds and runs a program with
/// them; else why not.
fn sanitizer_cc() -> Result<String, String> {
    let cc = format!(
        "{} -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer",
        common::cc()
    );
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let probe = dir.path().join("probe.c");
    std::fs::write(
        &probe,
        "#include <stdlib.h>\nint main(void)\n{\n    double *p = malloc(4 * sizeof *p);\n    p[3] = 1.0;\n    int r = p[3] == 1.0 ? 0 : 1;\n    free(p);\n    return r;\n}\n",
    )
    .unwrap();
    let exe = dir.path().join("probe");
    let mut words = cc.split_whitespace();
    let out = std::process::Command::new(words.next().unwrap())
        .args(words)
        .arg(&probe)
        .arg("-o")
        .arg(&exe)
        .output()
        .map_err(|e| format!("cannot run {cc}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{cc} cannot build a program: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let run = std::process::Command::new(&exe)
        .output()
        .map_err(|e| format!("cannot run the probe: {e}"))?;
    if !run.status.success() {
        return Err(format!(
            "a program built with {cc} does not run ({}): {}",
            run.status,
            String::from_utf8_lossy(&run.stderr)
        ));
    }
    Ok(cc)
}

/// The sanitizer options for `check_adjoint`: one point, no timing.
fn sanitizer_options(cc: &str) -> AdjointCheckOptions {
    AdjointCheckOptions {
        cc: cc.to_string(),
        points: 1,
        time_budget_ms: 0,
        ..AdjointCheckOptions::default()
    }
}

/// The sanitizer check sees an adjoint that writes one element past an
/// adjoint buffer (the hand-written adjoint of `tests/fixtures/adjcheck/
/// arr.c`, with one bad line): the driver's arrays have exactly the
/// domain's sizes, so the sanitizer's redzones catch it.
#[test]
fn the_sanitizer_check_catches_a_write_past_the_end() {
    let cc = match sanitizer_cc() {
        Ok(cc) => cc,
        Err(why) => {
            println!("sanitizers unavailable, skipped: {why}");
            return;
        }
    };
    let original = common::fixture_dir("adjcheck").join("arr.c");
    let good = std::fs::read_to_string(common::fixture_dir("adjcheck").join("arr_b.c")).unwrap();
    let bad = good.replace(
        "    (void)y;\n",
        "    (void)y;\n    xb[n] += 1e-300 * x[0];\n",
    );
    assert_ne!(good, bad);
    let dir = tempfile::tempdir().unwrap();
    let adj = dir.path().join("arr_b.c");
    let cfg = common::config(&original);
    let (loaded, head) = load(&original).unwrap();
    let domain = Domain::parse(&cfg.domain).unwrap();
    let tan = common::fixture_dir("adjcheck").join("arr_d.c");
    let run = |text: &str| {
        std::fs::write(&adj, text).unwrap();
        check_adjoint(
            &original,
            &loaded.program,
            &head,
            &domain,
            &tan,
            &adj,
            &sanitizer_options(&cc),
        )
    };
    let r = run(&good).unwrap_or_else(|e| panic!("the right adjoint: {e}"));
    assert!(r.passed, "{r}");
    let e = run(&bad)
        .expect_err("a write past the end runs cleanly")
        .to_string();
    assert!(e.contains("ERROR: AddressSanitizer"), "{e}");
    assert!(e.contains("in arr_b"), "{e}");
}

/// The check driver (original, tangent, adjoint, runtime) built with
/// `-fsanitize=address,undefined` runs without a report: `f_b` reads and
/// writes only inside its buffers, pops what it pushed, frees what it
/// allocates.
#[test]
fn adjoint_runs_cleanly_under_address_and_undefined_behaviour_sanitizers() {
    let cc = match sanitizer_cc() {
        Ok(cc) => cc,
        Err(why) => {
            println!("sanitizers unavailable, skipped: {why}");
            return;
        }
    };
    let mut failures = Vec::new();
    let mut report = Vec::new();
    for f in accepted() {
        let name = stem(&f);
        let dir = tempfile::tempdir().unwrap();
        let outcome = check(&f, dir.path(), sanitizer_options(&cc));
        let expected = known_wrong(&name, Check::Sanitizer);
        match (outcome, expected) {
            (Ok(_), None) => report.push(format!("{name:<24} clean")),
            (Ok(_), Some(_)) => failures.push(format!(
                "{name} runs cleanly under the sanitizers now: remove it from KNOWN_WRONG"
            )),
            (Err(e), Some(w)) => report.push(format!("{name:<24} known wrong: {w} (now: {e})")),
            (Err(e), None) => {
                report.push(format!("{name:<24} FAILS"));
                failures.push(format!("{name}: {e}"));
            }
        }
    }
    println!("{}", report.join("\n"));
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// `aioli check --mode adjoint` on every fixture: the dot product with the
/// tangent agrees to 1e-10 and the divided differences to 6 digits.
#[test]
fn adjoint_agrees_with_the_tangent_and_divided_differences() {
    let mut table = vec![format!(
        "{:<24} {:>7} {:>7} {:>7} {:>12} {:>12}  result",
        "fixture", "A_a", "DD", "R_a", "pushed", "peak"
    )];
    let mut failures = Vec::new();
    for f in accepted() {
        let name = stem(&f);
        let dir = tempfile::tempdir().unwrap();
        let single = load(&f).map(|(l, _)| single_precision(&l.program)).unwrap();
        let options = AdjointCheckOptions {
            cc: common::cc(),
            points: 2,
            time_budget_ms: 30,
            max_rel_err: if single { 1e-4 } else { 1e-10 },
            min_dd_digits: if single { 3.0 } else { 6.0 },
            ..AdjointCheckOptions::default()
        };
        let outcome = check(&f, dir.path(), options);
        let expected = known_wrong(&name, Check::Numbers);
        let (row, failure) = match outcome {
            Ok(r) => {
                let rows = r.dependents.iter().chain([&r.overall]);
                let a = rows.clone().map(|d| d.digits).fold(f64::INFINITY, f64::min);
                let dd = rows.map(|d| d.dd_digits).fold(f64::INFINITY, f64::min);
                let opt = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
                let row = format!(
                    "{name:<24} {a:>7.1} {dd:>7.1} {:>7} {:>12} {:>12}  {}",
                    r.r_a.map_or("-".to_string(), |v| format!("{v:.2}")),
                    opt(r.pushed_bytes),
                    opt(r.peak_bytes),
                    if r.passed { "pass" } else { "FAIL" }
                );
                (row, (!r.passed).then(|| r.to_string()))
            }
            Err(e) => (format!("{name:<24} error"), Some(e)),
        };
        match (failure, expected) {
            (None, None) => table.push(row),
            (None, Some(_)) => {
                table.push(row);
                failures.push(format!("{name} passes now: remove it from KNOWN_WRONG"));
            }
            (Some(_), Some(w)) => table.push(format!("{row}  (known wrong: {w})")),
            (Some(e), None) => {
                table.push(row);
                failures.push(format!("{name}:\n{e}"));
            }
        }
    }
    println!("{}", table.join("\n"));
    println!(
        "A_a: digits of the dot product (worst dependent); DD: digits against divided differences; \
         R_a = T(f_b)/T(f) over a 30 ms budget (noisy when other tests run); pushed/peak: bytes on the \
         adjoint stack in one call of f_b"
    );
    assert!(
        failures.is_empty(),
        "{}\n\n{}",
        table.join("\n"),
        failures.join("\n\n")
    );
}

/// The IDs of the rules of `rules/adjoint/*.rules`.
fn adjoint_rule_ids() -> BTreeSet<String> {
    let mut ids = BTreeSet::new();
    for (name, text) in bundled_adjoint_rules() {
        if !name.starts_with("rules/adjoint/") {
            continue;
        }
        let (rules, _) = aioli::engine::syntax::parse_file(&name, &text).unwrap();
        ids.extend(rules.into_iter().map(|r| r.id));
    }
    ids
}

#[test]
fn every_rule_has_a_fixture_that_uses_it() {
    // AIOLI_PRINT_TRACES=1 prints each fixture's trace, to update the table.
    let print = std::env::var("AIOLI_PRINT_TRACES").is_ok();
    let mut traces = BTreeMap::new();
    for f in accepted() {
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
    let rules = adjoint_rule_ids();
    let mut problems = Vec::new();
    for (id, fixture) in COVERAGE {
        if !rules.contains(*id) {
            problems.push(format!("COVERAGE: {id} is not a rule of rules/adjoint/"));
        }
        match traces.get(*fixture) {
            Some(t) if t.contains(*id) => {}
            Some(_) => problems.push(format!("{fixture} does not use {id}")),
            None => problems.push(format!("{fixture}: no such accepted fixture")),
        }
    }
    for (id, _) in UNREACHABLE {
        if !rules.contains(*id) {
            problems.push(format!("UNREACHABLE: {id} is not a rule of rules/adjoint/"));
        }
        let users: Vec<_> = traces
            .iter()
            .filter(|(_, t)| t.contains(*id))
            .map(|(f, _)| f.as_str())
            .collect();
        if !users.is_empty() {
            problems.push(format!(
                "{id} is listed in UNREACHABLE but used by {users:?}: move it to COVERAGE"
            ));
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

/// The struct parts of the host (Rust, not rules), each with a fixture and
/// a line its adjoint must contain. The numbers are checked with the other
/// fixtures (`adjoint_agrees_with_the_tangent_and_divided_differences`).
const STRUCT_PARTS: &[(&str, &str, &str)] = &[
    (
        "adjoint/struct-types",
        "struct_pointer",
        "void struct_pointer_b(State *st, State_b *stb, double k, double *kb)",
    ),
    (
        "adjoint/struct-by-value",
        "struct_nested",
        "vb->x += vb_local.x;",
    ),
    (
        "adjoint/struct-by-value",
        "struct_address",
        "kick_b(&s, &sb_local, f, fb);",
    ),
    (
        "adjoint/struct-field-wise",
        "struct_array",
        "ptsb[i].x += oldb[i].x;",
    ),
    (
        "adjoint/struct-result",
        "struct_value",
        "static void cross_b(Vec3 p, Vec3_b *pb, Vec3 q, Vec3_b *qb, Vec3_b crossb)",
    ),
    ("adjoint/struct-init", "struct_nested", "w.x = a * b.p.x;"),
];

#[test]
fn struct_parts_appear_in_their_fixtures() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/adjoint");
    let mut problems = Vec::new();
    for (id, fixture, line) in STRUCT_PARTS {
        match generate(&dir.join(format!("{fixture}.c")), false) {
            Ok(g) if g.text.contains(line) => {}
            Ok(_) => problems.push(format!("{id}: {fixture}_b.c has no line `{line}`")),
            Err(e) => problems.push(format!("{id}: {fixture} is refused: {e}")),
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// `adjoint/struct-field-wise`, `adjoint/copy-addresses`: a struct whose
/// adjoint has a pointer member, copied as a whole from a by-value
/// parameter, is copied member by member (the pointer beside its adjoint
/// pointer), and its adjoint passes the dot-product test.
#[test]
fn whole_struct_with_an_adjoint_pointer_member_is_copied_member_by_member() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("copy_member.c");
    std::fs::write(
        &path,
        "// aioli: head='copy_member(y)/(s)' domain='s.n=3 s.data[3]=[-1,1] y[1]=[0,0]'\n\
         typedef struct { int n; double *data; } Sig;\n\
         void copy_member(Sig s, double *y)\n{\n    Sig t = s;\n    y[0] = t.data[0] * t.data[1];\n}\n",
    )
    .unwrap();
    let g = generate(&path, false).unwrap();
    assert!(g.text.contains("tb.data = sb->data;"), "{}", g.text);
    let outcome = check(&path, dir.path(), AdjointCheckOptions::default()).unwrap();
    assert!(outcome.passed, "{}\n{outcome}", g.text);
}

/// `tangent/call-sets-global`, adjoint side: a `setup` allocating a global
/// work buffer that nothing active is computed in gets `setup_fwd`, which
/// allocates the adjoint buffer too, and `setup_bwd` (the original ran in
/// the forward sweep, so `f_b` wrote through a null `workb`). The
/// allocation left to state that outlives the call is refused.
#[test]
fn a_passive_setup_of_a_global_pointer_sets_the_adjoint_pointer() {
    let src = "#include <stdlib.h>\ndouble *work;\nvoid setup(int n)\n{\n    work = malloc((size_t)n * sizeof(double));\n}\n\
double f(const double *x, int n)\n{\n    double s = 0.0;\n    setup(n);\n    for (int i = 0; i < n; i++)\n        work[i] = x[i] * x[i];\n\
    for (int i = 0; i < n; i++)\n        s += work[i] * x[i];\n    free(work);\n    return s;\n}\n";
    let out = adjoint_of_text("setup.c", src, "f(f)/(x)").unwrap();
    let code = common::code_without_comments(&out);
    for line in [
        "workb = calloc((size_t)n, sizeof(double));",
        "setup_fwd(n);",
        "setup_bwd(n);",
    ] {
        assert!(code.contains(line), "{line}\n{code}");
    }
    let lazy = src.replace("    setup(n);\n", "    if (!work)\n        setup(n);\n");
    let err = adjoint_of_text("lazy.c", &lazy, "f(f)/(x)").unwrap_err();
    assert!(err.contains("lazy.c:12:9:"), "{err}");
    assert!(
        err.contains("global pointer 'work' is set or freed here only when 'work'"),
        "{err}"
    );
}

/// `tangent/call-sets-global`, adjoint side: library style, `setup`, `f`
/// and `teardown` given as three heads. `setup_b` would free at the end of
/// its backward sweep the buffer it allocates for `f_b`: refused at the
/// head, naming it and the global (it was differentiated, and `f_b` wrote
/// through a freed or null adjoint pointer); tangent mode accepts it.
#[test]
fn a_global_pointer_set_by_one_head_for_another_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("library.c");
    std::fs::write(
        &path,
        "#include <stdlib.h>\ndouble *W;\nvoid setup(int n)\n{\n    W = malloc((size_t)n * sizeof(double));\n}\n\
void teardown(void)\n{\n    free(W);\n}\n\
double f(const double *x)\n{\n    W[0] = x[0] * x[0];\n    return W[0] * x[1];\n}\n",
    )
    .unwrap();
    let run = |mode: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_aioli"))
            .args([mode, path.to_str().unwrap()])
            .args([
                "--head", "setup", "--head", "f(f)/(x)", "--head", "teardown",
            ])
            .arg("--out")
            .arg(dir.path())
            .output()
            .unwrap()
    };
    let out = run("adjoint");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("library.c:3:6: error: head 'setup' sets or frees global pointer 'W'"),
        "{err}"
    );
    let out = run("tangent");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `tangent/call-stores-pointer`, adjoint side: a helper storing a new
/// address into the caller's struct gets `P_fwd`, which allocates the
/// adjoint buffer along, and `P_bwd`, which frees both (it was refused).
#[test]
fn helpers_storing_addresses_are_differentiated_in_the_adjoint() {
    let src = "#include <stdlib.h>\ntypedef struct {\n    int n;\n    double *data;\n} Vec;\nstatic void vec_init(Vec *v, int n)\n{\n    v->n = n;\n    v->data = (double *)malloc((size_t)n * sizeof(double));\n}\n\
void f(const double *x, double *y)\n{\n    Vec v;\n    vec_init(&v, 2);\n    v.data[0] = x[0] * x[1];\n    y[0] = v.data[0];\n    free(v.data);\n}\n";
    let out = adjoint_of_text("init.c", src, "f(y)/(x)").unwrap();
    let code = common::code_without_comments(&out);
    for line in [
        "vb->data = (double *)calloc((size_t)n, sizeof(double));",
        "vec_init_fwd(&v, &vb, 2);",
        "vec_init_bwd(&v, &vb, 2);",
        "free(vb->data);",
    ] {
        assert!(code.contains(line), "{line}\n{code}");
    }
}

/// The adjoint of `src` for `head`, written to a fresh file `name`.
fn adjoint_of_text(name: &str, src: &str, head: &str) -> Result<String, String> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, format!("// aioli: head='{head}'\n{src}")).unwrap();
    generate(&path, false).map(|g| g.text)
}

/// `deriv-use/call`: `printf` of an active value is evaluated, not an
/// active call (it has no derivative); `adjoint/if-live`: a branch whose
/// two backward sweeps are empty still pops its marker, without a variable
/// that nothing reads; a helper reached by a passive call and a split call
/// gets no fused `P_b` nobody calls; `tangent/output`: a static global that
/// another procedure changes is refused where the derivative reads it.
#[test]
fn inert_calls_unread_markers_and_stale_statics() {
    let printed = adjoint_of_text(
        "printed.c",
        "#include <stdio.h>\ndouble f(double x)\n{\n    double s = x * x;\n    printf(\"%g\\n\", s);\n    return s;\n}\n",
        "f(f)/(x)",
    )
    .unwrap();
    assert!(printed.contains("printf(\"%g\\n\", s);"), "{printed}");
    assert!(printed.contains("*xb += 2.0 * (x * "), "{printed}");
    let marker = adjoint_of_text(
        "marker.c",
        "double f(double x, int n)\n{\n    int i = n;\n    if (i < 0)\n        i = 0;\n    return x * x * i;\n}\n",
        "f(f)/(x)",
    )
    .unwrap();
    let code = common::code_without_comments(&marker);
    assert!(code.contains("aioli_pop_control(1);"), "{code}");
    assert!(!code.contains("aioli_branch"), "{code}");
    let helper = adjoint_of_text(
        "helper.c",
        "static void scal(double *v, int n, double s)\n{\n    for (int i = 0; i < n; i++)\n        v[i] *= s;\n}\n\
double f(int n, double *x, double a)\n{\n    double w[2] = {1.0, 2.0};\n    scal(w, 2, 2.0);\n    scal(x, n, a);\n    return x[0] * x[1] * w[1];\n}\n",
        "f(f)/(x a)",
    )
    .unwrap();
    assert!(helper.contains("scal_bwd("), "{helper}");
    assert!(!helper.contains("static void scal_b("), "{helper}");
    let err = adjoint_of_text(
        "stale.c",
        "static double s_k = 1.0;\nvoid set_k(double k)\n{\n    s_k = k;\n}\ndouble f(double x)\n{\n    return s_k * x * x;\n}\n",
        "f(f)/(x)",
    )
    .unwrap_err();
    assert!(
        err.contains("stale.c:9:12: error: 's_k' is a static global that 'set_k' changes"),
        "{err}"
    );
    // The forward sweep runs the original `g`, which scales the original's
    // `s`, not the output's copy (x̄ was 4x²ȳ for y = x⁴). With `g` static,
    // the output carries its own copy of it, and the adjoint is right.
    let split = "static double s;\nvoid g(double v)\n{\n    s = s * v;\n}\n\
double f(double x)\n{\n    s = x;\n    g(x);\n    return s * s;\n}\n";
    let err = adjoint_of_text("split.c", split, "f(f)/(x)").unwrap_err();
    assert!(
        err.contains("split.c:10:5: error: 'g' uses 's', a static global of the original file"),
        "{err}"
    );
    let held = split.replace("void g(", "static void g(");
    adjoint_of_text("held.c", &held, "f(f)/(x)").unwrap();
}

/// `adjoint/init-string`: a char array initialized with a string literal
/// is assigned character by character where its declaration was (the
/// declaration moves to the top, and C has no array assignment), zeros up
/// to its length. Brace elision in a numeric initializer is
/// differentiated (the front end braces it fully).
#[test]
fn string_initializers_and_elided_braces_are_differentiated() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("label.c");
    std::fs::write(
        &path,
        "// aioli: head='label(y)/(x)' domain='x[1]=[0,1] y[1]=[0,0]'\n\
         void label(const double *x, double *y)\n{\n    char s[4] = \"a\\\\b\";\n    y[0] = x[0] * s[0] + s[1] * x[0] * x[0];\n}\n",
    )
    .unwrap();
    let g = generate(&path, false).unwrap();
    for line in [
        "s[0] = 'a';",
        "s[1] = '\\\\';",
        "s[2] = 'b';",
        "s[3] = '\\0';",
    ] {
        assert!(g.text.contains(line), "{line}\n{}", g.text);
    }
    let outcome = check(&path, dir.path(), AdjointCheckOptions::default()).unwrap();
    assert!(outcome.passed, "{}\n{outcome}", g.text);
    let path = dir.path().join("elided.c");
    std::fs::write(
        &path,
        "// aioli: head='elided(y)/(x)' domain='x[1]=[0.5,1.5] y[1]=[0,0]'\n\
         struct pt { double u, v; };\n\
         void elided(const double *x, double *y)\n{\n    double m[2][2] = {x[0], 2.0, 3.0, x[0] * x[0]};\n    struct pt p[2] = {x[0], 1.0, 2.0};\n    y[0] = m[0][0] * m[1][1] + m[1][0] + p[0].u * p[1].u + p[1].v;\n}\n",
    )
    .unwrap();
    let g = generate(&path, false).unwrap();
    let outcome = check(&path, dir.path(), AdjointCheckOptions::default()).unwrap();
    assert!(outcome.passed, "{}\n{outcome}", g.text);
}

/// A `$AD CHECKPOINT-START` without its END in the same block is refused
/// with its location, and so is a region that allocates.
#[test]
fn unmatched_or_allocating_checkpoint_regions_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "unmatched.c",
            "// aioli: head='unmatched(y)/(x)' domain='x[1]=[0,1] y[1]=[0,0]'\n\
             void unmatched(const double *x, double *y)\n{\n    double t = x[0];\n    if (t > 0.5) {\n        // $AD CHECKPOINT-START\n        t = t * t;\n    }\n    // $AD CHECKPOINT-END\n    y[0] = t;\n}\n",
            "unmatched.c:7:9: error: '$AD CHECKPOINT-START' has no '$AD CHECKPOINT-END' after it in the same block",
        ),
        (
            "scratch.c",
            "// aioli: head='scratch(y)/(x)' domain='x[2]=[0,1] y[1]=[0,0]'\n\
             #include <stdlib.h>\n\
             void scratch(const double *x, double *y)\n{\n    // $AD CHECKPOINT-START\n    double *w = malloc(2 * sizeof(double));\n    w[0] = x[0] * x[1];\n    y[0] = w[0];\n    free(w);\n    // $AD CHECKPOINT-END\n}\n",
            "does not handle malloc, calloc or free inside a checkpointed region yet",
        ),
    ];
    for (name, text, expected) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let err = match generate(&path, false) {
            Ok(_) => panic!("{name} was accepted"),
            Err(e) => e,
        };
        assert!(err.contains(expected), "{name}: {err}");
    }
}

/// `tbr/call-exit` and `tbr/caller-restore` under `--split`, where no
/// call is checkpointed (`pred/checkpointed-call`)
/// (`split_exit.c`, whose numbers the corpus tests check in both modes):
/// the caller saves `c.vel` before overwriting it, because `smooth_bwd`
/// reads the value `smooth_fwd` left there; `fill_fwd` saves nothing of
/// the array it writes, which its caller never reads back.
#[test]
fn split_callees_keep_their_exit_values_and_restore_only_what_callers_read() {
    let path = common::fixture_dir("adjoint").join("split_exit.c");
    let opts = AdjointOptions {
        split: true,
        ..AdjointOptions::default()
    };
    let text = generate_with(&path, &opts)
        .unwrap_or_else(|e| panic!("{e}"))
        .text;
    let body = |name: &str| {
        let start = text
            .find(&format!("{name}("))
            .unwrap_or_else(|| panic!("no {name} in\n{text}"));
        let end = text[start..]
            .find("\n}\n")
            .map_or(text.len(), |e| start + e);
        text[start..end].to_string()
    };
    let head_b = body("void split_exit_b");
    assert!(
        head_b.contains("aioli_push_real8(c.vel);\n        c.vel = 0.5 * c.pos;"),
        "tbr/call-exit: c.vel is not saved before it is overwritten:\n{head_b}"
    );
    let fill_fwd = body("static void fill_fwd");
    assert!(
        !fill_fwd.contains("aioli_push_real8(out"),
        "tbr/caller-restore: fill_fwd saves the output array:\n{fill_fwd}"
    );
    let smooth_fwd = body("static void smooth_fwd");
    assert!(
        smooth_fwd.contains("aioli_push_real8(c->vel);"),
        "tbr/caller-restore: smooth_fwd does not save c->vel, which the caller reads back:\n{smooth_fwd}"
    );
}

/// `adjoint/share-calls`: each call the backward sweep's increments for
/// one statement repeat is made once, after the pops that restore its
/// operands (the fixture also goes through the dot-product, divided
/// difference and sanitizer checks of every fixture).
#[test]
fn shared_calls_in_the_backward_sweep_are_computed_once() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/adjoint");
    let g = generate(&dir.join("shared_calls.c"), false).unwrap();
    let body = &g.text[g.text.find("shared_calls_b(").unwrap()..];
    let code = common::code_without_comments(body);
    let count = |call: &str| code.matches(call).count();
    for call in [
        "tanh(u * v)",
        "sin(v)",
        "cos(v)",
        "log(v)",
        "expf(w[1])",
        "sqrt(u)",
    ] {
        assert_eq!(count(call), 1, "{call} in\n{body}");
    }
    // `exp(sqrt(u))` was evaluated twice only while the guard of sqrt's
    // partial tested the adjoint (`temp0 * rb[0] == 0.0 ? …`); with the
    // guard on the argument (`adjoint/intrinsic-singular`) it is evaluated
    // once, on the shared sqrt.
    // (`temp` is the value of `exp(u)` that `adjoint/keep-intrinsics`
    // keeps, so the shared calls' temporaries start at `temp0`.)
    // (`sin(v)` and `cos(v)` appear once each in the one increment
    // `adjoint/merge-increments` makes of the two leaves of `sin(v) *
    // sin(v)`'s partial, so they need no temporary, and the float one is
    // the first.)
    assert_eq!(count("exp(temp1)"), 1, "{body}");
    assert!(code.contains("temp1 = sqrt(u);"), "{body}");
    assert!(code.contains("float temp0;"), "{body}");
    // A call only under `?:` stays there.
    assert_eq!(count("sqrt(v)"), 1, "{body}");
    assert!(!code.contains("= sqrt(v);"), "{body}");
    // The call reading u, which the statement overwrites, is kept from the
    // forward sweep (`adjoint/keep-intrinsics`) and popped with u's old
    // value.
    let pop = code.find("u = aioli_pop_real8();").unwrap();
    assert!(
        code[..pop].contains("temp = exp(u);\n    aioli_push_real8(temp);\n    u = temp;"),
        "{body}"
    );
    assert!(code[pop..].contains("ub_local = temp * tempb;"), "{body}");
    assert!(!code[pop..].contains("exp(u)"), "{body}");
    // Nested calls evaluated twice are shared from the outside in.
    let nested = adjoint_of_text(
        "nested.c",
        "#include <math.h>\ndouble g(double u)\n{\n    return tanh(exp(u));\n}\n",
        "g(g)/(u)",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let nested = common::code_without_comments(&nested);
    assert!(
        nested.contains("temp = exp(u);") && nested.contains("temp0 = tanh(temp);"),
        "{nested}"
    );
    assert_eq!(nested.matches("exp(").count(), 1, "{nested}");
    assert_eq!(nested.matches("tanh(").count(), 1, "{nested}");
}

/// `adjoint/intrinsic`: a partial calls the variant of the function the
/// program called, not the one its argument's type suggests: `exp(f)` of a
/// `float f` stays `exp` (`expf` overflowed above 88.7 where the program's
/// `exp` did not, and the dot-product test failed); `lgammaf` takes the
/// digamma the output defines (it called an undefined `aioli_digammaf`);
/// the long double spellings are known (`expl` was "undeclared").
#[test]
fn partials_call_the_variant_the_program_called() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/adjoint");
    let g = generate(&dir.join("math_precisions.c"), false).unwrap();
    let code = common::code_without_comments(&g.text);
    let body = &code[code.find("void math_precisions_b(").unwrap()..];
    assert!(body.contains("= exp(f);"), "{body}");
    assert_eq!(body.matches("expf(").count(), 1, "{body}");
    assert!(body.contains("aioli_digamma(f)"), "{body}");
    assert!(!code.contains("aioli_digammaf"), "{code}");
    assert!(
        body.contains("expl(s)") && body.contains("powl(s, "),
        "{body}"
    );
}

/// `adjoint/simplify`: the increments the rules write operator by
/// operator are simplified as the tangent's derivatives are; an increment
/// by a negation becomes `-=`.
#[test]
fn adjoint_increments_are_simplified() {
    let text = adjoint_of_text(
        "neg.c",
        "#include <math.h>\ndouble ng(double a, double b)\n{\n    return -(a * -(b * b)) - 1.0 / a - exp(b);\n}\n",
        "ng(ng)/(a b)",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let code = common::code_without_comments(&text);
    assert!(code.contains("*ab += b * b * ngb;"), "{code}");
    assert!(code.contains("*bb += 2.0 * (b * (a * ngb));"), "{code}");
    assert!(code.contains("*ab += ngb / a / a;"), "{code}");
    assert!(code.contains("*bb -= exp(b) * ngb;"), "{code}");
    assert!(!code.contains("-(") && !code.contains("* -"), "{code}");
}

/// `adjoint/keep-intrinsics`: the forward sweep pushes the costly calls
/// the backward sweep would evaluate again, and the backward sweep pops
/// them: no `exp`, `tanh`, `pow`, `expf` or `log` of the loop is called in
/// the backward sweep, `sqrt` and a call only under `?:` are, and a split
/// callee keeps its call between `f_fwd` and `f_bwd` (no longer needing
/// its argument). Every fixture's dot-product test checks the values.
#[test]
fn costly_calls_are_kept_not_recomputed() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/adjoint");
    let g = generate(&dir.join("keep_intrinsics.c"), false).unwrap();
    let code = common::code_without_comments(&g.text);
    let head = &code[code.find("keep_intrinsics_b(").unwrap()..];
    let loops: Vec<usize> = head.match_indices("for (i = ").map(|(k, _)| k).collect();
    assert_eq!(loops.len(), 2, "{head}");
    let (forward, backward) = (&head[loops[0]..loops[1]], &head[loops[1]..]);
    for call in [
        "exp(a * x[i])",
        "tanh(s + x[i])",
        "pow(x[i], a)",
        "expf(f * (float)x[i])",
    ] {
        assert_eq!(forward.matches(call).count(), 1, "{call} in\n{forward}");
        assert!(!backward.contains(call), "{call} in\n{backward}");
    }
    // Each kept value is pushed right before the assignment reading it,
    // after the statement's own save, and popped before its restore.
    assert!(
        forward.contains(
            "aioli_push_real8(x[i]);\n        temp = exp(a * x[i]);\n        \
             aioli_push_real8(temp);\n        x[i] = temp * e;"
        ),
        "{forward}"
    );
    assert!(
        backward.contains("temp = aioli_pop_real8();\n        x[i] = aioli_pop_real8();"),
        "{backward}"
    );
    assert!(forward.contains("aioli_push_real4(temp0);"), "{forward}");
    assert!(
        backward.contains("temp0 = aioli_pop_real4();"),
        "{backward}"
    );
    // Not kept: sqrt (as cheap as a push and a pop), atan (only under ?:).
    assert!(backward.contains("sqrt(s * s + 1.0)"), "{backward}");
    assert!(backward.contains("/ (1.0 + s * s)"), "{backward}");
    assert!(!forward.contains("= atan("), "{forward}");
    // The split callee: its forward sweep pushes exp(z), its backward
    // sweep pops it and no longer needs z.
    let fwd = &code[code.find("soft_fwd(").unwrap()..code.find("soft_bwd(").unwrap()];
    let bwd =
        &code[code.find("soft_bwd(").unwrap()..code.find("void keep_intrinsics(int").unwrap()];
    assert!(
        fwd.contains("temp = exp(z);\n    aioli_push_real8(temp);\n    return log(1.0 + temp);"),
        "{fwd}"
    );
    assert!(
        bwd.contains("temp = aioli_pop_real8();") && !bwd.contains("exp("),
        "{bwd}"
    );
    assert!(!bwd.contains("z = aioli_pop_real8()"), "{bwd}");
    // A head's `return` is not in its forward sweep: nothing is kept.
    let joint = adjoint_of_text(
        "joint.c",
        "#include <math.h>\ndouble g(double u)\n{\n    return exp(u) * u;\n}\n",
        "g(g)/(u)",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(!joint.contains("aioli_push"), "{joint}");
}

/// `adjoint/merge-increments`: `s -= a[j] * y[j]` gives
/// `tempb = sb;` and the increments, not `sb = 0.0; sb += tempb;`; a
/// zeroed adjoint incremented once is assigned once.
#[test]
fn zeroed_then_incremented_adjoints_are_assigned_once() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/adjoint");
    let g = generate(&dir.join("bench_ode.c"), false).unwrap();
    let body = &g.text[g.text.find("rhs_b(").unwrap()..];
    assert!(body.contains("tempb = sb;\n            ab["), "{body}");
    assert!(!body.contains("sb += tempb"), "{body}");
    // `m * m`: one increment of mb with twice the partial.
    let g = generate(&dir.join("bench_conv.c"), false).unwrap();
    assert!(g.text.contains("mb += 2.0 * (m * tempb0);"), "{}", g.text);
    assert_eq!(g.text.matches("mb += ").count(), 1, "{}", g.text);
}

/// `specialize/activity`: a call passing a slice of a passive pointer
/// parameter or a passive heap buffer where the callee's formal has an
/// adjoint (no zero buffer can be sized) goes to a copy of the callee
/// without adjoint there, in both the checkpointed and the split adjoint;
/// copies' own calls go to copies; the forward sweep calls the user's
/// `dot`, defined once. Numbers: the fixture's dot-product test.
#[test]
fn calls_with_other_activity_patterns_get_copies() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/adjoint");
    for split in [false, true] {
        let g = generate_with(
            &dir.join("activity_patterns.c"),
            &AdjointOptions {
                split,
                ..AdjointOptions::default()
            },
        )
        .unwrap();
        let code = common::code_without_comments(&g.text);
        let flat = code.split_whitespace().collect::<Vec<_>>().join(" ");
        let (suffix, tail) = if split {
            ("_bwd", "")
        } else {
            ("_b", ", tempb);")
        };
        for call in [
            format!("dot{suffix}0(&X[i0 * d], w, wb, d{tail}"),
            format!("rownorm{suffix}0(&X[i0 * d], w, wb, d{tail}"),
            format!("rdot{suffix}0(mean, w, wb, d{tail}"),
            format!("dot{suffix}0(row, w, wb, d{tail}"),
            format!("rdot{suffix}(w, wb, v, vb, d{tail}"),
        ] {
            assert!(flat.contains(&call), "{call} in {code}");
        }
        // The checkpointed forward sweep calls `dot`; the split one `dot_fwd`.
        let primal_copies = if split { 0 } else { 1 };
        assert_eq!(
            flat.matches("static double dot(").count(),
            primal_copies,
            "{code}"
        );
        assert!(!flat.contains("dot0("), "{code}");
    }
}

/// `adjoint/proc-fused`, `adjoint/junction`: a checkpointed callee gets one
/// procedure `P_b` running its two sweeps, called once where the caller's
/// backward sweep used to call `P_fwd` then `P_bwd`; the loop counter its
/// forward sweep saved is popped right back, so both go, and the sum that
/// only the dropped `return` read is not computed. `--split` keeps the
/// pair.
#[test]
fn checkpointed_callees_run_one_fused_adjoint() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/adjoint");
    let g = generate(&dir.join("bench_conv.c"), false).unwrap();
    let code = common::code_without_comments(&g.text);
    assert!(
        !code.contains("conv_at_fwd") && !code.contains("conv_at_bwd"),
        "{code}"
    );
    let start = code.find("static void conv_at_b(").unwrap();
    let fused = &code[start..start + code[start..].find("\n}\n").unwrap()];
    assert!(
        !fused.contains("aioli_push") && !fused.contains("aioli_pop"),
        "{fused}"
    );
    assert!(
        !fused.contains("s += ") && !fused.contains("return"),
        "{fused}"
    );
    assert!(
        fused.contains("kcb[q] += xc[p - half + q] * tempb;"),
        "{fused}"
    );
    // One call of the fused adjoint per call of conv_at.
    assert_eq!(code.matches("conv_at_b(\n").count(), 2, "{code}");
    let split = generate_with(
        &dir.join("bench_conv.c"),
        &AdjointOptions {
            split: true,
            ..AdjointOptions::default()
        },
    )
    .unwrap();
    assert!(split.text.contains("conv_at_fwd(") && split.text.contains("conv_at_bwd("));
    assert!(!split.text.contains("conv_at_b("));
}

/// `adjoint/call-external-unknown`: an active call of an external function
/// without partials is refused with the entry to write (one partial per
/// argument); `modf`, which also writes through a pointer, likewise.
#[test]
fn external_calls_need_partials() {
    let err = adjoint_of_text(
        "ext.c",
        "double softplus(double x, double beta);\ndouble f(double x)\n{\n    double s = softplus(x * x, 2.0);\n    return s;\n}\n",
        "f(f)/(x)",
    )
    .unwrap_err();
    assert!(
        err.contains("no derivative is known for external function 'softplus'"),
        "{err}"
    );
    assert!(err.contains("(softplus ?X1 ?X2) : (...), (...)"), "{err}");
    // Line 5: `adjoint_of_text` adds the pragma line.
    assert!(err.contains("ext.c:5:"), "located: {err}");
    let err = adjoint_of_text(
        "modf.c",
        "#include <math.h>\ndouble f(double x)\n{\n    double whole;\n    double frac = modf(x * x, &whole);\n    return frac + whole;\n}\n",
        "f(f)/(x)",
    )
    .unwrap_err();
    assert!(err.contains("'modf'"), "{err}");
}

/// `warn/alias`, certain case: one buffer passed for two parameters, one
/// of them written by the callee, is refused in adjoint mode as in
/// tangent mode (the callee's adjoint would treat them as distinct).
/// `specialize/alias`: one buffer given to a reading and a writing formal
/// (`sc(m, m, 2)`, which reads `b[n - 1 - i]` while writing `a[i]`) goes
/// to a copy of the callee where the two formals are one, so its adjoint
/// saves what the in-place loop overwrites: the dot-product test passes.
/// A callee that moves one of those formals cannot be given the copy, and
/// the call stays refused.
#[test]
fn one_buffer_passed_twice_to_a_writing_callee_is_merged() {
    let src = "static void sc(double *a, const double *b, int n)\n{\n    for (int i = 0; i < n; i++)\n        a[i] = a[i] * b[n - 1 - i];\n}\nvoid f(const double *x, double *y)\n{\n    double m[2];\n    m[0] = x[0];\n    m[1] = x[1];\n    sc(m, m, 2);\n    y[0] = m[0] + m[1];\n}\n";
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("twice.c");
    std::fs::write(
        &path,
        format!("// aioli: head='f(y)/(x)' domain='x[2]=[0.5,1.5] y[1]=[0,0]'\n{src}"),
    )
    .unwrap();
    let g = generate(&path, false).unwrap();
    assert!(g.text.contains("sc_b(m, mb, m, 2);"), "{}", g.text);
    assert!(g.text.contains("(void)b;"), "{}", g.text);
    let outcome = check(&path, dir.path(), AdjointCheckOptions::default()).unwrap();
    assert!(outcome.passed, "{}\n{outcome}", g.text);
    let moved = "static void sc(double *a, const double *b, int n)\n{\n    for (int i = 0; i < n; i++) {\n        a[i] = a[i] * b[0];\n        b++;\n    }\n}\nvoid f(const double *x, double *y)\n{\n    double m[2];\n    m[0] = x[0];\n    m[1] = x[1];\n    sc(m, m, 2);\n    y[0] = m[0] + m[1];\n}\n";
    let err = adjoint_of_text("moved.c", moved, "f(y)/(x)").unwrap_err();
    assert!(err.contains("may designate the same memory"), "{err}");
    assert!(err.contains("moved.c:14:"), "{err}");
}

/// `adjoint/copy-addresses`: a struct value holding a pointer to reals
/// copied whole (`View c = a;`, `views[0] = c;`, `*dst = *src` in a
/// helper, `Frame g = f;` with array members) is copied member by member,
/// each pointer beside its adjoint pointer; the fixture's numbers are its
/// dot-product test. An array member too long to copy element by element
/// leaves the copy whole, refused with its message.
#[test]
fn struct_copies_holding_pointers_go_member_by_member() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/adjoint");
    let g = generate(&dir.join("struct_copies.c"), false).unwrap();
    let code = common::code_without_comments(&g.text);
    for line in [
        "c.n = a.n;",
        "cb.data = ab.data;",
        "c.data = a.data;",
        "viewsb[0].data = cb.data;",
        "gb.aux[1] = fb.aux[1];",
        "g.scale[1] = f.scale[1];",
        "dstb->data = srcb->data;",
    ] {
        assert!(code.contains(line), "{line} in {code}");
    }
    let long = "typedef struct {\n    double *data;\n    double pad[40];\n} Big;\n\
double f(double *x)\n{\n    Big a;\n    a.data = x;\n    Big b = a;\n    return b.data[0] * b.data[0];\n}\n";
    let err = adjoint_of_text("long.c", long, "f(f)/(x)").unwrap_err();
    assert!(err.contains("long.c:10:5"), "{err}");
    assert!(err.contains("whole struct value with a pointer"), "{err}");
}

/// `specialize/struct-result`, `il/cond-struct`, `adjoint/struct-by-value`:
/// structs holding pointers to reals as values in the adjoint: a
/// constructor's forward sweep gives the struct and its adjoint back
/// through pointers, a helper copying a struct it is given by value takes
/// the adjoint pointer in its forward sweep too. Numbers: the fixture's
/// dot-product test. Two different pointers to one scalar given to a
/// writing callee are refused (its adjoint would add into the adjoint it
/// zeroes); the same pointer twice is merged (`specialize/alias`).
#[test]
fn struct_values_and_pointers_to_one_variable() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/adjoint");
    let g = generate(&dir.join("struct_values.c"), false).unwrap();
    let code = common::code_without_comments(&g.text);
    for line in [
        "vec_zeros_fwd(n, &t, &tb);",
        "vec_zerosb->data = vb.data;",
        "axpy_fwd(2.0, chosen, &chosenb, t, &tb);",
        "static void axpy_fwd(double a, Vec x, Vec_b *xb, Vec y, Vec_b *yb)",
        "chosenb.data = vxb.data;",
    ] {
        assert!(code.contains(line), "{line} in {code}");
    }
    let two = "static void cp(double *d, const double *s)\n{\n    *d = 2.0 * *s;\n}\n\
void f(const double *x, double *r)\n{\n    double t = x[0] * x[0];\n    double *p = &t, *q = &t;\n    cp(p, q);\n    *r = t;\n}\n";
    let err = adjoint_of_text("two.c", two, "f(r)/(x)").unwrap_err();
    assert!(err.contains("two.c:10:5"), "{err}");
    assert!(
        err.contains("designate the same variable through different pointers"),
        "{err}"
    );
    let once = two.replace("cp(p, q);", "cp(p, p);");
    let out = adjoint_of_text("once.c", &once, "f(r)/(x)").unwrap();
    assert!(out.contains("(void)s;"), "{out}");
}

/// `specialize/alias`: one address spelled two ways (`A[0]` and
/// `&A[0][0]`), and a merged struct pointer whose members the copy passes
/// on (`vsq(v, v)` calling `sq(o->data, i->data, n)`, which in the copy
/// reads `o->data` twice), are merged too; the dot-product test passes.
#[test]
fn one_address_spelled_two_ways_is_merged() {
    let dir = tempfile::tempdir().unwrap();
    for (name, src) in [
        (
            "rows.c",
            "// aioli: head='f(x)/(x)' domain='n=4 x[n]=[0.5,1.5]'\n\
static void sq(double *dst, const double *src, int n)\n{\n    for (int j = 0; j < n; j++)\n        dst[j] = src[j] * src[j];\n}\n\
void f(double *x, int n)\n{\n    double A[2][4];\n    for (int j = 0; j < n; j++)\n        A[0][j] = x[j];\n    sq(A[0], &A[0][0], n);\n    for (int j = 0; j < n; j++)\n        x[j] = A[0][j];\n}\n",
        ),
        (
            "members.c",
            "// aioli: head='f(v)/(v)' domain='v.n=3 v.data[3]=[0.5,1.5]'\n\
typedef struct {\n    int n;\n    double *data;\n} Vec;\n\
static void sq(double *o, const double *i, int n)\n{\n    for (int k = 0; k < n; k++)\n        o[k] = i[k] * i[k];\n}\n\
static void vsq(Vec *o, const Vec *i)\n{\n    sq(o->data, i->data, o->n);\n}\n\
void f(Vec *v)\n{\n    vsq(v, v);\n}\n",
        ),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, src).unwrap();
        let g = generate(&path, false).unwrap();
        assert!(g.text.contains("(void)"), "{}", g.text);
        let outcome = check(&path, dir.path(), AdjointCheckOptions::default()).unwrap();
        assert!(outcome.passed, "{}\n{outcome}", g.text);
    }
}

/// `eff/alloc`: the forward sweep that reallocates a block computes its
/// size (`m = 2 * n` was dropped, and the block allocated empty); a local
/// only ever set in a sweep (an adjoint cursor the backward sweep pops and
/// never follows) keeps its pops and loses its values and its
/// declaration; `--split` gives a local static storage when a pointer to
/// its own storage (`pu = &u`) is restored in the other frame.
#[test]
fn allocation_sizes_cursors_and_local_addresses_across_frames() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/adjoint");
    let g = generate(&dir.join("linked_nodes.c"), false).unwrap();
    let code = common::code_without_comments(&g.text);
    assert!(code.contains("m = 2 * n;"), "{code}");
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree.c");
    std::fs::write(
        &tree,
        "// aioli: head='f(r)/(x)' domain='n=5 x[n]=[0.5,1.5] r[1]=[0,0]'\n\
#include <stdlib.h>\n\
typedef struct T {\n    double key;\n    struct T *l, *r;\n} T;\n\
static double walk(const T *t, double w)\n{\n    if (!t)\n        return 0.0;\n    return walk(t->l, w * 0.5) + w * t->key + walk(t->r, w * 2.0);\n}\n\
void f(int n, const double *x, double *r)\n{\n    T *root = NULL;\n    T *pool = (T *)calloc(n, sizeof(T));\n\
    for (int i = 0; i < n; i++) {\n        T *nd = &pool[i];\n        nd->key = x[i] * x[i];\n\
        if (!root) {\n            root = nd;\n            continue;\n        }\n        T *cur = root;\n\
        for (;;) {\n            if (nd->key < cur->key) {\n                if (!cur->l) {\n                    cur->l = nd;\n                    break;\n                }\n                cur = cur->l;\n\
            } else {\n                if (!cur->r) {\n                    cur->r = nd;\n                    break;\n                }\n                cur = cur->r;\n            }\n        }\n    }\n\
    *r = walk(root, 1.0);\n    free(pool);\n}\n",
    )
    .unwrap();
    let split = generate_with(
        &tree,
        &AdjointOptions {
            split: true,
            ..AdjointOptions::default()
        },
    )
    .unwrap();
    assert!(split.text.contains("void f_bwd("), "{}", split.text);
    let start = split.text.find("void f_bwd(").unwrap();
    let bwd = &split.text[start..start + split.text[start..].find("\n}\n").unwrap()];
    assert!(!bwd.contains("T_b *curb"), "{bwd}");
    assert!(bwd.contains("        aioli_pop_pointer();"), "{bwd}");
    let frames = tmp.path().join("frames.c");
    std::fs::write(
        &frames,
        "// aioli: head='f(y)/(x)' domain='n=3 x[n]=[0.5,1.5] y[n]=[0,0]'\n\
#include <math.h>\n#include <stdlib.h>\n\
void f(int n, const double *x, double *y)\n{\n    double *u = (double *)malloc(n * sizeof(double));\n    double **pu = &u;\n\
    for (int i = 0; i < n; i++)\n        u[i] = x[i];\n    for (int i = 0; i < n; i++)\n        (*pu)[i] = sin((*pu)[i]);\n\
    for (int i = 0; i < n; i++)\n        y[i] = u[i];\n    free(u);\n}\n",
    )
    .unwrap();
    let split = generate_with(
        &frames,
        &AdjointOptions {
            split: true,
            ..AdjointOptions::default()
        },
    )
    .unwrap();
    // `adjoint/kept-locals`: `u` and its adjoint get static storage, so
    // the pointer `pu` that the backward sweep restores points to live
    // memory.
    for wanted in [
        "static double *f_u;",
        "static double *f_ub;",
        "void f_fwd(",
        "void f_bwd(",
        "void f_b(",
    ] {
        assert!(
            split.text.contains(wanted),
            "no `{wanted}` in\n{}",
            split.text
        );
    }
}

/// `tangent/names`: a struct member holding a pointer to pointers
/// (`P **pp`) through which active memory is reached is kept in the
/// derivative struct (it was "the derivative struct has no field"), and
/// the adjoint passes the dot-product test.
#[test]
fn a_pointer_to_pointers_member_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pp.c");
    std::fs::write(
        &path,
        "// aioli: head='f(y)/(x)' domain='x[2]=[0.5,1.5] y[1]=[0,0]'\n\
typedef struct {\n    double u;\n} P;\ntypedef struct {\n    P **pp;\n    double w;\n} H;\n\
void f(const double *x, double *y)\n{\n    P a;\n    P *arr[1];\n    H h;\n    a.u = x[0];\n    h.w = x[1];\n\
    h.pp = arr;\n    h.pp[0] = &a;\n    *y = h.w * h.pp[0]->u;\n}\n",
    )
    .unwrap();
    let g = generate(&path, false).unwrap();
    assert!(g.text.contains("hb.pp = arrb;"), "{}", g.text);
    let outcome = check(&path, dir.path(), AdjointCheckOptions::default()).unwrap();
    assert!(outcome.passed, "{}\n{outcome}", g.text);
}

/// `warn/alias` through struct members: one array reached through two
/// pointer members (`j.in = j.out = x; run(&j)`), or through two members
/// passed as arguments, written by the callee, is refused in adjoint mode
/// (its backward sweep would add into one adjoint and zero the other,
/// the same memory); the tangent, which mirrors each statement, accepts it.
#[test]
fn one_array_reached_through_two_members_is_refused() {
    let src = "typedef struct\n{\n    const double *in;\n    double *out;\n    int n;\n} Job;\n\
static void run(Job *j)\n{\n    for (int i = 0; i < j->n; i++)\n        j->out[i] = j->in[i] * j->in[i];\n}\n\
void f(double *x, int n)\n{\n    Job jb;\n    jb.in = x;\n    jb.out = x;\n    jb.n = n;\n    run(&jb);\n}\n";
    let err = adjoint_of_text("members.c", src, "f(x)/(x)").unwrap_err();
    assert!(err.contains("members.c:19:5: error:"), "{err}");
    assert!(
        err.contains("'run' reaches the same memory through"),
        "{err}"
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("members.c");
    std::fs::write(&path, src).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_aioli"))
        .args([
            "tangent",
            path.to_str().unwrap(),
            "--head",
            "f(x)/(x)",
            "--out",
        ])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The same through global pointers (`src = u; dst = u + 1; kernel();`),
/// which the callee equally takes as designating distinct memory: `f_b`
/// read values the writes through `dst` had changed, unsaved (found by
/// probeAS).
#[test]
fn one_array_reached_through_two_global_pointers_is_refused() {
    let src = "double *src, *dst;\n\
static void kernel(int m)\n{\n    for (int i = 0; i < m; i++)\n        dst[i] = src[i] * src[i];\n}\n\
void f(int n, double *u)\n{\n    src = u;\n    dst = u + 1;\n    kernel(n - 1);\n}\n";
    let err = adjoint_of_text("globals.c", src, "f(u)/(u)").unwrap_err();
    assert!(err.contains("globals.c:12:5: error:"), "{err}");
    assert!(
        err.contains("'kernel' reaches the same memory through 'src' and 'dst'"),
        "{err}"
    );
    let apart = src.replace("dst = u + 1;", "dst = v;").replace(
        "void f(int n, double *u)",
        "void f(int n, double *u, double *v)",
    );
    adjoint_of_text("apart.c", &apart, "f(v)/(u)").unwrap();
}

/// `deriv-use/adjoint-reset` and CONTRACT §2: a field a callee overwrites
/// but that nothing ever varies (`m->pas`, set from constants only) has no
/// adjoint: `M_b` holds the active field alone, as the tangent's `M_d`.
#[test]
fn a_field_only_overwritten_with_constants_has_no_adjoint() {
    let src = "typedef struct\n{\n    double act;\n    double pas;\n} M;\n\
static void upd(M *m, double v)\n{\n    m->act = m->act * v + m->pas;\n    m->pas = 2.0 * m->pas;\n}\n\
void f(double *x, M *m, double *y)\n{\n    m->pas = 1.0;\n    upd(m, x[0]);\n    *y = m->act * m->pas;\n}\n";
    let code = adjoint_of_text("fields.c", src, "f(y)/(x)").unwrap();
    let flat: String = code.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("typedef struct { double act; } M_b;"),
        "{code}"
    );
}

/// C99 6.7.5.3 through a typedef: `const vec3 v` with `typedef double
/// vec3[3]` is `const double *v`, so the caller's array is read through it
/// (its assignments were sliced away as unread).
#[test]
fn a_typedef_array_parameter_is_a_pointer() {
    let out = adjoint_of_text(
        "vec3.c",
        "typedef double vec3[3];\nstatic double norm2(const vec3 v)\n{\n    return v[0] * v[0] + v[1] * v[1] + v[2] * v[2];\n}\ndouble f(const double *x)\n{\n    vec3 a;\n    a[0] = x[0];\n    a[1] = 2.0 * x[1];\n    a[2] = x[0] * x[1];\n    return norm2(a);\n}\n",
        "f(f)/(x)",
    )
    .unwrap();
    assert!(out.contains("norm2_b(a, ab, "), "{out}");
    assert!(out.contains("a[2] = x[0] * x[1];"), "{out}");
    assert!(out.contains("xb[1] += 2.0 * ab[1];"), "{out}");
}

/// `adjoint/share-calls`: a partial guarded at a singular point that each
/// leaf's increment repeats is computed once (`sqrt` was called once per
/// leaf, which a compiler cannot merge because of `errno`).
#[test]
fn a_guarded_partial_is_computed_once() {
    let out = adjoint_of_text(
        "norm.c",
        "#include <math.h>\nvoid f(int n, const double *x, double *y)\n{\n    double s = 0.0;\n    \
         for (int i = 0; i < n - 1; i++) {\n        double a = x[i + 1] - x[i], b = x[i] + x[i + 1];\n        \
         s += sqrt(1.0 + a * a + b * b);\n    }\n    *y = s;\n}\n",
        "f(y)/(x)",
    )
    .unwrap();
    let code = common::code_without_comments(&out);
    assert_eq!(code.matches("sqrt(").count(), 1, "{code}");
    assert!(
        code.contains("temp = 1.0 + a * a + b * b == 0.0 ? 0.0 : 0.5 / sqrt(1.0 + a * a + b * b);"),
        "{code}"
    );
}

/// `adjoint/if-recompute`: a test reading only a canonical loop's index
/// and a parameter is evaluated again in the backward sweep, not recorded;
/// one reading a variable the loop body writes is still recorded.
#[test]
fn invariant_tests_are_recomputed_not_recorded() {
    let out = adjoint_of_text(
        "stencil.c",
        "void f(int n, const double *x, double *y)\n{\n    for (int i = 0; i < n; i++) {\n        \
         double t = x[i] * x[i];\n        if (i > 0)\n            t -= x[i - 1];\n        \
         if (i < n - 1)\n            t -= x[i + 1];\n        y[i] = t;\n    }\n}\n",
        "f(y)/(x)",
    )
    .unwrap();
    let code = common::code_without_comments(&out);
    assert!(!code.contains("aioli_push_control"), "{code}");
    assert!(code.contains("if (i > 0) {"), "{code}");
    assert!(code.contains("if (i < n - 1) {"), "{code}");
    let out = adjoint_of_text(
        "flag.c",
        "void f(int n, const double *x, double *y)\n{\n    int k = 0;\n    for (int i = 0; i < n; i++) {\n        \
         if (k > 0)\n            y[i] = x[i] * x[i];\n        k = i % 2;\n    }\n}\n",
        "f(y)/(x)",
    )
    .unwrap();
    assert!(out.contains("aioli_push_control"), "{out}");
}

/// `adjoint/init-addresses`: an initialiser list holding an address of
/// active memory is assigned item by item, each address with its adjoint
/// pointer (it was refused; `init_addresses.c` checks the numbers).
#[test]
fn address_lists_are_assigned_item_by_item() {
    let out = adjoint_of_text(
        "rows.c",
        "double f(const double *x)\n{\n    double a[2];\n    a[0] = x[0];\n    a[1] = x[1];\n    double *rows[1] = {a};\n    return rows[0][0] * rows[0][1];\n}\n",
        "f(f)/(x)",
    )
    .unwrap();
    let code = common::code_without_comments(&out);
    for line in [
        "rowsb[0] = ab;",
        "rows[0] = a;",
        "rowsb[0][0] += rows[0][1] * fb;",
    ] {
        assert!(code.contains(line), "{line}\n{code}");
    }
}

/// `warn/alias` in adjoint mode: an active call whose pointer arguments
/// point into the same variable at different offsets (`shift(a, a + 1,
/// n)`), or that passes a global's address to a callee also using the
/// global by name, is refused. The callee's analysis took them as
/// separate memory, so its backward sweep read values a write through the
/// other argument had changed (wrong gradients, dot-product error 1.0).
#[test]
fn overlapping_call_arguments_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "slices.c",
            "// aioli: head='f(f)/(x)' domain='x=[0.5,1.5]'\n\
             static void shift(const double *src, double *dst, int n)\n{\n    \
             for (int i = 0; i < n; i++)\n        dst[i] = src[i] * src[i];\n}\n\
             double f(double x)\n{\n    double a[3] = {0.0, 0.0, 0.0};\n    a[0] = x;\n    \
             shift(a, a + 1, 2);\n    return a[2];\n}\n",
            "slices.c:11:5: error: two arguments of 'shift' may designate the same memory",
        ),
        // `alias/disjoint-slices` proves `axpy(2, .., &w[0], &w[2])` apart
        // (fixture disjoint_slices); three elements from each reach w[2]
        // twice.
        (
            "near.c",
            "// aioli: head='f(f)/(x)' domain='x=[0.5,1.5]'\n\
             static void axpy(int n, double a, const double *u, double *v)\n{\n    \
             for (int i = 0; i < n; i++)\n        v[i] += a * u[i];\n}\n\
             double f(double x)\n{\n    double w[5] = {x, x, x, x, x};\n    \
             axpy(3, x, &w[0], &w[2]);\n    return w[4];\n}\n",
            "near.c:10:5: error: two arguments of 'axpy' may designate the same memory",
        ),
        (
            "global.c",
            "// aioli: head='f(f)/(g_v x)' domain='x=[0.5,1.5] g_v=[1,2]'\n\
             double g_v = 1.0;\n\
             static void upd(double *p, double a)\n{\n    *p = a * a;\n    *p += g_v * a;\n}\n\
             double f(double x)\n{\n    upd(&g_v, x);\n    return g_v;\n}\n",
            "global.c:10:5: error: this active call passes the address of global 'g_v'",
        ),
        // The same through a local pointer to the global (the pointer
        // analysis sees it; the dot-product error was 0.32).
        (
            "through.c",
            "// aioli: head='f(x)/(x)' domain='x[3]=[0.5,1]'\n\
             double g[3];\n\
             static void acc(double *d)\n{\n    \
             for (int i = 1; i < 3; i++)\n        d[i] += g[i - 1] * g[i - 1];\n}\n\
             void f(double *x)\n{\n    double *p = g;\n    \
             for (int i = 0; i < 3; i++)\n        g[i] = x[i];\n    \
             acc(p);\n    for (int i = 0; i < 3; i++)\n        x[i] = g[i];\n}\n",
            "through.c:13:5: error: this active call passes the address of global 'g'",
        ),
    ];
    for (name, text, expected) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let err = match generate(&path, false) {
            Ok(_) => panic!("{name}: differentiated"),
            Err(e) => e,
        };
        assert!(err.contains(expected), "{name}: {err}");
    }
}

/// `alias/disjoint-slices` through pointer variables: `double *u = w, *r
/// = w + n;` passed as `axpy(n, a, u, r)` is told apart when every
/// variable involved keeps one value (fixture `workspace_slices` checks
/// the numbers); a slice pointer set twice, set from memory, a base moved
/// after the slice was taken, an offset variable changed before the call,
/// or a slice one element apart, stays refused: each may overlap.
#[test]
fn slices_through_pointer_variables_are_told_apart_only_when_fixed() {
    let dir = tempfile::tempdir().unwrap();
    let program = |body: &str| {
        format!(
            "// aioli: head='f(out)/(in)' domain='n=3 in[n]=[0.5,1] out[n]=[0,0] idx[1]=[0,0]'\n\
             #include <stdlib.h>\n\
             static void axpy(int n, double a, const double *x, double *y)\n{{\n    \
             for (int i = 0; i < n; i++)\n        y[i] += a * x[i];\n}}\n\
             void f(int n, const double *in, double *out, const int *idx)\n{{\n    \
             double *w = malloc(3 * n * sizeof(double));\n    \
             for (int i = 0; i < 3 * n; i++)\n        w[i] = in[i % n];\n\
             {body}\n    \
             for (int i = 0; i < 3 * n; i++)\n        out[i % n] += w[i] * w[i];\n    \
             free(w);\n}}\n"
        )
    };
    let accepted = [
        (
            "plain",
            "    double *u = w, *r = w + n;\n    axpy(n, 2.0, u, r);",
        ),
        (
            "through_a_local",
            "    int m = n;\n    double *u = &w[m], *r = u + m;\n    axpy(m, 2.0, r, u);",
        ),
        // 2n apart: the gap n + 1 is the width n - 1 plus 2.
        (
            "wide_gap",
            "    double *t = w + 2 * n;\n    axpy(n, 2.0, t, w);",
        ),
    ];
    let differentiate = |name: &str, body: &str| {
        let path = dir.path().join(format!("{name}.c"));
        std::fs::write(&path, program(body)).unwrap();
        generate(&path, false)
    };
    for (name, body) in accepted {
        if let Err(e) = differentiate(name, body) {
            panic!("{name}: refused\n{e}");
        }
    }
    // Each of these would look apart if a slice pointer were replaced by
    // a value it does not hold at the call; each may in fact overlap.
    let refused = [
        (
            "one_apart",
            "    double *u = w, *r = w + 1;\n    axpy(n, 2.0, u, r);",
        ),
        (
            "set_twice",
            "    double *r = w;\n    if (n > 5) {\n        r = w + n;\n    }\n    \
             axpy(n, 2.0, w, r);",
        ),
        (
            "from_memory",
            "    double *r = w + idx[0];\n    axpy(n, 2.0, w, r);",
        ),
        (
            "base_moved",
            "    double *r = w + n;\n    w = w + n;\n    axpy(n, 2.0, w, r);\n    w = w - n;",
        ),
        (
            "offset_changed",
            "    int m = 0;\n    double *r = w + m;\n    m = n;\n    axpy(m, 2.0, w, r);",
        ),
    ];
    for (name, body) in refused {
        match differentiate(name, body) {
            Ok(_) => panic!("{name}: differentiated"),
            Err(e) => assert!(e.contains("the same memory"), "{name}: {e}"),
        }
    }
}

/// `adjoint/fwd-adjoint-pointers`: a callee whose local pointer follows
/// an active pointer parameter (`double *py = y`) sets the local's
/// adjoint pointer from the parameter's in its forward sweep, so its
/// `P_fwd` takes that adjoint parameter and every caller passes it (a
/// split caller passes its own on; a checkpointed caller's fused `P_b`
/// too); with `--split` as well (`fwd_adjoint_pointers.c` also goes
/// through the compilation, dot-product, divided-difference and sanitizer
/// checks of every fixture). A split callee keeping a pointer to its own
/// local array across its two sweeps gets that array in static storage
/// (`adjoint/kept-locals`).
#[test]
fn split_callees_take_the_adjoint_pointers_their_forward_sweep_reads() {
    let path = common::fixture_dir("adjoint").join("fwd_adjoint_pointers.c");
    for split in [false, true] {
        let opts = AdjointOptions {
            split,
            ..AdjointOptions::default()
        };
        let text = generate_with(&path, &opts)
            .unwrap_or_else(|e| panic!("{e}"))
            .text;
        let code = common::code_without_comments(&text);
        let flat = code.split_whitespace().collect::<Vec<_>>().join(" ");
        for wanted in [
            "static void scale_walk_fwd(int n, double a, double *y, double *yb)",
            "static void smooth_left_fwd(int n, double *u, double *ub)",
            "axpy_walk_fwd(int n, double a, const double *x, double *xb, double *y, double *yb)",
            "walk_twice_fwd(int n, double a, const double *x, double *xb, double *y, double *yb)",
            "pyb = yb;",
            "leftb = &ub[0];",
            // A split caller passes the slices of its own adjoint pointers.
            "axpy_walk_fwd(n - half, -a, &x[half], &xb[half], y + half, yb + half);",
            "scale_walk_fwd(n, a, y, yb);",
            "smooth_left_fwd(n, u, ub);",
        ] {
            assert!(
                flat.contains(wanted),
                "split={split}: no `{wanted}` in\n{code}"
            );
        }
        if !split {
            // The checkpointed call on the local `w` runs the fused
            // `walk_twice_b`, which passes its adjoint parameters on.
            let start = flat.find("static void walk_twice_b(").expect(&code);
            assert!(
                flat[start..].contains("axpy_walk_fwd(half, a, x, xb, y, yb);"),
                "{code}"
            );
        }
    }
    // `adjoint/kept-locals`: a pointer to a split callee's local array,
    // kept for its backward sweep (it was refused), points into the
    // local given static storage; two calls in a row pass the dot-product
    // test (the backward sweep of each restores what the next call's
    // initialiser overwrote).
    let dir = tempfile::tempdir().unwrap();
    let local = dir.path().join("local_array.c");
    std::fs::write(
        &local,
        "// aioli: head='f(y)/(y a)' domain='n=4 y[4]=[0.5,1.5] a=[0.5,1.5]'\n\
         static void mid(int n, double a, double *y)\n\
         {\n    double t[4] = {1.0, 2.0, 3.0, 4.0};\n    double *p = t;\n    int i;\n\
         \x20   for (i = 0; i < 4; i++) { *p = *p * a * y[i]; p++; }\n\
         \x20   y[0] = y[0] * a + t[0] + t[3];\n}\n\
         void f(int n, double *y, double a) { mid(n, a, y); mid(n, a, y); }\n",
    )
    .unwrap();
    let g = generate(&local, false).unwrap_or_else(|e| panic!("{e}"));
    for wanted in ["static double mid_t[4];", "static double mid_tb[4];"] {
        assert!(g.text.contains(wanted), "no `{wanted}` in\n{}", g.text);
    }
    let outcome = check(&local, dir.path(), AdjointCheckOptions::default()).unwrap();
    assert!(outcome.passed, "{}\n{outcome}", g.text);
}

/// `adjoint/unread-restores`: `n` of `while (n-- > 0)` is an integer read
/// by its own update, saved by the conservative criterion, but the
/// backward sweep replays the loop from its count and never reads it: no
/// push of it in the forward sweep, no pop in the backward sweep (which
/// was `n = aioli_pop_int()`, "parameter 'n' set but not used"); the
/// values it does read are still saved and restored.
#[test]
fn restores_the_backward_sweep_never_reads_are_not_saved() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("count_down.c");
    std::fs::write(
        &path,
        "// aioli: head='f(y)/(y a)'\n\
         static void scale(int n, double a, double *y)\n\
         {\n    int i = 0;\n    while (n-- > 0) { y[i] *= a; i++; }\n}\n\
         void f(int n, double *y, double a) { scale(n, a, y); }\n",
    )
    .unwrap();
    for split in [false, true] {
        let opts = AdjointOptions {
            split,
            ..AdjointOptions::default()
        };
        let code = common::code_without_comments(
            &generate_with(&path, &opts)
                .unwrap_or_else(|e| panic!("{e}"))
                .text,
        );
        // `scale`'s sweeps (with `--split` the head's own pair, after
        // them, saves the `n` it passes `scale_bwd`).
        let callee = code.split("void f(").next().unwrap();
        assert!(
            !callee.contains("aioli_push_int(n)") && !callee.contains("n = aioli_pop_int()"),
            "split={split}: n is saved though the backward sweep never reads it:\n{code}"
        );
        for kept in [
            "aioli_push_int(i);",
            "i = aioli_pop_int();",
            "aioli_push_real8(y[i]);",
            "y[i] = aioli_pop_real8();",
        ] {
            assert!(code.contains(kept), "split={split}: no `{kept}` in\n{code}");
        }
    }
}

/// `adjoint/intrinsic-singular`: at x < 0, `p = fmax(x, 0)` is 0 and
/// sqrt, cbrt, pow(., 0.5) and hypot are at their singular point: their
/// adjoint terms test the argument (`(p == 0.0 ? 0.0 : …) * sb`), not the
/// incoming adjoint, so `pb` stays finite and fmax's zero partial gives
/// `xb` its true value (the fixture's dot-product and divided-difference
/// tests check the numbers: they were NaN); pow(q, 1.5), finite at 0,
/// is not guarded.
#[test]
fn infinite_partials_at_singular_points_are_taken_as_zero() {
    let path = common::fixture_dir("adjoint").join("intrinsic_singular.c");
    let text = generate(&path, false)
        .unwrap_or_else(|e| panic!("{e}"))
        .text;
    let code = common::code_without_comments(&text);
    for wanted in [
        "pb += (p == 0.0 ? 0.0 : 0.5 / sqrt(p)) * sb;",
        "pb += (p == 0.0 ? 0.0 : cbrt(p) / (3.0 * p)) * sb;",
        "pb += (p == 0.0 ? 0.0 : 0.5 * pow(p, -0.5)) * sb;",
        "qb += 1.5 * pow(q, 0.5) * sb;",
        "pb += (p == 0.0 && q == 0.0 ? 0.0 : p / hypot(p, q)) * tempb;",
    ] {
        assert!(code.contains(wanted), "no `{wanted}` in\n{code}");
    }
    assert!(
        !code.contains("sb == 0.0"),
        "a guard tests the adjoint:\n{code}"
    );
}

/// `adjoint/comments`: the forward sweep drops `double y = x * x;` and
/// `return …` (only their derivatives are needed), and their comments
/// went with them; they now lead the statements of their backward sweeps,
/// in the joint `P_b`, and in `P_bwd` of a split callee.
#[test]
fn comments_of_statements_the_forward_sweep_drops_are_kept() {
    let src = "double f(double x)\n{\n    /* square it */\n    double y = x * x;\n    /* regularisation */\n    return y + 0.5 * x;\n}\n";
    let text = adjoint_of_text("comments.c", src, "f(f)/(x)").unwrap_or_else(|e| panic!("{e}"));
    let body = &text[text.find("void f_b(").expect(&text)..];
    let flat = body.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("/* regularisation */ yb += fb;"),
        "the return's comment is not on its adjoint:\n{body}"
    );
    assert!(
        flat.contains("/* square it */ *xb += 2.0 * (x * yb);"),
        "the declaration's comment is not on its adjoint:\n{body}"
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("comments_split.c");
    std::fs::write(
        &path,
        "// aioli: head='g(y)/(y)'\n\
         static void h(double *y)\n{\n    /* square it */\n    double t = y[0] * y[0];\n    /* store it */\n    y[1] = t + y[1];\n}\n\
         void g(double *y) { h(y); }\n",
    )
    .unwrap();
    let opts = AdjointOptions {
        split: true,
        ..AdjointOptions::default()
    };
    let text = generate_with(&path, &opts)
        .unwrap_or_else(|e| panic!("{e}"))
        .text;
    for comment in ["/* square it */", "/* store it */"] {
        assert!(text.contains(comment), "{comment} is lost:\n{text}");
    }
}

/// `adjoint/empty-loop`: a forward-sweep loop that slicing emptied is
/// dropped (the accumulation `s += x[i] * x[i]` no sweep needs), and one
/// whose final index a later statement reads stays.
#[test]
fn emptied_counting_loops_are_dropped() {
    let path = common::fixture_dir("adjoint").join("dead_passive_init.c");
    let text = generate(&path, false).unwrap().text;
    assert_eq!(text.matches("for (").count(), 1, "{text}");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("last.c");
    std::fs::write(
        &path,
        "// aioli: head='last(last)/(x)' domain='n=4 x[n]=[0.5,1.5]'\n\
         double last(int n, const double *x)\n{\n    int i;\n    double s = 0.0;\n    \
         for (i = 0; i + 1 < n; i++) {\n        s += x[i] * x[i];\n    }\n    \
         return s + x[i] * x[i];\n}\n",
    )
    .unwrap();
    let g = generate(&path, false).unwrap();
    assert_eq!(g.text.matches("for (").count(), 2, "{}", g.text);
    let outcome = check(&path, dir.path(), AdjointCheckOptions::default()).unwrap();
    assert!(outcome.passed, "{}\n{outcome}", g.text);
}

/// `adjoint/for-canonical`, invariant bound: a local set once outside
/// every loop (`int q = n - 1;`) bounds a loop replayed from it, with
/// nothing recorded; one set inside a loop (`m = k + 1;`) changes between
/// the executions of the inner loop, whose last index is recorded.
#[test]
fn a_bound_set_once_outside_loops_is_replayed_and_one_set_in_a_loop_is_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bounds.c");
    std::fs::write(
        &path,
        "// aioli: head='f(f)/(x)' domain='n=4 x[n]=[0.5,1]'\n\
         double f(int n, const double *x)\n{\n    double s = 0.0;\n    int m;\n    \
         for (int k = 0; k < 3; k++) {\n        m = k + 1;\n        \
         for (int i = 0; i < m; i++) {\n            s += x[i] * x[i] * (k + 1);\n        }\n    }\n    \
         int q = n - 1;\n    for (int i = 0; i < q; i++) {\n        s += x[i] * x[i + 1];\n    }\n    \
         return s;\n}\n",
    )
    .unwrap();
    let g = generate(&path, false).unwrap();
    assert_eq!(g.text.matches("aioli_push_int(").count(), 1, "{}", g.text);
    assert!(
        g.text.contains("for (i0 = q - 1; i0 >= 0; i0--)"),
        "{}",
        g.text
    );
    let outcome = check(&path, dir.path(), AdjointCheckOptions::default()).unwrap();
    assert!(outcome.passed, "{}\n{outcome}", g.text);
}

/// `drop_unread_scalars` (`adjoint/proc-fused`): a callee's local struct
/// whose array member is only stored, for the `return c` the fused `P_b`
/// drops, is not computed (it was, and gcc warned "set but not used").
#[test]
fn locals_only_stored_for_a_dropped_return_are_not_computed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mk.c");
    std::fs::write(
        &path,
        "// aioli: head='f(f)/(x)' domain='x=[0.5,1.5]'\n\
         typedef struct {\n    double v[2];\n} P2;\n\
         static P2 mk(double x)\n{\n    P2 c;\n    c.v[0] = x * x;\n    c.v[1] = 2.0 * x;\n    return c;\n}\n\
         double f(double x)\n{\n    P2 p = mk(x);\n    return p.v[0] + p.v[1] * x;\n}\n",
    )
    .unwrap();
    let g = generate(&path, false).unwrap();
    let mk_b = &g.text[g.text.find("mk_b(").unwrap()..];
    let mk_b = &mk_b[..mk_b.find("\n}\n").unwrap()];
    assert!(!mk_b.contains("c.v[0] = x * x"), "{}", g.text);
    let outcome = check(&path, dir.path(), AdjointCheckOptions::default()).unwrap();
    assert!(outcome.passed, "{}\n{outcome}", g.text);
}

/// `tbr/restore-address`: the backward sweep puts the swapped row pointers
/// back through the pivot index (`row[p] = pop`), so the index each step
/// chose is saved and restored (it was read with its last value: a
/// dot-product error of 0.9, and LU with partial pivoting wrong by 6-40%).
#[test]
fn a_restore_reads_the_index_its_step_used() {
    let g = generate(&common::fixture_dir("adjoint").join("pivot_rows.c"), false).unwrap();
    let code = common::code_without_comments(&g.text);
    assert!(code.contains("aioli_push_int(p);"), "{code}");
    assert!(code.contains("p = aioli_pop_int();"), "{code}");
}

/// `adjoint/output`: the runtime header comes first and takes the file's
/// opening comment, but not a first function's own comment, which its
/// adjoint keeps (it came out twice).
#[test]
fn a_first_functions_comment_comes_out_once() {
    let out = adjoint_of_text(
        "first.c",
        "/* Squares its argument. */\ndouble f(double x)\n{\n    return x * x;\n}\n",
        "f(f)/(x)",
    )
    .unwrap();
    assert_eq!(out.matches("Squares its argument").count(), 1, "{out}");
    let opening = adjoint_of_text(
        "opening.c",
        "/* The file's opening comment. */\n#include <math.h>\ndouble f(double x)\n{\n    return sin(x);\n}\n",
        "f(f)/(x)",
    )
    .unwrap();
    assert_eq!(opening.matches("opening comment").count(), 1, "{opening}");
}

/// `adjoint/call-split`: a split call whose arguments read what the call
/// writes (`upd(&s, x[k], &k)` incrementing `*k`) is refused: `P_bwd`
/// got `&xb[k]` with the incremented k (relative error 0.36). The joint
/// mode restores k before the adjoint call and is accepted.
#[test]
fn a_split_call_changing_its_own_index_is_refused() {
    let src = "static int upd(double *s, double v, int *k)\n{\n    *s = *s * v;\n    (*k)++;\n    return *k;\n}\n\
void f(int n, double *x, double *y)\n{\n    int k = 0;\n    double s = 1.0;\n    do {\n        y[k] = s;\n    } while (upd(&s, x[k], &k) < n);\n}\n";
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("index.c");
    std::fs::write(&path, format!("// aioli: head='f(y)/(x)'\n{src}")).unwrap();
    let err = match generate_with(
        &path,
        &AdjointOptions {
            split: true,
            ..AdjointOptions::default()
        },
    ) {
        Ok(_) => panic!("split: differentiated"),
        Err(e) => e,
    };
    assert!(
        err.contains("index.c:14:14: error: this call changes 'k', which its own arguments read"),
        "{err}"
    );
    generate(&path, false).unwrap();
}

/// `adjoint/structure-once`: `do { … } while (0)` without a jump out is a
/// block; one a `break` leaves keeps its loop and its iteration count.
#[test]
fn a_once_loop_is_reversed_as_a_block() {
    let path = common::fixture_dir("adjoint").join("once_macros.c");
    let loaded = front::load(&path, &front::FrontOptions::default()).unwrap();
    let structured = aioli::transform::structure::structure_jumps(&loaded.program);
    let printed = aioli::back::print_c(&structured, &loaded.sources);
    let swap = printed.find("swap_t = (lo);").expect("the SWAP body");
    let before = &printed[..swap];
    let clamp = printed
        .find("(acc) += (hi * x[i]);")
        .expect("the CLAMP_ADD body");
    // One `do` left, the CLAMP_ADD one, after the SWAP body.
    assert_eq!(printed.matches("do {\n").count(), 1, "{printed}");
    assert!(!before.contains("do {\n"), "{printed}");
    assert!(printed[..clamp].contains("do {\n"), "{printed}");
}

/// `tangent/names` in the adjoint: a parameter named like a function that
/// only the adjoint calls (`exp`, for `erf`'s partial) is renamed.
#[test]
fn a_parameter_hiding_a_function_the_adjoint_calls_is_renamed() {
    let c = "#include <math.h>\nvoid f(const double *x, double exp, double *y)\n{\n    y[0] = erf(x[0]) * exp;\n}\n";
    let out = adjoint_of_text("hide.c", c, "f(y)/(x)").unwrap();
    assert!(
        out.contains("void f_b(const double *x, double *xb, double exp0, double *y, double *yb)"),
        "{out}"
    );
    assert!(
        out.contains("exp(-(x[0] * x[0])) * (exp0 * yb[0])"),
        "{out}"
    );
}

/// `adjoint/actual-converted`: a `double` passed to a `float` formal hands
/// the callee a `float` temporary for its adjoint (it was `&xb[i]`, a
/// `double *` where `float *` is expected: a compile error with GCC 14, a
/// wrong gradient before); the fixture's numbers are checked with the
/// corpus.
#[test]
fn a_real_of_another_precision_passes_its_adjoint_through_a_temporary() {
    let path = common::fixture_dir("adjoint").join("mixed_precision_call.c");
    let text = std::fs::read_to_string(&path).unwrap();
    let out = adjoint_of_text(
        "mixed_precision_call.c",
        &text,
        "mixed_precision_call(y)/(x)",
    )
    .unwrap();
    let code = common::code_without_comments(&out);
    for line in [
        "float argb;",
        "argb = 0.0f;",
        "fsq_b(x[i], &argb, tempb);",
        "xb[i] += argb;",
        // A cast to the formal's type passes the adjoint of the variable
        // under it, of the other precision: a temporary too.
        "fsq_b((float)x[i], &argb, tempb);",
        "dcube_b((double)xf, &argb0, tempb0);",
        "xfb += argb0;",
    ] {
        assert!(code.contains(line), "{line}\n{code}");
    }
}

/// With `--split` a head gets `f_fwd` and `f_bwd` besides `f_b` (CONTRACT
/// §2, `adjoint/proc-split`): `f_fwd` has the head's parameters and
/// result, computes every original result (a non-dependent output
/// included, `diff-live/exit`) and records; `f_bwd` has `f_b`'s
/// parameters. Run one after the other they give `f_b`'s gradient. A
/// `const` by-value parameter stays `const` in `f_b` and `f_fwd`; only
/// `f_bwd`, which restores it, drops the qualifier.
#[test]
fn with_split_a_head_gets_f_fwd_and_f_bwd_that_compose_to_f_b() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("g.c");
    std::fs::write(
        &src,
        "#include <math.h>\n\
         double g(double x, double *z, int n, const double c)\n\
         {\n    double s = 0.0;\n    for (int i = 0; i < n; i++) {\n        \
         s += sin(x * i) * c;\n        z[i] = s * s;\n    }\n    return s * x;\n}\n",
    )
    .unwrap();
    let (program, sources) = {
        let l = front::load(&src, &Default::default()).unwrap();
        (l.program, l.sources)
    };
    let head = parse_head(&program, "g(g)/(x c)").unwrap();
    let opts = AdjointOptions {
        split: true,
        ..AdjointOptions::default()
    };
    let rules = load_adjoint_rules(&opts).unwrap();
    let text = adjoint(
        &program,
        &sources,
        std::slice::from_ref(&head),
        &rules,
        &opts,
    )
    .unwrap();
    let flat = common::code_without_comments(&text)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    for wanted in [
        "double g_fwd(double x, double *z, int n, const double c)",
        "void g_bwd(double x, double *xb, double *z, int n, double c, double *cb, double gb)",
        "void g_b(double x, double *xb, double *z, int n, const double c, double *cb, double gb)",
    ] {
        assert!(flat.contains(wanted), "no `{wanted}` in\n{text}");
    }
    let out = compile_and_run(
        dir.path(),
        &src,
        &text,
        "g_b",
        false,
        "#include <math.h>\n#include <stdio.h>\n\
         double g(double x, double *z, int n, const double c);\n\
         double g_fwd(double x, double *z, int n, const double c);\n\
         void g_bwd(double x, double *xb, double *z, int n, double c, double *cb, double gb);\n\
         void g_b(double x, double *xb, double *z, int n, const double c, double *cb, double gb);\n\
         int main(void)\n{\n    double z0[5], z1[5], z2[5];\n    \
         double r0 = g(0.7, z0, 5, 1.3);\n    \
         double xb1 = 0.0, cb1 = 0.0, xb2 = 0.0, cb2 = 0.0;\n    \
         g_b(0.7, &xb1, z1, 5, 1.3, &cb1, 0.5);\n    \
         double r2 = g_fwd(0.7, z2, 5, 1.3);\n    \
         int bad = r2 != r0;\n    \
         for (int i = 0; i < 5; i++) bad |= z2[i] != z0[i];\n    \
         g_bwd(0.7, &xb2, z2, 5, 1.3, &cb2, 0.5);\n    \
         bad |= fabs(xb1 - xb2) > 1e-15 * fabs(xb1) || fabs(cb1 - cb2) > 1e-15 * fabs(cb1);\n    \
         bad |= xb1 == 0.0 || cb1 == 0.0;\n    \
         printf(\"%.17g %.17g %.17g %.17g\\n\", xb1, xb2, cb1, cb2);\n    \
         return bad;\n}\n",
    );
    assert!(
        out.status.success(),
        "f_fwd ; f_bwd differs from f_b or from the original: {}\n{text}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// `adjoint/free-later`: memory a helper called as it is allocated
/// (`w = mk(n)`), which the original frees itself, is handed to the runtime
/// by the forward sweep and freed when the head's adjoint call ends: it
/// leaked (the free was dropped and no reversed allocation frees it). The
/// driver runs `f_b` twice under AddressSanitizer, whose leak check fails
/// the run on a leak, and compares the gradient with its formula. A helper
/// that frees memory and whose result the derivatives need is refused.
#[test]
fn a_helpers_allocation_is_freed_after_the_backward_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("mk.c");
    std::fs::write(
        &src,
        "#include <stdlib.h>\n\
         static double *mk(int n)\n{\n    double *w = malloc((size_t)n * sizeof(double));\n    \
         for (int i = 0; i < n; i++)\n        w[i] = i + 1.0;\n    return w;\n}\n\
         void f(int n, const double *a, double *y)\n{\n    double *w = mk(n);\n    \
         for (int i = 0; i < n; i++)\n        y[i] = a[i] * a[i] * w[i];\n    free(w);\n}\n",
    )
    .unwrap();
    let loaded = front::load(&src, &Default::default()).unwrap();
    let head = parse_head(&loaded.program, "f(y)/(a)").unwrap();
    let opts = AdjointOptions::default();
    let rules = load_adjoint_rules(&opts).unwrap();
    let text = adjoint(
        &loaded.program,
        &loaded.sources,
        std::slice::from_ref(&head),
        &rules,
        &opts,
    )
    .unwrap();
    let code = common::code_without_comments(&text);
    for line in [
        "aioli_sweep_open();\n    w = mk(n);\n    aioli_free_later((void *)w);",
        "aioli_sweep_close();\n}",
    ] {
        assert!(code.contains(line), "no `{line}` in\n{code}");
    }
    let out = compile_and_run(
        dir.path(),
        &src,
        &text,
        "mk_b",
        sanitizer_cc().is_ok(),
        "#include <math.h>\n\
         void f_b(int n, const double *a, double *ab, double *y, double *yb);\n\
         int main(void)\n{\n    double a[3] = {0.5, 1.5, 2.0}, y[3], ab[3], yb[3];\n    \
         int bad = 0;\n    for (int run = 0; run < 2; run++) {\n        \
         for (int i = 0; i < 3; i++) {\n            ab[i] = 0.0;\n            yb[i] = 1.0;\n        }\n        \
         f_b(3, a, ab, y, yb);\n        for (int i = 0; i < 3; i++)\n            \
         bad |= fabs(ab[i] - 2.0 * a[i] * (i + 1.0)) > 1e-15;\n    }\n    return bad;\n}\n",
    );
    assert!(
        out.status.success(),
        "the gradient is wrong or memory leaked:\n{}\n{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A helper that frees a helper's block, called where its result is
    // needed: the forward sweep calls a copy whose free is put off
    // (`adjoint/call-free-later`; the original would free memory the
    // backward sweep reads).
    let helper = "#include <stdlib.h>\n\
         static double *mk(int n)\n{\n    double *w = malloc((size_t)n * sizeof(double));\n    \
         for (int i = 0; i < n; i++)\n        w[i] = i + 1.0;\n    return w;\n}\n\
         static double release(double *w)\n{\n    double s = w[0];\n    free(w);\n    return s;\n}\n\
         void f(int n, const double *a, double *y)\n{\n    double *w = mk(n);\n    \
         for (int i = 0; i < n; i++)\n        y[i] = a[i] * a[i] * w[i];\n    \
         y[0] += a[1] * release(w);\n}\n";
    let code =
        common::code_without_comments(&adjoint_of_text("frees.c", helper, "f(y)/(a)").unwrap());
    for line in [
        "static double release_fwd(double *w)",
        "aioli_free_later((void *)w);",
        "= release_fwd(w);",
    ] {
        assert!(code.contains(line), "no `{line}` in\n{code}");
    }
    // The same with a block the adjoint's own reversed allocation frees:
    // refused, as the original would free memory the backward sweep reads.
    let own = helper.replace(
        "double *w = mk(n);",
        "double *w = malloc((size_t)n * sizeof(double));\n    for (int i = 0; i < n; i++)\n        w[i] = i + 1.0;",
    );
    let err = adjoint_of_text("frees.c", &own, "f(y)/(a)").unwrap_err();
    assert!(
        err.contains("error: the adjoint mode does not handle yet a call of 'release'"),
        "{err}"
    );
}

/// A refusal naming memory that is not a variable says which procedure
/// allocated it (it showed the analyses' own `alloc@113`).
#[test]
fn a_heap_block_is_named_by_its_allocator_in_refusals() {
    let src = "#include <stdlib.h>\ntypedef struct {\n    int n;\n    double *w;\n} Mesh;\n\
         static void mesh_init(Mesh *m, int n)\n{\n    m->n = n;\n    m->w = (double *)malloc(n * sizeof(double));\n    \
         for (int i = 0; i < n; i++)\n        m->w[i] = 1.0 + i;\n}\n\
         static void mesh_free(Mesh *m)\n{\n    free(m->w);\n}\n\
         void f(int n, double *x, double *y)\n{\n    Mesh *m = (Mesh *)malloc(sizeof(Mesh));\n    \
         for (int i = 0; i < n; i++)\n        y[i] = 0.0;\n    for (int k = 0; k < 2; k++) {\n        \
         mesh_init(m, n);\n        for (int i = 0; i < n; i++)\n            y[i] += m->w[i] * x[i] * x[i];\n        \
         mesh_free(m);\n    }\n    free(m);\n}\n";
    let err = adjoint_of_text("mesh.c", src, "f(y)/(x)").unwrap_err();
    assert!(
        err.contains(
            "cannot yet save the memory that this call of 'mesh_init' overwrites in a block that 'mesh_init' allocates"
        ),
        "{err}"
    );
    assert!(!err.contains("alloc@"), "{err}");
}

/// `adjoint/kept-locals`: with `--split`, a head whose pair would keep a
/// local's adjoint by address from one half to the other (two frames: `w`
/// walked by a callee's pointer local) gives that local and its adjoint
/// static storage, which both halves share, and gets its pair (the
/// corpus's dot-product test runs it, `tests/adjoint_dot.rs`). A local
/// struct whose adjoint a callee only writes through (`mesh_build(&m, n)`
/// storing `m->w`) keeps its automatic storage: what the callee stores is
/// a value, carried from one half to the other. A procedure that calls
/// itself cannot share a local between its activations: refused.
#[test]
fn a_head_pair_keeping_a_local_by_address_shares_it_in_static_storage() {
    let run = |fixture: &str, head: &str| {
        let dir = tempfile::tempdir().unwrap();
        let src = common::fixture_dir("adjoint").join(format!("{fixture}.c"));
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_aioli"))
            .arg("adjoint")
            .arg(&src)
            .args(["--head", head, "--split", "--out"])
            .arg(dir.path())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{stderr}");
        let text = std::fs::read_to_string(dir.path().join(format!("{fixture}_b.c"))).unwrap();
        (stderr, text)
    };
    let (stderr, text) = run("fwd_adjoint_pointers", "fwd_adjoint_pointers(y u)/(x a)");
    assert!(
        !stderr.contains("no 'fwd_adjoint_pointers_fwd'"),
        "{stderr}"
    );
    for wanted in [
        "static double fwd_adjoint_pointers_w[6];",
        "static double fwd_adjoint_pointers_wb[6];",
        "void fwd_adjoint_pointers_fwd(",
        "void fwd_adjoint_pointers_bwd(",
        "void fwd_adjoint_pointers_b(",
    ] {
        assert!(text.contains(wanted), "no `{wanted}` in\n{text}");
    }
    let recursive = "static double rec(int d, const double *x)\n{\n    double t[2];\n    \
         double *p = &t[1];\n    t[0] = x[0];\n    t[1] = x[1] * x[0];\n    if (d > 0)\n        \
         return p[0] * rec(d - 1, x);\n    return p[0] + t[0];\n}\n\n\
         void f(const double *x, double *y)\n{\n    *y = rec(3, x);\n}\n";
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("rec.c");
    std::fs::write(&src, recursive).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_aioli"))
        .arg("adjoint")
        .arg(&src)
        .args(["--head", "f(y)/(x)", "--split", "--out"])
        .arg(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("rec.c:3:12: error: the adjoint mode does not handle yet, in 'rec', which a split call reaches, a pointer to the local 't'"),
        "{stderr}"
    );
    assert!(!dir.path().join("rec_b.c").exists());
    let (stderr, text) = run("helper_allocates", "helper_allocates(y)/(a)");
    assert!(!stderr.contains("warning"), "{stderr}");
    for wanted in [
        "void helper_allocates_fwd(int n, const double *a, double *y)",
        "mesh_build_fwd(&m, &mb, n);",
        "aioli_push_pointer((void *)mb.w);",
        "mb.w = aioli_pop_pointer();",
    ] {
        assert!(text.contains(wanted), "no `{wanted}` in\n{text}");
    }
}

/// Compiles the original `src`, its adjoint `text` (written as
/// `NAME.c`), the runtime and the C `driver` with `-Wall -Wextra -Werror`
/// (and AddressSanitizer, whose leak check fails the run on a leak, when
/// `sanitize`), and runs the program.
fn compile_and_run(
    dir: &Path,
    src: &Path,
    text: &str,
    name: &str,
    sanitize: bool,
    driver: &str,
) -> std::process::Output {
    let adj = dir.join(format!("{name}.c"));
    std::fs::write(&adj, text).unwrap();
    let rt = dir.join("rt");
    aioli::runtime::write(&rt).unwrap();
    let main = dir.join("main.c");
    std::fs::write(&main, driver).unwrap();
    let mut flags: Vec<String> = ["-std=c99", "-Wall", "-Wextra", "-Werror"]
        .map(String::from)
        .to_vec();
    flags.push(format!("-I{}", rt.display()));
    if sanitize {
        flags.push("-fsanitize=address".into());
    }
    let exe = dir.join(name);
    common::compile(
        &flags,
        &[src, &adj, &main, &rt.join(aioli::runtime::SOURCE_NAME)],
        &exe,
    )
    .unwrap_or_else(|e| panic!("{e}\n{text}"));
    std::process::Command::new(&exe).output().unwrap()
}

/// `specialize/alloc-site`: two blocks from two calls of one allocating
/// helper (`a = dvector(n); b = dvector(n);`, through a filling helper, and
/// a struct constructor) are told apart, so a helper writing one while
/// reading the other is differentiated; the fixture's numbers are its
/// dot-product test. `output/merge-copies`: the copies' derivatives are
/// alike and printed once. Blocks from one call site in a loop stay one
/// block, and the call stays refused.
#[test]
fn blocks_from_separate_calls_of_an_allocating_helper_are_told_apart() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/adjoint");
    let path = dir.join("allocation_sites.c");
    let g = generate(&path, false).unwrap();
    for helper in ["dvector", "scaled", "vec_new", "axpy", "vec_mul"] {
        for half in ["fwd", "bwd"] {
            let definitions = g
                .text
                .lines()
                .filter(|l| l.starts_with("static") && l.contains(&format!("{helper}_{half}(")))
                .count();
            assert_eq!(definitions, 1, "{helper}_{half} in {}", g.text);
            assert!(!g.text.contains(&format!("{helper}_{half}0")), "{}", g.text);
        }
    }
    let work = tempfile::tempdir().unwrap();
    let outcome = check(&path, work.path(), AdjointCheckOptions::default()).unwrap();
    assert!(outcome.passed, "{}\n{outcome}", g.text);
    let one_site = "#include <stdlib.h>\n\
static double *dvec(int n)\n{\n    return (double *)malloc((size_t)n * sizeof(double));\n}\n\
static void axpy(int n, const double *x, double *y)\n{\n    for (int i = 0; i < n; i++)\n        y[i] += x[i];\n}\n\
double f(int n, const double *x)\n{\n    double *v[2];\n    for (int k = 0; k < 2; k++) {\n        v[k] = dvec(n);\n        for (int i = 0; i < n; i++)\n            v[k][i] = x[i] * (k + 1);\n    }\n    axpy(n, v[0], v[1]);\n    double s = v[1][0] * v[1][0];\n    free(v[0]);\n    free(v[1]);\n    return s;\n}\n";
    let err = adjoint_of_text("one_site.c", one_site, "f(f)/(x)").unwrap_err();
    assert!(err.contains("one_site.c:20:5"), "{err}");
    assert!(err.contains("designate one array"), "{err}");
}

/// `pred/checkpointed-call`: a helper drawing `rand()` is not
/// checkpointed (a second run would draw other numbers, and its adjoint
/// would differentiate another function): its `P_fwd` draws once and
/// saves the number for `P_bwd`. `diff-live/effect`: `srand` stays.
#[test]
fn a_helper_drawing_random_numbers_runs_once() {
    let src = "#include <stdlib.h>\n\
static double noisy(double a)\n{\n    return a * a * (1 + rand() % 5);\n}\n\
void f(int n, const double *x, double *y)\n{\n    srand(7);\n    for (int i = 0; i < n; i++)\n        y[i] = noisy(x[i]);\n}\n";
    let out = adjoint_of_text("noisy.c", src, "f(y)/(x)").unwrap();
    let code = common::code_without_comments(&out);
    assert_eq!(code.matches("rand()").count(), 1, "{code}");
    assert!(code.contains("srand(7);"), "{code}");
    assert!(
        code.contains("noisy_fwd(") && code.contains("noisy_bwd("),
        "{code}"
    );
    assert!(!code.contains("noisy_b("), "{code}");
}

/// `adjoint/static-local`: a writable static local (NR's `trapzd` stage
/// carried from one call to the next, a passive call counter) becomes a
/// file-scope static of the output, and the adjoint is that of a global:
/// checked by the dot-product test and divided differences.
#[test]
fn static_locals_are_globals_of_their_procedure() {
    let src = "/* refines from the previous stage, as NR's trapzd does */\n\
static double stage(double v, int n)\n{\n    static double s;\n    static int calls = 0;\n    calls++;\n\
    if (n == 1)\n        s = v;\n    else\n        s = 0.5 * s + v * v * (calls > 0 ? 1.0 : 2.0);\n    return s;\n}\n\
void f(double *x, double *y)\n{\n    for (int j = 1; j <= 3; j++)\n        y[0] = stage(x[0], j);\n}\n";
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("stage.c");
    std::fs::write(
        &path,
        format!("// aioli: head='f(y)/(x)' domain='x[1]=[0.5,1.5] y[1]=[0,0]'\n{src}"),
    )
    .unwrap();
    let g = generate(&path, false).unwrap();
    let code = common::code_without_comments(&g.text);
    assert!(code.contains("static double stage_s;"), "{code}");
    assert!(code.contains("static int stage_calls = 0;"), "{code}");
    let outcome = check(&path, dir.path(), AdjointCheckOptions::default()).unwrap();
    assert!(outcome.passed, "{}\n{outcome}", g.text);
}

/// `adjoint/kept-locals`: two local buffers swapped through pointers each
/// step (`cur`, `nxt`) are kept by address from `f_fwd` to `f_bwd`; with
/// static storage the pair runs, call after call, as `f_b` does, and `f_b`
/// agrees with central differences (under AddressSanitizer and UBSan). Two
/// forward sweeps before their backward sweeps (a taped time loop) each
/// find their own values: the static is carried on the stack from one
/// half to the other, like a local (it was not, and the first pair read
/// the second's values).
#[test]
fn a_split_pair_keeping_local_buffers_by_address_runs_like_f_b() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("swap.c");
    std::fs::write(
        &src,
        "// aioli: head='f(y)/(x)' domain='x[4]=[0.5,1.5] y[4]=[0,0]'\n\
         void f(const double *x, double *y)\n{\n    double buf0[4], buf1[4];\n    \
         double *cur = buf0, *nxt = buf1, *tmp;\n    \
         for (int i = 0; i < 4; i++)\n        cur[i] = x[i];\n    \
         for (int it = 0; it < 3; it++) {\n        for (int i = 0; i < 4; i++)\n            \
         nxt[i] = cur[i] * cur[(i + 1) % 4];\n        tmp = cur;\n        cur = nxt;\n        \
         nxt = tmp;\n    }\n    for (int i = 0; i < 4; i++)\n        y[i] = cur[i];\n}\n",
    )
    .unwrap();
    let split = generate_with(
        &src,
        &AdjointOptions {
            split: true,
            ..AdjointOptions::default()
        },
    )
    .unwrap();
    for wanted in [
        "static double f_buf0[4], f_buf1[4];",
        "void f_fwd(const double *x, double *y)",
    ] {
        assert!(
            split.text.contains(wanted),
            "no `{wanted}` in\n{}",
            split.text
        );
    }
    let out = compile_and_run(
        dir.path(),
        &src,
        &split.text,
        "swap_b",
        true,
        "#include <math.h>\n#include <stdio.h>\n\
         void f(const double *x, double *y);\n\
         void f_b(const double *x, double *xb, double *y, double *yb);\n\
         void f_fwd(const double *x, double *y);\n\
         void f_bwd(const double *x, double *xb, double *y, double *yb);\n\
         int main(void)\n{\n    int bad = 0;\n    \
         for (int call = 0; call < 3; call++) {\n        \
         double x[4] = {0.9 + 0.1 * call, 1.1, 0.8, 1.2}, y[4], yb[4], xb1[4] = {0}, xb2[4] = {0};\n        \
         for (int i = 0; i < 4; i++) yb[i] = 1.0 + i;\n        f_b(x, xb1, y, yb);\n        \
         f_fwd(x, y);\n        for (int i = 0; i < 4; i++) yb[i] = 1.0 + i;\n        f_bwd(x, xb2, y, yb);\n        \
         for (int k = 0; k < 4; k++) {\n            double xp[4], xm[4], yp[4], ym[4], fd = 0.0;\n            \
         for (int i = 0; i < 4; i++) xp[i] = xm[i] = x[i];\n            xp[k] += 1e-6;\n            xm[k] -= 1e-6;\n            \
         f(xp, yp);\n            f(xm, ym);\n            \
         for (int i = 0; i < 4; i++) fd += (1.0 + i) * (yp[i] - ym[i]) / 2e-6;\n            \
         bad |= fabs(fd - xb1[k]) > 1e-6 * fabs(fd) || xb1[k] != xb2[k];\n            \
         printf(\"%d %d %.12g %.12g %.12g\\n\", call, k, fd, xb1[k], xb2[k]);\n        }\n    }\n    \
         double x1[4] = {0.9, 1.1, 0.8, 1.2}, x2[4] = {1.3, 0.7, 1.0, 0.6};\n    \
         double y1[4], y2[4], yb[4], g1[4] = {0}, g2[4] = {0}, n1[4] = {0}, n2[4] = {0};\n    \
         for (int i = 0; i < 4; i++) yb[i] = 1.0 + i;\n    f_b(x1, g1, y1, yb);\n    \
         for (int i = 0; i < 4; i++) yb[i] = 1.0 + i;\n    f_b(x2, g2, y2, yb);\n    \
         f_fwd(x1, y1);\n    f_fwd(x2, y2);\n    \
         for (int i = 0; i < 4; i++) yb[i] = 1.0 + i;\n    f_bwd(x2, n2, y2, yb);\n    \
         for (int i = 0; i < 4; i++) yb[i] = 1.0 + i;\n    f_bwd(x1, n1, y1, yb);\n    \
         for (int k = 0; k < 4; k++) {\n        bad |= n1[k] != g1[k] || n2[k] != g2[k];\n        \
         printf(\"nested %d %.17g %.17g %.17g %.17g\\n\", k, g1[k], n1[k], g2[k], n2[k]);\n    }\n    \
         return bad;\n}\n",
    );
    assert!(
        out.status.success(),
        "f_fwd ; f_bwd differs from f_b, or f_b from divided differences: {}{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
        split.text
    );
}

/// `adjoint/global-exit`, `tangent/reset-merge` at the entry: a global
/// array, and a field of a global array of structs, that the head reads
/// and writes but does not name have derivatives that the output defines
/// and the caller does not touch. Each call starts them at zero (they
/// held the last call's values: the second call of `f_d` and of `f_b` was
/// wrong). f = x (6x + 7) there, so f' = 12x + 7 = 15.4 at x = 0.7.
#[test]
fn an_active_global_outside_the_head_starts_each_call_at_zero() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("glob.c");
    std::fs::write(
        &src,
        "// aioli: head='f(f)/(x)' domain='x=[0.5,1.5]'\n\
         double G[2];\n\
         typedef struct {\n    double a, b;\n} Pair;\n\
         Pair pr[2];\n\
         double f(double x)\n{\n    double s = 0.0;\n    for (int i = 0; i < 2; i++) {\n        \
         G[i] = G[i] * x;\n        s += G[i];\n        pr[i].a = pr[i].a * x + pr[i].b;\n        \
         s += pr[i].a;\n    }\n    return s * x;\n}\n",
    )
    .unwrap();
    let adjoint = generate(&src, false).unwrap();
    let tangent = tangent_text(&src).unwrap();
    std::fs::write(dir.path().join("glob_d.c"), &tangent).unwrap();
    let out = compile_and_run(
        dir.path(),
        &src,
        &adjoint.text,
        "glob_b",
        false,
        "#include <math.h>\n#include <stdio.h>\n#include \"glob_d.c\"\n\
         void f_b(double x, double *xb, double fb);\n\
         static void reset(void)\n{\n    G[0] = 1.0;\n    G[1] = 2.0;\n    \
         pr[0].a = 1.0;\n    pr[1].a = 2.0;\n    pr[0].b = 3.0;\n    pr[1].b = 4.0;\n}\n\
         int main(void)\n{\n    double x = 0.7, v;\n    int bad = 0;\n    \
         for (int call = 0; call < 3; call++) {\n        reset();\n        double d = f_d(x, 1.0, &v);\n        \
         reset();\n        double xb = 0.0;\n        f_b(x, &xb, 1.0);\n        \
         bad |= fabs(d - 15.4) > 1e-12 || fabs(xb - 15.4) > 1e-12;\n        \
         printf(\"%d %.15g %.15g\\n\", call, d, xb);\n    }\n    return bad;\n}\n",
    );
    assert!(
        out.status.success(),
        "a call's derivatives depend on the last call's: {}{}\n{tangent}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
        adjoint.text
    );
}
