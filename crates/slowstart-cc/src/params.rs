//! What a controller is built from: its spec ([`CcSpec`], a name and parameters), the flow's
//! [`CommonParams`], and the parameters themselves: how a scenario writes a value
//! ([`ParamValue`]), how an algorithm declares one ([`ParamInfo`]: name, doc, default, accepted
//! values; an [`Algorithm`] lists them) and how it reads them ([`Params`]), rejecting unknown
//! keys and values its declaration does not accept, with a [`CcError`] naming the field.
//!
//! Below every algorithm module; the [`crate::registry`] above them all lists and builds them.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::{Deserialize, Serialize};

/// A parameter value as written in a scenario: a number, a word or a boolean.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ParamValue {
    /// `true` or `false`.
    Bool(bool),
    /// A number, whole or not.
    Number(f64),
    /// A word, such as a rule's name.
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
    /// The key, as written in a spec (`max_ssthresh`).
    pub name: &'static str,
    /// One line on what it sets, with its unit.
    pub doc: &'static str,
    /// The default, written as a spec would write it.
    pub default: &'static str,
    /// The values a spec may give.
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
    /// Smallest accepted value.
    pub min: f64,
    /// Largest accepted value.
    pub max: f64,
    /// Whether only whole numbers are accepted.
    pub integer: bool,
    /// A condition on other parameters that the algorithm checks itself, shown after the range
    /// (`"at most beta"`); empty if none.
    pub note: &'static str,
}

impl Range {
    /// Finite numbers in `min..=max`.
    pub const fn number(min: f64, max: f64) -> Self {
        Range {
            min,
            max,
            integer: false,
            note: "",
        }
    }

    /// Whole numbers in `min..=max`.
    pub const fn integer(min: u64, max: u64) -> Self {
        Range {
            min: min as f64,
            max: max as f64,
            integer: true,
            note: "",
        }
    }

    /// The same range with `note` shown after it.
    pub const fn with_note(self, note: &'static str) -> Self {
        Range { note, ..self }
    }

    /// Whether `x` is finite, in the range, and whole if the range is `integer`.
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
    /// The number given.
    Number(f64),
    /// One of the declared words.
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

/// An algorithm name with its parameters, e.g. `{name = "lss", max_ssthresh = 100}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CcSpec {
    /// The algorithm's registry name (`cubic`, `hystart-pb`) or a user controller's name.
    pub name: String,
    /// Its parameters by key, each given at most once.
    #[serde(default, deserialize_with = "each_key_once")]
    pub params: BTreeMap<String, ParamValue>,
    /// Where a user's controller came from (the loader writes it; [`crate::external`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guest: Option<GuestSource>,
}

/// A user's controller as the loader found it: `kind` is `python`, `wasm` or `bpf`, `path` the file
/// (empty for a class given as an object) and `sha256` its content's hash.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GuestSource {
    /// `python`, `wasm` or `bpf`.
    pub kind: String,
    /// The file it was loaded from, empty for a class given as an object.
    pub path: String,
    /// SHA-256 of the file's content, in hex.
    pub sha256: String,
}

/// A map whose keys are distinct: a repeated parameter is refused, not won by its last value.
fn each_key_once<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<BTreeMap<String, ParamValue>, D::Error> {
    struct Visitor;
    impl<'de> serde::de::Visitor<'de> for Visitor {
        type Value = BTreeMap<String, ParamValue>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a table of parameters, each given once")
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(
            self,
            mut map: A,
        ) -> Result<Self::Value, A::Error> {
            let mut params = BTreeMap::new();
            while let Some((key, value)) = map.next_entry::<String, ParamValue>()? {
                if params.contains_key(&key) {
                    return Err(serde::de::Error::custom(format_args!(
                        "parameter '{key}' is given twice"
                    )));
                }
                params.insert(key, value);
            }
            Ok(params)
        }
    }
    d.deserialize_map(Visitor)
}

/// Settings every controller gets from the flow, not from its own parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CommonParams {
    /// Sender maximum segment size, payload bytes.
    pub mss: u64,
    /// Initial congestion window in segments (RFC 6928 allows 10).
    pub initcwnd: u64,
    /// Appropriate byte counting (RFC 3465) when true, per-ACK counting when false.
    pub abc: bool,
    /// Seed for controllers that randomise (BBR's ProbeBW); the transport derives it from the
    /// scenario seed, so runs stay deterministic.
    pub seed: u64,
    /// The transport paces its sending (Linux `sk_pacing_status != SK_PACING_NONE`): HyStart's
    /// ACK-train threshold is then the whole min RTT (tcp_cubic.c `hystart_update`).
    pub paced: bool,
}

/// Why a controller could not be built; the message names the field and what is accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CcError(pub String);

impl fmt::Display for CcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for CcError {}

/// A registered algorithm: its CLI name, a one-line summary and its source.
#[derive(Clone, Copy, Debug)]
pub struct Algorithm {
    /// The CLI name (`reno`, `cubic`, `hystart-pb`).
    pub name: &'static str,
    /// One line on what it does.
    pub summary: &'static str,
    /// The specification or code it follows (RFC, paper, Linux file).
    pub source: &'static str,
    /// Its own declared parameters (the slow-start rules' are added for a loss-based one).
    pub params: &'static [ParamInfo],
    /// Loss-based algorithms take a slow-start rule (`slow_start = ...`, see
    /// [`crate::slow_start::SLOW_START_PARAMS`]); this is their default rule.
    pub slow_start: Option<&'static str>,
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
