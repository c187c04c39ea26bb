//! ferrokube under controller-runtime's envtest: `ferrokube envtest-assets
//! DIR` lays out a `KUBEBUILDER_ASSETS` directory (`assets.rs`) whose
//! `kube-apiserver` is ferrokube on its memory store and whose `etcd` is a
//! stand-in that only answers envtest's health check (`etcd_health.rs`).
//!
//! envtest (`pkg/internal/testing/controlplane`, `etcd.go` and
//! `apiserver.go`) starts `$KUBEBUILDER_ASSETS/etcd`, polls
//! `<client URL>/health` until it answers 200, then starts
//! `$KUBEBUILDER_ASSETS/kube-apiserver --etcd-servers=<client URL> …` and
//! polls its `/healthz`. ferrokube keeps its state in its own store, so the
//! etcd it is given is never dialled: a real etcd would cost envtest a
//! second process start (about a second) for nothing.

pub mod assets;
pub mod etcd_health;

pub use assets::{write_assets, AssetsError, AssetsOptions};
pub use etcd_health::{serve_health, EtcdHealthError, EtcdHealthOptions};
