//! Password hashing and checking, argon2id with its default parameters (19 MiB and two passes per password),
//! with bounded work: at most [`CONCURRENT_PASSWORD_WORK`] at once, each in one of as many memory buffers
//! allocated once and reused, and at most [`WAITING_SIGN_INS`] sign-ins waiting for a turn (one more → 429).
//!
//! The buffers are the library's own work, done in memory given to it (`hash_password_into_with_memory`):
//! with a fresh 19 MiB allocation per password, glibc's allocator keeps much of what is freed (its mmap
//! threshold rises after the first such free, and the aligned blocks then come from the heap and fragment
//! it), measured at about 19 MiB more resident per sign-in until several hundred MiB. Reused buffers keep
//! the resident memory of password work at [`CONCURRENT_PASSWORD_WORK`] × 19 MiB, whatever the traffic.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use argon2::password_hash::rand_core::OsRng;
use argon2::password_hash::{Output, ParamsString, PasswordHash, SaltString};
use argon2::{Algorithm, Argon2, Block, Params, Version};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use vexil_shared::ApiError;

/// Password hashes and checks running at once. Each holds a buffer of 19 MiB, so four hold 76 MiB; on the
/// two cores this is sized for, more at once would only queue for the CPU.
pub const CONCURRENT_PASSWORD_WORK: usize = 4;

/// Sign-ins waiting for their turn; one more is answered 429 at once. Sixteen wait a few hundred
/// milliseconds at most; a larger burst is not people signing in.
pub const WAITING_SIGN_INS: usize = 16;

/// The process's password work: its turns and their buffers.
pub struct PasswordWork {
    turns: Arc<Semaphore>,
    waiting_sign_ins: AtomicUsize,
    buffers: Arc<Mutex<Vec<Box<[Block]>>>>,
}

impl Default for PasswordWork {
    fn default() -> Self {
        PasswordWork {
            turns: Arc::new(Semaphore::new(CONCURRENT_PASSWORD_WORK)),
            waiting_sign_ins: AtomicUsize::new(0),
            buffers: Arc::default(),
        }
    }
}

/// Takes one off the waiting count when the wait ends, however it ends (a request dropped by its timeout
/// too).
struct Waiting<'a>(&'a AtomicUsize);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl PasswordWork {
    /// A sign-in's turn, waited for; 429 at once if [`WAITING_SIGN_INS`] already wait.
    pub async fn sign_in_turn(&self) -> Result<Turn, ApiError> {
        if let Ok(permit) = self.turns.clone().try_acquire_owned() {
            return Ok(self.turn_with(permit));
        }
        let before = self.waiting_sign_ins.fetch_add(1, Ordering::Relaxed);
        let _waiting = Waiting(&self.waiting_sign_ins);
        if before >= WAITING_SIGN_INS {
            return Err(ApiError::rate_limited(
                "Too many sign-ins at once; try again shortly",
                Duration::from_secs(1),
            ));
        }
        self.turn().await
    }

    /// A turn, waited for however many wait (for the callers who are already authenticated).
    pub async fn turn(&self) -> Result<Turn, ApiError> {
        let permit = self.turns.clone().acquire_owned().await.map_err(|_| {
            // The semaphore is never closed.
            tracing::error!("the password work semaphore is closed");
            ApiError::internal()
        })?;
        Ok(self.turn_with(permit))
    }

    fn turn_with(&self, permit: OwnedSemaphorePermit) -> Turn {
        let memory = self
            .buffers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        Turn {
            memory,
            buffers: self.buffers.clone(),
            _permit: permit,
        }
    }

    /// Hashes a password (random salt) in a turn, off the async threads: a PHC string.
    pub async fn hash(&self, password: String) -> Result<String, ApiError> {
        let mut turn = self.turn().await?;
        blocking(move || turn.hash(password.as_bytes())).await?
    }

    /// Hashes a password for a caller who is not signed in (a sign-up with an invite link, a reset link) in a
    /// sign-in's turn: strangers wait in the same bounded queue as sign-ins (429 past it).
    pub async fn hash_anonymous(&self, password: String) -> Result<String, ApiError> {
        let mut turn = self.sign_in_turn().await?;
        blocking(move || turn.hash(password.as_bytes())).await?
    }

