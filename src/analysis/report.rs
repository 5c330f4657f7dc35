//! `aioli analyze`: the analyses' results per statement, as readable text
//! (`report/text`) or JSON (`report/json`, CONTRACT §7).

use super::Analysis;
use super::blocks::Set;
use super::facts::PointKind;
use crate::front::source::SourceMap;
use crate::il::{LoopHeader, StmtKind};
use serde_json::{Value, json};

/// One statement's row.
struct Row {
    line: usize,
    text: String,
    varied_in: Vec<String>,
    useful_out: Vec<String>,
    active_in: Vec<String>,
    active_out: Vec<String>,
    diff_live: bool,
    tbr_in: Vec<String>,
    pushed: Vec<String>,
}

/// CONTRACT §7 names variables as in the source: a pointer variable is
/// named as written, as its target is (the text form's `q (pointer)`
/// tells them apart).
fn source_names(names: Vec<String>) -> Vec<String> {
    let mut v: Vec<String> = names
        .into_iter()
        .map(|n| match n.strip_suffix(" (pointer)") {
            Some(name) => name.to_string(),
            None => n,
        })
        .collect();
    v.sort();
    v.dedup();
    v
}

impl Analysis<'_> {
    /// Zone names as the user wrote them (`a`, `p.x`), sorted, without
    /// repetition.
    /// Zone names; heap objects are named by the line of their allocation
    /// (`alloc@12`).
    fn names_in(&self, s: &Set, sources: &SourceMap) -> Vec<String> {
        let mut v: Vec<String> = s
            .iter()
            .filter(|z| !self.locs.zone(**z).name.starts_with("aioli_tmp"))
            .filter(|z| self.locs.is_user_visible(**z))
            .map(|&z| {
                let info = self.locs.zone(z);
                if let super::locs::ObjKind::Heap { span, .. } = &self.locs.object(info.obj).kind {
                    let line = sources.file(span.file).line_col(span.lo as usize).0;
                    let field = info.name.find('.').map(|i| &info.name[i..]).unwrap_or("");
                    format!("alloc@{line}{field}")
                } else if info.pointer && self.locs.has_target(z) {
                    format!("{} (pointer)", info.name)
                } else {
                    info.name.clone()
                }
            })
            .collect();
        v.sort();
        v.dedup();
        v
    }

    fn rows(&self, sources: &SourceMap, proc: crate::il::ProcId) -> Vec<Row> {
        let f = &self.facts[&proc];
        let r = &self.results[&proc];
        let mut order: Vec<usize> = (0..f.points.len()).collect();
        let line_of = |i: usize| {
            let s = f.points[i].kind.stmt();
            let span = report_span(f.points[i].kind);
            sources.file(s.span.file).line_col(span.lo as usize).0
        };
        // Source lines in order; on one line, execution order.
        order.sort_by_key(|&i| {
            let s = f.points[i].kind.stmt();
            (s.span.file != self.program.main_file, line_of(i), i)
        });
        let mut rows = Vec::new();
        for i in order {
            let pt = &f.points[i];
            let s = pt.kind.stmt();
            if pt.effect.writes.is_empty() && pt.effect.reads.is_empty() {
                continue; // a bare declaration, `return;`: nothing to report
            }
            let file = sources.file(s.span.file);
            let (line, _) = file.line_col(report_span(pt.kind).lo as usize);
            let text = statement_text(sources, pt.kind);
            let real = |set: &Set| -> Set {
                set.iter()
                    .copied()
                    .filter(|z| self.locs.zone(*z).real)
                    .collect()
            };
            // `activity/active`: Active = Varied ∩ Useful
            let active_in: Set = r.varied_in[i]
                .intersection(&r.useful_in[i])
                .copied()
                .collect();
            let active_out: Set = r.varied_out[i]
                .intersection(&r.useful_out[i])
                .copied()
                .collect();
            rows.push(Row {
                line,
                text,
                varied_in: self.names_in(&real(&r.varied_in[i]), sources),
                useful_out: self.names_in(&real(&r.useful_out[i]), sources),
                active_in: self.names_in(&active_in, sources),
                active_out: self.names_in(&active_out, sources),
                diff_live: r.diff_live[i],
                tbr_in: self.names_in(&r.tbr_in[i], sources),
                // `report/pushed`: what store-all saves before the statement
                pushed: self.names_in(&r.restore[i], sources),
            });
        }
        rows
    }

    /// `report/json`
    pub fn report_json(&self, sources: &SourceMap) -> String {
        let procs: Vec<Value> = self
            .order
            .iter()
            .map(|&p| {
                let statements: Vec<Value> = self
                    .rows(sources, p)
                    .into_iter()
                    .map(|r| {
                        json!({
                            "line": r.line,
                            "text": r.text,
                            "varied_in": source_names(r.varied_in),
                            "useful_out": source_names(r.useful_out),
                            "active_in": source_names(r.active_in),
                            "active_out": source_names(r.active_out),
                            "diff_live": r.diff_live,
                            "tbr_in": source_names(r.tbr_in),
                            "pushed": source_names(r.pushed),
                        })
                    })
                    .collect();
                json!({"name": self.program.proc(p).name, "statements": statements})
            })
            .collect();
        let mut s = serde_json::to_string_pretty(&json!({ "procedures": procs }))
            .unwrap_or_else(|_| "{}".to_string());
        s.push('\n');
        s
    }

    /// `report/text`
    pub fn report_text(&self, sources: &SourceMap) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        let list = |v: &[String]| {
            if v.is_empty() {
                "-".to_string()
            } else {
                v.join(" ")
            }
        };
        for &p in &self.order {
            let _ = writeln!(out, "procedure {}", self.program.proc(p).name);
            let classes = self.inout_classes(p);
            for (label, zones) in [
                ("read-then-written", &classes.0),
                ("read-only", &classes.1),
                ("written-only", &classes.2),
            ] {
                if !zones.is_empty() {
                    let _ = writeln!(
                        out,
                        "  in-out {label}: {}",
                        self.names_in(zones, sources).join(" ")
                    );
                }
            }
            for r in self.rows(sources, p) {
                let _ = writeln!(
                    out,
                    "  {:>4}  {}{}",
                    r.line,
                    r.text,
                    if r.diff_live {
                        ""
                    } else {
                        "    [not diff-live]"
                    }
                );
                let _ = writeln!(
                    out,
                    "        varied-in: {} | useful-out: {} | active-in: {} | active-out: {}",
                    list(&r.varied_in),
                    list(&r.useful_out),
                    list(&r.active_in),
                    list(&r.active_out)
                );
                if !r.tbr_in.is_empty() || !r.pushed.is_empty() {
                    let _ = writeln!(
                        out,
                        "        tbr-in: {} | pushed: {}",
                        list(&r.tbr_in),
                        list(&r.pushed)
                    );
                }
            }
        }
        out
    }
}

