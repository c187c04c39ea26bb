fn main() {
    ferrokube_fuzz_afl::run("merge_patch");
}
