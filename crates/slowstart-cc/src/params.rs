//! Algorithm parameters: how a scenario writes a value ([`ParamValue`]), how an algorithm
//! declares one ([`ParamInfo`]: name, doc, default, accepted values) and how it reads them
//! ([`Params`]), rejecting unknown keys and values its declaration does not accept.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::registry::{Algorithm, CcError, CcSpec};

/// A parameter value as written in a scenario: a number, a word or a boolean.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ParamValue {
    Bool(bool),
    Number(f64),
    Text(String),
}

impl fmt::Display for ParamValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamValue::Bool(b) => write!(f, "{b}"),
            ParamValue::Number(x) => write!(f, "{x}"),
            ParamValue::Text(s) => write!(f, "{s:?}"),
        }
    }
}

/// One declared parameter of an algorithm: the one place its default and accepted values are
/// written. [`Params`] checks values against it, and `slowstart.algorithms()` shows it.
#[derive(Clone, Copy, Debug)]
pub struct ParamInfo {
    pub name: &'static str,
    pub doc: &'static str,
    pub default: &'static str,
    pub accepts: Accepts,
}

impl ParamInfo {
    /// Accepted values as shown to the user (`"0.1..=0.95"`, `"both | ack_train | delay"`).
    pub fn accepted(&self) -> String {
        self.accepts.to_string()
    }
}

/// The values a parameter accepts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Accepts {
    /// A number in a range.
    Number(Range),
    /// `true` or `false`.
    Bool,
    /// One of these words.
    Word(&'static [&'static str]),
    /// One of these words, or a number in the range.
    WordOrNumber(&'static [&'static str], Range),
}

impl Accepts {
    /// A finite number in `min..=max`.
    pub const fn number(min: f64, max: f64) -> Self {
        Accepts::Number(Range::number(min, max))
    }

    /// A whole number in `min..=max`.
    pub const fn integer(min: u64, max: u64) -> Self {
        Accepts::Number(Range::integer(min, max))
    }
}

impl fmt::Display for Accepts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Accepts::Number(range) => write!(f, "{range}"),
            Accepts::Bool => f.write_str("true | false"),
            Accepts::Word(words) => f.write_str(&words.join(" | ")),
            Accepts::WordOrNumber(words, range) => write!(f, "{} | {range}", words.join(" | ")),
        }
    }
}

/// A closed range of finite numbers, whole ones only if `integer`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Range {
    pub min: f64,
    pub max: f64,
    pub integer: bool,
    /// A condition on other parameters that the algorithm checks itself, shown after the range
    /// (`"at most beta"`); empty if none.
    pub note: &'static str,
}

impl Range {
    pub const fn number(min: f64, max: f64) -> Self {
        Range {
            min,
            max,
            integer: false,
            note: "",
        }
    }

    pub const fn integer(min: u64, max: u64) -> Self {
        Range {
            min: min as f64,
            max: max as f64,
            integer: true,
            note: "",
        }
    }

    pub const fn with_note(self, note: &'static str) -> Self {
        Range { note, ..self }
    }

    pub fn contains(&self, x: f64) -> bool {
        x.is_finite() && x >= self.min && x <= self.max && (!self.integer || x.fract() == 0.0)
    }
}

impl fmt::Display for Range {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.integer {
            f.write_str("integer ")?;
        }
        write!(f, "{}..={}", self.min, self.max)?;
        if !self.note.is_empty() {
            write!(f, ", {}", self.note)?;
        }
        Ok(())
    }
}

/// Reads declared parameters out of a spec, rejecting unknown keys and values the declaration
/// does not accept. Absent keys read as the declared default. It notes what was read, so that a
/// given parameter the chosen rule never reads is refused ([`Params::refuse_unread`]).
pub struct Params<'a> {
    spec: &'a CcSpec,
    algo: &'static Algorithm,
    read: RefCell<BTreeSet<&'static str>>,
}

/// A parameter that takes a number or one of a few words.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum NumberOrWord {
    Number(f64),
    Word(&'static str),
}

