//! The `faults` scenario's verdict, from what the writers, the watchers
//! and the final list recorded (no I/O here).
//!
//! Every revision anybody saw (an acknowledged write's answer, a watch
//! event, a list item, a GET) is explained by exactly one write of the
//! writers' histories (`data.v` names it); the same revision must be the
//! same write for everyone. Then:
//! - nothing acknowledged is lost: each object's final state is its last
//!   acknowledged write or a later uncertain one (a deleted object stays
//!   deleted unless an uncertain create followed);
//! - each object's revisions follow its writer's order;
//! - each watcher saw, in every stretch it covered without a 410, every
//!   committed change of its scope in that stretch (no gaps), and no
//!   revision twice or backwards (no duplicates, in order);
//! - nothing seen is unexplained (a write answered 409 being visible, an
//!   ADDED for an update, an event outside the watcher's namespace).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::Serialize;

use super::fault_history::{ObjectKey, Observed, Op, Outcome, Write};
use super::fault_watch::{EventType, WatcherLog};

/// Problems kept as examples; the counts hold them all.
const EXAMPLES: usize = 30;

/// What the check found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Verdict {
    pub acked_writes: u64,
    pub uncertain_writes: u64,
    /// Uncertain writes some revision shows were committed.
    pub uncertain_landed: u64,
    pub failed_writes: u64,
    /// Acknowledged writes missing from the final state.
    pub lost_writes: u64,
    /// Changes a watcher should have seen and did not.
    pub missing_events: u64,
    /// Revisions seen twice or backwards, and objects whose revisions
    /// contradict their writer's order.
    pub out_of_order: u64,
    /// Revisions no write explains, or explained differently by two
    /// observers.
    pub unexplained: u64,
    /// Watchers that never reached the final revision.
    pub watchers_incomplete: u64,
    /// The first problems found.
    pub problems: Vec<String>,
}

impl Verdict {
    pub fn passed(&self) -> bool {
        self.lost_writes == 0
            && self.missing_events == 0
            && self.out_of_order == 0
            && self.unexplained == 0
            && self.watchers_incomplete == 0
    }

    fn problem(&mut self, text: String) {
        if self.problems.len() < EXAMPLES {
            self.problems.push(text);
        }
    }
}

/// Everything recorded in a run.
pub struct Recorded<'a> {
    pub histories: &'a BTreeMap<ObjectKey, Vec<Write>>,
    /// Writers' GETs.
    pub observed: &'a [Observed],
    pub watchers: &'a [WatcherLog],
    /// The final list: object → (resourceVersion, `data.v`).
    pub final_state: &'a BTreeMap<ObjectKey, (u64, String)>,
    /// The final list's resourceVersion.
    pub final_rv: u64,
}

struct Checker<'a> {
    recorded: &'a Recorded<'a>,
    /// Per object, `data.v` → index of the write in its history.
    index: HashMap<&'a ObjectKey, HashMap<&'a str, usize>>,
    /// Revision → (object, write index, who saw it first).
    landed: BTreeMap<u64, (&'a ObjectKey, usize, String)>,
    verdict: Verdict,
}

