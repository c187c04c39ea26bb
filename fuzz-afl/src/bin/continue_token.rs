fn main() {
    ferrokube_fuzz_afl::run("continue_token");
}
