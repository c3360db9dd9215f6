//! Unit tests of the configuration: flags, environment, file and their precedence.
use super::*;
use clap::Parser;

#[test]
fn durations_use_the_shared_syntax_and_quote_the_text() {
    // The syntax itself is tested where it lives (ax_proto::duration).
    assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5400)));
    assert_eq!(parse_duration("0"), Ok(Duration::ZERO), "zero needs no unit");
    assert_eq!(parse_duration("10").unwrap_err(), format!("\"10\": `10` has no unit; {}", ax_proto::duration::HINT));
    assert!(parse_duration("10us").unwrap_err().contains("unknown unit `us`"), "one syntax with axctl");
    assert!(parse_duration("500ms1s").unwrap_err().contains("out of order"), "one syntax with axctl");
}

#[test]
fn defaults_are_the_documented_ones() {
    let c = Config::from_options(Options::default()).expect("defaults");
    assert_eq!(c.database_url, "sqlite://./ax-data/ax.db");
    assert_eq!(c.listen, "127.0.0.1:7070".parse().expect("addr"));
    assert_eq!(c.heartbeat_interval, Duration::from_secs(2));
    assert_eq!(c.lost_worker_grace, Duration::from_secs(10));
    assert_eq!(c.dispatch_ahead, Duration::from_millis(200));
    assert!(c.tls.is_none());
    let l = c.limits;
    assert_eq!(l.tls_handshake_timeout, Duration::from_secs(10));
    assert_eq!(l.max_connections, 4096);
    assert_eq!(l.idle_connection_timeout, Duration::from_secs(300));
    assert_eq!((l.max_concurrent_streams, l.max_calls_per_connection), (256, 64));
    assert_eq!(l.request_timeout, Duration::from_secs(30));
    assert_eq!(l.max_waiting_calls, 1000);
    let o = Options { max_waiting_calls: Some(0), ..Options::default() };
    let err = Config::from_options(o).expect_err("no place at all").to_string();
    assert!(err.starts_with("max_waiting_calls: 0 is out of range"), "{err}");
}

#[test]
fn connection_limits_out_of_range_are_refused_by_name() {
    let o = Options { max_connections: Some(0), ..Options::default() };
    let err = Config::from_options(o).expect_err("0 connections").to_string();
    assert!(err.starts_with("max_connections: 0 is out of range"), "{err}");
    let o = Options { tls_handshake_timeout: Some(HumanDuration(Duration::ZERO)), ..Options::default() };
    let err = Config::from_options(o).expect_err("no handshake time").to_string();
    assert!(err.starts_with("tls_handshake_timeout: "), "{err}");
    let o = Options { request_timeout: Some(HumanDuration(Duration::from_secs(6))), ..Options::default() };
    let err = Config::from_options(o).expect_err("6 s = 3 heartbeats").to_string();
    assert!(err.starts_with("request_timeout: ") && err.contains("three heartbeat intervals"), "{err}");
    let args = Args::parse_from(["axd", "--max-connections", "100", "--idle-connection-timeout", "1m"]);
    let c = Config::resolve(args).expect("flags");
    assert_eq!(c.limits.max_connections, 100);
    assert_eq!(c.limits.idle_connection_timeout, Duration::from_secs(60));
}

#[test]
fn a_dispatch_ahead_out_of_range_is_refused_by_name() {
    let o = Options { dispatch_ahead: Some(HumanDuration(Duration::from_secs(11))), ..Options::default() };
    let err = Config::from_options(o).expect_err("11 s is too far ahead").to_string();
    assert!(err.contains("dispatch_ahead") && err.contains("out of range"), "{err}");
    let o = Options { dispatch_ahead: Some(HumanDuration(Duration::ZERO)), ..Options::default() };
    assert_eq!(Config::from_options(o).expect("0 turns it off").dispatch_ahead, Duration::ZERO);
}

#[test]
fn the_housekeeping_interval_defaults_to_a_minute_and_is_range_checked_by_name() {
    let c = Config::from_options(Options::default()).expect("defaults");
    assert_eq!(c.housekeeping_interval, Duration::from_secs(60));
    let c = Config::resolve(Args::parse_from(["axd", "--housekeeping-interval", "2s"])).expect("flag");
    assert_eq!(c.housekeeping_interval, Duration::from_secs(2));
    for bad in [Duration::from_millis(500), Duration::from_secs(86_401)] {
        let o = Options { housekeeping_interval: Some(HumanDuration(bad)), ..Options::default() };
        let err = Config::from_options(o).expect_err("out of range").to_string();
        assert!(err.starts_with("housekeeping_interval: ") && err.contains("out of range"), "{err}");
    }
}

