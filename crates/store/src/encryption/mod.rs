//! Encryption at rest, as kube-apiserver's value transformers
//! (`apiserver/pkg/storage/value`): every value written to the durable
//! backend is transformed by the first provider of its resource and read
//! back by whichever provider's prefix it carries. The cache above keeps
//! plaintext; only the bytes that reach SQLite, the journal or etcd are
//! encrypted ([`EncryptingBackend`]).
//!
//! - `cipher.rs`: the providers' ciphers (`encrypt/aes/aes.go`,
//!   `encrypt/secretbox/secretbox.go`);
//! - `transformer.rs`: kube's prefix transformer over them
//!   (`value/transformer.go`), and which transformer a key gets;
//! - `backend.rs`: the [`Backend`](crate::Backend) wrapper.

mod backend;
mod cipher;
mod transformer;

pub use backend::EncryptingBackend;
pub use cipher::Cipher;
pub use transformer::{KeyTransformers, Transformer};

/// Why a value could not be transformed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EncryptionError {
    /// No provider's prefix matches the stored value (kube's
    /// `NewPrefixTransformers` error).
    #[error("no matching prefix found")]
    NoMatchingPrefix,
    /// The identity provider read a value that is encrypted
    /// (`identity.NewEncryptCheckTransformer`).
    #[error("identity transformer tried to read encrypted data")]
    EncryptedDataForIdentity,
    #[error("the stored data was shorter than the required size")]
    TooShort,
    #[error("the stored data is not a multiple of the block size")]
    InvalidBlockSize,
    #[error("invalid PKCS7 data (empty or not padded)")]
    InvalidPkcs7Data,
    #[error("invalid padding on input")]
    InvalidPkcs7Padding,
    /// Go's `cipher: message authentication failed` (AES-GCM).
    #[error("cipher: message authentication failed")]
    Authentication,
    /// secretbox's `Open` failing (kube's wording).
    #[error("output array was not large enough for encryption")]
    SecretboxOpen,
    #[error("unable to read sufficient random bytes")]
    Random,
    #[error("{0}")]
    Key(String),
}
