//! What can go wrong starting, seeding or restoring a test server.

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("making the temporary data directory: {0}")]
    TempDir(std::io::Error),
    #[error("preparing the certificates: {0}")]
    Pki(String),
    #[error("--controllers: {0}")]
    Controllers(String),
    #[error("starting the server thread: {0}")]
    Thread(std::io::Error),
    #[error("starting the server: {0}")]
    Server(#[from] ferrokube::server::ServerError),
    #[error("the server thread ended before the server was ready")]
    Stopped,
    #[error("reading the admin kubeconfig: {0}")]
    Kubeconfig(String),
    #[error(transparent)]
    Kube(#[from] kube::Error),
    #[error("the snapshot was taken from another server: restore it with TestServer::builder().from_snapshot(..)")]
    ForeignSnapshot,
    #[error("the store: {0}")]
    Store(ferrokube_store::StoreError),
    #[error("YAML document {index}: {message}")]
    Yaml { index: usize, message: String },
    #[error("waiting for CustomResourceDefinition {name}: {message}")]
    Crd { name: String, message: String },
}

impl From<ferrokube_store::StoreError> for Error {
    fn from(error: ferrokube_store::StoreError) -> Self {
        match error {
            ferrokube_store::StoreError::ForeignCheckpoint => Error::ForeignSnapshot,
            other => Error::Store(other),
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
