//! Simplification of derivative expressions by equality saturation (`egg`),
//! specified in `spec/simplify.md`.
//!
//! An IL expression of real type is turned into a term over opaque leaves
//! (`convert`), added to an e-graph with constant folding (`lang::Fold`),
//! rewritten by the rules of `rules/simplify/*.rules` (`rules`), and the
//! cheapest equivalent term (`lang::Readable`) is turned back into IL with
//! C types. The rules are data, embedded in the binary so the tool works
//! from any directory.

mod convert;
mod lang;
mod rules;

pub use rules::SimplifyError;

use crate::il::{Expr, ExprKind, Program, RealKind};
pub(crate) use convert::node_count;
use convert::{Builder, Converter, Term, real_kind};
use egg::{CostFunction, EGraph, Extractor, Id, Language};
use lang::{Fold, Node, Readable};
use rules::{Features, Rule};
use rustc_hash::{FxHashMap, FxHashSet};
use std::sync::Mutex;

/// The bundled rule files: their paths in the repository (for messages)
/// and their text.
pub const BUNDLED_RULES: &[(&str, &str)] = &[
    (
        "rules/simplify/identities.rules",
        include_str!("../../rules/simplify/identities.rules"),
    ),
    (
        "rules/simplify/reorder.rules",
        include_str!("../../rules/simplify/reorder.rules"),
    ),
];

/// Iterations of the search before it stops. `simplify/limits`
pub const ITERATION_LIMIT: usize = 8;
/// E-nodes of the e-graph (its hash-cons, pruned nodes included) before
/// the search stops. `simplify/limits`
pub const NODE_LIMIT: usize = 10_000;
/// Nodes of a term, counted as a tree, beyond which it is neither built
/// nor searched: its parts were, as
/// the derivative was built (each active operand's derivative is
/// simplified on its own), and the extraction's cost grows with the
/// square of a term's depth, which a long sum makes its length.
/// `simplify/limits`
pub const TERM_LIMIT: usize = 400;

/// What the simplification of one expression did, for tests and reports.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// E-graph searches run: one per expression of its own precision (the
    /// input, a conditional's branch, ...) not answered by the fast path.
    pub searches: usize,
    /// The most iterations one search made.
    pub max_iterations: usize,
    /// The most e-nodes one e-graph reached.
    pub max_nodes: usize,
    /// Searches that stopped at the iteration or node limit rather than
    /// because no rule could add anything.
    pub limited: usize,
}

/// A set of simplification rules, ready to apply. The only state kept
/// between calls is a cache of searches: a search depends only on the
/// term's shape (its nodes, leaves as indices), its precision and its
/// leaves' sizes, never on what the leaves are, and derivative code
/// repeats shapes (`ad * b + a * bd`) with other leaves all the time.
pub struct Simplifier {
    rules: Vec<Rule>,
    searched: Mutex<FxHashMap<SearchKey, Option<egg::RecExpr<Node>>>>,
}

/// What a search's result depends on (see [`Simplifier`]).
#[derive(PartialEq, Eq, Hash)]
struct SearchKey {
    kind: RealKind,
    nodes: Vec<Node>,
    root: Id,
    leaf_sizes: Vec<u32>,
}

impl Simplifier {
    /// Loads the bundled rules (`rules/simplify/*.rules`, embedded). Errors
    /// name the file and line.
    pub fn new() -> Result<Simplifier, SimplifyError> {
        Simplifier::from_texts(BUNDLED_RULES)
    }

    /// Parses rule files given as `(file name, text)`, in the syntax of
    /// `simplify/rules-syntax`; the file name is used in errors. Only these
    /// rules are used: pass [`BUNDLED_RULES`] too to extend the bundled set.
    pub fn from_texts(files: &[(&str, &str)]) -> Result<Simplifier, SimplifyError> {
        Ok(Simplifier {
            rules: rules::parse_files(files)?,
            searched: Mutex::new(FxHashMap::default()),
        })
    }

    /// The rules, in file order: ID, file and line of each.
    pub fn rules(&self) -> impl Iterator<Item = (&str, &str, usize)> {
        self.rules
            .iter()
            .map(|r| (r.id.as_str(), r.file.as_str(), r.line))
    }

