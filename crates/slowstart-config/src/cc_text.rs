//! The `cc` string grammar: `name`, `name:key=value,...`, and a user's controller,
//! `PATH.py:Class[:key=value,...]`, `PATH.wasm[:key=value,...]` or `PATH.bpf.o[:key=value,...]`. One parser for the scenario
//! loader (scenario/cc.rs), the quinn adapter and anything else that reads a spec.
//!
//! A value is `true`/`false`, an integer or a number as Python's `int()`/`float()` read
//! ASCII text (underscores between digits, `1e3`, `.5`), else a word; the integer/number
//! distinction is kept so that a config written from it is the same JSON as before.

use std::fmt;

use slowstart_cc::registry::ParamValue;
use slowstart_cc::CcSpec;

use crate::SimError;

/// What a `cc` value may be, for error messages.
pub const CC_HELP: &str = "an algorithm such as \"reno\", \"lss:max_ssthresh=100\" or \
    {name = \"lss\", ...}, or your own: \"my_start.py:MyStart\", \"my_start.wasm\" or \
    \"my_start.bpf.o\"";

/// A parameter's value as the grammar reads it.
#[derive(Clone, Debug, PartialEq)]
pub enum Word {
    Bool(bool),
    /// An integer literal (beyond `i128` it is read as a [`Word::Number`]).
    Integer(i128),
    /// Any other number, finite.
    Number(f64),
    Text(String),
}

impl From<&Word> for ParamValue {
    fn from(word: &Word) -> Self {
        match word {
            Word::Bool(b) => ParamValue::Bool(*b),
            Word::Integer(i) => ParamValue::Number(*i as f64),
            Word::Number(x) => ParamValue::Number(*x),
            Word::Text(s) => ParamValue::Text(s.clone()),
        }
    }
}

/// A user's controller as a `cc` string names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GuestRef {
    /// `PATH.py:Class`
    Python { path: String, class: String },
    /// `PATH.wasm`
    Wasm { path: String },
    /// `PATH.bpf.o`: a Linux BPF `tcp_congestion_ops` object.
    Bpf { path: String },
}

impl fmt::Display for GuestRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GuestRef::Python { path, class } => write!(f, "{path}:{class}"),
            GuestRef::Wasm { path } | GuestRef::Bpf { path } => f.write_str(path),
        }
    }
}

impl GuestRef {
    /// The reference at the start of `text` and what follows its colon (`None` without one):
    /// the first `.py:Class` that ends the text or is followed by `:`, else the first `.wasm`
    /// or `.bpf.o` that does (a path may hold either: `a.py:b/c.py:C`).
    pub fn split(text: &str) -> Option<(GuestRef, Option<&str>)> {
        for (at, _) in text.match_indices(".py:").filter(|(at, _)| *at > 0) {
            let after = &text[at + 4..];
            let end = after
                .char_indices()
                .find(|&(_, c)| !(c.is_alphanumeric() || c == '_'))
                .map_or(after.len(), |(i, _)| i);
            let starts = after
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
            let rest = &after[end..];
            if starts && (rest.is_empty() || rest.starts_with(':')) {
                let guest = GuestRef::Python {
                    path: text[..at + 3].to_string(),
                    class: after[..end].to_string(),
                };
                return Some((guest, rest.strip_prefix(':')));
            }
        }
        let mut found: Option<(usize, GuestRef, Option<&str>)> = None;
        for (suffix, bpf) in [(".wasm", false), (".bpf.o", true)] {
            for (at, _) in text.match_indices(suffix).filter(|(at, _)| *at > 0) {
                let end = at + suffix.len();
                let rest = &text[end..];
                if rest.is_empty() || rest.starts_with(':') {
                    let path = text[..end].to_string();
                    let guest = if bpf {
                        GuestRef::Bpf { path }
                    } else {
                        GuestRef::Wasm { path }
                    };
                    if found.as_ref().is_none_or(|f| at < f.0) {
                        found = Some((at, guest, rest.strip_prefix(':')));
                    }
                    break;
                }
            }
        }
        found.map(|(_, guest, rest)| (guest, rest))
    }
}

