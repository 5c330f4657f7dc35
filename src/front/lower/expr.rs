//! Expressions: typing, and splitting side effects out into statements
//! (`il/split`).

use super::{Lowerer, R, err};
use crate::front::ast::{self, BinaryOp, UnaryOp};
use crate::front::source::Span;
use crate::il::{
    AllocForm, AssignSugar, BinOp, Declarator, Expr, ExprKind, IntKind, Intrinsic, LoopHeader,
    MathFn, ProcId, ProcOrigin, QualType, RealKind, Stmt, StmtId, StmtKind, Storage, SymKind,
    Symbol, Type, UnOp,
};

/// Statements split out of an expression: `pre` run before the statement
/// that uses the expression, `post` after it (postfix `++`/`--`).
#[derive(Default, Debug)]
pub(super) struct Effects {
    pub pre: Vec<Stmt>,
    pub post: Vec<Stmt>,
}

/// What a call's callee is.
#[derive(Clone, Debug)]
pub(super) enum Callee {
    Proc(ProcId),
    Intrinsic(MathFn, Option<RealKind>),
    Malloc,
    Calloc,
    Realloc,
    Free,
}

pub(super) fn stmt(kind: StmtKind, span: Span) -> Stmt {
    Stmt {
        id: StmtId(0),
        kind,
        span,
        comments: Default::default(),
    }
}

/// The expression inside any parentheses.
pub(super) fn strip_parens(mut e: &ast::Expr) -> &ast::Expr {
    while let ast::ExprKind::Paren(inner) = &e.kind {
        e = inner;
    }
    e
}

fn bin_op(op: BinaryOp) -> BinOp {
    match op {
        BinaryOp::Mul => BinOp::Mul,
        BinaryOp::Div => BinOp::Div,
        BinaryOp::Rem => BinOp::Rem,
        BinaryOp::Add => BinOp::Add,
        BinaryOp::Sub => BinOp::Sub,
        BinaryOp::Shl => BinOp::Shl,
        BinaryOp::Shr => BinOp::Shr,
        BinaryOp::Lt => BinOp::Lt,
        BinaryOp::Gt => BinOp::Gt,
        BinaryOp::Le => BinOp::Le,
        BinaryOp::Ge => BinOp::Ge,
        BinaryOp::Eq => BinOp::Eq,
        BinaryOp::Ne => BinOp::Ne,
        BinaryOp::BitAnd => BinOp::BitAnd,
        BinaryOp::BitXor => BinOp::BitXor,
        BinaryOp::BitOr => BinOp::BitOr,
        BinaryOp::And => BinOp::And,
        BinaryOp::Or => BinOp::Or,
    }
}

fn op_str(op: BinOp) -> &'static str {
    match op {
        BinOp::Add => "+",
        BinOp::Sub => "-",
        BinOp::Mul => "*",
        BinOp::Div => "/",
        BinOp::Rem => "%",
        BinOp::Lt => "<",
        BinOp::Le => "<=",
        BinOp::Gt => ">",
        BinOp::Ge => ">=",
        BinOp::Eq => "==",
        BinOp::Ne => "!=",
        BinOp::And => "&&",
        BinOp::Or => "||",
        BinOp::BitAnd => "&",
        BinOp::BitOr => "|",
        BinOp::BitXor => "^",
        BinOp::Shl => "<<",
        BinOp::Shr => ">>",
    }
}

