//! A `[flow.program]`: a real server and client pair, its commands and placeholders.

use super::*;

/// A server and a client command (argument vectors, no shell) run in the two namespaces of a
/// real run, the emulated path between them. `{name}` in an argument is one of
/// [`PROGRAM_PLACEHOLDERS`], replaced at run time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProgramConfig {
    /// Started first; the client starts at the flow's `start` once the server listens.
    pub server: Vec<String>,
    /// Its exit (status 0) ends the flow.
    pub client: Vec<String>,
    /// Which of the two sends the flow's data, and so runs in the sender's namespace.
    #[serde(default)]
    pub sends: ProgramEnd,
    /// The port the server listens on; `None`: the testbed's own for the flow (5001 + index).
    #[serde(default)]
    pub port: Option<u16>,
    /// Whose exit ends the flow: the client's (the server is then stopped), or both (the
    /// server exits by itself too: an upload's receiver that stops at the end of the data,
    /// whose client may exit while its last bytes are still on the path).
    #[serde(default)]
    pub ends: ProgramEnds,
}

/// Whose exit ends a program pair's flow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProgramEnds {
    #[default]
    Client,
    Both,
}

impl ProgramEnds {
    pub const WORDS: &'static [(&'static str, Self)] =
        &[("client", Self::Client), ("both", Self::Both)];
}

impl<'de> Deserialize<'de> for ProgramEnds {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        from_words(d, Self::WORDS)
    }
}

/// One end of a program pair.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProgramEnd {
    /// A download: HTTP, a QUIC client fetching a resource, `iperf3 -R`.
    #[default]
    Server,
    /// An upload: `iperf3` without `-R`, an HTTP POST.
    Client,
}

impl ProgramEnd {
    pub const WORDS: &'static [(&'static str, Self)] =
        &[("server", Self::Server), ("client", Self::Client)];
}

impl<'de> Deserialize<'de> for ProgramEnd {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        from_words(d, Self::WORDS)
    }
}

/// What a program's `{name}` stands for at run time (python/slowstart/real/program.py fills
/// them in). A `{word}` not listed is refused, as a likely misspelling.
pub const PROGRAM_PLACEHOLDERS: &[(&str, &str)] = &[
    ("addr", "this end's address"),
    ("peer", "the other end's address"),
    ("port", "the server's port"),
    (
        "cc",
        "the flow's congestion control as Linux and ngtcp2 name it (reno, cubic, bbr)",
    ),
    ("size", "the flow's size in bytes"),
    (
        "dir",
        "the flow's folder, shared by both ends: `data` there holds `size` bytes",
    ),
    ("file", "that file, `{dir}/data`"),
    (
        "out",
        "a folder of this end's own, for what it writes (kept with `--out`)",
    ),
    (
        "qlog",
        "a folder for qlog files (`compare` overlays their cwnd)",
    ),
    ("key", "a self-signed private key (PEM) made for the run"),
    ("cert", "its certificate (PEM, CN slowstart)"),
];

/// Longest program command line, in arguments.
pub const MAX_PROGRAM_ARGS: usize = 4096;

impl ProgramConfig {
    /// Each command has a program and only known placeholders; the port is not 0.
    pub fn validate(&self, at: &str) -> Result<(), SimError> {
        for (end, argv) in [("server", &self.server), ("client", &self.client)] {
            let field = format!("{at}.{end}");
            if argv.first().is_none_or(|a| a.is_empty()) {
                return Err(err(format!(
                    "{field}: expected a command line such as \"curl -o {{out}}/data \
                     http://{{peer}}:{{port}}/data\", got none"
                )));
            }
            if argv.len() > MAX_PROGRAM_ARGS {
                return Err(err(format!(
                    "{field}: at most {MAX_PROGRAM_ARGS} arguments, got {}",
                    argv.len()
                )));
            }
            for arg in argv {
                for name in placeholders(arg) {
                    if !PROGRAM_PLACEHOLDERS.iter().any(|(n, _)| *n == name) {
                        let known: Vec<String> = PROGRAM_PLACEHOLDERS
                            .iter()
                            .map(|(n, _)| format!("{{{n}}}"))
                            .collect();
                        return Err(err(format!(
                            "{field}: unknown placeholder {{{name}}} (accepted: {})",
                            known.join(", ")
                        )));
                    }
                }
            }
        }
        if self.port == Some(0) {
            return Err(err(format!("{at}.port: must be in 1..=65535, got 0")));
        }
        Ok(())
    }
}

/// The `{word}` placeholders in `arg`: a brace, lowercase letters and `_`, a brace.
pub fn placeholders(arg: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = arg;
    while let Some(open) = rest.find('{') {
        rest = &rest[open + 1..];
        let word = rest
            .find(|c: char| !(c.is_ascii_lowercase() || c == '_'))
            .map_or(rest, |end| &rest[..end]);
        if !word.is_empty() && rest[word.len()..].starts_with('}') {
            out.push(word);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_pair_names_its_commands_and_known_placeholders_only() {
        let program = |server: &str, client: &str, extra: &str| {
            let text = format!(r#"{{"server": {server}, "client": {client}{extra}}}"#);
            serde_json::from_str::<ProgramConfig>(&text)
        };
        let p = program(r#"["srv", "{addr}", "{port}"]"#, r#"["cli", "{peer}"]"#, "").unwrap();
        assert_eq!(p.sends, ProgramEnd::Server);
        assert_eq!(p.validate("flow.0.program"), Ok(()));
        let typo = program(r#"["srv", "--to={peer_addr}"]"#, r#"["cli"]"#, "").unwrap();
        let e = typo.validate("flow.0.program").unwrap_err().0;
        assert!(
            e.starts_with(
                "flow.0.program.server: unknown placeholder {peer_addr} (accepted: {addr}"
            ),
            "{e}"
        );
        // JSON or shell braces are not placeholders.
        assert_eq!(placeholders(r#"{"a": 1} ${HOME} {} {x}"#), ["x"]);
        let empty = program("[]", r#"["cli"]"#, "").unwrap();
        let e = empty.validate("flow.1.program").unwrap_err().0;
        assert!(
            e.starts_with("flow.1.program.server: expected a command line"),
            "{e}"
        );
        let e = program(r#"["s"]"#, r#"["c"]"#, r#", "sends": "both""#).unwrap_err();
        assert!(
            e.to_string().contains("expected one of server, client"),
            "{e}"
        );
        let upload = program(r#"["s"]"#, r#"["c"]"#, r#", "sends": "client""#).unwrap();
        assert_eq!(upload.sends, ProgramEnd::Client);
        assert!(program(r#"["s"]"#, r#"["c"]"#, r#", "shell": true"#).is_err());
    }
}