    /// Checks a password against a stored PHC string in a turn, off the async threads (no string: false).
    pub async fn verify(&self, password: String, phc: Option<String>) -> Result<bool, ApiError> {
        let mut turn = self.turn().await?;
        blocking(move || turn.verify(password.as_bytes(), phc.as_deref())).await
    }
}

/// Runs password work on the blocking threads.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(work).await.map_err(|error| {
        tracing::error!(%error, "a password task failed");
        ApiError::internal()
    })
}

/// One turn of password work with its buffer; both go back when it is dropped (move it into the blocking
/// task, so a request dropped meanwhile still leaves the work bounded).
pub struct Turn {
    memory: Option<Box<[Block]>>,
    buffers: Arc<Mutex<Vec<Box<[Block]>>>>,
    _permit: OwnedSemaphorePermit,
}

impl Drop for Turn {
    fn drop(&mut self) {
        // Before the permit (a field, dropped after this), so that the next turn finds the buffer.
        if let Some(memory) = self.memory.take() {
            self.buffers
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(memory);
        }
    }
}

/// A PHC string no password matches, checked against for an unknown user so that a wrong username takes
/// as long as a wrong password.
static DECOY: OnceLock<String> = OnceLock::new();

impl Turn {
    /// Runs `work` in this turn's buffer (allocated at its first use, then reused), or `None` for a hash that
    /// needs more than the default parameters' memory: those are not made here, and checking one made
    /// elsewhere would take memory this bound does not cover.
    fn in_memory<T>(&mut self, blocks: usize, work: impl FnOnce(&mut [Block]) -> T) -> Option<T> {
        let default_blocks = Params::default().block_count();
        if blocks > default_blocks {
            tracing::warn!(
                blocks,
                "a password hash needs more memory than the default parameters; it is not checked"
            );
            return None;
        }
        let memory = self
            .memory
            .get_or_insert_with(|| vec![Block::default(); default_blocks].into_boxed_slice());
        Some(work(memory))
    }

    /// Whether `password` matches `phc` (argon2 in this turn's buffer; the comparison is constant-time).
    /// Without a hash (no such user, or one without a password) the decoy is checked, and the answer is
    /// false. Blocking: call it in `spawn_blocking`.
    pub fn verify(&mut self, password: &[u8], phc: Option<&str>) -> bool {
        let real = phc.is_some();
        let phc = match phc {
            Some(phc) => phc.to_owned(),
            None => match DECOY.get() {
                Some(decoy) => decoy.clone(),
                None => match self.hash(b"decoy password of no user") {
                    Ok(decoy) => DECOY.get_or_init(|| decoy).clone(),
                    Err(_) => return false,
                },
            },
        };
        self.matches(password, &phc) && real
    }

    fn matches(&mut self, password: &[u8], phc: &str) -> bool {
        let Ok(hash) = PasswordHash::new(phc) else {
            return false;
        };
        let (Some(salt), Some(expected)) = (hash.salt, hash.hash) else {
            return false;
        };
        let Ok(algorithm) = Algorithm::try_from(hash.algorithm) else {
            return false;
        };
        let version = match hash.version.map(Version::try_from).transpose() {
            Ok(version) => version.unwrap_or_default(),
            Err(_) => return false,
        };
        let Ok(params) = Params::try_from(&hash) else {
            return false;
        };
        let mut salt_bytes = [0u8; 64];
        let Ok(salt) = salt.decode_b64(&mut salt_bytes) else {
            return false;
        };
        let blocks = params.block_count();
        let argon2 = Argon2::new(algorithm, version, params);
        self.in_memory(blocks, |memory| {
            Output::init_with(expected.len(), |out| {
                Ok(argon2.hash_password_into_with_memory(password, salt, out, memory)?)
            })
            .is_ok_and(|computed| computed == expected)
        })
        .unwrap_or(false)
    }

