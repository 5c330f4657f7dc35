//! Spec coverage: every ID defined in `spec/` is implemented (cited in
//! `src/`, `rules/` or `grammar/`), and every ID cited there is defined.
//! The IDs no test cites are a snapshot, so gaps show in review.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

/// An ID is `family/name` in backticks; a definition is a markdown heading
/// that starts with one.
fn ids_in(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find('`') {
        rest = &rest[start + 1..];
        let Some(end) = rest.find('`') else { break };
        let candidate = &rest[..end];
        if is_id(candidate) {
            out.push(candidate.to_string());
        }
        rest = &rest[end + 1..];
    }
    out
}

fn is_id(s: &str) -> bool {
    let Some((family, name)) = s.split_once('/') else {
        return false;
    };
    let ok = |p: &str| {
        !p.is_empty()
            && p.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    };
    ok(family) && ok(name) && !name.contains('/')
}

fn files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            files(&p, out);
        } else {
            out.push(p);
        }
    }
}

fn read_all(dirs: &[&str], ext: &[&str]) -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut paths = Vec::new();
    for d in dirs {
        files(&root.join(d), &mut paths);
    }
    paths
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| ext.iter().any(|x| e == *x)))
        .filter_map(|p| {
            let text = fs::read_to_string(&p).ok()?;
            Some((p.strip_prefix(root).unwrap().display().to_string(), text))
        })
        .collect()
}

fn defined() -> BTreeSet<String> {
    let mut ids = BTreeSet::new();
    for (_, text) in read_all(&["spec"], &["md"]) {
        for line in text.lines() {
            if line.starts_with('#')
                && let Some(id) = ids_in(line).into_iter().next()
            {
                ids.insert(id);
            }
        }
    }
    ids
}

fn families(ids: &BTreeSet<String>) -> BTreeSet<String> {
    ids.iter()
        .map(|i| i.split('/').next().unwrap().to_string())
        .collect()
}

/// The IDs a rule file defines: `rule ID` and `derivative ID` lines.
fn rule_ids(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| {
            let l = l.trim_start();
            let rest = l
                .strip_prefix("rule ")
                .or_else(|| l.strip_prefix("derivative "))?;
            let id = rest.split_whitespace().next()?;
            is_id(id).then(|| id.to_string())
        })
        .collect()
}

/// The families of the differentiation modes: their IDs are rules (or the
/// Rust host of the rules) and may be cited as string literals.
const MODE_FAMILIES: &[&str] = &["tangent/", "deriv/", "adjoint/"];

/// Tangent, derivative and adjoint IDs written as Rust string literals
/// (`"tangent/d-mul"`), as the coverage table of `tests/tangent.rs` cites
/// them (other families' tests write made-up IDs in literals on purpose).
fn quoted_ids(text: &str) -> Vec<String> {
    text.split('"')
        .skip(1)
        .step_by(2)
        .filter(|c| is_id(c) && MODE_FAMILIES.iter().any(|f| c.starts_with(f)))
        .map(str::to_string)
        .collect()
}

fn cited(dirs: &[&str]) -> BTreeSet<String> {
    read_all(dirs, &["rs", "rules", "lalrpop"])
        .into_iter()
        .flat_map(|(path, t)| {
            let mut ids = ids_in(&t);
            if path.ends_with(".rs") {
                ids.extend(quoted_ids(&t));
            }
            if path.ends_with(".rules") {
                ids.extend(rule_ids(&t));
            }
            ids
        })
        .collect()
}

/// Issue 4: every rule of `rules/` is specified, and every tangent and
/// derivative ID of `spec/tangent.md` names a rule (or the Rust that
/// implements it) and is cited by a test.
#[test]
fn every_rule_is_specified_implemented_and_tested() {
    let defined = defined();
    let mut rules = BTreeSet::new();
    for (_, text) in read_all(&["rules"], &["rules"]) {
        rules.extend(rule_ids(&text));
    }
    assert!(
        rules.len() > 100,
        "too few rules under rules/: {}",
        rules.len()
    );
    let unspecified: Vec<_> = rules.iter().filter(|r| !defined.contains(*r)).collect();
    assert!(
        unspecified.is_empty(),
        "rules without a spec/ entry: {unspecified:?}"
    );
    let implemented = cited(&["src", "rules"]);
    let tested = cited(&["tests"]);
    let missing: Vec<_> = defined
        .iter()
        .filter(|id| id.starts_with("tangent/") || id.starts_with("deriv/"))
        .filter(|id| !implemented.contains(*id) || !tested.contains(*id))
        .collect();
    assert!(
        missing.is_empty(),
        "tangent IDs not implemented by a rule and cited by a test: {missing:?}"
    );
}

