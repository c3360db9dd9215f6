//! The runner's configuration file (TOML): the secrets it may send, the destinations it may reach
//! despite the SSRF rules, the commands it may run and its default timeouts. Read once at start
//! and checked whole: a bad value is an error naming its key (`shell.allow[1]: …`), unknown keys
//! are refused, and a secret's value never appears in an error or in `Debug`.
//!
//! ```toml
//! [defaults]
//! timeout = "60s"          # an attempt's timeout when its params give none
//! max_timeout = "1h"       # the longest params.timeout accepted
//!
//! [secrets.BILLING_TOKEN]
//! env = "BILLING_TOKEN"    # or: value = "…"
//! hosts = ["api.example.com"]
//!
//! [http]
//! allow = ["127.0.0.1", "10.1.0.0/16", "intranet.example.com"]
//!
//! [shell]
//! allow = ["/usr/local/bin/backup", "/bin/echo"]
//! env = { PATH = "/usr/bin:/bin" }
//! ```

use std::{
    collections::BTreeMap,
    net::IpAddr,
    path::{Path, PathBuf},
    time::Duration,
};

use serde::Deserialize;

/// Why the configuration cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("{path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    /// The file is not TOML of the expected shape (the parser names the key and line).
    #[error("{path}: {message}")]
    Parse { path: PathBuf, message: String },
    /// A value is out of its bounds.
    #[error("{key}: {reason}")]
    Invalid { key: String, reason: String },
}

fn invalid(key: impl Into<String>, reason: impl Into<String>) -> ConfigError {
    ConfigError::Invalid { key: key.into(), reason: reason.into() }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    #[serde(default)]
    defaults: RawDefaults,
    #[serde(default)]
    secrets: BTreeMap<String, RawSecret>,
    #[serde(default)]
    http: RawHttp,
    #[serde(default)]
    shell: RawShell,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDefaults {
    timeout: Option<String>,
    max_timeout: Option<String>,
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSecret {
    value: Option<String>,
    env: Option<String>,
    hosts: Option<Vec<String>>,
}

impl std::fmt::Debug for RawSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RawSecret").field("env", &self.env).field("hosts", &self.hosts).finish_non_exhaustive()
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHttp {
    #[serde(default)]
    allow: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawShell {
    #[serde(default)]
    allow: Vec<PathBuf>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    dir: Option<PathBuf>,
}

/// The checked configuration.
#[derive(Debug, Clone)]
pub struct Config {
    /// An attempt's timeout when its params give none (`defaults.timeout`). Default 60 s.
    pub timeout: Duration,
    /// The longest `params.timeout` accepted (`defaults.max_timeout`). Default 1 h.
    pub max_timeout: Duration,
    /// Secrets by name (`[secrets.NAME]`). Default: none.
    pub secrets: BTreeMap<String, Secret>,
    /// Destinations the http executor may reach although the SSRF rules refuse them. Default: none.
    pub http_allow: Vec<Allowance>,
    /// What the shell executor may run. Default: nothing.
    pub shell: Shell,
}

/// A secret: referenced as `{{secret.NAME}}` in an http task's URL, headers or body.
#[derive(Clone)]
pub struct Secret {
    /// The value (`value`, or the runner's environment variable `env`, read at start).
    pub value: String,
    /// `hosts`: the only URL hosts (lower case) this secret is sent to; `None`: any host.
    pub hosts: Option<Vec<String>>,
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Secret").field("value", &"[redacted]").field("hosts", &self.hosts).finish()
    }
}

/// One entry of `http.allow`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Allowance {
    /// A network (`10.0.0.0/8`, `::1/128`; a bare address is a /32 or /128): any address in it.
    Net { addr: IpAddr, prefix: u8 },
    /// A host name as written in URLs (lower case): every address it resolves to.
    Host(String),
}

impl Allowance {
    /// Parses an `http.allow` entry.
    pub fn parse(s: &str) -> Result<Allowance, String> {
        let (addr, prefix) = match s.split_once('/') {
            Some((a, p)) => (a, Some(p)),
            None => (s, None),
        };
        if let Ok(addr) = addr.parse::<IpAddr>() {
            let max = if addr.is_ipv4() { 32 } else { 128 };
            let prefix = match prefix {
                None => max,
                Some(p) => p
                    .parse::<u8>()
                    .ok()
                    .filter(|p| *p <= max)
                    .ok_or_else(|| format!("{s:?}: prefix length must be 0-{max}"))?,
            };
            return Ok(Allowance::Net { addr, prefix });
        }
        let valid_name = !s.is_empty()
            && s.len() <= 253
            && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.')
            && !s.starts_with(['.', '-']);
        if prefix.is_some() || !valid_name {
            return Err(format!("{s:?} is neither an address, a network (a.b.c.d/n) nor a host name"));
        }
        Ok(Allowance::Host(s.to_ascii_lowercase()))
    }

    /// Whether this entry allows `ip` reached through the URL host `host`.
    pub fn allows(&self, host: &str, ip: IpAddr) -> bool {
        match self {
            Allowance::Host(h) => h == host,
            Allowance::Net { addr, prefix } => in_net(*addr, *prefix, ip),
        }
    }
}

/// Whether `ip` is inside `addr/prefix`; an IPv4-mapped IPv6 address counts as its IPv4 address.
fn in_net(addr: IpAddr, prefix: u8, ip: IpAddr) -> bool {
    let ip = match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    };
    match (addr, ip) {
        (IpAddr::V4(a), IpAddr::V4(b)) => {
            let mask = u32::MAX.checked_shl(32 - u32::from(prefix)).unwrap_or(0);
            u32::from(a) & mask == u32::from(b) & mask
        }
        (IpAddr::V6(a), IpAddr::V6(b)) => {
            let mask = u128::MAX.checked_shl(128 - u32::from(prefix)).unwrap_or(0);
            u128::from(a) & mask == u128::from(b) & mask
        }
        _ => false,
    }
}

