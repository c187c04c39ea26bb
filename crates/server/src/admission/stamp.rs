//! What compiled admission configurations (webhook configurations,
//! policies and bindings) were compiled from: each stored object's key and
//! mod revision, compared with the store's on every request so that a
//! change is in force from the response to its write on.

/// Keys and mod revisions, in store order.
pub type Stamp = Vec<(String, i64)>;

/// Whether `stored` (keys and mod revisions in store order) is what
/// `stamp` recorded; compared without allocating, the common case.
pub fn unchanged<'a>(
    stamp: &[(String, i64)],
    mut stored: impl Iterator<Item = (&'a String, i64)>,
) -> bool {
    let mut compiled_from = stamp.iter();
    stored.all(|(key, revision)| {
        compiled_from
            .next()
            .is_some_and(|(k, r)| k == key && *r == revision)
    }) && compiled_from.next().is_none()
}

/// The stamp of `stored`.
pub fn of<'a>(stored: impl Iterator<Item = (&'a String, i64)>) -> Stamp {
    stored
        .map(|(key, revision)| (key.clone(), revision))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stamp_is_unchanged_only_for_the_same_keys_and_revisions() {
        let (a, b) = ("/a".to_string(), "/b".to_string());
        let stamp = of([(&a, 1), (&b, 2)].into_iter());
        assert!(unchanged(&stamp, [(&a, 1), (&b, 2)].into_iter()));
        assert!(!unchanged(&stamp, [(&a, 1), (&b, 3)].into_iter()));
        assert!(!unchanged(&stamp, [(&a, 1)].into_iter()));
        assert!(!unchanged(&stamp, [(&a, 1), (&b, 2), (&b, 4)].into_iter()));
        assert!(unchanged(&[], std::iter::empty()));
    }
}