    /// Returns an expression equal in value to `e` (for all finite inputs
    /// where `e` is defined, in real arithmetic) with the same C type
    /// `e.ty`, and no more IL nodes.
    pub fn simplify(&self, program: &Program, e: &Expr) -> Expr {
        self.simplify_with_stats(program, e).0
    }

    /// [`Simplifier::simplify`], and what it did.
    pub fn simplify_with_stats(&self, program: &Program, e: &Expr) -> (Expr, Stats) {
        let mut stats = Stats::default();
        let out = self.simplify_in(program, e, &mut stats);
        (out, stats)
    }

    fn simplify_in(&self, program: &Program, e: &Expr, stats: &mut Stats) -> Expr {
        // `simplify/domain`: only real expressions are rewritten.
        let Some(kind) = real_kind(program, &e.ty) else {
            return e.clone();
        };
        if let ExprKind::Cond { cond, then, other } = &e.kind {
            // The branches are expressions of their own; the condition is
            // not real arithmetic and stays as written.
            return Expr {
                kind: ExprKind::Cond {
                    cond: cond.clone(),
                    then: Box::new(self.simplify_in(program, then, stats)),
                    other: Box::new(self.simplify_in(program, other, stats)),
                },
                ty: e.ty.clone(),
                span: e.span,
                parens: e.parens,
            };
        }
        let converter = Converter::new(program, kind, |leaf: &Expr| {
            // A conditional, or real arithmetic of another precision, is
            // simplified on its own before it becomes a leaf.
            let own = matches!(leaf.kind, ExprKind::Cond { .. })
                || real_kind(program, &leaf.ty).is_some_and(|k| k != kind);
            if own {
                self.simplify_in(program, leaf, stats)
            } else {
                leaf.clone()
            }
        });
        if converter.tree_size(e) > TERM_LIMIT {
            return converter.prepare(e);
        }
        let term = converter.convert(e);
        if !self.may_improve(&term) {
            return term.prepared;
        }
        let Some(best) = self.search_once(kind, &term, stats) else {
            return term.prepared;
        };
        let builder = Builder {
            program,
            kind,
            term: &term,
            span: e.span,
        };
        let out = builder.root(&best, &e.ty);
        // `simplify/types` may add a cast the cost did not count; never
        // return a larger expression than was given.
        if node_count(&out) > node_count(&term.prepared) {
            return term.prepared;
        }
        out
    }

    /// The fast path of `simplify/limits`: can any rule, or folding, make
    /// this term cheaper? Closes the term's features under what the rules
    /// enabled by them can add.
    fn may_improve(&self, term: &Term) -> bool {
        if term.rec.len() <= 1 {
            return false;
        }
        let mut have = term.features;
        loop {
            let before = have;
            for r in &self.rules {
                if have.contains(r.needs) {
                    have.insert(r.gives);
                }
            }
            if have == before {
                break;
            }
        }
        // Folding needs constants; the awkwardness of the cost is about
        // negations and negative constants, which a reordering can move.
        have.intersects(Features::NUM | Features::NEG)
            || self
                .rules
                .iter()
                .any(|r| have.contains(r.needs) && !r.permutation)
    }

