//! The Service fields allocation touches: `clusterIP`/`clusterIPs`,
//! `ipFamilies`/`ipFamilyPolicy`, `ports[].nodePort`, `healthCheckNodePort`
//! (`alloc.go`: `initIPFamilyFields`, `allocClusterIPs`, `initNodePorts`,
//! `updateNodePorts`; `rest.go`: `patchAllocatedValues`).

use std::collections::HashMap;
use std::net::IpAddr;

use serde_json::{json, Map, Value};

use super::{Inner, Lookup};
use crate::object;
use crate::status::{FieldError, FieldErrorKind, Status};

fn invalid(service: &Value, field: &str, rendered: String, detail: String) -> Status {
    Status::invalid(
        "",
        "Service",
        object::name(service),
        &[FieldError {
            kind: FieldErrorKind::Invalid(rendered),
            field: field.to_string(),
            detail,
        }],
    )
}

fn text<'a>(spec: &'a Map<String, Value>, field: &str) -> &'a str {
    spec.get(field).and_then(Value::as_str).unwrap_or_default()
}

fn strings(spec: &Map<String, Value>, field: &str) -> Vec<String> {
    spec.get(field)
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

fn needs_cluster_ip(spec: &Map<String, Value>) -> bool {
    text(spec, "type") != "ExternalName"
}

fn needs_node_ports(spec: &Map<String, Value>) -> bool {
    matches!(text(spec, "type"), "NodePort" | "LoadBalancer")
}

/// `shouldAllocateNodePorts`: LoadBalancers may opt out.
fn allocates_node_ports(spec: &Map<String, Value>) -> bool {
    match text(spec, "type") {
        "NodePort" => true,
        "LoadBalancer" => spec.get("allocateLoadBalancerNodePorts") != Some(&json!(false)),
        _ => false,
    }
}

/// `apiservice.NeedsHealthCheck`.
fn needs_health_check(spec: &Map<String, Value>) -> bool {
    text(spec, "type") == "LoadBalancer" && text(spec, "externalTrafficPolicy") == "Local"
}

fn is_headless(spec: &Map<String, Value>) -> bool {
    text(spec, "clusterIP") == "None"
        || strings(spec, "clusterIPs").first().map(String::as_str) == Some("None")
}

fn family_of(ip: &str) -> Option<&'static str> {
    // `netutils.ParseIPSloppy`, as validation parses; Go counts an
    // IPv4-mapped address as IPv4.
    match crate::validation::ip_field::parse_ip_sloppy(ip)? {
        IpAddr::V4(_) => Some("IPv4"),
        IpAddr::V6(v6) if v6.to_ipv4_mapped().is_some() => Some("IPv4"),
        IpAddr::V6(_) => Some("IPv6"),
    }
}

/// The strategy's `NormalizeClusterIPs` (`registry/core/service/strategy.go`):
/// guess what a client meant when it set only one of clusterIP and
/// clusterIPs; validation refuses what stays inconsistent.
fn normalize_cluster_ips(spec: &mut Map<String, Value>, old: Option<&Map<String, Value>>) {
    let single = text(spec, "clusterIP").to_string();
    let many = strings(spec, "clusterIPs");
    let Some(old) = old else {
        // Create: an old client sets the singular field only.
        if !single.is_empty() && many.is_empty() {
            spec.insert("clusterIPs".into(), json!([single]));
        }
        return;
    };
    let old_single = text(old, "clusterIP");
    let old_many = strings(old, "clusterIPs");
    // An old client patching some other field dropped clusterIPs.
    if !old_many.is_empty() && many.is_empty() && old_single == single {
        spec.insert("clusterIPs".into(), json!(old_many));
    }
    if old_single != single {
        let same_plural = old_many == strings(spec, "clusterIPs");
        if !old_single.is_empty() && single.is_empty() {
            // A client clearing it: clear the plural on its behalf.
            if same_plural {
                spec.remove("clusterIPs");
            }
        } else if same_plural {
            spec.insert("clusterIPs".into(), json!([single]));
        }
    }
}

