package monitor

//go:generate go run github.com/cilium/ebpf/cmd/bpf2go -cc clang -target bpfel -type event tcpprobe ../bpf/tcpprobe.c -- -I../bpf -O2 -g -Wall
