//! The data-flow analyses on the fixtures of `tests/fixtures/analysis/`:
//! insta snapshots of `aioli analyze` (text, with the warnings), the
//! specification's examples checked fact by fact, and the JSON of
//! CONTRACT §7 through the command line.

mod common;

use aioli::analysis::{self, Analysis};
use aioli::front::{self, diag};
use std::path::Path;
use std::process::Command;

fn head_of(path: &Path) -> String {
    common::config(path).head
}

/// Analyses a fixture; returns the text report with the warnings appended.
fn report(path: &Path) -> String {
    let loaded = front::load(path, &Default::default()).expect("fixture loads");
    let head = analysis::parse_head(&loaded.program, &head_of(path)).expect("head parses");
    let a = analysis::analyze(&loaded.program, &[head]);
    let mut out = a.report_text(&loaded.sources);
    for w in &a.warnings {
        let text = diag::render(&loaded.sources, w);
        // Paths relative to the fixture directory, so snapshots do not
        // depend on where the repository lives.
        out.push_str(&text.replace(
            &format!("{}/", common::fixture_dir("analysis").display()),
            "",
        ));
    }
    out
}

/// Every fixture's report, pinned. Together they exercise each equation of
/// `spec/analyses/` on real C: `loc/atom` `loc/field` `loc/heap`
/// `loc/target` `loc/result` `loc/static-local`, `eff/read` `eff/write`
/// `eff/kill` `eff/dep` `eff/diff-dep` `eff/nondiff` `eff/struct-copy`
/// `eff/decl` `eff/alloc` `eff/free` `eff/return` `eff/control`
/// `eff/library-call`, `call/by-value` `call/map-target` `call/map-result`
/// `call/summary` `call/recursion` `call/envelope`, `ptr/entry`
/// `ptr/address` `ptr/copy` `ptr/load` `ptr/null` `ptr/alloc` `ptr/strong`
/// `ptr/weak` `ptr/merge` `ptr/call` `ptr/resolve`, `report/text`
/// `report/pushed`, `inout/read-then-written` `inout/read-only`
/// `inout/written-only` `inout/untouched`.
#[test]
fn fixture_reports() {
    for path in common::c_files("analysis") {
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        insta::assert_snapshot!(format!("analyze_{name}"), report(&path));
    }
}

fn analysis_of(name: &str) -> (front::Loaded, String) {
    let path = common::fixture_dir("analysis").join(name);
    let loaded = front::load(&path, &Default::default()).expect("fixture loads");
    let head = head_of(&path);
    (loaded, head)
}

