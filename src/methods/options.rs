//! The options string every method takes: `key=value, key=value`, and the declaration each
//! function makes of its options ([`Options`]): name, kind (type and range), default and doc,
//! once, as data. The parser, its errors, the usage line of the SQL signature and `\df`'s
//! option list all come from that declaration, the way DataFusion derives a function's
//! `Documentation` from one builder.

use crate::error::{AnonError, Result};

/// What an option's value is, and the values it may take.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Kind {
    /// A whole number in `[min, max]`.
    Int { min: u64, max: u64 },
    /// A finite number in `[min, max]`.
    Float { min: f64, max: f64 },
    /// A percentage of the table in `[0, 100]`, with or without `%`; `none` too when `none`.
    Percent { none: bool },
    /// `true` or `false`.
    Flag,
    /// One of these words (the first is shown first); the method maps them, and their other
    /// spellings, with its own keyword table ([`Parsed::choice`]).
    Choice(&'static [&'static str]),
    /// A seed for the call's random draws.
    Seed,
    /// A declared `a|b|c` list: distinct, non-empty values ([`check_values`]).
    List,
    /// Text the method reads itself, of this form (shown in the usage line).
    Text(&'static str),
    /// No longer accepted: the call is refused with this reason.
    Removed(&'static str),
}

/// One option of a function.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct OptionSpec {
    pub(crate) name: &'static str,
    /// Older spellings still accepted (not shown).
    pub(crate) aliases: &'static [&'static str],
    pub(crate) kind: Kind,
    /// The default as the user would write it (`10%`), or what happens without the option.
    pub(crate) default: &'static str,
    pub(crate) doc: &'static str,
}

/// Declares an option (`opt("seed", Kind::Seed, "OS entropy", "...")`); [`OptionSpec::alias`]
/// adds older spellings.
pub(crate) const fn opt(name: &'static str, kind: Kind, default: &'static str, doc: &'static str) -> OptionSpec {
    OptionSpec { name, aliases: &[], kind, default, doc }
}

/// The `seed=` option every randomized method takes.
pub(crate) const SEED: OptionSpec =
    opt("seed", Kind::Seed, "OS entropy", "same seed, same output; for tests, never published");

/// The `diagnostics=` option: opt-in exact numbers of the original.
pub(crate) const DIAGNOSTICS: OptionSpec = opt(
    "diagnostics",
    Kind::Flag,
    "false",
    "also register output_diagnostics: exact numbers of the original, not for publication",
);

impl OptionSpec {
    pub(crate) const fn alias(self, aliases: &'static [&'static str]) -> Self {
        OptionSpec { aliases, ..self }
    }

    fn answers(&self, key: &str) -> bool {
        self.name == key || self.aliases.contains(&key)
    }

    fn shown(&self) -> bool {
        !matches!(self.kind, Kind::Removed(_))
    }

    /// The value as the usage line shows it: the choices, else the default, else the kind's form.
    fn example(&self) -> String {
        match self.kind {
            Kind::Choice(words) => words.join("|"),
            Kind::Text(form) => form.to_string(),
            _ if !self.default.is_empty() && !self.default.contains(' ') => self.default.to_string(),
            Kind::Int { .. } => "N".into(),
            Kind::Float { .. } => "x".into(),
            Kind::Percent { .. } => "N%".into(),
            Kind::Flag => "true".into(),
            Kind::Seed => "42".into(),
            Kind::List => "a|b".into(),
            Kind::Removed(_) => String::new(),
        }
    }

    /// What values the option takes, in words (for errors and `\df`).
    fn range(&self) -> String {
        match self.kind {
            Kind::Int { min, max: u64::MAX } => format!("an integer >= {min}"),
            Kind::Int { min, max } => format!("an integer in [{min}, {max}]"),
            Kind::Float { min, max } if max == f64::INFINITY => format!("a number >= {}", number(min)),
            Kind::Float { min, max } => format!("a number in [{}, {}]", number(min), number(max)),
            Kind::Percent { none: false } => "a percentage in [0, 100]".into(),
            Kind::Percent { none: true } => "a percentage in [0, 100] or none".into(),
            Kind::Flag => "true or false".into(),
            Kind::Choice(words) => format!("one of {}", words.join(", ")),
            Kind::Seed => "a non-negative integer".into(),
            Kind::List => "distinct, non-empty values separated by '|'".into(),
            Kind::Text(form) => format!("of the form {form}"),
            Kind::Removed(_) => "no longer accepted".into(),
        }
    }

    /// The value read as its kind; the error names the option and its range, never the value
    /// (a `values=` list may hold a patient's value).
    fn read(&self, function: &str, value: &str) -> Result<Value> {
        let bad = || AnonError::argument(function, self.name, format!("must be {}", self.range()));
        let finite = |v: &str| v.trim().parse::<f64>().ok().filter(|x| x.is_finite());
        Ok(match self.kind {
            Kind::Int { min, max } => {
                Value::Int(value.trim().parse::<u64>().ok().filter(|n| (min..=max).contains(n)).ok_or_else(bad)?)
            }
            Kind::Float { min, max } => {
                Value::Float(finite(value).filter(|x| (min..=max).contains(x)).ok_or_else(bad)?)
            }
            Kind::Percent { none } if none && value.trim().eq_ignore_ascii_case("none") => Value::Percent(None),
            Kind::Percent { .. } => {
                let p = finite(value.trim().trim_end_matches('%'));
                Value::Percent(Some(p.filter(|p| (0.0..=100.0).contains(p)).ok_or_else(bad)?))
            }
            Kind::Flag => Value::Flag(flag(function, self.name, value)?),
            Kind::Seed => Value::Int(value.trim().parse().map_err(|_| bad())?),
            Kind::List => Value::List(values(function, self.name, value)?),
            Kind::Choice(_) | Kind::Text(_) => Value::Text(value.trim().to_string()),
            Kind::Removed(why) => return Err(AnonError::argument(function, self.name, why)),
        })
    }
}

