//! TOML text → the value tree, floats kept as the loader reads them: one too large for a
//! float (`1e400`) or too small (`1e-400`, nonzero but 0.0 as a float) stays its text, for
//! the unit parsers to refuse, rather than becoming `inf` (an unbounded size) or 0 (a
//! lossless link).

use toml_edit::{DocumentMut, Item, Value};

use super::value::V;

/// A float as written: its value, or its text where the value would not say what was written.
fn float(text: &str, x: f64) -> V {
    let lower = text.to_ascii_lowercase();
    if x.is_infinite() && !lower.contains("inf") {
        return V::Str(text.to_string());
    }
    let mantissa = lower.split('e').next().unwrap_or("");
    if x == 0.0 && mantissa.chars().any(|c| ('1'..='9').contains(&c)) {
        return V::Str(text.to_string());
    }
    V::Float(x)
}

fn value(v: &Value) -> V {
    match v {
        Value::String(s) => V::Str(s.value().clone()),
        Value::Integer(i) => V::Int((*i.value()).into()),
        Value::Float(f) => {
            let text = f.as_repr().and_then(|r| r.as_raw().as_str());
            float(text.unwrap_or_default(), *f.value())
        }
        Value::Boolean(b) => V::Bool(*b.value()),
        Value::Datetime(d) => V::Other(d.value().to_string()),
        Value::Array(a) => V::List(a.iter().map(value).collect()),
        Value::InlineTable(t) => {
            V::Table(t.iter().map(|(k, v)| (k.to_string(), value(v))).collect())
        }
    }
}

fn item(i: &Item) -> V {
    match i {
        Item::None => V::Null,
        Item::Value(v) => value(v),
        Item::Table(t) => V::Table(t.iter().map(|(k, v)| (k.to_string(), item(v))).collect()),
        Item::ArrayOfTables(a) => V::List(
            a.iter()
                .map(|t| V::Table(t.iter().map(|(k, v)| (k.to_string(), item(v))).collect()))
                .collect(),
        ),
    }
}

/// A TOML document's table, or the parser's message in one line (with where in the text).
pub fn parse(text: &str) -> Result<V, String> {
    match text.parse::<DocumentMut>() {
        Ok(doc) => Ok(item(doc.as_item())),
        Err(e) => {
            let message = e.message().trim().replace('\n', " ");
            Err(match e.span() {
                Some(span) => {
                    let before = &text[..span.start.min(text.len())];
                    let line = before.matches('\n').count() + 1;
                    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
                    format!("{message} (at line {line}, column {column})")
                }
                None => message,
            })
        }
    }
}

/// A `--set` value: a TOML value (`8960`, `"1Gbps"`, `false`, `[...]`, `{...}`); anything
/// else is a string.
pub fn set_value(text: &str) -> V {
    match parse(&format!("v = {text}")) {
        Ok(V::Table(mut t)) if t.len() == 1 => t.remove(0).1,
        _ => big_integer(text).unwrap_or_else(|| V::Str(super::value::py_strip(text).to_string())),
    }
}

/// A decimal integer beyond TOML's i64 (`18446744073709551616`), which the loader reads as a
/// number to refuse as too large rather than as a word; beyond i128, as its text.
fn big_integer(text: &str) -> Option<V> {
    let t = text.trim_matches([' ', '\t']);
    let digits = t.strip_prefix(['+', '-']).unwrap_or(t);
    let plain: String = digits.chars().filter(|c| *c != '_').collect();
    let well_formed = !plain.is_empty()
        && plain.bytes().all(|b| b.is_ascii_digit())
        && !digits.starts_with('_')
        && !digits.ends_with('_')
        && !digits.contains("__")
        && (plain.len() == 1 || !plain.starts_with('0'));
    if !well_formed {
        return None;
    }
    let signed = if t.starts_with('-') {
        format!("-{plain}")
    } else {
        plain
    };
    Some(signed.parse::<i128>().map_or(V::Other(signed), V::Int))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_float_beyond_a_float_stays_its_text() {
        assert_eq!(set_value("1e400"), V::str("1e400"));
        assert_eq!(set_value("1e-400"), V::str("1e-400"));
        assert_eq!(set_value("inf"), V::Float(f64::INFINITY));
        assert_eq!(set_value("0.5"), V::Float(0.5));
        assert_eq!(set_value("8960"), V::Int(8960));
        assert_eq!(set_value("18446744073709551616"), V::Int(1 << 64));
        assert_eq!(set_value("1Gbps"), V::str("1Gbps"));
        assert_eq!(set_value(" 50ms "), V::str("50ms"));
        assert_eq!(
            set_value("{kind = \"codel\"}"),
            V::Table(vec![("kind".into(), V::str("codel"))])
        );
    }

    #[test]
    fn a_bad_document_is_one_line_saying_where() {
        let e = parse("duration = \"1s\"\n[path\n").unwrap_err();
        assert!(!e.contains('\n') && e.contains("line 2"), "{e}");
    }
}
