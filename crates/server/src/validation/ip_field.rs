//! IP address and CIDR fields as kube validates them:
//! `apimachinery/pkg/util/validation/ip.go` (`IsValidIP`, `IsValidCIDR`, with
//! `k8s.io/utils/net`'s sloppy parsers that still accept IPv4 octets with
//! leading zeros, parsed in `ip_address.rs`) and `ValidateNonSpecialIP`
//! (`core/validation/validation.go`).

use std::net::IpAddr;

use super::field;
use super::ip_address::INVALID_CIDR;
pub use super::ip_address::{parse_cidr_sloppy, parse_ip_sloppy};
use crate::status::FieldError;

const INVALID_IP: &str = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)";

/// `validation.IsValidIP(path, value)`.
pub fn valid_ip(path: &str, value: &str, errors: &mut Vec<FieldError>) {
    if parse_ip_sloppy(value).is_none() {
        errors.push(field::invalid(path, value, INVALID_IP));
    }
}

/// `validation.IsValidCIDR(path, value)`.
pub fn valid_cidr(path: &str, value: &str, errors: &mut Vec<FieldError>) {
    if parse_cidr_sloppy(value).is_none() {
        errors.push(field::invalid(path, value, INVALID_CIDR));
    }
}

/// Go's `net.IP` treats an IPv4-mapped IPv6 address as the IPv4 one.
fn unmapped(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// `ValidateNonSpecialIP`: endpoints may not be unspecified, loopback or link-local.
pub fn non_special_ip(path: &str, value: &str, errors: &mut Vec<FieldError>) {
    let Some(ip) = parse_ip_sloppy(value).map(unmapped) else {
        errors.push(field::invalid(path, value, "must be a valid IP address"));
        return;
    };
    if ip.is_unspecified() {
        errors.push(field::invalid(
            path,
            value,
            format!("may not be unspecified ({value})"),
        ));
    }
    if ip.is_loopback() {
        errors.push(field::invalid(
            path,
            value,
            "may not be in the loopback range (127.0.0.0/8, ::1/128)",
        ));
    }
    let (link_local_unicast, link_local_multicast) = match ip {
        IpAddr::V4(v4) => {
            let [a, b, c, _] = v4.octets();
            (a == 169 && b == 254, a == 224 && b == 0 && c == 0)
        }
        IpAddr::V6(v6) => {
            let bytes = v6.octets();
            (
                bytes[0] == 0xfe && bytes[1] & 0xc0 == 0x80,
                bytes[0] == 0xff && bytes[1] & 0x0f == 0x02,
            )
        }
    };
    if link_local_unicast {
        errors.push(field::invalid(
            path,
            value,
            "may not be in the link-local range (169.254.0.0/16, fe80::/10)",
        ));
    }
    if link_local_multicast {
        errors.push(field::invalid(
            path,
            value,
            "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)",
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sloppy_parsing_as_kube() {
        assert_eq!(
            parse_ip_sloppy("010.001.1.1"),
            Some(IpAddr::V4(std::net::Ipv4Addr::new(10, 1, 1, 1)))
        );
        for bad in [
            "",
            "1.2.3",
            "1.2.3.4.5",
            "256.1.1.1",
            "a.b.c.d",
            "1..2.3",
            "::g",
        ] {
            assert_eq!(parse_ip_sloppy(bad), None, "{bad}");
        }
        assert!(parse_ip_sloppy("2001:db8::1").is_some());
        assert_eq!(
            parse_cidr_sloppy("10.0.0.0/8").map(|cidr| cidr.prefix),
            Some(8)
        );
        for bad in [
            "10.0.0.0",
            "10.0.0.0/33",
            "::/129",
            "10.0.0.0/",
            "10.0.0.0/x",
        ] {
            assert_eq!(parse_cidr_sloppy(bad), None, "{bad}");
        }
    }

    #[test]
    fn special_addresses_are_refused() {
        let texts = |value: &str| {
            let mut errors = Vec::new();
            non_special_ip("ip", value, &mut errors);
            errors.iter().map(ToString::to_string).collect::<Vec<_>>()
        };
        assert!(texts("10.1.2.3").is_empty());
        assert!(texts("2001:db8::1").is_empty());
        assert_eq!(
            texts("0.0.0.0"),
            ["ip: Invalid value: \"0.0.0.0\": may not be unspecified (0.0.0.0)"]
        );
        assert_eq!(
            texts("127.0.0.1"),
            ["ip: Invalid value: \"127.0.0.1\": may not be in the loopback range (127.0.0.0/8, ::1/128)"]
        );
        assert_eq!(texts("::1").len(), 1);
        assert_eq!(texts("::ffff:127.0.0.1").len(), 1);
        assert_eq!(
            texts("169.254.1.1"),
            ["ip: Invalid value: \"169.254.1.1\": may not be in the link-local range (169.254.0.0/16, fe80::/10)"]
        );
        assert_eq!(texts("fe80::1").len(), 1);
        assert_eq!(
            texts("224.0.0.1"),
            ["ip: Invalid value: \"224.0.0.1\": may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"]
        );
        assert_eq!(texts("ff02::1").len(), 1);
        assert_eq!(
            texts("nope"),
            ["ip: Invalid value: \"nope\": must be a valid IP address"]
        );
    }
}
