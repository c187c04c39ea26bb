//! One limited priority level's seats and queues, after kube's
//! `staging/src/k8s.io/apiserver/pkg/util/flowcontrol/fairqueuing/queueset/queueset.go`:
//! a request is dealt a hand of queues by its flow's hash (shuffle
//! sharding) and joins the shortest of them (waiting plus executing), or is
//! rejected when that queue already holds `queueLengthLimit` requests;
//! whenever a seat is free the next queue in turn that has a waiting
//! request dispatches its oldest one. A `Reject` level has no queues: a
//! request runs when a seat is free and is rejected otherwise.
//!
//! Differences from kube, on purpose: every request takes one seat (kube's
//! work estimator gives lists and mutating requests more seats and extra
//! latency), and queues are served round-robin, which is kube's fair
//! queuing when every request has the same cost; kube orders them by
//! virtual finish time, which also accounts for how long requests ran.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use super::shuffle_shard;

/// How a level queues (`QueuingConfiguration`; `queues` 0: `Reject`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueuingConfig {
    /// Seats: the level's concurrency limit (at least 1).
    pub concurrency_limit: usize,
    pub queues: usize,
    pub hand_size: usize,
    pub queue_length_limit: usize,
}

#[derive(Debug, Default)]
struct Queue {
    /// Waiting requests, oldest first: their ids and how to wake them.
    waiting: VecDeque<(u64, tokio::sync::oneshot::Sender<()>)>,
    executing: usize,
}

#[derive(Debug)]
struct State {
    config: QueuingConfig,
    executing: usize,
    /// Never shrinks: a seat names its queue by index.
    queues: Vec<Queue>,
    /// The queue that dispatched last (`robinIndex`).
    robin: usize,
    next_id: u64,
    /// Requests waiting in all queues (nothing to dispatch when 0).
    waiting: usize,
}

/// The seats and queues of one priority level, shared by the requests.
#[derive(Debug)]
pub struct QueueSet {
    state: Mutex<State>,
}

/// A seat: the request runs while it is held; dropping it dispatches the
/// next waiting request.
#[derive(Debug)]
pub struct Seat {
    set: Arc<QueueSet>,
    queue: Option<usize>,
}

impl Drop for Seat {
    fn drop(&mut self) {
        self.set.release(self.queue);
    }
}

/// A request in a queue, until it is dispatched or gives up.
#[derive(Debug)]
pub struct Waiting {
    set: Arc<QueueSet>,
    id: u64,
    queue: usize,
    dispatched: Option<tokio::sync::oneshot::Receiver<()>>,
}

/// What happened to a request that arrived.
#[derive(Debug)]
pub enum Arrival {
    Dispatched(Seat),
    Queued(Waiting),
    /// No seat and no room (`Reject` level, or the chosen queue is full).
    Rejected,
}

