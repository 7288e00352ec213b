//! Records whether the extension is built with the profile-guided optimisation
//! (`pgo/build_backend.py` passes `-Cprofile-use` in RUSTFLAGS), and whether that profile was
//! recorded for other sources, so that `ccsim --version` and the benchmarks' reports can say
//! which build they ran.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=CARGO_ENCODED_RUSTFLAGS");
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    // "-Cprofile-use=F", or "-C" followed by "profile-use=F".
    let pgo = flags.split('\x1f').any(|f| f.trim_start_matches("-C").starts_with("profile-use="));
    println!("cargo:rustc-env=CCSIM_BUILD_PGO={}", if pgo { "1" } else { "0" });
    // Set by pgo/build_backend.py: the profile was recorded for other sources than these.
    println!("cargo:rerun-if-env-changed=CCSIM_PGO_STALE");
    let stale = pgo && std::env::var("CCSIM_PGO_STALE").is_ok_and(|v| v == "1");
    println!("cargo:rustc-env=CCSIM_BUILD_PGO_STALE={}", if stale { "1" } else { "0" });
}
