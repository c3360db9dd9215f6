//! Filling an http task's URL, header values and body from its params, the runner's secrets and
//! the attempt's identity.
//!
//! A placeholder is `{{ SOURCE.PATH }}`, optionally `{{ SOURCE.PATH | json }}`:
//! - `params.a.b.0` — a value of the task's params (object keys and array indices by `.`): a
//!   string as it is, anything else as JSON; with `| json` every value as JSON (a string quoted
//!   and escaped, for JSON bodies);
//! - `secret.NAME` — a secret of the runner's configuration (never of the params);
//! - `ax.instance_id`, `ax.attempt`, `ax.idempotency_key`, `ax.task` — the attempt's identity.
//!
//! In a URL every filled value is percent-encoded (all but `A-Z a-z 0-9 - . _ ~`), so a value
//! cannot change the URL's host or path structure. Text outside placeholders is kept as written.
//!
//! ```
//! use ax_runner::template::{Escape, Sources, fill};
//! let params = serde_json::json!({"name": "Zoë & co"});
//! let s = Sources { params: &params, secrets: &Default::default(), ax: &[] };
//! let f = fill("https://x.example/?q={{ params.name }}", &s, Escape::Url).unwrap();
//! assert_eq!(f.text, "https://x.example/?q=Zo%C3%AB%20%26%20co");
//! ```

use std::collections::BTreeMap;

use serde_json::Value;

use crate::config::Secret;

/// Why a template cannot be filled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    /// `{{` without its `}}`.
    #[error("a placeholder opened at byte {0} is not closed with }}}}")]
    Unclosed(usize),
    /// A placeholder of no known source or filter.
    #[error("unknown placeholder {{{{{0}}}}} (use params.PATH, secret.NAME or ax.FIELD, optionally | json)")]
    Unknown(String),
    /// `params.PATH` names nothing in the params.
    #[error("{{{{params.{0}}}}}: the params have no such value")]
    MissingParam(String),
    /// `secret.NAME` names no secret of the runner's configuration.
    #[error("{{{{secret.{0}}}}}: no such secret in the runner's configuration")]
    MissingSecret(String),
}

/// How filled values are written into the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Escape {
    /// As they are (header values, bodies).
    Text,
    /// Percent-encoded (URLs).
    Url,
}

/// What placeholders are filled from.
#[derive(Debug, Clone, Copy)]
pub struct Sources<'a> {
    /// The task's params.
    pub params: &'a Value,
    /// The runner's secrets.
    pub secrets: &'a BTreeMap<String, Secret>,
    /// `ax.FIELD` values: `(FIELD, value)`.
    pub ax: &'a [(&'a str, String)],
}

/// A filled template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Filled {
    /// The text with every placeholder replaced.
    pub text: String,
    /// The names of the secrets it used (to check where they may be sent).
    pub secrets: Vec<String>,
}

/// Fills every placeholder of `template`.
pub fn fill(template: &str, sources: &Sources<'_>, escape: Escape) -> Result<Filled, TemplateError> {
    let mut out = Filled { text: String::with_capacity(template.len()), secrets: Vec::new() };
    let mut rest = template;
    while let Some(open) = rest.find("{{") {
        out.text.push_str(&rest[..open]);
        let after = &rest[open + 2..];
        let close = after.find("}}").ok_or(TemplateError::Unclosed(template.len() - rest.len() + open))?;
        let inner = after[..close].trim();
        let (path, as_json) = match inner.split_once('|') {
            Some((p, f)) if f.trim() == "json" => (p.trim(), true),
            Some(_) => return Err(TemplateError::Unknown(inner.to_owned())),
            None => (inner, false),
        };
        let value = resolve(path, sources, &mut out.secrets)?;
        let value = match (value, as_json) {
            (Value::String(s), false) => s,
            (v, _) => v.to_string(),
        };
        match escape {
            Escape::Text => out.text.push_str(&value),
            Escape::Url => percent_encode(&value, &mut out.text),
        }
        rest = &after[close + 2..];
    }
    out.text.push_str(rest);
    Ok(out)
}

fn resolve(path: &str, sources: &Sources<'_>, used: &mut Vec<String>) -> Result<Value, TemplateError> {
    let unknown = || TemplateError::Unknown(path.to_owned());
    let (source, key) = path.split_once('.').ok_or_else(unknown)?;
    match source {
        "params" => {
            let mut v = sources.params;
            for part in key.split('.') {
                v = match v {
                    Value::Object(m) => m.get(part),
                    Value::Array(a) => part.parse::<usize>().ok().and_then(|i| a.get(i)),
                    _ => None,
                }
                .ok_or_else(|| TemplateError::MissingParam(key.to_owned()))?;
            }
            Ok(v.clone())
        }
        "secret" => {
            let s = sources.secrets.get(key).ok_or_else(|| TemplateError::MissingSecret(key.to_owned()))?;
            if !used.iter().any(|u| u == key) {
                used.push(key.to_owned());
            }
            Ok(Value::String(s.value.clone()))
        }
        "ax" => sources.ax.iter().find(|(k, _)| *k == key).map(|(_, v)| Value::String(v.clone())).ok_or_else(unknown),
        _ => Err(unknown()),
    }
}

