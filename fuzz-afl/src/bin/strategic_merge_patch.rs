fn main() {
    ferrokube_fuzz_afl::run("strategic_merge_patch");
}