/// A bound as a message shows it: `1` rather than `1.0`, `1e-9` rather than 0.000000001.
fn number(x: f64) -> String {
    crate::dp::ledger::shown(x)
}

/// A value read as its option's kind.
#[derive(Debug, Clone, PartialEq)]
enum Value {
    Int(u64),
    Float(f64),
    Percent(Option<f64>),
    Flag(bool),
    Text(String),
    List(Vec<String>),
}

/// The options of one function: its name (for errors) and each option it takes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Options {
    pub(crate) function: &'static str,
    pub(crate) specs: &'static [OptionSpec],
}

impl Options {
    /// Read `text` against the declaration: every key declared (else an error listing the
    /// valid ones), every value of its kind and in its range.
    pub(crate) fn parse(&self, text: &str) -> Result<Parsed> {
        self.read(pairs(self.function, text)?)
    }

    /// [`Options::parse`] for options whose values are comma lists (`ncp_weights=age:0.5,sex:0.5`):
    /// a part without `=` continues the value before it.
    pub(crate) fn parse_lists(&self, text: &str) -> Result<Parsed> {
        let mut parts: Vec<(String, String)> = Vec::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            match (part.split_once('='), parts.last_mut()) {
                (Some((k, v)), _) => parts.push((k.trim().to_ascii_lowercase(), v.trim().to_string())),
                (None, Some(last)) => last.1 = format!("{},{part}", last.1),
                (None, None) => return Err(not_a_pair(self.function, part)),
            }
        }
        self.read(parts)
    }

    fn read(&self, pairs: Vec<(String, String)>) -> Result<Parsed> {
        let mut given = Vec::new();
        for (key, value) in pairs {
            let spec = self.specs.iter().find(|s| s.answers(&key)).ok_or_else(|| self.unknown(&key))?;
            if given.iter().any(|(s, _, _): &(&OptionSpec, String, Value)| s.name == spec.name) {
                return Err(AnonError::argument(
                    self.function,
                    "options",
                    format!("option '{}' is given more than once", spec.name),
                ));
            }
            let read = spec.read(self.function, &value)?;
            given.push((spec, value, read));
        }
        Ok(Parsed { function: self.function, given })
    }

    fn unknown(&self, key: &str) -> AnonError {
        AnonError::argument(self.function, "options", format!("unknown option '{key}' (valid: {})", self.names()))
    }

    /// The option names, comma-separated.
    pub(crate) fn names(&self) -> String {
        self.specs.iter().filter(|s| s.shown()).map(|s| s.name).collect::<Vec<_>>().join(", ")
    }

    /// The options as the usage line shows them: `seed=42, search=bounded|exhaustive`.
    pub(crate) fn usage(&self) -> String {
        let shown = self.specs.iter().filter(|s| s.shown());
        shown.map(|s| format!("{}={}", s.name, s.example())).collect::<Vec<_>>().join(", ")
    }

    /// `signature` with its `options` placeholder replaced by the quoted usage line.
    pub(crate) fn signature(&self, signature: &str) -> String {
        signature.replacen("options", &format!("'{}'", self.usage()), 1)
    }

    /// A function's usage line: `signature`, with the options filled in when it declares them.
    pub(crate) fn usage_of(signature: &str, options: Option<&Options>) -> String {
        options.map_or_else(|| signature.to_string(), |o| o.signature(signature))
    }

    /// One line per option for `\df`: name, values, default and what it does.
    pub(crate) fn doc_lines(&self) -> Vec<String> {
        let shown = self.specs.iter().filter(|s| s.shown());
        shown
            .map(|s| {
                let default = if s.default.is_empty() { String::new() } else { format!("; default {}", s.default) };
                format!("{}: {}{default}. {}", s.name, s.range(), s.doc)
            })
            .collect()
    }
}

