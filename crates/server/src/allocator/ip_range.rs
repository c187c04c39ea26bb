//! `--service-cluster-ip-range`: one CIDR, its usable addresses counted from
//! the first after the network address, and kube's split into a low band for
//! requested IPs and a high band preferred for dynamic ones
//! (`ipallocator.calculateRangeOffset`, ServiceIPStaticSubrange).

use std::net::IpAddr;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IpRange {
    network: IpAddr,
    prefix_len: u8,
    /// Usable addresses: all but the network address (and, for IPv4, the broadcast one).
    size: u64,
}

/// The largest range handled in full; bigger IPv6 ranges use their first 2^20 addresses.
const MAX_SIZE: u64 = 1 << 20;

impl IpRange {
    pub fn parse(cidr: &str) -> Result<IpRange, String> {
        let (address, prefix) = cidr
            .split_once('/')
            .ok_or_else(|| format!("invalid CIDR address: {cidr}"))?;
        let address: IpAddr = address
            .parse()
            .map_err(|_| format!("invalid CIDR address: {cidr}"))?;
        let prefix_len: u8 = prefix
            .parse()
            .map_err(|_| format!("invalid CIDR address: {cidr}"))?;
        let bits = if address.is_ipv4() { 32 } else { 128 };
        if prefix_len > bits {
            return Err(format!("invalid CIDR address: {cidr}"));
        }
        let host_bits = u32::from(bits - prefix_len);
        let total: u128 = if host_bits >= 127 {
            u128::MAX
        } else {
            1u128 << host_bits
        };
        let usable = match address {
            IpAddr::V4(_) => total.saturating_sub(2),
            IpAddr::V6(_) => total.saturating_sub(1),
        };
        if usable == 0 {
            return Err(format!(
                "specified --service-cluster-ip-range {cidr} is too small"
            ));
        }
        let network = mask(address, prefix_len);
        Ok(IpRange {
            network,
            prefix_len,
            size: u64::try_from(usable.min(u128::from(MAX_SIZE))).unwrap_or(MAX_SIZE),
        })
    }

    pub fn size(&self) -> u64 {
        self.size
    }

    pub fn is_ipv4(&self) -> bool {
        self.network.is_ipv4()
    }

    pub fn family(&self) -> &'static str {
        if self.is_ipv4() {
            "IPv4"
        } else {
            "IPv6"
        }
    }

    /// The address at `index` (0 is the first after the network address).
    pub fn address(&self, index: u64) -> IpAddr {
        match self.network {
            IpAddr::V4(network) => {
                IpAddr::V4((u32::from(network).wrapping_add(1 + index as u32)).into())
            }
            IpAddr::V6(network) => {
                IpAddr::V6((u128::from(network).wrapping_add(1 + u128::from(index))).into())
            }
        }
    }

    /// Where `ip` sits in the range.
    pub fn index(&self, ip: IpAddr) -> Lookup {
        if !self.contains(ip) {
            return Lookup::OtherNetwork;
        }
        let offset: u128 = match (self.network, ip) {
            (IpAddr::V4(network), IpAddr::V4(ip)) => u128::from(u32::from(ip) - u32::from(network)),
            (IpAddr::V6(network), IpAddr::V6(ip)) => u128::from(ip) - u128::from(network),
            _ => return Lookup::OtherNetwork,
        };
        if offset == 0 || offset > u128::from(self.size) {
            return Lookup::Reserved;
        }
        Lookup::Index((offset - 1) as u64)
    }

    fn contains(&self, ip: IpAddr) -> bool {
        ip.is_ipv4() == self.network.is_ipv4() && mask(ip, self.prefix_len) == self.network
    }

    /// Size of the low band kept for requested addresses.
    pub fn static_band(&self) -> u64 {
        band_offset(self.size, 16, 256, 16)
    }

    pub fn cidr(&self) -> String {
        format!("{}/{}", self.network, self.prefix_len)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lookup {
    Index(u64),
    /// In the CIDR but not allocatable (network or broadcast address).
    Reserved,
    OtherNetwork,
}

fn mask(address: IpAddr, prefix_len: u8) -> IpAddr {
    match address {
        IpAddr::V4(v4) => {
            let bits = u32::from(v4);
            let mask = if prefix_len == 0 {
                0
            } else {
                u32::MAX << (32 - u32::from(prefix_len))
            };
            IpAddr::V4((bits & mask).into())
        }
        IpAddr::V6(v6) => {
            let bits = u128::from(v6);
            let mask = if prefix_len == 0 {
                0
            } else {
                u128::MAX << (128 - u32::from(prefix_len))
            };
            IpAddr::V6((bits & mask).into())
        }
    }
}

/// `calculateRangeOffset`: size/step clamped to [min, max]; 0 for tiny ranges.
pub fn band_offset(size: u64, min: u64, max: u64, step: u64) -> u64 {
    if size < min {
        return 0;
    }
    (size / step).clamp(min, max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv4_ranges_skip_network_and_broadcast() {
        let range = IpRange::parse("10.0.0.0/24").unwrap();
        assert_eq!(range.size(), 254);
        assert_eq!(range.address(0).to_string(), "10.0.0.1");
        assert_eq!(range.index("10.0.0.1".parse().unwrap()), Lookup::Index(0));
        assert_eq!(range.index("10.0.0.0".parse().unwrap()), Lookup::Reserved);
        assert_eq!(range.index("10.0.0.255".parse().unwrap()), Lookup::Reserved);
        assert_eq!(
            range.index("10.0.1.1".parse().unwrap()),
            Lookup::OtherNetwork
        );
        assert_eq!(range.static_band(), 16);
        assert_eq!(IpRange::parse("10.96.0.0/12").unwrap().static_band(), 256);
        assert_eq!(range.cidr(), "10.0.0.0/24");
    }

    #[test]
    fn ipv6_ranges() {
        let range = IpRange::parse("fd00::/120").unwrap();
        assert_eq!(range.size(), 255);
        assert_eq!(range.address(0).to_string(), "fd00::1");
        assert!(IpRange::parse("10.0.0.0/33").is_err());
        assert!(IpRange::parse("nope").is_err());
    }
}
