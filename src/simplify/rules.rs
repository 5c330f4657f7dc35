//! Reading rule files (`simplify/rules-syntax`) into `egg` rewrites, and
//! what each rule needs to fire, for the fast path of `simplify/limits`.

use super::lang::{Fold, Node};
use egg::{ConditionalApplier, EGraph, ENodeOrVar, Id, Language, Pattern, Rewrite, Subst, Var};
use std::fmt;

/// A rule file that could not be read: the file, the 1-based line, and
/// what is wrong. Displays as `file:line: message`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimplifyError {
    pub file: String,
    pub line: usize,
    pub message: String,
}

impl fmt::Display for SimplifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.message)
    }
}

impl std::error::Error for SimplifyError {}

/// What an expression (or a pattern) contains that some rule may need to
/// match: a set of bits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Features(u8);

impl Features {
    /// A constant.
    pub const NUM: Features = Features(1);
    /// A negation.
    pub const NEG: Features = Features(2);
    /// Two occurrences of one leaf, so possibly two equal subterms.
    pub const DUP: Features = Features(4);
    /// An intrinsic call.
    pub const CALL: Features = Features(8);

    pub fn contains(self, other: Features) -> bool {
        self.0 & other.0 == other.0
    }

    pub fn insert(&mut self, other: Features) {
        self.0 |= other.0;
    }

    pub fn intersects(self, other: Features) -> bool {
        self.0 & other.0 != 0
    }
}

impl std::ops::BitOr for Features {
    type Output = Features;
    fn bitor(self, other: Features) -> Features {
        Features(self.0 | other.0)
    }
}

/// The features a node brings to a term.
pub(crate) fn node_features(node: &Node) -> Features {
    match node {
        Node::Num(_) => Features::NUM,
        Node::Neg(_) => Features::NEG,
        Node::Call1(..) | Node::Call2(..) => Features::CALL,
        _ => Features::default(),
    }
}

/// One line of a rule file, ready for `egg`.
pub(crate) struct Rule {
    /// `simplify/NAME`, shared by the lines of one identity.
    pub id: String,
    pub file: String,
    pub line: usize,
    pub rewrite: Rewrite<Node, Fold>,
    /// What a term must contain for the left side (and condition) to match.
    pub needs: Features,
    /// What the right side may bring into a term that lacked it.
    pub gives: Features,
    /// The rule only reorders: same operators, same variables, each as
    /// often, on both sides (commutativity). It can make no term cheaper.
    pub permutation: bool,
}

/// `if const ?a ?b`: every variable is bound to an e-class with a known
/// constant value (`simplify/fold`).
struct AllConst(Vec<Var>);

impl egg::Condition<Node, Fold> for AllConst {
    fn check(&self, egraph: &mut EGraph<Node, Fold>, _eclass: Id, subst: &Subst) -> bool {
        self.0.iter().all(|v| egraph[subst[*v]].data.is_some())
    }

    fn vars(&self) -> Vec<Var> {
        self.0.clone()
    }
}

/// Is `id` a rule ID of this family: `simplify/` and a name of lowercase
/// letters, digits and dashes?
fn valid_id(id: &str) -> bool {
    id.strip_prefix("simplify/").is_some_and(|name| {
        !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    })
}

/// Occurrences of each variable, and the operators, of a pattern.
struct Census {
    vars: Vec<(Var, usize)>,
    ops: Vec<Node>,
    features: Features,
}

fn census(p: &Pattern<Node>) -> Census {
    let mut c = Census {
        vars: Vec::new(),
        ops: Vec::new(),
        features: Features::default(),
    };
    // The pattern's nodes are shared (`?x` twice is one node), so the tree
    // is walked from the root to count occurrences.
    fn walk(ast: &[ENodeOrVar<Node>], at: Id, c: &mut Census) {
        match &ast[usize::from(at)] {
            ENodeOrVar::Var(v) => match c.vars.iter_mut().find(|(w, _)| w == v) {
                Some((_, k)) => *k += 1,
                None => c.vars.push((*v, 1)),
            },
            ENodeOrVar::ENode(node) => {
                c.features.insert(node_features(node));
                // Children ids differ between the two sides; only the
                // operator counts.
                c.ops.push(node.clone().map_children(|_| Id::from(0usize)));
                for &child in node.children() {
                    walk(ast, child, c);
                }
            }
        }
    }
    let ast = p.ast.as_ref();
    walk(ast, Id::from(ast.len() - 1), &mut c);
    c.ops.sort();
    c.vars.sort_by_key(|(v, _)| v.to_string());
    c
}

fn count(vars: &[(Var, usize)], v: Var) -> usize {
    vars.iter().find(|(w, _)| *w == v).map_or(0, |(_, k)| *k)
}

