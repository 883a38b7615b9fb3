use std::path::PathBuf;

/// Errors of this crate. Every file problem names the file.
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    /// Not a readable chunk: truncated, corrupt, missing datasets, inconsistent lengths.
    #[error("chunk {}: corrupt or truncated: {msg}", path.display())]
    Corrupt { path: PathBuf, msg: String },
    /// A readable chunk that is not what the caller expects (schema version, variant, encoding
    /// version, plane shape, policy size).
    #[error("chunk {}: {what} mismatch: file has {found}, expected {expected}", path.display())]
    Mismatch { path: PathBuf, what: &'static str, found: String, expected: String },
    /// Bad data handed to a writer (nothing was written).
    #[error("{}: invalid data: {msg}", path.display())]
    Invalid { path: PathBuf, msg: String },
    #[error("invalid configuration: {0}")]
    Config(String),
    /// Object storage: a malformed run URL, a server that cannot be reached or refuses, an
    /// object published twice. The message names the URL or object.
    #[error("object storage: {msg}")]
    Store { msg: String },
    /// The run is held by another process (its learner lease); the message names the holder.
    #[error("{msg}")]
    Busy { msg: String },
}

impl From<vzero_base::FileError> for DataError {
    fn from(e: vzero_base::FileError) -> DataError {
        DataError::Io { path: e.path, source: e.source }
    }
}

pub type Result<T, E = DataError> = std::result::Result<T, E>;

pub(crate) fn io_err(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> DataError {
    let path = path.into();
    move |source| DataError::Io { path, source }
}
