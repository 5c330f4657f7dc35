//! The concrete syntax of rule files (`rules/README.md` states it for
//! users). A file is a sequence of rules and derivative entries:
//!
//! ```text
//! # comment to end of line
//! rule tangent/assign-live-diff
//!   match   instr (assign ?REF ?EXPR)
//!   when    isLiveForDiff, isDiff(?REF), isActiveAfter(?REF)
//!   premise ?REF -ref-> ?REFD
//!   premise ?EXPR -expr-> ?EXPRD
//!   yield   (seq (assign ?REFD ?EXPRD) (same))
//!
//! derivative deriv/sin (sin ?X) : (cos ?X)
//! ```
//!
//! Patterns and templates are S-expressions in the vocabulary of
//! `spec/il-sexpr.md`: `?NAME` is a variable, `_` matches anything, `()` is
//! the empty list and `(?HEAD . ?TAIL)` splits a list.

use super::{Derivative, Guard, Pat, Premise, Rule, RuleError, Tmpl};

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Open,
    Close,
    Dot,
    Comma,
    Bang,
    Colon,
    Arrow(String),
    Var(String),
    Num(f64),
    Word(String),
}

struct Lexed {
    toks: Vec<(Tok, usize)>,
}

fn lex(file: &str, text: &str) -> Result<Lexed, RuleError> {
    let mut toks = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line_no = n + 1;
        let code = line.split('#').next().unwrap_or("");
        let chars: Vec<char> = code.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if c.is_whitespace() {
                i += 1;
                continue;
            }
            let simple = match c {
                '(' => Some(Tok::Open),
                ')' => Some(Tok::Close),
                ',' => Some(Tok::Comma),
                '!' => Some(Tok::Bang),
                ':' => Some(Tok::Colon),
                _ => None,
            };
            if let Some(t) = simple {
                toks.push((t, line_no));
                i += 1;
                continue;
            }
            let start = i;
            while i < chars.len() && !chars[i].is_whitespace() && !"(),!:".contains(chars[i]) {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            let tok = if word == "." {
                Tok::Dot
            } else if let Some(rel) = word.strip_prefix('-').and_then(|w| w.strip_suffix("->")) {
                if rel.is_empty() {
                    return Err(RuleError::new(
                        file,
                        line_no,
                        "an arrow names its relation: -expr->",
                    ));
                }
                Tok::Arrow(rel.to_string())
            } else if let Some(v) = word.strip_prefix('?') {
                if v.is_empty() || !v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    return Err(RuleError::new(
                        file,
                        line_no,
                        format!("bad variable '{word}'"),
                    ));
                }
                Tok::Var(v.to_string())
            } else if let Ok(x) = word.parse::<f64>() {
                Tok::Num(x)
            } else {
                Tok::Word(word)
            };
            toks.push((tok, line_no));
        }
    }
    Ok(Lexed { toks })
}

struct Parser<'a> {
    file: &'a str,
    toks: Vec<(Tok, usize)>,
    pos: usize,
}

const CLAUSES: &[&str] = &["rule", "derivative", "match", "when", "premise", "yield"];

