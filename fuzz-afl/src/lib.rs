//! Runs one `ferrokube::fuzzing` target under AFL++ (`afl::fuzz!`): the
//! binaries in `src/bin/` each name theirs.

/// Fuzz the target named `name` with the inputs AFL++ feeds this process.
pub fn run(name: &str) {
    let Some(target) = ferrokube::fuzzing::TARGETS
        .iter()
        .find(|(target_name, _)| *target_name == name)
        .map(|(_, target)| *target)
    else {
        panic!("no fuzz target named {name} in ferrokube::fuzzing::TARGETS");
    };
    afl::fuzz!(|data: &[u8]| target(data));
}
