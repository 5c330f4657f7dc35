//! The language-independent intermediate language (IL).
//!
//! Specified in `spec/il.md`; every section of that file has an ID of the
//! form `il/...`, cited on the type that implements it.
//!
//! The IL has no concrete syntax of its own: C is one front end and one back
//! end (`front/`, `back/c.rs`); the S-expression printer (`back/sexpr.rs`) is
//! for auditors, not a language. What is C-specific in the input is either
//! mapped onto a general operator (`a->f` is `Field(Deref(a), f)`, `x += e`
//! is `Assign(x, x + e)`, `malloc` is `Alloc`) or kept as a printing hint that
//! no analysis reads ([`AssignSugar`], [`Expr::parens`], [`AllocForm`]).
//!
//! Invariants (checked by `il::validate`):
//! - expressions have no side effects: assignments, calls to procedures with
//!   a body or to side-effecting library functions, `++` and `--` are
//!   statements; only pure intrinsics ([`Intrinsic`]) are called inside
//!   expressions;
//! - every expression carries its C type after the usual conversions; the
//!   conversions themselves are implicit, given by the types
//!   (`il/conversions`);
//! - statement ids are unique within a procedure;
//! - the control structure is a tree ([`StmtKind::If`], [`StmtKind::Loop`],
//!   [`StmtKind::Switch`]); the flow graph (`il::flow`) is derived from it and
//!   records, for each basic block, the structure it belongs to.

pub mod flow;
pub mod validate;
pub mod zones;

use crate::front::source::{FileId, Span};
use rustc_hash::FxHashMap as HashMap;