/// The options of one call, read and checked against their declaration.
#[derive(Debug, Clone)]
pub(crate) struct Parsed {
    function: &'static str,
    /// Each option given: its declaration, its text and its value.
    given: Vec<(&'static OptionSpec, String, Value)>,
}

impl Parsed {
    fn get(&self, name: &str) -> Option<&Value> {
        self.given.iter().find(|(s, _, _)| s.name == name).map(|(_, _, v)| v)
    }

    /// Option `name` as given, for a reader that checks it together with another option.
    pub(crate) fn raw(&self, name: &str) -> Option<&str> {
        self.given.iter().find(|(s, _, _)| s.name == name).map(|(_, t, _)| t.as_str())
    }

    /// The names of the options the call gave, in its order.
    pub(crate) fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.given.iter().map(|(s, _, _)| s.name)
    }

    /// An `Int` or `Seed` option.
    pub(crate) fn int(&self, name: &str) -> Option<u64> {
        match self.get(name)? {
            Value::Int(n) => Some(*n),
            other => unreachable_kind(name, other),
        }
    }

    pub(crate) fn seed(&self) -> Option<u64> {
        self.int("seed")
    }

    pub(crate) fn float(&self, name: &str) -> Option<f64> {
        match self.get(name)? {
            Value::Float(x) => Some(*x),
            other => unreachable_kind(name, other),
        }
    }

    /// A `Percent` option: `Some(None)` for `none`.
    pub(crate) fn percent(&self, name: &str) -> Option<Option<f64>> {
        match self.get(name)? {
            Value::Percent(p) => Some(*p),
            other => unreachable_kind(name, other),
        }
    }

    pub(crate) fn flag(&self, name: &str) -> Option<bool> {
        match self.get(name)? {
            Value::Flag(b) => Some(*b),
            other => unreachable_kind(name, other),
        }
    }

    /// A `Text` option, or a `Choice` as given.
    pub(crate) fn text(&self, name: &str) -> Option<&str> {
        match self.get(name)? {
            Value::Text(t) => Some(t),
            other => unreachable_kind(name, other),
        }
    }

    pub(crate) fn list(&self, name: &str) -> Option<Vec<String>> {
        match self.get(name)? {
            Value::List(v) => Some(v.clone()),
            other => unreachable_kind(name, other),
        }
    }

    /// A `Choice` option mapped by the method's keyword table `parse`; a word it does not
    /// know is an error listing the declared ones.
    pub(crate) fn choice<T>(&self, name: &str, parse: impl Fn(&str) -> Option<T>) -> Result<Option<T>> {
        let Some(text) = self.text(name) else { return Ok(None) };
        let spec = self.given.iter().find(|(s, _, _)| s.name == name).map(|(s, _, _)| *s);
        parse(text).map(Some).ok_or_else(|| {
            AnonError::argument(self.function, name, format!("must be {}", spec.map_or(String::new(), |s| s.range())))
        })
    }
}

/// A getter of the wrong kind is a slip in the declaring code, which every test of the option
/// catches; in a release build the option reads as not given.
fn unreachable_kind<T>(name: &str, value: &Value) -> Option<T> {
    debug_assert!(false, "option '{name}' read as another kind than declared: {value:?}");
    None
}

