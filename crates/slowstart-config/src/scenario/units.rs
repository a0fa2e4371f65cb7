//! Units in scenario files, resolved to exact integers: ns, bytes, bits per second.
//!
//! Numbers are read as exact decimals, so "1.5Mbps" is 1_500_000 and "0.08" seconds is
//! 80_000_000 ns; a value that is not a whole number of the base unit is an error.

use super::value::{py_float, show, V};
use crate::SimError;

pub const U64_MAX: u128 = u64::MAX as u128;

pub const RATE_UNITS: &[(&str, u128)] = &[
    ("bps", 1),
    ("kbps", 1_000),
    ("Kbps", 1_000),
    ("Mbps", 1_000_000),
    ("mbps", 1_000_000),
    ("Gbps", 1_000_000_000),
    ("gbps", 1_000_000_000),
    ("Tbps", 1_000_000_000_000),
];
pub const TIME_UNITS: &[(&str, u128)] = &[
    ("ns", 1),
    ("us", 1_000),
    ("µs", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
    ("min", 60_000_000_000),
    ("h", 3_600_000_000_000),
];
pub const SIZE_UNITS: &[(&str, u128)] = &[
    ("B", 1),
    ("kB", 1_000),
    ("MB", 1_000_000),
    ("GB", 1_000_000_000),
    ("TB", 1_000_000_000_000),
    ("KiB", 1 << 10),
    ("MiB", 1 << 20),
    ("GiB", 1 << 30),
];

pub const RATE_FORMS: &str = "bps, kbps, Mbps, Gbps, Tbps";
pub const TIME_FORMS: &str = "ns, us, ms, s, min, h";
pub const SIZE_FORMS: &str = "B, kB, MB, GB, KiB, MiB, GiB";
const RATE_HELP: &str = "a rate such as \"250Mbps\" (bps, kbps, Mbps, Gbps, Tbps)";
const TIME_HELP: &str = "a time such as \"600ms\" (ns, us, ms, s, min, h)";
const SIZE_HELP: &str = "a size such as \"100MB\" (B, kB, MB, GB, KiB, MiB, GiB)";
pub const WINDOW_HELP: &str =
    "a window such as \"3500seg\" (segments of the flow's MSS) or a size such as \"5MB\"";
pub const BUFFER_HELP: &str = "a buffer such as \"200pkt\", \"1MB\", \"50ms\" (at the line rate) \
    or \"1bdp\" (multiples of rate × rtt, [path] only)";
pub const LOSS_HELP: &str = "a loss probability in [0, 1) such as 0.001 or \"0.1%\"";

pub fn err(message: String) -> SimError {
    SimError(message)
}

pub fn fail(field: &str, expected: &str, value: &V) -> SimError {
    err(format!("{field}: expected {expected}, got {}", show(value)))
}

fn unit_of(units: &[(&str, u128)], unit: &str) -> Option<u128> {
    units.iter().find(|(u, _)| *u == unit).map(|(_, n)| *n)
}

/// An exact non-negative decimal `n / 10^scale`, or one too large to hold (`huge`: beyond
/// u128, which no setting is).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Exact {
    pub n: u128,
    pub scale: u32,
    pub huge: bool,
    pub negative: bool,
}

impl Exact {
    pub fn int(n: u128) -> Exact {
        Exact {
            n,
            scale: 0,
            huge: false,
            negative: false,
        }
    }

    pub fn is_zero(&self) -> bool {
        !self.huge && self.n == 0
    }

    pub fn times(self, k: u128) -> Exact {
        match self.n.checked_mul(k) {
            Some(n) => Exact { n, ..self }.reduced(),
            None => Exact { huge: true, ..self },
        }
    }

    /// `self / d` exactly, where d is 10^k.
    fn over_pow10(self, k: u32) -> Exact {
        Exact {
            scale: self.scale.saturating_add(k),
            ..self
        }
        .reduced()
    }

    fn reduced(mut self) -> Exact {
        while self.scale > 0 && self.n.is_multiple_of(10) && self.n != 0 {
            self.n /= 10;
            self.scale -= 1;
        }
        if self.n == 0 {
            self.scale = 0;
        }
        self
    }

    /// The integer, if whole.
    pub fn whole(self) -> Option<u128> {
        (self.scale == 0 && !self.huge).then_some(self.n)
    }