#[test]
fn every_cited_id_is_specified() {
    let defined = defined();
    let families = families(&defined);
    let missing: Vec<_> = cited(&["src", "rules", "grammar", "tests"])
        .into_iter()
        .filter(|id| families.contains(id.split('/').next().unwrap()))
        .filter(|id| !defined.contains(id))
        .collect();
    assert!(missing.is_empty(), "cited but not in spec/: {missing:?}");
}

#[test]
fn every_specified_id_is_implemented() {
    let implemented = cited(&["src", "rules", "grammar"]);
    let unimplemented: Vec<_> = defined()
        .into_iter()
        .filter(|id| !implemented.contains(id))
        .collect();
    assert!(
        unimplemented.is_empty(),
        "specified in spec/ but cited nowhere in src/, rules/ or grammar/: {unimplemented:?}"
    );
}

#[test]
fn ids_without_a_test() {
    let tested = cited(&["tests"]);
    let untested: Vec<_> = defined()
        .into_iter()
        .filter(|id| !tested.contains(id))
        .collect();
    insta::assert_snapshot!(untested.join("\n"));
}

/// Issue 3: every ID under `spec/analyses/` is cited by at least one clause
/// (in `src/`) and one test, strictly (not a snapshot).
#[test]
fn every_analysis_id_is_implemented_and_tested() {
    let mut analysis_ids = BTreeSet::new();
    for (path, text) in read_all(&["spec"], &["md"]) {
        if !path.contains("analyses") {
            continue;
        }
        for line in text.lines() {
            if line.starts_with('#')
                && let Some(id) = ids_in(line).into_iter().next()
            {
                analysis_ids.insert(id);
            }
        }
    }
    assert!(analysis_ids.len() > 50, "spec/analyses defines too few IDs");
    let implemented = cited(&["src"]);
    let tested = cited(&["tests"]);
    let missing: Vec<_> = analysis_ids
        .iter()
        .filter(|id| !implemented.contains(*id) || !tested.contains(*id))
        .collect();
    assert!(
        missing.is_empty(),
        "analysis IDs not cited by code and a test: {missing:?}"
    );
}

/// Issue 5: the adjoint mode is specified like the tangent one: every rule
/// of `rules/adjoint/` has a section in `spec/adjoint.md`, every adjoint ID
/// of `spec/` is implemented (a rule, or the Rust host citing it), and
/// every adjoint ID cited in `src/`, `rules/` or `tests/` is specified.
/// Which adjoint IDs no test cites yet shows in the snapshot of
/// [`ids_without_a_test`].
#[test]
fn every_adjoint_rule_is_specified_and_every_adjoint_id_implemented() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let spec = fs::read_to_string(root.join("spec/adjoint.md")).expect("spec/adjoint.md");
    let in_adjoint_md: BTreeSet<String> = spec
        .lines()
        .filter(|l| l.starts_with('#'))
        .filter_map(|l| ids_in(l).into_iter().next())
        .filter(|id| id.starts_with("adjoint/"))
        .collect();
    let mut rules = BTreeSet::new();
    for (_, text) in read_all(&["rules/adjoint"], &["rules"]) {
        rules.extend(rule_ids(&text));
    }
    assert!(
        rules.len() > 50,
        "too few rules under rules/adjoint/: {}",
        rules.len()
    );
    let foreign: Vec<_> = rules
        .iter()
        .filter(|r| !r.starts_with("adjoint/"))
        .collect();
    assert!(
        foreign.is_empty(),
        "rules/adjoint/ defines IDs of another family: {foreign:?}"
    );
    let unspecified: Vec<_> = rules
        .iter()
        .filter(|r| !in_adjoint_md.contains(*r))
        .collect();
    assert!(
        unspecified.is_empty(),
        "adjoint rules without a section in spec/adjoint.md: {unspecified:?}"
    );
    let defined = defined();
    let implemented = cited(&["src", "rules"]);
    let unimplemented: Vec<_> = defined
        .iter()
        .filter(|id| id.starts_with("adjoint/"))
        .filter(|id| !implemented.contains(*id))
        .collect();
    assert!(
        unimplemented.is_empty(),
        "adjoint IDs of spec/ neither a rule nor cited by src/: {unimplemented:?}"
    );
    let unknown: Vec<_> = cited(&["src", "rules", "tests"])
        .into_iter()
        .filter(|id| id.starts_with("adjoint/") && !defined.contains(id))
        .collect();
    assert!(
        unknown.is_empty(),
        "adjoint IDs cited but not in spec/: {unknown:?}"
    );
}
