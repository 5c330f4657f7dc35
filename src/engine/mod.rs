//! The rule engine: differentiation as data.
//!
//! Rules (`rules/**/*.rules`, syntax in [`syntax`] and `rules/README.md`)
//! are the inference rules of the specification written as rewrite rules
//! over IL terms. A rule belongs to a *relation* (`instr`, `expr`, `ref`,
//! ...: the named arrows of §5.3), matches a pattern, is guarded by
//! predicates of the analyses, differentiates sub-terms through premises
//! (which apply relations recursively), and yields one or more terms: one
//! for the tangent relations, the pair (forward sweep, backward sweep) for
//! the adjoint ones.
//!
//! The engine knows nothing of the IL: a [`Host`] (the tangent or adjoint
//! transformation) shows its values as terms ([`View`]), decides guards and
//! builds the terms templates describe. Invariants the engine enforces:
//! - at load, every file parses, IDs are unique, and all rules of one
//!   relation yield the same number of terms;
//! - at each application, exactly one rule of the relation applies (the
//!   specification's rules are complete and mutually exclusive); otherwise
//!   an error names the node and the candidate rules;
//! - every built term is told which rule built it (provenance, `--explain`).

pub mod syntax;

use rustc_hash::FxHashMap as HashMap;
use std::fmt;

/// A rule file error: file, line, message.
#[derive(Clone, Debug, PartialEq)]
pub struct RuleError {
    pub file: String,
    pub line: usize,
    pub message: String,
}

impl RuleError {
    pub fn new(file: &str, line: usize, message: impl Into<String>) -> RuleError {
        RuleError {
            file: file.to_string(),
            line,
            message: message.into(),
        }
    }
}

impl fmt::Display for RuleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: error: {}", self.file, self.line, self.message)
    }
}

/// A left-hand side pattern.
#[derive(Clone, Debug, PartialEq)]
pub enum Pat {
    Var(String),
    Wild,
    Atom(String),
    Num(f64),
    Nil,
    Cons(Box<Pat>, Box<Pat>),
    Node(String, Vec<Pat>),
}

