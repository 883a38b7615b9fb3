//! `vzero`: the command users run. The rules commands (`perft`, `moves`, `result`, `replay`,
//! `variants`) run here, in a binary without LibTorch, so they start in milliseconds (scripts
//! call them thousands of times, GUIs probe them); every other command — and `--help`,
//! `--version` — is handed to the sibling binary `vzero-torch` (same directory, same arguments,
//! exec'd in place so the process id, standard streams and exit status are the same).

#[path = "cmd/rules.rs"]
mod rules;

use std::ffi::OsString;

use clap::Parser;

/// The rules commands.
#[derive(Parser)]
#[command(name = "vzero", version, about)]
struct Cli {
    #[command(subcommand)]
    command: rules::RulesCommand,
}

fn main() {
    let args: Vec<OsString> = std::env::args_os().collect();
    let first = args.get(1).and_then(|a| a.to_str());
    if !first.is_some_and(|c| rules::COMMANDS.contains(&c)) {
        exec_torch(&args[1..]);
    }
    rules::exit_on_error(rules::parse_args::<Cli>().command.run());
}

/// Replaces this process by `vzero-torch` with the same arguments. Warns when `vzero-torch` is
/// older than this binary (`cargo run -p vzero` rebuilds only `vzero`; build both with
/// `cargo build --release -p vzero`, or run `cargo run -p vzero --bin vzero-torch`).
fn exec_torch(args: &[OsString]) -> ! {
    let me = std::env::current_exe();
    let exe = me.as_ref().map(|p| p.with_file_name("vzero-torch")).map_err(|e| std::io::Error::new(e.kind(), e.to_string()));
    let modified = |p: &std::path::Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    if let (Ok(me), Ok(torch)) = (&me, &exe) {
        if let (Some(a), Some(b)) = (modified(me), modified(torch)) {
            if b + std::time::Duration::from_secs(60) < a {
                eprintln!("warning: {} is older than {}: it may be stale (cargo build --release -p vzero builds both)", torch.display(), me.display());
            }
        }
    }
    let err = match &exe {
        #[cfg(unix)]
        Ok(p) => {
            use std::os::unix::process::CommandExt;
            std::process::Command::new(p).arg0("vzero").args(args).exec()
        }
        #[cfg(not(unix))]
        Ok(p) => match std::process::Command::new(p).args(args).status() {
            Ok(s) => std::process::exit(s.code().unwrap_or(1)),
            Err(e) => e,
        },
        Err(e) => std::io::Error::new(e.kind(), e.to_string()),
    };
    let path = exe.map_or_else(|_| "vzero-torch".to_string(), |p| p.display().to_string());
    eprintln!("error: cannot run {path}: {err} (it is built beside vzero by `cargo build --release -p vzero`)");
    std::process::exit(1);
}