impl<'a> Params<'a> {
    pub(crate) fn new(spec: &'a CcSpec, algo: &'static Algorithm) -> Result<Self, CcError> {
        for key in spec.params.keys() {
            if !algo.all_params().any(|p| p.name == key) {
                let names: Vec<&str> = algo.all_params().map(|p| p.name).collect();
                let accepted = if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                };
                return Err(CcError(format!(
                    "cc {}: unknown parameter '{key}' (accepted: {accepted})",
                    algo.name
                )));
            }
        }
        Ok(Self {
            spec,
            algo,
            read: RefCell::default(),
        })
    }

    /// The algorithm this spec names.
    pub fn algorithm(&self) -> &'static Algorithm {
        self.algo
    }

    fn info(&self, key: &str) -> &'static ParamInfo {
        self.algo
            .all_params()
            .find(|p| p.name == key)
            .expect("parameter read by an algorithm must be declared in ALGORITHMS")
    }

    fn bad(&self, key: &str, value: &ParamValue) -> CcError {
        CcError(format!(
            "cc {}: parameter '{key}' = {value} is not accepted (accepted: {})",
            self.algo.name,
            self.info(key).accepts
        ))
    }

    /// The value given for `key`, else its declared default, checked against the declaration.
    fn read(&self, key: &str) -> Result<Checked, CcError> {
        let info = self.info(key);
        self.read.borrow_mut().insert(info.name);
        let value = match self.spec.params.get(key) {
            Some(v) => v.clone(),
            None => info.default.parse().map_or_else(
                |_| ParamValue::Text(info.default.to_string()),
                ParamValue::Number,
            ),
        };
        let words = match info.accepts {
            Accepts::Word(words) | Accepts::WordOrNumber(words, _) => words,
            Accepts::Number(_) | Accepts::Bool => &[],
        };
        match (&info.accepts, &value) {
            (Accepts::Number(r) | Accepts::WordOrNumber(_, r), ParamValue::Number(x))
                if r.contains(*x) =>
            {
                Ok(Checked::Number(*x))
            }
            (Accepts::Bool, ParamValue::Bool(b)) => Ok(Checked::Bool(*b)),
            (Accepts::Bool, ParamValue::Text(t)) if t == "true" || t == "false" => {
                Ok(Checked::Bool(t == "true"))
            }
            (_, ParamValue::Text(t)) => match words.iter().find(|w| *w == t) {
                Some(w) => Ok(Checked::Word(w)),
                None => Err(self.bad(key, &value)),
            },
            _ => Err(self.bad(key, &value)),
        }
    }

    /// A number in its declared range, or the declared default.
    pub fn number(&self, key: &str) -> Result<f64, CcError> {
        match self.read(key)? {
            Checked::Number(x) => Ok(x),
            _ => self.misread(key, "a number"),
        }
    }

    /// A whole number in its declared range, or the declared default.
    pub fn integer(&self, key: &str) -> Result<u64, CcError> {
        match (self.info(key).accepts, self.read(key)?) {
            (Accepts::Number(r), Checked::Number(x)) if r.integer => Ok(x as u64),
            _ => self.misread(key, "an integer"),
        }
    }

    /// `true` or `false` (a boolean, or the words), or the declared default.
    pub fn boolean(&self, key: &str) -> Result<bool, CcError> {
        match self.read(key)? {
            Checked::Bool(b) => Ok(b),
            _ => self.misread(key, "a boolean"),
        }
    }

    /// One of the declared words, or the declared default.
    pub fn choice(&self, key: &str) -> Result<&'static str, CcError> {
        match self.read(key)? {
            Checked::Word(w) => Ok(w),
            _ => self.misread(key, "a word"),
        }
    }

    /// One of the declared words, or `default` when the key is absent (a default that depends
    /// on the algorithm, such as its slow-start rule).
    pub fn choice_or(&self, key: &str, default: &'static str) -> Result<&'static str, CcError> {
        if self.spec.params.contains_key(key) {
            self.choice(key)
        } else {
            Ok(default)
        }
    }

    /// An error naming the first given parameter that was never read: one that the choices in
    /// effect (`with`, e.g. `slow_start = "standard"`) leave unused, rather than ignored.
    pub fn refuse_unread(&self, with: &str) -> Result<(), CcError> {
        let read = self.read.borrow();
        match self.spec.params.keys().find(|k| !read.contains(k.as_str())) {
            Some(key) => Err(CcError(format!(
                "cc {}: parameter '{key}' is not read with {with} (remove it, or change that \
                 choice)",
                self.algo.name
            ))),
            None => Ok(()),
        }
    }

    /// A number in the declared range or one of the declared words, or the declared default.
    pub fn number_or_word(&self, key: &str) -> Result<NumberOrWord, CcError> {
        match self.read(key)? {
            Checked::Number(x) => Ok(NumberOrWord::Number(x)),
            Checked::Word(w) => Ok(NumberOrWord::Word(w)),
            Checked::Bool(_) => self.misread(key, "a number or a word"),
        }
    }

    fn misread<T>(&self, key: &str, as_what: &str) -> T {
        panic!(
            "cc {}: parameter '{key}' is declared as {}, read as {as_what}",
            self.algo.name,
            self.info(key).accepts
        )
    }
}

/// A value its declaration accepts.
enum Checked {
    Number(f64),
    Word(&'static str),
    Bool(bool),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::ALGORITHMS;

    #[test]
    fn accepted_text_is_derived_from_the_bounds() {
        assert_eq!(Accepts::number(0.000001, 0.1).to_string(), "0.000001..=0.1");
        assert_eq!(
            Accepts::integer(1, 1_000_000).to_string(),
            "integer 1..=1000000"
        );
        assert_eq!(Accepts::Bool.to_string(), "true | false");
        assert_eq!(Accepts::Word(&["min", "mean"]).to_string(), "min | mean");
        let at_most = Range::number(0.0, 1000.0).with_note("at most beta");
        assert_eq!(
            Accepts::Number(at_most).to_string(),
            "0..=1000, at most beta"
        );
        let flow = Accepts::WordOrNumber(&["flow"], Range::integer(1, 1000));
        assert_eq!(flow.to_string(), "flow | integer 1..=1000");
    }

    /// Every declared default is a value its declaration accepts (the slow-start rule's default
    /// is the algorithm's own, which must be one of the rules).
    #[test]
    fn every_declared_default_is_accepted() {
        for algo in ALGORITHMS {
            let spec = CcSpec::named(algo.name);
            let params = Params::new(&spec, algo).unwrap();
            for p in algo.all_params() {
                if let Some(rule) = algo.slow_start.filter(|_| p.name == "slow_start") {
                    assert!(matches!(p.accepts, Accepts::Word(w) if w.contains(&rule)));
                    continue;
                }
                let read = params.read(p.name);
                assert!(
                    read.is_ok(),
                    "{} {}: default {}",
                    algo.name,
                    p.name,
                    p.default
                );
            }
        }
    }

    #[test]
    fn integers_must_be_whole() {
        let r = Range::integer(1, 64);
        assert!(r.contains(1.0) && r.contains(64.0));
        assert!(!r.contains(2.5) && !r.contains(0.0) && !r.contains(65.0));
        assert!(!Range::number(0.0, 1.0).contains(f64::NAN));
    }
}
