//! A work queue as client-go's: an item is queued at most once, never
//! processed by two workers at the same time, and an item added while it is
//! being processed runs again afterwards.

use std::collections::{HashSet, VecDeque};
use std::hash::Hash;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;

struct Inner<T> {
    queue: VecDeque<T>,
    queued: HashSet<T>,
    processing: HashSet<T>,
    /// Added while processing: re-queued by `done`.
    dirty: HashSet<T>,
}

pub struct WorkQueue<T> {
    inner: Mutex<Inner<T>>,
    notify: Notify,
}

impl<T: Clone + Eq + Hash + Send + 'static> WorkQueue<T> {
    pub fn new() -> Arc<WorkQueue<T>> {
        Arc::new(WorkQueue {
            inner: Mutex::new(Inner {
                queue: VecDeque::new(),
                queued: HashSet::new(),
                processing: HashSet::new(),
                dirty: HashSet::new(),
            }),
            notify: Notify::new(),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner<T>> {
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub fn add(&self, item: T) {
        let mut inner = self.lock();
        if inner.processing.contains(&item) {
            inner.dirty.insert(item);
            return;
        }
        if inner.queued.insert(item.clone()) {
            inner.queue.push_back(item);
            drop(inner);
            self.notify.notify_one();
        }
    }

    /// Adds `item` after `delay` (a retry).
    pub fn add_after(self: &Arc<Self>, item: T, delay: Duration) {
        let queue = self.clone();
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            queue.add(item);
        });
    }

    /// The next item; the caller must call [`done`](Self::done) with it.
    pub async fn get(&self) -> T {
        loop {
            {
                let mut inner = self.lock();
                if let Some(item) = inner.queue.pop_front() {
                    inner.queued.remove(&item);
                    inner.processing.insert(item.clone());
                    // Others may be waiting for the rest.
                    if !inner.queue.is_empty() {
                        self.notify.notify_one();
                    }
                    return item;
                }
            }
            self.notify.notified().await;
        }
    }

    pub fn done(&self, item: &T) {
        let mut inner = self.lock();
        inner.processing.remove(item);
        if inner.dirty.remove(item) && inner.queued.insert(item.clone()) {
            inner.queue.push_back(item.clone());
            drop(inner);
            self.notify.notify_one();
        }
    }

    pub fn len(&self) -> usize {
        self.lock().queue.len()
    }

    pub fn is_empty(&self) -> bool {
        self.lock().queue.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn items_are_deduplicated_and_rerun_when_dirty() {
        let queue = WorkQueue::new();
        queue.add("a");
        queue.add("a");
        queue.add("b");
        assert_eq!(queue.len(), 2);
        let first = queue.get().await;
        assert_eq!(first, "a");
        queue.add("a");
        assert_eq!(queue.len(), 1, "a is processing: only marked dirty");
        queue.done(&first);
        assert_eq!(queue.len(), 2);
        assert_eq!(queue.get().await, "b");
        assert_eq!(queue.get().await, "a");
    }
}
