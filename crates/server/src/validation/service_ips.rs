//! A Service's cluster IP fields as kube validates them
//! (`pkg/apis/core/validation/validation.go`):
//! `ValidateServiceClusterIPsRelatedFields` (run by the allocator before it
//! allocates, as kube's `initIPFamilyFields` does, and again by
//! `ValidateService`), and `ValidateServiceUpdate`'s
//! `validateUpgradeDowngradeClusterIPs` / `validateUpgradeDowngradeIPFamilies`.

use std::net::IpAddr;

use serde_json::Value;

use super::field::{self, index};
use super::ip_field;
use super::selector::go_string_slice;
use crate::go::strconv::quote;
use crate::status::FieldError;

const FAMILIES: [&str; 2] = ["IPv4", "IPv6"];
const POLICIES: [&str; 3] = ["PreferDualStack", "RequireDualStack", "SingleStack"];
const CLUSTER_IPS: &str = "spec.clusterIPs";
const IP_FAMILIES: &str = "spec.ipFamilies";
const IP_FAMILY_POLICY: &str = "spec.ipFamilyPolicy";
const MAY_NOT_CHANGE: &str = "may not change once set";

fn strings<'a>(spec: &'a Value, name: &str) -> Vec<&'a str> {
    field::items_at(spec, name)
        .iter()
        .map(|item| item.as_str().unwrap_or_default())
        .collect()
}

/// kube's `isHeadlessService`: exactly one cluster IP, `None`.
pub fn is_headless(spec: &Value) -> bool {
    strings(spec, "clusterIPs") == ["None"]
}

/// Go's `%#v` of `spec.clusterIPs` (a `[]string`).
fn rendered_cluster_ips(spec: &Value) -> String {
    go_string_slice(spec.get("clusterIPs").filter(|ips| !ips.is_null()))
}

/// Go's `%#v` of `spec.ipFamilies` (a `[]core.IPFamily`).
fn rendered_families(spec: &Value) -> String {
    match spec.get("ipFamilies").and_then(Value::as_array) {
        None => "[]core.IPFamily(nil)".to_string(),
        Some(families) => {
            let items: Vec<String> = families
                .iter()
                .map(|family| quote(family.as_str().unwrap_or_default()))
                .collect();
            format!("[]core.IPFamily{{{}}}", items.join(", "))
        }
    }
}

/// `field.Invalid` of `spec.ipFamilyPolicy` (a `*core.IPFamilyPolicy`:
/// `null` when nil, else the quoted value).
fn rendered_policy(spec: &Value) -> String {
    spec.get("ipFamilyPolicy")
        .and_then(Value::as_str)
        .map_or_else(|| "null".to_string(), quote)
}

fn invalid(path: &str, rendered: String, detail: &str) -> FieldError {
    field::invalid_rendered(path, &rendered, detail)
}

/// `netutils.IsIPv6String`: parses and is not IPv4 (nor IPv4-mapped).
fn is_ipv6(ip: &str) -> bool {
    match ip_field::parse_ip_sloppy(ip) {
        Some(IpAddr::V6(v6)) => v6.to_ipv4_mapped().is_none(),
        _ => false,
    }
}

/// `ValidateServiceClusterIPsRelatedFields` of a Service's spec.
pub fn cluster_ips_related_fields(spec: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if field::str_at(spec, "type") == "ExternalName" {
        return errors;
    }
    let cluster_ip = field::str_at(spec, "clusterIP");
    let cluster_ips = strings(spec, "clusterIPs");
    if !cluster_ip.is_empty() {
        match cluster_ips.first() {
            None => errors.push(field::required(CLUSTER_IPS, "")),
            Some(first) if *first != cluster_ip => errors.push(invalid(
                CLUSTER_IPS,
                rendered_cluster_ips(spec),
                "first value must match `clusterIP`",
            )),
            Some(_) => {}
        }
    } else if !cluster_ips.is_empty() {
        errors.push(invalid(
            CLUSTER_IPS,
            rendered_cluster_ips(spec),
            "must be empty when `clusterIP` is not specified",
        ));
    }
    let families = strings(spec, "ipFamilies");
    for (position, family) in families.iter().enumerate() {
        if !FAMILIES.contains(family) {
            errors.push(field::not_supported(
                &index(IP_FAMILIES, position),
                family,
                &FAMILIES,
            ));
        }
        if families[..position].contains(family) {
            errors.push(field::duplicate(&index(IP_FAMILIES, position), family));
        }
    }
    if let Some(policy) = spec.get("ipFamilyPolicy").and_then(Value::as_str) {
        if !POLICIES.contains(&policy) {
            errors.push(field::not_supported(IP_FAMILY_POLICY, policy, &POLICIES));
        }
    }
    let mut has_invalid_ips = false;
    for (position, ip) in cluster_ips.iter().enumerate() {
        if position == 0 && *ip == "None" {
            if cluster_ips.len() > 1 {
                has_invalid_ips = true;
                errors.push(invalid(
                    CLUSTER_IPS,
                    rendered_cluster_ips(spec),
                    "'None' must be the first and only value",
                ));
            }
            continue;
        }
        let before = errors.len();
        ip_field::valid_ip(&index(CLUSTER_IPS, position), ip, &mut errors);
        has_invalid_ips |= errors.len() != before;
    }
    if cluster_ips.len() > 2 {
        errors.push(invalid(
            CLUSTER_IPS,
            rendered_cluster_ips(spec),
            "may only hold up to 2 values",
        ));
    }
    if has_invalid_ips {
        return errors;
    }
    if cluster_ips.len() > 1 {
        // `netutils.IsDualStackIPStrings`: one of each family at least.
        let v6 = cluster_ips.iter().filter(|ip| is_ipv6(ip)).count();
        if v6 == 0 || v6 == cluster_ips.len() {
            errors.push(invalid(
                CLUSTER_IPS,
                rendered_cluster_ips(spec),
                "may specify no more than one IP for each IP family",
            ));
        }
    }
    if !is_headless(spec) && !cluster_ips.is_empty() && !families.is_empty() {
        for (position, (ip, family)) in cluster_ips.iter().zip(&families).enumerate() {
            if *family == "IPv4" && is_ipv6(ip) {
                errors.push(field::invalid(
                    &index(CLUSTER_IPS, position),
                    ip,
                    format!("expected an IPv4 value as indicated by `ipFamilies[{position}]`"),
                ));
            }
            if *family == "IPv6" && !is_ipv6(ip) {
                errors.push(field::invalid(
                    &index(CLUSTER_IPS, position),
                    ip,
                    format!("expected an IPv6 value as indicated by `ipFamilies[{position}]`"),
                ));
            }
        }
    }
    errors
}

