//! [`Snapshot`]: the whole state of a [`crate::TestServer`], to start tests from.

use ferrokube::server::ServerCheckpoint;

/// Every object (with its resourceVersion and managedFields) and the
/// revision of one server at one moment. Cheap to take, clone and restore:
/// it shares the store's persistent maps. Restore it into the server it
/// came from ([`crate::TestServer::restore`]) or start new servers from it
/// ([`crate::TestServerBuilder::from_snapshot`]).
#[derive(Clone, Debug)]
pub struct Snapshot {
    checkpoint: ServerCheckpoint,
}

impl Snapshot {
    pub(crate) fn new(checkpoint: ServerCheckpoint) -> Self {
        Snapshot { checkpoint }
    }

    pub(crate) fn checkpoint(&self) -> &ServerCheckpoint {
        &self.checkpoint
    }

    pub(crate) fn into_checkpoint(self) -> ServerCheckpoint {
        self.checkpoint
    }

    /// The revision it was taken at (a list's resourceVersion then).
    pub fn revision(&self) -> i64 {
        self.checkpoint.revision()
    }

    /// How many objects it holds (built-in ones included).
    pub fn len(&self) -> usize {
        self.checkpoint.snapshot().objects.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
