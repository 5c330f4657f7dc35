//! Statements, blocks and local declarations.

use super::expr::{Callee, Effects, stmt, strip_parens};
use super::types::{DeclCtx, Derived};
use super::{Lowerer, R, err};
use crate::front::ast;
use crate::front::source::Span;
use crate::il::{
    ArrayLen, AssignSugar, Block, Comments, Declarator, Expr, ExprKind, Init, LoopHeader, QualType,
    ScopeId, Stmt, StmtKind, Storage, SwitchCase, SymKind, Symbol, Type,
};

impl Lowerer<'_> {
    /// Lowers a compound statement into a block with its own scope (a new
    /// one unless `scope` is given).
    pub(super) fn block(&mut self, c: &ast::Compound, scope: Option<ScopeId>) -> R<Block> {
        let scope = match scope {
            Some(s) => s,
            None => self.new_scope(self.scope),
        };
        let saved_scope = std::mem::replace(&mut self.scope, scope);
        let saved_temp = self.set_temp_scope(scope);
        let mut stmts = Vec::new();
        let mut result = Ok(());
        for item in &c.items {
            result = self.stmt(item, &mut stmts);
            if result.is_err() {
                break;
            }
        }
        self.scope = saved_scope;
        self.set_temp_scope(saved_temp);
        result?;
        Ok(Block {
            stmts,
            scope,
            closing_comments: c.closing_comments.clone(),
            span: c.span,
        })
    }

    fn set_temp_scope(&mut self, scope: ScopeId) -> ScopeId {
        match &mut self.f {
            Some(f) => std::mem::replace(&mut f.temp_scope, scope),
            None => scope,
        }
    }

    /// A branch or loop body: a block even when written without braces.
    /// A braced body's own comments are not a block of their own: those
    /// before its `{` head its first statement, and the one after its `}`
    /// (`} /* end for */`) is left in `body_trailing` for the statement
    /// that owns the body.
    fn sub_block(&mut self, s: &ast::Stmt, scope: Option<ScopeId>) -> R<Block> {
        self.body_trailing = None;
        if let ast::StmtKind::Compound(c) = &s.kind {
            let mut b = self.block(c, scope)?;
            let mut after: Vec<String> = Vec::new();
            if !s.comments.leading.is_empty() {
                let mut leading = s.comments.leading.clone();
                match b.stmts.first_mut() {
                    Some(first) => {
                        leading.append(&mut first.comments.leading);
                        first.comments.leading = leading;
                    }
                    // An empty body's: after the statement with the rest
                    // (a block's closing comments do not survive every
                    // translation).
                    None => after = leading,
                }
            }
            after.extend(s.comments.trailing.clone());
            self.body_trailing = (!after.is_empty()).then(|| after.join(" "));
            return Ok(b);
        }
        let wrapper = ast::Compound {
            items: vec![s.clone()],
            closing_comments: Vec::new(),
            span: s.span,
        };
        if matches!(s.kind, ast::StmtKind::Decl(_)) {
            return err(s.span, "a declaration is not allowed here; use a { } block");
        }
        let b = self.block(&wrapper, scope);
        self.body_trailing = None;
        b
    }

    fn loop_body(&mut self, s: &ast::Stmt, scope: Option<ScopeId>) -> R<Block> {
        if let Some(f) = &mut self.f {
            f.loop_depth += 1;
            f.breakable_depth += 1;
        }
        let r = self.sub_block(s, scope);
        if let Some(f) = &mut self.f {
            f.loop_depth -= 1;
            f.breakable_depth -= 1;
        }
        r
    }

    /// Lowers one statement into `out` (possibly several IL statements).
    pub(super) fn stmt(&mut self, s: &ast::Stmt, out: &mut Vec<Stmt>) -> R<()> {
        let mut local = Vec::new();
        self.stmt_kind(s, &mut local)?;
        // Comments written inside a `for` header travel with its
        // declaration; they are printed before the loop.
        if let ast::StmtKind::For {
            init: ast::ForInit::Decl(d),
            ..
        } = &s.kind
            && !d.comments.is_empty()
        {
            let mut comments = s.comments.clone();
            comments.leading.extend(d.comments.leading.iter().cloned());
            comments.leading.extend(d.comments.trailing.iter().cloned());
            self.attach_comments(&mut local, &comments);
        } else {
            self.attach_comments(&mut local, &s.comments);
        }
        out.append(&mut local);
        Ok(())
    }

    fn is_temp_stmt(&self, s: &Stmt) -> bool {
        let is_temp = |id: crate::il::SymId| {
            self.prog
                .symbols
                .get(id.index())
                .is_some_and(|s| s.kind == SymKind::Temp)
        };
        match &s.kind {
            StmtKind::Decl { vars, .. } => vars.iter().all(|d| is_temp(d.sym)),
            StmtKind::Call {
                result:
                    Some(Expr {
                        kind: ExprKind::Var(v),
                        ..
                    }),
                ..
            } => is_temp(*v),
            _ => false,
        }
    }

    fn attach_comments(&self, stmts: &mut [Stmt], comments: &Comments) {
        if comments.is_empty() {
            return;
        }
        let main: Vec<usize> = (0..stmts.len())
            .filter(|&i| !self.is_temp_stmt(&stmts[i]))
            .collect();
        let (first, last) = match (main.first(), main.last()) {
            (Some(f), Some(l)) => (*f, *l),
            _ if !stmts.is_empty() => (0, stmts.len() - 1),
            _ => return,
        };
        let mut leading = comments.leading.clone();
        leading.append(&mut stmts[first].comments.leading);
        stmts[first].comments.leading = leading;
        // After a comment the statement already carries (`} /* c */ while
        // (…); // d`), unless it is that one.
        if let Some(t) = &comments.trailing
            && stmts[last].comments.trailing.as_ref() != Some(t)
        {
            append_trailing(&mut stmts[last], t);
        }
    }

    fn stmt_kind(&mut self, s: &ast::Stmt, out: &mut Vec<Stmt>) -> R<()> {
        let span = s.span;
        match &s.kind {
            ast::StmtKind::Compound(c) => {
                let b = self.block(c, None)?;
                out.push(stmt(StmtKind::Block(b), span));
            }
            ast::StmtKind::Expr(None) => out.push(stmt(StmtKind::Empty, span)),
            ast::StmtKind::Expr(Some(e)) => self.expr_stmt(e, out)?,
            ast::StmtKind::Decl(d) => self.local_decl(d, out)?,
            ast::StmtKind::If { cond, then, other } => {
                let cond = self.condition(cond, "an if condition", out)?;
                let then = self.sub_block(then, None)?;
                let mut trailing: Vec<String> = self.body_trailing.take().into_iter().collect();
                let other = match other {
                    Some(o) => {
                        let mut b = self.sub_block(o, None)?;
                        trailing.extend(self.body_trailing.take());
                        // `else if (…) { … } // c`: the comment ends the
                        // whole chain, which so still prints as `else if`.
                        if matches!(o.kind, ast::StmtKind::If { .. })
                            && let [only] = b.stmts.as_mut_slice()
                            && only.comments.leading.is_empty()
                        {
                            trailing.extend(only.comments.trailing.take());
                        }
                        Some(b)
                    }
                    None => None,
                };
                // `} /* end if */ else { … } // end else`: after the whole
                // statement, in their order (both modes keep a statement's
                // trailing comment; a branch's closing comments would be
                // lost in the adjoint's sweeps).
                let mut st = stmt(StmtKind::If { cond, then, other }, span);
                if !trailing.is_empty() {
                    st.comments.trailing = Some(trailing.join(" "));
                }
                out.push(st);
            }
            ast::StmtKind::While { cond, body } => {
                let (pre, cond) = self.loop_condition(cond)?;
                let mut body = self.loop_body(body, None)?;
                let trailing = self.body_trailing.take();
                let header = if pre.is_empty() {
                    LoopHeader::While { cond }
                } else {
                    self.loop_with_effects(pre, cond, &mut body, false, span)?;
                    forever()
                };
                let mut st = stmt(StmtKind::Loop { header, body }, span);
                st.comments.trailing = trailing;
                out.push(st);
            }
            ast::StmtKind::DoWhile { body, cond } => {
                let mut body = self.loop_body(body, None)?;
                // `} /* c */ while (…);`: after the statement.
                let trailing = self.body_trailing.take();
                let (pre, cond) = self.loop_condition(cond)?;
                let header = if pre.is_empty() {
                    LoopHeader::DoWhile { cond }
                } else if continues_this_loop(&body.stmts) {
                    self.do_while_with_continue(pre, cond, &mut body, span, out)?;
                    forever()
                } else {
                    self.loop_with_effects(pre, cond, &mut body, true, span)?;
                    forever()
                };
                let mut st = stmt(StmtKind::Loop { header, body }, span);
                st.comments.trailing = trailing;
                out.push(st);
            }
            ast::StmtKind::For {
                init,
                cond,
                step,
                body,
            } => {
                let body_scope = self.new_scope(self.scope);
                let saved = std::mem::replace(&mut self.scope, body_scope);
                let r = self.for_loop(
                    init,
                    cond.as_ref(),
                    step.as_ref(),
                    body,
                    body_scope,
                    span,
                    out,
                );
                self.scope = saved;
                r?;
                // `} /* end for */`: after the loop (the last statement
                // the loop became).
                if let Some(t) = self.body_trailing.take()
                    && let Some(last) = out.last_mut()
                {
                    append_trailing(last, &t);
                }
            }
            ast::StmtKind::Switch { selector, body } => {
                self.switch(selector, body, span, out)?;
                // `} /* end switch */`.
                if let Some(t) = &body.comments.trailing
                    && let Some(last) = out.last_mut()
                {
                    append_trailing(last, t);
                }
            }
            ast::StmtKind::Case { .. } | ast::StmtKind::Default { .. } => {
                return err(
                    span,
                    "a case label is only supported directly in the braced body of a switch",
                );
            }
            ast::StmtKind::Break => {
                if self.f.as_ref().is_none_or(|f| f.breakable_depth == 0) {
                    return err(span, "break outside of a loop or switch");
                }
                out.push(stmt(StmtKind::Break, span));
            }
            ast::StmtKind::Continue => {
                if self.f.as_ref().is_none_or(|f| f.loop_depth == 0) {
                    return err(span, "continue outside of a loop");
                }
                out.push(stmt(StmtKind::Continue, span));
            }
            ast::StmtKind::Return(value) => self.return_stmt(value.as_ref(), span, out)?,
            ast::StmtKind::Goto(_) => return err(span, "goto is not supported"),
            ast::StmtKind::Labeled { .. } => {
                return err(span, "labels (and goto) are not supported");
            }
        }
        Ok(())
    }

    /// A condition evaluated once before a statement: calls are split out
    /// before it, postfix `++`/`--` are rejected.
    fn condition(&mut self, e: &ast::Expr, ctx: &str, out: &mut Vec<Stmt>) -> R<Expr> {
        let mut fx = Effects::default();
        let cond = self.expr_effects_first(e, &mut fx)?;
        if let Some(p) = fx.post.first() {
            return err(
                p.span,
                format!(
                    "a postfix ++/-- inside {ctx} is not supported; write it as a separate statement"
                ),
            );
        }
        if !self.is_scalar(&cond.ty.ty) {
            return err(e.span, "the condition is not a number or a pointer");
        }
        out.append(&mut fx.pre);
        Ok(cond)
    }

    /// Lowers an expression whose value is used before the statement ends
    /// (a condition, a returned value): postfix `++`/`--` take effect in
    /// `fx.pre`, the old value kept in a temporary.
    fn expr_effects_first(&mut self, e: &ast::Expr, fx: &mut Effects) -> R<Expr> {
        let saved = std::mem::replace(&mut self.post_as_pre, true);
        let r = self.expr(e, fx);
        self.post_as_pre = saved;
        r
    }

    /// A loop condition, evaluated before each test: the statements its
    /// side effects need (calls, `i--`, ...) come back with it, empty for a
    /// side-effect-free condition.
    fn loop_condition(&mut self, e: &ast::Expr) -> R<(Vec<Stmt>, Expr)> {
        let mut fx = Effects::default();
        let cond = self.expr_effects_first(e, &mut fx)?;
        if !self.is_scalar(&cond.ty.ty) {
            return err(e.span, "the condition is not a number or a pointer");
        }
        Ok((fx.pre, cond))
    }

    /// `il/split` for loop conditions with side effects: the loop becomes
    /// `for (;;)` whose body starts (or, for do-while, ends) with the
    /// condition's statements and `if (!(cond)) break;`. (A do-while body
    /// with a `continue`, which would skip that test, goes through
    /// `do_while_with_continue` instead.)
    fn loop_with_effects(
        &mut self,
        pre: Vec<Stmt>,
        cond: Expr,
        body: &mut Block,
        at_end: bool,
        span: Span,
    ) -> R<()> {
        let cspan = cond.span;
        let mut inner = cond;
        inner.parens = true;
        let negated = Expr::new(
            ExprKind::Unary {
                op: crate::il::UnOp::Not,
                arg: Box::new(inner),
            },
            QualType::int(),
            cspan,
        );
        let exit_block = Block {
            stmts: vec![stmt(StmtKind::Break, span)],
            scope: body.scope,
            closing_comments: Vec::new(),
            span,
        };
        let mut test = pre;
        test.push(stmt(
            StmtKind::If {
                cond: negated,
                then: exit_block,
                other: None,
            },
            cspan,
        ));
        if at_end {
            body.stmts.append(&mut test);
        } else {
            test.append(&mut body.stmts);
            body.stmts = test;
        }
        Ok(())
    }

    /// `il/split` for a do-while loop whose condition has side effects and
    /// whose body uses `continue`: a `continue` must reach the test, so the
    /// test moves to the top of a `for (;;)` body, skipped on the first
    /// iteration by a flag declared before the loop (`int aioli_tmp = 1;`
    /// … `if (!aioli_tmp) { PRE; if (!(COND)) break; } aioli_tmp = 0;
    /// BODY`).
    fn do_while_with_continue(
        &mut self,
        pre: Vec<Stmt>,
        cond: Expr,
        body: &mut Block,
        span: Span,
        out: &mut Vec<Stmt>,
    ) -> R<()> {
        let mut test = Block {
            stmts: Vec::new(),
            scope: self.new_scope(body.scope),
            closing_comments: Vec::new(),
            span,
        };
        self.loop_with_effects(pre, cond, &mut test, false, span)?;
        self.skip_on_first_pass(test, body, span, out)
    }

    /// Statements in a block of their own, their declarations scoped to
    /// it: where the block is not, they are out of scope (no reset of
    /// `aioli_tmpd` after a switch or before a loop, where it is not
    /// declared).
    fn own_block(&mut self, stmts: Vec<Stmt>, span: Span) -> Block {
        let scope = self.new_scope(self.scope);
        for d in stmts.iter().flat_map(|s| match &s.kind {
            StmtKind::Decl { vars, .. } => vars.as_slice(),
            _ => &[],
        }) {
            let sym = &mut self.prog.symbols[d.sym.index()];
            let (old, name) = (sym.scope, sym.name.clone());
            sym.scope = scope;
            let vars = &mut self.prog.scopes[old.index()].vars;
            if vars.get(&name) == Some(&d.sym) {
                vars.remove(&name);
            }
            self.prog.scopes[scope.index()].vars.insert(name, d.sym);
        }
        Block {
            stmts,
            scope,
            closing_comments: Vec::new(),
            span,
        }
    }

    /// Puts `if (!aioli_tmp) { SKIPPED } aioli_tmp = 0;` at the top of a
    /// loop body, with `int aioli_tmp = 1;` before the loop: SKIPPED runs
    /// at the start of every iteration but the first, which is where C
    /// runs a do-while's test or a for-loop's step, and a `continue` in
    /// the body still reaches it.
    fn skip_on_first_pass(
        &mut self,
        skipped: Block,
        body: &mut Block,
        span: Span,
        out: &mut Vec<Stmt>,
    ) -> R<()> {
        let int = |value: i64| {
            Expr::new(
                ExprKind::IntConst {
                    value,
                    text: value.to_string(),
                },
                QualType::int(),
                span,
            )
        };
        let flag = self.new_temp(QualType::int(), span)?;
        let flag_var = Expr::new(ExprKind::Var(flag), QualType::int(), span);
        out.push(stmt(
            StmtKind::Decl {
                base: QualType::int(),
                storage: Storage::Auto,
                vars: vec![Declarator {
                    sym: flag,
                    init: Some(Init::Expr(int(1))),
                }],
            },
            span,
        ));
        let not_first = Expr::new(
            ExprKind::Unary {
                op: crate::il::UnOp::Not,
                arg: Box::new(flag_var.clone()),
            },
            QualType::int(),
            span,
        );
        let head = [
            stmt(
                StmtKind::If {
                    cond: not_first,
                    then: skipped,
                    other: None,
                },
                span,
            ),
            stmt(
                StmtKind::Assign {
                    lhs: flag_var,
                    rhs: int(0),
                    sugar: AssignSugar::Plain,
                },
                span,
            ),
        ];
        body.stmts.splice(0..0, head);
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn for_loop(
        &mut self,
        init: &ast::ForInit,
        cond: Option<&ast::Expr>,
        step: Option<&ast::Expr>,
        body: &ast::Stmt,
        body_scope: ScopeId,
        span: Span,
        out: &mut Vec<Stmt>,
    ) -> R<()> {
        let mut lowered = Vec::new();
        match init {
            ast::ForInit::None => {}
            ast::ForInit::Expr(e) => self.expr_stmt(e, &mut lowered)?,
            ast::ForInit::Decl(d) => self.local_decl(d, &mut lowered)?,
        }
        let mut init_stmts = Vec::new();
        for s in lowered {
            let temp_decl = matches!(s.kind, StmtKind::Decl { .. }) && self.is_temp_stmt(&s);
            if temp_decl {
                out.push(s);
            } else {
                init_stmts.push(s);
            }
        }
        let (pre, cond) = match cond {
            Some(c) => {
                let (pre, c) = self.loop_condition(c)?;
                (pre, Some(c))
            }
            None => (Vec::new(), None),
        };
        // A step part that lowers to one statement stays in the header; one
        // that needs several (a call into a temporary, `t += g(x)`) moves
        // the whole step into the body (`il/split`).
        let mut step_stmts = Vec::new();
        let mut step_in_body = false;
        if let Some(step) = step {
            let mut parts = Vec::new();
            comma_parts(step, &mut parts);
            for part in parts {
                let mut v = Vec::new();
                self.expr_stmt(part, &mut v)?;
                step_in_body |= v.len() != 1
                    || self.is_temp_stmt(&v[0])
                    || v.iter().any(|s| {
                        matches!(s.kind, StmtKind::Call { result: Some(Expr { kind: ExprKind::Var(t), .. }), .. }
                        if self.prog.symbols[t.index()].kind == SymKind::Temp)
                    });
                step_stmts.append(&mut v);
            }
        }
        let mut body = self.loop_body(body, Some(body_scope))?;
        let cond = if step_in_body && continues_this_loop(&body.stmts) {
            // A `continue` must still run the step, then the test: both go
            // to the top of the body, the step skipped on the first pass.
            if let Some(c) = cond {
                self.loop_with_effects(pre, c, &mut body, false, span)?;
            }
            let step_block = self.own_block(std::mem::take(&mut step_stmts), span);
            self.skip_on_first_pass(step_block, &mut body, span, out)?;
            None
        } else {
            if step_in_body {
                if step_stmts
                    .iter()
                    .any(|s| matches!(s.kind, StmtKind::Decl { .. }))
                {
                    let block = self.own_block(std::mem::take(&mut step_stmts), span);
                    body.stmts.push(stmt(StmtKind::Block(block), span));
                } else {
                    body.stmts.append(&mut step_stmts);
                }
            }
            match cond {
                Some(c) if !pre.is_empty() => {
                    self.loop_with_effects(pre, c, &mut body, false, span)?;
                    None
                }
                c => c,
            }
        };
        out.push(stmt(
            StmtKind::Loop {
                header: LoopHeader::For {
                    init: init_stmts,
                    cond,
                    step: step_stmts,
                },
                body,
            },
            span,
        ));
        Ok(())
    }

    fn switch(
        &mut self,
        selector: &ast::Expr,
        body: &ast::Stmt,
        span: Span,
        out: &mut Vec<Stmt>,
    ) -> R<()> {
        // The selector is evaluated once, before the switch: its effects
        // become statements in front of it.
        let mut fx = Effects::default();
        let sel = self.expr_effects_first(selector, &mut fx)?;
        out.append(&mut fx.pre);
        if !self.is_integer(&sel.ty.ty) {
            return err(selector.span, "the switch selector is not an integer");
        }
        let ast::StmtKind::Compound(c) = &body.kind else {
            return err(body.span, "the body of a switch must be a { } block");
        };
        if let Some(f) = &mut self.f {
            f.breakable_depth += 1;
        }
        // The body is a block of its own: what it declares is visible
        // from there to its end, in the cases that follow too.
        let body_scope = self.new_scope(self.scope);
        let outer = std::mem::replace(&mut self.scope, body_scope);
        let mut hoisted = Vec::new();
        let r = self.switch_cases(c, &mut hoisted, outer);
        self.scope = outer;
        if let Some(f) = &mut self.f {
            f.breakable_depth -= 1;
        }
        let cases = r?;
        let switch = stmt(
            StmtKind::Switch {
                selector: sel,
                cases,
            },
            span,
        );
        if hoisted.is_empty() {
            out.push(switch);
        } else {
            // `il/switch-decl`: the body's declarations go in front of the
            // switch, in a block that ends with it.
            hoisted.push(switch);
            out.push(stmt(
                StmtKind::Block(Block {
                    stmts: hoisted,
                    scope: body_scope,
                    closing_comments: Vec::new(),
                    span,
                }),
                span,
            ));
        }
        Ok(())
    }

    /// A declaration written directly in a switch body, lowered into `v`:
    /// its declarations (initialisers removed) go to `hoisted`, and `v`
    /// keeps the initialisers as assignments, where the declaration was
    /// (`il/switch-decl`). Before the first case label, where C never
    /// runs an initialiser, only declarations without one are accepted.
    fn hoist_switch_decl(
        &mut self,
        v: Vec<Stmt>,
        before_first_case: bool,
        span: Span,
        hoisted: &mut Vec<Stmt>,
        outer: ScopeId,
    ) -> R<Vec<Stmt>> {
        let mut rest = Vec::new();
        for mut st in v {
            match &mut st.kind {
                StmtKind::Decl { storage, vars, .. } if *storage != Storage::Static => {
                    let mut assigns = Vec::new();
                    for d in vars.iter_mut() {
                        // In front of the switch, the declaration would hide
                        // an outer variable of its name from the selector and
                        // the cases before it: it takes a fresh name (the
                        // statements after it name it by its symbol).
                        let name = self.prog.symbols[d.sym.index()].name.clone();
                        if self.lookup_var_from(outer, &name).is_some()
                            || self.proc_names.contains_key(&name)
                        {
                            let fresh = (1..)
                                .map(|k| format!("{name}_{k}"))
                                .find(|n| {
                                    self.lookup_var(n).is_none() && !self.proc_names.contains_key(n)
                                })
                                .expect("some name is free");
                            self.prog.symbols[d.sym.index()].name = fresh;
                        }
                        match d.init.take() {
                            None => {}
                            Some(_) if before_first_case => {
                                return err(
                                    span,
                                    "an initialised declaration before the first case label of a \
                                     switch is never initialised; declare it without an initialiser",
                                );
                            }
                            Some(Init::Expr(e)) => {
                                let sym = &mut self.prog.symbols[d.sym.index()];
                                // Assigned now, not initialised.
                                sym.ty.is_const = false;
                                let target =
                                    Expr::new(ExprKind::Var(d.sym), sym.ty.clone(), e.span);
                                assigns.push(stmt(
                                    StmtKind::Assign {
                                        lhs: target,
                                        rhs: e,
                                        sugar: AssignSugar::Plain,
                                    },
                                    st.span,
                                ));
                            }
                            Some(Init::List(..)) => {
                                return err(
                                    span,
                                    "a declaration with an initializer list directly inside a switch \
                                     body is not supported; put it in a { } block",
                                );
                            }
                        }
                    }
                    if let Some(first) = assigns.first_mut() {
                        first.comments = std::mem::take(&mut st.comments);
                    }
                    hoisted.push(st);
                    rest.extend(assigns);
                }
                StmtKind::Decl { .. } => {
                    return err(
                        span,
                        "a static declaration directly inside a switch body is not supported; put it \
                         in a { } block",
                    );
                }
                StmtKind::Call { decl_init, .. } | StmtKind::Alloc { decl_init, .. } => {
                    *decl_init = false;
                    rest.push(st);
                }
                _ => rest.push(st),
            }
        }
        if before_first_case && !rest.is_empty() {
            return err(
                span,
                "a statement before the first case label of a switch is never run; remove it",
            );
        }
        Ok(rest)
    }

    fn switch_cases(
        &mut self,
        c: &ast::Compound,
        hoisted: &mut Vec<Stmt>,
        outer: ScopeId,
    ) -> R<Vec<SwitchCase>> {
        let mut cases: Vec<SwitchCase> = Vec::new();
        let mut seen: Vec<i64> = Vec::new();
        let mut has_default = false;
        for item in &c.items {
            let mut labels = Vec::new();
            let mut cur = item;
            loop {
                match &cur.kind {
                    ast::StmtKind::Case { value, body } => {
                        let v = self.pure_expr(value, "a case label")?;
                        let Some(n) = self.fold_int(&v).filter(|_| self.is_integer(&v.ty.ty))
                        else {
                            return err(value.span, "a case label must be an integer constant");
                        };
                        if seen.contains(&n) {
                            return err(value.span, format!("duplicate case value {n}"));
                        }
                        seen.push(n);
                        labels.push(Some(v));
                        cur = body;
                    }
                    ast::StmtKind::Default { body } => {
                        if has_default {
                            return err(cur.span, "multiple default labels in one switch");
                        }
                        has_default = true;
                        labels.push(None);
                        cur = body;
                    }
                    _ => break,
                }
            }
            if !labels.is_empty() {
                cases.push(SwitchCase {
                    labels,
                    body: Vec::new(),
                    span: item.span,
                    comments: item.comments.clone(),
                });
            }
            let is_decl = matches!(cur.kind, ast::StmtKind::Decl(_));
            if cases.is_empty() && !is_decl {
                return err(
                    item.span,
                    "a statement before the first case label of a switch is not supported",
                );
            }
            let mut v = Vec::new();
            self.stmt(cur, &mut v)?;
            if is_decl {
                v = self.hoist_switch_decl(v, cases.is_empty(), cur.span, hoisted, outer)?;
            }
            // A temporary's declaration may not follow a case label in C99
            // (nor sit in a switch body at all): the split statement gets
            // its own block.
            if v.iter().any(|s| matches!(s.kind, StmtKind::Decl { .. })) {
                let block = self.own_block(v, cur.span);
                v = vec![stmt(StmtKind::Block(block), cur.span)];
            }
            if let Some(last) = cases.last_mut() {
                last.body.append(&mut v);
            }
        }
        Ok(cases)
    }

    fn return_stmt(&mut self, value: Option<&ast::Expr>, span: Span, out: &mut Vec<Stmt>) -> R<()> {
        let Some(f) = &self.f else {
            return err(span, "return outside of a function");
        };
        let ret = f.ret.clone();
        let name = self.prog.procs[f.proc.index()].name.clone();
        let is_void = matches!(self.resolve(&ret.ty), Type::Void);
        match value {
            None => {
                if !is_void {
                    return err(
                        span,
                        format!("non-void function '{name}' should return a value"),
                    );
                }
                out.push(stmt(StmtKind::Return(None), span));
            }
            Some(e) => {
                if is_void {
                    return err(
                        e.span,
                        format!("void function '{name}' should not return a value"),
                    );
                }
                // `return (double *)calloc(n, sizeof(double));`: the
                // allocation goes into a temporary, which is returned.
                let choice = match &super::expr::strip_parens(e).kind {
                    ast::ExprKind::Conditional(_, a, b) => {
                        self.is_allocation(a)? || self.is_allocation(b)?
                    }
                    _ => false,
                };
                if choice || self.is_allocation(e)? {
                    let mut fx = Effects::default();
                    let tmp = self.new_temp(ret.clone(), span)?;
                    let target = Expr::new(ExprKind::Var(tmp), ret.clone(), span);
                    let alloc = if choice {
                        self.try_alloc_choice(target.clone(), e, span, &mut fx)?
                    } else {
                        self.try_alloc(target.clone(), e, true, span, &mut fx)?
                    };
                    let Some(alloc) = alloc else {
                        return err(e.span, "internal error: expected an allocation");
                    };
                    out.push(stmt(
                        StmtKind::Decl {
                            base: ret.clone(),
                            storage: Storage::Auto,
                            vars: vec![Declarator {
                                sym: tmp,
                                init: None,
                            }],
                        },
                        span,
                    ));
                    out.append(&mut fx.pre);
                    out.push(alloc);
                    out.push(stmt(StmtKind::Return(Some(target)), span));
                    return Ok(());
                }
                let v = self.condition_value(e, out)?;
                self.check_convertible(&ret, &v, e.span, "return")?;
                out.push(stmt(StmtKind::Return(Some(v)), span));
            }
        }
        Ok(())
    }

    fn condition_value(&mut self, e: &ast::Expr, out: &mut Vec<Stmt>) -> R<Expr> {
        let mut fx = Effects::default();
        let v = self.expr_effects_first(e, &mut fx)?;
        if let Some(p) = fx.post.first() {
            return err(
                p.span,
                "a postfix ++/-- inside a return value is not supported; write it as a separate statement",
            );
        }
        out.append(&mut fx.pre);
        Ok(v)
    }

    /// A declaration inside a function.
    pub(super) fn local_decl(&mut self, d: &ast::Declaration, out: &mut Vec<Stmt>) -> R<()> {
        let storage = match super::d_storage(&d.specs) {
            Some(ast::StorageClass::Typedef) => {
                return err(d.span, "typedef inside a function is not supported");
            }
            Some(ast::StorageClass::Extern) => {
                return err(
                    d.span,
                    "extern declarations inside a function are not supported",
                );
            }
            Some(ast::StorageClass::Static) => Storage::Static,
            _ => Storage::Auto,
        };
        let specs = self.decl_specs(&d.specs, false)?;
        if specs.inline {
            return err(d.specs.span, "inline on a variable");
        }
        let base = specs.ty.clone();
        if d.declarators.is_empty() {
            // `enum Local { A, B };` declares its constants (`il/enum`).
            let defines_enumerators = d.specs.items.iter().any(|i| {
                matches!(i, ast::DeclSpec::Type(ast::TypeSpecifier::Enum(e)) if e.enumerators.is_some())
            });
            if defines_enumerators {
                return Ok(());
            }
            return err(d.span, "a declaration that declares nothing");
        }
        let mut pending: Vec<Declarator> = Vec::new();
        let flush = |pending: &mut Vec<Declarator>, out: &mut Vec<Stmt>| {
            if !pending.is_empty() {
                out.push(stmt(
                    StmtKind::Decl {
                        base: base.clone(),
                        storage,
                        vars: std::mem::take(pending),
                    },
                    d.span,
                ));
            }
        };
        for decl in &d.declarators {
            let (name, derived) =
                self.declarator(base.clone(), &decl.declarator, DeclCtx::Local)?;
            let Some((name, span)) = name else {
                return err(decl.declarator.span, "declaration without a name");
            };
            let Derived::Value(mut ty) = derived else {
                return err(
                    span,
                    "function declarations inside a function are not supported",
                );
            };
            match self.resolve(&ty.ty) {
                Type::Void => return err(span, format!("variable '{name}' has type void")),
                Type::Opaque(n) => {
                    return err(span, format!("variable '{name}' has incomplete type '{n}'"));
                }
                Type::Array { len: None, .. } if decl.init.is_none() => {
                    return err(
                        span,
                        format!("array '{name}' needs an explicit size or an initializer"),
                    );
                }
                _ => {}
            }
            if let Some(&prior) = self.prog.scopes[self.scope.index()].vars.get(&name) {
                if self.prog.symbols[prior.index()].kind != SymKind::Temp {
                    return err(span, format!("redefinition of '{name}'"));
                }
                // A temporary made earlier took the name (a file aioli
                // wrote declares `aioli_tmp1` itself): it takes another.
                self.rename_temp(prior);
            }
            if let Some(f) = &self.f
                && self.scope == f.body_scope
                && self.prog.scopes[f.param_scope.index()]
                    .vars
                    .contains_key(&name)
            {
                return err(span, format!("redefinition of parameter '{name}'"));
            }
            let sym = self.add_symbol(Symbol {
                name: name.clone(),
                ty: ty.clone(),
                kind: SymKind::Local,
                storage,
                scope: self.scope,
                span,
            });
            let target = Expr::new(ExprKind::Var(sym), ty.clone(), span);
            let Some(init) = &decl.init else {
                pending.push(Declarator { sym, init: None });
                continue;
            };
            let mut fx = Effects::default();
            if storage == Storage::Auto
                && let ast::Initializer::Expr(e) = init
            {
                let mut special = self.try_alloc(target.clone(), e, true, span, &mut fx)?;
                if special.is_none() {
                    special = self.try_alloc_choice(target.clone(), e, span, &mut fx)?;
                }
                if special.is_none()
                    && let Some((Callee::Proc(pid), args, callee_span)) = self.classify_call(e)?
                {
                    let call = self.proc_call(pid, args, callee_span, e.span, &mut fx)?;
                    let ret = self.prog.procs[pid.index()].ret.clone();
                    let stand_in = Expr::new(ExprKind::StrConst(String::new()), ret, e.span);
                    self.check_convertible(&ty, &stand_in, e.span, "initialization")?;
                    if let StmtKind::Call { callee, args, .. } = call {
                        special = Some(stmt(
                            StmtKind::Call {
                                result: Some(target.clone()),
                                callee,
                                args,
                                decl_init: true,
                            },
                            e.span,
                        ));
                    }
                }
                if let Some(s) = special {
                    if !fx.pre.is_empty() {
                        flush(&mut pending, out);
                        out.append(&mut fx.pre);
                    }
                    pending.push(Declarator { sym, init: None });
                    flush(&mut pending, out);
                    out.push(s);
                    out.append(&mut fx.post);
                    continue;
                }
            }
            let saved = if storage == Storage::Static {
                self.forbid.replace("a static initializer")
            } else {
                self.forbid
            };
            let r = self.initializer(init, &mut ty, &mut fx);
            self.forbid = saved;
            let init = r?;
            self.prog.symbols[sym.index()].ty = ty;
            // `double a = x * x, b = a * x;`: each declarator is initialised
            // in turn, so one that reads an earlier one starts a new
            // declaration (the IL's declarators are simultaneous).
            if !fx.pre.is_empty() || init_reads_any(&init, &pending) {
                flush(&mut pending, out);
            }
            if !fx.pre.is_empty() {
                out.append(&mut fx.pre);
            }
            pending.push(Declarator {
                sym,
                init: Some(init),
            });
            if !fx.post.is_empty() {
                flush(&mut pending, out);
                out.append(&mut fx.post);
            }
        }
        flush(&mut pending, out);
        Ok(())
    }

    /// Lowers an initializer for an object of type `ty`; completes the
    /// length of an array declared with `[]`.
    pub(super) fn initializer(
        &mut self,
        i: &ast::Initializer,
        ty: &mut QualType,
        fx: &mut Effects,
    ) -> R<Init> {
        self.initializer_depth(i, ty, fx, 0)
    }

    fn initializer_depth(
        &mut self,
        i: &ast::Initializer,
        ty: &mut QualType,
        fx: &mut Effects,
        depth: usize,
    ) -> R<Init> {
        match i {
            ast::Initializer::Designated(_, _, span) => err(
                *span,
                "a designator outside a { } list of an array or struct",
            ),
            ast::Initializer::Expr(e) => {
                let resolved = self.resolve(&ty.ty).clone();
                if let Type::Array { elem, len } = &resolved {
                    let is_char = matches!(
                        self.resolve(&elem.ty),
                        Type::Int {
                            kind: crate::il::IntKind::Char,
                            ..
                        }
                    );
                    if let ast::ExprKind::StrLit(parts) = &strip_parens(e).kind
                        && is_char
                    {
                        let n = parts.iter().map(|p| string_len(p)).sum::<u64>() + 1;
                        if let Some(l) = len.as_ref().and_then(|l| l.value)
                            && n > l + 1
                        {
                            return err(e.span, "initializer string is too long for the array");
                        }
                        self.complete_array(ty, n, e.span);
                        return Ok(Init::Expr(Expr::new(
                            ExprKind::StrConst(parts.join(" ")),
                            QualType::new(resolved.clone()),
                            e.span,
                        )));
                    }
                    return err(e.span, "an array must be initialized with a { } list");
                }
                let target = ty.ty.clone();
                let v = self.value_for(e, &target, fx)?;
                self.check_convertible(ty, &v, e.span, "initialization")?;
                Ok(Init::Expr(v))
            }
            ast::Initializer::List(items, span) => {
                if depth > 64 {
                    return err(*span, "initializer is too deeply nested");
                }
                let saved = std::mem::replace(&mut self.in_init_list, true);
                let r = self.init_list(items, *span, ty, fx, depth);
                self.in_init_list = saved;
                r
            }
        }
    }

    fn init_list(
        &mut self,
        items: &[ast::Initializer],
        span: Span,
        ty: &mut QualType,
        fx: &mut Effects,
        depth: usize,
    ) -> R<Init> {
        let resolved = self.resolve(&ty.ty).clone();
        let what = match &resolved {
            Type::Array { .. } => "array",
            Type::Struct(_) => "struct",
            _ => {
                if items.len() != 1 {
                    return err(span, "a scalar must be initialized with one value");
                }
                let one = self.initializer_depth(&items[0], ty, fx, depth + 1)?;
                return Ok(Init::List(vec![one], span));
            }
        };
        let mut pos = 0;
        let init = self.aggregate_init(items, &mut pos, span, ty, fx, ListPlace::braced(depth))?;
        if pos < items.len() {
            return err(span, format!("too many initializers for the {what}"));
        }
        Ok(init)
    }

    /// The members of the aggregate `ty`, in order, from `items[*pos..]`.
    /// A member that is itself an aggregate and whose item is not a
    /// braced list takes as many items as it has scalars (C's brace
    /// elision: `double m[2][2] = {1, 2, 3, 4};`); the result is fully
    /// braced.
    fn aggregate_init(
        &mut self,
        items: &[ast::Initializer],
        pos: &mut usize,
        span: Span,
        ty: &mut QualType,
        fx: &mut Effects,
        list: ListPlace,
    ) -> R<Init> {
        let ListPlace { depth, own_list } = list;
        if depth > 64 {
            return err(span, "initializer is too deeply nested");
        }
        let resolved = self.resolve(&ty.ty).clone();
        // Members by position; a designator (`[2] =`, `.y =`) moves the
        // position, and members it skips are zero (C99 6.7.8).
        let mut slots: Vec<Option<Init>> = Vec::new();
        // Nested designators (`[1][0] = a`, `.p[1].y = b`) by member: the
        // ones sharing a member make one list for it.
        let mut chains: std::collections::BTreeMap<usize, Vec<ast::Initializer>> =
            Default::default();
        let mut at = 0usize;
        match &resolved {
            Type::Array { elem, len } => {
                let n = len.as_ref().and_then(|l| l.value);
                while *pos < items.len() {
                    if let ast::Initializer::Designated(ds, value, dspan) = &items[*pos] {
                        // A designator names a member of the braced list
                        // it is written in, not of an aggregate whose
                        // braces were elided.
                        if !own_list {
                            break;
                        }
                        let ast::Designator::Index(ix) = &ds[0] else {
                            return err(
                                *dspan,
                                "a field designator ('.name =') in an array's initializer",
                            );
                        };
                        at = self.designated_index(ix, n)?;
                        if ds.len() > 1 {
                            chain_item(&mut chains, at, ds, value, *dspan);
                        } else {
                            let mut e = (**elem).clone();
                            let init = self.initializer_depth(value, &mut e, fx, depth + 1)?;
                            set_slot(&mut slots, at, init);
                        }
                        *pos += 1;
                        at += 1;
                        continue;
                    }
                    after_chain(items, *pos)?;
                    if n.is_some_and(|n| at as u64 >= n) {
                        break;
                    }
                    let mut e = (**elem).clone();
                    let init = self.member_init(items, pos, &mut e, fx, depth)?;
                    set_slot(&mut slots, at, init);
                    at += 1;
                }
                let elem = (**elem).clone();
                for (k, parts) in std::mem::take(&mut chains) {
                    let mut e = elem.clone();
                    let init = self.chained_member(&parts, &slots, k, &mut e, fx, depth)?;
                    set_slot(&mut slots, k, init);
                }
                self.complete_array(ty, slots.len() as u64, span);
                let out = slots
                    .into_iter()
                    .map(|s| s.unwrap_or_else(|| self.zero_init_of(&elem, span)))
                    .collect();
                Ok(Init::List(out, span))
            }
            Type::Struct(id) => {
                let fields: Vec<(String, QualType)> = self.prog.structs[id.index()]
                    .fields
                    .iter()
                    .map(|f| (f.name.clone(), f.ty.clone()))
                    .collect();
                let mut designated = false;
                while *pos < items.len() {
                    if let ast::Initializer::Designated(ds, value, dspan) = &items[*pos] {
                        if !own_list {
                            break;
                        }
                        designated = true;
                        let ast::Designator::Field(name, fspan) = &ds[0] else {
                            return err(
                                *dspan,
                                "an index designator ('[i] =') in a struct's initializer",
                            );
                        };
                        let Some(k) = fields.iter().position(|(f, _)| f == name) else {
                            return err(*fspan, format!("the struct has no field '{name}'"));
                        };
                        at = k;
                        if ds.len() > 1 {
                            chain_item(&mut chains, at, ds, value, *dspan);
                        } else {
                            let mut fty = fields[k].1.clone();
                            let init = self.initializer_depth(value, &mut fty, fx, depth + 1)?;
                            set_slot(&mut slots, at, init);
                        }
                        *pos += 1;
                        at += 1;
                        continue;
                    }
                    after_chain(items, *pos)?;
                    let Some((_, fty)) = fields.get(at) else {
                        break;
                    };
                    let mut fty = fty.clone();
                    let init = self.member_init(items, pos, &mut fty, fx, depth)?;
                    set_slot(&mut slots, at, init);
                    at += 1;
                }
                for (k, parts) in std::mem::take(&mut chains) {
                    let mut fty = fields[k].1.clone();
                    let init = self.chained_member(&parts, &slots, k, &mut fty, fx, depth)?;
                    set_slot(&mut slots, k, init);
                }
                // With designators, every field is given (the positional
                // list would leave the later ones to C's zeroing, which
                // -Wmissing-field-initializers reports).
                if designated {
                    slots.resize(fields.len(), None);
                }
                let out = slots
                    .into_iter()
                    .enumerate()
                    .map(|(k, s)| s.unwrap_or_else(|| self.zero_init_of(&fields[k].1, span)))
                    .collect();
                Ok(Init::List(out, span))
            }
            _ => unreachable!("aggregate_init is called on arrays and structs"),
        }
    }

    /// The index of an array designator `[i]`: an integer constant inside
    /// the array.
    fn designated_index(&mut self, ix: &ast::Expr, n: Option<u64>) -> R<usize> {
        let mut fx = Effects::default();
        let saved = self.forbid.replace("an array designator");
        let v = self.expr(ix, &mut fx);
        self.forbid = saved;
        let v = v?;
        let Some(k) = self.fold_int(&v).filter(|_| self.is_integer(&v.ty.ty)) else {
            return err(ix.span, "an array designator must be an integer constant");
        };
        if k < 0 || n.is_some_and(|n| k as u64 >= n) {
            return err(ix.span, "the array designator is outside the array");
        }
        // The list is held positional (`il/decl`): every element before
        // the designated one is written out.
        if k >= 1 << 16 {
            return err(
                ix.span,
                "an array designator beyond index 65535 is not supported",
            );
        }
        Ok(k as usize)
    }

    /// The member that nested designators initialize (`[1][0] = a, [1][1]
    /// = b`): their rests as one braced list of that member.
    fn chained_member(
        &mut self,
        parts: &[ast::Initializer],
        slots: &[Option<Init>],
        k: usize,
        ty: &mut QualType,
        fx: &mut Effects,
        depth: usize,
    ) -> R<Init> {
        let span = match parts.first() {
            Some(ast::Initializer::Designated(_, _, span)) => *span,
            _ => Span::default(),
        };
        if slots.get(k).is_some_and(Option::is_some) {
            return err(
                span,
                "a member initialized both as a whole and through nested designators is not supported",
            );
        }
        if !matches!(self.resolve(&ty.ty), Type::Array { .. } | Type::Struct(_)) {
            return err(
                span,
                "a designator for a member that is not an array or a struct",
            );
        }
        let mut pos = 0;
        self.aggregate_init(parts, &mut pos, span, ty, fx, ListPlace::braced(depth + 1))
    }

    /// A zero initializer for a member no item gave a value (C99 6.7.8:
    /// as if it had static storage): `0` for a scalar, `{0}` for an array
    /// (the rest is zeroed), every field for a struct
    /// (-Wmissing-field-initializers).
    fn zero_init_of(&self, ty: &QualType, span: Span) -> Init {
        match self.resolve(&ty.ty).clone() {
            Type::Array { elem, .. } => Init::List(vec![self.zero_init_of(&elem, span)], span),
            Type::Struct(id) => Init::List(
                self.prog.structs[id.index()]
                    .fields
                    .iter()
                    .map(|f| self.zero_init_of(&f.ty, span))
                    .collect(),
                span,
            ),
            Type::Real(_) => Init::Expr(Expr::new(
                ExprKind::RealConst {
                    value: 0.0,
                    text: "0.0".into(),
                },
                QualType::new(self.resolve(&ty.ty).clone()),
                span,
            )),
            _ => Init::Expr(Expr::new(
                ExprKind::IntConst {
                    value: 0,
                    text: "0".into(),
                },
                QualType::int(),
                span,
            )),
        }
    }

    /// One member's initializer from `items[*pos..]` (see
    /// `aggregate_init`).
    fn member_init(
        &mut self,
        items: &[ast::Initializer],
        pos: &mut usize,
        ty: &mut QualType,
        fx: &mut Effects,
        depth: usize,
    ) -> R<Init> {
        let item = &items[*pos];
        let elided = match item {
            ast::Initializer::Expr(e) => match self.resolve(&ty.ty).clone() {
                Type::Struct(sid) => {
                    // A struct-valued expression initializes the member
                    // itself. Lowering it twice is harmless: an
                    // initializer list admits no side effects.
                    let mut scratch = Effects::default();
                    let v = self.expr(e, &mut scratch)?;
                    if matches!(self.resolve(&v.ty.ty), Type::Struct(s) if *s == sid) {
                        fx.pre.append(&mut scratch.pre);
                        fx.post.append(&mut scratch.post);
                        *pos += 1;
                        return Ok(Init::Expr(v));
                    }
                    Some(e.span)
                }
                Type::Array { elem, .. } => {
                    let is_char = matches!(
                        self.resolve(&elem.ty),
                        Type::Int {
                            kind: crate::il::IntKind::Char,
                            ..
                        }
                    );
                    let string = matches!(strip_parens(e).kind, ast::ExprKind::StrLit(_));
                    (!(is_char && string)).then_some(e.span)
                }
                _ => None,
            },
            _ => None,
        };
        match elided {
            Some(at) => self.aggregate_init(
                items,
                pos,
                at,
                ty,
                fx,
                ListPlace {
                    depth: depth + 1,
                    own_list: false,
                },
            ),
            None => {
                *pos += 1;
                self.initializer_depth(item, ty, fx, depth + 1)
            }
        }
    }

    /// Gives `T a[]` its length from its initializer.
    fn complete_array(&self, ty: &mut QualType, n: u64, span: Span) {
        if let Type::Array { len, .. } = &mut ty.ty
            && len.is_none()
        {
            *len = Some(ArrayLen {
                expr: Box::new(Expr::new(
                    ExprKind::IntConst {
                        value: n as i64,
                        text: n.to_string(),
                    },
                    QualType::int(),
                    span,
                )),
                value: Some(n),
            });
        }
    }
}

