//! Label selectors: which workers may run a task's instances, by the labels of their Hello.
//!
//! A selector is comma-separated requirements that must all hold: `key=value` (or `key==value`),
//! `key!=value`, `key in (v1,v2)`, `key notin (v1,v2)`. `!=` and `notin` also hold when the worker
//! has no such label (as in Kubernetes). Parsing refuses anything else with the position and the
//! reason; a selector's `Display` form is the normalized one that tasks and instances store, so one
//! requirement list has one spelling.

use std::{collections::BTreeMap, fmt};

/// Most requirements in one selector.
pub const MAX_REQUIREMENTS: usize = 16;
/// Longest selector text.
pub const MAX_SELECTOR: usize = 1024;
/// Most values in one `in (...)` list.
pub const MAX_VALUES: usize = 32;

/// One requirement on one label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Requirement {
    /// The label is present and equal.
    Eq(String, String),
    /// The label is absent or different.
    Ne(String, String),
    /// The label is present and one of these.
    In(String, Vec<String>),
    /// The label is absent or none of these.
    NotIn(String, Vec<String>),
}

impl Requirement {
    /// The label key it is about.
    pub fn key(&self) -> &str {
        match self {
            Requirement::Eq(k, _) | Requirement::Ne(k, _) | Requirement::In(k, _) | Requirement::NotIn(k, _) => k,
        }
    }

    /// Whether labels satisfy it.
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        let got = labels.get(self.key());
        match self {
            Requirement::Eq(_, v) => got == Some(v),
            Requirement::Ne(_, v) => got != Some(v),
            Requirement::In(_, vs) => got.is_some_and(|g| vs.contains(g)),
            Requirement::NotIn(_, vs) => !got.is_some_and(|g| vs.contains(g)),
        }
    }
}

impl fmt::Display for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Requirement::Eq(k, v) => write!(f, "{k}={v}"),
            Requirement::Ne(k, v) => write!(f, "{k}!={v}"),
            Requirement::In(k, vs) => write!(f, "{k} in ({})", vs.join(",")),
            Requirement::NotIn(k, vs) => write!(f, "{k} notin ({})", vs.join(",")),
        }
    }
}

/// A parsed selector; the empty selector matches every worker.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Selector {
    /// Requirements, in the order written.
    pub requirements: Vec<Requirement>,
}

impl fmt::Display for Selector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, r) in self.requirements.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{r}")?;
        }
        Ok(())
    }
}

fn key_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "._/-".contains(c)
}

fn value_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "._:/@+-".contains(c)
}

/// A word of `allowed` characters at `*at`, skipping spaces first.
fn word(text: &str, at: &mut usize, allowed: fn(char) -> bool) -> String {
    skip_spaces(text, at);
    let start = *at;
    while let Some(c) = text[*at..].chars().next().filter(|c| allowed(*c)) {
        *at += c.len_utf8();
    }
    text[start..*at].to_owned()
}

fn skip_spaces(text: &str, at: &mut usize) {
    while text[*at..].starts_with(' ') {
        *at += 1;
    }
}

/// Where a parse failed and why.
fn err(at: usize, reason: impl fmt::Display) -> String {
    format!("at byte {at}: {reason}")
}

impl Selector {
    /// Whether labels satisfy every requirement.
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.requirements.iter().all(|r| r.matches(labels))
    }

    /// Whether it has no requirement (matches every worker).
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// Parses a selector; the error says where and why (the caller names the field).
    pub fn parse(text: &str) -> Result<Selector, String> {
        if text.len() > MAX_SELECTOR {
            return Err(format!("is {} bytes long, at most {MAX_SELECTOR} allowed", text.len()));
        }
        let mut requirements = Vec::new();
        let mut at = 0;
        skip_spaces(text, &mut at);
        if at == text.len() {
            return Ok(Selector::default());
        }
        loop {
            let key_at = {
                let mut a = at;
                skip_spaces(text, &mut a);
                a
            };
            let key = word(text, &mut at, key_char);
            if key.is_empty() {
                let found = text[at..].chars().next().map_or("the end".to_owned(), |c| format!("{c:?}"));
                return Err(err(at, format!("expected a label key (letters, digits, . _ / -), found {found}")));
            }
            if key.len() > crate::validate::MAX_LABEL_KEY {
                return Err(err(
                    key_at,
                    format!("label key {key:?} is longer than {}", crate::validate::MAX_LABEL_KEY),
                ));
            }
            skip_spaces(text, &mut at);
            let rest = &text[at..];
            let requirement = if let Some(r) = rest.strip_prefix("!=") {
                at += rest.len() - r.len();
                Requirement::Ne(key, value(text, &mut at)?)
            } else if let Some(r) = rest.strip_prefix("==").or_else(|| rest.strip_prefix('=')) {
                at += rest.len() - r.len();
                Requirement::Eq(key, value(text, &mut at)?)
            } else if let Some(r) = rest.strip_prefix("notin").filter(|r| r.starts_with([' ', '('])) {
                at += rest.len() - r.len();
                Requirement::NotIn(key, values(text, &mut at)?)
            } else if let Some(r) = rest.strip_prefix("in").filter(|r| r.starts_with([' ', '('])) {
                at += rest.len() - r.len();
                Requirement::In(key, values(text, &mut at)?)
            } else if rest.is_empty() || rest.starts_with(',') {
                return Err(err(
                    at,
                    format!(
                        "requirement {key:?} has no operator; use {key}=VALUE, {key}!=VALUE, {key} in (A,B) or {key} notin (A,B)"
                    ),
                ));
            } else {
                let found = rest.chars().next().map_or(String::new(), |c| format!("{c:?}"));
                return Err(err(at, format!("unknown operator at {found} after {key:?}; use =, !=, in or notin")));
            };
            if requirements.iter().any(|r: &Requirement| r.key() == requirement.key()) {
                return Err(err(key_at, format!("label key {:?} appears twice", requirement.key())));
            }
            requirements.push(requirement);
            if requirements.len() > MAX_REQUIREMENTS {
                return Err(format!("has more than {MAX_REQUIREMENTS} requirements"));
            }
            skip_spaces(text, &mut at);
            match text[at..].chars().next() {
                None => break,
                Some(',') => at += 1,
                Some(c) => return Err(err(at, format!("expected ',' or the end, found {c:?}"))),
            }
        }
        Ok(Selector { requirements })
    }
}

