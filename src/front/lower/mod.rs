//! Lowering from the C syntax tree to IL.
//!
//! Lowering gives the syntax tree its meaning: it builds the symbol tables,
//! computes the C type of every expression, splits side effects out of
//! expressions into statements (`il/split`) and rejects, with a located
//! message naming the construct, everything outside the input language
//! (CONTRACT §4). It never panics.
//!
//! # Choices the rest of the tool relies on
//!
//! - **Scopes.** The global scope; one parameter scope per procedure (also
//!   for prototypes and system procedures); and one fresh scope for *every*
//!   [`Block`](crate::il::Block), whether or not it declares something (its
//!   parent is the enclosing block's scope, or the parameter scope for a
//!   procedure body). A `then`/`else`/loop body written without braces still
//!   gets a `Block` with its own scope. The declarations in a `for` header
//!   (`for (int i = 0; ...)`) live in the loop body's block scope.
//!   Declarations directly inside a `switch` body are rejected (put them in a
//!   `{ }` block), so no switch case needs a scope.
//! - **Temporaries.** A call whose value is used inside a bigger expression
//!   is stored in a [`SymKind::Temp`](crate::il::SymKind) named `aioli_tmp`,
//!   `aioli_tmp1`, ... (unique per procedure, skipping names already visible).
//!   Its `Decl` statement is inserted right before the `Call` that sets it, in
//!   the same statement list (for a `for` header's init, right before the
//!   loop); its symbol belongs to the scope of the innermost enclosing block
//!   (for a statement in a switch case: the block around the switch).
//! - **Statement ids** are handed out per procedure in the order of
//!   [`crate::il::visit_stmt`]: a statement, then (for a `for` loop) its init
//!   statements, its body, its step statements; branches and switch cases in
//!   order. `Procedure::stmt_count` is the number handed out.
//! - **Struct items.** `struct P { ... };` (alone, or followed by
//!   declarators of variables) gives an `ItemKind::Struct` item (then a
//!   `Globals` item for the variables). A struct defined inside a `typedef`
//!   (`typedef struct [tag] { ... } Name, ...;`) gives **no**
//!   `ItemKind::Struct` item: it gives one `ItemKind::Typedef` item per
//!   declarator, and the first of them has a type that is exactly
//!   `Type::Struct(id)` (not const, no pointer). So the back end prints a
//!   struct body (a) at an `ItemKind::Struct(id)` item, as `struct tag {...};`,
//!   and (b) at the first `ItemKind::Typedef(t)` item whose
//!   `typedefs[t].ty.ty == Type::Struct(id)` when the program has no
//!   `ItemKind::Struct(id)` item, as `typedef struct [tag] {...} Name;`. A
//!   struct defined inside another struct's field gets its own
//!   `ItemKind::Struct` item just before the item of the outer one. A struct
//!   tag that is used but never defined (`typedef struct _IO_FILE FILE;`) is
//!   `Type::Opaque("struct _IO_FILE")`.
//! - **Comments.** Item comments are in `Item::comments`; `Procedure::comments`
//!   holds the same comments as the definition's item (print one of them).
//!   `StructDef::comments` is left empty (the item has them); field comments
//!   are in `Field::comments`. For a statement split into several, the
//!   leading comments go to the first statement that is not a temporary's
//!   `Decl` or `Call` and the trailing comment to the last such statement.
//! - **Declarations with calls.** `double a = 1, r = f(x), b;` becomes
//!   `Decl a = 1, r` then `Call r = f(x)` (`decl_init`) then `Decl b`: the
//!   declaration is cut after a declarator initialised by a call or an
//!   allocation. Temporaries needed by an initializer are declared and set
//!   before the part of the declaration that uses them.
//! - **Arrays.** Parameters of array type keep their array type (`double
//!   x[]`, `double x[10]`) for printing, but behave as pointers (C adjusts
//!   them). A local or global `T a[] = {...}` (or `char s[] = "..."`) gets a
//!   synthesized length: an `IntConst` whose text is the number.
//! - **Types of expressions.** Every expression has its type after the usual
//!   arithmetic conversions and integer promotions; when the result type is
//!   the type of an operand, that operand's spelling (typedef name) is kept.
//!   No conversion node is inserted. String literals are typed
//!   `const char *`; `NULL` (not declared as a variable) is `IntConst { value:
//!   0, text: "NULL" }` of type `void *`.
//! - **Procedures.** A prototype followed by a definition is one procedure
//!   (the definition's parameters and scope replace the prototype's).
//!   Unnamed parameters of prototypes are symbols with an empty name.
//!   Procedures declared in a virtual system header have origin `System`; a
//!   call to one of them named like a `<math.h>` function becomes
//!   `ExprKind::Intrinsic`; `malloc`, `calloc`, `free` become `Alloc` and
//!   `Free`. Only system procedures may be variadic.
//! - **Accepted and dropped:** `restrict`, `register`, `auto`. An
//!   expression statement without effect (`(void)n;`) is kept as a
//!   `Discard` statement.

