//! Algorithm parameters: how a scenario writes a value ([`ParamValue`]), how an algorithm
//! declares one ([`ParamInfo`]: name, doc, default, accepted values) and how it reads them
//! ([`Params`]), rejecting unknown keys and values its declaration does not accept.

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

/// One declared parameter of an algorithm.
#[derive(Clone, Copy, Debug)]
pub struct ParamInfo {
    pub name: &'static str,
    pub doc: &'static str,
    pub default: &'static str,
    /// Accepted values, as shown to the user (`"> 0"`, `"standard | hystart"`).
    pub accepted: &'static str,
}

/// Reads declared parameters out of a spec, rejecting unknown keys and bad values.
pub struct Params<'a> {
    spec: &'a CcSpec,
    algo: &'static Algorithm,
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
        Ok(Self { spec, algo })
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
            self.info(key).accepted
        ))
    }

    /// A number within `[min, max]`, or the declared default.
    pub fn number(&self, key: &str, min: f64, max: f64) -> Result<f64, CcError> {
        let info = self.info(key);
        match self.spec.params.get(key) {
            None => Ok(info.default.parse().expect("declared default parses")),
            Some(v @ ParamValue::Number(x)) => {
                if x.is_finite() && *x >= min && *x <= max {
                    Ok(*x)
                } else {
                    Err(self.bad(key, v))
                }
            }
            Some(v) => Err(self.bad(key, v)),
        }
    }

    /// The algorithm this spec names.
    pub fn algorithm(&self) -> &'static Algorithm {
        self.algo
    }

    /// One of `choices`, or `default` when the key is absent.
    pub fn choice_or(
        &self,
        key: &str,
        choices: &[&'static str],
        default: &'static str,
    ) -> Result<&'static str, CcError> {
        match self.spec.params.get(key) {
            None => Ok(default),
            Some(ParamValue::Text(word)) => choices
                .iter()
                .copied()
                .find(|c| c == word)
                .ok_or_else(|| self.bad(key, &ParamValue::Text(word.clone()))),
            Some(v) => Err(self.bad(key, v)),
        }
    }

    /// One of `choices`, or the declared default.
    pub fn choice(&self, key: &str, choices: &[&'static str]) -> Result<&'static str, CcError> {
        let info = self.info(key);
        let word = match self.spec.params.get(key) {
            None => info.default,
            Some(ParamValue::Text(s)) => s.as_str(),
            Some(v) => return Err(self.bad(key, v)),
        };
        choices
            .iter()
            .copied()
            .find(|c| *c == word)
            .ok_or_else(|| self.bad(key, &ParamValue::Text(word.to_string())))
    }
}

/// A parameter that takes a number or one of a few words.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum NumberOrWord {
    Number(f64),
    Word(&'static str),
}

impl Params<'_> {
    /// An integer within `[min, max]`, or the declared default.
    pub fn integer(&self, key: &str, min: u64, max: u64) -> Result<u64, CcError> {
        let x = self.number(key, min as f64, max as f64)?;
        if x.fract() != 0.0 {
            return Err(self.bad(key, &ParamValue::Number(x)));
        }
        Ok(x as u64)
    }

    /// `true` or `false` (a boolean, or the words), or the declared default.
    pub fn boolean(&self, key: &str) -> Result<bool, CcError> {
        let value = match self.spec.params.get(key) {
            None => ParamValue::Text(self.info(key).default.to_string()),
            Some(v) => v.clone(),
        };
        match &value {
            ParamValue::Bool(b) => Ok(*b),
            ParamValue::Text(t) if t == "true" || t == "false" => Ok(t == "true"),
            _ => Err(self.bad(key, &value)),
        }
    }

    /// A number within `[min, max]` or one of `words`, or the declared default.
    pub fn number_or_word(
        &self,
        key: &str,
        min: f64,
        max: f64,
        words: &[&'static str],
    ) -> Result<NumberOrWord, CcError> {
        let value = match self.spec.params.get(key) {
            Some(v) => v.clone(),
            None => {
                let default = self.info(key).default;
                default.parse().map_or_else(
                    |_| ParamValue::Text(default.to_string()),
                    ParamValue::Number,
                )
            }
        };
        match &value {
            ParamValue::Number(x) if x.is_finite() && *x >= min && *x <= max => {
                Ok(NumberOrWord::Number(*x))
            }
            ParamValue::Text(t) => words
                .iter()
                .copied()
                .find(|w| w == t)
                .map(NumberOrWord::Word)
                .ok_or_else(|| self.bad(key, &value)),
            _ => Err(self.bad(key, &value)),
        }
    }
}
