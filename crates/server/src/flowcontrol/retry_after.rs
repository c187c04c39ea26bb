//! The `Retry-After` of a rejected request, per priority level, as kube's
//! `staging/src/k8s.io/apiserver/pkg/util/flowcontrol/dropped_requests_tracker.go`:
//! 1 second at first, doubled (up to 32) while a level keeps dropping at
//! least that many requests per `Retry-After` period, lowered by one when
//! it drops a quarter of that or fewer.

use std::collections::VecDeque;
use std::sync::Mutex;

/// `maxRetryAfter`.
const MAX_RETRY_AFTER: i64 = 32;

#[derive(Debug)]
struct State {
    retry_after: i64,
    last_update: i64,
    /// Drops per second (unix second, count), the last `MAX_RETRY_AFTER` seconds.
    drops: VecDeque<(i64, i64)>,
}

#[derive(Debug)]
pub struct RetryAfter {
    state: Mutex<State>,
}

impl Default for RetryAfter {
    fn default() -> Self {
        RetryAfter {
            state: Mutex::new(State {
                retry_after: 1,
                last_update: 0,
                drops: VecDeque::new(),
            }),
        }
    }
}

fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| elapsed.as_secs() as i64)
        .unwrap_or(0)
}

impl RetryAfter {
    /// `RecordDroppedRequest`, then `GetRetryAfter`: the header's seconds.
    pub fn dropped(&self) -> i64 {
        self.dropped_at(unix_now())
    }

    fn dropped_at(&self, now: i64) -> i64 {
        let mut state = self
            .state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        match state.drops.back_mut() {
            Some((second, count)) if *second == now => *count += 1,
            _ => state.drops.push_back((now, 1)),
        }
        while state
            .drops
            .front()
            .is_some_and(|(second, _)| now - second >= MAX_RETRY_AFTER)
        {
            state.drops.pop_front();
        }
        // `updateRetryAfterIfNeededLocked`.
        let mut retry_after = state.retry_after;
        if state.last_update == 0 {
            state.last_update = now;
        }
        let dropped: i64 = state
            .drops
            .iter()
            .filter(|(second, _)| now - second < retry_after)
            .map(|(_, count)| count)
            .sum();
        if now - state.last_update >= retry_after {
            if dropped >= retry_after && retry_after <= MAX_RETRY_AFTER / 2 {
                retry_after *= 2;
            } else if dropped <= retry_after / 4 && retry_after > 1 {
                retry_after -= 1;
            }
            state.last_update = now;
            state.retry_after = retry_after;
        }
        retry_after
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_doubles_under_sustained_drops_and_decays() {
        let tracker = RetryAfter::default();
        assert_eq!(tracker.dropped_at(1000), 1);
        assert_eq!(tracker.dropped_at(1000), 1);
        // A second later, two drops in the last period: doubled.
        assert_eq!(tracker.dropped_at(1001), 2);
        assert_eq!(tracker.dropped_at(1002), 2);
        assert_eq!(tracker.dropped_at(1003), 4);
        // Quiet for a while: one drop in the period lowers it by one.
        assert_eq!(tracker.dropped_at(1010), 3);
    }
}
