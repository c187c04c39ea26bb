//! Every fuzz target (`ferrokube::fuzzing`, built as AFL++ targets in
//! `fuzz-afl/` and as cargo-fuzz targets in `fuzz/`) over the corpus kept in
//! `fuzz-afl/corpus/<target>/` (the AFL++ runs' minimized queues, crash
//! reproducers among them), its built-in seeds and a few thousand
//! deterministic mutations of them: a short, reproducible fuzz run on the
//! stable toolchain. A panic names the target and the input (hex) that
//! caused it.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use ferrokube::fuzzing::{seeds, TARGETS};
use ferrokube::rng::Rng;

/// The AFL++ workspace: its binaries and the kept corpus.
fn fuzz_afl_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz-afl")
}

/// The kept corpus of `target`, file names sorted (so a failure is reproducible).
fn kept_corpus(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = fuzz_afl_dir().join("corpus").join(target);
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|error| panic!("corpus {}: {error}", dir.display()))
        .map(|entry| {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&path).unwrap())
        })
        .collect();
    files.sort();
    files
}

/// Mutations per target.
const ITERATIONS: usize = 3000;

const INTERESTING: &[u8] = &[
    0x00, 0x01, 0x7f, 0x80, 0xff, 0x18, 0x1b, 0x5f, 0x9f, 0xbf, 0xd9, 0xf7, b'{', b'[', b'"', b':',
    b'\n', b'&', b'*',
];

fn mutate(rng: &mut Rng, input: &[u8], corpus: &[Vec<u8>]) -> Vec<u8> {
    let mut out = input.to_vec();
    for _ in 0..=rng.below(4) {
        let len = out.len();
        match rng.below(8) {
            0 if len > 0 => {
                let at = rng.below(len);
                out[at] ^= 1 << rng.below(8);
            }
            1 if len > 0 => {
                let at = rng.below(len);
                out[at] = INTERESTING[rng.below(INTERESTING.len())];
            }
            2 => {
                let at = rng.below(len + 1);
                out.insert(at, INTERESTING[rng.below(INTERESTING.len())]);
            }
            3 if len > 0 => {
                let at = rng.below(len);
                let count = 1 + rng.below((len - at).min(16));
                out.drain(at..at + count);
            }
            4 if len > 0 => {
                out.truncate(rng.below(len));
            }
            5 if len > 0 => {
                // Duplicate a chunk (nesting, repeated fields).
                let at = rng.below(len);
                let count = 1 + rng.below((len - at).min(64));
                let chunk = out[at..at + count].to_vec();
                let to = rng.below(out.len() + 1);
                out.splice(to..to, chunk);
            }
            6 if !corpus.is_empty() => {
                // Splice in part of another seed.
                let other = &corpus[rng.below(corpus.len())];
                if !other.is_empty() {
                    let from = rng.below(other.len());
                    let count = 1 + rng.below((other.len() - from).min(128));
                    let to = rng.below(out.len() + 1);
                    out.splice(to..to, other[from..from + count].iter().copied());
                }
            }
            _ => {
                let at = rng.below(len + 1);
                let byte = (rng.next_u64() & 0xff) as u8;
                out.insert(at, byte);
            }
        }
    }
    out
}

fn run(name: &str, target: fn(&[u8]), input: &[u8]) {
    let outcome = std::panic::catch_unwind(|| target(input));
    if let Err(panic) = outcome {
        let hex: String = input.iter().map(|byte| format!("{byte:02x}")).collect();
        eprintln!("fuzz target {name} panicked on input (hex) {hex}");
        std::panic::resume_unwind(panic);
    }
}

#[test]
fn every_target_has_an_afl_binary_and_a_kept_corpus() {
    for (name, _) in TARGETS {
        let binary = fuzz_afl_dir().join("src/bin").join(format!("{name}.rs"));
        assert!(binary.exists(), "no AFL++ binary {}", binary.display());
        assert!(
            !kept_corpus(name).is_empty(),
            "empty kept corpus for {name}"
        );
    }
}

#[test]
fn every_target_survives_its_kept_corpus() {
    for (name, target) in TARGETS {
        for (file, input) in kept_corpus(name) {
            let outcome = std::panic::catch_unwind(|| target(&input));
            if let Err(panic) = outcome {
                eprintln!("fuzz target {name} panicked on fuzz-afl/corpus/{name}/{file}");
                std::panic::resume_unwind(panic);
            }
        }
    }
}

#[test]
fn every_target_survives_seeds_and_mutations() {
    for (name, target) in TARGETS {
        let mut corpus = seeds(name);
        corpus.extend(kept_corpus(name).into_iter().map(|(_, input)| input));
        assert!(!corpus.is_empty(), "no seeds for {name}");
        for seed in &corpus {
            run(name, *target, seed);
        }
        let mut rng = Rng::new(0x9e37_79b9_7f4a_7c15 ^ name.len() as u64);
        for iteration in 0..ITERATIONS {
            let base = &corpus[iteration % corpus.len()];
            let input = mutate(&mut rng, base, &corpus);
            run(name, *target, &input);
        }
    }
}

#[test]
fn hostile_shapes() {
    // Deep nesting and huge declared lengths, for every target.
    let mut inputs: Vec<Vec<u8>> = vec![
        b"[".repeat(100_000),
        b"{\"a\":".repeat(50_000),
        [&[0x9b][..], &[0xff; 8]].concat(),
        [&b"k8s\0"[..], &[0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]].concat(),
        vec![0x81; 100_000],
        b"- ".repeat(50_000),
        b"a: &a [*a]\n".to_vec(),
        // Balanced, deeper than every decoder's limit (Go's JSON scanner: 10000).
        [b"[".repeat(20_000), b"]".repeat(20_000)].concat(),
        [
            b"{\"a\":".repeat(20_000),
            b"1".to_vec(),
            b"}".repeat(20_000),
        ]
        .concat(),
    ];
    inputs.push([&[0u8][..], &b"[".repeat(20_000), &[0], &b"{}"[..]].concat());
    for (name, target) in TARGETS {
        for input in &inputs {
            run(name, *target, input);
        }
    }
}
