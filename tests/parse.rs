//! Parser tests: C snippets to syntax-tree shapes, comments, errors, and
//! robustness on random input.

use aioli::front::ast::*;
use aioli::front::diag::Diagnostic;
use aioli::front::lexer::Token;
use aioli::front::parser::parse;
use aioli::front::preprocess::{IncludeRecord, PpComment, PpToken, Preprocessed};
use aioli::front::source::{SourceMap, Span};
use logos::Logos;
use proptest::prelude::*;

/// A stand-in for the preprocessor: lexes `text`, drops newlines, attaches
/// comments to the next token (with their same-line flag), and turns an
/// `#include ...` line into an `IncludeMark`. Returns `None` on a lexing
/// error.
fn preprocess_str(text: &str) -> Option<(SourceMap, Preprocessed)> {
    let mut sources = SourceMap::new();
    let file = sources.add("test.c", text.to_string());
    let line_starts: Vec<usize> = std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    let line_of = |offset: usize| line_starts.partition_point(|&s| s <= offset);
    let mut pp = Preprocessed {
        main_file: file,
        ..Preprocessed::default()
    };
    let mut pending: Vec<PpComment> = Vec::new();
    let mut prev_end_line: Option<usize> = None;
    let mut lexer = Token::lexer(text);
    let mut at_line_start = true;
    while let Some(result) = lexer.next() {
        let tok = result.ok()?;
        let range = lexer.span();
        let span = Span::new(file, range.start, range.end);
        match tok {
            Token::Newline => {
                at_line_start = true;
                continue;
            }
            Token::LineComment(ref t) | Token::BlockComment(ref t) => {
                pending.push(PpComment {
                    text: t.to_string(),
                    span,
                    same_line_as_prev: prev_end_line == Some(line_of(range.start)),
                });
                continue;
            }
            Token::Hash if at_line_start => {
                let line_end = text[range.start..]
                    .find('\n')
                    .map_or(text.len(), |n| range.start + n);
                let written = text[range.start..line_end].trim_end().to_string();
                pp.tokens.push(PpToken {
                    tok: Token::IncludeMark(pp.includes.len() as u32),
                    span: Span::new(file, range.start, line_end),
                    comments: std::mem::take(&mut pending),
                });
                pp.includes.push(IncludeRecord {
                    system: written.contains('<'),
                    written,
                    file: None,
                    trailing: None,
                });
                // Skip the rest of the directive line.
                while lexer.span().end < line_end {
                    lexer.next()?.ok()?;
                }
                prev_end_line = Some(line_of(line_end));
                at_line_start = false;
                continue;
            }
            _ => {}
        }
        at_line_start = false;
        prev_end_line = Some(line_of(range.end));
        pp.tokens.push(PpToken {
            tok,
            span,
            comments: std::mem::take(&mut pending),
        });
    }
    pp.final_comments = pending;
    Some((sources, pp))
}

fn parse_str(text: &str) -> Result<TranslationUnit, (SourceMap, Diagnostic)> {
    let (sources, pp) = preprocess_str(text).expect("test input must lex");
    parse(&pp, &sources).map_err(|d| (sources, d))
}

fn parse_ok(text: &str) -> TranslationUnit {
    match parse_str(text) {
        Ok(tu) => tu,
        Err((sources, d)) => panic!("parse failed: {}", aioli::front::diag::render(&sources, &d)),
    }
}

/// `line:col: message` of the error for `text`.
fn parse_err(text: &str) -> String {
    match parse_str(text) {
        Ok(tu) => panic!("expected an error, got {tu:?}"),
        Err((sources, d)) => {
            let (l, c) = sources.file(d.span.file).line_col(d.span.lo as usize);
            format!("{l}:{c}: {}", d.message)
        }
    }
}

fn function(tu: &TranslationUnit, index: usize) -> &FunctionDef {
    match &tu.items[index] {
        ExternalDecl::Function(f) => f,
        other => panic!("item {index} is not a function: {other:?}"),
    }
}

fn declaration(tu: &TranslationUnit, index: usize) -> &Declaration {
    match &tu.items[index] {
        ExternalDecl::Declaration(d) => d,
        other => panic!("item {index} is not a declaration: {other:?}"),
    }
}

/// The body statements of `void f(void) { BODY }`.
fn body(stmts: &str) -> Vec<Stmt> {
    let tu = parse_ok(&format!("void f(void) {{ {stmts} }}"));
    function(&tu, 0).body.items.clone()
}

/// The expression of `void f(void) { EXPR; }` (with typedefs before).
fn expr_with(prefix: &str, text: &str) -> Expr {
    let tu = parse_ok(&format!("{prefix}\nvoid f(void) {{ {text}; }}"));
    let f = function(&tu, tu.items.len() - 1);
    match &f.body.items[0].kind {
        StmtKind::Expr(Some(e)) => e.clone(),
        other => panic!("not an expression statement: {other:?}"),
    }
}