impl Lowerer<'_> {
    /// Fails when side effects are not allowed where we are.
    pub(super) fn allow_effect(&self, what: impl FnOnce() -> String, span: Span) -> R<()> {
        match self.forbid {
            Some(ctx) => err(span, format!("{} inside {ctx} is not supported", what())),
            None => Ok(()),
        }
    }

    /// Fails where a write to a variable is not allowed: where no effect
    /// is, and inside an initializer list.
    pub(super) fn allow_write(&self, what: impl FnOnce() -> String, span: Span) -> R<()> {
        if self.in_init_list {
            return err(
                span,
                format!(
                    "{} inside an initializer list is not supported (write it before the declaration)",
                    what()
                ),
            );
        }
        self.allow_effect(what, span)
    }

    /// Lowers `e` with side effects forbidden, naming the context.
    pub(super) fn pure_expr(&mut self, e: &ast::Expr, ctx: &'static str) -> R<Expr> {
        let saved = self.forbid.replace(ctx);
        let mut fx = Effects::default();
        let r = self.expr(e, &mut fx);
        self.forbid = saved;
        r
    }

    /// Lowers the value stored into, or passed as, something of type `ty`:
    /// a string literal is allowed where `ty` is a pointer to `char`
    /// (`const char *mode = "fast";`, `solve("tight", x)`): its value is
    /// the address of storage no analysis follows, which is never active.
    pub(super) fn value_for(&mut self, e: &ast::Expr, ty: &Type, fx: &mut Effects) -> R<Expr> {
        let char_pointer = match self.resolve(ty) {
            Type::Pointer(t) => matches!(
                self.resolve(&t.ty),
                Type::Int {
                    kind: crate::il::IntKind::Char,
                    ..
                }
            ),
            _ => false,
        };
        self.expr_inner(e, fx, char_pointer)
    }

    /// Lowers an expression in a value context.
    pub(super) fn expr(&mut self, e: &ast::Expr, fx: &mut Effects) -> R<Expr> {
        self.expr_inner(e, fx, false)
    }

    fn expr_inner(&mut self, e: &ast::Expr, fx: &mut Effects, allow_str: bool) -> R<Expr> {
        let span = e.span;
        match &e.kind {
            ast::ExprKind::Ident(name)
                if name == "__func__" && self.lookup_var(name).is_none() && self.f.is_some() =>
            {
                // C99's predefined `static const char __func__[]`: the
                // enclosing function's name, which the derivative code
                // must print as the original does.
                let proc = self.f.as_ref().map(|f| f.proc).unwrap_or_default();
                let fname = self.prog.procs[proc.index()].name.clone();
                let lit = ast::Expr {
                    kind: ast::ExprKind::StrLit(vec![format!("\"{fname}\"")]),
                    span,
                };
                self.expr_inner(&lit, fx, allow_str)
            }
            ast::ExprKind::Ident(name) => self.ident(name, span),
            ast::ExprKind::IntLit(text) => {
                let (value, ty) = parse_int(text).ok_or_else(|| {
                    crate::front::diag::Diagnostic::error(
                        span,
                        format!("invalid integer literal '{text}'"),
                    )
                })?;
                Ok(Expr::new(
                    ExprKind::IntConst {
                        value,
                        text: text.clone(),
                    },
                    QualType::new(ty),
                    span,
                ))
            }
            ast::ExprKind::FloatLit(text) => {
                let (value, kind) = parse_float(text).ok_or_else(|| {
                    crate::front::diag::Diagnostic::error(
                        span,
                        format!("invalid floating literal '{text}'"),
                    )
                })?;
                Ok(Expr::new(
                    ExprKind::RealConst {
                        value,
                        text: text.clone(),
                    },
                    QualType::new(Type::Real(kind)),
                    span,
                ))
            }
            ast::ExprKind::CharLit(text) => {
                let value = parse_char(text).ok_or_else(|| {
                    crate::front::diag::Diagnostic::error(
                        span,
                        format!("unsupported character literal {text}"),
                    )
                })?;
                Ok(Expr::new(
                    ExprKind::CharConst {
                        value,
                        text: text.clone(),
                    },
                    QualType::int(),
                    span,
                ))
            }
            ast::ExprKind::StrLit(parts) => {
                if !allow_str && !self.in_assert {
                    return err(
                        span,
                        "string literals are only supported as arguments of library functions (such as printf), as char array initializers, and as values of char pointers",
                    );
                }
                Ok(Expr::new(
                    ExprKind::StrConst(parts.join(" ")),
                    char_ptr(),
                    span,
                ))
            }
            ast::ExprKind::Paren(inner) => {
                let mut x = self.expr_inner(inner, fx, allow_str)?;
                x.parens = true;
                Ok(x)
            }
            ast::ExprKind::Index(a, i) => {
                let mut base = self.expr(a, fx)?;
                let mut index = self.expr(i, fx)?;
                if !self.is_pointerish(&base.ty.ty) && self.is_pointerish(&index.ty.ty) {
                    std::mem::swap(&mut base, &mut index);
                }
                let Some(elem) = self.pointee(&base.ty.ty) else {
                    return err(span, "subscripted value is not an array or pointer");
                };
                if !self.is_integer(&index.ty.ty) {
                    return err(i.span, "array subscript is not an integer");
                }
                self.check_complete_object(&elem, span)?;
                Ok(Expr::new(
                    ExprKind::Index {
                        base: Box::new(base),
                        index: Box::new(index),
                    },
                    elem,
                    span,
                ))
            }
            ast::ExprKind::Call(callee, args) => self.value_call(callee, args, span, fx),
            ast::ExprKind::Member(b, name) => {
                let base = self.expr(b, fx)?;
                self.field(base, name, span)
            }
            ast::ExprKind::Arrow(b, name) => {
                let base = self.expr(b, fx)?;
                let Some(target) = self.pointee(&base.ty.ty) else {
                    return err(
                        span,
                        format!("member reference '->{name}' on a value that is not a pointer"),
                    );
                };
                let deref = Expr::new(ExprKind::Deref(Box::new(base)), target, b.span);
                self.field(deref, name, span)
            }
            ast::ExprKind::PostInc(x)
            | ast::ExprKind::PreInc(x)
            | ast::ExprKind::PostDec(x)
            | ast::ExprKind::PreDec(x) => {
                let (s, target) = self.incdec_stmt(e, fx)?;
                let _ = x;
                let postfix = matches!(
                    e.kind,
                    ast::ExprKind::PostInc(_) | ast::ExprKind::PostDec(_)
                );
                if !postfix {
                    fx.pre.push(s);
                    return Ok(target);
                }
                if !self.post_as_pre {
                    fx.post.push(s);
                    return Ok(target);
                }
                // `il/split`: the value of `x++` is the old `x`, kept in a
                // temporary because the increment must happen first.
                let ty = QualType::new(target.ty.ty.clone());
                let old = self.declare_temp(ty, Some(target), span, fx)?;
                fx.pre.push(s);
                Ok(old)
            }
            ast::ExprKind::Unary(op, x) => self.unary(*op, x, span, fx),
            ast::ExprKind::SizeofExpr(x) => {
                let arg = self.pure_expr(x, "sizeof")?;
                if let Type::Array { len: None, .. } = self.resolve(&arg.ty.ty) {
                    return err(span, "sizeof of an array of unknown length");
                }
                Ok(Expr::new(
                    ExprKind::SizeOfExpr(Box::new(arg)),
                    QualType::size_t(),
                    span,
                ))
            }
            ast::ExprKind::SizeofType(t) => {
                let ty = self.type_name(t)?;
                Ok(Expr::new(
                    ExprKind::SizeOfType(ty),
                    QualType::size_t(),
                    span,
                ))
            }
            ast::ExprKind::CompoundLiteral(t, init) => {
                // `il/split`: the unnamed object is a local declared, with
                // its initializer, just before the statement.
                if let Some(what) = self.forbid {
                    return err(
                        span,
                        format!("a compound literal in {what} is not supported"),
                    );
                }
                if self.f.is_none() {
                    return err(
                        span,
                        "a compound literal outside a function is not supported",
                    );
                }
                // Declared in a `?:` branch or a loop body, the object would
                // die before a pointer to it is used.
                if !self.literal_outlives_statement() {
                    return err(
                        span,
                        "a compound literal in a branch of ?:, an operand of && or ||, or a loop condition is not supported (name the object first)",
                    );
                }
                let mut ty = self.type_name(t)?;
                let init = self.initializer(init, &mut ty, fx)?;
                let sym = self.new_named_temp("aioli_literal", SymKind::Local, ty.clone(), span)?;
                fx.pre.push(stmt(
                    StmtKind::Decl {
                        base: ty.clone(),
                        storage: Storage::Auto,
                        vars: vec![Declarator {
                            sym,
                            init: Some(init),
                        }],
                    },
                    span,
                ));
                Ok(Expr::new(ExprKind::Var(sym), ty, span))
            }
            ast::ExprKind::Cast(t, x) => {
                let to = self.type_name(t)?;
                let arg = self.expr(x, fx)?;
                let ok = matches!(self.resolve(&to.ty), Type::Void)
                    || (self.is_scalar(&to.ty) && self.is_scalar(&arg.ty.ty))
                    || self.same_type(&to, &arg.ty);
                if !ok {
                    return err(
                        span,
                        format!(
                            "invalid cast from '{}' to '{}'",
                            self.type_str(&arg.ty),
                            self.type_str(&to)
                        ),
                    );
                }
                if self.is_real(&to.ty) && self.is_pointerish(&arg.ty.ty)
                    || self.is_pointerish(&to.ty) && self.is_real(&arg.ty.ty)
                {
                    return err(span, "invalid cast between a pointer and a floating type");
                }
                Ok(Expr::new(
                    ExprKind::Cast {
                        to: to.clone(),
                        arg: Box::new(arg),
                    },
                    QualType::new(to.ty),
                    span,
                ))
            }
            ast::ExprKind::Binary(op, a, b) => {
                let op = bin_op(*op);
                if !matches!(op, BinOp::And | BinOp::Or) {
                    let lhs = self.expr(a, fx)?;
                    let rhs = self.expr(b, fx)?;
                    return self.binary(op, lhs, rhs, span);
                }
                // `&&` and `||` are sequence points: the left operand's
                // effects, postfix ones included, happen before the right
                // operand is evaluated.
                let lhs = self.branch_expr(a, fx)?;
                // The right operand is evaluated only when the left one
                // does not decide: its effects go into an `if`.
                let mut rfx = Effects::default();
                let rhs = self.branch_expr(b, &mut rfx)?;
                if rfx.pre.is_empty() {
                    return self.binary(op, lhs, rhs, span);
                }
                let truth = self.binary(BinOp::Ne, rhs.clone(), zero(span), span)?;
                let rhs_truth = if is_truth_value(&rhs) { rhs } else { truth };
                let (test, decided) = if op == BinOp::And {
                    (lhs, 0)
                } else {
                    let not = Expr::new(
                        ExprKind::Unary {
                            op: crate::il::UnOp::Not,
                            arg: Box::new(Expr {
                                parens: true,
                                ..lhs
                            }),
                        },
                        QualType::int(),
                        span,
                    );
                    (not, 1)
                };
                let decided = Expr::new(
                    ExprKind::IntConst {
                        value: decided,
                        text: decided.to_string(),
                    },
                    QualType::int(),
                    span,
                );
                self.value_by_branches(
                    test,
                    (rfx.pre, rhs_truth),
                    (Vec::new(), decided),
                    QualType::int(),
                    span,
                    fx,
                )
            }
            ast::ExprKind::Conditional(c, t, f) => {
                // A sequence point follows the condition.
                let cond = self.branch_expr(c, fx)?;
                if !self.is_scalar(&cond.ty.ty) {
                    return err(c.span, "condition is not a scalar");
                }
                let mut tfx = Effects::default();
                let mut ffx = Effects::default();
                let then = self.branch_expr(t, &mut tfx)?;
                let other = self.branch_expr(f, &mut ffx)?;
                let ty = self.cond_type(&then, &other, span)?;
                if tfx.pre.is_empty() && ffx.pre.is_empty() {
                    return Ok(Expr::new(
                        ExprKind::Cond {
                            cond: Box::new(cond),
                            then: Box::new(then),
                            other: Box::new(other),
                        },
                        ty,
                        span,
                    ));
                }
                self.value_by_branches(cond, (tfx.pre, then), (ffx.pre, other), ty, span, fx)
            }
            ast::ExprKind::Assign(op, l, r) => {
                let s = self.assign_stmt(*op, l, r, span, fx)?;
                let target = match &s.kind {
                    StmtKind::Assign { lhs, .. } => lhs.clone(),
                    StmtKind::Call {
                        result: Some(lhs), ..
                    } => lhs.clone(),
                    _ => {
                        return err(
                            span,
                            "allocation is only supported as a statement `p = malloc(...);`",
                        );
                    }
                };
                fx.pre.push(s);
                Ok(target)
            }
            ast::ExprKind::Comma(a, b) => {
                let mut pre = std::mem::take(&mut fx.pre);
                self.expr_stmt(a, &mut pre)?;
                pre.append(&mut fx.pre);
                fx.pre = pre;
                self.expr(b, fx)
            }
        }
    }

    pub(super) fn is_real(&self, ty: &Type) -> bool {
        matches!(self.resolve(ty), Type::Real(_))
    }

    fn check_complete_object(&self, t: &QualType, span: Span) -> R<()> {
        match self.resolve(&t.ty) {
            Type::Void => err(span, "dereferencing a void pointer"),
            _ => Ok(()),
        }
    }

    fn ident(&mut self, name: &str, span: Span) -> R<Expr> {
        // Variables and enumerators share C's ordinary namespace: the
        // innermost scope declaring the name wins (`il/enum`).
        let mut scope = Some(self.scope);
        while let Some(s) = scope {
            if let Some(&sym) = self.prog.scopes[s.index()].vars.get(name) {
                let ty = self.prog.symbols[sym.index()].ty.clone();
                return Ok(Expr::new(ExprKind::Var(sym), ty, span));
            }
            if let Some(&value) = self.enum_constants.get(&(s, name.to_string())) {
                // A file-scope enum is printed with the output; one local
                // to a function is not, so its constants print as values.
                let text = if s == self.prog.global_scope {
                    name.to_string()
                } else {
                    value.to_string()
                };
                return Ok(Expr::new(
                    ExprKind::IntConst { value, text },
                    QualType::int(),
                    span,
                ));
            }
            scope = self.prog.scopes[s.index()].parent;
        }
        if name == "NULL" {
            return Ok(Expr::new(
                ExprKind::IntConst {
                    value: 0,
                    text: "NULL".into(),
                },
                QualType::void().pointer_to(),
                span,
            ));
        }
        if self.proc_names.contains_key(name) {
            return err(
                span,
                format!("function pointers are not supported: function '{name}' used as a value"),
            );
        }
        err(span, format!("use of undeclared identifier '{name}'"))
    }

    fn field(&mut self, base: Expr, name: &str, span: Span) -> R<Expr> {
        let id = match self.resolve(&base.ty.ty) {
            Type::Struct(id) => *id,
            Type::Opaque(n) => {
                return err(span, format!("member access into incomplete type '{n}'"));
            }
            _ => {
                return err(
                    span,
                    format!(
                        "member reference '{name}' on a value of type '{}', which is not a struct",
                        self.type_str(&base.ty)
                    ),
                );
            }
        };
        let def = &self.prog.structs[id.index()];
        let Some(index) = def.fields.iter().position(|f| f.name == name) else {
            let tag = self.type_str(&QualType::new(Type::Struct(id)));
            return err(span, format!("no member named '{name}' in '{tag}'"));
        };
        let mut ty = def.fields[index].ty.clone();
        ty.is_const |= base.ty.is_const;
        Ok(Expr::new(
            ExprKind::Field {
                base: Box::new(base),
                strukt: id,
                field: index,
            },
            ty,
            span,
        ))
    }

    fn unary(&mut self, op: UnaryOp, x: &ast::Expr, span: Span, fx: &mut Effects) -> R<Expr> {
        match op {
            UnaryOp::AddrOf => {
                if let ast::ExprKind::Ident(name) = &strip_parens(x).kind
                    && self.lookup_var(name).is_none()
                    && self.proc_names.contains_key(name)
                {
                    return err(
                        span,
                        format!(
                            "function pointers are not supported: taking the address of function '{name}'"
                        ),
                    );
                }
                let arg = self.expr(x, fx)?;
                if !is_lvalue(&arg) {
                    return err(
                        span,
                        "cannot take the address of a value that is not stored in memory",
                    );
                }
                let ty = arg.ty.clone().pointer_to();
                Ok(Expr::new(ExprKind::AddrOf(Box::new(arg)), ty, span))
            }
            UnaryOp::Deref => {
                let arg = self.expr(x, fx)?;
                let Some(t) = self.pointee(&arg.ty.ty) else {
                    return err(
                        span,
                        format!(
                            "cannot dereference a value of type '{}'",
                            self.type_str(&arg.ty)
                        ),
                    );
                };
                self.check_complete_object(&t, span)?;
                Ok(Expr::new(ExprKind::Deref(Box::new(arg)), t, span))
            }
            UnaryOp::Plus | UnaryOp::Minus | UnaryOp::BitNot => {
                let arg = self.expr(x, fx)?;
                let ok = if op == UnaryOp::BitNot {
                    self.is_integer(&arg.ty.ty)
                } else {
                    self.is_arith(&arg.ty.ty)
                };
                if !ok {
                    return err(
                        span,
                        format!(
                            "invalid operand of type '{}' to a unary operator",
                            self.type_str(&arg.ty)
                        ),
                    );
                }
                let ty = self.promote(&arg.ty);
                let op = match op {
                    UnaryOp::Plus => UnOp::Plus,
                    UnaryOp::Minus => UnOp::Neg,
                    _ => UnOp::BitNot,
                };
                Ok(Expr::new(
                    ExprKind::Unary {
                        op,
                        arg: Box::new(arg),
                    },
                    ty,
                    span,
                ))
            }
            UnaryOp::Not => {
                let arg = self.expr(x, fx)?;
                if !self.is_scalar(&arg.ty.ty) {
                    return err(span, "invalid operand to '!'");
                }
                Ok(Expr::new(
                    ExprKind::Unary {
                        op: UnOp::Not,
                        arg: Box::new(arg),
                    },
                    QualType::int(),
                    span,
                ))
            }
        }
    }

    /// Types a binary operation.
    pub(super) fn binary(&mut self, op: BinOp, lhs: Expr, rhs: Expr, span: Span) -> R<Expr> {
        let (lt, rt) = (lhs.ty.clone(), rhs.ty.clone());
        let (la, ra) = (self.is_arith(&lt.ty), self.is_arith(&rt.ty));
        let (li, ri) = (self.is_integer(&lt.ty), self.is_integer(&rt.ty));
        let (lp, rp) = (self.is_pointerish(&lt.ty), self.is_pointerish(&rt.ty));
        let ty = match op {
            BinOp::Add if lp && ri => Some(self.decay(&lt)),
            BinOp::Add if li && rp => Some(self.decay(&rt)),
            BinOp::Sub if lp && ri => Some(self.decay(&lt)),
            BinOp::Sub if lp && rp => Some(QualType::long()),
            BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div if la && ra => {
                Some(self.usual(&lt, &rt))
            }
            BinOp::Rem | BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor if li && ri => {
                Some(self.usual(&lt, &rt))
            }
            BinOp::Shl | BinOp::Shr if li && ri => Some(self.promote(&lt)),
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne
                if (la && ra) || (lp && rp) || (lp && ri) || (li && rp) =>
            {
                Some(QualType::int())
            }
            BinOp::And | BinOp::Or if (la || lp) && (ra || rp) => Some(QualType::int()),
            _ => None,
        };
        let Some(ty) = ty else {
            return err(
                span,
                format!(
                    "invalid operands to binary {} ('{}' and '{}')",
                    op_str(op),
                    self.type_str(&lt),
                    self.type_str(&rt)
                ),
            );
        };
        Ok(Expr::new(
            ExprKind::Binary {
                op,
                lhs: Box::new(lhs),
                rhs: Box::new(rhs),
            },
            ty,
            span,
        ))
    }

    fn cond_type(&self, a: &Expr, b: &Expr, span: Span) -> R<QualType> {
        if self.is_arith(&a.ty.ty) && self.is_arith(&b.ty.ty) {
            return Ok(self.usual(&a.ty, &b.ty));
        }
        if self.is_pointerish(&a.ty.ty) && self.is_pointerish(&b.ty.ty) {
            let void_a = matches!(self.pointee(&a.ty.ty).map(|t| t.ty), Some(Type::Void));
            return Ok(if void_a {
                self.decay(&b.ty)
            } else {
                self.decay(&a.ty)
            });
        }
        if self.is_pointerish(&a.ty.ty) && self.is_null_constant(b) {
            return Ok(self.decay(&a.ty));
        }
        if self.is_pointerish(&b.ty.ty) && self.is_null_constant(a) {
            return Ok(self.decay(&b.ty));
        }
        if self.same_type(&a.ty, &b.ty) {
            return Ok(QualType::new(a.ty.ty.clone()));
        }
        err(
            span,
            format!(
                "incompatible operand types in ?: ('{}' and '{}')",
                self.type_str(&a.ty),
                self.type_str(&b.ty)
            ),
        )
    }

    fn is_null_constant(&self, e: &Expr) -> bool {
        self.is_integer(&e.ty.ty) && self.fold_int(e) == Some(0)
    }

    /// Checks that `value` may be converted implicitly to `target` (by an
    /// assignment, an argument or a return).
    pub(super) fn check_convertible(
        &self,
        target: &QualType,
        value: &Expr,
        span: Span,
        what: &str,
    ) -> R<()> {
        let t = self.resolve(&target.ty);
        let v = &value.ty.ty;
        let ok = match t {
            Type::Void => false,
            Type::Int { .. } | Type::Real(_) => self.is_arith(v),
            Type::Pointer(_) => self.is_pointerish(v) || self.is_null_constant(value),
            Type::Array { .. } => self.is_pointerish(v),
            Type::Struct(_) | Type::Opaque(_) | Type::Named(_) => self.same_type(target, &value.ty),
        };
        if ok {
            return Ok(());
        }
        err(
            span,
            format!(
                "incompatible types in {what}: '{}' cannot be converted to '{}'",
                self.type_str(&value.ty),
                self.type_str(target)
            ),
        )
    }

    /// Lowers the target of an assignment or `++`/`--`.
    fn lvalue(&mut self, e: &ast::Expr, fx: &mut Effects) -> R<Expr> {
        let x = self.expr(e, fx)?;
        if !is_lvalue(&x) {
            return err(e.span, "expression is not assignable");
        }
        if matches!(self.resolve(&x.ty.ty), Type::Array { .. }) {
            return err(e.span, "an array is not assignable");
        }
        if x.ty.is_const {
            return err(e.span, "cannot assign to a const-qualified location");
        }
        Ok(x)
    }

    /// Builds the statement of `++x`, `x++`, `--x` or `x--` and returns it
    /// with the target.
    pub(super) fn incdec_stmt(&mut self, e: &ast::Expr, fx: &mut Effects) -> R<(Stmt, Expr)> {
        let (x, inc) = match &e.kind {
            ast::ExprKind::PostInc(x) | ast::ExprKind::PreInc(x) => (x, true),
            ast::ExprKind::PostDec(x) | ast::ExprKind::PreDec(x) => (x, false),
            _ => return err(e.span, "internal error: not an increment"),
        };
        self.allow_write(
            || {
                if inc {
                    "an increment (++)".into()
                } else {
                    "a decrement (--)".into()
                }
            },
            e.span,
        )?;
        let target = self.lvalue(x, fx)?;
        if !self.is_scalar(&target.ty.ty) {
            return err(
                e.span,
                "cannot increment or decrement a value that is not a number or pointer",
            );
        }
        let one = Expr::new(
            ExprKind::IntConst {
                value: 1,
                text: "1".into(),
            },
            QualType::int(),
            e.span,
        );
        let rhs = Expr::new(
            ExprKind::Binary {
                op: if inc { BinOp::Add } else { BinOp::Sub },
                lhs: Box::new(target.clone()),
                rhs: Box::new(one),
            },
            QualType::new(target.ty.ty.clone()),
            e.span,
        );
        let s = stmt(
            StmtKind::Assign {
                lhs: target.clone(),
                rhs,
                sugar: if inc {
                    AssignSugar::Increment
                } else {
                    AssignSugar::Decrement
                },
            },
            e.span,
        );
        Ok((s, target))
    }

    /// Builds the statement of `l op= r`: an `Assign`, a `Call` storing
    /// its result, or an `Alloc`. Effects of the operands go to `fx`.
    pub(super) fn assign_stmt(
        &mut self,
        op: ast::AssignOp,
        l: &ast::Expr,
        r: &ast::Expr,
        span: Span,
        fx: &mut Effects,
    ) -> R<Stmt> {
        self.allow_write(|| "an assignment".into(), span)?;
        let lhs = self.lvalue(l, fx)?;
        match op {
            None => {
                if let Some(s) = self.try_alloc(lhs.clone(), r, false, span, fx)? {
                    return Ok(s);
                }
                if let Some(s) = self.try_alloc_choice(lhs.clone(), r, span, fx)? {
                    return Ok(s);
                }
                if let Some((Callee::Proc(pid), args, callee_span)) = self.classify_call(r)? {
                    let call = self.proc_call(pid, args, callee_span, r.span, fx)?;
                    let ret = self.prog.procs[pid.index()].ret.clone();
                    // A stand-in for the result that cannot be mistaken for a null constant.
                    let value = Expr::new(ExprKind::StrConst(String::new()), ret, r.span);
                    self.check_convertible(&lhs.ty, &value, r.span, "assignment")?;
                    let StmtKind::Call { callee, args, .. } = call else {
                        return err(span, "internal error: expected a call");
                    };
                    return Ok(stmt(
                        StmtKind::Call {
                            result: Some(lhs),
                            callee,
                            args,
                            decl_init: false,
                        },
                        span,
                    ));
                }
                let lhs_ty = lhs.ty.ty.clone();
                let rhs = self.value_for(r, &lhs_ty, fx)?;
                self.check_convertible(&lhs.ty, &rhs, r.span, "assignment")?;
                Ok(stmt(
                    StmtKind::Assign {
                        lhs,
                        rhs,
                        sugar: AssignSugar::Plain,
                    },
                    span,
                ))
            }
            Some(op) => {
                let op = bin_op(op);
                let rhs = self.expr(r, fx)?;
                let value = self.binary(op, lhs.clone(), rhs, span)?;
                self.check_convertible(&lhs.ty, &value, span, "assignment")?;
                Ok(stmt(
                    StmtKind::Assign {
                        lhs,
                        rhs: value,
                        sugar: AssignSugar::Compound(op),
                    },
                    span,
                ))
            }
        }
    }

    /// Recognises a call and its callee without lowering anything.
    pub(super) fn classify_call<'e>(
        &self,
        e: &'e ast::Expr,
    ) -> R<Option<(Callee, &'e [ast::Expr], Span)>> {
        let ast::ExprKind::Call(callee, args) = &strip_parens(e).kind else {
            return Ok(None);
        };
        let c = self.callee(callee)?;
        Ok(Some((c, args, callee.span)))
    }

    fn callee(&self, callee: &ast::Expr) -> R<Callee> {
        let ast::ExprKind::Ident(name) = &strip_parens(callee).kind else {
            return err(
                callee.span,
                "function pointers are not supported: calls must name a function",
            );
        };
        if self.lookup_var(name).is_some() {
            return err(
                callee.span,
                format!("called object '{name}' is not a function"),
            );
        }
        let Some(&pid) = self.proc_names.get(name) else {
            return err(callee.span, format!("call to undeclared function '{name}'"));
        };
        let p = &self.prog.procs[pid.index()];
        if p.origin == ProcOrigin::System {
            match name.as_str() {
                "malloc" => return Ok(Callee::Malloc),
                "calloc" => return Ok(Callee::Calloc),
                "realloc" => return Ok(Callee::Realloc),
                "free" => return Ok(Callee::Free),
                _ => {}
            }
            if let Some((f, prec)) = MathFn::from_c_name(name) {
                return Ok(Callee::Intrinsic(f, prec));
            }
        }
        Ok(Callee::Proc(pid))
    }

    /// Lowers the arguments of a call to a procedure, checked against its
    /// prototype, and returns the `Call` statement (without result).
    pub(super) fn proc_call(
        &mut self,
        pid: ProcId,
        args: &[ast::Expr],
        callee_span: Span,
        span: Span,
        fx: &mut Effects,
    ) -> R<StmtKind> {
        let name = self.prog.procs[pid.index()].name.clone();
        self.allow_effect(|| format!("a call to '{name}'"), span)?;
        let lowered = self.call_args(pid, args, callee_span, span, fx)?;
        Ok(StmtKind::Call {
            result: None,
            callee: pid,
            args: lowered,
            decl_init: false,
        })
    }

    fn call_args(
        &mut self,
        pid: ProcId,
        args: &[ast::Expr],
        callee_span: Span,
        span: Span,
        fx: &mut Effects,
    ) -> R<Vec<Expr>> {
        let p = &self.prog.procs[pid.index()];
        let name = p.name.clone();
        let system = p.origin == ProcOrigin::System;
        let params: Vec<QualType> = p
            .params
            .iter()
            .map(|s| self.prog.symbols[s.index()].ty.clone())
            .collect();
        let variadic = self.proc_info.get(pid.index()).is_some_and(|i| i.variadic);
        if args.len() < params.len() || (args.len() > params.len() && !variadic) {
            return err(
                span,
                format!(
                    "wrong number of arguments in call to '{name}': expected {}{}, got {}",
                    if variadic { "at least " } else { "" },
                    params.len(),
                    args.len()
                ),
            );
        }
        let _ = callee_span;
        let mut out = Vec::new();
        let is_assert = system && name == "assert";
        for (i, a) in args.iter().enumerate() {
            self.in_assert = is_assert;
            let x = match params.get(i) {
                Some(t) if !system => {
                    let t = self.decay(t).ty;
                    self.value_for(a, &t, fx)
                }
                _ => self.expr_inner(a, fx, system),
            };
            self.in_assert = false;
            let x = x?;
            if is_assert {
                // A macro in C: it tests any scalar, a pointer included.
                if !self.is_scalar(&x.ty.ty) {
                    return err(a.span, "assert needs a scalar argument");
                }
            } else if let Some(t) = params.get(i) {
                self.check_convertible(
                    &self.decay(t),
                    &x,
                    a.span,
                    &format!("argument {} of '{name}'", i + 1),
                )?;
            } else if matches!(self.resolve(&x.ty.ty), Type::Void) {
                return err(a.span, "void value passed as an argument");
            }
            out.push(x);
        }
        Ok(out)
    }

    /// A call in a value context: an intrinsic, or a procedure call whose
    /// result goes to a temporary.
    fn value_call(
        &mut self,
        callee: &ast::Expr,
        args: &[ast::Expr],
        span: Span,
        fx: &mut Effects,
    ) -> R<Expr> {
        match self.callee(callee)? {
            Callee::Intrinsic(func, precision) => {
                let ast::ExprKind::Ident(name) = &strip_parens(callee).kind else {
                    return err(callee.span, "internal error: intrinsic without a name");
                };
                let Some(&pid) = self.proc_names.get(name.as_str()) else {
                    return err(callee.span, format!("call to undeclared function '{name}'"));
                };
                let ret = self.prog.procs[pid.index()].ret.clone();
                let args = self.call_args(pid, args, callee.span, span, fx)?;
                if args.len() != func.arity() {
                    return err(
                        span,
                        format!("wrong number of arguments in call to '{name}'"),
                    );
                }
                Ok(Expr::new(
                    ExprKind::Intrinsic {
                        call: Intrinsic {
                            func,
                            precision,
                            name: name.clone(),
                        },
                        args,
                    },
                    QualType::new(ret.ty),
                    span,
                ))
            }
            Callee::Malloc => err(span, "malloc is only supported as `p = malloc(...)`"),
            Callee::Calloc => err(span, "calloc is only supported as `p = calloc(...)`"),
            Callee::Realloc => err(span, "realloc is not supported"),
            Callee::Free => err(span, "free is only supported as a statement `free(p);`"),
            Callee::Proc(pid) => {
                let call = self.proc_call(pid, args, callee.span, span, fx)?;
                let ret = self.prog.procs[pid.index()].ret.clone();
                if matches!(self.resolve(&ret.ty), Type::Void) {
                    let name = &self.prog.procs[pid.index()].name;
                    return err(
                        span,
                        format!("the void result of '{name}' is used as a value"),
                    );
                }
                let var = self.declare_temp(QualType::new(ret.ty), None, span, fx)?;
                let StmtKind::Call { callee, args, .. } = call else {
                    return err(span, "internal error: expected a call");
                };
                fx.pre.push(stmt(
                    StmtKind::Call {
                        result: Some(var.clone()),
                        callee,
                        args,
                        decl_init: false,
                    },
                    span,
                ));
                Ok(var)
            }
        }
    }

    /// Lowers an operand evaluated only on one branch (`?:`, the right
    /// operand of `&&`/`||`): its effects, postfix ones included, all land
    /// in `fx.pre`, to be placed inside that branch.
    fn branch_expr(&mut self, e: &ast::Expr, fx: &mut Effects) -> R<Expr> {
        let saved = std::mem::replace(&mut self.post_as_pre, true);
        self.in_branch += 1;
        let r = self.expr(e, fx);
        self.in_branch -= 1;
        self.post_as_pre = saved;
        r
    }

    /// `il/split` for a value chosen by a condition whose branches have
    /// effects: `t` is declared, then `if (test) { then.0; t = then.1; }
    /// else { other.0; t = other.1; }`, and the value is `t`.
    fn value_by_branches(
        &mut self,
        test: Expr,
        then: (Vec<Stmt>, Expr),
        other: (Vec<Stmt>, Expr),
        ty: QualType,
        span: Span,
        fx: &mut Effects,
    ) -> R<Expr> {
        let var = self.declare_temp(QualType::new(ty.ty), None, span, fx)?;
        let branch = |(mut stmts, value): (Vec<Stmt>, Expr), me: &mut Self| {
            stmts.push(stmt(
                StmtKind::Assign {
                    lhs: var.clone(),
                    rhs: value,
                    sugar: AssignSugar::Plain,
                },
                span,
            ));
            let scope = me.new_scope(me.scope);
            // The branch's own temporaries (a call's result) are declared in
            // it, so they belong to its scope, not the procedure's.
            for s in &stmts {
                if let StmtKind::Decl { vars, .. } = &s.kind {
                    for d in vars {
                        let sym = &mut me.prog.symbols[d.sym.index()];
                        if sym.kind == SymKind::Temp {
                            let (old, name) = (sym.scope, sym.name.clone());
                            sym.scope = scope;
                            me.prog.scopes[old.index()].vars.remove(&name);
                            me.prog.scopes[scope.index()].vars.insert(name, d.sym);
                        }
                    }
                }
            }
            crate::il::Block {
                stmts,
                scope,
                closing_comments: Vec::new(),
                span,
            }
        };
        let then = branch(then, self);
        let other = branch(other, self);
        fx.pre.push(stmt(
            StmtKind::If {
                cond: test,
                then,
                other: Some(other),
            },
            span,
        ));
        Ok(var)
    }

    /// `il/mem-loop`: a statement `memcpy(d, s, bytes)` or `memset(d, 0,
    /// bytes)` of the system's `<string.h>` on typed memory (`d` a pointer
    /// or array of `T`, `s` of the same `T`, bytes a multiple of `sizeof(T)`)
    /// is the loop it stands for, `for (k = 0; k < count; k++) d[k] = s[k];`
    /// (or `= 0`), so the analyses and the derivatives see the elements it
    /// writes. `None` when the call is not of that form.
    fn copy_as_loop(
        &mut self,
        pid: crate::il::ProcId,
        call: &StmtKind,
        span: Span,
    ) -> Option<Stmt> {
        let p = &self.prog.procs[pid.index()];
        if p.origin != ProcOrigin::System {
            return None;
        }
        let name = p.name.clone();
        let StmtKind::Call {
            args, result: None, ..
        } = call
        else {
            return None;
        };
        let [dst, src, bytes] = args.as_slice() else {
            return None;
        };
        let uncast = |mut e: &Expr| {
            while let ExprKind::Cast { arg, .. } = &e.kind {
                e = arg;
            }
            e.clone()
        };
        let elem = |me: &Self, e: &Expr| -> Option<QualType> {
            match me.resolve(&e.ty.ty) {
                Type::Pointer(t) => Some((**t).clone()),
                Type::Array { elem, .. } => Some((**elem).clone()),
                _ => None,
            }
        };
        let dst = uncast(dst);
        let t = elem(self, &dst)?;
        let same = |a: &QualType, b: &QualType| self.same_type(a, b);
        if matches!(self.resolve(&t.ty), Type::Void | Type::Opaque(_)) || t.is_const {
            return None;
        }
        let value = match name.as_str() {
            "memcpy" => {
                let src = uncast(src);
                if !same(&elem(self, &src)?, &t) {
                    return None;
                }
                Some(src)
            }
            "memset" => {
                let zero = matches!(uncast(src).kind, ExprKind::IntConst { value: 0, .. });
                if !zero {
                    return None;
                }
                None
            }
            _ => return None,
        };
        // The element count: `n * sizeof(T)`, `sizeof(T) * n`, `sizeof a`
        // for an array of T, or bytes / sizeof(T).
        let size_of = |e: &Expr| match &e.kind {
            ExprKind::SizeOfType(q) => same(q, &t),
            ExprKind::SizeOfExpr(x) => same(&x.ty, &t),
            _ => false,
        };
        let bytes = uncast(bytes);
        let count = match &bytes.kind {
            ExprKind::Binary {
                op: BinOp::Mul,
                lhs,
                rhs,
            } if size_of(rhs) => uncast(lhs),
            ExprKind::Binary {
                op: BinOp::Mul,
                lhs,
                rhs,
            } if size_of(lhs) => uncast(rhs),
            _ if size_of(&bytes) => Expr::int(1, span),
            ExprKind::SizeOfExpr(x) => match self.resolve(&x.ty.ty) {
                Type::Array { elem, len: Some(l) } if same(elem, &t) => {
                    Expr::int(l.value? as i64, span)
                }
                _ => return None,
            },
            _ => {
                let size = Expr::new(ExprKind::SizeOfType(t.clone()), QualType::size_t(), span);
                Expr::new(
                    ExprKind::Binary {
                        op: BinOp::Div,
                        lhs: Box::new(bytes.clone()),
                        rhs: Box::new(size),
                    },
                    QualType::size_t(),
                    span,
                )
            }
        };
        if !matches!(self.resolve(&count.ty.ty), Type::Int { .. }) {
            return None;
        }
        let mut fill = |me: &mut Self, k: Expr| {
            let lhs = me.element(dst.clone(), k.clone(), &t, span);
            match &value {
                Some(src) => {
                    let rhs = me.element(src.clone(), k, &t, span);
                    me.copy_fill(lhs, rhs, &t, span)
                }
                // `memset(d, 0, …)` on reals, integers, arrays and structs
                // of them: every scalar set to zero.
                None => me.zero_fill(lhs, &t, span),
            }
        };
        // One element (`memcpy(&r2, &r1, sizeof(Rec))`): no loop, whose
        // zero-trip path would leave the element unwritten for the
        // analyses (`warn/uninit`).
        if let ExprKind::IntConst { value: 1, .. } = count.kind {
            let mut stmts = fill(self, Expr::int(0, span))?;
            if stmts.len() == 1 {
                return stmts.pop();
            }
            return Some(stmt(
                StmtKind::Block(crate::il::Block {
                    stmts,
                    scope: self.scope,
                    closing_comments: Vec::new(),
                    span,
                }),
                span,
            ));
        }
        self.index_loop(count, span, &mut fill)
    }

    /// `base[k]`, of element type `t` (not const: it is stored into);
    /// `(&x)[0]` is `x`.
    fn element(&self, base: Expr, k: Expr, t: &QualType, span: Span) -> Expr {
        if let (ExprKind::AddrOf(x), ExprKind::IntConst { value: 0, .. }) = (&base.kind, &k.kind) {
            return Expr {
                ty: QualType {
                    is_const: false,
                    ..t.clone()
                },
                ..(**x).clone()
            };
        }
        Expr::new(
            ExprKind::Index {
                base: Box::new(base),
                index: Box::new(k),
            },
            QualType {
                is_const: false,
                ..t.clone()
            },
            span,
        )
    }

    /// `lhs = rhs` for values of type `t`; an array (a row of a 2-D
    /// array) element by element, since C does not assign arrays.
    fn copy_fill(&mut self, lhs: Expr, rhs: Expr, t: &QualType, span: Span) -> Option<Vec<Stmt>> {
        match self.resolve(&t.ty).clone() {
            Type::Array {
                elem,
                len: Some(len),
            } => {
                let n = len.value? as i64;
                let count = Expr::new(
                    ExprKind::IntConst {
                        value: n,
                        text: n.to_string(),
                    },
                    QualType::int(),
                    span,
                );
                let lp = self.index_loop(count, span, &mut |me, k| {
                    let to = me.element(lhs.clone(), k.clone(), &elem, span);
                    let from = me.element(rhs.clone(), k, &elem, span);
                    me.copy_fill(to, from, &elem, span)
                })?;
                Some(vec![lp])
            }
            Type::Array { .. } => None,
            _ => Some(vec![stmt(
                StmtKind::Assign {
                    lhs,
                    rhs,
                    sugar: AssignSugar::Plain,
                },
                span,
            )]),
        }
    }

    /// Statements that set every scalar of `lhs` (of type `t`) to zero:
    /// loops over array dimensions, one assignment per struct field. `None`
    /// for a pointer or anything else a zero byte pattern is not a value
    /// the IL can assign.
    fn zero_fill(&mut self, lhs: Expr, t: &QualType, span: Span) -> Option<Vec<Stmt>> {
        let plain = QualType {
            is_const: false,
            ..t.clone()
        };
        let assign = |rhs: Expr| {
            vec![stmt(
                StmtKind::Assign {
                    lhs: lhs.clone(),
                    rhs,
                    sugar: AssignSugar::Plain,
                },
                span,
            )]
        };
        match self.resolve(&t.ty).clone() {
            Type::Real(_) => Some(assign(Expr::new(
                ExprKind::RealConst {
                    value: 0.0,
                    text: "0.0".into(),
                },
                plain,
                span,
            ))),
            Type::Int { .. } => Some(assign(Expr::new(
                ExprKind::IntConst {
                    value: 0,
                    text: "0".into(),
                },
                plain,
                span,
            ))),
            Type::Array {
                elem,
                len: Some(len),
            } => {
                let n = len.value? as i64;
                let count = Expr::new(
                    ExprKind::IntConst {
                        value: n,
                        text: n.to_string(),
                    },
                    QualType::int(),
                    span,
                );
                let lp = self.index_loop(count, span, &mut |me, k| {
                    let at = me.element(lhs.clone(), k, &elem, span);
                    me.zero_fill(at, &elem, span)
                })?;
                Some(vec![lp])
            }
            Type::Struct(sid) => {
                let fields = self.prog.structs[sid.index()].fields.clone();
                let mut out = Vec::new();
                for (i, f) in fields.iter().enumerate() {
                    let at = Expr::new(
                        ExprKind::Field {
                            base: Box::new(lhs.clone()),
                            strukt: sid,
                            field: i,
                        },
                        QualType {
                            is_const: false,
                            ..f.ty.clone()
                        },
                        span,
                    );
                    out.extend(self.zero_fill(at, &f.ty, span)?);
                }
                Some(out)
            }
            _ => None,
        }
    }

    /// `for (k = 0; k < count; k++) BODY(k)`, with `k` a fresh index of
    /// `count`'s type declared in the loop's own scope, where the body's
    /// own temporaries go too.
    fn index_loop(
        &mut self,
        count: Expr,
        span: Span,
        body: &mut dyn FnMut(&mut Self, Expr) -> Option<Vec<Stmt>>,
    ) -> Option<Stmt> {
        let scope = self.new_scope(self.scope);
        let saved = std::mem::replace(&mut self.scope, scope);
        let index_ty = QualType {
            is_const: false,
            ..count.ty.clone()
        };
        let k = self.new_temp(index_ty.clone(), span);
        let Ok(k) = k else {
            self.scope = saved;
            return None;
        };
        {
            let sym = &mut self.prog.symbols[k.index()];
            let (old, name) = (sym.scope, sym.name.clone());
            sym.scope = scope;
            self.prog.scopes[old.index()].vars.remove(&name);
            self.prog.scopes[scope.index()].vars.insert(name, k);
        }
        let kv = Expr::new(ExprKind::Var(k), index_ty.clone(), span);
        let stmts = body(self, kv.clone());
        self.scope = saved;
        let stmts = stmts?;
        let int = |v: i64, ty: &QualType| {
            Expr::new(
                ExprKind::IntConst {
                    value: v,
                    text: v.to_string(),
                },
                ty.clone(),
                span,
            )
        };
        let init = stmt(
            StmtKind::Decl {
                base: index_ty.clone(),
                storage: Storage::Auto,
                vars: vec![Declarator {
                    sym: k,
                    init: Some(crate::il::Init::Expr(int(0, &index_ty))),
                }],
            },
            span,
        );
        let step = stmt(
            StmtKind::Assign {
                lhs: kv.clone(),
                rhs: Expr::new(
                    ExprKind::Binary {
                        op: BinOp::Add,
                        lhs: Box::new(kv.clone()),
                        rhs: Box::new(int(1, &index_ty)),
                    },
                    index_ty.clone(),
                    span,
                ),
                sugar: AssignSugar::Increment,
            },
            span,
        );
        let cond = Expr::new(
            ExprKind::Binary {
                op: BinOp::Lt,
                lhs: Box::new(kv.clone()),
                rhs: Box::new(count),
            },
            QualType::int(),
            span,
        );
        Some(stmt(
            StmtKind::Loop {
                header: LoopHeader::For {
                    init: vec![init],
                    cond: Some(cond),
                    step: vec![step],
                },
                body: crate::il::Block {
                    stmts,
                    scope,
                    closing_comments: Vec::new(),
                    span,
                },
            },
            span,
        ))
    }

    /// Declares a fresh temporary (`il/split`) in `fx.pre`, initialised or
    /// not, and returns a reference to it.
    fn declare_temp(
        &mut self,
        ty: QualType,
        init: Option<Expr>,
        span: Span,
        fx: &mut Effects,
    ) -> R<Expr> {
        let tmp = self.new_temp(ty.clone(), span)?;
        fx.pre.push(stmt(
            StmtKind::Decl {
                base: ty.clone(),
                storage: Storage::Auto,
                vars: vec![Declarator {
                    sym: tmp,
                    init: init.map(crate::il::Init::Expr),
                }],
            },
            span,
        ));
        Ok(Expr::new(ExprKind::Var(tmp), ty, span))
    }

    /// Does a compound literal declared now live as long as the statement
    /// being lowered (its temporaries go to the statement's own block, not
    /// to a `?:` branch or a loop body made for a condition)?
    fn literal_outlives_statement(&self) -> bool {
        self.in_branch == 0 && self.f.as_ref().is_some_and(|f| f.temp_scope == self.scope)
    }

    /// A fresh temporary in the innermost block's scope.
    pub(super) fn new_temp(&mut self, ty: QualType, span: Span) -> R<crate::il::SymId> {
        self.new_named_temp("aioli_tmp", SymKind::Temp, ty, span)
    }

    /// A fresh variable `base`, `base1`, ... of kind `kind` in the
    /// innermost block's scope.
    pub(super) fn new_named_temp(
        &mut self,
        base: &str,
        kind: SymKind,
        ty: QualType,
        span: Span,
    ) -> R<crate::il::SymId> {
        let Some(f) = &self.f else {
            return err(span, "a call here is not supported");
        };
        let scope = f.temp_scope;
        let mut n = f.temp_count;
        let name = loop {
            let name = if n == 0 {
                base.to_string()
            } else {
                format!("{base}{n}")
            };
            n += 1;
            if self.lookup_var(&name).is_none()
                && !self.proc_names.contains_key(&name)
                && !self.prog.macro_names().any(|m| m == name)
            {
                break name;
            }
        };
        if let Some(f) = &mut self.f {
            f.temp_count = n;
        }
        Ok(self.add_symbol(Symbol {
            name,
            ty,
            kind,
            storage: Storage::Auto,
            scope,
            span,
        }))
    }

    /// `p = n > 0 ? malloc(...) : NULL`: an allocation in a branch of
    /// `?:` becomes an if/else of two assignments; `None` when `r` is not
    /// such a choice.
    pub(super) fn try_alloc_choice(
        &mut self,
        lhs: Expr,
        r: &ast::Expr,
        span: Span,
        fx: &mut Effects,
    ) -> R<Option<Stmt>> {
        let ast::ExprKind::Conditional(c, a, b) = &strip_parens(r).kind else {
            return Ok(None);
        };
        if !self.is_allocation(a)? && !self.is_allocation(b)? {
            return Ok(None);
        }
        let cond = self.expr(c, fx)?;
        let branch = |this: &mut Self, e: &ast::Expr| -> R<crate::il::Block> {
            let mut bfx = Effects::default();
            let s = match this.try_alloc(lhs.clone(), e, false, span, &mut bfx)? {
                Some(s) => s,
                None => {
                    let rhs = this.expr(e, &mut bfx)?;
                    this.check_convertible(&lhs.ty, &rhs, e.span, "assignment")?;
                    stmt(
                        StmtKind::Assign {
                            lhs: lhs.clone(),
                            rhs,
                            sugar: AssignSugar::Plain,
                        },
                        span,
                    )
                }
            };
            if !bfx.pre.is_empty() || !bfx.post.is_empty() {
                return err(
                    e.span,
                    "an allocation in a branch of ?: is only supported where the branches have no other effect",
                );
            }
            let scope = this.new_scope(this.scope);
            Ok(crate::il::Block {
                stmts: vec![s],
                scope,
                closing_comments: Vec::new(),
                span: e.span,
            })
        };
        let then = branch(self, a)?;
        let other = branch(self, b)?;
        Ok(Some(stmt(
            StmtKind::If {
                cond,
                then,
                other: Some(other),
            },
            span,
        )))
    }

    /// Is `e` a call of malloc or calloc, possibly cast?
    pub(super) fn is_allocation(&self, e: &ast::Expr) -> R<bool> {
        let stripped = strip_parens(e);
        let call = match &stripped.kind {
            ast::ExprKind::Cast(_, inner) => strip_parens(inner),
            _ => stripped,
        };
        Ok(matches!(
            self.classify_call(call)?,
            Some((Callee::Malloc | Callee::Calloc, _, _))
        ))
    }

    /// `target = malloc(...)` / `calloc(...)`, possibly with a cast; `None`
    /// when `r` is not an allocation.
    pub(super) fn try_alloc(
        &mut self,
        target: Expr,
        r: &ast::Expr,
        decl_init: bool,
        span: Span,
        fx: &mut Effects,
    ) -> R<Option<Stmt>> {
        let stripped = strip_parens(r);
        let (cast_type, call) = match &stripped.kind {
            ast::ExprKind::Cast(t, inner) => (Some(t), strip_parens(inner)),
            _ => (None, stripped),
        };
        let Some((callee, args, _)) = self.classify_call(call)? else {
            return Ok(None);
        };
        let zeroed = match callee {
            Callee::Malloc => false,
            Callee::Calloc => true,
            Callee::Realloc => return err(call.span, "realloc is not supported"),
            _ => return Ok(None),
        };
        self.allow_effect(|| "an allocation".into(), span)?;
        let cast = match cast_type {
            Some(t) => Some(self.type_name(t)?),
            None => None,
        };
        let elem = match &cast {
            Some(c) => self.pointee(&c.ty),
            None => self.pointee(&target.ty.ty),
        };
        let Some(elem) = elem else {
            return err(
                span,
                "the result of an allocation must be stored in a pointer",
            );
        };
        if !self.is_pointerish(&target.ty.ty)
            || matches!(self.resolve(&target.ty.ty), Type::Array { .. })
        {
            return err(
                span,
                "the result of an allocation must be stored in a pointer",
            );
        }
        let size_of_elem = Expr::new(ExprKind::SizeOfType(elem.clone()), QualType::size_t(), span);
        let (count, form) = if zeroed {
            if args.len() != 2 {
                return err(call.span, "calloc takes 2 arguments");
            }
            let n = self.expr(&args[0], fx)?;
            let size = self.expr(&args[1], fx)?;
            self.check_int_arg(&n)?;
            self.check_int_arg(&size)?;
            let count = if self.is_size_of(&size, &elem) {
                n.clone()
            } else {
                let bytes = self.binary(BinOp::Mul, n.clone(), size.clone(), call.span)?;
                self.binary(BinOp::Div, bytes, size_of_elem, call.span)?
            };
            (
                count,
                AllocForm::Calloc {
                    count: n,
                    size,
                    cast: cast.clone(),
                },
            )
        } else {
            if args.len() != 1 {
                return err(call.span, "malloc takes 1 argument");
            }
            let bytes = self.expr(&args[0], fx)?;
            self.check_int_arg(&bytes)?;
            let count = match &bytes.kind {
                ExprKind::Binary {
                    op: BinOp::Mul,
                    lhs,
                    rhs,
                } if self.is_size_of(rhs, &elem) => (**lhs).clone(),
                ExprKind::Binary {
                    op: BinOp::Mul,
                    lhs,
                    rhs,
                } if self.is_size_of(lhs, &elem) => (**rhs).clone(),
                _ if self.is_size_of(&bytes, &elem) => Expr::new(
                    ExprKind::IntConst {
                        value: 1,
                        text: "1".into(),
                    },
                    QualType::int(),
                    bytes.span,
                ),
                _ => self.binary(BinOp::Div, bytes.clone(), size_of_elem, call.span)?,
            };
            (
                count,
                AllocForm::Malloc {
                    bytes,
                    cast: cast.clone(),
                },
            )
        };
        Ok(Some(stmt(
            StmtKind::Alloc {
                target,
                elem,
                count,
                zeroed,
                form,
                decl_init,
            },
            span,
        )))
    }

    fn check_int_arg(&self, e: &Expr) -> R<()> {
        if self.is_integer(&e.ty.ty) {
            Ok(())
        } else {
            err(e.span, "the size of an allocation must be an integer")
        }
    }

    fn is_size_of(&self, e: &Expr, elem: &QualType) -> bool {
        match &e.kind {
            ExprKind::SizeOfType(t) => self.same_type(t, elem),
            ExprKind::SizeOfExpr(x) => self.same_type(&x.ty, elem),
            _ => false,
        }
    }

    /// Lowers an expression statement into `out`.
    pub(super) fn expr_stmt(&mut self, e: &ast::Expr, out: &mut Vec<Stmt>) -> R<()> {
        let e = strip_parens(e);
        let span = e.span;
        match &e.kind {
            ast::ExprKind::Comma(a, b) => {
                self.expr_stmt(a, out)?;
                self.expr_stmt(b, out)
            }
            ast::ExprKind::Cast(t, inner) => {
                let ty = self.type_name(t)?;
                let inner_acts = matches!(
                    strip_parens(inner).kind,
                    ast::ExprKind::Call(..)
                        | ast::ExprKind::Assign(..)
                        | ast::ExprKind::Comma(..)
                        | ast::ExprKind::PostInc(_)
                        | ast::ExprKind::PreInc(_)
                        | ast::ExprKind::PostDec(_)
                        | ast::ExprKind::PreDec(_)
                );
                if matches!(self.resolve(&ty.ty), Type::Void)
                    && let ast::ExprKind::Ident(name) = &strip_parens(inner).kind
                    && self.lookup_var(name).is_none()
                    && self.proc_names.contains_key(name)
                {
                    // `(void)f;` marks a static function used; no value.
                    let mention = self.prog.mention_function(name, span);
                    out.push(stmt(StmtKind::Discard(mention), span));
                    Ok(())
                } else if matches!(self.resolve(&ty.ty), Type::Void) && inner_acts {
                    // `(void)f(x);` is the call with its result ignored.
                    self.expr_stmt(inner, out)
                } else {
                    self.unused_value(e, out)
                }
            }
            ast::ExprKind::Assign(op, l, r) => {
                let mut fx = Effects::default();
                let s = self.assign_stmt(*op, l, r, span, &mut fx)?;
                out.append(&mut fx.pre);
                out.push(s);
                out.append(&mut fx.post);
                Ok(())
            }
            ast::ExprKind::PostInc(_)
            | ast::ExprKind::PreInc(_)
            | ast::ExprKind::PostDec(_)
            | ast::ExprKind::PreDec(_) => {
                let mut fx = Effects::default();
                let (s, _) = self.incdec_stmt(e, &mut fx)?;
                out.append(&mut fx.pre);
                out.push(s);
                out.append(&mut fx.post);
                Ok(())
            }
            ast::ExprKind::Call(callee, args) => {
                let mut fx = Effects::default();
                let s = match self.callee(callee)? {
                    Callee::Proc(pid) => {
                        let k = self.proc_call(pid, args, callee.span, span, &mut fx)?;
                        match self.copy_as_loop(pid, &k, span) {
                            Some(l) => l,
                            None => stmt(k, span),
                        }
                    }
                    Callee::Free => {
                        self.allow_effect(|| "a call to 'free'".into(), span)?;
                        if args.len() != 1 {
                            return err(span, "free takes 1 argument");
                        }
                        let ptr = self.expr(&args[0], &mut fx)?;
                        if !self.is_pointerish(&ptr.ty.ty) {
                            return err(args[0].span, "free needs a pointer");
                        }
                        stmt(StmtKind::Free { ptr }, span)
                    }
                    Callee::Malloc => {
                        return err(span, "malloc is only supported as `p = malloc(...)`");
                    }
                    Callee::Calloc => {
                        return err(span, "calloc is only supported as `p = calloc(...)`");
                    }
                    Callee::Realloc => return err(span, "realloc is not supported"),
                    Callee::Intrinsic(..) => return self.unused_value(e, out),
                };
                out.append(&mut fx.pre);
                out.push(s);
                out.append(&mut fx.post);
                Ok(())
            }
            _ => self.unused_value(e, out),
        }
    }

    /// An expression statement whose value is thrown away: its effects
    /// become statements; an effect-free expression is kept as a `Discard`
    /// (`il/discard`: `(void)n;` must survive, or the output would warn).
    fn unused_value(&mut self, e: &ast::Expr, out: &mut Vec<Stmt>) -> R<()> {
        let mut fx = Effects::default();
        let value = self.expr(e, &mut fx)?;
        let has_effects = !fx.pre.is_empty() || !fx.post.is_empty();
        out.append(&mut fx.pre);
        out.append(&mut fx.post);
        if !has_effects {
            out.push(stmt(StmtKind::Discard(value), e.span));
        }
        Ok(())
    }
}

