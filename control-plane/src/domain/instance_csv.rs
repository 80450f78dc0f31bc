//! `GET /api/admin/instance-admin/statistics/csv`: the instance statistics as one CSV row under a header
//! naming Unleash's instanceAdminStatsSchema properties, in the schema's order ([`COLUMNS`]). Numbers and
//! booleans are bare, text and the object-valued columns (JSON) are quoted with `"` doubled, as Unleash's
//! example. `versionEnterprise` is empty (Vexil has no Enterprise edition) and `edgeInstanceUsage` is `{}`
//! (Vexil counts no edge billing). `sum` is the SHA-256 (hex) of the row's other cells joined by commas.

use super::instance;
use super::roles::RootRole;
use crate::store::instance_counts as counts;
use crate::time::Timestamp;
use serde_json::{json, Value};
use sqlx::AnyConnection;
use vexil_shared::token::sha256_hex;
use vexil_shared::ApiError;

/// The columns, in instanceAdminStatsSchema's order.
pub const COLUMNS: [&str; 31] = [
    "instanceId",
    "timestamp",
    "versionOSS",
    "versionEnterprise",
    "users",
    "previousDayMetricsBucketsCount",
    "activeUsers",
    "licensedUsers",
    "productionChanges",
    "featureToggles",
    "projects",
    "contextFields",
    "roles",
    "groups",
    "environments",
    "segments",
    "strategies",
    "SAMLenabled",
    "OIDCenabled",
    "clientApps",
    "featureExports",
    "featureImports",
    "apiTokens",
    "maxEnvironmentStrategies",
    "maxConstraints",
    "maxConstraintValues",
    "releaseTemplates",
    "releasePlans",
    "edgeInstanceUsage",
    "readOnlyUsers",
    "sum",
];

const DAY_MS: i64 = 24 * 60 * 60 * 1000;

fn days_ago(now: Timestamp, days: i64) -> Timestamp {
    Timestamp::from_millis(now.millis() - days * DAY_MS).unwrap_or(Timestamp::EPOCH)
}

/// One CSV cell: text and JSON quoted (quotes doubled), numbers and booleans bare.
fn cell(value: &Value) -> String {
    let quoted = |text: &str| format!("\"{}\"", text.replace('"', "\"\""));
    match value {
        Value::Number(number) => number.to_string(),
        Value::Bool(flag) => flag.to_string(),
        Value::Null => String::new(),
        Value::String(text) => quoted(text),
        other => quoted(&other.to_string()),
    }
}

/// The largest constraint count of one strategy and value count of one constraint.
fn constraint_maxima(stored: &[String]) -> (usize, usize) {
    let mut most_constraints = 0;
    let mut most_values = 0;
    for text in stored {
        let Ok(Value::Array(constraints)) = serde_json::from_str::<Value>(text) else {
            continue;
        };
        most_constraints = most_constraints.max(constraints.len());
        for constraint in &constraints {
            let values = constraint
                .get("values")
                .and_then(Value::as_array)
                .map_or(0, Vec::len);
            most_values = most_values.max(values);
        }
    }
    (most_constraints, most_values)
}

/// The statistics' values, by [`COLUMNS`] but `sum`.
async fn values(conn: &mut AnyConnection) -> Result<Vec<Value>, ApiError> {
    let stats = instance::statistics(conn).await?;
    let now = Timestamp::now();
    let seen = |days| days_ago(now, days);
    let active = json!({
        "last7": counts::people_seen_since(conn, seen(7)).await?,
        "last30": counts::people_seen_since(conn, seen(30)).await?,
        "last60": counts::people_seen_since(conn, seen(60)).await?,
        "last90": counts::people_seen_since(conn, seen(90)).await?,
    });
    let licensed = counts::people_seen_since(conn, seen(30)).await?;
    let production = json!({
        "last30": counts::production_changes_since(conn, seen(30)).await?,
        "last60": counts::production_changes_since(conn, seen(60)).await?,
        "last90": counts::production_changes_since(conn, seen(90)).await?,
    });
    let today_ms = now.millis() - now.millis().rem_euclid(DAY_MS);
    let (enabled_buckets, variant_buckets) =
        counts::usage_buckets_between(conn, today_ms - DAY_MS, today_ms).await?;
    let client_apps = json!([
        {"range": "allTime", "count": counts::applications_seen_since(conn, 0).await?},
        {"range": "30d", "count": counts::applications_seen_since(conn, seen(30).millis()).await?},
        {"range": "7d", "count": counts::applications_seen_since(conn, seen(7).millis()).await?},
    ]);
    let (max_constraints, max_values) =
        constraint_maxima(&counts::strategy_constraints(conn).await?);
    Ok(vec![
        json!(stats.instance_id),
        json!(stats.timestamp),
        json!(stats.version_oss),
        json!(""),
        json!(stats.users),
        json!({"enabledCount": enabled_buckets, "variantCount": variant_buckets}),
        active,
        json!(licensed),
        production,
        json!(stats.feature_toggles),
        json!(stats.projects),
        json!(stats.context_fields),
        json!(stats.roles),
        json!(stats.groups),
        json!(stats.environments),
        json!(stats.segments),
        json!(stats.strategies),
        json!(stats.saml_enabled),
        json!(stats.oidc_enabled),
        client_apps,
        json!(counts::events_of_type(conn, "features-exported").await?),
        json!(counts::events_of_type(conn, "features-imported").await?),
        json!({
            "admin": stats.api_tokens.admin,
            "client": stats.api_tokens.client,
            "frontend": stats.api_tokens.frontend,
        }),
        json!(counts::max_environment_strategies(conn).await?),
        json!(max_constraints),
        json!(max_values),
        json!(counts::release_definitions(conn, "template").await?),
        json!(counts::release_definitions(conn, "plan").await?),
        json!({}),
        json!(counts::people_with_root_role(conn, RootRole::Viewer as i64).await?),
    ])
}

/// The CSV document: the header and one row, each ended by a newline.
pub async fn csv(conn: &mut AnyConnection) -> Result<String, ApiError> {
    let cells: Vec<String> = values(conn).await?.iter().map(cell).collect();
    let sum = sha256_hex(&cells.join(","));
    let header: Vec<String> = COLUMNS.iter().map(|name| format!("\"{name}\"")).collect();
    Ok(format!(
        "{}\n{},{}\n",
        header.join(","),
        cells.join(","),
        cell(&json!(sum))
    ))
}

#[cfg(test)]
mod tests {
    use super::{cell, constraint_maxima};
    use serde_json::json;

    #[test]
    fn cells_quote_text_and_json() {
        assert_eq!(cell(&json!(3)), "3");
        assert_eq!(cell(&json!(true)), "true");
        assert_eq!(cell(&json!("a\"b")), "\"a\"\"b\"");
        assert_eq!(cell(&json!({"a": 1})), "\"{\"\"a\"\":1}\"");
    }

    #[test]
    fn maxima_of_constraints() {
        let stored = vec![
            "[]".to_owned(),
            r#"[{"values":["a","b","c"]},{"values":[]}]"#.to_owned(),
            r#"[{"value":"x"}]"#.to_owned(),
        ];
        assert_eq!(constraint_maxima(&stored), (2, 3));
    }
}