macro_rules! id_type {
    ($(#[$m:meta])* $name:ident) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
        pub struct $name(pub u32);
        impl $name {
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }
    };
}

id_type!(
    /// A variable (global, parameter, local or lowering temporary).
    SymId
);
id_type!(
    /// A scope in the tree of symbol tables (`il/scope`).
    ScopeId
);
id_type!(
    /// A procedure: defined, prototyped, or known from a system header.
    ProcId
);
id_type!(
    /// A struct type definition.
    StructId
);
id_type!(
    /// A typedef name.
    TypedefId
);
id_type!(
    /// A statement, unique within its procedure.
    StmtId
);

// ---------------------------------------------------------------------------
// Types (il/types)
// ---------------------------------------------------------------------------

/// Precision of a real type. `il/types`
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RealKind {
    Float,
    Double,
    LongDouble,
}

/// Width of an integer type. `il/types`
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum IntKind {
    Bool,
    /// Plain `char`, whose signedness is the platform's.
    Char,
    /// `signed char`, spelled so because plain `char` may be unsigned.
    SignedChar,
    Short,
    Int,
    Long,
    LongLong,
}

impl IntKind {
    /// Size in bytes on the LP64 targets we generate code for.
    pub fn size(self) -> u64 {
        match self {
            IntKind::Bool | IntKind::Char | IntKind::SignedChar => 1,
            IntKind::Short => 2,
            IntKind::Int => 4,
            IntKind::Long | IntKind::LongLong => 8,
        }
    }
}

/// A type. Typedef names are kept ([`Type::Named`]) so the output spells
/// types as the user did; [`Program::resolve`] looks through them. `il/types`
#[derive(Clone, Debug, PartialEq)]
pub enum Type {
    Void,
    Int {
        kind: IntKind,
        unsigned: bool,
    },
    Real(RealKind),
    Pointer(Box<QualType>),
    /// `len` is `None` for `T x[]` (a parameter or an extern array).
    Array {
        elem: Box<QualType>,
        len: Option<ArrayLen>,
    },
    Struct(StructId),
    Named(TypedefId),
    /// A type known only by name from a system header (e.g. `FILE`).
    Opaque(String),
}

impl Type {
    /// The C spelling of a void, integer or real type (`unsigned long`,
    /// `double`); `None` for the other types.
    pub fn scalar_c_name(&self) -> Option<String> {
        Some(match self {
            Type::Void => "void".to_string(),
            Type::Int { kind, unsigned } => {
                let name = match kind {
                    IntKind::Bool => "_Bool",
                    IntKind::Char => "char",
                    IntKind::SignedChar => "signed char",
                    IntKind::Short => "short",
                    IntKind::Int => "int",
                    IntKind::Long => "long",
                    IntKind::LongLong => "long long",
                };
                if *unsigned && *kind != IntKind::Bool {
                    format!("unsigned {name}")
                } else {
                    name.to_string()
                }
            }
            Type::Real(RealKind::Float) => "float".to_string(),
            Type::Real(RealKind::Double) => "double".to_string(),
            Type::Real(RealKind::LongDouble) => "long double".to_string(),
            _ => return None,
        })
    }
}

/// A type with its `const` qualifier. `il/types`
#[derive(Clone, Debug, PartialEq)]
pub struct QualType {
    pub ty: Type,
    pub is_const: bool,
}

impl QualType {
    pub fn new(ty: Type) -> QualType {
        QualType {
            ty,
            is_const: false,
        }
    }
    pub fn int() -> QualType {
        QualType::new(Type::Int {
            kind: IntKind::Int,
            unsigned: false,
        })
    }
    pub fn long() -> QualType {
        QualType::new(Type::Int {
            kind: IntKind::Long,
            unsigned: false,
        })
    }
    pub fn size_t() -> QualType {
        QualType::new(Type::Int {
            kind: IntKind::Long,
            unsigned: true,
        })
    }
    pub fn double() -> QualType {
        QualType::new(Type::Real(RealKind::Double))
    }
    pub fn void() -> QualType {
        QualType::new(Type::Void)
    }
    pub fn pointer_to(self) -> QualType {
        QualType::new(Type::Pointer(Box::new(self)))
    }
}

/// The length of an array dimension: the expression as written (after macro
/// expansion) and its value when it is a constant.
#[derive(Clone, Debug, PartialEq)]
pub struct ArrayLen {
    pub expr: Box<Expr>,
    pub value: Option<u64>,
}

/// A struct type: `struct tag { fields }`. Anonymous structs are always
/// reached through a typedef. `il/types`
#[derive(Clone, Debug, PartialEq)]
pub struct StructDef {
    pub tag: Option<String>,
    pub fields: Vec<Field>,
    pub span: Span,
    pub comments: Comments,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    pub name: String,
    pub ty: QualType,
    pub span: Span,
    pub comments: Comments,
}

/// `typedef ty name;` `il/types`
#[derive(Clone, Debug, PartialEq)]
pub struct TypedefDef {
    pub name: String,
    pub ty: QualType,
    pub span: Span,
}

// ---------------------------------------------------------------------------
// Comments (il/comments)
// ---------------------------------------------------------------------------

/// Comments attached to a declaration or statement: those on the lines
/// before it, and one that follows it on its own last line. Text includes the
/// delimiters (`// ...` or `/* ... */`). `il/comments`
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Comments {
    pub leading: Vec<String>,
    pub trailing: Option<String>,
}

impl Comments {
    pub fn is_empty(&self) -> bool {
        self.leading.is_empty() && self.trailing.is_none()
    }
}

// ---------------------------------------------------------------------------
// Symbols and scopes (il/symbols, il/scope)
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SymKind {
    Global,
    Param,
    Local,
    /// Introduced by lowering to hold the value of a call or a side effect
    /// extracted from an expression (`il/split`). The C back end folds a
    /// temporary used once back into its use.
    Temp,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Storage {
    Auto,
    Static,
    Extern,
}

/// A variable. `il/symbols`
#[derive(Clone, Debug, PartialEq)]
pub struct Symbol {
    pub name: String,
    pub ty: QualType,
    pub kind: SymKind,
    pub storage: Storage,
    pub scope: ScopeId,
    pub span: Span,
}

/// A node of the tree of symbol tables: the global scope, a procedure's
/// parameter scope, and one per block that declares something. `il/scope`
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Scope {
    pub parent: Option<ScopeId>,
    pub vars: HashMap<String, SymId>,
}

// ---------------------------------------------------------------------------
// Expressions (il/expr)
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnOp {
    Neg,
    /// Unary `+`, kept so the output matches the input.
    Plus,
    Not,
    BitNot,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    /// Short-circuit conjunction.
    And,
    /// Short-circuit disjunction.
    Or,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
}

impl BinOp {
    /// Comparisons and `&&`, `||`: C gives them type `int`, value 0 or 1.
    pub fn is_truth_valued(self) -> bool {
        matches!(
            self,
            BinOp::Lt
                | BinOp::Le
                | BinOp::Gt
                | BinOp::Ge
                | BinOp::Eq
                | BinOp::Ne
                | BinOp::And
                | BinOp::Or
        )
    }
}

/// Pure library functions, called inside expressions. Everything in
/// CONTRACT §4's `<math.h>` list plus the integer `abs`. `il/intrinsic`
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MathFn {
    Sqrt,
    Cbrt,
    Exp,
    Exp2,
    Expm1,
    Log,
    Log2,
    Log10,
    Log1p,
    Pow,
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    Atan2,
    Sinh,
    Cosh,
    Tanh,
    Asinh,
    Acosh,
    Atanh,
    Hypot,
    Fabs,
    Fmin,
    Fmax,
    Erf,
    Erfc,
    Lgamma,
    Tgamma,
    Floor,
    Ceil,
    Round,
    Trunc,
    Fmod,
    Copysign,
    /// `abs`, `labs`: integer absolute value.
    IntAbs,
    /// ψ = Γ′/Γ, which only derivative code calls (the derivative of
    /// `lgamma`); printed as a call of the helper the output defines
    /// (`aioli_digamma`). Not in [`MathFn::ALL`]: user code cannot name it.
    Digamma,
}

impl MathFn {
    pub const ALL: &'static [MathFn] = &[
        MathFn::Sqrt,
        MathFn::Cbrt,
        MathFn::Exp,
        MathFn::Exp2,
        MathFn::Expm1,
        MathFn::Log,
        MathFn::Log2,
        MathFn::Log10,
        MathFn::Log1p,
        MathFn::Pow,
        MathFn::Sin,
        MathFn::Cos,
        MathFn::Tan,
        MathFn::Asin,
        MathFn::Acos,
        MathFn::Atan,
        MathFn::Atan2,
        MathFn::Sinh,
        MathFn::Cosh,
        MathFn::Tanh,
        MathFn::Asinh,
        MathFn::Acosh,
        MathFn::Atanh,
        MathFn::Hypot,
        MathFn::Fabs,
        MathFn::Fmin,
        MathFn::Fmax,
        MathFn::Erf,
        MathFn::Erfc,
        MathFn::Lgamma,
        MathFn::Tgamma,
        MathFn::Floor,
        MathFn::Ceil,
        MathFn::Round,
        MathFn::Trunc,
        MathFn::Fmod,
        MathFn::Copysign,
        MathFn::IntAbs,
    ];

    /// The C99 name of the `double` version.
    pub fn c_name(self) -> &'static str {
        use MathFn::*;
        match self {
            Sqrt => "sqrt",
            Cbrt => "cbrt",
            Exp => "exp",
            Exp2 => "exp2",
            Expm1 => "expm1",
            Log => "log",
            Log2 => "log2",
            Log10 => "log10",
            Log1p => "log1p",
            Pow => "pow",
            Sin => "sin",
            Cos => "cos",
            Tan => "tan",
            Asin => "asin",
            Acos => "acos",
            Atan => "atan",
            Atan2 => "atan2",
            Sinh => "sinh",
            Cosh => "cosh",
            Tanh => "tanh",
            Asinh => "asinh",
            Acosh => "acosh",
            Atanh => "atanh",
            Hypot => "hypot",
            Fabs => "fabs",
            Fmin => "fmin",
            Fmax => "fmax",
            Erf => "erf",
            Erfc => "erfc",
            Lgamma => "lgamma",
            Tgamma => "tgamma",
            Floor => "floor",
            Ceil => "ceil",
            Round => "round",
            Trunc => "trunc",
            Fmod => "fmod",
            Copysign => "copysign",
            IntAbs => "abs",
            Digamma => "aioli_digamma",
        }
    }

    pub fn arity(self) -> usize {
        use MathFn::*;
        match self {
            Pow | Atan2 | Hypot | Fmin | Fmax | Fmod | Copysign => 2,
            _ => 1,
        }
    }

    /// Looks up a C name: `sin`, `sinf`, `sinl`, `abs`, `labs`.
    pub fn from_c_name(name: &str) -> Option<(MathFn, Option<RealKind>)> {
        if name == "abs" || name == "labs" || name == "llabs" {
            return Some((MathFn::IntAbs, None));
        }
        for &f in MathFn::ALL {
            if f == MathFn::IntAbs {
                continue;
            }
            let base = f.c_name();
            if name == base {
                return Some((f, Some(RealKind::Double)));
            }
            if let Some(suffix) = name.strip_prefix(base) {
                match suffix {
                    "f" => return Some((f, Some(RealKind::Float))),
                    "l" => return Some((f, Some(RealKind::LongDouble))),
                    _ => {}
                }
            }
        }
        None
    }
}

