//! From an IL expression to a term of the e-graph language
//! (`simplify/domain`), and from an extracted term back to IL with C types
//! (`simplify/types`).

use super::lang::{Const, Node};
use super::rules::{Features, node_features};
use crate::back::c::real_text;
use crate::front::source::Span;
use crate::il::{
    BinOp, Expr, ExprKind, Intrinsic, MathFn, Program, QualType, RealKind, Type, UnOp,
};
use egg::{Id, RecExpr};
use rustc_hash::FxHashMap;

/// The real precision of a type, through typedefs.
pub(crate) fn real_kind(program: &Program, ty: &QualType) -> Option<RealKind> {
    match program.resolve(&ty.ty) {
        Type::Real(k) => Some(*k),
        _ => None,
    }
}

/// An expression of precision `T` as a term: the term (a tree, root last),
/// what its leaves and constants stand for, and the input with its
/// sub-expressions of their own (conditional branches, other precisions)
/// already simplified.
pub(crate) struct Term {
    /// Equal subterms are shared.
    pub rec: RecExpr<Node>,
    pub root: Id,
    /// `Node::Leaf(i)` stands for `leaves[i]`.
    pub leaves: Vec<Expr>,
    /// Constants of type `T` as the input spelled them, by value.
    pub consts: Vec<(Const, Expr)>,
    /// The intrinsics of precision `T` the input calls, as it spelled them.
    pub intrinsics: Vec<Intrinsic>,
    pub features: Features,
    /// The input, its own sub-expressions simplified: what is returned
    /// when no cheaper term is found.
    pub prepared: Expr,
}

/// Builds a [`Term`]. `leaf` simplifies a sub-expression of its own before
/// it becomes a leaf.
pub(crate) struct Converter<'a, F: FnMut(&Expr) -> Expr> {
    program: &'a Program,
    kind: RealKind,
    leaf: F,
    rec: RecExpr<Node>,
    added: FxHashMap<Node, Id>,
    leaves: Vec<Expr>,
    /// The leaves without spans and parentheses: equal keys, same value.
    leaf_keys: Vec<Expr>,
    /// `leaf_keys` indices by [`fingerprint`]: a long sum has thousands of
    /// leaves, and a linear search made its conversion quadratic.
    leaf_index: FxHashMap<u64, Vec<usize>>,
    consts: Vec<(Const, Expr)>,
    intrinsics: Vec<Intrinsic>,
    features: Features,
}

impl<'a, F: FnMut(&Expr) -> Expr> Converter<'a, F> {
    pub fn new(program: &'a Program, kind: RealKind, leaf: F) -> Self {
        Converter {
            program,
            kind,
            leaf,
            rec: RecExpr::default(),
            added: FxHashMap::default(),
            leaves: Vec::new(),
            leaf_keys: Vec::new(),
            leaf_index: FxHashMap::default(),
            consts: Vec::new(),
            intrinsics: Vec::new(),
            features: Features::default(),
        }
    }

    pub fn convert(mut self, e: &Expr) -> Term {
        let (root, prepared) = self.term(e);
        Term {
            rec: self.rec,
            root,
            leaves: self.leaves,
            consts: self.consts,
            intrinsics: self.intrinsics,
            features: self.features,
            prepared,
        }
    }

    /// Adds a node, shared with an equal one already added: the term is a
    /// DAG, as its e-graph will be, so that costs see `x + x` as a sum of
    /// one term with itself.
    fn add(&mut self, node: Node) -> Id {
        self.features.insert(node_features(&node));
        if let Some(&id) = self.added.get(&node) {
            return id;
        }
        let id = self.rec.add(node.clone());
        self.added.insert(node, id);
        id
    }

    /// The prepared copy of `e` alone (its own sub-expressions simplified,
    /// as [`Term::prepared`]), without building the term: for an input too
    /// large to be searched.
    pub fn prepare(mut self, e: &Expr) -> Expr {
        self.prepared(e)
    }

    /// The nodes of `e`'s term counted as a tree (a leaf or constant is
    /// one node, and a repeated one counts each time): at least the
    /// term's size, found without building it.
    pub fn tree_size(&self, e: &Expr) -> usize {
        if self.constant(e).is_some() || !self.is_operation(e) {
            return 1;
        }
        1 + match &e.kind {
            ExprKind::Unary { arg, .. } => self.tree_size(arg),
            ExprKind::Binary { lhs, rhs, .. } => self.tree_size(lhs) + self.tree_size(rhs),
            ExprKind::Intrinsic { args, .. } => args.iter().map(|a| self.tree_size(a)).sum(),
            _ => unreachable!("is_operation admits only these"),
        }
    }