mod expr;
mod stmt;
mod types;

use super::ast::{self, TranslationUnit};
use super::diag::{Diagnostic, FrontResult};
use super::preprocess::Preprocessed;
use super::source::{SourceMap, Span};
use crate::il::{
    Comments, Declarator, Item, ItemKind, ProcId, ProcOrigin, Procedure, Program, QualType, Scope,
    ScopeId, Stmt, StmtId, StmtKind, Storage, StructId, SymId, SymKind, Symbol, Type, TypedefDef,
    TypedefId,
};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

/// A lowered program and the warnings met on the way.
pub struct Lowered {
    pub program: Program,
    pub warnings: Vec<Diagnostic>,
}

/// Builds the IL program of a translation unit.
pub fn lower(
    tu: &TranslationUnit,
    pp: &Preprocessed,
    _sources: &SourceMap,
) -> FrontResult<Lowered> {
    let mut cx = Lowerer::new(pp);
    cx.collect_defined_tags(tu);
    // `#define`/`#undef` lines of the main file become items where they
    // stand between top-level items; those inside a function body are
    // dropped (the code has its macros expanded).
    let span_of = |item: &ast::ExternalDecl| match item {
        ast::ExternalDecl::Function(f) => f.span,
        ast::ExternalDecl::Declaration(d) => d.span,
        ast::ExternalDecl::Include(_, span, _) => *span,
    };
    let bodies: Vec<Span> = tu
        .items
        .iter()
        .filter_map(|i| match i {
            ast::ExternalDecl::Function(f) if f.span.file == pp.main_file => Some(f.span),
            _ => None,
        })
        .collect();
    let mut macro_lines = pp
        .macro_lines
        .iter()
        .filter(|m| !bodies.iter().any(|b| b.lo <= m.span.lo && m.span.lo < b.hi))
        .peekable();
    for item in &tu.items {
        let span = span_of(item);
        if span.file == pp.main_file {
            while let Some(m) = macro_lines.next_if(|m| m.span.lo < span.lo) {
                cx.push_macro_line(m);
            }
        }
        cx.external(item)?;
    }
    for m in macro_lines {
        cx.push_macro_line(m);
    }
    cx.prog.final_comments = tu.final_comments.clone();
    Ok(Lowered {
        program: cx.prog,
        warnings: cx.warnings,
    })
}

type R<T> = FrontResult<T>;

fn err<T>(span: Span, message: impl Into<String>) -> R<T> {
    Err(Diagnostic::error(span, message))
}

/// What lowering knows about a procedure beyond the IL's [`Procedure`].
#[derive(Clone, Debug, Default)]
struct ProcInfo {
    variadic: bool,
}

/// The state of the procedure being lowered.
struct FnState {
    proc: ProcId,
    ret: QualType,
    param_scope: ScopeId,
    body_scope: ScopeId,
    /// The scope of the innermost enclosing block: temporaries go there.
    temp_scope: ScopeId,
    temp_count: u32,
    loop_depth: u32,
    breakable_depth: u32,
}

