//! Tests of the back ends: IL programs built by hand, printed as C and as
//! S-expressions.

use aioli::back::{print_c, print_il};
use aioli::front::source::{FileId, SourceMap, Span};
use aioli::il::*;

/// Constructors that keep hand-built IL short.
mod build {
    use super::*;
    use std::cell::Cell;

    thread_local! {
        static NEXT_STMT: Cell<u32> = const { Cell::new(0) };
    }

    pub fn dbl() -> QualType {
        QualType::double()
    }
    pub fn int() -> QualType {
        QualType::int()
    }
    pub fn ptr(t: QualType) -> QualType {
        t.pointer_to()
    }
    pub fn konst(mut t: QualType) -> QualType {
        t.is_const = true;
        t
    }
    pub fn array(elem: QualType, n: u64) -> QualType {
        QualType::new(Type::Array {
            elem: Box::new(elem),
            len: Some(ArrayLen {
                expr: Box::new(int_c(n as i64)),
                value: Some(n),
            }),
        })
    }

    pub fn expr(kind: ExprKind, ty: QualType) -> Expr {
        Expr::new(kind, ty, Span::default())
    }
    pub fn int_c(v: i64) -> Expr {
        expr(
            ExprKind::IntConst {
                value: v,
                text: v.to_string(),
            },
            int(),
        )
    }
    pub fn real(text: &str) -> Expr {
        expr(
            ExprKind::RealConst {
                value: text.parse().unwrap_or(0.0),
                text: text.to_string(),
            },
            dbl(),
        )
    }
    pub fn real_v(value: f64) -> Expr {
        expr(
            ExprKind::RealConst {
                value,
                text: String::new(),
            },
            dbl(),
        )
    }
    pub fn bin(op: BinOp, l: Expr, r: Expr) -> Expr {
        let ty = l.ty.clone();
        expr(
            ExprKind::Binary {
                op,
                lhs: Box::new(l),
                rhs: Box::new(r),
            },
            ty,
        )
    }
    pub fn add(l: Expr, r: Expr) -> Expr {
        bin(BinOp::Add, l, r)
    }
    pub fn sub(l: Expr, r: Expr) -> Expr {
        bin(BinOp::Sub, l, r)
    }
    pub fn mul(l: Expr, r: Expr) -> Expr {
        bin(BinOp::Mul, l, r)
    }
    pub fn lt(l: Expr, r: Expr) -> Expr {
        let mut e = bin(BinOp::Lt, l, r);
        e.ty = int();
        e
    }
    pub fn neg(a: Expr) -> Expr {
        let ty = a.ty.clone();
        expr(
            ExprKind::Unary {
                op: UnOp::Neg,
                arg: Box::new(a),
            },
            ty,
        )
    }
    pub fn paren(mut e: Expr) -> Expr {
        e.parens = true;
        e
    }
    pub fn index(base: Expr, i: Expr) -> Expr {
        expr(
            ExprKind::Index {
                base: Box::new(base),
                index: Box::new(i),
            },
            dbl(),
        )
    }
    pub fn deref(p: Expr) -> Expr {
        expr(ExprKind::Deref(Box::new(p)), dbl())
    }
    pub fn addr(p: Expr) -> Expr {
        let ty = p.ty.clone().pointer_to();
        expr(ExprKind::AddrOf(Box::new(p)), ty)
    }
    pub fn field(base: Expr, strukt: StructId, f: usize) -> Expr {
        expr(
            ExprKind::Field {
                base: Box::new(base),
                strukt,
                field: f,
            },
            dbl(),
        )
    }
    pub fn cast(to: QualType, a: Expr) -> Expr {
        expr(
            ExprKind::Cast {
                to: to.clone(),
                arg: Box::new(a),
            },
            to,
        )
    }
    pub fn intrinsic(f: MathFn, args: Vec<Expr>) -> Expr {
        expr(
            ExprKind::Intrinsic {
                call: Intrinsic {
                    func: f,
                    precision: Some(RealKind::Double),
                    name: f.c_name().to_string(),
                },
                args,
            },
            dbl(),
        )
    }

    pub fn stmt(kind: StmtKind) -> Stmt {
        let id = NEXT_STMT.with(|n| {
            let id = n.get();
            n.set(id + 1);
            id
        });
        Stmt {
            id: StmtId(id),
            kind,
            span: Span::default(),
            comments: Comments::default(),
        }
    }
    pub fn assign(lhs: Expr, rhs: Expr) -> Stmt {
        stmt(StmtKind::Assign {
            lhs,
            rhs,
            sugar: AssignSugar::Plain,
        })
    }
    pub fn sugared(lhs: Expr, rhs: Expr, sugar: AssignSugar) -> Stmt {
        stmt(StmtKind::Assign { lhs, rhs, sugar })
    }
    pub fn ret(e: Expr) -> Stmt {
        stmt(StmtKind::Return(Some(e)))
    }
    pub fn with_comments(mut s: Stmt, leading: &[&str], trailing: Option<&str>) -> Stmt {
        s.comments = Comments {
            leading: leading.iter().map(|c| c.to_string()).collect(),
            trailing: trailing.map(str::to_string),
        };
        s
    }

