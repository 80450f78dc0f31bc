//! The timer [`crate::serve`] gives hyper for one connection's header read timeout, at about the cost of a
//! clock read per request.
//!
//! hyper starts a new sleep each time it waits for a request head and drops it when the head has arrived,
//! so with hyper-util's `TokioTimer` every request on a kept-alive connection registers a timer in tokio's
//! wheel and removes it again: about 15 % of `/api/frontend`'s throughput (BENCHMARKS.md, issue 17). Here
//! all the sleeps of one connection share one tokio timer. A sleep only records its deadline; when it is
//! polled before that deadline, the shared timer is moved earlier if it would fire later (never the case
//! for header reads, whose deadlines only grow) or re-armed if it has fired, so the wheel sees about one
//! change per timeout period per connection, and at worst one spurious wake-up of the connection's task.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Instant;

use hyper::rt::{Sleep, Timer};

/// One connection's timer: every [`Sleep`] it makes shares its tokio timer.
#[derive(Clone, Default)]
pub(crate) struct ConnectionTimer {
    shared: Arc<Mutex<Option<Pin<Box<tokio::time::Sleep>>>>>,
}

impl Timer for ConnectionTimer {
    fn sleep(&self, duration: std::time::Duration) -> Pin<Box<dyn Sleep>> {
        self.sleep_until(self.now() + duration)
    }

    /// Tokio's clock, as the sleeps compare with it (the same as the system's, but in paused tests).
    fn now(&self) -> Instant {
        tokio::time::Instant::now().into_std()
    }

    fn sleep_until(&self, deadline: Instant) -> Pin<Box<dyn Sleep>> {
        Box::pin(SharedSleep {
            shared: self.shared.clone(),
            deadline,
        })
    }
}

/// A sleep of a [`ConnectionTimer`]: its deadline, and the connection's tokio timer that wakes it.
struct SharedSleep {
    shared: Arc<Mutex<Option<Pin<Box<tokio::time::Sleep>>>>>,
    deadline: Instant,
}

impl Future for SharedSleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let deadline = tokio::time::Instant::from_std(self.deadline);
        if tokio::time::Instant::now() >= deadline {
            return Poll::Ready(());
        }
        // Only this connection's task polls its sleeps: the lock is never contended.
        let mut shared = self.shared.lock().unwrap_or_else(PoisonError::into_inner);
        let timer = shared.get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        if timer.is_elapsed() || timer.deadline() > deadline {
            timer.as_mut().reset(deadline);
        }
        // Pending until `deadline` (or a spurious wake-up, after which hyper polls again).
        match timer.as_mut().poll(cx) {
            Poll::Ready(()) if tokio::time::Instant::now() >= deadline => Poll::Ready(()),
            _ => Poll::Pending,
        }
    }
}

impl Sleep for SharedSleep {}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test(start_paused = true)]
    async fn each_sleep_ends_at_its_own_deadline() {
        let timer = ConnectionTimer::default();
        let started = tokio::time::Instant::now();
        // hyper's pattern: a sleep, dropped before its end, then one with a later deadline.
        let first = timer.sleep(Duration::from_secs(20));
        let early = tokio::time::timeout(Duration::from_secs(1), first).await;
        assert!(early.is_err(), "the first sleep ended after 1 s");
        let second = timer.sleep(Duration::from_secs(20));
        second.await;
        let waited = started.elapsed();
        assert!(waited >= Duration::from_secs(21), "{waited:?}");
        // An earlier deadline than the shared timer's moves it.
        let long = timer.sleep(Duration::from_secs(60));
        drop(long);
        let short_started = tokio::time::Instant::now();
        timer.sleep(Duration::from_secs(5)).await;
        assert!(short_started.elapsed() >= Duration::from_secs(5));
        assert!(short_started.elapsed() < Duration::from_secs(6));
    }
}