/// The lowering context: the program being built and the symbol tables.
struct Lowerer<'a> {
    pp: &'a Preprocessed,
    prog: Program,
    warnings: Vec<Diagnostic>,
    proc_names: HashMap<String, ProcId>,
    proc_info: Vec<ProcInfo>,
    typedef_names: HashMap<String, TypedefId>,
    struct_tags: HashMap<String, StructId>,
    /// Tags that have a definition somewhere in the translation unit.
    defined_tags: HashSet<String>,
    struct_defined: Vec<bool>,
    /// Structs defined while lowering the current declaration, inner first.
    new_structs: Vec<StructId>,
    /// Enums defined at file scope while lowering the current declaration.
    new_enums: Vec<ItemKind>,
    /// The enumerators declared in each scope, with their values (`il/enum`).
    enum_constants: HashMap<(ScopeId, String), i64>,
    /// Enum tags, and whether their type is `unsigned int`.
    enum_tags: HashMap<String, bool>,
    /// Globals that have been given an initializer.
    initialized_globals: HashSet<SymId>,
    /// The scope names are looked up in and declared into.
    scope: ScopeId,
    f: Option<FnState>,
    /// Set while lowering a part of an expression where side effects would
    /// change meaning or cannot be split out: names that part.
    forbid: Option<&'static str>,
    /// Set while lowering an initializer list: its calls go before the
    /// declaration, in the items' order, which is one order C allows;
    /// an assignment or `++` there would also move past the items read
    /// before it, so those are refused.
    in_init_list: bool,
    /// Postfix `++`/`--` must take effect before the expression is used
    /// (conditions, returned values): the old value goes to a temporary.
    post_as_pre: bool,
    /// How many `?:` branches or `&&`/`||` right operands enclose the
    /// expression being lowered (their effects are placed in a branch).
    in_branch: usize,
    /// Set while lowering `assert`'s argument, where a string literal may
    /// be an operand anywhere (`assert(n > 0 && "n positive")`).
    in_assert: bool,
    /// The comment after the `}` of the braced body just lowered (`}
    /// /* end for */`), for the statement that owns the body to carry.
    body_trailing: Option<String>,
    /// Set while lowering a parameter's specifiers, where `register` is
    /// allowed (C99 6.7.5.3), even in a prototype at file scope.
    in_param: bool,
}

impl<'a> Lowerer<'a> {
    fn new(pp: &'a Preprocessed) -> Self {
        let prog = Program {
            scopes: vec![Scope::default()],
            global_scope: ScopeId(0),
            main_file: pp.main_file,
            header_macros: pp.header_macros.clone(),
            ..Program::default()
        };
        Lowerer {
            pp,
            prog,
            warnings: Vec::new(),
            proc_names: HashMap::default(),
            proc_info: Vec::new(),
            typedef_names: HashMap::default(),
            struct_tags: HashMap::default(),
            defined_tags: HashSet::default(),
            struct_defined: Vec::new(),
            new_structs: Vec::new(),
            new_enums: Vec::new(),
            enum_constants: HashMap::default(),
            enum_tags: HashMap::default(),
            initialized_globals: HashSet::default(),
            scope: ScopeId(0),
            f: None,
            forbid: None,
            in_init_list: false,
            post_as_pre: false,
            in_branch: 0,
            in_assert: false,
            body_trailing: None,
            in_param: false,
        }
    }

    fn is_system(&self, span: Span) -> bool {
        self.pp.system_files.contains(&span.file)
    }

    fn new_scope(&mut self, parent: ScopeId) -> ScopeId {
        self.prog.scopes.push(Scope {
            parent: Some(parent),
            vars: HashMap::default(),
        });
        ScopeId(self.prog.scopes.len() as u32 - 1)
    }

