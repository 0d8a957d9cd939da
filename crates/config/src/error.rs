//! Errors and warnings.

use std::fmt;
use std::path::PathBuf;

/// Where a piece of configuration came from, for error messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// A machine compiled into the binary (`configs/NAME.toml`).
    Builtin(String),
    /// A file read from disk.
    File(PathBuf),
    /// TOML text handed to [`crate::Config::from_toml_str`].
    Text,
    /// One `--set KEY=VALUE` override (the whole argument).
    Set(String),
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Builtin(n) => write!(f, "built-in config '{n}'"),
            Origin::File(p) => write!(f, "file '{}'", p.display()),
            Origin::Text => f.write_str("config text"),
            Origin::Set(a) => write!(f, "--set '{a}'"),
        }
    }
}

/// One semantic problem found by [`crate::Config::validate`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The dotted key (or section, e.g. `memory.nvmm`) at fault.
    pub key: String,
    /// What is wrong and what to do about it.
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.key, self.message)
    }
}

/// Something legal but suspicious, returned by [`crate::Config::validate`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// The dotted key (or section) concerned.
    pub key: String,
    /// What is suspicious.
    pub message: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.key, self.message)
    }
}

/// Everything that can go wrong loading or validating a configuration.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A name without `/` or `.toml` that is not a built-in machine.
    #[error(
        "unknown machine '{name}': the built-in machines are {}; to load your own file, pass a path (containing '/' or ending in '.toml')",
        .available.join(", ")
    )]
    UnknownMachine {
        /// The name asked for.
        name: String,
        /// The built-in machine names.
        available: Vec<String>,
    },

    /// A config file could not be read.
    #[error("cannot read config file '{}': {source}; check the path, or use a built-in machine name", .path.display())]
    Io {
        /// The path tried.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },

    /// The text is not valid TOML.
    #[error("{origin} is not valid TOML: {message}")]
    Syntax {
        /// Where the text came from.
        origin: Origin,
        /// The parser's message (with line and column).
        message: String,
    },

    /// A key that the schema does not have.
    #[error("unknown config key '{key}'{} in {origin}", did_you_mean(.suggestion))]
    UnknownKey {
        /// The offending dotted key.
        key: String,
        /// The nearest valid key, if any is close.
        suggestion: Option<String>,
        /// Where it came from.
        origin: Origin,
    },

    /// A value of the wrong TOML type.
    #[error("config key '{key}' expects {expected}, but {origin} gives {found}")]
    Type {
        /// The dotted key.
        key: String,
        /// What the key takes, e.g. "a non-negative integer".
        expected: String,
        /// What was given, e.g. `a string ("four")`.
        found: String,
        /// Where it came from.
        origin: Origin,
    },

    /// A value of the right type that is not acceptable (an unknown enum
    /// name, a missing required key, an out-of-range number...).
    #[error("config key '{key}' in {origin}: {message}")]
    Value {
        /// The dotted key (or section).
        key: String,
        /// What is wrong and what to do.
        message: String,
        /// Where it came from.
        origin: Origin,
    },

    /// A `--set` argument that is not `KEY=VALUE` or targets a section.
    #[error("bad --set '{arg}': {message}")]
    Override {
        /// The whole argument.
        arg: String,
        /// What is wrong and what to do.
        message: String,
    },

    /// [`crate::Config::validate`] found problems; all are listed.
    #[error("invalid configuration ({} problem{}):{}", .problems.len(), if .problems.len() == 1 { "" } else { "s" }, list(.problems))]
    Invalid {
        /// Every problem found.
        problems: Vec<Problem>,
    },
}

fn did_you_mean(s: &Option<String>) -> String {
    match s {
        Some(s) => format!(" (did you mean '{s}'?)"),
        None => " (see docs/config.md for the valid keys)".to_string(),
    }
}

fn list(problems: &[Problem]) -> String {
    problems.iter().map(|p| format!("\n  - {p}")).collect()
}