/// The top-level operands of a comma expression, in order.
fn comma_parts<'e>(e: &'e ast::Expr, out: &mut Vec<&'e ast::Expr>) {
    match &strip_parens(e).kind {
        ast::ExprKind::Comma(a, b) => {
            comma_parts(a, out);
            comma_parts(b, out);
        }
        _ => out.push(e),
    }
}

/// The number of bytes a string literal (with its quotes) stands for,
/// without the terminating NUL.
fn string_len(lit: &str) -> u64 {
    let inner = lit
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .unwrap_or(lit);
    let bytes = inner.as_bytes();
    let mut i = 0;
    let mut n = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' && i + 1 < bytes.len() {
            i += 2;
            match bytes[i - 1] {
                b'x' => {
                    while i < bytes.len() && bytes[i].is_ascii_hexdigit() {
                        i += 1;
                    }
                }
                b'0'..=b'7' => {
                    let mut k = 0;
                    while k < 2 && i < bytes.len() && (b'0'..=b'7').contains(&bytes[i]) {
                        i += 1;
                        k += 1;
                    }
                }
                _ => {}
            }
        } else {
            i += 1;
        }
        n += 1;
    }
    n
}

/// `for (;;)`.
fn forever() -> LoopHeader {
    LoopHeader::For {
        init: Vec::new(),
        cond: None,
        step: Vec::new(),
    }
}

