//! Known answers made with another implementation (Python's
//! `cryptography`, the layouts of kube's `aes.go`), rotation and kube's
//! read rules.

use super::*;

const PLAINTEXT: &[u8] = br#"{"kind":"Secret","apiVersion":"v1","data":{"password":"c2VjcmV0"}}"#;
const KEY: &[u8] = b"/registry/secrets/default/s1";

fn hex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap_or_default())
        .collect()
}

fn counting(from: u8, len: u8) -> Vec<u8> {
    (from..from + len).collect()
}

fn single(provider: &str, name: &str, cipher: Cipher) -> Transformer {
    let mut transformer = Transformer::new();
    transformer.push(provider, name, cipher);
    transformer
}

#[test]
fn aesgcm_reads_a_known_value_with_the_key_as_authenticated_data() {
    let transformer = single("aesgcm", "key1", Cipher::aes_gcm(&counting(0, 32)).unwrap());
    let mut stored = b"k8s:enc:aesgcm:v1:key1:".to_vec();
    stored.extend(hex(concat!(
        "6465666768696a6b6c6d6e6f3339b50f178d74a41c313a8ba8001edf6ee0677ae23a96",
        "00d4b8c326d999873ea5cb6ce22873ef65dfc9031d8d23b9bc6c34ea830270634bc8a7",
        "c6b582d795a875f19869dd2bcea9e2a0995b4f91aca727e9"
    )));
    assert_eq!(transformer.from_storage(&stored, KEY).unwrap(), PLAINTEXT);
    // Copied under another key, the value does not authenticate.
    assert_eq!(
        transformer.from_storage(&stored, b"/registry/secrets/default/s2"),
        Err(EncryptionError::Authentication)
    );
}

#[test]
fn aescbc_reads_known_values_of_each_key_size() {
    let cases = [
        (
            16,
            concat!(
                "c8c9cacbcccdcecfd0d1d2d3d4d5d6d77e9537b04c5ab19cafe1d0f8e510c3624c4e68",
                "86e31b58677cc4a2241c0f65432769b19dc1eaaa0a5cea6dadd6e55bffbf6ed7a028eb",
                "db04ef89cde37830d53adf05ae55ddb2628a3798294786592eec"
            ),
        ),
        (
            24,
            concat!(
                "c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8f6b0370c427d3c5931dad0311989d6d19426",
                "f93e96e25459cb77510b3765c1c5e73c90a43ee1835794b45f8bb3992d1b40418b84d0",
                "1569d7208593a0c65a9484e4981eb37084450684bcd80878e48c"
            ),
        ),
    ];
    for (size, value) in cases {
        let transformer = single("aescbc", "k", Cipher::aes_cbc(&counting(0, size)).unwrap());
        let mut stored = b"k8s:enc:aescbc:v1:k:".to_vec();
        stored.extend(hex(value));
        assert_eq!(
            transformer.from_storage(&stored, KEY).unwrap(),
            PLAINTEXT,
            "{size}"
        );
    }
}

#[test]
fn each_provider_writes_its_prefix_and_reads_its_own_values() {
    let providers = [
        ("aesgcm", Cipher::aes_gcm(&counting(1, 16)).unwrap()),
        ("aescbc", Cipher::aes_cbc(&counting(1, 32)).unwrap()),
        ("secretbox", Cipher::secretbox(&counting(1, 32)).unwrap()),
    ];
    for (provider, cipher) in providers {
        let transformer = single(provider, "key1", cipher);
        let prefix = format!("k8s:enc:{provider}:v1:key1:");
        for plaintext in [&b""[..], b"x", &[7u8; 16], PLAINTEXT] {
            let stored = transformer.to_storage(plaintext, KEY).unwrap();
            assert!(stored.starts_with(prefix.as_bytes()), "{provider}");
            if plaintext == PLAINTEXT {
                assert!(!stored
                    .windows(plaintext.len())
                    .any(|window| window == plaintext));
            }
            assert_eq!(transformer.from_storage(&stored, KEY).unwrap(), plaintext);
        }
        // Two writes of one value differ (random nonce or IV).
        assert_ne!(
            transformer.to_storage(PLAINTEXT, KEY).unwrap(),
            transformer.to_storage(PLAINTEXT, KEY).unwrap()
        );
    }
}