    /// A program under construction: symbols, scopes and items.
    pub struct B {
        pub p: Program,
    }

    impl B {
        /// A new program; statement ids start again at 0.
        pub fn new() -> B {
            NEXT_STMT.with(|n| n.set(0));
            let mut p = Program::default();
            p.scopes.push(Scope::default());
            p.global_scope = ScopeId(0);
            p.main_file = FileId(0);
            B { p }
        }
        pub fn scope(&mut self, parent: ScopeId) -> ScopeId {
            self.p.scopes.push(Scope {
                parent: Some(parent),
                vars: Default::default(),
            });
            ScopeId(self.p.scopes.len() as u32 - 1)
        }
        pub fn sym(&mut self, name: &str, ty: QualType, kind: SymKind, scope: ScopeId) -> SymId {
            let id = SymId(self.p.symbols.len() as u32);
            self.p.symbols.push(Symbol {
                name: name.to_string(),
                ty,
                kind,
                storage: Storage::Auto,
                scope,
                span: Span::default(),
            });
            self.p.scopes[scope.index()]
                .vars
                .insert(name.to_string(), id);
            id
        }
        pub fn v(&self, s: SymId) -> Expr {
            expr(ExprKind::Var(s), self.p.sym(s).ty.clone())
        }
        pub fn decl(&self, vars: &[SymId]) -> Stmt {
            let base = leaf(&self.p.sym(vars[0]).ty);
            stmt(StmtKind::Decl {
                base,
                storage: Storage::Auto,
                vars: vars
                    .iter()
                    .map(|s| Declarator {
                        sym: *s,
                        init: None,
                    })
                    .collect(),
            })
        }
        pub fn decl_init(&self, s: SymId, init: Expr) -> Stmt {
            stmt(StmtKind::Decl {
                base: leaf(&self.p.sym(s).ty),
                storage: Storage::Auto,
                vars: vec![Declarator {
                    sym: s,
                    init: Some(Init::Expr(init)),
                }],
            })
        }
        pub fn block(&self, scope: ScopeId, stmts: Vec<Stmt>) -> Block {
            Block {
                stmts,
                scope,
                closing_comments: vec![],
                span: Span::default(),
            }
        }
        pub fn item(&mut self, kind: ItemKind) {
            self.p.items.push(Item {
                kind,
                span: Span::default(),
                comments: Comments::default(),
                file: FileId(0),
            });
        }
        /// Declares a procedure (parameters in a new scope) and returns its
        /// id, the parameter symbols and the parameter scope.
        pub fn proc(
            &mut self,
            name: &str,
            ret: QualType,
            params: &[(&str, QualType)],
        ) -> (ProcId, Vec<SymId>, ScopeId) {
            let scope = self.scope(self.p.global_scope);
            let params: Vec<SymId> = params
                .iter()
                .map(|(n, t)| self.sym(n, t.clone(), SymKind::Param, scope))
                .collect();
            let id = ProcId(self.p.procs.len() as u32);
            self.p.procs.push(Procedure {
                name: name.to_string(),
                ret,
                params: params.clone(),
                scope,
                storage: Storage::Auto,
                is_inline: false,
                body: None,
                origin: ProcOrigin::User,
                span: Span::default(),
                comments: Comments::default(),
                stmt_count: 0,
            });
            (id, params, scope)
        }
        pub fn define(&mut self, id: ProcId, body: Block) {
            self.p.procs[id.index()].body = Some(body);
            self.item(ItemKind::Function(id));
        }
        pub fn call(&self, result: Option<Expr>, callee: ProcId, args: Vec<Expr>) -> Stmt {
            stmt(StmtKind::Call {
                result,
                callee,
                args,
                decl_init: false,
            })
        }
    }

    pub fn leaf(t: &QualType) -> QualType {
        match &t.ty {
            Type::Pointer(i) => leaf(i),
            Type::Array { elem, .. } => leaf(elem),
            _ => t.clone(),
        }
    }
}

use build::*;

fn c_of(b: &B) -> String {
    print_c(&b.p, &SourceMap::new())
}

/// A function `void f(void)` whose body is given by `make`.
fn in_function(make: impl FnOnce(&mut B, ScopeId) -> Vec<Stmt>) -> String {
    let mut b = B::new();
    let (f, _, ps) = b.proc("f", QualType::void(), &[]);
    let scope = b.scope(ps);
    let stmts = make(&mut b, scope);
    let body = b.block(scope, stmts);
    b.define(f, body);
    c_of(&b)
}