    pub fn to_f64(self) -> f64 {
        if self.huge {
            return f64::INFINITY;
        }
        let x: f64 = format!("{}e-{}", self.n, self.scale)
            .parse()
            .expect("a decimal");
        if self.negative {
            -x
        } else {
            x
        }
    }

    /// Nearest integer of `self × num / den`, halves up; None beyond u128.
    pub fn round_times(self, num: u128, den: u128) -> Option<u128> {
        if self.huge {
            return None;
        }
        let top = self.n.checked_mul(num)?;
        let bottom = den.checked_mul(10u128.checked_pow(self.scale)?)?;
        // floor(top / bottom + 1/2) = floor((2 top + bottom) / (2 bottom))
        let twice = top.checked_mul(2)?.checked_add(bottom)?;
        Some(twice / bottom.checked_mul(2)?)
    }
}

fn is_py_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c')
}

/// A number (exact) and its unit ("" for a bare number), from text as Python's units.py
/// `_QUANTITY` (a sweep plan's ranges) reads it: an ASCII decimal with `_` between digits and an exponent, then a unit without
/// spaces; None if the text is no such thing.
pub fn quantity_text(text: &str) -> Option<(Exact, &str)> {
    let s = text.trim_start_matches(is_py_space);
    let b = s.as_bytes();
    let mut i = 0;
    let negative = match b.first() {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let mut int_digits = String::new();
    let mut frac_digits = String::new();
    if b.get(i).is_some_and(u8::is_ascii_digit) {
        while let Some(&c) = b.get(i) {
            if c.is_ascii_digit() {
                int_digits.push(c as char);
            } else if c != b'_' {
                break;
            }
            i += 1;
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            while let Some(&c) = b.get(i).filter(|c| c.is_ascii_digit()) {
                frac_digits.push(c as char);
                i += 1;
            }
        }
    } else if b.get(i) == Some(&b'.') && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
        i += 1;
        while let Some(&c) = b.get(i).filter(|c| c.is_ascii_digit()) {
            frac_digits.push(c as char);
            i += 1;
        }
    } else {
        return None;
    }
    let mut exp: i64 = 0;
    if matches!(b.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1;
        let esign = match b.get(j) {
            Some(b'-') => {
                j += 1;
                -1
            }
            Some(b'+') => {
                j += 1;
                1
            }
            _ => 1,
        };
        let start = j;
        while b.get(j).is_some_and(u8::is_ascii_digit) {
            j += 1;
        }
        if j > start {
            let digits = &s[start..j];
            exp = esign * digits.parse::<i64>().unwrap_or(i64::MAX / 2).min(1 << 40);
            i = j;
        }
    }
    let rest = s[i..].trim_start_matches(is_py_space);
    let unit = rest.trim_end_matches(is_py_space);
    if unit.chars().any(is_py_space) {
        return None;
    }
    Some((exact(&int_digits, &frac_digits, exp, negative), unit))
}

/// `int.frac × 10^exp` exactly.
fn exact(int: &str, frac: &str, exp: i64, negative: bool) -> Exact {
    let all = format!("{int}{frac}");
    let digits = all.trim_start_matches('0');
    let digits = digits.trim_end_matches('0');
    let trailing = (all.trim_start_matches('0').len() - digits.len()) as i64;
    if digits.is_empty() {
        return Exact {
            negative,
            ..Exact::int(0)
        };
    }
    // value = digits × 10^(exp - len(frac) + trailing)
    let power = exp - frac.len() as i64 + trailing;
    let too_large = Exact {
        n: 0,
        scale: 0,
        huge: true,
        negative,
    };
    let Ok(n) = digits.parse::<u128>() else {
        return too_large;
    };
    if power >= 0 {
        match u32::try_from(power)
            .ok()
            .and_then(|p| 10u128.checked_pow(p))
            .and_then(|k| n.checked_mul(k))
        {
            Some(n) => Exact {
                n,
                scale: 0,
                huge: false,
                negative,
            },
            None => too_large,
        }
    } else {
        Exact {
            n,
            scale: u32::try_from(-power).unwrap_or(u32::MAX),
            huge: false,
            negative,
        }
    }
}