fn char_ptr() -> QualType {
    QualType {
        ty: Type::Int {
            kind: IntKind::Char,
            unsigned: false,
        },
        is_const: true,
    }
    .pointer_to()
}

/// A reference: something that designates a storage location.
pub(super) fn is_lvalue(e: &Expr) -> bool {
    matches!(
        e.kind,
        ExprKind::Var(_) | ExprKind::Index { .. } | ExprKind::Field { .. } | ExprKind::Deref(_)
    )
}

/// Parses an integer literal: its value and C type.
pub(super) fn parse_int(text: &str) -> Option<(i64, Type)> {
    let lower = text.to_ascii_lowercase();
    let digits_end = lower.trim_end_matches(['u', 'l']).len();
    let (digits, suffix) = lower.split_at(digits_end);
    let unsigned = suffix.matches('u').count();
    let longs = suffix.matches('l').count();
    if unsigned > 1 || longs > 2 || (longs == 2 && !suffix.contains("ll")) {
        return None;
    }
    let (radix, body) = if let Some(h) = digits.strip_prefix("0x") {
        (16, h)
    } else if digits.len() > 1 && digits.starts_with('0') {
        (8, &digits[1..])
    } else {
        (10, digits)
    };
    if body.is_empty() {
        return None;
    }
    let v = u64::from_str_radix(body, radix).ok()?;
    let int = |kind, unsigned| Type::Int { kind, unsigned };
    let decimal = radix == 10;
    let ty = match (unsigned == 1, longs) {
        (false, 0) => {
            if v <= i32::MAX as u64 {
                int(IntKind::Int, false)
            } else if !decimal && v <= u32::MAX as u64 {
                int(IntKind::Int, true)
            } else if v <= i64::MAX as u64 {
                int(IntKind::Long, false)
            } else if !decimal {
                int(IntKind::Long, true)
            } else {
                return None;
            }
        }
        (true, 0) => {
            if v <= u32::MAX as u64 {
                int(IntKind::Int, true)
            } else {
                int(IntKind::Long, true)
            }
        }
        (false, 1) => {
            if v <= i64::MAX as u64 {
                int(IntKind::Long, false)
            } else if !decimal {
                int(IntKind::Long, true)
            } else {
                return None;
            }
        }
        (true, 1) => int(IntKind::Long, true),
        (false, _) => {
            if v <= i64::MAX as u64 {
                int(IntKind::LongLong, false)
            } else if !decimal {
                int(IntKind::LongLong, true)
            } else {
                return None;
            }
        }
        (true, _) => int(IntKind::LongLong, true),
    };
    Some((v as i64, ty))
}