    fn add_symbol(&mut self, sym: Symbol) -> SymId {
        let id = SymId(self.prog.symbols.len() as u32);
        if !sym.name.is_empty()
            && let Some(scope) = self.prog.scopes.get_mut(sym.scope.index())
        {
            scope.vars.insert(sym.name.clone(), id);
        }
        self.prog.symbols.push(sym);
        id
    }

    /// Looks a variable up from the current scope outwards.
    fn lookup_var(&self, name: &str) -> Option<SymId> {
        self.lookup_var_from(self.scope, name)
    }

    /// The variable `name` designates in `from` (and the scopes around it).
    fn lookup_var_from(&self, from: ScopeId, name: &str) -> Option<SymId> {
        let mut scope = Some(from);
        let mut guard = 0;
        while let Some(s) = scope {
            let sc = self.prog.scopes.get(s.index())?;
            if let Some(id) = sc.vars.get(name) {
                return Some(*id);
            }
            scope = sc.parent;
            guard += 1;
            if guard > 100_000 {
                return None;
            }
        }
        None
    }

    fn push_macro_line(&mut self, m: &super::preprocess::MacroLine) {
        let comments = Comments {
            leading: m.comments.clone(),
            trailing: None,
        };
        self.push_item(ItemKind::MacroLine(m.text.clone()), m.span, comments);
    }

    fn push_item(&mut self, kind: ItemKind, span: Span, comments: Comments) {
        self.prog.items.push(Item {
            kind,
            span,
            comments,
            file: span.file,
        });
    }

    /// Records the tags of every struct defined at file scope (also inside
    /// other structs), so that a tag used before its definition is a struct
    /// and a tag never defined is opaque.
    fn collect_defined_tags(&mut self, tu: &TranslationUnit) {
        fn specs(s: &ast::DeclSpecs, out: &mut HashSet<String>) {
            for item in &s.items {
                if let ast::DeclSpec::Type(ast::TypeSpecifier::Struct(st)) = item
                    && let Some(fields) = &st.fields
                {
                    if let Some((tag, _)) = &st.tag {
                        out.insert(tag.clone());
                    }
                    for f in fields {
                        specs(&f.specs, out);
                    }
                }
            }
        }
        let mut out = HashSet::default();
        for item in &tu.items {
            match item {
                ast::ExternalDecl::Declaration(d) => specs(&d.specs, &mut out),
                ast::ExternalDecl::Function(f) => specs(&f.specs, &mut out),
                ast::ExternalDecl::Include(..) => {}
            }
        }
        self.defined_tags = out;
    }

    fn external(&mut self, item: &ast::ExternalDecl) -> R<()> {
        match item {
            ast::ExternalDecl::Include(index, span, comments) => {
                if self.is_system(*span) {
                    return Ok(());
                }
                let Some(record) = self.pp.includes.get(*index as usize) else {
                    return err(*span, "internal error: unknown #include index");
                };
                let mut comments = comments.clone();
                if comments.trailing.is_none() {
                    comments.trailing = record.trailing.clone();
                }
                if record.system {
                    self.push_item(
                        ItemKind::SystemInclude(record.written.clone()),
                        *span,
                        comments,
                    );
                } else if let Some(file) = record.file {
                    self.push_item(
                        ItemKind::LocalInclude {
                            written: record.written.clone(),
                            file,
                        },
                        *span,
                        comments,
                    );
                }
                Ok(())
            }
            ast::ExternalDecl::Declaration(d) => self.global_declaration(d),
            ast::ExternalDecl::Function(f) => self.function_def(f),
        }
    }