    fn prepared(&mut self, e: &Expr) -> Expr {
        if self.constant(e).is_some() {
            return e.clone();
        }
        if !self.is_operation(e) {
            return (self.leaf)(e);
        }
        let kind = match &e.kind {
            ExprKind::Unary { op, arg } => ExprKind::Unary {
                op: *op,
                arg: Box::new(self.prepared(arg)),
            },
            ExprKind::Binary { op, lhs, rhs } => ExprKind::Binary {
                op: *op,
                lhs: Box::new(self.prepared(lhs)),
                rhs: Box::new(self.prepared(rhs)),
            },
            ExprKind::Intrinsic { call, args } => ExprKind::Intrinsic {
                call: call.clone(),
                args: args.iter().map(|a| self.prepared(a)).collect(),
            },
            _ => unreachable!("is_operation admits only these"),
        };
        Expr {
            kind,
            ty: e.ty.clone(),
            span: e.span,
            parens: e.parens,
        }
    }

    /// Is `e` an operation of precision `T` that the terms represent?
    fn is_operation(&self, e: &Expr) -> bool {
        if real_kind(self.program, &e.ty) != Some(self.kind) {
            return false;
        }
        match &e.kind {
            ExprKind::Unary { op, .. } => matches!(op, UnOp::Neg | UnOp::Plus),
            ExprKind::Binary { op, .. } => {
                matches!(op, BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div)
            }
            ExprKind::Intrinsic { call, args } => {
                call.precision == Some(self.kind)
                    && call.func != MathFn::IntAbs
                    && call.func.arity() == args.len()
                    && matches!(args.len(), 1 | 2)
            }
            _ => false,
        }
    }

    /// The value of a constant in a position converted to `T`, if it is
    /// exactly known (`simplify/domain`).
    fn constant(&self, e: &Expr) -> Option<Const> {
        match &e.kind {
            ExprKind::IntConst { value, .. } => {
                let unsigned = matches!(
                    self.program.resolve(&e.ty.ty),
                    Type::Int { unsigned: true, .. }
                );
                if (unsigned && *value < 0) || value.unsigned_abs() > 1 << 53 {
                    return None;
                }
                // Exact as a double; C's conversion to float rounds to
                // nearest, as `as f32` does.
                let v = *value as f64;
                Const::new(match self.kind {
                    RealKind::Float => v as f32 as f64,
                    _ => v,
                })
            }
            ExprKind::RealConst { value, text } => {
                let k = real_kind(self.program, &e.ty)?;
                if k > self.kind {
                    return None;
                }
                let body = text.trim_end_matches(['f', 'F', 'l', 'L']);
                let hex = body.starts_with("0x") || body.starts_with("0X");
                let exact = match k {
                    RealKind::Double => *value,
                    // The IL stores the decimal read as a double; the
                    // literal's value is the decimal rounded once to float.
                    RealKind::Float if !hex => body.parse::<f32>().unwrap_or(*value as f32) as f64,
                    RealKind::Float => *value as f32 as f64,
                    RealKind::LongDouble if text.is_empty() || integer_literal(body) => *value,
                    RealKind::LongDouble => return None,
                };
                Const::new(exact)
            }
            _ => None,
        }
    }