/// A right-hand side (or premise input, or guard argument) template.
#[derive(Clone, Debug, PartialEq)]
pub enum Tmpl {
    Var(String),
    Atom(String),
    Num(f64),
    /// A constructor applied to templates; the line is for errors.
    Node(String, Vec<Tmpl>, usize),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Guard {
    pub negated: bool,
    pub name: String,
    pub args: Vec<Tmpl>,
    pub line: usize,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Premise {
    pub input: Tmpl,
    pub relation: String,
    pub outputs: Vec<String>,
    pub line: usize,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Rule {
    pub id: String,
    pub relation: String,
    pub pattern: Pat,
    pub guards: Vec<Guard>,
    pub premises: Vec<Premise>,
    pub yields: Vec<Tmpl>,
    pub file: String,
    pub line: usize,
}

/// The partial derivatives of a function, one template per argument.
#[derive(Clone, Debug, PartialEq)]
pub struct Derivative {
    pub id: String,
    pub function: String,
    pub params: Vec<String>,
    pub partials: Vec<Tmpl>,
    /// Written `guarded` after the partials: a partial may be infinite
    /// where the function is finite, so a term with a zero direction is
    /// zero rather than `inf * 0`.
    pub guarded: bool,
    /// The conditions written after `guarded`, one per partial (or none):
    /// where partial i's holds, the partial is infinite or undefined and
    /// the adjoint takes it as zero (Tapenade's choice at sqrt(0)).
    pub singular: Vec<Tmpl>,
    pub file: String,
    pub line: usize,
}

/// Rules grouped by relation, and derivative entries by function.
#[derive(Clone, Debug, Default)]
pub struct RuleSet {
    pub rules: Vec<Rule>,
    /// Per relation, its rules whose pattern is a constructor, by the
    /// constructor's name, and the others (variables, atoms, lists), which
    /// every node must be tried against; each list in file order.
    by_head: HashMap<String, Candidates>,
    /// Per rule, how many times its premises and yields read each
    /// variable (the last read takes the value instead of copying it).
    uses: Vec<Vec<(String, usize)>>,
    pub derivatives: HashMap<String, Derivative>,
}

#[derive(Clone, Debug, Default)]
struct Candidates {
    by_constructor: HashMap<String, Vec<usize>>,
    any: Vec<usize>,
}

impl RuleSet {
    /// Loads rule files (name, text); later files may add derivative
    /// entries that replace earlier ones (a user's `--rules` file), but a
    /// rule ID may be defined once only.
    pub fn load(files: &[(String, String)]) -> Result<RuleSet, RuleError> {
        let mut set = RuleSet::default();
        let mut ids: HashMap<String, (String, usize)> = HashMap::default();
        let mut arity: HashMap<String, (usize, String)> = HashMap::default();
        for (name, text) in files {
            let (rules, derivs) = syntax::parse_file(name, text)?;
            for r in rules {
                if let Some((f, l)) = ids.get(&r.id) {
                    return Err(RuleError::new(
                        name,
                        r.line,
                        format!("rule {} is already defined at {f}:{l}", r.id),
                    ));
                }
                check_variables(&r)?;
                match arity.get(&r.relation) {
                    Some((n, other)) if *n != r.yields.len() => {
                        return Err(RuleError::new(
                            name,
                            r.line,
                            format!(
                                "rule {} yields {} terms but rule {other} of the same relation '{}' yields {n}",
                                r.id,
                                r.yields.len(),
                                r.relation
                            ),
                        ));
                    }
                    _ => {
                        arity.insert(r.relation.clone(), (r.yields.len(), r.id.clone()));
                    }
                }
                ids.insert(r.id.clone(), (name.clone(), r.line));
                let index = set.rules.len();
                let candidates = set.by_head.entry(r.relation.clone()).or_default();
                match &r.pattern {
                    Pat::Node(head, _) => candidates
                        .by_constructor
                        .entry(head.clone())
                        .or_default()
                        .push(index),
                    _ => candidates.any.push(index),
                }
                let mut uses = Vec::new();
                for p in &r.premises {
                    count_uses(&p.input, &mut uses);
                }
                for y in &r.yields {
                    count_uses(y, &mut uses);
                }
                set.uses
                    .push(uses.into_iter().map(|(n, k)| (n.to_string(), k)).collect());
                set.rules.push(r);
            }
            for d in derivs {
                set.derivatives.insert(d.function.clone(), d);
            }
        }
        for r in &set.rules {
            for p in &r.premises {
                let Some((n, _)) = arity.get(&p.relation) else {
                    return Err(RuleError::new(
                        &r.file,
                        p.line,
                        format!("no rule defines relation '{}'", p.relation),
                    ));
                };
                if *n != p.outputs.len() {
                    return Err(RuleError::new(
                        &r.file,
                        p.line,
                        format!(
                            "relation '{}' yields {n} terms; this premise binds {}",
                            p.relation,
                            p.outputs.len()
                        ),
                    ));
                }
            }
        }
        Ok(set)
    }

    /// The indices of the rules of `relation` whose pattern may match a
    /// node shown as `head` (`None`: not a constructor), in file order.
    fn candidates(&self, relation: &str, head: Option<&str>) -> Vec<usize> {
        let Some(c) = self.by_head.get(relation) else {
            return Vec::new();
        };
        let named: &[usize] = head
            .and_then(|h| c.by_constructor.get(h))
            .map_or(&[], Vec::as_slice);
        let mut out = Vec::with_capacity(named.len() + c.any.len());
        let (mut i, mut j) = (0, 0);
        while i < named.len() || j < c.any.len() {
            if j == c.any.len() || (i < named.len() && named[i] < c.any[j]) {
                out.push(named[i]);
                i += 1;
            } else {
                out.push(c.any[j]);
                j += 1;
            }
        }
        out
    }

    pub fn has_relation(&self, relation: &str) -> bool {
        self.by_head.contains_key(relation)
    }
}

/// Every variable a rule uses is bound first: by the pattern, or by an
/// earlier premise.
fn check_variables(r: &Rule) -> Result<(), RuleError> {
    fn pat_vars(p: &Pat, out: &mut Vec<String>) {
        match p {
            Pat::Var(v) => out.push(v.clone()),
            Pat::Cons(a, b) => {
                pat_vars(a, out);
                pat_vars(b, out);
            }
            Pat::Node(_, kids) => kids.iter().for_each(|k| pat_vars(k, out)),
            _ => {}
        }
    }
    fn check(t: &Tmpl, bound: &[String], r: &Rule, line: usize) -> Result<(), RuleError> {
        match t {
            Tmpl::Var(v) if !bound.contains(v) => Err(RuleError::new(
                &r.file,
                line,
                format!("rule {}: variable ?{v} is used before it is bound", r.id),
            )),
            Tmpl::Node(_, kids, l) => kids.iter().try_for_each(|k| check(k, bound, r, *l)),
            _ => Ok(()),
        }
    }
    let mut bound = Vec::new();
    pat_vars(&r.pattern, &mut bound);
    for g in &r.guards {
        for a in &g.args {
            check(a, &bound, r, g.line)?;
        }
    }
    for p in &r.premises {
        check(&p.input, &bound, r, p.line)?;
        bound.extend(p.outputs.iter().cloned());
    }
    for y in &r.yields {
        check(y, &bound, r, r.line)?;
    }
    Ok(())
}

/// How a host shows one of its values to the matcher.
pub enum View<V> {
    Atom(String),
    Num(f64),
    Nil,
    Cons(V, V),
    Node(&'static str, Vec<V>),
    /// Matches only variables and `_`.
    Opaque,
}

/// An error while applying rules: no rule or several rules apply, or a
/// host could not build what a rule asked for.
#[derive(Clone, Debug, PartialEq)]
pub struct ApplyError {
    pub message: String,
}

impl fmt::Display for ApplyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl ApplyError {
    pub fn new(message: impl Into<String>) -> ApplyError {
        ApplyError {
            message: message.into(),
        }
    }
}

/// The transformation the rules drive.
pub trait Host {
    type Val: Clone;
    fn view(&self, v: &Self::Val) -> View<Self::Val>;
    /// A short description of a value for error messages.
    fn describe(&self, v: &Self::Val) -> String;
    fn atom(&self, name: &str) -> Self::Val;
    fn num(&self, x: f64) -> Self::Val;
    /// Called when a rule of `relation` is about to examine `node`, and
    /// after it is done (the host keeps the current statement, say).
    fn enter(&mut self, relation: &str, node: &Self::Val);
    fn leave(&mut self, relation: &str, node: &Self::Val);
    fn guard(
        &mut self,
        name: &str,
        args: &[Self::Val],
        node: &Self::Val,
    ) -> Result<bool, ApplyError>;
    /// Builds constructor `head` applied to `args`; `node` is the term the
    /// rule matched (constructors copy its position and comments), `rule`
    /// the rule's ID (provenance).
    fn build(
        &mut self,
        head: &str,
        args: Vec<Self::Val>,
        node: &Self::Val,
        rule: &str,
    ) -> Result<Self::Val, ApplyError>;
    /// Told each rule that applies (for coverage traces).
    fn fired(&mut self, _rule: &str) {}
}

/// Bindings of a rule's variables; the names are the rule's own.
type Env<'r, V> = Vec<(&'r str, V)>;

fn lookup<'e, V>(env: &'e Env<'_, V>, name: &str) -> Option<&'e V> {
    env.iter().rev().find(|(n, _)| *n == name).map(|(_, v)| v)
}

/// Matches `p` against `v`, whose view is `view` (computed once per node
/// by the caller: a relation tries each of its rules on the same node).
fn matches_view<'r, H: Host>(
    host: &H,
    p: &'r Pat,
    v: &H::Val,
    view: &View<H::Val>,
    env: &mut Env<'r, H::Val>,
) -> bool {
    match p {
        Pat::Wild => true,
        Pat::Var(name) => {
            env.push((name.as_str(), v.clone()));
            true
        }
        Pat::Atom(a) => matches!(view, View::Atom(b) if a == b),
        Pat::Num(x) => matches!(view, View::Num(y) if x == y),
        Pat::Nil => matches!(view, View::Nil),
        Pat::Cons(h, t) => match view {
            View::Cons(a, b) => matches(host, h, a, env) && matches(host, t, b, env),
            _ => false,
        },
        Pat::Node(head, kids) => match view {
            View::Node(name, vals) => {
                name == head
                    && vals.len() == kids.len()
                    && kids.iter().zip(vals).all(|(k, x)| matches(host, k, x, env))
            }
            _ => false,
        },
    }
}

fn matches<'r, H: Host>(host: &H, p: &'r Pat, v: &H::Val, env: &mut Env<'r, H::Val>) -> bool {
    match p {
        Pat::Wild => true,
        Pat::Var(name) => {
            env.push((name.as_str(), v.clone()));
            true
        }
        _ => matches_view(host, p, v, &host.view(v), env),
    }
}

/// Where `instantiate` reads the bindings: shared (guards, which run
/// before the rule is chosen), or owned with the number of uses each
/// variable has left, so that its last use takes the value instead of
/// copying it (a premise's output is often a whole derivative body).
enum Bindings<'e, 'r, V> {
    Shared(&'e Env<'r, V>),
    Owned(&'e mut Env<'r, V>, &'e mut Vec<(&'r str, usize)>),
}