impl QueueSet {
    pub fn new(config: QueuingConfig) -> Arc<QueueSet> {
        let set = Arc::new(QueueSet {
            state: Mutex::new(State {
                config,
                executing: 0,
                queues: Vec::new(),
                robin: 0,
                next_id: 0,
                waiting: 0,
            }),
        });
        set.reconfigure(config);
        set
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// A new configuration (`BeginConfigChange`): requests already waiting
    /// or running keep their places.
    pub fn reconfigure(&self, config: QueuingConfig) {
        let mut state = self.lock();
        state.config = config;
        while state.queues.len() < config.queues {
            state.queues.push(Queue::default());
        }
        dispatch_as_much_as_possible(&mut state);
    }

    pub fn config(&self) -> QueuingConfig {
        self.lock().config
    }

    /// Requests running and waiting.
    pub fn counts(&self) -> (usize, usize) {
        let state = self.lock();
        let waiting = state.queues.iter().map(|queue| queue.waiting.len()).sum();
        (state.executing, waiting)
    }

    /// `StartRequest` for a request of the flow with `hash`.
    pub fn arrive(self: &Arc<Self>, hash: u64) -> Arrival {
        let mut state = self.lock();
        let config = state.config;
        if config.queues == 0 {
            if state.executing < config.concurrency_limit {
                state.executing += 1;
                return Arrival::Dispatched(Seat {
                    set: self.clone(),
                    queue: None,
                });
            }
            return Arrival::Rejected;
        }
        // `shuffleShardLocked`: the least loaded queue of the hand.
        let mut best: Option<(usize, usize)> = None;
        let deck = config.queues;
        shuffle_shard::deal(hash, deck, config.hand_size.max(1), |card| {
            let queue = &state.queues[card];
            let load = queue.waiting.len() + queue.executing;
            if best.is_none_or(|(_, least)| load < least) {
                best = Some((card, load));
            }
        });
        let Some((queue_index, _)) = best else {
            return Arrival::Rejected;
        };
        if state.queues[queue_index].waiting.len() >= config.queue_length_limit {
            return Arrival::Rejected;
        }
        // Nobody waits and a seat is free: dispatched at once, without a
        // channel (the common case, kept cheap).
        if state.waiting == 0 && state.executing < config.concurrency_limit {
            state.executing += 1;
            state.queues[queue_index].executing += 1;
            return Arrival::Dispatched(Seat {
                set: self.clone(),
                queue: Some(queue_index),
            });
        }
        let id = state.next_id;
        state.next_id += 1;
        let (wake, dispatched) = tokio::sync::oneshot::channel();
        state.queues[queue_index].waiting.push_back((id, wake));
        state.waiting += 1;
        dispatch_as_much_as_possible(&mut state);
        // Dispatched at once when a seat was free and nobody waited before it.
        let still_waiting = state.queues[queue_index]
            .waiting
            .iter()
            .any(|(waiting, _)| *waiting == id);
        drop(state);
        let waiting = Waiting {
            set: self.clone(),
            id,
            queue: queue_index,
            dispatched: Some(dispatched),
        };
        if still_waiting {
            Arrival::Queued(waiting)
        } else {
            Arrival::Dispatched(waiting.into_seat())
        }
    }

    fn release(&self, queue: Option<usize>) {
        let mut state = self.lock();
        state.executing = state.executing.saturating_sub(1);
        if let Some(queue) = queue.and_then(|index| state.queues.get_mut(index)) {
            queue.executing = queue.executing.saturating_sub(1);
        }
        dispatch_as_much_as_possible(&mut state);
    }
}

/// `dispatchAsMuchAsPossibleLocked`: while a seat is free, the next queue
/// after the last one served that has a waiting request dispatches its oldest.
fn dispatch_as_much_as_possible(state: &mut State) {
    while state.waiting > 0 && state.executing < state.config.concurrency_limit {
        let count = state.queues.len();
        let Some(index) = (1..=count)
            .map(|step| (state.robin + step) % count)
            .find(|index| !state.queues[*index].waiting.is_empty())
        else {
            return;
        };
        let Some((_, wake)) = state.queues[index].waiting.pop_front() else {
            return;
        };
        state.waiting -= 1;
        // A request that stopped waiting removes itself under this lock, so
        // the receiver is still there.
        if wake.send(()).is_ok() {
            state.executing += 1;
            state.queues[index].executing += 1;
            state.robin = index;
        }
    }
}

impl Waiting {
    /// Waits for a seat until `until`; `None`: it timed out in its queue.
    pub async fn wait(mut self, until: Instant) -> Option<Seat> {
        let dispatched = self.dispatched.as_mut()?;
        tokio::select! {
            biased;
            woken = dispatched => match woken {
                Ok(()) => Some(self.into_seat()),
                Err(_) => None,
            },
            () = tokio::time::sleep_until(until.into()) => {
                // Dispatched meanwhile (no longer in its queue): the seat is ours.
                if self.leave_queue() {
                    None
                } else {
                    Some(self.into_seat())
                }
            }
        }
    }

    /// Removes this request from its queue; false when it was dispatched.
    fn leave_queue(&mut self) -> bool {
        self.dispatched = None;
        let mut state = self.set.lock();
        let Some(queue) = state.queues.get_mut(self.queue) else {
            return false;
        };
        let before = queue.waiting.len();
        queue.waiting.retain(|(id, _)| *id != self.id);
        let left = before != queue.waiting.len();
        if left {
            state.waiting -= 1;
        }
        left
    }

    fn into_seat(mut self) -> Seat {
        self.dispatched = None;
        Seat {
            set: self.set.clone(),
            queue: Some(self.queue),
        }
    }
}

impl Drop for Waiting {
    /// A request that went away while queued (its client left): out of its
    /// queue, or its seat back if it had just been dispatched.
    fn drop(&mut self) {
        if self.dispatched.is_some() && !self.leave_queue() {
            self.set.release(Some(self.queue));
        }
    }
}

#[cfg(test)]
mod tests {
    use futures::FutureExt;

    use super::*;

