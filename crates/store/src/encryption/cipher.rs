//! The ciphers of kube's providers, each with kube's layout of the bytes
//! after the provider's prefix:
//! - aesgcm (`aes.go` `gcm`): 12-byte random nonce, ciphertext, 16-byte tag;
//!   the authenticated data is the value's etcd key;
//! - aescbc (`aes.go` `cbc`): 16-byte random IV, then the PKCS#7-padded
//!   plaintext in CBC mode;
//! - secretbox (`secretbox.go`): 24-byte random nonce, then NaCl's
//!   `secretbox.Seal` (tag first).

use aes::cipher::generic_array::GenericArray;
use aes::cipher::{BlockDecrypt, BlockEncrypt, KeyInit};
use crypto_secretbox::aead::Aead;
use ring::aead::{Aad, LessSafeKey, Nonce, UnboundKey, AES_128_GCM, AES_256_GCM, NONCE_LEN};
use ring::rand::{SecureRandom, SystemRandom};

use super::EncryptionError;

const AES_BLOCK: usize = 16;
const SECRETBOX_NONCE: usize = 24;
const SECRETBOX_OVERHEAD: usize = 16;

/// One key of one provider.
pub enum Cipher {
    /// Values kept as they are (kube's `identity` provider).
    Identity,
    AesGcm(Box<LessSafeKey>),
    AesCbc(CbcKey),
    Secretbox(Box<crypto_secretbox::XSalsa20Poly1305>),
}

impl std::fmt::Debug for Cipher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = match self {
            Cipher::Identity => "identity",
            Cipher::AesGcm(_) => "aesgcm",
            Cipher::AesCbc(_) => "aescbc",
            Cipher::Secretbox(_) => "secretbox",
        };
        f.write_str(name)
    }
}

/// AES of the key's size (Go's `aes.NewCipher`: 16, 24 or 32 bytes).
pub enum CbcKey {
    Aes128(Box<aes::Aes128>),
    Aes192(Box<aes::Aes192>),
    Aes256(Box<aes::Aes256>),
}

impl Cipher {
    /// AES-GCM with a 16- or 32-byte key (ring has no AES-192-GCM).
    pub fn aes_gcm(key: &[u8]) -> Result<Cipher, EncryptionError> {
        let algorithm = match key.len() {
            16 => &AES_128_GCM,
            32 => &AES_256_GCM,
            other => {
                return Err(EncryptionError::Key(format!(
                    "aesgcm keys of {other} bytes are not supported by ferrokube (16 or 32)"
                )))
            }
        };
        let key = UnboundKey::new(algorithm, key)
            .map_err(|_| EncryptionError::Key("invalid aesgcm key".into()))?;
        Ok(Cipher::AesGcm(Box::new(LessSafeKey::new(key))))
    }

    pub fn aes_cbc(key: &[u8]) -> Result<Cipher, EncryptionError> {
        let invalid =
            |_| EncryptionError::Key(format!("crypto/aes: invalid key size {}", key.len()));
        let key = match key.len() {
            16 => CbcKey::Aes128(Box::new(aes::Aes128::new_from_slice(key).map_err(invalid)?)),
            24 => CbcKey::Aes192(Box::new(aes::Aes192::new_from_slice(key).map_err(invalid)?)),
            _ => CbcKey::Aes256(Box::new(aes::Aes256::new_from_slice(key).map_err(invalid)?)),
        };
        Ok(Cipher::AesCbc(key))
    }

    pub fn secretbox(key: &[u8]) -> Result<Cipher, EncryptionError> {
        let cipher = crypto_secretbox::XSalsa20Poly1305::new_from_slice(key).map_err(|_| {
            EncryptionError::Key(format!(
                "secretbox keys must be 32 bytes, got {}",
                key.len()
            ))
        })?;
        Ok(Cipher::Secretbox(Box::new(cipher)))
    }

    /// `TransformToStorage`: the bytes that follow the provider's prefix.
    pub fn seal(&self, plaintext: &[u8], authenticated: &[u8]) -> Result<Vec<u8>, EncryptionError> {
        match self {
            Cipher::Identity => Ok(plaintext.to_vec()),
            Cipher::AesGcm(key) => {
                let mut out = vec![0u8; NONCE_LEN];
                random(&mut out)?;
                let mut nonce = [0u8; NONCE_LEN];
                nonce.copy_from_slice(&out);
                out.extend_from_slice(plaintext);
                let (_, body) = out.split_at_mut(NONCE_LEN);
                let tag = key
                    .seal_in_place_separate_tag(
                        Nonce::assume_unique_for_key(nonce),
                        Aad::from(authenticated),
                        body,
                    )
                    .map_err(|_| EncryptionError::Key("aesgcm seal failed".into()))?;
                out.extend_from_slice(tag.as_ref());
                Ok(out)
            }
            Cipher::AesCbc(key) => {
                let padding = AES_BLOCK - plaintext.len() % AES_BLOCK;
                let mut out = Vec::with_capacity(AES_BLOCK + plaintext.len() + padding);
                out.resize(AES_BLOCK, 0);
                random(&mut out)?;
                out.extend_from_slice(plaintext);
                out.resize(out.len() + padding, padding as u8);
                key.encrypt_cbc(&mut out);
                Ok(out)
            }
            Cipher::Secretbox(cipher) => {
                let mut nonce = [0u8; SECRETBOX_NONCE];
                random(&mut nonce)?;
                let sealed = cipher
                    .encrypt(GenericArray::from_slice(&nonce), plaintext)
                    .map_err(|_| EncryptionError::Key("secretbox seal failed".into()))?;
                let mut out = Vec::with_capacity(SECRETBOX_NONCE + sealed.len());
                out.extend_from_slice(&nonce);
                out.extend_from_slice(&sealed);
                Ok(out)
            }
        }
    }

