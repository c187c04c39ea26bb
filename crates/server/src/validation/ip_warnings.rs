//! `apimachinery/pkg/util/validation/ip.go` `GetWarningsForIP` and
//! `GetWarningsForCIDR`: warnings for values the legacy ("sloppy") parsers
//! accept but Go's strict `netip` parsers do not (IPv4 octets or prefix
//! lengths with leading zeros, IPv4-mapped IPv6), for bits set beyond a
//! CIDR's prefix, and for IPv6 not in RFC 5952 form.

use std::net::IpAddr;

use super::ip_address::{parse_cidr_sloppy, parse_ip_sloppy};

/// Go's `net.IP.String()`: an IPv4-mapped IPv6 address prints as IPv4.
fn go_ip_string(ip: IpAddr) -> String {
    match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => v6.to_string(),
        },
        IpAddr::V4(v4) => v4.to_string(),
    }
}

/// `netip.ParseAddr` succeeds: no leading zeros, no zone needed here.
fn strict_addr(text: &str) -> Option<IpAddr> {
    text.parse::<IpAddr>().ok()
}

fn is_4_in_6(ip: IpAddr) -> bool {
    matches!(ip, IpAddr::V6(v6) if v6.to_ipv4_mapped().is_some())
}

/// `GetWarningsForIP`; nothing for a value the sloppy parser refuses
/// (validation reports those).
pub fn warnings_for_ip(path: &str, value: &str) -> Vec<String> {
    let Some(ip) = parse_ip_sloppy(value) else {
        return Vec::new();
    };
    match strict_addr(value) {
        None => vec![non_standard_ip(path, value, ip)],
        Some(addr) if is_4_in_6(addr) => vec![non_standard_ip(path, value, ip)],
        Some(IpAddr::V6(v6)) if v6.to_string() != value => vec![format!(
            "{path}: IPv6 address {value:?} should be in RFC 5952 canonical format ({:?})",
            v6.to_string()
        )],
        Some(_) => Vec::new(),
    }
}

fn non_standard_ip(path: &str, value: &str, ip: IpAddr) -> String {
    format!(
        "{path}: non-standard IP address {value:?} will be considered invalid in a future Kubernetes release: use {:?}",
        go_ip_string(ip)
    )
}

/// `netip.ParsePrefix`: a strict address and a decimal prefix length
/// without leading zeros, in range.
fn strict_prefix(text: &str) -> Option<(IpAddr, u8)> {
    let (address, length) = text.split_once('/')?;
    let address = strict_addr(address)?;
    if length.is_empty()
        || !length.bytes().all(|byte| byte.is_ascii_digit())
        || (length.len() > 1 && length.starts_with('0'))
    {
        return None;
    }
    let length = length.parse::<u8>().ok()?;
    let max = if address.is_ipv4() { 32 } else { 128 };
    (length <= max).then_some((address, length))
}

/// `GetWarningsForCIDR`; nothing for a value the sloppy parser refuses.
pub fn warnings_for_cidr(path: &str, value: &str) -> Vec<String> {
    let Some(cidr) = parse_cidr_sloppy(value) else {
        return Vec::new();
    };
    let Some(ip) = value
        .split_once('/')
        .and_then(|(address, _)| parse_ip_sloppy(address))
    else {
        return Vec::new();
    };
    let network = format!("{}/{}", go_ip_string(cidr.network), cidr.prefix);
    let mut warnings = Vec::new();
    if ip != cidr.network {
        let length = if ip.is_ipv4() { 32 } else { 128 };
        let single = format!("{}/{length}", go_ip_string(ip));
        warnings.push(format!(
            "{path}: CIDR value {value:?} is ambiguous in this context (should be {network:?} or {single:?}?)"
        ));
    }
    let strict = strict_prefix(value);
    if strict.is_none_or(|(address, _)| is_4_in_6(address)) {
        warnings.push(format!(
            "{path}: non-standard CIDR value {value:?} will be considered invalid in a future Kubernetes release: use {network:?}"
        ));
    }
    if let Some((IpAddr::V6(address), length)) = strict {
        let canonical = format!("{address}/{length}");
        if warnings.is_empty() && canonical != value {
            warnings.push(format!(
                "{path}: IPv6 CIDR value {value:?} should be in RFC 5952 canonical format ({canonical:?})"
            ));
        }
    }
    warnings
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Cases of `TestGetWarningsForIP` (apimachinery `ip_test.go`).
    #[test]
    fn ip_warnings_as_kube() {
        let path = "spec.clusterIPs[0]";
        assert!(warnings_for_ip(path, "192.12.2.2").is_empty());
        assert!(warnings_for_ip(path, "2001:db8::2").is_empty());
        assert_eq!(
            warnings_for_ip(path, "192.012.2.2"),
            ["spec.clusterIPs[0]: non-standard IP address \"192.012.2.2\" will be considered invalid in a future Kubernetes release: use \"192.12.2.2\""]
        );
        assert_eq!(
            warnings_for_ip(path, "::ffff:1.2.3.4"),
            ["spec.clusterIPs[0]: non-standard IP address \"::ffff:1.2.3.4\" will be considered invalid in a future Kubernetes release: use \"1.2.3.4\""]
        );
        assert_eq!(
            warnings_for_ip(path, "2001:db8:0:0::2"),
            ["spec.clusterIPs[0]: IPv6 address \"2001:db8:0:0::2\" should be in RFC 5952 canonical format (\"2001:db8::2\")"]
        );
        assert!(warnings_for_ip(path, "not an ip").is_empty());
    }

    /// Cases of `TestGetWarningsForCIDR`.
    #[test]
    fn cidr_warnings_as_kube() {
        let path = "spec.loadBalancerSourceRanges[0]";
        assert!(warnings_for_cidr(path, "192.12.2.0/24").is_empty());
        assert!(warnings_for_cidr(path, "2001:db8::/64").is_empty());
        assert_eq!(
            warnings_for_cidr(path, "192.12.2.0/024"),
            ["spec.loadBalancerSourceRanges[0]: non-standard CIDR value \"192.12.2.0/024\" will be considered invalid in a future Kubernetes release: use \"192.12.2.0/24\""]
        );
        assert_eq!(
            warnings_for_cidr(path, "192.012.2.0/24"),
            ["spec.loadBalancerSourceRanges[0]: non-standard CIDR value \"192.012.2.0/24\" will be considered invalid in a future Kubernetes release: use \"192.12.2.0/24\""]
        );
        assert_eq!(
            warnings_for_cidr(path, "192.12.2.8/24"),
            ["spec.loadBalancerSourceRanges[0]: CIDR value \"192.12.2.8/24\" is ambiguous in this context (should be \"192.12.2.0/24\" or \"192.12.2.8/32\"?)"]
        );
        assert_eq!(
            warnings_for_cidr(path, "2001:db8::8/64"),
            ["spec.loadBalancerSourceRanges[0]: CIDR value \"2001:db8::8/64\" is ambiguous in this context (should be \"2001:db8::/64\" or \"2001:db8::8/128\"?)"]
        );
        assert_eq!(
            warnings_for_cidr(path, "2001:db8:0:0::/64"),
            ["spec.loadBalancerSourceRanges[0]: IPv6 CIDR value \"2001:db8:0:0::/64\" should be in RFC 5952 canonical format (\"2001:db8::/64\")"]
        );
        assert!(warnings_for_cidr(path, "junk").is_empty());
    }
}
