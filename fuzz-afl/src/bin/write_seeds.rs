//! Writes `ferrokube::fuzzing::seeds(target)` of every target (or of the
//! targets named as arguments) to `corpus/<target>/seed-<n>`: the starting
//! corpus of a new target, before `afl-cmin` keeps what adds coverage.
use std::path::Path;

fn main() -> std::io::Result<()> {
    let wanted: Vec<String> = std::env::args().skip(1).collect();
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
    for (name, _) in ferrokube::fuzzing::TARGETS {
        if !wanted.is_empty() && !wanted.iter().any(|target| target == name) {
            continue;
        }
        let dir = corpus.join(name);
        std::fs::create_dir_all(&dir)?;
        for (index, seed) in ferrokube::fuzzing::seeds(name).iter().enumerate() {
            std::fs::write(dir.join(format!("seed-{index:03}")), seed)?;
        }
    }
    Ok(())
}