impl Parser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.0)
    }
    fn line(&self) -> usize {
        self.toks
            .get(self.pos)
            .or(self.toks.last())
            .map(|t| t.1)
            .unwrap_or(1)
    }
    fn err(&self, msg: impl Into<String>) -> RuleError {
        RuleError::new(self.file, self.line(), msg)
    }
    fn next(&mut self) -> Option<Tok> {
        let t = self.toks.get(self.pos).map(|t| t.0.clone());
        self.pos += 1;
        t
    }
    fn at_clause(&self) -> bool {
        matches!(self.peek(), Some(Tok::Word(w)) if CLAUSES.contains(&w.as_str()))
    }
    fn word(&mut self, what: &str) -> Result<String, RuleError> {
        match self.next() {
            Some(Tok::Word(w)) => Ok(w),
            _ => {
                self.pos -= 1;
                Err(self.err(format!("expected {what}")))
            }
        }
    }

    fn pattern(&mut self) -> Result<Pat, RuleError> {
        match self.next() {
            Some(Tok::Var(v)) => Ok(Pat::Var(v)),
            Some(Tok::Word(w)) if w == "_" => Ok(Pat::Wild),
            Some(Tok::Word(w)) => Ok(Pat::Atom(w)),
            Some(Tok::Num(x)) => Ok(Pat::Num(x)),
            Some(Tok::Open) => {
                if self.peek() == Some(&Tok::Close) {
                    self.pos += 1;
                    return Ok(Pat::Nil);
                }
                let is_node = matches!(self.peek(), Some(Tok::Word(w)) if w != "_");
                if !is_node {
                    let head = self.pattern()?;
                    if self.next() != Some(Tok::Dot) {
                        self.pos -= 1;
                        return Err(self.err("expected '.' in a list pattern (HEAD . TAIL)"));
                    }
                    let tail = self.pattern()?;
                    self.expect_close()?;
                    return Ok(Pat::Cons(Box::new(head), Box::new(tail)));
                }
                let head = self.word("a node name after '('")?;
                let mut kids = Vec::new();
                while self.peek() != Some(&Tok::Close) {
                    if self.peek().is_none() || self.at_clause() {
                        return Err(self.err(format!("unclosed pattern '({head}'")));
                    }
                    kids.push(self.pattern()?);
                }
                self.pos += 1;
                Ok(Pat::Node(head, kids))
            }
            _ => {
                self.pos = self.pos.saturating_sub(1);
                Err(self.err("expected a pattern"))
            }
        }
    }

    fn expect_close(&mut self) -> Result<(), RuleError> {
        match self.next() {
            Some(Tok::Close) => Ok(()),
            _ => {
                self.pos -= 1;
                Err(self.err("expected ')'"))
            }
        }
    }

    fn template(&mut self) -> Result<Tmpl, RuleError> {
        let line = self.line();
        match self.next() {
            Some(Tok::Var(v)) => Ok(Tmpl::Var(v)),
            Some(Tok::Word(w)) => Ok(Tmpl::Atom(w)),
            Some(Tok::Num(x)) => Ok(Tmpl::Num(x)),
            Some(Tok::Open) => {
                if self.peek() == Some(&Tok::Close) {
                    self.pos += 1;
                    return Ok(Tmpl::Node("list".into(), Vec::new(), line));
                }
                let head = self.word("a constructor name after '('")?;
                let mut kids = Vec::new();
                while self.peek() != Some(&Tok::Close) {
                    if self.peek().is_none() || self.at_clause() {
                        return Err(self.err(format!("unclosed template '({head}'")));
                    }
                    kids.push(self.template()?);
                }
                self.pos += 1;
                Ok(Tmpl::Node(head, kids, line))
            }
            _ => {
                self.pos = self.pos.saturating_sub(1);
                Err(self.err("expected a template"))
            }
        }
    }

    fn guards(&mut self, out: &mut Vec<Guard>) -> Result<(), RuleError> {
        loop {
            let line = self.line();
            let negated = if self.peek() == Some(&Tok::Bang) {
                self.pos += 1;
                true
            } else {
                false
            };
            let name = self.word("a predicate name")?;
            let mut args = Vec::new();
            if self.peek() == Some(&Tok::Open) {
                self.pos += 1;
                while self.peek() != Some(&Tok::Close) {
                    if self.peek() == Some(&Tok::Comma) {
                        self.pos += 1;
                        continue;
                    }
                    if self.peek().is_none() || self.at_clause() {
                        return Err(self.err(format!("unclosed arguments of '{name}'")));
                    }
                    args.push(self.template()?);
                }
                self.pos += 1;
            }
            out.push(Guard {
                negated,
                name,
                args,
                line,
            });
            if self.peek() == Some(&Tok::Comma) {
                self.pos += 1;
                continue;
            }
            return Ok(());
        }
    }

    fn rule(&mut self) -> Result<Rule, RuleError> {
        let line = self.line();
        let id = self.word("a rule ID after 'rule'")?;
        check_id(self.file, line, &id)?;
        let mut relation = None;
        let mut pattern = None;
        let mut guards = Vec::new();
        let mut premises = Vec::new();
        let mut yields = Vec::new();
        while let Some(Tok::Word(w)) = self.peek().cloned() {
            if w == "rule" || w == "derivative" {
                break;
            }
            self.pos += 1;
            match w.as_str() {
                "match" => {
                    if pattern.is_some() {
                        return Err(self.err(format!("rule {id} has two 'match' clauses")));
                    }
                    relation = Some(self.word("a relation name after 'match'")?);
                    pattern = Some(self.pattern()?);
                }
                "when" => self.guards(&mut guards)?,
                "premise" => {
                    let pline = self.line();
                    let input = self.template()?;
                    let relation = match self.next() {
                        Some(Tok::Arrow(r)) => r,
                        _ => {
                            return Err(RuleError::new(
                                self.file,
                                pline,
                                "a premise reads INPUT -relation-> OUTPUT",
                            ));
                        }
                    };
                    let mut outputs = Vec::new();
                    match self.next() {
                        Some(Tok::Var(v)) => outputs.push(v),
                        Some(Tok::Open) => {
                            while let Some(Tok::Var(v)) = self.peek().cloned() {
                                self.pos += 1;
                                outputs.push(v);
                            }
                            self.expect_close()?;
                        }
                        _ => {
                            return Err(RuleError::new(
                                self.file,
                                pline,
                                "a premise's output is ?VAR or (?A ?B ...)",
                            ));
                        }
                    }
                    premises.push(Premise {
                        input,
                        relation,
                        outputs,
                        line: pline,
                    });
                }
                "yield" => {
                    while !self.at_clause() && self.peek().is_some() {
                        yields.push(self.template()?);
                    }
                }
                other => return Err(self.err(format!("unknown clause '{other}'"))),
            }
        }
        if let Some(t) = self.peek()
            && !matches!(t, Tok::Word(_))
        {
            return Err(self.err("expected a clause keyword (match, when, premise, yield)"));
        }
        let (Some(relation), Some(pattern)) = (relation, pattern) else {
            return Err(RuleError::new(
                self.file,
                line,
                format!("rule {id} has no 'match' clause"),
            ));
        };
        if yields.is_empty() {
            return Err(RuleError::new(
                self.file,
                line,
                format!("rule {id} has no 'yield' clause"),
            ));
        }
        Ok(Rule {
            id,
            relation,
            pattern,
            guards,
            premises,
            yields,
            file: self.file.to_string(),
            line,
        })
    }

    fn derivative(&mut self) -> Result<Derivative, RuleError> {
        let line = self.line();
        let id = self.word("an ID after 'derivative'")?;
        check_id(self.file, line, &id)?;
        let Pat::Node(function, params) = self.pattern()? else {
            return Err(RuleError::new(
                self.file,
                line,
                "a derivative entry starts with (FUNCTION ?ARG ...)",
            ));
        };
        let mut names = Vec::new();
        for p in params {
            match p {
                Pat::Var(v) => names.push(v),
                _ => {
                    return Err(RuleError::new(
                        self.file,
                        line,
                        "the arguments of a derivative entry are variables",
                    ));
                }
            }
        }
        if self.next() != Some(Tok::Colon) {
            return Err(RuleError::new(
                self.file,
                line,
                "expected ':' before the partial derivatives",
            ));
        }
        let mut partials = Vec::new();
        while !self.at_clause() && self.peek().is_some() {
            if self.peek() == Some(&Tok::Comma) {
                self.pos += 1;
                continue;
            }
            partials.push(self.template()?);
        }
        // `guarded`, then optionally one condition per partial: where it
        // holds, the adjoint takes that partial as zero (the point where it
        // is infinite or undefined, `adjoint/intrinsic`).
        let at = partials
            .iter()
            .position(|t| matches!(t, Tmpl::Atom(a) if a == "guarded"));
        let guarded = at.is_some();
        let singular = match at {
            Some(i) => {
                let conds = partials.split_off(i + 1);
                partials.pop();
                conds
            }
            None => Vec::new(),
        };
        if !singular.is_empty() && singular.len() != partials.len() {
            return Err(RuleError::new(
                self.file,
                line,
                format!(
                    "{function} has {} partial derivatives but {} conditions after 'guarded' (one per partial, or none)",
                    partials.len(),
                    singular.len()
                ),
            ));
        }
        if partials.len() != names.len() {
            return Err(RuleError::new(
                self.file,
                line,
                format!(
                    "{function} has {} arguments but {} partial derivatives",
                    names.len(),
                    partials.len()
                ),
            ));
        }
        Ok(Derivative {
            id,
            function,
            params: names,
            partials,
            guarded,
            singular,
            file: self.file.to_string(),
            line,
        })
    }
}

fn check_id(file: &str, line: usize, id: &str) -> Result<(), RuleError> {
    let ok = |p: &str| {
        !p.is_empty()
            && p.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    };
    match id.split_once('/') {
        Some((f, n)) if ok(f) && ok(n) => Ok(()),
        _ => Err(RuleError::new(
            file,
            line,
            format!("'{id}' is not an ID of the form family/name"),
        )),
    }
}

/// Parses one rule file.
pub fn parse_file(file: &str, text: &str) -> Result<(Vec<Rule>, Vec<Derivative>), RuleError> {
    let lexed = lex(file, text)?;
    let mut p = Parser {
        file,
        toks: lexed.toks,
        pos: 0,
    };
    let mut rules = Vec::new();
    let mut derivs = Vec::new();
    while let Some(t) = p.next() {
        match t {
            Tok::Word(w) if w == "rule" => rules.push(p.rule()?),
            Tok::Word(w) if w == "derivative" => derivs.push(p.derivative()?),
            _ => {
                p.pos -= 1;
                return Err(p.err("expected 'rule' or 'derivative'"));
            }
        }
    }
    Ok((rules, derivs))
}