/// The body lines of the single function printed by [`in_function`].
fn body_of(c: &str) -> String {
    let lines: Vec<&str> = c.lines().collect();
    let open = lines
        .iter()
        .position(|l| *l == "{")
        .expect("a function body");
    let close = lines
        .iter()
        .rposition(|l| *l == "}")
        .expect("a closing brace");
    lines[open + 1..close]
        .iter()
        .map(|l| l.strip_prefix("    ").unwrap_or(l))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn function_layout_and_parameters() {
    let mut b = B::new();
    let (f, params, ps) = b.proc("f", dbl(), &[("x", dbl()), ("y", ptr(dbl()))]);
    let scope = b.scope(ps);
    let body = b.block(scope, vec![ret(mul(b.v(params[0]), deref(b.v(params[1]))))]);
    b.define(f, body);
    assert_eq!(
        c_of(&b),
        "double f(double x, double *y)\n{\n    return x * *y;\n}\n"
    );
}

#[test]
fn declarator_forms_and_const_placement() {
    let body = in_function(|b, s| {
        let a = b.sym("a", array(dbl(), 10), SymKind::Local, s);
        let p = b.sym("p", ptr(dbl()), SymKind::Local, s);
        let x = b.sym("x", dbl(), SymKind::Local, s);
        let q = b.sym("q", ptr(array(dbl(), 3)), SymKind::Local, s);
        let c = b.sym("c", ptr(konst(dbl())), SymKind::Local, s);
        let k = b.sym("k", konst(ptr(dbl())), SymKind::Local, s);
        let m = b.sym("m", array(array(int(), 3), 2), SymKind::Local, s);
        let pa = b.sym("pa", array(ptr(dbl()), 4), SymKind::Local, s);
        vec![
            b.decl(&[a, p, x]),
            b.decl(&[q]),
            stmt(StmtKind::Decl {
                base: konst(dbl()),
                storage: Storage::Auto,
                vars: vec![Declarator { sym: c, init: None }],
            }),
            b.decl(&[k]),
            b.decl(&[m]),
            stmt(StmtKind::Decl {
                base: dbl(),
                storage: Storage::Static,
                vars: vec![Declarator {
                    sym: pa,
                    init: None,
                }],
            }),
        ]
    });
    assert_eq!(
        body_of(&body),
        "double a[10], *p, x;\n\
         double (*q)[3];\n\
         const double *c;\n\
         double *const k;\n\
         int m[2][3];\n\
         static double *pa[4];"
    );
}

#[test]
fn declarators_that_do_not_share_a_base_are_split() {
    let body = in_function(|b, s| {
        let x = b.sym("x", dbl(), SymKind::Local, s);
        let n = b.sym("n", int(), SymKind::Local, s);
        vec![stmt(StmtKind::Decl {
            base: dbl(),
            storage: Storage::Auto,
            vars: vec![
                Declarator { sym: x, init: None },
                Declarator { sym: n, init: None },
            ],
        })]
    });
    assert_eq!(body_of(&body), "double x;\nint n;");
}

#[test]
fn precedence_and_user_parentheses() {
    let body = in_function(|b, s| {
        let x = b.sym("x", dbl(), SymKind::Local, s);
        let y = b.sym("y", dbl(), SymKind::Local, s);
        let z = b.sym("z", dbl(), SymKind::Local, s);
        let (vx, vy, vz) = (b.v(x), b.v(y), b.v(z));
        vec![
            // (x + y) * z needs parentheses; x + y * z does not.
            assign(vz.clone(), mul(add(vx.clone(), vy.clone()), vz.clone())),
            assign(vz.clone(), add(vx.clone(), mul(vy.clone(), vz.clone()))),
            // x - (y - z) keeps them; (x - y) - z loses them...
            assign(vz.clone(), sub(vx.clone(), sub(vy.clone(), vz.clone()))),
            assign(vz.clone(), sub(sub(vx.clone(), vy.clone()), vz.clone())),
            // ...unless the user wrote them.
            assign(
                vz.clone(),
                sub(paren(sub(vx.clone(), vy.clone())), vz.clone()),
            ),
            assign(vz.clone(), paren(mul(vx.clone(), vy.clone()))),
        ]
    });
    assert_eq!(
        body_of(&body),
        "z = (x + y) * z;\n\
         z = x + y * z;\n\
         z = x - (y - z);\n\
         z = x - y - z;\n\
         z = (x - y) - z;\n\
         z = (x * y);"
    );
}

#[test]
fn unary_minus_never_prints_decrement() {
    let body = in_function(|b, s| {
        let x = b.sym("x", dbl(), SymKind::Local, s);
        let vx = b.v(x);
        vec![
            assign(vx.clone(), neg(neg(vx.clone()))),
            assign(vx.clone(), neg(real_v(-2.5))),
            assign(vx.clone(), neg(int_c(-1))),
            assign(vx.clone(), sub(vx.clone(), neg(vx.clone()))),
        ]
    });
    let text = body_of(&body);
    assert!(!text.contains("--"), "{text}");
    assert_eq!(text, "x = -(-x);\nx = -(-2.5);\nx = -(-1);\nx = x - -x;");
}

#[test]
fn postfix_field_index_cast_and_intrinsics() {
    let mut b = B::new();
    let sid = StructId(0);
    b.p.structs.push(StructDef {
        tag: Some("P".into()),
        fields: vec![
            Field {
                name: "x".into(),
                ty: dbl(),
                span: Span::default(),
                comments: Comments::default(),
            },
            Field {
                name: "v".into(),
                ty: array(dbl(), 3),
                span: Span::default(),
                comments: Comments::default(),
            },
        ],
        span: Span::default(),
        comments: Comments::default(),
    });
    b.item(ItemKind::Struct(sid));
    let sty = QualType::new(Type::Struct(sid));
    let (f, params, ps) = b.proc("f", dbl(), &[("p", ptr(sty.clone())), ("n", int())]);
    let scope = b.scope(ps);
    let (p, n) = (b.v(params[0]), b.v(params[1]));
    let body = b.block(
        scope,
        vec![ret(add(
            field(deref(p.clone()), sid, 0),
            mul(
                index(field(deref(p.clone()), sid, 1), n.clone()),
                intrinsic(MathFn::Sin, vec![cast(dbl(), n.clone())]),
            ),
        ))],
    );
    b.define(f, body);
    assert_eq!(
        c_of(&b),
        "struct P {\n    double x;\n    double v[3];\n};\n\n\
         double f(struct P *p, int n)\n{\n    return p->x + p->v[n] * sin((double)n);\n}\n"
    );
}

#[test]
fn assignment_sugar_only_when_it_matches() {
    let body = in_function(|b, s| {
        let x = b.sym("x", dbl(), SymKind::Local, s);
        let y = b.sym("y", dbl(), SymKind::Local, s);
        let i = b.sym("i", int(), SymKind::Local, s);
        let (vx, vy, vi) = (b.v(x), b.v(y), b.v(i));
        vec![
            sugared(
                vx.clone(),
                add(vx.clone(), vy.clone()),
                AssignSugar::Compound(BinOp::Add),
            ),
            sugared(
                vx.clone(),
                mul(vx.clone(), add(vy.clone(), real("1.0"))),
                AssignSugar::Compound(BinOp::Mul),
            ),
            sugared(
                vi.clone(),
                add(vi.clone(), int_c(1)),
                AssignSugar::Increment,
            ),
            sugared(
                vi.clone(),
                sub(vi.clone(), int_c(1)),
                AssignSugar::Decrement,
            ),
            // Shapes that do not match the sugar print as plain assignments.
            sugared(
                vx.clone(),
                add(vy.clone(), vx.clone()),
                AssignSugar::Compound(BinOp::Add),
            ),
            sugared(
                vi.clone(),
                add(vi.clone(), int_c(2)),
                AssignSugar::Increment,
            ),
            sugared(
                vx.clone(),
                sub(vx.clone(), vy.clone()),
                AssignSugar::Compound(BinOp::Add),
            ),
        ]
    });
    assert_eq!(
        body_of(&body),
        "x += y;\n\
         x *= y + 1.0;\n\
         i++;\n\
         i--;\n\
         x = y + x;\n\
         i = i + 2;\n\
         x = x - y;"
    );
}

#[test]
fn real_literals_without_text_round_trip() {
    let body = in_function(|b, s| {
        let x = b.sym("x", dbl(), SymKind::Local, s);
        let vx = b.v(x);
        vec![
            assign(vx.clone(), real_v(2.0)),
            assign(vx.clone(), real_v(0.1)),
            assign(vx.clone(), real_v(1e-7)),
            assign(vx.clone(), real_v(1e300)),
        ]
    });
    assert_eq!(body_of(&body), "x = 2.0;\nx = 0.1;\nx = 1e-7;\nx = 1e300;");
}

#[test]
fn decl_init_prints_call_as_initializer() {
    let mut b = B::new();
    let (g, _, _) = b.proc("g", dbl(), &[("a", dbl())]);
    let (f, params, ps) = b.proc("f", dbl(), &[("x", dbl())]);
    let scope = b.scope(ps);
    let r = b.sym("r", dbl(), SymKind::Local, scope);
    let w = b.sym("w", ptr(dbl()), SymKind::Local, scope);
    let mut call = b.call(Some(b.v(r)), g, vec![b.v(params[0])]);
    if let StmtKind::Call { decl_init, .. } = &mut call.kind {
        *decl_init = true;
    }
    let bytes = mul(
        int_c(4),
        expr(ExprKind::SizeOfType(dbl()), QualType::size_t()),
    );
    let alloc = stmt(StmtKind::Alloc {
        target: b.v(w),
        elem: dbl(),
        count: int_c(4),
        zeroed: false,
        form: AllocForm::Malloc {
            bytes,
            cast: Some(ptr(dbl())),
        },
        decl_init: true,
    });
    let body = b.block(
        scope,
        vec![
            b.decl(&[r]),
            call,
            b.decl(&[w]),
            alloc,
            stmt(StmtKind::Free { ptr: b.v(w) }),
            ret(b.v(r)),
        ],
    );
    b.define(f, body);
    assert_eq!(
        body_of(&c_of(&b)),
        "double r = g(x);\n\
         double *w = (double *)malloc(4 * sizeof(double));\n\
         free(w);\n\
         return r;"
    );
}

#[test]
fn temporaries_fold_back_into_their_use() {
    let mut b = B::new();
    let (g, _, _) = b.proc("g", dbl(), &[("a", dbl())]);
    let (f, params, ps) = b.proc("f", dbl(), &[("x", dbl())]);
    let scope = b.scope(ps);
    let y = b.sym("y", dbl(), SymKind::Local, scope);
    let t1 = b.sym("t1", dbl(), SymKind::Temp, scope);
    let t2 = b.sym("t2", dbl(), SymKind::Temp, scope);
    let t3 = b.sym("t3", dbl(), SymKind::Temp, scope);
    let x = b.v(params[0]);
    let stmts = vec![
        b.decl(&[y]),
        // y = 2 * g(g(x)) + 1;
        b.decl(&[t1, t2]),
        b.call(Some(b.v(t1)), g, vec![x.clone()]),
        b.call(Some(b.v(t2)), g, vec![b.v(t1)]),
        assign(b.v(y), add(mul(real("2"), b.v(t2)), real("1"))),
        // A temporary read twice stays a variable.
        b.decl(&[t3]),
        b.call(Some(b.v(t3)), g, vec![x.clone()]),
        assign(b.v(y), mul(b.v(t3), b.v(t3))),
        ret(b.v(y)),
    ];
    let body = b.block(scope, stmts);
    b.define(f, body);
    assert_eq!(
        body_of(&c_of(&b)),
        "double y;\n\
         y = 2 * g(g(x)) + 1;\n\
         double t3;\n\
         t3 = g(x);\n\
         y = t3 * t3;\n\
         return y;"
    );
}

#[test]
fn temporaries_do_not_fold_into_loop_conditions_or_far_uses() {
    let mut b = B::new();
    let (g, _, _) = b.proc("g", dbl(), &[("a", dbl())]);
    let (f, params, ps) = b.proc("f", dbl(), &[("x", dbl())]);
    let scope = b.scope(ps);
    let body_scope = b.scope(scope);
    let t = b.sym("t", dbl(), SymKind::Temp, scope);
    let u = b.sym("u", dbl(), SymKind::Temp, scope);
    let x = b.v(params[0]);
    let stmts = vec![
        b.decl(&[t, u]),
        b.call(Some(b.v(t)), g, vec![x.clone()]),
        stmt(StmtKind::Loop {
            header: LoopHeader::While {
                cond: lt(x.clone(), b.v(t)),
            },
            body: b.block(body_scope, vec![]),
        }),
        b.call(Some(b.v(u)), g, vec![x.clone()]),
        stmt(StmtKind::Empty),
        ret(b.v(u)),
    ];
    let body = b.block(scope, stmts);
    b.define(f, body);
    assert_eq!(
        body_of(&c_of(&b)),
        "double t, u;\n\
         t = g(x);\n\
         while (x < t) {\n\
         }\n\
         u = g(x);\n\
         ;\n\
         return u;"
    );
}

#[test]
fn comments_leading_trailing_and_closing() {
    let mut b = B::new();
    let (f, params, ps) = b.proc("f", dbl(), &[("x", dbl())]);
    let scope = b.scope(ps);
    let then_scope = b.scope(scope);
    let x = b.v(params[0]);
    let mut then = b.block(then_scope, vec![assign(x.clone(), neg(x.clone()))]);
    then.closing_comments = vec!["// nothing else".into()];
    let stmts = vec![
        with_comments(
            stmt(StmtKind::If {
                cond: lt(x.clone(), real("0.0")),
                then,
                other: None,
            }),
            &[
                "// make it positive",
                "/* a block\n         * comment\n         */",
            ],
            None,
        ),
        with_comments(ret(x.clone()), &[], Some("// done")),
    ];
    let body = b.block(scope, stmts);
    b.define(f, body);
    b.p.items[0].comments.leading = vec!["/* The function. */".into()];
    assert_eq!(
        c_of(&b),
        "/* The function. */\n\
         double f(double x)\n\
         {\n    \
             // make it positive\n    \
             /* a block\n     \
              * comment\n     \
              */\n    \
             if (x < 0.0) {\n        \
                 x = -x;\n        \
                 // nothing else\n    \
             }\n    \
             return x;  // done\n\
         }\n"
    );
}

#[test]
fn switch_layout() {
    let body = in_function(|b, s| {
        let k = b.sym("k", int(), SymKind::Local, s);
        let x = b.sym("x", dbl(), SymKind::Local, s);
        let case = |labels: Vec<Option<Expr>>, body: Vec<Stmt>| SwitchCase {
            labels,
            body,
            span: Span::default(),
            comments: Comments::default(),
        };
        vec![stmt(StmtKind::Switch {
            selector: b.v(k),
            cases: vec![
                case(
                    vec![Some(int_c(1)), Some(int_c(2))],
                    vec![assign(b.v(x), real("1.0"))],
                ),
                case(
                    vec![Some(int_c(3))],
                    vec![assign(b.v(x), real("2.0")), stmt(StmtKind::Break)],
                ),
                case(vec![None], vec![stmt(StmtKind::Break)]),
            ],
        })]
    });
    assert_eq!(
        body_of(&body),
        "switch (k) {\n\
         case 1:\n\
         case 2:\n    \
             x = 1.0;\n\
         case 3:\n    \
             x = 2.0;\n    \
             break;\n\
         default:\n    \
             break;\n\
         }"
        .lines()
        .map(|l| format!("    {l}").replacen("    switch", "switch", 1))
        .map(|l| if l == "    }" { "}".to_string() } else { l })
        .collect::<Vec<_>>()
        .join("\n")
    );
}

#[test]
fn for_loop_forms() {
    let body = in_function(|b, s| {
        let n = b.sym("n", int(), SymKind::Local, s);
        let j = b.sym("j", int(), SymKind::Local, s);
        let loop_scope = b.scope(s);
        let i = b.sym("i", int(), SymKind::Local, loop_scope);
        let body_scope = b.scope(loop_scope);
        let (vi, vj, vn) = (b.v(i), b.v(j), b.v(n));
        vec![
            b.decl(&[n, j]),
            stmt(StmtKind::Loop {
                header: LoopHeader::For {
                    init: vec![b.decl_init(i, int_c(0))],
                    cond: Some(lt(vi.clone(), vn.clone())),
                    step: vec![sugared(
                        vi.clone(),
                        add(vi.clone(), int_c(1)),
                        AssignSugar::Increment,
                    )],
                },
                body: b.block(body_scope, vec![stmt(StmtKind::Continue)]),
            }),
            stmt(StmtKind::Loop {
                header: LoopHeader::For {
                    init: vec![assign(vj.clone(), int_c(0)), assign(vn.clone(), int_c(5))],
                    cond: None,
                    step: vec![
                        sugared(
                            vj.clone(),
                            add(vj.clone(), int_c(1)),
                            AssignSugar::Increment,
                        ),
                        sugared(
                            vn.clone(),
                            sub(vn.clone(), int_c(2)),
                            AssignSugar::Compound(BinOp::Sub),
                        ),
                    ],
                },
                body: b.block(body_scope, vec![stmt(StmtKind::Break)]),
            }),
            stmt(StmtKind::Loop {
                header: LoopHeader::DoWhile {
                    cond: lt(vj.clone(), vn.clone()),
                },
                body: b.block(
                    body_scope,
                    vec![sugared(
                        vj.clone(),
                        add(vj.clone(), int_c(1)),
                        AssignSugar::Increment,
                    )],
                ),
            }),
        ]
    });
    assert_eq!(
        body_of(&body),
        "int n, j;\n\
         for (int i = 0; i < n; i++) {\n    \
             continue;\n\
         }\n\
         for (j = 0, n = 5;; j++, n -= 2) {\n    \
             break;\n\
         }\n\
         do {\n    \
             j++;\n\
         } while (j < n);"
    );
}

#[test]
fn long_lines_break_at_100_columns() {
    let body = in_function(|b, s| {
        let names = [
            "alpha_coefficient",
            "beta_coefficient",
            "gamma_coefficient",
            "delta_coefficient",
            "epsilon_coefficient",
            "zeta_coefficient",
        ];
        let syms: Vec<SymId> = names
            .iter()
            .map(|n| b.sym(n, dbl(), SymKind::Local, s))
            .collect();
        let mut e = b.v(syms[0]);
        for s in &syms[1..] {
            e = add(e, mul(b.v(*s), b.v(*s)));
        }
        vec![assign(b.v(syms[0]), e)]
    });
    for line in body.lines() {
        assert!(line.len() <= 100, "too long: {line}");
    }
    assert!(body_of(&body).lines().count() > 1, "{body}");
}

#[test]
fn items_from_headers_are_replaced_by_their_include() {
    let mut b = B::new();
    b.item(ItemKind::SystemInclude("#include <math.h>".into()));
    b.item(ItemKind::LocalInclude {
        written: "#include \"util.h\"".into(),
        file: FileId(1),
    });
    let (g, _, _) = b.proc("g", dbl(), &[("a", dbl())]);
    b.p.items.push(Item {
        kind: ItemKind::Prototype(g),
        span: Span::default(),
        comments: Comments::default(),
        file: FileId(1),
    });
    let gs = b.p.global_scope;
    let n = b.sym("n", int(), SymKind::Global, gs);
    let v = b.sym("v", array(dbl(), 3), SymKind::Global, gs);
    b.item(ItemKind::Globals {
        base: int(),
        storage: Storage::Static,
        vars: vec![Declarator {
            sym: n,
            init: Some(Init::Expr(int_c(3))),
        }],
    });
    b.item(ItemKind::Globals {
        base: dbl(),
        storage: Storage::Auto,
        vars: vec![Declarator {
            sym: v,
            init: Some(Init::List(
                vec![
                    Init::Expr(real("1.0")),
                    Init::Expr(real("2.0")),
                    Init::Expr(real("3.0")),
                ],
                Span::default(),
            )),
        }],
    });
    let (h, _, _) = b.proc("h", ptr(dbl()), &[("p", ptr(konst(dbl())))]);
    b.item(ItemKind::Prototype(h));
    assert_eq!(
        c_of(&b),
        "#include <math.h>\n\
         #include \"util.h\"\n\
         \n\
         static int n = 3;\n\
         double v[3] = {1.0, 2.0, 3.0};\n\
         double *h(const double *p);\n"
    );
}

#[test]
fn printed_sample_compiles_without_warnings() {
    let mut b = B::new();
    b.item(ItemKind::SystemInclude("#include <math.h>".into()));
    b.item(ItemKind::SystemInclude("#include <stdlib.h>".into()));
    let (g, gp, gps) = b.proc("g", dbl(), &[("a", dbl())]);
    let gscope = b.scope(gps);
    let gbody = b.block(gscope, vec![ret(mul(b.v(gp[0]), b.v(gp[0])))]);
    b.define(g, gbody);
    let (f, params, ps) = b.proc("f", dbl(), &[("x", ptr(dbl())), ("n", int())]);
    let scope = b.scope(ps);
    let loop_scope = b.scope(scope);
    let body_scope = b.scope(loop_scope);
    let s = b.sym("s", dbl(), SymKind::Local, scope);
    let t = b.sym("t", dbl(), SymKind::Temp, body_scope);
    let i = b.sym("i", int(), SymKind::Local, loop_scope);
    let w = b.sym("w", ptr(dbl()), SymKind::Local, scope);
    let (x, n, vi) = (b.v(params[0]), b.v(params[1]), b.v(i));
    let mut alloc = stmt(StmtKind::Alloc {
        target: b.v(w),
        elem: dbl(),
        count: n.clone(),
        zeroed: true,
        form: AllocForm::Calloc {
            count: n.clone(),
            size: expr(ExprKind::SizeOfType(dbl()), QualType::size_t()),
            cast: None,
        },
        decl_init: true,
    });
    alloc.comments.trailing = Some("/* zeroed */".into());
    let loop_body = b.block(
        body_scope,
        vec![
            b.decl(&[t]),
            b.call(Some(b.v(t)), g, vec![index(x.clone(), vi.clone())]),
            sugared(
                b.v(s),
                add(
                    b.v(s),
                    mul(
                        intrinsic(MathFn::Sin, vec![b.v(t)]),
                        index(b.v(w), vi.clone()),
                    ),
                ),
                AssignSugar::Compound(BinOp::Add),
            ),
        ],
    );
    let stmts = vec![
        b.decl_init(s, real("0.0")),
        b.decl(&[w]),
        alloc,
        stmt(StmtKind::Loop {
            header: LoopHeader::For {
                init: vec![b.decl_init(i, int_c(0))],
                cond: Some(lt(vi.clone(), n.clone())),
                step: vec![sugared(
                    vi.clone(),
                    add(vi.clone(), int_c(1)),
                    AssignSugar::Increment,
                )],
            },
            body: loop_body,
        }),
        stmt(StmtKind::Free { ptr: b.v(w) }),
        ret(b.v(s)),
    ];
    let body = b.block(scope, stmts);
    b.define(f, body);
    let c = c_of(&b);
    assert!(c.contains("s += sin(g(x[i])) * w[i];"), "{c}");
    assert!(
        c.contains("double *w = calloc(n, sizeof(double));  /* zeroed */"),
        "{c}"
    );
    assert_compiles(&c);
}

/// Compiles C with `cc -Wall -Wextra -c` and fails on any diagnostic.
fn assert_compiles(c: &str) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("sample.c");
    std::fs::write(&path, c).expect("writable temporary file");
    let out = std::process::Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
        .args(["-std=c99", "-Wall", "-Wextra", "-c", "-o"])
        .arg(dir.path().join("sample.o"))
        .arg(&path)
        .output()
        .expect("a C compiler");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stderr.trim().is_empty(),
        "cc failed or warned:\n{stderr}\n--- source ---\n{c}"
    );
}