    /// Hashes `password` with a random salt and the default parameters: a PHC string that
    /// `PasswordVerifier` of the argon2 crate verifies too. Blocking.
    pub fn hash(&mut self, password: &[u8]) -> Result<String, ApiError> {
        let fail = |error: argon2::password_hash::Error| {
            tracing::error!(%error, "cannot hash a password");
            ApiError::internal()
        };
        let salt = SaltString::generate(&mut OsRng);
        let argon2 = Argon2::default();
        let mut salt_bytes = [0u8; 64];
        let salt_raw = salt.as_salt().decode_b64(&mut salt_bytes).map_err(fail)?;
        let output = self
            .in_memory(argon2.params().block_count(), |memory| {
                Output::init_with(Params::DEFAULT_OUTPUT_LEN, |out| {
                    Ok(argon2.hash_password_into_with_memory(password, salt_raw, out, memory)?)
                })
            })
            .ok_or_else(ApiError::internal)?
            .map_err(fail)?;
        let hash = PasswordHash {
            algorithm: Algorithm::Argon2id.ident(),
            version: Some(Version::V0x13.into()),
            params: ParamsString::try_from(argon2.params()).map_err(fail)?,
            salt: Some(salt.as_salt()),
            hash: Some(output),
        };
        Ok(hash.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use argon2::PasswordVerifier as _;

    #[tokio::test]
    async fn hashes_verify_here_and_with_the_library_and_buffers_are_reused() {
        let work = PasswordWork::default();
        let phc = work.hash("correct horse".to_owned()).await.unwrap();
        assert!(phc.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"), "{phc}");
        let parsed = PasswordHash::new(&phc).unwrap();
        assert!(Argon2::default()
            .verify_password(b"correct horse", &parsed)
            .is_ok());
        let mut turn = work.sign_in_turn().await.unwrap();
        assert!(turn.verify(b"correct horse", Some(&phc)));
        assert!(!turn.verify(b"wrong horse", Some(&phc)));
        assert!(!turn.verify(b"correct horse", Some("not a PHC string")));
        // No hash: the decoy is checked, and nothing matches.
        assert!(!turn.verify(b"decoy password of no user", None));
        // A hash made by the library verifies here.
        let salt = SaltString::generate(&mut OsRng);
        let library = argon2::PasswordHasher::hash_password(&Argon2::default(), b"pw", &salt)
            .unwrap()
            .to_string();
        assert!(turn.verify(b"pw", Some(&library)));
        drop(turn);
        assert_eq!(work.buffers.lock().unwrap().len(), 1);
    }

    #[test]
    fn a_hash_needing_more_memory_than_the_default_is_not_checked() {
        let params = Params::new(Params::DEFAULT_M_COST * 2, 1, 1, None).unwrap();
        let salt = SaltString::generate(&mut OsRng);
        let big = argon2::PasswordHasher::hash_password(
            &Argon2::new(Algorithm::Argon2id, Version::V0x13, params),
            b"pw",
            &salt,
        )
        .unwrap()
        .to_string();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let work = PasswordWork::default();
        let mut turn = runtime.block_on(work.turn()).unwrap();
        assert!(!turn.verify(b"pw", Some(&big)));
    }

    #[tokio::test]
    async fn turns_are_bounded_and_so_is_the_sign_in_queue() {
        let work = Arc::new(PasswordWork::default());
        let mut held = Vec::new();
        for _ in 0..CONCURRENT_PASSWORD_WORK {
            held.push(work.sign_in_turn().await.unwrap());
        }
        let mut waiting = Vec::new();
        for _ in 0..WAITING_SIGN_INS {
            let work = work.clone();
            waiting.push(tokio::spawn(
                async move { work.sign_in_turn().await.is_ok() },
            ));
        }
        while work.waiting_sign_ins.load(Ordering::Relaxed) < WAITING_SIGN_INS {
            tokio::task::yield_now().await;
        }
        let refused = work.sign_in_turn().await.err().unwrap();
        assert_eq!(refused.retry_after_secs, Some(1));
        held.clear();
        for task in waiting {
            assert!(task.await.unwrap());
        }
        assert_eq!(work.waiting_sign_ins.load(Ordering::Relaxed), 0);
    }
}
