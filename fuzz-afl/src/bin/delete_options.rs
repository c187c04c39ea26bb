fn main() {
    ferrokube_fuzz_afl::run("delete_options");
}