/// `initIPFamilyFields` for a single-stack cluster.
fn init_ip_families(
    inner: &Inner,
    service: &Value,
    spec: &mut Map<String, Value>,
    old: Option<&Map<String, Value>>,
) -> Result<(), Status> {
    if !needs_cluster_ip(spec) {
        return Ok(());
    }
    let selectorless = spec
        .get("selector")
        .and_then(Value::as_object)
        .is_none_or(Map::is_empty);
    let headless = is_headless(spec);
    if spec.get("ipFamilyPolicy").is_none_or(Value::is_null) {
        let policy = match old.and_then(|old| old.get("ipFamilyPolicy")) {
            Some(policy) if !policy.is_null() => policy.clone(),
            _ if headless && selectorless => json!("RequireDualStack"),
            _ => json!("SingleStack"),
        };
        spec.insert("ipFamilyPolicy".into(), policy);
    }
    // `initIPFamilyFields`' loose pre-validation, before anything is allocated.
    let errors =
        crate::validation::service_ips::cluster_ips_related_fields(&Value::Object(spec.clone()));
    if !errors.is_empty() {
        return Err(Status::invalid(
            "",
            "Service",
            object::name(service),
            &errors,
        ));
    }
    let policy = text(spec, "ipFamilyPolicy").to_string();
    let mut families = strings(spec, "ipFamilies");
    for (index, ip) in strings(spec, "clusterIPs").iter().enumerate() {
        if ip == "None" {
            break;
        }
        if index >= families.len() {
            if let Some(family) = family_of(ip) {
                if family != inner.ips.family() {
                    return Err(invalid(
                        service,
                        &format!("spec.clusterIPs[{index}]"),
                        crate::go::fmt::sharp_v_strings(&strings(spec, "clusterIPs")),
                        format!("{family} is not configured on this cluster"),
                    ));
                }
                families.push(family.to_string());
            }
        }
    }
    if headless && selectorless {
        if families.is_empty() {
            families.push(inner.ips.family().to_string());
        }
        if families.len() < 2 && policy != "SingleStack" {
            let other = if families[0] == "IPv4" {
                "IPv6"
            } else {
                "IPv4"
            };
            families.push(other.to_string());
        }
        spec.insert("ipFamilies".into(), json!(families));
        return Ok(());
    }
    if policy == "RequireDualStack" {
        return Err(invalid(
            service,
            "spec.ipFamilyPolicy",
            crate::go::strconv::quote(&policy),
            "this cluster is not configured for dual-stack services".into(),
        ));
    }
    for (index, family) in families.iter().enumerate() {
        if family != inner.ips.family() {
            return Err(invalid(
                service,
                &format!("spec.ipFamilies[{index}]"),
                crate::go::strconv::quote(family),
                "not configured on this cluster".into(),
            ));
        }
    }
    if families.is_empty() {
        families.push(inner.ips.family().to_string());
    }
    spec.insert("ipFamilies".into(), json!(families));
    Ok(())
}

impl Inner {
    fn ip_free(&self, ip: IpAddr, key: &str, id: u64) -> bool {
        self.ip_owner.get(&ip).is_none_or(|owner| owner == key)
            && self.pending_ips.get(&ip).is_none_or(|holder| *holder == id)
    }

    fn port_free(&self, port: u16, key: &str, id: u64) -> bool {
        self.port_owner.get(&port).is_none_or(|owner| owner == key)
            && self
                .pending_ports
                .get(&port)
                .is_none_or(|holder| *holder == id)
    }

    /// A free index in [start, end) scanning from a random point.
    fn scan(size: u64, start: u64, end: u64, free: impl Fn(u64) -> bool) -> Option<u64> {
        if end <= start {
            return None;
        }
        let span = end - start;
        let random = u64::from_le_bytes(
            uuid::Uuid::new_v4().as_bytes()[..8]
                .try_into()
                .unwrap_or([0; 8]),
        );
        let first = random % span;
        (0..span)
            .map(|step| start + (first + step) % span)
            .find(|index| *index < size && free(*index))
    }

