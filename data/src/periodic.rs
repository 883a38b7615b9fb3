//! A background thread that runs a task every period until it is stopped (lease renewals,
//! heartbeats).

use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// Runs its task every `period` on a thread of its own; [`Periodic::stop`] (or drop) wakes the
/// thread and waits for it, so a stopped task never runs again.
pub(crate) struct Periodic {
    stop: Arc<(Mutex<bool>, Condvar)>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Periodic {
    /// Starts `task` every `period` (first run one period from now) on a thread named `name`.
    pub(crate) fn start(name: &str, period: Duration, mut task: impl FnMut() + Send + 'static) -> std::io::Result<Periodic> {
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let s = stop.clone();
        let thread = std::thread::Builder::new().name(name.into()).spawn(move || {
            let (m, cv) = &*s;
            let mut stopped = m.lock().unwrap_or_else(|e| e.into_inner());
            loop {
                // (checked before waiting too: a stop that came before this thread first waited
                // must not cost a whole period)
                if *stopped {
                    return;
                }
                let (g, _) = cv.wait_timeout(stopped, period).unwrap_or_else(|e| e.into_inner());
                stopped = g;
                if *stopped {
                    return;
                }
                drop(stopped);
                task();
                stopped = m.lock().unwrap_or_else(|e| e.into_inner());
            }
        })?;
        Ok(Periodic { stop, thread: Some(thread) })
    }

    /// Stops the thread (waking it if it waits) and waits for it to end.
    pub(crate) fn stop(&mut self) {
        {
            let (m, cv) = &*self.stop;
            *m.lock().unwrap_or_else(|e| e.into_inner()) = true;
            cv.notify_all();
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Periodic {
    fn drop(&mut self) {
        self.stop();
    }
}
