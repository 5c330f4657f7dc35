//! The `--domain` language of CONTRACT §6, parsed into a [`Domain`].
//!
//! ```text
//! domain  := entry*                                  (separated by blanks)
//! entry   := key '=' value
//! key     := NAME ['[' size ']'] ('.' NAME)* ['[' size ']']
//! value   := NUMBER | '[' NUMBER ',' NUMBER ']'
//! size    := term (('+' | '-') term)*
//! term    := atom (('*' | '/') atom)*
//! atom    := INTEGER | NAME | '(' size ')'
//! ```
//!
//! Examples: `n=8` (an integer by value), `a=[0.1,0.2]` (a real drawn in a
//! closed range), `x[n*d]=[-2,2]` (an array of `n*d` elements),
//! `idx[m]=[0,9]` (integers), and the struct extension: `p.x=[0,1]` (a field
//! of a struct by value, or of the one struct a pointer points to),
//! `pts[n].x=[0,1]` (a field of each of `n` structs), `acc.samples[n]=[0,1]`
//! (a pointer field given a buffer of `n` elements), `s.inner.x=[0,1]`
//! (a field of a nested struct).
//!
//! This module only knows the syntax; what each entry means for a given
//! procedure is decided in `check::driver`, which knows the parameter types.

use std::collections::BTreeMap;
use std::fmt;

/// A problem with a domain: its syntax, or how it matches a procedure.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct DomainError {
    pub message: String,
}

impl DomainError {
    /// An error with the given message.
    pub fn new(message: impl Into<String>) -> DomainError {
        DomainError {
            message: message.into(),
        }
    }
}

/// An arithmetic operator of a size expression.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SizeOp {
    Add,
    Sub,
    Mul,
    Div,
}

/// An array size: an integer expression over the integer parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SizeExpr {
    Literal(i64),
    Param(String),
    Binary(SizeOp, Box<SizeExpr>, Box<SizeExpr>),
}

impl SizeExpr {
    /// Evaluates the expression with the given integer parameter values.
    /// Overflow, division by zero and unknown names are errors, never
    /// panics.
    pub fn eval(&self, ints: &BTreeMap<String, i64>) -> Result<i64, DomainError> {
        match self {
            SizeExpr::Literal(v) => Ok(*v),
            SizeExpr::Param(name) => ints.get(name).copied().ok_or_else(|| {
                DomainError::new(format!(
                    "size expression uses '{name}', which is not an integer parameter with a value"
                ))
            }),
            SizeExpr::Binary(op, l, r) => {
                let (a, b) = (l.eval(ints)?, r.eval(ints)?);
                let value = match op {
                    SizeOp::Add => a.checked_add(b),
                    SizeOp::Sub => a.checked_sub(b),
                    SizeOp::Mul => a.checked_mul(b),
                    SizeOp::Div => {
                        if b == 0 {
                            return Err(DomainError::new(format!(
                                "size expression '{self}' divides by zero"
                            )));
                        }
                        a.checked_div(b)
                    }
                };
                value.ok_or_else(|| DomainError::new(format!("size expression '{self}' overflows")))
            }
        }
    }

    /// The names of the parameters the expression reads.
    pub fn params(&self) -> Vec<&str> {
        let mut out = Vec::new();
        self.collect_params(&mut out);
        out
    }

    fn collect_params<'a>(&'a self, out: &mut Vec<&'a str>) {
        match self {
            SizeExpr::Literal(_) => {}
            SizeExpr::Param(p) => out.push(p),
            SizeExpr::Binary(_, l, r) => {
                l.collect_params(out);
                r.collect_params(out);
            }
        }
    }
}

impl fmt::Display for SizeExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SizeExpr::Literal(v) => write!(f, "{v}"),
            SizeExpr::Param(p) => write!(f, "{p}"),
            SizeExpr::Binary(op, l, r) => {
                let sym = match op {
                    SizeOp::Add => "+",
                    SizeOp::Sub => "-",
                    SizeOp::Mul => "*",
                    SizeOp::Div => "/",
                };
                write!(f, "({l}{sym}{r})")
            }
        }
    }
}

/// A number as written: integers are kept exact, so that integer parameters
/// and integer arrays can insist on them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Number {
    Int(i64),
    Real(f64),
}

impl Number {
    /// The value as a real.
    pub fn as_f64(self) -> f64 {
        match self {
            Number::Int(v) => v as f64,
            Number::Real(v) => v,
        }
    }