    /// `AllocateNext`: the high band first, then the low one.
    fn next_ip(&self, key: &str, id: u64) -> Option<IpAddr> {
        let size = self.ips.size();
        let band = self.ips.static_band().min(size);
        let free = |index: u64| self.ip_free(self.ips.address(index), key, id);
        Self::scan(size, band, size, free)
            .or_else(|| Self::scan(size, 0, band, free))
            .map(|index| self.ips.address(index))
    }

    fn next_port(&self, key: &str, id: u64) -> Option<u16> {
        let size = u64::from(self.ports.size);
        let band = self.ports.static_band().min(size);
        let free = |index: u64| self.port_free(self.ports.port(index), key, id);
        Self::scan(size, band, size, free)
            .or_else(|| Self::scan(size, 0, band, free))
            .map(|index| self.ports.port(index))
    }

    /// `allocClusterIPs`.
    fn allocate_cluster_ip(
        &mut self,
        key: &str,
        id: u64,
        service: &Value,
        spec: &mut Map<String, Value>,
    ) -> Result<(), Status> {
        if !needs_cluster_ip(spec) || is_headless(spec) {
            return Ok(());
        }
        let requested = strings(spec, "clusterIPs")
            .first()
            .cloned()
            .filter(|ip| !ip.is_empty());
        let ip = match requested {
            Some(text) => {
                let fail = |detail: String| {
                    invalid(
                        service,
                        "spec.clusterIPs",
                        crate::go::fmt::sharp_v_strings(&strings(spec, "clusterIPs")),
                        format!("failed to allocate IP {text}: {detail}"),
                    )
                };
                // Validated (`cluster_ips_related_fields`) before allocation.
                let Some(ip) = crate::validation::ip_field::parse_ip_sloppy(&text) else {
                    return Err(invalid(
                        service,
                        "spec.clusterIPs[0]",
                        crate::go::strconv::quote(&text),
                        "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)".into(),
                    ));
                };
                match self.ips.index(ip) {
                    Lookup::OtherNetwork => {
                        return Err(fail(
                            "the provided network does not match the current range".into(),
                        ))
                    }
                    Lookup::Reserved => {
                        return Err(fail(format!(
                            "the provided IP ({ip}) is not in the valid range. The range of valid IPs is {}",
                            self.ips.cidr()
                        )))
                    }
                    Lookup::Index(_) => {}
                }
                if !self.ip_free(ip, key, id) {
                    return Err(fail("provided IP is already allocated".into()));
                }
                ip
            }
            None => self
                .next_ip(key, id)
                .ok_or_else(|| Status::internal("failed to allocate a serviceIP: range is full"))?,
        };
        self.pending_ips.insert(ip, id);
        spec.insert("clusterIP".into(), json!(ip.to_string()));
        spec.insert("clusterIPs".into(), json!([ip.to_string()]));
        Ok(())
    }

    fn claim_port(
        &mut self,
        key: &str,
        id: u64,
        service: &Value,
        field: &str,
        port: u64,
    ) -> Result<u16, Status> {
        let fail = |detail: String| invalid(service, field, port.to_string(), detail);
        let number = u16::try_from(port)
            .ok()
            .filter(|p| self.ports.contains(*p))
            .ok_or_else(|| {
                fail(format!(
                    "provided port is not in the valid range. The range of valid ports is {}",
                    self.ports
                ))
            })?;
        if !self.port_free(number, key, id) {
            return Err(fail("provided port is already allocated".into()));
        }
        self.pending_ports.insert(number, id);
        Ok(number)
    }

    fn next_node_port(&mut self, key: &str, id: u64) -> Result<u16, Status> {
        let port = self
            .next_port(key, id)
            .ok_or_else(|| Status::internal("failed to allocate a nodePort: range is full"))?;
        self.pending_ports.insert(port, id);
        Ok(port)
    }