/// A call of a pure library function inside an expression. `il/intrinsic`
#[derive(Clone, Debug, PartialEq)]
pub struct Intrinsic {
    pub func: MathFn,
    /// The precision of the C variant called (`sinf` is `Float`); `None`
    /// for the integer `abs`.
    pub precision: Option<RealKind>,
    /// The name as written (`abs` or `labs`, `sin` or `sinf`).
    pub name: String,
}

impl Intrinsic {
    /// The name the C code calls: as written, or the `double` version's.
    pub fn spelling(&self) -> &str {
        if self.name.is_empty() {
            self.func.c_name()
        } else {
            &self.name
        }
    }
}

/// An expression node with its type (after C's usual conversions) and the
/// span it was written at. `il/expr`
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub ty: QualType,
    pub span: Span,
    /// The user wrote parentheses around this expression. Printing hint only:
    /// the back end adds the parentheses precedence needs regardless.
    pub parens: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// An integer literal, with its spelling (`10`, `0x1F`, `3UL`).
    IntConst {
        value: i64,
        text: String,
    },
    /// A real literal, with its spelling (`1.0e-3`, `2.f`).
    RealConst {
        value: f64,
        text: String,
    },
    /// A character literal (`'a'`) with its value.
    CharConst {
        value: i64,
        text: String,
    },
    /// A string literal, spelled with quotes and escapes.
    StrConst(String),
    Var(SymId),
    /// `base[index]`; `base` is an array or a pointer.
    Index {
        base: Box<Expr>,
        index: Box<Expr>,
    },
    /// `base.field`; `base` is struct-valued. `p->f` is `Field(Deref(p))`.
    Field {
        base: Box<Expr>,
        strukt: StructId,
        field: usize,
    },
    Deref(Box<Expr>),
    AddrOf(Box<Expr>),
    Unary {
        op: UnOp,
        arg: Box<Expr>,
    },
    Binary {
        op: BinOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    Intrinsic {
        call: Intrinsic,
        args: Vec<Expr>,
    },
    Cast {
        to: QualType,
        arg: Box<Expr>,
    },
    /// `cond ? then : other`.
    Cond {
        cond: Box<Expr>,
        then: Box<Expr>,
        other: Box<Expr>,
    },
    SizeOfType(QualType),
    SizeOfExpr(Box<Expr>),
}

impl Expr {
    /// The `int` constant `v`, spelled in decimal.
    pub fn int(v: i64, span: Span) -> Expr {
        Expr::new(
            ExprKind::IntConst {
                value: v,
                text: v.to_string(),
            },
            QualType::int(),
            span,
        )
    }

    pub fn new(kind: ExprKind, ty: QualType, span: Span) -> Expr {
        Expr {
            kind,
            ty,
            span,
            parens: false,
        }
    }
}

// ---------------------------------------------------------------------------
// Statements (il/stmt)
// ---------------------------------------------------------------------------

/// How the user spelled an assignment; the IL meaning is always
/// `lhs = rhs` with `rhs` already containing the operation. `il/sugar`
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AssignSugar {
    Plain,
    /// `lhs op= e`; `rhs` is `Binary(op, lhs, e)`.
    Compound(BinOp),
    /// `++lhs` / `lhs++` as a statement; `rhs` is `lhs + 1`.
    Increment,
    /// `--lhs` / `lhs--` as a statement; `rhs` is `lhs - 1`.
    Decrement,
}

/// An initializer in a declaration. `il/decl`
#[derive(Clone, Debug, PartialEq)]
pub enum Init {
    Expr(Expr),
    /// `{a, b, c}`, positional, possibly nested.
    List(Vec<Init>, Span),
}

/// One declarator of a declaration statement: `*p = &x` in `double *p = &x, y;`.
#[derive(Clone, Debug, PartialEq)]
pub struct Declarator {
    pub sym: SymId,
    pub init: Option<Init>,
}

