fn main() {
    ferrokube_fuzz_afl::run("service_account_token");
}
