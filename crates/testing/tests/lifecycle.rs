//! Dropping a TestServer stops everything it started: its thread and its
//! runtime's blocking threads, the store's committer thread, the accept
//! loop (nothing listens on its port) and the watches of its clients. This
//! binary holds one test so that no other server's threads are counted.

use ferrokube_testing::{TestServer, SERVER_THREAD_NAME};
use futures::TryStreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, WatchParams};

/// The names of this process's threads.
fn thread_names() -> Vec<String> {
    let mut names = Vec::new();
    for task in std::fs::read_dir("/proc/self/task")
        .expect("/proc/self/task")
        .flatten()
    {
        if let Ok(name) = std::fs::read_to_string(task.path().join("comm")) {
            names.push(name.trim_end().to_string());
        }
    }
    names
}

fn server_threads() -> Vec<String> {
    thread_names()
        .into_iter()
        .filter(|name| name == SERVER_THREAD_NAME || name == "store-committer")
        .collect()
}

async fn start_use_and_stop() {
    let server = TestServer::start().await.expect("start");
    assert!(
        !server_threads().is_empty(),
        "the server runs on its own threads"
    );
    let api: Api<ConfigMap> = Api::namespaced(server.client(), "default");
    // A watch still open when the server stops ends instead of holding it up.
    let mut watch = Box::pin(
        api.watch(&WatchParams::default(), "0")
            .await
            .expect("watch"),
    );
    let address = server.address();
    drop(server);
    assert_eq!(
        server_threads(),
        Vec::<String>::new(),
        "every server thread has ended"
    );
    assert!(tokio::net::TcpStream::connect(address).await.is_err());
    while let Ok(Some(_)) = watch.try_next().await {}
}

#[tokio::test]
async fn dropping_servers_ends_their_threads_and_connections() {
    // The first start makes the process's certificates and parses the
    // vendored data once; after it, every cycle ends where it began.
    start_use_and_stop().await;
    let threads_after_first = thread_names().len();
    for _ in 0..10 {
        start_use_and_stop().await;
    }
    assert!(
        thread_names().len() <= threads_after_first,
        "no thread is left behind: {:?}",
        thread_names()
    );
}
