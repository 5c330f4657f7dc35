//! The `aioli` command line (CONTRACT §1). Argument parsing only: every
//! subcommand calls into the library.

use aioli::analysis;
use aioli::front::{self, FrontOptions, diag};
use aioli::transform::specialize;
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Writes to standard output. A reader that went away (`aioli analyze f.c
/// | head`) ends the program quietly, as other command-line tools do,
/// instead of a panic.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if let Err(e) = write!(std::io::stdout(), $($arg)*) {
            stdout_failed(e);
        }
    }};
}

/// Writes to standard error. A reader that went away (`2>&1 | head -1`)
/// loses the rest of the messages, but the exit status still tells the
/// outcome, where `eprintln!` would panic.
macro_rules! to_stderr {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stderr(), $($arg)*);
    }};
}

macro_rules! line_to_stderr {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

fn stdout_failed(e: std::io::Error) {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    line_to_stderr!("aioli: cannot write to standard output: {e}");
    std::process::exit(1);
}

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
    #[arg(short = 'D', value_name = "NAME[=VAL]", value_parser = macro_definition)]
    define: Vec<String>,
}

/// `-D NAME[=VALUE]` with NAME an identifier (or `F(params)`): anything
/// else is a usage error, exit status 2.
fn macro_definition(arg: &str) -> Result<String, String> {
    let name = arg.split_once('=').map_or(arg, |(n, _)| n);
    let ident = name.split('(').next().unwrap_or("");
    let is_ident = ident
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && ident.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if is_ident && (ident.len() == name.len() || name.ends_with(')')) {
        Ok(arg.to_string())
    } else {
        Err(format!("'{name}' is not a macro name"))
    }
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

/// Options of the rule-driven transformations.
#[derive(Args, Clone)]
struct RuleOptions {
    /// Write each emitted statement's rule ID as a trailing comment.
    #[arg(long)]
    explain: bool,
    /// Reset every derivative that becomes zero explicitly (§4.6).
    #[arg(long)]
    no_implicit_zero: bool,
    /// A rule file adding derivatives of external functions.
    #[arg(long, value_name = "FILE")]
    rules: Vec<PathBuf>,
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
        #[command(flatten)]
        rules: RuleOptions,
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
        #[command(flatten)]
        rules: RuleOptions,
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

/// The passes recurse over statement lists and expression trees (a rule
/// per list element, `tangent/seq`), so a long generated function needs a
/// deeper stack than the main thread's 8 MiB: the work runs on a thread
/// with 1 GiB reserved (only touched pages are used). CONTRACT §1: never a
/// crash on any input.
const WORK_STACK_BYTES: usize = 1 << 30;

fn main() -> ExitCode {
    aioli::keep_freed_memory();
    let cli = Cli::parse();
    let worker = std::thread::Builder::new()
        .name("aioli".into())
        .stack_size(WORK_STACK_BYTES);
    match worker.spawn(move || run(cli)) {
        // A panic has printed its message already; 101 as Rust's own.
        Ok(handle) => handle.join().unwrap_or_else(|_| ExitCode::from(101)),
        // No such thread could be made (a tight `ulimit -v`): run here.
        Err(_) => run(Cli::parse()),
    }
}

fn run(cli: Cli) -> ExitCode {
    match cli.command {
        Command::Parse { file, emit, pp } => match load(&file, &pp.options()) {
            Some(loaded) => {
                let text = match emit {
                    Emit::C => aioli::back::print_c(&loaded.program, &loaded.sources),
                    Emit::Il => aioli::back::print_il(&loaded.program, &loaded.sources),
                };
                out!("{text}");
                ExitCode::SUCCESS
            }
            None => ExitCode::from(1),
        },
        Command::Tangent {
            file,
            head,
            out,
            pp,
            vector,
            rules,
        } => tangent(&file, &head, out.as_deref(), &pp, vector, &rules),
        Command::Adjoint {
            file,
            head,
            out,
            pp,
            split,
            rules,
        } => adjoint_command(&file, &head, out.as_deref(), &pp, split, &rules),
        Command::Check {
            file,
            head,
            mode,
            domain,
            pp,
        } => check(&file, &head, mode, domain.as_deref(), &pp),
        Command::Analyze {
            file,
            head,
            json,
            pp,
        } => analyze(&file, &head, json, &pp),
        Command::Runtime { out } => match aioli::runtime::write(&out) {
            Ok(paths) => {
                for p in paths {
                    line_to_stderr!("aioli: wrote {}", p.display());
                }
                ExitCode::SUCCESS
            }
            Err(e) => {
                line_to_stderr!("{}: error: cannot write the runtime: {e}", out.display());
                ExitCode::from(1)
            }
        },
    }
}

/// Reads and lowers a file, printing warnings and, on failure, the error.
fn load(file: &Path, options: &FrontOptions) -> Option<front::Loaded> {
    match front::load(file, options) {
        Ok(loaded) => {
            for w in &loaded.warnings {
                to_stderr!("{}", diag::render(&loaded.sources, w));
            }
            Some(loaded)
        }
        Err((sources, d)) => {
            to_stderr!("{}", diag::render(&sources, &d));
            None
        }
    }
}

/// `aioli analyze`: the data-flow results per statement (CONTRACT §7).
fn analyze(file: &Path, heads: &[String], json: bool, pp: &Preprocessing) -> ExitCode {
    let Some(loaded) = load(file, &pp.options()) else {
        return ExitCode::from(1);
    };
    let Some(parsed) = parse_heads(&loaded, heads) else {
        return ExitCode::from(1);
    };
    let result = analysis::analyze(&loaded.program, &parsed);
    for w in &result.warnings {
        to_stderr!("{}", diag::render(&loaded.sources, w));
    }
    if json {
        out!("{}", result.report_json(&loaded.sources));
    } else {
        out!("{}", result.report_text(&loaded.sources));
    }
    ExitCode::SUCCESS
}

/// The heads, or `None` after an error, located at the head function's
/// definition when the file defines it.
fn parse_heads(loaded: &front::Loaded, heads: &[String]) -> Option<Vec<analysis::head::Head>> {
    let program = &loaded.program;
    let mut parsed = Vec::new();
    for h in heads {
        match analysis::parse_head(program, h) {
            Ok(h) => parsed.push(h),
            Err(msg) => {
                let name = h.split('(').next().unwrap_or("").trim();
                match program
                    .proc_by_name(name)
                    .filter(|&p| program.proc(p).body.is_some())
                {
                    Some(p) => to_stderr!(
                        "{}",
                        diag::render(
                            &loaded.sources,
                            &diag::Diagnostic::error(program.proc(p).span, msg)
                        )
                    ),
                    // No function to point at: the file's first line, so
                    // that the message keeps CONTRACT §1's form.
                    None => {
                        let main = loaded.program.main_file;
                        let first = loaded.sources.file(main).text.chars().next();
                        let at = front::source::Span::new(main, 0, first.map_or(0, char::len_utf8));
                        to_stderr!(
                            "{}",
                            diag::render(&loaded.sources, &diag::Diagnostic::error(at, msg))
                        )
                    }
                }
                return None;
            }
        }
    }
    Some(parsed)
}

/// `aioli tangent`: writes FILE_d.c (or FILE_dv.c) into the output directory.
fn tangent(
    file: &Path,
    heads: &[String],
    out: Option<&Path>,
    pp: &Preprocessing,
    vector: bool,
    rule_opts: &RuleOptions,
) -> ExitCode {
    use aioli::transform::tangent::{TangentOptions, load_rules, tangent_program};
    let Some(mut loaded) = load(file, &pp.options()) else {
        return ExitCode::from(1);
    };
    aioli::back::relocate_local_includes(
        &mut loaded.program,
        &loaded.sources,
        file,
        out.unwrap_or(Path::new(".")),
    );
    let Some(parsed) = parse_heads(&loaded, heads) else {
        return ExitCode::from(1);
    };
    let mut opts = TangentOptions {
        explain: rule_opts.explain,
        implicit_zero: !rule_opts.no_implicit_zero,
        user_rules: Vec::new(),
    };
    let Some(user_rules) = read_user_rules(rule_opts) else {
        return ExitCode::from(1);
    };
    opts.user_rules = user_rules;
    let rules = match load_rules(&opts) {
        Ok(r) => r,
        Err(e) => {
            line_to_stderr!("{e}");
            return ExitCode::from(1);
        }
    };
    // The analyses' warnings (possible aliasing, uninitialised reads, heads
    // without dependence) concern the derivatives too; one run of the
    // analyses serves both their warnings and the rules. They are printed
    // only when the output is written: a refusal's error explains itself,
    // and "analysed as if they did not overlap" before "refused because
    // they overlap" would contradict it.
    // `--vector`: the scalar tangent, vectorized (`tangent/vector-loop`),
    // written to FILE_dv.c.
    let mut warnings = String::new();
    let generated = if vector {
        aioli::transform::vector::vector_tangent(
            &loaded.program,
            &loaded.sources,
            &parsed,
            &rules,
            &opts,
            &mut |w| warnings.push_str(&diag::render(&loaded.sources, w)),
        )
    } else {
        specialize::analyzed(&loaded.program, &parsed, specialize::Target::Tangent, |a| {
            for w in &a.warnings {
                warnings.push_str(&diag::render(&loaded.sources, w));
            }
            tangent_program(a, &rules, &opts).map(|p| aioli::back::print_c(&p, &loaded.sources))
        })
    };
    let text = match generated {
        Ok(t) => t,
        Err(d) => {
            to_stderr!("{}", diag::render(&loaded.sources, &d));
            return ExitCode::from(1);
        }
    };
    to_stderr!("{warnings}");
    write_output(file, out, if vector { "_dv" } else { "_d" }, &text)
}

/// `aioli adjoint`: writes FILE_b.c.
fn adjoint_command(
    file: &Path,
    heads: &[String],
    out: Option<&Path>,
    pp: &Preprocessing,
    split: bool,
    rule_opts: &RuleOptions,
) -> ExitCode {
    use aioli::transform::adjoint::{AdjointOptions, adjoint_output, load_adjoint_rules};
    let Some(mut loaded) = load(file, &pp.options()) else {
        return ExitCode::from(1);
    };
    aioli::back::relocate_local_includes(
        &mut loaded.program,
        &loaded.sources,
        file,
        out.unwrap_or(Path::new(".")),
    );
    let Some(parsed) = parse_heads(&loaded, heads) else {
        return ExitCode::from(1);
    };
    let mut opts = AdjointOptions {
        explain: rule_opts.explain,
        split,
        user_rules: Vec::new(),
    };
    let Some(user_rules) = read_user_rules(rule_opts) else {
        return ExitCode::from(1);
    };
    opts.user_rules = user_rules;
    let rules = match load_adjoint_rules(&opts) {
        Ok(r) => r,
        Err(e) => {
            line_to_stderr!("{e}");
            return ExitCode::from(1);
        }
    };
    // Printed only when the output is written, as in `tangent`.
    let text = match adjoint_output(&loaded.program, &parsed, &rules, &opts) {
        Ok(output) => {
            let mut warnings = String::new();
            for w in &output.warnings {
                warnings.push_str(&diag::render(&loaded.sources, w));
            }
            to_stderr!("{warnings}");
            aioli::back::print_c(&output.program, &loaded.sources)
        }
        Err(d) => {
            to_stderr!("{}", diag::render(&loaded.sources, &d));
            return ExitCode::from(1);
        }
    };
    write_output(file, out, "_b", &text)
}

/// The `--rules` files, read: (name, text). `None` after reporting a file
/// that cannot be read.
fn read_user_rules(rule_opts: &RuleOptions) -> Option<Vec<(String, String)>> {
    let mut files = Vec::new();
    for r in &rule_opts.rules {
        match std::fs::read_to_string(r) {
            Ok(text) => files.push((r.display().to_string(), text)),
            Err(e) => {
                line_to_stderr!("{}: error: cannot read rule file: {e}", r.display());
                return None;
            }
        }
    }
    Some(files)
}

/// Writes `FILE{suffix}.c` into `out` (default: the current directory),
/// atomically, and says where it went.
fn write_output(file: &Path, out: Option<&Path>, suffix: &str, text: &str) -> ExitCode {
    let stem = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let dir = out
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    let path = dir.join(format!("{stem}{suffix}.c"));
    if let Err(e) = std::fs::create_dir_all(&dir).and_then(|_| write_atomically(&path, text)) {
        line_to_stderr!("{}: error: cannot write: {e}", path.display());
        return ExitCode::from(1);
    }
    line_to_stderr!("aioli: wrote {}", path.display());
    ExitCode::SUCCESS
}

/// `aioli check`: differentiates into a scratch directory and validates
/// the result numerically (CONTRACT §6).
fn check(
    file: &Path,
    heads: &[String],
    mode: CheckMode,
    domain: Option<&str>,
    pp: &Preprocessing,
) -> ExitCode {
    use aioli::check::domain::Domain;
    use aioli::check::tangent::{Precision, TangentCheckOptions, check_tangent};
    use aioli::transform::tangent::{TangentOptions, load_rules, tangent};
    let Some(loaded) = load(file, &pp.options()) else {
        return ExitCode::from(1);
    };
    let Some(parsed) = parse_heads(&loaded, heads) else {
        return ExitCode::from(1);
    };
    // The domain: --domain, or the `// aioli: domain='...'` line of the file.
    let domain_text = match domain {
        Some(d) => d.to_string(),
        None => {
            let first = std::fs::read_to_string(file)
                .ok()
                .and_then(|t| t.lines().next().map(str::to_string));
            match first.map(|l| aioli::check::pragma::parse_pragma(&l)) {
                Some(Ok(aioli::check::pragma::Pragma::Valid(c))) => c.domain,
                _ => {
                    line_to_stderr!(
                        "{}: error: aioli check needs --domain, e.g. --domain 'n=10 x[n]=[-1,1] a=[0.5,2]'",
                        file.display()
                    );
                    return ExitCode::from(1);
                }
            }
        }
    };
    let dom = match Domain::parse(&domain_text) {
        Ok(d) => d,
        Err(e) => {
            line_to_stderr!("{}: error: --domain: {e}", file.display());
            return ExitCode::from(1);
        }
    };
    // With several heads, each takes the entries naming its parameters
    // and the globals (a global independent is every head's to draw); an
    // entry naming neither is an error.
    let has_param = |h: &aioli::analysis::head::Head, name: &str| {
        let program = &loaded.program;
        program
            .proc(h.proc)
            .params
            .iter()
            .any(|&s| program.sym(s).name == name)
            || program
                .symbols
                .iter()
                .any(|s| s.kind == aioli::il::SymKind::Global && s.name == name)
    };
    if parsed.len() > 1
        && let Some(e) = dom
            .entries
            .iter()
            .find(|e| !parsed.iter().any(|h| has_param(h, &e.param)))
    {
        line_to_stderr!(
            "{}: error: --domain names '{}', which is neither a parameter of a head nor a global",
            file.display(),
            e.param
        );
        return ExitCode::from(1);
    }
    let domain_of = |h: &aioli::analysis::head::Head| {
        if parsed.len() == 1 {
            return dom.clone();
        }
        Domain {
            entries: dom
                .entries
                .iter()
                .filter(|e| has_param(h, &e.param))
                .cloned()
                .collect(),
        }
    };
    let opts = TangentOptions::default();
    let rules = match load_rules(&opts) {
        Ok(r) => r,
        Err(e) => {
            line_to_stderr!("{e}");
            return ExitCode::from(1);
        }
    };
    let text = match tangent(&loaded.program, &loaded.sources, &parsed, &rules, &opts) {
        Ok(t) => t,
        Err(d) => {
            to_stderr!("{}", diag::render(&loaded.sources, &d));
            return ExitCode::from(1);
        }
    };
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let dir = std::env::temp_dir().join(format!("aioli-check-{}-{stamp}", std::process::id()));
    let stem = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tangent_path = dir.join(format!("{stem}_d.c"));
    if let Err(e) = std::fs::create_dir_all(&dir).and_then(|_| std::fs::write(&tangent_path, &text))
    {
        line_to_stderr!("{}: error: cannot write: {e}", tangent_path.display());
        return ExitCode::from(1);
    }
    let mut all_passed = true;
    // With `--mode both` the adjoint check meets the tangent check's
    // problems again (it runs the tangent for the dot-product test): each
    // message is printed once.
    let mut reported: std::collections::HashSet<String> = std::collections::HashSet::new();
    if matches!(mode, CheckMode::Tangent | CheckMode::Both) {
        for h in &parsed {
            // Single precision limits divided differences to about half of
            // float's 7 digits.
            let precision = Precision::of(&loaded.program, h.proc);
            let options = TangentCheckOptions {
                front: pp.options(),
                min_digits: precision.min_digits(),
                ..TangentCheckOptions::default()
            };
            match check_tangent(
                file,
                &loaded.program,
                h,
                &domain_of(h),
                &tangent_path,
                &options,
            ) {
                Ok(report) => {
                    out!("{report}");
                    all_passed &= report.passed;
                }
                Err(e) => {
                    report_once(&mut reported, check_error(&loaded, h, &e.to_string()));
                    all_passed = false;
                }
            }
        }
    }
    if matches!(mode, CheckMode::Adjoint | CheckMode::Both) {
        all_passed &= check_adjoint_mode(
            file,
            &loaded,
            &parsed,
            &domain_of,
            (&tangent_path, &dir),
            pp,
            &mut reported,
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
    if all_passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// The adjoint half of `aioli check`: writes FILE_b.c next to the tangent
/// in `dir`, runs the dot-product test for each head, prints the reports.
/// Whether every check ran and passed.
fn check_adjoint_mode(
    file: &Path,
    loaded: &aioli::front::Loaded,
    heads: &[aioli::analysis::head::Head],
    domain_of: &dyn Fn(&aioli::analysis::head::Head) -> aioli::check::domain::Domain,
    (tangent_path, dir): (&Path, &Path),
    pp: &Preprocessing,
    reported: &mut std::collections::HashSet<String>,
) -> bool {
    use aioli::check::adjoint::{AdjointCheckOptions, check_adjoint};
    use aioli::check::tangent::Precision;
    use aioli::transform::adjoint::{AdjointOptions, adjoint, load_adjoint_rules};
    let opts = AdjointOptions::default();
    let rules = match load_adjoint_rules(&opts) {
        Ok(r) => r,
        Err(e) => {
            line_to_stderr!("{e}");
            return false;
        }
    };
    let text = match adjoint(&loaded.program, &loaded.sources, heads, &rules, &opts) {
        Ok(t) => t,
        Err(d) => {
            to_stderr!("{}", diag::render(&loaded.sources, &d));
            return false;
        }
    };
    let stem = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let adjoint_path = dir.join(format!("{stem}_b.c"));
    if let Err(e) = std::fs::write(&adjoint_path, &text) {
        line_to_stderr!("{}: error: cannot write: {e}", adjoint_path.display());
        return false;
    }
    let mut all_passed = true;
    for h in heads {
        // Single precision: round-off of float, about 1e-7, in both dot
        // products; divided differences as in the tangent check.
        let precision = Precision::of(&loaded.program, h.proc);
        let options = AdjointCheckOptions {
            front: pp.options(),
            max_rel_err: match precision {
                Precision::Single => 1e-4,
                Precision::Double => 1e-10,
            },
            min_dd_digits: precision.min_digits(),
            ..AdjointCheckOptions::default()
        };
        match check_adjoint(
            file,
            &loaded.program,
            h,
            &domain_of(h),
            tangent_path,
            &adjoint_path,
            &options,
        ) {
            Ok(report) => {
                out!("{report}");
                all_passed &= report.passed;
            }
            Err(e) => {
                report_once(reported, check_error(loaded, h, &e.to_string()));
                all_passed = false;
            }
        }
    }
    all_passed
}

/// A check that could not run, in CONTRACT §1's form, at the head
/// procedure (its domain, its driver, its compilation).
fn check_error(
    loaded: &aioli::front::Loaded,
    h: &aioli::analysis::head::Head,
    message: &str,
) -> String {
    let d = diag::Diagnostic::error(loaded.program.proc(h.proc).span, message);
    diag::render(&loaded.sources, &d).trim_end().to_string()
}

/// Prints a diagnostic line unless it was printed already.
fn report_once(reported: &mut std::collections::HashSet<String>, line: String) {
    if !reported.contains(&line) {
        line_to_stderr!("{line}");
        reported.insert(line);
    }
}

/// Writes through a temporary file and a rename, so a failure never leaves
/// a partial output behind.
fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    let tmp = path.with_extension("c.tmp");
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}
