//! A scenario as written: the value tree the loader reads (TOML's, or a Python dict's), its
//! tables in the order written, and values shown in messages as Python shows them.

use std::fmt::Write;

/// A value of a raw scenario. Tables keep their keys in the order written (messages name the
/// first unknown key, and `--set` adds keys at the end).
#[derive(Clone, Debug, Default, PartialEq)]
pub enum V {
    /// Python's None (a dict source may hold it; TOML has none).
    #[default]
    Null,
    Bool(bool),
    /// An integer (TOML's are i64; a Python int beyond i128 arrives as a float).
    Int(i128),
    Float(f64),
    Str(String),
    List(Vec<V>),
    Table(Vec<(String, V)>),
    /// Any other object of a dict source, as Python's `str()` writes it: refused wherever read.
    Other(String),
}

impl V {
    pub fn get(&self, key: &str) -> Option<&V> {
        match self {
            V::Table(t) => t.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut V> {
        match self {
            V::Table(t) => t.iter_mut().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn has(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Sets `key` (in place if present, else at the end); a no-op on a non-table.
    pub fn set(&mut self, key: &str, value: V) {
        if let V::Table(t) = self {
            match t.iter_mut().find(|(k, _)| k == key) {
                Some((_, v)) => *v = value,
                None => t.push((key.to_string(), value)),
            }
        }
    }

    pub fn remove(&mut self, key: &str) -> Option<V> {
        match self {
            V::Table(t) => {
                let i = t.iter().position(|(k, _)| k == key)?;
                Some(t.remove(i).1)
            }
            _ => None,
        }
    }

    pub fn table() -> V {
        V::Table(Vec::new())
    }

    pub fn str(s: impl Into<String>) -> V {
        V::Str(s.into())
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            V::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn is_table(&self) -> bool {
        matches!(self, V::Table(_))
    }

    pub fn is_null(&self) -> bool {
        matches!(self, V::Null)
    }

    /// The tree as JSON text, tables in their order; a non-finite float (a word's value the
    /// core then refuses) as Python's `json.dumps` writes it (`NaN`, `Infinity`), which is no
    /// JSON: the core's reader names the field.
    pub fn to_json(&self) -> String {
        let mut out = String::new();
        self.write_json(&mut out);
        out
    }

    fn write_json(&self, out: &mut String) {
        match self {
            V::Null | V::Other(_) => out.push_str("null"),
            V::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            V::Int(i) => {
                let _ = write!(out, "{i}");
            }
            V::Float(x) if x.is_nan() => out.push_str("NaN"),
            V::Float(x) if x.is_infinite() => {
                out.push_str(if *x > 0.0 { "Infinity" } else { "-Infinity" })
            }
            V::Float(x) => out.push_str(&serde_json::to_string(x).expect("a float is JSON")),
            V::Str(s) => out.push_str(&json_string(s)),
            V::List(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.write_json(out);
                }
                out.push(']');
            }
            V::Table(t) => {
                out.push('{');
                for (i, (k, v)) in t.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&json_string(k));
                    out.push(':');
                    v.write_json(out);
                }
                out.push('}');
            }
        }
    }
}

impl From<&serde_json::Value> for V {
    fn from(value: &serde_json::Value) -> V {
        match value {
            serde_json::Value::Null => V::Null,
            serde_json::Value::Bool(b) => V::Bool(*b),
            serde_json::Value::Number(n) => match (n.as_u64(), n.as_i64()) {
                (Some(u), _) => V::Int(u.into()),
                (_, Some(i)) => V::Int(i.into()),
                _ => V::Float(n.as_f64().unwrap_or(f64::NAN)),
            },
            serde_json::Value::String(s) => V::Str(s.clone()),
            serde_json::Value::Array(a) => V::List(a.iter().map(V::from).collect()),
            serde_json::Value::Object(o) => {
                V::Table(o.iter().map(|(k, v)| (k.clone(), V::from(v))).collect())
            }
        }
    }
}

/// A string as JSON, non-ASCII kept (Python's `json.dumps(s, ensure_ascii=False)`).
pub fn json_string(s: &str) -> String {
    serde_json::to_string(s).expect("a string is JSON")
}

/// A value as the user wrote it, for messages (Python's `units.show`).
pub fn show(value: &V) -> String {
    match value {
        V::Null => "None".into(),
        V::Bool(b) => if *b { "true" } else { "false" }.into(),
        V::Int(i) => i.to_string(),
        V::Float(x) => py_float(*x),
        V::Str(s) => json_string(s),
        V::Table(_) => "a table".into(),
        V::List(_) => "a list".into(),
        V::Other(s) => s.clone(),
    }
}

/// A float as Python's `repr` writes it: the shortest digits that read back, in positional
/// form for exponents -4..16, else as `1e-05`, `1.5e+16`.
pub fn py_float(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.into();
    }
    let sci = format!("{:e}", x.abs());
    let (mantissa, exp) = sci.split_once('e').expect("{:e} writes an exponent");
    let exp: i32 = exp.parse().expect("an integer exponent");
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let sign = if x.is_sign_negative() { "-" } else { "" };
    if (-4..16).contains(&exp) {
        let n = digits.len() as i32;
        let body = if exp < 0 {
            format!("0.{}{digits}", "0".repeat((-exp - 1) as usize))
        } else if exp + 1 >= n {
            format!("{digits}{}.0", "0".repeat((exp + 1 - n) as usize))
        } else {
            let (int, frac) = digits.split_at((exp + 1) as usize);
            format!("{int}.{frac}")
        };
        format!("{sign}{body}")
    } else {
        let mantissa = match digits.split_at(1) {
            (d, "") => d.to_string(),
            (d, rest) => format!("{d}.{rest}"),
        };
        let esign = if exp < 0 { "-" } else { "+" };
        format!("{sign}{mantissa}e{esign}{:02}", exp.abs())
    }
}

/// Python's `str.strip()`: Unicode white space and the ASCII separators U+001C..U+001F.
pub fn py_strip(s: &str) -> &str {
    s.trim_matches(|c: char| c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_are_shown_as_python_writes_them() {
        let cases = [
            (0.1, "0.1"),
            (1.0, "1.0"),
            (1e-5, "1e-05"),
            (0.0001, "0.0001"),
            (1e16, "1e+16"),
            (1.5e16, "1.5e+16"),
            (123456.0, "123456.0"),
            (-2.5, "-2.5"),
            (0.0, "0.0"),
            (1e300, "1e+300"),
        ];
        for (x, want) in cases {
            assert_eq!(py_float(x), want, "{x}");
        }
    }

    #[test]
    fn a_table_keeps_its_order_and_writes_json_in_it() {
        let mut t = V::table();
        t.set("b", V::Int(1));
        t.set("a", V::Float(0.5));
        t.set("b", V::str("x\n"));
        assert_eq!(t.to_json(), r#"{"b":"x\n","a":0.5}"#);
        assert_eq!(show(&t), "a table");
        assert_eq!(show(&V::str("ü")), "\"ü\"");
    }
}