/// Does a `continue` in these statements go to the loop they are the body
/// of (not to a loop nested in them)?
fn continues_this_loop(stmts: &[Stmt]) -> bool {
    stmts.iter().any(|s| match &s.kind {
        StmtKind::Continue => true,
        StmtKind::If { then, other, .. } => {
            continues_this_loop(&then.stmts)
                || other
                    .as_ref()
                    .is_some_and(|o| continues_this_loop(&o.stmts))
        }
        StmtKind::Block(b) => continues_this_loop(&b.stmts),
        StmtKind::Switch { cases, .. } => cases.iter().any(|c| continues_this_loop(&c.body)),
        _ => false,
    })
}

/// Does `init` read the value of one of the variables `declared`? Taking
/// an address (`&v[0]`, an array decaying to a pointer) or a `sizeof`
/// reads no value, so `double v[10], *p = &v[0];` stays one declaration.
fn init_reads_any(init: &Init, declared: &[Declarator]) -> bool {
    fn reads(e: &Expr, declared: &[Declarator], element: bool) -> bool {
        match &e.kind {
            ExprKind::Var(v) => {
                (element || !matches!(e.ty.ty, Type::Array { .. }))
                    && declared.iter().any(|d| d.sym == *v)
            }
            ExprKind::AddrOf(r) => address(r, declared),
            ExprKind::SizeOfExpr(_) | ExprKind::SizeOfType(_) => false,
            ExprKind::Index { base, index } => {
                reads(base, declared, true) || reads(index, declared, false)
            }
            ExprKind::Deref(p) => reads(p, declared, true),
            ExprKind::Field { base, .. } => reads(base, declared, true),
            ExprKind::Unary { arg, .. } | ExprKind::Cast { arg, .. } => reads(arg, declared, false),
            ExprKind::Binary { lhs, rhs, .. } => {
                reads(lhs, declared, false) || reads(rhs, declared, false)
            }
            ExprKind::Intrinsic { args, .. } => args.iter().any(|a| reads(a, declared, false)),
            ExprKind::Cond { cond, then, other } => [cond, then, other]
                .iter()
                .any(|x| reads(x, declared, false)),
            _ => false,
        }
    }
    /// What computing the address of reference `r` reads.
    fn address(r: &Expr, declared: &[Declarator]) -> bool {
        match &r.kind {
            ExprKind::Var(_) => false,
            ExprKind::Index { base, index } => {
                address(base, declared) || reads(index, declared, false)
            }
            ExprKind::Field { base, .. } => address(base, declared),
            ExprKind::Deref(p) => reads(p, declared, false),
            _ => reads(r, declared, false),
        }
    }
    fn each(init: &Init, declared: &[Declarator]) -> bool {
        match init {
            Init::Expr(e) => reads(e, declared, false),
            Init::List(items, _) => items.iter().any(|i| each(i, declared)),
        }
    }
    each(init, declared)
}