/// How an allocation was spelled in C, for printing. `il/alloc`
#[derive(Clone, Debug, PartialEq)]
pub enum AllocForm {
    /// `(cast) malloc(bytes)`.
    Malloc { bytes: Expr, cast: Option<QualType> },
    /// `(cast) calloc(count, size)`.
    Calloc {
        count: Expr,
        size: Expr,
        cast: Option<QualType>,
    },
}

/// One case group of a switch: its labels and the statements up to the next
/// label. Control falls through into the next group unless the body leaves
/// the switch (`break`, `return`, ...). `il/switch`
#[derive(Clone, Debug, PartialEq)]
pub struct SwitchCase {
    /// `None` is `default`.
    pub labels: Vec<Option<Expr>>,
    pub body: Vec<Stmt>,
    pub span: Span,
    pub comments: Comments,
}

/// The header of a loop. `il/loop`
#[derive(Clone, Debug, PartialEq)]
pub enum LoopHeader {
    /// `for (init; cond; step)`; `init` may be a declaration (C99), `step`
    /// is a list of simple statements (`i++, j += 2`).
    For {
        init: Vec<Stmt>,
        cond: Option<Expr>,
        step: Vec<Stmt>,
    },
    While {
        cond: Expr,
    },
    DoWhile {
        cond: Expr,
    },
}

/// A braced sequence of statements; `scope` is the symbol table of the
/// variables it declares. `il/block`
#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    pub scope: ScopeId,
    /// Comments before the closing brace.
    pub closing_comments: Vec<String>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    pub id: StmtId,
    pub kind: StmtKind,
    pub span: Span,
    pub comments: Comments,
}

// The variants differ in size (a loop header holds statement lists), but
// statements live in vectors walked by every pass and pattern-matched by
// every rule; boxing the big variants would cost an indirection and
// clutter each match for no measurable gain.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind {
    /// `lhs = rhs`; `lhs` is a reference (`il/ref`). `il/assign`
    Assign {
        lhs: Expr,
        rhs: Expr,
        sugar: AssignSugar,
    },
    /// A call of a procedure (user-defined or library), its result, if
    /// used, stored to `result`. `il/call`
    Call {
        result: Option<Expr>,
        callee: ProcId,
        args: Vec<Expr>,
        /// Printing hint: the user wrote this call as the initializer of the
        /// declaration just before it (`double r = f(x);`), whose last
        /// declarator is `result`'s variable, left without initializer.
        decl_init: bool,
    },
    /// A declaration statement with its declarators in order; initializers
    /// are assignments at this point. `il/decl`
    Decl {
        base: QualType,
        storage: Storage,
        vars: Vec<Declarator>,
    },
    /// `target = allocate(count elements of elem)`. `il/alloc`
    Alloc {
        target: Expr,
        elem: QualType,
        count: Expr,
        zeroed: bool,
        form: AllocForm,
        /// Printing hint, as for `Call`: `double *w = malloc(...);`.
        decl_init: bool,
    },
    /// `free(ptr)`. `il/alloc`
    Free { ptr: Expr },
    /// `il/if`
    If {
        cond: Expr,
        then: Block,
        other: Option<Block>,
    },
    /// `il/loop`
    Loop { header: LoopHeader, body: Block },
    /// `il/switch`
    Switch {
        selector: Expr,
        cases: Vec<SwitchCase>,
    },
    /// Leaves the innermost loop or switch. `il/jump`
    Break,
    /// Next iteration of the innermost loop. `il/jump`
    Continue,
    /// `il/jump`
    Return(Option<Expr>),
    /// A nested `{ ... }`. `il/block`
    Block(Block),
    /// `;` alone, kept for faithful printing.
    Empty,
    /// An expression evaluated for nothing, such as `(void)n;`: no effect
    /// (expressions have none), kept because the user wrote it (it
    /// silences an unused-parameter warning, say). `il/discard`
    Discard(Expr),
}

// ---------------------------------------------------------------------------
// Procedures and the program (il/proc, il/program)
// ---------------------------------------------------------------------------

/// Where a procedure comes from. `il/proc`
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProcOrigin {
    /// Defined or declared in the user's files.
    User,
    /// Known from a `#include <...>` header (by signature only).
    System,
}

/// A procedure: a function definition, or only a prototype / library
/// signature when `body` is `None`. `il/proc`
#[derive(Clone, Debug, PartialEq)]
pub struct Procedure {
    pub name: String,
    pub ret: QualType,
    pub params: Vec<SymId>,
    /// The parameter scope, parent of the body's scope.
    pub scope: ScopeId,
    pub storage: Storage,
    pub is_inline: bool,
    pub body: Option<Block>,
    pub origin: ProcOrigin,
    pub span: Span,
    pub comments: Comments,
    /// Number of statement ids handed out (ids are `0..stmt_count`).
    pub stmt_count: u32,
}

impl Procedure {
    /// Was this procedure written in the file given on the command line
    /// (rather than in an included header)?
    pub fn file_is_main(&self, program: &Program) -> bool {
        self.span.file == program.main_file
    }
}

/// A top-level element, in source order. `il/program`
#[derive(Clone, Debug, PartialEq)]
pub enum ItemKind {
    /// `#include <math.h>`, kept verbatim.
    SystemInclude(String),
    /// A `#define` or `#undef` line of the main file, kept verbatim (the
    /// code itself has its macros expanded).
    MacroLine(String),
    /// `#include "local.h"`: the items that came from that file are marked
    /// with its [`FileId`] in [`Item::file`]; the back end prints this line
    /// instead of them.
    LocalInclude {
        written: String,
        file: FileId,
    },
    Typedef(TypedefId),
    /// An enum definition at file scope (`enum Model { LINEAR, QUAD = 4 };`):
    /// the code spells its constants by name (`IntConst`s whose text is the
    /// name); a variable of the enum's type is an `int`. `il/enum`
    Enum {
        tag: Option<String>,
        constants: Vec<EnumConstant>,
    },
    /// A struct definition on its own (`struct P { ... };`).
    Struct(StructId),
    /// A global declaration, possibly with several declarators.
    Globals {
        base: QualType,
        storage: Storage,
        vars: Vec<Declarator>,
    },
    /// A prototype without a body.
    Prototype(ProcId),
    Function(ProcId),
}

