//! Where the CPU went during a measured window, from /proc: this process
//! (the client), the started server, and everything else on the machine,
//! in cores (1.0 = one core busy for the whole window). On a shared
//! machine `other_cores` says how much of a run's CPU was taken by
//! something else. Linux only; elsewhere the samples are `None`.

use std::time::Instant;

use serde::Serialize;

/// USER_HZ: the unit of /proc/stat and /proc/PID/stat times. 100 on every
/// Linux architecture that matters.
const TICKS_PER_SECOND: f64 = 100.0;

#[derive(Debug, Clone, Copy)]
pub struct Sample {
    at: Instant,
    busy: u64,
    own: u64,
    server: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CpuUsage {
    /// This process: the load generator (and the ceiling server when it
    /// runs in-process).
    pub client_cores: f64,
    /// The started server, when this tool started it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_cores: Option<f64>,
    /// Everything else that ran meanwhile (includes an external server).
    pub other_cores: f64,
}

/// Busy ticks of all CPUs from /proc/stat text: everything but idle and
/// iowait.
pub fn parse_proc_stat(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let fields: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|f| f.parse().ok())
        .collect();
    if fields.len() < 4 {
        return None;
    }
    // user nice system idle iowait irq softirq steal (guest counted in user)
    let total: u64 = fields.iter().take(8).sum();
    let idle = fields[3] + fields.get(4).copied().unwrap_or(0);
    Some(total - idle)
}

/// utime + stime from /proc/PID/stat text.
pub fn parse_pid_stat(text: &str) -> Option<u64> {
    // The command name may hold spaces and parentheses: fields restart
    // after the last ')'. utime and stime are fields 14 and 15, i.e. the
    // 12th and 13th after the state (field 3).
    let rest = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some(utime + stime)
}

fn pid_ticks(pid: &str) -> Option<u64> {
    parse_pid_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// A sample now, with `server_pid`'s time when given.
pub fn sample(server_pid: Option<u32>) -> Option<Sample> {
    let busy = parse_proc_stat(&std::fs::read_to_string("/proc/stat").ok()?)?;
    Some(Sample {
        at: Instant::now(),
        busy,
        own: pid_ticks("self")?,
        server: server_pid.and_then(|pid| pid_ticks(&pid.to_string())),
    })
}

/// CPU seconds the server used between two samples (user + system), when
/// both samples have its time.
pub fn server_seconds(before: &Sample, after: &Sample) -> Option<f64> {
    let ticks = after.server?.checked_sub(before.server?)?;
    Some(ticks as f64 / TICKS_PER_SECOND)
}

/// Seconds between two samples.
pub fn seconds_between(before: &Sample, after: &Sample) -> f64 {
    after.at.duration_since(before.at).as_secs_f64()
}

/// Usage between two samples.
pub fn usage(before: &Sample, after: &Sample) -> Option<CpuUsage> {
    let secs = after.at.duration_since(before.at).as_secs_f64();
    if secs <= 0.0 {
        return None;
    }
    let cores = |ticks: u64| ((ticks as f64 / TICKS_PER_SECOND / secs) * 100.0).round() / 100.0;
    let busy = after.busy.saturating_sub(before.busy);
    let own = after.own.saturating_sub(before.own);
    let server = match (before.server, after.server) {
        (Some(a), Some(b)) => Some(b.saturating_sub(a)),
        _ => None,
    };
    let other = busy.saturating_sub(own + server.unwrap_or(0));
    Some(CpuUsage {
        client_cores: cores(own),
        server_cores: server.map(cores),
        other_cores: cores(other),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn parses_proc_stat() {
        let text = "cpu  100 5 50 1000 20 1 2 3 0 0\ncpu0 1 2 3 4\n";
        assert_eq!(parse_proc_stat(text), Some(100 + 5 + 50 + 1 + 2 + 3));
        assert_eq!(parse_proc_stat("intr 1\n"), None);
    }

    #[test]
    fn parses_pid_stat_with_odd_names() {
        let text = "1234 (fer (ro) kube) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 75 0 0 20 0 3 0";
        assert_eq!(parse_pid_stat(text), Some(325));
        assert_eq!(parse_pid_stat("garbage"), None);
    }

    #[test]
    fn usage_in_cores() {
        let t0 = Instant::now();
        let before = Sample {
            at: t0,
            busy: 1000,
            own: 100,
            server: Some(50),
        };
        let after = Sample {
            at: t0 + Duration::from_secs(2),
            busy: 1000 + 360,
            own: 100 + 160,
            server: Some(50 + 180),
        };
        let u = usage(&before, &after).expect("usage");
        assert_eq!(u.client_cores, 0.8);
        assert_eq!(u.server_cores, Some(0.9));
        assert_eq!(u.other_cores, 0.1);
        assert_eq!(server_seconds(&before, &after), Some(1.8));
        assert_eq!(seconds_between(&before, &after), 2.0);
        if cfg!(target_os = "linux") {
            assert!(sample(Some(std::process::id())).is_some());
        }
    }
}
