fn main() {
    ferrokube_fuzz_afl::run("stored_object");
}
