//! The C lexer (logos).
//!
//! One lexer serves both the preprocessor and the parser. It keeps what the
//! preprocessor needs and a compiler would throw away: newlines (directives
//! are line-based), `#` and `##`, and comments (they reappear in the output).
//! Horizontal white space and backslash-newline continuations are skipped.
//!
//! Every C99 keyword is a token, including the ones the input language does
//! not support (`goto`, `union`, ...): the parser accepts them where C does,
//! so that lowering can reject them with a message naming the construct.
//!
//! Identifiers that name a typedef are re-tagged [`Token::TypeName`] after
//! preprocessing (the classic "lexer hack"); logos itself only produces
//! [`Token::Ident`].

use logos::Logos;
use std::borrow::Cow;
use std::rc::Rc;

fn text(lex: &mut logos::Lexer<'_, Token>) -> Rc<str> {
    Rc::from(lex.slice())
}

#[derive(Logos, Clone, Debug, PartialEq)]
#[logos(skip r"[ \t\f\r\x0b]+")]
#[logos(skip r"\\\r?\n")]
pub enum Token {
    #[token("\n")]
    Newline,
    #[regex(r"//[^\n]*", text, allow_greedy = true)]
    LineComment(Rc<str>),
    #[regex(r"/\*([^*]|\*+[^*/])*\*+/", text)]
    BlockComment(Rc<str>),

    #[regex(r"[A-Za-z_][A-Za-z0-9_]*", text)]
    Ident(Rc<str>),
    /// An identifier declared by `typedef` (set after preprocessing).
    TypeName(Rc<str>),
    /// An `#include` line, replaced by the preprocessor with this marker:
    /// an index into `Preprocessed::includes`.
    IncludeMark(u32),
    #[regex(r"(0[xX][0-9A-Fa-f]+|[0-9]+)[uUlL]*", text)]
    IntLit(Rc<str>),
    #[regex(r"([0-9]+\.[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?[fFlL]?", text)]
    #[regex(r"[0-9]+[eE][+-]?[0-9]+[fFlL]?", text)]
    #[regex(r"0[xX][0-9A-Fa-f]*(\.[0-9A-Fa-f]*)?[pP][+-]?[0-9]+[fFlL]?", text)]
    FloatLit(Rc<str>),
    #[regex(r#""([^"\\\n]|\\.)*""#, text)]
    StrLit(Rc<str>),
    #[regex(r#"'([^'\\\n]|\\.)+'"#, text)]
    CharLit(Rc<str>),

    // Keywords.
    #[token("auto")]
    KwAuto,
    #[token("break")]
    KwBreak,
    #[token("case")]
    KwCase,
    #[token("char")]
    KwChar,
    #[token("const")]
    KwConst,
    #[token("continue")]
    KwContinue,
    #[token("default")]
    KwDefault,
    #[token("do")]
    KwDo,
    #[token("double")]
    KwDouble,
    #[token("else")]
    KwElse,
    #[token("enum")]
    KwEnum,
    #[token("extern")]
    KwExtern,
    #[token("float")]
    KwFloat,
    #[token("for")]
    KwFor,
    #[token("goto")]
    KwGoto,
    #[token("if")]
    KwIf,
    #[token("inline")]
    KwInline,
    #[token("int")]
    KwInt,
    #[token("long")]
    KwLong,
    #[token("register")]
    KwRegister,
    #[token("restrict")]
    KwRestrict,
    #[token("return")]
    KwReturn,
    #[token("short")]
    KwShort,
    #[token("signed")]
    KwSigned,
    #[token("sizeof")]
    KwSizeof,
    #[token("static")]
    KwStatic,
    #[token("struct")]
    KwStruct,
    #[token("switch")]
    KwSwitch,
    #[token("typedef")]
    KwTypedef,
    #[token("union")]
    KwUnion,
    #[token("unsigned")]
    KwUnsigned,
    #[token("void")]
    KwVoid,
    #[token("volatile")]
    KwVolatile,
    #[token("while")]
    KwWhile,
    #[token("_Bool")]
    KwBool,