/// A number (exact) and its unit suffix ("" for a bare number), from any value.
pub fn split_quantity(value: &V, field: &str, expected: &str) -> Result<(Exact, String), SimError> {
    match value {
        V::Int(i) => Ok((
            Exact {
                negative: *i < 0,
                ..Exact::int(i.unsigned_abs())
            },
            String::new(),
        )),
        V::Float(x) if x.is_finite() => {
            let (e, _) = quantity_text(&py_float(*x)).expect("a float's repr is a number");
            Ok((e, String::new()))
        }
        V::Str(s) => match quantity_text(s) {
            Some((e, unit)) => Ok((e, unit.to_string())),
            None => Err(fail(field, expected, value)),
        },
        _ => Err(fail(field, expected, value)),
    }
}

/// An integer the canonical config can hold (0..=u64::MAX); `what` names the setting's kind.
pub fn parse_int(value: &V, field: &str, what: &str) -> Result<u64, SimError> {
    let V::Int(i) = value else {
        return Err(err(format!(
            "{field}: expected {what}, got {}",
            show(value)
        )));
    };
    if *i < 0 {
        return Err(err(format!("{field}: expected {what}, got {i}")));
    }
    if *i as u128 > U64_MAX {
        return Err(err(format!("{field}: must be at most {U64_MAX}, got {i}")));
    }
    Ok(*i as u64)
}

pub const INT: &str = "an integer >= 0";

/// ScenarioError if `exact` is not 0 but is as a float (below about 5e-324).
pub fn check_underflow(exact: Exact, field: &str, value: &V) -> Result<(), SimError> {
    let shown = match value {
        V::Str(s) => s.clone(),
        other => show(other),
    };
    if !exact.is_zero() && exact.to_f64() == 0.0 {
        return Err(err(format!(
            "{field}: {shown} is too small to hold (a number below about 5e-324 is 0 here); \
             write 0 if you mean none"
        )));
    }
    Ok(())
}

/// A float too small to hold reaches the parsers as its text (the TOML reader keeps it).
fn underflowed(value: &V, field: &str) -> Result<(), SimError> {
    if let V::Str(s) = value {
        if let Some((e, "")) = quantity_text(s) {
            check_underflow(e, field, value)?;
        }
    }
    Ok(())
}

/// A finite number; `what` names the setting's kind.
pub fn parse_number(value: &V, field: &str, what: &str) -> Result<f64, SimError> {
    underflowed(value, field)?;
    match value {
        V::Int(i) => Ok(*i as f64),
        V::Float(x) if x.is_finite() => Ok(*x),
        _ => Err(err(format!(
            "{field}: expected {what}, got {}",
            show(value)
        ))),
    }
}

pub fn parse_bool(value: &V, field: &str) -> Result<bool, SimError> {
    match value {
        V::Bool(b) => Ok(*b),
        _ => Err(err(format!(
            "{field}: expected true or false, got {}",
            show(value)
        ))),
    }
}

fn refuse_negative(number: Exact, field: &str, value: &V) -> Result<(), SimError> {
    if number.negative && !number.is_zero() {
        return Err(err(format!(
            "{field}: must not be negative, got {}",
            show(value)
        )));
    }
    Ok(())
}

fn whole(x: Exact, field: &str, value: &V, what: &str) -> Result<u128, SimError> {
    if x.scale != 0 {
        return Err(err(format!(
            "{field}: {} is not a whole number of {what}",
            show(value)
        )));
    }
    match x.whole() {
        Some(n) if n <= U64_MAX => Ok(n),
        _ => Err(err(format!("{field}: {} is too large", show(value)))),
    }
}

/// A bare number where a quantity is read: one line with the accepted forms.
pub fn no_unit(field: &str, value: &V, suggest: &str, forms: &str) -> SimError {
    let number = match value {
        V::Str(s) => super::value::py_strip(s).to_string(),
        other => show(other),
    };
    err(format!(
        "{field}: give a unit, e.g. \"{number}{suggest}\" ({forms}), got {}",
        show(value)
    ))
}