fn value(text: &str, at: &mut usize) -> Result<String, String> {
    let v = word(text, at, value_char);
    if v.is_empty() {
        let found = text[*at..].chars().next().map_or("the end".to_owned(), |c| format!("{c:?}"));
        return Err(err(*at, format!("expected a value (letters, digits, . _ : / @ + -), found {found}")));
    }
    if v.len() > crate::validate::MAX_LABEL_VALUE {
        return Err(err(*at, format!("value is longer than {}", crate::validate::MAX_LABEL_VALUE)));
    }
    Ok(v)
}

fn values(text: &str, at: &mut usize) -> Result<Vec<String>, String> {
    skip_spaces(text, at);
    if !text[*at..].starts_with('(') {
        return Err(err(*at, "expected '(' opening the list of values"));
    }
    *at += 1;
    let mut out: Vec<String> = Vec::new();
    loop {
        let v = value(text, at)?;
        if !out.contains(&v) {
            out.push(v);
        }
        if out.len() > MAX_VALUES {
            return Err(err(*at, format!("more than {MAX_VALUES} values in one list")));
        }
        skip_spaces(text, at);
        match text[*at..].chars().next() {
            Some(',') => *at += 1,
            Some(')') => {
                *at += 1;
                return Ok(out);
            }
            Some(c) => return Err(err(*at, format!("expected ',' or ')' in the list of values, found {c:?}"))),
            None => return Err(err(*at, "the list of values is not closed with ')'")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn the_issue_example_parses_and_normalizes() {
        let s = Selector::parse("region=cn, gpu==true,zone in ( a , b ),tier!=batch").expect("valid");
        assert_eq!(s.to_string(), "region=cn,gpu=true,zone in (a,b),tier!=batch");
        assert_eq!(Selector::parse(&s.to_string()).expect("round trip"), s);
    }

    #[test]
    fn matching_follows_each_operator() {
        let s = Selector::parse("region=cn,zone in (a,b),tier!=batch,os notin (win)").expect("valid");
        assert!(s.matches(&labels(&[("region", "cn"), ("zone", "a")])), "missing tier and os are allowed");
        assert!(!s.matches(&labels(&[("region", "us"), ("zone", "a")])), "wrong region");
        assert!(!s.matches(&labels(&[("region", "cn")])), "in needs the label");
        assert!(!s.matches(&labels(&[("region", "cn"), ("zone", "c")])), "zone not listed");
        assert!(!s.matches(&labels(&[("region", "cn"), ("zone", "b"), ("tier", "batch")])));
        assert!(!s.matches(&labels(&[("region", "cn"), ("zone", "b"), ("os", "win")])));
        assert!(Selector::parse("").expect("empty").matches(&labels(&[])), "empty matches all");
    }

    #[test]
    fn bad_selectors_say_where_and_why() {
        let e = |s: &str| Selector::parse(s).expect_err(s);
        assert!(e("region").contains("has no operator"), "{}", e("region"));
        assert!(e("region,gpu=true").contains("has no operator"));
        assert!(e("region>3").contains("unknown operator"), "{}", e("region>3"));
        assert!(e("zone in a,b").contains("expected '('"));
        assert!(e("zone in (a,b").contains("not closed"));
        assert!(e("region=").contains("expected a value"));
        assert!(e("=cn").contains("expected a label key"));
        assert!(e("a=1,a=2").contains("appears twice"));
        assert!(e("a=1;b=2").contains("expected ',' or the end"));
        assert!(e("a=1,").contains("expected a label key"));
        assert!(e(&"a=b,".repeat(20)).contains("requirements") || e(&"a=b,".repeat(20)).contains("twice"));
        let many: Vec<String> = (0..17).map(|i| format!("k{i}=v")).collect();
        assert!(e(&many.join(",")).contains("more than 16 requirements"));
    }

    #[test]
    fn in_is_not_mistaken_for_a_key_prefix() {
        let s = Selector::parse("index=1,infra in (x)").expect("valid");
        assert_eq!(s.requirements[0], Requirement::Eq("index".into(), "1".into()));
        assert_eq!(s.requirements[1], Requirement::In("infra".into(), vec!["x".into()]));
    }
}
