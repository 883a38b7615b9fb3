// Link settings of the vzero package (see model/build.rs for the why): the rpath to LibTorch for
// every executable, and — CUDA builds only — LibTorch kept in DT_NEEDED for the binaries that
// run networks (`vzero-torch`, the tests), never for the rules-only `vzero`, which must start
// without loading LibTorch.
use std::path::Path;

fn main() {
    let dir = std::env::var("DEP_TCH_LIBTORCH_LIB")
        .expect("DEP_TCH_LIBTORCH_LIB not set: add torch-sys as a direct dependency");
    println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
    if Path::new(&dir).join("libtorch_cuda.so").exists() {
        for target in ["-bin=vzero-torch", "-tests"] {
            println!("cargo:rustc-link-arg{target}=-Wl,--no-as-needed");
            println!("cargo:rustc-link-arg{target}=-ltorch");
        }
    }
    println!("cargo:rerun-if-changed={dir}");
    println!("cargo:rerun-if-env-changed=DEP_TCH_LIBTORCH_LIB");
}