/// A parsed `cc` string: a built-in's name or a user's controller, and the parameters in the
/// order given.
#[derive(Clone, Debug, PartialEq)]
pub struct CcText {
    /// The algorithm's name, or the reference as written (`x.py:Cls`, `x.wasm`).
    pub name: String,
    pub guest: Option<GuestRef>,
    pub params: Vec<(String, Word)>,
}

impl CcText {
    /// The spec the controllers are built from (a guest's reference as its name).
    pub fn to_spec(&self) -> CcSpec {
        let mut spec = CcSpec::named(&self.name);
        spec.params = self
            .params
            .iter()
            .map(|(k, w)| (k.clone(), w.into()))
            .collect();
        spec
    }
}

/// Parses a `cc` string; an error names `field` and what is accepted.
pub fn parse_cc(value: &str, field: &str) -> Result<CcText, SimError> {
    let text = py_strip(value);
    let shown = show(value);
    if let Some((guest, rest)) = GuestRef::split(text) {
        if text.ends_with(':') {
            return Err(SimError(format!(
                "{field}: nothing after \":\" (expected \"{guest}\" or \"{guest}:key=value,...\"), \
                 got {shown}"
            )));
        }
        let params = parse_params(rest.unwrap_or(""), field, &shown)?;
        check_finite(&params, field)?;
        return Ok(CcText {
            name: guest.to_string(),
            guest: Some(guest),
            params,
        });
    }
    let (name, rest) = text
        .split_once(':')
        .map_or((text, None), |(n, r)| (n, Some(r)));
    if rest.is_some_and(|r| py_strip(r).is_empty()) {
        return Err(SimError(format!(
            "{field}: nothing after \":\" (expected \"name\" or \"name:key=value,...\"), got {shown}"
        )));
    }
    let params = parse_params(rest.unwrap_or(""), field, &shown)?;
    let name = py_strip(name);
    if name.is_empty() {
        return Err(SimError(format!(
            "{field}: expected {CC_HELP}, got {shown}"
        )));
    }
    check_finite(&params, field)?;
    Ok(CcText {
        name: name.to_string(),
        guest: None,
        params,
    })
}

/// The `key=value,...` after a name's colon.
fn parse_params(rest: &str, field: &str, shown: &str) -> Result<Vec<(String, Word)>, SimError> {
    let mut params: Vec<(String, Word)> = Vec::new();
    if py_strip(rest).is_empty() {
        return Ok(params);
    }
    for item in rest.split(',') {
        let (key, word) = item.split_once('=').unwrap_or((item, ""));
        let (key, word) = (py_strip(key), py_strip(word));
        if !item.contains('=') || key.is_empty() || word.is_empty() {
            return Err(SimError(format!(
                "{field}: expected \"name\" or \"name:key=value,...\", got {shown}"
            )));
        }
        if params.iter().any(|(k, _)| k == key) {
            return Err(SimError(format!(
                "{field}: parameter {} is given twice",
                show(key)
            )));
        }
        params.push((key.to_string(), read_word(word)));
    }
    Ok(params)
}

/// A parameter's number must be finite (a config is JSON, which has no NaN or infinity).
fn check_finite(params: &[(String, Word)], field: &str) -> Result<(), SimError> {
    for (key, word) in params {
        if let Word::Number(x) = word {
            if !x.is_finite() {
                let x = if x.is_nan() {
                    "nan"
                } else if *x > 0.0 {
                    "inf"
                } else {
                    "-inf"
                };
                return Err(SimError(format!(
                    "{field}: parameter {key} must be a finite number, got {x}"
                )));
            }
        }
    }
    Ok(())
}