    /// The value as an integer, when it is one.
    pub fn as_i64(self) -> Option<i64> {
        match self {
            Number::Int(v) => Some(v),
            Number::Real(_) => None,
        }
    }
}

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Number::Int(v) => write!(f, "{v}"),
            Number::Real(v) => write!(f, "{v}"),
        }
    }
}

/// The right-hand side of an entry.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ValueSpec {
    /// `n=8`: one value.
    Single(Number),
    /// `x=[lo,hi]`: values drawn uniformly in the closed range.
    Range { lo: Number, hi: Number },
}

impl fmt::Display for ValueSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ValueSpec::Single(n) => write!(f, "{n}"),
            ValueSpec::Range { lo, hi } => write!(f, "[{lo},{hi}]"),
        }
    }
}

/// One `key=value` entry.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// The parameter the entry is about.
    pub param: String,
    /// `x[size]`: the number of elements the parameter points to.
    pub count: Option<SizeExpr>,
    /// `p.a.b`: the path of fields inside a struct parameter.
    pub fields: Vec<String>,
    /// `p.f[size]`: the number of elements of a pointer field.
    pub field_count: Option<SizeExpr>,
    pub value: ValueSpec,
}

impl Entry {
    /// The key as written, without the value (`pts[n].x`).
    pub fn key(&self) -> String {
        let mut s = self.param.clone();
        if let Some(c) = &self.count {
            s.push_str(&format!("[{}]", strip_outer_parens(c)));
        }
        for f in &self.fields {
            s.push('.');
            s.push_str(f);
        }
        if let Some(c) = &self.field_count {
            s.push_str(&format!("[{}]", strip_outer_parens(c)));
        }
        s
    }
}

fn strip_outer_parens(e: &SizeExpr) -> String {
    let s = e.to_string();
    match s.strip_prefix('(').and_then(|t| t.strip_suffix(')')) {
        Some(inner) if matches!(e, SizeExpr::Binary(..)) => inner.to_string(),
        _ => s,
    }
}

/// A parsed domain: the entries in the order written.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Domain {
    pub entries: Vec<Entry>,
}

impl Domain {
    /// Parses a domain string; the error names the column and what was
    /// expected.
    pub fn parse(text: &str) -> Result<Domain, DomainError> {
        let mut p = Parser {
            text,
            chars: text.char_indices().collect(),
            pos: 0,
        };
        let mut entries = Vec::new();
        loop {
            p.skip_blanks();
            if p.at_end() {
                break;
            }
            entries.push(p.entry()?);
            if !p.at_end() && !p.peek().is_some_and(char::is_whitespace) {
                return Err(p.error("expected a blank between entries"));
            }
        }
        let domain = Domain { entries };
        domain.check_duplicates()?;
        Ok(domain)
    }

    /// The entries about one parameter.
    pub fn entries_for<'a>(&'a self, param: &'a str) -> impl Iterator<Item = &'a Entry> + 'a {
        self.entries.iter().filter(move |e| e.param == param)
    }

    fn check_duplicates(&self) -> Result<(), DomainError> {
        let mut seen = BTreeMap::new();
        for e in &self.entries {
            let key = (e.param.clone(), e.fields.clone());
            if seen.insert(key, ()).is_some() {
                return Err(DomainError::new(format!(
                    "domain gives '{}' twice",
                    e.key()
                )));
            }
        }
        Ok(())
    }
}

struct Parser<'a> {
    text: &'a str,
    chars: Vec<(usize, char)>,
    pos: usize,
}