    /// Hands out statement ids in `visit_stmt` order.
    fn renumber(stmts: &mut [Stmt], next: &mut u32) {
        for s in stmts {
            s.id = StmtId(*next);
            *next += 1;
            match &mut s.kind {
                StmtKind::If { then, other, .. } => {
                    Self::renumber(&mut then.stmts, next);
                    if let Some(o) = other {
                        Self::renumber(&mut o.stmts, next);
                    }
                }
                StmtKind::Loop { header, body } => {
                    if let crate::il::LoopHeader::For { init, step, .. } = header {
                        Self::renumber(init, next);
                        Self::renumber(&mut body.stmts, next);
                        Self::renumber(step, next);
                    } else {
                        Self::renumber(&mut body.stmts, next);
                    }
                }
                StmtKind::Switch { cases, .. } => {
                    for c in cases {
                        Self::renumber(&mut c.body, next);
                    }
                }
                StmtKind::Block(b) => Self::renumber(&mut b.stmts, next),
                _ => {}
            }
        }
    }

    /// Declares (or re-declares) a procedure.
    #[allow(clippy::too_many_arguments)]
    fn declare_proc(
        &mut self,
        name: &str,
        span: Span,
        sig: &types::FnSig,
        storage: Storage,
        is_inline: bool,
        comments: &Comments,
        system: bool,
    ) -> R<ProcId> {
        if sig.variadic && !system {
            return err(span, "user-defined variadic functions are not supported");
        }
        if self.prog.scopes[0].vars.contains_key(name) {
            return err(
                span,
                format!("'{name}' redeclared as a different kind of symbol"),
            );
        }
        if let Some(&pid) = self.proc_names.get(name) {
            let p = &self.prog.procs[pid.index()];
            let old_params: Vec<QualType> = p
                .params
                .iter()
                .map(|s| self.prog.symbols[s.index()].ty.clone())
                .collect();
            let compatible = self.same_type(&p.ret, &sig.ret)
                && old_params.len() == sig.params.len()
                && old_params
                    .iter()
                    .zip(&sig.params)
                    .all(|(a, b)| self.same_type(&self.decay(a), &self.decay(&b.ty)))
                && self.proc_info[pid.index()].variadic == sig.variadic;
            if !compatible {
                return err(span, format!("conflicting types for '{name}'"));
            }
            return Ok(pid);
        }
        let scope = self.new_scope(self.prog.global_scope);
        let params = self.param_symbols(sig, scope, false)?;
        let pid = ProcId(self.prog.procs.len() as u32);
        self.prog.procs.push(Procedure {
            name: name.to_string(),
            ret: sig.ret.clone(),
            params,
            scope,
            storage,
            is_inline,
            body: None,
            origin: if system {
                ProcOrigin::System
            } else {
                ProcOrigin::User
            },
            span,
            comments: comments.clone(),
            stmt_count: 0,
        });
        self.proc_info.push(ProcInfo {
            variadic: sig.variadic,
        });
        self.proc_names.insert(name.to_string(), pid);
        Ok(pid)
    }

    fn param_symbols(
        &mut self,
        sig: &types::FnSig,
        scope: ScopeId,
        need_names: bool,
    ) -> R<Vec<SymId>> {
        let mut params = Vec::new();
        for p in &sig.params {
            let name = match &p.name {
                Some(n) => {
                    if self.prog.scopes[scope.index()].vars.contains_key(n) {
                        return err(p.span, format!("redefinition of parameter '{n}'"));
                    }
                    n.clone()
                }
                None if need_names => return err(p.span, "parameter name omitted"),
                None => String::new(),
            };
            // C99 6.7.5.3: a parameter declared as an array of T is a
            // pointer to T (`double m[]`, `double m[][4]` is `double (*m)[4]`).
            // Through a typedef too (`typedef double vec3[3]; const vec3 v`
            // is `const double *v`: the qualifier goes to the elements).
            let ty = match (&p.ty.ty, self.resolve(&p.ty.ty)) {
                (Type::Array { elem, .. }, _) => QualType {
                    ty: Type::Pointer(elem.clone()),
                    ..p.ty.clone()
                },
                (Type::Named(_), Type::Array { elem, .. }) => {
                    let mut elem = (**elem).clone();
                    elem.is_const |= p.ty.is_const;
                    QualType::new(Type::Pointer(Box::new(elem)))
                }
                _ => p.ty.clone(),
            };
            let adjusted = ty != p.ty;
            let sym = self.add_symbol(Symbol {
                name,
                ty,
                kind: SymKind::Param,
                storage: Storage::Auto,
                scope,
                span: p.span,
            });
            if adjusted {
                self.prog.array_params.insert(sym, p.ty.clone());
            }
            params.push(sym);
        }
        Ok(params)
    }

