//! `corev1.ResourceList` arithmetic as the quota code does it
//! (`pkg/quota/v1/resources.go`): resource names to quantities, summed,
//! subtracted, masked and compared exactly.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use crate::quantity::Quantity;

/// Resource name → quantity, in name order (Go sorts where order shows).
pub type ResourceList = BTreeMap<String, Quantity>;

/// The list held in `value` (an object of quantity strings); entries that
/// are not quantities are left out (validation refuses them on write).
pub fn from_value(value: Option<&Value>) -> ResourceList {
    let Some(object) = value.and_then(Value::as_object) else {
        return ResourceList::new();
    };
    object
        .iter()
        .filter_map(|(name, quantity)| {
            let text = quantity.as_str()?;
            Some((name.clone(), Quantity::parse(text.trim()).ok()?))
        })
        .collect()
}

/// The JSON form of `list`.
pub fn to_value(list: &ResourceList) -> Value {
    Value::Object(
        list.iter()
            .map(|(name, quantity)| (name.clone(), Value::String(quantity.to_string())))
            .collect::<Map<String, Value>>(),
    )
}

/// `quota.Add`.
pub fn add(a: &ResourceList, b: &ResourceList) -> ResourceList {
    let mut result = ResourceList::new();
    for (name, quantity) in a {
        let sum = match b.get(name) {
            Some(other) => quantity.add(other),
            None => quantity.clone(),
        };
        result.insert(name.clone(), sum);
    }
    for (name, quantity) in b {
        result
            .entry(name.clone())
            .or_insert_with(|| quantity.clone());
    }
    result
}

/// `quota.SubtractWithNonNegativeResult`.
pub fn subtract_non_negative(a: &ResourceList, b: &ResourceList) -> ResourceList {
    let zero = Quantity::from_count(0);
    let mut result = ResourceList::new();
    for (name, quantity) in a {
        let difference = match b.get(name) {
            Some(other) => quantity.sub(other),
            None => quantity.clone(),
        };
        let kept = if difference.sign() > 0 {
            difference
        } else {
            zero.clone()
        };
        result.insert(name.clone(), kept);
    }
    for name in b.keys() {
        result.entry(name.clone()).or_insert_with(|| zero.clone());
    }
    result
}

/// `quota.Mask`: only the entries named in `names`.
pub fn mask<'a>(list: &ResourceList, names: impl IntoIterator<Item = &'a String>) -> ResourceList {
    let names: BTreeSet<&String> = names.into_iter().collect();
    list.iter()
        .filter(|(name, _)| names.contains(name))
        .map(|(name, quantity)| (name.clone(), quantity.clone()))
        .collect()
}

/// `quota.LessThanOrEqual`: whether every entry of `a` that `b` also names
/// is at most `b`'s, and the names where it is not.
pub fn less_than_or_equal(a: &ResourceList, b: &ResourceList) -> (bool, Vec<String>) {
    let exceeded: Vec<String> = b
        .iter()
        .filter(|(name, limit)| {
            a.get(*name)
                .is_some_and(|value| value.cmp_value(limit).is_gt())
        })
        .map(|(name, _)| name.clone())
        .collect();
    (exceeded.is_empty(), exceeded)
}

/// `quota.Equals`: the same names with equal values.
pub fn equals(a: &ResourceList, b: &ResourceList) -> bool {
    a.len() == b.len()
        && a.iter().all(|(name, value)| {
            b.get(name)
                .is_some_and(|other| value.cmp_value(other).is_eq())
        })
}

/// `quota.IsZero`.
pub fn is_zero(list: &ResourceList) -> bool {
    list.values().all(Quantity::is_zero)
}

/// `quota.IsNegative`: the names whose value is below zero.
pub fn negative_names(list: &ResourceList) -> Vec<String> {
    list.iter()
        .filter(|(_, quantity)| quantity.sign() < 0)
        .map(|(name, _)| name.clone())
        .collect()
}

/// `prettyPrint` (`admission/resourcequota/controller.go`): `name=value`
/// joined by commas, names sorted.
pub fn pretty_print(list: &ResourceList) -> String {
    list.iter()
        .map(|(name, quantity)| format!("{name}={quantity}"))
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(entries: &[(&str, &str)]) -> ResourceList {
        entries
            .iter()
            .map(|(name, value)| (name.to_string(), Quantity::parse(value).expect("quantity")))
            .collect()
    }

    #[test]
    fn arithmetic_follows_quota_resources_go() {
        let a = list(&[("pods", "2"), ("requests.cpu", "500m")]);
        let b = list(&[("pods", "1"), ("requests.memory", "1Gi")]);
        assert_eq!(
            pretty_print(&add(&a, &b)),
            "pods=3,requests.cpu=500m,requests.memory=1Gi"
        );
        assert_eq!(
            pretty_print(&subtract_non_negative(&b, &a)),
            "pods=0,requests.cpu=0,requests.memory=1Gi"
        );
        let names = ["pods".to_string()];
        assert_eq!(pretty_print(&mask(&a, &names)), "pods=2");
        let (fits, exceeded) = less_than_or_equal(&a, &list(&[("pods", "1"), ("cpu", "1")]));
        assert!(!fits);
        assert_eq!(exceeded, ["pods"]);
        assert!(less_than_or_equal(&a, &list(&[("pods", "2")])).0);
        assert!(equals(&list(&[("cpu", "1")]), &list(&[("cpu", "1000m")])));
        assert!(!equals(&a, &b));
        assert!(is_zero(&list(&[("cpu", "0")])));
        assert_eq!(
            negative_names(&list(&[("cpu", "-1"), ("pods", "1")])),
            ["cpu"]
        );
        assert_eq!(
            to_value(&from_value(Some(
                &serde_json::json!({"pods": "2", "bad": 3})
            ))),
            serde_json::json!({"pods": "2"})
        );
    }
}
