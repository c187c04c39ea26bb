//! Shuffle sharding, as kube's `staging/src/k8s.io/apiserver/pkg/util/shufflesharding/shufflesharding.go`
//! (`Dealer.Deal`), and the flow hash of `apf_controller.go` (`hashFlowID`).

use std::hash::{BuildHasher, Hasher};
use std::sync::OnceLock;

use foldhash::quality::RandomState;

/// The largest hand kube allows (`MaxHashBits` bounds it to 15 cards).
pub const MAX_HAND_SIZE: usize = 15;

/// The flow's hash (kube's `hashFlowID` hashes the schema name, a zero
/// byte and the distinguisher with SHA-256). Which queues a flow is dealt
/// is never visible to clients, so a seeded fast hash of the same input
/// serves: SHA-256 was a third of what priority and fairness cost a request.
pub fn flow_hash(flow_schema: &str, distinguisher: &str) -> u64 {
    static STATE: OnceLock<RandomState> = OnceLock::new();
    let mut hash = STATE.get_or_init(RandomState::default).build_hasher();
    hash.write(flow_schema.as_bytes());
    hash.write_u8(0);
    hash.write(distinguisher.as_bytes());
    hash.finish()
}

/// `Dealer.Deal`: `hand_size` distinct cards of a `deck_size` deck, picked
/// from `hash` (`hand_size` ≤ `deck_size`, ≤ [`MAX_HAND_SIZE`]).
pub fn deal(hash: u64, deck_size: usize, hand_size: usize, mut pick: impl FnMut(usize)) {
    let hand_size = hand_size.min(deck_size).min(MAX_HAND_SIZE);
    let mut remainders = [0usize; MAX_HAND_SIZE];
    let mut hash = hash;
    for (index, remainder) in remainders.iter_mut().enumerate().take(hand_size) {
        let size = (deck_size - index) as u64;
        let next = hash / size;
        *remainder = (hash - size * next) as usize;
        hash = next;
    }
    for index in 0..hand_size {
        let mut card = remainders[index];
        for earlier in (0..index).rev() {
            if card >= remainders[earlier] {
                card += 1;
            }
        }
        pick(card);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hand_holds_distinct_cards_of_the_deck() {
        for hash in [
            0u64,
            1,
            7,
            12345,
            u64::MAX,
            flow_hash("global-default", "jane"),
        ] {
            let mut cards = Vec::new();
            deal(hash, 128, 6, |card| cards.push(card));
            assert_eq!(cards.len(), 6);
            assert!(cards.iter().all(|card| *card < 128));
            let mut unique = cards.clone();
            unique.sort_unstable();
            unique.dedup();
            assert_eq!(unique.len(), 6, "{cards:?}");
        }
        let mut cards = Vec::new();
        deal(5, 4, 4, |card| cards.push(card));
        cards.sort_unstable();
        assert_eq!(cards, vec![0, 1, 2, 3]);
    }

    #[test]
    fn the_flow_hash_is_stable() {
        assert_eq!(flow_hash("a", "b"), flow_hash("a", "b"));
        assert_ne!(flow_hash("a", "b"), flow_hash("a", "c"));
        assert_ne!(flow_hash("ab", ""), flow_hash("a", "b"));
    }
}
