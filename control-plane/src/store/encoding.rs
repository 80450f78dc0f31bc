//! How the store keeps values the `Any` driver has no column type for, in one place: booleans are BIGINT 0/1,
//! timestamps RFC 3339 UTC text with milliseconds (so text order is time order), structured values JSON text.
//! Rows decode into typed values here (a value that does not decode is a decode error, a 500), and values are
//! encoded here before they are bound; nothing outside `store/` sees the stored form.

use super::{Backend, StoreError};
use crate::time::Timestamp;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize};
use sqlx::any::{AnyRow, AnyTypeInfo};
use sqlx::encode::IsNull;
use sqlx::error::BoxDynError;
use sqlx::{Any, AnyConnection, Database, Decode, Encode, FromRow, Row, Type};

impl Type<Any> for Timestamp {
    fn type_info() -> AnyTypeInfo {
        <String as Type<Any>>::type_info()
    }
}

impl<'q> Encode<'q, Any> for Timestamp {
    fn encode_by_ref(
        &self,
        buf: &mut <Any as Database>::ArgumentBuffer<'q>,
    ) -> Result<IsNull, BoxDynError> {
        <String as Encode<'q, Any>>::encode_by_ref(&self.to_string(), buf)
    }
}

impl<'r> Decode<'r, Any> for Timestamp {
    fn decode(value: <Any as Database>::ValueRef<'r>) -> Result<Self, BoxDynError> {
        let text = <String as Decode<Any>>::decode(value)?;
        Ok(Timestamp::parse(&text)?)
    }
}

fn column_error(column: &str, source: impl Into<BoxDynError>) -> sqlx::Error {
    sqlx::Error::ColumnDecode {
        index: column.to_owned(),
        source: source.into(),
    }
}

/// A BIGINT 0/1 column as a boolean (any non-zero value is true).
pub fn flag(row: &AnyRow, column: &str) -> sqlx::Result<bool> {
    Ok(row.try_get::<i64, _>(column)? != 0)
}

/// A BIGINT column of Unix milliseconds as a timestamp; a value out of chrono's range (only a client's
/// clock can put one there) reads as the epoch.
pub fn millis(row: &AnyRow, column: &str) -> sqlx::Result<Timestamp> {
    let ms: i64 = row.try_get(column)?;
    Ok(Timestamp::from_millis(ms).unwrap_or(Timestamp::EPOCH))
}

/// A JSON text column as a value of `T`.
pub fn json<T: DeserializeOwned>(row: &AnyRow, column: &str) -> sqlx::Result<T> {
    let text: String = row.try_get(column)?;
    serde_json::from_str(&text).map_err(|error| column_error(column, error))
}

/// A nullable JSON text column as a value of `T`.
pub fn optional_json<T: DeserializeOwned>(row: &AnyRow, column: &str) -> sqlx::Result<Option<T>> {
    let text: Option<String> = row.try_get(column)?;
    text.map(|text| serde_json::from_str(&text).map_err(|error| column_error(column, error)))
        .transpose()
}

/// A value as the JSON text a column keeps.
pub fn json_text<T: Serialize + ?Sized>(value: &T) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(|error| StoreError(sqlx::Error::Encode(Box::new(error))))
}

/// Every row of `SELECT {columns} FROM {from}` (with `binds` as `$1…`), in no particular order (callers
/// sort: on SQLite, sorting in SQL cost more than the read). For the large whole-table reads of the client
/// document. On SQLite the database builds the whole result as one JSON text, an array of one array of
/// `columns` per row, which serde parses into `J` (a tuple struct in column order: booleans come as 0/1,
/// timestamps as their text, JSON text columns as strings, read as [`JsonText`]) and then `R`: sqlx's `Any`
/// driver costs about 10 µs a row over SQLite (5,000 rows: 50 ms), one aggregated value costs one row. On
/// Postgres rows are read one by one as `R`: there `json_agg` costs twice the plain read.
pub async fn fetch_many<R, J>(
    conn: &mut AnyConnection,
    columns: &str,
    from: &str,
    binds: &[&str],
) -> Result<Vec<R>, StoreError>
where
    R: for<'r> FromRow<'r, AnyRow> + Send + Unpin,
    J: DeserializeOwned + Into<R>,
{
    if Backend::of(conn) == Backend::Postgres {
        let sql = format!("SELECT {columns} FROM {from}");
        let mut query = sqlx::query_as::<_, R>(&sql);
        for bind in binds {
            query = query.bind(*bind);
        }
        return Ok(query.fetch_all(conn).await?);
    }
    let sql = format!("SELECT COALESCE(json_group_array(json_array({columns})), '[]') FROM {from}");
    let mut query = sqlx::query_scalar::<_, String>(&sql);
    for bind in binds {
        query = query.bind(*bind);
    }
    let text = query.fetch_one(conn).await?;
    let rows: Vec<J> = serde_json::from_str(&text)
        .map_err(|error| StoreError(sqlx::Error::Decode(Box::new(error))))?;
    Ok(rows.into_iter().map(Into::into).collect())
}

/// A JSON text column in a row [`fetch_many`] reads as JSON: a string holding JSON, parsed as `T`.
#[derive(Debug)]
pub struct JsonText<T>(pub T);

impl<'de, T: DeserializeOwned> Deserialize<'de> for JsonText<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        serde_json::from_str(&text)
            .map(JsonText)
            .map_err(serde::de::Error::custom)
    }
}

/// `$first, $first+1, …` for `count` values bound in that order (an `IN (…)` list).
pub fn placeholders(first: usize, count: usize) -> String {
    (first..first + count)
        .map(|index| format!("${index}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// How many values one `IN (…)` list binds at most (SQLite allows 32,766 per statement).
pub const IN_LIST_CHUNK: usize = 500;

#[cfg(test)]
mod tests {
    use super::*;
    use sqlx::any::AnyPoolOptions;

    #[tokio::test]
    async fn values_round_trip_through_a_real_database() {
        sqlx::any::install_default_drivers();
        let pool = AnyPoolOptions::new()
            .max_connections(1)
            .connect("sqlite::memory:")
            .await
            .unwrap();
        let at = Timestamp::parse("2026-11-23T10:00:00.5Z").unwrap();
        let row: AnyRow =
            sqlx::query("SELECT $1 AS at, 1 AS yes, 0 AS no, $2 AS list, NULL AS absent")
                .bind(at)
                .bind(json_text(&vec!["a", "b"]).unwrap())
                .fetch_one(&pool)
                .await
                .unwrap();
        assert_eq!(row.try_get::<Timestamp, _>("at").unwrap(), at);
        assert!(flag(&row, "yes").unwrap());
        assert!(!flag(&row, "no").unwrap());
        assert_eq!(json::<Vec<String>>(&row, "list").unwrap(), ["a", "b"]);
        assert_eq!(optional_json::<Vec<String>>(&row, "absent").unwrap(), None);
        let error = json::<Vec<i64>>(&row, "list").unwrap_err();
        assert!(error.to_string().contains("list"), "{error}");
    }
}