    fn function_def(&mut self, f: &ast::FunctionDef) -> R<()> {
        let specs = self.decl_specs(&f.specs, false)?;
        if !self.new_structs.is_empty() {
            return err(
                f.span,
                "a struct cannot be defined in a function's return type",
            );
        }
        let storage = match specs.storage {
            None | Some(ast::StorageClass::Extern) => Storage::Auto,
            Some(ast::StorageClass::Static) => Storage::Static,
            Some(_) => return err(f.specs.span, "invalid storage class for a function"),
        };
        let (name, derived) =
            self.declarator(specs.ty.clone(), &f.declarator, types::DeclCtx::Global)?;
        let Some((name, name_span)) = name else {
            return err(f.declarator.span, "function definition without a name");
        };
        let types::Derived::Function(sig) = derived else {
            return err(f.declarator.span, "expected a function declarator");
        };
        let system = self.is_system(f.span);
        let pid = self.declare_proc(
            &name,
            name_span,
            &sig,
            storage,
            specs.inline,
            &f.comments,
            system,
        )?;
        if self.prog.procs[pid.index()].body.is_some() {
            return err(name_span, format!("redefinition of '{name}'"));
        }
        let param_scope = self.new_scope(self.prog.global_scope);
        let params = self.param_symbols(&sig, param_scope, true)?;
        let body_scope = self.new_scope(param_scope);
        {
            let p = &mut self.prog.procs[pid.index()];
            p.params = params;
            p.scope = param_scope;
            p.storage = storage;
            p.is_inline = specs.inline;
            p.span = name_span;
            p.comments = f.comments.clone();
        }
        self.f = Some(FnState {
            proc: pid,
            ret: sig.ret.clone(),
            param_scope,
            body_scope,
            temp_scope: body_scope,
            temp_count: 0,
            loop_depth: 0,
            breakable_depth: 0,
        });
        let first_symbol = self.prog.symbols.len();
        let result = self.block(&f.body, Some(body_scope));
        self.f = None;
        self.rename_clashing_temps(first_symbol);
        self.scope = self.prog.global_scope;
        let mut body = result?;
        let mut next = 0;
        Self::renumber(&mut body.stmts, &mut next);
        let p = &mut self.prog.procs[pid.index()];
        p.body = Some(body);
        p.stmt_count = next;
        if !self.is_system(f.span) {
            self.push_item(ItemKind::Function(pid), f.span, f.comments.clone());
        }
        Ok(())
    }

    /// A temporary is named when it is made, from the names visible then;
    /// a variable of that name declared later in the function (`double
    /// aioli_tmp1;` in a file aioli wrote) would make the printed C declare
    /// it twice: such a temporary takes a name no symbol of the function
    /// has. `il/split`
    fn rename_clashing_temps(&mut self, first_symbol: usize) {
        let range = first_symbol..self.prog.symbols.len();
        let declared: std::collections::HashSet<String> = self.prog.symbols[range.clone()]
            .iter()
            .filter(|s| s.kind != SymKind::Temp)
            .map(|s| s.name.clone())
            .collect();
        for i in range {
            let sym = &self.prog.symbols[i];
            if sym.kind == SymKind::Temp && declared.contains(&sym.name) {
                self.rename_temp(SymId(i as u32));
            }
        }
    }