    fn config(
        concurrency_limit: usize,
        queues: usize,
        hand_size: usize,
        queue_length_limit: usize,
    ) -> QueuingConfig {
        QueuingConfig {
            concurrency_limit,
            queues,
            hand_size,
            queue_length_limit,
        }
    }

    /// A hash whose one-card hand is `queue` (deck of `deck`).
    fn hash_for(queue: usize) -> u64 {
        queue as u64
    }

    #[tokio::test]
    async fn flows_in_different_queues_take_turns() {
        let set = QueueSet::new(config(1, 4, 1, 10));
        let Arrival::Dispatched(running) = set.arrive(hash_for(0)) else {
            panic!("the first request runs at once");
        };
        // Flow A queues four requests, then flow B two.
        let mut queued: Vec<(char, Waiting)> = Vec::new();
        for _ in 0..4 {
            let Arrival::Queued(waiting) = set.arrive(hash_for(1)) else {
                panic!("queued")
            };
            queued.push(('A', waiting));
        }
        for _ in 0..2 {
            let Arrival::Queued(waiting) = set.arrive(hash_for(2)) else {
                panic!("queued")
            };
            queued.push(('B', waiting));
        }
        assert_eq!(set.counts(), (1, 6));
        let far = Instant::now() + std::time::Duration::from_secs(3600);
        let mut pending: Vec<(char, _)> = queued
            .into_iter()
            .map(|(flow, waiting)| (flow, Box::pin(waiting.wait(far))))
            .collect();
        let mut order = String::new();
        let mut seat = running;
        while !pending.is_empty() {
            // The running request ends: exactly one waiting request gets its seat.
            drop(seat);
            let mut ready = Vec::new();
            for (index, (_, future)) in pending.iter_mut().enumerate() {
                if let Some(got) = future.as_mut().now_or_never() {
                    ready.push((index, got));
                }
            }
            assert_eq!(ready.len(), 1, "one seat: one request dispatched at a time");
            let (index, got) = ready.remove(0);
            seat = got.expect("dispatched, not timed out");
            order.push(pending.remove(index).0);
        }
        drop(seat);
        assert_eq!(set.counts(), (0, 0));
        assert_eq!(order, "ABABAA");
    }

    #[tokio::test]
    async fn a_full_queue_and_a_reject_level_refuse() {
        let set = QueueSet::new(config(1, 1, 1, 1));
        let Arrival::Dispatched(_running) = set.arrive(7) else {
            panic!("runs")
        };
        let Arrival::Queued(_waiting) = set.arrive(7) else {
            panic!("queued")
        };
        assert!(matches!(set.arrive(7), Arrival::Rejected));
        let reject = QueueSet::new(config(2, 0, 0, 0));
        let Arrival::Dispatched(_one) = reject.arrive(0) else {
            panic!("runs")
        };
        let Arrival::Dispatched(_two) = reject.arrive(0) else {
            panic!("runs")
        };
        assert!(matches!(reject.arrive(0), Arrival::Rejected));
    }

    #[tokio::test]
    async fn a_request_that_times_out_or_leaves_frees_its_place() {
        let set = QueueSet::new(config(1, 2, 1, 5));
        let Arrival::Dispatched(running) = set.arrive(0) else {
            panic!("runs")
        };
        let Arrival::Queued(late) = set.arrive(1) else {
            panic!("queued")
        };
        assert!(
            late.wait(Instant::now()).await.is_none(),
            "timed out in its queue"
        );
        let Arrival::Queued(gone) = set.arrive(1) else {
            panic!("queued")
        };
        drop(gone);
        assert_eq!(set.counts(), (1, 0));
        let Arrival::Queued(next) = set.arrive(1) else {
            panic!("queued")
        };
        drop(running);
        let seat = next
            .wait(Instant::now() + std::time::Duration::from_secs(3600))
            .await;
        assert!(seat.is_some());
        assert_eq!(set.counts(), (1, 0));
        drop(seat);
        assert_eq!(set.counts(), (0, 0));
        // With nobody left waiting, the next request takes a free seat at
        // once, and one arriving while it runs waits.
        let Arrival::Dispatched(again) = set.arrive(1) else {
            panic!("a free seat and no queue: dispatched at once")
        };
        let Arrival::Queued(behind) = set.arrive(0) else {
            panic!("the one seat is taken: queued")
        };
        assert_eq!(set.counts(), (1, 1));
        drop(again);
        assert_eq!(set.counts(), (1, 0), "the waiting one took the seat");
        drop(behind);
        assert_eq!(set.counts(), (0, 0));
    }
}
