//! The term language the e-graph works on, constant folding, and the
//! extraction cost.
//!
//! Terms are real arithmetic of one precision over opaque leaves
//! (`simplify/domain`). Leaves are numbered per call rather than interned
//! as `egg::Symbol`s: the global symbol table would make hashing, and so the
//! order of e-nodes, depend on what earlier calls interned.

use crate::il::{MathFn, RealKind};
use egg::{Analysis, CostFunction, DidMerge, EGraph, FromOp, Id, Language};
use rustc_hash::FxHashSet;
use std::fmt;

/// A finite real constant, compared and hashed by its bits. `-0.0` is
/// stored as `0.0` (they are equal as values), so that `x - x` and `0`
/// fall in one e-class.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct Const(u64);

impl Const {
    /// `None` for an infinite or NaN value, which is never a constant node.
    pub fn new(value: f64) -> Option<Const> {
        if !value.is_finite() {
            return None;
        }
        let value = if value == 0.0 { 0.0 } else { value };
        Some(Const(value.to_bits()))
    }

    pub fn value(self) -> f64 {
        f64::from_bits(self.0)
    }
}

/// An e-node: an operation of precision `T` on e-classes, a constant, or an
/// opaque leaf (an index into the leaves of the expression being
/// simplified).
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub enum Node {
    Num(Const),
    Leaf(u32),
    Add([Id; 2]),
    Sub([Id; 2]),
    Mul([Id; 2]),
    Div([Id; 2]),
    Neg([Id; 1]),
    /// A real intrinsic of one argument (`sin`), uninterpreted.
    Call1(MathFn, [Id; 1]),
    /// A real intrinsic of two arguments (`pow`), uninterpreted.
    Call2(MathFn, [Id; 2]),
}

/// The operator of a node without its children: what `egg` indexes
/// e-classes by, and what a pattern node must equal to match.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum Op {
    Num(Const),
    Leaf(u32),
    Add,
    Sub,
    Mul,
    Div,
    Neg,
    Call(MathFn),
}

impl Language for Node {
    type Discriminant = Op;

    fn discriminant(&self) -> Op {
        match self {
            Node::Num(c) => Op::Num(*c),
            Node::Leaf(l) => Op::Leaf(*l),
            Node::Add(_) => Op::Add,
            Node::Sub(_) => Op::Sub,
            Node::Mul(_) => Op::Mul,
            Node::Div(_) => Op::Div,
            Node::Neg(_) => Op::Neg,
            Node::Call1(f, _) | Node::Call2(f, _) => Op::Call(*f),
        }
    }

    fn matches(&self, other: &Self) -> bool {
        self.discriminant() == other.discriminant()
    }

    fn children(&self) -> &[Id] {
        match self {
            Node::Num(_) | Node::Leaf(_) => &[],
            Node::Add(c) | Node::Sub(c) | Node::Mul(c) | Node::Div(c) | Node::Call2(_, c) => c,
            Node::Neg(c) | Node::Call1(_, c) => c,
        }
    }

    fn children_mut(&mut self) -> &mut [Id] {
        match self {
            Node::Num(_) | Node::Leaf(_) => &mut [],
            Node::Add(c) | Node::Sub(c) | Node::Mul(c) | Node::Div(c) | Node::Call2(_, c) => c,
            Node::Neg(c) | Node::Call1(_, c) => c,
        }
    }
}

impl fmt::Display for Node {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Node::Num(c) => write!(f, "{:?}", c.value()),
            Node::Leaf(l) => write!(f, "L{l}"),
            Node::Add(_) => f.write_str("+"),
            Node::Sub(_) => f.write_str("-"),
            Node::Mul(_) => f.write_str("*"),
            Node::Div(_) => f.write_str("/"),
            Node::Neg(_) => f.write_str("neg"),
            Node::Call1(m, _) | Node::Call2(m, _) => f.write_str(m.c_name()),
        }
    }
}

/// Why an operator of a rule pattern was not understood.
#[derive(Debug)]
pub struct UnknownOp(pub String);

impl fmt::Display for UnknownOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UnknownOp {}

/// The real intrinsic called `name` in C (its `double` spelling), if any.
pub fn real_intrinsic(name: &str) -> Option<MathFn> {
    match MathFn::from_c_name(name) {
        Some((f, Some(RealKind::Double))) => Some(f),
        _ => None,
    }
}

