//! `axd`: see [`ax_scheduler::command`].

fn main() -> std::process::ExitCode {
    ax_scheduler::command::main()
}
