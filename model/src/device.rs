//! Device selection (`--device auto|cpu|cuda[:N]`) and LibTorch thread settings.

use std::fmt;
use std::str::FromStr;
use std::sync::Once;

use tch::Device;

use crate::error::{ModelError, Result};

/// What the user asked for on the command line. `Auto` = first CUDA device if one is usable,
/// else CPU.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DeviceChoice {
    #[default]
    Auto,
    Cpu,
    Cuda(usize),
}

impl FromStr for DeviceChoice {
    type Err = ModelError;
    fn from_str(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(DeviceChoice::Auto),
            "cpu" => Ok(DeviceChoice::Cpu),
            "cuda" | "gpu" => Ok(DeviceChoice::Cuda(0)),
            other => other
                .strip_prefix("cuda:")
                .and_then(|n| n.parse().ok())
                .map(DeviceChoice::Cuda)
                .ok_or_else(|| {
                    ModelError::Device(format!(
                        "unknown device '{s}' (expected auto, cpu, cuda or cuda:N)"
                    ))
                }),
        }
    }
}

impl fmt::Display for DeviceChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeviceChoice::Auto => f.write_str("auto"),
            DeviceChoice::Cpu => f.write_str("cpu"),
            DeviceChoice::Cuda(0) => f.write_str("cuda"),
            DeviceChoice::Cuda(n) => write!(f, "cuda:{n}"),
        }
    }
}

impl DeviceChoice {
    /// Resolves to a torch device. Asking for CUDA explicitly when it is unavailable is an
    /// error (with the likely reason), never a silent fallback to CPU.
    pub fn resolve(self) -> Result<Device> {
        match self {
            DeviceChoice::Cpu => Ok(Device::Cpu),
            DeviceChoice::Auto => Ok(if cuda_available() {
                Device::Cuda(0)
            } else {
                Device::Cpu
            }),
            DeviceChoice::Cuda(n) => {
                let count = if cuda_available() {
                    tch::Cuda::device_count() as usize
                } else {
                    0
                };
                if n < count {
                    Ok(Device::Cuda(n))
                } else if count == 0 {
                    let why = match cuda_backend() {
                        Ok(lib) => format!("{lib} is loaded, but LibTorch sees no GPU (driver?)"),
                        Err(e) => format!(
                            "LibTorch's CUDA part did not load: {e}; the cpu flavour has none: run \
                             `TORCH_FLAVOR=full bash scripts/setup.sh` on a GPU machine"
                        ),
                    };
                    Err(ModelError::Device(format!("CUDA requested but not available ({why})")))
                } else {
                    Err(ModelError::Device(format!(
                        "cuda:{n} requested but only {count} CUDA device(s)"
                    )))
                }
            }
        }
    }
}

/// True when LibTorch can use a CUDA device (false with the cpu flavour of scripts/setup.sh).
/// Loads LibTorch's CUDA backend first where the binary was linked without it
/// ([`load_cuda_backend`]).
pub fn cuda_available() -> bool {
    load_cuda_backend();
    tch::Cuda::is_available()
}

/// Environment variable: the path of `libtorch_cuda.so` to load at start (default: the name
/// alone, found through `LD_LIBRARY_PATH` and the binary's run path).
pub const TORCH_CUDA_LIB_ENV: &str = "VZERO_TORCH_CUDA_LIB";

/// What [`load_cuda_backend`] found: `Ok(name)` when LibTorch's CUDA backend is in the process
/// (linked in, or loaded now), `Err(reason)` when it could not be loaded (a CPU-only LibTorch).
pub fn cuda_backend() -> &'static std::result::Result<String, String> {
    static BACKEND: std::sync::OnceLock<std::result::Result<String, String>> =
        std::sync::OnceLock::new();
    BACKEND.get_or_init(open_cuda_backend)
}