fn expr(text: &str) -> Expr {
    expr_with("", text)
}

/// A compact rendering of an expression tree, fully parenthesized.
fn show(e: &Expr) -> String {
    use ExprKind::*;
    match &e.kind {
        Ident(n) | IntLit(n) | FloatLit(n) | CharLit(n) => n.clone(),
        StrLit(parts) => parts.join(" "),
        Paren(inner) => format!("({})", show(inner)),
        Index(a, i) => format!("{}[{}]", show(a), show(i)),
        Call(f, args) => format!(
            "{}({})",
            show(f),
            args.iter().map(show).collect::<Vec<_>>().join(", ")
        ),
        Member(a, n) => format!("{}.{n}", show(a)),
        Arrow(a, n) => format!("{}->{n}", show(a)),
        PostInc(a) => format!("{{{}++}}", show(a)),
        PostDec(a) => format!("{{{}--}}", show(a)),
        PreInc(a) => format!("{{++{}}}", show(a)),
        PreDec(a) => format!("{{--{}}}", show(a)),
        Unary(op, a) => format!("{{{op:?} {}}}", show(a)),
        SizeofExpr(a) => format!("{{sizeof {}}}", show(a)),
        SizeofType(t) => format!("{{sizeof type {}}}", show_type(t)),
        Cast(t, a) => format!("{{cast {} {}}}", show_type(t), show(a)),
        CompoundLiteral(t, _) => format!("{{literal {}}}", show_type(t)),
        Binary(op, a, b) => format!("{{{} {op:?} {}}}", show(a), show(b)),
        Conditional(c, a, b) => format!("{{{} ? {} : {}}}", show(c), show(a), show(b)),
        Assign(op, a, b) => format!("{{{} ={op:?} {}}}", show(a), show(b)),
        Comma(a, b) => format!("{{{} , {}}}", show(a), show(b)),
    }
}

fn show_type(t: &TypeName) -> String {
    format!("{}{}", show_specs(&t.specs), show_declarator(&t.declarator))
}