    /// Adds `e`, in a position of precision `T`, and returns its id and
    /// its prepared copy.
    fn term(&mut self, e: &Expr) -> (Id, Expr) {
        if let Some(c) = self.constant(e) {
            if real_kind(self.program, &e.ty) == Some(self.kind)
                && !self.consts.iter().any(|(k, _)| *k == c)
            {
                self.consts.push((c, e.clone()));
            }
            return (self.add(Node::Num(c)), e.clone());
        }
        if !self.is_operation(e) {
            let prepared = (self.leaf)(e);
            let key = normalized(&prepared);
            let bucket = self.leaf_index.entry(fingerprint(&key)).or_default();
            let index = match bucket.iter().find(|&&i| self.leaf_keys[i] == key) {
                Some(&i) => {
                    self.features.insert(Features::DUP);
                    i
                }
                None => {
                    bucket.push(self.leaf_keys.len());
                    self.leaf_keys.push(key);
                    self.leaves.push(prepared.clone());
                    self.leaves.len() - 1
                }
            };
            return (self.add(Node::Leaf(index as u32)), prepared);
        }
        // The prepared copy of this node, with its prepared children.
        let rebuilt = |kind| Expr {
            kind,
            ty: e.ty.clone(),
            span: e.span,
            parens: e.parens,
        };
        match &e.kind {
            // `simplify/domain`: unary plus is dropped from the term (the
            // prepared copy keeps it, as the user wrote it).
            ExprKind::Unary {
                op: UnOp::Plus,
                arg,
            } => {
                let (id, a) = self.term(arg);
                (
                    id,
                    rebuilt(ExprKind::Unary {
                        op: UnOp::Plus,
                        arg: Box::new(a),
                    }),
                )
            }
            ExprKind::Unary { op, arg } => {
                let (id, a) = self.term(arg);
                (
                    self.add(Node::Neg([id])),
                    rebuilt(ExprKind::Unary {
                        op: *op,
                        arg: Box::new(a),
                    }),
                )
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let (l, le) = self.term(lhs);
                let (r, re) = self.term(rhs);
                let node = match op {
                    BinOp::Add => Node::Add([l, r]),
                    BinOp::Sub => Node::Sub([l, r]),
                    BinOp::Mul => Node::Mul([l, r]),
                    _ => Node::Div([l, r]),
                };
                (
                    self.add(node),
                    rebuilt(ExprKind::Binary {
                        op: *op,
                        lhs: Box::new(le),
                        rhs: Box::new(re),
                    }),
                )
            }
            ExprKind::Intrinsic { call, args } => {
                let (ids, prepared): (Vec<Id>, Vec<Expr>) =
                    args.iter().map(|a| self.term(a)).unzip();
                if !self.intrinsics.iter().any(|i| i.func == call.func) {
                    self.intrinsics.push(call.clone());
                }
                let node = match ids[..] {
                    [a] => Node::Call1(call.func, [a]),
                    [a, b] => Node::Call2(call.func, [a, b]),
                    _ => unreachable!("is_operation admits one or two arguments"),
                };
                (
                    self.add(node),
                    rebuilt(ExprKind::Intrinsic {
                        call: call.clone(),
                        args: prepared,
                    }),
                )
            }
            _ => unreachable!("is_operation admits only these"),
        }
    }
}

/// A hash of `e`'s structure, types left out: equal expressions have
/// equal fingerprints, so a fingerprint narrows the search for an equal
/// leaf to a bucket, which `==` then settles.
fn fingerprint(e: &Expr) -> u64 {
    use std::hash::{Hash, Hasher};
    fn feed(e: &Expr, h: &mut rustc_hash::FxHasher) {
        std::mem::discriminant(&e.kind).hash(h);
        match &e.kind {
            ExprKind::IntConst { value, .. } | ExprKind::CharConst { value, .. } => value.hash(h),
            ExprKind::RealConst { value, .. } => value.to_bits().hash(h),
            ExprKind::StrConst(text) => text.hash(h),
            ExprKind::Var(sym) => sym.hash(h),
            ExprKind::Index { base, index } => {
                feed(base, h);
                feed(index, h);
            }
            ExprKind::Field { base, field, .. } => {
                field.hash(h);
                feed(base, h);
            }
            ExprKind::Deref(a)
            | ExprKind::AddrOf(a)
            | ExprKind::SizeOfExpr(a)
            | ExprKind::Cast { arg: a, .. } => feed(a, h),
            ExprKind::Unary { op, arg } => {
                std::mem::discriminant(op).hash(h);
                feed(arg, h);
            }
            ExprKind::Binary { op, lhs, rhs } => {
                std::mem::discriminant(op).hash(h);
                feed(lhs, h);
                feed(rhs, h);
            }
            ExprKind::Intrinsic { args, .. } => args.iter().for_each(|a| feed(a, h)),
            ExprKind::Cond { cond, then, other } => {
                feed(cond, h);
                feed(then, h);
                feed(other, h);
            }
            ExprKind::SizeOfType(_) => {}
        }
    }
    let mut h = rustc_hash::FxHasher::default();
    feed(e, &mut h);
    h.finish()
}