/// `true`/`false`, an integer, a number (ASCII only, as Python's `int` and `float` read it),
/// else the word itself.
fn read_word(word: &str) -> Word {
    match word {
        "true" => return Word::Bool(true),
        "false" => return Word::Bool(false),
        _ if !word.is_ascii() || !underscores_between_digits(word) => {
            return Word::Text(word.to_string())
        }
        _ => {}
    }
    let plain: String = word.chars().filter(|&c| c != '_').collect();
    let digits = plain.strip_prefix(['+', '-']).unwrap_or(&plain);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        if let Ok(i) = plain.parse::<i128>() {
            return Word::Integer(i);
        }
    }
    match plain.parse::<f64>() {
        Ok(x) => Word::Number(x),
        Err(_) => Word::Text(word.to_string()),
    }
}

/// PEP 515: an underscore only between two digits.
fn underscores_between_digits(word: &str) -> bool {
    let b = word.as_bytes();
    (0..b.len()).all(|i| {
        b[i] != b'_'
            || (i > 0 && i + 1 < b.len() && b[i - 1].is_ascii_digit()) && b[i + 1].is_ascii_digit()
    })
}

/// Python's `str.strip()`: Unicode white space and the ASCII separators U+001C..U+001F.
fn py_strip(s: &str) -> &str {
    s.trim_matches(|c: char| c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c))
}