/// The rows of one procedure: (line, text, diff_live, active_out, pushed).
fn rows(a: &Analysis<'_>, loaded: &front::Loaded, proc: &str) -> Vec<serde_json::Value> {
    let json: serde_json::Value =
        serde_json::from_str(&a.report_json(&loaded.sources)).expect("report is JSON");
    json["procedures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == proc)
        .expect("procedure reported")["statements"]
        .as_array()
        .unwrap()
        .clone()
}

fn names(v: &serde_json::Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

/// Spec Fig. 8: only `d = a*c` is active; `x` is never useful because `e`
/// is truncated by `floor` (`activity/varied-entry` `activity/varied-assign`
/// `activity/varied-untouched` `activity/varied-merge` `activity/useful-exit`
/// `activity/useful-assign` `activity/useful-untouched`
/// `activity/useful-split` `activity/active` `eff/nondiff`).
#[test]
fn figure_8_activity() {
    for (file, d) in [("fig8.c", "d"), ("fig8_globals.c", "d")] {
        let (loaded, head) = analysis_of(file);
        let h = analysis::parse_head(&loaded.program, &head).unwrap();
        let a = analysis::analyze(&loaded.program, std::slice::from_ref(&h));
        let rows = rows(&a, &loaded, a.program.proc(h.proc).name.as_str());
        for r in &rows {
            assert!(
                !names(&r["useful_out"]).contains(&"x".to_string()),
                "{file}: x must never be useful: {r}"
            );
            let text = r["text"].as_str().unwrap();
            let writes_active = !names(&r["active_out"]).is_empty()
                && names(&r["active_out"])
                    .iter()
                    .any(|n| text.starts_with(n.as_str()) || text.starts_with(&format!("*{n}")));
            if text.contains("a * c") {
                assert!(
                    names(&r["active_out"]).contains(&d.to_string()),
                    "{file}: {r}"
                );
            } else {
                assert!(!writes_active, "{file}: only d = a*c is active: {r}");
            }
        }
    }
}

/// Spec Fig. 11: which statements are diff-live, and TBR saves only `a`
/// before `a[n] = a[n]*a[n+1]` and `n` before each reassignment from
/// `ind2` (`diff-live/exit` `diff-live/use` `diff-live/dep`
/// `diff-live/untouched` `diff-live/split` `diff-live/stmt`
/// `deriv-use/partial` `deriv-use/address` `tbr/entry` `tbr/use` `tbr/kill`
/// `tbr/merge` `tbr/present` `tbr/restore`).
#[test]
fn figure_11_diff_liveness_and_tbr() {
    let (loaded, head) = analysis_of("fig11.c");
    let h = analysis::parse_head(&loaded.program, &head).unwrap();
    let a = analysis::analyze(&loaded.program, &[h]);
    let rows = rows(&a, &loaded, "fig11");
    let live: Vec<&str> = rows
        .iter()
        .filter(|r| r["diff_live"] == true)
        .map(|r| r["text"].as_str().unwrap())
        .collect();
    assert_eq!(
        live,
        [
            "n = ind1[i];",
            "b[n] = (a[n] + b[n]) * 0.5;",
            "a[n] = a[n] + x;",
            "a[n] = a[n] * a[n + 1];",
            "n = ind2[i];",
            "n = ind2[i + 1];"
        ]
    );
    let pushed: Vec<(String, Vec<String>)> = rows
        .iter()
        .filter(|r| !names(&r["pushed"]).is_empty())
        .map(|r| (r["text"].as_str().unwrap().to_string(), names(&r["pushed"])))
        .collect();
    assert_eq!(
        pushed,
        [
            ("a[n] = a[n] * a[n + 1];".to_string(), vec!["a".to_string()]),
            ("n = ind2[i];".to_string(), vec!["n".to_string()]),
            ("n = ind2[i + 1];".to_string(), vec!["n".to_string()]),
        ]
    );
}

/// The C paper's Fig. 3: flow-sensitive pointer destinations keep `y`
/// passive everywhere (`ptr/address` `ptr/strong` `ptr/merge`
/// `ptr/resolve`).
#[test]
fn c_paper_figure_3_y_never_active() {
    let (loaded, head) = analysis_of("cpaper_fig3.c");
    let h = analysis::parse_head(&loaded.program, &head).unwrap();
    let a = analysis::analyze(&loaded.program, &[h]);
    for r in rows(&a, &loaded, "test") {
        for key in ["active_in", "active_out"] {
            assert!(!names(&r[key]).contains(&"y".to_string()), "y active: {r}");
        }
    }
}

/// Adjoint-out and snapshots are computed for every statement
/// (`adj-out/exit` `adj-out/write` `adj-out/absent` `adj-out/split`
/// `adj-out/snapshot`), and the predicates answer from the same results
/// (`pred/active-expr` `pred/active-call` `pred/live-for-diff` `pred/ref`
/// `pred/diff-proc` `pred/diff-formal` `pred/diff` `pred/tbr`
/// `pred/restore` `pred/snapshot`).
#[test]
fn predicates_agree_with_the_report() {
    let (loaded, head) = analysis_of("call_by_value.c");
    let h = analysis::parse_head(&loaded.program, &head).unwrap();
    let a = analysis::analyze(&loaded.program, std::slice::from_ref(&h));
    let program = &loaded.program;
    let f = program.proc_by_name("F").unwrap();
    assert!(a.is_diff_proc(f) && a.is_diff_proc(h.proc));
    assert!(a.is_diff_formal_arg(f, 0));
    let facts = &a.facts[&h.proc];
    let r = &a.results[&h.proc];
    let mut saw_call = false;
    for (i, p) in facts.points.iter().enumerate() {
        let s = p.kind.stmt();
        assert_eq!(a.tbr_before(h.proc, s.id), r.tbr_in[i]);
        assert_eq!(a.restore(h.proc, s.id), r.restore[i]);
        if let aioli::il::StmtKind::Call { args, .. } = &s.kind {
            saw_call = true;
            assert!(a.is_active_call(h.proc, s.id));
            assert!(a.is_ref(&args[0]) && a.is_diff(h.proc, &args[0]));
            assert!(a.is_active_expr(h.proc, s.id, &args[0]));
            let snp = a.snapshot(h.proc, s.id);
            assert!(snp.iter().all(|z| p.effect.writes.contains(z)));
            // Adjoint-out after the last statement is empty.
        }
        let _ = a.is_live_for_diff(h.proc, s.id);
    }
    assert!(saw_call);
    // In recursion.c, `b` gets the active `a * a` at the recursive call;
    // the integer `n` never carries a derivative.
    let (loaded, head) = analysis_of("recursion.c");
    let h = analysis::parse_head(&loaded.program, &head).unwrap();
    let rec = analysis::analyze(&loaded.program, std::slice::from_ref(&h));
    assert!(rec.is_diff_formal_arg(h.proc, 0) && rec.is_diff_formal_arg(h.proc, 1));
    assert!(!rec.is_diff_formal_arg(h.proc, 2));
    let last = facts.points.len() - 1;
    assert!(r.adj_out_out[last].is_empty() || facts.succs.iter().any(|s| s.len() > 1));
}

/// Warnings users need (`warn/independent-unused` `warn/dependent-constant`
/// `inout/uninit`
/// `warn/uninit` `warn/alias`), located in the source.
#[test]
fn warnings_fixture() {
    let path = common::fixture_dir("analysis").join("warnings.c");
    let text = report(&path);
    for needle in [
        "independent 'b'",
        "dependent 'z'",
        "'t' may be used uninitialized",
        "may designate the same memory",
        "may point to global",
    ] {
        assert!(
            text.contains(needle),
            "missing warning '{needle}' in:\n{text}"
        );
    }
}

/// `warn/alias` compares what two arguments designate, not only which
/// variable: two members of one struct (`kick(&p->x, &p->v)`) do not
/// overlap; one array at two offsets still may.
#[test]
fn two_members_of_one_struct_are_not_an_overlap() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kick.c");
    std::fs::write(
        &path,
        "typedef struct {\n    double x, v;\n} P;\n\
static void kick(double *x, double *v)\n{\n    *v += 0.5 * *x;\n    *x += *v;\n}\n\
static void shift(const double *a, double *b, int n)\n{\n    for (int i = 0; i < n; i++)\n        b[i] = a[i] * a[i];\n}\n\
void f(P *p, double *y, int n)\n{\n    kick(&p->x, &p->v);\n    shift(y, y + 1, n - 1);\n}\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_aioli"))
        .args(["analyze", path.to_str().unwrap(), "--head", "f(p y)/(p y)"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("of 'kick' may designate"), "{stderr}");
    assert!(stderr.contains("of 'shift' may designate"), "{stderr}");
}

/// `warn/uninit` leaves out the array members of a local struct, as it
/// does local arrays: the loop filling one may run no iteration as far as
/// the analysis knows (`a.v` was warned about at `return a`).
#[test]
fn struct_array_members_filled_by_a_loop_are_not_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("load.c");
    std::fs::write(
        &path,
        "typedef struct {\n    double v[3];\n} V3;\n\
         static V3 load3(const double *p)\n{\n    V3 a;\n    \
         for (int k = 0; k < 3; k++)\n        a.v[k] = p[k];\n    return a;\n}\n\
         double f(const double *x)\n{\n    V3 a = load3(x);\n    \
         double t;\n    return a.v[0] * a.v[1] + a.v[2] + t;\n}\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_aioli"))
        .args(["analyze", path.to_str().unwrap(), "--head", "f(f)/(x)"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("'a.v'"), "{stderr}");
    // A scalar read before any write still is.
    assert!(stderr.contains("'t' may be used uninitialized"), "{stderr}");
}