#[test]
fn sexpr_shows_ids_types_sugar_and_comments() {
    let mut b = B::new();
    let (f, params, ps) = b.proc("f", QualType::void(), &[("x", ptr(dbl())), ("a", dbl())]);
    let scope = b.scope(ps);
    let i = b.sym("i", int(), SymKind::Local, scope);
    let (x, a, vi) = (b.v(params[0]), b.v(params[1]), b.v(i));
    let stmts = vec![
        b.decl_init(i, int_c(0)),
        with_comments(
            assign(index(x.clone(), vi.clone()), mul(a.clone(), real("2.0"))),
            &["// scale"],
            None,
        ),
        sugared(
            vi.clone(),
            add(vi.clone(), int_c(1)),
            AssignSugar::Increment,
        ),
    ];
    let first = stmts[0].id.0;
    let body = b.block(scope, stmts);
    b.define(f, body);
    let il = print_il(&b.p, &SourceMap::new());
    let expected = format!(
        "(function f (ret void) (params (var x (ptr double)) (var a double))\n  \
           (decl #{} (var i int (int 0)))\n  \
           (comment \"// scale\")\n  \
           (assign #{} (index (var x) (var i)) (mul (var a) (real 2.0)))\n  \
           (assign #{} :sugar ++ (var i) (add (var i) (int 1))))\n",
        first,
        first + 1,
        first + 2
    );
    assert_eq!(il, expected);
    assert_eq!(il, print_il(&b.p, &SourceMap::new()), "deterministic");
}

