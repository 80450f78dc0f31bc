//! A fresh database per test: a SQLite file in a temp dir, or a Postgres database created on the server of
//! `TEST_DATABASE_URL` (set by `scripts/test`) and dropped at the end.

use sqlx::{AnyConnection, Connection, Executor};

/// Runs each named `async fn(TestDb)` once on SQLite and once on Postgres.
#[macro_export]
macro_rules! on_sqlite_and_postgres {
    ($($test:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $test() {
                    super::$test($crate::database::TestDb::sqlite().await).await;
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $test() {
                    super::$test($crate::database::TestDb::postgres().await).await;
                }
            )*
        }
    };
}

/// A database of its own for one test; dropped (Postgres) or deleted (SQLite) at the end.
pub struct TestDb {
    pub url: String,
    _dir: Option<tempfile::TempDir>,
    postgres: Option<(String, String)>,
}

impl TestDb {
    pub async fn sqlite() -> TestDb {
        let dir = tempfile::tempdir().expect("temp dir");
        let url = format!("sqlite://{}", dir.path().join("vexil.db").display());
        TestDb {
            url,
            _dir: Some(dir),
            postgres: None,
        }
    }

    pub async fn postgres() -> TestDb {
        let server = std::env::var("TEST_DATABASE_URL").unwrap_or_else(|_| {
            panic!(
                "TEST_DATABASE_URL is not set: the Postgres half of the store tests needs it. \
                 Run the tests with scripts/test, which sets it (postgres://postgres@127.0.0.1:5432/postgres)."
            )
        });
        sqlx::any::install_default_drivers();
        let name = format!("vexil_t_{}", uuid::Uuid::new_v4().simple());
        let mut conn = AnyConnection::connect(&server)
            .await
            .expect("connect to TEST_DATABASE_URL");
        conn.execute(format!("CREATE DATABASE {name}").as_str())
            .await
            .expect("create the test database");
        conn.close().await.ok();
        let (without_query, query) = match server.split_once('?') {
            Some((head, query)) => (head, format!("?{query}")),
            None => (server.as_str(), String::new()),
        };
        let prefix = without_query
            .rsplit_once('/')
            .map(|(prefix, _)| prefix)
            .unwrap_or(without_query);
        let url = format!("{prefix}/{name}{query}");
        TestDb {
            url,
            _dir: None,
            postgres: Some((server, name)),
        }
    }
}

impl TestDb {
    /// Drops the Postgres database now, under a running server (to test a lost store).
    pub async fn drop_database(&self) {
        let (server, name) = self.postgres.as_ref().expect("a Postgres test database");
        let mut conn = AnyConnection::connect(server)
            .await
            .expect("connect to TEST_DATABASE_URL");
        conn.execute(format!("DROP DATABASE {name} WITH (FORCE)").as_str())
            .await
            .expect("drop the test database");
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        let Some((server, name)) = self.postgres.take() else {
            return;
        };
        // Best effort, on a thread of its own: Drop may run inside a runtime.
        let _ = std::thread::spawn(move || {
            let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            runtime.block_on(async move {
                if let Ok(mut conn) = AnyConnection::connect(&server).await {
                    let _ = conn
                        .execute(format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)").as_str())
                        .await;
                }
            });
        })
        .join();
    }
}
