//! The CLI's error type: a message for stderr and the exit code it implies.

use std::fmt;
use std::process::ExitCode;

/// Why a command failed, which decides its exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// Not found, check failed, or the engine reported an error: exit code 1.
    Failed,
    /// Bad usage or malformed input: exit code 2, the code clap uses for its own errors.
    Usage,
    /// Standard output was closed by its reader (`arbor log | head`): the reader wanted
    /// no more, so this ends the command quietly with success, as ripgrep and others do.
    BrokenPipe,
}

/// An error a command returns to `main`, which prints it as `arbor: <message>`.
#[derive(Debug)]
pub struct CliError {
    /// What kind of failure, hence the exit code.
    pub failure: Failure,
    /// The message, without the `arbor: ` prefix.
    pub message: String,
}

impl CliError {
    /// A not-found or failed-check error (exit code 1).
    pub fn failed(message: impl Into<String>) -> CliError {
        CliError { failure: Failure::Failed, message: message.into() }
    }

    /// A usage or input error (exit code 2).
    pub fn usage(message: impl Into<String>) -> CliError {
        CliError { failure: Failure::Usage, message: message.into() }
    }

    /// Prints the message to stderr (unless the failure is silent) and gives the exit code.
    pub fn report(&self) -> ExitCode {
        match self.failure {
            Failure::Failed => {
                eprintln!("arbor: {}", self.message);
                ExitCode::from(1)
            }
            Failure::Usage => {
                eprintln!("arbor: {}", self.message);
                ExitCode::from(2)
            }
            Failure::BrokenPipe => ExitCode::SUCCESS,
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<arbor::Error> for CliError {
    /// Engine errors are failures (exit 1) except those only bad user input can cause.
    fn from(e: arbor::Error) -> CliError {
        match e {
            arbor::Error::EmptyStep { .. } | arbor::Error::PathTooDeep { .. } | arbor::Error::ValueTooLarge { .. } => {
                CliError::usage(e.to_string())
            }
            _ => CliError::failed(e.to_string()),
        }
    }
}

impl From<std::io::Error> for CliError {
    fn from(e: std::io::Error) -> CliError {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            CliError { failure: Failure::BrokenPipe, message: String::new() }
        } else {
            CliError::failed(format!("I/O error: {e}"))
        }
    }
}

/// Result of a command.
pub type CliResult<T = ()> = Result<T, CliError>;