/// Parses a floating literal: its value and precision.
pub(super) fn parse_float(text: &str) -> Option<(f64, RealKind)> {
    let is_hex = text.starts_with("0x") || text.starts_with("0X");
    let (body, kind) = match text.chars().last()? {
        'f' | 'F' => (&text[..text.len() - 1], RealKind::Float),
        'l' | 'L' => (&text[..text.len() - 1], RealKind::LongDouble),
        _ => (text, RealKind::Double),
    };
    let value = if is_hex {
        parse_hex_float(&body[2..])?
    } else {
        body.parse::<f64>().ok()?
    };
    Some((value, kind))
}

fn parse_hex_float(s: &str) -> Option<f64> {
    let lower = s.to_ascii_lowercase();
    let (mant, exp) = lower.split_once('p')?;
    let exp: i32 = exp.parse().ok()?;
    let (int, frac) = mant.split_once('.').unwrap_or((mant, ""));
    let mut v = 0f64;
    for c in int.chars() {
        v = v * 16.0 + c.to_digit(16)? as f64;
    }
    let mut scale = 1.0 / 16.0;
    for c in frac.chars() {
        v += c.to_digit(16)? as f64 * scale;
        scale /= 16.0;
    }
    Some(v * 2f64.powi(exp))
}

/// Parses a character literal (`'a'`, `'\n'`, `'\x41'`, `'\0'`).
pub(super) fn parse_char(text: &str) -> Option<i64> {
    let inner = text.strip_prefix('\'')?.strip_suffix('\'')?;
    let mut chars = inner.chars();
    let c = chars.next()?;
    let value = if c == '\\' {
        let e = chars.next()?;
        match e {
            'n' => 10,
            't' => 9,
            'r' => 13,
            '0'..='7' => {
                let mut v = e.to_digit(8)? as i64;
                for _ in 0..2 {
                    match chars.clone().next().and_then(|d| d.to_digit(8)) {
                        Some(d) => {
                            v = v * 8 + d as i64;
                            chars.next();
                        }
                        None => break,
                    }
                }
                v
            }
            'x' => {
                let rest: String = chars.by_ref().collect();
                if rest.is_empty() {
                    return None;
                }
                i64::from_str_radix(&rest, 16).ok()?
            }
            'a' => 7,
            'b' => 8,
            'f' => 12,
            'v' => 11,
            '\\' | '\'' | '"' | '?' => e as i64,
            _ => return None,
        }
    } else {
        if !c.is_ascii() {
            return None;
        }
        c as i64
    };
    if chars.next().is_some() {
        return None;
    }
    Some(if value > 127 && value < 256 {
        value - 256
    } else {
        value
    })
}

/// The integer constant 0.
fn zero(span: Span) -> Expr {
    Expr::new(
        ExprKind::IntConst {
            value: 0,
            text: "0".into(),
        },
        QualType::int(),
        span,
    )
}

/// Is this expression's value already 0 or 1 (a comparison, `!`, `&&`, `||`)?
fn is_truth_value(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Binary { op, .. } => op.is_truth_valued(),
        ExprKind::Unary { op, .. } => *op == crate::il::UnOp::Not,
        _ => false,
    }
}