/// `e` without spans and parentheses, which do not change its value:
/// structurally equal leaves are one symbol (`simplify/domain`). Unlike
/// `back::c::same_expr`, literals are compared by spelling too, since two
/// `long double` literals may differ beyond the `double` the IL stores.
fn normalized(e: &Expr) -> Expr {
    let n = |a: &Expr| Box::new(normalized(a));
    let kind = match &e.kind {
        ExprKind::Index { base, index } => ExprKind::Index {
            base: n(base),
            index: n(index),
        },
        ExprKind::Field {
            base,
            strukt,
            field,
        } => ExprKind::Field {
            base: n(base),
            strukt: *strukt,
            field: *field,
        },
        ExprKind::Deref(a) => ExprKind::Deref(n(a)),
        ExprKind::AddrOf(a) => ExprKind::AddrOf(n(a)),
        ExprKind::SizeOfExpr(a) => ExprKind::SizeOfExpr(n(a)),
        ExprKind::Unary { op, arg } => ExprKind::Unary {
            op: *op,
            arg: n(arg),
        },
        ExprKind::Cast { to, arg } => ExprKind::Cast {
            to: to.clone(),
            arg: n(arg),
        },
        ExprKind::Binary { op, lhs, rhs } => ExprKind::Binary {
            op: *op,
            lhs: n(lhs),
            rhs: n(rhs),
        },
        ExprKind::Intrinsic { call, args } => ExprKind::Intrinsic {
            call: call.clone(),
            args: args.iter().map(normalized).collect(),
        },
        ExprKind::Cond { cond, then, other } => ExprKind::Cond {
            cond: n(cond),
            then: n(then),
            other: n(other),
        },
        other => other.clone(),
    };
    Expr {
        kind,
        ty: e.ty.clone(),
        span: Span::default(),
        parens: false,
    }
}

/// A decimal integer of at most 15 digits, possibly with a point and zeros
/// after it (`2`, `10.`, `3.00`): its value is exact in every precision.
fn integer_literal(body: &str) -> bool {
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    !int.is_empty()
        && int.len() <= 15
        && int.bytes().all(|b| b.is_ascii_digit())
        && frac.bytes().all(|b| b == b'0')
}

// ---------------------------------------------------------------------------
// Back to IL (`simplify/types`)
// ---------------------------------------------------------------------------

/// The C type an operand has before conversion, as far as the rebuilding
/// needs it: an integer, or a real precision.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Nat {
    Int,
    Real(RealKind),
}

/// Rebuilds IL from an extracted term.
pub(crate) struct Builder<'a> {
    pub program: &'a Program,
    pub kind: RealKind,
    pub term: &'a Term,
    pub span: Span,
}

