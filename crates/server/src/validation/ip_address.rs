//! IP addresses and CIDRs as kube's legacy ("sloppy") validation parses
//! them: `k8s.io/utils/net` `ParseIPSloppy` / `ParseCIDRSloppy` (Go 1.16's
//! `net.ParseIP` / `net.ParseCIDR`, which accept IPv4 octets with leading
//! zeros) and the `util/validation` messages built on them
//! (`apimachinery/pkg/util/validation/ip.go`).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::field;
use crate::status::FieldError;

/// `IsValidCIDR`'s text.
pub const INVALID_CIDR: &str = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)";

/// A parsed CIDR: the network address (host bits cleared) and the prefix length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cidr {
    pub network: IpAddr,
    pub prefix: u8,
}

impl Cidr {
    /// `net.IPNet.Contains`: same family and the first `prefix` bits equal.
    pub fn contains(&self, address: IpAddr) -> bool {
        match (self.network, address) {
            (IpAddr::V4(network), IpAddr::V4(address)) => mask_v4(address, self.prefix) == network,
            (IpAddr::V6(network), IpAddr::V6(address)) => mask_v6(address, self.prefix) == network,
            _ => false,
        }
    }
}

fn mask_v4(address: Ipv4Addr, prefix: u8) -> Ipv4Addr {
    let bits = u32::from(address);
    let mask = u32::MAX.checked_shl(32 - u32::from(prefix)).unwrap_or(0);
    Ipv4Addr::from(bits & mask)
}

fn mask_v6(address: Ipv6Addr, prefix: u8) -> Ipv6Addr {
    let bits = u128::from(address);
    let mask = u128::MAX.checked_shl(128 - u32::from(prefix)).unwrap_or(0);
    Ipv6Addr::from(bits & mask)
}

/// Decimal digits only (Go's `dtoi`), at most `max`.
fn decimal(text: &str, max: u32) -> Option<u32> {
    if text.is_empty() || text.len() > 10 || !text.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    text.parse::<u64>()
        .ok()
        .filter(|value| *value <= u64::from(max))
        .and_then(|value| u32::try_from(value).ok())
}

fn parse_ipv4_sloppy(text: &str) -> Option<Ipv4Addr> {
    let mut octets = [0u8; 4];
    let mut parts = text.split('.');
    for octet in &mut octets {
        *octet = u8::try_from(decimal(parts.next()?, 255)?).ok()?;
    }
    parts.next().is_none().then_some(Ipv4Addr::from(octets))
}

/// `netutils.ParseIPSloppy`.
pub fn parse_ip_sloppy(text: &str) -> Option<IpAddr> {
    if text.contains(':') {
        text.parse::<Ipv6Addr>().ok().map(IpAddr::V6)
    } else {
        parse_ipv4_sloppy(text).map(IpAddr::V4)
    }
}

/// `netutils.ParseCIDRSloppy`: the network of `address/prefix`.
pub fn parse_cidr_sloppy(text: &str) -> Option<Cidr> {
    let (address, prefix) = text.split_once('/')?;
    let address = parse_ip_sloppy(address)?;
    let max = if address.is_ipv4() { 32 } else { 128 };
    let prefix = u8::try_from(decimal(prefix, max)?).ok()?;
    let network = match address {
        IpAddr::V4(v4) => IpAddr::V4(mask_v4(v4, prefix)),
        IpAddr::V6(v6) => IpAddr::V6(mask_v6(v6, prefix)),
    };
    Some(Cidr { network, prefix })
}

/// `apivalidation.IsValidCIDRForLegacyField` with `StrictIPCIDRValidation` off
/// (its 1.34 default): a sloppy parse must succeed; values of the old object
/// are allowed as they are.
pub fn cidr_for_legacy_field(path: &str, value: &str, allowed_old: &[&str]) -> Vec<FieldError> {
    if allowed_old.contains(&value) || parse_cidr_sloppy(value).is_some() {
        Vec::new()
    } else {
        vec![field::invalid(path, value, INVALID_CIDR)]
    }
}

/// `validation.IsValidIPv4Address(fldPath, value)`.
pub fn ipv4_address(path: &str, value: &str) -> Vec<FieldError> {
    match parse_ip_sloppy(value) {
        Some(IpAddr::V4(_)) => Vec::new(),
        _ => vec![field::invalid(path, value, "must be a valid IPv4 address")],
    }
}

/// `validation.IsValidIPv6Address(fldPath, value)` (an IPv4-mapped address is IPv4 to Go).
pub fn ipv6_address(path: &str, value: &str) -> Vec<FieldError> {
    match parse_ip_sloppy(value) {
        Some(IpAddr::V6(v6)) if v6.to_ipv4_mapped().is_none() => Vec::new(),
        _ => vec![field::invalid(path, value, "must be a valid IPv6 address")],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sloppy_parsing_accepts_what_go_1_16_accepted() {
        assert_eq!(
            parse_ip_sloppy("010.001.0.1"),
            Some(IpAddr::V4(Ipv4Addr::new(10, 1, 0, 1)))
        );
        assert!(parse_ip_sloppy("256.0.0.1").is_none());
        assert!(parse_ip_sloppy("1.2.3").is_none());
        assert!(parse_ip_sloppy("1.2.3.4.5").is_none());
        assert!(parse_ip_sloppy("2001:db8::1").is_some());
        assert!(parse_ip_sloppy("").is_none());
        let cidr = parse_cidr_sloppy("192.168.1.7/24").unwrap();
        assert_eq!(cidr.network, IpAddr::V4(Ipv4Addr::new(192, 168, 1, 0)));
        assert_eq!(cidr.prefix, 24);
        assert!(parse_cidr_sloppy("192.168.1.0/33").is_none());
        assert!(parse_cidr_sloppy("192.168.1.0").is_none());
        assert!(parse_cidr_sloppy("2001:db8::/129").is_none());
        assert!(parse_cidr_sloppy("::/0").is_some());
    }

    #[test]
    fn containment_is_per_family() {
        let cidr = parse_cidr_sloppy("10.0.0.0/8").unwrap();
        assert!(cidr.contains(parse_ip_sloppy("10.200.0.0").unwrap()));
        assert!(!cidr.contains(parse_ip_sloppy("11.0.0.0").unwrap()));
        assert!(!cidr.contains(parse_ip_sloppy("::").unwrap()));
        let all = parse_cidr_sloppy("0.0.0.0/0").unwrap();
        assert!(all.contains(parse_ip_sloppy("1.2.3.4").unwrap()));
    }

    #[test]
    fn address_families_as_kube_reports_them() {
        assert!(ipv4_address("a", "1.2.3.4").is_empty());
        assert_eq!(
            ipv4_address("a", "::1")[0].to_string(),
            "a: Invalid value: \"::1\": must be a valid IPv4 address"
        );
        assert!(ipv6_address("a", "::1").is_empty());
        assert_eq!(ipv6_address("a", "::ffff:1.2.3.4").len(), 1);
        assert_eq!(
            cidr_for_legacy_field("c", "10.0.0.0/40", &[])[0].to_string(),
            format!("c: Invalid value: \"10.0.0.0/40\": {INVALID_CIDR}")
        );
        assert!(cidr_for_legacy_field("c", "bad", &["bad"]).is_empty());
    }
}
