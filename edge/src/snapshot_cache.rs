//! The snapshot cache file: the last snapshot as a protobuf `vexil.v1.Full`, replaced atomically (written
//! to a temporary file in the same directory, synced, renamed over the old one).

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use prost::Message;
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