/// A constant of an enum: its name, its value, and whether the source gave
/// the value (`= 4`) or left it to counting.
#[derive(Clone, Debug, PartialEq)]
pub struct EnumConstant {
    pub name: String,
    pub value: i64,
    pub written: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Item {
    pub kind: ItemKind,
    pub span: Span,
    pub comments: Comments,
    /// The file the item was written in.
    pub file: FileId,
}

/// A whole translation unit. `il/program`
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Program {
    /// Parameters declared with array syntax (`double m[][3]`), which C
    /// adjusts to pointers (the symbol's type, `double (*m)[3]`): the type
    /// as written, for printing only.
    pub array_params: std::collections::BTreeMap<SymId, QualType>,
    /// Procedures copied for one activity pattern of their calls
    /// (`specialize/activity`) → the user's procedure they copy. A copy is
    /// in no item: its primal is the original's.
    pub specialized: std::collections::BTreeMap<ProcId, ProcId>,
    /// Procedures returning a struct that holds pointers to reals,
    /// rewritten to give it back through a last pointer parameter
    /// (`specialize/struct-result`) → the procedure as written, which the
    /// back end prints (and their calls as written, `x = f(a)`).
    pub struct_results: std::collections::BTreeMap<ProcId, Procedure>,
    /// Automatic locals the adjoint gave static storage, so that a split
    /// pair's two frames share them (`adjoint/kept-locals`). The
    /// original keeps its own automatic variable: no code outside the
    /// output shares them. → the procedure that declares it.
    pub frame_statics: std::collections::BTreeMap<SymId, ProcId>,
    /// The adjoint's `static` locals, moved to file scope
    /// (`adjoint/static-local`): a global that only its procedure names.
    /// → its name in the source.
    pub static_locals: std::collections::BTreeMap<SymId, String>,
    pub items: Vec<Item>,
    pub symbols: Vec<Symbol>,
    pub scopes: Vec<Scope>,
    pub procs: Vec<Procedure>,
    pub structs: Vec<StructDef>,
    pub typedefs: Vec<TypedefDef>,
    /// The global scope.
    pub global_scope: ScopeId,
    /// The file given on the command line.
    pub main_file: FileId,
    /// Comments after the last item (the end of the main file).
    pub final_comments: Vec<String>,
    /// Macros of the local headers the main file includes: (the included
    /// header, the macro's name). The output includes them too.
    pub header_macros: Vec<(FileId, String)>,
}

impl Program {
    /// A copy for an output to grow from, without the bodies of the
    /// procedures of external linkage: an output only declares those (the
    /// original translation unit defines them), and copying every body of
    /// a large file cost a tenth of the tool's allocations
    /// (`tangent/output`). `static` procedures keep theirs, since an output
    /// carries its own copy of those it calls.
    pub fn clone_for_output(&self) -> Program {
        let procs = self
            .procs
            .iter()
            .map(|p| Procedure {
                name: p.name.clone(),
                ret: p.ret.clone(),
                params: p.params.clone(),
                scope: p.scope,
                storage: p.storage,
                is_inline: p.is_inline,
                body: match p.storage {
                    Storage::Static => p.body.clone(),
                    _ => None,
                },
                origin: p.origin,
                span: p.span,
                comments: p.comments.clone(),
                stmt_count: p.stmt_count,
            })
            .collect();
        Program {
            array_params: self.array_params.clone(),
            specialized: self.specialized.clone(),
            struct_results: self.struct_results.clone(),
            frame_statics: self.frame_statics.clone(),
            static_locals: self.static_locals.clone(),
            items: self.items.clone(),
            symbols: self.symbols.clone(),
            scopes: self.scopes.clone(),
            procs,
            structs: self.structs.clone(),
            typedefs: self.typedefs.clone(),
            global_scope: self.global_scope,
            main_file: self.main_file,
            final_comments: self.final_comments.clone(),
            header_macros: self.header_macros.clone(),
        }
    }

    /// An output as it runs once linked with the original translation
    /// unit: a procedure the output only declares gets its body from
    /// `original` (same place and name, as `clone_for_output` left it),
    /// so the interpreter can run calls of the original's functions.
    pub fn linked_with(&self, original: &Program) -> std::borrow::Cow<'_, Program> {
        let missing = |i: usize| {
            self.procs[i].body.is_none()
                && original
                    .procs
                    .get(i)
                    .is_some_and(|o| o.body.is_some() && o.name == self.procs[i].name)
        };
        if !(0..self.procs.len()).any(missing) {
            return std::borrow::Cow::Borrowed(self);
        }
        let mut linked = self.clone();
        for i in 0..linked.procs.len() {
            if missing(i) {
                linked.procs[i].body = original.procs[i].body.clone();
                linked.procs[i].stmt_count = original.procs[i].stmt_count;
            }
        }
        std::borrow::Cow::Owned(linked)
    }

    /// The names the kept `#define` lines define: the output keeps them,
    /// so a generated name must not be one of them.
    pub fn macro_names(&self) -> impl Iterator<Item = &str> {
        self.items
            .iter()
            .filter_map(|item| match &item.kind {
                ItemKind::MacroLine(line) => defined_macro(line),
                _ => None,
            })
            .chain(self.header_macros.iter().map(|(_, name)| name.as_str()))
    }

