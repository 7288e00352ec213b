//! Records whether the extension is built with the profile-guided optimisation
//! (`pgo/build_backend.py` passes `-Cprofile-use` in RUSTFLAGS), so that `ccsim --version`
//! and the benchmarks' reports can say which build they ran.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=CARGO_ENCODED_RUSTFLAGS");
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    // "-Cprofile-use=F", or "-C" followed by "profile-use=F".
    let pgo = flags.split('\x1f').any(|f| f.trim_start_matches("-C").starts_with("profile-use="));
    println!("cargo:rustc-env=CCSIM_BUILD_PGO={}", if pgo { "1" } else { "0" });
}