/// Splits `RHS if COND` at the keyword `if` (a whole word).
fn split_condition(s: &str) -> (&str, Option<&str>) {
    let bytes = s.as_bytes();
    let mut from = 0;
    while let Some(i) = s[from..].find("if").map(|i| i + from) {
        let before = i == 0 || bytes[i - 1].is_ascii_whitespace() || bytes[i - 1] == b')';
        let after = i + 2 == s.len() || bytes[i + 2].is_ascii_whitespace();
        if before && after {
            return (&s[..i], Some(&s[i + 2..]));
        }
        from = i + 2;
    }
    (s, None)
}

/// A number in a rule must mean the same in every precision.
fn check_constants(p: &Pattern<Node>) -> Result<(), String> {
    for n in p.ast.as_ref() {
        if let ENodeOrVar::ENode(Node::Num(c)) = n {
            let v = c.value();
            if (v as f32) as f64 != v {
                return Err(format!(
                    "the constant {v:?} is not exactly representable as a float"
                ));
            }
        }
    }
    Ok(())
}

/// Parses one rule line (comment already removed). `simplify/rules-syntax`
fn parse_rule(text: &str, file: &str, line: usize) -> Result<Rule, String> {
    let (id, rest) = text
        .split_once(':')
        .ok_or("expected `simplify/NAME: LHS => RHS`")?;
    let id = id.trim();
    if !valid_id(id) {
        return Err(format!(
            "`{id}` is not a rule ID (`simplify/` and lowercase letters, digits, `-`)"
        ));
    }
    let (lhs, rest) = rest
        .split_once("=>")
        .ok_or("expected `=>` between the two sides")?;
    if rest.contains("=>") {
        return Err("more than one `=>`".to_string());
    }
    let (rhs, condition) = split_condition(rest);
    let lhs: Pattern<Node> = lhs.trim().parse().map_err(|e| format!("left side: {e}"))?;
    let rhs: Pattern<Node> = rhs.trim().parse().map_err(|e| format!("right side: {e}"))?;
    if matches!(lhs.ast.as_ref().last(), Some(ENodeOrVar::Var(_))) {
        return Err("the left side must be an operation, not a variable alone".to_string());
    }
    check_constants(&lhs).map_err(|e| format!("left side: {e}"))?;
    check_constants(&rhs).map_err(|e| format!("right side: {e}"))?;
    let left = census(&lhs);
    let right = census(&rhs);
    for (v, _) in &right.vars {
        if count(&left.vars, *v) == 0 {
            return Err(format!(
                "{v} is used on the right side but not bound on the left"
            ));
        }
    }
    let const_vars = match condition {
        None => Vec::new(),
        Some(cond) => {
            let mut words = cond.split_whitespace();
            if words.next() != Some("const") {
                return Err("expected `if const ?v ...`".to_string());
            }
            let mut vars = Vec::new();
            for w in words {
                let v: Var = w
                    .parse()
                    .map_err(|_| format!("`{w}` is not a pattern variable"))?;
                if count(&left.vars, v) == 0 {
                    return Err(format!(
                        "{v} is used in the condition but not bound on the left"
                    ));
                }
                vars.push(v);
            }
            if vars.is_empty() {
                return Err("`if const` names no variable".to_string());
            }
            vars
        }
    };

    let mut needs = left.features;
    if left.vars.iter().any(|(_, k)| *k > 1) {
        needs.insert(Features::DUP);
    }
    if !const_vars.is_empty() {
        needs.insert(Features::NUM);
    }
    let mut gives = right.features;
    if right
        .vars
        .iter()
        .any(|(v, k)| *k > 1 && *k > count(&left.vars, *v))
    {
        gives.insert(Features::DUP);
    }
    let permutation = const_vars.is_empty() && left.ops == right.ops && left.vars == right.vars;

    // The name `egg` reports: unique per line, so its statistics (and any
    // scheduler keyed by name) never mix two rules.
    let name = format!("{id}@{file}:{line}");
    let rewrite = if const_vars.is_empty() {
        Rewrite::new(name, lhs, rhs)
    } else {
        let applier = ConditionalApplier {
            condition: AllConst(const_vars),
            applier: rhs,
        };
        Rewrite::new(name, lhs, applier)
    }?;
    Ok(Rule {
        id: id.to_string(),
        file: file.to_string(),
        line,
        rewrite,
        needs,
        gives,
        permutation,
    })
}

/// Parses rule files: `(file name, text)` pairs, in order.
pub(crate) fn parse_files(files: &[(&str, &str)]) -> Result<Vec<Rule>, SimplifyError> {
    let mut rules = Vec::new();
    for (file, text) in files {
        for (i, raw) in text.lines().enumerate() {
            let content = raw.split('#').next().unwrap_or("").trim();
            if content.is_empty() {
                continue;
            }
            let rule = parse_rule(content, file, i + 1).map_err(|message| SimplifyError {
                file: file.to_string(),
                line: i + 1,
                message,
            })?;
            rules.push(rule);
        }
    }
    Ok(rules)
}
