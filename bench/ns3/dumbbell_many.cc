// dumbbell.cc with an address plan for any number of flows (bench/scale_ns3.py above 254 flows).
//
// dumbbell.cc gives sender i's access link the subnet 10.1.(i + 1).0/24, so it stops at 254
// flows. Compiled with DUMBBELL_MANY, it gives it the /30 subnet 10.128.0.0 + 4 i (sender
// 10.128.0.0 + 4 i + 1, router + 2) inside 10.128.0.0/9: up to 2,097,152 flows; the bottleneck
// keeps 10.2.1.0/24. It also reports the CPU time of Simulator::Run (run_cpu_seconds: on a
// shared core, steadier than its wall time). Nothing else differs (the #ifdef DUMBBELL_MANY
// blocks of dumbbell.cc). The same command line gives the same output as dumbbell but for
// timings and run_cpu_seconds (`python3 bench/scale_ns3.py --check` compares them at 2 and 10
// flows).
#define DUMBBELL_MANY 1
#include "dumbbell.cc"
