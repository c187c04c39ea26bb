//! kube's IP and CIDR libraries (`apiserver/pkg/cel/library/ip.go`,
//! `cidr.go`): `ip(string)`, `isIP(string)`, `ip.isCanonical(string)`,
//! `string(ip)`, and on an IP `family()`, `isUnspecified()`,
//! `isLoopback()`, `isLinkLocalMulticast()`, `isLinkLocalUnicast()`,
//! `isGlobalUnicast()`; `cidr(string)`, `isCIDR(string)`, `string(cidr)`,
//! and on a CIDR `containsIP(ip|string)`, `containsCIDR(cidr|string)`,
//! `ip()`, `masked()`, `prefixLength()`. Parsing is Go's `netip`'s: no
//! IPv4-mapped IPv6 addresses, no zones, no leading zeros.

use std::net::IpAddr;
use std::sync::Arc;

use cel::common::types::{Type, STRING_TYPE};
use cel::objects::Opaque;
use cel::{DeclarationError, Env, ExecutionError, Value};

use super::{arguments, no_such_overload, overload};

const IP_TYPE_NAME: &str = "net.IP";
const CIDR_TYPE_NAME: &str = "net.CIDR";

fn ip_type() -> Type {
    Type::new_opaque_type(IP_TYPE_NAME)
}

fn cidr_type() -> Type {
    Type::new_opaque_type(CIDR_TYPE_NAME)
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct CelIp(IpAddr);

impl Opaque for CelIp {
    fn runtime_type_name(&self) -> &str {
        IP_TYPE_NAME
    }
}

/// A prefix as written: its address (not masked) and length.
#[derive(Debug, Clone, PartialEq, Eq)]
struct CelCidr {
    address: IpAddr,
    length: u8,
}

impl Opaque for CelCidr {
    fn runtime_type_name(&self) -> &str {
        CIDR_TYPE_NAME
    }
}

/// Registers the libraries' overloads on `env`.
pub fn library(env: &mut Env) -> Result<(), DeclarationError> {
    env.add_type(ip_type())?;
    env.add_type(cidr_type())?;
    env.add_overload("ip", "string_to_ip", vec![STRING_TYPE], overload!(to_ip))?;
    env.add_overload("isIP", "is_ip", vec![STRING_TYPE], overload!(is_ip))?;
    env.add_overload(
        "ip.isCanonical",
        "ip_is_canonical",
        vec![STRING_TYPE],
        overload!(is_canonical),
    )?;
    env.add_overload(
        "string",
        "ip_to_string",
        vec![ip_type()],
        overload!(ip_string),
    )?;
    for (name, id, function) in [
        ("family", "ip_family", overload!(family)),
        (
            "isUnspecified",
            "ip_is_unspecified",
            overload!(is_unspecified),
        ),
        ("isLoopback", "ip_is_loopback", overload!(is_loopback)),
        (
            "isLinkLocalMulticast",
            "ip_is_link_local_multicast",
            overload!(is_link_local_multicast),
        ),
        (
            "isLinkLocalUnicast",
            "ip_is_link_local_unicast",
            overload!(is_link_local_unicast),
        ),
        (
            "isGlobalUnicast",
            "ip_is_global_unicast",
            overload!(is_global_unicast),
        ),
    ] {
        env.add_member_overload(name, id, ip_type(), vec![], function)?;
    }
    env.add_overload(
        "cidr",
        "string_to_cidr",
        vec![STRING_TYPE],
        overload!(to_cidr),
    )?;
    env.add_overload("isCIDR", "is_cidr", vec![STRING_TYPE], overload!(is_cidr))?;
    env.add_overload(
        "string",
        "cidr_to_string",
        vec![cidr_type()],
        overload!(cidr_string),
    )?;
    env.add_member_overload(
        "containsIP",
        "cidr_contains_ip_ip",
        cidr_type(),
        vec![ip_type()],
        overload!(contains_ip),
    )?;
    env.add_member_overload(
        "containsIP",
        "cidr_contains_ip_string",
        cidr_type(),
        vec![STRING_TYPE],
        overload!(contains_ip),
    )?;
    env.add_member_overload(
        "containsCIDR",
        "cidr_contains_cidr",
        cidr_type(),
        vec![cidr_type()],
        overload!(contains_cidr),
    )?;
    env.add_member_overload(
        "containsCIDR",
        "cidr_contains_cidr_string",
        cidr_type(),
        vec![STRING_TYPE],
        overload!(contains_cidr),
    )?;
    env.add_member_overload("ip", "cidr_ip", cidr_type(), vec![], overload!(cidr_ip))?;
    env.add_member_overload(
        "masked",
        "cidr_masked",
        cidr_type(),
        vec![],
        overload!(masked),
    )?;
    env.add_member_overload(
        "prefixLength",
        "cidr_prefix_length",
        cidr_type(),
        vec![],
        overload!(prefix_length),
    )?;
    Ok(())
}

/// `netip.ParseAddr` as kube's `ip()` accepts it: no zone, and no
/// IPv4-mapped IPv6 address.
fn parse_ip(text: &str) -> Result<IpAddr, String> {
    let address: IpAddr = text
        .parse()
        .map_err(|_| format!("IP Address {text:?} parse error during conversion from string: ParseAddr({text:?}): unable to parse IP"))?;
    if let IpAddr::V6(v6) = address {
        if v6.to_ipv4_mapped().is_some() {
            return Err(format!("IPv4-mapped IPv6 address {text:?} is not allowed"));
        }
    }
    Ok(address)
}

fn parse_cidr(text: &str) -> Result<CelCidr, String> {
    let invalid = || {
        format!("network address {text:?} parse error during conversion from string: netip.ParsePrefix({text:?}): bad prefix")
    };
    let (address, length) = text.split_once('/').ok_or_else(invalid)?;
    let address = parse_ip(address).map_err(|_| invalid())?;
    let max = if address.is_ipv4() { 32 } else { 128 };
    let valid_digits = !length.is_empty()
        && length.bytes().all(|b| b.is_ascii_digit())
        && !(length.len() > 1 && length.starts_with('0'));
    let length: u8 = length
        .parse()
        .ok()
        .filter(|length| valid_digits && *length <= max)
        .ok_or_else(invalid)?;
    Ok(CelCidr { address, length })
}

fn text<'a>(function: &str, value: &'a Value) -> Result<&'a str, ExecutionError> {
    match value {
        Value::String(text) => Ok(text),
        _ => Err(no_such_overload(function)),
    }
}