/// Writes `at - 2 ..= at + 2` of a history, for a problem's text.
fn around(writes: &[Write], at: usize) -> String {
    let from = at.saturating_sub(2);
    writes
        .iter()
        .enumerate()
        .skip(from)
        .take(at + 3 - from)
        .map(|(i, w)| {
            let outcome = match w.outcome {
                Outcome::Acked(Some(rv)) => format!("acknowledged at {rv}"),
                Outcome::Acked(None) => "acknowledged".to_string(),
                Outcome::Uncertain => "uncertain".to_string(),
                Outcome::Failed => "failed".to_string(),
            };
            format!("#{i} {:?} {outcome}", w.op)
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Checks a run.
pub fn check(recorded: &Recorded<'_>) -> Verdict {
    let mut checker = Checker {
        recorded,
        index: HashMap::new(),
        landed: BTreeMap::new(),
        verdict: Verdict::default(),
    };
    for (key, writes) in recorded.histories {
        let entry = checker.index.entry(key).or_default();
        for (i, write) in writes.iter().enumerate() {
            if let Some(content) = &write.content {
                entry.insert(content.as_str(), i);
            }
            match write.outcome {
                Outcome::Acked(_) => checker.verdict.acked_writes += 1,
                Outcome::Uncertain => checker.verdict.uncertain_writes += 1,
                Outcome::Failed => checker.verdict.failed_writes += 1,
            }
        }
    }
    checker.collect_revisions();
    checker.check_order();
    checker.check_final_state();
    checker.check_watchers();
    let landed_uncertain: BTreeSet<(&ObjectKey, usize)> = checker
        .landed
        .values()
        .filter(|(key, i, _)| {
            recorded.histories[*key]
                .get(*i)
                .is_some_and(|w| w.outcome == Outcome::Uncertain)
        })
        .map(|(key, i, _)| (*key, *i))
        .collect();
    checker.verdict.uncertain_landed = landed_uncertain.len() as u64;
    checker.verdict
}

impl<'a> Checker<'a> {
    fn writes(&self, key: &ObjectKey) -> &'a [Write] {
        self.recorded
            .histories
            .get(key)
            .map(Vec::as_slice)
            .unwrap_or_default()
    }

    /// The write whose `data.v` is `content`, unless it failed for certain.
    fn explain(&mut self, key: &ObjectKey, content: &str, who: &str) -> Option<usize> {
        let found = self.index.get(key).and_then(|m| m.get(content)).copied();
        let Some(i) = found else {
            self.verdict.unexplained += 1;
            self.verdict.problem(format!(
                "{who}: {key} with data.v {content:?}, which no write sent"
            ));
            return None;
        };
        if self.writes(key)[i].outcome == Outcome::Failed {
            self.verdict.unexplained += 1;
            self.verdict.problem(format!(
                "{who}: {key} shows {content:?}, whose write was answered with a definite failure"
            ));
            return None;
        }
        Some(i)
    }

    /// The delete that removed the state written by write `after`: the
    /// acknowledged delete before the next acknowledged write, else the
    /// first uncertain one. A writer may send several deletes with the same
    /// precondition (an uncertain one, a GET that still shows the object,
    /// another one): at most one of them can have succeeded, and if one was
    /// acknowledged, it is that one.
    fn delete_after(&self, key: &ObjectKey, after: usize) -> Option<usize> {
        let mut uncertain = None;
        for (j, write) in self.writes(key).iter().enumerate().skip(after + 1) {
            match (write.op, write.outcome) {
                (Op::Delete, Outcome::Acked(_)) => return Some(j),
                (Op::Delete, Outcome::Uncertain) => {
                    uncertain.get_or_insert(j);
                }
                (_, Outcome::Acked(_)) => break,
                _ => {}
            }
        }
        uncertain
    }

    fn land(&mut self, rv: u64, key: &'a ObjectKey, i: usize, who: &str) {
        match self.landed.get(&rv) {
            None => {
                self.landed.insert(rv, (key, i, who.to_string()));
            }
            Some((other_key, other_i, other_who)) => {
                if *other_key != key || *other_i != i {
                    let text = format!(
                        "revision {rv} is write #{i} of {key} for {who} but write #{other_i} of {other_key} for {other_who}"
                    );
                    self.verdict.unexplained += 1;
                    self.verdict.problem(text);
                }
            }
        }
    }

    fn collect_revisions(&mut self) {
        let recorded = self.recorded;
        for (key, writes) in recorded.histories {
            for (i, write) in writes.iter().enumerate() {
                if let (Outcome::Acked(Some(rv)), true) = (write.outcome, write.op != Op::Delete) {
                    self.land(rv, key, i, "an acknowledgement");
                }
            }
        }
        let states = recorded
            .observed
            .iter()
            .map(|(k, rv, c)| ("a writer's GET".to_string(), k, *rv, c))
            .chain(recorded.watchers.iter().flat_map(|w| {
                w.listed
                    .iter()
                    .map(move |(k, rv, c)| (format!("{}'s list", w.name), k, *rv, c))
            }))
            .chain(
                recorded
                    .final_state
                    .iter()
                    .map(|(k, (rv, c))| ("the final list".to_string(), k, *rv, c)),
            );
        for (who, key, rv, content) in states {
            if let Some((key, _)) = recorded.histories.get_key_value(key) {
                if let Some(i) = self.explain(key, content, &who) {
                    self.land(rv, key, i, &who);
                }
            } else {
                self.verdict.unexplained += 1;
                self.verdict
                    .problem(format!("{who}: {key}, which no writer owns"));
            }
        }
        for watcher in recorded.watchers {
            for seen in &watcher.events {
                let Some((key, _)) = recorded.histories.get_key_value(&seen.key) else {
                    self.verdict.unexplained += 1;
                    self.verdict.problem(format!(
                        "{}: an event of {}, which no writer owns",
                        watcher.name, seen.key
                    ));
                    continue;
                };
                if let Some(ns) = &watcher.namespace {
                    if &key.namespace != ns {
                        self.verdict.unexplained += 1;
                        self.verdict.problem(format!(
                            "{}: an event of {key} outside its namespace {ns}",
                            watcher.name
                        ));
                    }
                }
                let who = format!("{}'s {:?} event", watcher.name, seen.kind);
                let Some(i) = self.explain(key, &seen.content, &who) else {
                    continue;
                };
                let op = self.writes(key)[i].op;
                let i = match seen.kind {
                    EventType::Added if op == Op::Create => i,
                    EventType::Modified if matches!(op, Op::Update | Op::Patch) => i,
                    EventType::Deleted => match self.delete_after(key, i) {
                        Some(j) => j,
                        None => {
                            self.verdict.unexplained += 1;
                            self.verdict.problem(format!(
                                "{who} at {} for {key}: no delete follows write #{i}",
                                seen.rv
                            ));
                            continue;
                        }
                    },
                    _ => {
                        self.verdict.unexplained += 1;
                        self.verdict.problem(format!(
                            "{who} at {} for {key} shows write #{i}, a {op:?}",
                            seen.rv
                        ));
                        continue;
                    }
                };
                self.land(seen.rv, key, i, &who);
            }
            for violation in &watcher.order_violations {
                self.verdict.out_of_order += 1;
                self.verdict.problem(violation.clone());
            }
        }
    }

    /// Each object's revisions follow its writer's order.
    fn check_order(&mut self) {
        let mut last: HashMap<&ObjectKey, (u64, usize)> = HashMap::new();
        let mut problems = Vec::new();
        for (rv, (key, i, _)) in &self.landed {
            if let Some((prev_rv, prev_i)) = last.get(key) {
                if prev_i >= i {
                    problems.push(format!(
                        "{key}: revision {prev_rv} is write #{prev_i} but the later revision {rv} is write #{i}"
                    ));
                }
            }
            last.insert(*key, (*rv, *i));
        }
        for p in problems {
            self.verdict.out_of_order += 1;
            self.verdict.problem(p);
        }
    }

    /// The final state holds the last acknowledged write, or a later one.
    fn check_final_state(&mut self) {
        let recorded = self.recorded;
        for (key, writes) in recorded.histories {
            let last_acked = writes
                .iter()
                .rposition(|w| matches!(w.outcome, Outcome::Acked(_)));
            let Some(la) = last_acked else { continue };
            match recorded.final_state.get(key) {
                Some((_, content)) => {
                    let final_i = self.index.get(key).and_then(|m| m.get(content.as_str()));
                    if let Some(&fi) = final_i {
                        if fi < la {
                            self.verdict.lost_writes += 1;
                            self.verdict.problem(format!(
                                "{key}: acknowledged {:?} #{la} lost: the final state is write #{fi} ({content:?}; {})",
                                writes[la].op,
                                around(writes, la)
                            ));
                        }
                    }
                }
                None => {
                    let deleted_later = writes[la].op == Op::Delete
                        || writes[la + 1..]
                            .iter()
                            .any(|w| w.op == Op::Delete && w.outcome == Outcome::Uncertain);
                    if !deleted_later {
                        self.verdict.lost_writes += 1;
                        self.verdict.problem(format!(
                            "{key}: acknowledged {:?} #{la} lost: the object is gone, and no delete was sent after it",
                            writes[la].op
                        ));
                    }
                }
            }
        }
    }

    /// Every watcher saw every change of its scope in the stretches it covered.
    fn check_watchers(&mut self) {
        let recorded = self.recorded;
        // Acknowledged deletes no watcher reported: the revisions that bound them.
        let mut unseen_deletes = Vec::new();
        for (key, writes) in recorded.histories {
            let landed_here: Vec<(u64, usize)> = self
                .landed
                .iter()
                .filter(|(_, (k, _, _))| *k == key)
                .map(|(rv, (_, i, _))| (*rv, *i))
                .collect();
            for (j, write) in writes.iter().enumerate() {
                if write.op != Op::Delete || !matches!(write.outcome, Outcome::Acked(_)) {
                    continue;
                }
                if landed_here.iter().any(|(_, i)| *i == j) {
                    continue;
                }
                let lower = landed_here
                    .iter()
                    .filter(|(_, i)| *i < j)
                    .map(|(rv, _)| *rv)
                    .max();
                let upper = landed_here
                    .iter()
                    .filter(|(_, i)| *i > j)
                    .map(|(rv, _)| *rv)
                    .min()
                    .unwrap_or(recorded.final_rv);
                if let Some(lower) = lower {
                    unseen_deletes.push((key, j, lower, upper, around(writes, j)));
                }
            }
        }
        for watcher in recorded.watchers {
            if !watcher.reached_end {
                self.verdict.watchers_incomplete += 1;
                self.verdict.problem(format!(
                    "{}: never reached the final revision {}",
                    watcher.name, recorded.final_rv
                ));
            }
            let in_scope = |key: &ObjectKey| {
                watcher
                    .namespace
                    .as_ref()
                    .is_none_or(|ns| &key.namespace == ns)
            };
            let seen: BTreeSet<u64> = watcher.events.iter().map(|e| e.rv).collect();
            let mut missing = Vec::new();
            for segment in &watcher.segments {
                if segment.to <= segment.from {
                    continue;
                }
                for (rv, (key, i, who)) in self.landed.range(segment.from + 1..=segment.to) {
                    if in_scope(key) && !seen.contains(rv) {
                        missing.push(format!(
                            "{}: missed revision {rv} (write #{i} of {key}, seen by {who}) within ({}, {}]",
                            watcher.name, segment.from, segment.to
                        ));
                    }
                }
                for (key, j, lower, upper, context) in &unseen_deletes {
                    if in_scope(key) && segment.from <= *lower && *upper <= segment.to {
                        missing.push(format!(
                            "{}: missed the acknowledged delete #{j} of {key} between revisions {lower} and {upper} ({context})",
                            watcher.name
                        ));
                    }
                }
            }
            for m in missing {
                self.verdict.missing_events += 1;
                self.verdict.problem(m);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenarios::fault_watch::{Seen, Segment};

    fn key(name: &str) -> ObjectKey {
        ObjectKey {
            namespace: "ns".into(),
            name: name.into(),
        }
    }

    fn w(op: Op, content: Option<&str>, outcome: Outcome) -> Write {
        Write {
            op,
            content: content.map(str::to_string),
            outcome,
        }
    }

    fn seen(rv: u64, kind: EventType, content: &str) -> Seen {
        Seen {
            rv,
            key: key("a"),
            kind,
            content: content.into(),
        }
    }

    /// create(10) update(11) delete(12, no rv in the answer) create(14, uncertain).
    fn history() -> BTreeMap<ObjectKey, Vec<Write>> {
        BTreeMap::from([(
            key("a"),
            vec![
                w(Op::Create, Some("c1"), Outcome::Acked(Some(10))),
                w(Op::Update, Some("c2"), Outcome::Acked(Some(11))),
                w(Op::Patch, Some("c3"), Outcome::Failed),
                w(Op::Delete, None, Outcome::Acked(None)),
                w(Op::Create, Some("c4"), Outcome::Uncertain),
            ],
        )])
    }

    fn watcher(events: Vec<Seen>, from: u64, to: u64) -> WatcherLog {
        WatcherLog {
            name: "w0".into(),
            events,
            segments: vec![Segment { from, to }],
            reached_end: true,
            ..WatcherLog::default()
        }
    }

    fn run(
        histories: &BTreeMap<ObjectKey, Vec<Write>>,
        watchers: &[WatcherLog],
        final_state: &BTreeMap<ObjectKey, (u64, String)>,
    ) -> Verdict {
        check(&Recorded {
            histories,
            observed: &[],
            watchers,
            final_state,
            final_rv: 20,
        })
    }

    #[test]
    fn problems_show_the_history_around_a_write() {
        let histories = history();
        assert_eq!(
            around(&histories[&key("a")], 1),
            "#0 Create acknowledged at 10, #1 Update acknowledged at 11, #2 Patch failed, #3 Delete acknowledged"
        );
    }

    #[test]
    fn a_complete_run_passes() {
        let histories = history();
        let events = vec![
            seen(10, EventType::Added, "c1"),
            seen(11, EventType::Modified, "c2"),
            seen(12, EventType::Deleted, "c2"),
            seen(14, EventType::Added, "c4"),
        ];
        let final_state = BTreeMap::from([(key("a"), (14, "c4".to_string()))]);
        let verdict = run(&histories, &[watcher(events, 5, 20)], &final_state);
        assert!(verdict.passed(), "{verdict:?}");
        assert_eq!(verdict.acked_writes, 3);
        assert_eq!(verdict.uncertain_landed, 1);
        assert_eq!(verdict.failed_writes, 1);
        // The uncertain create may also not have landed: gone is fine.
        let verdict = run(&histories, &[watcher(vec![], 20, 20)], &BTreeMap::new());
        assert!(verdict.passed(), "{verdict:?}");
    }

    #[test]
    fn a_lost_acknowledged_write_fails() {
        let histories = BTreeMap::from([(
            key("a"),
            vec![
                w(Op::Create, Some("c1"), Outcome::Acked(Some(10))),
                w(Op::Update, Some("c2"), Outcome::Acked(Some(11))),
            ],
        )]);
        let old = BTreeMap::from([(key("a"), (10, "c1".to_string()))]);
        let verdict = run(&histories, &[], &old);
        assert_eq!(verdict.lost_writes, 1, "{verdict:?}");
        let verdict = run(&histories, &[], &BTreeMap::new());
        assert_eq!(verdict.lost_writes, 1, "{verdict:?}");
        assert!(!verdict.passed());
    }

    #[test]
    fn a_gap_in_a_covered_stretch_fails_but_not_across_a_relist() {
        let histories = history();
        let final_state = BTreeMap::new();
        // Missing the update at 11.
        let events = vec![
            seen(10, EventType::Added, "c1"),
            seen(12, EventType::Deleted, "c2"),
        ];
        let verdict = run(&histories, &[watcher(events.clone(), 5, 20)], &final_state);
        assert_eq!(verdict.missing_events, 1, "{verdict:?}");
        // The same events with a 410 between 10 and 12: nothing was promised.
        let mut relisted = watcher(events, 5, 10);
        relisted.segments.push(Segment { from: 11, to: 20 });
        let verdict = run(&histories, &[relisted], &final_state);
        assert!(verdict.passed(), "{verdict:?}");
        // A delete nobody reported, inside a covered stretch.
        let events = vec![
            seen(10, EventType::Added, "c1"),
            seen(11, EventType::Modified, "c2"),
        ];
        let verdict = run(&histories, &[watcher(events, 5, 20)], &final_state);
        assert_eq!(verdict.missing_events, 1, "{verdict:?}");
    }

    #[test]
    fn a_deleted_event_is_the_acknowledged_one_of_repeated_deletes() {
        // An uncertain delete that did not land (a GET still showed the
        // object), then the same delete again, acknowledged.
        let histories = BTreeMap::from([(
            key("a"),
            vec![
                w(Op::Create, Some("c1"), Outcome::Acked(Some(10))),
                w(Op::Delete, None, Outcome::Uncertain),
                w(Op::Delete, None, Outcome::Acked(None)),
                w(Op::Create, Some("c2"), Outcome::Acked(Some(13))),
            ],
        )]);
        let events = vec![
            seen(10, EventType::Added, "c1"),
            seen(12, EventType::Deleted, "c1"),
            seen(13, EventType::Added, "c2"),
        ];
        let final_state = BTreeMap::from([(key("a"), (13, "c2".to_string()))]);
        let verdict = run(&histories, &[watcher(events, 5, 20)], &final_state);
        assert!(verdict.passed(), "{verdict:?}");
        assert_eq!(verdict.uncertain_landed, 0, "{verdict:?}");
    }

    #[test]
    fn phantoms_contradictions_and_disorder_fail() {
        let histories = history();
        let final_state = BTreeMap::new();
        // A failed write visible.
        let verdict = run(
            &histories,
            &[watcher(vec![seen(13, EventType::Modified, "c3")], 12, 20)],
            &final_state,
        );
        assert_eq!(verdict.unexplained, 1, "{verdict:?}");
        // An ADDED for an update.
        let verdict = run(
            &histories,
            &[watcher(vec![seen(11, EventType::Added, "c2")], 10, 11)],
            &final_state,
        );
        assert_eq!(verdict.unexplained, 1, "{verdict:?}");
        // The acknowledged revision 11 reported as another write.
        let verdict = run(
            &histories,
            &[watcher(vec![seen(11, EventType::Added, "c1")], 10, 11)],
            &final_state,
        );
        assert!(verdict.unexplained >= 1, "{verdict:?}");
        // The update at a revision below the create's.
        let swapped = BTreeMap::from([(
            key("a"),
            vec![
                w(Op::Create, Some("c1"), Outcome::Acked(Some(11))),
                w(Op::Update, Some("c2"), Outcome::Acked(Some(10))),
            ],
        )]);
        let final_state = BTreeMap::from([(key("a"), (10, "c2".to_string()))]);
        let verdict = run(&swapped, &[], &final_state);
        assert_eq!(verdict.out_of_order, 1, "{verdict:?}");
        // A watcher that stopped short.
        let mut short = watcher(vec![], 20, 20);
        short.reached_end = false;
        let verdict = run(&histories, &[short], &BTreeMap::new());
        assert_eq!(verdict.watchers_incomplete, 1);
    }
}
