//! A ResourceSlice device's attributes and capacities and the qualified
//! names resource.k8s.io uses for them (`pkg/apis/resource/validation/
//! validation.go` `validateDevice`, `validateDeviceAttribute`,
//! `validateQualifiedName`, `validateFullyQualifiedName`,
//! `validateCIdentifier`, `validateMap`), with 1.34's default feature
//! gates: list-valued attributes, consumable capacity (`requestPolicy`),
//! shared counters and device taints are alpha there and not checked.
//!
//! kube visits a map in Go's random order; keys are visited sorted here.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::{Map, Value};

use super::field::{self, child, key};
use super::storage::csi_driver_name;
use crate::status::FieldError;

/// `resource.ResourceSliceMaxAttributesAndCapacitiesPerDevice`.
const ATTRIBUTES_AND_CAPACITIES_MAX: usize = 32;
/// `resource.DeviceAttributeMaxValueLength`.
const ATTRIBUTE_VALUE_MAX: usize = 64;
/// `resource.DeviceMaxIDLength`.
const ID_MAX: usize = 32;
/// `attributeAndCapacityMaxKeyLength`: `DeviceMaxDomainLength` + 1 + `DeviceMaxIDLength`.
const KEY_MAX: usize = 63 + 1 + ID_MAX;

const C_IDENTIFIER_MESSAGE: &str = "a valid C identifier must start with alphabetic character or '_', followed by a string of alphanumeric characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex used for validation is '[A-Za-z_][A-Za-z0-9_]*')";

/// `semverRe`.
static SEMVER: LazyLock<Option<Regex>> = LazyLock::new(|| {
    let numeric = r"(0|[1-9]\d*)";
    let pre_release = r"(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)";
    let build = r"[0-9a-zA-Z-]+";
    Regex::new(&format!(
        r"^{numeric}\.{numeric}\.{numeric}(-{pre_release}(\.{pre_release})*)?(\+{build}(\.{build})*)?$"
    ))
    .ok()
});

fn is_semver(value: &str) -> bool {
    SEMVER.as_ref().is_some_and(|semver| semver.is_match(value))
}

