#!/usr/bin/env bash
# Coverage-guided fuzzing on the stable toolchain: builds one AFL++ target of
# fuzz-afl/ (a `ferrokube::fuzzing::TARGETS` entry) and fuzzes it for SECONDS
# (default 300), starting from the kept corpus fuzz-afl/corpus/TARGET/.
#
#   scripts/fuzz.sh TARGET [SECONDS]
#   FUZZ_KEEP=1 scripts/fuzz.sh TARGET 600   # then minimize corpus + queue
#                                            # (afl-cmin) back into the corpus,
#                                            # at most FUZZ_KEEP_BYTES of it
#
# Needs cargo-afl (`cargo install cargo-afl`; it builds AFL++'s runtime on
# first use, or run `cargo afl config --build`). The build goes to
# $CARGO_TARGET_DIR (default /tmp/ferrokube-fuzz-target, outside the repo),
# the findings to $FUZZ_OUT (default /tmp/ferrokube-fuzz/TARGET): crashes in
# default/crashes/, hangs in default/hangs/. Reproduce one with
# `$CARGO_TARGET_DIR/release/TARGET < FILE`, then keep it as
# fuzz-afl/corpus/TARGET/crash-<what> once fixed (fuzz_smoke.rs replays it).
# The runs recorded so far are in docs/fuzzing.md.
set -euo pipefail

usage="usage: scripts/fuzz.sh TARGET [SECONDS]"
target=${1:?$usage}
seconds=${2:-300}
repo=$(cd "$(dirname "$0")/.." && pwd)
fuzz_dir="$repo/fuzz-afl"
corpus="$fuzz_dir/corpus/$target"

if [[ ! -f "$fuzz_dir/src/bin/$target.rs" ]]; then
    echo "no fuzz target $target; one of:" >&2
    ls "$fuzz_dir/src/bin" | sed -n 's/\.rs$//p' | grep -v '^write_seeds$' >&2
    exit 2
fi
if ! cargo afl --version >/dev/null 2>&1; then
    echo "cargo-afl is missing: cargo install cargo-afl" >&2
    exit 2
fi

export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-/tmp/ferrokube-fuzz-target}
export AFL_OPT_LEVEL=${AFL_OPT_LEVEL:-1}
out=${FUZZ_OUT:-/tmp/ferrokube-fuzz/$target}
binary="$CARGO_TARGET_DIR/release/$target"

(cd "$fuzz_dir" && cargo afl build --release --bin "$target")

# This machine is shared and its CPU governor is not ours to change.
export AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1
export AFL_NO_AFFINITY=1 AFL_SKIP_CRASHES=1
[[ -t 1 ]] || export AFL_NO_UI=1
rm -rf "$out/default"
mkdir -p "$out"
# -V: stop after SECONDS; -t: an input taking over 1 s is a hang.
(cd "$fuzz_dir" && cargo afl fuzz -V "$seconds" -t 1000 -i "$corpus" -o "$out" -- "$binary") ||
    echo "afl-fuzz exited with $?" >&2

stats="$out/default/fuzzer_stats"
if [[ -f "$stats" ]]; then
    grep -E '^(run_time|execs_done|execs_per_sec|corpus_count|bitmap_cvg|saved_crashes|saved_hangs) ' "$stats"
fi
for kind in crashes hangs; do
    found=$(find "$out/default/$kind" -type f -name 'id:*' 2>/dev/null | wc -l)
    if ((found > 0)); then
        echo "$found $kind in $out/default/$kind"
    fi
done

if [[ "${FUZZ_KEEP:-0}" == 1 ]]; then
    merged=$(mktemp -d)
    minimized=$(mktemp -d)
    rmdir "$minimized"
    cp "$corpus"/* "$merged"/
    cp "$out"/default/queue/id:* "$merged"/ 2>/dev/null || true
    cargo afl cmin -i "$merged" -o "$minimized" -t 3000 -- "$binary" >/dev/null
    # Crash reproducers stay whatever afl-cmin thinks of them.
    find "$corpus" -type f ! -name 'crash-*' -delete
    # The repository keeps a small corpus: afl-cmin's choice, smallest
    # first, up to FUZZ_KEEP_BYTES (default 24 KiB) per target.
    budget=${FUZZ_KEEP_BYTES:-24576}
    n=0
    kept=0
    while read -r size file; do
        ((kept + size <= budget)) || break
        cp "$file" "$corpus/min-$(sha1sum "$file" | cut -c1-12)"
        kept=$((kept + size))
        n=$((n + 1))
    done < <(find "$minimized" -type f -printf '%s %p\n' | sort -n)
    rm -rf "$merged" "$minimized"
    echo "kept $n inputs ($kept bytes) in $corpus"
fi