    pub fn sym(&self, id: SymId) -> &Symbol {
        &self.symbols[id.index()]
    }

    /// `(void)f` for a function `f`: C's way to mark a `static` function
    /// used. The IL has no function values, so `f` is a `void` symbol of
    /// its own that no scope lists (looking `f` up still finds no
    /// variable); [`Program::is_function_mention`] tells it apart.
    /// `il/discard`
    pub fn mention_function(&mut self, name: &str, span: Span) -> Expr {
        let sym = SymId(self.symbols.len() as u32);
        self.symbols.push(Symbol {
            name: name.to_string(),
            ty: QualType::void(),
            kind: SymKind::Global,
            storage: Storage::Static,
            scope: self.global_scope,
            span,
        });
        let void = QualType::void();
        let var = Expr::new(ExprKind::Var(sym), void.clone(), span);
        Expr::new(
            ExprKind::Cast {
                to: void.clone(),
                arg: Box::new(var),
            },
            void,
            span,
        )
    }

    /// The function `e` names, if it is a [`Program::mention_function`].
    pub fn mentioned_function(&self, e: &Expr) -> Option<&str> {
        match &e.kind {
            ExprKind::Cast { arg, .. } => match arg.kind {
                ExprKind::Var(s) if self.sym(s).ty.ty == Type::Void => Some(&self.sym(s).name),
                _ => None,
            },
            _ => None,
        }
    }

    /// Is `e` a [`Program::mention_function`]? It has no value to compute.
    pub fn is_function_mention(&self, e: &Expr) -> bool {
        self.mentioned_function(e).is_some()
    }
    pub fn proc(&self, id: ProcId) -> &Procedure {
        &self.procs[id.index()]
    }
    pub fn strukt(&self, id: StructId) -> &StructDef {
        &self.structs[id.index()]
    }
    pub fn typedef(&self, id: TypedefId) -> &TypedefDef {
        &self.typedefs[id.index()]
    }

    /// The name of field `field` of a struct, if both exist.
    pub fn field_name(&self, strukt: StructId, field: usize) -> Option<&str> {
        self.structs
            .get(strukt.index())
            .and_then(|s| s.fields.get(field))
            .map(|f| f.name.as_str())
    }

    pub fn proc_by_name(&self, name: &str) -> Option<ProcId> {
        self.procs
            .iter()
            .position(|p| p.name == name)
            .map(|i| ProcId(i as u32))
    }

    /// Looks up a global variable by name.
    pub fn global_by_name(&self, name: &str) -> Option<SymId> {
        self.scopes[self.global_scope.index()]
            .vars
            .get(name)
            .copied()
    }

    /// The type behind any typedef names (top level only).
    pub fn resolve<'a>(&'a self, mut ty: &'a Type) -> &'a Type {
        while let Type::Named(t) = ty {
            ty = &self.typedef(*t).ty.ty;
        }
        ty
    }

    /// Is this a real (floating-point) scalar type?
    pub fn is_real(&self, ty: &Type) -> bool {
        matches!(self.resolve(ty), Type::Real(_))
    }

    /// Does a value of this type contain reals (a real, an array of reals,
    /// a pointer to reals, a struct with a real field)? This is what makes a
    /// variable a candidate for differentiation.
    pub fn contains_real(&self, ty: &Type) -> bool {
        self.contains_real_depth(ty, 0)
    }

    fn contains_real_depth(&self, ty: &Type, depth: usize) -> bool {
        if depth > 32 {
            return false;
        }
        match self.resolve(ty) {
            Type::Real(_) => true,
            Type::Pointer(t) => self.contains_real_depth(&t.ty, depth + 1),
            Type::Array { elem, .. } => self.contains_real_depth(&elem.ty, depth + 1),
            Type::Struct(s) => self
                .strukt(*s)
                .fields
                .iter()
                .any(|f| self.contains_real_depth(&f.ty.ty, depth + 1)),
            _ => false,
        }
    }

    /// Size in bytes and alignment, with the C layout of x86-64 / aarch64
    /// Linux (LP64). Arrays of unknown length have size 0.
    pub fn size_align(&self, ty: &Type) -> (u64, u64) {
        match self.resolve(ty) {
            Type::Void => (1, 1),
            Type::Int { kind, .. } => (kind.size(), kind.size()),
            Type::Real(RealKind::Float) => (4, 4),
            Type::Real(RealKind::Double) => (8, 8),
            Type::Real(RealKind::LongDouble) => (16, 16),
            Type::Pointer(_) | Type::Opaque(_) => (8, 8),
            Type::Array { elem, len } => {
                let (s, a) = self.size_align(&elem.ty);
                let n = len.as_ref().and_then(|l| l.value).unwrap_or(0);
                (s * n, a)
            }
            Type::Struct(id) => {
                let mut offset: u64 = 0;
                let mut align = 1;
                for f in &self.strukt(*id).fields {
                    let (s, a) = self.size_align(&f.ty.ty);
                    offset = offset.div_ceil(a) * a;
                    offset += s;
                    align = align.max(a);
                }
                (offset.div_ceil(align) * align, align)
            }
            Type::Named(_) => unreachable!("resolve looks through typedefs"),
        }
    }

    /// Byte offset of field `index` in a struct.
    pub fn field_offset(&self, id: StructId, index: usize) -> u64 {
        let mut offset: u64 = 0;
        for (i, f) in self.strukt(id).fields.iter().enumerate() {
            let (s, a) = self.size_align(&f.ty.ty);
            offset = offset.div_ceil(a) * a;
            if i == index {
                return offset;
            }
            offset += s;
        }
        offset
    }

