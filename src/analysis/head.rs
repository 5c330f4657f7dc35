//! The `--head 'f(DEPS)/(INDEPS)'` argument (CONTRACT §1): the head
//! procedure, its dependent outputs and independent inputs.

use crate::il::{ProcId, Program, QualType, SymId, SymKind, Type};

/// An input or output of a head.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HeadVar {
    /// A formal parameter (by value: its value; a pointer: what it points
    /// to).
    Param(SymId),
    Global(SymId),
    /// The function's return value.
    Result,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Head {
    pub proc: ProcId,
    pub dependents: Vec<HeadVar>,
    pub independents: Vec<HeadVar>,
}

/// Parses a head against the program. Errors are messages for the user.
pub fn parse_head(program: &Program, text: &str) -> Result<Head, String> {
    let text = text.trim();
    let (name, rest) = match text.find('(') {
        Some(i) => (text[..i].trim(), Some(&text[i..])),
        None => (text, None),
    };
    if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') || name.is_empty() {
        return Err(format!(
            "head '{text}': expected the form 'f(outputs)/(inputs)' or 'f', f a function name"
        ));
    }
    let proc = program
        .proc_by_name(name)
        .filter(|p| program.proc(*p).body.is_some())
        .ok_or_else(|| format!("head '{text}': no function '{name}' is defined in this file"))?;
    let p = program.proc(proc);
    // `input`: the name is in the list of independents.
    let lookup = |n: &str, input: bool| -> Result<HeadVar, String> {
        // A parameter named like its function (`double f(double f)`): an
        // input is the parameter (a result is never one); an output is the
        // parameter when the function returns nothing or the parameter
        // cannot be one (by value), and otherwise ambiguous.
        let param = p
            .params
            .iter()
            .find(|s| program.sym(**s).name == n)
            .copied();
        if n == p.name
            && let Some(s) = param
        {
            let returns = !matches!(program.resolve(&p.ret.ty), Type::Void);
            let by_value = !matches!(
                program.resolve(&program.sym(s).ty.ty),
                Type::Pointer(_) | Type::Array { .. }
            );
            return match (input, returns, by_value) {
                (true, _, _) | (false, false, _) => Ok(HeadVar::Param(s)),
                (false, true, true) => Ok(HeadVar::Result),
                (false, true, false) => Err(format!(
                    "head '{text}': '{n}' names both the result of '{n}' and its parameter '{n}'; rename the parameter"
                )),
            };
        }
        if n == p.name {
            if matches!(program.resolve(&p.ret.ty), Type::Void) {
                return Err(format!(
                    "head '{text}': '{n}' returns void, so it has no result to differentiate"
                ));
            }
            return Ok(HeadVar::Result);
        }
        if let Some(&s) = p.params.iter().find(|s| program.sym(**s).name == n) {
            return Ok(HeadVar::Param(s));
        }
        if let Some(s) = program.global_by_name(n) {
            return Ok(HeadVar::Global(s));
        }
        Err(format!(
            "head '{text}': '{n}' is neither a parameter of '{}', nor a global variable, nor '{}' itself",
            p.name, p.name
        ))
    };
    let Some(rest) = rest else {
        // `--head f`: every real-typed output and input.
        let mut deps = Vec::new();
        let mut indeps = Vec::new();
        for &s in &p.params {
            let ty = &program.sym(s).ty.ty;
            if !program.contains_real(ty) {
                continue;
            }
            indeps.push(HeadVar::Param(s));
            // `const double A[][2]` points to rows of const elements.
            let writable = match program.resolve(ty) {
                Type::Pointer(t) => !is_read_only(program, t),
                Type::Array { elem, .. } => !is_read_only(program, elem),
                _ => false,
            };
            if writable {
                deps.push(HeadVar::Param(s));
            }
        }
        let (read, written) = globals_used(program, proc);
        indeps.extend(read.into_iter().map(HeadVar::Global));
        deps.extend(written.into_iter().map(HeadVar::Global));
        if program.is_real(&p.ret.ty) || program.contains_real(&p.ret.ty) {
            deps.push(HeadVar::Result);
        }
        return Ok(Head {
            proc,
            dependents: deps,
            independents: indeps,
        });
    };
    let groups = parse_groups(rest)
        .ok_or_else(|| format!("head '{text}': expected the form 'f(outputs)/(inputs)'"))?;
    let mut lists = Vec::new();
    let count = groups.len();
    for (i, g) in groups.into_iter().enumerate() {
        let mut v = Vec::new();
        for n in g.split(|c: char| c.is_whitespace() || c == ',') {
            if n.is_empty() {
                continue;
            }
            let hv = lookup(n, i + 1 == count)?;
            // Only what holds reals has a derivative: an `int` named as an
            // input or output is a bad head (CONTRACT §1).
            let ty = match hv {
                HeadVar::Param(s) | HeadVar::Global(s) => &program.sym(s).ty.ty,
                HeadVar::Result => &p.ret.ty,
            };
            if !program.contains_real(ty) {
                let what = match hv {
                    HeadVar::Result => format!("the result of '{n}'"),
                    _ => format!("'{n}'"),
                };
                return Err(format!(
                    "head '{text}': {what} holds no real value, so it has no derivative; name only variables of type float or double, or pointers, arrays or structs holding them"
                ));
            }
            if !v.contains(&hv) {
                v.push(hv);
            }
        }
        lists.push(v);
    }
    let independents = lists.pop().unwrap_or_default();
    let dependents = lists.pop().unwrap_or_default();
    Ok(Head {
        proc,
        dependents,
        independents,
    })
}

