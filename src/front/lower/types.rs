//! Types: declaration specifiers, declarators, struct definitions, the usual
//! arithmetic conversions, type comparison and integer constant folding.

use super::{Lowerer, R, err};
use crate::front::ast;
use crate::front::source::Span;
use crate::il::{
    ArrayLen, BinOp, Expr, ExprKind, Field, IntKind, QualType, RealKind, StructDef, StructId, Type,
    UnOp,
};

/// The declaration specifiers of one declaration, interpreted.
pub(super) struct Specs {
    pub ty: QualType,
    pub storage: Option<ast::StorageClass>,
    pub inline: bool,
}

/// One parameter of a function declarator.
#[derive(Clone, Debug)]
pub(super) struct ParamInfo {
    pub name: Option<String>,
    pub ty: QualType,
    pub span: Span,
}

/// A function signature read from a declarator.
#[derive(Clone, Debug)]
pub(super) struct FnSig {
    pub ret: QualType,
    pub params: Vec<ParamInfo>,
    pub variadic: bool,
}

/// What a declarator declares.
pub(super) enum Derived {
    Value(QualType),
    Function(FnSig),
}

/// Where a declarator appears: decides what its array lengths may be.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum DeclCtx {
    Global,
    Local,
    Param,
    Field,
    TypeName,
}