fn ip_of(function: &str, value: &Value) -> Result<IpAddr, ExecutionError> {
    match value {
        Value::Opaque(opaque) => opaque
            .downcast_ref::<CelIp>()
            .map(|ip| ip.0)
            .ok_or_else(|| no_such_overload(function)),
        Value::String(text) => {
            parse_ip(text).map_err(|error| ExecutionError::function_error(function, error))
        }
        _ => Err(no_such_overload(function)),
    }
}

fn cidr_of(function: &str, value: &Value) -> Result<CelCidr, ExecutionError> {
    match value {
        Value::Opaque(opaque) => opaque
            .downcast_ref::<CelCidr>()
            .cloned()
            .ok_or_else(|| no_such_overload(function)),
        Value::String(text) => {
            parse_cidr(text).map_err(|error| ExecutionError::function_error(function, error))
        }
        _ => Err(no_such_overload(function)),
    }
}

fn to_ip(args: &[Value]) -> Result<Value, ExecutionError> {
    let [input] = arguments(args)?;
    let address = parse_ip(text("ip", input)?)
        .map_err(|error| ExecutionError::function_error("ip", error))?;
    Ok(Value::Opaque(Arc::new(CelIp(address))))
}

fn is_ip(args: &[Value]) -> Result<Value, ExecutionError> {
    let [input] = arguments(args)?;
    Ok(Value::Bool(parse_ip(text("isIP", input)?).is_ok()))
}

/// Whether the string is the address as Go's `netip.Addr.String` writes it.
fn is_canonical(args: &[Value]) -> Result<Value, ExecutionError> {
    let [input] = arguments(args)?;
    let input = text("ip.isCanonical", input)?;
    let address =
        parse_ip(input).map_err(|error| ExecutionError::function_error("ip.isCanonical", error))?;
    Ok(Value::Bool(address.to_string() == input))
}

fn ip_string(args: &[Value]) -> Result<Value, ExecutionError> {
    let [ip] = arguments(args)?;
    Ok(Value::String(Arc::new(ip_of("string", ip)?.to_string())))
}

