//! Temporary: the table built from discovery data must equal the hand-typed
//! one, field by field and in the same order.

use super::{builtin_resources, RESOURCES};

#[test]
fn generated_table_equals_hand_typed_table() {
    let new = builtin_resources();
    let mut differences = Vec::new();
    let key = |r: &super::ResourceDef| format!("{}/{} {}", r.group, r.version, r.plural);
    let old_keys: Vec<String> = RESOURCES.iter().map(key).collect();
    let new_keys: Vec<String> = new.iter().map(key).collect();
    if old_keys != new_keys {
        for k in &old_keys {
            if !new_keys.contains(k) {
                differences.push(format!("only in old: {k}"));
            }
        }
        for k in &new_keys {
            if !old_keys.contains(k) {
                differences.push(format!("only in new: {k}"));
            }
        }
        differences.push(format!("order old: {old_keys:?}\norder new: {new_keys:?}"));
    }
    for old in RESOURCES {
        let Some(generated) = new.iter().find(|r| key(r) == key(old)) else {
            continue;
        };
        if old != generated {
            differences.push(format!("{}:\n  old {old:?}\n  new {generated:?}", key(old)));
        }
    }
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}
