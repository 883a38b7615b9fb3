use std::path::PathBuf;

/// Everything that can go wrong in this crate. Bad inputs, bad files and torch errors are all
/// reported here; nothing in the public API panics on bad data.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("torch: {0}")]
    Torch(#[from] tch::TchError),
    #[error("invalid network config: {0}")]
    Config(String),
    #[error("invalid input: {0}")]
    Input(String),
    #[error("device: {0}")]
    Device(String),
    /// A file that cannot be read or written: its path and the system's reason, in one line
    /// (the reason is part of the message, not a separate source, so it is never lost nor
    /// printed twice).
    #[error("{}: {cause}", path.display())]
    Io {
        path: PathBuf,
        cause: std::io::Error,
    },
    /// The metadata file is not valid JSON of the expected shape (truncated, corrupt, or written
    /// by an incompatible format version).
    #[error("checkpoint metadata {}: corrupt or truncated: {msg}", path.display())]
    CorruptMeta { path: PathBuf, msg: String },
    /// The weights file is truncated, corrupt, or does not belong to this metadata file.
    #[error("checkpoint weights {}: corrupt or truncated: {msg}", path.display())]
    CorruptWeights { path: PathBuf, msg: String },
    /// The checkpoint is intact but is not what the caller asked for (wrong variant, encoding
    /// version or network config).
    #[error("checkpoint {}: {what} mismatch: checkpoint has {found}, expected {expected}", path.display())]
    Mismatch {
        path: PathBuf,
        what: &'static str,
        found: String,
        expected: String,
    },
    /// The weights file is intact but its tensors do not fit the network config in the metadata.
    #[error("checkpoint weights {}: do not match the network config: {detail}", path.display())]
    WeightsMismatch { path: PathBuf, detail: String },
}

pub type Result<T, E = ModelError> = std::result::Result<T, E>;

impl From<vzero_base::FileError> for ModelError {
    fn from(e: vzero_base::FileError) -> ModelError {
        ModelError::Io { path: e.path, cause: e.source }
    }
}

pub(crate) fn io_err(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> ModelError {
    let path = path.into();
    move |cause| ModelError::Io { path, cause }
}
