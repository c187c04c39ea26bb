//! An immutable snapshot that every request reads and that is replaced
//! whole now and then (the registry, the APF configuration), readable
//! without touching memory the other core writes.
//!
//! `RwLock<Arc<T>>` makes each read take the lock and bump the `Arc`'s
//! count: two writes to cache lines that every request on every core
//! writes too. On this project's 2-core machine those lines moving between
//! cores cost GET throughput measurably (`perf`, issue #18's APF goal).
//! A [`SnapshotCell`] also keeps a generation number that only a
//! replacement writes: each thread keeps its own share of the current
//! snapshot and takes a new one only when the generation moved, so
//! [`SnapshotCell::with`] reads one shared, unchanging word.
//! [`SnapshotCell::load`] still hands out a share of its own (an `Arc`)
//! for callers that keep the snapshot across `await`s.

use std::any::Any;
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

/// Tells cells apart in the per-thread cache (a process may hold many:
/// tests run many servers).
static NEXT_ID: AtomicU64 = AtomicU64::new(0);

/// How many cells' snapshots one thread keeps (a server has a handful).
const CACHED_PER_THREAD: usize = 8;

/// One thread's share of a cell's snapshot.
struct Cached {
    id: u64,
    generation: u64,
    snapshot: Arc<dyn Any + Send + Sync>,
}

thread_local! {
    static CACHE: RefCell<Vec<Cached>> = const { RefCell::new(Vec::new()) };
}

pub struct SnapshotCell<T> {
    current: RwLock<Arc<T>>,
    /// Moved after each replacement, once `current` holds the new snapshot.
    generation: AtomicU64,
    id: u64,
}

impl<T: std::fmt::Debug + Send + Sync + 'static> std::fmt::Debug for SnapshotCell<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SnapshotCell")
            .field("current", &self.load())
            .finish()
    }
}

impl<T: Send + Sync + 'static> SnapshotCell<T> {
    pub fn new(snapshot: Arc<T>) -> Self {
        SnapshotCell {
            current: RwLock::new(snapshot),
            generation: AtomicU64::new(0),
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// A share of the current snapshot.
    pub fn load(&self) -> Arc<T> {
        self.current
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    /// Serves `snapshot` from now on; a reader on any thread sees it from
    /// its next read.
    pub fn replace(&self, snapshot: Arc<T>) {
        *self
            .current
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = snapshot;
        self.generation.fetch_add(1, Ordering::Release);
    }

    /// Runs `read` on the current snapshot through this thread's share of
    /// it (once: `Fn` only so that every path can call it). Reading this
    /// cell again inside `read` works (the thread's cache is borrowed, so
    /// the inner read takes a share of its own).
    pub fn with<R>(&self, read: impl Fn(&T) -> R) -> R {
        let generation = self.generation.load(Ordering::Acquire);
        let answered = CACHE.try_with(|cache| {
            let mut cache = cache.try_borrow_mut().ok()?;
            let at = match cache.iter().position(|entry| entry.id == self.id) {
                Some(at) if cache[at].generation == generation => at,
                Some(at) => {
                    cache[at].generation = generation;
                    cache[at].snapshot = self.load();
                    at
                }
                None => {
                    if cache.len() == CACHED_PER_THREAD {
                        cache.remove(0);
                    }
                    cache.push(Cached {
                        id: self.id,
                        generation,
                        snapshot: self.load(),
                    });
                    cache.len() - 1
                }
            };
            // Read in place: no count is touched.
            let snapshot = cache[at].snapshot.downcast_ref::<T>()?;
            Some(read(snapshot))
        });
        match answered {
            Ok(Some(answer)) => answer,
            // The thread's cache is being read already, or torn down.
            _ => read(&self.load()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readers_see_each_replacement_and_cells_stay_apart() {
        let first = SnapshotCell::new(Arc::new(1));
        let second = SnapshotCell::new(Arc::new(String::from("a")));
        assert_eq!(first.with(|value| *value), 1);
        assert_eq!(second.with(|value| value.clone()), "a");
        first.replace(Arc::new(2));
        assert_eq!(first.with(|value| *value), 2);
        assert_eq!(second.with(|value| value.clone()), "a");
        // Another thread starts with the current snapshot.
        let first = Arc::new(first);
        let seen = std::thread::spawn({
            let first = first.clone();
            move || first.with(|value| *value)
        })
        .join()
        .ok();
        assert_eq!(seen, Some(2));
        // A read inside a read still answers.
        assert_eq!(first.with(|outer| first.with(|inner| outer + inner)), 4);
    }

    #[test]
    fn a_thread_keeps_a_bounded_number_of_cells() {
        let cells: Vec<_> = (0..CACHED_PER_THREAD * 2)
            .map(|value| SnapshotCell::new(Arc::new(value)))
            .collect();
        for (value, cell) in cells.iter().enumerate() {
            assert_eq!(cell.with(|read| *read), value);
        }
        assert_eq!(CACHE.with(|cache| cache.borrow().len()), CACHED_PER_THREAD);
    }
}
