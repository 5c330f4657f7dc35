//! Flow graphs of basic blocks, derived from the structured IL (`il/flow`).
//!
//! The structured statement tree stays the source of truth: the
//! transformation rules are structural (§5.3–5.4 of the specification). The
//! data-flow analyses want a flow graph; this module builds one per
//! procedure on demand. Each basic block records the control structures that
//! enclose it (outermost first), so the structure stays recoverable from
//! the graph, and the statement that ends it when it branches.
//!
//! Invariants:
//! - block 0 is the entry, block 1 the exit (empty, no successors);
//! - a block's `stmts` are simple statements (no `If`, `Loop`, `Switch`,
//!   `Block`, jump) in execution order; a `for` loop's init statements end
//!   the block before the loop, its step statements form their own block;
//! - `succs` of a block ending with `Branch::If` are `[then, else]`, with
//!   `Branch::LoopTest` `[body, exit]`, with `Branch::Switch` one per case
//!   group in order, then the exit when there is no `default`;
//! - blocks that control cannot reach (after a `break`, say) are kept, with
//!   no predecessors.

use super::{LoopHeader, Procedure, Stmt, StmtId, StmtKind};

/// Index of a basic block in its [`FlowGraph`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BlockId(pub u32);

impl BlockId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// How control leaves a block with several successors.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Branch<'a> {
    /// The condition of this `If` statement decides.
    If(&'a Stmt),
    /// The condition of this loop decides (always true for `for(;;)`).
    LoopTest(&'a Stmt),
    /// The selector of this `Switch` decides.
    Switch(&'a Stmt),
    /// This `Return` statement leaves the procedure.
    Return(&'a Stmt),
}

/// A control structure enclosing a block, and which part of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Enclosing {
    IfThen(StmtId),
    IfElse(StmtId),
    LoopBody(StmtId),
    /// The loop test, or the step statements of a `for`.
    LoopControl(StmtId),
    SwitchCase(StmtId, usize),
}

#[derive(Clone, Debug, Default)]
pub struct BasicBlock<'a> {
    pub stmts: Vec<&'a Stmt>,
    pub branch: Option<Branch<'a>>,
    pub succs: Vec<BlockId>,
    pub preds: Vec<BlockId>,
    pub enclosing: Vec<Enclosing>,
}

/// The flow graph of one procedure.
#[derive(Clone, Debug)]
pub struct FlowGraph<'a> {
    pub blocks: Vec<BasicBlock<'a>>,
}

impl<'a> FlowGraph<'a> {
    pub const ENTRY: BlockId = BlockId(0);
    pub const EXIT: BlockId = BlockId(1);

    /// Builds the flow graph of a procedure with a body (an empty graph
    /// with just entry and exit for a prototype).
    pub fn build(proc: &'a Procedure) -> FlowGraph<'a> {
        let mut b = Builder {
            blocks: vec![BasicBlock::default(), BasicBlock::default()],
            enclosing: Vec::new(),
            jumps: Vec::new(),
        };
        let mut current = FlowGraph::ENTRY;
        if let Some(body) = &proc.body {
            current = b.stmts(&body.stmts, current);
        }
        b.edge(current, FlowGraph::EXIT);
        FlowGraph { blocks: b.blocks }
    }

    pub fn block(&self, id: BlockId) -> &BasicBlock<'a> {
        &self.blocks[id.index()]
    }

    /// Blocks in reverse post-order from the entry (unreachable blocks
    /// last, in index order): the efficient order for forward analyses.
    pub fn reverse_post_order(&self) -> Vec<BlockId> {
        let n = self.blocks.len();
        let mut seen = vec![false; n];
        let mut post = Vec::with_capacity(n);
        let mut stack = vec![(FlowGraph::ENTRY, 0usize)];
        seen[0] = true;
        while let Some((b, i)) = stack.pop() {
            let succs = &self.blocks[b.index()].succs;
            if i < succs.len() {
                stack.push((b, i + 1));
                let s = succs[i];
                if !seen[s.index()] {
                    seen[s.index()] = true;
                    stack.push((s, 0));
                }
            } else {
                post.push(b);
            }
        }
        post.reverse();
        for (i, s) in seen.iter().enumerate() {
            if !s {
                post.push(BlockId(i as u32));
            }
        }
        post
    }
}

/// Where `break` and `continue` go inside the innermost loop or switch.
struct JumpTargets {
    brk: BlockId,
    cont: Option<BlockId>,
}

struct Builder<'a> {
    blocks: Vec<BasicBlock<'a>>,
    enclosing: Vec<Enclosing>,
    jumps: Vec<JumpTargets>,
}

impl<'a> Builder<'a> {
    fn new_block(&mut self) -> BlockId {
        self.blocks.push(BasicBlock {
            enclosing: self.enclosing.clone(),
            ..BasicBlock::default()
        });
        BlockId(self.blocks.len() as u32 - 1)
    }

    fn edge(&mut self, from: BlockId, to: BlockId) {
        self.blocks[from.index()].succs.push(to);
        self.blocks[to.index()].preds.push(from);
    }

    /// Appends statements to `current`; returns the block control is in
    /// afterwards.
    fn stmts(&mut self, stmts: &'a [Stmt], mut current: BlockId) -> BlockId {
        for s in stmts {
            current = self.stmt(s, current);
        }
        current
    }

    /// A block for the part of a structure `enc`, entered from `from`.
    fn enter(&mut self, enc: Enclosing, from: BlockId) -> BlockId {
        self.enclosing.push(enc);
        let b = self.new_block();
        self.enclosing.pop();
        self.edge(from, b);
        b
    }