fn scaled(
    value: &V,
    field: &str,
    units: &[(&str, u128)],
    suggest: (&str, &str),
    expected: &str,
) -> Result<Exact, SimError> {
    let (number, unit) = split_quantity(value, field, expected)?;
    refuse_negative(number, field, value)?;
    if unit.is_empty() {
        if !number.is_zero() {
            return Err(no_unit(field, value, suggest.0, suggest.1));
        }
        return Ok(number);
    }
    match unit_of(units, &unit) {
        Some(k) => Ok(number.times(k)),
        None => Err(fail(field, expected, value)),
    }
}

/// Bits per second, >= 0.
pub fn parse_rate(value: &V, field: &str) -> Result<u64, SimError> {
    let x = scaled(value, field, RATE_UNITS, ("Mbps", RATE_FORMS), RATE_HELP)?;
    whole(x, field, value, "bits per second").map(|n| n as u64)
}

/// Nanoseconds, >= 0.
pub fn parse_time(value: &V, field: &str) -> Result<u64, SimError> {
    let x = scaled(value, field, TIME_UNITS, ("ms", TIME_FORMS), TIME_HELP)?;
    whole(x, field, value, "nanoseconds").map(|n| n as u64)
}

/// Bytes, >= 0.
pub fn parse_size(value: &V, field: &str) -> Result<u64, SimError> {
    let x = scaled(value, field, SIZE_UNITS, ("B", SIZE_FORMS), SIZE_HELP)?;
    whole(x, field, value, "bytes").map(|n| n as u64)
}

/// "inf", or TOML's own `inf`.
fn is_inf(value: &V) -> bool {
    match value {
        V::Str(s) => super::value::py_strip(s) == "inf",
        V::Float(x) => *x == f64::INFINITY,
        _ => false,
    }
}

/// Bytes, or None for "inf".
pub fn parse_size_or_inf(value: &V, field: &str) -> Result<Option<u64>, SimError> {
    if is_inf(value) {
        return Ok(None);
    }
    parse_size(value, field).map(Some)
}

/// Bytes, or None for "inf"; "Nseg" is N × mss.
pub fn parse_window(value: &V, field: &str, mss: u64) -> Result<Option<u64>, SimError> {
    if is_inf(value) {
        return Ok(None);
    }
    if let V::Str(s) = value {
        if super::value::py_strip(s).ends_with("seg") {
            let (number, unit) = split_quantity(value, field, WINDOW_HELP)?;
            if unit != "seg" {
                return Err(fail(field, WINDOW_HELP, value));
            }
            if number.negative && !number.is_zero() {
                return Err(err(format!(
                    "{field}: must not be negative, got {}",
                    show(value)
                )));
            }
            return whole(number.times(mss.into()), field, value, "bytes").map(|n| Some(n as u64));
        }
    }
    let (number, unit) = split_quantity(value, field, WINDOW_HELP)?;
    if unit.is_empty() && !number.is_zero() {
        return Err(no_unit(
            field,
            value,
            "seg",
            &format!("seg, {SIZE_FORMS}, inf"),
        ));
    }
    if !unit.is_empty() && unit_of(SIZE_UNITS, &unit).is_none() {
        return Err(fail(field, WINDOW_HELP, value));
    }
    parse_size(value, field).map(Some)
}

/// A buffer as written, resolved once the link's rate (and the path's BDP) are known.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Buffer {
    Packets(Exact),
    Bytes(u64),
    TimeNs(u64),
    Bdp(Exact),
}

pub fn parse_buffer(value: &V, field: &str) -> Result<Buffer, SimError> {
    let (number, unit) = split_quantity(value, field, BUFFER_HELP)?;
    refuse_negative(number, field, value)?;
    match unit.as_str() {
        "pkt" | "pkts" => Ok(Buffer::Packets(number)),
        "bdp" => Ok(Buffer::Bdp(number)),
        u if unit_of(TIME_UNITS, u).is_some() => Ok(Buffer::TimeNs(parse_time(value, field)?)),
        "" if !number.is_zero() => Err(no_unit(
            field,
            value,
            "pkt",
            &format!("pkt, {SIZE_FORMS}, a time at the line rate, bdp"),
        )),
        u if u.is_empty() || unit_of(SIZE_UNITS, u).is_some() => {
            Ok(Buffer::Bytes(parse_size(value, field)?))
        }
        _ => Err(fail(field, BUFFER_HELP, value)),
    }
}

/// A path's bandwidth-delay product in bytes, exactly: rate × rtt / (8 × 10^9).
#[derive(Clone, Copy, Debug)]
pub struct Bdp {
    pub rate_bps: u64,
    pub rtt_ns: u64,
}

