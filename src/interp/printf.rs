//! `printf`-family formatting, matching glibc's output for the conversions
//! scientific codes use: `%d %i %u %o %x %X %c %s %f %F %e %E %g %G %a %A %p
//! %%` with flags `-+ #0`, width, precision (including `*`) and length
//! modifiers (which only matter for how the argument was converted before).

use super::ErrorKind;
use super::value::Pointer;

/// An argument of a formatted print, after the default argument promotions.
#[derive(Clone, Copy, Debug)]
pub enum PrintArg {
    /// An integer, normalised to its C type.
    Int(i64),
    Real(f64),
    Ptr(Pointer),
}

#[derive(Default)]
struct Spec {
    left: bool,
    plus: bool,
    space: bool,
    alt: bool,
    zero: bool,
    width: usize,
    precision: Option<usize>,
}

/// Formats `fmt` with `args`; `read_str` reads the string a `%s` pointer
/// designates.
pub fn format(
    fmt: &str,
    args: &[PrintArg],
    read_str: &dyn Fn(Pointer) -> Result<String, ErrorKind>,
) -> Result<String, ErrorKind> {
    let mut out = String::new();
    let mut chars = fmt.chars().peekable();
    let mut next = args.iter();
    let mut take = |what: &str| {
        next.next()
            .copied()
            .ok_or_else(|| ErrorKind::Printf(format!("missing argument for {what}")))
    };
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut spec = Spec::default();
        while let Some(&f) = chars.peek() {
            match f {
                '-' => spec.left = true,
                '+' => spec.plus = true,
                ' ' => spec.space = true,
                '#' => spec.alt = true,
                '0' => spec.zero = true,
                _ => break,
            }
            chars.next();
        }
        if chars.peek() == Some(&'*') {
            chars.next();
            let w = int_arg(take("*")?)?;
            if w < 0 {
                spec.left = true;
            }
            spec.width = w.unsigned_abs() as usize;
        } else {
            spec.width = read_number(&mut chars);
        }
        if chars.peek() == Some(&'.') {
            chars.next();
            if chars.peek() == Some(&'*') {
                chars.next();
                let p = int_arg(take("*")?)?;
                spec.precision = if p < 0 { None } else { Some(p as usize) };
            } else {
                spec.precision = Some(read_number(&mut chars));
            }
        }
        // The width the integer argument is converted to: `int` unless a
        // length modifier says otherwise.
        let mut bits = 32;
        while let Some(&m) = chars.peek() {
            match m {
                'l' | 'L' | 'z' | 'j' | 't' | 'q' => bits = 64,
                'h' => bits = if bits == 16 { 8 } else { 16 },
                _ => break,
            }
            chars.next();
        }
        let narrow = |v: i64, signed: bool| -> i64 {
            if bits >= 64 {
                return v;
            }
            let shift = 64 - bits;
            if signed {
                (v << shift) >> shift
            } else {
                ((v as u64) << shift >> shift) as i64
            }
        };
        let conv = chars
            .next()
            .ok_or_else(|| ErrorKind::Printf("format ends inside a conversion".into()))?;
        let body = match conv {
            '%' => {
                out.push('%');
                continue;
            }
            'd' | 'i' => {
                let v = narrow(int_arg(take("%d")?)?, true);
                let digits = apply_int_precision(v.unsigned_abs().to_string(), &spec);
                let sign = sign_of(v < 0, &spec);
                pad_number(sign, "", &digits, &spec, spec.precision.is_none())
            }
            'u' | 'x' | 'X' | 'o' => {
                let v = narrow(int_arg(take("%u")?)?, false) as u64;
                let (digits, prefix) = match conv {
                    'u' => (v.to_string(), ""),
                    'x' => (format!("{v:x}"), if spec.alt && v != 0 { "0x" } else { "" }),
                    'X' => (format!("{v:X}"), if spec.alt && v != 0 { "0X" } else { "" }),
                    _ => (format!("{v:o}"), if spec.alt { "0" } else { "" }),
                };
                let digits = apply_int_precision(digits, &spec);
                pad_number("", prefix, &digits, &spec, spec.precision.is_none())
            }
            'c' => {
                let v = int_arg(take("%c")?)?;
                pad_text(&((v as u8) as char).to_string(), &spec)
            }
            's' => {
                let p = match take("%s")? {
                    PrintArg::Ptr(p) => p,
                    _ => return Err(ErrorKind::Printf("%s needs a string".into())),
                };
                let mut s = if p.is_null() {
                    "(null)".to_string()
                } else {
                    read_str(p)?
                };
                if let Some(n) = spec.precision {
                    s = s.chars().take(n).collect();
                }
                pad_text(&s, &spec)
            }
            'p' => {
                let p = match take("%p")? {
                    PrintArg::Ptr(p) => p,
                    PrintArg::Int(i) => Pointer {
                        alloc: 0,
                        offset: i,
                    },
                    PrintArg::Real(_) => {
                        return Err(ErrorKind::Printf("%p needs a pointer".into()));
                    }
                };
                let text = if p.is_null() {
                    "(nil)".to_string()
                } else {
                    // Not a real address: the allocation and offset, stable
                    // across runs.
                    format!("0x{:x}{:08x}", p.alloc, p.offset)
                };
                pad_text(&text, &spec)
            }
            'f' | 'F' | 'e' | 'E' | 'g' | 'G' | 'a' | 'A' => {
                let v = match take("%f")? {
                    PrintArg::Real(v) => v,
                    _ => return Err(ErrorKind::Printf(format!("%{conv} needs a real"))),
                };
                format_real(v, conv, &spec)
            }
            other => {
                return Err(ErrorKind::Printf(format!(
                    "conversion %{other} is not supported"
                )));
            }
        };
        out.push_str(&body);
    }
    Ok(out)
}

