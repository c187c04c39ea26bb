fn main() {
    ferrokube_fuzz_afl::run("json");
}
