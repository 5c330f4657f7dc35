//! The C syntax tree, as the grammar (`grammar/c.lalrpop`) builds it.
//!
//! It mirrors C's concrete syntax closely (declarators are trees, specifiers
//! are lists, parentheses are nodes) so that the grammar's actions stay
//! trivial; all meaning — types, scopes, side-effect splitting, rejection of
//! unsupported constructs — is given by lowering (`front/lower.rs`). Every
//! node carries the span of its source text; statements, declarations and
//! struct fields also carry the comments attached to them.

use super::source::Span;
use crate::il::Comments;

#[derive(Clone, Debug, PartialEq)]
pub struct TranslationUnit {
    pub items: Vec<ExternalDecl>,
    /// Comments after the last item of the main file.
    pub final_comments: Vec<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExternalDecl {
    Function(FunctionDef),
    Declaration(Declaration),
    /// An `#include` line: an index into the preprocessor's include table,
    /// with the comments written before it.
    Include(u32, Span, Comments),
}

#[derive(Clone, Debug, PartialEq)]
pub struct FunctionDef {
    pub specs: DeclSpecs,
    pub declarator: Declarator,
    pub body: Compound,
    pub span: Span,
    pub comments: Comments,
}

// ---------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq)]
pub struct Declaration {
    pub specs: DeclSpecs,
    pub declarators: Vec<InitDeclarator>,
    pub span: Span,
    pub comments: Comments,
}

/// Declaration specifiers in the order written (`static const double`).
#[derive(Clone, Debug, PartialEq)]
pub struct DeclSpecs {
    pub items: Vec<DeclSpec>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum DeclSpec {
    Storage(StorageClass, Span),
    Qualifier(Qualifier, Span),
    Inline(Span),
    Type(TypeSpecifier),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StorageClass {
    Typedef,
    Extern,
    Static,
    Auto,
    Register,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Qualifier {
    Const,
    Volatile,
    Restrict,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BasicType {
    Void,
    Char,
    Short,
    Int,
    Long,
    Float,
    Double,
    Signed,
    Unsigned,
    Bool,
}

#[derive(Clone, Debug, PartialEq)]
pub enum TypeSpecifier {
    Basic(BasicType, Span),
    Struct(StructSpec),
    /// `union ...`: parsed so that lowering can reject it by name.
    Union(Span),
    /// `enum tag`, `enum tag { ... }` or `enum { ... }`.
    Enum(EnumSpec),
    /// A typedef name.
    Named(String, Span),
}

/// An enum specifier: its constants are `int`s named in the scope of the
/// declaration.
#[derive(Clone, Debug, PartialEq)]
pub struct EnumSpec {
    pub tag: Option<(String, Span)>,
    /// `None` for a reference to an enum defined elsewhere (`enum tag`).
    pub enumerators: Option<Vec<Enumerator>>,
    pub span: Span,
}

/// `NAME` or `NAME = constant-expression` in an enum's list.
#[derive(Clone, Debug, PartialEq)]
pub struct Enumerator {
    pub name: String,
    pub value: Option<Expr>,
    pub span: Span,
}

/// `struct tag`, `struct tag { ... }` or `struct { ... }`.
#[derive(Clone, Debug, PartialEq)]
pub struct StructSpec {
    pub tag: Option<(String, Span)>,
    /// `None` for a reference to a struct defined elsewhere.
    pub fields: Option<Vec<StructField>>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct StructField {
    pub specs: DeclSpecs,
    pub declarators: Vec<FieldDeclarator>,
    pub span: Span,
    pub comments: Comments,
}

#[derive(Clone, Debug, PartialEq)]
pub struct FieldDeclarator {
    pub declarator: Declarator,
    /// `x : 3`: parsed so that lowering can reject bit-fields by name.
    pub bit_width: Option<Expr>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct InitDeclarator {
    pub declarator: Declarator,
    pub init: Option<Initializer>,
}

/// A declarator as a tree, read inside out as C does: `*a[3]` is
/// `Pointer(Array(Ident a, 3))`, i.e. `a` is an array of 3 pointers.
#[derive(Clone, Debug, PartialEq)]
pub struct Declarator {
    pub kind: DeclaratorKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum DeclaratorKind {
    /// The declared name.
    Ident(String),
    /// No name (in a parameter list or a type name).
    Abstract,
    Pointer {
        qualifiers: Vec<Qualifier>,
        inner: Box<Declarator>,
    },
    Array {
        inner: Box<Declarator>,
        len: Option<Box<Expr>>,
    },
    Function {
        inner: Box<Declarator>,
        params: Vec<ParamDecl>,
        variadic: bool,
    },
    /// `( declarator )`: kept so that lowering can tell `(*f)(...)` (a
    /// function pointer, rejected) from `*f(...)`.
    Paren(Box<Declarator>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct ParamDecl {
    pub specs: DeclSpecs,
    pub declarator: Declarator,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Initializer {
    Expr(Expr),
    List(Vec<Initializer>, Span),
    /// `.x = ...` or `[2] = ...`: the designators, then the value.
    Designated(Vec<Designator>, Box<Initializer>, Span),
}

/// One designator of a designated initializer.
#[derive(Clone, Debug, PartialEq)]
pub enum Designator {
    /// `[constant-expression]`
    Index(Expr),
    /// `.field`
    Field(String, Span),
}

/// A type in a cast or `sizeof`.
#[derive(Clone, Debug, PartialEq)]
pub struct TypeName {
    pub specs: DeclSpecs,
    pub declarator: Declarator,
    pub span: Span,
}

// ---------------------------------------------------------------------------
// Statements
// ---------------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq)]
pub struct Compound {
    pub items: Vec<Stmt>,
    /// Comments between the last statement and the closing brace.
    pub closing_comments: Vec<String>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
    pub comments: Comments,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ForInit {
    None,
    Expr(Expr),
    Decl(Declaration),
}

#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind {
    Compound(Compound),
    /// `e;`, or `;` alone when `None`.
    Expr(Option<Expr>),
    Decl(Declaration),
    If {
        cond: Expr,
        then: Box<Stmt>,
        other: Option<Box<Stmt>>,
    },
    While {
        cond: Expr,
        body: Box<Stmt>,
    },
    DoWhile {
        body: Box<Stmt>,
        cond: Expr,
    },
    For {
        init: ForInit,
        cond: Option<Expr>,
        step: Option<Expr>,
        body: Box<Stmt>,
    },
    Switch {
        selector: Expr,
        body: Box<Stmt>,
    },
    Case {
        value: Expr,
        body: Box<Stmt>,
    },
    Default {
        body: Box<Stmt>,
    },
    Break,
    Continue,
    Return(Option<Expr>),
    /// Parsed so that lowering can reject them by name.
    Goto(String),
    Labeled {
        label: String,
        body: Box<Stmt>,
    },
}

// ---------------------------------------------------------------------------
// Expressions
// ---------------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryOp {
    AddrOf,
    Deref,
    Plus,
    Minus,
    BitNot,
    Not,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryOp {
    Mul,
    Div,
    Rem,
    Add,
    Sub,
    Shl,
    Shr,
    Lt,
    Gt,
    Le,
    Ge,
    Eq,
    Ne,
    BitAnd,
    BitXor,
    BitOr,
    And,
    Or,
}

/// `=` is `Assign(None)`; `+=` is `Assign(Some(Add))`, and so on.
pub type AssignOp = Option<BinaryOp>;

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    Ident(String),
    IntLit(String),
    FloatLit(String),
    CharLit(String),
    /// Adjacent string literals, each with its quotes.
    StrLit(Vec<String>),
    Paren(Box<Expr>),
    Index(Box<Expr>, Box<Expr>),
    Call(Box<Expr>, Vec<Expr>),
    /// `e.name`
    Member(Box<Expr>, String),
    /// `e->name`
    Arrow(Box<Expr>, String),
    PostInc(Box<Expr>),
    PostDec(Box<Expr>),
    PreInc(Box<Expr>),
    PreDec(Box<Expr>),
    Unary(UnaryOp, Box<Expr>),
    SizeofExpr(Box<Expr>),
    SizeofType(Box<TypeName>),
    Cast(Box<TypeName>, Box<Expr>),
    /// `(V2){1.0, 2.0}`: an unnamed object of the type, initialised by
    /// the list.
    CompoundLiteral(Box<TypeName>, Box<Initializer>),
    Binary(BinaryOp, Box<Expr>, Box<Expr>),
    Conditional(Box<Expr>, Box<Expr>, Box<Expr>),
    Assign(AssignOp, Box<Expr>, Box<Expr>),
    Comma(Box<Expr>, Box<Expr>),
}