/// Adds `comment` after the trailing comment `s` may already have.
fn append_trailing(s: &mut Stmt, comment: &str) {
    s.comments.trailing = Some(match s.comments.trailing.take() {
        Some(own) => format!("{own} {comment}"),
        None => comment.to_string(),
    });
}

/// Where `aggregate_init` reads its items: the nesting depth, and whether
/// they are the aggregate's own braced list (where designators name its
/// members) or the enclosing list's, braces elided.
#[derive(Clone, Copy)]
struct ListPlace {
    depth: usize,
    own_list: bool,
}

impl ListPlace {
    fn braced(depth: usize) -> Self {
        ListPlace {
            depth,
            own_list: true,
        }
    }
}

/// Puts `init` at position `at`, growing the list with empty slots.
fn set_slot(slots: &mut Vec<Option<Init>>, at: usize, init: Init) {
    if slots.len() <= at {
        slots.resize(at + 1, None);
    }
    slots[at] = Some(init);
}

/// C continues after `[i].f = v` inside element i; aioli does not follow
/// that, so a positional item right after such a chain is refused.
fn after_chain(items: &[ast::Initializer], pos: usize) -> R<()> {
    match pos.checked_sub(1).map(|p| &items[p]) {
        Some(ast::Initializer::Designated(ds, _, span)) if ds.len() > 1 => err(
            *span,
            "an initializer without designator right after a nested designator (`.a.b =`, `[i].f =`, `.f[i] =`) is not supported; give it its own designator",
        ),
        _ => Ok(()),
    }
}

/// Files the rest of a nested designator (`[1][0] = a` → `[0] = a`)
/// under the member its first designator names.
fn chain_item(
    chains: &mut std::collections::BTreeMap<usize, Vec<ast::Initializer>>,
    at: usize,
    ds: &[ast::Designator],
    value: &ast::Initializer,
    span: Span,
) {
    chains
        .entry(at)
        .or_default()
        .push(ast::Initializer::Designated(
            ds[1..].to_vec(),
            Box::new(value.clone()),
            span,
        ));
}