/// `warn/uninit` does not warn about the adjoint's own `aioli_result`
/// (`adjoint/structure-jump`): a helper returning a pointer from a switch
/// case and after it sets it on every path, which only the flags tell.
#[test]
fn a_pointer_result_returned_from_a_switch_is_not_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sw.c");
    std::fs::write(
        &path,
        "static double *sw(double *u, int i)\n{\n    switch (i) {\n    case 0:\n        \
         return &u[0];\n    default:\n        break;\n    }\n    return &u[1];\n}\n\
         void f(double *u, int i, double *y)\n{\n    *y = *sw(u, i) * u[0];\n}\n",
    )
    .unwrap();
    for split in [false, true] {
        let mut args = vec![
            "adjoint",
            path.to_str().unwrap(),
            "--head",
            "f(y)/(u)",
            "--out",
            dir.path().to_str().unwrap(),
        ];
        if split {
            args.push("--split");
        }
        let out = Command::new(env!("CARGO_BIN_EXE_aioli"))
            .args(&args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        assert!(!stderr.contains("warning"), "{stderr}");
    }
}

/// `report/json`: `aioli analyze --json` prints CONTRACT §7's object; a bad
/// head is an error with status 1.
#[test]
fn analyze_json_through_the_command_line() {
    let path = common::fixture_dir("analysis").join("fig8_globals.c");
    let out = Command::new(env!("CARGO_BIN_EXE_aioli"))
        .args([
            "analyze",
            path.to_str().unwrap(),
            "--head",
            &head_of(&path),
            "--json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let stmt = &json["procedures"][0]["statements"][0];
    for key in [
        "line",
        "text",
        "varied_in",
        "useful_out",
        "active_in",
        "active_out",
        "diff_live",
        "tbr_in",
        "pushed",
    ] {
        assert!(!stmt[key].is_null(), "missing {key} in {stmt}");
    }
    // Names as in the source (CONTRACT §7): the pointer `d` itself, TBR
    // after `*e = a / x;`, is `d`, which the text form writes `d (pointer)`.
    let fig8 = common::fixture_dir("analysis").join("fig8.c");
    let out = Command::new(env!("CARGO_BIN_EXE_aioli"))
        .args([
            "analyze",
            fig8.to_str().unwrap(),
            "--head",
            &head_of(&fig8),
            "--json",
        ])
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let statements = json["procedures"][0]["statements"].as_array().unwrap();
    for stmt in statements {
        for (key, value) in stmt.as_object().unwrap() {
            for name in value.as_array().into_iter().flatten() {
                let name = name.as_str().unwrap();
                assert!(!name.contains(' '), "{key}: {name:?} in {stmt}");
            }
        }
    }
    let quotient = statements
        .iter()
        .find(|s| s["text"] == "*e = a / x;")
        .unwrap();
    assert_eq!(
        quotient["tbr_in"],
        serde_json::json!(["a", "d"]),
        "{quotient}"
    );
    let bad = Command::new(env!("CARGO_BIN_EXE_aioli"))
        .args(["analyze", path.to_str().unwrap(), "--head", "nosuch(y)/(x)"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("error: head"));
}

/// Summaries and in-out on `globals.c`'s callee: `accumulate(v)` reads and
/// overwrites `g_energy` and `g_count`, reads `g_scale`
/// (`inout/upward-read` `inout/may-write` `inout/must-write`), and its
/// dependency summaries relate `g_energy` to `g_scale`, `v` and itself
/// (`dep/entry` `dep/compose` `dep/untouched` `dep/merge` `dep/summary`
/// `diff-dep/equations`); Cst and Dead hold per point (`inout/cst`
/// `inout/dead`).
#[test]
fn summaries_and_inout() {
    let (loaded, head) = analysis_of("globals.c");
    let h = analysis::parse_head(&loaded.program, &head).unwrap();
    let a = analysis::analyze(&loaded.program, &[h]);
    let program = &loaded.program;
    let acc = program.proc_by_name("accumulate").unwrap();
    let zone = |name: &str| {
        (0..a.locs.zone_count() as u32)
            .find(|&z| a.locs.zone(z).name == name && a.locs.is_global(z))
            .unwrap()
    };
    let (energy, scale, count) = (zone("g_energy"), zone("g_scale"), zone("g_count"));
    let v = a
        .locs
        .object_zones(a.locs.of_sym(program.proc(acc).params[0]))
        .next()
        .unwrap();
    let s = &a.summaries[&acc];
    for z in [energy, scale, count, v] {
        assert!(s.reads.contains(&z), "read {}", a.locs.zone(z).name);
    }
    assert!(s.writes.contains(&energy) && s.writes.contains(&count));
    assert!(!s.writes.contains(&scale) && !s.writes.contains(&v));
    assert!(s.kills.contains(&energy) && s.kills.contains(&count));
    for u in [energy, scale, v] {
        assert!(s.dep.contains(&(u, energy)) && s.diff_dep.contains(&(u, energy)));
    }
    assert!(s.dep.contains(&(count, count)) && !s.diff_dep.contains(&(count, energy)));
    let r = &a.results[&acc];
    // Before the first statement, g_scale stays constant to the exit and
    // g_count's value is read later; after the last, everything is dead.
    assert!(r.cst[0].contains(&scale) && !r.cst[0].contains(&energy));
    assert!(!r.dead[0].contains(&count));
    let (both, read_only, written_only) = a.inout_classes(acc);
    assert!(both.contains(&energy) && read_only.contains(&scale) && written_only.is_empty());
}

/// Control diff-liveness on `control.c`: an `if` around an active
/// statement is diff-live and its test operands with it; an `if` doing
/// only integer work is not (`diff-live/control` `diff-live/control-use`).
/// An active call's derivative reads what the call reads
/// (`deriv-use/call`).
#[test]
fn control_and_call_diff_liveness() {
    let (loaded, head) = analysis_of("control.c");
    let h = analysis::parse_head(&loaded.program, &head).unwrap();
    let a = analysis::analyze(&loaded.program, std::slice::from_ref(&h));
    let tests: Vec<(String, bool)> = rows(&a, &loaded, a.program.proc(h.proc).name.as_str())
        .iter()
        .filter(|r| r["text"].as_str().unwrap().starts_with("if"))
        .map(|r| {
            (
                r["text"].as_str().unwrap().to_string(),
                r["diff_live"] == true,
            )
        })
        .collect();
    assert!(tests.iter().any(|t| t.1), "{tests:?}");
    assert!(tests.iter().any(|t| !t.1), "{tests:?}");
    let (loaded, head) = analysis_of("call_by_value.c");
    let h = analysis::parse_head(&loaded.program, &head).unwrap();
    let a = analysis::analyze(&loaded.program, std::slice::from_ref(&h));
    let f = &a.facts[&h.proc];
    let call = f.calls.keys().copied().next().unwrap();
    assert!(!a.results[&h.proc].deriv_use[call].is_empty());
}
