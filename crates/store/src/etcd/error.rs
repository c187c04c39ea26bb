//! What can go wrong talking to etcd, and how it reaches the store.

use crate::backend::BackendError;
use crate::Revision;

/// etcd's `ErrCompacted` text (`mvcc.ErrCompacted`), as the gRPC status carries it.
const COMPACTED: &str = "required revision has been compacted";

#[derive(Debug, thiserror::Error)]
pub enum EtcdError {
    #[error("etcd configuration: {0}")]
    Config(String),
    #[error("{0}")]
    Timeout(String),
    #[error("etcd: {message}")]
    Compacted { message: String },
    #[error("etcd: {0}")]
    Client(String),
    #[error("etcd answered unexpectedly: {0}")]
    Protocol(String),
}

impl From<etcd_client::Error> for EtcdError {
    fn from(error: etcd_client::Error) -> Self {
        if let etcd_client::Error::GRpcStatus(status) = &error {
            // gRPC code OutOfRange; the text tells it from "future revision".
            if status.message().contains(COMPACTED) {
                return EtcdError::Compacted {
                    message: status.message().to_string(),
                };
            }
            return EtcdError::Client(status.message().to_string());
        }
        EtcdError::Client(error.to_string())
    }
}

/// Whether a failed request certainly never reached etcd, so a write may be
/// sent again without applying twice: no connection could be made.
pub(super) fn never_sent(message: &str) -> bool {
    // "no leader": refused by the member's require-leader check, never proposed.
    [
        "tcp connect error",
        "Connection refused",
        "error trying to connect",
        "etcdserver: no leader",
    ]
    .iter()
    .any(|sign| message.contains(sign))
}

impl EtcdError {
    /// As a store error; `requested` is the revision asked for when known.
    pub fn into_backend(self, requested: Revision) -> BackendError {
        match self {
            EtcdError::Compacted { .. } => BackendError::Compacted {
                requested,
                oldest: requested + 1,
            },
            other => BackendError::Io(other.to_string()),
        }
    }
}

impl From<EtcdError> for BackendError {
    fn from(error: EtcdError) -> Self {
        error.into_backend(0)
    }
}