impl FromOp for Node {
    type Error = UnknownOp;

    /// The operators of `simplify/rules-syntax`.
    fn from_op(op: &str, children: Vec<Id>) -> Result<Node, UnknownOp> {
        let two = |c: &[Id]| [c[0], c[1]];
        Ok(match (op, children.len()) {
            ("+", 2) => Node::Add(two(&children)),
            ("-", 2) => Node::Sub(two(&children)),
            ("*", 2) => Node::Mul(two(&children)),
            ("/", 2) => Node::Div(two(&children)),
            ("neg", 1) => Node::Neg([children[0]]),
            (name, n) if n > 0 => match real_intrinsic(name) {
                Some(f) if f.arity() == n && n == 1 => Node::Call1(f, [children[0]]),
                Some(f) if f.arity() == n => Node::Call2(f, two(&children)),
                Some(f) => {
                    return Err(UnknownOp(format!(
                        "`{name}` takes {} argument(s), not {n}",
                        f.arity()
                    )));
                }
                None => {
                    return Err(UnknownOp(format!(
                        "unknown operator `{name}` with {n} operand(s)"
                    )));
                }
            },
            (text, _) => match text.parse::<f64>().ok().and_then(Const::new) {
                Some(c) => Node::Num(c),
                None => {
                    return Err(UnknownOp(format!(
                        "`{text}` is neither a finite number nor a pattern variable (`?x`)"
                    )));
                }
            },
        })
    }
}

// ---------------------------------------------------------------------------
// Constant folding (`simplify/fold`)
// ---------------------------------------------------------------------------

/// The constant-folding analysis: an e-class's data is the constant all its
/// terms evaluate to, when its operands are constants. `simplify/fold`
#[derive(Clone, Copy, Debug)]
pub struct Fold {
    /// The precision `T` the arithmetic of the expression is done in.
    pub kind: RealKind,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Arith {
    Add,
    Sub,
    Mul,
    Div,
}

fn apply(op: Arith, a: f64, b: f64) -> f64 {
    match op {
        Arith::Add => a + b,
        Arith::Sub => a - b,
        Arith::Mul => a * b,
        Arith::Div => a / b,
    }
}

fn apply32(op: Arith, a: f32, b: f32) -> f32 {
    match op {
        Arith::Add => a + b,
        Arith::Sub => a - b,
        Arith::Mul => a * b,
        Arith::Div => a / b,
    }
}

/// Is `r`, the rounded `double` result of `a op b`, the exact result?
/// Error-free transformations: TwoSum for sums, a fused multiply-add for
/// products and quotients. A subnormal or zero result of a product or
/// quotient of non-zero operands may have lost bits the fma cannot see, so
/// it is not trusted.
fn exact(op: Arith, a: f64, b: f64, r: f64) -> bool {
    match op {
        Arith::Add | Arith::Sub => {
            let b = if op == Arith::Sub { -b } else { b };
            let bb = r - a;
            let err = (a - (r - bb)) + (b - bb);
            err == 0.0
        }
        Arith::Mul => (r.is_normal() || a == 0.0 || b == 0.0) && a.mul_add(b, -r) == 0.0,
        Arith::Div => (r.is_normal() || a == 0.0) && (-r).mul_add(b, a) == 0.0,
    }
}

/// `a op b` as C computes it in precision `kind`, if the result is a
/// finite constant we may fold to. Never folds a division by zero.
fn fold_binary(kind: RealKind, op: Arith, a: f64, b: f64) -> Option<Const> {
    if op == Arith::Div && b == 0.0 {
        return None;
    }
    let r = match kind {
        // Operands of a `float` expression are `float` values, so the
        // conversions are exact and this is C's `float` operation.
        RealKind::Float => apply32(op, a as f32, b as f32) as f64,
        RealKind::Double => apply(op, a, b),
        // A `double` result equal to the exact one is also what any wider
        // precision computes.
        RealKind::LongDouble => {
            let r = apply(op, a, b);
            if !r.is_finite() || !exact(op, a, b, r) {
                return None;
            }
            r
        }
    };
    // A result that needs many more digits than its operands
    // (`0.1 * 3` is 0.30000000000000004) stays as written: the user
    // recognises `0.1 * 3`, not the rounding of it.
    let written = significant_digits(kind, a).max(significant_digits(kind, b));
    if significant_digits(kind, r) > written + 4 {
        return None;
    }
    Const::new(r)
}

/// The significant digits of the shortest decimal that reads back as `v`
/// in precision `kind`, as the printer writes it.
fn significant_digits(kind: RealKind, v: f64) -> usize {
    let text = match kind {
        RealKind::Float => format!("{:e}", v as f32),
        RealKind::Double | RealKind::LongDouble => format!("{v:e}"),
    };
    let mantissa = text.split('e').next().unwrap_or("");
    mantissa
        .bytes()
        .filter(u8::is_ascii_digit)
        .skip_while(|&d| d == b'0')
        .count()
        .max(1)
}

impl Analysis<Node> for Fold {
    type Data = Option<Const>;

