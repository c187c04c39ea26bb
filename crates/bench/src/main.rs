use std::process::ExitCode;

use clap::Parser;
use ferrokube_bench::cli::{Cli, Scenario};
use ferrokube_bench::report;

/// `list-formats` measures how fast a server streams one large body, so its
/// client must not be the slower side: on a multi-threaded runtime the
/// HTTP/2 connection task and the reader of the body sat on different
/// threads, and handing each frame across (wake-ups, the stream store's lock)
/// made the client take the bytes slower than the server sent them (the
/// server's measured time lasts until the client has taken the last byte).
/// On one thread the same client reads them a third faster. Every other
/// scenario drives many concurrent clients and keeps all cores.
fn runtime_builder(scenario: &Scenario) -> tokio::runtime::Builder {
    match scenario {
        Scenario::ListFormats => tokio::runtime::Builder::new_current_thread(),
        _ => tokio::runtime::Builder::new_multi_thread(),
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match runtime_builder(&cli.scenario).enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("ferrokube-bench: starting the runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = runtime.block_on(ferrokube_bench::run(&cli));
    // Started servers are gone by now; do not wait for idle connections.
    runtime.shutdown_background();
    match outcome {
        Ok(report) => {
            if let Some(dir) = &cli.svg {
                match report::svg_files(&report, dir) {
                    Ok(files) if !cli.quiet => {
                        for file in files {
                            eprintln!("wrote {}", file.display());
                        }
                    }
                    Ok(_) => {}
                    Err(error) => {
                        eprintln!(
                            "ferrokube-bench: writing charts to {}: {error}",
                            dir.display()
                        );
                        return ExitCode::FAILURE;
                    }
                }
            }
            let failed = report.results.iter().any(|r| r.failed());
            if cli.json {
                match serde_json::to_string_pretty(&report) {
                    Ok(text) => println!("{text}"),
                    Err(error) => {
                        eprintln!("ferrokube-bench: {error}");
                        return ExitCode::FAILURE;
                    }
                }
            } else {
                print!("{}", report::human(&report));
            }
            if failed {
                eprintln!("ferrokube-bench: FAILED (see the report)");
                return ExitCode::FAILURE;
            }
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("ferrokube-bench: {error}");
            ExitCode::FAILURE
        }
    }
}