fn read_number(chars: &mut std::iter::Peekable<std::str::Chars>) -> usize {
    let mut n: usize = 0;
    while let Some(d) = chars.peek().and_then(|c| c.to_digit(10)) {
        n = n.saturating_mul(10).saturating_add(d as usize).min(1 << 20);
        chars.next();
    }
    n
}

fn int_arg(a: PrintArg) -> Result<i64, ErrorKind> {
    match a {
        PrintArg::Int(i) => Ok(i),
        _ => Err(ErrorKind::Printf(
            "integer conversion of a non-integer".into(),
        )),
    }
}

fn sign_of(negative: bool, spec: &Spec) -> &'static str {
    if negative {
        "-"
    } else if spec.plus {
        "+"
    } else if spec.space {
        " "
    } else {
        ""
    }
}

fn apply_int_precision(digits: String, spec: &Spec) -> String {
    match spec.precision {
        Some(0) if digits == "0" => String::new(),
        Some(p) if digits.len() < p => format!("{}{}", "0".repeat(p - digits.len()), digits),
        _ => digits,
    }
}

/// Pads `sign prefix digits` to the width, with zeros after the prefix when
/// the `0` flag applies.
fn pad_number(sign: &str, prefix: &str, digits: &str, spec: &Spec, zero_ok: bool) -> String {
    let len = sign.len() + prefix.len() + digits.len();
    if len >= spec.width {
        return format!("{sign}{prefix}{digits}");
    }
    let fill = spec.width - len;
    if spec.left {
        format!("{sign}{prefix}{digits}{}", " ".repeat(fill))
    } else if spec.zero && zero_ok {
        format!("{sign}{prefix}{}{digits}", "0".repeat(fill))
    } else {
        format!("{}{sign}{prefix}{digits}", " ".repeat(fill))
    }
}

fn pad_text(s: &str, spec: &Spec) -> String {
    let len = s.chars().count();
    if len >= spec.width {
        s.to_string()
    } else if spec.left {
        format!("{s}{}", " ".repeat(spec.width - len))
    } else {
        format!("{}{s}", " ".repeat(spec.width - len))
    }
}

