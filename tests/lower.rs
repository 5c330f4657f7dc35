//! Lowering tests. Until the preprocessor and parser land, syntax trees are
//! built by hand with the small builders below; `FileId(1)` plays the role
//! of a virtual system header.

use aioli::front::ast::{self, BasicType as B, BinaryOp, DeclSpec, DeclaratorKind as DK};
use aioli::front::lower::{Lowered, lower};
use aioli::front::preprocess::{IncludeRecord, Preprocessed};
use aioli::front::source::{FileId, SourceMap, Span};
use aioli::il::*;

const MAIN: FileId = FileId(0);
const SYS: FileId = FileId(1);

/// Spans: every builder takes the next offset so that nodes are distinct.
fn at(lo: usize) -> Span {
    Span::new(MAIN, lo, lo + 1)
}
fn sp() -> Span {
    at(0)
}

fn e(kind: ast::ExprKind) -> ast::Expr {
    ast::Expr { kind, span: sp() }
}
fn e_at(kind: ast::ExprKind, lo: usize) -> ast::Expr {
    ast::Expr { kind, span: at(lo) }
}
fn id(n: &str) -> ast::Expr {
    e(ast::ExprKind::Ident(n.into()))
}
fn int(t: &str) -> ast::Expr {
    e(ast::ExprKind::IntLit(t.into()))
}
fn flt(t: &str) -> ast::Expr {
    e(ast::ExprKind::FloatLit(t.into()))
}
fn bx(x: ast::Expr) -> Box<ast::Expr> {
    Box::new(x)
}
fn bin(op: BinaryOp, a: ast::Expr, b: ast::Expr) -> ast::Expr {
    e(ast::ExprKind::Binary(op, bx(a), bx(b)))
}
fn assign(l: ast::Expr, r: ast::Expr) -> ast::Expr {
    e(ast::ExprKind::Assign(None, bx(l), bx(r)))
}
fn call(f: &str, args: Vec<ast::Expr>) -> ast::Expr {
    e(ast::ExprKind::Call(bx(id(f)), args))
}
fn index(a: ast::Expr, i: ast::Expr) -> ast::Expr {
    e(ast::ExprKind::Index(bx(a), bx(i)))
}
fn post_inc(x: ast::Expr) -> ast::Expr {
    e(ast::ExprKind::PostInc(bx(x)))
}

fn specs(bs: &[B]) -> ast::DeclSpecs {
    ast::DeclSpecs {
        items: bs
            .iter()
            .map(|b| DeclSpec::Type(ast::TypeSpecifier::Basic(*b, sp())))
            .collect(),
        span: sp(),
    }
}
fn named_specs(n: &str) -> ast::DeclSpecs {
    ast::DeclSpecs {
        items: vec![DeclSpec::Type(ast::TypeSpecifier::Named(n.into(), sp()))],
        span: sp(),
    }
}
fn dname(n: &str) -> ast::Declarator {
    ast::Declarator {
        kind: DK::Ident(n.into()),
        span: sp(),
    }
}
fn dptr(inner: ast::Declarator) -> ast::Declarator {
    ast::Declarator {
        kind: DK::Pointer {
            qualifiers: vec![],
            inner: Box::new(inner),
        },
        span: sp(),
    }
}
fn darr(inner: ast::Declarator, len: Option<ast::Expr>) -> ast::Declarator {
    ast::Declarator {
        kind: DK::Array {
            inner: Box::new(inner),
            len: len.map(Box::new),
        },
        span: sp(),
    }
}
fn param(s: ast::DeclSpecs, d: ast::Declarator) -> ast::ParamDecl {
    ast::ParamDecl {
        specs: s,
        declarator: d,
        span: sp(),
    }
}
fn dfun(name: &str, params: Vec<ast::ParamDecl>, variadic: bool) -> ast::Declarator {
    ast::Declarator {
        kind: DK::Function {
            inner: Box::new(dname(name)),
            params,
            variadic,
        },
        span: sp(),
    }
}
fn decl(s: ast::DeclSpecs, d: ast::Declarator, init: Option<ast::Expr>) -> ast::Declaration {
    ast::Declaration {
        specs: s,
        declarators: vec![ast::InitDeclarator {
            declarator: d,
            init: init.map(ast::Initializer::Expr),
        }],
        span: sp(),
        comments: Comments::default(),
    }
}
fn st(kind: ast::StmtKind) -> ast::Stmt {
    ast::Stmt {
        kind,
        span: sp(),
        comments: Comments::default(),
    }
}
fn st_at(kind: ast::StmtKind, lo: usize) -> ast::Stmt {
    ast::Stmt {
        kind,
        span: at(lo),
        comments: Comments::default(),
    }
}
fn es(x: ast::Expr) -> ast::Stmt {
    st(ast::StmtKind::Expr(Some(x)))
}
fn ds(d: ast::Declaration) -> ast::Stmt {
    st(ast::StmtKind::Decl(d))
}
fn compound(items: Vec<ast::Stmt>) -> ast::Compound {
    ast::Compound {
        items,
        closing_comments: vec![],
        span: sp(),
    }
}
fn func(
    ret: ast::DeclSpecs,
    name: &str,
    params: Vec<ast::ParamDecl>,
    body: Vec<ast::Stmt>,
) -> ast::ExternalDecl {
    ast::ExternalDecl::Function(ast::FunctionDef {
        specs: ret,
        declarator: dfun(name, params, false),
        body: compound(body),
        span: sp(),
        comments: Comments::default(),
    })
}
fn double() -> ast::DeclSpecs {
    specs(&[B::Double])
}
fn int_t() -> ast::DeclSpecs {
    specs(&[B::Int])
}

/// System declarations, as a virtual `<math.h>`/`<stdlib.h>`/`<stdio.h>`
/// would give them.
fn system_decls() -> Vec<ast::ExternalDecl> {
    let sys = |mut d: ast::Declaration| {
        d.span = Span::new(SYS, 0, 1);
        if let DK::Function { inner, .. } = &mut d.declarators[0].declarator.kind {
            inner.span = Span::new(SYS, 0, 1);
        }
        d.declarators[0].declarator.span = Span::new(SYS, 0, 1);
        ast::ExternalDecl::Declaration(d)
    };
    let void_ptr = |name: &str, params| {
        decl(
            specs(&[B::Void]),
            ast::Declarator {
                kind: DK::Pointer {
                    qualifiers: vec![],
                    inner: Box::new(dfun(name, params, false)),
                },
                span: sp(),
            },
            None,
        )
    };
    let ulong = || specs(&[B::Unsigned, B::Long]);
    let mut const_char = specs(&[B::Char]);
    const_char
        .items
        .insert(0, DeclSpec::Qualifier(ast::Qualifier::Const, sp()));
    vec![
        sys(decl(
            double(),
            dfun("sin", vec![param(double(), dname("x"))], false),
            None,
        )),
        sys(decl(
            double(),
            dfun(
                "pow",
                vec![param(double(), dname("x")), param(double(), dname("y"))],
                false,
            ),
            None,
        )),
        sys(void_ptr("malloc", vec![param(ulong(), dname("n"))])),
        sys(void_ptr(
            "calloc",
            vec![param(ulong(), dname("n")), param(ulong(), dname("s"))],
        )),
        sys(void_ptr(
            "realloc",
            vec![
                param(specs(&[B::Void]), dptr(dname("p"))),
                param(ulong(), dname("n")),
            ],
        )),
        sys(decl(
            specs(&[B::Void]),
            dfun(
                "free",
                vec![param(specs(&[B::Void]), dptr(dname("p")))],
                false,
            ),
            None,
        )),
        sys(decl(
            int_t(),
            dfun("printf", vec![param(const_char, dptr(dname("f")))], true),
            None,
        )),
    ]
}

