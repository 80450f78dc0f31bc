//! The hook through which a server learns tokens its snapshot does not carry: `vexil-edge edge` validates an
//! unknown SDK token with its upstream Unleash (`POST /edge/validate`) and, when the upstream knows it,
//! advances the snapshot with the token's grant, so that the ordinary hash lookup then finds it. The
//! control plane and `vexil-edge serve` have none: their snapshots carry every token.

use std::future::Future;
use std::pin::Pin;

use vexil_shared::ApiError;

/// Learns tokens on demand.
pub trait TokenResolver: Send + Sync {
    /// Called with the secret of a request whose token the current snapshot does not hold, or holds expired.
    /// On return the snapshot holds the token's grant if the upstream vouches for it; an error is the
    /// answer the request gets instead (say, 403 for a token this server must not serve). `Ok` with nothing
    /// learned leaves the request to the ordinary answer for an unknown token (401).
    fn resolve<'a>(
        &'a self,
        secret: &'a str,
    ) -> Pin<Box<dyn Future<Output = Result<(), ApiError>> + Send + 'a>>;
}