/// `validation.IsCIdentifier`.
fn is_c_identifier(id: &str) -> bool {
    let mut chars = id.chars();
    chars
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `validateCIdentifier`.
fn c_identifier(id: &str, path: &str, errors: &mut Vec<FieldError>) {
    if id.len() > ID_MAX {
        errors.push(field::too_long(path, ID_MAX));
    }
    if !is_c_identifier(id) {
        errors.push(field::invalid(path, id, C_IDENTIFIER_MESSAGE));
    }
}

/// `validateQualifiedName`: a C identifier, optionally after a domain
/// that is a valid driver name.
pub fn qualified_name(name: &str, path: &str, errors: &mut Vec<FieldError>) {
    let parts: Vec<&str> = name.split('/').collect();
    match parts.as_slice() {
        [id] => c_identifier(id, path, errors),
        [domain, id] => {
            if domain.is_empty() {
                errors.push(field::invalid(path, "", "the domain must not be empty"));
            } else {
                errors.extend(csi_driver_name(domain, path));
            }
            if id.is_empty() {
                errors.push(field::invalid(path, "", "the name must not be empty"));
            } else {
                c_identifier(id, path, errors);
            }
        }
        _ => errors.push(field::invalid(
            path,
            name,
            "must not contain more than one slash",
        )),
    }
}

/// `validateFullyQualifiedName`: a qualified name with its domain.
pub fn fully_qualified_name(name: &str, path: &str, errors: &mut Vec<FieldError>) {
    qualified_name(name, path, errors);
    if !name.contains('/') {
        errors.push(field::invalid(
            path,
            name,
            "a fully qualified name must be a domain and a name separated by a slash",
        ));
    }
}

/// `truncateIfTooLong`: a long map key in a path keeps its two ends.
fn truncated(text: &str, max: usize) -> String {
    let max = max.max(16);
    if text.len() <= max || !text.is_ascii() {
        return text.to_string();
    }
    let remaining = max - 3;
    format!(
        "{}...{}",
        &text[..remaining.div_ceil(2)],
        &text[text.len() - remaining / 2..]
    )
}

/// `validateMap` without a size bound: each key (at the map's path) and
/// each value (at the key's path), keys in sorted order.
fn each_entry(
    map: Option<&Map<String, Value>>,
    path: &str,
    errors: &mut Vec<FieldError>,
    check: impl Fn(&Value, &str, &mut Vec<FieldError>),
) {
    let Some(map) = map else { return };
    let mut keys: Vec<&String> = map.keys().collect();
    keys.sort();
    for name in keys {
        qualified_name(name, path, errors);
        check(&map[name], &key(path, &truncated(name, KEY_MAX)), errors);
    }
}

/// The attribute's fields as Go's `%#v` prints `resource.DeviceAttribute`
/// (pointers print as addresses in kube; a fixed one here).
fn go_attribute(attribute: &Value) -> String {
    let pointer = |name: &str, go_type: &str| match attribute.get(name) {
        Some(value) if !value.is_null() => format!("({go_type})(0xc000000000)"),
        _ => format!("({go_type})(nil)"),
    };
    format!(
        "resource.DeviceAttribute{{IntValue:{}, BoolValue:{}, StringValue:{}, VersionValue:{}}}",
        pointer("int", "*int64"),
        pointer("bool", "*bool"),
        pointer("string", "*string"),
        pointer("version", "*string"),
    )
}

/// `validateDeviceAttribute`: exactly one value; strings and versions at
/// most 64 bytes, versions semver 2.0.0.
fn attribute(attribute: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let set = |name: &str| attribute.get(name).is_some_and(|value| !value.is_null());
    let mut count = 0;
    for name in ["bool", "int"] {
        if set(name) {
            count += 1;
        }
    }
    if set("string") {
        count += 1;
        if field::str_at(attribute, "string").len() > ATTRIBUTE_VALUE_MAX {
            errors.push(field::too_long(&child(path, "string"), ATTRIBUTE_VALUE_MAX));
        }
    }
    if set("version") {
        count += 1;
        let version = field::str_at(attribute, "version");
        let version_path = child(path, "version");
        if !is_semver(version) {
            errors.push(field::invalid(
                &version_path,
                version,
                "must be a string compatible with semver.org spec 2.0.0",
            ));
        }
        if version.len() > ATTRIBUTE_VALUE_MAX {
            errors.push(field::too_long(&version_path, ATTRIBUTE_VALUE_MAX));
        }
    }
    match count {
        0 => errors.push(field::invalid(
            path,
            "",
            "exactly one value must be specified",
        )),
        1 => {}
        _ => errors.push(field::invalid_rendered(
            path,
            &go_attribute(attribute),
            "exactly one value must be specified",
        )),
    }
}

/// `validateDevice`'s attribute and capacity rules for `device` at `path`.
pub fn device_attributes_and_capacity(device: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let attributes = field::map_at(device, "attributes");
    let capacity = field::map_at(device, "capacity");
    let total = attributes.map_or(0, Map::len) + capacity.map_or(0, Map::len);
    if total > ATTRIBUTES_AND_CAPACITIES_MAX {
        errors.push(field::invalid_number(
            path,
            total as i64,
            format!(
                "the total number of attributes and capacities must not exceed {ATTRIBUTES_AND_CAPACITIES_MAX}"
            ),
        ));
    }
    each_entry(attributes, &child(path, "attributes"), errors, attribute);
    // Any parsed quantity is a valid capacity (`requestPolicy` needs the
    // alpha DRAConsumableCapacity).
    each_entry(capacity, &child(path, "capacity"), errors, |_, _, _| {});
}

#[cfg(test)]
#[path = "resource_device_tests.rs"]
mod tests;
