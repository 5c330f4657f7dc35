//! The `aioli` command line (CONTRACT §1). Argument parsing only: every
//! subcommand calls into the library.

use aioli::analysis;
use aioli::front::{self, FrontOptions, diag};
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "aioli",
    version,
    about = "Automatic differentiation of C by source transformation"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Preprocessor options shared by every subcommand that reads C.
#[derive(Args, Clone)]
struct Preprocessing {
    /// Add a directory to the search path of `#include "..."`.
    #[arg(short = 'I', value_name = "DIR")]
    include: Vec<PathBuf>,
    /// Define a macro: NAME or NAME=VALUE.
    #[arg(short = 'D', value_name = "NAME[=VAL]")]
    define: Vec<String>,
}

impl Preprocessing {
    fn options(&self) -> FrontOptions {
        FrontOptions {
            include_dirs: self.include.clone(),
            defines: self
                .define
                .iter()
                .map(|d| match d.split_once('=') {
                    Some((n, v)) => (n.to_string(), Some(v.to_string())),
                    None => (d.clone(), None),
                })
                .collect(),
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum Emit {
    C,
    Il,
}

#[derive(Clone, Copy, ValueEnum)]
enum CheckMode {
    Tangent,
    Adjoint,
    Both,
}

#[derive(Subcommand)]
enum Command {
    /// Tangent (forward) differentiation: writes FILE_d.c.
    Tangent {
        file: PathBuf,
        /// Head procedure and its dependents/independents: 'f(y z)/(x)'.
        #[arg(long, required = true)]
        head: Vec<String>,
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        #[command(flatten)]
        pp: Preprocessing,
        /// Multi-directional tangent: writes FILE_dv.c.
        #[arg(long)]
        vector: bool,
    },
    /// Adjoint (reverse) differentiation: writes FILE_b.c.
    Adjoint {
        file: PathBuf,
        #[arg(long, required = true)]
        head: Vec<String>,
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        #[command(flatten)]
        pp: Preprocessing,
        /// Split mode for every call: f_fwd and f_bwd.
        #[arg(long)]
        split: bool,
    },
    /// Validates the derivatives numerically (CONTRACT §6).
    Check {
        file: PathBuf,
        #[arg(long, required = true)]
        head: Vec<String>,
        #[arg(long, value_enum, default_value = "both")]
        mode: CheckMode,
        #[arg(long)]
        domain: Option<String>,
        #[command(flatten)]
        pp: Preprocessing,
    },
    /// Prints the data-flow analyses' results (CONTRACT §7).
    Analyze {
        file: PathBuf,
        #[arg(long, required = true)]
        head: Vec<String>,
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        pp: Preprocessing,
    },
    /// Runs the front end and a back end only, printing to stdout.
    Parse {
        file: PathBuf,
        #[arg(long, value_enum, default_value = "c")]
        emit: Emit,
        #[command(flatten)]
        pp: Preprocessing,
    },
    /// Writes the C runtime that adjoint code needs (CONTRACT §5).
    Runtime {
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Parse { file, emit, pp } => match load(&file, &pp.options()) {
            Some(loaded) => {
                let text = match emit {
                    Emit::C => aioli::back::print_c(&loaded.program, &loaded.sources),
                    Emit::Il => aioli::back::print_il(&loaded.program, &loaded.sources),
                };
                print!("{text}");
                ExitCode::SUCCESS
            }
            None => ExitCode::from(1),
        },
        Command::Tangent { file, pp, .. } => not_yet("tangent", &file, &pp),
        Command::Adjoint { file, pp, .. } => not_yet("adjoint", &file, &pp),
        Command::Check { file, pp, .. } => not_yet("check", &file, &pp),
        Command::Analyze {
            file,
            head,
            json,
            pp,
        } => analyze(&file, &head, json, &pp),
        Command::Runtime { .. } => {
            eprintln!(
                "aioli: error: 'runtime' is not implemented yet (the adjoint mode is not built)"
            );
            ExitCode::from(1)
        }
    }
}

/// Reads and lowers a file, printing warnings and, on failure, the error.
fn load(file: &Path, options: &FrontOptions) -> Option<front::Loaded> {
    match front::load(file, options) {
        Ok(loaded) => {
            for w in &loaded.warnings {
                eprint!("{}", diag::render(&loaded.sources, w));
            }
            Some(loaded)
        }
        Err((sources, d)) => {
            eprint!("{}", diag::render(&sources, &d));
            None
        }
    }
}

/// `aioli analyze`: the data-flow results per statement (CONTRACT §7).
fn analyze(file: &Path, heads: &[String], json: bool, pp: &Preprocessing) -> ExitCode {
    let Some(loaded) = load(file, &pp.options()) else {
        return ExitCode::from(1);
    };
    let mut parsed = Vec::new();
    for h in heads {
        match analysis::parse_head(&loaded.program, h) {
            Ok(h) => parsed.push(h),
            Err(msg) => {
                eprintln!("{}: error: {msg}", file.display());
                return ExitCode::from(1);
            }
        }
    }
    let result = analysis::analyze(&loaded.program, &parsed);
    for w in &result.warnings {
        eprint!("{}", diag::render(&loaded.sources, w));
    }
    if json {
        print!("{}", result.report_json(&loaded.sources));
    } else {
        print!("{}", result.report_text(&loaded.sources));
    }
    ExitCode::SUCCESS
}

/// A subcommand of the contract whose machinery is not built yet: the input
/// is still read, so a bad input gets its located error, and then the tool
/// says plainly that it cannot do the job (exit status 1).
fn not_yet(what: &str, file: &Path, pp: &Preprocessing) -> ExitCode {
    if load(file, &pp.options()).is_some() {
        eprintln!(
            "aioli: error: '{what}' is not implemented yet; only the front end ('aioli parse') is"
        );
    }
    ExitCode::from(1)
}