/// Where a point is reported: a `do … while` loop's test at its
/// `while (…)`, after the body; anything else at its statement.
fn report_span(kind: PointKind<'_>) -> crate::front::source::Span {
    match (kind, &kind.stmt().kind) {
        (
            PointKind::Test(_),
            StmtKind::Loop {
                header: LoopHeader::DoWhile { cond },
                ..
            },
        ) => cond.span,
        _ => kind.stmt().span,
    }
}

/// The statement as written: its source text on one line; a control
/// statement by its header.
fn statement_text(sources: &SourceMap, kind: PointKind<'_>) -> String {
    let s = kind.stmt();
    let raw = sources.snippet(s.span);
    let one_line = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
    match kind {
        PointKind::Test(_) => {
            // The header: up to the body's opening brace or the end of the
            // line.
            let head = match &s.kind {
                StmtKind::Loop {
                    header: LoopHeader::DoWhile { cond },
                    ..
                } => format!("while ({})", one_line(sources.snippet(cond.span))),
                _ => {
                    let cut = raw.find('{').unwrap_or(raw.len());
                    let first = raw[..cut].lines().next().unwrap_or("");
                    if cut < raw.len() && raw[..cut].lines().count() > 1 {
                        one_line(&raw[..cut])
                    } else {
                        one_line(first)
                    }
                }
            };
            head.trim_end().to_string()
        }
        _ => {
            let t = one_line(raw);
            let simple = !matches!(s.kind, StmtKind::Return(None));
            if t.is_empty() {
                "(implicit)".to_string()
            } else if simple && !t.ends_with(';') && !t.ends_with('}') {
                format!("{t};")
            } else {
                t
            }
        }
    }
}