fn family(args: &[Value]) -> Result<Value, ExecutionError> {
    let [ip] = arguments(args)?;
    Ok(Value::Int(if ip_of("family", ip)?.is_ipv4() {
        4
    } else {
        6
    }))
}

fn predicate(
    function: &str,
    args: &[Value],
    test: fn(IpAddr) -> bool,
) -> Result<Value, ExecutionError> {
    let [ip] = arguments(args)?;
    Ok(Value::Bool(test(ip_of(function, ip)?)))
}

fn is_unspecified(args: &[Value]) -> Result<Value, ExecutionError> {
    predicate("isUnspecified", args, |ip| ip.is_unspecified())
}

fn is_loopback(args: &[Value]) -> Result<Value, ExecutionError> {
    predicate("isLoopback", args, |ip| ip.is_loopback())
}

/// Go's `IsLinkLocalMulticast`: 224.0.0.0/24, ff02::/16.
fn is_link_local_multicast(args: &[Value]) -> Result<Value, ExecutionError> {
    predicate("isLinkLocalMulticast", args, |ip| match ip {
        IpAddr::V4(v4) => v4.octets()[..3] == [224, 0, 0],
        IpAddr::V6(v6) => v6.segments()[0] == 0xff02,
    })
}

/// Go's `IsLinkLocalUnicast`: 169.254.0.0/16, fe80::/10.
fn is_link_local_unicast(args: &[Value]) -> Result<Value, ExecutionError> {
    predicate("isLinkLocalUnicast", args, |ip| match ip {
        IpAddr::V4(v4) => v4.octets()[..2] == [169, 254],
        IpAddr::V6(v6) => v6.segments()[0] & 0xffc0 == 0xfe80,
    })
}

/// Go's `IsGlobalUnicast`: not unspecified, loopback, multicast,
/// link-local or the IPv4 broadcast address.
fn is_global_unicast(args: &[Value]) -> Result<Value, ExecutionError> {
    predicate("isGlobalUnicast", args, |ip| match ip {
        IpAddr::V4(v4) => {
            !(v4.is_unspecified()
                || v4.is_loopback()
                || v4.is_multicast()
                || v4.is_broadcast()
                || v4.octets()[..2] == [169, 254])
        }
        IpAddr::V6(v6) => {
            !(v6.is_unspecified()
                || v6.is_loopback()
                || v6.is_multicast()
                || v6.segments()[0] & 0xffc0 == 0xfe80)
        }
    })
}

fn to_cidr(args: &[Value]) -> Result<Value, ExecutionError> {
    let [input] = arguments(args)?;
    let cidr = parse_cidr(text("cidr", input)?)
        .map_err(|error| ExecutionError::function_error("cidr", error))?;
    Ok(Value::Opaque(Arc::new(cidr)))
}

fn is_cidr(args: &[Value]) -> Result<Value, ExecutionError> {
    let [input] = arguments(args)?;
    Ok(Value::Bool(parse_cidr(text("isCIDR", input)?).is_ok()))
}

fn cidr_string(args: &[Value]) -> Result<Value, ExecutionError> {
    let [cidr] = arguments(args)?;
    let cidr = cidr_of("string", cidr)?;
    Ok(Value::String(Arc::new(format!(
        "{}/{}",
        cidr.address, cidr.length
    ))))
}

/// The address with the bits past the prefix cleared.
fn masked_address(cidr: &CelCidr) -> IpAddr {
    match cidr.address {
        IpAddr::V4(v4) => {
            let mask = u32::MAX
                .checked_shl(32 - u32::from(cidr.length))
                .unwrap_or(0);
            IpAddr::V4((u32::from(v4) & mask).into())
        }
        IpAddr::V6(v6) => {
            let mask = u128::MAX
                .checked_shl(128 - u32::from(cidr.length))
                .unwrap_or(0);
            IpAddr::V6((u128::from(v6) & mask).into())
        }
    }
}

fn contains(cidr: &CelCidr, ip: IpAddr) -> bool {
    let inner = CelCidr {
        address: ip,
        length: cidr.length,
    };
    ip.is_ipv4() == cidr.address.is_ipv4() && masked_address(&inner) == masked_address(cidr)
}