fn show_specs(s: &DeclSpecs) -> String {
    s.items
        .iter()
        .map(|i| match i {
            DeclSpec::Storage(c, _) => format!("{c:?}"),
            DeclSpec::Qualifier(q, _) => format!("{q:?}"),
            DeclSpec::Inline(_) => "Inline".to_string(),
            DeclSpec::Type(TypeSpecifier::Basic(b, _)) => format!("{b:?}"),
            DeclSpec::Type(TypeSpecifier::Named(n, _)) => format!("Named({n})"),
            DeclSpec::Type(TypeSpecifier::Struct(s)) => format!(
                "Struct({:?}, {:?})",
                s.tag.as_ref().map(|t| t.0.clone()),
                s.fields.as_ref().map(|f| f.len())
            ),
            DeclSpec::Type(TypeSpecifier::Union(_)) => "Union".to_string(),
            DeclSpec::Type(TypeSpecifier::Enum(_)) => "Enum".to_string(),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A declarator tree as nested constructors, e.g. `Ptr(Arr(a, 3))`.
fn show_declarator(d: &Declarator) -> String {
    match &d.kind {
        DeclaratorKind::Ident(n) => n.clone(),
        DeclaratorKind::Abstract => "_".to_string(),
        DeclaratorKind::Pointer { qualifiers, inner } => {
            if qualifiers.is_empty() {
                format!("Ptr({})", show_declarator(inner))
            } else {
                format!("Ptr{qualifiers:?}({})", show_declarator(inner))
            }
        }
        DeclaratorKind::Array { inner, len } => format!(
            "Arr({}, {})",
            show_declarator(inner),
            len.as_ref().map_or("-".to_string(), |e| show(e))
        ),
        DeclaratorKind::Function {
            inner,
            params,
            variadic,
        } => format!(
            "Fn({}; {}{})",
            show_declarator(inner),
            params
                .iter()
                .map(|p| format!(
                    "{} {}",
                    show_specs(&p.specs),
                    show_declarator(&p.declarator)
                ))
                .collect::<Vec<_>>()
                .join(", "),
            if *variadic { ", ..." } else { "" }
        ),
        DeclaratorKind::Paren(inner) => format!("({})", show_declarator(inner)),
    }
}

// ---------------------------------------------------------------------------
// Expressions
// ---------------------------------------------------------------------------

#[test]
fn precedence_and_associativity() {
    assert_eq!(show(&expr("a + b * c")), "{a Add {b Mul c}}");
    assert_eq!(show(&expr("a - b - c")), "{{a Sub b} Sub c}");
    assert_eq!(show(&expr("a = b = c")), "{a =None {b =None c}}");
    assert_eq!(show(&expr("a += b * 2")), "{a =Some(Add) {b Mul 2}}");
    assert_eq!(
        show(&expr("a || b && c | d ^ e & f == g < h << i + j * k")),
        "{a Or {b And {c BitOr {d BitXor {e BitAnd {f Eq {g Lt {h Shl {i Add {j Mul k}}}}}}}}}}"
    );
    assert_eq!(show(&expr("a ? b : c ? d : e")), "{a ? b : {c ? d : e}}");
    assert_eq!(show(&expr("a, b = c, d")), "{{a , {b =None c}} , d}");
    assert_eq!(show(&expr("x <= y != z >= w")), "{{x Le y} Ne {z Ge w}}");
    assert_eq!(show(&expr("a % b / c")), "{{a Rem b} Div c}");
    assert_eq!(show(&expr("a >> 1 > 2")), "{{a Shr 1} Gt 2}");
}

#[test]
fn all_assignment_operators() {
    for (op, expected) in [
        ("=", "None"),
        ("+=", "Some(Add)"),
        ("-=", "Some(Sub)"),
        ("*=", "Some(Mul)"),
        ("/=", "Some(Div)"),
        ("%=", "Some(Rem)"),
        ("<<=", "Some(Shl)"),
        (">>=", "Some(Shr)"),
        ("&=", "Some(BitAnd)"),
        ("^=", "Some(BitXor)"),
        ("|=", "Some(BitOr)"),
    ] {
        assert_eq!(
            show(&expr(&format!("x {op} y"))),
            format!("{{x ={expected} y}}")
        );
    }
}

#[test]
fn unary_postfix_and_primary() {
    assert_eq!(show(&expr("-x * !y")), "{{Minus x} Mul {Not y}}");
    assert_eq!(show(&expr("*p++")), "{Deref {p++}}");
    assert_eq!(show(&expr("&a[i]")), "{AddrOf a[i]}");
    assert_eq!(show(&expr("~+x")), "{BitNot {Plus x}}");
    assert_eq!(show(&expr("++i + --j")), "{{++i} Add {--j}}");
    assert_eq!(show(&expr("i-- - -i")), "{{i--} Sub {Minus i}}");
    assert_eq!(show(&expr("p->q.r[2].s")), "p->q.r[2].s");
    assert_eq!(show(&expr("f(a, g(b), 3)(c)")), "f(a, g(b), 3)(c)");
    assert_eq!(show(&expr("f()")), "f()");
    assert_eq!(show(&expr("sizeof x + 1")), "{{sizeof x} Add 1}");
    assert_eq!(show(&expr("sizeof(double)")), "{sizeof type Double_}");
    assert_eq!(show(&expr("sizeof (x)")), "{sizeof (x)}");
    assert_eq!(
        show(&expr("1.5e3 + 'a' + 0x1F")),
        "{{1.5e3 Add 'a'} Add 0x1F}"
    );
    assert_eq!(show(&expr("puts(\"a\" \"b\")")), "puts(\"a\" \"b\")");
    let e = expr("\"x\" \"y\" \"z\"");
    assert_eq!(
        e.kind,
        ExprKind::StrLit(vec!["\"x\"".into(), "\"y\"".into(), "\"z\"".into()])
    );
}

#[test]
fn casts_versus_parentheses() {
    assert_eq!(show(&expr("(double) n / 2")), "{{cast Double_ n} Div 2}");
    assert_eq!(show(&expr("(n) / 2")), "{(n) Div 2}");
    assert_eq!(show(&expr("(n) - 2")), "{(n) Sub 2}");
    assert_eq!(
        show(&expr_with("typedef double real;", "(real) - 2")),
        "{cast Named(real)_ {Minus 2}}"
    );
    assert_eq!(
        show(&expr("(double *) malloc(n * sizeof(double))")),
        "{cast DoublePtr(_) malloc({n Mul {sizeof type Double_}})}"
    );
    assert_eq!(
        show(&expr("(const unsigned long int) x")),
        "{cast Const Unsigned Long Int_ x}"
    );
    assert_eq!(
        show(&expr("(int)(double)x")),
        "{cast Int_ {cast Double_ x}}"
    );
}

// ---------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------

#[test]
fn declarator_nesting() {
    let tu = parse_ok("double *a[3]; double (*b)[3]; int **const *c; double d[2][4];");
    let decl = |i| show_declarator(&declaration(&tu, i).declarators[0].declarator);
    assert_eq!(decl(0), "Ptr(Arr(a, 3))");
    assert_eq!(decl(1), "Arr((Ptr(b)), 3)");
    assert_eq!(decl(2), "Ptr(Ptr[Const](Ptr(c)))");
    assert_eq!(decl(3), "Arr(Arr(d, 2), 4)");
}

#[test]
fn several_init_declarators_and_initializers() {
    let tu = parse_ok(
        "static const double x = 1.0, *p, v[] = {1, 2, 3,}, m[2][2] = {{1, 2}, {3, 4}};\n\
         int e[3] = {};\n\
         struct P q = {.x = 1, [2] = 3};",
    );
    let d = declaration(&tu, 0);
    assert_eq!(show_specs(&d.specs), "Static Const Double");
    assert_eq!(d.declarators.len(), 4);
    assert!(matches!(d.declarators[0].init, Some(Initializer::Expr(_))));
    assert!(d.declarators[1].init.is_none());
    assert_eq!(show_declarator(&d.declarators[2].declarator), "Arr(v, -)");
    match &d.declarators[2].init {
        Some(Initializer::List(items, _)) => assert_eq!(items.len(), 3),
        other => panic!("{other:?}"),
    }
    match &d.declarators[3].init {
        Some(Initializer::List(items, _)) => {
            assert!(matches!(&items[0], Initializer::List(inner, _) if inner.len() == 2))
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        &declaration(&tu, 1).declarators[0].init,
        Some(Initializer::List(items, _)) if items.is_empty()
    ));
    match &declaration(&tu, 2).declarators[0].init {
        Some(Initializer::List(items, _)) => {
            assert!(
                items
                    .iter()
                    .all(|i| matches!(i, Initializer::Designated(..)))
            )
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn type_specifiers_in_any_order() {
    let tu = parse_ok(
        "unsigned long int a; long unsigned b; int long c; signed char d; short e; _Bool f;\n\
         extern double g; register int h; auto int i; volatile float j; static inline double k(void);",
    );
    let specs: Vec<String> = (0..tu.items.len())
        .map(|i| show_specs(&declaration(&tu, i).specs))
        .collect();
    assert_eq!(
        specs,
        [
            "Unsigned Long Int",
            "Long Unsigned",
            "Int Long",
            "Signed Char",
            "Short",
            "Bool",
            "Extern Double",
            "Register Int",
            "Auto Int",
            "Volatile Float",
            "Static Inline Double"
        ]
    );
}

#[test]
fn function_declarators_and_parameters() {
    let tu = parse_ok(
        "double f(double x, const double *restrict y, int n, double a[], double m[][3]);\n\
         int g(void);\n\
         int h();\n\
         int printf(const char *fmt, ...);\n\
         double k(double (*)(double), int [], double *, char);\n\
         double *l(int), (*fp)(double);",
    );
    let decl = |i: usize, j: usize| show_declarator(&declaration(&tu, i).declarators[j].declarator);
    assert_eq!(
        decl(0, 0),
        "Fn(f; Double x, Const Double Ptr[Restrict](y), Int n, Double Arr(a, -), Double Arr(Arr(m, -), 3))"
    );
    assert_eq!(decl(1, 0), "Fn(g; Void _)");
    assert_eq!(decl(2, 0), "Fn(h; )");
    assert_eq!(decl(3, 0), "Fn(printf; Const Char Ptr(fmt), ...)");
    assert_eq!(
        decl(4, 0),
        "Fn(k; Double Fn((Ptr(_)); Double _), Int Arr(_, -), Double Ptr(_), Char _)"
    );
    assert_eq!(decl(5, 0), "Ptr(Fn(l; Int _))");
    assert_eq!(decl(5, 1), "Fn((Ptr(fp)); Double _)");
}

#[test]
fn function_definitions() {
    let tu = parse_ok(
        "static double sq(double x) { return x * x; }\n\
         void axpy(int n, double a, const double *x, double *y) {\n\
           for (int i = 0; i < n; i++) y[i] += a * x[i];\n\
         }",
    );
    let f = function(&tu, 0);
    assert_eq!(show_specs(&f.specs), "Static Double");
    assert_eq!(show_declarator(&f.declarator), "Fn(sq; Double x)");
    assert!(matches!(&f.body.items[0].kind, StmtKind::Return(Some(_))));
    let g = function(&tu, 1);
    match &g.body.items[0].kind {
        StmtKind::For {
            init: ForInit::Decl(d),
            cond: Some(c),
            step: Some(s),
            body,
        } => {
            assert_eq!(show_declarator(&d.declarators[0].declarator), "i");
            assert_eq!(show(c), "{i Lt n}");
            assert_eq!(show(s), "{i++}");
            assert!(matches!(body.kind, StmtKind::Expr(Some(_))));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn structs_unions_enums() {
    let tu = parse_ok(
        "struct P { double x, y; struct P *next; unsigned flag : 1; int : 3; };\n\
         struct P p;\n\
         struct { int a; } anon;\n\
         union U { int i; double d; } u;\n\
         enum Color { RED, GREEN = 2, BLUE, } c;\n\
         enum Color c2;",
    );
    let d = declaration(&tu, 0);
    assert!(d.declarators.is_empty());
    match &d.specs.items[0] {
        DeclSpec::Type(TypeSpecifier::Struct(s)) => {
            assert_eq!(s.tag.as_ref().map(|t| t.0.as_str()), Some("P"));
            let fields = s.fields.as_ref().expect("a body");
            assert_eq!(fields.len(), 4);
            assert_eq!(fields[0].declarators.len(), 2);
            assert_eq!(
                show_declarator(&fields[1].declarators[0].declarator),
                "Ptr(next)"
            );
            assert!(fields[2].declarators[0].bit_width.is_some());
            assert_eq!(show_declarator(&fields[3].declarators[0].declarator), "_");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        show_specs(&declaration(&tu, 1).specs),
        "Struct(Some(\"P\"), None)"
    );
    assert_eq!(
        show_specs(&declaration(&tu, 2).specs),
        "Struct(None, Some(1))"
    );
    assert_eq!(show_specs(&declaration(&tu, 3).specs), "Union");
    assert_eq!(show_specs(&declaration(&tu, 4).specs), "Enum");
    assert_eq!(show_specs(&declaration(&tu, 5).specs), "Enum");
}

#[test]
fn typedef_names() {
    let tu = parse_ok(
        "typedef double real;\n\
         typedef struct P { double x; } P, *PP;\n\
         typedef double (*fp)(double);\n\
         typedef real vec[3];\n\
         real f(real x, P p, PP q, vec v, fp g) {\n\
           real y = (real) x;\n\
           P *r = &p;\n\
           real * z;\n\
           y = sizeof(P) + q->x + r->x;\n\
           return y;\n\
         }",
    );
    assert_eq!(
        show_specs(&declaration(&tu, 3).specs),
        "Typedef Named(real)"
    );
    let f = function(&tu, 4);
    assert_eq!(
        show_declarator(&f.declarator),
        "Fn(f; Named(real) x, Named(P) p, Named(PP) q, Named(vec) v, Named(fp) g)"
    );
    let decl = |i: usize| match &f.body.items[i].kind {
        StmtKind::Decl(d) => (
            show_specs(&d.specs),
            show_declarator(&d.declarators[0].declarator),
        ),
        other => panic!("{other:?}"),
    };
    assert_eq!(decl(0), ("Named(real)".into(), "y".into()));
    assert_eq!(decl(1), ("Named(P)".into(), "Ptr(r)".into()));
    // `real * z;` is a declaration, not a multiplication.
    assert_eq!(decl(2), ("Named(real)".into(), "Ptr(z)".into()));
    let d = declaration(&tu, 2);
    assert_eq!(
        show_declarator(&d.declarators[0].declarator),
        "Fn((Ptr(fp)); Double _)"
    );
}

#[test]
fn typedef_shadowing_and_tags() {
    let tu = parse_ok(
        "typedef double T;\n\
         struct T { T v; };\n\
         void f(void) {\n\
           T x;\n\
           x = 1;\n\
           {\n\
             int T;\n\
             T = 2;\n\
             x = T * 3;\n\
           }\n\
           T y;\n\
           y = x;\n\
         }\n\
         void g(int T) { T = 1; }\n\
         T h(void) { struct T s; s.v = 1; return s.v; }",
    );
    match &declaration(&tu, 1).specs.items[0] {
        DeclSpec::Type(TypeSpecifier::Struct(s)) => {
            assert_eq!(s.tag.as_ref().map(|t| t.0.as_str()), Some("T"));
            assert_eq!(
                show_specs(&s.fields.as_ref().expect("body")[0].specs),
                "Named(T)"
            );
        }
        other => panic!("{other:?}"),
    }
    let f = function(&tu, 2);
    match &f.body.items[2].kind {
        StmtKind::Compound(c) => {
            assert!(matches!(&c.items[0].kind, StmtKind::Decl(_)));
            match &c.items[2].kind {
                StmtKind::Expr(Some(e)) => assert_eq!(show(e), "{x =None {T Mul 3}}"),
                other => panic!("{other:?}"),
            }
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(&f.body.items[3].kind, StmtKind::Decl(_)));
    let g = function(&tu, 3);
    assert!(matches!(&g.body.items[0].kind, StmtKind::Expr(Some(_))));
}

#[test]
fn includes_at_top_level() {
    let tu = parse_ok("#include <math.h>\n#include \"local.h\"\ndouble x;\n");
    assert!(matches!(tu.items[0], ExternalDecl::Include(0, _, _)));
    assert!(matches!(tu.items[1], ExternalDecl::Include(1, _, _)));
    assert!(matches!(tu.items[2], ExternalDecl::Declaration(_)));
}

// ---------------------------------------------------------------------------
// Statements
// ---------------------------------------------------------------------------

#[test]
fn dangling_else_binds_to_nearest_if() {
    let stmts = body("if (a) if (b) x = 1; else x = 2;");
    match &stmts[0].kind {
        StmtKind::If {
            other: None, then, ..
        } => assert!(matches!(&then.kind, StmtKind::If { other: Some(_), .. })),
        other => panic!("{other:?}"),
    }
    let stmts = body("if (a) { if (b) x = 1; } else x = 2;");
    assert!(matches!(
        &stmts[0].kind,
        StmtKind::If { other: Some(_), .. }
    ));
    let stmts = body("if (a) x = 1; else if (b) x = 2; else x = 3;");
    match &stmts[0].kind {
        StmtKind::If { other: Some(o), .. } => {
            assert!(matches!(&o.kind, StmtKind::If { other: Some(_), .. }))
        }
        other => panic!("{other:?}"),
    }
    let stmts = body("while (a) if (b) x = 1; else x = 2;");
    match &stmts[0].kind {
        StmtKind::While { body, .. } => {
            assert!(matches!(&body.kind, StmtKind::If { other: Some(_), .. }))
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn every_statement_kind() {
    let stmts = body(
        "int i, s = 0;\n\
         ;\n\
         { s++; }\n\
         while (i < 10) i++;\n\
         do { i--; } while (i > 0);\n\
         for (;;) break;\n\
         for (i = 0; i < 3; i++) continue;\n\
         switch (i) { case 1: s = 1; case 2: case 3: s = 2; break; default: s = 0; }\n\
         goto done;\n\
         done: return;\n\
         return s;",
    );
    let kinds: Vec<&str> = stmts
        .iter()
        .map(|s| match &s.kind {
            StmtKind::Compound(_) => "compound",
            StmtKind::Expr(None) => "empty",
            StmtKind::Expr(Some(_)) => "expr",
            StmtKind::Decl(_) => "decl",
            StmtKind::If { .. } => "if",
            StmtKind::While { .. } => "while",
            StmtKind::DoWhile { .. } => "do",
            StmtKind::For { .. } => "for",
            StmtKind::Switch { .. } => "switch",
            StmtKind::Case { .. } => "case",
            StmtKind::Default { .. } => "default",
            StmtKind::Break => "break",
            StmtKind::Continue => "continue",
            StmtKind::Return(_) => "return",
            StmtKind::Goto(_) => "goto",
            StmtKind::Labeled { .. } => "label",
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "decl", "empty", "compound", "while", "do", "for", "for", "switch", "goto", "label",
            "return"
        ]
    );
    match &stmts[5].kind {
        StmtKind::For {
            init: ForInit::None,
            cond: None,
            step: None,
            body,
        } => assert!(matches!(body.kind, StmtKind::Break)),
        other => panic!("{other:?}"),
    }
    match &stmts[7].kind {
        StmtKind::Switch { body, .. } => match &body.kind {
            StmtKind::Compound(c) => {
                assert!(matches!(&c.items[0].kind, StmtKind::Case { .. }));
                // `case 2: case 3: s = 2;` nests.
                match &c.items[1].kind {
                    StmtKind::Case { body, .. } => {
                        assert!(matches!(&body.kind, StmtKind::Case { .. }))
                    }
                    other => panic!("{other:?}"),
                }
                assert!(matches!(&c.items[3].kind, StmtKind::Default { .. }));
            }
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    }
    assert!(matches!(&stmts[8].kind, StmtKind::Goto(l) if l == "done"));
    assert!(matches!(&stmts[9].kind, StmtKind::Labeled { label, .. } if label == "done"));
}

#[test]
fn spans_cover_the_source() {
    let text = "void f(void) {\n  x = a + b;\n}\n";
    let (sources, pp) = preprocess_str(text).expect("lexes");
    let tu = parse(&pp, &sources).expect("parses");
    let f = function(&tu, 0);
    assert_eq!(sources.snippet(f.span), text.trim_end());
    assert_eq!(sources.snippet(f.body.items[0].span), "x = a + b;");
    match &f.body.items[0].kind {
        StmtKind::Expr(Some(Expr {
            kind: ExprKind::Assign(_, _, rhs),
            ..
        })) => assert_eq!(sources.snippet(rhs.span), "a + b"),
        other => panic!("{other:?}"),
    }
}

// ---------------------------------------------------------------------------
// Comments
// ---------------------------------------------------------------------------

#[test]
fn comments_leading_trailing_closing() {
    let tu = parse_ok(
        "/* file header */\n\
         #include <math.h>\n\
         // The function.\n\
         double f(double x) { // after brace\n\
           /* a */\n\
           // b\n\
           double y = x; // trailing y\n\
           if (x > 0) y = 2 * x; /* t1 */ /* t2 */\n\
           y += 1 /* inside */;\n\
           /* before close */\n\
         } // after f\n\
         struct S {\n\
           double a; // field a\n\
           /* field b */\n\
           double b;\n\
         };\n\
         /* the end */\n",
    );
    // A comment before an `#include` stays with it.
    match &tu.items[0] {
        ExternalDecl::Include(_, _, c) => assert_eq!(c.leading, ["/* file header */"]),
        other => panic!("{other:?}"),
    }
    let f = function(&tu, 1);
    assert_eq!(f.comments.leading, ["// The function."]);
    assert_eq!(f.comments.trailing.as_deref(), Some("// after f"));
    let s = &f.body.items;
    assert_eq!(s[0].comments.leading, ["// after brace", "/* a */", "// b"]);
    assert_eq!(s[0].comments.trailing.as_deref(), Some("// trailing y"));
    assert!(matches!(&s[0].kind, StmtKind::Decl(d) if d.comments.is_empty()));
    // A trailing comment belongs to the innermost statement ending there.
    assert!(s[1].comments.is_empty());
    match &s[1].kind {
        StmtKind::If { then, .. } => {
            assert_eq!(then.comments.trailing.as_deref(), Some("/* t1 */ /* t2 */"))
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(s[2].comments.leading, ["/* inside */"]);
    assert_eq!(f.body.closing_comments, ["/* before close */"]);
    let d = declaration(&tu, 2);
    match &d.specs.items[0] {
        DeclSpec::Type(TypeSpecifier::Struct(st)) => {
            let fields = st.fields.as_ref().expect("body");
            assert_eq!(fields[0].comments.trailing.as_deref(), Some("// field a"));
            assert_eq!(fields[1].comments.leading, ["/* field b */"]);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn trailing_comment_goes_to_innermost_statement() {
    let stmts = body("while (a)\n  a--; // dec\nb = 1;");
    assert!(stmts[0].comments.is_empty());
    match &stmts[0].kind {
        StmtKind::While { body, .. } => {
            assert_eq!(body.comments.trailing.as_deref(), Some("// dec"))
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn no_comment_is_lost_in_statement_position() {
    let text = "int g; /* g */\n/* lone */\nvoid f(int n) {\n  /* 1 */ n++; /* 2 */\n  if (n) /* 3 */ { /* 4 */ } /* 5 */ else /* 6 */ n--;\n  /* 7 */\n}\n/* 8 */\n";
    let tu = parse_ok(text);
    let dump = format!("{tu:?}");
    for k in 1..=8 {
        assert!(
            dump.contains(&format!("/* {k} */")),
            "comment {k} lost: {dump}"
        );
    }
    assert!(dump.contains("/* g */") && dump.contains("/* lone */"));
}

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

#[test]
fn syntax_errors_are_located_and_readable() {
    let missing_semi = parse_err("void f(void) {\n  x = 1\n  y = 2;\n}\n");
    eprintln!("{missing_semi}");
    assert!(
        missing_semi.starts_with("3:3: expected one of ';', ',' or operator, found 'y'"),
        "{missing_semi}"
    );
    assert!(missing_semi.ends_with(", found 'y'"), "{missing_semi}");
    let listed = missing_semi.matches('\'').count() / 2 - 1;
    assert!(listed <= 6, "list too long: {missing_semi}");

    let missing_paren = parse_err("int f(void) {\n  return (a + b;\n}");
    eprintln!("{missing_paren}");
    assert!(
        missing_paren.starts_with("2:16: expected"),
        "{missing_paren}"
    );
    assert!(missing_paren.contains("')'"), "{missing_paren}");
    assert!(missing_paren.ends_with("found ';'"), "{missing_paren}");

    let eof = parse_err("int f(void) {\n  return 1;\n");
    eprintln!("{eof}");
    assert!(eof.starts_with("2:12: unexpected end of input"), "{eof}");

    let bad_decl = parse_err("double x y;");
    eprintln!("{bad_decl}");
    assert!(bad_decl.starts_with("1:10: expected"), "{bad_decl}");
    assert!(bad_decl.ends_with("found 'y'"), "{bad_decl}");

    let stray = parse_err("int x;\n}\n");
    eprintln!("{stray}");
    assert!(stray.starts_with("2:1: "), "{stray}");
    assert!(stray.contains("found '}'"), "{stray}");

    let missing_operand = parse_err("int f(void) {\n  return a * ;\n}");
    eprintln!("{missing_operand}");
    assert_eq!(missing_operand, "2:14: expected expression, found ';'");

    let bad_statement = parse_err("void f(void) {\n  else x = 1;\n}");
    eprintln!("{bad_statement}");
    assert!(
        bad_statement.starts_with("2:3: expected "),
        "{bad_statement}"
    );
    assert!(bad_statement.contains("statement"), "{bad_statement}");
}

#[test]
fn too_deep_nesting_is_an_error_not_a_crash() {
    let deep_parens = format!("int x = {}1{};", "(".repeat(5000), ")".repeat(5000));
    assert!(parse_err(&deep_parens).contains("nested too deeply"));
    let long_chain = format!("int x = 1{};", " + 1".repeat(5000));
    assert!(parse_err(&long_chain).contains("nested too deeply"));
    let else_chain = format!(
        "void f(int a) {{ {} }}",
        "if (a) a = 1; else ".repeat(5000) + "a = 0;"
    );
    assert!(parse_err(&else_chain).contains("nested too deeply"));
    let assign_chain = format!("void f(int a) {{ {} a; }}", "a = ".repeat(5000));
    assert!(parse_err(&assign_chain).contains("nested too deeply"));
    // Within the limit, fine.
    parse_ok(&format!("int x = 1{};", " + 1".repeat(500)));
}

/// A diagnostic on a very long line (generated code) shows a window of
/// it around the column, marked `...` where it is cut, with the caret
/// still under the offending character.
#[test]
fn a_long_line_is_shown_as_a_window_around_the_error() {
    let text = format!(
        "int x = 1{} ) 2{};\n",
        " + 1".repeat(300),
        " + 1".repeat(300)
    );
    let Err((sources, d)) = parse_str(&text) else {
        panic!("expected an error");
    };
    let shown = aioli::front::diag::render(&sources, &d);
    let lines: Vec<&str> = shown.lines().collect();
    assert_eq!(lines.len(), 3, "{shown}");
    assert!(
        lines[1].starts_with("...") && lines[1].ends_with("..."),
        "{shown}"
    );
    assert!(lines[1].chars().count() <= 166, "{shown}");
    let caret = lines[2].find('^').unwrap();
    assert_eq!(&lines[1][caret..caret + 1], ")", "{shown}");
}

/// A 50,000-line input parses completely (its speed is measured by
/// `cargo bench --bench front`; tests never time things).
#[test]
fn fifty_thousand_lines_parse() {
    let mut text = String::from("typedef double real;\nstruct P { real x, y; };\n");
    let mut n = 0;
    let mut functions = 0;
    while n < 50_000 {
        functions += 1;
        text.push_str(&format!(
            "real f{n}(real *a, const struct P *p, int m) {{\n  real s = 0.0; /* sum */\n  for (int i = 0; i < m; i++) {{\n    s += a[i] * p->x + (real) i / 2.0;\n  }}\n  if (s > 1e3) s = sqrt(s); else s = -s;\n  return s * s + p->y;\n}}\n"
        ));
        n += 8;
    }
    let (sources, pp) = preprocess_str(&text).expect("lexes");
    let tu = parse(&pp, &sources).expect("parses");
    assert_eq!(tu.items.len(), 2 + functions);
}

// ---------------------------------------------------------------------------
// Robustness
// ---------------------------------------------------------------------------

const VALID_SAMPLES: &[&str] = &[
    "typedef struct P { double x; } P;\ndouble f(P *p, int n) { double s = 0; for (int i = 0; i < n; i++) s += p[i].x; return s; }",
    "int g(int a) { switch (a) { case 1: return 2; default: break; } while (a--) if (a) a = (int) 2.0; else continue; return a ? a : -a; }",
    "static const double c[3] = {1, 2, 3,};\nvoid h(double *restrict y, const double *x) { y[0] = x[0] * c[1] + sizeof(double); }",
];

const TOKEN_POOL: &[&str] = &[
    "int", "double", "x", "y", "T", "typedef", "struct", "(", ")", "{", "}", "[", "]", ";", ",",
    "=", "+", "*", "&", "?", ":", "if", "else", "for", "while", "return", "1", "2.0", "'c'",
    "\"s\"", "->", ".", "...", "sizeof", "const", "case", "default", "switch", "do", "goto",
    "union", "enum", "++", "--", "!", "~", "<<=", "&&", "||", "static", "void",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn random_tokens_never_panic(picks in proptest::collection::vec(0..TOKEN_POOL.len(), 0..60)) {
        let text: Vec<&str> = picks.iter().map(|&i| TOKEN_POOL[i]).collect();
        let text = text.join(" ");
        if let Some((sources, pp)) = preprocess_str(&text) {
            let _ = parse(&pp, &sources);
        }
    }

    #[test]
    fn mutated_valid_c_never_panics(
        sample in 0..VALID_SAMPLES.len(),
        edits in proptest::collection::vec((any::<prop::sample::Index>(), 0..TOKEN_POOL.len(), 0..3u8), 1..6),
    ) {
        let mut words: Vec<String> = VALID_SAMPLES[sample]
            .split_inclusive(|c: char| !c.is_alphanumeric() && c != '_' && c != '.')
            .map(str::to_string)
            .collect();
        for (at, pick, kind) in edits {
            if words.is_empty() {
                break;
            }
            let i = at.index(words.len());
            match kind {
                0 => { words.remove(i); }
                1 => words.insert(i, format!(" {} ", TOKEN_POOL[pick])),
                _ => words[i] = format!(" {} ", TOKEN_POOL[pick]),
            }
        }
        let text = words.concat();
        if let Some((sources, pp)) = preprocess_str(&text) {
            let _ = parse(&pp, &sources);
        }
    }
}

/// C99 6.7.5.3: `static` and qualifiers inside a parameter's brackets
/// (`x[static 2]`, `y[const 1]`, `z[const static 3]`) parse as the array
/// they declare.
#[test]
fn array_parameters_with_static_and_qualifiers() {
    let tu = parse_ok(
        "void f(const double x[static 2], double y[const 1], double z[const static 3], double w[restrict]) { }\n",
    );
    let _ = function(&tu, 0);
}