/// A string as the loader shows a value in a message: JSON, non-ASCII kept.
fn show(s: &str) -> String {
    serde_json::to_string(s).expect("a string is JSON")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(text: &str) -> CcText {
        parse_cc(text, "flow.0.cc").unwrap_or_else(|e| panic!("{text:?}: {e}"))
    }

    fn err(text: &str) -> String {
        parse_cc(text, "flow.0.cc").unwrap_err().0
    }

    #[test]
    fn names_and_parameters() {
        let spec = ok(" lss:max_ssthresh=100 ");
        assert_eq!(spec.name, "lss");
        assert_eq!(spec.guest, None);
        assert_eq!(
            spec.params,
            vec![("max_ssthresh".into(), Word::Integer(100))]
        );
        let spec = ok("x:on=true, off=false,mode=fast,b=0.3,e=1e3,u=1_000,n=-2,eq=a=b");
        let words: Vec<_> = spec.params.iter().map(|(_, w)| w.clone()).collect();
        assert_eq!(
            words,
            vec![
                Word::Bool(true),
                Word::Bool(false),
                Word::Text("fast".into()),
                Word::Number(0.3),
                Word::Number(1000.0),
                Word::Integer(1000),
                Word::Integer(-2),
                Word::Text("a=b".into()),
            ]
        );
        assert_eq!(ok("reno").params, vec![]);
    }

    #[test]
    fn words_that_are_not_numbers() {
        // Python's int() and float() refuse these, so they stay words.
        for w in [
            "1__0", "_1", "1_", "1_.5", "0x10", "１２", "True", "1e", ".",
        ] {
            assert_eq!(read_word(w), Word::Text(w.into()), "{w}");
        }
        assert_eq!(read_word(".5"), Word::Number(0.5));
        assert_eq!(read_word("5."), Word::Number(5.0));
        assert_eq!(read_word("+7"), Word::Integer(7));
        assert_eq!(read_word("1_0.2_5"), Word::Number(10.25));
    }

    #[test]
    fn the_loaders_error_lines() {
        let shape = |v: &str| {
            format!(
                "flow.0.cc: expected \"name\" or \"name:key=value,...\", got {}",
                show(v)
            )
        };
        for bad in ["lss:max_ssthresh", "lss:=3", "lss:a=", "lss:a=1,,b=2"] {
            assert_eq!(err(bad), shape(bad));
        }
        for bad in ["", " ", ":a=1"] {
            assert_eq!(
                err(bad),
                format!("flow.0.cc: expected {CC_HELP}, got {}", show(bad))
            );
        }
        assert_eq!(
            err("reno: "),
            "flow.0.cc: nothing after \":\" (expected \"name\" or \"name:key=value,...\"), \
             got \"reno: \""
        );
        assert_eq!(
            err("cubic:beta=0.5,beta=0.6"),
            "flow.0.cc: parameter \"beta\" is given twice"
        );
        assert_eq!(
            err("cubic:beta=inf"),
            "flow.0.cc: parameter beta must be a finite number, got inf"
        );
        assert_eq!(
            err("cubic:beta=-1e400"),
            "flow.0.cc: parameter beta must be a finite number, got -inf"
        );
        assert_eq!(
            err("cubic:beta=NaN"),
            "flow.0.cc: parameter beta must be a finite number, got nan"
        );
        assert!(err("\"\t:").ends_with(r#"got "\"\t:""#), "{}", err("\"\t:"));
    }

    #[test]
    fn a_users_controller() {
        let spec = ok("ctl/my_start.py:MyStart:gain=2");
        let guest = GuestRef::Python {
            path: "ctl/my_start.py".into(),
            class: "MyStart".into(),
        };
        assert_eq!(spec.guest, Some(guest));
        assert_eq!(spec.name, "ctl/my_start.py:MyStart");
        assert_eq!(spec.params, vec![("gain".into(), Word::Integer(2))]);
        // A path that holds `.py:` itself: the first reference that fits.
        let spec = ok("a.py:b/c.py:C");
        assert_eq!(spec.name, "a.py:b/c.py:C");
        assert!(
            matches!(spec.guest, Some(GuestRef::Python { ref path, .. }) if path == "a.py:b/c.py")
        );
        let spec = ok("x.wasm");
        assert_eq!(
            spec.guest,
            Some(GuestRef::Wasm {
                path: "x.wasm".into()
            })
        );
        assert_eq!(ok("d.wasm/x.wasm:rise=0.25").name, "d.wasm/x.wasm");
        assert_eq!(
            err("x.py:Cls:"),
            "flow.0.cc: nothing after \":\" (expected \"x.py:Cls\" or \"x.py:Cls:key=value,...\"), \
             got \"x.py:Cls:\""
        );
        assert_eq!(
            err("x.wasm:r"),
            "flow.0.cc: expected \"name\" or \"name:key=value,...\", got \"x.wasm:r\""
        );
        // Not references: no class, a class that is no identifier, nothing before the suffix.
        assert_eq!(ok("x.py").guest, None);
        assert!(err("x.py:1C").starts_with("flow.0.cc: expected \"name\""));
        assert_eq!(ok(".wasm").guest, None);
        assert_eq!(ok("x.wasmy").guest, None);
    }

    #[test]
    fn a_bpf_object() {
        let spec = ok("build/cubic.bpf.o:beta=819,hystart=0");
        assert_eq!(
            spec.guest,
            Some(GuestRef::Bpf {
                path: "build/cubic.bpf.o".into()
            })
        );
        assert_eq!(spec.name, "build/cubic.bpf.o");
        assert_eq!(
            spec.params,
            vec![
                ("beta".into(), Word::Integer(819)),
                ("hystart".into(), Word::Integer(0))
            ]
        );
        // The first suffix that ends the path wins, whichever kind it is.
        assert_eq!(
            ok("a.wasm/b.bpf.o").guest.map(|g| g.to_string()).as_deref(),
            Some("a.wasm/b.bpf.o")
        );
        assert!(matches!(
            ok("a.bpf.o/b.wasm").guest,
            Some(GuestRef::Wasm { .. })
        ));
        assert_eq!(ok("x.bpf.old").guest, None);
        assert_eq!(ok(".bpf.o").guest, None);
    }

    #[test]
    fn a_spec_for_the_controllers() {
        let spec = ok("cubic:slow_start=hystart++, beta=0.5,fast_convergence=false,n=3").to_spec();
        assert_eq!(spec.name, "cubic");
        assert_eq!(
            spec.params["slow_start"],
            ParamValue::Text("hystart++".into())
        );
        assert_eq!(spec.params["beta"], ParamValue::Number(0.5));
        assert_eq!(spec.params["n"], ParamValue::Number(3.0));
        assert_eq!(spec.params["fast_convergence"], ParamValue::Bool(false));
    }
}