    // Punctuators.
    #[token("#")]
    Hash,
    #[token("##")]
    HashHash,
    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("[")]
    LBracket,
    #[token("]")]
    RBracket,
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token(".")]
    Dot,
    #[token("->")]
    Arrow,
    #[token("...")]
    Ellipsis,
    #[token(",")]
    Comma,
    #[token(";")]
    Semi,
    #[token(":")]
    Colon,
    #[token("?")]
    Question,
    #[token("=")]
    Assign,
    #[token("+=")]
    PlusAssign,
    #[token("-=")]
    MinusAssign,
    #[token("*=")]
    StarAssign,
    #[token("/=")]
    SlashAssign,
    #[token("%=")]
    PercentAssign,
    #[token("&=")]
    AmpAssign,
    #[token("|=")]
    PipeAssign,
    #[token("^=")]
    CaretAssign,
    #[token("<<=")]
    ShlAssign,
    #[token(">>=")]
    ShrAssign,
    #[token("++")]
    PlusPlus,
    #[token("--")]
    MinusMinus,
    #[token("+")]
    Plus,
    #[token("-")]
    Minus,
    #[token("*")]
    Star,
    #[token("/")]
    Slash,
    #[token("%")]
    Percent,
    #[token("&")]
    Amp,
    #[token("|")]
    Pipe,
    #[token("^")]
    Caret,
    #[token("~")]
    Tilde,
    #[token("!")]
    Bang,
    #[token("<<")]
    Shl,
    #[token(">>")]
    Shr,
    #[token("<")]
    Lt,
    #[token(">")]
    Gt,
    #[token("<=")]
    Le,
    #[token(">=")]
    Ge,
    #[token("==")]
    EqEq,
    #[token("!=")]
    NotEq,
    #[token("&&")]
    AndAnd,
    #[token("||")]
    OrOr,
}

/// How a token is written in C (an [`Token::IncludeMark`] is shown as
/// `<include N>`).
pub fn spelling(tok: &Token) -> Cow<'static, str> {
    use Token::*;
    let s: &'static str = match tok {
        Newline => "\n",
        LineComment(s) | BlockComment(s) | Ident(s) | TypeName(s) | IntLit(s) | FloatLit(s)
        | StrLit(s) | CharLit(s) => return Cow::Owned(s.to_string()),
        IncludeMark(i) => return Cow::Owned(format!("<include {i}>")),
        KwAuto => "auto",
        KwBreak => "break",
        KwCase => "case",
        KwChar => "char",
        KwConst => "const",
        KwContinue => "continue",
        KwDefault => "default",
        KwDo => "do",
        KwDouble => "double",
        KwElse => "else",
        KwEnum => "enum",
        KwExtern => "extern",
        KwFloat => "float",
        KwFor => "for",
        KwGoto => "goto",
        KwIf => "if",
        KwInline => "inline",
        KwInt => "int",
        KwLong => "long",
        KwRegister => "register",
        KwRestrict => "restrict",
        KwReturn => "return",
        KwShort => "short",
        KwSigned => "signed",
        KwSizeof => "sizeof",
        KwStatic => "static",
        KwStruct => "struct",
        KwSwitch => "switch",
        KwTypedef => "typedef",
        KwUnion => "union",
        KwUnsigned => "unsigned",
        KwVoid => "void",
        KwVolatile => "volatile",
        KwWhile => "while",
        KwBool => "_Bool",
        Hash => "#",
        HashHash => "##",
        LParen => "(",
        RParen => ")",
        LBracket => "[",
        RBracket => "]",
        LBrace => "{",
        RBrace => "}",
        Dot => ".",
        Arrow => "->",
        Ellipsis => "...",
        Comma => ",",
        Semi => ";",
        Colon => ":",
        Question => "?",
        Assign => "=",
        PlusAssign => "+=",
        MinusAssign => "-=",
        StarAssign => "*=",
        SlashAssign => "/=",
        PercentAssign => "%=",
        AmpAssign => "&=",
        PipeAssign => "|=",
        CaretAssign => "^=",
        ShlAssign => "<<=",
        ShrAssign => ">>=",
        PlusPlus => "++",
        MinusMinus => "--",
        Plus => "+",
        Minus => "-",
        Star => "*",
        Slash => "/",
        Percent => "%",
        Amp => "&",
        Pipe => "|",
        Caret => "^",
        Tilde => "~",
        Bang => "!",
        Shl => "<<",
        Shr => ">>",
        Lt => "<",
        Gt => ">",
        Le => "<=",
        Ge => ">=",
        EqEq => "==",
        NotEq => "!=",
        AndAnd => "&&",
        OrOr => "||",
    };
    Cow::Borrowed(s)
}