    /// Gives temporary `t` a name no visible variable, procedure or kept
    /// symbol of the function has, in place of its own.
    pub(super) fn rename_temp(&mut self, t: SymId) {
        let (old, scope) = {
            let s = &self.prog.symbols[t.index()];
            (s.name.clone(), s.scope)
        };
        let mut n = 0;
        let fresh = loop {
            let name = format!("aioli_tmp{n}");
            n += 1;
            if name != old
                && self.lookup_var(&name).is_none()
                && !self.proc_names.contains_key(&name)
                && !self.prog.symbols.iter().any(|s| s.name == name)
            {
                break name;
            }
        };
        let vars = &mut self.prog.scopes[scope.index()].vars;
        if vars.get(&old) == Some(&t) {
            vars.remove(&old);
            vars.insert(fresh.clone(), t);
        }
        self.prog.symbols[t.index()].name = fresh;
    }

    fn global_declaration(&mut self, d: &ast::Declaration) -> R<()> {
        let system = self.is_system(d.span);
        let is_typedef = matches!(d_storage(&d.specs), Some(ast::StorageClass::Typedef));
        self.new_structs.clear();
        self.new_enums.clear();
        let specs = self.decl_specs(&d.specs, is_typedef)?;
        let new_structs = std::mem::take(&mut self.new_structs);
        let new_enums = std::mem::take(&mut self.new_enums);
        let outer_struct = match &specs.ty.ty {
            Type::Struct(id) if new_structs.last() == Some(id) => Some(*id),
            _ => None,
        };
        let mut comments = Some(d.comments.clone());
        let mut take_comments = || comments.take().unwrap_or_default();
        if !system {
            for kind in new_enums {
                let c = take_comments();
                self.push_item(kind, d.span, c);
            }
            for id in &new_structs {
                if is_typedef && Some(*id) == outer_struct {
                    continue;
                }
                let c = take_comments();
                self.push_item(ItemKind::Struct(*id), d.span, c);
            }
        }
        if is_typedef {
            for (i, decl) in d.declarators.iter().enumerate() {
                if decl.init.is_some() {
                    return err(decl.declarator.span, "a typedef cannot have an initializer");
                }
                let (name, derived) =
                    self.declarator(specs.ty.clone(), &decl.declarator, types::DeclCtx::Global)?;
                let Some((name, span)) = name else {
                    return err(decl.declarator.span, "typedef without a name");
                };
                let types::Derived::Value(ty) = derived else {
                    return err(span, "function typedefs are not supported");
                };
                if i == 0
                    && let Some(id) = outer_struct
                    && ty.ty != Type::Struct(id)
                {
                    if self.prog.structs[id.index()].tag.is_none() {
                        return err(
                            span,
                            "an anonymous struct must be typedef'd by its own name first (`typedef struct {...} T;`)",
                        );
                    }
                    if !system {
                        let c = take_comments();
                        self.push_item(ItemKind::Struct(id), d.span, c);
                    }
                }
                if let Some(&old) = self.typedef_names.get(&name) {
                    if self.prog.typedefs[old.index()].ty != ty {
                        return err(span, format!("conflicting types for typedef '{name}'"));
                    }
                    continue;
                }
                if self.prog.scopes[0].vars.contains_key(&name)
                    || self.proc_names.contains_key(&name)
                {
                    return err(
                        span,
                        format!("'{name}' redeclared as a different kind of symbol"),
                    );
                }
                let tid = TypedefId(self.prog.typedefs.len() as u32);
                self.prog.typedefs.push(TypedefDef {
                    name: name.clone(),
                    ty,
                    span,
                });
                self.typedef_names.insert(name, tid);
                if !system {
                    let c = take_comments();
                    self.push_item(ItemKind::Typedef(tid), d.span, c);
                }
            }
            return Ok(());
        }
        let storage = match specs.storage {
            None => Storage::Auto,
            Some(ast::StorageClass::Extern) => Storage::Extern,
            Some(ast::StorageClass::Static) => Storage::Static,
            Some(_) => return err(d.specs.span, "invalid storage class at file scope"),
        };
        if !self.new_structs.is_empty() {
            return err(d.span, "internal error: struct defined inside a declarator");
        }
        let mut vars: Vec<Declarator> = Vec::new();
        for decl in &d.declarators {
            let (name, derived) =
                self.declarator(specs.ty.clone(), &decl.declarator, types::DeclCtx::Global)?;
            let Some((name, span)) = name else {
                return err(decl.declarator.span, "declaration without a name");
            };
            match derived {
                types::Derived::Function(sig) => {
                    if decl.init.is_some() {
                        return err(span, "a function declaration cannot have an initializer");
                    }
                    if !vars.is_empty() && !system {
                        let c = take_comments();
                        self.push_item(
                            ItemKind::Globals {
                                base: specs.ty.clone(),
                                storage,
                                vars: std::mem::take(&mut vars),
                            },
                            d.span,
                            c,
                        );
                    }
                    let pid = self.declare_proc(
                        &name,
                        span,
                        &sig,
                        storage,
                        specs.inline,
                        &d.comments,
                        system,
                    )?;
                    if !system {
                        let c = take_comments();
                        self.push_item(ItemKind::Prototype(pid), d.span, c);
                    }
                }
                types::Derived::Value(ty) => {
                    let declarator =
                        self.global_var(&name, span, ty, storage, decl.init.as_ref())?;
                    vars.push(declarator);
                }
            }
        }
        if !vars.is_empty() && !system {
            let c = take_comments();
            self.push_item(
                ItemKind::Globals {
                    base: specs.ty.clone(),
                    storage,
                    vars,
                },
                d.span,
                c,
            );
        }
        Ok(())
    }