    fn make(egraph: &mut EGraph<Node, Fold>, enode: &Node, _id: Id) -> Option<Const> {
        let kind = egraph.analysis.kind;
        let c = |id: &Id| egraph[*id].data.map(Const::value);
        let binary = |op, [a, b]: &[Id; 2]| fold_binary(kind, op, c(a)?, c(b)?);
        match enode {
            Node::Num(k) => Some(*k),
            // `-0.0` is not `0.0` to `copysign`, `atan2` or a division, and
            // constants hold no negative zero: left unfolded.
            Node::Neg([a]) => Some(c(a)?)
                .filter(|v| *v != 0.0)
                .and_then(|v| Const::new(-v)),
            Node::Add(ab) => binary(Arith::Add, ab),
            Node::Sub(ab) => binary(Arith::Sub, ab),
            Node::Mul(ab) => binary(Arith::Mul, ab),
            Node::Div(ab) => binary(Arith::Div, ab),
            Node::Leaf(_) | Node::Call1(..) | Node::Call2(..) => None,
        }
    }

    /// Two constants for one class can differ only by rounding (the same
    /// sum folded in two association orders); the first one found is kept,
    /// which is deterministic.
    fn merge(&mut self, to: &mut Option<Const>, from: Option<Const>) -> DidMerge {
        match (*to, from) {
            (None, Some(_)) => {
                *to = from;
                DidMerge(true, false)
            }
            (Some(_), None) => DidMerge(false, true),
            (Some(a), Some(b)) => DidMerge(false, a != b),
            (None, None) => DidMerge(false, false),
        }
    }

    /// A class with a constant value gets the constant node, and loses
    /// its other nodes: the constant is the cheapest term of the class
    /// anyway, and leaving `0 * x`, `0 * (0 * x)`, ... in the class of `0`
    /// lets `simplify/factor` and the associativity rules match in it
    /// without end. A negative constant `-c` also keeps (or gets) the
    /// node `(neg c)`, so that the rules about negations
    /// (`simplify/add-neg`, `simplify/sub-neg`, ...) see it: `x + -2.0`
    /// becomes `x - 2.0`.
    fn modify(egraph: &mut EGraph<Node, Fold>, id: Id) {
        let Some(c) = egraph[id].data else { return };
        let num = egraph.add(Node::Num(c));
        egraph.union(id, num);
        let negative = c.value() < 0.0;
        if negative && let Some(positive) = Const::new(-c.value()) {
            let positive = egraph.add(Node::Num(positive));
            let neg = egraph.add(Node::Neg([positive]));
            egraph.union(id, neg);
        }
        let id = egraph.find(id);
        egraph[id]
            .nodes
            .retain(|n| n.is_leaf() || (negative && matches!(n, Node::Neg(_))));
    }
}

// ---------------------------------------------------------------------------
// Extraction cost (`simplify/cost`)
// ---------------------------------------------------------------------------

/// How a term reads at its top, for the awkwardness of its parent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Shape {
    Plain,
    /// A constant `c ≥ 0`.
    Const,
    /// A negative constant, or a negation of a constant: `-2.0`.
    NegConst,
    /// A negation of a non-constant: `-x`.
    Neg,
}

impl Shape {
    fn negative(self) -> bool {
        matches!(self, Shape::Neg | Shape::NegConst)
    }
}

