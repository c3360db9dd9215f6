//! Database URLs without their secrets, for logs.

/// The URL without its secrets, for logs: the password of `user:password@` and the value of every
/// query parameter whose name mentions a secret (`password`, `sslpassword`, `passwd`, `pwd`,
/// `secret`, `token`, ... compared without case and after percent-decoding), each shown as `***`.
/// Values must be percent-encoded as URLs require: an unencoded `&` inside a password ends it, and a
/// password holding both `@` and `?` unencoded is not recognised.
pub fn redact(url: &str) -> String {
    let Some(scheme) = url.find("://") else { return redact_query(url) };
    let rest_at = scheme + 3;
    let rest = &url[rest_at..];
    // User info ends at the last `@` before the query, and the query starts at the first `?` after
    // the first `@`: a password may hold `@`, `/` or `?` unencoded (not both `@` and `?`), a query
    // may hold `@`.
    let userinfo_end = rest.find('@').map(|first| {
        let query = rest[first..].find('?').map_or(rest.len(), |q| first + q);
        rest[..query].rfind('@').unwrap_or(first)
    });
    let (head, tail) = match userinfo_end {
        Some(at) => {
            let creds = &rest[..at];
            let creds = match creds.split_once(':') {
                Some((user, _)) => format!("{user}:***"),
                None => creds.to_owned(),
            };
            (format!("{}{creds}", &url[..rest_at]), &rest[at..])
        }
        None => (url[..rest_at].to_owned(), rest),
    };
    format!("{head}{}", redact_query(tail))
}

/// `s` with the value of each secret-looking query parameter (see [`redact`]) replaced by `***`.
fn redact_query(s: &str) -> String {
    let Some(q) = s.find('?') else { return s.to_owned() };
    let (query, fragment) = match s[q + 1..].find('#') {
        Some(h) => (&s[q + 1..q + 1 + h], &s[q + 1 + h..]),
        None => (&s[q + 1..], ""),
    };
    let params: Vec<String> = query
        .split('&')
        .map(|p| match p.split_once('=') {
            Some((k, _)) if is_secret_key(k) => format!("{k}=***"),
            _ => p.to_owned(),
        })
        .collect();
    format!("{}?{}{fragment}", &s[..q], params.join("&"))
}

fn is_secret_key(key: &str) -> bool {
    let mut decoded = Vec::with_capacity(key.len());
    let b = key.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match (b[i], b.get(i + 1).copied().and_then(hex), b.get(i + 2).copied().and_then(hex)) {
            (b'%', Some(h), Some(l)) => {
                decoded.push((h * 16 + l) as u8);
                i += 3;
            }
            (b'+', ..) => {
                decoded.push(b' ');
                i += 1;
            }
            (c, ..) => {
                decoded.push(c);
                i += 1;
            }
        }
    }
    let key = String::from_utf8_lossy(&decoded).to_ascii_lowercase();
    ["pass", "pwd", "secret", "token", "credential"].iter().any(|s| key.contains(s))
}

#[cfg(test)]
mod tests {
    use super::redact;

    #[test]
    fn user_info_passwords_are_hidden() {
        assert_eq!(redact("postgres://ax:s3cret@db:5432/ax"), "postgres://ax:***@db:5432/ax");
        assert_eq!(redact("mysql://root@127.0.0.1:3306/test"), "mysql://root@127.0.0.1:3306/test");
        assert_eq!(redact("sqlite://./ax-data/ax.db?mode=rwc"), "sqlite://./ax-data/ax.db?mode=rwc");
        // Unencoded `@`, `/` or `?` in a password still do not show.
        assert_eq!(redact("postgres://ax:p@ss/w@rd@db/ax"), "postgres://ax:***@db/ax");
        assert_eq!(redact("postgres://ax:pa?ss@db/ax"), "postgres://ax:***@db/ax");
        // An `@` in the query is not user info.
        assert_eq!(
            redact("postgres://ax:pw@db/ax?application_name=a@b"),
            "postgres://ax:***@db/ax?application_name=a@b"
        );
    }

    #[test]
    fn query_parameter_passwords_are_hidden() {
        assert_eq!(redact("postgres://db/ax?user=ax&password=s3cret"), "postgres://db/ax?user=ax&password=***");
        assert_eq!(redact("postgres://db/ax?password=s3cret&user=ax"), "postgres://db/ax?password=***&user=ax");
        assert_eq!(
            redact("postgres://u:pw@db/ax?sslmode=verify-full&sslpassword=k3y#frag"),
            "postgres://u:***@db/ax?sslmode=verify-full&sslpassword=***#frag"
        );
        assert_eq!(
            redact("mysql://db/ax?PASSWORD=x&Pwd=y&auth_token=z"),
            "mysql://db/ax?PASSWORD=***&Pwd=***&auth_token=***"
        );
        assert_eq!(redact("postgres://db/ax?pass%77ord=x"), "postgres://db/ax?pass%77ord=***");
        assert_eq!(
            redact("postgres://db/ax?options=-c%20search_path%3Dx"),
            "postgres://db/ax?options=-c%20search_path%3Dx"
        );
        for url in ["postgres://u:hunter2@h/d?password=hunter2", "mysql://h/d?sslpassword=hunter2&x=1"] {
            assert!(!redact(url).contains("hunter2"), "{url} -> {}", redact(url));
        }
    }
}