impl Lowerer<'_> {
    /// Interprets declaration specifiers. `allow_anonymous` lets a struct
    /// without a tag be defined (only directly in a typedef).
    pub(super) fn decl_specs(&mut self, specs: &ast::DeclSpecs, allow_anonymous: bool) -> R<Specs> {
        let mut storage = None;
        let mut inline = false;
        let mut is_const = false;
        let mut basics: Vec<(ast::BasicType, Span)> = Vec::new();
        let mut other: Option<Type> = None;
        let mut other_count = 0;
        for item in &specs.items {
            match item {
                ast::DeclSpec::Storage(c, span) => {
                    if storage.is_some() {
                        return err(*span, "multiple storage classes in one declaration");
                    }
                    storage = match c {
                        ast::StorageClass::Auto | ast::StorageClass::Register => None,
                        c => Some(*c),
                    };
                    let param_register = self.in_param && *c == ast::StorageClass::Register;
                    if matches!(c, ast::StorageClass::Auto | ast::StorageClass::Register)
                        && self.f.is_none()
                        && !param_register
                    {
                        return err(*span, "invalid storage class at file scope");
                    }
                }
                ast::DeclSpec::Qualifier(q, span) => match q {
                    ast::Qualifier::Const => is_const = true,
                    ast::Qualifier::Volatile => return err(*span, "volatile is not supported"),
                    ast::Qualifier::Restrict => {}
                },
                ast::DeclSpec::Inline(_) => inline = true,
                ast::DeclSpec::Type(t) => match t {
                    ast::TypeSpecifier::Basic(b, span) => basics.push((*b, *span)),
                    ast::TypeSpecifier::Struct(s) => {
                        other_count += 1;
                        other = Some(self.struct_spec(s, allow_anonymous)?);
                    }
                    ast::TypeSpecifier::Union(span) => {
                        return err(*span, "unions are not supported");
                    }
                    ast::TypeSpecifier::Enum(e) => {
                        other_count += 1;
                        other = Some(self.enum_spec(e)?);
                    }
                    ast::TypeSpecifier::Named(name, span) => {
                        other_count += 1;
                        match self.typedef_names.get(name) {
                            Some(id) => other = Some(Type::Named(*id)),
                            None => return err(*span, format!("unknown type name '{name}'")),
                        }
                    }
                },
            }
        }
        let ty = match other {
            Some(t) => {
                if other_count > 1 || !basics.is_empty() {
                    return err(specs.span, "invalid combination of type specifiers");
                }
                t
            }
            None => basic_type(&basics, specs.span)?,
        };
        Ok(Specs {
            ty: QualType { ty, is_const },
            storage,
            inline,
        })
    }

    /// `il/enum`: the type is `int`; a list defines its constants in the
    /// current scope (and, at file scope, an item to print).
    fn enum_spec(&mut self, e: &ast::EnumSpec) -> R<Type> {
        // The type `cc` gives it: `unsigned int` when no enumerator is
        // negative, `int` otherwise (C99 leaves it to the compiler).
        let int_type = |unsigned: bool| Type::Int {
            kind: crate::il::IntKind::Int,
            unsigned,
        };
        let Some(list) = &e.enumerators else {
            let unsigned = e
                .tag
                .as_ref()
                .and_then(|(t, _)| self.enum_tags.get(t).copied())
                .unwrap_or(false);
            return Ok(int_type(unsigned));
        };
        let mut next: i64 = 0;
        let mut constants = Vec::new();
        for item in list {
            let value = match &item.value {
                Some(v) => {
                    let saved = self.forbid.replace("an enumerator's value");
                    let mut fx = super::expr::Effects::default();
                    let lowered = self.expr(v, &mut fx);
                    self.forbid = saved;
                    let lowered = lowered?;
                    match self
                        .fold_int(&lowered)
                        .filter(|_| self.is_integer(&lowered.ty.ty))
                    {
                        Some(k) if i32::try_from(k).is_ok() => k,
                        Some(_) => return err(v.span, "an enumerator's value must fit in an int"),
                        None => {
                            return err(
                                v.span,
                                "an enumerator's value must be an integer constant",
                            );
                        }
                    }
                }
                None => next,
            };
            if i32::try_from(value).is_err() {
                return err(item.span, "an enumerator's value must fit in an int");
            }
            let scope = self.scope;
            let taken = self.prog.scopes[scope.index()]
                .vars
                .contains_key(&item.name)
                || self
                    .enum_constants
                    .contains_key(&(scope, item.name.clone()))
                || (self.f.is_none() && self.proc_names.contains_key(&item.name));
            if taken {
                return err(item.span, format!("redefinition of '{}'", item.name));
            }
            self.enum_constants
                .insert((scope, item.name.clone()), value);
            constants.push(crate::il::EnumConstant {
                name: item.name.clone(),
                value,
                written: item.value.is_some(),
            });
            next = value + 1;
        }
        let unsigned = constants.iter().all(|c| c.value >= 0);
        if let Some((t, _)) = &e.tag {
            self.enum_tags.insert(t.clone(), unsigned);
        }
        if self.f.is_none() {
            self.new_enums.push(crate::il::ItemKind::Enum {
                tag: e.tag.as_ref().map(|(t, _)| t.clone()),
                constants,
            });
        }
        Ok(int_type(unsigned))
    }

    fn struct_spec(&mut self, s: &ast::StructSpec, allow_anonymous: bool) -> R<Type> {
        let Some(fields) = &s.fields else {
            let Some((tag, _)) = &s.tag else {
                return err(s.span, "struct without a tag or fields");
            };
            if let Some(id) = self.struct_tags.get(tag) {
                return Ok(Type::Struct(*id));
            }
            if self.defined_tags.contains(tag) && self.f.is_none() {
                return Ok(Type::Struct(self.new_struct(Some(tag.clone()), s.span)));
            }
            return Ok(Type::Opaque(format!("struct {tag}")));
        };
        if self.f.is_some() {
            return err(
                s.span,
                "struct definitions inside functions are not supported",
            );
        }
        let id = match &s.tag {
            None if !allow_anonymous => {
                return err(
                    s.span,
                    "anonymous structs are only supported directly in a typedef",
                );
            }
            None => self.new_struct(None, s.span),
            Some((tag, tag_span)) => match self.struct_tags.get(tag) {
                Some(id) if self.struct_defined[id.index()] => {
                    return err(*tag_span, format!("redefinition of 'struct {tag}'"));
                }
                Some(id) => *id,
                None => self.new_struct(Some(tag.clone()), s.span),
            },
        };
        let mut out: Vec<Field> = Vec::new();
        for f in fields {
            let specs = self.decl_specs(&f.specs, false)?;
            if specs.storage.is_some() || specs.inline {
                return err(f.specs.span, "storage class in a struct field");
            }
            for fd in &f.declarators {
                if let Some(w) = &fd.bit_width {
                    return err(w.span, "bit-fields are not supported");
                }
                let (name, derived) =
                    self.declarator(specs.ty.clone(), &fd.declarator, DeclCtx::Field)?;
                let Some((name, span)) = name else {
                    return err(
                        fd.declarator.span,
                        "anonymous struct fields are not supported",
                    );
                };
                let Derived::Value(ty) = derived else {
                    return err(span, "function pointers are not supported");
                };
                if out.iter().any(|o| o.name == name) {
                    return err(span, format!("duplicate member '{name}'"));
                }
                match self.resolve(&ty.ty) {
                    Type::Struct(sid) if !self.struct_defined[sid.index()] => {
                        return err(span, format!("field '{name}' has incomplete type"));
                    }
                    Type::Void => return err(span, format!("field '{name}' has type void")),
                    // C99's flexible array member: its storage is what the
                    // allocation adds past the struct, which no analysis
                    // sizes.
                    Type::Array { len: None, .. } => {
                        return err(
                            span,
                            format!(
                                "flexible array members are not supported ('{name}' has no length); \
                                 make it a pointer member and allocate it on its own"
                            ),
                        );
                    }
                    _ => {}
                }
                out.push(Field {
                    name,
                    ty,
                    span,
                    comments: f.comments.clone(),
                });
            }
        }
        let def = &mut self.prog.structs[id.index()];
        def.fields = out;
        def.span = s.span;
        self.struct_defined[id.index()] = true;
        self.new_structs.push(id);
        Ok(Type::Struct(id))
    }

    fn new_struct(&mut self, tag: Option<String>, span: Span) -> StructId {
        let id = StructId(self.prog.structs.len() as u32);
        self.prog.structs.push(StructDef {
            tag: tag.clone(),
            fields: Vec::new(),
            span,
            comments: Default::default(),
        });
        self.struct_defined.push(false);
        if let Some(t) = tag {
            self.struct_tags.insert(t, id);
        }
        id
    }

    /// Applies a declarator to a base type, inside out as C reads it.
    pub(super) fn declarator(
        &mut self,
        base: QualType,
        d: &ast::Declarator,
        ctx: DeclCtx,
    ) -> R<(Option<(String, Span)>, Derived)> {
        self.apply_declarator(Derived::Value(base), d, ctx, 0)
    }

    fn apply_declarator(
        &mut self,
        cur: Derived,
        d: &ast::Declarator,
        ctx: DeclCtx,
        depth: usize,
    ) -> R<(Option<(String, Span)>, Derived)> {
        if depth > 200 {
            return err(d.span, "declarator is too deeply nested");
        }
        match &d.kind {
            ast::DeclaratorKind::Ident(name) => Ok((Some((name.clone(), d.span)), cur)),
            ast::DeclaratorKind::Abstract => Ok((None, cur)),
            ast::DeclaratorKind::Paren(inner) => self.apply_declarator(cur, inner, ctx, depth + 1),
            ast::DeclaratorKind::Pointer { qualifiers, inner } => {
                let Derived::Value(t) = cur else {
                    return err(d.span, "function pointers are not supported");
                };
                let mut is_const = false;
                for q in qualifiers {
                    match q {
                        ast::Qualifier::Const => is_const = true,
                        ast::Qualifier::Volatile => {
                            return err(d.span, "volatile is not supported");
                        }
                        ast::Qualifier::Restrict => {}
                    }
                }
                let p = QualType {
                    ty: Type::Pointer(Box::new(t)),
                    is_const,
                };
                self.apply_declarator(Derived::Value(p), inner, ctx, depth + 1)
            }
            ast::DeclaratorKind::Array { inner, len } => {
                let Derived::Value(t) = cur else {
                    return err(d.span, "arrays of functions are not supported");
                };
                if matches!(self.resolve(&t.ty), Type::Void) {
                    return err(d.span, "array of void");
                }
                let len = match len {
                    None => None,
                    Some(e) => Some(self.array_len(e, ctx)?),
                };
                let a = QualType::new(Type::Array {
                    elem: Box::new(t),
                    len,
                });
                self.apply_declarator(Derived::Value(a), inner, ctx, depth + 1)
            }
            ast::DeclaratorKind::Function {
                inner,
                params,
                variadic,
            } => {
                let Derived::Value(ret) = cur else {
                    return err(d.span, "a function cannot return a function");
                };
                if matches!(ret.ty, Type::Array { .. }) {
                    return err(d.span, "a function cannot return an array");
                }
                let mut out = Vec::new();
                let only_void = params.len() == 1
                    && matches!(params[0].declarator.kind, ast::DeclaratorKind::Abstract);
                for p in params {
                    self.in_param = true;
                    let specs = self.decl_specs(&p.specs, false);
                    self.in_param = false;
                    let specs = specs?;
                    if specs.storage.is_some() || specs.inline {
                        return err(p.specs.span, "storage class in a parameter");
                    }
                    let (name, derived) =
                        self.declarator(specs.ty, &p.declarator, DeclCtx::Param)?;
                    let Derived::Value(ty) = derived else {
                        return err(p.span, "function pointers are not supported");
                    };
                    if matches!(self.resolve(&ty.ty), Type::Void) {
                        if only_void && name.is_none() && !*variadic {
                            break;
                        }
                        return err(p.span, "parameter has type void");
                    }
                    out.push(ParamInfo {
                        name: name.map(|n| n.0),
                        ty,
                        span: p.span,
                    });
                }
                let sig = FnSig {
                    ret,
                    params: out,
                    variadic: *variadic,
                };
                self.apply_declarator(Derived::Function(sig), inner, ctx, depth + 1)
            }
        }
    }

    fn array_len(&mut self, e: &ast::Expr, ctx: DeclCtx) -> R<ArrayLen> {
        let saved = self.forbid.replace("an array length");
        let mut fx = super::expr::Effects::default();
        let lowered = self.expr(e, &mut fx);
        self.forbid = saved;
        let lowered = match lowered {
            Ok(x) => x,
            Err(d) if ctx == DeclCtx::Param => {
                return err(d.span, "variable-length array parameters are not supported");
            }
            Err(d) => return Err(d),
        };
        if !self.is_integer(&lowered.ty.ty) {
            return err(e.span, "array length must be an integer");
        }
        let value = self.fold_int(&lowered);
        match value {
            Some(v) if v < 0 => return err(e.span, "array length is negative"),
            None => match ctx {
                DeclCtx::Local => return err(e.span, "variable-length arrays are not supported"),
                DeclCtx::Param => {
                    return err(e.span, "variable-length array parameters are not supported");
                }
                _ => return err(e.span, "array length is not a constant"),
            },
            _ => {}
        }
        Ok(ArrayLen {
            expr: Box::new(lowered),
            value: value.map(|v| v as u64),
        })
    }

    /// The type of a cast or `sizeof` operand.
    pub(super) fn type_name(&mut self, t: &ast::TypeName) -> R<QualType> {
        let specs = self.decl_specs(&t.specs, false)?;
        if specs.storage.is_some() || specs.inline {
            return err(t.span, "storage class in a type name");
        }
        let (name, derived) = self.declarator(specs.ty, &t.declarator, DeclCtx::TypeName)?;
        if let Some((_, span)) = name {
            return err(span, "unexpected name in a type name");
        }
        match derived {
            Derived::Value(t) => Ok(t),
            Derived::Function(_) => err(t.span, "function pointers are not supported"),
        }
    }

    // -----------------------------------------------------------------------
    // Type queries
    // -----------------------------------------------------------------------

    /// Looks through typedef names.
    pub(super) fn resolve<'t>(&'t self, ty: &'t Type) -> &'t Type {
        let mut ty = ty;
        let mut guard = 0;
        while let Type::Named(t) = ty {
            match self.prog.typedefs.get(t.index()) {
                Some(def) => ty = &def.ty.ty,
                None => return ty,
            }
            guard += 1;
            if guard > 1000 {
                break;
            }
        }
        ty
    }

    pub(super) fn is_integer(&self, ty: &Type) -> bool {
        matches!(self.resolve(ty), Type::Int { .. })
    }

    pub(super) fn is_arith(&self, ty: &Type) -> bool {
        matches!(self.resolve(ty), Type::Int { .. } | Type::Real(_))
    }

    pub(super) fn is_pointerish(&self, ty: &Type) -> bool {
        matches!(self.resolve(ty), Type::Pointer(_) | Type::Array { .. })
    }

    pub(super) fn is_scalar(&self, ty: &Type) -> bool {
        self.is_arith(ty) || self.is_pointerish(ty)
    }

    /// The pointed-to (or element) type of a pointer or array.
    pub(super) fn pointee(&self, ty: &Type) -> Option<QualType> {
        match self.resolve(ty) {
            Type::Pointer(t) => Some((**t).clone()),
            Type::Array { elem, .. } => Some((**elem).clone()),
            _ => None,
        }
    }

    /// The type an array decays to in a value context; other types unchanged.
    pub(super) fn decay(&self, t: &QualType) -> QualType {
        match self.resolve(&t.ty) {
            Type::Array { elem, .. } => (**elem).clone().pointer_to(),
            _ => QualType::new(t.ty.clone()),
        }
    }

    /// Structural equality after looking through typedef names, ignoring
    /// top-level `const` and array lengths of the outermost level only when
    /// both are known to match.
    pub(super) fn same_type(&self, a: &QualType, b: &QualType) -> bool {
        self.same_ty(&a.ty, &b.ty, 0)
    }

    fn same_ty(&self, a: &Type, b: &Type, depth: usize) -> bool {
        if depth > 64 {
            return false;
        }
        match (self.resolve(a), self.resolve(b)) {
            (Type::Pointer(x), Type::Pointer(y)) => {
                x.is_const == y.is_const && self.same_ty(&x.ty, &y.ty, depth + 1)
            }
            (Type::Array { elem: x, len: lx }, Type::Array { elem: y, len: ly }) => {
                let lens = match (lx, ly) {
                    (Some(p), Some(q)) => p.value == q.value,
                    (None, None) => true,
                    _ => false,
                };
                lens && self.same_ty(&x.ty, &y.ty, depth + 1)
            }
            (x, y) => x == y,
        }
    }

    /// Integer promotion.
    pub(super) fn promote(&self, t: &QualType) -> QualType {
        match self.resolve(&t.ty) {
            Type::Int { kind, .. } if *kind < IntKind::Int => QualType::int(),
            _ => QualType::new(t.ty.clone()),
        }
    }

    /// The usual arithmetic conversions: the common type of two arithmetic
    /// operands. Keeps an operand's spelling when the result is its type.
    pub(super) fn usual(&self, a: &QualType, b: &QualType) -> QualType {
        let pa = self.promote(a);
        let pb = self.promote(b);
        let ra = self.resolve(&pa.ty).clone();
        let rb = self.resolve(&pb.ty).clone();
        if ra == rb {
            return pa;
        }
        match (&ra, &rb) {
            (Type::Real(x), Type::Real(y)) => {
                if x >= y {
                    pa
                } else {
                    pb
                }
            }
            (Type::Real(_), _) => pa,
            (_, Type::Real(_)) => pb,
            (
                Type::Int {
                    kind: ka,
                    unsigned: ua,
                },
                Type::Int {
                    kind: kb,
                    unsigned: ub,
                },
            ) => {
                let (ka, ua, kb, ub) = (*ka, *ua, *kb, *ub);
                if ua == ub {
                    return if ka >= kb { pa } else { pb };
                }
                let (ku, ks, u_is_a) = if ua { (ka, kb, true) } else { (kb, ka, false) };
                if ku >= ks {
                    if u_is_a { pa } else { pb }
                } else if ks.size() > ku.size() {
                    if u_is_a { pb } else { pa }
                } else {
                    QualType::new(Type::Int {
                        kind: ks,
                        unsigned: true,
                    })
                }
            }
            _ => pa,
        }
    }

    /// A readable spelling of a type, for messages.
    pub(super) fn type_str(&self, t: &QualType) -> String {
        let base = match &t.ty {
            t @ (Type::Void | Type::Int { .. } | Type::Real(_)) => {
                t.scalar_c_name().unwrap_or_default()
            }
            Type::Pointer(p) => format!("{} *", self.type_str(p)),
            Type::Array { elem, len } => match len.as_ref().and_then(|l| l.value) {
                Some(n) => format!("{}[{n}]", self.type_str(elem)),
                None => format!("{}[]", self.type_str(elem)),
            },
            Type::Struct(id) => match self
                .prog
                .structs
                .get(id.index())
                .and_then(|s| s.tag.clone())
            {
                Some(tag) => format!("struct {tag}"),
                // An anonymous struct is known to the user by its typedef.
                None => self
                    .prog
                    .typedefs
                    .iter()
                    .find(|t| t.ty.ty == Type::Struct(*id))
                    .map(|t| t.name.clone())
                    .unwrap_or_else(|| "struct <anonymous>".into()),
            },
            Type::Named(id) => self
                .prog
                .typedefs
                .get(id.index())
                .map(|t| t.name.clone())
                .unwrap_or_default(),
            Type::Opaque(name) => name.clone(),
        };
        if t.is_const {
            format!("const {base}")
        } else {
            base
        }
    }

    // -----------------------------------------------------------------------
    // Constant folding
    // -----------------------------------------------------------------------

    /// The value of an integer constant expression, if it is one.
    pub(super) fn fold_int(&self, e: &Expr) -> Option<i64> {
        self.fold(e, 0)
    }

    fn fold(&self, e: &Expr, depth: usize) -> Option<i64> {
        if depth > 200 {
            return None;
        }
        let d = depth + 1;
        match &e.kind {
            ExprKind::IntConst { value, .. } | ExprKind::CharConst { value, .. } => Some(*value),
            ExprKind::Unary { op, arg } => {
                let v = self.fold(arg, d)?;
                Some(match op {
                    UnOp::Neg => v.checked_neg()?,
                    UnOp::Plus => v,
                    UnOp::Not => (v == 0) as i64,
                    UnOp::BitNot => !v,
                })
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let a = self.fold(lhs, d)?;
                let b = self.fold(rhs, d)?;
                Some(match op {
                    BinOp::Add => a.checked_add(b)?,
                    BinOp::Sub => a.checked_sub(b)?,
                    BinOp::Mul => a.checked_mul(b)?,
                    BinOp::Div => a.checked_div(b)?,
                    BinOp::Rem => a.checked_rem(b)?,
                    BinOp::Lt => (a < b) as i64,
                    BinOp::Le => (a <= b) as i64,
                    BinOp::Gt => (a > b) as i64,
                    BinOp::Ge => (a >= b) as i64,
                    BinOp::Eq => (a == b) as i64,
                    BinOp::Ne => (a != b) as i64,
                    BinOp::And => (a != 0 && b != 0) as i64,
                    BinOp::Or => (a != 0 || b != 0) as i64,
                    BinOp::BitAnd => a & b,
                    BinOp::BitOr => a | b,
                    BinOp::BitXor => a ^ b,
                    BinOp::Shl => a.checked_shl(u32::try_from(b).ok()?)?,
                    BinOp::Shr => a.checked_shr(u32::try_from(b).ok()?)?,
                })
            }
            ExprKind::Cast { to, arg } => {
                if !self.is_integer(&to.ty) {
                    return None;
                }
                match &arg.kind {
                    ExprKind::RealConst { value, .. }
                        if value.is_finite() && value.abs() < 9e18 =>
                    {
                        Some(*value as i64)
                    }
                    _ => self.fold(arg, d),
                }
            }
            ExprKind::Cond { cond, then, other } => {
                if self.fold(cond, d)? != 0 {
                    self.fold(then, d)
                } else {
                    self.fold(other, d)
                }
            }
            ExprKind::SizeOfType(t) => self.size_of(&t.ty),
            ExprKind::SizeOfExpr(x) => self.size_of(&x.ty.ty),
            _ => None,
        }
    }

    fn size_of(&self, ty: &Type) -> Option<i64> {
        match self.resolve(ty) {
            Type::Struct(id)
                if !self
                    .struct_defined
                    .get(id.index())
                    .copied()
                    .unwrap_or(false) =>
            {
                None
            }
            Type::Array { len: None, .. } => None,
            _ => i64::try_from(self.prog.size_align(ty).0).ok(),
        }
    }
}