    /// The procedures with a body, in definition order.
    pub fn defined_procs(&self) -> impl Iterator<Item = (ProcId, &Procedure)> {
        self.procs
            .iter()
            .enumerate()
            .filter(|(_, p)| p.body.is_some())
            .map(|(i, p)| (ProcId(i as u32), p))
    }

    /// The call graph: for each procedure, the procedures it calls, in order
    /// of first call, without repetition. `il/callgraph`
    pub fn call_graph(&self) -> Vec<Vec<ProcId>> {
        let mut graph = vec![Vec::new(); self.procs.len()];
        for (id, p) in self.defined_procs() {
            let callees = &mut graph[id.index()];
            if let Some(body) = &p.body {
                visit_stmts(&body.stmts, &mut |s| {
                    if let StmtKind::Call { callee, .. } = &s.kind
                        && !callees.contains(callee)
                    {
                        callees.push(*callee);
                    }
                });
            }
        }
        graph
    }

    /// The call graph with `(void)f` mentions as edges too: what an
    /// output that copies a caller must also carry.
    pub fn use_graph(&self) -> Vec<Vec<ProcId>> {
        let mut graph = self.call_graph();
        for (id, p) in self.defined_procs() {
            if let Some(body) = &p.body {
                visit_stmts(&body.stmts, &mut |s| {
                    if let StmtKind::Discard(e) = &s.kind
                        && let Some(name) = self.mentioned_function(e)
                        && let Some(f) = self
                            .procs
                            .iter()
                            .position(|q| q.body.is_some() && q.name == name)
                    {
                        let f = ProcId(f as u32);
                        if !graph[id.index()].contains(&f) {
                            graph[id.index()].push(f);
                        }
                    }
                });
            }
        }
        graph
    }
}

/// The name a `#define` line defines (`#  define temp 0.25` → `temp`).
pub fn defined_macro(line: &str) -> Option<&str> {
    let rest = line.trim_start().strip_prefix('#')?.trim_start();
    let rest = rest.strip_prefix("define")?;
    if !rest.starts_with([' ', '\t']) {
        return None;
    }
    let rest = rest.trim_start();
    let end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    (end > 0).then(|| &rest[..end])
}

/// Calls `f` on an expression and then on every sub-expression, operands
/// before the nodes inside them (`sizeof`'s operand included).
pub fn visit_expr(e: &Expr, f: &mut dyn FnMut(&Expr)) {
    f(e);
    children(e, &mut |c| visit_expr(c, f));
}

/// Calls `f` on each direct subexpression of `e`, in order.
pub fn children(e: &Expr, f: &mut dyn FnMut(&Expr)) {
    match &e.kind {
        ExprKind::Index { base, index } => {
            f(base);
            f(index);
        }
        ExprKind::Field { base, .. } => f(base),
        ExprKind::Deref(x) | ExprKind::AddrOf(x) | ExprKind::SizeOfExpr(x) => f(x),
        ExprKind::Unary { arg, .. } | ExprKind::Cast { arg, .. } => f(arg),
        ExprKind::Binary { lhs, rhs, .. } => {
            f(lhs);
            f(rhs);
        }
        ExprKind::Intrinsic { args, .. } => {
            for a in args {
                f(a);
            }
        }
        ExprKind::Cond { cond, then, other } => {
            f(cond);
            f(then);
            f(other);
        }
        _ => {}
    }
}

/// Calls `f` on each direct subexpression of `e`, in order, mutably.
pub fn children_mut(e: &mut Expr, f: &mut dyn FnMut(&mut Expr)) {
    match &mut e.kind {
        ExprKind::Index { base, index } => {
            f(base);
            f(index);
        }
        ExprKind::Field { base, .. } => f(base),
        ExprKind::Deref(x) | ExprKind::AddrOf(x) | ExprKind::SizeOfExpr(x) => f(x),
        ExprKind::Unary { arg, .. } | ExprKind::Cast { arg, .. } => f(arg),
        ExprKind::Binary { lhs, rhs, .. } => {
            f(lhs);
            f(rhs);
        }
        ExprKind::Intrinsic { args, .. } => {
            for a in args {
                f(a);
            }
        }
        ExprKind::Cond { cond, then, other } => {
            f(cond);
            f(then);
            f(other);
        }
        _ => {}
    }
}

/// Every use of the variable `from` in `stmts`, nested statements and loop
/// headers included, becomes a use of `to`.
pub fn rename_var(stmts: &mut [Stmt], from: SymId, to: SymId) {
    fn expr(e: &mut Expr, from: SymId, to: SymId) {
        if let ExprKind::Var(v) = &mut e.kind
            && *v == from
        {
            *v = to;
        }
        children_mut(e, &mut |c| expr(c, from, to));
    }
    fn init(i: &mut Init, from: SymId, to: SymId) {
        match i {
            Init::Expr(e) => expr(e, from, to),
            Init::List(items, _) => items.iter_mut().for_each(|i| init(i, from, to)),
        }
    }
    for s in stmts {
        match &mut s.kind {
            StmtKind::Assign { lhs, rhs, .. } => {
                expr(lhs, from, to);
                expr(rhs, from, to);
            }
            StmtKind::Call { result, args, .. } => {
                result
                    .iter_mut()
                    .chain(args.iter_mut())
                    .for_each(|e| expr(e, from, to));
            }
            StmtKind::Decl { vars, .. } => {
                for d in vars {
                    if d.sym == from {
                        d.sym = to;
                    }
                    if let Some(i) = &mut d.init {
                        init(i, from, to);
                    }
                }
            }
            StmtKind::Alloc { target, count, .. } => {
                expr(target, from, to);
                expr(count, from, to);
            }
            StmtKind::Free { ptr: e } | StmtKind::Return(Some(e)) | StmtKind::Discard(e) => {
                expr(e, from, to)
            }
            StmtKind::If { cond, then, other } => {
                expr(cond, from, to);
                rename_var(&mut then.stmts, from, to);
                if let Some(o) = other {
                    rename_var(&mut o.stmts, from, to);
                }
            }
            StmtKind::Loop { header, body } => {
                match header {
                    LoopHeader::For { init, cond, step } => {
                        rename_var(init, from, to);
                        if let Some(c) = cond {
                            expr(c, from, to);
                        }
                        rename_var(step, from, to);
                    }
                    LoopHeader::While { cond } | LoopHeader::DoWhile { cond } => {
                        expr(cond, from, to)
                    }
                }
                rename_var(&mut body.stmts, from, to);
            }
            StmtKind::Switch { selector, cases } => {
                expr(selector, from, to);
                for c in cases {
                    rename_var(&mut c.body, from, to);
                }
            }
            StmtKind::Block(b) => rename_var(&mut b.stmts, from, to),
            _ => {}
        }
    }
}