fn percent_encode(s: &str, out: &mut String) {
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
}

/// Secrets shorter than this are not searched for in outputs: replacing every `a` of a text would
/// hide nothing and ruin the text.
pub const MIN_REDACTED: usize = 4;

/// `text` with the value of every secret (of [`MIN_REDACTED`] bytes or more) replaced by
/// `[secret NAME]`: a server that echoes a header back does not put the secret in the output.
pub fn redact(text: String, secrets: &BTreeMap<String, Secret>) -> String {
    let mut text = text;
    for (name, s) in secrets {
        if s.value.len() >= MIN_REDACTED && text.contains(&s.value) {
            text = text.replace(&s.value, &format!("[secret {name}]"));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secrets() -> BTreeMap<String, Secret> {
        BTreeMap::from([("TOKEN".to_owned(), Secret { value: "s3cr3t/value".into(), hosts: None })])
    }

    fn fill_with(template: &str, params: Value, escape: Escape) -> Result<Filled, TemplateError> {
        let secrets = secrets();
        let ax = [("attempt", "2".to_owned())];
        fill(template, &Sources { params: &params, secrets: &secrets, ax: &ax }, escape)
    }

    #[test]
    fn params_secrets_and_the_attempt_fill_their_placeholders() {
        let p = serde_json::json!({"a": {"b": [10, "x"]}, "s": "he said \"hi\"", "n": 3});
        let f = fill_with("{{params.a.b.1}}-{{ params.n }}-{{ax.attempt}}-{{secret.TOKEN}}", p.clone(), Escape::Text)
            .expect("fills");
        assert_eq!(f.text, "x-3-2-s3cr3t/value");
        assert_eq!(f.secrets, ["TOKEN"]);
        let f = fill_with(r#"{"said": {{params.s | json}}, "a": {{params.a|json}}}"#, p, Escape::Text).expect("json");
        assert_eq!(f.text, r#"{"said": "he said \"hi\"", "a": {"b":[10,"x"]}}"#);
        assert!(f.secrets.is_empty());
    }

    #[test]
    fn in_a_url_filled_values_are_percent_encoded() {
        let p = serde_json::json!({"q": "a/b?c=d&e#f"});
        let f = fill_with("http://h/x?q={{params.q}}&t={{secret.TOKEN}}", p, Escape::Url).expect("fills");
        assert_eq!(f.text, "http://h/x?q=a%2Fb%3Fc%3Dd%26e%23f&t=s3cr3t%2Fvalue");
    }

    #[test]
    fn text_without_placeholders_is_kept() {
        let f = fill_with("plain { text } }}", serde_json::json!({}), Escape::Text).expect("fills");
        assert_eq!(f.text, "plain { text } }}");
    }

    #[test]
    fn bad_placeholders_are_errors_that_name_them() {
        let p = serde_json::json!({"a": 1});
        for (t, e) in [
            ("x {{params.a", TemplateError::Unclosed(2)),
            ("{{params.b}}", TemplateError::MissingParam("b".into())),
            ("{{params.a.b}}", TemplateError::MissingParam("a.b".into())),
            ("{{secret.NOPE}}", TemplateError::MissingSecret("NOPE".into())),
            ("{{env.HOME}}", TemplateError::Unknown("env.HOME".into())),
            ("{{params}}", TemplateError::Unknown("params".into())),
            ("{{ax.worker}}", TemplateError::Unknown("ax.worker".into())),
            ("{{params.a | upper}}", TemplateError::Unknown("params.a | upper".into())),
        ] {
            assert_eq!(fill_with(t, p.clone(), Escape::Text), Err(e), "{t}");
        }
        assert_eq!(
            TemplateError::MissingSecret("X".into()).to_string(),
            "{{secret.X}}: no such secret in the runner's configuration"
        );
    }

    #[test]
    fn secret_values_are_redacted_from_text() {
        let out = redact("token=s3cr3t/value; again s3cr3t/value".to_owned(), &secrets());
        assert_eq!(out, "token=[secret TOKEN]; again [secret TOKEN]");
        let short = BTreeMap::from([("S".to_owned(), Secret { value: "ab".into(), hosts: None })]);
        assert_eq!(redact("abc".to_owned(), &short), "abc", "too short to search for");
    }
}