    /// `initNodePorts` / `updateNodePorts`: ports already held by this
    /// Service (`kept`) need no new allocation.
    fn allocate_node_ports(
        &mut self,
        key: &str,
        id: u64,
        service: &Value,
        spec: &mut Map<String, Value>,
        kept: &[u16],
    ) -> Result<(), Status> {
        let allocate_new = allocates_node_ports(spec);
        let mut by_service_port: HashMap<u64, u16> = HashMap::new();
        let Some(ports) = spec.get_mut("ports").and_then(Value::as_array_mut) else {
            return Ok(());
        };
        let mut ports = std::mem::take(ports);
        let mut result = Ok(());
        for (index, port) in ports.iter_mut().enumerate() {
            let Some(port) = port.as_object_mut() else {
                continue;
            };
            let requested = port.get("nodePort").and_then(Value::as_u64).unwrap_or(0);
            let service_port = port.get("port").and_then(Value::as_u64).unwrap_or(0);
            if requested == 0 && !allocate_new {
                continue;
            }
            let field = format!("spec.ports[{index}].nodePort");
            let assigned = if requested != 0 {
                if kept.iter().any(|p| u64::from(*p) == requested)
                    || by_service_port.values().any(|p| u64::from(*p) == requested)
                {
                    Ok(requested as u16)
                } else {
                    self.claim_port(key, id, service, &field, requested)
                }
            } else if let Some(same) = by_service_port.get(&service_port) {
                // The same service port over another protocol shares its node port.
                Ok(*same)
            } else {
                self.next_node_port(key, id)
            };
            match assigned {
                Ok(number) => {
                    by_service_port.entry(service_port).or_insert(number);
                    port.insert("nodePort".into(), json!(number));
                }
                Err(status) => {
                    result = Err(status);
                    break;
                }
            }
        }
        spec.insert("ports".into(), Value::Array(ports));
        result?;
        if needs_health_check(spec) {
            let requested = spec
                .get("healthCheckNodePort")
                .and_then(Value::as_u64)
                .unwrap_or(0);
            if requested == 0 {
                let port = self.next_node_port(key, id)?;
                spec.insert("healthCheckNodePort".into(), json!(port));
            } else if !kept.iter().any(|p| u64::from(*p) == requested) {
                self.claim_port(key, id, service, "spec.healthCheckNodePort", requested)
                    .map_err(|status| Status::internal(status.message))?;
            }
        }
        Ok(())
    }
}

fn spec_of(service: &mut Value) -> Option<Map<String, Value>> {
    service
        .get_mut("spec")
        .and_then(Value::as_object_mut)
        .map(std::mem::take)
}

fn put_spec(service: &mut Value, spec: Map<String, Value>) {
    if let Some(slot) = service.get_mut("spec") {
        *slot = Value::Object(spec);
    }
}

pub(super) fn allocate_create(
    inner: &mut Inner,
    key: &str,
    id: u64,
    service: &mut Value,
) -> Result<(), Status> {
    let Some(mut spec) = spec_of(service) else {
        return Ok(());
    };
    let snapshot = service.clone();
    let result = (|| {
        normalize_cluster_ips(&mut spec, None);
        init_ip_families(inner, &snapshot, &mut spec, None)?;
        inner.allocate_cluster_ip(key, id, &snapshot, &mut spec)?;
        if needs_node_ports(&spec) {
            inner.allocate_node_ports(key, id, &snapshot, &mut spec, &[])?;
        }
        Ok(())
    })();
    put_spec(service, spec);
    result
}