impl Bdp {
    fn bytes(&self) -> f64 {
        (self.rate_bps as f64 * self.rtt_ns as f64) / 8e9
    }
}

/// Python's `f"{x:.3g}"`.
fn g3(x: f64) -> String {
    if x == 0.0 {
        return "0".into();
    }
    let sci = format!("{:.2e}", x);
    let (mantissa, exp) = sci.split_once('e').expect("an exponent");
    let exp: i32 = exp.parse().expect("an integer");
    if (-4..3).contains(&exp) {
        let decimals = (2 - exp).max(0) as usize;
        let fixed = format!("{:.*}", decimals, x);
        if fixed.contains('.') {
            fixed
                .trim_end_matches('0')
                .trim_end_matches('.')
                .to_string()
        } else {
            fixed
        }
    } else {
        let m = if mantissa.contains('.') {
            mantissa.trim_end_matches('0').trim_end_matches('.')
        } else {
            mantissa
        };
        let sign = if exp < 0 { "-" } else { "+" };
        format!("{m}e{sign}{:02}", exp.abs())
    }
}

/// The canonical queue limit: {"packets": N} or {"bytes": N}.
pub fn resolve_buffer(
    buf: Buffer,
    field: &str,
    value: &V,
    rate_bps: u64,
    bdp: Option<Bdp>,
) -> Result<V, SimError> {
    let too_large = || err(format!("{field}: {} is too large", show(value)));
    let (kind, n) = match buf {
        Buffer::Packets(p) => ("packets", whole(p, field, value, "packets")?),
        Buffer::Bytes(b) => ("bytes", b.into()),
        Buffer::TimeNs(t) => (
            "bytes",
            Exact::int(rate_bps as u128 * t as u128)
                .round_times(1, 8_000_000_000)
                .ok_or_else(too_large)?,
        ),
        Buffer::Bdp(multiple) => {
            let Some(bdp) = bdp else {
                return Err(err(format!(
                    "{field}: {}: bdp is only accepted in the [path] form; give packets \
                     (\"200pkt\"), bytes (\"1MB\") or a time at the line rate (\"50ms\")",
                    show(value)
                )));
            };
            let product = bdp.rate_bps as u128 * bdp.rtt_ns as u128;
            let n = multiple
                .round_times(product, 8_000_000_000)
                .ok_or_else(too_large)?;
            if !multiple.is_zero() && product != 0 && n < 1 {
                return Err(err(format!(
                    "{field}: {} of a {}-byte BDP (path.rate x path.rtt) holds no packet; give \
                     a larger rate or rtt, or the buffer in packets (\"10pkt\")",
                    show(value),
                    g3(bdp.bytes())
                )));
            }
            ("bytes", n)
        }
    };
    if n > U64_MAX {
        return Err(too_large());
    }
    Ok(V::Table(vec![(kind.into(), V::Int(n as i128))]))
}