fn pp() -> Preprocessed {
    Preprocessed {
        main_file: MAIN,
        system_files: [SYS].into_iter().collect(),
        includes: vec![
            IncludeRecord {
                written: "#include <math.h>".into(),
                system: true,
                file: Some(SYS),
                trailing: None,
            },
            IncludeRecord {
                written: "#include \"h.h\"".into(),
                system: false,
                file: Some(FileId(2)),
                trailing: None,
            },
        ],
        ..Preprocessed::default()
    }
}

fn run(items: Vec<ast::ExternalDecl>) -> Result<Lowered, aioli::front::diag::Diagnostic> {
    let mut all = vec![ast::ExternalDecl::Include(0, sp(), Default::default())];
    all.extend(system_decls());
    all.extend(items);
    let tu = ast::TranslationUnit {
        items: all,
        final_comments: Vec::new(),
    };
    let mut sources = SourceMap::new();
    sources.add("main.c", " ".repeat(2000));
    lower(&tu, &pp(), &sources)
}

fn ok(items: Vec<ast::ExternalDecl>) -> Program {
    match run(items) {
        Ok(l) => l.program,
        Err(d) => panic!("unexpected error: {} at {:?}", d.message, d.span),
    }
}

fn fails(items: Vec<ast::ExternalDecl>) -> aioli::front::diag::Diagnostic {
    match run(items) {
        Ok(_) => panic!("expected an error"),
        Err(d) => d,
    }
}

fn body<'p>(p: &'p Program, name: &str) -> &'p [Stmt] {
    let id = p.proc_by_name(name).expect("procedure");
    &p.proc(id).body.as_ref().expect("body").stmts
}

/// `double f(double x) { BODY }`
fn f_of_x(stmts: Vec<ast::Stmt>) -> ast::ExternalDecl {
    func(double(), "f", vec![param(double(), dname("x"))], stmts)
}

fn ret(x: ast::Expr) -> ast::Stmt {
    st(ast::StmtKind::Return(Some(x)))
}

#[test]
fn items_and_system_procedures() {
    let p = ok(vec![f_of_x(vec![ret(id("x"))])]);
    assert!(matches!(&p.items[0].kind, ItemKind::SystemInclude(w) if w == "#include <math.h>"));
    assert!(matches!(p.items[1].kind, ItemKind::Function(_)));
    assert_eq!(p.items.len(), 2);
    let sin = p.proc_by_name("sin").unwrap();
    assert_eq!(p.proc(sin).origin, ProcOrigin::System);
    assert_eq!(p.main_file, MAIN);
    let f = p.proc(p.proc_by_name("f").unwrap());
    assert_eq!(f.origin, ProcOrigin::User);
    assert_eq!(p.sym(f.params[0]).kind, SymKind::Param);
    assert_eq!(
        p.scopes[f.body.as_ref().unwrap().scope.index()].parent,
        Some(f.scope)
    );
}

#[test]
fn intrinsic_and_temp_split() {
    // double f(double x) { double y; y = 2*g(x) + sin(x); return y; }
    let g = func(
        double(),
        "g",
        vec![param(double(), dname("x"))],
        vec![ret(id("x"))],
    );
    let rhs = bin(
        BinaryOp::Add,
        bin(BinaryOp::Mul, int("2"), call("g", vec![id("x")])),
        call("sin", vec![id("x")]),
    );
    let p = ok(vec![
        g,
        f_of_x(vec![
            ds(decl(double(), dname("y"), None)),
            es(assign(id("y"), rhs)),
            ret(id("y")),
        ]),
    ]);
    let b = body(&p, "f");
    assert_eq!(b.len(), 5, "{b:#?}");
    let StmtKind::Decl { vars, .. } = &b[1].kind else {
        panic!()
    };
    let tmp = vars[0].sym;
    assert_eq!(p.sym(tmp).kind, SymKind::Temp);
    assert_eq!(p.sym(tmp).name, "aioli_tmp");
    assert!(
        matches!(&b[2].kind, StmtKind::Call { result: Some(Expr { kind: ExprKind::Var(v), .. }), .. } if *v == tmp)
    );
    let StmtKind::Assign {
        rhs,
        sugar: AssignSugar::Plain,
        ..
    } = &b[3].kind
    else {
        panic!()
    };
    assert_eq!(rhs.ty, QualType::double());
    let ExprKind::Binary { rhs: s, .. } = &rhs.kind else {
        panic!()
    };
    assert!(matches!(&s.kind, ExprKind::Intrinsic { call, .. } if call.func == MathFn::Sin));
    // Statement ids are 0..n in order.
    let ids: Vec<u32> = b.iter().map(|s| s.id.0).collect();
    assert_eq!(ids, vec![0, 1, 2, 3, 4]);
    assert_eq!(p.proc(p.proc_by_name("f").unwrap()).stmt_count, 5);
}

#[test]
fn call_forms() {
    let g = func(
        double(),
        "g",
        vec![param(double(), dname("x"))],
        vec![ret(id("x"))],
    );
    let p = ok(vec![
        g,
        f_of_x(vec![
            ds(decl(double(), dname("r"), Some(call("g", vec![id("x")])))),
            es(assign(id("r"), call("g", vec![id("r")]))),
            es(call("g", vec![id("r")])),
            ret(id("r")),
        ]),
    ]);
    let b = body(&p, "f");
    assert!(matches!(&b[0].kind, StmtKind::Decl { vars, .. } if vars[0].init.is_none()));
    assert!(matches!(
        &b[1].kind,
        StmtKind::Call {
            result: Some(_),
            decl_init: true,
            ..
        }
    ));
    assert!(matches!(
        &b[2].kind,
        StmtKind::Call {
            result: Some(_),
            decl_init: false,
            ..
        }
    ));
    assert!(matches!(&b[3].kind, StmtKind::Call { result: None, .. }));
}

