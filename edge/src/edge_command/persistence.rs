//! Where the edge keeps what it holds of the upstream (a [`Backup`]: the features and the validated
//! tokens, by hash), so that an edge restarted while the upstream is down serves what it had:
//! `BACKUP_FOLDER` (one JSON file, replaced atomically) and `REDIS_URL` (one key). Written every
//! [`BACKUP_INTERVAL`] when it changed, and at shutdown; read at start.

use std::path::PathBuf;
use std::time::Duration;

use super::mirror::Backup;

pub const BACKUP_INTERVAL: Duration = Duration::from_secs(15);
/// The file in `BACKUP_FOLDER`.
pub const BACKUP_FILE: &str = "vexil-edge-backup.json";
/// The Redis key.
pub const REDIS_KEY: &str = "vexil-edge:backup";

pub enum Persistence {
    Folder(PathBuf),
    Redis(redis::Client),
}

impl Persistence {
    pub fn describe(&self) -> String {
        match self {
            Persistence::Folder(folder) => folder.join(BACKUP_FILE).display().to_string(),
            Persistence::Redis(_) => format!("redis key {REDIS_KEY}"),
        }
    }

    /// The stored backup; `None` when there is none yet.
    pub async fn load(&self) -> Result<Option<Backup>, String> {
        let text: Option<String> = match self {
            Persistence::Folder(folder) => {
                match tokio::fs::read_to_string(folder.join(BACKUP_FILE)).await {
                    Ok(text) => Some(text),
                    Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
                    Err(error) => return Err(error.to_string()),
                }
            }
            Persistence::Redis(client) => {
                let mut connection = client
                    .get_multiplexed_async_connection()
                    .await
                    .map_err(|e| e.to_string())?;
                redis::cmd("GET")
                    .arg(REDIS_KEY)
                    .query_async(&mut connection)
                    .await
                    .map_err(|e| e.to_string())?
            }
        };
        text.map(|text| serde_json::from_str(&text).map_err(|e| e.to_string()))
            .transpose()
    }

    pub async fn save(&self, backup: &Backup) -> Result<(), String> {
        let text = serde_json::to_string(backup).map_err(|e| e.to_string())?;
        match self {
            Persistence::Folder(folder) => {
                tokio::fs::create_dir_all(folder)
                    .await
                    .map_err(|e| e.to_string())?;
                let temporary = folder.join(format!("{BACKUP_FILE}.tmp"));
                tokio::fs::write(&temporary, text)
                    .await
                    .map_err(|e| e.to_string())?;
                tokio::fs::rename(&temporary, folder.join(BACKUP_FILE))
                    .await
                    .map_err(|e| e.to_string())
            }
            Persistence::Redis(client) => {
                let mut connection = client
                    .get_multiplexed_async_connection()
                    .await
                    .map_err(|e| e.to_string())?;
                redis::cmd("SET")
                    .arg(REDIS_KEY)
                    .arg(text)
                    .query_async::<()>(&mut connection)
                    .await
                    .map_err(|e| e.to_string())
            }
        }
    }
}