#[test]
fn an_ack_timeout_or_grace_too_short_for_the_heartbeat_is_refused_by_name() {
    let d = |ms| Some(HumanDuration(Duration::from_millis(ms)));
    let o = Options { heartbeat_interval: d(2000), ack_timeout: d(3000), ..Options::default() };
    let err = Config::from_options(o).expect_err("3 s < 2 × 2 s").to_string();
    assert!(err.contains("ack_timeout") && err.contains("twice heartbeat_interval"), "{err}");
    let o = Options { heartbeat_interval: d(2000), lost_worker_grace: d(1000), ..Options::default() };
    let err = Config::from_options(o).expect_err("1 s < 2 s").to_string();
    assert!(err.contains("lost_worker_grace") && err.contains("heartbeat_interval"), "{err}");
    let o =
        Options { heartbeat_interval: d(2000), ack_timeout: d(4000), lost_worker_grace: d(2000), ..Options::default() };
    assert!(Config::from_options(o).is_ok());
}

#[test]
fn flags_beat_the_file_and_unknown_file_keys_are_rejected() {
    let dir = std::env::temp_dir().join(format!("ax-config-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let file = dir.join("axd.toml");
    std::fs::write(&file, "listen = \"127.0.0.1:9000\"\nack_timeout = \"5s\"\n").expect("write");
    let args = Args::parse_from(["axd", "--config", file.to_str().expect("utf8"), "--listen", "127.0.0.1:9100"]);
    let c = Config::resolve(args).expect("resolve");
    assert_eq!(c.listen.port(), 9100);
    assert_eq!(c.ack_timeout, Duration::from_secs(5));
    std::fs::write(&file, "lisen = \"127.0.0.1:9000\"\n").expect("write");
    let err = Config::resolve(Args::parse_from(["axd", "--config", file.to_str().expect("utf8")])).expect_err("typo");
    assert!(err.to_string().contains("lisen"), "{err}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn scopes_and_the_trust_domain_are_parsed_and_checked_by_name() {
    let args = Args::parse_from([
        "axd",
        "--trust-domain",
        "corp.example",
        "--scope",
        "alice=*",
        "--scope",
        "bob=billing,demo",
        "--audit-retention",
        "7d",
    ]);
    let c = Config::resolve(args).expect("resolve");
    assert_eq!(c.policy.trust_domain, "corp.example");
    assert_eq!(c.policy.scopes["alice"], crate::auth::AppScope::All);
    assert!(c.policy.scopes["bob"].contains("demo"));
    assert_eq!(c.audit_retention, Duration::from_secs(7 * 86_400));
    assert_eq!(Config::from_options(Options::default()).expect("defaults").policy.trust_domain, "ax");
    let dir = std::env::temp_dir().join(format!("ax-config-scope-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let file = dir.join("axd.toml");
    std::fs::write(&file, "trust_domain = \"corp\"\nscope = [\"ops=*\", \"bob=billing\"]\n").expect("write");
    let c = Config::resolve(Args::parse_from(["axd", "--config", file.to_str().expect("utf8")])).expect("file");
    assert_eq!(c.policy.trust_domain, "corp");
    assert_eq!(c.policy.scopes["ops"], crate::auth::AppScope::All);
    assert!(c.policy.scopes["bob"].contains("billing"));
    let _ = std::fs::remove_dir_all(dir);
    let bad = |o: Options| Config::from_options(o).expect_err("refused").to_string();
    let e = bad(Options { trust_domain: Some("Corp/x".into()), ..Options::default() });
    assert!(e.starts_with("trust_domain:"), "{e}");
    let e = bad(Options { scope: Some(vec!["alice".into()]), ..Options::default() });
    assert!(e.starts_with("scope:"), "{e}");
    let e = bad(Options { scope: Some(vec!["a=x".into(), "a=y".into()]), ..Options::default() });
    assert!(e.contains("twice"), "{e}");
}

#[test]
fn plaintext_on_a_public_address_is_refused() {
    let o = Options { listen: Some("0.0.0.0:7070".parse().expect("addr")), ..Options::default() };
    let err = Config::from_options(o).expect_err("refused");
    assert!(err.to_string().starts_with("listen: 0.0.0.0:7070 is not a loopback address"), "{err}");
    let o = Options { metrics_listen: Some("0.0.0.0:9100".parse().expect("addr")), ..Options::default() };
    let err = Config::from_options(o).expect_err("refused").to_string();
    assert!(err.starts_with("metrics_listen: 0.0.0.0:9100 is not a loopback address"), "{err}");
    let args = Args::parse_from(["axd", "--metrics-listen", "0.0.0.0:9100", "--metrics-tls-proxy"]);
    assert_eq!(Config::resolve(args).expect("acknowledged").metrics_listen.map(|a| a.port()), Some(9100));
    let err = Args::try_parse_from(["axd", "--metrics-listen", "localhost"]).expect_err("not an address");
    assert!(err.to_string().contains("--metrics-listen"), "{err}");
    let partial = Options { tls_cert: Some("c.pem".into()), ..Options::default() };
    assert!(Config::from_options(partial).expect_err("partial").to_string().contains("tls_key"));
}

#[test]
fn the_console_address_is_checked_like_the_grpc_port_and_gets_a_port_of_its_own() {
    let addr = |s: &str| Some(s.parse::<SocketAddr>().expect("addr"));
    let err = |o: Options| Config::from_options(o).expect_err("refused").to_string();
    let e = err(Options { console_listen: addr("0.0.0.0:7080"), ..Options::default() });
    assert!(e.starts_with("console_listen: 0.0.0.0:7080 is not a loopback address"), "{e}");
    let e = err(Options { console_listen: addr("127.0.0.1:7070"), ..Options::default() });
    assert!(e.starts_with("console_listen: 127.0.0.1:7070 is the address of listen (127.0.0.1:7070)"), "{e}");
    let e = err(Options {
        metrics_listen: addr("127.0.0.1:9100"),
        console_listen: addr("127.0.0.1:9100"),
        ..Options::default()
    });
    assert!(e.starts_with("console_listen: 127.0.0.1:9100 is the address of metrics_listen"), "{e}");
    let tls = || Options {
        tls_cert: Some("c.pem".into()),
        tls_key: Some("k.pem".into()),
        tls_client_ca: Some("ca.pem".into()),
        ..Options::default()
    };
    // With TLS any address will do, but the unspecified one still covers the gRPC port's.
    let ok = Config::from_options(Options { console_listen: addr("0.0.0.0:7080"), ..tls() }).expect("with TLS");
    assert_eq!(ok.console_listen, addr("0.0.0.0:7080"));
    let e = err(Options { console_listen: addr("0.0.0.0:7070"), ..tls() });
    assert!(e.contains("is the address of listen"), "{e}");
    // Port 0 picks a free port: no clash.
    let ok = Config::from_options(Options {
        listen: addr("127.0.0.1:0"),
        console_listen: addr("127.0.0.1:0"),
        ..Options::default()
    });
    assert!(ok.is_ok());
    assert_eq!(Config::from_options(Options::default()).expect("default").console_listen, None, "off by default");
    let args = Args::parse_from(["axd", "--console-listen", "127.0.0.1:7080"]);
    assert_eq!(Config::resolve(args).expect("flag").console_listen, addr("127.0.0.1:7080"));
    let e = Args::try_parse_from(["axd", "--console-listen", "localhost"]).expect_err("not an address");
    assert!(e.to_string().contains("--console-listen"), "{e}");
}

#[test]
fn a_transaction_pooler_needs_a_session_url_and_postgres() {
    let pg = |pooler, session: Option<&str>, url: &str| {
        Config::from_options(Options {
            database_url: Some(url.to_owned()),
            database_pooler: pooler,
            database_session_url: session.map(str::to_owned),
            ..Options::default()
        })
    };
    let t = Some(DatabasePooler::Transaction);
    let e = pg(t, None, "postgres://h:6432/ax").expect_err("no session url").to_string();
    assert!(e.contains("database_session_url"), "{e}");
    let c = pg(t, Some("postgres://h:5432/ax"), "postgres://h:6432/ax").expect("with a session url");
    assert_eq!(c.database_pooler, DatabasePooler::Transaction);
    assert!(pg(t, Some("mysql://h/ax"), "mysql://h/ax").is_err());
    assert!(pg(None, Some("postgres://h/ax"), "sqlite://x.db").is_err());
    assert_eq!(pg(None, None, "postgres://h/ax").expect("plain").database_pooler, DatabasePooler::None);
}