#[test]
fn increments_and_compound() {
    // int i; double a[10]; a[i++] = x; i += 2; ++i;
    let p = ok(vec![f_of_x(vec![
        ds(decl(int_t(), dname("i"), Some(int("0")))),
        ds(decl(double(), darr(dname("a"), Some(int("10"))), None)),
        es(assign(index(id("a"), post_inc(id("i"))), id("x"))),
        es(e(ast::ExprKind::Assign(
            Some(BinaryOp::Add),
            bx(id("i")),
            bx(int("2")),
        ))),
        es(e(ast::ExprKind::PreInc(bx(id("i"))))),
        ret(index(id("a"), int("0"))),
    ])]);
    let b = body(&p, "f");
    let StmtKind::Decl { vars, .. } = &b[1].kind else {
        panic!()
    };
    let a = p.sym(vars[0].sym);
    assert!(matches!(
        &a.ty.ty,
        Type::Array {
            len: Some(ArrayLen {
                value: Some(10),
                ..
            }),
            ..
        }
    ));
    assert!(matches!(
        &b[2].kind,
        StmtKind::Assign {
            lhs: Expr {
                kind: ExprKind::Index { .. },
                ..
            },
            sugar: AssignSugar::Plain,
            ..
        }
    ));
    assert!(matches!(
        &b[3].kind,
        StmtKind::Assign {
            sugar: AssignSugar::Increment,
            ..
        }
    ));
    let StmtKind::Assign {
        rhs,
        sugar: AssignSugar::Compound(BinOp::Add),
        ..
    } = &b[4].kind
    else {
        panic!("{:?}", b[4])
    };
    assert!(matches!(rhs.kind, ExprKind::Binary { op: BinOp::Add, .. }));
    assert!(matches!(
        &b[5].kind,
        StmtKind::Assign {
            sugar: AssignSugar::Increment,
            ..
        }
    ));
}