/// The global variables holding reals that `proc` (or a procedure it
/// calls) may read, and those it may write, each in declaration order.
/// First read off the code: a global named anywhere but as the variable an
/// assignment stores into is read; one stored into (`g = …`, `g[i] = …`,
/// `g.f = …`, a call's result) is written; one whose address is taken
/// may be both. That costs no analysis, so many bare heads in a large file
/// stay cheap, and it is exact unless some global is both read and
/// written; then the in-out summary decides. `const` globals are left
/// out: nothing varies them.
fn globals_used(program: &Program, proc: ProcId) -> (Vec<SymId>, Vec<SymId>) {
    use crate::il::{Expr, ExprKind, StmtKind};
    let wanted = |s: SymId| {
        let sym = program.sym(s);
        sym.kind == SymKind::Global
            && program.contains_real(&sym.ty.ty)
            && !is_read_only(program, &sym.ty)
    };
    if !program
        .symbols
        .iter()
        .enumerate()
        .any(|(i, _)| wanted(SymId(i as u32)))
    {
        return (Vec::new(), Vec::new());
    }
    // The procedures `proc` reaches, found by walking only their bodies
    // (not the whole program's call graph: there is one head per root).
    let mut reached = vec![proc];
    let mut seen = vec![false; program.procs.len()];
    seen[proc.index()] = true;
    let mut i = 0;
    while i < reached.len() {
        if let Some(body) = &program.procs[reached[i].index()].body {
            crate::il::visit_stmts(&body.stmts, &mut |s| {
                if let StmtKind::Call { callee, .. } = &s.kind
                    && !seen[callee.index()]
                {
                    seen[callee.index()] = true;
                    reached.push(*callee);
                }
            });
        }
        i += 1;
    }
    let (mut read, mut written) = (Vec::new(), Vec::new());
    // Reads of `e`, a value.
    fn reads(e: &Expr, out: &mut Vec<SymId>, addressed: &mut Vec<SymId>) {
        crate::il::visit_expr(e, &mut |x| match &x.kind {
            ExprKind::Var(v) => out.push(*v),
            ExprKind::AddrOf(r) => {
                if let Some(v) = root(r) {
                    addressed.push(v);
                }
            }
            _ => {}
        });
    }
    // What a store into reference `r` reads (its indices) and its variable.
    fn store(r: &Expr, out: &mut Vec<SymId>, addressed: &mut Vec<SymId>) -> Option<SymId> {
        match &r.kind {
            ExprKind::Var(v) => Some(*v),
            ExprKind::Index { base, index } => {
                reads(index, out, addressed);
                store(base, out, addressed)
            }
            ExprKind::Field { base, .. } => store(base, out, addressed),
            _ => {
                reads(r, out, addressed);
                None
            }
        }
    }
    fn root(r: &Expr) -> Option<SymId> {
        match &r.kind {
            ExprKind::Var(v) => Some(*v),
            ExprKind::Index { base, .. } | ExprKind::Field { base, .. } => root(base),
            _ => None,
        }
    }
    let mut addressed = Vec::new();
    for p in reached {
        let Some(body) = &program.proc(p).body else {
            continue;
        };
        crate::il::visit_stmts(&body.stmts, &mut |st| {
            let target = crate::il::stored_ref(st);
            if let Some(t) = target
                && let Some(v) = store(t, &mut read, &mut addressed)
            {
                written.push(v);
            }
            for e in crate::transform::names::stmt_exprs(st) {
                if target.is_some_and(|t| std::ptr::eq(t, e)) {
                    continue;
                }
                reads(e, &mut read, &mut addressed);
            }
        });
    }
    read.extend(addressed.iter().copied());
    written.extend(addressed);
    let keep = |mut v: Vec<SymId>| {
        v.retain(|&s| wanted(s));
        v.sort_unstable();
        v.dedup();
        v
    };
    let (read, written) = (keep(read), keep(written));
    if read.iter().any(|s| written.contains(s)) {
        // A global both read and written may be written before it is read
        // (then it is no input): only the in-out summary tells.
        return precise_globals_used(program, proc);
    }
    (read, written)
}