fn contains_ip(args: &[Value]) -> Result<Value, ExecutionError> {
    let [cidr, ip] = arguments(args)?;
    Ok(Value::Bool(contains(
        &cidr_of("containsIP", cidr)?,
        ip_of("containsIP", ip)?,
    )))
}

fn contains_cidr(args: &[Value]) -> Result<Value, ExecutionError> {
    let [outer, inner] = arguments(args)?;
    let (outer, inner) = (
        cidr_of("containsCIDR", outer)?,
        cidr_of("containsCIDR", inner)?,
    );
    Ok(Value::Bool(
        inner.length >= outer.length && contains(&outer, inner.address),
    ))
}

fn cidr_ip(args: &[Value]) -> Result<Value, ExecutionError> {
    let [cidr] = arguments(args)?;
    Ok(Value::Opaque(Arc::new(CelIp(cidr_of("ip", cidr)?.address))))
}

fn masked(args: &[Value]) -> Result<Value, ExecutionError> {
    let [cidr] = arguments(args)?;
    let cidr = cidr_of("masked", cidr)?;
    Ok(Value::Opaque(Arc::new(CelCidr {
        address: masked_address(&cidr),
        length: cidr.length,
    })))
}

fn prefix_length(args: &[Value]) -> Result<Value, ExecutionError> {
    let [cidr] = arguments(args)?;
    Ok(Value::Int(i64::from(cidr_of("prefixLength", cidr)?.length)))
}

#[cfg(test)]
mod tests {
    use super::super::eval;
    use cel::Value;

    /// Cases of kube's `library/ip_test.go` and `cidr_test.go` this port
    /// covers.
    #[test]
    fn kubes_ip_and_cidr_functions() {
        let truths = [
            "isIP('192.168.0.1')",
            "isIP('2001:db8::68')",
            "!isIP('192.168.0.1.0')",
            "!isIP('192.168.0.01')",
            "!isIP('::ffff:192.168.0.1')",
            "!isIP('fe80::1%eth0')",
            "ip('192.168.0.1').family() == 4",
            "ip('2001:db8::68').family() == 6",
            "ip('127.0.0.1').isLoopback()",
            "ip('::1').isLoopback()",
            "ip('0.0.0.0').isUnspecified()",
            "ip('224.0.0.1').isLinkLocalMulticast()",
            "ip('ff02::1').isLinkLocalMulticast()",
            "ip('169.254.169.254').isLinkLocalUnicast()",
            "ip('fe80::1').isLinkLocalUnicast()",
            "ip('192.168.0.1').isGlobalUnicast()",
            "!ip('255.255.255.255').isGlobalUnicast()",
            "ip.isCanonical('2001:db8::68')",
            "!ip.isCanonical('2001:DB8::68')",
            "string(ip('2001:db8:0::68')) == '2001:db8::68'",
            "ip('192.168.0.1') == ip('192.168.0.1')",
            "ip('192.168.0.1') != ip('192.168.0.2')",
            "isCIDR('192.168.0.0/24')",
            "!isCIDR('192.168.0.0/33')",
            "!isCIDR('192.168.0.0')",
            "cidr('192.168.0.0/24').containsIP(ip('192.168.0.1'))",
            "cidr('192.168.0.0/24').containsIP('192.168.0.255')",
            "!cidr('192.168.0.0/24').containsIP('192.168.1.1')",
            "!cidr('192.168.0.0/24').containsIP('::1')",
            "cidr('192.168.0.0/24').containsCIDR(cidr('192.168.0.0/25'))",
            "!cidr('192.168.0.0/24').containsCIDR('192.168.0.0/23')",
            "cidr('2001:db8::/32').containsIP('2001:db8::68')",
            "cidr('192.168.0.1/24').prefixLength() == 24",
            "cidr('192.168.0.1/24').ip() == ip('192.168.0.1')",
            "string(cidr('192.168.0.1/24').masked()) == '192.168.0.0/24'",
            "cidr('192.168.0.0/24') == cidr('192.168.0.0/24')",
        ];
        for expression in truths {
            assert_eq!(eval(expression, &[]), Ok(Value::Bool(true)), "{expression}");
        }
    }

    #[test]
    fn malformed_addresses_are_errors() {
        for expression in ["ip('1.2.3')", "cidr('1.2.3.4/40')", "ip('::ffff:1.2.3.4')"] {
            assert!(eval(expression, &[]).is_err(), "{expression}");
        }
    }
}