    /// `TransformFromStorage` of the bytes after the provider's prefix.
    pub fn open(&self, data: &[u8], authenticated: &[u8]) -> Result<Vec<u8>, EncryptionError> {
        match self {
            Cipher::Identity => {
                if data.starts_with(super::transformer::ENCRYPTED_PREFIX) {
                    return Err(EncryptionError::EncryptedDataForIdentity);
                }
                Ok(data.to_vec())
            }
            Cipher::AesGcm(key) => {
                if data.len() < NONCE_LEN {
                    return Err(EncryptionError::TooShort);
                }
                let (nonce_bytes, sealed) = data.split_at(NONCE_LEN);
                let mut nonce = [0u8; NONCE_LEN];
                nonce.copy_from_slice(nonce_bytes);
                let mut buffer = sealed.to_vec();
                let plaintext_len = key
                    .open_in_place(
                        Nonce::assume_unique_for_key(nonce),
                        Aad::from(authenticated),
                        &mut buffer,
                    )
                    .map_err(|_| EncryptionError::Authentication)?
                    .len();
                buffer.truncate(plaintext_len);
                Ok(buffer)
            }
            Cipher::AesCbc(key) => {
                if data.len() < AES_BLOCK {
                    return Err(EncryptionError::TooShort);
                }
                if !data.len().is_multiple_of(AES_BLOCK) {
                    return Err(EncryptionError::InvalidBlockSize);
                }
                let mut buffer = data.to_vec();
                key.decrypt_cbc(&mut buffer);
                let mut plaintext = buffer.split_off(AES_BLOCK);
                let Some(&last) = plaintext.last() else {
                    return Err(EncryptionError::InvalidPkcs7Data);
                };
                let padding = usize::from(last);
                if padding == 0 || padding > plaintext.len() {
                    return Err(EncryptionError::InvalidPkcs7Data);
                }
                let size = plaintext.len() - padding;
                if plaintext[size..].iter().any(|&byte| byte != last) {
                    return Err(EncryptionError::InvalidPkcs7Padding);
                }
                plaintext.truncate(size);
                Ok(plaintext)
            }
            Cipher::Secretbox(cipher) => {
                if data.len() < SECRETBOX_NONCE + SECRETBOX_OVERHEAD {
                    return Err(EncryptionError::TooShort);
                }
                let (nonce, sealed) = data.split_at(SECRETBOX_NONCE);
                cipher
                    .decrypt(GenericArray::from_slice(nonce), sealed)
                    .map_err(|_| EncryptionError::SecretboxOpen)
            }
        }
    }
}

impl CbcKey {
    /// CBC over `buffer[16..]` with `buffer[..16]` as the IV.
    fn encrypt_cbc(&self, buffer: &mut [u8]) {
        let mut previous = [0u8; AES_BLOCK];
        previous.copy_from_slice(&buffer[..AES_BLOCK]);
        for block in buffer[AES_BLOCK..].chunks_exact_mut(AES_BLOCK) {
            for (byte, prior) in block.iter_mut().zip(previous.iter()) {
                *byte ^= prior;
            }
            let block = GenericArray::from_mut_slice(block);
            match self {
                CbcKey::Aes128(key) => key.encrypt_block(block),
                CbcKey::Aes192(key) => key.encrypt_block(block),
                CbcKey::Aes256(key) => key.encrypt_block(block),
            }
            previous.copy_from_slice(block);
        }
    }

    /// The inverse of [`encrypt_cbc`](Self::encrypt_cbc).
    fn decrypt_cbc(&self, buffer: &mut [u8]) {
        let mut previous = [0u8; AES_BLOCK];
        previous.copy_from_slice(&buffer[..AES_BLOCK]);
        for block in buffer[AES_BLOCK..].chunks_exact_mut(AES_BLOCK) {
            let mut ciphertext = [0u8; AES_BLOCK];
            ciphertext.copy_from_slice(block);
            let array = GenericArray::from_mut_slice(block);
            match self {
                CbcKey::Aes128(key) => key.decrypt_block(array),
                CbcKey::Aes192(key) => key.decrypt_block(array),
                CbcKey::Aes256(key) => key.decrypt_block(array),
            }
            for (byte, prior) in block.iter_mut().zip(previous.iter()) {
                *byte ^= prior;
            }
            previous = ciphertext;
        }
    }
}

fn random(buffer: &mut [u8]) -> Result<(), EncryptionError> {
    SystemRandom::new()
        .fill(buffer)
        .map_err(|_| EncryptionError::Random)
}
