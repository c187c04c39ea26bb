//! `--service-node-port-range`: `30000-32767` (or `30000+2768`), with kube's
//! low band for requested ports (`portallocator.calculateRangeOffset`).

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortRange {
    pub base: u16,
    pub size: u16,
}

impl Default for PortRange {
    fn default() -> Self {
        PortRange {
            base: 30000,
            size: 2768,
        }
    }
}

impl PortRange {
    /// `utilnet.ParsePortRange`: `low-high`, `low+offset`, or a single port.
    pub fn parse(text: &str) -> Result<PortRange, String> {
        let text = text.trim();
        let invalid = || format!("invalid port range: {text:?}");
        let number = |part: &str| part.trim().parse::<u16>().map_err(|_| invalid());
        let (low, high) = if let Some((low, high)) = text.split_once('-') {
            (number(low)?, number(high)?)
        } else if let Some((low, offset)) = text.split_once('+') {
            let low = number(low)?;
            (low, low.checked_add(number(offset)?).ok_or_else(invalid)?)
        } else {
            let port = number(text)?;
            (port, port)
        };
        if high < low {
            return Err(invalid());
        }
        Ok(PortRange {
            base: low,
            size: high - low + 1,
        })
    }

    pub fn contains(&self, port: u16) -> bool {
        port >= self.base && u32::from(port) < u32::from(self.base) + u32::from(self.size)
    }

    pub fn port(&self, index: u64) -> u16 {
        self.base.wrapping_add(index as u16)
    }

    pub fn static_band(&self) -> u64 {
        super::ip_range::band_offset(u64::from(self.size), 16, 128, 32)
    }
}

impl std::fmt::Display for PortRange {
    /// `PortRange.String()`: `30000-32767`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}-{}",
            self.base,
            u32::from(self.base) + u32::from(self.size) - 1
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_ranges_parse_as_kube() {
        assert_eq!(
            PortRange::parse("30000-32767").unwrap(),
            PortRange::default()
        );
        assert_eq!(
            PortRange::parse("30000+2767").unwrap(),
            PortRange::default()
        );
        assert_eq!(PortRange::default().to_string(), "30000-32767");
        assert_eq!(PortRange::default().static_band(), 86);
        assert!(PortRange::parse("2-1").is_err());
        assert!(PortRange::default().contains(32767));
        assert!(!PortRange::default().contains(32768));
    }
}