#[test]
fn chained_assignment_and_comma() {
    let p = ok(vec![f_of_x(vec![
        ds(decl(double(), dname("y"), None)),
        es(assign(id("y"), assign(id("x"), flt("0.0")))),
        es(e(ast::ExprKind::Comma(
            bx(assign(id("x"), flt("1.0"))),
            bx(assign(id("y"), flt("2.0"))),
        ))),
        ret(id("y")),
    ])]);
    let b = body(&p, "f");
    let names: Vec<String> = b
        .iter()
        .filter_map(|s| match &s.kind {
            StmtKind::Assign {
                lhs:
                    Expr {
                        kind: ExprKind::Var(v),
                        ..
                    },
                ..
            } => Some(p.sym(*v).name.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(names, vec!["x", "y", "x", "y"]);
}

#[test]
fn malloc_calloc_free() {
    // double *w = (double*)malloc(n*sizeof(double)); free(w);
    let mut cast_specs = double();
    cast_specs.span = sp();
    let tn = ast::TypeName {
        specs: double(),
        declarator: ast::Declarator {
            kind: DK::Pointer {
                qualifiers: vec![],
                inner: Box::new(ast::Declarator {
                    kind: DK::Abstract,
                    span: sp(),
                }),
            },
            span: sp(),
        },
        span: sp(),
    };
    let sizeof_double = e(ast::ExprKind::SizeofType(Box::new(ast::TypeName {
        specs: double(),
        declarator: ast::Declarator {
            kind: DK::Abstract,
            span: sp(),
        },
        span: sp(),
    })));
    let m = e(ast::ExprKind::Cast(
        Box::new(tn),
        bx(call(
            "malloc",
            vec![bin(BinaryOp::Mul, id("n"), sizeof_double.clone())],
        )),
    ));
    let p = ok(vec![func(
        specs(&[B::Void]),
        "f",
        vec![param(int_t(), dname("n"))],
        vec![
            ds(decl(double(), dptr(dname("w")), Some(m))),
            ds(decl(double(), dptr(dname("z")), None)),
            es(assign(
                id("z"),
                call("calloc", vec![id("n"), sizeof_double]),
            )),
            es(call("free", vec![id("w")])),
        ],
    )]);
    let b = body(&p, "f");
    let StmtKind::Alloc {
        elem,
        count,
        zeroed: false,
        form: AllocForm::Malloc { cast: Some(_), .. },
        decl_init: true,
        ..
    } = &b[1].kind
    else {
        panic!("{:#?}", b[1])
    };
    assert_eq!(*elem, QualType::double());
    assert!(matches!(count.kind, ExprKind::Var(_)));
    assert!(matches!(
        &b[3].kind,
        StmtKind::Alloc {
            zeroed: true,
            form: AllocForm::Calloc { .. },
            decl_init: false,
            ..
        }
    ));
    assert!(matches!(&b[4].kind, StmtKind::Free { .. }));
}

#[test]
fn malloc_inside_expression_is_rejected() {
    let d = fails(vec![func(
        specs(&[B::Void]),
        "f",
        vec![param(int_t(), dname("n"))],
        vec![es(call("g", vec![call("malloc", vec![id("n")])]))],
    )]);
    assert!(
        d.message.contains("undeclared function 'g'"),
        "{}",
        d.message
    );
    let d = fails(vec![func(
        specs(&[B::Void]),
        "f",
        vec![param(specs(&[B::Void]), dptr(dname("p")))],
        vec![es(assign(
            id("p"),
            call("realloc", vec![id("p"), int("8")]),
        ))],
    )]);
    assert_eq!(d.message, "realloc is not supported");
}

#[test]
fn undeclared_identifier_is_located() {
    let d = fails(vec![f_of_x(vec![ret(e_at(
        ast::ExprKind::Ident("zz".into()),
        42,
    ))])]);
    assert_eq!(d.message, "use of undeclared identifier 'zz'");
    assert_eq!(d.span, at(42));
}

/// `il/split`: a loop condition with a call becomes `for (;;)` whose body
/// starts with the call and `if (!(cond)) break;`.
#[test]
fn side_effect_in_loop_condition_becomes_an_explicit_test() {
    let g = func(int_t(), "g", vec![], vec![ret(int("0"))]);
    let cond = bin(
        BinaryOp::Lt,
        e_at(ast::ExprKind::Call(bx(id("g")), vec![]), 7),
        int("3"),
    );
    let p = ok(vec![
        g,
        f_of_x(vec![
            st(ast::StmtKind::While {
                cond,
                body: Box::new(st(ast::StmtKind::Expr(None))),
            }),
            ret(id("x")),
        ]),
    ]);
    let StmtKind::Loop { header, body: b } = &body(&p, "f")[0].kind else {
        panic!("expected a loop");
    };
    assert!(matches!(
        header,
        LoopHeader::For {
            cond: None,
            init,
            step
        } if init.is_empty() && step.is_empty()
    ));
    let kinds: Vec<&str> = b
        .stmts
        .iter()
        .map(|s| match &s.kind {
            StmtKind::Decl { .. } => "decl",
            StmtKind::Call { .. } => "call",
            StmtKind::If { .. } => "if",
            StmtKind::Empty => "empty",
            _ => "other",
        })
        .collect();
    assert_eq!(kinds, ["decl", "call", "if", "empty"]);
}

/// `il/split`: an effect in the right operand of `&&` happens only when the
/// left operand is true: it goes into an `if` that sets a temporary.
#[test]
fn side_effect_in_and_rhs_goes_into_a_branch() {
    let p = ok(vec![f_of_x(vec![
        ds(decl(int_t(), dname("i"), Some(int("0")))),
        st(ast::StmtKind::If {
            cond: bin(BinaryOp::And, id("i"), post_inc(id("i"))),
            then: Box::new(st(ast::StmtKind::Expr(None))),
            other: None,
        }),
        ret(id("x")),
    ])]);
    let stmts = body(&p, "f");
    // int i = 0; int t; if (i) { int old = i; i++; t = old != 0; } else { t = 0; } if (t) ;
    let StmtKind::If { then, other, .. } = &stmts[2].kind else {
        panic!("expected the branch of &&, got {:?}", stmts[2].kind);
    };
    assert_eq!(then.stmts.len(), 3);
    assert!(matches!(
        then.stmts[1].kind,
        StmtKind::Assign {
            sugar: AssignSugar::Increment,
            ..
        }
    ));
    assert_eq!(other.as_ref().unwrap().stmts.len(), 1);
    assert!(matches!(stmts[3].kind, StmtKind::If { .. }));
}

#[test]
fn call_in_if_condition_is_split_before() {
    let g = func(int_t(), "g", vec![], vec![ret(int("0"))]);
    let p = ok(vec![
        g,
        f_of_x(vec![
            st(ast::StmtKind::If {
                cond: bin(BinaryOp::Gt, call("g", vec![]), int("0")),
                then: Box::new(ret(id("x"))),
                other: None,
            }),
            ret(flt("1e-3f")),
        ]),
    ]);
    let b = body(&p, "f");
    assert!(matches!(b[0].kind, StmtKind::Decl { .. }));
    assert!(matches!(b[1].kind, StmtKind::Call { .. }));
    let StmtKind::If { then, .. } = &b[2].kind else {
        panic!()
    };
    assert_eq!(then.stmts.len(), 1);
    let StmtKind::Return(Some(r)) = &b[3].kind else {
        panic!()
    };
    assert_eq!(r.ty.ty, Type::Real(RealKind::Float));
}

#[test]
fn rejections_name_the_construct() {
    let goto = fails(vec![f_of_x(vec![st_at(
        ast::StmtKind::Goto("l".into()),
        9,
    )])]);
    assert_eq!(goto.message, "goto is not supported");
    assert_eq!(goto.span, at(9));
    let union = fails(vec![ast::ExternalDecl::Declaration(decl(
        ast::DeclSpecs {
            items: vec![DeclSpec::Type(ast::TypeSpecifier::Union(at(3)))],
            span: sp(),
        },
        dname("u"),
        None,
    ))]);
    assert_eq!(union.message, "unions are not supported");
    assert_eq!(union.span, at(3));
    // double (*fp)(double);
    let fp = ast::Declarator {
        kind: DK::Function {
            inner: Box::new(ast::Declarator {
                kind: DK::Paren(Box::new(dptr(dname("fp")))),
                span: sp(),
            }),
            params: vec![param(
                double(),
                ast::Declarator {
                    kind: DK::Abstract,
                    span: sp(),
                },
            )],
            variadic: false,
        },
        span: sp(),
    };
    let d = fails(vec![ast::ExternalDecl::Declaration(decl(
        double(),
        fp,
        None,
    ))]);
    assert!(
        d.message.contains("function pointers are not supported"),
        "{}",
        d.message
    );
    let vla = fails(vec![func(
        specs(&[B::Void]),
        "f",
        vec![param(int_t(), dname("n"))],
        vec![ds(decl(double(), darr(dname("a"), Some(id("n"))), None))],
    )]);
    assert_eq!(vla.message, "variable-length arrays are not supported");
    let variadic = fails(vec![ast::ExternalDecl::Declaration(decl(
        int_t(),
        dfun("v", vec![param(int_t(), dname("n"))], true),
        None,
    ))]);
    assert_eq!(
        variadic.message,
        "user-defined variadic functions are not supported"
    );
    let s = fails(vec![f_of_x(vec![
        es(call(
            "printf",
            vec![e(ast::ExprKind::StrLit(vec!["\"a\"".into()]))],
        )),
        ret(e(ast::ExprKind::StrLit(vec!["\"a\"".into()]))),
    ])]);
    assert!(
        s.message.starts_with("string literals are only supported"),
        "{}",
        s.message
    );
}

#[test]
fn argument_count_is_checked() {
    let d = fails(vec![f_of_x(vec![ret(call("pow", vec![id("x")]))])]);
    assert!(
        d.message.contains("wrong number of arguments"),
        "{}",
        d.message
    );
}

#[test]
fn return_checks() {
    let d = fails(vec![f_of_x(vec![st(ast::StmtKind::Return(None))])]);
    assert!(d.message.contains("should return a value"));
}

#[test]
fn switch_groups_cases() {
    let case = |v: &str, body: ast::Stmt| {
        st(ast::StmtKind::Case {
            value: int(v),
            body: Box::new(body),
        })
    };
    let sw_body = compound(vec![
        case("1", case("2", es(assign(id("x"), flt("1.0"))))),
        st(ast::StmtKind::Break),
        st(ast::StmtKind::Default {
            body: Box::new(es(assign(id("x"), flt("2.0")))),
        }),
    ]);
    let p = ok(vec![func(
        double(),
        "f",
        vec![param(double(), dname("x")), param(int_t(), dname("k"))],
        vec![
            st(ast::StmtKind::Switch {
                selector: id("k"),
                body: Box::new(st(ast::StmtKind::Compound(sw_body))),
            }),
            ret(id("x")),
        ],
    )]);
    let b = body(&p, "f");
    let StmtKind::Switch { cases, .. } = &b[0].kind else {
        panic!()
    };
    assert_eq!(cases.len(), 2);
    assert_eq!(cases[0].labels.len(), 2);
    assert_eq!(cases[0].body.len(), 2);
    assert_eq!(cases[1].labels, vec![None]);
}

#[test]
fn typedef_struct_and_fields() {
    // typedef struct { double x; double *v; } P;  double f(P *p) { return p->x + p->v[0]; }
    let st_spec = ast::StructSpec {
        tag: None,
        fields: Some(vec![
            ast::StructField {
                specs: double(),
                declarators: vec![ast::FieldDeclarator {
                    declarator: dname("x"),
                    bit_width: None,
                }],
                span: sp(),
                comments: Comments::default(),
            },
            ast::StructField {
                specs: double(),
                declarators: vec![ast::FieldDeclarator {
                    declarator: dptr(dname("v")),
                    bit_width: None,
                }],
                span: sp(),
                comments: Comments::default(),
            },
        ]),
        span: sp(),
    };
    let td = ast::Declaration {
        specs: ast::DeclSpecs {
            items: vec![
                DeclSpec::Storage(ast::StorageClass::Typedef, sp()),
                DeclSpec::Type(ast::TypeSpecifier::Struct(st_spec)),
            ],
            span: sp(),
        },
        declarators: vec![ast::InitDeclarator {
            declarator: dname("P"),
            init: None,
        }],
        span: sp(),
        comments: Comments::default(),
    };
    let arrow = |f: &str| e(ast::ExprKind::Arrow(bx(id("p")), f.into()));
    let p = ok(vec![
        ast::ExternalDecl::Declaration(td),
        func(
            double(),
            "f",
            vec![param(named_specs("P"), dptr(dname("p")))],
            vec![ret(bin(
                BinaryOp::Add,
                arrow("x"),
                index(arrow("v"), int("0")),
            ))],
        ),
    ]);
    let kinds: Vec<_> = p
        .items
        .iter()
        .map(|i| std::mem::discriminant(&i.kind))
        .collect();
    assert_eq!(
        kinds[1],
        std::mem::discriminant(&ItemKind::Typedef(TypedefId(0)))
    );
    assert!(
        !p.items
            .iter()
            .any(|i| matches!(i.kind, ItemKind::Struct(_)))
    );
    assert_eq!(p.typedefs[0].ty.ty, Type::Struct(StructId(0)));
    let b = body(&p, "f");
    let StmtKind::Return(Some(r)) = &b[0].kind else {
        panic!()
    };
    let ExprKind::Binary { lhs, .. } = &r.kind else {
        panic!()
    };
    let ExprKind::Field { base, field: 0, .. } = &lhs.kind else {
        panic!()
    };
    assert!(matches!(base.kind, ExprKind::Deref(_)));
}

#[test]
fn literal_types() {
    let p = ok(vec![f_of_x(vec![
        ds(decl(
            specs(&[B::Unsigned, B::Long]),
            dname("a"),
            Some(int("0x1FUL")),
        )),
        ds(decl(specs(&[B::Long]), dname("b"), Some(int("3000000000")))),
        ret(id("x")),
    ])]);
    let b = body(&p, "f");
    let StmtKind::Decl { vars, .. } = &b[0].kind else {
        panic!()
    };
    let Some(Init::Expr(x)) = &vars[0].init else {
        panic!()
    };
    assert!(matches!(&x.kind, ExprKind::IntConst { value: 31, text } if text == "0x1FUL"));
    assert_eq!(
        x.ty.ty,
        Type::Int {
            kind: IntKind::Long,
            unsigned: true
        }
    );
    let StmtKind::Decl { vars, .. } = &b[1].kind else {
        panic!()
    };
    let Some(Init::Expr(x)) = &vars[0].init else {
        panic!()
    };
    assert_eq!(
        x.ty.ty,
        Type::Int {
            kind: IntKind::Long,
            unsigned: false
        }
    );
}

#[test]
fn for_loop_header() {
    // for (int i = 0; i < 10; i++, x += 1.0) { }
    let for_stmt = st(ast::StmtKind::For {
        init: ast::ForInit::Decl(decl(int_t(), dname("i"), Some(int("0")))),
        cond: Some(bin(BinaryOp::Lt, id("i"), int("10"))),
        step: Some(e(ast::ExprKind::Comma(
            bx(post_inc(id("i"))),
            bx(e(ast::ExprKind::Assign(
                Some(BinaryOp::Add),
                bx(id("x")),
                bx(flt("1.0")),
            ))),
        ))),
        body: Box::new(st(ast::StmtKind::Compound(compound(vec![es(assign(
            id("x"),
            id("x"),
        ))])))),
    });
    let p = ok(vec![f_of_x(vec![for_stmt, ret(id("x"))])]);
    let b = body(&p, "f");
    let StmtKind::Loop {
        header:
            LoopHeader::For {
                init,
                cond: Some(_),
                step,
            },
        body: lb,
    } = &b[0].kind
    else {
        panic!()
    };
    assert_eq!(init.len(), 1);
    assert_eq!(step.len(), 2);
    let StmtKind::Decl { vars, .. } = &init[0].kind else {
        panic!()
    };
    assert_eq!(p.sym(vars[0].sym).scope, lb.scope);
    // visit_stmt order: loop, init, body, step.
    assert_eq!(b[0].id.0, 0);
    assert_eq!(init[0].id.0, 1);
    assert_eq!(lb.stmts[0].id.0, 2);
    assert_eq!(step[0].id.0, 3);
}

#[test]
fn null_and_pointer_arithmetic() {
    let p = ok(vec![func(
        double(),
        "f",
        vec![param(double(), dptr(dname("p")))],
        vec![
            st(ast::StmtKind::If {
                cond: bin(BinaryOp::Eq, id("p"), id("NULL")),
                then: Box::new(ret(flt("0.0"))),
                other: None,
            }),
            es(post_inc(id("p"))),
            ret(e(ast::ExprKind::Unary(
                ast::UnaryOp::Deref,
                bx(bin(BinaryOp::Add, id("p"), int("1"))),
            ))),
        ],
    )]);
    let b = body(&p, "f");
    let StmtKind::If { cond, .. } = &b[0].kind else {
        panic!()
    };
    let ExprKind::Binary { rhs, .. } = &cond.kind else {
        panic!()
    };
    assert!(matches!(&rhs.kind, ExprKind::IntConst { value: 0, text } if text == "NULL"));
    let StmtKind::Assign {
        rhs,
        sugar: AssignSugar::Increment,
        ..
    } = &b[1].kind
    else {
        panic!()
    };
    assert!(matches!(rhs.ty.ty, Type::Pointer(_)));
    let StmtKind::Return(Some(r)) = &b[2].kind else {
        panic!()
    };
    assert!(matches!(&r.kind, ExprKind::Deref(x) if matches!(x.kind, ExprKind::Binary { .. })));
    assert_eq!(r.ty, QualType::double());
}

#[test]
fn redeclaration_rules() {
    let proto = ast::ExternalDecl::Declaration(decl(
        double(),
        dfun("g", vec![param(double(), dname("a"))], false),
        None,
    ));
    let p = ok(vec![
        proto.clone(),
        func(
            double(),
            "g",
            vec![param(double(), dname("x"))],
            vec![ret(id("x"))],
        ),
    ]);
    assert!(matches!(p.items[1].kind, ItemKind::Prototype(_)));
    assert!(matches!(p.items[2].kind, ItemKind::Function(_)));
    let bad = fails(vec![
        proto,
        func(
            int_t(),
            "g",
            vec![param(double(), dname("x"))],
            vec![ret(int("0"))],
        ),
    ]);
    assert!(bad.message.contains("conflicting types"));
    let dup = fails(vec![f_of_x(vec![
        ds(decl(double(), dname("y"), None)),
        ds(decl(double(), dname("y"), None)),
    ])]);
    assert_eq!(dup.message, "redefinition of 'y'");
}

// ---------------------------------------------------------------------------
// End to end, through the preprocessor and the parser.
// ---------------------------------------------------------------------------

mod from_source {
    use aioli::front::{FrontOptions, load};
    use aioli::il::*;

    /// Lowers C source text; on error, `(message, "line:col")`.
    fn load_src(src: &str) -> Result<Program, (String, String)> {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("case.c");
        std::fs::write(&path, src).expect("write");
        match load(&path, &FrontOptions::default()) {
            Ok(l) => Ok(l.program),
            Err((sources, d)) => {
                let loc = sources.location(d.span);
                let line_col = loc.rsplitn(3, ':').take(2).collect::<Vec<_>>();
                Err((d.message, format!("{}:{}", line_col[1], line_col[0])))
            }
        }
    }

    fn ok(src: &str) -> Program {
        match load_src(src) {
            Ok(p) => p,
            Err((m, at)) => panic!("unexpected error at {at}: {m}"),
        }
    }

    fn fails(src: &str) -> (String, String) {
        match load_src(src) {
            Ok(_) => panic!("expected an error"),
            Err(e) => e,
        }
    }

    /// C's brace elision: an aggregate member whose item is not a braced
    /// list takes as many items as it has scalars; the IL holds the list
    /// fully braced. A struct-valued item still initializes a struct
    /// member whole.
    #[test]
    fn elided_braces_are_restored() {
        let p = ok("struct pt { double x, y; };\n\
                    double f(double a)\n{\n    double m[2][3] = {a, 2.0, 3.0, 4.0};\n    struct pt q = {a, 1.0};\n    struct pt r[3] = {q, 2.0, 3.0, {4.0}};\n    return m[1][0] + r[1].y;\n}\n");
        let shape = |init: &Init| -> String {
            fn go(i: &Init, out: &mut String) {
                match i {
                    Init::Expr(_) => out.push('e'),
                    Init::List(items, _) => {
                        out.push('{');
                        for it in items {
                            go(it, out);
                        }
                        out.push('}');
                    }
                }
            }
            let mut s = String::new();
            go(init, &mut s);
            s
        };
        let shapes: Vec<String> = body(&p, "f")
            .iter()
            .filter_map(|st| match &st.kind {
                StmtKind::Decl { vars, .. } => vars[0].init.as_ref().map(shape),
                _ => None,
            })
            .collect();
        assert_eq!(shapes, ["{{eee}{e}}", "{ee}", "{e{ee}{e}}"]);
    }

    fn body<'p>(p: &'p Program, name: &str) -> &'p [Stmt] {
        &p.proc(p.proc_by_name(name).unwrap())
            .body
            .as_ref()
            .unwrap()
            .stmts
    }

    pub const SAMPLE: &str = r#"#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#define N 10
typedef double real;
typedef struct Point { real x, y; } Point;
struct Cell { double w[N]; int n; };
static const double scale = 2.0;
double g;

/* The objective. */
double f(const double *x, double y[], int n, Point *p) {
    double s = 0.0, t = sqrt(x[0]); // trailing
    int i;
    double a[N] = {1.0, 2.0};
    for (i = 0; i < n; i++) {
        s += x[i] * y[i] + pow(t, 2);
        if (s > 1e3) break; else continue;
    }
    while (i > 0) { i--; }
    do { s = s * 0.5; } while (s > 100.0);
    switch (n) {
    case 0:
    case 1: s = 1.0; break;
    default: s = -s;
    }
    p->x = s; (*p).y = p->x;
    double *w = (double *)malloc(n * sizeof(double));
    w[0] = *(x + 1);
    free(w);
    g = s > 0 ? s : -s;
    printf("%f\n", s);
    return s * scale + a[0];
}

double h(double u) {
    double r = f(&u, &u, 1, NULL);
    return 2.0 * f(&u, &u, 1, NULL) + r;
}
"#;

    #[test]
    fn sample_program_lowers() {
        let p = ok(SAMPLE);
        let kinds: Vec<String> = p
            .items
            .iter()
            .map(|i| {
                format!("{:?}", i.kind)
                    .split(['(', ' ', '{'])
                    .next()
                    .unwrap()
                    .to_string()
            })
            .collect();
        assert_eq!(
            kinds,
            vec![
                "SystemInclude",
                "SystemInclude",
                "SystemInclude",
                "MacroLine",
                "Typedef",
                "Typedef",
                "Struct",
                "Globals",
                "Globals",
                "Function",
                "Function"
            ]
        );
        let f = p.proc(p.proc_by_name("f").unwrap());
        let x = p.sym(f.params[0]);
        assert!(matches!(&x.ty.ty, Type::Pointer(t) if t.is_const));
        // `double y[]` is a pointer (C adjusts it); the written type is kept
        // for printing.
        assert!(matches!(&p.sym(f.params[1]).ty.ty, Type::Pointer(_)));
        assert!(matches!(
            p.array_params.get(&f.params[1]).map(|t| &t.ty),
            Some(Type::Array { len: None, .. })
        ));
        assert_eq!(
            p.proc(p.proc_by_name("printf").unwrap()).origin,
            ProcOrigin::System
        );
        let b = body(&p, "f");
        // `double s = 0.0, t = sqrt(x[0]);` stays one declaration: sqrt is an intrinsic.
        let StmtKind::Decl { vars, .. } = &b[0].kind else {
            panic!("{:?}", b[0])
        };
        assert_eq!(vars.len(), 2);
        assert_eq!(b[0].comments.trailing.as_deref(), Some("// trailing"));
        assert!(b.iter().any(|s| matches!(
            s.kind,
            StmtKind::Alloc {
                decl_init: true,
                ..
            }
        )));
        assert!(b.iter().any(|s| matches!(s.kind, StmtKind::Free { .. })));
        assert!(
            b.iter()
                .any(|s| matches!(&s.kind, StmtKind::Call { result: None, .. }))
        );
        let hb = body(&p, "h");
        assert!(matches!(
            hb[1].kind,
            StmtKind::Call {
                decl_init: true,
                ..
            }
        ));
        let temps = p.symbols.iter().filter(|s| s.kind == SymKind::Temp).count();
        assert_eq!(temps, 1);
        // Every statement id is unique and below stmt_count.
        for (_, proc_) in p.defined_procs() {
            let mut seen = std::collections::HashSet::new();
            visit_stmts(&proc_.body.as_ref().unwrap().stmts, &mut |s| {
                assert!(s.id.0 < proc_.stmt_count);
                assert!(seen.insert(s.id));
            });
            assert_eq!(seen.len() as u32, proc_.stmt_count);
        }
    }

    /// `il/enum`: enumerators are `int` constants counted on from the last
    /// value given, spelled by name at file scope and by value in a
    /// function; a variable hides one; the enum is an item of its own.
    #[test]
    fn enums_are_int_constants() {
        let p = ok(
            "enum M { A, B = 4, C };\ntypedef enum { S = B * 2 } Size;\n\
                    int f(Size s)\n{\n    enum L { D = 9, E };\n    int r = C + s + E;\n    {\n        int A = 1;\n        r += A;\n    }\n    return r + A;\n}\n",
        );
        let consts: Vec<(String, i64, bool)> = p
            .items
            .iter()
            .filter_map(|i| match &i.kind {
                ItemKind::Enum { constants, .. } => Some(constants.clone()),
                _ => None,
            })
            .flatten()
            .map(|c| (c.name, c.value, c.written))
            .collect();
        let expected = [
            ("A", 0, false),
            ("B", 4, true),
            ("C", 5, false),
            ("S", 8, true),
        ];
        let expected: Vec<(String, i64, bool)> = expected
            .iter()
            .map(|(n, v, w)| (n.to_string(), *v, *w))
            .collect();
        assert_eq!(consts, expected);
        // No negative enumerator: `unsigned int`, as `cc` makes it.
        let size = p.typedefs.iter().find(|t| t.name == "Size").unwrap();
        assert_eq!(
            size.ty.ty,
            Type::Int {
                kind: IntKind::Int,
                unsigned: true
            }
        );
        let printed = aioli::back::print_c(&p, &Default::default());
        assert!(printed.contains("enum M { A, B = 4, C };"), "{printed}");
        assert!(printed.contains("int r = C + s + 10;"), "{printed}");
        assert!(printed.contains("r += A;"), "{printed}");
        assert!(printed.contains("return r + A;"), "{printed}");
    }

    /// `il/decl`: designators place their items in a positional list;
    /// nested ones sharing a member make one list for it.
    #[test]
    fn designators_sharing_a_member_make_one_list() {
        let p = ok(
            "typedef struct { double x, y; } P;\ntypedef struct { P p[2]; } S;\n\
                    double f(double a, double b)\n{\n    double m[2][2] = {[1][0] = a, [1][1] = b};\n    \
                    S s = {.p[1].y = a, .p[0].x = b};\n    double v[4] = {[2] = a, b};\n    \
                    return m[1][0] + s.p[1].y + v[3];\n}\n",
        );
        let printed = aioli::back::print_c(&p, &Default::default());
        assert!(
            printed.contains("double m[2][2] = {{0.0}, {a, b}};"),
            "{printed}"
        );
        assert!(
            printed.contains("S s = {{{b, 0.0}, {0.0, a}}};"),
            "{printed}"
        );
        assert!(
            printed.contains("double v[4] = {0.0, 0.0, a, b};"),
            "{printed}"
        );
    }

    #[test]
    fn calls_in_an_initializer_list_go_before_the_declaration() {
        let p = ok("typedef struct { double x, y; } V2;\n\
                    static double sq(double a) { return a * a; }\n\
                    static V2 mk(double a) { V2 r = {a, 2.0 * a}; return r; }\n\
                    double f(double a, double b)\n{\n    double w[2] = {sq(a), b};\n    \
                    V2 pts[2] = {mk(b), (V2){sq(b), a}};\n    \
                    return w[0] + pts[0].y + pts[1].x;\n}\n");
        let printed = aioli::back::print_c(&p, &Default::default());
        assert!(printed.contains("double w[2] = {sq(a), b};"), "{printed}");
        let literal = printed.find("V2 aioli_literal").expect(&printed);
        let call = printed.find("= mk(b);").expect(&printed);
        let pts = printed.find("V2 pts[2] = {").expect(&printed);
        assert!(call < literal && literal < pts, "{printed}");
    }

    #[test]
    fn opaque_file_and_struct_definition() {
        let p = ok("#include <stdio.h>\nvoid f(double x) { fprintf(stderr, \"%g\", x); }\n");
        let file = p.typedefs.iter().find(|t| t.name == "FILE").unwrap();
        assert_eq!(file.ty.ty, Type::Opaque("struct _IO_FILE".into()));
    }

    #[test]
    fn errors_are_located() {
        let cases: &[(&str, &str, &str)] = &[
            (
                "double f(double x) { return x + y; }\n",
                "use of undeclared identifier 'y'",
                "1:33",
            ),
            (
                "double f(double x) {\n  return g(x);\n}\n",
                "call to undeclared function 'g'",
                "2:10",
            ),
            (
                "void f(void) {\n  goto out;\n}\n",
                "goto is not supported",
                "2:3",
            ),
            ("union U { int a; };\n", "unions are not supported", "1:1"),
            (
                "enum E { A = 1.5 };\n",
                "an enumerator's value must be an integer constant",
                "1:14",
            ),
            ("enum E { A, A };\n", "redefinition of 'A'", "1:13"),
            (
                "struct S { int a : 3; };\n",
                "bit-fields are not supported",
                "1:20",
            ),
            (
                "void f(int n) {\n  double a[n];\n}\n",
                "variable-length arrays are not supported",
                "2:12",
            ),
            (
                "struct V { int n; double d[]; };\n",
                "flexible array members are not supported ('d' has no length); make it a pointer member and allocate it on its own",
                "1:26",
            ),
            ("volatile int v;\n", "volatile is not supported", "1:1"),
            (
                "double f(const double *a) {\n  int k = 0;\n  double z[2] = {a[k++], a[k]};\n  return z[0];\n}\n",
                "an increment (++) inside an initializer list is not supported (write it before the declaration)",
                "3:20",
            ),
            (
                "double f(double a) {\n  double s;\n  double z[2] = {s = a, s};\n  return z[0];\n}\n",
                "an assignment inside an initializer list is not supported (write it before the declaration)",
                "3:18",
            ),
            (
                "#include <stdlib.h>\nvoid f(double *p) { p = realloc(p, 8); }\n",
                "realloc is not supported",
                "2:25",
            ),
            (
                "double f(double x) { return; }\n",
                "non-void function 'f' should return a value",
                "1:22",
            ),
        ];
        for (src, msg, at) in cases {
            let (m, a) = fails(src);
            assert_eq!((m.as_str(), a.as_str()), (*msg, *at), "for {src}");
        }
    }

    #[test]
    fn local_header_items_are_marked() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("h.h"), "double twice(double x);\n").unwrap();
        let path = dir.path().join("m.c");
        std::fs::write(
            &path,
            "#include \"h.h\"\ndouble twice(double x) { return 2.0 * x; }\n",
        )
        .unwrap();
        let l = load(&path, &FrontOptions::default())
            .map_err(|e| e.1.message)
            .unwrap();
        let p = l.program;
        let ItemKind::LocalInclude { file, .. } = &p.items[0].kind else {
            panic!("{:?}", p.items)
        };
        assert!(matches!(p.items[1].kind, ItemKind::Prototype(_)));
        assert_eq!(p.items[1].file, *file);
        assert!(matches!(p.items[2].kind, ItemKind::Function(_)));
        assert_eq!(p.items[2].file, p.main_file);
    }

    /// `il/switch-decl`: a declaration right after a case label (C23's
    /// form; C99 wants a statement there) goes in front of the switch like
    /// one after a statement; the switch then sits in the block with it.
    #[test]
    fn a_declaration_right_after_a_case_label_is_hoisted() {
        let p = ok(
            "double g(int k, double x) {\n  double s = 0.0;\n  switch (k) {\n  case 0:\n    double t = x * x;\n    s = t;\n    break;\n  default:\n    double u = 3.0 * x;\n    s = u;\n  }\n  return s;\n}\n",
        );
        let body = &p
            .procs
            .iter()
            .find(|f| f.name == "g")
            .unwrap()
            .body
            .as_ref()
            .unwrap()
            .stmts;
        let StmtKind::Block(b) = &body[1].kind else {
            panic!("{:?}", body[1].kind)
        };
        let names: Vec<&str> = b.stmts[..2]
            .iter()
            .map(|st| match &st.kind {
                StmtKind::Decl { vars, .. } => p.symbols[vars[0].sym.index()].name.as_str(),
                k => panic!("{k:?}"),
            })
            .collect();
        assert_eq!(names, ["t", "u"]);
        assert!(matches!(b.stmts[2].kind, StmtKind::Switch { .. }));
    }

    /// `il/split`: a for-loop step that needs more than one statement (a
    /// call into a temporary) moves to the end of the body, in a block of
    /// its own; with a `continue` in the body, it moves to the top, skipped
    /// on the first pass, before the test.
    #[test]
    fn a_for_step_with_a_call_moves_into_the_body() {
        let p = ok(
            "double g(double v) { return v * v + 0.1; }\ndouble f(double x) {\n  double s = 0.0;\n  for (double t = 0.0; t < 3.0; t += g(x)) s += t;\n  return s;\n}\n",
        );
        let StmtKind::Loop { header, body: b } = &body(&p, "f")[1].kind else {
            panic!("{:?}", body(&p, "f")[1].kind)
        };
        let LoopHeader::For { cond, step, .. } = header else {
            panic!("{header:?}")
        };
        assert!(cond.is_some() && step.is_empty(), "{header:?}");
        let StmtKind::Block(last) = &b.stmts.last().unwrap().kind else {
            panic!("{:?}", b.stmts)
        };
        assert!(
            last.stmts
                .iter()
                .any(|s| matches!(s.kind, StmtKind::Call { .. })),
            "{:?}",
            last.stmts
        );

        let p = ok(
            "double g(double v) { return v * v + 0.1; }\ndouble f(double x) {\n  double s = 0.0;\n  int k;\n  for (k = 0; k < 5; k++, s += g(s)) {\n    if (k == 2) continue;\n    s += x;\n  }\n  return s;\n}\n",
        );
        let stmts = body(&p, "f");
        let StmtKind::Loop { header, body: b } = &stmts
            .iter()
            .find(|s| matches!(s.kind, StmtKind::Loop { .. }))
            .unwrap()
            .kind
        else {
            unreachable!()
        };
        let LoopHeader::For { cond, step, .. } = header else {
            panic!("{header:?}")
        };
        assert!(cond.is_none() && step.is_empty(), "{header:?}");
        let StmtKind::If { then, .. } = &b.stmts[0].kind else {
            panic!("{:?}", b.stmts[0].kind)
        };
        assert!(
            then.stmts
                .iter()
                .any(|s| matches!(s.kind, StmtKind::Call { .. })),
            "{:?}",
            then.stmts
        );
        // The flag is cleared, then the test exits the loop.
        assert!(matches!(b.stmts[1].kind, StmtKind::Assign { .. }));
        assert!(matches!(b.stmts[2].kind, StmtKind::If { .. }));
    }

    #[test]
    fn more_rejections_are_located() {
        let cases: &[(&str, &str, &str)] = &[
            (
                "void f(int n, double *x) {\n  switch (n) { case 0: if (n) { case 1: x[0] = 1; } }\n}\n",
                "a case label is only supported directly in the braced body of a switch",
                "2:33",
            ),
            (
                "double g(double);\nvoid f(void) { double (*h)(double) = &g; }\n",
                "function pointers are not supported",
                "2:24",
            ),
            // `il/switch-decl`: what hoisting a switch body's declaration
            // cannot keep.
            (
                "void f(int n, double *x) {\n  switch (n) { double t = 1.0; case 0: x[0] = t; }\n}\n",
                "an initialised declaration before the first case label of a switch is never initialised; declare it without an initialiser",
                "2:16",
            ),
            (
                "void f(int n, double *x) {\n  switch (n) { case 0: x[0] = 1; double v[2] = {1, 2}; x[1] = v[1]; }\n}\n",
                "a declaration with an initializer list directly inside a switch body is not supported; put it in a { } block",
                "2:34",
            ),
            (
                "void f(int n, double *x) {\n  switch (n) { case 0: x[0] = 1; static double c = 2; x[1] = c; }\n}\n",
                "a static declaration directly inside a switch body is not supported; put it in a { } block",
                "2:34",
            ),
            (
                "void f(double (*h)(double)) { }\n",
                "function pointers are not supported",
                "1:16",
            ),
            (
                "struct S { double a, b; };\nvoid f(void) { struct S s = { .c = 1 }; }\n",
                "the struct has no field 'c'",
                "2:31",
            ),
            (
                "void f(int i) { double v[2] = { [i] = 1.0 }; }\n",
                "an array designator must be an integer constant",
                "1:34",
            ),
            (
                "struct { double a; } s;\n",
                "anonymous structs are only supported directly in a typedef",
                "1:1",
            ),
            (
                "double g(double);\nvoid f(double x) { g(x, x); }\n",
                "wrong number of arguments in call to 'g': expected 1, got 2",
                "2:20",
            ),
            (
                "#include <stdlib.h>\nvoid f(double *p) { double y = 1 + *(double*)malloc(8); }\n",
                "malloc is only supported as `p = malloc(...)`",
                "2:46",
            ),
            (
                "void f(void) { int x; int x; }\n",
                "redefinition of 'x'",
                "1:27",
            ),
            (
                "void f(int x) { int x; }\n",
                "redefinition of parameter 'x'",
                "1:21",
            ),
            (
                "void f(void) { break; }\n",
                "break outside of a loop or switch",
                "1:16",
            ),
            (
                "int f(int i) { int a[3] = {1,2,3,4}; return a[0]; }\n",
                "too many initializers for the array",
                "1:27",
            ),
            (
                "int f(int i) { int a[2][2] = {1,2,3,4,5}; return a[0][0]; }\n",
                "too many initializers for the array",
                "1:30",
            ),
            (
                "double f(double x) { return f; }\n",
                "function pointers are not supported: function 'f' used as a value",
                "1:29",
            ),
        ];
        for (src, msg, at) in cases {
            let (m, a) = fails(src);
            assert_eq!((m.as_str(), a.as_str()), (*msg, *at), "for {src}");
        }
    }

    mod never_panics {
        use super::*;
        use proptest::prelude::*;

        /// Tokens that mutations splice in.
        const PIECES: &[&str] = &[
            "(",
            ")",
            "{",
            "}",
            ";",
            ",",
            "*",
            "&",
            "[",
            "]",
            "x",
            "n",
            "p",
            "f",
            "h",
            "0",
            "1.0",
            "++",
            "=",
            "+=",
            "?",
            ":",
            "->",
            ".",
            "goto",
            "case 1:",
            "break;",
            "return",
            "sizeof",
            "(double)",
            "malloc(8)",
            "NULL",
            "\"s\"",
            "struct Point",
            "int",
            "double",
            "static",
            "const",
        ];

        proptest! {
            #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]
            #[test]
            fn mutated_sources_do_not_panic(
                edits in proptest::collection::vec((0usize..2000, 0usize..4, 0usize..PIECES.len()), 1..4)
            ) {
                let mut src = SAMPLE.to_string();
                for (pos, len, piece) in edits {
                    let mut at = pos % src.len();
                    while !src.is_char_boundary(at) { at -= 1; }
                    let mut end = (at + len).min(src.len());
                    while !src.is_char_boundary(end) { end -= 1; }
                    src.replace_range(at..end.max(at), PIECES[piece]);
                }
                let _ = load_src(&src);
            }
        }
    }
}
