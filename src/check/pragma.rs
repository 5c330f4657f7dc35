//! The configuration line that starts every test fixture.
//!
//! `// aioli: head=NAME domain='...' flags='...'` for valid inputs and
//! `// aioli: error=LINE:COL 'text'` for invalid ones (see
//! `tests/fixtures/front/README.md`). Values are bare words, or strings in
//! single or double quotes without escapes (double quotes let a message
//! contain `'`).

use super::domain::DomainError;

/// What a valid fixture asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FixtureConfig {
    pub head: String,
    /// The domain text, to be parsed with `Domain::parse`.
    pub domain: String,
    /// `-I` / `-D` options, split on blanks, in order.
    pub flags: Vec<String>,
}

/// The error an invalid fixture must produce.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExpectedError {
    /// 1-based line and column.
    pub line: usize,
    pub col: usize,
    /// Words the message must contain.
    pub text: String,
}

/// A parsed configuration line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pragma {
    Valid(FixtureConfig),
    Invalid(ExpectedError),
}

/// Parses the first line of a fixture.
pub fn parse_pragma(line: &str) -> Result<Pragma, DomainError> {
    let rest = line
        .trim()
        .strip_prefix("//")
        .map(str::trim_start)
        .and_then(|r| r.strip_prefix("aioli:"))
        .ok_or_else(|| DomainError::new("the first line is not an '// aioli:' pragma"))?;
    let pairs = key_values(rest)?;
    let get = |key: &str| pairs.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone());
    if let Some(location) = get("error") {
        // `error=L:C 'text'`: the text is the one unnamed value.
        let (line, col) = location
            .split_once(':')
            .and_then(|(l, c)| Some((l.parse().ok()?, c.parse().ok()?)))
            .ok_or_else(|| DomainError::new(format!("bad error location '{location}'")))?;
        let text = get("").unwrap_or_default();
        return Ok(Pragma::Invalid(ExpectedError { line, col, text }));
    }
    let head = get("head").ok_or_else(|| DomainError::new("pragma has no head="))?;
    let domain = get("domain").unwrap_or_default();
    let flags = get("flags")
        .map(|f| f.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default();
    Ok(Pragma::Valid(FixtureConfig {
        head,
        domain,
        flags,
    }))
}

/// Splits `k=v k='quoted v' 'bare quoted'` into pairs; a quoted value with
/// no key gets the empty key.
fn key_values(text: &str) -> Result<Vec<(String, String)>, DomainError> {
    let mut out = Vec::new();
    let mut rest = text.trim_start();
    while !rest.is_empty() {
        let (key, after_key) = match rest.find(['=', ' ', '\'', '"']) {
            Some(i) if rest.as_bytes()[i] == b'=' => (&rest[..i], &rest[i + 1..]),
            _ => ("", rest),
        };
        let quote = after_key.chars().next().filter(|c| *c == '\'' || *c == '"');
        let (value, after_value) = if let Some(q) = quote {
            let quoted = &after_key[1..];
            let end = quoted.find(q).ok_or_else(|| {
                DomainError::new(format!("unterminated quote in pragma '{text}'"))
            })?;
            (&quoted[..end], &quoted[end + 1..])
        } else {
            let end = after_key
                .find(char::is_whitespace)
                .unwrap_or(after_key.len());
            (&after_key[..end], &after_key[end..])
        };
        if key.is_empty() && value.is_empty() {
            return Err(DomainError::new(format!("cannot read pragma '{text}'")));
        }
        out.push((key.to_string(), value.to_string()));
        rest = after_value.trim_start();
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_pragma() {
        let p = parse_pragma(
            "// aioli: head=kinetic_energy domain='n=4 v[n*3]=[-1,1]' flags='-DNDIM=3 -DUSE_DAMPING'",
        )
        .unwrap();
        assert_eq!(
            p,
            Pragma::Valid(FixtureConfig {
                head: "kinetic_energy".into(),
                domain: "n=4 v[n*3]=[-1,1]".into(),
                flags: vec!["-DNDIM=3".into(), "-DUSE_DAMPING".into()],
            })
        );
    }

    #[test]
    fn invalid_pragma() {
        let p = parse_pragma("// aioli: error=4:24 'unterminated string'").unwrap();
        assert_eq!(
            p,
            Pragma::Invalid(ExpectedError {
                line: 4,
                col: 24,
                text: "unterminated string".into()
            })
        );
    }

    #[test]
    fn double_quotes_allow_single_quotes_inside() {
        let p = parse_pragma("// aioli: error=7:1 \"found '}'\"").unwrap();
        assert_eq!(
            p,
            Pragma::Invalid(ExpectedError {
                line: 7,
                col: 1,
                text: "found '}'".into()
            })
        );
    }

    #[test]
    fn malformed_pragmas_are_errors() {
        assert!(parse_pragma("/* nothing */").is_err());
        assert!(parse_pragma("// aioli: domain='n=1'").is_err());
        assert!(parse_pragma("// aioli: head=f domain='n=1").is_err());
        assert!(parse_pragma("// aioli: error=x:1 'a'").is_err());
    }
}