    fn stmt(&mut self, s: &'a Stmt, current: BlockId) -> BlockId {
        match &s.kind {
            StmtKind::Assign { .. }
            | StmtKind::Call { .. }
            | StmtKind::Decl { .. }
            | StmtKind::Alloc { .. }
            | StmtKind::Free { .. }
            | StmtKind::Empty
            | StmtKind::Discard(_) => {
                self.blocks[current.index()].stmts.push(s);
                current
            }
            StmtKind::Block(b) => self.stmts(&b.stmts, current),
            StmtKind::If { then, other, .. } => {
                self.blocks[current.index()].branch = Some(Branch::If(s));
                let then_entry = self.enter(Enclosing::IfThen(s.id), current);
                self.enclosing.push(Enclosing::IfThen(s.id));
                let then_exit = self.stmts(&then.stmts, then_entry);
                self.enclosing.pop();
                let join = self.new_block();
                match other {
                    Some(o) => {
                        let else_entry = self.enter(Enclosing::IfElse(s.id), current);
                        self.enclosing.push(Enclosing::IfElse(s.id));
                        let else_exit = self.stmts(&o.stmts, else_entry);
                        self.enclosing.pop();
                        self.edge(else_exit, join);
                    }
                    None => self.edge(current, join),
                }
                self.edge(then_exit, join);
                join
            }
            StmtKind::Loop { header, body } => {
                let (init, step): (&'a [Stmt], &'a [Stmt]) = match header {
                    LoopHeader::For { init, step, .. } => (init, step),
                    _ => (&[], &[]),
                };
                let current = self.stmts(init, current);
                self.enclosing.push(Enclosing::LoopControl(s.id));
                let test = self.new_block();
                let step_block = self.new_block();
                self.enclosing.pop();
                self.blocks[test.index()].branch = Some(Branch::LoopTest(s));
                let exit = self.new_block();
                let body_entry = self.enter(Enclosing::LoopBody(s.id), test);
                self.edge(test, exit);
                let is_do_while = matches!(header, LoopHeader::DoWhile { .. });
                if is_do_while {
                    self.edge(current, body_entry);
                } else {
                    self.edge(current, test);
                }
                self.jumps.push(JumpTargets {
                    brk: exit,
                    cont: Some(step_block),
                });
                self.enclosing.push(Enclosing::LoopBody(s.id));
                let body_exit = self.stmts(&body.stmts, body_entry);
                self.enclosing.pop();
                self.jumps.pop();
                self.edge(body_exit, step_block);
                self.enclosing.push(Enclosing::LoopControl(s.id));
                let step_exit = self.stmts(step, step_block);
                self.enclosing.pop();
                self.edge(step_exit, test);
                exit
            }
            StmtKind::Switch { cases, .. } => {
                self.blocks[current.index()].branch = Some(Branch::Switch(s));
                let exit = self.new_block();
                let entries: Vec<BlockId> = (0..cases.len())
                    .map(|i| self.enter(Enclosing::SwitchCase(s.id, i), current))
                    .collect();
                if !cases.iter().any(|c| c.labels.iter().any(Option::is_none)) {
                    self.edge(current, exit);
                }
                let cont = self.jumps.last().and_then(|j| j.cont);
                self.jumps.push(JumpTargets { brk: exit, cont });
                for (i, c) in cases.iter().enumerate() {
                    self.enclosing.push(Enclosing::SwitchCase(s.id, i));
                    let end = self.stmts(&c.body, entries[i]);
                    self.enclosing.pop();
                    // Falling off a case group's end enters the next one.
                    let next = entries.get(i + 1).copied().unwrap_or(exit);
                    self.edge(end, next);
                }
                self.jumps.pop();
                exit
            }
            StmtKind::Break | StmtKind::Continue => {
                let target = self.jumps.last().and_then(|j| {
                    if matches!(s.kind, StmtKind::Break) {
                        Some(j.brk)
                    } else {
                        j.cont
                    }
                });
                // Lowering guarantees a target; without one control stays.
                if let Some(t) = target {
                    self.edge(current, t);
                    self.new_block()
                } else {
                    current
                }
            }
            StmtKind::Return(_) => {
                self.blocks[current.index()].branch = Some(Branch::Return(s));
                self.edge(current, FlowGraph::EXIT);
                self.new_block()
            }
        }
    }
}

impl FlowGraph<'_> {
    /// A readable listing, one block per line:
    /// `B4 in loop-body#3: #5 #6 | if#7 -> B5 B6`.
    pub fn dump(&self) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        for (i, b) in self.blocks.iter().enumerate() {
            let _ = write!(out, "B{i}");
            if !b.enclosing.is_empty() {
                let parts: Vec<String> = b
                    .enclosing
                    .iter()
                    .map(|e| match e {
                        Enclosing::IfThen(s) => format!("then#{}", s.0),
                        Enclosing::IfElse(s) => format!("else#{}", s.0),
                        Enclosing::LoopBody(s) => format!("body#{}", s.0),
                        Enclosing::LoopControl(s) => format!("control#{}", s.0),
                        Enclosing::SwitchCase(s, c) => format!("case{c}#{}", s.0),
                    })
                    .collect();
                let _ = write!(out, " in {}", parts.join("/"));
            }
            let _ = write!(out, ":");
            for s in &b.stmts {
                let _ = write!(out, " #{}", s.id.0);
            }
            if let Some(br) = b.branch {
                let (kind, s) = match br {
                    Branch::If(s) => ("if", s),
                    Branch::LoopTest(s) => ("test", s),
                    Branch::Switch(s) => ("switch", s),
                    Branch::Return(s) => ("return", s),
                };
                let _ = write!(out, " | {kind}#{}", s.id.0);
            }
            let succs: Vec<String> = b.succs.iter().map(|s| format!("B{}", s.0)).collect();
            let _ = writeln!(out, " -> {}", succs.join(" "));
        }
        out
    }
}
