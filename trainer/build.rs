// Link settings for every binary/test/example of this crate: `cargo:rustc-link-arg` from tch's
// own build script does not propagate to dependents, so each workspace crate that builds
// executables linking tch needs this file plus a direct `torch-sys` dependency.
use std::path::Path;

fn main() {
    // torch-sys (links = "tch") exports `cargo:libtorch_lib=<dir>` -> DEP_TCH_LIBTORCH_LIB here,
    // because torch-sys is a *direct* dependency of this crate.
    let dir = std::env::var("DEP_TCH_LIBTORCH_LIB")
        .expect("DEP_TCH_LIBTORCH_LIB not set: add torch-sys as a direct dependency");
    // 1) rpath: binaries and test executables find libtorch without LD_LIBRARY_PATH.
    println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
    // 2) CUDA builds only (TORCH_FLAVOR=full): keep libtorch.so (-> libtorch_cuda.so) in
    //    DT_NEEDED; the default --as-needed drops it and CUDA then never initialises
    //    (tch-rs issues #980/#907). The cpu flavour prunes libtorch_cuda.so, so skip it there.
    if Path::new(&dir).join("libtorch_cuda.so").exists() {
        println!("cargo:rustc-link-arg=-Wl,--no-as-needed");
        println!("cargo:rustc-link-arg=-ltorch");
    }
    println!("cargo:rerun-if-changed={dir}");
    println!("cargo:rerun-if-env-changed=DEP_TCH_LIBTORCH_LIB");
}
