//! Periodic compaction of etcd's history, as kube-apiserver does it
//! (`storage/etcd3/compact.go`): every interval, a compare-and-swap on the
//! version of `compact_rev_key` elects one compactor among all replicas
//! (and any kube-apiserver on the same etcd), which then compacts up to the
//! revision it saw one interval earlier, so watchers keep at least one
//! interval of history.

use std::time::Duration;

use etcd_client::{Client, Compare, CompareOp, TxnOp, TxnOpResponse};

use crate::Revision;

/// kube's `compactRevKey`: outside any prefix, shared by every API server on the cluster.
const COMPACT_REV_KEY: &str = "compact_rev_key";

pub(super) fn spawn(
    client: Client,
    interval: Duration,
    request_timeout: Duration,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        // kube's runCompactLoop: compact time (the key's version) and the
        // revision seen at the last round.
        let mut compact_time = 0;
        let mut revision = 0;
        loop {
            tokio::time::sleep(interval).await;
            match compact(&client, compact_time, revision, request_timeout).await {
                Ok((time, current)) => {
                    compact_time = time;
                    revision = current;
                }
                Err(error) => tracing::error!(%error, "etcd compaction failed"),
            }
        }
    })
}

/// One round: `(compact time, current revision)`; CAS failures are not errors.
async fn compact(
    client: &Client,
    expect_version: i64,
    revision: Revision,
    request_timeout: Duration,
) -> Result<(i64, Revision), super::EtcdError> {
    let txn = etcd_client::Txn::new()
        .when(vec![Compare::version(
            COMPACT_REV_KEY,
            CompareOp::Equal,
            expect_version,
        )])
        .and_then(vec![TxnOp::put(
            COMPACT_REV_KEY,
            revision.to_string(),
            None,
        )])
        .or_else(vec![TxnOp::get(COMPACT_REV_KEY, None)]);
    let mut kv = client.kv_client();
    let response = super::timed(request_timeout, "compaction", kv.txn(txn)).await?;
    let current = response.header().map_or(0, |header| header.revision());
    if !response.succeeded() {
        // Another server compacted this round: adopt its compact time.
        let version = response
            .op_responses()
            .into_iter()
            .find_map(|op| match op {
                TxnOpResponse::Get(get) => get.kvs().first().map(|kv| kv.version()),
                _ => None,
            })
            .unwrap_or(expect_version);
        return Ok((version, current));
    }
    let time = expect_version + 1;
    if revision == 0 {
        // kube: "We don't compact on bootstrap."
        return Ok((time, current));
    }
    let mut kv = client.kv_client();
    match super::timed(request_timeout, "compaction", kv.compact(revision, None)).await {
        Ok(_) | Err(super::EtcdError::Compacted { .. }) => {
            tracing::debug!(revision, "etcd: compacted");
            Ok((time, current))
        }
        Err(error) => Err(error),
    }
}