    /// [`Simplifier::search`], answered from the cache when a term of the
    /// same shape was searched before.
    fn search_once(
        &self,
        kind: RealKind,
        term: &Term,
        stats: &mut Stats,
    ) -> Option<egg::RecExpr<Node>> {
        let key = SearchKey {
            kind,
            nodes: term.rec.as_ref().to_vec(),
            root: term.root,
            leaf_sizes: leaf_sizes(term),
        };
        // A panic elsewhere cannot leave a half-written entry: inserting is
        // the last thing done under the lock.
        if let Some(found) = self
            .searched
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
        {
            return found.clone();
        }
        let found = self.search(kind, term, stats);
        self.searched
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key, found.clone());
        found
    }

    /// Runs the rules on the term and extracts the cheapest equivalent, if
    /// it is strictly better than the input (`simplify/cost`).
    fn search(&self, kind: RealKind, term: &Term, stats: &mut Stats) -> Option<egg::RecExpr<Node>> {
        let mut egraph = EGraph::new(Fold { kind });
        let mut ids: Vec<Id> = Vec::with_capacity(term.rec.len());
        for node in term.rec.as_ref() {
            let node = node.clone().map_children(|c| ids[usize::from(c)]);
            ids.push(egraph.add(node));
        }
        let root = ids[usize::from(term.root)];
        let outcome = saturate(&mut egraph, &self.rules);
        stats.searches += 1;
        stats.max_iterations = stats.max_iterations.max(outcome.iterations);
        stats.max_nodes = stats.max_nodes.max(egraph.total_size());
        if !outcome.saturated {
            stats.limited += 1;
        }
        let egraph = &egraph;

        let original: FxHashSet<Node> = term
            .rec
            .as_ref()
            .iter()
            .map(|n| n.clone().map_children(|c| egraph.find(ids[usize::from(c)])))
            .collect();
        // `simplify/cost`: the classes of the input's nodes below an
        // intrinsic call (its arguments and what they are made of), and
        // the nodes in them that are neither the input's nor constants.
        let nodes = term.rec.as_ref();
        let mut below_call = vec![false; nodes.len()];
        for i in (0..nodes.len()).rev() {
            if below_call[i] || matches!(nodes[i], Node::Call1(..) | Node::Call2(..)) {
                for &c in nodes[i].children() {
                    below_call[usize::from(c)] = true;
                }
            }
        }
        let mut in_arguments: FxHashSet<Node> = FxHashSet::default();
        for (i, _) in below_call.iter().enumerate().filter(|(_, b)| **b) {
            let class = egraph.find(ids[i]);
            for n in &egraph[class].nodes {
                if !original.contains(n) && !matches!(n, Node::Num(_)) {
                    in_arguments.insert(n.clone());
                }
            }
        }
        let leaf_sizes = leaf_sizes(term);
        let extractor = Extractor::new(
            egraph,
            Readable {
                leaf_sizes: &leaf_sizes,
                original: Some(&original),
                in_arguments: Some(&in_arguments),
            },
        );
        let (best_cost, best) = extractor.find_best(egraph.find(root));
        let input_cost = Readable {
            leaf_sizes: &leaf_sizes,
            original: None,
            in_arguments: None,
        }
        .cost_rec(&term.rec);
        (best_cost.quality() < input_cost.quality()).then_some(best)
    }
}

fn leaf_sizes(term: &Term) -> Vec<u32> {
    term.leaves
        .iter()
        .map(|l| u32::try_from(node_count(l)).unwrap_or(u32::MAX))
        .collect()
}

/// How a saturation ended.
struct Outcome {
    iterations: usize,
    /// No rule could add anything: every equality the rules can show is in
    /// the e-graph.
    saturated: bool,
}

/// Equality saturation with limits on iterations and e-nodes only.
/// `simplify/limits`
///
/// This is the loop of `egg::Runner` with its `SimpleScheduler` (search
/// every rule, then apply every rule, then rebuild; saturated when nothing
/// was applied and the e-graph did not change), without its clock. The
/// runner enforces a time limit by reading the clock after each rule: with
/// the limit set out of reach the result would not depend on it either,
/// but the bookkeeping costs about a fifth of a search on the small
/// expressions the simplifier sees (measured in CPU time on the `speed`
/// test of `tests/simplify.rs`), and without a clock at all the result
/// cannot depend on the machine's speed.
fn saturate(egraph: &mut EGraph<Node, Fold>, rules: &[Rule]) -> Outcome {
    // Searching reads the index of classes by operator, which rebuilding
    // makes.
    egraph.rebuild();
    let mut iterations = 0;
    while iterations < ITERATION_LIMIT && egraph.total_size() <= NODE_LIMIT {
        iterations += 1;
        let before = (egraph.total_size(), egraph.number_of_classes());
        let matches: Vec<_> = rules.iter().map(|r| r.rewrite.search(egraph)).collect();
        let mut applied = 0;
        // The limit is checked after the matches in each e-class, not only
        // after each rule: one rule can match thousands of times in an
        // e-graph that associativity has blown up.
        'apply: for (rule, found) in rules.iter().zip(matches) {
            for in_class in found.chunks(1) {
                applied += rule.rewrite.apply(egraph, in_class).len();
                if egraph.total_size() > NODE_LIMIT {
                    break 'apply;
                }
            }
        }
        egraph.rebuild();
        if applied == 0 && before == (egraph.total_size(), egraph.number_of_classes()) {
            return Outcome {
                iterations,
                saturated: true,
            };
        }
    }
    Outcome {
        iterations,
        saturated: false,
    }
}