/// `e` without the casts around it (`(void *)p` is `p`).
pub fn strip_casts(mut e: &Expr) -> &Expr {
    while let ExprKind::Cast { arg, .. } = &e.kind {
        e = arg;
    }
    e
}

/// A null pointer constant: `0`, `NULL`, `(void *)0`.
pub fn is_null_constant(e: &Expr) -> bool {
    matches!(strip_casts(e).kind, ExprKind::IntConst { value: 0, .. })
}

/// Calls `f` on every expression of an initializer, lists flattened.
pub fn visit_init<'e>(init: &'e Init, f: &mut dyn FnMut(&'e Expr)) {
    match init {
        Init::Expr(e) => f(e),
        Init::List(items, _) => items.iter().for_each(|i| visit_init(i, f)),
    }
}

/// The reference a statement stores into as a whole: an assignment's
/// target, a call's result, an allocation's pointer.
pub fn stored_ref(s: &Stmt) -> Option<&Expr> {
    match &s.kind {
        StmtKind::Assign { lhs, .. } => Some(lhs),
        StmtKind::Call {
            result: Some(r), ..
        } => Some(r),
        StmtKind::Alloc { target, .. } => Some(target),
        _ => None,
    }
}

/// The expressions a statement evaluates itself (not those of nested
/// statements).
pub fn stmt_exprs(s: &Stmt) -> Vec<&Expr> {
    let mut out = Vec::new();
    match &s.kind {
        StmtKind::Assign { lhs, rhs, .. } => out.extend([lhs, rhs]),
        StmtKind::Call { result, args, .. } => {
            out.extend(result.iter());
            out.extend(args.iter());
        }
        StmtKind::Decl { vars, .. } => {
            for v in vars {
                if let Some(i) = &v.init {
                    visit_init(i, &mut |e| out.push(e));
                }
            }
        }
        StmtKind::Alloc { target, count, .. } => out.extend([target, count]),
        StmtKind::Free { ptr } => out.push(ptr),
        StmtKind::Return(Some(e)) | StmtKind::Discard(e) => out.push(e),
        StmtKind::If { cond, .. } => out.push(cond),
        StmtKind::Switch { selector, .. } => out.push(selector),
        StmtKind::Loop { header, .. } => match header {
            LoopHeader::For { cond, .. } => out.extend(cond.iter()),
            LoopHeader::While { cond } | LoopHeader::DoWhile { cond } => out.push(cond),
        },
        _ => {}
    }
    out
}

/// Calls `f` on every statement of a list, in source order, descending into
/// blocks, branches, loop headers, loop bodies and switch cases.
pub fn visit_stmts<'a>(stmts: &'a [Stmt], f: &mut impl FnMut(&'a Stmt)) {
    for s in stmts {
        visit_stmt(s, f);
    }
}

/// Calls `f` on every statement list nested in `stmts` (block, branch,
/// loop body and case bodies, not loop headers), innermost first, then on
/// `stmts` itself: for rewrites that replace a list's statements.
pub fn rewrite_stmt_lists(stmts: &mut Vec<Stmt>, f: &mut impl FnMut(&mut Vec<Stmt>)) {
    for s in stmts.iter_mut() {
        match &mut s.kind {
            StmtKind::If { then, other, .. } => {
                rewrite_stmt_lists(&mut then.stmts, f);
                if let Some(o) = other {
                    rewrite_stmt_lists(&mut o.stmts, f);
                }
            }
            StmtKind::Loop { body, .. } | StmtKind::Block(body) => {
                rewrite_stmt_lists(&mut body.stmts, f)
            }
            StmtKind::Switch { cases, .. } => {
                for c in cases {
                    rewrite_stmt_lists(&mut c.body, f);
                }
            }
            _ => {}
        }
    }
    f(stmts);
}

/// Calls `f` on a statement and then on every statement nested in it.
pub fn visit_stmt<'a>(s: &'a Stmt, f: &mut impl FnMut(&'a Stmt)) {
    f(s);
    match &s.kind {
        StmtKind::If { then, other, .. } => {
            visit_stmts(&then.stmts, f);
            if let Some(o) = other {
                visit_stmts(&o.stmts, f);
            }
        }
        StmtKind::Loop { header, body } => {
            if let LoopHeader::For { init, step, .. } = header {
                visit_stmts(init, f);
                visit_stmts(&body.stmts, f);
                visit_stmts(step, f);
            } else {
                visit_stmts(&body.stmts, f);
            }
        }
        StmtKind::Switch { cases, .. } => {
            for c in cases {
                visit_stmts(&c.body, f);
            }
        }
        StmtKind::Block(b) => visit_stmts(&b.stmts, f),
        _ => {}
    }
}
