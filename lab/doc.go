// Package lab runs the papers' experiments on one machine: it expands a
// scenario (package lab/scenario) into runs, builds a testbed of network
// namespaces around the WLAN emulator for each run (package lab/testbed),
// drives iperf3, the agents and the TCP monitor, and writes a results
// directory (the records of package schema) that lab/results, lab/analysis
// and lab/report read.
package lab
