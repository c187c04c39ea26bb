//! The revision-ordered change log behind watches: every change the cache
//! applied within the history window, with the object before and after.
//!
//! Watchers read it at their own pace (a slow watcher never stalls a
//! writer or another watcher); one that falls behind the window is told its
//! revision is gone, as kube's watch cache answers 410 Expired.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::Revision;

/// One applied change to one key.
pub struct Change<O> {
    pub revision: Revision,
    pub key: String,
    /// The object after the change; for a delete, the last state with its
    /// resourceVersion moved to the deleting revision (what DELETED events carry).
    pub object: Arc<O>,
    /// The object before the change; `None` for a creation.
    pub previous: Option<Arc<O>>,
    /// Create and mod revision of `previous` (zero for a creation).
    pub previous_create_revision: Revision,
    pub previous_revision: Revision,
    pub deleted: bool,
}

/// Why changes after a revision cannot be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum HistoryError {
    #[error("too old resource version: {requested} ({oldest})")]
    Expired {
        requested: Revision,
        oldest: Revision,
    },
}

pub(crate) struct History<O> {
    window: Duration,
    /// Every change with a revision greater than this one is in `changes`.
    complete_after: Revision,
    changes: VecDeque<(Instant, Arc<Change<O>>)>,
}

impl<O> History<O> {
    pub(crate) fn new(start: Revision, window: Duration) -> Self {
        History {
            window,
            complete_after: start,
            changes: VecDeque::new(),
        }
    }

    pub(crate) fn push(&mut self, change: Change<O>, now: Instant) {
        debug_assert!(self
            .changes
            .back()
            .is_none_or(|(_, last)| last.revision <= change.revision));
        self.changes.push_back((now, Arc::new(change)));
        while let Some((applied, oldest)) = self.changes.front() {
            if now.duration_since(*applied) <= self.window {
                break;
            }
            self.complete_after = oldest.revision;
            self.changes.pop_front();
        }
    }

    /// Forget every change: only revisions from `start` on can be read (a
    /// restore, after which older positions are gone as after a compaction).
    pub(crate) fn reset(&mut self, start: Revision) {
        self.changes.clear();
        self.complete_after = start;
    }

    /// Oldest revision a watch may start after.
    pub(crate) fn oldest(&self) -> Revision {
        self.complete_after
    }

    /// Up to `max` changes with revision > `after`, in revision order.
    pub(crate) fn since(
        &self,
        after: Revision,
        max: usize,
    ) -> Result<Vec<Arc<Change<O>>>, HistoryError> {
        if after < self.complete_after {
            return Err(HistoryError::Expired {
                requested: after,
                oldest: self.complete_after,
            });
        }
        let start = self
            .changes
            .partition_point(|(_, change)| change.revision <= after);
        Ok(self
            .changes
            .iter()
            .skip(start)
            .take(max)
            .map(|(_, change)| change.clone())
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(revision: Revision) -> Change<u32> {
        Change {
            revision,
            key: format!("/k/{revision}"),
            object: Arc::new(1),
            previous: None,
            previous_create_revision: 0,
            previous_revision: 0,
            deleted: false,
        }
    }

    #[test]
    fn reads_after_a_revision_and_expires_old_ones() {
        let start = Instant::now();
        let mut history = History::new(10, Duration::from_secs(5));
        for revision in 11..=15 {
            history.push(change(revision), start);
        }
        let revisions = |after| {
            history
                .since(after, 100)
                .map(|changes| changes.iter().map(|c| c.revision).collect::<Vec<_>>())
        };
        assert_eq!(revisions(10), Ok(vec![11, 12, 13, 14, 15]));
        assert_eq!(revisions(13), Ok(vec![14, 15]));
        assert_eq!(revisions(15), Ok(vec![]));
        assert_eq!(
            revisions(9),
            Err(HistoryError::Expired {
                requested: 9,
                oldest: 10
            })
        );
        history.push(change(16), start + Duration::from_secs(6));
        assert_eq!(
            history.oldest(),
            15,
            "everything older than the window is gone"
        );
        assert!(history.since(14, 100).is_err());
        assert_eq!(history.since(15, 100).map(|changes| changes.len()), Ok(1));
        assert_eq!(history.since(10 + 5, 0).map(|changes| changes.len()), Ok(0));
    }
}