#[test]
fn secretbox_lays_out_nonce_then_tag_then_ciphertext() {
    let transformer = single("secretbox", "s", Cipher::secretbox(&[9u8; 32]).unwrap());
    let stored = transformer.to_storage(PLAINTEXT, KEY).unwrap();
    let prefix = b"k8s:enc:secretbox:v1:s:".len();
    assert_eq!(stored.len(), prefix + 24 + 16 + PLAINTEXT.len());
    let mut truncated = stored.clone();
    truncated.truncate(prefix + 24 + 15);
    assert_eq!(
        transformer.from_storage(&truncated, KEY),
        Err(EncryptionError::TooShort)
    );
}

#[test]
fn the_first_key_writes_and_every_key_reads() {
    let old = single("aesgcm", "key1", Cipher::aes_gcm(&[1u8; 32]).unwrap());
    let written_before = old.to_storage(PLAINTEXT, KEY).unwrap();
    let mut rotated = Transformer::new();
    rotated.push("aesgcm", "key2", Cipher::aes_gcm(&[2u8; 32]).unwrap());
    rotated.push("aesgcm", "key1", Cipher::aes_gcm(&[1u8; 32]).unwrap());
    rotated.push("identity", "", Cipher::Identity);
    assert_eq!(rotated.write_prefix(), b"k8s:enc:aesgcm:v1:key2:");
    assert_eq!(
        rotated.from_storage(&written_before, KEY).unwrap(),
        PLAINTEXT
    );
    let written_after = rotated.to_storage(PLAINTEXT, KEY).unwrap();
    assert!(written_after.starts_with(b"k8s:enc:aesgcm:v1:key2:"));
    // Identity (last) reads values written before encryption was on.
    assert_eq!(rotated.from_storage(PLAINTEXT, KEY).unwrap(), PLAINTEXT);
    // A key nobody configures: kube's error.
    assert_eq!(
        old.from_storage(&written_after, KEY),
        Err(EncryptionError::NoMatchingPrefix)
    );
}

#[test]
fn identity_first_reads_plaintext_and_hands_encrypted_values_on() {
    let mut transformer = Transformer::new();
    transformer.push("identity", "", Cipher::Identity);
    transformer.push("aescbc", "k", Cipher::aes_cbc(&[3u8; 16]).unwrap());
    let encrypted = single("aescbc", "k", Cipher::aes_cbc(&[3u8; 16]).unwrap())
        .to_storage(PLAINTEXT, KEY)
        .unwrap();
    assert_eq!(transformer.to_storage(PLAINTEXT, KEY).unwrap(), PLAINTEXT);
    assert_eq!(
        transformer.from_storage(&encrypted, KEY).unwrap(),
        PLAINTEXT
    );
    assert_eq!(
        Transformer::identity().from_storage(&encrypted, KEY),
        Err(EncryptionError::EncryptedDataForIdentity)
    );
}

#[test]
fn damaged_values_are_errors_not_panics() {
    let cbc = single("aescbc", "k", Cipher::aes_cbc(&[3u8; 16]).unwrap());
    let prefix = b"k8s:enc:aescbc:v1:k:".to_vec();
    let with = |rest: &[u8]| [prefix.as_slice(), rest].concat();
    assert_eq!(
        cbc.from_storage(&with(&[0; 5]), KEY),
        Err(EncryptionError::TooShort)
    );
    assert_eq!(
        cbc.from_storage(&with(&[0; 20]), KEY),
        Err(EncryptionError::InvalidBlockSize)
    );
    assert!(cbc.from_storage(&with(&[0; 16]), KEY).is_err());
    assert!(cbc.from_storage(&with(&[0; 48]), KEY).is_err());
    let gcm = single("aesgcm", "k", Cipher::aes_gcm(&[3u8; 16]).unwrap());
    assert_eq!(
        gcm.from_storage(b"k8s:enc:aesgcm:v1:k:abc", KEY),
        Err(EncryptionError::TooShort)
    );
    assert_eq!(
        gcm.from_storage(b"k8s:enc:aesgcm:v1:k:0123456789012", KEY),
        Err(EncryptionError::Authentication)
    );
}
