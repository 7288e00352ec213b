//! Run a scenario given as a JSON file (the JSON form of a TOML scenario: a dumbbell or a
//! `[wireless]` line) and print the summary JSON. Used by the benchmarks to time the engine
//! without Python.
//! Usage: cargo run --release -p ccsim-core --example run_json -- scenario.json [seed]

use ccsim_core::scenario::AnyScenario;
use ccsim_core::sim::Sim;

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
    let sc = AnyScenario::from_json_str(&text).unwrap_or_else(|e| {
        eprintln!("error: {e}");
        std::process::exit(2);
    });
    let seed = args.get(2).map(|s| {
        s.parse().unwrap_or_else(|_| {
            eprintln!("error: seed: {s:?} is not a non-negative integer");
            std::process::exit(2);
        })
    });
    match &sc {
        AnyScenario::Dumbbell(sc) => println!("{}", ccsim_core::run(sc, seed).summary.to_json()),
        AnyScenario::Wireless(sc) => {
            let mut sim = Sim::line(sc, seed.unwrap_or(sc.seed), true);
            let t0 = std::time::Instant::now();
            sim.run_to_end();
            println!("{}", sim.into_line_output(sc, t0.elapsed().as_secs_f64()).0);
        }
    }
}