impl Builder<'_> {
    fn real_type(&self, kind: RealKind) -> QualType {
        QualType::new(Type::Real(kind))
    }

    fn node(&self, kind: ExprKind, ty: RealKind) -> Expr {
        Expr::new(kind, self.real_type(ty), self.span)
    }

    fn nat(&self, e: &Expr) -> Nat {
        match real_kind(self.program, &e.ty) {
            Some(k) => Nat::Real(k),
            None => Nat::Int,
        }
    }

    /// `(T)e`: so that C computes in `T`.
    fn cast(&self, e: Expr) -> Expr {
        let to = self.real_type(self.kind);
        Expr::new(
            ExprKind::Cast {
                to: to.clone(),
                arg: Box::new(e),
            },
            to,
            self.span,
        )
    }

    /// A literal `v ≥ 0` of type `T`: the input's spelling of it if it had
    /// one, else the shortest spelling that reads back as `v` in `T`.
    fn literal(&self, v: f64) -> Expr {
        if let Some(c) = Const::new(v)
            && let Some((_, e)) = self.term.consts.iter().find(|(k, _)| *k == c)
        {
            return Expr {
                parens: false,
                ..e.clone()
            };
        }
        let text = match self.kind {
            RealKind::Float => format!("{:?}f", v as f32),
            RealKind::Double => real_text(v),
            RealKind::LongDouble => format!("{}L", real_text(v)),
        };
        self.node(ExprKind::RealConst { value: v, text }, self.kind)
    }

    fn constant(&self, v: f64) -> Expr {
        if v < 0.0 {
            // C has no negative literals.
            self.node(
                ExprKind::Unary {
                    op: UnOp::Neg,
                    arg: Box::new(self.literal(-v)),
                },
                self.kind,
            )
        } else {
            self.literal(v)
        }
    }

    fn intrinsic(&self, func: MathFn) -> Intrinsic {
        match self.term.intrinsics.iter().find(|i| i.func == func) {
            Some(i) => i.clone(),
            None => {
                let suffix = match self.kind {
                    RealKind::Float => "f",
                    RealKind::Double => "",
                    RealKind::LongDouble => "l",
                };
                Intrinsic {
                    func,
                    precision: Some(self.kind),
                    name: format!("{}{suffix}", func.c_name()),
                }
            }
        }
    }

    /// The IL of the term rooted at `id`, and its C type.
    fn build(&self, rec: &RecExpr<Node>, id: Id) -> (Expr, Nat) {
        let t = Nat::Real(self.kind);
        match &rec[id] {
            Node::Num(c) => (self.constant(c.value()), t),
            Node::Leaf(i) => {
                let e = self.term.leaves[*i as usize].clone();
                let nat = self.nat(&e);
                (e, nat)
            }
            Node::Neg([a]) => {
                let (mut arg, mut nat) = self.build(rec, *a);
                // `-i` would negate in the integer type (and overflow at
                // INT_MIN, or wrap if unsigned).
                if nat == Nat::Int {
                    arg = self.cast(arg);
                    nat = t;
                }
                let Nat::Real(k) = nat else { unreachable!() };
                let neg = ExprKind::Unary {
                    op: UnOp::Neg,
                    arg: Box::new(arg),
                };
                (self.node(neg, k), nat)
            }
            Node::Add([a, b]) | Node::Sub([a, b]) | Node::Mul([a, b]) | Node::Div([a, b]) => {
                let op = match &rec[id] {
                    Node::Add(_) => BinOp::Add,
                    Node::Sub(_) => BinOp::Sub,
                    Node::Mul(_) => BinOp::Mul,
                    _ => BinOp::Div,
                };
                let (mut lhs, nl) = self.build(rec, *a);
                let (rhs, nr) = self.build(rec, *b);
                // C computes in the wider operand type; if that is narrower
                // than `T` (two integers: integer division), the left
                // operand is converted explicitly.
                if nl.max(nr) != t {
                    lhs = self.cast(lhs);
                }
                let bin = ExprKind::Binary {
                    op,
                    lhs: Box::new(lhs),
                    rhs: Box::new(rhs),
                };
                (self.node(bin, self.kind), t)
            }
            Node::Call1(f, ids) => self.call(rec, *f, ids),
            Node::Call2(f, ids) => self.call(rec, *f, ids),
        }
    }

    /// An intrinsic call: C converts each argument to the parameter type,
    /// so none needs a cast.
    fn call(&self, rec: &RecExpr<Node>, func: MathFn, ids: &[Id]) -> (Expr, Nat) {
        let args = ids.iter().map(|a| self.build(rec, *a).0).collect();
        let call = ExprKind::Intrinsic {
            call: self.intrinsic(func),
            args,
        };
        (self.node(call, self.kind), Nat::Real(self.kind))
    }

    /// The IL of an extracted term, of type exactly `ty` (the input's).
    pub fn root(&self, rec: &RecExpr<Node>, ty: &QualType) -> Expr {
        let (mut e, nat) = self.build(rec, rec.root());
        if nat == Nat::Real(self.kind) {
            // A leaf brought to the root loses the parentheses it had in
            // the context that was simplified away.
            e.ty = ty.clone();
            e.parens = false;
            e
        } else {
            Expr::new(
                ExprKind::Cast {
                    to: ty.clone(),
                    arg: Box::new(e),
                },
                ty.clone(),
                self.span,
            )
        }
    }
}

/// The number of IL nodes of an expression, leaves' insides included.
pub(crate) fn node_count(e: &Expr) -> usize {
    1 + match &e.kind {
        ExprKind::Index { base, index } => node_count(base) + node_count(index),
        ExprKind::Field { base: a, .. }
        | ExprKind::Deref(a)
        | ExprKind::AddrOf(a)
        | ExprKind::Unary { arg: a, .. }
        | ExprKind::Cast { arg: a, .. }
        | ExprKind::SizeOfExpr(a) => node_count(a),
        ExprKind::Binary { lhs, rhs, .. } => node_count(lhs) + node_count(rhs),
        ExprKind::Intrinsic { args, .. } => args.iter().map(node_count).sum(),
        ExprKind::Cond { cond, then, other } => {
            node_count(cond) + node_count(then) + node_count(other)
        }
        _ => 0,
    }
}