#[test]
fn sexpr_disambiguates_shadowed_names_only_when_needed() {
    let mut b = B::new();
    let (f, params, ps) = b.proc("f", dbl(), &[("x", dbl())]);
    let scope = b.scope(ps);
    let inner = b.scope(scope);
    let shadow = b.sym("x", int(), SymKind::Local, inner);
    let y = b.sym("y", dbl(), SymKind::Local, scope);
    let stmts = vec![
        b.decl_init(y, b.v(params[0])),
        stmt(StmtKind::Block(
            b.block(inner, vec![b.decl_init(shadow, int_c(1))]),
        )),
        ret(b.v(y)),
    ];
    let body = b.block(scope, stmts);
    b.define(f, body);
    let il = print_il(&b.p, &SourceMap::new());
    assert!(il.contains(&format!("(var x@{} double)", ps.0)), "{il}");
    assert!(
        il.contains(&format!("(var x@{} int (int 1))", inner.0)),
        "{il}"
    );
    assert!(il.contains("(var y double (var x@"), "{il}");
    assert!(il.contains("(return #") && il.contains(" (var y))"), "{il}");
}

#[test]
fn sexpr_control_structures_one_statement_per_line() {
    let mut b = B::new();
    let (f, params, ps) = b.proc("f", dbl(), &[("x", ptr(dbl())), ("n", int())]);
    let scope = b.scope(ps);
    let ls = b.scope(scope);
    let i = b.sym("i", int(), SymKind::Local, ls);
    let (x, n, vi) = (b.v(params[0]), b.v(params[1]), b.v(i));
    let then = b.block(ls, vec![stmt(StmtKind::Break)]);
    let other = b.block(
        ls,
        vec![sugared(
            index(x.clone(), vi.clone()),
            mul(index(x.clone(), vi.clone()), real("2.0")),
            AssignSugar::Compound(BinOp::Mul),
        )],
    );
    let stmts = vec![
        stmt(StmtKind::Loop {
            header: LoopHeader::For {
                init: vec![b.decl_init(i, int_c(0))],
                cond: Some(lt(vi.clone(), n.clone())),
                step: vec![sugared(
                    vi.clone(),
                    add(vi.clone(), int_c(1)),
                    AssignSugar::Increment,
                )],
            },
            body: b.block(
                ls,
                vec![stmt(StmtKind::If {
                    cond: lt(index(x.clone(), vi.clone()), real("0.0")),
                    then,
                    other: Some(other),
                })],
            ),
        }),
        ret(index(x.clone(), int_c(0))),
    ];
    let body = b.block(scope, stmts);
    b.define(f, body);
    assert_eq!(
        print_il(&b.p, &SourceMap::new()),
        r#"(function f (ret double) (params (var x (ptr double)) (var n int))
  (for #5
    (init
      (decl #2 (var i int (int 0))))
    (cond (lt (var i) (var n)))
    (step
      (assign #3 :sugar ++ (var i) (add (var i) (int 1))))
    (body
      (if #4 (lt (index (var x) (var i)) (real 0.0))
        (then
          (break #0))
        (else
          (assign #1 :sugar *= (index (var x) (var i)) (mul (index (var x) (var i)) (real 2.0)))))))
  (return #6 (index (var x) (int 0))))
"#
    );
    assert_eq!(
        c_of(&b),
        "double f(double *x, int n)\n{\n    for (int i = 0; i < n; i++) {\n        if (x[i] < 0.0) {\n            \
         break;\n        } else {\n            x[i] *= 2.0;\n        }\n    }\n    return x[0];\n}\n"
    );
}

#[test]
fn typedef_struct_body_printed_once_and_addressed_temps_stay() {
    let mut b = B::new();
    let sid = StructId(0);
    b.p.structs.push(StructDef {
        tag: None,
        fields: vec![Field {
            name: "x".into(),
            ty: dbl(),
            span: Span::default(),
            comments: Comments::default(),
        }],
        span: Span::default(),
        comments: Comments::default(),
    });
    b.p.typedefs.push(TypedefDef {
        name: "P".into(),
        ty: QualType::new(Type::Struct(sid)),
        span: Span::default(),
    });
    b.p.typedefs.push(TypedefDef {
        name: "PP".into(),
        ty: ptr(QualType::new(Type::Struct(sid))),
        span: Span::default(),
    });
    b.item(ItemKind::Typedef(TypedefId(0)));
    b.item(ItemKind::Typedef(TypedefId(1)));
    let named = QualType::new(Type::Named(TypedefId(0)));
    let (g, _, _) = b.proc("g", dbl(), &[("p", ptr(dbl()))]);
    let (f, _, ps) = b.proc("f", dbl(), &[]);
    let scope = b.scope(ps);
    let p = b.sym("p", named, SymKind::Local, scope);
    let t = b.sym("t", dbl(), SymKind::Temp, scope);
    let stmts = vec![
        b.decl(&[p]),
        b.decl(&[t]),
        // The temporary's address escapes: it must stay a variable.
        b.call(Some(b.v(t)), g, vec![addr(b.v(t))]),
        ret(add(field(b.v(p), sid, 0), b.v(t))),
    ];
    let body = b.block(scope, stmts);
    b.define(f, body);
    assert_eq!(
        c_of(&b),
        "typedef struct {\n    double x;\n} P;\ntypedef P *PP;\n\n\
         double f(void)\n{\n    P p;\n    double t;\n    t = g(&t);\n    return p.x + t;\n}\n"
    );
}
