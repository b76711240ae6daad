//! A few threads, each running a single-threaded runtime, for tasks whose futures are not
//! `Send`: a streamed reply's fixer holds a [`toolfix::ReplyStream`], which is not `Send`
//! (it borrows the tool set as `&dyn ToolLookup`, without `Sync`), so it cannot live in a
//! `tokio::spawn`ed task across an `.await`.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::sync::mpsc;

type Job = Box<dyn FnOnce() -> Pin<Box<dyn Future<Output = ()>>> + Send>;

/// The threads, fed round-robin. A thread ends when the pool is dropped and its tasks are
/// done.
#[derive(Debug)]
pub(crate) struct LocalPool {
    senders: Vec<mpsc::UnboundedSender<Job>>,
    next: AtomicUsize,
}

impl LocalPool {
    pub(crate) fn new(threads: usize) -> std::io::Result<LocalPool> {
        let mut senders = Vec::with_capacity(threads);
        for n in 0..threads.max(1) {
            let (tx, mut rx) = mpsc::unbounded_channel::<Job>();
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
            std::thread::Builder::new().name(format!("toolfix-stream-{n}")).spawn(move || {
                let local = tokio::task::LocalSet::new();
                local.block_on(&runtime, async move {
                    while let Some(job) = rx.recv().await {
                        tokio::task::spawn_local(job());
                    }
                });
                // Let the tasks still running finish.
                runtime.block_on(local);
            })?;
            senders.push(tx);
        }
        Ok(LocalPool { senders, next: AtomicUsize::new(0) })
    }

    /// Run the future `make` builds on one of the threads.
    pub(crate) fn spawn<F, Fut>(&self, make: F)
    where
        F: FnOnce() -> Fut + Send + 'static,
        Fut: Future<Output = ()> + 'static,
    {
        let n = self.next.fetch_add(1, Ordering::Relaxed) % self.senders.len().max(1);
        if let Some(tx) = self.senders.get(n) {
            let _ = tx.send(Box::new(move || Box::pin(make()) as Pin<Box<dyn Future<Output = ()>>>));
        }
    }
}
