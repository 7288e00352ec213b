//! Run a scenario given as a JSON file (the JSON form of a TOML scenario) and print the
//! summary JSON. Used by the benchmarks to time the engine without Python.
//! Usage: cargo run --release -p ccsim-core --example run_json -- scenario.json [seed]

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 2 {
        eprintln!("usage: run_json SCENARIO.json [SEED]");
        std::process::exit(2);
    }
    let text = std::fs::read_to_string(&args[1]).unwrap_or_else(|e| {
        eprintln!("error: {}: {e}", args[1]);
        std::process::exit(2);
    });
    let sc = ccsim_core::Scenario::from_json_str(&text).unwrap_or_else(|e| {
        eprintln!("error: {e}");
        std::process::exit(2);
    });
    let seed = args.get(2).map(|s| s.parse().expect("seed"));
    let out = ccsim_core::run(&sc, seed);
    println!("{}", out.summary.to_json());
}
