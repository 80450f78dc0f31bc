//! The snapshot cache file: the last snapshot as a protobuf `vexil.v1.Full`, replaced atomically (written
//! to a temporary file in the same directory, synced, renamed over the old one) by a [`CacheWriter`] off
//! the path that applies updates.

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use std::sync::Arc;

use prost::Message;
use tokio::sync::watch;
use vexil_proto::v1;
use vexil_serving::ServingSnapshot;
use vexil_shared::CompileOptions;

/// The cached snapshot; `None` when there is no file yet.
pub fn load(path: &Path) -> Result<Option<ServingSnapshot>, String> {
    let bytes = match fs::read(path) {
        Ok(bytes) => bytes,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(error.to_string()),
    };
    let full = v1::Full::decode(&bytes[..]).map_err(|error| error.to_string())?;
    Ok(Some(ServingSnapshot::from_full(
        full,
        &CompileOptions::default(),
    )))
}

/// Replaces the file with `full`.
pub fn store(path: &Path, full: &v1::Full) -> std::io::Result<()> {
    let mut temporary = PathBuf::from(path);
    temporary.as_mut_os_string().push(".tmp");
    let mut file = fs::File::create(&temporary)?;
    file.write_all(&full.encode_to_vec())?;
    file.sync_all()?;
    fs::rename(&temporary, path)
}

/// Writes the latest snapshot it is given to the cache file, in the background: the subscriber hands each
/// new snapshot over without waiting, and snapshots that arrive while a write is under way collapse into
/// the latest, so a burst of revisions costs one write, not one each.
pub struct CacheWriter {
    latest: watch::Sender<Option<Arc<ServingSnapshot>>>,
}

impl CacheWriter {
    /// Starts the writing task.
    pub fn start(path: PathBuf) -> CacheWriter {
        let (latest, mut next) = watch::channel(None::<Arc<ServingSnapshot>>);
        tokio::spawn(async move {
            while next.changed().await.is_ok() {
                let Some(snapshot) = next.borrow_and_update().clone() else {
                    continue;
                };
                let path = path.clone();
                let written =
                    tokio::task::spawn_blocking(move || store(&path, &snapshot.to_full())).await;
                if let Ok(Err(error)) | Err(error) = written.map_err(std::io::Error::other) {
                    tracing::warn!(%error, "cannot write the snapshot cache");
                }
            }
        });
        CacheWriter { latest }
    }

    /// Queues `snapshot` to be written (replacing any not yet written).
    pub fn write(&self, snapshot: Arc<ServingSnapshot>) {
        self.latest.send_replace(Some(snapshot));
    }
}