/// Loads `libtorch_cuda.so` into the process once, with its symbols global, so that its CUDA
/// hooks register with LibTorch before the first device query. A binary linked against a
/// CPU-only LibTorch (the cpu flavour of scripts/setup.sh, or the GPU bundle of
/// scripts/gpu-bundle.sh, built here and run against a GPU machine's own torch) then uses the
/// GPU whenever the LibTorch it runs with has CUDA; where the library is missing nothing
/// changes. Idempotent: a library already linked in is only looked up again.
pub fn load_cuda_backend() {
    let _ = cuda_backend();
}

fn open_cuda_backend() -> std::result::Result<String, String> {
    let name = std::env::var(TORCH_CUDA_LIB_ENV).unwrap_or_else(|_| "libtorch_cuda.so".into());
    open_global(&name).map(|()| name)
}

/// Opens a shared library with its symbols global (`dlopen(name, RTLD_NOW | RTLD_GLOBAL)`) and
/// keeps it for the process's lifetime; `Err` carries the loader's reason.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn open_global(name: &str) -> std::result::Result<(), String> {
    use std::ffi::{CStr, CString};
    use std::os::raw::{c_char, c_int, c_void};
    extern "C" {
        fn dlopen(filename: *const c_char, flag: c_int) -> *mut c_void;
        fn dlerror() -> *mut c_char;
    }
    // Flag values from glibc's dlfcn.h.
    const RTLD_NOW: c_int = 2;
    const RTLD_GLOBAL: c_int = 0x100;
    let c_name = CString::new(name).map_err(|e| format!("{name:?}: {e}"))?;
    // SAFETY: dlopen with a valid C string; the handle is never closed, so the library's code
    // stays mapped while LibTorch uses it. dlerror returns a thread-local message or null.
    unsafe {
        if dlopen(c_name.as_ptr(), RTLD_NOW | RTLD_GLOBAL).is_null() {
            let err = dlerror();
            return Err(if err.is_null() {
                format!("{name}: cannot be loaded")
            } else {
                CStr::from_ptr(err).to_string_lossy().into_owned()
            });
        }
    }
    Ok(())
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn open_global(name: &str) -> std::result::Result<(), String> {
    Err(format!("{name}: loading a library at run time is implemented for Linux (glibc) only"))
}

/// Short description of a device, for logs and benchmark headers.
pub fn describe(device: Device) -> String {
    match device {
        Device::Cpu => format!("cpu ({} intra-op thread(s))", tch::get_num_threads()),
        Device::Cuda(n) => format!("cuda:{n}"),
        other => format!("{other:?}"),
    }
}

static INTEROP: Once = Once::new();

/// Sets LibTorch's CPU threading: `intra_op` threads per op (process-global in practice) and
/// one inter-op thread (set once per process, before any parallel work — LibTorch refuses to
/// change it later).
///
/// Measured on the project's 2-core machine (shared/notes/toolchain.md section 5): use
/// **1 intra-op thread** for self-play/inference workers (run one worker per core, each batching
/// at least 8-32 positions per forward); 2 threads only pay off for training or big batches on an
/// otherwise idle box, and OpenMP barriers stall badly when the other core is busy.
pub fn set_threads(intra_op: usize) {
    INTEROP.call_once(|| {
        // LibTorch throws if parallel work has already started; tch turns that into a panic.
        let _ = std::panic::catch_unwind(|| tch::set_num_interop_threads(1));
    });
    tch::set_num_threads(intra_op.max(1) as i32);
}

/// Serialises every use of torch's process-global random generator: a seed and the draws that
/// follow it, and the draws of every network built (its initial weights). Two models built at
/// once in one process (the tests' threads, a checkpoint loaded beside a seeded build) would
/// otherwise interleave their draws, and a seeded network would not get the weights its seed
/// names.
static TORCH_RNG: std::sync::Mutex<()> = std::sync::Mutex::new(());