/// Interprets a list of basic type keywords (`unsigned long int`).
fn basic_type(basics: &[(ast::BasicType, Span)], span: Span) -> R<Type> {
    use ast::BasicType as B;
    let count = |b: B| basics.iter().filter(|(x, _)| *x == b).count();
    let (void, char, short, int, long, float, double, signed, unsigned, boolean) = (
        count(B::Void),
        count(B::Char),
        count(B::Short),
        count(B::Int),
        count(B::Long),
        count(B::Float),
        count(B::Double),
        count(B::Signed),
        count(B::Unsigned),
        count(B::Bool),
    );
    if basics.is_empty() {
        return err(
            span,
            "missing type specifier (implicit int is not supported)",
        );
    }
    let bad = || err(span, "invalid combination of type specifiers");
    if signed + unsigned > 1 || int > 1 || char > 1 || short > 1 || long > 2 {
        return bad();
    }
    let sign_ok = |t: Type| -> R<Type> { Ok(t) };
    if void == 1 {
        if basics.len() != 1 {
            return bad();
        }
        return Ok(Type::Void);
    }
    if boolean == 1 {
        if basics.len() != 1 {
            return bad();
        }
        return Ok(Type::Int {
            kind: IntKind::Bool,
            unsigned: true,
        });
    }
    if float == 1 {
        if basics.len() != 1 {
            return bad();
        }
        return Ok(Type::Real(RealKind::Float));
    }
    if double == 1 {
        return match (long, basics.len()) {
            (0, 1) => Ok(Type::Real(RealKind::Double)),
            (1, 2) => Ok(Type::Real(RealKind::LongDouble)),
            _ => bad(),
        };
    }
    if void + boolean + float + double > 0 {
        return bad();
    }
    let is_unsigned = unsigned == 1;
    let kind = if char == 1 {
        if short + long + int > 0 {
            return bad();
        }
        if signed == 1 {
            IntKind::SignedChar
        } else {
            IntKind::Char
        }
    } else if short == 1 {
        if long > 0 {
            return bad();
        }
        IntKind::Short
    } else if long == 2 {
        IntKind::LongLong
    } else if long == 1 {
        IntKind::Long
    } else {
        IntKind::Int
    };
    sign_ok(Type::Int {
        kind,
        unsigned: is_unsigned,
    })
}