/// `patchAllocatedValues`, then allocation for what changed.
pub(super) fn allocate_update(
    inner: &mut Inner,
    key: &str,
    id: u64,
    old: &Value,
    service: &mut Value,
) -> Result<(), Status> {
    let Some(old_spec) = old.get("spec").and_then(Value::as_object).cloned() else {
        return allocate_create(inner, key, id, service);
    };
    let Some(mut spec) = spec_of(service) else {
        return Ok(());
    };
    let snapshot = service.clone();
    let result = (|| {
        if needs_cluster_ip(&old_spec) && needs_cluster_ip(&spec) {
            if text(&spec, "clusterIP").is_empty() {
                if let Some(ip) = old_spec.get("clusterIP") {
                    spec.insert("clusterIP".into(), ip.clone());
                }
            }
            if strings(&spec, "clusterIPs").is_empty() {
                if let Some(ips) = old_spec.get("clusterIPs") {
                    spec.insert("clusterIPs".into(), ips.clone());
                }
            }
        }
        let old_ports = node_ports_by_name(&old_spec);
        if needs_node_ports(&old_spec) && needs_node_ports(&spec) {
            let used_by_new: Vec<u64> = node_ports_by_name(&spec).into_values().collect();
            if let Some(ports) = spec.get_mut("ports").and_then(Value::as_array_mut) {
                for port in ports.iter_mut().filter_map(Value::as_object_mut) {
                    if port.get("nodePort").and_then(Value::as_u64).unwrap_or(0) != 0 {
                        continue;
                    }
                    let name = port.get("name").and_then(Value::as_str).unwrap_or_default();
                    if let Some(previous) = old_ports.get(name) {
                        if !used_by_new.contains(previous) {
                            port.insert("nodePort".into(), json!(previous));
                        }
                    }
                }
            }
        }
        if needs_health_check(&old_spec)
            && needs_health_check(&spec)
            && spec
                .get("healthCheckNodePort")
                .and_then(Value::as_u64)
                .unwrap_or(0)
                == 0
        {
            if let Some(port) = old_spec.get("healthCheckNodePort") {
                spec.insert("healthCheckNodePort".into(), port.clone());
            }
        }
        normalize_cluster_ips(&mut spec, Some(&old_spec));
        if spec.get("ipFamilies").is_none() && needs_cluster_ip(&old_spec) {
            if let Some(families) = old_spec.get("ipFamilies") {
                spec.insert("ipFamilies".into(), families.clone());
            }
        }
        init_ip_families(inner, &snapshot, &mut spec, Some(&old_spec))?;
        if !needs_cluster_ip(&old_spec) && needs_cluster_ip(&spec) {
            inner.allocate_cluster_ip(key, id, &snapshot, &mut spec)?;
        }
        if needs_node_ports(&spec) {
            let kept: Vec<u16> = super::held_by(old).ports;
            inner.allocate_node_ports(key, id, &snapshot, &mut spec, &kept)?;
        }
        Ok(())
    })();
    put_spec(service, spec);
    result
}