fn count_uses<'r>(t: &'r Tmpl, uses: &mut Vec<(&'r str, usize)>) {
    match t {
        Tmpl::Var(v) => match uses.iter_mut().find(|(n, _)| *n == v.as_str()) {
            Some((_, k)) => *k += 1,
            None => uses.push((v.as_str(), 1)),
        },
        Tmpl::Node(_, kids, _) => {
            for k in kids {
                count_uses(k, uses);
            }
        }
        Tmpl::Atom(_) | Tmpl::Num(_) => {}
    }
}

fn bound<V: Clone>(b: &mut Bindings<'_, '_, V>, name: &str) -> Option<V> {
    match b {
        Bindings::Shared(env) => lookup(env, name).cloned(),
        Bindings::Owned(env, uses) => {
            let left = uses.iter_mut().find(|(n, _)| *n == name).map(|(_, k)| {
                *k = k.saturating_sub(1);
                *k
            });
            let at = env.iter().rposition(|(n, _)| *n == name)?;
            if left == Some(0) {
                Some(env.remove(at).1)
            } else {
                Some(env[at].1.clone())
            }
        }
    }
}

fn instantiate<H: Host>(
    host: &mut H,
    t: &Tmpl,
    env: &Env<'_, H::Val>,
    node: &H::Val,
    rule: &Rule,
) -> Result<H::Val, ApplyError> {
    instantiate_from(host, t, &mut Bindings::Shared(env), node, rule)
}

