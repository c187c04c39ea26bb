//! What controllers learn about changes: the store's change log read from a
//! starting snapshot, as an informer lists then watches. A reader that falls
//! out of the history window starts over from a fresh snapshot (a relist).

use std::sync::Arc;

use ferrokube_store::{Change, HistoryError, Revision, Snapshot};

use super::{ObjectStore, StoredObject};

pub type ObjectChange = Arc<Change<StoredObject>>;
pub type ObjectSnapshot = Arc<Snapshot<StoredObject>>;

/// One step of the feed.
pub enum Update {
    /// Changes in revision order.
    Changes(Vec<ObjectChange>),
    /// The log no longer reaches back to where this reader was: here is the
    /// whole current state instead (the informer's relist).
    Resync(ObjectSnapshot),
}

pub struct Feed {
    store: ObjectStore,
    revision: Revision,
    wake: tokio::sync::watch::Receiver<Revision>,
}

impl Feed {
    /// The current state, and a feed of every change after it.
    pub fn start(store: &ObjectStore) -> (Feed, ObjectSnapshot) {
        let wake = store.subscribe();
        let snapshot = store.snapshot();
        let feed = Feed {
            store: store.clone(),
            revision: snapshot.revision,
            wake,
        };
        (feed, snapshot)
    }

    /// The next changes; waits until there are some.
    pub async fn next(&mut self) -> Update {
        loop {
            self.wake.borrow_and_update();
            match self.store.changes_since(self.revision, usize::MAX) {
                Ok(changes) if !changes.is_empty() => {
                    if let Some(last) = changes.last() {
                        self.revision = last.revision;
                    }
                    return Update::Changes(changes);
                }
                Ok(_) => {
                    if self.wake.changed().await.is_err() {
                        // The store is gone; nothing will ever change again.
                        std::future::pending::<()>().await;
                    }
                }
                Err(HistoryError::Expired { .. }) => {
                    let snapshot = self.store.snapshot();
                    self.revision = snapshot.revision;
                    return Update::Resync(snapshot);
                }
            }
        }
    }
}