/// `validateUpgradeDowngradeClusterIPs`.
pub fn upgrade_downgrade_cluster_ips(old: &Value, new: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if field::str_at(new, "type") == "ExternalName" || field::str_at(old, "type") == "ExternalName"
    {
        return errors;
    }
    if is_headless(old) && is_headless(new) {
        return errors;
    }
    let old_ips = strings(old, "clusterIPs");
    let new_ips = strings(new, "clusterIPs");
    let changed = || {
        invalid(
            &index(CLUSTER_IPS, 0),
            rendered_cluster_ips(new),
            MAY_NOT_CHANGE,
        )
    };
    if old_ips.len() == new_ips.len() {
        for (position, (before, after)) in old_ips.iter().zip(&new_ips).enumerate() {
            if before != after {
                errors.push(invalid(
                    &index(CLUSTER_IPS, position),
                    rendered_cluster_ips(new),
                    MAY_NOT_CHANGE,
                ));
            }
        }
    } else if old_ips.len() > new_ips.len() {
        if new_ips.is_empty() {
            errors.push(invalid(
                &index(CLUSTER_IPS, 0),
                rendered_cluster_ips(new),
                "primary clusterIP can not be unset",
            ));
        }
        if !old_ips.is_empty() && !new_ips.is_empty() && new_ips[0] != old_ips[0] {
            errors.push(changed());
        }
        if new_ips.len() == 1 && field::str_at(new, "ipFamilyPolicy") != "SingleStack" {
            errors.push(invalid(
                IP_FAMILY_POLICY,
                rendered_policy(new),
                "must be set to 'SingleStack' when releasing the secondary clusterIP",
            ));
        }
    } else if !old_ips.is_empty() && new_ips[0] != old_ips[0] {
        errors.push(changed());
    }
    errors
}

/// `validateUpgradeDowngradeIPFamilies` (some of kube's messages print the
/// cluster IPs where the families are meant; so do these).
pub fn upgrade_downgrade_ip_families(old: &Value, new: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if field::str_at(new, "type") == "ExternalName" || field::str_at(old, "type") == "ExternalName"
    {
        return errors;
    }
    if is_headless(old) || is_headless(new) {
        return errors;
    }
    let old_families = strings(old, "ipFamilies");
    let new_families = strings(new, "ipFamilies");
    let first = index(IP_FAMILIES, 0);
    if old_families.len() == new_families.len() {
        for (before, after) in old_families.iter().zip(&new_families) {
            if before != after {
                errors.push(invalid(&first, rendered_families(new), MAY_NOT_CHANGE));
            }
        }
    } else if old_families.len() > new_families.len() {
        if strings(new, "clusterIPs").is_empty() {
            errors.push(invalid(
                &first,
                rendered_families(new),
                "primary ipFamily can not be unset",
            ));
        }
        if !new_families.is_empty() && new_families[0] != old_families[0] {
            errors.push(invalid(&first, rendered_cluster_ips(new), MAY_NOT_CHANGE));
        }
        if new_families.len() == 1 && field::str_at(new, "ipFamilyPolicy") != "SingleStack" {
            errors.push(invalid(
                IP_FAMILY_POLICY,
                rendered_policy(new),
                "must be set to 'SingleStack' when releasing the secondary ipFamily",
            ));
        }
    } else if !old_families.is_empty()
        && !new_families.is_empty()
        && new_families[0] != old_families[0]
    {
        errors.push(invalid(&first, rendered_cluster_ips(new), MAY_NOT_CHANGE));
    }
    errors
}