fn instantiate_from<H: Host>(
    host: &mut H,
    t: &Tmpl,
    env: &mut Bindings<'_, '_, H::Val>,
    node: &H::Val,
    rule: &Rule,
) -> Result<H::Val, ApplyError> {
    Ok(match t {
        Tmpl::Var(v) => bound(env, v)
            .ok_or_else(|| ApplyError::new(format!("rule {}: unbound ?{v}", rule.id)))?,
        Tmpl::Atom(a) => host.atom(a),
        Tmpl::Num(x) => host.num(*x),
        Tmpl::Node(head, kids, line) => {
            let mut args = Vec::with_capacity(kids.len());
            for k in kids {
                args.push(instantiate_from(host, k, env, node, rule)?);
            }
            host.build(head, args, node, &rule.id).map_err(|e| {
                ApplyError::new(format!(
                    "{} (rule {} at {}:{line})",
                    e.message, rule.id, rule.file
                ))
            })?
        }
    })
}

/// Applies `relation` to `input`: finds the one applicable rule, proves its
/// premises, and returns what it yields.
pub fn apply<H: Host>(
    rules: &RuleSet,
    host: &mut H,
    relation: &str,
    input: &H::Val,
) -> Result<Vec<H::Val>, ApplyError> {
    host.enter(relation, input);
    let result = apply_inner(rules, host, relation, input);
    host.leave(relation, input);
    result
}

fn apply_inner<H: Host>(
    rules: &RuleSet,
    host: &mut H,
    relation: &str,
    input: &H::Val,
) -> Result<Vec<H::Val>, ApplyError> {
    let mut chosen: Option<(usize, &Rule, Env<'_, H::Val>)> = None;
    let mut applicable = Vec::new();
    let view = host.view(input);
    let head = match &view {
        View::Node(name, _) => Some(*name),
        _ => None,
    };
    // A constructor pattern of another name cannot match: only the rules
    // that can are tried (and checked for exclusivity).
    let candidates = rules.candidates(relation, head);
    for &index in &candidates {
        let rule = &rules.rules[index];
        let mut env = Vec::new();
        if !matches_view(host, &rule.pattern, input, &view, &mut env) {
            continue;
        }
        let mut ok = true;
        for g in &rule.guards {
            let mut args = Vec::with_capacity(g.args.len());
            for a in &g.args {
                args.push(instantiate(host, a, &env, input, rule)?);
            }
            let holds = host.guard(&g.name, &args, input).map_err(|e| {
                ApplyError::new(format!(
                    "{} (rule {} at {}:{})",
                    e.message, rule.id, rule.file, g.line
                ))
            })?;
            if holds == g.negated {
                ok = false;
                break;
            }
        }
        if ok {
            applicable.push(rule.id.as_str());
            if chosen.is_none() {
                chosen = Some((index, rule, env));
            }
        }
    }
    if applicable.len() > 1 {
        return Err(ApplyError::new(format!(
            "internal error: rules {} all apply to {} (relation '{relation}'); the rules must be mutually exclusive",
            applicable.join(", "),
            host.describe(input)
        )));
    }
    let Some((index, rule, mut env)) = chosen else {
        return Err(ApplyError::new(format!(
            "no rule of relation '{relation}' applies to {}",
            host.describe(input)
        )));
    };
    host.fired(&rule.id);
    let mut uses: Vec<(&str, usize)> = rules.uses[index]
        .iter()
        .map(|(n, k)| (n.as_str(), *k))
        .collect();
    for p in &rule.premises {
        let arg = instantiate_from(
            host,
            &p.input,
            &mut Bindings::Owned(&mut env, &mut uses),
            input,
            rule,
        )?;
        let outs = apply(rules, host, &p.relation, &arg)?;
        for (name, v) in p.outputs.iter().zip(outs) {
            env.push((name.as_str(), v));
        }
    }
    let mut out = Vec::with_capacity(rule.yields.len());
    for y in &rule.yields {
        out.push(instantiate_from(
            host,
            y,
            &mut Bindings::Owned(&mut env, &mut uses),
            input,
            rule,
        )?);
    }
    Ok(out)
}