/// The shell executor's limits.
#[derive(Debug, Clone, Default)]
pub struct Shell {
    /// `shell.allow`: absolute paths of the programs `params.argv[0]` may name, exactly. Default: none.
    pub allow: Vec<PathBuf>,
    /// `shell.env`: the environment every command starts with (the runner's own environment is not
    /// passed on). Default: `PATH=/usr/bin:/bin`.
    pub env: BTreeMap<String, String>,
    /// `shell.dir`: the working directory of commands. Default: the runner's.
    pub dir: Option<PathBuf>,
}

/// Whether `name` may be an environment variable or secret name: `[A-Za-z_][A-Za-z0-9_]*`.
pub fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn duration(key: &str, value: Option<&str>, default: Duration) -> Result<Duration, ConfigError> {
    let Some(v) = value else { return Ok(default) };
    let d = humantime::parse_duration(v).map_err(|e| invalid(key, format!("{v:?}: {e}")))?;
    if d.is_zero() {
        return Err(invalid(key, "must be more than 0"));
    }
    Ok(d)
}

impl Config {
    /// Reads and checks the file at `path`.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read { path: path.into(), source })?;
        Config::parse(&text, |name| std::env::var(name).ok()).map_err(|e| match e {
            ConfigError::Parse { message, .. } => ConfigError::Parse { path: path.into(), message },
            e => e,
        })
    }

    /// Checks a configuration text; `env` reads the environment variables that secrets name.
    pub fn parse(text: &str, env: impl Fn(&str) -> Option<String>) -> Result<Config, ConfigError> {
        let raw: RawConfig =
            toml::from_str(text).map_err(|e| ConfigError::Parse { path: PathBuf::new(), message: e.to_string() })?;
        let timeout = duration("defaults.timeout", raw.defaults.timeout.as_deref(), Duration::from_secs(60))?;
        let max_timeout =
            duration("defaults.max_timeout", raw.defaults.max_timeout.as_deref(), Duration::from_secs(3600))?;
        if timeout > max_timeout {
            return Err(invalid("defaults.timeout", "is longer than defaults.max_timeout"));
        }
        let mut secrets = BTreeMap::new();
        for (name, s) in raw.secrets {
            let key = format!("secrets.{name}");
            if !is_identifier(&name) {
                return Err(invalid(key, "a secret's name is letters, digits and '_', not starting with a digit"));
            }
            let value = match (s.value, s.env) {
                (Some(v), None) => v,
                (None, Some(var)) => {
                    env(&var).ok_or_else(|| invalid(format!("{key}.env"), format!("${var} is not set")))?
                }
                _ => return Err(invalid(key, "give exactly one of value and env")),
            };
            if value.is_empty() {
                return Err(invalid(key, "the value is empty"));
            }
            let hosts = match s.hosts {
                Some(h) if h.is_empty() => return Err(invalid(format!("{key}.hosts"), "is empty: leave it out")),
                h => h.map(|h| h.into_iter().map(|h| h.to_ascii_lowercase()).collect()),
            };
            secrets.insert(name, Secret { value, hosts });
        }
        let http_allow = raw
            .http
            .allow
            .iter()
            .enumerate()
            .map(|(i, a)| Allowance::parse(a).map_err(|e| invalid(format!("http.allow[{i}]"), e)))
            .collect::<Result<_, _>>()?;
        for (i, p) in raw.shell.allow.iter().enumerate() {
            let key = format!("shell.allow[{i}]");
            if !p.is_absolute() {
                return Err(invalid(key, format!("{} is not an absolute path", p.display())));
            }
            if !p.is_file() {
                return Err(invalid(key, format!("{} is not a file", p.display())));
            }
        }
        for name in raw.shell.env.keys() {
            if !is_identifier(name) {
                return Err(invalid(format!("shell.env.{name}"), "not a valid environment variable name"));
            }
        }
        if let Some(dir) = &raw.shell.dir
            && !dir.is_dir()
        {
            return Err(invalid("shell.dir", format!("{} is not a directory", dir.display())));
        }
        let mut env = raw.shell.env;
        if env.is_empty() {
            env.insert("PATH".into(), "/usr/bin:/bin".into());
        }
        Ok(Config {
            timeout,
            max_timeout,
            secrets,
            http_allow,
            shell: Shell { allow: raw.shell.allow, env, dir: raw.shell.dir },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Config, String> {
        Config::parse(text, |v| (v == "SET").then(|| "from-env".to_owned())).map_err(|e| e.to_string())
    }

    #[test]
    fn an_empty_file_is_a_runner_that_may_do_nothing_risky() {
        let c = parse("").expect("valid");
        assert_eq!((c.timeout, c.max_timeout), (Duration::from_secs(60), Duration::from_secs(3600)));
        assert!(c.secrets.is_empty() && c.http_allow.is_empty() && c.shell.allow.is_empty());
        assert_eq!(c.shell.env.get("PATH").map(String::as_str), Some("/usr/bin:/bin"));
    }

    #[test]
    fn a_full_file_is_read() {
        let c = parse(
            r#"
            [defaults]
            timeout = "5s"
            [secrets.A]
            value = "v"
            [secrets.B]
            env = "SET"
            hosts = ["API.example.com"]
            [http]
            allow = ["127.0.0.1", "10.0.0.0/8", "::1", "intranet.example.com"]
            [shell]
            allow = ["/bin/sh"]
            env = { PATH = "/bin", LANG = "C" }
            "#,
        )
        .expect("valid");
        assert_eq!(c.timeout, Duration::from_secs(5));
        assert_eq!(c.secrets["B"].value, "from-env");
        assert_eq!(c.secrets["B"].hosts, Some(vec!["api.example.com".to_owned()]));
        assert_eq!(c.http_allow.len(), 4);
        assert_eq!(c.shell.env.len(), 2);
        assert!(format!("{c:?}").contains("[redacted]") && !format!("{c:?}").contains("from-env"));
    }

    #[test]
    fn each_bad_value_is_refused_naming_its_key() {
        for (text, says) in [
            ("[defaults]\ntimeout = \"soon\"", "defaults.timeout: "),
            ("[defaults]\ntimeout = \"2h\"", "defaults.timeout: is longer than defaults.max_timeout"),
            ("[defaults]\nmax_timeout = \"0s\"", "defaults.max_timeout: must be more than 0"),
            ("[secrets.A]\nvalue = \"\"", "secrets.A: the value is empty"),
            ("[secrets.A]\nvalue = \"x\"\nenv = \"SET\"", "secrets.A: give exactly one of value and env"),
            ("[secrets.A]\nenv = \"UNSET\"", "secrets.A.env: $UNSET is not set"),
            ("[secrets.\"a-b\"]\nvalue = \"x\"", "secrets.a-b: a secret's name"),
            ("[secrets.A]\nvalue = \"x\"\nhosts = []", "secrets.A.hosts: is empty"),
            ("[http]\nallow = [\"127.0.0.1\", \"10.0.0.0/33\"]", "http.allow[1]: \"10.0.0.0/33\": prefix length"),
            ("[http]\nallow = [\"a b\"]", "http.allow[0]: "),
            ("[shell]\nallow = [\"bin/sh\"]", "shell.allow[0]: bin/sh is not an absolute path"),
            ("[shell]\nallow = [\"/bin/sh\", \"/no/such/program\"]", "shell.allow[1]: /no/such/program is not a file"),
            ("[shell]\nenv = { \"1X\" = \"y\" }", "shell.env.1X: "),
            ("[shell]\ndir = \"/no/such/dir\"", "shell.dir: /no/such/dir is not a directory"),
        ] {
            let e = parse(text).expect_err(text);
            assert!(e.starts_with(says), "{text:?}: {e:?} does not start with {says:?}");
            assert!(!e.contains("from-env"), "{e}");
        }
    }

    #[test]
    fn unknown_keys_are_refused() {
        let e = parse("[shell]\nallowed = [\"/bin/sh\"]").expect_err("unknown key");
        assert!(e.contains("unknown field `allowed`"), "{e}");
        let e = parse("[secret.A]\nvalue = \"x\"").expect_err("unknown table");
        assert!(e.contains("unknown field `secret`"), "{e}");
    }

    #[test]
    fn networks_allow_the_addresses_inside_them_only() {
        let net = Allowance::parse("10.1.0.0/16").expect("net");
        assert!(net.allows("x", "10.1.200.3".parse().expect("ip")));
        assert!(net.allows("x", "::ffff:10.1.0.1".parse().expect("ip")), "IPv4-mapped counts as IPv4");
        assert!(!net.allows("x", "10.2.0.1".parse().expect("ip")));
        let one = Allowance::parse("::1").expect("one");
        assert!(one.allows("x", "::1".parse().expect("ip")) && !one.allows("x", "::2".parse().expect("ip")));
        let all = Allowance::parse("0.0.0.0/0").expect("all v4");
        assert!(all.allows("x", "192.168.1.1".parse().expect("ip")));
        let host = Allowance::parse("Intranet.Example.com").expect("host");
        assert!(host.allows("intranet.example.com", "10.0.0.1".parse().expect("ip")));
        assert!(!host.allows("other.example.com", "10.0.0.1".parse().expect("ip")));
    }
}