/// A probability, from a number or a percentage; its range is the core's.
pub fn parse_loss(value: &V, field: &str) -> Result<f64, SimError> {
    underflowed(value, field)?;
    let p = match value {
        V::Str(s) if super::value::py_strip(s).ends_with('%') => {
            let (number, unit) = split_quantity(value, field, LOSS_HELP)?;
            if unit != "%" {
                return Err(fail(field, LOSS_HELP, value));
            }
            let fraction = number.over_pow10(2);
            check_underflow(fraction, field, value)?;
            fraction.to_f64()
        }
        V::Int(i) => *i as f64,
        V::Float(x) => *x,
        _ => return Err(fail(field, LOSS_HELP, value)),
    };
    if !p.is_finite() {
        return Err(fail(field, LOSS_HELP, value));
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str) -> V {
        V::str(text)
    }

    #[test]
    fn each_unit_grammar_reads_exact_decimals() {
        assert_eq!(parse_rate(&s("1.5Mbps"), "r"), Ok(1_500_000));
        assert_eq!(parse_time(&s("0.08s"), "t"), Ok(80_000_000));
        assert_eq!(parse_time(&s(" 1_000 us "), "t"), Ok(1_000_000));
        assert_eq!(parse_time(&V::Int(0), "t"), Ok(0));
        assert_eq!(parse_size(&s("32MiB"), "s"), Ok(32 << 20));
        assert_eq!(parse_size_or_inf(&s("inf"), "s"), Ok(None));
        assert_eq!(parse_window(&s("10seg"), "w", 1448), Ok(Some(14_480)));
        assert_eq!(parse_loss(&s("0.1%"), "l"), Ok(0.001));
        assert_eq!(parse_loss(&V::Float(0.25), "l"), Ok(0.25));
        // An exponent past any scale is a number too small to hold, not an overflow.
        let tiny = parse_loss(&s("1e-99999999999%"), "l").unwrap_err().0;
        assert!(tiny.contains("too small to hold"), "{tiny}");
        assert_eq!(parse_int(&V::Int(7), "n", INT), Ok(7));
    }

    #[test]
    fn each_unit_grammar_names_the_field_and_what_it_accepts() {
        let e = |r: Result<u64, SimError>| r.unwrap_err().0;
        assert_eq!(
            e(parse_time(&s("1.5ns"), "path.rtt")),
            "path.rtt: \"1.5ns\" is not a whole number of nanoseconds"
        );
        assert_eq!(
            e(parse_time(&V::Int(600), "path.rtt")),
            "path.rtt: give a unit, e.g. \"600ms\" (ns, us, ms, s, min, h), got 600"
        );
        assert_eq!(
            e(parse_rate(&s("5 furlongs"), "path.rate")),
            format!("path.rate: expected {RATE_HELP}, got \"5 furlongs\"")
        );
        assert_eq!(
            e(parse_size(&s("-1B"), "flow.0.size")),
            "flow.0.size: must not be negative, got \"-1B\""
        );
        assert_eq!(
            e(parse_size(&s("1e400B"), "flow.0.size")),
            "flow.0.size: \"1e400B\" is too large"
        );
        assert_eq!(
            e(parse_int(&V::Bool(true), "seed", INT)),
            "seed: expected an integer >= 0, got true"
        );
        assert_eq!(
            parse_loss(&s("1e-400"), "path.loss").unwrap_err().0,
            "path.loss: 1e-400 is too small to hold (a number below about 5e-324 is 0 here); \
             write 0 if you mean none"
        );
    }

    #[test]
    fn a_bdp_buffer_rounds_halves_up_and_refuses_one_that_holds_nothing() {
        let bdp = Some(Bdp {
            rate_bps: 250_000_000,
            rtt_ns: 600_000_000,
        });
        let buf = parse_buffer(&s("1bdp"), "path.buffer").unwrap();
        let limit = resolve_buffer(buf, "path.buffer", &s("1bdp"), 250_000_000, bdp).unwrap();
        assert_eq!(limit.to_json(), r#"{"bytes":18750000}"#);
        let half = parse_buffer(&s("0.5bdp"), "b").unwrap();
        let tiny = Some(Bdp {
            rate_bps: 8,
            rtt_ns: 1_000_000_000,
        });
        assert_eq!(
            resolve_buffer(half, "b", &s("0.5bdp"), 8, tiny)
                .unwrap()
                .to_json(),
            r#"{"bytes":1}"#
        );
        let none = Some(Bdp {
            rate_bps: 8,
            rtt_ns: 1_000_000,
        });
        let message = resolve_buffer(half, "path.buffer", &s("0.5bdp"), 8, none).unwrap_err();
        assert_eq!(
            message.0,
            "path.buffer: \"0.5bdp\" of a 0.001-byte BDP (path.rate x path.rtt) holds no \
             packet; give a larger rate or rtt, or the buffer in packets (\"10pkt\")"
        );
        let at_rate = parse_buffer(&s("50ms"), "b").unwrap();
        assert_eq!(
            resolve_buffer(at_rate, "b", &s("50ms"), 10_000_000, None)
                .unwrap()
                .to_json(),
            r#"{"bytes":62500}"#
        );
    }

    #[test]
    fn three_significant_digits_as_python_writes_them() {
        assert_eq!(g3(0.001), "0.001");
        assert_eq!(g3(1234.0), "1.23e+03");
        assert_eq!(g3(0.5), "0.5");
        assert_eq!(g3(12.0), "12");
        assert_eq!(g3(1e-7), "1e-07");
    }
}
