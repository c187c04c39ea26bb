//! Nothing to generate here: this build script exists so that
//! `protoc-bin-vendored` is a build-dependency, which makes cargo download the
//! vendored protoc that `scripts/protoc` (PROTOC, set in `.cargo/config.toml`)
//! hands to etcd-client's build script.

fn main() {
    // Fail early, with a clear message, where the vendored protoc is missing.
    if let Err(error) = protoc_bin_vendored::protoc_bin_path() {
        println!("cargo:warning=no vendored protoc for this platform: {error}");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