/// The cost of a term, compared field by field in this order.
/// `simplify/cost`
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Cost {
    /// IL nodes the term prints as (leaves included).
    pub size: u32,
    /// Negations in places that read badly.
    pub awkward: u32,
    /// Nodes that were not in the input.
    pub novelty: u32,
    /// Constants out of their usual place: `x * 2.0` (a coefficient comes
    /// first), `2.0 + x` (an offset comes last).
    pub order: u32,
    pub shape: Shape,
}

impl Cost {
    /// The part of the cost that makes a term better than the input: the
    /// input is replaced only when this is strictly less.
    pub fn quality(&self) -> (u32, u32) {
        (self.size, self.awkward)
    }
}

/// The extraction cost function: the nodes of the input are known so that
/// ties go to what was written.
pub struct Readable<'a> {
    /// The IL nodes of each leaf (`a[i]` is three).
    pub leaf_sizes: &'a [u32],
    /// The input's e-nodes (children canonical); `None` when costing the
    /// input itself, all of whose nodes are original.
    pub original: Option<&'a FxHashSet<Node>>,
    /// Nodes new to the input in the classes of an intrinsic call's
    /// arguments (`simplify/cost`): each costs [`ARGUMENT_NOVELTY`] more.
    pub in_arguments: Option<&'a FxHashSet<Node>>,
}

/// The awkwardness a node new to the input adds inside an intrinsic's
/// arguments (`simplify/cost`): more than a reordering there can remove,
/// so only rewrites that make the argument smaller are taken.
pub const ARGUMENT_NOVELTY: u32 = 2;

impl CostFunction<Node> for Readable<'_> {
    type Cost = Cost;

    fn cost<C>(&mut self, enode: &Node, mut costs: C) -> Cost
    where
        C: FnMut(Id) -> Cost,
    {
        let children = enode.children();
        let first = children.first().map(|&id| costs(id));
        let second = children.get(1).map(|&id| costs(id));
        let shape_of = |k: Option<Cost>| k.map_or(Shape::Plain, |k| k.shape);
        let negative = |k: Option<Cost>| shape_of(k).negative() as u32;
        let penalty = if self.in_arguments.is_some_and(|a| a.contains(enode)) {
            ARGUMENT_NOVELTY
        } else {
            0
        };
        let (own_size, shape) = match enode {
            Node::Num(c) if c.value() < 0.0 => (2, Shape::NegConst),
            Node::Num(_) => (1, Shape::Const),
            Node::Leaf(l) => (self.leaf_sizes[*l as usize], Shape::Plain),
            Node::Neg(_) if shape_of(first) == Shape::Const => (1, Shape::NegConst),
            Node::Neg(_) => (1, Shape::Neg),
            _ => (1, Shape::Plain),
        };
        let awkward = match enode {
            // `a + -b`, `-a + b`: `a - b`, `b - a` read better; `a + a`
            // is `2.0 * a`.
            Node::Add([a, b]) => negative(first) + negative(second) + (a == b) as u32,
            // `a - -b`, `a * -b`, `a / -b`: a minus glued to an operator.
            Node::Sub(_) => negative(second),
            // `-a * b`, `-a / b` with `a` not a constant: `-(a * b)`
            // keeps the negation outside, where it reads as the sign of the
            // whole term; `-2.0 * x` is a coefficient and reads well.
            Node::Mul(_) | Node::Div(_) => {
                (shape_of(first) == Shape::Neg) as u32 + negative(second)
            }
            Node::Neg(_) => negative(first),
            _ => 0,
        };
        let novelty = self.original.is_some_and(|o| !o.contains(enode)) as u32;
        let constant = |k: Option<Cost>| matches!(shape_of(k), Shape::Const | Shape::NegConst);
        let order = match enode {
            Node::Mul(_) => (constant(second) && !constant(first)) as u32,
            Node::Add(_) => (constant(first) && !constant(second)) as u32,
            _ => 0,
        };
        [first, second].into_iter().flatten().fold(
            Cost {
                size: own_size,
                awkward: awkward + penalty,
                novelty,
                order,
                shape,
            },
            |acc, k| Cost {
                size: acc.size.saturating_add(k.size),
                awkward: acc.awkward.saturating_add(k.awkward),
                novelty: acc.novelty.saturating_add(k.novelty),
                order: acc.order.saturating_add(k.order),
                shape: acc.shape,
            },
        )
    }
}