/// [`globals_used`] from the summary of the in-out analysis
/// (`call/summary`, `inout/upward-read`, `inout/may-write`): a global reached
/// through a callee or a pointer counts, and one only overwritten before
/// any read is no input.
fn precise_globals_used(program: &Program, proc: ProcId) -> (Vec<SymId>, Vec<SymId>) {
    // No dependents or independents: only the bottom-up summaries are read.
    let probe = Head {
        proc,
        dependents: Vec::new(),
        independents: Vec::new(),
    };
    let a = super::analyze_for(program, &[probe], super::Mode::Tangent);
    let Some(summary) = a.summaries.get(&proc) else {
        return (Vec::new(), Vec::new());
    };
    let globals = |zones: &[super::locs::Zone]| -> Vec<SymId> {
        let mut out: Vec<SymId> = zones
            .iter()
            .filter(|&&z| a.locs.zone(z).real)
            .filter_map(|&z| match a.locs.object(a.locs.zone(z).obj).kind {
                super::locs::ObjKind::Var(s) => Some(s),
                _ => None,
            })
            .filter(|&s| {
                let sym = program.sym(s);
                sym.kind == SymKind::Global && !is_read_only(program, &sym.ty)
            })
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    };
    (globals(&summary.reads), globals(&summary.writes))
}

/// `const double c` or `const double c[4]` (the qualifier on the
/// elements, as C writes it).
fn is_read_only(program: &Program, ty: &QualType) -> bool {
    ty.is_const
        || match program.resolve(&ty.ty) {
            Type::Array { elem, .. } => is_read_only(program, elem),
            _ => false,
        }
}

/// `(a b)/(c)` → `["a b", "c"]`.
fn parse_groups(s: &str) -> Option<Vec<&str>> {
    let s = s.trim();
    let (first, rest) = s.strip_prefix('(')?.split_once(')')?;
    let rest = rest.trim().strip_prefix('/')?.trim();
    let second = rest.strip_prefix('(')?.strip_suffix(')')?;
    if second.contains('(') || second.contains(')') || first.contains('(') {
        return None;
    }
    Some(vec![first, second])
}
