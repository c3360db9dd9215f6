//! App rate limits as axctl shows them: the JSON view of an AppLimit (a token bucket of instance
//! starts shared by the cluster), the one-line summary `rate-limit set` prints, and the table of
//! `rate-limit list`.

use ax_proto::v1::AppLimit;
use serde::Serialize;

use super::{layout::Table, scalars::or_dash, terminal::escape_controls, time::time_text};

/// JSON view of an AppLimit; numbers as the server sent them.
#[derive(Debug, Serialize)]
pub struct AppLimitView {
    pub app: String,
    pub per_second: f64,
    pub burst: u32,
    pub tokens: f64,
    pub updated_by: String,
    pub update_time: Option<String>,
}

impl From<&AppLimit> for AppLimitView {
    fn from(l: &AppLimit) -> Self {
        AppLimitView {
            app: l.app.clone(),
            per_second: l.per_second,
            burst: l.burst,
            tokens: l.tokens,
            updated_by: l.updated_by.clone(),
            update_time: time_text(l.update_time.as_ref()),
        }
    }
}

/// A rate for people: the shortest decimal that is the number (`2.5`, `0.001`, `100000`).
fn rate_text(per_second: f64) -> String {
    per_second.to_string()
}

/// Tokens for people: two decimals at most, without trailing zeros (`3`, `2.5`, `0.33`). The bucket
/// refills continuously, so more digits would only say how long the call took.
fn tokens_text(tokens: f64) -> String {
    let text = format!("{tokens:.2}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    // `-0.00` (a bucket the server reports a hair below zero) reads as 0.
    if text == "-0" { "0".to_owned() } else { text.to_owned() }
}

/// What `rate-limit set` prints: the limit as stored (the server fills in a default burst). The app
/// is escaped here, since a report keeps its newlines.
pub fn app_limit_summary(limit: &AppLimitView) -> String {
    format!(
        "rate limit of app {}: {} starts per second, burst {}",
        escape_controls(&limit.app),
        rate_text(limit.per_second),
        limit.burst
    )
}

/// The table of `rate-limit list`.
pub fn app_limit_table(limits: &[AppLimitView]) -> Table<6> {
    let mut table = Table::new(["APP", "PER SECOND", "BURST", "TOKENS", "UPDATED BY", "UPDATED"]);
    for l in limits {
        table.row([
            l.app.clone(),
            rate_text(l.per_second),
            l.burst.to_string(),
            tokens_text(l.tokens),
            or_dash(Some(l.updated_by.as_str())),
            or_dash(l.update_time.clone()),
        ]);
    }
    table
}

#[cfg(test)]
pub(super) mod tests {
    use serde_json::json;

    use super::*;

    /// A limit with every field set; shared with the terminal safety tests.
    pub(in crate::output) fn billing_limit() -> AppLimit {
        AppLimit {
            app: "billing".into(),
            per_second: 2.5,
            burst: 5,
            tokens: 3.456,
            updated_by: "spiffe://ax/admin/alice".into(),
            update_time: Some(prost_types::Timestamp { seconds: 1_767_268_800, nanos: 0 }),
        }
    }

    #[test]
    fn limits_serialize_every_field_as_sent() {
        assert_eq!(
            serde_json::to_value(AppLimitView::from(&billing_limit())).expect("json"),
            json!({
                "app": "billing",
                "per_second": 2.5,
                "burst": 5,
                "tokens": 3.456,
                "updated_by": "spiffe://ax/admin/alice",
                "update_time": "2026-01-01T12:00:00Z"
            })
        );
    }

    #[test]
    fn the_list_shows_rates_and_rounded_tokens() {
        let slow = AppLimit {
            app: "reports".into(),
            per_second: 0.001,
            burst: 1,
            tokens: 1.0,
            updated_by: String::new(),
            update_time: None,
        };
        let limits = [AppLimitView::from(&billing_limit()), AppLimitView::from(&slow)];
        assert_eq!(
            app_limit_table(&limits).render(),
            "APP      PER SECOND  BURST  TOKENS  UPDATED BY               UPDATED\n\
             billing  2.5         5      3.46    spiffe://ax/admin/alice  2026-01-01T12:00:00Z\n\
             reports  0.001       1      1       -                        -\n"
        );
    }

    #[test]
    fn numbers_read_without_noise() {
        assert_eq!(rate_text(100_000.0), "100000");
        assert_eq!(rate_text(0.1), "0.1");
        assert_eq!(tokens_text(2.5), "2.5");
        assert_eq!(tokens_text(0.0), "0");
        assert_eq!(tokens_text(-0.0001), "0");
        assert_eq!(tokens_text(99_999.999), "100000");
    }

    #[test]
    fn set_prints_the_stored_limit() {
        assert_eq!(
            app_limit_summary(&AppLimitView::from(&billing_limit())),
            "rate limit of app billing: 2.5 starts per second, burst 5"
        );
    }
}