thread_local! {
    /// Whether this thread holds [`TORCH_RNG`] (so that a nested use runs inside the outer one).
    static HOLDING_TORCH_RNG: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` holding torch's global generator (no other thread draws from it meanwhile); nested
/// calls on one thread run inside the outermost.
pub(crate) fn holding_torch_rng<T>(f: impl FnOnce() -> T) -> T {
    if HOLDING_TORCH_RNG.with(|h| h.get()) {
        return f();
    }
    struct Release;
    impl Drop for Release {
        fn drop(&mut self) {
            HOLDING_TORCH_RNG.with(|h| h.set(false));
        }
    }
    let _held = TORCH_RNG.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    HOLDING_TORCH_RNG.with(|h| h.set(true));
    let _release = Release;
    f()
}

/// Runs `f` with torch's global generator seeded to `seed` and held by this call alone, so the
/// random numbers `f` draws (initial weights, random test tensors) depend on `seed` and nothing
/// else, whatever other threads of the process build or load meanwhile.
pub fn with_torch_seed<T>(seed: u64, f: impl FnOnce() -> T) -> T {
    holding_torch_rng(|| {
        tch::manual_seed(seed as i64);
        f()
    })
}

/// Environment variable: set to `0` to leave glibc malloc's settings alone (see [`tune_malloc`]).
pub const MALLOC_TUNING_ENV: &str = "VZERO_MALLOC_TUNING";

static MALLOC: Once = Once::new();

/// Tunes glibc malloc for LibTorch's allocation pattern, once per process; every
/// [`crate::Model`] calls it. LibTorch mallocs every intermediate tensor (tens to hundreds of KB)
/// and frees it a moment later. With glibc's defaults, (1) each such allocation first
/// consolidates all fastbin chunks (`malloc_consolidate`), and (2) freed memory at the top of a
/// thread's heap is returned to the OS and faulted in again on the next forward pass. This sets
/// `M_MXFAST = 0` (no fastbins; small allocations still go through the per-thread cache),
/// `M_TRIM_THRESHOLD = 128 MiB` and `M_MMAP_THRESHOLD = 32 MiB` (glibc's own upper limit for
/// its dynamic threshold, made fixed). Measured on one Sapphire Rapids core (4x32 net, batch 32,
/// medians of interleaved runs, CPU time): the bare network ~15 % faster, self-play ~5 % more
/// (10x fewer page faults). No-op with [`MALLOC_TUNING_ENV`]`=0` and on other C libraries.
pub fn tune_malloc() {
    MALLOC.call_once(|| {
        if std::env::var(MALLOC_TUNING_ENV).is_ok_and(|v| v.trim() == "0") {
            return;
        }
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        {
            use std::os::raw::c_int;
            extern "C" {
                fn mallopt(param: c_int, value: c_int) -> c_int;
            }
            // Parameter numbers from glibc's malloc.h.
            const M_MXFAST: c_int = 1;
            const M_TRIM_THRESHOLD: c_int = -1;
            const M_MMAP_THRESHOLD: c_int = -3;
            // SAFETY: mallopt only changes allocator parameters; glibc takes its own locks.
            unsafe {
                mallopt(M_MXFAST, 0);
                mallopt(M_TRIM_THRESHOLD, 128 << 20);
                mallopt(M_MMAP_THRESHOLD, 32 << 20);
            }
        }
    });
}

/// Thread count for a process running self-play / inference workers: 1 intra-op thread.
pub const SELFPLAY_THREADS: usize = 1;

/// Thread count for a training process: all cores (train with self-play paused, or accept the
/// slowdown; see the notes).
pub fn training_threads() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn open_global_loads_a_library_and_names_a_missing_one() {
        // The C maths library is in every glibc process: loading it again succeeds.
        assert_eq!(open_global("libm.so.6"), Ok(()));
        let err = open_global("/nonexistent/libtorch_cuda.so").unwrap_err();
        assert!(err.contains("/nonexistent/libtorch_cuda.so"), "{err}");
        assert!(open_global("bad\0name").is_err());
    }

    #[test]
    fn cuda_backend_agrees_with_cuda_available() {
        // Where libtorch_cuda cannot be loaded (a CPU-only LibTorch), LibTorch sees no GPU;
        // where it reports a GPU, the backend is in the process.
        let available = cuda_available();
        if available {
            assert!(cuda_backend().is_ok(), "{:?}", cuda_backend());
        }
        if let Err(why) = cuda_backend() {
            assert!(!available, "GPU visible though libtorch_cuda failed to load: {why}");
        }
    }
}