impl Parser<'_> {
    fn at_end(&self) -> bool {
        self.pos >= self.chars.len()
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).map(|&(_, c)| c)
    }

    fn skip_blanks(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.pos += 1;
        }
    }

    fn error(&self, what: &str) -> DomainError {
        let found = match self.peek() {
            Some(c) => format!("'{c}'"),
            None => "the end".to_string(),
        };
        DomainError::new(format!(
            "domain syntax error at column {}: {what}, found {found} in '{}'",
            self.pos + 1,
            self.text
        ))
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: char) -> Result<(), DomainError> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(self.error(&format!("expected '{c}'")))
        }
    }

    fn name(&mut self) -> Result<String, DomainError> {
        let start = self.pos;
        match self.peek() {
            Some(c) if c.is_ascii_alphabetic() || c == '_' => self.pos += 1,
            _ => return Err(self.error("expected a name")),
        }
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            self.pos += 1;
        }
        Ok(self.chars[start..self.pos]
            .iter()
            .map(|&(_, c)| c)
            .collect())
    }

    fn entry(&mut self) -> Result<Entry, DomainError> {
        let param = self.name()?;
        let mut count = None;
        if self.eat('[') {
            count = Some(self.size()?);
            self.expect(']')?;
        }
        let mut fields = Vec::new();
        while self.eat('.') {
            fields.push(self.name()?);
        }
        let mut field_count = None;
        if !fields.is_empty() && self.eat('[') {
            field_count = Some(self.size()?);
            self.expect(']')?;
        }
        self.expect('=')?;
        let value = if self.eat('[') {
            self.skip_blanks();
            let lo = self.number()?;
            self.skip_blanks();
            self.expect(',')?;
            self.skip_blanks();
            let hi = self.number()?;
            self.skip_blanks();
            self.expect(']')?;
            if lo.as_f64() > hi.as_f64() {
                return Err(DomainError::new(format!(
                    "empty range [{lo},{hi}] for '{param}': the lower bound is above the upper one"
                )));
            }
            ValueSpec::Range { lo, hi }
        } else {
            ValueSpec::Single(self.number()?)
        };
        Ok(Entry {
            param,
            count,
            fields,
            field_count,
            value,
        })
    }

    fn number(&mut self) -> Result<Number, DomainError> {
        let start = self.pos;
        if matches!(self.peek(), Some('-' | '+')) {
            self.pos += 1;
        }
        let mut is_real = false;
        while let Some(c) = self.peek() {
            match c {
                '0'..='9' => {}
                '.' => is_real = true,
                'e' | 'E' => {
                    is_real = true;
                    if matches!(self.chars.get(self.pos + 1), Some((_, '-' | '+'))) {
                        self.pos += 1;
                    }
                }
                _ => break,
            }
            self.pos += 1;
        }
        let text: String = self.chars[start..self.pos]
            .iter()
            .map(|&(_, c)| c)
            .collect();
        if !is_real && let Ok(v) = text.parse::<i64>() {
            return Ok(Number::Int(v));
        }
        match text.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(Number::Real(v)),
            _ => {
                self.pos = start;
                Err(self.error("expected a number"))
            }
        }
    }

    fn size(&mut self) -> Result<SizeExpr, DomainError> {
        let mut lhs = self.term()?;
        loop {
            let op = if self.eat('+') {
                SizeOp::Add
            } else if self.eat('-') {
                SizeOp::Sub
            } else {
                return Ok(lhs);
            };
            let rhs = self.term()?;
            lhs = SizeExpr::Binary(op, Box::new(lhs), Box::new(rhs));
        }
    }

    fn term(&mut self) -> Result<SizeExpr, DomainError> {
        let mut lhs = self.atom()?;
        loop {
            let op = if self.eat('*') {
                SizeOp::Mul
            } else if self.eat('/') {
                SizeOp::Div
            } else {
                return Ok(lhs);
            };
            let rhs = self.atom()?;
            lhs = SizeExpr::Binary(op, Box::new(lhs), Box::new(rhs));
        }
    }

    fn atom(&mut self) -> Result<SizeExpr, DomainError> {
        match self.peek() {
            Some('(') => {
                self.pos += 1;
                let e = self.size()?;
                self.expect(')')?;
                Ok(e)
            }
            Some(c) if c.is_ascii_digit() => {
                let start = self.pos;
                while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                    self.pos += 1;
                }
                let text: String = self.chars[start..self.pos]
                    .iter()
                    .map(|&(_, c)| c)
                    .collect();
                text.parse::<i64>()
                    .map(SizeExpr::Literal)
                    .map_err(|_| self.error("integer literal too large in a size"))
            }
            Some(c) if c.is_ascii_alphabetic() || c == '_' => Ok(SizeExpr::Param(self.name()?)),
            _ => Err(self.error("expected an integer, a parameter name or '(' in a size")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(pairs: &[(&str, i64)]) -> BTreeMap<String, i64> {
        pairs.iter().map(|&(k, v)| (k.to_string(), v)).collect()
    }

    #[test]
    fn contract_example_parses() {
        let d = Domain::parse("n=50 x[n]=[-2,2] w[n]=[0.5,1.5] a=[0.1,0.2] s[1]=[0,0]").unwrap();
        assert_eq!(d.entries.len(), 5);
        assert_eq!(d.entries[0].param, "n");
        assert_eq!(d.entries[0].value, ValueSpec::Single(Number::Int(50)));
        assert_eq!(d.entries[1].count, Some(SizeExpr::Param("n".into())));
        assert_eq!(
            d.entries[2].value,
            ValueSpec::Range {
                lo: Number::Real(0.5),
                hi: Number::Real(1.5)
            }
        );
        assert_eq!(d.entries[4].count, Some(SizeExpr::Literal(1)));
    }

    #[test]
    fn size_expressions_follow_precedence() {
        let d = Domain::parse("x[2+n*(d-1)/2]=[0,1]").unwrap();
        let size = d.entries[0].count.as_ref().unwrap();
        assert_eq!(size.eval(&ints(&[("n", 4), ("d", 3)])).unwrap(), 6);
        assert_eq!(size.params(), vec!["n", "d"]);
        assert_eq!(d.entries[0].key(), "x[2+((n*(d-1))/2)]");
    }

    #[test]
    fn struct_extension_parses() {
        let d = Domain::parse("pts[n].x=[0,1] acc.samples[n]=[-1,1] s.inner.y=2.5 acc.count=0")
            .unwrap();
        let e = &d.entries[0];
        assert_eq!(e.param, "pts");
        assert_eq!(e.fields, vec!["x".to_string()]);
        assert!(e.count.is_some() && e.field_count.is_none());
        let e = &d.entries[1];
        assert!(e.count.is_none());
        assert_eq!(e.field_count, Some(SizeExpr::Param("n".into())));
        assert_eq!(
            d.entries[2].fields,
            vec!["inner".to_string(), "y".to_string()]
        );
        assert_eq!(d.entries[2].value, ValueSpec::Single(Number::Real(2.5)));
        assert_eq!(d.entries[1].key(), "acc.samples[n]");
    }

    #[test]
    fn numbers_keep_integers_exact() {
        let d = Domain::parse("a=[-1e-3,+2E2] k=-7 i=[0,9]").unwrap();
        assert_eq!(
            d.entries[0].value,
            ValueSpec::Range {
                lo: Number::Real(-1e-3),
                hi: Number::Real(200.0)
            }
        );
        assert_eq!(d.entries[1].value, ValueSpec::Single(Number::Int(-7)));
        assert_eq!(
            d.entries[2].value,
            ValueSpec::Range {
                lo: Number::Int(0),
                hi: Number::Int(9)
            }
        );
    }

    #[test]
    fn empty_domain_is_allowed() {
        assert!(Domain::parse("  ").unwrap().entries.is_empty());
    }

    #[test]
    fn syntax_errors_are_located() {
        for (text, needle) in [
            ("x[n=[0,1]", "column 4"),
            ("x=[0,1", "expected ']'"),
            ("x=", "expected a number"),
            ("=3", "expected a name"),
            ("x[]=[0,1]", "in a size"),
            ("a=[1,0]", "empty range"),
            ("a=1b=2", "blank between entries"),
            ("a=nan", "expected a number"),
            ("a=1e999", "expected a number"),
            ("x[99999999999999999999]=[0,1]", "too large"),
            ("a=1 a=2", "twice"),
            ("p.", "expected a name"),
        ] {
            let err = Domain::parse(text).unwrap_err();
            assert!(
                err.message.contains(needle),
                "{text:?}: {} does not contain {needle:?}",
                err.message
            );
        }
    }

    #[test]
    fn evaluation_errors_do_not_panic() {
        let d = Domain::parse("x[n/(m-m)]=[0,1] y[q]=[0,1] z[n*n*n*n*n]=[0,1]").unwrap();
        let env = ints(&[("n", 1 << 20), ("m", 3)]);
        assert!(
            d.entries[0]
                .count
                .as_ref()
                .unwrap()
                .eval(&env)
                .unwrap_err()
                .message
                .contains("zero")
        );
        assert!(
            d.entries[1]
                .count
                .as_ref()
                .unwrap()
                .eval(&env)
                .unwrap_err()
                .message
                .contains("'q'")
        );
        assert!(
            d.entries[2]
                .count
                .as_ref()
                .unwrap()
                .eval(&env)
                .unwrap_err()
                .message
                .contains("overflows")
        );
    }
}
