//! `--max-requests-inflight` and `--max-mutating-requests-inflight`, as
//! kube's `WithMaxInFlightLimit` (`server/filters/maxinflight.go`): a
//! request that is not long-running takes a seat of its kind (mutating:
//! any verb but `get`, `list` and `watch`) for as long as it is served; with
//! every seat taken it is refused with `Retry-After: 1` and Go's
//! `http.Error` 429, unless its user is in `system:masters`. A limit of 0
//! turns that kind's limit off.
//!
//! kube-apiserver applies these limits when API Priority and Fairness is off
//! (`--enable-priority-and-fairness=false`); with it on (the default), their
//! sum is APF's seats (`crate::flowcontrol`), and so it is here.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// kube-apiserver's `--max-requests-inflight` default.
pub const DEFAULT_MAX_REQUESTS_INFLIGHT: usize = 400;
/// kube-apiserver's `--max-mutating-requests-inflight` default.
pub const DEFAULT_MAX_MUTATING_REQUESTS_INFLIGHT: usize = 200;

/// `user.SystemPrivilegedGroup`: never refused ("a super-admin or a loopback
/// connection").
const SYSTEM_MASTERS: &str = "system:masters";

/// One kind's seats.
#[derive(Debug)]
struct Seats {
    limit: usize,
    taken: Arc<AtomicUsize>,
}

impl Seats {
    fn new(limit: usize) -> Option<Seats> {
        (limit > 0).then(|| Seats {
            limit,
            taken: Arc::new(AtomicUsize::new(0)),
        })
    }

    /// A seat, when one is free (`c <- true` in a `select` with a `default`).
    fn try_take(&self) -> Option<InFlightSeat> {
        self.taken
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |taken| {
                (taken < self.limit).then_some(taken + 1)
            })
            .ok()
            .map(|_| InFlightSeat {
                taken: self.taken.clone(),
            })
    }
}

/// The server's two in-flight limits.
#[derive(Debug)]
pub struct MaxInFlight {
    read_only: Option<Seats>,
    mutating: Option<Seats>,
}

impl Default for MaxInFlight {
    fn default() -> Self {
        MaxInFlight::new(
            DEFAULT_MAX_REQUESTS_INFLIGHT,
            DEFAULT_MAX_MUTATING_REQUESTS_INFLIGHT,
        )
    }
}

/// A seat held while a request is served; dropping it frees the seat.
#[derive(Debug)]
pub struct InFlightSeat {
    taken: Arc<AtomicUsize>,
}

impl Drop for InFlightSeat {
    fn drop(&mut self) {
        self.taken.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Whether a verb counts against `--max-mutating-requests-inflight`
/// (`nonMutatingRequestVerbs`: get, list, watch).
pub fn is_mutating(verb: &str) -> bool {
    !matches!(verb, "get" | "list" | "watch")
}

impl MaxInFlight {
    /// `non_mutating` and `mutating` seats; 0 means no limit for that kind.
    pub fn new(non_mutating: usize, mutating: usize) -> MaxInFlight {
        MaxInFlight {
            read_only: Seats::new(non_mutating),
            mutating: Seats::new(mutating),
        }
    }

    /// The seat of a request with this verb, `None` when it needs none
    /// (long-running, no limit, or `system:masters` with every seat taken);
    /// the 429 when every seat is taken.
    pub fn admit(
        &self,
        verb: &str,
        long_running: bool,
        groups: &[String],
    ) -> Result<Option<InFlightSeat>, TooManyRequests> {
        if long_running {
            return Ok(None);
        }
        let seats = if is_mutating(verb) {
            &self.mutating
        } else {
            &self.read_only
        };
        let Some(seats) = seats else {
            return Ok(None);
        };
        if let Some(seat) = seats.try_take() {
            return Ok(Some(seat));
        }
        if groups.iter().any(|group| group == SYSTEM_MASTERS) {
            return Ok(None);
        }
        tracing::debug!(verb, limit = seats.limit, "too many requests in flight");
        Err(TooManyRequests)
    }
}

/// Every seat of the request's kind is taken: kube's `tooManyRequests`
/// answer (`Api::admit` writes it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooManyRequests;

impl TooManyRequests {
    /// `Retry-After`'s value (`retryAfter`).
    pub const RETRY_AFTER: &'static str = "1";
    /// Go's `http.Error` body: the message and a newline.
    pub const BODY: &'static str = "Too many requests, please try again later.\n";
}

#[cfg(test)]
mod tests {
    use super::*;

    fn groups(names: &[&str]) -> Vec<String> {
        names.iter().map(|name| (*name).to_string()).collect()
    }

    #[test]
    fn seats_are_per_kind_and_freed_when_dropped() {
        let limits = MaxInFlight::new(1, 1);
        let user = groups(&["system:authenticated"]);
        let read = limits.admit("get", false, &user).unwrap().unwrap();
        let refused = limits.admit("list", false, &user).unwrap_err();
        assert_eq!(refused, TooManyRequests);
        // The mutating kind has its own seat.
        let write = limits.admit("create", false, &user).unwrap().unwrap();
        assert!(limits.admit("patch", false, &user).is_err());
        drop(read);
        drop(write);
        assert!(limits.admit("list", false, &user).unwrap().is_some());
        assert!(limits.admit("delete", false, &user).unwrap().is_some());
    }

    #[test]
    fn long_running_requests_and_system_masters_are_never_refused() {
        let limits = MaxInFlight::new(1, 1);
        let user = groups(&["system:authenticated"]);
        let _held = limits.admit("get", false, &user).unwrap().unwrap();
        assert!(limits.admit("watch", true, &user).unwrap().is_none());
        let masters = groups(&["system:masters", "system:authenticated"]);
        assert!(limits.admit("get", false, &masters).unwrap().is_none());
    }

    #[test]
    fn zero_means_no_limit() {
        let limits = MaxInFlight::new(0, 0);
        let user = groups(&[]);
        let held: Vec<_> = (0..1000)
            .map(|_| limits.admit("get", false, &user).unwrap())
            .collect();
        assert!(held.iter().all(Option::is_none));
    }
}
