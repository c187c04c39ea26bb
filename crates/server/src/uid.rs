//! Random version-4 UUIDs: object uids, AdmissionReview and ConversionReview
//! uids, generated names. The bytes are the operating system's (`getrandom`,
//! as Go's `crypto/rand`), read in blocks: one system call per 256 UUIDs
//! instead of one each (a create made one, a create through a webhook two).

use std::cell::RefCell;

use ring::rand::SecureRandom;

/// Bytes read from the system at a time.
const BLOCK: usize = 4096;

/// One thread's unread system randomness.
struct Pool {
    bytes: [u8; BLOCK],
    /// How many of `bytes` were handed out already.
    used: usize,
}

thread_local! {
    static POOL: RefCell<Pool> = const { RefCell::new(Pool { bytes: [0; BLOCK], used: BLOCK }) };
}

/// Sixteen random bytes from the system.
fn random_16() -> [u8; 16] {
    let pooled = POOL.with(|pool| {
        let mut pool = pool.borrow_mut();
        if pool.used + 16 > BLOCK {
            ring::rand::SystemRandom::new().fill(&mut pool.bytes).ok()?;
            pool.used = 0;
        }
        let mut out = [0; 16];
        let start = pool.used;
        out.copy_from_slice(&pool.bytes[start..start + 16]);
        // Handed out once: overwritten so no later reader sees them.
        pool.bytes[start..start + 16].fill(0);
        pool.used += 16;
        Some(out)
    });
    // The system refused a block (never seen on Linux): one read as before.
    pooled.unwrap_or_else(|| *uuid::Uuid::new_v4().as_bytes())
}

/// A new random (version 4, RFC 4122 variant) UUID.
pub fn new_v4() -> uuid::Uuid {
    uuid::Builder::from_random_bytes(random_16()).into_uuid()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuids_are_version_4_and_distinct_across_blocks() {
        let mut seen = std::collections::HashSet::new();
        // Past two refills of the block.
        for _ in 0..(3 * BLOCK / 16) {
            let uid = new_v4();
            assert_eq!(uid.get_version(), Some(uuid::Version::Random));
            assert_eq!(uid.get_variant(), uuid::Variant::RFC4122);
            assert!(seen.insert(uid), "{uid} repeated");
        }
    }
}