fn format_real(v: f64, conv: char, spec: &Spec) -> String {
    let upper = conv.is_ascii_uppercase();
    let sign = sign_of(v.is_sign_negative() && !v.is_nan(), spec);
    let a = v.abs();
    if !a.is_finite() {
        let t = if a.is_nan() { "nan" } else { "inf" };
        let t = if upper {
            t.to_uppercase()
        } else {
            t.to_string()
        };
        return pad_number(sign, "", &t, spec, false);
    }
    let (prefix, body) = match conv.to_ascii_lowercase() {
        'f' => ("", fixed(a, spec.precision.unwrap_or(6), spec.alt)),
        'e' => ("", exponential(a, spec.precision.unwrap_or(6), spec.alt)),
        'g' => ("", general(a, spec.precision.unwrap_or(6), spec.alt)),
        _ => ("0x", hex(a, spec.precision)),
    };
    let body = if upper { body.to_uppercase() } else { body };
    let prefix = if upper {
        prefix.to_uppercase()
    } else {
        prefix.to_string()
    };
    pad_number(sign, &prefix, &body, spec, true)
}

fn fixed(a: f64, precision: usize, alt: bool) -> String {
    let mut s = format!("{a:.precision$}");
    if alt && precision == 0 {
        s.push('.');
    }
    s
}

/// `d.ddde±XX`, from Rust's correctly rounded `{:e}`.
fn exponential(a: f64, precision: usize, alt: bool) -> String {
    let s = format!("{a:.precision$e}");
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let mut m = mantissa.to_string();
    if alt && precision == 0 {
        m.push('.');
    }
    let sign = if exp < 0 { '-' } else { '+' };
    format!("{m}e{sign}{:02}", exp.unsigned_abs())
}

fn general(a: f64, precision: usize, alt: bool) -> String {
    let p = precision.max(1);
    // The exponent X that %e with precision P−1 would print.
    let x = if a == 0.0 {
        0
    } else {
        let s = format!("{a:.prec$e}", prec = p - 1);
        s.split_once('e')
            .and_then(|(_, e)| e.parse::<i64>().ok())
            .unwrap_or(0)
    };
    let mut s = if (p as i64) > x && x >= -4 {
        fixed(a, (p as i64 - 1 - x) as usize, alt)
    } else {
        exponential(a, p - 1, alt)
    };
    if !alt {
        let (mantissa, exp) = match s.find('e') {
            Some(i) => (s[..i].to_string(), s[i..].to_string()),
            None => (s.clone(), String::new()),
        };
        let mantissa = if mantissa.contains('.') {
            mantissa
                .trim_end_matches('0')
                .trim_end_matches('.')
                .to_string()
        } else {
            mantissa
        };
        s = mantissa + &exp;
    }
    s
}

/// `%a` as glibc prints it: `1.8p+1`, subnormals as `0.0000000000001p-1022`.
fn hex(a: f64, precision: Option<usize>) -> String {
    let bits = a.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i64;
    let frac = bits & ((1u64 << 52) - 1);
    if a == 0.0 {
        return match precision {
            Some(p) if p > 0 => format!("0.{}p+0", "0".repeat(p)),
            _ => "0p+0".to_string(),
        };
    }
    let (mut lead, exp) = if biased == 0 {
        (0u64, -1022)
    } else {
        (1u64, biased - 1023)
    };
    let mut digits = format!("{frac:013x}");
    match precision {
        None => {
            let t = digits.trim_end_matches('0');
            digits = t.to_string();
        }
        Some(p) if p < 13 => {
            // Round the 52-bit fraction to p hex digits, half to even.
            let drop = (13 - p) * 4;
            let mut kept = frac >> drop;
            let rest = frac & ((1u64 << drop) - 1);
            let half = 1u64 << (drop - 1);
            if rest > half || (rest == half && kept & 1 == 1) {
                kept += 1;
                if p == 0 || kept >> (p * 4) != 0 {
                    lead += 1;
                    kept &= if p == 0 { 0 } else { (1u64 << (p * 4)) - 1 };
                }
            }
            digits = if p == 0 {
                String::new()
            } else {
                format!("{kept:0width$x}", width = p)
            };
        }
        Some(p) => {
            digits.push_str(&"0".repeat(p - 13));
        }
    }
    let sign = if exp < 0 { '-' } else { '+' };
    if digits.is_empty() {
        format!("{lead}p{sign}{}", exp.unsigned_abs())
    } else {
        format!("{lead}.{digits}p{sign}{}", exp.unsigned_abs())
    }
}
