use std::process::ExitCode;

use clap::Parser;
use ferrokube_bench::cli::Cli;
use ferrokube_bench::report;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
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
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("ferrokube-bench: {error}");
            ExitCode::FAILURE
        }
    }
}