/// Split `options` into (lower-cased key, value) pairs, naming the part that is malformed. A
/// key given twice (`seed=1, seed=2`) is an error rather than a silent last-one-wins.
pub(crate) fn pairs(function: &str, options: &str) -> Result<Vec<(String, String)>> {
    let mut out: Vec<(String, String)> = Vec::new();
    for part in options.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (k, v) = part.split_once('=').ok_or_else(|| not_a_pair(function, part))?;
        let key = k.trim().to_ascii_lowercase();
        if out.iter().any(|(seen, _)| *seen == key) {
            return Err(AnonError::argument(function, "options", format!("option '{key}' is given more than once")));
        }
        out.push((key, v.trim().to_string()));
    }
    Ok(out)
}

fn not_a_pair(function: &str, part: &str) -> AnonError {
    AnonError::argument(function, "options", format!("'{part}' is not of the form key=value"))
}

/// A declared `a|b|c` list (`values=`, `extra_codes=`), split and checked with [`check_values`].
pub(crate) fn values(function: &str, key: &str, text: &str) -> Result<Vec<String>> {
    let values: Vec<String> = text.split('|').map(|v| v.trim().to_string()).collect();
    check_values(function, key, &values)?;
    Ok(values)
}

/// A declared domain's values must be distinct and non-empty (and at least one).
pub(crate) fn check_values(function: &str, key: &str, values: &[String]) -> Result<()> {
    let mut seen = std::collections::HashSet::new();
    if values.is_empty() || values.iter().any(|v| v.is_empty() || !seen.insert(v.as_str())) {
        return Err(AnonError::argument(function, key, "needs distinct, non-empty values separated by '|'"));
    }
    Ok(())
}

/// A `true|false` option: those two words only, so `yes`, `1` or a typo is an error rather
/// than a guess (a `diagnostics=` read wrongly registers exact, unpublishable tables).
pub(crate) fn flag(function: &str, key: &str, value: &str) -> Result<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(AnonError::argument(function, key, "must be true or false")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OPTS: Options = Options {
        function: "f",
        specs: &[
            opt("n", Kind::Int { min: 1, max: 9 }, "1", "a count"),
            opt("p", Kind::Percent { none: true }, "10%", "a limit"),
            opt("x", Kind::Float { min: 0.0, max: 1.0 }, "", "a share"),
            opt("mode", Kind::Choice(&["a", "b"]), "a", "a mode").alias(&["m"]),
            SEED,
            opt("old", Kind::Removed("was replaced by n"), "", ""),
        ],
    };

    #[test]
    fn values_are_read_as_declared_under_any_alias() {
        let o = OPTS.parse("N=3, p=5%, x=0.25, m=B, seed=7").unwrap();
        assert_eq!(
            (o.int("n"), o.percent("p"), o.float("x"), o.seed()),
            (Some(3), Some(Some(5.0)), Some(0.25), Some(7))
        );
        let mode = |v: &str| crate::keyword::parse(&[(1, &["a"]), (2, &["b"])], v);
        assert_eq!(o.choice("mode", mode).unwrap(), Some(2));
        assert_eq!(OPTS.parse("p=none").unwrap().percent("p"), Some(None));
        assert_eq!(OPTS.parse("").unwrap().int("n"), None);
    }

    #[test]
    fn errors_name_the_option_and_never_the_value() {
        for (text, needle) in [
            ("n=10", "'n': must be an integer in [1, 9]"),
            ("p=101", "'p': must be a percentage in [0, 100] or none"),
            ("x=nan", "'x': must be a number in [0, 1]"),
            ("seed=-1", "'seed': must be a non-negative integer"),
            ("old=5", "'old': was replaced by n"),
            ("n=1, N=2", "option 'n' is given more than once"),
            ("m=a, mode=b", "option 'mode' is given more than once"),
            ("colour=red", "unknown option 'colour' (valid: n, p, x, mode, seed)"),
        ] {
            let e = OPTS.parse(text).unwrap_err().to_string();
            assert!(e.contains(needle), "{text}: {e}");
        }
        let e = OPTS.parse("mode=c").unwrap().choice("mode", |_| None::<u8>).unwrap_err().to_string();
        assert!(e.contains("'mode': must be one of a, b") && !e.contains("'c'"), "{e}");
    }

    #[test]
    fn usage_and_doc_come_from_the_declaration() {
        assert_eq!(OPTS.usage(), "n=1, p=10%, x=x, mode=a|b, seed=42");
        assert_eq!(OPTS.signature("f(t [, options])"), "f(t [, 'n=1, p=10%, x=x, mode=a|b, seed=42'])");
        assert_eq!(OPTS.doc_lines()[0], "n: an integer in [1, 9]; default 1. a count");
    }
}