    fn global_var(
        &mut self,
        name: &str,
        span: Span,
        mut ty: QualType,
        storage: Storage,
        init: Option<&ast::Initializer>,
    ) -> R<Declarator> {
        if self.proc_names.contains_key(name) || self.typedef_names.contains_key(name) {
            return err(
                span,
                format!("'{name}' redeclared as a different kind of symbol"),
            );
        }
        if matches!(self.resolve(&ty.ty), Type::Void) {
            return err(span, format!("variable '{name}' has type void"));
        }
        if let Type::Array { len: Some(l), .. } = &ty.ty
            && l.value.is_none()
        {
            return err(span, "array length is not a constant");
        }
        let init = match init {
            None => None,
            Some(i) => {
                let saved = self.forbid.replace("a global initializer");
                let mut fx = expr::Effects::default();
                let r = self.initializer(i, &mut ty, &mut fx);
                self.forbid = saved;
                Some(r?)
            }
        };
        let existing = self.prog.scopes[0].vars.get(name).copied();
        let sym = match existing {
            Some(old) => {
                let old_sym = &self.prog.symbols[old.index()];
                let compatible = self.same_type(&old_sym.ty, &ty)
                    || matches!((&old_sym.ty.ty, &ty.ty),
                        (Type::Array { elem: a, .. }, Type::Array { elem: b, .. }) if self.same_type(a, b));
                let both_defined = init.is_some() && self.initialized_globals.contains(&old);
                if !compatible || both_defined {
                    return err(span, format!("redefinition of '{name}'"));
                }
                let s = &mut self.prog.symbols[old.index()];
                if matches!(&ty.ty, Type::Array { len: Some(_), .. }) {
                    s.ty = ty;
                }
                if storage != Storage::Extern {
                    s.storage = storage;
                }
                old
            }
            None => self.add_symbol(Symbol {
                name: name.to_string(),
                ty,
                kind: SymKind::Global,
                storage,
                scope: self.prog.global_scope,
                span,
            }),
        };
        if init.is_some() {
            self.initialized_globals.insert(sym);
        }
        Ok(Declarator { sym, init })
    }
}

/// The storage class among declaration specifiers, if any.
fn d_storage(specs: &ast::DeclSpecs) -> Option<ast::StorageClass> {
    specs.items.iter().find_map(|s| match s {
        ast::DeclSpec::Storage(c, _) => Some(*c),
        _ => None,
    })
}
