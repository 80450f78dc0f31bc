//! Graceful shutdown: the signals both binaries stop on.

/// A signal that asks the process to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// SIGINT (Ctrl-C).
    Interrupt,
    /// SIGTERM (what orchestrators send).
    Terminate,
}

impl Signal {
    /// `SIGINT` or `SIGTERM`.
    pub fn name(self) -> &'static str {
        match self {
            Signal::Interrupt => "SIGINT",
            Signal::Terminate => "SIGTERM",
        }
    }
}

/// Waits for SIGINT or SIGTERM (SIGINT only where there is no SIGTERM) and returns the one received. A signal
/// that cannot be listened for is handed to `cannot_listen` with the reason, and then never received.
pub async fn signal(cannot_listen: impl Fn(Signal, std::io::Error)) -> Signal {
    let interrupt = async {
        if let Err(error) = tokio::signal::ctrl_c().await {
            cannot_listen(Signal::Interrupt, error);
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(error) => {
                cannot_listen(Signal::Terminate, error);
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => Signal::Interrupt,
        () = terminate => Signal::Terminate,
    }
}