fn node_ports_by_name(spec: &Map<String, Value>) -> HashMap<String, u64> {
    spec.get("ports")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|port| {
            let node_port = port.get("nodePort").and_then(Value::as_u64)?;
            let name = port.get("name").and_then(Value::as_str).unwrap_or_default();
            Some((name.to_string(), node_port))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::{IpRange, PortRange, ServiceAllocator};
    use super::*;

    fn inner() -> ServiceAllocator {
        ServiceAllocator::new(IpRange::parse("10.0.0.0/24").unwrap(), PortRange::default())
    }

    #[test]
    fn cluster_ips_and_node_ports_are_allocated_and_conflicts_refused() {
        let allocator = inner();
        let mut guard = allocator.lock();
        let mut service = json!({"metadata": {"name": "a"}, "spec": {"type": "NodePort", "ports": [{"port": 80}]}});
        allocate_create(&mut guard, "/a", 1, &mut service).unwrap();
        let ip = service["spec"]["clusterIP"].as_str().unwrap().to_string();
        assert_eq!(service["spec"]["clusterIPs"], json!([ip]));
        assert_eq!(service["spec"]["ipFamilies"], json!(["IPv4"]));
        assert_eq!(service["spec"]["ipFamilyPolicy"], json!("SingleStack"));
        let node_port = service["spec"]["ports"][0]["nodePort"].as_u64().unwrap();
        assert!((30000..=32767).contains(&node_port));
        let mut again = json!({"metadata": {"name": "b"}, "spec": {"clusterIP": ip, "type": "NodePort", "ports": [{"port": 80, "nodePort": node_port}]}});
        let status = allocate_create(&mut guard, "/b", 2, &mut again).unwrap_err();
        assert_eq!(
            status.message,
            format!("Service \"b\" is invalid: spec.clusterIPs: Invalid value: []string{{\"{ip}\"}}: failed to allocate IP {ip}: provided IP is already allocated")
        );
        let mut port_taken = json!({"metadata": {"name": "c"}, "spec": {"type": "NodePort", "ports": [{"port": 80, "nodePort": node_port}]}});
        let status = allocate_create(&mut guard, "/c", 3, &mut port_taken).unwrap_err();
        assert_eq!(
            status.message,
            format!("Service \"c\" is invalid: spec.ports[0].nodePort: Invalid value: {node_port}: provided port is already allocated")
        );
        let mut out = json!({"metadata": {"name": "d"}, "spec": {"type": "NodePort", "ports": [{"port": 80, "nodePort": 80}]}});
        let status = allocate_create(&mut guard, "/d", 4, &mut out).unwrap_err();
        assert_eq!(
            status.message,
            "Service \"d\" is invalid: spec.ports[0].nodePort: Invalid value: 80: provided port is not in the valid range. The range of valid ports is 30000-32767"
        );
        let mut other = json!({"metadata": {"name": "e"}, "spec": {"clusterIP": "10.1.0.5"}});
        let status = allocate_create(&mut guard, "/e", 5, &mut other).unwrap_err();
        assert_eq!(
            status.message,
            "Service \"e\" is invalid: spec.clusterIPs: Invalid value: []string{\"10.1.0.5\"}: failed to allocate IP 10.1.0.5: the provided network does not match the current range"
        );
        let mut headless = json!({"metadata": {"name": "h"}, "spec": {"clusterIP": "None", "selector": {"a": "b"}}});
        allocate_create(&mut guard, "/h", 6, &mut headless).unwrap();
        assert_eq!(headless["spec"]["clusterIPs"], json!(["None"]));
        assert_eq!(headless["spec"]["ipFamilies"], json!(["IPv4"]));
    }

    /// `NormalizeClusterIPs` and `initIPFamilyFields`' pre-validation.
    #[test]
    fn cluster_ip_fields_are_normalized_then_validated_before_allocation() {
        let allocator = inner();
        let mut guard = allocator.lock();
        let mut plural_only =
            json!({"metadata": {"name": "p"}, "spec": {"clusterIPs": ["10.0.0.7"]}});
        let status = allocate_create(&mut guard, "/p", 1, &mut plural_only).unwrap_err();
        assert_eq!(
            status.message,
            "Service \"p\" is invalid: spec.clusterIPs: Invalid value: []string{\"10.0.0.7\"}: must be empty when `clusterIP` is not specified"
        );
        let mut bad = json!({"metadata": {"name": "q"}, "spec": {"clusterIP": "10.0.0.x", "ipFamilyPolicy": "Twice"}});
        let status = allocate_create(&mut guard, "/q", 2, &mut bad).unwrap_err();
        assert_eq!(
            status.message,
            "Service \"q\" is invalid: [spec.ipFamilyPolicy: Unsupported value: \"Twice\": supported values: \"PreferDualStack\", \"RequireDualStack\", \"SingleStack\", spec.clusterIPs[0]: Invalid value: \"10.0.0.x\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)]"
        );
        // Update: a changed clusterIP with the old clusterIPs takes them along.
        let mut created = json!({"metadata": {"name": "u"}, "spec": {"clusterIP": "10.0.0.8"}});
        allocate_create(&mut guard, "/u", 3, &mut created).unwrap();
        let mut changed = created.clone();
        changed["spec"]["clusterIP"] = json!("10.0.0.9");
        allocate_update(&mut guard, "/u", 4, &created, &mut changed).unwrap();
        assert_eq!(changed["spec"]["clusterIPs"], json!(["10.0.0.9"]));
        // A client clearing both keeps nothing to copy back but the old values.
        let mut cleared = created.clone();
        cleared["spec"].as_object_mut().unwrap().remove("clusterIP");
        cleared["spec"]
            .as_object_mut()
            .unwrap()
            .remove("clusterIPs");
        allocate_update(&mut guard, "/u", 5, &created, &mut cleared).unwrap();
        assert_eq!(cleared["spec"]["clusterIPs"], json!(["10.0.0.8"]));
    }

    #[test]
    fn dynamic_ips_prefer_the_upper_band() {
        let allocator = inner();
        let mut guard = allocator.lock();
        let mut service = json!({"metadata": {"name": "a"}, "spec": {}});
        allocate_create(&mut guard, "/a", 1, &mut service).unwrap();
        let ip: std::net::Ipv4Addr = service["spec"]["clusterIP"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap();
        assert!(ip.octets()[3] > 16, "{ip}");
    }
}
